//! The default report's call graph (`profil-report PROG GMON`, and `"call_graph"` in
//! `--json`): checked against facts known independently of our code — call counts the corpus
//! program makes by construction, the cycles its source contains, gprof's equal-cost rule
//! recomputed from the JSON's own numbers — and the notes about arcs the graph cannot show.

use crate::cg_support;

use std::collections::HashMap;

use cg_support::*;

struct Profile {
    dir: TempDir,
}

fn graph_profile() -> Profile {
    let dir = TempDir::new("default");
    compile_corpus(dir.path(), "gcc", "graph.c", &["-pg", "-g0", "-O0"]);
    profile_run(dir.path(), "prog", &[], "gmon.out");
    Profile { dir }
}

/// Function ids by name, and the JSON graph.
fn graph_json(dir: &std::path::Path, args: &[&str]) -> (Json, HashMap<String, usize>) {
    let text = ours_ok(dir, args);
    let doc = Json::parse(&text);
    let g = doc.key("call_graph").clone();
    let ids = g
        .key("functions")
        .arr()
        .iter()
        .map(|f| (f.key("raw_name").str().to_owned(), f.key("id").u() as usize))
        .collect();
    (g, ids)
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1e-12)
}

#[test]
fn json_graph_of_the_corpus() {
    let p = graph_profile();
    let (g, ids) = graph_json(p.dir.path(), &["--json", "prog", "gmon.out"]);
    let funcs = g.key("functions").arr();
    let by_id = |id: u64| &funcs[id as usize - 1];
    for (i, f) in funcs.iter().enumerate() {
        assert_eq!(f.key("id").u() as usize, i + 1);
    }
    let arcs = g.key("arcs").arr();
    let arc = |from: &str, to: &str| {
        arcs.iter()
            .find(|a| {
                a.key("caller").u() as usize == ids[from] && a.key("callee").u() as usize == ids[to]
            })
            .unwrap_or_else(|| panic!("no arc {from} -> {to}"))
    };
    // Counts the program makes by construction (graph.c, scale 1).
    assert_eq!(arc("main", "fib").key("count").u(), 40);
    assert_eq!(by_id(ids["fib"] as u64).key("calls").u(), 40);
    // fib(20) makes 21890 recursive calls; 40 times.
    assert_eq!(by_id(ids["fib"] as u64).key("self_calls").u(), 40 * 21890);
    assert_eq!(arc("main", "sorter").key("count").u(), 150);
    assert_eq!(arc("site_c", "site_a").key("count").u(), 2000);
    assert_eq!(by_id(ids["site_a"] as u64).key("calls").u(), 4000);
    // Every call into a function is an arc from a known caller or counted as unknown.
    for f in funcs {
        let id = f.key("id").u();
        let known: u64 = arcs
            .iter()
            .filter(|a| a.key("callee").u() == id && a.key("caller").u() != id)
            .map(|a| a.key("count").u())
            .sum();
        assert_eq!(
            f.key("calls").u(),
            known + f.key("calls_from_unknown").u(),
            "{f:?}"
        );
    }
    // The three cycles of the source, by member names.
    let mut cycles: Vec<Vec<String>> = g
        .key("cycles")
        .arr()
        .iter()
        .map(|c| {
            let mut m: Vec<String> = c
                .key("members")
                .arr()
                .iter()
                .map(|id| by_id(id.u()).key("raw_name").str().to_owned())
                .collect();
            m.sort();
            m
        })
        .collect();
    cycles.sort();
    assert_eq!(
        cycles,
        [
            vec!["deep", "hub", "left", "right"],
            vec!["ping", "pong"],
            vec!["tri_a", "tri_b", "tri_c"],
        ]
    );
    assert!(arc("ping", "pong").key("within_cycle").bool());
    assert!(!arc("main", "ping").key("within_cycle").bool());
    // The equal-cost rule, recomputed: a caller outside the callee's cycle is charged
    // count / (calls into the callee, or into its cycle) of the callee's (or cycle's) time.
    let cycle_of = |num: u64| {
        g.key("cycles")
            .arr()
            .iter()
            .find(|c| c.key("number").u() == num)
            .unwrap()
    };
    let mut checked = 0;
    for a in arcs {
        if a.key("within_cycle").bool() {
            assert_eq!(a.key("self_seconds").num(), 0.0);
            continue;
        }
        let callee = by_id(a.key("callee").u());
        let (time, calls) = match callee.key("cycle") {
            Json::Number(n) => {
                let c = cycle_of(n.as_u64().expect("a cycle number"));
                (
                    c.key("self_seconds").num() + c.key("children_seconds").num(),
                    c.key("calls").u(),
                )
            }
            _ => (
                callee.key("self_seconds").num() + callee.key("children_seconds").num(),
                callee.key("calls").u(),
            ),
        };
        let share = a.key("self_seconds").num() + a.key("children_seconds").num();
        let want = time * a.key("count").u() as f64 / calls as f64;
        assert!(close(share, want), "{a:?}: {share} != {want}");
        checked += 1;
    }
    assert!(checked > 20);
    // A function's children time is the sum of what its callees charge it.
    let main = by_id(ids["main"] as u64);
    let charged: f64 = arcs
        .iter()
        .filter(|a| a.key("caller").u() as usize == ids["main"])
        .map(|a| a.key("self_seconds").num() + a.key("children_seconds").num())
        .sum();
    assert!(close(main.key("children_seconds").num(), charged));
    assert!(g
        .key("estimate_note")
        .str()
        .contains("as if every call cost"));
    assert_eq!(g.key("unplaced_arcs").key("arcs").u(), 0);
}

