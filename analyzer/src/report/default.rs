//! The default report: a flat profile that is honest about where samples went.
//!
//! Differences from gprof, and why:
//!
//! * **Function ranges come from `st_size`** ([`profil_symbols::ranges`]). A histogram bin
//!   that straddles two functions is split by the real byte overlap, so the credits of every
//!   bin sum to exactly its count, and the rows sum to the total.
//! * **Samples outside every function** (PLT stubs, padding, code without symbols, the ELF
//!   header area) are one row, `<outside known functions>`, instead of being credited to
//!   the preceding symbol or silently lowering every percentage.
//! * **`.cold` / `.part.N` fragments are folded** into the function they were split from;
//!   aliases are one function.
//! * **CPU time that was not sampled is a row of its own**, `<not sampled>`, when the runtime's
//!   manifest says how much there was and it is [`super::objects::UNSAMPLED_ROW_SHARE`]% of the whole or more
//!   (threads libc starts itself, shorter than a sampling period): the table's `% time` is
//!   then every row's share of the sampled and unsampled time together, so no row reads as a
//!   share of the whole that it is not. JSON and CSV keep `percent` of the samples, and say
//!   `unsampled_seconds`.
//! * **Each row has a 95% interval** for its self time: a sample count `n` is a Poisson
//!   count, so differences smaller than the interval are noise.
//! * `file:line` of the function from DWARF, when the executable has debug info.
//! * Without `.symtab` the dynamic symbols are used, with a warning.
//! * **A profile that does not fit the executable is flagged** (gprof prints whatever the
//!   addresses happen to hit): a histogram outside the code, most samples outside every
//!   function, or a histogram range that is neither glibc's (`__executable_start`..`etext`,
//!   4-byte bounds) nor profil-rt's (the executable segments, 16-byte bounds) for this
//!   executable, which is what another program's profile or an older build's looks like.
//!
//! Bins are taken as `(high_pc - low_pc) / hist_size` bytes wide each (glibc's bins are
//! nominally 4 bytes; profil-rs's runtime writes exactly 4-byte bins).
//!
//! # Machine-readable output
//!
//! `--json` prints one object: `{"executable", "gmon_files", "hz", "total_samples",
//! "total_seconds", "unsampled_seconds", "warnings": [..], "rows": [..], "call_graph": {..}}`
//! (the call graph's fields are documented in [`super::callgraph`]). `hz` is the sampling
//! clock's nominal rate when the runtime's manifest says it ([`apply_manifests`]), else the
//! gmon header's; `unsampled_seconds` is the CPU time the runtime measured beyond
//! `total_seconds` (null without a manifest). `--csv` prints the rows with a header line.
//! Each row has the same fields in both (CSV: lists joined with `;`, absent values empty), in
//! this order:
//!
//! | field | meaning |
//! |---|---|
//! | `rank` | 1-based position (sorted by self time, then calls, then name) |
//! | `object` | the executable's file name (as the objects report's rows name theirs) |
//! | `name` | demangled name (`<outside known functions>` for the outside row) |
//! | `raw_name` | symbol name as in the ELF |
//! | `location` | `file:line` of the function's entry, or null |
//! | `percent` | self samples / all samples × 100 |
//! | `cumulative_seconds` | running sum of `self_seconds` |
//! | `self_seconds` | self samples / rate |
//! | `samples` | self samples (fractional when bins were split) |
//! | `ci95_low_seconds`, `ci95_high_seconds` | 95% Poisson interval of `self_seconds` |
//! | `calls` | calls from other functions (direct self-recursion excluded), or null |
//! | `self_seconds_per_call`, `total_seconds_per_call` | null without calls |
//! | `aliases`, `fragments` | other names of the function, folded `.cold`/`.part` pieces |
//!
//! # With sampled stacks
//!
//! When the runtime's stacks file is beside every gmon file ([`crate::profile::stacks`]),
//! the rows gain a total: the samples with the function anywhere on the sampled stack,
//! counted once per sample however deep it recurs. The table gets `total` and `total 95%`
//! columns; JSON rows and CSV lines four more fields, after the others: `total_seconds`,
//! `total_samples`, `total_ci95_low_seconds`, `total_ci95_high_seconds` (null or empty for the
//! outside row). Functions on some stack without self samples get rows too. The call graph is
//! then the one measured from the stacks ([`super::sampled_graph`]; JSON `call_graph` with
//! `"kind": "sampled"`) instead of gprof's equal-cost estimate. Without a stacks file nothing
//! changes.
//!
//! # Profiles the runtime wrote
//!
//! profil-rt's arcs in `gmon.out` count the samples in which a call was on the stack, not
//! calls. A profile is taken as the runtime's when its stacks file or its objects manifest is
//! beside it, or when every histogram covers exactly the range profil-rt records and not
//! glibc's (see `runtime_written`); its arcs are then never shown as calls (no `calls`
//! column, no per-call times), and without a stacks file no call graph is drawn from them.
//! `-pg` arcs keep supplying call counts, also to the sampled graph.

