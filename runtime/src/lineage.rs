//! Process trees: which name each profile takes, so that no profile ever overwrites another.
//!
//! The first profiled process of a tree (the *root*: the program the user ran, or the wrapper
//! around it) writes the plain name (`gmon.out`, `PROFIL_OUT`). Every other process image — a
//! forked child, a program a descendant executed, and a program that replaced a process image
//! with `exec` — writes `<name>.<pid>`, and a later image of the same pid that writes too
//! (an exec chain A→B→C, each with samples) writes `<name>.<pid>.<n>`, n = 1, 2, …: each
//! executable of a process keeps its own file. With `GMON_OUT_PREFIX` every name is
//! `PREFIX.<pid>` (as glibc), and later images of a pid `PREFIX.<pid>.<n>`.
//!
//! A process other than the root that took no sample writes nothing (a forked child that only
//! runs `exec`, a shell between two programs), and neither does the root when it replaces its
//! image before taking a sample (`env ./prog`, `sh -c 'exec ./prog'`): the next image then
//! takes the plain name. The root always writes at exit (as glibc's gmon does), and
//! `profil_rt_finish()` always writes.
//!
//! **How a process knows its place.** The runtime keeps one variable of its own in the
//! environment, `PROFIL_RT_LINEAGE=<pid>:<n>:<r>`: the pid of the last profiled image that
//! set it, how many numbered files images of that pid have written, and whether the plain name
//! is still free for that pid's next image. Absent: this is the root. Another pid: this is a
//! descendant (its first file is `<name>.<pid>`). Our pid: this image replaced an earlier one
//! of this process, and continues its count. The entry points at a fixed-width buffer of ours,
//! updated in place (after `fork` in the child, after a file is written, before an exec), so
//! every way of starting a program passes it on: the exec wrappers, `posix_spawn`, `system`,
//! `popen`, make's and the shells' own spawns, a raw `execve`.
//!
//! **Nothing of ours in an environment that did not come from us.** The constructor puts the
//! variable in only where it was inherited, or where the environment's `LD_PRELOAD` names this
//! shared object (the program sees that one anyway); with the object linked in, and under an
//! `LD_PRELOAD` that is not ours, nothing is added. An environment the program builds itself
//! (`env -i`, `execve` with an empty one, Python's `subprocess` with `env=`) gets nothing
//! added, and one it removed our `LD_PRELOAD` from loses our entry on its way through the exec
//! wrappers ([`envp_for_exec`]). Children started so are roots again, as is a profiled child of
//! an unprofiled parent (the runtime linked into `a` and `b`, run by a plain shell).
//!
//! **The variable is a naming aid, not the guard.** A shell that copied the variable at its
//! start passes that stale copy on (bash does), and roots can be many: what keeps every
//! profile is [`crate::output`]'s publication, which never replaces a file written since the
//! image started, nor one an earlier image of the same process wrote, and moves on to the next
//! free name (`<name>.<pid>`, `.1`, …) instead.
//!
//! Reading the variable needs `getenv`: the constructor only. No allocation: the variable's
//! text is a static buffer, the environment array, when the variable must be added, is a fresh
//! anonymous mapping, and an exec wrapper's copy without our entry is on its stack.

use core::ffi::c_char;
use core::fmt::Write as _;
use core::sync::atomic::{AtomicBool, AtomicU32, AtomicU8, Ordering};

use crate::buf::FixedBuf;
use crate::sys;

/// The variable's name, with its `=`.
const NAME: &[u8] = b"PROFIL_RT_LINEAGE=";
/// `PPPPPPPPPP:NNNNNNNNNN:R` (fixed width, so in-place updates never change the length).
const VALUE_LEN: usize = 10 + 1 + 10 + 1 + 1;
const ENTRY_LEN: usize = NAME.len() + VALUE_LEN + 1;

/// The environment entry (NUL-terminated), updated in place byte by byte.
static ENTRY: [AtomicU8; ENTRY_LEN] = [const { AtomicU8::new(0) }; ENTRY_LEN];
/// The entry is in the environment (the constructor succeeded).
static INSTALLED: AtomicBool = AtomicBool::new(false);
/// This image is the root (writes the plain name).
static ROOT: AtomicBool = AtomicBool::new(true);
/// Numbered files that earlier images of this process wrote, plus this image's.
static WRITTEN: AtomicU32 = AtomicU32::new(0);
/// Numbered files written before this image started.
static EARLIER: AtomicU32 = AtomicU32::new(0);
/// This image wrote the plain name.
static PLAIN_WRITTEN: AtomicBool = AtomicBool::new(false);

/// What the variable says (parsed).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Value {
    /// The pid of the image that set it last.
    pub pid: u32,
    /// Numbered files written by that pid's images.
    pub written: u32,
    /// The plain name is free for that pid's next image.
    pub root_free: bool,
}

