//! `profil-report run` on process trees and system programs (issue 14): wrappers (`sh -c`,
//! `bash -c`, `env`, `/usr/bin/time`, `make`), exec chains, `--all`, `--merge`, JSON with the
//! process list, a stripped system program, and a libc-heavy program whose libc share agrees
//! with `perf report --sort dso`.
//!
//! The programs are fixtures/tree/chain.c (spins UNITS × ~20 ms, then execs the rest of its
//! command line) and fixtures/tree/libc_heavy.c. CPU shares are judged by ratios with wide
//! bands, so a loaded machine changes nothing.

use crate::ux_support;

use std::path::Path;
use std::process::{Command, Output};
use ux_support::*;

fn fixture(name: &str) -> String {
    std::fs::read_to_string(root().join("fixtures/tree").join(name)).unwrap()
}

/// `a`, `b` and `c`: three copies of chain.c under different names.
fn chain(dir: &Path) {
    gcc(&fixture("chain.c"), &dir.join("a"), &[]);
    std::fs::copy(dir.join("a"), dir.join("b")).unwrap();
    std::fs::copy(dir.join("a"), dir.join("c")).unwrap();
}

fn run_in(dir: &Path, args: &[&str]) -> Output {
    profil_report_in(dir)
        .arg("run")
        .args(args)
        .output()
        .unwrap()
}

/// The pid of `program`'s row in the report's table of other processes.
fn listed_pid(err: &str, program: &str) -> u32 {
    err.lines()
        .skip_while(|l| !l.starts_with("Other processes ("))
        .find_map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            (cells.len() == 3 && cells[2] == program).then(|| cells[0].parse().ok())?
        })
        .unwrap_or_else(|| panic!("{program} in {err}"))
}

/// `profil-report FILE EXE` succeeds and names `spin`.
fn reports_spin(dir: &Path, file: &str, exe: &str) {
    let out = Command::new(BIN)
        .args([file, exe])
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", show(&out));
    assert!(has_cell(&text(&out.stdout), "spin"), "{}", show(&out));
}

/// `./a 1` then `./b 3` under a wrapper: b (3 units) is reported, a is listed, and both
/// profiles are kept and readable.
fn two_programs_under(dir: &Path, args: &[&str]) {
    for f in std::fs::read_dir(dir).unwrap() {
        let f = f.unwrap();
        if f.file_name().to_string_lossy().starts_with("gmon.out") {
            if f.path().is_dir() {
                std::fs::remove_dir_all(f.path()).unwrap();
            } else {
                std::fs::remove_file(f.path()).unwrap();
            }
        }
    }
    let out = run_in(dir, args);
    assert!(out.status.success(), "{args:?}: {}", show(&out));
    let err = text(&out.stderr);
    assert!(
        err.replace('\n', " ")
            .contains("; profile saved as gmon.out (b of "),
        "{args:?}: {err}"
    );
    assert!(other_processes(&err).is_some(), "{args:?}: {err}");
    assert!(err.contains("=== b (pid "), "{args:?}: {err}");
    assert!(has_cell(&err, "spin"), "{args:?}: {err}");
    assert!(!err.contains("not kept"), "{args:?}: {err}");
    let a = listed_pid(&err, "a");
    reports_spin(dir, "gmon.out", "./b");
    reports_spin(dir, &format!("gmon.out.d/gmon.out.{a}"), "./a");
}

#[test]
fn shell_wrappers_keep_and_report_every_process() {
    let s = TempDir::new("tree-sh");
    chain(&s.0);
    two_programs_under(&s.0, &["sh", "-c", "./a 1; ./b 3"]);
    // bash -c './prog; true': bash forks for ./b instead of exec'ing it, so b is a child.
    two_programs_under(&s.0, &["bash", "-c", "./a 1; ./b 3; true"]);
    // make runs each recipe line through a shell or directly.
    std::fs::write(s.join("Makefile"), "all:\n\t./a 1\n\t./b 3\n").unwrap();
    two_programs_under(&s.0, &["make", "-s"]);
}

