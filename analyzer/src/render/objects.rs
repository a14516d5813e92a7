//! Rows with an object column (the report across the executable and its shared objects, and
//! the pcsample report) as a table, JSON or CSV: rendering only (the numbers are in
//! [`ObjectsReport`], built by [`crate::report::objects`] and [`crate::report::pcsample`]).

use std::io::Write;

use serde::Serialize;

use crate::render::json::{Compact, OneLine};
use crate::render::table::Table;
use crate::render::text::{
    interval, no_samples_note, unsampled_line, write_note, UNSAMPLED_NOTE, UNSAMPLED_ROW,
};
use crate::report::objects::{ObjectsReport, RowNumbers};
use crate::request::Format;
use crate::units::human_seconds;
use crate::Result;

/// Write the report in `format`.
/// How far the objects table shortens names beyond [`crate::render::names::short_names`].
#[derive(Clone, Copy)]
enum Cut {
    /// As short_names leaves them.
    None,
    /// Plain identifiers keep their end.
    Ends,
    /// The bare identifier with its suffix.
    Bare,
}

pub fn write(format: Format, report: &ObjectsReport, out: &mut impl Write) -> Result<()> {
    match format {
        Format::Csv => csv(report, out),
        Format::Json => json(report, out),
        Format::Table => table(report, out),
    }
}

