//! The program's view of signals: it sees exactly its own dispositions and masks.
//!
//! Our clock's signal (`SIGTRAP` for perf, `SIGPROF` for the CPU-time timer: the *sampling
//! signals*) must reach our handler in every thread, whatever the program does with that
//! signal; and the program must see none of it. The artifacts therefore export the signal
//! calls (`sigaction`, `signal`, `bsd_signal`, `sysv_signal`, `sigset`, `sigprocmask`,
//! `pthread_sigmask`, `sigwait`, `sigwaitinfo`, `sigtimedwait`: trampolines in `cabi`, the
//! exported C ABI, into this module's functions), which interpose libc's for the executable
//! and every library (a static executable's libc defines them weakly, so ours win there too). The real work is done with raw system calls
//! ([`sys::raw_sigaction`] with our own `rt_sigreturn` trampoline, [`sys::raw_sigprocmask`]),
//! never through libc's symbols, which would come back here.
//!
//! * **Dispositions.** For a sampling signal our handler stays installed for real; what the
//!   program sets is kept in a *virtual* disposition (initially whatever was in place when we
//!   installed ours) and is what `sigaction`/`signal` report. A signal that is not one of our
//!   samples (a debugger's breakpoint, `raise`, `kill -PROF`) is dispatched by our handler
//!   according to it ([`dispatch_foreign`]): `SIG_IGN` drops it; `SIG_DFL` restores the real
//!   default and re-raises, so the process dies exactly as it would; a handler is called with
//!   its `sa_mask` applied, `SA_RESETHAND` honoured and the right signature. For a terminating
//!   signal where the runtime's own handler stands in for the default action (lib.rs
//!   `TERMINATING`), the program is told `SIG_DFL`; setting `SIG_DFL` keeps ours, anything
//!   else is installed for real and wins.
//! * **Masks.** A sampling signal is never blocked for real, so every thread is sampled, even
//!   one that blocks everything (worker pools, `sigwait` servers), and the clock's signals
//!   never sit pending where `sigtimedwait`, `signalfd` or `sigpending` would see them. The
//!   program's blocked bit for it is kept per thread in an initial-exec TLS word (fork copies
//!   it; exec turns it back into a real blocked bit, see [`before_exec`]). A foreign signal
//!   arriving while the program's bit is set is *held*: queued again at the thread with its
//!   siginfo and blocked for real (through the mask the handler's return restores), so the
//!   program's unblock delivers it, `sigwait*`/`signalfd` read it and `sigpending` shows it,
//!   as without us. A `vfork` child (another pid sharing our memory, TLS word included) gets
//!   the real mask calls untouched, and before any exec a sample left pending by a blocked
//!   sampling signal is taken, so the new image never inherits one.
//! * **Waits.** `sigwait`, `sigwaitinfo` and `sigtimedwait` never return one of our samples:
//!   one taken by the wait (a process-directed `SIGPROF` can land on a thread that waits for
//!   it) is dropped and the wait goes on with the time left. Like libc's, these waits are
//!   cancellation points (the raw wait runs with the asynchronous cancellation type, which is
//!   what glibc's own wrappers do), so a signal thread cancelled at shutdown still ends.
//!   `signalfd` needs nothing: our samples are never pending.
//! * **Alternate stacks.** While one of the program's `SA_ONSTACK` handlers runs, the sampling
//!   signals are blocked (added to its real `sa_mask`, and removed again from what it is told),
//!   so a sample never lands a second signal frame on a small alternate stack; such a sample is
//!   delivered when the handler returns. Our handler itself uses `SA_ONSTACK` exactly when the
//!   program's virtual disposition of that signal does, so the program's own handler for it
//!   runs on the stack it asked for.
//!
//! Limits (documented in the crate docs): threads start with the program's blocked bit clear
//! (the TLS word is zero in a new thread, where the kernel copies the creator's real mask);
//! `sigsuspend`, `pause`, `siginterrupt`, `sighold`/`sigrelse`/`sigignore` and `posix_spawn`'s
//! signal attributes are not interposed (glibc implements them with internal calls).

