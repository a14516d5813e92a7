//! Golden files of the default flat profile (`--csv`, which holds exactly the flat rows) and of
//! `--compare-gprof`, on the committed glibc profiles of `fixtures/gcc-pg` (fixed inputs, so the
//! output is fixed). One test per file; `PROFIL_BLESS=1` rewrites them. See
//! `fixtures/flat/README.md`.

use crate::golden;

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn golden(name: &str, args: &[&str]) {
    let out = Command::new(env!("CARGO_BIN_EXE_profil-report"))
        .args(args)
        .current_dir(root().join("fixtures/gcc-pg"))
        .env("LC_ALL", "C")
        .output()
        .expect("run profil-report");
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let path = root().join("fixtures/flat/golden").join(name);
    golden::assert_golden(&path, &out.stdout);
}

#[test]
fn cycle_csv() {
    golden("cycle.csv", &["--csv", "cycle.gmon", "cycle"]);
}

#[test]
fn recursion_csv() {
    golden("recursion.csv", &["--csv", "recursion", "recursion.gmon"]);
}

#[test]
fn threads_csv() {
    golden("threads.csv", &["--csv", "threads", "threads.gmon"]);
}

#[test]
fn loop2_compare_gprof() {
    golden(
        "loop2.compare.txt",
        &["--compare-gprof", "loop2", "loop2.gmon"],
    );
}

#[test]
fn threads_compare_gprof() {
    golden(
        "threads.compare.txt",
        &["--compare-gprof", "threads", "threads.gmon"],
    );
}
