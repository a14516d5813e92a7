//! `profil-report`: argument parsing and exit codes only. Every decision lives in the library.

use std::io::Write;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use std::path::PathBuf;

use profil_report::gprof::cg_print::Sections;
use profil_report::request::{Format, GprofRequest, Mode, Request, Timeline};
use profil_report::{cmd, diff, export, launch, report, Error};

#[derive(Parser, Debug)]
#[command(
    name = "profil-report",
    version,
    about = "Reports for gmon.out profiles: a gprof-identical mode and a better default",
    args_conflicts_with_subcommands = true
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    report: ReportArgs,
}

/// Arguments of the report (the command without a subcommand); [`ReportArgs::request`]
/// turns them into the library's typed [`Request`].
#[derive(clap::Args, Debug, Default, Clone)]
struct ReportArgs {
    /// gmon files and the executable, in any order (default: a.out gmon.out).
    files: Vec<PathBuf>,
    /// Emulate GNU gprof 2.40 exactly: with -b, its brief flat profile, call graph and index.
    #[arg(long)]
    gprof: bool,
    /// gprof's -b (brief: no explanations). Required with --gprof.
    #[arg(short = 'b', long = "brief")]
    brief: bool,
    /// gprof's -p: the flat profile (without -p/-q, every section the profile has data for).
    #[arg(short = 'p', long = "flat-profile")]
    flat_profile: bool,
    /// gprof's -P: no flat profile.
    #[arg(short = 'P', long = "no-flat-profile")]
    no_flat_profile: bool,
    /// gprof's -q: the call graph (with its index by function name).
    #[arg(short = 'q', long = "graph")]
    graph: bool,
    /// gprof's -Q: no call graph.
    #[arg(short = 'Q', long = "no-graph")]
    no_graph: bool,
    /// With --gprof: gprof's -z, also list functions that were never called and have no time.
    #[arg(short = 'z', long = "display-unused-functions")]
    zeros: bool,
    /// With --gprof: gprof's -a, ignore static (local) functions (their samples go to the
    /// preceding symbol).
    #[arg(short = 'a', long = "no-static")]
    no_static: bool,
    /// Default report: print JSON instead of a table.
    #[arg(long, conflicts_with_all = ["csv", "gprof"])]
    json: bool,
    /// Default report: print CSV instead of a table.
    #[arg(long, conflicts_with_all = ["json", "gprof"])]
    csv: bool,
    /// Run the installed gprof on the same inputs and explain every difference.
    #[arg(long, conflicts_with = "gprof")]
    compare_gprof: bool,
    /// Self time per source line (DWARF); with --gprof, gprof's -l (one row per address).
    #[arg(short = 'l', long = "lines", conflicts_with = "compare_gprof")]
    lines: bool,
    /// Self time by source function through inlining (DWARF), and by inline chain.
    #[arg(long = "inline", conflicts_with_all = ["compare_gprof", "gprof", "lines"])]
    inline: bool,
    /// With a pcsample file: samples over time by the top functions, as text.
    #[arg(long)]
    timeline: bool,
    /// With a pcsample file: write the timeline as an SVG chart to FILE.
    #[arg(long, value_name = "FILE")]
    svg: Option<PathBuf>,
}

impl ReportArgs {
    fn request(self) -> Request {
        let format = if self.json {
            Format::Json
        } else if self.csv {
            Format::Csv
        } else {
            Format::Table
        };
        let mode = if self.gprof {
            Mode::Gprof(GprofRequest {
                brief: self.brief,
                sections: Sections {
                    flat: self.flat_profile,
                    no_flat: self.no_flat_profile,
                    graph: self.graph,
                    no_graph: self.no_graph,
                },
                zeros: self.zeros,
                no_static: self.no_static,
                lines: self.lines,
            })
        } else if self.compare_gprof {
            Mode::CompareGprof
        } else if self.lines {
            Mode::Lines
        } else if self.inline {
            Mode::Inline
        } else {
            Mode::Default
        };
        Request {
            files: self.files,
            mode,
            format,
            timeline: Timeline {
                text: self.timeline,
                svg: self.svg,
            },
        }
    }
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Print every record of a gmon file (like `gprof -i`, but complete).
    Dump(cmd::dump::Args),
    /// Convert a gmon file between the GNU, 4.4BSD and old BSD formats.
    Convert(cmd::convert::Args),
    /// Sum several gmon files into one (gprof's rules, without `gprof -s` side effects).
    Merge(cmd::merge::Args),
    /// Print the absolute path of the runtime object (or, with --shared, the shared object).
    RuntimePath(cmd::runtime_path::Args),
    /// Print the RUSTFLAGS words that link the runtime into a Rust program.
    LinkArgs(cmd::link_args::Args),
    /// Run a dynamically linked program with the runtime preloaded, then print its report.
    Run(launch::run::Args),
    /// Build and profile the bundled demo workload, next to gprof's view of it.
    Demo(launch::demo::Args),
    /// Write the profile as pprof, folded stacks, a flame graph SVG, callgrind or speedscope.
    Export(export::Args),
    /// Compare two sets of runs: which functions changed, and which changes are noise.
    Diff(diff::Args),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let stdout = std::io::stdout();
    if let Some(Command::Run(a)) = &cli.command {
        // The program's own exit status, unless `run` failed before starting it. Its report
        // goes out unbuffered, after the program's own output.
        let mut out = stdout.lock();
        let result = launch::run::run(a, &mut out, &mut std::io::stderr());
        let _ = out.flush();
        return match result {
            Ok(code) => ExitCode::from(code),
            Err(e) => {
                drop(out);
                eprintln!("profil-report: {e}");
                ExitCode::from(e.exit_code())
            }
        };
    }
    // The one buffer for everything written to stdout.
    let mut out = std::io::BufWriter::with_capacity(1 << 16, stdout.lock());
    let result = match cli.command {
        Some(Command::Dump(a)) => cmd::dump::run(&a, &mut out),
        Some(Command::Convert(a)) => cmd::convert::run(&a, &mut out),
        Some(Command::Merge(a)) => cmd::merge::run(&a, &mut out),
        Some(Command::RuntimePath(a)) => cmd::runtime_path::run(&a, &mut out),
        Some(Command::LinkArgs(a)) => cmd::link_args::run(&a, &mut out),
        Some(Command::Demo(a)) => launch::demo::run(&a, &mut out),
        Some(Command::Export(a)) => export::run(&a, &mut out),
        Some(Command::Diff(a)) => diff::run(&a, &mut out),
        Some(Command::Run(_)) => unreachable!("handled above"),
        None => report::run(&cli.report.request(), &mut out).map(|warnings| {
            for w in warnings {
                eprintln!("profil-report: warning: {w}");
            }
        }),
    };
    let flushed = out.flush();
    match result.and(flushed.map_err(Error::from)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.is_broken_pipe() => ExitCode::SUCCESS,
        Err(e) => {
            drop(out);
            eprintln!("profil-report: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}
