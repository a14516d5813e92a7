//! Replays the runtime's `api` fuzz target on stable: every file under
//! `runtime/fuzz/regressions/` (an input that once made the check fail, kept after the fix)
//! and a few hand-written inputs go through the same check as the fuzz target
//! (`runtime/fuzz/check.rs`: profil, its extended form and pcsample with pointers from every
//! class, then samples through `api::record`, all compared with an independent model of the
//! documented rules, byte for byte over the whole arena).

/// Describe every operation in a failure message.
const VERBOSE: bool = true;

include!("../fuzz/check.rs");

#[test]
fn fuzz_regressions_replay() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/regressions");
    let mut entries: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file() && p.extension().is_none_or(|x| x != "md"))
        .collect();
    entries.sort();
    for p in &entries {
        eprintln!("replaying {}", p.display());
        check(&std::fs::read(p).unwrap());
    }
    eprintln!("{} regression inputs replayed", entries.len());
}

/// Builds inputs in check.rs's layout, one operation at a time.
#[derive(Default)]
struct Ops(Vec<u8>);

/// Pointer classes (check.rs `Input::pointer`).
#[derive(Clone, Copy)]
enum Ptr {
    Null,
    Arena(u16),
    Straddle(u8),
    ReadOnly(u16),
    Guard(u16),
    PageZero(u16),
    Arbitrary(u64),
}

impl Ops {
    fn new(fill: u8) -> Self {
        Ops(vec![fill])
    }
    fn ptr(&mut self, p: Ptr) -> &mut Self {
        match p {
            Ptr::Null => self.bytes(&[0]),
            Ptr::Arena(o) => self.bytes(&[1]).bytes(&o.to_le_bytes()),
            Ptr::Straddle(k) => self.bytes(&[3, k]),
            Ptr::ReadOnly(o) => self.bytes(&[4]).bytes(&o.to_le_bytes()),
            Ptr::Guard(o) => self.bytes(&[5]).bytes(&o.to_le_bytes()),
            Ptr::PageZero(o) => self.bytes(&[6]).bytes(&o.to_le_bytes()),
            Ptr::Arbitrary(v) => self.bytes(&[7]).bytes(&v.to_le_bytes()),
        }
    }
    fn bytes(&mut self, b: &[u8]) -> &mut Self {
        self.0.extend_from_slice(b);
        self
    }
    /// A size below 2048 (size class 3).
    fn size(&mut self, n: u16) -> &mut Self {
        assert!(n < 2048);
        self.bytes(&[3]).bytes(&n.to_le_bytes())
    }
    fn u64(&mut self, v: u64) -> &mut Self {
        self.bytes(&v.to_le_bytes())
    }
    fn profil(&mut self, buf: Ptr, bufsiz: u16, offset: u64, scale: u32) -> &mut Self {
        self.bytes(&[0]).ptr(buf).size(bufsiz);
        self.bytes(&[3]).u64(offset); // arbitrary offset
        self.bytes(&[3]).bytes(&scale.to_le_bytes()) // arbitrary scale
    }
    fn pcsample(&mut self, samples: Ptr, n: u8) -> &mut Self {
        assert!(n < 64);
        self.bytes(&[2]).ptr(samples).bytes(&[2, n])
    }
    /// An extended call through profil(args, count, -1, 0) (`direct`: profil_extended) with
    /// ranges built downwards from `top`: (buffer, gap below the previous range, length,
    /// scale), each range's offset its lowpc.
    fn extended(&mut self, args: Ptr, top: u64, ranges: &[(Ptr, u8, u16, u32)]) -> &mut Self {
        self.bytes(&[1]).ptr(args).bytes(&[1, ranges.len() as u8]);
        self.bytes(&[1]).u64(top); // structured
        for (buf, gap, len, scale) in ranges {
            self.ptr(*buf);
            self.bytes(&[3]).bytes(&scale.to_le_bytes());
            self.bytes(&[*gap]).bytes(&len.to_le_bytes()).bytes(&[0]);
        }
        self.bytes(&[1]) // through profil()
    }
    /// An extended call through profil_extended with explicit bounds: (buffer, lowpc,
    /// highpc), scale 0x10000, each range's offset its lowpc.
    fn extended_raw(&mut self, args: Ptr, ranges: &[(Ptr, u64, u64)]) -> &mut Self {
        self.bytes(&[1]).ptr(args).bytes(&[1, ranges.len() as u8]);
        self.bytes(&[0]).u64(0); // not structured (the top is read and ignored)
        for (buf, low, high) in ranges {
            self.ptr(*buf);
            self.bytes(&[3]).bytes(&0x10000u32.to_le_bytes());
            self.u64(*low).u64(*high).bytes(&[0]);
        }
        self.bytes(&[0]) // direct
    }
    fn record(&mut self, pc: u64, times: u8) -> &mut Self {
        assert!((1..=4).contains(&times));
        self.bytes(&[4, 0]).u64(pc).bytes(&[times - 1])
    }
    fn poke32(&mut self, at: u16, v: u32) -> &mut Self {
        self.bytes(&[5, 1])
            .bytes(&at.to_le_bytes())
            .u64(u64::from(v))
    }
    fn clock_fails(&mut self, errno: u8) -> &mut Self {
        self.bytes(&[7, errno])
    }
}

