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
//!   and segment's bytes. Nothing past the last of them is read. (Read with `object`.)
//! * GNU, 4.4BSD and old BSD gmon, pcsample: the format crate's walk over the records
//!   ([`gmon::extent`]). Old-style (version 0) GNU basic-block records have no size field; a
//!   file that has them is read to its end, bounded by the reader's overall limit instead.
//! * anything else: the first [`PROBE`] bytes, enough for the parser to say what is wrong.

use object::elf::{FileHeader32, FileHeader64, SHT_NOBITS};
use object::read::elf::{FileHeader, ProgramHeader, SectionHeader};
use object::Endianness;

pub use gmon::extent::{Extent, BSD_HISTOGRAM_LIMIT, PROBE};

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
        return gmon::extent::gnu(prefix);
    }
    if prefix.starts_with(&gmon::pcsample::MAGIC) {
        return Extent::Bytes(gmon::extent::pcsample(prefix));
    }
    if let Some(n) = gmon::extent::bsd(prefix) {
        return Extent::Bytes(n);
    }
    Extent::Bytes(PROBE as u64)
}

/// ELF: the end of the furthest header table, section or segment (`object`'s ELF reader).
fn elf(d: &[u8]) -> u64 {
    match object::FileKind::parse(d) {
        Ok(object::FileKind::Elf32) => elf_of::<FileHeader32<Endianness>>(d),
        Ok(object::FileKind::Elf64) => elf_of::<FileHeader64<Endianness>>(d),
        _ => PROBE as u64,
    }
}

fn elf_of<H: FileHeader>(d: &[u8]) -> u64 {
    let Ok(h) = H::parse(d) else {
        return PROBE as u64;
    };
    let Ok(e) = h.endian() else {
        return PROBE as u64;
    };
    let (phoff, shoff): (u64, u64) = (h.e_phoff(e).into(), h.e_shoff(e).into());
    let (phent, shent) = (u64::from(h.e_phentsize(e)), u64::from(h.e_shentsize(e)));
    // Extended numbering: the real counts live in section 0 (sh_size, sh_info), which must
    // be read first.
    let s0 = shoff.saturating_add(shent);
    let (Ok(shnum), Ok(phnum)) = (h.shnum(e, d), h.phnum(e, d)) else {
        return s0;
    };
    let tables = |off: u64, n: u32, ent: u64| off.saturating_add(u64::from(n).saturating_mul(ent));
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
    let header = std::mem::size_of::<H>() as u64;
    let mut end = header.max(sh_end).max(ph_end);
    if (d.len() as u64) < end {
        // The tables are not all here yet: read them, then look again.
        return end;
    }
    if let Ok(sections) = h.section_headers(e, d) {
        for s in sections.iter().filter(|s| s.sh_type(e) != SHT_NOBITS) {
            end = end.max(s.sh_offset(e).into().saturating_add(s.sh_size(e).into()));
        }
    }
    if let Ok(segments) = h.program_headers(e, d) {
        for p in segments {
            end = end.max(p.p_offset(e).into().saturating_add(p.p_filesz(e).into()));
        }
    }
    end
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
