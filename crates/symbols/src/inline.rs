//! Functions and inlined copies of functions by address, from DWARF (`.debug_info`).
//!
//! Every `DW_TAG_subprogram` and `DW_TAG_inlined_subroutine` with code becomes one
//! [`Frame`] per address range it covers. An inlined subroutine sits inside the function it
//! was inlined into, so the frames holding an address, ordered by depth, are its *inline
//! chain*: the outermost is the real (out-of-line) function, the innermost the source
//! function whose code the instruction is. Each inlined frame also records where it was
//! inlined (`DW_AT_call_file`/`DW_AT_call_line`).
//!
//! # Names
//!
//! A frame's name is looked up through `DW_AT_abstract_origin` and `DW_AT_specification`
//! (inlined copies and out-of-line definitions carry neither name themselves). The linkage
//! (mangled) name is preferred, as BFD does; a C unit's plain `DW_AT_name` counts as a
//! linkage name, since C does not mangle. [`Frame::is_linkage`] says which one was found:
//! BFD (and so `gprof -l` and `addr2line -f`) replaces a non-linkage name by the ELF
//! symbol's.
//!
//! As in [`crate::lines`], only the units whose code intersects the wanted address ranges
//! are read, addresses are link-time addresses, and damaged units are skipped.

use std::collections::HashMap;
use std::rc::Rc;

use gimli::AttributeValue;

use crate::dwarf::{file_name, with_dwarf, R};
use crate::lines::{for_each_wanted_unit, intersects, normalize};

/// One address range of a function or of an inlined copy of one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    /// First byte (link-time address).
    pub start: u64,
    /// One past the last byte.
    pub end: u64,
    /// Nesting: 0 for a subprogram, 1 for code inlined into it, and so on.
    pub depth: u32,
    /// Index into [`InlineMap::names`] (`u32::MAX`: no name found).
    pub name: u32,
    /// The name is a linkage name (or a C name).
    pub is_linkage: bool,
    /// For an inlined copy: where it was inlined, as an index into [`InlineMap::files`]
    /// and a line (0 when unknown).
    pub call_file: Option<u32>,
    /// Line of the call that was inlined.
    pub call_line: u64,
    /// Position of the DIE in the unit walk (later DIEs win ties, as in BFD).
    pub order: u32,
}

/// Frames of the wanted address ranges.
#[derive(Debug, Clone, Default)]
pub struct InlineMap {
    /// All frames, sorted by `start` (they nest; they do not partition).
    pub frames: Vec<Frame>,
    /// Names (raw, usually mangled; invalid UTF-8 replaced).
    pub names: Vec<String>,
    /// The bytes of the names that are not UTF-8, by index into `names`.
    pub raw_names: HashMap<u32, Vec<u8>>,
    /// Files of call sites.
    pub files: Vec<String>,
    /// Address ranges of the units whose DIE tree could not be read to its end (a missing
    /// abbreviation, a truncated attribute): their frames up to the damage are kept, but BFD
    /// gives up on such a unit (`scan_unit_for_symbols` fails) and answers nothing in it.
    pub damaged: Vec<(u64, u64)>,
    /// Largest `end - start` of any frame (bounds the backward search of [`Self::chain`]).
    max_len: u64,
}

impl InlineMap {
    /// The frames holding `addr`, outermost first. When two frames of the same depth hold
    /// it (damaged or overlapping DWARF), both are returned, in DIE order.
    pub fn chain(&self, addr: u64) -> Vec<&Frame> {
        let hi = self.frames.partition_point(|f| f.start <= addr);
        let mut out: Vec<&Frame> = self.frames[..hi]
            .iter()
            .rev()
            .take_while(|f| addr - f.start < self.max_len)
            .filter(|f| addr < f.end)
            .collect();
        out.sort_by_key(|f| (f.depth, f.order));
        out
    }

    /// BFD's choice of "the function" at `addr`: the smallest range holding it, and on a
    /// tie the DIE that comes later (deeper).
    pub fn innermost(&self, addr: u64) -> Option<&Frame> {
        self.chain(addr).into_iter().min_by(|a, b| {
            (a.end - a.start)
                .cmp(&(b.end - b.start))
                .then(b.order.cmp(&a.order))
        })
    }

