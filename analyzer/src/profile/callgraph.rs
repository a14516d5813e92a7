//! Call counts and the equal-cost estimate of inclusive time, for the default report's call
//! graph of `-pg` profiles (counted arcs): this crate's own implementation of the model gprof
//! documents, independent of the byte-identical emulation in [`crate::gprof`], so that a
//! bug-for-bug change there cannot move the default report.
//!
//! The model: a function's self time is measured (samples); calls are counted; a function's
//! time and its descendants' ("children") time is handed to its callers in proportion to how
//! many of its calls each made — as if every call cost the same. Functions that call each other
//! (strongly connected components of the call graph) form a *cycle*, which is treated as one
//! node: calls between its members carry no time.
//!
//! The conventions are gprof's (facts of its documented output that users compare against):
//!
//! * direct self-recursion is not a call (`self_calls`) and never makes a cycle;
//! * the graph is searched depth first from each function in address order, following each
//!   function's arcs newest first; cycles are found as strongly connected components (Tarjan)
//!   and numbered 1.. in the order of the function through which the search entered them;
//! * the share of a function's time that reaches the graph's total is the sum over its
//!   callers of their share × their fraction of its calls; functions without a known caller
//!   keep all of it;
//! * rows are ordered by self + children time, cycles first on ties, then names not starting
//!   with `_`, more calls, the name, and the position.

use std::cmp::Ordering;

/// One function of the graph.
#[derive(Debug, Clone, Default)]
pub struct Node {
    /// Self samples.
    pub time: f64,
    /// Calls from other functions (self-recursion removed), including unknown callers.
    pub calls: u64,
    /// Direct self-recursive calls.
    pub self_calls: u64,
    /// Cycle number (1..), when in a cycle.
    pub cycle: Option<usize>,
    /// The share of this function's time that its callers pass on (1 without known callers).
    pub fraction: f64,
    /// `time × fraction`.
    pub prop_self: f64,
    /// The children time passed on to this function by its callees, × `fraction`.
    pub prop_child: f64,
    /// The children time passed on to this function by its callees.
    pub child_time: f64,
    /// Outgoing arcs, newest first (indices into [`EqualCost::arcs`]).
    pub children: Vec<usize>,
    /// Incoming arcs, newest first.
    pub parents: Vec<usize>,
    /// Position in the depth-first completion order (callees before callers; a cycle's
    /// members share one).
    order: usize,
}

/// One caller→callee arc.
#[derive(Debug, Clone)]
pub struct Arc {
    /// Caller.
    pub parent: usize,
    /// Callee.
    pub child: usize,
    /// Calls.
    pub count: u64,
    /// The callee's (or its cycle's) self time passed to the caller along this arc.
    pub time: f64,
    /// The callee's (or its cycle's) children time passed along this arc.
    pub child_time: f64,
}

/// A cycle: functions that call each other.
#[derive(Debug, Clone, Default)]
pub struct Cycle {
    /// 1-based number.
    pub number: usize,
    /// Member functions, ascending.
    pub members: Vec<usize>,
    /// Calls into the cycle from outside it.
    pub calls: u64,
    /// Calls between members.
    pub internal_calls: u64,
    /// The members' self samples.
    pub time: f64,
    /// The share passed on, as for a function.
    pub fraction: f64,
    /// `time × fraction`.
    pub prop_self: f64,
    /// Children time × fraction.
    pub prop_child: f64,
    /// Children time of the whole cycle.
    pub child_time: f64,
}

/// An entry of [`EqualCost::time_order`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Entry {
    /// A function (index).
    Function(usize),
    /// A cycle (index into [`EqualCost::cycles`]).
    Cycle(usize),
}

/// Counted arcs collected before [`Builder::finish`] propagates time.
#[derive(Debug, Clone, Default)]
pub struct Builder {
    nodes: Vec<Node>,
    arcs: Vec<Arc>,
    pair: std::collections::HashMap<(usize, usize), usize>,
}

impl Builder {
    /// A graph of `n` functions without arcs.
    pub fn new(n: usize) -> Builder {
        Builder {
            nodes: vec![Node::default(); n],
            ..Builder::default()
        }
    }

    /// `count` calls into `child`, whoever the caller (also those not in the graph).
    pub fn calls_into(&mut self, child: usize, count: u64) {
        let c = &mut self.nodes[child].calls;
        *c = c.wrapping_add(count);
    }

