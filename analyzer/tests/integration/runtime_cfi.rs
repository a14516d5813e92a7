//! Call stacks without frame pointers (issue 22): fixtures/runtime/cfi.c (and its library
//! cfilib.c) built with plain `gcc -O2 -g` — gcc's default `-fomit-frame-pointer`, like every
//! distribution's libc and libm — and linked with the runtime object; fixtures/runtime/stacks.rs
//! built `rustc -O -g` without forced frame pointers. The profiles use the default
//! `PROFIL_RANGES=all` and are read back with `profil-report` (`--json`: the rows' total column
//! and the sampled call graph; `export --to folded`: the stacks).
//!
//! Every program measures its own truth (`clock_gettime` on a CPU-time clock around its parts);
//! each test compares the profile's inclusive shares with it, never with a CPU speed, and runs
//! the program with doubling work until at least 2,000 samples were walked (1.1 points of
//! binomial standard deviation at a 60% share). Bound: within 5 points of the program's own
//! truth (the issue asks ±3 of perf on real programs; here the truth is exact, and 5 points are
//! over 4 standard deviations), `main` on at least 97% of the samples.
//!
//! The programs were checked with a CFI unwinder, `perf record -e task-clock:u -F 1000
//! --call-graph dwarf`, on the plain builds: every share these tests check came within 0.7
//! points of the program's truth, `main` on 99.9-100% of the stacks, every chain checked held
//! in every stack, and every stack of the Rust build reached `_start`. Each test's doc says
//! what the frame-pointer walker (the runtime before CFI) gets.

use crate::stacks_support::{
    build_rust, check_report_costly_share, folded, report, report_json, row_total, run,
    run_until_walks, stat, truth, Run,
};
use crate::support::{runtime_path, TempDir};
use std::collections::{HashMap, HashSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The samples a test waits for.
const MIN_WALKS: u64 = 2000;
/// How far (in points) a share may be from the program's own truth.
const POINTS: f64 = 5.0;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures/runtime")
        .join(name)
}

fn gcc(args: &[&std::ffi::OsStr]) {
    let out = Command::new("gcc").args(args).output().unwrap();
    assert!(out.status.success(), "gcc {args:?}: {out:?}");
}

/// fixtures/runtime/cfilib.c built `gcc -O2 -g -shared -fPIC` as `dir/name`.
fn build_lib(dir: &TempDir, name: &str) -> PathBuf {
    let so = dir.0.join(name);
    gcc(&[
        "-O2".as_ref(),
        "-g".as_ref(),
        "-shared".as_ref(),
        "-fPIC".as_ref(),
        "-o".as_ref(),
        so.as_os_str(),
        fixture("cfilib.c").as_os_str(),
    ]);
    so
}

/// fixtures/runtime/cfi.c built `gcc -O2 -g` with the runtime object, linked with
/// `libcfilib.so` (lazy binding, found beside it).
fn build(dir: &TempDir) -> PathBuf {
    build_with(dir, Some(runtime_path(false).as_os_str()))
}

/// The fixture with the runtime object linked in (`runtime`), or plain (for `LD_PRELOAD`).
fn build_with(dir: &TempDir, runtime: Option<&std::ffi::OsStr>) -> PathBuf {
    build_lib(dir, "libcfilib.so");
    let exe = dir.0.join("cfi");
    gcc(&[
        "-O2".as_ref(),
        "-g".as_ref(),
        "-o".as_ref(),
        exe.as_os_str(),
        fixture("cfi.c").as_os_str(),
        runtime.unwrap_or("-DPLAIN".as_ref()),
        "-L".as_ref(),
        dir.0.as_os_str(),
        "-lcfilib".as_ref(),
        "-Wl,-z,lazy".as_ref(),
        "-Wl,-rpath,$ORIGIN".as_ref(),
        "-lm".as_ref(),
        "-ldl".as_ref(),
        "-lpthread".as_ref(),
    ]);
    exe
}

/// Run `cfi MODE SCALE extra...` until [`MIN_WALKS`] samples were walked.
fn run_mode(dir: &TempDir, exe: &Path, mode: &str, start: u64, extra: &[&str]) -> Run {
    let args = |s: &str| {
        [mode, s]
            .iter()
            .chain(extra)
            .map(|a| a.to_string())
            .collect()
    };
    run_until_walks(dir, exe, start, args, &[], MIN_WALKS)
}