/// The table: a header line (the title, the samples, the rate and the CPU time; the CPU time
/// not sampled under it), the rows, and with stacks the measured call graph.
fn table(report: &ObjectsReport, out: &mut impl Write) -> Result<()> {
    let (rows, numbers) = (&report.rows, &report.numbers);
    let totals = report.graph.is_some();
    writeln!(
        out,
        "{}",
        crate::render::text::header_line(
            &report.title,
            report.total_samples,
            report.hz,
            report.total_seconds
        )
    )?;
    if report.total_samples == 0.0 {
        // An empty table, and a cause for unsampled time that does not apply, say nothing.
        writeln!(out)?;
        let cpu = report.unsampled.as_ref().map(|(u, c)| (*u, c.as_str()));
        write_note(out, &no_samples_note(cpu, report.hz))?;
        return Ok(());
    }
    if let Some((u, cause)) = &report.unsampled {
        writeln!(
            out,
            "{}",
            unsampled_line(
                *u,
                report.total_seconds,
                report.hz,
                &report.clock_scope,
                cause
            )
        )?;
    }
    writeln!(out)?;
    // Long names are shortened as in the default report (48 characters, narrower down to
    // [`MIN_NAME`] while the table is wider than 100 columns); JSON and CSV keep them whole.
    // Below 24, object names over 12 characters are cut too (`generic_nam…`). An address
    // range keeps its object's name (`<sort+0x14550-0x14710>`, the name every view uses).
    let full: Vec<&str> = rows.iter().map(|r| r.function.as_str()).collect();
    let locations = rows.iter().any(|r| r.location.is_some());
    let cwd = crate::render::names::current_dir();
    // With totals, the total's 95% interval is left to `--wide`, JSON and CSV: the fixed
    // columns alone were 91 of the 100.
    let wide = crate::render::wide();
    let total_ci = totals && wide;
    // From the longest name (at most 48), so that each step narrows the column itself.
    let longest = full.iter().map(|f| f.chars().count()).max().unwrap_or(0);
    let first = if wide {
        usize::MAX / 2
    } else {
        longest.min(48)
    };
    let table_with = |width: usize, location_width: usize, cut_ends: Cut, ci: bool| {
        // Address ranges are never cut (their end is what tells them apart). The last
        // resort (`cut_ends`): a plain identifier longer than `width` keeps its end.
        let short = crate::render::names::short_names(&full, width.max(MIN_NAME));
        let short = short.into_iter().map(|n| match cut_ends {
            Cut::None => n,
            Cut::Ends => crate::render::names::keep_function(&n, width.max(MIN_NAME)),
            Cut::Bare => crate::render::names::bare_function(&crate::render::names::keep_function(
                &n,
                width.max(MIN_NAME),
            )),
        });
        let names = full
            .iter()
            .zip(short)
            .map(|(f, s)| if f.starts_with('<') { f.to_string() } else { s });
        let mut b = Table::new();
        let mut header = vec!["%", "self", "samples"];
        if ci {
            header.push("95% interval");
        }
        if totals {
            header.push("total");
            if total_ci {
                header.push("total 95%");
            }
        }
        header.extend(["object", "function"]);
        if locations {
            header.push("location");
        }
        b.row(header);
        for ((r, n), name) in rows.iter().zip(numbers).zip(names) {
            let mut row = vec![
                format!("{:.2}", n.table_percent),
                human_seconds(n.self_seconds),
                crate::units::samples(r.samples),
            ];
            if ci {
                row.push(interval(n.ci.0, n.ci.1));
            }
            if totals {
                match &n.total {
                    Some(t) => {
                        row.push(human_seconds(t.seconds));
                        if total_ci {
                            row.push(interval(t.ci.0, t.ci.1));
                        }
                    }
                    None => row.resize(row.len() + 1 + usize::from(total_ci), String::new()),
                }
            }
            row.extend([
                if width < 24 && width < first && r.object.chars().count() > 12 {
                    r.object.chars().take(11).chain(['…']).collect()
                } else {
                    r.object.clone()
                },
                name,
            ]);
            if locations {
                row.push(
                    r.location
                        .as_deref()
                        .map(|l| {
                            let l = crate::render::names::short_location(l, cwd.as_deref());
                            crate::render::names::fit_location(&l, location_width)
                        })
                        .unwrap_or_default(),
                );
            }
            b.row(row);
        }
        if let (Some(share), Some((u, _))) = (report.unsampled_share, &report.unsampled) {
            let mut row = vec![format!("{share:.2}"), human_seconds(*u)];
            row.resize(
                3 + usize::from(ci) + usize::from(totals) + usize::from(total_ci) + 1,
                String::new(),
            );
            row.push(UNSAMPLED_ROW.into());
            if locations {
                row.push(String::new());
            }
            b.row(row);
        }
        b.render(3 + usize::from(ci))
    };
    let widest = |t: &str| t.lines().map(|l| l.chars().count()).max().unwrap_or(0);
    let (mut width, mut text) = (first, table_with(first, 32, Cut::None, true));
    for _ in 0..4 {
        if wide || widest(&text) <= crate::render::WIDTH || width == MIN_NAME {
            break;
        }
        width = width
            .saturating_sub(widest(&text) - crate::render::WIDTH)
            .max(MIN_NAME);
        text = table_with(width, 32, Cut::None, true);
    }
    // Still too wide (names that keep what tells them apart): locations keep fewer
    // directories, down to the file and line.
    // Still too wide: plain identifiers keep their end (never a name with a path), then
    // locations keep fewer directories (down to the file's end and the line).
    let mut cut_ends = Cut::None;
    if !wide && widest(&text) > crate::render::WIDTH {
        cut_ends = Cut::Ends;
        text = table_with(width, 32, cut_ends, true);
    }
    let mut location_width = 32usize;
    for _ in 0..3 {
        if wide || !locations || widest(&text) <= crate::render::WIDTH {
            break;
        }
        // The location column as shown now, narrowed by the excess.
        let shown = rows
            .iter()
            .filter_map(|r| r.location.as_deref())
            .map(|l| {
                let l = crate::render::names::short_location(l, cwd.as_deref());
                crate::render::names::fit_location(&l, location_width)
                    .chars()
                    .count()
            })
            .max()
            .unwrap_or(0);
        location_width = shown
            .saturating_sub(widest(&text) - crate::render::WIDTH)
            .max(1);
        text = table_with(width, location_width, cut_ends, true);
    }
    // The last resort of all, as in the default table: the bare identifier with its suffix
    // (`accumulate_every_item_slowly #1`).
    if !wide && widest(&text) > crate::render::WIDTH {
        text = table_with(width, location_width, Cut::Bare, true);
    }
    // Still too wide: the self time's interval waits for `--wide` (and JSON, CSV).
    let ci_left_out = !wide && widest(&text) > crate::render::WIDTH;
    if ci_left_out {
        text = table_with(width, location_width, Cut::Bare, false);
    }
    writeln!(out, "{text}")?;
    if ci_left_out {
        writeln!(
            out,
            "(the 95% interval of each self time: with --wide, --json or --csv)"
        )?;
    }
    if report.unsampled_share.is_some() {
        writeln!(out)?;
        writeln!(out, "{UNSAMPLED_NOTE}")?;
    }
    if let Some(graph) = &report.graph {
        writeln!(out)?;
        writeln!(
            out,
            "total: samples with the function anywhere on the sampled call stack (once per sample){}",
            if total_ci {
                ",\nwith its 95% interval."
            } else {
                ";\nits 95% interval in --wide, JSON and CSV."
            }
        )?;
        crate::render::sampled_graph::print_text(graph, out)?;
    }
    Ok(())
}

/// The narrowest a function name is shortened to in the table (`…_start_main@@GLIBC_2.34`
/// at 24; the function's own name survives to this).
const MIN_NAME: usize = 16;

/// The CSV fields of a row.
const CSV_FIELDS: [&str; 8] = [
    "rank",
    "object",
    "function",
    "percent",
    "self_seconds",
    "samples",
    "ci95_low_seconds",
    "ci95_high_seconds",
];

