//! Emulation of GNU gprof 2.40 (`--gprof` mode): the same symbols, the same arithmetic and
//! the same output bytes as `gprof` with the same options (the command line itself is parsed
//! gprof's way in the binary's `cli::gprof`).
//!
//! 1. [`symtab`]: `core_sym_class` (in `profil_symbols::gprof`), then `symtab_finalize`.
//! 2. Every gmon file in order ([`Analysis::read_gmon`]): histogram records are summed with
//!    gprof's multi-record and multi-file rules ([`hist`]), arcs are tallied immediately
//!    ([`cg::CallGraph::tally`]), so their list order is file order. Basic-block counts (tag
//!    2) count under `-l` for the line symbol holding each block ([`Analysis::add_basic_block`],
//!    listed by `-C`, written by `-s`); without `-l` gprof ignores them with a warning.
//! 3. [`hist::assign_samples`]: bins to symbols in 2-byte units, with gprof's truncations.
//! 4. [`cg::CallGraph::assemble`]: self calls, cycles, and time propagation, which gives the
//!    `calls` and `total/call` columns (and everything the call-graph printer needs).
//! 5. Under `-l`, [`lines`] builds the table with gprof's line symbols first and names print
//!    with their `(file:line @ addr)`; everything else is the same pipeline.
//! 6. [`report::print_report`] picks the sections as gprof's `main` does and prints them:
//!    `-i`'s file summary, [`flat::print`], then [`cg_print::print`] and
//!    [`cg_print::print_index`] (whose file names of static functions come from the DWARF
//!    line table as BFD 2.40 reads it, [`profil_symbols::gprof::locate`]), the execution
//!    counts (`-C`), [`annotate`] (`-A`), [`ordering`] (`-r`) and [`file_order`] (`-R`, whose
//!    map also renames symbols in step 1); `-T` reorders and restyles
//!    them, and without `-b` gprof's explanations (recorded from its output, `blurbs/`) follow.
//!    The printers write into one buffer that goes to stdout a megabyte at a time
//!    ([`sink::spill`]), so a report of tens of megabytes reuses it rather than growing it.
//!
//! Under `-d` ([`debug`]) every step also writes gprof's trace lines into the analysis'
//! [`debug::Trace`], which goes to stdout before the report (`-i`'s lines among them, where
//! gprof prints them); the report adds `cmp_arc`'s and the names' decorations itself. At level
//! 0 nothing is formatted: the hot loops (arc tally, sample assignment) take their untraced
//! versions.
//!
//! Around that: [`symspec`] turns the symbol specs of `-p/-P/-q/-Q/-e/-E/-f/-F/-n/-N/-k/-C/-Z/
//! -A/-J NAME` into gprof's INCL/EXCL tables, [`cg::StaticCalls`] is `-c`'s scan for direct
//! calls, and [`sum`] writes `-s`'s gmon.sum. gprof 2.40 segfaults on `-c` with `-l` (or `-s`,
//! which implies `-l`) on some static programs (brotli, a small C program built `-static`);
//! here the scan runs as without `-l` and the report is printed.
//!
//! gprof sorts with glibc's `qsort`, a merge sort. [`msort`] is a copy of it, so that ties
//! and even inconsistent comparisons fall exactly as in gprof. Where gprof's comparison is
//! consistent (always for the symbol table and the index; for the flat profile and the call
//! graph whenever the times are finite), the same permutation comes from an unstable sort
//! of precomputed keys ending in the original position, several times faster on 60,000
//! symbols; unit tests hold each of those sorts to [`msort`]. Rows are written into the
//! output buffer by [`printf`]'s hand-written conversions, which are tested against C's
//! `snprintf`.

pub mod annotate;
pub mod cg;
pub mod cg_print;
pub mod debug;
pub mod file_order;
pub mod flat;
pub mod hist;
pub mod lines;
pub mod msort;
pub mod ordering;
pub mod printf;
pub mod report;
mod sink;
pub mod sum;
pub mod symspec;
pub mod symtab;

use gmon::{Endian, Record, Target};
use profil_symbols::gprof::{gprof_symbols, ClassOptions};
use profil_symbols::ElfImage;

use crate::{Error, Result};
use cg::{CallGraph, Exclusions};
use hist::{HistInput, Histograms};
use symspec::{Selection, SourceInfo, SymSpec};
use symtab::SymTab;

/// Names gprof always excludes from the flat profile, time propagation and the call graph.
pub const DEFAULT_EXCLUDED: [&str; 6] = [
    "_gprof_mcount",
    "mcount",
    "_mcount",
    "__mcount",
    "__mcount_internal",
    "__mcleanup",
];

/// Options that change the analysis (not only the printing).
#[derive(Debug, Clone, Copy, Default)]
pub struct Options {
    /// `-a` / `--no-static`.
    pub no_static: bool,
    /// `-c` / `--static-call-graph`: also the direct calls found in the code (count 0).
    pub static_calls: bool,
    /// `-D` / `--ignore-non-functions`: no local text symbol that is not a function.
    pub ignore_non_functions: bool,
    /// `--no-demangle` (or `--demangle=none`): print the raw symbol names.
    pub no_demangle: bool,
    /// `--demangle=STYLE`: which demangler.
    pub demangle_style: profil_symbols::demangle::Style,
    /// `-L` (`--print-path`): source files by their whole path, not their base name.
    pub print_path: bool,
    /// `--inline-file-names`: `(file:line)` after every name that has one (not under `-l`).
    pub inline_file_names: bool,
    /// `-O`: the format the gmon files must have (gprof reads every file as that format).
    pub file_format: FileFormat,
    /// `-S FILE`: the symbols, `nm`-style, instead of the executable's.
    pub external_symbols: Option<&'static std::path::Path>,
    /// `-R MAP`: the map of functions to object files ([`file_order`]).
    pub file_ordering: Option<&'static std::path::Path>,
    /// The symbol specs of `-p/-P/-q/-Q NAME`, `-e/-E/-f/-F/-n/-N`, `-k` ([`symspec`]).
    pub specs: &'static [SymSpec],
    /// `-d`: gprof's debugging level ([`debug`]; 0: no traces).
    pub debug: u32,
}

