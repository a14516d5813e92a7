//! The profile model: what every report is built from, independent of the gprof emulation.
//!
//! * [`input`]: the files on the command line, read without blocking, bounded when they are
//!   pipes or devices, and gmon files one at a time.
//! * [`extent`]: how much of a pipe or device a file's own headers justify reading.
//! * [`samples`]: the histograms summed over the gmon files, the arcs, and the one model of a
//!   histogram bin that the reports split between functions, lines and objects.
//! * [`stacks`]: the call stacks the runtime sampled (`<profile>.stacks`), mapped to objects
//!   and link-time addresses, and the inclusive counts taken from them.
//! * [`stats`]: what a sample count says about the time behind it (95% intervals).
//! * [`callgraph`]: call counts and the equal-cost estimate of children time for counted
//!   (`-pg`) arcs, the crate's own implementation of gprof's model.
//! * [`debuginfo`]: where an object's function symbols come from (`.symtab`, build-id and
//!   `.gnu_debuglink` debug files, `.dynsym`), and which package would give them.

pub mod callgraph;
pub mod debuginfo;
pub mod extent;
pub mod input;
pub mod samples;
pub mod stacks;
pub mod stats;

/// Name of the row that collects samples outside every function.
pub const OUTSIDE: &str = "<outside known functions>";
