//! The stacks file: the call stacks the runtime sampled, deduplicated with a count each, and
//! how its stack walks ended. Written beside the profile as `<profile>.stacks` (`gmon.out` →
//! `gmon.out.stacks`) unless `PROFIL_STACKS=0`.
//!
//! # Layout (version 1)
//!
//! Every integer is little-endian and every address 8 bytes wide, whatever the host (the
//! runtime that writes it is 64-bit; a reader on any machine reads it the same).
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 8 | magic `PRFLSTK\0` ([`MAGIC`]) |
//! | 8 | 4 | version: 1 |
//! | 12 | 4 | header size in bytes (112 in version 1; readers skip what they do not know) |
//! | 16 | 4 | the walk's depth limit, frames |
//! | 20 | 4 | flags: bit 0 = a table was full and something was dropped ([`FLAG_DROPPED`]) |
//! | 24 | 4 | number of object records |
//! | 28 | 4 | reserved, 0 |
//! | 32 | 8 | number of stack records |
//! | 40 | 72 | [`WalkStats`]: nine counters, in the order of its fields |
//!
//! Then the object records: the executable segments of the objects loaded when sampling
//! started (the executable first; an object with two executable segments has two records),
//! then the objects registered later (loaded with `dlopen`: one record spanning the object's
//! executable text), each:
//!
//! | size | field |
//! |---|---|
//! | 4 | record size in bytes, a multiple of 8, this field included |
//! | 4 | path length *p* (0 for the executable when the loader has no name for it) |
//! | 8 | load bias: runtime address = link-time address + bias |
//! | 8 | runtime start of the segment |
//! | 8 | runtime end of the segment (exclusive) |
//! | *p* | path bytes (no terminator) |
//! | 0–7 | zero padding to the record size |
//!
//! Then the stack records, each `16 + 8 × depth` bytes:
//!
//! | size | field |
//! |---|---|
//! | 8 | samples with exactly this stack |
//! | 4 | depth (frames, at least 1) |
//! | 4 | flags: bit 0 = the walk was cut short of the outermost frame ([`STACK_CUT`]); other bits 0 (files written before the flag have 0: read as complete) |
//! | 8 × depth | runtime addresses, innermost first: the sampled PC, then return addresses |
//!
//! Nothing may follow the last stack. A return address points just after its call: to find
//! the calling line or function, look up `address − 1`.
//!
//! # Reading and writing
//!
//! [`StacksWriter`] (`no_std`, no allocation) streams a file into a [`Sink`] and checks the
//! counts it announced; [`parse`] (feature `alloc`) checks the whole file before returning
//! borrowed views, never panics, and allocates one entry per record actually present.

use core::fmt;

use crate::cursor::{Cursor, CursorError};
use crate::write::Sink;
use crate::{Endian, PtrSize, Target};

/// Every field is little-endian, whatever the host or the profiled program.
const LE: Target = Target::new(PtrSize::Eight, Endian::Little);

/// The first 8 bytes of every stacks file.
pub const MAGIC: [u8; 8] = *b"PRFLSTK\0";
/// The version this module writes and reads.
pub const VERSION: u32 = 1;
/// Size of the version-1 header.
pub const HEADER_BYTES: u32 = 112;
/// Header flag: a table was full and arcs or stacks were dropped.
pub const FLAG_DROPPED: u32 = 1;
/// A stack record's flag: its walk stopped short of the outermost frame, so its outermost
/// frame's callers are missing.
pub const STACK_CUT: u32 = 1;

/// How the runtime's stack walks ended (see the `profil-rt` crate's `stacks` module).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WalkStats {
    /// Walks made (one per sample).
    pub walks: u64,
    /// Walks that reached the outermost frame (`_start`, a thread's start).
    pub complete: u64,
    /// Walks that ended in code with no unwind information and no usable frame pointer (JIT
    /// code, a stripped object, a garbage return address): frames are missing.
    pub no_info: u64,
    /// Walks that ended on unusable unwind information or stack contents (or with no walk
    /// stack free, or in an object being unloaded): frames are missing.
    pub bad_unwind: u64,
    /// Stacks deeper than the depth limit (innermost frames kept).
    pub too_deep: u64,
    /// Samples on a stack the runtime did not know (leaf only).
    pub no_range: u64,
    /// Frames unwound by frame pointer (code without call frame information).
    pub fp_frames: u64,
    /// Arc counts lost to a full table.
    pub arcs_dropped: u64,
    /// Stacks lost to a full table.
    pub stacks_dropped: u64,
}