/// `-O` (`--file-format`): how gprof reads the gmon files.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum FileFormat {
    /// `a`: each file by its own header (the default).
    #[default]
    Auto,
    /// `m`: the GNU tagged format only ("bad magic cookie" otherwise).
    Magic,
    /// `b`: the BSD formats only. A GNU file fails: read as a BSD header its low address is
    /// `gmon` plus the version (above 0x1_0000_0000) and its high address is spare bytes,
    /// in practice lower ("does not appear to be in gmon.out format"). Where the header's
    /// bytes instead give gprof a histogram of 2^34 bytes (32-bit, static or `-O0`/`-O2`
    /// files), gprof fails allocating it (status 1, or it is killed): we fail at once with the
    /// same message and status 1.
    Bsd,
    /// `4`: the 4.4BSD format only ("bad magic cookie" otherwise).
    Bsd44,
}

/// What one gmon file held, for `-i` (`--file-info`): gprof counts records as it reads them.
#[derive(Debug, Clone, Default)]
pub struct FileInfo {
    /// The name the file was given by.
    pub name: String,
    /// The GNU format's version word (0 for the BSD formats).
    pub version: u32,
    /// Histogram records (1 for a BSD file).
    pub histograms: u64,
    /// Arc records.
    pub arcs: u64,
    /// Basic-block count records.
    pub basic_blocks: u64,
}

/// Everything gprof computes before printing.
#[derive(Debug, Clone)]
pub struct Analysis<'data> {
    /// The finalized symbol table.
    pub symtab: SymTab<'data>,
    /// Symbols in the default exclusion list.
    pub excluded: Vec<bool>,
    /// What gprof's INCL/EXCL tables select (the default exclusions and the specs).
    pub select: Selection,
    /// The symbol specs the tables come from.
    pub specs: &'static [SymSpec],
    /// The last histogram header read: its `high_pc` and size field (what `-s` leaves in
    /// gmon.sum's spare bytes, [`sum`]).
    pub last_hist_header: Option<(u64, u32)>,
    /// `--no-demangle`: names are printed raw.
    pub no_demangle: bool,
    /// `--demangle=STYLE`: which demangler.
    pub demangle_style: profil_symbols::demangle::Style,
    /// `-L`: source files by their whole path.
    pub print_path: bool,
    /// `-a`/`-D`: which symbols were kept (`-A` orders files by them).
    pub class_options: ClassOptions,
    /// `-O`: the format every gmon file must have.
    pub file_format: FileFormat,
    /// `-S`: the symbols came from a file, so none has a source file or line.
    pub external_symbols: bool,
    /// `-R`: the map of functions to object files ([`file_order`]).
    pub function_map: Option<file_order::FunctionMap>,
    /// `--inline-file-names`: the `(file:line)` of each symbol ([`Analysis::add_file_names`]).
    pub inline_files: Option<lines::LineLocations>,
    /// `-c`: `.text` (link-time address and bytes) to scan for direct calls.
    pub static_text: Option<(u64, &'data [u8])>,
    /// Accumulated histograms, rate and unit.
    pub hist: Histograms,
    /// The call graph (assembled by [`Analysis::finish`]).
    pub cg: CallGraph,
    /// `hist.time` per symbol, in samples.
    pub time: Vec<f64>,
    /// gprof's `total_time`, in samples.
    pub total_time: f64,
    /// Whether any arc (or BSD file) was read.
    pub has_call_graph: bool,
    /// Under `-l` ([`lines`]): the `(file:line @ addr)` printed after every name.
    pub lines: Option<lines::LineLocations>,
    /// What each gmon file held, in reading order (`-i`).
    pub files: Vec<FileInfo>,
    /// `-d`'s traces of the analysis (printed before the report) and level.
    pub trace: debug::Trace,
    /// Under `-d`: gprof's spec tables, for the traces of the look-ups in them.
    pub spec_tables: Option<Box<symspec::SpecTables<'data>>>,
    /// Basic-block counts (GNU tag 2) as gprof's `bb_read_rec` keeps them under `-l`: per
    /// symbol of the table that has any, [`BB_SLOTS`] (address, summed count) slots
    /// ([`Analysis::add_basic_block`]).
    pub bb_counts: std::collections::BTreeMap<usize, [(u64, u64); BB_SLOTS]>,
    /// Whether any basic-block record was read (gprof's `INPUT_BB_COUNTS`: `-s` then writes one).
    pub bb_seen: bool,
    /// A basic-block record was read without `-l`: gprof warns once that it ignores them.
    pub bb_ignored: bool,
    /// The addresses of the executable's function symbols in `.symtab` order, as gprof meets
    /// them while it builds its table (before `-R`'s map and `symtab_finalize`, which drops
    /// some): the order its list of source files grows in ([`Analysis::locate_symbols`]).
    /// Empty under `-S`, whose symbols have no source file.
    symtab_order: Vec<u64>,
    target: Target,
}

/// gprof's `NBBS`: a symbol keeps the counts of at most this many distinct block addresses;
/// a further address's counts are dropped.
pub const BB_SLOTS: usize = 10;

