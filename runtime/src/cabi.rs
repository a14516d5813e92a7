//! The C ABI the injected artifacts export: the panic handler, the constructor and destructor
//! entries, and the exported C entry points (`profil_rt_*`, the exec family, `prctl`/`syscall`,
//! `moncontrol`, `setitimer`, the seeds' `profil`/`pcsample`, and the signal calls of
//! [`crate::signals`]). Only the artifacts (feature `artifact`) build this module: a test binary
//! linking the rlib keeps libc's own functions. Each entry point is a thin trampoline into the
//! safe code of the module that owns the behaviour; the `unsafe` here is the C calling
//! contract itself (raw pointers from the caller, variadic `execl`).
use core::ffi::{c_char, c_int};

#[panic_handler]
fn panic(_: &core::panic::PanicInfo<'_>) -> ! {
    // SAFETY: abort has no preconditions. (Nothing in the runtime is expected to panic; this
    // keeps a bug from unwinding into the profiled program.)
    unsafe { libc::abort() }
}

/// Start profiling (idempotent). Called from `.init_array`; exported so that the object can
/// be pulled out of the static library by name.
#[no_mangle]
pub extern "C" fn profil_rt_start() {
    crate::start();
}

static MARKER: u8 = 0;

/// The constructor. Two copies of the runtime can meet in one process (the shared object
/// preloaded into a program that has the object linked in): only the copy whose
/// `profil_rt_start` the process resolves to (the executable's) runs; the other stays out,
/// so nothing is sampled twice and one profile is written.
extern "C" fn constructor() {
    let winner = crate::sys::global_symbol(c"profil_rt_start");
    let ours = &MARKER as *const u8 as usize;
    if winner != 0 && crate::sys::same_loaded_object(winner, ours) == Some(false) {
        return;
    }
    crate::threads::set_wrapper(pthread_create as *const () as usize);
    // The program calls these in its own stacks: the walks leave them out (libc's
    // pthread_create is then called from the program, as without us).
    crate::stacks::leave_out(pthread_create as *const () as usize);
    crate::stacks::leave_out(profil_rt_pthread_create as *const () as usize);
    crate::start();
}

/// Stop profiling and write the profile now (idempotent).
#[no_mangle]
pub extern "C" fn profil_rt_finish() {
    crate::finish();
}

#[used]
#[link_section = ".init_array"]
static INIT: extern "C" fn() = constructor;

extern "C" fn fini() {
    crate::finish_at_exit();
}

#[used]
#[link_section = ".fini_array"]
static FINI: extern "C" fn() = fini;

/// pthread_create(3): libc's, with the new thread given a sampling clock of its own whose
/// first period has a random length, so that short threads are sampled in proportion to
/// their CPU time ([`crate::threads`]). Exported by both artifacts: the shared object's
/// interposes libc's for the whole process; the object's is the executable's own, which in a
/// dynamic executable interposes libc's for its shared libraries too, and in a static one
/// replaces libc.a's weak `pthread_create` (libc's is then reached by its internal name).
///
/// # Safety
/// As for pthread_create(3).
#[no_mangle]
pub unsafe extern "C" fn pthread_create(
    thread: *mut libc::pthread_t,
    attr: *const libc::pthread_attr_t,
    start: Option<crate::threads::StartFn>,
    arg: *mut core::ffi::c_void,
) -> c_int {
    // SAFETY: the caller's contract is pthread_create's.
    unsafe { crate::threads::create(thread, attr, start, arg) }
}

/// dlclose(3): libc's, run while the sampling handlers keep off the unwind tables of objects
/// loaded after start ([`crate::unwind::dlclose`]), so that a stack walk in another thread
/// never reads an object that is being unmapped. Exported by the shared object only (in a static
/// executable the linked object's would stand in for libc's, which it could then not call).
///
/// # Safety
/// As for dlclose(3).
#[no_mangle]
pub unsafe extern "C" fn dlclose(handle: *mut core::ffi::c_void) -> c_int {
    // SAFETY: the caller's contract is dlclose's.
    unsafe { crate::unwind::dlclose(handle) }
}

