//! `--gprof -b -l` against the installed GNU gprof 2.40 (`gprof -b -l`): byte for byte, on C
//! and C++ programs compiled with `gcc -g`/`g++ -g` at test time, with crafted histograms that
//! put samples on every line symbol (1-, 2- and 4-byte bins) and with real `-pg` runs (call
//! counts), with and without `-z`: the flat profile (`-p`), and the call graph and its index
//! (without `-p`, with `-q`/`-Q`/`-P`).

use crate::lines_support;

use lines_support::*;

/// Both outputs of `-b -p -l` for `exe` and `gmon` (relative to `dir`) with `flags`; they
/// must be equal.
fn same(dir: &TempDir, exe: &str, gmon: &str, flags: &[&str], what: &str) {
    let mut all = vec!["-p", "-l"];
    all.extend_from_slice(flags);
    same_as_gprof(dir, exe, gmon, &all, what);
}

/// Both outputs of `-b` with `flags` (which include `-l`) for `exe` and `gmon`; they must be
/// equal. Returns gprof's output.
fn same_as_gprof(dir: &TempDir, exe: &str, gmon: &str, flags: &[&str], what: &str) -> String {
    let mut gargs = vec!["-b"];
    gargs.extend_from_slice(flags);
    gargs.extend_from_slice(&[exe, gmon]);
    let want = gprof(dir.path(), &gargs);
    assert!(
        want.status.success(),
        "{what}: gprof failed: {}",
        String::from_utf8_lossy(&want.stderr)
    );
    let mut oargs = vec!["--gprof", "-b"];
    oargs.extend_from_slice(flags);
    oargs.extend_from_slice(&[gmon, exe]);
    let got = ours(dir.path(), &oargs);
    assert!(
        got.status.success(),
        "{what}: {}",
        String::from_utf8_lossy(&got.stderr)
    );
    assert!(
        want.stdout == got.stdout,
        "{what}: differs from gprof -b {flags:?}:\n{}",
        diff(&want.stdout, &got.stdout)
    );
    // Not vacuous: line symbols were printed.
    let text = String::from_utf8_lossy(&got.stdout).into_owned();
    assert!(text.contains(" @ "), "{what}: no line rows");
    text
}

fn crafted_cases(tool: &str, sources: &[&str], opts: &[&str]) {
    for opt in opts {
        let dir = TempDir::new("lines-gprof");
        copy_fixtures(dir.path(), sources);
        let mut args = vec![*opt, "-g"];
        args.extend_from_slice(sources);
        args.extend_from_slice(&["-o", "prog"]);
        compile(dir.path(), tool, &args);
        for width in [1u64, 2, 4] {
            let gmon = crafted_gmon(&dir.join("prog"), width, |i| 1 + ((i * 7 + 3) % 5) as u16);
            std::fs::write(dir.join("c.gmon"), gmon).unwrap();
            let what = format!("{sources:?} {opt}, {width}-byte bins");
            same(&dir, "prog", "c.gmon", &[], &what);
        }
        same(
            &dir,
            "prog",
            "c.gmon",
            &["-z"],
            &format!("{sources:?} {opt} -z"),
        );
        same(
            &dir,
            "prog",
            "c.gmon",
            &["-a"],
            &format!("{sources:?} {opt} -a"),
        );
    }
}

#[test]
fn c_two_loops_crafted() {
    crafted_cases("gcc", &["two_loops.c"], &["-O0", "-O2"]);
}

/// Inlined code: the line symbols take the inlined function's name, as BFD reports it.
#[test]
fn c_inlined_crafted() {
    crafted_cases("gcc", &["inlined.c", "helper.c"], &["-O0", "-O2", "-O3"]);
}

/// DWARF 5 line programs whose sequences never set the file register: BFD 2.40 names
/// them after file 0 (the unit's own file), not file 1 (here `<new>`).
#[test]
fn cxx_header_code_crafted() {
    crafted_cases("g++", &["headers.cc"], &["-O0"]);
}