use gmon::Target;
use profil_symbols::dwarf::function_locations;
use profil_symbols::ranges::FunctionMap;
use profil_symbols::ElfImage;

use std::collections::HashMap;

use super::Inputs;
use crate::profile::callgraph::Builder;
use crate::profile::samples::Samples;
use crate::profile::stacks::Sampled;
use crate::profile::stats::{poisson_ci95, Ci95OfSorted};
use crate::{Error, Result};

pub use crate::profile::OUTSIDE;

/// One row of the report.
#[derive(Debug, Clone)]
pub struct Row {
    /// Demangled name.
    pub name: String,
    /// Raw symbol name.
    pub raw_name: String,
    /// `file:line` of the entry.
    pub location: Option<String>,
    /// Self samples.
    pub samples: f64,
    /// Calls (self-recursion excluded), if any arc reached it.
    pub calls: Option<u64>,
    /// Samples of this function and its descendants, per call (gprof's propagation).
    pub total_samples_per_call: Option<f64>,
    /// Other names.
    pub aliases: Vec<String>,
    /// Folded fragments.
    pub fragments: Vec<String>,
    /// Entry address and `st_size` (None for the outside row).
    pub span: Option<(u64, u64)>,
    /// Some bin was shared with another function or with code outside every function.
    pub straddled: bool,
    /// Some bin of this function holds 65535 or more samples (16-bit counters may wrap).
    pub saturated: bool,
    /// Samples with the function anywhere on the sampled stack (once per sample), when the
    /// runtime's stacks file is there.
    pub total_samples: Option<u64>,
}

impl Row {
    /// A row of `samples` self samples under `name` (also its raw name), with nothing else
    /// known: no location, calls, span or totals.
    pub fn bare(name: &str, samples: f64) -> Row {
        Row {
            name: name.into(),
            raw_name: name.into(),
            location: None,
            samples,
            calls: None,
            total_samples_per_call: None,
            aliases: Vec::new(),
            fragments: Vec::new(),
            span: None,
            straddled: false,
            saturated: false,
            total_samples: None,
        }
    }
}

/// The whole report, before formatting.
#[derive(Debug, Clone)]
pub struct Report {
    /// Executable path.
    pub executable: String,
    /// gmon file paths.
    pub gmon_files: Vec<String>,
    /// Samples per second.
    pub hz: u32,
    /// All samples in all histograms.
    pub total_samples: u64,
    /// Rows sorted by self samples.
    pub rows: Vec<Row>,
    /// The numbers of each row in seconds and percent, in the order of `rows`.
    pub numbers: Vec<Derived>,
    /// Warnings (also printed on stderr).
    pub warnings: Vec<String>,
    /// The call graph ([`super::callgraph`]).
    pub call_graph: super::callgraph::Graph,
    /// The executable's file name (every row's `object` in JSON and CSV).
    pub object: String,
    /// CPU seconds the runtime measured but did not sample, and the likely cause, from the
    /// manifests' process lines ([`apply_manifests`]; None: not known).
    pub unsampled: Option<(f64, String)>,
    /// Which CPU time the unsampled line's whole is ([`super::objects::clock_scope`]; empty:
    /// not known).
    pub clock_scope: String,
    /// The unsampled CPU time's share of the whole (sampled + unsampled) × 100, when it is a
    /// row of the table of its own ([`super::objects::UNSAMPLED_ROW_SHARE`] or more; None: no such row).
    pub unsampled_share: Option<f64>,
    /// The call graph measured from sampled stacks, which replaces `call_graph` when present.
    pub sampled_graph: Option<super::sampled_graph::SampledGraph>,
}

