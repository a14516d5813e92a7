//! `profil-report diff --base A.gmon… --new B.gmon… [--base-exe OLD] [--new-exe NEW] [--json]`:
//! which functions got faster or slower, and which differences are only noise.
//!
//! # What is compared
//!
//! Each gmon file is one run. Each side's runs are read into the export model
//! ([`crate::export::model`]) with that side's executable, so the two sides may be
//! different builds: functions are matched by demangled name. A function is an out-of-line
//! function (a symbol), as in the default report: code inlined into it is its own. Its
//! **self** time is the samples whose leaf location is in it; its **total** time the samples
//! with it anywhere on the stack (once per sample; without call stacks, the same as self).
//! Several runs of a side are pooled and divided by the number of runs, so every figure is
//! CPU seconds **per run**, and sides with different numbers of runs compare.
//!
//! # The test (on self time, per function)
//!
//! * **One run on each side**: sample counts are Poisson, so given the function's samples in
//!   both runs together (`k = b + n`), the new run's share is binomial with
//!   `p0 = hz_new / (hz_base + hz_new)` if the function's CPU time did not change. The
//!   two-sided exact p-value is `2 · min(P(X ≤ n), P(X ≥ n))`. A single run cannot show
//!   run-to-run variation (CPU frequency, cache, other load), so on a busy machine small
//!   real-looking differences may be flagged: give several runs per side.
//! * **Several runs on a side**: Welch's t-test on the per-run seconds. Each side's variance
//!   of the mean is the larger of the runs' sample variance / runs (degrees of freedom
//!   runs − 1) and the Poisson variance of the pooled count (then treated as exact), so the
//!   spread between runs is used where there is one and never understates sampling noise.
//!
//! p-values are corrected for testing every function shown with **Holm's step-down**
//! method; a change is significant when its corrected p-value is below 0.05, or the level
//! given with `--alpha` (the family-wise error rate over the table is at most that). The 95% intervals are Poisson
//! (Garwood) intervals for one run, `mean ± t·se` for several.
//!
//! # Output
//!
//! A table of the significant changes, largest first, and one line for the functions whose
//! change is not significant. `--json` prints `{"test", "alpha", "base", "new", "rows"}`;
//! every function is a row with `name`, `base_seconds`, `new_seconds`, `delta_seconds`,
//! `significant`, and also `base_ci95`, `new_ci95` (`[low, high]`), `base_total_seconds`,
//! `new_total_seconds`, `base_total_ci95`, `new_total_ci95`, `p_value` and `p_holm`,
//! significant rows first. The table shows the total columns only when some total differs
//! from its self time (with call stacks).

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::export::model::{self, StackProfile};
use crate::profile::input::{read_path, sort_inputs, GmonInput, Input};
use crate::profile::stats::{binomial_two_sided, erfc, poisson_ci95, t_quantile_975, t_two_sided};
use crate::units::human_seconds;
use crate::{Error, Result};

/// The default family-wise significance level.
pub const ALPHA: f64 = 0.05;

/// What `profil-report diff` is asked for (the binary builds it from its command line).
#[derive(Debug, Clone)]
pub struct Options {
    /// gmon files of the base runs (one file per run), optionally with the executable.
    pub base: Vec<PathBuf>,
    /// gmon files of the new runs (one file per run), optionally with the executable.
    pub new: Vec<PathBuf>,
    /// The base executable (default: the one among --base, else the new one).
    pub base_exe: Option<PathBuf>,
    /// The new executable (default: the one among --new, else the base one).
    pub new_exe: Option<PathBuf>,
    /// Print JSON instead of a table.
    pub json: bool,
    /// Family-wise significance level (Holm-corrected over the functions shown).
    pub alpha: f64,
}