/// A real run: call counts on the function symbols, time on the line symbols.
#[test]
fn c_inlined_real_run() {
    let dir = TempDir::new("lines-gprof-run");
    copy_fixtures(dir.path(), &["inlined.c", "helper.c"]);
    compile(
        dir.path(),
        "gcc",
        &["-O2", "-g", "-pg", "inlined.c", "helper.c", "-o", "prog"],
    );
    profile_run(dir.path(), "prog", &[], "run.gmon");
    same(&dir, "prog", "run.gmon", &[], "inlined.c -O2 -pg");
    same(&dir, "prog", "run.gmon", &["-z"], "inlined.c -O2 -pg -z");
    same(&dir, "prog", "run.gmon", &["-a"], "inlined.c -O2 -pg -a");
}

/// Without `-p`, and with `-q`/`-Q`/`-P`, line mode prints gprof's call graph and index too:
/// callers are line symbols, callees their functions, every name carries its
/// `(file:line @ addr)`, only function symbols get an entry (no line symbol, no cycle: they
/// keep their numbers), and the index names no file after static functions. On the call-graph
/// corpus (recursion, cycles, a callback called from libc) and on the inlining fixture.
#[test]
fn call_graph_in_line_mode() {
    let dir = TempDir::new("lines-gprof-q");
    copy_fixtures(dir.path(), &["inlined.c", "helper.c"]);
    let graph = fixtures_dir("callgraph/corpus/graph.c");
    std::fs::copy(&graph, dir.join("graph.c")).unwrap();
    compile(
        dir.path(),
        "gcc",
        &["-O0", "-g", "-pg", "graph.c", "-o", "graph"],
    );
    compile(
        dir.path(),
        "gcc",
        &["-O2", "-g", "-pg", "inlined.c", "helper.c", "-o", "prog"],
    );
    profile_run(dir.path(), "graph", &[], "graph.gmon");
    profile_run(dir.path(), "prog", &[], "prog.gmon");
    let flag_sets: [&[&str]; 8] = [
        &["-l"],
        &["-l", "-q"],
        &["-l", "-Q"],
        &["-l", "-P"],
        &["-l", "-p", "-q"],
        &["-l", "-q", "-z"],
        &["-l", "-z"],
        &["-l", "-a"],
    ];
    for flags in flag_sets {
        let text = same_as_gprof(&dir, "graph", "graph.gmon", flags, "graph.c -O0");
        if flags == ["-l", "-q"] {
            // The shapes this is meant to cover really are in gprof's output.
            assert!(text.contains("Index by function name"), "{text}");
            assert!(text.contains("<cycle 1>"), "{text}");
            // Callers are the line symbols of the call sites.
            assert!(text.contains(" main (graph.c:"), "{text}");
            assert!(!text.contains("as a whole>"), "{text}");
        }
        same_as_gprof(&dir, "prog", "prog.gmon", flags, "inlined.c -O2");
    }
}

/// Aliases (a weak alias, an IFUNC and its resolver): at the padding after such a function,
/// where a line row but no DWARF function covers the bytes, BFD names the line symbol after
/// the first of the aliases in `.symtab`, which gprof then prints as an extra row (`-z`).
#[test]
fn alias_names_at_function_padding() {
    let dir = TempDir::new("lines-gprof-alias");
    copy_fixtures(dir.path(), &["aliases.c"]);
    compile(
        dir.path(),
        "gcc",
        &["-O2", "-g", "-pg", "aliases.c", "-o", "prog"],
    );
    profile_run(dir.path(), "prog", &[], "run.gmon");
    let text = same_as_gprof(
        &dir,
        "prog",
        "run.gmon",
        &["-p", "-l", "-z"],
        "aliases.c -z",
    );
    // Not vacuous: the padding row of the weak alias is there.
    assert!(
        text.lines().filter(|l| l.contains(" weak_work (")).count() >= 2,
        "{text}"
    );
    same_as_gprof(&dir, "prog", "run.gmon", &["-l", "-z"], "aliases.c -l -z");
    same_as_gprof(&dir, "prog", "run.gmon", &["-p", "-l"], "aliases.c -p -l");
}

