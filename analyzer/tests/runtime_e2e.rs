//! End-to-end tests of the runtime (runtime/): the artifacts printed by
//! `profil-report runtime-path [--shared]` are injected into the test programs of
//! fixtures/runtime/ (compiled here with gcc and rustc), the programs run, and the real GNU
//! `gprof -b -p` reads the gmon.out they leave behind.
//!
//! What is checked against what:
//! * the 3:1 CPU split between `heavy_three` and `light_one` (±5 percentage points);
//! * gprof's total seconds against the child's own CPU time from `wait4` (within 5%): user time
//!   for the perf backend, user + system for the itimer (which samples both);
//! * the 2:1 split between two threads (±10%);
//! * exit paths, exit statuses, output naming and formats, warnings, and no allocation while
//!   sampling.

use std::fs;
use std::os::unix::process::CommandExt;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Mutex, OnceLock};

/// Units of work for a run of about 2 CPU-seconds of the split programs on the reference machine
/// (one unit is 4 million loop iterations, about 9 ms).
const UNITS_2S: &str = "230";

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/runtime")
}

fn runtime_path(shared: bool) -> PathBuf {
    static PATHS: OnceLock<(PathBuf, PathBuf)> = OnceLock::new();
    let (obj, so) = PATHS.get_or_init(|| {
        let get = |shared: bool| {
            let mut cmd = Command::new(env!("CARGO_BIN_EXE_profil-report"));
            cmd.arg("runtime-path");
            if shared {
                cmd.arg("--shared");
            }
            let out = cmd.output().expect("run profil-report runtime-path");
            assert!(
                out.status.success(),
                "runtime-path failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            let p = PathBuf::from(String::from_utf8(out.stdout).unwrap().trim_end());
            assert!(p.is_absolute() && p.is_file(), "{}", p.display());
            p
        };
        (get(false), get(true))
    });
    if shared {
        so.clone()
    } else {
        obj.clone()
    }
}

/// A scratch directory, removed when the test passes.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("profil-rt-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }
    fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = fs::remove_dir_all(&self.0);
        }
    }
}

fn must(cmd: &mut Command) {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn gcc(dir: &Scratch, src: &str, out: &str, flags: &[&str], with_runtime: bool) -> PathBuf {
    let exe = dir.path(out);
    let mut cmd = Command::new("gcc");
    cmd.arg("-O2")
        .args(flags)
        .arg("-o")
        .arg(&exe)
        .arg(fixtures().join(src));
    if with_runtime {
        cmd.arg(runtime_path(false));
    }
    must(&mut cmd);
    exe
}

fn rustc(dir: &Scratch, src: &str, out: &str, flags: &[&str]) -> PathBuf {
    let exe = dir.path(out);
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    must(
        Command::new(rustc)
            .args(["-O", "--edition", "2021"])
            .args(flags)
            .arg("-o")
            .arg(&exe)
            .arg(fixtures().join(src)),
    );
    exe
}

/// How a profiled child ended, and what it cost.
#[derive(Debug)]
struct Run {
    /// Exit code, or 128 + signal.
    status: i32,
    user_s: f64,
    sys_s: f64,
    stdout: String,
    stderr: String,
}

/// Held while a profiled child runs: the tests of this binary run in parallel threads, and on a
/// 2-core CI machine two CPU-bound children (plus compilers) at once skew what the tick-driven
/// CPU-time timer sees and starve the children of whole ticks. One child at a time gets a core
/// of its own; its CPU time is measured with wait4 (its own, never wall time). Compiling, gprof
/// and the checks still run in parallel.
static ONE_CHILD_AT_A_TIME: Mutex<()> = Mutex::new(());

/// Run `exe args` in `dir` with `env` (every PROFIL_* / GMON_OUT_PREFIX from our own
/// environment removed) and a umask of 022, measuring its CPU time with wait4. Children run one
/// at a time ([`ONE_CHILD_AT_A_TIME`]).
fn run(dir: &Scratch, exe: &Path, args: &[&str], env: &[(&str, &str)]) -> Run {
    // A test that failed while holding the lock poisons it; the lock itself is still good.
    let _one = ONE_CHILD_AT_A_TIME
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    let out_path = dir.path("stdout.txt");
    let err_path = dir.path("stderr.txt");
    let mut cmd = Command::new(exe);
    cmd.args(args)
        .current_dir(&dir.0)
        .stdin(Stdio::null())
        .stdout(fs::File::create(&out_path).unwrap())
        .stderr(fs::File::create(&err_path).unwrap());
    for (k, _) in std::env::vars_os() {
        let k = k.to_string_lossy().into_owned();
        if k.starts_with("PROFIL_") || k == "GMON_OUT_PREFIX" || k == "LD_PRELOAD" {
            cmd.env_remove(k);
        }
    }
    cmd.envs(env.iter().copied());
    // The child starts as from an interactive shell: umask 022 and the terminating signals at
    // their default action, whatever the harness inherited (a non-interactive shell's `&` job
    // starts with SIGINT ignored, and the runtime rightly leaves an ignored signal alone), so the
    // signal tests do not depend on how the test run was started.
    // SAFETY: umask and sigaction are async-signal-safe and allowed between fork and exec; the
    // sigaction struct is fully initialised (zeroed, then the default handler).
    unsafe {
        cmd.pre_exec(|| {
            libc::umask(0o022);
            for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
                let mut sa: libc::sigaction = std::mem::zeroed();
                sa.sa_sigaction = libc::SIG_DFL;
                if libc::sigaction(sig, &sa, std::ptr::null_mut()) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            Ok(())
        });
    }
    // Reaped below with wait4 (which std's Child::wait cannot do: it gives no rusage).
    #[allow(clippy::zombie_processes)]
    let child = cmd
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", exe.display()));
    let mut status = 0;
    // SAFETY: an all-zero rusage is valid.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: we wait for our own child, which std has not reaped.
    let r = unsafe { libc::wait4(child.id() as libc::pid_t, &mut status, 0, &mut ru) };
    assert_eq!(r, child.id() as libc::pid_t, "wait4");
    let es = std::process::ExitStatus::from_raw(status);
    let status = es.code().unwrap_or_else(|| 128 + es.signal().unwrap_or(0));
    let secs = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 / 1e6;
    Run {
        status,
        user_s: secs(ru.ru_utime),
        sys_s: secs(ru.ru_stime),
        stdout: fs::read_to_string(out_path).unwrap(),
        stderr: fs::read_to_string(err_path).unwrap(),
    }
}

/// `gprof -b -p exe gmon`: (seconds per sample, [(name, self seconds)]).
fn gprof_flat(exe: &Path, gmon: &Path) -> (f64, Vec<(String, f64)>) {
    let out = Command::new("gprof")
        .arg("-b")
        .arg("-p")
        .arg(exe)
        .arg(gmon)
        .output()
        .expect("run gprof");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "gprof failed: {}{}",
        text,
        String::from_utf8_lossy(&out.stderr)
    );
    let mut per_sample = 0.0;
    let mut rows = Vec::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("Each sample counts as ") {
            per_sample = rest.split_whitespace().next().unwrap().parse().unwrap();
            continue;
        }
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() >= 4 && f[0].parse::<f64>().is_ok() && f[1].parse::<f64>().is_ok() {
            let name = if f.len() >= 7 && f[3].parse::<f64>().is_ok() {
                f[6..].join(" ")
            } else {
                f[3..].join(" ")
            };
            rows.push((name, f[2].parse().unwrap()));
        }
    }
    assert!(
        per_sample > 0.0,
        "no 'Each sample counts as' line in:\n{text}"
    );
    (per_sample, rows)
}

fn seconds_of(rows: &[(String, f64)], name: &str) -> f64 {
    rows.iter()
        .filter(|(n, _)| n.contains(name))
        .map(|(_, s)| s)
        .sum()
}

/// The split between two functions is `expected` (a fraction for `a`) within `points`
/// percentage points, and gprof's total is within 5% of `cpu_s`.
fn check_profile(
    exe: &Path,
    gmon: &Path,
    a: &str,
    b: &str,
    expected: f64,
    points: f64,
    cpu_s: f64,
) {
    if let Err(e) = profile_matches(exe, gmon, a, b, expected, points, cpu_s) {
        panic!("{e}");
    }
}

/// The split programs' acceptance check: `heavy_three` against `light_one` in `DIR/gmon.out`
/// is 3:1 within 5 percentage points, and gprof's total is within 5% of the run's user time.
fn check_split_3_to_1(dir: &Scratch, exe: &Path, r: &Run) {
    check_profile(
        exe,
        &dir.path("gmon.out"),
        "heavy_three",
        "light_one",
        0.75,
        5.0,
        r.user_s,
    );
}

/// [`check_profile`]'s checks, as a result (for the one test that may retry).
fn profile_matches(
    exe: &Path,
    gmon: &Path,
    a: &str,
    b: &str,
    expected: f64,
    points: f64,
    cpu_s: f64,
) -> Result<(), String> {
    let (_, rows) = gprof_flat(exe, gmon);
    let sa = seconds_of(&rows, a);
    let sb = seconds_of(&rows, b);
    let total: f64 = rows.iter().map(|(_, s)| s).sum();
    let frac = sa / (sa + sb);
    if (frac - expected).abs() * 100.0 > points {
        return Err(format!(
            "{a}:{b} = {sa}:{sb} s, {:.1}% vs expected {:.1}% ±{points} points; rows {rows:?}",
            frac * 100.0,
            expected * 100.0
        ));
    }
    if (total - cpu_s).abs() > 0.05 * cpu_s {
        return Err(format!(
            "gprof total {total:.3} s vs CPU time {cpu_s:.3} s (more than 5% apart); rows {rows:?}"
        ));
    }
    Ok(())
}

/// `hz`: None for the default rate.
fn check_c_split(flags: &[&str], name: &str, hz: Option<&str>) {
    let dir = Scratch::new(name);
    let exe = gcc(&dir, "split.c", "split", flags, true);
    let env: Vec<(&str, &str)> = hz.map(|h| ("PROFIL_HZ", h)).into_iter().collect();
    let r = run(&dir, &exe, &[UNITS_2S], &env);
    assert_eq!(r.status, 0, "{r:?}");
    assert_eq!(r.stderr, "", "the runtime printed something");
    check_split_3_to_1(&dir, &exe, &r);
}

#[test]
fn c_pie_linked_object_gives_3_to_1_split_and_cpu_time() {
    check_c_split(&["-pie", "-fPIE"], "c-pie", None);
}

#[test]
fn c_no_pie_linked_object() {
    check_c_split(&["-no-pie", "-fno-PIE"], "c-no-pie", Some("1000"));
}

#[test]
fn c_static_linked_object() {
    check_c_split(&["-static"], "c-static", Some("1000"));
}

#[test]
fn c_static_pie_linked_object() {
    check_c_split(&["-static-pie", "-fPIE"], "c-static-pie", Some("1000"));
}

#[test]
fn itimer_backend_total_matches_user_plus_system_time() {
    let dir = Scratch::new("itimer");
    let exe = gcc(&dir, "split.c", "split", &[], true);
    // One retry, for this test only: the CPU-time timer fires on kernel ticks (250/s here), so a
    // 2-second run has only ~500 samples, and their phase against the program's 9 ms units is
    // not random when the machine is busy (a run's ticks can lock onto one function for a
    // while). Two independent runs both outside the bounds is a real failure; the bounds are
    // the issue's, unchanged.
    let mut failures = Vec::new();
    for _attempt in 0..2 {
        let r = run(&dir, &exe, &[UNITS_2S], &[("PROFIL_TIMER", "itimer")]);
        assert_eq!(r.status, 0, "{r:?}");
        let (per_sample, _) = gprof_flat(&exe, &dir.path("gmon.out"));
        // The tick caps the itimer (CONFIG_HZ); the header must carry the achieved rate, not
        // 1000 (a deterministic property: never retried).
        assert!(
            1.0 / per_sample < 1000.0 * 0.95 || r.user_s < 0.5,
            "rate {}",
            1.0 / per_sample
        );
        let gmon = dir.path("gmon.out");
        let cmp = |cpu| profile_matches(&exe, &gmon, "heavy_three", "light_one", 0.75, 5.0, cpu);
        // user + system: what the itimer samples; user alone: the issue's yardstick (this
        // program makes no system calls to speak of).
        match cmp(r.user_s + r.sys_s).and_then(|()| cmp(r.user_s)) {
            Ok(()) => return,
            Err(e) => failures.push(e),
        }
    }
    panic!("both runs outside the bounds:\n{}", failures.join("\n"));
}

#[test]
fn ld_preload_into_an_unmodified_c_program() {
    let dir = Scratch::new("preload");
    let exe = gcc(&dir, "split.c", "split", &[], false);
    let so = runtime_path(true);
    let r = run(
        &dir,
        &exe,
        &[UNITS_2S],
        &[("LD_PRELOAD", so.to_str().unwrap()), ("PROFIL_HZ", "1000")],
    );
    assert_eq!(r.status, 0, "{r:?}");
    check_split_3_to_1(&dir, &exe, &r);
}

#[test]
fn ld_preload_into_an_unmodified_rust_program() {
    let dir = Scratch::new("preload-rust");
    let exe = rustc(&dir, "split.rs", "split", &[]);
    let so = runtime_path(true);
    let r = run(
        &dir,
        &exe,
        &["split", "120"],
        &[("LD_PRELOAD", so.to_str().unwrap()), ("PROFIL_HZ", "1000")],
    );
    assert_eq!(r.status, 0, "{r:?}");
    check_split_3_to_1(&dir, &exe, &r);
}