/// gprof's warning when it reads basic-block counts without `-l`.
pub const BB_IGNORED: &str = "ignoring basic-block exec counts (use -l or --line)";

impl<'data> Analysis<'data> {
    /// Build gprof's symbol table for `exe`. `exe_name` is only used in messages.
    pub fn new(exe: &ElfImage<'data>, exe_name: &str, opts: Options) -> Result<Self> {
        let no_symbols = || Error::input(format!("{exe_name}: has no symbols"));
        let text = exe
            .section_by_name(".text")
            .or_else(|| exe.section_by_name("$CODE$"))
            .ok_or_else(|| Error::input(format!("{exe_name}: has no .text section")))?;
        let mut trace = debug::Trace::new(opts.debug);
        let function_map = match opts.file_ordering {
            Some(path) => {
                let text = std::fs::read(path).map_err(|_| {
                    Error::gprof_fatal(format!("could not open {}.", path.display()))
                })?;
                // The names live as long as the symbol table, which lives for the run.
                let text: &'static [u8] = Box::leak(text.into_boxed_slice());
                Some(file_order::FunctionMap::parse(text).ok_or_else(|| {
                    Error::gprof_fatal(format!("unable to parse mapping file {}.", path.display()))
                })?)
            }
            None => None,
        };
        let mut mapped = Vec::new();
        let class = ClassOptions {
            no_static: opts.no_static,
            ignore_non_functions: opts.ignore_non_functions,
        };
        let mut symtab_order = Vec::new();
        let gsyms = match opts.external_symbols {
            Some(path) => {
                let text = std::fs::read(path).map_err(|_| {
                    Error::gprof_fatal(format!("could not open {}.", path.display()))
                })?;
                // The names live as long as the symbol table, which lives for the run.
                let gsyms = external_symbols(Box::leak(text.into_boxed_slice()));
                if gsyms.is_empty() {
                    return Err(Error::gprof_fatal("the -S file has no symbols"));
                }
                gsyms
            }
            None => {
                let table = exe.symtab.as_ref().ok_or_else(no_symbols)?;
                let mut gsyms = gprof_symbols(exe, table, class);
                symtab_order = gsyms.iter().map(|s| s.addr).collect();
                if let Some(map) = &function_map {
                    mapped = map.apply(&mut gsyms);
                }
                gsyms
            }
        };
        if gsyms.is_empty() {
            return Err(no_symbols());
        }
        let text_end = text.addr.wrapping_add(text.size);
        let symtab = SymTab::finalize_traced(&gsyms, &mapped, text_end, &mut trace);
        let excluded: Vec<bool> = symtab
            .syms
            .iter()
            .map(|s| DEFAULT_EXCLUDED.iter().any(|n| n.as_bytes() == s.name))
            .collect();
        let cg = CallGraph::new(&symtab);
        let target = Target::of_executable(exe.is_64, exe.big_endian);
        let select = Selection::new(&symtab, &excluded, opts.specs, None);
        Ok(Analysis {
            symtab,
            excluded,
            select,
            specs: opts.specs,
            static_text: None,
            no_demangle: opts.no_demangle,
            demangle_style: opts.demangle_style,
            print_path: opts.print_path,
            class_options: class,
            file_format: opts.file_format,
            external_symbols: opts.external_symbols.is_some(),
            function_map,
            inline_files: None,
            last_hist_header: None,
            hist: Histograms::default(),
            cg,
            time: Vec::new(),
            total_time: 0.0,
            has_call_graph: false,
            lines: None,
            files: Vec::new(),
            trace,
            spec_tables: None,
            bb_counts: Default::default(),
            bb_seen: false,
            bb_ignored: false,
            symtab_order,
            target,
        })
    }

    /// gprof's whole pipeline over `inputs`: the symbol table, every gmon file in order,
    /// then [`Analysis::finish`].
    pub fn of_inputs(
        inputs: &'data crate::profile::input::Inputs,
        exe: &ElfImage<'data>,
        opts: Options,
    ) -> Result<Self> {
        Self::of_inputs_into(inputs, exe, opts, false, &mut Vec::new())
    }

    /// [`Analysis::of_inputs`]; when a gmon file fails to read, what gprof printed before
    /// failing goes to `read_so_far`: `-i`'s lines for the files read before it (`file_info`;
    /// gprof prints each file's as it reads it) and, under `-d`, the traces so far.
    pub fn of_inputs_into(
        inputs: &'data crate::profile::input::Inputs,
        exe: &ElfImage<'data>,
        opts: Options,
        file_info: bool,
        read_so_far: &mut Vec<u8>,
    ) -> Result<Self> {
        let mut a = Analysis::new(exe, &inputs.exe.name(), opts)?;
        a.trace_classes_first(exe, &inputs.exe.data);
        let mut src = None;
        if symspec::traced_needs_source(opts.specs, opts.debug) && !a.external_symbols {
            let info = a.function_source_info(&inputs.exe.data);
            a.select = Selection::new(&a.symtab, &a.excluded, a.specs, Some(&info));
            src = Some(info);
        }
        a.trace_sym_id_parse(src.as_ref());
        if opts.static_calls {
            a.static_text = text_bytes(&inputs.exe.data);
        }
        if opts.inline_file_names {
            a.add_file_names(&inputs.exe.data);
        }
        for g in &inputs.gmons {
            if let Err(e) = g.bytes().and_then(|b| a.read_gmon(&g.name(), &b)) {
                if a.trace.level != 0 {
                    a.take_traces(file_info, read_so_far);
                } else if file_info {
                    cg_print::print_file_info(&a, read_so_far);
                }
                return Err(e);
            }
        }
        a.finish();
        Ok(a)
    }

