//! Every foreign call the runtime makes, behind small safe wrappers.
//!
//! The plain foreign calls live here. `unsafe` outside this module is of four kinds, each
//! with its `// SAFETY:` line: the exported C ABI (`cabi`: raw pointers from the C caller,
//! the variadic exec trampolines), code that must reach memory the kernel or the loader
//! hands over (the histogram's and the object table's mapped regions in `hist` and
//! `objects`, the bounded stack reads of `stacks`, the caller's buffers in `api` and
//! `pcmode`), the signal calls done with raw system calls and our own restorer (`signals`,
//! `handler`), and the environment and `execve` plumbing of `exec` and `lineage`; besides
//! those, `interfaces` calls the exported C ABI for Rust programs, and the crate root's
//! settings buffer is shared between the start and the exit path. The
//! per-architecture part (reading the interrupted PC
//! from a `ucontext_t`) is [`interrupted_pc`]; porting to aarch64 means adding one arm there.
//!
//! Functions marked *async-signal-safe* may be called from the sampling handler; the others are
//! for the constructor and the exit path only.

use core::ffi::{c_char, c_int, c_void, CStr};
use core::mem::{size_of, MaybeUninit};
use core::ptr;

/// The calling thread's `errno`. *Async-signal-safe.*
pub fn errno() -> c_int {
    // SAFETY: __errno_location always returns a valid pointer to the calling thread's errno.
    unsafe { *libc::__errno_location() }
}

/// Set the calling thread's `errno`. *Async-signal-safe.*
pub fn set_errno(value: c_int) {
    // SAFETY: as in `errno`; the location is thread-local and writable.
    unsafe { *libc::__errno_location() = value }
}

/// Saves `errno` when created and restores it when dropped, so that a signal handler never
/// changes the `errno` the interrupted code is about to read.
pub struct ErrnoGuard(c_int);

impl ErrnoGuard {
    /// Save the current `errno`. *Async-signal-safe.*
    pub fn save() -> Self {
        ErrnoGuard(errno())
    }
}

impl Drop for ErrnoGuard {
    fn drop(&mut self) {
        set_errno(self.0)
    }
}

/// The value of environment variable `name`, as bytes. Constructor only (`getenv` is not
/// thread-safe against `setenv`, and the constructor runs before `main`).
pub fn getenv(name: &CStr) -> Option<&'static [u8]> {
    // SAFETY: `name` is NUL-terminated. The returned pointer, when not null, points to a
    // NUL-terminated string in the environment block, which lives for the whole process unless
    // the program itself calls setenv/unsetenv on that name; we read it once, in the constructor.
    unsafe {
        let p = libc::getenv(name.as_ptr());
        if p.is_null() {
            None
        } else {
            Some(CStr::from_ptr(p).to_bytes())
        }
    }
}

/// True in a setuid/setgid (secure-execution) process, where `GMON_OUT_PREFIX` is ignored.
pub fn is_secure_execution() -> bool {
    // SAFETY: getauxval has no preconditions; it returns 0 for an absent entry.
    unsafe { libc::getauxval(libc::AT_SECURE) != 0 }
}

/// The process id.
pub fn getpid() -> u32 {
    // SAFETY: getpid has no preconditions and cannot fail.
    unsafe { libc::getpid() as u32 }
}

/// The parent's pid (getppid(2)).
pub fn getppid() -> u32 {
    // SAFETY: getppid has no preconditions and cannot fail.
    unsafe { libc::getppid() as u32 }
}

/// The main executable's executable segments, as found by `dl_iterate_phdr`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExeText {
    /// Lowest link-time address of an executable `PT_LOAD` segment.
    pub link_lo: u64,
    /// End (exclusive) of the highest executable `PT_LOAD` segment, link-time.
    pub link_hi: u64,
    /// Load bias: runtime address = link-time address + bias (0 for non-PIE executables).
    pub bias: u64,
}

extern "C" fn phdr_callback(
    info: *mut libc::dl_phdr_info,
    _size: usize,
    data: *mut c_void,
) -> c_int {
    // SAFETY: dl_iterate_phdr passes a valid `dl_phdr_info` for the duration of the call and
    // `data` is the `&mut Option<ExeText>` handed to it by `main_executable_text`. The first
    // object it reports is the main program (glibc documents this order, and its own gmon relies
    // on it); `dlpi_phdr` points to `dlpi_phnum` program headers.
    unsafe {
        let out = &mut *(data as *mut Option<ExeText>);
        let info = &*info;
        let mut lo = u64::MAX;
        let mut hi = 0u64;
        for i in 0..info.dlpi_phnum as usize {
            let ph = &*info.dlpi_phdr.add(i);
            if ph.p_type == libc::PT_LOAD && ph.p_flags & libc::PF_X != 0 && ph.p_memsz > 0 {
                lo = lo.min(ph.p_vaddr);
                hi = hi.max(ph.p_vaddr.saturating_add(ph.p_memsz));
            }
        }
        if lo < hi {
            *out = Some(ExeText {
                link_lo: lo,
                link_hi: hi,
                bias: info.dlpi_addr,
            });
        }
    }
    1 // stop after the first object: the main program
}

/// The main executable's text range and load bias. Uses `dl_iterate_phdr` rather than
/// `getauxval(AT_PHDR)`, which gives a wrong base for static-pie executables (no `PT_PHDR`).
pub fn main_executable_text() -> Option<ExeText> {
    let mut out: Option<ExeText> = None;
    // SAFETY: the callback only writes through `data`, which points to `out`, alive for the call.
    unsafe {
        libc::dl_iterate_phdr(
            Some(phdr_callback),
            &mut out as *mut Option<ExeText> as *mut c_void,
        );
    }
    out
}