use core::ffi::{c_int, c_void};
use core::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};

use crate::sys::{self, sigbit, KernelSigaction};

/// Signals glibc keeps for itself (`SIGCANCEL`, `SIGSETXID`): its `sigaction` refuses them and
/// its masks never contain them.
const INTERNAL: u64 = sigbit(32) | sigbit(33);

/// The sampling signals whose real disposition is our handler.
static SAMPLING: AtomicU64 = AtomicU64::new(0);

/// How many versions of a virtual disposition are kept: a writer fills the next slot and then
/// publishes its index, so the handler never reads a half-written disposition (unless eight
/// more `sigaction` calls for the same signal complete while it reads one).
const SLOTS: usize = 8;

struct Slot {
    handler: AtomicUsize,
    flags: AtomicU64,
    restorer: AtomicUsize,
    mask: AtomicU64,
}

#[allow(clippy::declare_interior_mutable_const)]
const EMPTY_SLOT: Slot = Slot {
    handler: AtomicUsize::new(0),
    flags: AtomicU64::new(0),
    restorer: AtomicUsize::new(0),
    mask: AtomicU64::new(0),
};
#[allow(clippy::declare_interior_mutable_const)]
const EMPTY_TABLE: [Slot; SLOTS] = [EMPTY_SLOT; SLOTS];

/// The program's dispositions of `SIGTRAP` (0) and `SIGPROF` (1).
static VIRTUAL: [[Slot; SLOTS]; 2] = [EMPTY_TABLE; 2];
static CURRENT: [AtomicU32; 2] = [AtomicU32::new(0), AtomicU32::new(0)];
static NEXT: [AtomicU32; 2] = [AtomicU32::new(0), AtomicU32::new(0)];

/// Per signal: the sampling signals we added to the real `sa_mask` of the program's
/// `SA_ONSTACK` handler (so that they can be taken out of what the program is told).
static ADDED: [AtomicU64; 65] = [const { AtomicU64::new(0) }; 65];

fn index(sig: c_int) -> Option<usize> {
    match sig {
        libc::SIGTRAP => Some(0),
        libc::SIGPROF => Some(1),
        _ => None,
    }
}

fn is_sampling(sig: c_int) -> bool {
    SAMPLING.load(Ordering::Acquire) & sigbit(sig) != 0
}

/// The program's disposition of a sampling signal. *Async-signal-safe.*
fn virtual_get(i: usize) -> KernelSigaction {
    let s = &VIRTUAL[i][CURRENT[i].load(Ordering::Acquire) as usize % SLOTS];
    KernelSigaction {
        handler: s.handler.load(Ordering::Relaxed),
        flags: s.flags.load(Ordering::Relaxed),
        restorer: s.restorer.load(Ordering::Relaxed),
        mask: s.mask.load(Ordering::Relaxed),
    }
}

fn virtual_set(i: usize, a: &KernelSigaction) {
    let n = NEXT[i].fetch_add(1, Ordering::Relaxed).wrapping_add(1) as usize % SLOTS;
    let s = &VIRTUAL[i][n];
    s.handler.store(a.handler, Ordering::Relaxed);
    s.flags.store(a.flags, Ordering::Relaxed);
    s.restorer.store(a.restorer, Ordering::Relaxed);
    s.mask.store(a.mask, Ordering::Relaxed);
    CURRENT[i].store(n as u32, Ordering::Release);
}

// The calling thread's blocked bits for the sampling signals, as the program set them: one
// initial-exec TLS word (fs-relative, no call, no allocation: usable from the handler).
#[cfg(target_arch = "x86_64")]
core::arch::global_asm!(
    ".pushsection .tbss,\"awT\",@nobits",
    ".balign 8",
    ".type profil_rt_tls_blocked, @object",
    ".size profil_rt_tls_blocked, 8",
    "profil_rt_tls_blocked:",
    ".zero 8",
    ".popsection",
);

