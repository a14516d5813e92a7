//! gprof's `-l` (`--line`): line symbols beside the function symbols, for the flat profile,
//! the call graph and the index alike (`gprof -b -l [-p|-P] [-q|-Q] [-z] [-a]`).
//!
//! gprof's `core_create_line_syms` asks BFD for `(file, function, line)` at every byte of
//! `.text` and starts a symbol where the triple changes; bytes without an answer (no line,
//! line 0, no function) are skipped without ending the current symbol. The function symbols
//! are then added (they win over a line symbol at the same address), and everything after
//! that is gprof's usual pipeline over the bigger table: histogram assignment, arcs (a caller
//! is the line symbol holding the call site; a callee is moved back to its function symbol,
//! since line symbols are not functions), cycles, propagation. Every name is printed with
//! `print_name_only`'s `(file:line @ addr)` suffix ([`LineLocations`]), and the index prints no
//! `(file)` after static functions (gprof skips it under line granularity).
//!
//! Here the triple changes only where a line-table span or a DWARF function range begins or
//! ends, so the same symbols come from those boundaries without visiting every byte. "The
//! function" is BFD's: the smallest DWARF function or inlined-copy range holding the address,
//! by its linkage name (a C name counts as one); without one, the ELF symbol's.
//!
//! With `-S` (symbols from a file) gprof makes no line symbols: `-l` and `-s` then run the
//! function-granularity pipeline (no symbol has a file, so names get no suffix).
//!
//! Damaged DWARF: BFD gives up on a whole unit whose line program does not decode (gimli
//! reads on past an extended opcode BFD does not know) or whose DIE tree does not (a missing
//! abbreviation): no address of the unit gets an answer, so gprof prints no line symbols there
//! and bare function names (and the index no `(file)` after static functions). Both are
//! reproduced ([`LineMap`](profil_symbols::lines::LineMap) in BFD mode drops such a unit's
//! spans, [`InlineMap::damaged`] lists the ranges of units whose functions do not read).
//! Names and file names are bytes as the DWARF has them, UTF-8 or not (gprof prints them
//! raw); an empty file name, or a file index past the table, is BFD's `<unknown>`. BFD reads
//! a unit's DIEs only up to the null entry closing the unit DIE's children, reads an empty
//! or unreadable name as none (a function without a name: no answer at its addresses),
//! refuses a line table with an entry format it does not know, and searches a unit without
//! any address range for every address; all as here.
//!
//! Known limits (the output can then differ from gprof's):
//!
//! * A DWARF function without a linkage name outside C (C++ `static` and `extern "C"`
//!   functions) takes the name of the nearest `.symtab` function at or below the address, an
//!   approximation of BFD's `_bfd_elf_find_function` (which also weighs `STT_FILE` symbols
//!   and section boundaries).
//! * Two different files with the same path spelled differently are one file for BFD only
//!   after its own path joining; here the spellings of [`profil_symbols::dwarf::Location`]
//!   are compared.
//! * Damage that gimli refuses where BFD reads on: an abbreviation table with a tag of 0 or
//!   an attribute specification gimli does not accept, an unknown unit type, a DWARF 5 line
//!   table header with an address size of 0, an extended line opcode whose length does not
//!   match its operand (BFD reads the operand and ignores the length). Such a unit has no
//!   lines here (gprof's has). The reverse also exists: a line table of no files, whose rows
//!   BFD refuses as a mangled section, keeps its lines here (as `<unknown>`).
//!   Found with `analyzer/bench/gprof_damage.py` (single-byte damage to every byte of the
//!   debug sections of a small program); everything else it found is reproduced.
//! * Without `-l`, `-C`'s files and the index's `(file)` come from the line table alone: a
//!   function whose DWARF name is empty or unreadable still gets its file there (gprof's
//!   `get_src_info` needs a function name, so it prints none).
//! * gprof 2.40 itself fails ("somebody miscounted", exit 1) on some optimized C++ programs:
//!   BFD renames a DWARF function after its ELF symbol on the first lookup, so gprof's two
//!   passes over `.text` disagree. This mode prints the profile there instead (and `-s`,
//!   which implies `-l` in gprof, writes gmon.sum), e.g. a C++ program built `-O3 -flto`.
//! * Tested byte for byte against gprof on C (`-O0`..`-O3`, inlining, two units), C++ (`-O0`,
//!   header code), and optimized Rust (cross-crate inlining): see
//!   `analyzer/tests/integration/lines_gprof.rs`.

