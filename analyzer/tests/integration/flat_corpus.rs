//! `profil-report --gprof -b -p` against the installed GNU gprof on the corpus in
//! `fixtures/flat/corpus`, compiled and run at test time, under `-z`, `-a` and both.

use crate::flat_support;

use flat_support::*;

/// Compile one C corpus program with `cflags`, run it, compare under every flag set.
fn c_case(src: &str, cflags: &[&str]) -> Vec<u8> {
    let dir = TempDir::new(src.trim_end_matches(".c"));
    let srcp = corpus(src);
    let mut args: Vec<&str> = vec!["-pg", "-g", "-pthread", "-o", "prog"];
    args.extend_from_slice(cflags);
    let s = srcp.to_str().unwrap();
    args.push(s);
    compile(dir.path(), "gcc", &args);
    profile_run(dir.path(), "prog", &[], "gmon.out");
    let mut first = Vec::new();
    for flags in FLAG_SETS {
        let out = assert_same(dir.path(), "prog", &["gmon.out"], flags);
        if first.is_empty() {
            first = out;
        }
    }
    first
}

fn rows(out: &[u8]) -> usize {
    String::from_utf8_lossy(out).lines().skip(5).count()
}

#[test]
fn cycles_o0() {
    let out = c_case("cycles.c", &["-O0"]);
    let text = String::from_utf8_lossy(&out);
    assert!(
        text.contains(" ping\n") && text.contains(" fib\n"),
        "{text}"
    );
}

#[test]
fn cycles_o2_no_pie() {
    let out = c_case("cycles.c", &["-O2", "-no-pie"]);
    assert!(rows(&out) >= 2, "{}", String::from_utf8_lossy(&out));
}

#[test]
fn aliases_o0() {
    c_case("aliases.c", &["-O0"]);
}

#[test]
fn aliases_o2() {
    c_case("aliases.c", &["-O2"]);
}

#[test]
fn clones_o2() {
    c_case("clones.c", &["-O2"]);
}

#[test]
fn clones_o0() {
    c_case("clones.c", &["-O0"]);
}

#[test]
fn threads_o2() {
    c_case("threads.c", &["-O2"]);
}

#[test]
fn dotted_o0() {
    c_case("dotted.c", &["-O0"]);
}

#[test]
fn dotted_o2() {
    c_case("dotted.c", &["-O2"]);
}

/// A static binary: libc is inside the histogram range, with IFUNCs, dotted locals and
/// mcount itself (excluded by name, and taken out of the total).
#[test]
fn static_o2() {
    let out = c_case("cycles.c", &["-O2", "-static"]);
    assert!(rows(&out) >= 2);
}

/// C++ names, demangled as libiberty does.
#[test]
fn cxx_o2() {
    let dir = TempDir::new("cxx");
    let src = corpus("cxx.cpp");
    compile(
        dir.path(),
        "g++",
        &["-pg", "-O2", "-o", "prog", src.to_str().unwrap()],
    );
    profile_run(dir.path(), "prog", &[], "gmon.out");
    let out = assert_same(dir.path(), "prog", &["gmon.out"], &["-z"]);
    assert!(
        String::from_utf8_lossy(&out).contains("geo::"),
        "no demangled C++ names"
    );
    assert_same(dir.path(), "prog", &["gmon.out"], &[]);
}

/// STL-heavy C++: demangling must follow libiberty on pack expansions and literal operators.
#[test]
fn cxx_stl_o1() {
    let dir = TempDir::new("stl");
    let src = corpus("stl.cpp");
    compile(
        dir.path(),
        "g++",
        &["-pg", "-O1", "-o", "prog", src.to_str().unwrap()],
    );
    profile_run(dir.path(), "prog", &[], "gmon.out");
    let out = assert_same(dir.path(), "prog", &["gmon.out"], &["-z"]);
    assert!(
        String::from_utf8_lossy(&out).contains("operator\"\" _k"),
        "literal operator missing"
    );
}

