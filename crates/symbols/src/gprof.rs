//! GNU gprof 2.40's choice of "function" symbols (`core_sym_class` in `gprof/corefile.c`).
//!
//! gprof asks BFD for the `nm` letter of every `.symtab` entry and keeps `T`, `W` (as global)
//! and, after a name check, `t` (as static). The name check has a quirk that must be
//! reproduced for byte-identical output: a local name whose last dot group (`foo.0`,
//! `foo.constprop.0`) ends at the terminating NUL makes the scanner step past the NUL and go
//! on checking the *next* string of `.strtab` with the same rules. A dotted local is
//! therefore kept only when the following string also passes. Reads past the end of the
//! string table count as NUL.
//!
//! `st_size` is never looked at here: gprof gives each function the range up to the next
//! kept symbol. The honest ranges of the default report live in [`crate::ranges`].
//!
//! [`locate`] is the other half of gprof's symbol table: the source file and line BFD's
//! `bfd_find_nearest_line` names at each symbol's address, which the call graph's index prints
//! after a static function's name and the symbol specs naming a file or a line match.

use std::collections::HashMap;

use object::elf;

use crate::elf::{ElfImage, RawSymbol, SymbolTable};

/// A symbol gprof keeps, before `symtab_finalize` (sorting and alias removal).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GprofSymbol<'data> {
    /// Raw (mangled) name.
    pub name: &'data [u8],
    /// Link-time address (`st_value`).
    pub addr: u64,
    /// `STT_FUNC`/`STT_GNU_IFUNC` (BFD's `BSF_FUNCTION`); NOTYPE labels such as `etext` are not.
    pub is_func: bool,
    /// Class `t` (local text symbol) rather than `T`/`W`.
    pub is_static: bool,
    /// Index in `.symtab` (ties in gprof's stable address sort keep this order).
    pub index: usize,
}

/// Options of gprof that change which symbols are kept.
#[derive(Debug, Clone, Copy, Default)]
pub struct ClassOptions {
    /// `-a` / `--no-static`: drop every local symbol.
    pub no_static: bool,
    /// `-D` / `--ignore-non-functions`: drop local text symbols that are not functions
    /// (`BSF_FUNCTION`: `STT_FUNC` or `STT_GNU_IFUNC`); global ones stay.
    pub ignore_non_functions: bool,
}

/// [`locate`] as a map: the whole path (what gprof prints under `-L`) and the line, for each
/// address the line table has a non-zero line for.
pub fn source_locations(data: &[u8], addrs: &[u64]) -> HashMap<u64, (Vec<u8>, u64)> {
    let found = locate(data, addrs);
    addrs
        .iter()
        .zip(&found.at)
        .filter_map(|(&a, at)| at.map(|(file, line)| (a, (found.path(file).to_vec(), line))))
        .collect()
}

/// What [`locate`] answers, without a map or a copy of the path per address: for each
/// address of the list, in its order, the index of its path and its line.
#[derive(Debug, Default)]
pub struct Located {
    map: crate::lines::LineMap,
    /// Per address: its path's index (for [`Located::path`]) and its line, or `None`.
    pub at: Vec<Option<(u32, u64)>>,
}

impl Located {
    /// The path of a file index (the same index for the same bytes).
    pub fn path(&self, file: u32) -> &[u8] {
        self.map.file_bytes(file)
    }

    /// How many file indexes there are (every index is below this).
    pub fn num_files(&self) -> usize {
        self.map.files.len()
    }
}

