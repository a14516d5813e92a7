//! Write → read → compare, for every format × pointer size × byte order.

use gmon::read::{self, BbLayout, Record};
use gmon::write::{HistHeader, SliceSink, WriteError, Writer};
use gmon::{parse, Dimension, Endian, Format, PtrSize, Target};

const TARGETS: [Target; 4] = [
    Target::new(PtrSize::Eight, Endian::Little),
    Target::new(PtrSize::Four, Endian::Little),
    Target::new(PtrSize::Eight, Endian::Big),
    Target::new(PtrSize::Four, Endian::Big),
];

/// Deterministic pseudo-random bins with some large values and zeros.
fn bins(n: u32, seed: u32) -> Vec<u16> {
    let mut x = seed.wrapping_mul(2_654_435_761).wrapping_add(1);
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            match x % 7 {
                0 => 0xffff,
                1 | 2 => 0,
                _ => (x >> 8) as u16,
            }
        })
        .collect()
}

fn addr(t: Target, a: u64) -> u64 {
    if t.ptr_size == PtrSize::Four {
        a & 0xffff_ffff
    } else {
        a
    }
}

#[test]
fn gnu_round_trip_every_target() {
    for t in TARGETS {
        let low = addr(t, 0x5555_0000_1000);
        let h1 = HistHeader {
            low_pc: low,
            high_pc: low + 0x800,
            hist_size: 512,
            prof_rate: 100,
            dimension: Dimension::SECONDS,
        };
        let h2 = HistHeader {
            low_pc: low + 0x1000,
            high_pc: low + 0x1400,
            hist_size: 256,
            prof_rate: 1000,
            dimension: Dimension::SECONDS,
        };
        let b1 = bins(512, 1);
        let b2 = bins(256, 2);
        let arcs = [
            (low + 0x10, low + 0x40e, 1u32),
            (low + 0x20, low + 0x1004, u32::MAX),
            (low, low, 0),
        ];
        let mut out = Vec::new();
        let mut w = Writer::new(&mut out, t);
        w.gnu_header().unwrap();
        w.gnu_histogram(&h1, b1.iter().copied()).unwrap();
        w.gnu_arc(arcs[0].0, arcs[0].1, arcs[0].2).unwrap();
        w.gnu_histogram(&h2, b2.iter().copied()).unwrap();
        w.gnu_arc(arcs[1].0, arcs[1].1, arcs[1].2).unwrap();
        w.gnu_arc(arcs[2].0, arcs[2].1, arcs[2].2).unwrap();
        w.gnu_basic_blocks(2, [(low + 4, 7u64), (low + 8, 9)])
            .unwrap();

        let p = t.ptr_size.bytes();
        let expect_len = 20
            + (1 + 2 * p + 24 + 1024)
            + (1 + 2 * p + 24 + 512)
            + 3 * (1 + 2 * p + 4)
            + (1 + 4 + 4 * p);
        assert_eq!(out.len(), expect_len, "{t}");

        let f = parse(&out, t).unwrap();
        assert_eq!(f.format(), Format::Gnu { version: 1 });
        assert_eq!(f.histograms.len(), 2);
        for (h, (hh, bb)) in f.histograms.iter().zip([(h1, &b1), (h2, &b2)]) {
            assert_eq!(
                (h.low_pc, h.high_pc, h.hist_size),
                (hh.low_pc, hh.high_pc, hh.hist_size)
            );
            assert_eq!(h.prof_rate, Some(hh.prof_rate));
            assert_eq!(h.dimension, Dimension::SECONDS);
            assert_eq!(h.bins.iter().collect::<Vec<_>>(), *bb, "{t}");
            assert_eq!(h.bins.get(3), Some(bb[3]));
            assert_eq!(h.bins.get(bb.len()), None);
        }
        let got: Vec<_> = f
            .arcs
            .iter()
            .map(|a| (a.from_pc, a.self_pc, a.count as u32))
            .collect();
        assert_eq!(got, arcs);
        assert_eq!(f.basic_blocks.len(), 1);
        assert_eq!(f.basic_blocks[0].layout, BbLayout::V1);
        assert_eq!(
            f.basic_blocks[0].blocks().collect::<Vec<_>>(),
            vec![(low + 4, 7), (low + 8, 9)]
        );
        assert_eq!(
            f.total_samples(),
            b1.iter().chain(&b2).map(|&b| u64::from(b)).sum::<u64>()
        );
        // The other pointer size must not silently decode to the same thing.
        let other = Target::new(
            if p == 8 {
                PtrSize::Four
            } else {
                PtrSize::Eight
            },
            t.endian,
        );
        assert_ne!(
            parse(&out, other).ok().map(|f| f.histograms.len()),
            Some(2),
            "{t}"
        );
        // Guessing finds the target from the bytes alone.
        assert_eq!(Target::guess(&out), t);
    }
}