impl Report {
    /// The seconds of all samples at the report's rate.
    pub fn total_seconds(&self) -> f64 {
        self.total_samples as f64 / f64::from(self.hz.max(1))
    }
}

/// The histogram range each known writer records for an executable (link-time addresses).
/// A profile whose range overlaps the executable's code but is neither of these was not
/// written by a run of this executable: typically another program's profile (the ranges of
/// two PIEs both start near 0, so they overlap) or a profile of an earlier build.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct ExpectedText {
    /// glibc's `__monstartup(&__executable_start, &etext)`: the start rounded down and the
    /// end rounded up to 4 bytes. `None` without those symbols.
    glibc: Option<(u64, u64)>,
    /// profil-rt: the executable `PT_LOAD` segments widened to 16-byte bounds; the end is
    /// written as a whole number of bins, so it may exceed the bound by less than one bin.
    runtime: Option<(u64, u64)>,
}

impl ExpectedText {
    fn of(data: &[u8], image: &ElfImage<'_>) -> ExpectedText {
        let symbol = |name: &[u8]| {
            let t = image.symtab.as_ref()?;
            t.symbols
                .iter()
                .find(|s| t.name(s) == name)
                .map(|s| s.value)
        };
        let glibc = match (symbol(b"__executable_start"), symbol(b"etext")) {
            (Some(lo), Some(hi)) if lo < hi => Some((lo & !3, hi.saturating_add(3) & !3)),
            _ => None,
        };
        ExpectedText {
            glibc,
            runtime: exec_segments(data).map(|(lo, hi)| (lo & !15, hi.saturating_add(15) & !15)),
        }
    }

    /// Whether a histogram over `[low, high)` in `nbins` bins is one of the expected ranges
    /// (true when nothing is known: no evidence, no warning).
    fn fits(&self, low: u64, high: u64, nbins: usize) -> bool {
        if self.glibc.is_none() && self.runtime.is_none() {
            return true;
        }
        if self.glibc == Some((low, high)) {
            return true;
        }
        self.runtime.is_some_and(|(lo, hi)| {
            let bin = high.saturating_sub(low).div_ceil(nbins.max(1) as u64);
            low == lo && high >= hi && high - hi < bin.max(16)
        })
    }

    /// Whether a histogram over `[low, high)` is profil-rt's range and not glibc's.
    fn is_runtime(&self, low: u64, high: u64, nbins: usize) -> bool {
        self.glibc != Some((low, high))
            && self.runtime.is_some_and(|(lo, hi)| {
                let bin = high.saturating_sub(low).div_ceil(nbins.max(1) as u64);
                low == lo && high >= hi && high - hi < bin.max(16)
            })
    }

    /// The expected ranges, for the warning.
    fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some((lo, hi)) = self.glibc {
            parts.push(format!("glibc records it ({lo:#x}-{hi:#x})"));
        }
        if let Some((lo, hi)) = self.runtime {
            parts.push(format!("profil-rt records it ({lo:#x}-{hi:#x})"));
        }
        parts.join(" or ")
    }
}

/// The link-time span `[lowest, end of highest)` of the executable `PT_LOAD` segments.
fn exec_segments(data: &[u8]) -> Option<(u64, u64)> {
    use object::{Object, ObjectSegment, SegmentFlags};
    let file = object::File::parse(data).ok()?;
    let (mut lo, mut hi) = (u64::MAX, 0u64);
    for seg in file.segments() {
        let exec = matches!(seg.flags(), SegmentFlags::Elf { p_flags, .. } if p_flags.contains(object::elf::PF_X));
        if exec && seg.size() > 0 {
            lo = lo.min(seg.address());
            hi = hi.max(seg.address().saturating_add(seg.size()));
        }
    }
    (lo < hi).then_some((lo, hi))
}

