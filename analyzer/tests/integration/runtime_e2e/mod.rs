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

use crate::support::{is_object_file, runtime_path, TempDir};
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

/// `seconds` of profile (summed over whatever `what` names) are `r`'s user CPU time, within
/// 5% (the time before the clock starts and while the profile is written is not sampled).
fn assert_user_time(seconds: f64, r: &Run, what: &str) {
    assert!(
        (seconds - r.user_s).abs() <= 0.05 * r.user_s,
        "{what}: {seconds:.3} s vs user CPU {:.3} s",
        r.user_s
    );
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

fn gcc(dir: &TempDir, src: &str, out: &str, flags: &[&str], with_runtime: bool) -> PathBuf {
    let exe = dir.join(out);
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

fn rustc(dir: &TempDir, src: &str, out: &str, flags: &[&str]) -> PathBuf {
    let exe = dir.join(out);
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
fn run(dir: &TempDir, exe: &Path, args: &[&str], env: &[(&str, &str)]) -> Run {
    // A test that failed while holding the lock poisons it; the lock itself is still good.
    let _one = ONE_CHILD_AT_A_TIME
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    let out_path = dir.join("stdout.txt");
    let err_path = dir.join("stderr.txt");
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
fn check_split_3_to_1(dir: &TempDir, exe: &Path, r: &Run) {
    check_profile(
        exe,
        &dir.join("gmon.out"),
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

fn gmon_files(dir: &TempDir) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(&dir.0)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("gmon.out") && !is_object_file(n))
        .collect();
    v.sort();
    v
}

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

fn procs(dir: &TempDir) -> PathBuf {
    gcc(dir, "procs.c", "procs", &["-pthread"], true)
}

/// `fixtures/runtime/libm.c` with the runtime linked in: most of its time is in libm.
fn libm_prog(dir: &TempDir) -> PathBuf {
    let exe = dir.join("sinexp");
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

mod basics;
mod dlopen;
mod interfaces;
mod objects;
mod pcsample;
mod processes;
mod signals;
mod threads;
mod trees;