/// Map `bytes` of zeroed, private, anonymous memory. Constructor only.
pub fn map_zeroed(bytes: usize) -> Option<*mut u8> {
    // SAFETY: an anonymous private mapping with no address hint has no preconditions; failure is
    // reported as MAP_FAILED and checked.
    let p = unsafe {
        libc::mmap(
            ptr::null_mut(),
            bytes,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        None
    } else {
        Some(p as *mut u8)
    }
}

// ---------------------------------------------------------------------------------------------
// perf_event

/// `struct perf_event_attr` up to `sig_data` (`PERF_ATTR_SIZE_VER7`, 128 bytes, Linux 5.13+).
/// The libc crate does not define it; the layout follows `include/uapi/linux/perf_event.h`.
#[repr(C)]
#[derive(Default)]
struct PerfEventAttr {
    type_: u32,
    size: u32,
    config: u64,
    sample_period: u64,
    sample_type: u64,
    read_format: u64,
    flags: u64,
    wakeup_events: u32,
    bp_type: u32,
    config1: u64,
    config2: u64,
    branch_sample_type: u64,
    sample_regs_user: u64,
    sample_stack_user: u32,
    clockid: i32,
    sample_regs_intr: u64,
    aux_watermark: u32,
    sample_max_stack: u16,
    reserved_2: u16,
    aux_sample_size: u32,
    reserved_3: u32,
    sig_data: u64,
}

const _: () = assert!(size_of::<PerfEventAttr>() == 128);

const PERF_TYPE_SOFTWARE: u32 = 1;
const PERF_COUNT_SW_TASK_CLOCK: u64 = 1;
// Bit positions in the flags word of perf_event_attr.
const FLAG_DISABLED: u64 = 1 << 0;
const FLAG_INHERIT: u64 = 1 << 1;
const FLAG_EXCLUDE_KERNEL: u64 = 1 << 5;
const FLAG_EXCLUDE_HV: u64 = 1 << 6;
const FLAG_INHERIT_THREAD: u64 = 1 << 35;
const FLAG_REMOVE_ON_EXEC: u64 = 1 << 36;
const FLAG_SIGTRAP: u64 = 1 << 37;
/// `PERF_FLAG_FD_CLOEXEC`.
const PERF_FLAG_FD_CLOEXEC: libc::c_ulong = 1 << 3;
/// `_IO('$', 0)` and `_IO('$', 1)`.
const PERF_EVENT_IOC_ENABLE: libc::c_ulong = 0x2400;
const PERF_EVENT_IOC_DISABLE: libc::c_ulong = 0x2401;

/// Open a user-time-only task-clock event on thread `tid` (0: the calling thread) that
/// overflows every
/// `period_ns` nanoseconds of CPU time and then sends a synchronous `SIGTRAP` (si_code
/// `TRAP_PERF`, `si_perf_data` = `sig_data`) to the thread that overflowed. Threads created
/// later inherit it (`inherit` + `inherit_thread`: threads yes, forked children no); `exec`
/// removes it. Returns the file descriptor, or `errno`. The event starts disabled.
pub fn perf_open_task_clock(period_ns: u64, sig_data: u64, tid: u32) -> Result<c_int, c_int> {
    perf_open(
        period_ns,
        sig_data,
        tid,
        FLAG_DISABLED | FLAG_INHERIT | FLAG_INHERIT_THREAD,
    )
}

/// Open a task-clock event like [`perf_open_task_clock`] for the calling thread only (not
/// inherited by the threads it creates), disabled: once enabled, its first overflow comes after
/// `period_ns` nanoseconds of this thread's CPU time. Returns the descriptor, or `errno`.
pub fn perf_open_thread_clock(period_ns: u64, sig_data: u64) -> Result<c_int, c_int> {
    perf_open(period_ns, sig_data, 0, FLAG_DISABLED)
}

fn perf_open(period_ns: u64, sig_data: u64, tid: u32, flags: u64) -> Result<c_int, c_int> {
    let attr = PerfEventAttr {
        type_: PERF_TYPE_SOFTWARE,
        size: size_of::<PerfEventAttr>() as u32,
        config: PERF_COUNT_SW_TASK_CLOCK,
        sample_period: period_ns,
        flags: flags | FLAG_EXCLUDE_KERNEL | FLAG_EXCLUDE_HV | FLAG_REMOVE_ON_EXEC | FLAG_SIGTRAP,
        sig_data,
        ..Default::default()
    };
    // SAFETY: `attr` is a fully initialised perf_event_attr whose `size` field tells the kernel
    // how much of it to read; the other arguments are plain integers (pid: a thread of this
    // process, 0 = this one; cpu -1 = any, no group, close-on-exec).
    let fd = unsafe {
        libc::syscall(
            libc::SYS_perf_event_open,
            &attr as *const PerfEventAttr,
            tid as libc::pid_t,
            -1 as c_int,
            -1 as c_int,
            PERF_FLAG_FD_CLOEXEC,
        )
    };
    if fd < 0 {
        Err(errno())
    } else {
        Ok(fd as c_int)
    }
}

/// Enable (`true`) or disable a perf event and the copies its threads inherited.
pub fn perf_set_enabled(fd: c_int, enabled: bool) -> Result<(), c_int> {
    let req = if enabled {
        PERF_EVENT_IOC_ENABLE
    } else {
        PERF_EVENT_IOC_DISABLE
    };
    // SAFETY: ioctl on a descriptor we own with an argument-less request.
    let r = unsafe { libc::ioctl(fd, req as _, 0) };
    if r < 0 {
        Err(errno())
    } else {
        Ok(())
    }
}

/// `_IO('$', 2)`.
const PERF_EVENT_IOC_REFRESH: libc::c_ulong = 0x2402;

/// Enable a non-inherited sampling event for one overflow: the kernel disables it again after
/// its first sample.
pub fn perf_enable_once(fd: c_int) -> Result<(), c_int> {
    // SAFETY: ioctl on a descriptor we own; PERF_EVENT_IOC_REFRESH takes the count by value.
    let r = unsafe { libc::ioctl(fd, PERF_EVENT_IOC_REFRESH as _, 1 as c_int) };
    if r < 0 {
        Err(errno())
    } else {
        Ok(())
    }
}

/// Call `f` with the id of every thread of this process (`/proc/self/task`, read with
/// `getdents64` into a stack buffer: no allocation). The directory's descriptor is opened and
/// closed here. False if the list cannot be read.
pub fn for_each_thread(mut f: impl FnMut(u32)) -> bool {
    // SAFETY: a NUL-terminated path; open returns -1 on failure.
    let fd = unsafe {
        libc::open(
            c"/proc/self/task".as_ptr(),
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        return false;
    }
    let mut buf = [0u8; 2048];
    let ok;
    loop {
        // SAFETY: getdents64 writes at most buf.len() bytes of records into buf.
        let n = unsafe { libc::syscall(libc::SYS_getdents64, fd, buf.as_mut_ptr(), buf.len()) };
        if n <= 0 {
            ok = n == 0;
            break;
        }
        let mut off = 0usize;
        while off + 19 < n as usize {
            // struct linux_dirent64: d_ino (8), d_off (8), d_reclen (2), d_type (1), d_name.
            let reclen = u16::from_ne_bytes([buf[off + 16], buf[off + 17]]) as usize;
            if reclen == 0 || off + reclen > n as usize {
                break;
            }
            let name = &buf[off + 19..off + reclen];
            let name = &name[..name.iter().position(|&b| b == 0).unwrap_or(name.len())];
            if !name.is_empty() && name.iter().all(u8::is_ascii_digit) {
                let tid = name
                    .iter()
                    .fold(0u64, |t, &d| t.saturating_mul(10) + u64::from(d - b'0'));
                if let Ok(tid) = u32::try_from(tid) {
                    f(tid);
                }
            }
            off += reclen;
        }
    }
    let _ = close(fd);
    ok
}

/// `_IOR('$', 7, u64)`: the event's unique id.
const PERF_EVENT_IOC_ID: libc::c_ulong = 0x8008_2407;

/// The kernel's unique id of the perf event behind `fd`. Call it only on a descriptor known to
/// be a perf event (see [`fd_identity`]): an unknown ioctl on someone else's device is not
/// harmless.
pub fn perf_event_id(fd: c_int) -> Option<u64> {
    let mut id = 0u64;
    // SAFETY: PERF_EVENT_IOC_ID writes one u64 through the pointer, which points to `id`.
    let r = unsafe { libc::ioctl(fd, PERF_EVENT_IOC_ID as _, &mut id as *mut u64) };
    (r == 0).then_some(id)
}

/// The (device, inode) of the file open at `fd`, or `None` if `fd` is not open.
pub fn fd_identity(fd: c_int) -> Option<(u64, u64)> {
    let mut st = MaybeUninit::<libc::stat>::zeroed();
    // SAFETY: fstat fills the struct it is given; a bad descriptor is reported, not faulted.
    if unsafe { libc::fstat(fd, st.as_mut_ptr()) } != 0 {
        return None;
    }
    // SAFETY: fstat succeeded, so the struct is filled in.
    let st = unsafe { st.assume_init() };
    Some((st.st_dev, st.st_ino))
}

/// The lowest descriptor number the runtime keeps its own descriptors at or above: high in the
/// range the process may use (`RLIMIT_NOFILE`), where a program that opens files in order never
/// reaches, but not so high that the kernel grows the descriptor table for it (a limit of a
/// million is common). Never 0–2.
fn private_fd_floor() -> Option<c_int> {
    let mut r = MaybeUninit::<libc::rlimit>::zeroed();
    // SAFETY: getrlimit fills the struct it is given.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, r.as_mut_ptr()) } != 0 {
        return None;
    }
    // SAFETY: getrlimit succeeded.
    let cur = unsafe { r.assume_init() }.rlim_cur;
    let cur = c_int::try_from(cur).unwrap_or(c_int::MAX);
    let floor = (cur / 4 * 3).min(768);
    (floor >= 3 && floor < cur).then_some(floor)
}

/// Move a descriptor the runtime just opened out of the program's way: duplicate it
/// close-on-exec at or above a floor (`private_fd_floor`) and close the original, so the number it had
/// (the lowest free one) is free again for the program. On failure the original is closed and
/// the errno returned.
pub fn move_fd_high(fd: c_int) -> Result<c_int, c_int> {
    let Some(floor) = private_fd_floor() else {
        let _ = close(fd);
        return Err(libc::EMFILE);
    };
    // SAFETY: F_DUPFD_CLOEXEC on a descriptor we own returns a new descriptor or -1.
    let high = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, floor) };
    let e = errno();
    let _ = close(fd);
    if high < 0 {
        Err(e)
    } else {
        Ok(high)
    }
}

// ---------------------------------------------------------------------------------------------
// process CPU-time timer

/// Create a POSIX timer on the process CPU-time clock (user + system time of all threads, like
/// `ITIMER_PROF`, but deleted by `exec`, so it can never kill a new program image) that sends
/// `signo` with `si_value` = `value`. Returns the timer id.
pub fn cpu_timer_create(signo: c_int, value: u64) -> Result<usize, c_int> {
    // SAFETY: a zeroed sigevent is valid; the fields set are plain data.
    let mut sev: libc::sigevent = unsafe { core::mem::zeroed() };
    sev.sigev_notify = libc::SIGEV_SIGNAL;
    sev.sigev_signo = signo;
    sev.sigev_value = libc::sigval {
        sival_ptr: value as usize as *mut c_void,
    };
    let mut id: libc::timer_t = ptr::null_mut();
    // SAFETY: `sev` and `id` are valid for the call.
    if unsafe { libc::timer_create(libc::CLOCK_PROCESS_CPUTIME_ID, &mut sev, &mut id) } < 0 {
        return Err(errno());
    }
    Ok(id as usize)
}

/// Arm (`period_ns > 0`) or disarm a timer made by [`cpu_timer_create`].
pub fn cpu_timer_set(timer: usize, period_ns: u64) -> Result<(), c_int> {
    let ts = libc::timespec {
        tv_sec: (period_ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (period_ns % 1_000_000_000) as _,
    };
    let its = libc::itimerspec {
        it_interval: ts,
        it_value: ts,
    };
    // SAFETY: `timer` came from timer_create; `its` is valid; no old value requested.
    if unsafe { libc::timer_settime(timer as libc::timer_t, 0, &its, ptr::null_mut()) } < 0 {
        Err(errno())
    } else {
        Ok(())
    }
}

/// Delete a timer made by [`cpu_timer_create`].
pub fn cpu_timer_delete(timer: usize) {
    // SAFETY: `timer` came from timer_create and is deleted once.
    unsafe { libc::timer_delete(timer as libc::timer_t) };
}

// ---------------------------------------------------------------------------------------------
// signals

/// The signature of an `SA_SIGINFO` handler.
pub type SigInfoHandler = extern "C" fn(c_int, *mut libc::siginfo_t, *mut c_void);

/// A signal disposition saved before ours was installed, in a form the handler can read with
/// plain loads: the handler address (or `SIG_DFL`/`SIG_IGN`) and whether it takes siginfo.
#[derive(Clone, Copy, Debug)]
pub struct PrevAction {
    /// `sa_sigaction` of the previous action.
    pub handler: usize,
    /// `sa_flags` of the previous action.
    pub flags: c_int,
}

// Every signal call of the runtime is a raw system call: the artifacts export `sigaction`,
// `sigprocmask`, `pthread_sigmask`, ... themselves (see [`crate::signals`]), so a call through
// libc's symbol would come back to our own wrapper, and a static executable has no "next"
// definition to forward to.

/// The kernel's `struct sigaction` (x86_64 and aarch64 layout: handler, flags, restorer, mask).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KernelSigaction {
    /// `SIG_DFL`, `SIG_IGN` or the handler's address.
    pub handler: usize,
    /// `SA_*` flags.
    pub flags: u64,
    /// The return trampoline (`SA_RESTORER`).
    pub restorer: usize,
    /// Signals blocked while the handler runs: bit `sig - 1`.
    pub mask: u64,
}

/// `SA_RESTORER` (x86_64): `restorer` is the trampoline that returns from a handler.
pub const SA_RESTORER: u64 = 0x0400_0000;

/// The return trampoline for handlers installed by [`raw_sigaction`]: `rt_sigreturn`. Its
/// bytes are exactly `mov rax, 15; syscall`, the sequence libgcc's unwinder and debuggers
/// recognise as a signal frame (so a backtrace or an exception can cross it).
#[cfg(target_arch = "x86_64")]
#[unsafe(naked)]
extern "C" fn restore_rt() {
    core::arch::naked_asm!(".byte 0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05")
}

/// The return trampoline [`raw_sigaction`] gives every handler (what the kernel then reports
/// as `sa_restorer`).
pub fn restorer() -> usize {
    restore_rt as extern "C" fn() as usize
}