    /// `count` calls from `parent` to `child` (added to an existing arc between them).
    pub fn arc(&mut self, parent: usize, child: usize, count: u64) {
        if let Some(&i) = self.pair.get(&(parent, child)) {
            self.arcs[i].count = self.arcs[i].count.wrapping_add(count);
            return;
        }
        let i = self.arcs.len();
        self.arcs.push(Arc {
            parent,
            child,
            count,
            time: 0.0,
            child_time: 0.0,
        });
        self.pair.insert((parent, child), i);
    }

    /// Propagate `time[i]` (self samples of function `i`) along the arcs; `name(i)` orders
    /// ties.
    pub fn finish<'a>(self, time: &[f64], name: impl Fn(usize) -> &'a [u8]) -> EqualCost {
        let Builder {
            mut nodes, arcs, ..
        } = self;
        for (i, a) in arcs.iter().enumerate().rev() {
            nodes[a.parent].children.push(i);
            nodes[a.child].parents.push(i);
        }
        for (i, x) in nodes.iter_mut().enumerate() {
            x.time = time.get(i).copied().unwrap_or(0.0);
        }
        for a in &arcs {
            if a.parent == a.child {
                let x = &mut nodes[a.child];
                x.self_calls = a.count;
                x.calls = x.calls.wrapping_sub(a.count);
            }
        }
        let mut g = EqualCost {
            nodes,
            arcs,
            cycles: Vec::new(),
            time_order: Vec::new(),
            total: 0.0,
        };
        g.find_cycles();
        let order = g.callees_first();
        g.propagate_fractions(&order);
        g.propagate_time(&order);
        g.time_order = g.sorted_by_time(&name);
        g
    }
}

/// The assembled graph.
#[derive(Debug, Clone, Default)]
pub struct EqualCost {
    /// Functions.
    pub nodes: Vec<Node>,
    /// Arcs, in the order first added.
    pub arcs: Vec<Arc>,
    /// Cycles by number − 1.
    pub cycles: Vec<Cycle>,
    /// Functions and cycles by propagated time (the graph's order).
    pub time_order: Vec<Entry>,
    /// The sum of every function's `prop_self`: the graph's 100%.
    pub total: f64,
}

impl EqualCost {
    /// Strongly connected components by an iterative Tarjan search from each function in
    /// index order, arcs newest first; `order` is the completion order (callees first).
    fn find_cycles(&mut self) {
        let n = self.nodes.len();
        const UNSEEN: usize = usize::MAX;
        let mut index = vec![UNSEEN; n];
        let mut low = vec![0usize; n];
        let mut on_stack = vec![false; n];
        let mut stack = Vec::new();
        let mut next_index = 0;
        let mut completed = 0;
        // Components with more than one member, by their root (the member entered first).
        let mut components: Vec<(usize, Vec<usize>)> = Vec::new();
        for root in 0..n {
            if index[root] != UNSEEN {
                continue;
            }
            let mut frames: Vec<(usize, usize)> = vec![(root, 0)];
            index[root] = next_index;
            low[root] = next_index;
            next_index += 1;
            stack.push(root);
            on_stack[root] = true;
            while let Some(&mut (v, ref mut k)) = frames.last_mut() {
                if let Some(&a) = self.nodes[v].children.get(*k) {
                    *k += 1;
                    let w = self.arcs[a].child;
                    if index[w] == UNSEEN {
                        index[w] = next_index;
                        low[w] = next_index;
                        next_index += 1;
                        stack.push(w);
                        on_stack[w] = true;
                        frames.push((w, 0));
                    } else if on_stack[w] {
                        low[v] = low[v].min(index[w]);
                    }
                    continue;
                }
                frames.pop();
                if let Some(&(parent, _)) = frames.last() {
                    low[parent] = low[parent].min(low[v]);
                }
                if low[v] == index[v] {
                    completed += 1;
                    let mut members = Vec::new();
                    while let Some(w) = stack.pop() {
                        on_stack[w] = false;
                        self.nodes[w].order = completed;
                        members.push(w);
                        if w == v {
                            break;
                        }
                    }
                    if members.len() > 1 {
                        members.sort_unstable();
                        components.push((v, members));
                    }
                }
            }
        }
        components.sort_unstable_by_key(|c| c.0);
        for (k, (_, members)) in components.into_iter().enumerate() {
            let number = k + 1;
            let mut cycle = Cycle {
                number,
                ..Cycle::default()
            };
            for &m in &members {
                self.nodes[m].cycle = Some(number);
            }
            for &m in &members {
                for &a in &self.nodes[m].parents {
                    let (p, count) = (self.arcs[a].parent, self.arcs[a].count);
                    if p == m {
                        continue;
                    }
                    if self.nodes[p].cycle == Some(number) {
                        cycle.internal_calls = cycle.internal_calls.wrapping_add(count);
                    } else {
                        cycle.calls = cycle.calls.wrapping_add(count);
                    }
                }
            }
            cycle.members = members;
            self.cycles.push(cycle);
        }
    }

