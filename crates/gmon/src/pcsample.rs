//! The pcsample file: raw program-counter samples of every thread, with a snapshot of the
//! loaded objects, written by the runtime with `PROFIL_MODE=pcsample`.
//!
//! A histogram keeps one counter per address bucket and forgets *when* and *which thread*.
//! A pcsample file keeps every sample as it was taken (the "unadulterated values"): the
//! runtime address of the interrupted instruction, the thread, and a timestamp, so that the
//! analyzer can attribute samples to any loaded object and draw them over time.
//!
//! # Layout (version 1)
//!
//! Every multi-byte integer is in the byte order named by the header's byte 8, and every
//! address ("ptr") is as wide as its byte 9 says, so the file reads the same on any host.
//! The writer takes both from a [`Target`]: the runtime passes the host's.
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 8 | magic `PRFLPCS\0` ([`MAGIC`]) |
//! | 8 | 1 | byte order: 1 little, 2 big |
//! | 9 | 1 | pointer size: 4 or 8 |
//! | 10 | 2 | version: 1 |
//! | 12 | 4 | header size in bytes (64 in version 1; readers skip what they do not know) |
//! | 16 | 4 | sampling rate, samples per CPU-second |
//! | 20 | 4 | flags: bit 0 = the buffer filled up and sampling stopped early |
//! | 24 | 8 | number of object records |
//! | 32 | 8 | number of sample records |
//! | 40 | 8 | samples dropped because the buffer was full |
//! | 48 | 8 | wall-clock start, ns since the Unix epoch (0 if unknown) |
//! | 56 | 8 | reserved, 0 |
//!
//! Then the object records (the loaded objects when the file was written; the executable is
//! the first one), each:
//!
//! | size | field |
//! |---|---|
//! | 4 | record size in bytes, a multiple of 8, this field included |
//! | 4 | path length *p* |
//! | 4 | build-id length *b* (0: none) |
//! | 4 | reserved, 0 |
//! | ptr | load bias: runtime address = link-time address + bias |
//! | ptr | link-time start of the object's code (lowest executable segment address) |
//! | ptr | link-time end of its code (exclusive) |
//! | *p* | path bytes (no terminator) |
//! | *b* | build-id bytes |
//! | 0–7 | zero padding to the record size |
//!
//! Then the sample records, each `16 + ptr` bytes:
//!
//! | size | field |
//! |---|---|
//! | 8 | time: ns of the process's monotonic clock since sampling started |
//! | 4 | thread id (Linux TID) |
//! | 4 | reserved, 0 |
//! | ptr | runtime address of the sampled instruction |
//!
//! Nothing may follow the last sample. A reader finds which object a sample belongs to by
//! its runtime address: `bias + start <= pc < bias + end`.
//!
//! # Reading and writing
//!
//! [`PcWriter`] (`no_std`, no allocation) streams a file into a [`Sink`]: the header, then
//! each object, then each sample; it counts what it was given and [`PcWriter::finish`]
//! fails if that differs from the header. [`parse`] (feature `alloc`) checks the whole file
//! and returns borrowed views; every error names the field and its byte offset
//! ([`PcError`]), and nothing is allocated beyond one entry per object actually present.

use core::fmt;

use crate::cursor::{Cursor, CursorError};
use crate::write::Sink;
use crate::{Endian, PtrSize, Target};

/// The first 8 bytes of every pcsample file.
pub const MAGIC: [u8; 8] = *b"PRFLPCS\0";
/// The version this module writes and reads.
pub const VERSION: u16 = 1;
/// Size of the version-1 header.
pub const HEADER_BYTES: u32 = 64;
/// Header flag: the sample buffer filled up and sampling stopped.
pub const FLAG_BUFFER_FULL: u32 = 1;

/// Whether `data` starts like a pcsample file (for recognising inputs by content).
pub fn looks_like_pcsample(data: &[u8]) -> bool {
    data.starts_with(&MAGIC)
}

/// The header fields a writer chooses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// Samples per CPU-second.
    pub rate_hz: u32,
    /// [`FLAG_BUFFER_FULL`] or 0.
    pub flags: u32,
    /// Number of object records that follow.
    pub objects: u64,
    /// Number of sample records that follow.
    pub samples: u64,
    /// Samples not recorded because the buffer was full.
    pub dropped: u64,
    /// Wall-clock start in ns since the Unix epoch (0 if unknown).
    pub start_unix_ns: u64,
}

