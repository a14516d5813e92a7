//! `cg_print` and `cg_print_index`: gprof 2.40's call graph and its index by function name
//! (GNU form, or BSD with `-T`; with or without `-b`), plus the choice and order of sections
//! gprof makes in `main`.
//!
//! Everything printed comes from the structures [`super::cg::CallGraph::assemble`] built:
//! entries in `time_sorted` order, with their `index`, `prop_self`/`prop_child`, `ncalls`,
//! `self_calls`, cycle numbers and arcs. What this module adds is gprof's printing order:
//!
//! * An entry's parents and children are re-ordered with gprof's own **insertion sorts**
//!   (`sort_parents`, `sort_children`, `sort_members`) over the lists in `arc_add` order.
//!   Ties fall by list position in a way particular to each sort, and `cmp_arc` calls a
//!   self-arc "less" than anything, even another self-arc. Each list is sorted once, when its
//!   entry is printed, so sorting copies is equivalent to gprof sorting the linked lists in
//!   place. Lists longer than 64 use the stable sort that gives the same order for a
//!   consistent comparison (checked against the insertion sort by a unit test and against
//!   gprof by `cg_random`), so that a hostile profile cannot make printing quadratic.
//! * Every `x / hz` is the C division: with no histogram gprof's `hz` is 0, and gprof prints
//!   `-nan` (x86's default NaN) and `inf`; [`c_div`] gives the same bits.

use std::cmp::Ordering;
use std::io::Write;

use super::debug;
use super::msort::NameKey;
use super::printf;
use super::symspec::Table;
use super::Analysis;
use crate::{Error, Result};

/// Options of the call graph and the index.
#[derive(Debug, Clone, Copy, Default)]
pub struct GraphOptions {
    /// `-z`: also print entries (and index names) with no calls and no time.
    pub zeros: bool,
    /// `-b`: no explanations after the flat profile and the call graph.
    pub brief: bool,
    /// `-w`: the output width the index is laid out for (gprof's default, 80, if `None`).
    pub width: Option<usize>,
    /// `-T` (`--traditional`): BSD style (call graph first, wider columns, raw names).
    pub bsd: bool,
    /// `-A`/`-y`'s settings.
    pub annotate: super::annotate::AnnotateOptions,
}

impl GraphOptions {
    /// The width of the call graph's `children` (`descendants`) column.
    fn children_width(&self) -> usize {
        if self.bsd {
            11
        } else {
            7
        }
    }
}

/// The explanation gprof prints after the flat profile unless `-b`: gprof's fixed text,
/// recorded from gprof 2.40's output (`blurbs/README.md`).
pub(super) const FLAT_BLURB: &[u8] = include_bytes!("blurbs/flat.txt");

/// The explanation gprof prints after the call graph unless `-b` (as [`FLAT_BLURB`]).
const CALL_GRAPH_BLURB: &[u8] = include_bytes!("blurbs/call_graph.txt");

/// The explanation gprof prints before the call graph under `-T` unless `-b` (as
/// [`FLAT_BLURB`]).
const BSD_CALL_GRAPH_BLURB: &[u8] = include_bytes!("blurbs/bsd_call_graph.txt");

/// Which sections the user asked for (gprof's `-p`/`-P`/`-q`/`-Q`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Sections {
    /// `-p`: the flat profile.
    pub flat: bool,
    /// `-P`: no flat profile.
    pub no_flat: bool,
    /// `-q`: the call graph (and its index).
    pub graph: bool,
    /// `-Q`: no call graph.
    pub no_graph: bool,
    /// `-i`: what each gmon file held (printed as the files are read, before the rest).
    pub file_info: bool,
    /// `-C`: the execution counts (after the index).
    pub exec_counts: bool,
    /// `-A`: the annotated source.
    pub annotated_source: bool,
    /// `-r`: the suggested function order (last).
    pub function_order: bool,
    /// `-R`: the suggested order of object files (last; never with `-r`).
    pub file_order: bool,
    /// No output style was asked for (and `-Z` not given): a profile with neither histogram
    /// nor arcs then gets the execution counts, as in gprof.
    pub guess_exec_counts: bool,
}

