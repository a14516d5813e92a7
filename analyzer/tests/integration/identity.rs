//! Byte identity of every output mode on fixed inputs: the corpus that a refactoring of the
//! report front end, the builders or the renderers is checked against (issue 25). Each case
//! runs `profil-report` on one input of the corpus and compares its stdout — followed by its
//! stderr, when it wrote any, after a `--- stderr` line — with `fixtures/identity/golden/<case>`
//! ([`golden`]; `PROFIL_BLESS=1` rewrites them after an intended change).
//!
//! The corpus is made in a scratch directory for each case, from committed files only, so the
//! output is the same on every machine: the glibc profiles of `fixtures/gcc-pg` (symbols, no
//! DWARF), `fixtures/identity/inl` (DWARF with inlining) with a histogram and arcs placed by
//! symbol, and the runtime's side files written here through the `gmon` crate's writers: a
//! `.stacks` file, an objects manifest naming a second object, a pcsample file. See
//! `fixtures/identity/README.md`.

use crate::golden;
use crate::support::{fixtures_dir, TempDir};

use std::path::{Path, PathBuf};
use std::process::Command;

use gmon::manifest::{self, BuildId, Entry, Kind, Process};
use gmon::pcsample::{self, PcWriter};
use gmon::stacks::{self, StacksWriter};
use gmon::write::{HistHeader, Writer};
use gmon::{Dimension, Endian, PtrSize, Target};
use object::{Object as _, ObjectSegment, ObjectSymbol, SegmentFlags};
use profil_report::launch::processes::Found;
use profil_report::launch::run::{self, ReportStyle};
use profil_report::render::json::ReportObject;
use profil_report::request::{Format, Mode};
use serde_json::value::RawValue;

const TARGET: Target = Target::new(PtrSize::Eight, Endian::Little);
/// Where the stacks and pcsample files say the executables were loaded.
const BIAS: u64 = 0x5555_5555_4000;

/// The link-time address of `name` in the executable `exe`.
fn symbol(exe: &Path, name: &str) -> u64 {
    let data = std::fs::read(exe).unwrap();
    let f = object::File::parse(&*data).unwrap();
    f.symbols()
        .find(|s| s.name() == Ok(name))
        .unwrap_or_else(|| panic!("{}: no {name}", exe.display()))
        .address()
}

/// The link-time range of `exe`'s executable segment (what profil-rt records).
fn text(exe: &Path) -> (u64, u64) {
    let data = std::fs::read(exe).unwrap();
    let f = object::File::parse(&*data).unwrap();
    let s = f
        .segments()
        .find(|s| matches!(s.flags(), SegmentFlags::Elf { p_flags, .. } if p_flags.0 & 1 != 0))
        .unwrap();
    (s.address(), (s.address() + s.size()).next_multiple_of(16))
}

/// A GNU gmon file of `exe`: `samples` at (symbol, offset), `arcs` from (symbol, offset) to
/// symbol.
fn gmon_of(exe: &Path, samples: &[(&str, u64, u16)], arcs: &[(&str, u64, &str, u32)]) -> Vec<u8> {
    let (lo, hi) = text(exe);
    let lo = lo & !3;
    let n = hi.div_ceil(4) - lo / 4;
    let mut bins = vec![0u16; n as usize];
    for &(name, off, count) in samples {
        bins[((symbol(exe, name) + off - lo) / 4) as usize] += count;
    }
    let mut w = Writer::new(Vec::new(), TARGET);
    w.gnu_header().unwrap();
    let h = HistHeader {
        low_pc: lo,
        high_pc: lo + n * 4,
        hist_size: n as u32,
        prof_rate: 1000,
        dimension: Dimension::SECONDS,
    };
    w.gnu_histogram(&h, bins).unwrap();
    for &(from, off, to, count) in arcs {
        w.gnu_arc(symbol(exe, from) + off, symbol(exe, to), count)
            .unwrap();
    }
    w.into_inner()
}

