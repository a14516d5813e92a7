//! `profil-report --gprof -b [-q] ...` against the installed GNU gprof 2.40 on the corpus of
//! `fixtures/callgraph/corpus`, compiled with `gcc -pg` and run at test time: recursion,
//! mutual recursion of two and three functions, nested cycles, a function called from many
//! sites, a callback whose caller is in libc, PIE / non-PIE / static binaries, C++ names,
//! several gmon files, and arcs no symbol contains.

use crate::cg_support;

use cg_support::*;

/// Compile graph.c with `cflags`, run it once, and compare under every flag set.
fn graph_case(tag: &str, cflags: &[&str]) -> (TempDir, Vec<u8>) {
    let dir = TempDir::new(tag);
    let src = corpus("graph.c");
    let mut args = vec!["-pg", "-g0", "-o", "prog"];
    args.extend_from_slice(cflags);
    args.push(src.to_str().unwrap());
    compile(dir.path(), "gcc", &args);
    profile_run(dir.path(), "prog", &[], "gmon.out");
    let mut graph = Vec::new();
    for flags in FLAG_SETS {
        let out = assert_same(dir.path(), "prog", &["gmon.out"], flags);
        if flags == ["-q"] {
            graph = out;
        }
    }
    (dir, graph)
}

/// The shapes the corpus is meant to produce really are in gprof's output, so that the
/// comparison above covers them. At -O2 sibling calls (`return pong(n - 1)` becomes a jump)
/// make mcount credit the caller's caller, which breaks some cycles: hence `cycles`.
fn assert_shapes(graph: &[u8], cycles: usize) {
    let text = String::from_utf8_lossy(graph);
    for k in 1..=cycles {
        let want = format!("<cycle {k} as a whole>");
        assert!(
            text.contains(&want),
            "no {want:?} in gprof's output:\n{text}"
        );
    }
    for want in ["<spontaneous>", " fib [", "Index by function name"] {
        assert!(
            text.contains(want),
            "no {want:?} in gprof's output:\n{text}"
        );
    }
    // fib's direct recursion is printed as "calls+self".
    assert!(
        text.lines()
            .any(|l| l.starts_with('[') && l.contains('+') && l.contains(" fib [")),
        "no n+self line for fib:\n{text}"
    );
}

#[test]
fn graph_pie_o0() {
    let (_dir, graph) = graph_case("pie-o0", &["-O0"]);
    assert_shapes(&graph, 3);
}

#[test]
fn graph_no_pie_o2() {
    let (_dir, graph) = graph_case("nopie-o2", &["-O2", "-no-pie"]);
    assert_shapes(&graph, 1);
}

/// With DWARF, gprof names the source file of static functions in the index.
#[test]
fn graph_debug_info() {
    let (_dir, graph) = graph_case("debug", &["-O0", "-g"]);
    assert_shapes(&graph, 3);
    let text = String::from_utf8_lossy(&graph);
    assert!(text.contains(" tri_b (graph.c)"), "{text}");
}

/// The file gprof names is the line table's at the function's address: for helper() that is
/// the header whose inline function starts it (inl.h), not the file declaring it.
#[test]
fn source_files_from_the_line_table() {
    let dir = TempDir::new("inline");
    let (lib, main) = (corpus("inl_lib.c"), corpus("inl_main.c"));
    let inc = format!("-I{}", corpus("").display());
    compile(
        dir.path(),
        "gcc",
        &[
            "-O2",
            "-g",
            &inc,
            "-c",
            "-o",
            "lib.o",
            lib.to_str().unwrap(),
        ],
    );
    compile(
        dir.path(),
        "gcc",
        &[
            "-pg",
            "-O0",
            "-g",
            "-o",
            "prog",
            main.to_str().unwrap(),
            "lib.o",
        ],
    );
    profile_run(dir.path(), "prog", &[], "gmon.out");
    let out = assert_same(dir.path(), "prog", &["gmon.out"], &["-z"]);
    let text = String::from_utf8_lossy(&out);
    assert!(text.contains(" helper (inl.h)"), "{text}");
    assert!(text.contains(" local_twice (inl_main.c)"), "{text}");
    assert_same(dir.path(), "prog", &["gmon.out"], &["-q"]);
}

