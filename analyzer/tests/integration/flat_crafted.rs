//! Hand-made gmon files (written with `gmon::write`) for a real executable, to reach the
//! corners of gprof's arithmetic that real runs rarely hit: bins straddling symbol
//! boundaries, samples below the first symbol, several histogram records, repeated
//! ranges, arcs only, odd rates, BSD formats. Each is compared with GNU gprof.

use crate::flat_support;

use std::path::Path;

use flat_support::*;
use gmon::write::{HistHeader, Writer};
use gmon::{Dimension, Endian, PtrSize, Target};
use profil_symbols::ElfImage;

const T64: Target = Target::new(PtrSize::Eight, Endian::Little);

struct Exe {
    dir: TempDir,
    text: (u64, u64),
    syms: Vec<(String, u64)>,
}

impl Exe {
    fn build(pie: bool) -> Exe {
        let dir = TempDir::new("crafted");
        let src = corpus("cycles.c");
        let mut args = vec!["-pg", "-O0", "-o", "prog", src.to_str().unwrap()];
        if !pie {
            args.push("-no-pie");
        }
        compile(dir.path(), "gcc", &args);
        let data = std::fs::read(dir.join("prog")).unwrap();
        let img = ElfImage::parse(&data).unwrap();
        let text = img.section_by_name(".text").unwrap();
        let table = img.symtab.as_ref().unwrap();
        let syms = table
            .symbols
            .iter()
            .map(|s| (String::from_utf8_lossy(table.name(s)).into_owned(), s.value))
            .collect();
        Exe {
            text: (text.addr, text.addr + text.size),
            syms,
            dir,
        }
    }
    fn addr(&self, name: &str) -> u64 {
        self.syms
            .iter()
            .find(|s| s.0 == name)
            .unwrap_or_else(|| panic!("no symbol {name}"))
            .1
    }
    fn path(&self) -> &Path {
        self.dir.path()
    }
}

fn hist(w: &mut Writer<Vec<u8>>, low: u64, high: u64, rate: u32, bins: &[u16]) {
    let h = HistHeader {
        low_pc: low,
        high_pc: high,
        hist_size: bins.len() as u32,
        prof_rate: rate,
        dimension: Dimension::SECONDS,
    };
    w.gnu_histogram(&h, bins.iter().copied()).unwrap();
}

fn gnu(f: impl FnOnce(&mut Writer<Vec<u8>>)) -> Vec<u8> {
    let mut w = Writer::new(Vec::new(), T64);
    w.gnu_header().unwrap();
    f(&mut w);
    w.into_inner()
}

fn check(exe: &Exe, name: &str, bytes: &[u8]) {
    std::fs::write(exe.dir.join(name), bytes).unwrap();
    for flags in FLAG_SETS {
        assert_same(exe.path(), "prog", &[name], flags);
    }
}

/// Bins of about 3 bytes (hist_scale 1.5): most bins straddle a symbol boundary, and the
/// credits do not sum to the counts.
#[test]
fn straddling_bins_and_uneven_scale() {
    let exe = Exe::build(true);
    let (lo, hi) = (exe.text.0 & !3, (exe.text.1 + 3) & !3);
    let n = ((hi - lo) / 3) as usize;
    let bins: Vec<u16> = (0..n).map(|i| ((i * 7919) % 23) as u16).collect();
    check(&exe, "straddle.gmon", &gnu(|w| hist(w, lo, hi, 100, &bins)));
    // Odd low_pc: the 2-byte units round it down.
    check(
        &exe,
        "odd.gmon",
        &gnu(|w| hist(w, lo + 1, lo + 1 + 2 * n as u64, 100, &bins)),
    );
}

/// A PIE's histogram starts at 0, below every symbol: those samples count in the total only.
#[test]
fn samples_below_first_symbol_and_past_the_last() {
    let exe = Exe::build(true);
    let hi = (exe.text.1 + 0x400 + 3) & !3;
    let n = (hi / 4) as usize;
    let bins: Vec<u16> = (0..n).map(|i| if i % 5 == 0 { 3 } else { 0 }).collect();
    check(&exe, "below.gmon", &gnu(|w| hist(w, 0, hi, 100, &bins)));
}

