//! One step of a stack walk: from a frame's registers to its caller's, with the call frame
//! information (CFI) every loaded object carries for exception handling (`.eh_frame`, found
//! through `.eh_frame_hdr`), so that frames without frame pointers are walked as exactly as
//! `perf --call-graph dwarf` does offline. Called from the signal handler ([`crate::stacks`]).
//!
//! # Finding the CFI for a PC
//!
//! * The objects loaded when sampling starts (the executable, its libraries, the vDSO) are
//!   listed once in the constructor with `dl_iterate_phdr` ([`enable`]): their executable
//!   segments and where their `.eh_frame_hdr` and the readable segment holding it lie
//!   ([`sys::Cfi`]). These objects are never unloaded (the loader keeps an executable's
//!   dependencies until exit).
//! * A PC outside them (an object loaded later with `dlopen`) is looked up with glibc's
//!   `_dl_find_object` (lock-free, async-signal-safe), which gives the object's
//!   `.eh_frame_hdr`; its program headers, read where the loader mapped its first page, bound
//!   the reads ([`sys::headers_at`]).
//! * `.eh_frame_hdr`'s sorted table finds the FDE by binary search (gimli's `EhHdrTable`);
//!   gimli runs the CIE and FDE programs up to the PC in an [`UnwindContext`] whose storage is
//!   fixed-size arrays, so nothing is allocated. DWARF expressions (the PLT's CFA, glibc's
//!   signal trampoline `__restore_rt`, stack realignment in `main`) are evaluated with
//!   gimli's [`Evaluation`], likewise on fixed storage, with its memory reads bounded to the
//!   interrupted thread's stack. The one signal trampoline without CFI is our own
//!   ([`crate::sys::restorer`], given to the handlers a program installs through our
//!   `sigaction`): a frame returning there is followed into the `ucontext_t` the kernel saved.
//!
//! Every read of an object's CFI stays inside the object's mapped, readable segment that holds
//! `.eh_frame_hdr` (gimli's reader is a slice of it, so a corrupt offset is an error, not a
//! fault); every read of the stack stays inside the thread's stack range ([`Stack`]).
//!
//! # The rule cache
//!
//! Evaluating a frame's CFI costs a binary search, a CIE and an FDE parse and a program run
//! (about a microsecond). Most samples repeat frames, so the result is cached per lookup
//! address in a preallocated, insert-only, lock-free table ([`enable`]): when the rule has the
//! usual shape (CFA = `rsp` or `rbp` + offset, return address and `rbp` saved at fixed offsets
//! from the CFA) it is packed into one word, published with a release store of its key, and
//! a repeated frame costs one hash probe. Rules of other shapes (expressions, signal
//! trampolines) are evaluated every time. A full table just stops caching. After a
//! cached step, only `rsp`, `rbp` and the return address are known; a later frame whose rule
//! needs another register evaluates it from scratch and stops if it cannot.
//!
//! # Where frame pointers still serve
//!
//! Code in no object with CFI (JIT code, an object without `.eh_frame_hdr`): the caller is
//! taken from the frame-pointer chain (`[rbp]`, `[rbp + 8]`) when `rbp` lies above the stack
//! pointer on the stack, and only if the return address found lands in a known object.
//! Anything else ends the walk with a reason ([`Stop`]).
//!
//! # dlclose
//!
//! An object loaded later may be unloaded by another thread while a handler reads its CFI.
//! A correct program never unloads an object whose code a thread is running or will return
//! into, so a walk that follows real frames never meets one; the shared object also wraps
//! `dlclose` ([`unloading`]): while one is in progress, handlers do not read the CFI of objects
//! loaded later (their walks stop there, counted), and the wrapper waits until no handler is
//! reading it before the object can go. The rule cache is emptied after each `dlclose`.

use core::sync::atomic::{AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, Ordering};

use gimli::{
    BaseAddresses, CfaRule, EhFrame, EhFrameHdr, EndianSlice, Evaluation, EvaluationResult,
    EvaluationStorage, Expression, Location, NativeEndian, Piece, Pointer, Reader, Register,
    RegisterRule, UnwindContext, UnwindContextStorage, UnwindSection, UnwindTableRow, Value,
};

use crate::sys;

/// DWARF's number for `rbp`.
pub const RBP: usize = 6;
/// DWARF's number for `rsp`.
pub const RSP: usize = 7;
/// The return address column (x86-64), which holds `rip`.
pub const RA: usize = 16;
/// Registers tracked (DWARF 0–16).
pub const NREGS: usize = 17;