    /// Under `-d` with `AOUTDEBUG`: put `core_create_function_syms`' traces (of `exe`, whose
    /// bytes are `data`) before those [`Analysis::new`] wrote (`symtab_finalize`'s).
    pub fn trace_classes_first(&mut self, exe: &ElfImage<'_>, data: &[u8]) {
        if !self.trace.on(debug::AOUTDEBUG) || self.external_symbols {
            return;
        }
        let Some(table) = exe.symtab.as_ref() else {
            return;
        };
        let addrs: Vec<u64> = table.symbols.iter().map(|s| s.value).collect();
        let located = profil_symbols::gprof::source_locations(data, &addrs);
        let mut first = Vec::new();
        let mapped = |name: &[u8]| self.function_map.as_ref()?.mapped_name(name);
        let opts = self.class_options;
        profil_symbols::gprof::class_traces_mapped(exe, table, opts, &located, &mapped, &mut first);
        first.append(&mut self.trace.out);
        self.trace.out = first;
    }

    /// Under `-d`: gprof's spec tables ([`symspec::SpecTables`], kept for the traces of the
    /// look-ups in them) and `sym_id_parse`'s traces of their building. `src`: the symbols'
    /// files and lines, when [`symspec::traced_needs_source`].
    pub fn trace_sym_id_parse(&mut self, src: Option<&SourceInfo>) {
        if self.trace.level == 0 {
            return;
        }
        let tables = symspec::SpecTables::sym_id_parse(
            &self.symtab,
            self.specs,
            &DEFAULT_EXCLUDED,
            src,
            &mut self.trace,
        );
        self.spec_tables = Some(Box::new(tables));
    }

    /// Move the analysis' traces to `out` (the report's stdout), with `-i`'s lines for each
    /// gmon file (`file_info`) where gprof prints them: after the file's own traces.
    pub fn take_traces(&mut self, file_info: bool, out: &mut Vec<u8>) {
        let traces = std::mem::take(&mut self.trace.out);
        if !file_info {
            out.extend_from_slice(&traces);
            return;
        }
        let mut at = 0;
        for (f, &end) in self.files.iter().zip(&self.trace.file_ends) {
            out.extend_from_slice(&traces[at..end]);
            cg_print::print_one_file_info(f, out);
            at = end;
        }
        out.extend_from_slice(&traces[at..]);
    }

    /// Read one gmon file the way `gmon_out_read` does. `name` is used in messages.
    pub fn read_gmon(&mut self, name: &str, data: &[u8]) -> Result<()> {
        // gprof checks the header before it reads (and traces) any record.
        let traced_before = self.trace.out.len();
        let first = self.hist.ranges.iter().all(|r| r.high_pc == 0);
        let (symtab, cg, select) = (&self.symtab, &mut self.cg, &self.select);
        cg.next_file();
        let tables = self.spec_tables.as_deref();
        let line_granularity = self.lines.is_some();
        let line_at = self.lines.as_ref().map(|l| &l.at[..]);
        let mut blocks: Vec<(u64, u64)> = Vec::new();
        let mut nblocks = 0u64;
        let filter = select.filters_arcs();
        // No arc record is shorter than two addresses and a 4-byte count: reserving for that
        // many arcs (address space only, proportional to the file) spares the arc list its
        // successive reallocations and copies.
        cg.reserve_arcs(data.len() / (2 * self.target.ptr_size.bytes() + 4));
        let mut last_hist = None;
        let mut info = FileInfo {
            name: name.to_string(),
            ..FileInfo::default()
        };
        let trace = &mut self.trace;
        let traced = trace.level != 0;
        let format = read_records(
            name,
            data,
            self.target,
            &mut self.hist,
            trace,
            |rec, trace| match rec {
                Seen::Histogram { high_pc, bins } => {
                    info.histograms += 1;
                    last_hist = Some((high_pc, bins));
                }
                Seen::BasicBlocks(record) => {
                    info.basic_blocks += 1;
                    nblocks += u64::from(record.nblocks);
                    if line_granularity {
                        blocks.extend(record.blocks());
                        if traced {
                            trace_blocks(symtab, line_at, record.blocks(), trace);
                        }
                    }
                }
                Seen::Arc(from, to, count, bsd) => {
                    info.arcs += 1;
                    if traced {
                        // gprof's filter, with the traces of its look-ups.
                        let allowed = |p: usize, c: usize, trace: &mut debug::Trace| match tables {
                            Some(t) => t.arc_allowed(&symtab.syms[p], &symtab.syms[c], trace),
                            None => !filter || select.arc_allowed(symtab, p, c),
                        };
                        let reader = if bsd { "gmon_out_read" } else { "cg_read_rec" };
                        cg.tally_traced(symtab, (from, to, count), reader, allowed, trace);
                    } else if filter {
                        cg.tally_if(symtab, from, to, count, |p, c| {
                            select.arc_allowed(symtab, p, c)
                        });
                    } else {
                        cg.tally(symtab, from, to, count);
                    }
                }
            },
        )?;
        if let Some((high, bins)) = last_hist {
            let size = sum::header_size_field(format, bins, self.target.ptr_size);
            self.last_hist_header = Some((high, size));
        }
        // gprof's version is a global only a GNU header sets: a BSD file shows the one
        // before it (0 for the first file).
        info.version = match format {
            gmon::read::Format::Gnu { version } => version,
            _ => self.files.last().map_or(0, |f| f.version),
        };
        let wrong = match self.file_format {
            FileFormat::Magic if !format.is_gnu() => {
                Some(format!("file `{name}' has bad magic cookie"))
            }
            FileFormat::Bsd44 if format != gmon::Format::Bsd44 => {
                Some(format!("file `{name}' has bad magic cookie"))
            }
            FileFormat::Bsd if format.is_gnu() => Some(format!(
                "file '{name}' does not appear to be in gmon.out format"
            )),
            _ => None,
        };
        if let Some(message) = wrong {
            self.trace.out.truncate(traced_before);
            // Under -Ob gprof reads a GNU file's start as an old BSD header (low address
            // `gmon` and the version, high address spare bytes) and traces it, unless a file
            // before it had a high address (then it fails as incompatible first).
            if self.file_format == FileFormat::Bsd && first && self.trace.on(debug::SAMPLEDEBUG) {
                let header = 2 * self.target.ptr_size.bytes() as u64 + 4;
                trace_bsd_header(data, self.target, header, &mut self.trace);
            }
            return Err(Error::gprof_fatal(message));
        }
        let arcs = info.arcs > 0;
        if info.basic_blocks > 0 {
            self.bb_seen = true;
            // gprof warns at a block, so a record of no blocks warns nothing.
            self.bb_ignored |= !line_granularity && nblocks > 0;
        }
        for (addr, count) in blocks {
            self.add_basic_block(addr, count);
        }
        self.files.push(info);
        if self.trace.level != 0 {
            self.trace.file_ends.push(self.trace.out.len());
        }
        if arcs || !format.is_gnu() {
            self.has_call_graph = true;
        }
        // Only gprof's BSD branch falls back to the clock rate; a GNU file without a
        // histogram leaves `hz` at 0 (the call graph then prints `-nan`, as gprof does).
        if !format.is_gnu() {
            self.hist.end_of_file();
        }
        Ok(())
    }

