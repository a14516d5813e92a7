//! `profil-report runtime-path [--shared]`: the absolute path of a runtime artifact.
//!
//! The artifacts are embedded in this binary ([`super::artifacts`]); this command writes them
//! to the per-version cache directory if needed and prints the path there:
//!
//! * the relocatable object, for link-time injection:
//!   `RUSTFLAGS="-C link-arg=$(profil-report runtime-path)" cargo build --target <host triple>`,
//!   or `cc prog.c $(profil-report runtime-path)`;
//! * with `--shared`, the shared object, for `LD_PRELOAD=$(profil-report runtime-path --shared)`.

use std::io::Write;
use std::path::Path;

use super::artifacts::{self, Kind};
use crate::{Error, Result};

/// What `profil-report runtime-path` is asked for (the binary builds it from its command line).
#[derive(Debug, Clone)]
pub struct Options {
    /// Print the shared object's path (for LD_PRELOAD) instead of the relocatable object's.
    pub shared: bool,
}

/// Where analyzer/build.rs left the relocatable object (`profil_rt.o`), if it built it. The
/// file disappears with the build directory; use [`artifacts::materialize`] for a lasting path.
pub fn object_path() -> Option<&'static Path> {
    non_empty(env!("PROFIL_RT_OBJECT"))
}

/// Where analyzer/build.rs left the shared object (`libprofil_rt.so`), if it built it.
pub fn shared_path() -> Option<&'static Path> {
    non_empty(env!("PROFIL_RT_SHARED"))
}

fn non_empty(s: &'static str) -> Option<&'static Path> {
    (!s.is_empty()).then(|| Path::new(s))
}

/// Run the subcommand: print the cached artifact's path, or fail if this binary has none.
pub fn run(args: &Options, out: &mut impl Write) -> Result<()> {
    let kind = if args.shared {
        Kind::Shared
    } else {
        Kind::Object
    };
    let path =
        artifacts::materialize(kind).map_err(|e| Error::input(format!("runtime-path: {e}")))?;
    writeln!(out, "{}", path.display())?;
    Ok(())
}
