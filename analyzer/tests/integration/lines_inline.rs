//! `--inline`: samples go to the innermost inlined function. On C compiled with `gcc -O2 -g`
//! at test time, every chain (names and call sites) of a crafted one-byte-bin histogram
//! must be what binutils' `addr2line -f -i` says for those addresses; on a Rust program
//! (`rustc -O -g`, linked with `-pg`) the hot `#[inline(always)]` functions must come out
//! on top although they have no symbol of their own.

use crate::lines_support;

use std::collections::HashMap;
use std::path::Path;

use lines_support::*;
use object::{Object, ObjectSymbol};

fn base(p: &str) -> String {
    let p = p.split(" (").next().unwrap();
    p.rsplit('/').next().unwrap().to_owned()
}

/// `addr2line -a -f -i`: per address, (names outermost first, call sites of the inlined
/// steps as `file:line`), or None when it knows no function.
fn addr2line_chains(exe: &Path, addrs: &[u64]) -> Vec<Option<(Vec<String>, Vec<String>)>> {
    let text = run_addr2line(exe, &["-a", "-f", "-i", "-e"], addrs);
    let mut blocks: Vec<Vec<&str>> = Vec::new();
    for l in text.lines() {
        if l.starts_with("0x") {
            blocks.push(Vec::new());
        } else {
            blocks.last_mut().unwrap().push(l);
        }
    }
    assert_eq!(blocks.len(), addrs.len());
    blocks
        .into_iter()
        .map(|b| {
            // (name, location) pairs, innermost first.
            let pairs: Vec<(&str, &str)> = b.chunks(2).map(|c| (c[0], c[1])).collect();
            if pairs.is_empty() || pairs[0].0 == "??" {
                return None;
            }
            let names: Vec<String> = pairs.iter().rev().map(|p| p.0.to_owned()).collect();
            // The location printed with frame j+1 is where frame j was inlined.
            let sites: Vec<String> = pairs[1..].iter().rev().map(|p| base(p.1)).collect();
            Some((names, sites))
        })
        .collect()
}

/// Our `--inline --json` chains: (names, call sites) -> samples.
fn our_chains(dir: &Path, args: &[&str]) -> HashMap<(Vec<String>, Vec<String>), f64> {
    let mut a = vec!["--inline", "--json"];
    a.extend_from_slice(args);
    let doc: serde_json::Value = serde_json::from_str(&ours_ok(dir, &a)).expect("inline JSON");
    let list = |v: &serde_json::Value| -> Vec<String> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_str().unwrap().to_owned())
            .collect()
    };
    let mut m = HashMap::new();
    for c in doc["chains"].as_array().unwrap() {
        let samples = c["samples"].as_f64().unwrap();
        let sites = list(&c["call_sites"]).iter().map(|s| base(s)).collect();
        assert!(m.insert((list(&c["chain"]), sites), samples).is_none());
    }
    m
}

#[test]
fn chains_match_addr2line_on_inlined_c() {
    for opt in ["-O2", "-O3"] {
        let dir = TempDir::new("lines-inline");
        copy_fixtures(dir.path(), &["inlined.c", "helper.c"]);
        compile(
            dir.path(),
            "gcc",
            &[opt, "-g", "inlined.c", "helper.c", "-o", "prog"],
        );
        let exe = dir.join("prog");
        let count = |i: u64| 1 + ((i * 7 + 3) % 5) as u16;
        std::fs::write(dir.join("c.gmon"), crafted_gmon(&exe, 1, count)).unwrap();
        let (lo, size) = text_section(&exe);
        let addrs: Vec<u64> = (lo..lo + size).collect();
        // Padding between functions has no DWARF function: BFD names the preceding ELF
        // symbol, this report the gap. Compare inside functions (by `st_size`) only.
        let data = std::fs::read(&exe).unwrap();
        let obj = object::File::parse(&*data).unwrap();
        let funcs: Vec<(u64, u64)> = obj
            .symbols()
            .filter(|s| s.kind() == object::SymbolKind::Text && s.size() > 0)
            .map(|s| (s.address(), s.address() + s.size()))
            .collect();
        let inside = |a: u64| funcs.iter().any(|&(l, h)| l <= a && a < h);
        let mut want: HashMap<(Vec<String>, Vec<String>), f64> = HashMap::new();
        for (i, c) in addr2line_chains(&exe, &addrs).into_iter().enumerate() {
            if !inside(addrs[i]) {
                continue;
            }
            if let Some(k) = c {
                *want.entry(k).or_default() += f64::from(count(i as u64));
            }
        }
        let got = our_chains(dir.path(), &["prog", "c.gmon"]);
        let total: f64 = (0..size).map(|i| f64::from(count(i))).sum();
        let sum: f64 = got.values().sum();
        assert!(
            (sum - total).abs() < 1e-6,
            "{opt}: chains sum to {sum}, not {total}"
        );
        assert!(
            want.keys().any(|k| k.0.len() >= 3),
            "{opt}: no nested inlining to check: {want:?}"
        );
        for (k, w) in &want {
            assert_eq!(got.get(k), Some(w), "{opt}: chain {k:?}; ours: {got:?}");
        }
    }
}

#[test]
fn rust_inlined_functions_come_out_on_top() {
    let dir = TempDir::new("lines-inline-rs");
    compile_inlined_rs(dir.path());
    profile_run(dir.path(), "prog", &[], "run.gmon");
    let text = ours_ok(dir.path(), &["--inline", "--csv", "prog", "run.gmon"]);
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |n: &str| header.iter().position(|h| *h == n).unwrap();
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    let get = |name: &str, field: &str| -> f64 {
        rows.iter()
            .find(|r| r[col("function")] == name)
            .map(|r| r[col(field)].parse().unwrap())
            .unwrap_or_else(|| panic!("no row for {name}:\n{text}"))
    };
    let total: f64 = rows
        .iter()
        .map(|r| r[col("samples")].parse::<f64>().unwrap())
        .sum();
    assert!(total >= 20.0, "too few samples: {text}");
    // mix's own code and feed's: all of it inlined into run, which keeps (almost) nothing.
    let (mix, feed) = (
        get("inlined::mix", "samples"),
        get("inlined::Acc::feed", "samples"),
    );
    assert!(mix + feed >= 0.6 * total, "{text}");
    assert_eq!(get("inlined::mix", "inlined_samples"), mix, "{text}");
    assert!(
        get("inlined::Acc::feed", "inclusive_samples") >= mix + feed,
        "{text}"
    );
    assert!(
        get("inlined::run", "inclusive_samples") >= 0.9 * total,
        "{text}"
    );
    let run_self = rows
        .iter()
        .find(|r| r[col("function")] == "inlined::run")
        .map_or(0.0, |r| r[col("samples")].parse::<f64>().unwrap());
    assert!(run_self <= 0.2 * total, "{text}");
    let top = &rows[0][col("function")];
    assert!(
        top.starts_with("inlined::mix") || top.starts_with("inlined::Acc::feed"),
        "{text}"
    );
}
