//! The command-line form of the options `run` and `cargo profil` share. Both binaries include
//! this file (`profil-report`'s `cli` module, and `cargo-profil` by path), so that the two
//! commands spell them alike and clap stays out of the library.

use std::path::PathBuf;

use profil_report::launch::run::{ProfileOptions, ReportStyle};
use profil_report::launch::MAX_HZ;
use profil_report::request::{Format, Mode};

/// The rate, where the profile is kept, where and how the report is printed.
#[derive(clap::Args, Debug)]
pub struct ProfileArgs {
    /// Samples per CPU-second (sets PROFIL_HZ; default: the runtime's).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=i64::from(MAX_HZ)))]
    pub hz: Option<u32>,
    /// Where to keep the profile.
    #[arg(long, value_name = "FILE", default_value = "gmon.out")]
    pub out: PathBuf,
    /// Where to print the report: a file, or `-` for stdout (default: stderr).
    #[arg(long, value_name = "FILE")]
    pub report: Option<PathBuf>,
    /// Print the report as JSON.
    #[arg(long, conflicts_with = "csv")]
    pub json: bool,
    /// Print the report as CSV.
    #[arg(long)]
    pub csv: bool,
    /// Report self time per source line (DWARF) instead of per function.
    #[arg(short = 'l', long = "lines", conflicts_with = "inline")]
    pub lines: bool,
    /// Report self time by source function through inlining (DWARF).
    #[arg(long, conflicts_with = "own_lines")]
    pub inline: bool,
    /// Report time by the program's own source lines (each sample credited to the innermost
    /// frame in the package's source tree; DWARF line tables).
    #[arg(long = "own-lines", conflicts_with = "lines")]
    pub own_lines: bool,
    /// With --own-lines: every crate outside the standard library and the cargo registry is
    /// the program's own.
    #[arg(long = "own-crates", requires = "own_lines")]
    pub own_crates: bool,
    /// With --own-lines: list, per line, what ran below the program's frame.
    #[arg(long, requires = "own_lines")]
    pub chains: bool,
    /// Report every process of the tree, each in its own section (default: the one that used
    /// the most CPU, and a list of the others).
    #[arg(long)]
    pub all: bool,
    /// Sum the processes that ran the same executable into one report.
    #[arg(long)]
    pub merge: bool,
    /// Also write the report as an interactive HTML page to FILE (table, flame graph,
    /// callers and callees, source lines, the process tree).
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
}

impl ProfileArgs {
    /// The library's options.
    pub fn options(self) -> ProfileOptions {
        ProfileOptions {
            hz: self.hz,
            out: self.out,
            report: self.report,
            html: self.html,
            style: ReportStyle {
                mode: if self.lines {
                    Mode::Lines
                } else if self.inline {
                    Mode::Inline
                } else if self.own_lines {
                    Mode::OwnLines {
                        scope: profil_report::report::own_lines::Scope::with_crates(
                            self.own_crates,
                        ),
                        chains: self.chains,
                    }
                } else {
                    Mode::Default
                },
                format: Format::from_flags(self.json, self.csv),
                all: self.all,
                merge: self.merge,
            },
        }
    }
}
