//! gprof's `-d[N]` / `--debug[=N]`: the trace lines Debian's gprof 2.40 (built with `DEBUG`)
//! prints on stdout, interleaved with the report.
//!
//! `-dN` ORs `N` (C's `atoi`) and `ANYDEBUG` into the level; a bare `-d` sets every bit. Each
//! `-d` prints `[main] debug-level=0x…` when it is parsed. The bits below say which traces
//! print; the points that print them are the same as gprof's, in the same order:
//!
//! * `AOUTDEBUG`: `core_sym_class`, `core_create_function_syms` and `get_src_info` while the
//!   symbol table is built ([`profil_symbols::gprof::class_traces`]: `get_src_info` answers
//!   from the DWARF line table where it has the address, else with the symbol table's
//!   nearest function and file symbol), under `-l` `core_create_line_syms`' two passes over
//!   every byte of `.text` ([`super::lines`]), and with `IDDEBUG` `symtab_finalize`'s
//!   duplicates and table ([`super::symtab::SymTab::finalize_traced`]).
//! * `IDDEBUG`: `sym_id_parse` ([`super::symspec::SpecTables`]): `parse_id` of every spec
//!   (the command line's, newest first, after the default exclusions; a file by the whole
//!   path gprof found it by, else `<non-existent-file>`), the arcs of the `FROM/TO` specs
//!   (each end with its file), and `symtab_finalize`'s traces of each of the twelve tables
//!   (a static program's `mcount` & co. fill the EXCL tables).
//! * `SAMPLEDEBUG`: every histogram bin as it is read, every arc record, and
//!   `assign_samples`' bins and credits ([`super::hist`]); under `-s` each arc as the sum is
//!   written (`[cg_write_arcs]`, `[dumpsum]` in a BSD sum: [`super::sum::trace_writing`]).
//! * `BBDEBUG`: under `-l` each basic block read, with the symbol holding it and its line.
//! * `LOOKUPDEBUG`: `sym_lookup`'s probes (arcs' ends, `-l`'s line symbols, `-c`'s targets,
//!   and the look-ups in the spec tables: `cg_tally`'s arc filter, each credit of
//!   `assign_samples`, `propagate_flags`, and in the report the flat profile's rows, the
//!   execution counts' and the annotations' symbols), `arc_lookup`'s walks (also of the
//!   arc tables' entries).
//! * `TALLYDEBUG`: `cg_tally` and `arc_add`.
//! * `DFNDEBUG`, `CYCLEDEBUG`, `PROPDEBUG`: the depth-first numbering, cycles, topological
//!   listing, flag and time propagation ([`super::cg`]), only when a gmon file had arcs (as
//!   gprof assembles the call graph only then). `DFNDEBUG` and `PROPDEBUG` also make every
//!   name gprof prints (`print_name_only`) end in `{top_order} ` and `fract% `, in the report
//!   too (`{0}    0% ` without arcs); the widths gprof computes from a name's length leave
//!   them out.
//! * `TIMEDEBUG`: `cmp_arc`'s two arcs at each comparison of the call graph's insertion sorts.
//! * `CALLDEBUG`: `-c`'s scan for direct calls (`[findcall]`).
//! * `SRCDEBUG`: `-A`'s search for each source file.
//!
//! Nothing is formatted at level 0: every trace point tests its bit first, and the hot loops
//! keep their untraced versions; the spec tables themselves are built only under `-d`
//! (otherwise [`super::symspec::Selection`]'s flags answer).
//!
//! Differences, all of them where gprof prints what is in its memory rather than in the
//! input: `-c` scans a symbol outside `.text` (`_init`, in `.init`) in the heap memory before
//! gprof's copy of `.text`, and the last symbol, when `symtab_finalize` removed no duplicate,
//! up to an address read past gprof's table; gprof's `[findcall]` lines there (and arcs, if
//! the memory happens to look like a call to a function) depend on its heap. We find no call
//! outside `.text` and end the last symbol's scan at the end of the histogram.
//!
//! BSD-format gmon files print `gmon_out_read`'s own traces: the header (`lowpc`, `highpc`,
//! `ncnt` as read; `samp_bytes`, `hist_num_bins`) and each arc (`[gmon_out_read] frompc …`
//! where a GNU file has `[cg_read_rec]`). A file of the wrong format for `-O` fails before its
//! traces, except a GNU file under `-Ob` that comes first: gprof reads its start as an old
//! BSD header and traces it; its count is then negative and gprof allocates and clears
//! 16 GiB of bins before failing. We print those two lines, as gprof does when that
//! allocation succeeds; within an address-space limit gprof dies in it without flushing its
//! last traces.
//!
//! `-S FILE` prints `external-symbol-table: FILE` as gprof parses the option (if `AOUTDEBUG`
//! is on by then: the CLI's `debug_banners`), and no symbol's class or source traces.
//!
//! Under `-R` `core_create_function_syms` traces a function the map renames under its object
//! file's name and leaves out one the map drops ([`super::file_order`]: a further line of a
//! run of lines naming one file, whose flag gprof reads uninitialised, so that which of them
//! gprof traces depends on its heap; we drop them all, as in the report).
//!
//! Options gprof fails on while parsing (`-r` with `-R`, an unknown `-O` format or
//! demangling style) print the banners of the `-d`s before them first. When a gmon file fails to read, the traces of the
//! files before it are printed, but not gprof's of the part of a record it read before the
//! end of a truncated file; a missing file fails before any trace (gprof prints those of
//! the symbol table first).

