//! `PROFIL_RANGES=all`: histograms for the text of every loaded shared object.
//!
//! The executable keeps its histogram in [`crate::hist`] and its file (`gmon.out`) unchanged.
//! Every other object the loader reports (`dl_iterate_phdr`) with a path gets a slot in a
//! fixed table of [`MAX_OBJECTS`] ranges: its executable segments' *runtime addresses* (for
//! the handler's lookup), its *link-time addresses* (for the file: `gprof LIB FILE` and the
//! analyzer read the histogram against the object's own symbols), its load bias, path and
//! GNU build-id, and its own 4-byte-bin counters in a private anonymous mapping.
//!
//! # Publication, and the handler's side
//!
//! Slots are filled outside the signal handler ([`scan`], under a spin flag so that two
//! threads never fill the same slot), each field stored before the slot count is raised with
//! `Release`. The handler ([`record`]) loads the count with `Acquire` and scans the filled
//! slots with loads only, then does one `fetch_add`: lock-free, allocation-free and
//! async-signal-safe. A slot is never reused or unmapped, so the handler can never see a
//! half-written one or a freed buffer.
//!
//! # What is not covered
//!
//! Objects loaded later are registered by the runtime's `dlopen`/`dlmopen` wrappers right
//! after the real call returns (`crate::exec::dlopen`; the shared object, `LD_PRELOAD`, only:
//! with the linked-in object they are seen at exit only), so they are profiled from then on
//! (their constructors, which run inside `dlopen`, count toward the achieved rate only). Two
//! threads calling `dlopen` at once: the second skips the scan the first is doing, so an
//! object it loaded just after that scan started waits for the next `dlopen` (or, in pcsample
//! mode, the exit). An object unloaded with `dlclose` keeps its slot; another object
//! mapped later at the same addresses is then counted into the first one's histogram (the
//! lookup takes the first match). Objects without a path (the vdso) are not profiled.

use core::ffi::{c_int, c_void};
use core::sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, Ordering};

use crate::hist::{bin_index, Layout};
use crate::sys;

/// The most shared objects profiled at once.
pub const MAX_OBJECTS: usize = 256;
/// The longest path kept (longer ones are cut; the manifest then names a path that does not
/// exist, which the analyzer reports).
pub const MAX_PATH: usize = 4096 - MAX_BUILD_ID;
/// The longest build-id kept.
pub const MAX_BUILD_ID: usize = 64;

#[allow(clippy::declare_interior_mutable_const)]
const Z: AtomicUsize = AtomicUsize::new(0);
#[allow(clippy::declare_interior_mutable_const)]
const Z64: AtomicU64 = AtomicU64::new(0);
#[allow(clippy::declare_interior_mutable_const)]
const ZP: AtomicPtr<AtomicU32> = AtomicPtr::new(core::ptr::null_mut());

static ENABLED: AtomicBool = AtomicBool::new(false);
static COUNT: AtomicUsize = AtomicUsize::new(0);
static SCANNING: AtomicBool = AtomicBool::new(false);
static SCALE: AtomicU32 = AtomicU32::new(crate::config::DEFAULT_SCALE);
// Per slot: what the handler reads...
static RUNTIME_LO: [AtomicUsize; MAX_OBJECTS] = [Z; MAX_OBJECTS];
static SPAN: [AtomicUsize; MAX_OBJECTS] = [Z; MAX_OBJECTS];
static BINS: [AtomicPtr<AtomicU32>; MAX_OBJECTS] = [ZP; MAX_OBJECTS];
static NBINS: [AtomicUsize; MAX_OBJECTS] = [Z; MAX_OBJECTS];
// ...and what the writer needs.
static LINK_LO: [AtomicU64; MAX_OBJECTS] = [Z64; MAX_OBJECTS];
static LINK_HI: [AtomicU64; MAX_OBJECTS] = [Z64; MAX_OBJECTS];
static BIAS: [AtomicU64; MAX_OBJECTS] = [Z64; MAX_OBJECTS];
/// Start of the slot's mapping: `[path (MAX_PATH)][build-id (MAX_BUILD_ID)][bins...]`.
static META: [AtomicPtr<u8>; MAX_OBJECTS] = {
    #[allow(clippy::declare_interior_mutable_const)]
    const N: AtomicPtr<u8> = AtomicPtr::new(core::ptr::null_mut());
    [N; MAX_OBJECTS]
};
static PATH_LEN: [AtomicUsize; MAX_OBJECTS] = [Z; MAX_OBJECTS];
static BUILD_ID_LEN: [AtomicUsize; MAX_OBJECTS] = [Z; MAX_OBJECTS];
/// Objects seen that did not fit the table (reported once at exit).
static DROPPED: AtomicUsize = AtomicUsize::new(0);

