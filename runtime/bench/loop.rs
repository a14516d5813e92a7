//! loop: loop-heavy Rust workload for overhead.sh (the twin of loop.c). Build with
//! `rustc -O loop.rs`. Usage: `loop UNITS` (one unit is 2^22 iterations, about 10 ms). Prints a
//! checksum on stdout and its own CPU time on stderr as `self-cpu USER SYS` (getrusage, declared
//! by hand: a plain rustc build has no libc crate; the layout is Linux's on 64-bit targets).

use std::hint::black_box;

#[inline(never)]
fn churn(mut x: u64, n: u64) -> u64 {
    for i in 0..n {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x = x.wrapping_add(i ^ (x >> 32));
    }
    x
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
    let units: u64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(200);
    let mut x: u64 = 88172645463325252;
    for _ in 0..units {
        x = churn(black_box(x), 1 << 22);
    }
    println!("{x:016x}");
    print_self_cpu();
}