/// `rt_sigaction(sig, new, old)` as a system call; the new action (if any) gets our return
/// trampoline, as glibc's `sigaction` gives it its own. *Async-signal-safe.*
pub fn raw_sigaction(
    sig: c_int,
    new: Option<&KernelSigaction>,
    old: Option<&mut KernelSigaction>,
) -> Result<(), c_int> {
    let with_restorer = new.map(|n| KernelSigaction {
        flags: n.flags | SA_RESTORER,
        restorer: restorer(),
        ..*n
    });
    let newp = with_restorer
        .as_ref()
        .map_or(ptr::null(), |n| n as *const KernelSigaction);
    let oldp = old.map_or(ptr::null_mut(), |o| o as *mut KernelSigaction);
    // SAFETY: both pointers are null or point to a KernelSigaction, the layout the kernel
    // expects for an 8-byte sigset; the restorer is a valid rt_sigreturn trampoline.
    let r = unsafe { libc::syscall(libc::SYS_rt_sigaction, sig, newp, oldp, 8usize) };
    if r < 0 {
        Err(errno())
    } else {
        Ok(())
    }
}

/// `rt_sigprocmask(how, set, old)` on the calling thread as a system call (8-byte sigsets).
/// *Async-signal-safe.*
pub fn raw_sigprocmask(how: c_int, set: Option<u64>, old: Option<&mut u64>) -> Result<(), c_int> {
    let setp = set.as_ref().map_or(ptr::null(), |s| s as *const u64);
    let oldp = old.map_or(ptr::null_mut(), |o| o as *mut u64);
    // SAFETY: both pointers are null or point to an 8-byte mask, the sigset size passed.
    let r = unsafe { libc::syscall(libc::SYS_rt_sigprocmask, how, setp, oldp, 8usize) };
    if r < 0 {
        Err(errno())
    } else {
        Ok(())
    }
}

/// Run `f` (a blocking system call) as a cancellation point, as libc's own wrappers do: the
/// thread's cancellation type is asynchronous for the duration, so a `pthread_cancel` (already
/// pending, or arriving while it blocks) acts there, unless the program disabled cancellation.
pub fn as_cancellation_point<T>(f: impl FnOnce() -> T) -> T {
    extern "C" {
        // In libc.so.6 itself since glibc 2.34 (the libc crate does not declare it for Linux).
        fn pthread_setcanceltype(kind: c_int, old: *mut c_int) -> c_int;
    }
    const PTHREAD_CANCEL_ASYNCHRONOUS: c_int = 1;
    let mut old: c_int = 0;
    // SAFETY: pthread_setcanceltype only changes the calling thread's cancellation type; `old`
    // is a valid int. Cancellation unwinds through our frames, which have unwind tables.
    unsafe { pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, &mut old) };
    let r = f();
    let mut ignored: c_int = 0;
    // SAFETY: as above; restores the program's type.
    unsafe { pthread_setcanceltype(old, &mut ignored) };
    r
}

/// `rt_sigtimedwait(set, info, timeout)` as a system call; returns the signal or `errno`.
///
/// # Safety
/// `info` must be null or point to a writable `siginfo_t`, `timeout` null or a valid timespec.
pub unsafe fn raw_sigtimedwait(
    set: u64,
    info: *mut libc::siginfo_t,
    timeout: *const libc::timespec,
) -> Result<c_int, c_int> {
    // SAFETY: the caller's pointers; the set is an 8-byte mask.
    let r = unsafe {
        libc::syscall(
            libc::SYS_rt_sigtimedwait,
            &set as *const u64,
            info,
            timeout,
            8usize,
        )
    };
    if r < 0 {
        Err(errno())
    } else {
        Ok(r as c_int)
    }
}

/// Queue `info` for `sig` again at the calling thread (`rt_tgsigqueueinfo` to ourselves, which
/// keeps the original siginfo). *Async-signal-safe.*
///
/// # Safety
/// `info` must point to a valid `siginfo_t`.
pub unsafe fn requeue_to_self(sig: c_int, info: *const libc::siginfo_t) {
    // SAFETY: the caller's siginfo; tgid and tid are our own.
    unsafe {
        libc::syscall(
            libc::SYS_rt_tgsigqueueinfo,
            libc::getpid(),
            gettid(),
            sig,
            info,
        );
    }
}

/// Bit of `sig` in an 8-byte kernel sigset (0 for a signal outside 1..=64).
pub const fn sigbit(sig: c_int) -> u64 {
    if sig >= 1 && sig <= 64 {
        1u64 << (sig - 1)
    } else {
        0
    }
}

/// The first 8 bytes of a libc `sigset_t` (signals 1..=64), as the kernel sees them.
///
/// # Safety
/// `set` must point to a valid `sigset_t`.
pub unsafe fn sigset_word(set: *const libc::sigset_t) -> u64 {
    // SAFETY: sigset_t is at least 8 bytes; read_unaligned makes no alignment assumption.
    unsafe { ptr::read_unaligned(set as *const u64) }
}

/// Store `word` as a whole libc `sigset_t` (signals above 64 clear).
///
/// # Safety
/// `set` must point to a writable `sigset_t`.
pub unsafe fn set_sigset_word(set: *mut libc::sigset_t, word: u64) {
    // SAFETY: sigset_t is plain data of at least 8 bytes.
    unsafe {
        ptr::write_bytes(set as *mut u8, 0, size_of::<libc::sigset_t>());
        ptr::write_unaligned(set as *mut u64, word);
    }
}

/// The signal mask saved in a handler's `ucontext_t` (restored when the handler returns), as a
/// kernel word.
///
/// # Safety
/// `uctx` must be the `ucontext_t` the kernel passed to an `SA_SIGINFO` handler.
pub unsafe fn saved_mask(uctx: *mut c_void) -> *mut u64 {
    // SAFETY: the caller's ucontext; uc_sigmask is a sigset_t whose first 8 bytes the kernel
    // restores.
    unsafe { ptr::addr_of_mut!((*(uctx as *mut libc::ucontext_t)).uc_sigmask) as *mut u64 }
}

/// Install `handler` for `sig` with `SA_SIGINFO | SA_RESTART` (plus `extra_flags`) and all
/// other signals unmasked (so that the program's own signals are not delayed), returning the
/// previous disposition.
pub fn install_handler(
    sig: c_int,
    handler: SigInfoHandler,
    extra_flags: u64,
) -> Result<KernelSigaction, c_int> {
    let new = KernelSigaction {
        handler: handler as usize,
        flags: (libc::SA_SIGINFO | libc::SA_RESTART) as u64 | extra_flags,
        restorer: 0,
        mask: 0,
    };
    let mut old = KernelSigaction::default();
    raw_sigaction(sig, Some(&new), Some(&mut old))?;
    Ok(old)
}

/// The current disposition of `sig`, without changing it.
pub fn current_action(sig: c_int) -> Option<PrevAction> {
    let mut old = KernelSigaction::default();
    raw_sigaction(sig, None, Some(&mut old)).ok()?;
    Some(PrevAction {
        handler: old.handler,
        flags: old.flags as c_int,
    })
}

/// The real-time signals a program may use (`SIGRTMIN`..=`SIGRTMAX` as libc tells them:
/// glibc keeps the first two of the kernel's for itself).
pub fn real_time_signals() -> core::ops::RangeInclusive<c_int> {
    libc::SIGRTMIN()..=libc::SIGRTMAX()
}

/// Install a one-shot handler (`SA_RESETHAND`: the default action is back in place when it
/// runs) for a terminating signal.
pub fn install_oneshot_handler(sig: c_int, handler: SigInfoHandler) -> Result<(), c_int> {
    let new = KernelSigaction {
        handler: handler as usize,
        flags: (libc::SA_SIGINFO | libc::SA_RESTART | libc::SA_RESETHAND as c_int) as u64,
        restorer: 0,
        mask: 0,
    };
    raw_sigaction(sig, Some(&new), None)
}

/// Block `sigs` in this thread; returns the previous mask for [`restore_signal_mask`].
/// Async-signal-safe.
pub fn block_signals(sigs: &[c_int]) -> u64 {
    let set = sigs.iter().fold(0, |m, &s| m | sigbit(s));
    let mut old = 0;
    let _ = raw_sigprocmask(libc::SIG_BLOCK, Some(set), Some(&mut old));
    old
}

/// Block every signal that can arrive asynchronously in this thread (all but the synchronous
/// fault signals, which the kernel would turn into a kill if they were blocked when they
/// happen); returns the previous mask for [`restore_signal_mask`]. Async-signal-safe.
pub fn block_async_signals() -> u64 {
    let synchronous = [
        libc::SIGSEGV,
        libc::SIGBUS,
        libc::SIGILL,
        libc::SIGFPE,
        libc::SIGTRAP,
        libc::SIGSYS,
    ]
    .iter()
    .fold(0, |m, &s| m | sigbit(s));
    let mut old = 0;
    // The kernel ignores SIGKILL and SIGSTOP in a mask.
    let _ = raw_sigprocmask(libc::SIG_BLOCK, Some(!synchronous), Some(&mut old));
    old
}

/// Put back a mask saved by [`block_signals`] (a signal that arrived meanwhile is delivered
/// now). Async-signal-safe.
pub fn restore_signal_mask(old: &u64) {
    let _ = raw_sigprocmask(libc::SIG_SETMASK, Some(*old), None);
}

/// Re-raise `sig` at this thread with its default action, so that the process ends exactly as
/// it would have without a handler. Called from a handler; *async-signal-safe*.
pub fn reraise_default(sig: c_int) {
    let _ = raw_sigaction(sig, Some(&KernelSigaction::default()), None);
    // SAFETY: raise is async-signal-safe; the default action is what the program had.
    unsafe { libc::raise(sig) };
}

/// `si_code` of a siginfo. *Async-signal-safe.*
///
/// # Safety
/// `info` must point to a valid `siginfo_t`.
pub unsafe fn si_code(info: *const libc::siginfo_t) -> c_int {
    // SAFETY: the caller guarantees `info` is valid.
    unsafe { (*info).si_code }
}