/// What a program linked with the `--wrap=pthread_create` options of earlier versions
/// ([`crate::threads::LINK_FLAGS`]) calls: the same as our `pthread_create`, so the two never
/// stack (the `__real_pthread_create` those options bind is not used).
///
/// # Safety
/// As for pthread_create(3).
#[no_mangle]
pub unsafe extern "C" fn profil_rt_pthread_create(
    thread: *mut libc::pthread_t,
    attr: *const libc::pthread_attr_t,
    start: Option<crate::threads::StartFn>,
    arg: *mut core::ffi::c_void,
) -> c_int {
    // SAFETY: the caller's contract is pthread_create's.
    unsafe { crate::threads::create(thread, attr, start, arg) }
}

// The second names of the entry points libc.a defines strongly ([`crate::link`]): the object
// makes `syscall`, `execvp`, ... weak, and the linker options `profil-report link-args`
// prints send a static program's calls here even where libc.a's strong definition was linked.
#[cfg(target_arch = "x86_64")]
core::arch::global_asm!(
    ".globl profil_rt_syscall",
    ".set profil_rt_syscall, syscall",
    ".globl profil_rt_execv",
    ".set profil_rt_execv, execv",
    ".globl profil_rt_execl",
    ".set profil_rt_execl, execl",
    ".globl profil_rt_execle",
    ".set profil_rt_execle, execle",
    ".globl profil_rt_execlp",
    ".set profil_rt_execlp, execlp",
    ".globl profil_rt_execvp",
    ".set profil_rt_execvp, execvp",
    ".globl profil_rt_fexecve",
    ".set profil_rt_fexecve, fexecve",
    ".globl profil_rt_sigset",
    ".set profil_rt_sigset, sigset",
    ".globl profil_rt___sysv_signal",
    ".set profil_rt___sysv_signal, __sysv_signal",
);

/// prctl(2), writing the profile first when the program installs a seccomp filter
/// (`PR_SET_SECCOMP`; see [`crate::before_sandbox`]). glibc's prctl is the bare system
/// call; so is this one. Defined with its five integer-register arguments: on x86_64 a
/// variadic call passes them in the same registers.
#[no_mangle]
pub extern "C" fn prctl(
    option: c_int,
    a2: core::ffi::c_ulong,
    a3: core::ffi::c_ulong,
    a4: core::ffi::c_ulong,
    a5: core::ffi::c_ulong,
) -> c_int {
    if option == libc::PR_SET_SECCOMP {
        crate::before_sandbox();
    }
    crate::sys::raw_prctl(option, a2, a3, a4, a5)
}

/// profil(2): count samples into the caller's 16-bit counters (see [`crate::api`]).
///
/// # Safety
/// `buf` must stay valid for `bufsiz` bytes until profiling is turned off or replaced.
#[no_mangle]
pub unsafe extern "C" fn profil(
    buf: *mut u16,
    bufsiz: usize,
    offset: usize,
    scale: core::ffi::c_uint,
) -> c_int {
    // SAFETY: the caller's contract is profil's.
    match unsafe { crate::api::profil(buf, bufsiz, offset, scale) } {
        Ok(()) => 0,
        Err(e) => {
            crate::sys::set_errno(e);
            -1
        }
    }
}

/// pcsample(2): store raw PCs into the caller's array (see [`crate::api`]).
///
/// # Safety
/// `samples` must stay valid for `nsamples` entries until the next call.
#[no_mangle]
pub unsafe extern "C" fn pcsample(
    samples: *mut usize,
    nsamples: core::ffi::c_long,
) -> core::ffi::c_long {
    // SAFETY: the caller's contract is pcsample's.
    match unsafe { crate::api::pcsample(samples, nsamples) } {
        Ok(n) => n,
        Err(e) => {
            crate::sys::set_errno(e);
            -1
        }
    }
}