/// The arena's bytes after the last check (the final stop leaves them as the samples made
/// them).
/// With `PROFIL_FUZZ_SEEDS=<dir>`, each input is also written there (the fuzz corpus's seeds,
/// see runtime/fuzz/README.md).
fn arena_after(ops: &Ops) -> Vec<u8> {
    if let Some(dir) = std::env::var_os("PROFIL_FUZZ_SEEDS") {
        let name = format!("seed-{:016x}", fnv1a(&ops.0));
        std::fs::write(std::path::Path::new(&dir).join(name), &ops.0).unwrap();
    }
    check_then_arena(&ops.0)
}

fn fnv1a(b: &[u8]) -> u64 {
    b.iter().fold(0xcbf2_9ce4_8422_2325, |h, &x| {
        (h ^ u64::from(x)).wrapping_mul(0x0100_0000_01b3)
    })
}

fn u16_at(a: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([a[at], a[at + 1]])
}

fn u32_at(a: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(a[at..at + 4].try_into().unwrap())
}

/// Traditional profil: a PC 20 bytes above the offset at scale 0x10000 is counter 10; a PC
/// below the offset and one past the buffer count nowhere; scale 0x8000 halves the index.
#[test]
fn seed_traditional_counts_the_predicted_counter() {
    let mut ops = Ops::new(0);
    ops.profil(Ptr::Arena(64), 64, 0x1000, 0x10000)
        .record(0x1000 + 20, 3)
        .record(0xfff, 1)
        .record(0x1000 + 64, 1);
    let a = arena_after(&ops);
    assert_eq!(u16_at(&a, 64 + 20), 3);
    assert_eq!(
        a.iter().map(|&b| u32::from(b)).sum::<u32>(),
        3,
        "nothing else counted"
    );

    let mut ops = Ops::new(0);
    ops.profil(Ptr::Arena(2), 1000, 0, 0x8000).record(400, 1);
    let a = arena_after(&ops);
    assert_eq!(
        u16_at(&a, 2 + 2 * 100),
        1,
        "(400 / 2) * 0x8000 / 65536 = 100"
    );
}

/// Counters stop at their maximum instead of wrapping (16-bit and, extended, 32-bit).
#[test]
fn seed_counters_saturate() {
    let mut ops = Ops::new(0xff);
    ops.profil(Ptr::Arena(0), 16, 0, 0x10000).record(2, 4);
    let a = arena_after(&ops);
    assert_eq!(u16_at(&a, 2), u16::MAX);

    let mut ops = Ops::new(0);
    ops.poke32(256, u32::MAX - 1)
        .extended(
            Ptr::Arena(0),
            0x10_0000,
            &[(Ptr::Arena(256), 0, 0x100, 0x10000)],
        )
        .record(0x10_0000 - 0x100, 4);
    let a = arena_after(&ops);
    assert_eq!(u32_at(&a, 256), u32::MAX);
}

/// Two extended ranges, each sample in its own range's buffer; a PC between them (in the gap)
/// and one at a range's end count nowhere. Tru64: "the scale member is still the ratio of
/// bytes in the address range to bytes in the buffer": at 0x10000, one 4-byte counter per 4
/// bytes of code.
#[test]
fn seed_extended_ranges() {
    let mut ops = Ops::new(0);
    // top 0x2000: range 0 = [0x1f00, 0x2000), range 1 = [0x1e00 - 0x100, 0x1e00) after a gap
    // of 0x100 is not expressible (gaps < 8), so: range 1 = [0x1e00, 0x1efc) after 4 bytes.
    ops.extended(
        Ptr::Arena(0),
        0x2000,
        &[
            (Ptr::Arena(512), 0, 0x100, 0x10000),
            (Ptr::Arena(1024), 4, 0xfc, 0x10000),
        ],
    )
    .record(0x1f00 + 8, 2)
    .record(0x1e00 + 16, 1)
    .record(0x1efe, 1)
    .record(0x2000, 1);
    let a = arena_after(&ops);
    assert_eq!(u32_at(&a, 512 + 4 * 2), 2, "range 0, counter (8 / 4)");
    assert_eq!(u32_at(&a, 1024 + 4 * 4), 1, "range 1, counter (16 / 4)");
    let total: u32 = a[512..1536].iter().map(|&b| u32::from(b)).sum();
    assert_eq!(total, 3);
}

