//! Launching programs to profile them: [`run`] (an unmodified dynamically linked program,
//! through `LD_PRELOAD`), [`demo`] (the bundled workload, linked with the runtime) and
//! [`cargo_profil`] (a cargo package, built with the runtime linked in). Each starts the
//! program with the runtime (written to the cache by [`crate::cmd::artifacts`]), passes its
//! input, output and exit status through, keeps the profile of every process of the tree
//! ([`processes`]: found by the runtime's lineage names, placed by the manifests' process
//! lines) and prints the report of the busiest (or of each) through the same code as
//! `profil-report gmon.out prog` ([`crate::pipeline`]).
//!
//! Unlike the plain report, whose warnings `main` prints, these commands write their
//! diagnostics (a profile that could not be kept, a process without a manifest, the report's
//! warnings and notes) on stderr as they happen: the report itself goes to stderr by default,
//! after the program's own output, and each diagnostic belongs just before the report it
//! concerns.

pub mod cargo_profil;
pub mod demo;

/// The highest rate `--hz` and `PROFIL_HZ` accept (samples per CPU-second, from 1): the
/// runtime's `config::MAX_HZ`, which `ux_run::hz_range_is_the_runtimes` checks.
pub const MAX_HZ: u32 = 50_000;
pub mod processes;
pub mod run;