#[test]
fn preloading_into_a_program_that_has_the_runtime_linked_in_samples_once() {
    let dir = Scratch::new("twice");
    let exe = gcc(&dir, "split.c", "split", &[], true);
    let so = runtime_path(true);
    let r = run(
        &dir,
        &exe,
        &["120"],
        &[("LD_PRELOAD", so.to_str().unwrap()), ("PROFIL_HZ", "1000")],
    );
    assert_eq!((r.status, r.stderr.as_str()), (0, ""));
    let (per_sample, _) = gprof_flat(&exe, &dir.path("gmon.out"));
    // Two active copies would each deliver 1000 samples per second into one handler.
    assert!(
        (1.0 / per_sample - 1000.0).abs() < 100.0,
        "rate {}",
        1.0 / per_sample
    );
    check_split_3_to_1(&dir, &exe, &r);
}

#[test]
fn a_symbolic_link_at_the_output_name_is_neither_followed_nor_replaced() {
    // glibc's gmon opens with O_NOFOLLOW and fails; the runtime replaces only a regular file.
    let dir = Scratch::new("symlink");
    let exe = gcc(&dir, "split.c", "split", &[], true);
    let victim = dir.path("victim");
    fs::write(&victim, b"precious").unwrap();
    std::os::unix::fs::symlink(&victim, dir.path("gmon.out")).unwrap();
    let r = run(&dir, &exe, &["5"], &[]);
    assert_eq!(r.status, 0);
    assert_eq!(
        r.stderr,
        "profil-rt: cannot write gmon.out: not a regular file; left as it is\n"
    );
    assert_eq!(fs::read(&victim).unwrap(), b"precious");
    let meta = fs::symlink_metadata(dir.path("gmon.out")).unwrap();
    assert!(meta.file_type().is_symlink(), "gmon.out is still the link");
}

#[test]
fn rust_with_link_arg_and_rust_lld() {
    let dir = Scratch::new("rust-lld");
    let arg = format!("link-arg={}", runtime_path(false).display());
    let exe = rustc(&dir, "split.rs", "split", &["-C", &arg]);
    let r = run(&dir, &exe, &["split", UNITS_2S], &[("PROFIL_HZ", "1000")]);
    assert_eq!(r.status, 0, "{r:?}");
    check_split_3_to_1(&dir, &exe, &r);
}

#[test]
fn rust_with_link_arg_and_gnu_ld() {
    let dir = Scratch::new("rust-bfd");
    let arg = format!("link-arg={}", runtime_path(false).display());
    let exe = rustc(
        &dir,
        "split.rs",
        "split",
        &["-C", "linker-features=-lld", "-C", &arg],
    );
    let comment = Command::new("readelf")
        .args(["-p", ".comment"])
        .arg(&exe)
        .output()
        .unwrap();
    assert!(
        !String::from_utf8_lossy(&comment.stdout).contains("Linker: LLD"),
        "expected a GNU ld link"
    );
    let r = run(&dir, &exe, &["split", "120"], &[("PROFIL_HZ", "1000")]);
    assert_eq!(r.status, 0, "{r:?}");
    check_split_3_to_1(&dir, &exe, &r);
}

#[test]
fn rust_linked_against_the_shared_object_with_no_as_needed() {
    let dir = Scratch::new("rust-so");
    let so = runtime_path(true);
    let rpath = format!("link-arg=-Wl,-rpath,{}", so.parent().unwrap().display());
    let so_arg = format!("link-arg={}", so.display());
    let exe = rustc(
        &dir,
        "split.rs",
        "split",
        &[
            "-C",
            "link-arg=-Wl,--no-as-needed",
            "-C",
            &so_arg,
            "-C",
            &rpath,
        ],
    );
    let r = run(&dir, &exe, &["split", "120"], &[("PROFIL_HZ", "1000")]);
    assert_eq!(r.status, 0, "{r:?}");
    check_split_3_to_1(&dir, &exe, &r);
}

#[test]
fn rust_cargo_build_with_rustflags_link_arg() {
    let dir = Scratch::new("cargo");
    fs::create_dir_all(dir.path("src")).unwrap();
    fs::copy(fixtures().join("split.rs"), dir.path("src/main.rs")).unwrap();
    fs::write(
        dir.path("Cargo.toml"),
        "[package]\nname = \"split\"\nversion = \"0.0.0\"\nedition = \"2021\"\n\n[workspace]\n",
    )
    .unwrap();
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let vv = Command::new(&rustc).arg("-vV").output().unwrap();
    let host = String::from_utf8(vv.stdout)
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("host: ").map(str::to_owned))
        .expect("rustc -vV names the host");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(&dir.0)
        .args(["build", "--release", "--quiet", "--target", &host])
        .env("CARGO_TARGET_DIR", dir.path("target"))
        .env(
            "RUSTFLAGS",
            format!("-C link-arg={}", runtime_path(false).display()),
        )
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env_remove("CARGO_BUILD_TARGET")
        .env_remove("RUSTC_WRAPPER")
        .env_remove("RUSTC_WORKSPACE_WRAPPER");
    must(&mut cmd);
    let exe = dir.path(&format!("target/{host}/release/split"));
    let r = run(&dir, &exe, &["split", "120"], &[("PROFIL_HZ", "1000")]);
    assert_eq!(r.status, 0, "{r:?}");
    check_split_3_to_1(&dir, &exe, &r);
}

#[test]
fn two_threads_split_2_to_1() {
    let dir = Scratch::new("threads");
    let arg = format!("link-arg={}", runtime_path(false).display());
    let exe = rustc(&dir, "split.rs", "split", &["-C", &arg]);
    let r = run(&dir, &exe, &["threads", "450"], &[("PROFIL_HZ", "1000")]);
    assert_eq!(r.status, 0, "{r:?}");
    // 2:1 ±10%: thread_two's share within 10% of 2/3.
    let (_, rows) = gprof_flat(&exe, &dir.path("gmon.out"));
    let two = seconds_of(&rows, "thread_two");
    let one = seconds_of(&rows, "thread_one");
    let ratio = two / one;
    assert!(
        (ratio - 2.0).abs() <= 0.2,
        "thread_two:thread_one = {two}:{one} = {ratio:.3}"
    );
    let total: f64 = rows.iter().map(|(_, s)| s).sum();
    assert!(
        (total - r.user_s).abs() <= 0.05 * r.user_s,
        "total {total} vs user {}",
        r.user_s
    );
}

#[test]
fn exit_paths_write_the_profile_and_keep_the_exit_status() {
    let dir = Scratch::new("exits");
    let arg = format!("link-arg={}", runtime_path(false).display());
    let exe = rustc(&dir, "split.rs", "split", &["-C", &arg]);
    for (mode, status) in [("split", 0), ("exit", 3), ("panic", 101)] {
        let gmon = dir.path("gmon.out");
        let _ = fs::remove_file(&gmon);
        let r = run(&dir, &exe, &[mode, "30"], &[]);
        assert_eq!(r.status, status, "{mode}: {r:?}");
        assert!(gmon.is_file(), "{mode}: no gmon.out");
        let (_, rows) = gprof_flat(&exe, &gmon);
        assert!(seconds_of(&rows, "heavy_three") > 0.0, "{mode}: {rows:?}");
        // Written atomically: no temporary left behind; mode 0666 minus the umask (022).
        let names: Vec<_> = fs::read_dir(&dir.0)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert!(
            !names
                .iter()
                .any(|n| n.to_string_lossy().contains("profil-tmp")),
            "{names:?}"
        );
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            fs::metadata(&gmon).unwrap().permissions().mode() & 0o777,
            0o644
        );
    }
}

#[test]
fn no_allocation_while_sampling() {
    let dir = Scratch::new("noalloc");
    let arg = format!("link-arg={}", runtime_path(false).display());
    let exe = rustc(&dir, "noalloc.rs", "noalloc", &["-C", &arg]);
    // Sampling must really happen during the window: thousands of samples in `burn`. How long
    // 300 units take depends on the CPU, so the work doubles until there are (at most 5 tries);
    // no run may allocate.
    let mut units = 300u32;
    loop {
        let r = run(&dir, &exe, &[&units.to_string()], &[("PROFIL_HZ", "4000")]);
        assert_eq!(r.status, 0, "{r:?}");
        assert_eq!(r.stdout.trim(), "allocations during sampling: 0");
        let (per_sample, rows) = gprof_flat(&exe, &dir.path("gmon.out"));
        let samples = seconds_of(&rows, "burn") / per_sample;
        if samples > 1000.0 {
            break;
        }
        assert!(
            units < 4800,
            "only {samples} samples in burn at {units} units: {rows:?}"
        );
        units *= 2;
    }
}

#[test]
fn output_naming_format_and_switches() {
    let dir = Scratch::new("naming");
    let exe = gcc(&dir, "split.c", "split", &[], true);

    // PROFIL_OFF=1: nothing at all.
    let r = run(&dir, &exe, &["5"], &[("PROFIL_OFF", "1")]);
    assert_eq!((r.status, r.stderr.as_str()), (0, ""));
    assert!(fs::read_dir(&dir.0).unwrap().all(|e| !e
        .unwrap()
        .file_name()
        .to_string_lossy()
        .contains("gmon")));

    // GMON_OUT_PREFIX: PREFIX.PID (the pid is not known in advance: exactly one such file).
    let r = run(&dir, &exe, &["5"], &[("GMON_OUT_PREFIX", "pre")]);
    assert_eq!(r.status, 0);
    let pre: Vec<String> = fs::read_dir(&dir.0)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("pre.") && !is_object_file(n))
        .collect();
    assert_eq!(pre.len(), 1, "{pre:?}");
    assert!(pre[0]["pre.".len()..].parse::<u32>().is_ok(), "{pre:?}");
    assert!(!dir.path("gmon.out").exists());

    // PROFIL_OUT overrides the prefix; PROFIL_FORMAT=bsd writes a 4.4BSD file gprof reads.
    let r = run(
        &dir,
        &exe,
        &["60"],
        &[
            ("GMON_OUT_PREFIX", "pre"),
            ("PROFIL_OUT", "bsd.out"),
            ("PROFIL_FORMAT", "bsd"),
            ("PROFIL_HZ", "1000"),
        ],
    );
    assert_eq!((r.status, r.stderr.as_str()), (0, ""));
    let bsd = fs::read(dir.path("bsd.out")).unwrap();
    assert_eq!(
        &bsd[20..24],
        &0x0005_1879u32.to_ne_bytes(),
        "4.4BSD version word"
    );
    check_profile(
        &exe,
        &dir.path("bsd.out"),
        "heavy_three",
        "light_one",
        0.75,
        10.0,
        r.user_s,
    );

    // An invalid value: one warning line, defaults used, the program runs and is profiled.
    let r = run(&dir, &exe, &["5"], &[("PROFIL_HZ", "fast")]);
    assert_eq!(r.status, 0);
    assert_eq!(r.stderr.lines().count(), 1, "{:?}", r.stderr);
    assert!(
        r.stderr.starts_with("profil-rt: ignoring PROFIL_HZ=fast"),
        "{:?}",
        r.stderr
    );
    assert!(dir.path("gmon.out").is_file());

    // A profile that cannot be written: one line on stderr, exit status unchanged.
    let r = run(
        &dir,
        &exe,
        &["5"],
        &[("PROFIL_OUT", "no/such/dir/gmon.out")],
    );
    assert_eq!(r.status, 0, "{r:?}");
    assert_eq!(r.stderr.lines().count(), 1, "{:?}", r.stderr);
    assert!(
        r.stderr
            .starts_with("profil-rt: cannot write no/such/dir/gmon.out: create: "),
        "{:?}",
        r.stderr
    );
}

#[test]
fn runtime_object_exports_only_its_own_symbols() {
    let out = Command::new("nm")
        .arg("--defined-only")
        .arg("-g")
        .arg(runtime_path(false))
        .output()
        .unwrap();
    assert!(out.status.success());
    let mut globals: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().nth(2).map(str::to_owned))
        .collect();
    globals.sort();
    assert_eq!(
        globals,
        [
            "__sysv_signal",
            "bsd_signal",
            "execl",
            "execle",
            "execlp",
            "execv",
            "execve",
            "execvp",
            "execvpe",
            "fexecve",
            "moncontrol",
            "pcsample",
            "prctl",
            "profil",
            "profil_rt_finish",
            "profil_rt_hz",
            "profil_rt_set_hz",
            "profil_rt_start",
            "pthread_sigmask",
            "setitimer",
            "sigaction",
            "signal",
            "sigprocmask",
            "sigset",
            "sigtimedwait",
            "sigwait",
            "sigwaitinfo",
            "syscall",
            "sysv_signal"
        ]
    );
}

#[test]
fn a_sigtrap_that_is_not_ours_keeps_its_default_action() {
    let dir = Scratch::new("trap");
    let plain = gcc(&dir, "split.c", "plain", &[], false);
    let without = run(&dir, &plain, &["5", "raise-trap"], &[]);
    let exe = gcc(&dir, "split.c", "split", &[], true);
    let with = run(&dir, &exe, &["5", "raise-trap"], &[]);
    assert_eq!(without.status, 128 + libc::SIGTRAP, "{without:?}");
    assert_eq!(with.status, without.status, "{with:?}");
}