/// pcsample stores PCs until its array is full; the next call reports how many.
#[test]
fn seed_pcsample_stores_and_reports() {
    let mut ops = Ops::new(0);
    ops.pcsample(Ptr::Arena(64), 2)
        .record(0x1234, 1)
        .record(0x5678, 2)
        .pcsample(Ptr::Arena(128), 3)
        .record(0x9abc, 1);
    let a = arena_after(&ops);
    assert_eq!(&a[64..72], &0x1234u64.to_le_bytes());
    assert_eq!(&a[72..80], &0x5678u64.to_le_bytes());
    assert_eq!(&a[80..88], &[0; 8], "the array held two");
    assert_eq!(&a[128..136], &0x9abcu64.to_le_bytes());
}

/// Every unreadable class is refused (EFAULT, checked by the model), and nothing is written.
/// BSD: "EFAULT: buf points outside the process's allocated address space".
#[test]
fn seed_unreadable_pointers_are_refused() {
    let bad = [
        Ptr::Null,
        Ptr::Guard(0),
        Ptr::PageZero(16),
        Ptr::Arbitrary(0xdead_beef_0000),
        Ptr::Arbitrary(0xffff_ffff_ff60_0000), // the vsyscall page (execute-only)
    ];
    for p in bad {
        let mut ops = Ops::new(0);
        ops.profil(p, 64, 0, 0x10000)
            .record(0, 1)
            .pcsample(p, 8)
            .record(0, 1)
            .extended(Ptr::Arena(0), 0x1000, &[(p, 0, 0x100, 0x10000)])
            .record(0xf00, 1)
            .extended(p, 0x1000, &[(Ptr::Arena(512), 0, 0x100, 0x10000)])
            .record(0xf00, 1);
        let a = arena_after(&ops);
        // (The args arrays occupy the first 40 bytes.)
        let hit = (40..4096).find(|&i| a[i] != 0);
        assert_eq!(hit, None, "nothing counted");
    }
    // A read-only ranges array is fine: the ranges are only read.
    let mut ops = Ops::new(0);
    ops.extended(
        Ptr::ReadOnly(0),
        0x1000,
        &[(Ptr::Arena(512), 0, 0x100, 0x10000)],
    )
    .record(0xf00, 1);
    assert_eq!(u32_at(&arena_after(&ops), 512), 1);
}

/// Solaris/Tru64/pcsample: "Profiling is turned off if an update would cause a memory fault."
/// A read-only buffer is accepted (it can be read), its first update faults: nothing changes,
/// the process lives, later samples count nowhere, and the next call reports EFAULT (checked
/// by the model). A buffer running into the guard page counts up to it.
#[test]
fn seed_faulting_updates_turn_profiling_off() {
    let mut ops = Ops::new(0);
    ops.profil(Ptr::ReadOnly(0), 64, 0, 0x10000)
        .record(0, 1)
        .record(0, 1)
        .profil(Ptr::Arena(0), 64, 0, 0x10000) // EFAULT: reports the fault
        .record(2, 1)
        .profil(Ptr::Arena(0), 64, 0, 0x10000) // now on
        .record(2, 1);
    let a = arena_after(&ops);
    assert_eq!(u16_at(&a, 2), 1, "only the sample after the report");

    // Half valid: counters 0..3 in the arena, 4.. in the guard page.
    let mut ops = Ops::new(0);
    ops.profil(Ptr::Straddle(8), 64, 0, 0x10000)
        .record(6, 2)
        .record(8, 1)
        .record(6, 1);
    let a = arena_after(&ops);
    assert_eq!(
        u16_at(&a, ARENA_LEN - 8 + 6),
        2,
        "counted until the fault, then off"
    );

    // pcsample: an array running into the guard page stores up to it.
    let mut ops = Ops::new(0);
    ops.pcsample(Ptr::Straddle(16), 8)
        .record(0x11, 1)
        .record(0x22, 1)
        .record(0x33, 1)
        .record(0x44, 1);
    let a = arena_after(&ops);
    assert_eq!(&a[ARENA_LEN - 16..ARENA_LEN - 8], &0x11u64.to_le_bytes());
    assert_eq!(&a[ARENA_LEN - 8..], &0x22u64.to_le_bytes());
}

