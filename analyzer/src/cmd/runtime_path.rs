//! `profil-report runtime-path [--shared]`: where the runtime artifacts this workspace built are.
//!
//! analyzer/build.rs builds them (see its header) and bakes their absolute paths in:
//!
//! * the relocatable object, for link-time injection:
//!   `RUSTFLAGS="-C link-arg=$(profil-report runtime-path)" cargo build --target <host triple>`,
//!   or `cc prog.c $(profil-report runtime-path)`;
//! * with `--shared`, the shared object, for `LD_PRELOAD=$(profil-report runtime-path --shared)`.

use std::io::Write;
use std::path::Path;

use crate::{Error, Result};

/// Arguments of `profil-report runtime-path`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Print the shared object's path (for LD_PRELOAD) instead of the relocatable object's.
    #[arg(long)]
    pub shared: bool,
}

/// The absolute path of the relocatable object (`profil_rt.o`), if the build produced it.
pub fn object_path() -> Option<&'static Path> {
    non_empty(env!("PROFIL_RT_OBJECT"))
}

/// The absolute path of the shared object (`libprofil_rt.so`), if the build produced it.
pub fn shared_path() -> Option<&'static Path> {
    non_empty(env!("PROFIL_RT_SHARED"))
}

fn non_empty(s: &'static str) -> Option<&'static Path> {
    (!s.is_empty()).then(|| Path::new(s))
}

/// Run the subcommand: print the path, or fail if the artifact is missing.
pub fn run(args: &Args, out: &mut impl Write) -> Result<()> {
    let (path, what) = if args.shared {
        (shared_path(), "shared object")
    } else {
        (object_path(), "object")
    };
    let Some(path) = path else {
        return Err(Error::input(format!(
            "runtime-path: the runtime {what} was not built: {}",
            env!("PROFIL_RT_ERROR")
        )));
    };
    if !path.is_file() {
        return Err(Error::input(format!(
            "runtime-path: the runtime {what} {} is missing (was the build directory cleaned?)",
            path.display()
        )));
    }
    writeln!(out, "{}", path.display())?;
    Ok(())
}
