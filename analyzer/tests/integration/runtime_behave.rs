//! The runtime's first promise: the profiled program behaves exactly as without it (issue 13:
//! descriptors, exit paths, output path and security). Each test runs a mode of
//! fixtures/runtime/behave.c three ways — built without the runtime, with the object linked in,
//! and built without it but with the shared object in `LD_PRELOAD` — and compares what the
//! program did (exit status, stdout, stderr, the files it wrote). Where the runtime is present
//! the profile must be whole (GNU `gprof` reads it) or absent with one warning line; a
//! temporary is never left behind.
//!
//! Nothing here depends on CPU speed or a sample count: the checks are on the program's
//! behaviour and on the profile being readable, never on how many samples it holds.

use crate::support::{is_object_file, runtime_path, TempDir};
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/runtime")
}

/// How the program gets the runtime.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Way {
    Without,
    Linked,
    Preloaded,
}

const WAYS: [Way; 3] = [Way::Without, Way::Linked, Way::Preloaded];

/// behave.c built without the runtime and with the object linked in.
struct Programs {
    plain: PathBuf,
    linked: PathBuf,
}

fn build(dir: &TempDir) -> Programs {
    let mk = |name: &str, with: bool| {
        let exe = dir.join(name);
        let mut cmd = Command::new("gcc");
        cmd.args(["-O2", "-pthread", "-o"])
            .arg(&exe)
            .arg(fixtures().join("behave.c"));
        if with {
            cmd.arg(runtime_path(false));
        }
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        exe
    };
    Programs {
        plain: mk("behave-plain", false),
        linked: mk("behave-linked", true),
    }
}

impl Programs {
    fn exe(&self, way: Way) -> &Path {
        if way == Way::Linked {
            &self.linked
        } else {
            &self.plain
        }
    }
}

/// What a run did.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Outcome {
    /// Exit code, or 128 + signal.
    status: i32,
    stdout: String,
    stderr: String,
}

/// How to set up a run.
#[derive(Default, Clone)]
struct Setup<'a> {
    env: Vec<(&'a str, String)>,
    close_stdin: bool,
    /// stdout is a pipe whose reader has gone (EPIPE/SIGPIPE on the first write).
    broken_stdout: bool,
    /// stderr is a pipe whose reader has gone.
    broken_stderr: bool,
    /// stderr is a pipe the test reads (not a file: not subject to the program's RLIMIT_FSIZE).
    stderr_pipe: bool,
    /// Run as uid/gid 65534 (nobody).
    as_nobody: bool,
    /// Run the program under this command (`valgrind -q`).
    under: Vec<&'a str>,
}

static ONE_CHILD_AT_A_TIME: Mutex<()> = Mutex::new(());

