//! The programming interfaces of the seeds, driven by the runtime's clock: `profil` (counters
//! in the caller's buffer) and `pcsample` (raw PC values in the caller's array). The C entry
//! points are exported by the artifacts (see `runtime/include/profil_rt.h`); `moncontrol` lives
//! in the crate root ([`crate::set_counting`]).
//!
//! # profil(buf, bufsiz, offset, scale)
//!
//! On every sample the interrupted PC (a runtime address) has `offset` subtracted, is halved,
//! multiplied by `scale` and divided by 65536 ([`gmon::profil::pc_to_bin`]); if the result is
//! below `bufsiz / 2`, that 16-bit counter is incremented. Scale 0 or 1 turns profiling off,
//! `bufsiz` 0 makes it ineffective, scale 2 maps every PC at or above `offset` onto the first
//! counter, a new call replaces the previous one, and `profil(0, 0, 0, 0)` stops it. Counters
//! stop at 65535 instead of wrapping: a wrapped counter silently reports a hot spot as cold,
//! while a stopped one is at worst an undercount that the 16-bit file format could not hold
//! anyway (Solaris stops at 32767 because its counters are signed; ours are unsigned).
//!
//! # The extended form: profil(args, count, -1, flags)
//!
//! With `offset == -1` (Tru64), `buf` points to `count` (≤ 64) [`ProfilArgs`] ranges, each with
//! its own 32-bit counters, covering discontiguous address ranges (an executable and its
//! shared libraries): a PC in `[lowpc, highpc)` of a range increments counter
//! `((pc - offset) / 2) * scale / 65536` of that range's buffer (if below its `bufsiz / 4`).
//! The ranges must be non-empty, non-overlapping and ordered by decreasing `lowpc`, with
//! scales of at least 2; anything else fails with `EINVAL`. `count` 0 stops. A traditional call
//! stops extended profiling and vice versa. These counters stop at 2^32 − 1.
//!
//! # pcsample(samples, nsamples)
//!
//! On every sample the PC is stored in the next free slot of `samples` until `nsamples` are
//! stored. The first call returns 0; each later call returns how many PCs the previous
//! invocation stored, then starts over with the new array; `nsamples == 0` stops sampling. A
//! negative count, or one whose array would not fit in the address space, fails with `EINVAL`
//! and changes nothing (sampling into the previous array goes on); any other failure stops
//! sampling first, and the previous invocation's count is lost. (A `profil` call, failed or
//! not, always stops both forms first.)
//!
//! # User memory
//!
//! Both take memory the signal handler will write later. A buffer that is misaligned or not
//! writable when the call is made turns that interface off and fails with `EFAULT` instead of
//! crashing the program later (checked by reading and writing each page back through
//! `process_vm_readv`/`process_vm_writev`, which report bad addresses instead of faulting). A
//! buffer unmapped while in use cannot be detected; the caller must stop profiling first.
//!
//! # Switching safely
//!
//! The handler announces itself in an in-flight counter before it reads the settings; a call
//! that changes them first turns the interface off, then waits for the counter to drain, so no
//! handler is still writing into a buffer the caller has been told is no longer used.

use core::ffi::c_int;
use core::sync::atomic::{
    AtomicBool, AtomicI32, AtomicPtr, AtomicU16, AtomicU32, AtomicUsize, Ordering,
};

use crate::sys;

static IN_FLIGHT: AtomicUsize = AtomicUsize::new(0);
/// Set by the first call to any interface and never cleared: until then the handler skips
/// this module without touching the shared in-flight counter.
static EVER_USED: AtomicBool = AtomicBool::new(false);

static PROFIL_ON: AtomicBool = AtomicBool::new(false);
static PROFIL_BUF: AtomicPtr<AtomicU16> = AtomicPtr::new(core::ptr::null_mut());
static PROFIL_NBINS: AtomicUsize = AtomicUsize::new(0);
static PROFIL_OFFSET: AtomicUsize = AtomicUsize::new(0);
static PROFIL_SCALE: AtomicU32 = AtomicU32::new(0);

/// One range of the extended form (`struct profil_args` in `profil_rt.h`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ProfilArgs {
    /// 32-bit counters.
    pub buffer: *mut u32,
    /// Size of `buffer` in bytes.
    pub bufsiz: usize,
    /// End of the range (exclusive), runtime address.
    pub highpc: usize,
    /// Start of the range, runtime address.
    pub lowpc: usize,
    /// Subtracted from the PC before scaling.
    pub offset: usize,
    /// profil scale.
    pub scale: u32,
}

