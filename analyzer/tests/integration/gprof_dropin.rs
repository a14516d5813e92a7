//! `profil-report --gprof` as a drop-in for GNU gprof 2.40: the same command line gives the
//! same stdout and the same exit status as the installed gprof (run here, never recorded).
//!
//! Each case is its own test (`gprof_dropin::<program>::<case>`): one gprof command line, run
//! as `gprof ARGS` and as `profil-report --gprof ARGS` on each `-pg` program of
//! `fixtures/gcc-pg` (a loop, direct recursion, a cycle, threads). The cases cover gprof's
//! default (non-brief) output with its explanations, each section option with and without
//! `-b`, `-z`, `-a`, `-l`, `-i`, symbol specs (`-pNAME`, `-Q/NAME`, `-k FROM/TO`,
//! `-e/-E/-f/-F/-n/-N NAME`; names, files and lines), the options' order (`-p -P` and `-P -p` differ), clusters, long options and their
//! abbreviations, operands before options and after `--`, and getopt's failures (status 1).
//! Modules after the matrix build programs of their own: `-c`, `-s`, `-D`, demangling (every
//! style, on C, C++ and Rust-style names), `-R` (map files, with gprof's crashes), `-L`, `-A`.

use crate::support::{diff, fixtures_dir, gprof, ours};

/// Run one gprof command line both ways in `fixtures/gcc-pg`: `P` in `args` stands for the
/// program, `G` for its gmon file, `{f}` inside an argument for `func`, a function of the
/// program that has calls and time, and `{p}` for the program's name.
fn same(program: &str, func: &str, args: &[&str]) {
    let dir = fixtures_dir("gcc-pg");
    let gmon = format!("{program}.gmon");
    let args: Vec<String> = args
        .iter()
        .map(|&a| match a {
            "P" => program.to_string(),
            "G" => gmon.clone(),
            a => a.replace("{f}", func).replace("{p}", program),
        })
        .collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    same_in(&dir, &args);
}

/// [`same_in`] for each set of `flags`, followed by `inputs` (the executable and its gmon
/// files).
fn same_in_each(dir: &std::path::Path, flags: &[&[&str]], inputs: &[&str]) {
    for f in flags {
        let args: Vec<&str> = f.iter().chain(inputs).copied().collect();
        same_in(dir, &args);
    }
}

/// Run `gprof ARGS` and `profil-report --gprof ARGS` in `dir`: the same exit status and
/// stdout, and nothing on stdout when gprof fails.
fn same_in(dir: &std::path::Path, args: &[&str]) {
    let (want, got) = same_status_and_stdout(dir, args);
    if want.status.success() {
        assert!(
            !want.stdout.is_empty() || args.contains(&"-Q"),
            "{args:?}: vacuous"
        );
    } else if !args
        .iter()
        .any(|a| *a == "-i" || *a == "-bi" || *a == "--file-info")
    {
        // Only -i's lines come out before gprof fails (for the files read before a bad one).
        assert!(got.stdout.is_empty(), "{args:?}: printed before failing");
    }
}

/// Run `gprof ARGS` and `profil-report --gprof ARGS` in `dir`, check that the exit status and
/// stdout are the same, and return both runs (gprof's first).
fn same_status_and_stdout(
    dir: &std::path::Path,
    args: &[&str],
) -> (std::process::Output, std::process::Output) {
    same_as(dir, args, gprof(dir, args))
}

/// Run `profil-report --gprof ARGS` in `dir` and check that its exit status and stdout are
/// those of gprof's run `want`; return both runs (gprof's first).
fn same_as(
    dir: &std::path::Path,
    args: &[&str],
    want: std::process::Output,
) -> (std::process::Output, std::process::Output) {
    let mut ours_args = vec!["--gprof"];
    ours_args.extend_from_slice(args);
    let got = ours(dir, &ours_args);
    assert_eq!(
        got.status.code(),
        want.status.code(),
        "{args:?}: exit status (gprof: {}; ours: {})",
        String::from_utf8_lossy(&want.stderr),
        String::from_utf8_lossy(&got.stderr)
    );
    assert!(
        want.stdout == got.stdout,
        "{args:?}: stdout differs from gprof's:\n{}",
        diff(&want.stdout, &got.stdout)
    );
    (want, got)
}

/// Build `source` (the file `src`) as `name` with `tool -pg` and `flags` in a scratch
/// directory and run it once, keeping its profile as `name.gmon`.
fn profiled(
    tool: &str,
    src: &str,
    source: &str,
    name: &str,
    flags: &[&str],
) -> crate::support::TempDir {
    use crate::support::{compile, profile_run, TempDir};
    let dir = TempDir::new("gprof-dropin");
    if let Some(parent) = std::path::Path::new(src).parent() {
        std::fs::create_dir_all(dir.join(&parent.to_string_lossy())).unwrap();
    }
    std::fs::write(dir.join(src), source).unwrap();
    let mut args = vec!["-pg"];
    args.extend_from_slice(flags);
    args.extend_from_slice(&["-o", name, src]);
    compile(dir.path(), tool, &args);
    profile_run(dir.path(), name, &[], &format!("{name}.gmon"));
    dir
}

/// The command lines, as `name: [args]`; `cases!(program)` makes them the tests of one
/// module per fixture program.
macro_rules! cases {
    ($program:ident, $func:expr) => {
        mod $program {
            cases!(@tests $program, $func;
            // The default output, as every tutorial runs it.
            default: ["P", "G"],
            default_image_only_reads_gmon_out_missing: ["P"],
            brief: ["-b", "P", "G"],
            flat: ["-p", "P", "G"],
            flat_brief: ["-b", "-p", "P", "G"],
            graph: ["-q", "P", "G"],
            graph_brief: ["-b", "-q", "P", "G"],
            no_flat: ["-P", "P", "G"],
            no_graph: ["-Q", "P", "G"],
            no_flat_brief: ["-b", "-P", "P", "G"],
            flat_and_graph: ["-p", "-q", "P", "G"],
            // Order matters: -P after -p turns it off again (gprof then guesses, minus the flat profile).
            flat_then_no_flat: ["-p", "-P", "P", "G"],
            no_flat_then_flat: ["-P", "-p", "P", "G"],
            no_flat_no_graph: ["-P", "-Q", "P", "G"],
            graph_then_no_graph_with_flat: ["-q", "-Q", "-p", "P", "G"],
            zeros: ["-z", "P", "G"],
            zeros_brief_flat: ["-z", "-b", "-p", "P", "G"],
            no_static: ["-a", "P", "G"],
            lines: ["-l", "P", "G"],
            lines_flat: ["-p", "-l", "P", "G"],
            lines_graph_brief: ["-b", "-q", "-l", "P", "G"],
            // Clusters of flags without arguments.
            cluster_bp: ["-bp", "P", "G"],
            cluster_bzq: ["-bzq", "P", "G"],
            cluster_abl: ["-abl", "P", "G"],
            // Long options and unique abbreviations.
            long_brief_flat: ["--brief", "--flat-profile", "P", "G"],
            long_abbreviated: ["--bri", "--gr", "--display-unused", "P", "G"],
            long_no_graph: ["--no-graph", "P", "G"],
            long_no_flat_profile: ["--no-flat-profile", "P", "G"],
            long_line_no_static: ["--line", "--no-static", "-b", "P", "G"],
            // getopt permutes: options may follow the files; `--` ends the options.
            options_after_files: ["P", "G", "-b", "-p"],
            double_dash: ["-b", "--", "P", "G"],
            // gprof sums several gmon files (here the same one twice).
            two_gmon_files: ["-b", "P", "G", "G"],
            // -i: what each file holds, alone (no report) or before the sections.
            file_info: ["-i", "P", "G"],
            file_info_two_files: ["-i", "P", "G", "G"],
            file_info_flat: ["-i", "-p", "P", "G"],
            file_info_graph_brief: ["-bi", "-q", "P", "G"],
            file_info_lines: ["--file-info", "-l", "P", "G"],
            // Symbol specs (function names): the optional argument of -p/-P/-q/-Q, glued.
            flat_of: ["-p{f}", "P", "G"],
            flat_of_brief: ["-b", "-p{f}", "P", "G"],
            flat_of_colon_form: ["-p:{f}", "P", "G"],
            flat_without: ["-P{f}", "P", "G"],
            flat_without_main: ["-Pmain", "-b", "P", "G"],
            graph_of: ["-q{f}", "P", "G"],
            graph_of_main: ["-b", "-qmain", "P", "G"],
            graph_without: ["-Q{f}", "P", "G"],
            graph_without_main_brief: ["-b", "-Qmain", "P", "G"],
            graph_of_unknown_name: ["-qab", "P", "G"],
            flat_of_unknown_name: ["-pnosuch", "-b", "P", "G"],
            long_flat_of: ["--flat-profile={f}", "-b", "P", "G"],
            long_graph_without: ["--no-graph={f}", "-b", "P", "G"],
            lines_flat_of: ["-l", "-b", "-p{f}", "P", "G"],
            // Specs naming a source file or a line: the fixtures have no debug information,
            // so no symbol has a file or a line (a table of no symbol is empty: `-pFILE` is
            // `-p`); line 0 is "any line", every symbol.
            file_flat_of: ["-b", "-p{p}.c", "P", "G"],
            file_function_flat_of: ["-b", "-p{p}.c:{f}", "P", "G"],
            file_line_graph_of: ["-b", "-q{p}.c:12", "P", "G"],
            line_flat_of_lines: ["-b", "-p", "-l", "-p12", "P", "G"],
            line_zero_flat_without: ["-b", "-P0", "P", "G"],
            file_without_dot_graph_without: ["-b", "-Q{p}:", "P", "G"],
            file_arcs_without: ["-b", "-k", "{p}.c/{f}", "P", "G"],
            file_exec_counts_of: ["-C{p}.c", "-z", "P", "G"],
            file_function_time_and_graph_of: ["-b", "-F", "{p}.c:{f}", "P", "G"],
            // Arc specs: -q/-Q FROM/TO and -k FROM/TO.
            arcs_into: ["-b", "-q/{f}", "P", "G"],
            arcs_from_main: ["-b", "-qmain/", "P", "G"],
            arcs_without_into: ["-b", "-Q/{f}", "P", "G"],
            k_from_main: ["-b", "-k", "main/{f}", "P", "G"],
            k_glued_into: ["-k/{f}", "P", "G"],
            k_self: ["-b", "-k{f}/{f}", "P", "G"],
            k_without_slash: ["-b", "-kmain", "P", "G"],
            // The time and graph tables: -e/-E/-f/-F/-n/-N.
            e_graph_without: ["-b", "-e", "{f}", "P", "G"],
            big_e_time_and_graph_without: ["-b", "-E{f}", "P", "G"],
            f_graph_of: ["-b", "-f{f}", "P", "G"],
            big_f_time_and_graph_of: ["-F{f}", "P", "G"],
            big_f_main: ["-b", "-Fmain", "P", "G"],
            n_time_of: ["-b", "-n{f}", "P", "G"],
            big_n_time_without: ["-b", "-N{f}", "P", "G"],
            big_n_main: ["-N", "main", "P", "G"],
            long_time_without: ["--no-time={f}", "-b", "P", "G"],
            include_and_exclude: ["-b", "-qmain", "-Q{f}", "-e{f}", "P", "G"],
            static_call_graph: ["-c", "P", "G"],
            static_call_graph_brief_zeros: ["-bcz", "P", "G"],
            // -w: the index's width (atoi, at least 1).
            width_glued: ["-b", "-w30", "P", "G"],
            width_separate: ["-w", "200", "P", "G"],
            width_one: ["-bw1", "P", "G"],
            width_not_a_number: ["-b", "-wxyz", "P", "G"],
            width_long: ["--width=40", "-b", "-q", "P", "G"],
            // Annotation settings without -A: no effect.
            annotation_settings: ["-b", "-x", "-m", "3", "-t5", "-I/tmp", "P", "G"],
            // -O: the input format (auto), or gprof's failures.
            file_format_auto: ["-b", "-Oa", "P", "G"],
            file_format_prof: ["-Op", "P", "G"],
            file_format_unknown: ["--file-format=x", "P", "G"],
            // -T: BSD style (call graph first, its own explanation and layout, raw names).
            traditional: ["-T", "P", "G"],
            traditional_brief: ["-T", "-b", "P", "G"],
            traditional_flat: ["-T", "-p", "P", "G"],
            traditional_graph_brief: ["-bT", "-q", "P", "G"],
            traditional_zeros_lines: ["-T", "-z", "-l", "-b", "P", "G"],
            traditional_file_info: ["--traditional", "-i", "P", "G"],
            // -C/-Z: execution counts (by address without debug info), with or without a name.
            exec_counts: ["-C", "P", "G"],
            exec_counts_zeros: ["-C", "-z", "P", "G"],
            exec_counts_of: ["-C{f}", "-z", "P", "G"],
            exec_counts_without: ["-Z{f}", "-z", "P", "G"],
            exec_counts_on_then_off: ["-C", "-Z", "-b", "P", "G"],
            exec_counts_after_flat: ["-C", "-p", "-b", "P", "G"],
            exec_counts_lines: ["-C", "-l", "-z", "P", "G"],
            exec_counts_long: ["--exec-counts=main", "-b", "-q", "P", "G"],
            // -A under -l: no source file without debug information (the flat profile only).
            annotated_lines_flat: ["-A", "-l", "-p", "-b", "P", "G"],
            // getopt's failures and gprof's: status 1, nothing on stdout.
            invalid_option: ["-j", "P", "G"],
            invalid_option_in_cluster: ["-bj", "P", "G"],
            ambiguous_long_option: ["--no", "P", "G"],
            unknown_long_option: ["--flat-profiles", "P", "G"],
            argument_to_a_flag: ["--brief=yes", "P", "G"],
            missing_required_argument: ["P", "G", "-k"],
            missing_gmon_file: ["-b", "P", "no-such.gmon"],
            missing_image: ["-b", "no-such-program", "G"],
            // -i prints the files read before one that is missing, then fails.
            file_info_later_gmon_missing: ["-i", "P", "G", "no-such.gmon"],
            file_info_brief_flat_later_gmon_missing: ["-bi", "-p", "P", "G", "G", "no-such.gmon"],
            // -R: a map that is missing; -r with -R.
            file_ordering_missing_map: ["-R", "no-such.map", "P", "G"],
            file_ordering_with_function_ordering: ["-r", "-Rno-such.map", "P", "G"],
            // --demangle=STYLE: GNAT's brackets every C name that is not Ada-like; java and
            // dlang change no C name.
            demangle_gnat: ["--demangle=gnat", "P", "G"],
            demangle_gnat_zeros_brief: ["-b", "-z", "--demangle=gnat", "P", "G"],
            demangle_gnat_lines: ["-b", "-l", "--demangle=gnat", "P", "G"],
            demangle_gnat_traditional: ["-T", "--demangle=gnat", "P", "G"],
            demangle_java_zeros: ["-z", "--demangle=java", "P", "G"],
            demangle_dlang_zeros_graph: ["-b", "-z", "-q", "--demangle=dlang", "P", "G"],
            // -B: gprof's old spelling of -q without a name.
            old_graph_option: ["-B", "P", "G"],
            old_graph_option_brief_flat: ["-b", "-B", "-p", "P", "G"],
            // -h and -v: gprof's usage and version texts, status 0, as soon as read (after
            // the banner of a -d before them; what follows is not parsed).
            help: ["-h", "P", "G"],
            help_long_after_debug: ["-d4", "--help", "P", "G"],
            version: ["-v"],
            version_long_before_a_bad_option: ["--version", "-j", "P", "G"],
            version_in_cluster: ["-bv", "P", "G"],

            );
        }
    };
    (@tests $program:ident, $func:expr; $($case:ident: [$($arg:expr),*],)*) => {
        $(
            #[test]
            fn $case() {
                super::same(stringify!($program), $func, &[$($arg),*]);
            }
        )*
    };
}

cases!(loop2, "inner");
cases!(recursion, "fib");
cases!(cycle, "ping");
cases!(threads, "work_a");

/// `-i` when a later gmon file cannot be read: gprof prints what the files before it hold
/// (it prints each file's lines as it reads it), then fails with status 1.
mod file_info_then_failure {
    use crate::support::fixtures_dir;

    #[test]
    fn later_gmon_file_missing() {
        let dir = fixtures_dir("gcc-pg");
        for args in [
            &["-i", "loop2", "loop2.gmon", "no-such.gmon"][..],
            &["-i", "cycle", "cycle.gmon", "cycle.gmon", "no-such.gmon"],
            &[
                "-i",
                "-b",
                "-p",
                "recursion",
                "recursion.gmon",
                "no-such.gmon",
            ],
            &["-i", "-l", "loop2", "loop2.gmon", "no-such.gmon"],
            &["-i", "loop2", "loop2.gmon", "no-such.gmon", "loop2.gmon"],
            &["loop2", "loop2.gmon", "no-such.gmon"],
        ] {
            let (want, _) = super::same_status_and_stdout(&dir, args);
            assert!(!want.status.success(), "{args:?}: gprof succeeded");
            if args[0] == "-i" {
                assert!(!want.stdout.is_empty(), "{args:?}: vacuous");
            }
        }
    }
}

/// `-R MAP` (`--file-ordering`): the map's files in gprof's suggested link order, and every
/// section with the mapped functions renamed to their files. gprof runs with `malloc`'s fresh
/// memory zeroed: it reads its map entries' run-start flag uninitialised (see
/// `gprof::file_order`), and zeroed memory gives what its code means.
mod file_ordering {
    use crate::support::GPROF_ADDRESS_SPACE;
    use crate::support::{fixtures_dir, limit_address_space, ours, TempDir};
    use std::path::Path;
    use std::process::{Command, Output};

    fn gprof(dir: &Path, args: &[&str]) -> Output {
        let mut cmd = Command::new("gprof");
        limit_address_space(&mut cmd, GPROF_ADDRESS_SPACE)
            .args(args)
            .current_dir(dir)
            .env("LC_ALL", "C")
            .env("GLIBC_TUNABLES", "glibc.malloc.tcache_count=0")
            .env("MALLOC_PERTURB_", "255")
            .output()
            .expect("GNU gprof")
    }

    fn scratch() -> TempDir {
        let dir = TempDir::new("gprof-dropin-file-order");
        for f in ["loop2", "cycle", "recursion", "threads"] {
            for name in [f.to_string(), format!("{f}.gmon")] {
                std::fs::copy(fixtures_dir("gcc-pg").join(&name), dir.join(&name)).unwrap();
            }
        }
        dir
    }

