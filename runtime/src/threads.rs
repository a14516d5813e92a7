//! Thread clocks: a thread the program creates with `pthread_create` is sampled in proportion
//! to its CPU time even when it runs less than one sampling period.
//!
//! # Why
//!
//! The perf clock is inherited by new threads ([`crate::timer`]), and an inherited event starts
//! its first period afresh: a thread that runs less than one sampling period (1 ms at 1000 Hz)
//! is never sampled. A thousand threads of 0.4 ms each that did 80% of a program's work got 2%
//! of its samples. The kernel offers no way to give an inherited copy another phase
//! (`PERF_EVENT_IOC_PERIOD` reaches only the event behind the descriptor it is called on), nor
//! to switch the copy off in one thread.
//!
//! # How
//!
//! The program's `pthread_create` calls reach ours, which calls libc's (see "Preloaded" and
//! "Linked in" below). While the perf clock runs, the new thread starts in
//! `trampoline`, which, before it calls the program's start routine, opens a one-shot task
//! clock of the thread's own (not inherited; `PERF_EVENT_IOC_REFRESH` 1: the kernel disables it after one
//! sample) whose period U is drawn uniformly from (0, P], P the sampling period. The thread's
//! first period gets exactly one sample: whichever of that one-shot sample and the inherited
//! clock's first (at P) comes first is kept and the other dropped ([`keep_sample`]: two bits
//! in an initial-exec TLS word, no system call in the handler); every later sample is the
//! inherited clock's, as before. So a thread of CPU time T < P is sampled once with
//! probability T/P (on average T/P samples, its share), and a longer one gets the samples it
//! got before, floor(T/P) (its last partial period is not sampled: at most one sample short
//! per thread, as before). Dropped samples are not counted as samples.
//!
//! Why not a random phase for the thread's whole life (a periodic own clock, the inherited
//! one's samples all dropped): measured, two periodic `SIGTRAP` events in one thread lose up
//! to a quarter of either's signals on a loaded machine (a thread of 0.91 CPU-seconds got 661
//! samples instead of about 900), while one event alone loses about 1%. The one-shot clock
//! overlaps the inherited one for one period only, and measured, long threads keep their
//! samples exactly as with the inherited clock alone.
//!
//! A thread whose own clock cannot be opened (descriptors exhausted, perf refused) keeps the
//! inherited clock alone.
//!
//! The start routine and its argument travel to the new thread through a fixed table of slots
//! (no allocation); when every slot is taken (more than [`SLOTS`] threads starting at once) the
//! thread is created exactly as without us and keeps the inherited clock.
//!
//! The own clock's descriptor is kept like the main clock's ([`crate::timer`]): close-on-exec,
//! at a high number, its identity (device, inode, event id) checked before it is closed. It
//! is closed when the thread ends, by the destructor of a
//! thread-specific data key (so also after `pthread_exit` or cancellation); a forked child
//! closes its copy (the event belongs to the parent's thread). Nothing changes for the program:
//! the call returns what libc's returns, `errno` is preserved in both threads, the thread's
//! attributes, mask and detach state are libc's doing.
//!
//! # Preloaded
//!
//! The shared object exports `pthread_create`, which interposes libc's for the executable and
//! every library; the next definition, libc's, is found with `dlsym(RTLD_NEXT)` in the
//! constructor, before any sample.
//!
//! # Linked in
//!
//! The object defines `pthread_create` too, with no linker option ([`crate::link`]):
//!
//! * in a dynamic executable it is exported (libc.so.6, on every link line, defines the name),
//!   so it interposes libc's for the program and for its shared libraries alike (libstdc++'s
//!   `std::thread`, OpenMP, a library of the program's own); libc's is the next definition,
//!   `dlsym(RTLD_NEXT)`, resolved in the constructor;
//! * in a static executable it replaces libc.a's `pthread_create`, a weak alias of
//!   `__pthread_create`, which the object reaches through a weak reference. The linker binds
//!   it whenever libc.a's pthread_create.o is in the link, which the runtime's own
//!   `timer_create` ensures (glibc 2.36: timer_routines.o calls `__pthread_create`). Were it
//!   missing, the call would fail with `EAGAIN` and one line on stderr, never jump to 0.
//!
//! Programs linked with the options of earlier versions, [`LINK_FLAGS`]
//! (`--wrap=pthread_create,--defsym=__wrap_pthread_create=profil_rt_pthread_create,...`),
//! still link and call `profil_rt_pthread_create`: the same function as our `pthread_create`,
//! which ignores the `__real_pthread_create` those options bind (to ours), so a thread never
//! gets two trampolines. A preloaded shared object next to a linked one stays out (see
//! `cabi`): the executable's `pthread_create` comes first in the lookup, and its `RTLD_NEXT`
//! may be the shared object's, which then only forwards to libc's.
//!
//! The key is created in the constructor where the loader says the process's
//! `pthread_create` is ours, and otherwise (a static executable) by the first call while the
//! perf clock runs (in the calling thread, never in a signal handler).
//!
//! # Where not
//!
//! * Threads libc creates itself (`SIGEV_THREAD` timers, `aio`) call its internal
//!   `__pthread_create`. The inherited clock samples those as before: their first period is
//!   not sampled, and the report shows that CPU time as not sampled.
//! * A library that finds `pthread_create` with `dlsym(RTLD_NEXT)` itself, or one loaded into
//!   another namespace (`dlmopen`), reaches libc's directly.
//! * The CPU-time timer (`PROFIL_TIMER=itimer`) is process-wide, with no phase per thread.
//! * The first sample of a thread's own clock comes U after the clock opened, a few
//!   microseconds into the thread (its start in libc, the trampoline): not measured from the
//!   thread's very start.
//! * Only a key among glibc's first 32 is used (their values live in the thread's descriptor;
//!   later keys allocate).