/// For each address of `addrs` (link-time, in any order), the source file (whole path) and
/// line BFD 2.40's DWARF line reader gives for it, as gprof's `get_src_info` keeps them: only
/// when the covering line-table row has a non-zero line. One read of the line table, the
/// addresses answered in address order along its spans. Empty without DWARF; damaged units
/// are skipped (a file name is decoration, never a reason to fail).
///
/// The file comes from the **line table**, not from `DW_AT_decl_file`: for optimized code that
/// is often the file of code inlined at the function's first instruction. And it comes with
/// BFD 2.40's DWARF 5 numbering (see [`crate::lines::line_map_with`]): each line sequence
/// starts with file 0, the compilation unit's primary file, until the line program first sets
/// the file register. That is why gprof names `main.c` for a non-inlined static function of a
/// header that is the first code of `main.c`'s sequence, the including file for a function
/// from an `#include`d `.c` file that starts a sequence, and `<artificial>` (the unit name
/// gcc gives a link-time-optimized partition) for such functions in any LTO build.
pub fn locate(data: &[u8], addrs: &[u64]) -> Located {
    locate_in(
        crate::lines::line_map_with(data, &wanted(addrs), true),
        addrs,
    )
}

/// [`locate`] for a caller that only needs the answers whose file `keep` accepts: the
/// compilation units that cannot name such a file are not read
/// ([`crate::lines::line_map_of_files`]), and their addresses have no answer.
pub fn locate_files(data: &[u8], addrs: &[u64], keep: &dyn Fn(&[u8]) -> bool) -> Located {
    locate_in(
        crate::lines::line_map_of_files(data, &wanted(addrs), keep),
        addrs,
    )
}

/// [`locate`] for a caller that already has BFD's line map of the range `covered`
/// (`lo..hi`; gprof's `-l` reads `.text`'s for its line symbols): the addresses inside it are
/// answered from `map`, and only those outside it (`.init`, `.fini`) are looked up anew.
///
/// The answers are [`locate`]'s: both maps are read in BFD's mode, and at an address of
/// `covered` the map of the whole range has the span the map of one byte has (that map reads
/// only the units whose ranges hold the byte; the others have no row there, but for damaged
/// line tables whose sequences of two units overlap, where reading more units is closer to
/// BFD, which reads them all). A path in both maps gets one index.
pub fn locate_reusing(
    data: &[u8],
    map: &crate::lines::LineMap,
    covered: (u64, u64),
    addrs: &[u64],
) -> Located {
    let inside = |a: u64| covered.0 <= a && a < covered.1;
    let mut at = answers(map, addrs, inside);
    let outside: Vec<u64> = addrs.iter().copied().filter(|&a| !inside(a)).collect();
    // Only the paths go with the answers: no spans (Located never looks up again).
    let mut files = crate::lines::LineMap {
        files: map.files.clone(),
        raw_files: map.raw_files.clone(),
        ..Default::default()
    };
    if !outside.is_empty() {
        let rest = crate::lines::line_map_with(data, &wanted(&outside), true);
        let mut index: HashMap<&[u8], u32> = (0..map.files.len() as u32)
            .map(|k| (map.file_bytes(k), k))
            .collect();
        let renumbered: Vec<u32> = (0..rest.files.len() as u32)
            .map(|k| {
                let bytes = rest.file_bytes(k);
                *index.entry(bytes).or_insert_with(|| {
                    let new = files.files.len() as u32;
                    files.files.push(rest.files[k as usize].clone());
                    if let Some(raw) = rest.raw_files.get(&k) {
                        files.raw_files.insert(new, raw.clone());
                    }
                    new
                })
            })
            .collect();
        let theirs = answers(&rest, addrs, |a| !inside(a));
        for (mine, theirs) in at.iter_mut().zip(theirs) {
            if let Some((file, line)) = theirs {
                *mine = Some((renumbered[file as usize], line));
            }
        }
    }
    Located { map: files, at }
}

/// One byte at each address.
fn wanted(addrs: &[u64]) -> Vec<(u64, u64)> {
    addrs.iter().map(|&a| (a, a.saturating_add(1))).collect()
}

fn locate_in(map: crate::lines::LineMap, addrs: &[u64]) -> Located {
    let at = answers(&map, addrs, |_| true);
    Located { map, at }
}