#[test]
fn text_graph_states_the_estimate_and_names_cycles() {
    let p = graph_profile();
    let text = ours_ok(p.dir.path(), &["prog", "gmon.out"]);
    let graph = &text[text.find("\nCall graph\n").expect("a call graph section")..];
    assert!(graph.contains("Children time is an estimate"), "{graph}");
    assert!(graph.contains("as if every call cost the same"), "{graph}");
    for c in 1..=3 {
        assert!(graph.contains(&format!("<cycle {c}>: ")), "{graph}");
    }
    assert!(
        graph.contains("recursion through ping, pong")
            || graph.contains("recursion through pong, ping")
    );
    // fib's direct recursion and by_value's missing callers are spelled out.
    assert!(graph.contains("(+875600 direct recursive)"), "{graph}");
    let by_value = &graph[graph.find("\nby_value [").unwrap()..];
    assert!(by_value
        .lines()
        .nth(2)
        .unwrap()
        .contains("no recorded caller"));
}

#[test]
fn cxx_names_are_demangled() {
    let dir = TempDir::new("default-cxx");
    compile_corpus(dir.path(), "g++", "shapes.cpp", &["-pg", "-g0", "-O2"]);
    profile_run(dir.path(), "prog", &[], "gmon.out");
    let text = ours_ok(dir.path(), &["prog", "gmon.out"]);
    let graph = &text[text.find("\nCall graph\n").unwrap()..];
    assert!(
        graph.contains("geo::measure(geo::Shape const&, int) ["),
        "{graph}"
    );
    assert!(!graph.contains("_ZN3geo"), "{graph}");
}

/// Unknown callers, callees outside every function, zero counts and a missing histogram are
/// explained, not dropped.
#[test]
fn arcs_the_graph_cannot_show_are_explained() {
    let dir = TempDir::new("default-bad");
    compile_corpus(dir.path(), "gcc", "graph.c", &["-g0", "-O0"]);
    let funcs = nm_functions(&dir.join("prog"));
    let addr = |name: &str| address_of(&funcs, name);
    let (main, fib, leaf, spin) = (addr("main"), addr("fib"), addr("leaf"), addr("spin"));
    GmonFile::new()
        .arc(main + 4, fib, 10)
        .arc(0x7fff_0000_0000, fib, 5) // caller in a shared library
        .arc(main + 8, 0x7fff_0000_1000, 7) // callee outside the executable
        .arc(main + 12, leaf, 0) // zero count
        .arc(fib + 4, spin, 3)
        .write(&dir.join("arcs.out"));
    let text = ours_ok(dir.path(), &["prog", "arcs.out"]);
    let graph = &text[text.find("\nCall graph\n").expect("call graph")..];
    assert!(graph.contains("no histogram"), "{graph}");
    assert!(
        graph.contains("5 calls came from code outside the known functions"),
        "{graph}"
    );
    assert!(
        graph.contains("5/15") && graph.contains("<callers outside known functions>"),
        "{graph}"
    );
    assert!(
        graph.contains("1 arcs (7 calls) lead to addresses outside every function"),
        "{graph}"
    );
    assert!(graph.contains("1 arcs have a zero count"), "{graph}");
    let (g, ids) = graph_json(dir.path(), &["--json", "prog", "arcs.out"]);
    assert_eq!(g.key("unplaced_arcs").key("arcs").u(), 1);
    assert_eq!(g.key("unplaced_arcs").key("calls").u(), 7);
    assert_eq!(g.key("zero_count_arcs").u(), 1);
    let fib_f = &g.key("functions").arr()[ids["fib"] - 1];
    assert_eq!(fib_f.key("calls").u(), 15);
    assert_eq!(fib_f.key("calls_from_unknown").u(), 5);
    assert_eq!(g.key("notes").arr().len(), 4);
}

/// A histogram-only profile (no arcs) has no call-graph section, and an empty graph in JSON.
#[test]
fn no_arcs_no_graph() {
    let dir = TempDir::new("default-noarcs");
    compile_corpus(dir.path(), "gcc", "graph.c", &["-g0", "-O0"]);
    let funcs = nm_functions(&dir.join("prog"));
    let main = address_of(&funcs, "main");
    GmonFile::new()
        .hist(main, main + 64, 100, &[2; 16])
        .write(&dir.join("hist.out"));
    let text = ours_ok(dir.path(), &["prog", "hist.out"]);
    assert!(!text.contains("Call graph"), "{text}");
    let (g, _) = graph_json(dir.path(), &["--json", "prog", "hist.out"]);
    assert!(g.key("functions").arr().is_empty());
    assert!(g.key("arcs").arr().is_empty());
}
