//! Histograms for the text of every shared object the program runs code in
//! (by default: `PROFIL_RANGES=all`; and the object list of `PROFIL_MODE=pcsample`).
//!
//! The executable keeps its histogram in [`crate::hist`] and its file (`gmon.out`) unchanged.
//! Every other object with a path gets a slot in a fixed table of [`MAX_OBJECTS`]: its
//! executable segments' *runtime addresses* (for the handler's lookup), their *link-time
//! addresses* (for the file: `gprof LIB FILE` and the analyzer read the histogram against the
//! object's own symbols), its load bias, path and GNU build-id, and its own 4-byte-bin
//! counters.
//!
//! # Finding objects: from the samples, not from `dlopen`
//!
//! The runtime does not wrap `dlopen`/`dlmopen`. A wrapper is a different caller: the loader
//! searches the *caller's* `RUNPATH` (with `$ORIGIN`), so a plugin host's `dlopen("libplug.so")`
//! failed under the wrapper, and so did every `dlopen` that ran before our constructor had
//! looked up the real function (another library's constructor) or in a copy of the runtime
//! that stays out (the shared object preloaded into a program that has the object linked in).
//! Instead the sampling handler registers objects as their code is sampled ([`record`]):
//!
//! * A sample outside the executable is looked up with glibc's `_dl_find_object` (glibc ≥
//!   2.35, exported by the dynamic loader, documented async-signal-safe and lock-free; found
//!   with `dlsym` in the constructor, never linked against). It gives the object's mapping, its
//!   load bias (`l_addr`) and path (`l_name`).
//! * An object's *identity* is its load bias and path: the slot whose bias and path match
//!   counts the sample. So another object loaded later at the addresses of one unloaded with
//!   `dlclose` gets a slot of its own (a different path, or the same file at another bias),
//!   and the first one's histogram keeps only its own samples. The check costs a
//!   `_dl_find_object` call and a comparison of the path per sample outside the executable
//!   (measured in BENCHMARKS.md).
//! * A new object is registered from the handler: a try-lock (one compare-and-swap; a handler
//!   that finds it taken drops that one sample from the histograms, never waits), the ELF and
//!   program headers read where the loader mapped them (the first page of the object; when
//!   they are not there the whole mapping is profiled), the build-id from its `PT_NOTE` inside
//!   a mapped `PT_LOAD`, the path copied, and the counters carved from one region reserved in
//!   the constructor (`MAP_NORESERVE`: pages cost memory only when a sample touches them). No
//!   allocation, no lock, no system call. Each field is stored before the slot count is raised
//!   with `Release`; the handler loads the count with `Acquire` and reads published slots with
//!   loads only. A slot is never reused or unmapped.
//! * The objects loaded at start are also registered in the constructor ([`scan`],
//!   `dl_iterate_phdr`), and in pcsample mode the exit scans again so that the object list
//!   names every object loaded then.
//!
//! Without `_dl_find_object` (glibc before 2.35; static executables, where `dlsym` finds
//! nothing) the table is what the scans at start and exit found, and a sample counts into the
//! first slot whose range holds it: objects loaded later are in pcsample mode's list but their
//! `PROFIL_RANGES=all` samples are in no file, and an object loaded where another was unloaded
//! is counted into the first one's histogram.
//!
//! # What is not covered
//!
//! Objects without a path starting with `/` (the vdso; an object opened by a relative path);
//! this runtime's own shared object; objects beyond [`MAX_OBJECTS`] or the reserved region;
//! the same file unloaded and loaded again at the same address counts into one histogram (it
//! is the same code). An object's constructors, which run inside `dlopen`, are profiled like
//! any other code of it.

use core::ffi::{c_int, c_void};
use core::sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, Ordering};

use crate::hist::{bin_index, Layout};
use crate::sys::{self, Phdr};

/// The most shared objects profiled at once.
pub const MAX_OBJECTS: usize = 256;
/// The longest path kept (longer ones are cut; the manifest then names a path that does not
/// exist, which the analyzer reports).
pub const MAX_PATH: usize = 4096 - MAX_BUILD_ID;
/// The longest build-id kept.
pub const MAX_BUILD_ID: usize = 64;
/// The region the slots' memory is carved from: address space reserved in the constructor,
/// costing memory only where samples land (at the default scale, as many bytes as the text
/// of the objects sampled). Smaller under an address-space limit ([`region_bytes`]).
pub const REGION_BYTES: usize = 1 << 30;