/// The 8-byte word at offset 24 of a siginfo: `si_perf_data` for a `SIGTRAP` with si_code
/// `TRAP_PERF` (the `sig_data` our perf event was opened with) and `si_value` for a signal from
/// a POSIX timer (si_code `SI_TIMER`; the value our timer was created with). *Async-signal-safe.*
///
/// # Safety
/// `info` must point to a valid `siginfo_t` (128 bytes).
pub unsafe fn si_value_word(info: *const libc::siginfo_t) -> u64 {
    // Layout on 64-bit Linux: si_signo, si_errno, si_code (3 × int) and padding up to 16; then
    // for faults si_addr (8 bytes) and the union in which `_perf._data` sits at 24, and for
    // timers si_tid, si_overrun (2 × int) and si_value at 24.
    const WORD_OFFSET: usize = 24;
    const _: () = assert!(
        size_of::<usize>() == 8,
        "siginfo offsets are for 64-bit Linux"
    );
    // SAFETY: siginfo_t is 128 bytes, so bytes 24..32 lie inside it; read_unaligned makes no
    // alignment assumption.
    unsafe { ptr::read_unaligned((info as *const u8).add(WORD_OFFSET) as *const u64) }
}

/// The program counter at which the signal interrupted the thread (a runtime address).
/// The only architecture-specific code in the runtime. *Async-signal-safe.*
///
/// # Safety
/// `uctx` must be the `ucontext_t` pointer the kernel passed to an `SA_SIGINFO` handler.
#[cfg(target_arch = "x86_64")]
pub unsafe fn interrupted_pc(uctx: *const c_void) -> usize {
    // SAFETY: the caller guarantees `uctx` is the kernel's ucontext_t for this signal.
    unsafe {
        let uc = &*(uctx as *const libc::ucontext_t);
        uc.uc_mcontext.gregs[libc::REG_RIP as usize] as usize
    }
}

/// See the x86_64 version.
///
/// # Safety
/// `uctx` must be the `ucontext_t` pointer the kernel passed to an `SA_SIGINFO` handler.
#[cfg(target_arch = "aarch64")]
pub unsafe fn interrupted_pc(uctx: *const c_void) -> usize {
    // SAFETY: the caller guarantees `uctx` is the kernel's ucontext_t for this signal.
    unsafe { (*(uctx as *const libc::ucontext_t)).uc_mcontext.pc as usize }
}

// ---------------------------------------------------------------------------------------------
// time

/// CPU time this process has used so far (all threads, living and finished), in nanoseconds:
/// user time only, or user + system.
pub fn cpu_time_ns(include_system: bool) -> u64 {
    let (user, system) = cpu_times_ns();
    if include_system {
        user + system
    } else {
        user
    }
}

/// The process's (user, system) CPU time so far, all threads, in nanoseconds (`getrusage`).
pub fn cpu_times_ns() -> (u64, u64) {
    let mut ru = MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage fills the struct it is given; RUSAGE_SELF is always valid.
    let ru = unsafe {
        libc::getrusage(libc::RUSAGE_SELF, ru.as_mut_ptr());
        ru.assume_init()
    };
    let tv_ns = |tv: libc::timeval| tv.tv_sec as u64 * 1_000_000_000 + tv.tv_usec as u64 * 1000;
    (tv_ns(ru.ru_utime), tv_ns(ru.ru_stime))
}

// ---------------------------------------------------------------------------------------------
// exit hooks

extern "C" {
    /// glibc exports `__cxa_atexit` from libc.so.6 itself, unlike `atexit`, which lives in
    /// libc_nonshared.a; GNU ld resolves `-C link-arg` objects after `-lc`, so `atexit` would be
    /// an undefined reference there.
    fn __cxa_atexit(f: extern "C" fn(*mut c_void), arg: *mut c_void, dso: *mut c_void) -> c_int;
}

/// Run `f` when the process calls `exit` (or returns from `main`). False if libc refused.
pub fn at_exit(f: extern "C" fn(*mut c_void)) -> bool {
    // SAFETY: registering a function pointer with a null argument and no DSO handle (like
    // atexit) has no other preconditions.
    let r = unsafe { __cxa_atexit(f, ptr::null_mut(), ptr::null_mut()) };
    r == 0
}

extern "C" {
    /// glibc's implementation of pthread_atfork, exported by libc.so.6 itself (pthread_atfork
    /// lives in libc_nonshared.a, out of reach of objects GNU ld sees after `-lc`).
    fn __register_atfork(
        prepare: Option<extern "C" fn()>,
        parent: Option<extern "C" fn()>,
        child: Option<extern "C" fn()>,
        dso: *mut c_void,
    ) -> c_int;
}

/// Run `f` in the child after every `fork()`.
pub fn at_fork_child(f: extern "C" fn()) -> bool {
    // SAFETY: registering a handler with no DSO handle has no other preconditions.
    unsafe { __register_atfork(None, None, Some(f), ptr::null_mut()) == 0 }
}

/// Give the pages of a private anonymous mapping back: they read as zeros afterwards.
pub fn discard_pages(addr: *mut u8, len: usize) -> bool {
    // SAFETY: the caller passes a mapping made by `map_zeroed`; MADV_DONTNEED on a private
    // anonymous mapping only zero-fills it.
    unsafe { libc::madvise(addr as *mut c_void, len, libc::MADV_DONTNEED) == 0 }
}

/// The next definition of `name` after ours (`dlsym(RTLD_NEXT)`), or 0 (e.g. in a static
/// executable). Constructor only (dlsym takes the loader lock).
pub fn next_symbol(name: &CStr) -> usize {
    // SAFETY: `name` is NUL-terminated; dlsym returns null when there is no such symbol.
    unsafe { libc::dlsym(libc::RTLD_NEXT, name.as_ptr()) as usize }
}

/// Call the `dlclose` at `f` (found with [`next_symbol`]).
///
/// # Safety
/// `f` must be libc's `dlclose`; `handle` as dlclose(3) requires.
pub unsafe fn call_dlclose(f: usize, handle: *mut c_void) -> c_int {
    type DlcloseFn = unsafe extern "C" fn(*mut c_void) -> c_int;
    // SAFETY: as the caller guarantees.
    unsafe { core::mem::transmute::<usize, DlcloseFn>(f)(handle) }
}

/// A thread-specific data key whose destructor `dtor` runs in each thread that set a
/// non-null value for it, when the thread ends (returns or `pthread_exit`s). `None` if libc
/// has no key left.
pub fn thread_key_create(dtor: unsafe extern "C" fn(*mut c_void)) -> Option<libc::pthread_key_t> {
    let mut key: libc::pthread_key_t = 0;
    // SAFETY: pthread_key_create writes the key through the pointer, which points to a local.
    (unsafe { libc::pthread_key_create(&mut key, Some(dtor)) } == 0).then_some(key)
}

/// Set the calling thread's value of `key`. glibc keeps the first 32 keys' values in the
/// thread's own descriptor (no allocation); callers use only such a key.
pub fn thread_key_set(key: libc::pthread_key_t, value: usize) -> bool {
    // SAFETY: a key from thread_key_create; the value is a plain word, never dereferenced.
    unsafe { libc::pthread_setspecific(key, value as *const c_void) == 0 }
}

/// The address `name` resolves to in the whole process (`dlsym(RTLD_DEFAULT)`), or 0.
pub fn global_symbol(name: &CStr) -> usize {
    // SAFETY: `name` is NUL-terminated; dlsym returns null when there is no such symbol.
    unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) as usize }
}

/// Do two addresses lie in the same loaded object (executable or shared library)? `None`
/// when the loader cannot tell (a static executable).
pub fn same_loaded_object(a: usize, b: usize) -> Option<bool> {
    // SAFETY: dladdr only inspects the loader's tables and fills the Dl_info it is given.
    unsafe {
        let mut ia: libc::Dl_info = core::mem::zeroed();
        let mut ib: libc::Dl_info = core::mem::zeroed();
        if libc::dladdr(a as *const c_void, &mut ia) == 0
            || libc::dladdr(b as *const c_void, &mut ib) == 0
        {
            return None;
        }
        Some(ia.dli_fbase == ib.dli_fbase)
    }
}

/// The file name (the part after the last `/`) of the shared object this code was loaded
/// from, as the loader has it; `None` when it is linked into the executable (or the loader
/// cannot tell). Constructor only.
pub fn own_shared_object_name() -> Option<&'static [u8]> {
    let here = own_shared_object_name as fn() -> Option<&'static [u8]> as usize;
    let main = main_executable_text()?;
    let in_exe = same_loaded_object(here, (main.link_lo.wrapping_add(main.bias)) as usize)?;
    if in_exe {
        return None;
    }
    // SAFETY: dladdr only inspects the loader's tables and fills the Dl_info it is given; the
    // name it points to lives as long as the object stays loaded, which is for good (ours).
    let name = unsafe {
        let mut info: libc::Dl_info = core::mem::zeroed();
        if libc::dladdr(here as *const c_void, &mut info) == 0 {
            return None;
        }
        c_str_bytes(info.dli_fname)
    };
    name.rsplit(|&b| b == b'/').next().filter(|n| !n.is_empty())
}

/// `struct dl_find_object` of glibc ≥ 2.35 (`<dlfcn.h>`): the fields every architecture's
/// layout starts with, then more room than any of them needs for the rest (x86_64 has 8 more
/// words; others at most 10).
#[repr(C)]
struct DlFindObject {
    flags: u64,
    map_start: *mut c_void,
    map_end: *mut c_void,
    link_map: *const LinkMapHead,
    eh_frame: *const c_void,
    rest: [u64; 15],
}

/// The public head of glibc's `struct link_map` (`<link.h>`), the part its ABI promises.
#[repr(C)]
struct LinkMapHead {
    l_addr: usize,
    l_name: *const c_char,
}

type FindObjectFn = unsafe extern "C" fn(*mut c_void, *mut DlFindObject) -> c_int;

/// The loaded object holding an address, as `_dl_find_object` reports it.
#[derive(Clone, Copy, Debug)]
pub struct FoundObject {
    /// Start of the object's whole mapping (runtime address).
    pub map_start: usize,
    /// End of it (exclusive).
    pub map_end: usize,
    /// Load bias (`l_addr`): runtime address = link-time address + bias.
    pub bias: u64,
    /// The loader's NUL-terminated path for it (`l_name`; `""` for the executable); valid while
    /// the object stays loaded.
    pub name: *const u8,
    /// Its `.eh_frame_hdr` (`dlfo_eh_frame`; 0: none).
    pub eh_frame_hdr: usize,
}

