//! How our samples are told from every other `SIGTRAP` and `SIGPROF`: the word our clocks
//! attach to their signals. A leaf, so that the modules that start clocks ([`crate::timer`],
//! [`crate::threads`]), filter signals ([`crate::signals`]) and take samples
//! ([`crate::handler`]) share it without naming each other.

use core::ffi::c_int;

use crate::sys;

/// Marks our signals: the perf event's `sig_data` (echoed in `si_perf_data`) and the CPU
/// timer's `si_value`.
pub const SIG_DATA: u64 = 0x7072_6f66_696c_7274; // "profilrt"
/// Marks the samples of a thread's own clock ([`crate::threads`]).
pub const SIG_DATA_THREAD: u64 = 0x7072_6f66_696c_7474; // "profiltt"

/// Is this signal one of our samples (`SIGTRAP` from our perf event, `SIGPROF` from our CPU
/// timer)? *Async-signal-safe.*
///
/// # Safety
/// `info` must point to the valid siginfo of `sig`.
pub unsafe fn is_our_sample(sig: c_int, info: *const libc::siginfo_t) -> bool {
    // SAFETY: the caller's valid siginfo.
    let (code, word) = unsafe { (sys::si_code(info), sys::si_value_word(info)) };
    (word == SIG_DATA
        && ((sig == libc::SIGTRAP && code == libc::TRAP_PERF)
            || (sig == libc::SIGPROF && code == libc::SI_TIMER)))
        || (word == SIG_DATA_THREAD && sig == libc::SIGTRAP && code == libc::TRAP_PERF)
}
