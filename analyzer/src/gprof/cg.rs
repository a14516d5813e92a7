//! gprof 2.40's call-graph core: `cg_tally`, `arc_add`, and `cg_assemble` (self-call
//! removal, depth-first numbering with cycle detection, cycle nodes, propagation of flags,
//! fractions and times).
//!
//! The structures keep gprof's exact shapes, because both the flat profile's `total/call`
//! and the call-graph printer (`gprof -q`) depend on them bit for bit:
//!
//! * Nodes `0..num_syms` are the symbols of [`SymTab`], in address order. After
//!   [`CallGraph::assemble`], nodes `num_syms..` are the cycle nodes ("`<cycle N>`"),
//!   numbered 1.. in the address order of their first member.
//! * Arcs are linked into per-node `children` and `parents` lists by **prepending**, as
//!   `arc_add` does; the depth-first search and every floating-point sum walk those lists in
//!   that order.
//! * `top_order` is gprof's post-order number (`DFN_NAN` = 0 before numbering); all members of
//!   a cycle share their head's number. `cyc_head` of a symbol is itself, or its cycle node
//!   once cycles are linked; `cyc_next` chains the members from the cycle node.

use std::cmp::Ordering;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use super::debug::{self, Trace};
use super::msort::{msort, name_ranks, ordered_bits};
use super::symspec::{SpecTables, Table};
use super::symtab::{AddrIndex, SymTab};

/// `top_order` of a node not yet visited.
pub const DFN_NAN: i64 = 0;
/// `top_order` of a node on the depth-first stack.
pub const DFN_BUSY: i64 = -1;

/// One arc (`Arc` in `cg_arcs.h`).
#[derive(Debug, Clone)]
pub struct Arc {
    /// Calling node.
    pub parent: usize,
    /// Called node (a function symbol).
    pub child: usize,
    /// Number of calls (summed over records and files).
    pub count: u64,
    /// Time propagated along this arc (after `propagate_time`, scaled by the parent's fraction).
    pub time: f64,
    /// Child time propagated along this arc.
    pub child_time: f64,
    /// Next arc in the parent's `children` list.
    pub next_child: Link,
    /// Next arc in the child's `parents` list.
    pub next_parent: Link,
}

/// A link to an arc or a node (an index) or none, in 4 bytes: under `-l` there are hundreds
/// of thousands of nodes, and every pass over them reads memory; an `Option<usize>` takes 16.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Link(u32);

impl Link {
    /// No link.
    pub const NONE: Link = Link(u32::MAX);

    /// A link to `i` (below `u32::MAX`: the tables are indexed by symbol and arc, and a
    /// symbol table of 4 billion entries does not fit in memory).
    pub fn to(i: usize) -> Link {
        debug_assert!(i < u32::MAX as usize);
        Link(i as u32)
    }

    /// The index linked to, if any.
    pub fn get(self) -> Option<usize> {
        (self != Link::NONE).then_some(self.0 as usize)
    }

    /// Whether there is no link.
    pub fn is_none(self) -> bool {
        self == Link::NONE
    }

    /// Whether there is a link.
    pub fn is_some(self) -> bool {
        self != Link::NONE
    }
}

/// Per-node call-graph data (`Sym.ncalls` and `Sym.cg` in gprof).
#[derive(Debug, Clone)]
pub struct Node {
    /// Calls into this node (minus direct self-recursion after assembly; for a cycle node, calls
    /// from outside the cycle).
    pub ncalls: u64,
    /// Direct self-recursive calls (for a cycle node: calls between members).
    pub self_calls: u64,
    /// Self time in samples (`hist.time`; for a cycle node, the sum over its members).
    pub time: f64,
    /// Time inherited from descendants, in samples.
    pub child_time: f64,
    /// `prop.fract`: share of this node's time that is propagated to its parents.
    pub prop_fract: f64,
    /// `prop.self`.
    pub prop_self: f64,
    /// `prop.child`.
    pub prop_child: f64,
    /// Whether the call graph prints this node.
    pub print_flag: bool,
    /// Topological (post-order) number.
    pub top_order: i64,
    /// Cycle number (0: not in a cycle).
    pub cyc_num: u32,
    /// Head of this node's cycle (itself when not in a cycle).
    pub cyc_head: usize,
    /// Next member of the cycle.
    pub cyc_next: Link,
    /// First arc of the `children` list.
    pub children: Link,
    /// First arc of the `parents` list.
    pub parents: Link,
    /// `cg.index`: 1-based position in the call graph's time order (0 until assembled).
    pub index: u32,
}

impl Node {
    fn new(index: usize) -> Self {
        Node {
            ncalls: 0,
            self_calls: 0,
            time: 0.0,
            child_time: 0.0,
            prop_fract: 0.0,
            prop_self: 0.0,
            prop_child: 0.0,
            print_flag: false,
            top_order: DFN_NAN,
            cyc_num: 0,
            cyc_head: index,
            cyc_next: Link::NONE,
            children: Link::NONE,
            parents: Link::NONE,
            index: 0,
        }
    }
}

/// gprof's call graph over a symbol table.
#[derive(Debug, Clone)]
pub struct CallGraph {
    /// Symbol nodes, then (after assembly) cycle nodes.
    pub nodes: Vec<Node>,
    /// All arcs, in creation order (list order is given by the `next_*` links).
    pub arcs: Vec<Arc>,
    /// Number of symbol nodes.
    pub num_syms: usize,
    /// Number of cycles (cycle `k` is node `num_syms + k - 1`).
    pub num_cycles: usize,
    /// Symbol nodes sorted by `top_order` (stable).
    pub top_sorted: Vec<usize>,
    /// Symbols and cycle nodes sorted by propagated time (`cmp_total`), the call graph's order.
    pub time_sorted: Vec<usize>,
    /// Sum of `prop_self` over all symbols (`print_time`).
    pub print_time: f64,
    pair: HashMap<u64, usize, BuildHasherDefault<PairHasher>>,
    /// Link-time start address of every symbol, for `tally`'s lookups (a bucketed copy of
    /// `symtab.syms[..].addr`: a search touches a few addresses of one bucket).
    starts: AddrIndex,
    /// The symbol of the previous arc's caller (arcs come sorted by call site).
    last_parent: usize,
    /// Calls tallied into each symbol, added to its [`Node::ncalls`] when assembly starts
    /// (`cg_tally` adds them at once; sums do not depend on the order): a dense array of
    /// counts stays in cache where the nodes, 96 bytes each, do not.
    calls_in: Vec<u64>,
    /// The arc records of the gmon file being read, with what each became ([`Site`]).
    sites: Vec<Site>,
    /// The previous file's, and how far [`CallGraph::tally_if`] has matched them: the gmon
    /// files of one program list the same call sites in the same order (glibc writes them
    /// by call site), so a record is most often the next one of the previous file, and
    /// the look-ups of its two symbols and its arc (reads at random places of tables that
    /// under `-l` do not fit in a cache) are made once, not once per file.
    prev_sites: (Vec<Site>, usize),
    /// How many gmon files [`CallGraph::next_file`] has started.
    files_read: usize,
}

/// [`Site::child`] of a record whose arc was found by covering, not by its pair.
const UNSTABLE: u32 = u32::MAX;

/// An arc record's addresses and the arc its count went to (`arc`: [`Link::NONE`] when the
/// record was dropped), with the arc's child ([`UNSTABLE`]: look it up again).
#[derive(Debug, Clone, Copy)]
struct Site {
    from_pc: u64,
    self_pc: u64,
    arc: Link,
    child: u32,
}

/// The hasher of the arc map: keys are (parent, child) pairs packed into one `u64`, so a
/// multiplicative hash (as in Firefox's and rustc's FxHash) is enough; SipHash's
/// protection against chosen keys is not needed, since a key is a pair of symbol indices.
#[derive(Default)]
struct PairHasher(u64);

