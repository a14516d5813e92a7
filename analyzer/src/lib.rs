//! profil-report: the analyzer library behind the `profil-report` binary.
//!
//! `main.rs` only parses arguments; every subcommand is a module under [`cmd`] with an
//! `Args` struct (clap derive) and a `run(&Args, &mut impl Write)` function, and the
//! profile reports live under [`report`].

pub mod cmd;
pub mod error;
pub mod gprof;
pub mod report;

pub use error::{Error, Result};
