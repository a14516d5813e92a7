//! `profil-report run [--hz N] [--out FILE] [--report FILE] [--all|--merge] [--] CMD [ARGS...]`:
//! profile an unmodified, dynamically linked program — or a wrapper, a shell script, a whole
//! process tree — and print its report.
//!
//! What it does, in order:
//!
//! 1. Resolves CMD as a shell would (a name without `/` is looked up in `PATH`) and reads it:
//!    a non-ELF file that is not a script, a statically linked executable (no `PT_INTERP`, so
//!    the dynamic loader never sees `LD_PRELOAD`) or one for another architecture is refused
//!    before anything runs, each with what to do instead. Scripts run (their interpreter is
//!    preloaded like any program), and so do stripped programs (see step 5). A program that
//!    already has the runtime linked in is run without the preload (two samplers would
//!    double count).
//! 2. Runs it with stdin, stdout and stderr passed through, and in its environment:
//!    `LD_PRELOAD` = the existing value plus the cached `libprofil_rt.so`;
//!    `GMON_OUT_PREFIX` = a fresh private directory, so that every profiled process image of
//!    the tree writes its own `gmon.<pid>` (a later image of the same pid, after an exec,
//!    `gmon.<pid>.<n>`) with its objects manifest and one file per shared object (the
//!    runtime's lineage rules); `PROFIL_OUT` and `PROFIL_OFF` removed; `PROFIL_HZ` from
//!    `--hz`. Other `PROFIL_*` settings pass through (`PROFIL_RANGES=exe` still limits the
//!    profile to the executables).
//! 3. While it runs, `profil-report` ignores `SIGINT` and `SIGQUIT`: Ctrl-C reaches the program
//!    (whose runtime writes the profile before dying of it), and the report still follows.
//! 4. Keeps every profile ([`super::processes`]): the process image that used the most CPU (by
//!    the CPU time its manifest records) as `--out` (default `gmon.out`, atomically: temp +
//!    rename), every other as `<out>.d/<out>.<pid>` or `<out>.d/<out>.<pid>.<n>`; every
//!    manifest, sampled stacks file (`<file>.stacks`) and shared object's file, renamed to
//!    match, goes into the folder `<out>.d/` too, so the working directory gets `<out>` and
//!    that folder only, and `profil-report <file> <program>` reads any of them later (a
//!    report of `<out>` finds its side files in the folder).
//! 5. Prints the report — **to stderr** unless `--report` names a file (`-` is stdout), so the
//!    program's stdout stays exactly what it would have been, as with `time` or `perf stat`:
//!    by default the busiest process's, with one line listing the others (program, pid, CPU);
//!    `--all` one section per process image, in pid order; `--merge` one per executable (the
//!    processes that ran it summed). Each is read against the executable its manifest names,
//!    across the shared objects when any has samples or the executable is stripped
//!    ([`report::objects`]: `.symtab`, debug files, `.dynsym`, and address ranges of the
//!    object for the rest), else with the default report. JSON adds the process list.
//! 6. Exits with the program's exit status. A program killed by signal N gives 128+N, as a
//!    shell reports it (the signal is not re-raised). Problems with the report itself are
//!    messages on stderr and do not change the status; problems before the program started
//!    (not found, static, not a program) exit with 2.

use std::ffi::{OsStr, OsString};
use std::fs;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};

use super::processes::{self, Found};
use crate::cmd::artifacts::{self, Kind};
use crate::pipeline;
use crate::render::json::{self, OneLine, ReportObject};
use crate::request::{Format, Mode, Request, Timeline};
use crate::{Error, Result};
use serde_json::value::RawValue;

/// What `profil-report run` is asked: the program and how to profile and report it (the
/// binary's `cli` module builds it from the command line).
#[derive(Debug, Default)]
pub struct Options {
    /// The rate, and where the profile and report go.
    pub profile: ProfileOptions,
    /// The program and its arguments.
    pub command: Vec<OsString>,
}

/// Look `cmd` up as `execvp` would: a name containing `/` is a path, anything else is searched
/// in `PATH` (an empty entry meaning the current directory). Returns an absolute path.
pub fn resolve_command(cmd: &OsStr, path_var: Option<&OsStr>) -> Result<PathBuf> {
    let shown = Path::new(cmd).display().to_string();
    if cmd.is_empty() {
        return Err(Error::input("run: the command is empty"));
    }
    let absolute = |p: PathBuf| -> Result<PathBuf> {
        let p = if p.is_absolute() {
            p
        } else {
            std::env::current_dir()?.join(p)
        };
        // Drop `.` components (`/tmp/./prog` → `/tmp/prog`); `..` stays, as symlinks matter.
        Ok(p.components()
            .filter(|c| *c != std::path::Component::CurDir)
            .collect())
    };
    if cmd.as_encoded_bytes().contains(&b'/') {
        let p = PathBuf::from(cmd);
        if !p.exists() {
            return Err(Error::input(format!("run: {shown}: no such file")));
        }
        if p.is_dir() {
            return Err(Error::input(format!("run: {shown}: is a directory")));
        }
        return absolute(p);
    }
    let path_var = path_var.unwrap_or(OsStr::new("/usr/local/bin:/usr/bin:/bin"));
    for dir in std::env::split_paths(path_var) {
        let dir = if dir.as_os_str().is_empty() {
            PathBuf::from(".")
        } else {
            dir
        };
        let candidate = dir.join(cmd);
        let executable = fs::metadata(&candidate)
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0);
        if executable {
            return absolute(candidate);
        }
    }
    Err(Error::input(format!(
        "run: {shown}: command not found in PATH (give a path, e.g. ./{shown})"
    )))
}

