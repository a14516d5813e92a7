// The runtime's seed APIs (`profil_rt::api`: profil, its extended form, pcsample, record) on one
// fuzz input, checked against an independent model of the documented rules. Shared by the
// cargo-fuzz target (fuzz_targets/api.rs) and the stable replay test
// (runtime/tests/fuzz_regressions.rs), which both `include!` this file.
//
// Memory. One mapping of 8 pages, made once: page 0 PROT_NONE, pages 1-4 the writable arena,
// page 5 PROT_NONE (the guard after the arena), page 6 read-only, page 7 PROT_NONE. Every
// pointer handed to the API comes from a class (`Input::pointer`): null, anywhere in the arena
// (any alignment), aligned in the arena, straddling the arena's end into the guard page, the
// read-only page, the guard page, page zero (never mapped: vm.mmap_min_addr), or an arbitrary
// 64-bit value moved out of the user half of the address space (bit 63 set when it is not
// already outside it) so that it can never name memory of the fuzzer's own. So the model knows
// exactly which ranges are writable (inside the arena) and readable (inside the arena or inside
// the read-only page). The API checks only a buffer's first counter (by reading it), so an
// accepted buffer may run past the arena: a sample whose update would land outside the 8-page
// mapping is not taken (`foreign_range`); one landing on a protected page of the mapping must
// fault harmlessly, as the model predicts.
//
// Clock. `api::set_test_clock(TestClock::Absent)`: switching an interface on starts no real
// clock, so no SIGTRAP/SIGPROF handler is ever installed in the fuzzing process and samples
// arrive only through the check's own `api::sample` calls: every counter is predictable. An
// operation switches to `TestClock::Failing(errno)` to exercise the refused-clock path.
//
// Input layout (total: any byte string is valid, missing bytes read as 0): byte 0 the arena's
// fill byte, then operations until the input ends, each an opcode byte and its arguments:
//   0 profil(buf, bufsiz, offset, scale)       (offset usize::MAX takes the extended form)
//   1 extended form: args array location, count, then up to 65 ranges written there;
//     through `api::profil(args, count, usize::MAX, 0)` or `api::profil_extended`
//   2 pcsample(samples, nsamples)
//   3 stop: profil(0, 0, 0, 0), or profil(anything, anything, offset, 0 or 1)
//   4 sample: a PC (arbitrary, or derived from the last offsets/ranges), 1-4 times, through
//     `api::sample` (every sample counts: the thinning to the rate is `api::record`'s)
//   5 poke: a 16/32/64-bit value into the arena (counters near saturation)
//   6 moncontrol: profil_rt::set_counting(on/off), which must not affect these interfaces
//   7 clock: Absent, or Failing(errno)
// After each operation the arena must equal the model's copy byte for byte (so a sample
// changed exactly the one counter or slot the model predicts, by one, saturating, and nothing
// else); at the end everything is stopped and checked (pcsample's count included).
//
// Rules the model makes explicit (from api.rs's module docs, and found by writing the model):
// * every profil call, failed or not, first stops both the traditional and the extended form;
//   pcsample stops only pcsample, except that an impossible count (negative, or an array larger
//   than the address space) fails with EINVAL before anything changes: the previous sampling
//   keeps running and keeps its count. (The model found that a too-large count used to stop
//   sampling and lose the count while a negative one did not; api.rs now treats both alike:
//   regression seed_pcsample_impossible_count_changes_nothing.)
// * any other failed pcsample keeps the previous invocation's count: the next call returns it.
// * "profiling is turned off if an update would cause a memory fault": an update of memory
//   that is not writable changes nothing and turns off the traditional form, that one range
//   of the extended form, or pcsample; the next call of that interface (profil: any call,
//   either form, stops included; pcsample: any call but an impossible count) stops it and
//   fails with EFAULT, pcsample keeping the count for the call after.
// * a buffer is checked only at its first counter (slot), by reading it: null, unreadable, or
//   an extent that wraps the address space is EFAULT; profil's buffer may have any alignment
//   (BSD's char *), pcsample's must be 8-aligned, an extended range's 4-aligned.
// * profil with a null buffer and size 0 succeeds without starting the clock; a non-null
//   buffer with size 0 or 1 is "on but ineffective" and does start it (so a refused clock
//   fails it); likewise an extended range that lies wholly below its offset takes any pointer.
// * extended ranges use Tru64's layout (buffer, highpc, lowpc, offset, scale: 40 bytes, the
//   last 4 padding, never read); a range's extent is one past the counter of highpc - 1, the
//   counter of pc being ((pc - offset) * scale / 65536) / 4 (scale 2: counter 0).
// * all EINVAL checks of the extended ranges come before any EFAULT check of their buffers;
//   the ranges array need only be readable (a read-only page is fine); through
//   profil(args, count, -1, scale) the scale argument is ignored.
// * moncontrol (set_counting) pauses only the automatic histogram, never these interfaces.

