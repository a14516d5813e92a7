//! Sampled call stacks: a frame-pointer walk in the signal handler, aggregated in process into
//! two bounded, preallocated, lock-free tables.
//!
//! # The walk
//!
//! From the interrupted context (`rip`, `rsp`, `rbp`) the handler follows the frame-pointer
//! chain (`[rbp]` = the caller's `rbp`, `[rbp + 8]` = the return address) up to [`MAX_DEPTH`]
//! frames. Every read is checked first, so a bad frame pointer ends the walk and can never
//! fault:
//!
//! * **The interrupted thread's stack range** is `[rsp, top)`, known without a lock or a system
//!   call. For a thread glibc created, `top` is the thread pointer (`%fs:0`): glibc puts the
//!   thread's TCB and static TLS at the top of the very mapping whose rest is the stack (user
//!   supplied stacks included), so `[rsp, %fs:0)` is one readable mapping. The main thread's
//!   TCB lies elsewhere; its stack runs up to the `AT_EXECFN` string the kernel puts at the top
//!   of the initial stack, recorded at start, and reaches down at most `RLIMIT_STACK`. A
//!   sample whose `rsp` is in neither (an alternate signal stack, a coroutine on a stack of its
//!   own) records the leaf alone and counts as *no stack range*.
//! * Frame pointers must be 8-byte aligned and strictly increase; each frame must lie inside
//!   the range.
//! * Each return address must lie in an executable segment of an object loaded when sampling
//!   started (recorded at start with `dl_iterate_phdr`, at most 64 segments; the executable
//!   first), where the bytes before it must encode a `call` (direct `e8 rel32`, or an indirect
//!   `ff /2` of matching length). Reading those bytes is safe: the segment is mapped readable.
//!
//! A chain that ends with `rbp = 0` is complete (`_start` and glibc's thread start clear it).
//! A chain that breaks after it has left the executable (libc is built without frame
//! pointers: `__libc_start_call_main`, `start_thread`, callbacks from `qsort`) counts as *left
//! the frame-pointer code*; one that breaks inside the executable counts as *truncated*, and
//! one that reaches [`MAX_DEPTH`] as *too deep*. All are counted ([`Stats`]): in the stacks file,
//! and on stderr at exit with the test setting `PROFIL_STACK_STATS=1`.
//!
//! # Frameless leaves: the decision
//!
//! gcc at `-O2 -fno-omit-frame-pointer` still gives leaf functions no frame, and every function
//! runs a few instructions before `push rbp; mov rbp, rsp` and after `leave`. There `rbp` is
//! still the caller's, and a plain frame-pointer walk silently drops the caller (measured with
//! perf on the cheap/costly program: costly's inclusive share comes out ≈ 0% instead of 91%).
//! Two remedies were weighed: unwinding the innermost frame with the objects' CFI
//! (`.eh_frame`, indexed at start: exact, but an index per object, including those loaded later
//! by `dlopen`, and a CFA interpreter in the handler), and a check at the innermost frame
//! only. This runtime does the check: if the word at `rsp` (or at `rsp + 8` right after
//! `push rbp`, when `[rsp]` is `rbp` itself) is a return address — in the executable's text,
//! after a call instruction whose direct target, when it has one, starts at most 64 KiB before
//! the interrupted PC (or in the PLT, for a leaf in a shared object) — and is not the return
//! address of `rbp`'s frame, the interrupted function has no frame yet (or any more) and that
//! word is its caller. Otherwise the chain starts at `rbp`. The cost is a few loads per sample;
//! a frameless function that has pushed other registers or grown its frame is not recognised
//! and loses its caller (such a walk is not detected; the measurements in BENCHMARKS.md are
//! the check on how often that matters). Measured: with the check disabled, gprof on the
//! cheap/costly program's file gives costly 0% (truth 91%); with it, 91.1% for C at `-O2
//! -fno-omit-frame-pointer` and 92.4% (truth 91.9%) for Rust with forced frame pointers, at
//! about 0.7 µs per sample for a 5-frame walk and 1.3 µs for 128 frames (0.07% and 0.13% of CPU
//! at 1000 Hz). CFI stays the way to recover the frames a frameless caller loses (`-O2`
//! without `-fno-omit-frame-pointer`: such walks are counted as truncated).
//!
//! # The tables
//!
//! * **Arcs**: (call site, callee) → the number of samples in which that edge was on the
//!   stack. The call site is the return address; the callee is the direct call's target when
//!   the call is direct and lands in the executable, otherwise the callee frame's PC. An edge
//!   is counted once per sample however often it recurs: each sample has a number, and a slot
//!   counts a sample only when it swaps in a number different from the one it held (two threads
//!   sampled at the same instant with the same recursive edge can still count it twice).
//! * **Stacks**: whole stacks (leaf first, runtime addresses), deduplicated by a 64-bit hash of
//!   their PCs and their depth (not compared PC by PC, which would walk every sample twice; two
//!   of n distinct stacks collide with a chance of about n²/2⁶⁵), with a count, their PCs in a
//!   bounded pool written by a second walk the first time a stack is seen.
//!
//! Both are open-addressing hashes in memory mapped at start; a slot is claimed with one
//! compare-and-swap and published with a release store; a probe that finds a slot being
//! claimed by another thread moves on (a duplicate key is harmless: the writers sum them). When
//! a table or the pool is full, the sample's arc or stack is counted as dropped, never waited
//! for. `PROFIL_STACKS=0` turns all of this off (PCs only).
//!
//! # Output
//!
//! The arcs whose both ends are in the executable go into `gmon.out`'s call-graph records at
//! link-time addresses ([`crate::output`]): gprof then shows measured children times, and its
//! "called" column counts samples, not calls. Arcs into or out of shared objects are left to
//! the stacks file. The stacks (runtime addresses, with the walk statistics and an object
//! record for every executable segment loaded at start and every object the handler
//! registered later, [`crate::objects`], so that any sampled address maps to an object and a
//! link-time address) are written to `<profile>.stacks` beside whatever profile name the
//! runtime chose (`gmon.out.stacks`, `gmon.out.<pid>.stacks`), in the format of the gmon
//! crate's `stacks` module; the analyzer finds it there and computes inclusive times and the
//! call graph from it. `PROFIL_STACKS=0` writes neither, and removes a `<profile>.stacks` an
//! earlier run left beside the profile, which a reader would otherwise pair with the new
//! profile (`file` is accepted as a synonym of the default `1`).

