//! How many bytes the start of a file justifies reading: the bound on reads from pipes,
//! FIFOs and devices.
//!
//! A regular file has a size and is mapped, so its length is never in question. A pipe or a
//! character device (`/dev/zero`, `/dev/urandom`, `<(cat gmon.out)`) has no size: reading it
//! "to the end" may never end. Every input the analyzer takes announces its own extent in
//! its headers, so [`justified_len`] looks at what has been read so far and says how long
//! the file can be if it is what it claims to be:
//!
//! * ELF: the header gives the section and program header tables; those give every section's
//!   and segment's bytes. Nothing past the last of them is read.
//! * GNU gmon: a walk over the tagged records (a histogram record gives its bin count, an arc
//!   record has a fixed size, a basic-block record gives its block count), under each pointer
//!   size and byte order the header allows; the walk stops at the first byte that cannot
//!   start a record.
//! * 4.4BSD and old BSD gmon: the header's `ncnt` gives the histogram; the arcs follow for as
//!   long as they lie in the histogram's range (see [`BSD_HISTOGRAM_LIMIT`] for why noise cannot
//!   pass for a large one).
//! * pcsample: the header gives the number of object and sample records.
//! * anything else: the first [`PROBE`] bytes, enough for the parser to say what is wrong.
//!
//! Old-style (version 0) GNU basic-block records have no size field; a file that has them
//! is read to its end, bounded by the reader's overall limit instead.

/// Bytes read before anything is decided: every header this module looks at fits.
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

/// The extent `prefix` (the first bytes of a file) justifies. A result no larger than
/// `prefix.len()` means: stop reading, nothing more can belong to the file.
pub fn justified_len(prefix: &[u8]) -> Extent {
    if prefix.len() < PROBE {
        return Extent::Bytes(PROBE as u64);
    }
    if prefix.starts_with(b"\x7fELF") {
        return Extent::Bytes(elf(prefix));
    }
    if prefix.starts_with(gmon::layout::GNU_MAGIC) {
        return gnu(prefix);
    }
    if prefix.starts_with(&gmon::pcsample::MAGIC) {
        return Extent::Bytes(pcsample(prefix));
    }
    if let Some(n) = bsd(prefix) {
        return Extent::Bytes(n);
    }
    Extent::Bytes(PROBE as u64)
}

/// Little- or big-endian unsigned reads at an offset; `None` past the end.
#[derive(Clone, Copy)]
struct Le(bool);

