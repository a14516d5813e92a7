//! Sampled call stacks: a CFI walk in the signal handler, on a stack of our own, aggregated in
//! process into two bounded, preallocated, lock-free tables.
//!
//! # The walk
//!
//! From the interrupted context (every general register) the handler steps from frame to
//! caller with the objects' call frame information ([`crate::unwind`]: `.eh_frame` through
//! `.eh_frame_hdr`, rules cached per address), up to [`MAX_DEPTH`] frames, so frames without
//! frame pointers (gcc's default `-O2`, glibc, libm) keep their callers; frame pointers serve
//! only where an object has no CFI. Every read is checked first, so a bad rule or a garbage
//! register ends the walk and can never fault:
//!
//! * **The interrupted thread's stack range** (`stack_range`), known without a lock or a
//!   system call. The main thread's runs up to the `AT_EXECFN` string the kernel puts at the
//!   top of the initial stack (recorded at start) and reaches down at most `RLIMIT_STACK`. A
//!   thread glibc created keeps its TCB (the thread pointer, `%fs:0`) at the top of the very
//!   mapping whose rest is its stack; the mapping's bounds are read from glibc's thread
//!   descriptor at the offset learned at start ([`crate::sys::stackblock_offset`],
//!   [`crate::sys::thread_stack_block`]), so a stack pointer elsewhere (an alternate signal
//!   stack, a coroutine's stack) is recognised as such. A sample whose stack pointer is in no known stack records the leaf alone and counts
//!   as *no stack range*.
//! * Each frame must lie strictly above the last one, inside the range.
//!
//! The walk ends *complete* when the CFI says the frame is the outermost (its return address is
//! undefined: glibc's `_start` and thread start say so). Otherwise it ends with a reason,
//! counted ([`Stats`]): *no unwind information* (code in no object with CFI and no usable frame
//! pointer: JIT code, a garbage address), *bad unwind* (unusable CFI, a stack word outside the
//! stack, a frame not above the last), *too deep* ([`MAX_DEPTH`] frames kept, innermost
//! first), *no stack range*, and *no walk stack* (every stack of ours in use). A stack that did
//! not end complete is marked *cut* in the stacks file, so a reader can say where walks were
//! cut short.
//!
//! # A stack of our own
//!
//! The handler runs on whatever stack the interrupted code had, possibly a small one, while the
//! CFI evaluation needs several KiB (gimli's context, the frame list). So [`record`] claims one
//! of [`WALK_STACKS`] stacks mapped at start (one compare-and-swap on a bitmap; 64 KiB each
//! with a guard page below), switches to it for the walk ([`crate::sys::run_on_stack`]) and
//! back. When all are in use (more threads inside the handler at once than that), the sample
//! records its leaf alone and counts as *no walk stack*; the handler never waits.
//!
//! # The tables
//!
//! * **Arcs**: (call site, callee) → the number of samples in which that edge was on the
//!   stack, from walks whose every frame was unwound with CFI to the outermost frame or to
//!   the depth limit (complete or too deep): a walk cut short on missing or unusable unwind
//!   information gives no arcs, so GNU gprof reading them is never shown a partial graph that
//!   hands a callee's time to whichever caller happened to be seen. The call site is the return address; the callee is the callee frame's PC (its
//!   return address minus one, which lies inside it). An edge is counted once per sample
//!   however often it recurs: each sample has a number, and a slot counts a sample only when
//!   it swaps in a number different from the one it held (two threads sampled at the same
//!   instant with the same recursive edge can still count it twice).
//! * **Stacks**: whole stacks (leaf first, runtime addresses), deduplicated by a 64-bit hash of
//!   their PCs, their depth and whether they were cut (not compared PC by PC; two of n
//!   distinct stacks collide with a chance of about n²/2⁶⁵), with a count, their PCs in a
//!   bounded pool.
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

use core::ffi::c_void;
use core::sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, Ordering};

use crate::sys;
use crate::unwind::{self, Context, Regs, Stack, Step, Stop};