/// glibc's `_dl_find_object` (≥ 2.35, exported by the dynamic loader), or 0 (older glibc, a
/// static executable). Found with `dlsym` rather than linked against, so the runtime still
/// loads where it is missing. Constructor only.
pub fn find_object_function() -> usize {
    global_symbol(c"_dl_find_object")
}

/// The loaded object holding `addr`, asking `find` (from [`find_object_function`]); `None`
/// when no object holds it (the vdso may not be covered; anonymous code never is).
/// *Async-signal-safe*: glibc documents `_dl_find_object` as async-signal-safe and lock-free.
pub fn find_object(find: usize, addr: usize) -> Option<FoundObject> {
    if find == 0 {
        return None;
    }
    // SAFETY: all-zero is a valid DlFindObject (integers and null pointers).
    let mut r: DlFindObject = unsafe { core::mem::zeroed() };
    // SAFETY: `find` is `_dl_find_object` (found by dlsym under that name), which takes any
    // address and fills the struct (ours is at least as large as glibc's on every
    // architecture) or returns -1.
    let ok =
        unsafe { core::mem::transmute::<usize, FindObjectFn>(find)(addr as *mut c_void, &mut r) };
    if ok != 0 || r.link_map.is_null() {
        return None;
    }
    // SAFETY: on success dlfo_link_map points to the object's link_map, which stays valid while
    // the object is loaded (it holds the interrupted PC or our caller's address, so it is).
    let (bias, name) = unsafe { ((*r.link_map).l_addr, (*r.link_map).l_name) };
    Some(FoundObject {
        map_start: r.map_start as usize,
        map_end: r.map_end as usize,
        bias: bias as u64,
        name: name as *const u8,
        eh_frame_hdr: r.eh_frame as usize,
    })
}

/// Let another thread run (`sched_yield`).
pub fn yield_now() {
    // SAFETY: sched_yield has no preconditions.
    unsafe { libc::sched_yield() };
}

/// Reserve `bytes` of zeroed, private, anonymous memory that costs nothing until touched
/// (`MAP_NORESERVE`). Constructor only.
pub fn reserve_zeroed(bytes: usize) -> Option<*mut u8> {
    // SAFETY: as in `map_zeroed`.
    let p = unsafe {
        libc::mmap(
            ptr::null_mut(),
            bytes,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        )
    };
    (p != libc::MAP_FAILED).then_some(p as *mut u8)
}

/// The process's address-space limit (`RLIMIT_AS`), `None` when unlimited.
pub fn address_space_limit() -> Option<u64> {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit fills the struct it is given.
    let ok = unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut r) } == 0;
    (ok && r.rlim_cur != libc::RLIM_INFINITY).then_some(r.rlim_cur)
}

/// Point glibc's `environ` at `env` (a NULL-terminated array that lives for the rest of the
/// process). Constructor only: no other thread can be reading it.
pub fn set_environ(env: *mut *mut c_char) {
    // SAFETY: the constructor runs before any thread of the program's; the array is valid and
    // NULL-terminated, as the caller guarantees, and glibc's setenv/putenv copy a foreign array
    // before changing it.
    unsafe { libc::environ = env };
}

/// The process environment (`environ`).
pub fn environ() -> *const *const c_char {
    // SAFETY: reading the pointer value of glibc's `environ` variable.
    unsafe { libc::environ as *const *const c_char }
}

/// `execve(2)` as a system call (what glibc's execve does).
///
/// # Safety
/// The arguments must be valid as for execve(2).
pub unsafe fn raw_execve(
    path: *const c_char,
    argv: *const *const c_char,
    envp: *const *const c_char,
) -> c_int {
    // SAFETY: forwarded to the kernel, which validates user pointers.
    unsafe { libc::syscall(libc::SYS_execve, path, argv, envp) as c_int }
}

/// `execveat(fd, "", argv, envp, AT_EMPTY_PATH)`: what fexecve does.
///
/// # Safety
/// The arguments must be valid as for fexecve(3).
pub unsafe fn raw_fexecve(
    fd: c_int,
    argv: *const *const c_char,
    envp: *const *const c_char,
) -> c_int {
    // SAFETY: forwarded to the kernel, which validates user pointers.
    unsafe {
        libc::syscall(
            libc::SYS_execveat,
            fd,
            c"".as_ptr(),
            argv,
            envp,
            libc::AT_EMPTY_PATH,
        ) as c_int
    }
}

/// Copy `len` (≤ 8) bytes at `addr` of our own memory into `tmp`, or back from `tmp` when
/// `write_back`, through the kernel (`process_vm_readv`/`writev`): false on EFAULT instead of
/// a fault.
fn own_memory_io(addr: usize, tmp: &mut [u8; 8], len: usize, write_back: bool) -> bool {
    let len = len.min(8);
    let local = libc::iovec {
        iov_base: tmp.as_mut_ptr() as *mut c_void,
        iov_len: len,
    };
    let remote = libc::iovec {
        iov_base: addr as *mut c_void,
        iov_len: len,
    };
    // SAFETY: process_vm_readv/writev on our own pid validate the remote range and fail with
    // EFAULT instead of faulting; the local buffer is the caller's 8-byte array.
    unsafe {
        let pid = libc::getpid();
        let done = if write_back {
            libc::process_vm_writev(pid, &local, 1, &remote, 1, 0)
        } else {
            libc::process_vm_readv(pid, &local, 1, &remote, 1, 0)
        };
        done == len as isize
    }
}

/// Can `len` (≤ 8) bytes at `addr` of our own memory be read? (Through the kernel: EFAULT
/// instead of a fault.) *Async-signal-safe.*
pub fn can_read_own_memory(addr: usize, len: usize) -> bool {
    own_memory_io(addr, &mut [0u8; 8], len, false)
}

/// Read `N` (≤ 8) bytes at `addr` of our own memory through the kernel: `None` where a plain
/// load would fault. *Async-signal-safe.*
pub fn read_own_memory<const N: usize>(addr: usize) -> Option<[u8; N]> {
    let mut tmp = [0u8; 8];
    own_memory_io(addr, &mut tmp, N, false).then(|| {
        let mut out = [0u8; N];
        out.copy_from_slice(&tmp[..N]);
        out
    })
}

/// Write `bytes` (≤ 8) at `addr` of our own memory through the kernel: false where a plain
/// store would fault (nothing, or a prefix, is written then). *Async-signal-safe.*
pub fn write_own_memory(addr: usize, bytes: &[u8]) -> bool {
    let mut tmp = [0u8; 8];
    let n = bytes.len().min(8);
    tmp[..n].copy_from_slice(&bytes[..n]);
    own_memory_io(addr, &mut tmp, n, true)
}

/// The first futex word of `FUTEX_WAKE_OP`: nobody ever waits on it.
static WAKE_OP_WORD: core::sync::atomic::AtomicU32 = core::sync::atomic::AtomicU32::new(0);

/// Atomically add `1 << shift` (shift < 32) to the 32-bit word at `word` (4-byte aligned) of
/// our own memory, wrapping within the word, through the kernel (`FUTEX_WAKE_OP` with
/// `FUTEX_OP_ADD`, the only fault-handled atomic read-modify-write Linux offers on user
/// memory): false where the word is not mapped writable, instead of a fault. Exact under
/// concurrency (a locked add), and it touches no other byte. *Async-signal-safe.*
pub fn add_own_word(word: usize, shift: u32) -> bool {
    const FUTEX_OP_ADD: u32 = 1;
    const FUTEX_OP_OPARG_SHIFT: u32 = 8;
    const FUTEX_OP_CMP_EQ: u32 = 0;
    // FUTEX_OP(op, oparg, cmp, cmparg): the wake condition (cmp) is irrelevant, nobody waits.
    let op = ((FUTEX_OP_ADD | FUTEX_OP_OPARG_SHIFT) << 28)
        | (FUTEX_OP_CMP_EQ << 24)
        | ((shift & 31) << 12);
    // SAFETY: FUTEX_WAKE_OP reads WAKE_OP_WORD (ours, aligned) and performs the add on `word`
    // inside the kernel, which returns EFAULT for an address that is not mapped writable
    // instead of faulting; the wake counts are 0 and nobody waits on either word.
    let r = unsafe {
        libc::syscall(
            libc::SYS_futex,
            WAKE_OP_WORD.as_ptr(),
            libc::FUTEX_WAKE_OP | libc::FUTEX_PRIVATE_FLAG,
            0,
            0usize, // nr_wake2, passed in the timeout slot
            word as *mut u32,
            op,
        )
    };
    r >= 0
}

/// This process's CPU time (user + system of all its threads), in nanoseconds, from
/// `CLOCK_PROCESS_CPUTIME_ID`. *Async-signal-safe.*
pub fn process_cpu_ns() -> u64 {
    clock_ns(libc::CLOCK_PROCESS_CPUTIME_ID)
}

/// `sysconf(_SC_CLK_TCK)`: the clock ticks per second the seeds' `pcsample` sizes its arrays
/// by (100 on Linux). Not for the signal handler.
pub fn clock_ticks_per_second() -> u32 {
    // SAFETY: sysconf has no preconditions.
    let v = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    u32::try_from(v).ok().filter(|&v| v > 0).unwrap_or(100)
}

// ---------------------------------------------------------------------------------------------
// files

/// Create `path` for writing: it must not exist yet (`O_EXCL`), a symbolic link is never
/// followed, and the mode is 0666 minus the umask.
pub fn create_new(path: &CStr) -> Result<c_int, c_int> {
    // SAFETY: `path` is NUL-terminated; open returns -1 and sets errno on failure.
    let fd = unsafe {
        libc::open(
            path.as_ptr(),
            libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_CLOEXEC,
            0o666 as libc::c_uint,
        )
    };
    if fd < 0 {
        Err(errno())
    } else {
        Ok(fd)
    }
}

/// Write all of `buf` to `fd`, retrying on `EINTR` and short writes.
pub fn write_all(fd: c_int, mut buf: &[u8]) -> Result<(), c_int> {
    while !buf.is_empty() {
        // SAFETY: `buf` is a valid readable slice of the given length.
        let n = unsafe { libc::write(fd, buf.as_ptr() as *const c_void, buf.len()) };
        if n < 0 {
            let e = errno();
            if e == libc::EINTR {
                continue;
            }
            return Err(e);
        }
        if n == 0 {
            return Err(libc::EIO);
        }
        buf = &buf[n as usize..];
    }
    Ok(())
}