/// The registers of one frame, and which of them are known.
#[derive(Clone, Copy, Debug)]
pub struct Regs {
    r: [usize; NREGS],
    known: u32,
}

impl Regs {
    /// All registers known (the interrupted context), in DWARF order.
    pub fn all(r: [usize; NREGS]) -> Regs {
        Regs {
            r,
            known: (1 << NREGS) - 1,
        }
    }

    fn none() -> Regs {
        Regs {
            r: [0; NREGS],
            known: 0,
        }
    }

    fn get(&self, i: usize) -> Option<usize> {
        (i < NREGS && self.known & (1 << i) != 0).then(|| self.r[i])
    }

    fn set(&mut self, i: usize, v: Option<usize>) {
        if let Some(v) = v {
            self.r[i] = v;
            self.known |= 1 << i;
        } else {
            self.known &= !(1 << i);
        }
    }

    /// The frame's PC.
    pub fn pc(&self) -> usize {
        self.r[RA]
    }

    /// The frame's stack pointer.
    pub fn sp(&self) -> usize {
        self.r[RSP]
    }
}

/// Callee-saved in the SysV x86-64 ABI (`rbx`, `rbp`, `r12`–`r15`): unchanged in the caller
/// unless the CFI says where they were saved.
fn callee_saved(i: usize) -> bool {
    matches!(i, 3 | 6 | 12..=15)
}

/// The thread stack a walk may read: `[lo, hi)`, all mapped.
#[derive(Clone, Copy, Debug)]
pub struct Stack {
    /// Lowest readable address (the interrupted stack pointer).
    pub lo: usize,
    /// End of the stack (exclusive).
    pub hi: usize,
}

impl Stack {
    /// The word at `a`, if all 8 bytes lie in the stack.
    #[inline]
    pub fn read(&self, a: usize) -> Option<usize> {
        if a >= self.lo && a.checked_add(8)? <= self.hi {
            // SAFETY: [a, a + 8) lies in [lo, hi), the interrupted thread's stack, mapped
            // readable (see `crate::stacks::stack_range`).
            Some(unsafe { sys::read_word(a) })
        } else {
            None
        }
    }
}

/// Why a walk stopped short of the outermost frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// The PC lies in no code with CFI and no usable frame pointer leads on (JIT code, a
    /// stripped object, a garbage return address).
    NoInfo,
    /// The CFI could not be used (malformed, an unsupported rule, a register it needs is not
    /// known) or led to a stack word outside the stack, or to a frame not above the last one.
    BadUnwind,
    /// The PC lies in an object loaded later while a `dlclose` is in progress.
    Unloading,
    /// The PC lies in no loaded object: not code (a garbage return address), or code the
    /// loader does not know (JIT code) whose frame pointer leads nowhere.
    NotCode,
}

/// The result of one step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// The caller's frame.
    Caller {
        /// Its registers (those the CFI restores).
        regs: Regs,
        /// Its PC is exact (a signal interrupted it there), not a return address.
        exact: bool,
        /// Found through the frame-pointer chain, not CFI.
        via_fp: bool,
        /// Where the function of the frame stepped from starts (its FDE's first address; the
        /// frame's lookup address when not known).
        func: usize,
    },
    /// This frame is the outermost (its return address is undefined: `_start`, a thread's
    /// start).
    Outermost,
    /// The walk cannot go on.
    Stopped(Stop),
}

impl PartialEq for Regs {
    fn eq(&self, o: &Regs) -> bool {
        self.known == o.known && (0..NREGS).all(|i| self.get(i) == o.get(i))
    }
}
impl Eq for Regs {}

// ---------------------------------------------------------------------------------------
// The objects loaded at start.