impl Le {
    fn get<const N: usize>(self, d: &[u8], at: u64) -> Option<[u8; N]> {
        let at = usize::try_from(at).ok()?;
        let b: [u8; N] = d.get(at..at.checked_add(N)?)?.try_into().ok()?;
        Some(b)
    }
    fn u16(self, d: &[u8], at: u64) -> Option<u64> {
        let b = self.get::<2>(d, at)?;
        Some(u64::from(if self.0 {
            u16::from_le_bytes(b)
        } else {
            u16::from_be_bytes(b)
        }))
    }
    fn u32(self, d: &[u8], at: u64) -> Option<u64> {
        let b = self.get::<4>(d, at)?;
        Some(u64::from(if self.0 {
            u32::from_le_bytes(b)
        } else {
            u32::from_be_bytes(b)
        }))
    }
    fn u64(self, d: &[u8], at: u64) -> Option<u64> {
        let b = self.get::<8>(d, at)?;
        Some(if self.0 {
            u64::from_le_bytes(b)
        } else {
            u64::from_be_bytes(b)
        })
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

/// ELF: the end of the furthest header table, section or segment.
fn elf(d: &[u8]) -> u64 {
    let wide = d[4] == 2;
    let e = Le(d[5] != 2);
    let (phoff, shoff, phent, phnum, shent, shnum) = if wide {
        (
            e.u64(d, 32),
            e.u64(d, 40),
            e.u16(d, 54),
            e.u16(d, 56),
            e.u16(d, 58),
            e.u16(d, 60),
        )
    } else {
        (
            e.u32(d, 28),
            e.u32(d, 32),
            e.u16(d, 42),
            e.u16(d, 44),
            e.u16(d, 46),
            e.u16(d, 48),
        )
    };
    let (Some(phoff), Some(shoff), Some(phent), Some(mut phnum), Some(shent), Some(mut shnum)) =
        (phoff, shoff, phent, phnum, shent, shnum)
    else {
        return PROBE as u64;
    };
    let header = if wide { 64 } else { 52 };
    // Extended numbering: the real counts live in section 0 (sh_size, sh_info).
    if shoff != 0 && (shnum == 0 || phnum == 0xffff) {
        let s0 = shoff.saturating_add(shent);
        if (d.len() as u64) < s0 {
            return s0;
        }
        if shnum == 0 {
            let at = shoff + if wide { 32 } else { 20 };
            shnum = e.word(d, at, wide).unwrap_or(0);
        }
        if phnum == 0xffff {
            phnum = e.u32(d, shoff + if wide { 44 } else { 28 }).unwrap_or(0);
        }
    }
    let tables = |off: u64, n: u64, ent: u64| off.saturating_add(n.saturating_mul(ent));
    let sh_end = if shoff == 0 {
        0
    } else {
        tables(shoff, shnum, shent)
    };
    let ph_end = if phoff == 0 {
        0
    } else {
        tables(phoff, phnum, phent)
    };
    let mut end = (header as u64).max(sh_end).max(ph_end);
    if (d.len() as u64) < end {
        // The tables are not all here yet: read them, then look again.
        return end;
    }
    const SHT_NOBITS: u64 = 8;
    if shoff != 0 {
        for i in 0..shnum {
            let at = shoff + i * shent;
            let kind = e.u32(d, at + 4).unwrap_or(SHT_NOBITS);
            let (off, size) = if wide {
                (e.u64(d, at + 24), e.u64(d, at + 32))
            } else {
                (e.u32(d, at + 16), e.u32(d, at + 20))
            };
            if let (true, Some(off), Some(size)) = (kind != SHT_NOBITS, off, size) {
                end = end.max(off.saturating_add(size));
            }
        }
    }
    if phoff != 0 {
        for i in 0..phnum {
            let at = phoff + i * phent;
            let (off, size) = if wide {
                (e.u64(d, at + 8), e.u64(d, at + 32))
            } else {
                (e.u32(d, at + 4), e.u32(d, at + 16))
            };
            if let (Some(off), Some(size)) = (off, size) {
                end = end.max(off.saturating_add(size));
            }
        }
    }
    end
}

/// GNU gmon: the furthest point any pointer size and byte order can walk records to.
fn gnu(d: &[u8]) -> Extent {
    let mut best = gmon::layout::GNU_HEADER_BYTES as u64;
    for le in [true, false] {
        let e = Le(le);
        let version = e.u32(d, 4).unwrap_or(u64::MAX);
        if version != u64::from(gmon::layout::GNU_VERSION) && version != 0 {
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
    let mut pos = gmon::layout::GNU_HEADER_BYTES as u64;
    loop {
        let Some(&tag) = usize::try_from(pos).ok().and_then(|i| d.get(i)) else {
            // The next tag, if there is one.
            return Extent::Bytes(pos + 1);
        };
        let head = match tag {
            gmon::layout::TAG_TIME_HIST => 1 + 2 * p + 24,
            gmon::layout::TAG_CG_ARC => 1 + 2 * p + 4,
            gmon::layout::TAG_BB_COUNT if version == 0 => return Extent::ToEnd,
            gmon::layout::TAG_BB_COUNT => 1 + 4,
            // Not a record: nothing from here on belongs to the file.
            _ => return Extent::Bytes(pos),
        };
        if pos + head > len {
            return Extent::Bytes(pos + head);
        }
        if tag == gmon::layout::TAG_TIME_HIST
            && e.word(d, pos + 1, wide) > e.word(d, pos + 1 + p, wide)
        {
            // low_pc above high_pc: the parser rejects the record, so nothing after it counts.
            return Extent::Bytes(pos);
        }
        let body = match tag {
            gmon::layout::TAG_TIME_HIST => 2 * e.u32(d, pos + 1 + 2 * p).unwrap_or(0),
            gmon::layout::TAG_BB_COUNT => 2 * p * e.u32(d, pos + 1).unwrap_or(0),
            _ => 0,
        };
        pos += head + body;
    }
}

/// pcsample: the header, the object records (each gives its size), the samples.
fn pcsample(d: &[u8]) -> u64 {
    let e = Le(d[8] != 2);
    let p = if d[9] == 4 { 4 } else { 8 };
    let (Some(header), Some(objects), Some(samples)) = (e.u32(d, 12), e.u64(d, 24), e.u64(d, 32))
    else {
        return PROBE as u64;
    };
    let mut pos = header.max(u64::from(gmon::pcsample::HEADER_BYTES));
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
fn bsd(d: &[u8]) -> Option<u64> {
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
            let header = if version == u64::from(gmon::layout::BSD44_VERSION) {
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

    #[test]
    fn zeros_and_noise_justify_only_the_probe() {
        assert_eq!(justified_len(&[0; 4096]), Extent::Bytes(PROBE as u64));
        let noise: Vec<u8> = (0..4096u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        assert_eq!(justified_len(&noise), Extent::Bytes(PROBE as u64));
    }

    #[test]
    fn a_gnu_file_justifies_its_records_and_no_more() {
        let mut d = b"gmon".to_vec();
        d.extend_from_slice(&1u32.to_le_bytes());
        d.extend_from_slice(&[0; 12]);
        // A histogram of 3 bins with 8-byte addresses, then one arc.
        d.push(0);
        d.extend_from_slice(&0x1000u64.to_le_bytes());
        d.extend_from_slice(&0x1006u64.to_le_bytes());
        d.extend_from_slice(&3u32.to_le_bytes());
        d.extend_from_slice(&100u32.to_le_bytes());
        d.extend_from_slice(b"seconds\0\0\0\0\0\0\0\0s");
        d.extend_from_slice(&[1, 0, 2, 0, 3, 0]);
        d.push(1);
        d.extend_from_slice(&[7; 20]);
        let real = d.len() as u64;
        d.extend_from_slice(&[0xff; 100]);
        assert_eq!(justified_len(&d), Extent::Bytes(real));
        // Cut short inside the histogram: the walk asks for the rest of it.
        assert!(matches!(justified_len(&d[..70]), Extent::Bytes(n) if n > 70));
    }

    #[test]
    fn an_elf_file_justifies_its_tables_and_sections() {
        let me = std::fs::read(std::env::current_exe().unwrap()).unwrap();
        let Extent::Bytes(head) = justified_len(&me[..PROBE]) else {
            panic!("ELF is bounded")
        };
        assert!(head > PROBE as u64 && head <= me.len() as u64);
        // With the tables present, the answer is the whole file (a linker leaves no tail).
        assert_eq!(justified_len(&me), Extent::Bytes(me.len() as u64));
    }
}