/// What gprof prints, decided as in its `main`: explicit `-p`/`-q` win; otherwise the flat
/// profile when there is a histogram and the call graph when there are arcs, minus whatever
/// `-P`/`-Q` turned off. `Ok((flat, graph))`, or gprof's fatal "missing" errors with gprof's
/// exit status 1 (`gmon` names the last gmon file for the message).
pub fn choose_sections(a: &Analysis<'_>, req: Sections, gmon: &str) -> Result<(bool, bool)> {
    let (mut flat, mut graph) = (req.flat, req.graph);
    if !flat && !graph {
        flat = a.hist.present() && !req.no_flat;
        graph = a.has_call_graph && !req.no_graph;
    }
    if flat && !a.hist.present() {
        return Err(Error::gprof_fatal(format!(
            "{gmon}: gmon.out file is missing histogram"
        )));
    }
    if graph && !a.has_call_graph {
        return Err(Error::gprof_fatal(format!(
            "{gmon}: gmon.out file is missing call-graph data"
        )));
    }
    Ok((flat, graph))
}

/// `print_exec_counts` (`-C`): for each symbol the execution-count table selects, in
/// `cmp_bb` order (source file, then line, when both have one; else address: an inconsistent
/// order, sorted as glibc's merge sort sorts it), `file:line: (name:0xaddr) N executions`
/// for those called (or all, with `-z`), each followed by the same line for each of its
/// basic blocks (`-l`), with the block's address and count. The file is BFD's whole path,
/// `<unknown>` without one; the name is raw. What is printed goes to `sink` a megabyte at a
/// time ([`super::sink::spill`]).
pub(super) fn print_exec_counts(
    a: &Analysis<'_>,
    opts: GraphOptions,
    exe: &[u8],
    out: &mut Vec<u8>,
    sink: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    let syms = &a.symtab.syms;
    let addrs: Vec<u64> = syms.iter().map(|s| s.addr).collect();
    // Under -l, from the line map the line symbols were cut from (read once).
    let found = match (a.external_symbols, &a.lines) {
        (true, _) => Default::default(),
        (false, Some(l)) => profil_symbols::gprof::locate_reusing(exe, &l.text_map, l.text, &addrs),
        (false, None) => profil_symbols::gprof::locate(exe, &addrs),
    };
    // Each file's rank among the paths in byte order (`strcmp`'s on paths without NUL): the
    // comparisons below compare two integers, not two paths.
    let mut by_path: Vec<u32> = (0..found.num_files() as u32).collect();
    by_path.sort_unstable_by(|&l, &r| found.path(l).cmp(found.path(r)));
    let mut rank = vec![0u32; by_path.len()];
    for (k, &f) in by_path.iter().enumerate() {
        rank[f as usize] = k as u32;
    }
    let at = |i: usize| found.at.get(i).copied().flatten();
    let key: Vec<Option<(u32, u64)>> = (0..syms.len())
        .map(|i| at(i).map(|(file, line)| (rank[file as usize], line)))
        .collect();
    // Under -d, gprof's look-ups in its tables print their traces first.
    let mut probes = super::debug::Trace::new(a.trace.level);
    let mut order: Vec<usize> = (0..syms.len())
        .filter(|&i| match a.spec_tables.as_deref() {
            Some(t) => t.on(Table::InclExec, Table::ExclExec, syms[i].addr, &mut probes),
            None => a.select.exec.on(i),
        })
        .collect();
    out.append(&mut probes.out);
    super::msort::msort(&mut order, |&l, &r| {
        if let (Some(lk), Some(rk)) = (key[l], key[r]) {
            if lk != rk {
                return lk.cmp(&rk);
            }
        }
        syms[l].addr.cmp(&syms[r].addr)
    });
    for i in order {
        let (file, line) = match at(i) {
            Some((f, l)) => (found.path(f), l),
            None => (&b"<unknown>"[..], 0),
        };
        let blocks = a.basic_blocks(i);
        for (addr, calls) in std::iter::once((syms[i].addr, a.cg.nodes[i].ncalls)).chain(blocks) {
            if calls == 0 && !opts.zeros {
                continue;
            }
            out.extend_from_slice(file);
            out.push(b':');
            printf::push_u(out, 0, line);
            out.extend_from_slice(b": (");
            out.extend_from_slice(syms[i].name);
            out.extend_from_slice(b":0x");
            printf::push_x(out, addr);
            out.extend_from_slice(b") ");
            printf::push_u(out, 0, calls);
            out.extend_from_slice(b" executions\n");
        }
        super::sink::spill(out, sink)?;
    }
    Ok(())
}

