//! gprof's symbol specifications (`sym_ids`): the `NAME` of `-pNAME`, `-PNAME`, `-qNAME`,
//! `-QNAME`, `-e/-E/-f/-F/-n/-N NAME`, and the `FROM/TO` pairs of `-k` and `-q`/`-Q`, turned
//! into what each of gprof's tables selects.
//!
//! gprof keeps one table of address ranges per purpose (flat profile, time propagation, call
//! graph, arcs; each an INCL and an EXCL table) and asks "is this address in the table". A
//! spec that names a function matches the symbols of that raw (mangled) name, and each table
//! entry covers whole symbols, so the question has the same answer for every address of a
//! symbol: here each table is one flag per symbol. The default exclusions (`mcount` & co.)
//! are in every EXCL table. A table counts as empty when no symbol matched, whatever specs
//! were given (so `-pnosuch` is `-p`).
//!
//! Only function names are reproduced. gprof's other spec forms (`file.c`, `file:function`,
//! `file:line`, `line`) need the source file and line of every symbol; the command line
//! refuses them.

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

/// Whether `spec` (one side of a spec) is a form `--gprof` reproduces: a function name
/// (optionally written `:NAME`), or empty (any symbol). `Err` names the form.
pub fn check(spec: &str) -> Result<(), String> {
    let parts: Vec<&str> = spec.splitn(2, '/').collect();
    for side in parts {
        let (file, rest) = match side.rfind(':') {
            Some(i) => (&side[..i], &side[i + 1..]),
            None => ("", side),
        };
        if !file.is_empty() {
            return Err(format!("the file in `{side}`"));
        }
        if side.find(':').is_none() && rest.contains('.') {
            return Err(format!("the file name `{side}`"));
        }
        if rest.starts_with(|c: char| c.is_ascii_digit()) {
            return Err(format!("the line number `{side}`"));
        }
    }
    Ok(())
}

/// The name a side of a spec matches, or `None` for "any symbol" (an empty side).
fn name_of(side: &str) -> Option<&str> {
    let name = side.rfind(':').map_or(side, |i| &side[i + 1..]);
    (!name.is_empty()).then_some(name)
}

/// One flag per symbol: matched by the spec side `side`.
fn matches(symtab: &SymTab<'_>, side: &str) -> Vec<bool> {
    match name_of(side) {
        Some(name) => symtab
            .syms
            .iter()
            .map(|s| s.name == name.as_bytes())
            .collect(),
        None => vec![true; symtab.len()],
    }
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
    /// `INCL_ARCS`: (callers, callees) per spec.
    pub incl_arcs: Vec<(Vec<bool>, Vec<bool>)>,
    /// `EXCL_ARCS`: (callers, callees) per spec.
    pub excl_arcs: Vec<(Vec<bool>, Vec<bool>)>,
}

impl Selection {
    /// The tables for `symtab`: `default_excluded` marks the default exclusions, `specs` are
    /// the command line's.
    pub fn new(symtab: &SymTab<'_>, default_excluded: &[bool], specs: &[SymSpec]) -> Selection {
        let n = symtab.len();
        let pair = |incl: Table, excl: Table| {
            let mut p = Pair {
                incl: Vec::new(),
                incl_any: false,
                excl: match incl {
                    Table::InclExec | Table::InclAnno => Vec::new(),
                    _ => default_excluded.to_vec(),
                },
            };
            for s in specs {
                let target = if s.table == incl {
                    &mut p.incl
                } else if s.table == excl {
                    &mut p.excl
                } else {
                    continue;
                };
                target.resize(n, false);
                // Outside the arc tables only the left of a `FROM/TO` counts.
                let left = s.spec.split('/').next().unwrap_or("");
                for (t, m) in target.iter_mut().zip(matches(symtab, left)) {
                    *t |= m;
                }
            }
            p.incl_any = p.incl.iter().any(|&b| b);
            p
        };
        let arcs = |table: Table| -> Vec<(Vec<bool>, Vec<bool>)> {
            specs
                .iter()
                .filter(|s| s.table == table)
                .map(|s| {
                    // Without `/TO` the spec fills the table but makes no arc.
                    match s.spec.split_once('/') {
                        Some((from, to)) => (matches(symtab, from), matches(symtab, to)),
                        None => (matches(symtab, s.spec), vec![false; n]),
                    }
                })
                .collect()
        };
        Selection {
            flat: pair(Table::InclFlat, Table::ExclFlat),
            time: pair(Table::InclTime, Table::ExclTime),
            graph: pair(Table::InclGraph, Table::ExclGraph),
            exec: pair(Table::InclExec, Table::ExclExec),
            anno: pair(Table::InclAnno, Table::ExclAnno),
            incl_arcs: arcs(Table::InclArcs),
            excl_arcs: arcs(Table::ExclArcs),
        }
    }

    /// `cg_tally`'s arc filter: in `INCL_ARCS` (or it has no caller), and not in `EXCL_ARCS`.
    pub fn arc_allowed(&self, parent: usize, child: usize) -> bool {
        let present = |t: &[(Vec<bool>, Vec<bool>)]| t.iter().any(|(l, r)| l[parent] && r[child]);
        let incl_any = self.incl_arcs.iter().any(|(l, _)| l.iter().any(|&b| b));
        (!incl_any || present(&self.incl_arcs)) && !present(&self.excl_arcs)
    }

    /// Whether any arc table has a spec (the filter then runs for every arc).
    pub fn filters_arcs(&self) -> bool {
        !self.incl_arcs.is_empty() || !self.excl_arcs.is_empty()
    }
}
