//! gprof's symbol specifications (`sym_ids`): the `NAME` of `-pNAME`, `-PNAME`, `-qNAME`,
//! `-QNAME`, `-e/-E/-f/-F/-n/-N NAME`, and the `FROM/TO` pairs of `-k` and `-q`/`-Q`, turned
//! into what each of gprof's tables selects.
//!
//! gprof keeps one table of address ranges per purpose (flat profile, time propagation, call
//! graph, arcs; each an INCL and an EXCL table) and asks "is this address in the table" (for a
//! symbol: its address). Each spec side matches symbols (`match`): by source file, line and
//! function name, each only if the side gives it (`parse_spec`):
//!
//! * `NAME` or `:NAME`: the symbols of that raw (mangled) name;
//! * `FILE.c` (a name with a `.`) or `FILE:`: every symbol whose source file is the file gprof
//!   finds by that **base name** (`source_file_lookup_name`: among the files it created, the
//!   newest, so of two `u.c` in two directories the one met last; a name with a directory
//!   never matches, and matches nothing then);
//! * `LINE` (a leading digit) or `FILE:LINE`: the symbols at that line (`atoi`; line 0 is
//!   "any line", so `-p0` is every symbol); `FILE:FUNCTION` both.
//!
//! A symbol's file and line are BFD's answer at its address (`get_src_info`, as gprof sets them
//! while building its symbol table; under `-l` line symbols have theirs); gprof creates its
//! files in the order it meets them, function symbols in `.symtab` order first, then line
//! symbols by address ([`SourceInfo`]). They are computed only when a spec names a file or a
//! line ([`needs_source`]): names alone cost nothing per symbol. With `-S` no symbol has a
//! file or line.
//!
//! Each run of consecutive matched symbols becomes one range (`extend_match`: from the first
//! one's address to the last one's end), the table is sorted with same-address entries
//! merged, and lookups use gprof's binary search (`sym_lookup`), which checks only the entry
//! starting last at or below the address. Without `-l` symbols do not overlap and that is the
//! same as a flag per matched symbol; under `-l` a function symbol's range covers its line
//! symbols, so `-l -qm.c:6` (the line of `main`'s function symbol) selects all of `main`'s
//! lines. The arc tables keep, per range, the ranges of the spec's right side: an arc is in
//! the table when a range holds the caller's address and one of its callee ranges holds the
//! whole callee. The default exclusions (`mcount` & co.) are in every EXCL table (as flags:
//! they match only themselves). A table counts as empty when no symbol matched, whatever
//! specs were given (so `-pnosuch` and `-pnosuch.c` are `-p`; so is `-pdata_start`, whose
//! range ends below its start and is dropped).
//!
//! Under `-d` the tables themselves are also built, entry by entry as gprof builds them
//! ([`SpecTables`]), for `sym_id_parse`'s traces and those of every look-up in them (which
//! then answer `cg_tally`'s arc filter and `propagate_flags`; the same answers as the flags).

use std::collections::HashMap;

use super::debug::{Trace, AOUTDEBUG, IDDEBUG, LOOKUPDEBUG, TALLYDEBUG};
use super::symtab::{Sym, SymTab};

/// gprof's tables that `--gprof` reproduces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Table {
    /// `-qNAME`, `-f`, `-F`: only these (and what they call) in the call graph.
    InclGraph,
    /// `-QNAME`, `-e`, `-E`: not in the call graph.
    ExclGraph,
    /// `-qFROM/TO`: only these arcs.
    InclArcs,
    /// `-QFROM/TO`, `-k FROM/TO`: not these arcs.
    ExclArcs,
    /// `-pNAME`: only these in the flat profile (and its total).
    InclFlat,
    /// `-PNAME`: not in the flat profile (nor its total).
    ExclFlat,
    /// `-n`, `-F`: only these propagate time.
    InclTime,
    /// `-N`, `-E`: these do not propagate time.
    ExclTime,
    /// `-CNAME`: only these in the execution counts.
    InclExec,
    /// `-ZNAME`: not in the execution counts.
    ExclExec,
    /// `-ANAME`: only these in the annotated source.
    InclAnno,
    /// `-JNAME`: not in the annotated source.
    ExclAnno,
}