impl Hasher for PairHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }
    fn write_u64(&mut self, k: u64) {
        self.0 = (self.0.rotate_left(5) ^ k).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
    fn finish(&self) -> u64 {
        // hashbrown takes its control bits from the top and its bucket from the bottom.
        self.0 ^ (self.0 >> 29)
    }
}

/// The map key of the arc (parent, child).
fn pair_key(parent: usize, child: usize) -> u64 {
    ((parent as u64) << 32) ^ (child as u64)
}

/// What `-c` (`--static-call-graph`) scans: gprof's x86 `find_call`.
///
/// gprof does not decode instructions here: it walks a function's bytes one at a time and
/// takes every `0xe8` byte for a `call rel32`, reading the next 4 bytes as an *unsigned*
/// displacement (`bfd_get_32`). The target `pc + 5 + disp` counts only if it lies in a
/// histogram range, seen through a 32-bit parameter (`hist_check_address (unsigned)`), and a
/// symbol starts exactly there (looked up with the full 64-bit value). So on x86-64 a call
/// backwards (negative displacement) is never found: the 64-bit target is beyond every
/// symbol. After a hit the scan skips the 4 displacement bytes; after a miss it moves one
/// byte on, so `0xe8` bytes inside other instructions are tried too. A function's scan is
/// clipped to the histogram range it overlaps (none: nothing is scanned); bytes outside
/// `.text` (gprof reads outside its copy of the section there) count as no call.
#[derive(Debug, Clone)]
pub struct StaticCalls<'a> {
    /// `.text`: its link-time address and bytes.
    pub text: (u64, &'a [u8]),
    /// The histogram ranges `[low, high)`.
    pub ranges: Vec<(u64, u64)>,
}

impl StaticCalls<'_> {
    /// The symbols `[low, high)`'s code calls directly, in the order gprof adds the arcs.
    fn find(&self, symtab: &SymTab<'_>, low: u64, high: u64) -> Vec<usize> {
        let mut clipped = None;
        for &(lo, hi) in &self.ranges {
            let (l, h) = (lo.max(low), hi.min(high));
            if l < h {
                // gprof gives up ("a symbol that covers several histogram records") if a
                // second range overlaps; the first is kept here.
                clipped.get_or_insert((l, h));
            }
        }
        let Some((low, high)) = clipped else {
            return Vec::new();
        };
        let (vma, bytes) = self.text;
        let byte = |pc: u64| -> Option<u8> {
            let off = pc.checked_sub(vma)?;
            bytes.get(usize::try_from(off).ok()?).copied()
        };
        let mut found = Vec::new();
        let mut pc = low;
        while pc < high {
            if byte(pc) == Some(0xe8) {
                let disp = (1..5).try_fold(0u32, |acc, k| {
                    byte(pc + k).map(|b| acc | u32::from(b) << (8 * (k - 1)))
                });
                if let Some(disp) = disp {
                    let dest = u64::from(disp).wrapping_add(pc).wrapping_add(5);
                    let dest32 = dest & 0xffff_ffff;
                    let in_hist = self.ranges.iter().any(|&(l, h)| l <= dest32 && dest32 < h);
                    if in_hist {
                        if let Some(child) =
                            symtab.lookup(dest).filter(|&c| symtab.syms[c].addr == dest)
                        {
                            found.push(child);
                            pc += 5;
                            continue;
                        }
                    }
                }
            }
            pc += 1;
        }
        found
    }
}

/// Which symbols are excluded from time propagation and from the printed graph, per symbol
/// (from the INCL/EXCL_TIME and INCL/EXCL_GRAPH tables, [`super::symspec::Pair`]).
#[derive(Debug, Clone, Default)]
pub struct Exclusions {
    /// Switches time propagation off (`!INCL_TIME && EXCL_TIME`).
    pub time: Vec<bool>,
    /// Switches the print flag off (`!INCL_GRAPH && EXCL_GRAPH`).
    pub graph: Vec<bool>,
    /// May switch time propagation on (`INCL_TIME || (no INCL_TIME && !EXCL_TIME)`).
    pub time_on: Vec<bool>,
    /// May switch the print flag on (as `time_on`, for the graph tables).
    pub graph_on: Vec<bool>,
}

impl CallGraph {
    /// An empty graph over `symtab`.
    pub fn new(symtab: &SymTab<'_>) -> Self {
        let n = symtab.len();
        CallGraph {
            nodes: (0..n).map(Node::new).collect(),
            arcs: Vec::new(),
            num_syms: n,
            num_cycles: 0,
            top_sorted: Vec::new(),
            time_sorted: Vec::new(),
            print_time: 0.0,
            pair: HashMap::default(),
            starts: AddrIndex::new(symtab.syms.iter().map(|s| s.addr).collect()),
            last_parent: usize::MAX,
            calls_in: Vec::new(),
            sites: Vec::new(),
            prev_sites: (Vec::new(), 0),
            files_read: 0,
        }
    }

    /// Make room for `n` more arcs if memory allows (a hint: the list grows anyway).
    pub fn reserve_arcs(&mut self, n: usize) {
        let _ = self.arcs.try_reserve(n);
    }

    /// `sym_lookup` ([`SymTab::lookup`]) through the dense start addresses when they belong
    /// to `symtab`.
    fn lookup(&self, symtab: &SymTab<'_>, addr: u64) -> Option<usize> {
        if self.starts.len() != symtab.len() {
            return symtab.lookup(addr);
        }
        let i = self.starts.count_at_or_below(addr).checked_sub(1)?;
        (addr <= symtab.syms[i].end_addr).then_some(i)
    }

    /// `cg_tally`: record `count` calls from `from_pc` to `self_pc` (link-time addresses).
    /// Arcs whose ends are outside every symbol are dropped; the callee is moved back to the
    /// nearest preceding function symbol.
    pub fn tally(&mut self, symtab: &SymTab<'_>, from_pc: u64, self_pc: u64, count: u64) {
        self.tally_if(symtab, from_pc, self_pc, count, |_, _| true);
    }

    /// [`CallGraph::tally`], keeping the arc only if `allowed(caller, callee)` (gprof's arc
    /// tables, `-k` and `-q`/`-Q FROM/TO`).
    pub fn tally_if(
        &mut self,
        symtab: &SymTab<'_>,
        from_pc: u64,
        self_pc: u64,
        count: u64,
        allowed: impl Fn(usize, usize) -> bool,
    ) {
        if self.files_read < 2 {
            self.tally_looked_up(symtab, from_pc, self_pc, count, allowed);
            return;
        }
        if let Some(site) = self
            .previous_site(from_pc, self_pc)
            .filter(|s| s.child != UNSTABLE)
        {
            self.sites.push(site);
            if let Some(arc) = site.arc.get() {
                let child = site.child as usize;
                self.calls_in[child] = self.calls_in[child].wrapping_add(count);
                self.arcs[arc].count = self.arcs[arc].count.wrapping_add(count);
            }
            return;
        }
        let mut site = Site {
            from_pc,
            self_pc,
            arc: Link::NONE,
            child: 0,
        };
        if let Some((arc, child)) = self.tally_looked_up(symtab, from_pc, self_pc, count, allowed) {
            // Only an arc found by its (parent, child) pair stays the one a look-up finds (a
            // child whose range ends below its start is matched by covering, which later arcs
            // can change).
            let c = &symtab.syms[child];
            site.child = UNSTABLE;
            if c.end_addr >= c.addr {
                (site.arc, site.child) = (Link::to(arc), child as u32);
            }
        }
        self.sites.push(site);
    }

    /// The site of the previous file with these addresses, if it comes at or after the
    /// last one matched (among the first 8 of its call site).
    fn previous_site(&mut self, from_pc: u64, self_pc: u64) -> Option<Site> {
        let (prev, at) = &mut self.prev_sites;
        while prev.get(*at).is_some_and(|s| s.from_pc < from_pc) {
            *at += 1;
        }
        let same_caller = prev[*at..].iter().take_while(|s| s.from_pc == from_pc);
        same_caller.take(8).find(|s| s.self_pc == self_pc).copied()
    }