/// The same under LTO, where identical code folding merges a static function of another unit
/// (`twin_work`, or `twin_work.lto_priv.0` when the partitions are split) into `real_work`'s
/// aliases.
#[test]
fn lto_folded_aliases() {
    let dir = TempDir::new("lines-gprof-lto");
    copy_fixtures(dir.path(), &["aliases.c", "lto_twin.c"]);
    for partition in ["-flto-partition=balanced", "-flto-partition=max"] {
        compile(
            dir.path(),
            "gcc",
            &[
                "-O2",
                "-g",
                "-pg",
                "-flto",
                partition,
                "-DWITH_TWIN",
                "aliases.c",
                "lto_twin.c",
                "-o",
                "prog",
            ],
        );
        profile_run(dir.path(), "prog", &[], "run.gmon");
        let what = format!("aliases.c lto_twin.c -flto {partition}");
        // Not vacuous: the twin was folded into real_work.
        let funcs = nm_functions(&dir.join("prog"));
        let twin = funcs
            .iter()
            .find(|f| f.0.starts_with("twin_work"))
            .unwrap_or_else(|| panic!("{what}: no twin_work in {funcs:?}"));
        assert_eq!(twin.1, address_of(&funcs, "real_work"), "{what}");
        same_as_gprof(&dir, "prog", "run.gmon", &["-p", "-l", "-z"], &what);
        same_as_gprof(&dir, "prog", "run.gmon", &["-l", "-z"], &what);
    }
}

/// i386 PIC code keeps its jump tables' `.L` labels in `.symtab`. gprof never makes them
/// function symbols, but BFD counts them (untyped, size 0 taken as 1) when it names bytes no
/// DWARF function covers, so the padding after `sw` is a line symbol named `.L12` or the like.
/// Built without libc (none is installed for i386 here) and profiled by a crafted histogram.
#[test]
fn i386_jump_table_labels_name_padding() {
    let dir = TempDir::new("lines-gprof-i386");
    copy_fixtures(dir.path(), &["jumptable32.c"]);
    for pic in ["-fpic", "-fPIE"] {
        compile(
            dir.path(),
            "gcc",
            &[
                "-m32",
                "-g",
                "-O2",
                pic,
                "-ffreestanding",
                "-nostdlib",
                "-c",
                "jumptable32.c",
                "-o",
                "j.o",
            ],
        );
        compile(dir.path(), "ld", &["-m", "elf_i386", "-o", "prog", "j.o"]);
        let gmon = crafted_gmon(&dir.join("prog"), 4, |i| 1 + ((i * 7 + 3) % 5) as u16);
        std::fs::write(dir.join("c.gmon"), gmon).unwrap();
        let what = format!("jumptable32.c {pic}");
        let text = same_as_gprof(&dir, "prog", "c.gmon", &["-p", "-l", "-z"], &what);
        assert!(
            text.contains("\n") && text.contains(" .L"),
            "{what}: {text}"
        );
        same_as_gprof(&dir, "prog", "c.gmon", &["-l"], &what);
    }
}

/// Rust, optimized: inlined copies whose abstract function lives in another unit (core,
/// std), found through cross-unit references, with the names BFD gives them. The whole
/// standard library's code gets line symbols (over 10,000 rows).
#[test]
fn rust_inlined_crafted_and_real_run() {
    let dir = TempDir::new("lines-gprof-rs");
    compile_inlined_rs(dir.path());
    let gmon = crafted_gmon(&dir.join("prog"), 4, |i| 1 + ((i * 7 + 3) % 5) as u16);
    std::fs::write(dir.join("c.gmon"), gmon).unwrap();
    same(&dir, "prog", "c.gmon", &[], "inlined.rs, 4-byte bins");
    profile_run(dir.path(), "prog", &[], "run.gmon");
    same(&dir, "prog", "run.gmon", &[], "inlined.rs, real run");
}
