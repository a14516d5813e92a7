//! Reading gmon files: format detection exactly as gprof 2.40 does it, then borrowed views of
//! every record.
//!
//! Two layers:
//!
//! * [`records`] (no allocation, `no_std`): detects the format, checks the header and returns
//!   a [`FileHeader`] plus a [`Records`] iterator that decodes one record at a time and stops
//!   at the first error.
//! * [`parse`] (feature `alloc`): collects the iterator into a [`GmonFile`].
//!
//! Nothing is copied: bins are a [`Bins`] view into the input. Every length field is checked
//! against the bytes that remain before it is used, so a header that claims 2^32 bins in a
//! 100-byte file is an error, never an allocation or a panic.
//!
//! Detection (gprof's `gmon_out_read` with the default `-O auto`): a file shorter than 20
//! bytes is "too short"; if it starts with `gmon` it is the GNU tagged format (version 0 or 1);
//! otherwise the word after `lpc, hpc, ncnt` decides between 4.4BSD (`0x00051879`) and old
//! BSD. BSD files are one histogram followed by raw arcs up to the end of the file; a tail
//! shorter than one arc is ignored, as gprof ignores it (see [`GmonFile::trailing_bytes`]).
//!
//! Where this reader is stricter than gprof, on purpose: a GNU histogram with
//! `low_pc > high_pc` is an error (gprof computes a wrapped-around scale and prints
//! nonsense); a 4.4BSD header cut inside its spare words is an error (gprof seeks past the end
//! and finds no bins); a version-0 basic-block string without its NUL is an error (gprof
//! reads to the end of the file).

use core::iter::FusedIterator;

use crate::cursor::Cursor;
use crate::error::{Error, ErrorKind};
use crate::layout;
use crate::{Dimension, Endian, Target};

/// Which of the three formats a file is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    /// GNU tagged format (magic `gmon`), with its version word (0 or 1).
    Gnu {
        /// 0 or 1; only the layout of basic-block records differs.
        version: u32,
    },
    /// 4.4BSD `struct gmonhdr` with version `0x00051879` and a profiling rate.
    Bsd44,
    /// Pre-4.4 BSD: `lpc, hpc, ncnt` only, no rate.
    OldBsd,
}

impl Format {
    /// A short human name: `"GNU (version 1)"`, `"4.4BSD"`, `"old BSD"`.
    pub fn name(self) -> &'static str {
        match self {
            Format::Gnu { version: 0 } => "GNU gmon (version 0)",
            Format::Gnu { .. } => "GNU gmon (version 1)",
            Format::Bsd44 => "4.4BSD",
            Format::OldBsd => "old BSD",
        }
    }

    /// Whether this is the GNU tagged format.
    pub fn is_gnu(self) -> bool {
        matches!(self, Format::Gnu { .. })
    }
}

/// A view of 16-bit histogram bins inside the input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bins<'a> {
    bytes: &'a [u8],
    endian: Endian,
}

impl<'a> Bins<'a> {
    /// A view over `bytes` (an odd last byte is ignored).
    pub fn new(bytes: &'a [u8], endian: Endian) -> Self {
        let even = bytes.len() & !1;
        Bins {
            bytes: &bytes[..even],
            endian,
        }
    }

    /// Number of bins.
    pub fn len(&self) -> usize {
        self.bytes.len() / 2
    }

    /// Whether there are no bins.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// Bin `i`, if it exists.
    pub fn get(&self, i: usize) -> Option<u16> {
        let start = i.checked_mul(2)?;
        let b = self.bytes.get(start..start + 2)?;
        Some(self.endian.read_u16(b))
    }

    /// All bins in order.
    pub fn iter(&self) -> BinsIter<'a> {
        BinsIter {
            chunks: self.bytes.chunks_exact(2),
            endian: self.endian,
        }
    }

    /// Sum of all bins (the number of samples in this record).
    pub fn total(&self) -> u64 {
        self.iter().map(u64::from).sum()
    }

    /// The raw bytes of the bins, in the file's byte order.
    pub fn as_bytes(&self) -> &'a [u8] {
        self.bytes
    }
}

impl<'a> IntoIterator for Bins<'a> {
    type Item = u16;
    type IntoIter = BinsIter<'a>;
    fn into_iter(self) -> BinsIter<'a> {
        self.iter()
    }
}

/// Iterator over [`Bins`].
#[derive(Clone, Debug)]
pub struct BinsIter<'a> {
    chunks: core::slice::ChunksExact<'a, u8>,
    endian: Endian,
}

