//! Writing gmon files without allocating: every format, any pointer size and byte order.
//!
//! The runtime calls this at exit, possibly from a context where the heap is not usable, so
//! nothing here allocates: bytes go straight to a caller-provided [`Sink`], histogram bins are
//! pulled one by one from an iterator (so the runtime can stream its counters), and a small
//! stack buffer batches them.
//!
//! A file is a sequence of calls on a [`Writer`]:
//!
//! * GNU tagged: [`Writer::gnu_header`], then any number of [`Writer::gnu_histogram`],
//!   [`Writer::gnu_arc`] (and, rarely, [`Writer::gnu_basic_blocks`]) in any order;
//! * 4.4BSD: [`Writer::bsd44_header`], [`Writer::bsd_bins`], then [`Writer::bsd_arc`]s;
//! * old BSD: [`Writer::oldbsd_header`], [`Writer::bsd_bins`], then [`Writer::bsd_arc`]s.
//!
//! The writer checks what it can without state: addresses and counts must fit the pointer
//! size, the number of bins supplied must equal the number announced in the header.

use core::fmt;

use crate::cursor::{Cursor, CursorError, CursorErrorKind};
use crate::layout;
use crate::{Dimension, PtrSize, Target};

/// Where the bytes go. Implement it for a file descriptor, a buffer, a socket...
pub trait Sink {
    /// The sink's own error.
    type Error;
    /// Write all of `bytes`, or fail.
    fn write_all(&mut self, bytes: &[u8]) -> Result<(), Self::Error>;
}

impl<S: Sink + ?Sized> Sink for &mut S {
    type Error = S::Error;
    fn write_all(&mut self, bytes: &[u8]) -> Result<(), Self::Error> {
        (**self).write_all(bytes)
    }
}

/// A sink into a caller-provided byte buffer (no allocation).
#[derive(Debug)]
pub struct SliceSink<'a> {
    buf: &'a mut [u8],
    len: usize,
}

/// [`SliceSink`] ran out of room.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BufferFull;

impl fmt::Display for BufferFull {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("output buffer full")
    }
}

impl<'a> SliceSink<'a> {
    /// Write into `buf` from its start.
    pub fn new(buf: &'a mut [u8]) -> Self {
        SliceSink { buf, len: 0 }
    }
    /// Bytes written so far.
    pub fn len(&self) -> usize {
        self.len
    }
    /// Whether nothing was written yet.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// The bytes written so far.
    pub fn written(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}

impl Sink for SliceSink<'_> {
    type Error = BufferFull;
    fn write_all(&mut self, bytes: &[u8]) -> Result<(), BufferFull> {
        let end = self.len.checked_add(bytes.len()).ok_or(BufferFull)?;
        let dst = self.buf.get_mut(self.len..end).ok_or(BufferFull)?;
        dst.copy_from_slice(bytes);
        self.len = end;
        Ok(())
    }
}

/// A sink that only counts bytes (to size a buffer before writing).
#[derive(Clone, Copy, Debug, Default)]
pub struct CountingSink {
    /// Bytes "written" so far.
    pub bytes: u64,
}

impl Sink for CountingSink {
    type Error = core::convert::Infallible;
    fn write_all(&mut self, bytes: &[u8]) -> Result<(), Self::Error> {
        self.bytes += bytes.len() as u64;
        Ok(())
    }
}

#[cfg(feature = "alloc")]
impl Sink for alloc::vec::Vec<u8> {
    type Error = core::convert::Infallible;
    fn write_all(&mut self, bytes: &[u8]) -> Result<(), Self::Error> {
        self.extend_from_slice(bytes);
        Ok(())
    }
}

/// Adapter from any [`std::io::Write`] to [`Sink`].
#[cfg(feature = "std")]
#[derive(Debug)]
pub struct IoSink<W>(pub W);

#[cfg(feature = "std")]
impl<W: std::io::Write> Sink for IoSink<W> {
    type Error = std::io::Error;
    fn write_all(&mut self, bytes: &[u8]) -> Result<(), Self::Error> {
        self.0.write_all(bytes)
    }
}