/// One spec for one table, as given on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SymSpec {
    /// Which table.
    pub table: Table,
    /// The spec: a function name, or `FROM/TO` for the arc tables.
    pub spec: &'static str,
}

/// What one side of a spec asks for (`parse_spec`): a source file (by base name), a line
/// (0: any) and a function name, each optional.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Pattern<'s> {
    file: Option<&'s str>,
    line: i32,
    name: Option<&'s str>,
}

/// C's `atoi` on a string that starts with a digit: `strtol`'s value (saturated) cast to
/// `int`.
fn atoi(s: &str) -> i32 {
    let n = s.bytes().take_while(u8::is_ascii_digit).fold(0i64, |n, d| {
        n.saturating_mul(10).saturating_add(i64::from(d - b'0'))
    });
    n as i32
}

/// `parse_spec`: with a colon, the part before the last one (if any) is a file and the part
/// after it a line (starting with a digit) or a function name; without one, a name with a
/// `.` is a file, one starting with a digit a line, anything else a function name.
fn parse(side: &str) -> Pattern<'_> {
    let mut p = Pattern {
        file: None,
        line: 0,
        name: None,
    };
    let rest = match side.rfind(':') {
        Some(i) => {
            if i > 0 {
                p.file = Some(&side[..i]);
            }
            &side[i + 1..]
        }
        None if side.contains('.') => {
            p.file = Some(side);
            ""
        }
        None => side,
    };
    if rest.starts_with(|c: char| c.is_ascii_digit()) {
        p.line = atoi(rest);
    } else if !rest.is_empty() {
        p.name = Some(rest);
    }
    p
}

/// Whether the specs need each symbol's source file and line (a side names a file or a
/// line): only then is [`SourceInfo`] computed.
pub fn needs_source(specs: &[SymSpec]) -> bool {
    specs.iter().any(|s| {
        s.spec.split('/').any(|side| {
            let p = parse(side);
            p.file.is_some() || p.line != 0
        })
    })
}

/// The base names of the files the specs name, when those are all the symbols' source
/// information can decide ([`SourceInfo::lookup_name`] finds a file by its base name, and a
/// name with a `/` finds none); `None` when a side names a line without a file (every
/// symbol's line then counts).
pub fn files_named(specs: &[SymSpec]) -> Option<Vec<&str>> {
    let mut names = Vec::new();
    for side in specs.iter().flat_map(|s| s.spec.split('/')) {
        let p = parse(side);
        match p.file {
            Some(f) => names.push(f),
            None if p.line != 0 => return None,
            None => {}
        }
    }
    Some(names)
}

/// [`needs_source`], or under `-d` (`debug`) a `FROM/TO` spec (`sym_id_parse`'s traces of
/// its arcs name the ends' files).
pub fn traced_needs_source(specs: &[SymSpec], debug: u32) -> bool {
    needs_source(specs) || (debug != 0 && specs.iter().any(|s| s.spec.contains('/')))
}

/// The source file and line of every symbol (`get_src_info` at its address, as gprof sets
/// them when it builds its symbol table), for the specs that name a file or a line.
#[derive(Debug, Clone, Default)]
pub struct SourceInfo {
    /// gprof's source files (whole paths) in the order gprof created them: by first
    /// appearance among the function symbols in `.symtab` order, then (under `-l`) among the
    /// line symbols in address order.
    pub paths: Vec<Vec<u8>>,
    /// Per symbol of the table: (index into `paths`, line); `None` without an answer.
    pub at: Vec<Option<(u32, u64)>>,
    /// Index of each path in `paths`.
    index: HashMap<Vec<u8>, u32>,
}

impl SourceInfo {
    /// `source_file_lookup_path`: the number of the file `path`, created if new.
    pub fn intern(&mut self, path: &[u8]) -> u32 {
        if let Some(&k) = self.index.get(path) {
            return k;
        }
        let k = self.paths.len() as u32;
        self.paths.push(path.to_vec());
        self.index.insert(path.to_vec(), k);
        k
    }

    /// `source_file_lookup_name`: the newest file whose base name is `name` (a name with a
    /// `/` never matches a base name). `None`: gprof's `<non-existent-file>`.
    fn lookup_name(&self, name: &str) -> Option<u32> {
        self.paths
            .iter()
            .rposition(|p| super::base_name(p) == name.as_bytes())
            .map(|k| k as u32)
    }
}