/// One page, so that the counters after it are page-aligned (a forked child can discard them).
const META_BYTES: usize = MAX_PATH + MAX_BUILD_ID;

/// Turn shared-object profiling on at profil `scale` and register the objects loaded now.
/// Constructor only.
pub fn enable(scale: u32) {
    SCALE.store(scale, Ordering::Relaxed);
    ENABLED.store(true, Ordering::Release);
    scan();
}

/// Is `PROFIL_RANGES=all` in effect?
pub fn enabled() -> bool {
    ENABLED.load(Ordering::Acquire)
}

/// Count one sample at runtime address `pc` if it lies in a registered object.
/// *Async-signal-safe*: atomic loads over the published slots and one `fetch_add`.
#[inline]
pub fn record(pc: usize) {
    let n = COUNT.load(Ordering::Acquire).min(MAX_OBJECTS);
    let scale = SCALE.load(Ordering::Relaxed);
    for i in 0..n {
        let offset = pc.wrapping_sub(RUNTIME_LO[i].load(Ordering::Relaxed));
        if offset >= SPAN[i].load(Ordering::Relaxed) {
            continue;
        }
        if let Some(idx) = bin_index(offset as u64, scale) {
            if idx < NBINS[i].load(Ordering::Relaxed) as u64 {
                let bins = BINS[i].load(Ordering::Relaxed);
                // SAFETY: slot i was published (COUNT > i, Acquire) after BINS[i] was set to a
                // mapping of NBINS[i] counters that is never unmapped, and idx < NBINS[i].
                unsafe { (*bins.add(idx as usize)).fetch_add(1, Ordering::Relaxed) };
            }
        }
        return;
    }
}

/// Register every loaded object with a path that has no slot yet. Not for the signal handler
/// (it calls `dl_iterate_phdr`, which takes the loader's lock, and maps memory). Concurrent
/// callers skip the scan instead of waiting (the one scanning sees the same objects).
pub fn scan() {
    if !enabled() || SCANNING.swap(true, Ordering::Acquire) {
        return;
    }
    // SAFETY: the callback only reads the dl_phdr_info it is given and writes our statics;
    // `data` is unused.
    unsafe {
        libc::dl_iterate_phdr(Some(scan_callback), core::ptr::null_mut());
    }
    SCANNING.store(false, Ordering::Release);
}

