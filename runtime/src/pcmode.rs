//! `PROFIL_MODE=pcsample`: every sample kept as it was taken (time, thread, runtime PC) in a
//! bounded buffer, written at exit in the gmon crate's pcsample format with a snapshot of the
//! loaded objects ([`crate::objects`]), instead of a histogram.
//!
//! The buffer holds `PROFIL_PCSAMPLES` samples ([`crate::config::DEFAULT_PCSAMPLES`] by
//! default), mapped once in the constructor. The handler claims a slot with one `fetch_add`
//! on the next-slot index and fills it with atomic stores, the PC last (`Release`); a slot
//! whose PC is still 0 when the file is written (a handler interrupted mid-store on another
//! thread) is left out and counted as dropped. When the buffer is full, later samples are
//! only counted, the file's header says so, and one line on stderr at exit says how many
//! samples were lost.

use core::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, AtomicUsize, Ordering};

use crate::sys;

/// Words per sample: time (ns since start), thread id (low 32 bits) and the object's slot + 1
/// ([`crate::objects`]; 0: none) above it, PC.
const WORDS: usize = 3;

static ON: AtomicBool = AtomicBool::new(false);
/// Set by `enable` and never cleared: the mode of this process's file.
static MODE: AtomicBool = AtomicBool::new(false);
static BUF: AtomicPtr<AtomicU64> = AtomicPtr::new(core::ptr::null_mut());
static CAP: AtomicUsize = AtomicUsize::new(0);
static NEXT: AtomicUsize = AtomicUsize::new(0);
static OVERFLOW: AtomicU64 = AtomicU64::new(0);
static T0_NS: AtomicU64 = AtomicU64::new(0);
static START_UNIX_NS: AtomicU64 = AtomicU64::new(0);

/// Map a buffer of `capacity` samples and start recording. Constructor only; false if the
/// memory cannot be mapped.
pub fn enable(capacity: usize) -> bool {
    let Some(bytes) = capacity.checked_mul(WORDS * 8) else {
        return false;
    };
    let Some(mem) = sys::map_zeroed(bytes.max(8)) else {
        return false;
    };
    BUF.store(mem as *mut AtomicU64, Ordering::Relaxed);
    CAP.store(capacity, Ordering::Relaxed);
    T0_NS.store(sys::monotonic_ns(), Ordering::Relaxed);
    START_UNIX_NS.store(sys::realtime_ns(), Ordering::Relaxed);
    MODE.store(true, Ordering::Relaxed);
    ON.store(true, Ordering::Release);
    true
}

/// Was pcsample mode turned on in this process (even if recording has stopped)?
pub fn enabled_once() -> bool {
    MODE.load(Ordering::Relaxed)
}

/// Is pcsample mode on?
pub fn enabled() -> bool {
    ON.load(Ordering::Acquire)
}

/// Keep one sample, with the slot of the shared object it was counted in (which tells an
/// object unloaded with `dlclose` from one loaded later at its addresses). *Async-signal-safe*:
/// `clock_gettime`, `gettid`, one `fetch_add` and atomic stores into memory mapped in the
/// constructor.
#[inline]
pub fn record(pc: usize, object: Option<usize>) {
    if !ON.load(Ordering::Acquire) {
        return;
    }
    let i = NEXT.fetch_add(1, Ordering::Relaxed);
    if i >= CAP.load(Ordering::Relaxed) {
        OVERFLOW.fetch_add(1, Ordering::Relaxed);
        return;
    }
    let t = sys::monotonic_ns().wrapping_sub(T0_NS.load(Ordering::Relaxed));
    let buf = BUF.load(Ordering::Relaxed);
    // SAFETY: BUF holds CAP × WORDS counters mapped in `enable` (published before ON) and never
    // unmapped; i < CAP and each slot is claimed by exactly one handler (fetch_add).
    unsafe {
        (*buf.add(i * WORDS)).store(t, Ordering::Relaxed);
        let slot = object.map_or(0, |o| o as u64 + 1);
        (*buf.add(i * WORDS + 1)).store(u64::from(sys::gettid()) | slot << 32, Ordering::Relaxed);
        (*buf.add(i * WORDS + 2)).store(pc as u64, Ordering::Release);
    }
}

/// Resume recording after [`stop`] (a failed exec), if the mode is on.
pub fn resume() {
    if enabled_once() {
        ON.store(true, Ordering::Release);
    }
}

/// Stop recording (samples after this are neither kept nor counted as dropped).
pub fn stop() {
    ON.store(false, Ordering::Release);
}

/// Forget every sample (a forked child starts afresh) and restart the clock of the timestamps.
pub fn clear() {
    let n = NEXT
        .swap(0, Ordering::AcqRel)
        .min(CAP.load(Ordering::Relaxed));
    let buf = BUF.load(Ordering::Relaxed);
    if !buf.is_null() {
        for w in 0..n * WORDS {
            // SAFETY: w < n × WORDS ≤ CAP × WORDS words of the mapping.
            unsafe { (*buf.add(w)).store(0, Ordering::Relaxed) };
        }
    }
    OVERFLOW.store(0, Ordering::Relaxed);
    T0_NS.store(sys::monotonic_ns(), Ordering::Relaxed);
    START_UNIX_NS.store(sys::realtime_ns(), Ordering::Relaxed);
}

/// The samples kept: (time ns, tid, pc, the object's slot) for each filled slot.
pub fn samples() -> impl Iterator<Item = (u64, u32, u64, Option<usize>)> {
    let n = NEXT
        .load(Ordering::Acquire)
        .min(CAP.load(Ordering::Relaxed));
    let buf = BUF.load(Ordering::Relaxed);
    (0..n).filter_map(move |i| {
        // SAFETY: i < CAP, inside the mapping (n is 0 when nothing was mapped).
        let (t, tid, pc) = unsafe {
            (
                (*buf.add(i * WORDS)).load(Ordering::Relaxed),
                (*buf.add(i * WORDS + 1)).load(Ordering::Relaxed),
                (*buf.add(i * WORDS + 2)).load(Ordering::Acquire),
            )
        };
        let slot = (tid >> 32) as usize;
        (pc != 0).then_some((t, tid as u32, pc, slot.checked_sub(1)))
    })
}

/// Samples claimed but not kept: the buffer was full, or (rarely) a slot was not finished.
pub fn dropped() -> u64 {
    let claimed = NEXT
        .load(Ordering::Acquire)
        .min(CAP.load(Ordering::Relaxed));
    let kept = samples().count();
    OVERFLOW.load(Ordering::Relaxed) + (claimed - kept) as u64
}

/// Did the buffer fill up?
pub fn full() -> bool {
    OVERFLOW.load(Ordering::Relaxed) > 0
}

/// Wall-clock time sampling started, ns since the Unix epoch.
pub fn start_unix_ns() -> u64 {
    START_UNIX_NS.load(Ordering::Relaxed)
}
