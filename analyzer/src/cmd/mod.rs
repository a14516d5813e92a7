//! Subcommands. Each module owns its `Args` and its `run`.

pub mod artifacts;
pub mod cargo_profil;
pub mod convert;
pub mod demo;
pub mod dump;
pub mod link_args;
pub mod merge;
pub mod run;
pub mod runtime_path;
