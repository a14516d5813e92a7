//! The sampling clocks.
//!
//! * **perf** (preferred): a perf_event software task clock per thread, counting user CPU time
//!   only (`exclude_kernel`, which is also what lets it open at `perf_event_paranoid=2`), that
//!   sends a synchronous `SIGTRAP` to the thread whose clock expired (`sigtrap`, Linux 5.13+).
//!   Rates up to tens of kHz are accurate, and each thread is charged its own CPU time. New
//!   threads inherit the event (forked children do not: they get their own after the fork;
//!   an inherited copy starts a full period, so [`crate::threads`] gives threads created with
//!   `pthread_create` a one-shot clock of their own with a random period for their first);
//!   `exec` removes it. Threads that already exist when the clock starts (started by another
//!   library's constructor before ours under `LD_PRELOAD`, or by the program before its first
//!   call of a programming interface with the automatic profile off) inherit nothing, so each
//!   gets an event of its own (`/proc/self/task`; as many as there are threads: beyond
//!   [`MAX_EVENTS`] in a table mapped for them).
//! * **itimer** (fallback, when perf_event is refused: paranoid level 3, seccomp, old kernels):
//!   a POSIX timer on the process CPU-time clock sending `SIGPROF` — the clock `ITIMER_PROF`
//!   uses (user + system time of all threads, at most one expiry per kernel tick: CONFIG_HZ,
//!   250/s here), but, unlike `ITIMER_PROF`, deleted by `exec`: a profiling timer that survives
//!   exec kills the next program image ("Profiling timer expired"), which is glibc's bug.
//!
//! # The perf event's descriptor
//!
//! The descriptors belong to the runtime, and the numbers around them to the program: a program
//! may close every descriptor above 2 (`closefrom`, `close_range`), `dup2` onto any number, or
//! start with stdin closed. So the event is opened, then moved close-on-exec to a high number
//! ([`sys::move_fd_high`]: at or above 768, or three quarters of `RLIMIT_NOFILE` if that is
//! lower; never 0–2), which frees the low number it was given: the program's first `open`
//! returns what it would without us. Its identity is recorded at open — the device and inode
//! of the file (every perf event shares one anonymous inode, so this says "a perf event") and
//! the event's kernel id (`PERF_EVENT_IOC_ID`, asked only once the inode says it is a perf
//! event) — and checked before every later `ioctl` or `close` (at exit, before exec, in a fork
//! child). If the number now holds something else, the program closed ours (and with it the
//! clock: the kernel frees an event and its per-thread copies with its last descriptor): the
//! runtime leaves that number alone, and says once at exit that samples after that point are
//! missing.

use core::ffi::c_int;
use core::sync::atomic::{
    AtomicBool, AtomicI32, AtomicU32, AtomicU64, AtomicU8, AtomicUsize, Ordering,
};

use crate::config::TimerChoice;
use crate::{marks, signals, sys};

/// The backend actually running.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    /// perf_event task clock + SIGTRAP.
    Perf,
    /// Process CPU-time timer + SIGPROF.
    Itimer,
}

impl Backend {
    /// Does this clock advance during system calls? (perf counts user time only.)
    pub fn counts_system_time(self) -> bool {
        self == Backend::Itimer
    }
}

/// The perf events kept in static slots: one for the thread that starts the clock (its later
/// threads inherit it) and one for each thread that already existed then; more threads than
/// that get theirs in [`Extra`], a table mapped when needed.
pub const MAX_EVENTS: usize = 64;

/// The events beyond [`MAX_EVENTS`]: a mapped table of (descriptor + 1, kernel id) pairs
/// (zeroed: empty), as large as the threads that existed when the clock last started need.
/// Kept from one start to the next (grown, never shrunk).
struct Extra;

static EXTRA_AT: AtomicUsize = AtomicUsize::new(0);
static EXTRA_CAP: AtomicUsize = AtomicUsize::new(0);

