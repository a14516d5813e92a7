//! `profil-report export --to FORMAT -o FILE <gmon files> <executable>`: the profile in the
//! formats other tools read.
//!
//! Every format is a renderer of one [`model::StackProfile`] (samples as stacks of frames),
//! built from the inputs by [`model::build`]; renderers never look at gmon records or ELF
//! files themselves:
//!
//! | `--to` | module | opened with |
//! |---|---|---|
//! | `pprof` | [`pprof`] | `go tool pprof`, Pyroscope, Parca, Grafana, Cloud Profiler |
//! | `folded` | [`folded`] | `flamegraph.pl`, inferno, speedscope |
//! | `svg` | [`folded::write_svg`] | a browser |
//! | `callgrind` | [`callgrind`] | KCachegrind/QCachegrind, `callgrind_annotate` |
//! | `speedscope` | [`speedscope`] | speedscope |
//!
//! The file is written to a temporary name next to FILE and renamed over it, so FILE is
//! either complete or untouched; `-o -` writes to standard output.

pub mod callgrind;
pub mod folded;
pub mod model;
pub mod pprof;
pub mod speedscope;

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::report::{load_inputs, parse_exe};
use crate::{Error, Result};

/// An export format.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Gzipped profile.proto (go tool pprof, Pyroscope, Parca).
    Pprof,
    /// Collapsed stacks, `root;…;leaf count`.
    Folded,
    /// A flame graph (inferno).
    Svg,
    /// The callgrind format (KCachegrind, callgrind_annotate).
    Callgrind,
    /// Speedscope's JSON format.
    Speedscope,
}

/// Arguments of `profil-report export`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Output format.
    #[arg(long, value_enum)]
    pub to: Format,
    /// Where to write it (`-` for standard output).
    #[arg(short, long, value_name = "FILE")]
    pub output: PathBuf,
    /// gmon files (summed) and the executable, in any order.
    #[arg(required = true, value_name = "FILES")]
    pub files: Vec<PathBuf>,
}

/// Render `p` as `format`.
pub fn render(p: &model::StackProfile, format: Format, out: &mut impl Write) -> Result<()> {
    match format {
        Format::Pprof => pprof::write(p, out),
        Format::Folded => folded::write(p, out),
        Format::Svg => folded::write_svg(p, out),
        Format::Callgrind => callgrind::write(p, out),
        Format::Speedscope => speedscope::write(p, out),
    }
}

/// Write `bytes` to `path` through a temporary file in the same directory and a rename.
fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_owned(),
        _ => PathBuf::from("."),
    };
    let name = path
        .file_name()
        .ok_or_else(|| Error::input(format!("{}: not a file name", path.display())))?;
    let tmp = dir.join(format!(
        ".{}.tmp{}",
        name.to_string_lossy(),
        std::process::id()
    ));
    let fail = |what: &str, e: std::io::Error| {
        Error::input(format!("{}: cannot {what}: {e}", path.display()))
    };
    std::fs::write(&tmp, bytes).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        fail("write", e)
    })?;
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        fail("rename into place", e)
    })
}

/// Run the subcommand: warnings go to stderr; `out` is standard output (for `-o -`).
pub fn run(args: &Args, out: &mut impl Write) -> Result<()> {
    let inputs = load_inputs(&args.files)?;
    let image = parse_exe(&inputs.exe)?;
    let gmons: Vec<_> = inputs.gmons.iter().collect();
    let profile = model::build(&inputs.exe, &image, &gmons)?;
    for w in &profile.warnings {
        eprintln!("profil-report: warning: {w}");
    }
    let mut buf = Vec::new();
    render(&profile, args.to, &mut buf)?;
    if args.output == Path::new("-") {
        out.write_all(&buf)?;
        Ok(())
    } else {
        write_atomically(&args.output, &buf)
    }
}