/// For each address of `addrs` that `ask` takes, the file and non-zero line of `map`'s span
/// there, in address order along the spans.
fn answers(
    map: &crate::lines::LineMap,
    addrs: &[u64],
    ask: impl Fn(u64) -> bool,
) -> Vec<Option<(u32, u64)>> {
    let mut at = vec![None; addrs.len()];
    if !map.spans.is_empty() {
        let mut by_addr: Vec<u32> = (0..addrs.len() as u32)
            .filter(|&i| ask(addrs[i as usize]))
            .collect();
        by_addr.sort_unstable_by_key(|&i| addrs[i as usize]);
        let mut cursor = map.cursor();
        for i in by_addr {
            let i = i as usize;
            if let Some(span) = cursor.at(addrs[i]).filter(|s| s.line != 0) {
                at[i] = Some((span.file, span.line));
            }
        }
    }
    at
}

/// The `nm` letter BFD gives an ELF symbol (`bfd_decode_symclass`).
pub fn nm_letter(image: &ElfImage<'_>, sym: &RawSymbol) -> char {
    let shndx = sym.shndx;
    let weak = sym.bind == elf::STB_WEAK.0;
    let is_object = sym.typ == elf::STT_OBJECT.0;
    if shndx == u32::from(elf::SHN_COMMON.0) || sym.typ == elf::STT_COMMON.0 && shndx != 0 {
        return if sym.bind == elf::STB_LOCAL.0 {
            'c'
        } else {
            'C'
        };
    }
    if shndx == u32::from(elf::SHN_UNDEF.0) {
        return match (weak, is_object) {
            (true, true) => 'v',
            (true, false) => 'w',
            _ => 'U',
        };
    }
    if sym.typ == elf::STT_GNU_IFUNC.0 {
        return 'i';
    }
    if weak {
        return if is_object { 'V' } else { 'W' };
    }
    if sym.bind == elf::STB_GNU_UNIQUE.0 {
        return 'u';
    }
    let global = sym.bind == elf::STB_GLOBAL.0;
    if !global && sym.bind != elf::STB_LOCAL.0 {
        return '?';
    }
    let section = if shndx >= u32::from(elf::SHN_LORESERVE) {
        None
    } else {
        image.sections.get(shndx as usize)
    };
    let c = match section {
        None => 'a',
        Some(sec) => match section_name_letter(sec.name) {
            Some(c) => c,
            None => section_flag_letter(sec.sh_type, sec.flags),
        },
    };
    if global {
        c.to_ascii_uppercase()
    } else {
        c
    }
}

/// BFD's table of well-known section names; a name matches an entry when it starts with it
/// and the next character is one of `.$0-9` or the end.
fn section_name_letter(name: &[u8]) -> Option<char> {
    const TABLE: &[(&[u8], char)] = &[
        (b".bss", 'b'),
        (b"code", 't'),
        (b".data", 'd'),
        (b"*DEBUG*", 'N'),
        (b".debug", 'N'),
        (b".drectve", 'i'),
        (b".edata", 'e'),
        (b".fini", 't'),
        (b".idata", 'i'),
        (b".init", 't'),
        (b".pdata", 'p'),
        (b".rdata", 'r'),
        (b".rodata", 'r'),
        (b".sbss", 's'),
        (b".scommon", 'c'),
        (b".sdata", 'g'),
        (b".text", 't'),
        (b"vars", 'd'),
        (b"zerovars", 'b'),
    ];
    TABLE.iter().find_map(|&(prefix, c)| {
        let next = name.strip_prefix(prefix)?.first().copied().unwrap_or(0);
        (next == 0 || b".$0123456789".contains(&next)).then_some(c)
    })
}

/// BFD's letter from section flags (`decode_section_type`), for ELF section headers.
fn section_flag_letter(sh_type: u32, flags: u64) -> char {
    let has_contents = sh_type != elf::SHT_NOBITS.0;
    let alloc = flags & elf::SHF_ALLOC.0 != 0;
    let readonly = flags & elf::SHF_WRITE.0 == 0;
    if flags & elf::SHF_EXECINSTR.0 != 0 {
        't'
    } else if alloc && has_contents {
        if readonly {
            'r'
        } else {
            'd'
        }
    } else if !has_contents {
        'b'
    } else if readonly {
        'n'
    } else {
        '?'
    }
}