/// The most executable segments listed at start.
pub const MAX_SEGMENTS: usize = 128;
#[allow(clippy::declare_interior_mutable_const)]
const ZU: AtomicUsize = AtomicUsize::new(0);
static SEG_LO: [AtomicUsize; MAX_SEGMENTS] = [ZU; MAX_SEGMENTS];
static SEG_HI: [AtomicUsize; MAX_SEGMENTS] = [ZU; MAX_SEGMENTS];
static SEG_BIAS: [AtomicUsize; MAX_SEGMENTS] = [ZU; MAX_SEGMENTS];
static SEG_NAME: [AtomicUsize; MAX_SEGMENTS] = [ZU; MAX_SEGMENTS];
static SEG_HDR: [AtomicUsize; MAX_SEGMENTS] = [ZU; MAX_SEGMENTS];
static SEG_CFI_LO: [AtomicUsize; MAX_SEGMENTS] = [ZU; MAX_SEGMENTS];
static SEG_CFI_HI: [AtomicUsize; MAX_SEGMENTS] = [ZU; MAX_SEGMENTS];
static NSEG: AtomicUsize = AtomicUsize::new(0);
/// `_dl_find_object`, or 0.
static FIND: AtomicUsize = AtomicUsize::new(0);

/// The rule cache: `CACHE_SLOTS` triples of words (key, rule, function start).
const CACHE_SLOTS: usize = 1 << 15;
const CACHE_PROBES: usize = 8;
static CACHE: AtomicPtr<AtomicU64> = AtomicPtr::new(core::ptr::null_mut());
/// A key being written.
const CLAIMED: u64 = 1;

/// Handlers reading the CFI of an object loaded later, and `dlclose` calls in progress.
static READING_LATER: AtomicU32 = AtomicU32::new(0);
static UNLOADING: AtomicU32 = AtomicU32::new(0);

/// `PROFIL_STACKS=fp`: frame pointers only (a benchmark setting).
static FP_ONLY: core::sync::atomic::AtomicBool = core::sync::atomic::AtomicBool::new(false);

/// List the objects loaded now and map the rule cache; with `fp_only`, walk by frame pointers
/// alone (`PROFIL_STACKS=fp`, to compare the two walks' cost and accuracy). Constructor only.
pub fn enable(fp_only: bool) {
    FP_ONLY.store(fp_only, Ordering::Relaxed);
    let mut segs = [sys::Segment {
        lo: 0,
        hi: 0,
        bias: 0,
        name: core::ptr::null(),
        cfi: sys::Cfi::default(),
    }; MAX_SEGMENTS];
    let n = sys::executable_segments(&mut segs);
    for (i, s) in segs[..n].iter().enumerate() {
        SEG_LO[i].store(s.lo, Ordering::Relaxed);
        SEG_HI[i].store(s.hi, Ordering::Relaxed);
        SEG_BIAS[i].store(s.bias, Ordering::Relaxed);
        SEG_NAME[i].store(s.name as usize, Ordering::Relaxed);
        SEG_HDR[i].store(s.cfi.hdr, Ordering::Relaxed);
        SEG_CFI_LO[i].store(s.cfi.lo, Ordering::Relaxed);
        SEG_CFI_HI[i].store(s.cfi.hi, Ordering::Relaxed);
    }
    NSEG.store(n, Ordering::Relaxed);
    FIND.store(sys::find_object_function(), Ordering::Relaxed);
    if let Some(p) = sys::reserve_zeroed(CACHE_SLOTS * 24) {
        CACHE.store(p as *mut AtomicU64, Ordering::Release);
    }
}

/// The executable segments known at start: (start, end, bias, path), runtime addresses; the
/// executable's first.
pub fn segments() -> impl Iterator<Item = (usize, usize, usize, &'static [u8])> {
    (0..NSEG.load(Ordering::Relaxed).min(MAX_SEGMENTS)).map(|i| {
        let name = SEG_NAME[i].load(Ordering::Relaxed) as *const core::ffi::c_char;
        (
            SEG_LO[i].load(Ordering::Relaxed),
            SEG_HI[i].load(Ordering::Relaxed),
            SEG_BIAS[i].load(Ordering::Relaxed),
            // SAFETY: the loader's name for an object loaded at start, which stays loaded
            // (the executable's dependencies are never unloaded).
            unsafe { sys::c_str_bytes(name) },
        )
    })
}

/// Where `pc`'s object keeps its CFI, and whether the object was loaded at start.
#[derive(Clone, Copy)]
enum Found {
    /// Loaded at start (never unloaded).
    Start(sys::Cfi),
    /// Loaded later (may be unloaded).
    Later(sys::Cfi),
    /// In no object.
    Nowhere,
}

/// The segment listed at start that holds `pc`.
fn start_segment(pc: usize) -> Option<usize> {
    (0..NSEG.load(Ordering::Relaxed).min(MAX_SEGMENTS)).find(|&i| {
        let lo = SEG_LO[i].load(Ordering::Relaxed);
        pc.wrapping_sub(lo) < SEG_HI[i].load(Ordering::Relaxed).wrapping_sub(lo)
    })
}

