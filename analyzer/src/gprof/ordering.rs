//! `-r` (`--function-ordering`): gprof's suggested function order for the linker, one raw
//! name a line (`cg_print_function_ordering`).
//!
//! gprof's greedy placement, step by step:
//!
//! 1. Functions never called are set aside (printed last, in address order).
//! 2. The arcs (self-arcs excluded, in the order they were made) are sorted by count, most
//!    first (glibc's merge sort: ties keep their order). Each callee gets one "use" per arc
//!    until 90% of all calls are covered.
//! 3. Up to 1/80 of the called functions with the most uses (stopping at exactly 5 uses) are
//!    the "multi-site" group; the arcs among them are placed first, and the group's other
//!    members are printed before anything.
//! 4. Chains are grown from the arcs in order: an unattached end of an arc joins the nearer
//!    end of the other's chain, never closing a loop; each pass prints its chains, and the
//!    third pass places what is left, arc by arc.
//! 5. Then every called function not yet printed (address order), then the unused ones.
//!
//! The parent and child lists a step walks are gprof's: sorted in place for the entries the
//! call graph printed (the call graph comes first), as made otherwise.

use super::cg_print::{self, GraphOptions};
use super::msort::msort;
use super::Analysis;

/// Per symbol: placement state and chain links.
#[derive(Clone, Copy, Default)]
struct Place {
    placed: bool,
    next: Option<usize>,
    prev: Option<usize>,
    nuses: u64,
}

/// Print the function ordering of `a`; `graph` is whether the call graph was printed (with
/// `opts`), since printing it re-orders the arc lists gprof walks here.
pub fn print(a: &Analysis<'_>, graph: bool, opts: GraphOptions, out: &mut Vec<u8>) {
    let n = a.cg.num_syms;
    let syms = &a.symtab.syms;
    let mut place = vec![Place::default(); n];
    let (mut used, mut unused) = (Vec::new(), Vec::new());
    for (i, p) in place.iter_mut().enumerate() {
        if a.cg.nodes[i].ncalls == 0 {
            unused.push(i);
            p.placed = true;
        } else {
            used.push(i);
        }
    }
    let count = |arc: usize| a.cg.arcs[arc].count;
    let mut arcs: Vec<usize> = (0..a.cg.arcs.len())
        .filter(|&i| a.cg.arcs[i].parent != a.cg.arcs[i].child)
        .collect();
    msort(&mut arcs, |&l, &r| count(r).cmp(&count(l)));
    let mut arc_placed = vec![false; a.cg.arcs.len()];
    let total: u64 = arcs.iter().map(|&i| count(i)).fold(0, u64::wrapping_add);
    let mut running = 0u64;
    for &arc in &arcs {
        running = running.wrapping_add(count(arc));
        if running as f64 / total as f64 > 0.90 {
            break;
        }
        place[a.cg.arcs[arc].child].nuses += 1;
    }
    let mut scratch_syms = used.clone();
    msort(&mut scratch_syms, |&l, &r| {
        place[r].nuses.cmp(&place[l].nuses)
    });
    // The lists as gprof has them: sorted where the call graph printed the entry.
    let printed = |node: usize| graph && cg_print::is_printed(a, node, opts);
    let children = |node: usize| -> Vec<usize> {
        if printed(node) {
            cg_print::sorted_children(a, node)
        } else {
            a.cg.children(node).collect()
        }
    };
    let parents = |node: usize| -> Vec<usize> {
        if printed(node) {
            cg_print::sorted_parents(a, node)
        } else {
            a.cg.parents(node).collect()
        }
    };
    let mut scratch_arcs = Vec::new();
    let mut scratch_index = 0;
    for (k, &sym) in scratch_syms.iter().enumerate().take(used.len() / 80) {
        if place[sym].nuses == 5 {
            break;
        }
        for arc in children(sym).into_iter().chain(parents(sym)) {
            if a.cg.arcs[arc].parent != a.cg.arcs[arc].child {
                scratch_arcs.push(arc);
            }
            arc_placed[arc] = true;
        }
        scratch_index = k;
        place[sym].placed = true;
    }
    let mut high_arcs = Vec::new();
    for &arc in &scratch_arcs {
        let (p, c) = (a.cg.arcs[arc].parent, a.cg.arcs[arc].child);
        if place[c].placed && place[p].placed {
            high_arcs.push(arc);
            place[c].placed = false;
            place[p].placed = false;
        }
    }
    let name = |i: usize, out: &mut Vec<u8>| {
        out.extend_from_slice(syms[i].name);
        out.push(b'\n');
    };
    for &sym in scratch_syms.iter().take(scratch_index) {
        if place[sym].placed {
            name(sym, out);
        }
    }
    msort(&mut high_arcs, |&l, &r| count(r).cmp(&count(l)));
    let mut state = State {
        a,
        place,
        arc_placed,
    };
    let mut unplaced = Vec::new();
    state.order_and_dump(&high_arcs, true, &mut unplaced, out);
    state.order_and_dump(&arcs, false, &mut unplaced, out);
    let mut rest = Vec::new();
    state.order_and_dump(&unplaced, true, &mut rest, out);
    for &sym in &used {
        if !state.place[sym].placed {
            name(sym, out);
        }
    }
    for &sym in &unused {
        name(sym, out);
    }
}