use core::ffi::{c_int, c_void};
use core::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};

use crate::timer::{self, Backend};
use crate::{marks, stacks, sys};

/// A thread start routine.
pub type StartFn = extern "C" fn(*mut c_void) -> *mut c_void;
type CreateFn = unsafe extern "C" fn(
    *mut libc::pthread_t,
    *const libc::pthread_attr_t,
    Option<StartFn>,
    *mut c_void,
) -> c_int;

/// How many threads may be starting at once with a clock of their own.
pub const SLOTS: usize = 256;
static SLOT_START: [AtomicUsize; SLOTS] = [const { AtomicUsize::new(0) }; SLOTS];
static SLOT_ARG: [AtomicUsize; SLOTS] = [const { AtomicUsize::new(0) }; SLOTS];
static SLOT_BUSY: [AtomicBool; SLOTS] = [const { AtomicBool::new(false) }; SLOTS];
static SLOT_HINT: AtomicUsize = AtomicUsize::new(0);

/// libc's `pthread_create` (0: not resolved yet).
static REAL: AtomicUsize = AtomicUsize::new(0);
/// Our exported `pthread_create` (the artifacts tell it at start; 0: none).
static WRAPPER: AtomicUsize = AtomicUsize::new(0);
/// The key whose destructor closes a thread's clock (`NO_KEY`: own clocks off).
static KEY: AtomicU32 = AtomicU32::new(NO_KEY);
const NO_KEY: u32 = u32::MAX;
/// A seccomp filter went in: no system call any more.
static SANDBOXED: AtomicBool = AtomicBool::new(false);
static SEED: AtomicU64 = AtomicU64::new(0);

// The calling thread's own clock: descriptor + 1 (0: none), kernel id, and whether its first
// (random) period is still running. Initial-exec TLS (fs-relative, no call, no allocation:
// usable from the handler).
#[cfg(target_arch = "x86_64")]
core::arch::global_asm!(
    ".pushsection .tbss,\"awT\",@nobits",
    ".balign 8",
    ".type profil_rt_tls_clock, @object",
    ".size profil_rt_tls_clock, 24",
    "profil_rt_tls_clock:",
    ".zero 24",
    ".popsection",
);

#[cfg(target_arch = "x86_64")]
fn tls() -> *mut [u64; 3] {
    let p: *mut [u64; 3];
    // SAFETY: reads the thread pointer and the symbol's TLS offset from the GOT (initial-exec
    // model); the result is this thread's copy of the words, valid for the thread's life.
    unsafe {
        core::arch::asm!(
            "movq %fs:0, {p}",
            "addq profil_rt_tls_clock@GOTTPOFF(%rip), {p}",
            p = out(reg) p,
            options(att_syntax, nostack, pure, readonly),
        );
    }
    p
}

#[cfg(target_arch = "x86_64")]
fn tls_get(i: usize) -> u64 {
    // SAFETY: this thread's TLS words, only ever accessed by this thread (and its handlers).
    unsafe { core::ptr::read_volatile(&(*tls())[i]) }
}

#[cfg(target_arch = "x86_64")]
fn tls_set(i: usize, v: u64) {
    // SAFETY: as in tls_get.
    unsafe { core::ptr::write_volatile(&mut (*tls())[i], v) }
}