/// BSD's `char *samples`: an odd address is a valid buffer; a counter straddling two words
/// carries from its low byte into its high byte.
#[test]
fn seed_odd_buffer_counts() {
    let mut ops = Ops::new(0);
    ops.poke32(0, 0xff00_0000)
        .profil(Ptr::Arena(3), 64, 0, 0x10000);
    ops.record(0, 1).record(2, 2);
    let a = arena_after(&ops);
    assert_eq!(u16_at(&a, 3), 0x0100, "0x00ff + 1, carried across the word");
    assert_eq!(u16_at(&a, 5), 2);
}

/// A refused clock fails the call with its errno and leaves the interface off.
#[test]
fn seed_refused_clock() {
    let mut ops = Ops::new(0);
    ops.clock_fails(37)
        .profil(Ptr::Arena(0), 64, 0, 0x10000)
        .pcsample(Ptr::Arena(128), 4)
        .record(2, 1)
        .clock_fails(0)
        .profil(Ptr::Arena(0), 64, 0, 0x10000)
        .record(2, 1);
    let a = arena_after(&ops);
    assert_eq!(
        u16_at(&a, 2),
        1,
        "only the sample after the clock came back"
    );
    assert_eq!(&a[128..136], &[0; 8]);
}

/// Regression (found by writing the model): pcsample with a count whose array cannot fit in
/// the address space (2^61 eight-byte slots) used to stop sampling and drop the previous
/// count before failing with EINVAL, while a negative count changed nothing. Both now fail
/// before anything changes: sampling goes on into the first array, and the final stop reports
/// both PCs.
#[test]
fn seed_pcsample_impossible_count_changes_nothing() {
    let mut ops = Ops::new(0);
    ops.pcsample(Ptr::Arena(64), 4).record(0x1111, 1);
    ops.bytes(&[2]).ptr(Ptr::Arena(256)).bytes(&[0, 3]); // pcsample(.., 1 << 61): EDGES[3]
    ops.record(0x2222, 1);
    ops.bytes(&[2]).ptr(Ptr::Arena(256)).bytes(&[0, 0]); // pcsample(.., -1): EDGES[0]
    ops.record(0x3333, 1);
    let a = arena_after(&ops);
    assert_eq!(&a[72..80], &0x2222u64.to_le_bytes());
    assert_eq!(&a[80..88], &0x3333u64.to_le_bytes());
    assert!(a[256..264].iter().all(|&b| b == 0));
}

/// The extended form's ranges must be non-empty, disjoint and in decreasing order (EINVAL,
/// checked by the model); a failed call leaves nothing on, so the samples count nowhere.
#[test]
fn seed_extended_rejects_unordered_ranges() {
    let a1 = (Ptr::Arena(512), 0x1000, 0x1100);
    let a2 = (Ptr::Arena(1024), 0x2000, 0x2100);
    let overlapping = (Ptr::Arena(1024), 0x0f80, 0x1001);
    let empty = (Ptr::Arena(1024), 0x0f00, 0x0f00);
    for bad in [[a1, a2], [a1, overlapping], [a1, empty]] {
        let mut ops = Ops::new(0);
        ops.extended_raw(Ptr::Arena(0), &bad)
            .record(0x1008, 1)
            .record(0x2008, 1)
            .record(0x0f80, 1);
        let a = arena_after(&ops);
        assert!(a[512..2048].iter().all(|&b| b == 0));
    }
    let mut ops = Ops::new(0);
    ops.extended_raw(Ptr::Arena(0), &[a2, a1]).record(0x1008, 1);
    let a = arena_after(&ops);
    assert_eq!(u32_at(&a, 512 + 4 * 2), 1, "in order, accepted");
}

/// A traditional call stops the extended form and vice versa, even when it fails.
#[test]
fn seed_forms_stop_each_other() {
    let mut ops = Ops::new(0);
    ops.extended(
        Ptr::Arena(0),
        0x2000,
        &[(Ptr::Arena(512), 0, 0x100, 0x10000)],
    )
    .profil(Ptr::Arena(1024), 64, 0x1f00, 0x10000)
    .record(0x1f00 + 4, 1);
    let a = arena_after(&ops);
    assert_eq!(u32_at(&a, 512 + 4), 0, "extended stopped");
    assert_eq!(u16_at(&a, 1024 + 4), 1, "traditional counts");

    let mut ops = Ops::new(0);
    ops.profil(Ptr::Arena(1024), 64, 0x1f00, 0x10000)
        .extended(
            Ptr::Guard(0),
            0x2000,
            &[(Ptr::Arena(512), 0, 0x100, 0x10000)],
        )
        .record(0x1f00 + 4, 1);
    let a = arena_after(&ops);
    assert_eq!(
        u16_at(&a, 1024 + 4),
        0,
        "a failed extended call stopped traditional"
    );
}