    /// `bb_read_rec` under `-l`: the block at `addr` counts for the symbol holding it (none:
    /// dropped), in the first slot that holds its address or is free (address 0); none left:
    /// dropped.
    pub fn add_basic_block(&mut self, addr: u64, count: u64) {
        let Some(sym) = self.symtab.lookup(addr) else {
            return;
        };
        let slots = self.bb_counts.entry(sym).or_default();
        if let Some(slot) = slots.iter_mut().find(|s| s.0 == 0 || s.0 == addr) {
            slot.0 = addr;
            slot.1 = slot.1.wrapping_add(count);
        }
    }

    /// The basic blocks of symbol `sym` as gprof lists them: its slots up to the first free
    /// one.
    pub fn basic_blocks(&self, sym: usize) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.bb_counts
            .get(&sym)
            .into_iter()
            .flat_map(|s| s.iter().copied().take_while(|b| b.0 != 0))
    }

    /// Assign samples and assemble the call graph.
    pub fn finish(&mut self) {
        let sel = &self.select;
        let n = self.symtab.len();
        let not_flat: Vec<bool> = (0..n).map(|i| !sel.flat.on(i)).collect();
        if self.trace.level != 0 {
            self.trace.names = (0..n).map(|i| self.plain_name(i)).collect();
        }
        let tables = self.spec_tables.as_deref();
        let lookups = self.trace.on(debug::LOOKUPDEBUG) && tables.is_some();
        let assigned = if self.trace.on(debug::SAMPLEDEBUG) || lookups {
            let trace = &mut self.trace;
            hist::assign_samples_traced(&self.symtab, &self.hist, &not_flat, tables, trace)
        } else {
            hist::assign_samples(&self.symtab, &self.hist, &not_flat)
        };
        self.time = assigned.time;
        self.total_time = assigned.total_time;
        let excl = Exclusions {
            time: (0..n).map(|i| sel.time.off(i)).collect(),
            graph: (0..n).map(|i| sel.graph.off(i)).collect(),
            time_on: (0..n).map(|i| sel.time.on(i)).collect(),
            graph_on: (0..n).map(|i| sel.graph.on(i)).collect(),
        };
        // gprof assembles the call graph (and so scans for static calls) only when a file
        // had call-graph data.
        let calls = match self.static_text {
            Some(text) if self.has_call_graph => Some(cg::StaticCalls {
                text,
                ranges: self
                    .hist
                    .ranges
                    .iter()
                    .map(|r| (r.low_pc, r.high_pc))
                    .collect(),
            }),
            _ => None,
        };
        // gprof assembles the call graph only when a file had arcs: without, it prints none of
        // that step's traces and every name's decorations stay `{0}    0% `.
        let mut silent = debug::Trace::default();
        let trace = match self.has_call_graph {
            true => &mut self.trace,
            false => {
                self.trace.unassembled = true;
                &mut silent
            }
        };
        let tables = self.spec_tables.as_deref();
        self.cg.assemble_with(
            &self.symtab,
            &self.time,
            &excl,
            calls.as_ref(),
            tables,
            trace,
        );
    }

    /// `--inline-file-names`: look up each symbol's source file and line (BFD's answer at
    /// its address) in the executable `exe`.
    pub fn add_file_names(&mut self, exe: &[u8]) {
        let addrs: Vec<u64> = self.symtab.syms.iter().map(|s| s.addr).collect();
        let found = match self.external_symbols {
            true => Default::default(),
            false => profil_symbols::gprof::source_locations(exe, &addrs),
        };
        let mut l = lines::LineLocations::default();
        let mut index = std::collections::HashMap::new();
        l.at = addrs
            .iter()
            .map(|a| {
                let (path, line) = found.get(a)?;
                let shown = if self.print_path {
                    path.as_slice()
                } else {
                    base_name(path)
                };
                let next = l.files.len() as u32;
                let i = *index.entry(shown.to_vec()).or_insert_with(|| {
                    l.files.push(shown.to_vec());
                    next
                });
                Some((i, *line))
            })
            .collect();
        self.inline_files = Some(l);
    }

    /// The source file and line of every symbol of the table, as gprof sets them while it
    /// builds its symbol table (`get_src_info` at each symbol's address), for the symbol specs
    /// that name a file or a line. `data` is the executable's bytes. Only asked for
    /// when a spec needs it ([`symspec::needs_source`]): it reads the DWARF line table.
    pub fn function_source_info(&self, data: &[u8]) -> SourceInfo {
        // Only the files the specs name matter, unless `-d` traces print every symbol's file:
        // the units that cannot name one are not decoded (the bulk of the time at 200k
        // functions). Their files are then missing from the numbering, whose order only
        // decides between files of one base name.
        let named = match self.trace.level {
            0 => symspec::files_named(self.specs),
            _ => None,
        };
        let (found, files) = self.locate_symbols(|addrs| match named {
            Some(names) => profil_symbols::gprof::locate_files(data, addrs, &|path| {
                names.iter().any(|n| base_name(path) == n.as_bytes())
            }),
            None => profil_symbols::gprof::locate(data, addrs),
        });
        let mut src = SourceInfo::default();
        let mut ids = vec![u32::MAX; found.num_files()];
        for file in files {
            ids[file as usize] = src.intern(found.path(file));
        }
        src.at = found
            .at
            .iter()
            .map(|at| {
                let (file, line) = (*at)?;
                let id = ids[file as usize];
                (id != u32::MAX).then_some((id, line))
            })
            .collect();
        src
    }

    /// The source file and line of each symbol of the table (`found.at`, by index), and the
    /// files in the order gprof creates them as `core_create_function_syms` meets the
    /// function symbols in `.symtab` order (also those `symtab_finalize` drops later), each
    /// once. `find` answers a list of addresses ([`profil_symbols::gprof::locate`] or a
    /// variant): the table's, then the `.symtab` addresses not in it (the table has one
    /// symbol per address, and the answer at an address is the same for every symbol there).
    pub fn locate_symbols(
        &self,
        find: impl FnOnce(&[u64]) -> profil_symbols::gprof::Located,
    ) -> (profil_symbols::gprof::Located, Vec<u32>) {
        let syms = &self.symtab.syms;
        let mut addrs: Vec<u64> = syms.iter().map(|s| s.addr).collect();
        // Each `.symtab` symbol's place in `addrs`, by a walk of both lists in address order
        // (`.symtab` lists each file's local symbols before the globals: far from sorted).
        let mut by_addr: Vec<(u64, u32)> =
            (self.symtab_order.iter().copied()).zip(0u32..).collect();
        by_addr.sort_unstable();
        let mut places = vec![0usize; by_addr.len()];
        let mut i = 0usize;
        for (addr, k) in by_addr {
            while syms.get(i).is_some_and(|s| s.addr < addr) {
                i += 1;
            }
            places[k as usize] = if syms.get(i).is_some_and(|s| s.addr == addr) {
                i
            } else {
                addrs.push(addr);
                addrs.len() - 1
            };
        }
        let mut found = find(&addrs);
        let mut seen = vec![false; found.num_files()];
        let mut files = Vec::new();
        for &k in &places {
            if let Some((file, _)) = found.at[k] {
                if !std::mem::replace(&mut seen[file as usize], true) {
                    files.push(file);
                }
            }
        }
        found.at.truncate(syms.len());
        (found, files)
    }

    /// The executable's address size and byte order (those of its gmon files).
    pub fn target(&self) -> Target {
        self.target
    }

    /// The name gprof prints for symbol `i` (demangled with libiberty's rules).
    pub fn display_name(&self, i: usize) -> Vec<u8> {
        let mut out = Vec::new();
        let _ = self.push_display_name(i, &mut out);
        out
    }

    /// Append [`Analysis::display_name`] of symbol `i` to `out` without an allocation for
    /// names that cannot be mangled (most C names). Under `-l` the name is followed by its
    /// `(file:line @ addr)`, as gprof's `print_name_only` prints it everywhere.
    ///
    /// Under `-d` with `DFNDEBUG` or `PROPDEBUG` the name ends in gprof's decorations
    /// ([`debug::push_decorations`]); returns their length (0 otherwise), which gprof's
    /// widths leave out.
    pub fn push_display_name(&self, i: usize, out: &mut Vec<u8>) -> usize {
        self.push_plain_name(i, out);
        let level = self.trace.level;
        if level & (debug::DFNDEBUG | debug::PROPDEBUG) == 0 {
            return 0;
        }
        let start = out.len();
        let n = &self.cg.nodes[i];
        match self.trace.unassembled {
            true => debug::push_decorations(level, 0, 0.0, out),
            false => debug::push_decorations(level, n.top_order, n.prop_fract, out),
        }
        out.len() - start
    }

    /// The name gprof prints for symbol `i`, without `-d`'s decorations.
    fn plain_name(&self, i: usize) -> Vec<u8> {
        let mut out = Vec::new();
        self.push_plain_name(i, &mut out);
        out
    }

    /// [`Analysis::push_display_name`] without `-d`'s decorations.
    fn push_plain_name(&self, i: usize, out: &mut Vec<u8>) {
        let raw = self.symtab.syms[i].name;
        let gnat = self.demangle_style == profil_symbols::demangle::Style::Gnat;
        if self.no_demangle || (!gnat && !may_be_mangled(raw)) {
            out.extend_from_slice(raw);
        } else if self.demangle_style == profil_symbols::demangle::Style::Dlang {
            // D names are demangled as bytes (gprof prints them as they are).
            match profil_symbols::demangle::gprof_demangle_dlang(raw) {
                Some(d) => out.extend_from_slice(&d),
                None => out.extend_from_slice(raw),
            }
        } else {
            match std::str::from_utf8(raw) {
                Ok(s) => {
                    match profil_symbols::demangle::gprof_demangle_style(s, self.demangle_style) {
                        Some(d) => out.extend_from_slice(d.as_bytes()),
                        None => out.extend_from_slice(raw),
                    }
                }
                Err(_) => out.extend_from_slice(raw),
            }
        }
        if let Some(l) = &self.lines {
            l.push_suffix(i, self.symtab.syms[i].addr, out);
        } else if let Some(l) = &self.inline_files {
            l.push_file_line(i, out);
        }
    }
}