fn write_bsd(
    t: Target,
    format: Format,
    low: u64,
    nbins: u32,
    b: &[u16],
    arcs: &[(u64, u64, u64)],
) -> Vec<u8> {
    let mut out = Vec::new();
    let mut w = Writer::new(&mut out, t);
    match format {
        Format::Bsd44 => w
            .bsd44_header(low, low + 4 * u64::from(nbins), nbins, 1000)
            .unwrap(),
        Format::OldBsd => w
            .oldbsd_header(low, low + 4 * u64::from(nbins), nbins)
            .unwrap(),
        Format::Gnu { .. } => unreachable!(),
    }
    w.bsd_bins(nbins, b.iter().copied()).unwrap();
    for &(f, s, c) in arcs {
        w.bsd_arc(f, s, c).unwrap();
    }
    out
}

#[test]
fn bsd_round_trip_every_target() {
    for t in TARGETS {
        for format in [Format::Bsd44, Format::OldBsd] {
            let low = addr(t, 0x40_0000);
            let b = bins(300, 3);
            let big = if t.ptr_size == PtrSize::Eight {
                1u64 << 40
            } else {
                u64::from(u32::MAX)
            };
            let arcs = [
                (low + 0x10, low + 0x80, 5u64),
                (low + 0x30, low + 0x90, big),
            ];
            let out = write_bsd(t, format, low, 300, &b, &arcs);
            let p = t.ptr_size.bytes();
            let header = if format == Format::Bsd44 {
                2 * p + 24
            } else {
                2 * p + 4
            };
            assert_eq!(out.len(), header + 600 + 2 * 3 * p, "{t} {format:?}");

            let f = parse(&out, t).unwrap();
            assert_eq!(f.format(), format, "{t}");
            assert_eq!(f.header.header_bytes, header);
            assert_eq!(f.header.ncnt, Some((header + 600) as u32));
            assert_eq!(f.histograms.len(), 1);
            let h = &f.histograms[0];
            assert_eq!((h.low_pc, h.high_pc, h.hist_size), (low, low + 1200, 300));
            assert_eq!(
                h.prof_rate,
                if format == Format::Bsd44 {
                    Some(1000)
                } else {
                    None
                }
            );
            assert_eq!(h.bins.iter().collect::<Vec<_>>(), b);
            let got: Vec<_> = f
                .arcs
                .iter()
                .map(|a| (a.from_pc, a.self_pc, a.count))
                .collect();
            assert_eq!(got, arcs);
            assert_eq!(f.trailing_bytes, 0);
            if format == Format::Bsd44 {
                assert_eq!(Target::guess(&out), t, "{format:?}");
            }
        }
    }
}

#[test]
fn thirty_two_bit_big_endian_file_read_on_this_host() {
    // Hand-assembled bytes, independent of the writer: a 32-bit big-endian GNU file.
    let mut f = Vec::new();
    f.extend_from_slice(b"gmon\x00\x00\x00\x01");
    f.extend_from_slice(&[0; 12]);
    f.push(0); // histogram
    f.extend_from_slice(&0x0001_0000u32.to_be_bytes());
    f.extend_from_slice(&0x0001_0010u32.to_be_bytes());
    f.extend_from_slice(&4u32.to_be_bytes());
    f.extend_from_slice(&100u32.to_be_bytes());
    f.extend_from_slice(b"seconds\0\0\0\0\0\0\0\0s");
    for v in [1u16, 0x0203, 0, 0xfffe] {
        f.extend_from_slice(&v.to_be_bytes());
    }
    f.push(1); // arc
    f.extend_from_slice(&0x0001_0004u32.to_be_bytes());
    f.extend_from_slice(&0x0001_000cu32.to_be_bytes());
    f.extend_from_slice(&0x0102_0304u32.to_be_bytes());

    let t = Target::new(PtrSize::Four, Endian::Big);
    let g = parse(&f, t).unwrap();
    let h = &g.histograms[0];
    assert_eq!(
        (h.low_pc, h.high_pc, h.hist_size, h.prof_rate),
        (0x10000, 0x10010, 4, Some(100))
    );
    assert_eq!(
        h.bins.iter().collect::<Vec<_>>(),
        vec![1, 0x0203, 0, 0xfffe]
    );
    assert_eq!(
        (g.arcs[0].from_pc, g.arcs[0].self_pc, g.arcs[0].count),
        (0x10004, 0x1000c, 0x0102_0304)
    );
    assert_eq!(Target::guess(&f), t);
    // Our writer produces exactly these bytes.
    let mut out = Vec::new();
    let mut w = Writer::new(&mut out, t);
    w.gnu_header().unwrap();
    let hh = HistHeader {
        low_pc: 0x10000,
        high_pc: 0x10010,
        hist_size: 4,
        prof_rate: 100,
        dimension: Dimension::SECONDS,
    };
    w.gnu_histogram(&hh, [1u16, 0x0203, 0, 0xfffe]).unwrap();
    w.gnu_arc(0x10004, 0x1000c, 0x0102_0304).unwrap();
    assert_eq!(out, f);
    // Read as little-endian it is rejected: the version word is then 0x01000000.
    let e = parse(&f, Target::new(PtrSize::Four, Endian::Little)).unwrap_err();
    assert_eq!(e.offset, 4);
    assert!(
        e.to_string().contains("unsupported version 16777216"),
        "{e}"
    );
}

