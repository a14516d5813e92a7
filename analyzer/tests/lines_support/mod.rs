//! Shared helpers of the `lines_*` tests: temporary directories, compiling and running
//! programs, running gprof and profil-report, fixture paths, crafted histograms over `.text`.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use gmon::write::{HistHeader, Writer};
use gmon::{Dimension, Endian, PtrSize, Target};
use object::{Object, ObjectSection};

/// `fixtures/lines/<name>`.
pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures/lines")
        .join(name)
}

/// Copy fixtures into `dir`.
pub fn copy_fixtures(dir: &Path, names: &[&str]) {
    for n in names {
        std::fs::copy(fixture(n), dir.join(n)).unwrap();
    }
}

/// Line number of the first line of fixture `file` that contains `marker`.
pub fn line_of(file: &str, marker: &str) -> u64 {
    let text = std::fs::read_to_string(fixture(file)).unwrap();
    1 + text.lines().position(|l| l.contains(marker)).unwrap() as u64
}

/// `.text` of an executable: (address, size).
pub fn text_section(exe: &Path) -> (u64, u64) {
    let data = std::fs::read(exe).unwrap();
    let file = object::File::parse(&*data).unwrap();
    let s = file.section_by_name(".text").unwrap();
    (s.address(), s.size())
}

/// A GNU gmon file with one histogram over `.text` of `exe`, bins `width` bytes wide, bin
/// `i` holding `count(i)`.
pub fn crafted_gmon(exe: &Path, width: u64, count: impl Fn(u64) -> u16) -> Vec<u8> {
    let (lo, size) = text_section(exe);
    let n = size / width;
    let mut w = Writer::new(Vec::new(), Target::new(PtrSize::Eight, Endian::Little));
    w.gnu_header().unwrap();
    let h = HistHeader {
        low_pc: lo,
        high_pc: lo + n * width,
        hist_size: n as u32,
        prof_rate: 100,
        dimension: Dimension::SECONDS,
    };
    w.gnu_histogram(&h, (0..n).map(count)).unwrap();
    w.into_inner()
}

/// A directory under the system temp dir, removed on drop (kept if `PROFIL_KEEP_TMP` is set).
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static N: AtomicUsize = AtomicUsize::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        let dir =
            std::env::temp_dir().join(format!("profil-lines-{}-{tag}-{n}", std::process::id()));
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
}

impl Drop for TempDir {
    fn drop(&mut self) {
        if std::env::var_os("PROFIL_KEEP_TMP").is_none() {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

fn check(what: &str, out: Output) -> Output {
    assert!(
        out.status.success(),
        "{what} failed ({}):\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Run a compiler (`gcc`, `g++`, `rustc`) with `args` in `dir`; it must succeed.
pub fn compile(dir: &Path, tool: &str, args: &[&str]) {
    let out = Command::new(tool)
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {tool}: {e}"));
    check(&format!("{tool} {args:?}"), out);
}

/// Run `exe` in `dir` and move the gmon.out it writes to `dir/<save_as>`.
pub fn profile_run(dir: &Path, exe: &str, args: &[&str], save_as: &str) -> PathBuf {
    let gmon = dir.join("gmon.out");
    let _ = std::fs::remove_file(&gmon);
    let out = Command::new(dir.join(exe))
        .args(args)
        .current_dir(dir)
        .env_remove("GMON_OUT_PREFIX")
        .output()
        .unwrap_or_else(|e| panic!("cannot run {exe}: {e}"));
    check(exe, out);
    let dest = dir.join(save_as);
    std::fs::rename(&gmon, &dest).unwrap_or_else(|e| panic!("{exe} wrote no gmon.out: {e}"));
    dest
}

/// Run the installed GNU gprof in `dir`.
pub fn gprof(dir: &Path, args: &[&str]) -> Output {
    Command::new("gprof")
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

/// The first differing lines of two outputs.
pub fn diff(want: &[u8], got: &[u8]) -> String {
    let (w, g) = (String::from_utf8_lossy(want), String::from_utf8_lossy(got));
    let (wl, gl): (Vec<&str>, Vec<&str>) = (w.lines().collect(), g.lines().collect());
    let mut s = String::new();
    for i in 0..wl.len().max(gl.len()) {
        let (a, b) = (wl.get(i).copied(), gl.get(i).copied());
        if a != b {
            s += &format!("line {}:\n  gprof: {:?}\n  ours : {:?}\n", i + 1, a, b);
            if s.len() > 2000 {
                break;
            }
        }
    }
    s
}
