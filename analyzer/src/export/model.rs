//! The stack profile every export renders: samples as stacks of frames, leaf first.
//!
//! This is deliberately narrow: what pprof, collapsed stacks, callgrind and speedscope can
//! express, and nothing a report would compute. It is built from what a gmon file holds
//! today, a histogram of PCs:
//!
//! * Each sampled histogram bin is cut where a function (its `st_size` range,
//!   [`profil_symbols::ranges`]) or an inlined copy ([`profil_symbols::inline`]) begins or
//!   ends, so every piece has one function and one inline chain. A piece gets the bin's
//!   samples in proportion to its bytes, as the default report splits bins; its *count* (the
//!   integer that formats without fractions need) is the same share rounded by largest
//!   remainder inside the bin, so the counts of a bin still sum to the bin.
//! * A piece is one **location** (its first address) whose lines are its inline chain, leaf
//!   first: the innermost function at the line the DWARF line table gives for the address,
//!   then each caller at the line it was inlined at. Without DWARF a location has one line,
//!   the ELF symbol, line 0 (unknown). Code outside every symbol is named as the report the
//!   text and JSON print for the same inputs names it: [`crate::profile::OUTSIDE`] in the
//!   default report; in the report across objects (a manifest listing a library, or an
//!   executable without `.symtab`) an address range per object, `<sort+0x14550-0x14710>`
//!   ([`crate::report::loaded::group_unknown`], for stack frames
//!   [`crate::report::loaded::unknown_frame_name`]), with the executable's symbols read as
//!   that report reads them (its debug file when installed). Two DWARF frames of one depth,
//!   or an inlined copy of the function it sits in, are one frame: one name per address.
//! * **Rate**: the clock's nominal rate when the manifest gives it, as the reports use, so
//!   every export's seconds and Hz are the text's; else the gmon header's.
//! * **Objects**: the executable, and with a `PROFIL_RANGES=all` profile (one gmon file with
//!   a `gmon.out.objects` manifest) every shared library it lists, each with its path and
//!   build-id and its samples at its own link-time addresses, symbolized from its `.symtab`,
//!   the debug file named by its build-id, or `.dynsym`, as the objects report does. A
//!   library that cannot be read keeps its samples in one `<unreadable: reason>` frame.
//! * A **sample** is one stack of locations. A gmon histogram records no call stacks, so
//!   without more every stack is one location deep (its inline chain still gives several
//!   frames). The `-pg` call arcs are not stacks (they count calls, not where samples were),
//!   and they are not turned into stacks here.
//! * **Sampled stacks**: when the runtime's stacks file is beside every gmon file
//!   ([`crate::profile::stacks`]), the samples are its real stacks instead: every frame a
//!   location of its object (the executable, or a library read from the path the loader
//!   used), symbolized like a histogram piece, return addresses at their call instruction
//!   (`address − 1`). Only stacks whose leaf lies in an object the histograms cover (the
//!   executable, and with a manifest its libraries) are kept, so that self samples and the
//!   total stay those of the reports; the locations are exact PCs, not bins split by bytes.
//!   The truncated stacks are the walks cut short or too deep.
//!
//! The time of the profile is the newest gmon file's modification time: the runtime writes
//! the file when the program ends.
//!
//! What gmon does not record stays unknown (`None`), never made up: the wall-clock duration,
//! the unsampled time (samples the runtime could not take), and the number of truncated
//! stacks (known from the stacks file). Every export writes them where its format has a
//! place, and only when they are known.

use std::collections::HashMap;

use gmon::Target;
use profil_symbols::demangle::display_name;
use profil_symbols::dwarf::function_locations;
use profil_symbols::inline::inline_map;
use profil_symbols::lines::line_map;
use profil_symbols::ranges::FunctionMap;
use profil_symbols::ElfImage;

use crate::profile::input::{read_file, GmonInput, Input};
use crate::profile::samples::{Bin, Samples};
use crate::profile::OUTSIDE;
use crate::{Error, Result};

/// A mapped object: the executable, or a shared library from a `PROFIL_RANGES=all` manifest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Object {
    /// Path: the executable's as given on the command line, a library's as the loader
    /// opened it (from the manifest).
    pub path: String,
    /// GNU build-id, lower-case hex, when the file has one.
    pub build_id: Option<String>,
    /// Link-time start of its executable segments (each object at its own link-time
    /// addresses, so the ranges of two objects may overlap; a location names its object).
    pub start: u64,
    /// One past their end.
    pub limit: u64,
    /// File offset of the first executable segment.
    pub offset: u64,
}

/// A function (a symbol, or a source function that was inlined).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Function {
    /// Demangled name.
    pub name: String,
    /// Raw (usually mangled) name.
    pub raw_name: String,
    /// Source file, when DWARF names one.
    pub file: Option<String>,
    /// Line of its declaration (0: unknown).
    pub start_line: u64,
    /// Index into [`StackProfile::objects`] of the object whose code it is (None: no object
    /// known).
    pub object: Option<usize>,
}