impl WalkStats {
    fn to_array(self) -> [u64; 9] {
        [
            self.walks,
            self.complete,
            self.no_info,
            self.bad_unwind,
            self.too_deep,
            self.no_range,
            self.fp_frames,
            self.arcs_dropped,
            self.stacks_dropped,
        ]
    }
    #[cfg(feature = "alloc")]
    fn from_array(a: [u64; 9]) -> WalkStats {
        WalkStats {
            walks: a[0],
            complete: a[1],
            no_info: a[2],
            bad_unwind: a[3],
            too_deep: a[4],
            no_range: a[5],
            fp_frames: a[6],
            arcs_dropped: a[7],
            stacks_dropped: a[8],
        }
    }
}

/// The header's values.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Header {
    /// The walk's depth limit.
    pub max_depth: u32,
    /// [`FLAG_DROPPED`] or 0.
    pub flags: u32,
    /// Object records that follow.
    pub objects: u32,
    /// Stack records that follow them.
    pub stacks: u64,
    /// How the walks ended.
    pub stats: WalkStats,
}

/// One executable segment of a loaded object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Object<'a> {
    /// Load bias.
    pub bias: u64,
    /// Runtime start.
    pub start: u64,
    /// Runtime end (exclusive).
    pub end: u64,
    /// The loader's path for it (empty for an unnamed executable).
    pub path: &'a [u8],
}

impl Object<'_> {
    /// Does this segment hold runtime address `pc`?
    pub fn contains(&self, pc: u64) -> bool {
        (self.start..self.end).contains(&pc)
    }
}

/// Why a write failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StacksWriteError<E> {
    /// The sink failed.
    Sink(E),
    /// A path longer than 2^31 bytes, or an empty stack.
    Invalid(&'static str),
    /// Records written differ from the header's counts.
    Count {
        /// Which records.
        what: &'static str,
        /// Announced.
        expected: u64,
        /// Written.
        actual: u64,
    },
}

impl<E: fmt::Display> fmt::Display for StacksWriteError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StacksWriteError::Sink(e) => write!(f, "{e}"),
            StacksWriteError::Invalid(what) => write!(f, "invalid {what}"),
            StacksWriteError::Count {
                what,
                expected,
                actual,
            } => write!(
                f,
                "header announced {expected} {what} but {actual} were written"
            ),
        }
    }
}

/// Streams a stacks file into a sink: [`header`](Self::header), the objects, the stacks,
/// then [`finish`](Self::finish).
#[derive(Debug)]
pub struct StacksWriter<S> {
    sink: S,
    header: Header,
    objects: u64,
    stacks: u64,
}

impl<S: Sink> StacksWriter<S> {
    /// A writer into `sink`.
    pub fn new(sink: S) -> Self {
        StacksWriter {
            sink,
            header: Header::default(),
            objects: 0,
            stacks: 0,
        }
    }

    fn put(&mut self, bytes: &[u8]) -> Result<(), StacksWriteError<S::Error>> {
        self.sink.write_all(bytes).map_err(StacksWriteError::Sink)
    }

    /// The header.
    pub fn header(&mut self, h: &Header) -> Result<(), StacksWriteError<S::Error>> {
        self.header = *h;
        let mut b = [0u8; HEADER_BYTES as usize];
        let mut c = Cursor::new(&mut b[..], LE);
        (|| {
            c.put(&MAGIC, "magic")?;
            c.put_u32(VERSION, "version")?;
            c.put_u32(HEADER_BYTES, "header size")?;
            c.put_u32(h.max_depth, "depth limit")?;
            c.put_u32(h.flags, "flags")?;
            c.put_u32(h.objects, "object count")?;
            c.put_u32(0, "reserved field")?;
            c.put_u64(h.stacks, "stack count")?;
            for v in h.stats.to_array() {
                c.put_u64(v, "walk statistics")?;
            }
            Ok::<(), CursorError>(())
        })()
        .map_err(|_| StacksWriteError::Invalid("header"))?;
        self.put(&b)
    }