fn tls_blocked() -> *mut u64 {
    let p: *mut u64;
    // SAFETY: reads the thread pointer and the symbol's TLS offset from the GOT (initial-exec
    // model); the result is this thread's copy of the word, valid for the thread's life.
    unsafe {
        core::arch::asm!(
            "movq %fs:0, {p}",
            "addq profil_rt_tls_blocked@GOTTPOFF(%rip), {p}",
            p = out(reg) p,
            options(att_syntax, nostack, pure, readonly),
        );
    }
    p
}

fn blocked_bits() -> u64 {
    // SAFETY: this thread's TLS word, only ever accessed by this thread (and its handlers).
    unsafe { core::ptr::read_volatile(tls_blocked()) }
}

fn set_blocked_bits(v: u64) {
    // SAFETY: as in blocked_bits.
    unsafe { core::ptr::write_volatile(tls_blocked(), v) }
}

/// The process whose TLS words these are: a `vfork` child (or a child made without fork
/// handlers, `_Fork`, a raw `clone`) shares the parent's memory or at least not its clock, and
/// gets the real signal calls, untouched ([`mask_k`]).
static PID: AtomicU32 = AtomicU32::new(0);

extern "C" fn after_fork_in_child() {
    PID.store(sys::getpid(), Ordering::Relaxed);
}

fn foreign_process() -> bool {
    let p = PID.load(Ordering::Relaxed);
    p != 0 && p != sys::getpid()
}

/// The handler [`install_sampling`] installed last (0: none yet).
static HANDLER: AtomicUsize = AtomicUsize::new(0);

/// The address of the sampling handler in place (`handler::on_sample`), 0 before the
/// first [`install_sampling`]: [`crate::api`] checks that the program left it installed.
pub fn sampling_handler() -> usize {
    HANDLER.load(Ordering::Relaxed)
}

/// Install our `handler` for the sampling signal `sig` (`SIGTRAP` or `SIGPROF`). The first time,
/// the disposition in place becomes the program's virtual one; later calls (after a fork or a
/// failed exec) keep the virtual one.
pub fn install_sampling(sig: c_int, handler: sys::SigInfoHandler) -> Result<(), c_int> {
    let Some(i) = index(sig) else {
        return Err(libc::EINVAL);
    };
    if PID.load(Ordering::Relaxed) == 0 {
        PID.store(sys::getpid(), Ordering::Relaxed);
        let _ = sys::at_fork_child(after_fork_in_child);
    }
    if !is_sampling(sig) {
        let mut old = KernelSigaction::default();
        sys::raw_sigaction(sig, None, Some(&mut old))?;
        if old.handler != handler as usize {
            virtual_set(i, &old);
        }
    }
    let onstack = virtual_get(i).flags & libc::SA_ONSTACK as u64;
    sys::install_handler(sig, handler, onstack)?;
    HANDLER.store(handler as usize, Ordering::Relaxed);
    SAMPLING.fetch_or(sigbit(sig), Ordering::AcqRel);
    // This thread's own blocked bit (the constructor's thread: usually the main thread).
    let mut real = 0;
    if sys::raw_sigprocmask(libc::SIG_BLOCK, None, Some(&mut real)).is_ok()
        && real & sigbit(sig) != 0
    {
        set_blocked_bits(blocked_bits() | sigbit(sig));
        let _ = sys::raw_sigprocmask(libc::SIG_UNBLOCK, Some(sigbit(sig)), None);
    }
    Ok(())
}

/// Is `handler` one of the runtime's stand-ins for a default action (a terminating signal's)?
fn is_stand_in(handler: usize) -> bool {
    handler == crate::on_terminate as sys::SigInfoHandler as usize
}