/// A loaded object (the executable or a shared library).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Object<'a> {
    /// Path as the dynamic loader saw it.
    pub path: &'a [u8],
    /// GNU build-id (may be empty).
    pub build_id: &'a [u8],
    /// Runtime address minus link-time address.
    pub bias: u64,
    /// Link-time start of the code.
    pub text_start: u64,
    /// Link-time end of the code (exclusive).
    pub text_end: u64,
}

impl Object<'_> {
    /// Whether the runtime address `pc` is in this object's code.
    pub fn contains_runtime(&self, pc: u64) -> bool {
        let link = pc.wrapping_sub(self.bias);
        self.text_start <= link && link < self.text_end
    }

    /// The link-time address of the runtime address `pc`.
    pub fn link_time(&self, pc: u64) -> u64 {
        pc.wrapping_sub(self.bias)
    }
}

/// One sample.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sample {
    /// ns since sampling started (monotonic clock).
    pub time_ns: u64,
    /// Thread id.
    pub tid: u32,
    /// Runtime address of the sampled instruction.
    pub pc: u64,
}

/// Size of one sample record for a pointer size.
pub const fn sample_bytes(ptr: PtrSize) -> usize {
    16 + ptr.bytes()
}

/// Size of an object record (padded to 8) for a path and build-id length.
pub const fn object_bytes(ptr: PtrSize, path_len: usize, build_id_len: usize) -> usize {
    let raw = 16 + 3 * ptr.bytes() + path_len + build_id_len;
    raw.div_ceil(8) * 8
}

/// Why writing failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PcWriteError<E> {
    /// The sink failed.
    Sink(E),
    /// An address does not fit the pointer size, or a length does not fit its field.
    TooWide(&'static str),
    /// Records were written out of order (objects after samples, or before the header).
    Order(&'static str),
    /// More or fewer objects or samples than the header announced.
    CountMismatch {
        /// `"objects"` or `"samples"`.
        what: &'static str,
        /// The header's count.
        announced: u64,
        /// What was written.
        written: u64,
    },
}

impl<E: fmt::Display> fmt::Display for PcWriteError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PcWriteError::Sink(e) => write!(f, "{e}"),
            PcWriteError::TooWide(what) => write!(f, "{what} does not fit its field"),
            PcWriteError::Order(what) => write!(f, "records out of order: {what}"),
            PcWriteError::CountMismatch {
                what,
                announced,
                written,
            } => write!(
                f,
                "header announced {announced} {what} but {written} were written"
            ),
        }
    }
}

/// Streams a pcsample file into a [`Sink`] without allocating.
#[derive(Debug)]
pub struct PcWriter<S> {
    sink: S,
    target: Target,
    header: Option<Header>,
    objects: u64,
    samples: u64,
}

impl<S: Sink> PcWriter<S> {
    /// A writer for `target`'s byte order and pointer size.
    pub fn new(sink: S, target: Target) -> Self {
        PcWriter {
            sink,
            target,
            header: None,
            objects: 0,
            samples: 0,
        }
    }

    fn put(&mut self, bytes: &[u8]) -> Result<(), PcWriteError<S::Error>> {
        self.sink.write_all(bytes).map_err(PcWriteError::Sink)
    }

    /// Build one record of at most `N` bytes with a write cursor, then write it.
    fn record<const N: usize>(
        &mut self,
        build: impl FnOnce(&mut Cursor<&mut [u8]>) -> Result<(), CursorError>,
    ) -> Result<(), PcWriteError<S::Error>> {
        let mut buf = [0u8; N];
        let mut c = Cursor::new(&mut buf[..], self.target);
        // Every record fits its buffer (a test writes each kind in every target), so the only
        // error is a value too wide for a 4-byte field.
        build(&mut c).map_err(|e| PcWriteError::TooWide(e.field))?;
        self.sink.write_all(c.written()).map_err(PcWriteError::Sink)
    }

