//! Settings read from the environment once, in the constructor.
//!
//! | variable | values | default |
//! |---|---|---|
//! | `PROFIL_OFF` | `1` turns the automatic profile off, silently (the `profil`/`pcsample` interfaces still work, at `PROFIL_HZ`); `0` or empty keeps it on | on |
//! | `PROFIL_HZ` | samples per CPU-second requested, 1 ..= 50000 | [`DEFAULT_HZ`] |
//! | `PROFIL_TIMER` | `perf` or `itimer` | perf_event, falling back to `itimer` |
//! | `PROFIL_SCALE` | profil(2) scale, 2 ..= 65536 (65536 = one counter per 2 bytes of text) | 32768: one counter per 4 bytes |
//! | `PROFIL_FORMAT` | `gnu` or `bsd` (4.4BSD) | `gnu` |
//! | `PROFIL_OUT` | output path, ignored in secure-execution processes (setuid, setgid, file capabilities) | see below |
//! | `GMON_OUT_PREFIX` | as glibc: output `PREFIX.PID`, ignored in secure-execution processes | unset |
//! | `PROFIL_MODE` | `pcsample`: keep every sample (time, thread, PC) and write a pcsample file instead of the histogram, at the same name ([`crate::pcmode`]); `gmon` | `gmon` |
//! | `PROFIL_PCSAMPLES` | pcsample buffer size in samples, 1 ..= 2^28 | [`DEFAULT_PCSAMPLES`] |
//! | `PROFIL_RANGES` | `all`: also profile every shared object, each into its own file, listed in `<output>.objects` ([`crate::objects`]); `exe`: the executable only | `all` |
//!
//! Without `PROFIL_OUT` and `GMON_OUT_PREFIX` the profile goes to `gmon.out` in the working
//! directory at exit. An unknown or invalid value produces one warning line on stderr and the
//! default is used: a profiler must never stop the program it profiles.
//!
//! In a secure-execution process (`AT_SECURE`: setuid, setgid, or file capabilities) every
//! setting that names a path is ignored, as glibc ignores `GMON_OUT_PREFIX` there: otherwise
//! whoever runs a setuid-root program could have it replace any file with a profile.

use core::fmt::{self, Write};

use crate::buf::{FixedBuf, Lossy};

/// The default sampling rate in samples per CPU-second. 1 kHz is what a two-second run needs
/// for shares within about one percentage point (2,000 samples; at 100 Hz the sampling noise
/// alone is about 2 points, see BENCHMARKS.md, "accuracy"). What a sample costs depends on the
/// machine: on the reference virtual machine every perf_event sample costs about 24 µs of CPU
/// (each one is a timer interrupt, and timer interrupts are expensive there), so 1 kHz costs
/// about 2.4% and 100 Hz about 0.5–1% (BENCHMARKS.md, "runtime"). Where that matters more than
/// resolution, lower it with `PROFIL_HZ`, or use `PROFIL_TIMER=itimer`, which samples on the
/// scheduler tick the kernel takes anyway (at most `CONFIG_HZ` samples per CPU-second).
pub const DEFAULT_HZ: u32 = 1000;
/// The highest rate accepted (the kernel throttles perf events near 100 kHz, and each sample
/// costs microseconds of signal delivery).
pub const MAX_HZ: u32 = 50_000;
/// Samples the pcsample buffer holds by default: 10 minutes of one busy thread at the default
/// rate (24 bytes each, 14 MiB of address space, mapped lazily: only what is used costs memory).
pub const DEFAULT_PCSAMPLES: u32 = 600_000;
/// The largest pcsample buffer (6 GiB of address space).
pub const MAX_PCSAMPLES: u32 = 1 << 28;
/// profil scale for exactly 4-byte bins.
pub const DEFAULT_SCALE: u32 = 0x8000;

/// Which clock drives sampling.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimerChoice {
    /// perf_event task clock, falling back to `setitimer(ITIMER_PROF)` if it cannot be opened.
    Auto,
    /// perf_event task clock only (falls back with a warning).
    Perf,
    /// `setitimer(ITIMER_PROF)`: tick-limited (at most CONFIG_HZ samples per second).
    Itimer,
}

