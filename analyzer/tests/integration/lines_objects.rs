//! Reports across objects: a pcsample file (written here through `gmon::pcsample`, as the
//! runtime will) and an objects manifest next to `gmon.out` (through `gmon::manifest`),
//! for a C program compiled at test time and the system's libm, whose functions are
//! resolved from its own symbols. Also the errors: a damaged pcsample file, a dropped-
//! samples warning, and --timeline/--svg.

use crate::lines_support;

use std::path::Path;

use gmon::pcsample::{Header, Object, PcWriter, Sample, FLAG_BUFFER_FULL};
use gmon::write::{HistHeader, Writer};
use gmon::{Dimension, Endian, PtrSize, Target};
use lines_support::*;
use object::{Object as _, ObjectSection, ObjectSymbol};

const LIBM: &str = "/lib/x86_64-linux-gnu/libm.so.6";
const EXE_BIAS: u64 = 0x5555_5555_0000;
const LIBM_BIAS: u64 = 0x7f12_3400_0000;

/// Link-time address of a defined function symbol (any table) of an ELF file.
fn symbol(path: &Path, name: &str) -> u64 {
    let data = std::fs::read(path).unwrap();
    let f = object::File::parse(&*data).unwrap();
    f.symbols()
        .chain(f.dynamic_symbols())
        .find(|s| s.name() == Ok(name) && s.size() > 0)
        .map(|s| s.address())
        .unwrap_or_else(|| panic!("no {name} in {}", path.display()))
}

fn text(path: &Path) -> (u64, u64) {
    let data = std::fs::read(path).unwrap();
    let f = object::File::parse(&*data).unwrap();
    let s = f.section_by_name(".text").unwrap();
    (s.address(), s.address() + s.size())
}

fn build_id(path: &Path) -> Vec<u8> {
    let data = std::fs::read(path).unwrap();
    let f = object::File::parse(&*data).unwrap();
    f.build_id()
        .ok()
        .flatten()
        .map(<[u8]>::to_vec)
        .unwrap_or_default()
}

fn prog(dir: &TempDir) {
    copy_fixtures(dir.path(), &["libm_heavy.c"]);
    compile(
        dir.path(),
        "gcc",
        &["-O2", "-g", "libm_heavy.c", "-o", "prog", "-lm"],
    );
}

/// cbrt 60 samples (first half of the run), erf 30 (second half), own_work 10, 3 outside
/// every object.
fn pcsample_file(dir: &TempDir, flags: u32, dropped: u64) -> Vec<u8> {
    let exe = dir.join("prog");
    let libm = Path::new(LIBM);
    let (cbrt, erf, own) = (
        symbol(libm, "cbrt"),
        symbol(libm, "erf"),
        symbol(&exe, "own_work"),
    );
    let mut samples = Vec::new();
    for i in 0..60u64 {
        samples.push((i * 1_000_000, 1, LIBM_BIAS + cbrt + (i % 8)));
    }
    for i in 0..30u64 {
        samples.push(((60 + i) * 1_000_000, 2, LIBM_BIAS + erf + (i % 8)));
    }
    for i in 0..10u64 {
        samples.push(((90 + i) * 1_000_000, 1, EXE_BIAS + own + (i % 4)));
    }
    for i in 0..3u64 {
        samples.push((100_000_000 + i, 1, 0x10 + i));
    }
    let mut w = PcWriter::new(Vec::new(), Target::new(PtrSize::Eight, Endian::Little));
    w.header(&Header {
        rate_hz: 1000,
        flags,
        objects: 2,
        samples: samples.len() as u64,
        dropped,
        start_unix_ns: 0,
    })
    .unwrap();
    let (elo, ehi) = text(&exe);
    let (llo, lhi) = text(libm);
    let exe_path = exe.to_string_lossy().into_owned();
    let exe_id = build_id(&exe);
    let libm_id = build_id(libm);
    w.object(&Object {
        path: exe_path.as_bytes(),
        build_id: &exe_id,
        bias: EXE_BIAS,
        text_start: elo,
        text_end: ehi,
    })
    .unwrap();
    w.object(&Object {
        path: LIBM.as_bytes(),
        build_id: &libm_id,
        bias: LIBM_BIAS,
        text_start: llo,
        text_end: lhi,
    })
    .unwrap();
    for (t, tid, pc) in samples {
        w.sample(&Sample {
            time_ns: t,
            tid,
            pc,
        })
        .unwrap();
    }
    w.finish().unwrap()
}

fn csv_rows(text: &str) -> Vec<(String, String, f64)> {
    text.lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f[1].to_owned(), f[2].to_owned(), f[5].parse().unwrap())
        })
        .collect()
}

