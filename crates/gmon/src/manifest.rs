//! The objects manifest: which gmon file holds which loaded object's histogram.
//!
//! With `PROFIL_RANGES=all` the runtime profiles the code of the executable *and* of every
//! shared object. The executable's histogram stays in `gmon.out`, unchanged, so that gprof
//! reads it as before. Each shared object gets its own gmon file, at its own link-time
//! addresses (so that `gprof LIB FILE` reads it), and this manifest, written next to
//! `gmon.out` as `gmon.out.objects` ([`manifest_name`]), tells the analyzer which file is
//! which object.
//!
//! # Format (version 1)
//!
//! Text, one record per line, fields separated by one TAB (shown as `<TAB>`), lines
//! ending in LF:
//!
//! ```text
//! profil-rs objects 1
//! exe <TAB> gmon.out <TAB> 3c5e… <TAB> 0x55d0c0a00000 <TAB> 0x1040 <TAB> 0x1e2d <TAB> /home/me/prog
//! lib <TAB> gmon.out.libm.so.6.1 <TAB> 8a9f… <TAB> 0x7f3a1c000000 <TAB> 0xe000 <TAB> 0x8f0e5 <TAB> /lib/x86_64-linux-gnu/libm.so.6
//! ```
//!
//! 1. `exe` or `lib`;
//! 2. the gmon file, relative to the manifest's directory;
//! 3. the GNU build-id in lowercase hex, or `-` when the object has none;
//! 4. the load bias (runtime address − link-time address), `0x` hex;
//! 5. 6. the link-time start and end (exclusive) of the profiled code, `0x` hex;
//! 7. the object's path, last so that it may hold any byte: TAB, LF, CR and `%` are written
//!    `%09`, `%0a`, `%0d`, `%25`.
//!
//! Blank lines and lines starting with `#` are ignored; anything else malformed is an error
//! naming the line and its byte offset ([`ManifestError`]). The writer ([`write_entry`]) is
//! `no_std` and does not allocate, for the runtime; the reader ([`parse`]) needs `alloc`.
//!
//! # Version 2: the process
//!
//! Version 2 (first line `profil-rs objects 2`, written by the runtime since issue 14) adds one
//! optional line, before the objects, describing the process that wrote the profile, so that
//! a report can state the CPU time that was not sampled instead of spreading it over the rest:
//!
//! ```text
//! process <TAB> pid=4242 <TAB> ppid=4200 <TAB> clock=perf <TAB> nominal_hz=1000 <TAB> samples=2012 <TAB> cpu_user_ns=2030000000 <TAB> cpu_system_ns=1000000 <TAB> threads_without_clock=0 <TAB> clock_closed=0
//! ```
//!
//! `key=value` fields, values decimal except `clock` (`perf` or `itimer`). `pid`/`ppid` place the
//! process in its tree; `clock` is the sampling clock; `nominal_hz` the samples per CPU-second
//! the clock gives when nothing is lost (`PROFIL_HZ` for perf; for the itimer, `PROFIL_HZ` or the
//! kernel tick's rate when that is lower, as measured); `samples` every sample taken (in the
//! executable and in every object, counted or not); `cpu_user_ns`/`cpu_system_ns` the process's
//! CPU time (all its threads, `getrusage`) over the time the clock ran; the rest say why
//! samples may be missing: `threads_without_clock` (threads that existed when the clock started
//! and could not get one), `clock_closed` (1: the program closed the clock's descriptor). No
//! key counts samples held back by the program's signal mask: the runtime keeps the program's
//! blocked bit for its sampling signal itself and never blocks the signal for real (a program
//! that blocks it with a raw system call loses samples, which show only as unsampled CPU). The
//! CPU time the clock would have sampled is the user time for perf and user + system for the
//! itimer; a report's unsampled time is that minus `samples / nominal_hz`. Unknown keys are
//! ignored (later versions may add some); a version 1 manifest is read as before, with no
//! process line ([`parse_manifest`]).