/// Close `fd`, reporting the error close gives (it can carry a deferred write error).
pub fn close(fd: c_int) -> Result<(), c_int> {
    // SAFETY: closing a descriptor we own.
    if unsafe { libc::close(fd) } < 0 {
        Err(errno())
    } else {
        Ok(())
    }
}

/// Atomically replace `to` with `from`.
pub fn rename(from: &CStr, to: &CStr) -> Result<(), c_int> {
    // SAFETY: both paths are NUL-terminated.
    if unsafe { libc::rename(from.as_ptr(), to.as_ptr()) } < 0 {
        Err(errno())
    } else {
        Ok(())
    }
}

/// `renameat2(from, to, flags)` in the working directory.
fn renameat2(from: &CStr, to: &CStr, flags: libc::c_uint) -> Result<(), c_int> {
    // SAFETY: both paths are NUL-terminated; renameat2 only reads them.
    let r = unsafe {
        libc::syscall(
            libc::SYS_renameat2,
            libc::AT_FDCWD,
            from.as_ptr(),
            libc::AT_FDCWD,
            to.as_ptr(),
            flags,
        )
    };
    if r < 0 {
        Err(errno())
    } else {
        Ok(())
    }
}

/// Move `from` to `to` only if nothing is at `to` (`EEXIST` otherwise), atomically:
/// `renameat2(RENAME_NOREPLACE)`, or where the file system does not have it, `link` and
/// `unlink`.
pub fn rename_noreplace(from: &CStr, to: &CStr) -> Result<(), c_int> {
    match renameat2(from, to, libc::RENAME_NOREPLACE) {
        Err(libc::EINVAL | libc::ENOSYS) => {}
        r => return r,
    }
    // SAFETY: both paths are NUL-terminated; link fails with EEXIST if `to` exists.
    if unsafe { libc::link(from.as_ptr(), to.as_ptr()) } < 0 {
        return Err(errno());
    }
    unlink(from);
    Ok(())
}

/// Swap what is at `a` and at `b`, atomically (`renameat2(RENAME_EXCHANGE)`).
pub fn rename_exchange(a: &CStr, b: &CStr) -> Result<(), c_int> {
    renameat2(a, b, libc::RENAME_EXCHANGE)
}

/// A file's identity, age and tag: device, inode, modification time (ns since the epoch) and
/// the access time's nanoseconds ([`stamp_file`]), not following a symbolic link.
pub fn file_stamp(path: &CStr) -> Option<(u64, u64, u64, u32)> {
    let mut st = MaybeUninit::<libc::stat>::zeroed();
    // SAFETY: `path` is NUL-terminated; lstat fills the struct it is given.
    if unsafe { libc::lstat(path.as_ptr(), st.as_mut_ptr()) } != 0 {
        return None;
    }
    // SAFETY: lstat succeeded.
    let st = unsafe { st.assume_init() };
    let mtime = (st.st_mtime as u64)
        .saturating_mul(1_000_000_000)
        .saturating_add(st.st_mtime_nsec as u64);
    Some((st.st_dev, st.st_ino, mtime, st.st_atime_nsec as u32))
}

/// Stamp the file open at `fd`: modification time `mtime_ns` (ns since the epoch, at full
/// precision, whatever the file system's clock granularity), access time one second later
/// with `tag` (below 10^9) as its nanoseconds.
pub fn stamp_file(fd: c_int, mtime_ns: u64, tag: u32) -> bool {
    let ts = [
        libc::timespec {
            tv_sec: (mtime_ns / 1_000_000_000 + 1) as libc::time_t,
            tv_nsec: libc::c_long::from(tag % 1_000_000_000) as _,
        },
        libc::timespec {
            tv_sec: (mtime_ns / 1_000_000_000) as libc::time_t,
            tv_nsec: (mtime_ns % 1_000_000_000) as _,
        },
    ];
    // SAFETY: futimens reads two timespecs; a bad descriptor is reported, not faulted.
    unsafe { libc::futimens(fd, ts.as_ptr()) == 0 }
}

/// Remove `path`, ignoring errors (cleanup of a temporary file).
pub fn unlink(path: &CStr) {
    // SAFETY: `path` is NUL-terminated.
    unsafe { libc::unlink(path.as_ptr()) };
}

fn clock_ns(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec; it is async-signal-safe.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    (ts.tv_sec as u64)
        .wrapping_mul(1_000_000_000)
        .wrapping_add(ts.tv_nsec as u64)
}

/// `CLOCK_MONOTONIC` in ns. Async-signal-safe.
pub fn monotonic_ns() -> u64 {
    clock_ns(libc::CLOCK_MONOTONIC)
}

/// `CLOCK_REALTIME` in ns since the Unix epoch.
pub fn realtime_ns() -> u64 {
    clock_ns(libc::CLOCK_REALTIME)
}

/// The calling thread's id. Async-signal-safe (a raw system call).
pub fn gettid() -> u32 {
    // SAFETY: gettid has no preconditions and cannot fail.
    unsafe { libc::syscall(libc::SYS_gettid) as u32 }
}

/// The executable's path (`readlink("/proc/self/exe")`) into `buf`; returns its length (0 when
/// it cannot be read).
pub fn exe_path(buf: &mut [u8]) -> usize {
    // SAFETY: readlink writes at most buf.len() bytes into buf and returns how many, or -1.
    let n = unsafe {
        libc::readlink(
            c"/proc/self/exe".as_ptr(),
            buf.as_mut_ptr() as *mut c_char,
            buf.len(),
        )
    };
    if n <= 0 {
        0
    } else {
        n as usize
    }
}

/// Write a message to standard error, best effort (errors are ignored: there is nowhere left
/// to report them), and never at the cost of a signal: when stderr is a pipe or socket whose
/// reader has gone (`poll` reports an error or hang-up) nothing is written, because the write
/// would raise `SIGPIPE` and end the program (a socket is written with `MSG_NOSIGNAL`); nor
/// when stderr is a regular file the message would take past `RLIMIT_FSIZE` (`SIGXFSZ`).
pub fn write_stderr(msg: &[u8]) {
    let mut p = libc::pollfd {
        fd: 2,
        events: libc::POLLOUT,
        revents: 0,
    };
    // SAFETY: one pollfd, zero timeout.
    let r = unsafe { libc::poll(&mut p, 1, 0) };
    if r < 0 || p.revents & (libc::POLLERR | libc::POLLHUP | libc::POLLNVAL) != 0 {
        return;
    }
    if !fits_file_size_limit(2, msg.len()) {
        return;
    }
    let mut buf = msg;
    while !buf.is_empty() {
        // SAFETY: `buf` is a valid readable slice; send fails with ENOTSOCK on a non-socket.
        let mut n = unsafe {
            libc::send(
                2,
                buf.as_ptr() as *const c_void,
                buf.len(),
                libc::MSG_NOSIGNAL,
            )
        };
        if n < 0 && errno() == libc::ENOTSOCK {
            // SAFETY: as above; not a socket, and poll said the reader is there.
            n = unsafe { libc::write(2, buf.as_ptr() as *const c_void, buf.len()) };
        }
        if n < 0 && errno() == libc::EINTR {
            continue;
        }
        if n <= 0 {
            return;
        }
        buf = &buf[n as usize..];
    }
}

/// Can `len` more bytes be written to `fd` without passing `RLIMIT_FSIZE` (which would raise
/// `SIGXFSZ`)? Only regular files have the limit; the end is taken as the larger of the file
/// offset and the size (an `O_APPEND` descriptor writes at the size).
fn fits_file_size_limit(fd: c_int, len: usize) -> bool {
    let limit = file_size_limit();
    if limit == u64::MAX {
        return true;
    }
    let mut st = MaybeUninit::<libc::stat>::zeroed();
    // SAFETY: fstat fills the struct it is given.
    if unsafe { libc::fstat(fd, st.as_mut_ptr()) } != 0 {
        return true;
    }
    // SAFETY: fstat succeeded.
    let st = unsafe { st.assume_init() };
    if st.st_mode & libc::S_IFMT != libc::S_IFREG {
        return true;
    }
    // SAFETY: lseek with SEEK_CUR and offset 0 only reports the offset.
    let pos = unsafe { libc::lseek(fd, 0, libc::SEEK_CUR) }.max(0) as u64;
    pos.max(st.st_size.max(0) as u64).saturating_add(len as u64) <= limit
}

/// The soft `RLIMIT_FSIZE`: the largest file this process may write (`u64::MAX`: no limit).
/// Writing past it raises `SIGXFSZ`, whose default action ends the program.
pub fn file_size_limit() -> u64 {
    let mut r = MaybeUninit::<libc::rlimit>::zeroed();
    // SAFETY: getrlimit fills the struct it is given.
    if unsafe { libc::getrlimit(libc::RLIMIT_FSIZE, r.as_mut_ptr()) } != 0 {
        return u64::MAX;
    }
    // SAFETY: getrlimit succeeded.
    let cur = unsafe { r.assume_init() }.rlim_cur;
    if cur == libc::RLIM_INFINITY {
        u64::MAX
    } else {
        cur
    }
}

/// What is at an output path (not following a symbolic link).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PathKind {
    /// Nothing (or it cannot be looked at: the create will say why).
    Absent,
    /// A regular file, and whether this process may open it for writing (`faccessat` with the
    /// effective ids, as `open` checks).
    Regular {
        /// Opening it for writing would be allowed.
        writable: bool,
    },
    /// Anything else: a directory, device, FIFO, socket or symbolic link.
    Other,
}

/// Look at `path` without following a symbolic link and without opening it.
pub fn path_kind(path: &CStr) -> PathKind {
    let mut st = MaybeUninit::<libc::stat>::zeroed();
    // SAFETY: `path` is NUL-terminated; lstat fills the struct it is given.
    if unsafe { libc::lstat(path.as_ptr(), st.as_mut_ptr()) } != 0 {
        return PathKind::Absent;
    }
    // SAFETY: lstat succeeded.
    let st = unsafe { st.assume_init() };
    if st.st_mode & libc::S_IFMT != libc::S_IFREG {
        return PathKind::Other;
    }
    // SAFETY: `path` is NUL-terminated; faccessat only checks permissions.
    let writable = unsafe {
        libc::faccessat(
            libc::AT_FDCWD,
            path.as_ptr(),
            libc::W_OK,
            libc::AT_EACCESS | libc::AT_SYMLINK_NOFOLLOW,
        )
    } == 0;
    PathKind::Regular { writable }
}