/// The stacks file of `loop2.gmon`: `inner` under `outer` under `main`, `outer` alone under
/// `main`, and a frame outside every object.
fn loop2_stacks(exe: &Path) -> Vec<u8> {
    let (lo, hi) = text(exe);
    let at = |name: &str, off: u64| BIAS + symbol(exe, name) + off;
    let stacks: [(u64, Vec<u64>); 4] = [
        (40, vec![at("inner", 4), at("outer", 20), at("main", 12)]),
        (25, vec![at("inner", 9), at("outer", 20), at("main", 12)]),
        (6, vec![at("outer", 8), at("main", 12)]),
        (2, vec![0x10, at("main", 12)]),
    ];
    let mut w = StacksWriter::new(Vec::new());
    w.header(&stacks::Header {
        max_depth: 64,
        flags: 0,
        objects: 1,
        stacks: stacks.len() as u64,
        stats: stacks::WalkStats {
            walks: 73,
            complete: 71,
            bad_unwind: 2,
            ..Default::default()
        },
    })
    .unwrap();
    w.object(&stacks::Object {
        bias: BIAS,
        start: BIAS + lo,
        end: BIAS + hi,
        path: b"",
    })
    .unwrap();
    for (count, pcs) in stacks {
        // The stack through an address in no object is the walk that was cut short.
        let flags = if pcs[0] == 0x10 { stacks::STACK_CUT } else { 0 };
        w.stack_with_flags(count, pcs.len() as u32, flags, pcs)
            .unwrap();
    }
    w.finish().unwrap()
}

/// The manifest of `objs/`: `cycle` is the executable (`gmon.out`), `loop2` a library with its
/// own histogram (`gmon.out.loop2`), and the process line.
fn objects_manifest(dir: &Path, with_lib: bool) -> Vec<u8> {
    let mut m = Vec::new();
    manifest::write_header(&mut m).unwrap();
    manifest::write_process(
        &mut m,
        &Process {
            pid: Some(4242),
            ppid: Some(4200),
            clock: Some(manifest::Clock::Perf),
            nominal_hz: Some(1000),
            samples: Some(900),
            cpu_user_ns: Some(1_200_000_000),
            cpu_system_ns: Some(10_000_000),
            ..Default::default()
        },
    )
    .unwrap();
    let objects = [
        (Kind::Exe, "gmon.out", "cycle"),
        (Kind::Lib, "gmon.out.loop2", "loop2"),
    ];
    for &(kind, file, exe) in &objects[..if with_lib { 2 } else { 1 }] {
        let path = dir.join(exe);
        let (lo, hi) = text(&path);
        manifest::write_entry(
            &mut m,
            &Entry {
                kind,
                gmon_file: file.as_bytes(),
                build_id: BuildId::new(&[]).unwrap(),
                bias: 0,
                text_start: lo,
                text_end: hi,
                path: manifest::Path::raw(path.to_str().unwrap().as_bytes()),
            },
        )
        .unwrap();
    }
    m
}

/// A pcsample file of `inl`: two threads, `run_a` then `run_b` and `helper`, a few samples
/// outside every object.
fn inl_pcsample(exe: &Path) -> Vec<u8> {
    let (lo, hi) = text(exe);
    let at = |name: &str, off: u64| BIAS + symbol(exe, name) + off;
    let mut samples = Vec::new();
    for i in 0..50u64 {
        samples.push((i * 1_000_000, 7, at("run_a", 4 * (i % 12))));
    }
    for i in 0..30u64 {
        samples.push(((50 + i) * 1_000_000, 8, at("run_b", 4 * (i % 9))));
    }
    for i in 0..12u64 {
        samples.push(((80 + i) * 1_000_000, 8, at("helper", i % 4)));
    }
    samples.push((93_000_000, 7, 0x10));
    let mut w = PcWriter::new(Vec::new(), TARGET);
    w.header(&pcsample::Header {
        rate_hz: 1000,
        flags: 0,
        objects: 1,
        samples: samples.len() as u64,
        dropped: 0,
        start_unix_ns: 0,
    })
    .unwrap();
    w.object(&pcsample::Object {
        path: b"inl",
        build_id: b"",
        bias: BIAS,
        text_start: lo,
        text_end: hi,
    })
    .unwrap();
    for (time_ns, tid, pc) in samples {
        w.sample(&pcsample::Sample { time_ns, tid, pc }).unwrap();
    }
    w.finish().unwrap()
}