/// The samples per CPU-second `profil` and `pcsample` receive (Tru64's
/// `getsysinfo(GSI_CLK_TCK)`): `sysconf(_SC_CLK_TCK)` unless `profil_rt_set_hz` chose
/// another, at most `PROFIL_HZ`.
#[no_mangle]
pub extern "C" fn profil_rt_hz() -> core::ffi::c_uint {
    crate::api::rate()
}

/// Ask for `hz` samples per CPU-second for `profil` and `pcsample` (0: back to
/// `sysconf(_SC_CLK_TCK)`). Returns 0, or -1 with `EINVAL` above 50000.
#[no_mangle]
pub extern "C" fn profil_rt_set_hz(hz: core::ffi::c_uint) -> c_int {
    match crate::api::set_rate(hz) {
        Ok(()) => 0,
        Err(e) => {
            crate::sys::set_errno(e);
            -1
        }
    }
}

/// setitimer(2), watching for the program arming the profiling timer itself.
///
/// # Safety
/// As for setitimer(2).
#[no_mangle]
pub unsafe extern "C" fn setitimer(
    which: c_int,
    new: *const libc::itimerval,
    old: *mut libc::itimerval,
) -> c_int {
    // SAFETY: the caller's contract is setitimer's.
    unsafe { crate::exec::setitimer(which, new, old) }
}

/// BSD `moncontrol(mode)`: 0 pauses counting samples into the profile, non-zero resumes.
#[no_mangle]
pub extern "C" fn moncontrol(mode: c_int) {
    crate::set_counting(mode != 0);
}

/// execve(2), writing the profile first.
///
/// # Safety
/// As for execve(2).
#[no_mangle]
pub unsafe extern "C" fn execve(
    path: *const c_char,
    argv: *const *const c_char,
    envp: *const *const c_char,
) -> c_int {
    // SAFETY: the caller's contract is execve's.
    unsafe { crate::exec::execve(path, argv, envp) }
}

/// execv(3), writing the profile first.
///
/// # Safety
/// As for execv(3).
#[no_mangle]
pub unsafe extern "C" fn execv(path: *const c_char, argv: *const *const c_char) -> c_int {
    // SAFETY: the caller's contract is execv's; environ is the process environment.
    unsafe { crate::exec::execve(path, argv, crate::sys::environ()) }
}

/// execvp(3), writing the profile first.
///
/// # Safety
/// As for execvp(3).
#[no_mangle]
pub unsafe extern "C" fn execvp(file: *const c_char, argv: *const *const c_char) -> c_int {
    // SAFETY: the caller's contract is execvp's; environ is the process environment.
    unsafe { crate::exec::execvpe(file, argv, crate::sys::environ()) }
}

/// execvpe(3), writing the profile first.
///
/// # Safety
/// As for execvpe(3).
#[no_mangle]
pub unsafe extern "C" fn execvpe(
    file: *const c_char,
    argv: *const *const c_char,
    envp: *const *const c_char,
) -> c_int {
    // SAFETY: the caller's contract is execvpe's.
    unsafe { crate::exec::execvpe(file, argv, envp) }
}

/// fexecve(3), writing the profile first.
///
/// # Safety
/// As for fexecve(3).
#[no_mangle]
pub unsafe extern "C" fn fexecve(
    fd: c_int,
    argv: *const *const c_char,
    envp: *const *const c_char,
) -> c_int {
    // SAFETY: the caller's contract is fexecve's.
    unsafe { crate::exec::fexecve(fd, argv, envp) }
}

/// Called by the `execl` trampolines below with the variadic arguments laid out in memory.
extern "C" fn exec_list_entry(
    path: *const c_char,
    regs: *const *const c_char,
    stack: *const *const c_char,
    kind: crate::exec::ListKind,
) -> c_int {
    // SAFETY: the trampolines pass the register save area and the caller's stack arguments
    // of a C variadic call, which C requires to hold a NULL-terminated list.
    unsafe { crate::exec::exec_list(kind, path, regs, stack) }
}