#[test]
fn profil_scale_65536_gives_two_byte_bins_that_gprof_reads() {
    let dir = Scratch::new("scale");
    let exe = gcc(&dir, "split.c", "split", &[], true);
    let r = run(
        &dir,
        &exe,
        &["80"],
        &[("PROFIL_SCALE", "65536"), ("PROFIL_HZ", "1000")],
    );
    assert_eq!((r.status, r.stderr.as_str()), (0, ""));
    let data = fs::read(dir.path("gmon.out")).unwrap();
    let low = u64::from_ne_bytes(data[21..29].try_into().unwrap());
    let high = u64::from_ne_bytes(data[29..37].try_into().unwrap());
    let nbins = u32::from_ne_bytes(data[37..41].try_into().unwrap());
    assert_eq!(high - low, 2 * u64::from(nbins), "one bin per 2 bytes");
    check_profile(
        &exe,
        &dir.path("gmon.out"),
        "heavy_three",
        "light_one",
        0.75,
        7.0,
        r.user_s,
    );
}

// ---------------------------------------------------------------------------------------------
// Processes: fork, exec, signals, counters beyond 16 bits, many processes at once.

/// Total seconds of a GNU gmon file written on this machine (native order, 64-bit addresses):
/// the sum of every histogram record's bins over its rate, as gprof adds them up. Arc records
/// (the runtime's sampled call graph) are skipped.
fn gmon_seconds(path: &Path) -> f64 {
    let data = fs::read(path).unwrap();
    assert_eq!(&data[..4], b"gmon", "{}", path.display());
    let mut off = 20;
    let mut secs = 0.0;
    while off < data.len() {
        if data[off] == 1 {
            off += 21; // tag, from_pc, self_pc, count
            continue;
        }
        assert_eq!(
            data[off],
            0,
            "{}: only histogram and arc records expected",
            path.display()
        );
        let n = u32::from_ne_bytes(data[off + 17..off + 21].try_into().unwrap()) as usize;
        let rate = u32::from_ne_bytes(data[off + 21..off + 25].try_into().unwrap());
        let bins = &data[off + 41..off + 41 + 2 * n];
        let count: u64 = bins
            .chunks(2)
            .map(|b| u64::from(u16::from_ne_bytes([b[0], b[1]])))
            .sum();
        secs += count as f64 / f64::from(rate);
        off += 41 + 2 * n;
    }
    secs
}

fn procs(dir: &Scratch) -> PathBuf {
    gcc(dir, "procs.c", "procs", &["-pthread"], true)
}

fn gmon_files(dir: &Scratch) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(&dir.0)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("gmon.out") && !is_object_file(n))
        .collect();
    v.sort();
    v
}

/// The shared objects' profiles and the manifest that the runtime writes beside each profile by
/// default (`PROFIL_RANGES=all`: `<profile>.objects`, `<profile>.<object>.<n>`, or
/// `<profile>.o<n>` for a long name), and the sampled stacks (`<profile>.stacks`, issue 17;
/// tested in runtime_stacks.rs): not the files these tests count.
fn is_object_file(n: &str) -> bool {
    n.ends_with(".objects")
        || n.ends_with(".stacks")
        || n.contains(".so")
        || n.rsplit_once(".o")
            .is_some_and(|(_, d)| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
}

#[test]
fn fork_child_gets_its_own_fresh_profile_and_the_sum_is_the_tree_cpu() {
    let dir = Scratch::new("fork");
    let exe = procs(&dir);
    let r = run(
        &dir,
        &exe,
        &["fork", "300", "600"],
        &[("PROFIL_HZ", "1000")],
    );
    assert_eq!(r.status, 0, "{r:?}");
    let files = gmon_files(&dir);
    assert_eq!(files.len(), 2, "{files:?}");
    assert_eq!(files[0], "gmon.out");
    assert!(
        files[1]["gmon.out.".len()..].parse::<u32>().is_ok(),
        "{files:?}"
    );
    let (_, parent) = gprof_flat(&exe, &dir.path(&files[0]));
    let (_, child) = gprof_flat(&exe, &dir.path(&files[1]));
    // Nothing from before the fork is counted twice; each side has only its own work.
    assert!(
        seconds_of(&parent, "parent_work") > 0.5 && seconds_of(&parent, "child_work") == 0.0,
        "{parent:?}"
    );
    assert!(
        seconds_of(&child, "child_work") > 0.5 && seconds_of(&child, "parent_work") == 0.0,
        "{child:?}"
    );
    // wait4's usage of the parent includes its waited-for child.
    let total: f64 = files.iter().map(|f| gmon_seconds(&dir.path(f))).sum();
    assert!(
        (total - r.user_s).abs() <= 0.05 * r.user_s,
        "files {total:.3} s vs tree user {:.3} s",
        r.user_s
    );
}

#[test]
fn every_exec_variant_writes_first_and_the_new_image_survives() {
    let dir = Scratch::new("exec");
    let exe = procs(&dir);
    for timer in ["itimer", "perf"] {
        for variant in [
            "execl", "execlp", "execle", "execv", "execvp", "execvpe", "execve", "fexecve",
        ] {
            let _ = fs::remove_file(dir.path("gmon.out"));
            let r = run(
                &dir,
                &exe,
                &["exec", variant, "40"],
                &[("PROFIL_TIMER", timer), ("PROFIL_HZ", "1000")],
            );
            // 0: the shell loop ran to its end (155 would be "Profiling timer expired").
            assert_eq!(r.status, 0, "{timer} {variant}: {r:?}");
            let (_, rows) = gprof_flat(&exe, &dir.path("gmon.out"));
            assert!(
                seconds_of(&rows, "before_exec") > 0.0,
                "{timer} {variant}: {rows:?}"
            );
        }
    }
}

#[test]
fn rust_command_exec_writes_first_and_the_new_image_survives() {
    let dir = Scratch::new("rust-exec");
    let arg = format!("link-arg={}", runtime_path(false).display());
    let exe = rustc(&dir, "split.rs", "split", &["-C", &arg]);
    for timer in ["itimer", "perf"] {
        let _ = fs::remove_file(dir.path("gmon.out"));
        let r = run(
            &dir,
            &exe,
            &["exec", "20"],
            &[("PROFIL_TIMER", timer), ("PROFIL_HZ", "1000")],
        );
        assert_eq!(r.status, 0, "{timer}: {r:?}");
        let (_, rows) = gprof_flat(&exe, &dir.path("gmon.out"));
        assert!(seconds_of(&rows, "heavy_three") > 0.0, "{timer}: {rows:?}");
    }
}

#[test]
fn a_failed_exec_resumes_profiling() {
    let dir = Scratch::new("exec-fail");
    let exe = procs(&dir);
    let r = run(&dir, &exe, &["exec-fail", "300"], &[("PROFIL_HZ", "1000")]);
    assert_eq!(r.status, 0, "{r:?}");
    // Equal work before and after the failed exec: equal time, and all of it counted.
    check_profile(
        &exe,
        &dir.path("gmon.out"),
        "before_exec",
        "after_exec",
        0.5,
        5.0,
        r.user_s,
    );
    assert!(gmon_files(&dir) == ["gmon.out"], "{:?}", gmon_files(&dir));
}

/// Issues 14 and 15: after a failed exec in a two-thread program the other thread used to be
/// sampled no more (the restarted clock covered only the thread that called exec; the report
/// said 51/49 instead of 20/80). The restarted clock gives every existing thread an event.
#[test]
fn a_failed_exec_in_a_threaded_program_resumes_sampling_every_thread() {
    let dir = Scratch::new("exec-fail-mt");
    let exe = procs(&dir);
    let r = run(
        &dir,
        &exe,
        &["exec-fail-mt", "200"],
        &[("PROFIL_HZ", "1000")],
    );
    assert_eq!(r.status, 0, "{r:?}");
    // The thread does twice main's work after the failure: 2:1 within 10 points.
    check_profile(
        &exe,
        &dir.path("gmon.out"),
        "thread_work",
        "after_exec",
        2.0 / 3.0,
        10.0,
        r.user_s,
    );
}

/// Start `exe args`, wait until it has used 0.3 s of CPU (so the runtime is long set up and
/// samples exist), send it `sig`, and return how it ended. The program must run until signalled.
fn run_and_signal(dir: &Scratch, exe: &Path, args: &[&str], sig: i32) -> Run {
    let exe2 = exe.to_path_buf();
    let dir_path = dir.0.clone();
    let killer = std::thread::spawn(move || {
        // Find the child by its working directory and executable.
        // Generous: the child may wait for other tests' children (ONE_CHILD_AT_A_TIME).
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(600);
        while std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(50));
            for e in fs::read_dir("/proc").unwrap().flatten() {
                let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
                    continue;
                };
                let cwd = fs::read_link(e.path().join("cwd")).ok();
                let bin = fs::read_link(e.path().join("exe")).ok();
                if cwd.as_deref() != Some(&dir_path) || bin.as_deref() != Some(&exe2) {
                    continue;
                }
                // utime is the 14th field of /proc/PID/stat, in clock ticks (1/100 s); the
                // fields after the parenthesised command name start with the 3rd.
                let stat = fs::read_to_string(e.path().join("stat")).unwrap_or_default();
                let after_name = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
                let utime: u64 = after_name
                    .split_whitespace()
                    .nth(11)
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(0);
                if utime >= 30 {
                    // SAFETY: kill has no memory-safety preconditions.
                    unsafe { libc::kill(pid, sig) };
                    return;
                }
            }
        }
        panic!("the program never got going");
    });
    let r = run(dir, exe, args, &[("PROFIL_HZ", "1000")]);
    killer.join().unwrap();
    r
}

#[test]
fn default_terminating_signals_write_the_profile_and_keep_the_status() {
    let dir = Scratch::new("signals");
    let exe = gcc(&dir, "split.c", "split", &[], true);
    for sig in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
        let _ = fs::remove_file(dir.path("gmon.out"));
        let r = run_and_signal(&dir, &exe, &["5000"], sig); // ~45 s if never signalled
        assert_eq!(r.status, 128 + sig, "signal {sig}: {r:?}");
        let (_, rows) = gprof_flat(&exe, &dir.path("gmon.out"));
        assert!(
            seconds_of(&rows, "heavy_three") > 0.0,
            "signal {sig}: {rows:?}"
        );
    }
}

#[test]
fn a_program_with_its_own_sigterm_handler_keeps_it() {
    let dir = Scratch::new("own-handler");
    let exe = procs(&dir);
    let r = run_and_signal(&dir, &exe, &["own-handler"], libc::SIGTERM);
    assert_eq!(r.status, 42, "{r:?}");
    let (_, rows) = gprof_flat(&exe, &dir.path("gmon.out"));
    assert!(seconds_of(&rows, "busy_until_signal") > 0.0, "{rows:?}");
}

/// Runs split.c with every sample in one bin (`PROFIL_SCALE=2`) at 30 kHz plus `env`, doubling
/// the work until `overflowed` says that bin went past 65535 samples, at most six tries (150 up
/// to 4800 units). How many samples a unit gives depends on the machine and its load (150 units
/// gave 59k–71k on one 2-vCPU machine, 90k on another), so no fixed amount of work can be
/// assumed to get there.
fn run_past_65535_in_one_bin(
    dir: &Scratch,
    exe: &Path,
    env: &[(&str, &str)],
    overflowed: impl Fn(&Run) -> bool,
) -> Run {
    let mut env = env.to_vec();
    // The executable's histogram alone, PCs only: these files are about that histogram (sampled
    // arcs would follow it, and at 30 kHz encoding every shared object's histogram at exit is
    // CPU the clock does not see: 5.5% of the run under a CPU hog).
    env.extend([
        ("PROFIL_SCALE", "2"),
        ("PROFIL_HZ", "30000"),
        ("PROFIL_STACKS", "0"),
        ("PROFIL_RANGES", "exe"),
    ]);
    let mut units = 150u32;
    loop {
        let r = run(dir, exe, &[&units.to_string()], &env);
        assert_eq!(r.status, 0, "{r:?}");
        if overflowed(&r) {
            return r;
        }
        assert!(
            units < 4800,
            "{units} units at 30 kHz never put more than 65535 samples in one bin: {r:?}"
        );
        units *= 2;
    }
}

/// GNU histogram records in a one-bin file (a 41-byte record header + one 2-byte bin each).
fn one_bin_records(gmon: &Path) -> usize {
    (fs::read(gmon).unwrap().len() - 20) / (41 + 2)
}

#[test]
fn counts_beyond_65535_in_one_bin_become_extra_records_gprof_sums() {
    let dir = Scratch::new("overflow");
    let exe = gcc(&dir, "split.c", "split", &[], true);
    let gmon = dir.path("gmon.out");
    let r = run_past_65535_in_one_bin(&dir, &exe, &[], |_| one_bin_records(&gmon) >= 2);
    let (_, rows) = gprof_flat(&exe, &gmon);
    let total: f64 = rows.iter().map(|(_, s)| s).sum();
    assert!(
        (total - r.user_s).abs() <= 0.05 * r.user_s,
        "gprof total {total} vs user {}",
        r.user_s
    );
}

const BSD_CLIP_PREFIX: &str = "profil-rt: the 4.4BSD format holds at most 65535 samples per bin; ";

