//! `--lines` on C programs compiled with `gcc -g` at test time: every sample of a crafted
//! histogram lands on the line binutils' `addr2line` names for its address, and a real
//! `-pg` run of two hot loops splits its time between their lines as the work is split.

use crate::lines_support;

use std::collections::HashMap;
use std::path::Path;

use lines_support::*;

/// Split one CSV record (RFC 4180 quotes).
fn csv_split(line: &str) -> Vec<String> {
    let (mut out, mut cur, mut quoted, mut chars) =
        (Vec::new(), String::new(), false, line.chars().peekable());
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                cur.push('"');
                chars.next();
            }
            ('"', _) => quoted = !quoted,
            (',', false) => out.push(std::mem::take(&mut cur)),
            (c, _) => cur.push(c),
        }
    }
    out.push(cur);
    out
}

/// `--lines --csv` rows: (file basename or None, line or None, function, samples).
fn line_rows(dir: &Path, args: &[&str]) -> Vec<(Option<String>, Option<u64>, String, f64)> {
    let mut a = vec!["--lines", "--csv"];
    a.extend_from_slice(args);
    let text = ours_ok(dir, &a);
    let mut lines = text.lines();
    let header = csv_split(lines.next().unwrap());
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let (cf, cl, cfn, cs) = (col("file"), col("line"), col("function"), col("samples"));
    lines
        .map(|l| {
            let f = csv_split(l);
            let base = |p: &str| p.rsplit('/').next().unwrap().to_owned();
            (
                (!f[cf].is_empty()).then(|| base(&f[cf])),
                (!f[cl].is_empty()).then(|| f[cl].parse().unwrap()),
                f[cfn].clone(),
                f[cs].parse().unwrap(),
            )
        })
        .collect()
}

/// Answers of `addr2line -e exe` for each address: Some((basename, line)) or None for `??`.
fn addr2line(exe: &Path, addrs: &[u64]) -> Vec<Option<(String, u64)>> {
    let text = run_addr2line(exe, &["-e"], addrs);
    let answers: Vec<Option<(String, u64)>> = text
        .lines()
        .map(|l| {
            // "path:line" or "path:line (discriminator N)" or "??:0" / "??:?"
            let l = l.split(" (").next().unwrap();
            let (file, line) = l.rsplit_once(':').unwrap();
            let line: Option<u64> = line.parse().ok();
            if file == "??" {
                return None;
            }
            Some((file.rsplit('/').next().unwrap().to_owned(), line?))
        })
        .collect();
    assert_eq!(answers.len(), addrs.len(), "addr2line output:\n{text}");
    answers
}

/// One-byte bins over all of `.text` with varied counts: no bin straddles two lines, so
/// each line's samples must equal exactly the sum over the addresses addr2line puts on it.
#[test]
fn every_sample_lands_on_the_line_addr2line_names() {
    for opt in ["-O0", "-O2"] {
        let dir = TempDir::new("lines-a2l");
        std::fs::copy(fixture("two_loops.c"), dir.join("two_loops.c")).unwrap();
        compile(dir.path(), "gcc", &[opt, "-g", "two_loops.c", "-o", "prog"]);
        let exe = dir.join("prog");
        let (lo, size) = text_section(&exe);
        let count = |i: u64| ((i * 7 + 3) % 5) as u16;
        // One-byte bins over `.text`: bin i is address lo + i.
        std::fs::write(dir.join("bytes.gmon"), crafted_gmon(&exe, 1, count)).unwrap();

        let addrs: Vec<u64> = (lo..lo + size).collect();
        let mut want: HashMap<(String, u64), f64> = HashMap::new();
        let mut want_unknown = 0.0;
        for (i, a) in addr2line(&exe, &addrs).into_iter().enumerate() {
            let c = f64::from(count(i as u64));
            match a {
                Some(k) => *want.entry(k).or_default() += c,
                None => want_unknown += c,
            }
        }
        want.retain(|_, v| *v > 0.0);
        let rows = line_rows(dir.path(), &["prog", "bytes.gmon"]);
        let mut got: HashMap<(String, u64), f64> = HashMap::new();
        let mut got_unknown = 0.0;
        for (file, line, _, s) in &rows {
            match (file, line) {
                (Some(f), Some(l)) => {
                    assert!(
                        got.insert((f.clone(), *l), *s).is_none(),
                        "{f}:{l} printed twice"
                    );
                }
                _ => got_unknown += s,
            }
        }
        assert_eq!(got, want, "{opt}: per-line samples differ from addr2line's");
        assert_eq!(got_unknown, want_unknown, "{opt}: samples without a line");
        // The hot loops are lines of `work`, whoever else shares them.
        let l1 = line_of("two_loops.c", "LOOP_ONE");
        let row = rows
            .iter()
            .find(|r| r.1 == Some(l1))
            .expect("a row for the first loop");
        assert_eq!(row.2, "work", "{opt}: {row:?}");
    }
}