/// What `run` found out about the executable before running it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inspection {
    /// The executable has the runtime linked in already (`profil_rt_start` in its symbols).
    pub has_runtime: bool,
    /// It has no `.symtab` (stripped): only exported names can be reported.
    pub stripped: bool,
}

/// `PT_INTERP` present? From the ELF header and program headers (`object`'s ELF reader).
fn has_interpreter(data: &[u8]) -> Option<bool> {
    use object::elf::{FileHeader32, FileHeader64, PT_INTERP};
    use object::read::elf::{FileHeader, ProgramHeader};
    fn any_interp<H: FileHeader>(data: &[u8]) -> Option<bool> {
        let h = H::parse(data).ok()?;
        let e = h.endian().ok()?;
        let phs = h.program_headers(e, data).ok()?;
        Some(phs.iter().any(|p| p.p_type(e) == PT_INTERP))
    }
    match object::FileKind::parse(data).ok()? {
        object::FileKind::Elf32 => any_interp::<FileHeader32<object::Endianness>>(data),
        object::FileKind::Elf64 => any_interp::<FileHeader64<object::Endianness>>(data),
        _ => None,
    }
}

/// ELF class (1: 32-bit, 2: 64-bit) and machine of this very process's executable (the
/// runtime is built for the same target), from its header (`object`'s ELF reader).
fn own_class_and_machine() -> Option<(u8, u16)> {
    use object::elf::{FileHeader32, FileHeader64};
    use object::read::elf::FileHeader;
    use std::io::Read;
    fn machine<H: FileHeader>(h: &[u8]) -> Option<u16> {
        let h = H::parse(h).ok()?;
        Some(h.e_machine(h.endian().ok()?).0)
    }
    // The largest ELF header (64-bit) is 64 bytes.
    let mut h = [0u8; 64];
    fs::File::open("/proc/self/exe")
        .ok()?
        .read_exact(&mut h)
        .ok()?;
    match object::FileKind::parse(&h[..]).ok()? {
        object::FileKind::Elf32 => Some((1, machine::<FileHeader32<object::Endianness>>(&h)?)),
        object::FileKind::Elf64 => Some((2, machine::<FileHeader64<object::Endianness>>(&h)?)),
        _ => None,
    }
}

/// Check that `data` (the file `exe`) can be profiled with `LD_PRELOAD`.
pub fn inspect(exe: &Path, data: &[u8]) -> Result<Inspection> {
    let name = exe.display();
    if data.starts_with(b"#!") {
        // The kernel starts the interpreter, which the loader preloads the runtime into; the
        // programs the script runs inherit it, and each process keeps its own profile.
        return Ok(Inspection {
            has_runtime: false,
            stripped: true,
        });
    }
    if !profil_symbols::elf::looks_like_elf(data) {
        return Err(Error::input(format!(
            "run: {name} is not an ELF executable"
        )));
    }
    let image = profil_symbols::ElfImage::parse(data)
        .map_err(|e| Error::input(format!("run: {name}: {e}")))?;
    if let Some((class, machine)) = own_class_and_machine() {
        if (class == 2) != image.is_64 || machine != image.machine {
            return Err(Error::input(format!(
                "run: {name} is built for another architecture ({}-bit, ELF machine {}) than \
                 the runtime this profil-report carries ({}-bit, machine {machine}); build \
                 profil-report for that target, or link its runtime in",
                if image.is_64 { 64 } else { 32 },
                image.machine,
                if class == 2 { 64 } else { 32 },
            )));
        }
    }
    let has_runtime = [&image.symtab, &image.dynsym]
        .into_iter()
        .flatten()
        .any(|t| {
            // Either entry point (a linker with --gc-sections may keep only one of them).
            t.symbols
                .iter()
                .any(|s| matches!(t.name(s), b"profil_rt_start" | b"profil_rt_finish"))
        });
    match has_interpreter(data) {
        Some(true) => {}
        Some(false) if has_runtime => {}
        Some(false) => {
            return Err(Error::input(format!(
                "run: {name} is statically linked, so LD_PRELOAD cannot inject the runtime: \
                 link the runtime in instead (C: `cc ... $(profil-report runtime-path)`; Rust: \
                 `RUSTFLAGS=\"$(profil-report link-args)\" cargo build --target <host triple>`, \
                 or `cargo profil`), then run the program and `profil-report gmon.out {name}`"
            )))
        }
        None => {
            return Err(Error::input(format!(
                "run: {name}: cannot read its ELF program headers"
            )))
        }
    }
    // A stripped program runs too: its exported functions, its debug files and, for the rest,
    // address ranges of the object name what it did (report::objects).
    Ok(Inspection {
        has_runtime,
        stripped: image.symtab.is_none(),
    })
}

