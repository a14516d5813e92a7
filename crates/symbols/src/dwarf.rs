//! `file:line` of each function's entry, from DWARF (`.debug_info` + `.debug_line`).
//!
//! For every `DW_TAG_subprogram` with code (`DW_AT_low_pc` or `DW_AT_ranges`), the location
//! is its `DW_AT_decl_file`/`DW_AT_decl_line`, looked up through `DW_AT_specification` or
//! `DW_AT_abstract_origin` when the concrete entry does not carry them (C++ methods,
//! out-of-line copies of inline functions). Compressed sections are handled by `object`.
//! Errors in one unit skip that unit: a location is a convenience, never a reason to fail.

use std::borrow::Cow;
use std::collections::HashMap;

use gimli::{AttributeValue, EndianSlice, RunTimeEndian};
use object::{Object, ObjectSection};

/// A source location.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    /// File path as recorded (joined with its directory unless that is the compilation dir).
    pub file: String,
    /// Line number (1-based).
    pub line: u64,
}

impl std::fmt::Display for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.file, self.line)
    }
}

/// The DWARF reader type of this crate: borrowed section bytes, byte order from the ELF.
pub type R<'a> = EndianSlice<'a, RunTimeEndian>;

/// Run `f` over the DWARF sections of the ELF file `data` (decompressed as needed).
/// `None` when the file does not parse or has no `.debug_info`.
pub(crate) fn with_dwarf<T>(data: &[u8], f: impl FnOnce(&gimli::Dwarf<R<'_>>) -> T) -> Option<T> {
    with_dwarf_having(data, ".debug_info", f)
}

/// Run `f` over the DWARF sections of the ELF file `data` (decompressed as needed; a section
/// that is absent or cannot be decompressed reads as empty). `None` when the file does not
/// parse or has no section named `required`: the one section the caller cannot do without.
pub fn with_dwarf_having<T>(
    data: &[u8],
    required: &str,
    f: impl FnOnce(&gimli::Dwarf<R<'_>>) -> T,
) -> Option<T> {
    let file = object::File::parse(data).ok()?;
    file.section_by_name(required)?;
    let endian = if file.is_little_endian() {
        RunTimeEndian::Little
    } else {
        RunTimeEndian::Big
    };
    let load = |id: gimli::SectionId| -> Result<Cow<'_, [u8]>, gimli::Error> {
        Ok(file
            .section_by_name(id.name())
            .and_then(|s| s.uncompressed_data().ok())
            .unwrap_or(Cow::Borrowed(&[])))
    };
    let sections = gimli::DwarfSections::load(load).ok()?;
    let dwarf = sections.borrow(|s| EndianSlice::new(s, endian));
    Some(f(&dwarf))
}

/// Locations of function entries by link-time address. Empty without debug info.
pub fn function_locations(data: &[u8]) -> HashMap<u64, Location> {
    let mut out = HashMap::new();
    each_unit(data, |dwarf, unit| {
        let _ = scan_unit(dwarf, unit, &mut out);
    });
    out
}

/// Run `f` over every unit of the ELF file `data`'s DWARF that parses.
fn each_unit(data: &[u8], mut f: impl FnMut(&gimli::Dwarf<R<'_>>, &gimli::Unit<R<'_>>)) {
    with_dwarf(data, |dwarf| {
        let mut units = dwarf.units();
        while let Ok(Some(header)) = units.next() {
            if let Ok(unit) = dwarf.unit(header) {
                f(dwarf, &unit);
            }
        }
    });
}

fn decl<'a>(
    unit: &gimli::Unit<R<'a>>,
    entry: &gimli::DebuggingInformationEntry<R<'a>>,
) -> gimli::Result<Option<(u64, u64)>> {
    let mut current = entry.clone();
    for _ in 0..4 {
        if let (Some(AttributeValue::FileIndex(f)), Some(line)) = (
            current.attr_value(gimli::DW_AT_decl_file),
            current.attr_value(gimli::DW_AT_decl_line),
        ) {
            if let Some(line) = line.udata_value() {
                return Ok(Some((f, line)));
            }
        }
        let next = current
            .attr_value(gimli::DW_AT_specification)
            .or_else(|| current.attr_value(gimli::DW_AT_abstract_origin));
        match next {
            Some(AttributeValue::UnitRef(off)) => current = unit.entry(off)?,
            _ => return Ok(None),
        }
    }
    Ok(None)
}

pub(crate) fn file_name(
    dwarf: &gimli::Dwarf<R<'_>>,
    unit: &gimli::Unit<R<'_>>,
    index: u64,
) -> Option<String> {
    let program = unit.line_program.as_ref()?;
    let header = program.header();
    let entry = header.file(index)?;
    let name = dwarf.attr_string(unit, entry.path_name()).ok()?;
    let name = String::from_utf8_lossy(name.slice()).into_owned();
    if name.starts_with('/') {
        return Some(name);
    }
    let dir_index = entry.directory_index();
    // Directory 0 is the compilation directory: leave the path relative to it.
    if dir_index == 0 {
        return Some(name);
    }
    let dir = entry
        .directory(header)
        .and_then(|d| dwarf.attr_string(unit, d).ok());
    match dir {
        Some(d) if !d.is_empty() => Some(format!("{}/{name}", String::from_utf8_lossy(d.slice()))),
        _ => Some(name),
    }
}

