//! `cargo profil`: build the current package with the profil-rs runtime linked in, run it and
//! print its report. Argument parsing (clap, turned into the library's options) and exit
//! codes only; the work is in
//! `profil_report::launch::cargo_profil`.

use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use profil_report::launch::cargo_profil;

/// The options `cargo profil` shares with `profil-report run`.
#[path = "../cli/profile.rs"]
mod profile;

#[derive(Parser, Debug)]
#[command(
    name = "cargo-profil",
    bin_name = "cargo profil",
    version,
    about = "Build the current cargo package with the profil-rs runtime, run it, print the report"
)]
struct Cli {
    #[command(flatten)]
    args: CargoProfilArgs,
}

/// Options of `cargo profil`.
#[derive(clap::Args, Debug)]
struct CargoProfilArgs {
    /// The binary to build and run (default: the package's only one, or its default-run).
    #[arg(long, value_name = "NAME")]
    bin: Option<String>,
    /// Build and run this example instead of a binary.
    #[arg(long, value_name = "NAME", conflicts_with = "bin")]
    example: Option<String>,
    /// The package (default: the one in the current directory).
    #[arg(short = 'p', long, value_name = "SPEC")]
    package: Option<String>,
    /// Build with the release profile.
    #[arg(long)]
    release: bool,
    /// Build with this cargo profile (passed to cargo as `--profile`).
    #[arg(
        long = "profile",
        value_name = "PROFILE-NAME",
        conflicts_with = "release"
    )]
    cargo_profile: Option<String>,
    /// Features to activate (passed to cargo; repeatable, comma- or space-separated).
    #[arg(short = 'F', long, value_name = "FEATURES")]
    features: Vec<String>,
    /// Activate all available features (passed to cargo).
    #[arg(long)]
    all_features: bool,
    /// Do not activate the `default` feature (passed to cargo).
    #[arg(long)]
    no_default_features: bool,
    /// Path to Cargo.toml (passed to cargo; the package is chosen from its directory).
    #[arg(long, value_name = "PATH")]
    manifest_path: Option<PathBuf>,
    /// Full names and paths, every column, no 100-column budget.
    #[arg(long)]
    wide: bool,
    /// The rate, and where the profile and report go.
    #[command(flatten)]
    profile: profile::ProfileArgs,
    /// Arguments for the program (after `--`).
    #[arg(last = true, value_name = "ARGS")]
    args: Vec<OsString>,
}

impl CargoProfilArgs {
    /// The library's options.
    fn options(self) -> cargo_profil::Options {
        cargo_profil::Options {
            bin: self.bin,
            example: self.example,
            package: self.package,
            release: self.release,
            cargo_profile: self.cargo_profile,
            features: self.features,
            all_features: self.all_features,
            no_default_features: self.no_default_features,
            manifest_path: self.manifest_path,
            profile: self.profile.options(),
            args: self.args,
        }
    }
}

fn main() -> ExitCode {
    // Cargo runs `cargo-profil profil ARGS...`; run directly, there is no `profil` word.
    let mut argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if argv.get(1).is_some_and(|a| a == "profil") {
        argv.remove(1);
    }
    let cli = Cli::parse_from(argv);
    profil_report::render::set_wide(cli.args.wide);
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let result = cargo_profil::run(&cli.args.options(), &mut out, &mut std::io::stderr());
    let _ = out.flush();
    match result {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            drop(out);
            // The command as the user typed it, once (the errors do not repeat it).
            eprintln!("cargo profil: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}