/// The placement state `order_and_dump_functions_by_arcs` works on (shared with `-R`'s
/// [`super::file_order`]).
pub(super) struct State<'a, 'd> {
    a: &'a Analysis<'d>,
    place: Vec<Place>,
    arc_placed: Vec<bool>,
}

impl<'a, 'd> State<'a, 'd> {
    /// Symbols placed or not (`placed`, per symbol), arcs placed or not (`arc_placed`), no
    /// chains.
    pub(super) fn new(a: &'a Analysis<'d>, placed: Vec<bool>, arc_placed: Vec<bool>) -> Self {
        State {
            a,
            place: placed
                .into_iter()
                .map(|placed| Place {
                    placed,
                    ..Place::default()
                })
                .collect(),
            arc_placed,
        }
    }

    /// Whether symbol `i` has been placed.
    pub(super) fn is_placed(&self, i: usize) -> bool {
        self.place[i].placed
    }

    /// `order_and_dump_functions_by_arcs`.
    pub(super) fn order_and_dump(
        &mut self,
        the_arcs: &[usize],
        all: bool,
        unplaced: &mut Vec<usize>,
        out: &mut Vec<u8>,
    ) {
        let arcs = &self.a.cg.arcs;
        let total: u64 = if all {
            0
        } else {
            the_arcs
                .iter()
                .map(|&i| arcs[i].count)
                .fold(0, u64::wrapping_add)
        };
        let mut running = 0u64;
        for &arc in the_arcs {
            running = running.wrapping_add(arcs[arc].count);
            if self.arc_placed[arc] {
                continue;
            }
            let (mut parent, mut child) = (arcs[arc].parent, arcs[arc].child);
            let p = &self.place;
            if (!all && running as f64 / total as f64 > 0.99) || p[child].placed || p[parent].placed
            {
                unplaced.push(arc);
                continue;
            }
            let linked = |s: usize| p[s].next.is_some() || p[s].prev.is_some();
            if p[parent].next.is_some()
                && p[parent].prev.is_some()
                && p[child].next.is_some()
                && p[child].prev.is_some()
            {
                unplaced.push(arc);
                continue;
            }
            // The ends of a chain, and how far each is.
            let ends = |s: usize| {
                let (mut next, mut nc) = (s, 0);
                while let Some(x) = p[next].next {
                    next = x;
                    nc += 1;
                }
                let (mut prev, mut pc) = (s, 0);
                while let Some(x) = p[prev].prev {
                    prev = x;
                    pc += 1;
                }
                (next, nc, prev, pc)
            };
            if !linked(parent) {
                let (next, nc, prev, pc) = ends(child);
                child = if nc < pc { next } else { prev };
            } else if !linked(child) {
                let (next, nc, prev, pc) = ends(parent);
                parent = if pc < nc { prev } else { next };
            } else {
                unplaced.push(arc);
                continue;
            }
            // Never tie the two ends of one chain together.
            let far_end = |s: usize| {
                let mut x = s;
                if p[x].next.is_some() {
                    while let Some(y) = p[x].next {
                        x = y;
                    }
                } else {
                    while let Some(y) = p[x].prev {
                        x = y;
                    }
                }
                x
            };
            if far_end(parent) == child && far_end(child) == parent {
                unplaced.push(arc);
                continue;
            }
            let p = &mut self.place;
            if p[parent].next.is_some() {
                if p[child].next.is_none() {
                    p[parent].prev = Some(child);
                    p[child].next = Some(parent);
                    self.arc_placed[arc] = true;
                }
            } else if p[parent].prev.is_some() {
                if p[child].prev.is_none() {
                    p[parent].next = Some(child);
                    p[child].prev = Some(parent);
                    self.arc_placed[arc] = true;
                }
            } else if p[child].prev.is_some() {
                p[parent].prev = Some(child);
                p[child].next = Some(parent);
                self.arc_placed[arc] = true;
            } else {
                p[parent].next = Some(child);
                p[child].prev = Some(parent);
                self.arc_placed[arc] = true;
            }
        }
        let syms = &self.a.symtab.syms;
        for &arc in the_arcs {
            let (parent, child) = (arcs[arc].parent, arcs[arc].child);
            if self.place[parent].placed || self.place[child].placed {
                continue;
            }
            let mut sym = parent;
            if self.place[sym].next.is_none() && self.place[sym].prev.is_none() {
                continue;
            }
            while let Some(x) = self.place[sym].prev {
                sym = x;
            }
            let mut at = Some(sym);
            while let Some(s) = at {
                self.place[s].placed = true;
                out.extend_from_slice(syms[s].name);
                out.push(b'\n');
                at = self.place[s].next;
            }
        }
        if all {
            for &arc in the_arcs {
                let (parent, child) = (arcs[arc].parent, arcs[arc].child);
                if self.place[parent].placed || self.place[child].placed {
                    continue;
                }
                self.place[parent].placed = true;
                out.extend_from_slice(syms[parent].name);
                out.push(b'\n');
            }
        }
    }
}
