//! The sampling clocks.
//!
//! * **perf** (preferred): a perf_event software task clock per thread, counting user CPU time
//!   only (`exclude_kernel`, which is also what lets it open at `perf_event_paranoid=2`), that
//!   sends a synchronous `SIGTRAP` to the thread whose clock expired (`sigtrap`, Linux 5.13+).
//!   Rates up to tens of kHz are accurate, and each thread is charged its own CPU time. New
//!   threads inherit the event (forked children do not: they get their own after the fork);
//!   `exec` removes it.
//! * **itimer** (fallback, when perf_event is refused: paranoid level 3, seccomp, old kernels):
//!   a POSIX timer on the process CPU-time clock sending `SIGPROF` — the clock `ITIMER_PROF`
//!   uses (user + system time of all threads, at most one expiry per kernel tick: CONFIG_HZ,
//!   250/s here), but, unlike `ITIMER_PROF`, deleted by `exec`: a profiling timer that survives
//!   exec kills the next program image ("Profiling timer expired"), which is glibc's bug.

use core::ffi::c_int;
use core::sync::atomic::{AtomicI32, AtomicU32, AtomicU8, AtomicUsize, Ordering};

use crate::config::TimerChoice;
use crate::{handler, sys};

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

static PERF_FD: AtomicI32 = AtomicI32::new(-1);
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

/// Start sampling at `hz` samples per CPU-second with the chosen backend. `on_perf_failure` is
/// told the errno when a forced perf backend falls back.
pub fn start(
    choice: TimerChoice,
    hz: u32,
    mut on_perf_failure: impl FnMut(c_int),
) -> Result<Backend, StartError> {
    HZ.store(hz, Ordering::Relaxed);
    let mut err = StartError::default();
    if choice != TimerChoice::Itimer {
        match start_perf(hz) {
            Ok(()) => return Ok(Backend::Perf),
            Err(e) => {
                err.perf = e;
                if choice == TimerChoice::Perf {
                    on_perf_failure(e);
                }
            }
        }
    }
    match start_itimer(hz) {
        Ok(()) => Ok(Backend::Itimer),
        Err(e) => {
            err.itimer = e;
            Err(err)
        }
    }
}

fn start_perf(hz: u32) -> Result<(), c_int> {
    let fd = sys::perf_open_task_clock(period_ns(hz), handler::SIG_DATA)?;
    if let Err(e) = handler::install(libc::SIGTRAP) {
        let _ = sys::close(fd);
        return Err(e);
    }
    if let Err(e) = sys::perf_set_enabled(fd, true) {
        let _ = sys::close(fd);
        return Err(e);
    }
    PERF_FD.store(fd, Ordering::Relaxed);
    RUNNING.store(1, Ordering::Relaxed);
    Ok(())
}

fn start_itimer(hz: u32) -> Result<(), c_int> {
    handler::install(libc::SIGPROF)?;
    let id = sys::cpu_timer_create(libc::SIGPROF, handler::SIG_DATA)?;
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

/// Stop the clock. The handler stays installed (a signal already in flight must not meet the
/// default action, which would kill the process); it ignores samples once recording stops.
pub fn stop() -> Option<Backend> {
    match RUNNING.swap(0, Ordering::Relaxed) {
        1 => {
            let fd = PERF_FD.swap(-1, Ordering::Relaxed);
            if fd >= 0 {
                let _ = sys::perf_set_enabled(fd, false);
                let _ = sys::close(fd);
            }
            Some(Backend::Perf)
        }
        2 => {
            sys::cpu_timer_delete(CPU_TIMER.swap(0, Ordering::Relaxed));
            Some(Backend::Itimer)
        }
        _ => None,
    }
}

/// Start `backend` again at the rate of the first start (after a failed exec).
pub fn restart(backend: Backend) -> Result<Backend, StartError> {
    let choice = match backend {
        Backend::Perf => TimerChoice::Auto,
        Backend::Itimer => TimerChoice::Itimer,
    };
    start(choice, HZ.load(Ordering::Relaxed), |_| {})
}

/// In a forked child: the parent's clock does not follow it (the perf event is inherited by
/// threads only, POSIX timers are not inherited at all). Drop the child's copies of the
/// parent's clock without touching it, and start a new clock of the same kind.
pub fn restart_in_child() -> Result<Backend, StartError> {
    let backend = match RUNNING.swap(0, Ordering::Relaxed) {
        1 => Backend::Perf,
        2 => Backend::Itimer,
        _ => return Err(StartError::default()),
    };
    let fd = PERF_FD.swap(-1, Ordering::Relaxed);
    if fd >= 0 {
        // Closing our copy of the descriptor leaves the parent's event alone (no ioctl here:
        // that would disable the parent's clock).
        let _ = sys::close(fd);
    }
    CPU_TIMER.store(0, Ordering::Relaxed); // the parent's timer id means nothing here
    restart(backend)
}
