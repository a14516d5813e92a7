//! The programming interfaces of the seeds, driven by the runtime's clock: `profil` (counters
//! in the caller's buffer, Solaris/Tru64/4.4BSD/Linux profil(2)), its Tru64 extended form, and
//! `pcsample` (raw PC values in the caller's array, Solaris pcsample(2)). The C entry points
//! are exported by the artifacts (see `runtime/include/profil_rt.h`, and README.md's section on
//! the C interfaces); `moncontrol` lives in the crate root ([`crate::set_counting`]).
//!
//! # The rate
//!
//! The runtime's clock ticks at `PROFIL_HZ` (shared with the automatic profile); these
//! interfaces keep one sample per 1/`sysconf(_SC_CLK_TCK)` second of process CPU time (100 per
//! CPU-second on Linux), as the seeds' kernels did: pcsample(2) says its array fills "after
//! nsamples / HZ seconds of process virtual time", HZ being `sysconf(_SC_CLK_TCK)`. A program
//! asks the rate with [`rate`] (`profil_rt_hz()`, the equivalent of Tru64's
//! `getsysinfo(GSI_CLK_TCK)`) and chooses another with [`set_rate`] (`profil_rt_set_hz()`); a
//! rate above the clock's gets every sample of the clock. The samples are thinned by comparing
//! the process CPU clock with the next due time, not by counting, because the CPU-time timer
//! delivers fewer signals than requested (one per kernel tick at most). The due time advances
//! one period per kept sample, so a clock whose signals come unevenly (the CPU-time timer
//! shared by busy threads) catches up, and a reading of the process clock that lags one made
//! on another thread (the CPU time running threads have not yet been charged) is only not due:
//! with any number of threads the count is the rate times the sum of their CPU time (16 busy
//! threads, 8.01 CPU-s: 802 samples for 801 with perf, 768 with the CPU-time timer).
//!
//! # profil(buf, bufsiz, offset, scale)
//!
//! On every sample the interrupted PC (a runtime address) has `offset` subtracted, is halved,
//! multiplied by `scale` and divided by 65536 ([`gmon::profil::pc_to_bin`]); if the result is
//! below `bufsiz / 2`, that 16-bit counter is incremented. `buf` is BSD's `char *samples`: any
//! address, odd ones included. Scale 0 or 1 turns profiling off, `bufsiz` 0 makes it
//! ineffective, scale 2 maps every PC at or above `offset` onto the first counter, a new call
//! replaces the previous one, and `profil(0, 0, 0, 0)` stops it. Counters stop at 65535 instead
//! of wrapping: a wrapped counter silently reports a hot spot as cold, while a stopped one is at
//! worst an undercount that the 16-bit file format could not hold anyway (Solaris stops all
//! profiling at 32767 because its counters are signed; ours are unsigned and stop one by one).
//!
//! # The extended form: profil(args, count, -1, flags)
//!
//! With `offset == -1` (Tru64), `buf` points to `count` (≤ 64) [`ProfilArgs`] ranges, laid out
//! as Tru64's `struct profil_args { unsigned int *buffer; void *highpc; void *lowpc; void
//! *offset; unsigned int scale; }`, each with its own 32-bit counters, covering discontiguous
//! address ranges (an executable and its shared libraries). `scale` is "the ratio of bytes in
//! the address range to bytes in the buffer": a PC in `[lowpc, highpc)` of a range increments
//! counter `((pc - offset) * scale / 65536) / 4` of that range's buffer (0x10000: as many
//! buffer bytes as range bytes, one counter per 4 bytes of code; scale 2: every PC on the first
//! counter, as in the traditional form). The buffer's extent follows: it must hold the counter
//! of `highpc - 1`. The ranges must be non-empty, non-overlapping and ordered by decreasing
//! `lowpc`, with scales of at least 2; anything else fails with `EINVAL`. `count` 0 stops. A
//! traditional call stops extended profiling and vice versa. These counters stop at 2^32 − 1.
//!
//! # pcsample(samples, nsamples)
//!
//! On every sample the PC is stored in the next free slot of `samples` until `nsamples` are
//! stored. The first call returns 0; each later call returns how many PCs the previous
//! invocation stored, then starts over with the new array; `nsamples == 0` stops sampling. A
//! negative count, or one whose array would not fit in the address space, fails with `EINVAL`
//! and changes nothing (sampling into the previous array goes on). Any other failure stops
//! sampling but keeps the previous invocation's count: the next call returns it. (A `profil`
//! call, failed or not, always stops both of its forms first.)
//!
//! # User memory: "profiling is turned off if an update would cause a memory fault"
//!
//! Every update of the caller's memory goes through the kernel, which reports a bad address
//! instead of faulting: a counter is read with `process_vm_readv` and incremented with an
//! atomic add done by the kernel (`FUTEX_WAKE_OP`'s `FUTEX_OP_ADD`, exact under concurrency;
//! [`sys::add_own_word`]), a PC is stored with `process_vm_writev`. An update that would fault
//! turns that interface off instead (for the extended form, only that range; the others go
//! on), and the next call of that interface reports it: it stops the interface and fails with
//! `EFAULT` (pcsample keeps the count for the call after). So a buffer unmapped or made
//! read-only while in use, or one that is only partly valid, is profiled up to the first
//! update that cannot be made, and the program lives. When a call is made, only the first
//! counter (or slot) is checked, by reading it: `EFAULT` if it cannot be read (null, or
//! outside the address space). Nothing writes the caller's memory except the counting itself,
//! and pages no sample lands on are never touched.
//!
//! A 16-bit counter is one half of an aligned 32-bit word, or (odd buffers) spans two; the
//! add is chosen so that no carry crosses into a neighbour: the counter is read first, a full
//! one is left alone, and a straddling counter whose low byte is full carries by a second add.
//! Two samples that land on the same counter at the same instant on two threads are both
//! counted, except at those two boundaries (a counter at 65534 may wrap, a straddling one may
//! lose a carry): the read and the add are not one operation.
//!
//! # Switching without waiting (async-signal-safety)
//!
//! pcsample is "Async-Signal-Safe" (its MT-Level), so these calls may interrupt the sampling
//! handler on their own thread, and may run in a forked child whose parent had other threads
//! inside the handler: no call waits for a handler or another thread. The settings of each
//! interface live in one of [`SLOTS`] slots; a call fills a free slot and publishes it with one
//! atomic swap of the interface's current-slot word (generation and slot), the handler reads a
//! slot and checks that word again before and right before each update, so it never uses
//! settings that were being rewritten, and a handler that began before the swap skips the
//! update. What no swap can close is a handler that passed its last check an instant before
//! the call: at most one update per such handler (a sample in progress on another thread, or
//! on this one under the signal handler making the call) can still land in the old buffer just
//! after the call returns. A pcsample slot is claimed before it is written, so the count a
//! call returns never includes a slot nobody will write.

