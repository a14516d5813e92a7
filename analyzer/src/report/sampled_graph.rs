//! The call graph measured from sampled stacks (issue 17): it replaces the default report's
//! equal-cost estimate ([`super::callgraph`]) whenever the runtime's stacks file is there.
//!
//! Every number is a count of samples ([`crate::profile::stacks::Sampled::measure`]): a
//! function's *total* is the samples with it anywhere on the stack, its *self* the samples
//! with it innermost, and a caller→callee line the samples with that call on the stack, each
//! counted once per sample however deep the recursion. Nothing is shared out in proportion to
//! call counts, so `costly()`'s expensive calls of `work()` are charged to `costly()` and
//! `cheap()`'s cheap ones to `cheap()`. Call counts appear only where `-pg` (mcount) arcs
//! supply them; the runtime's own arcs in `gmon.out` are sample counts, not calls, and are
//! not shown as calls.
//!
//! # JSON (`--json`, field `"call_graph"`, when stacks exist)
//!
//! ```text
//! {
//!   "kind": "sampled",
//!   "samples": n,                     // sampled stacks (all samples walked)
//!   "total_seconds": number,          // samples / rate
//!   "functions": [ {
//!       "id": n,                      // 1-based, by total time
//!       "name": string, "raw_name": string, "location": string|null,
//!       "percent": number,            // total samples / samples × 100
//!       "self_seconds": number, "self_samples": n,
//!       "total_seconds": number, "total_samples": n,
//!       "ci95": [low, high] } ],      // 95% interval of total_seconds
//!   "arcs": [ {
//!       "caller": id, "callee": id,
//!       "samples": n, "seconds": number,  // samples with this call on the stack
//!       "calls": n|null } ],          // from -pg arcs only
//!   "walks": { "walks": n, "complete": n, "no_info": n, "truncated": n,
//!              "too_deep": n, "no_range": n, "fp_frames": n,
//!              "arcs_dropped": n, "stacks_dropped": n },
//!   "notes": [string, ...]
//! }
//! ```

use std::collections::HashMap;

use gmon::stacks::WalkStats;

use crate::profile::stacks::Measured;

/// One function of the sampled graph.
#[derive(Debug, Clone)]
pub struct Function {
    /// 1-based id, by total time.
    pub id: usize,
    /// Demangled name.
    pub name: String,
    /// Symbol name.
    pub raw_name: String,
    /// `file:line`, when known.
    pub location: Option<String>,
    /// Samples with it innermost.
    pub self_samples: u64,
    /// Samples with it anywhere on the stack.
    pub total_samples: u64,
}

/// One measured caller→callee edge.
#[derive(Debug, Clone)]
pub struct Arc {
    /// Caller id.
    pub caller: usize,
    /// Callee id.
    pub callee: usize,
    /// Samples with this call on the stack.
    pub samples: u64,
    /// Calls, from `-pg` arcs.
    pub calls: Option<u64>,
}

/// The sampled call graph.
#[derive(Debug, Clone)]
pub struct SampledGraph {
    /// Samples per second.
    pub hz: u32,
    /// All samples walked.
    pub samples: u64,
    /// Functions by total time.
    pub functions: Vec<Function>,
    /// Edges, grouped by caller in function order, most samples first.
    pub arcs: Vec<Arc>,
    /// How the walks ended.
    pub walks: WalkStats,
    /// What the graph cannot show.
    pub notes: Vec<String>,
}

impl SampledGraph {
    /// Build from `measured` over `names.len()` nodes. `names(i)` is (demangled, raw);
    /// `calls` are `-pg` call counts per (caller, callee) node pair.
    #[allow(clippy::too_many_arguments)]
    pub fn build(
        measured: &Measured,
        hz: u32,
        walks: WalkStats,
        names: impl Fn(usize) -> (String, String),
        location: impl Fn(usize) -> Option<String>,
        calls: &HashMap<(usize, usize), u64>,
        notes: Vec<String>,
    ) -> SampledGraph {
        let n = measured.inclusive.len();
        let mut order: Vec<usize> = (0..n).filter(|&i| measured.inclusive[i] > 0).collect();
        let (nm, raw): (Vec<_>, Vec<_>) = (0..n)
            .map(|i| {
                if measured.inclusive[i] > 0 {
                    names(i)
                } else {
                    Default::default()
                }
            })
            .unzip();
        order.sort_by(|&a, &b| {
            measured.inclusive[b]
                .cmp(&measured.inclusive[a])
                .then(measured.leaf[b].cmp(&measured.leaf[a]))
                .then(nm[a].cmp(&nm[b]))
        });
        let mut id = vec![0usize; n];
        let functions: Vec<Function> = order
            .iter()
            .enumerate()
            .map(|(k, &i)| {
                id[i] = k + 1;
                Function {
                    id: k + 1,
                    name: nm[i].clone(),
                    raw_name: raw[i].clone(),
                    location: location(i),
                    self_samples: measured.leaf[i],
                    total_samples: measured.inclusive[i],
                }
            })
            .collect();
        let mut arcs: Vec<Arc> = measured
            .edges
            .iter()
            .filter(|(&(a, b), _)| id[a] != 0 && id[b] != 0)
            .map(|(&(a, b), &s)| Arc {
                caller: id[a],
                callee: id[b],
                samples: s,
                calls: calls.get(&(a, b)).copied(),
            })
            .collect();
        arcs.sort_by(|l, r| {
            l.caller
                .cmp(&r.caller)
                .then(r.samples.cmp(&l.samples))
                .then(l.callee.cmp(&r.callee))
        });
        SampledGraph {
            hz,
            samples: measured.samples,
            functions,
            arcs,
            walks,
            notes,
        }
    }

    /// Seconds of `samples`.
    pub fn seconds(&self, samples: u64) -> f64 {
        samples as f64 / f64::from(self.hz.max(1))
    }

    /// The 95% interval of `samples`' seconds (Poisson: the count is what varies between runs).
    pub fn ci95_seconds(&self, samples: u64) -> (f64, f64) {
        let (lo, hi) = crate::profile::stats::poisson_ci95(samples as f64);
        let hz = f64::from(self.hz.max(1));
        (lo / hz, hi / hz)
    }

    /// `samples` as a percentage of all samples.
    pub fn percent(&self, samples: u64) -> f64 {
        if self.samples == 0 {
            0.0
        } else {
            100.0 * samples as f64 / self.samples as f64
        }
    }

    /// Function `id`.
    pub fn function(&self, id: usize) -> &Function {
        &self.functions[id - 1]
    }
}
