//! What a report run is asked for, as plain data: the binary builds a [`Request`] from its
//! command line (clap stays in the binary's `cli` module), the launchers (`run`, `demo`,
//! `cargo profil`) build one for the program they ran, tests and the fuzz target build one
//! directly; [`crate::pipeline::run`] writes it.

use std::path::PathBuf;

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

/// `--gprof`: which of gprof's brief outputs, byte for byte.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GprofRequest {
    /// gprof's `-b`: required (only the brief output is emulated).
    pub brief: bool,
    /// `-p`: the flat profile.
    pub flat: bool,
    /// `-P`: no flat profile.
    pub no_flat: bool,
    /// `-q`: the call graph (and its index).
    pub graph: bool,
    /// `-Q`: no call graph.
    pub no_graph: bool,
    /// `-z`: also functions never called and without time.
    pub zeros: bool,
    /// `-a`: ignore static functions.
    pub no_static: bool,
    /// `-l`: one row per line symbol.
    pub lines: bool,
}

/// Which report.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
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