/// Output file format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// GNU tagged format ("gmon" magic).
    Gnu,
    /// 4.4BSD format (`struct gmonhdr`).
    Bsd,
}

/// Everything the environment decides.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Config {
    /// `PROFIL_OFF=1`: do nothing at all.
    pub off: bool,
    /// Requested samples per CPU-second.
    pub hz: u32,
    /// Requested timer backend.
    pub timer: TimerChoice,
    /// profil scale.
    pub scale: u32,
    /// Output format.
    pub format: Format,
    /// `PROFIL_OUT`, if set, non-empty and honoured (not a secure-execution process).
    pub out: Option<&'static [u8]>,
    /// `GMON_OUT_PREFIX`, if set, non-empty and honoured (not a secure-execution process).
    pub prefix: Option<&'static [u8]>,
    /// `PROFIL_RANGES=all` (the default): profile the shared objects too.
    pub ranges_all: bool,
    /// `PROFIL_MODE=pcsample`.
    pub pcsample: bool,
    /// `PROFIL_PCSAMPLES`.
    pub pcsamples: u32,
    /// `PROFIL_STACKS` (default `1`: arcs in the profile and the stacks file beside it; `0`:
    /// PCs only; `file` is accepted as a synonym of `1`; `fp`: like `1`, but walked by frame
    /// pointers alone, ignoring the CFI — a benchmark setting, to compare the two walks).
    pub stacks: bool,
    /// `PROFIL_STACKS=fp`.
    pub stacks_fp_only: bool,
    /// `PROFIL_STACK_SLOTS`: slots in each stack table (a test setting).
    pub stack_slots: u32,
    /// `PROFIL_STACK_STATS=1`: print the walk statistics at exit (a test setting).
    pub stack_stats: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            off: false,
            hz: DEFAULT_HZ,
            timer: TimerChoice::Auto,
            scale: DEFAULT_SCALE,
            format: Format::Gnu,
            out: None,
            prefix: None,
            ranges_all: true,
            pcsample: false,
            pcsamples: DEFAULT_PCSAMPLES,
            stacks: true,
            stacks_fp_only: false,
            stack_slots: crate::stacks::DEFAULT_SLOTS as u32,
            stack_stats: false,
        }
    }
}

/// One warning line (without the trailing newline).
pub type Warning = FixedBuf<256>;

fn warning(args: fmt::Arguments<'_>) -> Warning {
    let mut w = Warning::new();
    let _ = w.write_str("profil-rt: ");
    let _ = w.write_fmt(args);
    w
}

fn parse_u32(v: &[u8]) -> Option<u32> {
    if v.is_empty() || v.len() > 10 || !v.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let n = v.iter().fold(0u64, |n, &d| n * 10 + u64::from(d - b'0'));
    u32::try_from(n).ok()
}

