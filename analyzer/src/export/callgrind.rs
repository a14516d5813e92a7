//! `--to callgrind`: the callgrind profile format, for KCachegrind/QCachegrind and
//! `callgrind_annotate`.
//!
//! One event, `Samples`. Each function (`ob=` its own object/`fl=`/`fn=`) gets its self cost per source
//! line: the samples whose leaf frame it is, at the leaf's line. Call arcs (`cfl=`/`cfn=`,
//! `calls=`, then the caller's line and the inclusive cost) come from the stacks only: an
//! arc is a caller frame directly above a callee frame in a sample (inline chains included),
//! its inclusive cost is the samples in which it is on the stack, counted once per sample
//! however often recursion repeats it. Callgrind wants a call count on every arc and a
//! sampled stack knows none, so `calls=` holds that same number of samples; it is not a
//! count of calls (a `desc:` line says so). Nothing is estimated from `-pg` call counts.
//!
//! The sampling rate, the unsampled time and the truncated-stack count (when known) are
//! `desc:` header lines, which KCachegrind shows with the profile.

use std::collections::BTreeMap;
use std::io::Write;

use super::model::StackProfile;
use crate::Result;

/// Self samples per function and line, and per caller the inclusive samples of each arc
/// (caller line, callee).
struct Costs {
    self_cost: BTreeMap<usize, BTreeMap<u64, u64>>,
    arcs: BTreeMap<usize, BTreeMap<(u64, usize), u64>>,
}

fn costs(p: &StackProfile) -> Costs {
    let mut self_cost: BTreeMap<usize, BTreeMap<u64, u64>> = BTreeMap::new();
    let mut arcs: BTreeMap<usize, BTreeMap<(u64, usize), u64>> = BTreeMap::new();
    let mut seen: Vec<(usize, u64, usize)> = Vec::new();
    for s in &p.samples {
        if s.count == 0 {
            continue;
        }
        let frames: Vec<_> = p.frames(s).collect();
        if let Some(leaf) = frames.first() {
            *self_cost
                .entry(leaf.function)
                .or_default()
                .entry(leaf.line)
                .or_default() += s.count;
        }
        seen.clear();
        for w in frames.windows(2) {
            let (callee, caller) = (w[0], w[1]);
            let key = (caller.function, caller.line, callee.function);
            if seen.contains(&key) {
                continue;
            }
            seen.push(key);
            *arcs
                .entry(caller.function)
                .or_default()
                .entry((caller.line, callee.function))
                .or_default() += s.count;
        }
    }
    Costs { self_cost, arcs }
}

/// Write the callgrind file.
pub fn write(p: &StackProfile, out: &mut impl Write) -> Result<()> {
    let c = costs(p);
    let total: u64 = c.self_cost.values().flat_map(|m| m.values()).sum();
    writeln!(out, "# callgrind format")?;
    writeln!(out, "version: 1")?;
    writeln!(out, "creator: profil-report {}", env!("CARGO_PKG_VERSION"))?;
    writeln!(out, "pid: 0")?;
    writeln!(out, "cmd: {}", p.executable)?;
    writeln!(out, "part: 1")?;
    writeln!(
        out,
        "desc: Timer: {} samples at {} Hz ({} s per sample) from {}",
        p.total_samples,
        p.hz,
        p.seconds(1.0),
        p.gmon_files.join(", ")
    )?;
    writeln!(
        out,
        "desc: Calls: the number of samples with the call on the stack, not a count of calls"
    )?;
    if !p.has_call_stacks {
        writeln!(
            out,
            "desc: Stacks: none recorded; arcs are inline chains only"
        )?;
    }
    if let Some(u) = p.unsampled_seconds {
        writeln!(out, "desc: Unsampled CPU time: {u} s")?;
    }
    if let Some(t) = p.truncated_stacks {
        writeln!(out, "desc: Truncated stacks: {t}")?;
    }
    writeln!(out)?;
    writeln!(out, "positions: line")?;
    writeln!(out, "events: Samples")?;
    writeln!(out, "summary: {total}")?;
    writeln!(out)?;
    let file_of = |f: usize| p.functions[f].file.as_deref().unwrap_or("???");
    // Each function's own object: libc's functions are libc's, not the executable's.
    let object_of = |f: usize| {
        p.functions[f]
            .object
            .and_then(|o| p.objects.get(o))
            .map_or(p.executable.as_str(), |o| o.path.as_str())
    };
    let functions: std::collections::BTreeSet<usize> =
        c.self_cost.keys().chain(c.arcs.keys()).copied().collect();
    // `ob=` when the object changes; `cob=` for a callee of another object (callgrind's
    // default is the caller's).
    let mut current = None;
    for f in functions {
        if current != Some(object_of(f)) {
            writeln!(out, "ob={}", object_of(f))?;
            current = Some(object_of(f));
        }
        writeln!(out, "fl={}", file_of(f))?;
        writeln!(out, "fn={}", p.functions[f].name)?;
        if let Some(lines) = c.self_cost.get(&f) {
            for (line, cost) in lines {
                writeln!(out, "{line} {cost}")?;
            }
        }
        if let Some(arcs) = c.arcs.get(&f) {
            for (&(line, callee), &cost) in arcs {
                if object_of(callee) != object_of(f) {
                    writeln!(out, "cob={}", object_of(callee))?;
                }
                writeln!(out, "cfl={}", file_of(callee))?;
                writeln!(out, "cfn={}", p.functions[callee].name)?;
                writeln!(out, "calls={cost} {}", p.functions[callee].start_line)?;
                writeln!(out, "{line} {cost}")?;
            }
        }
        writeln!(out)?;
    }
    writeln!(out, "totals: {total}")?;
    Ok(())
}