/// Whether profil-rt wrote the profile (decided in this order): its stacks file is beside
/// it, or its objects manifest is, or every histogram covers exactly the range profil-rt
/// records (the executable segments on 16-byte bounds) and not glibc's
/// (`__executable_start`..`etext`). Such a profile's arcs are sample counts, not calls.
fn runtime_written(inputs: &Inputs, has_stacks: bool, runtime_ranges: bool) -> bool {
    has_stacks
        || runtime_ranges
        || inputs
            .gmons
            .iter()
            .any(|g| super::objects::find_manifest(g).is_some())
}

/// Compute the report.
pub fn build(inputs: &Inputs, image: &ElfImage<'_>) -> Result<Report> {
    let exe_name = inputs.exe.name();
    let mut warnings = Vec::new();
    let table = match (&image.symtab, &image.dynsym) {
        (Some(t), _) => t,
        (None, Some(d)) => {
            warnings.push(format!(
                "{exe_name}: no .symtab (stripped?); using the dynamic symbols, so static functions are missing"
            ));
            d
        }
        (None, None) => {
            return Err(Error::input(format!(
                "{exe_name}: has no symbols (neither .symtab nor .dynsym)"
            )))
        }
    };
    let map = FunctionMap::build(image, table);
    if map.functions.is_empty() {
        return Err(Error::input(format!("{exe_name}: has no function symbols")));
    }
    let target = Target::of_executable(image.is_64, image.big_endian);
    let runtime_fn = |i: usize| {
        crate::profile::stacks::is_runtime_frame(&profil_symbols::demangle::display_name(
            &String::from_utf8_lossy(map.functions[i].name),
        ))
    };
    // Without the runtime's own frames (its thread trampoline).
    let sampled = Sampled::find(&inputs.gmons, &mut warnings)?.map(|s| {
        s.without_frames(|f| f.object == Some(0) && map.function_at(f.addr).is_some_and(runtime_fn))
            .unwrap_or(s)
    });
    let nf = map.functions.len();
    // Calls and time propagation: the equal-cost model over honest functions. The arcs go
    // into the graph as they are read, file after file (no list of every file's arcs).
    let mut cg = Builder::new(nf);
    let mut has_calls = vec![false; nf];
    let mut unplaced = Vec::new();
    let hist = Samples::read_with(inputs, target, |a| {
        let Some(child) = map.function_at(a.to) else {
            unplaced.push(super::callgraph::UnplacedArc {
                from: a.from,
                to: a.to,
                count: a.count,
            });
            return;
        };
        has_calls[child] = true;
        cg.calls_into(child, a.count);
        if let Some(parent) = map.function_at(a.from) {
            cg.arc(parent, child, a.count);
        }
    })?;
    let mut samples = vec![0.0f64; nf];
    let mut straddled = vec![false; nf];
    let mut saturated = vec![false; nf];
    let mut outside = 0.0f64;
    let mut total: u64 = 0;
    let expected = ExpectedText::of(&inputs.exe.data, image);
    let mut misfits = Vec::new();
    let mut runtime_ranges = !hist.ranges.is_empty();
    for r in &hist.ranges {
        let nbins = r.bins.len();
        if nbins == 0 || r.high_pc == r.low_pc {
            continue;
        }
        runtime_ranges &= expected.is_runtime(r.low_pc, r.high_pc, nbins);
        let exec_overlap = image
            .sections
            .iter()
            .any(|s| s.is_exec() && s.addr < r.high_pc && r.low_pc < s.addr.saturating_add(s.size));
        let mut range_samples = 0u64;
        for bin in r.sampled_bins() {
            let count = bin.count;
            range_samples += count;
            let mut credited = 0.0;
            let mut k = map.first_range_ending_after(bin.addr_range().0);
            while let Some(fr) = map.ranges.get(k) {
                if u128::from(fr.start) * bin.n >= bin.hi {
                    break;
                }
                let (c, part) = bin.overlap(fr.start, fr.end);
                if c > 0.0 || part {
                    samples[fr.function] += c;
                    credited += c;
                    if part {
                        straddled[fr.function] = true;
                    }
                    if count >= u64::from(u16::MAX) {
                        saturated[fr.function] = true;
                    }
                }
                k += 1;
            }
            let rest = count as f64 - credited;
            if rest > 1e-9 {
                outside += rest;
            }
        }
        total += range_samples;
        if !exec_overlap && range_samples > 0 {
            warnings.push(format!(
                "histogram range {:#x}-{:#x} is outside the code of {exe_name}: is this the executable that wrote the profile?",
                r.low_pc, r.high_pc
            ));
        } else if exec_overlap && !expected.fits(r.low_pc, r.high_pc, nbins) {
            misfits.push(format!(
                "histogram range {:#x}-{:#x} is not the text of {exe_name} as {}: the profile may come from another program or another build of this one",
                r.low_pc,
                r.high_pc,
                expected.describe()
            ));
        }
    }
    if !hist.has_histogram() {
        warnings.push("the profile has no histogram: there are no times, only call counts".into());
    }
    if total > 0 && outside / total as f64 > 0.5 {
        warnings.push(format!(
            "{:.0}% of the samples fall outside the functions of {exe_name}: the profile may not belong to this executable",
            100.0 * outside / total as f64
        ));
    } else {
        // One warning says it: the range is only mentioned when the samples did not already.
        warnings.append(&mut misfits);
    }
    // A profile the runtime wrote: its arcs count samples with the call on the stack, not
    // calls, so they are not shown as calls.
    if runtime_written(inputs, sampled.is_some(), runtime_ranges) {
        cg = Builder::new(nf);
        has_calls = vec![false; nf];
        unplaced.clear();
    }
    let cg = cg.finish(&samples, |i| map.functions[i].name);
    let measured = sampled.as_ref().map(|s| {
        warnings.extend(s.warnings());
        s.measure(nf, |f| {
            (f.object == Some(0))
                .then(|| map.function_at(f.addr))
                .flatten()
        })
    });
    let mut locations = function_locations(&inputs.exe.data);
    // The entry's line where DWARF has no declaration (line tables only), and a warning
    // when the program's sampled code has no line tables.
    {
        // A Rust program's warning weighs every sampled function; otherwise only those without
        // a declaration need the line tables (reading them all is a tenth of a large report).
        let rust = super::loaded::is_rust(image);
        let sampled: Vec<(u64, u64, f64)> = (0..nf)
            .filter(|&i| samples[i] > 0.0)
            .filter(|&i| rust || !locations.contains_key(&map.functions[i].addr))
            .map(|i| (map.functions[i].addr, map.functions[i].size, samples[i]))
            .collect();
        let (entries, warning) =
            super::loaded::line_tables(&exe_name, &inputs.exe.data, &sampled, rust);
        warnings.extend(warning);
        for (a, text) in entries {
            if let (false, Some((file, line))) = (locations.contains_key(&a), text.rsplit_once(':'))
            {
                locations.insert(
                    a,
                    profil_symbols::dwarf::Location {
                        file: file.to_owned(),
                        line: line.parse().unwrap_or(0),
                    },
                );
            }
        }
    }
    // The `file:line` text of each function in the rows or the graphs (sampled, called,
    // calling, or on a sampled stack), made once for all.
    let mut location_text: Vec<Option<String>> = map
        .functions
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let on_stack = measured.as_ref().is_some_and(|m| m.inclusive[i] > 0);
            if samples[i] > 0.0 || has_calls[i] || !cg.nodes[i].children.is_empty() || on_stack {
                locations.get(&f.addr).map(|l| l.to_string())
            } else {
                None
            }
        })
        .collect();
    drop(locations);
    // The names of the functions shown, told apart where demangled names collide.
    let shown: Vec<usize> = (0..nf)
        .filter(|&i| {
            samples[i] > 0.0
                || has_calls[i]
                || measured.as_ref().is_some_and(|m| m.inclusive[i] > 0)
        })
        .collect();
    let distinct = super::loaded::function_names(&map, &shown, &inputs.exe.data);
    let name_of = |i: usize, raw: &str| {
        distinct
            .get(&i)
            .cloned()
            .unwrap_or_else(|| profil_symbols::demangle::display_name(raw).into_owned())
    };
    let call_graph = super::callgraph::Graph::build(
        &cg,
        |i| map.functions[i].name,
        hist.hz,
        hist.has_histogram(),
        &unplaced,
        |i| location_text[i].clone(),
    );
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    let sampled_graph = sampled.as_ref().zip(measured.as_ref()).map(|(s, m)| {
        // -pg arcs supply call counts (never the runtime's sampled arcs).
        let mut calls: HashMap<(usize, usize), u64> = HashMap::new();
        for a in &cg.arcs {
            let e = calls.entry((a.parent, a.child)).or_insert(0);
            *e = e.saturating_add(a.count);
        }
        super::sampled_graph::SampledGraph::build(
            m,
            hist.hz,
            s.stats,
            |i| {
                let raw = text(map.functions[i].name);
                (name_of(i, &raw), raw)
            },
            |i| location_text[i].clone(),
            &calls,
            Vec::new(),
        )
    });
    // Sized for every function up front (see `Graph::build`).
    let mut rows: Vec<Row> = Vec::with_capacity(map.functions.len());
    for (i, f) in map.functions.iter().enumerate() {
        let total_samples = measured.as_ref().map(|m| m.inclusive[i]);
        if samples[i] <= 0.0 && !has_calls[i] && total_samples.unwrap_or(0) == 0 {
            continue;
        }
        let raw = text(f.name);
        let node = &cg.nodes[i];
        let calls = has_calls[i].then_some(node.calls);
        rows.push(Row {
            name: name_of(i, &raw),
            raw_name: raw,
            location: location_text[i].take(),
            samples: samples[i],
            calls,
            total_samples_per_call: calls
                .filter(|&c| c > 0)
                .map(|c| (samples[i] + node.child_time) / c as f64),
            aliases: f.aliases.iter().map(|a| text(a)).collect(),
            fragments: f.fragments.iter().map(|a| text(a)).collect(),
            span: Some((f.addr, f.size)),
            straddled: straddled[i],
            saturated: saturated[i],
            total_samples,
        });
    }
    if outside > 0.0 {
        rows.push(Row::bare(OUTSIDE, outside));
    }
    rows.sort_by(|a, b| {
        b.samples
            .total_cmp(&a.samples)
            .then(b.total_samples.cmp(&a.total_samples))
            .then(b.calls.unwrap_or(0).cmp(&a.calls.unwrap_or(0)))
            .then(a.name.cmp(&b.name))
    });
    let object = inputs
        .exe
        .path
        .file_name()
        .map_or_else(|| exe_name.clone(), |n| n.to_string_lossy().into_owned());
    let mut report = Report {
        object,
        unsampled: None,
        clock_scope: String::new(),
        unsampled_share: None,
        executable: exe_name,
        gmon_files: inputs.gmons.iter().map(|g| g.name()).collect(),
        hz: hist.hz,
        total_samples: total,
        rows,
        numbers: Vec::new(),
        warnings,
        call_graph,
        sampled_graph,
    };
    report.numbers = derive(&report);
    Ok(report)
}

