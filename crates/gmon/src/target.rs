//! Byte order and pointer size: the two facts a gmon file does not record.
//!
//! gprof takes both from the executable (`bfd_get_32/64` in the ELF's byte order, and the
//! ELF class for the pointer size). This crate does the same: every reader and writer takes
//! a [`Target`] value. Nothing here depends on the host except [`Target::host`].

use core::fmt;

/// Byte order of every multi-byte field in a gmon file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Endian {
    /// Least significant byte first (x86, most ARM and RISC-V systems).
    Little,
    /// Most significant byte first (s390x, classic SPARC, PowerPC BE, MIPS BE).
    Big,
}

impl Endian {
    /// The byte order of the machine this code runs on.
    pub const HOST: Endian = if cfg!(target_endian = "big") {
        Endian::Big
    } else {
        Endian::Little
    };

    /// The other byte order.
    pub const fn swapped(self) -> Endian {
        match self {
            Endian::Little => Endian::Big,
            Endian::Big => Endian::Little,
        }
    }

    /// `"little"` or `"big"`.
    pub const fn name(self) -> &'static str {
        match self {
            Endian::Little => "little",
            Endian::Big => "big",
        }
    }
}

impl fmt::Display for Endian {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Size of an address ("VMA") field: 4 bytes for ELF32, 8 bytes for ELF64.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PtrSize {
    /// 4-byte addresses (ELFCLASS32).
    Four,
    /// 8-byte addresses (ELFCLASS64).
    Eight,
}

impl PtrSize {
    /// The pointer size of the machine this code runs on (only 4 and 8 are supported).
    pub const HOST: PtrSize = if cfg!(target_pointer_width = "32") {
        PtrSize::Four
    } else {
        PtrSize::Eight
    };

    /// 4 or 8.
    pub const fn bytes(self) -> usize {
        match self {
            PtrSize::Four => 4,
            PtrSize::Eight => 8,
        }
    }

    /// `Some` for 4 or 8 bytes, `None` otherwise.
    pub const fn from_bytes(n: usize) -> Option<PtrSize> {
        match n {
            4 => Some(PtrSize::Four),
            8 => Some(PtrSize::Eight),
            _ => None,
        }
    }

    /// The largest address this size can hold.
    pub const fn max_address(self) -> u64 {
        match self {
            PtrSize::Four => u32::MAX as u64,
            PtrSize::Eight => u64::MAX,
        }
    }
}

impl fmt::Display for PtrSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-byte", self.bytes())
    }
}

/// How to decode a gmon file: its pointer size and byte order.
///
/// Take it from the executable the profile belongs to (ELF class and `EI_DATA`), as gprof
/// does. When no executable is at hand, [`Target::guess`] picks one from the file itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Target {
    /// Size of address fields (and of 4.4BSD/old BSD arc counts).
    pub ptr_size: PtrSize,
    /// Byte order of all multi-byte fields.
    pub endian: Endian,
}

impl Target {
    /// The machine this code runs on (what glibc on this host writes).
    pub const HOST: Target = Target {
        ptr_size: PtrSize::HOST,
        endian: Endian::HOST,
    };

    /// Build a target from its two parts.
    pub const fn new(ptr_size: PtrSize, endian: Endian) -> Target {
        Target { ptr_size, endian }
    }

    /// The target of an executable whose header says 64-bit or not and big-endian or not
    /// (ELF's `EI_CLASS` and `EI_DATA`): the pointer size and byte order its profiles use.
    pub const fn of_executable(is_64: bool, big_endian: bool) -> Target {
        Target {
            ptr_size: if is_64 { PtrSize::Eight } else { PtrSize::Four },
            endian: if big_endian {
                Endian::Big
            } else {
                Endian::Little
            },
        }
    }

    /// The machine this code runs on, as a `const fn`.
    pub const fn host() -> Target {
        Target::HOST
    }

    /// All four targets, host first, then the host's byte order with the other pointer size,
    /// then the other byte order (same pointer-size order). This is the order in which
    /// [`Target::guess`] breaks ties.
    pub const fn candidates() -> [Target; 4] {
        let other_ptr = match PtrSize::HOST {
            PtrSize::Four => PtrSize::Eight,
            PtrSize::Eight => PtrSize::Four,
        };
        let e = Endian::HOST;
        [
            Target::new(PtrSize::HOST, e),
            Target::new(other_ptr, e),
            Target::new(PtrSize::HOST, e.swapped()),
            Target::new(other_ptr, e.swapped()),
        ]
    }

    /// Guess the target of a gmon file when no executable is given.
    ///
    /// The file has no field that states its pointer size or byte order, so this is a
    /// heuristic, documented so that callers can say what they did:
    ///
    /// 1. Every candidate of [`Target::candidates`] (host first) is tried with the
    ///    no-allocation reader ([`crate::read::records`]), which checks every length field
    ///    against the file size.
    /// 2. A candidate scores higher when the whole file decodes without error; then when the
    ///    format is self-identifying under it (a GNU version word of 0 or 1, or the 4.4BSD
    ///    version word `0x00051879` at the place this pointer size puts it); then when no bytes
    ///    are left over after the last BSD arc; then when the histogram range is plausible
    ///    (non-empty, bins not wider than the range).
    /// 3. The best score wins; ties go to the earlier candidate, i.e. to the host.
    ///
    /// For GNU files the version word settles the byte order and the record lengths almost
    /// always settle the pointer size. Old BSD files are the weakest case (nothing but lengths
    /// to go on). If nothing decodes, the host target is returned and the reader's error
    /// will explain what is wrong.
    pub fn guess(data: &[u8]) -> Target {
        crate::read::guess_target(data)
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} pointers, {}-endian", self.ptr_size, self.endian)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn of_executable_maps_class_and_data() {
        let t = Target::of_executable(true, false);
        assert_eq!((t.ptr_size, t.endian), (PtrSize::Eight, Endian::Little));
        let t = Target::of_executable(false, true);
        assert_eq!((t.ptr_size, t.endian), (PtrSize::Four, Endian::Big));
    }

    #[test]
    fn host_is_x86_64_on_this_machine_kind() {
        // The constant must agree with the compiler's view of the host.
        assert_eq!(
            Target::host().ptr_size.bytes(),
            core::mem::size_of::<usize>()
        );
        let probe = 1u16.to_ne_bytes();
        let expect = if probe[0] == 1 {
            Endian::Little
        } else {
            Endian::Big
        };
        assert_eq!(Target::host().endian, expect);
    }

    #[test]
    fn candidates_are_distinct_and_host_first() {
        let c = Target::candidates();
        assert_eq!(c[0], Target::HOST);
        for i in 0..4 {
            for j in 0..i {
                assert_ne!(c[i], c[j]);
            }
        }
    }

    #[test]
    fn ptr_size_from_bytes() {
        assert_eq!(PtrSize::from_bytes(4), Some(PtrSize::Four));
        assert_eq!(PtrSize::from_bytes(8), Some(PtrSize::Eight));
        assert_eq!(PtrSize::from_bytes(2), None);
        assert_eq!(PtrSize::Four.max_address(), 0xffff_ffff);
    }
}
