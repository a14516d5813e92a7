//! Reports across several loaded objects: the executable and its shared libraries.
//!
//! Two inputs carry more than the executable's code: the objects manifest that the runtime
//! writes next to `gmon.out` with `PROFIL_RANGES=all` ([`gmon::manifest`]; one gmon file per
//! object, each at the object's link-time addresses), and pcsample files
//! ([`super::pcsample`]). Both end up as *samples per link-time address per object*, and
//! this module turns them into one flat profile with an object column, as plain data
//! ([`ObjectsReport`]) that [`crate::render::objects`] writes as a table, JSON or CSV.
//!
//! # Finding an object's symbols
//!
//! The executable is the one given on the command line. A library is read from the path
//! the loader used. For each, [`crate::profile::debuginfo`] picks the best symbols: its own
//! `.symtab`, else the separate debug file named by its build-id
//! (`/usr/lib/debug/.build-id/xx/yyyy….debug`, where Debian's `-dbgsym`/`-dbg` packages put
//! it), else the file its `.gnu_debuglink` names, else `.dynsym` (exported functions only;
//! the warning then says which package would help). Samples outside every symbol of an
//! object — static functions of a stripped object, PLT stubs — are grouped into
//! `<object+0xLO-0xHI>` rows by address (pieces closer than 1 KiB are one row), so they are
//! never credited to a neighbouring function or another object. A library that cannot be
//! read at all keeps its samples as one `<unreadable: reason>` row.
//!
//! # What the manifest adds
//!
//! A version 2 manifest's `process` line ([`gmon::manifest::Process`]) gives the clock's
//! nominal rate: the seconds shown are samples ÷ that rate, and the CPU time the runtime
//! measured beyond them is stated under the header (`CPU time not sampled: …`, with the likely
//! cause from the line's counters; JSON `unsampled_seconds`), never spread over the rows. Its
//! `exe` line's build-id is compared with the executable's ([`build_id_mismatch`]): another
//! build is named by both build-ids. Several manifests (`run --merge`) are summed object by
//! object ([`build_manifests`]).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use gmon::Target;
use profil_symbols::ranges::FunctionMap;
use profil_symbols::ElfImage;

pub use super::loaded::{distinct_names, load_object, Loaded, Named, ObjectRow};
use super::{GmonInput, Inputs};
use crate::profile::input::read_file;
use crate::profile::samples::Samples;
use crate::profile::stats::{poisson_ci95, Ci95OfSorted};
use crate::units::human_seconds;
use crate::{Error, Result};

/// `(lo, hi, samples)`: samples in the half-open link-time range `[lo, hi)`.
pub type Piece = (u64, u64, f64);

/// Samples of one object, by link-time address ranges.
#[derive(Debug, Clone, Default)]
pub struct ObjectSamples {
    /// Display name (file name of the path).
    pub name: String,
    /// Path as recorded.
    pub path: PathBuf,
    /// Build-id bytes (may be empty).
    pub build_id: Vec<u8>,
    /// Samples by half-open link-time address range.
    pub pieces: Vec<Piece>,
}

pub use crate::profile::debuginfo::{debug_file_path, SymbolSource};

/// The rows for samples outside every symbol of object `name`: `(lo, hi, samples)` pieces
/// grouped into address ranges ([`super::loaded::group_unknown`]).
fn unknown_rows(name: &str, pieces: Vec<Piece>) -> Vec<ObjectRow> {
    super::loaded::group_unknown(pieces)
        .into_iter()
        .map(|(lo, hi, s)| ObjectRow {
            object: name.to_owned(),
            function: super::loaded::unknown_name(name, lo, hi),
            samples: s,
            location: None,
            unknown_range: Some((lo, hi)),
            symbol: None,
        })
        .collect()
}