/// The corpus, in a fresh scratch directory.
fn corpus() -> TempDir {
    let dir = TempDir::new("identity");
    let d = dir.path();
    for name in ["cycle", "loop2", "recursion", "threads"] {
        for f in [name.to_owned(), format!("{name}.gmon")] {
            std::fs::copy(fixtures_dir("gcc-pg").join(&f), d.join(&f)).unwrap();
        }
    }
    std::fs::copy(fixtures_dir("identity/inl"), d.join("inl")).unwrap();
    let inl = d.join("inl");
    let write = |name: &str, bytes: &[u8]| std::fs::write(d.join(name), bytes).unwrap();
    write(
        "inl.gmon",
        &gmon_of(
            &inl,
            &[
                ("run_a", 0, 3),
                ("run_a", 8, 40),
                ("run_a", 24, 25),
                ("run_a", 40, 9),
                ("run_b", 4, 30),
                ("run_b", 20, 17),
                ("run_b", 36, 5),
                ("helper", 0, 11),
                ("main", 16, 2),
            ],
            &[
                ("main", 20, "run_a", 1),
                ("main", 30, "run_b", 1),
                ("run_b", 16, "helper", 20_000_000),
            ],
        ),
    );
    write("inl.pc", &inl_pcsample(&inl));
    // loop2 with its call stacks.
    std::fs::create_dir(d.join("stk")).unwrap();
    std::fs::copy(d.join("loop2.gmon"), d.join("stk/loop2.gmon")).unwrap();
    write("stk/loop2.gmon.stacks", &loop2_stacks(&d.join("loop2")));
    // cycle as the executable, loop2 as a library.
    std::fs::create_dir(d.join("objs")).unwrap();
    std::fs::copy(d.join("cycle.gmon"), d.join("objs/gmon.out")).unwrap();
    std::fs::copy(d.join("loop2.gmon"), d.join("objs/gmon.out.loop2")).unwrap();
    write("objs/gmon.out.objects", &objects_manifest(d, true));
    // The same again (two runs), and cycle alone with its manifest.
    std::fs::create_dir(d.join("objs2")).unwrap();
    for f in ["gmon.out", "gmon.out.loop2", "gmon.out.objects"] {
        std::fs::copy(d.join("objs").join(f), d.join("objs2").join(f)).unwrap();
    }
    std::fs::create_dir(d.join("objx")).unwrap();
    std::fs::copy(d.join("cycle.gmon"), d.join("objx/gmon.out")).unwrap();
    write("objx/gmon.out.objects", &objects_manifest(d, false));
    // Doubled loop2 for diff's "new" runs.
    run(
        d,
        &["merge", "-o", "loop2x2.gmon", "loop2.gmon", "loop2.gmon"],
    );
    // Fixed modification times: the pprof export records the newest profile's.
    let when = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_750_000_000);
    for sub in [".", "stk", "objs", "objs2", "objx"] {
        for e in std::fs::read_dir(d.join(sub)).unwrap() {
            let e = e.unwrap();
            if e.file_type().unwrap().is_file() {
                let f = std::fs::File::options().write(true).open(e.path()).unwrap();
                f.set_modified(when).unwrap();
            }
        }
    }
    dir
}

/// Run `profil-report args` in `dir`; stdout, then stderr (if any) after a `--- stderr` line,
/// then the exit status when not 0, with the scratch directory's path replaced by `$DIR`.
fn run(dir: &Path, args: &[&str]) -> Vec<u8> {
    let out = Command::new(env!("CARGO_BIN_EXE_profil-report"))
        .args(args)
        .current_dir(dir)
        .env("LC_ALL", "C")
        .env_remove("PROFIL_HZ")
        .output()
        .expect("run profil-report");
    let mut got = out.stdout;
    if !out.stderr.is_empty() {
        got.extend_from_slice(b"--- stderr\n");
        got.extend_from_slice(&out.stderr);
    }
    if !out.status.success() {
        got.extend_from_slice(format!("--- {}\n", out.status).as_bytes());
    }
    let text = String::from_utf8_lossy(&got).replace(dir.to_str().unwrap(), "$DIR");
    text.into_bytes()
}

