//! `profil-report dump FILE [--exe PROG] [--json]`: every record of a gmon file.
//!
//! Like `gprof -i`, but complete: format, pointer size and byte order (and where they came
//! from), every histogram (range, bins, bytes per bin, rate, unit, samples, non-zero bins with
//! the address range gprof assigns to each), every arc, every basic-block record.
//!
//! This module also holds the input helpers that `convert` and `merge` share: reading a file,
//! and choosing the [`Target`] from `--exe` or from [`Target::guess`].

use std::fmt::Write as _;
use std::io::Write;
use std::path::{Path, PathBuf};

use gmon::read::{BasicBlocks, BbLayout};
use gmon::{Format, GmonFile, Target};
use object::Object;
use profil_symbols::file::FileBytes;

use serde::Serialize;

use crate::{Error, Result};

/// What `profil-report dump` is asked for (the binary builds it from its command line).
#[derive(Debug, Clone)]
pub struct Options {
    /// The gmon file.
    pub file: PathBuf,
    /// The executable the profile belongs to: its ELF class and byte order decide how the
    /// file is decoded. Without it, both are guessed from the file (and the dump says so).
    pub exe: Option<PathBuf>,
    /// Machine-readable output (one JSON object, every bin included).
    pub json: bool,
    /// List every bin, zeros included (text output lists only non-zero bins).
    pub all_bins: bool,
}

/// Where the decoding parameters came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TargetSource {
    /// The ELF header of this executable.
    Executable(PathBuf),
    /// [`Target::guess`] on the gmon file itself.
    Guessed,
}

/// Read a whole file, mapping failures to a one-line input error naming it (without blocking
/// on a FIFO, and bounded for pipes and devices: [`crate::profile::input::read_file`]).
pub fn read_input(path: &Path) -> Result<FileBytes> {
    crate::profile::input::read_file(path)
        .map_err(|e| Error::input(format!("{}: cannot read: {e}", path.display())))
}

/// Pointer size and byte order of an ELF executable.
pub fn target_of_executable(path: &Path) -> Result<Target> {
    let data = read_input(path)?;
    let file = object::File::parse(&*data).map_err(|e| {
        Error::input(format!(
            "{}: not a readable executable: {e}",
            path.display()
        ))
    })?;
    Ok(Target::of_executable(
        file.is_64(),
        !file.is_little_endian(),
    ))
}

/// The target for decoding `data`: from `exe` if given, else guessed.
pub fn choose_target(exe: Option<&Path>, data: &[u8]) -> Result<(Target, TargetSource)> {
    match exe {
        Some(p) => Ok((
            target_of_executable(p)?,
            TargetSource::Executable(p.to_path_buf()),
        )),
        None => Ok((Target::guess(data), TargetSource::Guessed)),
    }
}

/// Parse a gmon file, mapping a format error to `FILE: field: what at byte N`.
pub fn parse_input<'a>(path: &Path, data: &'a [u8], target: Target) -> Result<GmonFile<'a>> {
    gmon::parse(data, target).map_err(|e| Error::input(format!("{}: {e}", path.display())))
}

/// Run the subcommand.
pub fn run(args: &Options, out: &mut impl Write) -> Result<()> {
    let data = read_input(&args.file)?;
    let (target, source) = choose_target(args.exe.as_deref(), &data)?;
    let file = parse_input(&args.file, &data, target)?;
    if args.json {
        json(&args.file, &file, &source, out)
    } else {
        out.write_all(text(&args.file, &file, &source, args.all_bins).as_bytes())?;
        Ok(())
    }
}

fn format_key(f: Format) -> &'static str {
    match f {
        Format::Gnu { .. } => "gnu",
        Format::Bsd44 => "bsd44",
        Format::OldBsd => "oldbsd",
    }
}

/// gprof's view of bin `i`: `[low + 2*floor(scale*i), low + 2*floor(scale*(i+1)))` with
/// `scale = ((high - low) / 2) / bins` (hist.c, hist_assign_samples_1).
fn gprof_bin_range(h: &gmon::Histogram<'_>, i: usize) -> (u64, u64) {
    let scale = h.gprof_scale();
    let lo = h.low_pc / 2;
    let a = lo + (scale * i as f64) as u64;
    let b = lo + (scale * (i + 1) as f64) as u64;
    (2 * a, 2 * b)
}

fn dimension_str(d: &gmon::Dimension) -> String {
    String::from_utf8_lossy(d.name_bytes()).into_owned()
}