use core::sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, Ordering};

use crate::sys::{self, Regs};

/// The most frames a walk records (the interrupted PC included); a deeper stack counts as
/// *too deep* and keeps its innermost `MAX_DEPTH` frames.
pub const MAX_DEPTH: usize = 128;
/// Default slots in each table.
pub const DEFAULT_SLOTS: usize = 1 << 15;
/// How far a thread's stack may reach below its thread pointer.
const THREAD_STACK_MAX: usize = 1 << 30;
/// How far from its caller's direct-call target a frameless leaf's PC may be.
const LEAF_SPAN: usize = 64 << 10;
/// Probes before an insertion gives up (the table counts as full).
const MAX_PROBES: usize = 64;

/// One arc slot.
#[repr(C)]
pub struct ArcSlot {
    state: AtomicU32,
    from: AtomicU64,
    to: AtomicU64,
    count: AtomicU64,
    stamp: AtomicU64,
}

/// One stack slot.
#[repr(C)]
pub struct StackSlot {
    state: AtomicU32,
    depth: AtomicU32,
    hash: AtomicU64,
    start: AtomicU64,
    count: AtomicU64,
}

const EMPTY: u32 = 0;
const CLAIMED: u32 = 1;
const READY: u32 = 2;

static ON: AtomicBool = AtomicBool::new(false);
static PRINT_STATS: AtomicBool = AtomicBool::new(false);
static ARCS: AtomicPtr<ArcSlot> = AtomicPtr::new(core::ptr::null_mut());
static STACKS: AtomicPtr<StackSlot> = AtomicPtr::new(core::ptr::null_mut());
static POOL: AtomicPtr<AtomicU64> = AtomicPtr::new(core::ptr::null_mut());
static SLOTS: AtomicUsize = AtomicUsize::new(0);
static POOL_LEN: AtomicUsize = AtomicUsize::new(0);
static POOL_USED: AtomicUsize = AtomicUsize::new(0);
static EXE_LO: AtomicUsize = AtomicUsize::new(0);
static EXE_HI: AtomicUsize = AtomicUsize::new(0);
static MAIN_TOP: AtomicUsize = AtomicUsize::new(0);
static MAIN_LO: AtomicUsize = AtomicUsize::new(0);
/// The executable segments of the objects loaded at start (the executable first).
const MAX_SEGMENTS: usize = 64;
#[allow(clippy::declare_interior_mutable_const)]
const ZU: AtomicUsize = AtomicUsize::new(0);
static SEG_LO: [AtomicUsize; MAX_SEGMENTS] = [ZU; MAX_SEGMENTS];
static SEG_HI: [AtomicUsize; MAX_SEGMENTS] = [ZU; MAX_SEGMENTS];
static SEG_BIAS: [AtomicUsize; MAX_SEGMENTS] = [ZU; MAX_SEGMENTS];
static SEG_NAME: [AtomicUsize; MAX_SEGMENTS] = [ZU; MAX_SEGMENTS];
static NSEG: AtomicUsize = AtomicUsize::new(0);
static SAMPLE_ID: AtomicU64 = AtomicU64::new(0);

