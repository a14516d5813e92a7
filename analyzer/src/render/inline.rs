//! The inline report ([`crate::report::inline`]) as tables, JSON or CSV: rendering only.

use std::io::Write;

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

/// A chain as the table shows it: `outer > inner (at file:line) > …`, each name shortened,
/// and a chain of more than four steps as its first step, how many are left out, and its
/// last two (`--json` has every step whole).
pub fn chain_text(rep: &InlineReport, steps: &[Step]) -> String {
    let cwd = crate::render::names::current_dir();
    let step = |s: &Step| {
        let name = crate::render::names::short_name_keeping_last(&rep.name_of(&s.raw_name), 32);
        match &s.call_site {
            Some(site) => {
                let l = crate::render::names::short_location(site, cwd.as_deref());
                format!("{name} (at {})", crate::render::names::fit_location(&l, 24))
            }
            None => name,
        }
    };
    let shown: Vec<String> = steps.iter().map(step).collect();
    crate::render::names::short_chain(&shown)
}

/// The widest a name is shown in the tables (JSON and CSV keep them whole).
const NAME_WIDTH: usize = 48;

/// A location as the tables show it: relative, at most 32 characters.
fn shown_location(location: Option<&str>, cwd: Option<&std::path::Path>) -> String {
    location
        .map(|l| {
            let l = crate::render::names::short_location(l, cwd);
            crate::render::names::fit_location(&l, 32)
        })
        .unwrap_or_default()
}

/// Both views as tables.
pub fn table(rep: &InlineReport, out: &mut impl Write) -> Result<()> {
    writeln!(
        out,
        "{}",
        crate::render::text::header_line(
            &format!(
                "Self time by source function of {}, inlined copies included",
                rep.executable
            ),
            rep.total_samples as f64,
            rep.hz,
            rep.total_seconds()
        )
    )?;
    writeln!(out)?;
    let cwd = crate::render::names::current_dir();
    let full: Vec<&str> = rep.functions.iter().map(|r| r.name.as_str()).collect();
    // Names shortened to 48 characters, narrower (down to 16) while the table is wider than
    // [`crate::render::WIDTH`]; `--wide` keeps them whole.
    let wide = crate::render::wide();
    let table_with = |width: usize| {
        let shown = crate::render::names::short_names(&full, width);
        let mut b = Table::new();
        let mut head = vec!["%", "self", "samples", "inlined", "inclusive"];
        if wide {
            head.push("copies");
        }
        head.extend(["function", "location", "inlined into"]);
        b.row(head);
        for (r, name) in rep.functions.iter().zip(shown) {
            // The functions holding a copy, or the first and how many more (`--json` lists
            // them all).
            let all = r.inlined_into.join(", ");
            let into = match r.inlined_into.as_slice() {
                _ if wide || all.chars().count() <= width => all,
                [one] => crate::render::names::short_name_keeping_last(one, width),
                [first, rest @ ..] => format!(
                    "{} {}",
                    crate::render::names::short_name_keeping_last(first, width),
                    if width < NAME_WIDTH {
                        format!("+{}", rest.len())
                    } else {
                        format!("and {} more", rest.len())
                    }
                ),
                [] => all,
            };
            let mut row = vec![
                format!("{:.2}", rep.percent(r.samples)),
                human_seconds(rep.seconds(r.samples)),
                samples(r.samples),
                samples(r.inlined_samples),
                samples(r.inclusive_samples),
            ];
            if wide {
                row.push(r.copies.to_string());
            }
            row.extend([
                name,
                shown_location(r.location.as_deref(), cwd.as_deref()),
                into,
            ]);
            b.row(row);
        }
        b.render(5 + usize::from(wide))
    };
    writeln!(
        out,
        "{}",
        crate::render::fit_names(NAME_WIDTH, 16, table_with)
    )?;
    writeln!(
        out,
        "inlined: samples in inlined copies; inclusive: samples of every chain the function is in{}",
        if wide {
            "."
        } else {
            ";\nhow many copies: --wide, --json or --csv."
        }
    )?;
    writeln!(out)?;
    writeln!(out, "By inline chain (outermost function first):")?;
    writeln!(out)?;
    let mut b = Table::new();
    b.row(["%", "self", "samples", "location", "chain"]);
    for c in &rep.chains {
        b.row([
            format!("{:.2}", rep.percent(c.samples)),
            human_seconds(rep.seconds(c.samples)),
            samples(c.samples),
            shown_location(c.location.as_deref(), cwd.as_deref()),
            chain_text(rep, &c.steps),
        ]);
    }
    writeln!(out, "{}", b.render(3))?;
    Ok(())
}

/// The CSV header (the function-row fields, in order; the JSON function rows have the same
/// keys).
pub const CSV_FIELDS: [&str; 11] = [
    "rank",
    "function",
    "raw_name",
    "location",
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
            r.location.clone().unwrap_or_default(),
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
    location: Option<&'a str>,
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
    location: Option<String>,
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
                location: r.location.as_deref(),
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
                chain: Compact(c.steps.iter().map(|s| rep.name_of(&s.raw_name)).collect()),
                call_sites: Compact(
                    c.steps
                        .iter()
                        .skip(1)
                        .map(|s| s.call_site.clone().unwrap_or_default())
                        .collect(),
                ),
                location: c.location.clone(),
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