use core::ffi::{c_int, c_long};
use core::sync::atomic::Ordering::{AcqRel, Relaxed, Release, SeqCst};
use core::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, AtomicU64, AtomicU8, AtomicUsize};

use crate::sys;

/// Why a call failed: an errno value.
pub type Errno = c_int;

/// One range of the extended form: Tru64's `struct profil_args` (`profil_rt.h`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ProfilArgs {
    /// 32-bit counters, enough for the counter of `highpc - 1`.
    pub buffer: *mut u32,
    /// End of the range (exclusive), runtime address.
    pub highpc: usize,
    /// Start of the range, runtime address.
    pub lowpc: usize,
    /// Subtracted from the PC before scaling.
    pub offset: usize,
    /// Bytes of buffer per byte of range, times 65536.
    pub scale: u32,
}

/// The most ranges the extended form takes.
pub const MAX_RANGES: usize = 64;

/// An empty range: filler for the unused slots of a fixed array of ranges.
pub(crate) const UNUSED_RANGE: ProfilArgs = ProfilArgs {
    buffer: core::ptr::null_mut(),
    highpc: 0,
    lowpc: 0,
    offset: 0,
    scale: 0,
};

/// The counter of the extended form that `pc` maps to in a range with `offset` and `scale`
/// (before comparing with the range's extent): the byte `(pc - offset) * scale / 65536` of
/// the buffer, in 4-byte counters; scale 2 puts every PC at or above `offset` on counter 0.
pub fn extended_bin(pc: usize, offset: usize, scale: u32) -> Option<u128> {
    if gmon::profil::is_off(scale) || pc < offset {
        return None;
    }
    if scale == 2 {
        return Some(0);
    }
    Some((pc - offset) as u128 * u128::from(scale) / 65536 / 4)
}

/// How many counters a range's buffer holds: one past the counter of `highpc - 1` (0 when
/// the whole range lies below `offset`). `None` when they could not fit in the address space.
pub fn extended_counters(r: &ProfilArgs) -> Option<usize> {
    match extended_bin(r.highpc.checked_sub(1)?, r.offset, r.scale) {
        None => Some(0),
        Some(i) => usize::try_from(i + 1)
            .ok()
            .filter(|n| n.checked_mul(4).is_some()),
    }
}