/// What happened to the walks (for the exit report and the tests).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Walks made.
    pub walks: u64,
    /// Chains that ended with `rbp = 0`.
    pub complete: u64,
    /// Chains that broke after leaving the executable (code without frame pointers).
    pub left_fp_code: u64,
    /// Chains that broke inside the executable (a bad frame pointer, a frameless caller).
    pub truncated: u64,
    /// Stacks deeper than [`MAX_DEPTH`].
    pub too_deep: u64,
    /// Samples whose stack pointer was in no known stack (leaf recorded alone).
    pub no_range: u64,
    /// Innermost frames recognised as frameless (leaf or prologue/epilogue).
    pub frameless_leaf: u64,
    /// Arc increments lost to a full table.
    pub arcs_dropped: u64,
    /// Stacks lost to a full table or pool.
    pub stacks_dropped: u64,
}

struct Counters {
    walks: AtomicU64,
    complete: AtomicU64,
    left_fp_code: AtomicU64,
    truncated: AtomicU64,
    too_deep: AtomicU64,
    no_range: AtomicU64,
    frameless_leaf: AtomicU64,
    arcs_dropped: AtomicU64,
    stacks_dropped: AtomicU64,
}

#[allow(clippy::declare_interior_mutable_const)]
const Z: AtomicU64 = AtomicU64::new(0);
static C: Counters = Counters {
    walks: Z,
    complete: Z,
    left_fp_code: Z,
    truncated: Z,
    too_deep: Z,
    no_range: Z,
    frameless_leaf: Z,
    arcs_dropped: Z,
    stacks_dropped: Z,
};

