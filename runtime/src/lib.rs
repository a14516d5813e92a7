//! profil-rs runtime: profil(2)-style PC sampling from process start, writing `gmon.out` at exit.
//!
//! Nothing in the profiled program changes. The runtime is injected as one of two artifacts that
//! the workspace's normal build produces (analyzer/build.rs; `profil-report runtime-path` prints
//! where they are):
//!
//! * `profil_rt.o`, a single relocatable object for link-time injection:
//!   `RUSTFLAGS="-C link-arg=$(profil-report runtime-path)" cargo build --target <host>` or
//!   `cc prog.c $(profil-report runtime-path)`. It is this crate built `no_std`, `panic=abort`,
//!   fat LTO, one codegen unit, as a staticlib; `ld -r` keeps only the members it needs and
//!   `objcopy` localizes every global symbol except the runtime's own entry points
//!   (`profil_rt_start`/`_finish`, the exec family and `setitimer` it wraps, the signal calls
//!   of [`signals`], `prctl`/`syscall` (seccomp), `pthread_create` ([`threads`]), `profil`,
//!   `pcsample`, `profil_rt_hz`/`_set_hz`, `moncontrol`, `profil_rt_pthread_create` for
//!   programs linked with the older `--wrap` options, and the `profil_rt_<name>` second names
//!   of [`link`]), so no `core` or `compiler_builtins` symbol can clash with a Rust program's.
//!   The names libc.a defines strongly are weak in it, so nothing clashes with libc.a either;
//!   the linker options [`link::LINK_FLAGS`] (`link-args` and `cargo profil` print and add
//!   them) reach ours in a static link that kept libc's ([`link`]).
//! * `libprofil_rt.so`, the same code as a shared object for `LD_PRELOAD` (or for linking with
//!   `-Wl,--no-as-needed`).
//!
//! # Layers
//!
//! * [`sys`]: every foreign call, behind safe wrappers, and the one architecture-specific
//!   function (the interrupted PC from a `ucontext_t`).
//! * [`config`]: the environment variables, read once in the constructor.
//! * [`hist`]: the histogram (bin layout, link-time vs runtime addresses, atomic counters).
//! * [`objects`]: every shared object is profiled by default (`PROFIL_RANGES=all`;
//!   `PROFIL_RANGES=exe` for the executable only) — a histogram per shared object in a fixed,
//!   lock-free table, each written to its own gmon file at the object's link-time addresses, plus the
//!   manifest. The handler registers an object the first time its code is sampled (glibc's
//!   async-signal-safe `_dl_find_object`; identity = load bias + path, so an object loaded
//!   where another was unloaded gets its own slot), so objects loaded later with
//!   `dlopen`/`dlmopen` are profiled without wrapping those functions.
//! * [`pcmode`]: `PROFIL_MODE=pcsample` — every sample (time, thread, PC) in a bounded buffer,
//!   written in the pcsample format with the loaded objects.
//! * [`unwind`]: one step of a stack walk with the objects' call frame information
//!   (`.eh_frame` through `.eh_frame_hdr`, gimli on fixed storage, rules cached per address;
//!   frame pointers only where there is no CFI), and the shared object's `dlclose` wrapper.
//! * [`stacks`]: the call stack of every sample (walked with [`unwind`] on a stack of our own,
//!   bounded to the interrupted thread's stack mapping), aggregated into lock-free
//!   arc and stack tables; the arcs go into `gmon.out`'s call-graph records and the stacks
//!   into `<profile>.stacks` beside it. `PROFIL_STACKS=0` records PCs only.
//! * [`handler`]: the signal handler, with its async-signal-safety contract. The modules that
//!   install it are given it ([`timer::start`], [`signals::after_failed_exec`]), so none of
//!   them names it.
//! * [`marks`]: how our samples are told from the program's `SIGTRAP` and `SIGPROF` (the word
//!   our clocks attach), shared by the clocks, the signal filter and the handler.
//! * [`signals`]: the program's view of signals — the signal calls interposed, so that it sees
//!   only its own dispositions and masks and never receives, waits for or is interrupted by
//!   our samples.
//! * [`timer`]: the clocks (perf_event task clock with synchronous `SIGTRAP`; a process
//!   CPU-time timer with `SIGPROF`).
//! * [`threads`]: a one-shot clock of its own, with a random period, for every thread
//!   created with `pthread_create` (the artifacts define it: the program's and its shared
//!   libraries' calls reach ours), so that threads shorter than a
//!   sampling period are sampled in proportion to their CPU time (the inherited clock has a
//!   fixed phase and never fires in them); the first period's second sample is dropped.
//! * [`link`]: how the object links, dynamic or static, without clashing with libc.a.
//! * [`exec`]: the exec family, wrapped so the profile is written before the image is replaced.
//!   `dlopen`/`dlmopen` are deliberately *not* wrapped: the loader searches the caller's
//!   `RUNPATH`/`$ORIGIN`, and a wrapper would make the runtime the caller (and would have
//!   nothing to call before its constructor ran); see [`objects`].
//! * [`api`]: the `profil` (traditional and extended) and `pcsample` interfaces the artifacts
//!   export, fed by the same clock at `sysconf(_SC_CLK_TCK)` samples per CPU-second, updating
//!   the caller's memory only through the kernel (a fault turns them off instead of killing
//!   the program) and never waiting (they are async-signal-safe); they keep the clock running
//!   after [`finish`] and register the fork hook themselves when the automatic profile is off.
//!   `interfaces`: safe Rust calls to them for programs the runtime is linked into.
//! * [`output`]: naming and atomically writing the file with the `gmon` crate's writer.
//! * [`lineage`]: process trees — which name each process image writes (the first process
//!   `gmon.out`, every other `gmon.out.<pid>`, later programs of an exec chain
//!   `gmon.out.<pid>.<n>`; nothing for a descendant without a sample), told from process to
//!   process by a variable of ours in environments that carry our `LD_PRELOAD` (and no other);
//!   [`output`] never replaces another process's profile whatever the names say.
//! * `cabi` (artifacts only): the exported C ABI — every `#[no_mangle]` entry point (the
//!   constructor and destructor, `profil`/`pcsample`, the exec family, `prctl`/`syscall`,
//!   `setitimer`, `moncontrol`, the signal calls), each a thin trampoline into the module that
//!   owns the behaviour.
//! * this module: the life cycle — [`start`] (the constructor), fork (the child starts an
//!   empty histogram, a clock of its own and a file `<name>.<pid>`), terminating signals left at
//!   their default action (write, then re-raise), exec, a seccomp filter going in, and
//!   [`finish`] (exit).
//!
//! # Descriptors
//!
//! Every descriptor number belongs to the program. The runtime keeps its perf events'
//! descriptors open (one, plus one per thread that existed before the clock started, plus,
//! through the `pthread_create` wrapper ([`threads`]), one per live thread created since,
//! closed when it ends), and
//! keeps them out of the way: close-on-exec, moved at start to a high number
//! (at or above 768, or three quarters of `RLIMIT_NOFILE` if lower; never 0–2), so the program's
//! first `open` returns what it would without us and a closed stdin stays closed. Its identity
//! (device, inode, perf event id) is checked before every `ioctl` or `close`; if the program
//! closed it (`closefrom`, `close_range`) or put something else at its number, the runtime
//! leaves the number alone and says so once at exit ([`timer`]). The profile is written through
//! a fresh descriptor of its own, closed before the rename ([`output`]). Nothing else is opened.
//!
//! # The exit path
//!
//! Nothing the runtime does at exit may raise a signal, change the exit status or lose the
//! program's buffered output (stdio is flushed after our exit handler runs):
//!
//! * the file never grows past `RLIMIT_FSIZE` (`SIGXFSZ`): the write fails first, with one
//!   warning; a warning is not written where it would raise `SIGXFSZ` or `SIGPIPE` (a stderr
//!   pipe whose reader has gone) ([`sys::write_stderr`]);
//! * the files are written on a stack of the runtime's own (256 KiB of reserved address space
//!   with a guard page, mapped in the constructor; writing needs about 42 KiB), so `exit` works
//!   from any stack a program may legally run on: a thread's 16 KiB stack, a handler on a
//!   `SIGSTKSZ` alternate stack; the exiting thread's own stack holds only the call into us;
//! * while the files are written, every asynchronous signal is held in the writing thread, and
//!   another thread that would end the process meanwhile (a terminating signal, its own `exit`)
//!   waits for the write, then for the exit under way ([`finish`]): the profile is whole or
//!   absent, no temporary is left, and the status is the exit's. glibc before 2.41 ends the
//!   process from a second thread's `exit` once it finds no exit handler left to run, so the
//!   exit handler is registered eight times: up to eight threads calling `exit` at once each
//!   take one and wait;
//! * the system calls it needs: `gettid`, `getpid`, `rt_sigprocmask`; for the clock `fstat`,
//!   `ioctl` (`PERF_EVENT_IOC_ID`, `_DISABLE`) and `close`, or `timer_delete`; `getrusage`;
//!   for the file `newfstatat`/`lstat`, `faccessat2`, `prlimit64`, `openat`, `write`,
//!   `utimensat`, `close`, `renameat2` (`link`/`unlink` where the file system lacks
//!   `RENAME_NOREPLACE`; `unlink` on failure; for the side files `rename`; the same again for
//!   `<profile>.stacks` unless
//!   `PROFIL_STACKS=0`, which instead unlinks a stale `<profile>.stacks`); with `PROFIL_RANGES=all` or pcsample mode `readlink`; for a
//!   warning `poll`, `fstat`, `lseek`, `sendto`/`write`; `nanosleep` while waiting for another
//!   thread's write.
//! * **seccomp**: a sandbox that allows only what the program needs would kill the process
//!   (`SIGSYS`) in any of those. The runtime wraps `prctl` (glibc's is the bare system call) and,
//!   when the program installs a filter (`PR_SET_SECCOMP`), writes the profile first and stops,
//!   like before an exec; after that it makes no system call at all, at exit or anywhere else.
//!   The samples after the filter are not recorded. `syscall` is wrapped too, for filters
//!   installed with `syscall(SYS_seccomp, ...)` (libseccomp, sandboxes); a filter installed by
//!   an inline system call instruction (or by a program linked against another C library's
//!   `syscall`) is not seen.
//!
//! # What loses the profile
//!
//! `_exit`/`_Exit` (no exit handlers run), `SIGKILL` (cannot be caught), `abort` and other
//! signals whose default action dumps core (`SIGABRT`, `SIGSEGV`, ...: the process state is
//! suspect, and writing from there could turn a crash into a hang; `SIGXCPU` is the exception,
//! a resource limit, not a fault), a terminating signal whose handler the program replaced with
//! its own, and an exec done with a raw `syscall(SYS_execve)` (it bypasses the wrappers; the
//! clock is still removed by the kernel, so the new image is safe). A write that fails (no
//! permission, `RLIMIT_FSIZE`, a full disk, something other than a regular file at the name)
//! loses it with one warning line per file; when a side file fails after the profile itself was
//! written, the whole set is taken back ([`output::withdraw`]) and one more line says so: a
//! profile is there with all its files or not at all. The samples after the program closed the clock's descriptor, or installed
//! a seccomp filter, are not recorded.
//!
//! # Signals: what the program sees, and how
//!
//! The clock's signal is `SIGTRAP` (perf) or `SIGPROF` (CPU-time timer). Three alternatives
//! were weighed: a real-time signal per thread (`F_SETSIG`/`F_SETOWN_EX`: caps at about 13 k/s
//! and still collides with programs that use real-time signals), filtering only in our
//! handler (the program's `SIG_DFL`, masks and waits still see the signal), and interposition.
//! [`signals`] interposes `sigaction`, `signal`, `bsd_signal`, `sysv_signal`, `sigset`,
//! `sigprocmask`, `pthread_sigmask`, `sigwait`, `sigwaitinfo` and `sigtimedwait` (exported by
//! both artifacts; in a static executable libc's are weak, so ours are the ones linked) and
//! does the real work with raw system calls. Our handler stays installed and unblocked for
//! real; the program's disposition and (per-thread) blocked bit for the sampling signal are
//! virtual, and a signal that is not one of our samples is delivered as they say (default
//! action re-raised, ignored, the program's handler called with its flags and mask, or held
//! pending while the program blocks it). For a terminating signal where the runtime's handler
//! stands in for the default action the program is told `SIG_DFL`, and its own disposition, if
//! it sets one, wins. The sampling path costs nothing more than before: the one check that a
//! signal is ours was always made.
//!
//! # Known limitations
//!
//! * A new thread starts with the program's blocked bit for the sampling signal clear (glibc
//!   restores the creator's mask in the new thread with an internal call, which only copies the
//!   real mask): a thread created while its creator blocked `SIGTRAP`/`SIGPROF` is told it is
//!   unblocked, and a foreign signal of that number sent to it is delivered, not held.
//! * A process-directed foreign `SIGTRAP`/`SIGPROF` (`kill` from outside) lands on whichever
//!   thread the kernel picks (all have it unblocked for real); if that thread blocks it, it is
//!   held there even when another thread would have taken it.
//! * Not interposed, because glibc implements them with internal calls: `sigsuspend`,
//!   `pause`, `siginterrupt`, `sighold`/`sigrelse`/`sigignore`, `posix_spawn` (hence
//!   `system`, `popen`) and raw `syscall(SYS_rt_sigaction, ...)`. A program that sets the
//!   sampling signal's disposition through them replaces our handler; a child started by
//!   `posix_spawn` without `POSIX_SPAWN_SETSIGMASK` inherits the real mask, without the
//!   program's blocked bit for the sampling signal (the exec family is wrapped and hands it
//!   on).
//! * With the CPU-time timer, that our `SIGPROF` never interrupts a sleeping thread's system
//!   call relies on Linux 6.4 or later, which delivers a process CPU-time timer's signal to the
//!   thread that is running; older kernels prefer the main thread whenever it does not block
//!   the signal (per-thread CPU timers, `SIGEV_THREAD_ID`, would avoid that: not done).
//! * The virtual state is what the program's calls see; `/proc/<pid>/status` (`SigBlk`,
//!   `SigIgn`, `SigCgt`) shows the real one.
//! * The program's `SA_ONSTACK` handlers run with the sampling signals blocked (so that a
//!   sample never lands a second signal frame on a small alternate stack): a sample that falls
//!   in one is taken when it returns, at the PC it returns to.
//! * Under a debugger, which stops on every `SIGTRAP`, use `PROFIL_TIMER=itimer` or
//!   `PROFIL_OFF=1`.
//! * Under valgrind (asked with its `RUNNING_ON_VALGRIND` client request,
//!   [`sys::under_valgrind`]), which keeps the signals to itself and dies of a `SIGTRAP` it did
//!   not send, the runtime starts no clock at all and says so in one line: no profile, and the
//!   programming interfaces fail with `ENOTSUP`. Other binary translators that own the signals
//!   (DynamoRIO, Pin) are not recognised.
//! * Threads shorter than a sampling period are sampled in proportion to their CPU time only
//!   when they get a clock of their own ([`threads`]): created with `pthread_create`, by the
//!   program or its shared libraries, while the perf clock runs. For threads libc
//!   starts itself (`SIGEV_THREAD` timers, `aio`), more than 256 threads starting at the same
//!   instant, or with the CPU-time timer, a thread's first sample comes after one full period of its
//!   CPU time: one that ends sooner is not sampled, and its CPU time is reported as not
//!   sampled. Beyond its first period a thread is sampled by the inherited clock, whose phase
//!   is fixed: its last partial period is not sampled (at most one sample short per thread).
//!   A thread with its own clock costs some 3–16 µs more CPU to create and end (a second perf
//!   event, opened and closed; BENCHMARKS.md).
//!
//! # Stack
//!
//! A sample puts the kernel's signal frame below the interrupted code's stack pointer (and its
//! 128-byte red zone): about `AT_MINSIGSTKSZ`, 3,376 bytes on an AVX-512 machine (2,952 bytes
//! measured), nearer 1 KiB without AVX. Our handler then needs at most 512 bytes more
//! (measured: 96 bytes at first; 288 once shared objects were registered from the handler;
//! with the stack walk, [`stacks`], 368, and 440 with `PROFIL_MODE=pcsample`; the test
//! `the_sampling_handler_uses_at_most_512_bytes_of_stack_beyond_the_signal_frame` holds it to
//! that). The CFI walk itself needs several KiB (gimli's context, the frame list), so it runs
//! on one of [`stacks::WALK_STACKS`] stacks of our own, mapped at start with guard pages, that
//! the handler switches to and back ([`stacks::record`]). So code that is sampled needs `AT_MINSIGSTKSZ` + 128 + 512 bytes free below its own
//! deepest use: a coroutine on a stack smaller than the signal frame (2 KiB on an AVX-512
//! machine) cannot take any asynchronous signal, ours included, and is not supported. The
//! program's alternate signal stacks are safe whatever their size (see above).
//!
//! # Design constraints, and why
//!
//! * **No allocation, no std.** The runtime runs before `main` and at exit inside programs
//!   whose allocator may be instrumented, replaced or broken; and a `std` object would carry its
//!   own copy of std's symbols into a Rust program. Messages and paths are formatted into fixed
//!   stack buffers ([`buf`]).
//! * **Only libc.** GNU ld resolves `-C link-arg` objects after `-lc`, so the runtime uses only
//!   symbols that libc.so.6 itself exports (`__cxa_atexit`, not `atexit`;
//!   `pthread_setcanceltype`, there since glibc 2.34), plus one weak reference,
//!   `__pthread_create`, which only a static link binds (to libc.a's `pthread_create`).
//! * **Start in a constructor** (`.init_array`) so that everything after it is sampled, and
//!   **write from both an exit handler and `.fini_array`**, exactly once: whichever runs first
//!   (their order differs between the object and the shared object).
//! * **The rate in the file is the achieved rate**: samples taken divided by the CPU time the
//!   clock measured (user time for perf, user + system for the itimer), so gprof's seconds are
//!   CPU seconds even when the kernel delivers fewer signals than requested (the itimer is
//!   capped at one per tick). That spreads CPU time that went unsampled (threads without a
//!   clock, a closed clock) over what was sampled; what was lost is therefore stated beside
//!   it, in the manifest's `process` line (version 2; written with the per-object files, so by
//!   default): the clock, its *nominal* rate ([`nominal_rate`]: `PROFIL_HZ` for perf; for the
//!   itimer, which fires at most once per kernel tick, the tick's rate when that is lower — a
//!   process cannot read `CONFIG_HZ`, so it is estimated from the achieved rate as the
//!   `CONFIG_HZ` value at or just above it), every sample taken, the process's user and system
//!   CPU time while the clock ran, the threads that could not get a clock, and whether the
//!   program closed the clock; a report's unsampled CPU is the clock's CPU time (user for
//!   perf, user + system for the itimer) minus samples ÷ nominal rate. Writing the nominal
//!   rate into the histogram header itself was tried and left out for now: at 30 kHz the perf
//!   task clock also counts the signal delivery, so samples ÷ 30000 exceeded the user time
//!   (4.17 s vs 3.01 s), and a tree of 50 forked children lost 6% (the time between fork and
//!   the child's clock). An itimer asked for more than the tick allows says so in one line at
//!   exit (from the first process of a tree).
//! * **A profiler never changes the program's fate**: bad settings and write failures are one
//!   line on stderr, the exit status is never touched, and a `SIGTRAP` that is not ours goes
//!   where it would have gone.
//! * **Settings are copied at start**: a program may overwrite its environment block in place
//!   (setproctitle); the output name used at exit is the one it started with. In a setuid,
//!   setgid or capability-raising program (`AT_SECURE`) the settings that name a path are
//!   ignored ([`config`]).
//!
//! Samples outside the main executable's text (shared libraries, the vdso) count toward the
//! achieved rate but not into the executable's histogram: gmon's single-range histogram has no
//! place for them. By default ([`objects`]; `PROFIL_RANGES=exe` turns it off) each shared
//! object gets a histogram and a file of its own, named in a manifest beside the executable's
//! file, so the library time is in the profile too; `gmon.out` stays the executable's own,
//! gprof-valid file. That costs every profiled process an address-space reservation of 1 GiB
//! (`MAP_NORESERVE`: memory only where samples land; a sixteenth of `RLIMIT_AS` under a limit;
//! under strict overcommit, `vm.overcommit_memory=2`, the kernel charges it anyway, and the
//! runtime halves it down to 16 MiB until it fits).
#![cfg_attr(not(test), no_std)]
#![deny(missing_docs)]