use core::fmt;

use crate::write::Sink;

/// The first line of every manifest this crate writes.
pub const FIRST_LINE: &str = "profil-rs objects 2";
/// The first line of a version 1 manifest (no process line), still read.
pub const FIRST_LINE_V1: &str = "profil-rs objects 1";

/// The process that wrote the profiles (version 2's `process` line); every field is optional
/// when read (`None`: absent).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Process {
    /// Its pid.
    pub pid: Option<u32>,
    /// Its parent's pid.
    pub ppid: Option<u32>,
    /// The sampling clock: `perf` or `itimer`.
    pub clock: Option<Clock>,
    /// Samples per CPU-second when none is lost.
    pub nominal_hz: Option<u32>,
    /// Every sample taken.
    pub samples: Option<u64>,
    /// User CPU time over the time the clock ran, in nanoseconds.
    pub cpu_user_ns: Option<u64>,
    /// System CPU time over the same time.
    pub cpu_system_ns: Option<u64>,
    /// Threads that existed when the clock started and got no clock of their own.
    pub threads_without_clock: Option<u32>,
    /// The program closed the clock's descriptor (no samples after that).
    pub clock_closed: Option<bool>,
}

/// The sampling clock of a process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Clock {
    /// perf_event task clock (user time).
    Perf,
    /// The process CPU-time timer (user + system time, at most once per tick).
    Itimer,
}

impl Process {
    /// The CPU time the clock measures (user for perf, user + system for the itimer), in
    /// nanoseconds, when known.
    pub fn sampled_cpu_ns(&self) -> Option<u64> {
        match self.clock? {
            Clock::Perf => self.cpu_user_ns,
            Clock::Itimer => Some(self.cpu_user_ns?.saturating_add(self.cpu_system_ns?)),
        }
    }

    /// The CPU time the samples do not account for, in seconds (never negative): the clock's
    /// CPU time minus `samples / nominal_hz`.
    pub fn unsampled_seconds(&self) -> Option<f64> {
        let cpu = self.sampled_cpu_ns()? as f64 / 1e9;
        let hz = f64::from(self.nominal_hz.filter(|&h| h > 0)?);
        Some((cpu - self.samples? as f64 / hz).max(0.0))
    }
}

/// Write the `process` line (no allocation). Call after [`write_header`], before the entries.
/// `None` fields are left out.
pub fn write_process<S: Sink>(sink: &mut S, p: &Process) -> Result<(), S::Error> {
    let mut w = FmtSink { sink, err: None };
    let r = (|| -> fmt::Result {
        use fmt::Write;
        w.write_str("process")?;
        let mut num = |k: &str, v: Option<u64>| -> fmt::Result {
            match v {
                Some(v) => write!(w, "\t{k}={v}"),
                None => Ok(()),
            }
        };
        num("pid", p.pid.map(u64::from))?;
        num("ppid", p.ppid.map(u64::from))?;
        if let Some(c) = p.clock {
            w.write_str(match c {
                Clock::Perf => "\tclock=perf",
                Clock::Itimer => "\tclock=itimer",
            })?;
        }
        let mut num = |k: &str, v: Option<u64>| -> fmt::Result {
            match v {
                Some(v) => write!(w, "\t{k}={v}"),
                None => Ok(()),
            }
        };
        num("nominal_hz", p.nominal_hz.map(u64::from))?;
        num("samples", p.samples)?;
        num("cpu_user_ns", p.cpu_user_ns)?;
        num("cpu_system_ns", p.cpu_system_ns)?;
        num(
            "threads_without_clock",
            p.threads_without_clock.map(u64::from),
        )?;
        num("clock_closed", p.clock_closed.map(u64::from))?;
        w.write_str("\n")
    })();
    match (r, w.err) {
        (Err(_), Some(err)) => Err(err),
        _ => Ok(()),
    }
}