impl Iterator for BinsIter<'_> {
    type Item = u16;
    fn next(&mut self) -> Option<u16> {
        let c = self.chunks.next()?;
        Some(self.endian.read_u16(c))
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.chunks.size_hint()
    }
}

impl ExactSizeIterator for BinsIter<'_> {}
impl FusedIterator for BinsIter<'_> {}

/// A histogram record: a PC range divided into `hist_size` 16-bit bins.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Histogram<'a> {
    /// Byte offset of the record (its tag byte for GNU; 0, the file header, for BSD).
    pub offset: u64,
    /// Address of the start of bin 0 (link-time address).
    pub low_pc: u64,
    /// End of the range, exclusive (link-time address).
    pub high_pc: u64,
    /// Number of bins.
    pub hist_size: u32,
    /// Samples per second: the GNU `prof_rate` or 4.4BSD `profrate`; `None` for old BSD (gprof
    /// then uses the system clock tick rate, 100 on Linux).
    pub prof_rate: Option<u32>,
    /// Unit of the samples (always "seconds"/'s' for BSD formats).
    pub dimension: Dimension,
    /// Byte offset of the first bin.
    pub bins_offset: u64,
    /// The bins.
    pub bins: Bins<'a>,
}

impl Histogram<'_> {
    /// Average number of text bytes per bin: `(high_pc - low_pc) / hist_size` (0 without bins).
    pub fn bytes_per_bin(&self) -> f64 {
        if self.hist_size == 0 {
            0.0
        } else {
            (self.high_pc - self.low_pc) as f64 / f64::from(self.hist_size)
        }
    }

    /// gprof's `hist_scale`: `((high_pc - low_pc) / 2) / hist_size` (integer division by 2,
    /// then a floating division). Records are compatible when these differ by at most 1e-6.
    pub fn gprof_scale(&self) -> f64 {
        ((self.high_pc - self.low_pc) / 2) as f64 / f64::from(self.hist_size)
    }
}

/// A call-graph arc: `count` calls from the call site `from_pc` into the function containing
/// `self_pc`. GNU files store a 32-bit count, BSD files a pointer-sized one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Arc {
    /// Byte offset of the record (its tag byte for GNU).
    pub offset: u64,
    /// Return address in the caller (link-time address; glibc rounds it to its hash bucket).
    pub from_pc: u64,
    /// Address inside the callee (link-time address; just after its `mcount` call).
    pub self_pc: u64,
    /// Number of calls.
    pub count: u64,
}

/// Layout of a basic-block record's body (it depends on the GNU file version).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BbLayout {
    /// Version 0: a file name, then per block `ncalls`, `addr` (8 bytes each, host layout of a
    /// 64-bit gprof), two strings and a 4-byte line number. Kept as raw bytes.
    V0,
    /// Version 1: `nblocks` pairs of (address, count), P bytes each.
    V1,
}

/// A basic-block count record (GNU tag 2). Kept so that it can be shown and written back;
/// gprof uses it only with `-l`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BasicBlocks<'a> {
    /// Byte offset of the record (its tag byte).
    pub offset: u64,
    /// Number of blocks.
    pub nblocks: u32,
    /// How `body` is laid out.
    pub layout: BbLayout,
    /// The record's bytes after the `nblocks` field.
    pub body: &'a [u8],
    /// Decoding parameters for [`BasicBlocks::blocks`].
    pub target: Target,
}

impl<'a> BasicBlocks<'a> {
    /// The (address, count) pairs of a version-1 record; empty for version 0.
    pub fn blocks(&self) -> BlocksIter<'a> {
        let p = self.target.ptr_size.bytes();
        let body = match self.layout {
            BbLayout::V1 => self.body,
            BbLayout::V0 => &[],
        };
        BlocksIter {
            chunks: body.chunks_exact(2 * p),
            target: self.target,
        }
    }
}

/// Iterator over the blocks of a version-1 [`BasicBlocks`] record.
#[derive(Clone, Debug)]
pub struct BlocksIter<'a> {
    chunks: core::slice::ChunksExact<'a, u8>,
    target: Target,
}

impl Iterator for BlocksIter<'_> {
    type Item = (u64, u64);
    fn next(&mut self) -> Option<(u64, u64)> {
        let c = self.chunks.next()?;
        let p = self.target.ptr_size.bytes();
        Some((self.target.read_ptr(&c[..p]), self.target.read_ptr(&c[p..])))
    }
}