/// The path BFD 2.40 gives file `index` of `unit`'s line table (`concat_filename`): an
/// absolute name as it is; otherwise joined to its directory entry when that is absolute,
/// else to the unit's `DW_AT_comp_dir` (and the relative directory, if any). gprof prints
/// it under `-L`.
pub(crate) fn bfd_file_name(
    dwarf: &gimli::Dwarf<R<'_>>,
    unit: &gimli::Unit<R<'_>>,
    index: u64,
) -> Option<Vec<u8>> {
    let program = unit.line_program.as_ref()?;
    let header = program.header();
    // A file BFD cannot name (no such entry, no name, an empty one) is `<unknown>`.
    let unknown = || Some(b"<unknown>".to_vec());
    let Some(entry) = header.file(index) else {
        return unknown();
    };
    // Bytes as they are: gprof prints them raw, valid UTF-8 or not. BFD reads an empty
    // string as none.
    let text = |v: AttributeValue<R<'_>>| {
        dwarf
            .attr_string(unit, v)
            .ok()
            .map(|s| s.slice().to_vec())
            .filter(|s| !s.is_empty())
    };
    let Some(name) = text(entry.path_name()) else {
        return unknown();
    };
    if name.starts_with(b"/") {
        return Some(name);
    }
    // Before DWARF 5, directory 0 is "no directory entry" to BFD.
    let mut subdir = if header.version() < 5 && entry.directory_index() == 0 {
        None
    } else {
        entry.directory(header).and_then(text)
    };
    let comp_dir = unit
        .comp_dir
        .map(|d| d.slice().to_vec())
        .filter(|d| !d.is_empty());
    let mut dir = match &subdir {
        Some(d) if d.starts_with(b"/") => None,
        _ => comp_dir,
    };
    if dir.is_none() {
        dir = subdir.take();
    }
    let join = |parts: &[&[u8]]| parts.join(&b'/');
    Some(match (dir, subdir) {
        (None, _) => name,
        (Some(d), Some(sub)) => join(&[&d, &sub, &name]),
        (Some(d), None) => join(&[&d, &name]),
    })
}

fn scan_unit(
    dwarf: &gimli::Dwarf<R<'_>>,
    unit: &gimli::Unit<R<'_>>,
    out: &mut HashMap<u64, Location>,
) -> gimli::Result<()> {
    let mut cursor = unit.entries();
    // File names by index (most functions of a unit share a few files).
    let mut files: HashMap<u64, Option<String>> = HashMap::new();
    let mut starts = Vec::new();
    while let Some(entry) = cursor.next_dfs()? {
        if entry.tag() != gimli::DW_TAG_subprogram {
            continue;
        }
        starts.clear();
        if let Some(low) = entry.attr_value(gimli::DW_AT_low_pc) {
            if let Some(a) = dwarf.attr_address(unit, low)? {
                starts.push(a);
            }
        } else if entry.attr_value(gimli::DW_AT_ranges).is_some() {
            let mut ranges = dwarf.die_ranges(unit, entry)?;
            while let Some(r) = ranges.next()? {
                starts.push(r.begin);
            }
        }
        if starts.is_empty() {
            continue;
        }
        let Some((file, line)) = decl(unit, entry)? else {
            continue;
        };
        let Some(file) = files
            .entry(file)
            .or_insert_with(|| file_name(dwarf, unit, file))
        else {
            continue;
        };
        for &a in &starts {
            out.entry(a).or_insert_with(|| Location {
                file: file.clone(),
                line,
            });
        }
    }
    Ok(())
}

/// Names with generic arguments (`count<alloc::string::String, …>`, rustc's `DW_AT_name` of a
/// generic function's instance) by the function's entry address: what tells the instances of
/// one generic function apart ([`crate::distinguish`]). Empty without debug info.
pub fn generic_names(data: &[u8]) -> HashMap<u64, String> {
    let mut out = HashMap::new();
    each_unit(data, |dwarf, unit| {
        let _ = scan_generic_names(dwarf, unit, &mut out);
    });
    out
}

fn scan_generic_names(
    dwarf: &gimli::Dwarf<R<'_>>,
    unit: &gimli::Unit<R<'_>>,
    out: &mut HashMap<u64, String>,
) -> gimli::Result<()> {
    let mut cursor = unit.entries();
    while let Some(entry) = cursor.next_dfs()? {
        if entry.tag() != gimli::DW_TAG_subprogram {
            continue;
        }
        let Some(low) = entry.attr_value(gimli::DW_AT_low_pc) else {
            continue;
        };
        let Some(addr) = dwarf.attr_address(unit, low)? else {
            continue;
        };
        // The concrete entry, or the abstract one it points to, carries the name.
        let mut named = entry.clone();
        for _ in 0..3 {
            if named.attr_value(gimli::DW_AT_name).is_some() {
                break;
            }
            match named
                .attr_value(gimli::DW_AT_specification)
                .or_else(|| named.attr_value(gimli::DW_AT_abstract_origin))
            {
                Some(AttributeValue::UnitRef(off)) => named = unit.entry(off)?,
                _ => break,
            }
        }
        let Some(name) = named.attr_value(gimli::DW_AT_name) else {
            continue;
        };
        let name = dwarf.attr_string(unit, name)?;
        let name = String::from_utf8_lossy(name.slice());
        if name.contains('<') {
            out.entry(addr).or_insert_with(|| name.into_owned());
        }
    }
    Ok(())
}
