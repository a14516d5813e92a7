//! profil-report: the analyzer library behind the `profil-report` binary.
//!
//! The binaries only parse arguments: `profil-report`'s `cli` module (and `cargo-profil`'s own
//! struct) hold the clap derives and turn them into this library's typed requests, so no clap
//! type is part of this library. The subcommands that work on files are modules under
//! [`cmd`] (and [`export`], [`diff`]), those that start programs under [`launch`] (`run`,
//! `demo`, `cargo profil`); each takes a plain `Options` struct and writes to the writer it
//! is given. The profile reports live under
//! [`report`], built from the inputs [`profile`] reads, and rendered by [`render`];
//! [`pipeline`] chains the three (load → build → render), so builders and renderers never
//! import each other both ways.
//!
//! The runtime (runtime/) is built by `build.rs` and embedded in this library
//! ([`cmd::artifacts`]), so that both binaries — `profil-report` and `cargo-profil`
//! (`src/bin/`) — work anywhere after `cargo install`: the commands that inject it
//! (`runtime-path`, `link-args`, and the three in [`launch`]: [`launch::run`],
//! [`launch::demo`], [`launch::cargo_profil`]) write it to a per-version cache directory first,
//! and the last three then run the program — `run` any program, wrapper or process tree,
//! keeping every process's profile ([`launch::processes`]) — and print its report through
//! the same entry point as the plain report.
//!
//! Every report is asked for with a typed [`request::Request`] (which report:
//! [`request::Mode`]; how it is written: [`request::Format`]): the binary's `cli` module
//! builds it for the plain report (`profil-report [OPTIONS] [FILE]...`), the launchers for
//! the program they ran. [`pipeline::run`], the one entry point, chooses the report
//! ([`pipeline::report`]), writes it to the writer it is given and returns its warnings
//! (which `main` or the launcher prints) and what it counted. ARCHITECTURE.md at the
//! repository root maps the layers. Its inputs are
//! read by [`profile::input`]: without blocking on FIFOs, bounded for pipes and devices, and
//! gmon files one at a time, so summing many large profiles holds one of them (the default
//! report adds each file's arcs to its call graph as they are read:
//! [`profile::samples::Samples::read_with`]).
//!
//! gmon files are decoded into summed histograms and arcs by [`profile::samples`] for every
//! report but the `--gprof` emulation, which reads them with gprof's own rules
//! ([`gprof::read_records`]), so that a bug-for-bug change there cannot alter the other
//! reports; a histogram bin is split between functions, lines or objects by one model
//! ([`profile::samples::Bin`]). The default report's call graph of counted (`-pg`) arcs
//! propagates time with [`profile::callgraph`], the crate's own implementation of the
//! equal-cost model, checked against the emulation's on random graphs; nothing outside
//! `--gprof`, `--gprof -l` and `--compare-gprof` reads through [`gprof`]. The call stacks the
//! runtime samples (`<profile>.stacks`, found beside each gmon file) are read by
//! [`profile::stacks`]; from them the default report and the report across objects take each
//! function's total (inclusive) time and a measured call graph ([`report::sampled_graph`])
//! that replaces the estimate, and the exports their real stacks.
//!
//! Every JSON output is written by `serde_json` from `#[derive(Serialize)]` structs whose
//! fields fix the key order: the reports' and `dump`'s in the layout and number forms of
//! [`render::json`], `diff --json` and the speedscope export in `serde_json`'s own. (`cargo
//! profil` reads cargo's JSON with `serde_json` too.)
//!
//! [`export`] renders the profile for other tools (pprof, folded stacks and flame graphs,
//! callgrind, speedscope) from its own narrow model ([`export::model::StackProfile`]:
//! samples as stacks of frames), and [`diff`] compares two sets of runs through the same
//! model with a stated significance test. That model is built from the profile model like
//! the reports: inputs sorted by [`profile::input`], histograms summed by
//! [`profile::samples`] and split with its [`profile::samples::Bin`], intervals and
//! distributions from [`profile::stats`]; neither reads through the gprof emulation.
//!
//! [`cmd::html`] writes the interactive report (`profil-report html`, `--html` of `run`,
//! `cargo profil` and `diff`): the report's `--json` object as [`pipeline`] writes it, the
//! call tree of that same stack model and the source lines with samples, in one page that
//! [`render::html`] fills from its own template; the page's script only lays out, sorts and
//! filters them.
//!
//! [`heap`] is the binary's allocator: glibc's, with large blocks and the heap's growth
//! advised onto transparent huge pages (a tenth of the page faults of a report over a large
//! program; measured in its module doc and BENCHMARKS.md).

pub mod cmd;
pub mod diff;
pub mod error;
pub mod export;
pub mod gprof;
pub mod heap;
pub mod launch;
pub mod pipeline;
pub mod profile;
pub mod render;
pub mod report;
pub mod request;
pub mod units;

pub use error::{Error, Result};