fn from_libc(a: &libc::sigaction) -> KernelSigaction {
    KernelSigaction {
        handler: a.sa_sigaction,
        flags: a.sa_flags as u32 as u64,
        restorer: a.sa_restorer.map_or(0, |f| f as usize),
        // SAFETY: a valid sigaction's mask.
        mask: unsafe { sys::sigset_word(&a.sa_mask) },
    }
}

fn to_libc(k: &KernelSigaction, out: &mut libc::sigaction) {
    out.sa_sigaction = k.handler;
    out.sa_flags = k.flags as c_int;
    out.sa_restorer = if k.restorer == 0 {
        None
    } else {
        // SAFETY: a restorer address the kernel (or our table) holds is a function.
        Some(unsafe { core::mem::transmute::<usize, extern "C" fn()>(k.restorer) })
    };
    // SAFETY: `out.sa_mask` is a sigset_t.
    unsafe { sys::set_sigset_word(&mut out.sa_mask, k.mask) };
}

/// `sigaction(2)` as the program sees it.
///
/// # Safety
/// As for sigaction(2): `act` and `old` are null or valid.
pub unsafe fn sigaction(
    sig: c_int,
    act: *const libc::sigaction,
    old: *mut libc::sigaction,
) -> c_int {
    // SAFETY: the caller's pointers.
    let new = unsafe { act.as_ref() }.map(from_libc);
    match sigaction_k(sig, new) {
        Ok(prev) => {
            // SAFETY: the caller's pointer, null or writable.
            if let Some(o) = unsafe { old.as_mut() } {
                to_libc(&prev, o);
            }
            0
        }
        Err(e) => {
            sys::set_errno(e);
            -1
        }
    }
}

fn sigaction_k(sig: c_int, new: Option<KernelSigaction>) -> Result<KernelSigaction, c_int> {
    if sigbit(sig) == 0 || sigbit(sig) & INTERNAL != 0 {
        return Err(libc::EINVAL);
    }
    if let (true, Some(i)) = (is_sampling(sig), index(sig)) {
        let prev = virtual_get(i);
        if let Some(n) = new {
            // What the kernel would keep after libc's call: the flags with SA_RESTORER and
            // the trampoline.
            let n = KernelSigaction {
                flags: n.flags | sys::SA_RESTORER,
                restorer: sys::restorer(),
                ..n
            };
            virtual_set(i, &n);
            // Our handler runs on the alternate stack when the program's would.
            let mut real = KernelSigaction::default();
            sys::raw_sigaction(sig, None, Some(&mut real))?;
            let onstack = libc::SA_ONSTACK as u64;
            if real.flags & onstack != n.flags & onstack {
                real.flags = (real.flags & !onstack) | (n.flags & onstack);
                sys::raw_sigaction(sig, Some(&real), None)?;
            }
        }
        return Ok(prev);
    }
    let mut real = KernelSigaction::default();
    sys::raw_sigaction(sig, None, Some(&mut real))?;
    if is_stand_in(real.handler) {
        // The default action, as far as the program knows; ours stays for SIG_DFL.
        if let Some(n) = new.filter(|n| n.handler != libc::SIG_DFL) {
            install_real(sig, n)?;
        }
        return Ok(KernelSigaction::default());
    }
    let added = ADDED[sig as usize].load(Ordering::Relaxed);
    let prev = KernelSigaction {
        mask: real.mask & !added,
        ..real
    };
    if let Some(n) = new {
        install_real(sig, n)?;
    }
    Ok(prev)
}

/// Install the program's disposition `n` for `sig` for real, blocking the sampling signals
/// while an `SA_ONSTACK` handler runs.
fn install_real(sig: c_int, mut n: KernelSigaction) -> Result<(), c_int> {
    let mut added = 0;
    if n.flags & libc::SA_ONSTACK as u64 != 0
        && n.handler != libc::SIG_DFL
        && n.handler != libc::SIG_IGN
    {
        added = SAMPLING.load(Ordering::Acquire) & !n.mask & !sigbit(sig);
        n.mask |= added;
    }
    sys::raw_sigaction(sig, Some(&n), None)?;
    ADDED[sig as usize].store(added, Ordering::Relaxed);
    Ok(())
}

