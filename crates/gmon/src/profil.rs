//! The profil(2) bin mapping: which histogram counter a program counter increments, and the
//! inverse (which addresses a counter covers).
//!
//! From the profil man pages (Linux profil(3), and the older BSD profil(2) text it descends
//! from): the PC has `offset` subtracted, is multiplied by `scale` and divided by 65536; the
//! counters are 16-bit, so a scale of `0x10000` (octal `0200000`) maps each 2 bytes of text to
//! one counter. In integer terms, exactly as glibc's `profil_count` computes it:
//!
//! ```text
//! bin = ((pc - offset) / 2) * scale / 65536        (pc < offset: not counted)
//! ```
//!
//! * `scale` 0 or 1 turns profiling off;
//! * `scale` 2 maps every PC (at or above `offset`) into the first counter (the historical
//!   "non-interrupting core clock");
//! * `0x10000` (≈ `0xffff`) is one counter per 2 bytes, `0x8000` one per 4 bytes, `0x4000` one
//!   per 8 bytes: in general `scale = RATIO × 0200000` and the buffer needs
//!   `bufsiz = region × RATIO` bytes, where RATIO is counter bytes per text byte.
//!
//! All arithmetic is done in `u128`, so no 64-bit address, offset or scale can overflow.
//! "PC" and "offset" are whatever address space the caller samples in: the runtime passes
//! runtime addresses (as mapped) and converts the range to link-time addresses only when it
//! writes the file.

use core::ops::Range;

/// `scale` for a one-to-one mapping: one 16-bit counter per 2 bytes of text.
pub const SCALE_1_TO_1: u32 = 0x10000;

/// Size in bytes of one histogram counter (`HISTCOUNTER` = `unsigned short`).
pub const COUNTER_BYTES: u64 = 2;

/// Whether `scale` turns profiling off (0 or 1).
pub const fn is_off(scale: u32) -> bool {
    scale <= 1
}

/// The counter index that `pc` maps to, before any comparison with the buffer size.
///
/// `None` when profiling is off (`scale` 0 or 1), when `pc < offset`, or when the index does not
/// fit in a `u64` (it can only exceed `u64` for scales above `0x10000`, i.e. beyond 1:1).
pub const fn bin_index(pc: u64, offset: u64, scale: u32) -> Option<u64> {
    if is_off(scale) || pc < offset {
        return None;
    }
    if scale == 2 {
        return Some(0);
    }
    let half = ((pc - offset) / 2) as u128;
    let idx = half * scale as u128 / 65536;
    if idx > u64::MAX as u128 {
        None
    } else {
        Some(idx as u64)
    }
}

/// The counter `pc` increments in a buffer of `nbins` counters, as profil(2) does it
/// ("if the resulting value is less than bufsiz"); `None` when the sample is dropped.
pub const fn pc_to_bin(pc: u64, offset: u64, scale: u32, nbins: u64) -> Option<u64> {
    match bin_index(pc, offset, scale) {
        Some(i) if i < nbins => Some(i),
        _ => None,
    }
}

/// The half-open range of addresses that map to counter `bin`, or `None` if no address does
/// (profiling off, or a scale above `0x10000` that skips this counter).
///
/// The end is saturated at `u64::MAX` (so the single address `u64::MAX` is never reported as
/// covered); scale 2 covers `[offset, u64::MAX)` with counter 0 and nothing with any other.
pub const fn bin_range(bin: u64, offset: u64, scale: u32) -> Option<Range<u64>> {
    if is_off(scale) {
        return None;
    }
    if scale == 2 {
        return if bin == 0 {
            Some(offset..u64::MAX)
        } else {
            None
        };
    }
    // bin = floor(x * s / 65536) with x = (pc - offset) / 2, so
    // x ranges over [ceil(bin * 65536 / s), ceil((bin + 1) * 65536 / s)).
    let s = scale as u128;
    let x_lo = div_ceil((bin as u128) * 65536, s);
    let x_hi = div_ceil((bin as u128 + 1) * 65536, s);
    if x_lo >= x_hi {
        return None;
    }
    let start = offset as u128 + 2 * x_lo;
    let end = offset as u128 + 2 * x_hi;
    if start >= u64::MAX as u128 {
        return None;
    }
    let end = if end > u64::MAX as u128 {
        u64::MAX
    } else {
        end as u64
    };
    Some(start as u64..end)
}