    /// Our run of `args`, checked against gprof's run of `gprof_args` (the same command
    /// unless gprof crashes on it): status and stdout.
    fn check(dir: &Path, args: &[&str], gprof_args: &[&str]) -> Output {
        super::same_as(dir, args, gprof(dir, gprof_args)).0
    }

    /// Write `map` as `map` in `dir` and run `-R map ARGS` both ways.
    fn same(dir: &TempDir, map: &str, args: &[&str]) -> Output {
        std::fs::write(dir.join("map"), map).unwrap();
        let mut all = vec!["-R", "map"];
        all.extend_from_slice(args);
        check(dir.path(), &all, &all)
    }

    const LOOP2: &[&str] = &["loop2", "loop2.gmon"];

    fn with<'a>(flags: &[&'a str], files: &[&'a str]) -> Vec<&'a str> {
        flags.iter().chain(files).copied().collect()
    }

    #[test]
    fn one_object_file() {
        let dir = scratch();
        let map = "loop2.o: inner\nloop2.o: outer\nloop2.o: main\n";
        let out = same(&dir, map, LOOP2);
        assert_eq!(out.stdout, b"loop2.o\n", "not what the brief saw");
        for flags in [
            &["-p"][..],
            &["-b", "-p", "-q"],
            &["-q"],
            &["-z", "-b", "-q"],
            &["-a", "-b", "-p"],
            &["-i"],
            &["-T"],
            &["-c", "-b", "-q"],
            &["--file-ordering=map", "-b"],
        ] {
            same(&dir, map, &with(flags, LOOP2));
        }
    }

    /// `-d` with `-R`: `core_create_function_syms` traces a mapped function under its object
    /// file's name and skips one the map drops (each map here starts a run at every line:
    /// gprof reads the flag of a run's further lines uninitialised); each bit level; the
    /// `-r` conflict fails after the banners.
    #[test]
    fn debug_traces() {
        let dir = scratch();
        for (map, files) in [
            ("a.o: inner\nb.o: outer\na.o: main\n", LOOP2),
            (
                "x.o: ping\ny.o: pong\nz.o: main\n",
                &["cycle", "cycle.gmon"][..],
            ),
        ] {
            for flags in [
                &["-d"][..],
                &["-d", "-b"],
                &["-d1", "-b"],
                &["-d128", "-b"],
                &["-d512", "-b"],
                &["-d4096", "-b"],
                &["-d", "-b", "-q", "-pmain", "-kmain/"],
                &["-d", "-c", "-b", "-q"],
            ] {
                same(&dir, map, &with(flags, files));
            }
        }
        same(&dir, "a.o: inner\n", &with(&["-d2", "-r", "-d"], LOOP2));
    }

    #[test]
    fn several_object_files_and_runs() {
        let dir = scratch();
        for (map, files) in [
            ("a.o: inner\nb.o: outer\nc.o: main\n", LOOP2),
            ("a.o: inner\nb.o: outer\na.o: main\n", LOOP2),
            ("b.o: main\na.o: inner\na.o: outer\n", LOOP2),
            (
                "x.o: ping\ny.o: pong\nz.o: main\n",
                &["cycle", "cycle.gmon"][..],
            ),
            (
                "x.o: ping\nx.o: pong\nz.o: main\n",
                &["cycle", "cycle.gmon"],
            ),
            (
                "f.o: fib\nl.o: leaf\nm.o: main\n",
                &["recursion", "recursion.gmon"],
            ),
            ("f.o: fib\nf.o: leaf\n", &["recursion", "recursion.gmon"]),
            (
                "w.o: worker\na.o: work_a\nb.o: work_b\nm.o: main\n",
                &["threads", "threads.gmon"],
            ),
        ] {
            for flags in [&[][..], &["-b"], &["-b", "-p", "-q"], &["-z", "-q"]] {
                same(&dir, map, &with(flags, files));
            }
        }
    }

    #[test]
    fn symbols_absent_and_lines_skipped() {
        let dir = scratch();
        for map in [
            "a.o: zzz\n",
            "a.o: zzz\na.o: inner\nb.o: outer\n",
            "No symbols in empty.o\na.o: inner\nNo symbols in other.o\nb.o: outer\n",
            "No symbols in empty.o\n",
            "a.o: inner\nNo symbols in x.o",
            "z.o: inner\na.o: outer\nm.o: nosuch\nb.o: nosuch2\n",
            "a.o: inner\nb.o: inner\n",
            "  a.o: inner\n   b.o: outer x  \n",
            "a.o:0000000000000000 T inner\nb.o:0000000000000000 T outer\n",
            "a.o: inner\nb c",
            "\u{e9}.o: inner\na.o: outer\n",
        ] {
            same(&dir, map, LOOP2);
            same(&dir, map, &with(&["-b", "-p"], LOOP2));
        }
    }

    #[test]
    fn gprofs_failures() {
        let dir = scratch();
        for map in [
            ":x\n",
            "a.o: inner\nb.o\nc.o: main\n",
            "\n",
            "a.o: inner\n:x\n",
        ] {
            let out = same(&dir, map, LOOP2);
            assert_eq!(out.status.code(), Some(1), "{map:?}");
        }
        let out = check(
            dir.path(),
            &["-R", "nosuch", "loop2", "loop2.gmon"],
            &["-R", "nosuch", "loop2", "loop2.gmon"],
        );
        assert_eq!(out.status.code(), Some(1));
        std::fs::write(dir.join("map"), "a.o: inner\n").unwrap();
        for args in [&["-r", "-R", "map"][..], &["-R", "map", "-r"]] {
            let out = check(dir.path(), &with(args, LOOP2), &with(args, LOOP2));
            assert_eq!(out.status.code(), Some(1));
        }
    }

    /// Where gprof segfaults, the emulation does what the code means: an empty map maps
    /// nothing; a symbol part without a space is the text after the colon (all of it without
    /// one). Each is checked against gprof on the map as it was meant.
    #[test]
    fn where_gprof_crashes() {
        let dir = scratch();
        let run = |map: &str, meant: &str, flags: &[&str]| {
            std::fs::write(dir.join("map"), map).unwrap();
            std::fs::write(dir.join("meant"), meant).unwrap();
            let crashed = gprof(dir.path(), &with(&with(&["-R", "map"], flags), LOOP2));
            assert_eq!(
                crashed.status.code(),
                None,
                "{map:?}: gprof no longer crashes"
            );
            check(
                dir.path(),
                &with(&with(&["-R", "map"], flags), LOOP2),
                &with(&with(&["-R", "meant"], flags), LOOP2),
            );
        };
        for flags in [&[][..], &["-b", "-p", "-q"]] {
            run("a.o:inner\nb.o:outer\n", "a.o: inner\nb.o: outer\n", flags);
            run("a.o: inner\nb.o", "a.o: inner\nb.o: b.o\n", flags);
            run("a.o:\nb.o: outer\n", "a.o: \nb.o: outer\n", flags);
        }
        // An empty map: nothing mapped, nothing to order.
        std::fs::write(dir.join("map"), "").unwrap();
        assert_eq!(
            gprof(dir.path(), &with(&["-R", "map"], LOOP2))
                .status
                .code(),
            None
        );
        let got = ours(dir.path(), &with(&["--gprof", "-R", "map"], LOOP2));
        assert!(got.status.success() && got.stdout.is_empty());
        check(
            dir.path(),
            &with(&["-R", "map", "-b", "-p", "-q"], LOOP2),
            &with(&["-b", "-p", "-q"], LOOP2),
        );
    }

    /// `-R` with line symbols (`-l`, and `-s`, which implies it): the function symbols the map
    /// renames stay mapped beside the line symbols (never mapped), so an arc from a line
    /// symbol counts as placed; every report names the files with their `(file:line @ addr)`.
    /// `-s` writes the same gmon.sum as gprof.
    #[test]
    fn with_line_symbols() {
        const SOURCE: &str = "static volatile long s;\n#define K __attribute__((noinline))\n\
            K void leaf(long n) { for (long i = 0; i < n; i++)\n  s += i; }\n\
            K static void helper(long n) { for (long i = 0; i < n; i++) s ^= i; leaf(n / 2); }\n\
            K void mid(long n) { helper(n); leaf(n);\n  leaf(3); }\n\
            int main(void) { for (int k = 0; k < 300; k++) mid(100000); return 0; }\n";
        for opt in ["-O0", "-O2"] {
            let dir = super::profiled("gcc", "p.c", SOURCE, "p", &["-g", opt]);
            for map in [
                "a.o: leaf\nb.o: mid\nc.o: main\nd.o: nosuch\n",
                "a.o: leaf\na.o: helper\nb.o: mid\nb.o: main\n",
                "x.o: helper\n",
                "No symbols in e.o\nm.o: main\n",
            ] {
                std::fs::write(dir.join("map"), map).unwrap();
                for flags in [
                    &["-l"][..],
                    &["-l", "-b"],
                    &["-l", "-b", "-p"],
                    &["-l", "-q"],
                    &["-l", "-b", "-p", "-q", "-z"],
                    &["-l", "-a", "-b", "-p", "-q"],
                    &["-l", "-i"],
                    &["-l", "-C"],
                    &["-l", "-A", "-b"],
                    &["-s", "-b", "-p"],
                    &["-s"],
                ] {
                    let args = with(&with(&["-R", "map"], flags), &["p", "p.gmon", "p.gmon"]);
                    let sum = dir.join("gmon.sum");
                    let _ = std::fs::remove_file(&sum);
                    let want = gprof(dir.path(), &args);
                    let want_sum = std::fs::read(&sum).ok();
                    let _ = std::fs::remove_file(&sum);
                    let (want, _) = super::same_as(dir.path(), &args, want);
                    assert!(want.status.success(), "{args:?}");
                    assert!(!want.stdout.is_empty(), "{args:?}: vacuous");
                    assert_eq!(want_sum.is_some(), flags[0] == "-s", "{args:?}");
                    assert!(
                        want_sum == std::fs::read(&sum).ok(),
                        "{args:?}: gmon.sum differs from gprof's"
                    );
                }
            }
            // Where gprof segfaults (a symbol part without a space), the map as it was meant.
            std::fs::write(dir.join("map"), "a.o:leaf\nb.o:mid\n").unwrap();
            std::fs::write(dir.join("meant"), "a.o: leaf\nb.o: mid\n").unwrap();
            for flags in [&["-l"][..], &["-l", "-b", "-p", "-q"]] {
                let args = with(flags, &["p", "p.gmon"]);
                let crashed = gprof(dir.path(), &with(&["-R", "map"], &args));
                assert_eq!(crashed.status.code(), None, "gprof no longer crashes");
                check(
                    dir.path(),
                    &with(&["-R", "map"], &args),
                    &with(&["-R", "meant"], &args),
                );
            }
        }
    }

    /// The intended producer: `nm --extern-only --defined-only -v --print-file-name` on the
    /// object files (gprof's manual), for a program of three files.
    #[test]
    fn nm_map_of_object_files() {
        use crate::support::{compile, profile_run};
        let dir = TempDir::new("gprof-dropin-file-order-nm");
        let sources = [
            ("main.c", "void a_work(long); void b_work(long);\nint main(void) { for (int i = 0; i < 30; i++) { a_work(300000); b_work(100000); } return 0; }\n"),
            ("a.c", "static volatile long s; void b_work(long);\nstatic void a_helper(long n) { for (long i = 0; i < n; i++) s += i; }\nvoid a_work(long n) { a_helper(n); b_work(n / 10); }\n"),
            ("b.c", "static volatile long t;\nvoid b_work(long n) { for (long i = 0; i < n; i++) t ^= i; }\nvoid b_unused(void) { t = 0; }\n"),
            ("empty.c", "int nothing_here;\n"),
        ];
        for (name, text) in sources {
            std::fs::write(dir.join(name), text).unwrap();
            compile(dir.path(), "gcc", &["-pg", "-O1", "-c", name]);
        }
        compile(
            dir.path(),
            "gcc",
            &["-pg", "-o", "prog", "main.o", "a.o", "b.o", "empty.o"],
        );
        profile_run(dir.path(), "prog", &[], "prog.gmon");
        let nm = Command::new("nm")
            .args(["--extern-only", "--defined-only", "-v", "--print-file-name"])
            .args(["main.o", "a.o", "b.o", "empty.o"])
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert!(nm.status.success());
        std::fs::write(dir.join("map"), &nm.stdout).unwrap();
        for flags in [&[][..], &["-b"], &["-b", "-p", "-q"], &["-a", "-z"]] {
            let args = with(&with(&["-R", "map"], flags), &["prog", "prog.gmon"]);
            let out = check(dir.path(), &args, &args);
            assert!(out.status.success());
        }
    }
}

/// `-c` (`--static-call-graph`) on a program built at `-O0`, where functions are laid out in
/// source order so that some calls go forwards (gprof's x86-64 scan finds only those): the
/// never-executed call `mid → never` and `unused_caller`'s calls become arcs with count 0.
pub(crate) mod static_calls {
    use crate::support::gprof;

    pub(super) const SOURCE: &str = r#"#include <stdio.h>
static volatile long sink;
void leaf(long n);
void never(void);
void mid(long n) { for (long i = 0; i < n; i++) leaf(i); if (n < 0) never(); }
static void helper(long n) { sink += n; }
void leaf(long n) { for (long i = 0; i < 2000; i++) sink += i * n; helper(n); }
void never(void) { sink = 0; leaf(1); }
void unused_caller(void) { mid(3); never(); }
int main(void) { for (int k = 0; k < 300; k++) mid(100); printf("%ld\n", sink); return 0; }
"#;

    fn same(dir: &crate::support::TempDir, flags: &[&str]) {
        let mut args = flags.to_vec();
        args.extend_from_slice(&["fwd", "fwd.gmon"]);
        super::same_in(dir.path(), &args);
    }

    #[test]
    fn static_call_graph_matches_gprof() {
        let dir = super::profiled("gcc", "fwd.c", SOURCE, "fwd", &["-O0"]);
        // Not vacuous: -c changes gprof's call graph here.
        let plain = gprof(dir.path(), &["-b", "-q", "-z", "fwd", "fwd.gmon"]);
        let with_c = gprof(dir.path(), &["-b", "-q", "-z", "-c", "fwd", "fwd.gmon"]);
        assert_ne!(plain.stdout, with_c.stdout, "-c found no static call");
        for flags in [
            &["-c"][..],
            &["-b", "-c"],
            &["-b", "-c", "-q", "-z"],
            &["-bcz"],
            &["--static-call-graph", "-b", "-p"],
            &["-c", "-a", "-b"],
            &["-c", "-l", "-b"],
            &["-c", "-b", "-Qnever"],
            &["-c", "-b", "-qmid/never"],
            &["-c", "-T"],
        ] {
            same(&dir, flags);
        }
    }
}

/// `-s` (`--sum`): stdout, status and the `gmon.sum` written (byte for byte, its spare header
/// bytes included) against gprof's, each run in a scratch copy of `fixtures/gcc-pg`; also a
/// 4.4BSD input (whose header size differs) and gmon.sum summed again with another file.
mod sum_file {
    use crate::support::{fixtures_dir, gprof, ours, TempDir};

    /// The fixtures `loop2`, `cycle`, `recursion` with their gmon files, and `cycle.gmon` as a
    /// 4.4BSD (`cycle.bsd`) and an old BSD (`cycle.old`) file, in a scratch directory.
    pub(super) fn scratch() -> TempDir {
        let dir = TempDir::new("gprof-dropin-sum");
        for f in ["loop2", "cycle", "recursion"] {
            for name in [f.to_string(), format!("{f}.gmon")] {
                std::fs::copy(fixtures_dir("gcc-pg").join(&name), dir.join(&name)).unwrap();
            }
        }
        // cycle.gmon as a 4.4BSD (cycle.bsd) and an old BSD (cycle.old) file.
        for (format, name) in [("bsd", "cycle.bsd"), ("oldbsd", "cycle.old")] {
            let o = ours(
                dir.path(),
                &[
                    "convert",
                    "--to",
                    format,
                    "cycle.gmon",
                    name,
                    "--exe",
                    "cycle",
                ],
            );
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        }
        dir
    }

    /// Run `args` with gprof, then with us: the same status and stdout ([`super::same_as`]);
    /// returns the gmon.sum each wrote (`None`: none).
    pub(super) fn sums(dir: &TempDir, args: &[&str]) -> (Option<Vec<u8>>, Option<Vec<u8>>) {
        let sum = dir.join("gmon.sum");
        let _ = std::fs::remove_file(&sum);
        let want = gprof(dir.path(), args);
        let want_sum = std::fs::read(&sum).ok();
        let _ = std::fs::remove_file(&sum);
        super::same_as(dir.path(), args, want);
        (want_sum, std::fs::read(&sum).ok())
    }

    /// Run `args` with gprof, then with us; compare all.
    pub(super) fn same(dir: &TempDir, args: &[&str]) {
        let (want_sum, got_sum) = sums(dir, args);
        assert!(want_sum.is_some(), "{args:?}: gprof wrote no gmon.sum");
        assert!(
            want_sum == got_sum,
            "{args:?}: gmon.sum differs from gprof's"
        );
    }

    /// `-O`: each file read as the format named, gprof's failures where it is another.
    #[test]
    fn file_formats() {
        let dir = scratch();
        for format in ["-Oa", "-Om", "-Ob", "-O4", "--file-format=magic"] {
            for files in [
                &["cycle.gmon"][..],
                &["cycle.bsd"],
                &["cycle.old"],
                &["cycle.gmon", "cycle.bsd"],
                &["cycle.bsd", "cycle.old"],
            ] {
                let mut args = vec!["-b", format, "cycle"];
                args.extend_from_slice(files);
                super::same_in(dir.path(), &args);
            }
        }
    }

    #[test]
    fn sum_of_one_file() {
        let dir = scratch();
        same(&dir, &["-s", "loop2", "loop2.gmon"]);
        same(&dir, &["-s", "-b", "-p", "recursion", "recursion.gmon"]);
        same(&dir, &["--sum", "-q", "cycle", "cycle.gmon"]);
    }

    #[test]
    fn sum_of_several_files_and_formats() {
        let dir = scratch();
        same(&dir, &["-bs", "cycle", "cycle.gmon", "cycle.gmon"]);
        same(&dir, &["-s", "cycle", "cycle.bsd"]);
        same(&dir, &["-s", "-b", "cycle", "cycle.gmon", "cycle.bsd"]);
    }

