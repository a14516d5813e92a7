//! Symbolization for profil-rs: ELF symbol tables, DWARF function locations, demangling.
//!
//! # Layers
//!
//! * [`elf`]: a plain, non-generic view of an executable (sections, `.symtab`, `.dynsym`)
//!   read with `object`'s low-level ELF API. Pointer size and byte order are values here,
//!   never `cfg`s, because the analyzer must read profiles of any target.
//! * [`gprof`]: which symbols GNU gprof 2.40 turns into functions (`core_sym_class`),
//!   reproduced bug for bug, because the analyzer's `--gprof` mode must print exactly what
//!   gprof prints. gprof never reads `st_size`; each function runs to the next symbol. Also
//!   the source file BFD 2.40's line reader names at each symbol (the call graph index's
//!   `(file)`), with BFD's DWARF 5 file numbering.
//! * [`ranges`]: the honest alternative for the default report: function ranges from
//!   `st_size`, aliases grouped, `.cold`/`.part` fragments tied to their parent by name, and
//!   the gaps between functions left as gaps.
//! * [`dwarf`]: `file:line` of each function's entry, from `.debug_info` via `gimli`.
//! * [`lines`]: the DWARF line table as sorted address spans with one `file:line` each,
//!   decoded only for the compilation units whose code holds samples, because a profile
//!   touches a sliver of a large program and a full decode costs seconds.
//! * [`inline`]: functions and inlined copies by address (the inline chain of each
//!   address), names through abstract origins in this or another unit; the same selection
//!   of units.
//! * [`file`]: inputs mapped read-only, so a large executable costs only the pages read.
//! * [`demangle`]: names as gprof prints them (libiberty semantics: Rust legacy and v0
//!   without hashes, then C++).
//! * [`distinguish`]: names that tell apart distinct functions whose demangled names
//!   collide (generic instances: their generic arguments from DWARF, else the hash).
//!
//! # Address spaces
//!
//! Every address in this crate is a **link-time address** (as written in the ELF:
//! `st_value`, `sh_addr`). glibc's gmon.out also holds link-time addresses for PIE
//! executables, so no load bias is ever applied here.

pub mod demangle;
pub mod distinguish;
pub mod dwarf;
pub mod elf;
pub mod file;
pub mod gprof;
pub mod inline;
pub mod lines;
pub mod ranges;

use std::fmt;

pub use elf::{ElfImage, RawSymbol, Section, SymbolTable};

/// A symbolization error: one sentence, without the file name (callers add it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error(String);

impl Error {
    /// Wrap a message.
    pub fn new(msg: impl Into<String>) -> Self {
        Error(msg.into())
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Error {}