/// The sampled call graph's samples (all walks), from the report's JSON.
fn samples(j: &serde_json::Value) -> u64 {
    let n = j["call_graph"]["samples"].as_u64();
    n.unwrap_or_else(|| panic!("no sampled call graph: {j}"))
}

/// `name`'s total (inclusive) share of all samples, in %, from the report's total column.
fn share(j: &serde_json::Value, name: &str) -> f64 {
    let total = row_total(j, name).unwrap_or(0);
    100.0 * total as f64 / samples(j) as f64
}

/// `name`'s total share is within [`POINTS`] of the truth `key` the program printed.
fn assert_share(j: &serde_json::Value, r: &Run, name: &str, key: &str) {
    let (got, want) = (share(j, name), 100.0 * truth(r, key));
    assert!(
        (got - want).abs() <= POINTS,
        "{name}: total {got:.1}% of {} samples, truth {want:.1}%\n{}{}",
        samples(j),
        r.stdout,
        r.stderr
    );
}

/// `main` is on at least 97% of the samples.
fn assert_main(j: &serde_json::Value, r: &Run) {
    let got = share(j, "main");
    assert!(
        got >= 97.0,
        "main: total {got:.1}% of {} samples\n{}",
        samples(j),
        r.stderr
    );
}

/// Of the samples with `func` on the stack (at least 20 of them), the share (in %) whose frames
/// hold `chain` in this order before it.
fn chain_share(dir: &TempDir, exe: &Path, func: &str, chain: &[&str]) -> f64 {
    let (mut with, mut all) = (0u64, 0u64);
    for (frames, n) in folded(dir, exe) {
        let Some(at) = frames.iter().position(|f| f == func) else {
            continue;
        };
        all += n;
        let mut want = chain.iter().peekable();
        for f in &frames[..at] {
            if want.peek().is_some_and(|w| *w == f) {
                want.next();
            }
        }
        if want.peek().is_none() {
            with += n;
        }
    }
    assert!(all >= 20, "only {all} samples with {func} on the stack");
    100.0 * with as f64 / all as f64
}

fn assert_chain(dir: &TempDir, exe: &Path, func: &str, chain: &[&str]) {
    let got = chain_share(dir, exe, func, chain);
    assert!(
        got >= 95.0,
        "only {got:.1}% of the stacks through {func} hold {chain:?} above it"
    );
}

/// Build cfi.c, run `cfi MODE SCALE extra...` until enough samples were walked, and check
/// what every case of a caller whose work happens elsewhere shares: `func`'s total within
/// [`POINTS`] of the truth `<func>_share`, `main` ≥ 97%, and the stacks through `through`
/// holding `chain` above it; the program's run and the report's JSON.
fn check_caller(
    dir: &TempDir,
    mode: &str,
    extra: &[&str],
    func: &str,
    through: &str,
    chain: &[&str],
) -> (PathBuf, Run, serde_json::Value) {
    let exe = build(dir);
    let r = run_mode(dir, &exe, mode, 100, extra);
    let j = report_json(dir, &exe);
    assert_share(&j, &r, func, &format!("{func}_share"));
    assert_main(&j, &r);
    assert_chain(dir, &exe, through, chain);
    (exe, r, j)
}

/// Case 1: A default-flags program whose caller spends its time in libm (`sin`, `exp`) and libc
/// (`snprintf`, `strtod`): `math_caller`'s total within 5 points of the share it measured and at
/// least 95% of it, `main` on ≥ 97% of the samples.
///
/// Frame-pointer walker: FAILS — math_caller 5.8% vs truth 59.5%, main 39.5%.
#[test]
fn time_in_libm_and_libc_counts_under_its_caller_and_main() {
    let dir = TempDir::new("cfi-libm");
    let (exe, r, j) = check_caller(&dir, "libm", &[], "math_caller", "math_caller", &["main"]);
    // The bound: the caller's total is at least 95% of the truth it measures.
    let (got, want) = (
        share(&j, "math_caller"),
        100.0 * truth(&r, "math_caller_share"),
    );
    assert!(
        got >= 0.95 * want,
        "math_caller {got:.1}% < 95% of {want:.1}%"
    );
    // The other renderers read the same profile.
    for args in [&[][..], &["--csv"]] {
        let mut a = args.to_vec();
        a.extend(["gmon.out", exe.to_str().unwrap()]);
        let (code, _, err) = report(&dir, &a);
        assert_eq!(code, 0, "{args:?}: {err}");
    }
}