const fn div_ceil(a: u128, b: u128) -> u128 {
    a / b + if a % b == 0 { 0 } else { 1 }
}

/// `scale` for a ratio of counter bytes to text bytes (`RATIO × 0200000`), rounded down and
/// capped at one-to-one. `None` if `den` is 0.
pub const fn scale_for_ratio(num: u64, den: u64) -> Option<u32> {
    if den == 0 {
        return None;
    }
    let s = (num as u128) * (SCALE_1_TO_1 as u128) / (den as u128);
    Some(if s > SCALE_1_TO_1 as u128 {
        SCALE_1_TO_1
    } else {
        s as u32
    })
}

/// Buffer size in bytes (`bufsiz`) that lets every address of a `region_bytes`-long region
/// starting at `offset` land inside the buffer with this `scale`: `region × RATIO`, rounded up
/// to whole counters. `None` when profiling is off or the size does not fit in a `u64`.
pub const fn bufsiz_for(region_bytes: u64, scale: u32) -> Option<u64> {
    if is_off(scale) {
        return None;
    }
    if region_bytes == 0 {
        return Some(0);
    }
    match bin_index(region_bytes - 1, 0, scale) {
        Some(last) => match last.checked_add(1) {
            Some(n) => n.checked_mul(COUNTER_BYTES),
            None => None,
        },
        None => None,
    }
}

