//! The inline report ([`crate::report::inline`]) as tables, JSON or CSV: rendering only.

use std::io::Write;

use profil_symbols::demangle::display_name;
use serde::Serialize;

use crate::render::json::{Compact, Header, OneLine};
use crate::render::table::Table;
use crate::report::inline::{InlineReport, Step};
use crate::request::Format;
use crate::units::{human_seconds, samples};
use crate::Result;

/// Write `rep` in `format` (CSV: the functions view).
pub fn write(format: Format, rep: &InlineReport, out: &mut impl Write) -> Result<()> {
    match format {
        Format::Json => json(rep, out),
        Format::Csv => csv(rep, out),
        Format::Table => table(rep, out),
    }
}

/// A chain as text: `outer > inner (inlined at file:line) > …`.
pub fn chain_text(steps: &[Step]) -> String {
    steps
        .iter()
        .map(|s| match &s.call_site {
            Some(site) => format!("{} (at {site})", display_name(&s.raw_name)),
            None => display_name(&s.raw_name).into_owned(),
        })
        .collect::<Vec<_>>()
        .join(" > ")
}

/// Both views as tables.
pub fn table(rep: &InlineReport, out: &mut impl Write) -> Result<()> {
    writeln!(
        out,
        "Self time by source function of {}, inlined copies included: {} samples at {} Hz = {} of CPU time",
        rep.executable,
        rep.total_samples,
        rep.hz,
        human_seconds(rep.total_seconds())
    )?;
    writeln!(out)?;
    let mut b = Table::new();
    b.row([
        "%",
        "self",
        "samples",
        "inlined",
        "inclusive",
        "copies",
        "function",
        "inlined into",
    ]);
    for r in &rep.functions {
        b.row([
            format!("{:.2}", rep.percent(r.samples)),
            human_seconds(rep.seconds(r.samples)),
            samples(r.samples),
            samples(r.inlined_samples),
            samples(r.inclusive_samples),
            r.copies.to_string(),
            r.name.clone(),
            r.inlined_into.join(", "),
        ]);
    }
    writeln!(out, "{}", b.render(6))?;
    writeln!(
        out,
        "inlined: samples in inlined copies; inclusive: samples of every chain the function is in."
    )?;
    writeln!(out)?;
    writeln!(out, "By inline chain (outermost function first):")?;
    writeln!(out)?;
    let mut b = Table::new();
    b.row(["%", "self", "samples", "chain"]);
    for c in &rep.chains {
        b.row([
            format!("{:.2}", rep.percent(c.samples)),
            human_seconds(rep.seconds(c.samples)),
            samples(c.samples),
            chain_text(&c.steps),
        ]);
    }
    writeln!(out, "{}", b.render(3))?;
    Ok(())
}

/// The CSV header (the function-row fields, in order; the JSON function rows have the same
/// keys).
pub const CSV_FIELDS: [&str; 10] = [
    "rank",
    "function",
    "raw_name",
    "percent",
    "self_seconds",
    "samples",
    "inlined_samples",
    "inclusive_samples",
    "copies",
    "inlined_into",
];

/// The functions view: a header line and one line per function (`inlined_into` joined
/// with `;`).
pub fn csv(rep: &InlineReport, out: &mut impl Write) -> Result<()> {
    let rows = rep.functions.iter().enumerate().map(|(i, r)| {
        [
            (i + 1).to_string(),
            r.name.clone(),
            r.raw_name.clone(),
            format!("{}", rep.percent(r.samples)),
            format!("{}", rep.seconds(r.samples)),
            format!("{}", r.samples),
            format!("{}", r.inlined_samples),
            format!("{}", r.inclusive_samples),
            r.copies.to_string(),
            r.inlined_into.join(";"),
        ]
    });
    crate::render::csv::write(out, &CSV_FIELDS, rows)
}

/// `--json`: the report's fields, then both views, one line per row.
#[derive(Serialize)]
struct Json<'a> {
    #[serde(flatten)]
    header: Header<'a>,
    functions: Vec<OneLine<JsonFunction<'a>>>,
    chains: Vec<OneLine<JsonChain>>,
}

/// A function row, with the keys of [`CSV_FIELDS`].
#[derive(Serialize)]
struct JsonFunction<'a> {
    rank: usize,
    function: &'a str,
    raw_name: &'a str,
    percent: f64,
    self_seconds: f64,
    samples: f64,
    inlined_samples: f64,
    inclusive_samples: f64,
    copies: usize,
    inlined_into: Compact<&'a [String]>,
}

/// A chain row: names outermost first, and where each inlined step was inlined.
#[derive(Serialize)]
struct JsonChain {
    rank: usize,
    chain: Compact<Vec<String>>,
    call_sites: Compact<Vec<String>>,
    percent: f64,
    self_seconds: f64,
    samples: f64,
}

/// One JSON object (see [`crate::report::inline`] for the fields).
pub fn json(rep: &InlineReport, out: &mut impl Write) -> Result<()> {
    let functions = rep
        .functions
        .iter()
        .enumerate()
        .map(|(i, r)| {
            OneLine(JsonFunction {
                rank: i + 1,
                function: &r.name,
                raw_name: &r.raw_name,
                percent: rep.percent(r.samples),
                self_seconds: rep.seconds(r.samples),
                samples: r.samples,
                inlined_samples: r.inlined_samples,
                inclusive_samples: r.inclusive_samples,
                copies: r.copies,
                inlined_into: Compact(&r.inlined_into),
            })
        })
        .collect();
    let chains = rep
        .chains
        .iter()
        .enumerate()
        .map(|(i, c)| {
            OneLine(JsonChain {
                rank: i + 1,
                chain: Compact(
                    c.steps
                        .iter()
                        .map(|s| display_name(&s.raw_name).into_owned())
                        .collect(),
                ),
                call_sites: Compact(
                    c.steps
                        .iter()
                        .skip(1)
                        .map(|s| s.call_site.clone().unwrap_or_default())
                        .collect(),
                ),
                percent: rep.percent(c.samples),
                self_seconds: rep.seconds(c.samples),
                samples: c.samples,
            })
        })
        .collect();
    crate::render::json::write_report(
        out,
        &Json {
            header: Header::new(
                &rep.executable,
                &rep.gmon_files,
                rep.hz,
                rep.total_samples,
                rep.total_seconds(),
            ),
            functions,
            chains,
        },
    )
}