/// Map the tables (`slots` per table, rounded up to a power of two; the pool holds 16 PCs per
/// slot) for an executable whose text is at runtime `[exe_lo, exe_hi)`. Constructor only;
/// false (and stacks stay off) when the memory cannot be reserved.
pub fn enable(slots: usize, exe_lo: usize, exe_hi: usize, print_stats: bool) -> bool {
    PRINT_STATS.store(print_stats, Ordering::Relaxed);
    let slots = slots.clamp(1, 1 << 24).next_power_of_two();
    let pool_len = slots * 16;
    let (Some(a), Some(s), Some(p)) = (
        sys::reserve_zeroed(slots * core::mem::size_of::<ArcSlot>()),
        sys::reserve_zeroed(slots * core::mem::size_of::<StackSlot>()),
        sys::reserve_zeroed(pool_len * 8),
    ) else {
        return false;
    };
    ARCS.store(a as *mut ArcSlot, Ordering::Relaxed);
    STACKS.store(s as *mut StackSlot, Ordering::Relaxed);
    POOL.store(p as *mut AtomicU64, Ordering::Relaxed);
    SLOTS.store(slots, Ordering::Relaxed);
    POOL_LEN.store(pool_len, Ordering::Relaxed);
    EXE_LO.store(exe_lo, Ordering::Relaxed);
    EXE_HI.store(exe_hi, Ordering::Relaxed);
    let top = sys::exec_fn_address();
    let limit = sys::stack_limit().unwrap_or(1 << 30).min(1 << 32) as usize;
    MAIN_TOP.store(top, Ordering::Relaxed);
    MAIN_LO.store(top.saturating_sub(limit), Ordering::Relaxed);
    let mut segs = [sys::Segment {
        lo: 0,
        hi: 0,
        bias: 0,
        name: core::ptr::null(),
    }; MAX_SEGMENTS];
    let n = sys::executable_segments(&mut segs);
    for (i, s) in segs[..n].iter().enumerate() {
        SEG_LO[i].store(s.lo, Ordering::Relaxed);
        SEG_HI[i].store(s.hi, Ordering::Relaxed);
        SEG_BIAS[i].store(s.bias, Ordering::Relaxed);
        SEG_NAME[i].store(s.name as usize, Ordering::Relaxed);
    }
    NSEG.store(n, Ordering::Relaxed);
    ON.store(true, Ordering::Release);
    true
}

/// Is the stacks file to be written (whenever stacks are recorded)?
pub fn write_file() -> bool {
    enabled()
}

/// Are stacks being recorded?
pub fn enabled() -> bool {
    ON.load(Ordering::Acquire)
}

/// The readable stack range `[sp, top)` of the interrupted thread, or `None`.
#[inline]
fn stack_top(sp: usize) -> Option<usize> {
    let tp = sys::thread_pointer();
    if tp > sp && tp - sp <= THREAD_STACK_MAX {
        return Some(tp);
    }
    let top = MAIN_TOP.load(Ordering::Relaxed);
    (sp < top && sp >= MAIN_LO.load(Ordering::Relaxed)).then_some(top)
}

#[inline]
fn in_exe(pc: usize) -> bool {
    let lo = EXE_LO.load(Ordering::Relaxed);
    pc.wrapping_sub(lo) < EXE_HI.load(Ordering::Relaxed).wrapping_sub(lo)
}

/// What a plausible return address says about its call.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Call {
    /// A direct call to this (runtime) address.
    Direct(usize),
    /// An indirect call, or a return address in a shared object (bytes not read).
    Unknown,
}

/// Length of an `ff /2` (indirect call) instruction from its ModRM byte and, when present, its
/// SIB byte: 1 (opcode) + 1 (ModRM) + SIB + displacement.
fn indirect_call_len(modrm: u8, sib: u8) -> Option<usize> {
    if (modrm >> 3) & 7 != 2 {
        return None;
    }
    let (md, rm) = (modrm >> 6, modrm & 7);
    let has_sib = md != 3 && rm == 4;
    let disp = match md {
        0 if rm == 5 => 4,                 // rip-relative
        0 if has_sib && sib & 7 == 5 => 4, // SIB with no base: disp32
        0 => 0,
        1 => 1,
        2 => 4,
        _ => 0,
    };
    Some(2 + usize::from(has_sib) + disp)
}

/// The executable segment (index) holding `pc`: the executable's text first, then the other
/// objects loaded at start.
#[inline]
fn segment(pc: usize) -> Option<usize> {
    if in_exe(pc) {
        return Some(usize::MAX);
    }
    (0..NSEG.load(Ordering::Relaxed).min(MAX_SEGMENTS)).find(|&i| {
        let lo = SEG_LO[i].load(Ordering::Relaxed);
        pc.wrapping_sub(lo) < SEG_HI[i].load(Ordering::Relaxed).wrapping_sub(lo)
    })
}

