//! The default report's call graph as text and as the JSON `"call_graph"` object: rendering
//! only; the graph is built in [`crate::report::callgraph`].

use std::io::Write;

use serde::Serialize;

use crate::render::json::OneLine;
use crate::render::wrap;
use crate::report::callgraph::{Arc, Graph, UNKNOWN_CALLERS};

/// How to read the graph (printed under the estimate note).
pub const READING_NOTE: &str = "Functions by total time (self + ~children). Under each: its \
callers (\"called by\") and its callees (\"calls\"), as calls/all calls of the callee and the \
~time the callee charges to that caller. For a callee in a cycle, \"all calls\" are the calls \
into the whole cycle and the time is the cycle's; calls between members of a cycle carry no \
time.";

/// The warning printed above the graph (and carried in the JSON).
pub const ESTIMATE_NOTE: &str =
    "Children time is an estimate. Each function's time (its own and its callees') \
is shared among its callers in proportion to how many calls each made, as if every call cost \
the same. When some callers make the expensive calls and others the cheap ones, these shares \
are wrong. Self time is measured by sampling and call counts are exact; columns marked ~ are \
the estimates.";

/// Seconds with an adaptive unit (the flat table's format).
fn secs(s: f64) -> String {
    crate::units::human_seconds(s)
}

/// A call graph's heading: a blank line, `title`, how to read the graph (`lead`, wrapped),
/// and each note as a wrapped `*` item.
pub(crate) fn write_heading(
    out: &mut impl Write,
    title: &str,
    lead: &str,
    notes: &[String],
) -> std::io::Result<()> {
    writeln!(out)?;
    writeln!(out, "{title}")?;
    writeln!(out)?;
    for l in wrap(lead, 92) {
        writeln!(out, "  {l}")?;
    }
    for note in notes {
        writeln!(out)?;
        for (i, l) in wrap(note, 90).iter().enumerate() {
            writeln!(out, "  {} {l}", if i == 0 { "*" } else { " " })?;
        }
    }
    Ok(())
}

/// Print the call graph as text.
/// Nothing is printed for a profile without arcs (a histogram-only profile).
pub fn print_text(g: &Graph, out: &mut impl Write) -> std::io::Result<()> {
    if g.functions.is_empty() && g.unplaced_arcs.0 == 0 {
        return Ok(());
    }
    write_heading(out, "Call graph", ESTIMATE_NOTE, &g.notes)?;
    if g.functions.is_empty() {
        writeln!(out)?;
        writeln!(out, "  (no calls were recorded)")?;
        return Ok(());
    }
    writeln!(out)?;
    for l in wrap(READING_NOTE, 92) {
        writeln!(out, "  {l}")?;
    }
    for c in &g.cycles {
        writeln!(out)?;
        let names: Vec<std::borrow::Cow<'_, str>> = c
            .members
            .iter()
            .map(|&m| shown(&g.function(m).name))
            .collect();
        write_wrapped(
            out,
            &format!(
                "<cycle {}>: {} functions that call each other (recursion through {})",
                c.number,
                c.members.len(),
                names.join(", ")
            ),
            4,
        )?;
        // Too wide for a terminal: the calls go on a line of their own.
        let figures = format!(
            "    {:.1}% of the time   self {}   ~children {}",
            g.percent(c.self_seconds + c.children_seconds),
            secs(c.self_seconds),
            secs(c.children_seconds),
        );
        let calls = format!(
            "{} calls into the cycle, {} between members",
            c.calls, c.internal_calls
        );
        if crate::render::wide()
            || figures.chars().count() + 3 + calls.chars().count() <= crate::render::WIDTH
        {
            writeln!(out, "{figures}   {calls}")?;
        } else {
            writeln!(out, "{figures}\n    {calls}")?;
        }
        for &m in &c.members {
            let f = g.function(m);
            writeln!(
                out,
                "      self {:>9}  {:>10}  {}",
                secs(f.self_seconds),
                format!("~{}", secs(f.children_seconds)),
                Label(g, m)
            )?;
        }
    }
    // Arcs by callee and by caller, so that printing stays linear in the graph's size.
    let callers_of = Grouped::new(g, |a| a.callee);
    let callees_of = Grouped::new(g, |a| a.caller);
    let mut scratch = String::new();
    let mut arcs: Vec<&Arc> = Vec::new();
    for f in &g.functions {
        {
            use std::fmt::Write as _;
            let line = &mut scratch;
            line.clear();
            let _ = write!(
                line,
                "\n{}   {:.1}%   self ",
                Label(g, f.id),
                g.percent(f.self_seconds + f.children_seconds)
            );
            crate::units::push_human_seconds(line, f.self_seconds);
            line.push_str("   ~children ");
            crate::units::push_human_seconds(line, f.children_seconds);
            let _ = write!(line, "   {} calls", f.calls);
            if f.self_calls != 0 {
                let _ = write!(line, " (+{} direct recursive)", f.self_calls);
            }
            // Too wide for a terminal: the figures go on a line of their own.
            if line.chars().count() > crate::render::WIDTH + 1 && !crate::render::wide() {
                let label = Label(g, f.id).to_string();
                if let Some(rest) = line.strip_prefix(&format!("\n{label}")) {
                    *line = format!("\n{label}\n    {}", rest.trim_start());
                }
            }
            line.push('\n');
            out.write_all(line.as_bytes())?;
        }
        if let Some(loc) = &f.location {
            writeln!(out, "    at {loc}")?;
        }
        arcs.clear();
        arcs.extend(callers_of.of(f.id));
        sort_arcs(&mut arcs);
        if arcs.is_empty() && f.calls_from_unknown == 0 {
            write_wrapped(
                out,
                "    called by: no recorded caller (program entry, a signal handler or a \
                 thread start, or a caller not compiled for profiling)",
                6,
            )?;
        } else {
            writeln!(out, "    called by:")?;
            for a in &arcs {
                arc_line(g, a, a.caller, g.calls_into(f.id), out, &mut scratch)?;
            }
            if f.calls_from_unknown != 0 {
                writeln!(
                    out,
                    "      {:>15}  {:>10}  {UNKNOWN_CALLERS}",
                    format!("{}/{}", f.calls_from_unknown, f.calls),
                    "-"
                )?;
            }
        }
        arcs.clear();
        arcs.extend(callees_of.of(f.id));
        sort_arcs(&mut arcs);
        if !arcs.is_empty() {
            writeln!(out, "    calls:")?;
            for a in &arcs {
                arc_line(g, a, a.callee, g.calls_into(a.callee), out, &mut scratch)?;
            }
        }
    }
    Ok(())
}