    /// `-d -s`, GNU and BSD sums (`[cg_write_arcs]`, `[dumpsum]`), and failing inputs (the
    /// traces of the files read before the bad one).
    #[test]
    fn sum_with_debug_traces() {
        let dir = scratch();
        same(&dir, &["-d", "-s", "cycle", "cycle.gmon"]);
        same(
            &dir,
            &["-d64", "-s", "-b", "cycle", "cycle.gmon", "cycle.gmon"],
        );
        same(
            &dir,
            &["-d", "-s", "-b", "-q", "-kping/pong", "cycle", "cycle.gmon"],
        );
        same(
            &dir,
            &["-d", "-s", "-Ob", "-b", "cycle", "cycle.old", "cycle.bsd"],
        );
        same(&dir, &["-d64", "-s", "-O4", "-b", "cycle", "cycle.bsd"]);
        for args in [
            &["-d", "-s", "-O4", "-b", "cycle", "cycle.bsd", "cycle.gmon"][..],
            &["-d", "-s", "-i", "-Om", "cycle", "cycle.gmon", "cycle.bsd"],
            &["-d", "-l", "-i", "-O4", "cycle", "cycle.bsd", "cycle.old"],
        ] {
            super::same_status_and_stdout(dir.path(), args);
        }
    }

    /// `-s` under `-Ob`/`-O4` writes a BSD gmon.sum (old or 4.4BSD header), which reads back.
    #[test]
    fn sum_in_bsd_formats() {
        let dir = scratch();
        same(&dir, &["-s", "-Ob", "-b", "cycle", "cycle.bsd"]);
        same(&dir, &["-s", "-O4", "cycle", "cycle.bsd", "cycle.bsd"]);
        same(&dir, &["-s", "-Ob", "-b", "-p", "cycle", "cycle.old"]);
        std::fs::rename(dir.join("gmon.sum"), dir.join("bsd.sum")).unwrap();
        same(
            &dir,
            &["-s", "-Ob", "-b", "-q", "cycle", "bsd.sum", "cycle.bsd"],
        );
    }

    #[test]
    fn sum_read_back_and_summed_again() {
        let dir = scratch();
        same(&dir, &["-s", "recursion", "recursion.gmon"]);
        std::fs::rename(dir.join("gmon.sum"), dir.join("first.sum")).unwrap();
        same(
            &dir,
            &["-s", "-b", "recursion", "first.sum", "recursion.gmon"],
        );
        let want = gprof(dir.path(), &["-b", "recursion", "first.sum"]);
        let got = ours(dir.path(), &["--gprof", "-b", "recursion", "first.sum"]);
        assert!(want.status.success() && want.stdout == got.stdout);
    }
}

/// `-D` (`--ignore-non-functions`): a local label in the text (no `STT_FUNC`) is dropped,
/// a global one stays; with `-z`, `-a` and `-l` too.
mod non_functions {
    use crate::support::gprof;

    const SOURCE: &str = r#"#include <stdio.h>
static volatile long sink;
static void work(long n) { for (long i = 0; i < n; i++) sink += i; }
__asm__(".text\n.p2align 4\nlocal_label:\n.fill 64,1,0x90\nret\n"
        ".globl global_label\nglobal_label:\n.fill 64,1,0x90\nret\n");
void spin(void) { for (int k = 0; k < 2000; k++) work(20000); }
int main(void) { spin(); printf("%ld\n", sink); return 0; }
"#;

    #[test]
    fn ignore_non_functions_matches_gprof() {
        let dir = super::profiled("gcc", "lbl.c", SOURCE, "lbl", &["-O1", "-fno-inline"]);
        let plain = gprof(dir.path(), &["-b", "-z", "lbl", "lbl.gmon"]);
        let with_d = gprof(dir.path(), &["-b", "-z", "-D", "lbl", "lbl.gmon"]);
        assert_ne!(plain.stdout, with_d.stdout, "-D dropped nothing");
        super::same_in_each(
            dir.path(),
            &[
                &["-D"][..],
                &["-b", "-z", "-D"],
                &["--ignore-non-functions", "-b", "-z", "-p"],
                &["-D", "-a", "-z", "-b"],
                &["-D", "-l", "-z", "-b"],
            ],
            &["lbl", "lbl.gmon"],
        );
    }
}

/// `-i` when a later file is not a gmon file: gprof prints each file's lines as it reads it,
/// so those of the files before the bad one are on its stdout when it exits 1.
#[test]
fn file_info_then_a_bad_file() {
    let dir = fixtures_dir("gcc-pg");
    for args in [
        &["-i", "cycle", "cycle.gmon", "cycle.c"][..],
        &[
            "-b",
            "-p",
            "-i",
            "cycle",
            "cycle.gmon",
            "cycle.gmon",
            "cycle.c",
        ],
        &["-i", "-l", "cycle", "cycle.gmon", "cycle.c"],
    ] {
        let (want, _) = same_status_and_stdout(&dir, args);
        assert!(!want.stdout.is_empty(), "{args:?}: vacuous");
    }
}

/// `-l` on a program whose debug information is damaged. BFD 2.40 gives up on a whole unit
/// when its line program does not decode (an extended opcode it does not know: "DWARF error:
/// mangled line number section" on stderr) or its DIE tree does not ("could not find abbrev
/// number N"); the unit then answers no address, so gprof prints no line symbols and the
/// functions' bare names. gimli reads on past such an opcode, and up to such a DIE. HP's
/// `source_file_correlation` (0x80) BFD skips, and `.debug_aranges` it never reads.
mod damaged_debug_info {
    pub(super) const SOURCE: &str = r#"#include <stdio.h>
volatile unsigned long sink;
static unsigned long gen(unsigned long x) {
  unsigned long s = x;
  for (unsigned long k = 0; k < 30000000; k++)
    s = s * 31 + k;
  return s;
}
unsigned long work(unsigned long x) {
  unsigned long s = 0;
  for (unsigned long k = 0; k < 20000000; k++)
    s += k ^ x;
  return s + gen(x);
}
int main(void) {
  sink = work(3) + gen(5);
  printf("%lu\n", sink);
  return 0;
}
"#;

    /// Build the program, let `damage` change the bytes of `section` (checking what it
    /// replaces), and compare gprof and us under each way of asking for lines.
    fn compare_damaged(section: &str, damage: impl FnOnce(&mut [u8])) {
        compare_damaged_lines(section, damage, true);
    }

    /// [`compare_damaged`]; without `without_l`, only the ways of asking with `-l`.
    fn compare_damaged_lines(section: &str, damage: impl FnOnce(&mut [u8]), without_l: bool) {
        compare_damaged_file(
            |exe| {
                let (off, size) = file_range(exe, section);
                damage(&mut exe[off..off + size]);
            },
            without_l,
        );
    }

    /// Where section `name` lies in the executable `exe`.
    fn file_range(exe: &[u8], name: &str) -> (usize, usize) {
        use object::{Object, ObjectSection};
        let file = object::File::parse(exe).unwrap();
        let s = file.section_by_name(name).expect(name);
        let (off, size) = s.file_range().expect("in the file");
        (off as usize, size as usize)
    }

    /// [`compare_damaged_lines`] with `damage` given the whole executable.
    fn compare_damaged_file(damage: impl FnOnce(&mut [u8]), without_l: bool) {
        let dir = super::profiled("gcc", "drv.c", SOURCE, "drv", &["-g", "-O1", "-fno-inline"]);
        let mut exe = std::fs::read(dir.join("drv")).unwrap();
        damage(&mut exe);
        std::fs::write(dir.join("drv"), &exe).unwrap();
        for flags in [
            &["-b", "-l"][..],
            &["-l"],
            &["-b", "-p", "-l"],
            &["-b", "-q", "-l"],
            &["-b", "-l", "-z"],
            // The index's file names of static functions, and -C's files, without -l.
            &["-b", "-q"],
            &["-b", "-C", "-z"],
            &["-b", "-l", "-L"],
        ] {
            if !without_l && !flags.contains(&"-l") {
                continue;
            }
            let mut args = flags.to_vec();
            args.extend_from_slice(&["drv", "drv.gmon"]);
            super::same_in(dir.path(), &args);
        }
    }

    /// The line program's last instruction (the one unit's final `DW_LNE_end_sequence`,
    /// 00 01 01) gets extended opcode `opcode`.
    fn compare_with_last_opcode(opcode: u8) {
        compare_damaged(".debug_line", |line| {
            let end = line.len();
            assert_eq!(
                line[end - 3..],
                [0, 1, 1],
                "the program ends with end_sequence"
            );
            line[end - 1] = opcode;
        });
    }

    #[test]
    fn an_unknown_extended_opcode_leaves_the_unit_without_lines() {
        compare_with_last_opcode(0xff);
    }

    #[test]
    fn an_hp_source_file_correlation_opcode_is_skipped() {
        compare_with_last_opcode(0x80);
    }

    /// The address table's unit offset points past `.debug_info`: BFD never reads
    /// `.debug_aranges`, so gprof still finds the unit by its own ranges.
    #[test]
    fn a_damaged_address_table_is_not_read() {
        compare_damaged(".debug_aranges", |aranges| {
            assert_eq!(
                aranges[4..10],
                [2, 0, 0, 0, 0, 0],
                "version 2, unit at offset 0"
            );
            aranges[6..10].copy_from_slice(&0x7fff_fff0u32.to_le_bytes());
        });
    }

    /// The bytes of `needle` (a whole string, NUL-terminated) in a string section.
    fn string_at(section: &[u8], needle: &[u8]) -> usize {
        let mut whole = needle.to_vec();
        whole.push(0);
        (0..section.len())
            .find(|&i| section[i..].starts_with(&whole) && (i == 0 || section[i - 1] == 0))
            .unwrap_or_else(|| panic!("{:?} not in the section", String::from_utf8_lossy(needle)))
    }

    /// `gen`'s DIE (its name inline, the first attribute) becomes a null entry: it closes the
    /// unit DIE's children, and BFD reads no further (gimli reads on into the rest as DIEs
    /// and fails). The unit keeps its lines; `gen` is then named after its ELF symbol.
    #[test]
    fn a_null_entry_ends_the_die_tree() {
        compare_damaged(".debug_info", |info| {
            let at = (1..info.len())
                .find(|&i| info[i..].starts_with(b"gen\0"))
                .expect("gen's inline name");
            assert!(
                (1..0x80).contains(&info[at - 1]),
                "an abbreviation code before the name"
            );
            info[at - 1] = 0;
        });
    }

    /// An empty function name (`work`'s, in `.debug_str`) is none to BFD: a C function without
    /// a name, whose addresses gprof then gets no answer for (no line symbols, the bare name).
    /// Under `-l` only: without it, the source files of `-C` and the index come from the line
    /// table alone (a known difference: gprof gives such a function no file there either).
    #[test]
    fn an_empty_function_name_gives_no_lines() {
        let damage = |s: &mut [u8]| {
            let at = string_at(s, b"work");
            s[at] = 0;
        };
        compare_damaged_lines(".debug_str", damage, false);
    }

    /// `main`'s name points past `.debug_str`: BFD reads it as none (as an empty one), so
    /// gprof gets no answer at `main`'s addresses.
    #[test]
    fn an_unreadable_function_name_gives_no_lines() {
        let damage = |exe: &mut [u8]| {
            let (str_off, str_size) = file_range(exe, ".debug_str");
            let at = string_at(&exe[str_off..str_off + str_size], b"main") as u32;
            let (off, size) = file_range(exe, ".debug_info");
            let info = &mut exe[off..off + size];
            let hits: Vec<usize> = (0..info.len() - 4)
                .filter(|&i| info[i..i + 4] == at.to_le_bytes())
                .collect();
            assert_eq!(hits.len(), 1, "one reference to main's name");
            info[hits[0]..hits[0] + 4].copy_from_slice(&0x7fff_0000u32.to_le_bytes());
        };
        compare_damaged_file(damage, false);
    }

    /// The unit DIE's `DW_AT_high_pc` (DWARF 5: after the header, the abbreviation code,
    /// producer, language, name, directory and `DW_AT_low_pc`) becomes 0: the unit has no
    /// address range, and BFD then searches it for every address.
    #[test]
    fn a_unit_without_a_range_is_searched() {
        compare_damaged(".debug_info", |info| {
            assert_eq!(info[4..6], [5, 0], "DWARF 5");
            let high = u64::from_le_bytes(info[34..42].try_into().unwrap());
            assert!(0 < high && high < 0x1000, "high_pc {high:#x} as a length");
            info[34..42].fill(0);
        });
    }

    /// The line table's file name format names content type 0 (for the directory index):
    /// BFD refuses the whole line table ("unknown format content type"), gimli reads it.
    #[test]
    fn an_unknown_line_table_content_type_drops_the_lines() {
        compare_damaged(".debug_line", |line| {
            assert_eq!(line[4..6], [5, 0], "DWARF 5");
            let opcode_base = line[17] as usize;
            let formats = 18 + opcode_base - 1;
            assert_eq!(
                line[formats..formats + 3],
                [1, 1, 0x1f],
                "one directory format: DW_LNCT_path as DW_FORM_line_strp"
            );
            let dirs = line[formats + 3] as usize;
            let files = formats + 4 + 4 * dirs;
            assert_eq!(
                line[files + 1..files + 4],
                [1, 0x1f, 2],
                "the file format: DW_LNCT_path, then DW_LNCT_directory_index"
            );
            line[files + 3] = 0;
        });
    }

    /// A function name (`work`, in `.debug_str`) that is not UTF-8: gprof prints its bytes.
    #[test]
    fn an_invalid_utf8_function_name_prints_raw() {
        compare_damaged(".debug_str", |s| {
            let at = string_at(s, b"work");
            s[at + 1] = 0x90;
        });
    }

    /// The source file's name (`drv.c`, in `.debug_line_str`) that is not UTF-8: gprof
    /// prints its bytes.
    #[test]
    fn an_invalid_utf8_file_name_prints_raw() {
        compare_damaged(".debug_line_str", |s| {
            let at = string_at(s, b"drv.c");
            s[at + 1] = 0x8d;
        });
    }

    /// An empty file name is none to BFD: the file is `<unknown>` (also under `-L`).
    #[test]
    fn an_empty_file_name_is_unknown() {
        compare_damaged(".debug_line_str", |s| {
            let at = string_at(s, b"drv.c");
            s[at] = 0;
        });
    }

    /// Abbreviation 1 (the first of the table, used by DIEs after the unit's own) is
    /// renumbered 0x7f, which no DIE uses: the unit's DIE reads, the tree then fails. The
    /// unit then answers no address at all: no line symbols, and no `(file)` after static
    /// functions in the index.
    #[test]
    fn a_missing_abbreviation_leaves_the_unit_without_lines() {
        compare_damaged(".debug_abbrev", |abbrev| {
            assert_eq!(abbrev[0], 1, "the table starts with abbreviation 1");
            abbrev[0] = 0x7f;
        });
    }
}

/// Basic-block count records (GNU tag 2), which gcc no longer emits: written here with
/// `gmon::write` after a real profile, at the program's line addresses (from its line table),
/// inside lines, twice at one address, eleven and more in one line (gprof keeps ten per
/// symbol) and below `.text` (no symbol). Without `-l` gprof ignores them (a warning on
/// stderr); with `-l` they count for the line symbol holding them, `-C` lists them, and `-s`
/// writes them back.
mod basic_blocks {
    use crate::support::{gprof, ours, TempDir};
    use gmon::write::Writer;
    use gmon::{Endian, PtrSize, Target};

    /// `drv` (the damaged-DWARF module's program) and its profile `drv.gmon`, with
    /// `bb.gmon` (the profile and two block records), `bbonly.gmon` (the header and one block
    /// record: no histogram, no arcs) and `empty.gmon` (the profile and a record of no blocks).
    fn scratch() -> TempDir {
        use object::{Object, ObjectSection};
        let dir = super::profiled(
            "gcc",
            "drv.c",
            super::damaged_debug_info::SOURCE,
            "drv",
            &["-g", "-O1", "-fno-inline"],
        );
        let exe = std::fs::read(dir.join("drv")).unwrap();
        let text = {
            let file = object::File::parse(&*exe).unwrap();
            let t = file.section_by_name(".text").unwrap();
            (t.address(), t.address() + t.size())
        };
        let map = profil_symbols::lines::line_map(&exe, &[text]);
        let spans: Vec<(u64, u64)> = map
            .spans
            .iter()
            .filter(|s| s.line != 0)
            .map(|s| (s.start, s.end))
            .collect();
        assert!(spans.len() > 5, "too few lines: {spans:?}");
        let mut first: Vec<(u64, u64)> = Vec::new();
        for (k, &(start, end)) in spans.iter().enumerate() {
            first.push((start, 10 * (k as u64 + 1)));
            if end - start > 2 {
                first.push((start + 1, k as u64 + 3));
            }
        }
        first.push((spans[0].0, 5));
        first.push((0x10, 9));
        // Fourteen blocks in the longest line: the symbol has at most ten.
        let &(long, _) = spans.iter().max_by_key(|s| s.1 - s.0).unwrap();
        let second: Vec<(u64, u64)> = (0..14).map(|i| (long + i, i + 1)).collect();
        let target = Target {
            endian: Endian::Little,
            ptr_size: PtrSize::Eight,
        };
        let gmon = std::fs::read(dir.join("drv.gmon")).unwrap();
        let write = |name: &str, base: &[u8], records: &[&[(u64, u64)]]| {
            let mut w = Writer::new(Vec::new(), target);
            w.write_raw(base).unwrap();
            for r in records {
                w.gnu_basic_blocks(r.len() as u32, r.iter().copied())
                    .unwrap();
            }
            std::fs::write(dir.join(name), w.into_inner()).unwrap();
        };
        write("bb.gmon", &gmon, &[&first, &second]);
        write("bbonly.gmon", &gmon[..20], &[&first]);
        write("empty.gmon", &gmon, &[&[]]);
        dir
    }

    fn same(dir: &TempDir, args: &[&str]) {
        super::same_in(dir.path(), args);
    }

