//! `profil-report`: argument parsing ([`cli`]) and exit codes only. Every decision lives in the
//! library.

use std::io::Write;
use std::process::ExitCode;

use cli::{Cli, Command};
use profil_report::{cmd, diff, export, launch, pipeline, Error};

mod cli;

/// Print the warnings a command returned.
fn warn(warnings: Vec<String>) {
    for w in warnings {
        eprintln!("profil-report: warning: {w}");
    }
}

fn main() -> ExitCode {
    let mut cli = Cli::parse_or_exit();
    let stdout = std::io::stdout();
    if let Some(Command::Run(a)) = cli.command.take_if(|c| matches!(c, Command::Run(_))) {
        // The program's own exit status, unless `run` failed before starting it. Its report
        // goes out unbuffered, after the program's own output.
        let mut out = stdout.lock();
        let result = launch::run::run(&a.options(), &mut out, &mut std::io::stderr());
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
        Some(Command::Dump(a)) => cmd::dump::run(&a.options(), &mut out),
        Some(Command::Convert(a)) => cmd::convert::run(&a.options(), &mut out),
        Some(Command::Merge(a)) => cmd::merge::run(&a.options(), &mut out),
        Some(Command::RuntimePath(a)) => cmd::runtime_path::run(&a.options(), &mut out),
        Some(Command::LinkArgs(a)) => cmd::link_args::run(&a.options(), &mut out),
        Some(Command::Demo(a)) => launch::demo::run(&a.options(), &mut out),
        Some(Command::Export(a)) => export::run(&a.options(), &mut out).map(warn),
        Some(Command::Diff(a)) => diff::run(&a.options(), &mut out).map(warn),
        Some(Command::Run(_)) => unreachable!("handled above"),
        None => pipeline::run(&cli.report.request(), &mut out).map(|w| warn(w.warnings)),
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