/// The most ranges the extended form takes.
pub const MAX_RANGES: usize = 64;

/// An empty range: filler for the unused slots of a fixed array of ranges.
pub(crate) const UNUSED_RANGE: ProfilArgs = ProfilArgs {
    buffer: core::ptr::null_mut(),
    bufsiz: 0,
    highpc: 0,
    lowpc: 0,
    offset: 0,
    scale: 0,
};

#[allow(clippy::declare_interior_mutable_const)]
const ZERO: AtomicUsize = AtomicUsize::new(0);
static EXT_ON: AtomicBool = AtomicBool::new(false);
static EXT_COUNT: AtomicUsize = AtomicUsize::new(0);
static EXT_BUF: [AtomicUsize; MAX_RANGES] = [ZERO; MAX_RANGES];
static EXT_NBINS: [AtomicUsize; MAX_RANGES] = [ZERO; MAX_RANGES];
static EXT_LOW: [AtomicUsize; MAX_RANGES] = [ZERO; MAX_RANGES];
static EXT_HIGH: [AtomicUsize; MAX_RANGES] = [ZERO; MAX_RANGES];
static EXT_OFFSET: [AtomicUsize; MAX_RANGES] = [ZERO; MAX_RANGES];
static EXT_SCALE: [AtomicUsize; MAX_RANGES] = [ZERO; MAX_RANGES];

static PCS_ON: AtomicBool = AtomicBool::new(false);
static PCS_BUF: AtomicPtr<AtomicUsize> = AtomicPtr::new(core::ptr::null_mut());
static PCS_CAP: AtomicUsize = AtomicUsize::new(0);
static PCS_LEN: AtomicUsize = AtomicUsize::new(0);
static PCS_CALLED: AtomicBool = AtomicBool::new(false);

/// Feed one sample to the interfaces in use. *Async-signal-safe*: atomics only.
#[inline]
pub fn record(pc: usize) {
    if !EVER_USED.load(Ordering::Relaxed) {
        return;
    }
    IN_FLIGHT.fetch_add(1, Ordering::SeqCst);
    if PROFIL_ON.load(Ordering::SeqCst) {
        let nbins = PROFIL_NBINS.load(Ordering::Relaxed) as u64;
        let offset = PROFIL_OFFSET.load(Ordering::Relaxed) as u64;
        let scale = PROFIL_SCALE.load(Ordering::Relaxed);
        if let Some(i) = gmon::profil::pc_to_bin(pc as u64, offset, scale, nbins) {
            let buf = PROFIL_BUF.load(Ordering::Relaxed);
            // SAFETY: PROFIL_BUF holds PROFIL_NBINS 2-byte-aligned counters that were checked to
            // be writable when profil() was called; the caller keeps them until it stops us.
            let c = unsafe { &*buf.add(i as usize) };
            let _ = c.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |v| v.checked_add(1));
        }
    }
    if EXT_ON.load(Ordering::SeqCst) {
        // Ranges are ordered by decreasing lowpc: the first one starting at or below pc is
        // the only one that can hold it.
        let n = EXT_COUNT.load(Ordering::Relaxed).min(MAX_RANGES);
        if let Some(r) = (0..n).find(|&r| EXT_LOW[r].load(Ordering::Relaxed) <= pc) {
            if pc < EXT_HIGH[r].load(Ordering::Relaxed) {
                let bin = gmon::profil::pc_to_bin(
                    pc as u64,
                    EXT_OFFSET[r].load(Ordering::Relaxed) as u64,
                    EXT_SCALE[r].load(Ordering::Relaxed) as u32,
                    EXT_NBINS[r].load(Ordering::Relaxed) as u64,
                );
                if let Some(i) = bin {
                    let buf = EXT_BUF[r].load(Ordering::Relaxed) as *const AtomicU32;
                    // SAFETY: the range's buffer holds EXT_NBINS[r] 4-byte-aligned counters,
                    // checked writable when the call was made.
                    let c = unsafe { &*buf.add(i as usize) };
                    let _ =
                        c.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |v| v.checked_add(1));
                }
            }
        }
    }
    if PCS_ON.load(Ordering::SeqCst) {
        let cap = PCS_CAP.load(Ordering::Relaxed);
        let slot = PCS_LEN.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
            (n < cap).then_some(n + 1)
        });
        if let Ok(n) = slot {
            let buf = PCS_BUF.load(Ordering::Relaxed);
            // SAFETY: n < PCS_CAP slots of the caller's checked array.
            unsafe { (*buf.add(n)).store(pc, Ordering::Relaxed) };
        }
    }
    IN_FLIGHT.fetch_sub(1, Ordering::SeqCst);
}