/// The arcs grouped by one end (a function id), each group in the order of `Graph::arcs`:
/// one array for all groups instead of a vector per function.
struct Grouped<'g> {
    /// Group `id` is `arcs[start[id]..start[id + 1]]`.
    start: Vec<usize>,
    arcs: Vec<&'g Arc>,
}

impl<'g> Grouped<'g> {
    fn new(g: &'g Graph, end: impl Fn(&Arc) -> usize) -> Grouped<'g> {
        let n = g.functions.len() + 1;
        let mut start = vec![0usize; n + 1];
        for a in &g.arcs {
            start[end(a) + 1] += 1;
        }
        for i in 1..=n {
            start[i] += start[i - 1];
        }
        let mut next = start.clone();
        let mut arcs: Vec<Option<&Arc>> = vec![None; g.arcs.len()];
        for a in &g.arcs {
            let k = &mut next[end(a)];
            arcs[*k] = Some(a);
            *k += 1;
        }
        Grouped {
            start,
            arcs: arcs.into_iter().flatten().collect(),
        }
    }

    fn of(&self, id: usize) -> impl Iterator<Item = &'g Arc> + '_ {
        self.arcs[self.start[id]..self.start[id + 1]]
            .iter()
            .copied()
    }
}

/// Most time first, then most calls; calls within a cycle last.
fn sort_arcs(arcs: &mut [&Arc]) {
    arcs.sort_by(|l, r| {
        l.within_cycle
            .cmp(&r.within_cycle)
            .then(
                (r.self_seconds + r.children_seconds)
                    .total_cmp(&(l.self_seconds + l.children_seconds)),
            )
            .then(r.count.cmp(&l.count))
    });
}

/// [`Graph::label`] written in place (an arc line is printed for every arc twice, once
/// under each end: no `String` per line).
struct Label<'g>(&'g Graph, usize);

impl std::fmt::Display for Label<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (g, id) = (self.0, self.1);
        let func = g.function(id);
        let name = shown(&func.name);
        match func.cycle {
            Some(c) => write!(f, "{name} <cycle {c}> [{id}]"),
            None => write!(f, "{name} [{id}]"),
        }
    }
}

/// The most columns a function's name takes in the graph's lines (the widest line's other
/// fields take about 35, its cycle and id about 16): names are shortened as the tables
/// shorten them, whole with `--wide`.
const LABEL_NAME: usize = 48;

/// A function's name as the graph's lines show it ([`LABEL_NAME`]).
fn shown(name: &str) -> std::borrow::Cow<'_, str> {
    if crate::render::wide() || name.chars().count() <= LABEL_NAME {
        std::borrow::Cow::Borrowed(name)
    } else {
        std::borrow::Cow::Owned(crate::render::names::short_name(name, LABEL_NAME))
    }
}

/// Write `text` as one line, or, when it is wider than [`crate::render::WIDTH`] (and not
/// `--wide`), wrapped with later lines indented by `indent` spaces.
fn write_wrapped(out: &mut impl Write, text: &str, indent: usize) -> std::io::Result<()> {
    if crate::render::wide() || text.chars().count() <= crate::render::WIDTH {
        return writeln!(out, "{text}");
    }
    let lead = text.len() - text.trim_start().len();
    let lines = crate::render::wrap(text, crate::render::WIDTH - indent.max(lead));
    for (i, l) in lines.iter().enumerate() {
        let pad = if i == 0 { lead } else { indent };
        writeln!(out, "{:pad$}{l}", "")?;
    }
    Ok(())
}