    /// Write the header. Must come first, once.
    pub fn header(&mut self, h: &Header) -> Result<(), PcWriteError<S::Error>> {
        if self.header.is_some() {
            return Err(PcWriteError::Order("a second header"));
        }
        let order = match self.target.endian {
            Endian::Little => 1,
            Endian::Big => 2,
        };
        let ptr = self.target.ptr_size.bytes() as u8;
        self.record::<{ HEADER_BYTES as usize }>(|c| {
            c.put(&MAGIC, "magic")?;
            c.put_u8(order, "byte order")?;
            c.put_u8(ptr, "pointer size")?;
            c.put_u16(VERSION, "version")?;
            c.put_u32(HEADER_BYTES, "header size")?;
            c.put_u32(h.rate_hz, "rate")?;
            c.put_u32(h.flags, "flags")?;
            c.put_u64(h.objects, "object count")?;
            c.put_u64(h.samples, "sample count")?;
            c.put_u64(h.dropped, "dropped samples")?;
            c.put_u64(h.start_unix_ns, "start time")?;
            let pad = c.remaining();
            c.put(&[0u8; HEADER_BYTES as usize][..pad], "header padding")
        })?;
        self.header = Some(*h);
        Ok(())
    }

    /// Write one object record (after the header, before any sample).
    pub fn object(&mut self, o: &Object<'_>) -> Result<(), PcWriteError<S::Error>> {
        if self.header.is_none() {
            return Err(PcWriteError::Order("an object before the header"));
        }
        if self.samples > 0 {
            return Err(PcWriteError::Order("an object after a sample"));
        }
        let ptr = self.target.ptr_size;
        let size = object_bytes(ptr, o.path.len(), o.build_id.len());
        let size32 = u32::try_from(size).map_err(|_| PcWriteError::TooWide("object path"))?;
        self.record::<{ 16 + 3 * 8 }>(|c| {
            c.put_u32(size32, "object record size")?;
            c.put_u32(o.path.len() as u32, "object path length")?;
            c.put_u32(o.build_id.len() as u32, "build-id length")?;
            c.put_u32(0, "reserved")?;
            c.put_ptr(o.bias, "load bias")?;
            c.put_ptr(o.text_start, "text start")?;
            c.put_ptr(o.text_end, "text end")
        })?;
        self.put(o.path)?;
        self.put(o.build_id)?;
        let pad = size - (16 + 3 * ptr.bytes() + o.path.len() + o.build_id.len());
        self.put(&[0u8; 8][..pad])?;
        self.objects += 1;
        Ok(())
    }

    /// Write one sample record (after the header and all objects).
    pub fn sample(&mut self, s: &Sample) -> Result<(), PcWriteError<S::Error>> {
        if self.header.is_none() {
            return Err(PcWriteError::Order("a sample before the header"));
        }
        self.record::<24>(|c| {
            c.put_u64(s.time_ns, "sample time")?;
            c.put_u32(s.tid, "sample thread")?;
            c.put_u32(0, "sample reserved")?;
            c.put_ptr(s.pc, "sample address")
        })?;
        self.samples += 1;
        Ok(())
    }

    /// Check the counts against the header and return the sink.
    pub fn finish(self) -> Result<S, PcWriteError<S::Error>> {
        let h = self
            .header
            .ok_or(PcWriteError::Order("no header was written"))?;
        for (what, announced, written) in [
            ("objects", h.objects, self.objects),
            ("samples", h.samples, self.samples),
        ] {
            if announced != written {
                return Err(PcWriteError::CountMismatch {
                    what,
                    announced,
                    written,
                });
            }
        }
        Ok(self.sink)
    }
}

/// A malformed pcsample file: the field, its byte offset, and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PcError {
    /// Byte offset of the field.
    pub offset: u64,
    /// The field, e.g. `"object record: path length"`.
    pub field: &'static str,
    /// What is wrong, in words (with the numbers).
    pub what: PcProblem,
}

/// What is wrong with a field of a pcsample file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PcProblem {
    /// Not a pcsample file.
    BadMagic,
    /// The field runs past the end of the file.
    Truncated {
        /// Bytes the field needs.
        needed: u64,
        /// Bytes left.
        available: u64,
    },
    /// A value outside what the format allows.
    Invalid(u64),
    /// A version this reader does not know.
    UnsupportedVersion(u16),
    /// The announced records need more bytes than the file has.
    CountExceedsFile {
        /// The count.
        count: u64,
        /// Bytes per record (at least).
        item_bytes: u64,
        /// Bytes left.
        available: u64,
    },
    /// Bytes after the last sample.
    TrailingBytes(u64),
}

