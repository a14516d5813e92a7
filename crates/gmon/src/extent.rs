//! How many bytes the start of a gmon or pcsample file justifies reading, if the file is what
//! it claims to be: the bound a reader of pipes, FIFOs and devices (which have no size) puts
//! on its reads. Each function takes the bytes read so far (at least [`PROBE`] of them).
//!
//! * GNU gmon ([`gnu`]): a walk over the tagged records (a histogram record gives its bin
//!   count, an arc record has a fixed size, a basic-block record gives its block count),
//!   under each pointer size and byte order the header allows; the walk stops at the first
//!   byte that cannot start a record. Old-style (version 0) basic-block records have no size
//!   field: such a file runs to its end ([`Extent::ToEnd`]).
//! * 4.4BSD and old BSD gmon ([`bsd`]): the header's `ncnt` gives the histogram; the arcs
//!   follow for as long as they lie in the histogram's range (see [`BSD_HISTOGRAM_LIMIT`] for
//!   why noise cannot pass for a large one).
//! * pcsample ([`pcsample`]): the header gives the number of object and sample records.

use crate::cursor::Cursor;
use crate::{Endian, PtrSize, Target};

/// Bytes read before anything is decided: every header looked at here fits.
pub const PROBE: usize = 64;

/// What the bytes read so far justify.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Extent {
    /// The file, if valid, is exactly (or at least, when more headers are still to come)
    /// this many bytes long: read up to here, then ask again.
    Bytes(u64),
    /// The format's last part runs to the end of the file: read until EOF.
    ToEnd,
}

/// Unsigned reads in one byte order at an offset, through the crate's cursor; `None` past
/// the end.
#[derive(Clone, Copy)]
struct Le(bool);

impl Le {
    fn at(self, d: &[u8], at: u64) -> Option<Cursor<&[u8]>> {
        let at = usize::try_from(at).ok().filter(|&a| a <= d.len())?;
        let endian = if self.0 { Endian::Little } else { Endian::Big };
        let mut c = Cursor::new(d, Target::new(PtrSize::Eight, endian));
        c.seek(at);
        Some(c)
    }
    fn u32(self, d: &[u8], at: u64) -> Option<u64> {
        self.at(d, at)?.u32("extent").ok().map(u64::from)
    }
    fn u64(self, d: &[u8], at: u64) -> Option<u64> {
        self.at(d, at)?.u64("extent").ok()
    }
    /// An address-sized word (4 or 8 bytes).
    fn word(self, d: &[u8], at: u64, wide: bool) -> Option<u64> {
        if wide {
            self.u64(d, at)
        } else {
            self.u32(d, at)
        }
    }
}

/// GNU gmon: the furthest point any pointer size and byte order can walk records to.
pub fn gnu(d: &[u8]) -> Extent {
    let mut best = crate::layout::GNU_HEADER_BYTES as u64;
    for le in [true, false] {
        let e = Le(le);
        let version = e.u32(d, 4).unwrap_or(u64::MAX);
        if version != u64::from(crate::layout::GNU_VERSION) && version != 0 {
            continue;
        }
        for wide in [false, true] {
            match walk_gnu(d, e, wide, version) {
                Extent::ToEnd => return Extent::ToEnd,
                Extent::Bytes(n) => best = best.max(n),
            }
        }
    }
    Extent::Bytes(best)
}

/// One walk over GNU records: where the records end, or how far the next incomplete one
/// reaches.
fn walk_gnu(d: &[u8], e: Le, wide: bool, version: u64) -> Extent {
    let p: u64 = if wide { 8 } else { 4 };
    let len = d.len() as u64;
    let mut pos = crate::layout::GNU_HEADER_BYTES as u64;
    loop {
        let Some(&tag) = usize::try_from(pos).ok().and_then(|i| d.get(i)) else {
            // The next tag, if there is one.
            return Extent::Bytes(pos + 1);
        };
        let head = match tag {
            crate::layout::TAG_TIME_HIST => 1 + 2 * p + 24,
            crate::layout::TAG_CG_ARC => 1 + 2 * p + 4,
            crate::layout::TAG_BB_COUNT if version == 0 => return Extent::ToEnd,
            crate::layout::TAG_BB_COUNT => 1 + 4,
            // Not a record: nothing from here on belongs to the file.
            _ => return Extent::Bytes(pos),
        };
        if pos + head > len {
            return Extent::Bytes(pos + head);
        }
        if tag == crate::layout::TAG_TIME_HIST
            && e.word(d, pos + 1, wide) > e.word(d, pos + 1 + p, wide)
        {
            // low_pc above high_pc: the parser rejects the record, so nothing after it counts.
            return Extent::Bytes(pos);
        }
        let body = match tag {
            crate::layout::TAG_TIME_HIST => 2 * e.u32(d, pos + 1 + 2 * p).unwrap_or(0),
            crate::layout::TAG_BB_COUNT => 2 * p * e.u32(d, pos + 1).unwrap_or(0),
            _ => 0,
        };
        pos += head + body;
    }
}