/// The human-readable dump.
pub fn text(path: &Path, f: &GmonFile<'_>, source: &TargetSource, all_bins: bool) -> String {
    let mut s = String::new();
    let t = f.target;
    let _ = writeln!(s, "file:            {} ({} bytes)", path.display(), f.len);
    let _ = writeln!(s, "format:          {}", f.format().name());
    let how = match source {
        TargetSource::Executable(p) => format!("from executable {}", p.display()),
        TargetSource::Guessed => "guessed from the file: no --exe given".to_string(),
    };
    let _ = writeln!(s, "pointer size:    {} bytes ({how})", t.ptr_size.bytes());
    let _ = writeln!(s, "byte order:      {}-endian ({how})", t.endian);
    let _ = writeln!(s, "header:          {} bytes", f.header.header_bytes);
    if let Some(ncnt) = f.header.ncnt {
        let _ = writeln!(s, "ncnt:            {ncnt} (bins bytes + header)");
    }
    if f.format().is_gnu() {
        let spare = &f.header.raw[8..20];
        let hex: Vec<String> = spare.iter().map(|b| format!("{b:02x}")).collect();
        let _ = writeln!(s, "spare:           {}", hex.join(""));
    }
    let total = f.total_samples();
    let _ = writeln!(s, "histograms:      {}", f.histograms.len());
    let hz = f.histograms.first().and_then(|h| h.prof_rate);
    let hz_eff = hz.unwrap_or(gmon::merge::DEFAULT_HZ);
    let _ = writeln!(
        s,
        "total samples:   {total} ({:.2} seconds at {hz_eff} Hz{})",
        total as f64 / f64::from(hz_eff.max(1)),
        if hz.is_none() && !f.histograms.is_empty() {
            ", gprof's default rate: the format has none"
        } else {
            ""
        }
    );
    let _ = writeln!(
        s,
        "arcs:            {} ({} calls)",
        f.arcs.len(),
        f.total_calls()
    );
    let _ = writeln!(s, "basic-block recs: {}", f.basic_blocks.len());
    if f.trailing_bytes > 0 {
        let _ = writeln!(
            s,
            "trailing bytes:  {} (fewer than one arc; ignored, as gprof does)",
            f.trailing_bytes
        );
    }
    for (n, h) in f.histograms.iter().enumerate() {
        let _ = writeln!(s);
        let _ = writeln!(s, "histogram {} at byte {}:", n + 1, h.offset);
        let _ = writeln!(
            s,
            "  range:         [{:#x}, {:#x}) link-time addresses, {} bytes",
            h.low_pc,
            h.high_pc,
            h.high_pc - h.low_pc
        );
        let _ = writeln!(
            s,
            "  bins:          {} at byte {}",
            h.hist_size, h.bins_offset
        );
        let _ = writeln!(s, "  bytes per bin: {:.4}", h.bytes_per_bin());
        match h.prof_rate {
            Some(r) => {
                let _ = writeln!(s, "  rate:          {r} Hz");
            }
            None => {
                let _ = writeln!(
                    s,
                    "  rate:          none in this format (gprof assumes {} Hz)",
                    gmon::merge::DEFAULT_HZ
                );
            }
        }
        let _ = writeln!(
            s,
            "  dimension:     {} ({})",
            dimension_str(&h.dimension),
            h.dimension.abbrev as char
        );
        let nonzero = h.bins.iter().filter(|&b| b != 0).count();
        let _ = writeln!(
            s,
            "  samples:       {} in {} non-zero bins",
            h.bins.total(),
            nonzero
        );
        if h.hist_size > 0 {
            let _ = writeln!(
                s,
                "  {} (address ranges as gprof assigns them):",
                if all_bins { "bins" } else { "non-zero bins" }
            );
        }
        for (i, b) in h.bins.iter().enumerate() {
            if b != 0 || all_bins {
                let (lo, hi) = gprof_bin_range(h, i);
                let _ = writeln!(s, "    bin {i:>7} [{lo:#x}, {hi:#x}): {b}");
            }
        }
    }
    if !f.arcs.is_empty() {
        let _ = writeln!(s);
        let _ = writeln!(s, "arcs (from_pc -> self_pc: count):");
        for a in &f.arcs {
            let _ = writeln!(
                s,
                "  at byte {:>8}: {:#x} -> {:#x}: {}",
                a.offset, a.from_pc, a.self_pc, a.count
            );
        }
    }
    for bb in &f.basic_blocks {
        let _ = writeln!(s);
        let _ = writeln!(
            s,
            "basic-block record at byte {}: {} blocks",
            bb.offset, bb.nblocks
        );
        match bb.layout {
            BbLayout::V1 => {
                for (addr, count) in bb.blocks() {
                    let _ = writeln!(s, "  {addr:#x}: {count}");
                }
            }
            BbLayout::V0 => {
                let _ = writeln!(
                    s,
                    "  (version-0 layout, {} bytes, not decoded)",
                    bb.body.len()
                );
            }
        }
    }
    s
}