fn find(pc: usize) -> Found {
    if let Some(i) = start_segment(pc) {
        return Found::Start(sys::Cfi {
            hdr: SEG_HDR[i].load(Ordering::Relaxed),
            lo: SEG_CFI_LO[i].load(Ordering::Relaxed),
            hi: SEG_CFI_HI[i].load(Ordering::Relaxed),
        });
    }
    let Some(o) = sys::find_object(FIND.load(Ordering::Relaxed), pc) else {
        return Found::Nowhere;
    };
    let cfi = sys::headers_at(o.map_start, o.map_end)
        .map(|ph| sys::Cfi::from_phdrs(o.bias as usize, ph))
        .filter(|c| c.hdr == o.eh_frame_hdr && o.map_start <= c.lo && c.hi <= o.map_end)
        .unwrap_or_default();
    Found::Later(cfi)
}

/// Is `pc` in a loaded object (as far as a lock-free look can tell)? Only the lookup, not the
/// object's CFI: a frame-pointer step asks it of every return address.
fn in_code(pc: usize) -> bool {
    start_segment(pc).is_some() || sys::find_object(FIND.load(Ordering::Relaxed), pc).is_some()
}

// ---------------------------------------------------------------------------------------
// The rule cache.

/// A rule in one word (bit 63 set; 0 is an empty slot):
/// bits 0–1 CFA base (0 `rsp`, 1 `rbp`), 2–33 CFA offset (i32), 34–35 `rbp` (0 unchanged,
/// 1 saved at CFA + offset, 2 unknown), 36–51 that offset (i16), 52–59 the return address's
/// offset from the CFA (i8), 60 outermost frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Packed(u64);

impl Packed {
    fn new(
        cfa_base: usize,
        cfa_off: i64,
        rbp: RegisterRule<usize>,
        ra: &RegisterRule<usize>,
    ) -> Option<Packed> {
        let base = match cfa_base {
            RSP => 0u64,
            RBP => 1,
            _ => return None,
        };
        let cfa_off = i32::try_from(cfa_off).ok()?;
        let (rbp_kind, rbp_off) = match rbp {
            RegisterRule::SameValue => (0u64, 0i16),
            RegisterRule::Offset(o) => (1, i16::try_from(o).ok()?),
            RegisterRule::Undefined => (2, 0),
            _ => return None,
        };
        let (end, ra_off) = match *ra {
            RegisterRule::Offset(o) => (0u64, i8::try_from(o).ok()?),
            RegisterRule::Undefined => (1, 0),
            _ => return None,
        };
        Some(Packed(
            1 << 63
                | base
                | (cfa_off as u32 as u64) << 2
                | rbp_kind << 34
                | (rbp_off as u16 as u64) << 36
                | (ra_off as u8 as u64) << 52
                | end << 60,
        ))
    }

    fn apply(self, regs: &Regs, stack: &Stack, func: usize) -> Step {
        let v = self.0;
        let base = if v & 3 == 0 { RSP } else { RBP };
        let cfa_off = (v >> 2) as u32 as i32 as isize;
        let rbp_kind = (v >> 34) & 3;
        let rbp_off = (v >> 36) as u16 as i16 as isize;
        let ra_off = (v >> 52) as u8 as i8 as isize;
        if v >> 60 & 1 != 0 {
            return Step::Outermost;
        }
        let Some(cfa) = regs.get(base).map(|b| b.wrapping_add_signed(cfa_off)) else {
            return Step::Stopped(Stop::BadUnwind);
        };
        let Some(ra) = stack.read(cfa.wrapping_add_signed(ra_off)) else {
            return Step::Stopped(Stop::BadUnwind);
        };
        let rbp = match rbp_kind {
            0 => regs.get(RBP),
            1 => stack.read(cfa.wrapping_add_signed(rbp_off)),
            _ => None,
        };
        let mut next = Regs::none();
        next.set(RSP, Some(cfa));
        next.set(RA, Some(ra));
        next.set(RBP, rbp);
        Step::Caller {
            regs: next,
            exact: false,
            via_fp: false,
            func,
        }
    }
}