#[test]
fn pcsample_flat_profile_per_object_and_function() {
    let dir = TempDir::new("lines-pcs");
    prog(&dir);
    std::fs::write(dir.join("run.pcs"), pcsample_file(&dir, 0, 0)).unwrap();
    let text = ours_ok(dir.path(), &["--csv", "run.pcs", "prog"]);
    let rows = csv_rows(&text);
    let find = |o: &str, f: &str| {
        rows.iter()
            .find(|r| r.0 == o && r.1 == f)
            .map(|r| r.2)
            .unwrap_or_else(|| panic!("no {o} {f}:\n{text}"))
    };
    assert_eq!(find("libm.so.6", "cbrt"), 60.0);
    assert_eq!(find("libm.so.6", "erf"), 30.0);
    assert_eq!(find("prog", "own_work"), 10.0);
    assert_eq!(find("<unknown object>", "<unknown object>"), 3.0);
    assert_eq!(rows.len(), 4, "{text}");
    assert_eq!((rows[0].1.as_str(), rows[1].1.as_str()), ("cbrt", "erf"));
    // The table says where the samples came from and how many threads there were.
    let table = ours(dir.path(), &["prog", "run.pcs"]);
    let t = String::from_utf8(table.stdout).unwrap();
    assert!(
        t.contains("2 threads") && t.contains("103 samples at 1000 Hz"),
        "{t}"
    );
}

