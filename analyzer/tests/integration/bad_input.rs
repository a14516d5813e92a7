//! Bad input and scale. Inputs that are not files of a known size (devices and FIFOs given as
//! the profile or the executable) must each end promptly with one line naming the file and
//! exit status 2, having read no more than the file's own headers justify; and many large
//! profiles are summed holding one at a time.
//!
//! Every run is fenced: the address space is limited to 1 GiB (an unbounded read fails with
//! "out of memory" instead of eating the machine) and a run that has not ended after
//! [`DEADLINE`] is killed and fails the test (a blocking open or read never ends, however
//! fast the machine).

use std::ffi::OsStr;
use std::io::Read;
use std::path::{Path, PathBuf};

use crate::support::Peak;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_profil-report");
const DEADLINE: Duration = Duration::from_secs(60);
const ADDRESS_SPACE: libc::rlim_t = 1 << 30;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures/gcc-pg")
        .join(name)
}

struct Run {
    code: Option<i32>,
    stderr: String,
    max_rss_kb: i64,
}

/// Run the analyzer fenced (see the module docs).
fn fenced<I, S>(args: I) -> Run
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let (mut cmd, peak) = Peak::command(Path::new(BIN));
    cmd.args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    crate::support::limit_address_space(&mut cmd, ADDRESS_SPACE);
    // Reaped by wait4 below, which clippy cannot see.
    #[allow(clippy::zombie_processes)]
    let mut child = cmd.spawn().expect("start profil-report");
    let pid = child.id() as libc::pid_t;
    let start = Instant::now();
    let status = loop {
        let mut status = 0;
        // SAFETY: wait4 on our own child with a valid out-pointer.
        let r = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, std::ptr::null_mut()) };
        if r == pid {
            break status;
        }
        assert_eq!(r, 0, "wait4 failed");
        if start.elapsed() > DEADLINE {
            let _ = child.kill();
            let _ = child.wait();
            panic!("profil-report did not end within {DEADLINE:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    Run {
        code: libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status)),
        stderr,
        max_rss_kb: peak.kib(),
    }
}

/// One line, naming `file`, exit status 2, not an allocation failure, small.
fn assert_clean_error(run: &Run, file: &str) {
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
    assert!(
        run.stderr.starts_with("profil-report: ") && run.stderr.contains(file),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("out of memory"), "{}", run.stderr);
    // A debug build of the analyzer with a small executable: tens of MB at most. The bound
    // is generous; unbounded reading reaches the 1 GiB fence.
    assert!(
        run.max_rss_kb < 256 * 1024,
        "{} KB: {}",
        run.max_rss_kb,
        run.stderr
    );
}

#[test]
fn dev_zero_as_the_gmon_file() {
    let run = fenced([fixture("loop2").as_os_str(), OsStr::new("/dev/zero")]);
    assert_clean_error(&run, "/dev/zero: ");
}

#[test]
fn dev_urandom_as_the_gmon_file() {
    // Random bytes may pass for a BSD header with 4-byte addresses; what that costs is bounded
    // (extent::BSD_HISTOGRAM_LIMIT), so a few runs all end cleanly.
    for _ in 0..4 {
        let run = fenced([fixture("loop2").as_os_str(), OsStr::new("/dev/urandom")]);
        assert_clean_error(&run, "/dev/urandom: ");
    }
}

#[test]
fn dev_zero_as_the_executable() {
    let run = fenced([OsStr::new("/dev/zero"), fixture("loop2.gmon").as_os_str()]);
    assert_clean_error(&run, "/dev/zero");
}

#[test]
fn dev_urandom_as_the_executable() {
    for _ in 0..4 {
        let run = fenced([
            OsStr::new("/dev/urandom"),
            fixture("loop2.gmon").as_os_str(),
        ]);
        assert_clean_error(&run, "/dev/urandom");
    }
}

#[test]
fn dev_zero_to_dump() {
    let run = fenced(["dump", "/dev/zero"]);
    assert_clean_error(&run, "/dev/zero: ");
}