/// Turn `flag` off and wait until no handler is inside [`record`].
fn quiesce(flag: &AtomicBool) {
    EVER_USED.store(true, Ordering::SeqCst);
    flag.store(false, Ordering::SeqCst);
    while IN_FLIGHT.load(Ordering::SeqCst) != 0 {
        core::hint::spin_loop();
    }
}

/// What switching an interface on does about the clock: 0 start the real one, -1 nothing,
/// > 0 fail with that errno. Only [`set_test_clock`] changes it.
static TEST_CLOCK: AtomicI32 = AtomicI32::new(0);

/// The clock an interface starts when it is switched on, for tests and fuzzing of this module
/// (the fuzz target in `runtime/fuzz` and `runtime/tests/fuzz_regressions.rs`). Programs never
/// change it: the artifacts do not export [`set_test_clock`], so it stays [`TestClock::Real`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TestClock {
    /// Start the real sampling clock ([`crate::ensure_clock`]) if none runs: the default.
    Real,
    /// Start nothing and succeed: samples arrive only through explicit [`record`] calls, so a
    /// test can predict every counter (and no signal handler is installed).
    Absent,
    /// Start nothing and fail with this errno (taken as at least 1), as a refused clock would.
    Failing(Errno),
}

/// Choose what switching an interface on does about the clock (see [`TestClock`]); the
/// setting holds for every later call in the process.
pub fn set_test_clock(clock: TestClock) {
    let v = match clock {
        TestClock::Real => 0,
        TestClock::Absent => -1,
        TestClock::Failing(e) => e.max(1),
    };
    TEST_CLOCK.store(v, Ordering::SeqCst);
}

/// Start the clock an interface needs: the real one unless a test chose otherwise.
fn start_clock() -> Result<(), Errno> {
    match TEST_CLOCK.load(Ordering::SeqCst) {
        0 => crate::ensure_clock(),
        -1 => Ok(()),
        e => Err(e),
    }
}

/// Is `[addr, addr + len)` memory this process may write? Each page is read and written back
/// through the kernel, which reports a bad address as EFAULT instead of faulting.
fn writable(addr: usize, len: usize) -> bool {
    if len == 0 {
        return true;
    }
    let Some(end) = addr.checked_add(len) else {
        return false;
    };
    let page = 4096;
    let mut p = addr;
    while p < end {
        let n = (page - p % page).min(end - p).min(8);
        if !sys::rewrite_own_memory(p, n) {
            return false;
        }
        p = (p / page + 1) * page;
    }
    // The last bytes too (the loop touched only the first bytes of each page).
    sys::rewrite_own_memory(end - 1, 1)
}

/// Is `[addr, addr + len)` memory this process may read?
fn readable(addr: usize, len: usize) -> bool {
    let Some(end) = addr.checked_add(len) else {
        return false;
    };
    let mut p = addr;
    while p < end {
        if !sys::can_read_own_memory(p, (end - p).min(8)) {
            return false;
        }
        p = (p / 4096 + 1) * 4096;
    }
    len == 0 || sys::can_read_own_memory(end - 1, 1)
}

/// Why a call failed: an errno value.
pub type Errno = c_int;

/// `profil(buf, bufsiz, offset, scale)`, see the module docs.
///
/// # Safety
/// `buf` must stay valid for `bufsiz` bytes until profiling is turned off or replaced.
pub unsafe fn profil(buf: *mut u16, bufsiz: usize, offset: usize, scale: u32) -> Result<(), Errno> {
    if offset == usize::MAX {
        // SAFETY: the caller's contract for the extended form.
        return unsafe { profil_extended(buf as *const ProfilArgs, bufsiz) };
    }
    quiesce(&PROFIL_ON);
    quiesce(&EXT_ON); // a traditional call stops extended profiling
    if gmon::profil::is_off(scale) || (buf.is_null() && bufsiz == 0) {
        return Ok(());
    }
    let nbins = bufsiz / 2;
    if nbins > 0
        && (buf.is_null()
            || !(buf as usize).is_multiple_of(2)
            || !writable(buf as usize, nbins * 2))
    {
        return Err(libc::EFAULT);
    }
    PROFIL_BUF.store(buf as *mut AtomicU16, Ordering::Relaxed);
    PROFIL_NBINS.store(nbins, Ordering::Relaxed);
    PROFIL_OFFSET.store(offset, Ordering::Relaxed);
    PROFIL_SCALE.store(scale, Ordering::Relaxed);
    start_clock()?;
    PROFIL_ON.store(true, Ordering::SeqCst);
    Ok(())
}