/// `x` rounded to 6 significant digits: the interval bounds come from an iterative solve
/// and libm, so digits beyond these are noise that should not reach the output.
fn six_digits(x: f64) -> f64 {
    format!("{x:.5e}").parse().unwrap_or(x)
}

/// The numbers of one row in seconds and percent, derived from its samples.
#[derive(Debug, Clone, PartialEq)]
pub struct Derived {
    /// Self samples / all samples × 100.
    pub percent: f64,
    /// The table's `% time`: [`Self::percent`], or, when the unsampled time is a row of its
    /// own ([`Report::unsampled_share`]), self seconds / (sampled + unsampled seconds) × 100,
    /// so that the rows and the unsampled row are shares of one whole.
    pub table_percent: f64,
    /// Running sum of the self seconds down to this row.
    pub cumulative: f64,
    /// Self seconds.
    pub self_s: f64,
    /// 95% interval of the self seconds (6 significant digits).
    pub ci: (f64, f64),
    /// Self seconds per call (calls > 0).
    pub self_per_call: Option<f64>,
    /// Self and children seconds per call (calls > 0).
    pub total_per_call: Option<f64>,
    /// Total (inclusive) seconds from the sampled stacks and their 95% interval (6
    /// significant digits).
    pub total: Option<(f64, (f64, f64))>,
}