#[test]
fn writer_needs_no_heap() {
    // The runtime's path: a fixed buffer, bins streamed from an iterator.
    let mut buf = [0u8; 20 + 41 + 8 + 21];
    let mut w = Writer::new(SliceSink::new(&mut buf), Target::HOST);
    w.gnu_header().unwrap();
    let hh = HistHeader {
        low_pc: 0,
        high_pc: 16,
        hist_size: 4,
        prof_rate: 100,
        dimension: Dimension::SECONDS,
    };
    w.gnu_histogram(&hh, (1..=4u16).map(|x| x * 3)).unwrap();
    w.gnu_arc(1, 2, 3).unwrap();
    let sink = w.into_inner();
    assert_eq!(sink.len(), 90);
    let f = parse(sink.written(), Target::HOST).unwrap();
    assert_eq!(
        f.histograms[0].bins.iter().collect::<Vec<_>>(),
        vec![3, 6, 9, 12]
    );
    // One byte more does not fit.
    let mut small = [0u8; 89];
    let mut w = Writer::new(SliceSink::new(&mut small), Target::HOST);
    w.gnu_header().unwrap();
    w.gnu_histogram(&hh, [0u16; 4]).unwrap();
    assert!(matches!(w.gnu_arc(1, 2, 3), Err(WriteError::Sink(_))));
}

#[test]
fn writer_checks_field_widths_and_bin_counts() {
    let t32 = Target::new(PtrSize::Four, Endian::Little);
    let mut out = Vec::new();
    let mut w = Writer::new(&mut out, t32);
    assert!(matches!(
        w.gnu_arc(1 << 32, 0, 1),
        Err(WriteError::TooWide {
            field: "from_pc",
            ..
        })
    ));
    assert!(matches!(
        w.bsd_arc(0, 0, 1 << 32),
        Err(WriteError::TooWide {
            field: "arc count",
            ..
        })
    ));
    let hh = HistHeader {
        low_pc: 0,
        high_pc: 16,
        hist_size: 4,
        prof_rate: 100,
        dimension: Dimension::SECONDS,
    };
    assert_eq!(
        w.gnu_histogram(&hh, [1u16; 3]),
        Err(WriteError::BinCount {
            expected: 4,
            actual: 3
        })
    );
    assert_eq!(
        w.gnu_histogram(&hh, [1u16; 9]),
        Err(WriteError::BinCount {
            expected: 4,
            actual: 5
        })
    );
}

#[test]
fn records_iterator_allocates_nothing_and_matches_parse() {
    let t = Target::HOST;
    let b = bins(40, 9);
    let out = write_bsd(t, Format::Bsd44, 0x1000, 40, &b, &[(1, 2, 3), (4, 5, 6)]);
    // Odd tail shorter than one arc: ignored like gprof, but reported.
    let mut with_tail = out.clone();
    with_tail.extend_from_slice(&[0xaa; 5]);
    let (hdr, mut recs) = read::records(&with_tail, t).unwrap();
    assert_eq!(hdr.format, Format::Bsd44);
    let kinds: Vec<_> = recs
        .by_ref()
        .map(|r| match r.unwrap() {
            Record::Histogram(_) => 'h',
            Record::Arc(_) => 'a',
            Record::BasicBlocks(_) => 'b',
        })
        .collect();
    assert_eq!(kinds, vec!['h', 'a', 'a']);
    assert_eq!(recs.trailing_bytes(), 5);
    assert_eq!(parse(&with_tail, t).unwrap().trailing_bytes, 5);
}