/// One flag per symbol: matched by the spec side `side` (`match`: the file, the line, then
/// the name, each only if the side gives it). Without `src` no symbol has a file or line.
fn matches(symtab: &SymTab<'_>, src: Option<&SourceInfo>, side: &str) -> Vec<bool> {
    let p = parse(side);
    // Some(None): a file no symbol belongs to.
    let file = p.file.map(|f| src.and_then(|s| s.lookup_name(f)));
    let at = |i: usize| src.and_then(|s| s.at.get(i).copied().flatten());
    symtab
        .syms
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let here = || at(i);
            let file_ok = match file {
                None => true,
                Some(None) => false,
                Some(Some(k)) => here().is_some_and(|(f, _)| f == k),
            };
            let line_ok = p.line == 0 || here().is_some_and(|(_, l)| l as i32 == p.line);
            file_ok && line_ok && p.name.is_none_or(|n| s.name == n.as_bytes())
        })
        .collect()
}

/// An INCL/EXCL pair of tables as flags per symbol. An empty vector is a table without
/// any symbol (no memory per symbol for the tables no option filled).
#[derive(Debug, Clone, Default)]
pub struct Pair {
    /// In the INCL table.
    pub incl: Vec<bool>,
    /// Whether the INCL table has any symbol.
    pub incl_any: bool,
    /// In the EXCL table (the default exclusions included).
    pub excl: Vec<bool>,
}

impl Pair {
    fn incl(&self, i: usize) -> bool {
        self.incl.get(i).copied().unwrap_or(false)
    }

    fn excl(&self, i: usize) -> bool {
        self.excl.get(i).copied().unwrap_or(false)
    }

    /// `sym_lookup(INCL) || (INCL empty && !sym_lookup(EXCL))`: passes the flat profile's
    /// filter; may switch on a call-graph print flag or time propagation.
    pub fn on(&self, i: usize) -> bool {
        self.incl(i) || (!self.incl_any && !self.excl(i))
    }

    /// `!sym_lookup(INCL) && sym_lookup(EXCL)`: switches off an inherited print flag or time
    /// propagation (INCL wins over EXCL).
    pub fn off(&self, i: usize) -> bool {
        !self.incl(i) && self.excl(i)
    }
}

/// One entry of a spec table: the address range of a run of consecutive symbols one spec
/// side matched (`extend_match`: from the first one's address to the last one's end), and for
/// the arc tables the callee ranges of the spec's right side.
#[derive(Debug, Clone, Default)]
struct Entry {
    addr: u64,
    end: u64,
    children: std::rc::Rc<Vec<(u64, u64)>>,
}

/// `extend_match` over the table: one range per run of consecutive matched symbols.
fn runs(symtab: &SymTab<'_>, matched: &[bool]) -> Vec<(u64, u64)> {
    let mut out: Vec<(u64, u64)> = Vec::new();
    let mut prev = false;
    for (s, &m) in symtab.syms.iter().zip(matched) {
        if m {
            match out.last_mut() {
                Some(last) if prev => last.1 = s.end_addr,
                _ => out.push((s.addr, s.end_addr)),
            }
        }
        prev = m;
    }
    out
}

/// `symtab_finalize` on a spec table: entries sorted by address (a stable sort); of entries
/// at the same address (runs of several specs starting at the same symbol) the first stays,
/// and an entry whose range is empty (it ends below its start) goes.
/// `entries` come as gprof adds them: symbol by symbol, the specs newest first.
fn finalize(mut entries: Vec<(usize, usize, Entry)>) -> Vec<Entry> {
    entries.sort_by_key(|(first_sym, spec_rank, _)| (*first_sym, *spec_rank));
    let mut out: Vec<Entry> = Vec::with_capacity(entries.len());
    for (_, _, e) in entries {
        // Only an entry with a range is kept (`data_start`'s ends below its start).
        if out.last().is_some_and(|l| l.addr == e.addr) || (e.end != 0 && e.end < e.addr) {
            continue;
        }
        out.push(e);
    }
    out
}