pub mod api;
pub mod buf;
pub mod config;
pub mod exec;
pub mod handler;
pub mod hist;
#[cfg(not(feature = "artifact"))]
pub mod interfaces;
pub mod lineage;
pub mod link;
pub mod marks;
pub mod objects;
pub mod output;
pub mod pcmode;
pub mod signals;
pub mod stacks;
pub mod sys;
pub mod threads;
pub mod timer;
pub mod unwind;

use core::fmt::Write as _;
use core::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicU8, AtomicUsize, Ordering};

use config::{Config, Format};
use output::Destination;
use timer::Backend;

static STARTED: AtomicBool = AtomicBool::new(false);
/// The process runs under valgrind ([`sys::under_valgrind`]): no clock is ever started (its
/// signals would be valgrind's, which dies of a `SIGTRAP` it did not expect).
static UNDER_VALGRIND: AtomicBool = AtomicBool::new(false);
static FINISHED: AtomicBool = AtomicBool::new(false);
/// The process whose profile this is: set when the clock starts and in each forked child.
/// A process sharing our memory under another pid (a `vfork` child) must not touch the clock.
static OWNER_PID: AtomicU32 = AtomicU32::new(0);
static BACKEND: AtomicU8 = AtomicU8::new(0); // 0 none, 1 perf, 2 itimer
static START_CPU_NS: AtomicU64 = AtomicU64::new(0);
/// User and system CPU time when the clock started (for the manifest's process line).
static START_USER_NS: AtomicU64 = AtomicU64::new(0);
static START_SYS_NS: AtomicU64 = AtomicU64::new(0);
static NOMINAL_HZ: AtomicU32 = AtomicU32::new(config::DEFAULT_HZ);
static TIMER_CHOICE: AtomicU8 = AtomicU8::new(config::TimerChoice::Auto as u8);
static LAYOUT_LO: AtomicU64 = AtomicU64::new(0);
static LAYOUT_HI: AtomicU64 = AtomicU64::new(0);
static LAYOUT_SCALE: AtomicU32 = AtomicU32::new(0);
static FORMAT_BSD: AtomicBool = AtomicBool::new(false);
/// The executable's load bias (runtime − link-time address), for the objects manifest.
static EXE_BIAS: AtomicU64 = AtomicU64::new(0);
// PROFIL_OUT / GMON_OUT_PREFIX, copied in the constructor: a program may overwrite its
// environment block in place (setproctitle) long before exit.
static OUT: Saved = Saved::new();
static PREFIX: Saved = Saved::new();

