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
            crate::render::text::program(&s.executable),
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
        writeln!(out, "{}", significant_table(&shown, show_total))?;
        if !crate::render::wide() {
            writeln!(out, "(95% intervals: --wide or --json)")?;
        }
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
        "{}",
        crate::render::message(
            "",
            &format!("Test: {}; significant: corrected p < {}.", d.test, d.alpha)
        )
    )?;
    Ok(())
}

/// The table of significant changes: the numbers first (right-aligned), the function last.
/// Within [`crate::render::WIDTH`] columns, each side's self time without its 95% interval
/// (`--wide` and `--json` give them), the totals as `base → new`, and function names
/// shortened as the other reports do; `--wide`: every interval and the full names.
fn significant_table(shown: &[&Row], show_total: bool) -> String {
    let wide = crate::render::wide();
    let full: Vec<&str> = shown.iter().map(|r| r.name.as_str()).collect();
    let ci = |c: (f64, f64)| crate::render::text::interval(c.0, c.1);
    let with = |name_width: usize| {
        let names = crate::render::names::short_names(&full, name_width);
        let mut b = crate::render::table::Table::new();
        let mut head = vec!["base self"];
        if wide {
            head.push("95% interval");
        }
        head.push("new self");
        if wide {
            head.push("95% interval");
        }
        head.extend(["change", "change %", "p (Holm)"]);
        if show_total {
            if wide {
                head.extend(["base total", "95% interval", "new total", "95% interval"]);
            } else {
                head.push("total (base → new)");
            }
        }
        let numeric = head.len();
        head.push("function");
        b.row(head);
        for (r, name) in shown.iter().zip(names) {
            let pct = if r.base_seconds > 0.0 {
                format!("{:+.1}%", 100.0 * r.delta_seconds / r.base_seconds)
            } else {
                "new".into()
            };
            let mut rec = vec![human_seconds(r.base_seconds)];
            if wide {
                rec.push(ci(r.base_ci95));
            }
            rec.push(human_seconds(r.new_seconds));
            if wide {
                rec.push(ci(r.new_ci95));
            }
            rec.extend([
                format!(
                    "{}{}",
                    if r.delta_seconds >= 0.0 { "+" } else { "" },
                    human_seconds(r.delta_seconds)
                ),
                pct,
                format!("{:.2e}", r.p_holm),
            ]);
            if show_total {
                if wide {
                    rec.extend([
                        human_seconds(r.base_total_seconds),
                        ci(r.base_total_ci95),
                        human_seconds(r.new_total_seconds),
                        ci(r.new_total_ci95),
                    ]);
                } else {
                    rec.push(format!(
                        "{} → {}",
                        human_seconds(r.base_total_seconds),
                        human_seconds(r.new_total_seconds)
                    ));
                }
            }
            rec.push(name);
            b.row(rec);
        }
        b.render(numeric)
    };
    crate::render::fit_names(48, 16, with)
}