/// Is `r` a return address (the instruction before it a call)? It must lie in an executable
/// segment known at start, whose bytes are read: segments stay mapped while their object is
/// loaded, and `dlclose` of an object loaded before `main` is rare (its return addresses then
/// end walks instead of faulting only if the range was reused; see Known limitations).
fn return_address(r: usize) -> Option<Call> {
    let lo = match segment(r)? {
        usize::MAX => EXE_LO.load(Ordering::Relaxed),
        i => SEG_LO[i].load(Ordering::Relaxed),
    };
    if r.wrapping_sub(lo) < 8 {
        return None;
    }
    // SAFETY: r - 7 .. r lies inside an executable segment, mapped readable.
    let b = |back: usize| unsafe { sys::read_byte(r - back) };
    if b(5) == 0xe8 {
        let rel = i32::from_le_bytes([b(4), b(3), b(2), b(1)]);
        return Some(Call::Direct(r.wrapping_add(rel as isize as usize)));
    }
    for n in 2..=7 {
        if b(n) == 0xff {
            let sib = if n >= 3 { b(n - 2) } else { 0 };
            if indirect_call_len(b(n - 1), sib) == Some(n) {
                return Some(Call::Unknown);
            }
        }
    }
    None
}

/// Could `r` be the return address into the caller of a frameless function executing `pc`?
fn leaf_return(r: usize, pc: usize) -> bool {
    match return_address(r) {
        Some(Call::Direct(t)) => {
            (t <= pc && pc - t < LEAF_SPAN) || (segment(t).is_some() && segment(t) != segment(pc))
        }
        Some(Call::Unknown) => true,
        None => false,
    }
}

/// How a walk ended.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum End {
    /// `rbp = 0`.
    Complete,
    /// Broke after leaving the executable.
    LeftFpCode,
    /// Broke inside the executable.
    Truncated,
    /// [`MAX_DEPTH`] reached.
    TooDeep,
    /// No known stack range.
    NoRange,
}

/// Walk the stack from `regs`, calling `frame(pc, call)` for each frame, innermost first: the
/// interrupted PC (with `None`), then each return address with what the call says. Returns
/// how it ended and whether the innermost frame was frameless. *Async-signal-safe.*
pub fn walk(regs: Regs, mut frame: impl FnMut(usize, Option<Call>)) -> (End, bool) {
    frame(regs.pc, None);
    let Some(top) = stack_top(regs.sp) else {
        return (End::NoRange, false);
    };
    // SAFETY (for every read_word below): the address and the 7 bytes after it are checked to
    // lie in [sp, top), the interrupted thread's stack, mapped readable (see `stack_top`).
    let readable = |a: usize| a >= regs.sp && a.checked_add(8).is_some_and(|e| e <= top);
    let mut depth = 1;
    let mut fp = regs.fp;
    let mut last_in_exe = in_exe(regs.pc);
    let fp_ret = if fp & 7 == 0 && readable(fp) && readable(fp + 8) {
        // SAFETY: checked just above.
        Some(unsafe { sys::read_word(fp + 8) })
    } else {
        None
    };
    // The innermost frame: frameless (leaf, prologue, epilogue) or not?
    let mut leaf = None;
    if readable(regs.sp) {
        // SAFETY: checked.
        let w0 = unsafe { sys::read_word(regs.sp) };
        let cand = if w0 == fp && readable(regs.sp + 8) {
            // SAFETY: checked.
            unsafe { sys::read_word(regs.sp + 8) }
        } else {
            w0
        };
        if Some(cand) != fp_ret && leaf_return(cand, regs.pc) {
            leaf = Some(cand);
        }
    }
    if let Some(r) = leaf {
        frame(r, return_address(r));
        depth += 1;
        last_in_exe = in_exe(r);
    }
    let mut lo = regs.sp;
    loop {
        if fp == 0 {
            return (End::Complete, leaf.is_some());
        }
        if depth >= MAX_DEPTH {
            return (End::TooDeep, leaf.is_some());
        }
        let broke = if last_in_exe {
            End::Truncated
        } else {
            End::LeftFpCode
        };
        if fp & 7 != 0 || fp < lo || !readable(fp) || !readable(fp + 8) {
            return (broke, leaf.is_some());
        }
        // SAFETY: both words checked just above.
        let (next, ret) = unsafe { (sys::read_word(fp), sys::read_word(fp + 8)) };
        let Some(call) = return_address(ret) else {
            return (broke, leaf.is_some());
        };
        frame(ret, Some(call));
        depth += 1;
        last_in_exe = in_exe(ret);
        if next != 0 && next <= fp {
            return (
                if last_in_exe {
                    End::Truncated
                } else {
                    End::LeftFpCode
                },
                leaf.is_some(),
            );
        }
        lo = fp + 16;
        fp = next;
    }
}