/// The three `signal` flavours: BSD (`signal`, `bsd_signal`: the signal blocked in its handler,
/// system calls restarted) and System V (`sysv_signal`: one-shot, not blocked).
pub fn signal(sig: c_int, handler: usize, sysv: bool) -> usize {
    if handler == libc::SIG_ERR {
        sys::set_errno(libc::EINVAL);
        return libc::SIG_ERR;
    }
    let act = if sysv {
        KernelSigaction {
            handler,
            flags: (libc::SA_RESETHAND | libc::SA_NODEFER) as u32 as u64,
            ..Default::default()
        }
    } else {
        KernelSigaction {
            handler,
            flags: libc::SA_RESTART as u64,
            mask: sigbit(sig),
            ..Default::default()
        }
    };
    match sigaction_k(sig, Some(act)) {
        Ok(prev) => prev.handler,
        Err(e) => {
            sys::set_errno(e);
            libc::SIG_ERR
        }
    }
}

/// `SIG_HOLD` (glibc's value).
pub const SIG_HOLD: usize = 2;

/// System V `sigset`: `SIG_HOLD` blocks the signal, anything else sets the disposition and
/// unblocks it; returns `SIG_HOLD` if it was blocked, else the previous disposition.
pub fn sigset(sig: c_int, disp: usize) -> usize {
    let b = sigbit(sig);
    if b == 0 || b & INTERNAL != 0 || disp == libc::SIG_ERR {
        sys::set_errno(libc::EINVAL);
        return libc::SIG_ERR;
    }
    if disp == SIG_HOLD {
        let Ok(was) = mask_k(libc::SIG_BLOCK, Some(b)) else {
            return libc::SIG_ERR;
        };
        if was & b != 0 {
            return SIG_HOLD;
        }
        return sigaction_k(sig, None).map_or(libc::SIG_ERR, |p| p.handler);
    }
    let act = KernelSigaction {
        handler: disp,
        ..Default::default()
    };
    let prev = match sigaction_k(sig, Some(act)) {
        Ok(p) => p,
        Err(e) => {
            sys::set_errno(e);
            return libc::SIG_ERR;
        }
    };
    match mask_k(libc::SIG_UNBLOCK, Some(b)) {
        Ok(was) if was & b != 0 => SIG_HOLD,
        Ok(_) => prev.handler,
        Err(_) => libc::SIG_ERR,
    }
}

/// The calling thread's signal mask as the program sees it, changed as it asks: the sampling
/// signals' bits live in the TLS word, never in the real mask. Returns the previous mask.
/// *Async-signal-safe.*
fn mask_k(how: c_int, set: Option<u64>) -> Result<u64, c_int> {
    let sampling = SAMPLING.load(Ordering::Acquire);
    let before = blocked_bits();
    if foreign_process() {
        // A vfork child: its TLS word is the parent thread's, so leave it alone; the mask it
        // asks for is set for real (before_exec then drains any sample that is pending).
        let mut real_old = 0;
        sys::raw_sigprocmask(how, set.map(|w| w & !INTERNAL), Some(&mut real_old))?;
        return Ok(real_old | (before & sampling));
    }
    let real_new = match set {
        None => None,
        Some(w) => {
            let w = w & !INTERNAL;
            let (v, real) = match how {
                libc::SIG_BLOCK => (before | (w & sampling), w & !sampling),
                // Unblocking for real also releases a held foreign signal (see dispatch_foreign).
                libc::SIG_UNBLOCK => (before & !w, w),
                libc::SIG_SETMASK => (w & sampling, w & !sampling),
                _ => return Err(libc::EINVAL),
            };
            // Before the real call: a held signal released by it must see the new bits.
            set_blocked_bits(v);
            Some(real)
        }
    };
    let mut real_old = 0;
    if let Err(e) = sys::raw_sigprocmask(how, real_new, Some(&mut real_old)) {
        set_blocked_bits(before);
        return Err(e);
    }
    Ok((real_old & !sampling) | (before & sampling))
}