/// One side's per-run numbers of one function.
#[derive(Debug, Clone, Default)]
struct PerRun {
    /// Self seconds in each run.
    self_seconds: Vec<f64>,
    /// Self sample counts in each run.
    counts: Vec<u64>,
    /// Total seconds in each run.
    total_seconds: Vec<f64>,
    /// Total sample counts in each run.
    total_counts: Vec<u64>,
}

impl PerRun {
    /// The total-time figures in the place of the self-time ones (for [`estimate`]).
    fn totals(&self) -> PerRun {
        PerRun {
            self_seconds: self.total_seconds.clone(),
            counts: self.total_counts.clone(),
            ..PerRun::default()
        }
    }
}

/// One side: runs, rates and per-function numbers.
#[derive(Debug, Clone)]
pub struct Side {
    /// The executable.
    pub executable: String,
    /// The gmon files (runs).
    pub runs: Vec<String>,
    /// Rate of each run.
    pub hz: Vec<u32>,
    functions: BTreeMap<String, PerRun>,
}

/// A side's estimate of one function's self time per run.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Estimate {
    /// Mean seconds per run.
    pub seconds: f64,
    /// 95% interval.
    pub ci95: (f64, f64),
    /// Variance of the mean.
    #[serde(skip)]
    pub var: f64,
    /// Degrees of freedom of `var` (infinite: Poisson).
    #[serde(skip)]
    pub df: f64,
}

/// One row of the diff.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    /// Demangled name.
    pub name: String,
    /// Base self seconds per run.
    pub base_seconds: f64,
    /// New self seconds per run.
    pub new_seconds: f64,
    /// `new_seconds - base_seconds`.
    pub delta_seconds: f64,
    /// Holm-corrected p-value below the level (`--alpha`, default [`ALPHA`]).
    pub significant: bool,
    /// 95% interval of `base_seconds`.
    pub base_ci95: (f64, f64),
    /// 95% interval of `new_seconds`.
    pub new_ci95: (f64, f64),
    /// Base total (inclusive) seconds per run.
    pub base_total_seconds: f64,
    /// New total (inclusive) seconds per run.
    pub new_total_seconds: f64,
    /// 95% interval of `base_total_seconds`.
    pub base_total_ci95: (f64, f64),
    /// 95% interval of `new_total_seconds`.
    pub new_total_ci95: (f64, f64),
    /// Uncorrected two-sided p-value.
    pub p_value: f64,
    /// Holm-corrected p-value.
    pub p_holm: f64,
}

/// The whole diff.
#[derive(Debug, Clone, Serialize)]
pub struct Diff {
    /// Which test was used, in words.
    pub test: String,
    /// Family-wise level.
    pub alpha: f64,
    /// Base side summary.
    pub base: SideSummary,
    /// New side summary.
    pub new: SideSummary,
    /// Rows, significant first (largest change first), then the rest by name.
    pub rows: Vec<Row>,
}

/// What the JSON says about a side.
#[derive(Debug, Clone, Serialize)]
pub struct SideSummary {
    /// The executable.
    pub executable: String,
    /// Its runs.
    pub gmon_files: Vec<String>,
    /// Mean sampled seconds per run.
    pub seconds_per_run: f64,
}