/// gprof's name rules for local text symbols, including the read past the NUL.
fn static_name_passes(strtab: &[u8], start: usize) -> bool {
    let at = |i: usize| strtab.get(i).copied().unwrap_or(0);
    let strlen = |i: usize| (i..).take_while(|&j| at(j) != 0).count();
    let mut p = start;
    while at(p) != 0 {
        if at(p) == b'$' {
            return false;
        }
        while at(p) == b'.' {
            let rest = strlen(p);
            if rest > 7 && strtab[p..].starts_with(b".clone.") {
                p += 6;
            } else if rest > 11 && strtab[p..].starts_with(b".constprop.") {
                p += 10;
            }
            let mut digit_seen = false;
            p += 1;
            loop {
                let c = at(p);
                if c == 0 || (digit_seen && c == b'.') {
                    break;
                }
                if !c.is_ascii_digit() {
                    return false;
                }
                digit_seen = true;
                p += 1;
            }
        }
        // The C loop's `++name` runs even when the dot group stopped at the NUL.
        p += 1;
    }
    true
}

/// gprof's class of one symbol: `Some(false)` for `T`/`W`, `Some(true)` for `t`, `None` if
/// rejected.
pub fn gprof_class(
    image: &ElfImage<'_>,
    table: &SymbolTable<'_>,
    sym: &RawSymbol,
    opts: ClassOptions,
) -> Option<bool> {
    if sym.typ == elf::STT_SECTION.0 || sym.typ == elf::STT_FILE.0 {
        return None;
    }
    let local = sym.bind == elf::STB_LOCAL.0;
    if opts.no_static && local {
        return None;
    }
    match nm_letter(image, sym) {
        'T' | 'W' => Some(false),
        't' => {
            let name = table.name(sym);
            if name.is_empty()
                || !static_name_passes(table.strtab, sym.name_offset as usize)
                || name.starts_with(b"__gnu_compiled")
                || name.starts_with(b"___gnu_compiled")
                || (opts.ignore_non_functions
                    && sym.typ != elf::STT_FUNC.0
                    && sym.typ != elf::STT_GNU_IFUNC.0)
            {
                None
            } else {
                Some(true)
            }
        }
        _ => None,
    }
}

/// Every symbol of `table` that gprof would turn into a `Sym`, in table order.
pub fn gprof_symbols<'data>(
    image: &ElfImage<'data>,
    table: &SymbolTable<'data>,
    opts: ClassOptions,
) -> Vec<GprofSymbol<'data>> {
    table
        .symbols
        .iter()
        .filter_map(|sym| {
            let is_static = gprof_class(image, table, sym, opts)?;
            Some(GprofSymbol {
                name: table.name(sym),
                addr: sym.value,
                is_func: sym.typ == elf::STT_FUNC.0 || sym.typ == elf::STT_GNU_IFUNC.0,
                is_static,
                index: sym.index,
            })
        })
        .collect()
}

/// The traces of gprof's `core_create_function_syms` under `-d` with `AOUTDEBUG` (128), into
/// `out`: its first pass classifies every symbol (`[core_sym_class] NAME is of class C` for
/// the letters it does not keep, `NAME: not a function` for locals under `-a`), the second
/// does it again and then says of each symbol whether it is rejected (with BFD's
/// section-relative value) or becomes the next function, after `get_src_info`'s line.
///
/// `located` holds what the DWARF line table says of symbol addresses ([`source_locations`]:
/// the whole path and a non-zero line); for those `get_src_info` succeeds, with the function
/// named by the nearest symbol (BFD names the DWARF function, whose linkage name or name is the
/// symbol's at a function's entry).
///
/// Elsewhere `get_src_info` is given as BFD answers it without DWARF: the nearest function symbol of
/// `.text` at or below the address (`elf_find_function`: any symbol of `.text` that is not an
/// object, TLS, section or file symbol; the larger size wins at the same address; an address
/// below `.text` wraps to a huge offset) with the file of the `STT_FILE` symbol before it,
/// and line 0, so "no info".
pub fn class_traces(
    image: &ElfImage<'_>,
    table: &SymbolTable<'_>,
    opts: ClassOptions,
    located: &HashMap<u64, (Vec<u8>, u64)>,
    out: &mut Vec<u8>,
) {
    class_traces_mapped(image, table, opts, located, &|_| None, out);
}