/// `-i`: what each gmon file held, as gprof prints it while reading the file.
pub(crate) fn print_file_info(a: &Analysis<'_>, out: &mut Vec<u8>) {
    for f in &a.files {
        print_one_file_info(f, out);
    }
}

/// `-i`'s lines for one gmon file.
pub fn print_one_file_info(f: &super::FileInfo, out: &mut Vec<u8>) {
    let plural = |n: u64| if n == 1 { "" } else { "s" };
    {
        out.extend_from_slice(b"File `");
        out.extend_from_slice(f.name.as_bytes());
        out.extend_from_slice(
            format!(
                "' (version {}) contains:\n\t{} histogram record{}\n\t{} call-graph record{}\n\t{} basic-block count record{}\n",
                f.version,
                f.histograms,
                plural(f.histograms),
                f.arcs,
                plural(f.arcs),
                f.basic_blocks,
                plural(f.basic_blocks)
            )
            .as_bytes(),
        );
    }
}

/// The source file gprof appends to a static function's name in the index: the base name of
/// the file `bfd_find_nearest_line` gives for the function's address (DWARF line table, see
/// [`profil_symbols::gprof::locate`]). Indexed by symbol; `None` for globals and without
/// debug info.
pub fn static_source_files(a: &Analysis<'_>, exe: &[u8]) -> Vec<Option<Vec<u8>>> {
    let syms = &a.symtab.syms;
    if a.external_symbols {
        return vec![None; syms.len()];
    }
    let statics: Vec<usize> = (0..syms.len()).filter(|&i| syms[i].is_static).collect();
    let addrs: Vec<u64> = statics.iter().map(|&i| syms[i].addr).collect();
    let found = profil_symbols::gprof::locate(exe, &addrs);
    let mut files = vec![None; syms.len()];
    for (&i, at) in statics.iter().zip(&found.at) {
        if let Some((file, _)) = *at {
            let path = found.path(file);
            files[i] = Some(match a.print_path {
                true => path.to_vec(),
                false => super::base_name(path).to_vec(),
            });
        }
    }
    files
}

/// The C division `x / y` with x86-64's NaN rules: an operand's NaN propagates, and an
/// invalid operation (`0/0`) yields the default NaN, whose sign bit is set (`-nan`).
pub fn c_div(x: f64, y: f64) -> f64 {
    let r = x / y;
    if !r.is_nan() {
        r
    } else if x.is_nan() {
        x
    } else if y.is_nan() {
        y
    } else {
        -f64::NAN
    }
}

/// `print_name`: the demangled name, `<cycle N>` for cycle members, and the entry's index in
/// brackets (parentheses when the entry is not printed). gprof numbers the entries only when
/// it assembles the call graph, so without call-graph data (`-T -p` on a profile of no arcs)
/// there is no index.
pub(super) fn print_name(a: &Analysis<'_>, node: usize, out: &mut Vec<u8>) {
    let n = &a.cg.nodes[node];
    if node < a.cg.num_syms {
        let _ = a.push_display_name(node, out);
    }
    if n.cyc_num != 0 {
        out.extend_from_slice(b" <cycle ");
        printf::push_u(out, 0, n.cyc_num as u64);
        out.push(b'>');
    }
    if n.index != 0 && a.has_call_graph {
        out.push(b' ');
        push_index(n.index, n.print_flag, out);
    }
}

/// `[index]` for a printed entry, `(index)` for one that is not.
fn push_index(index: u32, printed: bool, out: &mut Vec<u8>) {
    let (open, close) = if printed { (b'[', b']') } else { (b'(', b')') };
    out.push(open);
    printf::push_u(out, 0, u64::from(index));
    out.push(close);
}

/// `"%-6.6s"` of `[index]`.
fn index_column(index: u32, out: &mut Vec<u8>) {
    let start = out.len();
    push_index(index, true, out);
    let len = out.len() - start;
    if len > 6 {
        out.truncate(start + 6);
    } else {
        out.extend(std::iter::repeat_n(b' ', 6 - len));
    }
}

fn blanks(out: &mut Vec<u8>, n: usize) {
    out.extend(std::iter::repeat_n(b' ', n));
}

