//! Malformed input: every truncation, bad header words, bad tags, inverted ranges and lying
//! counts. The reader must return an error naming the field and byte offset, never panic,
//! and never allocate more than the input justifies.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use gmon::read::{self, BbLayout};
use gmon::write::{HistHeader, Writer};
use gmon::{parse, Dimension, Endian, ErrorKind, Format, PtrSize, Target};

/// Counts bytes allocated by the current thread (tests run on several threads).
struct Counting;

thread_local! {
    static ALLOCATED: Cell<usize> = const { Cell::new(0) };
}

// SAFETY: forwards to the system allocator unchanged; the counter is a thread-local `Cell`
// with const initialisation, which never allocates.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = ALLOCATED.try_with(|c| c.set(c.get() + layout.size()));
        // SAFETY: same contract as our caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as our caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn allocated_by<R>(f: impl FnOnce() -> R) -> (R, usize) {
    let before = ALLOCATED.with(Cell::get);
    let r = f();
    (r, ALLOCATED.with(Cell::get) - before)
}

const T64: Target = Target::new(PtrSize::Eight, Endian::Little);
const T32BE: Target = Target::new(PtrSize::Four, Endian::Big);

/// A GNU file with every record kind; returns the bytes and the record boundaries.
fn sample_gnu(t: Target) -> (Vec<u8>, Vec<usize>) {
    let hh = HistHeader {
        low_pc: 0x1000,
        high_pc: 0x1010,
        hist_size: 4,
        prof_rate: 100,
        dimension: Dimension::SECONDS,
    };
    type Step = fn(&mut Writer<&mut Vec<u8>>, &HistHeader);
    let steps: [Step; 5] = [
        |w, _| w.gnu_header().unwrap(),
        |w, hh| w.gnu_histogram(hh, [1u16, 2, 3, 4]).unwrap(),
        |w, _| w.gnu_arc(0x1004, 0x1008, 7).unwrap(),
        |w, _| {
            w.gnu_basic_blocks(2, [(0x1000, 1u64), (0x1008, 2)])
                .unwrap()
        },
        |w, _| w.gnu_arc(0x1000, 0x100c, 1).unwrap(),
    ];
    let mut out = Vec::new();
    let mut bounds = Vec::new();
    for step in steps {
        step(&mut Writer::new(&mut out, t), &hh);
        bounds.push(out.len());
    }
    (out, bounds)
}