/// What gprof's `-R` map does to a function, by name: `None`, nothing; `Some(Some(file))`,
/// renamed to its object file; `Some(None)`, dropped.
pub type MappedName<'m> = &'m dyn Fn(&[u8]) -> Option<Option<Vec<u8>>>;

/// [`class_traces`] under gprof's `-R` map: `mapped(name)` is `None` for a function the map
/// does not name, `Some(Some(file))` for one it renames to its object file (it is traced
/// under that name), `Some(None)` for one it drops (not traced, not counted).
pub fn class_traces_mapped(
    image: &ElfImage<'_>,
    table: &SymbolTable<'_>,
    opts: ClassOptions,
    located: &HashMap<u64, (Vec<u8>, u64)>,
    mapped: MappedName<'_>,
    out: &mut Vec<u8>,
) {
    use std::io::Write;
    let find = FindFunction::new(image, table);
    let class_line = |sym: &RawSymbol, out: &mut Vec<u8>| {
        if sym.typ == elf::STT_SECTION.0 || sym.typ == elf::STT_FILE.0 {
            return;
        }
        let name = table.name(sym);
        if opts.no_static && sym.bind == elf::STB_LOCAL.0 {
            out.extend_from_slice(b"[core_sym_class] ");
            out.extend_from_slice(name);
            out.extend_from_slice(b": not a function\n");
            return;
        }
        let c = nm_letter(image, sym);
        if !matches!(c, 'T' | 'W' | 't') {
            out.extend_from_slice(b"[core_sym_class] ");
            out.extend_from_slice(name);
            let _ = writeln!(out, " is of class {c}");
        }
    };
    for sym in &table.symbols {
        class_line(sym, out);
    }
    let mut kept = 0usize;
    for sym in &table.symbols {
        class_line(sym, out);
        let name = table.name(sym);
        if gprof_class(image, table, sym, opts).is_none() {
            let _ = write!(
                out,
                "[core_create_function_syms] rejecting: 0x{:x} ",
                bfd_value(image, sym)
            );
            out.extend_from_slice(name);
            out.push(b'\n');
            continue;
        }
        let shown = match mapped(name) {
            Some(None) => continue,
            Some(Some(file)) => file,
            None => name.to_vec(),
        };
        let (file, func) = find.at(sym.value);
        let found = located.get(&sym.value).map(|(p, l)| (p.as_slice(), *l));
        src_info_trace(sym.value, found, file, func, out);
        let _ = write!(out, "[core_create_function_syms] {kept} ");
        out.extend_from_slice(&shown);
        let _ = writeln!(out, " 0x{:x}", sym.value);
        kept += 1;
    }
}

/// `get_src_info`'s `AOUTDEBUG` line for `addr`: with `found` (path and line from the line
/// table) and a function, its answer; else "no info", with the file and function of the
/// symbol-table fallback.
pub fn src_info_trace(
    addr: u64,
    found: Option<(&[u8], u64)>,
    file: Option<&[u8]>,
    func: Option<&[u8]>,
    out: &mut Vec<u8>,
) {
    use std::io::Write;
    match (found, func) {
        (Some((path, line)), Some(func)) => {
            let _ = write!(out, "[get_src_info] 0x{addr:x} -> ");
            out.extend_from_slice(path);
            let _ = write!(out, ":{line} (");
            out.extend_from_slice(func);
            out.extend_from_slice(b")\n");
        }
        _ => {
            let _ = write!(out, "[get_src_info] no info for 0x{addr:x} (");
            out.extend_from_slice(file.unwrap_or(b"<unknown>"));
            out.extend_from_slice(b":0,");
            out.extend_from_slice(func.unwrap_or(b"<unknown>"));
            out.extend_from_slice(b")\n");
        }
    }
}