#[test]
fn bsd_format_saturates_at_65535_with_one_warning() {
    let dir = Scratch::new("bsd-clip");
    let exe = gcc(&dir, "split.c", "split", &[], true);
    let r = run_past_65535_in_one_bin(&dir, &exe, &[("PROFIL_FORMAT", "bsd")], |r| {
        r.stderr.contains(BSD_CLIP_PREFIX)
    });
    let lines: Vec<&str> = r.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{:?}", r.stderr);
    let clipped: u64 = lines[0]
        .strip_prefix(BSD_CLIP_PREFIX)
        .and_then(|rest| rest.strip_suffix(" samples were clipped"))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("unexpected warning {:?}", lines[0]));
    assert!(clipped > 0);
    // One histogram (40-byte header + one bin) holding exactly 65535.
    let data = fs::read(dir.path("gmon.out")).unwrap();
    assert_eq!(data.len(), 42);
    assert_eq!(u16::from_ne_bytes([data[40], data[41]]), 65535);
    gprof_flat(&exe, &dir.path("gmon.out"));
}

/// The issue's stress cases run quick in CI; `PROFIL_STRESS=long` (runtime/bench/stress.sh)
/// runs them at full size.
fn long_stress() -> bool {
    std::env::var_os("PROFIL_STRESS").is_some_and(|v| v == "long")
}

/// `procs stress T K N` in `dir`: every file written parses, and together they hold the
/// process tree's CPU time (within `tolerance`, a fraction).
fn check_stress_tree(name: &str, threads: u32, children: u32, units: u32, tolerance: f64) {
    let dir = Scratch::new(name);
    let exe = procs(&dir);
    let (t, k, n) = (threads.to_string(), children.to_string(), units.to_string());
    let r = run(
        &dir,
        &exe,
        &["stress", &t, &k, &n],
        &[("PROFIL_HZ", "1000")],
    );
    assert_eq!(r.status, 0, "{r:?}");
    assert_eq!(r.stdout.trim(), "children failed: 0");
    assert_eq!(r.stderr, "");
    let files = gmon_files(&dir);
    assert_eq!(files.len(), children as usize + 1, "{files:?}");
    for f in &files {
        gprof_flat(&exe, &dir.path(f)); // every file parses
    }
    // The shared objects' files (libc's, by default) hold the rest of the tree's samples.
    let total: f64 = fs::read_dir(&dir.0)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| {
            n.starts_with("gmon.out") && !n.ends_with(".objects") && !n.ends_with(".stacks")
        })
        .map(|f| gmon_seconds(&dir.path(&f)))
        .sum();
    assert!(
        (total - r.user_s).abs() <= tolerance * r.user_s,
        "files {total:.3} s vs tree user {:.3} s",
        r.user_s
    );
}

#[test]
fn stress_16_threads_and_50_children_exiting_at_once() {
    // 10%: each of the 51 processes now spends unsampled CPU outside its clock (from fork to the
    // child's clock, and at exit encoding every shared object's histogram, about 0.7 ms each);
    // under a CPU hog the files came to 1.720 s of 1.817 s (5.3% short). The manifest's process
    // line records each process's CPU time, for the analyzer to report what was not sampled.
    check_stress_tree("stress", 16, 50, 15, 0.10);
}

#[test]
fn stress_16_threads_for_a_while() {
    // 16 threads × N units of ~2 ms on 2 cores: quick ≈ 1 s, long ≈ 10 s.
    check_stress_tree(
        "stress-threads",
        16,
        0,
        if long_stress() { 600 } else { 60 },
        0.05,
    );
}

#[test]
fn stress_100_forked_children_exiting_together() {
    // Each child does only ~6 ms of work, and the user time a child spends between fork and
    // its own clock starting (libc's fork handlers, ours opening a perf event) is not sampled:
    // measured 0.68 s in the files vs 0.75 s of user time (0.7 ms per child). The point here is
    // that all 101 files are whole and no status changes; the totals check is the loose one.
    // Since every shared object is profiled by default, each child's exit also encodes libc's
    // histogram (about 350,000 bins, about 1 ms of user time after its clock stopped):
    // measured 0.54 s in the files vs 0.68 s of user time.
    check_stress_tree("stress-children", 1, 100, 3, 0.3);
}

fn stress_exe(dir: &Scratch) -> PathBuf {
    gcc(dir, "stress.c", "stress", &[], true)
}

/// Names in `dir` other than the test's own (the program, stdout.txt, stderr.txt): temporaries
/// and stray files.
fn other_files(dir: &Scratch, keep: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(&dir.0)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| {
            !["stdout.txt", "stderr.txt"].contains(&n.as_str())
                && !keep.contains(&n.as_str())
                && !is_object_file(n)
        })
        .collect();
    v.sort();
    v
}

#[test]
fn stress_exec_chain_of_10_programs() {
    let dir = Scratch::new("stress-chain");
    let exe = stress_exe(&dir);
    let r = run(&dir, &exe, &["chain", "9", "20"], &[("PROFIL_HZ", "1000")]);
    assert_eq!((r.status, r.stderr.as_str()), (0, ""), "{r:?}");
    let links: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(links.len(), 10, "{}", r.stdout);
    // Each image keeps its own file (issue 14: the same pid, different programs): the first
    // gmon.out, the second gmon.out.<pid>, the n-th after that gmon.out.<pid>.<n>; each has
    // its own burn and no temporary is left.
    let files = other_files(&dir, &["stress"]);
    assert_eq!(files.len(), 10, "{files:?}");
    let pid = files
        .iter()
        .find_map(|f| f.strip_prefix("gmon.out.").filter(|p| !p.contains('.')))
        .unwrap_or_else(|| panic!("no gmon.out.<pid> in {files:?}"))
        .to_owned();
    let mut expected = vec!["gmon.out".to_owned(), format!("gmon.out.{pid}")];
    expected.extend((1..=8).map(|n| format!("gmon.out.{pid}.{n}")));
    expected.sort();
    assert_eq!(files, expected);
    let mut total = 0.0;
    for f in &files {
        let (_, rows) = gprof_flat(&exe, &dir.path(f));
        let burn = seconds_of(&rows, "burn");
        assert!(
            burn > 0.0 && burn < r.user_s / 3.0,
            "{f}: {rows:?} of {:.3} s",
            r.user_s
        );
        total += gmon_seconds(&dir.path(f));
    }
    // Together they hold the chain's CPU time, but for each image's start (loading, the
    // constructor), which no clock samples yet.
    assert!(
        total > 0.8 * r.user_s && total < 1.1 * r.user_s,
        "the chain's files hold {total:.3} s of {:.3} s",
        r.user_s
    );
}

#[test]
fn stress_program_closing_stdout_and_stderr_before_exit() {
    let dir = Scratch::new("stress-closefds");
    let exe = stress_exe(&dir);
    let r = run(
        &dir,
        &exe,
        &["closefds", "100", "7"],
        &[("PROFIL_HZ", "1000")],
    );
    assert_eq!(
        (r.status, r.stdout.as_str(), r.stderr.as_str()),
        (7, "", ""),
        "{r:?}"
    );
    let (_, rows) = gprof_flat(&exe, &dir.path("gmon.out"));
    let burn = seconds_of(&rows, "burn");
    assert!(
        (burn - r.user_s).abs() <= 0.05 * r.user_s,
        "{rows:?} vs {:.3} s",
        r.user_s
    );
    assert_eq!(
        other_files(&dir, &["stress", "gmon.out"]),
        Vec::<String>::new()
    );
}