#[test]
fn every_truncation_of_a_gnu_file() {
    for t in [T64, T32BE] {
        let (data, bounds) = sample_gnu(t);
        for len in 0..=data.len() {
            let cut = &data[..len];
            let (r, bytes) = allocated_by(|| read::validate(cut, t).map(|(_, n, _)| n));
            assert_eq!(bytes, 0, "the no-alloc reader allocated");
            match r {
                Ok(n) => {
                    let i = bounds
                        .iter()
                        .position(|&b| b == len)
                        .unwrap_or_else(|| panic!("{t}: prefix {len} parsed"));
                    assert_eq!(n as usize, i, "records in a prefix ending at boundary {i}");
                }
                Err(e) => {
                    assert!(!bounds.contains(&len), "{t}: boundary {len} rejected: {e}");
                    assert!(e.offset <= len as u64, "{e}");
                    if len < 20 {
                        assert!(matches!(e.kind, ErrorKind::TooShort { .. }), "{e}");
                    } else {
                        assert!(
                            matches!(
                                e.kind,
                                ErrorKind::Truncated { .. } | ErrorKind::CountExceedsFile { .. }
                            ),
                            "{e}"
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn every_truncation_of_a_bsd_file() {
    for t in [T64, T32BE] {
        for format in [Format::Bsd44, Format::OldBsd] {
            let mut data = Vec::new();
            let mut w = Writer::new(&mut data, t);
            match format {
                Format::Bsd44 => w.bsd44_header(0x1000, 0x1010, 4, 100).unwrap(),
                _ => w.oldbsd_header(0x1000, 0x1010, 4).unwrap(),
            }
            w.bsd_bins(4, [1u16, 2, 3, 4]).unwrap();
            w.bsd_arc(0x1004, 0x1008, 9).unwrap();
            w.bsd_arc(0x1000, 0x100c, 1).unwrap();
            let p = t.ptr_size.bytes();
            let header = if format == Format::Bsd44 {
                2 * p + 24
            } else {
                2 * p + 4
            };
            let body = header + 8;
            for len in 0..=data.len() {
                let r = parse(&data[..len], t);
                if len >= body {
                    let f = r.unwrap_or_else(|e| panic!("{t} {format:?} {len}: {e}"));
                    assert_eq!(f.format(), format);
                    assert_eq!(f.arcs.len(), (len - body) / (3 * p));
                    assert_eq!(f.trailing_bytes as usize, (len - body) % (3 * p));
                } else {
                    let e = r.unwrap_err();
                    assert!(e.offset <= len as u64);
                    let s = e.to_string();
                    assert!(s.contains(" at byte "), "{s}");
                }
            }
        }
    }
}

#[test]
fn the_fixture_truncated_everywhere_never_panics() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../fixtures/gcc-pg/cycle.gmon"
    );
    let data = std::fs::read(path).unwrap();
    let mut ok = 0;
    for len in 0..data.len() {
        if parse(&data[..len], T64).is_ok() {
            ok += 1;
        }
    }
    // Ok exactly at the header end, after the histogram, and after each arc but the last.
    let f = parse(&data, T64).unwrap();
    assert_eq!(ok, 2 + f.arcs.len() - 1);
}

fn gnu_with_hist(
    version: u32,
    low: u64,
    high: u64,
    hist_size: u32,
    nbins_present: usize,
) -> Vec<u8> {
    let mut d = Vec::new();
    d.extend_from_slice(b"gmon");
    d.extend_from_slice(&version.to_le_bytes());
    d.extend_from_slice(&[0; 12]);
    d.push(0);
    d.extend_from_slice(&low.to_le_bytes());
    d.extend_from_slice(&high.to_le_bytes());
    d.extend_from_slice(&hist_size.to_le_bytes());
    d.extend_from_slice(&100u32.to_le_bytes());
    d.extend_from_slice(b"seconds\0\0\0\0\0\0\0\0s");
    d.extend(std::iter::repeat_n(0u8, 2 * nbins_present));
    d
}

#[test]
fn huge_bin_count_is_an_error_before_any_allocation() {
    let d = gnu_with_hist(1, 0, 0x1000, u32::MAX, 18);
    assert!(d.len() < 100);
    let (r, bytes) = allocated_by(|| read::validate(&d, T64).map(|_| ()));
    assert_eq!(bytes, 0);
    let e = r.unwrap_err();
    assert_eq!(e.offset, 37, "the hist_size field");
    assert_eq!(e.field, "histogram record: hist_size");
    assert_eq!(
        e.kind,
        ErrorKind::CountExceedsFile {
            count: u64::from(u32::MAX),
            item_bytes: 2,
            available: 36
        }
    );
    assert_eq!(
        e.to_string(),
        "histogram record: hist_size: 4294967295 items of 2 bytes need 8589934590 bytes but only 36 remain at byte 37"
    );
    // The allocating reader also fails before allocating anything proportional to the claim.
    let (r, bytes) = allocated_by(|| parse(&d, T64).map(|_| ()));
    assert!(r.is_err());
    assert!(bytes < 1024, "{bytes}");
}

#[test]
fn gnu_header_errors() {
    // Shorter than any header.
    let e = parse(b"gmon\x01\0\0\0", T64).unwrap_err();
    assert_eq!(e.kind, ErrorKind::TooShort { needed: 20, len: 8 });
    // Version 2 (and version 1 read with the wrong byte order).
    let d = gnu_with_hist(2, 0, 16, 4, 4);
    let e = parse(&d, T64).unwrap_err();
    assert_eq!(
        (e.offset, e.kind.clone()),
        (4, ErrorKind::UnsupportedVersion(2))
    );
    let d = gnu_with_hist(1, 0, 16, 4, 4);
    let e = parse(&d, Target::new(PtrSize::Eight, Endian::Big)).unwrap_err();
    assert_eq!(e.kind, ErrorKind::UnsupportedVersion(0x0100_0000));
    // Version 0 is accepted.
    let d0 = gnu_with_hist(0, 0, 16, 4, 4);
    assert_eq!(
        parse(&d0, T64).unwrap().format(),
        Format::Gnu { version: 0 }
    );
    // The spare bytes are never validated (gprof's own gmon.sum has garbage there).
    let mut g = d.clone();
    g[8..20].copy_from_slice(b"\x88\x14\0\0\0\0\x24\x05\0\0\0\0");
    assert!(parse(&g, T64).is_ok());
}

#[test]
fn unknown_tag_names_its_offset() {
    let mut d = gnu_with_hist(1, 0, 16, 4, 4);
    let at = d.len();
    d.push(3);
    d.extend_from_slice(&[0; 30]);
    let e = parse(&d, T64).unwrap_err();
    assert_eq!(
        (e.offset, e.kind.clone()),
        (at as u64, ErrorKind::BadTag(3))
    );
    assert_eq!(
        e.to_string(),
        format!("record tag: unknown record tag 3 (expected 0, 1 or 2) at byte {at}")
    );
}

#[test]
fn low_above_high() {
    let d = gnu_with_hist(1, 0x2000, 0x1000, 4, 4);
    let e = parse(&d, T64).unwrap_err();
    assert_eq!(
        (e.offset, e.kind.clone()),
        (
            21,
            ErrorKind::LowAboveHigh {
                low_pc: 0x2000,
                high_pc: 0x1000
            }
        )
    );
    // BSD: lpc > hpc.
    let mut b = Vec::new();
    Writer::new(&mut b, T64)
        .bsd44_header(0x2000, 0x1000, 0, 100)
        .unwrap();
    let e = parse(&b, T64).unwrap_err();
    assert!(matches!(e.kind, ErrorKind::LowAboveHigh { .. }), "{e}");
}

#[test]
fn bsd_header_errors() {
    // ncnt smaller than the header it includes.
    let mut d = Vec::new();
    d.extend_from_slice(&0x1000u64.to_le_bytes());
    d.extend_from_slice(&0x1010u64.to_le_bytes());
    d.extend_from_slice(&10u32.to_le_bytes());
    d.extend_from_slice(&0x0005_1879u32.to_le_bytes());
    d.extend_from_slice(&100u32.to_le_bytes());
    d.extend_from_slice(&[0; 12]);
    let e = parse(&d, T64).unwrap_err();
    assert_eq!(
        (e.offset, e.kind.clone()),
        (
            16,
            ErrorKind::NcntBelowHeader {
                ncnt: 10,
                header_bytes: 40
            }
        )
    );
    // ncnt claiming 2 GB of bins in a 40-byte file.
    d[16..20].copy_from_slice(&0x7fff_0000u32.to_le_bytes());
    let (r, bytes) = allocated_by(|| parse(&d, T64).map(|_| ()));
    let e = r.unwrap_err();
    assert!(matches!(e.kind, ErrorKind::CountExceedsFile { .. }), "{e}");
    assert!(bytes < 1024);
    // ncnt beyond what gprof's int can hold.
    d[16..20].copy_from_slice(&0xffff_fff0u32.to_le_bytes());
    let e = parse(&d, T64).unwrap_err();
    assert_eq!(e.kind, ErrorKind::NcntTooLarge(0xffff_fff0));
    // 64-bit old BSD needs lpc, hpc, ncnt and the probe word: 24 bytes.
    let e = parse(&[0u8; 22], T64).unwrap_err();
    assert_eq!(
        e.kind,
        ErrorKind::TooShort {
            needed: 24,
            len: 22
        }
    );
}

#[test]
fn basic_block_records() {
    // A version-1 record claiming 2^32-1 blocks.
    let mut d = gnu_with_hist(1, 0, 16, 4, 4);
    let at = d.len();
    d.push(2);
    d.extend_from_slice(&u32::MAX.to_le_bytes());
    d.extend_from_slice(&[0; 16]);
    let e = parse(&d, T64).unwrap_err();
    assert_eq!(e.offset, at as u64 + 1);
    assert!(
        matches!(e.kind, ErrorKind::CountExceedsFile { item_bytes: 16, .. }),
        "{e}"
    );
    // A version-0 record: file name, then per block ncalls, addr, two strings, line.
    let mut d = gnu_with_hist(0, 0, 16, 4, 4);
    d.push(2);
    d.extend_from_slice(&1u32.to_le_bytes());
    d.extend_from_slice(b"a.c\0");
    d.extend_from_slice(&5u64.to_le_bytes());
    d.extend_from_slice(&0x1004u64.to_le_bytes());
    d.extend_from_slice(b"main\0a.c\0");
    d.extend_from_slice(&7u32.to_le_bytes());
    let f = parse(&d, T64).unwrap();
    assert_eq!(f.basic_blocks[0].layout, BbLayout::V0);
    assert_eq!(f.basic_blocks[0].nblocks, 1);
    // Without its last NUL it is an error, not an over-read.
    let e = parse(&d[..d.len() - 6], T64).unwrap_err();
    assert_eq!(e.kind, ErrorKind::UnterminatedString);
}

#[test]
fn random_bytes_never_panic() {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    for _ in 0..20_000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let len = (x % 200) as usize;
        let mut d: Vec<u8> = (0..len)
            .map(|i| (x.rotate_left(i as u32 % 64) >> (i % 8)) as u8)
            .collect();
        if x % 3 == 0 && d.len() >= 8 {
            d[..4].copy_from_slice(b"gmon");
            d[4..8].copy_from_slice(&[(x % 2) as u8, 0, 0, 0]);
        }
        for t in Target::candidates() {
            let _ = parse(&d, t);
        }
        let _ = Target::guess(&d);
    }
}

#[test]
fn the_runtime_write_path_allocates_nothing() {
    // (Lives here because this test binary counts allocations.) Every format, streamed into
    // a caller buffer from an iterator, as the runtime does at exit.
    let mut buf = [0u8; 4096];
    let ((), bytes) = allocated_by(|| {
        for t in Target::candidates() {
            let mut w = Writer::new(gmon::write::SliceSink::new(&mut buf), t);
            w.gnu_header().unwrap();
            let hh = HistHeader {
                low_pc: 0x1000,
                high_pc: 0x1800,
                hist_size: 512,
                prof_rate: 100,
                dimension: Dimension::SECONDS,
            };
            w.gnu_histogram(&hh, (0..512u32).map(|i| i as u16)).unwrap();
            w.gnu_arc(0x1010, 0x1100, 42).unwrap();
            let mut w = Writer::new(gmon::write::SliceSink::new(&mut buf), t);
            w.bsd44_header(0x1000, 0x1800, 512, 100).unwrap();
            w.bsd_bins(512, core::iter::repeat_n(7u16, 512)).unwrap();
            w.bsd_arc(0x1010, 0x1100, 42).unwrap();
            let mut w = Writer::new(gmon::write::SliceSink::new(&mut buf), t);
            w.oldbsd_header(0x1000, 0x1800, 512).unwrap();
            w.bsd_bins(512, core::iter::repeat_n(7u16, 512)).unwrap();
        }
    });
    assert_eq!(bytes, 0);
}
