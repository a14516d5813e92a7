//! `profil-report demo`: build the bundled demo workload with the runtime, run it, and show the
//! report, the split the demo was designed to have, and GNU gprof's view of the same profile.
//!
//! The workload is `fixtures/demo/demo.c` (see the README there), embedded in this binary so
//! that the demo works from an installed `profil-report` too. It is compiled with `$CC` (default
//! `cc`) as `cc -O2 -g -o demo demo.c <cached profil_rt.o>` in a scratch directory (or in
//! `--dir`, where everything is kept), run with its profile going to `gmon.out` there, and
//! reported on. When `gprof` is on `PATH`, `gprof -b -p demo gmon.out` follows.

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::run::{self, Launch, ReportStyle, Scratch};
use crate::cmd::artifacts::{self, Kind};
use crate::report;
use crate::{Error, Result};

/// The demo's source.
pub const SOURCE: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../fixtures/demo/demo.c"
));

/// The split the demo was written to have: function, percent of its CPU time.
pub const EXPECTED: [(&str, f64); 4] = [
    ("parse_records", 40.0),
    ("hash_keys", 30.0),
    ("sort_batch", 20.0),
    ("write_output", 10.0),
];

/// The demo's default rate: about a thousand samples for its CPU-second, so the sampling noise
/// on the 40% share is about 1.5 points.
pub const DEFAULT_HZ: u32 = 1000;

/// How far (percentage points) a measured share may be from the designed `percent` with
/// `samples` samples and still count as agreeing: 3.5 binomial standard deviations (a false
/// "OFF" about once in 2000 functions) plus one point for what sampling cannot see (the loop
/// around the calls, bins shared with neighbours).
pub fn tolerance(percent: f64, samples: u64) -> f64 {
    let p = percent / 100.0;
    let n = samples.max(1) as f64;
    3.5 * 100.0 * (p * (1.0 - p) / n).sqrt() + 1.0
}

/// What gprof's flat profile of the demo shows, under it.
const GPROF_NOTE: &str = "gprof counts the same samples: its seconds are samples / rate rounded \
     to 0.01 s, and it credits each bin to one function, where this report splits a bin between \
     functions and gives 95% intervals. Its \"calls\" are sample counts too: the runtime records \
     the calls it saw on the sampled stacks (in how many samples each call was on the stack), \
     not how often a function was called (that needs -pg), so ms/call is not a time per call.";

/// What `profil-report demo` is asked (the binary's `cli` module builds it).
#[derive(Debug)]
pub struct Options {
    /// Samples per CPU-second (sets PROFIL_HZ; None: PROFIL_HZ if set, else 1000).
    pub hz: Option<u32>,
    /// Work units per 10% share (30 is about one CPU-second).
    pub scale: u32,
    /// Build and run in this directory and keep demo.c, demo and gmon.out there (None: a
    /// scratch directory, removed afterwards).
    pub dir: Option<PathBuf>,
    /// Do not run gprof even if it is installed.
    pub no_gprof: bool,
}

/// Compile `source_file` into `exe` with the runtime object linked in.
pub fn compile(source_file: &Path, exe: &Path, object: &Path) -> Result<()> {
    // `CC` may carry words of its own (`ccache gcc`, `gcc -m64`), as make allows.
    let cc = std::env::var("CC")
        .ok()
        .filter(|v| !v.trim().is_empty())
        .unwrap_or_else(|| "cc".into());
    let mut words = cc.split_whitespace();
    let program = words.next().unwrap_or("cc");
    let output = Command::new(program)
        .args(words)
        .args(["-O2", "-g", "-o"])
        .arg(exe)
        .arg(source_file)
        .arg(object)
        .output()
        .map_err(|e| {
            Error::input(format!(
                "demo: cannot run the C compiler {:?}: {e} (install one, e.g. `apt-get install \
                 gcc`, or set CC)",
                cc
            ))
        })?;
    if !output.status.success() {
        return Err(Error::input(format!(
            "demo: {:?} failed to build the demo ({}): {}",
            cc,
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        )));
    }
    Ok(())
}