/// The extended form: `count` ranges at `args`, see the module docs.
///
/// # Safety
/// Each range's buffer must stay valid for its `bufsiz` bytes until profiling is turned off or
/// replaced.
pub unsafe fn profil_extended(args: *const ProfilArgs, count: usize) -> Result<(), Errno> {
    quiesce(&EXT_ON);
    quiesce(&PROFIL_ON); // an extended call stops traditional profiling
    if count == 0 {
        return Ok(());
    }
    if count > MAX_RANGES {
        return Err(libc::EINVAL);
    }
    let bytes = count * core::mem::size_of::<ProfilArgs>();
    if args.is_null()
        || !(args as usize).is_multiple_of(core::mem::align_of::<ProfilArgs>())
        || !readable(args as usize, bytes)
    {
        return Err(libc::EFAULT);
    }
    // Copy the caller's ranges once: every check below and the settings stored after them
    // must see the same values, even if another thread rewrites the array during this call
    // (read twice, a range could pass the checks and then be stored with an unchecked buffer).
    let mut copy = [UNUSED_RANGE; MAX_RANGES];
    for (i, slot) in copy.iter_mut().take(count).enumerate() {
        // SAFETY: `args` was checked non-null, aligned and readable for `count` entries just
        // above; `read_volatile` copies each entry exactly once, without creating a reference
        // to memory that another thread may be writing.
        *slot = unsafe { core::ptr::read_volatile(args.add(i)) };
    }
    let ranges = &copy[..count];
    for (i, r) in ranges.iter().enumerate() {
        let ordered = i == 0 || r.highpc <= ranges[i - 1].lowpc;
        if r.lowpc >= r.highpc || !ordered || gmon::profil::is_off(r.scale) {
            return Err(libc::EINVAL);
        }
    }
    for r in ranges {
        let nbins = r.bufsiz / 4;
        if nbins > 0
            && (r.buffer.is_null()
                || !(r.buffer as usize).is_multiple_of(4)
                || !writable(r.buffer as usize, nbins * 4))
        {
            return Err(libc::EFAULT);
        }
    }
    for (i, r) in ranges.iter().enumerate() {
        EXT_BUF[i].store(r.buffer as usize, Ordering::Relaxed);
        EXT_NBINS[i].store(r.bufsiz / 4, Ordering::Relaxed);
        EXT_LOW[i].store(r.lowpc, Ordering::Relaxed);
        EXT_HIGH[i].store(r.highpc, Ordering::Relaxed);
        EXT_OFFSET[i].store(r.offset, Ordering::Relaxed);
        EXT_SCALE[i].store(r.scale as usize, Ordering::Relaxed);
    }
    EXT_COUNT.store(count, Ordering::Relaxed);
    start_clock()?;
    EXT_ON.store(true, Ordering::SeqCst);
    Ok(())
}

/// `pcsample(samples, nsamples)`, see the module docs. Returns what the call returns.
///
/// # Safety
/// `samples` must stay valid for `nsamples` entries until the next call.
pub unsafe fn pcsample(
    samples: *mut usize,
    nsamples: core::ffi::c_long,
) -> Result<core::ffi::c_long, Errno> {
    // An impossible count (negative, or an array larger than the address space) fails before
    // anything changes: sampling into the previous array goes on, and its count is kept.
    let Some(bytes) = usize::try_from(nsamples)
        .ok()
        .and_then(|n| n.checked_mul(core::mem::size_of::<usize>()))
    else {
        return Err(libc::EINVAL);
    };
    let cap = bytes / core::mem::size_of::<usize>();
    quiesce(&PCS_ON);
    let previous = if PCS_CALLED.swap(true, Ordering::Relaxed) {
        PCS_LEN
            .load(Ordering::Relaxed)
            .min(PCS_CAP.load(Ordering::Relaxed)) as core::ffi::c_long
    } else {
        0
    };
    PCS_LEN.store(0, Ordering::Relaxed);
    PCS_CAP.store(0, Ordering::Relaxed);
    if nsamples == 0 {
        return Ok(previous);
    }
    if samples.is_null()
        || !(samples as usize).is_multiple_of(core::mem::align_of::<usize>())
        || !writable(samples as usize, bytes)
    {
        return Err(libc::EFAULT);
    }
    PCS_BUF.store(samples as *mut AtomicUsize, Ordering::Relaxed);
    PCS_CAP.store(cap, Ordering::Relaxed);
    start_clock()?;
    PCS_ON.store(true, Ordering::SeqCst);
    Ok(previous)
}