use std::collections::HashMap;

use profil_symbols::gprof::GprofSymbol;
use profil_symbols::inline::{bfd_line_and_inline_maps, InlineMap, InnermostCursor};
use profil_symbols::lines::{LineCursor, LineSpan};
use profil_symbols::ElfImage;

use super::cg::CallGraph;
use super::cg_print::{GraphOptions, Sections};
use super::debug;
use super::symspec::Selection;
use super::symtab::SymTab;
use super::{Analysis, Options, DEFAULT_EXCLUDED};
use crate::{Error, Result};

/// The `(file:line @ addr)` gprof prints after each symbol name under `-l`: for each symbol
/// of the table, the source file (an index into `files`) and line BFD gives at its address;
/// `None` where BFD has no answer (gprof then prints the bare name).
#[derive(Debug, Clone, Default)]
pub struct LineLocations {
    /// Base names of the source files (gprof without `-L`).
    pub files: Vec<Vec<u8>>,
    /// Per symbol of [`Analysis::symtab`]: (index into `files`, line).
    pub at: Vec<Option<(u32, u64)>>,
    /// BFD's line map of `.text` (`text`) the line symbols were cut from, for `-C`'s whole
    /// paths ([`profil_symbols::gprof::locate_reusing`]: the line table is read once).
    pub text_map: profil_symbols::lines::LineMap,
    /// `.text`'s link-time addresses, `lo..hi`.
    pub text: (u64, u64),
}

impl LineLocations {
    /// Append symbol `i`'s ` (file:line)` (`--inline-file-names`), if it has one.
    pub fn push_file_line(&self, i: usize, out: &mut Vec<u8>) {
        if let Some(Some((file, line))) = self.at.get(i) {
            out.extend_from_slice(b" (");
            out.extend_from_slice(self.files.get(*file as usize).map_or(b"??", Vec::as_slice));
            out.push(b':');
            super::printf::push_u(out, 0, *line);
            out.push(b')');
        }
    }

    /// Append symbol `i`'s suffix (` (file:line @ addr)`), if it has one.
    pub fn push_suffix(&self, i: usize, addr: u64, out: &mut Vec<u8>) {
        if let Some(Some((file, line))) = self.at.get(i) {
            out.extend_from_slice(b" (");
            out.extend_from_slice(self.files.get(*file as usize).map_or(b"??", Vec::as_slice));
            out.push(b':');
            super::printf::push_u(out, 0, *line);
            out.extend_from_slice(b" @ ");
            super::printf::push_x(out, addr);
            out.push(b')');
        }
    }
}

/// What to print: gprof's section flags, `-z` and `-a`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Request {
    /// `-p`/`-P`/`-q`/`-Q`.
    pub sections: Sections,
    /// `-z`.
    pub graph: GraphOptions,
    /// `-a`.
    pub options: Options,
    /// `-s`: write `gmon.sum` (in the current directory) once the files are read.
    pub sum: bool,
}

/// One line symbol, before it joins the function symbols.
struct LineSym {
    addr: u64,
    name: u32,
    file: u32,
    line: u64,
    is_static: bool,
}

/// A `.text` symbol BFD may fall back on: address, size (at least 1), `.symtab` position
/// (reversed: the first of equals wins), name.
type ElfFunc<'n> = (u64, u64, std::cmp::Reverse<usize>, &'n [u8]);

/// Where the function name of an address comes from (with its index in that source).
enum NameSource<'n> {
    /// The innermost DWARF function or inlined copy: index into [`InlineMap::names`].
    Dwarf(usize, &'n [u8]),
    /// BFD's ELF fallback: index into the sorted [`ElfFunc`]s.
    Elf(usize, &'n [u8]),
}

/// gprof's `get_src_info` (BFD's `bfd_find_nearest_line`) for addresses asked in ascending
/// order: each pass walks the line spans and the DWARF frames once, not a search per address.
#[derive(Clone)]
struct SrcInfo<'l, 'm, 'n> {
    /// A lifetime of its own: the names never borrow the line map.
    lines: LineCursor<'l>,
    frames: InnermostCursor<'m>,
    inl: &'m InlineMap,
    /// Sorted by address, size, position.
    elf_funcs: &'m [ElfFunc<'n>],
}