extern "C" fn scan_callback(info: *mut libc::dl_phdr_info, _: usize, _: *mut c_void) -> c_int {
    // SAFETY: dl_iterate_phdr passes a valid dl_phdr_info for the duration of the call;
    // dlpi_name is a NUL-terminated string (possibly empty), dlpi_phdr holds dlpi_phnum
    // headers.
    let info = unsafe { &*info };
    if info.dlpi_name.is_null() {
        return 0;
    }
    // SAFETY: see above.
    let name = unsafe { core::ffi::CStr::from_ptr(info.dlpi_name) }.to_bytes();
    if name.first() != Some(&b'/') {
        return 0; // the executable (""), the vdso ("linux-vdso.so.1")
    }
    let bias = info.dlpi_addr;
    let (mut lo, mut hi) = (u64::MAX, 0u64);
    for i in 0..info.dlpi_phnum as usize {
        // SAFETY: i < dlpi_phnum.
        let ph = unsafe { &*info.dlpi_phdr.add(i) };
        if ph.p_type == libc::PT_LOAD && ph.p_flags & libc::PF_X != 0 && ph.p_memsz > 0 {
            lo = lo.min(ph.p_vaddr);
            hi = hi.max(ph.p_vaddr.saturating_add(ph.p_memsz));
        }
    }
    let n = COUNT.load(Ordering::Relaxed);
    if lo >= hi
        || (0..n).any(|i| {
            BIAS[i].load(Ordering::Relaxed) == bias
                && LINK_LO[i].load(Ordering::Relaxed) == (lo & !15)
        })
    {
        return 0;
    }
    let me = (scan_callback as *const ()) as u64;
    if (bias.wrapping_add(lo)..bias.wrapping_add(hi)).contains(&me) {
        return 0; // this runtime itself, preloaded: not part of the program
    }
    if n >= MAX_OBJECTS {
        DROPPED.fetch_add(1, Ordering::Relaxed);
        return 0;
    }
    let Some(layout) = Layout::new(lo, hi, SCALE.load(Ordering::Relaxed)) else {
        return 0;
    };
    let Some(bytes) = layout
        .nbins
        .checked_mul(4)
        .and_then(|b| b.checked_add(META_BYTES))
    else {
        return 0;
    };
    let Some(mem) = sys::map_zeroed(bytes) else {
        DROPPED.fetch_add(1, Ordering::Relaxed);
        return 0;
    };
    let path_len = name.len().min(MAX_PATH);
    // SAFETY: `mem` is a fresh mapping of `bytes` ≥ META_BYTES bytes, not yet published.
    let meta = unsafe { core::slice::from_raw_parts_mut(mem, META_BYTES) };
    meta[..path_len].copy_from_slice(&name[..path_len]);
    let id_len = build_id(info, &mut meta[MAX_PATH..]);
    LINK_LO[n].store(layout.link_lo, Ordering::Relaxed);
    LINK_HI[n].store(layout.link_hi, Ordering::Relaxed);
    BIAS[n].store(bias, Ordering::Relaxed);
    PATH_LEN[n].store(path_len, Ordering::Relaxed);
    BUILD_ID_LEN[n].store(id_len, Ordering::Relaxed);
    META[n].store(mem, Ordering::Relaxed);
    RUNTIME_LO[n].store(
        layout.link_lo.wrapping_add(bias) as usize,
        Ordering::Relaxed,
    );
    SPAN[n].store(layout.span() as usize, Ordering::Relaxed);
    NBINS[n].store(layout.nbins, Ordering::Relaxed);
    // SAFETY: META_BYTES is a multiple of 4 and the mapping is page-aligned, so the counters
    // after the metadata are aligned AtomicU32s inside the mapping.
    BINS[n].store(
        unsafe { mem.add(META_BYTES) } as *mut AtomicU32,
        Ordering::Relaxed,
    );
    COUNT.store(n + 1, Ordering::Release);
    0
}

/// Copy the object's GNU build-id (from its `PT_NOTE` segments, as mapped) into `out`;
/// returns its length (0: none found).
fn build_id(info: &libc::dl_phdr_info, out: &mut [u8]) -> usize {
    for i in 0..info.dlpi_phnum as usize {
        // SAFETY: i < dlpi_phnum.
        let ph = unsafe { &*info.dlpi_phdr.add(i) };
        if ph.p_type != libc::PT_NOTE {
            continue;
        }
        let align = if ph.p_align == 8 { 8 } else { 4 };
        let start = info.dlpi_addr.wrapping_add(ph.p_vaddr) as usize;
        let len = ph.p_memsz as usize;
        if !sys::can_read_own_memory(start, len) {
            continue;
        }
        // SAFETY: the note segment is part of a loaded, readable segment of the object (checked
        // just above), `len` bytes long.
        let notes = unsafe { core::slice::from_raw_parts(start as *const u8, len) };
        let mut at = 0usize;
        let word = |o: usize| -> Option<usize> {
            Some(u32::from_ne_bytes(notes.get(o..o + 4)?.try_into().ok()?) as usize)
        };
        let round = |v: usize| v.checked_add(align - 1).map(|v| v & !(align - 1));
        while let (Some(namesz), Some(descsz), Some(kind)) = (word(at), word(at + 4), word(at + 8))
        {
            let name_at = at + 12;
            let Some(desc_at) = round(name_at + namesz) else {
                break;
            };
            let Some(next) = desc_at.checked_add(descsz).and_then(round) else {
                break;
            };
            if kind == 3 && notes.get(name_at..name_at + namesz) == Some(b"GNU\0") {
                if let Some(d) = notes.get(desc_at..desc_at + descsz) {
                    let n = d.len().min(out.len());
                    out[..n].copy_from_slice(&d[..n]);
                    return n;
                }
            }
            if next <= at {
                break;
            }
            at = next;
        }
    }
    0
}