use profil_rt::api::{self, ProfilArgs, TestClock};
use std::sync::{Mutex, OnceLock};

const PAGE: usize = 4096;
const ARENA_PAGES: usize = 4;
const ARENA_LEN: usize = ARENA_PAGES * PAGE;
const RANGE_BYTES: usize = 40; // sizeof(struct profil_args) on LP64: 4 words + u32 + padding
/// The bytes of a range the API reads (the padding after `scale` is not).
const RANGE_READ: usize = 36;
/// The most slots pcsample fills in one array (its count field's width).
const MAX_CAP: usize = (1 << 40) - 1;
const MAX_RANGES: usize = 64;
/// Most operations per input, most ranges written per extended call.
const MAX_OPS: usize = 256;
const MAX_WRITTEN_RANGES: usize = 65;

/// The fixed mapping: addresses only (the pages are reached through raw pointers).
struct Memory {
    base: usize,
}

impl Memory {
    fn arena(&self) -> usize {
        self.base + PAGE
    }
    fn guard(&self) -> usize {
        self.arena() + ARENA_LEN
    }
    fn ro(&self) -> usize {
        self.guard() + PAGE
    }
    fn set_ro_writable(&self, w: bool) {
        let prot = if w {
            libc::PROT_READ | libc::PROT_WRITE
        } else {
            libc::PROT_READ
        };
        // SAFETY: the read-only page belongs to our mapping, which is never unmapped.
        let r = unsafe { libc::mprotect(self.ro() as *mut libc::c_void, PAGE, prot) };
        assert_eq!(r, 0, "mprotect");
    }
    /// The arena now. Only the check (serialised by LOCK) and the API under test
    /// (synchronously, from the check's own calls: no clock runs) write it.
    fn arena_bytes(&self) -> &[u8] {
        // SAFETY: the arena is ARENA_LEN readable bytes that live as long as the process, and
        // nothing writes it while the check looks at this view.
        unsafe { std::slice::from_raw_parts(self.arena() as *const u8, ARENA_LEN) }
    }
    fn arena_store(&self, at: usize, bytes: &[u8]) {
        assert!(at + bytes.len() <= ARENA_LEN);
        // SAFETY: [at, at + len) is inside the arena (asserted), writable, and no reference
        // to it is alive.
        unsafe {
            std::ptr::copy_nonoverlapping(
                bytes.as_ptr(),
                (self.arena() + at) as *mut u8,
                bytes.len(),
            )
        };
    }
    fn ro_bytes(&self) -> &'static [u8] {
        // SAFETY: the read-only page is PAGE readable bytes that live as long as the process.
        unsafe { std::slice::from_raw_parts(self.ro() as *const u8, PAGE) }
    }
}

fn memory() -> &'static Memory {
    static M: OnceLock<Memory> = OnceLock::new();
    M.get_or_init(|| {
        // SAFETY: a fresh anonymous mapping; the calls only change its protections.
        unsafe {
            let p = libc::mmap(
                std::ptr::null_mut(),
                8 * PAGE,
                libc::PROT_NONE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            );
            assert_ne!(p, libc::MAP_FAILED, "mmap");
            let base = p as usize;
            let rw = libc::PROT_READ | libc::PROT_WRITE;
            assert_eq!(libc::mprotect((base + PAGE) as *mut _, ARENA_LEN, rw), 0);
            let ro = base + 2 * PAGE + ARENA_LEN;
            assert_eq!(libc::mprotect(ro as *mut _, PAGE, libc::PROT_READ), 0);
            Memory { base }
        }
    })
}

/// The fuzz input as a stream; past the end every read is 0.
struct Input<'a> {
    data: &'a [u8],
    pos: usize,
}

