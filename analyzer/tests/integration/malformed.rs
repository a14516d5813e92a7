//! Malformed inputs through every real CLI path (`fixtures/malformed/`).
//!
//! Each case of `fixtures/malformed/cases.txt` is run through the default report,
//! `--gprof -b -p`, `--gprof -b`, `dump` (with and without `--exe`), `merge` and `convert`.
//! For every command the test checks, independently of any golden file:
//!
//! * no panic, no hang (30 s limit), no signal: the status is 0 or 2 (1, gprof's own status
//!   for a failure, in `--gprof` mode);
//! * status 2 (1 in `--gprof` mode): nothing on stdout, exactly one stderr line, starting `profil-report: ` and
//!   naming the input; for a gmon file whose bytes are wrong, the line gives a byte offset;
//!   `merge`/`convert` left no output file (not even a temporary one);
//! * status 0: every stderr line starts `profil-report: ` (warnings only; a long one goes on
//!   over indented lines);
//! * peak memory (its own `ru_maxrss`, measured by [`Peak`]) stays under 64 MiB.
//!
//! Each case is a test of its own (`malformed::case::<role>_<file>`, generated from
//! `cases.txt` by `analyzer/build.rs`), so one failing case hides no other.
//!
//! The status and stderr of every command are then compared with the golden file
//! `fixtures/malformed/expected/<role>.<file>.txt`. `PROFIL_BLESS=1` rewrites the golden files;
//! `fixtures/malformed/regenerate.sh` rebuilds the inputs and re-blesses.

use crate::golden;
use crate::support::Peak;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_profil-report");
const MAX_RSS_KIB: i64 = 64 * 1024;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/malformed")
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Role {
    Gmon,
    Exe,
}

/// How an error about this input must look.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Content {
    /// A gmon file that exists and is a regular file: a format error gives a byte offset.
    GmonBytes,
    /// Anything else (executables, directories, missing files).
    Other,
}

struct Outcome {
    code: i32,
    stdout: Vec<u8>,
    stderr: String,
    maxrss_kib: i64,
}

/// Run `profil-report args` in `dir`, reaping it with `wait4` for its peak memory.
fn run(dir: &Path, out_dir: &Path, args: &[String]) -> Outcome {
    let stdout_path = out_dir.join("stdout");
    let stderr_path = out_dir.join("stderr");
    let (mut cmd, peak) = Peak::command(Path::new(BIN));
    let child = cmd
        .args(args)
        .current_dir(dir)
        .env_remove("RUST_BACKTRACE")
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&stdout_path).unwrap())
        .stderr(std::fs::File::create(&stderr_path).unwrap())
        .spawn()
        .expect("spawn profil-report");
    let pid = child.id() as libc::pid_t;
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut status = 0;
    loop {
        // SAFETY: `pid` is our own child, not yet reaped (std's Child is never waited on);
        // `status` is valid for writes.
        let r = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, std::ptr::null_mut()) };
        if r == pid {
            break;
        }
        assert_eq!(r, 0, "wait4 failed for {args:?}");
        if Instant::now() > deadline {
            // SAFETY: plain kill(2) on our own unreaped child.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            panic!("profil-report {args:?} still running after 30 s (hang)");
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    drop(child);
    assert!(
        libc::WIFEXITED(status),
        "profil-report {args:?} died of signal {}",
        libc::WTERMSIG(status)
    );
    Outcome {
        code: libc::WEXITSTATUS(status),
        stdout: std::fs::read(&stdout_path).unwrap(),
        stderr: String::from_utf8_lossy(&std::fs::read(&stderr_path).unwrap()).into_owned(),
        maxrss_kib: peak.kib(),
    }
}