use std::io::Write;

/// Any debugging (set by every `-d`).
pub const ANYDEBUG: u32 = 1 << 0;
/// Depth-first numbering (`cg_dfn`), and `{top_order}` after names.
pub const DFNDEBUG: u32 = 1 << 1;
/// Cycles (`cycle_link`).
pub const CYCLEDEBUG: u32 = 1 << 2;
/// Arcs.
pub const ARCDEBUG: u32 = 1 << 3;
/// `cg_tally`, `arc_add`.
pub const TALLYDEBUG: u32 = 1 << 4;
/// `cmp_arc`.
pub const TIMEDEBUG: u32 = 1 << 5;
/// Histogram and arc records, sample assignment.
pub const SAMPLEDEBUG: u32 = 1 << 6;
/// The symbol table from the executable.
pub const AOUTDEBUG: u32 = 1 << 7;
/// `-c`'s call scan.
pub const CALLDEBUG: u32 = 1 << 8;
/// `sym_lookup`, `arc_lookup`.
pub const LOOKUPDEBUG: u32 = 1 << 9;
/// Propagation, and `fract%` after names.
pub const PROPDEBUG: u32 = 1 << 10;
/// Basic blocks.
pub const BBDEBUG: u32 = 1 << 11;
/// Symbol specs and `symtab_finalize`.
pub const IDDEBUG: u32 = 1 << 12;
/// Source files.
pub const SRCDEBUG: u32 = 1 << 13;

/// The level after the `-d` options `args` (`None`: bare `-d`), in order.
pub fn level_of(args: &[Option<i32>]) -> u32 {
    args.iter().fold(0u32, |level, a| match a {
        Some(n) => level | (*n as u32) | ANYDEBUG,
        None => !0,
    })
}

/// The trace sink: the level and the buffer the lines go to (the report's stdout, so the
/// order of traces and report lines is gprof's).
#[derive(Debug, Clone, Default)]
pub struct Trace {
    /// gprof's `debug_level`.
    pub level: u32,
    /// Trace lines written so far (moved in front of the report).
    pub out: Vec<u8>,
    /// Under a bit that prints names: each symbol's printed name (demangled, as
    /// `print_name_only` prints it before its debugging decorations).
    pub names: Vec<Vec<u8>>,
    /// Where in `out` each gmon file's reading ended (gprof prints `-i`'s lines there).
    pub file_ends: Vec<usize>,
    /// No gmon file had arcs, so gprof never assembled the call graph: names print with
    /// the values `sym_init` left (`{0}    0% `).
    pub unassembled: bool,
}

impl Trace {
    /// A sink at `level`.
    pub fn new(level: u32) -> Self {
        Trace {
            level,
            out: Vec::new(),
            names: Vec::new(),
            file_ends: Vec::new(),
            unassembled: false,
        }
    }

    /// Whether any of `bits` is on.
    #[inline]
    pub fn on(&self, bits: u32) -> bool {
        self.level & bits != 0
    }

    /// Append `text`.
    pub fn put(&mut self, text: &[u8]) {
        self.out.extend_from_slice(text);
    }

    /// Append formatted text.
    pub fn fmt(&mut self, args: std::fmt::Arguments<'_>) {
        let _ = self.out.write_fmt(args);
    }
}

/// `print_name_only`'s decorations under `level`: `{top_order} ` with `DFNDEBUG`, then
/// `%4.0f%% ` of `100 * fract` with `PROPDEBUG`.
pub fn push_decorations(level: u32, top_order: i64, fract: f64, out: &mut Vec<u8>) {
    if level & DFNDEBUG != 0 {
        let _ = write!(out, "{{{top_order}}} ");
    }
    if level & PROPDEBUG != 0 {
        out.extend_from_slice(super::printf::f(4, 0, 100.0 * fract).as_bytes());
        out.extend_from_slice(b"% ");
    }
}

/// C's `%f`.
pub fn f6(x: f64) -> String {
    super::printf::f(0, 6, x)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `-dN` ORs `N` and `ANYDEBUG`; a bare `-d` sets every bit, and later levels still OR in.
    #[test]
    fn levels_combine_as_gprof_parses_them() {
        assert_eq!(level_of(&[]), 0);
        assert_eq!(level_of(&[Some(0)]), ANYDEBUG);
        assert_eq!(level_of(&[Some(6)]), 7);
        assert_eq!(level_of(&[Some(2), Some(1024)]), 1027);
        assert_eq!(level_of(&[Some(4), None]), !0);
        assert_eq!(level_of(&[None, Some(2)]), !0);
        assert_eq!(level_of(&[Some(-1)]), !0);
    }

    #[test]
    fn decorations_are_print_name_onlys() {
        let mut out = Vec::new();
        push_decorations(DFNDEBUG | PROPDEBUG, 9, 1.0, &mut out);
        assert_eq!(out, b"{9}  100% ");
        out.clear();
        push_decorations(PROPDEBUG, -1, 0.0, &mut out);
        assert_eq!(out, b"   0% ");
        out.clear();
        push_decorations(ANYDEBUG, 3, 0.5, &mut out);
        assert!(out.is_empty());
    }
}
