//! Helpers of the runtime's sampled-stack tests (`runtime_stacks`, `runtime_cfi`): running a
//! profiled child one at a time with the walk statistics on stderr (`PROFIL_STACK_STATS=1`),
//! running it until enough samples were walked, the truth the program printed, and reading the
//! report (`--json` rows and call graph, the folded-stacks export).

use crate::support::{runtime_path, TempDir};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};
use std::sync::Mutex;

/// One profiled child at a time (they are CPU-bound; see runtime_e2e/mod.rs).
pub static ONE_CHILD: Mutex<()> = Mutex::new(());

/// What a profiled child did.
pub struct Run {
    pub status: ExitStatus,
    pub ok: bool,
    pub stdout: String,
    pub stderr: String,
}

/// Run `exe args` in `dir` with the walk statistics on, without any `PROFIL_*`, `GMON_OUT_PREFIX`
/// or `LD_PRELOAD` of the test's own environment, plus `env`.
pub fn run(dir: &TempDir, exe: &Path, args: &[&str], env: &[(&str, &str)]) -> Run {
    let _one = ONE_CHILD.lock().unwrap_or_else(|e| e.into_inner());
    let mut cmd = Command::new(exe);
    cmd.args(args).current_dir(&dir.0);
    for (k, _) in std::env::vars() {
        if k.starts_with("PROFIL_") || k == "GMON_OUT_PREFIX" || k == "LD_PRELOAD" {
            cmd.env_remove(k);
        }
    }
    cmd.env("PROFIL_STACK_STATS", "1").envs(env.iter().copied());
    let out = cmd.output().unwrap();
    Run {
        status: out.status,
        ok: out.status.success(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// The named figure of the `profil-rt: stacks ...` line.
pub fn stat(r: &Run, name: &str) -> u64 {
    let line = r
        .stderr
        .lines()
        .find(|l| l.starts_with("profil-rt: stacks "))
        .unwrap_or_else(|| panic!("no stacks line: {}", r.stderr));
    line.split_whitespace()
        .find_map(|w| w.strip_prefix(&format!("{name}=")))
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no {name} in {line}"))
}

/// Run `exe` with the arguments `args(scale)` for `scale = start`, doubling it (at most 5
/// times) until at least `min_walks` samples were walked, so that enough samples are taken on
/// any machine, loaded or not; the last run, which succeeded.
pub fn run_until_walks(
    dir: &TempDir,
    exe: &Path,
    start: u64,
    args: impl Fn(&str) -> Vec<String>,
    env: &[(&str, &str)],
    min_walks: u64,
) -> Run {
    let mut scale = start;
    for attempt in 0..6 {
        let a = args(&scale.to_string());
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        let r = run(dir, exe, &a, env);
        assert!(
            r.ok,
            "{exe:?} {a:?}: {}\n{}{}",
            r.status, r.stdout, r.stderr
        );
        if stat(&r, "walks") >= min_walks || attempt == 5 {
            return r;
        }
        scale *= 2;
    }
    unreachable!("the last attempt returns")
}

/// The figure `key=` the program printed on its `truth` line.
pub fn truth(r: &Run, key: &str) -> f64 {
    r.stdout
        .split_whitespace()
        .find_map(|w| w.strip_prefix(&format!("{key}=")))
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no {key}= in {}", r.stdout))
}

/// `profil-report args` in `dir`: exit code, stdout, stderr.
pub fn report(dir: &TempDir, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_profil-report"))
        .args(args)
        .current_dir(&dir.0)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `profil-report --json gmon.out exe`, which must succeed.
pub fn report_json(dir: &TempDir, exe: &Path) -> serde_json::Value {
    let (code, out, err) = report(dir, &["--json", "gmon.out", exe.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"))
}

/// `total_samples` of the row of function `name` (either report's rows).
pub fn row_total(j: &serde_json::Value, name: &str) -> Option<u64> {
    j["rows"].as_array()?.iter().find_map(|r| {
        let n = r.get("name").or_else(|| r.get("function"))?.as_str()?;
        (n == name).then(|| r["total_samples"].as_u64())?
    })
}

/// The folded stacks `profil-report export --to folded` writes: (frames root first, samples).
pub fn folded(dir: &TempDir, exe: &Path) -> Vec<(Vec<String>, u64)> {
    let (code, _, err) = report(
        dir,
        &[
            "export",
            "--to",
            "folded",
            "-o",
            "folded.txt",
            "gmon.out",
            exe.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 0, "{err}");
    fs::read_to_string(dir.0.join("folded.txt"))
        .unwrap()
        .lines()
        .filter_map(|l| l.rsplit_once(' '))
        .map(|(stack, n)| {
            let frames = stack.split(';').map(str::to_owned).collect();
            (frames, n.parse().unwrap())
        })
        .collect()
}

// ---- The cheap/costly program (fixtures/runtime/stacks.c, stacks.rs) ----

/// fixtures/runtime/stacks.rs built `rustc -O` with the runtime object linked in and `flags`.
pub fn build_rust(dir: &TempDir, flags: &[&str]) -> PathBuf {
    let exe = dir.0.join("stacks_rs");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/runtime/stacks.rs");
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let out = Command::new(rustc)
        .args(["-O", "--edition", "2021", "-C"])
        .arg(format!("link-arg={}", runtime_path(false).display()))
        .args(flags)
        .arg("-o")
        .arg(&exe)
        .arg(src)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    exe
}

/// Run `exe [mode] SCALE` (the cheap/costly program) until at least 2,000 samples were walked
/// ([`run_until_walks`]); the share of `costly` the program measured itself.
pub fn run_until_2000_walks(
    dir: &TempDir,
    exe: &Path,
    mode: Option<&str>,
    env: &[(&str, &str)],
) -> f64 {
    let args = |s: &str| mode.into_iter().chain([s]).map(str::to_owned).collect();
    let r = run_until_walks(dir, exe, 200, args, env, 2000);
    truth(&r, "costly_share")
}

/// Run cheap/costly until 2,000 samples were walked ([`run_until_2000_walks`]); the report's
/// totals give costly's share of cheap + costly within `points` of the program's own clock.
pub fn check_report_costly_share(
    dir: &TempDir,
    exe: &Path,
    mode: Option<&str>,
    env: &[(&str, &str)],
    points: f64,
) {
    let truth = run_until_2000_walks(dir, exe, mode, env);
    let j = report_json(dir, exe);
    let costly = row_total(&j, "costly").unwrap_or_else(|| panic!("no costly total: {j}"));
    let cheap = row_total(&j, "cheap").unwrap_or_else(|| panic!("no cheap total: {j}"));
    let got = 100.0 * costly as f64 / (costly + cheap) as f64;
    assert!(
        (got - truth * 100.0).abs() <= points,
        "report {got:.1}% vs truth {:.1}% ({env:?})\n{j}",
        truth * 100.0
    );
    // JSON rows carry total_seconds = total_samples / hz.
    let hz = j["hz"].as_f64().unwrap();
    let row = j["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r.get("name").or_else(|| r.get("function")).unwrap() == "costly")
        .unwrap();
    let secs = row["total_seconds"].as_f64().unwrap();
    assert!((secs - costly as f64 / hz).abs() < 1e-9, "{row}");
    assert!(row["total_ci95_low_seconds"].as_f64().unwrap() < secs);
    assert!(row["total_ci95_high_seconds"].as_f64().unwrap() > secs);
    assert_eq!(j["call_graph"]["kind"], "sampled", "{j}");
}
