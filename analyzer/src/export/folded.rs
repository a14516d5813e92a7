//! `--to folded` and `--to svg`: collapsed stacks and the flame graph drawn from them.
//!
//! Folded (Brendan Gregg's `stackcollapse` output, read by `flamegraph.pl`, inferno,
//! speedscope and most flame-graph tools) is one line per distinct stack:
//! `root;caller;…;leaf COUNT`, frames by demangled function name (inline chains included,
//! outermost first), counts in samples. Identical stacks are summed, so the counts add up
//! to the profile's samples exactly (split bins are rounded by largest remainder within
//! the bin). A `;` inside a name would start a new frame, so it is written as `:`.
//!
//! The SVG is drawn by the `inferno` crate from exactly these lines (with its search,
//! zoom and tooltips); the unsampled time and truncated-stack count, when known, are in the
//! subtitle.

use std::collections::BTreeMap;
use std::io::Write;

use super::model::StackProfile;
use crate::{Error, Result};

/// Distinct stacks (`root;…;leaf`) and their sample counts, sorted by stack.
pub fn stacks(p: &StackProfile) -> BTreeMap<String, u64> {
    let mut out: BTreeMap<String, u64> = BTreeMap::new();
    for s in &p.samples {
        if s.count == 0 {
            continue;
        }
        let mut names: Vec<String> = p
            .frames(s)
            .map(|l| p.functions[l.function].name.replace(';', ":"))
            .collect();
        names.reverse();
        *out.entry(names.join(";")).or_default() += s.count;
    }
    out
}

/// Write the folded lines.
pub fn write(p: &StackProfile, out: &mut impl Write) -> Result<()> {
    for (stack, count) in stacks(p) {
        writeln!(out, "{stack} {count}")?;
    }
    Ok(())
}

/// What the flame graph's subtitle says about time that is not in the frames.
fn subtitle(p: &StackProfile) -> String {
    let mut parts = vec![format!(
        "{} samples at {} Hz from {}",
        p.total_samples,
        p.hz,
        p.gmon_files.join(", ")
    )];
    if !p.has_call_stacks {
        parts
            .push("no call stacks recorded: one function (and its inline chain) per sample".into());
    }
    if let Some(u) = p.unsampled_seconds {
        parts.push(format!("unsampled: {u} s"));
    }
    if let Some(t) = p.truncated_stacks {
        parts.push(format!("truncated stacks: {t}"));
    }
    parts.join("; ")
}

/// Write the flame graph.
pub fn write_svg(p: &StackProfile, out: &mut impl Write) -> Result<()> {
    let lines: Vec<String> = stacks(p)
        .into_iter()
        .map(|(s, c)| format!("{s} {c}"))
        .collect();
    if lines.is_empty() {
        return Err(Error::input(
            "the profile has no samples: there is no flame graph to draw",
        ));
    }
    let mut opt = inferno::flamegraph::Options::default();
    opt.title = format!("Flame graph of {}", p.executable);
    opt.subtitle = Some(subtitle(p));
    opt.count_name = "samples".into();
    // Colours from the function names, so the same profile always draws the same picture.
    opt.hash = true;
    opt.deterministic = true;
    inferno::flamegraph::from_lines(&mut opt, lines.iter().map(String::as_str), out)
        .map_err(|e| Error::input(format!("cannot draw the flame graph: {e}")))?;
    Ok(())
}