// ---------------------------------------------------------------------------------------------
// Slots and the current-slot word.

/// Slots of settings per interface: one in use, the others for calls in progress. A call that
/// finds none free (this many calls at once) yields the processor and looks again, a bounded
/// number of times ([`TAKE_ROUNDS`]), before it fails with `EAGAIN`: with 8 slots, 16 threads
/// calling at once got `EAGAIN` for 47% of their valid calls.
pub const SLOTS: usize = 64;
/// How many times [`Family::take`] looks for a free slot.
const TAKE_ROUNDS: usize = 1000;
const NO_SLOT: u64 = 0xff;

fn slot_of(cur: u64) -> Option<usize> {
    let s = (cur & 0xff) as usize;
    (s < SLOTS).then_some(s)
}

fn generation(cur: u64) -> u64 {
    cur >> 8
}

/// One interface's slot bookkeeping: which slot is current (generation << 8 | slot, or
/// `NO_SLOT`: off), which slots are taken (current, or being filled by a call), and whether the
/// settings of a generation faulted.
struct Family {
    current: AtomicU64,
    taken: [AtomicBool; SLOTS],
    /// The generation whose settings faulted in this slot (0: none).
    faulted: [AtomicU64; SLOTS],
}

#[allow(clippy::declare_interior_mutable_const)]
const FALSE: AtomicBool = AtomicBool::new(false);
#[allow(clippy::declare_interior_mutable_const)]
const ZERO64: AtomicU64 = AtomicU64::new(0);
#[allow(clippy::declare_interior_mutable_const)]
const ZERO: AtomicUsize = AtomicUsize::new(0);

impl Family {
    const fn new() -> Self {
        Family {
            current: AtomicU64::new(NO_SLOT),
            taken: [FALSE; SLOTS],
            faulted: [ZERO64; SLOTS],
        }
    }

    /// Take a free slot to fill. Never waits for anything but the scheduler (and that a
    /// bounded number of times: a call from a signal handler may interrupt the very calls that
    /// hold the slots).
    fn take(&self) -> Result<usize, Errno> {
        for round in 0..TAKE_ROUNDS {
            if round > 0 {
                sys::yield_now();
            }
            for s in 0..SLOTS {
                if self.taken[s]
                    .compare_exchange(false, true, AcqRel, Relaxed)
                    .is_ok()
                {
                    return Ok(s);
                }
            }
        }
        Err(libc::EAGAIN)
    }

    /// Make `slot` (or nothing) current; returns the word it replaced.
    fn publish(&self, slot: Option<usize>) -> u64 {
        let s = slot.map_or(NO_SLOT, |s| s as u64);
        let mut old = self.current.load(Relaxed);
        loop {
            let new = ((generation(old) + 1) << 8) | s;
            match self
                .current
                .compare_exchange_weak(old, new, AcqRel, Relaxed)
            {
                Ok(_) => return old,
                Err(now) => old = now,
            }
        }
    }

    fn release(&self, cur: u64) {
        if let Some(s) = slot_of(cur) {
            self.taken[s].store(false, Release);
        }
    }

    fn is_current(&self, cur: u64) -> bool {
        self.current.load(SeqCst) == cur
    }
}

// ---------------------------------------------------------------------------------------------
// profil: the traditional and the extended form share one family (a call replaces either).

static PROFIL: Family = Family::new();
/// Per slot: 0 traditional, 1 extended.
static KIND: [AtomicU8; SLOTS] = [const { AtomicU8::new(0) }; SLOTS];
static T_BUF: [AtomicUsize; SLOTS] = [ZERO; SLOTS];
static T_NBINS: [AtomicUsize; SLOTS] = [ZERO; SLOTS];
static T_OFFSET: [AtomicUsize; SLOTS] = [ZERO; SLOTS];
static T_SCALE: [AtomicU32; SLOTS] = [const { AtomicU32::new(0) }; SLOTS];

/// One stored range of the extended form.
struct RangeCell {
    buf: AtomicUsize,
    nbins: AtomicUsize,
    low: AtomicUsize,
    high: AtomicUsize,
    offset: AtomicUsize,
    scale: AtomicU32,
    /// The generation in which this range faulted (0: none): it is off from then on.
    faulted: AtomicU64,
}

