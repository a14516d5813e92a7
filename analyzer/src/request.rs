//! What a report run is asked for, as plain data: the binary builds a [`Request`] from its
//! command line (clap stays in the binary's `cli` module), the launchers (`run`, `demo`,
//! `cargo profil`) build one for the program they ran, tests and the fuzz target build one
//! directly; [`crate::pipeline::run`] writes it.

use std::path::PathBuf;

use crate::gprof::cg_print::{GraphOptions, Sections};

/// How a report is written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Format {
    /// Aligned text tables.
    #[default]
    Table,
    /// One JSON object.
    Json,
    /// A header line and one line per row.
    Csv,
}

impl Format {
    /// The format of the command lines' `--json` and `--csv` flags (at most one is set).
    pub fn from_flags(json: bool, csv: bool) -> Format {
        match (json, csv) {
            (true, _) => Format::Json,
            (_, true) => Format::Csv,
            _ => Format::Table,
        }
    }
}

/// `--gprof`: which of gprof's outputs, byte for byte.
#[derive(Clone, Copy, Debug, Default)]
pub struct GprofRequest {
    /// gprof's `-b`: no explanations after the tables.
    pub brief: bool,
    /// `-p`/`-P`/`-q`/`-Q` and the other sections gprof can print.
    pub sections: Sections,
    /// `-z`: also functions never called and without time.
    pub zeros: bool,
    /// `-a`: ignore static functions.
    pub no_static: bool,
    /// `-l`: one row per line symbol.
    pub lines: bool,
    /// Symbol specs (`-pNAME`, `-qNAME`, `-k FROM/TO`, …), for the whole run.
    pub specs: &'static [crate::gprof::symspec::SymSpec],
    /// `-c`: also the static call graph (direct calls found in the code).
    pub static_calls: bool,
    /// `-w`: the output width (the index's columns).
    pub width: Option<usize>,
    /// `-s`: also write `gmon.sum` (implies `-l`, as in gprof).
    pub sum: bool,
    /// `-D`: no local text symbol that is not a function.
    pub ignore_non_functions: bool,
    /// `--no-demangle`: raw symbol names.
    pub no_demangle: bool,
    /// `--demangle=STYLE`: which demangler.
    pub demangle_style: profil_symbols::demangle::Style,
    /// `-T`: BSD style.
    pub bsd: bool,
    /// `-L`: source files by their whole path.
    pub print_path: bool,
    /// `--inline-file-names`: `(file:line)` after each name.
    pub inline_file_names: bool,
    /// `-O`: the gmon files' format.
    pub file_format: crate::gprof::FileFormat,
    /// `-S FILE`: the symbols, `nm`-style, instead of the executable's.
    pub external_symbols: Option<&'static std::path::Path>,
    /// `-R MAP`: the map of functions to object files, for the file ordering.
    pub file_ordering: Option<&'static std::path::Path>,
    /// `-y`, `-x`, `-m`, `-t`, `-I`: how `-A` annotates.
    pub annotate: crate::gprof::annotate::AnnotateOptions,
    /// `-d[N]`: gprof's debugging level (0: none; [`crate::gprof::debug`]).
    pub debug: u32,
    /// What gprof prints while it parses its options: each `-d`'s `[main] debug-level=0x…`
    /// (the level after it), and with `AOUTDEBUG` on `-S`'s `external-symbol-table: FILE`.
    pub debug_banners: &'static str,
}

impl GprofRequest {
    /// The call graph's (and the flat profile's) printing options.
    pub fn graph_options(&self) -> GraphOptions {
        GraphOptions {
            zeros: self.zeros,
            brief: self.brief,
            width: self.width,
            bsd: self.bsd,
            annotate: self.annotate,
        }
    }
}

/// Which report.
#[derive(Clone, Copy, Debug, Default)]
pub enum Mode {
    /// The default report: flat profile and call graph.
    #[default]
    Default,
    /// The default report's rows next to the installed gprof's, with every difference
    /// explained.
    CompareGprof,
    /// The gprof emulation.
    Gprof(GprofRequest),
    /// Self time per source line.
    Lines,
    /// Self time by source function through inlining.
    Inline,
    /// Time by the program's own source lines.
    OwnLines {
        /// Which code is the program's own.
        scope: crate::report::own_lines::Scope,
        /// List what ran below the program's frame.
        chains: bool,
    },
}

/// With a pcsample file: samples over time.
#[derive(Clone, Debug, Default)]
pub struct Timeline {
    /// Print the timeline as text (instead of the flat profile).
    pub text: bool,
    /// Also write it as an SVG chart to this file.
    pub svg: Option<PathBuf>,
}

impl Timeline {
    /// Whether any timeline output was asked for.
    pub fn any(&self) -> bool {
        self.text || self.svg.is_some()
    }
}

/// A report request: `profil-report [OPTIONS] [FILE]...`.
#[derive(Clone, Debug, Default)]
pub struct Request {
    /// gmon files and the executable, in any order (empty: `a.out gmon.out`).
    pub files: Vec<PathBuf>,
    /// Which report.
    pub mode: Mode,
    /// How it is written (the `--gprof` modes, `--compare-gprof` and the text timeline
    /// ignore it: they print text only).
    pub format: Format,
    /// With a pcsample file: the timeline instead of the flat profile.
    pub timeline: Timeline,
}

impl Request {
    /// The default report in `format` for `files`.
    pub fn default_report(files: Vec<PathBuf>, format: Format) -> Request {
        Request {
            files,
            format,
            ..Request::default()
        }
    }

    /// `-z` under `--gprof` (the only report that lists unused functions).
    pub fn zeros(&self) -> bool {
        matches!(&self.mode, Mode::Gprof(g) if g.zeros)
    }
}