/// The terminating signals whose default action we take over (only where it is the default
/// when we start): every standard signal whose default action ends the process without a core
/// dump (the process state is sound, and `prog | head -1` ends by `SIGPIPE`) except `SIGPROF`,
/// the fallback clock's own; and `SIGXCPU`, whose default dumps core but which only says that
/// the CPU-time limit was reached. The real-time signals a program may use
/// ([`sys::real_time_signals`]: `SIGRTMIN`..=`SIGRTMAX`, all terminating by default) are taken
/// over in the same way; the two below them that glibc keeps for itself are not. The one list
/// of the standard ones.
const TERMINATING: [core::ffi::c_int; 12] = [
    libc::SIGINT,
    libc::SIGTERM,
    libc::SIGHUP,
    libc::SIGPIPE,
    libc::SIGALRM,
    libc::SIGUSR1,
    libc::SIGUSR2,
    libc::SIGVTALRM,
    libc::SIGXCPU,
    libc::SIGIO,
    libc::SIGPWR,
    libc::SIGSTKFLT,
];

/// A setting's bytes, copied once in the constructor (before any other thread can read it)
/// into storage of our own.
struct Saved {
    /// 0: not set; else the length (published with Release after the bytes).
    len: core::sync::atomic::AtomicUsize,
    bytes: core::cell::UnsafeCell<[u8; output::PATH_MAX]>,
}