#[allow(clippy::declare_interior_mutable_const)]
const EMPTY_CELL: RangeCell = RangeCell {
    buf: ZERO,
    nbins: ZERO,
    low: ZERO,
    high: ZERO,
    offset: ZERO,
    scale: AtomicU32::new(0),
    faulted: ZERO64,
};
#[allow(clippy::declare_interior_mutable_const)]
const EMPTY_RANGES: [RangeCell; MAX_RANGES] = [EMPTY_CELL; MAX_RANGES];
static E_COUNT: [AtomicUsize; SLOTS] = [ZERO; SLOTS];
static E_RANGES: [[RangeCell; MAX_RANGES]; SLOTS] = [EMPTY_RANGES; SLOTS];

// pcsample.
static PCS: Family = Family::new();
static S_BUF: [AtomicUsize; SLOTS] = [ZERO; SLOTS];
static S_CAP: [AtomicUsize; SLOTS] = [ZERO; SLOTS];
/// Per slot: how many times it was filled (its tag).
static S_TAG: [AtomicU64; SLOTS] = [ZERO64; SLOTS];
/// Per slot: slots claimed (bits 0..40), the slot's tag (low 23 bits, in bits 40..63), and bit
/// 63 once the settings are replaced (frozen: no more claims). A handler that read the slot
/// before it was filled again carries the old tag, and cannot claim.
static S_LEN: [AtomicU64; SLOTS] = [ZERO64; SLOTS];
const LEN_BITS: u32 = 40;
const LEN_MASK: u64 = (1 << LEN_BITS) - 1;
const TAG_MASK: u64 = (1 << 23) - 1;
const FROZEN: u64 = 1 << 63;
/// The most slots one array can have claimed (the count field's width).
const MAX_CAP: usize = LEN_MASK as usize;
/// A count kept for the next call after a failed one (or a displaced concurrent call).
static S_CARRY: AtomicU64 = AtomicU64::new(0);

fn len_tag(tag: u64) -> u64 {
    (tag & TAG_MASK) << LEN_BITS
}

// ---------------------------------------------------------------------------------------------
// The rate.

/// Process CPU time (ns) at or after which the next sample is kept.
static DUE_NS: AtomicU64 = AtomicU64::new(0);
/// The rate asked with [`set_rate`] (0: `sysconf(_SC_CLK_TCK)`).
static ASKED_HZ: AtomicU32 = AtomicU32::new(0);
/// `sysconf(_SC_CLK_TCK)`, read when first needed outside the handler.
static CLK_TCK: AtomicU32 = AtomicU32::new(0);
/// Nanoseconds of CPU time between kept samples (0 until an interface is first switched on).
static PERIOD_NS: AtomicU64 = AtomicU64::new(0);

fn clk_tck() -> u32 {
    match CLK_TCK.load(Relaxed) {
        0 => {
            let t = sys::clock_ticks_per_second();
            CLK_TCK.store(t, Relaxed);
            t
        }
        t => t,
    }
}

/// Samples per CPU-second these interfaces are to receive: `sysconf(_SC_CLK_TCK)` unless
/// [`set_rate`] asked otherwise, at most the clock's own rate (`PROFIL_HZ`).
fn target_rate() -> u32 {
    let asked = match ASKED_HZ.load(Relaxed) {
        0 => clk_tck(),
        hz => hz,
    };
    asked.min(crate::nominal_hz()).max(1)
}

/// Samples kept since the rate or the interfaces were last switched on, and the process CPU
/// time (ns) then: what [`rate`] measures the achieved rate with.
static KEPT: AtomicU64 = AtomicU64::new(0);
static KEPT_SINCE_NS: AtomicU64 = AtomicU64::new(0);
/// The fewest kept samples from which [`rate`] tells the achieved rate.
const RATE_EVIDENCE: u64 = 50;

/// Samples per CPU-second these interfaces receive, as `profil_rt_hz()` (Tru64's
/// `getsysinfo(GSI_CLK_TCK)`): the rate they are to receive ([`target_rate`]), or, once an
/// interface in use has kept enough samples to tell, the rate achieved when that is lower by
/// more than 5% (the CPU-time timer fires at most once per kernel tick; the perf clock may
/// lose some signals at high rates).
pub fn rate() -> u32 {
    let target = target_rate();
    let kept = KEPT.load(Relaxed);
    let cpu = sys::process_cpu_ns().saturating_sub(KEPT_SINCE_NS.load(Relaxed));
    if !in_use() || kept < RATE_EVIDENCE || cpu == 0 {
        return target;
    }
    let achieved = (kept as f64 * 1e9 / cpu as f64 + 0.5) as u32;
    if u64::from(achieved) * 100 >= u64::from(target) * 95 {
        target
    } else {
        achieved.max(1)
    }
}