/// `cmp_arc`: self-arcs first, then arcs inside a cycle (by count), then the rest by
/// propagated time and count. Not a consistent order; only used by the insertion sorts.
fn cmp_arc(a: &Analysis<'_>, l: usize, r: usize) -> Ordering {
    let nodes = &a.cg.nodes;
    let (la, ra) = (&a.cg.arcs[l], &a.cg.arcs[r]);
    if la.parent == la.child {
        return Ordering::Less;
    }
    if ra.parent == ra.child {
        return Ordering::Greater;
    }
    let within = |p: usize, c: usize| {
        let (pn, cn) = (nodes[p].cyc_num, nodes[c].cyc_num);
        pn != 0 && cn != 0 && pn == cn
    };
    let count = la.count.cmp(&ra.count);
    match (within(la.parent, la.child), within(ra.parent, ra.child)) {
        (true, true) => count,
        (true, false) => Ordering::Less,
        (false, true) => Ordering::Greater,
        (false, false) => {
            let (lt, rt) = (la.time + la.child_time, ra.time + ra.child_time);
            if lt < rt {
                Ordering::Less
            } else if lt > rt {
                Ordering::Greater
            } else {
                count
            }
        }
    }
}

/// How gprof's list insertion sorts place an element: before the first already sorted element
/// `s` for which the rule holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum InsertBefore {
    /// `cmp(x, s) != GREATERTHAN` (`sort_parents`): ascending, later equals first.
    NotGreater,
    /// `cmp(x, s) != LESSTHAN` (`sort_children`): descending, later equals first.
    NotLess,
    /// `cmp(x, s) == GREATERTHAN` (`sort_members`): descending, earlier equals first.
    Greater,
}

/// Lists up to this long are sorted by gprof's own quadratic procedure; longer ones by the
/// equivalent stable sort (the same order for a consistent comparison, which `consistent`
/// must vouch for), so that a hostile profile cannot make the printer take quadratic time.
const LITERAL_MAX: usize = 64;

/// gprof's insertion sort of `list` (in list order) under `rule`.
fn gprof_sort(
    list: impl Iterator<Item = usize>,
    rule: InsertBefore,
    consistent: bool,
    cmp: impl Fn(usize, usize) -> Ordering,
) -> Vec<usize> {
    let mut items: Vec<usize> = list.collect();
    if items.len() > LITERAL_MAX && consistent {
        match rule {
            InsertBefore::NotGreater => {
                items.reverse();
                items.sort_by(|&l, &r| cmp(l, r));
            }
            InsertBefore::NotLess => {
                items.reverse();
                items.sort_by(|&l, &r| cmp(r, l));
            }
            InsertBefore::Greater => items.sort_by(|&l, &r| cmp(r, l)),
        }
        return items;
    }
    let stop = |x: usize, s: usize| match rule {
        InsertBefore::NotGreater => cmp(x, s) != Ordering::Greater,
        InsertBefore::NotLess => cmp(x, s) != Ordering::Less,
        InsertBefore::Greater => cmp(x, s) == Ordering::Greater,
    };
    let mut sorted: Vec<usize> = Vec::with_capacity(items.len());
    for x in items {
        let at = sorted
            .iter()
            .position(|&s| stop(x, s))
            .unwrap_or(sorted.len());
        sorted.insert(at, x);
    }
    sorted
}

/// `cmp_arc` is a consistent order over a list when no time is NaN (there is at most one
/// self-arc per list: `arc_add` keeps one arc per caller and callee).
fn arcs_consistent(a: &Analysis<'_>, list: impl Iterator<Item = usize>) -> bool {
    let mut selfs = 0;
    for i in list {
        let r = &a.cg.arcs[i];
        selfs += usize::from(r.parent == r.child);
        if (r.time + r.child_time).is_nan() || selfs > 1 {
            return false;
        }
    }
    true
}

/// [`sorted_parents`] (`parents`) or [`sorted_children`], with `cmp_arc`'s `TIMEDEBUG`
/// trace of every comparison gprof's insertion sort makes written to `out`.
fn sorted_arcs_traced(
    a: &Analysis<'_>,
    node: usize,
    parents: bool,
    out: &mut Vec<u8>,
) -> Vec<usize> {
    if !a.trace.on(debug::TIMEDEBUG) {
        return match parents {
            true => sorted_parents(a, node),
            false => sorted_children(a, node),
        };
    }
    let asked = std::cell::RefCell::new(Vec::new());
    let cmp = |x, s| {
        asked.borrow_mut().push((x, s));
        cmp_arc(a, x, s)
    };
    // The literal insertion sort (the comparisons are the trace).
    let sorted = match parents {
        true => gprof_sort(a.cg.parents(node), InsertBefore::NotGreater, false, cmp),
        false => gprof_sort(a.cg.children(node), InsertBefore::NotLess, false, cmp),
    };
    for (x, s) in asked.into_inner() {
        for arc in [x, s] {
            let r = &a.cg.arcs[arc];
            out.extend_from_slice(b"[cmp_arc] ");
            print_name(a, r.parent, out);
            out.extend_from_slice(b" calls ");
            print_name(a, r.child, out);
            let _ = writeln!(
                out,
                " {} + {} {}/{}",
                debug::f6(r.time),
                debug::f6(r.child_time),
                r.count,
                a.cg.nodes[r.child].ncalls
            );
        }
        out.push(b'\n');
    }
    sorted
}