/// `sym_lookup` on a spec table: gprof's binary search, which finds the entry with the
/// highest address at or below `address` (as the search falls) and then checks only that
/// entry's end, so a range hidden under a later-starting one does not answer.
fn lookup(t: &[Entry], address: u64) -> bool {
    if t.is_empty() {
        return false;
    }
    let (mut low, mut high) = (0usize, t.len() - 1);
    while low != high {
        let mid = (low + high) >> 1;
        if t[mid].addr <= address && t[mid + 1].addr > address {
            return address <= t[mid].end;
        }
        if t[mid].addr > address {
            high = mid;
        } else {
            low = mid + 1;
        }
    }
    t[low].addr <= address && address <= t[low].end
}

/// What every table selects, per symbol of one symbol table.
#[derive(Debug, Clone, Default)]
pub struct Selection {
    /// `INCL_FLAT`/`EXCL_FLAT`.
    pub flat: Pair,
    /// `INCL_TIME`/`EXCL_TIME`.
    pub time: Pair,
    /// `INCL_GRAPH`/`EXCL_GRAPH`.
    pub graph: Pair,
    /// `INCL_EXEC`/`EXCL_EXEC` (without the default exclusions).
    pub exec: Pair,
    /// `INCL_ANNO`/`EXCL_ANNO` (without the default exclusions).
    pub anno: Pair,
    /// `INCL_ARCS`: caller ranges with their callee ranges.
    incl_arcs: Vec<Entry>,
    /// `EXCL_ARCS`: caller ranges with their callee ranges.
    excl_arcs: Vec<Entry>,
}

impl Selection {
    /// The tables for `symtab`: `default_excluded` marks the default exclusions, `specs` are
    /// the command line's, `src` the symbols' files and lines (when [`needs_source`]).
    pub fn new(
        symtab: &SymTab<'_>,
        default_excluded: &[bool],
        specs: &[SymSpec],
        src: Option<&SourceInfo>,
    ) -> Selection {
        let n = symtab.len();
        // The entries of one table: for each spec of it, the runs of its left side (with the
        // runs of its right side as callees), tagged with the run's first symbol and the
        // spec's rank in gprof's list (newest first), the order gprof adds them in.
        let table = |t: Table| -> Vec<Entry> {
            let mut entries = Vec::new();
            for (rank, spec) in specs.iter().rev().enumerate().filter(|(_, s)| s.table == t) {
                let (left, right) = match spec.spec.split_once('/') {
                    Some((l, r)) => (l, Some(r)),
                    None => (spec.spec, None),
                };
                let children = std::rc::Rc::new(
                    right.map_or_else(Vec::new, |r| runs(symtab, &matches(symtab, src, r))),
                );
                let left = matches(symtab, src, left);
                let first_of_run = |addr: u64| symtab.syms.partition_point(|s| s.addr < addr);
                for (addr, end) in runs(symtab, &left) {
                    let e = Entry {
                        addr,
                        end,
                        children: children.clone(),
                    };
                    entries.push((first_of_run(addr), rank, e));
                }
            }
            finalize(entries)
        };
        let pair = |incl: Table, excl: Table| {
            let flags = |t: &[Entry]| -> Vec<bool> {
                match t.is_empty() {
                    true => Vec::new(),
                    false => symtab.syms.iter().map(|s| lookup(t, s.addr)).collect(),
                }
            };
            let (incl_table, excl_table) = (table(incl), table(excl));
            let mut excl_flags = flags(&excl_table);
            // The default exclusions (in gprof, specs of their own) only match themselves.
            if !matches!(incl, Table::InclExec | Table::InclAnno) {
                excl_flags.resize(n, false);
                for (f, &d) in excl_flags.iter_mut().zip(default_excluded) {
                    *f |= d;
                }
            }
            Pair {
                incl: flags(&incl_table),
                incl_any: !incl_table.is_empty(),
                excl: excl_flags,
            }
        };
        Selection {
            flat: pair(Table::InclFlat, Table::ExclFlat),
            time: pair(Table::InclTime, Table::ExclTime),
            graph: pair(Table::InclGraph, Table::ExclGraph),
            exec: pair(Table::InclExec, Table::ExclExec),
            anno: pair(Table::InclAnno, Table::ExclAnno),
            incl_arcs: table(Table::InclArcs),
            excl_arcs: table(Table::ExclArcs),
        }
    }