/// Sleep `ms` milliseconds (interrupted sleeps end early). Async-signal-safe.
pub fn sleep_ms(ms: u64) {
    let ts = libc::timespec {
        tv_sec: (ms / 1000) as libc::time_t,
        tv_nsec: ((ms % 1000) * 1_000_000) as _,
    };
    // SAFETY: nanosleep reads one timespec; no remainder requested.
    unsafe { libc::nanosleep(&ts, ptr::null_mut()) };
}

/// `prctl(2)` as the system call it is (glibc's `prctl` adds nothing to it), for the `prctl`
/// wrapper.
pub fn raw_prctl(
    option: c_int,
    a2: libc::c_ulong,
    a3: libc::c_ulong,
    a4: libc::c_ulong,
    a5: libc::c_ulong,
) -> c_int {
    // SAFETY: forwarded to the kernel, which validates the arguments and any pointers in them.
    unsafe { libc::syscall(libc::SYS_prctl, option, a2, a3, a4, a5) as c_int }
}

/// The text of an `errno` value, copied into `buf`.
pub fn strerror(err: c_int, buf: &mut [u8; 128]) -> &str {
    // SAFETY: the XSI strerror_r writes at most `buf.len()` bytes including the NUL.
    let r = unsafe { libc::strerror_r(err, buf.as_mut_ptr() as *mut c_char, buf.len()) };
    if r != 0 {
        return "unknown error";
    }
    let len = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    core::str::from_utf8(&buf[..len]).unwrap_or("unknown error")
}

// ---------------------------------------------------------------------------------------------
// stack walking (crate::stacks)

/// The interrupted general registers in DWARF's x86-64 numbering: `rax`, `rdx`, `rcx`, `rbx`,
/// `rsi`, `rdi`, `rbp`, `rsp`, `r8`–`r15`, then the return address column, which holds `rip`.
/// *Async-signal-safe.*
///
/// # Safety
/// `uctx` must be the `ucontext_t` pointer the kernel passed to an `SA_SIGINFO` handler.
#[cfg(target_arch = "x86_64")]
pub unsafe fn interrupted_gregs(uctx: *const c_void) -> [usize; 17] {
    // SAFETY: the caller guarantees `uctx` is the kernel's ucontext_t for this signal.
    let g = unsafe { &(*(uctx as *const libc::ucontext_t)).uc_mcontext.gregs };
    GREGS_DWARF_ORDER.map(|r| g[r as usize] as usize)
}

/// The kernel's `gregs` index of each DWARF register 0–16 (x86-64).
#[cfg(target_arch = "x86_64")]
pub const GREGS_DWARF_ORDER: [c_int; 17] = {
    use libc::{
        REG_R10, REG_R11, REG_R12, REG_R13, REG_R14, REG_R15, REG_R8, REG_R9, REG_RAX, REG_RBP,
        REG_RBX, REG_RCX, REG_RDI, REG_RDX, REG_RIP, REG_RSI, REG_RSP,
    };
    [
        REG_RAX, REG_RDX, REG_RCX, REG_RBX, REG_RSI, REG_RDI, REG_RBP, REG_RSP, REG_R8, REG_R9,
        REG_R10, REG_R11, REG_R12, REG_R13, REG_R14, REG_R15, REG_RIP,
    ]
};

/// Where `gregs` lies in a `ucontext_t` (bytes from its start).
#[cfg(target_arch = "x86_64")]
pub const UCONTEXT_GREGS_AT: usize = core::mem::offset_of!(libc::ucontext_t, uc_mcontext);

extern "C" {
    /// glibc's record of where the initial stack ends (the loader sets it at start).
    static __libc_stack_end: *const c_void;
}

/// The offset of `stackblock` (the thread's stack mapping, followed by its size) in glibc's
/// thread descriptor (`struct pthread`, at the thread pointer), found in the calling thread's
/// descriptor: for the initial thread glibc leaves `stackblock` 0 and sets the size to
/// `__libc_stack_end`; for another thread the pair spans the thread pointer and the stack
/// pointer. `None` when no such pair is found (another C library). Constructor only.
pub fn stackblock_offset() -> Option<usize> {
    let tp = thread_pointer();
    let sp = &tp as *const usize as usize;
    // SAFETY: a plain read of a variable the loader set before any constructor ran.
    let end = unsafe { __libc_stack_end } as usize;
    if tp == 0 {
        return None;
    }
    // struct pthread is larger than 2 KiB in every glibc since 2.26; the words read lie in it.
    (8..2048 - 8).step_by(8).find(|&k| {
        // SAFETY: tp + k + 8 lies inside the calling thread's descriptor (see above).
        let (block, size) = unsafe { (read_word(tp + k), read_word(tp + k + 8)) };
        (block == 0 && size == end && end != 0)
            || (block != 0 && block <= sp && sp < tp && size < 1 << 40 && tp < block + size)
    })
}

/// The stack mapping glibc records for the calling thread (`stackblock`, size) at `offset`
/// ([`stackblock_offset`]), or `None` when the thread pointer is not a glibc thread descriptor
/// (code that set `%fs` itself, like Go's runtime, whose block may be smaller).
/// *Async-signal-safe*: four loads.
#[cfg(target_arch = "x86_64")]
pub fn thread_stack_block(offset: usize) -> Option<(usize, usize)> {
    let (tcb, this): (usize, usize);
    // SAFETY: reads the first and third words at %fs (glibc's tcbhead_t: `tcb` and `self`,
    // both the descriptor's own address); %fs always points at mapped memory of at least that
    // size in a thread that can run this handler (our handler's own code uses it). No side
    // effect.
    unsafe {
        core::arch::asm!("mov {a}, fs:[0]", "mov {b}, fs:[16]", a = out(reg) tcb, b = out(reg) this,
            options(nostack, readonly, preserves_flags))
    };
    if tcb == 0 || tcb != this {
        return None;
    }
    // SAFETY: tcb is a glibc thread descriptor (its self pointers agree); offset + 16 lies
    // inside it, mapped while the thread runs.
    Some(unsafe { (read_word(tcb + offset), read_word(tcb + offset + 8)) })
}

/// The inaccessible page below each stack of ours ([`map_stacks`]).
pub const STACK_GUARD: usize = 4096;

/// Map `n` stacks of `size` bytes (a multiple of the page size), each with an inaccessible
/// guard page below it (an overflow faults instead of writing into whatever lies below),
/// costing memory only where touched (`MAP_NORESERVE`); returns the start of the first stack
/// (stack `i` is `[start + i·(size + STACK_GUARD), … + size)`). Constructor only.
pub fn map_stacks(n: usize, size: usize) -> Option<*mut u8> {
    const GUARD: usize = STACK_GUARD;
    let stride = size.checked_add(GUARD)?;
    let bytes = stride.checked_mul(n)?;
    let base = reserve_zeroed(bytes)?;
    for i in 0..n {
        // SAFETY: the guard page lies inside the mapping just made, which nothing else uses.
        let ok = unsafe {
            libc::mprotect(base.add(i * stride) as *mut c_void, GUARD, libc::PROT_NONE) == 0
        };
        if !ok {
            // SAFETY: unmapping the mapping made above, which nothing else uses.
            unsafe { libc::munmap(base as *mut c_void, bytes) };
            return None;
        }
    }
    // SAFETY: GUARD < bytes: inside the mapping.
    Some(unsafe { base.add(GUARD) })
}

/// The calling thread's thread pointer (`%fs:0`, the TCB's self pointer), or 0.
/// *Async-signal-safe*: one load.
#[cfg(target_arch = "x86_64")]
pub fn thread_pointer() -> usize {
    let p: usize;
    // SAFETY: on x86_64 Linux every thread's %fs points at its TCB, whose first word is the TCB's
    // own address (the TLS ABI); reading it has no side effect.
    unsafe {
        core::arch::asm!("movq %fs:0, {p}", p = out(reg) p, options(att_syntax, nostack, readonly, preserves_flags))
    };
    p
}

/// See the x86_64 version.
#[cfg(not(target_arch = "x86_64"))]
pub fn thread_pointer() -> usize {
    0
}

/// Read the word at `addr`. *Async-signal-safe.*
///
/// # Safety
/// `addr..addr + 8` must be mapped readable memory (the caller checks it against the
/// interrupted thread's stack range or a loaded object's text).
#[inline]
pub unsafe fn read_word(addr: usize) -> usize {
    // SAFETY: the caller guarantees the address is readable; unaligned reads are fine on x86.
    unsafe { ptr::read_unaligned(addr as *const usize) }
}

/// Read the byte at `addr`.
///
/// # Safety
/// As [`read_word`], for one byte.
#[inline]
pub unsafe fn read_byte(addr: usize) -> u8 {
    // SAFETY: as the caller guarantees.
    unsafe { ptr::read_volatile(addr as *const u8) }
}

/// Address of the executable's file name string (`AT_EXECFN`), which the kernel puts at the top
/// of the main thread's stack, or 0. Constructor only.
pub fn exec_fn_address() -> usize {
    // SAFETY: getauxval has no preconditions; it returns 0 for an absent entry.
    unsafe { libc::getauxval(libc::AT_EXECFN) as usize }
}

/// The soft `RLIMIT_STACK` (`None`: unlimited or unknown). Constructor only.
pub fn stack_limit() -> Option<u64> {
    let mut r = MaybeUninit::<libc::rlimit>::zeroed();
    // SAFETY: getrlimit fills the struct it is given.
    if unsafe { libc::getrlimit(libc::RLIMIT_STACK, r.as_mut_ptr()) } != 0 {
        return None;
    }
    // SAFETY: filled on success.
    let r = unsafe { r.assume_init() };
    (r.rlim_cur != libc::RLIM_INFINITY).then_some(r.rlim_cur)
}

/// One executable segment of a loaded object.
#[derive(Clone, Copy, Debug)]
pub struct Segment {
    /// Runtime start.
    pub lo: usize,
    /// Runtime end (exclusive).
    pub hi: usize,
    /// The object's load bias.
    pub bias: usize,
    /// The loader's NUL-terminated name for the object (`""` for the executable), valid while it
    /// stays loaded.
    pub name: *const c_char,
    /// The object's call frame information ([`Cfi`]; all zero when it has none).
    pub cfi: Cfi,
}