fn cache() -> &'static [AtomicU64] {
    let p = CACHE.load(Ordering::Acquire);
    if p.is_null() {
        return &[];
    }
    // SAFETY: `enable` mapped CACHE_SLOTS triples of zeroed words (atomics, all-zero valid),
    // never unmapped.
    unsafe { core::slice::from_raw_parts(p, CACHE_SLOTS * 3) }
}

#[inline]
fn slot_of(key: u64) -> usize {
    ((key.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 40) as usize) & (CACHE_SLOTS - 1)
}

fn cache_get(key: u64) -> Option<(Packed, usize)> {
    let t = cache();
    if t.is_empty() {
        return None;
    }
    let mut i = slot_of(key);
    for _ in 0..CACHE_PROBES {
        let k = t[3 * i].load(Ordering::Acquire);
        if k == key {
            return Some((
                Packed(t[3 * i + 1].load(Ordering::Relaxed)),
                t[3 * i + 2].load(Ordering::Relaxed) as usize,
            ));
        }
        if k == 0 {
            return None;
        }
        i = (i + 1) & (CACHE_SLOTS - 1);
    }
    None
}

fn cache_put(key: u64, rule: Packed, func: usize) {
    let t = cache();
    if t.is_empty() || key <= CLAIMED {
        return;
    }
    let mut i = slot_of(key);
    for _ in 0..CACHE_PROBES {
        let k = &t[3 * i];
        match k.compare_exchange(0, CLAIMED, Ordering::Acquire, Ordering::Relaxed) {
            Ok(_) => {
                t[3 * i + 1].store(rule.0, Ordering::Relaxed);
                t[3 * i + 2].store(func as u64, Ordering::Relaxed);
                k.store(key, Ordering::Release);
                return;
            }
            Err(other) if other == key => return,
            Err(_) => i = (i + 1) & (CACHE_SLOTS - 1),
        }
    }
}

/// Empty the rule cache (after a `dlclose`, or in a forked child). A handler reading a slot
/// meanwhile gets the rule it had or none.
pub fn clear_cache() {
    for (i, w) in cache().iter().enumerate() {
        if i % 3 == 0 {
            w.store(0, Ordering::Release);
        }
    }
}

// ---------------------------------------------------------------------------------------
// dlclose.

/// Around the real `dlclose`: while `f` runs, handlers leave the CFI of objects loaded later
/// alone; before it runs, wait (a bounded spin, yielding) until no handler is reading one. Then
/// empty the rule cache, whose rules for the unloaded object's addresses are stale.
pub fn unloading<T>(f: impl FnOnce() -> T) -> T {
    UNLOADING.fetch_add(1, Ordering::SeqCst);
    let mut spins = 0u32;
    while READING_LATER.load(Ordering::SeqCst) != 0 && spins < 1_000_000 {
        spins += 1;
        sys::yield_now();
    }
    let r = f();
    clear_cache();
    UNLOADING.fetch_sub(1, Ordering::SeqCst);
    r
}

/// libc's `dlclose`, once looked up.
static REAL_DLCLOSE: AtomicUsize = AtomicUsize::new(0);

/// `dlclose(handle)` through libc's, inside [`unloading`] (the shared object's `dlclose`).
///
/// # Safety
/// As for dlclose(3).
pub unsafe fn dlclose(handle: *mut core::ffi::c_void) -> core::ffi::c_int {
    let mut f = REAL_DLCLOSE.load(Ordering::Relaxed);
    if f == 0 {
        f = sys::next_symbol(c"dlclose");
        REAL_DLCLOSE.store(f, Ordering::Relaxed);
    }
    if f == 0 {
        sys::set_errno(libc::ENOSYS);
        return -1;
    }
    // SAFETY: `f` is libc's dlclose (the next definition after ours); the caller's contract
    // is dlclose's.
    unloading(|| unsafe { sys::call_dlclose(f, handle) })
}

// ---------------------------------------------------------------------------------------
// gimli, with fixed storage.

/// gimli's unwind and evaluation storage: fixed arrays, no allocation.
pub struct Store;

impl UnwindContextStorage<usize> for Store {
    type Rules = [(Register, RegisterRule<usize>); 24];
    type Stack = [UnwindTableRow<usize, Store>; 4];
}

impl<R: Reader<Offset = usize>> EvaluationStorage<R> for Store {
    type Stack = [Value; 16];
    type ExpressionStack = [(R, R); 2];
    type Result = [Piece<R>; 1];
}