/// BFD's `value` of an ELF symbol of an executable: relative to its section, if it has one.
fn bfd_value(image: &ElfImage<'_>, sym: &RawSymbol) -> u64 {
    let special = sym.shndx == 0 || sym.shndx >= u32::from(elf::SHN_LORESERVE);
    match image.sections.get(sym.shndx as usize).filter(|_| !special) {
        Some(sec) => sym.value.wrapping_sub(sec.addr),
        None => sym.value,
    }
}

/// `elf_find_function` without DWARF: the file and function BFD names for an address (see
/// [`class_traces`]), by a binary search over `.text`'s candidate symbols.
#[derive(Debug, Clone)]
pub struct FindFunction<'data> {
    vma: u64,
    /// (offset in `.text`, size (at least 1), reversed `.symtab` position, name, file),
    /// ascending: the last one at or below an offset is BFD's answer.
    candidates: Vec<FindCandidate<'data>>,
}

type FindCandidate<'data> = (
    u64,
    u64,
    std::cmp::Reverse<usize>,
    &'data [u8],
    Option<&'data [u8]>,
);

impl<'data> FindFunction<'data> {
    /// The candidates of `table` in `image`'s `.text` (none without one).
    pub fn new(image: &ElfImage<'_>, table: &SymbolTable<'data>) -> Self {
        let text = image
            .sections
            .iter()
            .position(|s| s.name == b".text")
            .or_else(|| image.sections.iter().position(|s| s.name == b"$CODE$"));
        let Some(text) = text else {
            return FindFunction {
                vma: 0,
                candidates: Vec::new(),
            };
        };
        let vma = image.sections[text].addr;
        let mut file: Option<&RawSymbol> = None;
        let (mut symbol_seen, mut file_after_symbol) = (false, false);
        let mut candidates = Vec::new();
        for (k, sym) in table.symbols.iter().enumerate() {
            if sym.typ == elf::STT_FILE.0 {
                file = Some(sym);
                file_after_symbol |= symbol_seen;
                continue;
            }
            symbol_seen = true;
            let excluded = [
                elf::STT_SECTION.0,
                elf::STT_OBJECT.0,
                elf::STT_TLS.0,
                elf::STT_COMMON.0,
            ];
            // annobin's labels (hidden local untyped, size 0) are no candidates for BFD.
            let annobin = sym.size == 0
                && sym.bind == elf::STB_LOCAL.0
                && sym.typ == elf::STT_NOTYPE.0
                && sym.visibility == elf::STV_HIDDEN.0;
            if excluded.contains(&sym.typ) || annobin || sym.shndx as usize != text {
                continue;
            }
            let f = file
                .filter(|_| sym.bind == elf::STB_LOCAL.0 || !file_after_symbol)
                .map(|f| table.name(f));
            let off = sym.value.wrapping_sub(vma);
            candidates.push((
                off,
                sym.size.max(1),
                std::cmp::Reverse(k),
                table.name(sym),
                f,
            ));
        }
        candidates.sort_unstable_by_key(|c| (c.0, c.1, c.2));
        FindFunction { vma, candidates }
    }