#[allow(clippy::declare_interior_mutable_const)]
const Z: AtomicUsize = AtomicUsize::new(0);
#[allow(clippy::declare_interior_mutable_const)]
const Z64: AtomicU64 = AtomicU64::new(0);
#[allow(clippy::declare_interior_mutable_const)]
const ZP: AtomicPtr<AtomicU32> = AtomicPtr::new(core::ptr::null_mut());

static ENABLED: AtomicBool = AtomicBool::new(false);
static COUNT: AtomicUsize = AtomicUsize::new(0);
/// Held while a slot is filled (by the handler or a scan); see [`record`] and [`scan`].
static FILLING: AtomicBool = AtomicBool::new(false);
static SCALE: AtomicU32 = AtomicU32::new(crate::config::DEFAULT_SCALE);
/// `_dl_find_object`, or 0.
static FIND: AtomicUsize = AtomicUsize::new(0);
/// Start of the mapping of this runtime's own shared object (0: linked into the executable).
static SELF_MAP: AtomicUsize = AtomicUsize::new(0);
static REGION: AtomicPtr<u8> = AtomicPtr::new(core::ptr::null_mut());
static REGION_LEN: AtomicUsize = AtomicUsize::new(0);
/// Bytes of the region handed out (changed only under FILLING).
static REGION_USED: AtomicUsize = AtomicUsize::new(0);
// Per slot: what the handler reads...
static RUNTIME_LO: [AtomicUsize; MAX_OBJECTS] = [Z; MAX_OBJECTS];
static SPAN: [AtomicUsize; MAX_OBJECTS] = [Z; MAX_OBJECTS];
static BINS: [AtomicPtr<AtomicU32>; MAX_OBJECTS] = [ZP; MAX_OBJECTS];
static NBINS: [AtomicUsize; MAX_OBJECTS] = [Z; MAX_OBJECTS];
static BIAS: [AtomicU64; MAX_OBJECTS] = [Z64; MAX_OBJECTS];
/// Start of the slot's memory: `[path (MAX_PATH)][build-id (MAX_BUILD_ID)][bins...]`.
static META: [AtomicPtr<u8>; MAX_OBJECTS] = {
    #[allow(clippy::declare_interior_mutable_const)]
    const N: AtomicPtr<u8> = AtomicPtr::new(core::ptr::null_mut());
    [N; MAX_OBJECTS]
};
static PATH_LEN: [AtomicUsize; MAX_OBJECTS] = [Z; MAX_OBJECTS];
// ...and what the writer needs.
static LINK_LO: [AtomicU64; MAX_OBJECTS] = [Z64; MAX_OBJECTS];
static LINK_HI: [AtomicU64; MAX_OBJECTS] = [Z64; MAX_OBJECTS];
static BUILD_ID_LEN: [AtomicUsize; MAX_OBJECTS] = [Z; MAX_OBJECTS];
/// Registrations that failed because the table or the region was full (each later sample
/// of such an object tries again, and counts here again).
static DROPPED: AtomicUsize = AtomicUsize::new(0);

/// One page, so that the counters after it are page-aligned (a forked child can discard them).
const META_BYTES: usize = MAX_PATH + MAX_BUILD_ID;

/// The region to reserve under an address-space limit of `limit` bytes (`None`: unlimited):
/// at most a sixteenth of it, so that the program keeps what it counted on.
pub fn region_bytes(limit: Option<u64>) -> usize {
    match limit {
        None => REGION_BYTES,
        Some(l) => REGION_BYTES.min(usize::try_from(l / 16).unwrap_or(usize::MAX)) & !4095,
    }
}

/// Turn shared-object profiling on at profil `scale` and register the objects loaded now.
/// Constructor only.
pub fn enable(scale: u32) {
    SCALE.store(scale, Ordering::Relaxed);
    let find = sys::find_object_function();
    FIND.store(find, Ordering::Relaxed);
    let me = (enable as *const ()) as usize;
    if let Some(o) = sys::find_object(find, me) {
        if !o.name.is_null() && path_byte(o.name, 0) == b'/' {
            SELF_MAP.store(o.map_start, Ordering::Relaxed);
        }
    }
    // Under strict overcommit (vm.overcommit_memory=2) the reservation is charged in full:
    // ask for less until it fits.
    let mut bytes = region_bytes(sys::address_space_limit());
    while bytes >= 16 << 20 {
        if let Some(r) = sys::reserve_zeroed(bytes) {
            REGION_LEN.store(bytes, Ordering::Relaxed);
            REGION.store(r, Ordering::Relaxed);
            break;
        }
        bytes /= 2;
    }
    ENABLED.store(true, Ordering::Release);
    scan();
}

