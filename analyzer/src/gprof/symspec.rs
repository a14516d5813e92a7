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
//! specs were given (so `-pnosuch` and `-pnosuch.c` are `-p`).

use std::collections::HashMap;

use super::symtab::SymTab;

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
/// at the same address (runs of several specs starting at the same symbol) the first stays.
/// `entries` come as gprof adds them: symbol by symbol, the specs newest first.
fn finalize(mut entries: Vec<(usize, usize, Entry)>) -> Vec<Entry> {
    entries.sort_by_key(|(first_sym, spec_rank, _)| (*first_sym, *spec_rank));
    let mut out: Vec<Entry> = Vec::with_capacity(entries.len());
    for (_, _, e) in entries {
        if out.last().is_some_and(|l| l.addr == e.addr) {
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