    /// Run `args` (with `-s`) with gprof, then with us: the same status, stdout and gmon.sum
    /// (but for its header's spare bytes, which gprof leaves uninitialised when it read no
    /// histogram: they change from run to run).
    fn same_sum(dir: &TempDir, args: &[&str], spare_bytes_set: bool) {
        let (want_sum, got_sum) = super::sum_file::sums(dir, args);
        let (Some(mut want_sum), Some(mut got_sum)) = (want_sum, got_sum) else {
            panic!("{args:?}: no gmon.sum");
        };
        if !spare_bytes_set && want_sum.len() >= 20 && got_sum.len() >= 20 {
            want_sum[8..20].fill(0);
            got_sum[8..20].fill(0);
        }
        assert!(
            want_sum == got_sum,
            "{args:?}: gmon.sum differs from gprof's"
        );
    }

    /// `-C` with `-l`: each line symbol's blocks after its own count (summed per address,
    /// ten at most), with `-z`, over two files, and with `-i`; the flat profile and call graph
    /// (which the blocks do not change).
    #[test]
    fn execution_counts_list_the_blocks_under_lines() {
        let dir = scratch();
        for args in [
            &["-b", "-C", "-l", "drv", "bb.gmon"][..],
            &["-C", "-l", "-z", "drv", "bb.gmon"],
            &["-b", "-C", "-l", "drv", "bb.gmon", "bb.gmon", "drv.gmon"],
            &["-i", "-C", "-l", "drv", "bb.gmon", "empty.gmon"],
            &["-b", "-p", "-l", "drv", "bb.gmon"],
            &["-b", "-q", "-l", "drv", "bb.gmon"],
        ] {
            same(&dir, args);
        }
    }

    /// Without a histogram or arcs gprof prints the execution counts, here with the blocks;
    /// without `-l` it ignores the blocks (and warns).
    #[test]
    fn blocks_alone_give_the_execution_counts() {
        let dir = scratch();
        for args in [
            &["-l", "drv", "bbonly.gmon"][..],
            &["-b", "-l", "-z", "drv", "bbonly.gmon"],
            &["-z", "drv", "bbonly.gmon"],
            &["-b", "-C", "drv", "bb.gmon"],
            &["-i", "drv", "bbonly.gmon"],
        ] {
            same(&dir, args);
        }
        let want = gprof(dir.path(), &["-b", "drv", "bb.gmon"]);
        assert!(
            String::from_utf8_lossy(&want.stderr).contains("ignoring basic-block exec counts"),
            "gprof did not warn"
        );
        let got = ours(dir.path(), &["--gprof", "-b", "drv", "bb.gmon"]);
        assert!(String::from_utf8_lossy(&got.stderr).contains("ignoring basic-block exec counts"));
    }

    /// `-s` writes one block record after the arcs (when any input had one, even empty),
    /// which reads back.
    #[test]
    fn sum_writes_the_blocks() {
        let dir = scratch();
        same_sum(&dir, &["-s", "drv", "bb.gmon"], true);
        same_sum(&dir, &["-s", "-b", "-p", "drv", "empty.gmon"], true);
        same_sum(
            &dir,
            &["-s", "-b", "drv", "bb.gmon", "drv.gmon", "bb.gmon"],
            true,
        );
        std::fs::rename(dir.join("gmon.sum"), dir.join("first.sum")).unwrap();
        same(&dir, &["-b", "-C", "-l", "drv", "first.sum"]);
        same_sum(&dir, &["-s", "-b", "drv", "first.sum", "bb.gmon"], true);
        same_sum(&dir, &["-s", "drv", "bbonly.gmon"], false);
    }

    /// `-d -s`: the traces of reading, then `cg_write_arcs`' of each arc as the sum is
    /// written (blocks and histograms write none), at each bit level that prints any.
    #[test]
    fn sum_with_debug_traces() {
        let dir = scratch();
        for level in ["-d", "-d1", "-d64", "-d2048", "-d4096"] {
            same_sum(&dir, &[level, "-s", "-b", "drv", "bb.gmon"], true);
        }
        same_sum(&dir, &["-d", "-s", "drv", "bb.gmon", "drv.gmon"], true);
        same_sum(&dir, &["-d", "-s", "-b", "-C", "drv", "empty.gmon"], true);
        // Reading blocks under -l traces their look-ups and `[bb_read_rec]`; without -l none.
        for args in [
            &["-d", "-l", "-b", "-C", "drv", "bb.gmon"][..],
            &["-d2048", "-l", "-b", "drv", "bb.gmon", "bbonly.gmon"],
            &["-d512", "-l", "-b", "-p", "drv", "bb.gmon"],
            &["-d", "-b", "drv", "bb.gmon"],
        ] {
            same(&dir, args);
        }
    }
}

/// `--demangle[=STYLE]` and `--no-demangle` on a C++ program (methods, templates, the
/// standard library): the last of them wins, `--demangle=none` sticks, an unknown style fails.
mod demangling {
    use crate::support::gprof;

    pub(super) const SOURCE: &str = r#"#include <cstdio>
#include <vector>
namespace ns {
struct Box { long v; long get(int k) const { long s = 0; for (int i = 0; i < k; i++) s += v * i; return s; } };
template <typename T> T twice(T x) { return x + x; }
}
static volatile long sink;
long run(std::vector<ns::Box>& b) { long s = 0; for (auto& x : b) s += x.get(20000); return ns::twice(s); }
int main() { std::vector<ns::Box> b(2000, ns::Box{3}); for (int k = 0; k < 3; k++) sink += run(b); std::printf("%ld\n", (long)sink); }
"#;

    #[test]
    fn demangling_options_match_gprof() {
        let dir = super::profiled("g++", "cpp.cc", SOURCE, "cpp", &["-O1", "-fno-inline"]);
        let plain = gprof(dir.path(), &["-b", "cpp", "cpp.gmon"]);
        let raw = gprof(dir.path(), &["-b", "--no-demangle", "cpp", "cpp.gmon"]);
        assert_ne!(plain.stdout, raw.stdout, "--no-demangle changed nothing");
        super::same_in_each(
            dir.path(),
            &[
                &["-b"][..],
                &["--no-demangle"],
                &["--no-demangle", "-b", "-z", "-q"],
                &["--no-demangle", "--demangle", "-b"],
                &["--demangle=auto", "--no-demangle", "-b"],
                &["--demangle=none", "-b"],
                &["--demangle=none", "--demangle", "-b"],
                &["--no-dem", "-l", "-b"],
                &["--demangle=bogus", "-b"],
                &["-T", "-b"],
                &["-T", "--demangle", "-z"],
            ],
            &["cpp", "cpp.gmon"],
        );
    }

    /// `--demangle=gnu-v3` demangles C++ names as the default does, `--demangle=rust` leaves
    /// them raw (Rust's demangler only); the last style named wins.
    #[test]
    fn demangling_styles_match_gprof() {
        let dir = super::profiled("g++", "cpp.cc", SOURCE, "cpp", &["-O1", "-fno-inline"]);
        let rust = gprof(dir.path(), &["-b", "--demangle=rust", "cpp", "cpp.gmon"]);
        let raw = gprof(dir.path(), &["-b", "--no-demangle", "cpp", "cpp.gmon"]);
        assert_eq!(
            rust.stdout, raw.stdout,
            "--demangle=rust demangled C++ names"
        );
        super::same_in_each(
            dir.path(),
            &[
                &["--demangle=gnu-v3", "-b"][..],
                &["--demangle=gnu-v3", "-b", "-z", "-q"],
                &["--demangle=rust", "-b"],
                &["--demangle=rust", "-b", "-z", "-p"],
                &["--demangle=rust", "--demangle=gnu-v3", "-b"],
                &["--demangle=gnu-v3", "--demangle=rust", "-b"],
                &["--demangle=rust", "--demangle=auto", "-b"],
                &["--demangle=gnu-v3", "-l", "-b"],
            ],
            &["cpp", "cpp.gmon"],
        );
    }
}

/// `--demangle=gnat`, `java` and `dlang` on a C program whose functions carry chosen symbol
/// names (asm labels): GNAT's encodings and what is not one (printed `<name>`), D's names
/// (`_Dmain`, functions, nested functions, members, variables, attributes, what libiberty
/// rejects), C++ and (legacy) Rust names; in the flat profile, the call graph, its index,
/// `-l`, `-T`.
/// `--demangle=java` on C and C++ programs (see also `demangling_java`); `dlang` refused
/// (status 2) on a D name outside the part of D's grammar written (templates, back
/// references…).
mod demangling_styles {
    use crate::support::{gprof, ours};

    const NAMES: &[&str] = &[
        "pkg__sub",
        "pkg__sub__2",
        "pkg__sub__2_1X",
        "pkg__subXnb",
        "pkg__sub__3Xb",
        "_ada_main_prog",
        "_ada_Foo",
        "pkg__Oadd",
        "pkg__Osubtract__2",
        "pkg__Oxyz",
        "pkg__t___elabb",
        "pkg__t___elabs",
        "pkg__t___assign",
        "pkg__t___size",
        "pkg__t___alignment",
        "pkg__t___bogus",
        "pkg__tTKB",
        "pkg__tTK__inner",
        "pkg__tTKx",
        "pkg__eE",
        "pkg__pP",
        "pkg__qN",
        "pkg__sS",
        "pkg__tSR",
        "pkg__tSW__2",
        "pkg__tSI",
        "pkg__tSO",
        "pkg__tSZ",
        "pkg__tDF",
        "pkg__tDA",
        "pkg__tDZ",
        "pkg__e_B12s",
        "pkg__e_E3s",
        "pkg__e_B1x",
        "pkg__f_x",
        "pkg__f.3",
        "pkg__g.12x",
        "Upper",
        "a__b__c",
        "a___",
        "a__",
        "a_",
        "x1_2y",
        "_start_like",
        "_Dmain",
        "_ZN4core3fmt5write17h0123456789abcdefE",
        "_ZN2ns3Box3getEi",
        "_ZN3std2rt10lang_start28_$u7b$$u7b$closure$u7d$$u7d$17h0123456789abcdefE",
        "_ZN4core3ptr13drop_in_place17hfedcba9876543210E",
        "_D3foo3barFZv",
        "_D3foo3bazFiZi",
        "_D4core4time8durationFAyaPxlZb",
        "_D3app5outerFiZ5innerFZv",
        "_D3app5outerFZ5innerFZ4deepFkZv",
        "_D3foo3vari",
        "_D3foo3bar",
        "_D3foo3barFZ",
        "_D3foo3barFZvX",
        "_D3foo3barFZvv",
        "_D3foo3barZ",
        "_D3std5stdio7writelnFNfAyaZv",
        "_D3std4conv2toFNaNbNiNfAxaZAya",
        "_D3foo3Bar3bazMFZv",
        "_D1a1b1c1dFyaxuZw",
        "_D03fooFZv",
        "_Dx",
        "_D",
    ];

    fn source() -> String {
        let mut src = String::from("static volatile long sink;\n");
        for (i, name) in NAMES.iter().enumerate() {
            src += &format!(
                "__attribute__((noinline)) void f{i}(long n) __asm__(\"{name}\");\n\
                 void f{i}(long n) {{ for (long k = 0; k < n; k++) sink += k; }}\n"
            );
        }
        src += "int main(void) {\n";
        for i in 0..NAMES.len() {
            src += &format!("  f{i}({});\n", 200_000 * (i % 5 + 1));
        }
        src + "  return 0;\n}\n"
    }

    #[test]
    fn gnat_java_and_dlang_match_gprof() {
        let dir = super::profiled("gcc", "names.c", &source(), "names", &["-O1", "-g"]);
        let raw = gprof(
            dir.path(),
            &["-b", "-z", "--no-demangle", "names", "names.gmon"],
        );
        let gnat = gprof(
            dir.path(),
            &["-b", "-z", "--demangle=gnat", "names", "names.gmon"],
        );
        assert_ne!(raw.stdout, gnat.stdout, "--demangle=gnat changed nothing");
        for style in ["--demangle=gnat", "--demangle=java", "--demangle=dlang"] {
            for flags in [
                &["-b"][..],
                &["-b", "-z", "-p"],
                &["-z", "-q"],
                &["-b", "-l", "-p"],
                &["-T", "-b"],
                &["--no-demangle", "-b", "-p"],
                &["--demangle", "-b", "-p"],
            ] {
                let mut args = vec![style];
                args.extend_from_slice(flags);
                args.extend_from_slice(&["names", "names.gmon"]);
                super::same_in(dir.path(), &args);
            }
        }
        // _Dmain is `D main`.
        let got = ours(
            dir.path(),
            &[
                "--gprof",
                "-b",
                "-p",
                "--demangle=dlang",
                "names",
                "names.gmon",
            ],
        );
        assert!(String::from_utf8_lossy(&got.stdout).contains("D main"));
        super::same_in(
            dir.path(),
            &["-b", "-p", "--demangle=dlang", "names", "names.gmon"],
        );
        super::same_in(
            dir.path(),
            &["-b", "-q", "-z", "--demangle=dlang", "names", "names.gmon"],
        );
    }

    /// D names of the whole grammar libiberty's `dlang_demangle` reads: template instances
    /// (type, value, symbol, alias and external arguments; strings, reals, characters,
    /// arrays, struct literals, function literals), back references to identifiers and types,
    /// function types with attributes and calling conventions, delegates, function pointers,
    /// type modifiers, parameter storage classes, tuples, vectors, special names, fake
    /// parents (`__S1`); from libiberty's testsuite and written for the corners; and names it
    /// does not read (printed raw). `--demangle=dlang` refused them (status 2) before.
    const D_NAMES: &[&str] = &[
        "_D3std11parallelism42__T16RoundRobinBufferTDFKAaZvTDxFNaNdNeZbZ16RoundRobinBuffer5primeMFZv",
        "_D4core4stdc5errnoQgFZi",
        "_D4testFS10structnameQnZb",
        "_D3std11parallelism__T4TaskS8unittest3cmpTAyaTQeZQBb6__dtorMFNfZv",
        "_D13testexpansion44__T1sTS13testexpansion8__T1sTiZ1sFiZ6ResultZ1sFS13testexpansion8__T1sTiZ1sFiZ6ResultZ6Result3fooMFNaNfZv",
        "_D13testexpansion__T1sTSQw__TQjTiZQoFiZ6ResultZQBbFQBcZQq3fooMFNaNfZv",
        "_D3std4conv__T7enumRepTyAaTEQBa12experimental9allocator15building_blocks15stats_collector7OptionsVQCti64ZQDnyQDh",
        "_D3std12experimental9allocator6common__T10reallocateTSQCaQBzQBo15building_blocks17kernighan_ritchie__T8KRRegionTSQEhQEgQDvQCh14null_allocator13NullAllocatorZQCdZQErFNaNbNiKQEpKAvmZb",
        "_D3std9exception__T11doesPointToTASQBh5regex8internal2ir10NamedGroupTQBkTvZQCeFNaNbNiNeKxASQDlQCeQCbQBvQBvKxQtZb",
        "_D3std9algorithm9iteration__T14SplitterResultS_DQBu3uni7isWhiteFNaNbNiNfwZbTAyaZQBz9__xtoHashFNbNeKxSQDvQDuQDn__TQDgS_DQEnQCtQCsQCnTQCeZQEdZm",
        "_D3std8typecons__T7TypedefTCQBaQz19__unittestL6513_208FNfZ7MyClassVQBonVAyanZQCh6__ctorMFNaNbNcNiNfQCuZSQDyQDx__TQDrTQDmVQDqnVQCcnZQEj",
        "_D3std6getopt__TQkTAyaTDFNaNbNiNfQoZvTQtTDQsZQBnFNfKAQBiQBlQBkQBrQyZSQCpQCo12GetoptResult",
        "_D3std5regex8internal9kickstart__T7ShiftOrTaZQl11ShiftThread__T3setS_DQCqQCpQCmQCg__TQBzTaZQCfQBv10setInvMaskMFNaNbNiNfkkZvZQCjMFNaNfwZv",
        "_D3std5stdio4File__T8lockImplX10LockFileExTykZQBaMFmmykZi",
        "_D3std9algorithm9iteration__T12FilterResultSQBq8typecons__T5TupleTiVAyaa1_61TiVQla1_62TiVQva1_63ZQBm__T6renameVHiQBtA2i0a1_63i2a1_61ZQBeMFNcZ9__lambda1TAiZQEw9__xtoHashFNbNeKxSQGsQGrQGk__TQGdSQHiQFs__TQFmTiVQFja1_61TiVQFua1_62TiVQGfa1_63ZQGx__TQFlVQFhA2i0a1_63i2a1_61ZQGjMFNcZQFfTQEyZQJvZm",
        "_D3std3uni__T6toCaseS_DQvQt12toLowerIndexFNaNbNiNewZtVii1043S_DQCjQCi10toLowerTabFNaNbNiNemZwSQDo5ascii7toLowerTAyaZQDzFNaNeQmZ14__foreachbody2MFNaNeKmKwZ14__foreachbody3MFNaNeKwZi",
        "_D8demangle4mainFZ1xi",
        "_D8demangle4mainFZ4__S11xi",
        "_D8demangle4mainFZ1fMFNaNbNiNfZv",
        "_D8demangle4mainFZ4__S11fMFNaNbNiNfZv",
        "_D3mod4funcFZ__T6nestedTiZQkMFNaNbNiNfZi",
        "_D3mod4funcFZ__T6nestedTiZ4__S1QpMFNaNbNiNfZi",
        "_D6mangle__T8fun21753VSQv6S21753S1f_DQBj10__lambda71MFNaNbNiNfZvZQCbQp",
        "_D8demangle4testPFLAiYi",
        "_D8demangle4testMFZ2fnMFZv",
        "_D8demangle4testFNhG16gZv",
        "_D8demangle4testFLC6ObjectLDFLiZiZi",
        "_D8demangle9__T4testZv",
        "_D8demangle9__U4testZv",
        "_D8demangle16__T4testTaTOiTaZv",
        "_D8demangle23__T4testS116symbol3fooZv",
        "_D8demangle32__T4testS20_D6symbol3foo3barFZvZv",
        "_D8demangle13__T4testVPinZv",
        "_D8demangle15__T4testVkN123Zv",
        "_D8demangle14__T4testVai10Zv",
        "_D8demangle16__T4testVui1000Zv",
        "_D8demangle18__T4testVwi100000Zv",
        "_D8demangle17__T4testVde0A8P6Zv",
        "_D8demangle51__T4testVrc0C4CCCCCCCCCCCCCDP4c0B666666666666666P6Zv",
        "_D8demangle22__T4testVG3uw3_616263Zv",
        "_D8demangle16__T4testVAyaa0_Zv",
        "_D8demangle4test6__initZ",
        "_D8demangle4test6__vtblZ",
        "_D8demangle4test7__ClassZ",
        "_D8demangle4test11__InterfaceZ",
        "_D8demangle4test12__ModuleInfoZ",
        "_D8demangle4test6__ctorMFZv",
        "_D8demangle4test6__dtorMFZv",
        "_D8demangle4test10__postblitMFZv",
        "_D8demangle4testFNjNkDFNjZaZv",
        "_D8demangle4testFNlMPFNlZaZv",
        "_D8demangle4testFB3aDFZaaZv",
        "_D8demangle4testFDRZaZv",
        "_D8demangle4testFHHaaaZv",
        "_D8demangle4testFG1234567890aZv",
        "_D1a1bD",
        "_D1a1bDNxFZv",
        "_D3foo3barFiZ",
        "_D3foo3barFZvv",
        "_D3app5outerFiZ5innerFZv",
        "_D1aQa",
        "_D1aQaQbQc",
        "_D1a1bQd1cQBaQz",
        "_D4test3fooAa",
        "_D4test2dgDFiZv",
        "_D4test3fooMxFZv",
        "_D4test3fooMOFZv",
        "_D4test3fooMNgFZv",
        "_D4test3fooMNxFZv",
        "_D4test3fooMyFZi",
        "_D4test3fooMOxFNaNbNiNfZi",
        "_D4test3fooFNkKiJiLiIKiIiMiZv",
        "_D4test3fooFNnZv",
        "_D4test3fooFNmNjNlZv",
        "_D4test3fooUiZv",
        "_D4test3fooWZv",
        "_D2rt3aaA12__ModuleInfoZ",
        "_D6object6Object5opCmpMFC6ObjectZi",
        "_D6object6Object6toHashMFNbNeZm",
        "_D3std5stdio6writefFAyaZv",
        "_D3std6traits__T6isSomeTiZ6isSomeFZb",
        "_D4core6thread6Thread5sleepFNbNiSQBd4time8DurationZv",
        "_D3foo8__T1xVii1Z1xFZv",
        "_D3foo9__T1xVhi255Z1xFZv",
        "_D3foo10__T1xVbi1Z1xFZv",
        "_D3foo9__T1xVAiA2i1i2Z1xFZv",
        "_D3foo13__T1xVHiiA1i1i2Z1xFZv",
        "_D3foo__T1xVS3foo1SS2i1i2Z1xFZv",
        "_D3foo__T1xVede0A8P6Z1xFZv",
        "_D3foo__T1xVfeNANZ1xFZv",
        "_D3foo__T1xVG5aa5_48656c6c6fZ1xFZv",
        "_D3foo__T1xVAyaa4_090a0d0cZ1xFZv",
        "_D3foo__T1xVAyaa3_0b7f80Z1xFZv",
        "_D3foo__T1xVAyaa2_4A4bZ1xFZv",
        "_D3foo__T1xVQeZ1x",
        "_D3foo__T1xTQeZ1xFZv",
        "_D3foo__T1xS_D3foo1yFZvZ1xFZv",
        "_D3foo__T1xX5helloZ1xFZv",
        "_D3foo__T1xHTiZ1x",
        "_D3foo8__T1xZ1xi",
        "_D0Z",
        "_D0",
        "_D",
        "_D1",
        "_D1a",
        "_D1aZ",
        "_D1ai",
        "_D10aZ",
        "_D1aFZ",
        "_D1aFNZv",
        "_D1aFNzZv",
        "_D1aMZv",
        "_D1aMNFZv",
        "_D1aM",
        "_D1aPFZ",
        "_D1aPFZiZ",
        "_D1a1bFZQd",
        "_D1a1bFQeZv",
        "_D1aFQaZv",
        "_DQa",
        "_D1aQz",
        "_D1a__T",
        "_D1a__T1b",
        "_D1a__T1bZ",
        "_D1a__T0Z",
        "_D1a5__T1bZ",
        "_D1a6__T1bZv",
        "_D1a7__T1bZvi",
        "_D1a__T1bVi",
        "_D1a__T1bVii",
        "_D1a__T1bViiZ",
        "_D1a__T1bViaZi",
        "_D1a__T1bVaiZi",
        "_D1aFDZv",
        "_D1aFDFZvZv",
        "_D1aFDxFZvZv",
        "_D1aFDOxFZvZv",
        "_D1aFDNgOyFZvZv",
        "_D1aFDQdZv",
        "_D1aFzZv",
        "_D1aFzkZv",
        "_D1aFNgNhiZv",
        "_D1aFB",
        "_D1aFB99999999999iZv",
        "_D1aFG99999999999999iZv",
        "_D1a4294967296b",
        "_D1a4294967295b",
        "_D18__T1aS11bcdefghijkZi",
        "_D18__T1aS111bcdefghijZi",
        "_D18__T1aS1112345678901Zi",
    ];