/// `core_create_syms_from` (`-S`): every line `ADDRESS TYPE NAME` (as `sscanf ("%s %c %s")`
/// splits it, the address read as hex) whose type is `t` or `T` is a function symbol, static
/// for `t`; everything else is skipped.
fn external_symbols(text: &'static [u8]) -> Vec<profil_symbols::gprof::GprofSymbol<'static>> {
    let ws = |b: u8| b.is_ascii_whitespace();
    let mut out = Vec::new();
    for line in text.split(|&b| b == b'\n') {
        let mut i = 0;
        let word = |i: &mut usize| -> Option<&'static [u8]> {
            while *i < line.len() && ws(line[*i]) {
                *i += 1;
            }
            let start = *i;
            while *i < line.len() && !ws(line[*i]) {
                *i += 1;
            }
            (*i > start).then(|| &line[start..*i])
        };
        let Some(addr) = word(&mut i) else { continue };
        while i < line.len() && ws(line[i]) {
            i += 1;
        }
        let Some(&typ) = line.get(i) else { continue };
        i += 1;
        let Some(name) = word(&mut i) else { continue };
        if typ != b't' && typ != b'T' {
            continue;
        }
        let hex = addr
            .strip_prefix(b"0x")
            .or_else(|| addr.strip_prefix(b"0X"))
            .unwrap_or(addr);
        let addr = hex
            .iter()
            .map_while(|&c| (c as char).to_digit(16))
            .fold(0u64, |a, d| a.wrapping_mul(16).wrapping_add(u64::from(d)));
        out.push(profil_symbols::gprof::GprofSymbol {
            name,
            addr,
            is_func: true,
            is_static: typ == b't',
            index: out.len(),
        });
    }
    out
}

