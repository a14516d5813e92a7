//! `profil-report`: argument parsing and exit codes only. Every decision lives in the library.

use std::io::Write;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use profil_report::{cmd, diff, export, report, Error};

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
    report: report::ReportArgs,
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
    Run(cmd::run::Args),
    /// Build and profile the bundled demo workload, next to gprof's view of it.
    Demo(cmd::demo::Args),
    /// Write the profile as pprof, folded stacks, a flame graph SVG, callgrind or speedscope.
    Export(export::Args),
    /// Compare two sets of runs: which functions changed, and which changes are noise.
    Diff(diff::Args),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let result = match cli.command {
        Some(Command::Dump(a)) => cmd::dump::run(&a, &mut out),
        Some(Command::Convert(a)) => cmd::convert::run(&a, &mut out),
        Some(Command::Merge(a)) => cmd::merge::run(&a, &mut out),
        Some(Command::RuntimePath(a)) => cmd::runtime_path::run(&a, &mut out),
        Some(Command::LinkArgs(a)) => cmd::link_args::run(&a, &mut out),
        Some(Command::Demo(a)) => cmd::demo::run(&a, &mut out),
        Some(Command::Export(a)) => export::run(&a, &mut out),
        Some(Command::Diff(a)) => diff::run(&a, &mut out),
        Some(Command::Run(a)) => {
            // The program's own exit status, unless `run` failed before starting it.
            let result = cmd::run::run(&a, &mut out, &mut std::io::stderr());
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
        None => report::run(&cli.report, &mut out),
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