#[test]
fn env_and_time_report_the_program_they_run() {
    let s = TempDir::new("tree-env");
    chain(&s.0);
    // env execs the program in the same process before taking a sample: one profile, the
    // program's, under the plain name.
    let out = run_in(&s.0, &["env", "X=1", "./b", "2"]);
    assert!(out.status.success(), "{}", show(&out));
    let err = text(&out.stderr);
    assert!(
        err.contains("env exited with status 0; profile saved as gmon.out\n"),
        "{err}"
    );
    // (The default report, or the one across shared objects if libc took a sample.)
    assert!(
        err.contains("Flat profile of b ") && has_cell(&err, "spin"),
        "{err}"
    );
    reports_spin(&s.0, "gmon.out", "./b");

    if !Path::new("/usr/bin/time").exists() {
        eprintln!("skipped: /usr/bin/time is not installed");
        return;
    }
    let out = run_in(&s.0, &["/usr/bin/time", "./b", "2"]);
    assert!(out.status.success(), "{}", show(&out));
    let err = text(&out.stderr);
    assert!(
        err.contains("profile saved as gmon.out (b of ")
            || err.contains("profile saved as gmon.out\n"),
        "{err}"
    );
    assert!(has_cell(&err, "spin"), "{err}");
    reports_spin(&s.0, "gmon.out", "./b");
}

#[test]
fn exec_chain_keeps_each_program_and_all_reports_each() {
    let s = TempDir::new("tree-chain");
    chain(&s.0);
    let out = run_in(
        &s.0,
        &[
            "--all", "--json", "--report", "r.json", "./a", "2", "./b", "6", "./c", "4",
        ],
    );
    assert!(out.status.success(), "{}", show(&out));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(s.join("r.json")).unwrap()).unwrap();
    let procs = v["processes"].as_array().unwrap();
    let programs: Vec<&str> = procs
        .iter()
        .map(|p| p["program"].as_str().unwrap())
        .collect();
    assert_eq!(programs, ["a", "b", "c"], "{v}");
    let pid = procs[0]["pid"].as_u64().unwrap();
    assert!(
        procs.iter().all(|p| p["pid"].as_u64() == Some(pid)),
        "one process: {v}"
    );
    let images: Vec<u64> = procs.iter().map(|p| p["image"].as_u64().unwrap()).collect();
    assert_eq!(images, [0, 1, 2], "{v}");
    // Each image's CPU time is its own (2:6:4 units), not the process's running total.
    let cpu: Vec<f64> = procs
        .iter()
        .map(|p| p["cpu_seconds"].as_f64().unwrap())
        .collect();
    let (ba, ca) = (cpu[1] / cpu[0], cpu[2] / cpu[0]);
    assert!(
        (1.8..5.0).contains(&ba) && (1.2..3.5).contains(&ca),
        "{cpu:?}"
    );
    // The busiest (b) has the plain name; the others theirs, each readable.
    let files: Vec<&str> = procs
        .iter()
        .map(|p| p["profile"].as_str().unwrap())
        .collect();
    assert_eq!(
        files,
        [
            format!("gmon.out.d/gmon.out.{pid}"),
            "gmon.out".to_string(),
            format!("gmon.out.d/gmon.out.{pid}.2")
        ],
        "{v}"
    );
    assert_eq!(v["reports"].as_array().unwrap().len(), 3, "{v}");
    reports_spin(&s.0, &format!("gmon.out.d/gmon.out.{pid}"), "./a");
    reports_spin(&s.0, "gmon.out", "./b");
    reports_spin(&s.0, &format!("gmon.out.d/gmon.out.{pid}.2"), "./c");

    // Without --all: b's report and one line for the others.
    let out = run_in(&s.0, &["./a", "2", "./b", "6", "./c", "4"]);
    assert!(out.status.success(), "{}", show(&out));
    let err = text(&out.stderr);
    let (mut others, more) = other_processes(&err).unwrap_or_else(|| panic!("{err}"));
    others.sort();
    assert_eq!(
        (others, more),
        (vec!["a".to_string(), "c".into()], 0),
        "{err}"
    );
    assert_eq!(err.matches("=== ").count(), 1, "{err}");
}