// The variadic members, which stable Rust cannot define: a naked trampoline stores the five
// register-passed variadic arguments (rsi, rdx, rcx, r8, r9) in a 56-byte frame (which also
// realigns the stack to 16 bytes) and passes that, a pointer to the stack-passed ones
// (just above the return address) and the member's kind to `exec_list_entry`.
macro_rules! exec_list_trampoline {
    ($(#[$doc:meta])* $name:ident, $kind:literal) => {
        $(#[$doc])*
        #[cfg(target_arch = "x86_64")]
        #[unsafe(naked)]
        #[no_mangle]
        pub extern "C" fn $name() {
            core::arch::naked_asm!(
                "lea rax, [rsp + 8]",
                "sub rsp, 56",
                "mov [rsp], rsi",
                "mov [rsp + 8], rdx",
                "mov [rsp + 16], rcx",
                "mov [rsp + 24], r8",
                "mov [rsp + 32], r9",
                "mov rsi, rsp",
                "mov rdx, rax",
                concat!("mov ecx, ", $kind),
                "call {entry}",
                "add rsp, 56",
                "ret",
                entry = sym exec_list_entry,
            )
        }
    };
}
exec_list_trampoline!(
    /// execl(3), writing the profile first.
    execl, 0
);
exec_list_trampoline!(
    /// execlp(3), writing the profile first.
    execlp, 1
);
exec_list_trampoline!(
    /// execle(3), writing the profile first.
    execle, 2
);

/// Called by the `syscall` wrapper before `syscall(SYS_seccomp, ...)`.
#[cfg(target_arch = "x86_64")]
extern "C" fn before_seccomp() {
    crate::before_sandbox();
}

/// Called by the `syscall` wrapper when the kernel returned an error (-4095..=-1): sets
/// errno and returns -1, as glibc's `syscall` does.
#[cfg(target_arch = "x86_64")]
extern "C" fn syscall_failed(ret: core::ffi::c_long) -> core::ffi::c_long {
    crate::sys::set_errno(-ret as c_int);
    -1
}

/// syscall(2), writing the profile first when the program installs a seccomp filter with
/// the raw system call (`SYS_seccomp` with `SECCOMP_SET_MODE_STRICT` or `_FILTER`, as
/// libseccomp and sandboxes do; see
/// [`crate::before_sandbox`]). Every other call is exactly glibc's: a leaf function that
/// moves the number and six arguments into the system call registers (the sixth comes from
/// the caller's stack), uses no stack of its own (so `syscall(SYS_vfork)` and friends
/// behave as with glibc), and turns a return in -4095..=-1 into errno and -1.
#[cfg(target_arch = "x86_64")]
#[unsafe(naked)]
#[no_mangle]
pub extern "C" fn syscall() {
    core::arch::naked_asm!(
        "cmp rdi, {seccomp}",
        "jne 2f",
        // Only the operations that install a filter: SECCOMP_SET_MODE_STRICT (0) and
        // SECCOMP_SET_MODE_FILTER (1), not the queries (GET_ACTION_AVAIL, ...).
        "cmp rsi, 1",
        "ja 2f",
        // The seccomp call: keep the arguments across the hook (six pushes and 8 bytes
        // realign the stack to 16 for the call).
        "push rdi",
        "push rsi",
        "push rdx",
        "push rcx",
        "push r8",
        "push r9",
        "sub rsp, 8",
        "call {hook}",
        "add rsp, 8",
        "pop r9",
        "pop r8",
        "pop rcx",
        "pop rdx",
        "pop rsi",
        "pop rdi",
        "2:",
        "mov rax, rdi",
        "mov rdi, rsi",
        "mov rsi, rdx",
        "mov rdx, rcx",
        "mov r10, r8",
        "mov r8, r9",
        "mov r9, [rsp + 8]",
        "syscall",
        "cmp rax, -4095",
        "jae 3f",
        "ret",
        "3:",
        "sub rsp, 8",
        "mov rdi, rax",
        "call {failed}",
        "add rsp, 8",
        "ret",
        seccomp = const libc::SYS_seccomp,
        hook = sym before_seccomp,
        failed = sym syscall_failed,
    )
}

// The signal calls, with the program's view of the sampling signals (crate::signals).

/// sigaction(2) with the program's view of the sampling signals (see [`crate::signals`]).
///
/// # Safety
/// As for sigaction(2).
#[no_mangle]
pub unsafe extern "C" fn sigaction(
    sig: c_int,
    act: *const libc::sigaction,
    old: *mut libc::sigaction,
) -> c_int {
    // SAFETY: the caller's contract is sigaction's.
    unsafe { crate::signals::sigaction(sig, act, old) }
}

/// signal(3), BSD semantics.
#[no_mangle]
pub extern "C" fn signal(sig: c_int, handler: usize) -> usize {
    crate::signals::signal(sig, handler, false)
}

/// bsd_signal(3).
#[no_mangle]
pub extern "C" fn bsd_signal(sig: c_int, handler: usize) -> usize {
    crate::signals::signal(sig, handler, false)
}

/// sysv_signal(3).
#[no_mangle]
pub extern "C" fn sysv_signal(sig: c_int, handler: usize) -> usize {
    crate::signals::signal(sig, handler, true)
}

/// What `signal` compiles to under strict ISO C (`-std=c99`).
#[no_mangle]
pub extern "C" fn __sysv_signal(sig: c_int, handler: usize) -> usize {
    crate::signals::signal(sig, handler, true)
}

/// sigset(3).
#[no_mangle]
pub extern "C" fn sigset(sig: c_int, disp: usize) -> usize {
    crate::signals::sigset(sig, disp)
}

/// sigprocmask(2).
///
/// # Safety
/// As for sigprocmask(2).
#[no_mangle]
pub unsafe extern "C" fn sigprocmask(
    how: c_int,
    set: *const libc::sigset_t,
    old: *mut libc::sigset_t,
) -> c_int {
    // SAFETY: the caller's contract is sigprocmask's.
    match unsafe { crate::signals::sigmask(how, set, old) } {
        0 => 0,
        e => {
            crate::sys::set_errno(e);
            -1
        }
    }
}

/// pthread_sigmask(3).
///
/// # Safety
/// As for pthread_sigmask(3).
#[no_mangle]
pub unsafe extern "C" fn pthread_sigmask(
    how: c_int,
    set: *const libc::sigset_t,
    old: *mut libc::sigset_t,
) -> c_int {
    // SAFETY: the caller's contract is pthread_sigmask's.
    unsafe { crate::signals::sigmask(how, set, old) }
}

/// sigtimedwait(2).
///
/// # Safety
/// As for sigtimedwait(2).
#[no_mangle]
pub unsafe extern "C" fn sigtimedwait(
    set: *const libc::sigset_t,
    info: *mut libc::siginfo_t,
    timeout: *const libc::timespec,
) -> c_int {
    // SAFETY: the caller's contract is sigtimedwait's.
    match unsafe { crate::signals::sigtimedwait(set, info, timeout) } {
        Ok(s) => s,
        Err(e) => {
            crate::sys::set_errno(e);
            -1
        }
    }
}

/// sigwaitinfo(2).
///
/// # Safety
/// As for sigwaitinfo(2).
#[no_mangle]
pub unsafe extern "C" fn sigwaitinfo(
    set: *const libc::sigset_t,
    info: *mut libc::siginfo_t,
) -> c_int {
    // SAFETY: the caller's contract is sigwaitinfo's.
    unsafe { sigtimedwait(set, info, core::ptr::null()) }
}

/// sigwait(3): like glibc's, waits again after an interruption; returns 0 or an errno.
///
/// # Safety
/// As for sigwait(3).
#[no_mangle]
pub unsafe extern "C" fn sigwait(set: *const libc::sigset_t, sig: *mut c_int) -> c_int {
    loop {
        // SAFETY: the caller's contract is sigwait's.
        match unsafe { crate::signals::sigtimedwait(set, core::ptr::null_mut(), core::ptr::null()) }
        {
            Ok(s) => {
                // SAFETY: the caller's writable int.
                unsafe { *sig = s };
                return 0;
            }
            Err(libc::EINTR) => continue,
            Err(e) => return e,
        }
    }
}