impl fmt::Display for PcError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "pcsample file: {}: ", self.field)?;
        match &self.what {
            PcProblem::BadMagic => write!(f, "not a pcsample file (no PRFLPCS magic)")?,
            PcProblem::Truncated { needed, available } => write!(
                f,
                "needs {needed} bytes but only {available} remain (truncated file?)"
            )?,
            PcProblem::Invalid(v) => write!(f, "invalid value {v}")?,
            PcProblem::UnsupportedVersion(v) => {
                write!(f, "version {v} is not supported (this reader knows {VERSION})")?
            }
            PcProblem::CountExceedsFile {
                count,
                item_bytes,
                available,
            } => write!(
                f,
                "{count} records of at least {item_bytes} bytes do not fit in the {available} bytes left"
            )?,
            PcProblem::TrailingBytes(n) => write!(f, "{n} unexpected bytes after the last sample")?,
        }
        write!(f, " at byte {}", self.offset)
    }
}

#[cfg(feature = "std")]
impl std::error::Error for PcError {}

/// A parsed pcsample file: borrowed views of its records.
#[cfg(feature = "alloc")]
#[derive(Clone, Debug)]
pub struct PcFile<'a> {
    /// Byte order and pointer size from the header.
    pub target: Target,
    /// The header fields.
    pub header: Header,
    /// The objects, in file order (the executable first).
    pub objects: alloc::vec::Vec<Object<'a>>,
    samples: &'a [u8],
}

#[cfg(feature = "alloc")]
impl<'a> PcFile<'a> {
    /// The samples, in file order.
    pub fn samples(&self) -> impl ExactSizeIterator<Item = Sample> + '_ {
        let n = sample_bytes(self.target.ptr_size);
        let t = self.target;
        self.samples.chunks_exact(n).map(move |r| Sample {
            time_ns: t.endian.read_u64(&r[..8]),
            tid: t.endian.read_u32(&r[8..12]),
            pc: t.read_ptr(&r[16..]),
        })
    }

    /// Index of the object whose code holds the runtime address `pc`.
    pub fn object_of(&self, pc: u64) -> Option<usize> {
        self.objects.iter().position(|o| o.contains_runtime(pc))
    }
}

#[cfg(feature = "alloc")]
impl From<CursorError> for PcError {
    fn from(e: CursorError) -> PcError {
        use crate::cursor::CursorErrorKind;
        let what = match e.kind {
            CursorErrorKind::Truncated { needed, available } => {
                PcProblem::Truncated { needed, available }
            }
            CursorErrorKind::CountExceeds {
                count,
                item_bytes,
                available,
            } => PcProblem::CountExceedsFile {
                count,
                item_bytes,
                available,
            },
            CursorErrorKind::UnterminatedString | CursorErrorKind::TooWide(_) => {
                PcProblem::Invalid(0)
            }
        };
        PcError {
            offset: e.offset,
            field: e.field,
            what,
        }
    }
}

