//! Read, write and merge `gmon.out` profiles, and the profil(2) bin mapping.
//!
//! # Layers
//!
//! * [`target`]: the two facts a gmon file does not record, pointer size and byte order. They
//!   are *values* ([`Target`]) that the caller takes from the executable (as gprof does), never
//!   `cfg`s, so a 32-bit big-endian profile reads the same on any host.
//! * `cursor` (private): the one bounds-checked cursor every reader and writer goes through.
//!   Fields are decoded and encoded with `byteorder`'s `ByteOrder` (`LittleEndian` or
//!   `BigEndian`, picked from the [`Endian`] value at each call), and a short buffer is an error
//!   that names the field and its byte offset.
//! * [`layout`]: magic numbers, tags and record sizes of the three formats (GNU tagged,
//!   4.4BSD, old BSD), from gprof-internals §1.
//! * [`profil`]: the profil(2) PC → counter mapping and its inverse.
//! * [`write`](mod@write) (`no_std`, no allocation): a [`write::Writer`] that streams any format into a
//!   caller-provided [`write::Sink`]. This is what the runtime uses at exit, where allocating
//!   is not an option; bins come from an iterator so the runtime's counters are never copied.
//! * [`read`]: format detection exactly as gprof 2.40 does it, and borrowed views of every
//!   record. [`read::records`] is a no-allocation iterator; [`read::parse`] (feature `alloc`)
//!   collects it into a [`read::GmonFile`].
//! * [`pcsample`]: the raw-PC sample file of `PROFIL_MODE=pcsample` (no-allocation writer,
//!   `alloc` reader), and [`manifest`]: the text file that maps each per-object gmon file of
//!   `PROFIL_RANGES=all` to its object; [`stacks`]: the sampled call stacks and the stack walk's
//!   statistics (`<profile>.stacks`).
//! * [`extent`]: how many bytes the start of a gmon or pcsample file justifies reading (the
//!   bound on reads from pipes and devices), from the same record layouts.
//! * [`merge`] (feature `alloc`): sums several files with gprof's rules into a
//!   [`merge::Profile`] with wide counters, which can be written in any format.
//!
//! # Why these choices
//!
//! * The reader never panics and never allocates more than the input justifies: every count
//!   is multiplied out and compared with the bytes that remain before it is used. Errors
//!   ([`Error`]) name the field and its byte offset.
//! * Addresses in files are *link-time addresses* (as in the ELF; glibc subtracts the load
//!   address since 2.27). This crate never relocates anything: converting runtime addresses
//!   (as mapped) to link-time addresses is the runtime's job before it calls the writer.
//! * Features: none (`default-features = false`) gives `profil`, `write` and the
//!   no-allocation reader; `alloc` adds [`read::parse`] and [`merge`]; `std` (default) adds
//!   `std::error::Error` impls and an `std::io::Write` sink.
#![no_std]
#![forbid(unsafe_code)]
#![deny(missing_docs)]
#[cfg(feature = "alloc")]
extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

mod cursor;
pub mod error;
pub mod extent;
pub mod layout;
pub mod manifest;
#[cfg(feature = "alloc")]
pub mod merge;
pub mod pcsample;
pub mod profil;
pub mod read;
pub mod stacks;
pub mod target;
pub mod write;

pub use error::{Error, ErrorKind};
#[cfg(feature = "alloc")]
pub use read::{parse, GmonFile};
pub use read::{Arc, Bins, Format, Histogram, Record};
pub use target::{Endian, PtrSize, Target};

/// The unit of a histogram: a 15-byte NUL-padded name and a one-character abbreviation
/// (GNU `dimen` / `dimen_abbrev`; always "seconds"/'s' in practice).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Dimension {
    /// The name, NUL-padded as written (`strncpy`).
    pub name: [u8; layout::DIMEN_BYTES],
    /// The abbreviation used in `ms/call`-style headers.
    pub abbrev: u8,
}

impl Dimension {
    /// "seconds" / 's', what glibc writes and what gprof assumes for BSD files.
    pub const SECONDS: Dimension = Dimension {
        name: *b"seconds\0\0\0\0\0\0\0\0",
        abbrev: b's',
    };

    /// The name up to its first NUL (raw bytes; not necessarily UTF-8).
    pub fn name_bytes(&self) -> &[u8] {
        let end = self
            .name
            .iter()
            .position(|&b| b == 0)
            .unwrap_or(self.name.len());
        &self.name[..end]
    }
}

impl Default for Dimension {
    fn default() -> Self {
        Dimension::SECONDS
    }
}