    /// A cursor answering [`Self::innermost`] for non-decreasing addresses in time
    /// proportional to the frames passed plus the nesting depth, instead of a backward
    /// search over every frame shorter than the longest one per address (a `main` with
    /// 200,000 call sites made that quadratic).
    pub fn innermost_cursor(&self) -> InnermostCursor<'_> {
        InnermostCursor {
            map: self,
            next: 0,
            active: Vec::new(),
            last: 0,
        }
    }

    /// Name `index` as its bytes (what gprof prints).
    pub fn name_bytes(&self, index: u32) -> Option<&[u8]> {
        match self.raw_names.get(&index) {
            Some(raw) => Some(raw),
            None => self.names.get(index as usize).map(|n| n.as_bytes()),
        }
    }

    /// The name of a frame.
    pub fn name(&self, f: &Frame) -> Option<&str> {
        self.names.get(f.name as usize).map(String::as_str)
    }

    /// The `file:line` a frame was inlined at.
    pub fn call_site(&self, f: &Frame) -> Option<String> {
        let file = self.files.get(f.call_file? as usize)?;
        Some(format!("{file}:{}", f.call_line))
    }

    /// Every address where the innermost frame may change inside `[lo, hi)`: frame starts
    /// and ends, sorted and deduplicated.
    pub fn boundaries(&self, lo: u64, hi: u64) -> Vec<u64> {
        let mut v: Vec<u64> = self
            .frames
            .iter()
            .flat_map(|f| [f.start, f.end])
            .filter(|&a| lo <= a && a < hi)
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    }
}

/// [`InlineMap::innermost`] over non-decreasing addresses (see
/// [`InlineMap::innermost_cursor`]).
#[derive(Debug, Clone)]
pub struct InnermostCursor<'a> {
    map: &'a InlineMap,
    /// Frames before this one have started (`start <= ` the last address).
    next: usize,
    /// The started frames that had not ended at the last address.
    active: Vec<&'a Frame>,
    /// The last address asked for.
    last: u64,
}

impl<'a> InnermostCursor<'a> {
    /// [`InlineMap::innermost`]`(addr)`; `addr` must not be below the previous call's (a
    /// smaller one starts the cursor over).
    pub fn at(&mut self, addr: u64) -> Option<&'a Frame> {
        if addr < self.last {
            self.next = 0;
            self.active.clear();
        }
        self.last = addr;
        let frames = &self.map.frames;
        while let Some(f) = frames.get(self.next).filter(|f| f.start <= addr) {
            self.active.push(f);
            self.next += 1;
        }
        self.active.retain(|f| addr < f.end);
        // The same choice as `innermost`: smallest range, then the later DIE.
        self.active.iter().copied().min_by(|a, b| {
            (a.end - a.start)
                .cmp(&(b.end - b.start))
                .then(b.order.cmp(&a.order))
        })
    }
}

/// Functions and inlined copies in the ELF file `data` whose code intersects `wanted`
/// (half-open link-time ranges, any order). Empty without DWARF.
pub fn inline_map(data: &[u8], wanted: &[(u64, u64)]) -> InlineMap {
    inline_map_with(data, wanted, false)
}

/// [`inline_map`], optionally choosing the units as BFD 2.40 does (`gprof`): by their own
/// ranges, never through `.debug_aranges`.
pub fn inline_map_with(data: &[u8], wanted: &[(u64, u64)], bfd: bool) -> InlineMap {
    let wanted = normalize(wanted);
    if wanted.is_empty() {
        return InlineMap::default();
    }
    let map = with_dwarf(data, |dwarf| {
        let mut b = InlineBuilder::default();
        for_each_wanted_unit(dwarf, &wanted, !bfd, |unit| {
            b.unit(dwarf, unit, &wanted, crate::lines::bfd_die_end(unit));
        });
        b.map
    });
    finish(map.unwrap_or_default())
}

/// [`crate::lines::line_map_with`] and [`inline_map_with`] in BFD mode (`gprof -l`), from one
/// reading of the DWARF: each unit is opened once and its DIE tree checked once
/// ([`crate::lines::bfd_die_end`]) for both maps.
pub fn bfd_line_and_inline_maps(
    data: &[u8],
    wanted: &[(u64, u64)],
) -> (crate::lines::LineMap, InlineMap) {
    let wanted = normalize(wanted);
    if wanted.is_empty() {
        return Default::default();
    }
    let maps = with_dwarf(data, |dwarf| {
        let mut lines = crate::lines::LineBuilder::new(true);
        let mut inl = InlineBuilder::default();
        for_each_wanted_unit(dwarf, &wanted, false, |unit| {
            let end = crate::lines::bfd_die_end(unit);
            lines.unit(dwarf, unit, &wanted, || end.is_ok());
            inl.unit(dwarf, unit, &wanted, end);
        });
        let lines = lines
            .finish()
            .unwrap_or_else(|| crate::lines::build_unmerged(dwarf, &wanted, true));
        (lines, inl.map)
    });
    let (lines, inl) = maps.unwrap_or_default();
    (lines, finish(inl))
}

