//! `cargo profil`: build the current package with the profil-rs runtime linked in, run it and
//! print its report. Argument parsing and exit codes only; the work is in
//! `profil_report::launch::cargo_profil`.

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;
use profil_report::launch::cargo_profil;

#[derive(Parser, Debug)]
#[command(
    name = "cargo-profil",
    bin_name = "cargo profil",
    version,
    about = "Build the current cargo package with the profil-rs runtime, run it, print the report"
)]
struct Cli {
    #[command(flatten)]
    args: cargo_profil::Args,
}

fn main() -> ExitCode {
    // Cargo runs `cargo-profil profil ARGS...`; run directly, there is no `profil` word.
    let mut argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if argv.get(1).is_some_and(|a| a == "profil") {
        argv.remove(1);
    }
    let cli = Cli::parse_from(argv);
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let result = cargo_profil::run(&cli.args, &mut out, &mut std::io::stderr());
    let _ = out.flush();
    match result {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            drop(out);
            eprintln!("cargo-profil: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}