/// A header line and one line per row.
fn csv(report: &ObjectsReport, out: &mut impl Write) -> Result<()> {
    let totals = report.graph.is_some();
    let header = crate::render::csv::header(&CSV_FIELDS, totals);
    let records = report
        .rows
        .iter()
        .zip(&report.numbers)
        .enumerate()
        .map(|(i, (r, n))| {
            let mut rec = vec![
                (i + 1).to_string(),
                r.object.clone(),
                r.function.clone(),
                format!("{}", n.percent),
                format!("{}", n.self_seconds),
                format!("{}", r.samples),
                format!("{}", n.ci.0),
                format!("{}", n.ci.1),
            ];
            if totals {
                let total = n.total.as_ref().map(|t| (t.seconds, t.samples, t.ci));
                rec.extend(crate::render::csv::total_cells(total));
            }
            rec
        });
    crate::render::csv::write(out, &header, records)
}

/// `--json`: the rate, the samples and seconds of all rows, the CPU time not sampled (null:
/// not known), the processes (only when there are several), the warnings, one line per row,
/// and with stacks the measured call graph.
#[derive(Serialize)]
struct Json<'a> {
    hz: u32,
    total_samples: f64,
    total_seconds: f64,
    unsampled_seconds: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    processes: Option<OneLine<Vec<JsonProcess>>>,
    warnings: Compact<&'a [String]>,
    rows: Vec<OneLine<JsonRow<'a>>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    call_graph: Option<crate::render::sampled_graph::Json<'a>>,
}

#[derive(Serialize)]
struct JsonProcess {
    pid: u32,
    ppid: Option<u32>,
    cpu_seconds: f64,
}

/// One row; with stacks, the total fields follow (null for a row the stacks do not know).
#[derive(Serialize)]
struct JsonRow<'a> {
    rank: usize,
    object: &'a str,
    function: &'a str,
    location: Option<&'a str>,
    percent: f64,
    self_seconds: f64,
    samples: f64,
    /// The self time's 95% interval, as the table's `95% interval` column.
    ci95_low_seconds: f64,
    ci95_high_seconds: f64,
    #[serde(flatten)]
    totals: Option<JsonTotals>,
}

/// A row's total (inclusive) time from the sampled stacks.
#[derive(Serialize)]
struct JsonTotals {
    total_seconds: Option<f64>,
    total_samples: Option<u64>,
    total_ci95_low_seconds: Option<f64>,
    total_ci95_high_seconds: Option<f64>,
}

impl JsonTotals {
    fn of(n: &RowNumbers) -> JsonTotals {
        JsonTotals {
            total_seconds: n.total.as_ref().map(|t| t.seconds),
            total_samples: n.total.as_ref().map(|t| t.samples),
            total_ci95_low_seconds: n.total.as_ref().map(|t| t.ci.0),
            total_ci95_high_seconds: n.total.as_ref().map(|t| t.ci.1),
        }
    }
}