/// Ask for `hz` samples per CPU-second (0: back to `sysconf(_SC_CLK_TCK)`); `EINVAL` above
/// [`crate::config::MAX_HZ`]. Takes effect at once, for every interface.
pub fn set_rate(hz: u32) -> Result<(), Errno> {
    if hz > crate::config::MAX_HZ {
        return Err(libc::EINVAL);
    }
    ASKED_HZ.store(hz, Relaxed);
    update_period();
    Ok(())
}

fn update_period() {
    let period = 1_000_000_000 / u64::from(target_rate());
    if PERIOD_NS.swap(period, Relaxed) != period || !in_use() {
        KEPT.store(0, Relaxed);
        KEPT_SINCE_NS.store(sys::process_cpu_ns(), Relaxed);
    }
}

/// How far behind its schedule [`due`] may fall and still catch up, in periods.
const CATCH_UP_PERIODS: u64 = 16;

/// Is this sample one of the `target_rate()` per CPU-second to keep? *Async-signal-safe.*
fn due() -> bool {
    let period = PERIOD_NS.load(Relaxed);
    let now = sys::process_cpu_ns();
    let mut due = DUE_NS.load(Relaxed);
    loop {
        // Not yet. (The process CPU clock read on one thread may lag the same clock read on
        // another a moment before, by the CPU time running threads have not yet been charged:
        // a reading behind the schedule is only that, never a reason to start it again — that
        // kept 2–7 times too many samples with several busy threads. A forked child's schedule
        // starts again in `after_fork`.)
        if now < due {
            return false;
        }
        // On schedule, or behind it by a few periods (a clock whose signals come less evenly
        // than the rate, such as the CPU-time timer shared by busy threads): the next one is a
        // period later, so the count catches up and stays the rate times the CPU time. Far
        // behind (the first sample, none for a while): the schedule starts again from now
        // rather than keeping a burst.
        let next = if now - due >= CATCH_UP_PERIODS * period {
            now + period
        } else {
            due + period
        };
        match DUE_NS.compare_exchange_weak(due, next, Relaxed, Relaxed) {
            Ok(_) => return true,
            Err(d) => due = d,
        }
    }
}

/// In a forked child: its process CPU clock starts again from zero, so does the schedule.
pub fn after_fork() {
    DUE_NS.store(0, Relaxed);
}

// ---------------------------------------------------------------------------------------------
// The handler's side.

/// Is any interface on (so the clock must keep running)?
pub fn in_use() -> bool {
    slot_of(PROFIL.current.load(Relaxed)).is_some() || slot_of(PCS.current.load(Relaxed)).is_some()
}

/// Feed one sample of the runtime's clock to the interfaces in use, keeping [`rate`] per
/// CPU-second. *Async-signal-safe*: atomics, and system calls that report bad addresses.
#[inline]
pub fn record(pc: usize) {
    if in_use() && due() {
        KEPT.fetch_add(1, Relaxed);
        sample(pc);
    }
}

/// Feed one sample to the interfaces in use, every one (no thinning to the rate): what
/// [`record`] does with the samples it keeps; the fuzz check calls it directly.
/// *Async-signal-safe.*
pub fn sample(pc: usize) {
    sample_profil(pc);
    sample_pcsample(pc);
}

/// Add one to the 16-bit counter at `addr` (any alignment), stopping at 65535. False if the
/// memory could not be read or updated.
fn bump16(addr: usize) -> bool {
    let Some(v) = sys::read_own_memory::<2>(addr) else {
        return false;
    };
    let v = u16::from_le_bytes(v);
    if v == u16::MAX {
        return true;
    }
    let word = addr & !3;
    match addr & 3 {
        // Inside one word: no carry leaves the counter (it is below 65535).
        b @ 0..=2 => sys::add_own_word(word, 8 * b as u32),
        // Bytes 3 of this word and 0 of the next: the add on the low byte wraps within the
        // word (the carry out of bit 31 is dropped), so a full low byte carries by hand.
        _ => sys::add_own_word(word, 24) && (v & 0xff != 0xff || sys::add_own_word(word + 4, 0)),
    }
}

/// Add one to the 4-byte-aligned 32-bit counter at `addr`, stopping at 2^32 − 1. False if
/// the memory could not be read or updated.
fn bump32(addr: usize) -> bool {
    match sys::read_own_memory::<4>(addr) {
        None => false,
        Some(v) if u32::from_le_bytes(v) == u32::MAX => true,
        Some(_) => sys::add_own_word(addr, 0),
    }
}