/// The options `run` and `cargo profil` share: the sampling rate, where the profile is kept,
/// and where and how the report is printed.
#[derive(Debug, Default)]
pub struct ProfileOptions {
    /// Samples per CPU-second (sets PROFIL_HZ; None: the runtime's).
    pub hz: Option<u32>,
    /// Where to keep the profile (`gmon.out` on the command line).
    pub out: PathBuf,
    /// Where to print the report: a file, or `-` for stdout (None: stderr).
    pub report: Option<PathBuf>,
    /// Where to also write the interactive HTML report ([`crate::cmd::html`]), if anywhere.
    pub html: Option<PathBuf>,
    /// Which report, in which format, for which processes.
    pub style: ReportStyle,
}

impl ProfileOptions {
    /// Run `launch` ([`profile_and_report`]) and print the report where `--report` says:
    /// stderr (`err`) by default, stdout (`out`) for `-`, else a file created for it.
    pub fn profile_and_report(
        &self,
        launch: &Launch,
        out: &mut impl Write,
        err: &mut impl Write,
    ) -> Result<u8> {
        let style = self.style;
        let html = self.html.as_deref();
        match self.report.as_deref() {
            None => profile_and_report(launch, &self.out, style, html, err),
            Some(p) if p == Path::new("-") => {
                profile_and_report(launch, &self.out, style, html, out)
            }
            Some(p) => {
                let mut f = fs::File::create(p)
                    .map_err(|e| Error::input(format!("{}: {e}", p.display())))?;
                profile_and_report(launch, &self.out, style, html, &mut f)
            }
        }
    }
}

/// How to launch the program being profiled.
#[derive(Debug, Clone)]
pub struct Launch {
    /// Absolute path of the executable (also the ELF the report reads).
    pub program: PathBuf,
    /// Its arguments (without argv\[0\]).
    pub args: Vec<OsString>,
    /// `argv[0]` as the user typed it.
    pub arg0: OsString,
    /// Preload the shared runtime (false when the runtime is linked in).
    pub preload: bool,
    /// `PROFIL_HZ`, if to be set.
    pub hz: Option<u32>,
}

/// What happened.
#[derive(Debug)]
pub struct Outcome {
    /// The program's exit status.
    pub status: ExitStatus,
    /// The program's own profile (its pid's first), in the scratch directory, if it wrote one.
    pub profile: Option<PathBuf>,
    /// Every profile of the process tree, in pid order.
    pub found: Vec<processes::Found>,
    /// The pid of the process started.
    pub pid: u32,
}

/// A private scratch directory, removed on drop.
#[derive(Debug)]
pub struct Scratch(pub PathBuf);