    /// Functions by completion order, ties by index: callees before their callers.
    fn callees_first(&self) -> Vec<usize> {
        let mut v: Vec<usize> = (0..self.nodes.len()).collect();
        v.sort_by_key(|&i| (self.nodes[i].order, i));
        v
    }

    /// Each function's (and cycle's) fraction, callers first (`order`, the
    /// callees-first order, walked backwards); then `prop_self` and the total.
    fn propagate_fractions(&mut self, order: &[usize]) {
        let mut done_cycle = vec![false; self.cycles.len()];
        self.total = 0.0;
        for &f in order.iter().rev() {
            match self.nodes[f].cycle {
                None => {
                    let calls = self.nodes[f].calls;
                    let mut fraction = 0.0;
                    for &a in &self.nodes[f].parents {
                        let (p, count) = (self.arcs[a].parent, self.arcs[a].count);
                        if p != f && calls != 0 {
                            fraction += self.nodes[p].fraction * (count as f64 / calls as f64);
                        }
                    }
                    self.nodes[f].fraction = fraction;
                }
                Some(c) if !done_cycle[c - 1] => {
                    done_cycle[c - 1] = true;
                    let calls = self.cycles[c - 1].calls;
                    let mut fraction = 0.0;
                    for &m in &self.cycles[c - 1].members {
                        for &a in &self.nodes[m].parents {
                            let (p, count) = (self.arcs[a].parent, self.arcs[a].count);
                            if self.nodes[p].cycle != Some(c) && calls != 0 {
                                fraction += self.nodes[p].fraction * (count as f64 / calls as f64);
                            }
                        }
                    }
                    self.cycles[c - 1].fraction = fraction;
                    for &m in &self.cycles[c - 1].members {
                        self.nodes[m].fraction = fraction;
                    }
                }
                Some(_) => {}
            }
            let x = &mut self.nodes[f];
            if x.fraction == 0.0 {
                x.fraction = 1.0;
            }
            x.prop_self = x.time * x.fraction;
            self.total += x.prop_self;
        }
        for c in &mut self.cycles {
            c.time = c
                .members
                .iter()
                .map(|&m| &self.nodes[m])
                .filter(|x| x.fraction != 0.0)
                .map(|x| x.time)
                .sum();
            c.prop_self = c.fraction * c.time;
        }
    }

    /// Children time, callees first: each caller gets, along each arc, the callee's (or its
    /// cycle's) self and children time × the arc's share of the callee's calls.
    fn propagate_time(&mut self, order: &[usize]) {
        for &parent in order {
            let fraction = self.nodes[parent].fraction;
            if fraction == 0.0 {
                continue;
            }
            let pcycle = self.nodes[parent].cycle;
            for k in 0..self.nodes[parent].children.len() {
                let a = self.nodes[parent].children[k];
                let (child, count) = (self.arcs[a].child, self.arcs[a].count);
                if count == 0 || child == parent || self.nodes[child].fraction == 0.0 {
                    continue;
                }
                let (calls, time, child_time) = match self.nodes[child].cycle {
                    Some(c) => {
                        if pcycle == Some(c) {
                            continue;
                        }
                        let cy = &self.cycles[c - 1];
                        (cy.calls, cy.time, cy.child_time)
                    }
                    None => {
                        if self.nodes[parent].order <= self.nodes[child].order {
                            continue;
                        }
                        let x = &self.nodes[child];
                        (x.calls, x.time, x.child_time)
                    }
                };
                if calls == 0 {
                    continue;
                }
                let ratio = count as f64 / calls as f64;
                let (t, ct) = (time * ratio, child_time * ratio);
                let share = t + ct;
                let p = &mut self.nodes[parent];
                p.child_time += share;
                p.prop_child += fraction * share;
                self.arcs[a].time = t * fraction;
                self.arcs[a].child_time = ct * fraction;
                if let Some(c) = pcycle {
                    let cy = &mut self.cycles[c - 1];
                    cy.child_time += share;
                    cy.prop_child += fraction * share;
                }
            }
        }
    }

