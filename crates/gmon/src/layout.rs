//! Byte layouts of the three formats (gprof-internals §1): magic numbers, tags and sizes.
//!
//! All records are packed; P below is the pointer size (4 or 8).

use crate::PtrSize;

/// The GNU magic cookie.
pub const GNU_MAGIC: &[u8; 4] = b"gmon";
/// The GNU version glibc writes.
pub const GNU_VERSION: u32 = 1;
/// Size of the GNU file header: cookie, version, 12 spare bytes.
pub const GNU_HEADER_BYTES: usize = 20;
/// GNU tag of a histogram record.
pub const TAG_TIME_HIST: u8 = 0;
/// GNU tag of a call-graph arc record.
pub const TAG_CG_ARC: u8 = 1;
/// GNU tag of a basic-block count record.
pub const TAG_BB_COUNT: u8 = 2;
/// Length of the `dimen` field of a GNU histogram record.
pub const DIMEN_BYTES: usize = 15;
/// The 4.4BSD `version` word (`GMONVERSION`).
pub const BSD44_VERSION: u32 = 0x0005_1879;

/// Body of a GNU histogram record before the bins: low_pc, high_pc (P each), hist_size,
/// prof_rate (4 each), dimen (15), dimen_abbrev (1) = 2P + 24.
pub const fn gnu_hist_header_bytes(ptr: PtrSize) -> usize {
    2 * ptr.bytes() + 24
}

/// Body of a GNU arc record: from_pc, self_pc (P each), count (always 4) = 2P + 4.
pub const fn gnu_arc_body_bytes(ptr: PtrSize) -> usize {
    2 * ptr.bytes() + 4
}

/// 4.4BSD header: lpc, hpc (P each), ncnt, version, profrate (4 each), spare (12) = 2P + 24.
pub const fn bsd44_header_bytes(ptr: PtrSize) -> usize {
    2 * ptr.bytes() + 24
}

/// Old BSD header: lpc, hpc (P each), ncnt (4), packed = 2P + 4.
pub const fn oldbsd_header_bytes(ptr: PtrSize) -> usize {
    2 * ptr.bytes() + 4
}

/// A BSD raw arc: from_pc, self_pc and count, P bytes each.
pub const fn bsd_arc_bytes(ptr: PtrSize) -> usize {
    3 * ptr.bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_match_gprof_constants() {
        // GMON_HDRSIZE_BSD44_64/32 and GMON_HDRSIZE_OLDBSD_64/32 from gprof's gmon.h.
        assert_eq!(bsd44_header_bytes(PtrSize::Eight), 40);
        assert_eq!(bsd44_header_bytes(PtrSize::Four), 32);
        assert_eq!(oldbsd_header_bytes(PtrSize::Eight), 20);
        assert_eq!(oldbsd_header_bytes(PtrSize::Four), 12);
        // 1 + 40 + 2n and 1 + 32 + 2n per histogram record; 21 / 13 bytes per arc record.
        assert_eq!(1 + gnu_hist_header_bytes(PtrSize::Eight), 41);
        assert_eq!(1 + gnu_hist_header_bytes(PtrSize::Four), 33);
        assert_eq!(1 + gnu_arc_body_bytes(PtrSize::Eight), 21);
        assert_eq!(1 + gnu_arc_body_bytes(PtrSize::Four), 13);
    }
}
