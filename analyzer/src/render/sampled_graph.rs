//! The call graph measured from sampled stacks, as text and as the JSON `"call_graph"` object
//! (fields documented in [`crate::report::sampled_graph`]): rendering only.

use std::io::Write;

use crate::json::{json_num, json_opt, json_str};
use crate::profile::stats::poisson_ci95;
use crate::render::callgraph::write_heading;
use crate::render::units::human_seconds as secs;
use crate::report::sampled_graph::{Arc, SampledGraph};

/// How to read the graph (printed above it, and carried in the JSON).
pub const MEASURED_NOTE: &str = "Measured from the sampled call stacks: a function's total \
time is the samples with it anywhere on the stack, and each caller/callee line the samples \
with that call on the stack, counted once per sample however deep the recursion. Nothing is \
estimated from call counts.";

fn label(g: &SampledGraph, id: usize) -> String {
    format!("{} [{id}]", g.function(id).name)
}

fn arc_line(g: &SampledGraph, a: &Arc, other: usize, out: &mut impl Write) -> std::io::Result<()> {
    let name = if a.caller == a.callee {
        format!("{} (recursive)", label(g, other))
    } else {
        label(g, other)
    };
    let calls = if g.arcs.iter().any(|a| a.calls.is_some()) {
        format!(
            "{:>12}  ",
            a.calls.map(|c| format!("{c} calls")).unwrap_or_default()
        )
    } else {
        String::new()
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
        writeln!(
            out,
            "{}   {:.1}%   total {}   self {}",
            label(g, f.id),
            g.percent(f.total_samples),
            secs(g.seconds(f.total_samples)),
            secs(g.seconds(f.self_samples)),
        )?;
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

/// The graph as one JSON object, indented by `indent` spaces after the first line.
pub fn to_json(g: &SampledGraph, indent: usize) -> String {
    let pad = " ".repeat(indent);
    let mut s = String::from("{\n");
    let item = |s: &mut String, key: &str, value: String, last: bool| {
        s.push_str(&format!(
            "{pad}  {}: {value}{}\n",
            json_str(key),
            if last { "" } else { "," }
        ));
    };
    let list = |items: Vec<String>| {
        if items.is_empty() {
            "[]".to_owned()
        } else {
            format!(
                "[\n{pad}    {}\n{pad}  ]",
                items.join(&format!(",\n{pad}    "))
            )
        }
    };
    item(&mut s, "kind", json_str("sampled"), false);
    item(&mut s, "measured_note", json_str(MEASURED_NOTE), false);
    item(&mut s, "samples", g.samples.to_string(), false);
    item(
        &mut s,
        "total_seconds",
        json_num(g.seconds(g.samples)),
        false,
    );
    let hz = f64::from(g.hz.max(1));
    let functions = g
        .functions
        .iter()
        .map(|f| {
            let (lo, hi) = poisson_ci95(f.total_samples as f64);
            format!(
                "{{\"id\": {}, \"name\": {}, \"raw_name\": {}, \"location\": {}, \"percent\": {}, \"self_seconds\": {}, \"self_samples\": {}, \"total_seconds\": {}, \"total_samples\": {}, \"ci95\": [{}, {}]}}",
                f.id,
                json_str(&f.name),
                json_str(&f.raw_name),
                f.location.as_deref().map(json_str).unwrap_or_else(|| "null".into()),
                json_num(g.percent(f.total_samples)),
                json_num(g.seconds(f.self_samples)),
                f.self_samples,
                json_num(g.seconds(f.total_samples)),
                f.total_samples,
                json_num(lo / hz),
                json_num(hi / hz),
            )
        })
        .collect();
    item(&mut s, "functions", list(functions), false);
    let arcs = g
        .arcs
        .iter()
        .map(|a| {
            format!(
                "{{\"caller\": {}, \"callee\": {}, \"samples\": {}, \"seconds\": {}, \"calls\": {}}}",
                a.caller,
                a.callee,
                a.samples,
                json_num(g.seconds(a.samples)),
                json_opt(a.calls)
            )
        })
        .collect();
    item(&mut s, "arcs", list(arcs), false);
    let w = &g.walks;
    item(
        &mut s,
        "walks",
        format!(
            "{{\"walks\": {}, \"complete\": {}, \"left_fp_code\": {}, \"truncated\": {}, \"too_deep\": {}, \"no_range\": {}, \"frameless_leaf\": {}, \"arcs_dropped\": {}, \"stacks_dropped\": {}}}",
            w.walks, w.complete, w.left_fp_code, w.truncated, w.too_deep, w.no_range, w.frameless_leaf, w.arcs_dropped, w.stacks_dropped
        ),
        false,
    );
    let notes: Vec<String> = g.notes.iter().map(|n| json_str(n)).collect();
    item(&mut s, "notes", list(notes), true);
    s.push_str(&pad);
    s.push('}');
    s
}