/// One decoded record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Record<'a> {
    /// GNU tag 0, or the histogram part of a BSD file.
    Histogram(Histogram<'a>),
    /// GNU tag 1, or a BSD raw arc.
    Arc(Arc),
    /// GNU tag 2.
    BasicBlocks(BasicBlocks<'a>),
}

/// The file header: format and its bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileHeader<'a> {
    /// Detected format.
    pub format: Format,
    /// Size of the header in bytes (20 for GNU; 2P+24 for 4.4BSD; 2P+4 for old BSD).
    pub header_bytes: usize,
    /// The header's bytes (for GNU, bytes 8..20 are the spare field, which gprof's own
    /// `gmon.sum` fills with garbage; it is never validated).
    pub raw: &'a [u8],
    /// BSD formats: the `ncnt` field (bins bytes plus header size).
    pub ncnt: Option<u32>,
}

type Cur<'a> = Cursor<&'a [u8]>;

#[derive(Clone, Copy, Debug)]
enum State<'a> {
    Gnu { version: u32 },
    BsdHistogram(Histogram<'a>),
    BsdArcs,
    Done,
}

/// Iterator over the records of a file; see [`records`]. Yields at most one error, then ends.
#[derive(Clone, Debug)]
pub struct Records<'a> {
    cur: Cur<'a>,
    state: State<'a>,
}

impl<'a> Records<'a> {
    /// Byte offset of the next record.
    pub fn position(&self) -> u64 {
        self.cur.pos() as u64
    }

    /// For BSD files after the last arc: bytes left that are too few for another arc
    /// (gprof ignores them). Zero for GNU files.
    pub fn trailing_bytes(&self) -> u64 {
        match self.state {
            State::Done | State::BsdArcs => self.cur.remaining() as u64,
            _ => 0,
        }
    }

    fn gnu_record(&mut self, version: u32) -> Result<Option<Record<'a>>, Error> {
        let c = &mut self.cur;
        if c.remaining() == 0 {
            return Ok(None);
        }
        let offset = c.pos();
        let tag = c.u8("record tag")?;
        match tag {
            layout::TAG_TIME_HIST => {
                let low_pc = c.ptr("histogram record: low_pc")?;
                let high_pc = c.ptr("histogram record: high_pc")?;
                let size_at = c.pos();
                let hist_size = c.u32("histogram record: hist_size")?;
                let prof_rate = c.u32("histogram record: prof_rate")?;
                let name = c.array::<{ layout::DIMEN_BYTES }>("histogram record: dimen")?;
                let abbrev = c.u8("histogram record: dimen_abbrev")?;
                if low_pc > high_pc {
                    return Err(Error::new(
                        offset as u64 + 1,
                        "histogram record: low_pc",
                        ErrorKind::LowAboveHigh { low_pc, high_pc },
                    ));
                }
                let bins_offset = c.pos();
                let bytes = c.take_items(
                    u64::from(hist_size),
                    2,
                    size_at,
                    "histogram record: hist_size",
                )?;
                Ok(Some(Record::Histogram(Histogram {
                    offset: offset as u64,
                    low_pc,
                    high_pc,
                    hist_size,
                    prof_rate: Some(prof_rate),
                    dimension: Dimension { name, abbrev },
                    bins_offset: bins_offset as u64,
                    bins: Bins::new(bytes, c.target().endian),
                })))
            }
            layout::TAG_CG_ARC => {
                let from_pc = c.ptr("arc record: from_pc")?;
                let self_pc = c.ptr("arc record: self_pc")?;
                let count = c.u32("arc record: count")?;
                Ok(Some(Record::Arc(Arc {
                    offset: offset as u64,
                    from_pc,
                    self_pc,
                    count: u64::from(count),
                })))
            }
            layout::TAG_BB_COUNT => {
                let n_at = c.pos();
                let nblocks = c.u32("basic-block record: nblocks")?;
                let start = c.pos();
                let layout = if version == 0 {
                    c.skip_string("basic-block record: file name")?;
                    for _ in 0..nblocks {
                        c.take(16, "basic-block record: ncalls/addr")?;
                        c.skip_string("basic-block record: function name")?;
                        c.skip_string("basic-block record: file name")?;
                        c.take(4, "basic-block record: line")?;
                    }
                    BbLayout::V0
                } else {
                    let item = 2 * c.target().ptr_size.bytes() as u64;
                    c.take_items(
                        u64::from(nblocks),
                        item,
                        n_at,
                        "basic-block record: nblocks",
                    )?;
                    BbLayout::V1
                };
                Ok(Some(Record::BasicBlocks(BasicBlocks {
                    offset: offset as u64,
                    nblocks,
                    layout,
                    body: &c.data()[start..c.pos()],
                    target: c.target(),
                })))
            }
            t => Err(Error::new(
                offset as u64,
                "record tag",
                ErrorKind::BadTag(t),
            )),
        }
    }

    fn bsd_arc(&mut self) -> Option<Record<'a>> {
        let c = &mut self.cur;
        if c.remaining() < layout::bsd_arc_bytes(c.target().ptr_size) {
            return None;
        }
        let offset = c.pos() as u64;
        // Cannot fail: a whole arc remains.
        let from_pc = c.ptr("BSD arc: from_pc").ok()?;
        let self_pc = c.ptr("BSD arc: self_pc").ok()?;
        let count = c.ptr("BSD arc: count").ok()?;
        Some(Record::Arc(Arc {
            offset,
            from_pc,
            self_pc,
            count,
        }))
    }
}