impl Scratch {
    /// Create a fresh directory under the system temp dir.
    pub fn new(tag: &str) -> Result<Self> {
        let base = std::env::temp_dir();
        for attempt in 0..100u32 {
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.subsec_nanos())
                .unwrap_or(0);
            let p = base.join(format!(
                "profil-{tag}-{}-{nanos:x}-{attempt}",
                std::process::id()
            ));
            match fs::create_dir(&p) {
                Ok(()) => return Ok(Scratch(p)),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => {
                    return Err(Error::input(format!(
                        "cannot create a scratch directory in {}: {e}",
                        base.display()
                    )))
                }
            }
        }
        Err(Error::input("cannot create a scratch directory"))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// Ignores `SIGINT` and `SIGQUIT` in this process while alive (restored on drop), so that
/// Ctrl-C stops only the profiled program and the report still gets printed.
struct InterruptsIgnored {
    old: [libc::sighandler_t; 2],
}

impl InterruptsIgnored {
    fn new() -> Self {
        // SAFETY: signal() with SIG_IGN installs no handler code; it only changes this
        // process's disposition, which `drop` restores. Called after the child was spawned,
        // so the child keeps the default disposition.
        let old = unsafe {
            [
                libc::signal(libc::SIGINT, libc::SIG_IGN),
                libc::signal(libc::SIGQUIT, libc::SIG_IGN),
            ]
        };
        InterruptsIgnored { old }
    }
}

impl Drop for InterruptsIgnored {
    fn drop(&mut self) {
        for (sig, old) in [libc::SIGINT, libc::SIGQUIT].into_iter().zip(self.old) {
            if old != libc::SIG_ERR {
                // SAFETY: restores the disposition `new` read back from the kernel.
                unsafe { libc::signal(sig, old) };
            }
        }
    }
}

/// Run the program with the runtime, its profile going to `scratch`.
pub fn execute(launch: &Launch, scratch: &Path) -> Result<Outcome> {
    let prefix = scratch.join("gmon");
    let mut cmd = Command::new(&launch.program);
    cmd.args(&launch.args);
    std::os::unix::process::CommandExt::arg0(&mut cmd, &launch.arg0);
    cmd.env("GMON_OUT_PREFIX", &prefix)
        .env_remove("PROFIL_OUT")
        .env_remove("PROFIL_OFF");
    if let Some(hz) = launch.hz {
        cmd.env("PROFIL_HZ", hz.to_string());
    }
    if launch.preload {
        let so = artifacts::materialize(Kind::Shared)?;
        let mut preload = OsString::new();
        if let Some(old) = std::env::var_os("LD_PRELOAD").filter(|v| !v.is_empty()) {
            preload.push(old);
            preload.push(":");
        }
        preload.push(so.as_os_str());
        cmd.env("LD_PRELOAD", preload);
    }
    let mut child = cmd.spawn().map_err(|e| {
        Error::input(format!(
            "run: cannot start {}: {e}",
            launch.program.display()
        ))
    })?;
    let guard = InterruptsIgnored::new();
    let status = child.wait();
    drop(guard);
    let status = status?;
    let own = scratch.join(format!("gmon.{}", child.id()));
    let found = processes::scan(scratch, "gmon")?;
    Ok(Outcome {
        status,
        profile: own.is_file().then_some(own),
        found,
        pid: child.id(),
    })
}

/// The exit code a shell would show for `status`: the code, or 128 + the signal number.
pub fn shell_exit_code(status: ExitStatus) -> u8 {
    if let Some(c) = status.code() {
        c as u8
    } else if let Some(s) = status.signal() {
        (128 + s) as u8
    } else {
        1
    }
}

/// `exited with status 3` / `was killed by signal 9 (SIGKILL)`.
pub fn describe_status(status: ExitStatus) -> String {
    match (status.code(), status.signal()) {
        (Some(c), _) => format!("exited with status {c}"),
        (None, Some(s)) => format!("was killed by signal {s}{}", signal_name(s)),
        _ => "ended".into(),
    }
}

fn signal_name(s: i32) -> &'static str {
    match s {
        1 => " (SIGHUP)",
        2 => " (SIGINT)",
        3 => " (SIGQUIT)",
        6 => " (SIGABRT)",
        9 => " (SIGKILL)",
        11 => " (SIGSEGV)",
        13 => " (SIGPIPE)",
        15 => " (SIGTERM)",
        _ => "",
    }
}

/// Refuse, before anything runs, a `--out` whose directory does not exist.
pub fn check_out_dir(out_path: &Path) -> Result<()> {
    let dir = match out_path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if out_path.as_os_str().is_empty() || out_path.is_dir() {
        return Err(Error::input(format!(
            "--out {}: give a file name for the profile",
            out_path.display()
        )));
    }
    if !dir.is_dir() {
        return Err(Error::input(format!(
            "--out {}: directory {} does not exist",
            out_path.display(),
            dir.display()
        )));
    }
    Ok(())
}

/// Which report is printed, how, and of which processes.
#[derive(Debug, Clone, Copy, Default)]
pub struct ReportStyle {
    /// The report: [`Mode::Default`] (which [`pipeline::run`] turns into the report across
    /// objects when the runtime's manifests call for it), [`Mode::Lines`] or [`Mode::Inline`].
    pub mode: Mode,
    /// Its format.
    pub format: Format,
    /// Every process (`--all`).
    pub all: bool,
    /// Processes of one executable summed (`--merge`).
    pub merge: bool,
}

/// The rate explicitly asked for (`--hz`, else `PROFIL_HZ`), if any.
pub fn requested_hz(flag: Option<u32>) -> Option<u32> {
    flag.or_else(|| std::env::var("PROFIL_HZ").ok().and_then(|v| v.parse().ok()))
        .filter(|&h| (1..=super::MAX_HZ).contains(&h))
}