/// Run `behave args` in `cwd` the given way.
fn run(p: &Programs, way: Way, cwd: &Path, args: &[&str], setup: &Setup<'_>) -> Outcome {
    let _one = ONE_CHILD_AT_A_TIME
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    let out_path = cwd.with_extension("stdout");
    let err_path = cwd.with_extension("stderr");
    let mut cmd = match setup.under.split_first() {
        Some((tool, tool_args)) => {
            let mut c = Command::new(tool);
            c.args(tool_args);
            if way == Way::Preloaded {
                // Preloaded into the program only, not into the tool (which would profile
                // itself): the tool runs env, which runs the program (--trace-children=yes).
                c.arg("/usr/bin/env")
                    .arg(format!("LD_PRELOAD={}", runtime_path(true).display()));
            }
            c.arg(p.exe(way));
            c
        }
        None => Command::new(p.exe(way)),
    };
    cmd.args(args).current_dir(cwd);
    for (k, _) in std::env::vars_os() {
        let k = k.to_string_lossy().into_owned();
        if k.starts_with("PROFIL_") || k == "GMON_OUT_PREFIX" || k == "LD_PRELOAD" {
            cmd.env_remove(k);
        }
    }
    for (k, v) in &setup.env {
        cmd.env(k, v);
    }
    if way == Way::Preloaded && setup.under.is_empty() {
        let mut so = runtime_path(true);
        if setup.as_nobody {
            // Another user cannot read root's cache: a copy beside the programs.
            let copy = cwd.parent().unwrap().join("libprofil_rt.so");
            fs::copy(&so, &copy).unwrap();
            fs::set_permissions(&copy, fs::Permissions::from_mode(0o755)).unwrap();
            so = copy;
        }
        cmd.env("LD_PRELOAD", so);
    }
    let pipe = || {
        let mut fds = [0; 2];
        // SAFETY: pipe2 fills two descriptors, which we then own.
        assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
        // SAFETY: both are fresh descriptors owned by nothing else.
        let (r, w) = unsafe {
            use std::os::fd::FromRawFd;
            (
                std::os::fd::OwnedFd::from_raw_fd(fds[0]),
                std::os::fd::OwnedFd::from_raw_fd(fds[1]),
            )
        };
        drop(r);
        Stdio::from(w)
    };
    cmd.stdin(Stdio::null());
    cmd.stdout(if setup.broken_stdout {
        pipe()
    } else {
        Stdio::from(fs::File::create(&out_path).unwrap())
    });
    cmd.stderr(if setup.broken_stderr {
        pipe()
    } else if setup.stderr_pipe {
        Stdio::piped()
    } else {
        Stdio::from(fs::File::create(&err_path).unwrap())
    });
    let (close_stdin, as_nobody) = (setup.close_stdin, setup.as_nobody);
    // SAFETY: only async-signal-safe calls between fork and exec (umask, sigaction, setrlimit,
    // close, setgroups/setgid/setuid) on fully initialised structs.
    unsafe {
        cmd.pre_exec(move || {
            libc::umask(0o022);
            for sig in 1..32 {
                if sig != libc::SIGKILL && sig != libc::SIGSTOP {
                    let mut sa: libc::sigaction = std::mem::zeroed();
                    sa.sa_sigaction = libc::SIG_DFL;
                    libc::sigaction(sig, &sa, std::ptr::null_mut());
                }
            }
            let no_core = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            libc::setrlimit(libc::RLIMIT_CORE, &no_core);
            if close_stdin {
                libc::close(0);
            }
            if as_nobody
                && (libc::setgroups(0, std::ptr::null()) != 0
                    || libc::setgid(65534) != 0
                    || libc::setuid(65534) != 0)
            {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let output = cmd.output().unwrap();
    let st = output.status;
    let status = st.code().unwrap_or_else(|| 128 + st.signal().unwrap_or(0));
    let read = |p: &Path| fs::read_to_string(p).unwrap_or_default();
    Outcome {
        status,
        stdout: if setup.broken_stdout {
            String::new()
        } else {
            read(&out_path)
        },
        stderr: if setup.broken_stderr {
            String::new()
        } else if setup.stderr_pipe {
            String::from_utf8_lossy(&output.stderr).into_owned()
        } else {
            read(&err_path)
        },
    }
}

/// The names in `dir`, sorted (hidden ones included).
fn files(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !is_object_file(n))
        .collect();
    v.sort();
    v
}

/// `gmon` is a whole profile of `exe`: GNU gprof reads it.
fn assert_whole_profile(exe: &Path, gmon: &Path) {
    let out = Command::new("gprof")
        .args(["-b", "-p"])
        .arg(exe)
        .arg(gmon)
        .output()
        .expect("run gprof");
    assert!(
        out.status.success() && out.stderr.is_empty(),
        "gprof {}: {}",
        gmon.display(),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Run `args` every way in a directory of its own; returns each way's outcome and directory.
fn each_way(
    p: &Programs,
    dir: &TempDir,
    args: &[&str],
    setup: &Setup<'_>,
) -> Vec<(Way, Outcome, PathBuf)> {
    WAYS.iter()
        .map(|&way| {
            let cwd = dir.sub(&format!("{way:?}"));
            let o = run(p, way, &cwd, args, setup);
            (way, o, cwd)
        })
        .collect()
}

/// Every way ended exactly as the program without the runtime did, and wrote a whole
/// `gmon.out` (and nothing else of ours) where the runtime was present.
fn assert_same_and_profiled(p: &Programs, runs: &[(Way, Outcome, PathBuf)]) {
    assert_same_and_profiled_saying(p, runs, "");
}

/// The warning when the program closed the clock's descriptor.
const CLOCK_CLOSED: &str =
    "profil-rt: the program closed the sampling clock's descriptor; the samples after that are missing\n";

/// [`assert_same_and_profiled`], with `said` on stderr where the runtime was present.
fn assert_same_and_profiled_saying(p: &Programs, runs: &[(Way, Outcome, PathBuf)], said: &str) {
    let (_, base, base_dir) = &runs[0];
    let base_files = files(base_dir);
    for (way, o, cwd) in &runs[1..] {
        let expected = Outcome {
            stderr: format!("{}{said}", base.stderr),
            ..base.clone()
        };
        assert_eq!(
            o, &expected,
            "{way:?} differs from the program without the runtime"
        );
        let mut expected = base_files.clone();
        expected.push("gmon.out".into());
        expected.sort();
        assert_eq!(files(cwd), expected, "{way:?}");
        assert_whole_profile(p.exe(*way), &cwd.join("gmon.out"));
    }
}

// ---------------------------------------------------------------------------------------------
// descriptors

#[test]
fn the_first_open_returns_the_same_descriptor_as_without_the_runtime() {
    let dir = TempDir::new("firstfd");
    let p = build(&dir);
    let runs = each_way(&p, &dir, &["firstfd", "20"], &Setup::default());
    assert_eq!(runs[0].1.stdout, "first fd 3\n");
    assert_same_and_profiled(&p, &runs);
}

#[test]
fn a_closed_stdin_stays_closed() {
    let dir = TempDir::new("stdin");
    let p = build(&dir);
    let setup = Setup {
        close_stdin: true,
        ..Setup::default()
    };
    let runs = each_way(&p, &dir, &["stdin", "20"], &setup);
    assert_eq!(runs[0].1.stdout, format!("read -1 errno {}\n", libc::EBADF));
    assert_same_and_profiled(&p, &runs);
}

#[test]
fn closefrom_then_fopen_keeps_the_programs_file() {
    let dir = TempDir::new("closefrom");
    let p = build(&dir);
    let runs = each_way(&p, &dir, &["closefrom", "50", "out.txt"], &Setup::default());
    for (way, _, cwd) in &runs {
        assert_eq!(
            fs::read_to_string(cwd.join("out.txt")).unwrap(),
            "written at exit by stdio\n",
            "{way:?}"
        );
    }
    // close_range closed the clock too: the runtime noticed, left the number alone, and says so.
    assert_same_and_profiled_saying(&p, &runs, CLOCK_CLOSED);
}

#[test]
fn forked_workers_keep_the_descriptor_they_share() {
    let dir = TempDir::new("prefork");
    let p = build(&dir);
    let runs = each_way(&p, &dir, &["prefork", "50", "out.txt"], &Setup::default());
    for (way, o, cwd) in &runs {
        assert_eq!(
            fs::read_to_string(cwd.join("out.txt")).unwrap(),
            "worker 0\nworker 1\nworker 2\nparent\n",
            "{way:?}: {o:?}"
        );
    }
    let (_, base, _) = &runs[0];
    for (way, o, cwd) in &runs[1..] {
        // The parent's clock went with close_range (said once, by the parent); each worker has
        // a clock of its own.
        let expected = Outcome {
            stderr: CLOCK_CLOSED.into(),
            ..base.clone()
        };
        assert_eq!(o, &expected, "{way:?}");
        // The parent's profile, and one per worker that took a sample (`gmon.out.<pid>`;
        // a worker that only writes its line usually takes none, and then writes nothing:
        // issue 14), all whole.
        let gmons: Vec<String> = files(cwd)
            .into_iter()
            .filter(|n| n.starts_with("gmon.out"))
            .collect();
        assert!(
            gmons.contains(&"gmon.out".to_owned()) && (1..=4).contains(&gmons.len()),
            "{way:?}: {gmons:?}"
        );
        for g in gmons {
            assert_whole_profile(p.exe(*way), &cwd.join(g));
        }
    }
}

#[test]
fn a_descriptor_dup2ed_to_3_reaches_the_exec_ed_program() {
    let dir = TempDir::new("dup2exec");
    let p = build(&dir);
    let runs = each_way(&p, &dir, &["dup2exec", "50", "out.txt"], &Setup::default());
    for (way, o, cwd) in &runs {
        assert_eq!(
            fs::read_to_string(cwd.join("out.txt")).unwrap(),
            "x\n",
            "{way:?}: {o:?}"
        );
    }
    // The profile of the image before the exec is written first.
    assert_same_and_profiled(&p, &runs);
}

// ---------------------------------------------------------------------------------------------
// exit paths

#[test]
fn a_file_size_limit_of_0_is_one_warning_not_sigxfsz() {
    let dir = TempDir::new("fsize");
    let p = build(&dir);
    let setup = Setup {
        stderr_pipe: true,
        ..Setup::default()
    };
    let runs = each_way(&p, &dir, &["fsize", "20"], &setup);
    let (_, base, base_dir) = &runs[0];
    assert_eq!(base.status, 0);
    for (way, o, cwd) in &runs[1..] {
        assert_eq!((o.status, &o.stdout), (0, &base.stdout), "{way:?}: {o:?}");
        assert_eq!(o.stderr.lines().count(), 1, "{way:?}: {o:?}");
        assert!(
            o.stderr.starts_with("profil-rt: cannot write gmon.out")
                && o.stderr.contains("File too large"),
            "{way:?}: {o:?}"
        );
        assert_eq!(files(cwd), files(base_dir), "{way:?}: nothing left behind");
    }
    // With stderr a file, the limit applies to the warning too: nothing is written at all.
    let runs = each_way(&p, &dir, &["fsize", "20"], &Setup::default());
    for (way, o, cwd) in &runs {
        assert_eq!(o, &runs[0].1, "{way:?}");
        assert_eq!(files(cwd), files(&runs[0].2), "{way:?}");
    }
}

#[test]
fn a_profile_whose_side_files_cannot_be_written_leaves_nothing_half() {
    // Issue 23, case 6: with no room for libc's per-object file (RLIMIT_FSIZE here; a full disk
    // fails the same way), the histogram and stacks files used to stay without the manifest.
    // 512 KiB: room for the executable's histogram (its text holds the linked runtime, some
    // 160 KiB with the CFI unwinder), none for libc's (1.4 MiB of text).
    let dir = TempDir::new("fsizeset");
    let p = build(&dir);
    let setup = Setup {
        stderr_pipe: true,
        ..Setup::default()
    };
    let all = |d: &Path| -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    };
    let runs = each_way(&p, &dir, &["fsize-libc", "20", "512"], &setup);
    let (_, base, base_dir) = &runs[0];
    assert_eq!((base.status, base.stdout.as_str()), (0, "done\n"));
    for (way, o, cwd) in &runs[1..] {
        assert_eq!((o.status, &o.stdout), (0, &base.stdout), "{way:?}: {o:?}");
        assert!(
            o.stderr.lines().all(|l| l.starts_with("profil-rt: "))
                && o.stderr.contains("File too large")
                && o.stderr.contains("no profile written: gmon.out"),
            "{way:?}: {o:?}"
        );
        assert_eq!(
            all(cwd),
            all(base_dir),
            "{way:?}: a part of the set was left"
        );
    }
}

#[test]
fn a_seccomp_sandboxed_program_keeps_its_output_and_status() {
    let dir = TempDir::new("seccomp");
    let p = build(&dir);
    for mode in ["seccomp", "seccomp-raw"] {
        let runs = each_way(&p, &dir, &[mode, "50"], &Setup::default());
        assert_eq!(
            (runs[0].1.status, runs[0].1.stdout.as_str()),
            (0, "before the filter\nafter the filter\n"),
            "{mode}"
        );
        // The profile (the samples up to the filter) is written before the filter goes in,
        // not before the query (which installs nothing): the work in between is in it.
        assert_same_and_profiled(&p, &runs);
        for (way, _, cwd) in &runs[1..] {
            let rows = gprof_seconds(p.exe(*way), &cwd.join("gmon.out"));
            assert!(
                rows.iter().any(|(n, s)| n == "burn" && *s > 0.0),
                "{mode} {way:?}: {rows:?}"
            );
        }
    }
    // The same in a static program (the object's prctl and syscall replace static libc's).
    let exe = dir.join("behave-static");
    let out = Command::new("gcc")
        .args(["-O2", "-pthread", "-static", "-o"])
        .arg(&exe)
        .arg(fixtures().join("behave.c"))
        .arg(runtime_path(false))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let statics = Programs {
        plain: p.plain.clone(),
        linked: exe,
    };
    for mode in ["seccomp", "seccomp-raw"] {
        let cwd = dir.sub("static");
        let o = run(
            &statics,
            Way::Linked,
            &cwd,
            &[mode, "50"],
            &Setup::default(),
        );
        assert_eq!(
            (o.status, o.stdout.as_str(), o.stderr.as_str()),
            (0, "before the filter\nafter the filter\n", ""),
            "static {mode}"
        );
        assert_eq!(files(&cwd), ["gmon.out"]);
        assert_whole_profile(&statics.linked, &cwd.join("gmon.out"));
    }
}

#[test]
fn warnings_on_a_broken_stderr_never_kill_the_program() {
    let dir = TempDir::new("brokenstderr");
    let p = build(&dir);
    let setup = Setup {
        env: vec![("PROFIL_HZ", "bogus".into())],
        broken_stderr: true,
        ..Setup::default()
    };
    let runs = each_way(&p, &dir, &["quiet", "20"], &setup);
    assert_eq!(runs[0].1.status, 0);
    assert_same_and_profiled(&p, &runs);
    // And a write failure at exit on a broken stderr.
    let setup = Setup {
        broken_stderr: true,
        ..Setup::default()
    };
    let runs = each_way(&p, &dir, &["fsize", "20"], &setup);
    for (way, o, _) in &runs {
        assert_eq!(o.status, 0, "{way:?}: {o:?}");
    }
}

#[test]
fn a_program_piped_into_head_keeps_its_sigpipe_death_and_its_profile() {
    let dir = TempDir::new("sigpipe");
    let p = build(&dir);
    let setup = Setup {
        broken_stdout: true,
        ..Setup::default()
    };
    let runs = each_way(&p, &dir, &["sigpipe", "20"], &setup);
    assert_eq!(runs[0].1.status, 128 + libc::SIGPIPE);
    assert_same_and_profiled(&p, &runs);
}

#[test]
fn terminating_signals_without_a_core_keep_the_profile_and_the_status() {
    let dir = TempDir::new("raise");
    let p = build(&dir);
    for sig in [
        libc::SIGPIPE,
        libc::SIGALRM,
        libc::SIGUSR1,
        libc::SIGUSR2,
        libc::SIGVTALRM,
        libc::SIGXCPU,
        libc::SIGIO,
        libc::SIGPWR,
        libc::SIGSTKFLT,
    ] {
        let s = sig.to_string();
        let runs = each_way(&p, &dir, &["raise", "20", &s], &Setup::default());
        assert_eq!(runs[0].1.status, 128 + sig);
        assert_same_and_profiled(&p, &runs);
    }
}

#[test]
fn exit_from_a_small_thread_stack_or_an_alternate_signal_stack_keeps_status_and_profile() {
    // Issue 23, case 1: the profile used to be written on the exiting thread's own stack (more
    // than 40 KiB of it), so exit() from a 16–40 KiB thread stack or from a handler on a
    // SIGSTKSZ alternate stack died of SIGSEGV (139) and lost the profile.
    let dir = TempDir::new("smallstack");
    let p = build(&dir);
    let cases: [(&[&str], i32); 4] = [
        (&["small-stack", "20", "16", "1"], 3),
        (&["small-stack", "20", "40", "1"], 3),
        (&["small-stack", "20", "16", "4"], 3),
        (&["altstack", "20"], 4),
    ];
    for stacks in ["1", "0"] {
        let setup = Setup {
            env: vec![("PROFIL_STACKS", stacks.into())],
            ..Setup::default()
        };
        for (args, status) in cases {
            let runs = each_way(&p, &dir, args, &setup);
            assert_eq!(runs[0].1.status, status, "{args:?}: {:?}", runs[0].1);
            assert_same_and_profiled(&p, &runs);
            for (way, _, cwd) in &runs[1..] {
                let has_stacks = cwd.join("gmon.out.stacks").exists();
                assert_eq!(has_stacks, stacks == "1", "{args:?} {way:?}");
            }
        }
    }
}

#[test]
fn real_time_signals_at_their_default_action_keep_the_profile_and_the_status() {
    // Issue 23, case 5: real-time signals terminate by default too; a child killed by
    // SIGRTMIN+3 used to write no profile.
    let dir = TempDir::new("raisert");
    let p = build(&dir);
    for sig in [libc::SIGRTMIN(), libc::SIGRTMIN() + 3, libc::SIGRTMAX()] {
        let s = sig.to_string();
        let runs = each_way(&p, &dir, &["raise", "20", &s], &Setup::default());
        assert_eq!(runs[0].1.status, 128 + sig);
        assert_same_and_profiled(&p, &runs);
    }
}

#[test]
fn the_environment_a_program_passes_on_holds_nothing_of_ours() {
    // Issue 23, case 3: an explicitly empty environment, and one the program removed
    // LD_PRELOAD from, reached the next program with PROFIL_RT_LINEAGE added (and with the
    // object linked in, every environment did).
    let dir = TempDir::new("execenv");
    let p = build(&dir);
    for args in [&["exec-env", "20", "empty"][..], &["exec-env", "20"]] {
        let runs = each_way(&p, &dir, args, &Setup::default());
        assert_eq!(runs[0].1.status, 0, "{args:?}: {:?}", runs[0].1);
        if args.len() == 3 {
            assert_eq!(runs[0].1.stdout, "", "{args:?}");
        }
        assert_same_and_profiled(&p, &runs);
    }
}

#[test]
fn under_valgrind_the_program_runs_as_without_us_with_one_line_saying_so() {
    // Issue 23, case 4: valgrind died of the perf clock's SIGTRAP ("Valgrind received a signal
    // 5"), exit 1; with the itimer, memcheck reported the stack walker's reads.
    if Command::new("valgrind").arg("--version").output().is_err() {
        eprintln!("valgrind not installed; skipped");
        return;
    }
    let dir = TempDir::new("valgrind");
    let p = build(&dir);
    for timer in ["perf", "itimer"] {
        let setup = Setup {
            env: vec![("PROFIL_TIMER", timer.into())],
            under: vec![
                "valgrind",
                "-q",
                "--error-exitcode=99",
                "--trace-children=yes",
            ],
            ..Setup::default()
        };
        let runs = each_way(&p, &dir, &["quiet", "5"], &setup);
        let (_, base, base_dir) = &runs[0];
        assert_eq!(
            (base.status, base.stdout.as_str()),
            (0, "done\n"),
            "{base:?}"
        );
        for (way, o, cwd) in &runs[1..] {
            let expected = Outcome {
                stderr: format!(
                    "{}profil-rt: running under valgrind, which keeps the signals to itself; not profiling\n",
                    base.stderr
                ),
                ..base.clone()
            };
            assert_eq!(o, &expected, "{timer} {way:?}");
            assert_eq!(files(cwd), files(base_dir), "{timer} {way:?}");
        }
    }
}

/// The mt-* modes: a second thread acts the moment a file is created in the working
/// directory, that is, while the runtime writes the profile at exit (without the runtime
/// nothing is created and it never acts). The write must finish whole, nothing be left
/// behind, and the exit that was under way end the process.
///
/// The second thread checks that the file is still there, then acts: on a loaded machine it
/// can be preempted between the two, and act only after the write is over, when the program's
/// own exit is already flushing stdio (for `handler-exit`, a nested `exit(5)` then flushes the
/// same buffer again, as it would without us had the signal come at that moment). Such a run
/// shows nothing about the runtime, so the check is repeated, at most three times: a runtime
/// that mishandles the write fails every time.
fn check_during_the_write(mode: &str, expected_status: &[i32]) {
    let mut failures = Vec::new();
    for _attempt in 0..3 {
        match during_the_write(mode, expected_status) {
            Ok(()) => return,
            Err(e) => failures.push(e),
        }
    }
    panic!("{mode}: every attempt failed:\n{}", failures.join("\n"));
}

fn during_the_write(mode: &str, expected_status: &[i32]) -> Result<(), String> {
    let dir = TempDir::new(mode);
    let p = build(&dir);
    let runs = each_way(&p, &dir, &[mode, "50"], &Setup::default());
    assert_eq!(
        (runs[0].1.status, runs[0].1.stdout.as_str()),
        (0, "main done\n")
    );
    for (way, o, cwd) in &runs[1..] {
        if !expected_status.contains(&o.status)
            || (o.stdout.as_str(), o.stderr.as_str()) != ("main done\n", "")
            || files(cwd) != ["gmon.out"]
        {
            return Err(format!("{way:?}: {o:?}, files {:?}", files(cwd)));
        }
        assert_whole_profile(p.exe(*way), &cwd.join("gmon.out"));
    }
    Ok(())
}

#[test]
fn sigterm_to_another_thread_during_the_write_waits_for_the_exit_under_way() {
    check_during_the_write("mt-term", &[0]);
}

#[test]
fn a_second_thread_calling_exit_during_the_write_waits_for_the_exit_under_way() {
    check_during_the_write("mt-exit", &[0]);
}

#[test]
fn exit_from_a_signal_handler_during_the_write_comes_after_the_write() {
    // The main thread's SIGUSR1 handler calls exit(5): the signal is held while the profile
    // is written, then the program's own handler decides the status (5), as it would have had
    // the signal arrived a moment later in the program's own exit; or, when the signal comes
    // after the program's exit ended, the status is that exit's (0). Either way the profile
    // is whole and nothing is left behind.
    check_during_the_write("handler-exit", &[0, 5]);
}

// ---------------------------------------------------------------------------------------------
// output path

#[test]
fn the_output_name_is_copied_at_start_not_read_from_a_rewritten_environment() {
    let dir = TempDir::new("clobber");
    let p = build(&dir);
    let setup = Setup {
        env: vec![("PROFIL_OUT", "prof.out".into())],
        ..Setup::default()
    };
    for way in [Way::Linked, Way::Preloaded] {
        let cwd = dir.sub(&format!("{way:?}"));
        let o = run(&p, way, &cwd, &["clobber-env", "20"], &setup);
        assert_eq!((o.status, o.stderr.as_str()), (0, ""), "{way:?}");
        assert_eq!(files(&cwd), ["prof.out"], "{way:?}");
        assert_whole_profile(p.exe(way), &cwd.join("prof.out"));
    }
}

#[test]
fn a_245_character_output_name_is_written() {
    let dir = TempDir::new("longname");
    let p = build(&dir);
    let name = "p".repeat(245);
    let setup = Setup {
        env: vec![("PROFIL_OUT", name.clone())],
        ..Setup::default()
    };
    for way in [Way::Linked, Way::Preloaded] {
        let cwd = dir.sub(&format!("{way:?}"));
        let o = run(&p, way, &cwd, &["quiet", "20"], &setup);
        assert_eq!((o.status, o.stderr.as_str()), (0, ""), "{way:?}");
        assert_eq!(files(&cwd), std::slice::from_ref(&name), "{way:?}");
        assert_whole_profile(p.exe(way), &cwd.join(&name));
    }
}

#[test]
fn a_device_or_fifo_at_the_output_name_is_left_alone_with_one_warning() {
    use std::os::unix::fs::FileTypeExt;
    let dir = TempDir::new("special");
    let p = build(&dir);
    for way in [Way::Linked, Way::Preloaded] {
        let cwd = dir.sub(&format!("{way:?}"));
        let fifo = cwd.join("fifo");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
        // A null device of our own (the real /dev/null is left alone even if this fails).
        let null = cwd.join("null");
        let n = std::ffi::CString::new(null.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a NUL-terminated path; makedev(1, 3) is the null device.
        let have_null =
            unsafe { libc::mknod(n.as_ptr(), libc::S_IFCHR | 0o666, libc::makedev(1, 3)) } == 0;
        let mut targets = vec![("fifo", fifo.clone())];
        if have_null {
            targets.push(("null", null.clone()));
        }
        for (what, target) in targets {
            let setup = Setup {
                env: vec![("PROFIL_OUT", target.display().to_string())],
                ..Setup::default()
            };
            let o = run(&p, way, &cwd, &["quiet", "20"], &setup);
            assert_eq!(
                (o.status, o.stdout.as_str()),
                (0, "done\n"),
                "{way:?} {what}"
            );
            assert_eq!(o.stderr.lines().count(), 1, "{way:?} {what}: {o:?}");
            assert!(
                o.stderr.starts_with("profil-rt: ") && o.stderr.contains("not a regular file"),
                "{way:?} {what}: {o:?}"
            );
            let t = fs::symlink_metadata(&target).unwrap().file_type();
            assert!(
                if what == "fifo" {
                    t.is_fifo()
                } else {
                    t.is_char_device()
                },
                "{way:?}: {what} was replaced"
            );
        }
        let left: Vec<String> = files(&cwd)
            .into_iter()
            .filter(|n| n != "fifo" && n != "null")
            .collect();
        assert!(left.is_empty(), "{way:?}: {left:?}");
    }
}

#[test]
fn another_users_read_only_profile_is_not_replaced() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: needs root to run the program as another user");
        return;
    }
    let dir = TempDir::new("readonly");
    fs::set_permissions(&dir.0, fs::Permissions::from_mode(0o755)).unwrap();
    let p = build(&dir);
    for way in [Way::Linked, Way::Preloaded] {
        let cwd = dir.sub(&format!("{way:?}"));
        // A directory the program may write in, holding root's read-only gmon.out.
        fs::set_permissions(&cwd, fs::Permissions::from_mode(0o777)).unwrap();
        let gmon = cwd.join("gmon.out");
        fs::write(&gmon, b"root's").unwrap();
        fs::set_permissions(&gmon, fs::Permissions::from_mode(0o444)).unwrap();
        let setup = Setup {
            as_nobody: true,
            ..Setup::default()
        };
        let o = run(&p, way, &cwd, &["quiet", "20"], &setup);
        assert_eq!((o.status, o.stdout.as_str()), (0, "done\n"), "{way:?}");
        assert_eq!(o.stderr.lines().count(), 1, "{way:?}: {o:?}");
        assert!(
            o.stderr.starts_with("profil-rt: cannot write gmon.out"),
            "{way:?}: {o:?}"
        );
        assert_eq!(fs::read(&gmon).unwrap(), b"root's", "{way:?}");
        assert_eq!(files(&cwd), ["gmon.out"], "{way:?}");
    }
}

#[test]
fn a_setuid_program_ignores_profil_out() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: needs root to make a setuid-root program");
        return;
    }
    let dir = TempDir::new("setuid");
    fs::set_permissions(&dir.0, fs::Permissions::from_mode(0o755)).unwrap();
    let p = build(&dir);
    // root's private file in root's private directory.
    let private = dir.sub("private");
    fs::set_permissions(&private, fs::Permissions::from_mode(0o700)).unwrap();
    let victim = private.join("victim");
    fs::write(&victim, b"root's secret").unwrap();
    fs::set_permissions(&victim, fs::Permissions::from_mode(0o600)).unwrap();
    // The program is setuid root; LD_PRELOAD is not honoured for it, so the linked object only.
    fs::set_permissions(&p.linked, fs::Permissions::from_mode(0o4755)).unwrap();
    let cwd = dir.sub("cwd");
    fs::set_permissions(&cwd, fs::Permissions::from_mode(0o777)).unwrap();
    let setup = Setup {
        env: vec![("PROFIL_OUT", victim.display().to_string())],
        as_nobody: true,
        ..Setup::default()
    };
    let o = run(&p, Way::Linked, &cwd, &["quiet", "20"], &setup);
    assert_eq!((o.status, o.stdout.as_str()), (0, "done\n"), "{o:?}");
    assert_eq!(fs::read(&victim).unwrap(), b"root's secret");
    let meta = fs::metadata(&victim).unwrap();
    assert_eq!(meta.permissions().mode() & 0o7777, 0o600);
    // The profile goes where it would without the setting: gmon.out in the working directory.
    assert_eq!(files(&cwd), ["gmon.out"]);
}

// ---------------------------------------------------------------------------------------------
// threads that exist before the clock starts

/// gprof's self seconds per function.
fn gprof_seconds(exe: &Path, gmon: &Path) -> Vec<(String, f64)> {
    let out = Command::new("gprof")
        .args(["-b", "-p"])
        .arg(exe)
        .arg(gmon)
        .output()
        .expect("run gprof");
    assert!(out.status.success());
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let secs = f.get(2)?.parse::<f64>().ok()?;
            Some(((*f.last()?).to_owned(), secs))
        })
        .collect()
}