/// The direct call targets of each function in `objdump -d exe` (tail-call jumps included), and
/// whether it also calls through the PLT or a register.
fn direct_calls(exe: &Path) -> HashMap<String, (HashSet<String>, bool)> {
    let out = Command::new("objdump")
        .args(["-d", "--no-show-raw-insn"])
        .arg(exe)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let mut map: HashMap<String, (HashSet<String>, bool)> = HashMap::new();
    let mut cur = String::new();
    for l in String::from_utf8_lossy(&out.stdout).lines() {
        if let Some(name) = l
            .strip_suffix(">:")
            .and_then(|l| l.split_once(" <"))
            .map(|(_, n)| n)
        {
            cur = name.to_owned();
            map.entry(cur.clone()).or_default();
            continue;
        }
        let Some(ins) = l.split('\t').nth(1) else {
            continue;
        };
        let mut w = ins.split_whitespace();
        let op = w.next().unwrap_or("");
        if op != "call" && op != "jmp" {
            continue;
        }
        let operand = w.collect::<Vec<_>>().join(" ");
        let e = map.entry(cur.clone()).or_default();
        match operand
            .split_once('<')
            .map(|(_, t)| t.trim_end_matches('>'))
        {
            Some(t) if t.ends_with("@plt") => e.1 = true,
            Some(t) if !t.contains('+') => {
                e.0.insert(t.to_owned());
            }
            Some(_) => {}
            None if operand.starts_with('*') && op == "call" => e.1 = true,
            None => {}
        }
    }
    map
}