/// Can this process open the perf_event software clock the runtime prefers? `Err(errno)` when
/// the kernel refuses (perf_event_paranoid 3, seccomp in containers, no perf support).
pub fn perf_event_probe() -> std::result::Result<(), i32> {
    // struct perf_event_attr, PERF_ATTR_SIZE_VER0 (64 bytes): type, size, config,
    // sample_period, sample_type, read_format, flags (disabled | exclude_kernel | exclude_hv).
    let mut attr = [0u64; 8];
    attr[0] = 1 | (64 << 32); // PERF_TYPE_SOFTWARE, size 64 (little-endian field order)
    if cfg!(target_endian = "big") {
        attr[0] = (1 << 32) | 64;
    }
    attr[1] = 1; // PERF_COUNT_SW_TASK_CLOCK
    attr[2] = 1_000_000; // sample_period (ns)
    attr[5] = 1 | (1 << 5) | (1 << 6);
    // SAFETY: perf_event_open reads `attr` (64 bytes, as its size field says) and returns a new
    // file descriptor or -1; nothing else is touched.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_perf_event_open,
            attr.as_ptr(),
            0 as libc::pid_t,
            -1 as libc::c_int,
            -1 as libc::c_int,
            8 as libc::c_ulong, // PERF_FLAG_FD_CLOEXEC
        )
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error().raw_os_error().unwrap_or(0));
    }
    // SAFETY: `fd` is the descriptor just returned to us and used nowhere else.
    unsafe { libc::close(fd as libc::c_int) };
    Ok(())
}

/// The note for a refused perf_event, or None when it works (or the itimer was asked for).
pub fn perf_note(probe: std::result::Result<(), i32>, timer: Option<&str>) -> Option<String> {
    let errno = probe.err()?;
    if timer == Some("itimer") {
        return None;
    }
    Some(format!(
        "perf_event_open is not allowed here ({}), so the runtime sampled with the interval \
         timer, which fires at most once per kernel tick (250/s with CONFIG_HZ=250) and counts \
         system time too. To sample at higher rates, allow it: `sysctl \
         kernel.perf_event_paranoid=2` as root, or permit perf_event_open in the container's \
         seccomp profile",
        std::io::Error::from_raw_os_error(errno)
    ))
}

/// Print the default report of `profile` against `exe`, preceded by notes that tell a new
/// user what the numbers mean when something went differently than asked.
pub fn print_report(
    exe: &Path,
    profile: &Path,
    requested_hz: Option<u32>,
    style: ReportStyle,
    out: &mut impl Write,
) -> Result<()> {
    print_report_of(exe, &[profile.to_owned()], requested_hz, style, out)
}

/// [`print_report`] of several profiles of one executable, summed (`run --merge`): the
/// report of a [`Request`] for them, written by [`pipeline::run`] like the plain report's
/// (which chooses the report across objects when the runtime's manifests call for it).
pub fn print_report_of(
    exe: &Path,
    profiles: &[PathBuf],
    requested_hz: Option<u32>,
    style: ReportStyle,
    out: &mut impl Write,
) -> Result<()> {
    let mut files = profiles.to_vec();
    files.push(exe.to_owned());
    let req = Request {
        files,
        mode: style.mode,
        format: style.format,
        timeline: Timeline::default(),
    };
    let mut text = Vec::new();
    let written = pipeline::run(&req, &mut text)?;
    let mut notes = Vec::new();
    let timer = std::env::var("PROFIL_TIMER").ok();
    let perf = perf_note(perf_event_probe(), timer.as_deref());
    match written.counted {
        // The report across objects.
        None => notes.extend(perf),
        Some(counted) => {
            if let Some(note) = perf {
                notes.push(note);
            } else if let Some(note) = requested_hz.and_then(|want| {
                rate_note(
                    want,
                    counted.recorded_hz,
                    counted.total_samples,
                    timer.as_deref(),
                )
            }) {
                notes.push(note);
            }
            // The default table says this itself; JSON, CSV and the other reports get it as a
            // note.
            if counted.total_samples == 0
                && (style.format != Format::Table || !matches!(style.mode, Mode::Default))
            {
                notes.push(crate::render::default::no_samples_note(
                    &exe.display().to_string(),
                ));
            }
        }
    }
    for w in &written.warnings {
        eprintln!("{}", crate::render::message("profil-report: warning: ", w));
    }
    if style.format == Format::Table {
        for n in &notes {
            writeln!(out, "{}", crate::render::message("note: ", n))?;
        }
        if !notes.is_empty() {
            writeln!(out)?;
        }
    } else {
        for n in &notes {
            eprintln!("{}", crate::render::message("profil-report: note: ", n));
        }
    }
    out.write_all(&text)?;
    Ok(())
}

/// Explain an achieved rate far below the requested one (None when there is nothing to say).
///
/// The runtime records the achieved rate. perf_event reaches any rate up to tens of kHz; the
/// interval timer it falls back to (when perf_event_open is refused: perf_event_paranoid 3,
/// seccomp in containers, kernels before 5.13) fires at most once per kernel tick.
pub fn rate_note(
    requested: u32,
    achieved: u32,
    samples: u64,
    timer: Option<&str>,
) -> Option<String> {
    if samples < 50 || u64::from(achieved) * 3 >= u64::from(requested) * 2 {
        return None;
    }
    if timer == Some("itimer") {
        return Some(format!(
            "{achieved} samples per CPU-second instead of the {requested} asked for: \
             PROFIL_TIMER=itimer fires at most once per kernel tick (unset PROFIL_TIMER for \
             perf_event)"
        ));
    }
    Some(format!(
        "{achieved} samples per CPU-second instead of the {requested} asked for: the runtime \
         could not keep up or fell back to the tick-limited interval timer (see the profil-rt \
         lines above, if any); the times are still CPU seconds, just coarser"
    ))
}