#[test]
fn merge_sums_the_processes_of_one_program() {
    let s = TempDir::new("tree-merge");
    chain(&s.0);
    let out = run_in(&s.0, &["--merge", "sh", "-c", "./a 1; ./b 2; ./b 2"]);
    assert!(out.status.success(), "{}", show(&out));
    let err = text(&out.stderr);
    // b's two processes (4 units) are one report; a (1 unit) is listed.
    let head = err
        .lines()
        .find(|l| l.starts_with("=== "))
        .unwrap_or_else(|| panic!("{err}"));
    assert!(head.starts_with("=== b (pids "), "{head}");
    assert_eq!(other_processes(&err), Some((vec!["a".into()], 0)), "{err}");
    assert!(err.contains("(2 gmon files)"), "{err}");
}

#[test]
fn a_stripped_system_program_is_reported_by_object() {
    // sort is stripped on most distributions: exported names, debug files, or address ranges
    // of sort itself, and libc's functions.
    let s = TempDir::new("tree-sort");
    let lines: String = (0..200_000u32)
        .map(|i| format!("{}\n", i.wrapping_mul(2_654_435_761)))
        .collect();
    std::fs::write(s.join("in.txt"), lines).unwrap();
    let out = run_in(&s.0, &["--json", "--report", "r.json", "sort", "in.txt"]);
    assert!(out.status.success(), "{}", show(&out));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(s.join("r.json")).unwrap()).unwrap();
    let rows = v["rows"].as_array().unwrap();
    assert!(!rows.is_empty(), "{v}");
    let objects: Vec<&str> = rows.iter().map(|r| r["object"].as_str().unwrap()).collect();
    assert!(objects.iter().any(|o| o.starts_with("libc.so")), "{v}");
    for r in rows {
        let f = r["function"].as_str().unwrap();
        assert_ne!(f, "<outside known functions>", "{v}");
        if f.starts_with('<') && f.contains("+0x") {
            let o = r["object"].as_str().unwrap();
            assert!(
                f.starts_with(&format!("<{o}+0x")),
                "range named by its object: {v}"
            );
        }
    }
    assert!(v["unsampled_seconds"].as_f64().is_some(), "{v}");
}

/// `perf report --sort dso` shares of user-space objects (kernel excluded), or None when perf
/// cannot record here.
fn perf_dso_shares(dir: &Path, exe: &str, arg: &str) -> Option<Vec<(String, f64)>> {
    let rec = Command::new("perf")
        .args([
            "record",
            "-q",
            "-e",
            "task-clock:u",
            "-o",
            "perf.data",
            exe,
            arg,
        ])
        .current_dir(dir)
        .output()
        .ok()?;
    if !rec.status.success() {
        eprintln!("perf record failed: {}", text(&rec.stderr));
        return None;
    }
    let rep = Command::new("perf")
        .args([
            "report",
            "-i",
            "perf.data",
            "--sort",
            "dso",
            "--stdio",
            "-q",
        ])
        .current_dir(dir)
        .output()
        .ok()?;
    if !rep.status.success() {
        return None;
    }
    let mut v = Vec::new();
    for l in text(&rep.stdout).lines() {
        let mut it = l.split_whitespace();
        let (Some(p), Some(dso)) = (it.next(), it.next()) else {
            continue;
        };
        let Ok(p) = p.trim_end_matches('%').parse::<f64>() else {
            continue;
        };
        if !dso.starts_with('[') {
            v.push((dso.to_string(), p));
        }
    }
    let total: f64 = v.iter().map(|x| x.1).sum();
    (total > 0.0).then(|| v.into_iter().map(|(d, p)| (d, p / total)).collect())
}

