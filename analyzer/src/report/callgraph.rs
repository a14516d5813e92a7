//! The default report's call graph: every function with its callers and callees, call counts
//! and the share of time propagated along each arc, demangled names, cycles named.
//!
//! The numbers follow gprof's model ([`crate::profile::callgraph`], this crate's own
//! implementation over the default report's functions): self time is measured (samples), call counts are counted (mcount),
//! but **children time is an estimate**. A function's time is handed to its callers in
//! proportion to their call counts, as if every call cost the same; when one caller makes
//! the expensive calls and another the cheap ones, both shares are wrong. The report says so
//! in plain words above the graph, and marks estimated columns with `~`.
//!
//! What gprof drops silently is accounted for here:
//!
//! * **Calls from unknown callers** (a caller address in a shared library, in the PLT, in
//!   code without a symbol): the calls still count for the callee, and appear as one
//!   `<callers outside known functions>` line; their share of time is propagated nowhere.
//! * **Arcs whose callee is outside every function**: counted in the notes (how many arcs,
//!   how many calls), since they cannot appear in the graph.
//! * **Zero-count arcs** (from a static call graph or a merge): shown with count 0, with a
//!   note saying they carry no time.
//! * **No histogram**: every time is zero; a note says only call counts are known.
//!
//! # JSON (`--json`, field `"call_graph"`)
//!
//! ```text
//! {
//!   "estimate_note": string,          // the warning about children time, verbatim
//!   "total_seconds": number,          // self time of all functions in the graph
//!   "functions": [ {
//!       "id": n,                      // 1-based, the [n] of the text report (time order)
//!       "name": string, "raw_name": string, "location": string|null,
//!       "cycle": n|null,              // cycle number, when in a cycle
//!       "percent": number,            // (self + children) / total_seconds * 100
//!       "self_seconds": number,
//!       "children_seconds": number,   // estimated (see estimate_note)
//!       "calls": n,                   // calls from other functions (self-recursion excluded)
//!       "self_calls": n,              // direct self-recursive calls
//!       "calls_from_unknown": n } ],  // part of "calls" whose caller is not a known function
//!   "arcs": [ {
//!       "caller": id, "callee": id,   // ids of "functions"
//!       "count": n,
//!       "within_cycle": bool,         // caller and callee in the same cycle: no time share
//!       "self_seconds": number,       // estimated share of the callee's self time
//!       "children_seconds": number } ],// estimated share of the callee's children time
//!   "cycles": [ {
//!       "number": n, "members": [id, ...],
//!       "calls": n,                   // calls into the cycle from outside it
//!       "internal_calls": n,          // calls between members
//!       "self_seconds": number, "children_seconds": number, "percent": number } ],
//!   "unplaced_arcs": { "arcs": n, "calls": n },  // callee outside every function
//!   "zero_count_arcs": n,
//!   "notes": [string, ...]
//! }
//! ```

use crate::profile::callgraph::{Entry, EqualCost};

/// Label of the callers that are not known functions.
pub const UNKNOWN_CALLERS: &str = "<callers outside known functions>";

/// An arc whose callee address is in no function.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UnplacedArc {
    /// Caller address (link-time).
    pub from: u64,
    /// Callee address (link-time).
    pub to: u64,
    /// Calls.
    pub count: u64,
}

/// One function of the graph.
#[derive(Debug, Clone)]
pub struct Function {
    /// 1-based id, in order of total time.
    pub id: usize,
    /// Demangled name.
    pub name: String,
    /// Symbol name.
    pub raw_name: String,
    /// `file:line`, when known.
    pub location: Option<String>,
    /// Cycle number.
    pub cycle: Option<usize>,
    /// Measured self time.
    pub self_seconds: f64,
    /// Estimated time of callees.
    pub children_seconds: f64,
    /// Calls from other functions (and from unknown callers).
    pub calls: u64,
    /// Direct self-recursive calls.
    pub self_calls: u64,
    /// Calls whose caller is not a known function.
    pub calls_from_unknown: u64,
}

