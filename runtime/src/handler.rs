//! The sampling signal handler.
//!
//! # Contract
//!
//! [`on_sample`] runs asynchronously on whichever thread the clock interrupted. It may touch
//! only atomics and memory prepared before it was installed; it must not allocate, take a lock,
//! format, or call anything that is not async-signal-safe. It saves and restores `errno`. It is
//! installed with `SA_RESTART`, so interrupted system calls resume. A `SIGTRAP` that does not
//! come from our perf event (a debugger breakpoint, the program's own `raise`) is passed on to the
//! disposition that was in place before ours, so the program behaves as it would without us.

use core::ffi::{c_int, c_void};
use core::sync::atomic::{AtomicI32, AtomicUsize, Ordering};

use crate::{hist, sys};

/// `sig_data` given to our perf event, echoed in `si_perf_data`: tells our `SIGTRAP`s from others.
pub const PERF_SIG_DATA: u64 = 0x7072_6f66_696c_7274; // "profilrt"

// The SIGTRAP disposition in place before ours, stored before ours is installed.
static PREV_TRAP_HANDLER: AtomicUsize = AtomicUsize::new(libc::SIG_DFL);
static PREV_TRAP_FLAGS: AtomicI32 = AtomicI32::new(0);

/// Remember the `SIGTRAP` disposition that ours replaced.
pub fn set_previous_trap(prev: sys::PrevAction) {
    PREV_TRAP_FLAGS.store(prev.flags, Ordering::Relaxed);
    PREV_TRAP_HANDLER.store(prev.handler, Ordering::Release);
}

/// The handler for `SIGTRAP` (perf backend) and `SIGPROF` (itimer backend).
pub(crate) extern "C" fn on_sample(sig: c_int, info: *mut libc::siginfo_t, uctx: *mut c_void) {
    let _errno = sys::ErrnoGuard::save();
    if sig == libc::SIGTRAP {
        // SAFETY: the kernel passes a valid siginfo to an SA_SIGINFO handler.
        let ours = unsafe {
            sys::si_code(info) == libc::TRAP_PERF && sys::si_perf_data(info) == PERF_SIG_DATA
        };
        if !ours {
            let prev = sys::PrevAction {
                handler: PREV_TRAP_HANDLER.load(Ordering::Acquire),
                flags: PREV_TRAP_FLAGS.load(Ordering::Relaxed),
            };
            // SAFETY: info/uctx come from the kernel for this signal; prev is the disposition
            // sigaction reported when ours was installed.
            unsafe { sys::forward_signal(sig, info, uctx, prev) };
            return;
        }
    }
    // SAFETY: uctx is the kernel's ucontext for this SA_SIGINFO signal.
    let pc = unsafe { sys::interrupted_pc(uctx) };
    hist::record(pc);
}
