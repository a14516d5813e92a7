//! `profil-report link-args`: the `RUSTFLAGS` words that link the runtime into a Rust program.
//!
//! ```sh
//! RUSTFLAGS="$(profil-report link-args)" cargo build --release --target x86_64-unknown-linux-gnu
//! ```
//!
//! It prints `-C link-arg=<path of the cached profil_rt.o>` (see [`super::artifacts`]) and
//! `-C link-arg=`[`THREAD_FLAGS`]: the linker options that send the program's
//! `pthread_create` calls through the runtime's wrapper, so that threads shorter than a
//! sampling period are sampled in proportion to their CPU time (runtime/src/threads.rs,
//! "Linked in"; GNU ld, gold and rust-lld take them). The
//! `--target` matters: without it `RUSTFLAGS` also reaches build scripts and proc macros, which
//! would then be profiled too. `RUSTFLAGS` is split on whitespace, so a cache path with
//! whitespace in it is refused (set `PROFIL_CACHE_DIR` elsewhere, or use
//! `CARGO_ENCODED_RUSTFLAGS`).

use std::io::Write;

use super::artifacts::{self, Kind};
use crate::{Error, Result};

/// The linker options that send a program's `pthread_create` calls to the linked runtime's
/// wrapper: `--wrap` redirects the calls to `__wrap_pthread_create` (and the runtime's
/// `__real_pthread_create` to libc's), `--defsym` makes that our `profil_rt_pthread_create`
/// (libgcc has a `__wrap_pthread_create` of its own, for split stacks, which GNU ld would
/// otherwise pull in when the object comes after libgcc), and `-u` keeps libc's
/// `pthread_create` in a static link whatever the order of the files. The runtime's
/// `profil_rt::threads::LINK_FLAGS`, repeated (the runtime is not a dependency of the
/// analyzer; a test checks that the two agree).
pub const THREAD_FLAGS: &str = "-Wl,--wrap=pthread_create,\
     --defsym=__wrap_pthread_create=profil_rt_pthread_create,-u,pthread_create";

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
    Ok(format!("-C link-arg={s} -C link-arg={THREAD_FLAGS}"))
}

/// Run the subcommand.
pub fn run(out: &mut impl Write) -> Result<()> {
    writeln!(out, "{}", words()?)?;
    Ok(())
}