impl<'l, 'm, 'n> SrcInfo<'l, 'm, 'n>
where
    'm: 'n,
{
    /// The line span (line not 0) and the function name's source at `addr`, if BFD would
    /// answer.
    fn at(&mut self, addr: u64) -> Option<(&'l LineSpan, NameSource<'n>)> {
        let span = self.lines.at(addr).filter(|s| s.line != 0)?;
        let damaged = &self.inl.damaged;
        if !damaged.is_empty() {
            let i = damaged.partition_point(|r| r.1 <= addr);
            if damaged.get(i).is_some_and(|r| r.0 <= addr) {
                return None;
            }
        }
        let dwarf = self
            .frames
            .at(addr)
            .filter(|f| f.is_linkage)
            .and_then(|f| Some((f.name as usize, self.inl.name_bytes(f.name)?)));
        let source = match dwarf {
            // BFD reads an empty name as none: a linkage (or C) name that is empty leaves
            // the function nameless, and gprof takes no answer without a name.
            Some((_, [])) => return None,
            Some((k, n)) => NameSource::Dwarf(k, n),
            None => {
                let k = self
                    .elf_funcs
                    .partition_point(|f| f.0 <= addr)
                    .checked_sub(1)?;
                NameSource::Elf(k, self.elf_funcs[k].3)
            }
        };
        Some((span, source))
    }
}

/// The union of two non-decreasing sequences, ascending, without repeats.
fn merge_ascending(a: impl Iterator<Item = u64>, b: impl Iterator<Item = u64>) -> Vec<u64> {
    let (mut a, mut b) = (a.peekable(), b.peekable());
    let mut out: Vec<u64> = Vec::with_capacity(a.size_hint().0 + b.size_hint().0);
    loop {
        let next = match (a.peek(), b.peek()) {
            (Some(&x), Some(&y)) if x <= y => a.next(),
            (Some(_), Some(_)) => b.next(),
            (Some(_), None) => a.next(),
            (None, _) => b.next(),
        };
        let Some(v) = next else {
            return out;
        };
        if out.last() != Some(&v) {
            out.push(v);
        }
    }
}

/// The distinct names of line symbols, each with its number.
#[derive(Default)]
struct Names<'n> {
    list: Vec<&'n [u8]>,
    ids: HashMap<&'n [u8], u32>,
}

impl<'n> Names<'n> {
    /// The number of `name`, remembered in `cache` (`u32::MAX`: not yet asked), so that a
    /// name is hashed once per source (DWARF name or ELF symbol), not once per address.
    fn intern(&mut self, cache: &mut u32, name: &'n [u8]) -> u32 {
        if *cache == u32::MAX {
            let next = self.list.len() as u32;
            *cache = *self.ids.entry(name).or_insert(next);
            if *cache == next {
                self.list.push(name);
            }
        }
        *cache
    }
}