/// One registered object, for the writer.
pub struct Object {
    /// Where its counters are, in link-time addresses.
    pub layout: Layout,
    /// Its counters.
    pub counters: &'static [AtomicU32],
    /// Runtime − link-time address.
    pub bias: u64,
    /// The loader's path.
    pub path: &'static [u8],
    /// GNU build-id bytes (empty: none).
    pub build_id: &'static [u8],
}

/// Number of registered objects.
pub fn count() -> usize {
    COUNT.load(Ordering::Acquire).min(MAX_OBJECTS)
}

/// Objects that could not be registered (table full or no memory).
pub fn dropped() -> usize {
    DROPPED.load(Ordering::Relaxed)
}

/// Registered object `i` (< [`count`]).
pub fn object(i: usize) -> Option<Object> {
    if i >= count() {
        return None;
    }
    let layout = Layout::new(
        LINK_LO[i].load(Ordering::Relaxed),
        LINK_HI[i].load(Ordering::Relaxed),
        SCALE.load(Ordering::Relaxed),
    )?;
    let meta = META[i].load(Ordering::Relaxed);
    let bins = BINS[i].load(Ordering::Relaxed);
    // SAFETY: slot i is published (i < COUNT, Acquire): META[i] is a mapping holding the path
    // (PATH_LEN[i] bytes), the build-id (BUILD_ID_LEN[i] bytes at MAX_PATH) and NBINS[i]
    // counters at BINS[i]; it is never unmapped, and the path and build-id never change.
    unsafe {
        Some(Object {
            layout,
            counters: core::slice::from_raw_parts(bins, NBINS[i].load(Ordering::Relaxed)),
            bias: BIAS[i].load(Ordering::Relaxed),
            path: core::slice::from_raw_parts(meta, PATH_LEN[i].load(Ordering::Relaxed)),
            build_id: core::slice::from_raw_parts(
                meta.add(MAX_PATH),
                BUILD_ID_LEN[i].load(Ordering::Relaxed),
            ),
        })
    }
}

/// Zero every object's counters (a forked child starts afresh).
pub fn clear() {
    for i in 0..count() {
        if let Some(o) = object(i) {
            let c = o.counters;
            if !c.is_empty()
                && !sys::discard_pages(c.as_ptr() as *mut u8, core::mem::size_of_val(c))
            {
                for c in c {
                    c.store(0, Ordering::Relaxed);
                }
            }
        }
    }
}

extern "C" fn exe_build_id_callback(
    info: *mut libc::dl_phdr_info,
    _: usize,
    data: *mut c_void,
) -> c_int {
    // SAFETY: dl_iterate_phdr passes a valid dl_phdr_info; `data` is the `&mut [u8; 64]`
    // handed over by `exe_build_id`, alive for the call. The first object is the executable.
    unsafe {
        let out = &mut *(data as *mut [u8; MAX_BUILD_ID + 1]);
        out[MAX_BUILD_ID] = build_id(&*info, &mut out[..MAX_BUILD_ID]) as u8;
    }
    1
}

/// The executable's GNU build-id, copied into `out` (length returned; 0: none).
pub fn exe_build_id(out: &mut [u8; MAX_BUILD_ID]) -> usize {
    let mut tmp = [0u8; MAX_BUILD_ID + 1];
    // SAFETY: the callback writes only into `tmp`, alive for the call.
    unsafe {
        libc::dl_iterate_phdr(
            Some(exe_build_id_callback),
            &mut tmp as *mut [u8; MAX_BUILD_ID + 1] as *mut c_void,
        );
    }
    let n = usize::from(tmp[MAX_BUILD_ID]).min(MAX_BUILD_ID);
    out[..n].copy_from_slice(&tmp[..n]);
    n
}
