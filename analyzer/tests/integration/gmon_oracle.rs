//! GNU gprof as the oracle for `profil-report convert` and `merge`: `gprof -b -p PROG OUT` must
//! print exactly what `gprof -b -p PROG IN...` prints. Runs the real `gprof` binary on the
//! fixtures of fixtures/gcc-pg and on files built from them.

use std::path::{Path, PathBuf};
use std::process::Command;

use gmon::merge::{OutputFormat, Profile};
use gmon::write::{HistHeader, Writer};
use gmon::{parse, Target};

use crate::support;

use support::TempDir;

const BIN: &str = env!("CARGO_BIN_EXE_profil-report");
const PROGRAMS: [&str; 4] = ["loop2", "recursion", "cycle", "threads"];

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/gcc-pg")
}

/// `gprof -b -p exe files...`: stdout, which must be non-trivial (a success with a table).
fn gprof(exe: &Path, files: &[&Path]) -> String {
    let out = Command::new("gprof")
        .arg("-b")
        .arg("-p")
        .arg(exe)
        .args(files)
        .output()
        .expect("run gprof");
    assert!(
        out.status.success(),
        "gprof {files:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let s = String::from_utf8(out.stdout).unwrap();
    assert!(s.starts_with("Flat profile:"), "{s}");
    s
}

/// Run profil-report; returns (exit code, stdout, stderr).
fn run(args: &[&std::ffi::OsStr]) -> (i32, String, String) {
    let out = Command::new(BIN).args(args).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `profil-report convert --to TO INPUT OUT [--exe EXE]`, which must succeed.
fn convert_ok(to: &str, input: &Path, out: &Path, exe: Option<&Path>) {
    let mut args = vec![os("convert"), os("--to"), os(to), os(input), os(out)];
    if let Some(exe) = exe {
        args.extend([os("--exe"), os(exe)]);
    }
    let (code, _, err) = run(&args);
    assert_eq!(code, 0, "convert --to {to} {}: {err}", input.display());
}

fn os<S: AsRef<std::ffi::OsStr> + ?Sized>(s: &S) -> &std::ffi::OsStr {
    s.as_ref()
}

#[test]
fn convert_is_invisible_to_gprof() {
    let tmp = TempDir::new("convert");
    let dir = tmp.path();
    for prog in PROGRAMS {
        let exe = fixtures().join(prog);
        let input = fixtures().join(format!("{prog}.gmon"));
        let expected = gprof(&exe, &[&input]);
        for to in ["gnu", "bsd", "oldbsd"] {
            let out = dir.join(format!("{prog}.{to}"));
            convert_ok(to, &input, &out, Some(&exe));
            assert_eq!(gprof(&exe, &[&out]), expected, "{prog} --to {to}");
            // And back to GNU, guessing the target this time.
            let back = dir.join(format!("{prog}.{to}.gnu"));
            convert_ok("gnu", &out, &back, None);
            assert_eq!(gprof(&exe, &[&back]), expected, "{prog} --to {to} then gnu");
        }
        // GNU -> GNU is byte-identical for glibc's files (one histogram, distinct arcs).
        let same = std::fs::read(dir.join(format!("{prog}.gnu"))).unwrap();
        assert_eq!(same, std::fs::read(&input).unwrap(), "{prog}");
    }
}

/// A fresh profile of the same executable, written by glibc now.
fn fresh_run(prog: &str, dir: &Path) -> PathBuf {
    let run_dir = dir.join(format!("run-{prog}"));
    std::fs::create_dir_all(&run_dir).unwrap();
    let st = Command::new(fixtures().join(prog))
        .current_dir(&run_dir)
        .output()
        .unwrap();
    assert!(st.status.success());
    let p = dir.join(format!("{prog}.fresh.gmon"));
    std::fs::rename(run_dir.join("gmon.out"), &p).unwrap();
    p
}

#[test]
fn merge_equals_gprof_on_all_inputs() {
    let tmp = TempDir::new("merge");
    let dir = tmp.path();
    for prog in ["loop2", "cycle"] {
        let exe = fixtures().join(prog);
        let a = fixtures().join(format!("{prog}.gmon"));
        let b = fresh_run(prog, dir);
        // A BSD copy of the fresh run, so the inputs mix formats.
        let b_bsd = dir.join(format!("{prog}.fresh.bsd"));
        convert_ok("bsd", &b, &b_bsd, None);
        for inputs in [
            vec![&a, &b],
            vec![&a, &b, &a],
            vec![&a, &b_bsd],
            vec![&b_bsd, &a, &a],
        ] {
            let out = dir.join(format!("{prog}.sum"));
            let mut args = vec![
                os("merge"),
                os("-o"),
                out.as_os_str(),
                os("--exe"),
                exe.as_os_str(),
            ];
            args.extend(inputs.iter().map(|p| p.as_os_str()));
            let (code, _, err) = run(&args);
            assert_eq!(code, 0, "{err}");
            let ins: Vec<&Path> = inputs.iter().map(|p| p.as_path()).collect();
            assert_eq!(gprof(&exe, &[&out]), gprof(&exe, &ins), "{prog} {inputs:?}");
        }
    }
}

/// A copy of `src` (a GNU file with one histogram) with every bin replaced by `f(bin)`.
fn rewrite(src: &Path, dst: &Path, f: impl Fn(u16) -> u16) {
    let data = std::fs::read(src).unwrap();
    let t = Target::guess(&data);
    let g = parse(&data, t).unwrap();
    let h = &g.histograms[0];
    let mut out = Vec::new();
    let mut w = Writer::new(&mut out, t);
    w.gnu_header().unwrap();
    let header = HistHeader {
        low_pc: h.low_pc,
        high_pc: h.high_pc,
        hist_size: h.hist_size,
        prof_rate: h.prof_rate.unwrap(),
        dimension: h.dimension,
    };
    w.gnu_histogram(&header, h.bins.iter().map(&f)).unwrap();
    for a in &g.arcs {
        w.gnu_arc(a.from_pc, a.self_pc, a.count as u32).unwrap();
    }
    std::fs::write(dst, out).unwrap();
}

#[test]
fn bins_above_65535_survive_a_gnu_merge() {
    // Two files whose hot bins are near the u16 limit: the sum needs layered records.
    let tmp = TempDir::new("wide");
    let dir = tmp.path();
    let exe = fixtures().join("cycle");
    let hot = dir.join("hot.gmon");
    rewrite(&fixtures().join("cycle.gmon"), &hot, |b| {
        if b > 0 {
            60000 + b
        } else {
            0
        }
    });
    let sum = dir.join("sum.gmon");
    let (code, _, err) = run(&[
        os("merge"),
        os("-o"),
        sum.as_os_str(),
        hot.as_os_str(),
        hot.as_os_str(),
        hot.as_os_str(),
    ]);
    assert_eq!(code, 0, "{err}");
    let data = std::fs::read(&sum).unwrap();
    let g = parse(&data, Target::guess(&data)).unwrap();
    assert_eq!(
        g.histograms.len(),
        3,
        "120000+ samples per hot bin need three layers"
    );
    let expected = gprof(&exe, &[&hot, &hot, &hot]);
    assert_eq!(gprof(&exe, &[&sum]), expected);
    // In BSD format the same sum must clip, and say so.
    let bsd = dir.join("sum.bsd");
    let (code, out, err) = run(&[
        os("merge"),
        os("--to"),
        os("bsd"),
        os("-o"),
        bsd.as_os_str(),
        hot.as_os_str(),
        hot.as_os_str(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("samples clipped"), "{out}");
    assert_ne!(gprof(&exe, &[&bsd]), gprof(&exe, &[&hot, &hot]));
}

#[test]
fn disjoint_histograms_are_kept_and_bsd_refuses_them() {
    let tmp = TempDir::new("disjoint");
    let dir = tmp.path();
    let exe = fixtures().join("loop2");
    let src = fixtures().join("loop2.gmon");
    let data = std::fs::read(&src).unwrap();
    let g = parse(&data, Target::guess(&data)).unwrap();
    let h = &g.histograms[0];
    let two = dir.join("two.gmon");
    // glibc's bins are ~3.99 bytes wide, and gprof requires every record to have the same
    // scale within 1e-6, so lay the two halves on an exact 4-byte grid.
    let data4 = {
        let nb = h.hist_size as usize;
        let mut out = Vec::new();
        let t = Target::guess(&data);
        let mut w = Writer::new(&mut out, t);
        w.gnu_header().unwrap();
        let bins: Vec<u16> = h.bins.iter().collect();
        let k = nb / 2;
        for (lo, hi) in [(0, k), (k, nb)] {
            let header = HistHeader {
                low_pc: h.low_pc + 4 * lo as u64,
                high_pc: h.low_pc + 4 * hi as u64,
                hist_size: (hi - lo) as u32,
                prof_rate: 100,
                dimension: h.dimension,
            };
            w.gnu_histogram(&header, bins[lo..hi].iter().copied())
                .unwrap();
        }
        for a in &g.arcs {
            w.gnu_arc(a.from_pc, a.self_pc, a.count as u32).unwrap();
        }
        out
    };
    std::fs::write(&two, &data4).unwrap();
    let expected = gprof(&exe, &[&two]);
    let out = dir.join("two.sum");
    let (code, _, err) = run(&[
        os("merge"),
        os("-o"),
        out.as_os_str(),
        two.as_os_str(),
        two.as_os_str(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(gprof(&exe, &[&out]), gprof(&exe, &[&two, &two]));
    let conv = dir.join("two.gnu");
    convert_ok("gnu", &two, &conv, None);
    assert_eq!(gprof(&exe, &[&conv]), expected);
    // BSD formats hold a single histogram.
    let bsd = dir.join("two.bsd");
    let (code, _, err) = run(&[
        os("convert"),
        os("--to"),
        os("bsd"),
        two.as_os_str(),
        bsd.as_os_str(),
    ]);
    assert_eq!(code, 2);
    assert!(
        err.starts_with("profil-report: ") && err.contains("one histogram"),
        "{err}"
    );
    assert!(!bsd.exists(), "nothing is written on failure");
    let leftovers: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".tmp."))
        .collect();
    assert!(
        leftovers.is_empty(),
        "temporary files left behind: {leftovers:?}"
    );
}

#[test]
fn merge_errors_name_the_file_and_both_ranges() {
    let tmp = TempDir::new("overlap");
    let dir = tmp.path();
    let src = fixtures().join("loop2.gmon");
    let data = std::fs::read(&src).unwrap();
    let t = Target::guess(&data);
    let g = parse(&data, t).unwrap();
    // The same histogram shifted by 0x100: overlaps without being identical.
    let mut p = Profile::from_file(&g).unwrap();
    p.histograms[0].low_pc += 0x100;
    p.histograms[0].high_pc += 0x100;
    let mut shifted = Vec::new();
    p.write(&mut Writer::new(&mut shifted, t), OutputFormat::Gnu)
        .unwrap();
    let sh = dir.join("shifted.gmon");
    std::fs::write(&sh, shifted).unwrap();
    let out = dir.join("never.gmon");
    let (code, stdout, err) = run(&[
        os("merge"),
        os("-o"),
        out.as_os_str(),
        src.as_os_str(),
        sh.as_os_str(),
    ]);
    assert_eq!(code, 2, "{stdout}");
    let h = &g.histograms[0];
    let want = format!(
        "profil-report: {}: overlapping histogram records: [{:#x}, {:#x}) overlaps [{:#x}, {:#x}) at byte 20\n",
        sh.display(),
        h.low_pc + 0x100,
        h.high_pc + 0x100,
        h.low_pc,
        h.high_pc
    );
    assert_eq!(err, want);
    assert!(!out.exists());
    // gprof agrees that these files cannot be combined.
    let st = Command::new("gprof")
        .args(["-b", "-p"])
        .arg(fixtures().join("loop2"))
        .arg(&src)
        .arg(&sh)
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&st.stderr).contains("overlapping histogram records"));
}

#[test]
fn dump_reports_everything_and_errors_are_one_line() {
    let exe = fixtures().join("cycle");
    let input = fixtures().join("cycle.gmon");
    let data = std::fs::read(&input).unwrap();
    let g = parse(&data, Target::guess(&data)).unwrap();
    let (code, text, err) = run(&[os("dump"), input.as_os_str(), os("--exe"), exe.as_os_str()]);
    assert_eq!(code, 0, "{err}");
    for needle in [
        "format:          GNU gmon (version 1)".to_string(),
        "pointer size:    8 bytes (from executable".to_string(),
        format!("total samples:   {}", g.total_samples()),
        format!(
            "arcs:            {} ({} calls)",
            g.arcs.len(),
            g.total_calls()
        ),
        format!("  bins:          {} at byte 61", g.histograms[0].hist_size),
    ] {
        assert!(text.contains(&needle), "missing {needle:?} in\n{text}");
    }
    let nonzero = g.histograms[0].bins.iter().filter(|&b| b != 0).count();
    assert_eq!(
        text.lines()
            .filter(|l| l.trim_start().starts_with("bin "))
            .count(),
        nonzero
    );
    assert_eq!(
        text.lines()
            .filter(|l| l.trim_start().starts_with("at byte"))
            .count(),
        g.arcs.len()
    );
    let (_, guessed, _) = run(&[os("dump"), input.as_os_str()]);
    assert!(guessed.contains("guessed from the file"), "{guessed}");
    let (code, json, _) = run(&[os("dump"), os("--json"), input.as_os_str()]);
    assert_eq!(code, 0);
    assert!(json.starts_with("{\"file\":") && json.ends_with("]}\n"));
    assert!(json.contains("\"format\":\"gnu\",\"version\":1,\"pointer_size\":8,\"endian\":\"little\",\"target_source\":\"guessed\""));
    // Every bin appears in the JSON.
    let bins_part = json
        .split("\"bins\":[")
        .nth(1)
        .unwrap()
        .split(']')
        .next()
        .unwrap();
    assert_eq!(
        bins_part.split(',').count(),
        g.histograms[0].hist_size as usize
    );

    // A truncated copy: exit 2, one line, file name and byte offset.
    let tmp = TempDir::new("dump-err");
    let dir = tmp.path();
    let cut = dir.join("cut.gmon");
    std::fs::write(&cut, &data[..100]).unwrap();
    let (code, out, err) = run(&[os("dump"), cut.as_os_str()]);
    assert_eq!(code, 2);
    assert!(out.is_empty());
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with(&format!(
            "profil-report: {}: histogram record: hist_size: ",
            cut.display()
        )),
        "{err}"
    );
    assert!(err.trim_end().ends_with("at byte 37"), "{err}");
    // A missing file and a non-ELF --exe are errors too.
    let (code, _, err) = run(&[os("dump"), dir.join("absent").as_os_str()]);
    assert_eq!(code, 2);
    assert!(err.contains("cannot read"), "{err}");
    let (code, _, err) = run(&[
        os("dump"),
        input.as_os_str(),
        os("--exe"),
        input.as_os_str(),
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("not a readable executable"), "{err}");
}

/// A tiny ELF32 (i386) executable assembled at test time, with `alpha` at +0x10 and `beta`
/// at +0x50 of a text starting at 0x08049000.
fn elf32(dir: &Path) -> PathBuf {
    let src = dir.join("p.s");
    std::fs::write(
        &src,
        "    .text\n    .globl _start\n_start:\n    call alpha\n    call beta\n    jmp _start\n\
         \x20   .p2align 4\n    .globl alpha\n    .type alpha,@function\nalpha:\n    .fill 60, 1, 0x90\n    ret\n\
         \x20   .size alpha, .-alpha\n    .p2align 4\n    .globl beta\n    .type beta,@function\nbeta:\n\
         \x20   .fill 124, 1, 0x90\n    ret\n    .size beta, .-beta\n",
    )
    .unwrap();
    let obj = dir.join("p.o");
    let exe = dir.join("p");
    assert!(Command::new("as")
        .arg("--32")
        .arg(&src)
        .arg("-o")
        .arg(&obj)
        .status()
        .unwrap()
        .success());
    assert!(Command::new("ld")
        .args(["-m", "elf_i386", "-o"])
        .arg(&exe)
        .arg(&obj)
        .status()
        .unwrap()
        .success());
    exe
}

#[test]
fn thirty_two_bit_profiles_with_a_real_elf32() {
    let tmp = TempDir::new("elf32");
    let dir = tmp.path();
    let exe = elf32(dir);
    let t = Target::new(gmon::PtrSize::Four, gmon::Endian::Little);
    let mut data = Vec::new();
    let mut w = Writer::new(&mut data, t);
    w.gnu_header().unwrap();
    let low = 0x0804_9000u64;
    let header = HistHeader {
        low_pc: low,
        high_pc: low + 0xd0,
        hist_size: 52,
        prof_rate: 100,
        dimension: gmon::Dimension::SECONDS,
    };
    // 3 samples in _start, 7 in alpha, 11 in beta.
    let hot = [(0usize, 3u16), (4, 5), (9, 2), (20, 6), (40, 5)];
    let bins = (0..52usize).map(|i| hot.iter().find(|h| h.0 == i).map_or(0, |h| h.1));
    w.gnu_histogram(&header, bins).unwrap();
    w.gnu_arc(low, low + 0x10, 10).unwrap();
    w.gnu_arc(low, low + 0x50, 20).unwrap();
    let gnu = dir.join("p32.gmon");
    std::fs::write(&gnu, &data).unwrap();
    let expected = gprof(&exe, &[&gnu]);
    assert!(
        expected.contains("alpha") && expected.contains("beta"),
        "{expected}"
    );
    for to in ["gnu", "bsd", "oldbsd"] {
        let out = dir.join(format!("p32.{to}"));
        convert_ok(to, &gnu, &out, Some(&exe));
        assert_eq!(gprof(&exe, &[&out]), expected, "--to {to}");
    }
    // A 4.4BSD file holds pointer-sized (here 4-byte) counts: 12 bytes per arc.
    let bsd = std::fs::read(dir.join("p32.bsd")).unwrap();
    assert_eq!(bsd.len(), 32 + 104 + 2 * 12);
    let sum = dir.join("p32.sum");
    let (code, _, err) = run(&[
        os("merge"),
        os("-o"),
        sum.as_os_str(),
        os("--exe"),
        exe.as_os_str(),
        gnu.as_os_str(),
        dir.join("p32.oldbsd").as_os_str(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        gprof(&exe, &[&sum]),
        gprof(&exe, &[&gnu, &dir.join("p32.oldbsd")])
    );
    let (code, text, _) = run(&[os("dump"), gnu.as_os_str(), os("--exe"), exe.as_os_str()]);
    assert_eq!(code, 0);
    assert!(
        text.contains("pointer size:    4 bytes (from executable"),
        "{text}"
    );
}

/// `gprof -i`'s record counts (histogram, call-graph, basic-block) for one file.
fn gprof_info(exe: &Path, file: &Path) -> (u32, usize, usize, usize) {
    let out = Command::new("gprof")
        .arg("-i")
        .arg(exe)
        .arg(file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let s = String::from_utf8(out.stdout).unwrap();
    let version = s
        .split("(version ")
        .nth(1)
        .unwrap()
        .split(')')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let n = |what: &str| -> usize {
        let line = s
            .lines()
            .find(|l| l.contains(what))
            .unwrap_or_else(|| panic!("{s}"));
        line.trim().split(' ').next().unwrap().parse().unwrap()
    };
    (
        version,
        n("histogram record"),
        n("call-graph record"),
        n("basic-block count record"),
    )
}

#[test]
fn record_counts_agree_with_gprof_info() {
    let tmp = TempDir::new("info");
    let dir = tmp.path();
    for prog in PROGRAMS {
        let exe = fixtures().join(prog);
        let gnu = fixtures().join(format!("{prog}.gmon"));
        // Plus a copy with a version-1 basic-block record appended (gprof counts it and warns).
        let with_bb = dir.join(format!("{prog}.bb.gmon"));
        let mut bytes = std::fs::read(&gnu).unwrap();
        Writer::new(&mut bytes, Target::guess(&std::fs::read(&gnu).unwrap()))
            .gnu_basic_blocks(2, [(0x10u64, 3u64), (0x20, 4)])
            .unwrap();
        std::fs::write(&with_bb, bytes).unwrap();
        let mut files = vec![gnu.clone(), with_bb];
        for to in ["bsd", "oldbsd"] {
            let out = dir.join(format!("{prog}.{to}"));
            convert_ok(to, &gnu, &out, None);
            files.push(out);
        }
        for f in files {
            let data = std::fs::read(&f).unwrap();
            let g = parse(&data, Target::guess(&data)).unwrap();
            let version = match g.format() {
                gmon::Format::Gnu { version } => version,
                _ => 0,
            };
            let nhist = if g.format().is_gnu() {
                g.histograms.len()
            } else {
                g.histograms.iter().filter(|h| h.hist_size > 0).count()
            };
            assert_eq!(
                gprof_info(&exe, &f),
                (version, nhist, g.arcs.len(), g.basic_blocks.len()),
                "{}",
                f.display()
            );
        }
    }
}