/// The case `name`: `profil-report args` on the corpus, and for `export`/`convert`/`merge`
/// (`file` not `-`) the file written.
fn case(name: &str, args: &[&str]) {
    let dir = corpus();
    let mut got = run(dir.path(), args);
    let written = match args.iter().position(|a| *a == "-o") {
        Some(i) => Some(args[i + 1]),
        None if args[0] == "convert" => Some(args[4]),
        None => None,
    };
    if let Some(file) = written.filter(|f| *f != "-") {
        got.extend_from_slice(b"--- file\n");
        got.extend_from_slice(&std::fs::read(dir.join(file)).unwrap());
    }
    for svg in args.windows(2).filter(|w| w[0] == "--svg") {
        got.extend_from_slice(b"--- svg\n");
        got.extend_from_slice(&std::fs::read(dir.join(svg[1])).unwrap());
    }
    let path = fixtures_dir("identity/golden").join(name);
    if let Err(e) = golden::check(&path, &got) {
        panic!("`profil-report {}`: {e}", args.join(" "));
    }
}

/// One named test per case.
macro_rules! cases {
    ($($name:ident: [$($arg:expr),* $(,)?];)*) => {
        $(
            #[test]
            fn $name() {
                case(stringify!($name), &[$($arg),*]);
            }
        )*
    };
}

