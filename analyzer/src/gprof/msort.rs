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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stable_and_sorted() {
        let mut v: Vec<(u32, u32)> = (0..200).map(|i| ((i * 7919) % 13, i)).collect();
        msort(&mut v, |a, b| a.0.cmp(&b.0));
        for w in v.windows(2) {
            assert!(w[0].0 < w[1].0 || (w[0].0 == w[1].0 && w[0].1 < w[1].1));
        }
    }
}