/// Is `PROFIL_RANGES=all` (or pcsample mode) in effect?
pub fn enabled() -> bool {
    ENABLED.load(Ordering::Acquire)
}

/// Byte `i` of the NUL-terminated string at `p`.
fn path_byte(p: *const u8, i: usize) -> u8 {
    // SAFETY: callers pass the loader's l_name of an object that stays loaded (it holds the
    // sampled PC) and never read past its terminating NUL.
    unsafe { *p.add(i) }
}

/// Does slot `i`'s path equal the NUL-terminated `name`? (A path cut at [`MAX_PATH`] matches
/// on what was kept.)
fn path_matches(i: usize, name: *const u8) -> bool {
    let len = PATH_LEN[i].load(Ordering::Relaxed);
    let meta = META[i].load(Ordering::Relaxed);
    for k in 0..len {
        // SAFETY: slot i is published: META[i] holds PATH_LEN[i] path bytes, never changed.
        let kept = unsafe { *meta.add(k) };
        if path_byte(name, k) != kept {
            return false; // also stops at the NUL of a shorter name
        }
    }
    len == MAX_PATH || path_byte(name, len) == 0
}

/// Count one sample into slot `i` if `pc` lies in its text.
#[inline]
fn count_in(i: usize, pc: usize) {
    let offset = pc.wrapping_sub(RUNTIME_LO[i].load(Ordering::Relaxed));
    if offset >= SPAN[i].load(Ordering::Relaxed) {
        return;
    }
    if let Some(idx) = bin_index(offset as u64, SCALE.load(Ordering::Relaxed)) {
        if idx < NBINS[i].load(Ordering::Relaxed) as u64 {
            let bins = BINS[i].load(Ordering::Relaxed);
            // SAFETY: slot i was published (COUNT > i, Acquire) after BINS[i] was set to
            // memory of NBINS[i] counters that is never unmapped, and idx < NBINS[i].
            unsafe { (*bins.add(idx as usize)).fetch_add(1, Ordering::Relaxed) };
        }
    }
}

/// Count one sample at runtime address `pc` (outside the executable) into the slot of the
/// object holding it, registering the object first if it has no slot yet. Returns the slot.
/// *Async-signal-safe*: `_dl_find_object`, loads over the published slots, one `fetch_add`;
/// registering adds a compare-and-swap and plain memory reads and writes (see the module
/// docs).
#[inline]
pub fn record(pc: usize) -> Option<usize> {
    let find = FIND.load(Ordering::Relaxed);
    if find == 0 {
        return record_by_range(pc);
    }
    let o = sys::find_object(find, pc)?;
    if o.name.is_null()
        || path_byte(o.name, 0) != b'/'
        || o.map_start == SELF_MAP.load(Ordering::Relaxed)
    {
        return None; // the executable (""), the vdso, this runtime itself
    }
    let n = count();
    let i = match find_slot(0, n, &o) {
        Some(i) => i,
        None => register_found(n, &o, pc)?,
    };
    count_in(i, pc);
    Some(i)
}

/// The published slot in `from..to` whose identity (bias and path) is `o`'s.
fn find_slot(from: usize, to: usize, o: &sys::FoundObject) -> Option<usize> {
    (from..to).find(|&i| BIAS[i].load(Ordering::Relaxed) == o.bias && path_matches(i, o.name))
}

/// Without `_dl_find_object`: the first slot whose range holds `pc`.
fn record_by_range(pc: usize) -> Option<usize> {
    let i = (0..count()).find(|&i| {
        pc.wrapping_sub(RUNTIME_LO[i].load(Ordering::Relaxed)) < SPAN[i].load(Ordering::Relaxed)
    })?;
    count_in(i, pc);
    Some(i)
}

/// Take the filling lock without waiting.
fn try_fill() -> bool {
    FILLING
        .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
        .is_ok()
}

fn done_filling() {
    FILLING.store(false, Ordering::Release);
}

