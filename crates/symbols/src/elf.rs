//! A non-generic view of an ELF executable: sections and raw symbol tables.
//!
//! Everything here is read with the `object` crate's low-level ELF API and copied into plain
//! `u64`/`u32` fields, so the layers above never see the 32/64-bit or byte-order generics.
//! Names stay borrowed from the file. Addresses are **link-time addresses** (`st_value`,
//! `sh_addr`), exactly as written in the ELF.

use object::elf;
use object::read::elf::{FileHeader, SectionHeader, Sym};
use object::{Endianness, FileKind};

use crate::Error;

/// One section header.
#[derive(Debug, Clone)]
pub struct Section<'data> {
    /// Section name from `.shstrtab` (empty if unreadable).
    pub name: &'data [u8],
    /// `sh_type`.
    pub sh_type: u32,
    /// `sh_flags`.
    pub flags: u64,
    /// `sh_addr`: link-time address.
    pub addr: u64,
    /// `sh_size` in bytes.
    pub size: u64,
}

impl Section<'_> {
    /// Executable section (`SHF_EXECINSTR`).
    pub fn is_exec(&self) -> bool {
        self.flags & elf::SHF_EXECINSTR.0 != 0
    }
}

/// One entry of a symbol table, with every field decoded.
#[derive(Debug, Clone, Copy)]
pub struct RawSymbol {
    /// Index in the symbol table (0 is the null symbol, never returned).
    pub index: usize,
    /// `st_name`: offset of the name in the table's string section.
    pub name_offset: u32,
    /// `st_value`: link-time address for defined symbols of executables.
    pub value: u64,
    /// `st_size` in bytes (0 when unknown).
    pub size: u64,
    /// `STB_*` binding.
    pub bind: u8,
    /// `STT_*` type.
    pub typ: u8,
    /// `STV_*` visibility (the low two bits of `st_other`).
    pub visibility: u8,
    /// Section index, with `SHN_XINDEX` resolved; special values (`SHN_ABS`, ...) kept as is.
    pub shndx: u32,
}

/// A symbol table (`.symtab` or `.dynsym`) and its string table.
#[derive(Debug, Clone, Default)]
pub struct SymbolTable<'data> {
    /// The whole string section, so that callers can reproduce reads past one name's NUL.
    pub strtab: &'data [u8],
    /// Every symbol except the null entry, in table order.
    pub symbols: Vec<RawSymbol>,
}

impl<'data> SymbolTable<'data> {
    /// The NUL-terminated name of `sym` (empty if the offset is out of range).
    pub fn name(&self, sym: &RawSymbol) -> &'data [u8] {
        let tail = self.strtab.get(sym.name_offset as usize..).unwrap_or(&[]);
        let end = tail.iter().position(|&b| b == 0).unwrap_or(tail.len());
        &tail[..end]
    }
}

/// The parts of an ELF executable the analyzer needs.
#[derive(Debug, Clone)]
pub struct ElfImage<'data> {
    /// ELF64 (pointer size 8) or ELF32 (4).
    pub is_64: bool,
    /// Byte order of the file (and of the gmon files made for it).
    pub big_endian: bool,
    /// `e_machine`.
    pub machine: u16,
    /// Section headers, indexed by section number.
    pub sections: Vec<Section<'data>>,
    /// `.symtab`, if present and non-empty.
    pub symtab: Option<SymbolTable<'data>>,
    /// `.dynsym`, if present and non-empty.
    pub dynsym: Option<SymbolTable<'data>>,
}

/// True if `data` starts like an ELF file (used to tell executables from gmon files).
pub fn looks_like_elf(data: &[u8]) -> bool {
    data.starts_with(b"\x7fELF")
}

impl<'data> ElfImage<'data> {
    /// Parse an ELF file. Errors are one sentence without the file name.
    pub fn parse(data: &'data [u8]) -> Result<Self, Error> {
        if !looks_like_elf(data) {
            return Err(Error::new("not an ELF file"));
        }
        match FileKind::parse(data) {
            Ok(FileKind::Elf32) => parse_generic::<elf::FileHeader32<Endianness>>(data, false),
            Ok(FileKind::Elf64) => parse_generic::<elf::FileHeader64<Endianness>>(data, true),
            Ok(_) => Err(Error::new("unsupported ELF variant")),
            Err(e) => Err(Error::new(format!(
                "corrupt ELF header at byte 0 ({} bytes in the file): {e}",
                data.len()
            ))),
        }
    }

    /// Pointer size in bytes (4 or 8).
    pub fn pointer_size(&self) -> usize {
        if self.is_64 {
            8
        } else {
            4
        }
    }

    /// The first section called exactly `name`.
    pub fn section_by_name(&self, name: &str) -> Option<&Section<'data>> {
        self.sections.iter().find(|s| s.name == name.as_bytes())
    }
}