fn side_of(exe: &Input, gmons: &[GmonInput], warnings: &mut Vec<String>) -> Result<Side> {
    let image = crate::report::parse_exe(exe)?;
    let mut functions: BTreeMap<String, PerRun> = BTreeMap::new();
    let mut runs = Vec::new();
    let mut hz = Vec::new();
    let n = gmons.len();
    for (r, g) in gmons.iter().enumerate() {
        let p: StackProfile = model::build(exe, &image, &[g])?;
        warnings.extend(p.warnings.iter().cloned());
        // Per out-of-line function: self (the leaf location's), total (anywhere on the
        // stack, once per sample), and self as whole samples for the exact test.
        let nf = p.functions.len();
        let (mut selfs, mut totals) = (vec![0.0; nf], vec![0.0; nf]);
        let (mut counts, mut total_counts) = (vec![0u64; nf], vec![0u64; nf]);
        let mut seen: Vec<usize> = Vec::new();
        for s in &p.samples {
            let mut outer = p.outer_functions(s);
            if let Some(leaf) = outer.next() {
                selfs[leaf] += s.samples;
                counts[leaf] += s.count;
                seen.clear();
                seen.push(leaf);
                totals[leaf] += s.samples;
                total_counts[leaf] += s.count;
            }
            for f in outer {
                if !seen.contains(&f) {
                    seen.push(f);
                    totals[f] += s.samples;
                    total_counts[f] += s.count;
                }
            }
        }
        for (i, f) in p.functions.iter().enumerate() {
            if selfs[i] <= 0.0 && totals[i] <= 0.0 {
                continue;
            }
            let e = functions.entry(f.name.clone()).or_insert_with(|| PerRun {
                self_seconds: vec![0.0; n],
                counts: vec![0; n],
                total_seconds: vec![0.0; n],
                total_counts: vec![0; n],
            });
            e.self_seconds[r] += p.seconds(selfs[i]);
            e.counts[r] += counts[i];
            e.total_seconds[r] += p.seconds(totals[i]);
            e.total_counts[r] += total_counts[i];
        }
        runs.push(g.name());
        hz.push(p.hz);
    }
    Ok(Side {
        executable: exe.name(),
        runs,
        hz,
        functions,
    })
}

const Z975: f64 = 1.959_963_984_540_054;

/// Self-time estimate of one function on one side (`per` None: no samples in any run).
fn estimate(side: &Side, per: Option<&PerRun>) -> Estimate {
    let r = side.runs.len() as f64;
    let zero = PerRun::default();
    let per = per.unwrap_or(&zero);
    let x = |i: usize| per.self_seconds.get(i).copied().unwrap_or(0.0);
    let mean = (0..side.runs.len()).map(x).sum::<f64>() / r;
    // Poisson variance of the mean: each run's count c has variance c, in seconds c/hz².
    let mut pois = 0.0;
    for (i, &hz) in side.hz.iter().enumerate() {
        let c = per.counts.get(i).copied().unwrap_or(0) as f64;
        // An empty count still has the uncertainty of about one sample.
        pois += c.max(1.0) / f64::from(hz).powi(2);
    }
    pois /= r * r;
    if side.runs.len() == 1 {
        let hz = f64::from(side.hz[0]);
        let (lo, hi) = poisson_ci95(per.counts.first().copied().unwrap_or(0) as f64);
        return Estimate {
            seconds: mean,
            ci95: (lo / hz, hi / hz),
            var: pois,
            df: f64::INFINITY,
        };
    }
    let s2 = (0..side.runs.len())
        .map(|i| (x(i) - mean).powi(2))
        .sum::<f64>()
        / (r - 1.0);
    let (var, df) = if s2 / r > pois {
        (s2 / r, r - 1.0)
    } else {
        (pois, f64::INFINITY)
    };
    let q = if df.is_finite() {
        t_quantile_975(df)
    } else {
        Z975
    };
    Estimate {
        seconds: mean,
        ci95: ((mean - q * var.sqrt()).max(0.0), mean + q * var.sqrt()),
        var,
        df,
    }
}

/// Two-sided p-value of the change of one function.
fn p_value(base: &Side, new: &Side, b: Option<&PerRun>, n: Option<&PerRun>) -> f64 {
    if base.runs.len() == 1 && new.runs.len() == 1 {
        let cb = b.and_then(|p| p.counts.first()).copied().unwrap_or(0);
        let cn = n.and_then(|p| p.counts.first()).copied().unwrap_or(0);
        let (hb, hn) = (f64::from(base.hz[0]), f64::from(new.hz[0]));
        return binomial_two_sided(cn, cb + cn, hn / (hb + hn));
    }
    let (eb, en) = (estimate(base, b), estimate(new, n));
    let var = eb.var + en.var;
    if var <= 0.0 {
        return 1.0;
    }
    let t = (en.seconds - eb.seconds) / var.sqrt();
    let denom = |e: &Estimate| {
        if e.df.is_finite() {
            e.var * e.var / e.df
        } else {
            0.0
        }
    };
    let d = denom(&eb) + denom(&en);
    if d == 0.0 {
        erfc(t.abs() / std::f64::consts::SQRT_2)
    } else {
        t_two_sided(t, var * var / d)
    }
}