/// A node's parent arcs in printing order (`sort_parents`).
pub fn sorted_parents(a: &Analysis<'_>, node: usize) -> Vec<usize> {
    let ok = arcs_consistent(a, a.cg.parents(node));
    gprof_sort(a.cg.parents(node), InsertBefore::NotGreater, ok, |x, s| {
        cmp_arc(a, x, s)
    })
}

/// A node's child arcs in printing order (`sort_children`).
pub fn sorted_children(a: &Analysis<'_>, node: usize) -> Vec<usize> {
    let ok = arcs_consistent(a, a.cg.children(node));
    gprof_sort(a.cg.children(node), InsertBefore::NotLess, ok, |x, s| {
        cmp_arc(a, x, s)
    })
}

/// A cycle's members in printing order (`sort_members`): most propagated time first, then
/// most calls.
pub fn sorted_members(a: &Analysis<'_>, cycle: usize) -> Vec<usize> {
    let nodes = &a.cg.nodes;
    let members =
        || std::iter::successors(nodes[cycle].cyc_next.get(), |&m| nodes[m].cyc_next.get());
    let ok = members().all(|m| !(nodes[m].prop_self + nodes[m].prop_child).is_nan());
    // `cmp_member`.
    let cmp = |l: usize, r: usize| {
        let (ln, rn) = (&nodes[l], &nodes[r]);
        let (lt, rt) = (ln.prop_self + ln.prop_child, rn.prop_self + rn.prop_child);
        if lt > rt {
            return Ordering::Greater;
        }
        if lt < rt {
            return Ordering::Less;
        }
        let calls = |n: &super::cg::Node| n.ncalls.wrapping_add(n.self_calls);
        calls(ln).cmp(&calls(rn))
    };
    gprof_sort(members(), InsertBefore::Greater, ok, cmp)
}

/// The `self  children  called` columns of a parent or child line.
fn arc_line(
    a: &Analysis<'_>,
    arc: usize,
    inside: bool,
    total_calls: u64,
    cw: usize,
    out: &mut Vec<u8>,
) {
    let hz = f64::from(a.hist.hz);
    let r = &a.cg.arcs[arc];
    blanks(out, 6 + 1 + 5 + 1);
    if inside {
        // "%7.7s %7.7s %7lu %7.7s     " (the second column `cw` wide)
        blanks(out, 7 + 1 + cw + 1);
        printf::push_u(out, 7, r.count);
        out.push(b' ');
        blanks(out, 7 + 5);
    } else {
        // "%7.2f %7.2f %7lu/%-7lu     "
        printf::push_f(out, 7, 2, c_div(r.time, hz));
        out.push(b' ');
        printf::push_f(out, cw, 2, c_div(r.child_time, hz));
        out.push(b' ');
        printf::push_u(out, 7, r.count);
        out.push(b'/');
        printf::push_u_left(out, 7, total_calls);
        out.extend_from_slice(b"     ");
    }
}

fn print_parents(a: &Analysis<'_>, child: usize, cw: usize, out: &mut Vec<u8>) {
    let nodes = &a.cg.nodes;
    if nodes[child].parents.is_none() {
        blanks(out, 6 + 1 + 5 + 1 + 7 + 1 + cw + 1 + 7 + 1 + 7 + 5);
        out.extend_from_slice(b"<spontaneous>\n");
        return;
    }
    let head_calls = nodes[nodes[child].cyc_head].ncalls;
    for arc in sorted_arcs_traced(a, child, true, out) {
        let parent = a.cg.arcs[arc].parent;
        let cyc = nodes[child].cyc_num;
        let inside = child == parent || (cyc != 0 && nodes[parent].cyc_num == cyc);
        arc_line(a, arc, inside, head_calls, cw, out);
        print_name(a, parent, out);
        out.push(b'\n');
    }
}

