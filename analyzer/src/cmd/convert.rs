//! `profil-report convert --to gnu|bsd|oldbsd IN OUT [--exe PROG]`: rewrite a gmon file in
//! another format, so that `gprof -b -p PROG OUT` prints exactly what `gprof -b -p PROG IN`
//! prints.
//!
//! The file goes through a [`gmon::merge::Profile`] (the same in-memory form as `merge`), and
//! is written in the input's pointer size and byte order. The output is written to a
//! temporary file next to OUT and renamed over it, so OUT is either complete or untouched.

use std::io::Write;
use std::path::{Path, PathBuf};

use gmon::merge::{OutputFormat, Profile, WriteReport};
use gmon::write::{IoSink, Writer};
use gmon::Target;

use super::dump::{choose_target, parse_input, read_input};
use crate::{Error, Result};

/// The formats `convert` and `merge` write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum To {
    /// GNU tagged format ("gmon" magic, version 1), what glibc writes.
    Gnu,
    /// 4.4BSD format (`struct gmonhdr`, with the sampling rate).
    Bsd,
    /// Old BSD format (no rate; gprof assumes 100 Hz).
    Oldbsd,
}

impl From<To> for OutputFormat {
    fn from(t: To) -> Self {
        match t {
            To::Gnu => OutputFormat::Gnu,
            To::Bsd => OutputFormat::Bsd44,
            To::Oldbsd => OutputFormat::OldBsd,
        }
    }
}

/// What `profil-report convert` is asked for (the binary builds it from its command line).
#[derive(Debug, Clone)]
pub struct Options {
    /// Output format.
    pub to: To,
    /// The gmon file to convert.
    pub input: PathBuf,
    /// Where to write the converted file (replaced atomically).
    pub output: PathBuf,
    /// The executable the profile belongs to (decides pointer size and byte order; guessed
    /// from the file without it).
    pub exe: Option<PathBuf>,
}

/// Write `profile` to `path` in `format` for `target`, atomically (temporary file in the same
/// directory, then rename). Returns what the writer had to adapt.
pub fn write_profile(
    path: &Path,
    profile: &Profile,
    target: Target,
    format: OutputFormat,
) -> Result<WriteReport> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path
        .file_name()
        .ok_or_else(|| Error::input(format!("{}: not a file name", path.display())))?;
    let tmp = dir.join(format!(
        ".{}.tmp.{}",
        name.to_string_lossy(),
        std::process::id()
    ));
    let result = (|| -> Result<WriteReport> {
        let file = std::fs::File::create(&tmp)
            .map_err(|e| Error::input(format!("{}: cannot create: {e}", tmp.display())))?;
        let mut w = Writer::new(IoSink(std::io::BufWriter::new(file)), target);
        let report = profile
            .write(&mut w, format)
            .map_err(|e| Error::input(format!("{}: {e}", path.display())))?;
        let buf = w.into_inner().0;
        let file = buf
            .into_inner()
            .map_err(|e| Error::input(format!("{}: write error: {}", tmp.display(), e.error())))?;
        file.sync_all()
            .map_err(|e| Error::input(format!("{}: write error: {e}", tmp.display())))?;
        std::fs::rename(&tmp, path).map_err(|e| {
            Error::input(format!("{}: cannot rename into place: {e}", path.display()))
        })?;
        Ok(report)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// One-line notes on what the writer had to adapt (empty when nothing).
pub fn report_notes(path: &Path, r: &WriteReport) -> Vec<String> {
    let mut v = Vec::new();
    if r.clipped_samples > 0 {
        v.push(format!(
            "{}: warning: {} samples clipped: a bin exceeded 65535, the limit of the BSD formats (GNU format keeps them)",
            path.display(),
            r.clipped_samples
        ));
    }
    if r.extra_histogram_records > 0 {
        v.push(format!(
            "{}: note: {} extra histogram records over the same ranges carry bins above 65535 (gprof sums them)",
            path.display(),
            r.extra_histogram_records
        ));
    }
    if r.extra_arc_records > 0 {
        v.push(format!(
            "{}: note: {} extra arc records carry counts above the format's counter (gprof sums them)",
            path.display(),
            r.extra_arc_records
        ));
    }
    v
}

/// Run the subcommand. Notes about adaptations go to `out`.
pub fn run(args: &Options, out: &mut impl Write) -> Result<()> {
    let data = read_input(&args.input)?;
    let (target, _) = choose_target(args.exe.as_deref(), &data)?;
    let file = parse_input(&args.input, &data, target)?;
    let profile = Profile::from_file(&file)
        .map_err(|e| Error::input(format!("{}: {e}", args.input.display())))?;
    let report = write_profile(&args.output, &profile, target, args.to.into())?;
    for line in report_notes(&args.output, &report) {
        writeln!(out, "{line}")?;
    }
    Ok(())
}