    /// Start reading another gmon file: its records are matched against the last file's.
    /// The sites are recorded from the second file on (most reports read one file; the
    /// second is looked up whole, and the third and later files are matched).
    pub fn next_file(&mut self) {
        self.files_read += 1;
        if !self.sites.is_empty() {
            let room = Vec::with_capacity(self.sites.len());
            self.prev_sites = (std::mem::replace(&mut self.sites, room), 0);
        }
    }

    /// [`CallGraph::tally_if`] by look-ups: the arc the count went to and its child, if any.
    fn tally_looked_up(
        &mut self,
        symtab: &SymTab<'_>,
        from_pc: u64,
        self_pc: u64,
        count: u64,
        allowed: impl Fn(usize, usize) -> bool,
    ) -> Option<(usize, usize)> {
        // Call sites come in address order, many per caller: when `from_pc` lies between the
        // previous caller's start and the next symbol's, the search would end there too.
        let last = self.last_parent;
        let near = self.starts.len() == symtab.len()
            && self.starts.get(last).is_some_and(|a| a <= from_pc)
            && self.starts.get(last + 1).is_none_or(|a| from_pc < a);
        let parent = if near {
            (from_pc <= symtab.syms[last].end_addr).then_some(last)
        } else {
            self.lookup(symtab, from_pc)
        };
        let parent = parent?;
        self.last_parent = parent;
        let child = self.callee_of(symtab, self_pc)?;
        if !allowed(parent, child) {
            return None;
        }
        if self.calls_in.len() != self.num_syms {
            self.calls_in = vec![0; self.num_syms];
        }
        self.calls_in[child] = self.calls_in[child].wrapping_add(count);
        Some((self.arc_add(symtab, parent, child, count), child))
    }

    /// The symbol an arc into `self_pc` goes to: the symbol holding it, moved back to the
    /// nearest function symbol at or before it (none: the arc is dropped).
    fn callee_of(&self, symtab: &SymTab<'_>, self_pc: u64) -> Option<usize> {
        function_at_or_before(symtab, self.lookup(symtab, self_pc)?)
    }

    /// [`CallGraph::tally_if`] as gprof runs it with its traces (`cg_read_rec`, `sym_lookup`,
    /// `cg_tally`, `arc_add`, `arc_lookup`): only used when `trace` has a level.
    pub fn tally_traced(
        &mut self,
        symtab: &SymTab<'_>,
        (from_pc, self_pc, count): (u64, u64, u64),
        reader: &str,
        allowed: impl Fn(usize, usize, &mut Trace) -> bool,
        trace: &mut Trace,
    ) {
        if trace.on(debug::SAMPLEDEBUG) {
            trace.fmt(format_args!(
                "[{reader}] frompc 0x{from_pc:x} selfpc 0x{self_pc:x} count {count}\n"
            ));
        }
        let parent = symtab.lookup_traced(from_pc, trace);
        let child = symtab.lookup_traced(self_pc, trace);
        let (Some(parent), Some(child)) =
            (parent, child.and_then(|c| function_at_or_before(symtab, c)))
        else {
            return;
        };
        if !allowed(parent, child, trace) {
            return;
        }
        self.nodes[child].ncalls = self.nodes[child].ncalls.wrapping_add(count);
        if trace.on(debug::TALLYDEBUG) {
            trace.put(b"[cg_tally] arc from ");
            trace.put(symtab.syms[parent].name);
            trace.put(b" to ");
            trace.put(symtab.syms[child].name);
            trace.fmt(format_args!(" traversed {count} times\n"));
        }
        self.arc_add_traced(symtab, parent, child, count, trace);
    }

    /// `arc_lookup` walking the children list as gprof does, with its `LOOKUPDEBUG` trace.
    fn arc_lookup_traced(
        &self,
        symtab: &SymTab<'_>,
        parent: usize,
        child: usize,
        trace: &mut Trace,
    ) -> Option<usize> {
        let on = trace.on(debug::LOOKUPDEBUG);
        if on {
            trace.put(b"[arc_lookup] parent ");
            trace.put(symtab.syms[parent].name);
            trace.put(b" child ");
            trace.put(symtab.syms[child].name);
            trace.put(b"\n");
        }
        let c = &symtab.syms[child];
        let mut a = self.nodes[parent].children.get();
        while let Some(i) = a {
            let arc = &self.arcs[i];
            if on {
                trace.put(b"[arc_lookup]\t parent ");
                trace.put(symtab.syms[arc.parent].name);
                trace.put(b" child ");
                trace.put(symtab.syms[arc.child].name);
                trace.put(b"\n");
            }
            let k = &symtab.syms[arc.child];
            if c.addr >= k.addr && c.end_addr <= k.end_addr {
                return Some(i);
            }
            a = arc.next_child.get();
        }
        None
    }

    /// [`CallGraph::arc_add`] with gprof's `TALLYDEBUG` and `LOOKUPDEBUG` traces.
    fn arc_add_traced(
        &mut self,
        symtab: &SymTab<'_>,
        parent: usize,
        child: usize,
        count: u64,
        trace: &mut Trace,
    ) {
        if trace.on(debug::TALLYDEBUG) {
            trace.fmt(format_args!("[arc_add] {count} arcs from "));
            trace.put(symtab.syms[parent].name);
            trace.put(b" to ");
            trace.put(symtab.syms[child].name);
            trace.put(b"\n");
        }
        if let Some(i) = self.arc_lookup_traced(symtab, parent, child, trace) {
            if trace.on(debug::TALLYDEBUG) {
                trace.fmt(format_args!(
                    "[tally] hit {} += {count}\n",
                    self.arcs[i].count
                ));
            }
            self.arcs[i].count = self.arcs[i].count.wrapping_add(count);
            return;
        }
        self.arc_add(symtab, parent, child, count);
    }

    /// [`StaticCalls::find`] and the arcs it adds for the symbol `p` (up to `end`), as gprof's
    /// `i386_find_call` runs with its `CALLDEBUG` traces (and those of the lookups and arcs).
    fn find_calls_traced(
        &mut self,
        calls: &StaticCalls<'_>,
        symtab: &SymTab<'_>,
        p: usize,
        end: u64,
        trace: &mut Trace,
    ) {
        let (mut low, mut high) = (symtab.syms[p].addr, end);
        // `hist_clip_symbol_address`: no overlap leaves an empty range at `low`.
        match calls
            .ranges
            .iter()
            .map(|&(lo, hi)| (lo.max(low), hi.min(high)))
            .find(|&(l, h)| l < h)
        {
            Some((l, h)) => (low, high) = (l, h),
            None => high = low,
        }
        let on = trace.on(debug::CALLDEBUG);
        if on {
            trace.put(b"[findcall] ");
            trace.put(symtab.syms[p].name);
            trace.fmt(format_args!(": 0x{low:x} to 0x{high:x}\n"));
        }
        let (vma, bytes) = calls.text;
        let byte = |pc: u64| -> Option<u8> {
            let off = pc.checked_sub(vma)?;
            bytes.get(usize::try_from(off).ok()?).copied()
        };
        let mut pc = low;
        while pc < high {
            if byte(pc) != Some(0xe8) {
                pc += 1;
                continue;
            }
            if on {
                trace.fmt(format_args!("[findcall]\t0x{pc:x}:call"));
            }
            let disp = (1..5).try_fold(0u32, |acc, k| {
                byte(pc + k).map(|b| acc | u32::from(b) << (8 * (k - 1)))
            });
            if let Some(disp) = disp {
                let dest = u64::from(disp).wrapping_add(pc).wrapping_add(5);
                let dest32 = dest & 0xffff_ffff;
                if calls.ranges.iter().any(|&(l, h)| l <= dest32 && dest32 < h) {
                    let child = symtab
                        .lookup_traced(dest, trace)
                        .filter(|&c| symtab.syms[c].addr == dest);
                    if let Some(child) = child {
                        if on {
                            trace.fmt(format_args!("\tdestpc 0x{dest:x} ("));
                            trace.put(symtab.syms[child].name);
                            trace.put(b")\n");
                        }
                        self.arc_add_traced(symtab, p, child, 0, trace);
                        pc += 5;
                        continue;
                    }
                }
            }
            if on {
                trace.put(b"\tbut it's a botch\n");
            }
            pc += 1;
        }
    }