// SAFETY: `bytes` is written only by `store`, once, in the constructor, before `len` publishes
// it (Release); readers read it only after seeing a non-zero `len` (Acquire), and never write.
unsafe impl Sync for Saved {}

impl Saved {
    const fn new() -> Saved {
        Saved {
            len: core::sync::atomic::AtomicUsize::new(0),
            bytes: core::cell::UnsafeCell::new([0; output::PATH_MAX]),
        }
    }

    /// Copy `v` (constructor only). False if it does not fit a path.
    fn store(&self, v: &[u8]) -> bool {
        if v.is_empty() || v.len() >= output::PATH_MAX || self.len.load(Ordering::Acquire) != 0 {
            return v.is_empty();
        }
        // SAFETY: the constructor is the only writer and runs before any reader can see a
        // non-zero length (see the Sync impl).
        unsafe { (&mut *self.bytes.get())[..v.len()].copy_from_slice(v) };
        self.len.store(v.len(), Ordering::Release);
        true
    }

    fn load(&self) -> Option<&[u8]> {
        let n = self.len.load(Ordering::Acquire);
        // SAFETY: the first n bytes were written before n was published and are never written
        // again (see the Sync impl).
        (n != 0).then(|| unsafe { &(&*self.bytes.get())[..n] })
    }
}

fn warn(line: &[u8]) {
    let mut b = buf::FixedBuf::<300>::new();
    b.push(line);
    b.push(b"\n");
    sys::write_stderr(b.as_bytes());
}

fn backend() -> Option<Backend> {
    match BACKEND.load(Ordering::Relaxed) {
        1 => Some(Backend::Perf),
        2 => Some(Backend::Itimer),
        _ => None,
    }
}

/// Record that `backend` runs in this process from now on, and start counting.
fn begin(backend: Backend) {
    BACKEND.store(
        if backend == Backend::Perf { 1 } else { 2 },
        Ordering::Relaxed,
    );
    let (user, system) = sys::cpu_times_ns();
    START_USER_NS.store(user, Ordering::Relaxed);
    START_SYS_NS.store(system, Ordering::Relaxed);
    START_CPU_NS.store(
        if backend.counts_system_time() {
            user + system
        } else {
            user
        },
        Ordering::Relaxed,
    );
    OWNER_PID.store(sys::getpid(), Ordering::Relaxed);
    hist::set_recording(true);
}

fn owner() -> bool {
    sys::getpid() == OWNER_PID.load(Ordering::Relaxed)
}

