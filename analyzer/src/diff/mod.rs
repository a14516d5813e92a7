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
//!
//! # Layout
//!
//! [`compare`] builds the comparison as plain data; [`render`] writes it; this module loads
//! each side and chains the two.

pub mod compare;
pub mod render;

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::profile::input::{read_path, sort_inputs, GmonInput, Input};
use crate::{Error, Result};
use compare::{compare, side_of};
use render::{print_table, write_json};

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
    /// Also write the comparison as an interactive HTML page here ([`crate::cmd::html`]).
    pub html: Option<PathBuf>,
    /// Family-wise significance level (Holm-corrected over the functions shown).
    pub alpha: f64,
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
    if let Some(path) = &args.html {
        let mut json = Vec::new();
        write_json(&diff, &mut json)?;
        let page = crate::cmd::html::diff_page(json, &new_exe, &new_gmons, &mut warnings)?;
        crate::cmd::html::write_page(path, &page)?;
    }
    Ok(warnings)
}

#[cfg(test)]
mod tests {
    use super::compare::*;
    use super::render::*;
    use super::*;
    use crate::profile::stats::{binomial_two_sided, erfc, t_quantile_975, t_two_sided};
    use std::collections::BTreeMap;

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