/// Credit each object's pieces to its functions. `exe_data` stands in for object 0 when
/// given (the executable named on the command line). Warnings are pushed for objects
/// without full symbols.
pub fn attribute(
    objects: &[ObjectSamples],
    exe_data: Option<&[u8]>,
    debug_root: &Path,
    warnings: &mut Vec<String>,
    loaded: &mut Loaded,
) -> Vec<ObjectRow> {
    let mut rows = Vec::new();
    for (k, o) in objects.iter().enumerate() {
        if o.pieces.is_empty() {
            continue;
        }
        // The executable given is the one read: its debug file is the one for its own
        // build-id, whatever build the manifest recorded (that one is warned about).
        let build_id = match (k, exe_data) {
            (0, Some(d)) => {
                crate::profile::debuginfo::build_id_of(d).unwrap_or_else(|| o.build_id.clone())
            }
            _ => o.build_id.clone(),
        };
        let read = match (k, exe_data) {
            (0, Some(d)) => {
                let (debug, source) =
                    crate::profile::debuginfo::find_symbols(&o.path, d, &build_id, debug_root);
                Ok((debug.unwrap_or_else(|| d.to_vec()), source))
            }
            _ => load_object(&o.path, &o.build_id, debug_root),
        };
        let total: f64 = o.pieces.iter().map(|p| p.2).sum();
        let (data, source) = match read {
            Ok(x) => x,
            Err(reason) => {
                warnings.push(format!("{}: {reason}", o.name));
                rows.push(ObjectRow {
                    object: o.name.clone(),
                    function: format!("<unreadable: {reason}>"),
                    samples: total,
                    location: None,
                    unknown_range: None,
                    symbol: None,
                });
                continue;
            }
        };
        if let SymbolSource::Dynsym(p) = &source {
            warnings.push(format!(
                "{}: no .symtab and no debug file (build-id, .gnu_debuglink): exported \
                 symbols only, the rest by address range; for every function, {}",
                p.display(),
                crate::profile::debuginfo::debug_hint(p, &build_id, debug_root)
            ));
        }
        let data: &[u8] = loaded.files.entry(o.path.clone()).or_insert(data);
        let Ok(image) = ElfImage::parse(data) else {
            continue;
        };
        let table = match (&image.symtab, &image.dynsym) {
            (Some(t), _) => t,
            (None, Some(d)) => d,
            (None, None) => {
                rows.extend(unknown_rows(&o.name, o.pieces.clone()));
                continue;
            }
        };
        let map = FunctionMap::build(&image, table);
        let mut per_fn: HashMap<usize, f64> = HashMap::new();
        let mut unknown: Vec<Piece> = Vec::new();
        for &(lo, hi, s) in &o.pieces {
            let span = (hi - lo).max(1) as f64;
            let mut credited = 0.0;
            let mut r = map.first_range_ending_after(lo);
            while let Some(fr) = map.ranges.get(r) {
                if fr.start >= hi.max(lo + 1) {
                    break;
                }
                let ov = hi.max(lo + 1).min(fr.end).saturating_sub(lo.max(fr.start));
                if ov > 0 {
                    let c = s * ov as f64 / span;
                    *per_fn.entry(fr.function).or_default() += c;
                    credited += c;
                }
                r += 1;
            }
            if s - credited > 1e-9 {
                unknown.push((lo, hi, s - credited));
            }
        }
        // Locations for the executable's functions only: a library's debug information can be
        // large, and its file names are the library's build tree.
        let no_locations = HashMap::new();
        let locations = if k == 0 {
            loaded
                .exe_locations
                .insert(profil_symbols::dwarf::function_locations(data))
        } else {
            &no_locations
        };
        // The executable's line tables: the entry's line where DWARF has no declaration
        // (`debug = "line-tables-only"`), and a warning when the program has none.
        let entry_lines = if k == 0 {
            let sampled: Vec<(u64, u64, f64)> = per_fn
                .iter()
                .map(|(&i, &s)| (map.functions[i].addr, map.functions[i].size, s))
                .collect();
            let rust = super::loaded::is_rust(&image);
            let (entries, warning) = super::loaded::line_tables(&o.name, data, &sampled, rust);
            warnings.extend(warning);
            entries
        } else {
            HashMap::new()
        };
        for (i, s) in per_fn {
            let f = &map.functions[i];
            let raw = String::from_utf8_lossy(f.name).into_owned();
            let function = profil_symbols::demangle::display_name(&raw).into_owned();
            rows.push(ObjectRow {
                object: o.name.clone(),
                function,
                samples: s,
                location: locations
                    .get(&f.addr)
                    .map(|l| l.to_string())
                    .or_else(|| entry_lines.get(&f.addr).cloned()),
                unknown_range: None,
                symbol: Some((f.addr, raw)),
            });
        }
        rows.extend(unknown_rows(&o.name, unknown));
    }
    sort_rows(&mut rows);
    rows
}