/// Start profiling this process: read the settings, size the histogram over the main
/// executable's text, register the exit, fork and signal hooks and start the clock. Runs
/// once; later calls do nothing. The artifacts call it from `.init_array`, before `main`.
pub fn start() {
    if STARTED.swap(true, Ordering::AcqRel) {
        return;
    }
    // First, whatever else happens: the exec and setitimer wrappers forward to these even in
    // a process that is not profiled.
    exec::resolve();
    let cfg = Config::from_env(
        |name| {
            let mut n = buf::FixedBuf::<32>::new();
            n.push(name.as_bytes());
            n.as_cstr().and_then(sys::getenv)
        },
        sys::is_secure_execution(),
        |w| warn(w.as_bytes()),
    );
    // The programming interfaces use these even when the automatic profile is off; the fork
    // hook too (registered here, in the constructor, rather than by their first call, which
    // may come from a signal handler: registering takes a lock in libc).
    NOMINAL_HZ.store(cfg.hz, Ordering::Relaxed);
    TIMER_CHOICE.store(cfg.timer as u8, Ordering::Relaxed);
    let fork_hooked = hook_fork();
    threads::init();
    let valgrind = sys::under_valgrind();
    UNDER_VALGRIND.store(valgrind, Ordering::Relaxed);
    if cfg.off {
        return;
    }
    if valgrind {
        warn(
            b"profil-rt: running under valgrind, which keeps the signals to itself; not profiling",
        );
        return;
    }
    if !OUT.store(cfg.out.unwrap_or_default()) || !PREFIX.store(cfg.prefix.unwrap_or_default()) {
        warn(
            b"profil-rt: PROFIL_OUT or GMON_OUT_PREFIX is longer than a path can be; not profiling",
        );
        return;
    }
    let Some(text) = sys::main_executable_text() else {
        warn(b"profil-rt: cannot find the executable's text segment; not profiling");
        return;
    };
    let Some(layout) = hist::Layout::new(text.link_lo, text.link_hi, cfg.scale) else {
        warn(b"profil-rt: the executable's text range is unusable; not profiling");
        return;
    };
    if !hist::allocate(&layout, text.bias) {
        warn(b"profil-rt: cannot map memory for the histogram; not profiling");
        return;
    }
    remember(&cfg, &layout);
    EXE_BIAS.store(text.bias, Ordering::Relaxed);
    output::set_image_start(sys::realtime_ns());
    if !lineage::start() {
        warn(b"profil-rt: cannot add PROFIL_RT_LINEAGE to the environment; profiled child processes may overwrite this profile");
    }
    if cfg.ranges_all || cfg.pcsample {
        objects::enable(cfg.scale);
    }
    if cfg.stacks
        && !stacks::enable(
            cfg.stack_slots as usize,
            cfg.stack_stats,
            cfg.stacks_fp_only,
        )
    {
        warn(b"profil-rt: cannot map memory for the stack tables; recording PCs only");
    }
    if cfg.pcsample && !pcmode::enable(cfg.pcsamples as usize) {
        warn(b"profil-rt: cannot map memory for the pcsample buffer; not profiling");
        return;
    }
    if let Some(top) = sys::map_stack(WRITER_STACK_BYTES) {
        WRITER_STACK.store(top, Ordering::Relaxed);
    }
    // Several entries: glibc before 2.41 lets a second thread's `exit` end the process as soon
    // as it finds no exit handler left to run, even while another thread's handler (our
    // write) still runs. Each entry is one more exiting thread that takes it and waits for the
    // write ([`finish_as`]); one exit alone runs the others for nothing.
    if !(0..EXIT_ENTRIES).all(|_| sys::at_exit(on_exit)) {
        warn(b"profil-rt: cannot register the exit hook; the profile will be written from .fini_array only");
    }
    if !fork_hooked {
        warn(b"profil-rt: cannot register the fork hook; forked children will not be profiled");
    }
    let perf_warning = |e| {
        let mut m = buf::FixedBuf::<200>::new();
        let mut s = [0u8; 128];
        let _ = write!(
            m,
            "profil-rt: PROFIL_TIMER=perf: perf_event_open failed ({}); using the CPU-time timer",
            sys::strerror(e, &mut s)
        );
        warn(m.as_bytes());
    };
    match timer::start(cfg.timer, cfg.hz, handler::on_sample, perf_warning) {
        Ok(backend) => {
            for sig in TERMINATING.into_iter().chain(sys::real_time_signals()) {
                if sys::current_action(sig).is_some_and(|a| a.handler == libc::SIG_DFL) {
                    let _ = sys::install_oneshot_handler(sig, on_terminate);
                }
            }
            begin(backend);
        }
        Err(e) => {
            let mut m = buf::FixedBuf::<300>::new();
            let (mut a, mut b) = ([0u8; 128], [0u8; 128]);
            let _ =
                write!(
                m,
                "profil-rt: no sampling clock (perf_event: {}; CPU-time timer: {}); not profiling",
                if e.perf == 0 { "not tried" } else { sys::strerror(e.perf, &mut a) },
                sys::strerror(e.itimer, &mut b)
            );
            warn(m.as_bytes());
        }
    }
}

fn remember(cfg: &Config, layout: &hist::Layout) {
    LAYOUT_LO.store(layout.link_lo, Ordering::Relaxed);
    LAYOUT_HI.store(layout.link_hi, Ordering::Relaxed);
    LAYOUT_SCALE.store(layout.scale, Ordering::Relaxed);
    FORMAT_BSD.store(cfg.format == Format::Bsd, Ordering::Relaxed);
}

extern "C" fn on_exit(_: *mut core::ffi::c_void) {
    finish_as(Ending::Exit);
}

/// The `.fini_array` entry: the other exit path (beside the exit handler).
pub fn finish_at_exit() {
    finish_as(Ending::Exit);
}

/// Runs in the child after `fork()`: the child inherited a copy of the parent's histogram and
/// none of its clock. It starts from an empty histogram (nothing is counted twice), a clock of
/// its own, and writes `<name>.<pid>`.
extern "C" fn after_fork_in_child() {
    // A write the parent had in progress in another thread is not going on here (that thread
    // does not exist in the child): nothing to wait for at the child's exit.
    WRITER_TID.store(0, Ordering::Release);
    EXITING.store(false, Ordering::Release);
    api::after_fork();
    threads::after_fork_in_child();
    let automatic = backend().is_some() && !FINISHED.load(Ordering::Acquire);
    if automatic {
        hist::set_recording(false);
        hist::clear();
        objects::clear();
        pcmode::clear();
        stacks::clear();
        lineage::after_fork();
        output::set_image_start(sys::realtime_ns());
    }
    // The clock may also be running only for the programming interfaces ("profiling remains
    // on in child and parent after a fork").
    if timer::running().is_none() {
        return;
    }
    match timer::restart_in_child(handler::on_sample) {
        Ok(b) if automatic => begin(b),
        Ok(_) => {}
        Err(_) => {
            BACKEND.store(0, Ordering::Relaxed);
            warn(
                b"profil-rt: cannot start a sampling clock in the forked child; it is not profiled",
            );
        }
    }
}

/// A terminating signal arrived whose default action was in place when we started (our
/// handler is one-shot, so the default is back already): write the profile, then re-raise so
/// the process ends exactly as it would have.
pub(crate) extern "C" fn on_terminate(
    sig: core::ffi::c_int,
    _: *mut libc::siginfo_t,
    _: *mut core::ffi::c_void,
) {
    finish_as(Ending::Signal);
    sys::reraise_default(sig);
}

/// Called by the `prctl` wrapper before the program installs a seccomp filter: write the
/// profile now, while every system call is still allowed, and stop (like [`before_exec`]).
/// From then on the runtime makes no system call at exit: a sandbox that allows only what the
/// program itself needs would kill the process with `SIGSYS` (losing its buffered output).
pub fn before_sandbox() {
    threads::before_sandbox();
    if backend().is_none() || FINISHED.load(Ordering::Acquire) || !owner() {
        return;
    }
    finish_as(Ending::Sandbox);
}

/// Called by the exec wrappers before the process image is replaced: stop the clock and write
/// the samples so far. Returns whether profiling was running (and must resume if the exec
/// fails).
pub fn before_exec() -> bool {
    // FINISHED first: after a seccomp filter went in, not even getpid may be allowed.
    if backend().is_none() || FINISHED.load(Ordering::Acquire) || !owner() {
        return false;
    }
    finish_as(Ending::Exec);
    lineage::before_exec();
    true
}