/// One frame of a location: a function at a line (0: unknown).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Line {
    /// Index into [`StackProfile::functions`].
    pub function: usize,
    /// Source line.
    pub line: u64,
}

/// An address and the frames its code belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    /// Link-time address.
    pub address: u64,
    /// Index into [`StackProfile::objects`] (None: no object known).
    pub object: Option<usize>,
    /// Inline chain, leaf (innermost) first, the out-of-line function last.
    pub lines: Vec<Line>,
}

/// Samples with one stack.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    /// Indexes into [`StackProfile::locations`], leaf first.
    pub locations: Vec<usize>,
    /// Samples (fractional where a bin was shared between pieces of code).
    pub samples: f64,
    /// The same as an integer (largest-remainder rounding inside each bin).
    pub count: u64,
}

/// The profile the exports render.
#[derive(Debug, Clone)]
pub struct StackProfile {
    /// The executable.
    pub executable: String,
    /// The gmon files summed into it.
    pub gmon_files: Vec<String>,
    /// Samples per second.
    pub hz: u32,
    /// All samples.
    pub total_samples: u64,
    /// Wall-clock duration of the run (not in gmon files).
    pub duration_ns: Option<u64>,
    /// When the newest gmon file was written (its modification time), in nanoseconds since
    /// the Unix epoch: the end of the run, for backends that place profiles in time.
    pub written_ns: Option<u64>,
    /// CPU time that was not sampled (not in gmon files).
    pub unsampled_seconds: Option<f64>,
    /// Stacks cut short by the walker's depth limit or a broken chain (from the stacks file).
    pub truncated_stacks: Option<u64>,
    /// Whether the samples are real call stacks (false: one location per sample).
    pub has_call_stacks: bool,
    /// Objects.
    pub objects: Vec<Object>,
    /// Functions.
    pub functions: Vec<Function>,
    /// Locations.
    pub locations: Vec<Location>,
    /// Samples, most first.
    pub samples: Vec<Sample>,
    /// Things the reader should know (printed on stderr by the commands).
    pub warnings: Vec<String>,
}

impl StackProfile {
    /// Nanoseconds per sample (the sampling period), rounded to a whole nanosecond.
    pub fn period_ns(&self) -> u64 {
        (1e9 / f64::from(self.hz.max(1))).round() as u64
    }

    /// Seconds of `samples` samples.
    pub fn seconds(&self, samples: f64) -> f64 {
        samples / f64::from(self.hz.max(1))
    }

    /// The frames of a sample, leaf first: every location's inline chain in turn.
    pub fn frames<'a>(&'a self, s: &'a Sample) -> impl Iterator<Item = Line> + 'a {
        s.locations
            .iter()
            .flat_map(|&l| self.locations[l].lines.iter().copied())
    }

    /// The out-of-line function of each location of a sample, leaf first (the last frame of
    /// each inline chain): the functions of the default report, where inlined code counts as
    /// the function it was inlined into.
    pub fn outer_functions<'a>(&'a self, s: &'a Sample) -> impl Iterator<Item = usize> + 'a {
        s.locations
            .iter()
            .filter_map(|&l| self.locations[l].lines.last().map(|x| x.function))
    }
}

/// The link-time span of the executable `PT_LOAD` segments and the first one's file offset.
fn exec_span(data: &[u8]) -> Option<(u64, u64, u64)> {
    use object::{Object as _, ObjectSegment, SegmentFlags};
    let file = object::File::parse(data).ok()?;
    let mut best: Option<(u64, u64, u64)> = None;
    for seg in file.segments() {
        let exec = matches!(seg.flags(), SegmentFlags::Elf { p_flags, .. } if p_flags.contains(object::elf::PF_X));
        if !exec || seg.size() == 0 {
            continue;
        }
        let (lo, hi) = (seg.address(), seg.address().saturating_add(seg.size()));
        best = Some(match best {
            None => (lo, hi, seg.file_range().0),
            Some((a, b, off)) if lo < a => (lo, b.max(hi), seg.file_range().0.min(off)),
            Some((a, b, off)) => (a, b.max(hi), off),
        });
    }
    best
}

/// The GNU build-id of an ELF file, as hex.
fn build_id(data: &[u8]) -> Option<String> {
    use object::Object as _;
    let file = object::File::parse(data).ok()?;
    let id = file.build_id().ok()??;
    Some(id.iter().map(|b| format!("{b:02x}")).collect())
}

/// Interning of functions and locations while the model is built.
#[derive(Default)]
struct Builder {
    functions: Vec<Function>,
    function_ids: HashMap<(usize, String), usize>,
    /// Each function's object and entry address (0: an inlined function's), for
    /// [`Builder::distinguish`].
    function_at: Vec<(usize, u64)>,
    locations: Vec<Location>,
    location_ids: HashMap<(u64, Vec<Line>), usize>,
}

