//! How the runtime object links into a program, dynamic or static, with one set of words.
//!
//! The object (`profil_rt.o`, analyzer/build.rs) defines libc functions of its own: the exec
//! family, `syscall`, `prctl`, `setitimer`, the signal calls ([`crate::signals`]) and
//! `pthread_create` ([`crate::threads`]). In a dynamic executable each of them interposes
//! libc's for the program and its shared libraries (the linker exports a definition that a
//! shared library on the link line also defines), and the runtime reaches libc's with
//! `dlsym(RTLD_NEXT)`.
//!
//! A static link is where they can clash. libc.a defines most of these names weakly (a
//! strong `__sigaction` with a weak `sigaction`, ...), and a strong definition of ours
//! replaces them wherever the object sits on the line. But [`STRONG_IN_LIBC_A`] are strong in
//! libc.a too, and a linker that scans libc.a before our object (rustc puts `-C link-arg`
//! words after the libraries; a Rust `+crt-static` program whose std calls `execvp` and
//! `syscall`) has linked libc's by the time it reads ours: two strong definitions. So:
//!
//! * the object defines those names **weak** (`objcopy --weaken-symbol`), each with a second,
//!   strong name `profil_rt_<name>`: placed before libc.a (C: `cc prog.c profil_rt.o`) ours
//!   are the definitions and libc.a's are never pulled in; placed after, libc.a's win the
//!   name without a clash;
//! * [`LINK_FLAGS`] (`--wrap=<name>,--defsym=__wrap_<name>=profil_rt_<name>` for each) send
//!   every call the link's files make to ours in either case. GNU ld, gold and rust-lld take
//!   them; in a dynamic link they change nothing but the route of the program's own calls.
//!
//! libc's `pthread_create` in a static executable is libc.a's `__pthread_create` (its
//! `pthread_create` is a weak alias that ours replaces); see [`crate::threads`].
//!
//! The linker has to find the libc.a members the object itself needs. Where the object comes
//! first (C) or the linker resolves regardless of order (rust-lld, rustc's default) it does.
//! GNU ld scans each archive once, in order: for a Rust `+crt-static` program linked with
//! GNU ld (`-C linker-features=-lld`) the object comes after libc.a, and the members only the
//! runtime calls (`getrusage`, `timer_create`, `nanosleep`, ...) are missing; adding `-lc`
//! after it links, but the static-pie it makes fails in libc's start-up (a TLS relocation of
//! libc.a's `dlerror` left for run time). Not supported: use rust-lld.

/// The runtime's entry points that libc.a also defines strongly: weak in the object, each with
/// a strong second name `profil_rt_<name>` (runtime/src/cabi.rs).
pub const STRONG_IN_LIBC_A: &[&str] = &[
    "syscall",
    "execv",
    "execl",
    "execle",
    "execlp",
    "execvp",
    "fexecve",
    "sigset",
    "__sysv_signal",
];

/// The linker options (one `-Wl,` word for a C compiler driver) that send a program's calls
/// of [`STRONG_IN_LIBC_A`] to the runtime's second names, whichever definition the link kept.
pub const LINK_FLAGS: &str = "-Wl,\
     --wrap=syscall,--defsym=__wrap_syscall=profil_rt_syscall,\
     --wrap=execv,--defsym=__wrap_execv=profil_rt_execv,\
     --wrap=execl,--defsym=__wrap_execl=profil_rt_execl,\
     --wrap=execle,--defsym=__wrap_execle=profil_rt_execle,\
     --wrap=execlp,--defsym=__wrap_execlp=profil_rt_execlp,\
     --wrap=execvp,--defsym=__wrap_execvp=profil_rt_execvp,\
     --wrap=fexecve,--defsym=__wrap_fexecve=profil_rt_fexecve,\
     --wrap=sigset,--defsym=__wrap_sigset=profil_rt_sigset,\
     --wrap=__sysv_signal,--defsym=__wrap___sysv_signal=profil_rt___sysv_signal";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_link_flags_wrap_every_name_strong_in_libc_a() {
        let want: Vec<String> = STRONG_IN_LIBC_A
            .iter()
            .map(|n| format!("--wrap={n},--defsym=__wrap_{n}=profil_rt_{n}"))
            .collect();
        assert_eq!(LINK_FLAGS, format!("-Wl,{}", want.join(",")));
    }
}
