//! The source file gprof prints after a static function in the call graph's index.
//!
//! gprof asks BFD for the "nearest line" of every function's address when it builds its
//! symbol table (`get_src_info` → `bfd_find_nearest_line`) and keeps the file only when BFD
//! found a file, a function name and a non-zero line. For DWARF that file comes from the
//! **line table**: the row covering the address, which for optimized code is often the file
//! of code inlined at the function's first instruction (`atomic.rs`, `option.rs`), not the
//! file the function is declared in. So this module reads `.debug_line` rows, not
//! `DW_AT_decl_file`. The index prints the file's base name (gprof without `-L`).

use std::collections::HashMap;

use profil_symbols::dwarf::{with_dwarf_having, R};

/// For each address of `addrs` (link-time) covered by a line-table row with a non-zero line,
/// the base name of that row's file. Empty without DWARF; a unit that fails to parse is
/// skipped (a file name is decoration, never a reason to fail).
pub fn line_table_files(data: &[u8], addrs: &[u64]) -> HashMap<u64, Vec<u8>> {
    let mut out = HashMap::new();
    if addrs.is_empty() {
        return out;
    }
    let mut sorted = addrs.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    with_dwarf_having(data, ".debug_line", |dwarf| {
        let mut units = dwarf.units();
        while let Ok(Some(header)) = units.next() {
            if let Ok(unit) = dwarf.unit(header) {
                let _ = scan_unit(dwarf, &unit, &sorted, &mut out);
            }
        }
    });
    out
}

fn scan_unit(
    dwarf: &gimli::Dwarf<R<'_>>,
    unit: &gimli::Unit<R<'_>>,
    addrs: &[u64],
    out: &mut HashMap<u64, Vec<u8>>,
) -> gimli::Result<()> {
    let Some(program) = unit.line_program.clone() else {
        return Ok(());
    };
    let mut rows = program.rows();
    // The previous row of the current sequence: it covers [its address, this row's).
    let mut prev: Option<(u64, u64, u64)> = None; // (address, file index, line)
    while let Some((header, row)) = rows.next_row()? {
        let addr = row.address();
        if let Some((start, file, line)) = prev {
            if addr > start && line != 0 {
                let first = addrs.partition_point(|&a| a < start);
                for &a in addrs[first..].iter().take_while(|&&a| a < addr) {
                    if let std::collections::hash_map::Entry::Vacant(e) = out.entry(a) {
                        if let Some(name) = base_name(dwarf, unit, header, file) {
                            e.insert(name);
                        }
                    }
                }
            }
        }
        prev = if row.end_sequence() {
            None
        } else {
            Some((addr, row.file_index(), row.line().map_or(0, |l| l.get())))
        };
    }
    Ok(())
}

fn base_name(
    dwarf: &gimli::Dwarf<R<'_>>,
    unit: &gimli::Unit<R<'_>>,
    header: &gimli::LineProgramHeader<R<'_>>,
    index: u64,
) -> Option<Vec<u8>> {
    let entry = header.file(index)?;
    let name = dwarf.attr_string(unit, entry.path_name()).ok()?;
    let name = name.slice();
    let base = match name.iter().rposition(|&b| b == b'/') {
        Some(i) => &name[i + 1..],
        None => name,
    };
    Some(base.to_vec())
}
