//! The exec family: write the profile before the process image is replaced, resume if it is
//! not.
//!
//! glibc's `execv`, `execvp`, `execl*` and `posix_spawn` call its internal `__execve`, so
//! wrapping `execve` alone catches nothing but direct `execve` calls: the artifacts export
//! every member (`execve`, `execv`, `execvp`, `execvpe`, `execl`, `execlp`, `execle`,
//! `fexecve`; Rust's `Command::exec` uses `execvp`). Each wrapper stops the clock and writes
//! the samples so far (the new image runs no exit handlers of ours), then calls the real
//! function; if that returns, the exec failed and profiling resumes with its counts.
//!
//! The real functions are found with `dlsym(RTLD_NEXT)` in the constructor (never after a
//! fork: dlsym takes the loader lock, which another thread may have held at fork time). In a
//! static executable there is no "next" definition; there the wrappers do what glibc does
//! with system calls (`execve`, `execveat` for `fexecve`) and search `PATH` themselves for
//! `execvp`/`execvpe` (without glibc's fallback of running a file without a `#!` line through
//! `/bin/sh`). Whatever happens, the kernel removes our clock at exec, so a new image is never
//! killed by a profiling signal.

use core::ffi::{c_char, c_int, CStr};
use core::sync::atomic::{AtomicUsize, Ordering};

use crate::buf::FixedBuf;
use crate::sys;

type ExecveFn =
    unsafe extern "C" fn(*const c_char, *const *const c_char, *const *const c_char) -> c_int;
type FexecveFn = unsafe extern "C" fn(c_int, *const *const c_char, *const *const c_char) -> c_int;

static REAL_EXECVE: AtomicUsize = AtomicUsize::new(0);
static REAL_EXECVPE: AtomicUsize = AtomicUsize::new(0);
static REAL_FEXECVE: AtomicUsize = AtomicUsize::new(0);

/// The most arguments the `execl` family accepts through the wrappers (E2BIG beyond).
pub const MAX_LIST_ARGS: usize = 4096;

/// Find the real exec functions. Constructor only.
pub fn resolve() {
    REAL_EXECVE.store(sys::next_symbol(c"execve"), Ordering::Relaxed);
    REAL_EXECVPE.store(sys::next_symbol(c"execvpe"), Ordering::Relaxed);
    REAL_FEXECVE.store(sys::next_symbol(c"fexecve"), Ordering::Relaxed);
    REAL_SETITIMER.store(sys::next_symbol(c"setitimer"), Ordering::Relaxed);
}

static REAL_SETITIMER: AtomicUsize = AtomicUsize::new(0);
type SetitimerFn =
    unsafe extern "C" fn(c_int, *const libc::itimerval, *mut libc::itimerval) -> c_int;

/// `setitimer` as the program calls it: when the program arms the profiling timer itself
/// while our clock is the `SIGPROF` CPU-time timer, we stand aside (see
/// [`crate::program_uses_profiling_timer`]) so that its handler sees only its own signals.
///
/// # Safety
/// As for setitimer(2).
pub unsafe fn setitimer(
    which: c_int,
    new: *const libc::itimerval,
    old: *mut libc::itimerval,
) -> c_int {
    // SAFETY: the caller passes a valid (or null) itimerval.
    let arming = which == libc::ITIMER_PROF
        && !new.is_null()
        && unsafe { (*new).it_value.tv_sec != 0 || (*new).it_value.tv_usec != 0 };
    if arming {
        crate::program_uses_profiling_timer();
    }
    let real = REAL_SETITIMER.load(Ordering::Relaxed);
    if real == 0 {
        // SAFETY: the caller's arguments, as the system call takes them.
        unsafe { libc::syscall(libc::SYS_setitimer, which, new, old) as c_int }
    } else {
        // SAFETY: `real` is libc's setitimer (found by dlsym), which has this signature.
        unsafe { core::mem::transmute::<usize, SetitimerFn>(real)(which, new, old) }
    }
}

/// Run `exec` between the profile's stop and (on failure) its resumption, keeping its errno.
fn around(exec: impl FnOnce() -> c_int) -> c_int {
    let running = crate::before_exec();
    crate::signals::before_exec();
    let r = exec();
    let e = sys::errno();
    crate::signals::after_failed_exec(crate::handler::on_sample);
    if running {
        crate::after_failed_exec();
    }
    sys::set_errno(e);
    r
}

/// `execve` with the profile written first.
///
/// # Safety
/// As for execve(2).
pub unsafe fn execve(
    path: *const c_char,
    argv: *const *const c_char,
    envp: *const *const c_char,
) -> c_int {
    let mut store = [core::ptr::null(); crate::lineage::MAX_ENV_COPY + 1];
    // SAFETY: the caller's envp, as execve(2) takes it.
    let envp = unsafe { crate::lineage::envp_for_exec(envp, &mut store) };
    around(|| {
        let real = REAL_EXECVE.load(Ordering::Relaxed);
        if real == 0 {
            // SAFETY: the caller's arguments, as execve(2) takes them.
            unsafe { sys::raw_execve(path, argv, envp) }
        } else {
            // SAFETY: `real` is libc's execve (found by dlsym), which has this signature.
            unsafe { core::mem::transmute::<usize, ExecveFn>(real)(path, argv, envp) }
        }
    })
}

