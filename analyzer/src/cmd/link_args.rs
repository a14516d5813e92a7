//! `profil-report link-args [--cc]`: the words that link the runtime into a program, dynamic or
//! static, with every thread sampled.
//!
//! ```sh
//! RUSTFLAGS="$(profil-report link-args)" cargo build --release --target x86_64-unknown-linux-gnu
//! cc -O2 -o prog prog.c $(profil-report link-args --cc)
//! ```
//!
//! It prints the path of the cached `profil_rt.o` (see [`super::artifacts`]) and
//! [`LINK_FLAGS`]; for Rust each as `-C link-arg=…` (`RUSTFLAGS` words), with `--cc` as they
//! go on a C compiler's command line. The same words serve dynamic and static links
//! (runtime/src/link.rs):
//!
//! * the object defines `pthread_create`, so every thread the program or its shared libraries
//!   start gets a clock of its own (short threads sampled in proportion), with no option;
//! * a static link (C `-static`, `-static-pie`, Rust `-C target-feature=+crt-static`) needs
//!   [`LINK_FLAGS`]: libc.a defines `syscall`, `execvp` and a few more strongly, and where the
//!   linker reads libc.a before the object (rustc puts `-C link-arg` after the libraries)
//!   libc's are linked; the object's are weak (no clash), and these options send the program's
//!   calls to the runtime's, which write the profile before an exec. In a dynamic link they
//!   only route the program's own calls straight to ours.
//!
//! The `--target` matters: without it `RUSTFLAGS` also reaches build scripts and proc macros,
//! which would then be profiled too. `RUSTFLAGS` is split on whitespace, so a cache path with
//! whitespace in it is refused (set `PROFIL_CACHE_DIR` elsewhere, or use
//! `CARGO_ENCODED_RUSTFLAGS`).

use std::io::Write;

use super::artifacts::{self, Kind};
use crate::{Error, Result};

/// What `profil-report link-args` is asked for (the binary builds it from its command line).
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Words for a C compiler driver (`cc`) instead of `RUSTFLAGS`.
    pub cc: bool,
}

/// The runtime's own description of its link (`STRONG_IN_LIBC_A`, `LINK_FLAGS`), the one
/// definition: the runtime is only a dev-dependency of the analyzer, and the file uses
/// nothing of its crate.
#[path = "../../../runtime/src/link.rs"]
#[allow(dead_code, rustdoc::broken_intra_doc_links)]
mod runtime_link;

/// The linker options that send a static program's calls of the names libc.a defines strongly
/// (`syscall`, `execvp`, ...) to the runtime's second names `profil_rt_<name>`, whichever
/// definition the link kept (`--wrap` redirects the calls to `__wrap_<name>`, `--defsym` makes
/// that ours). GNU ld, gold and rust-lld take them.
pub use runtime_link::LINK_FLAGS;

/// The linker words: the cached object's path, then [`LINK_FLAGS`].
pub fn linker_words() -> Result<[String; 2]> {
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
    Ok([s.to_string(), LINK_FLAGS.to_string()])
}

/// The words, one string.
pub fn words(options: &Options) -> Result<String> {
    let [object, flags] = linker_words()?;
    Ok(if options.cc {
        format!("{object} {flags}")
    } else {
        format!("-C link-arg={object} -C link-arg={flags}")
    })
}

/// Run the subcommand.
pub fn run(options: &Options, out: &mut impl Write) -> Result<()> {
    writeln!(out, "{}", words(options)?)?;
    Ok(())
}
