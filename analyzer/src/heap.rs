//! The analyzer's memory: glibc's `malloc`, with its heap on transparent huge pages.
//!
//! A report over a large program builds tables of hundreds of megabytes once and reads them
//! once; measured with `perf stat -e page-faults` at 200,000 functions, 40,000 page faults
//! (one per 4 KiB page touched) took 15-30% of `--gprof -b -q`, `-A` and the file-spec
//! modes. On Linux, where the system's huge-page policy is `madvise` (the default of most
//! distributions), memory asked for with `MADV_HUGEPAGE` is faulted 2 MiB at a time: with
//! this allocator `-b -q` takes 7,800 faults instead of 40,000, `-b -p -l` 78,000 instead of
//! 211,000 (the rest are the input files' pages, which stay mapped 4 KiB at a time). What
//! [`HugeHeap`] changes, at the start of the process ([`HugeHeap::setup`]):
//!
//! * `malloc` grows its heap 32 MiB at a time and does not give freed memory back to the
//!   system while the process runs (it is short-lived); large blocks keep their own mappings
//!   (which `realloc` grows without a copy);
//! * each time the heap has grown, the new part is advised `MADV_HUGEPAGE`; so is each block
//!   of 2 MiB or more, in the heap or mapped.
//!
//! Everything else is glibc's allocator, unchanged. Where huge pages are off (`never`) the
//! advice does nothing; on other systems [`HugeHeap`] is the system allocator. The memory
//! held at the peak does not grow by more than a partly used huge page per region (peak RSS
//! is in BENCHMARKS.md beside gprof's).

use std::alloc::{GlobalAlloc, Layout, System};

/// The global allocator of `profil-report` (see the module doc).
pub struct HugeHeap;

#[cfg(target_os = "linux")]
mod imp {
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// A huge page (x86_64, aarch64 with 4 KiB pages).
    const HUGE: usize = 2 << 20;
    /// The heap's growth step.
    const STEP: usize = 32 << 20;

    /// The end of the heap range advised so far (0: not set up, no advice).
    static ADVISED: AtomicUsize = AtomicUsize::new(0);

    pub fn setup() {
        // SAFETY: mallopt only sets allocator parameters (a refused value leaves the old one);
        // sbrk(0) only reads the current break.
        unsafe {
            libc::mallopt(libc::M_TOP_PAD, STEP as libc::c_int);
            libc::mallopt(libc::M_TRIM_THRESHOLD, libc::c_int::MAX);
            let brk = libc::sbrk(0) as usize;
            if brk != usize::MAX {
                ADVISED.store(brk, Ordering::Relaxed);
            }
        }
    }

    /// Advise `[start, end)`, cut to whole huge pages.
    fn advise(start: usize, end: usize) {
        let lo = start.next_multiple_of(HUGE);
        let hi = end & !(HUGE - 1);
        if lo < hi {
            // SAFETY: [lo, hi) lies within memory the allocator has mapped for us (the heap's
            // new part, or a block it returned); MADV_HUGEPAGE changes no contents and at
            // worst fails (EINVAL where huge pages are not built in), which is ignored.
            unsafe {
                libc::madvise(lo as *mut libc::c_void, hi - lo, libc::MADV_HUGEPAGE);
            }
        }
    }

    /// After an allocation of `size` bytes at `p`: advise the heap's new part, or the block.
    pub fn after(p: *mut u8, size: usize) {
        if p.is_null() {
            return;
        }
        if size >= HUGE {
            advise(p as usize, p as usize + size);
            return;
        }
        let done = ADVISED.load(Ordering::Relaxed);
        if done == 0 {
            return;
        }
        // SAFETY: sbrk(0) only reads the current break (no system call in glibc).
        let brk = unsafe { libc::sbrk(0) } as usize;
        if brk > done
            && ADVISED
                .compare_exchange(done, brk, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
        {
            advise(done, brk);
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    pub fn setup() {}
    pub fn after(_: *mut u8, _: usize) {}
}

impl HugeHeap {
    /// Set glibc's allocator up as the module doc says; call once, first thing in `main`.
    pub fn setup() {
        imp::setup();
    }
}

// SAFETY: every call is the system allocator's own, with its contract; `imp::after` only
// advises the kernel about memory the allocator has mapped.
unsafe impl GlobalAlloc for HugeHeap {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract is GlobalAlloc::alloc's.
        let p = unsafe { System.alloc(layout) };
        imp::after(p, layout.size());
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as for alloc.
        let p = unsafe { System.alloc_zeroed(layout) };
        imp::after(p, layout.size());
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract: ptr came from this allocator (System's) with layout.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller's contract is GlobalAlloc::realloc's.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        imp::after(p, new_size);
        p
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    /// The `VmFlags` of the mapping that holds `addr` (from /proc/self/smaps).
    fn flags_at(addr: usize) -> Option<String> {
        let smaps = std::fs::read_to_string("/proc/self/smaps").ok()?;
        let mut inside = false;
        for line in smaps.lines() {
            let range = line
                .split_whitespace()
                .next()
                .and_then(|r| r.split_once('-'));
            match range.map(|(a, b)| (usize::from_str_radix(a, 16), usize::from_str_radix(b, 16))) {
                Some((Ok(lo), Ok(hi))) => inside = lo <= addr && addr < hi,
                _ if inside && line.starts_with("VmFlags:") => return Some(line.to_owned()),
                _ => {}
            }
        }
        None
    }

    #[test]
    fn blocks_keep_their_bytes_and_large_ones_are_advised_onto_huge_pages() {
        HugeHeap::setup();
        let heap = HugeHeap;
        for size in [24usize, 5000, 3 << 20] {
            let layout = Layout::from_size_align(size, 16).unwrap();
            // SAFETY: a non-zero size; the block is written within its size, grown with the
            // same layout, and freed once with the layout it has then.
            unsafe {
                let p = heap.alloc(layout);
                assert!(!p.is_null());
                for i in 0..size {
                    *p.add(i) = (i % 251) as u8;
                }
                let bigger = size * 7;
                let q = heap.realloc(p, layout, bigger);
                assert!(!q.is_null());
                for i in 0..size {
                    assert_eq!(*q.add(i), (i % 251) as u8, "byte {i} of {size}");
                }
                // (A kernel without transparent huge pages refuses the advice.)
                let thp = std::path::Path::new("/sys/kernel/mm/transparent_hugepage").exists();
                if bigger >= 4 << 20 && thp {
                    // A whole huge page inside the block carries the advice ("hg").
                    let inner = (q as usize).next_multiple_of(2 << 20);
                    let flags = flags_at(inner).expect("the block is mapped");
                    assert!(flags.split_whitespace().any(|f| f == "hg"), "{flags}");
                }
                heap.dealloc(q, Layout::from_size_align(bigger, 16).unwrap());
            }
        }
    }
}