    /// One object record.
    pub fn object(&mut self, o: &Object<'_>) -> Result<(), StacksWriteError<S::Error>> {
        let p = u32::try_from(o.path.len())
            .ok()
            .filter(|&p| p < 1 << 31)
            .ok_or(StacksWriteError::Invalid("object path"))?;
        let size = (32 + p).div_ceil(8) * 8;
        let mut b = [0u8; 32];
        let mut c = Cursor::new(&mut b[..], LE);
        (|| {
            c.put_u32(size, "object record size")?;
            c.put_u32(p, "object path length")?;
            c.put_u64(o.bias, "object bias")?;
            c.put_u64(o.start, "object start")?;
            c.put_u64(o.end, "object end")
        })()
        .map_err(|_| StacksWriteError::Invalid("object record"))?;
        self.put(&b)?;
        self.put(o.path)?;
        let pad = (size - 32 - p) as usize;
        self.put(&[0u8; 8][..pad])?;
        self.objects += 1;
        Ok(())
    }

    /// One stack record: `count` samples of the stack `pcs` (innermost first, `depth` of
    /// them).
    pub fn stack(
        &mut self,
        count: u64,
        depth: u32,
        pcs: impl IntoIterator<Item = u64>,
    ) -> Result<(), StacksWriteError<S::Error>> {
        self.stack_with_flags(count, depth, 0, pcs)
    }

    /// One stack record with its flags ([`STACK_CUT`]).
    pub fn stack_with_flags(
        &mut self,
        count: u64,
        depth: u32,
        flags: u32,
        pcs: impl IntoIterator<Item = u64>,
    ) -> Result<(), StacksWriteError<S::Error>> {
        if depth == 0 {
            return Err(StacksWriteError::Invalid("empty stack"));
        }
        let mut b = [0u8; 16];
        let mut c = Cursor::new(&mut b[..], LE);
        (|| {
            c.put_u64(count, "stack count")?;
            c.put_u32(depth, "stack depth")?;
            c.put_u32(flags, "stack flags")
        })()
        .map_err(|_| StacksWriteError::Invalid("stack record"))?;
        self.put(&b)?;
        let mut n = 0u32;
        for pc in pcs.into_iter().take(depth as usize) {
            let mut b = [0u8; 8];
            Cursor::new(&mut b[..], LE)
                .put_u64(pc, "pc")
                .map_err(|_| StacksWriteError::Invalid("pc"))?;
            self.put(&b)?;
            n += 1;
        }
        if n != depth {
            return Err(StacksWriteError::Invalid("stack shorter than its depth"));
        }
        self.stacks += 1;
        Ok(())
    }

    /// Check the counts and hand back the sink.
    pub fn finish(self) -> Result<S, StacksWriteError<S::Error>> {
        if self.objects != u64::from(self.header.objects) {
            return Err(StacksWriteError::Count {
                what: "objects",
                expected: self.header.objects.into(),
                actual: self.objects,
            });
        }
        if self.stacks != self.header.stacks {
            return Err(StacksWriteError::Count {
                what: "stacks",
                expected: self.header.stacks,
                actual: self.stacks,
            });
        }
        Ok(self.sink)
    }
}

/// Why a file was rejected: what was wrong, and the byte offset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StacksError {
    /// Byte offset of the offending field.
    pub offset: u64,
    /// What was wrong.
    pub problem: &'static str,
}

impl fmt::Display for StacksError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "stacks file: {} at byte {}", self.problem, self.offset)
    }
}

#[cfg(feature = "std")]
impl std::error::Error for StacksError {}

/// One stack of a parsed file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stack<'a> {
    /// Samples with this stack.
    pub count: u64,
    /// Its flags ([`STACK_CUT`]).
    pub flags: u32,
    raw: &'a [u8],
}

impl Stack<'_> {
    /// Was its walk cut short of the outermost frame?
    pub fn cut(&self) -> bool {
        self.flags & STACK_CUT != 0
    }
    /// Frames.
    pub fn depth(&self) -> usize {
        self.raw.len() / 8
    }
    /// Runtime addresses, innermost first.
    pub fn pcs(&self) -> impl ExactSizeIterator<Item = u64> + '_ {
        self.raw.chunks_exact(8).map(|c| Endian::Little.read_u64(c))
    }
}