fn print_children(a: &Analysis<'_>, parent: usize, cw: usize, out: &mut Vec<u8>) {
    let nodes = &a.cg.nodes;
    for arc in sorted_arcs_traced(a, parent, false, out) {
        let child = a.cg.arcs[arc].child;
        let cyc = nodes[child].cyc_num;
        let inside = child == parent || (cyc != 0 && cyc == nodes[parent].cyc_num);
        arc_line(a, arc, inside, nodes[nodes[child].cyc_head].ncalls, cw, out);
        print_name(a, child, out);
        out.push(b'\n');
    }
}

/// `%time self children` of an entry's primary line or a cycle's header.
fn totals(a: &Analysis<'_>, node: usize, print_time: f64, cw: usize, out: &mut Vec<u8>) {
    let hz = f64::from(a.hist.hz);
    let n = &a.cg.nodes[node];
    index_column(n.index, out);
    out.push(b' ');
    let pct = c_div(100.0 * (n.prop_self + n.prop_child), print_time);
    printf::push_f(out, 5, 1, pct);
    out.push(b' ');
    printf::push_f(out, 7, 2, c_div(n.prop_self, hz));
    out.push(b' ');
    printf::push_f(out, cw, 2, c_div(n.prop_child, hz));
}

fn print_line(a: &Analysis<'_>, node: usize, print_time: f64, cw: usize, out: &mut Vec<u8>) {
    totals(a, node, print_time, cw, out);
    let n = &a.cg.nodes[node];
    if n.ncalls.wrapping_add(n.self_calls) != 0 {
        out.push(b' ');
        printf::push_u(out, 7, n.ncalls);
        if n.self_calls != 0 {
            out.push(b'+');
            printf::push_u_left(out, 7, n.self_calls);
            out.push(b' ');
        } else {
            blanks(out, 1 + 7 + 1);
        }
    } else {
        blanks(out, 1 + 7 + 1 + 7 + 1);
    }
    print_name(a, node, out);
    out.push(b'\n');
}

fn print_cycle(a: &Analysis<'_>, cycle: usize, print_time: f64, cw: usize, out: &mut Vec<u8>) {
    totals(a, cycle, print_time, cw, out);
    let n = &a.cg.nodes[cycle];
    out.push(b' ');
    printf::push_u(out, 7, n.ncalls);
    if n.self_calls != 0 {
        out.push(b'+');
        printf::push_u_left(out, 7, n.self_calls);
    } else {
        blanks(out, 1 + 7);
    }
    out.extend_from_slice(b" <cycle ");
    printf::push_u(out, 0, n.cyc_num as u64);
    out.extend_from_slice(b" as a whole> ");
    push_index(n.index, true, out);
    out.push(b'\n');
}

fn print_members(a: &Analysis<'_>, cycle: usize, cw: usize, out: &mut Vec<u8>) {
    let hz = f64::from(a.hist.hz);
    for m in sorted_members(a, cycle) {
        let n = &a.cg.nodes[m];
        blanks(out, 6 + 1 + 5 + 1);
        printf::push_f(out, 7, 2, c_div(n.prop_self, hz));
        out.push(b' ');
        printf::push_f(out, cw, 2, c_div(n.prop_child, hz));
        out.push(b' ');
        printf::push_u(out, 7, n.ncalls);
        if n.self_calls != 0 {
            out.push(b'+');
            printf::push_u_left(out, 7, n.self_calls);
        } else {
            blanks(out, 1 + 7);
        }
        blanks(out, 5);
        print_name(a, m, out);
        out.push(b'\n');
    }
}

/// Whether `cg_print` prints an entry for `node` (symbol or cycle).
pub fn is_printed(a: &Analysis<'_>, node: usize, opts: GraphOptions) -> bool {
    let n = &a.cg.nodes[node];
    let zero = n.ncalls == 0 && n.self_calls == 0 && n.prop_self == 0.0 && n.prop_child == 0.0;
    n.print_flag && (opts.zeros || !zero)
}