// Elsewhere no TLS word: no thread has a clock of its own.
#[cfg(not(target_arch = "x86_64"))]
fn tls_get(_: usize) -> u64 {
    0
}

#[cfg(not(target_arch = "x86_64"))]
fn tls_set(_: usize, _: u64) {}

const FD: usize = 0;
const ID: usize = 1;
const STATE: usize = 2;
// Bits of STATE: the one-shot clock fired; the inherited clock fired.
const OWN_FIRED: u64 = 1;
const INHERITED_FIRED: u64 = 2;

/// The artifacts' exported `pthread_create`, told before [`init`].
pub fn set_wrapper(addr: usize) {
    WRAPPER.store(addr, Ordering::Relaxed);
}

/// At start (the constructor, not a signal handler: this takes libc's locks): find libc's
/// `pthread_create` now, before any sample, and create the key if the process's
/// `pthread_create` is already known to be ours (the shared object preloaded, or the object
/// in a dynamic executable, which exports it). Otherwise (a static executable, where the
/// loader cannot tell) the first call of ours creates it ([`create`]).
pub fn init() {
    // Our pthread_create's own frames, where the compiler kept them apart from the exported
    // entry points (which the constructor names): left out of the walks as those are.
    stacks::leave_out(create as *const () as usize);
    stacks::leave_out(create_via as *const () as usize);
    let ours = WRAPPER.load(Ordering::Relaxed);
    if ours == 0 || !cfg!(target_arch = "x86_64") {
        return;
    }
    let _ = real();
    if sys::global_symbol(c"pthread_create") == ours {
        ensure_key();
    }
}

/// Whether the key has been set up: 0 not yet, 1 under way, 2 done.
static KEY_STATE: AtomicU32 = AtomicU32::new(0);

/// Create, once, the key whose destructor closes a thread's own clock, and turn own clocks on
/// with it. Only a key among glibc's first 32 is kept: their values live in the thread
/// descriptor, so setting one never allocates. A call racing the first one goes on without.
fn ensure_key() {
    if KEY_STATE
        .compare_exchange(0, 1, Ordering::Acquire, Ordering::Relaxed)
        .is_err()
    {
        return;
    }
    let _errno = sys::ErrnoGuard::save();
    if let Some(key) = sys::thread_key_create(thread_end) {
        if key < 32 {
            // Threads now start through our trampoline: the stack walks leave its frame out
            // (the runtime's own frames are never part of the program's stacks).
            stacks::leave_out(trampoline as *const () as usize);
            KEY.store(key, Ordering::Relaxed);
        }
    }
    KEY_STATE.store(2, Ordering::Release);
}

/// libc's `pthread_create`: in a static executable its internal name `__pthread_create`
/// (libc.a's `pthread_create` is a weak alias of it, which ours replaces), bound by the
/// linker through a weak reference (0 in a dynamic link: libc.so.6 does not export that
/// name); else the next definition after ours, `dlsym(RTLD_NEXT)`.
fn real() -> usize {
    let r = REAL.load(Ordering::Relaxed);
    if r != 0 {
        return r;
    }
    let r = match static_libc_create() {
        0 => sys::next_symbol(c"pthread_create"),
        r => r,
    };
    REAL.store(r, Ordering::Relaxed);
    r
}

// libc.a's `__pthread_create`, through a weak reference: the linker binds it when libc.a's
// pthread_create.o is in the link (in glibc 2.36 the runtime's own `timer_create` pulls it
// in: timer_routines.o calls `__pthread_create`), and leaves 0 otherwise.
#[cfg(target_arch = "x86_64")]
fn static_libc_create() -> usize {
    let p: usize;
    // SAFETY: loads the GOT slot of a weak undefined symbol (0 when nothing defines it); no
    // memory of ours is touched.
    unsafe {
        core::arch::asm!(
            ".weak __pthread_create",
            "movq __pthread_create@GOTPCREL(%rip), {p}",
            p = out(reg) p,
            options(att_syntax, nostack, pure, nomem),
        );
    }
    p
}

#[cfg(not(target_arch = "x86_64"))]
fn static_libc_create() -> usize {
    0
}

static MISSING_WARNED: AtomicBool = AtomicBool::new(false);

