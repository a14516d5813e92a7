//! Text the table renderers share (the default report, the report across objects, the lines
//! report): the interval cell, the unsampled-time line and row, and the wrapped notes. A leaf,
//! so that no renderer imports another.

use std::io::Write;

use crate::units::human_seconds;

/// `lo–hi` with the unit once when both ends share it (`122–309 ms`), else both units; a low
/// end of zero needs none (`0–3.69 ms`).
pub fn interval(lo: f64, hi: f64) -> String {
    let (l, h) = (human_seconds(lo), human_seconds(hi));
    if lo == 0.0 {
        return format!("0–{h}");
    }
    match (l.rsplit_once(' '), h.rsplit_once(' ')) {
        (Some((lv, lu)), Some((hv, hu))) if lu == hu => format!("{lv}–{hv} {hu}"),
        _ => format!("{l}–{h}"),
    }
}

/// A report's header, `{what}: N samples at H Hz = T of CPU time`: paths in `what` shown by
/// [`program`]; when longer than [`crate::render::WIDTH`] columns, the figures on an
/// indented line of their own (a number is never cut or parted from its unit). Whether H is
/// the clock's nominal rate is said on the unsampled line under it, [`unsampled_line`].
pub fn header_line(what: &str, samples: f64, hz: u32, seconds: f64) -> String {
    let what = short_paths(what);
    let figures = format!(
        "{samples} samples at {hz} Hz = {} of CPU time",
        human_seconds(seconds)
    );
    let line = format!("{what}: {figures}");
    if crate::render::wide() || line.chars().count() <= crate::render::WIDTH {
        return line;
    }
    format!(
        "{}\n  {figures}",
        crate::render::message("", &format!("{what}:"))
    )
}

/// A program's path in a header or message: [`crate::render::names::short_path`] within 32
/// columns, so that a header with it fits 100 columns whatever the directory (the scratch
/// directories of the golden tests are elided whole: `/…/loop2`, the same on every machine).
pub fn program(path: &str) -> String {
    crate::render::names::short_path(path, 32, crate::render::wide())
}

/// `text` with each word that is a path (has a `/`) shown by [`program`]; the punctuation
/// around a word (`(`, `,`, `:`, `)`) stays.
pub fn short_paths(text: &str) -> String {
    text.split(' ')
        .map(|w| {
            let core = w.trim_start_matches('(').trim_end_matches([',', ':', ')']);
            if !core.contains('/') {
                return w.to_owned();
            }
            let start = w.len() - w.trim_start_matches('(').len();
            let end = start + core.len();
            format!("{}{}{}", &w[..start], program(core), &w[end..])
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The name of a table's row for the CPU time not sampled (default report and report across
/// objects).
pub const UNSAMPLED_ROW: &str = "<not sampled>";

/// What that row means, under the table.
pub const UNSAMPLED_NOTE: &str = "<not sampled>: CPU time the clock measured but did not \
     sample (see the line under the header);\n% is of the sampled and unsampled time together.";

/// `CPU time not sampled: 12.0 ms (5.6% of 214 ms): cause`, under a report's header
/// (the cause only when the share is 2% or more: below that, it is the usual noise), wrapped
/// to [`crate::render::WIDTH`] columns with the lines after the first indented.
pub fn unsampled_line(unsampled: f64, sampled: f64, hz: u32, scope: &str, cause: &str) -> String {
    crate::render::wrap(
        &unsampled_text(unsampled, sampled, hz, scope, cause),
        crate::render::WIDTH - 2,
    )
    .join("\n  ")
}

/// [`unsampled_line`] as one line.
fn unsampled_text(unsampled: f64, sampled: f64, hz: u32, scope: &str, cause: &str) -> String {
    let all = unsampled + sampled;
    let pct = if all > 0.0 {
        100.0 * unsampled / all
    } else {
        0.0
    };
    format!(
        "CPU time not sampled: {} ({pct:.1}% of {}, {}; {hz} Hz is the clock's nominal rate){}",
        human_seconds(unsampled),
        human_seconds(all),
        if scope.is_empty() {
            "the CPU time the clock measures"
        } else {
            scope
        },
        if cause.is_empty() || pct < 2.0 {
            String::new()
        } else {
            format!(": {cause}")
        }
    )
}

/// What a run without a single sample means: how much CPU time the program used (`cpu`, with
/// the likely cause of its going unsampled, when the runtime measured it) against the
/// sampling period, and what to do. One note instead of an empty table.
pub fn no_samples_note(cpu: Option<(f64, &str)>, hz: u32) -> String {
    let period = 1.0 / f64::from(hz.max(1));
    let rate = format!("one per {} of CPU time at {hz} Hz", human_seconds(period));
    let what = match cpu {
        // More than a period and still no sample: the cause applies.
        Some((s, cause)) if s >= period && !cause.is_empty() => format!(
            "none of the {} of CPU time the program used was sampled ({rate}): {cause}",
            human_seconds(s)
        ),
        Some((s, _)) if s > 0.0 => format!(
            "the program used {} of CPU time and exited before its first sample ({rate})",
            human_seconds(s)
        ),
        _ => format!("the program exited before its first sample ({rate})"),
    };
    format!(
        "no samples: {what}; so there is nothing to attribute: profile a longer run or sample \
         faster (PROFIL_HZ, `profil-report run --hz`)"
    )
}

/// `note: ` and `text`, wrapped to [`crate::render::WIDTH`] columns.
pub fn write_note(out: &mut impl Write, text: &str) -> std::io::Result<()> {
    for (i, l) in crate::render::wrap(text, crate::render::WIDTH - 6)
        .iter()
        .enumerate()
    {
        writeln!(out, "{}{l}", if i == 0 { "note: " } else { "      " })?;
    }
    Ok(())
}