    #[test]
    fn dlang_whole_grammar_matches_gprof() {
        let mut src = String::from("static volatile long sink;\n");
        for (i, name) in D_NAMES.iter().enumerate() {
            src += &format!(
                "__attribute__((noinline)) void f{i}(long n) __asm__(\"{name}\");\n\
                 void f{i}(long n) {{ for (long k = 0; k < n; k++) sink += k; }}\n"
            );
        }
        src += "int main(void) {\n";
        for i in 0..D_NAMES.len() {
            src += &format!("  f{i}({});\n", 200_000 * (i % 5 + 1));
        }
        src += "  return 0;\n}\n";
        let dir = super::profiled("gcc", "d.c", &src, "d", &["-O1", "-g"]);
        let raw = gprof(
            dir.path(),
            &["-b", "-z", "-p", "--no-demangle", "d", "d.gmon"],
        );
        let dlang = gprof(
            dir.path(),
            &["-b", "-z", "-p", "--demangle=dlang", "d", "d.gmon"],
        );
        let text = String::from_utf8_lossy(&dlang.stdout);
        assert!(
            text.contains("std.stdio.File.lockImpl!(LockFileEx, immutable(uint)).lockImpl(")
                && text.contains("initializer for demangle.test")
                && text.contains("  _D1a1bD\n")
                && raw.stdout != dlang.stdout,
            "not what the brief saw: {text}"
        );
        for flags in [
            &["-b", "-z", "-p"][..],
            &["-b", "-z", "-q"],
            &["-z"],
            &["-b", "-l", "-p"],
            &["-T", "-b", "-z"],
            &["-b", "-a", "-p", "-q"],
        ] {
            let mut args = vec!["--demangle=dlang"];
            args.extend_from_slice(flags);
            args.extend_from_slice(&["d", "d.gmon"]);
            super::same_in(dir.path(), &args);
        }
    }

    /// [`D_NAMES`] with one to three bytes dropped, changed, added or cut off (a fixed
    /// pseudo-random sequence): names that go wrong anywhere in the grammar, most of them not
    /// demangled (gprof prints them raw), some demangled differently.
    #[test]
    fn dlang_damaged_names_match_gprof() {
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed as usize
        };
        let alphabet = b"QZFMNaiSTVGHPADxyOBCEXYKLJIgkhnuvb0123456789_";
        let mut names = std::collections::BTreeSet::new();
        while names.len() < 500 {
            let mut name = D_NAMES[next() % D_NAMES.len()].as_bytes().to_vec();
            for _ in 0..1 + next() % 3 {
                let at = 2 + next() % (name.len() - 1);
                let c = alphabet[next() % alphabet.len()];
                match next() % 4 {
                    0 if at < name.len() => drop(name.remove(at)),
                    1 if at < name.len() => name[at] = c,
                    2 => name.insert(at, c),
                    _ => name.truncate(at.max(3)),
                }
            }
            let name = String::from_utf8(name).unwrap();
            if name.len() > 2 && !D_NAMES.contains(&name.as_str()) {
                names.insert(name);
            }
        }
        let mut src = String::from("static volatile long sink;\n");
        for (i, name) in names.iter().enumerate() {
            src += &format!(
                "__attribute__((noinline)) void f{i}(long n) __asm__(\"{name}\");\n\
                 void f{i}(long n) {{ for (long k = 0; k < n; k++) sink += k; }}\n"
            );
        }
        src += "int main(void) {\n";
        for i in 0..names.len() {
            src += &format!("  f{i}({});\n", 20_000 * (i % 5 + 1));
        }
        src += "  return 0;\n}\n";
        let dir = super::profiled("gcc", "m.c", &src, "m", &["-O1"]);
        let raw = gprof(
            dir.path(),
            &["-b", "-z", "-p", "--no-demangle", "m", "m.gmon"],
        );
        let dlang = gprof(
            dir.path(),
            &["-b", "-z", "-p", "--demangle=dlang", "m", "m.gmon"],
        );
        let changed = raw
            .stdout
            .split(|&b| b == b'\n')
            .zip(dlang.stdout.split(|&b| b == b'\n'))
            .filter(|(r, d)| r != d)
            .count();
        assert!(changed > 25, "only {changed} names demangled");
        for flags in [&["-b", "-z", "-p"][..], &["-b", "-z", "-q"]] {
            let mut args = vec!["--demangle=dlang"];
            args.extend_from_slice(flags);
            args.extend_from_slice(&["m", "m.gmon"]);
            super::same_in(dir.path(), &args);
        }
    }

    /// D names are bytes: one that is not UTF-8 is demangled too, and an identifier's length
    /// may split a character (gprof prints the halves around the `.`).
    #[test]
    fn dlang_names_as_bytes() {
        let src = "static volatile long sink;\n\
            __attribute__((noinline)) void f0(long n) __asm__(\"_D1\\xc3\" \"1\\xa9i\");\n\
            void f0(long n) { for (long k = 0; k < n; k++) sink += k; }\n\
            __attribute__((noinline)) void f1(long n) __asm__(\"_D2\\xc3\\xa9\" \"3fooFiZv\");\n\
            void f1(long n) { for (long k = 0; k < n; k++) sink += k; }\n\
            int main(void) { f0(3000000); f1(2000000); return 0; }\n";
        let dir = super::profiled("gcc", "u.c", src, "u", &["-O1"]);
        let args = ["--demangle=dlang", "-b", "-z", "-p", "u", "u.gmon"];
        let (want, _) = super::same_status_and_stdout(dir.path(), &args);
        let text = &want.stdout;
        for name in [&b" \xc3.\xa9\n"[..], "\u{e9}.foo(int)\n".as_bytes()] {
            assert!(
                text.windows(name.len()).any(|w| w == name),
                "not what the brief saw: {}",
                String::from_utf8_lossy(text)
            );
        }
    }

    /// A C++ program with the common names `--demangle=java` prints: namespaces, constructors,
    /// destructors, operators, const methods, function and member
    /// templates (return type after the parameters), `std::min`, Java's type names, pointers
    /// without `*`, `JArray<int>` as `int[]`, function types as template arguments.
    const JAVA_SOURCE: &str = r#"#include <algorithm>
template <typename T> struct JArray { T* data; long n; };
namespace geo {
struct Vec { double x, y; Vec(double a, double b); ~Vec(); Vec operator+(const Vec& o) const; bool operator==(const Vec& o) const; double& at(int i); static Vec* make(char c, unsigned u, long long q, wchar_t w, bool b); };
Vec::Vec(double a, double b) : x(a), y(b) {}
Vec::~Vec() { x = 0; }
Vec Vec::operator+(const Vec& o) const { return Vec(x + o.x, y + o.y); }
bool Vec::operator==(const Vec& o) const { return x == o.x; }
double& Vec::at(int i) { return i ? y : x; }
Vec* Vec::make(char, unsigned, long long, wchar_t, bool) { return nullptr; }
template <typename T> T twice(T x) { return x + x; }
template <typename T> struct Holder { T v; Holder(T a) : v(a) {} T get() const { return v; } template <typename U> U as() const { return (U)v; } };
namespace detail { long sum(const JArray<int>& a, const signed char* s, unsigned short k, short m, unsigned long long z) { (void)s; return a.n + k + m + (long)z; } }
}
static volatile double sink;
template <typename F> struct Sig { long n; };
long take_sig(Sig<int(int, char)> s, Sig<void()> t) { return s.n + t.n; }
long use_min(int a, int b) { return std::min(a, b); }
int main() {
  geo::Vec a(1, 2), b(3, 4);
  for (int i = 0; i < 20000; i++) { geo::Vec c = a + b; sink += c.at(i & 1) + (a == b); }
  sink += geo::twice(3L) + geo::twice(2.5);
  geo::Holder<int> h(4); sink += h.get() + h.as<long>();
  JArray<int> arr{nullptr, 3}; sink += geo::detail::sum(arr, nullptr, 1, 2, 3);
  sink += use_min(1, 2); geo::Vec::make('a', 1, 2, L'x', true);
  return 0;
}
"#;

    /// The standard library's names: `std::vector` and `std::string` (argument packs and
    /// their expansions, literals, local classes), `std::sort` with lambdas, `std::tuple`.
    const JAVA_STD_SOURCES: [(&str, &str); 2] = [
        (
            "j.cc",
            r#"#include <vector>
#include <string>
namespace ns {
struct Box { long v; Box(long x); ~Box(); long get(int k) const; bool same(const Box& o) const; static char* name(char c, unsigned u, long long q, wchar_t w); };
Box::Box(long x) : v(x) {}
Box::~Box() { v = 0; }
long Box::get(int k) const { return v * k; }
bool Box::same(const Box& o) const { return o.v == v; }
char* Box::name(char, unsigned, long long, wchar_t) { return nullptr; }
template <typename T> T twice(T x) { return x + x; }
template long twice<long>(long);
namespace inner { void deep(ns::Box*, const char*, double, float, short, unsigned char) {} }
}
void plain(int, bool) {}
void takes_vec(std::vector<int>& v) { v.push_back(1); }
void takes_str(const std::string& s) { (void)s; }
int main() { ns::Box b(3); volatile long s = b.get(2) + b.same(b) + ns::twice(4L); plain(1, true); ns::inner::deep(&b, "x", 1, 1, 1, 1); std::vector<int> v; takes_vec(v); takes_str("x"); return (int)s & 0; }
"#,
        ),
        (
            "l.cc",
            r#"#include <vector>
#include <algorithm>
#include <tuple>
struct Item { int k; long w; };
template <typename... T> long total(T... t) { return (0 + ... + (long)t); }
int main() {
  std::vector<Item> v; for (int i = 0; i < 3000; i++) v.push_back(Item{(i * 7919) % 1000, i});
  std::sort(v.begin(), v.end(), [](const Item& a, const Item& b) { return a.k > b.k; });
  auto sq = [](int x) { return x * x; };
  long s = 0; for (auto& it : v) s += sq(it.k);
  std::tuple<int, long> t(1, 2L);
  return (int)(s + total(1, 2L, 'c') + std::get<0>(t)) & 0;
}
"#,
        ),
    ];

    #[test]
    fn java_on_standard_library_names_matches_gprof() {
        for (src, text) in JAVA_STD_SOURCES {
            let dir = super::profiled("g++", src, text, "std", &["-O0", "-std=c++17"]);
            for flags in [&["-b", "-z", "-p"][..], &["-z", "-q"], &["-b", "-l", "-p"]] {
                let mut args = vec!["--demangle=java"];
                args.extend_from_slice(flags);
                args.extend_from_slice(&["std", "std.gmon"]);
                super::same_in(dir.path(), &args);
            }
        }
    }

    #[test]
    fn java_on_cplusplus_names_matches_gprof() {
        let dir = super::profiled("g++", "k.cc", JAVA_SOURCE, "k", &["-O0"]);
        let java = gprof(dir.path(), &["-b", "-z", "--demangle=java", "k", "k.gmon"]);
        let cxx = gprof(dir.path(), &["-b", "-z", "k", "k.gmon"]);
        assert_ne!(java.stdout, cxx.stdout, "--demangle=java changed nothing");
        assert!(String::from_utf8_lossy(&java.stdout).contains("geo.Vec.Vec(double, double)"));
        for flags in [
            &["-b"][..],
            &["-b", "-z", "-p"],
            &["-z", "-q"],
            &["-b", "-l", "-z", "-p"],
            &["-T", "-b"],
            &["--demangle=java", "--demangle=gnu-v3", "-b"],
            &["--demangle=gnu-v3", "--demangle=java", "-b"],
        ] {
            let mut args = vec!["--demangle=java"];
            args.extend_from_slice(flags);
            args.extend_from_slice(&["k", "k.gmon"]);
            super::same_in(dir.path(), &args);
        }
    }

    /// C programs: every style; C++: gnat and dlang (raw), java (a pointer to a function
    /// here, once refused).
    #[test]
    fn styles_on_c_and_cplusplus_programs() {
        let c = super::profiled("gcc", "fwd.c", super::static_calls::SOURCE, "fwd", &["-O0"]);
        for style in ["--demangle=java", "--demangle=gnat", "--demangle=dlang"] {
            for flags in [&["-b"][..], &["-z"], &["-b", "-l"], &["-T", "-b", "-z"]] {
                let mut args = vec![style];
                args.extend_from_slice(flags);
                args.extend_from_slice(&["fwd", "fwd.gmon"]);
                super::same_in(c.path(), &args);
            }
        }
        let source = format!(
            "{}\nlong apply(long (*f)(long), long x) {{ return f(x); }}\n\
             long id(long x) {{ return x; }}\nlong use_apply() {{ return apply(id, 3); }}\n",
            super::demangling::SOURCE
        );
        let cpp = super::profiled("g++", "cpp.cc", &source, "cpp", &["-O1", "-fno-inline"]);
        for style in ["--demangle=gnat", "--demangle=dlang", "--demangle=java"] {
            for flags in [&["-b"][..], &["-z", "-q"], &["-b", "-l"], &["-T", "-b"]] {
                let mut args = vec![style];
                args.extend_from_slice(flags);
                args.extend_from_slice(&["cpp", "cpp.gmon"]);
                super::same_in(cpp.path(), &args);
            }
        }
        let got = gprof(
            cpp.path(),
            &["-b", "-z", "--demangle=java", "cpp", "cpp.gmon"],
        );
        let text = String::from_utf8_lossy(&got.stdout);
        assert!(text.contains("apply(long ()(long), long)"), "{text}");
        // --no-demangle after it prints raw names, as gprof.
        super::same_in(
            cpp.path(),
            &["-b", "--demangle=java", "--no-demangle", "cpp", "cpp.gmon"],
        );
    }
}