/// Parse `<pid>:<n>:<r>` (digits, possibly zero-padded).
pub fn parse(v: &[u8]) -> Option<Value> {
    let mut it = v.split(|&b| b == b':');
    let num = |s: Option<&[u8]>| -> Option<u32> {
        let s = s?;
        if s.is_empty() || s.len() > 10 || !s.iter().all(u8::is_ascii_digit) {
            return None;
        }
        u32::try_from(s.iter().fold(0u64, |n, &d| n * 10 + u64::from(d - b'0'))).ok()
    };
    let pid = num(it.next())?;
    let written = num(it.next())?;
    let root_free = match it.next()? {
        b"0" => false,
        b"1" => true,
        _ => return None,
    };
    it.next().is_none().then_some(Value {
        pid,
        written,
        root_free,
    })
}

/// The role of an image that found `found` at start, in process `pid`: (root, earlier numbered
/// files of this pid).
pub fn role(found: Option<Value>, pid: u32) -> (bool, u32) {
    match found {
        None => (true, 0),
        Some(v) if v.pid == pid => (v.root_free, v.written),
        Some(_) => (false, 0),
    }
}

fn store(pid: u32, written: u32, root_free: bool) {
    let mut b = FixedBuf::<ENTRY_LEN>::new();
    b.push(NAME);
    let _ = write!(b, "{pid:010}:{written:010}:{}", u8::from(root_free));
    for (slot, &byte) in ENTRY.iter().zip(b.as_bytes()) {
        slot.store(byte, Ordering::Relaxed);
    }
}

/// Constructor: read the variable, decide this image's role, and put our entry in the
/// environment. Returns false (and changes nothing) if the environment could not be extended.
pub fn start() -> bool {
    let pid = sys::getpid();
    let value = sys::getenv(c"PROFIL_RT_LINEAGE");
    let found = value.and_then(parse);
    let (root, earlier) = role(found, pid);
    ROOT.store(root, Ordering::Relaxed);
    EARLIER.store(earlier, Ordering::Relaxed);
    WRITTEN.store(earlier, Ordering::Relaxed);
    store(pid, earlier, false);
    // Nothing is added to an environment that did not come from us: the variable goes in only
    // where it was inherited, or where the LD_PRELOAD that brought us in is.
    let preloaded = preloaded_from_environment();
    if value.is_none() && !preloaded {
        return true;
    }
    let entry = ENTRY.as_ptr() as *mut c_char;
    let env = sys::environ() as *mut *mut c_char;
    let mut n = 0usize;
    if !env.is_null() {
        // SAFETY: environ is a NULL-terminated array of NUL-terminated strings; nothing else
        // runs while the constructor does.
        unsafe {
            while !(*env.add(n)).is_null() {
                let e = *env.add(n) as *const u8;
                if (0..NAME.len()).all(|i| *e.add(i) == NAME[i]) {
                    // Ours (an earlier image's): point the slot at our buffer.
                    *env.add(n) = entry;
                    INSTALLED.store(true, Ordering::Relaxed);
                    return true;
                }
                n += 1;
            }
        }
    }
    let Some(mem) = sys::map_zeroed((n + 2) * core::mem::size_of::<*mut c_char>()) else {
        return false;
    };
    let new = mem as *mut *mut c_char;
    // SAFETY: `new` has room for n + 2 pointers (zeroed: the last is the terminating NULL);
    // the first n are copied from environ, which has n entries.
    unsafe {
        for i in 0..n {
            *new.add(i) = *env.add(i);
        }
        *new.add(n) = entry;
    }
    sys::set_environ(new);
    INSTALLED.store(true, Ordering::Relaxed);
    true
}

/// The file name of the shared object we are (empty: linked into the executable), set in the
/// constructor.
static OWN_NAME: core::sync::atomic::AtomicPtr<u8> =
    core::sync::atomic::AtomicPtr::new(core::ptr::null_mut());
static OWN_NAME_LEN: core::sync::atomic::AtomicUsize = core::sync::atomic::AtomicUsize::new(0);

/// Does the `LD_PRELOAD` list `list` name this shared object (an entry with its file name)?
fn names_us(list: &[u8]) -> bool {
    let n = OWN_NAME_LEN.load(Ordering::Relaxed);
    let p = OWN_NAME.load(Ordering::Relaxed);
    if n == 0 || p.is_null() {
        return false;
    }
    // SAFETY: `p` and `n` describe the loader's name of our object (see
    // `sys::own_shared_object_name`), which stays valid while we are loaded.
    let own = unsafe { core::slice::from_raw_parts(p, n) };
    list.split(|&b| b == b':' || b == b' ')
        .any(|e| e.rsplit(|&b| b == b'/').next() == Some(own))
}