/// Profile `launch` and print the outcome and report to `report_out`; returns the exit code to
/// leave with (the program's, as a shell shows it).
///
/// Every process of the tree keeps its profile ([`processes::keep`]): the one that used the
/// most CPU as `out_path`, the others as `<out>.d/<out>.<pid>[.<n>]`, every side file in
/// `<out>.d/` ([`crate::profile::input::side_folder`]). The report is that process's,
/// with a line listing the others; `--all` reports each in its own section (in pid order),
/// `--merge` sums the processes that ran the same executable (by path and build-id). With
/// `html`, the busiest unit's report is also written there as an interactive page, with the
/// process tree.
pub fn profile_and_report(
    launch: &Launch,
    out_path: &Path,
    style: ReportStyle,
    html: Option<&Path>,
    report_out: &mut impl Write,
) -> Result<u8> {
    check_out_dir(out_path)?;
    let scratch = Scratch::new("run")?;
    let outcome = execute(launch, &scratch.0)?;
    let code = shell_exit_code(outcome.status);
    let shown = Path::new(&launch.arg0).display().to_string();
    let mut found = outcome.found;
    if found.is_empty() {
        let why = if outcome.status.signal().is_some() {
            "the runtime writes the profile at exit and on SIGINT, SIGTERM and SIGHUP, not \
             when the process is killed, aborts or crashes"
        } else {
            "no process of it used enough CPU to take a sample, or it ended with _exit() or \
             ran setuid: see the profil-rt lines above, if any"
        };
        eprintln!(
            "profil-report: {shown} {} and wrote no profile ({why})",
            describe_status(outcome.status)
        );
        return Ok(code);
    }
    // A profile without a manifest (PROFIL_RANGES=exe) names no executable: the first image
    // of the process started is the program given.
    for f in &mut found {
        if f.exe.is_none() && f.pid == outcome.pid && f.image == 0 {
            f.exe = Some(launch.program.clone());
        }
    }
    let main = processes::busiest(&found).unwrap_or(0);
    let side_dir = crate::profile::input::side_folder(out_path);
    if let Some(name) = out_path.file_name().and_then(|n| n.to_str()) {
        processes::clear_earlier_run(&side_dir, name);
    }
    for (i, f) in found.iter_mut().enumerate() {
        let to = processes::kept_name(out_path, f, i == main);
        if let Err(e) = processes::keep(f, &to, &side_dir) {
            eprintln!("profil-report: {e}");
            return Ok(code);
        }
    }
    // The units reported: one process each, or (--merge) the processes of one executable.
    let mut units: Vec<Vec<usize>> = Vec::new();
    for (i, f) in found.iter().enumerate() {
        let same = |u: &Vec<usize>| {
            let g = &found[u[0]];
            g.exe.is_some() && g.exe == f.exe && g.build_id == f.build_id
        };
        match units.iter_mut().find(|u| style.merge && same(u)) {
            Some(u) => u.push(i),
            None => units.push(vec![i]),
        }
    }
    let cpu = |u: &[usize]| u.iter().map(|&i| found[i].cpu_seconds()).sum::<f64>();
    let busiest_unit = units.iter().position(|u| u.contains(&main)).unwrap_or(0);
    let shown_units: Vec<usize> = if style.all {
        (0..units.len()).collect()
    } else {
        vec![busiest_unit]
    };
    let status = describe_status(outcome.status);
    let machine = style.format != Format::Table;
    if !machine {
        // A resolved path (cargo profil's target/…/release/x) shown short, and wrapped.
        let head = crate::render::message(
            "",
            &crate::render::text::short_paths(&format!(
                "profil-report: {shown} {status}; profile saved as {}",
                out_path.display()
            )),
        );
        write!(report_out, "{head}")?;
        if found.len() > 1 {
            // On a line of its own when the first would not fit a terminal.
            let tail = format!(
                "({} of {} processes; the others in {}/)",
                found[main].program_name(),
                found.len(),
                side_dir.display()
            );
            let last = head.lines().last().unwrap_or_default();
            let fits = last.chars().count() + 1 + tail.chars().count() <= crate::render::WIDTH;
            write!(report_out, "{}{tail}", if fits { " " } else { "\n" })?;
        }
        writeln!(report_out)?;
        let reported: Vec<usize> = shown_units
            .iter()
            .flat_map(|&u| units[u].iter().copied())
            .collect();
        let (listed, more, more_cpu) = processes::others(&found, &reported);
        if !listed.is_empty() {
            writeln!(
                report_out,
                "Other processes (--all reports each, --merge sums those of one program):"
            )?;
            let mut t = crate::render::table::Table::new();
            t.row(["pid", "CPU time", "program"]);
            for (name, pid, cpu) in listed {
                t.row([pid.to_string(), crate::units::human_seconds(cpu), name]);
            }
            writeln!(report_out, "{}", t.render(2))?;
            if more > 0 {
                writeln!(
                    report_out,
                    "and {more} more ({} of CPU time together)",
                    crate::units::human_seconds(more_cpu)
                )?;
            }
        }
        writeln!(report_out)?;
    }
    let hz = requested_hz(launch.hz);
    let mut json_reports = Vec::new();
    for &u in &shown_units {
        let members = &units[u];
        let first = &found[members[0]];
        let files: Vec<PathBuf> = members.iter().map(|&i| found[i].file.clone()).collect();
        if !machine && (style.all || found.len() > 1) {
            let pids: Vec<String> = members.iter().map(|&i| found[i].pid.to_string()).collect();
            let parent = match (members.len(), first.ppid()) {
                (1, Some(p)) => format!(", parent {p}"),
                _ => String::new(),
            };
            // The CPU time the runtime measured (user + system; the table's is the sampled
            // clock's, the line under its header says which and the difference).
            let measured = members.iter().all(|&i| found[i].cpu_measured());
            writeln!(
                report_out,
                "=== {} (pid{} {}{parent}): {} of CPU time{}, {} ===",
                first.program_name(),
                if members.len() == 1 { "" } else { "s" },
                pids.join(", "),
                crate::units::human_seconds(cpu(members)),
                if measured { " (user+system)" } else { "" },
                files
                    .iter()
                    .map(|f| f.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            )?;
        }
        let Some(exe) = &first.exe else {
            eprintln!(
                "profil-report: {}: no objects manifest says which program wrote it (was \
                 PROFIL_RANGES=exe set?); report it with `profil-report {} PROGRAM`",
                files[0].display(),
                files[0].display()
            );
            continue;
        };
        let mut text = Vec::new();
        let r = if machine {
            print_report_of(exe, &files, hz, style, &mut text)
        } else {
            print_report_of(exe, &files, hz, style, report_out)
        };
        if let Err(e) = r {
            eprintln!("profil-report: {}: {e}", files[0].display());
            continue;
        }
        if !machine && shown_units.len() > 1 {
            writeln!(report_out)?;
        }
        match style.format {
            Format::Json => json_reports.push((members.clone(), text)),
            Format::Csv => report_out.write_all(&text)?,
            Format::Table => {}
        }
    }
    if style.format == Format::Json {
        write_json_reports(&found, &json_reports, style.all, report_out)?;
    }
    if let Some(path) = html {
        let members = &units[busiest_unit];
        let exe = found[members[0]].exe.clone();
        let mut files: Vec<PathBuf> = members.iter().map(|&i| found[i].file.clone()).collect();
        files.extend(exe);
        let procs = (found.len() > 1).then(|| processes_json(&found, members));
        let written = procs
            .transpose()
            .and_then(|p| crate::cmd::html::report_page(&files, p))
            // Its warnings are the report's, printed with it (and shown on the page).
            .and_then(|(page, _)| crate::cmd::html::write_page(path, &page));
        if let Err(e) = written {
            eprintln!("profil-report: {}: {e}", path.display());
        }
    }
    report_out.flush()?;
    Ok(code)
}

/// One process of `run --json`'s `processes`.
#[derive(serde::Serialize)]
struct Proc {
    pid: u32,
    image: u32,
    ppid: Option<u32>,
    program: String,
    executable: Option<String>,
    cpu_seconds: f64,
    profile: String,
    reported: bool,
}

/// The processes of `found`, those at `reported` marked so.
fn procs(found: &[Found], reported: &[usize]) -> Vec<Proc> {
    found
        .iter()
        .enumerate()
        .map(|(i, f)| Proc {
            pid: f.pid,
            image: f.image,
            ppid: f.ppid(),
            program: f.program_name(),
            executable: f.exe.as_ref().map(|p| p.display().to_string()),
            cpu_seconds: f.cpu_seconds(),
            profile: f.file.display().to_string(),
            reported: reported.contains(&i),
        })
        .collect()
}

/// [`procs`] as a JSON list (the HTML page's process tree).
fn processes_json(found: &[Found], reported: &[usize]) -> Result<Box<RawValue>> {
    let text = json::one_line(&procs(found, reported))?;
    RawValue::from_string(text).map_err(|e| Error::input(format!("JSON: {e}")))
}

/// The JSON of `run` (`reports`: the JSON each report unit's [`print_report_of`] wrote, with
/// its members' indices in `found`): the report's own object, with `processes` (pid, image —
/// 0 for the process's first program, n for the n-th it exec'd —, ppid, program, executable,
/// CPU seconds, profile file, whether reported) added at the top when there are several; with
/// `--all`, `{"processes": [..], "reports": [{"pids": [..], "report": {..}}, ..]}`. Serde
/// structs holding the reports' objects ([`ReportObject`], raw values), never text spliced.
pub fn write_json_reports(
    found: &[Found],
    reports: &[(Vec<usize>, Vec<u8>)],
    all: bool,
    out: &mut impl Write,
) -> Result<()> {
    let reported: Vec<usize> = reports.iter().flat_map(|r| r.0.iter().copied()).collect();
    let procs = procs(found, &reported);
    if all {
        /// One report of `--all`.
        #[derive(serde::Serialize)]
        struct Entry {
            pids: Vec<u32>,
            report: Box<RawValue>,
        }
        /// `run --all --json`.
        #[derive(serde::Serialize)]
        struct All<'a> {
            processes: OneLine<&'a [Proc]>,
            reports: Vec<Entry>,
        }
        let mut entries = Vec::new();
        for (members, text) in reports {
            let text = String::from_utf8_lossy(text).trim().to_owned();
            entries.push(Entry {
                pids: members.iter().map(|&i| found[i].pid).collect(),
                report: RawValue::from_string(text)
                    .map_err(|e| Error::input(format!("JSON: {e}")))?,
            });
        }
        let all = All {
            processes: OneLine(&procs),
            reports: entries,
        };
        return json::write_listing(out, &all);
    }
    /// `run --json`: the report shown, with the processes of the tree first when there are
    /// several (replacing the report's own list of the processes it sums).
    #[derive(serde::Serialize)]
    struct One<'a> {
        #[serde(skip_serializing_if = "Option::is_none")]
        processes: Option<OneLine<&'a [Proc]>>,
        #[serde(flatten)]
        report: ReportObject,
    }
    for (_, text) in reports {
        let tree = found.len() > 1;
        let report = ReportObject::parse(text)?;
        let one = One {
            processes: tree.then_some(OneLine(&procs)),
            report: if tree {
                report.without("processes")
            } else {
                report
            },
        };
        json::write_report(out, &one)?;
    }
    Ok(())
}