/// A whole, checked stacks file.
#[cfg(feature = "alloc")]
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StacksFile<'a> {
    /// The header.
    pub header: Header,
    /// The object records.
    pub objects: alloc::vec::Vec<Object<'a>>,
    /// The stack records.
    pub stacks: alloc::vec::Vec<Stack<'a>>,
}

/// Does `data` start with the stacks file's magic?
pub fn looks_like_stacks(data: &[u8]) -> bool {
    data.starts_with(&MAGIC)
}

/// The reader: the crate's cursor, its errors as a [`StacksError`] (the field's name is the
/// problem).
#[cfg(feature = "alloc")]
struct Rd<'a>(Cursor<&'a [u8]>);

impl From<CursorError> for StacksError {
    fn from(e: CursorError) -> StacksError {
        StacksError {
            offset: e.offset,
            problem: e.field,
        }
    }
}

#[cfg(feature = "alloc")]
impl<'a> Rd<'a> {
    fn take(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], StacksError> {
        Ok(self.0.take(n, what)?)
    }
    fn u32(&mut self, what: &'static str) -> Result<u32, StacksError> {
        Ok(self.0.u32(what)?)
    }
    fn u64(&mut self, what: &'static str) -> Result<u64, StacksError> {
        Ok(self.0.u64(what)?)
    }
    fn left(&self) -> usize {
        self.0.remaining()
    }
    fn pos(&self) -> usize {
        self.0.pos()
    }
    fn fail<T>(&self, offset: usize, problem: &'static str) -> Result<T, StacksError> {
        Err(StacksError {
            offset: offset as u64,
            problem,
        })
    }
}

/// Check and read a whole stacks file.
#[cfg(feature = "alloc")]
pub fn parse(data: &[u8]) -> Result<StacksFile<'_>, StacksError> {
    use alloc::vec::Vec;
    let mut r = Rd(Cursor::new(data, LE));
    if r.take(8, "truncated magic")? != MAGIC {
        return r.fail(0, "bad magic (not a stacks file)");
    }
    if r.u32("truncated version")? != VERSION {
        return r.fail(8, "unsupported version");
    }
    let hsize = r.u32("truncated header size")?;
    if hsize < HEADER_BYTES {
        return r.fail(12, "header size below 112");
    }
    let max_depth = r.u32("truncated depth limit")?;
    let flags = r.u32("truncated flags")?;
    let nobjects = r.u32("truncated object count")?;
    r.u32("truncated reserved field")?;
    let nstacks = r.u64("truncated stack count")?;
    let mut stats = [0u64; 9];
    for s in &mut stats {
        *s = r.u64("truncated walk statistics")?;
    }
    r.take(hsize as usize - HEADER_BYTES as usize, "truncated header")?;
    // Every object record is at least 32 bytes and every stack 24: never trust a count the
    // bytes cannot hold.
    if u64::from(nobjects) > (r.left() / 32) as u64 {
        return r.fail(24, "more objects than the file can hold");
    }
    let mut objects = Vec::with_capacity(nobjects as usize);
    for _ in 0..nobjects {
        let at = r.pos();
        let size = r.u32("truncated object record")?;
        let plen = r.u32("truncated object path length")?;
        if size % 8 != 0 || u64::from(size) < 32 + u64::from(plen) || size as usize - 8 > r.left() {
            return r.fail(at, "bad object record size");
        }
        let bias = r.u64("truncated object bias")?;
        let start = r.u64("truncated object start")?;
        let end = r.u64("truncated object end")?;
        if end < start {
            return r.fail(at + 24, "object ends before it starts");
        }
        let path = r.take(plen as usize, "truncated object path")?;
        r.take(
            size as usize - 32 - plen as usize,
            "truncated object padding",
        )?;
        objects.push(Object {
            bias,
            start,
            end,
            path,
        });
    }
    if nstacks > (r.left() / 24) as u64 {
        return r.fail(32, "more stacks than the file can hold");
    }
    let mut stacks = Vec::with_capacity(nstacks as usize);
    for _ in 0..nstacks {
        let at = r.pos();
        let count = r.u64("truncated stack count")?;
        let depth = r.u32("truncated stack depth")?;
        let flags = r.u32("truncated stack flags")?;
        if depth == 0 {
            return r.fail(at + 8, "empty stack");
        }
        let raw = r.take((depth as usize).saturating_mul(8), "truncated stack")?;
        stacks.push(Stack { count, flags, raw });
    }
    if r.left() != 0 {
        return r.fail(r.pos(), "bytes after the last stack");
    }
    Ok(StacksFile {
        header: Header {
            max_depth,
            flags,
            objects: nobjects,
            stacks: nstacks,
            stats: WalkStats::from_array(stats),
        },
        objects,
        stacks,
    })
}