/// Why a write failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WriteError<E> {
    /// The sink failed.
    Sink(E),
    /// A value does not fit its field (an address above 4 GiB with 4-byte pointers, a
    /// 4.4BSD arc count above 2^32 with 4-byte pointers, a BSD sample size above 2^31).
    TooWide {
        /// The field.
        field: &'static str,
        /// The value.
        value: u64,
    },
    /// The bins iterator yielded a different number of bins than the header announced.
    BinCount {
        /// Bins announced.
        expected: u64,
        /// Bins supplied (counting stops at one past `expected`).
        actual: u64,
    },
}

impl<E: fmt::Display> fmt::Display for WriteError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WriteError::Sink(e) => write!(f, "{e}"),
            WriteError::TooWide { field, value } => {
                write!(f, "{field} value {value:#x} does not fit its field")
            }
            WriteError::BinCount { expected, actual } => {
                write!(
                    f,
                    "header announced {expected} bins but {actual} were supplied"
                )
            }
        }
    }
}

#[cfg(feature = "std")]
impl<E: fmt::Debug + fmt::Display> std::error::Error for WriteError<E> {}

/// Result of a write.
pub type WriteResult<E> = Result<(), WriteError<E>>;

/// The header fields of a GNU histogram record (everything but the bins).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HistHeader {
    /// Address of the first bin (link-time address).
    pub low_pc: u64,
    /// End of the covered range, exclusive (link-time address).
    pub high_pc: u64,
    /// Number of 16-bit bins that follow.
    pub hist_size: u32,
    /// Samples per second (`prof_rate`).
    pub prof_rate: u32,
    /// Unit name and abbreviation (normally "seconds" / 's').
    pub dimension: Dimension,
}

/// Streams one gmon file into a [`Sink`], in the byte order and pointer size of its
/// [`Target`].
#[derive(Debug)]
pub struct Writer<S> {
    sink: S,
    target: Target,
}

const BATCH: usize = 256;

/// The largest fixed-size record: a GNU histogram header with 8-byte pointers and its tag.
const RECORD_MAX: usize = 1 + 2 * 8 + 24;
/// A GNU arc record (tag, two addresses, a 4-byte count) or a BSD arc (three pointer-sized
/// fields), with 8-byte pointers.
const ARC_MAX: usize = 3 * 8;
/// The common start of BSD headers: lpc, hpc, ncnt.
const BSD_COMMON_MAX: usize = 2 * 8 + 4;

/// A value too wide for its field keeps its name; running out of the record buffer cannot
/// happen (every record fits its buffer, which a test checks in every target) and is reported as the record
/// being too wide if it ever did.
fn encode_error<E>(e: CursorError) -> WriteError<E> {
    match e.kind {
        CursorErrorKind::TooWide(value) => WriteError::TooWide {
            field: e.field,
            value,
        },
        _ => WriteError::TooWide {
            field: e.field,
            value: e.offset,
        },
    }
}

impl<S: Sink> Writer<S> {
    /// A writer for `target` into `sink`.
    pub fn new(sink: S, target: Target) -> Self {
        Writer { sink, target }
    }

    /// The target this writer encodes for.
    pub fn target(&self) -> Target {
        self.target
    }

    /// Give back the sink.
    pub fn into_inner(self) -> S {
        self.sink
    }

    fn raw(&mut self, bytes: &[u8]) -> WriteResult<S::Error> {
        self.sink.write_all(bytes).map_err(WriteError::Sink)
    }

    /// Build one record of at most `N` bytes with a write cursor, then write it.
    #[inline]
    fn record<const N: usize>(
        &mut self,
        build: impl FnOnce(&mut Cursor<&mut [u8]>) -> Result<(), CursorError>,
    ) -> WriteResult<S::Error> {
        let mut buf = [0u8; N];
        let mut c = Cursor::new(&mut buf[..], self.target);
        build(&mut c).map_err(encode_error)?;
        self.sink.write_all(c.written()).map_err(WriteError::Sink)
    }

    /// GNU file header: magic `gmon`, version 1, 12 zero bytes.
    pub fn gnu_header(&mut self) -> WriteResult<S::Error> {
        self.gnu_header_version(layout::GNU_VERSION)
    }

    /// GNU file header with an explicit version (0 changes only the basic-block layout).
    pub fn gnu_header_version(&mut self, version: u32) -> WriteResult<S::Error> {
        self.record::<{ layout::GNU_HEADER_BYTES }>(|c| {
            c.put(layout::GNU_MAGIC, "magic")?;
            c.put_u32(version, "version")?;
            c.put(&[0u8; 12], "spare")
        })
    }