/// The program header table of the ELF image whose header is at `start`, if it is a valid
/// header for this architecture and the table lies within the first page. `start..end` must be
/// a loaded object's mapping (from `_dl_find_object`), which stays loaded while the headers are
/// used.
#[inline(always)]
pub fn headers_at(start: usize, end: usize) -> Option<&'static [Phdr]> {
    const EHDR: usize = core::mem::size_of::<Ehdr>();
    if end.saturating_sub(start) < 4096 || !start.is_multiple_of(core::mem::align_of::<Ehdr>()) {
        return None;
    }
    // SAFETY: the first page of a loaded object's mapping is its first PT_LOAD segment's first
    // page, mapped readable by the loader for as long as the object is loaded.
    let eh = unsafe { &*(start as *const Ehdr) };
    if eh.e_ident[..4] != *b"\x7fELF"
        || eh.e_ident[4] != 2 // ELFCLASS64
        || usize::from(eh.e_phentsize) != core::mem::size_of::<Phdr>()
    {
        return None;
    }
    let off = usize::try_from(eh.e_phoff).ok()?;
    let n = usize::from(eh.e_phnum);
    let bytes = n.checked_mul(core::mem::size_of::<Phdr>())?;
    if off < EHDR
        || off.checked_add(bytes)? > 4096
        || !off.is_multiple_of(core::mem::align_of::<Phdr>())
    {
        return None;
    }
    // SAFETY: the table lies inside the same first page (checked), aligned, n entries.
    Some(unsafe { core::slice::from_raw_parts((start + off) as *const Phdr, n) })
}

type Ehdr = libc::Elf64_Ehdr;
/// A 64-bit ELF program header.
pub type Phdr = libc::Elf64_Phdr;

/// Where an object's call frame information lies, in runtime addresses: its `.eh_frame_hdr`
/// (the `PT_GNU_EH_FRAME` segment) and the readable bytes of the `PT_LOAD` segment holding it,
/// which bound every read of the header and of the `.eh_frame` it points to.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Cfi {
    /// Start of `.eh_frame_hdr` (0: the object has none).
    pub hdr: usize,
    /// Start of the readable segment holding it.
    pub lo: usize,
    /// End (exclusive) of the file-backed bytes of that segment.
    pub hi: usize,
}

impl Cfi {
    /// The call frame information of an object loaded at `bias` with program headers `phdrs`
    /// (none when it has no `PT_GNU_EH_FRAME`, or that segment lies in no readable `PT_LOAD`).
    pub fn from_phdrs(bias: usize, phdrs: &[Phdr]) -> Cfi {
        let Some(eh) = phdrs.iter().find(|p| p.p_type == libc::PT_GNU_EH_FRAME) else {
            return Cfi::default();
        };
        let inside = |l: &&Phdr| {
            l.p_type == libc::PT_LOAD
                && l.p_flags & libc::PF_R != 0
                && l.p_vaddr <= eh.p_vaddr
                && eh.p_vaddr.saturating_add(eh.p_memsz) <= l.p_vaddr.saturating_add(l.p_filesz)
        };
        match phdrs.iter().find(inside) {
            Some(l) => Cfi {
                hdr: bias.wrapping_add(eh.p_vaddr as usize),
                lo: bias.wrapping_add(l.p_vaddr as usize),
                hi: bias.wrapping_add(l.p_vaddr.saturating_add(l.p_filesz) as usize),
            },
            None => Cfi::default(),
        }
    }
}

struct Segments<'a> {
    out: &'a mut [Segment],
    n: usize,
}

extern "C" fn segments_callback(
    info: *mut libc::dl_phdr_info,
    _size: usize,
    data: *mut c_void,
) -> c_int {
    // SAFETY: dl_iterate_phdr passes a valid `dl_phdr_info` for the duration of the call and
    // `data` is the `&mut Segments` handed to it by `executable_segments`; `dlpi_phdr` points to
    // `dlpi_phnum` program headers.
    unsafe {
        let s = &mut *(data as *mut Segments<'_>);
        let info = &*info;
        let phdrs = core::slice::from_raw_parts(info.dlpi_phdr, info.dlpi_phnum as usize);
        let cfi = Cfi::from_phdrs(info.dlpi_addr as usize, phdrs);
        for i in 0..info.dlpi_phnum as usize {
            let ph = &*info.dlpi_phdr.add(i);
            if ph.p_type == libc::PT_LOAD && ph.p_flags & libc::PF_X != 0 && ph.p_memsz > 0 {
                let lo = info.dlpi_addr.wrapping_add(ph.p_vaddr) as usize;
                if let Some(slot) = s.out.get_mut(s.n) {
                    *slot = Segment {
                        lo,
                        hi: lo.saturating_add(ph.p_memsz as usize),
                        bias: info.dlpi_addr as usize,
                        name: info.dlpi_name,
                        cfi,
                    };
                    s.n += 1;
                }
            }
        }
    }
    0
}

/// The executable segments of every object loaded now (the executable first), as many as fit
/// in `out`; returns how many. Constructor only.
pub fn executable_segments(out: &mut [Segment]) -> usize {
    let mut s = Segments { out, n: 0 };
    // SAFETY: the callback only writes through `data`, which points to `s`, alive for the call.
    unsafe {
        libc::dl_iterate_phdr(
            Some(segments_callback),
            &mut s as *mut Segments<'_> as *mut c_void,
        );
    }
    s.n
}

/// The bytes of a NUL-terminated string the loader keeps (an object's name), without the NUL;
/// empty for a null pointer.
///
/// # Safety
/// `p` must be null or point to a NUL-terminated string that outlives the returned slice.
pub unsafe fn c_str_bytes<'a>(p: *const c_char) -> &'a [u8] {
    if p.is_null() {
        return &[];
    }
    // SAFETY: as the caller guarantees.
    unsafe { CStr::from_ptr(p).to_bytes() }
}

/// A stack of our own (`len` bytes below `top`, a guard page below that), mapped in the
/// constructor and touched only when code runs on it ([`run_on_stack`]). Constructor only.
pub fn map_stack(len: usize) -> Option<usize> {
    map_stacks(1, len).map(|start| start as usize + len)
}

/// Call `f(arg)` with the stack pointer at `top` (16-byte aligned, the end of a stack of our
/// own that nothing else uses meanwhile), then come back to the caller's stack.
///
/// # Safety
/// `top` must be the top of a mapped, writable stack large enough for `f`, used by no other
/// code while `f` runs; `f` must not unwind.
#[cfg(target_arch = "x86_64")]
pub unsafe fn run_on_stack(top: usize, f: extern "C" fn(*mut c_void), arg: *mut c_void) {
    // SAFETY: the caller's stack pointer is kept in r12 (callee-saved, so `f` preserves it)
    // and put back after the call; `top` is 16-byte aligned, so `f` is entered with the ABI's
    // alignment; every caller-saved register is declared clobbered.
    unsafe {
        core::arch::asm!(
            "mov r12, rsp",
            "mov rsp, {top}",
            "call {f}",
            "mov rsp, r12",
            top = in(reg) top & !15,
            f = in(reg) f,
            in("rdi") arg,
            out("r12") _,
            clobber_abi("C"),
        );
    }
}

/// See the x86_64 version.
///
/// # Safety
/// As for the x86_64 version.
#[cfg(target_arch = "aarch64")]
pub unsafe fn run_on_stack(top: usize, f: extern "C" fn(*mut c_void), arg: *mut c_void) {
    // SAFETY: as for x86_64, with x20 (callee-saved) keeping the caller's stack pointer.
    unsafe {
        core::arch::asm!(
            "mov x20, sp",
            "mov sp, {top}",
            "blr {f}",
            "mov sp, x20",
            top = in(reg) top & !15,
            f = in(reg) f,
            in("x0") arg,
            out("x20") _,
            clobber_abi("C"),
        );
    }
}

/// Other architectures: on the caller's stack.
///
/// # Safety
/// None beyond `f`'s own.
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
pub unsafe fn run_on_stack(_top: usize, f: extern "C" fn(*mut c_void), arg: *mut c_void) {
    f(arg)
}

/// Is this process running under valgrind (which translates the program and keeps the
/// signals to itself)? Asks valgrind itself, with its client request `RUNNING_ON_VALGRIND`
/// (a rotate sequence that leaves `rdi` as it was, then `xchg rbx, rbx`: nothing at all on a
/// real CPU, where `rdx` keeps 0). Elsewhere than x86_64: valgrind's preload in `LD_PRELOAD`.
#[cfg(target_arch = "x86_64")]
pub fn under_valgrind() -> bool {
    const RUNNING_ON_VALGRIND: u64 = 0x1001;
    let args: [u64; 6] = [RUNNING_ON_VALGRIND, 0, 0, 0, 0, 0];
    let mut result: u64 = 0;
    // SAFETY: four rotations of rdi by 128 bits in all and an exchange of rbx with itself
    // change no register on a real CPU; under valgrind, it reads the six words at rax and
    // writes its answer to rdx. Both registers are declared.
    unsafe {
        core::arch::asm!(
            "rol rdi, 3",
            "rol rdi, 13",
            "rol rdi, 61",
            "rol rdi, 51",
            "xchg rbx, rbx",
            inout("rdx") result,
            in("rax") args.as_ptr(),
            inout("rdi") 0u64 => _,
            options(nostack),
        );
    }
    result != 0
}

/// See the x86_64 version.
#[cfg(not(target_arch = "x86_64"))]
pub fn under_valgrind() -> bool {
    getenv(c"LD_PRELOAD").is_some_and(|v| v.windows(11).any(|w| w == b"/vgpreload_"))
}

/// Is `ITIMER_PROF` (the program's: the runtime's own CPU-time timer is a POSIX timer) armed?
pub fn profiling_timer_armed() -> bool {
    let mut v = MaybeUninit::<libc::itimerval>::zeroed();
    // SAFETY: getitimer fills the struct it is given.
    if unsafe { libc::getitimer(libc::ITIMER_PROF, v.as_mut_ptr()) } != 0 {
        return false;
    }
    // SAFETY: getitimer succeeded.
    let v = unsafe { v.assume_init() };
    v.it_value.tv_sec != 0 || v.it_value.tv_usec != 0
}