#[test]
fn pcsample_timeline_text_and_svg() {
    let dir = TempDir::new("lines-pcs-tl");
    prog(&dir);
    std::fs::write(dir.join("run.pcs"), pcsample_file(&dir, 0, 0)).unwrap();
    let out = ours(
        dir.path(),
        &["--timeline", "--svg", "chart.svg", "run.pcs", "prog"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let row = |name: &str| {
        text.lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("no {name} row:\n{text}"))
            .to_owned()
    };
    // cbrt fills the first ~60% of the buckets and erf the next ~30%.
    let cbrt = row("cbrt [libm.so.6]");
    let erf = row("erf [libm.so.6]");
    let bars = |l: &str| l.split('|').nth(1).unwrap().to_owned();
    let (c, e) = (bars(&cbrt), bars(&erf));
    assert!(cbrt.ends_with("| 60") && erf.ends_with("| 30"), "{text}");
    let first = |s: &str| s.find(|ch| ch != ' ').unwrap();
    let last = |s: &str| s.rfind(|ch| ch != ' ').unwrap();
    assert!(first(&c) == 0 && last(&c) <= first(&e), "{text}");
    let svg = std::fs::read_to_string(dir.join("chart.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
    assert!(svg.contains("cbrt [libm.so.6] (60)"), "{svg}");
    assert!(svg.matches("<rect").count() > 60, "too few bars");
}

#[test]
fn pcsample_full_buffer_and_damage_are_reported() {
    let dir = TempDir::new("lines-pcs-bad");
    prog(&dir);
    std::fs::write(
        dir.join("full.pcs"),
        pcsample_file(&dir, FLAG_BUFFER_FULL, 12345),
    )
    .unwrap();
    let out = ours(dir.path(), &["full.pcs", "prog"]);
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("12345 samples were dropped"), "{err}");
    let data = pcsample_file(&dir, 0, 0);
    for cut in [9, 70, data.len() - 5] {
        std::fs::write(dir.join("cut.pcs"), &data[..cut]).unwrap();
        let out = ours(dir.path(), &["cut.pcs", "prog"]);
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.starts_with("profil-report: cut.pcs: pcsample file: ") && err.contains(" at byte "),
            "{err}"
        );
        assert_eq!(err.lines().count(), 1, "{err}");
    }
}

/// gmon.out for the executable, one gmon file for libm at libm's link-time addresses, and
/// the manifest: one report with an object column.
#[test]
fn manifest_report_across_objects() {
    let dir = TempDir::new("lines-manifest");
    prog(&dir);
    let exe = dir.join("prog");
    let libm = Path::new(LIBM);
    let target = Target::new(PtrSize::Eight, Endian::Little);
    let hist = |lo: u64, hi: u64, at: &[(u64, u16)]| {
        let mut w = Writer::new(Vec::new(), target);
        w.gnu_header().unwrap();
        let n = ((hi - lo) / 4) as u32;
        let h = HistHeader {
            low_pc: lo,
            high_pc: lo + u64::from(n) * 4,
            hist_size: n,
            prof_rate: 100,
            dimension: Dimension::SECONDS,
        };
        let bins = (0..u64::from(n)).map(|i| {
            at.iter()
                .filter(|(a, _)| (a - lo) / 4 == i)
                .map(|x| x.1)
                .sum::<u16>()
        });
        w.gnu_histogram(&h, bins).unwrap();
        w.into_inner()
    };
    let (elo, ehi) = text(&exe);
    let (llo, lhi) = text(libm);
    let own = symbol(&exe, "own_work");
    let (cbrt, erf) = (symbol(libm, "cbrt"), symbol(libm, "erf"));
    std::fs::write(dir.join("gmon.out"), hist(elo, ehi, &[(own, 7)])).unwrap();
    std::fs::write(
        dir.join("gmon.out.libm.so.6"),
        hist(llo, lhi, &[(cbrt, 50), (erf + 8, 20)]),
    )
    .unwrap();
    let mut m = Vec::new();
    gmon::manifest::write_header(&mut m).unwrap();
    let libm_id = build_id(libm);
    for (kind, file, path, id, lo, hi) in [
        (
            gmon::manifest::Kind::Exe,
            "gmon.out",
            exe.to_string_lossy().into_owned(),
            Vec::new(),
            elo,
            ehi,
        ),
        (
            gmon::manifest::Kind::Lib,
            "gmon.out.libm.so.6",
            LIBM.to_owned(),
            libm_id,
            llo,
            lhi,
        ),
    ] {
        gmon::manifest::write_entry(
            &mut m,
            &gmon::manifest::Entry {
                kind,
                gmon_file: file.as_bytes(),
                build_id: gmon::manifest::BuildId::new(&id).unwrap(),
                bias: 0,
                text_start: lo,
                text_end: hi,
                path: gmon::manifest::Path::raw(path.as_bytes()),
            },
        )
        .unwrap();
    }
    std::fs::write(dir.join("gmon.out.objects"), &m).unwrap();
    let text = ours_ok(dir.path(), &["--csv", "gmon.out", "prog"]);
    let rows = csv_rows(&text);
    let want = [
        ("libm.so.6", "cbrt", 50.0),
        ("libm.so.6", "erf", 20.0),
        ("prog", "own_work", 7.0),
    ];
    for (i, (o, f, s)) in want.iter().enumerate() {
        assert_eq!(
            (rows[i].0.as_str(), rows[i].1.as_str(), rows[i].2),
            (*o, *f, *s),
            "{text}"
        );
    }
    assert_eq!(rows.len(), 3, "{text}");
    // A damaged manifest is one error line naming it.
    std::fs::write(
        dir.join("gmon.out.objects"),
        b"profil-rs objects 1\nlib\tx\n",
    )
    .unwrap();
    let out = ours(dir.path(), &["gmon.out", "prog"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("gmon.out.objects: objects manifest, line 2"),
        "{err}"
    );
}

/// The whole chain with the real runtime (preloaded): `PROFIL_RANGES=all` writes the
/// manifest and libm's own gmon file, `PROFIL_MODE=pcsample` the raw samples; both reports
/// put libm on top.
#[test]
fn real_runtime_outputs_put_libm_on_top() {
    let dir = TempDir::new("lines-e2e");
    prog(&dir);
    let so = ours(dir.path(), &["runtime-path", "--shared"]);
    assert!(
        so.status.success(),
        "{}",
        String::from_utf8_lossy(&so.stderr)
    );
    let so = String::from_utf8(so.stdout).unwrap().trim().to_owned();
    for (env, input) in [
        (("PROFIL_RANGES", "all"), "gmon.out"),
        (("PROFIL_MODE", "pcsample"), "gmon.out"),
    ] {
        for f in std::fs::read_dir(dir.path()).unwrap().flatten() {
            if f.file_name().to_string_lossy().starts_with("gmon.out") {
                std::fs::remove_file(f.path()).unwrap();
            }
        }
        let run = std::process::Command::new(dir.join("prog"))
            .current_dir(dir.path())
            .env("LD_PRELOAD", &so)
            .env(env.0, env.1)
            .env("PROFIL_HZ", "1000")
            .output()
            .unwrap();
        assert!(
            run.status.success(),
            "{}",
            String::from_utf8_lossy(&run.stderr)
        );
        let out = ours(dir.path(), &["--csv", input, "prog"]);
        assert!(
            out.status.success(),
            "{env:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8(out.stdout).unwrap();
        let rows = csv_rows(&text);
        let total: f64 = rows.iter().map(|r| r.2).sum();
        let libm: f64 = rows
            .iter()
            .filter(|r| r.0 == "libm.so.6")
            .map(|r| r.2)
            .sum();
        assert!(total >= 50.0, "{env:?}: too few samples:\n{text}");
        assert!(
            libm >= 0.4 * total,
            "{env:?}: libm has {libm} of {total}:\n{text}"
        );
        // libm is on top as an object (its functions' split, and so whether one of them
        // outranks own_work, depends on the CPU's libm code path).
        let mut by_object = std::collections::BTreeMap::<&str, f64>::new();
        for r in &rows {
            *by_object.entry(r.0.as_str()).or_default() += r.2;
        }
        let top = by_object
            .iter()
            .max_by(|a, b| a.1.total_cmp(b.1))
            .map(|(o, _)| *o);
        assert_eq!(top, Some("libm.so.6"), "{env:?}:\n{text}");
        assert!(
            rows.iter().any(|r| r.0 == "prog" && r.1 == "own_work"),
            "{text}"
        );
    }
}