/// Holm's step-down correction: adjusted p-values in the input order.
pub fn holm(p: &[f64]) -> Vec<f64> {
    let m = p.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&a, &b| p[a].total_cmp(&p[b]));
    let mut out = vec![1.0; m];
    let mut running: f64 = 0.0;
    for (k, &i) in order.iter().enumerate() {
        running = running.max(((m - k) as f64 * p[i]).min(1.0));
        out[i] = running;
    }
    out
}

/// Compare two sides.
pub fn compare(base: &Side, new: &Side, alpha: f64) -> Diff {
    let names: Vec<&String> = {
        let mut v: Vec<&String> = base.functions.keys().chain(new.functions.keys()).collect();
        v.sort();
        v.dedup();
        v
    };
    let mut rows: Vec<Row> = Vec::new();
    let mut ps = Vec::new();
    for name in names {
        let (b, n) = (base.functions.get(name), new.functions.get(name));
        let (eb, en) = (estimate(base, b), estimate(new, n));
        let total =
            |side: &Side, per: Option<&PerRun>| estimate(side, per.map(PerRun::totals).as_ref());
        let (tb, tn) = (total(base, b), total(new, n));
        let p = p_value(base, new, b, n);
        ps.push(p);
        rows.push(Row {
            name: name.clone(),
            base_seconds: eb.seconds,
            new_seconds: en.seconds,
            delta_seconds: en.seconds - eb.seconds,
            significant: false,
            base_ci95: eb.ci95,
            new_ci95: en.ci95,
            base_total_seconds: tb.seconds,
            new_total_seconds: tn.seconds,
            base_total_ci95: tb.ci95,
            new_total_ci95: tn.ci95,
            p_value: p,
            p_holm: 1.0,
        });
    }
    for (row, adj) in rows.iter_mut().zip(holm(&ps)) {
        row.p_holm = adj;
        row.significant = adj < alpha;
    }
    rows.sort_by(|a, b| {
        b.significant
            .cmp(&a.significant)
            .then(if a.significant {
                b.delta_seconds.abs().total_cmp(&a.delta_seconds.abs())
            } else {
                std::cmp::Ordering::Equal
            })
            .then(a.name.cmp(&b.name))
    });
    let test = if base.runs.len() == 1 && new.runs.len() == 1 {
        "exact conditional binomial test on each function's self samples (one run per side), Holm-corrected over all functions shown"
    } else {
        "Welch's t-test on each function's self seconds per run (variance: the larger of the runs' spread and Poisson sampling noise), Holm-corrected over all functions shown"
    };
    let summary = |s: &Side| SideSummary {
        executable: s.executable.clone(),
        gmon_files: s.runs.clone(),
        seconds_per_run: s
            .functions
            .values()
            .map(|p| p.self_seconds.iter().sum::<f64>())
            .sum::<f64>()
            / s.runs.len() as f64,
    };
    Diff {
        test: test.into(),
        alpha,
        base: summary(base),
        new: summary(new),
        rows,
    }
}

// ---- the command ------------------------------------------------------------------------

/// Split a side's files into its executable (if one is among them) and its gmon files, as
/// the report sorts its inputs ([`sort_inputs`]: by content, gmon files read one at a time).
fn load_side(files: &[PathBuf]) -> Result<(Option<Input>, Vec<GmonInput>)> {
    let (exe, gmons) = sort_inputs(files)?;
    if gmons.is_empty() {
        return Err(Error::input("each side needs at least one gmon file"));
    }
    Ok((exe, gmons))
}