    /// Functions and cycles by self + children time (see the module docs for ties).
    fn sorted_by_time<'a>(&self, name: &impl Fn(usize) -> &'a [u8]) -> Vec<Entry> {
        // Keys computed once (the comparison runs n log n times): total, is a cycle, name
        // starts with `_`, calls, name, position.
        type Key<'k> = (f64, bool, bool, u64, &'k [u8], usize, Entry);
        let mut keys: Vec<Key<'a>> = (0..self.nodes.len())
            .map(|i| {
                let (x, nm) = (&self.nodes[i], name(i));
                let total = x.prop_self + x.prop_child;
                (
                    total,
                    false,
                    nm.first() == Some(&b'_'),
                    x.calls,
                    nm,
                    i,
                    Entry::Function(i),
                )
            })
            .chain(self.cycles.iter().enumerate().map(|(k, c)| {
                let total = c.prop_self + c.prop_child;
                (
                    total,
                    true,
                    false,
                    0,
                    &b""[..],
                    self.nodes.len() + k,
                    Entry::Cycle(k),
                )
            }))
            .collect();
        keys.sort_unstable_by(|l, r| {
            r.0.partial_cmp(&l.0)
                .unwrap_or(Ordering::Equal)
                .then(r.1.cmp(&l.1))
                .then(l.2.cmp(&r.2))
                .then(r.3.cmp(&l.3))
                .then(l.4.cmp(r.4))
                .then(l.5.cmp(&r.5))
        });
        keys.into_iter().map(|k| k.6).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph(n: usize, time: &[f64], arcs: &[(usize, usize, u64)]) -> EqualCost {
        let mut b = Builder::new(n);
        for &(p, c, k) in arcs {
            b.calls_into(c, k);
            b.arc(p, c, k);
        }
        let names: Vec<Vec<u8>> = (0..n).map(|i| format!("f{i}").into_bytes()).collect();
        b.finish(time, |i| &names[i])
    }

    #[test]
    fn time_is_shared_by_call_counts() {
        // main(0) calls a(1) 3 times and b(2) once; both call work(3), 1 and 3 times.
        let g = graph(
            4,
            &[0.0, 0.0, 0.0, 8.0],
            &[(0, 1, 3), (0, 2, 1), (1, 3, 1), (2, 3, 3)],
        );
        assert_eq!(g.nodes[1].child_time, 2.0);
        assert_eq!(g.nodes[2].child_time, 6.0);
        assert_eq!(g.nodes[0].child_time, 8.0);
        assert_eq!(g.total, 8.0);
        // Ties (work and main: 8 each) go to more calls.
        use Entry::Function as F;
        assert_eq!(g.time_order, [F(3), F(0), F(2), F(1)]);
    }

    #[test]
    fn self_recursion_is_neither_a_call_nor_a_cycle() {
        let g = graph(2, &[1.0, 4.0], &[(0, 1, 2), (1, 1, 5)]);
        assert_eq!(g.nodes[1].calls, 2);
        assert_eq!(g.nodes[1].self_calls, 5);
        assert!(g.cycles.is_empty());
        assert_eq!(g.nodes[0].child_time, 4.0);
    }

    #[test]
    fn mutual_recursion_is_one_cycle_whose_inner_calls_carry_no_time() {
        // 0 → 1 ⇄ 2, 2 → 3.
        let g = graph(
            4,
            &[1.0, 2.0, 3.0, 4.0],
            &[(0, 1, 1), (1, 2, 10), (2, 1, 9), (2, 3, 2)],
        );
        assert_eq!(g.cycles.len(), 1);
        let c = &g.cycles[0];
        assert_eq!(c.members, [1, 2]);
        assert_eq!((c.calls, c.internal_calls), (1, 19));
        assert_eq!(c.time, 5.0);
        assert_eq!(c.child_time, 4.0);
        assert_eq!(g.nodes[0].child_time, 9.0);
        assert_eq!(g.arcs[1].time, 0.0, "inside the cycle");
        // main 1 + 9; the cycle 5 + 4, before its members (3 + 4 and 2 + 0 after propagation
        // through the cycle's own arcs, which carry nothing).
        assert_eq!(g.time_order[..2], [Entry::Function(0), Entry::Cycle(0)]);
    }

    #[test]
    fn unknown_callers_keep_their_share_out_of_the_total() {
        // 1 is called twice by 0 and twice from outside the graph.
        let mut b = Builder::new(2);
        b.calls_into(1, 4);
        b.arc(0, 1, 2);
        let g = b.finish(&[0.0, 4.0], |_| b"f");
        assert_eq!(g.nodes[1].fraction, 0.5);
        assert_eq!(g.nodes[1].prop_self, 2.0);
        assert_eq!(g.nodes[0].child_time, 2.0);
    }

    /// The model against the `--gprof` emulation's own implementation (kept apart on purpose):
    /// on random graphs with cycles, self-recursion, unknown callers and zero counts, both give
    /// the same cycles, order, fractions and times.
    #[test]
    fn agrees_with_the_emulation_on_random_graphs() {
        use crate::gprof::cg::{CallGraph, Exclusions};
        use crate::gprof::symtab::{Sym, SymTab};
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut rnd = |m: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % m
        };
        for _ in 0..300 {
            let n = 1 + rnd(12) as usize;
            let names: Vec<String> = (0..n)
                .map(|i| {
                    format!(
                        "{}f{}",
                        if rnd(4) == 0 { "_" } else { "" },
                        rnd(5) + i as u64
                    )
                })
                .collect();
            let t = SymTab {
                syms: (0..n)
                    .map(|i| Sym {
                        name: names[i].as_bytes(),
                        addr: 0x100 * (i as u64 + 1),
                        end_addr: 0x100 * (i as u64 + 2) - 1,
                        is_func: true,
                        is_static: false,
                        mapped: false,
                    })
                    .collect(),
                after_last: None,
            };
            let time: Vec<f64> = (0..n).map(|_| rnd(6) as f64 * 0.5).collect();
            let mut theirs = CallGraph::new(&t);
            let mut ours = Builder::new(n);
            for _ in 0..rnd(3 * n as u64 + 1) {
                let (p, c, k) = (rnd(n as u64) as usize, rnd(n as u64) as usize, rnd(4));
                theirs.nodes[c].ncalls = theirs.nodes[c].ncalls.wrapping_add(k);
                ours.calls_into(c, k);
                if rnd(5) == 0 {
                    continue; // an unknown caller
                }
                theirs.arc_add(&t, p, c, k);
                ours.arc(p, c, k);
            }
            theirs.assemble(&t, &time, &Exclusions::default());
            let ours = ours.finish(&time, |i| names[i].as_bytes());
            let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * (1.0 + a.abs());
            assert_eq!(ours.cycles.len(), theirs.num_cycles, "{names:?}");
            assert!(close(ours.total, theirs.print_time));
            for i in 0..n {
                let (a, b) = (&ours.nodes[i], &theirs.nodes[i]);
                assert_eq!(
                    a.cycle,
                    (b.cyc_num != 0).then_some(b.cyc_num as usize),
                    "node {i}"
                );
                assert_eq!((a.calls, a.self_calls), (b.ncalls, b.self_calls));
                assert!(close(a.prop_self, b.prop_self), "node {i}");
                assert!(close(a.prop_child, b.prop_child), "node {i}");
                assert!(close(a.child_time, b.child_time), "node {i}");
            }
            for (k, c) in ours.cycles.iter().enumerate() {
                let b = &theirs.nodes[n + k];
                assert_eq!((c.calls, c.internal_calls), (b.ncalls, b.self_calls));
                assert!(close(c.prop_self, b.prop_self) && close(c.prop_child, b.prop_child));
            }
            let order: Vec<usize> = ours
                .time_order
                .iter()
                .map(|e| match *e {
                    Entry::Function(i) => i,
                    Entry::Cycle(k) => n + k,
                })
                .collect();
            assert_eq!(order, theirs.time_sorted, "{names:?}");
            for a in &ours.arcs {
                let b = theirs
                    .children(a.parent)
                    .map(|i| &theirs.arcs[i])
                    .find(|b| b.child == a.child)
                    .expect("the same arc");
                assert_eq!(a.count, b.count);
                assert!(close(a.time, b.time) && close(a.child_time, b.child_time));
            }
        }
    }
}
