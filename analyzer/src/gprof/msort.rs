//! glibc's `qsort`, which is a top-down merge sort (`msort_with_tmp`).
//!
//! gprof's comparators are not always total orders (NaN times, cycle headers without
//! names), and the output depends on how ties fall. Reproducing glibc's exact merge order
//! gives the same permutation for *any* comparator, where `slice::sort_by` could differ
//! or even panic on an inconsistent order.

use std::cmp::Ordering;

/// Sort `v` exactly as glibc's `qsort` (merge sort) does with comparator `cmp`.
pub fn msort<T: Copy>(v: &mut [T], mut cmp: impl FnMut(&T, &T) -> Ordering) {
    if v.len() <= 1 {
        return;
    }
    let mut tmp: Vec<T> = Vec::with_capacity(v.len());
    sort_rec(v, &mut tmp, &mut cmp);
}

fn sort_rec<T: Copy>(v: &mut [T], tmp: &mut Vec<T>, cmp: &mut impl FnMut(&T, &T) -> Ordering) {
    let n = v.len();
    if n <= 1 {
        return;
    }
    let n1 = n / 2;
    sort_rec(&mut v[..n1], tmp, cmp);
    sort_rec(&mut v[n1..], tmp, cmp);
    tmp.clear();
    let (mut i, mut j) = (0, n1);
    while i < n1 && j < n {
        // glibc takes the left element when cmp(left, right) <= 0.
        if cmp(&v[i], &v[j]) != Ordering::Greater {
            tmp.push(v[i]);
            i += 1;
        } else {
            tmp.push(v[j]);
            j += 1;
        }
    }
    tmp.extend_from_slice(&v[i..n1]);
    // Whatever is left of the right half is already in place.
    let done = tmp.len();
    v[..done].copy_from_slice(tmp);
}

/// A byte string that orders like `&[u8]` (and so like `strcmp` on names without NUL), but
/// settles most comparisons on its first 8 bytes, kept as a big-endian integer: sorting
/// 60,000 names like `f12345` then costs no `memcmp` calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NameKey<'a> {
    head: u64,
    name: &'a [u8],
}

impl<'a> NameKey<'a> {
    /// The key of `name`.
    pub fn new(name: &'a [u8]) -> Self {
        let mut b = [0u8; 8];
        let k = name.len().min(8);
        b[..k].copy_from_slice(&name[..k]);
        NameKey {
            head: u64::from_be_bytes(b),
            name,
        }
    }
}

impl Ord for NameKey<'_> {
    fn cmp(&self, other: &Self) -> Ordering {
        // Heads differ at the first differing byte of the zero-padded prefixes, which is
        // where the slices differ too (a zero pad only sorts a prefix first, as `[u8]` does).
        // Line symbols of one function share one name slice: no memcmp for those.
        self.head.cmp(&other.head).then_with(|| {
            if std::ptr::eq(self.name, other.name) {
                Ordering::Equal
            } else {
                self.name.cmp(other.name)
            }
        })
    }
}

impl PartialOrd for NameKey<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// The rank of each of `names` in byte order (equal names share a rank; ranks are dense from
/// 0), so that a sort can compare integers instead of strings. Neighbours with the same slice
/// (the line symbols of one function) are ranked once: only the distinct runs are sorted.
pub fn name_ranks<'a>(names: impl Iterator<Item = &'a [u8]>) -> Vec<u32> {
    // Sized up front: grown by doubling, the tables of a million line symbols would be copied
    // and faulted in again at each step.
    let n = names.size_hint().0;
    let mut run_of: Vec<u32> = Vec::with_capacity(n);
    let mut runs: Vec<NameKey<'a>> = Vec::with_capacity(n);
    for name in names {
        if !runs.last().is_some_and(|r| std::ptr::eq(r.name, name)) {
            runs.push(NameKey::new(name));
        }
        run_of.push(runs.len() as u32 - 1);
    }
    let mut order: Vec<u32> = (0..runs.len() as u32).collect();
    order.sort_unstable_by(|&l, &r| runs[l as usize].cmp(&runs[r as usize]));
    let mut rank_of_run = vec![0u32; runs.len()];
    let mut rank = 0u32;
    for (k, w) in order.iter().enumerate() {
        if k > 0 && runs[order[k - 1] as usize] != runs[*w as usize] {
            rank += 1;
        }
        rank_of_run[*w as usize] = rank;
    }
    run_of.iter().map(|&r| rank_of_run[r as usize]).collect()
}

/// A finite `f64` as a `u64` in the same order (`-0.0` and `0.0` alike).
pub fn ordered_bits(x: f64) -> u64 {
    let bits = if x == 0.0 { 0 } else { x.to_bits() };
    match bits >> 63 {
        1 => !bits,
        _ => bits | 1 << 63,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_keys_order_like_byte_strings() {
        let mut rng = super::super::TestRng(0x9e37_79b9_7f4a_7c15u64);
        let mut next = move || rng.next();
        let alphabet = [0u8, 1, b'a', b'b', b'f', b'1', 0xff];
        let words: Vec<Vec<u8>> = (0..2000)
            .map(|_| {
                let len = (next() % 12) as usize;
                (0..len).map(|_| alphabet[(next() % 7) as usize]).collect()
            })
            .collect();
        for l in &words {
            for r in words.iter().step_by(7) {
                assert_eq!(
                    NameKey::new(l).cmp(&NameKey::new(r)),
                    l.cmp(r),
                    "{l:?} {r:?}"
                );
            }
        }
    }

    #[test]
    fn name_ranks_order_like_the_names() {
        let mut rng = super::super::TestRng(0x1234_5678_9abc_def1u64);
        let pool: [&[u8]; 6] = [b"f1", b"f10", b"_f", b"", b"f1", b"abcdefghij"];
        for _ in 0..200 {
            let names: Vec<&[u8]> = (0..rng.below(50))
                .map(|_| pool[rng.below(6) as usize])
                .collect();
            let ranks = name_ranks(names.iter().copied());
            for (i, l) in names.iter().enumerate() {
                for (j, r) in names.iter().enumerate() {
                    assert_eq!(ranks[i].cmp(&ranks[j]), l.cmp(r));
                }
            }
        }
        let xs = [-1e300, -2.5, -0.0, 0.0, 1e-300, 3.0, 1e308];
        for l in xs {
            for r in xs {
                assert_eq!(
                    ordered_bits(l).cmp(&ordered_bits(r)),
                    l.partial_cmp(&r).unwrap()
                );
            }
        }
    }

    #[test]
    fn stable_and_sorted() {
        let mut v: Vec<(u32, u32)> = (0..200).map(|i| ((i * 7919) % 13, i)).collect();
        msort(&mut v, |a, b| a.0.cmp(&b.0));
        for w in v.windows(2) {
            assert!(w[0].0 < w[1].0 || (w[0].0 == w[1].0 && w[0].1 < w[1].1));
        }
    }
}
