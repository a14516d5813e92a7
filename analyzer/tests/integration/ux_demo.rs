//! `profil-report demo`: builds the embedded demo with the runtime, runs it, and shows the
//! report, the designed-vs-measured split and gprof's view of the same profile.

use crate::ux_support;

use std::process::Command;
use ux_support::*;

#[test]
fn demo_reports_the_designed_split_next_to_gprof() {
    let s = TempDir::new("demo");
    let dir = s.join("kept");
    let out = Command::new(BIN)
        .args(["demo", "--hz", "2000", "--scale", "15", "--dir"])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", show(&out));
    let stdout = text(&out.stdout);
    assert_demo_split(&stdout);
    // The designed-vs-measured lines agree with the table.
    for (f, want) in DEMO_SPLIT {
        let line = stdout
            .lines()
            .find(|l| l.trim_start().starts_with(f) && l.contains("designed"))
            .unwrap_or_else(|| panic!("no design line for {f}\n{stdout}"));
        assert!(line.contains(&format!("designed {want:>4.0}%")), "{line}");
        assert!(line.trim_end().ends_with("ok"), "{line}");
    }
    // gprof's own view of the same file, printed verbatim: compare with running it here.
    let gprof = Command::new("gprof")
        .args(["-b", "-p", "demo", "gmon.out"])
        .current_dir(&dir)
        .output()
        .unwrap();
    let gprof = text(&gprof.stdout);
    assert!(gprof.contains("parse_records"), "{gprof}");
    assert!(
        stdout.contains(&gprof),
        "gprof's output is included:\n{stdout}"
    );
    // Under it, what its columns mean here: "calls" are sample counts (the runtime's arcs
    // are sampled stacks), in lines that fit a terminal.
    let after = &stdout[stdout.find(&gprof).unwrap() + gprof.len()..];
    assert!(
        after.contains("\"calls\" are sample counts")
            && after
                .lines()
                .take_while(|l| !l.is_empty())
                .all(|l| l.chars().count() <= 100),
        "{after}"
    );
    // --dir keeps the files, and the source is the fixture's.
    assert_eq!(
        std::fs::read_to_string(dir.join("demo.c")).unwrap(),
        demo_source()
    );
    assert!(dir.join("demo").is_file() && dir.join("gmon.out").is_file());
}

#[test]
fn demo_without_gprof_and_without_a_compiler() {
    let s = TempDir::new("demo-nocc");
    let out = Command::new(BIN)
        .args(["demo", "--no-gprof", "--scale", "2"])
        .env("CC", "gcc -fno-pie -no-pie")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", show(&out));
    assert!(!text(&out.stdout).contains("GNU gprof"), "{}", show(&out));

    let out = Command::new(BIN)
        .args(["demo", "--scale", "1"])
        .env("CC", s.join("no-such-cc"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    let err = text(&out.stderr);
    assert!(
        err.contains("cannot run the C compiler") && err.contains("set CC"),
        "{err}"
    );
}