/// Called by the exec wrappers when the exec failed: profiling resumes with the counts so far,
/// and the profile will be written again (complete) at exit.
pub fn after_failed_exec() {
    let Some(b) = backend() else { return };
    lineage::after_failed_exec();
    if STOOD_ASIDE.load(Ordering::Acquire) {
        FINISHED.store(false, Ordering::Release);
        return;
    }
    // The clock may still run (for the programming interfaces, see `write_profile`).
    let restarted = match timer::running() {
        Some(running) => Ok(running),
        None => timer::restart(b, handler::on_sample),
    };
    if let Ok(b2) = restarted {
        BACKEND.store(if b2 == Backend::Perf { 1 } else { 2 }, Ordering::Relaxed);
        FINISHED.store(false, Ordering::Release);
        hist::set_recording(true);
        pcmode::resume();
    }
}

static STOOD_ASIDE: AtomicBool = AtomicBool::new(false);
/// CPU time when sampling stopped for good before exit (0: it did not).
static END_CPU_NS: AtomicU64 = AtomicU64::new(0);

/// The program arms `ITIMER_PROF` itself. With the perf clock (`SIGTRAP`) nothing clashes and
/// nothing changes. With our `SIGPROF` timer, its `SIGPROF` handler would also receive our
/// signals: we stop our clock (once, with one warning line), keep the samples taken so far and
/// write them at exit as usual.
pub fn program_uses_profiling_timer() {
    if timer::running() != Some(Backend::Itimer) || STOOD_ASIDE.swap(true, Ordering::AcqRel) {
        return;
    }
    timer::stop();
    // The samples stop here: so does the CPU time they are measured against.
    let cpu = sys::cpu_time_ns(Backend::Itimer.counts_system_time());
    END_CPU_NS.store(cpu.max(1), Ordering::Relaxed);
    warn(b"profil-rt: the program uses the profiling timer (ITIMER_PROF) itself; profil-rt stops sampling and keeps the samples so far");
}

static FORK_HOOKED: AtomicBool = AtomicBool::new(false);

/// Register [`after_fork_in_child`] once: by the constructor (also when the automatic profile
/// is off: "profiling remains on in both child and parent after a fork" for the programming
/// interfaces), or, where no constructor ran (the rlib linked into a test), by the first
/// programming interface call.
fn hook_fork() -> bool {
    FORK_HOOKED.swap(true, Ordering::AcqRel) || sys::at_fork_child(after_fork_in_child)
}

/// The sampling clock's nominal rate (`PROFIL_HZ`).
pub(crate) fn nominal_hz() -> u32 {
    NOMINAL_HZ.load(Ordering::Relaxed)
}

/// Did we stop our clock because the program arms `ITIMER_PROF` itself?
pub(crate) fn stood_aside() -> bool {
    STOOD_ASIDE.load(Ordering::Acquire)
}

/// Make sure a sampling clock runs (for the programming interfaces, which work even when the
/// automatic profile is off): start one at the configured rate if none does.
pub(crate) fn ensure_clock() -> Result<(), core::ffi::c_int> {
    if timer::running().is_some() {
        return Ok(());
    }
    if UNDER_VALGRIND.load(Ordering::Relaxed) {
        return Err(libc::ENOTSUP);
    }
    let _ = hook_fork();
    let choice = match TIMER_CHOICE.load(Ordering::Relaxed) {
        c if c == config::TimerChoice::Itimer as u8 => config::TimerChoice::Itimer,
        c if c == config::TimerChoice::Perf as u8 => config::TimerChoice::Perf,
        _ => config::TimerChoice::Auto,
    };
    // The CPU-time timer's signal is SIGPROF: where the program runs ITIMER_PROF itself (its
    // first call may come from its own SIGPROF handler), ours would take its ticks (profil(2)
    // on Linux "cannot be used together with ITIMER_PROF").
    if choice == config::TimerChoice::Itimer && sys::profiling_timer_armed() {
        return Err(libc::EBUSY);
    }
    match timer::start(
        choice,
        NOMINAL_HZ.load(Ordering::Relaxed),
        handler::on_sample,
        |_| {},
    ) {
        Ok(Backend::Itimer) if sys::profiling_timer_armed() => {
            timer::stop();
            Err(libc::EBUSY)
        }
        Ok(_) => Ok(()),
        Err(e) => Err(if e.itimer != 0 { e.itimer } else { e.perf }),
    }
}

/// Resume (`true`) or pause counting samples into the histogram, like BSD `moncontrol`: the
/// clock keeps running (paused samples still measure the achieved rate, so the seconds of the
/// counted region stay right). Returns whether counting was on before.
pub fn set_counting(on: bool) -> bool {
    !hist::set_paused(!on)
}

/// The rate to record: samples per CPU-second actually achieved, or the requested rate when
/// there is nothing to measure (no samples or no CPU time).
pub fn achieved_rate(samples: u64, cpu_ns: u64, nominal: u32) -> u32 {
    if samples == 0 || cpu_ns == 0 {
        return nominal.max(1);
    }
    let rate = samples as f64 * 1e9 / cpu_ns as f64 + 0.5;
    (rate as u32).max(1) // `as` saturates
}

/// Why the profile is being written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ending {
    /// `profil_rt_finish()` called by the program.
    Call,
    /// `exit` (our exit handler or `.fini_array`).
    Exit,
    /// A terminating signal at its default action ([`on_terminate`]).
    Signal,
    /// An exec wrapper.
    Exec,
    /// The program is about to install a seccomp filter.
    Sandbox,
}

/// The thread writing the profile now (0: none).
static WRITER_TID: AtomicU32 = AtomicU32::new(0);
/// The profile was written (or is being written) on the way out of the process.
static EXITING: AtomicBool = AtomicBool::new(false);
/// How long a thread that would end the process waits for another thread's write to finish,
/// and then for that thread's exit to end the process, in milliseconds each (bounds for a
/// write stuck on a hung file system, not expected durations).
const WRITE_WAIT_MS: u32 = 10_000;

/// Stop sampling and write the profile. Runs once per process (later calls, and calls from a
/// process that shares our memory under another pid, do nothing); never changes the exit status.
pub fn finish() {
    finish_as(Ending::Call);
}

/// [`finish`], for the given reason.
///
/// While the files are written every asynchronous signal is held in the writing thread: a
/// terminating signal, or a handler of the program's that calls `exit`, runs once the files
/// are complete (then ends the process as it would have). Another thread that would end the
/// process meanwhile (a terminating signal delivered to it, or its own `exit`) waits for the
/// write to finish; if the write is part of an exit already under way, it then waits for that
/// exit to end the process, as glibc 2.41 makes a second `exit` wait for the first: a profile
/// is written whole or not at all, no temporary is left behind, and the exit status is the
/// exit's that was under way.
///
/// Once the profile is written this makes no system call (a seccomp filter may allow none).
fn finish_as(ending: Ending) {
    if FINISHED.load(Ordering::Acquire) {
        wait_for_writer(ending);
        return;
    }
    let Some(backend) = backend() else { return };
    if !owner() {
        return;
    }
    let me = sys::gettid();
    if WRITER_TID
        .compare_exchange(0, me, Ordering::AcqRel, Ordering::Acquire)
        .is_err()
    {
        wait_for_writer(ending);
        return;
    }
    if FINISHED.swap(true, Ordering::AcqRel) {
        WRITER_TID.store(0, Ordering::Release);
        return;
    }
    if matches!(ending, Ending::Exit | Ending::Signal) {
        EXITING.store(true, Ordering::Release);
    }
    let mask = sys::block_async_signals();
    on_writer_stack(|| write_profile(backend, ending));
    WRITER_TID.store(0, Ordering::Release);
    sys::restore_signal_mask(&mask);
}