/// `--demangle=java` (libiberty's whole Itanium demangler printing Java) on names no compiler
/// construct here produces, as asm labels of a C program: special names (vtables, typeinfo,
/// guard variables, thunks, TLS functions, transaction clones, module initializers), clone
/// suffixes, `_GLOBAL_` constructors, Java's own names (`JArray`, `$`, `__U<hex>_`),
/// expressions (folds, `sizeof...`, casts, `new`, `?:`), modules, structured bindings,
/// vendor qualifiers, names libiberty rejects (truncated, C++20 constraints, a name over 1024
/// bytes) and deep nesting at its limit; then real C++ programs (`std::function`, lambdas,
/// pointers to functions and members, inheriting constructors, expressions in templates,
/// variadic packs, `-O2` clones).
mod demangling_java {
    use crate::support::gprof;

    const NAMES: &[&str] = &[
        "_ZTV1A",
        "_ZTI1A",
        "_ZTS1A",
        "_ZTT1A",
        "_ZTC1A0_1B",
        "_ZGVZ1fvE1x",
        "_ZThn8_N1B1fEv",
        "_ZTv0_n24_N1B1fEv",
        "_ZTch0_h16_N1B1fEv",
        "_ZTW1x",
        "_ZTH1x",
        "_ZGTtN1A1fEv",
        "_ZGR1x_",
        "_ZGAN1A1fEv",
        "_ZGIW3foo",
        "_Z1fv.cold",
        "_Z1fi.isra.0",
        "_Z1fi.constprop.0.isra.0",
        "_Z1fv.part.0",
        "_Z3foov.lto_priv.0",
        "_GLOBAL__sub_I_main",
        "_GLOBAL__I__Z2fnv",
        "_GLOBAL__D__Z2fnv",
        "_GLOBAL__I_abc",
        "_ZN4java3awt10ScrollPane7addImplEPNS0_9ComponentEPNS_4lang6ObjectEi",
        "_ZN4java3awt4geom15AffineTransform9getMatrixEP6JArrayIdE",
        "_ZN23Mangle$Inner$InnerInner3fooEP6JArrayIPS0_IiEEdPS0_IPS0_IPS0_IPS0_IPN4java4lang6StringEEEEEPS0_IPS0_IPN6MangleEEE",
        "_ZN4java4util14Map__U24_Entry11class__U24_E",
        "_ZN3org7eclipse3cdt5debug8internal4core5model9CVariable6sizeof$Ev",
        "_ZN6JArray1tEP6JArrayIPS_E",
        "_ZN4Prim1iEibcdfwPN4java4lang6StringEsx",
        "_Z3fooILi2EEvRAplT_Li1E_i",
        "_ZngILi42EEvN1AIXplT_Li2EEE1TE",
        "_Z1fILi1ELc120EEv1AIXplT_cviLd810000000000000000703DAD7A370C5EEE",
        "_ZN1AIfEcvT_IiEEv",
        "_ZW3foo1fv",
        "_ZNW3mod1A1fES0_",
        "_ZDC1a1bE",
        "_Z1fDF16_",
        "_Z1fDF16b",
        "_ZZ1fvENKUlDpT_E_clIJicEEEDaS1_",
        "_ZN1AUlDpT_E_clIJiEEEDaS1_",
        "_Z1fB5cxx11v",
        "_Z1fM1AKFvvE",
        "_Z1fPFPA1_ivE",
        "_Z10hairyfunc5PFPFilEPcE",
        "_ZlsRKU3fooU4bart1XS0_",
        "_Z3kooPA28_A30_i",
        "_Z1fPDoFvvE",
        "_Z1fPDwiEFvvE",
        "_Z1fPDxFvvE",
        "_ZN12_GLOBAL__N_11fEv",
        "_Z1fN1AUt_E",
        "_ZZ1fvE1x_0",
        "_ZZ1fiEd_NKUlvE_clEv",
        "_ZZN1N1fEiEs",
        "_Z9foo__U41_v",
        "_Z9foo__U0_v",
        "_Z1fIiEvT_Q1xv",
        "_Z",
        "_ZN",
        "_Z1fIT_EvT_",
        "_ZN9__gnu_cxx13new_allocatorISt4pairIKiSt6vectorIdSaIdEEEE8allo",
        "_Z14gensplikebug_optionP11gcc_optionsjPKc",
        "_ZTVL4llvm",
        "_Z1fILb1ELb0ELi5ELin3ELj7ELl8ELm9ELx10ELy11ELs12ELc65EEvv",
        "_Z1fIJEEvDpT_",
        "_Z1fIJidEEvDpT_",
        "_Z1fIJidEEDTsZT_EDpT_",
        "_Z1fIJidEEDTsPDpT_EEDpT_",
        "_Z1fIJidEEDTfrplfp_EDpT_",
        "_Z1fIJidEEDTflplfp_EDpT_",
        "_Z1fIiEDTcl1gfp_EET_",
        "_Z1fIiEDTstT_ET_",
        "_Z1fIiEDTszfp_ET_",
        "_Z1fIiEDTscT_fp_ET_",
        "_Z1fIiEDTcvT_fp_ET_",
        "_Z1fIiEDTnwT_EET_",
        "_Z1fIiEDTdtfp_1xET_",
        "_Z1fIiEDTtlT_EET_",
        "_Z1fIiEDTquLb1ELi1ELi2EET_",
        "_Z1fIiEDTixfp_Li0EET_",
        "_Z1fIiEDTgtfp_Li0EET_",
        "_Z1fIiEDTppfp_ET_",
        "_Z1fIiEDTpp_fp_ET_",
        "_ZN1BCI11AEi",
        "_ZNSt8functionIFviEEC1Ev",
        "_Z1fOi",
        "_Z1fRA3_i",
        "_Z1fIiEDcv",
        "_Z1fIiEDav",
        "_Z1fI1AILi1EEEvT_IiE",
        "_Z1fDnDsDiDuDhDfDdDe",
        "_Z1fCdGd",
        "_Z1fDv4_f",
        "_ZN1AcvPFivEEv",
        "_Z1fSt4pairIiiE",
        "_ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEC2EPKcRKS3_",
        "_ZNKSt8functionIFiiEEclEi",
        "_ZSt4cout",
        "_ZNSoD1Ev",
        "_ZNSsC1Ev",
        "_ZNSdD0Ev",
        "_ZZ4mainENKUlRKT_E_clIiEEDaS1_",
    ];

    fn names() -> Vec<String> {
        let mut all: Vec<String> = NAMES.iter().map(|n| n.to_string()).collect();
        // 500 pointers: demangled; 1100: over libiberty's 1024 bytes, raw.
        all.push(format!("_Z1f{}i", "P".repeat(500)));
        all.push(format!("_Z1f{}i", "P".repeat(1100)));
        // Function types nested 120 deep.
        all.push(format!("_Z1g{}i{}", "PF".repeat(120), "vE".repeat(120)));
        all
    }

    fn source() -> String {
        let mut src = String::from("static volatile long sink;\n");
        for (i, name) in names().iter().enumerate() {
            src += &format!(
                "__attribute__((noinline)) void f{i}(long n) __asm__(\"{name}\");\n\
                 void f{i}(long n) {{ for (long k = 0; k < n; k++) sink += k; }}\n"
            );
        }
        src += "int main(void) {\n";
        for i in 0..names().len() {
            src += &format!("  f{i}({});\n", 100_000 * (i % 5 + 1));
        }
        src + "  return 0;\n}\n"
    }

    fn same_everywhere(dir: &std::path::Path, program: &str) {
        let gmon = format!("{program}.gmon");
        for flags in [
            &["-b", "-p"][..],
            &["-b", "-q"],
            &[],
            &["-b", "-z", "-p"],
            &["-b", "-l", "-p"],
            &["-T", "-b"],
        ] {
            let mut args = vec!["--demangle=java"];
            args.extend_from_slice(flags);
            args.extend_from_slice(&[program, &gmon]);
            super::same_in(dir, &args);
        }
    }

    #[test]
    fn java_on_symbol_lists_matches_gprof() {
        let dir = super::profiled("gcc", "names.c", &source(), "names", &["-O1"]);
        let out = gprof(
            dir.path(),
            &["-b", "-z", "-p", "--demangle=java", "names", "names.gmon"],
        );
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains("java.util.Map$Entry.class$"), "{text}");
        assert!(text.contains("non-virtual thunk to B.f()"));
        same_everywhere(dir.path(), "names");
    }

    /// A C++17 program with what the first `--demangle=java` left out: virtual functions
    /// (thunks), an inheriting constructor, arrays by reference, `decltype` and `enable_if`
    /// (expressions in templates), `sizeof` in a template argument, folds over packs, template
    /// template parameters, pointers to functions, members and member functions, noexcept
    /// function types, `std::function`, generic and variadic lambdas, ABI tags (`std::string`),
    /// the anonymous namespace, `std::map` of `std::unique_ptr`, structured bindings,
    /// `thread_local`.
    const REAL_SOURCE: &str = r#"#include <functional>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>
static volatile long sink;
namespace geo {
struct Base { long v; explicit Base(long x) : v(x) {} virtual ~Base() {} virtual long get() const { return v; } };
struct Derived : Base { using Base::Base; long get() const override { return v * 2; } };
struct Other { virtual long other() { return 1; } virtual ~Other() {} };
struct Multi : Other, Derived { Multi() : Derived(3) {} long get() const override { return 7; } };
template <typename T, std::size_t N> long sum(const T (&a)[N]) { long s = 0; for (auto x : a) s += x; return s; }
template <typename T> auto twice(T x) -> decltype(x + x) { return x + x; }
template <typename T> typename std::enable_if<std::is_integral<T>::value, T>::type only_int(T x) { return x; }
template <int N> struct Fixed { static long scaled(long x) { return x * N; } };
template <typename T> long size_of(T) { return Fixed<sizeof(T) * 2>::scaled(1); }
template <typename... Ts> long count(Ts&&... ts) { return (0L + ... + (long)sizeof(ts)); }
template <template <typename> class C, typename T> long tt(const C<T>& c) { return (long)sizeof(c); }
template <typename T> struct Box { T t; };
long call(long (*f)(long), long x) { return f(x); }
long through(long (Base::*m)() const, const Base& b) { return (b.*m)(); }
long field(long Base::*p, Base& b) { return b.*p; }
long keep(std::function<long(long)> f) { return f(2); }
long noex(void (*f)() noexcept) { f(); return 1; }
void quiet() noexcept {}
long idf(long x) { return x + 1; }
long rv(std::string&& s, const std::vector<std::pair<int, std::string>>& v) { return (long)s.size() + (long)v.size(); }
long arr2(int (*p)[4]) { return p[0][1]; }
decltype(auto) autoret(long& x) { return (x); }
namespace { long hidden(long x) { return x - 1; } }
inline namespace v2 { long versioned() { return 2; } }
}
struct Tagged { [[gnu::abi_tag("tag1")]] long f() { return 1; } };
enum class Color { red, green };
template <Color C> long colored() { return (long)C; }
template <typename F> long apply_all(F f) { return f(1) + f(2L); }
int main() {
  geo::Derived d(4); geo::Multi m; const geo::Base& b = m; geo::Other& o = m;
  for (int i = 0; i < 3000; i++) sink += d.get() + b.get() + o.other();
  int a[3] = {1, 2, 3}; sink += geo::sum(a) + geo::twice(2.5) + geo::only_int(3) + geo::size_of('c');
  sink += geo::count(1, 2.0, 'x', std::string("s")) + geo::tt(geo::Box<int>{1});
  sink += geo::call(geo::idf, 1) + geo::through(&geo::Base::get, d) + geo::field(&geo::Base::v, d);
  sink += geo::keep([](long x) { return x * 3; }) + geo::keep(geo::idf) + geo::noex(geo::quiet);
  std::vector<std::pair<int, std::string>> v{{1, "a"}}; sink += geo::rv(std::string("x"), v);
  int m2[2][4] = {}; sink += geo::arr2(m2); long q = 1; sink += geo::autoret(q) + geo::hidden(3) + geo::versioned();
  sink += Tagged().f() + colored<Color::green>();
  auto gen = [](auto x) { return (long)x * 2; }; sink += apply_all(gen);
  auto var = [](auto... xs) { return (0L + ... + (long)xs); }; sink += var(1, 2, 3L);
  std::map<std::string, std::unique_ptr<geo::Base>> mp; mp["k"] = std::make_unique<geo::Derived>(2);
  for (auto& [k, p] : mp) sink += p->get() + (long)k.size();
  std::tuple<int, long, std::string> t{1, 2, "z"}; sink += std::get<1>(t);
  static thread_local long tl = 5; sink += tl;
  return 0;
}
"#;

    #[test]
    fn java_on_real_cplusplus_programs_matches_gprof() {
        for (opt, program) in [("-O0", "real0"), ("-O2", "real2")] {
            let dir = super::profiled("g++", "real.cc", REAL_SOURCE, program, &[opt, "-std=c++17"]);
            if opt == "-O0" {
                let out = gprof(
                    dir.path(),
                    &["-b", "-p", "--demangle=java", program, "real0.gmon"],
                );
                let text = String::from_utf8_lossy(&out.stdout);
                assert!(text.contains("geo.call(long ()(long), long)"), "{text}");
                assert!(text.contains("geo.keep(std.function<long (long)>)"));
            }
            same_everywhere(dir.path(), program);
        }
    }
}

/// `-L` (`--print-path`) and `--inline-file-names` on programs with debug info: the source
/// path BFD makes of the line table (joined to the compilation directory), after names, in the
/// index after static functions and under `-l`; DWARF 5 and 4, a source given by a relative
/// path in a subdirectory, and C++ with library headers.
mod source_paths {
    const SOURCE: &str = super::static_calls::SOURCE;

    fn check(dir: &crate::support::TempDir, exe: &str) {
        let gmon = format!("{exe}.gmon");
        for flags in [
            &["-b"][..],
            &["-L"],
            &["-L", "-b", "-q", "-z"],
            &["-L", "-l", "-b"],
            &["--print-path", "-l", "-q", "-b"],
            &["--inline-file-names"],
            &["--inline-file-names", "-L", "-b"],
            &["--inline-file-names", "-b", "-z", "-q"],
            &["--inline-file-names", "-l", "-b"],
            &["--inline-file-names", "-T"],
            &["-C"],
            &["-C", "-z", "-b"],
            &["-C", "-l", "-z", "-b"],
        ] {
            let mut args = flags.to_vec();
            args.extend_from_slice(&[exe, &gmon]);
            super::same_in(dir.path(), &args);
        }
    }

    #[test]
    fn dwarf5_relative_source_path() {
        let dir = super::profiled("gcc", "sub/fwd.c", SOURCE, "fwd", &["-g", "-O0"]);
        check(&dir, "fwd");
    }

    #[test]
    fn dwarf4_relative_source_path() {
        let dir = super::profiled(
            "gcc",
            "sub/fwd.c",
            SOURCE,
            "fwd",
            &["-g", "-gdwarf-4", "-O1"],
        );
        check(&dir, "fwd");
    }

    #[test]
    fn cplusplus_with_library_headers() {
        let dir = super::profiled(
            "g++",
            "cpp.cc",
            super::demangling::SOURCE,
            "cpp",
            &["-g", "-O1"],
        );
        check(&dir, "cpp");
    }
}

/// A gmon file with neither histogram nor arcs: without an output option gprof falls back to
/// the execution counts (empty unless `-z`); `-Z`, `-p` and `-i` change that.
#[test]
fn no_histogram_no_arcs_falls_back_to_execution_counts() {
    let dir = profiled("gcc", "fwd.c", static_calls::SOURCE, "fwd", &["-g", "-O0"]);
    std::fs::write(
        dir.join("empty.gmon"),
        b"gmon\x01\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0",
    )
    .unwrap();
    let zeros = gprof(dir.path(), &["-z", "fwd", "empty.gmon"]);
    assert!(
        !zeros.stdout.is_empty(),
        "gprof -z printed no execution counts"
    );
    for flags in [
        &[][..],
        &["-z"],
        &["-P", "-Q", "-z"],
        &["-Z", "-z"],
        &["-i", "-z"],
        &["-z", "-p"],
        &["-z", "-l"],
    ] {
        let mut args = flags.to_vec();
        args.extend_from_slice(&["fwd", "empty.gmon"]);
        crate::gprof_dropin::same_status_and_stdout(dir.path(), &args);
    }
}

/// `-A`/`-J` (annotated source) and `-y` (into `BASENAME-ann` files), with `-x`, `-m`, `-t`,
/// `-z` and names, on a two-file C program and a C++ program with library headers; and a
/// moved source found through `-I` and `GPROF_PATH`, or reported missing.
mod annotated_source {
    use crate::support::{compile, diff, gprof, profile_run, TempDir};

    const A: &str = r#"#include <stdio.h>
long work_b(long n);
static long helper_a(long n) { long s = 0; for (long i = 0; i < n; i++) s += i; return s; }
long work_a(long n) { return helper_a(n) + work_b(n / 2); }
int main(void) { long s = 0; for (int k = 0; k < 3000; k++) s += work_a(10000); printf("%ld\n", s); return 0; }
"#;
    const B: &str = "long work_b(long n)\n{\n  long s = 0;\n  for (long i = 0; i < n; i++)\n    s += i * 3;\n  return s;\n}\nlong unused_b(long n) { return n; }\n";

    /// gprof and us with `args` in `dir`: stdout, status and every `*-ann` file written.
    fn same(dir: &std::path::Path, args: &[&str], env: &[(&str, &str)]) {
        let anns = |dir: &std::path::Path| -> Vec<(String, Vec<u8>)> {
            let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
                .unwrap()
                .filter_map(|e| {
                    let e = e.ok()?;
                    let name = e.file_name().to_string_lossy().into_owned();
                    name.ends_with("-ann")
                        .then(|| (name, std::fs::read(e.path()).unwrap()))
                })
                .collect();
            v.sort();
            for (name, _) in &v {
                std::fs::remove_file(dir.join(name)).unwrap();
            }
            v
        };
        let run = |cmd: &str, args: &[&str]| {
            let mut c = std::process::Command::new(cmd);
            c.args(args).current_dir(dir).env("LC_ALL", "C");
            for (k, v) in env {
                c.env(k, v);
            }
            c.output().unwrap()
        };
        anns(dir);
        let want = run("gprof", args);
        let want_files = anns(dir);
        let mut ours_args = vec!["--gprof"];
        ours_args.extend_from_slice(args);
        let got = run(env!("CARGO_BIN_EXE_profil-report"), &ours_args);
        let got_files = anns(dir);
        assert_eq!(got.status.code(), want.status.code(), "{args:?}");
        assert!(
            want.stdout == got.stdout,
            "{args:?}: stdout differs:\n{}",
            diff(&want.stdout, &got.stdout)
        );
        assert!(want_files == got_files, "{args:?}: the -ann files differ");
    }