    /// One GNU histogram record (tag 0): the header, then exactly `header.hist_size` bins
    /// pulled from `bins`.
    ///
    /// The header is checked before anything is written; a wrong number of bins is reported
    /// after the fact (the output is then unusable, which is why the runtime writes to a
    /// temporary file and renames it only on success).
    pub fn gnu_histogram<I>(&mut self, header: &HistHeader, bins: I) -> WriteResult<S::Error>
    where
        I: IntoIterator<Item = u16>,
    {
        self.record::<RECORD_MAX>(|c| {
            c.put_u8(layout::TAG_TIME_HIST, "tag")?;
            c.put_ptr(header.low_pc, "low_pc")?;
            c.put_ptr(header.high_pc, "high_pc")?;
            c.put_u32(header.hist_size, "hist_size")?;
            c.put_u32(header.prof_rate, "prof_rate")?;
            c.put(&header.dimension.name, "dimen")?;
            c.put_u8(header.dimension.abbrev, "dimen_abbrev")
        })?;
        self.bins(u64::from(header.hist_size), bins)
    }

    /// Stream exactly `expected` bins in batches.
    fn bins<I>(&mut self, expected: u64, bins: I) -> WriteResult<S::Error>
    where
        I: IntoIterator<Item = u16>,
    {
        let mut buf = [0u8; BATCH];
        let mut written = 0u64;
        let mut it = bins.into_iter();
        let target = self.target;
        loop {
            let mut c = Cursor::new(&mut buf[..], target);
            let n = c.put_u16s(&mut it, expected - written);
            written += n;
            if n > 0 {
                self.sink.write_all(c.written()).map_err(WriteError::Sink)?;
            }
            if c.remaining() >= 2 || written == expected {
                // The iterator ended (the batch is not full) or every bin is written.
                break;
            }
        }
        if written < expected {
            return Err(WriteError::BinCount {
                expected,
                actual: written,
            });
        }
        if it.next().is_some() {
            return Err(WriteError::BinCount {
                expected,
                actual: expected + 1,
            });
        }
        Ok(())
    }

    /// One GNU call-graph arc record (tag 1). The count is always 32 bits in this format.
    pub fn gnu_arc(&mut self, from_pc: u64, self_pc: u64, count: u32) -> WriteResult<S::Error> {
        self.record::<ARC_MAX>(|c| {
            c.put_u8(layout::TAG_CG_ARC, "tag")?;
            c.put_ptr(from_pc, "from_pc")?;
            c.put_ptr(self_pc, "self_pc")?;
            c.put_u32(count, "arc count")
        })
    }

    /// One version-1 GNU basic-block record (tag 2): `nblocks` (address, count) pairs.
    /// glibc never writes these in practice; this exists so that records read from a file
    /// can be written back.
    pub fn gnu_basic_blocks<I>(&mut self, nblocks: u32, blocks: I) -> WriteResult<S::Error>
    where
        I: IntoIterator<Item = (u64, u64)>,
    {
        self.record::<5>(|c| {
            c.put_u8(layout::TAG_BB_COUNT, "tag")?;
            c.put_u32(nblocks, "nblocks")
        })?;
        let mut n = 0u64;
        for (addr, count) in blocks.into_iter().take(nblocks as usize) {
            self.record::<16>(|c| {
                c.put_ptr(addr, "basic-block address")?;
                c.put_ptr(count, "basic-block count")
            })?;
            n += 1;
        }
        if n != u64::from(nblocks) {
            return Err(WriteError::BinCount {
                expected: u64::from(nblocks),
                actual: n,
            });
        }
        Ok(())
    }

    /// Write bytes that are already encoded for this writer's target (e.g. a whole file
    /// rendered into a buffer first).
    pub fn write_raw(&mut self, bytes: &[u8]) -> WriteResult<S::Error> {
        self.raw(bytes)
    }

    /// Write the raw bytes of a version-0 basic-block record body (after the tag), as read.
    pub fn gnu_basic_blocks_raw(&mut self, body: &[u8]) -> WriteResult<S::Error> {
        self.raw(&[layout::TAG_BB_COUNT])?;
        self.raw(body)
    }