/// The part of `path` after its last `/`.
pub fn base_name(path: &[u8]) -> &[u8] {
    match path.iter().rposition(|&b| b == b'/') {
        Some(i) => &path[i + 1..],
        None => path,
    }
}

/// `.text` of the ELF file `data` (for `-c`): its link-time address and bytes. `None` if it
/// has none (or it holds no bytes).
pub fn text_bytes(data: &[u8]) -> Option<(u64, &[u8])> {
    use object::{Object, ObjectSection};
    let file = object::File::parse(data).ok()?;
    let text = file.section_by_name(".text")?;
    Some((text.address(), text.data().ok()?))
}

/// Whether `gprof_demangle` can change `name`: it only demangles names that, after leading
/// `.`/`$`, start with `_R`, `_Z` or `_GLOBAL_` (Rust v0, Itanium C++ and legacy Rust, global
/// constructors); this test (first non-`.`/`$` byte is `_`) is a superset. Everything else is
/// printed raw, without UTF-8 validation or a demangler call (a unit test holds this to
/// `gprof_demangle`).
fn may_be_mangled(name: &[u8]) -> bool {
    let start = name
        .iter()
        .position(|&b| b != b'.' && b != b'$')
        .unwrap_or(name.len());
    name[start..].starts_with(b"_")
}

/// A record [`read_records`] reports, in file order.
#[derive(Debug, Clone, Copy)]
pub enum Seen<'a> {
    /// A histogram (already added): its end address and number of bins.
    Histogram {
        /// `high_pc`.
        high_pc: u64,
        /// The number of bins.
        bins: u32,
    },
    /// An arc: caller address, callee address, count (link-time addresses), and whether it
    /// came from a BSD-format file (gprof traces its reading as `gmon_out_read`'s).
    Arc(u64, u64, u64, bool),
    /// A basic-block count record.
    BasicBlocks(gmon::read::BasicBlocks<'a>),
}