    /// The file (of the `STT_FILE` symbol before the function, as BFD keeps it) and function
    /// BFD names for `addr` (an address below `.text` is a huge offset: the last function).
    pub fn at(&self, addr: u64) -> (Option<&'data [u8]>, Option<&'data [u8]>) {
        let offset = addr.wrapping_sub(self.vma);
        let k = self.candidates.partition_point(|c| c.0 <= offset);
        match k.checked_sub(1).map(|k| &self.candidates[k]) {
            Some(c) => (c.4, Some(c.3)),
            None => (None, None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `locate_reusing` answers as `locate` does, from a map of part of the code plus a
    /// reading of its own for the rest, with one index per path.
    #[test]
    fn locate_reusing_answers_as_locate() {
        // A small C program with debug info (fixtures/identity/build.sh).
        let data = include_bytes!("../../../fixtures/identity/inl");
        let image = ElfImage::parse(data).unwrap();
        let text = image.section_by_name(".text").unwrap();
        let (lo, hi) = (text.addr, text.addr + text.size);
        // Every byte from before .text (.init, .plt) to past it (.fini).
        let addrs: Vec<u64> = (lo - 0x40..hi + 0x10).rev().collect();
        let want = locate(data, &addrs);
        let answers = |l: &Located| -> Vec<Option<(Vec<u8>, u64)>> {
            l.at.iter()
                .map(|a| a.map(|(f, line)| (l.path(f).to_vec(), line)))
                .collect()
        };
        assert!(want.at.iter().filter(|a| a.is_some()).count() > 100);
        let mid = lo + (hi - lo) / 2;
        for covered in [(lo, hi), (lo, mid), (mid, hi)] {
            let map = crate::lines::line_map_with(data, &[covered], true);
            let got = locate_reusing(data, &map, covered, &addrs);
            assert_eq!(answers(&got), answers(&want), "{covered:x?}");
            let mut paths: Vec<&[u8]> = (0..got.num_files() as u32).map(|f| got.path(f)).collect();
            paths.sort_unstable();
            let n = paths.len();
            paths.dedup();
            assert_eq!(paths.len(), n, "a path with two indexes: {covered:x?}");
        }
    }

    fn passes(strtab: &[u8], name: &str) -> bool {
        let start = strtab
            .windows(name.len() + 1)
            .position(|w| &w[..name.len()] == name.as_bytes() && w[name.len()] == 0)
            .unwrap();
        static_name_passes(strtab, start)
    }

    #[test]
    fn dotted_names_follow_gprof_rules() {
        let t = b"\0plain\0foo.part.0\0foo.isra.0\0foo.cold\0x.c\0a$b\0";
        assert!(passes(t, "plain"));
        for bad in ["foo.part.0", "foo.isra.0", "foo.cold", "x.c", "a$b"] {
            assert!(!passes(t, bad), "{bad}");
        }
    }

    #[test]
    fn dot_group_at_end_reads_next_string() {
        // Accepted only because the following string passes too.
        assert!(passes(b"\0foo.0\0plainname\0", "foo.0"));
        assert!(!passes(b"\0foo.0\0other.x\0", "foo.0"));
        assert!(passes(b"\0f.constprop.0\0g\0", "f.constprop.0"));
        assert!(!passes(
            b"\0cp_fn.constprop.0\0crtstuff.c\0",
            "cp_fn.constprop.0"
        ));
        assert!(passes(b"\0f.clone.3\0", "f.clone.3"));
        assert!(passes(b"\0f.1.2\0", "f.1.2"));
        // End of the table counts as NUL.
        assert!(static_name_passes(b"\0f.12", 1));
        // A chain: the next string also ends in a dot group, so the one after is read too.
        assert!(!passes(b"\0a.1\0b.2\0c.x\0", "a.1"));
        assert!(passes(b"\0a.1\0b.2\0c\0", "a.1"));
    }

    #[test]
    fn section_letters() {
        assert_eq!(section_name_letter(b".text"), Some('t'));
        assert_eq!(section_name_letter(b".text.hot"), Some('t'));
        assert_eq!(section_name_letter(b".init_array"), None);
        assert_eq!(section_name_letter(b".data.rel.ro"), Some('d'));
        assert_eq!(section_flag_letter(elf::SHT_PROGBITS.0, 6), 't');
        assert_eq!(section_flag_letter(elf::SHT_NOBITS.0, 3), 'b');
    }
}