/// Parse and check a whole pcsample file.
#[cfg(feature = "alloc")]
pub fn parse(data: &[u8]) -> Result<PcFile<'_>, PcError> {
    let err = |offset: usize, field: &'static str, what: PcProblem| PcError {
        offset: offset as u64,
        field,
        what,
    };
    // The byte order and pointer size are fields of the header: read them byte by byte, then
    // decode the rest with a cursor in the file's own target.
    let mut c = Cursor::new(data, Target::HOST);
    let magic = c.take(8, "header: magic")?;
    if magic != MAGIC {
        return Err(err(0, "header: magic", PcProblem::BadMagic));
    }
    let bo = c.u8("header: byte order")?;
    let endian = match bo {
        1 => Endian::Little,
        2 => Endian::Big,
        v => {
            return Err(err(
                8,
                "header: byte order",
                PcProblem::Invalid(u64::from(v)),
            ))
        }
    };
    let ps = c.u8("header: pointer size")?;
    let ptr = PtrSize::from_bytes(usize::from(ps))
        .ok_or_else(|| err(9, "header: pointer size", PcProblem::Invalid(u64::from(ps))))?;
    let pos = c.pos();
    let mut c = Cursor::new(data, Target::new(ptr, endian));
    c.seek(pos);
    let version = c.u16("header: version")?;
    if version != VERSION {
        return Err(err(
            10,
            "header: version",
            PcProblem::UnsupportedVersion(version),
        ));
    }
    let header_bytes = c.u32("header: header size")?;
    if header_bytes < HEADER_BYTES || header_bytes as usize > data.len() {
        return Err(err(
            12,
            "header: header size",
            PcProblem::Invalid(u64::from(header_bytes)),
        ));
    }
    let rate_hz = c.u32("header: rate")?;
    let flags = c.u32("header: flags")?;
    let nobjects = c.u64("header: object count")?;
    let nsamples = c.u64("header: sample count")?;
    let dropped = c.u64("header: dropped samples")?;
    let start_unix_ns = c.u64("header: start time")?;
    if rate_hz == 0 {
        return Err(err(16, "header: rate", PcProblem::Invalid(0)));
    }
    c.seek(header_bytes as usize);
    let p = ptr.bytes();
    let min_obj = object_bytes(ptr, 0, 0) as u64;
    let left = c.remaining() as u64;
    if nobjects.checked_mul(min_obj).is_none_or(|b| b > left) {
        return Err(err(
            24,
            "header: object count",
            PcProblem::CountExceedsFile {
                count: nobjects,
                item_bytes: min_obj,
                available: left,
            },
        ));
    }
    let mut objects = alloc::vec::Vec::with_capacity(nobjects as usize);
    for _ in 0..nobjects {
        let start = c.pos();
        let size = c.u32("object record: record size")? as usize;
        let path_len = c.u32("object record: path length")? as usize;
        let bid_len = c.u32("object record: build-id length")? as usize;
        c.take(4, "object record: reserved")?;
        let need = 16 + 3 * p + path_len + bid_len;
        if size % 8 != 0 || size < need || size > data.len() - start {
            return Err(err(
                start,
                "object record: record size",
                PcProblem::Invalid(size as u64),
            ));
        }
        let bias = c.ptr("object record: load bias")?;
        let text_start = c.ptr("object record: text start")?;
        let end_at = c.pos();
        let text_end = c.ptr("object record: text end")?;
        if text_end < text_start {
            return Err(err(
                end_at,
                "object record: text end",
                PcProblem::Invalid(text_end),
            ));
        }
        let path = c.take(path_len, "object record: path")?;
        let build_id = c.take(bid_len, "object record: build-id")?;
        c.seek(start + size);
        objects.push(Object {
            path,
            build_id,
            bias,
            text_start,
            text_end,
        });
    }
    let n = sample_bytes(ptr) as u64;
    let left = c.remaining() as u64;
    match nsamples.checked_mul(n) {
        Some(b) if b == left => {}
        Some(b) if b < left => {
            return Err(err(
                c.pos() + b as usize,
                "sample records",
                PcProblem::TrailingBytes(left - b),
            ))
        }
        _ => {
            return Err(err(
                32,
                "header: sample count",
                PcProblem::CountExceedsFile {
                    count: nsamples,
                    item_bytes: n,
                    available: left,
                },
            ))
        }
    }
    Ok(PcFile {
        target: Target::new(ptr, endian),
        header: Header {
            rate_hz,
            flags,
            objects: nobjects,
            samples: nsamples,
            dropped,
            start_unix_ns,
        },
        objects,
        samples: &data[c.pos()..],
    })
}

#[cfg(all(test, feature = "alloc"))]
mod tests {
    use super::*;
    use alloc::vec::Vec;

    fn sample_file(target: Target) -> Vec<u8> {
        let mut w = PcWriter::new(Vec::new(), target);
        w.header(&Header {
            rate_hz: 997,
            flags: FLAG_BUFFER_FULL,
            objects: 2,
            samples: 3,
            dropped: 42,
            start_unix_ns: 1_700_000_000_000_000_000,
        })
        .unwrap();
        w.object(&Object {
            path: b"/usr/bin/prog",
            build_id: &[0xab, 0xcd, 0xef],
            bias: 0x5555_0000,
            text_start: 0x1000,
            text_end: 0x2000,
        })
        .unwrap();
        w.object(&Object {
            path: b"/lib/x86_64-linux-gnu/libm.so.6",
            build_id: b"",
            bias: 0x7f00_0000,
            text_start: 0x4000,
            text_end: 0x9000,
        })
        .unwrap();
        for (t, tid, pc) in [(10, 7, 0x5555_1234), (20, 8, 0x7f00_5000), (30, 7, 0x10)] {
            w.sample(&Sample {
                time_ns: t,
                tid,
                pc,
            })
            .unwrap();
        }
        w.finish().unwrap()
    }

