//! Signals: the program sees exactly its own dispositions and masks (runtime/src/signals.rs).

use super::*;

/// fixtures/runtime/signals.c without the runtime, and the ways of running it with the runtime:
/// linked into a PIE, a static and a static-pie executable, and preloaded into the plain one.
/// `-z now`: lazy binding's resolver saves the vector registers on the stack, which the small
/// stacks of the `altstack`/`coroutine` modes have no room for, with or without us.
fn signal_programs(dir: &TempDir) -> (PathBuf, Vec<(&'static str, PathBuf, bool)>) {
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
    let dir = TempDir::new(&format!("signals-{}", args.join("-")));
    let (plain, all) = signal_programs(&dir);
    let want = run(&dir, &plain, args, &[]);
    let so = runtime_path(true);
    for (name, exe, preload) in all.iter().filter(|b| builds.contains(&b.0)) {
        for timer in timers {
            let _ = fs::remove_file(dir.join("gmon.out"));
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
                let secs = gmon_seconds(&dir.join("gmon.out"));
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
    let dir = TempDir::new("python");
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
    assert!(dir.join("gmon.out").exists(), "profiled: {got:?}");
}

/// The sampling handler's own stack use beyond the kernel's signal frame (the frame itself is
/// about AT_MINSIGSTKSZ: 3 KiB with AVX-512 state, less without): measured on a pattern-filled
/// alternate stack (the program's SA_ONSTACK handler for SIGTRAP/SIGPROF makes ours run there
/// too), against a trivial handler's. The crate docs promise at most 512 bytes.
#[test]
fn the_sampling_handler_uses_at_most_512_bytes_of_stack_beyond_the_signal_frame() {
    let dir = TempDir::new("stack-use");
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
    let dir = TempDir::new("signals-rs");
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
                let _ = fs::remove_file(dir.join("gmon.out"));
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
                assert!(gmon_seconds(&dir.join("gmon.out")) > 0.0, "{mode} {timer}");
            }
        }
    }
}