/// One arc between two functions of the graph.
#[derive(Debug, Clone)]
pub struct Arc {
    /// Caller id.
    pub caller: usize,
    /// Callee id.
    pub callee: usize,
    /// Calls.
    pub count: u64,
    /// Both ends in the same cycle.
    pub within_cycle: bool,
    /// Estimated share of the callee's self time.
    pub self_seconds: f64,
    /// Estimated share of the callee's children time.
    pub children_seconds: f64,
}

/// A cycle: functions that call each other (directly or not).
#[derive(Debug, Clone)]
pub struct Cycle {
    /// Cycle number (1.., as gprof numbers them).
    pub number: usize,
    /// Member ids, most total time first.
    pub members: Vec<usize>,
    /// Calls into the cycle from outside.
    pub calls: u64,
    /// Calls between members.
    pub internal_calls: u64,
    /// Self time of all members.
    pub self_seconds: f64,
    /// Estimated time of callees outside the cycle.
    pub children_seconds: f64,
}

/// The call graph of the default report.
#[derive(Debug, Clone, Default)]
pub struct Graph {
    /// Self time of all functions.
    pub total_seconds: f64,
    /// Functions that were called or have arcs, by total time (a function with samples but
    /// no calls and no arcs is only in the flat profile).
    pub functions: Vec<Function>,
    /// Arcs, grouped by caller in function order.
    pub arcs: Vec<Arc>,
    /// Cycles by number.
    pub cycles: Vec<Cycle>,
    /// Arcs (and their calls) whose callee is in no function.
    pub unplaced_arcs: (usize, u64),
    /// Arcs with a zero count.
    pub zero_count_arcs: usize,
    /// Plain-language notes on what the graph cannot show.
    pub notes: Vec<String>,
}

