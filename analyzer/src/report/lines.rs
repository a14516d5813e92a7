//! `--lines`: self time per source line.
//!
//! gprof's `-l` prints one row per histogram bin (`name (file:line @ addr)`), so a hot line
//! compiled to twenty instructions is twenty rows scattered through the listing. This
//! report sums them: one row per `file:line`, with the function(s) whose code the line's
//! samples were in (a line inlined into several functions names all of them, the one with
//! the most samples first), sorted by self time.
//!
//! # How samples reach lines
//!
//! A histogram bin covers a few bytes; the DWARF line table ([`profil_symbols::lines`])
//! says which line each byte belongs to. A bin that covers bytes of two lines is split by
//! byte overlap, exactly as the default report splits bins between functions, so the rows
//! sum to the total. Bytes without line information (code compiled without `-g`, PLT
//! stubs) become one row per function, `<no line> (function)`, and bytes outside every
//! function one `<outside known functions>` row.
//!
//! Only the line programs of the compilation units that hold samples are decoded.
//!
//! # Machine-readable output
//!
//! `--json`: `{"executable", "gmon_files", "hz", "total_samples", "total_seconds",
//! "lines": [..]}`; `--csv`: the rows with a header line. Fields of a row, in order:
//! `rank`, `location` (`file:line`, or null), `file`, `line` (null without line),
//! `function` (demangled; the one with the most samples), `functions` (all, `;`-joined in
//! CSV), `percent`, `cumulative_seconds`, `self_seconds`, `samples`, `ci95_low_seconds`,
//! `ci95_high_seconds`.

use std::collections::HashMap;

use gmon::Target;
use profil_symbols::lines::{line_map, LineMap};
use profil_symbols::ranges::FunctionMap;
use profil_symbols::ElfImage;

use super::Inputs;
use crate::profile::samples::Samples;
use crate::profile::stats::poisson_ci95;
use crate::profile::OUTSIDE;
use crate::Result;

/// One row: a source line (or the code of one function without line information).
#[derive(Debug, Clone)]
pub struct LineRow {
    /// Source file, when the line is known.
    pub file: Option<String>,
    /// Line number, when known.
    pub line: Option<u64>,
    /// Functions whose code holds this line's samples, most samples first (demangled).
    pub functions: Vec<String>,
    /// Self samples (fractional when a bin was split).
    pub samples: f64,
}

impl LineRow {
    /// `file:line`, when known.
    pub fn location(&self) -> Option<String> {
        Some(format!("{}:{}", self.file.as_deref()?, self.line?))
    }

    /// The function with the most samples.
    pub fn function(&self) -> &str {
        self.functions.first().map(String::as_str).unwrap_or("")
    }
}

/// The line report before formatting.
#[derive(Debug, Clone)]
pub struct LineReport {
    /// Executable path.
    pub executable: String,
    /// gmon file paths.
    pub gmon_files: Vec<String>,
    /// Samples per second.
    pub hz: u32,
    /// All samples.
    pub total_samples: u64,
    /// Sorted by self samples, then location.
    pub rows: Vec<LineRow>,
    /// Compilation units whose line program was decoded.
    pub units_decoded: usize,
    /// `--own-lines`: the program's own code the samples were credited to (its description),
    /// [`super::own_lines`].
    pub own: Option<String>,
}

/// The numbers of one row in seconds and percent, derived from its samples.
#[derive(Debug, Clone, PartialEq)]
pub struct LineNumbers {
    /// Self samples / all samples × 100.
    pub percent: f64,
    /// Running sum of the self seconds down to this row.
    pub cumulative: f64,
    /// Self seconds.
    pub self_s: f64,
    /// 95% interval of the self seconds.
    pub ci: (f64, f64),
}

impl LineReport {
    /// All samples in seconds.
    pub fn total_seconds(&self) -> f64 {
        self.total_samples as f64 / f64::from(self.hz)
    }

    /// The numbers of each row, in the order of `rows`.
    pub fn numbers(&self) -> Vec<LineNumbers> {
        let hz = f64::from(self.hz);
        let total = self.total_samples.max(1) as f64;
        let mut cum = 0.0;
        self.rows
            .iter()
            .map(|r| {
                cum += r.samples;
                let (lo, hi) = poisson_ci95(r.samples);
                LineNumbers {
                    percent: 100.0 * r.samples / total,
                    cumulative: cum / hz,
                    self_s: r.samples / hz,
                    ci: (lo / hz, hi / hz),
                }
            })
            .collect()
    }
}