/// glibc's `__monstartup` choice of scale for a text of `text_bytes` and a counter buffer of
/// `kcount_bytes` bytes: `(int)((float)kcount/text * 65536)` when the buffer is smaller than
/// the text, else one-to-one. Reproduced with the same single-precision arithmetic, so a
/// runtime that wants glibc's exact bins can use it.
pub fn glibc_scale(kcount_bytes: u64, text_bytes: u64) -> u32 {
    if text_bytes == 0 || kcount_bytes >= text_bytes {
        return SCALE_1_TO_1;
    }
    let ratio = kcount_bytes as f32 / text_bytes as f32;
    (ratio * 65536.0) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn off_scales_count_nothing() {
        for s in [0, 1] {
            assert!(is_off(s));
            assert_eq!(bin_index(0x1000, 0x1000, s), None);
            assert_eq!(bin_range(0, 0, s), None);
        }
        assert!(!is_off(2));
    }

    #[test]
    fn scale_two_puts_everything_in_the_first_bin() {
        assert_eq!(bin_index(0x400000, 0x400000, 2), Some(0));
        assert_eq!(bin_index(u64::MAX, 0, 2), Some(0));
        assert_eq!(
            bin_index(0x3fffff, 0x400000, 2),
            None,
            "below offset is never counted"
        );
        assert_eq!(bin_range(0, 0x400000, 2), Some(0x400000..u64::MAX));
        assert_eq!(bin_range(1, 0x400000, 2), None);
    }

    #[test]
    fn one_to_one_is_one_counter_per_two_bytes() {
        let off = 0x1000;
        for pc in off..off + 64 {
            assert_eq!(bin_index(pc, off, SCALE_1_TO_1), Some((pc - off) / 2));
        }
        assert_eq!(bin_range(5, off, SCALE_1_TO_1), Some(off + 10..off + 12));
    }

    #[test]
    fn ffff_is_almost_one_to_one() {
        // 0xffff is the classic spelling of "1:1"; it falls one counter behind now and then.
        for pc in 0..200_000u64 {
            let a = bin_index(pc, 0, 0xffff).unwrap();
            let b = bin_index(pc, 0, SCALE_1_TO_1).unwrap();
            assert!(b - a <= 1 + pc / 131_072, "pc {pc}: {a} vs {b}");
        }
    }

    #[test]
    fn half_and_quarter_scales() {
        for pc in 0..64u64 {
            assert_eq!(bin_index(pc, 0, 0x8000), Some(pc / 4));
            assert_eq!(bin_index(pc, 0, 0x4000), Some(pc / 8));
        }
        assert_eq!(bin_range(3, 0, 0x8000), Some(12..16));
        assert_eq!(bin_range(3, 0, 0x4000), Some(24..32));
    }

    #[test]
    fn ratio_and_bufsiz_follow_the_man_page() {
        // RATIO = 1/2 (a counter for every 4 bytes) is scale 0100000 = 0x8000.
        assert_eq!(scale_for_ratio(1, 2), Some(0x8000));
        assert_eq!(scale_for_ratio(1, 4), Some(0x4000));
        assert_eq!(scale_for_ratio(1, 1), Some(SCALE_1_TO_1));
        assert_eq!(scale_for_ratio(3, 1), Some(SCALE_1_TO_1), "capped at 1:1");
        assert_eq!(scale_for_ratio(1, 0), None);
        // bufsiz = region × RATIO.
        assert_eq!(bufsiz_for(4096, 0x8000), Some(2048));
        assert_eq!(bufsiz_for(4096, 0x4000), Some(1024));
        assert_eq!(bufsiz_for(4096, SCALE_1_TO_1), Some(4096));
        assert_eq!(
            bufsiz_for(4097, 0x8000),
            Some(2050),
            "rounded up to whole counters"
        );
        assert_eq!(bufsiz_for(0, 0x8000), Some(0));
        assert_eq!(bufsiz_for(10, 0), None);
    }

    #[test]
    fn no_overflow_at_the_top_of_the_address_space() {
        let off = 0xffff_ff00_0000_0000;
        assert_eq!(
            bin_index(u64::MAX, off, SCALE_1_TO_1),
            Some((u64::MAX - off) / 2)
        );
        assert_eq!(bin_index(u64::MAX, 0, SCALE_1_TO_1), Some(u64::MAX / 2));
        // A scale far beyond 1:1 cannot overflow either; it just reports "no such bin".
        assert_eq!(bin_index(u64::MAX, 0, u32::MAX), None);
        assert!(bin_index(u64::MAX / 65536, 0, u32::MAX).is_some());
        let r = bin_range(u64::MAX / 2, 0, SCALE_1_TO_1).unwrap();
        assert_eq!(r, u64::MAX - 1..u64::MAX);
    }

    #[test]
    fn inverse_agrees_with_forward_mapping() {
        for scale in [
            2u32, 3, 0x4000, 0x8000, 32820, 0xffff, 0x10000, 0x18000, 0x30000,
        ] {
            let off = 0x40_0000u64;
            for bin in 0..300u64 {
                match bin_range(bin, off, scale) {
                    Some(r) => {
                        assert!(r.start < r.end);
                        assert_eq!(
                            bin_index(r.start, off, scale),
                            Some(bin),
                            "scale {scale:#x}"
                        );
                        if r.end < off + 1_000_000 {
                            assert_eq!(bin_index(r.end - 1, off, scale), Some(bin));
                            assert_ne!(bin_index(r.end, off, scale), Some(bin));
                        }
                        if r.start > off {
                            assert_ne!(bin_index(r.start - 1, off, scale), Some(bin));
                        }
                    }
                    None => {
                        // Nothing maps there: check the neighbourhood by brute force.
                        if scale != 2 {
                            let lo = off + (bin.saturating_sub(1) * 65536 / scale as u64) * 2;
                            for pc in lo..lo + 64 {
                                assert_ne!(bin_index(pc, off, scale), Some(bin));
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn glibc_sizing_example() {
        // gprof-internals §2.2 worked example: text 5016 bytes, kcountsize 2512 -> 32820.
        assert_eq!(glibc_scale(2512, 5016), 32820);
        assert_eq!(glibc_scale(5016, 5016), SCALE_1_TO_1);
        assert_eq!(pc_to_bin(0x1220, 0, 32820, 1256), Some(1161));
        // The buffer is slightly larger than the text needs: high_pc itself still lands in it.
        assert_eq!(pc_to_bin(5016, 0, 32820, 1256), Some(1255));
        assert_eq!(pc_to_bin(5020, 0, 32820, 1256), None);
    }
}