#[test]
fn dev_zero_to_merge() {
    let dir = std::env::temp_dir().join(format!("profil-bad-input-merge-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("sum.gmon");
    let run = fenced([
        OsStr::new("merge"),
        OsStr::new("-o"),
        out.as_os_str(),
        fixture("loop2.gmon").as_os_str(),
        OsStr::new("/dev/zero"),
    ]);
    assert_clean_error(&run, "/dev/zero: ");
    assert!(!out.exists(), "no sum is written from a bad input");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A FIFO that no process writes to.
struct Fifo(PathBuf);

impl Fifo {
    fn new(tag: &str) -> Fifo {
        let dir =
            std::env::temp_dir().join(format!("profil-bad-input-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("fifo");
        let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: mkfifo with a NUL-terminated path that outlives the call.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        Fifo(p)
    }
}

impl Drop for Fifo {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(self.0.parent().unwrap());
    }
}

#[test]
fn fifo_without_a_writer_as_the_gmon_file() {
    let f = Fifo::new("gmon");
    let run = fenced([fixture("loop2").as_os_str(), f.0.as_os_str()]);
    assert_clean_error(&run, &f.0.display().to_string());
    assert!(run.stderr.contains("too short"), "{}", run.stderr);
}

#[test]
fn fifo_without_a_writer_as_the_executable() {
    let f = Fifo::new("exe");
    let run = fenced([f.0.as_os_str(), fixture("loop2.gmon").as_os_str()]);
    assert_clean_error(&run, &f.0.display().to_string());
}

#[test]
fn fifo_without_a_writer_to_dump() {
    let f = Fifo::new("dump");
    let run = fenced([OsStr::new("dump"), f.0.as_os_str()]);
    assert_clean_error(&run, &f.0.display().to_string());
}

/// A pipe with a writer is read to the end: `profil-report prog <(cat gmon.out)`.
#[test]
fn a_pipe_with_a_writer_is_read_whole() {
    let gmon = std::fs::read(fixture("loop2.gmon")).unwrap();
    let mut cat = Command::new("cat")
        .arg(fixture("loop2.gmon"))
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let out = Command::new(BIN)
        .arg(fixture("loop2"))
        .arg("/dev/stdin")
        .stdin(cat.stdout.take().unwrap())
        .output()
        .unwrap();
    cat.wait().unwrap();
    let from_pipe = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let from_file = Command::new(BIN)
        .arg(fixture("loop2"))
        .arg(fixture("loop2.gmon"))
        .output()
        .unwrap();
    assert!(!gmon.is_empty());
    // Same report, up to the file name in the header line.
    let body = |s: &str| s.lines().skip(1).collect::<Vec<_>>().join("\n");
    assert_eq!(
        body(&from_pipe),
        body(&String::from_utf8_lossy(&from_file.stdout))
    );
}

/// A GNU gmon file of `bins` 2-byte bins (one histogram over loop2's address space onwards,
/// every 997th bin counted once).
fn big_gmon(path: &std::path::Path, bins: u32) {
    let mut d = b"gmon".to_vec();
    d.extend_from_slice(&1u32.to_le_bytes());
    d.extend_from_slice(&[0; 12]);
    d.push(0);
    d.extend_from_slice(&0x1000u64.to_le_bytes());
    d.extend_from_slice(&(0x1000 + 4 * u64::from(bins)).to_le_bytes());
    d.extend_from_slice(&bins.to_le_bytes());
    d.extend_from_slice(&100u32.to_le_bytes());
    d.extend_from_slice(b"seconds\0\0\0\0\0\0\0\0s");
    let mut hist = vec![0u8; 2 * bins as usize];
    for i in (0..bins as usize).step_by(997) {
        hist[2 * i] = 1;
    }
    d.extend_from_slice(&hist);
    std::fs::write(path, d).unwrap();
}

/// Summing N large profiles costs about what one costs: each file is read, added and let go
/// before the next (the same file named 16 times is 16 mappings when all are held).
#[test]
fn many_large_profiles_are_summed_one_at_a_time() {
    let dir = std::env::temp_dir().join(format!("profil-bad-input-sum-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let gmon = dir.join("big.gmon");
    let bins = 2 << 20;
    big_gmon(&gmon, bins);
    let file_kb = i64::from(bins) * 2 / 1024;
    let exe = fixture("loop2");
    for mode in [&[][..], &["--gprof", "-b", "-p"][..], &["-l"][..]] {
        let rss = |copies: usize| {
            let mut args: Vec<&OsStr> = mode.iter().map(OsStr::new).collect();
            args.push(exe.as_os_str());
            args.extend(std::iter::repeat_n(gmon.as_os_str(), copies));
            let run = fenced(args);
            assert_eq!(run.code, Some(0), "{mode:?}: {}", run.stderr);
            run.max_rss_kb
        };
        let (one, many) = (rss(1), rss(16));
        // Holding all 16 would add 15 files' worth; streaming adds next to nothing.
        assert!(
            many < one + 4 * file_kb,
            "{mode:?}: 1 file {one} KB, 16 files {many} KB (one file is {file_kb} KB)"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A GNU gmon file (64-bit) of `arcs` call-arc records and no histogram: every arc calls
/// `callee` from a call site in `[caller, caller + size)`.
fn arcs_gmon(path: &std::path::Path, caller: (u64, u64), callee: u64, arcs: u32) {
    let mut d = b"gmon".to_vec();
    d.extend_from_slice(&1u32.to_le_bytes());
    d.extend_from_slice(&[0; 12]);
    for i in 0..u64::from(arcs) {
        d.push(1);
        d.extend_from_slice(&(caller.0 + i % caller.1.max(1)).to_le_bytes());
        d.extend_from_slice(&callee.to_le_bytes());
        d.extend_from_slice(&1u32.to_le_bytes());
    }
    std::fs::write(path, d).unwrap();
}

/// The default report sums the call arcs of many profiles into its call graph as each file is
/// read: 16 copies of a profile of 100,000 arc records cost about what one costs (holding
/// every record of every file until the graph was built grew by 2.4 MB a file).
#[test]
fn many_profiles_with_arcs_are_summed_one_at_a_time() {
    use object::{Object, ObjectSymbol};
    let dir = std::env::temp_dir().join(format!("profil-bad-input-arcs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let exe = fixture("loop2");
    let data = std::fs::read(&exe).unwrap();
    let file = object::File::parse(&*data).unwrap();
    let sym = |name: &str| {
        let s = file
            .symbols()
            .find(|s| s.name() == Ok(name))
            .unwrap_or_else(|| panic!("no {name} in loop2"));
        (s.address(), s.size())
    };
    let gmon = dir.join("arcs.gmon");
    let arcs = 100_000;
    arcs_gmon(&gmon, sym("main"), sym("inner").0, arcs);
    let file_kb = i64::from(arcs) * 21 / 1024;
    let rss = |copies: usize| {
        let mut args: Vec<&OsStr> = vec![exe.as_os_str()];
        args.extend(std::iter::repeat_n(gmon.as_os_str(), copies));
        let run = fenced(args);
        assert_eq!(run.code, Some(0), "{}", run.stderr);
        run.max_rss_kb
    };
    let (one, many) = (rss(1), rss(16));
    // Holding every record would add 15 files' worth of arcs (24 bytes each); summing them
    // into the graph adds nothing.
    assert!(
        many < one + 4 * file_kb,
        "1 file {one} KB, 16 files {many} KB (one file is {file_kb} KB)"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