/// The CFI program state gimli needs (several KiB: it lives on the walk's own stack).
pub type Context = UnwindContext<usize, Store>;

type Slice = EndianSlice<'static, NativeEndian>;

/// Evaluate a DWARF expression of the CFI to a value (an address, for `DW_CFA_expression`
/// and the CFA): registers from `regs`, memory only from `stack`, at most 256 operations.
fn evaluate(
    expr: Expression<Slice>,
    push: Option<usize>,
    regs: &Regs,
    stack: &Stack,
) -> Option<usize> {
    let encoding = gimli::Encoding {
        format: gimli::Format::Dwarf32,
        version: 4,
        address_size: 8,
    };
    let mut e: Evaluation<Slice, Store> = Evaluation::new_in(expr.0, encoding);
    e.set_max_iterations(256);
    if let Some(v) = push {
        e.set_initial_value(v as u64);
    }
    let mut r = e.evaluate().ok()?;
    loop {
        r = match r {
            EvaluationResult::Complete => break,
            EvaluationResult::RequiresRegister { register, .. } => {
                let v = regs.get(register.0 as usize)?;
                e.resume_with_register(Value::Generic(v as u64)).ok()?
            }
            EvaluationResult::RequiresMemory { address, size, .. } => {
                let w = stack.read(usize::try_from(address).ok()?)? as u64;
                let v = match size {
                    8 => w,
                    1..=7 => w & ((1u64 << (8 * size)) - 1),
                    _ => return None,
                };
                e.resume_with_memory(Value::Generic(v)).ok()?
            }
            _ => return None,
        };
    }
    match e.as_result() {
        [Piece {
            location: Location::Address { address },
            ..
        }] => usize::try_from(*address).ok(),
        [Piece {
            location: Location::Value { value },
            ..
        }] => usize::try_from(value.to_u64(!0).ok()?).ok(),
        _ => None,
    }
}

/// What [`row`] found.
struct Row<'c> {
    row: &'c UnwindTableRow<usize, Store>,
    /// The FDE is a signal trampoline's.
    signal: bool,
    /// The FDE's first address (the function's start).
    func: usize,
    eh: EhFrame<Slice>,
}

/// The CFI row for `addr` in the object whose CFI is `cfi`. `None`: no FDE covers it, or the
/// CFI is unusable.
fn row(cfi: sys::Cfi, addr: usize, ctx: &mut Context) -> Option<Row<'_>> {
    if cfi.hdr == 0 || !(cfi.lo <= cfi.hdr && cfi.hdr < cfi.hi) {
        return None;
    }
    // SAFETY: [lo, hi) is the file-backed part of a readable PT_LOAD segment of an object that
    // stays loaded while this runs (loaded at start, or `unloading` keeps it: module docs).
    let seg: &'static [u8] =
        unsafe { core::slice::from_raw_parts(cfi.lo as *const u8, cfi.hi - cfi.lo) };
    let hdr = EhFrameHdr::new(&seg[cfi.hdr - cfi.lo..], NativeEndian);
    let bases = BaseAddresses::default().set_eh_frame_hdr(cfi.hdr as u64);
    let parsed = hdr.parse(&bases, 8).ok()?;
    let eh_at = match parsed.eh_frame_ptr() {
        Pointer::Direct(p) => usize::try_from(p).ok()?,
        Pointer::Indirect(_) => return None,
    };
    if !(cfi.lo..cfi.hi).contains(&eh_at) {
        return None;
    }
    let mut eh = EhFrame::new(&seg[eh_at - cfi.lo..], NativeEndian);
    eh.set_address_size(8);
    let bases = bases.set_eh_frame(eh_at as u64);
    let table = parsed.table()?;
    let fde = table
        .fde_for_address(&eh, &bases, addr as u64, EhFrame::cie_from_offset)
        .ok()?;
    let signal = fde.is_signal_trampoline();
    let func = fde.initial_address() as usize;
    let row = fde
        .unwind_info_for_address(&eh, &bases, ctx, addr as u64)
        .ok()?;
    Some(Row {
        row,
        signal,
        func,
        eh,
    })
}