/// [`inline_map_with`]'s reading, one unit at a time.
#[derive(Default)]
struct InlineBuilder<'a> {
    map: InlineMap,
    names: HashMap<Vec<u8>, u32>,
    files: HashMap<String, u32>,
    order: u32,
    units: Units<'a>,
}

impl<'a> InlineBuilder<'a> {
    /// Add the frames of `unit`, whose DIEs BFD reads up to `end` ([`crate::lines::bfd_die_end`];
    /// an error: the unit is damaged).
    fn unit(
        &mut self,
        dwarf: &gimli::Dwarf<R<'a>>,
        unit: &gimli::Unit<R<'a>>,
        wanted: &[(u64, u64)],
        end: gimli::Result<gimli::UnitOffset>,
    ) {
        let mut tables = Tables {
            map: &mut self.map,
            names: &mut self.names,
            files: &mut self.files,
            order: &mut self.order,
            units: &mut self.units,
        };
        if end
            .and_then(|end| scan(dwarf, unit, wanted, end, &mut tables))
            .is_err()
        {
            if let Ok(mut ranges) = dwarf.unit_ranges(unit) {
                while let Ok(Some(r)) = ranges.next() {
                    self.map.damaged.push((r.begin, r.end));
                }
            }
        }
    }
}

/// The frames sorted for lookups, the damaged ranges merged.
fn finish(mut map: InlineMap) -> InlineMap {
    map.frames.sort_by_key(|f| (f.start, f.depth, f.order));
    map.damaged = normalize(&map.damaged);
    map.max_len = map
        .frames
        .iter()
        .map(|f| f.end - f.start)
        .max()
        .unwrap_or(0);
    map
}

/// Languages whose `DW_AT_name` BFD treats as a linkage name (they do not mangle).
fn unmangled(lang: Option<gimli::DwLang>) -> bool {
    matches!(
        lang,
        Some(gimli::DW_LANG_C89)
            | Some(gimli::DW_LANG_C)
            | Some(gimli::DW_LANG_C99)
            | Some(gimli::DW_LANG_C11)
            | Some(gimli::DW_LANG_C17)
    )
}

/// Whether an attribute value has a string form (BFD's `is_str_form`: others in a name
/// attribute are ignored).
fn is_string_form(v: &AttributeValue<R<'_>>) -> bool {
    matches!(
        v,
        AttributeValue::String(_)
            | AttributeValue::DebugStrRef(_)
            | AttributeValue::DebugStrRefSup(_)
            | AttributeValue::DebugLineStrRef(_)
            | AttributeValue::DebugStrOffsetsIndex(_)
    )
}

/// A string attribute's bytes (valid UTF-8 or not: gprof prints names raw).
fn attr_str<'a>(
    dwarf: &gimli::Dwarf<R<'a>>,
    unit: &gimli::Unit<R<'a>>,
    v: AttributeValue<R<'a>>,
) -> Option<Vec<u8>> {
    let s = dwarf.attr_string(unit, v).ok()?;
    Some(s.slice().to_vec())
}

/// Units by `.debug_info` offset, parsed on demand, for references into other units
/// (`DW_FORM_ref_addr`: Rust's inlined copies point at the abstract function in the crate
/// that defined it).
#[derive(Default)]
struct Units<'a> {
    /// `(start, end, header)` of every unit, once any cross-unit reference was seen.
    headers: Option<Vec<(usize, usize, gimli::UnitHeader<R<'a>>)>>,
    parsed: HashMap<usize, Rc<gimli::Unit<R<'a>>>>,
}