/// `pthread_sigmask`/`sigprocmask` as the program sees them; returns 0 or an errno.
///
/// # Safety
/// `set` and `old` are null or valid `sigset_t`s.
pub unsafe fn sigmask(how: c_int, set: *const libc::sigset_t, old: *mut libc::sigset_t) -> c_int {
    // SAFETY: the caller's pointer, null or a valid sigset_t.
    let set = (!set.is_null()).then(|| unsafe { sys::sigset_word(set) });
    match mask_k(how, set) {
        Ok(prev) => {
            if !old.is_null() {
                // SAFETY: the caller's writable sigset_t.
                unsafe { sys::set_sigset_word(old, prev) };
            }
            0
        }
        Err(e) => e,
    }
}

/// `sigtimedwait` (and `sigwaitinfo` with no timeout) that never returns one of our samples.
/// Returns the signal or an errno.
///
/// # Safety
/// `set` must be a valid `sigset_t`; `info` null or writable; `timeout` null or valid.
pub unsafe fn sigtimedwait(
    set: *const libc::sigset_t,
    info: *mut libc::siginfo_t,
    timeout: *const libc::timespec,
) -> Result<c_int, c_int> {
    if set.is_null() {
        return Err(libc::EFAULT);
    }
    // SAFETY: the caller's set, not null.
    let want = unsafe { sys::sigset_word(set) } & !INTERNAL;
    // SAFETY: the caller's timeout, null or valid.
    let limit = unsafe { timeout.as_ref() }.map(|t| {
        let ns = (t.tv_sec.max(0) as u64)
            .saturating_mul(1_000_000_000)
            .saturating_add(t.tv_nsec.max(0) as u64);
        sys::monotonic_ns().saturating_add(ns)
    });
    loop {
        // SAFETY: an all-zero siginfo is valid plain data.
        let mut si: libc::siginfo_t = unsafe { core::mem::zeroed() };
        let left = limit.map(|end| {
            let ns = end.saturating_sub(sys::monotonic_ns());
            libc::timespec {
                tv_sec: (ns / 1_000_000_000) as libc::time_t,
                tv_nsec: (ns % 1_000_000_000) as _,
            }
        });
        let tp = left.as_ref().map_or(core::ptr::null(), |t| t as *const _);
        // SAFETY: a local siginfo and timespec. Like libc's, this wait is a cancellation point.
        let sig =
            sys::as_cancellation_point(|| unsafe { sys::raw_sigtimedwait(want, &mut si, tp) })?;
        // SAFETY: the kernel filled `si` for `sig`.
        if unsafe { crate::marks::is_our_sample(sig, &si) } {
            continue; // a sample of ours, taken by the wait: not the program's
        }
        if !info.is_null() {
            // As glibc's wrapper: `raise` (tgkill) reads as SI_USER, not SI_TKILL.
            if si.si_code == libc::SI_TKILL {
                si.si_code = libc::SI_USER;
            }
            // SAFETY: the caller's writable siginfo.
            unsafe { *info = si };
        }
        return Ok(sig);
    }
}

