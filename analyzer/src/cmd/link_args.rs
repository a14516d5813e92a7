//! `profil-report link-args`: the `RUSTFLAGS` words that link the runtime into a Rust program.
//!
//! ```sh
//! RUSTFLAGS="$(profil-report link-args)" cargo build --release --target x86_64-unknown-linux-gnu
//! ```
//!
//! It prints `-C link-arg=<path of the cached profil_rt.o>` (see [`super::artifacts`]). The
//! `--target` matters: without it `RUSTFLAGS` also reaches build scripts and proc macros, which
//! would then be profiled too. `RUSTFLAGS` is split on whitespace, so a cache path with
//! whitespace in it is refused (set `PROFIL_CACHE_DIR` elsewhere, or use
//! `CARGO_ENCODED_RUSTFLAGS`).

use std::io::Write;

use super::artifacts::{self, Kind};
use crate::{Error, Result};

/// The words, one string.
pub fn words() -> Result<String> {
    let path = artifacts::materialize(Kind::Object)?;
    let s = path.to_str().ok_or_else(|| {
        Error::input(format!(
            "link-args: the runtime path {} is not UTF-8; set PROFIL_CACHE_DIR to a plain path",
            path.display()
        ))
    })?;
    if s.chars().any(char::is_whitespace) {
        return Err(Error::input(format!(
            "link-args: the runtime path {s:?} contains whitespace, which RUSTFLAGS cannot carry; \
             set PROFIL_CACHE_DIR to a path without spaces"
        )));
    }
    Ok(format!("-C link-arg={s}"))
}

/// Run the subcommand.
pub fn run(out: &mut impl Write) -> Result<()> {
    writeln!(out, "{}", words()?)?;
    Ok(())
}
