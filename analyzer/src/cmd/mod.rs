//! Subcommands. Each module owns its `Args` and its `run`.

pub mod convert;
pub mod dump;
pub mod merge;
pub mod runtime_path;