#[inline]
fn mix(h: u64, pc: usize) -> u64 {
    (h.rotate_left(5) ^ pc as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

/// Record the stack of one sample. *Async-signal-safe*: loads, compare-and-swaps and
/// `fetch_add`s on memory mapped at start; `_dl_find_object` for return addresses outside the
/// executable.
#[inline(never)]
pub fn record(regs: Regs) {
    if !ON.load(Ordering::Acquire) {
        return;
    }
    let id = SAMPLE_ID.fetch_add(1, Ordering::Relaxed) + 1;
    let mut hash = 0x5157_4143_4b53u64;
    let mut depth = 0u32;
    let mut callee = 0usize;
    let (end, leaf) = walk(regs, |pc, call| {
        hash = mix(hash, pc);
        if depth > 0 {
            let to = match call {
                Some(Call::Direct(t)) if in_exe(t) => t,
                _ => callee,
            };
            count_arc(pc, to, id);
        }
        callee = pc;
        depth += 1;
    });
    C.walks.fetch_add(1, Ordering::Relaxed);
    let c = match end {
        End::Complete => &C.complete,
        End::LeftFpCode => &C.left_fp_code,
        End::Truncated => &C.truncated,
        End::TooDeep => &C.too_deep,
        End::NoRange => &C.no_range,
    };
    c.fetch_add(1, Ordering::Relaxed);
    if leaf {
        C.frameless_leaf.fetch_add(1, Ordering::Relaxed);
    }
    count_stack(regs, hash, depth);
}

fn arcs() -> &'static [ArcSlot] {
    let p = ARCS.load(Ordering::Relaxed);
    if p.is_null() {
        return &[];
    }
    // SAFETY: `enable` mapped SLOTS zeroed ArcSlots (all-zero is a valid, empty slot of
    // atomics) that are never unmapped.
    unsafe { core::slice::from_raw_parts(p, SLOTS.load(Ordering::Relaxed)) }
}

fn stack_slots() -> &'static [StackSlot] {
    let p = STACKS.load(Ordering::Relaxed);
    if p.is_null() {
        return &[];
    }
    // SAFETY: as in `arcs`.
    unsafe { core::slice::from_raw_parts(p, SLOTS.load(Ordering::Relaxed)) }
}

fn pool() -> &'static [AtomicU64] {
    let p = POOL.load(Ordering::Relaxed);
    if p.is_null() {
        return &[];
    }
    // SAFETY: as in `arcs`, POOL_LEN words.
    unsafe { core::slice::from_raw_parts(p, POOL_LEN.load(Ordering::Relaxed)) }
}