impl<'a> Units<'a> {
    /// The unit holding `.debug_info` offset `off`, and the entry's offset in it.
    fn resolve(
        &mut self,
        dwarf: &gimli::Dwarf<R<'a>>,
        off: usize,
    ) -> Option<(Rc<gimli::Unit<R<'a>>>, gimli::UnitOffset)> {
        let headers = self.headers.get_or_insert_with(|| {
            let mut v = Vec::new();
            let mut it = dwarf.units();
            while let Ok(Some(h)) = it.next() {
                if let Some(start) = h.offset().to_debug_info_offset(&h) {
                    v.push((start.0, start.0 + h.length_including_self(), h));
                }
            }
            v
        });
        let i = headers.partition_point(|h| h.1 <= off);
        let (start, end, header) = headers.get(i)?;
        if off < *start || off >= *end {
            return None;
        }
        let unit = match self.parsed.get(start) {
            Some(u) => u.clone(),
            None => {
                let u = Rc::new(dwarf.unit(*header).ok()?);
                self.parsed.insert(*start, u.clone());
                u
            }
        };
        let uoff = gimli::DebugInfoOffset(off).to_unit_offset(&unit.header)?;
        Some((unit, uoff))
    }
}

/// (name, is_linkage) of a function DIE, through abstract origins and specifications, in
/// this unit or another one.
fn die_name<'a>(
    dwarf: &gimli::Dwarf<R<'a>>,
    unit: &gimli::Unit<R<'a>>,
    entry: &gimli::DebuggingInformationEntry<R<'a>>,
    c_unit: bool,
    units: &mut Units<'a>,
) -> gimli::Result<Option<(Vec<u8>, bool)>> {
    let mut plain: Option<Vec<u8>> = None;
    let mut current = entry.clone();
    let mut other: Option<Rc<gimli::Unit<R<'a>>>> = None;
    for _ in 0..8 {
        let u: &gimli::Unit<R<'a>> = other.as_deref().unwrap_or(unit);
        // A string BFD cannot read (an offset past its section) is none to it, as an empty
        // one is: the function keeps no name.
        for at in [gimli::DW_AT_linkage_name, gimli::DW_AT_MIPS_linkage_name] {
            if let Some(v) = current.attr_value(at).filter(is_string_form) {
                return Ok(Some((attr_str(dwarf, u, v).unwrap_or_default(), true)));
            }
        }
        if plain.is_none() {
            if let Some(v) = current.attr_value(gimli::DW_AT_name).filter(is_string_form) {
                plain = Some(attr_str(dwarf, u, v).unwrap_or_default());
            }
        }
        let next = current
            .attr_value(gimli::DW_AT_abstract_origin)
            .or_else(|| current.attr_value(gimli::DW_AT_specification));
        match next {
            Some(AttributeValue::UnitRef(off)) => current = u.entry(off)?,
            Some(AttributeValue::DebugInfoRef(off)) => match units.resolve(dwarf, off.0) {
                Some((nu, uoff)) => {
                    current = nu.entry(uoff)?;
                    other = Some(nu);
                }
                None => break,
            },
            _ => break,
        }
    }
    Ok(plain.map(|p| (p, c_unit)))
}

fn intern(table: &mut HashMap<String, u32>, list: &mut Vec<String>, s: String) -> u32 {
    let next = list.len() as u32;
    let id = *table.entry(s.clone()).or_insert(next);
    if id == next {
        list.push(s);
    }
    id
}

/// [`intern`] for a name's bytes: distinct bytes are distinct names, and a name that is not
/// UTF-8 is listed with its invalid bytes replaced and kept whole in `raw`.
fn intern_bytes(
    table: &mut HashMap<Vec<u8>, u32>,
    list: &mut Vec<String>,
    raw: &mut HashMap<u32, Vec<u8>>,
    s: Vec<u8>,
) -> u32 {
    let next = list.len() as u32;
    let id = *table.entry(s.clone()).or_insert(next);
    if id == next {
        match String::from_utf8(s) {
            Ok(text) => list.push(text),
            Err(e) => {
                let bytes = e.into_bytes();
                list.push(String::from_utf8_lossy(&bytes).into_owned());
                raw.insert(id, bytes);
            }
        }
    }
    id
}

/// What [`scan`] fills in.
struct Tables<'t, 'a> {
    map: &'t mut InlineMap,
    names: &'t mut HashMap<Vec<u8>, u32>,
    files: &'t mut HashMap<String, u32>,
    order: &'t mut u32,
    units: &'t mut Units<'a>,
}