#[cfg(all(test, feature = "alloc"))]
mod tests {
    use super::*;
    use alloc::vec::Vec;

    fn sample() -> Vec<u8> {
        let stats = WalkStats {
            walks: 10,
            complete: 7,
            bad_unwind: 2,
            too_deep: 1,
            fp_frames: 9,
            ..WalkStats::default()
        };
        let mut w = StacksWriter::new(Vec::new());
        w.header(&Header {
            max_depth: 128,
            flags: 0,
            objects: 2,
            stacks: 2,
            stats,
        })
        .unwrap();
        w.object(&Object {
            bias: 0x5555_0000_0000,
            start: 0x5555_0000_1000,
            end: 0x5555_0000_2000,
            path: b"",
        })
        .unwrap();
        w.object(&Object {
            bias: 0x7f00_0000_0000,
            start: 0x7f00_0002_8000,
            end: 0x7f00_001b_0000,
            path: b"/lib/x86_64-linux-gnu/libc.so.6",
        })
        .unwrap();
        w.stack(7, 3, [0x5555_0000_1010, 0x5555_0000_1100, 0x7f00_0002_9000])
            .unwrap();
        w.stack_with_flags(3, 1, STACK_CUT, [0x5555_0000_1010])
            .unwrap();
        w.finish().unwrap()
    }

    #[test]
    fn round_trip() {
        let b = sample();
        assert!(looks_like_stacks(&b));
        let f = parse(&b).unwrap();
        assert_eq!(f.header.max_depth, 128);
        assert_eq!(f.header.stats.walks, 10);
        assert_eq!(f.header.stats.too_deep, 1);
        assert_eq!(f.objects.len(), 2);
        assert_eq!(f.objects[1].path, b"/lib/x86_64-linux-gnu/libc.so.6");
        assert!(f.objects[0].contains(0x5555_0000_1010));
        assert_eq!(f.stacks.len(), 2);
        assert_eq!(f.stacks[0].count, 7);
        assert_eq!(
            f.stacks[0].pcs().collect::<Vec<_>>(),
            [0x5555_0000_1010, 0x5555_0000_1100, 0x7f00_0002_9000]
        );
        assert_eq!(f.stacks[1].depth(), 1);
        assert!(!f.stacks[0].cut() && f.stacks[1].cut());
    }

    #[test]
    fn the_writer_checks_its_counts() {
        let mut w = StacksWriter::new(Vec::new());
        w.header(&Header {
            stacks: 1,
            ..Header::default()
        })
        .unwrap();
        assert!(matches!(
            w.finish(),
            Err(StacksWriteError::Count { what: "stacks", .. })
        ));
        let mut w = StacksWriter::new(Vec::new());
        assert!(w.stack(1, 0, []).is_err());
        assert!(w.stack(1, 2, [1]).is_err());
    }

    #[test]
    fn malformed_files_are_errors_never_panics() {
        let b = sample();
        // Every truncation is an error.
        for n in 0..b.len() {
            assert!(parse(&b[..n]).is_err(), "prefix {n}");
        }
        // Trailing bytes, bad magic, version, counts.
        let mut t = b.clone();
        t.push(0);
        assert_eq!(parse(&t).unwrap_err().problem, "bytes after the last stack");
        let mut t = b.clone();
        t[0] = b'X';
        assert!(parse(&t).is_err());
        let mut t = b.clone();
        t[8] = 2;
        assert_eq!(parse(&t).unwrap_err().offset, 8);
        let mut t = b.clone();
        t[24..28].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(parse(&t).is_err());
        let mut t = b.clone();
        t[32..40].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(parse(&t).is_err());
        // Every single-byte corruption parses or fails, never panics.
        for i in 0..b.len() {
            for v in [0u8, 1, 0x7f, 0x80, 0xff] {
                let mut t = b.clone();
                t[i] = v;
                let _ = parse(&t);
            }
        }
    }
}
