//! fib: call-heavy Rust workload for overhead.sh (the twin of fib.c). Build with
//! `rustc -O fib.rs`. Usage: `fib N REPS` (sums fib(N) REPS times). Prints the sum on stdout and
//! its own CPU time on stderr as `self-cpu USER SYS` (getrusage, declared by hand: a plain rustc
//! build has no libc crate; the layout is Linux's on 64-bit targets).

use std::hint::black_box;

#[inline(never)]
fn fib(n: u32) -> u64 {
    if n < 2 {
        n as u64
    } else {
        fib(n - 1) + fib(n - 2)
    }
}

/// `struct rusage` on 64-bit Linux: two `timeval`s then 14 `long`s.
#[repr(C)]
struct Rusage {
    utime: [i64; 2],
    stime: [i64; 2],
    rest: [i64; 14],
}

extern "C" {
    fn getrusage(who: i32, usage: *mut Rusage) -> i32;
}

fn print_self_cpu() {
    let mut ru = Rusage {
        utime: [0; 2],
        stime: [0; 2],
        rest: [0; 14],
    };
    // SAFETY: `ru` is a writable struct with the kernel's layout; RUSAGE_SELF is 0.
    if unsafe { getrusage(0, &mut ru) } == 0 {
        eprintln!(
            "self-cpu {}.{:06} {}.{:06}",
            ru.utime[0], ru.utime[1], ru.stime[0], ru.stime[1]
        );
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let n: u32 = args.next().and_then(|a| a.parse().ok()).unwrap_or(32);
    let reps: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(1);
    let mut sum: u64 = 0;
    for _ in 0..reps {
        // black_box: the optimiser must not see that every call is the same.
        sum = sum.wrapping_add(fib(black_box(n)));
    }
    println!("{sum}");
    print_self_cpu();
}