/// The rows' order: most samples first, then by object and function name.
pub fn sort_rows(rows: &mut [ObjectRow]) {
    rows.sort_by(|a, b| {
        b.samples
            .total_cmp(&a.samples)
            .then_with(|| a.object.cmp(&b.object))
            .then_with(|| a.function.cmp(&b.function))
    });
}

/// A report with an object column as plain data: what [`crate::render::objects`] writes.
#[derive(Debug, Clone)]
pub struct ObjectsReport {
    /// The table's first line, before the samples (`Flat profile of prog and 2 shared
    /// objects`).
    pub title: String,
    /// Samples per second: the seconds are samples ÷ this rate.
    pub hz: u32,
    /// The rows, most samples first.
    pub rows: Vec<ObjectRow>,
    /// The numbers of each row (in the order of `rows`).
    pub numbers: Vec<RowNumbers>,
    /// Samples of all rows.
    pub total_samples: f64,
    /// Seconds of all rows.
    pub total_seconds: f64,
    /// Warnings about the inputs.
    pub warnings: Vec<String>,
    /// Seconds of CPU time not sampled, and the likely cause (None: not known); set with
    /// [`ObjectsReport::set_unsampled`].
    pub unsampled: Option<(f64, String)>,
    /// Which CPU time the unsampled line's whole is ([`clock_scope`]; empty:
    /// not known).
    pub clock_scope: String,
    /// The unsampled CPU time's share of the whole (sampled + unsampled) × 100, when it is a
    /// row of the table of its own (from [`UNSAMPLED_ROW_SHARE`]%; None: no such row).
    pub unsampled_share: Option<f64>,
    /// The processes the report covers: pid, parent pid, CPU seconds.
    pub processes: Vec<(u32, Option<u32>, f64)>,
    /// From the runtime's stacks file, the measured call graph (the rows' totals are then in
    /// [`RowNumbers::total`]).
    pub graph: Option<crate::report::sampled_graph::SampledGraph>,
}

/// The numbers of one row, derived from its samples.
#[derive(Debug, Clone, PartialEq)]
pub struct RowNumbers {
    /// Samples / all samples × 100.
    pub percent: f64,
    /// The table's `%`: [`Self::percent`], or, when the unsampled time is a row of its own
    /// ([`ObjectsReport::unsampled_share`]), self seconds / (sampled + unsampled seconds) ×
    /// 100, so that the rows and the unsampled row are shares of one whole.
    pub table_percent: f64,
    /// Self seconds.
    pub self_seconds: f64,
    /// 95% interval of the self seconds.
    pub ci: (f64, f64),
    /// With stacks: the total (inclusive) time, when the stacks know the row's function.
    pub total: Option<RowTotal>,
}

/// A row's total time from the sampled stacks: the samples with its function anywhere on the
/// stack (once per sample).
#[derive(Debug, Clone, PartialEq)]
pub struct RowTotal {
    /// Samples.
    pub samples: u64,
    /// Seconds.
    pub seconds: f64,
    /// 95% interval of the seconds.
    pub ci: (f64, f64),
}

