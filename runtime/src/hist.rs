//! The histogram: one counter per bin of the main executable's text, shared by every thread.
//!
//! Address spaces: the executable's text is found at *runtime addresses* (where it is mapped);
//! the file records *link-time addresses* (as in the ELF), i.e. runtime − load bias, for PIE and
//! non-PIE alike. The range is widened to multiples of 16 bytes so that, at the default scale
//! (0x8000), every bin is exactly 4 bytes wide and gprof's bin-to-address arithmetic is exact: no
//! sample is split across a function boundary.
//!
//! Counters are `AtomicU32` in memory, incremented with `fetch_add` by the signal handler on
//! whatever thread was interrupted, so concurrent samples are never lost. The file format's
//! counters are 16 bits; the writer turns wider counts into extra histogram records over the
//! same range, which gprof sums.

use core::sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, Ordering};

/// Where the bins are and what they cover. Computed once in the constructor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Link-time address of bin 0 (16-byte aligned).
    pub link_lo: u64,
    /// Link-time end of the sampled text (16-byte aligned, exclusive).
    pub link_hi: u64,
    /// Number of bins.
    pub nbins: usize,
    /// profil scale: bin = ((pc − lo) / 2) × scale / 65536.
    pub scale: u32,
}

impl Layout {
    /// The layout for executable text `[lo, hi)` (link-time) at profil `scale` (2 ..= 65536).
    ///
    /// ```
    /// use profil_rt::hist::{bin_index, Layout};
    /// // A PIE whose text runs from 0x1044 to 0x1395, at the default scale:
    /// let l = Layout::new(0x1044, 0x1395, 0x8000).unwrap();
    /// assert_eq!((l.link_lo, l.link_hi), (0x1040, 0x13a0)); // widened to 16-byte bounds
    /// assert_eq!(l.nbins, 0x360 / 4); // exactly 4 bytes per bin
    /// assert_eq!(bin_index(0x1223 - l.link_lo, l.scale), Some(0x1e3 / 4));
    /// ```
    pub fn new(lo: u64, hi: u64, scale: u32) -> Option<Layout> {
        let link_lo = lo & !15;
        let link_hi = hi.checked_add(15)? & !15;
        if link_hi <= link_lo || !(2..=0x10000).contains(&scale) {
            return None;
        }
        let nbins = usize::try_from(bin_index(link_hi - link_lo - 1, scale)?).ok()? + 1;
        Some(Layout {
            link_lo,
            link_hi,
            nbins,
            scale,
        })
    }

    /// Bytes of text covered.
    pub fn span(&self) -> u64 {
        self.link_hi - self.link_lo
    }

    /// The high_pc to write in the file: gprof derives the bin width from
    /// `(high_pc − low_pc) / 2 / nbins`, so when a bin is a whole number of bytes (always at the
    /// default scale) the range is written as exactly `nbins` bins, and gprof maps each bin to
    /// precisely the addresses the runtime counted in it.
    pub fn file_high_pc(&self) -> u64 {
        let width2 = 0x20000u64; // bin width in bytes × scale
        if self.scale != 2 && width2.is_multiple_of(u64::from(self.scale)) {
            self.link_lo + self.nbins as u64 * (width2 / u64::from(self.scale))
        } else {
            self.link_hi
        }
    }
}

/// The profil(2) bin of a byte offset into the range (scale 2 puts everything in bin 0, as the
/// gmon crate's `profil` module defines it). `None` when the product overflows (offsets of
/// 2^47 bytes and more; no executable is that large).
pub fn bin_index(offset: u64, scale: u32) -> Option<u64> {
    if scale == 2 {
        return Some(0);
    }
    Some((offset / 2).checked_mul(u64::from(scale))? >> 16)
}

// The state the signal handler reads. Written in the constructor before RECORDING is set with
// Release ordering; the handler loads RECORDING with Acquire, so it sees them complete.
static BINS: AtomicPtr<AtomicU32> = AtomicPtr::new(core::ptr::null_mut());
static NBINS: AtomicUsize = AtomicUsize::new(0);
static RUNTIME_LO: AtomicUsize = AtomicUsize::new(0);
static SPAN: AtomicUsize = AtomicUsize::new(0);
static SCALE: AtomicU32 = AtomicU32::new(0);
static RECORDING: AtomicBool = AtomicBool::new(false);
/// `moncontrol(0)`: samples still count toward the achieved rate, but not into the bins.
static PAUSED: AtomicBool = AtomicBool::new(false);
/// Every sample taken while recording, inside the range or not: the achieved rate is this over
/// the CPU time.
static SAMPLES: AtomicU64 = AtomicU64::new(0);

/// Set up the counters for `layout`, with the executable loaded at `bias`. Constructor only;
/// returns false if the memory cannot be mapped.
pub fn allocate(layout: &Layout, bias: u64) -> bool {
    let Some(bytes) = layout.nbins.checked_mul(core::mem::size_of::<AtomicU32>()) else {
        return false;
    };
    let Some(mem) = crate::sys::map_zeroed(bytes) else {
        return false;
    };
    BINS.store(mem as *mut AtomicU32, Ordering::Relaxed);
    NBINS.store(layout.nbins, Ordering::Relaxed);
    RUNTIME_LO.store(
        layout.link_lo.wrapping_add(bias) as usize,
        Ordering::Relaxed,
    );
    SPAN.store(layout.span() as usize, Ordering::Relaxed);
    SCALE.store(layout.scale, Ordering::Relaxed);
    true
}