/// Step from the frame `regs` to its caller. `exact`: the frame's PC is where it was
/// interrupted (the innermost frame, or one a signal interrupted), not a return address (which
/// is looked up one byte back, inside its call). *Async-signal-safe*: no allocation, no lock,
/// no system call; reads only the stack and the objects' CFI, bounded.
pub fn step(regs: &Regs, exact: bool, stack: &Stack, ctx: &mut Context) -> Step {
    let pc = regs.pc();
    let addr = if exact { pc } else { pc.wrapping_sub(1) };
    if FP_ONLY.load(Ordering::Relaxed) {
        return frame_pointer_step(regs, stack, addr);
    }
    if !exact && pc == sys::restorer() {
        return signal_frame_step(regs, stack);
    }
    let key = addr as u64;
    if let Some((rule, func)) = cache_get(key) {
        return rule.apply(regs, stack, func);
    }
    let cfi = match find(addr) {
        Found::Start(c) => c,
        Found::Later(c) => {
            READING_LATER.fetch_add(1, Ordering::SeqCst);
            let s = if UNLOADING.load(Ordering::SeqCst) != 0 {
                Step::Stopped(Stop::Unloading)
            } else {
                step_with_cfi(c, regs, addr, stack, ctx)
            };
            READING_LATER.fetch_sub(1, Ordering::SeqCst);
            return s;
        }
        Found::Nowhere => {
            return match frame_pointer_step(regs, stack, addr) {
                s @ Step::Caller { .. } => s,
                _ => Step::Stopped(Stop::NotCode),
            }
        }
    };
    step_with_cfi(cfi, regs, addr, stack, ctx)
}

fn step_with_cfi(
    cfi: sys::Cfi,
    regs: &Regs,
    addr: usize,
    stack: &Stack,
    ctx: &mut Context,
) -> Step {
    let Some(Row {
        row,
        signal,
        func,
        eh,
    }) = row(cfi, addr, ctx)
    else {
        return frame_pointer_step(regs, stack, addr);
    };
    let bad = Step::Stopped(Stop::BadUnwind);
    let (cfa, packed) = match *row.cfa() {
        CfaRule::RegisterAndOffset { register, offset } => {
            let Some(base) = regs.get(register.0 as usize) else {
                return bad;
            };
            let rbp = row
                .register(Register(RBP as u16))
                .unwrap_or(RegisterRule::SameValue);
            let ra = row.register(Register(RA as u16));
            let packed = match (&ra, signal) {
                (Some(ra), false) => Packed::new(register.0 as usize, offset, rbp, ra),
                _ => None,
            };
            (base.wrapping_add(offset as usize), packed)
        }
        CfaRule::Expression(ref x) => {
            let Some(cfa) = x.get(&eh).ok().and_then(|x| evaluate(x, None, regs, stack)) else {
                return bad;
            };
            (cfa, None)
        }
    };
    let rule_of = |i: usize| row.register(Register(i as u16));
    let value = |rule: RegisterRule<usize>, i: usize| -> Option<usize> {
        match rule {
            RegisterRule::Undefined => None,
            RegisterRule::SameValue => regs.get(i),
            RegisterRule::Offset(o) => stack.read(cfa.wrapping_add(o as usize)),
            RegisterRule::ValOffset(o) => Some(cfa.wrapping_add(o as usize)),
            RegisterRule::Register(r) => regs.get(r.0 as usize),
            RegisterRule::Expression(x) => x
                .get(&eh)
                .ok()
                .and_then(|x| evaluate(x, Some(cfa), regs, stack))
                .and_then(|a| stack.read(a)),
            RegisterRule::ValExpression(x) => x
                .get(&eh)
                .ok()
                .and_then(|x| evaluate(x, Some(cfa), regs, stack)),
            RegisterRule::Constant(c) => usize::try_from(c).ok(),
            _ => None,
        }
    };
    let ra = match rule_of(RA) {
        None => return bad,
        Some(RegisterRule::Undefined) => {
            if let Some(p) = packed {
                cache_put(addr as u64, p, func);
            }
            return Step::Outermost;
        }
        Some(rule) => match value(rule, RA) {
            Some(ra) => ra,
            None => return bad,
        },
    };
    let mut next = Regs::none();
    for i in 0..RA {
        if i == RSP {
            continue;
        }
        let v = match rule_of(i) {
            None if callee_saved(i) || signal => regs.get(i),
            None => None,
            Some(rule) => value(rule, i),
        };
        next.set(i, v);
    }
    next.set(RSP, Some(cfa));
    next.set(RA, Some(ra));
    if let Some(p) = packed {
        cache_put(addr as u64, p, func);
    }
    Step::Caller {
        regs: next,
        exact: signal,
        via_fp: false,
        func,
    }
}