impl ObjectsReport {
    /// The report of `rows` (most samples first) at `hz`: the numbers of each row and of all.
    pub fn new(title: String, hz: u32, rows: Vec<ObjectRow>, warnings: Vec<String>) -> Self {
        let hz_f = f64::from(hz.max(1));
        // Folded from +0.0: an empty f64 sum is -0.0, which printed as "-0 samples".
        let total: f64 = rows.iter().map(|r| r.samples).fold(0.0, |a, b| a + b);
        // The rows are sorted by samples.
        let mut intervals = Ci95OfSorted::default();
        let numbers = rows
            .iter()
            .map(|r| {
                let (lo, hi) = intervals.of(r.samples);
                let ci = (lo / hz_f, hi / hz_f);
                let percent = if total > 0.0 {
                    100.0 * r.samples / total
                } else {
                    0.0
                };
                RowNumbers {
                    percent,
                    table_percent: percent,
                    self_seconds: r.samples / hz_f,
                    ci,
                    total: None,
                }
            })
            .collect();
        ObjectsReport {
            title,
            hz,
            rows,
            numbers,
            total_samples: total,
            total_seconds: total / hz_f,
            warnings,
            unsampled: None,
            clock_scope: String::new(),
            unsampled_share: None,
            processes: Vec::new(),
            graph: None,
        }
    }

    /// The CPU time not sampled (`seconds`) and its likely cause. From
    /// [`UNSAMPLED_ROW_SHARE`]% of the whole on it is a row of the table, and every row's
    /// `table_percent` becomes its share of the sampled and unsampled time together.
    pub fn set_unsampled(&mut self, seconds: f64, cause: String) {
        let all = seconds + self.total_seconds;
        let share = if all > 0.0 {
            100.0 * seconds / all
        } else {
            0.0
        };
        self.unsampled = Some((seconds, cause));
        self.unsampled_share = (share >= UNSAMPLED_ROW_SHARE).then_some(share);
        if self.unsampled_share.is_some() {
            for n in &mut self.numbers {
                n.table_percent = 100.0 * n.self_seconds / all;
            }
        }
    }

    /// Add what the runtime's stacks file measured: each row's total samples (in the order of
    /// the rows) and the call graph.
    pub fn set_stacks(
        &mut self,
        totals: &[Option<u64>],
        graph: crate::report::sampled_graph::SampledGraph,
    ) {
        let hz_f = f64::from(self.hz.max(1));
        for (n, t) in self.numbers.iter_mut().zip(totals) {
            n.total = t.map(|t| {
                let (lo, hi) = poisson_ci95(t as f64);
                RowTotal {
                    samples: t,
                    seconds: t as f64 / hz_f,
                    ci: (lo / hz_f, hi / hz_f),
                }
            });
        }
        self.graph = Some(graph);
    }
}

/// The manifest next to a gmon file (or in its side folder,
/// [`crate::profile::input::side_folder`]), if there is one.
pub fn find_manifest(gmon: &GmonInput) -> Option<PathBuf> {
    let name = gmon.path.file_name()?.to_str()?;
    let p = crate::profile::input::side_file(&gmon.path, &gmon::manifest::manifest_name(name));
    p.is_file().then_some(p)
}

/// Histogram samples of one gmon file as pieces.
fn gmon_pieces(name: &str, data: &[u8], target: Target) -> Result<(Vec<Piece>, u32)> {
    let mut hist = Samples::default();
    hist.add_file(name, data, target, false)?;
    let mut pieces = Vec::new();
    for b in hist.sampled_bins() {
        let (lo, hi) = b.addr_range();
        pieces.push((lo, hi, b.count as f64));
    }
    Ok((pieces, hist.hz))
}

/// The rate the clock was asked for, when every process line says the same (None: not
/// known, or not one rate). Every view uses it when known: the seconds shown are samples ÷
/// that rate, and the CPU time beyond them is the unsampled time ([`unsampled_seconds`]).
pub fn nominal_hz(procs: &[gmon::manifest::Process]) -> Option<u32> {
    let nominal: Vec<u32> = procs.iter().filter_map(|p| p.nominal_hz).collect();
    let all = !procs.is_empty() && nominal.len() == procs.len();
    (all && nominal.iter().all(|&h| h == nominal[0]) && nominal[0] > 0).then(|| nominal[0])
}

