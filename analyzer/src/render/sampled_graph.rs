//! The call graph measured from sampled stacks, as text and as the JSON `"call_graph"` object
//! (fields documented in [`crate::report::sampled_graph`]): rendering only.

use std::io::Write;

use serde::Serialize;

use crate::render::callgraph::write_heading;
use crate::render::json::OneLine;
use crate::report::sampled_graph::{Arc, SampledGraph};
use crate::units::human_seconds as secs;

/// How to read the graph (printed above it, and carried in the JSON).
pub const MEASURED_NOTE: &str = "Measured from the sampled call stacks: a function's total \
time is the samples with it anywhere on the stack, and each caller/callee line the samples \
with that call on the stack, counted once per sample however deep the recursion. Nothing is \
estimated from call counts.";

/// A function's name and id, the name shortened (as the tables shorten it) so that a line
/// with `used` other columns fits [`crate::render::WIDTH`]; whole with `--wide`.
fn label(g: &SampledGraph, id: usize, used: usize) -> String {
    let name = &g.function(id).name;
    let id_part = format!(" [{id}]");
    if crate::render::wide() {
        return format!("{name}{id_part}");
    }
    let room = crate::render::WIDTH
        .saturating_sub(used + id_part.len())
        .max(MIN_NAME);
    format!("{}{id_part}", crate::render::names::short_name(name, room))
}

/// The fewest columns a shortened name gets, however much the line's figures take.
const MIN_NAME: usize = 24;

fn arc_line(g: &SampledGraph, a: &Arc, other: usize, out: &mut impl Write) -> std::io::Result<()> {
    let calls = if g.arcs.iter().any(|a| a.calls.is_some()) {
        format!(
            "{:>12}  ",
            a.calls.map(|c| format!("{c} calls")).unwrap_or_default()
        )
    } else {
        String::new()
    };
    // "      " + time (10) + " " + percent (7) + "  " + calls.
    let used = 26 + calls.chars().count();
    let name = if a.caller == a.callee {
        format!("{} (recursive)", label(g, other, used + 12))
    } else {
        label(g, other, used)
    };
    writeln!(
        out,
        "      {:>10} {:>6.1}%  {calls}{name}",
        secs(g.seconds(a.samples)),
        g.percent(a.samples),
    )
}

/// Print the graph as text.
pub fn print_text(g: &SampledGraph, out: &mut impl Write) -> std::io::Result<()> {
    let title = format!("Call graph (from {} sampled stacks)", g.samples);
    write_heading(out, &title, MEASURED_NOTE, &g.notes)?;
    if g.functions.is_empty() {
        writeln!(out)?;
        writeln!(out, "  (no sampled stack lies in a known function)")?;
        return Ok(());
    }
    let mut callers_of: Vec<Vec<&Arc>> = vec![Vec::new(); g.functions.len() + 1];
    let mut callees_of: Vec<Vec<&Arc>> = vec![Vec::new(); g.functions.len() + 1];
    for a in &g.arcs {
        callers_of[a.callee].push(a);
        callees_of[a.caller].push(a);
    }
    for f in &g.functions {
        writeln!(out)?;
        let figures = format!(
            "   {:.1}%   total {}   self {}",
            g.percent(f.total_samples),
            secs(g.seconds(f.total_samples)),
            secs(g.seconds(f.self_samples)),
        );
        writeln!(out, "{}{figures}", label(g, f.id, figures.chars().count()))?;
        if let Some(loc) = &f.location {
            writeln!(out, "    at {loc}")?;
        }
        let mut callers = std::mem::take(&mut callers_of[f.id]);
        callers.sort_by(|l, r| r.samples.cmp(&l.samples).then(l.caller.cmp(&r.caller)));
        if callers.is_empty() {
            writeln!(
                out,
                "    called by: no caller on the sampled stacks (the stack's outermost known \
                 function)"
            )?;
        } else {
            writeln!(out, "    called by:")?;
            for a in callers {
                arc_line(g, a, a.caller, out)?;
            }
        }
        let callees = std::mem::take(&mut callees_of[f.id]);
        if !callees.is_empty() {
            writeln!(out, "    calls:")?;
            for a in callees {
                arc_line(g, a, a.callee, out)?;
            }
        }
    }
    Ok(())
}

/// The graph as the JSON `"call_graph"` object: one key per line, one line per function and
/// arc.
#[derive(Serialize)]
pub struct Json<'a> {
    /// Always `"sampled"` (the estimated graph has no `kind`).
    kind: &'static str,
    measured_note: &'static str,
    samples: u64,
    total_seconds: f64,
    functions: Vec<OneLine<JsonFunction<'a>>>,
    arcs: Vec<OneLine<JsonArc>>,
    walks: OneLine<JsonWalks>,
    notes: &'a [String],
}

#[derive(Serialize)]
struct JsonFunction<'a> {
    id: usize,
    name: &'a str,
    raw_name: &'a str,
    location: Option<&'a str>,
    percent: f64,
    self_seconds: f64,
    self_samples: u64,
    total_seconds: f64,
    total_samples: u64,
    /// The total seconds' 95% interval.
    ci95: [f64; 2],
}

#[derive(Serialize)]
struct JsonArc {
    caller: usize,
    callee: usize,
    samples: u64,
    seconds: f64,
    calls: Option<u64>,
}

/// [`gmon::stacks::WalkStats`], field for field.
#[derive(Serialize)]
struct JsonWalks {
    walks: u64,
    complete: u64,
    no_info: u64,
    bad_unwind: u64,
    too_deep: u64,
    no_range: u64,
    fp_frames: u64,
    arcs_dropped: u64,
    stacks_dropped: u64,
}

/// The graph's JSON object.
pub fn json(g: &SampledGraph) -> Json<'_> {
    let w = &g.walks;
    Json {
        kind: "sampled",
        measured_note: MEASURED_NOTE,
        samples: g.samples,
        total_seconds: g.seconds(g.samples),
        functions: g
            .functions
            .iter()
            .map(|f| {
                let (lo, hi) = g.ci95_seconds(f.total_samples);
                OneLine(JsonFunction {
                    id: f.id,
                    name: &f.name,
                    raw_name: &f.raw_name,
                    location: f.location.as_deref(),
                    percent: g.percent(f.total_samples),
                    self_seconds: g.seconds(f.self_samples),
                    self_samples: f.self_samples,
                    total_seconds: g.seconds(f.total_samples),
                    total_samples: f.total_samples,
                    ci95: [lo, hi],
                })
            })
            .collect(),
        arcs: g
            .arcs
            .iter()
            .map(|a| {
                OneLine(JsonArc {
                    caller: a.caller,
                    callee: a.callee,
                    samples: a.samples,
                    seconds: g.seconds(a.samples),
                    calls: a.calls,
                })
            })
            .collect(),
        walks: OneLine(JsonWalks {
            walks: w.walks,
            complete: w.complete,
            no_info: w.no_info,
            bad_unwind: w.bad_unwind,
            too_deep: w.too_deep,
            no_range: w.no_range,
            fp_frames: w.fp_frames,
            arcs_dropped: w.arcs_dropped,
            stacks_dropped: w.stacks_dropped,
        }),
        notes: &g.notes,
    }
}