/// Print the call graph exactly as `gprof [-b] -q` does. `first_output` is false when another
/// section was printed before (gprof then starts with a form feed).
pub fn print(
    a: &Analysis<'_>,
    opts: GraphOptions,
    first_output: bool,
    out: &mut Vec<u8>,
    sink: &mut dyn Write,
) -> std::io::Result<()> {
    let hz = f64::from(a.hist.hz);
    let cw = opts.children_width();
    if opts.bsd && !opts.brief {
        out.extend_from_slice(BSD_CALL_GRAPH_BLURB);
    }
    if !first_output {
        out.extend_from_slice(b"\x0c\n");
    }
    if !opts.bsd {
        out.extend_from_slice(if opts.brief {
            b"\t\t\tCall graph\n\n"
        } else {
            b"\t\t     Call graph (explanation follows)\n\n"
        });
    }
    // `(long) hist_scale * sizeof (UNIT)`
    let granularity = (a.hist.scale as i64).wrapping_mul(2);
    out.extend_from_slice(
        format!("\ngranularity: each sample hit covers {granularity} byte(s)").as_bytes(),
    );
    let mut print_time = a.cg.print_time;
    if print_time > 0.0 {
        out.extend_from_slice(
            format!(
                " for {}% of {} seconds\n\n",
                printf::f(0, 2, c_div(100.0, print_time)),
                printf::f(0, 2, c_div(print_time, hz))
            )
            .as_bytes(),
        );
    } else {
        out.extend_from_slice(b" no time propagated\n\n");
        print_time = 1.0;
    }
    if opts.bsd {
        // "%6.6s %5.5s %7.7s %11.11s %7.7s/%-7.7s     %-8.8s" and so on.
        out.extend_from_slice(
            b"                                  called/total       parents \n\
              index  %time    self descendants  called+self    name    \tindex\n\
              \x20                                 called/total       children\n\n",
        );
    } else {
        out.extend_from_slice(b"index % time    self  children    called     name\n");
    }
    for &node in &a.cg.time_sorted {
        if !is_printed(a, node, opts) {
            continue;
        }
        // Under -l gprof prints entries for function symbols only: no line symbol, and no
        // cycle (a cycle header is not a function either), though they keep their numbers.
        if a.lines.is_some() && (node >= a.cg.num_syms || !a.symtab.syms[node].is_func) {
            continue;
        }
        if node >= a.cg.num_syms {
            print_cycle(a, node, print_time, cw, out);
            print_members(a, node, cw, out);
        } else {
            print_parents(a, node, cw, out);
            print_line(a, node, print_time, cw, out);
            print_children(a, node, cw, out);
        }
        out.extend_from_slice(if opts.bsd {
            b"\n-----------------------------------------------\n\n"
        } else {
            b"-----------------------------------------------\n"
        });
        super::sink::spill(out, sink)?;
    }
    if !opts.brief && !opts.bsd {
        out.extend_from_slice(CALL_GRAPH_BLURB);
    }
    Ok(())
}

/// The symbols listed in the index, in name order (without the cycles).
pub fn index_symbols(a: &Analysis<'_>, opts: GraphOptions) -> Vec<usize> {
    let names: Vec<usize> = (0..a.cg.num_syms)
        .filter(|&i| opts.zeros || a.cg.nodes[i].ncalls != 0 || a.time[i] != 0.0)
        .collect();
    let syms = &a.symtab.syms;
    name_order(&names, |i| syms[i].name)
}

