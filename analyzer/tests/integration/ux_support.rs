//! Helpers shared by the ux_* tests: the binaries, compiling C; scratch directories are
//! `support::TempDir`, the tests' one type for them.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::support;
pub use support::TempDir;

/// `profil-report` as built for these tests.
pub const BIN: &str = env!("CARGO_BIN_EXE_profil-report");
/// `cargo-profil` as built for these tests.
pub const CARGO_PROFIL: &str = env!("CARGO_BIN_EXE_cargo-profil");

/// The repository root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Compile C `source` to `exe` with gcc and extra arguments; panics with gcc's message.
pub fn gcc(source: &str, exe: &Path, extra: &[&str]) {
    let dir = exe.parent().unwrap();
    let src = dir.join(format!("{}.c", exe.file_name().unwrap().to_string_lossy()));
    std::fs::write(&src, source).unwrap();
    let out = Command::new("gcc")
        .args(["-O2", "-g", "-o"])
        .arg(exe)
        .arg(&src)
        .args(extra)
        .output()
        .expect("gcc");
    assert!(
        out.status.success(),
        "gcc failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The demo workload's source.
pub fn demo_source() -> String {
    std::fs::read_to_string(root().join("fixtures/demo/demo.c")).unwrap()
}

pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Panic with everything the command printed.
pub fn show(out: &Output) -> String {
    format!(
        "status {:?}\n--- stdout\n{}\n--- stderr\n{}",
        out.status,
        text(&out.stdout),
        text(&out.stderr)
    )
}

/// Percent column of the default report's table row for `function`.
pub fn percent_of(report: &str, function: &str) -> Option<f64> {
    let cells = |l: &str| {
        l.split('|')
            .map(str::trim)
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    // The function column's place depends on which columns the profile fills.
    let col = report
        .lines()
        .find_map(|l| cells(l).iter().position(|c| c == "function"))?;
    report.lines().find_map(|l| {
        let cells = cells(l);
        (cells.get(col).map(String::as_str) == Some(function)).then(|| cells[0].parse().ok())?
    })
}

/// The designed split of the demo.
pub const DEMO_SPLIT: [(&str, f64); 4] = [
    ("parse_records", 40.0),
    ("hash_keys", 30.0),
    ("sort_batch", 20.0),
    ("write_output", 10.0),
];

/// Total samples from the report's header line (`…: N samples at …`; a header longer than
/// 100 columns is wrapped after its `:`, the figures on the next line).
pub fn total_samples(report: &str) -> u64 {
    let mut lines = report
        .lines()
        .skip_while(|l| !l.starts_with("Flat profile of "));
    lines
        .next()
        .and_then(|head| match head.strip_suffix(':') {
            Some(_) => lines.next().map(str::trim_start),
            None => head.split(": ").nth(1),
        })
        .and_then(|l| l.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no header line in\n{report}"))
}

/// Assert the demo's split in a default report, within 3.5 binomial standard deviations of the
/// sample count plus one point (what `profil-report demo` itself calls "ok").
pub fn assert_demo_split(report: &str) {
    let n = total_samples(report) as f64;
    // 100 is what a tick-limited interval timer (perf_event refused) still gives the tests.
    assert!(n >= 100.0, "too few samples to judge: {n}\n{report}");
    for (f, want) in DEMO_SPLIT {
        let got = percent_of(report, f).unwrap_or_else(|| panic!("no row for {f} in\n{report}"));
        let p = want / 100.0;
        let tol = 3.5 * 100.0 * (p * (1.0 - p) / n).sqrt() + 1.0;
        assert!(
            (got - want).abs() <= tol,
            "{f}: {got}% measured, {want}% designed (±{tol:.1})\n{report}"
        );
    }
}

/// `profil-report` to run in `dir`, without the profiling settings of the tests' environment
/// (`LD_PRELOAD`, `PROFIL_HZ`, `PROFIL_RANGES`).
pub fn profil_report_in(dir: &Path) -> Command {
    let mut cmd = Command::new(BIN);
    cmd.current_dir(dir)
        .env_remove("LD_PRELOAD")
        .env_remove("PROFIL_HZ")
        .env_remove("PROFIL_RANGES");
    cmd
}

/// Run `cmd`, retrying while the kernel says "text file busy": a binary this process just
/// copied can still be open for writing in a child that another test thread forked meanwhile
/// (the descriptor lives until that child's exec).
pub fn output_retrying(cmd: &mut Command) -> Output {
    for _ in 0..100 {
        match cmd.output() {
            Err(e) if e.raw_os_error() == Some(26) => {
                std::thread::sleep(std::time::Duration::from_millis(20))
            }
            r => return r.unwrap(),
        }
    }
    panic!("{cmd:?}: text file busy for 2 seconds")
}

/// Put an executable copy of `src` at `dst` through `install(1)`, so that no descriptor open
/// for writing on `dst` ever exists in this (multi-threaded, forking) test process.
pub fn install_exec(src: &Path, dst: &Path) {
    let out = Command::new("install")
        .arg("-m")
        .arg("755")
        .arg(src)
        .arg(dst)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", show(&out));
}

/// The programs `run`'s "Other processes" table lists (None: no such table), and the
/// "and N more" count under it.
pub fn other_processes(err: &str) -> Option<(Vec<String>, usize)> {
    let mut lines = err
        .lines()
        .skip_while(|l| !l.starts_with("Other processes ("))
        .skip(3);
    let mut names = Vec::new();
    let mut more = 0;
    for l in lines.by_ref() {
        match l.split('|').nth(2) {
            Some(name) if l.split('|').count() == 3 => names.push(name.trim().to_owned()),
            _ => {
                more = l
                    .strip_prefix("and ")
                    .and_then(|r| r.split(' ').next())
                    .and_then(|n| n.parse().ok())
                    .unwrap_or(0);
                break;
            }
        }
    }
    err.contains("Other processes (").then_some((names, more))
}

/// Whether a table row of `report` has a cell that is exactly `cell` (the last column has no
/// padding after it, so `| spin ` would miss a row that ends in it).
pub fn has_cell(report: &str, cell: &str) -> bool {
    report
        .lines()
        .any(|l| l.contains('|') && l.split('|').any(|c| c.trim() == cell))
}

/// The cargo running the tests.
pub fn cargo() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".into())
}

/// `cargo profil ARGS` in `dir`, with the test's cargo-profil first on PATH.
pub fn cargo_profil(dir: &Path, args: &[&str]) -> Output {
    let bin_dir = Path::new(CARGO_PROFIL).parent().unwrap();
    let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap());
    Command::new(cargo())
        .arg("profil")
        .args(args)
        .current_dir(dir)
        .env("PATH", path)
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("CARGO_BUILD_TARGET_DIR")
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .output()
        .unwrap()
}

/// A fresh `cargo new` project `name` in `s` whose `src/main.rs` is the repository's file
/// `main_rs`.
pub fn cargo_new(s: &TempDir, name: &str, main_rs: &str) -> PathBuf {
    let out = Command::new(cargo())
        .args(["new", "--quiet", "--vcs", "none", name])
        .current_dir(&s.0)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", show(&out));
    let proj = s.join(name);
    std::fs::copy(root().join(main_rs), proj.join("src/main.rs")).unwrap();
    proj
}