/// `gprof -b -l` as `req` asks: build the line-granular symbol table of `image` (`data` is
/// the executable's bytes, `exe_name` names it in messages), read the gmon files `gmons`
/// (name, bytes) in order, one at a time (each is dropped before the next is asked for), and
/// print what gprof prints into `out` (a large annotated source goes to `sink` as it grows:
/// [`super::report::print_report`]).
pub fn print_report<B: std::ops::Deref<Target = [u8]>>(
    image: &ElfImage<'_>,
    data: &[u8],
    exe_name: &str,
    gmons: impl IntoIterator<Item = Result<(String, B)>>,
    req: Request,
    out: &mut Vec<u8>,
    sink: &mut dyn std::io::Write,
) -> Result<Vec<String>> {
    let text = image
        .section_by_name(".text")
        .ok_or_else(|| Error::input(format!("{exe_name}: has no .text section")))?;
    if req.options.external_symbols.is_some() {
        // gprof builds its symbols from the -S file and makes no line symbols: the
        // function-granularity pipeline (no symbol has a file, so no name gets a suffix).
        let mut a = Analysis::new(image, exe_name, req.options)?;
        a.trace_sym_id_parse(None);
        if req.options.static_calls {
            a.static_text = super::text_bytes(data);
        }
        return read_and_print(a, data, gmons, req, out, sink);
    }
    let (lo, hi) = (text.addr, text.addr.saturating_add(text.size));
    let (lines, inl) = bfd_line_and_inline_maps(data, &[(lo, hi)]);
    let mut base = Analysis::new(image, exe_name, req.options)?;
    base.trace_classes_first(image, data);
    // BFD's fallback name (`_bfd_elf_find_function`, for bytes no DWARF function covers):
    // the `.symtab` symbol of `.text` with the highest address at or below the address. BFD's
    // candidates (`_bfd_elf_maybe_function_sym`) are all symbols of the section but section,
    // file, object, common and TLS ones, any binding (so also with -a), and a size of 0 counts
    // as 1, except for hidden local untyped labels (annobin's): so the `.L` labels that i386
    // PIC code keeps for its jump tables count. Ties go to the larger one, and among symbols
    // of the same address and size (an alias: weak, IFUNC and resolver, folded functions) to
    // the first in `.symtab`, since BFD replaces its candidate only with a strictly better
    // one. Such names show at the padding after a function, where a line row but no DWARF
    // function covers the bytes.
    let text_index = image
        .sections
        .iter()
        .position(|s| s.name == text.name && s.addr == text.addr);
    let mut elf_funcs: Vec<ElfFunc<'_>> = image
        .symtab
        .iter()
        .flat_map(|t| {
            t.symbols
                .iter()
                .enumerate()
                .filter(|(_, s)| {
                    use object::elf;
                    let excluded_type = [
                        elf::STT_SECTION.0,
                        elf::STT_FILE.0,
                        elf::STT_OBJECT.0,
                        elf::STT_COMMON.0,
                        elf::STT_TLS.0,
                    ]
                    .contains(&s.typ);
                    let annobin = s.size == 0
                        && s.bind == elf::STB_LOCAL.0
                        && s.typ == elf::STT_NOTYPE.0
                        && s.visibility == elf::STV_HIDDEN.0;
                    Some(s.shndx as usize) == text_index && !excluded_type && !annobin
                })
                .map(move |(k, s)| (s.value, s.size.max(1), std::cmp::Reverse(k), t.name(s)))
        })
        .collect();
    elf_funcs.sort_unstable_by_key(|a| (a.0, a.1, a.2));
    // Names of line symbols: DWARF names, or BFD's fallback names. Each DWARF name and each
    // ELF fallback is interned once (`by_dwarf`, `by_elf`), not hashed at every cut.
    let mut names = Names::default();
    let mut by_dwarf: Vec<u32> = vec![u32::MAX; inl.names.len()];
    let mut by_elf: Vec<u32> = vec![u32::MAX; elf_funcs.len()];
    let src = SrcInfo {
        lines: lines.cursor(),
        frames: inl.innermost_cursor(),
        inl: &inl,
        elf_funcs: &elf_funcs,
    };
    // The spans are sorted and do not overlap, so their ends ascend with their starts: the
    // cuts are two ascending lists merged, not sorted.
    let span_cuts = std::iter::once(lo).chain(
        lines
            .overlapping(lo, hi)
            .iter()
            .flat_map(|s| [s.start.max(lo), s.end.min(hi)]),
    );
    let cuts = merge_ascending(span_cuts, inl.boundaries(lo, hi).into_iter());
    // At most one symbol per cut (reserved, not touched, beyond what is used).
    let mut line_syms: Vec<LineSym> = Vec::with_capacity(cuts.len());
    let mut at_cut = src.clone();
    let mut base_sym = 0usize;
    for &addr in &cuts {
        let Some((span, source)) = at_cut.at(addr) else {
            continue;
        };
        let (file, line) = (span.file, span.line);
        let name = match source {
            NameSource::Dwarf(k, n) => names.intern(&mut by_dwarf[k], n),
            NameSource::Elf(k, n) => names.intern(&mut by_elf[k], n),
        };
        let prev = line_syms.last();
        if prev.is_some_and(|p| p.line == line && p.name == name && p.file == file) {
            continue;
        }
        let is_static = match prev {
            Some(p) if p.file == file && p.name == name => p.is_static,
            _ => {
                // sym_lookup in the function table, whose addresses ascend like the cuts'.
                let syms = &base.symtab.syms;
                while syms.get(base_sym + 1).is_some_and(|s| s.addr <= addr) {
                    base_sym += 1;
                }
                syms.get(base_sym)
                    .is_some_and(|s| s.addr <= addr && addr <= s.end_addr && s.is_static)
            }
        };
        line_syms.push(LineSym {
            addr,
            name,
            file,
            line,
            is_static,
        });
    }
    let names = names.list;
    if base.trace.on(debug::AOUTDEBUG | debug::LOOKUPDEBUG) {
        trace_line_passes(
            &mut base,
            image,
            (lo, hi),
            &src,
            &lines.files,
            &line_syms,
            &names,
        );
    }
    let mut merged: Vec<GprofSymbol<'_>> = line_syms
        .iter()
        .map(|l| GprofSymbol {
            name: names[l.name as usize],
            addr: l.addr,
            is_func: false,
            is_static: l.is_static,
            index: 0,
        })
        .collect();
    // symtab_finalize keeps a symbol only if its range is not empty; the function symbols
    // bring their end addresses, so one ending below its start (`data_start`, last in the
    // table, ends at the end of `.text`) is dropped this time.
    merged.extend(
        base.symtab
            .syms
            .iter()
            .filter(|s| s.end_addr == 0 || s.addr <= s.end_addr)
            .map(|s| GprofSymbol {
                name: s.name,
                addr: s.addr,
                is_func: s.is_func,
                is_static: s.is_static,
                index: 0,
            }),
    );
    // gprof copies the function symbols whole: those `-R`'s map renamed stay mapped (line
    // symbols never are).
    let mut mapped = vec![false; line_syms.len()];
    mapped.extend(
        base.symtab
            .syms
            .iter()
            .filter(|s| s.end_addr == 0 || s.addr <= s.end_addr)
            .map(|s| s.mapped),
    );
    // The function table's call graph is not cloned: `a` gets its own below.
    base.cg = CallGraph::new(&SymTab::default());
    let mut a = base.clone();
    a.symtab = SymTab::finalize_favors(&merged, &mapped, hi, &mut a.trace);
    // Symbols of the function table keep the end address of that table (symtab_finalize only
    // fills in end addresses that are still 0); both tables are sorted by address, one symbol
    // each.
    let old = &base.symtab.syms;
    let mut k = 0usize;
    for s in &mut a.symtab.syms {
        while old.get(k).is_some_and(|o| o.addr < s.addr) {
            k += 1;
        }
        // Any symbol of the function table (`etext`, not a function, too); a line symbol
        // has another name or is not a function.
        let from_functions = |o: &&super::symtab::Sym<'_>| {
            o.addr == s.addr && (s.is_func || (o.name == s.name && !o.is_func))
        };
        if let Some(o) = old.get(k).filter(from_functions) {
            s.end_addr = o.end_addr;
        }
    }
    // gprof's table also had the symbols dropped for an empty range.
    let removed = line_syms.len() + base.symtab.len() - a.symtab.len();
    let mut all: Vec<u64> = line_syms.iter().map(|l| l.addr).collect();
    all.extend(base.symtab.syms.iter().map(|s| s.addr));
    let kept = a.symtab.len();
    a.symtab.after_last = (kept < all.len()).then(|| *all.select_nth_unstable(kept).1);
    // Freed before the call graph and the gmon files take memory: theirs can be reused then
    // (fresh memory costs a page fault and a cleared page, a large share of -l's time).
    drop((merged, mapped, all));
    a.symtab.trace_table(removed, &mut a.trace);
    a.excluded = a
        .symtab
        .syms
        .iter()
        .map(|s| DEFAULT_EXCLUDED.iter().any(|n| n.as_bytes() == s.name))
        .collect();
    if req.options.static_calls {
        a.static_text = super::text_bytes(data);
    }
    a.cg = CallGraph::new(&a.symtab);
    // Every symbol, line or function, gets the file and line BFD gives at its address.
    let mut at_sym = src;
    a.lines = Some(LineLocations {
        files: (0..lines.files.len() as u32)
            .map(|k| {
                let path = lines.file_bytes(k);
                match req.options.print_path {
                    true => path.to_vec(),
                    false => super::base_name(path).to_vec(),
                }
            })
            .collect(),
        at: a
            .symtab
            .syms
            .iter()
            .map(|s| at_sym.at(s.addr).map(|(span, _)| (span.file, span.line)))
            .collect(),
        text_map: Default::default(),
        text: (lo, hi),
    });
    // The specs' tables, with every symbol's file and line if a spec names one: gprof creates
    // the files of the function symbols first, then those of the line symbols.
    let src = match super::symspec::traced_needs_source(a.specs, a.trace.level) {
        true => {
            let mut src = base.function_source_info(data);
            for l in &line_syms {
                src.intern(lines.files[l.file as usize].as_bytes());
            }
            let at = a.lines.as_ref().map_or(&[][..], |l| &l.at[..]);
            src.at = at
                .iter()
                .map(|f| {
                    f.map(|(file, line)| (src.intern(lines.files[file as usize].as_bytes()), line))
                })
                .collect();
            Some(src)
        }
        false => None,
    };
    a.select = Selection::new(&a.symtab, &a.excluded, a.specs, src.as_ref());
    a.trace_sym_id_parse(src.as_ref());
    drop((src, line_syms));
    if let Some(l) = a.lines.as_mut() {
        (l.text_map, l.text) = (lines, (lo, hi));
    }
    read_and_print(a, data, gmons, req, out, sink)
}