/// How many times [`on_exit`] is registered (see [`start`]): up to this many threads (plus
/// the one that runs `.fini_array`) may call `exit` at once without ending the process during
/// the write, under a glibc that does not make a second `exit` wait (before 2.41).
const EXIT_ENTRIES: usize = 8;

/// The top of the writer stack ([`WRITER_STACK_BYTES`], mapped in the constructor; 0: none).
static WRITER_STACK: AtomicUsize = AtomicUsize::new(0);
/// The writer stack's size: six times what writing the profile was measured to need (42,864
/// bytes of a pattern-filled stack touched, the most over the default settings, `PROFIL_STACKS=0`,
/// pcsample mode, `PROFIL_RANGES=exe`, the BSD format, and a warning). Reserved address space
/// (`MAP_NORESERVE`) with a guard page below, touched only when the profile is written.
const WRITER_STACK_BYTES: usize = 256 * 1024;

/// Run `f` (writing the profile) on the writer stack, so that the exiting thread's own stack —
/// a thread's 16 KiB, a `SIGSTKSZ` alternate stack a signal handler runs on — needs only what
/// its call into us takes. Only the thread that won [`WRITER_TID`] gets here, so the stack is
/// never used twice at once. Without a writer stack (it could not be mapped), on the
/// caller's stack.
fn on_writer_stack<F: FnOnce()>(f: F) {
    extern "C" fn trampoline<F: FnOnce()>(arg: *mut core::ffi::c_void) {
        // SAFETY: `arg` is the `Option<F>` below, alive until run_on_stack returns.
        if let Some(f) = unsafe { (*(arg as *mut Option<F>)).take() } {
            f();
        }
    }
    let top = WRITER_STACK.load(Ordering::Relaxed);
    if top == 0 {
        return f();
    }
    let mut slot = Some(f);
    // SAFETY: `top` ends a stack of our own that only the writer (this thread, see
    // WRITER_TID) runs on; the runtime is built with panic=abort, so nothing unwinds.
    unsafe {
        sys::run_on_stack(
            top,
            trampoline::<F>,
            &mut slot as *mut Option<F> as *mut core::ffi::c_void,
        )
    };
}

/// Another thread is (or was) writing the profile: a thread on its way out of the process waits
/// for the write, and then, if the write belongs to an exit under way, for that exit (see
/// [`finish_as`]). Makes no system call when no write is in progress.
fn wait_for_writer(ending: Ending) {
    if !matches!(ending, Ending::Exit | Ending::Signal) {
        return;
    }
    let writer = WRITER_TID.load(Ordering::Acquire);
    if writer == 0 || writer == sys::gettid() {
        return;
    }
    for _ in 0..WRITE_WAIT_MS {
        if WRITER_TID.load(Ordering::Acquire) == 0 {
            break;
        }
        sys::sleep_ms(1);
    }
    if EXITING.load(Ordering::Acquire) {
        for _ in 0..WRITE_WAIT_MS {
            sys::sleep_ms(1);
        }
    }
}

fn write_profile(backend: Backend, ending: Ending) {
    // An explicit profil()/pcsample() in progress goes on after the automatic profile is
    // written: the clock keeps running for it.
    if !api::in_use() {
        timer::stop();
    }
    hist::set_recording(false);
    pcmode::stop();
    let end = match END_CPU_NS.load(Ordering::Relaxed) {
        0 => sys::cpu_time_ns(backend.counts_system_time()),
        t => t,
    };
    let cpu = end.saturating_sub(START_CPU_NS.load(Ordering::Relaxed));
    let achieved = achieved_rate(hist::samples(), cpu, NOMINAL_HZ.load(Ordering::Relaxed));
    // Still the achieved rate (see the crate docs: the nominal one is in the manifest).
    let rate = achieved;
    let Some(layout) = hist::Layout::new(
        LAYOUT_LO.load(Ordering::Relaxed),
        LAYOUT_HI.load(Ordering::Relaxed),
        LAYOUT_SCALE.load(Ordering::Relaxed),
    ) else {
        return;
    };
    let format = if FORMAT_BSD.load(Ordering::Relaxed) {
        Format::Bsd
    } else {
        Format::Gnu
    };
    if timer::clock_taken() {
        warn(b"profil-rt: the program closed the sampling clock's descriptor; the samples after that are missing");
    }
    let dest = Destination {
        out: OUT.load(),
        prefix: PREFIX.load(),
        format,
        root: lineage::is_root(),
        seq: lineage::sequence(),
    };
    // A process image that took no sample writes nothing, unless it is the root at its exit
    // (glibc's gmon always writes there) or the program asked (`profil_rt_finish`): a forked
    // child that only runs exec, a wrapper that replaces itself ([`lineage`]).
    let wanted = ending == Ending::Call || (dest.root && ending != Ending::Exec);
    if hist::samples() == 0 && !wanted {
        return;
    }
    warn_tick_limited(backend, hist::samples(), achieved);
    if pcmode::enabled_once() {
        finish_pcsample(&dest, rate);
        return;
    }
    let counters = hist::counters();
    let profile = output::Profile {
        layout,
        counters,
        rate,
        arcs: Some(EXE_BIAS.load(Ordering::Relaxed)),
    };
    let mut written = output::write(&dest, &profile);
    stacks::report(warn);
    // The side files; a set that cannot be written whole is taken back (a full disk).
    let mut whole = true;
    if let Some((name, _)) = &written {
        if stacks::write_file() {
            whole &= output::write_stacks(name.as_bytes());
        } else {
            output::remove_stale_stacks(name.as_bytes());
        }
    }
    if let (Some((name, _)), true) = (&written, objects::enabled()) {
        let (mut p, mut id) = ([0u8; 4096], [0u8; objects::MAX_BUILD_ID]);
        whole &= output::write_objects(
            name.as_bytes(),
            format,
            rate,
            &exe_info(layout, &mut p, &mut id),
            &process_info(backend, achieved),
        );
    }
    if let (Some((name, _)), false) = (&written, whole) {
        output::withdraw(name.as_bytes());
        let mut m = buf::FixedBuf::<4400>::new();
        let _ = writeln!(
            m,
            "profil-rt: no profile written: {} and its side files could not all be written, so none is kept",
            buf::Lossy(name.as_bytes())
        );
        sys::write_stderr(m.as_bytes());
        written = None;
    }
    if let Some((_, numbered)) = &written {
        lineage::wrote(*numbered);
    }
    if written.is_some() && format == Format::Bsd {
        let clipped = output::bsd_clipped(counters);
        if clipped > 0 {
            let mut m = buf::FixedBuf::<200>::new();
            let _ = write!(
                m,
                "profil-rt: the 4.4BSD format holds at most 65535 samples per bin; {clipped} samples were clipped"
            );
            warn(m.as_bytes());
        }
    }
}