#[test]
fn libc_share_agrees_with_perf() {
    let s = TempDir::new("tree-libc");
    gcc(&fixture("libc_heavy.c"), &s.join("lh"), &[]);
    let Some(perf) = perf_dso_shares(&s.0, "./lh", "3") else {
        eprintln!("skipped: perf cannot record here (not installed, or perf_event_paranoid)");
        return;
    };
    let perf_libc: f64 = perf
        .iter()
        .filter(|(d, _)| d.starts_with("libc.so"))
        .map(|x| x.1)
        .sum();
    let out = run_in(
        &s.0,
        &["--hz", "2000", "--json", "--report", "r.json", "./lh", "3"],
    );
    assert!(out.status.success(), "{}", show(&out));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(s.join("r.json")).unwrap()).unwrap();
    let rows = v["rows"].as_array().unwrap();
    let total: f64 = rows.iter().map(|r| r["samples"].as_f64().unwrap()).sum();
    let libc: f64 = rows
        .iter()
        .filter(|r| r["object"].as_str().unwrap().starts_with("libc.so"))
        .map(|r| r["samples"].as_f64().unwrap())
        .sum();
    assert!(total >= 100.0, "too few samples to compare: {v}");
    let ours = libc / total;
    // Sampling noise of our count (binomial, 4 standard deviations) plus 5 points for what
    // differs between the two clocks (perf's own startup, the loader).
    let band = 4.0 * (ours * (1.0 - ours) / total).sqrt() + 0.05;
    assert!(
        (ours - perf_libc).abs() <= band,
        "libc share {ours:.3} vs perf {perf_libc:.3} (band {band:.3}); perf: {perf:?}"
    );
    assert!(
        ours > 0.2,
        "the fixture spends about half its time in libc: {ours}"
    );
}

/// Percent of `function`'s row in a JSON report (0 when absent).
fn json_percent(v: &serde_json::Value, function: &str) -> f64 {
    v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["name"] == function || r["function"] == function)
        .map(|r| r["percent"].as_f64().unwrap())
        .sum()
}

#[test]
fn a_failed_exec_stops_no_thread_and_json_says_what_was_not_sampled() {
    let s = TempDir::new("tree-fexec");
    gcc(&fixture("failed_exec.c"), &s.join("fe"), &["-pthread"]);
    let out = run_in(&s.0, &["--json", "--report", "r.json", "./fe"]);
    assert!(out.status.success(), "{}", show(&out));
    let truth = text(&out.stdout);
    let mut it = truth.split_whitespace();
    assert_eq!(it.next(), Some("truth"), "{truth}");
    let main_truth: f64 = it.nth(1).unwrap().parse().unwrap();
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(s.join("r.json")).unwrap()).unwrap();
    let n = v["total_samples"].as_f64().unwrap();
    assert!(n >= 100.0, "too few samples: {v}");
    let main = json_percent(&v, "main_spin");
    let worker = json_percent(&v, "worker_spin");
    let p = main_truth / 100.0;
    let band = 100.0 * (4.0 * (p * (1.0 - p) / n).sqrt() + 0.05);
    assert!(
        (main - main_truth).abs() <= band && worker > 50.0,
        "main {main:.1}% worker {worker:.1}% vs truth {truth} (band {band:.1})"
    );
    // Every row names its object (the program's functions `fe`; a sample in printf, if one
    // landed there, `libc.so.6`), the top level the CPU time that was not sampled.
    assert!(v["unsampled_seconds"].as_f64().is_some(), "{v}");
    for r in v["rows"].as_array().unwrap() {
        let name = r["function"].as_str().or(r["name"].as_str()).unwrap_or("");
        let object = r["object"].as_str().unwrap_or("");
        if name.ends_with("_spin") || name == "main" || name == "work" {
            assert_eq!(object, "fe", "{v}");
        } else {
            assert!(!object.is_empty(), "a row without its object: {v}");
        }
    }
}