/// The artifacts' `pthread_create` (and `profil_rt_pthread_create`, which programs linked
/// with the older `--wrap=pthread_create` options call: the same function, so the two never
/// stack): libc's, with the start routine wrapped in `trampoline` while the perf clock runs.
///
/// # Safety
/// As for `pthread_create(3)`.
pub unsafe fn create(
    thread: *mut libc::pthread_t,
    attr: *const libc::pthread_attr_t,
    start: Option<StartFn>,
    arg: *mut c_void,
) -> c_int {
    // SAFETY: the caller's contract; real() is libc's pthread_create or 0.
    unsafe { create_via(real(), thread, attr, start, arg) }
}

/// [`create`] with libc's `pthread_create` at `r`; 0 (none found) fails with `EAGAIN` and
/// one line on stderr, never a jump to 0.
///
/// # Safety
/// As for `pthread_create(3)`; `r` is libc's pthread_create or 0.
unsafe fn create_via(
    r: usize,
    thread: *mut libc::pthread_t,
    attr: *const libc::pthread_attr_t,
    start: Option<StartFn>,
    arg: *mut c_void,
) -> c_int {
    if r == 0 {
        if !MISSING_WARNED.swap(true, Ordering::Relaxed) {
            let _errno = sys::ErrnoGuard::save();
            crate::warn(
                b"profil-rt: pthread_create: libc's is not found (neither __pthread_create \
                  linked in nor a next pthread_create); no thread can be created",
            );
        }
        return libc::EAGAIN;
    }
    if KEY_STATE.load(Ordering::Acquire) == 0
        && cfg!(target_arch = "x86_64")
        && timer::running() == Some(Backend::Perf)
    {
        ensure_key();
    }
    // SAFETY: the caller's contract; `r` is libc's pthread_create.
    unsafe { create_with(r, thread, attr, start, arg) }
}

/// The linker options of earlier versions, which sent a program's `pthread_create` calls to
/// `profil_rt_pthread_create`. Not needed any more (the object defines `pthread_create`);
/// still accepted, and the two never stack.
pub const LINK_FLAGS: &str =
    "-Wl,--wrap=pthread_create,--defsym=__wrap_pthread_create=profil_rt_pthread_create,-u,pthread_create";

/// libc's pthread_create at `r`, with a clock of its own for the new thread when it can.
///
/// # Safety
/// As for `pthread_create(3)`; `r` is libc's pthread_create.
unsafe fn create_with(
    r: usize,
    thread: *mut libc::pthread_t,
    attr: *const libc::pthread_attr_t,
    start: Option<StartFn>,
    arg: *mut c_void,
) -> c_int {
    // SAFETY: `r` is libc's pthread_create (the caller's promise).
    let real: CreateFn = unsafe { core::mem::transmute::<usize, CreateFn>(r) };
    let Some(routine) = start else {
        // SAFETY: the caller's arguments, as given (libc's to judge).
        return unsafe { real(thread, attr, start, arg) };
    };
    if KEY.load(Ordering::Relaxed) == NO_KEY || timer::running() != Some(Backend::Perf) {
        // SAFETY: the caller's arguments, as given.
        return unsafe { real(thread, attr, start, arg) };
    }
    let Some(i) = claim() else {
        // SAFETY: as above.
        return unsafe { real(thread, attr, start, arg) };
    };
    SLOT_START[i].store(routine as usize, Ordering::Relaxed);
    SLOT_ARG[i].store(arg as usize, Ordering::Relaxed);
    // SAFETY: the caller's thread and attributes; our trampoline takes the slot's number.
    let e = unsafe { real(thread, attr, Some(trampoline), i as *mut c_void) };
    if e != 0 {
        SLOT_BUSY[i].store(false, Ordering::Release);
    }
    e
}

fn claim() -> Option<usize> {
    let from = SLOT_HINT.fetch_add(1, Ordering::Relaxed);
    (0..SLOTS).map(|k| (from + k) % SLOTS).find(|&i| {
        SLOT_BUSY[i]
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
    })
}

/// The new thread's first function: take the start routine out of its slot, start the
/// thread's own clock, run the routine.
extern "C" fn trampoline(slot: *mut c_void) -> *mut c_void {
    let i = slot as usize;
    let start = SLOT_START[i].load(Ordering::Relaxed);
    let arg = SLOT_ARG[i].load(Ordering::Relaxed);
    SLOT_BUSY[i].store(false, Ordering::Release);
    {
        let _errno = sys::ErrnoGuard::save();
        start_own_clock();
    }
    // SAFETY: the routine the program gave pthread_create, stored as an address.
    let start: StartFn = unsafe { core::mem::transmute::<usize, StartFn>(start) };
    start(arg as *mut c_void)
}