    fn bsd_common(
        &mut self,
        low_pc: u64,
        high_pc: u64,
        nbins: u32,
        header: usize,
    ) -> WriteResult<S::Error> {
        let ncnt = u64::from(nbins) * 2 + header as u64;
        if ncnt - header as u64 > i32::MAX as u64 {
            return Err(WriteError::TooWide {
                field: "ncnt",
                value: ncnt,
            });
        }
        self.record::<BSD_COMMON_MAX>(|c| {
            c.put_ptr(low_pc, "lpc")?;
            c.put_ptr(high_pc, "hpc")?;
            c.put_u32(ncnt as u32, "ncnt")
        })
    }

    /// 4.4BSD header (`struct gmonhdr`): lpc, hpc, ncnt (= bins bytes + header), version
    /// `0x00051879`, profrate, 12 zero bytes. Follow with [`Writer::bsd_bins`].
    pub fn bsd44_header(
        &mut self,
        low_pc: u64,
        high_pc: u64,
        nbins: u32,
        prof_rate: u32,
    ) -> WriteResult<S::Error> {
        let header = layout::bsd44_header_bytes(self.target.ptr_size);
        self.bsd_common(low_pc, high_pc, nbins, header)?;
        self.record::<20>(|c| {
            c.put_u32(layout::BSD44_VERSION, "version")?;
            c.put_u32(prof_rate, "profrate")?;
            c.put(&[0u8; 12], "spare")
        })
    }

    /// Old BSD header: lpc, hpc, ncnt (packed: 20 bytes on 64-bit, 12 on 32-bit). Follow with
    /// [`Writer::bsd_bins`].
    pub fn oldbsd_header(
        &mut self,
        low_pc: u64,
        high_pc: u64,
        nbins: u32,
    ) -> WriteResult<S::Error> {
        let header = layout::oldbsd_header_bytes(self.target.ptr_size);
        self.bsd_common(low_pc, high_pc, nbins, header)
    }

    /// The bins of a BSD file: exactly `nbins` values from `bins`.
    pub fn bsd_bins<I>(&mut self, nbins: u32, bins: I) -> WriteResult<S::Error>
    where
        I: IntoIterator<Item = u16>,
    {
        self.bins(u64::from(nbins), bins)
    }

    /// One BSD raw arc: from_pc, self_pc and a pointer-sized count.
    pub fn bsd_arc(&mut self, from_pc: u64, self_pc: u64, count: u64) -> WriteResult<S::Error> {
        self.record::<ARC_MAX>(|c| {
            c.put_ptr(from_pc, "from_pc")?;
            c.put_ptr(self_pc, "self_pc")?;
            c.put_ptr(count, "arc count")
        })
    }
}

/// Size in bytes of a GNU histogram record (tag included) with `nbins` bins.
pub const fn gnu_histogram_bytes(ptr: PtrSize, nbins: u32) -> u64 {
    1 + layout::gnu_hist_header_bytes(ptr) as u64 + 2 * nbins as u64
}

/// Size in bytes of a GNU arc record (tag included).
pub const fn gnu_arc_bytes(ptr: PtrSize) -> u64 {
    1 + layout::gnu_arc_body_bytes(ptr) as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Endian;

    #[test]
    fn every_record_fits_the_record_buffer_in_every_target() {
        for ptr in [PtrSize::Four, PtrSize::Eight] {
            for endian in [Endian::Little, Endian::Big] {
                let t = Target::new(ptr, endian);
                let max = ptr.max_address();
                let mut w = Writer::new(CountingSink::default(), t);
                w.gnu_header().unwrap();
                let h = HistHeader {
                    low_pc: max,
                    high_pc: max,
                    hist_size: 0,
                    prof_rate: u32::MAX,
                    dimension: Dimension::SECONDS,
                };
                w.gnu_histogram(&h, core::iter::empty()).unwrap();
                w.gnu_arc(max, max, u32::MAX).unwrap();
                w.gnu_basic_blocks(1, [(max, max)]).unwrap();
                w.bsd44_header(max, max, 0, u32::MAX).unwrap();
                w.oldbsd_header(max, max, 0).unwrap();
                w.bsd_arc(max, max, max).unwrap();
                let p = ptr.bytes() as u64;
                let expect = 20
                    + gnu_histogram_bytes(ptr, 0)
                    + gnu_arc_bytes(ptr)
                    + (5 + 2 * p)
                    + layout::bsd44_header_bytes(ptr) as u64
                    + layout::oldbsd_header_bytes(ptr) as u64
                    + 3 * p;
                assert_eq!(w.into_inner().bytes, expect, "{t}");
            }
        }
    }
}