    #[test]
    fn two_c_files() {
        let dir = TempDir::new("gprof-dropin-anno");
        std::fs::write(dir.join("a.c"), A).unwrap();
        std::fs::write(dir.join("b.c"), B).unwrap();
        compile(
            dir.path(),
            "gcc",
            &["-pg", "-g", "-O0", "-o", "multi", "a.c", "b.c"],
        );
        profile_run(dir.path(), "multi", &[], "multi.gmon");
        let with_a = gprof(dir.path(), &["-A", "multi", "multi.gmon"]);
        assert!(String::from_utf8_lossy(&with_a.stdout).contains("*** File "));
        for flags in [
            &["-A"][..],
            &["-A", "-b"],
            &["-A", "-p", "-b"],
            &["-A", "-z"],
            &["-Amain"],
            &["-Awork_b", "-Ahelper_a"],
            &["-Jwork_b"],
            &["-A", "-J"],
            &["-A", "-x"],
            &["-A", "-m", "5000"],
            &["-A", "-t1"],
            &["-A", "-t0"],
            &["-A", "-y"],
            &["-A", "-y", "-z"],
            &["--annotated-source", "-C", "-b"],
            &["-y", "-b"],
            // Under -l: line symbols count as executable lines.
            &["-A", "-l"],
            &["-A", "-l", "-b", "-p"],
            &["-A", "-l", "-x", "-z"],
            &["-A", "-l", "-m", "5000", "-t1"],
            &["-A", "-l", "-y"],
            &["-Awork_b", "-l"],
            &["-Ab.c", "-l", "-x"],
            &["-s", "-A"],
        ] {
            let mut args = flags.to_vec();
            args.extend_from_slice(&["multi", "multi.gmon"]);
            same(dir.path(), &args, &[]);
        }
    }

    #[test]
    fn moved_source_and_search_path() {
        let dir = TempDir::new("gprof-dropin-anno-moved");
        std::fs::create_dir_all(dir.join("src")).unwrap();
        std::fs::write(dir.join("src/b.c"), B).unwrap();
        std::fs::write(dir.join("src/a.c"), A).unwrap();
        compile(
            dir.path(),
            "gcc",
            &["-pg", "-g", "-O0", "-o", "multi", "src/a.c", "src/b.c"],
        );
        profile_run(dir.path(), "multi", &[], "multi.gmon");
        std::fs::rename(dir.join("src"), dir.join("moved")).unwrap();
        same(dir.path(), &["-A", "multi", "multi.gmon"], &[]);
        same(
            dir.path(),
            &["-A", "-I", "moved", "multi", "multi.gmon"],
            &[],
        );
        same(
            dir.path(),
            &["-A", "-Inone:moved", "multi", "multi.gmon"],
            &[],
        );
        same(
            dir.path(),
            &["-A", "multi", "multi.gmon"],
            &[("GPROF_PATH", "moved")],
        );
        same(
            dir.path(),
            &["-A", "-l", "-I", "moved", "multi", "multi.gmon"],
            &[],
        );
    }

    #[test]
    fn cplusplus_with_library_headers() {
        let dir = super::profiled(
            "g++",
            "cpp.cc",
            super::demangling::SOURCE,
            "cpp",
            &["-g", "-O1"],
        );
        for flags in [
            &["-A"][..],
            &["-A", "-x", "-z"],
            &["-A", "-y", "-b"],
            // Under -l the headers' files come from line symbols too.
            &["-A", "-l"],
            &["-A", "-l", "-z", "-x"],
            &["-A", "-l", "-y", "-b"],
        ] {
            let mut args = flags.to_vec();
            args.extend_from_slice(&["cpp", "cpp.gmon"]);
            same(dir.path(), &args, &[]);
        }
    }
}

/// Symbol specs naming a source file or a line (`FILE.c`, `FILE:`, `FILE:FUNCTION`,
/// `FILE:LINE`, `LINE`) on a program of three source files, two of them with the same base
/// name in two directories (a file spec names the base name; gprof takes the file it met
/// last), and a header whose static function is known by its line symbols under `-l`.
mod source_specs {
    use crate::support::{compile, profile_run, TempDir};

    const MAIN: &str = "#include <stdio.h>\n#include \"h.h\"\nlong fx(long);\nlong fy(long);\n\
        int main(void)\n{\n  long s = 0;\n  for (int k = 0; k < 2000; k++)\n    \
        s += fx(20000) + fy(10000) + hh(k);\n  printf(\"%ld\\n\", s);\n  return 0;\n}\n";
    const HEADER: &str = "static long hh(long k)\n{\n  return k * 3;\n}\n";
    const X: &str = "long fx(long n)\n{\n  long s = 0;\n  for (long i = 0; i < n; i++)\n    \
        s += i;\n  return s;\n}\n";
    const Y: &str = "\n\nlong fy(long n)\n{\n  long s = 0;\n  for (long i = 0; i < n; i++)\n    \
        s += i * 2;\n  return s;\n}\n";

    #[test]
    fn files_lines_and_functions_match_gprof() {
        let dir = TempDir::new("gprof-dropin-specs");
        for (path, text) in [("m.c", MAIN), ("h.h", HEADER), ("x/u.c", X), ("y/u.c", Y)] {
            if let Some(parent) = std::path::Path::new(path).parent() {
                std::fs::create_dir_all(dir.join(&parent.to_string_lossy())).unwrap();
            }
            std::fs::write(dir.join(path), text).unwrap();
        }
        compile(
            dir.path(),
            "gcc",
            &["-pg", "-g", "-O0", "-o", "specs", "m.c", "x/u.c", "y/u.c"],
        );
        profile_run(dir.path(), "specs", &[], "specs.gmon");
        let specs = [
            "m.c", "u.c", "x/u.c", "h.h", "u.c:", "u.c:fx", "u.c:fy", "m.c:6", "u.c:3", "1", "3",
            "6", "9", "0", "nosuch.c", "m:", ":main",
        ];
        for spec in specs {
            for lines in [false, true] {
                for opt in ["-p", "-P", "-q", "-Q", "-F"] {
                    let glued = format!("{opt}{spec}");
                    let mut args = vec!["-b"];
                    if lines {
                        args.push("-l");
                    }
                    if opt == "-F" {
                        args.extend_from_slice(&["-F", spec]);
                    } else {
                        args.push(&glued);
                    }
                    args.extend_from_slice(&["specs", "specs.gmon"]);
                    super::same_status_and_stdout(dir.path(), &args);
                }
            }
        }
        // Arcs between files and lines; execution counts of a file.
        for args in [
            &["-b", "-qm.c/u.c", "specs", "specs.gmon"][..],
            &["-b", "-Qm.c:9/fx", "specs", "specs.gmon"],
            &["-b", "-k", "main/u.c", "specs", "specs.gmon"],
            &["-b", "-l", "-k", "m.c/h.h", "specs", "specs.gmon"],
            &["-Cu.c", "-z", "specs", "specs.gmon"],
            &["-Zm.c", "-z", "specs", "specs.gmon"],
        ] {
            super::same_status_and_stdout(dir.path(), args);
        }
    }
}

/// `-S FILE` (`--external-symbol-table`): the symbols from an `nm`-style file (only `t`/`T`
/// lines; malformed lines skipped), also for a stripped executable; a missing or empty file
/// fails as in gprof.
#[test]
fn external_symbol_table() {
    let dir = profiled("gcc", "fwd.c", static_calls::SOURCE, "fwd", &["-g", "-O0"]);
    let nm = std::process::Command::new("nm")
        .arg("fwd")
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(nm.status.success());
    std::fs::write(dir.join("fwd.syms"), &nm.stdout).unwrap();
    std::fs::write(
        dir.join("hand.syms"),
        "0x11c9 T mid\nbogus\n 1239   t leaf extra\n120f Thelper x\n",
    )
    .unwrap();
    std::fs::write(dir.join("empty.syms"), "").unwrap();
    crate::support::compile(dir.path(), "strip", &["-o", "stripped", "fwd"]);
    for args in [
        &["-S", "fwd.syms", "fwd", "fwd.gmon"][..],
        &["-b", "-z", "-Sfwd.syms", "fwd", "fwd.gmon"],
        &[
            "--external-symbol-table=fwd.syms",
            "-C",
            "-z",
            "fwd",
            "fwd.gmon",
        ],
        &[
            "-S",
            "fwd.syms",
            "-A",
            "-p",
            "--inline-file-names",
            "fwd",
            "fwd.gmon",
        ],
        &["-S", "fwd.syms", "-T", "fwd", "fwd.gmon"],
        &["-b", "-z", "-S", "hand.syms", "fwd", "fwd.gmon"],
        &["-b", "-S", "fwd.syms", "stripped", "fwd.gmon"],
        &["-S", "no-such.syms", "fwd", "fwd.gmon"],
        &["-S", "empty.syms", "fwd", "fwd.gmon"],
        // Under -l gprof makes no line symbols from the -S table.
        &["-l", "-S", "fwd.syms", "fwd", "fwd.gmon"],
        &[
            "-b",
            "-l",
            "-z",
            "-Sfwd.syms",
            "-pmain",
            "-q",
            "fwd",
            "fwd.gmon",
        ],
        &["-l", "-S", "hand.syms", "-A", "-C", "-b", "fwd", "fwd.gmon"],
        &["-l", "-S", "no-such.syms", "fwd", "fwd.gmon"],
    ] {
        same_in(dir.path(), args);
    }
    // -s (which implies -l) writes the sum of what -S's symbols kept.
    sum_file::same(&dir, &["-s", "-S", "fwd.syms", "fwd", "fwd.gmon"]);
    sum_file::same(&dir, &["-s", "-b", "-p", "-Shand.syms", "fwd", "fwd.gmon"]);
}

/// `-r` (`--function-ordering`) on a program of 240 functions (enough called ones for gprof's
/// multi-site group), alone, after the call graph (whose printing re-orders the lists gprof
/// walks), with `-c` and `-T`; and on the small fixtures.
#[test]
fn function_ordering() {
    let n = 240;
    let mut src = String::from("#include <stdio.h>\nstatic volatile long sink;\n");
    for i in 0..n {
        src += &format!("void f{i}(int d);\n");
    }
    let mut rng = crate::cg_support::Rng::new(7);
    for i in 0..n {
        let mut body = format!("sink += {i};");
        for _ in 0..rng.below(5) {
            let c = rng.below(n);
            if c > i {
                body += &format!(" if (d < 3) f{c}(d + 1);");
            }
        }
        if i % 7 == 0 {
            body += " if (d < 4) f5(d + 1); if (d < 4) f11(d + 1);";
        }
        src += &format!("void f{i}(int d) {{ {body} }}\n");
    }
    let calls: String = (0..n).step_by(2).map(|i| format!("f{i}(0); ")).collect();
    src += &format!(
        "int main(void) {{ for (int k = 0; k < 300; k++) {{ {calls}}} printf(\"%ld\\n\", sink); return 0; }}\n"
    );
    let dir = profiled("gcc", "big.c", &src, "big", &["-O0"]);
    same_in_each(
        dir.path(),
        &[
            &["-r"][..],
            &["-r", "-b", "-q"],
            &["-r", "-p"],
            &["--function-ordering", "-c"],
            &["-r", "-b", "-q", "-z"],
            &["-r", "-T"],
            &["-r", "-l"],
            &["-r", "-l", "-q", "-b"],
        ],
        &["big", "big.gmon"],
    );
    let fixtures = fixtures_dir("gcc-pg");
    for p in ["loop2", "cycle", "recursion", "threads"] {
        let gmon = format!("{p}.gmon");
        same_in(&fixtures, &["-r", p, &gmon]);
        same_in(&fixtures, &["-r", "-b", "-q", p, &gmon]);
    }
}

/// `-d[N]` / `--debug[=N]`: Debian's gprof 2.40 is built with `DEBUG`, so `-d` prints its
/// trace lines (symbol table, gmon records, sample assignment, call-graph assembly, the
/// decorations `{top_order} fract% ` after every name, `cmp_arc`'s comparisons…) on stdout,
/// interleaved with the report. Every bit alone, every bit together (bare `-d`) with each
/// section, on each fixture program; then `-pg` programs with file symbols, forward calls
/// (`-c` finds some) and DWARF (`get_src_info` answers, `-A`'s search).
mod debug_traces {
    macro_rules! debug_cases {
        ($program:ident, $func:expr) => {
            mod $program {
                debug_cases!(@tests $program, $func;
                    all_default: ["-d", "P", "G"],
                    all_brief: ["-d", "-b", "P", "G"],
                    all_flat_brief: ["-d", "-b", "-p", "P", "G"],
                    all_graph_brief: ["-d", "-b", "-q", "P", "G"],
                    all_exec_counts: ["-d", "-C", "P", "G"],
                    all_annotated_source: ["-d", "-A", "P", "G"],
                    all_file_info: ["-d", "-i", "P", "G"],
                    all_file_info_two_files: ["-d", "-i", "-b", "-p", "P", "G", "G"],
                    all_traditional: ["-d", "-T", "P", "G"],
                    all_function_order: ["-d", "-r", "P", "G"],
                    all_zeros_no_static: ["-d", "-z", "-a", "-b", "P", "G"],
                    all_ignore_non_functions: ["-d", "-D", "-b", "-q", "P", "G"],
                    all_width: ["-d", "-w", "200", "P", "G"],
                    all_print_path: ["-d", "-L", "-b", "P", "G"],
                    all_lines: ["-d", "-l", "P", "G"],
                    all_lines_flat_brief: ["-d", "-l", "-b", "-p", "P", "G"],
                    all_lines_graph_brief: ["-d", "-l", "-b", "-q", "P", "G"],
                    all_lines_zeros_file_info: ["-d", "-l", "-z", "-i", "P", "G"],
                    aout_lines: ["-d128", "-l", "-b", "-p", "P", "G"],
                    lookup_lines: ["-d512", "-l", "-b", "-p", "P", "G"],
                    long_debug: ["--debug", "-b", "-p", "P", "G"],
                    long_debug_level: ["--debug=6", "-b", "-q", "P", "G"],
                    bit_0_any: ["-d0", "-b", "P", "G"],
                    bit_1_any: ["-d1", "-b", "P", "G"],
                    bit_2_dfn: ["-d2", "-b", "P", "G"],
                    bit_4_cycle: ["-d4", "-b", "P", "G"],
                    bit_8_arc: ["-d8", "-b", "P", "G"],
                    bit_16_tally: ["-d16", "-b", "P", "G"],
                    bit_32_time: ["-d32", "-b", "P", "G"],
                    bit_64_sample: ["-d64", "-b", "P", "G"],
                    bit_128_aout: ["-d128", "-b", "P", "G"],
                    bit_512_lookup: ["-d512", "-b", "P", "G"],
                    bit_1024_prop: ["-d1024", "-b", "P", "G"],
                    bit_2048_bb: ["-d2048", "-b", "P", "G"],
                    bit_4096_id: ["-d4096", "-b", "P", "G"],
                    bit_8192_src: ["-d8192", "-A", "P", "G"],
                    bits_dfn_and_prop_default: ["-d1026", "P", "G"],
                    two_levels_or: ["-d2", "-d1024", "-b", "-q", "P", "G"],
                    level_then_all: ["-d4", "-d", "-b", "-p", "P", "G"],
                    level_not_a_number: ["-dxyz", "-b", "-p", "P", "G"],
                    level_negative: ["-d-1", "-b", "-p", "P", "G"],
                    level_high_bits: ["-d65536", "-b", "-p", "P", "G"],
                    // Symbol specs: sym_id_parse's tables and arcs, and the probes of every
                    // look-up in them (cg_tally, assign_samples, propagate_flags, the flat
                    // profile, the execution counts).
                    specs_flat: ["-d", "-b", "-p{f}", "-Pmain", "P", "G"],
                    specs_flat_only_excluded: ["-d", "-P{f}", "P", "G"],
                    specs_graph_and_arcs: ["-d", "-b", "-q{f}", "-Qmain/{f}", "-k/{f}", "P", "G"],
                    specs_arcs_included: ["-d", "-b", "-qmain/{f}", "-q{f}/", "-k:{f}/{f}", "P", "G"],
                    specs_time: ["-d", "-b", "-E{f}", "-Nmain", "-f{f}", "-F{f}", "-n{f}", "-e{f}", "P", "G"],
                    specs_exec_and_anno: ["-d", "-C{f}", "-Zmain", "-A{f}", "-J{f}", "-z", "P", "G"],
                    specs_lines_and_files: ["-d", "-l", "-b", "-p0", "-q12", "-Pnosuch.c", "-k:{f}/", "P", "G"],
                    specs_same_symbol_twice: ["-d", "-b", "-p{f}", "-p{f}", "-k/{f}", "-k/{f}", "P", "G"],
                    specs_traditional: ["-d", "-T", "-p{f}", "-q{f}", "P", "G"],
                    // data_start ends below its start: gprof drops its entry, the table is empty.
                    specs_empty_range: ["-d", "-b", "-pdata_start", "-qdata_start", "P", "G"],
                    flat_spec_of_an_empty_range: ["-b", "-p", "-pdata_start", "P", "G"],
                    specs_bit_16_tally: ["-d16", "-b", "-k{f}/", "-k/{f}", "P", "G"],
                    specs_bit_512_lookup: ["-d512", "-b", "-p{f}", "-q{f}", "-E{f}", "-k/{f}", "P", "G"],
                    specs_bit_4096_id: ["-d4096", "-b", "-p{f}", "-qmain/{f}", "-Pnosuch.c:3", "P", "G"],
                    specs_bit_1024_prop: ["-d1024", "-b", "-q", "-F{f}", "-Nmain", "P", "G"],
                );
            }
        };
        (@tests $program:ident, $func:expr; $($case:ident: [$($arg:expr),*],)*) => {
            $(
                #[test]
                fn $case() {
                    super::super::same(stringify!($program), $func, &[$($arg),*]);
                }
            )*
        };
    }

    debug_cases!(loop2, "inner");
    debug_cases!(recursion, "fib");
    debug_cases!(cycle, "ping");
    debug_cases!(threads, "work_a");