fn parse_generic<'data, Elf: FileHeader<Endian = Endianness>>(
    data: &'data [u8],
    is_64: bool,
) -> Result<ElfImage<'data>, Error> {
    // `object` says what is wrong but not where: every message here adds the byte offset and
    // extent of the part that failed, read from the headers that did parse.
    let corrupt =
        |what: &str, e: object::read::Error| Error::new(format!("corrupt ELF {what}: {e}"));
    let header_size = size_of::<Elf>();
    let header = Elf::parse(data).map_err(|e| {
        corrupt(
            &format!(
                "header at byte 0 ({header_size} bytes, {} in the file)",
                data.len()
            ),
            e,
        )
    })?;
    let endian = header
        .endian()
        .map_err(|e| corrupt("header at byte 5 (EI_DATA)", e))?;
    let table = header.sections(endian, data).map_err(|e| {
        let shoff: u64 = header.e_shoff(endian).into();
        corrupt(
            &format!(
                "section header table at byte {shoff} ({} entries of {} bytes, {} bytes in the file)",
                header.e_shnum(endian),
                header.e_shentsize(endian),
                data.len()
            ),
            e,
        )
    })?;
    // Where a section's contents claim to be, for messages.
    let extent = |index: usize| -> String {
        match table.section(object::SectionIndex(index)) {
            Ok(sh) => {
                let (off, size): (u64, u64) =
                    (sh.sh_offset(endian).into(), sh.sh_size(endian).into());
                format!(
                    "section {index} at byte {off}, {size} bytes, {} bytes in the file",
                    data.len()
                )
            }
            Err(_) => format!("section {index}, whose header is missing"),
        }
    };
    let mut sections = Vec::with_capacity(table.len());
    for sh in table.iter() {
        let name = table.section_name(endian, sh).unwrap_or(&[]);
        sections.push(Section {
            name,
            sh_type: sh.sh_type(endian).0,
            flags: sh.sh_flags(endian).0,
            addr: sh.sh_addr(endian).into(),
            size: sh.sh_size(endian).into(),
        });
    }
    let read_table = |sh_type| -> Result<Option<SymbolTable<'data>>, Error> {
        let st = table.symbols(endian, data, sh_type).map_err(|e| {
            let index = table
                .iter()
                .position(|sh| sh.sh_type(endian) == sh_type)
                .unwrap_or(0);
            corrupt(&format!("symbol table ({})", extent(index)), e)
        })?;
        if st.is_empty() {
            return Ok(None);
        }
        let strtab = table
            .section(st.string_section())
            .and_then(|s| s.data(endian, data))
            .map_err(|e| {
                corrupt(
                    &format!("string table ({})", extent(st.string_section().0)),
                    e,
                )
            })?;
        let mut symbols = Vec::with_capacity(st.len().saturating_sub(1));
        for (index, sym) in st.iter().enumerate().skip(1) {
            let shndx = sym.st_shndx(endian);
            let shndx = if shndx == elf::SHN_XINDEX {
                st.shndx(endian, object::SymbolIndex(index)).unwrap_or(0)
            } else {
                u32::from(shndx.0)
            };
            symbols.push(RawSymbol {
                index,
                name_offset: sym.st_name(endian),
                value: sym.st_value(endian).into(),
                size: sym.st_size(endian).into(),
                bind: sym.st_bind().0,
                typ: sym.st_type().0,
                visibility: sym.st_other().0 & 3,
                shndx,
            });
        }
        Ok(Some(SymbolTable { strtab, symbols }))
    };
    let symtab = read_table(elf::SHT_SYMTAB)?;
    let dynsym = read_table(elf::SHT_DYNSYM)?;
    Ok(ElfImage {
        is_64,
        big_endian: endian == Endianness::Big,
        machine: header.e_machine(endian).0,
        sections,
        symtab,
        dynsym,
    })
}

#[cfg(test)]
mod tests {
    use super::ElfImage;

    /// A real executable (gcc, x86-64), corrupted in the tests below.
    const PROG: &[u8] = include_bytes!("../../../fixtures/malformed/prog");

    fn err(data: &[u8]) -> String {
        match ElfImage::parse(data) {
            Ok(_) => panic!("parsed"),
            Err(e) => e.to_string(),
        }
    }

    fn u64_at(d: &[u8], off: usize) -> u64 {
        u64::from_le_bytes(d[off..off + 8].try_into().unwrap())
    }

    #[test]
    fn the_intact_file_parses() {
        let image = ElfImage::parse(PROG).expect("fixture parses");
        assert!(image.symtab.is_some());
    }

    #[test]
    fn a_short_header_names_its_extent() {
        let e = err(&PROG[..40]);
        assert!(
            e.starts_with("corrupt ELF header at byte 0 (64 bytes, 40 in the file)"),
            "{e}"
        );
    }

    #[test]
    fn a_truncated_section_header_table_names_its_offset() {
        let shoff = u64_at(PROG, 0x28);
        let e = err(&PROG[..4096]);
        let want = format!("corrupt ELF section header table at byte {shoff} (");
        assert!(e.starts_with(&want), "{e}");
        assert!(e.contains("4096 bytes in the file"), "{e}");
    }

    #[test]
    fn a_symbol_table_past_the_end_names_its_section_and_offset() {
        let mut d = PROG.to_vec();
        let shoff = u64_at(&d, 0x28) as usize;
        let shnum = u16::from_le_bytes([d[0x3c], d[0x3d]]) as usize;
        let index = (0..shnum)
            .find(|i| d[shoff + 64 * i + 4] == 2) // SHT_SYMTAB
            .expect("fixture has .symtab");
        let bad = d.len() as u64 + 100;
        d[shoff + 64 * index + 24..][..8].copy_from_slice(&bad.to_le_bytes());
        let e = err(&d);
        let want = format!("corrupt ELF symbol table (section {index} at byte {bad}, ");
        assert!(e.starts_with(&want), "{e}");
    }
}
