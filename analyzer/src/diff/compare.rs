//! `diff`'s builder: each side's per-function figures from the export model, the estimates,
//! the test and Holm's correction, as plain data ([`Diff`]) that [`super::render`] writes.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::export::model::{self, StackProfile};
use crate::profile::input::{GmonInput, Input};
use crate::profile::stats::{binomial_two_sided, erfc, poisson_ci95, t_quantile_975, t_two_sided};
use crate::Result;

/// One side's per-run numbers of one function.
#[derive(Debug, Clone, Default)]
pub(crate) struct PerRun {
    /// Self seconds in each run.
    pub(crate) self_seconds: Vec<f64>,
    /// Self sample counts in each run.
    pub(crate) counts: Vec<u64>,
    /// Total seconds in each run.
    pub(crate) total_seconds: Vec<f64>,
    /// Total sample counts in each run.
    pub(crate) total_counts: Vec<u64>,
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
    pub(crate) functions: BTreeMap<String, PerRun>,
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

pub(crate) fn side_of(
    exe: &Input,
    gmons: &[GmonInput],
    warnings: &mut Vec<String>,
) -> Result<Side> {
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

pub(crate) const Z975: f64 = 1.959_963_984_540_054;

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