/// `execvpe` with the profile written first.
///
/// # Safety
/// As for execvpe(3).
pub unsafe fn execvpe(
    file: *const c_char,
    argv: *const *const c_char,
    envp: *const *const c_char,
) -> c_int {
    let mut store = [core::ptr::null(); crate::lineage::MAX_ENV_COPY + 1];
    // SAFETY: the caller's envp, as execvpe(3) takes it.
    let envp = unsafe { crate::lineage::envp_for_exec(envp, &mut store) };
    around(|| {
        let real = REAL_EXECVPE.load(Ordering::Relaxed);
        if real == 0 {
            // SAFETY: the caller's arguments.
            unsafe { search_path(file, argv, envp) }
        } else {
            // SAFETY: `real` is libc's execvpe (found by dlsym), which has this signature.
            unsafe { core::mem::transmute::<usize, ExecveFn>(real)(file, argv, envp) }
        }
    })
}

/// `fexecve` with the profile written first.
///
/// # Safety
/// As for fexecve(3).
pub unsafe fn fexecve(fd: c_int, argv: *const *const c_char, envp: *const *const c_char) -> c_int {
    let mut store = [core::ptr::null(); crate::lineage::MAX_ENV_COPY + 1];
    // SAFETY: the caller's envp, as fexecve(3) takes it.
    let envp = unsafe { crate::lineage::envp_for_exec(envp, &mut store) };
    around(|| {
        let real = REAL_FEXECVE.load(Ordering::Relaxed);
        if real == 0 {
            // SAFETY: the caller's arguments.
            unsafe { sys::raw_fexecve(fd, argv, envp) }
        } else {
            // SAFETY: `real` is libc's fexecve (found by dlsym), which has this signature.
            unsafe { core::mem::transmute::<usize, FexecveFn>(real)(fd, argv, envp) }
        }
    })
}

/// Which member of the `execl` family a list call came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub enum ListKind {
    /// `execl(path, arg0, ..., NULL)`.
    Execl = 0,
    /// `execlp(file, arg0, ..., NULL)`.
    Execlp = 1,
    /// `execle(path, arg0, ..., NULL, envp)`.
    Execle = 2,
}

/// The `execl` family: the variadic arguments arrive as the five that were passed in
/// registers (`regs`) followed by those passed on the stack (`stack`), as the x86_64 System V
/// convention lays them out; they are gathered into an argument vector.
///
/// # Safety
/// `regs` must point to 5 argument slots and `stack` to the caller's stack arguments, which
/// together hold a NULL-terminated list (followed by `envp` for `execle`), as C requires of
/// the caller.
pub unsafe fn exec_list(
    kind: ListKind,
    path: *const c_char,
    regs: *const *const c_char,
    stack: *const *const c_char,
) -> c_int {
    let arg = |i: usize| -> *const c_char {
        // SAFETY: the caller guarantees slots up to the terminating NULL (and envp) exist.
        unsafe {
            if i < 5 {
                *regs.add(i)
            } else {
                *stack.add(i - 5)
            }
        }
    };
    let mut argv = [core::ptr::null::<c_char>(); MAX_LIST_ARGS + 1];
    let mut n = 0;
    loop {
        let a = arg(n);
        if a.is_null() {
            break;
        }
        if n == MAX_LIST_ARGS {
            sys::set_errno(libc::E2BIG);
            return -1;
        }
        argv[n] = a;
        n += 1;
    }
    let env = match kind {
        ListKind::Execle => arg(n + 1) as *const *const c_char,
        _ => sys::environ(),
    };
    // SAFETY: argv is NULL-terminated (argv[n] is null) and lives across the call.
    unsafe {
        match kind {
            ListKind::Execlp => execvpe(path, argv.as_ptr(), env),
            _ => execve(path, argv.as_ptr(), env),
        }
    }
}

/// execvpe's search, for static executables (no libc definition to forward to): a name
/// with a `/` is run as is; otherwise each directory of `PATH` (default `/bin:/usr/bin`; an
/// empty entry is the current directory) is tried in turn. As glibc: `EACCES` is remembered
/// and the search goes on; errors that mean "not here" go on; any other error stops it.
///
/// # Safety
/// As for execvpe(3).
pub unsafe fn search_path(
    file: *const c_char,
    argv: *const *const c_char,
    envp: *const *const c_char,
) -> c_int {
    if file.is_null() {
        sys::set_errno(libc::EFAULT);
        return -1;
    }
    // SAFETY: the caller passes a NUL-terminated file name.
    let name = unsafe { CStr::from_ptr(file) }.to_bytes();
    if name.is_empty() {
        sys::set_errno(libc::ENOENT);
        return -1;
    }
    if name.contains(&b'/') {
        // SAFETY: the caller's arguments.
        return unsafe { sys::raw_execve(file, argv, envp) };
    }
    let path = sys::getenv(c"PATH").unwrap_or(b"/bin:/usr/bin");
    let mut saw_eacces = false;
    for dir in path.split(|&b| b == b':') {
        let mut candidate = FixedBuf::<4096>::new();
        candidate.push(if dir.is_empty() { b"." } else { dir });
        candidate.push(b"/");
        candidate.push(name);
        let Some(c) = candidate.as_cstr() else {
            continue;
        };
        // SAFETY: `c` is NUL-terminated; argv/envp are the caller's.
        unsafe { sys::raw_execve(c.as_ptr(), argv, envp) };
        match sys::errno() {
            libc::EACCES => saw_eacces = true,
            libc::ENOENT
            | libc::ENOTDIR
            | libc::ESTALE
            | libc::ENODEV
            | libc::ETIMEDOUT
            | libc::ELOOP
            | libc::ENAMETOOLONG => {}
            _ => return -1,
        }
    }
    sys::set_errno(if saw_eacces {
        libc::EACCES
    } else {
        libc::ENOENT
    });
    -1
}