/// The most frames a walk records (the interrupted PC included); a deeper stack counts as
/// *too deep* and keeps its innermost `MAX_DEPTH` frames.
pub const MAX_DEPTH: usize = 128;
/// Default slots in each table.
pub const DEFAULT_SLOTS: usize = 1 << 15;
/// Probes before an insertion gives up (the table counts as full).
const MAX_PROBES: usize = 64;
/// Stacks of our own for the walk: at most this many handlers walk at once.
pub const WALK_STACKS: usize = 32;
/// Bytes of each (a walk uses 10.8 KiB of them optimized, 18.6 KiB in a debug build, gimli's
/// context and the frame list most of it; the test `a_walk_uses_a_fraction_of_its_stack` holds
/// it under half).
pub const WALK_STACK_BYTES: usize = 64 << 10;

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
    end: AtomicU32,
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
/// The starts of the runtime's own functions that a walk leaves out of the stacks (the thread
/// trampoline, the `pthread_create` wrappers, see [`leave_out`]); 0: a free slot.
static LEFT_OUT: [AtomicUsize; 8] = [const { AtomicUsize::new(0) }; 8];
static MAIN_TOP: AtomicUsize = AtomicUsize::new(0);
static MAIN_LO: AtomicUsize = AtomicUsize::new(0);
/// Offset of `stackblock` in glibc's thread descriptor (0: not found; threads other than the
/// main one then have no known stack range).
static STACKBLOCK_AT: AtomicUsize = AtomicUsize::new(0);
static SAMPLE_ID: AtomicU64 = AtomicU64::new(0);
/// The walk stacks: start of the first, and which are in use (bit i: stack i).
static WALK_BASE: AtomicUsize = AtomicUsize::new(0);
static WALK_BUSY: AtomicU32 = AtomicU32::new(0);

/// How a walk ended.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(u32)]
pub enum End {
    /// The outermost frame was reached.
    Complete = 0,
    /// Code with no unwind information and no usable frame pointer.
    NoInfo = 1,
    /// Unusable unwind information or stack contents.
    BadUnwind = 2,
    /// [`MAX_DEPTH`] reached.
    TooDeep = 3,
    /// No known stack range.
    NoRange = 4,
    /// Every walk stack in use.
    NoWalkStack = 5,
    /// In an object loaded later while a `dlclose` was in progress.
    Unloading = 6,
}

/// A walk's frames: PCs innermost first, and where each frame's function starts (for the
/// arcs; the last frame's is not known).
pub struct Frames {
    /// PCs: the interrupted PC, then return addresses.
    pub pcs: [usize; MAX_DEPTH],
    /// Function starts.
    pub funcs: [usize; MAX_DEPTH],
}

impl Frames {
    /// No frames yet.
    pub fn new() -> Frames {
        Frames {
            pcs: [0; MAX_DEPTH],
            funcs: [0; MAX_DEPTH],
        }
    }
}

impl Default for Frames {
    fn default() -> Frames {
        Frames::new()
    }
}

/// What happened to the walks (for the exit report and the tests).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Walks made.
    pub walks: u64,
    /// Walks that reached the outermost frame.
    pub complete: u64,
    /// Walks that ended in code with no unwind information (no CFI, no usable frame pointer).
    pub no_info: u64,
    /// Walks that ended on unusable unwind information or stack contents, a `dlclose` in
    /// progress, or with no walk stack free.
    pub bad_unwind: u64,
    /// Stacks deeper than [`MAX_DEPTH`].
    pub too_deep: u64,
    /// Samples whose stack pointer was in no known stack (leaf recorded alone).
    pub no_range: u64,
    /// Frames unwound by frame pointer (code without CFI).
    pub fp_frames: u64,
    /// Arc increments lost to a full table.
    pub arcs_dropped: u64,
    /// Stacks lost to a full table or pool.
    pub stacks_dropped: u64,
}

struct Counters {
    walks: AtomicU64,
    complete: AtomicU64,
    no_info: AtomicU64,
    bad_unwind: AtomicU64,
    too_deep: AtomicU64,
    no_range: AtomicU64,
    fp_frames: AtomicU64,
    arcs_dropped: AtomicU64,
    stacks_dropped: AtomicU64,
}

#[allow(clippy::declare_interior_mutable_const)]
const Z: AtomicU64 = AtomicU64::new(0);
static C: Counters = Counters {
    walks: Z,
    complete: Z,
    no_info: Z,
    bad_unwind: Z,
    too_deep: Z,
    no_range: Z,
    fp_frames: Z,
    arcs_dropped: Z,
    stacks_dropped: Z,
};