/// gprof's `qsort` of `items` by name: a consistent comparison whose ties (equal names)
/// keep their order in a merge sort, so an unstable sort of (name, position) keys gives the
/// same order.
fn name_order<'n>(items: &[usize], name: impl Fn(usize) -> &'n [u8]) -> Vec<usize> {
    let mut keys: Vec<(NameKey<'n>, usize, usize)> = items
        .iter()
        .enumerate()
        .map(|(pos, &i)| (NameKey::new(name(i)), pos, i))
        .collect();
    keys.sort_unstable();
    keys.into_iter().map(|(_, _, i)| i).collect()
}

/// gprof's `output_width` without `-w`.
const OUTPUT_WIDTH: usize = 80;

/// Print the index by function name exactly as gprof does after the call graph: three
/// columns, filled top to bottom, cycles last.
/// `files[i]` is the source file shown after static symbol `i` ([`static_source_files`]).
pub fn print_index(
    a: &Analysis<'_>,
    opts: GraphOptions,
    files: &[Option<Vec<u8>>],
    out: &mut Vec<u8>,
    sink: &mut dyn Write,
) -> std::io::Result<()> {
    let names = index_symbols(a, opts);
    let nnames = names.len();
    let entries: Vec<usize> = names
        .into_iter()
        .chain(a.cg.num_syms..a.cg.num_syms + a.cg.num_cycles)
        .collect();
    let column_width = (opts.width.unwrap_or(OUTPUT_WIDTH).max(1) - 1) / 3;
    out.extend_from_slice(b"\x0c\nIndex by function name\n\n");
    let rows = entries.len().div_ceil(3);
    let mut buf = Vec::new();
    for i in 0..rows {
        let mut col = 0usize;
        let mut starting_col = 0usize;
        for (j, &node) in entries.iter().enumerate().skip(i).step_by(rows) {
            let n = &a.cg.nodes[node];
            buf.clear();
            push_index(n.index, n.print_flag, &mut buf);
            if opts.bsd {
                // "%6.6s %-19.19s": the raw name, or `<cycle N>`.
                printf::s(out, 6, 6, false, &buf);
                out.push(b' ');
                if j < nnames {
                    printf::s(out, 19, 19, true, a.symtab.syms[node].name);
                } else {
                    printf::s(
                        out,
                        19,
                        19,
                        true,
                        format!("<cycle {}>", n.cyc_num).as_bytes(),
                    );
                }
                continue;
            }
            col += buf.len();
            while col < starting_col + 5 {
                out.push(b' ');
                col += 1;
            }
            out.push(b' ');
            out.extend_from_slice(&buf);
            out.push(b' ');
            if j < nnames {
                let start = out.len();
                let decorations = a.push_display_name(node, out);
                col += out.len() - start - decorations;
                if let Some(Some(file)) = files.get(node) {
                    out.extend_from_slice(b" (");
                    out.extend_from_slice(file);
                    out.push(b')');
                    col += file.len() + 3;
                }
            } else {
                let label = format!("<cycle {}>", n.cyc_num);
                col += label.len();
                out.extend_from_slice(label.as_bytes());
            }
            starting_col += column_width;
        }
        out.push(b'\n');
        super::sink::spill(out, sink)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gprof::msort::msort;

    #[test]
    fn name_order_is_the_merge_sort_order() {
        let pool: [&[u8]; 6] = [b"main", b"f", b"f1", b"_f", b"", b"static_helper"];
        let mut rng = super::super::TestRng(0x0bad_cafe_1234_5678u64);
        let mut next = move |k: u64| rng.below(k);
        for _ in 0..500 {
            let names: Vec<&[u8]> = (0..next(150)).map(|_| pool[next(6) as usize]).collect();
            // Items in any order (the index filters and keeps symbol order; be stricter).
            let items: Vec<usize> = (0..names.len()).rev().collect();
            let mut want = items.clone();
            msort(&mut want, |&l, &r| names[l].cmp(names[r]));
            assert_eq!(name_order(&items, |i| names[i]), want);
        }
    }

    /// The stable sorts used for long lists give exactly gprof's insertion order, ties and
    /// the self-arc rule (less than everything) included.
    #[test]
    fn long_lists_sort_like_gprof() {
        let mut rng = super::super::TestRng(0x1234_5678_9abc_def1u64);
        let mut next = move || rng.next();
        for round in 0..300 {
            let n = 1 + (next() % 200) as usize;
            let keys: Vec<u64> = (0..n).map(|_| next() % (1 + round % 7)).collect();
            let self_item = (round % 3 == 0).then(|| (next() % n as u64) as usize);
            let cmp = |l: usize, r: usize| {
                if Some(l) == self_item {
                    return Ordering::Less;
                }
                if Some(r) == self_item {
                    return Ordering::Greater;
                }
                keys[l].cmp(&keys[r])
            };
            for rule in [
                InsertBefore::NotGreater,
                InsertBefore::NotLess,
                InsertBefore::Greater,
            ] {
                if rule == InsertBefore::Greater && self_item.is_some() {
                    continue; // members have no self rule
                }
                let fast = gprof_sort(0..n, rule, true, cmp);
                let literal = gprof_sort(0..n, rule, false, cmp);
                assert_eq!(fast, literal, "{rule:?} {keys:?} {self_item:?}");
            }
        }
    }

    #[test]
    fn c_division_spells_nans_like_x86() {
        assert!(c_div(0.0, 0.0).is_nan() && c_div(0.0, 0.0).is_sign_negative());
        assert_eq!(printf::f(7, 2, c_div(0.0, 0.0)), "   -nan");
        assert_eq!(printf::f(7, 2, c_div(1.0, 0.0)), "    inf");
        assert_eq!(c_div(3.0, 2.0), 1.5);
    }
}
