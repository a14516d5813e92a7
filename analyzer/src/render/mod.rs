//! Rendering report data: how names and locations are shortened in tables ([`names`]) and
//! times written ([`crate::units`]), the one table layout ([`table`]), the CSV writer ([`csv`]),
//! the JSON writer and its layout ([`json`]: `serde` structs, key order fixed by their
//! fields); then one module per report: the default report's table, JSON and CSV
//! ([`default`]) and its call graph as text and JSON ([`callgraph`]), the call graph measured
//! from sampled stacks that replaces the estimated one when the runtime's stacks file is there
//! ([`sampled_graph`]), the line and inline reports ([`lines`], [`inline`]), `--compare-gprof`
//! ([`compare`]), the rows with an object column of the report across shared objects and the
//! pcsample report ([`objects`]), the pcsample timeline as text and SVG ([`timeline`]), and
//! the interactive HTML page that holds a report's JSON, its call tree and source ([`html`]).
//! (The reports' JSON and CSV keep the full forms.) Prose is wrapped ([`wrap`]) to fit
//! [`WIDTH`] columns, a terminal's.

/// The columns prose lines are wrapped to.
pub const WIDTH: usize = 100;

/// `--wide`: full names and paths, every column, no [`WIDTH`] budget for tables. One switch
/// for the process, set once by the command line before any report is rendered (every
/// renderer reads it; threading it through each report's options would touch every builder).
static WIDE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Set `--wide` (see [`wide`]).
pub fn set_wide(on: bool) {
    WIDE.store(on, std::sync::atomic::Ordering::Relaxed);
}

/// Whether `--wide` was given.
pub fn wide() -> bool {
    WIDE.load(std::sync::atomic::Ordering::Relaxed)
}

/// Break `text` into lines of at most `width` characters (a longer word is a line of its own).
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

/// A message for standard error, `{prefix}{text}`, wrapped to [`WIDTH`] columns with the
/// lines after the first indented by two spaces (a warning of 360 characters was one line).
pub fn message(prefix: &str, text: &str) -> String {
    if wide() {
        return format!("{prefix}{text}");
    }
    let mut lines = wrap(&format!("{prefix}{text}"), WIDTH).into_iter();
    let first = lines.next().unwrap_or_default();
    let rest: Vec<String> = wrap(&lines.collect::<Vec<_>>().join(" "), WIDTH - 2);
    std::iter::once(first)
        .chain(rest.into_iter().map(|l| format!("  {l}")))
        .collect::<Vec<_>>()
        .join("\n")
}

/// A table laid out by `table(name_width)` from `start` columns for names, narrowed (down to
/// `min`) by what the widest line has over [`WIDTH`]; with `--wide`, at `start`.
pub fn fit_names(start: usize, min: usize, table: impl Fn(usize) -> String) -> String {
    let widest = |t: &str| t.lines().map(|l| l.chars().count()).max().unwrap_or(0);
    let mut width = start;
    let mut text = table(width);
    while !wide() && width > min && widest(&text) > WIDTH {
        width = width.saturating_sub(widest(&text) - WIDTH).max(min);
        text = table(width);
    }
    text
}

pub mod callgraph;
pub mod compare;
pub mod csv;
pub mod default;
pub mod html;
pub mod inline;
pub mod json;
pub mod lines;
pub mod names;
pub mod objects;
pub mod sampled_graph;
pub mod table;
pub mod text;
pub mod timeline;