/// The commands of one case (`OUT` stands for the output directory).
fn commands(role: Role, file: &str) -> Vec<Vec<String>> {
    let v = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    match role {
        Role::Gmon => vec![
            v(&[file, "prog"]),
            v(&["--gprof", "-b", "-p", file, "prog"]),
            v(&["--gprof", "-b", file, "prog"]),
            v(&["dump", "--exe", "prog", file]),
            v(&["dump", file]),
            v(&[
                "merge",
                "-o",
                "OUT/merged.gmon",
                "--exe",
                "prog",
                "good.gmon",
                file,
            ]),
            v(&[
                "convert",
                "--to",
                "gnu",
                "--exe",
                "prog",
                file,
                "OUT/converted.gmon",
            ]),
        ],
        Role::Exe => vec![
            v(&["good.gmon", file]),
            v(&["--gprof", "-b", "-p", "good.gmon", file]),
            v(&["--gprof", "-b", "good.gmon", file]),
            v(&["dump", "--exe", file, "good.gmon"]),
            v(&["merge", "-o", "OUT/merged.gmon", "--exe", file, "good.gmon"]),
            v(&[
                "convert",
                "--to",
                "bsd",
                "--exe",
                file,
                "good.gmon",
                "OUT/converted.gmon",
            ]),
        ],
    }
}

/// How GNU gprof 2.40 treats a case (third word of a `cases.txt` line).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Gprof {
    /// `--gprof -b [-p]` must agree with `gprof -b [-p]`.
    Agrees,
    /// gprof does not finish: not run.
    Hangs,
    /// gprof prints a report; we refuse the file on purpose.
    Accepts,
}

fn cases() -> Vec<(Role, String)> {
    cases_with_gprof()
        .into_iter()
        .map(|(r, f, _)| (r, f))
        .collect()
}

fn cases_with_gprof() -> Vec<(Role, String, Gprof)> {
    let text = std::fs::read_to_string(fixtures().join("cases.txt")).expect("cases.txt");
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| {
            let mut w = l.split_whitespace();
            let role = match w.next() {
                Some("gmon") => Role::Gmon,
                Some("exe") => Role::Exe,
                other => panic!("cases.txt: bad role {other:?} in {l:?}"),
            };
            let file = w.next().expect("cases.txt: file").to_string();
            let gprof = match w.next() {
                None => Gprof::Agrees,
                Some("gprof-hangs") => Gprof::Hangs,
                Some("gprof-accepts") => Gprof::Accepts,
                Some(other) => panic!("cases.txt: bad note {other:?} in {l:?}"),
            };
            assert!(w.next().is_none(), "cases.txt: extra words in {l:?}");
            (role, file, gprof)
        })
        .collect()
}

/// `expected/<role>.<file>.txt` (the same file can be a case in both roles).
fn golden_name(role: Role, file: &str) -> String {
    let role = match role {
        Role::Gmon => "gmon",
        Role::Exe => "exe",
    };
    format!("{role}.{file}.txt")
}

/// Check the invariants of one command; returns the problems found.
fn check(role: Role, content: Content, file: &str, args: &[String], o: &Outcome) -> Vec<String> {
    let mut bad = Vec::new();
    let lines: Vec<&str> = o.stderr.lines().collect();
    if o.stderr.contains("panicked") || o.stderr.contains("RUST_BACKTRACE") {
        bad.push("panicked".to_string());
    }
    if o.maxrss_kib >= MAX_RSS_KIB {
        bad.push(format!("peak memory {} KiB >= 64 MiB", o.maxrss_kib));
    }
    match o.code {
        0 => {
            // A warning longer than the 100-column budget goes on over indented lines.
            for (i, l) in lines.iter().enumerate() {
                let continued = i > 0 && l.starts_with("  ") && !l.trim().is_empty();
                if !l.starts_with("profil-report: ") && !continued {
                    bad.push(format!("stderr line without the prefix: {l:?}"));
                }
            }
        }
        // Bad input: 2, and in --gprof mode gprof's own status for a failure, 1.
        c if c == 2 || (c == 1 && args.iter().any(|a| a == "--gprof")) => {
            if !o.stdout.is_empty() {
                bad.push("printed to stdout before failing".to_string());
            }
            if lines.len() != 1 {
                bad.push(format!("{} stderr lines, want 1", lines.len()));
            }
            let line = lines.first().copied().unwrap_or("");
            if !line.starts_with("profil-report: ") {
                bad.push(format!("no `profil-report: ` prefix: {line:?}"));
            }
            if !line.contains(file) {
                bad.push(format!("does not name {file}: {line:?}"));
            }
            let about_gmon = role == Role::Gmon && content == Content::GmonBytes;
            // Whole-file verdicts (gprof's "missing histogram") have no single offset.
            let whole_file = line.contains("file is missing");
            if about_gmon && !whole_file && !line.contains("byte") {
                bad.push(format!("no byte offset: {line:?}"));
            }
        }
        c => bad.push(format!("exit status {c}, want 0 or 2")),
    }
    bad.into_iter()
        .map(|b| format!("profil-report {}: {b}", args.join(" ")))
        .collect()
}