/// Map the tables (`slots` per table, rounded up to a power of two; the pool holds 16 PCs per
/// slot) and the walk stacks, and list the loaded objects' unwind information. Constructor
/// only; false (and stacks stay off) when the memory cannot be reserved.
pub fn enable(slots: usize, print_stats: bool, fp_only: bool) -> bool {
    PRINT_STATS.store(print_stats, Ordering::Relaxed);
    let slots = slots.clamp(1, 1 << 24).next_power_of_two();
    let pool_len = slots * 16;
    let (Some(a), Some(s), Some(p), Some(w)) = (
        sys::reserve_zeroed(slots * core::mem::size_of::<ArcSlot>()),
        sys::reserve_zeroed(slots * core::mem::size_of::<StackSlot>()),
        sys::reserve_zeroed(pool_len * 8),
        sys::map_stacks(WALK_STACKS, WALK_STACK_BYTES),
    ) else {
        return false;
    };
    ARCS.store(a as *mut ArcSlot, Ordering::Relaxed);
    STACKS.store(s as *mut StackSlot, Ordering::Relaxed);
    POOL.store(p as *mut AtomicU64, Ordering::Relaxed);
    WALK_BASE.store(w as usize, Ordering::Relaxed);
    SLOTS.store(slots, Ordering::Relaxed);
    POOL_LEN.store(pool_len, Ordering::Relaxed);
    let top = sys::exec_fn_address();
    let limit = sys::stack_limit().unwrap_or(1 << 30).min(1 << 32) as usize;
    MAIN_TOP.store(top, Ordering::Relaxed);
    MAIN_LO.store(top.saturating_sub(limit), Ordering::Relaxed);
    STACKBLOCK_AT.store(sys::stackblock_offset().unwrap_or(0), Ordering::Relaxed);
    unwind::enable(fp_only);
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

/// The readable stack `[sp, top)` of the interrupted thread, or `None` when `sp` lies in no
/// stack we know the bounds of (see the module docs).
#[inline]
fn stack_range(sp: usize) -> Option<Stack> {
    let main = || {
        let top = MAIN_TOP.load(Ordering::Relaxed);
        (sp < top && sp >= MAIN_LO.load(Ordering::Relaxed)).then_some(Stack { lo: sp, hi: top })
    };
    let at = STACKBLOCK_AT.load(Ordering::Relaxed);
    if at == 0 {
        return main();
    }
    let (block, size) = sys::thread_stack_block(at)?;
    if block == 0 {
        return main(); // glibc's initial thread
    }
    let tp = sys::thread_pointer();
    let end = block.checked_add(size)?;
    (block <= sp && sp < tp && tp < end).then_some(Stack { lo: sp, hi: tp })
}

/// Leave the frames of the function starting at `func` out of every walk from now on: the
/// runtime's thread trampoline, which the program's threads start through, and its
/// `pthread_create`, which the program calls (`threads`). Beyond the table's few slots a
/// function stays in. Not for a signal handler (slots are claimed with a compare-exchange,
/// which is async-signal-safe, but nothing here needs it to be).
pub fn leave_out(func: usize) {
    for slot in &LEFT_OUT {
        match slot.compare_exchange(0, func, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => return,
            Err(held) if held == func => return,
            Err(_) => {}
        }
    }
}

/// Whether the function starting at `func` is one [`leave_out`] named. *Async-signal-safe.*
fn left_out(func: usize) -> bool {
    func != 0
        && LEFT_OUT
            .iter()
            .any(|slot| slot.load(Ordering::Relaxed) == func)
}

/// Walk the stack from the interrupted registers `gregs` into `out` (PCs innermost first: the
/// interrupted PC, then return addresses). Returns the number of frames and how the walk
/// ended. *Async-signal-safe.*
pub fn walk(gregs: [usize; unwind::NREGS], out: &mut Frames, ctx: &mut Context) -> (usize, End) {
    match stack_range(gregs[unwind::RSP]) {
        Some(stack) => walk_on(gregs, stack, out, ctx),
        None => {
            out.pcs[0] = gregs[unwind::RA];
            (1, End::NoRange)
        }
    }
}

/// [`walk`] within a known stack range.
fn walk_on(
    gregs: [usize; unwind::NREGS],
    stack: Stack,
    out: &mut Frames,
    ctx: &mut Context,
) -> (usize, End) {
    let mut regs = Regs::all(gregs);
    out.pcs[0] = regs.pc();
    let mut n = 1;
    let mut exact = true;
    loop {
        match unwind::step(&regs, exact, &stack, ctx) {
            Step::Outermost => return (n, End::Complete),
            Step::Stopped(why) => {
                return match why {
                    // A return address that is not code was no frame: leave it out.
                    Stop::NotCode if n > 1 => (n - 1, End::NoInfo),
                    Stop::NotCode | Stop::NoInfo => (n, End::NoInfo),
                    Stop::BadUnwind => (n, End::BadUnwind),
                    Stop::Unloading => (n, End::Unloading),
                };
            }
            Step::Caller {
                regs: next,
                exact: e,
                via_fp,
                func,
            } => {
                if next.sp() <= regs.sp() || next.sp() > stack.hi {
                    return (n, End::BadUnwind);
                }
                if next.pc() == 0 {
                    // A zero return address ends a chain (code built without CFI marks its
                    // outermost frame so).
                    return (n, End::Complete);
                }
                if via_fp {
                    C.fp_frames.fetch_add(1, Ordering::Relaxed);
                }
                if left_out(func) && n > 1 {
                    // The frame just left is the runtime's own (its thread trampoline or its
                    // pthread_create): leave it out, so that the thread's start routine is
                    // called from where the program would have called it (glibc's
                    // start_thread) and libc's pthread_create from the program, in stacks and
                    // arcs alike. Frame n - 2's function start stays the one recorded when it
                    // was left.
                    n -= 1;
                } else {
                    if n == MAX_DEPTH {
                        return (n, End::TooDeep);
                    }
                    out.funcs[n - 1] = func;
                }
                out.pcs[n] = next.pc();
                n += 1;
                regs = next;
                exact = e;
            }
        }
    }
}

#[inline]
fn mix(h: u64, pc: usize) -> u64 {
    (h.rotate_left(5) ^ pc as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

/// Claim a walk stack (one compare-and-swap on the bitmap; `None` when all are in use).
fn claim_walk_stack() -> Option<usize> {
    if WALK_BASE.load(Ordering::Relaxed) == 0 {
        return None;
    }
    let mut cur = WALK_BUSY.load(Ordering::Relaxed);
    for _ in 0..8 {
        let free = !cur;
        if free == 0 {
            return None;
        }
        let i = free.trailing_zeros();
        match WALK_BUSY.compare_exchange_weak(
            cur,
            cur | 1 << i,
            Ordering::Acquire,
            Ordering::Relaxed,
        ) {
            Ok(_) => return Some(i as usize),
            Err(now) => cur = now,
        }
    }
    None
}

/// Record the stack of one sample. *Async-signal-safe*: a compare-and-swap to claim a walk
/// stack, the walk on it ([`walk`]), then loads, compare-and-swaps and `fetch_add`s on memory
/// mapped at start. The handler's own stack use stays small: the walk runs on ours.
///
/// # Safety
/// `uctx` must be the `ucontext_t` pointer the kernel passed to the sampling handler.
#[inline(never)]
pub unsafe fn record(uctx: *mut c_void) {
    if !ON.load(Ordering::Acquire) {
        return;
    }
    let Some(i) = claim_walk_stack() else {
        // SAFETY: as the caller guarantees.
        count_walk(
            &[unsafe { sys::interrupted_pc(uctx) }],
            &[],
            End::NoWalkStack,
        );
        return;
    };
    let top = WALK_BASE.load(Ordering::Relaxed)
        + i * (WALK_STACK_BYTES + sys::STACK_GUARD)
        + WALK_STACK_BYTES;
    // SAFETY: stack i is ours until released below (claimed in the bitmap), WALK_STACK_BYTES
    // of writable memory ending at `top` (page-aligned, so 16-byte aligned); `walk_here` takes
    // the ucontext pointer the caller guarantees.
    unsafe { sys::run_on_stack(top, walk_here, uctx) };
    WALK_BUSY.fetch_and(!(1 << i), Ordering::Release);
}

/// The walk, on one of our stacks. `uctx` is the kernel's ucontext of the sample ([`record`]
/// passes nothing else).
extern "C" fn walk_here(uctx: *mut c_void) {
    // SAFETY: `record` passes the kernel's ucontext.
    let gregs = unsafe { sys::interrupted_gregs(uctx) };
    let mut ctx = Context::new_in();
    let mut frames = Frames::new();
    let (n, end) = walk(gregs, &mut frames, &mut ctx);
    count_walk(&frames.pcs[..n], &frames.funcs[..n], end);
}

/// Count one walk's statistics, arcs (walks unwound to the outermost frame or the depth limit)
/// and stack. `funcs[k]`: where frame k's function starts.
fn count_walk(pcs: &[usize], funcs: &[usize], end: End) {
    C.walks.fetch_add(1, Ordering::Relaxed);
    let c = match end {
        End::Complete => &C.complete,
        End::NoInfo => &C.no_info,
        End::BadUnwind | End::Unloading | End::NoWalkStack => &C.bad_unwind,
        End::TooDeep => &C.too_deep,
        End::NoRange => &C.no_range,
    };
    c.fetch_add(1, Ordering::Relaxed);
    if matches!(end, End::Complete | End::TooDeep) {
        let id = SAMPLE_ID.fetch_add(1, Ordering::Relaxed) + 1;
        for k in 1..pcs.len().min(funcs.len()) {
            // The callee: where its function starts (so that every call site of one caller
            // into one callee is one arc, counted once per sample).
            count_arc(pcs[k], funcs[k - 1], id);
        }
    }
    let mut hash = 0x5157_4143_4b53u64 ^ end as u64;
    for &pc in pcs {
        hash = mix(hash, pc);
    }
    count_stack(pcs, hash, end);
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

fn count_stack(pcs: &[usize], hash: u64, end: End) {
    let t = stack_slots();
    if t.is_empty() {
        return;
    }
    let depth = pcs.len() as u32;
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
            let start = POOL_USED.fetch_add(pcs.len(), Ordering::Relaxed);
            let Some(out) = start
                .checked_add(pcs.len())
                .and_then(|e| pool.get(start..e))
            else {
                // The pool is full: give the slot back and count the stack as dropped.
                s.state.store(EMPTY, Ordering::Release);
                break;
            };
            for (o, &pc) in out.iter().zip(pcs) {
                o.store(pc as u64, Ordering::Relaxed);
            }
            s.hash.store(hash, Ordering::Relaxed);
            s.depth.store(depth, Ordering::Relaxed);
            s.end.store(end as u32, Ordering::Relaxed);
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
            "profil-rt: stacks walks={} complete={} no_info={} bad_unwind={} too_deep={} no_range={} fp_frames={} arcs_dropped={} stacks_dropped={}",
            s.walks, s.complete, s.no_info, s.bad_unwind, s.too_deep, s.no_range,
            s.fp_frames, s.arcs_dropped, s.stacks_dropped
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
        no_info: l(&C.no_info),
        bad_unwind: l(&C.bad_unwind),
        too_deep: l(&C.too_deep),
        no_range: l(&C.no_range),
        fp_frames: l(&C.fp_frames),
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

/// Every stack recorded so far: (PCs innermost first, runtime addresses; samples; whether the
/// walk was cut short of the outermost frame).
pub fn stacks_iter() -> impl Iterator<Item = (&'static [AtomicU64], u64, bool)> {
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
            s.end.load(Ordering::Relaxed) != End::Complete as u32,
        ))
    })
}

/// The executable segments known at start: (start, end, bias, path), runtime addresses.
pub fn segments() -> impl Iterator<Item = (usize, usize, usize, &'static [u8])> {
    unwind::segments()
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
    // Only the forking thread exists in the child: no walk stack is in use.
    WALK_BUSY.store(0, Ordering::Relaxed);
    unwind::after_fork();
    for c in [
        &C.walks,
        &C.complete,
        &C.no_info,
        &C.bad_unwind,
        &C.too_deep,
        &C.no_range,
        &C.fp_frames,
        &C.arcs_dropped,
        &C.stacks_dropped,
    ] {
        c.store(0, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The registers of the function it is written in, at this point (PC, stack and frame
    /// pointer; the others 0), as a signal would see them: walk from them while the frame
    /// is live.
    macro_rules! regs_here {
        () => {{
            let (sp, fp, pc): (usize, usize, usize);
            // SAFETY: reads two registers and the address of a label; no side effect.
            unsafe {
                core::arch::asm!("lea {pc}, [rip]", "mov {sp}, rsp", "mov {fp}, rbp",
                    pc = out(reg) pc, sp = out(reg) sp, fp = out(reg) fp)
            };
            let mut g = [0usize; unwind::NREGS];
            g[unwind::RSP] = sp;
            g[unwind::RBP] = fp;
            g[unwind::RA] = pc;
            g
        }};
    }

    /// A walk from this very function's registers, on the test thread's stack, reaches the
    /// outermost frame through Rust and libc code (the test binary has no frame pointers).
    #[test]
    fn a_walk_from_here_reaches_the_outermost_frame() {
        assert!(enable(1 << 10, false, false));
        let mut ctx = Context::new_in();
        let mut f = Frames::new();
        let (n, end) = walk_from_here(&mut f, &mut ctx);
        assert_eq!(end, End::Complete, "{:x?}", &f.pcs[..n]);
        assert!(n >= 4, "{n}");
        // The innermost frame's function starts at or before its PC, close by.
        assert!(f.funcs[0] <= f.pcs[0] && f.pcs[0] - f.funcs[0] < 4096);
        // A second walk (from another call site in this test) gives the same stack above the
        // test function, now from the rule cache.
        let mut again = Frames::new();
        let (m, end2) = walk_from_here(&mut again, &mut ctx);
        assert_eq!((m, end2), (n, end));
        assert_eq!(f.pcs[2..n], again.pcs[2..m]);
        assert_eq!(f.funcs[..n - 1], again.funcs[..m - 1]);
    }

    /// The walk's own stack use, measured: a walk of this thread's stack (gimli's first
    /// evaluation of every frame, then the cached one) runs on a stack of ours filled with a
    /// pattern, and the bytes it changed are counted. It must stay well inside
    /// WALK_STACK_BYTES (under half, in a debug build too).
    #[test]
    fn a_walk_uses_a_fraction_of_its_stack() {
        assert!(enable(1 << 10, false, false));
        struct Job {
            gregs: [usize; unwind::NREGS],
            stack: Stack,
            n: usize,
        }
        extern "C" fn on_ours(p: *mut c_void) {
            // SAFETY: `p` is the test's Job, alive for the call.
            let job = unsafe { &mut *(p as *mut Job) };
            let mut ctx = Context::new_in();
            let mut f = Frames::new();
            job.n = walk_on(job.gregs, job.stack, &mut f, &mut ctx).0;
        }
        let base = sys::map_stacks(1, WALK_STACK_BYTES).unwrap();
        // SAFETY: the stack just mapped, WALK_STACK_BYTES long, used by nothing else.
        let mem = unsafe { core::slice::from_raw_parts_mut(base, WALK_STACK_BYTES) };
        let mut most = 0;
        for _ in 0..2 {
            mem.fill(0xa5);
            let gregs = regs_here!();
            let mut job = Job {
                gregs,
                stack: stack_range(gregs[unwind::RSP]).expect("the test thread's stack is known"),
                n: 0,
            };
            // SAFETY: our stack (page-aligned end), and `on_ours` takes the Job.
            unsafe {
                sys::run_on_stack(
                    base as usize + WALK_STACK_BYTES,
                    on_ours,
                    &mut job as *mut Job as *mut c_void,
                )
            };
            assert!(job.n >= 4, "{}", job.n);
            let untouched = mem.iter().take_while(|&&b| b == 0xa5).count();
            most = most.max(WALK_STACK_BYTES - untouched);
        }
        eprintln!("a walk used {most} bytes of its stack");
        assert!(most < WALK_STACK_BYTES / 2, "{most}");
    }

    /// Walk from this function's own registers, while its frame is live.
    #[inline(never)]
    fn walk_from_here(out: &mut Frames, ctx: &mut Context) -> (usize, End) {
        walk(regs_here!(), out, ctx)
    }
}