impl<'a> Iterator for Records<'a> {
    type Item = Result<Record<'a>, Error>;

    fn next(&mut self) -> Option<Self::Item> {
        match self.state {
            State::Done => None,
            State::Gnu { version } => match self.gnu_record(version) {
                Ok(Some(r)) => Some(Ok(r)),
                Ok(None) => {
                    self.state = State::Done;
                    None
                }
                Err(e) => {
                    self.state = State::Done;
                    self.cur.seek(usize::MAX);
                    Some(Err(e))
                }
            },
            State::BsdHistogram(h) => {
                self.state = State::BsdArcs;
                Some(Ok(Record::Histogram(h)))
            }
            State::BsdArcs => match self.bsd_arc() {
                Some(r) => Some(Ok(r)),
                None => {
                    self.state = State::Done;
                    None
                }
            },
        }
    }
}

impl FusedIterator for Records<'_> {}

/// Detect the format of `data` under `target`, check its header, and return the header and an
/// iterator over the records. Never allocates.
pub fn records(data: &[u8], target: Target) -> Result<(FileHeader<'_>, Records<'_>), Error> {
    let len = data.len() as u64;
    if data.len() < layout::GNU_HEADER_BYTES {
        return Err(Error::new(
            0,
            "file header",
            ErrorKind::TooShort {
                needed: layout::GNU_HEADER_BYTES as u64,
                len,
            },
        ));
    }
    let mut cur = Cur::new(data, target);
    if &data[..4] == layout::GNU_MAGIC {
        let version = target.endian.read_u32(&data[4..8]);
        if version != layout::GNU_VERSION && version != 0 {
            return Err(Error::new(
                4,
                "file header: version",
                ErrorKind::UnsupportedVersion(version),
            ));
        }
        cur.seek(layout::GNU_HEADER_BYTES);
        let header = FileHeader {
            format: Format::Gnu { version },
            header_bytes: layout::GNU_HEADER_BYTES,
            raw: &data[..layout::GNU_HEADER_BYTES],
            ncnt: None,
        };
        return Ok((
            header,
            Records {
                cur,
                state: State::Gnu { version },
            },
        ));
    }

    // BSD: lpc, hpc, ncnt, then one more word decides 4.4BSD vs old BSD.
    let p = target.ptr_size.bytes();
    let probe = 2 * p + 8;
    if data.len() < probe {
        return Err(Error::new(
            0,
            "file header",
            ErrorKind::TooShort {
                needed: probe as u64,
                len,
            },
        ));
    }
    let low_pc = cur.ptr("BSD header: lpc")?;
    let high_pc = cur.ptr("BSD header: hpc")?;
    let ncnt_at = cur.pos();
    let ncnt = cur.u32("BSD header: ncnt")?;
    let version = cur.u32("BSD header: version")?;
    let (format, header_bytes, prof_rate) = if version == layout::BSD44_VERSION {
        let rate = cur.u32("4.4BSD header: profrate")?;
        cur.take(12, "4.4BSD header: spare")?;
        (
            Format::Bsd44,
            layout::bsd44_header_bytes(target.ptr_size),
            Some(rate),
        )
    } else {
        (
            Format::OldBsd,
            layout::oldbsd_header_bytes(target.ptr_size),
            None,
        )
    };
    let hb = header_bytes as u32;
    if ncnt < hb {
        return Err(Error::new(
            ncnt_at as u64,
            "BSD header: ncnt",
            ErrorKind::NcntBelowHeader {
                ncnt,
                header_bytes: hb,
            },
        ));
    }
    if ncnt - hb > i32::MAX as u32 {
        return Err(Error::new(
            ncnt_at as u64,
            "BSD header: ncnt",
            ErrorKind::NcntTooLarge(ncnt),
        ));
    }
    if low_pc > high_pc {
        return Err(Error::new(
            0,
            "BSD header: lpc",
            ErrorKind::LowAboveHigh { low_pc, high_pc },
        ));
    }
    cur.seek(header_bytes);
    let nbins = (ncnt - hb) / 2;
    let bins = cur.take_items(u64::from(nbins), 2, ncnt_at, "BSD header: ncnt")?;
    let hist = Histogram {
        offset: 0,
        low_pc,
        high_pc,
        hist_size: nbins,
        prof_rate,
        dimension: Dimension::SECONDS,
        bins_offset: header_bytes as u64,
        bins: Bins::new(bins, target.endian),
    };
    let header = FileHeader {
        format,
        header_bytes,
        raw: &data[..header_bytes],
        ncnt: Some(ncnt),
    };
    Ok((
        header,
        Records {
            cur,
            state: State::BsdHistogram(hist),
        },
    ))
}