impl Input<'_> {
    fn done(&self) -> bool {
        self.pos >= self.data.len()
    }
    fn u8(&mut self) -> u8 {
        let b = self.data.get(self.pos).copied().unwrap_or(0);
        self.pos += 1;
        b
    }
    fn bytes<const N: usize>(&mut self) -> [u8; N] {
        let mut b = [0u8; N];
        for x in &mut b {
            *x = self.u8();
        }
        b
    }
    fn u16(&mut self) -> u16 {
        u16::from_le_bytes(self.bytes())
    }
    fn u32(&mut self) -> u32 {
        u32::from_le_bytes(self.bytes())
    }
    fn u64(&mut self) -> u64 {
        u64::from_le_bytes(self.bytes())
    }

    /// A pointer from one of the classes in the header comment; `align` is the alignment the
    /// aligned-arena class keeps.
    fn pointer(&mut self, align: usize) -> usize {
        let m = memory();
        match self.u8() % 8 {
            0 => 0,
            1 => m.arena() + usize::from(self.u16()) % ARENA_LEN,
            2 => m.arena() + usize::from(self.u16()) % ARENA_LEN / align * align,
            3 => m.guard() - usize::from(self.u8() % 64),
            4 => m.ro() + usize::from(self.u16()) % PAGE,
            5 => m.guard() + usize::from(self.u16()) % PAGE,
            6 => usize::from(self.u16()) % PAGE,
            _ => {
                let v = self.u64();
                (if v < 1 << 47 { v | 1 << 63 } else { v }) as usize
            }
        }
    }

    /// A size in bytes, small ones likely to fit in the arena, and edge values.
    fn size(&mut self) -> usize {
        const EDGES: [usize; 16] = [
            2,
            3,
            4,
            8,
            65536,
            65537,
            u32::MAX as usize,
            1 << 32,
            usize::MAX,
            usize::MAX - 1,
            usize::MAX / 2,
            usize::MAX / 2 + 1,
            1 << 62,
            ARENA_LEN,
            ARENA_LEN + 1,
            ARENA_LEN - 1,
        ];
        match self.u8() % 8 {
            0 => 0,
            1 => 1,
            2 => usize::from(self.u8()),
            3 | 4 => usize::from(self.u16()) % 2048,
            5 => usize::from(self.u16()),
            6 => EDGES[usize::from(self.u8()) % EDGES.len()],
            _ => self.u64() as usize,
        }
    }

    fn scale(&mut self) -> u32 {
        const EDGES: [u32; 12] = [
            0,
            1,
            2,
            3,
            0x10000,
            0x8000,
            0xffff,
            0x10001,
            0x4000,
            u32::MAX,
            u32::MAX - 1,
            0x20000,
        ];
        match self.u8() % 4 {
            0 | 1 => EDGES[usize::from(self.u8()) % EDGES.len()],
            2 => u32::from(self.u16()),
            _ => self.u32(),
        }
    }

    fn offset(&mut self) -> usize {
        match self.u8() % 4 {
            0 => 0,
            1 => usize::from(self.u16()),
            2 => usize::MAX - usize::from(self.u8()),
            _ => self.u64() as usize,
        }
    }
}

/// One range of the extended form as the model sees it.
#[derive(Clone, Copy, Debug)]
struct Range {
    buffer: usize,
    highpc: usize,
    lowpc: usize,
    offset: usize,
    scale: u32,
}

#[derive(Clone, Copy, Debug)]
struct Traditional {
    buf: usize,
    nbins: usize,
    offset: usize,
    scale: u32,
}

#[derive(Clone, Copy, Debug)]
struct Samples {
    buf: usize,
    cap: usize,
}

/// The model: what is on, where, and what the arena must hold.
struct Model {
    traditional: Option<Traditional>,
    extended: Option<Vec<Range>>,
    samples: Option<Samples>,
    /// PCs stored since the last pcsample call (what the next call returns).
    stored: usize,
    /// The errno a refused clock returns; None: the clock "starts".
    clock_fails: Option<i32>,
    arena: Vec<u8>,
    ro: Vec<u8>,
    /// An update of profil's (either form's) memory faulted: the next profil call reports it.
    profil_faulted: bool,
    /// Ranges of the extended form turned off by a fault (indexes into `extended`).
    ranges_off: Vec<usize>,
    /// An update of pcsample's array faulted: the next pcsample call reports it.
    pcs_faulted: bool,
    /// Hints for choosing PCs: the last offset and ranges asked for, accepted or not.
    last_offset: usize,
    last_scale: u32,
    last_ranges: Vec<Range>,
}

/// Every byte of `[addr, addr + len)` inside `[lo, lo + size)`?
fn inside(addr: usize, len: usize, lo: usize, size: usize) -> bool {
    let (a, l, lo, size) = (addr as u128, len as u128, lo as u128, size as u128);
    a >= lo && a + l <= lo + size
}

impl Model {
    /// May the process write `[addr, addr + len)`? Only the arena is writable among the
    /// addresses the classes produce.
    fn writable(&self, addr: usize, len: usize) -> bool {
        len == 0 || inside(addr, len, memory().arena(), ARENA_LEN)
    }
    /// May the process read it? The arena and the read-only page.
    fn readable(&self, addr: usize, len: usize) -> bool {
        len == 0
            || inside(addr, len, memory().arena(), ARENA_LEN)
            || inside(addr, len, memory().ro(), PAGE)
    }