impl Extra {
    /// The table's entries (empty when there is none).
    fn entries() -> &'static [(AtomicI32, AtomicU64)] {
        let (at, cap) = (
            EXTRA_AT.load(Ordering::Acquire),
            EXTRA_CAP.load(Ordering::Acquire),
        );
        if at == 0 {
            return &[];
        }
        // SAFETY: `at` is a zeroed mapping of `cap` entries made by `ensure` (an all-zero
        // entry is a valid pair of atomics), never unmapped while it is the table.
        unsafe { core::slice::from_raw_parts(at as *const (AtomicI32, AtomicU64), cap) }
    }

    /// Make room for `n` entries; false if the memory could not be mapped.
    fn ensure(n: usize) -> bool {
        if n <= EXTRA_CAP.load(Ordering::Acquire) {
            return true;
        }
        let bytes = n * core::mem::size_of::<(AtomicI32, AtomicU64)>();
        let Some(at) = sys::map_zeroed(bytes) else {
            return false;
        };
        // The old table's events were all taken out ([`take_perf_fds`]) before a new start.
        EXTRA_CAP.store(0, Ordering::Release);
        EXTRA_AT.store(at as usize, Ordering::Release);
        EXTRA_CAP.store(n, Ordering::Release);
        true
    }
}
// Our perf events' descriptors (-1: none) and kernel ids, slot 0 for the starting thread.
static PERF_FDS: [AtomicI32; MAX_EVENTS] = [const { AtomicI32::new(-1) }; MAX_EVENTS];
static PERF_IDS: [AtomicU64; MAX_EVENTS] = [const { AtomicU64::new(0) }; MAX_EVENTS];
// The device and inode every perf event descriptor shares (perf's anonymous inode).
static PERF_DEV: AtomicU64 = AtomicU64::new(0);
static PERF_INO: AtomicU64 = AtomicU64::new(0);
/// The program closed (or replaced) the perf event's descriptor.
static CLOCK_TAKEN: AtomicBool = AtomicBool::new(false);
/// Threads that existed when the perf clock started and got no event of their own.
static WITHOUT_CLOCK: AtomicU32 = AtomicU32::new(0);
static CPU_TIMER: AtomicUsize = AtomicUsize::new(0);
static RUNNING: AtomicU8 = AtomicU8::new(0); // 0 none, 1 perf, 2 itimer
static HZ: AtomicU32 = AtomicU32::new(0);

/// Why no clock could be started: the errno of each attempt (0 = not attempted).
#[derive(Clone, Copy, Debug, Default)]
pub struct StartError {
    /// errno from perf_event_open / SIGTRAP installation.
    pub perf: c_int,
    /// errno from timer_create / SIGPROF installation.
    pub itimer: c_int,
}

fn period_ns(hz: u32) -> u64 {
    (1_000_000_000 / u64::from(hz.max(1))).max(1)
}

/// Start sampling at `hz` samples per CPU-second with the chosen backend, its signal handled by
/// `on_sample` (`handler::on_sample`). `on_perf_failure` is told the errno when a
/// forced perf backend falls back.
pub fn start(
    choice: TimerChoice,
    hz: u32,
    on_sample: sys::SigInfoHandler,
    mut on_perf_failure: impl FnMut(c_int),
) -> Result<Backend, StartError> {
    HZ.store(hz, Ordering::Relaxed);
    let mut err = StartError::default();
    if choice != TimerChoice::Itimer {
        match start_perf(hz, on_sample) {
            Ok(()) => return Ok(Backend::Perf),
            Err(e) => {
                err.perf = e;
                if choice == TimerChoice::Perf {
                    on_perf_failure(e);
                }
            }
        }
    }
    match start_itimer(hz, on_sample) {
        Ok(()) => Ok(Backend::Itimer),
        Err(e) => {
            err.itimer = e;
            Err(err)
        }
    }
}