/// The kernel tick rates (`CONFIG_HZ`) Linux offers.
const TICK_RATES: [u32; 4] = [100, 250, 300, 1000];

/// The samples per CPU-second the clock gives when none is lost. perf: the rate asked for.
/// The itimer fires at most once per kernel tick, and a process cannot read `CONFIG_HZ`: when
/// the rate achieved is well below the one asked for, the tick is taken to be the lowest
/// `CONFIG_HZ` at or above 95% of the achieved rate (samples lost for other reasons lower the
/// achieved rate, never raise it), capped at the rate asked for.
pub fn nominal_rate(backend: Backend, asked: u32, samples: u64, achieved: u32) -> u32 {
    if backend == Backend::Perf
        || samples < RATE_EVIDENCE
        || u64::from(achieved) * 10 >= u64::from(asked) * 9
    {
        return asked;
    }
    let floor = u64::from(achieved) * 95 / 100;
    TICK_RATES
        .iter()
        .copied()
        .find(|&t| u64::from(t) >= floor)
        .unwrap_or(achieved)
        .min(asked)
}

/// What the manifest says about this process ([`gmon::manifest::Process`]).
fn process_info(backend: Backend, achieved: u32) -> gmon::manifest::Process {
    let (user, system) = sys::cpu_times_ns();
    let samples = hist::samples();
    gmon::manifest::Process {
        pid: Some(sys::getpid()),
        ppid: Some(sys::getppid()),
        clock: Some(match backend {
            Backend::Perf => gmon::manifest::Clock::Perf,
            Backend::Itimer => gmon::manifest::Clock::Itimer,
        }),
        nominal_hz: Some(nominal_rate(
            backend,
            NOMINAL_HZ.load(Ordering::Relaxed),
            samples,
            achieved,
        )),
        samples: Some(samples),
        cpu_user_ns: Some(user.saturating_sub(START_USER_NS.load(Ordering::Relaxed))),
        cpu_system_ns: Some(system.saturating_sub(START_SYS_NS.load(Ordering::Relaxed))),
        threads_without_clock: Some(if backend == Backend::Perf {
            timer::threads_without_clock()
        } else {
            0
        }),
        clock_closed: Some(timer::clock_taken()),
    }
}

/// The fewest samples from which the achieved rate says something about the clock (a process
/// that runs for a few ticks only may be unlucky).
const RATE_EVIDENCE: u64 = 50;

/// `PROFIL_TIMER=itimer` (or the fallback) with a `PROFIL_HZ` above what the kernel tick allows
/// (`CONFIG_HZ`, often 250): the clock silently gave fewer samples. Measured, not assumed (the
/// tick rate is not visible to a process): one line at exit when the rate achieved is below
/// three quarters of the one asked for, from the first process of a tree only ([`lineage`]),
/// so that a shell or make running many programs says it once.
fn warn_tick_limited(backend: Backend, samples: u64, achieved: u32) {
    let asked = NOMINAL_HZ.load(Ordering::Relaxed);
    if backend != Backend::Itimer
        || stood_aside()
        || !lineage::is_root()
        || samples < RATE_EVIDENCE
        || u64::from(achieved) * 4 >= u64::from(asked) * 3
    {
        return;
    }
    let mut m = buf::FixedBuf::<300>::new();
    let _ = write!(
        m,
        "profil-rt: PROFIL_TIMER=itimer took about {achieved} samples per CPU-second, not the {asked} of PROFIL_HZ: the CPU-time timer fires at most once per kernel tick; the perf clock (PROFIL_TIMER=perf) gives higher rates"
    );
    warn(m.as_bytes());
}

/// The executable's entry for a manifest or pcsample object list (path, build-id, range,
/// bias) into the given buffers.
fn exe_info<'a>(
    layout: hist::Layout,
    path: &'a mut [u8; 4096],
    id: &'a mut [u8; objects::MAX_BUILD_ID],
) -> output::ExeInfo<'a> {
    let exe_len = sys::exe_path(path);
    let id_len = objects::exe_build_id(id);
    output::ExeInfo {
        layout,
        bias: EXE_BIAS.load(Ordering::Relaxed),
        path: &path[..exe_len],
        build_id: &id[..id_len],
    }
}

/// `PROFIL_MODE=pcsample` at exit: the objects loaded now are registered (those loaded late
/// included), the samples written, and a full buffer reported.
fn finish_pcsample(dest: &Destination, rate: u32) {
    objects::scan();
    let layout = hist::Layout::new(
        LAYOUT_LO.load(Ordering::Relaxed),
        LAYOUT_HI.load(Ordering::Relaxed),
        LAYOUT_SCALE.load(Ordering::Relaxed),
    );
    let Some(layout) = layout else { return };
    let (mut p, mut id) = ([0u8; 4096], [0u8; objects::MAX_BUILD_ID]);
    let exe = exe_info(layout, &mut p, &mut id);
    let written = output::write_pcsample(dest, rate, &exe);
    if let Some(numbered) = written {
        lineage::wrote(numbered);
    }
    if written.is_some() && pcmode::full() {
        let mut m = buf::FixedBuf::<200>::new();
        let _ = write!(
            m,
            "profil-rt: the pcsample buffer was full (PROFIL_PCSAMPLES); {} samples were not recorded",
            pcmode::dropped()
        );
        warn(m.as_bytes());
    }
}

/// The exported C entry points, only in the artifacts ([`cabi`]).
#[cfg(all(feature = "artifact", not(test)))]
mod cabi;

#[cfg(test)]
mod tests {
    use super::achieved_rate;

    #[test]
    fn the_itimer_nominal_rate_is_the_tick_when_the_tick_limits_it() {
        use super::{nominal_rate, Backend};
        assert_eq!(nominal_rate(Backend::Perf, 1000, 5000, 400), 1000);
        assert_eq!(nominal_rate(Backend::Itimer, 1000, 5000, 246), 250);
        assert_eq!(nominal_rate(Backend::Itimer, 1000, 5000, 257), 250);
        assert_eq!(nominal_rate(Backend::Itimer, 1000, 5000, 290), 300);
        assert_eq!(nominal_rate(Backend::Itimer, 1000, 5000, 99), 100);
        assert_eq!(nominal_rate(Backend::Itimer, 5000, 5000, 990), 1000);
        assert_eq!(nominal_rate(Backend::Itimer, 200, 5000, 199), 200);
        assert_eq!(nominal_rate(Backend::Itimer, 200, 5000, 150), 200);
        assert_eq!(nominal_rate(Backend::Itimer, 1000, 10, 250), 1000);
    }

    #[test]
    fn achieved_rate_is_samples_per_cpu_second() {
        assert_eq!(achieved_rate(2000, 2_000_000_000, 4000), 1000);
        assert_eq!(achieved_rate(499, 2_000_000_000, 1000), 250);
        assert_eq!(achieved_rate(0, 2_000_000_000, 1000), 1000);
        assert_eq!(achieved_rate(5, 0, 0), 1);
        assert_eq!(achieved_rate(u64::MAX, 1, 10), u32::MAX);
    }
}
