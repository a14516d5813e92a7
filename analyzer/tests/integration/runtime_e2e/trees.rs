//! Process trees (issue 14): no profile ever overwrites another process's profile.

use super::*;

/// The profile of process `pid` of `tree` in `dir`: `gmon.out.<pid>`, or `gmon.out` when that
/// process was the root of the tree (or took the plain name over from a wrapper that replaced
/// itself without a sample).
fn tree_file(dir: &TempDir, pid: &str) -> PathBuf {
    let numbered = dir.join(&format!("gmon.out.{pid}"));
    if numbered.exists() {
        numbered
    } else {
        dir.join("gmon.out")
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
        let dir = TempDir::new("tree-range");
        let so = runtime_path(true);
        let r = run(&dir, tree, &["1"], &[("LD_PRELOAD", so.to_str().unwrap())]);
        assert_eq!(r.status, 0, "{r:?}");
        hist_range(&dir.join("gmon.out"))
    })
}

/// Run `cmd args` (preloaded) in `dir`, expecting `expect` lines `tree <pid>` on stdout: each
/// of those processes has a file of its own, with its `tree_work`.
fn check_tree_run(dir: &TempDir, tree: &Path, cmd: &Path, args: &[&str], expect: usize) -> Run {
    for f in gmon_files(dir) {
        let _ = fs::remove_file(dir.join(&f));
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
    let dir = TempDir::new("tree-wrappers");
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
    let dir = TempDir::new("tree-make");
    let tree = gcc(&dir, "tree.c", "tree", &[], false);
    fs::write(
        dir.join("Makefile"),
        "all: a b\na:\n\t@./tree 30\nb:\n\t@./tree 30 && true\n.PHONY: all a b\n",
    )
    .unwrap();
    check_tree_run(&dir, &tree, &make, &["-s"], 2);
}

#[test]
fn a_fork_exec_parent_and_its_children_each_keep_a_profile() {
    let dir = TempDir::new("tree-spawn");
    let tree = gcc(&dir, "tree.c", "tree", &[], false);
    let r = check_tree_run(&dir, &tree, &tree, &["spawn", "30", "3"], 3);
    // The parent is the root: gmon.out is its own, with its parent_work; nothing else is left.
    let (_, rows) = gprof_flat(&tree, &dir.join("gmon.out"));
    assert!(seconds_of(&rows, "parent_work") > 0.0, "{rows:?}");
    assert_eq!(seconds_of(&rows, "tree_work"), 0.0, "{rows:?}");
    assert_eq!(gmon_files(&dir).len(), 4, "{:?} {r:?}", gmon_files(&dir));
    // Children started with an environment of the parent's own making (only LD_PRELOAD):
    // nothing of ours is added to it (issue 23), so they are first processes again; each
    // still keeps a file of its own (the plain name goes to whichever writes first, the
    // others, the parent included, take `gmon.out.<pid>`: a profile written while a process
    // ran is never replaced).
    check_tree_run(&dir, &tree, &tree, &["spawn-env", "30", "2"], 2);
    let files = gmon_files(&dir);
    assert_eq!(files.len(), 3, "{files:?}");
    let parents: Vec<&String> = files
        .iter()
        .filter(|f| seconds_of(&gprof_flat(&tree, &dir.join(f.as_str())).1, "parent_work") > 0.0)
        .collect();
    assert_eq!(parents.len(), 1, "{files:?}");
}

/// The `exe` and `lib` files a manifest (`<profile>.objects`) lists.
fn manifest_files(path: &Path) -> (String, Vec<String>) {
    let text = fs::read_to_string(path).unwrap();
    let field = |kind: &str| -> Vec<String> {
        text.lines()
            .filter_map(|l| l.strip_prefix(kind))
            .filter_map(|l| l.split('\t').next().map(str::to_owned))
            .collect()
    };
    let exe = field("exe\t");
    assert_eq!(exe.len(), 1, "{}: {text}", path.display());
    (exe[0].clone(), field("lib\t"))
}

#[test]
fn a_shell_that_execs_a_program_keeps_its_own_profile_and_side_files() {
    // Issue 23, case 2: bash re-exports the lineage variable it imported at its start, so the
    // program it execs (the same process) took bash's name: bash's profile was overwritten
    // and its per-object file was left behind, listed by no manifest.
    if !Path::new("/bin/bash").exists() {
        eprintln!("bash not installed; skipped");
        return;
    }
    let dir = TempDir::new("tree-bash-exec");
    gcc(&dir, "tree.c", "tree", &[], false);
    let so = runtime_path(true);
    // bash works (takes samples) before it execs.
    let script = "bash -c 'i=0; while [ $i -lt 40000 ]; do i=$((i+1)); done; exec ./tree 30'; true";
    let r = run(
        &dir,
        Path::new("/bin/sh"),
        &["-c", script],
        &[("LD_PRELOAD", so.to_str().unwrap())],
    );
    assert_eq!(r.status, 0, "{r:?}");
    let pid = r
        .stdout
        .trim()
        .strip_prefix("tree ")
        .expect("tree's pid")
        .to_owned();
    // Both images of the process wrote a profile of their own, each with its manifest naming it.
    let ours: Vec<String> = gmon_files(&dir)
        .into_iter()
        .filter(|f| f.starts_with(&format!("gmon.out.{pid}")))
        .collect();
    assert_eq!(ours.len(), 2, "{:?}", gmon_files(&dir));
    let mut exes = Vec::new();
    let mut listed = Vec::new();
    for f in &ours {
        let (exe, libs) = manifest_files(&dir.join(&format!("{f}.objects")));
        assert_eq!(&exe, f);
        listed.extend(libs);
        let text = fs::read_to_string(dir.join(&format!("{f}.objects"))).unwrap();
        exes.push(text.contains("/tree\n") || text.ends_with("/tree"));
    }
    exes.sort();
    assert_eq!(exes, [false, true], "one is bash's, one is tree's");
    // Every per-object file is listed by a manifest: none is left behind.
    for f in fs::read_dir(&dir.0).unwrap() {
        let n = f.unwrap().file_name().to_string_lossy().into_owned();
        if n.starts_with(&format!("gmon.out.{pid}."))
            && !ours.contains(&n)
            && !n.ends_with(".objects")
            && !n.ends_with(".stacks")
        {
            assert!(listed.contains(&n), "{n} is listed by no manifest");
        }
    }
}

/// `PROFIL_TIMER=itimer PROFIL_HZ=5000`: the CPU-time timer fires at most once per kernel tick
/// (CONFIG_HZ: 100 to 1000), so the rate asked for cannot be had; the runtime says so once.
/// At 50 Hz, below every tick rate, it says nothing.
#[test]
fn an_itimer_rate_above_the_tick_is_said_once() {
    let dir = TempDir::new("itimer-tick");
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
    let dir = TempDir::new("manifest-process");
    let exe = gcc(&dir, "split.c", "split", &[], true);
    for timer in ["perf", "itimer"] {
        let r = run(
            &dir,
            &exe,
            &["100"],
            &[("PROFIL_TIMER", timer), ("PROFIL_HZ", "1000")],
        );
        assert_eq!(r.status, 0, "{r:?}");
        let text = fs::read(dir.join("gmon.out.objects")).expect("the manifest");
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
        // The interval timer samples at the kernel tick (about 250 per CPU-second here), by
        // tick accounting: on a loaded machine its count strays from the CPU time by several
        // standard deviations of a count that size, so its band grows with that deviation.
        let hz = f64::from(p.nominal_hz.unwrap().max(1));
        let band = match timer {
            "itimer" => 0.1 * cpu + 4.0 * (cpu * hz).sqrt() / hz,
            _ => 0.1 * cpu,
        };
        assert!(
            unsampled < band,
            "{timer}: {unsampled} of {cpu} s (band {band}): {p:?}"
        );
        assert_eq!(
            (p.threads_without_clock, p.clock_closed),
            (Some(0), Some(false))
        );
    }
}