impl Builder {
    /// The function `raw` of object `object` (the same name in two objects is two functions).
    fn function(
        &mut self,
        object: usize,
        raw: &str,
        file: Option<String>,
        start_line: u64,
    ) -> usize {
        self.function_with_address(object, raw, 0, file, start_line)
    }

    /// [`Builder::function`] of a function whose entry address `addr` is known.
    fn function_with_address(
        &mut self,
        object: usize,
        raw: &str,
        addr: u64,
        file: Option<String>,
        start_line: u64,
    ) -> usize {
        if let Some(&i) = self.function_ids.get(&(object, raw.to_owned())) {
            let f = &mut self.functions[i];
            if f.file.is_none() {
                f.file = file;
            }
            if f.start_line == 0 {
                f.start_line = start_line;
            }
            return i;
        }
        let i = self.functions.len();
        self.functions.push(Function {
            name: display_name(raw).into_owned(),
            raw_name: raw.to_owned(),
            file,
            start_line,
            object: (object != usize::MAX).then_some(object),
        });
        self.function_ids.insert((object, raw.to_owned()), i);
        self.function_at.push((object, addr));
        i
    }

    /// Functions of one object whose demangled names collide get the part that tells them
    /// apart, as in the reports ([`crate::report::objects::distinct_names`]; `exe_data` for
    /// the executable's generic arguments).
    fn distinguish(&mut self, exe_data: &[u8]) {
        let objects: Vec<String> = self.function_at.iter().map(|a| a.0.to_string()).collect();
        let names = {
            let named: Vec<crate::report::objects::Named<'_>> = self
                .functions
                .iter()
                .zip(&self.function_at)
                .zip(&objects)
                .map(|((f, &(_, addr)), object)| crate::report::objects::Named {
                    object,
                    display: std::borrow::Cow::Borrowed(&f.name),
                    raw: &f.raw_name,
                    addr,
                })
                .collect();
            crate::report::objects::distinct_names(&named, "0", exe_data)
        };
        for (f, n) in self.functions.iter_mut().zip(names) {
            f.name = n;
        }
    }

    fn location(&mut self, address: u64, object: Option<usize>, lines: Vec<Line>) -> usize {
        let key = (address, lines);
        if let Some(&i) = self.location_ids.get(&key) {
            return i;
        }
        let i = self.locations.len();
        self.locations.push(Location {
            address,
            object,
            lines: key.1.clone(),
        });
        self.location_ids.insert(key, i);
        i
    }
}

/// Split `count` into integers proportional to `shares` (which sum to `count`), by largest
/// remainder; ties go to the earlier piece.
pub(crate) fn largest_remainder(count: u64, shares: &[f64]) -> Vec<u64> {
    let mut out: Vec<u64> = shares.iter().map(|s| s.max(0.0).floor() as u64).collect();
    let given: u64 = out.iter().sum();
    let mut rest = count.saturating_sub(given);
    let mut order: Vec<usize> = (0..shares.len()).collect();
    order.sort_by(|&a, &b| {
        let (fa, fb) = (shares[a] - shares[a].floor(), shares[b] - shares[b].floor());
        fb.total_cmp(&fa).then(a.cmp(&b))
    });
    for i in order {
        if rest == 0 {
            break;
        }
        out[i] += 1;
        rest -= 1;
    }
    out
}

/// One object's code, symbolized for a set of wanted address ranges: its functions, inline
/// chains, line table and function entries.
struct Code<'d> {
    object: usize,
    /// How code outside every symbol is named: None, one `<outside known functions>` (the
    /// default report's rule); else the report across objects' rule, with the object's
    /// display name and its grouped ranges ([`crate::report::loaded::unknown_frame_name`]).
    unknown: Option<(String, Vec<(u64, u64)>)>,
    map: Option<FunctionMap<'d>>,
    inl: profil_symbols::inline::InlineMap,
    lines: profil_symbols::lines::LineMap,
    entry_locations: HashMap<u64, profil_symbols::dwarf::Location>,
}

impl<'d> Code<'d> {
    fn new(object: usize, data: &[u8], image: &'d ElfImage<'d>, wanted: &[(u64, u64)]) -> Self {
        let table = image.symtab.as_ref().or(image.dynsym.as_ref());
        Code {
            object,
            unknown: None,
            map: table.map(|t| FunctionMap::build(image, t)),
            inl: inline_map(data, wanted),
            lines: line_map(data, wanted),
            entry_locations: function_locations(data),
        }
    }

