//! profil-report: the analyzer library behind the `profil-report` binary.
//!
//! `main.rs` only parses arguments. The subcommands that work on files are modules under
//! [`cmd`], those that start programs under [`launch`], each with an `Args` struct (clap
//! derive) and a `run` function writing to the writers it is given; the profile reports live
//! under [`report`], built from the inputs [`profile`] reads, and rendered with [`render`]'s
//! helpers.
//!
//! The runtime (runtime/) is built by `build.rs` and embedded in this library
//! ([`cmd::artifacts`]), so that both binaries — `profil-report` and `cargo-profil`
//! (`src/bin/`) — work anywhere after `cargo install`: the commands that inject it
//! (`runtime-path`, `link-args`, and the three in [`launch`]: [`launch::run`],
//! [`launch::demo`], [`launch::cargo_profil`]) write it to a per-version cache directory first,
//! and the last three then run the program and print the default report through the same
//! code as the plain report.
//!
//! The plain report (`profil-report [OPTIONS] [FILE]...`) is asked for with a typed
//! [`request::Request`] (which report: [`request::Mode`]; how it is written:
//! [`request::Format`]) that `main.rs` builds from its clap arguments; [`report::run`] writes
//! to the writer it is given and returns its warnings for `main` to print. Its inputs are
//! read by [`profile::input`]: without blocking on FIFOs, bounded for pipes and devices, and
//! gmon files one at a time, so summing many large profiles holds one of them (the default
//! report adds each file's arcs to its call graph as they are read:
//! [`profile::samples::Samples::read_with`]).
//!
//! gmon files are decoded into summed histograms and arcs by [`profile::samples`] for every
//! report but the `--gprof` emulation, which reads them with gprof's own rules
//! ([`gprof::read_records`]), so that a bug-for-bug change there cannot alter the other
//! reports; a histogram bin is split between functions, lines or objects by one model
//! ([`profile::samples::Bin`]). (The default report's call graph still propagates time with
//! the emulation's [`gprof::cg`] over a symbol table of its own functions.) JSON is written by hand in each report, with the string and number
//! helpers of [`json`] in the default, lines, inline, call-graph, `dump` and `cargo profil`
//! outputs; the objects and pcsample reports (`objects::print_rows`) escape their few strings
//! themselves.
//!
//! [`export`] renders the profile for other tools (pprof, folded stacks and flame graphs,
//! callgrind, speedscope) from its own narrow model ([`export::model::StackProfile`]:
//! samples as stacks of frames), and [`diff`] compares two sets of runs through the same
//! model with a stated significance test. That model is built from the profile model like
//! the reports: inputs sorted by [`profile::input`], histograms summed by
//! [`profile::samples`] and split with its [`profile::samples::Bin`], intervals and
//! distributions from [`profile::stats`]; neither reads through the gprof emulation.

pub mod cmd;
pub mod diff;
pub mod error;
pub mod export;
pub mod gprof;
pub mod json;
pub mod launch;
pub mod profile;
pub mod render;
pub mod report;
pub mod request;

pub use error::{Error, Result};