#[test]
fn another_build_of_the_program_is_named_by_build_id() {
    let s = TempDir::new("tree-buildid");
    chain(&s.0);
    let out = run_in(&s.0, &["./a", "2"]);
    assert!(out.status.success(), "{}", show(&out));
    let check = |expect_warning: bool| {
        let out = Command::new(BIN)
            .args(["gmon.out", "./a"])
            .current_dir(&s.0)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", show(&out));
        let err = text(&out.stderr);
        // Warnings are wrapped to 100 columns: read them as one line.
        let one_line = err.split_whitespace().collect::<Vec<_>>().join(" ");
        assert_eq!(
            one_line.contains("the profile was written by a program with build-id "),
            expect_warning,
            "{err}"
        );
        one_line
    };
    check(false);
    // Rebuilt (another build-id): the manifest's build-id is not the executable's.
    gcc(&fixture("chain.c"), &s.join("a"), &["-DREBUILT=1", "-O1"]);
    let err = check(true);
    let ids: Vec<&str> = err
        .split("build-id ")
        .skip(1)
        .map(|t| t.split([',', ':', ' ']).next().unwrap())
        .collect();
    assert!(
        ids.len() == 2 && ids[0] != ids[1] && ids.iter().all(|i| i.len() >= 16),
        "{err}"
    );
}

#[test]
fn short_threads_are_sampled_in_proportion_to_their_cpu_time() {
    // 1000 threads of about 0.4 ms each, under one sampling period: a task clock with a fixed
    // phase never fires in them (they got 2% of the samples against a truth of 80%). Each new
    // thread's clock starts with a random phase, so the sampled task share must match the
    // truth the program measured itself within 10 points plus sampling noise; and the report's
    // task share plus the CPU time it says was not sampled must account for it too, instead
    // of the main thread's share being inflated silently.
    let s = TempDir::new("tree-short");
    gcc(&fixture("short_threads.c"), &s.join("st"), &["-pthread"]);
    let out = run_in(
        &s.0,
        &["--hz", "1000", "--json", "--report", "r.json", "./st"],
    );
    assert!(out.status.success(), "{}", show(&out));
    let truth = text(&out.stdout);
    let task_truth: f64 = truth
        .split_whitespace()
        .nth(2)
        .and_then(|t| t.parse().ok())
        .unwrap_or_else(|| panic!("{truth}"));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(s.join("r.json")).unwrap()).unwrap();
    let sampled = v["total_seconds"].as_f64().unwrap();
    let unsampled = v["unsampled_seconds"]
        .as_f64()
        .unwrap_or_else(|| panic!("no unsampled_seconds: {v}"));
    let all = sampled + unsampled;
    let task = json_percent(&v, "task_spin") / 100.0 * sampled;
    let task_accounted = 100.0 * (task + unsampled) / all;
    let n = v["total_samples"].as_f64().unwrap();
    let p = task_truth / 100.0;
    let band = 100.0 * (4.0 * (p * (1.0 - p) / n.max(1.0)).sqrt()) + 10.0;
    assert!(
        (task_accounted - task_truth).abs() <= band,
        "task sampled + unsampled {task_accounted:.1}% vs truth {truth} (band {band:.1}): {v}"
    );
    let task_sampled = json_percent(&v, "task_spin");
    assert!(
        (task_sampled - task_truth).abs() <= band,
        "task_spin has {task_sampled:.1}% of the samples vs truth {truth} (band {band:.1}): {v}"
    );
}

#[test]
fn profil_after_profil_off_samples_earlier_threads_and_forked_children() {
    let s = TempDir::new("tree-off");
    gcc(&fixture("off_threads.c"), &s.join("off"), &["-pthread"]);
    let so = Command::new(BIN)
        .args(["runtime-path", "--shared"])
        .output()
        .unwrap();
    let so = text(&so.stdout).trim().to_string();
    let out = Command::new(s.join("off"))
        .arg("fork")
        .current_dir(&s.0)
        .env("PROFIL_OFF", "1")
        .env("LD_PRELOAD", &so)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", show(&out));
    let o = text(&out.stdout);
    let num = |key: &str| -> f64 {
        let at = o.find(key).unwrap_or_else(|| panic!("{key} in {o}")) + key.len();
        o[at..].split_whitespace().next().unwrap().parse().unwrap()
    };
    let (w, m, c) = (num("worker "), num("main "), num("child "));
    // Truth 3:1 (1.2 s against 0.4 s of CPU); the rate is the clock tick's (100 Hz): some 40
    // samples for main, so the band is wide.
    assert!(m >= 10.0 && (1.5..6.0).contains(&(w / m)), "{o}");
    assert!(c >= 10.0, "the forked child keeps sampling: {o}");
}