/// Right-align the ASCII text from `at` to the end of `s` in `width` columns.
fn pad_left(s: &mut String, at: usize, width: usize) {
    const SPACES: &str = "                ";
    let len = s.len() - at;
    if len < width {
        s.insert_str(at, &SPACES[..width - len]);
    }
}

fn arc_line(
    g: &Graph,
    a: &Arc,
    other: usize,
    total: u64,
    out: &mut impl Write,
    scratch: &mut String,
) -> std::io::Result<()> {
    use std::fmt::Write as _;
    if a.within_cycle {
        let what = if a.caller == a.callee {
            "recursive".to_owned()
        } else {
            match g.function(a.caller).cycle {
                Some(c) => format!("in cycle {c}"),
                None => "in cycle".to_owned(),
            }
        };
        writeln!(
            out,
            "      {:>15}  {:>10}  {}",
            a.count,
            what,
            Label(g, other)
        )
    } else {
        // "      {:>15}  {:>10}  {}\n" of the fraction, the time and the label, made in one
        // buffer (both padded fields are ASCII: their length is their width).
        scratch.clear();
        scratch.push_str("      ");
        let at = scratch.len();
        let _ = write!(scratch, "{}/{}", a.count, total);
        pad_left(scratch, at, 15);
        scratch.push_str("  ");
        let at = scratch.len();
        scratch.push('~');
        crate::units::push_human_seconds(scratch, a.self_seconds + a.children_seconds);
        pad_left(scratch, at, 10);
        let _ = writeln!(scratch, "  {}", Label(g, other));
        out.write_all(scratch.as_bytes())
    }
}

/// The graph as the JSON `"call_graph"` object (fields documented in
/// [`crate::report::callgraph`]): one key per line, one line per function, arc and cycle.
#[derive(Serialize)]
pub struct Json<'a> {
    estimate_note: &'static str,
    total_seconds: f64,
    functions: Vec<OneLine<JsonFunction<'a>>>,
    arcs: Vec<OneLine<JsonArc>>,
    cycles: Vec<OneLine<JsonCycle<'a>>>,
    unplaced_arcs: OneLine<JsonUnplaced>,
    zero_count_arcs: usize,
    notes: &'a [String],
}

#[derive(Serialize)]
struct JsonFunction<'a> {
    id: usize,
    name: &'a str,
    raw_name: &'a str,
    location: Option<&'a str>,
    cycle: Option<usize>,
    percent: f64,
    self_seconds: f64,
    children_seconds: f64,
    calls: u64,
    self_calls: u64,
    calls_from_unknown: u64,
}

#[derive(Serialize)]
struct JsonArc {
    caller: usize,
    callee: usize,
    count: u64,
    within_cycle: bool,
    self_seconds: f64,
    children_seconds: f64,
}

#[derive(Serialize)]
struct JsonCycle<'a> {
    number: usize,
    members: &'a [usize],
    calls: u64,
    internal_calls: u64,
    self_seconds: f64,
    children_seconds: f64,
    percent: f64,
}

#[derive(Serialize)]
struct JsonUnplaced {
    arcs: usize,
    calls: u64,
}

/// The graph's JSON object.
pub fn json(g: &Graph) -> Json<'_> {
    Json {
        estimate_note: ESTIMATE_NOTE,
        total_seconds: g.total_seconds,
        functions: g
            .functions
            .iter()
            .map(|f| {
                OneLine(JsonFunction {
                    id: f.id,
                    name: &f.name,
                    raw_name: &f.raw_name,
                    location: f.location.as_deref(),
                    cycle: f.cycle,
                    percent: g.percent(f.self_seconds + f.children_seconds),
                    self_seconds: f.self_seconds,
                    children_seconds: f.children_seconds,
                    calls: f.calls,
                    self_calls: f.self_calls,
                    calls_from_unknown: f.calls_from_unknown,
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
                    count: a.count,
                    within_cycle: a.within_cycle,
                    self_seconds: a.self_seconds,
                    children_seconds: a.children_seconds,
                })
            })
            .collect(),
        cycles: g
            .cycles
            .iter()
            .map(|c| {
                OneLine(JsonCycle {
                    number: c.number,
                    members: &c.members,
                    calls: c.calls,
                    internal_calls: c.internal_calls,
                    self_seconds: c.self_seconds,
                    children_seconds: c.children_seconds,
                    percent: g.percent(c.self_seconds + c.children_seconds),
                })
            })
            .collect(),
        unplaced_arcs: OneLine(JsonUnplaced {
            arcs: g.unplaced_arcs.0,
            calls: g.unplaced_arcs.1,
        }),
        zero_count_arcs: g.zero_count_arcs,
        notes: &g.notes,
    }
}