fn random() -> u64 {
    let mut z = SEED
        .fetch_add(0x9e37_79b9_7f4a_7c15, Ordering::Relaxed)
        .wrapping_add(sys::monotonic_ns())
        ^ (sys::thread_pointer() as u64).rotate_left(32);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn start_own_clock() {
    let key = KEY.load(Ordering::Relaxed);
    if key == NO_KEY || timer::running() != Some(Backend::Perf) {
        return;
    }
    let period = timer::period();
    let first = 1 + random() % period;
    let Ok(fd) = sys::perf_open_thread_clock(first, marks::SIG_DATA_THREAD) else {
        return;
    };
    let Ok(fd) = sys::move_fd_high(fd) else {
        return;
    };
    // Just opened by us: its kernel id is all there is to record.
    let Some(id) = sys::perf_event_id(fd) else {
        let _ = sys::close(fd);
        return;
    };
    if !sys::thread_key_set(key, 1) {
        let _ = sys::close(fd);
        return;
    }
    tls_set(ID, id);
    tls_set(STATE, 0);
    tls_set(FD, fd as u64 + 1);
    // Enabled only now, so that its sample finds the thread's words set; for one overflow.
    if sys::perf_enable_once(fd).is_err() {
        tls_set(FD, 0);
        let _ = sys::close(fd);
    }
}

/// Keep this sample? `own`: it comes from the calling thread's one-shot clock (else from the
/// inherited clock). The thread's first period gets one sample: whichever of the one-shot and
/// the inherited clock's first sample comes first; the other is dropped. Every later sample
/// of the inherited clock is kept. *Async-signal-safe*: TLS loads and stores only.
#[inline]
pub fn keep_sample(own: bool) -> bool {
    let state = tls_get(STATE);
    if own {
        tls_set(STATE, state | OWN_FIRED);
        return state & INHERITED_FIRED == 0;
    }
    if state & INHERITED_FIRED != 0 || tls_get(FD) == 0 {
        return true;
    }
    tls_set(STATE, state | INHERITED_FIRED);
    state & OWN_FIRED == 0
}

/// Close the calling thread's own clock (if it has one and it is still ours) and forget it.
fn close_own_clock() {
    let fd = tls_get(FD);
    if fd == 0 {
        return;
    }
    tls_set(FD, 0);
    tls_set(STATE, 0);
    if SANDBOXED.load(Ordering::Relaxed) {
        return;
    }
    let fd = (fd - 1) as c_int;
    if timer::is_our_event(fd, tls_get(ID)) {
        let _ = sys::close(fd);
    }
}

/// The key's destructor: the thread ends (returned from its routine, `pthread_exit`, cancelled).
unsafe extern "C" fn thread_end(_: *mut c_void) {
    let _errno = sys::ErrnoGuard::save();
    close_own_clock();
}

/// In a forked child (its one thread is a copy of the thread that forked): a clock of that
/// thread's belongs to the parent's thread; close the copy, and the thread is sampled by the
/// child's inherited clock.
pub fn after_fork_in_child() {
    if tls_get(FD) == 0 {
        return;
    }
    close_own_clock();
    let key = KEY.load(Ordering::Relaxed);
    if key != NO_KEY {
        let _ = sys::thread_key_set(key, 0);
    }
}

/// A seccomp filter is going in: from now on no system call for the thread clocks.
pub fn before_sandbox() {
    SANDBOXED.store(true, Ordering::Relaxed);
}

#[cfg(test)]
mod tests {
    use super::*;

    extern "C" fn never(_: *mut c_void) -> *mut c_void {
        unreachable!("no thread may start")
    }

    /// Where no libc `pthread_create` was found, the wrapper never jumps to address 0: the
    /// call fails with EAGAIN and errno is untouched.
    #[test]
    fn without_libc_pthread_create_the_call_fails_with_eagain() {
        let mut t: libc::pthread_t = 0;
        sys::set_errno(1234);
        // SAFETY: a valid pthread_t to write to, no attributes; the routine never runs.
        let e = unsafe {
            create_via(
                0,
                &mut t,
                core::ptr::null(),
                Some(never),
                core::ptr::null_mut(),
            )
        };
        assert_eq!((e, sys::errno()), (libc::EAGAIN, 1234));
        assert_eq!(
            KEY.load(Ordering::Relaxed),
            NO_KEY,
            "no key without a thread"
        );
    }

    /// In this dynamically linked test binary the weak `__pthread_create` is unbound and
    /// libc's `pthread_create` is the next definition.
    #[test]
    fn libc_pthread_create_is_found() {
        assert_eq!(static_libc_create(), 0);
        assert_ne!(real(), 0);
    }
}