#[test]
fn a_stripped_program_is_named_through_its_debuglink() {
    let s = TempDir::new("tree-debuglink");
    gcc(&fixture("chain.c"), &s.join("full"), &[]);
    let tool = |args: &[&str]| {
        let out = Command::new(args[0])
            .args(&args[1..])
            .current_dir(&s.0)
            .output()
            .unwrap();
        assert!(out.status.success(), "{args:?}: {}", show(&out));
    };
    // What distributions do: the symbols go to a separate file, the program is stripped and
    // names that file (with its CRC) in .gnu_debuglink.
    tool(&["objcopy", "--only-keep-debug", "full", "a.debug"]);
    tool(&["strip", "--strip-all", "-o", "a", "full"]);
    tool(&["objcopy", "--add-gnu-debuglink=a.debug", "a"]);
    let out = run_in(&s.0, &["./a", "3"]);
    assert!(out.status.success(), "{}", show(&out));
    let err = text(&out.stderr);
    assert!(has_cell(&err, "spin"), "{err}");
    assert!(!err.contains("no .symtab"), "{err}");
    // Without the debug file: the code is named by address ranges of the program itself.
    std::fs::rename(s.join("a.debug"), s.join("elsewhere.debug")).unwrap();
    let out = run_in(&s.0, &["./a", "3"]);
    assert!(out.status.success(), "{}", show(&out));
    let err = text(&out.stderr);
    assert!(err.contains("| <a+0x"), "{err}");
    assert!(err.contains("a: no .symtab and no debug file"), "{err}");
    // A debug file of another build under the linked name (its CRC differs) is not used.
    gcc(&fixture("chain.c"), &s.join("other"), &["-O1"]);
    tool(&["objcopy", "--only-keep-debug", "other", "a.debug"]);
    let out = run_in(&s.0, &["./a", "3"]);
    assert!(out.status.success(), "{}", show(&out));
    let err = text(&out.stderr);
    assert!(err.contains("| <a+0x") && !has_cell(&err, "spin"), "{err}");
}

