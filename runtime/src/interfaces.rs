//! Safe Rust access to the programming interfaces of the *injected* runtime.
//!
//! A Rust program profiled with `-C link-arg=<profil_rt.o>` can depend on this crate and call
//! these functions. They go through the C entry points (`profil`, `pcsample`, `moncontrol`,
//! see `runtime/include/profil_rt.h`) that the injected object exports, because that object
//! carries its own copy of the runtime's state; this crate's code is not what samples. Hence:
//! without the runtime linked in, `pcsample` is an undefined symbol at link time, and
//! `profil`/`moncontrol` bind to glibc's versions (100 Hz, counters that wrap).
//!
//! The handler writes into the buffers until profiling is stopped or replaced, so they are
//! `&'static` slices of atomics (a `static`, or `Box::leak`), which the program reads while
//! the handler writes. Semantics in detail: [`crate::api`].

use core::ffi::{c_int, c_long, c_uint};
use core::sync::atomic::{AtomicU16, AtomicU32, AtomicUsize};

use crate::api::{ProfilArgs, MAX_RANGES, UNUSED_RANGE};

extern "C" {
    #[link_name = "profil"]
    fn c_profil(buf: *mut u16, bufsiz: usize, offset: usize, scale: c_uint) -> c_int;
    #[link_name = "pcsample"]
    fn c_pcsample(samples: *mut usize, nsamples: c_long) -> c_long;
    #[link_name = "moncontrol"]
    fn c_moncontrol(mode: c_int);
    #[link_name = "profil_rt_hz"]
    fn c_profil_rt_hz() -> c_uint;
    #[link_name = "profil_rt_set_hz"]
    fn c_profil_rt_set_hz(hz: c_uint) -> c_int;
}

/// Samples per CPU-second the interfaces receive (`sysconf(_SC_CLK_TCK)` unless
/// [`set_rate`] chose another), as `profil_rt_hz()`.
pub fn rate() -> u32 {
    // SAFETY: no arguments.
    unsafe { c_profil_rt_hz() }
}

/// Ask for `hz` samples per CPU-second for the interfaces (0: `sysconf(_SC_CLK_TCK)`).
pub fn set_rate(hz: u32) -> Result<(), Errno> {
    // SAFETY: takes a plain integer.
    check(unsafe { c_profil_rt_set_hz(hz) }.into()).map(|_| ())
}

/// An errno value from a failed call.
pub type Errno = c_int;

fn check(r: c_long) -> Result<c_long, Errno> {
    if r < 0 {
        Err(crate::sys::errno())
    } else {
        Ok(r)
    }
}

/// Count samples into `counters`: counter `((pc - offset) / 2) * scale / 65536` for each
/// sample's PC (a runtime address). Replaces any earlier `profil`; scale 0 or 1 stops.
pub fn profil(counters: &'static [AtomicU16], offset: usize, scale: u32) -> Result<(), Errno> {
    // SAFETY: the counters live forever and are atomics, so the handler's later writes race
    // with nothing the program does non-atomically.
    check(
        unsafe {
            c_profil(
                counters.as_ptr() as *mut u16,
                core::mem::size_of_val(counters),
                offset,
                scale,
            )
        }
        .into(),
    )
    .map(|_| ())
}

/// Stop `profil` (traditional or extended).
pub fn profil_stop() {
    // SAFETY: profil(0, 0, 0, 0) only turns profiling off.
    unsafe { c_profil(core::ptr::null_mut(), 0, 0, 0) };
}

/// One range of [`profil_ranges`].
#[derive(Clone, Copy, Debug)]
pub struct Range {
    /// 32-bit counters for this range.
    pub counters: &'static [AtomicU32],
    /// Start of the range (runtime address).
    pub low: usize,
    /// End of the range (exclusive).
    pub high: usize,
    /// Subtracted from the PC before scaling.
    pub offset: usize,
    /// profil scale.
    pub scale: u32,
}

/// The extended form: up to 64 discontiguous ranges, non-overlapping and ordered by decreasing
/// `low` (`EINVAL` otherwise). Counter `((pc - offset) * scale / 65536) / 4` of a range counts
/// its PC; `counters` must reach the counter of `high - 1` (`EINVAL` otherwise). Replaces any
/// earlier `profil`; an empty slice stops.
pub fn profil_ranges(ranges: &[Range]) -> Result<(), Errno> {
    if ranges.len() > MAX_RANGES {
        return Err(libc::EINVAL);
    }
    let mut args = [UNUSED_RANGE; MAX_RANGES];
    for (a, r) in args.iter_mut().zip(ranges) {
        *a = ProfilArgs {
            buffer: r.counters.as_ptr() as *mut u32,
            highpc: r.high,
            lowpc: r.low,
            offset: r.offset,
            scale: r.scale,
        };
        // The runtime takes the buffer's extent from the range (Tru64's layout has no size):
        // a slice too short for it is refused here.
        if crate::api::extended_counters(a).is_none_or(|n| n > r.counters.len()) {
            return Err(libc::EINVAL);
        }
    }
    // SAFETY: `args` holds `ranges.len()` valid entries for the call (the runtime copies them);
    // the counters they point to live forever, are atomics, and cover each range.
    check(unsafe { c_profil(args.as_mut_ptr() as *mut u16, ranges.len(), usize::MAX, 0) }.into())
        .map(|_| ())
}

/// Store each sample's PC into `samples` until it is full. Returns how many PCs the previous
/// call's array received (0 on the first call).
pub fn pcsample(samples: &'static [AtomicUsize]) -> Result<usize, Errno> {
    let n = c_long::try_from(samples.len()).map_err(|_| libc::EINVAL)?;
    if n == 0 {
        return Ok(pcsample_stop());
    }
    // SAFETY: the array lives forever and is made of atomics.
    check(unsafe { c_pcsample(samples.as_ptr() as *mut usize, n) }).map(|r| r as usize)
}

/// Stop `pcsample`; returns how many PCs the last array received.
pub fn pcsample_stop() -> usize {
    // SAFETY: pcsample(NULL, 0) only stops sampling.
    let r = unsafe { c_pcsample(core::ptr::null_mut(), 0) };
    r.max(0) as usize
}

/// Pause (`false`) or resume counting samples into the automatic profile.
pub fn moncontrol(on: bool) {
    // SAFETY: moncontrol takes a plain integer.
    unsafe { c_moncontrol(c_int::from(on)) };
}
