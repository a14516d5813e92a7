//! The sampling signal handler.
//!
//! # Contract
//!
//! `on_sample` runs asynchronously on whichever thread the clock interrupted. It may touch
//! only atomics and memory prepared before it was installed; it must not allocate, take a lock,
//! format, or call anything that is not async-signal-safe. It saves and restores `errno`. It is
//! installed with `SA_RESTART`, so interrupted system calls resume. A `SIGTRAP` or `SIGPROF` that
//! does not come from our clock (a debugger breakpoint, the program's own `raise` or
//! `setitimer`) is passed on to the disposition that was in place before ours, so the program
//! behaves as it would without us.

use core::ffi::{c_int, c_void};
use core::sync::atomic::{AtomicI32, AtomicUsize, Ordering};

use crate::{hist, objects, pcmode, sys};

/// Marks our signals: the perf event's `sig_data` (echoed in `si_perf_data`) and the CPU
/// timer's `si_value`.
pub const SIG_DATA: u64 = 0x7072_6f66_696c_7274; // "profilrt"

// The dispositions ours replaced: [SIGTRAP, SIGPROF].
static PREV_HANDLER: [AtomicUsize; 2] = [
    AtomicUsize::new(libc::SIG_DFL),
    AtomicUsize::new(libc::SIG_DFL),
];
static PREV_FLAGS: [AtomicI32; 2] = [AtomicI32::new(0), AtomicI32::new(0)];

fn slot(sig: c_int) -> usize {
    usize::from(sig != libc::SIGTRAP)
}

/// Install `on_sample` for `sig` (`SIGTRAP` or `SIGPROF`), remembering what it replaces. A
/// second installation (after fork or exec failure) keeps the first saved disposition.
pub fn install(sig: c_int) -> Result<(), c_int> {
    let prev = sys::install_handler(sig, on_sample)?;
    if prev.handler != on_sample as sys::SigInfoHandler as usize {
        PREV_FLAGS[slot(sig)].store(prev.flags, Ordering::Relaxed);
        PREV_HANDLER[slot(sig)].store(prev.handler, Ordering::Release);
    }
    Ok(())
}

/// The handler for `SIGTRAP` (perf backend) and `SIGPROF` (CPU-timer backend).
pub(crate) extern "C" fn on_sample(sig: c_int, info: *mut libc::siginfo_t, uctx: *mut c_void) {
    let _errno = sys::ErrnoGuard::save();
    // SAFETY: the kernel passes a valid siginfo to an SA_SIGINFO handler.
    let (code, word) = unsafe { (sys::si_code(info), sys::si_value_word(info)) };
    let ours = word == SIG_DATA
        && ((sig == libc::SIGTRAP && code == libc::TRAP_PERF)
            || (sig == libc::SIGPROF && code == libc::SI_TIMER));
    if !ours {
        let prev = sys::PrevAction {
            handler: PREV_HANDLER[slot(sig)].load(Ordering::Acquire),
            flags: PREV_FLAGS[slot(sig)].load(Ordering::Relaxed),
        };
        // SAFETY: info/uctx come from the kernel for this signal; prev is the disposition
        // sigaction reported when ours was installed.
        unsafe { sys::forward_signal(sig, info, uctx, prev) };
        return;
    }
    // SAFETY: uctx is the kernel's ucontext for this SA_SIGINFO signal.
    let pc = unsafe { sys::interrupted_pc(uctx) };
    let object = if hist::record(pc) {
        objects::record(pc)
    } else {
        None
    };
    pcmode::record(pc, object);
    crate::api::record(pc);
}