/// Register the object `o` found by the handler (slots `..seen` were searched already).
/// Inlined, like everything the handler calls here: one frame is shallower than several (the
/// handler runs on whatever stack the interrupted code had, possibly a small one).
#[inline(always)]
fn register_found(seen: usize, o: &sys::FoundObject, pc: usize) -> Option<usize> {
    if !try_fill() {
        return None; // another thread is filling a slot: this one sample is not counted
    }
    // Another thread may have registered it since we looked.
    let slot = find_slot(seen, count(), o).or_else(|| {
        let text = mapped_text(o, pc);
        fill_slot(&Source {
            bias: o.bias,
            lo: text.lo,
            hi: text.hi,
            path: PathSource::CStr(o.name),
            phdrs: text.phdrs,
            may_map: false,
        })
    });
    done_filling();
    slot
}

/// An object's executable range (link-time) and its program headers when found.
struct Text {
    lo: u64,
    hi: u64,
    phdrs: &'static [Phdr],
}

/// The program headers of the object `o`, read where the loader mapped its first page (its ELF
/// header), and the range of its executable `PT_LOAD` segments that holds `pc`. When the
/// headers are not there (an object whose first segment does not start at file offset 0), or
/// do not describe what is mapped, the whole mapping.
#[inline(always)]
fn mapped_text(o: &sys::FoundObject, pc: usize) -> Text {
    let whole = Text {
        lo: (o.map_start as u64).wrapping_sub(o.bias),
        hi: (o.map_end as u64).wrapping_sub(o.bias),
        phdrs: &[],
    };
    let Some(phdrs) = sys::headers_at(o.map_start, o.map_end) else {
        return whole;
    };
    let (lo, hi) = exec_range(phdrs);
    let inside = |a: u64| (o.map_start as u64..=o.map_end as u64).contains(&a);
    let (rlo, rhi) = (lo.wrapping_add(o.bias), hi.wrapping_add(o.bias));
    if lo >= hi || !inside(rlo) || !inside(rhi) || !(rlo..rhi).contains(&(pc as u64)) {
        return whole;
    }
    Text { lo, hi, phdrs }
}

/// The link-time range of the executable `PT_LOAD` segments (empty: none).
fn exec_range(phdrs: &[Phdr]) -> (u64, u64) {
    let (mut lo, mut hi) = (u64::MAX, 0u64);
    for ph in phdrs {
        if ph.p_type == libc::PT_LOAD && ph.p_flags & libc::PF_X != 0 && ph.p_memsz > 0 {
            let v = ph.p_vaddr;
            lo = lo.min(v);
            hi = hi.max(v.saturating_add(ph.p_memsz));
        }
    }
    (lo, hi)
}

/// Where a new slot's path comes from.
enum PathSource<'a> {
    /// The loader's NUL-terminated `l_name` (from the handler).
    CStr(*const u8),
    /// `dl_iterate_phdr`'s name.
    Bytes(&'a [u8]),
}

/// Everything a new slot is filled from.
struct Source<'a> {
    bias: u64,
    lo: u64,
    hi: u64,
    path: PathSource<'a>,
    phdrs: &'a [Phdr],
    /// Outside the signal handler: memory may be mapped.
    may_map: bool,
}

/// Memory for a slot: carved from the reserved region; outside the handler (`may_map`), a
/// mapping of its own when the region is full or missing. Under FILLING.
#[inline(always)]
fn carve(bytes: usize, may_map: bool) -> Option<*mut u8> {
    let region = REGION.load(Ordering::Relaxed);
    let own = || may_map.then(|| sys::map_zeroed(bytes)).flatten();
    if region.is_null() {
        return own();
    }
    let used = REGION_USED.load(Ordering::Relaxed);
    let size = bytes.checked_add(4095)? & !4095;
    let end = used.checked_add(size)?;
    if end > REGION_LEN.load(Ordering::Relaxed) {
        return own();
    }
    REGION_USED.store(end, Ordering::Relaxed);
    // SAFETY: used + size ≤ REGION_LEN: inside the reserved region.
    Some(unsafe { region.add(used) })
}