/// One case: every command on `file` in the role `role`, checked and compared with its
/// golden file. Runs in a scratch directory of its own (cases run in parallel).
fn check_case(role: Role, file: &str) -> Result<(), String> {
    let dir = fixtures();
    let name = golden_name(role, file);
    let tmp = std::env::temp_dir().join(format!(
        "profil-malformed-{}-{}",
        std::process::id(),
        name.replace('/', "_")
    ));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).unwrap();
    let out_dir = tmp.join("out");
    let io_dir = tmp.join("io");
    std::fs::create_dir_all(&io_dir).unwrap();

    let mut problems = Vec::new();
    let path = dir.join(file);
    let content = if role == Role::Gmon && path.is_file() {
        Content::GmonBytes
    } else {
        Content::Other
    };
    let mut golden = String::new();
    for cmd in commands(role, file) {
        std::fs::create_dir_all(&out_dir).unwrap();
        let out_str = out_dir.to_str().unwrap();
        let args: Vec<String> = cmd.iter().map(|a| a.replace("OUT", out_str)).collect();
        let o = run(&dir, &io_dir, &args);
        problems.extend(check(role, content, file, &cmd, &o));
        // A refused merge or convert leaves nothing behind in the output directory.
        let left: Vec<_> = std::fs::read_dir(&out_dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        if o.code != 0 && !left.is_empty() {
            problems.push(format!(
                "profil-report {}: failed but left {left:?}",
                cmd.join(" ")
            ));
        }
        std::fs::remove_dir_all(&out_dir).unwrap();
        let _ = writeln!(golden, "$ profil-report {}", cmd.join(" "));
        let _ = writeln!(golden, "exit {}", o.code);
        golden.push_str(&o.stderr.replace(out_str, "OUT"));
    }
    let _ = std::fs::remove_dir_all(&tmp);
    if let Err(e) = golden::check(&dir.join("expected").join(&name), golden.as_bytes()) {
        problems.push(e);
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n"))
    }
}

/// One case (the tests in [`case`] call this).
fn run_case(role: Role, file: &str) {
    if let Err(e) = check_case(role, file) {
        panic!("{}: {e}", golden_name(role, file));
    }
}

/// Every case of `cases.txt` is a test of its own.
mod case {
    include!(concat!(env!("OUT_DIR"), "/malformed_cases.rs"));
}

#[test]
fn cases_txt_lists_at_least_40_cases() {
    let n = cases().len();
    assert!(n >= 40, "cases.txt lists only {n} cases");
}

/// The golden directory holds exactly one file per case (no stale goldens).
#[test]
fn every_golden_file_has_a_case() {
    let names: std::collections::BTreeSet<String> = cases()
        .into_iter()
        .map(|(r, f)| golden_name(r, &f))
        .collect();
    for e in std::fs::read_dir(fixtures().join("expected")).unwrap() {
        let n = e.unwrap().file_name().to_string_lossy().into_owned();
        assert!(names.contains(&n), "expected/{n} has no case in cases.txt");
    }
}