    /// `cg_tally`'s arc filter for the arc from symbol `parent` to symbol `child` of
    /// `symtab`: in `INCL_ARCS`, or `INCL_ARCS` is empty and it is not in `EXCL_ARCS`.
    pub fn arc_allowed(&self, symtab: &SymTab<'_>, parent: usize, child: usize) -> bool {
        let (from, to) = (&symtab.syms[parent], &symtab.syms[child]);
        // `sym_id_arc_is_present`: a caller range holding the caller's address, with a
        // callee range holding the whole callee (`arc_lookup`).
        let present = |t: &[Entry]| {
            t.iter().any(|e| {
                e.addr <= from.addr
                    && from.addr <= e.end
                    && e.children
                        .iter()
                        .any(|&(a, z)| to.addr >= a && to.end_addr <= z)
            })
        };
        present(&self.incl_arcs) || (self.incl_arcs.is_empty() && !present(&self.excl_arcs))
    }

    /// Whether any arc table has a spec (the filter then runs for every arc).
    pub fn filters_arcs(&self) -> bool {
        !self.incl_arcs.is_empty() || !self.excl_arcs.is_empty()
    }
}

/// gprof's table names, in its order (`table_name`), as [`Table::index`] numbers them.
pub const TABLE_NAMES: [&str; 12] = [
    "INCL_GRAPH",
    "EXCL_GRAPH",
    "INCL_ARCS",
    "EXCL_ARCS",
    "INCL_FLAT",
    "EXCL_FLAT",
    "INCL_TIME",
    "EXCL_TIME",
    "INCL_ANNO",
    "EXCL_ANNO",
    "INCL_EXEC",
    "EXCL_EXEC",
];

impl Table {
    /// gprof's number of the table (its `Table_Id`).
    pub fn index(self) -> usize {
        match self {
            Table::InclGraph => 0,
            Table::ExclGraph => 1,
            Table::InclArcs => 2,
            Table::ExclArcs => 3,
            Table::InclFlat => 4,
            Table::ExclFlat => 5,
            Table::InclTime => 6,
            Table::ExclTime => 7,
            Table::InclAnno => 8,
            Table::ExclAnno => 9,
            Table::InclExec => 10,
            Table::ExclExec => 11,
        }
    }
}

/// gprof's twelve tables themselves, as `sym_id_parse` leaves them (copies of the symbols
/// that start a run, with the run's end; the arc tables' entries with their arcs to the
/// right sides' runs). Built only under `-d` ([`SpecTables::sym_id_parse`]), for the traces
/// of their building and of every look-up in them (`sym_lookup`'s probes, `arc_lookup`'s
/// walks); the answers are [`Selection`]'s.
#[derive(Debug, Clone, Default)]
pub struct SpecTables<'data> {
    /// The tables, by [`Table::index`].
    tables: Vec<SymTab<'data>>,
    /// Per table, per entry: the arcs' children (indices into `right`), oldest first.
    children: Vec<Vec<Vec<usize>>>,
    /// `right_ids`: the runs of the right sides of `FROM/TO` specs.
    right: Vec<Sym<'data>>,
}

/// `extend_match`'s state for one spec side.
#[derive(Debug, Clone, Default)]
struct Run {
    /// The symbol matched last.
    prev: Option<usize>,
    /// The entry the current run extends.
    index: usize,
    /// The entries this side started, oldest first.
    entries: Vec<usize>,
}