/// Disjoint records are all assigned; a repeated range is summed; arcs are tallied in file
/// order, self-recursion is taken out of `calls`, and arcs from nowhere are dropped.
#[test]
fn several_records_and_arcs() {
    let exe = Exe::build(true);
    let (fib, ping, pong, main) = (
        exe.addr("fib"),
        exe.addr("ping"),
        exe.addr("pong"),
        exe.addr("main"),
    );
    let (lo, hi) = (exe.text.0 & !15, (exe.text.1 + 15) & !15);
    let mid = lo + (((hi - lo) / 2) & !15);
    let n1 = ((mid - lo) / 4) as usize;
    let n2 = ((hi - mid) / 4) as usize;
    let b1: Vec<u16> = (0..n1).map(|i| (i % 4) as u16).collect();
    let b2: Vec<u16> = (0..n2).map(|i| (i % 3) as u16).collect();
    let bytes = gnu(|w| {
        hist(w, lo, mid, 100, &b1);
        w.gnu_arc(main + 0x20, fib + 8, 10).unwrap();
        w.gnu_arc(fib + 0x30, fib + 8, 5000).unwrap();
        hist(w, mid, hi, 100, &b2);
        w.gnu_arc(main + 0x40, ping + 8, 7).unwrap();
        w.gnu_arc(ping + 0x20, pong + 8, 300).unwrap();
        w.gnu_arc(pong + 0x20, ping + 8, 293).unwrap();
        w.gnu_arc(0x10, ping + 8, 99).unwrap();
        hist(w, lo, mid, 100, &b1);
    });
    check(&exe, "multi.gmon", &bytes);
}

/// No arcs at all: nothing has calls, so the per-call unit falls back to `Ts/call`.
/// Also an odd rate (60 Hz) for the `%g` in "Each sample counts as".
#[test]
fn no_arcs_gives_ts_per_call_and_rate_60() {
    let exe = Exe::build(false);
    let (lo, hi) = (exe.text.0 & !3, (exe.text.1 + 3) & !3);
    let n = ((hi - lo) / 4) as usize;
    let bins: Vec<u16> = (0..n).map(|i| (i % 9 == 0) as u16 * 40).collect();
    check(&exe, "noarcs.gmon", &gnu(|w| hist(w, lo, hi, 60, &bins)));
    check(&exe, "rate0.gmon", &gnu(|w| hist(w, lo, hi, 0, &bins)));
    check(&exe, "rate3.gmon", &gnu(|w| hist(w, lo, hi, 3, &bins)));
}

/// Two files with different ranges of the same scale, and 4.4BSD / old BSD files.
#[test]
fn bsd_formats_and_mixed_files() {
    let exe = Exe::build(false);
    let fib = exe.addr("fib");
    let (lo, hi) = (exe.text.0 & !3, (exe.text.1 + 3) & !3);
    let n = ((hi - lo) / 4) as u32;
    let bins: Vec<u16> = (0..n).map(|i| (i % 7) as u16).collect();
    let mut w = Writer::new(Vec::new(), T64);
    w.bsd44_header(lo, hi, n, 100).unwrap();
    w.bsd_bins(n, bins.iter().copied()).unwrap();
    w.bsd_arc(fib + 0x30, fib + 8, 12).unwrap();
    std::fs::write(exe.dir.join("b44.gmon"), w.into_inner()).unwrap();
    let mut w = Writer::new(Vec::new(), T64);
    w.oldbsd_header(lo, hi, n).unwrap();
    w.bsd_bins(n, bins.iter().rev().copied()).unwrap();
    std::fs::write(exe.dir.join("old.gmon"), w.into_inner()).unwrap();
    std::fs::write(
        exe.dir.join("gnu.gmon"),
        gnu(|w| hist(w, lo, hi, 100, &bins)),
    )
    .unwrap();
    for flags in FLAG_SETS {
        assert_same(exe.path(), "prog", &["b44.gmon"], flags);
        assert_same(exe.path(), "prog", &["old.gmon"], flags);
    }
    assert_same(
        exe.path(),
        "prog",
        &["b44.gmon", "old.gmon", "gnu.gmon"],
        &[],
    );
    assert_same(exe.path(), "prog", &["gnu.gmon", "b44.gmon"], &["-z"]);
}

