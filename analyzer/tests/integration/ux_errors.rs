//! Errors a new user hits with the plain report, each saying what to do next.

use crate::ux_support;

use std::process::Command;
use ux_support::*;

#[test]
fn missing_profile_and_missing_program_say_what_to_do() {
    let s = TempDir::new("errors");
    // Nothing at all, and no profile to read: the usage.
    let out = Command::new(BIN).current_dir(&s.0).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    let err = text(&out.stderr);
    assert!(
        err.contains("Usage: profil-report") && err.contains("Commands:") && out.stdout.is_empty(),
        "{}",
        show(&out)
    );
    // Nothing but a gmon.out: gprof's default a.out is missing.
    std::fs::write(s.join("gmon.out"), b"").unwrap();
    let out = Command::new(BIN).current_dir(&s.0).output().unwrap();
    std::fs::remove_file(s.join("gmon.out")).unwrap();
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

#[test]
fn mistyped_subcommands_get_a_suggestion() {
    let s = TempDir::new("typos");
    for (args, meant) in [
        (&["expot", "--to", "pprof"][..], "export"),
        (&["rnu", "true"], "run"),
        (&["dif"], "diff"),
        (&["dmeo"], "demo"),
    ] {
        let out = Command::new(BIN)
            .args(args)
            .current_dir(&s.0)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", show(&out));
        let err = text(&out.stderr);
        assert!(
            err.contains(&format!("unrecognized subcommand '{}'", args[0]))
                && err.contains(&format!("a similar subcommand exists: '{meant}'")),
            "{args:?}: {}",
            show(&out)
        );
    }
    // A file of that name is read as a file, and a name far from every subcommand is a file.
    std::fs::write(s.join("dif"), b"").unwrap();
    for word in ["dif", "profile.gmon"] {
        let out = Command::new(BIN)
            .arg(word)
            .current_dir(&s.0)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{}", show(&out));
        assert!(
            !text(&out.stderr).contains("subcommand"),
            "{word}: {}",
            show(&out)
        );
    }
}