/// Rust on stable: `-C link-arg=-pg` links glibc's gcrt1, which samples the program and writes
/// gmon.out (histogram only). Legacy and v0 mangling.
fn rust_case(file: &str, mangling: Option<&str>, expect: &str) {
    let dir = TempDir::new("rust");
    let src = corpus(file);
    let mut args = vec![
        "-O",
        "-C",
        "link-arg=-pg",
        "-o",
        "prog",
        src.to_str().unwrap(),
    ];
    // Stable rustc mangles with the legacy scheme by default and accepts only `v0` here.
    if let Some(m) = mangling {
        args.extend(["-C", m]);
    }
    compile(dir.path(), "rustc", &args);
    profile_run(dir.path(), "prog", &[], "gmon.out");
    let out = assert_same(dir.path(), "prog", &["gmon.out"], &["-z"]);
    assert!(
        String::from_utf8_lossy(&out).contains(expect),
        "no {expect}"
    );
    for flags in FLAG_SETS {
        assert_same(dir.path(), "prog", &["gmon.out"], flags);
    }
}

#[test]
fn rust_legacy() {
    rust_case("rusty.rs", None, "rusty::collatz_len");
}

#[test]
fn rust_generics_legacy_and_v0() {
    rust_case("generics.rs", None, "generics::apply");
    rust_case(
        "generics.rs",
        Some("symbol-mangling-version=v0"),
        "generics::apply::<generics::main::{closure#0}>",
    );
}

#[test]
fn rust_v0() {
    rust_case(
        "rusty.rs",
        Some("symbol-mangling-version=v0"),
        "rusty::collatz_len",
    );
}

/// Several gmon files are summed with gprof's rules (histograms per range, arcs per pair).
#[test]
fn multiple_files() {
    let dir = TempDir::new("multi");
    let src = corpus("cycles.c");
    compile(
        dir.path(),
        "gcc",
        &["-pg", "-g", "-O0", "-o", "prog", src.to_str().unwrap()],
    );
    profile_run(dir.path(), "prog", &["1"], "g1.out");
    profile_run(dir.path(), "prog", &["2"], "g2.out");
    for flags in FLAG_SETS {
        assert_same(dir.path(), "prog", &["g1.out", "g2.out"], flags);
    }
    // The same file twice doubles everything.
    assert_same(dir.path(), "prog", &["g1.out", "g1.out"], &[]);
    // gprof's own summary file (garbage in the header's spare bytes, arcs normalised to
    // symbol and source-line addresses) reads the same, alone and mixed with its sources.
    let sum = gprof(dir.path(), &["-s", "prog", "g1.out", "g2.out"]);
    assert!(sum.status.success() && dir.join("gmon.sum").exists());
    for flags in FLAG_SETS {
        assert_same(dir.path(), "prog", &["gmon.sum"], flags);
    }
    assert_same(dir.path(), "prog", &["g1.out", "gmon.sum", "g2.out"], &[]);
    // Our `merge` subcommand's output too.
    let m = ours(
        dir.path(),
        &[
            "merge",
            "--exe",
            "prog",
            "-o",
            "merged.out",
            "g1.out",
            "g2.out",
        ],
    );
    assert!(m.status.success(), "{}", String::from_utf8_lossy(&m.stderr));
    assert_same(dir.path(), "prog", &["merged.out"], &["-z"]);
}

/// Profiles written by our own runtime (linked in, and injected with LD_PRELOAD into a program
/// built without -pg) read the same in gprof and in `--gprof` mode.
#[test]
fn profiles_from_our_runtime() {
    let dir = TempDir::new("ourrt");
    let path = |shared: bool| {
        let mut args = vec!["runtime-path"];
        if shared {
            args.push("--shared");
        }
        let out = ours(dir.path(), &args);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap().trim_end().to_owned()
    };
    let (obj, so) = (path(false), path(true));
    let src = corpus("cycles.c");
    compile(
        dir.path(),
        "gcc",
        &["-O1", "-o", "linked", src.to_str().unwrap(), &obj],
    );
    compile(
        dir.path(),
        "gcc",
        &["-O1", "-o", "plain", src.to_str().unwrap()],
    );
    let run = |exe: &str, env: &[(&str, &str)], save: &str| {
        let _ = std::fs::remove_file(dir.join("gmon.out"));
        let mut cmd = std::process::Command::new(dir.join(exe));
        cmd.current_dir(dir.path()).env("PROFIL_HZ", "1000");
        for (k, v) in env {
            cmd.env(k, v);
        }
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        std::fs::rename(dir.join("gmon.out"), dir.join(save)).expect("the runtime wrote gmon.out");
    };
    run("linked", &[], "linked.gmon");
    run("plain", &[("LD_PRELOAD", &so)], "preload.gmon");
    for flags in FLAG_SETS {
        assert_same(dir.path(), "linked", &["linked.gmon"], flags);
        assert_same(dir.path(), "plain", &["preload.gmon"], flags);
    }
}