/// Case 2: glibc `malloc`/`free` and `qsort` with a comparison callback: `sort_caller`'s total
/// within 5 points of its truth and `main` ≥ 97%; ≥ 95% of the stacks through the comparator
/// `cmp_items` run main → sort_caller → (qsort) → cmp_items; and no arc the binary cannot make:
/// an arc out of one of the program's functions goes to a direct call target of it in
/// `objdump -d` or, when it calls through the PLT or a register, into another object.
///
/// Frame-pointer walker: FAILS — sort_caller 0.5% vs truth 54.6%, main 45%, and an invented arc
/// cmp_items → __vsnprintf_internal (libc) in 4 samples.
#[test]
fn qsort_callbacks_and_malloc_reach_main_with_no_invented_arcs() {
    let dir = TempDir::new("cfi-qsort");
    let chain = ["main", "sort_caller"];
    let (exe, _, j) = check_caller(&dir, "qsort", &[], "sort_caller", "cmp_items", &chain);
    let calls = direct_calls(&exe);
    let own = ["main", "sort_caller", "cmp_items", "key_of", "own_part"];
    let cg = &j["call_graph"];
    let name: HashMap<u64, &str> = cg["functions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["id"].as_u64().unwrap(), f["name"].as_str().unwrap()))
        .collect();
    for a in cg["arcs"].as_array().unwrap() {
        let caller = name[&a["caller"].as_u64().unwrap()];
        let callee = name[&a["callee"].as_u64().unwrap()];
        if !own.contains(&caller) {
            continue;
        }
        let (direct, elsewhere) = &calls[caller];
        assert!(
            direct.contains(callee) || (*elsewhere && !calls.contains_key(callee)),
            "arc {caller} -> {callee} ({} samples): {caller} makes no such call ({direct:?})",
            a["samples"]
        );
    }
}

/// Case 3: A sample inside a signal handler: `on_alarm` (SIGALRM from `setitimer(ITIMER_REAL)`)
/// burns CPU while `interrupted` spins; the handler's time counts under the interrupted
/// function and `main`: interrupted's and on_alarm's totals within 5 points of their truths,
/// `main` ≥ 97%, ≥ 95% of the stacks through on_alarm hold main → interrupted above it.
///
/// Frame-pointer walker: FAILS — on_alarm 0.0% vs truth 56.7%; interrupted 34.1% vs 82.3% and
/// main 51.8% (no walk complete).
#[test]
fn a_sample_in_a_signal_handler_continues_into_the_interrupted_code() {
    let dir = TempDir::new("cfi-signal");
    let chain = ["main", "interrupted"];
    let (_, r, j) = check_caller(&dir, "signal", &[], "interrupted", "on_alarm", &chain);
    assert_share(&j, &r, "on_alarm", "on_alarm_share");
}

/// Case 4: PLT stubs: `plt_caller` calls `lib_outer` of a library the test builds (linked
/// `-z lazy`) through the executable's PLT, which calls the one-instruction `lib_inner` through
/// the library's PLT, so that many samples land in a stub: plt_caller's total within 5 points
/// of its truth, `main` ≥ 97%, ≥ 95% of the stacks through lib_inner hold main → plt_caller →
/// lib_outer.
///
/// Frame-pointer walker: FAILS — plt_caller 0.1% vs truth 53.3%, main 43.6% (a fifth of the
/// samples are in the library's PLT stub).
#[test]
fn samples_in_plt_stubs_do_not_cut_walks() {
    let dir = TempDir::new("cfi-plt");
    let chain = ["main", "plt_caller", "lib_outer"];
    check_caller(&dir, "plt", &[], "plt_caller", "lib_inner", &chain);
}

/// Case 5: A library loaded with `dlopen` after sampling started does the work: `dl_caller`'s and
/// the library's `dl_work`'s totals within 5 points of dl_caller's truth, `main` ≥ 97%, ≥ 95%
/// of the stacks through the library's static `dl_leaf` hold main → dl_caller → dl_work.
///
/// Frame-pointer walker: FAILS — dl_caller and dl_work 0.0% vs truth 66.9%, main 33.2%.
#[test]
fn a_dlopened_library_is_walked_up_to_main() {
    let dir = TempDir::new("cfi-dlopen");
    let lib = build_lib(&dir, "libcfidl.so");
    let chain = ["main", "dl_caller", "dl_work"];
    let extra = [lib.to_str().unwrap()];
    let (_, r, j) = check_caller(&dir, "dlopen", &extra, "dl_caller", "dl_leaf", &chain);
    assert_share(&j, &r, "dl_work", "dl_caller_share");
}

/// Case 5: `dlclose` racing with sampling: three threads each `dlopen`, call into, and `dlclose`
/// their own copy of a library (so that every `dlclose` unmaps it; its destructor works too)
/// 400 times while the main thread works: no crash (exit 0 within 10 minutes, under
/// `timeout -s KILL`), the profile and its stacks file written, and the report reads them.
///
/// Frame-pointer walker: passes.
#[test]
fn dlclose_racing_with_sampling_never_crashes() {
    dlclose_race(false);
}

/// Case 5 with the shared object preloaded, whose `dlclose` wrapper keeps the handlers off an
/// object while it is unloaded.
#[test]
fn dlclose_racing_with_sampling_never_crashes_preloaded() {
    dlclose_race(true);
}

fn dlclose_race(preload: bool) {
    let dir = TempDir::new("cfi-dlrace");
    let exe = if preload {
        build_with(&dir, None)
    } else {
        build(&dir)
    };
    // Preloaded into the program only (`env` sets it for its child), not into `timeout`.
    let preload_arg = format!("LD_PRELOAD={}", runtime_path(true).display());
    let libs: Vec<String> = (1..=3)
        .map(|i| {
            let so = build_lib(&dir, &format!("libcfirace{i}.so"));
            so.to_str().unwrap().to_owned()
        })
        .collect();
    let mut args = vec!["-s", "KILL", "600"];
    if preload {
        args.extend(["env", preload_arg.as_str()]);
    }
    args.extend([exe.to_str().unwrap(), "dlrace", "400"]);
    args.extend(libs.iter().map(String::as_str));
    let r = run(&dir, Path::new("timeout"), &args, &[]);
    assert!(
        r.ok && r.stdout.contains("done 400"),
        "{}\n{}{}",
        r.status,
        r.stdout,
        r.stderr
    );
    assert!(stat(&r, "walks") > 0, "{}", r.stderr);
    let bytes = fs::read(dir.0.join("gmon.out.stacks")).expect("gmon.out.stacks");
    gmon::stacks::parse(&bytes).unwrap();
    let j = report_json(&dir, &exe);
    assert!(samples(&j) > 0, "{j}");
}

/// Case 6: A thread (on a stack the program lays out itself) runs a `makecontext` coroutine whose
/// `rbp` points into a PROT_NONE page between the coroutine's stack and the thread's, inside
/// the 1 GiB below the thread pointer: no crash (exit 0), the profile and its stacks file
/// written and read by the report, the coroutine's function sampled.
///
/// Frame-pointer walker: FAILS — SIGSEGV in the handler's walk (exit signal 11).
#[test]
fn garbage_rbp_in_a_coroutine_on_a_thread_never_crashes() {
    let dir = TempDir::new("cfi-coroutine");
    let exe = build(&dir);
    let args = |s: &str| vec!["coroutine".to_owned(), s.to_owned()];
    let r = run_until_walks(&dir, &exe, 20, args, &[], 300);
    assert!(r.stdout.contains("coroutine done"), "{}", r.stdout);
    let bytes = fs::read(dir.0.join("gmon.out.stacks")).expect("gmon.out.stacks");
    gmon::stacks::parse(&bytes).unwrap();
    let j = report_json(&dir, &exe);
    assert!(share(&j, "co_body") > 50.0, "{j}");
}

/// Case 7: Recursion 300 deep, past the walk's limit of 128 frames, works at the bottom
/// (`deep_part` → `recurse` ×300 → `deep_burn`), then `shallow_part` works directly: no crash,
/// the too-deep walks counted (their share of the walks within 5 points of deep_part's truth),
/// the report says the stacks were cut by the depth limit, and the shares of the innermost
/// functions are still right (recurse and shallow_part within 5 points of their truths); the
/// deepest stacks hold exactly 128 frames.
///
/// Frame-pointer walker: FAILS — too_deep 0 of 3,771 walks (all counted truncated), though
/// recurse (67.3% vs 67.3%) and shallow_part are right; the report says nothing of the depth
/// limit.
#[test]
fn recursion_past_the_depth_limit_is_counted_and_keeps_the_inner_shares() {
    let dir = TempDir::new("cfi-deep");
    let exe = build(&dir);
    let r = run_mode(&dir, &exe, "deep", 100, &[]);
    let j = report_json(&dir, &exe);
    let w = &j["call_graph"]["walks"];
    let too_deep = 100.0 * w["too_deep"].as_f64().unwrap() / w["walks"].as_f64().unwrap();
    let want = 100.0 * truth(&r, "deep_part_share");
    assert!(
        (too_deep - want).abs() <= POINTS,
        "too deep {too_deep:.1}% of the walks, deep_part's truth {want:.1}%: {w}"
    );
    assert_share(&j, &r, "recurse", "deep_part_share");
    assert_share(&j, &r, "shallow_part", "shallow_part_share");
    let (code, _, err) = report(&dir, &["gmon.out", exe.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let err = err.to_lowercase();
    assert!(
        err.contains("depth") || err.contains("too deep"),
        "the report does not say the stacks were cut by the depth limit: {err}"
    );
    let bytes = fs::read(dir.0.join("gmon.out.stacks")).expect("gmon.out.stacks");
    let f = gmon::stacks::parse(&bytes).unwrap();
    assert!(f.stacks.iter().any(|s| s.depth() == 128));
}

/// Case 8: A Rust release build without forced frame pointers (`rustc -O -g`, the runtime object as
/// a link argument): the cheap/costly program's costly share of cheap + costly within 5 points
/// of the truth it measures, and at least 97% of the walks complete (up to the end of the
/// stack, through the standard library's frames, which have no frame pointers either).
///
/// Frame-pointer walker: FAILS — costly within 5 points, but 0 of the walks complete.
#[test]
fn rust_release_without_frame_pointers_gets_costly_within_5_points() {
    let dir = TempDir::new("cfi-rust");
    let exe = build_rust(&dir, &["-g"]);
    check_report_costly_share(&dir, &exe, None, &[], POINTS);
    let j = report_json(&dir, &exe);
    let w = &j["call_graph"]["walks"];
    let complete = w["complete"].as_f64().unwrap() / w["walks"].as_f64().unwrap();
    assert!(complete >= 0.97, "complete walks {complete:.3}: {w}");
}