impl<'data> SpecTables<'data> {
    /// `sym_id_parse` with its traces: `specs` in command-line order, then the default
    /// exclusions `defaults` (each in `EXCL_TIME`, `EXCL_GRAPH` and `EXCL_FLAT`); gprof's list
    /// is newest first. `src` gives the symbols' files and lines (`None`: no symbol has one).
    pub fn sym_id_parse(
        symtab: &SymTab<'data>,
        specs: &[SymSpec],
        defaults: &[&'static str],
        src: Option<&SourceInfo>,
        trace: &mut Trace,
    ) -> Self {
        let mut ids: Vec<(usize, &str)> = specs.iter().map(|s| (s.table.index(), s.spec)).collect();
        for &d in defaults {
            for t in [Table::ExclTime, Table::ExclGraph, Table::ExclFlat] {
                ids.push((t.index(), d));
            }
        }
        ids.reverse();
        let file_name = |f: Option<u32>| -> Vec<u8> {
            match (f, src) {
                (Some(k), Some(s)) => s.paths[k as usize].clone(),
                _ => b"<non-existent-file>".to_vec(),
            }
        };
        let sides: Vec<(&str, Option<&str>)> = ids
            .iter()
            .map(|(_, spec)| match spec.split_once('/') {
                Some((l, r)) => (l, Some(r)),
                None => (*spec, None),
            })
            .collect();
        if trace.on(IDDEBUG) {
            for (&(_, spec), &(left, right)) in ids.iter().zip(&sides) {
                trace.fmt(format_args!("[parse_id] {spec} -> "));
                for (k, side) in std::iter::once(left).chain(right).enumerate() {
                    let p = parse(side);
                    trace.put(if k == 1 { b"/" } else { b"" });
                    match p.file {
                        Some(f) => trace.put(&file_name(src.and_then(|s| s.lookup_name(f)))),
                        None => trace.put(b"*"),
                    }
                    trace.put(b":");
                    match (p.name, p.line) {
                        (Some(n), _) => trace.put(n.as_bytes()),
                        (None, 0) => trace.put(b"*"),
                        (None, l) => trace.fmt(format_args!("{l}")),
                    }
                }
                trace.put(b"\n");
            }
        }
        let mut tables: Vec<Vec<Sym<'data>>> = vec![Vec::new(); 12];
        let mut right: Vec<Sym<'data>> = Vec::new();
        let flags: Vec<(Vec<bool>, Option<Vec<bool>>)> = sides
            .iter()
            .map(|&(l, r)| {
                let m = |side| matches(symtab, src, side);
                (m(l), r.map(m))
            })
            .collect();
        let mut runs: Vec<(Run, Run)> = vec![Default::default(); ids.len()];
        let extend = |m: &mut Run, i: usize, tab: &mut Vec<Sym<'data>>| {
            let s = &symtab.syms[i];
            if m.prev.is_none_or(|p| p + 1 != i) {
                m.index = tab.len();
                m.entries.push(tab.len());
                tab.push(s.clone());
            }
            tab[m.index].end_addr = s.end_addr;
            m.prev = Some(i);
        };
        for i in 0..symtab.len() {
            for (k, (l, r)) in flags.iter().enumerate() {
                let (lrun, rrun) = &mut runs[k];
                if l[i] {
                    extend(lrun, i, &mut tables[ids[k].0]);
                }
                if r.as_ref().is_some_and(|r| r[i]) {
                    extend(rrun, i, &mut right);
                }
            }
        }
        // The arcs, with `arc_add`'s and `arc_lookup`'s traces.
        let mut children: Vec<Vec<Vec<usize>>> =
            tables.iter().map(|t| vec![Vec::new(); t.len()]).collect();
        let file_of = |s: &Sym<'_>| -> Vec<u8> {
            let k = symtab.syms.partition_point(|x| x.addr < s.addr);
            match src.and_then(|src| src.at.get(k).copied().flatten()) {
                Some((f, _)) => file_name(Some(f)),
                None => b"*".to_vec(),
            }
        };
        for (k, &(t, _)) in ids.iter().enumerate() {
            if sides[k].1.is_none() {
                continue;
            }
            let (lrun, rrun) = &runs[k];
            for &l in lrun.entries.iter().rev() {
                for &r in rrun.entries.iter().rev() {
                    let (ls, rs) = (&tables[t][l], &right[r]);
                    if trace.on(IDDEBUG) {
                        trace.put(b"[sym_id_parse]: arc ");
                        for (n, s) in [ls, rs].into_iter().enumerate() {
                            trace.put(if n == 1 { b" -> " } else { b"" });
                            trace.put(&file_of(s));
                            trace.put(b":");
                            trace.put(s.name);
                            trace.fmt(format_args!("({:x}-{:x})", s.addr, s.end_addr));
                        }
                        trace.fmt(format_args!(" to {}\n", TABLE_NAMES[t]));
                    }
                    if trace.on(TALLYDEBUG) {
                        trace.put(b"[arc_add] 0 arcs from ");
                        trace.put(ls.name);
                        trace.put(b" to ");
                        trace.put(rs.name);
                        trace.put(b"\n");
                    }
                    let hit = arc_lookup(ls, rs, &children[t][l], &right, trace);
                    if hit {
                        if trace.on(TALLYDEBUG) {
                            trace.put(b"[tally] hit 0 += 0\n");
                        }
                    } else {
                        children[t][l].push(r);
                    }
                }
            }
        }
        let mut out = SpecTables {
            tables: Vec::with_capacity(12),
            children: Vec::with_capacity(12),
            right,
        };
        for (t, (entries, kids)) in tables.into_iter().zip(children).enumerate() {
            if trace.on(IDDEBUG) {
                trace.fmt(format_args!("[sym_id_parse] syms[{}]:\n", TABLE_NAMES[t]));
            }
            let (table, kids) = finalize_traced(entries, kids, trace);
            out.tables.push(table);
            out.children.push(kids);
        }
        out
    }

    /// Whether table `t` has no entry (gprof's `len == 0`).
    pub fn is_empty(&self, t: Table) -> bool {
        self.tables[t.index()].is_empty()
    }

    /// `sym_lookup` in table `t` (its `LOOKUPDEBUG` trace when found).
    pub fn lookup(&self, t: Table, addr: u64, trace: &mut Trace) -> bool {
        self.tables[t.index()].lookup_traced(addr, trace).is_some()
    }

    /// `sym_lookup (INCL) || (INCL empty && !sym_lookup (EXCL))`, traced: the flat
    /// profile's, the execution counts' and the annotations' filter, and what may switch a
    /// print flag or time propagation on.
    pub fn on(&self, incl: Table, excl: Table, addr: u64, trace: &mut Trace) -> bool {
        self.lookup(incl, addr, trace) || (self.is_empty(incl) && !self.lookup(excl, addr, trace))
    }

    /// `!sym_lookup (INCL) && sym_lookup (EXCL)`, traced: what switches them off.
    pub fn off(&self, incl: Table, excl: Table, addr: u64, trace: &mut Trace) -> bool {
        !self.lookup(incl, addr, trace) && self.lookup(excl, addr, trace)
    }

    /// `cg_tally`'s arc filter, traced: `sym_id_arc_is_present` in `INCL_ARCS`, or when that
    /// has no entry, not in `EXCL_ARCS`.
    pub fn arc_allowed(&self, from: &Sym<'_>, to: &Sym<'_>, trace: &mut Trace) -> bool {
        let (incl, excl) = (Table::InclArcs, Table::ExclArcs);
        match self.is_empty(incl) {
            true => !self.arc_is_present(excl, from, to, trace),
            false => self.arc_is_present(incl, from, to, trace),
        }
    }

    /// `sym_id_arc_is_present`: an entry holding `from`'s address with an arc covering `to`.
    fn arc_is_present(&self, t: Table, from: &Sym<'_>, to: &Sym<'_>, trace: &mut Trace) -> bool {
        let t = t.index();
        self.tables[t].syms.iter().enumerate().any(|(k, e)| {
            from.addr >= e.addr
                && from.addr <= e.end_addr
                && arc_lookup(e, to, &self.children[t][k], &self.right, trace)
        })
    }
}