    /// gprof's `print_name` of `node` into the trace: its name with the debugging
    /// decorations, `<cycle N>`, and its index once it has one.
    fn trace_name(&self, node: usize, trace: &mut Trace) {
        let n = &self.nodes[node];
        if node < self.num_syms {
            if let Some(name) = trace.names.get(node) {
                trace.out.extend_from_slice(name);
            }
            debug::push_decorations(trace.level, n.top_order, n.prop_fract, &mut trace.out);
        }
        if n.cyc_num != 0 {
            trace.fmt(format_args!(" <cycle {}>", n.cyc_num));
        }
        if n.index != 0 {
            if n.print_flag {
                trace.fmt(format_args!(" [{}]", n.index));
            } else {
                trace.fmt(format_args!(" ({})", n.index));
            }
        }
    }

    /// `arc_lookup`: an arc from `parent` whose child's range covers `child`'s.
    fn arc_lookup(&self, symtab: &SymTab<'_>, parent: usize, child: usize) -> Option<usize> {
        let c = &symtab.syms[child];
        if c.end_addr >= c.addr {
            // Ranges of distinct symbols are disjoint, so only the same child can cover it.
            return self.pair.get(&pair_key(parent, child)).copied();
        }
        let mut a = self.nodes[parent].children.get();
        while let Some(i) = a {
            let k = &symtab.syms[self.arcs[i].child];
            if c.addr >= k.addr && c.end_addr <= k.end_addr {
                return Some(i);
            }
            a = self.arcs[i].next_child.get();
        }
        None
    }

    /// `arc_add`: add to a covering arc, or prepend a new one to both lists.
    pub fn arc_add(
        &mut self,
        symtab: &SymTab<'_>,
        parent: usize,
        child: usize,
        count: u64,
    ) -> usize {
        if let Some(i) = self.arc_lookup(symtab, parent, child) {
            self.arcs[i].count = self.arcs[i].count.wrapping_add(count);
            return i;
        }
        let i = self.arcs.len();
        self.arcs.push(Arc {
            parent,
            child,
            count,
            time: 0.0,
            child_time: 0.0,
            next_child: self.nodes[parent].children,
            next_parent: self.nodes[child].parents,
        });
        self.nodes[parent].children = Link::to(i);
        self.nodes[child].parents = Link::to(i);
        self.pair.entry(pair_key(parent, child)).or_insert(i);
        i
    }