    /// The out-of-line function at `addr`: raw name, file and line of its entry, and its
    /// entry address.
    fn symbol_at(&self, addr: u64) -> Option<(String, Option<String>, u64, u64)> {
        let f = self
            .map
            .as_ref()
            .and_then(|m| m.function_at(addr).map(|i| &m.functions[i]))?;
        let loc = self.entry_locations.get(&f.addr);
        Some((
            String::from_utf8_lossy(f.name).into_owned(),
            loc.map(|l| l.file.clone()),
            loc.map_or(0, |l| l.line),
            f.addr,
        ))
    }

    /// The name of the code at `addr` when it lies outside every symbol, as the report
    /// names it.
    fn outside_name(&self, addr: u64) -> String {
        match &self.unknown {
            Some((object, ranges)) => {
                crate::report::loaded::unknown_frame_name(object, ranges, addr)
            }
            None => OUTSIDE.to_owned(),
        }
    }

    /// The frames of the code at `addr`, leaf first.
    fn frames_at(&self, b: &mut Builder, addr: u64) -> Vec<Line> {
        let (object, inl, lines) = (self.object, &self.inl, &self.lines);
        let leaf_line = lines
            .lookup(addr)
            .map(|s| (lines.file(s).to_owned(), s.line));
        // One frame per depth: two DIEs of one depth holding an address (a function and an
        // alias of it, as glibc's assembly has) are one function, named once.
        // An inlined copy of the function it sits in (glibc's `_IO_new_file_xsputn` inside
        // its own definition, named `_IO_file_xsputn@@GLIBC_2.2.5` by the symbol) is that
        // function again: one frame.
        let mut chain = inl.chain(addr);
        chain.dedup_by_key(|f| f.depth);
        chain.dedup_by(|inner, outer| {
            inl.name(inner).is_some() && inl.name(inner) == inl.name(outer)
        });
        if chain.is_empty() {
            let (raw, file, start, entry) = self
                .symbol_at(addr)
                .unwrap_or_else(|| (self.outside_name(addr), None, 0, 0));
            let file = file.or_else(|| leaf_line.as_ref().map(|l| l.0.clone()));
            let function = b.function_with_address(object, &raw, entry, file, start);
            return vec![Line {
                function,
                line: leaf_line.map_or(0, |l| l.1),
            }];
        }
        // Outermost first in `chain`; the line of frame k is where frame k+1 was inlined,
        // and the innermost frame's line is the address's own.
        let mut out = Vec::new();
        for (k, f) in chain.iter().enumerate() {
            let (raw, file, start, entry) = match (k, self.symbol_at(addr)) {
                (0, Some(s)) => s,
                (0, None) if self.unknown.is_some() => (self.outside_name(addr), None, 0, 0),
                (0, None) => (inl.name(f).unwrap_or(OUTSIDE).to_owned(), None, 0, 0),
                _ => (
                    inl.name(f).unwrap_or("<unnamed inlined code>").to_owned(),
                    None,
                    0,
                    0,
                ),
            };
            let (line, own_file) = match chain.get(k + 1) {
                Some(inner) => {
                    let site = inl.call_site(inner);
                    let file = site
                        .as_deref()
                        .and_then(|s| s.rsplit_once(':'))
                        .map(|(f, _)| f.to_owned());
                    (inner.call_line, file)
                }
                None => (
                    leaf_line.as_ref().map_or(0, |l| l.1),
                    leaf_line.as_ref().map(|l| l.0.clone()),
                ),
            };
            let function = b.function_with_address(object, &raw, entry, file.or(own_file), start);
            out.push(Line { function, line });
        }
        out.reverse();
        out
    }
}