impl Graph {
    /// Collect the graph from an assembled [`EqualCost`] (node `i` is the default report's
    /// function `i`, named `name(i)`). `hz` converts samples to seconds; `location(i)` gives a
    /// function's `file:line`; `unplaced` are the arcs whose callee is in no function.
    pub fn build<'a>(
        cg: &EqualCost,
        name: impl Fn(usize) -> &'a [u8],
        hz: u32,
        has_histogram: bool,
        unplaced: &[UnplacedArc],
        location: impl Fn(usize) -> Option<String>,
    ) -> Graph {
        let hz = if hz == 0 { 1.0 } else { f64::from(hz) };
        let n = cg.nodes.len();
        let nodes = &cg.nodes;
        let in_graph = |i: usize| {
            let nd = &nodes[i];
            nd.calls != 0 || nd.self_calls != 0 || !nd.children.is_empty() || !nd.parents.is_empty()
        };
        let mut id = vec![0usize; n];
        // Sized for every node up front: growing a vector of 10,000 functions by doubling
        // copies it again and again (capacity that is never written costs no memory).
        let mut functions = Vec::with_capacity(n);
        let mut order = Vec::with_capacity(n);
        for &entry in &cg.time_order {
            let Entry::Function(node) = entry else {
                continue;
            };
            if !in_graph(node) {
                continue;
            }
            let nd = &nodes[node];
            order.push(node);
            id[node] = order.len();
            let raw = String::from_utf8_lossy(name(node)).into_owned();
            let known: u64 = nd
                .parents
                .iter()
                .map(|&a| &cg.arcs[a])
                .filter(|a| a.parent != node)
                .fold(0u64, |s, a| s.wrapping_add(a.count));
            functions.push(Function {
                id: id[node],
                name: profil_symbols::demangle::display_name(&raw).into_owned(),
                raw_name: raw,
                location: location(node),
                cycle: nd.cycle,
                self_seconds: nd.prop_self / hz,
                children_seconds: nd.prop_child / hz,
                calls: nd.calls,
                self_calls: nd.self_calls,
                calls_from_unknown: nd.calls.saturating_sub(known),
            });
        }
        let mut arcs = Vec::new();
        let mut zero_count_arcs = 0;
        for (f, &node) in functions.iter().zip(&order) {
            for &a in &nodes[node].children {
                let a = &cg.arcs[a];
                if a.count == 0 {
                    zero_count_arcs += 1;
                }
                let (pc, cc) = (nodes[a.parent].cycle, nodes[a.child].cycle);
                arcs.push(Arc {
                    caller: f.id,
                    callee: id[a.child],
                    count: a.count,
                    within_cycle: a.parent == a.child || (pc.is_some() && pc == cc),
                    self_seconds: a.time / hz,
                    children_seconds: a.child_time / hz,
                });
            }
        }
        let mut cycles = Vec::new();
        for c in &cg.cycles {
            let mut members: Vec<usize> = c
                .members
                .iter()
                .map(|&m| id[m])
                .filter(|&m| m != 0)
                .collect();
            members.sort_unstable();
            cycles.push(Cycle {
                number: c.number,
                members,
                calls: c.calls,
                internal_calls: c.internal_calls,
                self_seconds: c.prop_self / hz,
                children_seconds: c.prop_child / hz,
            });
        }
        // Counts are summed saturating: a crafted or merged profile can hold arcs whose counts
        // add up past 2^64, and a total that wrapped would read as a small number.
        let unplaced_calls = unplaced.iter().fold(0u64, |s, a| s.saturating_add(a.count));
        let mut notes = Vec::new();
        if !has_histogram {
            notes.push(
                "The profile has no histogram: every time below is zero and only the call \
                 counts are meaningful."
                    .to_owned(),
            );
        }
        let unknown = functions
            .iter()
            .fold(0u64, |s, f| s.saturating_add(f.calls_from_unknown));
        if unknown != 0 {
            notes.push(format!(
                "{unknown} calls came from code outside the known functions (shared \
                 libraries, PLT stubs, code without symbols): they are listed as \
                 {UNKNOWN_CALLERS}, and their share of time is given to no caller."
            ));
        }
        if !unplaced.is_empty() {
            notes.push(format!(
                "{} arcs ({unplaced_calls} calls) lead to addresses outside every function \
                 and are not in the graph (a profile of another build, or calls into code \
                 without symbols).",
                unplaced.len()
            ));
        }
        if zero_count_arcs != 0 {
            notes.push(format!(
                "{zero_count_arcs} arcs have a zero count (from a static call graph or a \
                 merge); they are shown with 0 calls and carry no time."
            ));
        }
        Graph {
            total_seconds: cg.total / hz,
            functions,
            arcs,
            cycles,
            unplaced_arcs: (unplaced.len(), unplaced_calls),
            zero_count_arcs,
            notes,
        }
    }

    pub(crate) fn function(&self, id: usize) -> &Function {
        &self.functions[id - 1]
    }

    /// Calls into `id` from outside its cycle: its own calls, or its cycle's (cycles are
    /// numbered 1.. in `cycles` order).
    pub(crate) fn calls_into(&self, id: usize) -> u64 {
        let f = self.function(id);
        f.cycle
            .and_then(|c| self.cycles.get(c.wrapping_sub(1)))
            .map_or(f.calls, |c| c.calls)
    }

    /// The same graph with its seconds at another rate: `from_hz` the rate it was built with,
    /// `to_hz` the report's (the clock's nominal rate, once a manifest gives it).
    pub fn at_rate(&mut self, from_hz: u32, to_hz: u32) {
        if from_hz == to_hz || to_hz == 0 {
            return;
        }
        let k = f64::from(from_hz.max(1)) / f64::from(to_hz);
        self.total_seconds *= k;
        for f in &mut self.functions {
            f.self_seconds *= k;
            f.children_seconds *= k;
        }
        for a in &mut self.arcs {
            a.self_seconds *= k;
            a.children_seconds *= k;
        }
        for c in &mut self.cycles {
            c.self_seconds *= k;
            c.children_seconds *= k;
        }
    }

    pub(crate) fn percent(&self, seconds: f64) -> f64 {
        if self.total_seconds > 0.0 {
            100.0 * seconds / self.total_seconds
        } else {
            0.0
        }
    }
}