    #[test]
    fn round_trip_in_every_target() {
        for ptr in [PtrSize::Four, PtrSize::Eight] {
            for endian in [Endian::Little, Endian::Big] {
                let t = Target::new(ptr, endian);
                let data = sample_file(t);
                assert!(looks_like_pcsample(&data));
                let f = parse(&data).unwrap();
                assert_eq!(f.target, t);
                assert_eq!(f.header.rate_hz, 997);
                assert_eq!(f.header.dropped, 42);
                assert_eq!(f.header.flags, FLAG_BUFFER_FULL);
                assert_eq!(f.objects.len(), 2);
                assert_eq!(f.objects[0].path, b"/usr/bin/prog");
                assert_eq!(f.objects[0].build_id, &[0xab, 0xcd, 0xef]);
                assert_eq!(f.objects[1].text_end, 0x9000);
                let s: Vec<Sample> = f.samples().collect();
                assert_eq!(s.len(), 3);
                assert_eq!(s[1].pc, 0x7f00_5000);
                assert_eq!(s[1].tid, 8);
                assert_eq!(s[2].time_ns, 30);
                assert_eq!(f.object_of(s[0].pc), Some(0));
                assert_eq!(f.objects[0].link_time(s[0].pc), 0x1234);
                assert_eq!(f.object_of(s[1].pc), Some(1));
                assert_eq!(f.object_of(s[2].pc), None);
            }
        }
    }

    #[test]
    fn writer_checks_counts_order_and_widths() {
        let t = Target::new(PtrSize::Four, Endian::Little);
        let mut w = PcWriter::new(Vec::new(), t);
        let s = Sample {
            time_ns: 0,
            tid: 1,
            pc: 1,
        };
        assert!(matches!(w.sample(&s), Err(PcWriteError::Order(_))));
        let h = Header {
            rate_hz: 100,
            flags: 0,
            objects: 0,
            samples: 2,
            dropped: 0,
            start_unix_ns: 0,
        };
        w.header(&h).unwrap();
        let wide = Sample { pc: 1 << 40, ..s };
        assert!(matches!(w.sample(&wide), Err(PcWriteError::TooWide(_))));
        w.sample(&s).unwrap();
        assert!(matches!(
            w.finish(),
            Err(PcWriteError::CountMismatch {
                what: "samples",
                announced: 2,
                written: 1
            })
        ));
        // A no-allocation sink works too.
        let mut buf = [0u8; 256];
        let mut w = PcWriter::new(crate::write::SliceSink::new(&mut buf), t);
        w.header(&Header { samples: 1, ..h }).unwrap();
        w.sample(&s).unwrap();
        let sink = w.finish().unwrap();
        assert_eq!(sink.len(), 64 + 20);
    }

    #[test]
    fn every_truncation_is_an_error_with_an_offset() {
        let data = sample_file(Target::new(PtrSize::Eight, Endian::Little));
        for len in 0..data.len() {
            let e = parse(&data[..len]).unwrap_err();
            assert!(e.offset <= len as u64, "{len}: {e}");
        }
        let mut extra = data.clone();
        extra.push(0);
        assert!(matches!(
            parse(&extra).unwrap_err().what,
            PcProblem::TrailingBytes(1)
        ));
    }

    #[test]
    fn corrupt_fields_are_named() {
        let data = sample_file(Target::new(PtrSize::Eight, Endian::Little));
        let corrupt = |at: usize, bytes: &[u8]| {
            let mut d = data.clone();
            d[at..at + bytes.len()].copy_from_slice(bytes);
            parse(&d).unwrap_err()
        };
        assert_eq!(corrupt(0, b"X").what, PcProblem::BadMagic);
        assert_eq!(corrupt(8, &[3]).field, "header: byte order");
        assert_eq!(corrupt(9, &[5]).field, "header: pointer size");
        assert_eq!(corrupt(10, &[2, 0]).what, PcProblem::UnsupportedVersion(2));
        assert_eq!(corrupt(16, &[0, 0, 0, 0]).field, "header: rate");
        let e = corrupt(24, &u64::MAX.to_le_bytes());
        assert_eq!((e.field, e.offset), ("header: object count", 24));
        let e = corrupt(32, &(1u64 << 60).to_le_bytes());
        assert_eq!(e.field, "header: sample count");
        // First object's record size not a multiple of 8, then too small.
        assert_eq!(
            corrupt(64, &[41, 0, 0, 0]).field,
            "object record: record size"
        );
        assert_eq!(corrupt(64, &[8, 0, 0, 0]).offset, 64);
        // Path length beyond the record.
        let e = corrupt(68, &[0xff, 0xff, 0, 0]);
        assert_eq!(e.field, "object record: record size");
        // text end below text start.
        let e = corrupt(64 + 16 + 16, &[0, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(e.field, "object record: text end");
        let msg = alloc::format!("{e}");
        assert!(msg.contains("at byte 96"), "{msg}");
    }
}
