//! Issue 22's Rust program, built `rustc -O -g` without forced frame pointers: string building,
//! sorting with a closure, a HashMap and a BTreeMap, called through a few levels of the
//! program's own functions (and std's, which has its own frame-pointer policy).
//! usage: rust-work SCALE — prints a checksum.
use std::collections::{BTreeMap, HashMap};

#[inline(never)]
fn make(seed: &mut u64, n: usize) -> Vec<String> {
    (0..n)
        .map(|_| {
            *seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            format!("key-{}-{}", (*seed >> 40) % 5000, (*seed >> 20) % 97)
        })
        .collect()
}

#[inline(never)]
fn sort(v: &mut [String]) {
    v.sort_by(|a, b| a.len().cmp(&b.len()).then_with(|| a.cmp(b)));
}

#[inline(never)]
fn count(v: &[String]) -> (HashMap<&str, u32>, BTreeMap<u32, usize>) {
    let mut h: HashMap<&str, u32> = HashMap::new();
    for s in v {
        *h.entry(s.as_str()).or_default() += 1;
    }
    let mut b = BTreeMap::new();
    for c in h.values() {
        *b.entry(*c).or_default() += 1;
    }
    (h, b)
}

#[inline(never)]
fn round(seed: &mut u64) -> u64 {
    let mut v = make(seed, 50_000);
    sort(&mut v);
    let (h, b) = count(&v);
    h.len() as u64 + b.len() as u64 + v[0].len() as u64
}

fn main() {
    let scale: u64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(10);
    let mut seed = 12345u64;
    let mut sum = 0u64;
    for _ in 0..scale {
        sum = sum.wrapping_add(round(&mut seed));
    }
    println!("checksum {sum}");
}