/// The CPU time of the processes that their samples at the nominal rate do not account for,
/// summed and rounded to a nanosecond (None: a process line does not say).
pub fn unsampled_seconds(procs: &[gmon::manifest::Process]) -> Option<f64> {
    let unsampled: Option<Vec<f64>> = procs.iter().map(|p| p.unsampled_seconds()).collect();
    unsampled
        .filter(|u| !u.is_empty())
        .map(|u| (u.iter().sum::<f64>() * 1e9).round() / 1e9)
}

/// From this share of the whole CPU time (percent) on, the unsampled time is a row of the
/// table, `<not sampled>` (below it, the usual few percent before a clock starts and at exit,
/// it is only the line under the header). The default report uses the same threshold.
pub const UNSAMPLED_ROW_SHARE: f64 = 2.0;

/// Which CPU time the sampling clock measures, for the unsampled line's whole: with the perf
/// task clock the user time (the system time the processes used is then said: the clock does
/// not sample it, so a section's `N s of CPU time` (user + system) is more than its table's),
/// with the interval timer the user + system time.
pub fn clock_scope(procs: &[gmon::manifest::Process]) -> String {
    use gmon::manifest::Clock;
    if !procs.is_empty() && procs.iter().all(|p| p.clock == Some(Clock::Itimer)) {
        return "the user+system CPU time the clock measures".into();
    }
    if !procs.is_empty() && procs.iter().all(|p| p.clock == Some(Clock::Perf)) {
        let system: u64 = procs.iter().filter_map(|p| p.cpu_system_ns).sum();
        return format!(
            "the user CPU time the clock measures; the {} of system time is not sampled",
            human_seconds(system as f64 / 1e9)
        );
    }
    "the CPU time the clocks measure".into()
}

/// The likely reason `unsampled` seconds of CPU time went unsampled, from the process lines.
pub fn unsampled_cause(procs: &[gmon::manifest::Process]) -> String {
    let mut why = Vec::new();
    let threads: u32 = procs.iter().filter_map(|p| p.threads_without_clock).sum();
    if threads > 0 {
        why.push(format!(
            "{threads} thread{} existed before the sampling clock started and got no clock",
            if threads == 1 { "" } else { "s" }
        ));
    }
    if procs.iter().any(|p| p.clock_closed == Some(true)) {
        why.push("the program closed the sampling clock's descriptor (after a failed exec, or closing every descriptor)".into());
    }
    if why.is_empty() {
        if procs
            .iter()
            .any(|p| p.clock == Some(gmon::manifest::Clock::Itimer))
        {
            why.push("the interval timer fires at most once per kernel tick, so short bursts of CPU and short threads go unsampled".into());
        } else {
            why.push("the time before a thread's clock starts and while profiles are written at exit is outside the clock, as are threads shorter than a sampling period that got no random first period (threads libc starts itself: SIGEV_THREAD timers, aio)".into());
        }
    }
    why.join("; ")
}

/// The build-id of the executable `image` (the one on the command line) against the one the
/// runtime recorded in a manifest: None when they agree or one is unknown, else the warning.
pub fn build_id_mismatch(exe_name: &str, exe_data: &[u8], recorded: &[u8]) -> Option<String> {
    let own = crate::profile::debuginfo::build_id_of(exe_data)?;
    if recorded.is_empty() || own == recorded {
        return None;
    }
    let hex = |b: &[u8]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
    Some(format!(
        "the profile was written by a program with build-id {}, but {exe_name} has build-id {}: \
         it is another build, and the functions named below are probably wrong (give the \
         executable that ran)",
        hex(recorded),
        hex(&own)
    ))
}

