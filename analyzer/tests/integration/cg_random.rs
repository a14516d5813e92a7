//! Random call graphs against GNU gprof: one generated C program with many functions (names
//! of many lengths, some static), compiled once; then, per seed, a gmon file written by hand
//! with random arcs between those functions (back edges make cycles, nested cycles and
//! self-recursion; duplicate arcs, zero counts, callers inside function bodies) and a
//! random histogram, sometimes none, sometimes split over two files, sometimes in the 4.4BSD
//! format. `profil-report --gprof -b ...` must print exactly what `gprof -b ...` prints.
//!
//! `PROFIL_CG_RANDOM_CASES=N` changes the number of seeds (default 60);
//! `PROFIL_KEEP_TMP=1` keeps the generated files.

use crate::cg_support;

use std::fmt::Write as _;

use cg_support::*;

const FUNCS: usize = 48;

/// A C file with `FUNCS` functions of different sizes and name lengths, 30 % of them static.
fn program(r: &mut Rng) -> String {
    let mut c = String::from("static volatile int sink;\n");
    let mut names = Vec::new();
    for i in 0..FUNCS {
        let stem = "abcdefghijklmnopqrstuvwxyz";
        let len = r.below(30) as usize;
        let name = format!("f{i}_{}", &stem.repeat(2)[..len]);
        let is_static = r.chance(30);
        let body = 1 + r.below(12);
        let _ = writeln!(
            c,
            "{}__attribute__((noinline, used)) void {name}(void) {{",
            if is_static { "static " } else { "" }
        );
        for k in 0..body {
            let _ = writeln!(c, "    sink += {k};");
        }
        c += "}\n";
        names.push(name);
    }
    c += "int main(void) {\n";
    for n in &names {
        let _ = writeln!(c, "    {n}();");
    }
    c += "    return 0;\n}\n";
    c
}

/// (name, start, end) of each function of the generated program, by address.
fn functions(exe: &std::path::Path) -> Vec<(String, u64, u64)> {
    let mut f: Vec<(String, u64, bool)> = nm_functions(exe)
        .into_iter()
        .filter(|(n, _, _)| n == "main" || n.starts_with('f'))
        .collect();
    f.sort_by_key(|x| x.1);
    let ends: Vec<u64> = f.iter().skip(1).map(|x| x.1).collect();
    f.into_iter()
        .zip(ends)
        .map(|((n, a, _), e)| (n, a, e))
        .collect()
}

/// One random profile for `funcs`, as one or two files (`wide`: 64-bit addresses).
fn profile(r: &mut Rng, funcs: &[(String, u64, u64)], wide: bool) -> Vec<GmonFile> {
    let n = funcs.len() as u64;
    // The functions taking part: a random window, so unrelated ones stay untouched.
    let first = r.below(n / 2) as usize;
    let used = &funcs[first..first + 3 + r.below(n / 2) as usize];
    let k = used.len() as u64;
    let mut arcs = Vec::new();
    for _ in 0..(k + r.below(3 * k)) {
        let p = r.below(k) as usize;
        let c = if r.chance(30) {
            r.below(p as u64 + 1) as usize // back edge or self-call: cycles
        } else {
            r.below(k) as usize
        };
        let (_, pa, pe) = &used[p];
        let from = pa + r.below(pe - pa);
        let (_, ca, ce) = &used[c];
        let to = if r.chance(10) {
            ca + r.below(ce - ca)
        } else {
            *ca
        };
        let count = match r.below(20) {
            0 => 0,
            1..=9 => 1 + r.below(9),
            10..=17 => 1 + r.below(5000),
            _ => 1 + r.below(3_000_000),
        } as u32;
        arcs.push((from, to, count));
        if r.chance(10) {
            arcs.push((from, to, count / 2)); // the same arc again: summed
        }
    }
    // The histogram: over all functions, 4-byte bins (exact) or an odd bin count (gprof's
    // fractional scale), few samples so that many times tie.
    let low = funcs[0].1 & !3;
    let high = (funcs[funcs.len() - 1].2 + 3) & !3;
    let nbins = if r.chance(50) {
        (high - low) / 4
    } else {
        (high - low) / 4 - 1 - r.below(5)
    } as usize;
    let mut bins = vec![0u16; nbins];
    for _ in 0..r.below(4 * k) {
        let i = r.below(nbins as u64) as usize;
        let most = if r.chance(10) { 500 } else { 3 };
        bins[i] = bins[i].saturating_add(1 + r.below(most) as u16);
    }
    let rate = if r.chance(80) { 100 } else { 1000 };
    if wide && r.chance(12) {
        // 4.4BSD: one histogram, arcs with 64-bit counts (gprof sees a call graph even
        // when there are no arcs).
        let arcs: Vec<(u64, u64, u64)> = arcs
            .into_iter()
            .map(|(f, t, c)| (f, t, u64::from(c)))
            .collect();
        return vec![GmonFile::bsd44(low, high, rate, &bins, &arcs)];
    }
    let with_hist = !r.chance(15);
    let split = r.chance(25);
    let make = || {
        if wide {
            GmonFile::new()
        } else {
            GmonFile::new32()
        }
    };
    let mut files = vec![make()];
    if split {
        files.push(make());
    }
    if with_hist {
        files[0].hist(low, high, rate, &bins);
        if split {
            files[1].hist(low, high, rate, &bins);
        }
    }
    for (i, (from, to, count)) in arcs.into_iter().enumerate() {
        let f = if split { i % 2 } else { 0 };
        files[f].arc(from, to, count);
    }
    files
}

