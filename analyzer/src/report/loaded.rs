//! What a report across objects reads of each object and the row it makes of a function:
//! shared by the rows ([`super::objects`]) and the stacks pass ([`super::objects_stacks`]),
//! which reuses what the rows read, so that neither needs the other.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use profil_symbols::ElfImage;

use crate::profile::debuginfo::SymbolSource;
use crate::profile::input::read_file;

/// One row: a function of one object.
#[derive(Debug, Clone)]
pub struct ObjectRow {
    /// Object display name.
    pub object: String,
    /// Demangled function name (or `<outside known functions>`).
    pub function: String,
    /// Samples.
    pub samples: f64,
    /// `file:line` of the function's entry (the executable's functions, from DWARF).
    pub location: Option<String>,
    /// For a row of code without symbols (`<object+0xLO-0xHI>`), that half-open link-time
    /// range.
    pub unknown_range: Option<(u64, u64)>,
}

/// Read an object and pick its symbol source ([`crate::profile::debuginfo`]: `.symtab`, the
/// build-id debug file, the `.gnu_debuglink` file, `.dynsym`). Errors are short reasons.
pub fn load_object(
    path: &Path,
    build_id: &[u8],
    debug_root: &Path,
) -> std::result::Result<(Vec<u8>, SymbolSource), String> {
    let data = read_file(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?
        .to_vec();
    ElfImage::parse(&data).map_err(|e| format!("{}: {e}", path.display()))?;
    let (debug, source) =
        crate::profile::debuginfo::find_symbols(path, &data, build_id, debug_root);
    Ok((debug.unwrap_or(data), source))
}

/// What [`super::objects::attribute`] read, for the stacks pass ([`super::objects_stacks::measure`]) to reuse
/// instead of reading and parsing every object, and the executable's DWARF, a second time.
#[derive(Debug, Default)]
pub struct Loaded {
    /// Each object's symbol file (its own bytes, or its debug file), by the object's path.
    pub files: HashMap<PathBuf, Vec<u8>>,
    /// The executable's function locations (object 0, when it had samples).
    pub exe_locations: Option<HashMap<u64, profil_symbols::dwarf::Location>>,
}

/// Samples closer than this (bytes) outside every symbol of an object are one
/// `<object+0xLO-0xHI>` row.
pub(crate) const UNKNOWN_GAP: u64 = 0x400;

/// Samples outside every symbol of an object, `(lo, hi, samples)` pieces, grouped into the
/// address ranges the report names (pieces no more than `UNKNOWN_GAP`, 1 KiB, apart are one), in
/// address order.
pub fn group_unknown(mut pieces: Vec<(u64, u64, f64)>) -> Vec<(u64, u64, f64)> {
    pieces.sort_by_key(|p| p.0);
    let mut groups: Vec<(u64, u64, f64)> = Vec::new();
    for (lo, hi, s) in pieces {
        match groups.last_mut() {
            Some(g) if lo <= g.1.saturating_add(UNKNOWN_GAP) => {
                g.1 = g.1.max(hi);
                g.2 += s;
            }
            _ => groups.push((lo, hi, s)),
        }
    }
    groups
}

/// The name of code of `object` outside every symbol in `[lo, hi)`: `<object+0xLO-0xHI>`.
pub fn unknown_name(object: &str, lo: u64, hi: u64) -> String {
    format!("<{object}+{lo:#x}-{hi:#x}>")
}

/// The name of a stack frame at `addr` of `object` outside every symbol: the range of
/// `ranges` (the object's [`group_unknown`] ranges) that holds it, or is within the grouping
/// gap of it, else its own 4 KiB page. Every view names such a frame this way.
pub fn unknown_frame_name(object: &str, ranges: &[(u64, u64)], addr: u64) -> String {
    let (lo, hi) = ranges
        .iter()
        .copied()
        .find(|&(lo, hi)| {
            addr >= lo.saturating_sub(UNKNOWN_GAP) && addr < hi.saturating_add(UNKNOWN_GAP)
        })
        .unwrap_or_else(|| {
            let lo = addr & !0xfff;
            (lo, lo + 0x1000)
        });
    unknown_name(object, lo, hi)
}