/// A whole manifest: the process (version 2, when its line is there) and the objects.
#[cfg(feature = "alloc")]
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Manifest<'a> {
    /// 1 or 2.
    pub version: u32,
    /// The `process` line, if any.
    pub process: Option<Process>,
    /// The objects, in file order.
    pub entries: alloc::vec::Vec<Entry<'a>>,
}

/// The manifest's name for a gmon file name: `<gmon name>.objects`.
#[cfg(feature = "alloc")]
pub fn manifest_name(gmon_file_name: &str) -> alloc::string::String {
    alloc::format!("{gmon_file_name}.objects")
}

/// Executable or shared object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// The main program.
    Exe,
    /// A shared object (including those loaded with dlopen).
    Lib,
}

/// One line of the manifest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry<'a> {
    /// `exe` or `lib`.
    pub kind: Kind,
    /// The gmon file, relative to the manifest's directory.
    pub gmon_file: &'a [u8],
    /// Build-id bytes (empty: none).
    pub build_id: BuildId,
    /// Runtime address minus link-time address.
    pub bias: u64,
    /// Link-time start of the profiled code.
    pub text_start: u64,
    /// Link-time end (exclusive).
    pub text_end: u64,
    /// The object's path (unescaped, as the loader saw it).
    pub path: Path<'a>,
}

/// A build-id of up to 64 bytes (GNU build-ids are 20).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct BuildId {
    len: u8,
    bytes: [u8; 64],
}

impl BuildId {
    /// No build-id.
    pub const NONE: BuildId = BuildId {
        len: 0,
        bytes: [0; 64],
    };

    /// From bytes (`None` if longer than 64).
    pub fn new(b: &[u8]) -> Option<BuildId> {
        let mut id = BuildId::NONE;
        id.bytes.get_mut(..b.len())?.copy_from_slice(b);
        id.len = b.len() as u8;
        Some(id)
    }

    /// The bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..usize::from(self.len)]
    }
}

impl fmt::Debug for BuildId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl fmt::Display for BuildId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.len == 0 {
            return f.write_str("-");
        }
        for b in self.as_bytes() {
            write!(f, "{b:02x}")?;
        }
        Ok(())
    }
}

/// A path as stored in the manifest: escaped bytes, unescaped on demand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Path<'a>(&'a [u8]);

impl<'a> Path<'a> {
    /// Wrap raw (unescaped) bytes for writing.
    pub fn raw(bytes: &'a [u8]) -> Path<'a> {
        Path(bytes)
    }

    /// The escaped form, as in the file (when read) or as given (when written).
    pub fn stored(&self) -> &'a [u8] {
        self.0
    }

    /// The unescaped bytes.
    #[cfg(feature = "alloc")]
    pub fn unescaped(&self) -> alloc::vec::Vec<u8> {
        unescape(self.0)
    }
}

#[cfg(feature = "alloc")]
fn unescape(s: &[u8]) -> alloc::vec::Vec<u8> {
    let mut out = alloc::vec::Vec::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        if s[i] == b'%' && i + 2 < s.len() {
            if let (Some(h), Some(l)) = (hex_digit(s[i + 1]), hex_digit(s[i + 2])) {
                out.push(h << 4 | l);
                i += 3;
                continue;
            }
        }
        out.push(s[i]);
        i += 1;
    }
    out
}

#[cfg(feature = "alloc")]
fn hex_digit(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

/// Adapter: `core::fmt::Write` into a [`Sink`], remembering the sink's error.
struct FmtSink<'s, S: Sink> {
    sink: &'s mut S,
    err: Option<S::Error>,
}

impl<S: Sink> fmt::Write for FmtSink<'_, S> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.sink.write_all(s.as_bytes()).map_err(|e| {
            self.err = Some(e);
            fmt::Error
        })
    }
}

/// Write the first line. Call once, before any [`write_entry`].
pub fn write_header<S: Sink>(sink: &mut S) -> Result<(), S::Error> {
    sink.write_all(FIRST_LINE.as_bytes())?;
    sink.write_all(b"\n")
}