/// Open a disabled perf event on thread `tid` (0: this one), moved out of the program's way,
/// and record its identity: its descriptor and kernel id.
fn open_event(period: u64, tid: u32) -> Result<(c_int, u64), c_int> {
    let fd = sys::perf_open_task_clock(period, marks::SIG_DATA, tid)?;
    let fd = sys::move_fd_high(fd)?;
    let (Some((dev, ino)), Some(id)) = (sys::fd_identity(fd), sys::perf_event_id(fd)) else {
        let _ = sys::close(fd);
        return Err(libc::EBADF);
    };
    PERF_DEV.store(dev, Ordering::Relaxed);
    PERF_INO.store(ino, Ordering::Relaxed);
    Ok((fd, id))
}

fn start_perf(hz: u32, on_sample: sys::SigInfoHandler) -> Result<(), c_int> {
    let period = period_ns(hz);
    let (fd, id) = open_event(period, 0)?;
    if let Err(e) = signals::install_sampling(libc::SIGTRAP, on_sample) {
        let _ = sys::close(fd);
        return Err(e);
    }
    if let Err(e) = sys::perf_set_enabled(fd, true) {
        let _ = sys::close(fd);
        return Err(e);
    }
    PERF_IDS[0].store(id, Ordering::Relaxed);
    PERF_FDS[0].store(fd, Ordering::Relaxed);
    // Threads that exist already (started by another library's constructor before ours, or by
    // the program before it called a programming interface) inherit nothing: an event each. A
    // thread that ends meanwhile is skipped (ESRCH); one that an existing thread creates while
    // the list is read may be missed.
    let me = sys::gettid();
    let mut threads = 0usize;
    sys::for_each_thread(|_| threads += 1);
    // Room for as many more as may start while the list is read again.
    let extra = if threads >= MAX_EVENTS && Extra::ensure(threads * 2) {
        Extra::entries()
    } else {
        &[]
    };
    let mut slot = 1;
    let mut missed = 0;
    sys::for_each_thread(|tid| {
        if tid == me {
            return;
        }
        let place = if slot < MAX_EVENTS {
            Some((&PERF_FDS[slot], &PERF_IDS[slot], 0))
        } else {
            extra.get(slot - MAX_EVENTS).map(|(f, i)| (f, i, 1))
        };
        let Some((fd_slot, id_slot, plus)) = place else {
            missed += 1;
            return;
        };
        let Ok((fd, id)) = open_event(period, tid) else {
            // ESRCH (the thread ended meanwhile) included: not told apart here.
            missed += 1;
            return;
        };
        if sys::perf_set_enabled(fd, true).is_err() {
            let _ = sys::close(fd);
            missed += 1;
            return;
        }
        id_slot.store(id, Ordering::Relaxed);
        fd_slot.store(fd + plus, Ordering::Relaxed);
        slot += 1;
    });
    WITHOUT_CLOCK.store(missed, Ordering::Relaxed);
    RUNNING.store(1, Ordering::Relaxed);
    Ok(())
}

/// Threads that existed when the perf clock started and could not get an event of their own
/// (refused, or no memory for the table): they are not sampled.
pub fn threads_without_clock() -> u32 {
    WITHOUT_CLOCK.load(Ordering::Relaxed)
}

fn start_itimer(hz: u32, on_sample: sys::SigInfoHandler) -> Result<(), c_int> {
    signals::install_sampling(libc::SIGPROF, on_sample)?;
    let id = sys::cpu_timer_create(libc::SIGPROF, marks::SIG_DATA)?;
    // The kernel rounds the period up to its tick; the achieved rate is measured, not assumed.
    if let Err(e) = sys::cpu_timer_set(id, period_ns(hz)) {
        sys::cpu_timer_delete(id);
        return Err(e);
    }
    CPU_TIMER.store(id, Ordering::Relaxed);
    RUNNING.store(2, Ordering::Relaxed);
    Ok(())
}

/// The backend running now, if any.
pub fn running() -> Option<Backend> {
    match RUNNING.load(Ordering::Relaxed) {
        1 => Some(Backend::Perf),
        2 => Some(Backend::Itimer),
        _ => None,
    }
}

