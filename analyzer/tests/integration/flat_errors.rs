//! Bad input: one line on stderr starting `profil-report:`, naming the file and the problem,
//! exit status 2 (1 in `--gprof` mode, gprof's status), no panic.

use crate::flat_support;

use flat_support::*;

fn expect_error(dir: &TempDir, args: &[&str], must_contain: &[&str]) {
    let out = ours(dir.path(), args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let want = if args.contains(&"--gprof") { 1 } else { 2 };
    assert_eq!(
        out.status.code(),
        Some(want),
        "{args:?}: status {:?}, stderr {stderr}",
        out.status
    );
    assert!(out.stdout.is_empty(), "{args:?}: printed to stdout");
    assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
    assert!(stderr.starts_with("profil-report: "), "{args:?}: {stderr}");
    for m in must_contain {
        assert!(stderr.contains(m), "{args:?}: {stderr:?} lacks {m:?}");
    }
}

fn program() -> TempDir {
    let dir = TempDir::new("errors");
    let src = corpus("cycles.c");
    compile(
        dir.path(),
        "gcc",
        &["-pg", "-O2", "-o", "prog", src.to_str().unwrap()],
    );
    profile_run(dir.path(), "prog", &[], "gmon.out");
    dir
}

#[test]
fn bad_inputs_give_one_line_and_status_2() {
    let dir = program();
    let gmon = std::fs::read(dir.join("gmon.out")).unwrap();
    std::fs::write(dir.join("half.out"), &gmon[..gmon.len() / 2 + 1]).unwrap();
    std::fs::write(dir.join("empty.out"), b"").unwrap();
    std::fs::write(
        dir.join("text.txt"),
        b"just some text, neither ELF nor gmon\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("badtag.out"),
        [&gmon[..20], &[9u8, 0, 0][..]].concat(),
    )
    .unwrap();
    compile(dir.path(), "objcopy", &["--strip-all", "prog", "stripped"]);
    std::fs::copy(dir.join("prog"), dir.join("prog2")).unwrap();
    for mode in [&["--gprof", "-b", "-p"][..], &[][..]] {
        let with = |rest: &[&'static str]| -> Vec<&str> {
            mode.iter().copied().chain(rest.iter().copied()).collect()
        };
        expect_error(
            &dir,
            &with(&["missing.out", "prog"]),
            &["missing.out", "no such file"],
        );
        expect_error(&dir, &with(&["half.out", "prog"]), &["half.out", "byte"]);
        expect_error(
            &dir,
            &with(&["empty.out", "prog"]),
            &["empty.out", "too short"],
        );
        expect_error(
            &dir,
            &with(&["badtag.out", "prog"]),
            &["badtag.out", "tag 9"],
        );
        expect_error(&dir, &with(&["text.txt", "prog"]), &["text.txt"]);
        expect_error(&dir, &with(&["gmon.out"]), &["no executable"]);
        expect_error(
            &dir,
            &with(&["prog", "prog2", "gmon.out"]),
            &["prog2", "exactly one"],
        );
    }
    // gprof reads only .symtab: a stripped program has no symbols.
    expect_error(
        &dir,
        &["--gprof", "-b", "-p", "stripped", "gmon.out"],
        &["stripped", "no symbols"],
    );
    let g = gprof(dir.path(), &["-b", "-p", "stripped", "gmon.out"]);
    assert!(!g.status.success(), "gprof accepted a stripped executable");
}

#[test]
fn default_files_are_a_out_and_gmon_out() {
    let dir = program();
    std::fs::rename(dir.join("prog"), dir.join("a.out")).unwrap();
    let want = gprof(dir.path(), &["-b", "-p"]);
    let got = ours(dir.path(), &["--gprof", "-b", "-p"]);
    assert!(want.status.success());
    assert_eq!(
        want.stdout,
        got.stdout,
        "{}",
        diff(&want.stdout, &got.stdout)
    );
    // Only the executable given: gmon.out is read.
    let got = ours(dir.path(), &["--gprof", "-b", "-p", "a.out"]);
    assert_eq!(want.stdout, got.stdout);
}