/// A signal for a sampling signal that is not one of our samples arrived at our handler:
/// deliver it as the program's disposition and mask say. *Async-signal-safe.*
///
/// # Safety
/// `info` and `uctx` must be what the kernel passed to the handler for `sig`.
pub unsafe fn dispatch_foreign(sig: c_int, info: *mut libc::siginfo_t, uctx: *mut c_void) {
    let Some(i) = index(sig) else { return };
    if blocked_bits() & sigbit(sig) != 0 {
        // Held: pending again at this thread and blocked for real once we return, until the
        // program unblocks it (or takes it with sigwait*/signalfd).
        // SAFETY: the kernel's ucontext and siginfo for this signal.
        unsafe {
            *sys::saved_mask(uctx) |= sigbit(sig);
            sys::requeue_to_self(sig, info);
        }
        return;
    }
    let d = virtual_get(i);
    match d.handler {
        libc::SIG_IGN => {}
        libc::SIG_DFL => sys::reraise_default(sig),
        h => {
            if d.flags & libc::SA_RESETHAND as u64 != 0 {
                // As the kernel does: the handler only goes back to the default.
                let reset = KernelSigaction {
                    handler: libc::SIG_DFL,
                    ..d
                };
                virtual_set(i, &reset);
            }
            // Its sa_mask, for the time it runs (the kernel restores the mask at our return);
            // the sampling signals stay unblocked, so it is still sampled.
            let block = d.mask & !SAMPLING.load(Ordering::Relaxed) & !INTERNAL;
            if block != 0 {
                let _ = sys::raw_sigprocmask(libc::SIG_BLOCK, Some(block), None);
            }
            if d.flags & libc::SA_SIGINFO as u64 != 0 {
                // SAFETY: installed with SA_SIGINFO, so it has this signature.
                let f = unsafe { core::mem::transmute::<usize, sys::SigInfoHandler>(h) };
                f(sig, info, uctx);
            } else {
                // SAFETY: without SA_SIGINFO a handler takes the signal number only.
                let f = unsafe { core::mem::transmute::<usize, extern "C" fn(c_int)>(h) };
                f(sig);
            }
        }
    }
}

/// Before an exec: the new image starts with the dispositions and mask the program set
/// (exec resets handlers to the default but keeps `SIG_IGN` and the mask).
pub fn before_exec() {
    let sampling = SAMPLING.load(Ordering::Acquire);
    if sampling == 0 {
        return;
    }
    if !foreign_process() {
        let v = blocked_bits() & sampling;
        if v != 0 {
            let _ = sys::raw_sigprocmask(libc::SIG_BLOCK, Some(v), None);
        }
    }
    // A sample that became pending once the signal was blocked would survive the exec and
    // reach the new image (which may not catch it): take it now. A foreign one goes back.
    let mut real = 0;
    let _ = sys::raw_sigprocmask(libc::SIG_BLOCK, None, Some(&mut real));
    let drain = real & sampling;
    if drain != 0 {
        let zero = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        loop {
            // SAFETY: an all-zero siginfo is valid plain data.
            let mut si: libc::siginfo_t = unsafe { core::mem::zeroed() };
            // SAFETY: a local siginfo and timespec.
            let Ok(sig) = (unsafe { sys::raw_sigtimedwait(drain, &mut si, &zero) }) else {
                break;
            };
            // SAFETY: the kernel filled `si` for `sig`.
            if !unsafe { crate::marks::is_our_sample(sig, &si) } {
                // SAFETY: the siginfo the kernel gave us for `sig`.
                unsafe { sys::requeue_to_self(sig, &si) };
                break;
            }
        }
    }
    for sig in [libc::SIGTRAP, libc::SIGPROF] {
        if let (true, Some(i)) = (sampling & sigbit(sig) != 0, index(sig)) {
            if virtual_get(i).handler == libc::SIG_IGN {
                let ign = KernelSigaction {
                    handler: libc::SIG_IGN,
                    ..Default::default()
                };
                let _ = sys::raw_sigaction(sig, Some(&ign), None);
            }
        }
    }
}

/// After a failed exec: our `handler` and the real mask as they were.
pub fn after_failed_exec(handler: sys::SigInfoHandler) {
    let sampling = SAMPLING.load(Ordering::Acquire);
    if !foreign_process() {
        let _ = sys::raw_sigprocmask(libc::SIG_UNBLOCK, Some(sampling), None);
    }
    for sig in [libc::SIGTRAP, libc::SIGPROF] {
        if sampling & sigbit(sig) != 0 {
            let _ = install_sampling(sig, handler);
        }
    }
}
