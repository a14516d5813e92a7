//! Helpers every oracle test shares: temporary directories, compiling and running programs
//! at test time, running the installed GNU gprof and our binary, and comparing the two byte
//! for byte. Used directly and through `cg_support`, `flat_support`, `lines_support` and
//! `ux_support`.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The tests' one scratch-directory type: a fresh directory under the system temp dir,
/// removed on drop, but kept for inspection when the test fails (the thread is panicking) or
/// `PROFIL_KEEP_TMP` is set.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        static N: AtomicUsize = AtomicUsize::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        let dir =
            std::env::temp_dir().join(format!("profil-test-{}-{tag}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create temp dir");
        TempDir(dir)
    }
    pub fn path(&self) -> &Path {
        &self.0
    }
    pub fn join(&self, p: &str) -> PathBuf {
        self.0.join(p)
    }
    /// A fresh (emptied) subdirectory, for one run of several in this directory.
    pub fn sub(&self, name: &str) -> PathBuf {
        let d = self.join(name);
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).expect("create subdirectory");
        d
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        if std::env::var_os("PROFIL_KEEP_TMP").is_none() && !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

/// A path under the repository's `fixtures/` directory.
pub fn fixtures_dir(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures")
        .join(rel)
}

/// `out`, after asserting that the command it came from (`what`) succeeded.
pub fn assert_success(what: &str, out: Output) -> Output {
    assert!(
        out.status.success(),
        "{what} failed ({}):\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Run a compiler (`gcc`, `g++`, `rustc`) with `args` in `dir`.
pub fn compile(dir: &Path, tool: &str, args: &[&str]) {
    let out = Command::new(tool)
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {tool}: {e}"));
    assert_success(&format!("{tool} {args:?}"), out);
}

/// Run `exe` (in `dir`, with `args`) and move the gmon.out it writes to `dir/<save_as>`.
pub fn profile_run(dir: &Path, exe: &str, args: &[&str], save_as: &str) -> PathBuf {
    let gmon = dir.join("gmon.out");
    let _ = std::fs::remove_file(&gmon);
    let out = Command::new(dir.join(exe))
        .args(args)
        .current_dir(dir)
        .env_remove("GMON_OUT_PREFIX")
        .output()
        .unwrap_or_else(|e| panic!("cannot run {exe}: {e}"));
    assert_success(exe, out);
    let dest = dir.join(save_as);
    std::fs::rename(&gmon, &dest).unwrap_or_else(|e| panic!("{exe} wrote no gmon.out: {e}"));
    dest
}

/// The address space gprof may use in the tests (RLIMIT_AS). gprof 2.40 believes a
/// gmon.out read as a BSD file (`-Ob`) that declares a histogram of 2^31 bins and allocates
/// and fills 16 GiB for it: on a machine with that much free memory it exits 1 half a minute
/// later ("does not appear to be in gmon.out format"), on a smaller one the kernel's OOM
/// killer ends it (or another process). Under this limit its allocation fails at once, and
/// it exits 1 ("out of memory allocating ..."), as we do (rejecting the file).
pub const GPROF_ADDRESS_SPACE: u64 = 4 << 30;

/// Run `cmd` with at most `bytes` of address space (RLIMIT_AS).
pub fn limit_address_space(cmd: &mut Command, bytes: u64) -> &mut Command {
    use std::os::unix::process::CommandExt;
    // SAFETY: the closure runs in the child between fork and exec and only calls setrlimit,
    // which is async-signal-safe, on a stack value.
    unsafe {
        cmd.pre_exec(move || {
            let lim = libc::rlimit {
                rlim_cur: bytes,
                rlim_max: bytes,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        })
    }
}

/// Run the installed GNU gprof in `dir` (within [`GPROF_ADDRESS_SPACE`]).
pub fn gprof(dir: &Path, args: &[&str]) -> Output {
    let mut cmd = Command::new("gprof");
    limit_address_space(&mut cmd, GPROF_ADDRESS_SPACE)
        .args(args)
        .current_dir(dir)
        .env("LC_ALL", "C")
        .output()
        .expect("GNU gprof must be installed (binutils) to run these tests")
}

/// Run our binary in `dir`.
pub fn ours(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_profil-report"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run profil-report")
}

/// Run our binary in `dir`; it must succeed and print UTF-8, which is returned.
pub fn ours_ok(dir: &Path, args: &[&str]) -> String {
    let o = ours(dir, args);
    assert!(
        o.status.success(),
        "profil-report {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).expect("UTF-8 output")
}

/// A readable account of the first differences between two outputs.
pub fn diff(want: &[u8], got: &[u8]) -> String {
    let (w, g) = (String::from_utf8_lossy(want), String::from_utf8_lossy(got));
    let (wl, gl): (Vec<&str>, Vec<&str>) = (w.lines().collect(), g.lines().collect());
    let mut s = String::new();
    let mut shown = 0;
    for i in 0..wl.len().max(gl.len()) {
        let (a, b) = (wl.get(i).copied(), gl.get(i).copied());
        if a != b {
            s += &format!("line {}:\n  gprof: {:?}\n  ours : {:?}\n", i + 1, a, b);
            shown += 1;
            if shown == 8 {
                break;
            }
        }
    }
    if s.is_empty() {
        s = "(outputs differ only in line endings)".into();
    }
    s
}

/// `gprof MODE FLAGS exe gmon...` and `profil-report --gprof MODE FLAGS gmon... exe` must
/// both succeed and print the same bytes (our inputs in the other order, to test detection
/// by content). `mode` is the flags of the caller's kind of test (`-b`, `-b -p`). Returns
/// gprof's output.
pub fn assert_same_as_gprof(
    dir: &Path,
    exe: &str,
    gmons: &[&str],
    mode: &[&str],
    flags: &[&str],
) -> Vec<u8> {
    let mut gargs = mode.to_vec();
    gargs.extend_from_slice(flags);
    gargs.push(exe);
    gargs.extend_from_slice(gmons);
    let want = gprof(dir, &gargs);
    assert!(
        want.status.success(),
        "gprof {gargs:?} failed: {}",
        String::from_utf8_lossy(&want.stderr)
    );
    let mut oargs = vec!["--gprof"];
    oargs.extend_from_slice(mode);
    oargs.extend_from_slice(flags);
    oargs.extend_from_slice(gmons);
    oargs.push(exe);
    let got = ours(dir, &oargs);
    assert!(
        got.status.success(),
        "profil-report {oargs:?} failed: {}",
        String::from_utf8_lossy(&got.stderr)
    );
    assert!(
        want.stdout == got.stdout,
        "{} {exe} {gmons:?} {flags:?}: output differs from gprof\n{}",
        dir.display(),
        diff(&want.stdout, &got.stdout)
    );
    want.stdout
}

/// Function symbols (`T`/`t`) of an executable, by `nm`: (name, link-time address, global).
pub fn nm_functions(exe: &Path) -> Vec<(String, u64, bool)> {
    let out = assert_success(
        "nm",
        Command::new("nm")
            .arg(exe)
            .output()
            .expect("nm (binutils) must be installed"),
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let mut it = l.split_whitespace();
            let (addr, class, name) = (it.next()?, it.next()?, it.next()?);
            if class != "T" && class != "t" {
                return None;
            }
            Some((
                name.to_owned(),
                u64::from_str_radix(addr, 16).ok()?,
                class == "T",
            ))
        })
        .collect()
}

/// The link-time address of function `name` among `nm_functions`' result.
pub fn address_of(funcs: &[(String, u64, bool)], name: &str) -> u64 {
    funcs
        .iter()
        .find(|f| f.0 == name)
        .unwrap_or_else(|| panic!("no function {name:?}"))
        .1
}

/// The shared objects' profiles and the manifest that the runtime writes beside each profile by
/// default (`PROFIL_RANGES=all`: `<profile>.objects`, `<profile>.<object>.<n>`, or
/// `<profile>.o<n>` for a long name), and the sampled stacks (`<profile>.stacks`, issue 17;
/// tested in runtime_stacks.rs): not the files these tests count.
pub fn is_object_file(n: &str) -> bool {
    n.ends_with(".objects")
        || n.ends_with(".stacks")
        || n.contains(".so")
        || n.rsplit_once(".o")
            .is_some_and(|(_, d)| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
}

/// The runtime artifact `profil-report runtime-path [--shared]` prints (the object, or with
/// `shared` the shared object), asked once per test binary: an absolute path to a file.
pub fn runtime_path(shared: bool) -> PathBuf {
    static PATHS: std::sync::OnceLock<(PathBuf, PathBuf)> = std::sync::OnceLock::new();
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

/// A command whose peak memory can be read afterwards with [`Peak::kib`]: it runs `program`
/// through a small C starter that forks it, reaps it with `wait4` and writes its `ru_maxrss`
/// to a file, then ends as it did (its exit status, or the same signal).
///
/// Why not `wait4` on our own child: Linux gives a child the memory high-water mark of the
/// process it was forked or spawned from (the mark of the address space it replaces at
/// `exec`), so a child of this test binary reports at least the most this binary ever used —
/// 200 MiB once any test printed a symbolized backtrace — whatever the child itself used.
/// The starter is a fresh small process, so its child's mark is the child's own. The
/// started program gets `SIGKILL` when the starter dies (killing the starter on a deadline
/// ends both).
pub struct Peak {
    file: PathBuf,
}

impl Peak {
    /// The command (`program` started by the starter) and where its peak will be read.
    pub fn command(program: &Path) -> (Command, Peak) {
        static STARTER: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
        let starter = STARTER.get_or_init(|| {
            let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
            // Built under this process's own names, then renamed over the one starter (test
            // binaries running at once each replace it with the same program).
            let src = dir.join(format!("peak-starter-{}.c", std::process::id()));
            let tmp = dir.join(format!("peak-starter-{}", std::process::id()));
            std::fs::write(&src, PEAK_STARTER_C).unwrap();
            let out = Command::new("gcc")
                .args(["-O2", "-o"])
                .arg(&tmp)
                .arg(&src)
                .output()
                .expect("gcc");
            assert!(out.status.success(), "{out:?}");
            let _ = std::fs::remove_file(&src);
            let exe = dir.join("peak-starter");
            std::fs::rename(&tmp, &exe).unwrap();
            exe
        });
        static N: AtomicUsize = AtomicUsize::new(0);
        let file = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!(
            "peak-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let mut cmd = Command::new(starter);
        cmd.arg(&file).arg(program);
        (cmd, Peak { file })
    }

    /// The started program's peak resident memory in KiB (after the command ended).
    pub fn kib(&self) -> i64 {
        let text = std::fs::read_to_string(&self.file).expect("the starter wrote the peak");
        text.trim().parse().expect("a number")
    }
}

impl Drop for Peak {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.file);
    }
}

/// The starter of [`Peak`]: `starter FILE PROGRAM ARGS...`.
const PEAK_STARTER_C: &str = r#"
#include <signal.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
int main(int argc, char **argv) {
    if (argc < 3) return 125;
    pid_t pid = fork();
    if (pid < 0) return 126;
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        execv(argv[2], argv + 2);
        _exit(127);
    }
    int status;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) != pid) return 126;
    FILE *f = fopen(argv[1], "w");
    if (!f || fprintf(f, "%ld\n", ru.ru_maxrss) < 0 || fclose(f) != 0) return 126;
    if (WIFSIGNALED(status)) {
        signal(WTERMSIG(status), SIG_DFL);
        raise(WTERMSIG(status));
    }
    return WEXITSTATUS(status);
}
"#;
