//! `-s` (`--sum`): the `gmon.sum` gprof writes after reading every input and before any
//! analysis, so that it can be read back in place of all of them.
//!
//! What gprof 2.40 writes (`gmon_out_write`), in the executable's byte order and address size:
//!
//! * the GNU header: `gmon`, version 1, and 12 spare bytes gprof never initialises. What they
//!   hold is what its stack held: with Debian's x86-64 build, the last histogram header it
//!   read, i.e. that record's `high_pc` (8 bytes) and its size field (the bin count of a GNU
//!   record, `ncnt` of a BSD one: bins in bytes plus the header). They are reproduced as
//!   observed; when no histogram was read they are whatever else was on its stack (they
//!   change from run to run) and here zeros;
//! * one histogram record per distinct range, in the order the ranges first appeared, with the
//!   summed bins (cut to 16 bits), the rate gprof settled on and the first file's unit;
//! * one arc record per arc, symbol by symbol in address order, each symbol's arcs in its
//!   list order (newest first), from the caller *symbol's* address to the callee's, count cut
//!   to 32 bits. `-s` implies `-l`, so callers are line symbols;
//! * when any input had a basic-block record (even one of no blocks), one basic-block record:
//!   every symbol's blocks ([`Analysis::basic_blocks`]) in address order, with their summed
//!   counts.
//!
//! Under `-Ob`/`-O4` the sum is a BSD file instead (see `bsd_bytes`), without basic blocks.

use std::path::Path;

use gmon::write::{HistHeader, Writer};
use gmon::{Dimension, Endian, PtrSize};

use super::{Analysis, FileFormat};
use crate::{Error, Result};

/// The bytes of the `gmon.sum` gprof would write for `a` (read, not yet assembled).
pub fn bytes(a: &Analysis<'_>) -> Result<Vec<u8>> {
    let target = a.target();
    let mut w = Writer::new(Vec::new(), target);
    let fail = |e: gmon::write::WriteError<std::convert::Infallible>| {
        Error::input(format!("gmon.sum: {e}"))
    };
    if matches!(a.file_format, FileFormat::Bsd | FileFormat::Bsd44) {
        return bsd_bytes(a, w).map_err(fail);
    }
    let mut header = Vec::with_capacity(20);
    header.extend_from_slice(b"gmon");
    let (high, size) = a.last_hist_header.unwrap_or((0, 0));
    let put32 = |v: u32, out: &mut Vec<u8>| match target.endian {
        Endian::Little => out.extend_from_slice(&v.to_le_bytes()),
        Endian::Big => out.extend_from_slice(&v.to_be_bytes()),
    };
    put32(1, &mut header);
    match target.endian {
        Endian::Little => header.extend_from_slice(&high.to_le_bytes()),
        Endian::Big => header.extend_from_slice(&high.to_be_bytes()),
    }
    put32(size, &mut header);
    w.write_raw(&header).map_err(fail)?;
    if a.hist.present() {
        let mut name = [0u8; 15];
        let dim = &a.hist.dimension;
        name[..dim.len().min(15)].copy_from_slice(&dim[..dim.len().min(15)]);
        let dimension = Dimension {
            name,
            abbrev: a.hist.abbrev,
        };
        for r in &a.hist.ranges {
            let h = HistHeader {
                low_pc: r.low_pc,
                high_pc: r.high_pc,
                hist_size: r.samples.len() as u32,
                prof_rate: a.hist.hz,
                dimension,
            };
            w.gnu_histogram(&h, r.samples.iter().map(|&s| s as u16))
                .map_err(fail)?;
        }
    }
    if a.has_call_graph {
        let syms = &a.symtab.syms;
        for node in 0..a.cg.num_syms {
            for arc in a.cg.children(node) {
                let arc = &a.cg.arcs[arc];
                w.gnu_arc(
                    syms[arc.parent].addr,
                    syms[arc.child].addr,
                    arc.count as u32,
                )
                .map_err(fail)?;
            }
        }
    }
    if a.bb_seen {
        let blocks = || (0..a.symtab.len()).flat_map(|i| a.basic_blocks(i));
        let n = blocks().count() as u32;
        w.gnu_basic_blocks(n, blocks()).map_err(fail)?;
    }
    Ok(w.into_inner())
}

