//! Issue 29: Rust programs read right. fixtures/rust/wordfreq.rs (two instances of the generic
//! `count`, a worker pool on std threads, std iterators and HashMap inlined into the program's
//! code) in a fresh `cargo new` project (no dependencies: it builds offline):
//!
//! * under `cargo profil --release`: one row per instance with totals of its own (total ≥
//!   self, equal to the call graph's), names told apart by their generic arguments, the same
//!   names in the folded export, none of the runtime's own frames anywhere, and `--inline`
//!   equal to the export's inline frames sample for sample, with lines and chains in JSON;
//!   `--own-lines` on the same samples, most of them on the program's own lines (the hot one
//!   among the top two), where `--lines` put them in the standard library;
//! * built by cargo's release default (`debug = false`) with the runtime linked in and run by
//!   `profil-report run`: the one warning naming the `Cargo.toml` setting, and instances told
//!   apart by their symbol's hash.

use crate::ux_support::*;

use std::path::{Path, PathBuf};
use std::process::Command;

/// A fresh project `wordfreq` in `s` running fixtures/rust/wordfreq.rs.
fn project(s: &TempDir) -> PathBuf {
    cargo_new(s, "wordfreq", "fixtures/rust/wordfreq.rs")
}

/// The JSON report the run wrote to `file` (the program's own output is on stdout).
fn json(file: &Path, out: &std::process::Output) -> serde_json::Value {
    let bytes = std::fs::read(file).unwrap_or_else(|e| panic!("{e}\n{}", show(out)));
    serde_json::from_slice(&bytes).unwrap_or_else(|e| panic!("{e}\n{}", show(out)))
}

/// The rows' (object, function) names: each at most once.
fn assert_distinct_rows(report: &serde_json::Value) {
    let mut seen = std::collections::HashSet::new();
    for r in report["rows"].as_array().unwrap() {
        let key = (r["object"].to_string(), r["function"].to_string());
        assert!(
            seen.insert(key.clone()),
            "two rows named {key:?}\n{report:#}"
        );
    }
}

/// Every row on the stacks has a total at least its self samples (one sample of slack: a
/// histogram bin shared by two functions is split between them by bytes) and equal to the
/// call graph's total for the function of that name.
fn assert_totals_hold(report: &serde_json::Value) {
    let graph: std::collections::HashMap<String, u64> = report["call_graph"]["functions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["name"].as_str().unwrap().to_owned(),
                f["total_samples"].as_u64().unwrap(),
            )
        })
        .collect();
    let exe = report["rows"][0]["object"].as_str().unwrap().to_owned();
    let mut checked = 0;
    for r in report["rows"].as_array().unwrap() {
        let Some(total) = r["total_samples"].as_u64() else {
            continue;
        };
        let own = r["samples"].as_f64().unwrap();
        let function = r["function"].as_str().unwrap();
        assert!(
            total as f64 >= own - 1.0,
            "{function}: total {total} below self {own}"
        );
        let name = if r["object"] == exe.as_str() {
            function.to_owned()
        } else {
            format!("{function} ({})", r["object"].as_str().unwrap())
        };
        assert_eq!(graph.get(&name), Some(&total), "{name} in the call graph");
        checked += 1;
    }
    assert!(checked >= 5, "{report:#}");
}

/// The rows' names starting with `prefix`.
fn rows_named<'a>(report: &'a serde_json::Value, prefix: &str) -> Vec<&'a str> {
    report["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["function"].as_str())
        .filter(|f| f.starts_with(prefix))
        .collect()
}