/// The sampling period in nanoseconds of CPU time.
pub fn period() -> u64 {
    period_ns(HZ.load(Ordering::Relaxed))
}

/// Is `fd` still the perf event with kernel id `id`? (Device and inode first: only a perf
/// event gets the id ioctl.) *Async-signal-safe* (`fstat`, `ioctl`).
pub(crate) fn is_our_event(fd: c_int, id: u64) -> bool {
    fd >= 0
        && sys::fd_identity(fd)
            == Some((
                PERF_DEV.load(Ordering::Relaxed),
                PERF_INO.load(Ordering::Relaxed),
            ))
        && sys::perf_event_id(fd) == Some(id)
}

/// Take each of our perf events' descriptors out of the table and give `f` those that are
/// still ours to use; if the program closed or replaced one, remember that (for
/// [`clock_taken`]).
fn take_perf_fds(mut f: impl FnMut(c_int)) {
    let mut take = |fd: c_int, id: &AtomicU64| {
        if fd < 0 {
            return;
        }
        if is_our_event(fd, id.load(Ordering::Relaxed)) {
            f(fd);
        } else {
            CLOCK_TAKEN.store(true, Ordering::Relaxed);
        }
    };
    for (fd, id) in PERF_FDS.iter().zip(&PERF_IDS) {
        take(fd.swap(-1, Ordering::Relaxed), id);
    }
    for (fd, id) in Extra::entries() {
        // Stored as descriptor + 1 (0: none).
        take(fd.swap(0, Ordering::Relaxed) - 1, id);
    }
}

/// Did the program close (or reuse the number of) the perf event's descriptor? Then the
/// clock stopped when it did, and samples after that are missing.
pub fn clock_taken() -> bool {
    CLOCK_TAKEN.load(Ordering::Relaxed)
}

/// Stop the clock. The handler stays installed (a signal already in flight must not meet the
/// default action, which would kill the process); it ignores samples once recording stops.
pub fn stop() -> Option<Backend> {
    match RUNNING.swap(0, Ordering::Relaxed) {
        1 => {
            take_perf_fds(|fd| {
                let _ = sys::perf_set_enabled(fd, false);
                let _ = sys::close(fd);
            });
            Some(Backend::Perf)
        }
        2 => {
            sys::cpu_timer_delete(CPU_TIMER.swap(0, Ordering::Relaxed));
            Some(Backend::Itimer)
        }
        _ => None,
    }
}

/// Start `backend` again at the rate of the first start (after a failed exec), its signal
/// handled by `on_sample`.
pub fn restart(backend: Backend, on_sample: sys::SigInfoHandler) -> Result<Backend, StartError> {
    let choice = match backend {
        Backend::Perf => TimerChoice::Auto,
        Backend::Itimer => TimerChoice::Itimer,
    };
    start(choice, HZ.load(Ordering::Relaxed), on_sample, |_| {})
}

/// In a forked child: the parent's clock does not follow it (the perf event is inherited by
/// threads only, POSIX timers are not inherited at all). Drop the child's copies of the
/// parent's clock without touching it, and start a new clock of the same kind.
pub fn restart_in_child(on_sample: sys::SigInfoHandler) -> Result<Backend, StartError> {
    let backend = match RUNNING.swap(0, Ordering::Relaxed) {
        1 => Backend::Perf,
        2 => Backend::Itimer,
        _ => return Err(StartError::default()),
    };
    take_perf_fds(|fd| {
        // Closing our copy of a descriptor leaves the parent's event alone (no enable or
        // disable here: that would stop the parent's clock).
        let _ = sys::close(fd);
    });
    // The child's clock is new: a descriptor the program closed in the parent is the parent's
    // loss to report.
    CLOCK_TAKEN.store(false, Ordering::Relaxed);
    CPU_TIMER.store(0, Ordering::Relaxed); // the parent's timer id means nothing here
    restart(backend, on_sample)
}