#[test]
fn a_thread_started_before_the_runtime_is_sampled_too() {
    // libearly.so's constructor starts a thread before the runtime's constructor runs (under
    // LD_PRELOAD, and with the object linked in); it does twice main's work.
    let dir = TempDir::new("early");
    let lib = dir.join("libearly.so");
    let gcc = |args: &[&std::ffi::OsStr]| {
        let out = Command::new("gcc").args(args).output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    gcc(&[
        "-O2".as_ref(),
        "-pthread".as_ref(),
        "-shared".as_ref(),
        "-fPIC".as_ref(),
        "-o".as_ref(),
        lib.as_os_str(),
        fixtures().join("libearly.c").as_os_str(),
    ]);
    let build = |name: &str, with: bool| {
        let exe = dir.join(name);
        let obj = runtime_path(false);
        let mut args: Vec<&std::ffi::OsStr> = vec![
            "-O2".as_ref(),
            "-pthread".as_ref(),
            "-rdynamic".as_ref(),
            "-o".as_ref(),
            exe.as_os_str(),
        ];
        let src = fixtures().join("early.c");
        args.push(src.as_os_str());
        if with {
            args.push(obj.as_os_str());
        }
        args.extend(["-L".as_ref(), dir.0.as_os_str(), "-learly".as_ref()]);
        args.push("-Wl,-rpath,$ORIGIN".as_ref());
        gcc(&args);
        exe
    };
    let p = Programs {
        plain: build("early-plain", false),
        linked: build("early-linked", true),
    };
    for way in [Way::Linked, Way::Preloaded] {
        let cwd = dir.sub(&format!("{way:?}"));
        let o = run(&p, way, &cwd, &["early", "150"], &Setup::default());
        assert_eq!(
            (o.status, o.stdout.as_str(), o.stderr.as_str()),
            (0, "done\n", "")
        );
        let rows = gprof_seconds(p.exe(way), &cwd.join("gmon.out"));
        let of = |name: &str| {
            rows.iter()
                .find(|(n, _)| n == name)
                .map_or(0.0, |(_, s)| *s)
        };
        let (early, main) = (of("early_work"), of("main_work"));
        assert!(main > 0.0, "{way:?}: {rows:?}");
        let ratio = early / main;
        assert!(
            (1.5..=2.6).contains(&ratio),
            "{way:?}: early_work / main_work = {ratio:.2}, expected 2: {rows:?}"
        );
    }
}
