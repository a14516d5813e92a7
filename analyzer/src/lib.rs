//! profil-report: the analyzer library behind the `profil-report` binary.
//!
//! `main.rs` only parses arguments; every subcommand is a module under [`cmd`] with an
//! `Args` struct (clap derive) and a `run(&Args, &mut impl Write)` function, and the
//! profile reports live under [`report`].
//!
//! The runtime (runtime/) is built by `build.rs` and embedded in this library
//! ([`cmd::artifacts`]), so that both binaries — `profil-report` and `cargo-profil`
//! (`src/bin/`) — work anywhere after `cargo install`: the commands that inject it
//! (`runtime-path`, `link-args`, [`cmd::run`], [`cmd::demo`], [`cmd::cargo_profil`]) write it to
//! a per-version cache directory first, and the last three then run the program and print the
//! default report through the same code as the plain report.
//!
//! Shared pieces have one home each: gmon files are decoded into gprof's histogram and arc
//! tallies by [`gprof::read_records`] (the `--gprof` emulation, the default report and the
//! lines, inline and objects reports all read through it), and every `--json` output writes
//! its values with [`json`].

pub mod cmd;
pub mod error;
pub mod gprof;
pub mod json;
pub mod profile;
pub mod report;

pub use error::{Error, Result};