/// Fill and publish the next slot from `s`. Under FILLING. `None` when the table or the region
/// is full (counted in [`dropped`]) or the range is unusable.
#[inline(always)]
fn fill_slot(s: &Source<'_>) -> Option<usize> {
    let n = COUNT.load(Ordering::Relaxed);
    if n >= MAX_OBJECTS {
        DROPPED.fetch_add(1, Ordering::Relaxed);
        return None;
    }
    let layout = Layout::new(s.lo, s.hi, SCALE.load(Ordering::Relaxed))?;
    let bytes = layout.nbins.checked_mul(4)?.checked_add(META_BYTES)?;
    let Some(mem) = carve(bytes, s.may_map) else {
        DROPPED.fetch_add(1, Ordering::Relaxed);
        return None;
    };
    // SAFETY: `mem` is fresh memory of ≥ META_BYTES bytes, not yet published.
    let meta = unsafe { core::slice::from_raw_parts_mut(mem, META_BYTES) };
    let mut path_len = 0;
    match s.path {
        PathSource::Bytes(b) => {
            path_len = b.len().min(MAX_PATH);
            meta[..path_len].copy_from_slice(&b[..path_len]);
        }
        PathSource::CStr(p) => {
            while path_len < MAX_PATH {
                let c = path_byte(p, path_len);
                if c == 0 {
                    break;
                }
                meta[path_len] = c;
                path_len += 1;
            }
        }
    }
    let id_len = build_id(s.bias, s.phdrs, &mut meta[MAX_PATH..]);
    LINK_LO[n].store(layout.link_lo, Ordering::Relaxed);
    LINK_HI[n].store(layout.link_hi, Ordering::Relaxed);
    BIAS[n].store(s.bias, Ordering::Relaxed);
    PATH_LEN[n].store(path_len, Ordering::Relaxed);
    BUILD_ID_LEN[n].store(id_len, Ordering::Relaxed);
    META[n].store(mem, Ordering::Relaxed);
    RUNTIME_LO[n].store(
        layout.link_lo.wrapping_add(s.bias) as usize,
        Ordering::Relaxed,
    );
    SPAN[n].store(layout.span() as usize, Ordering::Relaxed);
    NBINS[n].store(layout.nbins, Ordering::Relaxed);
    // SAFETY: META_BYTES is a multiple of 4 and the memory is page-aligned, so the counters
    // after the metadata are aligned AtomicU32s inside it.
    BINS[n].store(
        unsafe { mem.add(META_BYTES) } as *mut AtomicU32,
        Ordering::Relaxed,
    );
    COUNT.store(n + 1, Ordering::Release);
    Some(n)
}

/// Register every loaded object with a path that has no slot yet (`dl_iterate_phdr`). Not for
/// the signal handler (`dl_iterate_phdr` takes the loader's lock). Waits while a handler on
/// another thread fills a slot (a bounded piece of work that never waits itself).
pub fn scan() {
    if !enabled() {
        return;
    }
    // A slot takes a handler microseconds to fill; the bound is a safety net only.
    let mut tries = 0u32;
    while !try_fill() {
        tries += 1;
        if tries > 100_000 {
            return;
        }
        sys::yield_now();
    }
    // SAFETY: the callback only reads the dl_phdr_info it is given and writes our statics;
    // `data` is unused.
    unsafe {
        libc::dl_iterate_phdr(Some(scan_callback), core::ptr::null_mut());
    }
    done_filling();
}

extern "C" fn scan_callback(info: *mut libc::dl_phdr_info, _: usize, _: *mut c_void) -> c_int {
    // SAFETY: dl_iterate_phdr passes a valid dl_phdr_info for the duration of the call;
    // dlpi_name is a NUL-terminated string (possibly empty), dlpi_phdr holds dlpi_phnum
    // headers. The name and headers stay valid while the object is loaded, which it is for
    // the duration of the scan (the loader's lock is held).
    let info = unsafe { &*info };
    if info.dlpi_name.is_null() {
        return 0;
    }
    // SAFETY: see above.
    let name = unsafe { core::ffi::CStr::from_ptr(info.dlpi_name) }.to_bytes();
    if name.first() != Some(&b'/') {
        return 0; // the executable (""), the vdso ("linux-vdso.so.1")
    }
    // SAFETY: see above.
    let phdrs = unsafe { core::slice::from_raw_parts(info.dlpi_phdr, info.dlpi_phnum as usize) };
    let bias = info.dlpi_addr;
    let (lo, hi) = exec_range(phdrs);
    let n = COUNT.load(Ordering::Relaxed);
    if lo >= hi
        || (0..n).any(|i| {
            BIAS[i].load(Ordering::Relaxed) == bias && path_matches(i, info.dlpi_name as *const u8)
        })
    {
        return 0;
    }
    let me = (scan_callback as *const ()) as u64;
    if (bias.wrapping_add(lo)..bias.wrapping_add(hi)).contains(&me) {
        return 0; // this runtime itself, preloaded: not part of the program
    }
    fill_slot(&Source {
        bias,
        lo,
        hi,
        path: PathSource::Bytes(name),
        phdrs,
        may_map: true,
    });
    0
}

