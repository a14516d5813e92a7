//! The line report ([`crate::report::lines`]) as a table, JSON or CSV: rendering only.

use std::io::Write;

use serde::Serialize;

use crate::render::json::{Compact, Header, OneLine};
use crate::render::table::Table;
use crate::report::lines::{LineNumbers, LineReport, LineRow};
use crate::request::Format;
use crate::units::human_seconds;
use crate::Result;

/// Write `rep` in `format`.
pub fn write(format: Format, rep: &LineReport, out: &mut impl Write) -> Result<()> {
    match format {
        Format::Json => json(rep, out),
        Format::Csv => csv(rep, out),
        Format::Table => table(rep, out),
    }
}

fn label(r: &LineRow) -> String {
    r.location().unwrap_or_else(|| {
        if r.function() == crate::report::own_lines::NOT_OWN {
            r.function().to_owned()
        } else {
            format!("<no line> ({})", r.function())
        }
    })
}

fn functions_text(r: &LineRow) -> String {
    // An own-lines chain (`own_fn > std_fn > … > leaf`) is shortened step by step.
    let first = match r.functions.first() {
        Some(f) if f.contains(" > ") => {
            let steps: Vec<String> = f.split(" > ").map(str::to_owned).collect();
            crate::render::names::short_chain(&steps)
        }
        Some(f) => f.clone(),
        None => String::new(),
    };
    match r.functions.len() {
        0 | 1 => first,
        n => format!("{first} (+{} more)", n - 1),
    }
}

/// The table, with a hint when no sampled code has line information.
pub fn table(rep: &LineReport, out: &mut impl Write) -> Result<()> {
    let title = match &rep.own {
        Some(own) => format!("Time by the program's own source lines ({own}) of"),
        None => "Self time per source line of".to_owned(),
    };
    writeln!(
        out,
        "{title} {}: {} samples at {} Hz = {} of CPU time",
        rep.executable,
        rep.total_samples,
        rep.hz,
        human_seconds(rep.total_seconds())
    )?;
    writeln!(out)?;
    let mut b = Table::new();
    b.row([
        "%",
        "cumulative",
        "self",
        "samples",
        "95% interval",
        "line",
        "function",
    ]);
    for (r, d) in rep.rows.iter().zip(rep.numbers()) {
        b.row([
            format!("{:.2}", d.percent),
            human_seconds(d.cumulative),
            human_seconds(d.self_s),
            crate::units::samples(r.samples),
            crate::render::text::interval(d.ci.0, d.ci.1),
            label(r),
            functions_text(r),
        ]);
    }
    writeln!(out, "{}", b.render(5))?;
    if rep.own.is_some() {
        writeln!(
            out,
            "\nEach sample is credited to the innermost frame in the program's own code (its \
             inlined copies and\ncallers followed); the function column is that frame's \
             function (with --chains, what ran below it)."
        )?;
    } else if rep.rows.iter().all(|r| r.line.is_none()) && !rep.rows.is_empty() {
        writeln!(
            out,
            "\nNo line information for the sampled code: compile with -g (C) or debug = 1 (Cargo)."
        )?;
    }
    Ok(())
}

/// The CSV header (the row fields, in order; the JSON rows have the same keys).
pub const CSV_FIELDS: [&str; 12] = [
    "rank",
    "location",
    "file",
    "line",
    "function",
    "functions",
    "percent",
    "cumulative_seconds",
    "self_seconds",
    "samples",
    "ci95_low_seconds",
    "ci95_high_seconds",
];

/// A header line and one line per row (functions joined with `;`, absent values empty).
pub fn csv(rep: &LineReport, out: &mut impl Write) -> Result<()> {
    let rows = rep
        .rows
        .iter()
        .zip(rep.numbers())
        .enumerate()
        .map(|(i, (r, d))| {
            [
                (i + 1).to_string(),
                r.location().unwrap_or_default(),
                r.file.clone().unwrap_or_default(),
                r.line.map(|l| l.to_string()).unwrap_or_default(),
                r.function().to_owned(),
                r.functions.join(";"),
                format!("{}", d.percent),
                format!("{}", d.cumulative),
                format!("{}", d.self_s),
                format!("{}", r.samples),
                format!("{}", d.ci.0),
                format!("{}", d.ci.1),
            ]
        });
    crate::render::csv::write(out, &CSV_FIELDS, rows)
}