impl Config {
    /// Read the settings through `get` (a `getenv`), reporting each bad value to `warn`.
    /// `secure` is true in secure-execution processes (setuid, setgid, file capabilities).
    pub fn from_env(
        get: impl Fn(&str) -> Option<&'static [u8]>,
        secure: bool,
        mut warn: impl FnMut(&Warning),
    ) -> Config {
        let mut c = Config::default();
        if let Some(v) = get("PROFIL_OFF") {
            match v {
                b"1" => c.off = true,
                b"" | b"0" => {}
                _ => warn(&warning(format_args!(
                    "ignoring PROFIL_OFF={} (expected 1 or 0); profiling stays on",
                    Lossy(v)
                ))),
            }
        }
        // With PROFIL_OFF=1 the other settings still apply to the programming interfaces,
        // but the runtime stays silent about them.
        let off = c.off;
        let mut warn = |w: &Warning| {
            if !off {
                warn(w)
            }
        };
        if let Some(v) = get("PROFIL_HZ") {
            match parse_u32(v) {
                Some(hz) if (1..=MAX_HZ).contains(&hz) => c.hz = hz,
                _ => warn(&warning(format_args!(
                    "ignoring PROFIL_HZ={} (expected a rate from 1 to {MAX_HZ}); using {DEFAULT_HZ}",
                    Lossy(v)
                ))),
            }
        }
        if let Some(v) = get("PROFIL_TIMER") {
            match v {
                b"perf" => c.timer = TimerChoice::Perf,
                b"itimer" => c.timer = TimerChoice::Itimer,
                _ => warn(&warning(format_args!(
                    "ignoring PROFIL_TIMER={} (expected perf or itimer); using the default",
                    Lossy(v)
                ))),
            }
        }
        if let Some(v) = get("PROFIL_SCALE") {
            match parse_u32(v) {
                Some(s) if (2..=0x10000).contains(&s) => c.scale = s,
                _ => warn(&warning(format_args!(
                    "ignoring PROFIL_SCALE={} (expected a profil scale from 2 to 65536); using {DEFAULT_SCALE}",
                    Lossy(v)
                ))),
            }
        }
        if let Some(v) = get("PROFIL_FORMAT") {
            match v {
                b"gnu" => c.format = Format::Gnu,
                b"bsd" => c.format = Format::Bsd,
                _ => warn(&warning(format_args!(
                    "ignoring PROFIL_FORMAT={} (expected gnu or bsd); using gnu",
                    Lossy(v)
                ))),
            }
        }
        if let Some(v) = get("PROFIL_RANGES") {
            match v {
                b"" | b"all" => {}
                b"exe" => c.ranges_all = false,
                _ => warn(&warning(format_args!(
                    "ignoring PROFIL_RANGES={} (expected all or exe); profiling every object",
                    Lossy(v)
                ))),
            }
        }
        if let Some(v) = get("PROFIL_MODE") {
            match v {
                b"pcsample" => c.pcsample = true,
                b"" | b"gmon" => {}
                _ => warn(&warning(format_args!(
                    "ignoring PROFIL_MODE={} (expected gmon or pcsample); writing a gmon file",
                    Lossy(v)
                ))),
            }
        }
        if let Some(v) = get("PROFIL_PCSAMPLES") {
            match parse_u32(v) {
                Some(n) if (1..=MAX_PCSAMPLES).contains(&n) => c.pcsamples = n,
                _ => warn(&warning(format_args!(
                    "ignoring PROFIL_PCSAMPLES={} (expected 1 to {MAX_PCSAMPLES}); using {DEFAULT_PCSAMPLES}",
                    Lossy(v)
                ))),
            }
        }
        if let Some(v) = get("PROFIL_STACKS") {
            match v {
                b"0" => c.stacks = false,
                b"" | b"1" | b"file" => {}
                b"fp" => c.stacks_fp_only = true,
                _ => warn(&warning(format_args!(
                    "ignoring PROFIL_STACKS={} (expected 1, 0 or fp); recording stacks",
                    Lossy(v)
                ))),
            }
        }
        c.stack_stats = get("PROFIL_STACK_STATS") == Some(b"1");
        if let Some(v) = get("PROFIL_STACK_SLOTS") {
            match parse_u32(v) {
                Some(n) if (1..=1 << 24).contains(&n) => c.stack_slots = n,
                _ => warn(&warning(format_args!(
                    "ignoring PROFIL_STACK_SLOTS={} (expected 1 to {}); using {}",
                    Lossy(v),
                    1 << 24,
                    crate::stacks::DEFAULT_SLOTS
                ))),
            }
        }
        // Settings that name a path: never in a secure-execution process.
        if !secure {
            c.out = get("PROFIL_OUT").filter(|v| !v.is_empty());
            c.prefix = get("GMON_OUT_PREFIX").filter(|v| !v.is_empty());
        }
        c
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn secure_processes_ignore_every_setting_that_names_a_path() {
        let vars = [
            ("PROFIL_OUT", "/root-only/victim"),
            ("GMON_OUT_PREFIX", "/root-only/pre"),
            ("PROFIL_HZ", "2000"),
        ];
        let (c, w) = parse(&vars, true);
        assert_eq!((c.out, c.prefix, c.hz), (None, None, 2000));
        assert!(w.is_empty(), "{w:?}");
        let (c, _) = parse(&vars, false);
        assert_eq!(
            (c.out, c.prefix),
            (
                Some(&b"/root-only/victim"[..]),
                Some(&b"/root-only/pre"[..])
            )
        );
    }

    use super::*;
    use std::string::String;
    use std::vec::Vec;

    fn parse(vars: &[(&'static str, &'static str)], secure: bool) -> (Config, Vec<String>) {
        let mut warnings = Vec::new();
        let c = Config::from_env(
            |name| {
                vars.iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| v.as_bytes())
            },
            secure,
            |w| warnings.push(String::from_utf8(w.as_bytes().to_vec()).unwrap()),
        );
        (c, warnings)
    }