/// Write the files of one seed into `dir` as `s<seed>-<i>.out`; returns their names.
fn write_profiles(dir: &TempDir, seed: u64, files: &[GmonFile]) -> Vec<String> {
    let names: Vec<String> = (0..files.len())
        .map(|i| format!("s{seed}-{i}.out"))
        .collect();
    for (f, name) in files.iter().zip(&names) {
        f.write(&dir.join(name));
    }
    names
}

#[test]
fn random_call_graphs_match_gprof() {
    let cases: u64 = std::env::var("PROFIL_CG_RANDOM_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(60);
    let dir = TempDir::new("random");
    let mut r = Rng::new(0x5eed);
    std::fs::write(dir.join("prog.c"), program(&mut r)).unwrap();
    compile(dir.path(), "gcc", &["-O0", "-g0", "-o", "prog", "prog.c"]);
    let funcs = functions(&dir.join("prog"));
    assert!(funcs.len() >= FUNCS, "{funcs:?}");
    let flag_sets: [&[&str]; 4] = [&[], &["-q", "-z"], &["-a"], &["-q"]];
    let mut cycles_seen = 0;
    for seed in 0..cases {
        let mut r = Rng::new(seed);
        let files = profile(&mut r, &funcs, true);
        let names = write_profiles(&dir, seed, &files);
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        // Two flag sets per seed, rotating, to keep the test quick.
        for k in 0..2 {
            let flags = flag_sets[(seed as usize + 2 * k) % flag_sets.len()];
            let out = assert_same(dir.path(), "prog", &names, flags);
            if String::from_utf8_lossy(&out).contains("as a whole>") {
                cycles_seen += 1;
            }
        }
    }
    // The generator must really produce cycles, or the comparison proves little.
    assert!(
        cycles_seen >= cases / 2,
        "only {cycles_seen} outputs with cycles"
    );
}

/// An i386 ELF32 executable with `FUNCS` functions (global and local, of many sizes),
/// assembled at test time: the same comparison with 4-byte addresses.
#[test]
fn random_call_graphs_match_gprof_elf32() {
    let dir = TempDir::new("random32");
    let mut r = Rng::new(0x3232);
    let mut asm =
        String::from("    .text\n    .globl _start\n_start:\n    call f0\n    jmp _start\n");
    for i in 0..FUNCS {
        let len = r.below(20) as usize;
        let name = format!("f{i}_{}", &"qwertyuiopasdfghjklzxcvbnm"[..len]);
        let name = if i == 0 { "f0".to_owned() } else { name };
        if !r.chance(30) {
            let _ = writeln!(asm, "    .globl {name}");
        }
        let _ = writeln!(asm, "    .p2align 4\n    .type {name},@function\n{name}:");
        let _ = writeln!(asm, "    .fill {}, 1, 0x90\n    ret", 4 + r.below(120));
        let _ = writeln!(asm, "    .size {name}, .-{name}");
    }
    std::fs::write(dir.join("p.s"), asm).unwrap();
    compile(dir.path(), "as", &["--32", "-o", "p.o", "p.s"]);
    compile(dir.path(), "ld", &["-m", "elf_i386", "-o", "prog", "p.o"]);
    let funcs = functions(&dir.join("prog"));
    assert!(funcs.len() >= FUNCS - 1, "{funcs:?}");
    let flag_sets: [&[&str]; 3] = [&[], &["-q", "-z"], &["-a"]];
    let mut cycles_seen = 0;
    for seed in 0..30u64 {
        let mut r = Rng::new(seed + 1000);
        let files = profile(&mut r, &funcs, false);
        let names = write_profiles(&dir, seed, &files);
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        let flags = flag_sets[seed as usize % flag_sets.len()];
        let out = assert_same(dir.path(), "prog", &names, flags);
        if String::from_utf8_lossy(&out).contains("as a whole>") {
            cycles_seen += 1;
        }
    }
    assert!(cycles_seen >= 10, "only {cycles_seen} outputs with cycles");
}

/// Lists longer than the printer's literal-insertion limit (a hub with 150 callers and 150
/// callees, all in one cycle, plus random arcs): the stable-sort path must print gprof's order.
#[test]
fn long_parent_and_child_lists_match_gprof() {
    let dir = TempDir::new("long");
    let mut c = String::from("static volatile int sink;\n");
    for i in 0..160 {
        let _ = writeln!(
            c,
            "__attribute__((noinline, used)) void h{i}(void) {{ sink += {i}; }}"
        );
    }
    c += "int main(void) { return 0; }\n";
    std::fs::write(dir.join("prog.c"), c).unwrap();
    compile(dir.path(), "gcc", &["-O0", "-g0", "-o", "prog", "prog.c"]);
    let mut funcs: Vec<(String, u64, bool)> = nm_functions(&dir.join("prog"))
        .into_iter()
        .filter(|f| f.0.starts_with('h'))
        .collect();
    funcs.sort_by_key(|f| f.1);
    let mut r = Rng::new(77);
    let hub = funcs[0].1;
    let mut g = GmonFile::new();
    let low = hub & !3;
    let high = (funcs[funcs.len() - 1].1 + 16) & !3;
    let mut bins = vec![0u16; ((high - low) / 4) as usize];
    for b in bins.iter_mut() {
        if r.chance(20) {
            *b = 1 + r.below(3) as u16;
        }
    }
    g.hist(low, high, 100, &bins);
    for (k, f) in funcs.iter().enumerate().skip(1).take(150) {
        // Equal counts in runs, so that ties decide much of the order.
        g.arc(f.1 + 4, hub, 1 + (k as u32 % 4));
        g.arc(hub + 4, f.1, 1 + (k as u32 % 3));
    }
    for _ in 0..100 {
        let p = &funcs[r.below(funcs.len() as u64) as usize];
        let q = &funcs[r.below(funcs.len() as u64) as usize];
        g.arc(p.1 + 2, q.1, r.below(5) as u32);
    }
    g.write(&dir.join("gmon.out"));
    let out = assert_same(dir.path(), "prog", &["gmon.out"], &["-q"]);
    // Every caller and callee of the hub names it: it is in the cycle, with >64 arcs each way.
    let mentions = String::from_utf8_lossy(&out)
        .matches(" h0 <cycle 1> [")
        .count();
    assert!(
        mentions > 150,
        "the hub is not in a large cycle ({mentions} mentions)"
    );
    assert_same(dir.path(), "prog", &["gmon.out"], &["-z"]);
}