cases! {
    // The default report, each format, on every glibc profile.
    default_table_loop2: ["loop2", "loop2.gmon"];
    default_json_loop2: ["--json", "loop2", "loop2.gmon"];
    default_csv_loop2: ["--csv", "loop2", "loop2.gmon"];
    default_table_cycle: ["cycle", "cycle.gmon"];
    default_json_cycle: ["--json", "cycle", "cycle.gmon"];
    default_csv_cycle: ["--csv", "cycle", "cycle.gmon"];
    default_table_recursion: ["recursion", "recursion.gmon"];
    default_json_recursion: ["--json", "recursion", "recursion.gmon"];
    default_table_threads: ["threads", "threads.gmon"];
    default_json_threads: ["--json", "threads", "threads.gmon"];
    default_table_sum: ["loop2", "loop2.gmon", "loop2x2.gmon"];
    default_table_inl: ["inl", "inl.gmon"];
    default_json_inl: ["--json", "inl", "inl.gmon"];
    default_csv_inl: ["--csv", "inl", "inl.gmon"];
    // With the sampled call stacks.
    stacks_table: ["loop2", "stk/loop2.gmon"];
    stacks_json: ["--json", "loop2", "stk/loop2.gmon"];
    stacks_csv: ["--csv", "loop2", "stk/loop2.gmon"];
    // Lines and inlining.
    lines_table_inl: ["-l", "inl", "inl.gmon"];
    lines_json_inl: ["--lines", "--json", "inl", "inl.gmon"];
    lines_csv_inl: ["-l", "--csv", "inl", "inl.gmon"];
    lines_table_loop2: ["-l", "loop2", "loop2.gmon"];
    inline_table_inl: ["--inline", "inl", "inl.gmon"];
    // `--wide`: every column (the copies), full names (issue 24).
    inline_table_inl_wide: ["--wide", "--inline", "inl", "inl.gmon"];
    inline_json_inl: ["--inline", "--json", "inl", "inl.gmon"];
    inline_csv_inl: ["--inline", "--csv", "inl", "inl.gmon"];
    // The gprof emulation.
    gprof_b_cycle: ["--gprof", "-b", "cycle", "cycle.gmon"];
    gprof_b_loop2: ["--gprof", "-b", "loop2", "loop2.gmon"];
    gprof_b_recursion: ["--gprof", "-b", "recursion", "recursion.gmon"];
    gprof_b_threads: ["--gprof", "-b", "threads", "threads.gmon"];
    gprof_bp_cycle: ["--gprof", "-b", "-p", "cycle", "cycle.gmon"];
    gprof_bq_cycle: ["--gprof", "-b", "-q", "cycle", "cycle.gmon"];
    gprof_bpq_z_loop2: ["--gprof", "-b", "-p", "-q", "-z", "loop2", "loop2.gmon"];
    gprof_b_a_loop2: ["--gprof", "-b", "-a", "loop2", "loop2.gmon"];
    gprof_b_sum: ["--gprof", "-b", "loop2", "loop2.gmon", "loop2x2.gmon"];
    gprof_bl_inl: ["--gprof", "-b", "-l", "inl", "inl.gmon"];
    gprof_blp_inl: ["--gprof", "-b", "-l", "-p", "inl", "inl.gmon"];
    gprof_b_inl: ["--gprof", "-b", "inl", "inl.gmon"];
    gprof_no_brief: ["--gprof", "loop2", "loop2.gmon"];
    compare_gprof_cycle: ["--compare-gprof", "cycle", "cycle.gmon"];
    // The comparison is a table only: --json and --csv are refused (they printed the table).
    compare_gprof_json_refused: ["--compare-gprof", "--json", "cycle", "cycle.gmon"];
    compare_gprof_csv_refused: ["--compare-gprof", "--csv", "cycle", "cycle.gmon"];
    // The report across objects (an objects manifest beside gmon.out).
    objects_table: ["cycle", "objs/gmon.out"];
    objects_json: ["--json", "cycle", "objs/gmon.out"];
    objects_csv: ["--csv", "cycle", "objs/gmon.out"];
    objects_lines: ["-l", "cycle", "objs/gmon.out"];
    objects_two_runs: ["cycle", "objs/gmon.out", "objs2/gmon.out"];
    objects_exe_only: ["cycle", "objx/gmon.out"];
    objects_exe_only_json: ["--json", "cycle", "objx/gmon.out"];
    // A pcsample file.
    pcsample_table: ["inl", "inl.pc"];
    pcsample_json: ["--json", "inl", "inl.pc"];
    pcsample_csv: ["--csv", "inl", "inl.pc"];
    pcsample_timeline: ["--timeline", "inl", "inl.pc"];
    pcsample_svg: ["--svg", "tl.svg", "inl", "inl.pc"];
    // Exports.
    export_folded_stacks: ["export", "--to", "folded", "-o", "-", "loop2", "stk/loop2.gmon"];
    export_folded_cycle: ["export", "--to", "folded", "-o", "-", "cycle", "cycle.gmon"];
    export_callgrind_stacks: ["export", "--to", "callgrind", "-o", "-", "loop2", "stk/loop2.gmon"];
    export_callgrind_inl: ["export", "--to", "callgrind", "-o", "-", "inl", "inl.gmon"];
    export_speedscope_stacks: ["export", "--to", "speedscope", "-o", "-", "loop2", "stk/loop2.gmon"];
    export_svg_stacks: ["export", "--to", "svg", "-o", "-", "loop2", "stk/loop2.gmon"];
    export_pprof_stacks: ["export", "--to", "pprof", "-o", "p.pb.gz", "loop2", "stk/loop2.gmon"];
    export_folded_objects: ["export", "--to", "folded", "-o", "-", "cycle", "objs/gmon.out"];
    // Diff.
    diff_table: ["diff", "--base", "loop2.gmon", "loop2.gmon", "--new", "loop2x2.gmon", "loop2x2.gmon", "loop2"];
    diff_json: ["diff", "--json", "--base", "loop2.gmon", "loop2.gmon", "--new", "loop2x2.gmon", "loop2x2.gmon", "loop2"];
    diff_one_run: ["diff", "--base", "cycle.gmon", "--new", "cycle.gmon", "cycle"];
    // `--wide`: the intervals and the full prose lines (issue 24).
    diff_table_wide: ["diff", "--wide", "--base", "loop2.gmon", "loop2.gmon", "--new", "loop2x2.gmon", "loop2x2.gmon", "loop2"];
    // dump, convert, merge.
    dump_text_threads: ["dump", "threads.gmon", "--exe", "threads"];
    dump_all_bins_loop2: ["dump", "--all-bins", "loop2.gmon", "--exe", "loop2"];
    dump_json_inl: ["dump", "--json", "inl.gmon", "--exe", "inl"];
    dump_guessed: ["dump", "recursion.gmon"];
    convert_bsd: ["convert", "--to", "bsd", "cycle.gmon", "cycle.bsd", "--exe", "cycle"];
    convert_oldbsd: ["convert", "--to", "oldbsd", "loop2.gmon", "loop2.old"];
    merge_gnu: ["merge", "-o", "sum.gmon", "cycle.gmon", "cycle.gmon"];
    // Refused combinations.
    timeline_without_pcsample: ["--timeline", "loop2", "loop2.gmon"];
}

