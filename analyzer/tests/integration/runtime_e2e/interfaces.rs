//! The programming interfaces (runtime/include/profil_rt.h): fixtures/runtime/apis.c checks
//! each sentence of their contract from inside the program and prints one line per check.

use super::*;

fn apis(dir: &TempDir) -> PathBuf {
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
    let dir = TempDir::new("api-profil");
    let exe = apis(&dir);
    let r = run(&dir, &exe, &["profil"], &[("PROFIL_HZ", "1000")]);
    check_api_lines(&r, 10);
}

#[test]
fn profil_interface_works_with_the_automatic_profile_off() {
    let dir = TempDir::new("api-profil-off");
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
    let dir = TempDir::new("api-extended");
    let exe = apis(&dir);
    let r = run(&dir, &exe, &["extended"], &[("PROFIL_HZ", "1000")]);
    check_api_lines(&r, 6);
}

#[test]
fn pcsample_interface_follows_its_contract() {
    let dir = TempDir::new("api-pcsample");
    let exe = apis(&dir);
    let r = run(&dir, &exe, &["pcsample"], &[("PROFIL_HZ", "1000")]);
    check_api_lines(&r, 7);
}

// The seeds' man pages, sentence by sentence (issue 15): each mode of apis.c prints one line
// per check; the man-page sentence each implements is quoted there.

fn check_api_mode(mode: &[&str], env: &[(&str, &str)], expected: usize) {
    let dir = TempDir::new(&format!("api-{}", mode[0]));
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

/// pcsample(2) fills its array "after nsamples / HZ seconds of process virtual time", and
/// Tru64's profil counts "the sum of the samples for all of the threads" (issue 23, case 7):
/// with 16 busy threads the count is the rate `profil_rt_hz()` says (HZ with perf; with the
/// CPU-time timer, which a loaded machine starves, what it achieved) times the sum of the
/// threads' own CPU clocks. The
/// process CPU clock read on one thread lags the one read on another, and the thinning took
/// that for a restart: 5,497 samples kept for 802 (perf), 454 for 802 (the CPU-time timer).
#[test]
fn seed_counts_under_threads_are_hz_times_the_threads_own_cpu_time() {
    for timer in ["perf", "itimer"] {
        let dir = TempDir::new(&format!("api-threads-{timer}"));
        let exe = apis(&dir);
        let r = run(
            &dir,
            &exe,
            &["threads", "16"],
            &[("PROFIL_HZ", "1000"), ("PROFIL_TIMER", timer)],
        );
        check_api_lines(&r, 3);
    }
}

/// With the automatic profile off, every thread that exists before the first call gets a
/// clock, however many there are (issue 23, case 7): the 70th and later threads used to get
/// none (a table of 64), and a thread beyond it that alone burnt a CPU-second got 0 samples.
#[test]
fn seed_every_thread_that_exists_before_the_first_call_is_sampled() {
    check_api_mode(&["early-threads", "70"], &[("PROFIL_OFF", "1")], 1);
    check_api_mode(&["early-threads", "200"], &[("PROFIL_OFF", "1")], 1);
}

/// A program that runs `ITIMER_PROF` itself and makes its first `pcsample` call from its own
/// `SIGPROF` handler gets `EBUSY` where our clock would be the CPU-time timer, and keeps its
/// ticks (issue 23, case 7): with the automatic profile off the call used to return 0, start
/// our timer, and the program's handler got no tick after it.
#[test]
fn seed_a_program_running_itimer_prof_gets_ebusy_and_keeps_its_ticks() {
    check_api_mode(
        &["own-itimer"],
        &[("PROFIL_TIMER", "itimer"), ("PROFIL_OFF", "1")],
        2,
    );
    check_api_mode(&["own-itimer"], &[("PROFIL_TIMER", "itimer")], 2);
}

/// Valid calls made at once from 16 threads all succeed (issue 23, case 7): with 8 slots of
/// settings they got `EAGAIN` for 47% of them (149,409 of 320,000).
#[test]
fn seed_valid_concurrent_calls_all_succeed() {
    check_api_mode(&["concurrent", "16"], &[("PROFIL_HZ", "1000")], 1);
}

/// `profil_rt_hz()` says the rate achieved (issue 23, case 7): asked for 1000 per CPU-second,
/// the CPU-time timer gives one per kernel tick (250 here), and it used to say 1000.
#[test]
fn seed_rate_said_is_the_rate_received() {
    for timer in ["perf", "itimer"] {
        let dir = TempDir::new(&format!("api-rate-{timer}"));
        let exe = apis(&dir);
        let r = run(
            &dir,
            &exe,
            &["rate-achieved"],
            &[("PROFIL_HZ", "1000"), ("PROFIL_TIMER", timer)],
        );
        check_api_lines(&r, 1);
    }
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
    let dir = TempDir::new("api-moncontrol");
    let exe = apis(&dir);
    let r = run(&dir, &exe, &["moncontrol"], &[("PROFIL_HZ", "1000")]);
    assert_eq!(r.status, 0, "{r:?}");
    let (_, rows) = gprof_flat(&exe, &dir.join("gmon.out"));
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
    let dir = TempDir::new("own-sigprof");
    let exe = procs(&dir);
    for timer in ["itimer", "perf"] {
        let _ = fs::remove_file(dir.join("gmon.out"));
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
        gprof_flat(&exe, &dir.join("gmon.out"));
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
    let dir = TempDir::new("safe-api");
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
