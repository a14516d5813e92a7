//! Real profiles written by glibc (fixtures/gcc-pg, see its README): they must parse, and
//! their deterministic parts (format, call counts) must be what the programs do.

use std::path::PathBuf;

use gmon::{parse, Format, GmonFile, Target};

fn fixture(name: &str) -> Vec<u8> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/gcc-pg")
        .join(name);
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn parsed(data: &[u8]) -> GmonFile<'_> {
    // The fixtures are x86-64 ELF executables: 8-byte little-endian.
    let t = Target::new(gmon::PtrSize::Eight, gmon::Endian::Little);
    assert_eq!(
        Target::guess(data),
        t,
        "the guess must agree with the executable"
    );
    parse(data, t).unwrap()
}

/// Sum of arc counts into the callee whose arc records have this `self_pc` set.
fn calls_into(f: &GmonFile<'_>, self_pcs: &[u64]) -> u64 {
    f.arcs
        .iter()
        .filter(|a| self_pcs.contains(&a.self_pc))
        .map(|a| a.count)
        .sum()
}

fn check_common(f: &GmonFile<'_>, len: usize) {
    assert_eq!(f.format(), Format::Gnu { version: 1 });
    assert_eq!(
        &f.header.raw[8..20],
        &[0u8; 12],
        "glibc writes a zero spare field"
    );
    assert_eq!(f.histograms.len(), 1);
    let h = &f.histograms[0];
    assert_eq!(h.low_pc, 0, "PIE: link-time __executable_start");
    assert_eq!(h.high_pc % 4, 0, "glibc rounds high_pc up to 4");
    // glibc: kcountsize = ROUNDUP(textsize / 2, 8), hist_size = kcountsize / 2.
    let text = h.high_pc - h.low_pc;
    assert_eq!(u64::from(h.hist_size), (text / 2).div_ceil(8) * 8 / 2);
    assert_eq!(h.prof_rate, Some(100));
    assert_eq!(h.dimension, gmon::Dimension::SECONDS);
    assert!(
        h.bins.total() > 5,
        "the program ran long enough to be sampled"
    );
    // Everything accounted for: header + histogram record + 21 bytes per arc.
    assert_eq!(
        len as u64,
        20 + 41 + 2 * u64::from(h.hist_size) + 21 * f.arcs.len() as u64
    );
    assert_eq!(f.trailing_bytes, 0);
    assert!(f.basic_blocks.is_empty());
    for a in &f.arcs {
        assert!(a.from_pc < h.high_pc && a.self_pc < h.high_pc, "{a:?}");
        assert_eq!(
            a.from_pc % 16,
            0,
            "glibc writes the start of the 16-byte froms bucket"
        );
    }
}

/// The distinct callees (self_pc values), sorted.
fn callees(f: &GmonFile<'_>) -> Vec<u64> {
    let mut v: Vec<u64> = f.arcs.iter().map(|a| a.self_pc).collect();
    v.sort();
    v.dedup();
    v
}

#[test]
fn loop2() {
    let data = fixture("loop2.gmon");
    let f = parsed(&data);
    check_common(&f, data.len());
    // main -> outer 20 times, outer -> inner 800 times (main itself is called from libc,
    // outside the profiled range, so that arc is never recorded).
    let c = callees(&f);
    assert_eq!(c.len(), 2, "{:?}", f.arcs);
    let mut counts: Vec<u64> = c.iter().map(|&s| calls_into(&f, &[s])).collect();
    counts.sort();
    assert_eq!(counts, vec![20, 800]);
}

#[test]
fn recursion() {
    let data = fixture("recursion.gmon");
    let f = parsed(&data);
    check_common(&f, data.len());
    // fib(32) makes 2*fib(33) - 1 = 7049155 calls: 1 from main, the rest from itself.
    let total: u64 = f.arcs.iter().map(|a| a.count).sum();
    assert_eq!(total, 7_049_155 + 1, "fib calls plus the one call of leaf");
}

#[test]
fn cycle() {
    let data = fixture("cycle.gmon");
    let f = parsed(&data);
    check_common(&f, data.len());
    // 5000 chains ping(40) -> pong(39) -> ... -> 0: 21 pings and 20 pongs each.
    let mut counts: Vec<u64> = callees(&f).iter().map(|&s| calls_into(&f, &[s])).collect();
    counts.sort();
    assert_eq!(counts, vec![100_000, 105_000]);
}

#[test]
fn threads() {
    let data = fixture("threads.gmon");
    let f = parsed(&data);
    check_common(&f, data.len());
    // 20 calls each of work_a and work_b; mcount may drop some under contention.
    let c = callees(&f);
    assert_eq!(c.len(), 2, "{:?}", f.arcs);
    for s in c {
        let n = calls_into(&f, &[s]);
        assert!((1..=20).contains(&n), "{n}");
    }
}

#[test]
fn fixtures_fail_cleanly_with_the_wrong_pointer_size() {
    // Read as 32-bit, a 64-bit file must fail with an error, not a panic or a huge allocation.
    for name in ["loop2.gmon", "recursion.gmon", "cycle.gmon", "threads.gmon"] {
        let data = fixture(name);
        let t = Target::new(gmon::PtrSize::Four, gmon::Endian::Little);
        assert!(parse(&data, t).is_err(), "{name}");
    }
}