    /// Iterate over a node's children arcs (list order).
    pub fn children(&self, node: usize) -> impl Iterator<Item = usize> + '_ {
        std::iter::successors(self.nodes[node].children.get(), move |&a| {
            self.arcs[a].next_child.get()
        })
    }

    /// Iterate over a node's parent arcs (list order).
    pub fn parents(&self, node: usize) -> impl Iterator<Item = usize> + '_ {
        std::iter::successors(self.nodes[node].parents.get(), move |&a| {
            self.arcs[a].next_parent.get()
        })
    }

    /// `cg_assemble`. `time[i]` is each symbol's `hist.time`; `names` the raw names (for the
    /// call graph's sort).
    pub fn assemble(&mut self, symtab: &SymTab<'_>, time: &[f64], excl: &Exclusions) {
        self.assemble_with(symtab, time, excl, None, None, &mut Trace::default());
    }

    /// [`CallGraph::assemble`], with `-c`'s static call graph when `calls` is given: after
    /// each symbol's self-arc check, the direct calls found in its code (in address order,
    /// as gprof's `find_call` runs inside that loop) become arcs with count 0.
    pub fn assemble_with(
        &mut self,
        symtab: &SymTab<'_>,
        time: &[f64],
        excl: &Exclusions,
        calls: Option<&StaticCalls<'_>>,
        tables: Option<&SpecTables<'_>>,
        trace: &mut Trace,
    ) {
        let n = self.num_syms;
        let traced = trace.level != 0;
        for (node, calls) in self
            .nodes
            .iter_mut()
            .zip(std::mem::take(&mut self.calls_in))
        {
            node.ncalls = node.ncalls.wrapping_add(calls);
        }
        for (p, &t) in time.iter().enumerate().take(n) {
            self.nodes[p].time = t;
            self.nodes[p].child_time = 0.0;
            let self_arc = if traced {
                self.arc_lookup_traced(symtab, p, p, trace)
            } else if self.nodes[p].children.is_none() {
                // No arc leaves p (most line symbols under -l): no look-up in the arc map.
                None
            } else {
                self.arc_lookup(symtab, p, p)
            };
            match self_arc {
                Some(a) if self.arcs[a].child == p => {
                    let c = self.arcs[a].count;
                    self.nodes[p].ncalls = self.nodes[p].ncalls.wrapping_sub(c);
                    self.nodes[p].self_calls = c;
                }
                _ => self.nodes[p].self_calls = 0,
            }
            let node = &mut self.nodes[p];
            node.prop_fract = 0.0;
            node.prop_self = 0.0;
            node.prop_child = 0.0;
            node.print_flag = false;
            node.top_order = DFN_NAN;
            node.cyc_num = 0;
            node.cyc_head = p;
            node.cyc_next = Link::NONE;
            if let Some(c) = calls {
                let last_end = symtab.after_last.unwrap_or(u64::MAX);
                let end = symtab.syms.get(p + 1).map_or(last_end, |s| s.addr);
                if traced {
                    self.find_calls_traced(c, symtab, p, end, trace);
                } else {
                    for child in c.find(symtab, symtab.syms[p].addr, end) {
                        self.arc_add(symtab, p, child, 0);
                    }
                }
            }
        }
        let mut dfn = Dfn {
            stack: vec![usize::MAX],
            counter: DFN_NAN,
            position: vec![0; n],
            tail: (0..n).collect(),
            frames: Vec::new(),
        };
        for p in 0..n {
            if self.nodes[p].top_order == DFN_NAN {
                self.dfn(&mut dfn, p, trace);
            }
        }
        self.cycle_link(trace);
        self.top_sorted = top_order(&self.nodes[..n]);
        if trace.on(debug::DFNDEBUG) {
            trace.put(b"[cg_assemble] topological sort listing\n");
            for i in 0..n {
                let s = self.top_sorted[i];
                trace.fmt(format_args!("[cg_assemble] {}:", self.nodes[s].top_order));
                self.trace_name(s, trace);
                trace.put(b"\n");
            }
        }
        self.propagate_flags(excl, tables.map(|t| (t, symtab)), trace);
        self.cycle_time();
        for i in 0..n {
            self.propagate_time(self.top_sorted[i], trace);
        }
        let ts = total_order(&self.nodes[..n + self.num_cycles], symtab, n);
        for (i, &node) in ts.iter().enumerate() {
            self.nodes[node].index = (i + 1) as u32;
        }
        self.time_sorted = ts;
    }

    fn is_numbered(&self, s: usize) -> bool {
        let t = self.nodes[s].top_order;
        t != DFN_NAN && t != DFN_BUSY
    }

    /// `cg_dfn`, with an explicit stack instead of recursion.
    fn dfn(&mut self, st: &mut Dfn, root: usize, trace: &mut Trace) {
        let traced = trace.on(debug::DFNDEBUG);
        if traced {
            self.trace_dfn(root, trace);
        }
        if self.is_numbered(root) {
            return;
        }
        if self.nodes[root].top_order != DFN_NAN {
            self.find_cycle(st, root, trace);
            return;
        }
        self.pre_visit(st, root, trace);
        let mut frames = std::mem::take(&mut st.frames);
        frames.push((root, self.nodes[root].children.get()));
        while let Some(frame) = frames.last_mut() {
            match frame.1 {
                Some(a) => {
                    frame.1 = self.arcs[a].next_child.get();
                    let c = self.arcs[a].child;
                    if traced {
                        self.trace_dfn(c, trace);
                    }
                    if self.is_numbered(c) {
                        continue;
                    }
                    if self.nodes[c].top_order != DFN_NAN {
                        self.find_cycle(st, c, trace);
                        continue;
                    }
                    self.pre_visit(st, c, trace);
                    frames.push((c, self.nodes[c].children.get()));
                }
                None => {
                    let p = frame.0;
                    frames.pop();
                    self.post_visit(st, p, trace);
                }
            }
        }
        st.frames = frames;
    }

    /// `[dfn] dfn( NAME )`.
    fn trace_dfn(&self, node: usize, trace: &mut Trace) {
        trace.put(b"[dfn] dfn( ");
        self.trace_name(node, trace);
        trace.put(b")\n");
    }

    fn pre_visit(&mut self, st: &mut Dfn, p: usize, trace: &mut Trace) {
        st.position[p] = st.stack.len();
        st.stack.push(p);
        self.nodes[p].top_order = DFN_BUSY;
        if trace.on(debug::DFNDEBUG) {
            trace.fmt(format_args!("[pre_visit]\t\t{}:", st.stack.len() - 1));
            self.trace_name(p, trace);
            trace.put(b"\n");
        }
    }

    fn post_visit(&mut self, st: &mut Dfn, p: usize, trace: &mut Trace) {
        let traced = trace.on(debug::DFNDEBUG);
        if traced {
            trace.fmt(format_args!("[post_visit]\t{}: ", st.stack.len() - 1));
            self.trace_name(p, trace);
            trace.put(b"\n");
        }
        if self.nodes[p].cyc_head == p {
            st.counter += 1;
            let mut m = Some(p);
            while let Some(x) = m {
                self.nodes[x].top_order = st.counter;
                if traced {
                    trace.put(b"[post_visit]\t\tmember ");
                    self.trace_name(x, trace);
                    trace.fmt(format_args!("-> cg.top_order = {}\n", st.counter));
                }
                m = self.nodes[x].cyc_next.get();
            }
        } else if traced {
            trace.put(b"[post_visit]\t\tis part of a cycle\n");
        }
        st.stack.pop();
        st.position[p] = 0;
    }

    fn find_cycle(&mut self, st: &mut Dfn, child: usize, trace: &mut Trace) {
        let traced = trace.on(debug::DFNDEBUG);
        let depth = st.stack.len() - 1;
        // gprof scans the stack down from the top for `child` or, if `child` is in a cycle,
        // the cycle's head: the higher of their stack positions (a node is on the stack at
        // most once; 0 is "not on the stack").
        let ch = self.nodes[child].cyc_head;
        let cycle_top = if ch != child {
            st.position[child].max(st.position[ch])
        } else {
            st.position[child]
        };
        if cycle_top == 0 {
            // gprof aborts ("couldn't find head of cycle"); cannot happen for a busy node.
            return;
        }
        if traced {
            trace.fmt(format_args!(
                "[find_cycle] dfn_depth {depth} cycle_top {cycle_top} "
            ));
            self.trace_name(st.stack[cycle_top], trace);
            trace.put(b"\n");
        }
        if cycle_top == depth {
            if traced {
                trace.put(b"[find_cycle] ");
                self.trace_name(child, trace);
                trace.put(b"\n");
            }
            return; // direct self-recursion
        }
        // Every node's `cyc_head` is the head of the whole list it is on, whose last node is
        // kept in `st.tail` (gprof walks the list to find it).
        let top = st.stack[cycle_top];
        if traced {
            let mut t = top;
            while let Some(next) = self.nodes[t].cyc_next.get() {
                trace.put(b"[find_cycle] tail ");
                self.trace_name(t, trace);
                trace.put(b"\n");
                t = next;
            }
        }
        let head = self.nodes[top].cyc_head;
        if traced && head != top {
            trace.put(b"[find_cycle] new cyclehead ");
            self.trace_name(head, trace);
            trace.put(b"\n");
        }
        let mut tail = st.tail[head];
        for index in cycle_top + 1..=depth {
            let c = st.stack[index];
            if self.nodes[c].cyc_head == c {
                self.nodes[tail].cyc_next = Link::to(c);
                self.nodes[c].cyc_head = head;
                if traced {
                    trace.put(b"[find_cycle] glomming ");
                    self.trace_name(c, trace);
                    trace.put(b" onto ");
                    self.trace_name(head, trace);
                    trace.put(b"\n");
                }
                tail = c;
                while let Some(next) = self.nodes[tail].cyc_next.get() {
                    self.nodes[next].cyc_head = head;
                    if traced {
                        trace.put(b"[find_cycle] and its tail ");
                        self.trace_name(next, trace);
                        trace.put(b" onto ");
                        self.trace_name(head, trace);
                        trace.put(b"\n");
                    }
                    tail = next;
                }
            }
            // else: already glommed (gprof's firewall would abort if not onto `head`).
        }
        st.tail[head] = tail;
    }

    fn cycle_link(&mut self, trace: &mut Trace) {
        let n = self.num_syms;
        let mut num = 0;
        for s in 0..n {
            if !(self.nodes[s].cyc_head == s && self.nodes[s].cyc_next.is_some()) {
                continue;
            }
            num += 1;
            let cyc = self.nodes.len();
            let mut node = Node::new(cyc);
            node.print_flag = true;
            node.cyc_num = num;
            node.cyc_next = Link::to(s);
            self.nodes.push(node);
            if trace.on(debug::CYCLEDEBUG) {
                trace.put(b"[cycle_link] ");
                self.trace_name(s, trace);
                trace.fmt(format_args!(" is the head of cycle {num}\n"));
            }
            let mut m = Some(s);
            while let Some(x) = m {
                self.nodes[x].cyc_num = num;
                self.nodes[x].cyc_head = cyc;
                m = self.nodes[x].cyc_next.get();
            }
            let mut m = Some(s);
            while let Some(x) = m {
                let mut a = self.nodes[x].parents.get();
                while let Some(i) = a {
                    let (p, count) = (self.arcs[i].parent, self.arcs[i].count);
                    a = self.arcs[i].next_parent.get();
                    if p == x {
                        continue;
                    }
                    if self.nodes[p].cyc_num == num {
                        self.nodes[cyc].self_calls = self.nodes[cyc].self_calls.wrapping_add(count);
                    } else {
                        self.nodes[cyc].ncalls = self.nodes[cyc].ncalls.wrapping_add(count);
                    }
                }
                m = self.nodes[x].cyc_next.get();
            }
        }
        self.num_cycles = num as usize;
    }

    fn inherit_flags(&mut self, child: usize) {
        let head = self.nodes[child].cyc_head;
        if child == head {
            self.nodes[child].print_flag = false;
            self.nodes[child].prop_fract = 0.0;
            let mut a = self.nodes[child].parents.get();
            while let Some(i) = a {
                let (p, count) = (self.arcs[i].parent, self.arcs[i].count);
                a = self.arcs[i].next_parent.get();
                if p == child {
                    continue;
                }
                self.nodes[child].print_flag |= self.nodes[p].print_flag;
                let nc = self.nodes[child].ncalls;
                if nc != 0 {
                    self.nodes[child].prop_fract +=
                        self.nodes[p].prop_fract * (count as f64 / nc as f64);
                }
            }
        } else {
            self.nodes[head].print_flag = false;
            self.nodes[head].prop_fract = 0.0;
            let mut m = self.nodes[head].cyc_next.get();
            while let Some(x) = m {
                let mut a = self.nodes[x].parents.get();
                while let Some(i) = a {
                    let (p, count) = (self.arcs[i].parent, self.arcs[i].count);
                    a = self.arcs[i].next_parent.get();
                    if self.nodes[p].cyc_head == head {
                        continue;
                    }
                    self.nodes[head].print_flag |= self.nodes[p].print_flag;
                    let nc = self.nodes[head].ncalls;
                    if nc != 0 {
                        self.nodes[head].prop_fract +=
                            self.nodes[p].prop_fract * (count as f64 / nc as f64);
                    }
                }
                m = self.nodes[x].cyc_next.get();
            }
            let (flag, fract) = (self.nodes[head].print_flag, self.nodes[head].prop_fract);
            let mut m = Some(head);
            while let Some(x) = m {
                self.nodes[x].print_flag = flag;
                self.nodes[x].prop_fract = fract;
                m = self.nodes[x].cyc_next.get();
            }
        }
    }

    /// `propagate_flags`; `tables`: under `-d`, gprof's spec tables (and the symbol table)
    /// to look the symbols up in with their traces, instead of `excl`'s flags.
    fn propagate_flags(
        &mut self,
        excl: &Exclusions,
        tables: Option<(&SpecTables<'_>, &SymTab<'_>)>,
        trace: &mut Trace,
    ) {
        let traced = trace.on(debug::PROPDEBUG);
        let mut old_head = usize::MAX;
        self.print_time = 0.0;
        for idx in (0..self.num_syms).rev() {
            let child = self.top_sorted[idx];
            if self.nodes[child].cyc_head != old_head {
                old_head = self.nodes[child].cyc_head;
                self.inherit_flags(child);
            }
            if traced {
                trace.put(b"[prop_flags] ");
                self.trace_name(child, trace);
                let n = &self.nodes[child];
                trace.fmt(format_args!(
                    "inherits print-flag {} and prop-fract {}\n",
                    u8::from(n.print_flag),
                    debug::f6(n.prop_fract)
                ));
            }
            if let Some((t, symtab)) = tables {
                // gprof's look-ups, in its order, with their traces.
                let addr = symtab.syms[child].addr;
                let (ig, eg, it, et) = (
                    Table::InclGraph,
                    Table::ExclGraph,
                    Table::InclTime,
                    Table::ExclTime,
                );
                let node = &mut self.nodes[child];
                if !node.print_flag {
                    node.print_flag = t.on(ig, eg, addr, trace);
                } else if t.off(ig, eg, addr, trace) {
                    node.print_flag = false;
                }
                if node.prop_fract == 0.0 {
                    if t.on(it, et, addr, trace) {
                        node.prop_fract = 1.0;
                    }
                } else if t.off(it, et, addr, trace) {
                    node.prop_fract = 0.0;
                }
            } else {
                let excl_graph = excl.graph.get(child).copied().unwrap_or(false);
                let excl_time = excl.time.get(child).copied().unwrap_or(false);
                let graph_on = excl.graph_on.get(child).copied().unwrap_or(true);
                let time_on = excl.time_on.get(child).copied().unwrap_or(true);
                let node = &mut self.nodes[child];
                if !node.print_flag {
                    if graph_on {
                        node.print_flag = true;
                    }
                } else if excl_graph {
                    node.print_flag = false;
                }
                if node.prop_fract == 0.0 {
                    if time_on {
                        node.prop_fract = 1.0;
                    }
                } else if excl_time {
                    node.prop_fract = 0.0;
                }
            }
            let node = &mut self.nodes[child];
            node.prop_self = node.time * node.prop_fract;
            self.print_time += node.prop_self;
            if traced {
                trace.put(b"[prop_flags] ");
                self.trace_name(child, trace);
                let n = &self.nodes[child];
                trace.fmt(format_args!(
                    " ends up with printflag {} and prop-fract {}\n",
                    u8::from(n.print_flag),
                    debug::f6(n.prop_fract)
                ));
                trace.fmt(format_args!(
                    "[prop_flags] time {} propself {} print_time {}\n",
                    debug::f6(n.time),
                    debug::f6(n.prop_self),
                    debug::f6(self.print_time)
                ));
            }
        }
    }

    fn cycle_time(&mut self) {
        for k in 0..self.num_cycles {
            let cyc = self.num_syms + k;
            let mut m = self.nodes[cyc].cyc_next.get();
            while let Some(x) = m {
                if self.nodes[x].prop_fract != 0.0 {
                    self.nodes[cyc].time += self.nodes[x].time;
                }
                m = self.nodes[x].cyc_next.get();
            }
            self.nodes[cyc].prop_self = self.nodes[cyc].prop_fract * self.nodes[cyc].time;
        }
    }

    fn propagate_time(&mut self, parent: usize, trace: &mut Trace) {
        if self.nodes[parent].prop_fract == 0.0 {
            return;
        }
        let mut a = self.nodes[parent].children.get();
        while let Some(i) = a {
            a = self.arcs[i].next_child.get();
            let count = self.arcs[i].count;
            let mut child = self.arcs[i].child;
            if count == 0 || child == parent || self.nodes[child].prop_fract == 0.0 {
                continue;
            }
            if self.nodes[child].cyc_head != child {
                if self.nodes[parent].cyc_num == self.nodes[child].cyc_num {
                    continue;
                }
                child = self.nodes[child].cyc_head;
            } else if self.nodes[parent].top_order <= self.nodes[child].top_order {
                continue;
            }
            let nc = self.nodes[child].ncalls;
            if nc == 0 {
                continue;
            }
            let ratio = count as f64 / nc as f64;
            let t = self.nodes[child].time * ratio;
            let ct = self.nodes[child].child_time * ratio;
            let share = t + ct;
            let fract = self.nodes[parent].prop_fract;
            self.nodes[parent].child_time += share;
            let prop_share = fract * share;
            self.nodes[parent].prop_child += prop_share;
            self.arcs[i].time = t * fract;
            self.arcs[i].child_time = ct * fract;
            let head = self.nodes[parent].cyc_head;
            if head != parent {
                self.nodes[head].child_time += share;
                self.nodes[head].prop_child += prop_share;
            }
            if trace.on(debug::PROPDEBUG) {
                trace.put(b"[prop_time] child \t");
                self.trace_name(child, trace);
                let c = &self.nodes[child];
                trace.fmt(format_args!(
                    " with {} {} {count}/{}\n",
                    debug::f6(c.time),
                    debug::f6(c.child_time),
                    c.ncalls
                ));
                trace.put(b"[prop_time] parent\t");
                self.trace_name(parent, trace);
                trace.fmt(format_args!("\n[prop_time] share {}\n", debug::f6(share)));
            }
        }
    }
}

