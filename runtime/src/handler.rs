//! The sampling signal handler.
//!
//! # Contract
//!
//! `on_sample` runs asynchronously on whichever thread the clock interrupted. It may touch
//! only atomics and memory prepared before it was installed; it must not allocate, take a lock,
//! format, or call anything that is not async-signal-safe. It saves and restores `errno`. It is
//! installed with `SA_RESTART`, so interrupted system calls resume. A `SIGTRAP` or `SIGPROF` that
//! does not come from our clock (a debugger breakpoint, the program's own `raise` or
//! `setitimer`) goes to the program's own disposition and mask for it ([`crate::signals`]), so
//! the program behaves as it would without us.

use core::ffi::{c_int, c_void};

use crate::marks::{is_our_sample, SIG_DATA_THREAD};
use crate::{hist, objects, pcmode, signals, stacks, sys, threads};

/// The handler for `SIGTRAP` (perf backend) and `SIGPROF` (CPU-timer backend).
pub(crate) extern "C" fn on_sample(sig: c_int, info: *mut libc::siginfo_t, uctx: *mut c_void) {
    let _errno = sys::ErrnoGuard::save();
    // SAFETY: the kernel passes a valid siginfo to an SA_SIGINFO handler.
    if !unsafe { is_our_sample(sig, info) } {
        // SAFETY: info/uctx come from the kernel for this signal.
        unsafe { signals::dispatch_foreign(sig, info, uctx) };
        return;
    }
    // A thread with a one-shot clock of its own for its first period (see `threads`): of that
    // sample and the inherited clock's first, the later one is dropped.
    // SAFETY: as for is_our_sample.
    if !threads::keep_sample(unsafe { sys::si_value_word(info) } == SIG_DATA_THREAD) {
        return;
    }
    // SAFETY: uctx is the kernel's ucontext for this SA_SIGINFO signal.
    count_pc(unsafe { sys::interrupted_pc(uctx) });
    if hist::counting() {
        // SAFETY: as above.
        unsafe { stacks::record(uctx) };
    }
}

/// The histogram, the shared objects, pcsample mode and the programming interfaces. Out of
/// line, so that its large frame (`_dl_find_object`'s result) and the stack walk's are never
/// on the stack at once: the handler's stack use is the larger of the two, not their sum.
#[inline(never)]
fn count_pc(pc: usize) {
    let object = if hist::record(pc) {
        objects::record(pc)
    } else {
        None
    };
    pcmode::record(pc, object);
    crate::api::record(pc);
}