/// Write one entry (no allocation). `e.path` holds the raw path; it is escaped here. The
/// gmon file name must not contain TAB, LF or CR (the runtime chooses it).
pub fn write_entry<S: Sink>(sink: &mut S, e: &Entry<'_>) -> Result<(), S::Error> {
    let mut w = FmtSink { sink, err: None };
    let r = (|| -> fmt::Result {
        use fmt::Write;
        w.write_str(match e.kind {
            Kind::Exe => "exe\t",
            Kind::Lib => "lib\t",
        })?;
        for chunk in e.gmon_file.utf8_chunks() {
            w.write_str(chunk.valid())?;
            for _ in chunk.invalid() {
                w.write_str("?")?;
            }
        }
        write!(
            w,
            "\t{}\t{:#x}\t{:#x}\t{:#x}\t",
            e.build_id, e.bias, e.text_start, e.text_end
        )?;
        for &b in e.path.0 {
            match b {
                b'\t' | b'\n' | b'\r' | b'%' => write!(w, "%{b:02x}")?,
                _ => {
                    let buf = [b];
                    // Raw bytes pass through; the sink takes bytes, not text.
                    w.sink.write_all(&buf).map_err(|err| {
                        w.err = Some(err);
                        fmt::Error
                    })?;
                }
            }
        }
        w.write_str("\n")
    })();
    match (r, w.err) {
        (Err(_), Some(err)) => Err(err),
        _ => Ok(()),
    }
}

/// A malformed manifest: the line (1-based), its byte offset, and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ManifestError {
    /// Line number, from 1.
    pub line: usize,
    /// Byte offset of the start of the offending field.
    pub offset: u64,
    /// What is wrong.
    pub what: &'static str,
}

impl fmt::Display for ManifestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "objects manifest, line {}: {} (byte {})",
            self.line, self.what, self.offset
        )
    }
}

#[cfg(feature = "std")]
impl std::error::Error for ManifestError {}

#[cfg(feature = "alloc")]
fn parse_hex(s: &[u8]) -> Option<u64> {
    let digits = s.strip_prefix(b"0x")?;
    if digits.is_empty() || digits.len() > 16 {
        return None;
    }
    digits
        .iter()
        .try_fold(0u64, |acc, &c| Some(acc << 4 | u64::from(hex_digit(c)?)))
}

/// Parse a whole manifest's objects (version 1 or 2; see [`parse_manifest`] for the process).
#[cfg(feature = "alloc")]
pub fn parse(data: &[u8]) -> Result<alloc::vec::Vec<Entry<'_>>, ManifestError> {
    parse_manifest(data).map(|m| m.entries)
}

#[cfg(feature = "alloc")]
fn parse_process(raw: &[u8], start: usize, line: usize) -> Result<Process, ManifestError> {
    let mut p = Process::default();
    let mut pos = start;
    for (k, field) in raw.split(|&b| b == b'\t').enumerate() {
        let at = pos;
        pos += field.len() + 1;
        if k == 0 {
            continue; // "process"
        }
        let err = |what| ManifestError {
            line,
            offset: at as u64,
            what,
        };
        let Some(eq) = field.iter().position(|&b| b == b'=') else {
            return Err(err("process field is not key=value"));
        };
        let (key, value) = (&field[..eq], &field[eq + 1..]);
        let dec = || -> Result<u64, ManifestError> {
            if value.is_empty() || value.len() > 20 || !value.iter().all(u8::is_ascii_digit) {
                return Err(err("process value is not a decimal number"));
            }
            value
                .iter()
                .try_fold(0u64, |n, &d| {
                    n.checked_mul(10)?.checked_add(u64::from(d - b'0'))
                })
                .ok_or_else(|| err("process value is too large"))
        };
        let dec32 = || -> Result<u32, ManifestError> {
            u32::try_from(dec()?).map_err(|_| err("process value is too large"))
        };
        match key {
            b"pid" => p.pid = Some(dec32()?),
            b"ppid" => p.ppid = Some(dec32()?),
            b"clock" => {
                p.clock = Some(match value {
                    b"perf" => Clock::Perf,
                    b"itimer" => Clock::Itimer,
                    _ => return Err(err("clock is neither perf nor itimer")),
                })
            }
            b"nominal_hz" => p.nominal_hz = Some(dec32()?),
            b"samples" => p.samples = Some(dec()?),
            b"cpu_user_ns" => p.cpu_user_ns = Some(dec()?),
            b"cpu_system_ns" => p.cpu_system_ns = Some(dec()?),
            b"threads_without_clock" => p.threads_without_clock = Some(dec32()?),
            b"clock_closed" => p.clock_closed = Some(dec()? != 0),
            _ => {} // a later version's
        }
    }
    Ok(p)
}

