//! Source lines of code addresses, from the DWARF line tables (`.debug_line`).
//!
//! A line table is a list of *sequences*; each is a run of rows `(address, file, line)`
//! sorted by address, and a row covers the bytes from its address up to the next row's
//! (the last row of a sequence only marks its end). [`line_map`] turns the rows into
//! [`LineSpan`]s, half-open address ranges with one `file:line` each, sorted and
//! non-overlapping, so that a lookup is a binary search.
//!
//! # Only what was sampled
//!
//! A profile touches a tiny part of a large program, and decoding every line program of a
//! large Rust binary costs seconds. So the caller passes the address ranges that hold
//! samples, and only the compilation units whose code intersects them are opened: the
//! units are chosen from `.debug_aranges` when the file has it (no DIE is parsed for the
//! others), else from each unit's `DW_AT_low_pc`/`DW_AT_ranges`. Of the chosen units'
//! rows, only the spans that intersect a wanted range are kept.
//!
//! # Reading the rows
//!
//! The rows of a line program that holds only what compilers write (special opcodes, the
//! standard opcodes with their usual operands, `end_sequence`, forward `set_address`,
//! `set_discriminator`) are decoded here ([`fast_rows`], cheaper per row than gimli's general
//! decoder: 864M to 711M instructions for a whole `gprof -b -p -pFILE` of a 50,000-function
//! program); any other program is read by gimli's `LineRows` from its
//! start, so the rows are gimli's either way (a test holds the two to each other on random
//! programs).
//!
//! When several rows share one address, the last one covers the bytes (the earlier ones
//! cover nothing), which is what binutils' `addr2line` answers. Rows with line 0 (code the
//! compiler could not attribute to a line) are kept with line 0.
//!
//! All addresses are **link-time addresses**. A unit whose DWARF is damaged is skipped: a
//! line is a convenience, never a reason to fail the report.

use std::collections::{BTreeSet, HashMap};

use crate::dwarf::{file_name, with_dwarf, R};

/// A range of code with one source line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineSpan {
    /// First byte (link-time address).
    pub start: u64,
    /// One past the last byte.
    pub end: u64,
    /// Index into [`LineMap::files`].
    pub file: u32,
    /// Line number (0: no line).
    pub line: u64,
}

/// The line spans of the wanted address ranges.
#[derive(Debug, Clone, Default)]
pub struct LineMap {
    /// File paths, as [`crate::dwarf::Location`] spells them (invalid UTF-8 replaced).
    pub files: Vec<String>,
    /// The bytes of the file paths that are not UTF-8, by index into `files`.
    pub raw_files: HashMap<u32, Vec<u8>>,
    /// Sorted by `start`, non-overlapping.
    pub spans: Vec<LineSpan>,
    /// Compilation units whose line program was decoded (for benchmarks and tests).
    pub units_decoded: usize,
}

impl LineMap {
    /// The span holding `addr`.
    pub fn lookup(&self, addr: u64) -> Option<&LineSpan> {
        let i = self.spans.partition_point(|s| s.end <= addr);
        self.spans.get(i).filter(|s| s.start <= addr)
    }

    /// A cursor answering [`Self::lookup`], cheapest for non-decreasing addresses: it steps
    /// along the spans, and searches only when an address goes back or jumps far ahead.
    pub fn cursor(&self) -> LineCursor<'_> {
        LineCursor {
            map: self,
            next: 0,
            last: 0,
        }
    }

    /// The spans that intersect `[lo, hi)`, in address order.
    pub fn overlapping(&self, lo: u64, hi: u64) -> &[LineSpan] {
        let i = self.spans.partition_point(|s| s.end <= lo);
        let j = i + self.spans[i..].partition_point(|s| s.start < hi);
        &self.spans[i..j]
    }

    /// File `index`'s path as its bytes (what gprof prints).
    pub fn file_bytes(&self, index: u32) -> &[u8] {
        match self.raw_files.get(&index) {
            Some(raw) => raw,
            None => self
                .files
                .get(index as usize)
                .map_or(b"??", |f| f.as_bytes()),
        }
    }

    /// The file path of a span.
    pub fn file(&self, span: &LineSpan) -> &str {
        self.files
            .get(span.file as usize)
            .map(String::as_str)
            .unwrap_or("??")
    }
}

/// [`LineMap::lookup`] over non-decreasing addresses (see [`LineMap::cursor`]).
#[derive(Debug, Clone)]
pub struct LineCursor<'a> {
    map: &'a LineMap,
    /// Spans before this one end at or before the last address.
    next: usize,
    /// The last address asked for.
    last: u64,
}

impl<'a> LineCursor<'a> {
    /// [`LineMap::lookup`]`(addr)` for any `addr`; a binary search when `addr` is below the
    /// previous call's or more than a few spans past it.
    pub fn at(&mut self, addr: u64) -> Option<&'a LineSpan> {
        let spans = &self.map.spans;
        if addr < self.last {
            // Backwards: a binary search, not a walk from the first span.
            self.next = spans.partition_point(|s| s.end <= addr);
        } else {
            // Forwards: a few steps, then a search over the rest (a long jump stays cheap).
            let mut steps = 0;
            while spans.get(self.next).is_some_and(|s| s.end <= addr) {
                self.next += 1;
                steps += 1;
                if steps == 8 {
                    self.next += spans[self.next..].partition_point(|s| s.end <= addr);
                    break;
                }
            }
        }
        self.last = addr;
        spans.get(self.next).filter(|s| s.start <= addr)
    }
}

/// Sorted, merged copy of half-open ranges (empty ones dropped).
pub(crate) fn normalize(ranges: &[(u64, u64)]) -> Vec<(u64, u64)> {
    let mut v: Vec<(u64, u64)> = ranges.iter().copied().filter(|r| r.0 < r.1).collect();
    v.sort_unstable();
    let mut out: Vec<(u64, u64)> = Vec::with_capacity(v.len());
    for (lo, hi) in v {
        match out.last_mut() {
            Some(last) if lo <= last.1 => last.1 = last.1.max(hi),
            _ => out.push((lo, hi)),
        }
    }
    out
}

pub(crate) fn intersects(wanted: &[(u64, u64)], lo: u64, hi: u64) -> bool {
    let i = wanted.partition_point(|r| r.1 <= lo);
    wanted.get(i).is_some_and(|r| r.0 < hi)
}

/// The line spans of the ELF file `data` that intersect `wanted` (half-open link-time
/// address ranges, in any order). Empty without DWARF.
pub fn line_map(data: &[u8], wanted: &[(u64, u64)]) -> LineMap {
    line_map_with(data, wanted, false)
}