/// `--json`: the report's fields, then one line per row.
#[derive(Serialize)]
struct Json<'a> {
    #[serde(flatten)]
    header: Header<'a>,
    /// `--own-lines`: which code is the program's own.
    #[serde(skip_serializing_if = "Option::is_none")]
    own: Option<&'a str>,
    lines: Vec<OneLine<JsonRow<'a>>>,
}

/// One row, with the keys of [`CSV_FIELDS`].
#[derive(Serialize)]
struct JsonRow<'a> {
    rank: usize,
    location: Option<String>,
    file: Option<&'a str>,
    line: Option<u64>,
    function: &'a str,
    functions: Compact<&'a [String]>,
    percent: f64,
    cumulative_seconds: f64,
    self_seconds: f64,
    samples: f64,
    ci95_low_seconds: f64,
    ci95_high_seconds: f64,
}

/// One JSON object (see [`crate::report::lines`] for the fields).
pub fn json(rep: &LineReport, out: &mut impl Write) -> Result<()> {
    let lines = rep
        .rows
        .iter()
        .zip(rep.numbers())
        .enumerate()
        .map(|(i, (r, d)): (usize, (&LineRow, LineNumbers))| {
            OneLine(JsonRow {
                rank: i + 1,
                location: r.location(),
                file: r.file.as_deref(),
                line: r.line,
                function: r.function(),
                functions: Compact(&r.functions),
                percent: d.percent,
                cumulative_seconds: d.cumulative,
                self_seconds: d.self_s,
                samples: r.samples,
                ci95_low_seconds: d.ci.0,
                ci95_high_seconds: d.ci.1,
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
            own: rep.own.as_deref(),
            lines,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(rows: Vec<LineRow>) -> LineReport {
        LineReport {
            executable: "prog".into(),
            gmon_files: vec!["a.gmon".into(), "b \"q\".gmon".into()],
            hz: 100,
            total_samples: 4,
            rows,
            own: None,
            units_decoded: 1,
        }
    }

    fn json_text(rep: &LineReport) -> String {
        let mut v = Vec::new();
        json(rep, &mut v).unwrap();
        String::from_utf8(v).unwrap()
    }

    #[test]
    fn json_has_one_key_per_line_and_one_row_per_line() {
        let rep = report(vec![
            LineRow {
                file: Some("a.c".into()),
                line: Some(7),
                functions: vec!["f".into(), "g".into()],
                samples: 3.0,
            },
            LineRow {
                file: None,
                line: None,
                functions: vec!["h".into()],
                samples: 1.0,
            },
        ]);
        // The intervals are the statistics module's business; the layout is this one's.
        let ci: Vec<(f64, f64)> = rep.numbers().iter().map(|d| d.ci).collect();
        assert_eq!(
            json_text(&rep),
            format!(
                "{{\n  \"executable\": \"prog\",\n  \"gmon_files\": [\"a.gmon\",\"b \\\"q\\\".gmon\"],\n  \
                 \"hz\": 100,\n  \"total_samples\": 4,\n  \"total_seconds\": 0.04,\n  \"lines\": [\n    \
                 {{\"rank\": 1, \"location\": \"a.c:7\", \"file\": \"a.c\", \"line\": 7, \"function\": \"f\", \
                 \"functions\": [\"f\",\"g\"], \"percent\": 75, \"cumulative_seconds\": 0.03, \
                 \"self_seconds\": 0.03, \"samples\": 3, \"ci95_low_seconds\": {}, \
                 \"ci95_high_seconds\": {}}},\n    \
                 {{\"rank\": 2, \"location\": null, \"file\": null, \"line\": null, \"function\": \"h\", \
                 \"functions\": [\"h\"], \"percent\": 25, \"cumulative_seconds\": 0.04, \
                 \"self_seconds\": 0.01, \"samples\": 1, \"ci95_low_seconds\": {}, \
                 \"ci95_high_seconds\": {}}}\n  ]\n}}\n",
                ci[0].0, ci[0].1, ci[1].0, ci[1].1
            )
        );
        assert!(ci[0].0 > 0.0 && ci[0].0 < 0.03 && ci[0].1 > 0.03);
    }

    /// An empty list is `[]`, as in every other list of every report (this one was `[`
    /// and `]` on two lines).
    #[test]
    fn json_without_rows_has_an_empty_list() {
        assert!(json_text(&report(Vec::new())).ends_with("\"lines\": []\n}\n"));
    }
}