/// Run the subcommand. `out` is stdout, `err` stderr; the report goes to `err` unless
/// `--report` says otherwise. Returns the exit code (the program's).
pub fn run(args: &Options, out: &mut impl Write, err: &mut impl Write) -> Result<u8> {
    let Some((cmd, rest)) = args.command.split_first() else {
        return Err(Error::input("run: no command given"));
    };
    let program = resolve_command(cmd, std::env::var_os("PATH").as_deref())?;
    let data =
        fs::read(&program).map_err(|e| Error::input(format!("run: {}: {e}", program.display())))?;
    let found = inspect(&program, &data)?;
    drop(data);
    let launch = Launch {
        program,
        args: rest.to_vec(),
        arg0: cmd.clone(),
        preload: !found.has_runtime,
        hz: args.profile.hz,
    };
    args.profile.profile_and_report(&launch, out, err)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_note_only_when_far_below() {
        assert!(rate_note(1000, 990, 5000, None).is_none());
        assert!(rate_note(1000, 700, 5000, None).is_none());
        assert!(
            rate_note(1000, 250, 10, None).is_none(),
            "too few samples to judge"
        );
        let n = rate_note(1000, 250, 5000, None).unwrap();
        assert!(
            n.contains("250 samples per CPU-second instead of the 1000"),
            "{n}"
        );
        let n = rate_note(1000, 250, 5000, Some("itimer")).unwrap();
        assert!(n.contains("PROFIL_TIMER=itimer"), "{n}");
    }

    #[test]
    fn perf_refusal_says_what_to_do() {
        assert!(perf_note(Ok(()), None).is_none());
        assert!(perf_note(Err(libc::EACCES), Some("itimer")).is_none());
        let n = perf_note(Err(libc::EACCES), None).unwrap();
        assert!(
            n.contains("Permission denied") && n.contains("perf_event_paranoid=2"),
            "{n}"
        );
    }

    #[test]
    fn exit_codes_as_a_shell_shows_them() {
        assert_eq!(shell_exit_code(ExitStatus::from_raw(3 << 8)), 3);
        assert_eq!(shell_exit_code(ExitStatus::from_raw(9)), 137);
        assert_eq!(
            describe_status(ExitStatus::from_raw(2)),
            "was killed by signal 2 (SIGINT)"
        );
    }

    #[test]
    fn program_headers_decide_static() {
        let me = fs::read(std::env::current_exe().unwrap()).unwrap();
        assert_eq!(has_interpreter(&me), Some(true));
        assert_eq!(has_interpreter(&me[..0x30]), None, "truncated header");
        assert_eq!(has_interpreter(b"\x7fELF"), None);
    }
}