/// The real clock (perf_event SIGTRAP, or the CPU-time timer's SIGPROF) writes only into the
/// buffers handed over, and does not disturb the process. It runs in a child process (this
/// test binary re-run on `real_clock_child`): once started, the clock keeps running until
/// exit, and its samples would land in the other tests' predicted counters.
#[test]
fn real_clock_writes_only_into_the_buffers() {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "real_clock_child",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("PROFIL_FUZZ_REAL_CLOCK_CHILD", "1")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "child failed: {}\n{stderr}",
        out.status
    );
    assert!(stderr.contains("real clock:"), "the child ran: {stderr}");
    eprint!("{stderr}");
}

/// A loop whose PCs lie in one small function.
#[inline(never)]
fn spin(iterations: u64) -> u64 {
    let mut x = 1u64;
    for i in 0..iterations {
        x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(i));
    }
    x
}

fn cpu_seconds() -> f64 {
    // SAFETY: getrusage fills the struct it is given.
    let ru = unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut ru);
        ru
    };
    ru.ru_utime.tv_sec as f64 + ru.ru_utime.tv_usec as f64 / 1e6
}

#[test]
fn real_clock_child() {
    if std::env::var_os("PROFIL_FUZZ_REAL_CLOCK_CHILD").is_none() {
        return; // only as the child of real_clock_writes_only_into_the_buffers
    }
    let _guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let m = memory();
    m.arena_store(0, &[0x5a; ARENA_LEN]);
    api::set_test_clock(TestClock::Real);
    // Counters for the 8 KiB of text from the page below spin, one per 2 bytes (4096 counters
    // at arena 0..8192); pcsample's array of 64 slots at arena 8192..8704.
    let offset = (spin as *const () as usize & !0xfff) - 0x1000;
    let counters = m.arena();
    let samples = m.arena() + 8192;
    m.arena_store(0, &[0; 8704]);
    // SAFETY: both buffers are in the arena, which outlives the process's sampling.
    let started = unsafe {
        api::profil(counters as *mut u16, 8192, offset, 0x10000)
            .and_then(|()| api::pcsample(samples as *mut usize, 64).map(|_| ()))
    };
    if let Err(e) = started {
        eprintln!("real clock: refused here (errno {e}); nothing to check");
        return;
    }
    let t0 = cpu_seconds();
    let mut n = 1_000_000;
    while cpu_seconds() - t0 < 0.3 {
        std::hint::black_box(spin(n));
        n += 1;
    }
    // SAFETY: stopping calls.
    let stored = unsafe {
        api::profil(std::ptr::null_mut(), 0, 0, 0).unwrap();
        api::pcsample(std::ptr::null_mut(), 0).unwrap()
    };
    let a = m.arena_bytes();
    let hits: u32 = (0..4096).map(|i| u32::from(u16_at(a, 2 * i))).sum();
    let slots: Vec<usize> = (0..64)
        .map(|i| usize::from_le_bytes(a[8192 + 8 * i..8200 + 8 * i].try_into().unwrap()))
        .collect();
    eprintln!("real clock: {hits} samples counted in spin's pages, {stored} PCs stored");
    assert!(hits > 0, "samples reached the counters");
    assert!(stored > 0 && stored <= 64, "pcsample stored {stored}");
    let stored = stored as usize;
    assert!(
        slots[..stored].iter().all(|&pc| pc != 0),
        "stored slots hold PCs"
    );
    assert!(
        slots[stored..].iter().all(|&pc| pc == 0),
        "nothing past the count"
    );
    assert!(
        a[8704..].iter().all(|&b| b == 0x5a),
        "nothing outside the buffers changed"
    );
    // Stopped: more CPU time changes nothing.
    let before = a.to_vec();
    let t0 = cpu_seconds();
    while cpu_seconds() - t0 < 0.05 {
        std::hint::black_box(spin(100_000));
    }
    assert!(
        m.arena_bytes() == &before[..],
        "nothing written after the stop"
    );
}

/// A few thousand pseudo-random inputs (fixed seed) through the check: the stable stand-in for
/// a short fuzzing run after the rules changed.
#[test]
fn pseudo_random_inputs_agree_with_the_model() {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    for _ in 0..20_000 {
        let len = (next() % 400) as usize;
        let data: Vec<u8> = (0..len).map(|_| next() as u8).collect();
        check(&data);
    }
}