fn sample_profil(pc: usize) {
    let cur = PROFIL.current.load(SeqCst);
    let Some(s) = slot_of(cur) else { return };
    let gen = generation(cur);
    if PROFIL.faulted[s].load(Relaxed) == gen {
        return;
    }
    if KIND[s].load(Relaxed) == 0 {
        let nbins = T_NBINS[s].load(Relaxed) as u64;
        let offset = T_OFFSET[s].load(Relaxed) as u64;
        let scale = T_SCALE[s].load(Relaxed);
        let buf = T_BUF[s].load(Relaxed);
        let Some(i) = gmon::profil::pc_to_bin(pc as u64, offset, scale, nbins) else {
            return;
        };
        // The settings read are those of `cur` only if it is still current (no call rewrote
        // the slot meanwhile); checked again as late as possible before the update.
        if !PROFIL.is_current(cur) {
            return;
        }
        if !bump16(buf.wrapping_add(2 * i as usize)) {
            PROFIL.faulted[s].store(gen, Relaxed);
        }
        return;
    }
    // Ranges are ordered by decreasing lowpc: the first one starting at or below pc is the
    // only one that can hold it.
    let n = E_COUNT[s].load(Relaxed).min(MAX_RANGES);
    let ranges = &E_RANGES[s];
    let Some(r) = ranges[..n].iter().find(|r| r.low.load(Relaxed) <= pc) else {
        return;
    };
    if pc >= r.high.load(Relaxed) || r.faulted.load(Relaxed) == gen {
        return;
    }
    let Some(i) = extended_bin(pc, r.offset.load(Relaxed), r.scale.load(Relaxed)) else {
        return;
    };
    if i >= r.nbins.load(Relaxed) as u128 {
        return;
    }
    let addr = r.buf.load(Relaxed).wrapping_add(4 * i as usize);
    if !PROFIL.is_current(cur) {
        return;
    }
    if !bump32(addr) {
        r.faulted.store(gen, Relaxed);
    }
}

fn sample_pcsample(pc: usize) {
    let cur = PCS.current.load(SeqCst);
    let Some(s) = slot_of(cur) else { return };
    let gen = generation(cur);
    if PCS.faulted[s].load(Relaxed) == gen {
        return;
    }
    let cap = S_CAP[s].load(Relaxed) as u64;
    let buf = S_BUF[s].load(Relaxed);
    let tag = len_tag(S_TAG[s].load(Relaxed));
    if !PCS.is_current(cur) {
        return;
    }
    let claimed = S_LEN[s].fetch_update(Relaxed, Relaxed, |v| {
        (v & !LEN_MASK == tag && v & LEN_MASK < cap).then_some(v + 1)
    });
    let Ok(v) = claimed else { return };
    // The slot is ours alone; the count that calls report includes it, so it is written even
    // if a call replaced the array an instant ago.
    let at = buf.wrapping_add(8 * (v & LEN_MASK) as usize);
    if !sys::write_own_memory(at, &(pc as u64).to_le_bytes()) {
        // Not stored: uncount it (the slot is the last claimed unless another thread claimed
        // the next meanwhile, which then faults too) and turn pcsample off.
        let _ = S_LEN[s].fetch_update(Relaxed, Relaxed, |w| {
            (w & !FROZEN == v + 1).then_some(w - 1)
        });
        PCS.faulted[s].store(gen, Relaxed);
    }
}

// ---------------------------------------------------------------------------------------------
// Starting the clock.

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
    /// Start nothing and succeed: samples arrive only through explicit [`sample`] calls, so a
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
    TEST_CLOCK.store(v, SeqCst);
}

/// Start the clock an interface needs: the real one unless a test chose otherwise. `EBUSY`
/// when the clock's signal does not reach our handler (the program installed its own handler
/// for it, or armed `ITIMER_PROF` itself: profil(2) on Linux "cannot be used together with
/// ITIMER_PROF"; also when the clock to start is the CPU-time timer and the program's
/// `ITIMER_PROF` runs, [`crate::ensure_clock`]), since the call would otherwise succeed and
/// count nothing, or take the program's ticks.
fn start_clock() -> Result<(), Errno> {
    match TEST_CLOCK.load(SeqCst) {
        0 => {
            if crate::stood_aside() {
                return Err(libc::EBUSY);
            }
            crate::ensure_clock()?;
            let sig = match crate::timer::running() {
                Some(crate::timer::Backend::Perf) => libc::SIGTRAP,
                Some(crate::timer::Backend::Itimer) => libc::SIGPROF,
                None => return Err(libc::EBUSY),
            };
            let ours = crate::signals::sampling_handler();
            match sys::current_action(sig) {
                Some(a) if ours != 0 && a.handler == ours => Ok(()),
                _ => Err(libc::EBUSY),
            }
        }
        -1 => Ok(()),
        e => Err(e),
    }
}