/// Credit the sampled bins of one object (its ELF bytes `data`, parsed as `image`) to its
/// code: locations with inline chains, one-location samples added to `per_stack`. With
/// `ranges_of` (the object's display name), code outside every symbol is named by address
/// range as the report across objects names it. Returns the object's samples and those
/// ranges (for the stacks to name their frames alike).
fn add_object(
    b: &mut Builder,
    object: usize,
    (data, image): (&[u8], &ElfImage<'_>),
    hist: &Samples,
    ranges_of: Option<&str>,
    per_stack: &mut HashMap<usize, (f64, u64)>,
) -> (u64, Vec<(u64, u64)>) {
    let bins: Vec<Bin> = hist.sampled_bins().collect();
    let wanted: Vec<(u64, u64)> = bins.iter().map(|b| b.addr_range()).collect();
    let mut code = Code::new(object, data, image, &wanted);
    let map = &code.map;
    // Each bin cut where a function or an inlined copy begins or ends: (address, share).
    let pieces: Vec<Vec<(u64, f64)>> = bins
        .iter()
        .map(|bin| {
            let (lo_a, hi_a) = bin.addr_range();
            let mut cuts: Vec<u128> = vec![bin.lo];
            let mut inner: Vec<u64> = code.inl.boundaries(lo_a, hi_a);
            if let Some(m) = &map {
                let mut k = m.first_range_ending_after(lo_a);
                while let Some(r) = m.ranges.get(k) {
                    if r.start >= hi_a {
                        break;
                    }
                    inner.extend([r.start, r.end]);
                    k += 1;
                }
            }
            cuts.extend(
                inner
                    .into_iter()
                    .map(|a| u128::from(a) * bin.n)
                    .filter(|&c| bin.lo < c && c < bin.hi),
            );
            cuts.push(bin.hi);
            cuts.sort_unstable();
            cuts.dedup();
            cuts.windows(2)
                .map(|w| ((w[0] / bin.n) as u64, bin.share(w[0], w[1])))
                .collect()
        })
        .collect();
    // The report's ranges: each bin's samples outside every symbol, at the bin's range.
    let mut ranges = Vec::new();
    if let Some(name) = ranges_of {
        let outside: Vec<(u64, u64, f64)> = bins
            .iter()
            .zip(&pieces)
            .filter_map(|(bin, p)| {
                let s: f64 = p
                    .iter()
                    .filter(|&&(a, _)| code.symbol_at(a).is_none())
                    .map(|p| p.1)
                    .sum();
                let (lo, hi) = bin.addr_range();
                (s > 1e-9).then_some((lo, hi, s))
            })
            .collect();
        ranges = crate::report::loaded::group_unknown(outside)
            .into_iter()
            .map(|(lo, hi, _)| (lo, hi))
            .collect();
        code.unknown = Some((name.to_owned(), ranges.clone()));
    }
    let mut total = 0u64;
    for (bin, pieces) in bins.iter().zip(pieces) {
        total += bin.count;
        let shares: Vec<f64> = pieces.iter().map(|p| p.1).collect();
        let counts = largest_remainder(bin.count, &shares);
        for ((addr, share), count) in pieces.into_iter().zip(counts) {
            let frames = code.frames_at(b, addr);
            let loc = b.location(addr, Some(object), frames);
            let e = per_stack.entry(loc).or_default();
            e.0 += share;
            e.1 += count;
        }
    }
    (total, ranges)
}

/// The object record of an ELF file (its executable segments, its build-id).
fn object_record(path: String, data: &[u8], build_id_hex: Option<String>) -> Object {
    let (start, limit, offset) = exec_span(data).unwrap_or((0, u64::MAX, 0));
    Object {
        path,
        build_id: build_id_hex.or_else(|| build_id(data)),
        start,
        limit,
        offset,
    }
}

/// Build the stack profile of `gmons` (summed) for the executable `exe`. A single gmon file
/// with a shared-object manifest next to it (`PROFIL_RANGES=all`) brings in every library
/// it lists, each as its own object with its path and build-id, its symbols found as the
/// objects report finds them ([`crate::report::objects::load_object`]).
///
/// The histograms are summed by the profile model ([`Samples`], gmon files read one at a
/// time), as for the default report, not through the `--gprof` emulation.
pub fn build(exe: &Input, image: &ElfImage<'_>, gmons: &[&GmonInput]) -> Result<StackProfile> {
    let exe_name = exe.name();
    let mut warnings = Vec::new();
    for g in gmons {
        if gmon::pcsample::looks_like_pcsample(g.head()) {
            return Err(Error::input(format!(
                "{}: a pcsample file cannot be exported yet: give gmon files",
                g.name()
            )));
        }
    }
    let target = Target::of_executable(image.is_64, image.big_endian);
    let mut hist = Samples::default();
    for g in gmons {
        hist.add_file(&g.name(), &g.bytes()?, target, false)?;
    }
    if image.symtab.is_none() && image.dynsym.is_some() {
        warnings.push(format!(
            "{exe_name}: no .symtab (stripped?); using the dynamic symbols, so static functions are missing"
        ));
    }
    let manifest = match gmons {
        [g] => crate::report::objects::find_manifest(g),
        _ => None,
    };
    let text = match &manifest {
        Some(m) => std::fs::read(m).map_err(|e| Error::input(format!("{}: {e}", m.display())))?,
        None => Vec::new(),
    };
    let parsed = match &manifest {
        Some(m) => {
            let mname = m.display().to_string();
            let p = gmon::manifest::parse_manifest(&text)
                .map_err(|e| Error::input(format!("{mname}: {e}")))?;
            Some((m.clone(), p))
        }
        None => None,
    };
    // The report the text and JSON print for these inputs names code as the report across
    // objects does (`crate::pipeline`: a manifest, and a library in it or no `.symtab`):
    // then code outside every symbol is named by address range, and the executable's
    // symbols are those that report reads (its debug file, when one is installed).
    let across_objects = parsed.as_ref().is_some_and(|(_, p)| {
        image.symtab.is_none()
            || p.entries
                .iter()
                .any(|e| e.kind == gmon::manifest::Kind::Lib)
    });
    let short_name = |path: &str| {
        std::path::Path::new(path)
            .file_name()
            .map_or_else(|| path.to_owned(), |n| n.to_string_lossy().into_owned())
    };
    let exe_debug = if across_objects {
        let id = crate::profile::debuginfo::build_id_of(&exe.data).unwrap_or_default();
        crate::profile::debuginfo::find_symbols(
            &exe.path,
            &exe.data,
            &id,
            std::path::Path::new("/usr/lib/debug"),
        )
        .0
    } else {
        None
    };
    let exe_debug_image = match &exe_debug {
        Some(d) => Some(ElfImage::parse(d).map_err(|e| Error::input(format!("{exe_name}: {e}")))?),
        None => None,
    };
    let (exe_data, image): (&[u8], &ElfImage<'_>) = match (&exe_debug, &exe_debug_image) {
        (Some(d), Some(i)) => (d, i),
        _ => (&exe.data, image),
    };
    let exe_short = short_name(&exe_name);
    let mut objects = vec![object_record(exe_name.clone(), &exe.data, None)];
    let mut b = Builder::default();
    let mut per_stack: HashMap<usize, (f64, u64)> = HashMap::new();
    let (mut total, exe_ranges) = add_object(
        &mut b,
        0,
        (exe_data, image),
        &hist,
        across_objects.then_some(exe_short.as_str()),
        &mut per_stack,
    );
    // Each object's ranges of code outside every symbol, by path (the executable: "").
    let mut unknown_ranges: HashMap<String, Vec<(u64, u64)>> = HashMap::new();
    unknown_ranges.insert(String::new(), exe_ranges);
    let mut hz = hist.hz;
    let present = hist.has_histogram();
    let mut unsampled_seconds = None;
    if let Some((_, p)) = &parsed {
        // The rate and the unsampled time the reports use (`report::objects::process_rate`).
        if let Some(h) = crate::report::objects::nominal_hz(p.process.as_slice()) {
            hz = h;
        }
        unsampled_seconds = crate::report::objects::unsampled_seconds(p.process.as_slice());
    }

    if let Some((m, parsed)) = &parsed {
        let mname = m.display().to_string();
        let entries = &parsed.entries;
        let dir = m.parent().unwrap_or(std::path::Path::new("."));
        for e in entries
            .iter()
            .filter(|e| e.kind == gmon::manifest::Kind::Lib)
        {
            let file = dir.join(String::from_utf8_lossy(e.gmon_file).as_ref());
            let fname = file.display().to_string();
            let gdata = read_file(&file)
                .map_err(|err| Error::input(format!("{fname}: {err} (listed in {mname})")))?;
            let mut lib_hist = Samples::default();
            lib_hist.add_file(&fname, &gdata, target, false)?;
            if crate::report::objects::nominal_hz(parsed.process.as_slice()).is_none() {
                hz = hz.max(lib_hist.hz);
            }
            let path = String::from_utf8_lossy(&e.path.unescaped()).into_owned();
            let id_hex: String = e
                .build_id
                .as_bytes()
                .iter()
                .map(|x| format!("{x:02x}"))
                .collect();
            let id_hex = (!id_hex.is_empty()).then_some(id_hex);
            let k = objects.len();
            let loaded = crate::report::objects::load_object(
                std::path::Path::new(&path),
                e.build_id.as_bytes(),
                std::path::Path::new("/usr/lib/debug"),
            );
            let parsed = loaded.and_then(|(data, source)| {
                ElfImage::parse(&data).map_err(|err| format!("{path}: {err}"))?;
                Ok((data, source))
            });
            match parsed {
                Ok((data, source)) => {
                    if let crate::report::objects::SymbolSource::Dynsym(_) = source {
                        warnings.push(format!(
                            "{path}: no .symtab and no debug file for its build-id; static functions are missing"
                        ));
                    }
                    objects.push(object_record(path.clone(), &data, id_hex));
                    let lib_image = ElfImage::parse(&data)
                        .map_err(|err| Error::input(format!("{path}: {err}")))?;
                    let (t, r) = add_object(
                        &mut b,
                        k,
                        (&data, &lib_image),
                        &lib_hist,
                        across_objects.then(|| short_name(&path)).as_deref(),
                        &mut per_stack,
                    );
                    total += t;
                    unknown_ranges.insert(path.clone(), r);
                }
                Err(reason) => {
                    // The samples stay, in one frame that says why they have no functions.
                    warnings.push(format!("{path}: {reason}"));
                    objects.push(Object {
                        path: path.clone(),
                        build_id: id_hex,
                        start: 0,
                        limit: u64::MAX,
                        offset: 0,
                    });
                    let function = b.function(k, &format!("<unreadable: {reason}>"), None, 0);
                    for bin in lib_hist.sampled_bins() {
                        total += bin.count;
                        let loc = b.location(
                            bin.addr_range().0,
                            Some(k),
                            vec![Line { function, line: 0 }],
                        );
                        let e = per_stack.entry(loc).or_default();
                        e.0 += bin.count as f64;
                        e.1 += bin.count;
                    }
                }
            }
        }
    }

    // With the runtime's stacks file: the real sampled stacks replace the one-location ones.
    let sampled = crate::profile::stacks::Sampled::find(gmons.iter().copied(), &mut warnings)?;
    if let Some(sampled) = &sampled {
        let manifest_libs: Vec<(String, Vec<u8>)> = objects
            .iter()
            .skip(1)
            .map(|o| {
                let id = o
                    .build_id
                    .as_deref()
                    .map(|h| {
                        (0..h.len() / 2)
                            .filter_map(|i| u8::from_str_radix(&h[2 * i..2 * i + 2], 16).ok())
                            .collect()
                    })
                    .unwrap_or_default();
                (o.path.clone(), id)
            })
            .collect();
        objects.truncate(1);
        b = Builder::default();
        let naming = across_objects.then_some(&unknown_ranges);
        let (stacks, kept) = stack_samples(
            &mut b,
            &mut objects,
            (exe_data, image),
            sampled,
            &manifest_libs,
            naming,
        );
        let mut samples = stacks;
        samples.sort_by(|x, y| {
            y.samples
                .total_cmp(&x.samples)
                .then(x.locations.cmp(&y.locations))
        });
        b.distinguish(&exe.data);
        let mut p = finish(
            exe_name,
            gmons,
            hz,
            kept,
            Some(sampled.cut_walks()),
            true,
            objects,
            b,
            samples,
            warnings,
        );
        p.unsampled_seconds = unsampled_seconds;
        return Ok(p);
    }
    let mut samples: Vec<Sample> = per_stack
        .into_iter()
        .map(|(loc, (samples, count))| Sample {
            locations: vec![loc],
            samples,
            count,
        })
        .collect();
    samples.sort_by(|x, y| {
        y.samples
            .total_cmp(&x.samples)
            .then(x.locations.cmp(&y.locations))
    });
    if !present {
        warnings.push("the profile has no histogram: there are no samples to export".into());
    }
    b.distinguish(&exe.data);
    let mut p = finish(
        exe_name, gmons, hz, total, None, false, objects, b, samples, warnings,
    );
    p.unsampled_seconds = unsampled_seconds;
    Ok(p)
}

/// The samples of the runtime's sampled stacks: each frame a location of its object (the
/// executable, or a library read from the path the loader used, with its manifest build-id
/// when the manifest lists it), return addresses at their call. Only stacks whose leaf lies in
/// an object the histograms cover (the executable, and the manifest's libraries) are kept, so
/// that the self samples and the total are those of the reports. With `naming` (each
/// object's ranges of code outside every symbol, by path, the executable's under ""), frames
/// outside every symbol are named as the report across objects names them. Returns the
/// samples and their total.
fn stack_samples(
    b: &mut Builder,
    objects: &mut Vec<Object>,
    (exe_data, image): (&[u8], &ElfImage<'_>),
    sampled: &crate::profile::stacks::Sampled,
    manifest_libs: &[(String, Vec<u8>)],
    naming: Option<&HashMap<String, Vec<(u64, u64)>>>,
) -> (Vec<Sample>, u64) {
    let nobj = sampled.objects.len();
    // Per sampled object: its export index and bytes.
    let mut index: Vec<Option<usize>> = vec![Some(0); nobj];
    let mut datas: Vec<Option<Vec<u8>>> = vec![None; nobj];
    let mut failed: Vec<Option<String>> = vec![None; nobj];
    let mut in_hist = vec![false; nobj];
    in_hist[0] = true;
    for k in 1..nobj {
        let path = String::from_utf8_lossy(&sampled.objects[k]).into_owned();
        let listed = manifest_libs.iter().find(|(p, _)| *p == path);
        in_hist[k] = listed.is_some();
        let id = listed.map(|l| l.1.as_slice()).unwrap_or(&[]);
        let id_hex = (!id.is_empty()).then(|| id.iter().map(|x| format!("{x:02x}")).collect());
        match crate::report::objects::load_object(
            std::path::Path::new(&path),
            id,
            std::path::Path::new("/usr/lib/debug"),
        ) {
            Ok((data, _)) => {
                objects.push(object_record(path, &data, id_hex));
                datas[k] = Some(data);
            }
            Err(reason) => {
                objects.push(Object {
                    path,
                    build_id: id_hex,
                    start: 0,
                    limit: u64::MAX,
                    offset: 0,
                });
                failed[k] = Some(reason);
            }
        }
        index[k] = Some(objects.len() - 1);
    }
    // The addresses wanted from each object.
    let mut wanted: Vec<Vec<(u64, u64)>> = vec![Vec::new(); nobj];
    for s in &sampled.stacks {
        for f in &s.frames {
            if let Some(o) = f.object {
                wanted[o as usize].push((f.addr, f.addr.saturating_add(1)));
            }
        }
    }
    let images: Vec<Option<ElfImage<'_>>> = datas
        .iter()
        .map(|d| ElfImage::parse(d.as_deref()?).ok())
        .collect();
    let codes: Vec<Option<Code<'_>>> = (0..nobj)
        .map(|k| {
            let mut code = if k == 0 {
                Code::new(0, exe_data, image, &wanted[0])
            } else {
                let (data, img) = (datas[k].as_deref()?, images[k].as_ref()?);
                Code::new(index[k]?, data, img, &wanted[k])
            };
            if let Some(ranges) = naming {
                let path = String::from_utf8_lossy(&sampled.objects[k]).into_owned();
                let key = if k == 0 { String::new() } else { path.clone() };
                let name = if k == 0 {
                    std::path::Path::new(&objects[0].path)
                } else {
                    std::path::Path::new(&path)
                }
                .file_name()
                .map_or_else(|| path.clone(), |n| n.to_string_lossy().into_owned());
                let r = ranges.get(&key).cloned().unwrap_or_default();
                code.unknown = Some((name, r));
            }
            Some(code)
        })
        .collect();
    let mut location_of: HashMap<crate::profile::stacks::Frame, usize> = HashMap::new();
    let mut per: HashMap<Vec<usize>, u64> = HashMap::new();
    let mut total = 0u64;
    for s in &sampled.stacks {
        let leaf_ok = s
            .frames
            .first()
            .and_then(|f| f.object)
            .is_some_and(|o| in_hist[o as usize]);
        if !leaf_ok {
            continue;
        }
        let mut locs = Vec::with_capacity(s.frames.len());
        for &f in &s.frames {
            let loc = *location_of.entry(f).or_insert_with(|| {
                let k = f.object.map(|o| o as usize);
                match k.and_then(|k| codes[k].as_ref().map(|c| (k, c))) {
                    Some((k, c)) => {
                        let frames = c.frames_at(b, f.addr);
                        b.location(f.addr, index[k], frames)
                    }
                    None => {
                        let (obj, name) = match k {
                            Some(k) => (
                                index[k].unwrap_or(usize::MAX),
                                format!(
                                    "<unreadable: {}>",
                                    failed[k].as_deref().unwrap_or("no symbols")
                                ),
                            ),
                            None => (usize::MAX, "<code in no known object>".to_owned()),
                        };
                        let function = b.function(obj, &name, None, 0);
                        b.location(
                            f.addr,
                            k.and_then(|k| index[k]),
                            vec![Line { function, line: 0 }],
                        )
                    }
                }
            });
            // The runtime's own frames (its thread trampoline) are no part of the program.
            let runtime = b.locations[loc].lines.last().is_some_and(|l| {
                crate::profile::stacks::is_runtime_frame(&b.functions[l.function].name)
            });
            if !runtime {
                locs.push(loc);
            }
        }
        *per.entry(locs).or_insert(0) += s.count;
        total += s.count;
    }
    let samples = per
        .into_iter()
        .map(|(locations, count)| Sample {
            locations,
            samples: count as f64,
            count,
        })
        .collect();
    (samples, total)
}

/// The profile from its parts.
#[allow(clippy::too_many_arguments)]
fn finish(
    exe_name: String,
    gmons: &[&GmonInput],
    hz: u32,
    total: u64,
    truncated_stacks: Option<u64>,
    has_call_stacks: bool,
    objects: Vec<Object>,
    b: Builder,
    samples: Vec<Sample>,
    warnings: Vec<String>,
) -> StackProfile {
    StackProfile {
        executable: exe_name,
        gmon_files: gmons.iter().map(|g| g.name()).collect(),
        hz: if hz == 0 { 100 } else { hz },
        total_samples: total,
        duration_ns: None,
        written_ns: gmons
            .iter()
            .filter_map(|g| std::fs::metadata(&g.path).ok()?.modified().ok())
            .filter_map(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map(|d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
            .max(),
        unsampled_seconds: None,
        truncated_stacks,
        has_call_stacks,
        objects,
        functions: b.functions,
        locations: b.locations,
        samples,
        warnings,
    }
}

#[cfg(test)]
mod tests {
    use super::largest_remainder;

    #[test]
    fn largest_remainder_keeps_the_sum() {
        assert_eq!(largest_remainder(10, &[2.5, 7.5]), vec![3, 7]);
        assert_eq!(largest_remainder(3, &[1.0, 1.0, 1.0]), vec![1, 1, 1]);
        assert_eq!(largest_remainder(1, &[0.5, 0.5]), vec![1, 0]);
        let v = largest_remainder(7, &[7.0 / 3.0; 3]);
        assert_eq!(v.iter().sum::<u64>(), 7);
    }
}