/// Run the installed gprof in `dir`; `None` if it did not finish within 20 s.
fn gprof(dir: &Path, args: &[&str]) -> Option<(i32, Vec<u8>)> {
    let mut child = Command::new("gprof")
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("run gprof (GNU binutils)");
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut stdout, &mut v).map(|_| v)
    });
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(st) = child.try_wait().unwrap() {
            let out = reader.join().unwrap().unwrap();
            return Some((st.code().unwrap_or(-1), out));
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// On every malformed input, `--gprof -b [-p]` does what gprof 2.40 does: the same bytes when
/// gprof prints a report, a failure with gprof's status 1 when gprof fails, except for the
/// cases `cases.txt` marks, where the test checks the noted difference instead.
#[test]
fn gprof_mode_agrees_with_gprof_on_malformed_inputs() {
    let dir = fixtures();
    let tmp = std::env::temp_dir().join(format!("profil-malformed-g-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).unwrap();
    let mut problems = Vec::new();
    let mut compared = 0;
    for (role, file, note) in cases_with_gprof() {
        if note == Gprof::Hangs {
            continue;
        }
        for mode in [&["-b", "-p"][..], &["-b"][..]] {
            let (exe, gmon) = match role {
                Role::Gmon => ("prog", file.as_str()),
                Role::Exe => (file.as_str(), "good.gmon"),
            };
            let mut g_args = mode.to_vec();
            g_args.extend([exe, gmon]);
            let mut o_args: Vec<String> = vec!["--gprof".into()];
            o_args.extend(mode.iter().map(|s| s.to_string()));
            o_args.extend([gmon.to_string(), exe.to_string()]);
            let ours = run(&dir, &tmp, &o_args);
            let what = format!(
                "gprof {} vs profil-report {}",
                g_args.join(" "),
                o_args.join(" ")
            );
            let Some((g_code, g_out)) = gprof(&dir, &g_args) else {
                problems.push(format!(
                    "{what}: gprof did not finish (mark it gprof-hangs)"
                ));
                continue;
            };
            compared += 1;
            match (note, g_code, ours.code) {
                // Refused on purpose, with gprof's status for a failure.
                (Gprof::Accepts, 0, 1) => {}
                (Gprof::Accepts, g, o) => problems.push(format!(
                    "{what}: marked gprof-accepts, but gprof exits {g} and we exit {o}"
                )),
                (_, 0, 0) if g_out == ours.stdout => {}
                (_, 0, 0) => problems.push(format!(
                    "{what}: output differs\n--- gprof\n{}--- ours\n{}",
                    String::from_utf8_lossy(&g_out),
                    String::from_utf8_lossy(&ours.stdout)
                )),
                (_, 1, 1) => {}
                (_, g, o) => problems.push(format!("{what}: gprof exits {g}, we exit {o}")),
            }
        }
    }
    let _ = std::fs::remove_dir_all(&tmp);
    assert!(compared >= 80, "only {compared} comparisons ran");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Arcs outside the text are not an error (gprof ignores them silently), but the default
/// report must say that calls were left out of its call graph.
#[test]
fn arcs_outside_the_text_are_reported_not_refused() {
    let dir = fixtures();
    let tmp = std::env::temp_dir().join(format!("profil-malformed-a-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let args: Vec<String> = ["arcs-outside-text.gmon", "prog"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let o = run(&dir, &tmp, &args);
    let _ = std::fs::remove_dir_all(&tmp);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("800 calls) lead to addresses outside every function"),
        "the default report does not mention the arc outside the text:\n{text}"
    );
    assert!(
        text.contains("20 calls came from code outside the known functions"),
        "the default report does not mention the caller outside the text:\n{text}"
    );
}