/// gprof's index names the file BFD 2.40's line reader gives at a static function's address,
/// and that reader starts every line sequence of a DWARF 5 unit with file 0 (the unit's primary
/// file) until the program sets the file register, which gas never sets to 1, its initial
/// value. So a static function from file 1 (the first file with code: a header or an
/// `#include`d `.c` file) that starts a sequence is named after the including file, or after
/// `<artificial>`, the unit of an LTO build. With `-ffunction-sections` every function starts a
/// sequence.
fn source_file_case(tag: &str, cflags: &[&str], want: &[&str]) {
    let dir = TempDir::new(tag);
    let mut flags = vec!["-pg", "-g"];
    flags.extend_from_slice(cflags);
    compile_corpus(dir.path(), "gcc", "srcfile_main.c", &flags);
    profile_run(dir.path(), "prog", &[], "gmon.out");
    let mut index = Vec::new();
    for flags in FLAG_SETS {
        let out = assert_same(dir.path(), "prog", &["gmon.out"], flags);
        if flags == ["-q"] {
            index = out;
        }
    }
    for flags in [&["-P"][..], &["-q", "-P"], &["-p", "-q"]] {
        assert_same(dir.path(), "prog", &["gmon.out"], flags);
    }
    let text = String::from_utf8_lossy(&index);
    for w in want {
        assert!(text.contains(w), "no {w:?} in gprof's output:\n{text}");
    }
}

#[test]
fn source_files_of_header_and_included_functions() {
    source_file_case(
        "srcfile-sections",
        &["-O0", "-ffunction-sections"],
        &[
            " header_work (srcfile_main.c)",
            " included_work (srcfile_included.c)",
        ],
    );
    source_file_case(
        "srcfile-included",
        &["-O0", "-DINCLUDED_FIRST"],
        &[
            " header_work (srcfile_header.h)",
            " included_work (srcfile_main.c)",
        ],
    );
}

#[test]
fn source_files_under_lto() {
    source_file_case(
        "srcfile-lto",
        &["-O1", "-flto", "-ffunction-sections"],
        &[" header_work (<artificial>)", " own_work (srcfile_main.c)"],
    );
}

/// A static binary: libc's functions are in the symbol table and mcount itself is in the
/// histogram range (excluded from the graph, listed in the index with its index in
/// parentheses).
#[test]
fn graph_static() {
    let (_dir, graph) = graph_case("static", &["-O2", "-static"]);
    assert_shapes(&graph, 1);
}

/// Several gmon files: arcs and histograms are summed in file order before anything is
/// assembled; the same file twice doubles every count.
#[test]
fn several_files() {
    let dir = TempDir::new("multi");
    compile_corpus(dir.path(), "gcc", "graph.c", &["-pg", "-g0", "-O1"]);
    profile_run(dir.path(), "prog", &["1"], "g1.out");
    profile_run(dir.path(), "prog", &["2"], "g2.out");
    for flags in [
        &["-q"][..],
        &[],
        &["-z"],
        &["-p", "-q"],
        &["-P"],
        &["-Q", "-z"],
    ] {
        assert_same(dir.path(), "prog", &["g1.out", "g2.out"], flags);
        assert_same(dir.path(), "prog", &["g2.out", "g1.out"], flags);
    }
    let twice = assert_same(dir.path(), "prog", &["g1.out", "g1.out"], &["-q"]);
    assert!(String::from_utf8_lossy(&twice).contains("6000/6000"));
}

/// C++: demangled names in parents/children lines and in the index (whose column layout
/// depends on the printed length).
#[test]
fn cxx_names() {
    let dir = TempDir::new("cxx");
    compile_corpus(dir.path(), "g++", "shapes.cpp", &["-pg", "-g0", "-O2"]);
    profile_run(dir.path(), "prog", &[], "gmon.out");
    let out = assert_same(dir.path(), "prog", &["gmon.out"], &["-q"]);
    assert!(String::from_utf8_lossy(&out).contains("geo::measure(geo::Shape const&, int)"));
    for flags in [&[][..], &["-q", "-z"], &["-a"]] {
        assert_same(dir.path(), "prog", &["gmon.out"], flags);
    }
}