/// The report across the executable and the libraries of `manifests`: the executable's
/// histograms are `inputs`' gmon files, each library's pieces are summed over the manifests
/// that list it, and the process lines give the nominal rate (the seconds shown are samples ÷
/// that rate) and the CPU time that was not sampled.
pub fn build_manifests(
    inputs: &Inputs,
    image: &ElfImage<'_>,
    manifests: &[PathBuf],
) -> Result<ObjectsReport> {
    let target = Target::of_executable(image.is_64, image.big_endian);
    let mut objects = vec![ObjectSamples {
        name: inputs
            .exe
            .path
            .file_name()
            .map_or_else(|| inputs.exe.name(), |n| n.to_string_lossy().into_owned()),
        path: inputs.exe.path.clone(),
        ..Default::default()
    }];
    let mut hz = 0;
    for g in &inputs.gmons {
        let (p, h) = gmon_pieces(&g.name(), &g.bytes()?, target)?;
        objects[0].pieces.extend(p);
        hz = hz.max(h);
    }
    let mut warnings = Vec::new();
    let mut procs = Vec::new();
    for manifest in manifests {
        let mname = manifest.display().to_string();
        let text = read_file(manifest).map_err(|e| Error::input(format!("{mname}: {e}")))?;
        let parsed = gmon::manifest::parse_manifest(&text)
            .map_err(|e| Error::input(format!("{mname}: {e}")))?;
        procs.extend(parsed.process);
        let dir = manifest.parent().unwrap_or(Path::new("."));
        for e in &parsed.entries {
            if e.kind == gmon::manifest::Kind::Exe {
                if objects[0].build_id.is_empty() {
                    objects[0].build_id = e.build_id.as_bytes().to_vec();
                }
                if let Some(w) =
                    build_id_mismatch(&inputs.exe.name(), &inputs.exe.data, e.build_id.as_bytes())
                {
                    if !warnings.contains(&w) {
                        warnings.push(w);
                    }
                }
                continue;
            }
            let file = dir.join(String::from_utf8_lossy(e.gmon_file).as_ref());
            let fname = file.display().to_string();
            let data = read_file(&file)
                .map_err(|err| Error::input(format!("{fname}: {err} (listed in {mname})")))?;
            let (pieces, h) = gmon_pieces(&fname, &data, target)?;
            hz = hz.max(h);
            let path = PathBuf::from(String::from_utf8_lossy(&e.path.unescaped()).into_owned());
            let build_id = e.build_id.as_bytes().to_vec();
            if let Some(o) = objects[1..]
                .iter_mut()
                .find(|o| o.path == path && o.build_id == build_id)
            {
                o.pieces.extend(pieces);
                continue;
            }
            objects.push(ObjectSamples {
                name: path.file_name().map_or_else(
                    || path.display().to_string(),
                    |n| n.to_string_lossy().into_owned(),
                ),
                path,
                build_id,
                pieces,
            });
        }
    }
    let mut loaded = Loaded::default();
    let rows = attribute(
        &objects,
        Some(&inputs.exe.data),
        Path::new("/usr/lib/debug"),
        &mut warnings,
        &mut loaded,
    );
    if let Some(h) = nominal_hz(&procs) {
        hz = h;
    }
    let mut unsampled_time = None;
    if let Some(u) = unsampled_seconds(&procs) {
        let cause = unsampled_cause(&procs);
        let total: f64 = rows.iter().map(|r| r.samples).sum();
        let hz_f = f64::from(hz.max(1));
        let sampled = total / hz_f;
        if u > 0.05 * (u + sampled) && u > 20.0 / hz_f {
            warnings.push(format!(
                "{} of the CPU time ({:.0}%) was not sampled: {cause}",
                human_seconds(u),
                100.0 * u / (u + sampled)
            ));
        }
        unsampled_time = Some((u, cause));
    }
    let processes = procs
        .iter()
        .filter_map(|p| {
            let cpu = p.cpu_user_ns?.saturating_add(p.cpu_system_ns.unwrap_or(0));
            Some((p.pid?, p.ppid, cpu as f64 / 1e9))
        })
        .collect();
    let hz = if hz == 0 { 100 } else { hz };
    // With the runtime's stacks file: total times and the measured call graph.
    let mut rows = rows;
    let mut stacks = None;
    if let Some(sampled) = crate::profile::stacks::Sampled::find(&inputs.gmons, &mut warnings)? {
        let t = super::objects_stacks::measure(
            &sampled,
            (
                &objects[0].name,
                loaded
                    .files
                    .get(&objects[0].path)
                    .map_or(&inputs.exe.data[..], Vec::as_slice),
            ),
            &loaded,
            hz,
            Path::new("/usr/lib/debug"),
            &rows,
            &mut warnings,
        );
        let totals = super::objects_stacks::with_totals(&mut rows, &t);
        stacks = Some((totals, t.graph));
    } else {
        // Without stacks the rows alone are told apart.
        let exe_data = loaded
            .files
            .get(&objects[0].path)
            .map_or(&inputs.exe.data[..], Vec::as_slice);
        let named: Vec<(usize, super::loaded::Named<'_>)> = rows
            .iter()
            .enumerate()
            .filter_map(|(i, r)| Some((i, super::loaded::Named::of_row(r)?)))
            .collect();
        let (at, named): (Vec<usize>, Vec<_>) = named.into_iter().unzip();
        let names = super::loaded::distinct_names(&named, &objects[0].name, exe_data);
        drop(named);
        for (i, n) in at.into_iter().zip(names) {
            rows[i].function = n;
        }
    }
    // The shared objects the rows name: those with samples, and those the stacks found
    // (libc's `__libc_start_main` above a stripped program's code).
    let mut shared: Vec<&str> = objects[1..].iter().map(|o| o.name.as_str()).collect();
    shared.extend(rows.iter().map(|r| r.object.as_str()));
    shared.retain(|&o| o != objects[0].name);
    shared.sort_unstable();
    shared.dedup();
    // As the default report's title: what was read, with the number of gmon files (a merged
    // report said nothing of its files when a sample fell in a shared object).
    let files = inputs.gmons.len();
    let files = format!("({files} gmon file{})", if files == 1 { "" } else { "s" });
    let title = match shared.len() {
        0 => format!("Flat profile of {} {files}", inputs.exe.name()),
        n => format!(
            "Flat profile of {} and {n} shared object{} {files}",
            inputs.exe.name(),
            if n == 1 { "" } else { "s" }
        ),
    };
    let mut report = ObjectsReport::new(title, hz, rows, warnings);
    if let Some((u, cause)) = unsampled_time {
        report.set_unsampled(u, cause);
        report.clock_scope = clock_scope(&procs);
    }
    report.processes = processes;
    if let Some((totals, graph)) = stacks {
        report.set_stacks(&totals, graph);
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_files_are_found_by_build_id() {
        let root = Path::new("/usr/lib/debug");
        assert_eq!(
            debug_file_path(root, &[0xab, 0xcd, 0x01, 0x02]),
            Some(PathBuf::from("/usr/lib/debug/.build-id/ab/cd0102.debug"))
        );
        assert_eq!(debug_file_path(root, &[0xab]), None);
        assert_eq!(debug_file_path(root, &[]), None);
    }

    #[test]
    fn unreadable_objects_keep_their_samples() {
        let objects = vec![ObjectSamples {
            name: "libgone.so".into(),
            path: PathBuf::from("/nonexistent/libgone.so"),
            build_id: Vec::new(),
            pieces: vec![(0x1000, 0x1004, 3.0), (0x2000, 0x2001, 2.0)],
        }];
        let mut warnings = Vec::new();
        let rows = attribute(
            &objects,
            None,
            Path::new("/nonexistent"),
            &mut warnings,
            &mut Loaded::default(),
        );
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].samples, 5.0);
        assert!(
            rows[0].function.starts_with("<unreadable: cannot read"),
            "{rows:?}"
        );
        assert_eq!(warnings.len(), 1);
    }
}