/// pcsample: the header, the object records (each gives its size), the samples.
pub fn pcsample(d: &[u8]) -> u64 {
    let (Some(&order), Some(&ptr)) = (d.get(8), d.get(9)) else {
        return PROBE as u64;
    };
    let e = Le(order != 2);
    let p = if ptr == 4 { 4 } else { 8 };
    let (Some(header), Some(objects), Some(samples)) = (e.u32(d, 12), e.u64(d, 24), e.u64(d, 32))
    else {
        return PROBE as u64;
    };
    let mut pos = header.max(u64::from(crate::pcsample::HEADER_BYTES));
    for _ in 0..objects {
        match e.u32(d, pos) {
            // A record smaller than its own size field ends the walk: the parser reports it.
            Some(size) if size >= 4 => pos += size,
            Some(_) => return pos,
            None => return pos + 4,
        }
    }
    pos.saturating_add(samples.saturating_mul(16 + p))
}

/// The largest BSD histogram read from a pipe or device: 32 Mi bins, 64 MiB of text at the
/// finest scale `profil` allows. A BSD file has no magic number, so its header is all there is
/// to tell it from noise; this keeps noise that passes for a header from costing gigabytes.
pub const BSD_HISTOGRAM_LIMIT: u64 = 64 << 20;

/// BSD gmon (4.4BSD or old): the header, the histogram its `ncnt` announces, then the arcs
/// for as long as they lie in the histogram's range (glibc's and BSD's `mcount` record no
/// other). `None` when no pointer size and byte order give a plausible header: `lpc <= hpc`,
/// a text range below 4 GiB, at most one bin per 2 bytes of it, a histogram no larger than
/// [`BSD_HISTOGRAM_LIMIT`]. Noise passes that with a chance of about 2^-31 with 8-byte
/// addresses, and costs at most the limit with 4-byte ones.
pub fn bsd(d: &[u8]) -> Option<u64> {
    let mut best: Option<u64> = None;
    for le in [true, false] {
        for wide in [false, true] {
            let e = Le(le);
            let p: u64 = if wide { 8 } else { 4 };
            let (Some(lpc), Some(hpc), Some(ncnt), Some(version)) = (
                e.word(d, 0, wide),
                e.word(d, p, wide),
                e.u32(d, 2 * p),
                e.u32(d, 2 * p + 4),
            ) else {
                continue;
            };
            let header = if version == u64::from(crate::layout::BSD44_VERSION) {
                2 * p + 24
            } else {
                2 * p + 4
            };
            let text = hpc.wrapping_sub(lpc);
            let hist = ncnt.saturating_sub(header);
            let plausible = lpc <= hpc
                && ncnt >= header
                && text <= 1 << 32
                && hist / 2 <= text / 2 + 1
                && hist <= BSD_HISTOGRAM_LIMIT;
            if !plausible {
                continue;
            }
            // The arcs: from_pc, self_pc, count, one word each.
            let mut pos = ncnt;
            let in_range = |a: u64| lpc <= a && a <= hpc;
            let end = loop {
                match (e.word(d, pos, wide), e.word(d, pos + p, wide)) {
                    (Some(from), Some(to)) if in_range(from) && in_range(to) => pos += 3 * p,
                    (Some(_), Some(_)) => break pos,
                    _ => break pos + 3 * p,
                }
            };
            best = Some(best.map_or(end, |b| b.max(end)));
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every prefix of a header, zeros or noise, gives an answer and never a panic (the walks
    /// are public: a caller may pass fewer than [`PROBE`] bytes).
    #[test]
    fn short_and_noisy_prefixes_never_panic() {
        let mut d = [0u8; 96];
        for (i, b) in d.iter_mut().enumerate() {
            *b = (i as u32).wrapping_mul(2_654_435_761).to_le_bytes()[3];
        }
        for head in [&b"gmon"[..], &crate::pcsample::MAGIC[..], &[0u8; 8][..]] {
            let mut f = d;
            f[..head.len()].copy_from_slice(head);
            for n in 0..=f.len() {
                let _ = gnu(&f[..n]);
                let _ = pcsample(&f[..n]);
                let _ = bsd(&f[..n]);
            }
        }
    }
}