/// `--json`: the file's fields, then every record.
#[derive(Serialize)]
struct Json<'a> {
    file: String,
    bytes: u64,
    format: &'static str,
    version: Option<u32>,
    pointer_size: usize,
    endian: String,
    target_source: &'static str,
    executable: Option<String>,
    header_bytes: usize,
    ncnt: Option<u32>,
    total_samples: u64,
    total_calls: u128,
    trailing_bytes: u64,
    histograms: Vec<JsonHistogram<'a>>,
    arcs: Vec<JsonArc>,
    basic_blocks: Vec<JsonBlocks<'a>>,
}

#[derive(Serialize)]
struct JsonHistogram<'a> {
    offset: u64,
    low_pc: u64,
    high_pc: u64,
    hist_size: u32,
    bytes_per_bin: f64,
    prof_rate: Option<u32>,
    dimension: String,
    dimension_abbrev: String,
    samples: u64,
    bins_offset: u64,
    /// Every bin, zeros included.
    bins: Seq<&'a gmon::read::Bins<'a>>,
}

#[derive(Serialize)]
struct JsonArc {
    offset: u64,
    from_pc: u64,
    self_pc: u64,
    count: u64,
}

#[derive(Serialize)]
struct JsonBlocks<'a> {
    offset: u64,
    nblocks: u32,
    /// 0 or 1 (the GNU file version that wrote it).
    layout: u8,
    /// `[address, count]` pairs.
    blocks: Seq<&'a BasicBlocks<'a>>,
}

/// A sequence written from an iterator as it goes (no copy of every bin).
struct Seq<T>(T);

impl Serialize for Seq<&gmon::read::Bins<'_>> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter())
    }
}

impl Serialize for Seq<&BasicBlocks<'_>> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_seq(self.0.blocks().map(|(addr, count)| [addr, count]))
    }
}

/// The JSON dump: one object on one line, every bin included.
pub fn json(
    path: &Path,
    f: &GmonFile<'_>,
    source: &TargetSource,
    out: &mut impl Write,
) -> Result<()> {
    let version = match f.format() {
        Format::Gnu { version } => Some(version),
        _ => None,
    };
    let (target_source, executable) = match source {
        TargetSource::Executable(p) => ("executable", Some(p.display().to_string())),
        TargetSource::Guessed => ("guessed", None),
    };
    let json = Json {
        file: path.display().to_string(),
        bytes: f.len,
        format: format_key(f.format()),
        version,
        pointer_size: f.target.ptr_size.bytes(),
        endian: f.target.endian.to_string(),
        target_source,
        executable,
        header_bytes: f.header.header_bytes,
        ncnt: f.header.ncnt,
        total_samples: f.total_samples(),
        total_calls: f.total_calls(),
        trailing_bytes: f.trailing_bytes,
        histograms: f
            .histograms
            .iter()
            .map(|h| JsonHistogram {
                offset: h.offset,
                low_pc: h.low_pc,
                high_pc: h.high_pc,
                hist_size: h.hist_size,
                bytes_per_bin: h.bytes_per_bin(),
                prof_rate: h.prof_rate,
                dimension: dimension_str(&h.dimension),
                dimension_abbrev: (h.dimension.abbrev as char).to_string(),
                samples: h.bins.total(),
                bins_offset: h.bins_offset,
                bins: Seq(&h.bins),
            })
            .collect(),
        arcs: f
            .arcs
            .iter()
            .map(|a| JsonArc {
                offset: a.offset,
                from_pc: a.from_pc,
                self_pc: a.self_pc,
                count: a.count,
            })
            .collect(),
        basic_blocks: f
            .basic_blocks
            .iter()
            .map(|bb| JsonBlocks {
                offset: bb.offset,
                nblocks: bb.nblocks,
                layout: if bb.layout == BbLayout::V0 { 0 } else { 1 },
                blocks: Seq(bb),
            })
            .collect(),
    };
    crate::render::json::write_compact(out, &json)
}
