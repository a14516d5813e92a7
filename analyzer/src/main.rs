//! `profil-report`: argument parsing ([`cli`]) and exit codes only. Every decision lives in the
//! library.

use std::io::Write;
use std::process::ExitCode;

use cli::{Cli, Command};
use profil_report::{cmd, diff, export, launch, pipeline, Error};

mod cli;

#[global_allocator]
static HEAP: profil_report::heap::HugeHeap = profil_report::heap::HugeHeap;

/// Print the warnings a command returned.
fn warn(warnings: Vec<String>) {
    for w in warnings {
        eprintln!(
            "{}",
            profil_report::render::message("profil-report: warning: ", &w)
        );
    }
}

fn main() -> ExitCode {
    profil_report::heap::HugeHeap::setup();
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    if cli::gprof::is_gprof_mode(&args) {
        return gprof_main(&args);
    }
    let mut cli = Cli::parse_or_exit();
    profil_report::render::set_wide(cli.wide);
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
        Some(Command::Html(a)) => cmd::html::run(&a.options()).map(warn),
        Some(Command::Run(_)) => unreachable!("handled above"),
        None => pipeline::run(&cli.report.request(), &mut out).map(|w| warn(w.warnings)),
    };
    finish(result, out, Error::exit_code)
}

/// Flush the one stdout buffer and map the outcome to the exit status once: success (or a
/// reader that went away), else the error on stderr and `code(&error)`.
fn finish(result: Result<(), Error>, mut out: impl Write, code: fn(&Error) -> u8) -> ExitCode {
    let flushed = out.flush();
    match result.and(flushed.map_err(Error::from)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.is_broken_pipe() => ExitCode::SUCCESS,
        Err(e) => {
            drop(out);
            eprintln!("profil-report: {e}");
            ExitCode::from(code(&e))
        }
    }
}

/// `profil-report --gprof ARGS…`: gprof's command line ([`cli::gprof`]) and gprof's exit
/// status: 1 whenever the report fails, as gprof's `done (1)`; 0 after `-h` and `-v`.
fn gprof_main(args: &[std::ffi::OsString]) -> ExitCode {
    let req = match cli::gprof::request(args) {
        Ok(req) => req,
        Err(r) if r.code == 0 => {
            print!("{}", r.stdout);
            return ExitCode::SUCCESS;
        }
        Err(r) => {
            print!("{}", r.stdout);
            eprintln!("profil-report: {}", r.message);
            return ExitCode::from(r.code);
        }
    };
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::with_capacity(1 << 16, stdout.lock());
    let result = pipeline::run(&req, &mut out).map(|w| warn(w.warnings));
    // gprof's `done (1)`, whatever failed.
    finish(result, out, |_| 1)
}
