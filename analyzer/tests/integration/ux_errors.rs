//! Errors a new user hits with the plain report, each saying what to do next.

use crate::ux_support;

use std::process::Command;
use ux_support::*;

#[test]
fn missing_profile_and_missing_program_say_what_to_do() {
    let s = TempDir::new("errors");
    // Nothing at all: gprof's defaults a.out and gmon.out.
    let out = Command::new(BIN).current_dir(&s.0).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    assert_eq!(
        text(&out.stderr).trim_end(),
        "profil-report: a.out: no such file (name the profiled program: `profil-report gmon.out ./prog`)"
    );
    // The program, but it has not run yet.
    gcc("int main(void) { return 0; }", &s.join("prog"), &[]);
    let out = Command::new(BIN)
        .arg("./prog")
        .current_dir(&s.0)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    let err = text(&out.stderr);
    assert!(
        err.starts_with("profil-report: gmon.out: no such file (no profile yet: ")
            && err.contains("profil-report run ./prog")
            && err.contains("cargo profil")
            && err.lines().count() == 1,
        "{err}"
    );
    // A missing file named explicitly gets no guess.
    let out = Command::new(BIN)
        .args(["other.gmon", "./prog"])
        .current_dir(&s.0)
        .output()
        .unwrap();
    assert_eq!(
        text(&out.stderr).trim_end(),
        "profil-report: other.gmon: no such file"
    );
}