struct Dfn {
    /// `dfn_stack`, 1-based (slot 0 unused).
    stack: Vec<usize>,
    counter: i64,
    /// Each node's index in `stack` while it is there, else 0.
    position: Vec<usize>,
    /// For the head of each cycle list (`cyc_head == self`), the list's last node.
    tail: Vec<usize>,
    /// The walk's own stack of (node, next arc to follow), kept between roots (a profile under
    /// `-l` has a root for each of its hundreds of thousands of line symbols).
    frames: Vec<(usize, Option<usize>)>,
}

/// gprof's `qsort` of the symbol nodes by `top_order`. The comparison is consistent, so any
/// stable sort agrees with glibc's merge sort; after numbering every `top_order` is in
/// `1..=nodes.len()`, so a counting sort does it in linear time (other values, which the
/// numbering never leaves, take the general stable sort).
fn top_order(nodes: &[Node]) -> Vec<usize> {
    let n = nodes.len();
    let mut starts = vec![0usize; n + 2];
    for x in nodes {
        match usize::try_from(x.top_order) {
            Ok(t) if (1..=n).contains(&t) => starts[t + 1] += 1,
            _ => {
                let mut top: Vec<usize> = (0..n).collect();
                top.sort_by_key(|&i| nodes[i].top_order);
                return top;
            }
        }
    }
    for t in 1..starts.len() {
        starts[t] += starts[t - 1];
    }
    let mut top = vec![0usize; n];
    for (i, x) in nodes.iter().enumerate() {
        let slot = &mut starts[x.top_order as usize];
        top[*slot] = i;
        *slot += 1;
    }
    top
}

/// The nearest function symbol at or before symbol `i` of the table: gprof moves the callee
/// of an arc that lands on a non-function symbol back to it (none: the arc is dropped).
fn function_at_or_before(symtab: &SymTab<'_>, mut i: usize) -> Option<usize> {
    while !symtab.syms[i].is_func {
        i = i.checked_sub(1)?;
    }
    Some(i)
}