/// Can the first `len` (≤ 8) bytes at `addr` be read? The only check of the caller's memory
/// made when a call is made: it writes nothing, and touches one page.
fn first_readable(addr: usize, len: usize) -> bool {
    addr != 0 && sys::can_read_own_memory(addr, len)
}

// ---------------------------------------------------------------------------------------------
// The calls.

/// Stop both forms of profil; `EFAULT` if the settings replaced had faulted (the report the
/// call after a fault makes).
fn stop_profil() -> Result<(), Errno> {
    let old = PROFIL.publish(None);
    let faulted = slot_of(old).is_some_and(|s| {
        let gen = generation(old);
        PROFIL.faulted[s].load(Relaxed) == gen
            || (KIND[s].load(Relaxed) == 1
                && E_RANGES[s]
                    .iter()
                    .take(E_COUNT[s].load(Relaxed).min(MAX_RANGES))
                    .any(|r| r.faulted.load(Relaxed) == gen))
    });
    PROFIL.release(old);
    if faulted {
        Err(libc::EFAULT)
    } else {
        Ok(())
    }
}

/// Publish the filled profil slot `s`; a concurrent call's settings it displaces are dropped.
fn go_profil(s: usize) {
    let displaced = PROFIL.publish(Some(s));
    PROFIL.release(displaced);
}

/// `profil(buf, bufsiz, offset, scale)`, see the module docs.
///
/// # Safety
/// None in the sense of memory safety (every update is checked by the kernel), but the buffer
/// is the caller's: counts land in it until profiling is turned off or replaced.
pub unsafe fn profil(buf: *mut u16, bufsiz: usize, offset: usize, scale: u32) -> Result<(), Errno> {
    if offset == usize::MAX {
        // SAFETY: the caller's contract for the extended form.
        return unsafe { profil_extended(buf as *const ProfilArgs, bufsiz) };
    }
    stop_profil()?;
    if gmon::profil::is_off(scale) || (buf.is_null() && bufsiz == 0) {
        return Ok(());
    }
    let nbins = bufsiz / 2;
    let addr = buf as usize;
    if nbins > 0 && (addr.checked_add(nbins * 2).is_none() || !first_readable(addr, 2)) {
        return Err(libc::EFAULT);
    }
    let s = PROFIL.take()?;
    KIND[s].store(0, Relaxed);
    PROFIL.faulted[s].store(0, Relaxed);
    T_BUF[s].store(addr, Relaxed);
    T_NBINS[s].store(nbins, Relaxed);
    T_OFFSET[s].store(offset, Relaxed);
    T_SCALE[s].store(scale, Relaxed);
    if let Err(e) = start_clock() {
        PROFIL.taken[s].store(false, Release);
        return Err(e);
    }
    update_period();
    go_profil(s);
    Ok(())
}