/// The rows' order: most samples first, then by file, line and functions.
pub fn sort_rows(rows: &mut [LineRow]) {
    rows.sort_by(|a, b| {
        b.samples
            .total_cmp(&a.samples)
            .then_with(|| a.file.cmp(&b.file))
            .then(a.line.cmp(&b.line))
            .then_with(|| a.functions.cmp(&b.functions))
    });
}

/// The summed histograms of all gmon files (arcs and basic blocks are not needed here).
pub fn read_histograms(inputs: &Inputs, target: Target) -> Result<Samples> {
    Samples::read(inputs, target, false)
}

/// Part of a bin, `[start, end)` in units of `1/n` byte, and its `(file, line)` if known.
type Piece = (u128, u128, Option<(u32, u64)>);

/// Key of a row: a line, or the line-less code of a function (`usize::MAX`: outside).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Key {
    Line(u32, u64),
    NoLine(usize),
}

/// Compute the line report.
pub fn build(inputs: &Inputs, image: &ElfImage<'_>) -> Result<LineReport> {
    let exe_name = inputs.exe.name();
    let hist = read_histograms(inputs, Target::of_executable(image.is_64, image.big_endian))?;
    let table = image.symtab.as_ref().or(image.dynsym.as_ref());
    let map = table.map(|t| FunctionMap::build(image, t));
    let bins: Vec<_> = hist.sampled_bins().collect();
    let wanted: Vec<(u64, u64)> = bins
        .iter()
        .map(|b| ((b.lo / b.n) as u64, b.hi.div_ceil(b.n) as u64))
        .collect();
    let lines: LineMap = line_map(&inputs.exe.data, &wanted);
    let function_at = |addr: u64| map.as_ref().and_then(|m| m.function_at(addr));
    // samples per key, and per (key, function)
    let mut per_key: HashMap<Key, f64> = HashMap::new();
    let mut per_fn: HashMap<(Key, usize), f64> = HashMap::new();
    let mut total = 0u64;
    let mut credit = |key: Key, func: Option<usize>, c: f64| {
        *per_key.entry(key).or_default() += c;
        *per_fn.entry((key, func.unwrap_or(usize::MAX))).or_default() += c;
    };
    for b in &bins {
        total += b.count;
        let (lo_a, hi_a) = b.addr_range();
        // Walk the bin's bytes in pieces: line spans and the gaps between them.
        let mut pos = b.lo;
        let mut pieces: Vec<Piece> = Vec::new();
        for s in lines.overlapping(lo_a, hi_a) {
            let (ss, se) = (u128::from(s.start) * b.n, u128::from(s.end) * b.n);
            let (a, z) = (ss.max(b.lo), se.min(b.hi));
            if a >= z {
                continue;
            }
            if a > pos {
                pieces.push((pos, a, None));
            }
            pieces.push((a, z, Some((s.file, s.line))));
            pos = z;
        }
        if pos < b.hi {
            pieces.push((pos, b.hi, None));
        }
        for (a, z, line) in pieces {
            let c = b.share(a, z);
            let func = function_at((a / b.n) as u64);
            let key = match line {
                Some((f, l)) => Key::Line(f, l),
                None => Key::NoLine(func.unwrap_or(usize::MAX)),
            };
            credit(key, func, c);
        }
    }
    let fname = |i: usize| -> String {
        match map.as_ref().and_then(|m| m.functions.get(i)) {
            Some(f) => profil_symbols::demangle::display_name(&String::from_utf8_lossy(f.name))
                .into_owned(),
            None => OUTSIDE.to_owned(),
        }
    };
    let mut fns_of: HashMap<Key, Vec<(f64, usize)>> = HashMap::new();
    for (&(k, f), &c) in &per_fn {
        fns_of.entry(k).or_default().push((c, f));
    }
    let mut rows: Vec<LineRow> = per_key
        .into_iter()
        .map(|(k, samples)| {
            let mut fns = fns_of.remove(&k).unwrap_or_default();
            fns.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
            let functions = fns.into_iter().map(|(_, f)| fname(f)).collect();
            let (file, line) = match k {
                Key::Line(f, l) => (
                    Some(lines.files.get(f as usize).cloned().unwrap_or_default()),
                    Some(l),
                ),
                Key::NoLine(_) => (None, None),
            };
            LineRow {
                file,
                line,
                functions,
                samples,
            }
        })
        .collect();
    sort_rows(&mut rows);
    Ok(LineReport {
        executable: exe_name,
        gmon_files: inputs.gmons.iter().map(|g| g.name()).collect(),
        hz: hist.hz,
        total_samples: total,
        rows,
        units_decoded: lines.units_decoded,
        own: None,
    })
}