/// The rest of gprof's run once the symbol table is built: read the gmon files `gmons` in
/// order into `a`, write `-s`'s gmon.sum, assemble the call graph and print the report.
fn read_and_print<B: std::ops::Deref<Target = [u8]>>(
    mut a: Analysis<'_>,
    data: &[u8],
    gmons: impl IntoIterator<Item = Result<(String, B)>>,
    req: Request,
    out: &mut Vec<u8>,
    sink: &mut dyn std::io::Write,
) -> Result<Vec<String>> {
    let mut last = String::new();
    for gmon in gmons {
        // -i's lines of the files read before a failing one are on gprof's stdout.
        let read = gmon.and_then(|(name, bytes)| a.read_gmon(&name, &bytes).map(|()| name));
        match read {
            Ok(name) => last = name,
            Err(e) => {
                // Under -d, the traces so far (with -i's lines among them).
                if a.trace.level != 0 {
                    a.take_traces(req.sections.file_info, out);
                } else if req.sections.file_info {
                    super::cg_print::print_file_info(&a, out);
                }
                return Err(e);
            }
        }
    }
    if req.sum {
        super::sum::write(std::path::Path::new("gmon.sum"), &super::sum::bytes(&a)?)?;
        super::sum::trace_writing(&mut a);
    }
    a.finish();
    a.take_traces(req.sections.file_info, out);
    super::report::print_report(&a, req.sections, req.graph, &last, data, out, sink)
}

