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

/// The linker options that send a static program's calls of the names libc.a defines strongly
/// (`syscall`, `execvp`, ...) to the runtime's second names `profil_rt_<name>`, whichever
/// definition the link kept (`--wrap` redirects the calls to `__wrap_<name>`, `--defsym` makes
/// that ours). GNU ld, gold and rust-lld take them. The runtime's
/// `profil_rt::link::LINK_FLAGS`, repeated (the runtime is not a dependency of the analyzer;
/// a test checks that the two agree).
pub const LINK_FLAGS: &str = "-Wl,\
     --wrap=syscall,--defsym=__wrap_syscall=profil_rt_syscall,\
     --wrap=execv,--defsym=__wrap_execv=profil_rt_execv,\
     --wrap=execl,--defsym=__wrap_execl=profil_rt_execl,\
     --wrap=execle,--defsym=__wrap_execle=profil_rt_execle,\
     --wrap=execlp,--defsym=__wrap_execlp=profil_rt_execlp,\
     --wrap=execvp,--defsym=__wrap_execvp=profil_rt_execvp,\
     --wrap=fexecve,--defsym=__wrap_fexecve=profil_rt_fexecve,\
     --wrap=sigset,--defsym=__wrap_sigset=profil_rt_sigset,\
     --wrap=__sysv_signal,--defsym=__wrap___sysv_signal=profil_rt___sysv_signal";

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