    #[test]
    fn empty_environment_gives_defaults() {
        let (c, w) = parse(&[], false);
        assert_eq!(c, Config::default());
        assert!(w.is_empty());
        assert_eq!(c.scale, 0x8000);
    }

    #[test]
    fn valid_values_are_taken() {
        let (c, w) = parse(
            &[
                ("PROFIL_HZ", "4000"),
                ("PROFIL_TIMER", "itimer"),
                ("PROFIL_SCALE", "65536"),
                ("PROFIL_FORMAT", "bsd"),
                ("PROFIL_OUT", "/tmp/x.out"),
                ("GMON_OUT_PREFIX", "pre"),
                ("PROFIL_RANGES", "exe"),
                ("PROFIL_MODE", "pcsample"),
                ("PROFIL_PCSAMPLES", "500"),
            ],
            false,
        );
        assert!(w.is_empty(), "{w:?}");
        assert!(!c.ranges_all && c.pcsample);
        assert!(
            Config::default().ranges_all,
            "every shared object is profiled by default"
        );
        assert_eq!(c.pcsamples, 500);
        assert_eq!(c.hz, 4000);
        assert_eq!(c.timer, TimerChoice::Itimer);
        assert_eq!(c.scale, 65536);
        assert_eq!(c.format, Format::Bsd);
        assert_eq!(c.out, Some(&b"/tmp/x.out"[..]));
        assert_eq!(c.prefix, Some(&b"pre"[..]));
    }

    #[test]
    fn each_bad_value_warns_once_and_keeps_the_default() {
        let (c, w) = parse(
            &[
                ("PROFIL_OFF", "yes"),
                ("PROFIL_HZ", "0"),
                ("PROFIL_TIMER", "hpet"),
                ("PROFIL_SCALE", "1"),
                ("PROFIL_FORMAT", "json"),
                ("PROFIL_RANGES", "libs"),
                ("PROFIL_MODE", "trace"),
                ("PROFIL_PCSAMPLES", "0"),
            ],
            false,
        );
        assert_eq!(c, Config::default());
        assert_eq!(w.len(), 8, "{w:?}");
        assert!(w
            .iter()
            .all(|l| l.starts_with("profil-rt: ignoring ") && !l.contains('\n')));
        assert!(w[1].contains("PROFIL_HZ=0"));
        for bad in ["-5", "1e3", "99999999999", "", " 100", "50001"] {
            let v: &'static str = std::boxed::Box::leak(String::from(bad).into_boxed_str());
            let (c, w) = parse(&[("PROFIL_HZ", v)], false);
            assert_eq!(c.hz, DEFAULT_HZ, "{bad}");
            assert_eq!(w.len(), 1, "{bad}");
        }
    }

    #[test]
    fn off_wins_and_secure_processes_ignore_the_prefix() {
        let (c, w) = parse(&[("PROFIL_OFF", "1"), ("PROFIL_HZ", "bad")], false);
        assert!(c.off);
        assert!(w.is_empty(), "PROFIL_OFF=1 is silent: {w:?}");
        let (c, _) = parse(&[("PROFIL_OFF", "1"), ("PROFIL_HZ", "1000")], false);
        assert_eq!(
            (c.off, c.hz),
            (true, 1000),
            "the interfaces still use PROFIL_HZ"
        );
        let (c, _) = parse(&[("GMON_OUT_PREFIX", "pre")], true);
        assert_eq!(c.prefix, None);
        let (c, _) = parse(&[("PROFIL_OFF", "0"), ("PROFIL_OUT", "")], false);
        assert!(!c.off);
        assert_eq!(c.out, None);
    }
}
