//! `--compare-gprof` ([`crate::report::compare`]) as a table: rendering only.

use std::io::Write;

use crate::render::table::Table;
use crate::report::compare::Comparison;
use crate::units::human_seconds;
use crate::Result;

/// The differing functions with the reasons, or one line saying that all agree.
pub fn table(c: &Comparison, out: &mut impl Write) -> Result<()> {
    writeln!(
        out,
        "Comparison with GNU gprof for {} ({} samples at {} Hz):",
        c.executable, c.total_samples, c.hz
    )?;
    if c.rows.is_empty() {
        writeln!(
            out,
            "every function's self time agrees with gprof to the hundredth of a second."
        )?;
        return Ok(());
    }
    let mut b = Table::new();
    b.row(["function", "ours", "gprof", "difference", "why"]);
    for r in &c.rows {
        b.row([
            r.function.clone(),
            r.ours.map(human_seconds).unwrap_or_else(|| "-".into()),
            r.gprof
                .map(|g| format!("{g:.2} s"))
                .unwrap_or_else(|| "-".into()),
            format!("{:+.3} s", r.difference),
            if r.why.is_empty() {
                "rounding (gprof prints hundredths)".into()
            } else {
                r.why.join("; ")
            },
        ]);
    }
    writeln!(out, "{}", b.render(0))?;
    writeln!(
        out,
        "total: ours {} (every sample once), gprof's rows {:.2} s",
        human_seconds(c.total_seconds()),
        c.gprof_total_seconds
    )?;
    Ok(())
}