/// Copy the GNU build-id of the object loaded at `bias` with program headers `phdrs` (from its
/// `PT_NOTE` segments, as mapped) into `out`; returns its length (0: none found). Only notes
/// inside a readable `PT_LOAD` segment are read. *Async-signal-safe* (memory reads only).
#[inline(always)]
fn build_id(bias: u64, phdrs: &[Phdr], out: &mut [u8]) -> usize {
    let mapped = |vaddr: u64, len: u64| {
        phdrs.iter().any(|l| {
            l.p_type == libc::PT_LOAD
                && l.p_flags & libc::PF_R != 0
                && l.p_vaddr <= vaddr
                && vaddr.saturating_add(len) <= l.p_vaddr.saturating_add(l.p_filesz)
        })
    };
    for ph in phdrs {
        if ph.p_type != libc::PT_NOTE || !mapped(ph.p_vaddr, ph.p_memsz) {
            continue;
        }
        let align = if ph.p_align == 8 { 8 } else { 4 };
        let start = bias.wrapping_add(ph.p_vaddr) as usize;
        let len = ph.p_memsz as usize;
        // SAFETY: the note segment lies inside a loaded, readable segment of the object
        // (checked just above), `len` bytes long, and the object stays loaded meanwhile.
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

/// Where the pcsample writer puts slot `i`'s runtime addresses: its own load bias, unless an
/// object registered later occupies some of the same addresses (`i` was unloaded and the
/// loader reused them). Then a stand-in bias places it above 2^63, where no user-space PC
/// lies (`STANDIN + i × 2^40`, for objects whose link-time addresses are below 2^40), so that
/// a reader that finds objects by runtime address tells the two apart; the writer moves the
/// samples counted in `i` by the same amount.
pub fn pcsample_bias(i: usize) -> u64 {
    const STANDIN: u64 = 1 << 63;
    let Some(o) = object(i) else { return 0 };
    let range = |k: usize| {
        let lo = RUNTIME_LO[k].load(Ordering::Relaxed);
        lo..lo.saturating_add(SPAN[k].load(Ordering::Relaxed))
    };
    let mine = range(i);
    let reused = (i + 1..count()).any(|k| {
        let other = range(k);
        other.start < mine.end && mine.start < other.end
    });
    if reused && o.layout.link_hi < 1 << 40 {
        STANDIN | (i as u64) << 40
    } else {
        o.bias
    }
}

/// Number of registered objects.
pub fn count() -> usize {
    COUNT.load(Ordering::Acquire).min(MAX_OBJECTS)
}

/// Registrations that failed because the table or the region was full.
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

/// Zero every object's counters (a forked child starts afresh). In the child only the thread
/// that forked exists: a slot another thread's handler was filling at the fork is never
/// published, and the lock it held is released here.
pub fn clear() {
    done_filling();
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
    // handed over by `exe_build_id`, alive for the call; dlpi_phdr holds dlpi_phnum headers.
    // The first object is the executable.
    unsafe {
        let out = &mut *(data as *mut [u8; MAX_BUILD_ID + 1]);
        let info = &*info;
        let phdrs = core::slice::from_raw_parts(info.dlpi_phdr, info.dlpi_phnum as usize);
        out[MAX_BUILD_ID] = build_id(info.dlpi_addr, phdrs, &mut out[..MAX_BUILD_ID]) as u8;
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CStr;

    #[test]
    fn the_region_stays_a_sixteenth_of_an_address_space_limit() {
        assert_eq!(region_bytes(None), REGION_BYTES);
        assert_eq!(region_bytes(Some(u64::MAX)), REGION_BYTES);
        assert_eq!(region_bytes(Some(1 << 30)), 64 << 20);
        assert_eq!(region_bytes(Some((1 << 30) + 100)), 64 << 20);
    }

    /// A library this test process has not loaded: (name, one of its functions).
    fn unloaded_library() -> Option<(&'static CStr, &'static CStr)> {
        [
            (c"libz.so.1", c"zlibVersion"),
            (c"libbz2.so.1.0", c"BZ2_bzlibVersion"),
        ]
        .into_iter()
        .find(|(lib, _)| {
            // SAFETY: RTLD_NOLOAD only asks whether the library is loaded.
            unsafe { libc::dlopen(lib.as_ptr(), libc::RTLD_NOW | libc::RTLD_NOLOAD) }.is_null()
        })
    }

    /// The executable range and bias of the loaded object holding `addr`, from
    /// `dl_iterate_phdr` (what the scans register).
    fn scanned_range(addr: usize) -> (u64, u64, u64) {
        extern "C" fn cb(info: *mut libc::dl_phdr_info, _: usize, data: *mut c_void) -> c_int {
            // SAFETY: as in scan_callback; `data` is the test's `(usize, (u64, u64, u64))`.
            unsafe {
                let info = &*info;
                let out = &mut *(data as *mut (usize, (u64, u64, u64)));
                let phdrs = core::slice::from_raw_parts(info.dlpi_phdr, info.dlpi_phnum as usize);
                let (lo, hi) = exec_range(phdrs);
                let a = out.0 as u64;
                if lo < hi && (lo + info.dlpi_addr..hi + info.dlpi_addr).contains(&a) {
                    out.1 = (lo, hi, info.dlpi_addr);
                    return 1;
                }
            }
            0
        }
        let mut out = (addr, (0, 0, 0));
        // SAFETY: the callback writes only into `out`, alive for the call.
        unsafe { libc::dl_iterate_phdr(Some(cb), &mut out as *mut _ as *mut c_void) };
        out.1
    }

    /// The one test that touches the module's process-wide table: registration from a sample
    /// (what the handler does) and from the scans agree, and identity keeps them one slot.
    #[test]
    fn a_sample_in_an_object_loaded_later_registers_it_as_the_scan_would() {
        let Some((lib, func)) = unloaded_library() else {
            eprintln!("neither libz nor libbz2 is installed: test skipped");
            return;
        };
        enable(0x8000);
        if FIND.load(Ordering::Relaxed) == 0 {
            eprintln!("no _dl_find_object (glibc < 2.35): test skipped");
            return;
        }
        let before = count();
        assert!(before > 0, "the scan at enable registers libc");
        // SAFETY: loading a system library and looking up a function in it.
        let pc = unsafe {
            let h = libc::dlopen(lib.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL);
            assert!(!h.is_null(), "dlopen {lib:?}");
            libc::dlsym(h, func.as_ptr()) as usize
        };
        assert_ne!(pc, 0);
        let slot = record(pc + 2).expect("registered from the sample");
        assert_eq!(slot, before, "a new slot");
        assert_eq!(
            record(pc + 2),
            Some(slot),
            "the same slot for its next sample"
        );
        let o = object(slot).unwrap();
        assert!(o.path.ends_with(lib.to_bytes()), "{:?}", o.path);
        assert!(!o.build_id.is_empty());
        let (lo, hi, bias) = scanned_range(pc);
        assert_eq!(o.bias, bias);
        assert_eq!(o.layout, Layout::new(lo, hi, 0x8000).unwrap());
        let bin = (pc + 2 - (o.layout.link_lo + bias) as usize) / 4;
        assert_eq!(o.counters[bin].load(Ordering::Relaxed), 2);
        // The scan recognises it: no second slot.
        scan();
        assert_eq!(count(), before + 1);
        // Its samples are not written at stand-in addresses: nothing took its place.
        assert_eq!(pcsample_bias(slot), bias);
    }

    /// Not a check: the cost of the lookup per sample outside the executable, for
    /// BENCHMARKS.md: `cargo test -p profil-rt --release -- --ignored --nocapture lookup_cost`.
    #[test]
    #[ignore]
    fn lookup_cost() {
        enable(0x8000);
        let pc = libc::memchr as *const () as usize; // in libc, registered by the scan
        let n = 10_000_000usize;
        for (what, f) in [
            (
                "_dl_find_object + identity (this design)",
                record as fn(usize) -> Option<usize>,
            ),
            ("first range that holds the PC (before)", record_by_range),
        ] {
            let mut best = f64::MAX;
            for _ in 0..5 {
                let t = std::time::Instant::now();
                for i in 0..n {
                    std::hint::black_box(f(std::hint::black_box(pc + (i & 255))));
                }
                best = best.min(t.elapsed().as_secs_f64() * 1e9 / n as f64);
            }
            println!(
                "{what}: {best:.1} ns per sample ({} objects registered)",
                count()
            );
        }
    }
}