fn count_arc(from: usize, to: usize, id: u64) {
    let t = arcs();
    if t.is_empty() {
        return;
    }
    let mask = t.len() - 1;
    let mut i = (mix(mix(0, from), to) >> 17) as usize & mask;
    for _ in 0..MAX_PROBES {
        let s = &t[i];
        let mut st = s.state.load(Ordering::Acquire);
        if st == EMPTY
            && s.state
                .compare_exchange(EMPTY, CLAIMED, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
        {
            s.from.store(from as u64, Ordering::Relaxed);
            s.to.store(to as u64, Ordering::Relaxed);
            s.state.store(READY, Ordering::Release);
            st = READY;
        }
        if st == READY
            && s.from.load(Ordering::Relaxed) == from as u64
            && s.to.load(Ordering::Relaxed) == to as u64
        {
            if s.stamp.swap(id, Ordering::Relaxed) != id {
                s.count.fetch_add(1, Ordering::Relaxed);
            }
            return;
        }
        i = (i + 1) & mask;
    }
    C.arcs_dropped.fetch_add(1, Ordering::Relaxed);
}

/// Copy the stack's PCs into its pool entries (a second walk; only for a stack seen the first
/// time, out of line so the common path's stack frame stays small).
#[cold]
#[inline(never)]
fn fill(regs: Regs, out: &[AtomicU64]) {
    let mut k = 0;
    walk(regs, |pc, _| {
        if let Some(o) = out.get(k) {
            o.store(pc as u64, Ordering::Relaxed);
        }
        k += 1;
    });
}

fn count_stack(regs: Regs, hash: u64, depth: u32) {
    let t = stack_slots();
    if t.is_empty() {
        return;
    }
    let pool = pool();
    let mask = t.len() - 1;
    let mut i = (hash >> 19) as usize & mask;
    for _ in 0..MAX_PROBES {
        let s = &t[i];
        let st = s.state.load(Ordering::Acquire);
        if st == READY
            && s.hash.load(Ordering::Relaxed) == hash
            && s.depth.load(Ordering::Relaxed) == depth
        {
            s.count.fetch_add(1, Ordering::Relaxed);
            return;
        }
        if st == EMPTY
            && s.state
                .compare_exchange(EMPTY, CLAIMED, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
        {
            let start = POOL_USED.fetch_add(depth as usize, Ordering::Relaxed);
            if start
                .checked_add(depth as usize)
                .is_none_or(|e| e > pool.len())
            {
                // The pool is full: give the slot back and count the stack as dropped.
                s.state.store(EMPTY, Ordering::Release);
                break;
            }
            fill(regs, &pool[start..start + depth as usize]);
            s.hash.store(hash, Ordering::Relaxed);
            s.depth.store(depth, Ordering::Relaxed);
            s.start.store(start as u64, Ordering::Relaxed);
            s.count.store(1, Ordering::Relaxed);
            s.state.store(READY, Ordering::Release);
            return;
        }
        i = (i + 1) & mask;
    }
    C.stacks_dropped.fetch_add(1, Ordering::Relaxed);
}

/// At exit: one warning line when a table was full, and with `PROFIL_STACK_STATS=1` the walk
/// statistics.
pub fn report(warn: impl Fn(&[u8])) {
    use core::fmt::Write;
    if !enabled() {
        return;
    }
    let s = stats();
    if s.arcs_dropped > 0 || s.stacks_dropped > 0 {
        let mut m = crate::buf::FixedBuf::<200>::new();
        let _ = write!(
            m,
            "profil-rt: the stack tables were full (PROFIL_STACK_SLOTS); {} arc counts and {} stacks were not recorded",
            s.arcs_dropped, s.stacks_dropped
        );
        warn(m.as_bytes());
    }
    if PRINT_STATS.load(Ordering::Relaxed) {
        let mut m = crate::buf::FixedBuf::<300>::new();
        let _ = write!(
            m,
            "profil-rt: stacks walks={} complete={} left_fp_code={} truncated={} too_deep={} no_range={} frameless_leaf={} arcs_dropped={} stacks_dropped={}",
            s.walks, s.complete, s.left_fp_code, s.truncated, s.too_deep, s.no_range,
            s.frameless_leaf, s.arcs_dropped, s.stacks_dropped
        );
        warn(m.as_bytes());
    }
}

/// The walk statistics so far.
pub fn stats() -> Stats {
    let l = |a: &AtomicU64| a.load(Ordering::Relaxed);
    Stats {
        walks: l(&C.walks),
        complete: l(&C.complete),
        left_fp_code: l(&C.left_fp_code),
        truncated: l(&C.truncated),
        too_deep: l(&C.too_deep),
        no_range: l(&C.no_range),
        frameless_leaf: l(&C.frameless_leaf),
        arcs_dropped: l(&C.arcs_dropped),
        stacks_dropped: l(&C.stacks_dropped),
    }
}

/// Every arc counted so far: (call site, callee, samples), runtime addresses. Duplicate keys
/// may occur (see the module docs); sum them.
pub fn arcs_iter() -> impl Iterator<Item = (usize, usize, u64)> {
    arcs()
        .iter()
        .filter(|s| s.state.load(Ordering::Acquire) == READY)
        .map(|s| {
            (
                s.from.load(Ordering::Relaxed) as usize,
                s.to.load(Ordering::Relaxed) as usize,
                s.count.load(Ordering::Relaxed),
            )
        })
}

/// Every stack recorded so far: (PCs innermost first, runtime addresses; samples).
pub fn stacks_iter() -> impl Iterator<Item = (&'static [AtomicU64], u64)> {
    let pool = pool();
    stack_slots().iter().filter_map(move |s| {
        if s.state.load(Ordering::Acquire) != READY {
            return None;
        }
        let start = s.start.load(Ordering::Relaxed) as usize;
        let depth = s.depth.load(Ordering::Relaxed) as usize;
        Some((
            pool.get(start..start + depth)?,
            s.count.load(Ordering::Relaxed),
        ))
    })
}

/// The executable segments known at start: (start, end, bias, path), runtime addresses.
pub fn segments() -> impl Iterator<Item = (usize, usize, usize, &'static [u8])> {
    (0..NSEG.load(Ordering::Relaxed).min(MAX_SEGMENTS)).map(|i| {
        let name = SEG_NAME[i].load(Ordering::Relaxed) as *const core::ffi::c_char;
        (
            SEG_LO[i].load(Ordering::Relaxed),
            SEG_HI[i].load(Ordering::Relaxed),
            SEG_BIAS[i].load(Ordering::Relaxed),
            // SAFETY: the loader's name for an object loaded at start; such objects are
            // rarely unloaded, and this is read at exit while they still are loaded (an
            // object dlclose'd since start is the documented exception).
            unsafe { sys::c_str_bytes(name) },
        )
    })
}

/// Forget everything (a forked child starts afresh). The tables' pages are handed back to the
/// kernel (instant, and the child's copies are freed); only if that fails are the slots
/// written one by one, which would fault in every page.
pub fn clear() {
    let a = arcs();
    if !a.is_empty() && !sys::discard_pages(a.as_ptr() as *mut u8, core::mem::size_of_val(a)) {
        for s in a {
            s.state.store(EMPTY, Ordering::Relaxed);
            s.count.store(0, Ordering::Relaxed);
            s.stamp.store(0, Ordering::Relaxed);
        }
    }
    let t = stack_slots();
    if !t.is_empty() && !sys::discard_pages(t.as_ptr() as *mut u8, core::mem::size_of_val(t)) {
        for s in t {
            s.state.store(EMPTY, Ordering::Relaxed);
            s.count.store(0, Ordering::Relaxed);
        }
    }
    let p = pool();
    if !p.is_empty() {
        // The pool's contents are only read through published slots: no need to clear, but its
        // pages are freed in the child all the same.
        let _ = sys::discard_pages(p.as_ptr() as *mut u8, core::mem::size_of_val(p));
    }
    POOL_USED.store(0, Ordering::Relaxed);
    for c in [
        &C.walks,
        &C.complete,
        &C.left_fp_code,
        &C.truncated,
        &C.too_deep,
        &C.no_range,
        &C.frameless_leaf,
        &C.arcs_dropped,
        &C.stacks_dropped,
    ] {
        c.store(0, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indirect_call_lengths() {
        assert_eq!(indirect_call_len(0xd0, 0), Some(2)); // call *%rax
        assert_eq!(indirect_call_len(0x15, 0), Some(6)); // call *disp32(%rip)
        assert_eq!(indirect_call_len(0x50, 0), Some(3)); // call *disp8(%rax)
        assert_eq!(indirect_call_len(0x54, 0x24), Some(4)); // call *disp8(%rsp)
        assert_eq!(indirect_call_len(0x94, 0x24), Some(7)); // call *disp32(%rsp)
        assert_eq!(indirect_call_len(0x10, 0), Some(2)); // call *(%rax)
        assert_eq!(indirect_call_len(0xe0, 0), None); // jmp *%rax (/4)
    }
}
