//! Threads created with `pthread_create` under the shared object, which wraps it to give each
//! new thread a sampling clock of its own (runtime/src/threads.rs): the program sees exactly
//! what it sees without the runtime, nothing leaks, and long threads keep their split.

use super::*;

/// fixtures/runtime/threads.c `behave`: return values, errno, attributes, masks, descriptors,
/// join values, `pthread_exit`, cancellation, the program's own thread-specific data,
/// nested and detached threads, 400 threads at once, a fork from a thread — the same output
/// and status without the runtime, with the object linked in and with the shared object
/// preloaded (perf clock, and the CPU-time timer, where the wrapper only forwards).
#[test]
fn threads_behave_exactly_as_without_the_runtime() {
    let dir = TempDir::new("threads-behave");
    let plain = gcc(&dir, "threads.c", "threads", &["-pthread"], false);
    let linked = gcc(&dir, "threads.c", "threads-linked", &["-pthread"], true);
    let want = run(&dir, &plain, &["behave"], &[]);
    assert_eq!(want.status, 0, "{want:?}");
    assert!(want.stdout.contains("many: 0 failed, 400 ran"), "{want:?}");
    let so = runtime_path(true);
    let so = so.to_str().unwrap();
    for (exe, env) in [
        (&linked, &[("PROFIL_HZ", "1000")][..]),
        (&plain, &[("PROFIL_HZ", "1000"), ("LD_PRELOAD", so)]),
        (&plain, &[("PROFIL_HZ", "10000"), ("LD_PRELOAD", so)]),
        (&plain, &[("PROFIL_TIMER", "itimer"), ("LD_PRELOAD", so)]),
    ] {
        let got = run(&dir, exe, &["behave"], env);
        assert_eq!(
            (got.status, got.stdout.as_str()),
            (want.status, want.stdout.as_str()),
            "{env:?}: {got:?}"
        );
        assert!(
            !got.stderr.contains("profil-rt:") || env.contains(&("PROFIL_TIMER", "itimer")),
            "{env:?}: {got:?}"
        );
        assert!(dir.join("gmon.out").is_file(), "{env:?}: no profile");
        let _ = fs::remove_file(dir.join("gmon.out"));
    }
}

/// Each thread's own clock is closed when the thread ends, also when it ends with
/// `pthread_exit`: 3000 threads leave no descriptor behind.
#[test]
fn thread_clocks_leave_no_descriptor_behind() {
    let dir = TempDir::new("threads-churn");
    let plain = gcc(&dir, "threads.c", "threads", &["-pthread"], false);
    let so = runtime_path(true);
    let got = run(
        &dir,
        &plain,
        &["churn", "3000"],
        &[("PROFIL_HZ", "1000"), ("LD_PRELOAD", so.to_str().unwrap())],
    );
    assert_eq!(got.status, 0, "{got:?}");
    assert_eq!(got.stdout, "descriptors gained: 0\n", "{got:?}");
}

/// Two long threads started by pthread_create (each with a clock of its own, random first
/// period) get the samples their CPU time calls for: the sampled split matches the split of
/// the threads' CPU time as each measured it (`CLOCK_THREAD_CPUTIME_ID`; about 2:1 by work,
/// but a shared machine can slow one thread more than the other) within 10%, and the total
/// stays the process's user time.
#[test]
fn two_preloaded_threads_keep_their_split() {
    let dir = TempDir::new("threads-split");
    let plain = gcc(&dir, "threads.c", "threads", &["-pthread"], false);
    let so = runtime_path(true);
    let r = run(
        &dir,
        &plain,
        &["split", "100"],
        &[("PROFIL_HZ", "1000"), ("LD_PRELOAD", so.to_str().unwrap())],
    );
    assert_eq!(r.status, 0, "{r:?}");
    let truth: Vec<f64> = r
        .stdout
        .split_whitespace()
        .filter_map(|w| w.parse().ok())
        .collect();
    assert_eq!(truth.len(), 2, "{r:?}");
    let (_, rows) = gprof_flat(&plain, &dir.join("gmon.out"));
    let two = seconds_of(&rows, "thread_two");
    let one = seconds_of(&rows, "thread_one");
    let (ratio, want) = (two / one, truth[0] / truth[1]);
    assert!(
        (ratio / want - 1.0).abs() <= 0.1,
        "thread_two:thread_one = {two}:{one} = {ratio:.3}, their CPU time {want:.3}: {r:?}"
    );
    let total: f64 = rows.iter().map(|(_, s)| s).sum();
    assert!(
        (total - r.user_s).abs() <= 0.05 * r.user_s,
        "total {total} vs user {}",
        r.user_s
    );
}

/// A child forked by a thread that has a clock of its own is a copy of that thread: the
/// parent's thread clock does not follow it, so the child must be sampled by its own new
/// clock (not have those samples dropped as if its thread clock still ran).
#[test]
fn a_child_forked_by_a_thread_is_sampled() {
    let dir = TempDir::new("threads-forkwork");
    let plain = gcc(&dir, "threads.c", "threads", &["-pthread"], false);
    let so = runtime_path(true);
    let r = run(
        &dir,
        &plain,
        &["forkwork", "30"],
        &[("PROFIL_HZ", "1000"), ("LD_PRELOAD", so.to_str().unwrap())],
    );
    assert_eq!(r.status, 0, "{r:?}");
    let pid = r
        .stdout
        .strip_prefix("child ")
        .map(str::trim)
        .unwrap_or_else(|| panic!("{r:?}"));
    let gmon = dir.join(&format!("gmon.out.{pid}"));
    assert!(gmon.is_file(), "no profile from the child: {r:?}");
    let (_, rows) = gprof_flat(&plain, &gmon);
    let child = seconds_of(&rows, "child_work");
    let total: f64 = rows.iter().map(|(_, s)| s).sum();
    assert!(child > 0.0 && child >= 0.8 * total, "{rows:?}");
}