    /// `gprof ARGS` and `profil-report --gprof ARGS` in `dir` (`ARGS` end with the
    /// executable and its gmon file), with `-c`: the same status and stdout, except that
    /// gprof's `[findcall]` lines for a "call" byte outside `.text` are left out of its side.
    /// There gprof reads before or after its copy of `.text` (`_init`, in `.init`, is scanned
    /// from the heap memory before it), so what it finds depends on its heap; we find nothing.
    fn same_but_heap_calls(dir: &std::path::Path, args: &[&str]) {
        let exe = std::fs::read(dir.join(args[args.len() - 2])).unwrap();
        let image = profil_symbols::ElfImage::parse(&exe).unwrap();
        let text = image.section_by_name(".text").unwrap();
        let (lo, hi) = (text.addr, text.addr + text.size);
        let want = crate::support::gprof(dir, args);
        let mut ours_args = vec!["--gprof"];
        ours_args.extend_from_slice(args);
        let got = crate::support::ours(dir, &ours_args);
        assert_eq!(
            got.status.code(),
            want.status.code(),
            "{args:?}: exit status"
        );
        let outside = |line: &[u8]| {
            let Some(rest) = line.strip_prefix(b"[findcall]\t0x") else {
                return false;
            };
            let end = rest.iter().position(|&b| b == b':').unwrap_or(0);
            let addr = u64::from_str_radix(std::str::from_utf8(&rest[..end]).unwrap_or(""), 16);
            addr.is_ok_and(|a| a < lo || a >= hi)
        };
        // A heap "call" that is looked up ends its line with the lookup's trace; its botch
        // comes on the next line. (One that hit a symbol would add an arc: then we differ.)
        let mut kept = Vec::new();
        let mut left_out = 0;
        let mut botch_follows = false;
        for line in want.stdout.split_inclusive(|&b| b == b'\n') {
            if botch_follows && line == b"\tbut it's a botch\n" {
                botch_follows = false;
                continue;
            }
            botch_follows = false;
            if outside(line) {
                left_out += 1;
                botch_follows = !line.ends_with(b"\tbut it's a botch\n");
            } else {
                kept.extend_from_slice(line);
            }
        }
        assert!(
            kept == got.stdout,
            "{args:?}: stdout differs from gprof's ({left_out} heap lines left out):\n{}",
            crate::support::diff(&kept, &got.stdout)
        );
    }

    /// `-c` with every trace and with `CALLDEBUG` alone, on each fixture program.
    #[test]
    fn static_calls_on_the_fixtures() {
        let dir = crate::support::fixtures_dir("gcc-pg");
        for p in ["loop2", "recursion", "cycle", "threads"] {
            let gmon = format!("{p}.gmon");
            for flags in [
                &["-d", "-c"][..],
                &["-d", "-c", "-b", "-q"],
                &["-d256", "-c", "-b"],
                &["-d768", "-c", "-b", "-p"],
            ] {
                let mut args = flags.to_vec();
                args.extend_from_slice(&[p, &gmon]);
                same_but_heap_calls(&dir, &args);
            }
        }
    }

    /// A `-O0 -pg` program whose `.symtab` has file symbols (`get_src_info` names the file of
    /// the function it finds) and forward calls (`-c`'s traces of hits, their lookups and arcs).
    #[test]
    fn file_symbols_and_static_calls() {
        let dir = super::profiled("gcc", "fwd.c", super::static_calls::SOURCE, "fwd", &["-O0"]);
        let found = crate::support::gprof(dir.path(), &["-d256", "-c", "-b", "fwd", "fwd.gmon"]);
        assert!(
            String::from_utf8_lossy(&found.stdout).contains("\tdestpc "),
            "-c found no call"
        );
        super::same_in_each(
            dir.path(),
            &[
                &["-d"][..],
                &["-d", "-a", "-b"],
                &["-d", "-b", "-q", "-z"],
                &["-d", "-l"],
                &["-d", "-l", "-b", "-q", "-z"],
            ],
            &["fwd", "fwd.gmon"],
        );
        for flags in [
            &["-d", "-c"][..],
            &["-d", "-c", "-b", "-q", "-z"],
            &["-d768", "-c", "-b"],
            &["-d", "-c", "-T"],
        ] {
            let mut args = flags.to_vec();
            args.extend_from_slice(&["fwd", "fwd.gmon"]);
            same_but_heap_calls(dir.path(), &args);
        }
    }

    /// An inlined function (`-O2 -g`): under `-l` BFD names the inlined copy's lines after it.
    #[test]
    fn inlined_lines() {
        const SOURCE: &str = r#"#include <stdio.h>
static volatile long sink;
static inline long sq(long x) { return x * x; }
__attribute__((noinline)) long work(long n) { long s = 0; for (long i = 0; i < n; i++) s += sq(i) + sink; return s; }
int main(void) { long t = 0; for (int k = 0; k < 2000; k++) t += work(10000); printf("%ld\n", t); return 0; }
"#;
        let dir = super::profiled("gcc", "inl.c", SOURCE, "inl", &["-O2", "-g"]);
        super::same_in_each(
            dir.path(),
            &[&["-d", "-l", "-b"][..], &["-d", "-l"], &["-d", "-b"]],
            &["inl", "inl.gmon"],
        );
        same_but_heap_calls(
            dir.path(),
            &["-d", "-l", "-b", "-q", "-c", "inl", "inl.gmon"],
        );
    }

    /// With `-g`, specs naming files and lines: `parse_id` prints the file gprof found (its
    /// whole path) and the arcs their ends' files; at each bit level too.
    #[test]
    fn symbol_specs_with_debug_info() {
        let dir = super::profiled(
            "gcc",
            "src/fwd.c",
            super::static_calls::SOURCE,
            "fwd",
            &["-O0", "-g"],
        );
        let run = |flags: &[&str]| {
            let mut args = flags.to_vec();
            args.extend_from_slice(&["fwd", "fwd.gmon"]);
            super::same_in(dir.path(), &args);
        };
        let specs = [
            "-kfwd.c:main/fwd.c:mid",
            "-k/leaf",
            "-pfwd.c:mid",
            "-Pmain",
            "-qleaf",
            "-Qmid/leaf",
            "-Efwd.c:6",
            "-Nhelper",
            "-Cmid",
            "-Amid",
            "-Psrc/fwd.c",
        ];
        for level in [
            "-d", "-d2", "-d16", "-d64", "-d512", "-d1024", "-d4096", "-d0x1000",
        ] {
            let mut flags = vec![level, "-b"];
            flags.extend_from_slice(&specs);
            run(&flags);
        }
        run(&["-d", "-pfwd.c"]);
        run(&["-d", "-l", "-b", "-pfwd.c:6", "-q6", "-kmid/leaf"]);
        run(&["-d", "-l", "-Afwd.c:6"]);
        run(&["-d", "-A", "-Jmid"]);
        run(&["-d", "-l", "-C", "-Zleaf"]);
    }

    /// A static program has `mcount` & co. in its symbol table: gprof's default exclusions
    /// then fill its EXCL tables, with their traces and probes.
    #[test]
    fn static_program_default_exclusions() {
        let dir = super::profiled(
            "gcc",
            "fwd.c",
            super::static_calls::SOURCE,
            "fwd",
            &["-O0", "-static"],
        );
        let found = crate::support::gprof(dir.path(), &["-d4096", "-b", "fwd", "fwd.gmon"]);
        assert!(
            String::from_utf8_lossy(&found.stdout).contains("\tmcount\n"),
            "no default exclusion in the tables"
        );
        super::same_in_each(
            dir.path(),
            &[
                &["-d"][..],
                &["-d", "-b"],
                &["-d", "-l", "-b"],
                &["-d1", "-b"],
                &["-d64", "-b"],
                &["-d512", "-b"],
                &["-d1024", "-b", "-q"],
                &["-d4096", "-b"],
                &["-d", "-b", "-Pmcount", "-p_mcount"],
                &["-d", "-C", "-z"],
                &["-d", "-T"],
            ],
            &["fwd", "fwd.gmon"],
        );
    }

    /// BSD-format gmon files (4.4BSD and old BSD, auto-detected or named by `-O`):
    /// `gmon_out_read`'s own traces of the header and of each arc. A file of the wrong format
    /// fails before its traces (status 1, the traces of the files before it printed), except
    /// that `-Ob` traces a GNU file's start as a BSD header when it comes first.
    #[test]
    fn bsd_format_files() {
        let dir = super::sum_file::scratch();
        super::same_in_each(
            dir.path(),
            &[&["-d"][..], &["-d", "-l", "-b"]],
            &["cycle", "cycle.old", "cycle.bsd"],
        );
        for flags in [
            &["-d", "-b"][..],
            &["-d", "-i"],
            &["-d", "-Ob", "-b"],
            &["-d", "-O4", "-b"],
            &["-d", "-Om", "-b"],
            &["-d1", "-b"],
            &["-d16", "-b"],
            &["-d64", "-b"],
            &["-d512", "-b", "-q"],
            &["-d", "-b", "-pping", "-kping/pong"],
        ] {
            for files in [
                &["cycle.bsd"][..],
                &["cycle.old"],
                &["cycle.gmon"],
                &["cycle.old", "cycle.bsd"],
                &["cycle.gmon", "cycle.bsd"],
                &["cycle.bsd", "cycle.gmon"],
            ] {
                if flags.contains(&"-Ob") && files[0] == "cycle.gmon" {
                    // gprof then allocates and clears 16 GiB for the bins of the negative
                    // count it read: within the tests' address-space limit it dies without
                    // flushing its last traces (see crate::gprof::debug).
                    continue;
                }
                let mut args = flags.to_vec();
                args.push("cycle");
                args.extend_from_slice(files);
                super::same_status_and_stdout(dir.path(), &args);
            }
        }
        // gprof's -i shows a BSD file with the version of the GNU file before it.
        super::same_in(dir.path(), &["-i", "cycle", "cycle.gmon", "cycle.bsd"]);
    }

    /// `-S FILE` under `-d`: `external-symbol-table: FILE` as the option is parsed (with
    /// `AOUTDEBUG` on by then), no `core_create_function_syms` traces, and the rest as usual
    /// (no symbol has a file); also when the file is missing or empty (gprof fails after it).
    #[test]
    fn external_symbol_table() {
        let dir = super::profiled("gcc", "fwd.c", super::static_calls::SOURCE, "fwd", &["-g"]);
        let nm = std::process::Command::new("nm")
            .arg("fwd")
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert!(nm.status.success());
        std::fs::write(dir.join("fwd.syms"), &nm.stdout).unwrap();
        std::fs::write(
            dir.join("hand.syms"),
            "0x11c9 T mid\nbogus\n 1239   t leaf extra\n120f Thelper x\n",
        )
        .unwrap();
        std::fs::write(dir.join("empty.syms"), "").unwrap();
        for flags in [
            &["-d", "-S", "fwd.syms"][..],
            &["-d", "-b", "-S", "hand.syms"],
            &[
                "-d",
                "-b",
                "-S",
                "fwd.syms",
                "-pmid",
                "-kmid/leaf",
                "-pfwd.c",
            ],
            &["-d", "-l", "-b", "-S", "fwd.syms"],
            &["-d", "-l", "-S", "hand.syms", "-pmid", "-C"],
            &["-d128", "-b", "-S", "fwd.syms"],
            &["-d4096", "-b", "-S", "fwd.syms"],
            &["-b", "-S", "fwd.syms", "-d"],
            &["-d", "-S", "hand.syms", "-d2", "-S", "fwd.syms", "-b"],
            &["-d", "-S", "no-such.syms"],
            &["-d", "-S", "empty.syms"],
        ] {
            let mut args = flags.to_vec();
            args.extend_from_slice(&["fwd", "fwd.gmon"]);
            super::same_status_and_stdout(dir.path(), &args);
        }
        super::sum_file::same(&dir, &["-d", "-s", "-S", "fwd.syms", "fwd", "fwd.gmon"]);
    }

    /// At `-O2` everything is inlined into `main`, so the profile has no arcs: gprof never
    /// assembles the call graph (none of its traces, every name decorated `{0}    0% `), and
    /// `-q` fails after the traces.
    #[test]
    fn without_arcs() {
        let dir = super::profiled(
            "gcc",
            "fwd.c",
            super::static_calls::SOURCE,
            "fwd",
            &["-O2", "-g"],
        );
        let plain = crate::support::gprof(dir.path(), &["-d", "-b", "fwd", "fwd.gmon"]);
        let text = String::from_utf8_lossy(&plain.stdout);
        assert!(!text.contains("[cg_read_rec]"), "the profile has arcs");
        assert!(text.contains("{0}    0% "), "no undecorated name");
        for flags in [
            &["-d", "-b"][..],
            &["-d", "-b", "-p"],
            &["-d", "-q"],
            &["-d", "-l", "-b"],
            &["-d", "-l", "-q"],
            &["-d", "-C"],
        ] {
            let mut args = flags.to_vec();
            args.extend_from_slice(&["fwd", "fwd.gmon"]);
            // `-q` fails (status 1) with the traces on stdout: compared like the rest.
            super::same_status_and_stdout(dir.path(), &args);
        }
    }

    /// With `-g`: `get_src_info` answers from the line table (whole path, line, function), and
    /// `-A` traces its search for the source (`SRCDEBUG`), found or not.
    #[test]
    fn debug_info_and_annotated_source() {
        let dir = super::profiled(
            "gcc",
            "src/fwd.c",
            super::static_calls::SOURCE,
            "fwd",
            &["-O0", "-g"],
        );
        let found = crate::support::gprof(dir.path(), &["-d128", "-b", "fwd", "fwd.gmon"]);
        assert!(
            String::from_utf8_lossy(&found.stdout).contains("fwd.c:5 (mid)"),
            "no line information"
        );
        let run = |flags: &[&str]| {
            let mut args = flags.to_vec();
            args.extend_from_slice(&["fwd", "fwd.gmon"]);
            super::same_in(dir.path(), &args);
        };
        for flags in [
            &["-d"][..],
            &["-d", "-b", "-q"],
            &["-d", "-A", "-b"],
            &["-d8192", "-A"],
            &["-d", "-C", "-b"],
            &["-d", "-L", "-b"],
            &["-d", "-l"],
            &["-d", "-l", "-L", "-b", "-q"],
            &["-d640", "-l", "-b", "-p"],
        ] {
            run(flags);
        }
        same_but_heap_calls(dir.path(), &["-d", "-l", "-c", "-b", "fwd", "fwd.gmon"]);
        // The source moved: gprof tries its path, then each -I directory with its base name.
        std::fs::create_dir_all(dir.join("moved")).unwrap();
        std::fs::rename(dir.join("src/fwd.c"), dir.join("moved/fwd.c")).unwrap();
        run(&["-d8192", "-A", "-b", "-Isrc:moved"]);
        run(&["-d", "-A", "-b"]);
    }
}

/// Mismatches found by sweeping real programs (brotli, C, C++, Rust) through both.
mod sweep {
    /// A profile without arcs (at `-O2` all is inlined into `main`): gprof never assembles
    /// the call graph, so the BSD-style flat profile (`-T`) names no `[index]`.
    #[test]
    fn bsd_flat_profile_without_arcs_has_no_indices() {
        let dir = super::profiled(
            "gcc",
            "fwd.c",
            super::static_calls::SOURCE,
            "fwd",
            &["-O2", "-g"],
        );
        super::same_in_each(
            dir.path(),
            &[
                &["-T", "-p", "-z"][..],
                &["-b", "-T", "-p"],
                &["-b", "-T", "-l", "-p", "-z"],
            ],
            &["fwd", "fwd.gmon"],
        );
    }
}

/// `@FILE` words (libiberty's `expandargv`, which gprof calls first): a readable file's
/// words, split as the shell would without expansions, stand in its place.
mod response_files {
    use crate::support::TempDir;

    /// A scratch copy of the `cycle` fixture program and its profile, with `files` (name,
    /// text) written beside them.
    fn dir(files: &[(&str, &str)]) -> TempDir {
        let dir = TempDir::new("gprof-atfile");
        let fixtures = crate::support::fixtures_dir("gcc-pg");
        for f in ["cycle", "cycle.gmon"] {
            std::fs::copy(fixtures.join(f), dir.join(f)).unwrap();
        }
        for (name, text) in files {
            std::fs::write(dir.join(name), text).unwrap();
        }
        dir
    }

    #[test]
    fn options_and_operands() {
        let d = dir(&[("opts", "-b -p\ncycle\n")]);
        super::same_in(d.path(), &["@opts", "cycle.gmon"]);
    }

    #[test]
    fn quotes_and_backslashes() {
        let d = dir(&[("opts", "'-b' \"-q\" -p\\ping cy\\cle 'cycle.gmon'")]);
        super::same_in(d.path(), &["@opts"]);
    }

    #[test]
    fn nested_files() {
        let d = dir(&[("outer", "-b @inner cycle"), ("inner", "-p -z")]);
        super::same_in(d.path(), &["@outer", "cycle.gmon"]);
    }

    #[test]
    fn empty_file_adds_nothing() {
        let d = dir(&[("empty", " \n\t")]);
        super::same_in(d.path(), &["-b", "-p", "@empty", "cycle", "cycle.gmon"]);
    }

    #[test]
    fn missing_file_stays_a_word() {
        let d = dir(&[]);
        super::same_in(d.path(), &["-b", "cycle", "@no-such", "cycle.gmon"]);
    }

    #[test]
    fn directory_fails() {
        let d = dir(&[]);
        std::fs::create_dir(d.join("sub")).unwrap();
        super::same_in(d.path(), &["-b", "@sub", "cycle", "cycle.gmon"]);
    }

    #[test]
    fn file_naming_itself_fails() {
        let d = dir(&[("loop", "-b @loop")]);
        super::same_in(d.path(), &["@loop", "cycle", "cycle.gmon"]);
    }
}

/// gprof acts on each option as getopt returns it: what comes before an option getopt
/// rejects is done (a `-d` prints its banner, `-v` exits with the version).
mod options_before_a_complaint {
    #[test]
    fn debug_banner_then_invalid_option() {
        let dir = crate::support::fixtures_dir("gcc-pg");
        let (want, _) = super::same_status_and_stdout(&dir, &["-d6", "-j", "cycle", "cycle.gmon"]);
        assert!(!want.stdout.is_empty() && !want.status.success());
    }

    #[test]
    fn version_then_missing_argument() {
        let dir = crate::support::fixtures_dir("gcc-pg");
        super::same_in(&dir, &["-v", "cycle", "cycle.gmon", "-k"]);
    }
}