/// Our own signal return trampoline ([`sys::restorer`], which the handlers the program installs
/// through our `sigaction` return to; it has no CFI): the interrupted context is the kernel's
/// `ucontext_t` at the stack pointer, as glibc's CFI for its `__restore_rt` says of its own.
fn signal_frame_step(regs: &Regs, stack: &Stack) -> Step {
    let uc = regs.sp();
    let mut next = Regs::none();
    for (i, &g) in sys::GREGS_DWARF_ORDER.iter().enumerate() {
        let at = uc + sys::UCONTEXT_GREGS_AT + 8 * g as usize;
        match stack.read(at) {
            Some(v) => next.set(i, Some(v)),
            None => return Step::Stopped(Stop::BadUnwind),
        }
    }
    Step::Caller {
        regs: next,
        exact: true,
        via_fp: false,
        func: regs.pc(),
    }
}

/// Where there is no CFI: the frame-pointer chain, if `rbp` points into the stack above the
/// stack pointer and the return address found lands in a known object; `rbp = 0` ends the
/// chain (the outermost frame).
fn frame_pointer_step(regs: &Regs, stack: &Stack, addr: usize) -> Step {
    let stop = Step::Stopped(Stop::NoInfo);
    let Some(fp) = regs.get(RBP) else { return stop };
    if fp == 0 {
        // The frame-pointer chain's end (`_start` and glibc's thread start clear rbp).
        return Step::Outermost;
    }
    if fp & 7 != 0 || fp < regs.sp() {
        return stop;
    }
    let (Some(next_fp), Some(ra)) = (stack.read(fp), stack.read(fp.wrapping_add(8))) else {
        return stop;
    };
    if !in_code(ra.wrapping_sub(1)) {
        return stop;
    }
    let mut next = Regs::none();
    next.set(RSP, Some(fp + 16));
    next.set(RBP, Some(next_fp));
    next.set(RA, Some(ra));
    Step::Caller {
        regs: next,
        exact: false,
        via_fp: true,
        func: addr,
    }
}

/// Forget the rule cache's claims a thread held at a fork (the child's only thread).
pub fn after_fork() {
    READING_LATER.store(0, Ordering::Relaxed);
    UNLOADING.store(0, Ordering::Relaxed);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packed_rules_round_trip() {
        let p = Packed::new(
            RSP,
            16,
            RegisterRule::Offset(-16),
            &RegisterRule::Offset(-8),
        )
        .unwrap();
        let mut stack_words = [0usize; 8];
        stack_words[0] = 0x1111; // saved rbp at cfa - 16
        stack_words[1] = 0x2222; // return address at cfa - 8
        let base = stack_words.as_ptr() as usize;
        let stack = Stack {
            lo: base,
            hi: base + 64,
        };
        let mut r = [0usize; NREGS];
        r[RSP] = base;
        r[RBP] = 7;
        r[RA] = 0x4000;
        match p.apply(&Regs::all(r), &stack, 0x3000) {
            Step::Caller {
                regs, exact, func, ..
            } => {
                assert!(!exact);
                assert_eq!(func, 0x3000);
                assert_eq!(regs.sp(), base + 16);
                assert_eq!(regs.pc(), 0x2222);
                assert_eq!(regs.get(RBP), Some(0x1111));
                assert_eq!(regs.get(3), None);
            }
            s => panic!("{s:?}"),
        }
        let end = Packed::new(RSP, 8, RegisterRule::SameValue, &RegisterRule::Undefined).unwrap();
        assert_eq!(end.apply(&Regs::all(r), &stack, 0), Step::Outermost);
        // Reads outside the stack stop the walk instead of faulting.
        let far = Packed::new(
            RSP,
            4096,
            RegisterRule::SameValue,
            &RegisterRule::Offset(-8),
        )
        .unwrap();
        assert_eq!(
            far.apply(&Regs::all(r), &stack, 0),
            Step::Stopped(Stop::BadUnwind)
        );
        // Rules that do not fit are not packed.
        assert!(Packed::new(3, 8, RegisterRule::SameValue, &RegisterRule::Offset(-8)).is_none());
        assert!(Packed::new(
            RSP,
            1 << 40,
            RegisterRule::SameValue,
            &RegisterRule::Offset(-8)
        )
        .is_none());
    }
}