fn open_exe(path: &Path) -> Result<Input> {
    let data = read_path(path)?;
    Ok(Input {
        path: path.to_owned(),
        data,
    })
}

/// Run the subcommand; return the warnings for the user (the caller prints them).
pub fn run(args: &Options, out: &mut impl Write) -> Result<Vec<String>> {
    let (base_in, base_gmons) = load_side(&args.base)?;
    let (new_in, new_gmons) = load_side(&args.new)?;
    let pick =
        |own: &Option<PathBuf>, among: Option<Input>, other: &Option<PathBuf>| match (own, among) {
            (Some(p), _) => open_exe(p),
            (None, Some(i)) => Ok(i),
            (None, None) => open_exe(other.as_deref().unwrap_or(Path::new("a.out"))),
        };
    let base_path_hint = args
        .base_exe
        .clone()
        .or_else(|| base_in.as_ref().map(|i| i.path.clone()));
    let new_path_hint = args
        .new_exe
        .clone()
        .or_else(|| new_in.as_ref().map(|i| i.path.clone()));
    let base_exe = pick(&args.base_exe, base_in, &new_path_hint)?;
    let new_exe = pick(&args.new_exe, new_in, &base_path_hint)?;
    let mut warnings = Vec::new();
    let base = side_of(&base_exe, &base_gmons, &mut warnings)?;
    let new = side_of(&new_exe, &new_gmons, &mut warnings)?;
    let diff = compare(&base, &new, args.alpha);
    if args.json {
        write_json(&diff, out)?;
    } else {
        print_table(&diff, out)?;
    }
    Ok(warnings)
}

/// `--json`: `serde_json`'s pretty layout. A write error stays an I/O error, so that a
/// closed pipe ends the program quietly as for every other output.
fn write_json(diff: &Diff, out: &mut impl Write) -> Result<()> {
    serde_json::to_writer_pretty(&mut *out, diff).map_err(crate::render::json::json_error)?;
    writeln!(out)?;
    Ok(())
}