/// gprof's `qsort(..., cmp_total)` of the symbol and cycle nodes (`nodes`; the first `n` are
/// the symbols of `symtab`).
///
/// glibc's qsort is a merge sort, and when every total is finite the comparisons it makes
/// all agree with one strict order: total descending, cycle nodes first, names without a
/// leading `_` first, calls descending, name, then original position. (`cmp_total` calls a
/// cycle "less" even than another cycle of the same total; the merge always compares an
/// element of its left run, which came from lower positions, with one of its right run, so
/// that answer is the position order.) An unstable sort of those keys gives the same
/// permutation as [`msort`] through indices, faster; the keys are integers (the total's
/// ordered bits, the name's rank among all names, [`name_ranks`]), so no comparison reads a
/// name. With an infinite or NaN total the comparison is inconsistent and the exact merge
/// order is reproduced with [`msort`].
fn total_order(nodes: &[Node], symtab: &SymTab<'_>, n: usize) -> Vec<usize> {
    let total = |x: &Node| x.prop_self + x.prop_child;
    let consistent = nodes.iter().all(|x| total(x).is_finite())
        && nodes.iter().skip(n).all(|x| x.cyc_num != 0)
        && n <= symtab.len()
        && u32::try_from(nodes.len()).is_ok();
    if !consistent {
        let mut ts: Vec<usize> = (0..nodes.len()).collect();
        msort(&mut ts, |&l, &r| cmp_total(nodes, symtab, n, l, r));
        return ts;
    }
    let ranks = name_ranks(symtab.syms[..n].iter().map(|s| s.name));
    if let Some(order) = total_order_packed(nodes, symtab, n, &ranks) {
        return order;
    }
    // (total descending, cycle / no `_` / `_`, calls descending, name rank and position).
    let mut keys: Vec<(u64, u8, u64, u64)> = nodes
        .iter()
        .enumerate()
        .map(|(i, x)| {
            let total = !ordered_bits(total(x));
            match symtab.syms.get(i).filter(|_| i < n) {
                Some(s) => (
                    total,
                    1 + u8::from(s.name.first() == Some(&b'_')),
                    !x.ncalls,
                    u64::from(ranks[i]) << 32 | i as u64,
                ),
                None => (total, 0, !0, i as u64),
            }
        })
        .collect();
    keys.sort_unstable();
    keys.into_iter()
        .map(|k| (k.3 & 0xffff_ffff) as usize)
        .collect()
}

/// [`total_order`]'s keys packed into one `u128` each when they fit (nearly always): the
/// total's ordered bits, then (cycle / no `_` / `_`, calls descending, the position in
/// (name, position) order, from a counting sort by `ranks`). `None` when the calls and the
/// positions need more than 62 bits.
fn total_order_packed(
    nodes: &[Node],
    symtab: &SymTab<'_>,
    n: usize,
    ranks: &[u32],
) -> Option<Vec<usize>> {
    let m = nodes.len();
    let max_calls = nodes[..n].iter().map(|x| x.ncalls).max().unwrap_or(0);
    let pos_bits = u64::BITS - (m as u64).leading_zeros();
    let call_bits = u64::BITS - max_calls.leading_zeros();
    if 2 + pos_bits + call_bits > 64 {
        return None;
    }
    // by_name[k]: the symbol at position k in (name rank, position) order.
    let mut starts = vec![0u32; ranks.iter().max().map_or(0, |&r| r as usize + 2)];
    for &r in ranks {
        starts[r as usize + 1] += 1;
    }
    for k in 1..starts.len() {
        starts[k] += starts[k - 1];
    }
    let mut by_name = vec![0u32; n];
    let mut name_pos = vec![0u64; n];
    for (i, &r) in ranks.iter().enumerate() {
        let slot = &mut starts[r as usize];
        by_name[*slot as usize] = i as u32;
        name_pos[i] = u64::from(*slot);
        *slot += 1;
    }
    let mut keys: Vec<u128> = nodes
        .iter()
        .enumerate()
        .map(|(i, x)| {
            let total = u128::from(!ordered_bits(x.prop_self + x.prop_child)) << 64;
            // Cycle nodes (flag 0) only meet each other: by position, after the symbols'.
            let low = match symtab.syms.get(i).filter(|_| i < n) {
                Some(s) => {
                    let flag = 1 + u64::from(s.name.first() == Some(&b'_'));
                    flag << 62 | (max_calls - x.ncalls) << pos_bits | name_pos[i]
                }
                None => i as u64,
            };
            total | u128::from(low)
        })
        .collect();
    keys.sort_unstable();
    let pos_mask = (1u64 << pos_bits) - 1;
    Some(
        keys.into_iter()
            .map(|k| {
                let p = (k as u64 & pos_mask) as usize;
                let flag = (k as u64) >> 62;
                match flag {
                    0 => p,
                    _ => by_name[p] as usize,
                }
            })
            .collect(),
    )
}

