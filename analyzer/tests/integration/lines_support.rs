//! Shared helpers of the `lines_*` tests: the shared oracle helpers of `tests/support`
//! (temporary directories, compiling and running programs, running gprof and profil-report),
//! fixture paths, crafted histograms over `.text`.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use gmon::write::{HistHeader, Writer};
use gmon::{Dimension, Endian, PtrSize, Target};
use object::{Object, ObjectSection};

use crate::support;
pub use support::*;

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

/// Copy `inlined.rs` into `dir` and build it there as `prog`: optimized, with debug info,
/// linked with `-pg` (gcc's gmon runtime).
pub fn compile_inlined_rs(dir: &Path) {
    copy_fixtures(dir, &["inlined.rs"]);
    compile(
        dir,
        "rustc",
        &[
            "-C",
            "opt-level=2",
            "-g",
            "-C",
            "link-arg=-pg",
            "inlined.rs",
            "-o",
            "prog",
        ],
    );
}

/// Line number of the first line of fixture `file` that contains `marker`.
pub fn line_of(file: &str, marker: &str) -> u64 {
    let text = std::fs::read_to_string(fixture(file)).unwrap();
    1 + text.lines().position(|l| l.contains(marker)).unwrap() as u64
}

/// The output of binutils' `addr2line FLAGS exe`, fed `addrs` (one hex address per line) on
/// its standard input.
pub fn run_addr2line(exe: &Path, flags: &[&str], addrs: &[u64]) -> String {
    use std::process::{Command, Stdio};
    let input: String = addrs.iter().map(|a| format!("{a:#x}\n")).collect();
    let mut child = Command::new("addr2line")
        .args(flags)
        .arg(exe)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("addr2line (binutils) must be installed");
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        use std::io::Write;
        stdin.write_all(input.as_bytes()).unwrap();
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    String::from_utf8(out.stdout).unwrap()
}

/// `.text` of an executable: (address, size).
pub fn text_section(exe: &Path) -> (u64, u64) {
    let data = std::fs::read(exe).unwrap();
    let file = object::File::parse(&*data).unwrap();
    let s = file.section_by_name(".text").unwrap();
    (s.address(), s.size())
}

/// A GNU gmon file with one histogram over `.text` of `exe`, bins `width` bytes wide, bin
/// `i` holding `count(i)`, with the executable's pointer size (x86: little-endian).
pub fn crafted_gmon(exe: &Path, width: u64, count: impl Fn(u64) -> u16) -> Vec<u8> {
    let (lo, size) = text_section(exe);
    let n = size / width;
    let data = std::fs::read(exe).unwrap();
    let ptr = match object::File::parse(&*data).unwrap().is_64() {
        true => PtrSize::Eight,
        false => PtrSize::Four,
    };
    let mut w = Writer::new(Vec::new(), Target::new(ptr, Endian::Little));
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