fn scan<'a>(
    dwarf: &gimli::Dwarf<R<'a>>,
    unit: &gimli::Unit<R<'a>>,
    wanted: &[(u64, u64)],
    end: gimli::UnitOffset,
    t: &mut Tables<'_, 'a>,
) -> gimli::Result<()> {
    let map = &mut *t.map;
    let names = &mut *t.names;
    let files = &mut *t.files;
    let order = &mut *t.order;
    let units = &mut *t.units;
    let mut cursor = unit.entries();
    // Tree depth of each enclosing function DIE, innermost last.
    let mut stack: Vec<isize> = Vec::new();
    let mut c_unit = false;
    // BFD reads no further than the end of the unit DIE's children (damaged DWARF can have
    // DIEs after it).
    // The DIEs before `end` read (the same reading), so gimli's error in reading on is past it.
    while let Ok(Some(entry)) = cursor.next_dfs() {
        if entry.offset() >= end {
            break;
        }
        let depth = entry.depth();
        while stack.last().is_some_and(|&d| d >= depth) {
            stack.pop();
        }
        let tag = entry.tag();
        if tag == gimli::DW_TAG_compile_unit || tag == gimli::DW_TAG_partial_unit {
            c_unit = match entry.attr_value(gimli::DW_AT_language) {
                Some(AttributeValue::Language(l)) => unmangled(Some(l)),
                _ => false,
            };
            continue;
        }
        if tag != gimli::DW_TAG_subprogram && tag != gimli::DW_TAG_inlined_subroutine {
            continue;
        }
        let fdepth = stack.len() as u32;
        stack.push(depth);
        let mut ranges = Vec::new();
        let mut iter = dwarf.die_ranges(unit, entry)?;
        while let Some(r) = iter.next()? {
            if r.begin < r.end && intersects(wanted, r.begin, r.end) {
                ranges.push(r);
            }
        }
        if ranges.is_empty() {
            continue;
        }
        *order += 1;
        let (name, is_linkage) = match die_name(dwarf, unit, entry, c_unit, units)? {
            Some((n, l)) => (
                intern_bytes(names, &mut map.names, &mut map.raw_names, n),
                l,
            ),
            None => (u32::MAX, false),
        };
        let (call_file, call_line) = if tag == gimli::DW_TAG_inlined_subroutine {
            let file = match entry.attr_value(gimli::DW_AT_call_file) {
                Some(AttributeValue::FileIndex(i)) => file_name(dwarf, unit, i),
                Some(v) => v.udata_value().and_then(|i| file_name(dwarf, unit, i)),
                None => None,
            };
            let line = entry
                .attr_value(gimli::DW_AT_call_line)
                .and_then(|v| v.udata_value())
                .unwrap_or(0);
            (file.map(|f| intern(files, &mut map.files, f)), line)
        } else {
            (None, 0)
        };
        for r in ranges {
            map.frames.push(Frame {
                start: r.begin,
                end: r.end,
                depth: fdepth,
                name,
                is_linkage,
                call_file,
                call_line,
                order: *order,
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(start: u64, end: u64, depth: u32, order: u32) -> Frame {
        Frame {
            start,
            end,
            depth,
            name: order,
            is_linkage: true,
            call_file: None,
            call_line: 0,
            order,
        }
    }

    fn map(frames: Vec<Frame>) -> InlineMap {
        let max_len = frames.iter().map(|f| f.end - f.start).max().unwrap();
        InlineMap {
            frames,
            names: (0..10).map(|i| format!("f{i}")).collect(),
            raw_names: HashMap::new(),
            files: Vec::new(),
            damaged: Vec::new(),
            max_len,
        }
    }

    #[test]
    fn chains_nest_and_the_innermost_wins() {
        // f0 [0,100) holds f1 [10,50) which holds f2 [20,30); f3 [60,70) inside f0.
        let m = map(vec![
            frame(0, 100, 0, 0),
            frame(10, 50, 1, 1),
            frame(20, 30, 2, 2),
            frame(60, 70, 1, 3),
        ]);
        let names = |a| {
            m.chain(a)
                .iter()
                .map(|f| m.name(f).unwrap().to_owned())
                .collect::<Vec<_>>()
        };
        assert_eq!(names(25), ["f0", "f1", "f2"]);
        assert_eq!(names(30), ["f0", "f1"]);
        assert_eq!(names(65), ["f0", "f3"]);
        assert!(names(100).is_empty());
        assert_eq!(m.innermost(25).map(|f| f.order), Some(2));
        assert_eq!(m.innermost(5).map(|f| f.order), Some(0));
        assert_eq!(m.boundaries(15, 65), vec![20, 30, 50, 60]);
        let mut cursor = m.innermost_cursor();
        for a in [0, 5, 10, 20, 25, 29, 30, 50, 60, 65, 70, 99, 100, 150] {
            assert_eq!(cursor.at(a), m.innermost(a), "at {a}");
        }
        assert_eq!(cursor.at(25), m.innermost(25), "after going back");
    }
}