/// `cmp_total`: the call graph's order (propagated time, cycles first, names).
fn cmp_total(nodes: &[Node], symtab: &SymTab<'_>, n: usize, l: usize, r: usize) -> Ordering {
    let (ln, rn) = (&nodes[l], &nodes[r]);
    let diff = (ln.prop_self + ln.prop_child) - (rn.prop_self + rn.prop_child);
    if diff < 0.0 {
        return Ordering::Greater;
    }
    if diff > 0.0 {
        return Ordering::Less;
    }
    let name = |i: usize| (i < n).then(|| symtab.syms[i].name);
    let (lname, rname) = (name(l), name(r));
    if lname.is_none() && ln.cyc_num != 0 {
        return Ordering::Less;
    }
    if rname.is_none() && rn.cyc_num != 0 {
        return Ordering::Greater;
    }
    let (Some(lname), Some(rname)) = (lname, rname) else {
        return if lname.is_none() {
            Ordering::Less
        } else {
            Ordering::Greater
        };
    };
    let c0 = |s: &[u8]| s.first().copied().unwrap_or(0);
    if c0(lname) != b'_' && c0(rname) == b'_' {
        return Ordering::Less;
    }
    if c0(lname) == b'_' && c0(rname) != b'_' {
        return Ordering::Greater;
    }
    if ln.ncalls != rn.ncalls {
        return rn.ncalls.cmp(&ln.ncalls);
    }
    lname.cmp(rname)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gprof::symtab::Sym;

    /// Functions `names[i]` at 0x100·(i+1), 0x100 bytes each.
    fn table(names: &[&'static str]) -> SymTab<'static> {
        SymTab {
            syms: names
                .iter()
                .enumerate()
                .map(|(i, n)| Sym {
                    name: n.as_bytes(),
                    addr: 0x100 * (i as u64 + 1),
                    end_addr: 0x100 * (i as u64 + 2) - 1,
                    is_func: true,
                    is_static: false,
                    mapped: false,
                })
                .collect(),
            after_last: None,
        }
    }

    /// Tally `count` calls from inside `from` to inside `to` (indices into `names`).
    fn call(cg: &mut CallGraph, t: &SymTab<'_>, from: usize, to: usize, count: u64) {
        cg.tally(t, t.syms[from].addr + 0x10, t.syms[to].addr + 0x8, count);
    }

    /// Files read one after another (records matched against the last file's sites) give
    /// the arcs, in the same order, and the call counts of records all looked up: with
    /// files that repeat, drop, add and reorder records, labels (arcs moved back to the
    /// function) and addresses outside every symbol, and a filter.
    #[test]
    fn files_matched_against_the_last_give_what_look_ups_give() {
        let mut t = table(&["a", "b", "c", "d", "e", "f", "g", "h"]);
        t.syms[3].is_func = false;
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |n: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % n
        };
        let base: Vec<(u64, u64)> = (0..40)
            .map(|_| (0x100 + next(0x900), 0x100 + next(0x900)))
            .collect();
        let files: Vec<Vec<(u64, u64, u64)>> = (0..6)
            .map(|f| {
                let mut recs: Vec<(u64, u64, u64)> = Vec::new();
                for &(from, to) in &base {
                    if next(5) != 0 {
                        recs.push((from, to, next(7) + 1));
                    }
                }
                recs.extend((0..3).map(|_| (0x100 + next(0x900), 0x100 + next(0x900), 1)));
                match f % 3 {
                    0 => recs.sort_unstable(),
                    1 => recs.sort_unstable_by_key(|r| (r.0, std::cmp::Reverse(r.1))),
                    _ => {}
                }
                recs
            })
            .collect();
        let allowed = |p: usize, c: usize| (p + c) % 5 != 0;
        let read = |matched: bool| {
            let mut cg = CallGraph::new(&t);
            for f in &files {
                if matched {
                    cg.next_file();
                }
                for &(from, to, count) in f {
                    cg.tally_if(&t, from, to, count, allowed);
                }
            }
            let calls = cg.calls_in.clone();
            let arcs: Vec<(usize, usize, u64)> = cg
                .arcs
                .iter()
                .map(|a| (a.parent, a.child, a.count))
                .collect();
            (calls, arcs)
        };
        let (want, got) = (read(false), read(true));
        assert!(want.1.len() > 10, "{want:?}");
        assert_eq!(got, want);
    }

    #[test]
    fn self_recursion_is_not_a_call_and_not_a_cycle() {
        let t = table(&["main", "fib"]);
        let mut cg = CallGraph::new(&t);
        call(&mut cg, &t, 0, 1, 1);
        call(&mut cg, &t, 1, 1, 5000);
        cg.assemble(&t, &[0.0, 10.0], &Exclusions::default());
        assert_eq!(cg.nodes[1].ncalls, 1);
        assert_eq!(cg.nodes[1].self_calls, 5000);
        assert_eq!(cg.num_cycles, 0);
        // main inherits all of fib's time through its single call.
        assert_eq!(cg.nodes[0].child_time, 10.0);
        assert!(cg.nodes[0].top_order > cg.nodes[1].top_order);
    }

    #[test]
    fn mutual_recursion_makes_one_cycle_node() {
        let t = table(&["main", "ping", "pong", "leaf"]);
        let mut cg = CallGraph::new(&t);
        call(&mut cg, &t, 0, 1, 10);
        call(&mut cg, &t, 1, 2, 100);
        call(&mut cg, &t, 2, 1, 90);
        call(&mut cg, &t, 2, 3, 50);
        cg.assemble(&t, &[0.0, 10.0, 30.0, 5.0], &Exclusions::default());
        assert_eq!(cg.num_cycles, 1);
        let cyc = cg.num_syms;
        assert_eq!(cg.nodes[cyc].cyc_num, 1);
        assert_eq!(cg.nodes[1].cyc_head, cyc);
        assert_eq!(cg.nodes[2].cyc_head, cyc);
        assert_eq!(cg.nodes[0].cyc_head, 0);
        // Calls into the cycle from outside, and between its members.
        assert_eq!(cg.nodes[cyc].ncalls, 10);
        assert_eq!(cg.nodes[cyc].self_calls, 190);
        // The flat profile's calls include calls from the other member.
        assert_eq!(cg.nodes[1].ncalls, 100);
        assert_eq!(cg.nodes[2].ncalls, 100);
        // Members share a topological number, below their caller's and above leaf's.
        assert_eq!(cg.nodes[1].top_order, cg.nodes[2].top_order);
        assert!(cg.nodes[0].top_order > cg.nodes[1].top_order);
        assert!(cg.nodes[3].top_order < cg.nodes[1].top_order);
        // Cycle time = members' time; leaf's time reaches the cycle, and all of it main.
        assert_eq!(cg.nodes[cyc].time, 40.0);
        assert_eq!(cg.nodes[cyc].child_time, 5.0);
        assert_eq!(cg.nodes[0].child_time, 45.0);
        // The call graph's order: main (45 total) and the cycle first.
        assert_eq!(cg.time_sorted[0], cyc);
        assert_eq!(cg.nodes[cyc].index, 1);
    }

    #[test]
    fn arcs_into_labels_move_back_to_the_function_and_unknown_ends_are_dropped() {
        let mut t = table(&["main", "f", "label"]);
        t.syms[2].is_func = false;
        let mut cg = CallGraph::new(&t);
        call(&mut cg, &t, 0, 2, 7);
        cg.tally(&t, 0x10, t.syms[1].addr, 3);
        cg.assemble(&t, &[0.0; 3], &Exclusions::default());
        assert_eq!(cg.nodes[1].ncalls, 7);
        assert_eq!(cg.nodes[2].ncalls, 0);
        assert_eq!(cg.arcs.len(), 1);
    }

    /// `total_order`'s fast path gives glibc's merge order (msort with `cmp_total`), with
    /// ties in total, cycles, leading underscores, calls and duplicate names, and falls back
    /// for infinite and NaN totals.
    #[test]
    fn total_order_is_the_merge_sort_order() {
        let pool = ["a", "b", "_a", "_b", "__x", "", "a"];
        let mut rng = super::super::TestRng(0xdead_beef_cafe_f00du64);
        let mut next = move |k: u64| rng.below(k);
        for round in 0..3000 {
            let n = next(120) as usize;
            let cycles = next(6) as usize;
            let names: Vec<&'static str> = (0..n).map(|_| pool[next(7) as usize]).collect();
            let t = table(&names);
            let special = round % 10 == 0;
            let value = |k: u64| match k {
                0 => 0.0,
                1 => -0.0,
                2 => 1.5,
                3 => 3.0,
                4 => 1e308,
                5 => f64::INFINITY,
                _ => f64::NAN,
            };
            let nodes: Vec<Node> = (0..n + cycles)
                .map(|i| {
                    let mut x = Node::new(i);
                    x.prop_self = value(next(if special { 7 } else { 5 }));
                    x.prop_child = value(next(4));
                    // Calls near u64::MAX leave no room for packed keys.
                    x.ncalls = next(3) + if round % 7 == 3 { u64::MAX - 3 } else { 0 };
                    if i >= n {
                        x.cyc_num = (i - n + 1) as u32;
                    }
                    x
                })
                .collect();
            let mut want: Vec<usize> = (0..n + cycles).collect();
            msort(&mut want, |&l, &r| cmp_total(&nodes, &t, n, l, r));
            assert_eq!(total_order(&nodes, &t, n), want, "round {round}");
        }
    }

    #[test]
    fn top_order_is_the_stable_sort_order() {
        let mut rng = super::super::TestRng(0x6a09_e667_f3bc_c908u64);
        let mut next = move |k: u64| rng.below(k);
        for round in 0..500 {
            let n = next(100) as usize;
            let nodes: Vec<Node> = (0..n)
                .map(|i| {
                    let mut x = Node::new(i);
                    x.top_order = 1 + next(n as u64 / 3 + 1) as i64;
                    if round % 10 == 0 && next(20) == 0 {
                        x.top_order = [DFN_NAN, DFN_BUSY, n as i64 + 1][next(3) as usize];
                    }
                    x
                })
                .collect();
            let mut want: Vec<usize> = (0..n).collect();
            msort(&mut want, |&l, &r| {
                nodes[l].top_order.cmp(&nodes[r].top_order)
            });
            assert_eq!(top_order(&nodes), want, "round {round}");
        }
    }

    #[test]
    fn children_lists_are_in_prepend_order() {
        let t = table(&["main", "a", "b", "c"]);
        let mut cg = CallGraph::new(&t);
        for to in 1..=3 {
            call(&mut cg, &t, 0, to, 1);
        }
        call(&mut cg, &t, 0, 1, 1);
        let order: Vec<usize> = cg.children(0).map(|a| cg.arcs[a].child).collect();
        assert_eq!(order, [3, 2, 1]);
        assert_eq!(cg.arcs[cg.children(0).last().unwrap()].count, 2);
    }
}