/// Parse a whole manifest, version 1 or 2.
#[cfg(feature = "alloc")]
pub fn parse_manifest(data: &[u8]) -> Result<Manifest<'_>, ManifestError> {
    let mut out = alloc::vec::Vec::new();
    let mut version = 0;
    let mut process = None;
    let mut offset = 0usize;
    let mut first = true;
    for (i, raw) in data.split(|&b| b == b'\n').enumerate() {
        let line_no = i + 1;
        let start = offset;
        offset += raw.len() + 1;
        let err = |at: usize, what| ManifestError {
            line: line_no,
            offset: at as u64,
            what,
        };
        if first {
            version = match raw {
                r if r == FIRST_LINE_V1.as_bytes() => 1,
                r if r == FIRST_LINE.as_bytes() => 2,
                _ => {
                    return Err(err(
                        start,
                        "not a profil-rs objects manifest, version 1 or 2",
                    ))
                }
            };
            first = false;
            continue;
        }
        if raw.is_empty() || raw.starts_with(b"#") {
            continue;
        }
        if version >= 2 && (raw == b"process" || raw.starts_with(b"process\t")) {
            if process.is_some() {
                return Err(err(start, "a second process line"));
            }
            process = Some(parse_process(raw, start, line_no)?);
            continue;
        }
        let mut fields: [&[u8]; 7] = [&[]; 7];
        let mut starts = [start; 7];
        let mut n = 0;
        let mut pos = start;
        for f in raw.splitn(7, |&b| b == b'\t') {
            fields[n] = f;
            starts[n] = pos;
            pos += f.len() + 1;
            n += 1;
        }
        if n != 7 {
            return Err(err(start, "expected 7 TAB-separated fields"));
        }
        let kind = match fields[0] {
            b"exe" => Kind::Exe,
            b"lib" => Kind::Lib,
            _ => return Err(err(starts[0], "kind is neither exe nor lib")),
        };
        if fields[1].is_empty() || fields[1].contains(&b'\r') {
            return Err(err(starts[1], "bad gmon file name"));
        }
        let build_id = if fields[2] == b"-" {
            BuildId::NONE
        } else {
            let h = fields[2];
            if h.len() % 2 != 0 || h.len() > 128 {
                return Err(err(
                    starts[2],
                    "build-id is not an even number of hex digits (at most 128)",
                ));
            }
            let mut bytes = [0u8; 64];
            for (k, pair) in h.chunks(2).enumerate() {
                match (hex_digit(pair[0]), hex_digit(pair[1])) {
                    (Some(a), Some(b)) => bytes[k] = a << 4 | b,
                    _ => return Err(err(starts[2], "build-id is not hex")),
                }
            }
            BuildId::new(&bytes[..h.len() / 2]).unwrap_or(BuildId::NONE)
        };
        let num = |k: usize, what| parse_hex(fields[k]).ok_or_else(|| err(starts[k], what));
        let bias = num(3, "load bias is not 0x-prefixed hex")?;
        let text_start = num(4, "text start is not 0x-prefixed hex")?;
        let text_end = num(5, "text end is not 0x-prefixed hex")?;
        if text_end < text_start {
            return Err(err(starts[5], "text end is below text start"));
        }
        if fields[6].is_empty() {
            return Err(err(starts[6], "empty path"));
        }
        out.push(Entry {
            kind,
            gmon_file: fields[1],
            build_id,
            bias,
            text_start,
            text_end,
            path: Path(fields[6]),
        });
    }
    if first {
        return Err(ManifestError {
            line: 1,
            offset: 0,
            what: "empty file",
        });
    }
    Ok(Manifest {
        version,
        process,
        entries: out,
    })
}