/// `core_create_line_syms`' traces (`-d` with `AOUTDEBUG`, `LOOKUPDEBUG`): its two passes over
/// every byte of `.text` (`lo..hi`), each asking `get_src_info`, the second also creating the
/// line symbols `line_syms` (after a `sym_lookup` in the function table when the file or
/// function changes).
fn trace_line_passes(
    a: &mut Analysis<'_>,
    image: &ElfImage<'_>,
    (lo, hi): (u64, u64),
    src: &SrcInfo<'_, '_, '_>,
    files: &[String],
    line_syms: &[LineSym],
    names: &[&[u8]],
) {
    let find = match image.symtab.as_ref() {
        Some(t) => profil_symbols::gprof::FindFunction::new(image, t),
        None => return,
    };
    let src_info = a.trace.on(debug::AOUTDEBUG);
    for pass in 0..2 {
        let mut at = src.clone();
        let mut k = 0usize;
        for addr in lo..hi {
            if src_info {
                let found = at.at(addr);
                let (file, func) = find.at(addr);
                let answer = found.as_ref().map(|(span, source)| {
                    let name = match source {
                        NameSource::Dwarf(_, n) | NameSource::Elf(_, n) => *n,
                    };
                    ((files[span.file as usize].as_bytes(), span.line), name)
                });
                profil_symbols::gprof::src_info_trace(
                    addr,
                    answer.map(|a| a.0),
                    file,
                    answer.map(|a| a.1).or(func),
                    &mut a.trace.out,
                );
            }
            if pass == 0 || line_syms.get(k).is_none_or(|l| l.addr != addr) {
                continue;
            }
            let l = &line_syms[k];
            let same_function = k > 0 && {
                let p = &line_syms[k - 1];
                p.file == l.file && p.name == l.name
            };
            if !same_function {
                let _ = a.symtab.lookup_traced(addr, &mut a.trace);
            }
            if src_info {
                a.trace.fmt(format_args!("[core_create_line_syms] {k} "));
                a.trace.put(names[l.name as usize]);
                a.trace.fmt(format_args!(" 0x{addr:x}\n"));
            }
            k += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merged_cuts_are_the_sorted_union() {
        let mut rng = super::super::TestRng(0x2545_f491_4f6c_dd1du64);
        for _ in 0..300 {
            let mut a: Vec<u64> = (0..rng.below(40)).map(|_| rng.below(60)).collect();
            let mut b: Vec<u64> = (0..rng.below(40)).map(|_| rng.below(60)).collect();
            a.sort_unstable();
            b.sort_unstable();
            let mut want: Vec<u64> = a.iter().chain(&b).copied().collect();
            want.sort_unstable();
            want.dedup();
            assert_eq!(merge_ascending(a.into_iter(), b.into_iter()), want);
        }
    }
}
