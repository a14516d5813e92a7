//! The profile reports: `profil-report [OPTIONS] [FILE]...`.
//!
//! Inputs are recognised by content: exactly one ELF executable and any number of gmon
//! files, in any order (`gmon.out ./prog` and gprof's `./prog gmon.out` both work). With no
//! files, `a.out` and `gmon.out` are read, as gprof does.
//!
//! * `--gprof -b [-p|-P] [-q|-Q] [-z] [-a]`: byte-identical to the same `gprof` command
//!   ([`crate::gprof`]): flat profile, call graph, index by function name.
//! * `--gprof -b -l [-p|-P] [-q|-Q] [-z] [-a]`: byte-identical to the same `gprof` command
//!   ([`crate::gprof::lines`]).
//! * `--lines`: self time per source line ([`lines`]).
//! * `--inline`: self time by source function through inlining ([`inline`]).
//! * `--own-lines`: time by the program's own source lines ([`own_lines`]).
//! * a pcsample file instead of gmon files: flat profile per object, `--timeline`, `--svg`
//!   ([`pcsample`]).
//! * `gmon.out` with a `gmon.out.objects` manifest next to it that lists a shared object with
//!   samples (or an executable without `.symtab`): one report across the executable and its
//!   shared libraries ([`objects`]); [`crate::pipeline::report`] makes the choice.
//! * default: the better report ([`default`]).
//!
//! Each module builds its report as plain data and never prints, nor knows how it will be
//! written: [`crate::render`] writes it as a table, JSON or CSV, and [`crate::pipeline`]
//! chains the two (so this module never imports `render`, which imports it).

pub mod callgraph;
pub mod compare;
pub mod default;
pub mod inline;
pub mod lines;
pub mod loaded;
pub mod objects;
pub mod objects_stacks;
pub mod own_lines;
pub mod pcsample;
pub mod sampled_graph;
pub mod timeline;

pub use crate::profile::input::{load_inputs, parse_exe, GmonInput, Input, Inputs};