#[test]
fn stress_read_only_working_directory() {
    use std::os::unix::fs::PermissionsExt;
    let dir = Scratch::new("stress-readonly");
    let exe = gcc(&dir, "split.c", "split", &[], true);
    let ro = dir.path("ro");
    fs::create_dir(&ro).unwrap();
    fs::set_permissions(&ro, fs::Permissions::from_mode(0o555)).unwrap();
    let mut cmd = Command::new(&exe);
    cmd.arg("20")
        .current_dir(&ro)
        .env("PROFIL_HZ", "1000")
        .env_remove("PROFIL_OUT")
        .env_remove("GMON_OUT_PREFIX");
    // Root ignores directory permissions: run as nobody, as a user would.
    // SAFETY: setgid/setuid are async-signal-safe and allowed between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            if libc::geteuid() == 0 && (libc::setgid(65534) != 0 || libc::setuid(65534) != 0) {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let out = {
        let _one = ONE_CHILD_AT_A_TIME
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        cmd.output().unwrap()
    };
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "profil-rt: cannot write gmon.out: create: Permission denied\n"
    );
    assert_eq!(
        fs::read_dir(&ro).unwrap().count(),
        0,
        "nothing left in the directory"
    );
    fs::set_permissions(&ro, fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn stress_sigterm_at_random_moments() {
    let dir = Scratch::new("stress-sigterm");
    let exe = gcc(&dir, "split.c", "split", &[], true);
    let runs = if long_stress() { 200 } else { 20 };
    // A fixed pseudo-random sequence of delays from 0 to ~120 ms (before the constructor,
    // while sampling, while writing, after exit: the program runs ~60-100 ms), so that a
    // failure can be replayed.
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let (mut killed, mut finished, mut with_file) = (0, 0, 0);
    for i in 0..runs {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let delay = std::time::Duration::from_micros((seed >> 33) % 120_000);
        let _ = fs::remove_file(dir.path("gmon.out"));
        let status = {
            let _one = ONE_CHILD_AT_A_TIME
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            let child = Command::new(&exe)
                .arg("8")
                .current_dir(&dir.0)
                .env("PROFIL_HZ", "1000")
                .env_remove("PROFIL_OUT")
                .env_remove("GMON_OUT_PREFIX")
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            std::thread::sleep(delay);
            // SAFETY: kill has no memory-safety preconditions; the child is not reaped yet.
            unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
            child.wait_with_output().unwrap()
        };
        let code = status
            .status
            .code()
            .unwrap_or_else(|| 128 + status.status.signal().unwrap_or(0));
        assert!(
            code == 0 || code == 128 + libc::SIGTERM,
            "run {i} (delay {delay:?}): status {code}"
        );
        assert_eq!(String::from_utf8_lossy(&status.stderr), "", "run {i}");
        if code == 0 {
            finished += 1;
        } else {
            killed += 1;
        }
        // Whole or absent: the profile parses if it is there, and no temporary is left.
        let left = other_files(&dir, &["split"]);
        assert!(
            left.is_empty() || left == ["gmon.out"],
            "run {i} (delay {delay:?}): {left:?}"
        );
        if !left.is_empty() {
            with_file += 1;
            let data = fs::read(dir.path("gmon.out")).unwrap();
            gmon::parse(&data, gmon::Target::HOST)
                .unwrap_or_else(|e| panic!("run {i} (delay {delay:?}): torn profile: {e}"));
            gprof_flat(&exe, &dir.path("gmon.out"));
        }
    }
    eprintln!(
        "{runs} runs: {killed} killed by SIGTERM, {finished} finished first; \
         {with_file} left a whole profile, the others none"
    );
    assert!(killed > 0, "no run was signalled while running");
}

// ---------------------------------------------------------------------------------------------
// The programming interfaces (runtime/include/profil_rt.h): fixtures/runtime/apis.c checks
// each sentence of their contract from inside the program and prints one line per check.

fn apis(dir: &Scratch) -> PathBuf {
    let include = format!(
        "-I{}",
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../runtime/include")
            .display()
    );
    gcc(dir, "apis.c", "apis", &[&include, "-pthread"], true)
}

fn check_api_lines(r: &Run, expected: usize) {
    assert_eq!(r.status, 0, "{}{}", r.stdout, r.stderr);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(lines.len(), expected, "{}{}", r.stdout, r.stderr);
    assert!(
        lines.iter().all(|l| l.starts_with("ok ")),
        "{}{}",
        r.stdout,
        r.stderr
    );
}

#[test]
fn profil_interface_follows_its_contract() {
    let dir = Scratch::new("api-profil");
    let exe = apis(&dir);
    let r = run(&dir, &exe, &["profil"], &[("PROFIL_HZ", "1000")]);
    check_api_lines(&r, 10);
}

#[test]
fn profil_interface_works_with_the_automatic_profile_off() {
    let dir = Scratch::new("api-profil-off");
    let exe = apis(&dir);
    let r = run(
        &dir,
        &exe,
        &["profil"],
        &[("PROFIL_HZ", "1000"), ("PROFIL_OFF", "1")],
    );
    check_api_lines(&r, 10);
    assert!(gmon_files(&dir).is_empty());
}

#[test]
fn extended_profil_interface_follows_its_contract() {
    let dir = Scratch::new("api-extended");
    let exe = apis(&dir);
    let r = run(&dir, &exe, &["extended"], &[("PROFIL_HZ", "1000")]);
    check_api_lines(&r, 6);
}

#[test]
fn pcsample_interface_follows_its_contract() {
    let dir = Scratch::new("api-pcsample");
    let exe = apis(&dir);
    let r = run(&dir, &exe, &["pcsample"], &[("PROFIL_HZ", "1000")]);
    check_api_lines(&r, 7);
}

// The seeds' man pages, sentence by sentence (issue 15): each mode of apis.c prints one line
// per check; the man-page sentence each implements is quoted there.

fn check_api_mode(mode: &[&str], env: &[(&str, &str)], expected: usize) {
    let dir = Scratch::new(&format!("api-{}", mode[0]));
    let exe = apis(&dir);
    let r = run(&dir, &exe, mode, env);
    check_api_lines(&r, expected);
}

/// pcsample(2), MT-Level "Async-Signal-Safe": pcsample and profil called from a signal handler
/// that interrupts the sampling handler on the same thread used to spin forever (every run at
/// 50 kHz, one in three at 1 kHz). 12 runs, each killed if it hangs (10 CPU-seconds).
#[test]
fn seed_calls_from_a_signal_handler_return() {
    check_api_mode(
        &["reentry", "12"],
        &[("PROFIL_HZ", "50000"), ("PROFIL_OFF", "1")],
        1,
    );
}

/// The same in forked children of a parent whose eight threads are being sampled at 50 kHz:
/// a child used to wait for handlers that ran only in the parent (a few of 400 hung).
#[test]
fn seed_calls_in_a_fork_child_return() {
    check_api_mode(
        &["fork-in-handler", "400"],
        &[("PROFIL_HZ", "50000"), ("PROFIL_OFF", "1")],
        1,
    );
}

/// "Profiling is turned off if an update would cause a memory fault" (Solaris, Tru64,
/// pcsample): unmapped, read-only, half-valid buffers, per range for the extended form.
#[test]
fn seed_faulting_updates_turn_profiling_off() {
    check_api_mode(&["fault"], &[("PROFIL_HZ", "1000")], 10);
}

/// The check made when a call is made writes nothing: concurrent writes are kept, a sparse
/// 256 MiB buffer stays sparse.
#[test]
fn seed_buffer_check_writes_nothing() {
    check_api_mode(&["no-write"], &[("PROFIL_HZ", "1000")], 2);
}

/// "Profiling remains on in both the child and parent process after a fork(2)", also with the
/// automatic profile off.
#[test]
fn seed_profiling_remains_on_in_a_forked_child() {
    check_api_mode(&["fork"], &[("PROFIL_HZ", "1000"), ("PROFIL_OFF", "1")], 2);
}

/// An explicit profil() in progress goes on after profil_rt_finish() wrote the profile.
#[test]
fn seed_profil_goes_on_after_profil_rt_finish() {
    check_api_mode(&["after-finish"], &[("PROFIL_HZ", "1000")], 1);
}

/// pcsample(2): the array fills "after nsamples / HZ seconds of process virtual time", HZ
/// being sysconf(_SC_CLK_TCK); profil_rt_hz() tells it, profil_rt_set_hz() changes it.
#[test]
fn seed_interfaces_tick_at_clk_tck() {
    check_api_mode(&["rate"], &[("PROFIL_HZ", "1000")], 6);
}

/// Solaris 2.6 profil(2): "a call to profil() impacts all LWPs/threads". With the automatic
/// profile off, a call from a helper thread used to sample only that thread and later ones
/// (main got 0 of ~300 ticks); now threads that exist when the clock starts get a clock too.
#[test]
fn seed_a_call_from_a_helper_thread_samples_the_threads_that_already_exist() {
    check_api_mode(&["helper-thread"], &[("PROFIL_OFF", "1")], 1);
}

/// BSD's char *samples (odd addresses), and a failed pcsample keeps the previous count.
#[test]
fn seed_odd_buffers_and_kept_counts() {
    check_api_mode(&["smaller"], &[("PROFIL_HZ", "1000")], 3);
}

/// With the CPU-time timer (SIGPROF), a program's own SIGPROF handler used to take our samples
/// (profil() returned 0 and counted nothing; then EBUSY). The signal calls are interposed now:
/// the program's handler sees none of our samples and profil() counts.
#[test]
fn seed_profil_works_beside_the_programs_own_sigprof_handler() {
    check_api_mode(&["own-sigprof"], &[("PROFIL_TIMER", "itimer")], 3);
}

#[test]
fn moncontrol_profiles_only_the_chosen_region() {
    let dir = Scratch::new("api-moncontrol");
    let exe = apis(&dir);
    let r = run(&dir, &exe, &["moncontrol"], &[("PROFIL_HZ", "1000")]);
    assert_eq!(r.status, 0, "{r:?}");
    let (_, rows) = gprof_flat(&exe, &dir.path("gmon.out"));
    let included = seconds_of(&rows, "included");
    assert!(included > 0.2, "{rows:?}");
    assert_eq!(seconds_of(&rows, "excluded"), 0.0, "{rows:?}");
    // The paused samples still measured the rate: the counted region's seconds are about half
    // the run's CPU time (equal work in both halves).
    assert!(
        (included / r.user_s - 0.5).abs() < 0.05,
        "included {included} of {} s",
        r.user_s
    );
}

#[test]
fn a_program_using_the_profiling_timer_keeps_working() {
    let dir = Scratch::new("own-sigprof");
    let exe = procs(&dir);
    for timer in ["itimer", "perf"] {
        let _ = fs::remove_file(dir.path("gmon.out"));
        let r = run(
            &dir,
            &exe,
            &["own-sigprof", "400"],
            &[("PROFIL_TIMER", timer)],
        );
        assert_eq!(r.status, 0, "{timer}: {r:?}");
        // Its own 100 Hz timer: about 100 ticks per CPU-second, none of ours mixed in.
        let ticks: f64 = r
            .stdout
            .trim()
            .strip_prefix("sigprof: ")
            .unwrap()
            .parse()
            .unwrap();
        let cpu = r.user_s + r.sys_s;
        assert!(
            ticks > 60.0 * cpu && ticks < 130.0 * cpu,
            "{timer}: {ticks} ticks in {cpu:.2} s"
        );
        // Our own clock (SIGPROF) stands aside with one warning; perf (SIGTRAP) does not clash.
        let expected_lines = if timer == "itimer" { 1 } else { 0 };
        assert_eq!(
            r.stderr.lines().count(),
            expected_lines,
            "{timer}: {:?}",
            r.stderr
        );
        gprof_flat(&exe, &dir.path("gmon.out"));
    }
}

#[test]
fn safe_rust_interfaces_reach_the_injected_runtime() {
    // The profil-rt rlib cargo built for this test (a dev-dependency) sits next to the test
    // binary, with its own dependencies.
    let deps = std::env::current_exe()
        .unwrap()
        .parent()
        .unwrap()
        .to_path_buf();
    let rlib = fs::read_dir(&deps)
        .unwrap()
        .flatten()
        .filter(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            n.starts_with("libprofil_rt-") && n.ends_with(".rlib")
        })
        .max_by_key(|e| e.metadata().unwrap().modified().unwrap())
        .expect("the profil-rt rlib next to the test binary")
        .path();
    let dir = Scratch::new("safe-api");
    let extern_arg = format!("profil_rt={}", rlib.display());
    let dep_arg = format!("dependency={}", deps.display());
    let link_arg = format!("link-arg={}", runtime_path(false).display());
    let exe = rustc(
        &dir,
        "safe_api.rs",
        "safe_api",
        &["--extern", &extern_arg, "-L", &dep_arg, "-C", &link_arg],
    );
    let r = run(&dir, &exe, &[], &[("PROFIL_HZ", "1000")]);
    check_api_lines(&r, 6);
}

// ---------------------------------------------------------------------------------------------
// PROFIL_RANGES=all: one histogram per shared object, and the manifest naming them.

/// The separate debug file of a build-id, when installed (`/usr/lib/debug/.build-id/xx/y.debug`).
fn debug_file(build_id: &[u8]) -> Option<PathBuf> {
    let hex: String = build_id.iter().map(|b| format!("{b:02x}")).collect();
    if hex.len() < 3 {
        return None;
    }
    let p = PathBuf::from(format!(
        "/usr/lib/debug/.build-id/{}/{}.debug",
        &hex[..2],
        &hex[2..]
    ));
    p.is_file().then_some(p)
}

/// `profil-report FILE EXE` (the default report): its first data row, and the whole text.
fn report_top_row(exe: &Path, file: &Path) -> (String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_profil-report"))
        .arg(file)
        .arg(exe)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "profil-report failed: {text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let top = text
        .lines()
        .skip_while(|l| !l.starts_with("---"))
        .nth(1)
        .unwrap_or_default()
        .to_owned();
    (top, text)
}

/// `fixtures/runtime/libm.c` with the runtime linked in: most of its time is in libm.
fn libm_prog(dir: &Scratch) -> PathBuf {
    let exe = dir.path("sinexp");
    must(
        Command::new("gcc")
            .args(["-O2", "-o"])
            .arg(&exe)
            .arg(fixtures().join("libm.c"))
            .arg(runtime_path(false))
            .arg("-lm"),
    );
    exe
}

#[test]
fn ranges_all_profiles_shared_objects_into_their_own_files() {
    let dir = Scratch::new("ranges-all");
    let exe = libm_prog(&dir);
    let all_gmon = || {
        let mut v: Vec<String> = fs::read_dir(&dir.0)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("gmon.out") && !n.ends_with(".stacks"))
            .collect();
        v.sort();
        v
    };
    // PROFIL_RANGES=exe: the executable alone: no manifest, no other file.
    let r = run(
        &dir,
        &exe,
        &["20"],
        &[("PROFIL_HZ", "1000"), ("PROFIL_RANGES", "exe")],
    );
    assert_eq!((r.status, r.stderr.as_str()), (0, ""), "{r:?}");
    assert_eq!(all_gmon(), ["gmon.out"]);
    fs::remove_file(dir.path("gmon.out")).unwrap();
    // By default (issue 14) every shared object is profiled too: the manifest lists libm, whose
    // file is beside gmon.out.
    let r = run(&dir, &exe, &["20"], &[("PROFIL_HZ", "1000")]);
    assert_eq!((r.status, r.stderr.as_str()), (0, ""), "{r:?}");
    let text = fs::read(dir.path("gmon.out.objects")).expect("the manifest, by default");
    let entries = gmon::manifest::parse(&text).unwrap_or_else(|e| panic!("manifest: {e}"));
    let libm = entries
        .iter()
        .find(|e| e.path.unescaped().ends_with(b"/libm.so.6"))
        .unwrap_or_else(|| panic!("no libm in {}", String::from_utf8_lossy(&text)));
    assert!(dir.path(&String::from_utf8_lossy(libm.gmon_file)).is_file());
    for f in all_gmon() {
        fs::remove_file(dir.path(&f)).unwrap();
    }

    // At the default rate, as the issue asks: the total is a count of the perf clock's
    // periods (deterministic), compared with the user time from wait4 (measured 1.6-3% apart
    // on the reference VM, where the kernel's user/system split of rusage counts some of the
    // signal delivery as user time; at 1000 Hz it reaches 4-4.5%).
    let r = run(&dir, &exe, &["300"], &[("PROFIL_RANGES", "all")]);
    assert_eq!((r.status, r.stderr.as_str()), (0, ""), "{r:?}");
    let text = fs::read(dir.path("gmon.out.objects")).expect("the manifest gmon.out.objects");
    let entries = gmon::manifest::parse(&text).unwrap_or_else(|e| panic!("manifest: {e}"));
    assert_eq!(entries[0].kind, gmon::manifest::Kind::Exe);
    assert_eq!(entries[0].gmon_file, b"gmon.out");
    assert_eq!(
        Path::new(&String::from_utf8_lossy(&entries[0].path.unescaped()).into_owned()),
        exe
    );
    let libm = entries
        .iter()
        .find(|e| e.path.unescaped().ends_with(b"/libm.so.6"))
        .unwrap_or_else(|| panic!("no libm in {}", String::from_utf8_lossy(&text)));
    assert_eq!(libm.kind, gmon::manifest::Kind::Lib);
    // The build-id recorded is the one in the file.
    let libm_path = PathBuf::from(String::from_utf8(libm.path.unescaped()).unwrap());
    let notes = Command::new("readelf")
        .arg("-n")
        .arg(&libm_path)
        .output()
        .unwrap();
    let hex: String = libm
        .build_id
        .as_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert!(
        !hex.is_empty() && String::from_utf8_lossy(&notes.stdout).contains(&hex),
        "build-id {hex} not in readelf -n {}",
        libm_path.display()
    );
    // Every file listed exists, parses, and together they hold the process's CPU time.
    let mut per_file = Vec::new();
    for e in &entries {
        let f = dir.path(&String::from_utf8_lossy(e.gmon_file));
        per_file.push((
            String::from_utf8_lossy(e.gmon_file).into_owned(),
            gmon_seconds(&f),
        ));
    }
    let total: f64 = per_file.iter().map(|(_, s)| s).sum();
    assert!(
        (total - r.user_s).abs() <= 0.05 * r.user_s,
        "all objects {total:.3} s vs user CPU {:.3} s: {per_file:?}",
        r.user_s
    );
    let libm_s = gmon_seconds(&dir.path(&String::from_utf8_lossy(libm.gmon_file)));
    let exe_s = gmon_seconds(&dir.path("gmon.out"));
    assert!(
        libm_s > 2.0 * exe_s,
        "libm {libm_s} s vs the program {exe_s} s"
    );
    // The executable's file is what gprof reads as before.
    let (_, rows) = gprof_flat(&exe, &dir.path("gmon.out"));
    assert!(seconds_of(&rows, "own_work") > 0.0, "{rows:?}");
    // gprof reads libm's file against libm's symbols: the stripped library has none (gprof
    // refuses it), its separate debug file (same link-time addresses) has them when installed.
    if let Some(dbg) = debug_file(libm.build_id.as_bytes()) {
        let (_, rows) = gprof_flat(&dbg, &dir.path(&String::from_utf8_lossy(libm.gmon_file)));
        let top: Vec<&str> = rows.iter().take(2).map(|(n, _)| n.as_str()).collect();
        assert!(
            top.iter().all(|n| n.contains("sin") || n.contains("exp")),
            "libm's top functions: {rows:?}"
        );
    } else {
        eprintln!("no debug file for libm installed: gprof's view of libm not checked");
    }
    // The analyzer reads the manifest and puts libm's hottest function on top.
    let (top, text) = report_top_row(&exe, &dir.path("gmon.out"));
    assert!(top.contains("libm.so.6"), "{text}");
}