/// The launchers' report (`run`, `demo` and `cargo profil` print it for the program they ran)
/// of `profiles` against `exe`, in `style`; the note on a refused perf_event (which depends
/// on the machine) left out.
fn launch_case(name: &str, exe: &str, profiles: &[&str], style: ReportStyle) {
    let dir = corpus();
    let mut got = Vec::new();
    let profiles: Vec<PathBuf> = profiles.iter().map(|p| dir.join(p)).collect();
    run::print_report_of(&dir.join(exe), &profiles, None, style, &mut got).unwrap();
    launch_check(name, &dir, got);
}

fn launch_check(name: &str, dir: &TempDir, got: Vec<u8>) {
    let text = String::from_utf8(got).unwrap();
    let mut kept = String::new();
    let mut skip_blank = false;
    for line in text.split_inclusive('\n') {
        if line.starts_with("note: perf_event_open is not allowed") {
            skip_blank = true;
            continue;
        }
        if skip_blank && line == "\n" {
            skip_blank = false;
            continue;
        }
        kept.push_str(line);
    }
    let kept = kept.replace(dir.path().to_str().unwrap(), "$DIR");
    let path = fixtures_dir("identity/golden").join(name);
    golden::assert_golden(&path, kept.as_bytes());
}

/// A process of a tree, as `run` finds it.
fn found(dir: &TempDir, pid: u32, exe: &str, file: &str) -> Found {
    Found {
        pid,
        image: 0,
        file: dir.join(file),
        manifest: None,
        lib_files: Vec::new(),
        process: Some(Process {
            pid: Some(pid),
            ppid: Some(1),
            cpu_user_ns: Some(u64::from(pid) * 1_000_000),
            cpu_system_ns: Some(0),
            ..Default::default()
        }),
        exe: Some(dir.join(exe)),
        build_id: Vec::new(),
        exe_samples: 10,
        hz: 1000,
    }
}

/// `run --json` of a tree: the report shown with the list of processes (`all`: every
/// process's report).
fn launch_json_case(name: &str, all: bool) {
    let dir = corpus();
    let procs = [
        found(&dir, 100, "loop2", "stk/loop2.gmon"),
        found(&dir, 101, "cycle", "cycle.gmon"),
    ];
    let style = ReportStyle {
        format: Format::Json,
        all,
        ..Default::default()
    };
    let mut reports = Vec::new();
    for (i, p) in procs.iter().enumerate().take(if all { 2 } else { 1 }) {
        let mut text = Vec::new();
        let exe = p.exe.as_ref().unwrap();
        run::print_report_of(exe, std::slice::from_ref(&p.file), None, style, &mut text).unwrap();
        reports.push((vec![i], text));
    }
    let mut got = Vec::new();
    run::write_json_reports(&procs, &reports, all, &mut got).unwrap();
    launch_check(name, &dir, got);
}

/// One named test per launcher case: the report of the files against the executable, in the
/// style given (fields of [`ReportStyle`] other than the defaults).
macro_rules! launch_cases {
    ($($name:ident: $exe:literal, [$($file:literal),*], { $($field:ident: $value:expr),* };)*) => {
        $(
            #[test]
            fn $name() {
                let style = ReportStyle {
                    $($field: $value,)*
                    ..Default::default()
                };
                launch_case(stringify!($name), $exe, &[$($file),*], style);
            }
        )*
    };
}

launch_cases! {
    launch_table_stacks: "loop2", ["stk/loop2.gmon"], {};
    launch_json_inl: "inl", ["inl.gmon"], { format: Format::Json };
    launch_csv_inl: "inl", ["inl.gmon"], { format: Format::Csv };
    launch_lines_inl: "inl", ["inl.gmon"], { mode: Mode::Lines };
    launch_lines_json_inl: "inl", ["inl.gmon"], { mode: Mode::Lines, format: Format::Json };
    launch_inline_csv_inl: "inl", ["inl.gmon"], { mode: Mode::Inline, format: Format::Csv };
    launch_merged_table: "loop2", ["loop2.gmon", "loop2x2.gmon"], {};
    launch_objects_table: "cycle", ["objs/gmon.out"], {};
    launch_objects_json: "cycle", ["objs/gmon.out"], { format: Format::Json };
    launch_objects_lines: "cycle", ["objs/gmon.out"], { mode: Mode::Lines };
    launch_objects_two_runs: "cycle", ["objs/gmon.out", "objs2/gmon.out"], {};
    launch_objects_exe_only: "cycle", ["objx/gmon.out"], {};
}