/// The extended form: `count` ranges at `args`, see the module docs.
///
/// # Safety
/// As for [`profil`]: each range's buffer receives counts until profiling is turned off or
/// replaced.
pub unsafe fn profil_extended(args: *const ProfilArgs, count: usize) -> Result<(), Errno> {
    stop_profil()?;
    if count == 0 {
        return Ok(());
    }
    if count > MAX_RANGES {
        return Err(libc::EINVAL);
    }
    let bytes = count * core::mem::size_of::<ProfilArgs>();
    let at = args as usize;
    if args.is_null()
        || !at.is_multiple_of(core::mem::align_of::<ProfilArgs>())
        || at.checked_add(bytes).is_none()
    {
        return Err(libc::EFAULT);
    }
    // Copy the caller's ranges once, through the kernel (the array may be unreadable): every
    // check below and the settings stored after them see the same values, even if another
    // thread rewrites the array during this call.
    let mut copy = [UNUSED_RANGE; MAX_RANGES];
    let mut nbins = [0usize; MAX_RANGES];
    for (i, slot) in copy.iter_mut().take(count).enumerate() {
        let base = at + i * core::mem::size_of::<ProfilArgs>();
        let word = |k: usize| sys::read_own_memory::<8>(base + 8 * k).map(usize::from_le_bytes);
        let (Some(buffer), Some(highpc), Some(lowpc), Some(offset), Some(scale)) = (
            word(0),
            word(1),
            word(2),
            word(3),
            sys::read_own_memory::<4>(base + 32),
        ) else {
            return Err(libc::EFAULT);
        };
        *slot = ProfilArgs {
            buffer: buffer as *mut u32,
            highpc,
            lowpc,
            offset,
            scale: u32::from_le_bytes(scale),
        };
    }
    let ranges = &copy[..count];
    for (i, r) in ranges.iter().enumerate() {
        let ordered = i == 0 || r.highpc <= ranges[i - 1].lowpc;
        if r.lowpc >= r.highpc || !ordered || gmon::profil::is_off(r.scale) {
            return Err(libc::EINVAL);
        }
    }
    for (r, n) in ranges.iter().zip(nbins.iter_mut()) {
        let buf = r.buffer as usize;
        *n = extended_counters(r).ok_or(libc::EFAULT)?;
        if *n > 0
            && (!buf.is_multiple_of(4)
                || buf.checked_add(*n * 4).is_none()
                || !first_readable(buf, 4))
        {
            return Err(libc::EFAULT);
        }
    }
    let s = PROFIL.take()?;
    KIND[s].store(1, Relaxed);
    PROFIL.faulted[s].store(0, Relaxed);
    for ((r, cell), n) in ranges.iter().zip(&E_RANGES[s]).zip(nbins) {
        cell.buf.store(r.buffer as usize, Relaxed);
        cell.nbins.store(n, Relaxed);
        cell.low.store(r.lowpc, Relaxed);
        cell.high.store(r.highpc, Relaxed);
        cell.offset.store(r.offset, Relaxed);
        cell.scale.store(r.scale, Relaxed);
        cell.faulted.store(0, Relaxed);
    }
    E_COUNT[s].store(count, Relaxed);
    if let Err(e) = start_clock() {
        PROFIL.taken[s].store(false, Release);
        return Err(e);
    }
    update_period();
    go_profil(s);
    Ok(())
}

/// Freeze the pcsample settings `old` replaced (no more slots claimed) and return how many
/// PCs they stored, and whether they faulted; releases their slot.
fn retire_pcsample(old: u64) -> (u64, bool) {
    let Some(s) = slot_of(old) else {
        return (S_CARRY.swap(0, Relaxed), false);
    };
    // The slot stays taken until released below: only handlers' claims change its count.
    let n = S_LEN[s].fetch_or(FROZEN, AcqRel) & LEN_MASK;
    let faulted = PCS.faulted[s].load(Relaxed) == generation(old);
    PCS.release(old);
    (n, faulted)
}

/// `pcsample(samples, nsamples)`, see the module docs. Returns what the call returns.
///
/// # Safety
/// As for [`profil`]: PCs land in the array until the next call.
pub unsafe fn pcsample(samples: *mut usize, nsamples: c_long) -> Result<c_long, Errno> {
    // An impossible count (negative, or an array larger than the address space) fails before
    // anything changes: sampling into the previous array goes on, and its count is kept.
    let Some(bytes) = usize::try_from(nsamples)
        .ok()
        .and_then(|n| n.checked_mul(core::mem::size_of::<usize>()))
    else {
        return Err(libc::EINVAL);
    };
    let cap = bytes / core::mem::size_of::<usize>();
    let (previous, faulted) = retire_pcsample(PCS.publish(None));
    // A failure keeps the count for the next call.
    let fail = |e: Errno| {
        S_CARRY.fetch_add(previous, Relaxed);
        Err(e)
    };
    if faulted {
        return fail(libc::EFAULT);
    }
    if nsamples == 0 {
        return Ok(previous as c_long);
    }
    let addr = samples as usize;
    if !addr.is_multiple_of(core::mem::align_of::<usize>())
        || addr.checked_add(bytes).is_none()
        || !first_readable(addr, 8)
    {
        return fail(libc::EFAULT);
    }
    let s = match PCS.take() {
        Ok(s) => s,
        Err(e) => return fail(e),
    };
    S_BUF[s].store(addr, Relaxed);
    S_CAP[s].store(cap.min(MAX_CAP), Relaxed);
    let tag = S_TAG[s].fetch_add(1, Relaxed) + 1;
    S_LEN[s].store(len_tag(tag), Relaxed);
    PCS.faulted[s].store(0, Relaxed);
    if let Err(e) = start_clock() {
        PCS.taken[s].store(false, Release);
        return fail(e);
    }
    update_period();
    let old = PCS.publish(Some(s));
    if slot_of(old).is_some() {
        // A concurrent call's array that this one displaced: its count goes to the next call.
        let (n, _) = retire_pcsample(old);
        S_CARRY.fetch_add(n, Relaxed);
    }
    Ok(previous as c_long)
}