// ---------------------------------------------------------------------------------------------
// PROFIL_MODE=pcsample: every sample kept, in the gmon crate's pcsample format.

#[test]
fn pcsample_mode_keeps_every_sample_with_its_object_thread_and_time() {
    let dir = Scratch::new("pcsample-mode");
    let exe = libm_prog(&dir);
    let started = std::time::Instant::now();
    // The default rate (see the PROFIL_RANGES=all test for why).
    let r = run(&dir, &exe, &["300"], &[("PROFIL_MODE", "pcsample")]);
    let wall_ns = started.elapsed().as_nanos() as u64;
    assert_eq!((r.status, r.stderr.as_str()), (0, ""), "{r:?}");
    assert_eq!(gmon_files(&dir), ["gmon.out"], "one file, at the gmon name");
    let data = fs::read(dir.path("gmon.out")).unwrap();
    let f = gmon::pcsample::parse(&data).unwrap_or_else(|e| panic!("pcsample file: {e}"));
    assert_eq!(f.header.flags, 0);
    assert_eq!(f.header.dropped, 0);
    assert_eq!(f.objects[0].path, exe.as_os_str().as_encoded_bytes());
    let libm = f
        .objects
        .iter()
        .position(|o| o.path.ends_with(b"/libm.so.6"))
        .expect("libm in the objects");
    let samples: Vec<_> = f.samples().collect();
    // Every sample is there: the count over the CPU time is the recorded rate (within 5%).
    let expected = r.user_s * f64::from(f.header.rate_hz);
    assert!(
        (samples.len() as f64 - expected).abs() <= 0.05 * expected && samples.len() > 100,
        "{} samples vs {expected:.0} (rate {} × user {:.3} s)",
        samples.len(),
        f.header.rate_hz,
        r.user_s
    );
    let in_libm = samples
        .iter()
        .filter(|s| f.object_of(s.pc) == Some(libm))
        .count();
    let in_exe = samples
        .iter()
        .filter(|s| f.object_of(s.pc) == Some(0))
        .count();
    assert!(
        in_libm > 2 * in_exe && in_exe > 0,
        "libm {in_libm}, program {in_exe}"
    );
    // One thread; timestamps within the run.
    let tids: std::collections::BTreeSet<u32> = samples.iter().map(|s| s.tid).collect();
    assert_eq!(tids.len(), 1, "{tids:?}");
    assert!(samples.iter().all(|s| s.time_ns <= wall_ns));
    let unix_now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64;
    // The analyzer reads the file in place of a gmon file: libm's code on top.
    let (top, text) = report_top_row(&exe, &dir.path("gmon.out"));
    assert!(top.contains("libm.so.6"), "{text}");
    assert!(
        f.header.start_unix_ns <= unix_now
            && f.header.start_unix_ns + wall_ns + 1_000_000_000 >= unix_now
    );
}

#[test]
fn pcsample_mode_with_a_full_buffer_stops_and_says_so() {
    let dir = Scratch::new("pcsample-full");
    let arg = format!("link-arg={}", runtime_path(false).display());
    let exe = rustc(&dir, "split.rs", "split", &["-C", &arg]);
    let r = run(
        &dir,
        &exe,
        &["threads", "100"],
        &[
            ("PROFIL_HZ", "1000"),
            ("PROFIL_MODE", "pcsample"),
            ("PROFIL_PCSAMPLES", "300"),
        ],
    );
    assert_eq!(r.status, 0, "{r:?}");
    let lines: Vec<&str> = r.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{}", r.stderr);
    assert!(
        lines[0].starts_with("profil-rt: the pcsample buffer was full (PROFIL_PCSAMPLES); "),
        "{}",
        r.stderr
    );
    let data = fs::read(dir.path("gmon.out")).unwrap();
    let f = gmon::pcsample::parse(&data).unwrap_or_else(|e| panic!("pcsample file: {e}"));
    assert_eq!(f.header.flags, gmon::pcsample::FLAG_BUFFER_FULL);
    assert_eq!(f.samples().len(), 300);
    assert!(f.header.dropped > 0);
    assert!(
        lines[0].contains(&format!(" {} samples were not recorded", f.header.dropped)),
        "{} vs {}",
        lines[0],
        f.header.dropped
    );
    // Both worker threads (and maybe main) are in the samples.
    let tids: std::collections::BTreeSet<u32> = f.samples().map(|s| s.tid).collect();
    assert!(tids.len() >= 2, "{tids:?}");
}

#[test]
fn a_static_program_using_dlopen_keeps_working_with_the_runtime_linked_in() {
    let dir = Scratch::new("static-dlopen");
    let exe = gcc(&dir, "late.c", "late", &["-static"], true);
    let r = run(&dir, &exe, &["5"], &[("PROFIL_RANGES", "all")]);
    assert_eq!((r.status, r.stderr.as_str()), (0, ""), "{r:?}");
    gprof_flat(&exe, &dir.path("gmon.out"));
}

#[test]
fn ranges_all_profiles_an_object_loaded_later_with_dlopen() {
    let dir = Scratch::new("ranges-dlopen");
    let exe = gcc(&dir, "late.c", "late", &[], false);
    // Preloaded (the linked-in object is checked with dlcycle.c below). The default rate (see
    // the test above for why).
    let so = runtime_path(true);
    let r = run(
        &dir,
        &exe,
        &["300"],
        &[
            ("PROFIL_RANGES", "all"),
            ("LD_PRELOAD", so.to_str().unwrap()),
        ],
    );
    assert_eq!((r.status, r.stderr.as_str()), (0, ""), "{r:?}");
    let text = fs::read(dir.path("gmon.out.objects")).expect("the manifest gmon.out.objects");
    let entries = gmon::manifest::parse(&text).unwrap_or_else(|e| panic!("manifest: {e}"));
    let libm = entries
        .iter()
        .find(|e| e.path.unescaped().ends_with(b"/libm.so.6"))
        .unwrap_or_else(|| panic!("no libm in {}", String::from_utf8_lossy(&text)));
    let libm_s = gmon_seconds(&dir.path(&String::from_utf8_lossy(libm.gmon_file)));
    let total: f64 = entries
        .iter()
        .map(|e| gmon_seconds(&dir.path(&String::from_utf8_lossy(e.gmon_file))))
        .sum();
    assert!(
        libm_s > 0.5 * total,
        "libm {libm_s:.3} s of {total:.3} s: {}",
        String::from_utf8_lossy(&text)
    );
    assert!(
        (total - r.user_s).abs() <= 0.05 * r.user_s,
        "all objects {total:.3} s vs user CPU {:.3} s",
        r.user_s
    );
}

// ---------------------------------------------------------------------------------------------
// dlopen behaves exactly as without the runtime, and objects loaded later are profiled.

/// A shared object built from a fixture (`gcc -O2 -shared -fPIC`).
fn shared_object(dir: &Scratch, src: &str, out: &str, flags: &[&str]) -> PathBuf {
    let so = dir.path(out);
    if let Some(parent) = so.parent() {
        fs::create_dir_all(parent).unwrap();
    }
    must(
        Command::new("gcc")
            .args(["-O2", "-shared", "-fPIC"])
            .args(flags)
            .arg("-o")
            .arg(&so)
            .arg(fixtures().join(src)),
    );
    so
}

/// Environment variables for [`run`].
type Env<'a> = Vec<(&'a str, &'a str)>;

/// What a run shows the user: status, stdout, stderr.
fn shown(r: &Run) -> (i32, &str, &str) {
    (r.status, r.stdout.as_str(), r.stderr.as_str())
}