/// How often `"key":` appears in `json` at the top level of its outermost object.
fn top_level_keys(json: &str, key: &str) -> usize {
    let (mut depth, mut in_str, mut esc, mut n) = (0i32, false, false, 0);
    let want = format!("\"{key}\"");
    let b = json.as_bytes();
    for (i, &c) in b.iter().enumerate() {
        if in_str {
            match (esc, c) {
                (true, _) => esc = false,
                (false, b'\\') => esc = true,
                (false, b'"') => in_str = false,
                _ => {}
            }
            continue;
        }
        match c {
            b'"' => {
                if depth == 1 && json[i..].starts_with(&want) {
                    let rest = json[i + want.len()..].trim_start();
                    n += usize::from(rest.starts_with(':'));
                }
                in_str = true;
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth -= 1,
            _ => {}
        }
    }
    n
}

#[test]
fn merged_json_lists_the_processes_once() {
    // Two runs of a libc-heavy program: its report is the one across objects, which lists
    // the processes it sums; `run` lists the whole tree. One list, `run`'s (it has more).
    let s = TempDir::new("tree-merge-json");
    gcc(&fixture("libc_heavy.c"), &s.join("lh"), &[]);
    let out = run_in(
        &s.0,
        &[
            "--merge",
            "--json",
            "--report",
            "r.json",
            "sh",
            "-c",
            "./lh 1; ./lh 1",
        ],
    );
    assert!(out.status.success(), "{}", show(&out));
    let text = std::fs::read_to_string(s.join("r.json")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert!(
        v["rows"].as_array().unwrap().iter().any(|r| r["object"]
            .as_str()
            .is_some_and(|o| o.starts_with("libc.so"))),
        "not the report across objects: {text}"
    );
    assert_eq!(top_level_keys(&text, "processes"), 1, "{text}");
    let procs = v["processes"].as_array().unwrap();
    assert!(procs.len() >= 2, "both lh: {text}");
    assert!(procs.iter().all(|p| p["profile"].is_string()), "{text}");
}

/// A tree of many processes: the others are a short table, the busiest few and "and N
/// more", in lines that fit a terminal (it was one line of 500-800 characters).
#[test]
fn many_other_processes_are_a_short_table() {
    let s = TempDir::new("tree-many");
    chain(&s.0);
    let out = run_in(
        &s.0,
        &[
            "sh",
            "-c",
            "for i in 1 2 3 4 5 6 7 8 9; do ./a 1; done; ./b 3",
        ],
    );
    assert!(out.status.success(), "{}", show(&out));
    let err = text(&out.stderr);
    let (listed, more) = other_processes(&err).unwrap_or_else(|| panic!("{err}"));
    assert_eq!(listed.len(), 5, "{err}");
    assert_eq!(listed.len() + more, 9, "{err}");
    // Every line fits a terminal: the list, and the report after it (issue 24); with --all,
    // every process's report too.
    assert!(err.lines().all(|l| l.chars().count() <= 100), "{err}");
    let all = run_in(
        &s.0,
        &[
            "--all",
            "sh",
            "-c",
            "for i in 1 2 3 4 5 6 7 8 9; do ./a 1; done; ./b 3",
        ],
    );
    assert!(all.status.success(), "{}", show(&all));
    let all = text(&all.stderr);
    assert!(all.matches("Flat profile of ").count() >= 10, "{all}");
    assert!(all.lines().all(|l| l.chars().count() <= 100), "{all}");
}

/// `run sh -c './a; ./b; ./c'` leaves the working directory with the main profile and the
/// folder of the others only (`gmon.out`, `gmon.out.d/`; it had every process's gmon file,
/// manifest and stacks file, 57 files for python through a pyenv shim), and each profile in
/// the folder, and the main one through its side files there, is read with its stacks and
/// manifest.
#[test]
fn a_tree_leaves_the_profile_and_one_folder() {
    let s = TempDir::new("tree-folder");
    let bin = s.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    chain(&bin);
    let work = s.join("work");
    std::fs::create_dir_all(&work).unwrap();
    let out = run_in(&work, &["sh", "-c", "../bin/a 1; ../bin/b 3; ../bin/c 2"]);
    assert!(out.status.success(), "{}", show(&out));
    let mut names: Vec<String> = std::fs::read_dir(&work)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["gmon.out", "gmon.out.d"], "{}", show(&out));
    let kept: Vec<String> = std::fs::read_dir(work.join("gmon.out.d"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(kept.contains(&"gmon.out.objects".to_string()), "{kept:?}");
    let a = listed_pid(&text(&out.stderr), "a");
    let c = listed_pid(&text(&out.stderr), "c");
    reports_spin(&work, &format!("gmon.out.d/gmon.out.{a}"), "../bin/a");
    reports_spin(&work, &format!("gmon.out.d/gmon.out.{c}"), "../bin/c");
    // The main profile's manifest and stacks are found in the folder: the nominal rate's line
    // and the stacks' totals.
    let again = Command::new(BIN)
        .args(["gmon.out", "../bin/b"])
        .current_dir(&work)
        .output()
        .unwrap();
    let report = text(&again.stdout);
    assert!(
        report.contains("CPU time not sampled") && report.contains(" total "),
        "{}",
        show(&again)
    );
    // A second run of one process: the folder holds that run's files only (the first run's
    // profiles of a and c are gone), and a file of the user's there stays.
    std::fs::write(work.join("gmon.out.d/notes.txt"), "mine").unwrap();
    let out = run_in(&work, &["../bin/b", "2"]);
    assert!(out.status.success(), "{}", show(&out));
    let mut kept: Vec<String> = std::fs::read_dir(work.join("gmon.out.d"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    kept.sort();
    assert!(
        kept.iter().all(|k| !k.starts_with(&format!("gmon.out.{a}"))
            && !k.starts_with(&format!("gmon.out.{c}"))),
        "the first run's files are still there: {kept:?}"
    );
    assert!(kept.contains(&"notes.txt".to_string()), "{kept:?}");
}