/// [`line_map`], optionally with the file numbering of BFD 2.40 (`gprof`, `addr2line`):
/// in a DWARF 5 line program, BFD starts each sequence with file 0 instead of file 1, so
/// the rows before the sequence's first change of file are given file 0's name. (gas never
/// sets the file register to the value it already has, so "file 1 before any other file in
/// the sequence" is exactly "never set".) Also as BFD: a unit whose line program fails to
/// decode anywhere gives no line at all.
pub fn line_map_with(data: &[u8], wanted: &[(u64, u64)], bfd_file_quirk: bool) -> LineMap {
    let wanted = normalize(wanted);
    if wanted.is_empty() {
        return LineMap::default();
    }
    with_dwarf(data, |dwarf| build(dwarf, &wanted, bfd_file_quirk)).unwrap_or_default()
}

/// [`line_map_with`] in BFD's mode for callers that only need the spans whose file `keep`
/// accepts (gprof's symbol specs naming a file): a unit none of whose rows can name such a
/// file is not decoded at all. Which files a unit's rows can name is read from its line
/// program's header (every entry, by BFD's path rules, and `<unknown>` for a number past
/// them) and from the program itself, which could add files of its own
/// (`DW_LNE_define_file`: no compiler of today writes it; a program that defines one is
/// decoded, one BFD gives up on names nothing). The spans kept are then the same as
/// [`line_map_with`]'s for every file `keep` accepts, and none of the other units' rows are
/// read — unless sequences of two units overlap (damaged line tables; the sequences of
/// functions a linker dropped start at 0, below any code), where a span of a unit left
/// unread would have won the overlap.
pub fn line_map_of_files(
    data: &[u8],
    wanted: &[(u64, u64)],
    keep: &dyn Fn(&[u8]) -> bool,
) -> LineMap {
    let wanted = normalize(wanted);
    if wanted.is_empty() {
        return LineMap::default();
    }
    with_dwarf(data, |dwarf| {
        let accept = |unit: &gimli::Unit<R<'_>>| may_name(dwarf, unit, keep);
        build_of(dwarf, &wanted, true, &accept)
    })
    .unwrap_or_default()
}

/// Whether a row of `unit`'s line program could name a file `keep` accepts (see
/// [`line_map_of_files`]): a program BFD gives up on names none; one that defines files of
/// its own may name anything.
fn may_name(
    dwarf: &gimli::Dwarf<R<'_>>,
    unit: &gimli::Unit<R<'_>>,
    keep: &dyn Fn(&[u8]) -> bool,
) -> bool {
    let Some(program) = unit.line_program.as_ref() else {
        return false;
    };
    match bfd_accepts(program) {
        Err(_) => return false,
        Ok(true) => return true,
        Ok(false) => {}
    }
    let header = program.header();
    // File numbers 0 to n: DWARF 5 counts from 0, earlier versions from 1 (their 0, like any
    // number past the table, is `<unknown>`).
    keep(b"<unknown>")
        || (0..=header.file_names().len() as u64)
            .any(|i| crate::dwarf::bfd_file_name(dwarf, unit, i).is_some_and(|path| keep(&path)))
}

fn chosen_units(dwarf: &gimli::Dwarf<R<'_>>, wanted: &[(u64, u64)]) -> Option<BTreeSet<usize>> {
    let mut chosen = BTreeSet::new();
    let mut headers = dwarf.debug_aranges.headers();
    let mut any = false;
    while let Ok(Some(header)) = headers.next() {
        any = true;
        let mut entries = header.entries();
        while let Ok(Some(e)) = entries.next() {
            let r = e.range();
            if intersects(wanted, r.begin, r.end) {
                chosen.insert(header.debug_info_offset().0);
                break;
            }
        }
    }
    any.then_some(chosen)
}

/// Call `f` for each compilation unit whose code intersects `wanted` (sorted, merged),
/// chosen from `.debug_aranges` when present and `use_aranges`, else from each unit's own
/// ranges (BFD 2.40 never reads `.debug_aranges`, so gprof sees a unit that a damaged
/// `.debug_aranges` leaves out).
pub(crate) fn for_each_wanted_unit<'a>(
    dwarf: &gimli::Dwarf<R<'a>>,
    wanted: &[(u64, u64)],
    use_aranges: bool,
    mut f: impl FnMut(&gimli::Unit<R<'a>>),
) {
    let by_aranges = use_aranges.then(|| chosen_units(dwarf, wanted)).flatten();
    let mut units = dwarf.units();
    while let Ok(Some(header)) = units.next() {
        if let Some(chosen) = &by_aranges {
            let off = header.offset().to_debug_info_offset(&header).map(|o| o.0);
            if !off.is_some_and(|o| chosen.contains(&o)) {
                continue;
            }
        }
        let Ok(unit) = dwarf.unit(header) else {
            continue;
        };
        if by_aranges.is_none() {
            let (mut hit, mut any) = (false, false);
            if let Ok(mut ranges) = dwarf.unit_ranges(&unit) {
                while let Ok(Some(r)) = ranges.next() {
                    any |= r.begin < r.end;
                    if intersects(wanted, r.begin, r.end) {
                        hit = true;
                        break;
                    }
                }
            }
            // BFD also searches every unit that has no address range at all.
            if !hit && (use_aranges || any) {
                continue;
            }
        }
        f(&unit);
    }
}

fn build(dwarf: &gimli::Dwarf<R<'_>>, wanted: &[(u64, u64)], quirk: bool) -> LineMap {
    build_of(dwarf, wanted, quirk, &|_| true)
}