#[test]
fn dlopen_searches_the_programs_runpath_and_rpath_with_the_runtime_linked_or_preloaded() {
    let dir = Scratch::new("dlopen-runpath");
    shared_object(&dir, "plug.c", "plugins/libplug.so", &[]);
    let so = runtime_path(true);
    let so = so.to_str().unwrap();
    let origin = "-Wl,-rpath,$ORIGIN/plugins";
    // `new:` loads with dlmopen into a new namespace.
    let args = ["libplug.so", "libm.so.6", "new:libplug.so"];
    for dtags in ["--enable-new-dtags", "--disable-new-dtags"] {
        let dt = format!("-Wl,{dtags}");
        let plain = gcc(&dir, "dlhost.c", "host", &[origin, &dt], false);
        let expected = run(&dir, &plain, &args, &[]);
        assert_eq!(
            expected.status, 0,
            "{dtags}, without the runtime: {expected:?}"
        );
        assert!(
            expected.stdout.contains("libplug.so: loaded"),
            "{expected:?}"
        );
        let linked = gcc(&dir, "dlhost.c", "host-linked", &[origin, &dt], true);
        let rdynamic = gcc(
            &dir,
            "dlhost.c",
            "host-rdynamic",
            &[origin, &dt, "-rdynamic"],
            true,
        );
        let cases: [(&str, &Path, Env<'_>); 7] = [
            ("preloaded", &plain, vec![("LD_PRELOAD", so)]),
            (
                "preloaded, PROFIL_OFF=1",
                &plain,
                vec![("LD_PRELOAD", so), ("PROFIL_OFF", "1")],
            ),
            (
                "preloaded, PROFIL_RANGES=all",
                &plain,
                vec![("LD_PRELOAD", so), ("PROFIL_RANGES", "all")],
            ),
            (
                "preloaded, PROFIL_MODE=pcsample",
                &plain,
                vec![("LD_PRELOAD", so), ("PROFIL_MODE", "pcsample")],
            ),
            ("linked", &linked, vec![("PROFIL_RANGES", "all")]),
            ("linked and preloaded", &linked, vec![("LD_PRELOAD", so)]),
            (
                "linked with -rdynamic and preloaded",
                &rdynamic,
                vec![("LD_PRELOAD", so), ("PROFIL_RANGES", "all")],
            ),
        ];
        for (what, exe, env) in cases {
            let r = run(&dir, exe, &args, &env);
            assert_eq!(shown(&r), shown(&expected), "{dtags}, {what}");
        }
    }
}

#[test]
fn a_dlopen_in_another_librarys_constructor_before_ours_behaves_as_without_us() {
    let dir = Scratch::new("dlopen-early");
    let early = shared_object(&dir, "dlopen_early.c", "libdlearly.so", &[]);
    let exe = gcc(&dir, "dlhost.c", "host", &[], false);
    let expected = run(&dir, &exe, &[], &[("LD_PRELOAD", early.to_str().unwrap())]);
    assert_eq!(
        shown(&expected),
        (0, "early dlopen: ok\n", ""),
        "without the runtime"
    );
    // Preloaded objects' constructors run in reverse order: libearly's before ours.
    let preload = format!("{} {}", runtime_path(true).display(), early.display());
    for env in [
        vec![],
        vec![("PROFIL_OFF", "1")],
        vec![("PROFIL_RANGES", "all")],
    ] {
        let mut env = env;
        env.push(("LD_PRELOAD", &preload));
        let r = run(&dir, &exe, &[], &env);
        assert_eq!(shown(&r), shown(&expected), "{env:?}");
    }
}

#[test]
fn python_ctypes_finds_libpython_with_the_runtime_preloaded() {
    let dir = Scratch::new("dlopen-python");
    let Ok(python) = which("python3") else {
        eprintln!("no python3: test skipped");
        return;
    };
    let script = "import ctypes; ctypes.CDLL('libpython3.so'); print('loaded')";
    let expected = run(&dir, &python, &["-c", script], &[]);
    if expected.status != 0 {
        eprintln!("this python3 cannot load libpython3.so by itself: test skipped: {expected:?}");
        return;
    }
    let so = runtime_path(true);
    for env in [vec![], vec![("PROFIL_OFF", "1")]] {
        let mut env = env;
        env.push(("LD_PRELOAD", so.to_str().unwrap()));
        let r = run(&dir, &python, &["-c", script], &env);
        assert_eq!(shown(&r), shown(&expected), "{env:?}");
    }
}

/// The first `name` on `PATH`, resolved through symbolic links (pyenv shims are scripts: the
/// real interpreter is what `sys.executable` names).
fn which(name: &str) -> Result<PathBuf, String> {
    let out = Command::new(name)
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .map_err(|e| e.to_string())?;
    let p = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    if out.status.success() && p.is_file() {
        Ok(p)
    } else {
        Err(format!("{name}: {out:?}"))
    }
}

/// `fixtures/runtime/dlcycle.c` and its two plugins: A (1 share of the work) is loaded,
/// unloaded, and B (3 shares) loaded in its place.
fn dlcycle(dir: &Scratch, linked: bool) -> (PathBuf, [PathBuf; 2]) {
    let a = shared_object(dir, "plug.c", "libplug_a.so", &["-DPLUG_NAME=\"a\""]);
    let b = shared_object(dir, "plug.c", "libplug_b.so", &["-DPLUG_NAME=\"b\""]);
    let name = if linked { "dlcycle-linked" } else { "dlcycle" };
    (gcc(dir, "dlcycle.c", name, &[], linked), [a, b])
}

const CYCLE_UNITS: [&str; 2] = ["40", "120"];

fn cycle_args(libs: &[PathBuf; 2]) -> [&str; 4] {
    [
        libs[0].to_str().unwrap(),
        CYCLE_UNITS[0],
        libs[1].to_str().unwrap(),
        CYCLE_UNITS[1],
    ]
}

#[test]
fn ranges_all_profiles_objects_loaded_later_and_one_loaded_where_another_was_unloaded() {
    let dir = Scratch::new("dlopen-cycle");
    for linked in [true, false] {
        let (exe, libs) = dlcycle(&dir, linked);
        let so = runtime_path(true);
        let mut env = vec![("PROFIL_RANGES", "all")];
        if !linked {
            env.push(("LD_PRELOAD", so.to_str().unwrap()));
        }
        let r = run(&dir, &exe, &cycle_args(&libs), &env);
        assert_eq!(
            shown(&r),
            (0, "same address\n", ""),
            "linked {linked}: B must be loaded where A was for this test"
        );
        let text = fs::read(dir.path("gmon.out.objects")).expect("the manifest");
        let entries = gmon::manifest::parse(&text).unwrap_or_else(|e| panic!("manifest: {e}"));
        let seconds = |lib: &Path| {
            let e = entries
                .iter()
                .find(|e| e.path.unescaped() == lib.as_os_str().as_encoded_bytes())
                .unwrap_or_else(|| {
                    panic!(
                        "linked {linked}: no {} in\n{}",
                        lib.display(),
                        String::from_utf8_lossy(&text)
                    )
                });
            gmon_seconds(&dir.path(&String::from_utf8_lossy(e.gmon_file)))
        };
        let (a, b) = (seconds(&libs[0]), seconds(&libs[1]));
        let total: f64 = entries
            .iter()
            .map(|e| gmon_seconds(&dir.path(&String::from_utf8_lossy(e.gmon_file))))
            .sum();
        // B does three times A's work; together nearly all of the CPU time.
        let share = b / (a + b);
        assert!(
            (0.65..=0.85).contains(&share) && a + b > 0.8 * total,
            "linked {linked}: A {a:.3} s, B {b:.3} s of {total:.3} s"
        );
        assert!(
            (total - r.user_s).abs() <= 0.05 * r.user_s,
            "linked {linked}: all objects {total:.3} s vs user CPU {:.3} s",
            r.user_s
        );
        // The analyzer reads both entries, at the same addresses, each against its own file.
        let (top, text) = report_top_row(&exe, &dir.path("gmon.out"));
        assert!(top.contains("libplug_b.so"), "{text}");
        assert!(text.contains("libplug_a.so"), "{text}");
        for f in gmon_files(&dir) {
            fs::remove_file(dir.path(&f)).unwrap();
        }
    }
}

#[test]
fn pcsample_mode_tells_an_unloaded_object_from_the_one_loaded_at_its_address() {
    let dir = Scratch::new("dlopen-cycle-pcsample");
    for linked in [true, false] {
        let (exe, libs) = dlcycle(&dir, linked);
        let so = runtime_path(true);
        let mut env = vec![("PROFIL_MODE", "pcsample")];
        if !linked {
            env.push(("LD_PRELOAD", so.to_str().unwrap()));
        }
        let r = run(&dir, &exe, &cycle_args(&libs), &env);
        assert_eq!(shown(&r), (0, "same address\n", ""), "linked {linked}");
        let data = fs::read(dir.path("gmon.out")).unwrap();
        let f = gmon::pcsample::parse(&data).unwrap_or_else(|e| panic!("pcsample file: {e}"));
        let index = |lib: &Path| {
            f.objects
                .iter()
                .position(|o| o.path == lib.as_os_str().as_encoded_bytes())
                .unwrap_or_else(|| {
                    panic!("linked {linked}: no {} in {:?}", lib.display(), f.objects)
                })
        };
        let (ia, ib) = (index(&libs[0]), index(&libs[1]));
        let (mut a, mut b, mut all) = (0usize, 0usize, 0usize);
        for s in f.samples() {
            all += 1;
            match f.object_of(s.pc) {
                Some(o) if o == ia => a += 1,
                Some(o) if o == ib => b += 1,
                _ => {}
            }
        }
        let share = b as f64 / (a + b).max(1) as f64;
        assert!(
            (0.65..=0.85).contains(&share) && (a + b) as f64 > 0.8 * all as f64,
            "linked {linked}: A {a}, B {b} of {all} samples"
        );
        fs::remove_file(dir.path("gmon.out")).unwrap();
    }
}

// ---------------------------------------------------------------------------------------------
// Signals: the program sees exactly its own dispositions and masks (runtime/src/signals.rs).

/// fixtures/runtime/signals.c without the runtime, and the ways of running it with the runtime:
/// linked into a PIE, a static and a static-pie executable, and preloaded into the plain one.
/// `-z now`: lazy binding's resolver saves the vector registers on the stack, which the small
/// stacks of the `altstack`/`coroutine` modes have no room for, with or without us.
fn signal_programs(dir: &Scratch) -> (PathBuf, Vec<(&'static str, PathBuf, bool)>) {
    let flags = ["-pthread", "-Wl,-z,now"];
    let plain = gcc(dir, "signals.c", "signals-plain", &flags, false);
    let pie = gcc(dir, "signals.c", "signals-pie", &flags, true);
    let stat = gcc(
        dir,
        "signals.c",
        "signals-static",
        &["-pthread", "-static"],
        true,
    );
    let spie = gcc(
        dir,
        "signals.c",
        "signals-static-pie",
        &["-pthread", "-static-pie", "-fPIE"],
        true,
    );
    let builds = vec![
        ("linked", pie, false),
        ("static", stat, false),
        ("static-pie", spie, false),
        ("LD_PRELOAD", plain.clone(), true),
    ];
    (plain, builds)
}

/// `stderr` without the one line the runtime adds, by design, when `PROFIL_TIMER=itimer` is asked
/// for more samples than the kernel tick allows (these tests run both timers at 1000 Hz, so that
/// the CPU-time timer fires as often as it can; the note itself has a test of its own).
fn without_rate_note(stderr: &str) -> String {
    stderr
        .lines()
        .filter(|l| !l.starts_with("profil-rt: PROFIL_TIMER=itimer took about "))
        .map(|l| format!("{l}\n"))
        .collect()
}

/// Run `args` without the runtime and then with it in every build and with each timer: exit
/// status, stdout and stderr must be the same. Where the program exits normally the profile
/// must hold samples (the runtime was really sampling all along).
fn signals_as_without_us(args: &[&str], timers: &[&str], builds: &[&str]) {
    let dir = Scratch::new(&format!("signals-{}", args.join("-")));
    let (plain, all) = signal_programs(&dir);
    let want = run(&dir, &plain, args, &[]);
    let so = runtime_path(true);
    for (name, exe, preload) in all.iter().filter(|b| builds.contains(&b.0)) {
        for timer in timers {
            let _ = fs::remove_file(dir.path("gmon.out"));
            let mut env = vec![("PROFIL_HZ", "1000"), ("PROFIL_TIMER", *timer)];
            if *preload {
                env.push(("LD_PRELOAD", so.to_str().unwrap()));
            }
            let got = run(&dir, exe, args, &env);
            assert_eq!(
                (
                    got.status,
                    got.stdout.as_str(),
                    without_rate_note(&got.stderr).as_str()
                ),
                (want.status, want.stdout.as_str(), want.stderr.as_str()),
                "{args:?} {name} PROFIL_TIMER={timer}: with the runtime (left) and without"
            );
            if want.status == 0 {
                let secs = gmon_seconds(&dir.path("gmon.out"));
                assert!(secs > 0.0, "{args:?} {name} {timer}: no samples");
            }
        }
    }
}

const ALL_BUILDS: &[&str] = &["linked", "static", "static-pie", "LD_PRELOAD"];

#[test]
fn sigtrap_set_to_its_default_action_does_not_kill_the_program() {
    signals_as_without_us(&["dfl-trap"], &["perf"], ALL_BUILDS);
}

#[test]
fn resetting_every_signal_to_its_default_does_not_kill_the_program() {
    signals_as_without_us(&["reset-all"], &["perf", "itimer"], ALL_BUILDS);
}

#[test]
fn a_crash_handler_for_sigtrap_sees_only_real_traps() {
    signals_as_without_us(&["crash-handler"], &["perf"], ALL_BUILDS);
    // Its own SIGTRAP still reaches it (exit 70 with its report).
    signals_as_without_us(
        &["crash-handler", "trap"],
        &["perf"],
        &["linked", "LD_PRELOAD"],
    );
}

#[test]
fn sigwait_family_and_signalfd_never_receive_our_samples() {
    for how in ["sigtimedwait", "sigwaitinfo", "sigwait", "signalfd"] {
        signals_as_without_us(&["wait", how], &["perf", "itimer"], ALL_BUILDS);
    }
}

/// Linux 6.4 and later deliver a process CPU-time timer's signal to the thread that is running
/// when it does not block it ("posix-timers: Prefer delivery of signals to the current
/// thread"); before, the main thread came first whenever it did not block it.
fn kernel_at_least(major: u32, minor: u32) -> bool {
    let release = fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    let mut parts = release
        .trim()
        .split(|c: char| !c.is_ascii_digit())
        .map(|p| p.parse::<u32>().unwrap_or(0));
    let (a, b) = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
    (a, b) >= (major, minor)
}

#[test]
fn the_cpu_timer_never_interrupts_the_sleeps_of_other_threads() {
    if !kernel_at_least(6, 4) {
        println!("note: kernel before 6.4: its CPU-timer signals prefer the main thread; skipped");
        return;
    }
    signals_as_without_us(
        &["sleepers"],
        &["itimer"],
        &["linked", "static", "LD_PRELOAD"],
    );
}

#[test]
fn the_program_sees_its_own_dispositions_masks_and_signal_deliveries() {
    signals_as_without_us(&["query"], &["perf", "itimer"], ALL_BUILDS);
}

#[test]
fn its_own_handler_on_a_4_kib_alternate_stack_survives_our_samples() {
    signals_as_without_us(&["altstack", "4096"], &["perf"], ALL_BUILDS);
}

/// Python checks at startup that SIGINT is at its default action before installing its
/// KeyboardInterrupt handler; with the runtime preloaded it must still do so, and a Ctrl-C must
/// run the program's cleanup path exactly as without us.
#[test]
fn python_under_ld_preload_still_gets_keyboard_interrupt() {
    // The interpreter itself (a `python3` on PATH may be a shell-script shim).
    let Ok(out) = Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
    else {
        println!("note: python3 is not installed; skipping the Python test");
        return;
    };
    let python = PathBuf::from(String::from_utf8(out.stdout).unwrap().trim());
    assert!(python.is_file(), "{python:?}");
    let script = "import os, signal, sys, time\n\
        print('SIGINT handler installed:', signal.getsignal(signal.SIGINT) is signal.default_int_handler)\n\
        end = time.process_time() + 0.3\n\
        while time.process_time() < end: pass\n\
        try:\n    os.kill(os.getpid(), signal.SIGINT)\n    time.sleep(5)\n    print('not interrupted')\n\
        except KeyboardInterrupt:\n    print('cleanup after KeyboardInterrupt')\n    sys.exit(3)\n";
    let dir = Scratch::new("python");
    let want = run(&dir, &python, &["-c", script], &[]);
    assert_eq!(want.status, 3, "{want:?}");
    let so = runtime_path(true);
    let got = run(
        &dir,
        &python,
        &["-c", script],
        &[("PROFIL_HZ", "1000"), ("LD_PRELOAD", so.to_str().unwrap())],
    );
    assert_eq!(
        (got.status, got.stdout.as_str(), got.stderr.as_str()),
        (want.status, want.stdout.as_str(), want.stderr.as_str()),
    );
    assert!(dir.path("gmon.out").exists(), "profiled: {got:?}");
}

/// The sampling handler's own stack use beyond the kernel's signal frame (the frame itself is
/// about AT_MINSIGSTKSZ: 3 KiB with AVX-512 state, less without): measured on a pattern-filled
/// alternate stack (the program's SA_ONSTACK handler for SIGTRAP/SIGPROF makes ours run there
/// too), against a trivial handler's. The crate docs promise at most 512 bytes.
#[test]
fn the_sampling_handler_uses_at_most_512_bytes_of_stack_beyond_the_signal_frame() {
    let dir = Scratch::new("stack-use");
    let exe = gcc(
        &dir,
        "signals.c",
        "signals",
        &["-pthread", "-Wl,-z,now"],
        true,
    );
    for env in [
        &[("PROFIL_TIMER", "perf")][..],
        &[("PROFIL_TIMER", "itimer")],
        &[("PROFIL_MODE", "pcsample")],
        &[("PROFIL_RANGES", "all")],
    ] {
        let mut env = env.to_vec();
        env.push(("PROFIL_HZ", "1000"));
        let r = run(&dir, &exe, &["stack-use"], &env);
        assert_eq!(r.status, 0, "{env:?}: {r:?}");
        // "stack use: trivial handler F bytes, during the burn B bytes (+D)"
        let nums: Vec<i64> = r
            .stderr
            .split(|c: char| !c.is_ascii_digit())
            .filter_map(|w| w.parse().ok())
            .collect();
        let (frame, burn) = (nums[0], nums[1]);
        assert!(
            frame > 0 && burn > frame,
            "{env:?}: samples ran elsewhere: {r:?}"
        );
        eprintln!("{env:?}: the handler used {} bytes", burn - frame);
        assert!(
            burn - frame <= 512,
            "{env:?}: {} bytes: {r:?}",
            burn - frame
        );
    }
}

/// A coroutine on a stack 1 KiB above the kernel's minimum signal stack burns CPU while
/// sampled (the stack has a guard page: an overflow faults).
#[test]
fn a_coroutine_on_a_small_stack_survives_our_samples() {
    signals_as_without_us(
        &["coroutine", "+1024"],
        &["perf", "itimer"],
        &["linked", "LD_PRELOAD"],
    );
}

/// The sigwait family are cancellation points with the runtime's wrappers too (a signal
/// thread cancelled at shutdown must not hang the join).
#[test]
fn threads_waiting_in_the_sigwait_family_can_be_cancelled() {
    signals_as_without_us(&["cancel"], &["perf"], ALL_BUILDS);
}

/// A vfork child shares our memory, TLS included: its mask changes must not become the
/// parent's, and its exec gets the mask it set.
#[test]
fn a_vfork_child_changes_only_its_own_mask() {
    signals_as_without_us(
        &["vfork-mask"],
        &["perf", "itimer"],
        &["linked", "static", "static-pie"],
    );
}

/// The program's blocked bit and SIG_IGN for the sampling signals are virtual while it runs;
/// an exec must hand the new image the real thing, as without us. (Not with LD_PRELOAD: there
/// the new image, `grep`, is profiled too, and its /proc/self/status shows the real state.)
#[test]
fn exec_hands_the_new_image_the_programs_mask_and_ignored_signals() {
    signals_as_without_us(
        &["exec-state"],
        &["perf", "itimer"],
        &["linked", "static", "static-pie"],
    );
}

/// A Rust program (libc's signal calls from Rust, std threads) sees its own SIGTRAP default
/// action and never receives our samples in a sigtimedwait, linked and preloaded.
#[test]
fn rust_programs_see_their_own_signals() {
    let dir = Scratch::new("signals-rs");
    let plain = rustc(&dir, "signals.rs", "signals-rs-plain", &[]);
    let obj = runtime_path(false);
    let linked = rustc(
        &dir,
        "signals.rs",
        "signals-rs",
        &["-C", &format!("link-arg={}", obj.display())],
    );
    let so = runtime_path(true);
    for mode in ["dfl-trap", "wait"] {
        let want = run(&dir, &plain, &[mode], &[]);
        assert_eq!(want.status, 0, "{want:?}");
        for timer in ["perf", "itimer"] {
            for (exe, preload) in [(&linked, false), (&plain, true)] {
                let _ = fs::remove_file(dir.path("gmon.out"));
                let mut env = vec![("PROFIL_HZ", "1000"), ("PROFIL_TIMER", timer)];
                if preload {
                    env.push(("LD_PRELOAD", so.to_str().unwrap()));
                }
                let got = run(&dir, exe, &[mode], &env);
                assert_eq!(
                    (
                        got.status,
                        got.stdout.as_str(),
                        without_rate_note(&got.stderr).as_str()
                    ),
                    (want.status, want.stdout.as_str(), want.stderr.as_str()),
                    "{mode} {timer} preload={preload}"
                );
                assert!(gmon_seconds(&dir.path("gmon.out")) > 0.0, "{mode} {timer}");
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Process trees (issue 14): no profile ever overwrites another process's profile.

/// The profile of process `pid` of `tree` in `dir`: `gmon.out.<pid>`, or `gmon.out` when that
/// process was the root of the tree (or took the plain name over from a wrapper that replaced
/// itself without a sample).
fn tree_file(dir: &Scratch, pid: &str) -> PathBuf {
    let numbered = dir.path(&format!("gmon.out.{pid}"));
    if numbered.exists() {
        numbered
    } else {
        dir.path("gmon.out")
    }
}

/// The first histogram record's (low_pc, high_pc) in a GNU gmon file of this machine.
fn hist_range(path: &Path) -> (u64, u64) {
    let data = fs::read(path).unwrap();
    assert!(data.len() > 37 && &data[..4] == b"gmon" && data[20] == 0);
    let word = |o: usize| u64::from_ne_bytes(data[o..o + 8].try_into().unwrap());
    (word(21), word(29))
}

/// The histogram range of `tree`'s own profile (from a run of it alone, preloaded).
fn tree_range(tree: &Path) -> (u64, u64) {
    static RANGE: OnceLock<(u64, u64)> = OnceLock::new();
    *RANGE.get_or_init(|| {
        let dir = Scratch::new("tree-range");
        let so = runtime_path(true);
        let r = run(&dir, tree, &["1"], &[("LD_PRELOAD", so.to_str().unwrap())]);
        assert_eq!(r.status, 0, "{r:?}");
        hist_range(&dir.path("gmon.out"))
    })
}

/// Run `cmd args` (preloaded) in `dir`, expecting `expect` lines `tree <pid>` on stdout: each
/// of those processes has a file of its own, with its `tree_work`.
fn check_tree_run(dir: &Scratch, tree: &Path, cmd: &Path, args: &[&str], expect: usize) -> Run {
    for f in gmon_files(dir) {
        let _ = fs::remove_file(dir.path(&f));
    }
    let so = runtime_path(true);
    let r = run(
        dir,
        cmd,
        args,
        &[("LD_PRELOAD", so.to_str().unwrap()), ("PROFIL_HZ", "1000")],
    );
    assert_eq!(r.status, 0, "{cmd:?} {args:?}: {r:?}");
    let pids: Vec<&str> = r
        .stdout
        .lines()
        .filter_map(|l| l.strip_prefix("tree "))
        .collect();
    assert_eq!(pids.len(), expect, "{cmd:?} {args:?}: {}", r.stdout);
    let mut files: Vec<PathBuf> = pids.iter().map(|p| tree_file(dir, p)).collect();
    for (pid, f) in pids.iter().zip(&files) {
        // The file is tree's (its histogram covers tree's text), not another program's that
        // gprof would read against tree's symbols all the same.
        assert_eq!(
            hist_range(f),
            tree_range(tree),
            "{cmd:?} {args:?}: process {pid}'s profile {} is another program's; files {:?}",
            f.display(),
            gmon_files(dir)
        );
        let (_, rows) = gprof_flat(tree, f);
        assert!(
            seconds_of(&rows, "tree_work") > 0.0,
            "{cmd:?} {args:?}: process {pid}'s profile {} has no tree_work: {rows:?}; files {:?}",
            f.display(),
            gmon_files(dir)
        );
    }
    files.sort();
    files.dedup();
    assert_eq!(
        files.len(),
        expect,
        "{cmd:?} {args:?}: two processes share a file; files {:?}",
        gmon_files(dir)
    );
    r
}

#[test]
fn every_process_under_a_wrapper_keeps_its_own_profile() {
    let dir = Scratch::new("tree-wrappers");
    let tree = gcc(&dir, "tree.c", "tree", &[], false);
    let sh = Path::new("/bin/sh");
    if Path::new("/usr/bin/time").exists() {
        // time forks and execs the program, then writes its own (empty) profile at exit.
        check_tree_run(
            &dir,
            &tree,
            Path::new("/usr/bin/time"),
            &["./tree", "30"],
            1,
        );
    }
    check_tree_run(&dir, &tree, sh, &["-c", "./tree 30; ./tree 30"], 2);
    // A shell that execs its last command: the program takes the plain name over.
    check_tree_run(&dir, &tree, sh, &["-c", "exec ./tree 30"], 1);
    if Path::new("/bin/bash").exists() {
        check_tree_run(
            &dir,
            &tree,
            Path::new("/bin/bash"),
            &["-c", "./tree 30; ./tree 30; true"],
            2,
        );
    }
    check_tree_run(&dir, &tree, Path::new("/usr/bin/env"), &["./tree", "30"], 1);
    // Through system()/posix_spawn (glibc's internal exec, which no wrapper sees).
    check_tree_run(
        &dir,
        &tree,
        sh,
        &["-c", "./tree 30 & ./tree 30 & wait; ./tree 30"],
        3,
    );
}

#[test]
fn make_recipes_keep_their_own_profiles() {
    let found = std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p)
            .map(|d| d.join("make"))
            .find(|m| m.is_file())
    });
    let Some(make) = found else {
        eprintln!("make not installed; skipped");
        return;
    };
    let dir = Scratch::new("tree-make");
    let tree = gcc(&dir, "tree.c", "tree", &[], false);
    fs::write(
        dir.path("Makefile"),
        "all: a b\na:\n\t@./tree 30\nb:\n\t@./tree 30 && true\n.PHONY: all a b\n",
    )
    .unwrap();
    check_tree_run(&dir, &tree, &make, &["-s"], 2);
}

#[test]
fn a_fork_exec_parent_and_its_children_each_keep_a_profile() {
    let dir = Scratch::new("tree-spawn");
    let tree = gcc(&dir, "tree.c", "tree", &[], false);
    let r = check_tree_run(&dir, &tree, &tree, &["spawn", "30", "3"], 3);
    // The parent is the root: gmon.out is its own, with its parent_work; nothing else is left.
    let (_, rows) = gprof_flat(&tree, &dir.path("gmon.out"));
    assert!(seconds_of(&rows, "parent_work") > 0.0, "{rows:?}");
    assert_eq!(seconds_of(&rows, "tree_work"), 0.0, "{rows:?}");
    assert_eq!(gmon_files(&dir).len(), 4, "{:?} {r:?}", gmon_files(&dir));
    // Children started with an environment of the parent's own making (only LD_PRELOAD): the
    // exec wrappers add the lineage to it, so they are still descendants.
    check_tree_run(&dir, &tree, &tree, &["spawn-env", "30", "2"], 2);
    let (_, rows) = gprof_flat(&tree, &dir.path("gmon.out"));
    assert!(seconds_of(&rows, "parent_work") > 0.0, "{rows:?}");
    assert_eq!(gmon_files(&dir).len(), 3, "{:?}", gmon_files(&dir));
}

/// `PROFIL_TIMER=itimer PROFIL_HZ=5000`: the CPU-time timer fires at most once per kernel tick
/// (CONFIG_HZ: 100 to 1000), so the rate asked for cannot be had; the runtime says so once.
/// At 50 Hz, below every tick rate, it says nothing.
#[test]
fn an_itimer_rate_above_the_tick_is_said_once() {
    let dir = Scratch::new("itimer-tick");
    let exe = gcc(&dir, "split.c", "split", &[], true);
    let r = run(
        &dir,
        &exe,
        &["60"],
        &[("PROFIL_TIMER", "itimer"), ("PROFIL_HZ", "5000")],
    );
    assert_eq!(r.status, 0, "{r:?}");
    let said: Vec<&str> = r
        .stderr
        .lines()
        .filter(|l| l.contains("PROFIL_TIMER=itimer") && l.contains("5000"))
        .collect();
    assert_eq!(said.len(), 1, "{:?}", r.stderr);
    let r = run(
        &dir,
        &exe,
        &["60"],
        &[("PROFIL_TIMER", "itimer"), ("PROFIL_HZ", "50")],
    );
    assert_eq!((r.status, r.stderr.as_str()), (0, ""), "{r:?}");
}

/// The manifest's process line (version 2): the clock, its nominal rate, every sample and the
/// process's CPU time, so that a report can state what went unsampled. A one-thread program
/// that blocks nothing loses (almost) nothing: its unsampled time is a few percent at most.
#[test]
fn the_manifest_describes_the_process_and_its_cpu_time() {
    let dir = Scratch::new("manifest-process");
    let exe = gcc(&dir, "split.c", "split", &[], true);
    for timer in ["perf", "itimer"] {
        let r = run(
            &dir,
            &exe,
            &["100"],
            &[("PROFIL_TIMER", timer), ("PROFIL_HZ", "1000")],
        );
        assert_eq!(r.status, 0, "{r:?}");
        let text = fs::read(dir.path("gmon.out.objects")).expect("the manifest");
        let m = gmon::manifest::parse_manifest(&text).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(m.version, 2);
        let p = m.process.expect("a process line");
        let samples = p.samples.unwrap();
        assert!(samples > 0 && p.pid.is_some() && p.ppid.is_some(), "{p:?}");
        let user = p.cpu_user_ns.unwrap() as f64 / 1e9;
        assert!(
            (user - r.user_s).abs() < 0.05 * r.user_s + 0.01,
            "{timer}: {user} s vs wait4 {} s",
            r.user_s
        );
        match timer {
            "perf" => {
                assert_eq!(p.clock, Some(gmon::manifest::Clock::Perf));
                assert_eq!(p.nominal_hz, Some(1000));
            }
            _ => {
                assert_eq!(p.clock, Some(gmon::manifest::Clock::Itimer));
                // The kernel tick's rate (CONFIG_HZ), at most the rate asked for.
                assert!(
                    [100, 250, 300, 1000].contains(&p.nominal_hz.unwrap()),
                    "{p:?}"
                );
            }
        }
        let cpu = p.sampled_cpu_ns().unwrap() as f64 / 1e9;
        let unsampled = p.unsampled_seconds().unwrap();
        assert!(
            unsampled < 0.1 * cpu,
            "{timer}: {unsampled} of {cpu} s: {p:?}"
        );
        assert_eq!(
            (p.threads_without_clock, p.clock_closed),
            (Some(0), Some(false))
        );
    }
}