    /// The bytes at a readable address, from the model's copies.
    fn read(&self, addr: usize, len: usize) -> &[u8] {
        let m = memory();
        if inside(addr, len, m.arena(), ARENA_LEN) {
            let o = addr - m.arena();
            &self.arena[o..o + len]
        } else {
            let o = addr - m.ro();
            &self.ro[o..o + len]
        }
    }

    fn clock(&self) -> Result<(), i32> {
        match self.clock_fails {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// profil(buf, bufsiz, offset, scale) with offset != usize::MAX.
    fn profil(&mut self, buf: usize, bufsiz: usize, offset: usize, scale: u32) -> Result<(), i32> {
        self.stop_profil()?;
        if scale <= 1 || (buf == 0 && bufsiz == 0) {
            return Ok(());
        }
        let nbins = bufsiz / 2;
        // Any alignment; only the first counter is checked, by reading it.
        let wraps = buf.checked_add(nbins * 2).is_none();
        if nbins > 0 && (buf == 0 || wraps || !self.readable(buf, 2)) {
            return Err(libc::EFAULT);
        }
        self.clock()?;
        self.traditional = Some(Traditional {
            buf,
            nbins,
            offset,
            scale,
        });
        Ok(())
    }

    /// Every profil call first stops both forms; one after a fault reports it (EFAULT).
    fn stop_profil(&mut self) -> Result<(), i32> {
        self.traditional = None;
        self.extended = None;
        self.ranges_off.clear();
        if std::mem::take(&mut self.profil_faulted) {
            return Err(libc::EFAULT);
        }
        Ok(())
    }

    /// The extended form: `count` ranges at `args`.
    fn extended(&mut self, args: usize, count: usize) -> Result<(), i32> {
        self.stop_profil()?;
        if count == 0 {
            return Ok(());
        }
        if count > MAX_RANGES {
            return Err(libc::EINVAL);
        }
        let len = count * RANGE_BYTES;
        if args == 0
            || !args.is_multiple_of(8)
            || args.checked_add(len).is_none()
            || !self.readable(args, len - (RANGE_BYTES - RANGE_READ))
        {
            return Err(libc::EFAULT);
        }
        let word = |b: &[u8], i: usize| {
            usize::from_le_bytes(b[8 * i..8 * i + 8].try_into().expect("8 bytes"))
        };
        let ranges: Vec<Range> = self
            .read(args, len - (RANGE_BYTES - RANGE_READ))
            .chunks(RANGE_BYTES)
            .map(|b| Range {
                buffer: word(b, 0),
                highpc: word(b, 1),
                lowpc: word(b, 2),
                offset: word(b, 3),
                scale: u32::from_le_bytes(b[32..36].try_into().expect("4 bytes")),
            })
            .collect();
        for (i, r) in ranges.iter().enumerate() {
            let empty = r.lowpc >= r.highpc;
            let overlaps_or_unordered = i > 0 && r.highpc > ranges[i - 1].lowpc;
            if empty || overlaps_or_unordered || r.scale <= 1 {
                return Err(libc::EINVAL);
            }
        }
        for r in &ranges {
            // The extent: one past the counter of highpc - 1; it must fit the address space.
            let Some(nbins) = ext_counters(r) else {
                return Err(libc::EFAULT);
            };
            let bad = r.buffer == 0
                || !r.buffer.is_multiple_of(4)
                || r.buffer.checked_add(nbins * 4).is_none()
                || !self.readable(r.buffer, 4);
            if nbins > 0 && bad {
                return Err(libc::EFAULT);
            }
        }
        self.clock()?;
        self.extended = Some(ranges);
        Ok(())
    }

    fn pcsample(&mut self, samples: usize, n: i64) -> Result<i64, i32> {
        // An impossible count changes nothing.
        if n < 0 || n as u128 * 8 > usize::MAX as u128 {
            return Err(libc::EINVAL);
        }
        let previous = self.stored;
        self.samples = None;
        self.stored = 0;
        // Any failure keeps the previous invocation's count for the next call.
        let fail = |m: &mut Model, e: i32| {
            m.stored = previous;
            Err(e)
        };
        if std::mem::take(&mut self.pcs_faulted) {
            return fail(self, libc::EFAULT);
        }
        if n == 0 {
            return Ok(previous as i64);
        }
        let cap = n as usize;
        let bad = samples == 0
            || !samples.is_multiple_of(8)
            || samples.checked_add(cap * 8).is_none()
            || !self.readable(samples, 8);
        if bad {
            return fail(self, libc::EFAULT);
        }
        if let Err(e) = self.clock() {
            return fail(self, e);
        }
        self.samples = Some(Samples {
            buf: samples,
            cap: cap.min(MAX_CAP),
        });
        Ok(previous as i64)
    }

    /// The addresses one sample at `pc` would update, with their widths.
    fn targets(&self, pc: usize) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        if let Some(t) = self.traditional {
            if let Some(i) = bin(pc, t.offset, t.scale, t.nbins) {
                out.push((t.buf + 2 * i, 2));
            }
        }
        if let Some(ranges) = &self.extended {
            let hit = ranges.iter().position(|r| r.lowpc <= pc && pc < r.highpc);
            if let Some(k) = hit.filter(|k| !self.ranges_off.contains(k)) {
                let r = ranges[k];
                if let Some(i) = ext_bin(pc, r.offset, r.scale) {
                    out.push((r.buffer + 4 * i as usize, 4));
                }
            }
        }
        if let Some(s) = self.samples {
            if self.stored < s.cap {
                out.push((s.buf + 8 * self.stored, 8));
            }
        }
        out
    }

    /// One sample at `pc`: what each interface in use does to the arena. An update of memory
    /// that is not writable (outside the arena: the read-only page, a guard page) faults: it
    /// changes nothing and turns that interface (that range) off until the next call reports it.
    fn record(&mut self, pc: usize) {
        let base = memory().arena();
        if let Some(t) = self.traditional {
            if let Some(i) = bin(pc, t.offset, t.scale, t.nbins) {
                let at = t.buf + 2 * i;
                if self.writable(at, 2) {
                    let o = at - base;
                    let v = u16::from_le_bytes([self.arena[o], self.arena[o + 1]]);
                    let v = if v == u16::MAX { v } else { v + 1 };
                    self.arena[o..o + 2].copy_from_slice(&v.to_le_bytes());
                } else {
                    self.traditional = None;
                    self.profil_faulted = true;
                }
            }
        }
        if let Some(ranges) = &self.extended {
            // Non-overlapping (the call checked): at most one range holds pc.
            let hit = ranges.iter().position(|r| r.lowpc <= pc && pc < r.highpc);
            let hit = hit.filter(|k| !self.ranges_off.contains(k));
            if let Some((k, r)) = hit.map(|k| (k, ranges[k])) {
                // Below the extent by construction (pc < highpc).
                if let Some(i) = ext_bin(pc, r.offset, r.scale) {
                    let at = r.buffer + 4 * i as usize;
                    if self.writable(at, 4) {
                        let b = &mut self.arena[at - base..at - base + 4];
                        let v = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                        let v = if v == u32::MAX { v } else { v + 1 };
                        b.copy_from_slice(&v.to_le_bytes());
                    } else {
                        self.ranges_off.push(k);
                        self.profil_faulted = true;
                    }
                }
            }
        }
        if let Some(s) = self.samples {
            if self.stored < s.cap {
                let at = s.buf + 8 * self.stored;
                if self.writable(at, 8) {
                    self.arena[at - base..at - base + 8].copy_from_slice(&pc.to_le_bytes());
                    self.stored += 1;
                } else {
                    self.samples = None;
                    self.pcs_faulted = true;
                }
            }
        }
    }
}

/// The counter `pc` increments, recomputed in u128 from the documented rule: the PC minus the
/// offset, halved, times scale, over 65536; scale 2 sends everything at or above the offset to
/// counter 0; below the offset or past the buffer, nothing.
fn bin(pc: usize, offset: usize, scale: u32, nbins: usize) -> Option<usize> {
    if scale <= 1 || pc < offset {
        return None;
    }
    let i = if scale == 2 {
        0
    } else {
        (pc as u128 - offset as u128) / 2 * u128::from(scale) / 65536
    };
    (i < nbins as u128).then_some(i as usize)
}

/// The counter of the extended form `pc` increments, from Tru64's rule: scale is bytes of
/// buffer per byte of range (× 65536), counters are 4 bytes; scale 2 sends everything at or
/// above the offset to counter 0; below the offset, nothing.
fn ext_bin(pc: usize, offset: usize, scale: u32) -> Option<u128> {
    if scale <= 1 || pc < offset {
        return None;
    }
    if scale == 2 {
        return Some(0);
    }
    Some((pc as u128 - offset as u128) * u128::from(scale) / 65536 / 4)
}

/// How many counters a range's buffer must hold (one past the counter of highpc - 1), or None
/// when their bytes would not fit in the address space.
fn ext_counters(r: &Range) -> Option<usize> {
    match ext_bin(r.highpc.checked_sub(1)?, r.offset, r.scale) {
        None => Some(0),
        Some(i) => usize::try_from(i + 1).ok().filter(|n| n.checked_mul(4).is_some()),
    }
}

static LOCK: Mutex<()> = Mutex::new(());

/// Keep a description of each operation for the failure message, when the includer asks for
/// it (`const VERBOSE: bool`: the stable replay test does; the fuzz target does not, for speed —
/// replay a crash with the test to see the operations).
fn note(log: &mut Vec<String>, what: impl FnOnce() -> String) {
    if VERBOSE {
        log.push(what());
    }
}

/// Could `[addr, addr + len)` reach memory outside the check's mapping? (Addresses in page
/// zero or outside the user half cannot be written: the kernel refuses them.)
fn foreign_range(addr: usize, len: usize) -> bool {
    let base = memory().base as u128;
    let (lo, hi) = (addr as u128, addr as u128 + len as u128);
    let user_half = lo < 1 << 47 && hi > PAGE as u128;
    let inside = lo >= base && hi <= base + (8 * PAGE) as u128;
    user_half && !inside
}

/// Stop every interface, whatever state a previous (possibly failed) check left.
fn reset() {
    api::set_test_clock(TestClock::Absent);
    // SAFETY: stopping calls: no memory is handed over.
    unsafe {
        let _ = api::profil(std::ptr::null_mut(), 0, 0, 0);
        let _ = api::pcsample(std::ptr::null_mut(), 0);
    }
    profil_rt::set_counting(true);
}

fn assert_memory(model: &Model, what: &dyn Fn() -> String) {
    let m = memory();
    let real = m.arena_bytes();
    if real != &model.arena[..] {
        let first = (0..ARENA_LEN)
            .find(|&i| real[i] != model.arena[i])
            .unwrap_or(0);
        let last = (0..ARENA_LEN)
            .rev()
            .find(|&i| real[i] != model.arena[i])
            .unwrap_or(0);
        panic!(
            "arena differs from the model after {}: bytes {first}..={last}, real {:02x?} model {:02x?}",
            what(),
            &real[first..=last.min(first + 15)],
            &model.arena[first..=last.min(first + 15)],
        );
    }
    assert!(
        m.ro_bytes() == &model.ro[..],
        "read-only page changed after {}",
        what()
    );
}

/// Write `ranges` as `struct profil_args` entries at `args` wherever the bytes are writable by
/// us (the arena, or the read-only page made writable for the moment), in memory and in the
/// model's copy.
fn place_ranges(model: &mut Model, args: usize, ranges: &[Range]) {
    let mut bytes = Vec::with_capacity(ranges.len() * RANGE_BYTES);
    for r in ranges {
        for w in [r.buffer, r.highpc, r.lowpc, r.offset] {
            bytes.extend_from_slice(&w.to_le_bytes());
        }
        bytes.extend_from_slice(&r.scale.to_le_bytes());
        bytes.extend_from_slice(&[0xa5; 4]);
    }
    let m = memory();
    let (lo, size, ro) = if inside(args, 1, m.arena(), ARENA_LEN) {
        (m.arena(), ARENA_LEN, false)
    } else if inside(args, 1, m.ro(), PAGE) {
        (m.ro(), PAGE, true)
    } else {
        return;
    };
    let start = args - lo;
    let n = bytes.len().min(size - start);
    if ro {
        m.set_ro_writable(true);
        // SAFETY: [args, args + n) lies inside the read-only page, writable for the moment.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), args as *mut u8, n) };
        m.set_ro_writable(false);
        model.ro[start..start + n].copy_from_slice(&bytes[..n]);
    } else {
        m.arena_store(start, &bytes[..n]);
        model.arena[start..start + n].copy_from_slice(&bytes[..n]);
    }
}

/// The ranges of an extended call: either arbitrary bounds, or built downwards from a top
/// address so that they are ordered and disjoint unless the fuzzer breaks them on purpose.
fn ranges(inp: &mut Input<'_>, count: usize) -> Vec<Range> {
    let structured = !inp.u8().is_multiple_of(4);
    let mut top = inp.u64() as usize;
    let mut out = Vec::new();
    for _ in 0..count.min(MAX_WRITTEN_RANGES) {
        let buffer = inp.pointer(4);
        let scale = inp.scale();
        let (lowpc, highpc) = if structured {
            let high = top.wrapping_sub(usize::from(inp.u8() % 8));
            let low = high.wrapping_sub(usize::from(inp.u16()));
            top = low;
            (low, high)
        } else {
            (inp.u64() as usize, inp.u64() as usize)
        };
        let offset = match inp.u8() % 4 {
            0 => lowpc,
            1 => 0,
            2 => lowpc.wrapping_sub(usize::from(inp.u8())),
            _ => inp.u64() as usize,
        };
        out.push(Range {
            buffer,
            highpc,
            lowpc,
            offset,
            scale,
        });
    }
    out
}

/// A PC to record: arbitrary, or near what the last calls asked for.
fn choose_pc(inp: &mut Input<'_>, model: &Model) -> usize {
    match inp.u8() % 6 {
        0 => inp.u64() as usize,
        1 => model.last_offset.wrapping_add(inp.u16() as usize),
        2 | 3 if !model.last_ranges.is_empty() => {
            let r = model.last_ranges[usize::from(inp.u8()) % model.last_ranges.len()];
            match inp.u8() % 4 {
                0 => r.lowpc.wrapping_add(usize::from(inp.u16())),
                1 => r.highpc.wrapping_sub(1 + usize::from(inp.u8() % 4)),
                2 => r.highpc.wrapping_add(usize::from(inp.u8() % 4)),
                _ => r.lowpc.wrapping_sub(usize::from(inp.u8() % 4)),
            }
        }
        4 => {
            // Just below, at or above the first address of counter k.
            let k = u128::from(inp.u16());
            let s = u128::from(model.last_scale.max(2));
            let x = (k * 65536).div_ceil(s) * 2;
            let d = usize::from(inp.u8() % 5);
            model
                .last_offset
                .wrapping_add(x as usize)
                .wrapping_add(d)
                .wrapping_sub(2)
        }
        _ => usize::from(inp.u16()),
    }
}

/// Run the operations `data` describes against the API and the model; panics on any
/// disagreement.
pub fn check(data: &[u8]) {
    let _guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    check_locked(data);
}

/// [`check`], then the arena's bytes as the final stop left them, read under the same hold of
/// the lock (another thread's check would refill the arena between two holds).
#[allow(dead_code)] // used by the stable replay tests, not the fuzz target
pub fn check_then_arena(data: &[u8]) -> Vec<u8> {
    let _guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    check_locked(data);
    memory().arena_bytes().to_vec()
}

fn check_locked(data: &[u8]) {
    reset();
    let m = memory();
    let mut inp = Input { data, pos: 0 };
    let fill = inp.u8();
    m.arena_store(0, &[fill; ARENA_LEN]);
    let mut model = Model {
        traditional: None,
        extended: None,
        samples: None,
        stored: 0,
        clock_fails: None,
        arena: vec![fill; ARENA_LEN],
        ro: m.ro_bytes().to_vec(),
        profil_faulted: false,
        ranges_off: Vec::new(),
        pcs_faulted: false,
        last_offset: 0,
        last_scale: 0x10000,
        last_ranges: Vec::new(),
    };
    let mut log: Vec<String> = Vec::new();
    let mut ops = 0;
    while !inp.done() && ops < MAX_OPS {
        ops += 1;
        let op = inp.u8() % 8;
        match op {
            0 => {
                let buf = inp.pointer(2);
                let bufsiz = inp.size();
                let offset = inp.offset();
                let scale = inp.scale();
                note(&mut log, || {
                    format!("profil({buf:#x}, {bufsiz:#x}, {offset:#x}, {scale:#x})")
                });
                let want = if offset == usize::MAX {
                    model.extended(buf, bufsiz)
                } else {
                    model.last_offset = offset;
                    model.last_scale = scale;
                    model.profil(buf, bufsiz, offset, scale)
                };
                // SAFETY: the API reaches the caller's memory only through the kernel; samples
                // that could land outside the check's mapping are not taken (op 4).
                let got = unsafe { api::profil(buf as *mut u16, bufsiz, offset, scale) };
                assert_eq!(got, want, "{}", log.join("; "));
            }
            1 => {
                let args = inp.pointer(8);
                let count = match inp.u8() % 4 {
                    0 => inp.u64() as usize,
                    _ => usize::from(inp.u8()) % (MAX_RANGES + 3),
                };
                let rs = ranges(&mut inp, count);
                place_ranges(&mut model, args, &rs);
                if !rs.is_empty() {
                    model.last_ranges = rs.clone();
                }
                let direct = inp.u8().is_multiple_of(2);
                note(&mut log, || {
                    format!("extended({args:#x}, {count}, direct {direct}, ranges {rs:x?})")
                });
                let want = model.extended(args, count);
                // SAFETY: as for profil above; the ranges' buffers come from the same classes.
                let got = unsafe {
                    if direct {
                        api::profil_extended(args as *const ProfilArgs, count)
                    } else {
                        api::profil(args as *mut u16, count, usize::MAX, 0)
                    }
                };
                assert_eq!(got, want, "{}", log.join("; "));
            }
            2 => {
                let samples = inp.pointer(8);
                const EDGES: [i64; 10] = [
                    -1,
                    i64::MIN,
                    i64::MAX,
                    1 << 61,
                    (1 << 61) - 1,
                    (1 << 61) + 1,
                    (ARENA_LEN / 8) as i64,
                    (ARENA_LEN / 8 + 1) as i64,
                    1,
                    2,
                ];
                let n = match inp.u8() % 4 {
                    0 => EDGES[usize::from(inp.u8()) % EDGES.len()],
                    1 => inp.u64() as i64,
                    _ => i64::from(inp.u8() % 64),
                };
                note(&mut log, || format!("pcsample({samples:#x}, {n})"));
                let want = model.pcsample(samples, n);
                // SAFETY: as for profil above.
                let got = unsafe { api::pcsample(samples as *mut usize, n) };
                assert_eq!(got, want, "{}", log.join("; "));
            }
            3 => {
                let (buf, bufsiz, offset, scale) = if inp.u8().is_multiple_of(2) {
                    (0, 0, 0, 0)
                } else {
                    let buf = inp.pointer(2);
                    let bufsiz = inp.size();
                    let offset = inp.offset().min(usize::MAX - 1);
                    (buf, bufsiz, offset, u32::from(inp.u8() % 2))
                };
                note(&mut log, || {
                    format!("stop({buf:#x}, {bufsiz:#x}, {offset:#x}, {scale})")
                });
                let want = model.profil(buf, bufsiz, offset, scale);
                assert!(
                    matches!(want, Ok(()) | Err(libc::EFAULT)),
                    "the model stops on scale 0/1 (reporting a fault)"
                );
                // SAFETY: a stopping call (scale 0 or 1): the buffer is not used.
                let got = unsafe { api::profil(buf as *mut u16, bufsiz, offset, scale) };
                assert_eq!(got, want, "{}", log.join("; "));
            }
            4 => {
                let pc = choose_pc(&mut inp, &model);
                let times = 1 + inp.u8() % 4;
                note(&mut log, || format!("record({pc:#x}) x{times}"));
                for _ in 0..times {
                    // Buffers are checked only at their first counter: one that extends past the
                    // check's mapping could name the fuzzer's own memory, where the sample
                    // would really count. Such a sample is not taken.
                    if model.targets(pc).iter().any(|&(at, len)| foreign_range(at, len)) {
                        note(&mut log, || "(skipped: outside the mapping)".into());
                        break;
                    }
                    model.record(pc);
                    api::sample(pc);
                }
            }
            5 => {
                let width = [2usize, 4, 8][usize::from(inp.u8()) % 3];
                let at = usize::from(inp.u16()) % (ARENA_LEN - 7);
                let v = inp.u64().to_le_bytes();
                note(&mut log, || format!("poke({at}, {:x?})", &v[..width]));
                m.arena_store(at, &v[..width]);
                model.arena[at..at + width].copy_from_slice(&v[..width]);
            }
            6 => {
                let on = inp.u8().is_multiple_of(2);
                note(&mut log, || format!("moncontrol({on})"));
                profil_rt::set_counting(on);
            }
            _ => {
                let e = inp.u8();
                model.clock_fails = (e != 0).then(|| 1 + i32::from(e % 133));
                note(&mut log, || format!("clock fails: {:?}", model.clock_fails));
                api::set_test_clock(match model.clock_fails {
                    Some(e) => TestClock::Failing(e),
                    None => TestClock::Absent,
                });
            }
        }
        assert_memory(&model, &|| log.join("; "));
    }
    // Stop everything: pcsample reports what it stored; afterwards no sample changes memory.
    api::set_test_clock(TestClock::Absent);
    profil_rt::set_counting(true);
    note(&mut log, || "final stop".into());
    let want = model.pcsample(0, 0);
    // SAFETY: stopping calls.
    let got = unsafe { api::pcsample(std::ptr::null_mut(), 0) };
    assert_eq!(got, want, "{}", log.join("; "));
    let want = model.profil(0, 0, 0, 0);
    // SAFETY: a stopping call.
    let got = unsafe { api::profil(std::ptr::null_mut(), 0, 0, 0) };
    assert_eq!(got, want, "{}", log.join("; "));
    for pc in [0, model.last_offset, usize::MAX] {
        api::sample(pc);
    }
    assert_memory(&model, &|| log.join("; "));
}
