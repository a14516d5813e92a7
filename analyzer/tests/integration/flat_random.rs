//! Random C call-graph programs (recursion and cycles included, deterministic seeds),
//! compiled, run and compared byte for byte with GNU gprof's `-b -p` output.
//!
//! `PROFIL_RANDOM_CASES=N` changes the number of programs (default 24);
//! `PROFIL_KEEP_TMP=1` keeps the generated programs for inspection.

use crate::flat_support;

use std::fmt::Write as _;

use flat_support::*;

/// xorshift64*: small, deterministic, good enough for test shapes.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

/// A C program with `n` functions calling each other under a global call budget, so that
/// any graph (self-recursion, mutual recursion, long cycles) terminates.
pub fn generate(seed: u64) -> (String, &'static str) {
    let mut r = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let n = 6 + r.below(30) as usize;
    let mut c = String::from("#include <stdio.h>\n#include <time.h>\nstatic volatile unsigned long sink;\nstatic long budget;\n");
    let statics: Vec<bool> = (0..n).map(|_| r.chance(30)).collect();
    for (i, &st) in statics.iter().enumerate() {
        let _ = writeln!(c, "{}void f{i}(int d);", if st { "static " } else { "" });
    }
    for (i, &st) in statics.iter().enumerate() {
        let heavy = r.chance(15);
        let work = 20 + r.below(if heavy { 6000 } else { 600 });
        let _ = writeln!(c, "{}void f{i}(int d) {{", if st { "static " } else { "" });
        let _ = writeln!(c, "    if (--budget < 0) return;");
        let _ = writeln!(c, "    unsigned long s = d;");
        let _ = writeln!(
            c,
            "    for (unsigned long k = 0; k < {work}ul; k++) s += k ^ (s >> 3);"
        );
        let _ = writeln!(c, "    sink += s;");
        let calls = r.below(4);
        for _ in 0..calls {
            // Mostly forward calls (a DAG), some backward or self calls (cycles).
            let j = if r.chance(25) {
                r.below(i as u64 + 1) as usize
            } else {
                i + 1 + r.below((n - i) as u64) as usize
            };
            if j < n {
                let times = 1 + r.below(3);
                let _ = writeln!(
                    c,
                    "    for (int t = 0; t < {times}; t++) if (d > 0) f{j}(d - 1);"
                );
            }
        }
        let _ = writeln!(c, "}}");
        if !st && r.chance(10) {
            let _ = writeln!(
                c,
                "void f{i}_alias(int d) __attribute__((alias(\"f{i}\")));"
            );
        }
    }
    // Rounds run until ~0.12 s of CPU time, enough samples for every shape of graph.
    let _ = writeln!(
        c,
        "int main(void) {{\n    for (int r = 0; r < 3 || clock() < CLOCKS_PER_SEC / 8; r++)\n        for (int i = 0; i < {n}; i++) {{\n            budget = 400;\n            switch (i) {{"
    );
    for i in 0..n {
        let _ = writeln!(c, "            case {i}: f{i}(8); break;");
    }
    let _ = writeln!(
        c,
        "            }}\n        }}\n    printf(\"%lu\\n\", sink);\n    return 0;\n}}"
    );
    let opt = ["-O0", "-O1", "-O2", "-O2"][r.below(4) as usize];
    (c, opt)
}

fn run_case(seed: u64) -> Result<(), String> {
    let dir = TempDir::new(&format!("rand{seed}"));
    let (src, opt) = generate(seed);
    std::fs::write(dir.join("prog.c"), &src).unwrap();
    // Some programs are linked statically (libc, IFUNCs and mcount inside the histogram) or
    // without PIE (absolute addresses).
    let link = match seed % 6 {
        0 => "-static",
        1 => "-no-pie",
        _ => "-pie",
    };
    compile(
        dir.path(),
        "gcc",
        &["-pg", opt, link, "-o", "prog", "prog.c"],
    );
    profile_run(dir.path(), "prog", &[], "gmon.out");
    let flag_sets: &[&[&str]] = if seed % 3 == 0 {
        &[&[], &["-z"], &["-a"]]
    } else {
        &[&[], &["-z"]]
    };
    for flags in flag_sets {
        let r = std::panic::catch_unwind(|| assert_same(dir.path(), "prog", &["gmon.out"], flags));
        if let Err(e) = r {
            let msg = e
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            return Err(format!(
                "seed {seed} ({opt} {link}, flags {flags:?}):\n{msg}"
            ));
        }
    }
    Ok(())
}

#[test]
fn random_programs_match_gprof() {
    let cases: u64 = std::env::var("PROFIL_RANDOM_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(24);
    let next = std::sync::atomic::AtomicU64::new(1);
    let failures = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| loop {
                let seed = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if seed > cases {
                    break;
                }
                if let Err(e) = run_case(seed) {
                    failures.lock().unwrap().push(e);
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    assert!(
        failures.is_empty(),
        "{} of {cases} programs differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn generator_is_deterministic_and_makes_cycles() {
    assert_eq!(generate(7).0, generate(7).0);
    assert_ne!(generate(7).0, generate(8).0);
    // Over a few seeds some function calls itself or an earlier one.
    let backward = (1..=10).any(|seed| {
        let (src, _) = generate(seed);
        src.lines()
            .filter(|l| l.starts_with("void f") || l.starts_with("static void f"))
            .count()
            > 0
            && src.split("void f").skip(1).any(|body| {
                let me: usize = body
                    .split('(')
                    .next()
                    .unwrap()
                    .parse()
                    .unwrap_or(usize::MAX);
                body.split("if (d > 0) f").skip(1).any(|call| {
                    call.split('(')
                        .next()
                        .unwrap()
                        .parse::<usize>()
                        .is_ok_and(|j| j <= me)
                })
            })
    });
    assert!(backward, "no seed produced a cycle");
}