/// Check a whole file without allocating: the header, then every record.
/// Returns the header, the number of records and the trailing byte count.
pub fn validate(data: &[u8], target: Target) -> Result<(FileHeader<'_>, u64, u64), Error> {
    let (header, mut recs) = records(data, target)?;
    let mut n = 0u64;
    for r in recs.by_ref() {
        r?;
        n += 1;
    }
    Ok((header, n, recs.trailing_bytes()))
}

pub(crate) fn guess_target(data: &[u8]) -> Target {
    let mut best = Target::HOST;
    let mut best_score = 0u32;
    for t in Target::candidates() {
        let score = score_target(data, t);
        if score > best_score {
            best = t;
            best_score = score;
        }
    }
    best
}

fn score_target(data: &[u8], t: Target) -> u32 {
    let Ok((header, mut recs)) = records(data, t) else {
        return 0;
    };
    let mut plausible = true;
    for r in recs.by_ref() {
        match r {
            Err(_) => return 0,
            Ok(Record::Histogram(h)) => {
                let span = h.high_pc - h.low_pc;
                if h.hist_size == 0 || span == 0 || span < u64::from(h.hist_size) {
                    plausible = false;
                }
            }
            Ok(_) => {}
        }
    }
    let mut score = 1;
    if matches!(header.format, Format::Gnu { .. } | Format::Bsd44) {
        score += 4;
    }
    if recs.trailing_bytes() == 0 {
        score += 2;
    }
    if plausible {
        score += 1;
    }
    score
}

#[cfg(feature = "alloc")]
pub use self::owned::*;

#[cfg(feature = "alloc")]
mod owned {
    use alloc::vec::Vec;

    use super::*;

    /// A whole gmon file, decoded (borrowing from the input).
    #[derive(Clone, Debug, PartialEq)]
    pub struct GmonFile<'a> {
        /// How the file was decoded.
        pub target: Target,
        /// The detected format and header.
        pub header: FileHeader<'a>,
        /// Histogram records, in file order.
        pub histograms: Vec<Histogram<'a>>,
        /// Call-graph arcs, in file order.
        pub arcs: Vec<Arc>,
        /// Basic-block records, in file order.
        pub basic_blocks: Vec<BasicBlocks<'a>>,
        /// BSD formats: bytes after the last whole arc, too few for another one (gprof
        /// ignores them; so does this reader, but it says so).
        pub trailing_bytes: u64,
        /// Length of the input in bytes.
        pub len: u64,
    }

    impl GmonFile<'_> {
        /// The detected format.
        pub fn format(&self) -> Format {
            self.header.format
        }

        /// Total samples over all histogram records.
        pub fn total_samples(&self) -> u64 {
            self.histograms.iter().map(|h| h.bins.total()).sum()
        }

        /// Total calls over all arcs.
        pub fn total_calls(&self) -> u128 {
            self.arcs.iter().map(|a| u128::from(a.count)).sum()
        }
    }

    /// Decode a whole file. `target` comes from the executable (or [`Target::guess`]).
    ///
    /// The vectors grow one record at a time, and every record consumes at least 13 bytes of
    /// input, so memory is bounded by the input size.
    pub fn parse(data: &[u8], target: Target) -> Result<GmonFile<'_>, Error> {
        let (header, mut recs) = records(data, target)?;
        let mut file = GmonFile {
            target,
            header,
            histograms: Vec::new(),
            arcs: Vec::new(),
            basic_blocks: Vec::new(),
            trailing_bytes: 0,
            len: data.len() as u64,
        };
        for r in recs.by_ref() {
            match r? {
                Record::Histogram(h) => file.histograms.push(h),
                Record::Arc(a) => file.arcs.push(a),
                Record::BasicBlocks(b) => file.basic_blocks.push(b),
            }
        }
        file.trailing_bytes = recs.trailing_bytes();
        Ok(file)
    }
}
