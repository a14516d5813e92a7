//! Errors of the reader: what is wrong, in which field, at which byte offset.

use core::fmt;

use crate::cursor::{CursorError, CursorErrorKind};

/// A malformed gmon file. Carries the byte offset and the name of the field where decoding
/// stopped; [`Display`](fmt::Display) reads well after a file name
/// (`gmon.out: histogram record: hist_size of 4294967295 bins needs 8589934590 bytes but only 80 remain at byte 37`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    /// Byte offset (from the start of the file) of the offending field.
    pub offset: u64,
    /// The field, e.g. `"histogram record: hist_size"`.
    pub field: &'static str,
    /// What is wrong with it.
    pub kind: ErrorKind,
}

/// What is wrong with a field. The variants mirror gprof's diagnostics, with numbers.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The file is shorter than any gmon header (gprof: "file too short to be a gmon file").
    TooShort {
        /// Bytes needed to decide the format.
        needed: u64,
        /// Length of the file.
        len: u64,
    },
    /// The field runs past the end of the file.
    Truncated {
        /// Bytes the field needs.
        needed: u64,
        /// Bytes left in the file at its offset.
        available: u64,
    },
    /// GNU header with a version other than 0 or 1.
    UnsupportedVersion(u32),
    /// A GNU record tag other than 0, 1 or 2.
    BadTag(u8),
    /// A histogram whose `low_pc` is above its `high_pc`.
    LowAboveHigh {
        /// The `low_pc` field.
        low_pc: u64,
        /// The `high_pc` field.
        high_pc: u64,
    },
    /// A count of items whose total size exceeds what is left of the file.
    CountExceedsFile {
        /// The count in the file.
        count: u64,
        /// Size of one item in bytes.
        item_bytes: u64,
        /// Bytes left in the file after the count's record header.
        available: u64,
    },
    /// A BSD header whose `ncnt` is smaller than the header itself.
    NcntBelowHeader {
        /// The `ncnt` field.
        ncnt: u32,
        /// Size of the header for this format and pointer size.
        header_bytes: u32,
    },
    /// A BSD header whose `ncnt` is too large for gprof (it stores the sample size in an `int`).
    NcntTooLarge(u32),
    /// A version-0 basic-block record with a string that has no terminating NUL.
    UnterminatedString,
}

impl Error {
    pub(crate) const fn new(offset: u64, field: &'static str, kind: ErrorKind) -> Error {
        Error {
            offset,
            field,
            kind,
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ErrorKind::TooShort { needed, len } => write!(
                f,
                "file too short to be a gmon file ({len} bytes, a header needs {needed})"
            ),
            ErrorKind::Truncated { needed, available } => {
                write!(
                    f,
                    "truncated: needs {needed} bytes but only {available} remain"
                )
            }
            ErrorKind::UnsupportedVersion(v) => {
                write!(f, "unsupported version {v} (expected 0 or 1)")
            }
            ErrorKind::BadTag(t) => write!(f, "unknown record tag {t} (expected 0, 1 or 2)"),
            ErrorKind::LowAboveHigh { low_pc, high_pc } => {
                write!(f, "low_pc {low_pc:#x} is above high_pc {high_pc:#x}")
            }
            ErrorKind::CountExceedsFile {
                count,
                item_bytes,
                available,
            } => {
                let total = (*count as u128) * (*item_bytes as u128);
                write!(
                    f,
                    "{count} items of {item_bytes} bytes need {total} bytes but only {available} remain"
                )
            }
            ErrorKind::NcntBelowHeader { ncnt, header_bytes } => write!(
                f,
                "ncnt {ncnt} is smaller than the {header_bytes}-byte header it includes"
            ),
            ErrorKind::NcntTooLarge(n) => {
                write!(f, "ncnt {n} is larger than gprof accepts (2^31 - 1 bytes)")
            }
            ErrorKind::UnterminatedString => f.write_str("string without a terminating NUL"),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {} at byte {}", self.field, self.kind, self.offset)
    }
}

#[cfg(feature = "std")]
impl std::error::Error for Error {}

impl From<CursorError> for Error {
    fn from(e: CursorError) -> Error {
        let kind = match e.kind {
            CursorErrorKind::Truncated { needed, available } => {
                ErrorKind::Truncated { needed, available }
            }
            CursorErrorKind::CountExceeds {
                count,
                item_bytes,
                available,
            } => ErrorKind::CountExceedsFile {
                count,
                item_bytes,
                available,
            },
            CursorErrorKind::UnterminatedString => ErrorKind::UnterminatedString,
            // Readers never encode; a reader cannot produce this.
            CursorErrorKind::TooWide(_) => ErrorKind::Truncated {
                needed: 0,
                available: 0,
            },
        };
        Error::new(e.offset, e.field, kind)
    }
}