/// One function of the demo: name, designed percent, measured percent.
pub type Share = (&'static str, f64, f64);

/// Measured percent of all samples per expected function, and the number of samples.
pub fn measured_split(exe: &Path, profile: &Path) -> Result<(Vec<Share>, u64)> {
    let files = vec![profile.to_owned(), exe.to_owned()];
    let inputs = report::load_inputs(&files)?;
    let image = report::parse_exe(&inputs.exe)?;
    let built = report::default::build(&inputs, &image)?;
    let total = built.total_samples.max(1) as f64;
    let split = EXPECTED
        .iter()
        .map(|&(name, want)| {
            let got: f64 = built
                .rows
                .iter()
                .filter(|r| r.raw_name == name)
                .map(|r| r.samples)
                .sum();
            (name, want, 100.0 * got / total)
        })
        .collect();
    Ok((split, built.total_samples))
}

/// Run the subcommand.
pub fn run(args: &Options, out: &mut impl Write) -> Result<()> {
    let object = artifacts::materialize(Kind::Object)?;
    let scratch;
    let dir = match &args.dir {
        Some(d) => {
            std::fs::create_dir_all(d)
                .map_err(|e| Error::input(format!("demo: cannot create {}: {e}", d.display())))?;
            std::fs::canonicalize(d)?
        }
        None => {
            scratch = Scratch::new("demo")?;
            scratch.0.clone()
        }
    };
    let source = dir.join("demo.c");
    let exe = dir.join("demo");
    let profile = dir.join("gmon.out");
    std::fs::write(&source, SOURCE)
        .map_err(|e| Error::input(format!("demo: cannot write {}: {e}", source.display())))?;
    writeln!(
        out,
        "{}",
        crate::render::message(
            "",
            &crate::render::text::short_paths(&format!(
                "Building the demo: cc -O2 -g -o {} {} {}",
                exe.display(),
                source.display(),
                object.display()
            ))
        )
    )?;
    out.flush()?;
    compile(&source, &exe, &object)?;
    writeln!(
        out,
        "Running it with the runtime linked in (about a CPU-second)..."
    )?;
    out.flush()?;
    let launch = Launch {
        program: exe.clone(),
        args: vec![OsString::from(args.scale.to_string())],
        arg0: exe.clone().into_os_string(),
        preload: false,
        hz: Some(run::requested_hz(args.hz).unwrap_or(DEFAULT_HZ)),
    };
    let run_dir = Scratch::new("demo-run")?;
    let outcome = run::execute(&launch, &run_dir.0)?;
    if !outcome.status.success() {
        return Err(Error::input(format!(
            "demo: the demo program {}",
            run::describe_status(outcome.status)
        )));
    }
    let Some(written) = outcome.profile else {
        return Err(Error::input(
            "demo: the demo program wrote no profile (see the profil-rt messages above)",
        ));
    };
    super::processes::move_file(&written, &profile)?;
    writeln!(out)?;
    run::print_report(&exe, &profile, launch.hz, ReportStyle::default(), out)?;

    let (split, samples) = measured_split(&exe, &profile)?;
    writeln!(out)?;
    writeln!(
        out,
        "The demo was written to split its CPU time 40/30/20/10; measured ({samples} samples):"
    )?;
    for (name, want, got) in split {
        let verdict = if (got - want).abs() <= tolerance(want, samples) {
            "ok"
        } else {
            "OFF"
        };
        writeln!(
            out,
            "  {name:<14} designed {want:>4.0}%   measured {got:>5.1}%   {verdict}"
        )?;
    }

    let gprof = (!args.no_gprof)
        .then(|| run::resolve_command("gprof".as_ref(), std::env::var_os("PATH").as_deref()).ok())
        .flatten();
    match gprof {
        Some(gprof) => {
            let output = Command::new(&gprof)
                .args(["-b", "-p"])
                .arg(&exe)
                .arg(&profile)
                .output()
                .map_err(|e| Error::input(format!("demo: cannot run {}: {e}", gprof.display())))?;
            writeln!(out)?;
            writeln!(
                out,
                "GNU gprof's view of the same profile (gprof -b -p demo gmon.out):"
            )?;
            writeln!(out)?;
            out.write_all(&output.stdout)?;
            if !output.stderr.is_empty() {
                out.write_all(&output.stderr)?;
            }
            for line in crate::render::wrap(GPROF_NOTE, crate::render::WIDTH) {
                writeln!(out, "{line}")?;
            }
        }
        None if args.no_gprof => {}
        None => writeln!(
            out,
            "\n(gprof is not installed, so there is no GNU view to compare with; it comes with \
             binutils.)"
        )?,
    }
    if args.dir.is_some() {
        writeln!(out)?;
        writeln!(
            out,
            "Kept in {}: demo.c, demo, gmon.out. The report again:\n  profil-report {} {}",
            dir.display(),
            // Relative to the current directory, never elided: a command to copy.
            crate::render::names::short_path(&profile.display().to_string(), usize::MAX, false),
            crate::render::names::short_path(&exe.display().to_string(), usize::MAX, false)
        )?;
    }
    Ok(())
}