/// Arcs gprof cannot place: a caller below the first symbol or past the last one, a callee
/// outside every symbol, a callee inside a function body, and zero counts. gprof drops the
/// first kinds, moves the callee to its function, and keeps zero-count arcs (they print as
/// 0/N and change nothing else); so must we.
#[test]
fn arcs_outside_symbols() {
    let dir = TempDir::new("outside");
    compile_corpus(dir.path(), "gcc", "graph.c", &["-pg", "-g0", "-O0"]);
    let real = profile_run(dir.path(), "prog", &[], "real.out");
    let funcs = nm_functions(&dir.join("prog"));
    let addr = |name: &str| address_of(&funcs, name);
    let (spin, main, fib, leaf) = (addr("spin"), addr("main"), addr("fib"), addr("leaf"));
    let etext = addr("etext");
    let mut extra = GmonFile::new();
    extra
        .arc(0x10, spin, 7) // caller below the first symbol
        .arc(0x7fff_0000_0000, fib, 9) // caller in a shared library
        .arc(main + 4, 0x7fff_0000_1000, 11) // callee outside the executable
        .arc(main + 8, leaf + 3, 5) // callee address inside leaf's body
        .arc(fib + 4, leaf, 0) // a zero-count arc
        .arc(leaf + 2, main, 0) // a zero-count arc closing a cycle
        .arc(main + 16, etext, 3) // callee is a label (not STT_FUNC): moved back
        .arc(etext + 1, fib, 2); // caller past the last function, inside etext's range
    let mut bytes = std::fs::read(&real).unwrap();
    bytes.extend_from_slice(&extra.0[20..]);
    std::fs::write(dir.join("mixed.out"), &bytes).unwrap();
    extra.write(&dir.join("arcs-only.out"));
    for flags in FLAG_SETS {
        assert_same(dir.path(), "prog", &["mixed.out"], flags);
    }
    // Arcs without a histogram: gprof prints the call graph with hz = 0 (-nan columns).
    let out = assert_same(dir.path(), "prog", &["arcs-only.out"], &[]);
    assert!(String::from_utf8_lossy(&out).contains("-nan"));
    assert_same(dir.path(), "prog", &["arcs-only.out"], &["-q", "-z"]);
    // Summed with the real profile, in both orders.
    assert_same(dir.path(), "prog", &["arcs-only.out", "real.out"], &[]);
    assert_same(dir.path(), "prog", &["real.out", "arcs-only.out"], &["-q"]);
}

/// Asking for a section the files cannot give is gprof's fatal error, with status 1; ours
/// names the file and exits with gprof's status, alone or with the other section asked for.
#[test]
fn missing_sections() {
    let dir = TempDir::new("missing");
    compile_corpus(dir.path(), "gcc", "graph.c", &["-g0", "-O0"]);
    let funcs = nm_functions(&dir.join("prog"));
    let main = address_of(&funcs, "main");
    GmonFile::new()
        .hist(main, main + 64, 100, &[1; 16])
        .write(&dir.join("hist.out"));
    GmonFile::new()
        .arc(main + 4, main, 1)
        .write(&dir.join("arcs.out"));
    for (file, flags, what) in [
        ("hist.out", &["-q"][..], "missing call-graph data"),
        ("hist.out", &["-q", "-z"][..], "missing call-graph data"),
        ("hist.out", &["-p", "-q"][..], "missing call-graph data"),
        ("arcs.out", &["-p"][..], "missing histogram"),
        ("arcs.out", &["-p", "-q"][..], "missing histogram"),
    ] {
        let mut args = vec!["-b"];
        args.extend_from_slice(flags);
        let g = gprof(dir.path(), &[&args[..], &["prog", file]].concat());
        assert!(String::from_utf8_lossy(&g.stderr).contains(what));
        let o = ours(
            dir.path(),
            &[&["--gprof"], &args[..], &["prog", file]].concat(),
        );
        assert_eq!(o.status.code(), g.status.code(), "{flags:?} {file}");
        assert_eq!(o.status.code(), Some(1));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(what) && err.contains(file), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert_eq!(o.stdout, g.stdout);
        assert!(o.stdout.is_empty());
    }
    // Without -p/-q, each file gives what it has.
    assert_same(dir.path(), "prog", &["hist.out"], &[]);
    assert_same(dir.path(), "prog", &["arcs.out"], &[]);
    assert_same(dir.path(), "prog", &["hist.out"], &["-P"]);
    assert_same(dir.path(), "prog", &["arcs.out"], &["-Q"]);
}