fn print_table(d: &Diff, out: &mut impl Write) -> Result<()> {
    let side = |s: &SideSummary| {
        format!(
            "{} ({} run{}, {} per run)",
            s.executable,
            s.gmon_files.len(),
            if s.gmon_files.len() == 1 { "" } else { "s" },
            human_seconds(s.seconds_per_run)
        )
    };
    writeln!(out, "base: {}", side(&d.base))?;
    writeln!(out, "new:  {}", side(&d.new))?;
    writeln!(out)?;
    let shown: Vec<&Row> = d.rows.iter().filter(|r| r.significant).collect();
    let show_total = d.rows.iter().any(|r| {
        (r.base_total_seconds - r.base_seconds).abs() > 1e-12
            || (r.new_total_seconds - r.new_seconds).abs() > 1e-12
    });
    if shown.is_empty() {
        writeln!(out, "No significant change in any function.")?;
    } else {
        let mut b = tabled::builder::Builder::default();
        let mut head = vec![
            "function",
            "base self",
            "95% interval",
            "new self",
            "95% interval",
            "change",
            "change %",
            "p (Holm)",
        ];
        if show_total {
            head.extend(["base total", "new total"]);
        }
        b.push_record(head);
        for r in &shown {
            let ci = |c: (f64, f64)| format!("{}–{}", human_seconds(c.0), human_seconds(c.1));
            let pct = if r.base_seconds > 0.0 {
                format!("{:+.1}%", 100.0 * r.delta_seconds / r.base_seconds)
            } else {
                "new".into()
            };
            let mut rec = vec![
                r.name.clone(),
                human_seconds(r.base_seconds),
                ci(r.base_ci95),
                human_seconds(r.new_seconds),
                ci(r.new_ci95),
                format!(
                    "{}{}",
                    if r.delta_seconds >= 0.0 { "+" } else { "" },
                    human_seconds(r.delta_seconds)
                ),
                pct,
                format!("{:.2e}", r.p_holm),
            ];
            if show_total {
                rec.push(format!(
                    "{} ({})",
                    human_seconds(r.base_total_seconds),
                    ci(r.base_total_ci95)
                ));
                rec.push(format!(
                    "{} ({})",
                    human_seconds(r.new_total_seconds),
                    ci(r.new_total_ci95)
                ));
            }
            b.push_record(rec);
        }
        let mut table = b.build();
        table.with(tabled::settings::Style::psql());
        table.modify(
            tabled::settings::object::Columns::new(1..),
            tabled::settings::Alignment::right(),
        );
        writeln!(out, "{table}")?;
    }
    let rest: Vec<&Row> = d.rows.iter().filter(|r| !r.significant).collect();
    if !rest.is_empty() {
        let (b, n): (f64, f64) = rest.iter().fold((0.0, 0.0), |acc, r| {
            (acc.0 + r.base_seconds, acc.1 + r.new_seconds)
        });
        writeln!(
            out,
            "{} function{} without a significant change ({} → {} together)",
            rest.len(),
            if rest.len() == 1 { "" } else { "s" },
            human_seconds(b),
            human_seconds(n)
        )?;
    }
    writeln!(out)?;
    writeln!(
        out,
        "Test: {}; significant: corrected p < {}.",
        d.test, d.alpha
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader that has gone away (`profil-report diff --json … | head -1`).
    struct ClosedPipe;

    impl Write for ClosedPipe {
        fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
            Err(std::io::ErrorKind::BrokenPipe.into())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn json_to_a_closed_pipe_is_a_broken_pipe_not_an_input_error() {
        let side = SideSummary {
            executable: "prog".into(),
            gmon_files: vec!["a.gmon".into()],
            seconds_per_run: 1.0,
        };
        let d = Diff {
            test: "t".into(),
            alpha: ALPHA,
            base: side.clone(),
            new: side,
            rows: Vec::new(),
        };
        let e = write_json(&d, &mut ClosedPipe).unwrap_err();
        assert!(e.is_broken_pipe(), "{e}");
        // The table's writes were I/O errors already.
        assert!(print_table(&d, &mut ClosedPipe)
            .unwrap_err()
            .is_broken_pipe());
    }

    #[test]
    fn incomplete_beta_matches_known_values() {
        use crate::profile::stats::inc_beta;
        // I_x(1, 1) = x; I_x(a, 1) = x^a; I_0.5(a, a) = 0.5.
        assert!((inc_beta(1.0, 1.0, 0.3) - 0.3).abs() < 1e-12);
        assert!((inc_beta(3.0, 1.0, 0.5) - 0.125).abs() < 1e-12);
        assert!((inc_beta(7.5, 7.5, 0.5) - 0.5).abs() < 1e-12);
    }

    #[test]
    fn binomial_p_values() {
        // 10 of 10 at p = 0.5: 2 · 0.5^10.
        assert!((binomial_two_sided(10, 10, 0.5) - 2.0 / 1024.0).abs() < 1e-12);
        assert_eq!(binomial_two_sided(5, 10, 0.5), 1.0);
        // 0 of 0: nothing to test.
        assert_eq!(binomial_two_sided(0, 0, 0.5), 1.0);
        // 2000 vs 1000 samples: far beyond chance; 1000 vs 1010: not.
        assert!(binomial_two_sided(2000, 3000, 0.5) < 1e-60);
        assert!(binomial_two_sided(1010, 2010, 0.5) > 0.5);
    }

    #[test]
    fn t_and_normal_tails() {
        // t = 2.228 is the 97.5% point at 10 degrees of freedom.
        assert!((t_two_sided(2.228_138_85, 10.0) - 0.05).abs() < 1e-6);
        assert!((t_quantile_975(10.0) - 2.228_138_85).abs() < 1e-6);
        assert!((erfc(Z975 / std::f64::consts::SQRT_2) - 0.05).abs() < 1e-9);
        assert!((erfc(0.0) - 1.0).abs() < 1e-15);
        assert!((erfc(3.0) - 2.209_049_699_858_544e-5).abs() < 1e-15);
        assert!((erfc(1.5) - 0.033_894_853_524_689_27).abs() < 1e-12);
    }

    /// A side of `runs` runs at 1000 Hz with these self (= total) counts per function.
    fn side(funcs: &[(&str, &[u64])]) -> Side {
        let runs = funcs[0].1.len();
        let mut functions = BTreeMap::new();
        for (name, counts) in funcs {
            let secs: Vec<f64> = counts.iter().map(|&c| c as f64 / 1000.0).collect();
            functions.insert(
                name.to_string(),
                PerRun {
                    self_seconds: secs.clone(),
                    counts: counts.to_vec(),
                    total_seconds: secs,
                    total_counts: counts.to_vec(),
                },
            );
        }
        Side {
            executable: "prog".into(),
            runs: (0..runs).map(|r| format!("run{r}")).collect(),
            hz: vec![1000; runs],
            functions,
        }
    }

    #[test]
    fn a_doubled_function_is_flagged_and_noise_is_not() {
        // One run per side: the exact binomial test.
        let base = side(&[("a", &[1000]), ("b", &[1000]), ("c", &[500])]);
        let new = side(&[("a", &[2000]), ("b", &[1030]), ("c", &[480])]);
        let d = compare(&base, &new, ALPHA);
        assert!(d.test.starts_with("exact conditional binomial"));
        let flagged: Vec<&str> = d
            .rows
            .iter()
            .filter(|r| r.significant)
            .map(|r| r.name.as_str())
            .collect();
        assert_eq!(flagged, ["a"]);
        assert_eq!(d.rows[0].name, "a");
        assert!((d.rows[0].delta_seconds - 1.0).abs() < 1e-12);
        // Total intervals are the self ones when total equals self.
        assert_eq!(d.rows[0].base_total_ci95, d.rows[0].base_ci95);
        // Several runs: the spread between runs is used. `b` moves by 8% on average, which
        // Poisson noise alone would call significant (z ≈ 3.1), but its runs scatter by 10%,
        // so it is not flagged; `a` doubles.
        let base = side(&[("a", &[1000, 1010, 990]), ("b", &[1000, 1100, 900])]);
        let new = side(&[("a", &[2000, 1990, 2010]), ("b", &[1180, 980, 1080])]);
        let d = compare(&base, &new, ALPHA);
        assert!(d.test.starts_with("Welch"));
        let flagged: Vec<&str> = d
            .rows
            .iter()
            .filter(|r| r.significant)
            .map(|r| r.name.as_str())
            .collect();
        assert_eq!(flagged, ["a"]);
        // A function present on one side only is compared with zero.
        let new = side(&[
            ("a", &[1000, 1010, 990]),
            ("b", &[1000, 1100, 900]),
            ("z", &[300, 310, 290]),
        ]);
        let d = compare(&base, &new, ALPHA);
        let z = d.rows.iter().find(|r| r.name == "z").unwrap();
        assert!(z.significant && z.base_seconds == 0.0, "{z:?}");
    }

    #[test]
    fn holm_adjusts_step_down() {
        let adj = holm(&[0.01, 0.04, 0.03, 0.5]);
        // Sorted 0.01, 0.03, 0.04, 0.5 → ×4, ×3, ×2, ×1 with a running maximum.
        let want = [0.04, 0.09, 0.09, 0.5];
        assert!(
            adj.iter().zip(want).all(|(a, w)| (a - w).abs() < 1e-12),
            "{adj:?}"
        );
    }
}
