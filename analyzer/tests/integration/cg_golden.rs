//! Golden files of the default report's call graph (text section and the JSON
//! `"call_graph"` object) for a profile written by hand: graph.c compiled without `-pg`, arcs
//! and samples placed by symbol, so that the output depends on neither the compiler's layout
//! nor on sampling. Re-bless with `PROFIL_BLESS=1` (see fixtures/callgraph/regenerate.sh).

use crate::cg_support;
use crate::golden;

use std::path::PathBuf;

use cg_support::*;

fn golden(name: &str) -> PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures/callgraph/golden")
        .join(name)
}

fn check_golden(name: &str, got: &str) {
    golden::assert_golden(&golden(name), got.as_bytes());
}

/// The profile: calls as graph.c makes them at scale 1 (fixed counts), a caller outside the
/// executable, a callee outside it, a zero-count arc; samples at fixed functions.
fn write_profile(dir: &TempDir) {
    let funcs = nm_functions(&dir.join("prog"));
    let addr = |name: &str| {
        funcs
            .iter()
            .find(|f| f.0 == name)
            .unwrap_or_else(|| panic!("no {name}"))
            .1
    };
    let calls: [(&str, &str, u32); 16] = [
        ("main", "fib", 40),
        ("fib", "fib", 875_600),
        ("main", "ping", 3000),
        ("ping", "pong", 45_000),
        ("pong", "ping", 45_000),
        ("ping", "spin", 48_000),
        ("pong", "spin", 45_000),
        ("main", "tri_a", 3000),
        ("tri_a", "tri_c", 30_000),
        ("tri_c", "tri_b", 30_000),
        ("tri_b", "tri_a", 30_000),
        ("tri_a", "spin", 33_000),
        ("main", "spin", 2000),
        ("by_value", "spin", 47_242),
        ("main", "sorter", 150),
        ("main", "leaf", 0),
    ];
    let samples: [(&str, u16); 6] = [
        ("spin", 270),
        ("ping", 10),
        ("pong", 5),
        ("fib", 7),
        ("tri_b", 3),
        ("main", 1),
    ];
    let low = funcs.iter().map(|f| f.1).min().unwrap() & !3;
    let high = (funcs.iter().map(|f| f.1).max().unwrap() + 64) & !3;
    let mut bins = vec![0u16; ((high - low) / 4) as usize];
    for (name, n) in samples {
        bins[((addr(name) + 4 - low) / 4) as usize] += n;
    }
    let mut g = GmonFile::new();
    g.hist(low, high, 100, &bins);
    for (from, to, count) in calls {
        g.arc(addr(from) + 8, addr(to), count);
    }
    g.arc(0x7fff_0000_0000, addr("by_value"), 6400); // qsort in libc
    g.arc(addr("main") + 12, 0x7fff_0000_1000, 9); // into a shared library
    g.write(&dir.join("gmon.out"));
}

#[test]
fn default_call_graph_golden() {
    let dir = TempDir::new("golden");
    compile_corpus(dir.path(), "gcc", "graph.c", &["-O0", "-g0"]);
    write_profile(&dir);
    let out = ours(dir.path(), &["prog", "gmon.out"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let graph = &text[text.find("\nCall graph\n").expect("call graph section") + 1..];
    check_golden("default-graph.txt", graph);
    let out = ours(dir.path(), &["--json", "prog", "gmon.out"]);
    assert!(out.status.success());
    let json = String::from_utf8(out.stdout).unwrap();
    // The whole document parses; the golden file holds the call-graph object.
    Json::parse(&json);
    let start = json.find("\"call_graph\": ").expect("call_graph key");
    let end = json.trim_end().rfind('}').unwrap();
    check_golden(
        "default-graph.json",
        &format!("{}\n", json[start..end].trim_end()),
    );
}