/// `-s`'s `SAMPLEDEBUG` traces as gprof writes the sum: each arc, as `cg_write_arcs` (or in a
/// BSD sum `[dumpsum]`) writes it.
pub fn trace_writing(a: &mut Analysis<'_>) {
    if !a.trace.on(super::debug::SAMPLEDEBUG) || !a.has_call_graph {
        return;
    }
    let label = match a.file_format {
        FileFormat::Bsd | FileFormat::Bsd44 => "dumpsum",
        _ => "cg_write_arcs",
    };
    let syms = &a.symtab.syms;
    for node in 0..a.cg.num_syms {
        for arc in a.cg.children(node) {
            let arc = &a.cg.arcs[arc];
            a.trace.fmt(format_args!(
                "[{label}] frompc 0x{:x} selfpc 0x{:x} count {}\n",
                syms[arc.parent].addr, syms[arc.child].addr, arc.count
            ));
        }
    }
}

/// What gprof 2.40's `hertz()` answers on Linux (observed: a 100 Hz BSD profile summed under
/// `-Ob` gets the old header).
const GPROF_HERTZ: u32 = 100;

/// Under `-Ob`/`-O4` gprof writes the sum as a BSD file: a 4.4BSD header (version, its rate,
/// 12 zero bytes) for `-O4`, and for `-Ob` when the rate is not its `hertz()`, else the old
/// BSD header; the one histogram range's bins; then the arcs as above, with pointer-sized
/// counts.
fn bsd_bytes(
    a: &Analysis<'_>,
    mut w: Writer<Vec<u8>>,
) -> std::result::Result<Vec<u8>, gmon::write::WriteError<std::convert::Infallible>> {
    let (low, high, bins): (u64, u64, &[u32]) = match a.hist.ranges.first() {
        Some(r) => (r.low_pc, r.high_pc, &r.samples),
        None => (0, 0, &[]),
    };
    let nbins = bins.len() as u32;
    if a.file_format == FileFormat::Bsd44 || a.hist.hz != GPROF_HERTZ {
        w.bsd44_header(low, high, nbins, a.hist.hz)?;
    } else {
        w.oldbsd_header(low, high, nbins)?;
    }
    w.bsd_bins(nbins, bins.iter().map(|&s| s as u16))?;
    if a.has_call_graph {
        let syms = &a.symtab.syms;
        for node in 0..a.cg.num_syms {
            for arc in a.cg.children(node) {
                let arc = &a.cg.arcs[arc];
                w.bsd_arc(syms[arc.parent].addr, syms[arc.child].addr, arc.count)?;
            }
        }
    }
    Ok(w.into_inner())
}

/// Write `bytes` to `path`, atomically (a temporary file in the same directory, renamed
/// over it).
pub fn write(path: &Path, bytes: &[u8]) -> Result<()> {
    let tmp = path.with_file_name(format!(".gmon.sum.tmp.{}", std::process::id()));
    let result = std::fs::write(&tmp, bytes)
        .and_then(|()| std::fs::rename(&tmp, path))
        .map_err(|e| Error::input(format!("{}: cannot write: {e}", path.display())));
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// The size field of a histogram header as gprof read it: a GNU record's bin count, a BSD
/// header's `ncnt` (the bins in bytes plus the header).
pub fn header_size_field(format: gmon::read::Format, bins: u32, ptr: PtrSize) -> u32 {
    let p = ptr.bytes() as u32;
    match format {
        gmon::read::Format::Gnu { .. } => bins,
        gmon::read::Format::Bsd44 => bins.wrapping_mul(2).wrapping_add(2 * p + 24),
        gmon::read::Format::OldBsd => bins.wrapping_mul(2).wrapping_add(2 * p + 4),
    }
}