fn json(report: &ObjectsReport, out: &mut impl Write) -> Result<()> {
    let totals = report.graph.is_some();
    let processes = (report.processes.len() > 1).then(|| {
        OneLine(
            report
                .processes
                .iter()
                .map(|&(pid, ppid, cpu_seconds)| JsonProcess {
                    pid,
                    ppid,
                    cpu_seconds,
                })
                .collect(),
        )
    });
    let rows = report
        .rows
        .iter()
        .zip(&report.numbers)
        .enumerate()
        .map(|(i, (r, n))| {
            OneLine(JsonRow {
                rank: i + 1,
                object: &r.object,
                function: &r.function,
                location: r.location.as_deref(),
                percent: n.percent,
                self_seconds: n.self_seconds,
                samples: r.samples,
                ci95_low_seconds: n.ci.0,
                ci95_high_seconds: n.ci.1,
                totals: totals.then(|| JsonTotals::of(n)),
            })
        })
        .collect();
    crate::render::json::write_report(
        out,
        &Json {
            hz: report.hz,
            total_samples: report.total_samples,
            total_seconds: report.total_seconds,
            unsampled_seconds: report.unsampled.as_ref().map(|u| u.0),
            processes,
            warnings: Compact(&report.warnings),
            rows,
            call_graph: report
                .graph
                .as_ref()
                .map(crate::render::sampled_graph::json),
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::objects::ObjectRow;

    fn row(object: &str, function: &str, samples: f64, location: Option<&str>) -> ObjectRow {
        ObjectRow {
            object: object.into(),
            function: function.into(),
            samples,
            location: location.map(Into::into),
            unknown_range: None,
            symbol: None,
        }
    }

    fn render(format: Format, report: &ObjectsReport) -> String {
        let mut v = Vec::new();
        write(format, report, &mut v).unwrap();
        String::from_utf8(v).unwrap()
    }

    /// Unsampled CPU time of 2% of the whole or more is a row of the table, and the rows'
    /// percentages are then of the whole; below that it is the line under the header only,
    /// and JSON keeps `percent` of the samples either way.
    #[test]
    fn unsampled_time_is_a_row_from_two_percent_of_the_whole() {
        let rows = vec![row("p", "a", 30.0, None), row("p", "b", 10.0, None)];
        let mut report = ObjectsReport::new("t".into(), 100, rows.clone(), Vec::new());
        report.set_unsampled(0.6, "cause".into());
        let table = render(Format::Table, &report);
        let line = |name: &str| {
            table
                .lines()
                .find(|l| l.contains(name))
                .unwrap_or_else(|| panic!("{name}:\n{table}"))
                .to_string()
        };
        assert!(line("| a").trim_start().starts_with("30.00"), "{table}");
        assert!(
            line(UNSAMPLED_ROW).trim_start().starts_with("60.00"),
            "{table}"
        );
        assert!(table.contains(UNSAMPLED_NOTE), "{table}");
        let json = render(Format::Json, &report).replace(' ', "");
        assert!(json.contains("\"percent\":75,"), "{json}");
        let mut small = ObjectsReport::new("t".into(), 100, rows, Vec::new());
        small.set_unsampled(0.008, "cause".into());
        let table = render(Format::Table, &small);
        assert!(!table.contains(UNSAMPLED_ROW), "{table}");
        assert!(table.contains("75.00"), "{table}");
    }

    #[test]
    fn csv_quotes_a_carriage_return_in_a_name() {
        let report = ObjectsReport::new(
            "t".into(),
            100,
            vec![row("lib\rodd.so", "f, g", 2.0, None)],
            vec![],
        );
        assert_eq!(
            render(Format::Csv, &report),
            "rank,object,function,percent,self_seconds,samples,ci95_low_seconds,ci95_high_seconds\n\
             1,\"lib\rodd.so\",\"f, g\",100,0.02,2,0.002422092780470848,0.07224687695503235\n"
        );
    }

    /// The objects rows had their own escaper, which wrote `\u000a`, `\u000d` and `\u0009`.
    #[test]
    fn json_escapes_names_as_every_other_report() {
        let report = ObjectsReport::new(
            "t".into(),
            100,
            vec![row("lib\rodd\n.so", "say \"hi\"\t\\", 2.0, None)],
            vec!["a\rb".into()],
        );
        let text = render(Format::Json, &report);
        assert!(text.contains("\"warnings\": [\"a\\rb\"],\n"), "{text}");
        assert!(
            text.contains(
                "\"object\": \"lib\\rodd\\n.so\", \"function\": \"say \\\"hi\\\"\\t\\\\\""
            ),
            "{text}"
        );
        let parsed: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(parsed["rows"][0]["object"], "lib\rodd\n.so");
    }

    /// The manifests' additions, the totals of the stacks and an empty row list keep the form
    /// they had when written by hand.
    #[test]
    fn json_keeps_the_hand_written_form() {
        let mut report = ObjectsReport::new(
            "t".into(),
            100,
            vec![row("prog", "main", 1.0, Some("m.c:3"))],
            vec![],
        );
        report.unsampled = Some((0.5, "cause".into()));
        report.processes = vec![(10, None, 0.5), (11, Some(10), 0.25)];
        assert_eq!(
            render(Format::Json, &report),
            "{\n  \"hz\": 100,\n  \"total_samples\": 1,\n  \"total_seconds\": 0.01,\n  \
             \"unsampled_seconds\": 0.5,\n  \"processes\": [{\"pid\": 10, \"ppid\": null, \
             \"cpu_seconds\": 0.5}, {\"pid\": 11, \"ppid\": 10, \"cpu_seconds\": 0.25}],\n  \
             \"warnings\": [],\n  \"rows\": [\n    {\"rank\": 1, \"object\": \"prog\", \
             \"function\": \"main\", \"location\": \"m.c:3\", \"percent\": 100, \
             \"self_seconds\": 0.01, \"samples\": 1, \"ci95_low_seconds\": 0.0002531780768185854, \
             \"ci95_high_seconds\": 0.055716434866189955}\n  ]\n}\n"
        );
        let empty = ObjectsReport::new("t".into(), 100, vec![], vec![]);
        let text = render(Format::Json, &empty);
        assert!(
            text.ends_with("\"warnings\": [],\n  \"rows\": []\n}\n"),
            "{text}"
        );
    }
}