/// Did the environment's `LD_PRELOAD` bring this shared object in? Constructor only.
fn preloaded_from_environment() -> bool {
    if let Some(own) = sys::own_shared_object_name() {
        OWN_NAME.store(own.as_ptr() as *mut u8, Ordering::Relaxed);
        OWN_NAME_LEN.store(own.len(), Ordering::Relaxed);
    }
    sys::getenv(c"LD_PRELOAD").is_some_and(names_us)
}

/// The most environment entries an exec wrapper copies to leave our variable out (on its
/// stack, 4 KiB): an environment with more is passed on as it is.
pub const MAX_ENV_COPY: usize = 511;

/// `envp` for an exec: `envp` itself, unless it holds our variable but no `LD_PRELOAD` that
/// brings us in (the program removed it: `env -u LD_PRELOAD`, a sanitised environment made
/// from its own); then a copy in `store` without our variable, so that the program it runs
/// sees nothing of ours.
///
/// # Safety
/// `envp` must be null or a NULL-terminated array of NUL-terminated strings.
pub unsafe fn envp_for_exec(
    envp: *const *const c_char,
    store: &mut [*const c_char; MAX_ENV_COPY + 1],
) -> *const *const c_char {
    if envp.is_null() {
        return envp;
    }
    let (mut n, mut ours, mut preload) = (0usize, false, false);
    // SAFETY: the caller's array, NULL-terminated, of NUL-terminated strings.
    unsafe {
        while !(*envp.add(n)).is_null() {
            let e = sys::c_str_bytes(*envp.add(n));
            ours |= e.starts_with(NAME);
            if let Some(list) = e.strip_prefix(b"LD_PRELOAD=") {
                preload |= names_us(list);
            }
            n += 1;
        }
    }
    if !ours || preload || n > MAX_ENV_COPY {
        return envp;
    }
    let mut k = 0;
    for i in 0..n {
        // SAFETY: i < n, the number of entries.
        let e = unsafe { *envp.add(i) };
        // SAFETY: as above.
        if !unsafe { sys::c_str_bytes(e) }.starts_with(NAME) {
            store[k] = e;
            k += 1;
        }
    }
    store[k] = core::ptr::null();
    store.as_ptr()
}

/// In a forked child: a descendant, with its own pid and no numbered file yet.
pub fn after_fork() {
    ROOT.store(false, Ordering::Relaxed);
    PLAIN_WRITTEN.store(false, Ordering::Relaxed);
    EARLIER.store(0, Ordering::Relaxed);
    WRITTEN.store(0, Ordering::Relaxed);
    if INSTALLED.load(Ordering::Relaxed) {
        store(sys::getpid(), 0, false);
    }
}

/// Is this image the root (does it write the plain name)?
pub fn is_root() -> bool {
    ROOT.load(Ordering::Relaxed)
}

/// The number this image's file carries after `.<pid>`: 0 for none.
pub fn sequence() -> u32 {
    EARLIER.load(Ordering::Relaxed)
}

/// A file was written at a name with this pid (`numbered`) or at the plain name.
pub fn wrote(numbered: bool) {
    if numbered {
        let w = EARLIER.load(Ordering::Relaxed) + 1;
        WRITTEN.store(w, Ordering::Relaxed);
    } else {
        PLAIN_WRITTEN.store(true, Ordering::Relaxed);
    }
    if INSTALLED.load(Ordering::Relaxed) {
        store(sys::getpid(), WRITTEN.load(Ordering::Relaxed), false);
    }
}

/// Before an exec (after this image's profile was written, or skipped): the next image learns
/// whether the plain name is still free (this is the root and wrote nothing).
pub fn before_exec() {
    if INSTALLED.load(Ordering::Relaxed) {
        let free = is_root() && !PLAIN_WRITTEN.load(Ordering::Relaxed);
        store(sys::getpid(), WRITTEN.load(Ordering::Relaxed), free);
    }
}

/// The exec failed: this image goes on (and will write at exit under its own name).
pub fn after_failed_exec() {
    if INSTALLED.load(Ordering::Relaxed) {
        store(sys::getpid(), WRITTEN.load(Ordering::Relaxed), false);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_parse_and_decide_the_role() {
        let v = parse(b"0000000042:0000000003:0").unwrap();
        assert_eq!(
            v,
            Value {
                pid: 42,
                written: 3,
                root_free: false
            }
        );
        assert!(parse(b"7:0:1").unwrap().root_free);
        for bad in [
            &b""[..],
            b"7",
            b"7:0",
            b"7:0:2",
            b"x:0:0",
            b"7:0:0:1",
            b"99999999999:0:0",
        ] {
            assert_eq!(parse(bad), None, "{:?}", core::str::from_utf8(bad));
        }
        assert_eq!(role(None, 5), (true, 0));
        assert_eq!(role(parse(b"4:2:0"), 5), (false, 0));
        assert_eq!(role(parse(b"5:2:0"), 5), (false, 2));
        assert_eq!(role(parse(b"5:0:1"), 5), (true, 0));
    }
}