#[test]
fn generic_instances_are_rows_of_their_own_with_their_own_totals() {
    let s = TempDir::new("rust-instances");
    let proj = project(&s);
    let out = cargo_profil(
        &proj,
        &[
            "--release",
            "--hz",
            "1000",
            "--json",
            "--report",
            "report.json",
            "--",
            "12",
        ],
    );
    assert!(out.status.success(), "{}", show(&out));
    let err = text(&out.stderr);
    assert!(
        err.contains("line tables (-C debuginfo=line-tables-only)"),
        "{err}"
    );
    let report = json(&proj.join("report.json"), &out);
    assert_distinct_rows(&report);
    assert_totals_hold(&report);
    // Told apart by the generic argument that differs (they both read `wordfreq::count`).
    let mut counts = rows_named(&report, "wordfreq::count");
    counts.sort_unstable();
    assert_eq!(
        counts,
        [
            "wordfreq::count<(u64, u64), …>",
            "wordfreq::count<String, …>"
        ],
        "{report:#}"
    );
    // Line tables without DWARF declarations: the entry's line, in the rows and the graph.
    for list in [&report["rows"], &report["call_graph"]["functions"]] {
        let key = if list == &report["rows"] {
            "function"
        } else {
            "name"
        };
        let located = list.as_array().unwrap().iter().filter(|r| {
            r[key].as_str().unwrap().starts_with("wordfreq::count<")
                && r["location"]
                    .as_str()
                    .is_some_and(|l| l.contains("src/main.rs:"))
        });
        assert_eq!(located.count(), 2, "{report:#}");
    }
    // The runtime's thread trampoline is no caller of the program's threads.
    let whole = report.to_string();
    assert!(!whole.contains("profil_rt"), "{report:#}");
    assert!(whole.contains("wordfreq::worker"), "{report:#}");

    // The same names in the exports, and no runtime frame there either.
    let exe = proj.join(format!("target/{}/release/wordfreq", host()));
    let folded = s.join("folded.txt");
    let out = Command::new(BIN)
        .args(["export", "--to", "folded", "-o"])
        .arg(&folded)
        .arg(&exe)
        .arg(proj.join("gmon.out"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", show(&out));
    let folded = std::fs::read_to_string(folded).unwrap();
    assert!(!folded.contains("profil_rt"), "{folded}");
    for name in &counts {
        assert!(folded.contains(&format!(";{name};")), "{name}: {folded}");
    }

    // `--inline` counts the samples of each innermost function as the exports' inline frames
    // do, sample for sample (it split histogram bins by bytes while the exports took the
    // stacks' exact PCs: 986 against 1286 samples of `_mm_movemask_epi8`), under the same
    // names, with the hottest line of each.
    let mut leaves: std::collections::HashMap<&str, u64> = std::collections::HashMap::new();
    for line in folded.lines() {
        let (stack, n) = line.rsplit_once(' ').unwrap();
        *leaves.entry(stack.rsplit(';').next().unwrap()).or_default() += n.parse::<u64>().unwrap();
    }
    let out = Command::new(BIN)
        .args(["--inline", "--json"])
        .arg(&exe)
        .arg(proj.join("gmon.out"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", show(&out));
    let inline: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut compared = 0;
    for f in inline["functions"].as_array().unwrap() {
        let samples = f["samples"].as_f64().unwrap();
        if samples == 0.0 {
            continue;
        }
        let name = f["function"].as_str().unwrap();
        assert_eq!(
            leaves.get(name).copied().map(|n| n as f64),
            Some(samples),
            "{name}: --inline and the folded export differ (export leaves like it: {:?})",
            leaves
                .iter()
                .filter(|(k, _)| k.contains(name.split('<').next().unwrap_or(name)))
                .collect::<Vec<_>>()
        );
        compared += 1;
    }
    assert!(compared >= 10, "{inline:#}");
    let located = |prefix: &str| {
        inline["functions"].as_array().unwrap().iter().any(|f| {
            f["function"].as_str().unwrap().starts_with(prefix)
                && f["location"].as_str().is_some_and(|l| l.contains(":"))
        })
    };
    assert!(located("wordfreq::count<"), "{inline:#}");
    assert!(
        inline["chains"]
            .as_array()
            .unwrap()
            .iter()
            .any(
                |c| c["chain"].as_array().is_some_and(|steps| steps.len() > 2)
                    && c["location"].is_string()
            ),
        "{inline:#}"
    );

    // `--own-lines`: the same samples as `--inline`, each on the program's own line it ran
    // under; `--lines` put most of them in the standard library's files.
    let report = |args: &[&str]| {
        let out = Command::new(BIN)
            .args(args)
            .arg("--json")
            .arg(&exe)
            .arg(proj.join("gmon.out"))
            .current_dir(&proj)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", show(&out));
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()
    };
    let own = report(&["--own-lines"]);
    assert_eq!(own["total_samples"], inline["total_samples"], "{own:#}");
    let share_in_main = |r: &serde_json::Value| {
        let rows = r["lines"].as_array().unwrap();
        let all: f64 = rows.iter().map(|l| l["samples"].as_f64().unwrap()).sum();
        let main: f64 = rows
            .iter()
            .filter(|l| {
                l["file"]
                    .as_str()
                    .is_some_and(|f| f.ends_with("src/main.rs"))
            })
            .map(|l| l["samples"].as_f64().unwrap())
            .sum();
        main / all
    };
    let plain = report(&["--lines"]);
    assert!(
        share_in_main(&own) > 0.8 && share_in_main(&own) > share_in_main(&plain) + 0.3,
        "own {} against --lines {}\n{own:#}",
        share_in_main(&own),
        share_in_main(&plain)
    );
    // The hot line, the HashMap entry in `count`, is one of the top two rows.
    let source = std::fs::read_to_string(root().join("fixtures/rust/wordfreq.rs")).unwrap();
    let hot = 1 + source
        .lines()
        .position(|l| l.contains("or_insert(0)"))
        .unwrap() as u64;
    let top: Vec<u64> = own["lines"].as_array().unwrap()[..2]
        .iter()
        .filter_map(|l| l["line"].as_u64())
        .collect();
    assert!(top.contains(&hot), "line {hot} not in the top two\n{own:#}");
    // With --chains, what ran below the program's line.
    let chained = report(&["--own-lines", "--chains"]);
    assert!(
        chained["lines"]
            .as_array()
            .unwrap()
            .iter()
            .any(|l| l["function"]
                .as_str()
                .is_some_and(|f| f.starts_with("wordfreq::count<") && f.contains(" > "))),
        "{chained:#}"
    );
    let crates = report(&["--own-lines", "--own-crates"]);
    assert!(share_in_main(&crates) > 0.8, "{crates:#}");
}

#[test]
fn a_release_build_without_line_tables_gets_one_warning_naming_the_setting() {
    let s = TempDir::new("rust-nolines");
    let proj = project(&s);
    let link = Command::new(BIN).arg("link-args").output().unwrap();
    assert!(link.status.success(), "{}", show(&link));
    let out = Command::new(cargo())
        .args(["build", "--release", "--quiet"])
        .current_dir(&proj)
        .env("RUSTFLAGS", text(&link.stdout).trim())
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("CARGO_BUILD_TARGET_DIR")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", show(&out));
    let run = |json: bool| {
        let mut c = Command::new(BIN);
        c.args(["run", "--hz", "1000", "--report", "report.txt"]);
        if json {
            c.arg("--json");
        }
        let out = c
            .arg("./target/release/wordfreq")
            .arg("8")
            .current_dir(&proj)
            .env_remove("LD_PRELOAD")
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", show(&out));
        out
    };
    let out = run(false);
    let all = format!(
        "{}{}",
        std::fs::read_to_string(proj.join("report.txt")).unwrap(),
        text(&out.stderr)
    );
    assert_eq!(
        all.matches("[profile.release] debug = \"line-tables-only\"")
            .count(),
        1,
        "{all}"
    );
    assert!(!all.contains("profil_rt"), "{all}");
    let out = run(true);
    let report = json(&proj.join("report.txt"), &out);
    assert_distinct_rows(&report);
    assert_totals_hold(&report);
    // No generic arguments without debug information: the symbols' hashes tell them apart.
    let counts = rows_named(&report, "wordfreq::count");
    assert_eq!(counts.len(), 2, "{report:#}");
    assert!(
        counts.iter().all(|c| c.starts_with("wordfreq::count [h")),
        "{counts:?}"
    );
    // The line views say it too, once (`--lines` showed the standard library's lines and
    // nothing else).
    for view in ["--lines", "--own-lines", "--inline"] {
        let out = Command::new(BIN)
            .args([view, "./target/release/wordfreq", "gmon.out"])
            .current_dir(&proj)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", show(&out));
        let err = text(&out.stderr);
        assert_eq!(
            err.matches("debug = \"line-tables-only\"").count(),
            1,
            "{view}: {}",
            show(&out)
        );
    }
}

fn host() -> String {
    let out = Command::new("rustc").arg("-vV").output().unwrap();
    text(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: ").map(str::to_string))
        .unwrap()
}