/// [`build`] of the units `accept` takes.
fn build_of(
    dwarf: &gimli::Dwarf<R<'_>>,
    wanted: &[(u64, u64)],
    quirk: bool,
    accept: &dyn Fn(&gimli::Unit<R<'_>>) -> bool,
) -> LineMap {
    read_units(dwarf, wanted, quirk, accept, quirk)
        .or_else(|| read_units(dwarf, wanted, quirk, accept, false))
        .unwrap_or_default()
}

/// [`build`] without joining a unit's spans as they are read: for the rare line tables
/// whose sequences overlap (see [`LineBuilder::finish`]).
pub(crate) fn build_unmerged(
    dwarf: &gimli::Dwarf<R<'_>>,
    wanted: &[(u64, u64)],
    quirk: bool,
) -> LineMap {
    read_units(dwarf, wanted, quirk, &|_| true, false).unwrap_or_default()
}

/// The spans of the units `accept` takes, joined as they are read if `join` (`None` when
/// joined spans overlap: see [`LineBuilder::finish`]).
fn read_units(
    dwarf: &gimli::Dwarf<R<'_>>,
    wanted: &[(u64, u64)],
    quirk: bool,
    accept: &dyn Fn(&gimli::Unit<R<'_>>) -> bool,
    join: bool,
) -> Option<LineMap> {
    let mut b = LineBuilder::new(quirk);
    b.join = join;
    for_each_wanted_unit(dwarf, wanted, !quirk, |unit| {
        if accept(unit) {
            b.unit(dwarf, unit, wanted, || bfd_die_end(unit).is_ok());
        }
    });
    b.finish()
}

/// [`build`] one unit at a time (so that [`crate::inline::bfd_line_and_inline_maps`] reads
/// the units once for both maps).
pub(crate) struct LineBuilder {
    map: LineMap,
    file_ids: HashMap<Vec<u8>, u32>,
    quirk: bool,
    /// In BFD mode, a span that continues the unit's last one with the same file and line
    /// extends it as it is read (what [`LineBuilder::finish`] does anyway when no spans
    /// overlap), so that a line's many rows (columns, `is_stmt`, views) take one span.
    join: bool,
}

impl LineBuilder {
    pub(crate) fn new(quirk: bool) -> Self {
        LineBuilder {
            map: LineMap::default(),
            file_ids: HashMap::new(),
            quirk,
            join: quirk,
        }
    }

    /// Add the spans of `unit`; `dies_read` says whether BFD reads its DIE tree
    /// ([`bfd_die_end`] succeeds), asked only in BFD mode when the unit has spans.
    pub(crate) fn unit(
        &mut self,
        dwarf: &gimli::Dwarf<R<'_>>,
        unit: &gimli::Unit<R<'_>>,
        wanted: &[(u64, u64)],
        dies_read: impl FnOnce() -> bool,
    ) {
        let (map, quirk) = (&mut self.map, self.quirk);
        map.units_decoded += 1;
        let first = map.spans.len();
        // BFD decodes a unit's line program whole or not at all ("mangled line number
        // section"): then the unit answers no address. Elsewhere the rows read before the
        // error are kept.
        let join = self.join.then_some(first);
        if unit_spans(dwarf, unit, wanted, quirk, join, map, &mut self.file_ids).is_err() && quirk {
            map.spans.truncate(first);
        }
        // Nor does a unit whose DIE tree does not read (BFD's `scan_unit_for_symbols`: a
        // missing abbreviation, an unknown form, a DIE past the unit's end).
        if quirk && map.spans.len() > first && !dies_read() {
            map.spans.truncate(first);
        }
    }

    /// The spans sorted, without overlaps; `None` when spans were joined as they were read
    /// and some overlap: the first-wins rule below must then see them unjoined (read again
    /// with `join` off).
    pub(crate) fn finish(self) -> Option<LineMap> {
        let (mut map, quirk) = (self.map, self.quirk);
        map.spans.sort_unstable_by_key(|s| (s.start, s.end));
        // Sequences should not overlap; if a damaged or odd file has them, the first wins.
        let mut kept: Vec<LineSpan> = Vec::with_capacity(map.spans.len());
        for s in map.spans.drain(..) {
            match kept.last() {
                Some(last) if s.start < last.end => {
                    if self.join {
                        return None;
                    }
                    if s.end > last.end {
                        kept.push(LineSpan {
                            start: last.end,
                            ..s
                        });
                    }
                }
                // gprof asks only for file and line: a span that continues the previous one with
                // the same file and line (rows that change only the column, is_stmt or view)
                // answers as it does, so it extends it, and the cuts gprof's emulation makes at
                // span boundaries halve.
                Some(last)
                    if quirk
                        && s.start == last.end
                        && s.file == last.file
                        && s.line == last.line =>
                {
                    if let Some(last) = kept.last_mut() {
                        last.end = s.end;
                    }
                }
                _ => kept.push(s),
            }
        }
        map.spans = kept;
        Some(map)
    }
}

/// Read the DIEs of `unit` as BFD's `scan_unit_for_symbols` does, without decoding the
/// attributes' values: an error where an abbreviation is missing, a form unknown or an
/// attribute runs past the unit. BFD stops at the null entry that closes the unit DIE's
/// children (what follows it is never read) or at the end of the unit: returns the offset
/// of the first DIE it does not read.
///
/// Every unit a line map answers from is read this way, the whole of `.debug_info` for a
/// profile of every function: each abbreviation's attributes become a short list of skips
/// ([`SkipPlans`]) the first time it is met, instead of a match on each attribute's form at
/// each DIE (gimli's `skip_attributes`, still used for `DW_FORM_indirect` and the forms it
/// does not know, so that the errors are its). The reads are gimli's reader's.
pub(crate) fn bfd_die_end(unit: &gimli::Unit<R<'_>>) -> gimli::Result<gimli::UnitOffset> {
    use gimli::Reader;
    let root = unit.header.root_offset();
    let start = unit.header.range_from(root..)?;
    let mut input = start;
    let mut plans = SkipPlans::default();
    let mut depth = 0i64;
    let mut first = true;
    while !input.is_empty() {
        let die = input;
        let code = input.read_uleb128()?;
        if code == 0 {
            depth -= 1;
        } else {
            let has_children = match plans.of(unit, code)? {
                Some((steps, has_children)) => {
                    for &step in steps {
                        match step {
                            Skip::Bytes(n) => input.skip(n)?,
                            Skip::String => {
                                input.read_null_terminated_slice()?;
                            }
                            Skip::Leb => input.skip_leb128()?,
                            Skip::Block1 => {
                                let n = input.read_u8()?;
                                input.skip(usize::from(n))?;
                            }
                            Skip::Block2 => {
                                let n = input.read_u16()?;
                                input.skip(usize::from(n))?;
                            }
                            Skip::Block4 => {
                                let n = input.read_u32()?;
                                input.skip(n as usize)?;
                            }
                            Skip::BlockLeb => {
                                let n = input
                                    .read_uleb128()
                                    .and_then(gimli::ReaderOffset::from_u64)?;
                                input.skip(n)?;
                            }
                        }
                    }
                    has_children
                }
                None => {
                    // gimli's own reading, from the DIE's code again.
                    let at = gimli::UnitOffset(root.0 + Reader::offset_from(&die, &start));
                    let mut entries = unit.entries_raw(Some(at))?;
                    let abbrev = entries
                        .read_abbreviation()?
                        .ok_or(gimli::Error::InvalidAbbreviationCode(code))?;
                    entries.skip_attributes(abbrev.attributes())?;
                    let end = entries.next_offset().0 - root.0;
                    input = start;
                    input.skip(end)?;
                    abbrev.has_children()
                }
            };
            if has_children {
                depth += 1;
            } else if first {
                break;
            }
        }
        first = false;
        if depth <= 0 {
            break;
        }
    }
    Ok(gimli::UnitOffset(
        root.0 + Reader::offset_from(&input, &start),
    ))
}

/// How [`bfd_die_end`] passes over an attribute (or a run of fixed-size ones).
#[derive(Clone, Copy, Debug)]
enum Skip {
    /// That many bytes.
    Bytes(usize),
    /// `DW_FORM_string`: to the NUL.
    String,
    /// One LEB128 number.
    Leb,
    /// A block with a 1-, 2-, 4-byte or LEB128 length.
    Block1,
    Block2,
    Block4,
    BlockLeb,
}

/// The skips of one unit's abbreviations, made as each code is first met.
#[derive(Default)]
struct SkipPlans {
    steps: Vec<Skip>,
    /// By code: the plan's place (`steps[start..end]`, children), `GIMLI` where gimli must
    /// read, `UNSEEN` before the first DIE with the code.
    by_code: Vec<(u32, u32, u8)>,
}

const UNSEEN: u8 = 0;
const GIMLI: u8 = 1;
const NO_CHILDREN: u8 = 2;
const CHILDREN: u8 = 3;

impl SkipPlans {
    /// The skips of abbreviation `code` and whether it has children; `None` when gimli must
    /// read it; an error for a code the unit does not define.
    fn of(
        &mut self,
        unit: &gimli::Unit<R<'_>>,
        code: u64,
    ) -> gimli::Result<Option<(&[Skip], bool)>> {
        // Codes this large come only in damaged DWARF: gimli reads their DIEs (and finds a
        // code the unit does not define).
        let Some(c) = usize::try_from(code).ok().filter(|&c| c < 1 << 16) else {
            return Ok(None);
        };
        let (start, end, kind) = match self.by_code.get(c) {
            Some(&entry) if entry.2 != UNSEEN => entry,
            _ => {
                let abbrev = unit
                    .abbreviations
                    .get(code)
                    .ok_or(gimli::Error::InvalidAbbreviationCode(code))?;
                let entry = self.plan(unit, abbrev);
                if self.by_code.len() <= c {
                    self.by_code.resize(c + 1, (0, 0, UNSEEN));
                }
                self.by_code[c] = entry;
                entry
            }
        };
        Ok(match kind {
            GIMLI => None,
            _ => Some((&self.steps[start as usize..end as usize], kind == CHILDREN)),
        })
    }

    /// Append `abbrev`'s skips: fixed sizes (by gimli's table of them) add up.
    fn plan(&mut self, unit: &gimli::Unit<R<'_>>, abbrev: &gimli::Abbreviation) -> (u32, u32, u8) {
        use gimli::constants as c;
        let start = self.steps.len();
        let mut fixed = 0usize;
        for spec in abbrev.attributes() {
            if let Some(n) = spec.size(&unit.header) {
                fixed += n;
                continue;
            }
            let step = match spec.form() {
                c::DW_FORM_string => Skip::String,
                c::DW_FORM_block1 => Skip::Block1,
                c::DW_FORM_block2 => Skip::Block2,
                c::DW_FORM_block4 => Skip::Block4,
                c::DW_FORM_block | c::DW_FORM_exprloc => Skip::BlockLeb,
                c::DW_FORM_udata
                | c::DW_FORM_sdata
                | c::DW_FORM_ref_udata
                | c::DW_FORM_strx
                | c::DW_FORM_GNU_str_index
                | c::DW_FORM_addrx
                | c::DW_FORM_GNU_addr_index
                | c::DW_FORM_loclistx
                | c::DW_FORM_rnglistx => Skip::Leb,
                _ => {
                    self.steps.truncate(start);
                    return (0, 0, GIMLI);
                }
            };
            if fixed != 0 {
                self.steps.push(Skip::Bytes(fixed));
                fixed = 0;
            }
            self.steps.push(step);
        }
        if fixed != 0 {
            self.steps.push(Skip::Bytes(fixed));
        }
        let kind = if abbrev.has_children() {
            CHILDREN
        } else {
            NO_CHILDREN
        };
        (start as u32, self.steps.len() as u32, kind)
    }
}

/// gimli's reading of [`bfd_die_end`]: its reference in the tests.
#[cfg(test)]
fn bfd_die_end_by_gimli(unit: &gimli::Unit<R<'_>>) -> gimli::Result<gimli::UnitOffset> {
    let mut entries = unit.entries_raw(None)?;
    let mut depth = 0i64;
    let mut root = true;
    while !entries.is_empty() {
        match entries.read_abbreviation()? {
            Some(abbrev) => {
                entries.skip_attributes(abbrev.attributes())?;
                if abbrev.has_children() {
                    depth += 1;
                } else if root {
                    break;
                }
            }
            None => depth -= 1,
        }
        root = false;
        if depth <= 0 {
            break;
        }
    }
    Ok(entries.next_offset())
}

fn unit_spans(
    dwarf: &gimli::Dwarf<R<'_>>,
    unit: &gimli::Unit<R<'_>>,
    wanted: &[(u64, u64)],
    quirk: bool,
    join_from: Option<usize>,
    map: &mut LineMap,
    file_ids: &mut HashMap<Vec<u8>, u32>,
) -> gimli::Result<()> {
    let Some(program) = unit.line_program.clone() else {
        return Ok(());
    };
    let bfd_paths = quirk;
    if bfd_paths && !bfd_knows_formats(program.header()) {
        return Err(gimli::Error::UnsupportedOpcodeOperandsTable);
    }
    let quirk = quirk && program.header().version() >= 5;
    let first = map.spans.len();
    let mut sink = RowSink {
        dwarf,
        unit,
        wanted,
        quirk,
        bfd_paths,
        join_from,
        default_file: true,
        local: Vec::new(),
        cursor: 0,
        last_start: 0,
        prev: None,
    };
    // The rows of a plain program come from our decoder (a quarter of gimli's instructions
    // per row); anything it does not take whole goes to gimli's, from the start again.
    if fast_rows(program.header(), |addr, file, line, end| {
        sink.row(addr, file, line, end, map, file_ids)
    })
    .is_some()
    {
        return Ok(());
    }
    map.spans.truncate(first);
    // A program our decoder takes whole has only opcodes BFD knows (the test
    // `a_program_the_fast_decoder_takes_is_one_bfd_accepts`), so only the others are scanned
    // for one it does not.
    if bfd_paths {
        bfd_accepts(&program)?;
    }
    sink.default_file = true;
    sink.cursor = 0;
    sink.last_start = 0;
    sink.prev = None;
    let mut rows = program.rows();
    while let Some((_, row)) = rows.next_row()? {
        let line = row.line().map_or(0, |l| l.get());
        sink.row(
            row.address(),
            row.file_index(),
            line,
            row.end_sequence(),
            map,
            file_ids,
        );
    }
    Ok(())
}

/// What [`unit_spans`] keeps of the rows of one unit's line program, one row at a time.
struct RowSink<'a, 'd> {
    dwarf: &'a gimli::Dwarf<R<'d>>,
    unit: &'a gimli::Unit<R<'d>>,
    wanted: &'a [(u64, u64)],
    /// BFD's DWARF 5 file numbering.
    quirk: bool,
    /// BFD's path joining.
    bfd_paths: bool,
    join_from: Option<usize>,
    /// No row of the current sequence has had a file other than 1 yet.
    default_file: bool,
    /// Map ids by the program's file number (small numbers: a vector, not a hash per row).
    local: Vec<u32>,
    /// The first wanted range ending after the current row's start: rows ascend within a
    /// sequence, so it only moves forward there (by a search from where it is).
    cursor: usize,
    last_start: u64,
    /// (address, file index, line) of the row that covers the bytes from `address` on.
    prev: Option<(u64, u64, u64)>,
}

impl RowSink<'_, '_> {
    fn row(
        &mut self,
        addr: u64,
        file: u64,
        line: u64,
        end_sequence: bool,
        map: &mut LineMap,
        file_ids: &mut HashMap<Vec<u8>, u32>,
    ) {
        let wanted = self.wanted;
        if let Some((start, file, line)) = self.prev {
            if start < self.last_start {
                self.cursor = 0;
            }
            self.last_start = start;
            if wanted.get(self.cursor).is_some_and(|r| r.1 <= start) {
                self.cursor += wanted[self.cursor..].partition_point(|r| r.1 <= start);
            }
            let hit = wanted.get(self.cursor).is_some_and(|r| r.0 < addr);
            if addr > start && hit {
                let id = self.file_id(file, map, file_ids);
                let joined = self.join_from.is_some_and(|first| map.spans.len() > first)
                    && map.spans.last_mut().is_some_and(|last| {
                        let joins = last.end == start && last.file == id && last.line == line;
                        if joins {
                            last.end = addr;
                        }
                        joins
                    });
                if !joined {
                    map.spans.push(LineSpan {
                        start,
                        end: addr,
                        file: id,
                        line,
                    });
                }
            }
        }
        self.prev = if end_sequence {
            self.default_file = true;
            None
        } else {
            let mut file = file;
            if file != 1 {
                self.default_file = false;
            } else if self.quirk && self.default_file {
                file = 0;
            }
            Some((addr, file, line))
        };
    }

    /// The map's id of the program's file number `file`.
    fn file_id(
        &mut self,
        file: u64,
        map: &mut LineMap,
        file_ids: &mut HashMap<Vec<u8>, u32>,
    ) -> u32 {
        let known = usize::try_from(file)
            .ok()
            .and_then(|f| self.local.get(f))
            .filter(|&&id| id != u32::MAX);
        if let Some(&id) = known {
            return id;
        }
        let (dwarf, unit) = (self.dwarf, self.unit);
        // gprof's quirks come with BFD's path joining.
        let name: Vec<u8> = if self.bfd_paths {
            crate::dwarf::bfd_file_name(dwarf, unit, file)
        } else {
            file_name(dwarf, unit, file).map(String::into_bytes)
        }
        .unwrap_or_else(|| b"??".to_vec());
        let next = map.files.len() as u32;
        let id = *file_ids.entry(name.clone()).or_insert(next);
        if id == next {
            match String::from_utf8(name) {
                Ok(text) => map.files.push(text),
                Err(e) => {
                    let raw = e.into_bytes();
                    map.files.push(String::from_utf8_lossy(&raw).into_owned());
                    map.raw_files.insert(id, raw);
                }
            }
        }
        if let Ok(f) = usize::try_from(file) {
            if f < 1 << 16 {
                if self.local.len() <= f {
                    self.local.resize(f + 1, u32::MAX);
                }
                self.local[f] = id;
            }
        }
        id
    }
}

/// The rows of the line program of `header` as gimli's `LineRows` gives them (address, file
/// number, line, end of sequence), for programs made only of what compilers write: `None`,
/// possibly after some rows, at anything else (an unknown or user-defined opcode,
/// `define_file`, an extended opcode whose length is not its operands', an address that
/// goes back or overflows, VLIW operation indexes, a truncated program), which the caller
/// then reads with gimli. Only the registers that make rows are kept.
fn fast_rows(
    header: &gimli::LineProgramHeader<R<'_>>,
    mut row: impl FnMut(u64, u64, u64, bool),
) -> Option<()> {
    let prog = header.raw_program_buf();
    let big = gimli::Endianity::is_big_endian(gimli::Reader::endian(&prog));
    let b = prog.slice();
    let size = header.address_size();
    let mask: u64 = match size {
        8 => u64::MAX,
        4 => u64::from(u32::MAX),
        _ => return None,
    };
    let (base, range) = (header.opcode_base(), header.line_range());
    let min_len = u64::from(header.minimum_instruction_length());
    if header.maximum_operations_per_instruction() != 1 || range == 0 || base < 10 {
        return None;
    }
    // gimli reads opcodes 10-12 as special ones below an opcode base of 13 (DWARF 2).
    let known = base.min(13);
    let line_base = i64::from(header.line_base());
    let (mut addr, mut file, mut line) = (0u64, 1u64, 1u64);
    let mut at = 0usize;
    let uleb = |at: &mut usize| -> Option<u64> {
        let (mut v, mut shift) = (0u64, 0u32);
        loop {
            let byte = *b.get(*at)?;
            *at += 1;
            if shift == 63 && byte > 1 {
                return None;
            }
            v |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Some(v);
            }
            shift += 7;
            if shift > 63 {
                return None;
            }
        }
    };
    let advance_line = |line: &mut u64, by: i64| {
        if by < 0 {
            *line = line.saturating_sub(by.unsigned_abs());
        } else {
            *line = line.wrapping_add(by as u64);
        }
    };
    let advance = |addr: &mut u64, by: u64| -> Option<()> {
        let next = addr.checked_add(by)?;
        (next & !mask == 0).then(|| *addr = next)
    };
    while at < b.len() {
        let op = b[at];
        at += 1;
        if op >= base {
            let adjusted = op - base;
            advance_line(&mut line, line_base + i64::from(adjusted % range));
            advance(&mut addr, min_len.wrapping_mul(u64::from(adjusted / range)))?;
            row(addr, file, line, false);
            continue;
        }
        match op {
            0 => {
                let len = usize::try_from(uleb(&mut at)?).ok()?;
                let end = at.checked_add(len)?;
                let body = b.get(at..end)?;
                at = end;
                match (body.first()?, body.len()) {
                    // DW_LNE_end_sequence.
                    (1, 1) => {
                        row(addr, file, line, true);
                        (addr, file, line) = (0, 1, 1);
                    }
                    // DW_LNE_set_address, forward only (gimli makes the rest tombstones).
                    (2, n) if n == 1 + usize::from(size) => {
                        let raw = &body[1..];
                        let mut v = 0u64;
                        for k in 0..raw.len() {
                            let byte = if big { raw[k] } else { raw[raw.len() - 1 - k] };
                            v = v << 8 | u64::from(byte);
                        }
                        if v < addr || v >= mask - 1 {
                            return None;
                        }
                        addr = v;
                    }
                    // DW_LNE_set_discriminator: one ULEB128 filling the opcode.
                    (4, _) => {
                        let mut k = 1;
                        let (mut shift, mut ok) = (0u32, false);
                        while let Some(&byte) = body.get(k) {
                            k += 1;
                            if byte & 0x80 == 0 {
                                ok = true;
                                break;
                            }
                            shift += 7;
                            if shift > 63 {
                                return None;
                            }
                        }
                        if !ok || k != body.len() {
                            return None;
                        }
                    }
                    _ => return None,
                }
            }
            _ if op >= known => return None,
            // DW_LNS_copy.
            1 => row(addr, file, line, false),
            // DW_LNS_advance_pc.
            2 => advance(&mut addr, min_len.wrapping_mul(uleb(&mut at)?))?,
            // DW_LNS_advance_line: a SLEB128.
            3 => {
                let (mut v, mut shift) = (0i64, 0u32);
                loop {
                    let byte = *b.get(at)?;
                    at += 1;
                    if shift == 63 && byte != 0 && byte != 0x7f {
                        return None;
                    }
                    v |= i64::from(byte & 0x7f) << shift;
                    shift += 7;
                    if byte & 0x80 == 0 {
                        if shift < 64 && byte & 0x40 != 0 {
                            v |= -1i64 << shift;
                        }
                        break;
                    }
                    if shift > 63 {
                        return None;
                    }
                }
                advance_line(&mut line, v);
            }
            // DW_LNS_set_file.
            4 => file = uleb(&mut at)?,
            // DW_LNS_set_column, DW_LNS_set_isa.
            5 | 12 => {
                uleb(&mut at)?;
            }
            // DW_LNS_negate_stmt, set_basic_block, set_prologue_end, set_epilogue_begin.
            6 | 7 | 10 | 11 => {}
            // DW_LNS_const_add_pc.
            8 => advance(
                &mut addr,
                min_len.wrapping_mul(u64::from((255 - base) / range)),
            )?,
            // DW_LNS_fixed_advance_pc.
            9 => {
                let two = b.get(at..at + 2)?;
                at += 2;
                let v = if big {
                    u16::from_be_bytes([two[0], two[1]])
                } else {
                    u16::from_le_bytes([two[0], two[1]])
                };
                advance(&mut addr, u64::from(v))?;
            }
            _ => return None,
        }
    }
    Some(())
}

/// Whether BFD knows every DWARF 5 entry content of the header's directory and file tables:
/// path, directory index, timestamp, size and MD5 ("unknown format content type" otherwise).
fn bfd_knows_formats(header: &gimli::LineProgramHeader<R<'_>>) -> bool {
    let known = |f: &gimli::FileEntryFormat| (1..=5).contains(&f.content_type.0);
    header.directory_entry_format().iter().all(known)
        && header.file_name_entry_format().iter().all(known)
}

/// Fails where BFD 2.40's `decode_line_info` gives up on a line program that gimli reads
/// on: an extended opcode it does not know ("mangled line number section"). It knows
/// `end_sequence`, `set_address`, `define_file` (in every version), `set_discriminator` and
/// HP's `source_file_correlation` (0x80), which it skips. Otherwise returns whether the
/// program defines a file of its own (`define_file`) before any malformed bytes.
fn bfd_accepts(program: &gimli::IncompleteLineProgram<R<'_>>) -> gimli::Result<bool> {
    let header = program.header();
    if !bfd_knows_formats(header) {
        return Err(gimli::Error::UnsupportedOpcodeOperandsTable);
    }
    // A scan of the opcodes' lengths only (as gimli's `LineInstruction::parse` reads them),
    // not a second decode of the program: where the bytes are malformed it stops with Ok,
    // since the rows' decode then fails on the same bytes (and BFD gives up there too).
    let code = header.raw_program_buf();
    let code: &[u8] = code.slice();
    let lengths = header.standard_opcode_lengths().slice();
    let base = header.opcode_base();
    let mut at = 0usize;
    let mut defines = false;
    // Skip a LEB128 number; None past the end.
    let leb = |at: &mut usize| -> Option<u64> {
        let (mut value, mut shift) = (0u64, 0u32);
        loop {
            let b = *code.get(*at)?;
            *at += 1;
            if shift < 64 {
                value |= u64::from(b & 0x7f) << shift;
            }
            shift += 7;
            if b & 0x80 == 0 {
                return Some(value);
            }
        }
    };
    while let Some(&op) = code.get(at) {
        at += 1;
        if op == 0 {
            let Some(len) = leb(&mut at) else {
                return Ok(defines);
            };
            let Some(&ext) = code.get(at) else {
                return Ok(defines);
            };
            if len == 0 {
                return Ok(defines);
            }
            if !matches!(ext, 1..=4 | 0x80) {
                return Err(gimli::Error::UnsupportedOpcodeOperandsTable);
            }
            defines |= ext == 3;
            let Some(next) = usize::try_from(len).ok().and_then(|l| at.checked_add(l)) else {
                return Ok(defines);
            };
            at = next;
        } else if op >= base {
        } else {
            let args = match op {
                1 | 6 | 7 | 8 | 10 | 11 => 0,
                2..=5 | 12 => 1,
                9 => {
                    at += 2;
                    0
                }
                _ => match lengths.get(usize::from(op - 1)) {
                    Some(&n) => n,
                    None => return Ok(defines),
                },
            };
            for _ in 0..args {
                if leb(&mut at).is_none() {
                    return Ok(defines);
                }
            }
        }
    }
    Ok(defines)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A DWARF 4 `.debug_line` unit (little-endian, 8-byte addresses, line base -5, line
    /// range 14, opcode base 13, one file) whose line program is `program`.
    fn line_unit(program: &[u8]) -> Vec<u8> {
        let mut header = vec![1u8, 1, 1, (-5i8) as u8, 14, 13];
        header.extend_from_slice(&[0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1]);
        header.push(0); // no include directories
        header.extend_from_slice(b"a.c\0\0\0\0\0");
        let mut unit = 4u16.to_le_bytes().to_vec();
        unit.extend_from_slice(&(header.len() as u32).to_le_bytes());
        unit.extend_from_slice(&header);
        unit.extend_from_slice(program);
        let mut out = (unit.len() as u32).to_le_bytes().to_vec();
        out.extend_from_slice(&unit);
        out
    }

    type Row = (u64, u64, u64, bool);

    /// A small deterministic random source (xorshift64) for the generated programs.
    fn xorshift(mut seed: u64) -> impl FnMut() -> u64 {
        move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        }
    }

    /// gimli's reading of the header of [`line_unit`]'s `section`.
    fn program_of(section: &[u8]) -> gimli::IncompleteLineProgram<R<'_>> {
        gimli::DebugLine::new(section, gimli::RunTimeEndian::Little)
            .program(gimli::DebugLineOffset(0), 8, None, None)
            .expect("header")
    }

    /// gimli's rows of `program` (and whether it read to the end without an error), and
    /// ours (`None` where [`fast_rows`] leaves it to gimli).
    fn both(program: &[u8]) -> ((Vec<Row>, bool), Option<Vec<Row>>) {
        let section = line_unit(program);
        let inc = program_of(&section);
        let mut ours = Vec::new();
        let fast = fast_rows(inc.header(), |a, f, l, e| ours.push((a, f, l, e))).map(|()| ours);
        let mut theirs = Vec::new();
        let mut rows = inc.rows();
        let complete = loop {
            match rows.next_row() {
                Ok(Some((_, r))) => theirs.push((
                    r.address(),
                    r.file_index(),
                    r.line().map_or(0, |l| l.get()),
                    r.end_sequence(),
                )),
                Ok(None) => break true,
                Err(_) => break false,
            }
        };
        ((theirs, complete), fast)
    }

    #[test]
    fn own_line_program_decoder_gives_gimlis_rows() {
        // What gcc writes: set_address, special opcodes, advance_pc/line (negative too),
        // set_file, set_column, negate_stmt, const_add_pc, fixed_advance_pc, copy, a
        // discriminator, end_sequence, and a second sequence.
        let mut p = vec![0, 9, 2];
        p.extend_from_slice(&0x1000u64.to_le_bytes());
        p.extend_from_slice(&[0x13, 5, 3, 6, 0x4b, 3, 0x7c, 1, 4, 2, 0x21, 8, 1]);
        p.extend_from_slice(&[9, 0x10, 0, 1, 0, 2, 4, 7, 1, 2, 0x82, 1, 0, 1, 1]);
        p.extend_from_slice(&[0, 9, 2]);
        p.extend_from_slice(&0x2000u64.to_le_bytes());
        p.extend_from_slice(&[3, 0xe3, 0, 0x5a, 0, 1, 1]);
        let ((theirs, complete), ours) = both(&p);
        assert!(complete && theirs.len() >= 8, "{theirs:?}");
        assert_eq!(ours.as_ref(), Some(&theirs));
        // What the decoder leaves to gimli: define_file, an unknown extended opcode, an
        // address going back (gimli's tombstone), an extended opcode longer than its operand.
        let mut back = vec![0, 9, 2];
        back.extend_from_slice(&0x2000u64.to_le_bytes());
        back.extend_from_slice(&[0x20, 0, 9, 2]);
        back.extend_from_slice(&0x1000u64.to_le_bytes());
        back.push(0x20);
        for odd in [
            &[0, 6, 3, b'b', 0, 0, 0, 0][..],
            &[0, 2, 0x80, 7],
            &back,
            &[0, 3, 1, 0, 0],
        ] {
            assert_eq!(both(odd).1, None, "{odd:?}");
        }
        // Random programs, mostly of the opcodes compilers use: wherever ours answers, it
        // answers as gimli does (the same rows, and gimli read them without an error).
        let mut next = xorshift(0x9e37_79b9_7f4a_7c15u64);
        let mut answered = 0;
        for _ in 0..20_000 {
            let mut p = Vec::new();
            for _ in 0..(next() % 40) {
                let r = next();
                match r % 16 {
                    0 => {
                        p.extend_from_slice(&[0, 9, 2]);
                        let addr = (next() % 0x3000).to_le_bytes();
                        p.extend_from_slice(&addr);
                    }
                    1 => p.extend_from_slice(&[0, 1, 1]),
                    2 => p.extend_from_slice(&[0, 2, 4, (r >> 8) as u8 & 0x7f]),
                    3 => p.extend_from_slice(&[2, (r >> 8) as u8]),
                    4 => p.extend_from_slice(&[3, (r >> 8) as u8, (r >> 16) as u8 & 0x7f]),
                    5 => p.extend_from_slice(&[4, (r >> 8) as u8 & 3]),
                    6 => p.extend_from_slice(&[9, (r >> 8) as u8, (r >> 16) as u8]),
                    7 => p.push(((r >> 8) % 13) as u8),
                    8 => p.push((r >> 8) as u8),
                    _ => p.push(13 + ((r >> 8) % 243) as u8),
                }
            }
            let ((theirs, complete), ours) = both(&p);
            if let Some(ours) = ours {
                answered += 1;
                assert!(complete, "{p:?}");
                assert_eq!(ours, theirs, "{p:?}");
            }
        }
        // The comparison means something only if ours answered for many of them.
        assert!(answered > 2_000, "{answered}");
    }

    /// Each unit's [`bfd_die_end`] against [`bfd_die_end_by_gimli`]: whether it reads, and
    /// where it stops. Returns how many units read and how many failed.
    fn die_ends_agree(data: &[u8], max_units: usize) -> (usize, usize) {
        let (mut read, mut failed) = (0, 0);
        crate::dwarf::with_dwarf(data, |dwarf| {
            let mut units = dwarf.units();
            let mut n = 0;
            while let Ok(Some(header)) = units.next() {
                n += 1;
                if n > max_units {
                    break;
                }
                let Ok(unit) = dwarf.unit(header) else {
                    continue;
                };
                let ours = bfd_die_end(&unit).ok();
                let gimlis = bfd_die_end_by_gimli(&unit).ok();
                assert_eq!(ours, gimlis, "unit {n}");
                match ours {
                    Some(_) => read += 1,
                    None => failed += 1,
                }
            }
        });
        (read, failed)
    }

    #[test]
    fn dies_are_skipped_as_gimli_skips_them() {
        // A C program (gcc 12, DWARF 5) and this test program (rustc's DWARF): every unit.
        let inl: &[u8] = include_bytes!("../../../fixtures/identity/inl");
        let (read, _) = die_ends_agree(inl, usize::MAX);
        assert!(read >= 1, "{read}");
        let exe = std::fs::read(std::env::current_exe().expect("test executable"))
            .expect("test executable's bytes");
        let (read, _) = die_ends_agree(&exe, 400);
        assert!(read >= 50, "{read}");
        // The C program damaged: bytes of `.debug_info` and `.debug_abbrev` changed at
        // random (codes, forms, lengths, strings cut short).
        let file = object::File::parse(inl).expect("ELF");
        use object::{Object, ObjectSection};
        let range = |name: &str| {
            let (at, len) = file
                .section_by_name(name)
                .and_then(|s| s.file_range())
                .expect(name);
            (at as usize, len as usize)
        };
        let (info, abbrev) = (range(".debug_info"), range(".debug_abbrev"));
        let mut next = xorshift(0x51_7cc1_b727_220au64);
        let (mut read, mut failed) = (0, 0);
        for round in 0..1500 {
            let mut data = inl.to_vec();
            let (at, len) = if round % 4 == 0 { abbrev } else { info };
            for _ in 0..1 + next() % 3 {
                let k = at + (next() as usize % len);
                data[k] = match next() % 3 {
                    0 => data[k] ^ (1 << (next() % 8)),
                    1 => 0,
                    _ => next() as u8,
                };
            }
            let (r, f) = die_ends_agree(&data, usize::MAX);
            read += r;
            failed += f;
        }
        // Both outcomes were met.
        assert!(read > 500 && failed > 100, "{read} {failed}");
    }

    #[test]
    fn a_program_the_fast_decoder_takes_is_one_bfd_accepts() {
        // `unit_spans` scans a program for opcodes BFD gives up on only when `fast_rows`
        // does not take it whole. Random programs of what compilers write and of what they
        // do not (extended opcodes of any number and length, standard opcodes past the
        // ones the header knows, truncations).
        let mut next = xorshift(0x9e37_79b9_7f4a_7c15u64);
        let (mut taken, mut refused_by_bfd) = (0, 0);
        for _ in 0..20_000 {
            let mut p = Vec::new();
            for _ in 0..(next() % 30) {
                let r = next();
                match r % 10 {
                    0 => {
                        p.extend_from_slice(&[0, 9, 2]);
                        p.extend_from_slice(&(0x1000 + (next() % 0x3000)).to_le_bytes());
                    }
                    1 => p.extend_from_slice(&[0, 1, 1]),
                    2 => p.extend_from_slice(&[0, 2, 4, (r >> 8) as u8 & 0x7f]),
                    3 if r % 5 == 0 => {
                        // An extended opcode of any number, 0-3 operand bytes.
                        let n = (r >> 16) as usize % 4;
                        p.extend_from_slice(&[0, 1 + n as u8, (r >> 8) as u8]);
                        p.extend(std::iter::repeat_n(0x11, n));
                    }
                    4 => p.extend_from_slice(&[2, (r >> 8) as u8 & 0x7f]),
                    5 => p.extend_from_slice(&[3, (r >> 8) as u8, (r >> 16) as u8 & 0x7f]),
                    6 => p.extend_from_slice(&[(r >> 8) as u8 % 13, (r >> 16) as u8 & 0x7f]),
                    _ => p.push(13 + ((r >> 8) % 243) as u8),
                }
            }
            if next() % 4 == 0 && !p.is_empty() {
                let cut = next() as usize % p.len();
                p.truncate(cut);
            }
            let section = line_unit(&p);
            let inc = program_of(&section);
            let scan = bfd_accepts(&inc);
            if scan.is_err() {
                refused_by_bfd += 1;
            }
            if fast_rows(inc.header(), |_, _, _, _| {}).is_some() {
                taken += 1;
                assert_eq!(scan, Ok(false), "{p:?}");
            }
        }
        // Both kinds were met.
        assert!(
            taken > 2_000 && refused_by_bfd > 500,
            "{taken} {refused_by_bfd}"
        );
    }

    #[test]
    fn a_program_that_defines_a_file_is_never_taken_for_one_that_does_not() {
        // `bfd_accepts`' scan says whether a program defines a file (a unit whose file
        // table names nothing a file spec asks for is then not decoded). gimli as the judge: after reading a program's rows, its header has one more file
        // per `DW_LNE_define_file` it met. Random programs of what compilers write, with a
        // define_file (short or long name, so a one- or two-byte length) put in at random.
        let mut next = xorshift(0x2545_f491_4f6c_dd1du64);
        let (mut defining, mut plain) = (0, 0);
        for _ in 0..20_000 {
            let mut p = Vec::new();
            for _ in 0..(next() % 30) {
                let r = next();
                match r % 12 {
                    0 => {
                        p.extend_from_slice(&[0, 9, 2]);
                        p.extend_from_slice(&(next() % 0x3000).to_le_bytes());
                    }
                    1 => p.extend_from_slice(&[0, 1, 1]),
                    2 => p.extend_from_slice(&[2, (r >> 8) as u8 & 0x7f]),
                    3 => p.extend_from_slice(&[3, (r >> 8) as u8, (r >> 16) as u8 & 0x7f]),
                    4 if r % 7 == 0 => {
                        let name = vec![b'x'; 1 + (r >> 8) as usize % 200];
                        let len = name.len() + 5;
                        p.push(0);
                        if len < 128 {
                            p.push(len as u8);
                        } else {
                            p.extend_from_slice(&[0x80 | (len & 0x7f) as u8, (len >> 7) as u8]);
                        }
                        p.push(3);
                        p.extend_from_slice(&name);
                        p.extend_from_slice(&[0, 0, 0, 0]);
                    }
                    5 => p.extend_from_slice(&[9, (r >> 8) as u8, (r >> 16) as u8]),
                    _ => p.push(13 + ((r >> 8) % 243) as u8),
                }
            }
            let section = line_unit(&p);
            let inc = program_of(&section);
            let before = inc.header().file_names().len();
            let scan = bfd_accepts(&inc);
            let mut rows = inc.rows();
            while let Ok(Some(_)) = rows.next_row() {}
            if rows.header().file_names().len() > before {
                // Found, or the program is one BFD gives up on (which then names nothing).
                defining += 1;
                assert_ne!(scan, Ok(false), "{p:?}");
            } else if scan == Ok(false) {
                plain += 1;
            }
        }
        // Both kinds were met, and the scan let most programs without one through.
        assert!(defining > 500 && plain > 5_000, "{defining} {plain}");
    }

    #[test]
    fn ranges_are_merged_and_searched() {
        let w = normalize(&[(10, 20), (0, 0), (15, 30), (40, 50)]);
        assert_eq!(w, vec![(10, 30), (40, 50)]);
        assert!(intersects(&w, 29, 31));
        assert!(!intersects(&w, 30, 40));
        assert!(intersects(&w, 0, 11));
        assert!(!intersects(&w, 50, 60));
    }

    #[test]
    fn lookup_and_overlap() {
        let span = |start, end, line| LineSpan {
            start,
            end,
            file: 0,
            line,
        };
        let m = LineMap {
            files: vec!["a.c".into()],
            spans: vec![span(0, 4, 1), span(4, 10, 2), span(12, 14, 3)],
            units_decoded: 1,
            ..LineMap::default()
        };
        assert_eq!(m.lookup(3).map(|s| s.line), Some(1));
        assert_eq!(m.lookup(4).map(|s| s.line), Some(2));
        assert_eq!(m.lookup(10), None);
        assert_eq!(m.lookup(13).map(|s| s.line), Some(3));
        let lines: Vec<u64> = m.overlapping(2, 13).iter().map(|s| s.line).collect();
        assert_eq!(lines, vec![1, 2, 3]);
        assert!(m.overlapping(10, 12).is_empty());
        let mut cursor = m.cursor();
        for a in [0, 3, 4, 9, 10, 11, 12, 13, 14, 20, 5] {
            assert_eq!(cursor.at(a), m.lookup(a), "at {a}");
        }
    }
}