/// Start (true) or stop counting samples.
pub fn set_recording(on: bool) {
    RECORDING.store(on, Ordering::Release);
}

/// Pause (`true`) or resume counting samples into the bins; returns the previous setting.
pub fn set_paused(paused: bool) -> bool {
    PAUSED.swap(paused, Ordering::AcqRel)
}

/// Count one sample at runtime address `pc`. *Async-signal-safe*: loads and one `fetch_add`.
/// Returns true when the sample is to be counted but lies outside the executable's text (for
/// the shared objects' histograms, [`crate::objects`]).
#[inline]
pub fn record(pc: usize) -> bool {
    if !RECORDING.load(Ordering::Acquire) {
        return false;
    }
    SAMPLES.fetch_add(1, Ordering::Relaxed);
    if PAUSED.load(Ordering::Relaxed) {
        return false;
    }
    let offset = pc.wrapping_sub(RUNTIME_LO.load(Ordering::Relaxed));
    if offset >= SPAN.load(Ordering::Relaxed) {
        return true; // outside the executable's text (shared libraries, vdso)
    }
    let Some(idx) = bin_index(offset as u64, SCALE.load(Ordering::Relaxed)) else {
        return false;
    };
    if idx < NBINS.load(Ordering::Relaxed) as u64 {
        let bins = BINS.load(Ordering::Relaxed);
        // SAFETY: BINS points to NBINS counters mapped in `allocate` and never unmapped, and
        // idx < NBINS. RECORDING is only set after `allocate` succeeded.
        unsafe { (*bins.add(idx as usize)).fetch_add(1, Ordering::Relaxed) };
    }
    false
}

/// Are samples being counted into the bins (recording, not paused)? *Async-signal-safe.*
#[inline]
pub fn counting() -> bool {
    RECORDING.load(Ordering::Acquire) && !PAUSED.load(Ordering::Relaxed)
}

/// All samples taken so far (inside the range or not).
pub fn samples() -> u64 {
    SAMPLES.load(Ordering::Relaxed)
}

/// The counters, for the writer (empty before `allocate`).
pub fn counters() -> &'static [AtomicU32] {
    let p = BINS.load(Ordering::Relaxed);
    if p.is_null() {
        return &[];
    }
    // SAFETY: `allocate` mapped NBINS zero-initialised AtomicU32s at BINS; the mapping lives for
    // the rest of the process and is only accessed through atomics.
    unsafe { core::slice::from_raw_parts(p, NBINS.load(Ordering::Relaxed)) }
}

/// Zero every counter and the sample count (for a forked child that starts afresh). The
/// pages are handed back to the kernel, which is instant and frees the child's copies.
pub fn clear() {
    let c = counters();
    if !c.is_empty() && !crate::sys::discard_pages(c.as_ptr() as *mut u8, core::mem::size_of_val(c))
    {
        for c in c {
            c.store(0, Ordering::Relaxed);
        }
    }
    SAMPLES.store(0, Ordering::Relaxed);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_scale_gives_exact_four_byte_bins_on_16_byte_bounds() {
        let l = Layout::new(0x1044, 0x1395, 0x8000).unwrap();
        assert_eq!((l.link_lo, l.link_hi), (0x1040, 0x13a0));
        assert_eq!(l.nbins, (0x13a0 - 0x1040) / 4);
        assert_eq!(l.file_high_pc(), l.link_hi);
        // gprof's bin width: ((high - low) / 2) / nbins halfwords must be exactly 2.
        assert_eq!((l.file_high_pc() - l.link_lo) / 2, 2 * l.nbins as u64);
        for off in [0u64, 3, 4, 7, 8, 0x35f] {
            assert_eq!(bin_index(off, l.scale), Some(off / 4));
        }
    }

    #[test]
    fn scale_65536_is_one_bin_per_halfword_and_scale_2_is_64k_per_bin() {
        let l = Layout::new(0x400000, 0x400100, 0x10000).unwrap();
        assert_eq!(l.nbins, 0x80);
        assert_eq!(l.file_high_pc(), 0x400100);
        let l = Layout::new(0, 0x30000, 2).unwrap();
        assert_eq!(l.nbins, 1);
        assert_eq!(bin_index(0xffff, 2), Some(0));
        assert_eq!(bin_index(0x2ffff, 2), Some(0));
        assert_eq!(l.file_high_pc(), 0x30000);
    }

    #[test]
    fn odd_scales_cover_the_whole_range() {
        for scale in [3u32, 1000, 0x7fff, 0x8001, 0xffff] {
            let l = Layout::new(0x1000, 0x5123, scale).unwrap();
            let last = bin_index(l.span() - 1, scale).unwrap();
            assert_eq!(last as usize + 1, l.nbins, "scale {scale}");
        }
    }

    #[test]
    fn rejects_empty_ranges_and_bad_scales() {
        assert!(Layout::new(0x1000, 0x1000, 0x8000).is_none());
        assert!(Layout::new(0x1000, 0x2000, 1).is_none());
        assert!(Layout::new(0x1000, 0x2000, 0x10001).is_none());
        assert!(Layout::new(0, u64::MAX, 0x8000).is_none());
    }
}