/// Decode the records of one gmon file (`name` is used in messages) in file order: add its
/// histograms to `hist` with gprof's rules for GNU and BSD records, and report every record
/// to `on_record` (arcs with their caller address, callee address and count). Returns the
/// file's format. The `--gprof` emulation reads its inputs through here; the other reports
/// read theirs with `crate::profile::samples`.
pub fn read_records(
    name: &str,
    data: &[u8],
    target: Target,
    hist: &mut Histograms,
    trace: &mut debug::Trace,
    mut on_record: impl FnMut(Seen<'_>, &mut debug::Trace),
) -> Result<gmon::Format> {
    let fail = |msg: String| Error::input(format!("{name}: {msg}"));
    let (header, records) = gmon::read::records(data, target).map_err(|e| fail(e.to_string()))?;
    for rec in records {
        match rec.map_err(|e| fail(e.to_string()))? {
            Record::Histogram(h) => {
                let input = HistInput {
                    low_pc: h.low_pc,
                    high_pc: h.high_pc,
                    bins: h.bins.as_bytes(),
                    num_bins: h.hist_size,
                    prof_rate: h.prof_rate.unwrap_or(0),
                    dimension: h.dimension.name_bytes(),
                    abbrev: h.dimension.abbrev,
                    big_endian: target.endian == Endian::Big,
                };
                let r = if header.format.is_gnu() {
                    hist.add_gnu(&input)
                } else {
                    hist.add_bsd(&input, h.prof_rate)
                };
                r.map_err(|m| fail(format!("{m} (record at byte {})", h.offset)))?;
                if trace.on(debug::SAMPLEDEBUG) {
                    match header.format.is_gnu() {
                        true => hist::trace_record(hist, h.low_pc, h.high_pc, trace),
                        false => trace_bsd_header(data, target, h.bins_offset, trace),
                    }
                }
                on_record(
                    Seen::Histogram {
                        high_pc: h.high_pc,
                        bins: h.hist_size,
                    },
                    trace,
                );
            }
            Record::Arc(a) => on_record(
                Seen::Arc(a.from_pc, a.self_pc, a.count, !header.format.is_gnu()),
                trace,
            ),
            Record::BasicBlocks(b) => on_record(Seen::BasicBlocks(b), trace),
        }
    }
    Ok(header.format)
}

/// `bb_read_rec`'s traces under `-l`: each block's look-up in `symtab` (`LOOKUPDEBUG`) and,
/// when a symbol holds it, the block with the symbol's name and line (`BBDEBUG`; `line_at`:
/// each symbol's file and line).
fn trace_blocks(
    symtab: &SymTab<'_>,
    line_at: Option<&[Option<(u32, u64)>]>,
    blocks: impl Iterator<Item = (u64, u64)>,
    trace: &mut debug::Trace,
) {
    for (addr, count) in blocks {
        let Some(i) = symtab.lookup_traced(addr, trace) else {
            continue;
        };
        if trace.on(debug::BBDEBUG) {
            let s = &symtab.syms[i];
            let line = line_at
                .and_then(|l| l.get(i).copied().flatten())
                .map_or(0, |l| l.1);
            trace.fmt(format_args!("[bb_read_rec] 0x{addr:x}->0x{:x} (", s.addr));
            trace.put(s.name);
            trace.fmt(format_args!(":{}) cnt={count}\n", line as i32));
        }
    }
}

/// `gmon_out_read`'s `SAMPLEDEBUG` trace of a BSD header (at the start of `data`, whose
/// samples start at `header_size`): the addresses and `ncnt` as read, the sample bytes and
/// bins gprof makes of them (C `int`s).
pub fn trace_bsd_header(data: &[u8], target: Target, header_size: u64, trace: &mut debug::Trace) {
    let p = target.ptr_size.bytes();
    let word = |at: usize, n: usize| -> u64 {
        let b = data.get(at..at + n).unwrap_or(&[]);
        let fold = |v: u64, &x: &u8| (v << 8) | u64::from(x);
        match target.endian {
            Endian::Big => b.iter().fold(0, fold),
            Endian::Little => b.iter().rev().fold(0, fold),
        }
    };
    let (low, high, ncnt) = (word(0, p), word(p, p), word(2 * p, 4) as u32 as i32);
    trace.fmt(format_args!(
        "[gmon_out_read] lowpc 0x{low:x} highpc 0x{high:x} ncnt {ncnt}\n"
    ));
    // `samp_bytes / sizeof (UNIT)`: the int converted to size_t, the quotient kept as int.
    let samp_bytes = ncnt.wrapping_sub(header_size as i32);
    let bins = (samp_bytes as i64 as u64 / 2) as u32 as i32;
    trace.fmt(format_args!(
        "[gmon_out_read] samp_bytes {samp_bytes} hist_num_bins {bins}\n"
    ));
}

/// Deterministic pseudo-random numbers for the tests of this module tree (xorshift64), so a
/// failing random case reproduces.
#[cfg(test)]
pub(crate) struct TestRng(pub u64);

#[cfg(test)]
impl TestRng {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A number below `k` (`k` > 0).
    pub(crate) fn below(&mut self, k: u64) -> u64 {
        self.next() % k
    }
}

#[cfg(test)]
mod tests {
    use super::may_be_mangled;
    use profil_symbols::demangle::gprof_demangle;

    /// The fast path of `push_display_name` must never skip a name the demangler changes:
    /// names built from the bytes that matter to the demangler's prefixes, plus real ones.
    #[test]
    fn names_skipped_by_the_fast_path_never_demangle() {
        let fixed = [
            "main",
            "f123",
            "_Z3foov",
            "._Z3foov",
            "$_Z3foov",
            ".$._ZN3foo3barE",
            "Z3foov",
            "_ZN4core3fmt5write17h0123456789abcdefE",
            "_RNvCs1234_4main4main",
            "_GLOBAL__sub_I_main",
            "foo@GLIBC_2.2.5",
            "._GLOBAL__D_x",
            "x_Z3foov",
            ".",
            "",
            "$",
            "__libc_start_main",
            ".L_Z3foov",
        ];
        let alphabet = b"._$ZRNGLOBAIDE3fv7h0@x";
        let mut rng = super::TestRng(0x243f_6a88_85a3_08d3);
        let mut names: Vec<String> = fixed.iter().map(|s| s.to_string()).collect();
        for _ in 0..50_000 {
            let seed = rng.next();
            let len = (seed % 12) as usize;
            let name: String = (0..len)
                .map(|k| alphabet[((seed >> (5 * k % 60)) as usize) % alphabet.len()] as char)
                .collect();
            names.push(name);
        }
        let mut skipped = 0;
        for name in &names {
            if !may_be_mangled(name.as_bytes()) {
                skipped += 1;
                assert_eq!(gprof_demangle(name), None, "{name:?} demangles");
            }
        }
        assert!(
            skipped > 1000,
            "the fast path was hardly exercised ({skipped})"
        );
        assert!(may_be_mangled(b"._Z3foov") && gprof_demangle("._Z3foov").is_some());
    }
}