#[cfg(all(test, feature = "alloc"))]
mod tests {
    use super::*;
    use alloc::vec::Vec;

    fn entry<'a>(kind: Kind, file: &'a [u8], path: &'a [u8], id: &[u8]) -> Entry<'a> {
        Entry {
            kind,
            gmon_file: file,
            build_id: BuildId::new(id).unwrap(),
            bias: 0x7f3a_1c00_0000,
            text_start: 0xe000,
            text_end: 0x8f0e5,
            path: Path::raw(path),
        }
    }

    #[test]
    fn round_trip_with_odd_paths() {
        let entries = [
            entry(
                Kind::Exe,
                b"gmon.out",
                b"/home/me/prog",
                &[0x3c, 0x5e, 0x01],
            ),
            entry(Kind::Lib, b"gmon.out.1", b"/tmp/a\tb\nc%d\r\xffe", b""),
        ];
        let mut buf = Vec::new();
        write_header(&mut buf).unwrap();
        for e in &entries {
            write_entry(&mut buf, e).unwrap();
        }
        let expected: &[u8] = b"profil-rs objects 2\nexe\tgmon.out\t3c5e01\t0x7f3a1c000000\t0xe000\t0x8f0e5\t/home/me/prog\nlib\tgmon.out.1\t-\t0x7f3a1c000000\t0xe000\t0x8f0e5\t/tmp/a%09b%0ac%25d%0d\xffe\n";
        assert_eq!(buf, expected);
        let got = parse(&buf).unwrap();
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].kind, Kind::Exe);
        assert_eq!(got[0].build_id.as_bytes(), &[0x3c, 0x5e, 0x01]);
        assert_eq!(got[0].path.unescaped(), b"/home/me/prog");
        assert_eq!(got[1].build_id, BuildId::NONE);
        assert_eq!(got[1].path.unescaped(), b"/tmp/a\tb\nc%d\r\xffe");
        assert_eq!(got[1].gmon_file, b"gmon.out.1");
        assert_eq!(
            (got[1].bias, got[1].text_start, got[1].text_end),
            (0x7f3a_1c00_0000, 0xe000, 0x8f0e5)
        );
    }

    #[test]
    fn process_line_round_trips_and_old_manifests_still_read() {
        let p = Process {
            pid: Some(4242),
            ppid: Some(1),
            clock: Some(Clock::Itimer),
            nominal_hz: Some(250),
            samples: Some(500),
            cpu_user_ns: Some(2_500_000_000),
            cpu_system_ns: Some(500_000_000),
            threads_without_clock: Some(2),
            clock_closed: Some(false),
        };
        let mut buf = Vec::new();
        write_header(&mut buf).unwrap();
        write_process(&mut buf, &p).unwrap();
        write_entry(&mut buf, &entry(Kind::Exe, b"gmon.out.4242", b"/p", b"")).unwrap();
        assert!(buf.starts_with(b"profil-rs objects 2\nprocess\tpid=4242\tppid=1\tclock=itimer\tnominal_hz=250\tsamples=500\tcpu_user_ns=2500000000\tcpu_system_ns=500000000\tthreads_without_clock=2\tclock_closed=0\nexe\t"));
        let m = parse_manifest(&buf).unwrap();
        assert_eq!((m.version, m.process), (2, Some(p)));
        assert_eq!(m.entries.len(), 1);
        // 3 s of CPU sampled by the itimer, 500 samples at 250/s = 2 s: 1 s unsampled.
        assert_eq!(p.unsampled_seconds(), Some(1.0));
        let perf = Process {
            clock: Some(Clock::Perf),
            ..p
        };
        assert_eq!(perf.unsampled_seconds(), Some(0.5));
        assert_eq!(Process::default().unsampled_seconds(), None);
        // Unknown keys (a later version's) are skipped; a version 1 manifest has no process.
        let later = b"profil-rs objects 2\nprocess\tpid=7\tfuture=xyz\n";
        assert_eq!(parse_manifest(later).unwrap().process.unwrap().pid, Some(7));
        let v1 = b"profil-rs objects 1\nexe\tgmon.out\t-\t0x0\t0x10\t0x20\t/p\n";
        let m = parse_manifest(v1).unwrap();
        assert_eq!((m.version, m.process, m.entries.len()), (1, None, 1));
    }

    #[test]
    fn malformed_lines_name_line_and_offset() {
        let good = b"profil-rs objects 1\n# comment\n\nexe\tgmon.out\t-\t0x0\t0x10\t0x20\t/p\n";
        assert_eq!(parse(good).unwrap().len(), 1);
        let bad = |s: &[u8]| parse(s).unwrap_err();
        assert_eq!(
            bad(b"").what,
            "not a profil-rs objects manifest, version 1 or 2"
        );
        assert_eq!(bad(b"profil-rs objects 3\n").line, 1);
        // Version 1 has no process line: "process" there is an unknown kind.
        let e = bad(b"profil-rs objects 1\nprocess\tpid=1\n");
        assert_eq!(e.what, "expected 7 TAB-separated fields");
        let e = bad(b"profil-rs objects 2\nprocess\tpid=x\n");
        assert_eq!(
            (e.what, e.offset),
            ("process value is not a decimal number", 28)
        );
        let e = bad(b"profil-rs objects 2\nprocess\tclock=tsc\n");
        assert_eq!(e.what, "clock is neither perf nor itimer");
        let e = bad(b"profil-rs objects 2\nprocess\npid=1\n");
        assert_eq!(e.line, 3);
        let e = bad(b"profil-rs objects 2\nprocess\nprocess\n");
        assert_eq!(e.what, "a second process line");
        let e = bad(b"profil-rs objects 1\nexe\tgmon.out\t-\t0x0\t0x10\n");
        assert_eq!((e.line, e.offset), (2, 20));
        let e = bad(b"profil-rs objects 1\ndll\tg\t-\t0x0\t0x10\t0x20\t/p\n");
        assert_eq!(e.what, "kind is neither exe nor lib");
        let e = bad(b"profil-rs objects 1\nlib\tg\tabc\t0x0\t0x10\t0x20\t/p\n");
        assert_eq!((e.line, e.offset), (2, 26));
        let e = bad(b"profil-rs objects 1\nlib\tg\t-\t12\t0x10\t0x20\t/p\n");
        assert_eq!(e.what, "load bias is not 0x-prefixed hex");
        let e = bad(b"profil-rs objects 1\nlib\tg\t-\t0x0\t0x30\t0x20\t/p\n");
        assert_eq!(e.what, "text end is below text start");
        let e = bad(b"profil-rs objects 1\nlib\tg\t-\t0x0\t0x10\t0x20\t\n");
        assert_eq!(e.what, "empty path");
        let e = bad(b"profil-rs objects 1\nlib\tg\t-\t0x0\t0x10000000000000000\t0x20\t/p\n");
        assert_eq!(e.what, "text start is not 0x-prefixed hex");
        let long = [b'a'; 130];
        let mut l = Vec::from(&b"profil-rs objects 1\nlib\tg\t"[..]);
        l.extend_from_slice(&long);
        l.extend_from_slice(b"\t0x0\t0x1\t0x2\t/p\n");
        assert!(bad(&l).what.starts_with("build-id"));
    }
}
