//! `diff`'s renderers: the table of significant changes and `--json` ([`super::compare::Diff`]
//! as `serde_json` pretty-prints it).

use std::io::Write;

use super::compare::{Diff, Row, SideSummary};
use crate::units::human_seconds;
use crate::Result;

/// `--json`: `serde_json`'s pretty layout. A write error stays an I/O error, so that a
/// closed pipe ends the program quietly as for every other output.
pub fn write_json(diff: &Diff, out: &mut impl Write) -> Result<()> {
    serde_json::to_writer_pretty(&mut *out, diff).map_err(crate::render::json::json_error)?;
    writeln!(out)?;
    Ok(())
}

pub fn print_table(d: &Diff, out: &mut impl Write) -> Result<()> {
    let side = |s: &SideSummary| {
        format!(
            "{} ({} run{}, {} per run)",
            s.executable,
            s.gmon_files.len(),
            if s.gmon_files.len() == 1 { "" } else { "s" },
            human_seconds(s.seconds_per_run)
        )
    };
    writeln!(out, "base: {}", side(&d.base))?;
    writeln!(out, "new:  {}", side(&d.new))?;
    writeln!(out)?;
    let shown: Vec<&Row> = d.rows.iter().filter(|r| r.significant).collect();
    let show_total = d.rows.iter().any(|r| {
        (r.base_total_seconds - r.base_seconds).abs() > 1e-12
            || (r.new_total_seconds - r.new_seconds).abs() > 1e-12
    });
    if shown.is_empty() {
        writeln!(out, "No significant change in any function.")?;
    } else {
        let mut b = tabled::builder::Builder::default();
        let mut head = vec![
            "function",
            "base self",
            "95% interval",
            "new self",
            "95% interval",
            "change",
            "change %",
            "p (Holm)",
        ];
        if show_total {
            head.extend(["base total", "new total"]);
        }
        b.push_record(head);
        for r in &shown {
            let ci = |c: (f64, f64)| format!("{}–{}", human_seconds(c.0), human_seconds(c.1));
            let pct = if r.base_seconds > 0.0 {
                format!("{:+.1}%", 100.0 * r.delta_seconds / r.base_seconds)
            } else {
                "new".into()
            };
            let mut rec = vec![
                r.name.clone(),
                human_seconds(r.base_seconds),
                ci(r.base_ci95),
                human_seconds(r.new_seconds),
                ci(r.new_ci95),
                format!(
                    "{}{}",
                    if r.delta_seconds >= 0.0 { "+" } else { "" },
                    human_seconds(r.delta_seconds)
                ),
                pct,
                format!("{:.2e}", r.p_holm),
            ];
            if show_total {
                rec.push(format!(
                    "{} ({})",
                    human_seconds(r.base_total_seconds),
                    ci(r.base_total_ci95)
                ));
                rec.push(format!(
                    "{} ({})",
                    human_seconds(r.new_total_seconds),
                    ci(r.new_total_ci95)
                ));
            }
            b.push_record(rec);
        }
        let mut table = b.build();
        table.with(tabled::settings::Style::psql());
        table.modify(
            tabled::settings::object::Columns::new(1..),
            tabled::settings::Alignment::right(),
        );
        writeln!(out, "{table}")?;
    }
    let rest: Vec<&Row> = d.rows.iter().filter(|r| !r.significant).collect();
    if !rest.is_empty() {
        let (b, n): (f64, f64) = rest.iter().fold((0.0, 0.0), |acc, r| {
            (acc.0 + r.base_seconds, acc.1 + r.new_seconds)
        });
        writeln!(
            out,
            "{} function{} without a significant change ({} → {} together)",
            rest.len(),
            if rest.len() == 1 { "" } else { "s" },
            human_seconds(b),
            human_seconds(n)
        )?;
    }
    writeln!(out)?;
    writeln!(
        out,
        "Test: {}; significant: corrected p < {}.",
        d.test, d.alpha
    )?;
    Ok(())
}