/// `arc_lookup` of `child` among `parent`'s arcs (to `right[kids[..]]`, newest first), with
/// its `LOOKUPDEBUG` trace.
fn arc_lookup(
    parent: &Sym<'_>,
    child: &Sym<'_>,
    kids: &[usize],
    right: &[Sym<'_>],
    trace: &mut Trace,
) -> bool {
    let on = trace.on(LOOKUPDEBUG);
    if on {
        trace.put(b"[arc_lookup] parent ");
        trace.put(parent.name);
        trace.put(b" child ");
        trace.put(child.name);
        trace.put(b"\n");
    }
    for &r in kids.iter().rev() {
        let k = &right[r];
        if on {
            trace.put(b"[arc_lookup]\t parent ");
            trace.put(parent.name);
            trace.put(b" child ");
            trace.put(k.name);
            trace.put(b"\n");
        }
        if child.addr >= k.addr && child.end_addr <= k.end_addr {
            return true;
        }
    }
    false
}

/// `symtab_finalize` on a spec table, with its traces: sorted by address (entries at one
/// address are copies of one symbol, so the sort keeps their order and the first stays:
/// `favor` it), an entry whose range is empty (it ends below its start) is dropped.
fn finalize_traced<'data>(
    entries: Vec<Sym<'data>>,
    kids: Vec<Vec<usize>>,
    trace: &mut Trace,
) -> (SymTab<'data>, Vec<Vec<usize>>) {
    let n = entries.len();
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by_key(|&i| entries[i].addr);
    let mut syms: Vec<Sym<'data>> = Vec::with_capacity(n);
    let mut out_kids: Vec<Vec<usize>> = Vec::with_capacity(n);
    let mut prev_addr = entries.first().map(|e| e.addr.wrapping_add(1));
    for i in order {
        let src = &entries[i];
        if Some(src.addr) == prev_addr {
            if let Some(dst) = syms.last() {
                if trace.on(AOUTDEBUG | IDDEBUG) {
                    trace.put(b"[symtab_finalize] favor ");
                    for (k, s) in [dst, src].into_iter().enumerate() {
                        trace.put(if k == 1 { b" over " } else { b"" });
                        trace.put(s.name);
                        let st = if s.is_static { 't' } else { 'T' };
                        let fu = if s.is_func { 'F' } else { 'f' };
                        trace.fmt(format_args!("@{st}{fu}"));
                    }
                    trace.fmt(format_args!(" (addr={:x})\n", src.addr));
                }
            }
            continue;
        }
        if let Some(dst) = syms.last_mut() {
            if dst.end_addr == 0 {
                dst.end_addr = src.addr.wrapping_sub(1);
            }
        }
        if src.end_addr == 0 || src.addr <= src.end_addr {
            syms.push(src.clone());
            out_kids.push(kids[i].clone());
            prev_addr = Some(src.addr);
        }
    }
    let table = SymTab {
        syms,
        after_last: None,
    };
    if n > 0 {
        table.trace_table(n - table.len(), trace);
    }
    (table, out_kids)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(file: Option<&'static str>, line: i32, name: Option<&'static str>) -> Pattern<'static> {
        Pattern { file, line, name }
    }

    /// `parse_spec`'s forms.
    #[test]
    fn spec_forms() {
        assert_eq!(parse("main"), p(None, 0, Some("main")));
        assert_eq!(parse(":main.x"), p(None, 0, Some("main.x")));
        assert_eq!(parse("a.c"), p(Some("a.c"), 0, None));
        assert_eq!(parse("a:"), p(Some("a"), 0, None));
        assert_eq!(parse("a.c:f"), p(Some("a.c"), 0, Some("f")));
        assert_eq!(parse("a.c:12x"), p(Some("a.c"), 12, None));
        assert_eq!(parse("d:a.c:12"), p(Some("d:a.c"), 12, None));
        assert_eq!(parse("12"), p(None, 12, None));
        assert_eq!(parse("0"), p(None, 0, None));
        assert_eq!(parse(""), p(None, 0, None));
        assert_eq!(parse(":"), p(None, 0, None));
        // strtol saturates, the cast to int keeps the low 32 bits.
        assert_eq!(parse("4294967308"), p(None, 12, None));
        assert!(needs_source(&[SymSpec {
            table: Table::InclFlat,
            spec: "main/a.c",
        }]));
        assert!(!needs_source(&[SymSpec {
            table: Table::InclFlat,
            spec: ":main/0",
        }]));
    }

    /// `sym_lookup` checks only the entry starting last at or below the address.
    #[test]
    fn lookup_is_gprofs_binary_search() {
        let e = |addr, end| Entry {
            addr,
            end,
            children: Default::default(),
        };
        let t = [e(10, 100), e(20, 29), e(200, 210)];
        assert!(lookup(&t, 15) && lookup(&t, 25) && lookup(&t, 205));
        assert!(!lookup(&t, 50) && !lookup(&t, 5) && !lookup(&t, 300));
        assert!(!lookup(&[], 5));
    }
}