/// Conditions gprof treats as fatal are errors here too (one line; exit status 2, or gprof's 1
/// for its "gmon.out file is missing histogram").
#[test]
fn fatal_combinations_fail_like_gprof() {
    let exe = Exe::build(true);
    let (lo, hi) = (exe.text.0 & !15, (exe.text.1 + 15) & !15);
    let n = ((hi - lo) / 4) as usize;
    let bins = vec![1u16; n];
    let half = vec![1u16; n / 2];
    let cases: Vec<(&str, Vec<u8>)> = vec![
        (
            "overlap.gmon",
            gnu(|w| {
                hist(w, lo, hi, 100, &bins);
                hist(w, lo + 16, hi + 16, 100, &bins);
            }),
        ),
        (
            "scales.gmon",
            gnu(|w| {
                hist(w, lo, hi, 100, &bins);
                hist(w, hi + 0x1000, hi + 0x1000 + (hi - lo), 100, &half);
            }),
        ),
        ("arcsonly.gmon", gnu(|w| w.gnu_arc(lo, lo + 8, 1).unwrap())),
    ];
    for (name, bytes) in cases {
        std::fs::write(exe.dir.join(name), bytes).unwrap();
        let g = gprof(exe.path(), &["-b", "-p", "prog", name]);
        let o = ours(exe.path(), &["--gprof", "-b", "-p", "prog", name]);
        let stderr = String::from_utf8_lossy(&o.stderr);
        if g.status.success() && !g.stdout.is_empty() {
            assert_eq!(g.stdout, o.stdout, "{name}: {}", diff(&g.stdout, &o.stdout));
        } else {
            // A failure in --gprof mode keeps gprof's status (1).
            let want = g.status.code();
            assert_eq!(
                o.status.code(),
                want,
                "{name}: gprof failed but we did not: {stderr}"
            );
            assert!(
                stderr.starts_with("profil-report: ") && stderr.lines().count() == 1,
                "{name}: {stderr}"
            );
        }
    }
}

/// A 32-bit executable (i386, assembled at test time) with a 32-bit profile: pointer size and
/// byte order come from the ELF, for the histogram, the arcs and the symbols.
#[test]
fn elf32_executable_and_profile() {
    let dir = TempDir::new("elf32");
    std::fs::write(
        dir.join("p.s"),
        "    .text\n    .globl _start\n_start:\n    call alpha\n    call beta\n    call local.1\n    jmp _start\n\
         \x20   .p2align 4\n    .globl alpha\n    .type alpha,@function\nalpha:\n    call beta\n    .fill 56, 1, 0x90\n    ret\n\
         \x20   .size alpha, .-alpha\n    .p2align 4\n    .weak beta\n    .type beta,@function\nbeta:\n\
         \x20   call alpha\n    .fill 120, 1, 0x90\n    ret\n    .size beta, .-beta\n\
         \x20   .p2align 4\n    .type local.1,@function\nlocal.1:\n    .fill 40, 1, 0x90\n    ret\n\
         \x20   .size local.1, .-local.1\n",
    )
    .unwrap();
    compile(dir.path(), "as", &["--32", "p.s", "-o", "p.o"]);
    compile(dir.path(), "ld", &["-m", "elf_i386", "-o", "prog", "p.o"]);
    let data = std::fs::read(dir.join("prog")).unwrap();
    let img = ElfImage::parse(&data).unwrap();
    assert!(!img.is_64);
    let text = img.section_by_name(".text").unwrap();
    let table = img.symtab.as_ref().unwrap();
    let addr = |n: &str| {
        table
            .symbols
            .iter()
            .find(|s| table.name(s) == n.as_bytes())
            .unwrap()
            .value
    };
    let (lo, hi) = (text.addr & !3, (text.addr + text.size + 3) & !3);
    let n = ((hi - lo) / 4) as u32;
    let t32 = Target::new(PtrSize::Four, Endian::Little);
    let mut w = Writer::new(Vec::new(), t32);
    w.gnu_header().unwrap();
    let h = HistHeader {
        low_pc: lo,
        high_pc: hi,
        hist_size: n,
        prof_rate: 100,
        dimension: Dimension::SECONDS,
    };
    w.gnu_histogram(&h, (0..n).map(|i| (i % 5) as u16 * 3))
        .unwrap();
    w.gnu_arc(addr("_start") + 5, addr("alpha") + 1, 7).unwrap();
    w.gnu_arc(addr("alpha") + 5, addr("beta") + 1, 70).unwrap();
    w.gnu_arc(addr("beta") + 5, addr("alpha") + 1, 63).unwrap();
    w.gnu_arc(addr("_start") + 15, addr("local.1") + 1, 7)
        .unwrap();
    std::fs::write(dir.join("p32.gmon"), w.into_inner()).unwrap();
    for flags in FLAG_SETS {
        assert_same(dir.path(), "prog", &["p32.gmon"], flags);
    }
}