#[test]
fn launch_json_tree() {
    launch_json_case("launch_json_tree", false);
}

#[test]
fn launch_json_tree_all() {
    launch_json_case("launch_json_tree_all", true);
}

/// `run --merge --json` of a tree whose two processes ran one program with a library: the
/// report across objects, summed, with the tree's list of processes instead of its own.
#[test]
fn launch_json_tree_merged_objects() {
    let dir = corpus();
    let procs = [
        found(&dir, 100, "cycle", "objs/gmon.out"),
        found(&dir, 101, "cycle", "objs2/gmon.out"),
    ];
    let style = ReportStyle {
        format: Format::Json,
        merge: true,
        ..Default::default()
    };
    let files = [procs[0].file.clone(), procs[1].file.clone()];
    let mut text = Vec::new();
    run::print_report_of(&dir.join("cycle"), &files, None, style, &mut text).unwrap();
    let mut got = Vec::new();
    run::write_json_reports(&procs, &[(vec![0, 1], text)], false, &mut got).unwrap();
    launch_check("launch_json_tree_merged_objects", &dir, got);
}

/// Each report's CSV columns are its JSON rows' keys, in order, so the lists a report's row is
/// written from (the JSON row struct, the CSV fields) agree; one difference is known: the
/// report across objects (and pcsample's) has `location` in JSON only.
#[test]
fn csv_columns_are_the_json_row_keys() {
    let cases = [
        ("default_csv_inl", "default_json_inl", "rows", &[][..]),
        ("stacks_csv", "stacks_json", "rows", &[]),
        ("lines_csv_inl", "lines_json_inl", "lines", &[]),
        ("inline_csv_inl", "inline_json_inl", "functions", &[]),
        ("objects_csv", "objects_json", "rows", &["location"]),
        ("pcsample_csv", "pcsample_json", "rows", &["location"]),
    ];
    for (csv, json, rows, json_only) in cases {
        let dir = corpus();
        let args = |name: &str| -> Vec<&str> {
            match name {
                "default_csv_inl" => vec!["--csv", "inl", "inl.gmon"],
                "default_json_inl" => vec!["--json", "inl", "inl.gmon"],
                "stacks_csv" => vec!["--csv", "loop2", "stk/loop2.gmon"],
                "stacks_json" => vec!["--json", "loop2", "stk/loop2.gmon"],
                "lines_csv_inl" => vec!["-l", "--csv", "inl", "inl.gmon"],
                "lines_json_inl" => vec!["-l", "--json", "inl", "inl.gmon"],
                "inline_csv_inl" => vec!["--inline", "--csv", "inl", "inl.gmon"],
                "inline_json_inl" => vec!["--inline", "--json", "inl", "inl.gmon"],
                "objects_csv" => vec!["--csv", "cycle", "objs/gmon.out"],
                "objects_json" => vec!["--json", "cycle", "objs/gmon.out"],
                "pcsample_csv" => vec!["--csv", "inl", "inl.pc"],
                _ => vec!["--json", "inl", "inl.pc"],
            }
        };
        let stdout = |name: &str| {
            let out = Command::new(env!("CARGO_BIN_EXE_profil-report"))
                .args(args(name))
                .current_dir(dir.path())
                .output()
                .unwrap();
            assert!(out.status.success(), "{name}");
            String::from_utf8(out.stdout).unwrap()
        };
        let header: Vec<String> = stdout(csv)
            .lines()
            .next()
            .unwrap()
            .split(',')
            .map(str::to_owned)
            .collect();
        // Keys in order: the report's object read as the library reads reports back.
        let doc = ReportObject::parse(stdout(json).as_bytes()).unwrap();
        let (_, list) = doc.0.iter().find(|(k, _)| k == rows).unwrap();
        let list: Vec<Box<RawValue>> = serde_json::from_str(list.get()).unwrap();
        let first = ReportObject::parse(list[0].get().as_bytes()).unwrap();
        let keys: Vec<String> = first
            .0
            .into_iter()
            .map(|(k, _)| k)
            .filter(|k| !json_only.contains(&k.as_str()))
            .collect();
        assert_eq!(header, keys, "{csv} vs {json}");
    }
}
