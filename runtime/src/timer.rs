//! The sampling clocks.
//!
//! * **perf** (preferred): a perf_event software task clock per thread, counting user CPU time
//!   only (`exclude_kernel`, which is also what lets it open at `perf_event_paranoid=2`), that
//!   sends a synchronous `SIGTRAP` to the thread whose clock expired (`sigtrap`, Linux 5.13+).
//!   Rates up to tens of kHz are accurate, and each thread is charged its own CPU time. New
//!   threads inherit the event; `exec` removes it.
//! * **itimer** (fallback, when perf_event is refused: paranoid level 3, seccomp, old kernels):
//!   `setitimer(ITIMER_PROF)` and `SIGPROF`. It counts user + system time of the whole process,
//!   but fires at most once per kernel tick (CONFIG_HZ, 250/s here), whatever is requested.

use core::ffi::c_int;
use core::sync::atomic::{AtomicI32, AtomicU8, Ordering};

use crate::config::TimerChoice;
use crate::{handler, sys};

/// The backend actually running.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    /// perf_event task clock + SIGTRAP.
    Perf,
    /// setitimer(ITIMER_PROF) + SIGPROF.
    Itimer,
}

impl Backend {
    /// Does this clock advance during system calls? (perf counts user time only.)
    pub fn counts_system_time(self) -> bool {
        self == Backend::Itimer
    }
}

static PERF_FD: AtomicI32 = AtomicI32::new(-1);
static RUNNING: AtomicU8 = AtomicU8::new(0); // 0 none, 1 perf, 2 itimer

/// Why no clock could be started: the errno of each attempt (0 = not attempted).
#[derive(Clone, Copy, Debug, Default)]
pub struct StartError {
    /// errno from perf_event_open / SIGTRAP installation.
    pub perf: c_int,
    /// errno from setitimer / SIGPROF installation.
    pub itimer: c_int,
}

/// Start sampling at `hz` samples per CPU-second with the chosen backend. `on_perf_failure` is
/// told the errno when a forced perf backend falls back.
pub fn start(
    choice: TimerChoice,
    hz: u32,
    mut on_perf_failure: impl FnMut(c_int),
) -> Result<Backend, StartError> {
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
    let period_ns = (1_000_000_000 / u64::from(hz.max(1))).max(1);
    let fd = sys::perf_open_task_clock(period_ns, handler::PERF_SIG_DATA)?;
    let prev = match sys::install_handler(libc::SIGTRAP, handler::on_sample) {
        Ok(p) => p,
        Err(e) => {
            let _ = sys::close(fd);
            return Err(e);
        }
    };
    handler::set_previous_trap(prev);
    PERF_FD.store(fd, Ordering::Relaxed);
    if let Err(e) = sys::perf_set_enabled(fd, true) {
        PERF_FD.store(-1, Ordering::Relaxed);
        let _ = sys::close(fd);
        return Err(e);
    }
    RUNNING.store(1, Ordering::Relaxed);
    Ok(())
}

fn start_itimer(hz: u32) -> Result<(), c_int> {
    sys::install_handler(libc::SIGPROF, handler::on_sample)?;
    let usec = (1_000_000 / u64::from(hz.max(1))).max(1);
    sys::set_itimer_prof(usec)?;
    RUNNING.store(2, Ordering::Relaxed);
    Ok(())
}

/// Stop the clock. The handler stays installed (a signal already in flight must not meet the
/// default action, which would kill the process); it ignores samples once recording stops.
pub fn stop() {
    match RUNNING.swap(0, Ordering::Relaxed) {
        1 => {
            let fd = PERF_FD.swap(-1, Ordering::Relaxed);
            if fd >= 0 {
                let _ = sys::perf_set_enabled(fd, false);
                let _ = sys::close(fd);
            }
        }
        2 => {
            let _ = sys::set_itimer_prof(0);
        }
        _ => {}
    }
}