fn derive(report: &Report) -> Vec<Derived> {
    let hz = f64::from(report.hz);
    let total = report.total_samples as f64;
    // The whole the table's percentages are of, in samples.
    let whole = match (report.unsampled_share, &report.unsampled) {
        (Some(_), Some((u, _))) => total + u * hz,
        _ => total,
    };
    let mut cum = 0.0;
    // The rows are sorted by samples.
    let mut intervals = Ci95OfSorted::default();
    report
        .rows
        .iter()
        .map(|r| {
            cum += r.samples;
            let (lo, hi) = intervals.of(r.samples);
            let ci = (six_digits(lo / hz), six_digits(hi / hz));
            Derived {
                percent: if total > 0.0 {
                    100.0 * r.samples / total
                } else {
                    0.0
                },
                table_percent: if whole > 0.0 {
                    100.0 * r.samples / whole
                } else {
                    0.0
                },
                cumulative: cum / hz,
                self_s: r.samples / hz,
                ci,
                self_per_call: r
                    .calls
                    .filter(|&c| c > 0)
                    .map(|c| r.samples / hz / c as f64),
                total_per_call: r.total_samples_per_call.map(|t| t / hz),
                total: r.total_samples.map(|t| {
                    let (lo, hi) = poisson_ci95(t as f64);
                    (t as f64 / hz, (six_digits(lo / hz), six_digits(hi / hz)))
                }),
            }
        })
        .collect()
}