/// A real `-pg` run: the second loop does three times the first one's work.
#[test]
fn time_splits_between_the_two_hot_loops() {
    let dir = TempDir::new("lines-run");
    std::fs::copy(fixture("two_loops.c"), dir.join("two_loops.c")).unwrap();
    compile(
        dir.path(),
        "gcc",
        &["-O1", "-g", "-pg", "two_loops.c", "-o", "prog"],
    );
    profile_run(dir.path(), "prog", &[], "run.gmon");
    let rows = line_rows(dir.path(), &["prog", "run.gmon"]);
    let total: f64 = rows.iter().map(|r| r.3).sum();
    let at = |marker: &str| {
        let l = line_of("two_loops.c", marker);
        rows.iter()
            .filter(|r| r.1 == Some(l) && r.0.as_deref() == Some("two_loops.c"))
            .map(|r| r.3)
            .sum::<f64>()
    };
    let (one, three) = (at("LOOP_ONE"), at("LOOP_THREE"));
    assert!(
        total >= 20.0,
        "too few samples ({total}) to judge: {rows:?}"
    );
    assert!(
        one + three >= 0.85 * total,
        "the loops hold {one} + {three} of {total} samples: {rows:?}"
    );
    let ratio = three / one.max(1.0);
    assert!(
        (1.5..=6.0).contains(&ratio),
        "loop three / loop one = {ratio} (expected about 3): {rows:?}"
    );
    // The heaviest row is the second loop.
    assert_eq!(rows[0].1, Some(line_of("two_loops.c", "LOOP_THREE")));
}

/// `--json` carries the same rows as `--csv`, and the rows sum to the total.
#[test]
fn json_and_csv_agree() {
    let dir = TempDir::new("lines-json");
    std::fs::copy(fixture("two_loops.c"), dir.join("two_loops.c")).unwrap();
    compile(
        dir.path(),
        "gcc",
        &["-O2", "-g", "two_loops.c", "-o", "prog"],
    );
    let gmon = crafted_gmon(&dir.join("prog"), 2, |i| (i % 3) as u16);
    std::fs::write(dir.join("c.gmon"), gmon).unwrap();
    let csv = line_rows(dir.path(), &["prog", "c.gmon"]);
    let out = ours(dir.path(), &["--lines", "--json", "prog", "c.gmon"]);
    assert!(out.status.success());
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("line JSON");
    let total = doc["total_samples"].as_f64().unwrap();
    let json: Vec<(Option<u64>, f64)> = doc["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["line"].as_u64(), r["samples"].as_f64().unwrap()))
        .collect();
    assert_eq!(json.len(), csv.len());
    for (j, c) in json.iter().zip(&csv) {
        assert_eq!((j.0, j.1), (c.1, c.3));
    }
    let sum: f64 = json.iter().map(|r| r.1).sum();
    assert!(
        (sum - total).abs() < 1e-6 && total > 0.0,
        "{sum} vs {total}"
    );
}
