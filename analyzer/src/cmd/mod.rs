//! Subcommands that work on files (and the runtime artifacts), and the interactive HTML page
//! ([`html`], also written by `run`, `cargo profil` and `diff`). Each module owns its `Args`
//! and its `run`. The subcommands that start programs are in [`crate::launch`].

pub mod artifacts;
pub mod convert;
pub mod dump;
pub mod html;
pub mod link_args;
pub mod merge;
pub mod runtime_path;