/// What the runtime's manifests beside the gmon files say (the `process` line of version 2):
/// the seconds become samples ÷ the clock's nominal rate (not the achieved rate, which the CPU
/// time that went unsampled would inflate), the CPU time not sampled is stated with its likely
/// cause, and an executable whose build-id is not the one recorded is warned about.
pub fn apply_manifests(report: &mut Report, inputs: &Inputs) {
    let mut procs = Vec::new();
    for g in &inputs.gmons {
        let Some(m) = super::objects::find_manifest(g) else {
            return;
        };
        let Ok(text) = std::fs::read(&m) else { return };
        let Ok(parsed) = gmon::manifest::parse_manifest(&text) else {
            return;
        };
        for e in parsed
            .entries
            .iter()
            .filter(|e| e.kind == gmon::manifest::Kind::Exe)
        {
            if let Some(w) = super::objects::build_id_mismatch(
                &inputs.exe.name(),
                &inputs.exe.data,
                e.build_id.as_bytes(),
            ) {
                if !report.warnings.contains(&w) {
                    report.warnings.push(w);
                }
            }
        }
        match parsed.process {
            Some(p) => procs.push(p),
            None => return,
        }
    }
    let Some(hz) = procs.first().and_then(|p| p.nominal_hz).filter(|&h| h > 0) else {
        return;
    };
    if procs.iter().any(|p| p.nominal_hz != Some(hz)) {
        return;
    }
    // One rate in every part of the report: both call graphs' seconds too.
    report.call_graph.at_rate(report.hz, hz);
    if let Some(g) = report.sampled_graph.as_mut() {
        g.hz = hz;
    }
    report.hz = hz;
    let unsampled: Option<f64> = procs.iter().map(|p| p.unsampled_seconds()).sum();
    if let Some(u) = unsampled {
        let u = (u * 1e9).round() / 1e9;
        report.unsampled = Some((u, super::objects::unsampled_cause(&procs)));
        report.clock_scope = super::objects::clock_scope(&procs);
        let all = u + report.total_seconds();
        let share = if all > 0.0 { 100.0 * u / all } else { 0.0 };
        report.unsampled_share = (share >= super::objects::UNSAMPLED_ROW_SHARE).then_some(share);
    }
    report.numbers = derive(report);
}
