//! Writing the profile at exit: choosing the name, and writing it atomically.
//!
//! The file is written to a temporary name in the same directory (`.profil-tmp.<pid>`: short,
//! so any valid final name, up to `NAME_MAX`, has a valid temporary beside it; created with
//! `O_EXCL | O_NOFOLLOW | O_CLOEXEC`, mode 0666 minus the umask, on a descriptor of its own that
//! is closed before the rename) and moved to the final name only once every byte is written,
//! so a reader never sees a partial profile and a failure leaves nothing behind. The
//! encoding is the `gmon` crate's no-allocation writer, in this machine's byte order and pointer
//! size (the profile describes this very process).
//!
//! Only what `open(name, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW)` (glibc's gmon) could have
//! written is replaced: nothing, or a regular file this process may open for writing. A
//! device, FIFO, socket, directory or symbolic link at the name, or another user's read-only
//! file, is left as it is, with one warning. The file never grows past `RLIMIT_FSIZE`: a write
//! beyond it would raise `SIGXFSZ` and kill the program, so it fails with `EFBIG` first.
//!
//! **No profile replaces another's.** A process image's main file (the histogram, or the
//! pcsample file) is published with `renameat2(RENAME_NOREPLACE)` (`link` + `unlink` where the
//! file system lacks it). A file already at the name is replaced only if this image wrote it
//! (a failed exec's profile, written again at exit) or it was written before this image
//! started and not by an earlier image of this process (a profile of an earlier run, which
//! glibc's gmon replaces too); the replacement is a `RENAME_EXCHANGE` and a second look at
//! what came back, so a profile published in between goes back. Otherwise the profile takes
//! the next free name (`gmon.out.<pid>`, then `.1`, `.2`, … after the pid). To tell, every
//! main file is stamped as it is written: its modification time to the nanosecond and the
//! writer's pid in its access time's nanoseconds (`futimens`). The side files (`.stacks`,
//! `.objects`, the per-object files) are named after the main file the image now owns and
//! replace what is there; if one of them cannot be written (a full disk), the set is taken
//! back ([`withdraw`]).

use core::ffi::{c_int, CStr};
use core::fmt::Write as _;
use core::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use gmon::write::{HistHeader, Sink, WriteError, Writer};
use gmon::{Dimension, Target};

use crate::buf::{FixedBuf, Lossy};
use crate::config::Format;
use crate::hist::Layout;
use crate::sys;

/// The longest path, with its NUL (Linux `PATH_MAX`).
pub const PATH_MAX: usize = 4096;

/// A path buffer (PATH_MAX).
pub type PathBuf = FixedBuf<PATH_MAX>;

/// Largest value of a 16-bit bin.
const BIN_MAX: u32 = 0xffff;

/// Where and how to write.
#[derive(Clone, Copy, Debug)]
pub struct Destination {
    /// `PROFIL_OUT`.
    pub out: Option<&'static [u8]>,
    /// `GMON_OUT_PREFIX` (already dropped in secure-execution processes).
    pub prefix: Option<&'static [u8]>,
    /// File format.
    pub format: Format,
    /// This image is the root of its process tree ([`crate::lineage`]): it writes the plain
    /// name; every other image adds `.<pid>` (with `GMON_OUT_PREFIX` the name has the pid
    /// already).
    pub root: bool,
    /// The image's number among the images of its process that wrote a numbered file
    /// (0: the first; n adds `.<n>` after the pid).
    pub seq: u32,
}

impl Destination {
    /// Does the name carry the pid (so that it counts among the process's numbered files)?
    pub fn numbered(&self) -> bool {
        !self.root || (self.out.is_none() && self.prefix.is_some())
    }
}

/// The final file name: `PROFIL_OUT` if set, else `PREFIX.PID` if `GMON_OUT_PREFIX` is set
/// (unless `use_default` asks for the fallback glibc also uses when that name cannot be
/// opened), else `gmon.out` in the current directory. An image other than the root of its
/// process tree adds `.PID` to the first and last, and an image with a non-zero `seq`
/// (a later program in the same process) adds `.SEQ` after the pid ([`crate::lineage`]).
pub fn final_path(dest: &Destination, pid: u32, use_default: bool, buf: &mut PathBuf) {
    if let (None, Some(prefix), false) = (dest.out, dest.prefix, use_default) {
        buf.push(prefix);
        let _ = write!(buf, ".{pid}");
    } else {
        buf.push(dest.out.unwrap_or(b"gmon.out"));
        if dest.root {
            return;
        }
        let _ = write!(buf, ".{pid}");
    }
    if dest.seq > 0 {
        let _ = write!(buf, ".{}", dest.seq);
    }
}

/// The temporary name beside `final_name`: `.profil-tmp.<pid>` in the same directory.
pub fn temp_path(final_name: &[u8], pid: u32, buf: &mut PathBuf) {
    if let Some(slash) = final_name.iter().rposition(|&b| b == b'/') {
        buf.push(&final_name[..=slash]);
    }
    let _ = write!(buf, ".profil-tmp.{pid}");
}

/// What went wrong, for the one-line message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Failure {
    /// errno, or 0 when `what` says it all.
    pub errno: c_int,
    /// The step that failed.
    pub what: &'static str,
}

impl Failure {
    /// Print `profil-rt: cannot write <path>: <what>: <strerror>` on stderr.
    pub fn report(&self, path: &[u8]) {
        let mut msg = FixedBuf::<4400>::new();
        let _ = write!(
            msg,
            "profil-rt: cannot write {}: {}",
            Lossy(path),
            self.what
        );
        if self.errno != 0 {
            let mut e = [0u8; 128];
            let _ = write!(msg, ": {}", sys::strerror(self.errno, &mut e));
        }
        msg.push(b"\n");
        sys::write_stderr(msg.as_bytes());
    }
}

/// A buffered sink into a file descriptor, which never writes past `limit` bytes.
struct FdSink {
    fd: c_int,
    buf: [u8; 8192],
    len: usize,
    /// Bytes written to the file so far.
    written: u64,
    /// `RLIMIT_FSIZE`: a write past it would raise `SIGXFSZ`.
    limit: u64,
}

/// Write `bytes` to `fd`, which holds `written` bytes, unless that would pass `limit`.
fn put(fd: c_int, written: &mut u64, limit: u64, bytes: &[u8]) -> Result<(), c_int> {
    let end = written.saturating_add(bytes.len() as u64);
    if end > limit {
        return Err(libc::EFBIG);
    }
    sys::write_all(fd, bytes)?;
    *written = end;
    Ok(())
}

impl FdSink {
    fn put(&mut self, bytes: &[u8]) -> Result<(), c_int> {
        put(self.fd, &mut self.written, self.limit, bytes)
    }

    fn flush(&mut self) -> Result<(), c_int> {
        let len = core::mem::take(&mut self.len);
        put(self.fd, &mut self.written, self.limit, &self.buf[..len])
    }
}

impl Sink for FdSink {
    type Error = c_int;
    fn write_all(&mut self, bytes: &[u8]) -> Result<(), c_int> {
        if self.len + bytes.len() > self.buf.len() {
            self.flush()?;
        }
        if bytes.len() > self.buf.len() {
            return self.put(bytes);
        }
        self.buf[self.len..self.len + bytes.len()].copy_from_slice(bytes);
        self.len += bytes.len();
        Ok(())
    }
}

/// The histogram to write.
pub struct Profile<'a> {
    /// Range and bin mapping.
    pub layout: Layout,
    /// One counter per bin.
    pub counters: &'a [AtomicU32],
    /// Samples per second to record in the header (the achieved rate).
    pub rate: u32,
    /// The executable's load bias, to write the sampled call-graph arcs of [`crate::stacks`]
    /// (`None`: no arcs).
    pub arcs: Option<u64>,
}

/// Number of samples the 4.4BSD format cannot hold (it has a single 16-bit histogram).
pub fn bsd_clipped(counters: &[AtomicU32]) -> u64 {
    counters
        .iter()
        .map(|c| u64::from(c.load(Ordering::Relaxed).saturating_sub(BIN_MAX)))
        .sum()
}

/// The objects the sampling handler registered ([`crate::objects`]: loaded with `dlopen`
/// after sampling started) that are not among the executable segments recorded at start, as
/// (runtime start, runtime end, bias, path): their records in the stacks file let a reader
/// map every sampled address to an object and a link-time address.
fn later_objects() -> impl Iterator<Item = (u64, u64, u64, &'static [u8])> {
    (0..crate::objects::count())
        .filter_map(crate::objects::object)
        .filter(|o| {
            !crate::stacks::segments()
                .any(|(_, _, bias, path)| bias as u64 == o.bias && path == o.path)
        })
        .map(|o| {
            (
                o.layout.link_lo.wrapping_add(o.bias),
                o.layout.link_hi.wrapping_add(o.bias),
                o.bias,
                o.path,
            )
        })
}

/// Write the sampled stacks ([`crate::stacks`]) to `<gmon_name>.stacks`, atomically, in the
/// gmon crate's stacks format. On failure, one line on stderr and `false`.
pub fn write_stacks(gmon_name: &[u8]) -> bool {
    use gmon::stacks::{
        Header, Object, StacksWriteError, StacksWriter, WalkStats, FLAG_DROPPED, STACK_CUT,
    };
    let st = crate::stacks::stats();
    let nobjects = (crate::stacks::segments().count() + later_objects().count()) as u32;
    let nstacks = crate::stacks::stacks_iter().count() as u64;
    let mut name = PathBuf::new();
    name.push(gmon_name);
    name.push(b".stacks");
    let result = write_atomically(&name, sys::getpid(), None, |sink| {
        let mut w = StacksWriter::new(sink);
        let header = Header {
            max_depth: crate::stacks::MAX_DEPTH as u32,
            flags: if st.arcs_dropped + st.stacks_dropped > 0 {
                FLAG_DROPPED
            } else {
                0
            },
            objects: nobjects,
            stacks: nstacks,
            stats: WalkStats {
                walks: st.walks,
                complete: st.complete,
                no_info: st.no_info,
                bad_unwind: st.bad_unwind,
                too_deep: st.too_deep,
                no_range: st.no_range,
                fp_frames: st.fp_frames,
                arcs_dropped: st.arcs_dropped,
                stacks_dropped: st.stacks_dropped,
            },
        };
        let r = (|| {
            w.header(&header)?;
            for (lo, hi, bias, path) in crate::stacks::segments() {
                w.object(&Object {
                    bias: bias as u64,
                    start: lo as u64,
                    end: hi as u64,
                    path,
                })?;
            }
            for (lo, hi, bias, path) in later_objects() {
                w.object(&Object {
                    bias,
                    start: lo,
                    end: hi,
                    path,
                })?;
            }
            for (pcs, count, cut) in crate::stacks::stacks_iter().take(nstacks as usize) {
                w.stack_with_flags(
                    count,
                    pcs.len() as u32,
                    if cut { STACK_CUT } else { 0 },
                    pcs.iter().map(|p| p.load(Ordering::Relaxed)),
                )?;
            }
            w.finish().map(|_| ())
        })();
        r.map_err(|e| match e {
            StacksWriteError::Sink(e) => Failure {
                errno: e,
                what: "write",
            },
            _ => Failure {
                errno: 0,
                what: "the stack tables changed while they were written",
            },
        })
    });
    if let Err(f) = result {
        f.report(name.as_bytes());
        remove_stale_stacks(gmon_name);
        return false;
    }
    true
}

/// Remove a `<gmon_name>.stacks` an earlier run left (this run recorded PCs only, or could
/// not write its own): a reader would pair it with the new profile. Only a regular file is
/// removed (`unlink` never follows a symbolic link).
pub fn remove_stale_stacks(gmon_name: &[u8]) {
    let mut name = PathBuf::new();
    name.push(gmon_name);
    name.push(b".stacks");
    if let Some(c) = name.as_cstr() {
        if matches!(sys::path_kind(c), sys::PathKind::Regular { .. }) {
            sys::unlink(c);
        }
    }
}

/// The sampled arcs whose both ends lie in the executable's text, at link-time addresses
/// (shared objects' arcs are left to the stacks file).
fn sampled_arcs(profile: &Profile<'_>) -> impl Iterator<Item = (u64, u64, u64)> + use<> {
    let l = profile.layout;
    profile.arcs.into_iter().flat_map(move |bias| {
        crate::stacks::arcs_iter().filter_map(move |(from, to, n)| {
            let (f, t) = (
                (from as u64).wrapping_sub(bias),
                (to as u64).wrapping_sub(bias),
            );
            let inside = |a: u64| (l.link_lo..l.link_hi).contains(&a);
            (n > 0 && inside(f) && inside(t)).then_some((f, t, n))
        })
    })
}

/// Encode `profile` in `format` into `sink`.
///
/// GNU: a count above 65535 cannot fit one 16-bit bin, so the histogram is written as several
/// records over the same range (record k holds the part of each count between k·65535 and
/// (k+1)·65535); gprof adds records with identical ranges. 4.4BSD has one histogram: counts
/// saturate at 65535 (see [`bsd_clipped`]).
pub fn encode<S: Sink>(
    profile: &Profile<'_>,
    format: Format,
    sink: S,
) -> Result<(), WriteError<S::Error>> {
    let l = &profile.layout;
    let nbins = u32::try_from(l.nbins).map_err(|_| WriteError::TooWide {
        field: "hist_size",
        value: l.nbins as u64,
    })?;
    let load = |c: &AtomicU32| c.load(Ordering::Relaxed);
    let mut w = Writer::new(sink, Target::HOST);
    match format {
        Format::Gnu => {
            w.gnu_header()?;
            let max = profile.counters.iter().map(load).max().unwrap_or(0);
            let records = max.div_ceil(BIN_MAX).max(1);
            let header = HistHeader {
                low_pc: l.link_lo,
                high_pc: l.file_high_pc(),
                hist_size: nbins,
                prof_rate: profile.rate,
                dimension: Dimension::SECONDS,
            };
            for k in 0..records {
                let bins = profile
                    .counters
                    .iter()
                    .map(|c| (load(c).saturating_sub(k * BIN_MAX)).min(BIN_MAX) as u16);
                w.gnu_histogram(&header, bins)?;
            }
            for (from, to, n) in sampled_arcs(profile) {
                w.gnu_arc(from, to, n.min(u64::from(u32::MAX)) as u32)?;
            }
        }
        Format::Bsd => {
            w.bsd44_header(l.link_lo, l.file_high_pc(), nbins, profile.rate)?;
            w.bsd_bins(
                nbins,
                profile.counters.iter().map(|c| load(c).min(BIN_MAX) as u16),
            )?;
            for (from, to, n) in sampled_arcs(profile) {
                w.bsd_arc(from, to, n)?;
            }
        }
    }
    Ok(())
}

/// Write `profile` to its file, atomically, never over another process's profile (see
/// [`publish_fresh`]). On failure, one line on stderr and `None`; on success, the name written
/// and whether it carries the pid (counts among the process's numbered files).
pub fn write(dest: &Destination, profile: &Profile<'_>) -> Option<(PathBuf, bool)> {
    let pid = sys::getpid();
    let mut name = PathBuf::new();
    final_path(dest, pid, false, &mut name);
    let fresh = |use_default| Some(Fresh { dest, use_default });
    let mut use_default = false;
    let mut result = write_to(&name, pid, dest.format, fresh(false), profile);
    if matches!(result, Err(Failure { what: "create", .. }))
        && dest.out.is_none()
        && dest.prefix.is_some()
    {
        // glibc: when PREFIX.PID cannot be opened, fall back to gmon.out.
        name = PathBuf::new();
        use_default = true;
        final_path(dest, pid, use_default, &mut name);
        result = write_to(&name, pid, dest.format, fresh(true), profile);
    }
    match result {
        Ok(k) => {
            let mut published = PathBuf::new();
            final_path(&candidate(dest, k), pid, use_default, &mut published);
            Some((published, candidate(dest, k).numbered()))
        }
        Err(f) => {
            f.report(name.as_bytes());
            None
        }
    }
}

fn write_to(
    final_name: &PathBuf,
    pid: u32,
    format: Format,
    fresh: Option<Fresh<'_>>,
    profile: &Profile<'_>,
) -> Result<u32, Failure> {
    write_atomically(final_name, pid, fresh, |sink| {
        encode(profile, format, sink).map_err(|e| match e {
            WriteError::Sink(e) => Failure {
                errno: e,
                what: "write",
            },
            _ => Failure {
                errno: 0,
                what: "the histogram does not fit the file format",
            },
        })
    })
}

/// The step of [`publish_fresh`] after which the temporary holds another process's file.
const EXCHANGE_BACK: &str = "rename (putting another profile back)";

/// How many names [`publish_fresh`] tries before it gives up.
const CANDIDATES: u32 = 1000;

/// The `k`-th name a process image's profile may take: `dest`'s own, then the next numbered
/// ones (`<name>.<pid>`, `<name>.<pid>.1`, … for the plain name; `.<seq+1>`, … for a numbered
/// one).
fn candidate(dest: &Destination, k: u32) -> Destination {
    match k {
        0 => *dest,
        _ if dest.numbered() => Destination {
            seq: dest.seq + k,
            ..*dest
        },
        _ => Destination {
            root: false,
            seq: k - 1,
            ..*dest
        },
    }
}

/// The main file of a process image (the histogram or pcsample file) goes to the first free
/// name of [`candidate`]s, never over another process's profile.
#[derive(Clone, Copy)]
struct Fresh<'a> {
    dest: &'a Destination,
    use_default: bool,
}

/// When this process image started (the constructor ran; in a forked child, the fork), in ns
/// since the epoch ([`set_image_start`]).
static IMAGE_START_NS: AtomicU64 = AtomicU64::new(0);
/// The (device, inode) of the main file this image published last (a failed exec's profile,
/// written again complete at exit, replaces it).
static OWN_DEV: AtomicU64 = AtomicU64::new(0);
static OWN_INO: AtomicU64 = AtomicU64::new(0);

/// Record when this process image started (constructor, and a forked child with the time of
/// the fork): a file at its name written before that is a profile of an earlier run, which the
/// new one replaces, as glibc's gmon does; one written since is another process's, which it
/// never replaces.
pub fn set_image_start(ns: u64) {
    IMAGE_START_NS.store(ns, Ordering::Relaxed);
    OWN_DEV.store(0, Ordering::Relaxed);
    OWN_INO.store(0, Ordering::Relaxed);
}

/// May the file at `stamp` ([`sys::file_stamp`]) be replaced: the one this image published;
/// or one written before this image started, unless an earlier image of this very process
/// wrote it (an exec chain: every main file is stamped with the writer's pid, see
/// [`write_atomically`]; a file of an earlier run whose writer had our pid is kept too).
fn replaceable(stamp: Option<(u64, u64, u64, u32)>, pid: u32) -> bool {
    let Some((dev, ino, mtime, tag)) = stamp else {
        return false;
    };
    (dev, ino)
        == (
            OWN_DEV.load(Ordering::Relaxed),
            OWN_INO.load(Ordering::Relaxed),
        )
        || (mtime < IMAGE_START_NS.load(Ordering::Relaxed) && tag != pid)
}

/// Move the finished temporary `tmp` to the first of `fresh`'s [`candidate`] names that is
/// free, or holds a file that is [`replaceable`]; returns which. Every step is atomic
/// (`renameat2` with `RENAME_NOREPLACE`, or `RENAME_EXCHANGE` and a look at what came back,
/// which goes back if it is not replaceable after all), so two processes that finish at the
/// same moment never take the same name.
fn publish_fresh(tmp: &CStr, pid: u32, fresh: Fresh<'_>) -> Result<u32, Failure> {
    let fail = |errno, what| Failure { errno, what };
    for k in 0..CANDIDATES {
        let mut name = PathBuf::new();
        final_path(&candidate(fresh.dest, k), pid, fresh.use_default, &mut name);
        let Some(name_c) = name.as_cstr() else {
            return Err(fail(0, "the name is too long or contains a NUL byte"));
        };
        match sys::rename_noreplace(tmp, name_c) {
            Ok(()) => return Ok(k),
            Err(libc::EEXIST) => {}
            Err(e) => return Err(fail(e, "rename")),
        }
        if !matches!(
            sys::path_kind(name_c),
            sys::PathKind::Regular { writable: true }
        ) || !replaceable(sys::file_stamp(name_c), pid)
        {
            continue;
        }
        match sys::rename_exchange(tmp, name_c) {
            Ok(()) => {}
            // No exchange on this file system: the check above and a rename.
            Err(libc::EINVAL | libc::ENOSYS) => {
                return sys::rename(tmp, name_c)
                    .map(|()| k)
                    .map_err(|e| fail(e, "rename"));
            }
            Err(e) => return Err(fail(e, "rename")),
        }
        // `tmp` now holds what was at the name: still replaceable (nobody published there
        // since the check)?
        if replaceable(sys::file_stamp(tmp), pid) {
            sys::unlink(tmp);
            return Ok(k);
        }
        // (On failure `tmp` holds the other file: it must not be removed.)
        sys::rename_exchange(tmp, name_c).map_err(|e| fail(e, EXCHANGE_BACK))?;
    }
    Err(fail(libc::EEXIST, "no free name"))
}

/// Create `final_name` atomically: `body` writes the contents into a temporary beside it,
/// which is moved to its name only when every byte is written (else removed). With `fresh`
/// (a process image's main file) the name is the first free one ([`publish_fresh`]; returns
/// which candidate); else it replaces what is there (a side file, named after the main file,
/// which is this image's own; returns 0).
fn write_atomically(
    final_name: &PathBuf,
    pid: u32,
    fresh: Option<Fresh<'_>>,
    body: impl FnOnce(&mut FdSink) -> Result<(), Failure>,
) -> Result<u32, Failure> {
    let fail = |errno, what| Failure { errno, what };
    let mut tmp = PathBuf::new();
    temp_path(final_name.as_bytes(), pid, &mut tmp);
    let (Some(tmp_c), Some(final_c)) = (tmp.as_cstr(), final_name.as_cstr()) else {
        return Err(fail(0, "the name is too long or contains a NUL byte"));
    };
    match sys::path_kind(final_c) {
        sys::PathKind::Absent | sys::PathKind::Regular { writable: true } => {}
        sys::PathKind::Regular { writable: false } => {
            return Err(fail(libc::EACCES, "the file there may not be written"))
        }
        sys::PathKind::Other => {
            return Err(fail(0, "not a regular file; left as it is"));
        }
    }
    let fd = match sys::create_new(tmp_c) {
        Ok(fd) => fd,
        Err(libc::EEXIST) => {
            // A stale temporary from an earlier process with our pid: remove it (unlink never
            // follows a symbolic link) and try once more.
            sys::unlink(tmp_c);
            sys::create_new(tmp_c).map_err(|e| fail(e, "create"))?
        }
        Err(e) => return Err(fail(e, "create")),
    };
    let mut sink = FdSink {
        fd,
        buf: [0; 8192],
        len: 0,
        written: 0,
        limit: sys::file_size_limit(),
    };
    let result = body(&mut sink).and_then(|()| sink.flush().map_err(|e| fail(e, "write")));
    if fresh.is_some() {
        // When it was written, to the nanosecond, and by which process (see `replaceable`).
        sys::stamp_file(fd, sys::realtime_ns(), pid);
    }
    let identity = sys::fd_identity(fd);
    let closed = sys::close(fd).map_err(|e| fail(e, "close"));
    let published = result.and(closed).and_then(|()| match fresh {
        Some(fresh) => publish_fresh(tmp_c, pid, fresh),
        None => sys::rename(tmp_c, final_c)
            .map(|()| 0)
            .map_err(|e| fail(e, "rename")),
    });
    match (&published, fresh, identity) {
        (Ok(_), Some(_), Some((dev, ino))) => {
            OWN_DEV.store(dev, Ordering::Relaxed);
            OWN_INO.store(ino, Ordering::Relaxed);
        }
        (Err(f), _, _) if f.what != EXCHANGE_BACK => sys::unlink(tmp_c),
        _ => {}
    }
    published
}

/// The part of `path` after its last `/`.
fn base_name(path: &[u8]) -> &[u8] {
    path.rsplit(|&b| b == b'/').next().unwrap_or(path)
}

/// The executable, as the manifest describes it.
pub struct ExeInfo<'a> {
    /// Its histogram's range (link-time).
    pub layout: Layout,
    /// Runtime − link-time address.
    pub bias: u64,
    /// Its path (`/proc/self/exe`).
    pub path: &'a [u8],
    /// Its GNU build-id (empty: none).
    pub build_id: &'a [u8],
}

/// `PROFIL_RANGES=all`: beside the executable's file `gmon_name` (already written), write
/// each shared object that has samples to `<gmon_name>.<object file name>.<n>` and the
/// manifest `<gmon_name>.objects` naming them (gmon crate's `manifest` format), each atomically.
/// Failures are one line each on stderr; `false` if any.
pub fn write_objects(
    gmon_name: &[u8],
    format: Format,
    rate: u32,
    exe: &ExeInfo<'_>,
    process: &gmon::manifest::Process,
) -> bool {
    use gmon::manifest::{self, BuildId, Entry, Kind};
    let pid = sys::getpid();
    let mut written = [false; crate::objects::MAX_OBJECTS];
    let mut whole = true;
    for (i, w) in written.iter_mut().enumerate().take(crate::objects::count()) {
        let Some(o) = crate::objects::object(i) else {
            continue;
        };
        if o.counters.iter().all(|c| c.load(Ordering::Relaxed) == 0) {
            continue;
        }
        let mut name = PathBuf::new();
        object_file_name(gmon_name, o.path, i, &mut name);
        let profile = Profile {
            layout: o.layout,
            counters: o.counters,
            rate,
            arcs: None,
        };
        match write_to(&name, pid, format, None, &profile) {
            Ok(_) => *w = true,
            Err(f) => {
                f.report(name.as_bytes());
                whole = false;
            }
        }
    }
    let mut mname = PathBuf::new();
    mname.push(gmon_name);
    mname.push(b".objects");
    let result = write_atomically(&mname, pid, None, |sink| {
        let werr = |e| Failure {
            errno: e,
            what: "write",
        };
        manifest::write_header(sink).map_err(werr)?;
        manifest::write_process(sink, process).map_err(werr)?;
        manifest::write_entry(
            sink,
            &Entry {
                kind: Kind::Exe,
                gmon_file: base_name(gmon_name),
                build_id: BuildId::new(exe.build_id).unwrap_or(BuildId::NONE),
                bias: exe.bias,
                text_start: exe.layout.link_lo,
                text_end: exe.layout.file_high_pc(),
                path: manifest::Path::raw(exe.path),
            },
        )
        .map_err(werr)?;
        for (i, _) in written.iter().enumerate().filter(|(_, w)| **w) {
            let Some(o) = crate::objects::object(i) else {
                continue;
            };
            let mut name = PathBuf::new();
            object_file_name(gmon_name, o.path, i, &mut name);
            manifest::write_entry(
                sink,
                &Entry {
                    kind: Kind::Lib,
                    gmon_file: base_name(name.as_bytes()),
                    build_id: BuildId::new(o.build_id).unwrap_or(BuildId::NONE),
                    bias: o.bias,
                    text_start: o.layout.link_lo,
                    text_end: o.layout.file_high_pc(),
                    path: manifest::Path::raw(o.path),
                },
            )
            .map_err(werr)?;
        }
        Ok(())
    });
    if let Err(f) = result {
        f.report(mname.as_bytes());
        return false;
    }
    whole
}

/// Take back a profile whose set could not be written whole (a full disk, `RLIMIT_FSIZE`):
/// remove `gmon_name` if it is the file this image published, and every side file named after
/// it (`.stacks`, `.objects`, the per-object files), so that none is left half: a reader finds
/// the whole set or nothing.
pub fn withdraw(gmon_name: &[u8]) {
    let remove = |name: &PathBuf| {
        if let Some(c) = name.as_cstr() {
            if matches!(sys::path_kind(c), sys::PathKind::Regular { .. }) {
                sys::unlink(c);
            }
        }
    };
    let mut main = PathBuf::new();
    main.push(gmon_name);
    if let Some(c) = main.as_cstr() {
        let own = (
            OWN_DEV.load(Ordering::Relaxed),
            OWN_INO.load(Ordering::Relaxed),
        );
        if sys::file_stamp(c).is_some_and(|(dev, ino, _, _)| (dev, ino) == own) {
            sys::unlink(c);
        }
    }
    for suffix in [&b".stacks"[..], b".objects"] {
        let mut name = PathBuf::new();
        name.push(gmon_name);
        name.push(suffix);
        remove(&name);
    }
    for i in 0..crate::objects::count() {
        if let Some(o) = crate::objects::object(i) {
            let mut name = PathBuf::new();
            object_file_name(gmon_name, o.path, i, &mut name);
            remove(&name);
        }
    }
}

/// `PROFIL_MODE=pcsample`: write the kept samples and the objects (the executable first,
/// then every registered shared object) in the gmon crate's pcsample format, atomically, at
/// the name the gmon file would have had (the first free one, as [`write`]). On failure, one
/// line on stderr and `None`; on success, whether the name carries the pid.
pub fn write_pcsample(dest: &Destination, rate: u32, exe: &ExeInfo<'_>) -> Option<bool> {
    use gmon::pcsample::{Header, Object, PcWriteError, PcWriter, Sample, FLAG_BUFFER_FULL};
    let pid = sys::getpid();
    let mut name = PathBuf::new();
    final_path(dest, pid, false, &mut name);
    let nobj = crate::objects::count();
    let fresh = Fresh {
        dest,
        use_default: false,
    };
    let result = write_atomically(&name, pid, Some(fresh), |sink| {
        let fail = |e: PcWriteError<c_int>| match e {
            PcWriteError::Sink(e) => Failure {
                errno: e,
                what: "write",
            },
            _ => Failure {
                errno: 0,
                what: "the samples do not fit the pcsample format",
            },
        };
        let mut w = PcWriter::new(sink, Target::HOST);
        w.header(&Header {
            rate_hz: rate,
            flags: if crate::pcmode::full() {
                FLAG_BUFFER_FULL
            } else {
                0
            },
            objects: 1 + nobj as u64,
            samples: crate::pcmode::samples().count() as u64,
            dropped: crate::pcmode::dropped(),
            start_unix_ns: crate::pcmode::start_unix_ns(),
        })
        .map_err(fail)?;
        w.object(&Object {
            path: exe.path,
            build_id: exe.build_id,
            bias: exe.bias,
            text_start: exe.layout.link_lo,
            text_end: exe.layout.link_hi,
        })
        .map_err(fail)?;
        // An object unloaded before the end whose addresses another one took is written at
        // stand-in addresses, its samples moved with it (see objects::pcsample_bias).
        let mut moved = [0u64; crate::objects::MAX_OBJECTS];
        for (i, moved) in moved.iter_mut().enumerate().take(nobj) {
            let o = crate::objects::object(i);
            let o = o.as_ref();
            let bias = crate::objects::pcsample_bias(i);
            *moved = o.map_or(0, |o| bias.wrapping_sub(o.bias));
            w.object(&Object {
                path: o.map_or(&b""[..], |o| o.path),
                build_id: o.map_or(&b""[..], |o| o.build_id),
                bias,
                text_start: o.map_or(0, |o| o.layout.link_lo),
                text_end: o.map_or(0, |o| o.layout.link_hi),
            })
            .map_err(fail)?;
        }
        for (time_ns, tid, pc, slot) in crate::pcmode::samples() {
            let pc = pc.wrapping_add(slot.and_then(|i| moved.get(i)).copied().unwrap_or(0));
            w.sample(&Sample { time_ns, tid, pc }).map_err(fail)?;
        }
        w.finish().map_err(fail)?;
        Ok(())
    });
    match result {
        Ok(k) => Some(candidate(dest, k).numbered()),
        Err(f) => {
            f.report(name.as_bytes());
            None
        }
    }
}

/// The longest file name (one path component), Linux `NAME_MAX`.
const NAME_MAX: usize = 255;

/// `<gmon_name>.<object's file name>.<slot>`, with bytes the manifest cannot hold in a file
/// name (TAB, LF, CR) replaced by `_`; `<gmon_name>.<slot>` when that would be longer than a
/// file name may be (a long `PROFIL_OUT`; the manifest names the object either way), then
/// `<gmon_name>.o<slot>`.
pub fn object_file_name(gmon_name: &[u8], path: &[u8], slot: usize, buf: &mut PathBuf) {
    let obj = base_name(path);
    let mut digits = FixedBuf::<24>::new();
    let _ = write!(digits, ".{slot}");
    let long = base_name(gmon_name).len() + 1 + obj.len() + digits.as_bytes().len() > NAME_MAX;
    buf.push(gmon_name);
    if long {
        // `.o<slot>`: never a pid, so never another process's file.
        let _ = write!(buf, ".o{slot}");
        return;
    }
    buf.push(b".");
    for &b in obj {
        buf.push(if matches!(b, b'\t' | b'\n' | b'\r') {
            b"_"
        } else {
            core::slice::from_ref(&b)
        });
    }
    buf.push(digits.as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec::Vec;

    fn path(dest: &Destination, use_default: bool) -> Vec<u8> {
        let mut b = PathBuf::new();
        final_path(dest, 4242, use_default, &mut b);
        b.as_bytes().to_vec()
    }

    #[test]
    fn output_names_follow_glibc_and_profil_out_overrides() {
        let mut d = Destination {
            out: None,
            prefix: None,
            format: Format::Gnu,
            root: true,
            seq: 0,
        };
        assert_eq!(path(&d, false), b"gmon.out");
        d.prefix = Some(b"/tmp/run");
        assert_eq!(path(&d, false), b"/tmp/run.4242");
        assert_eq!(path(&d, true), b"gmon.out");
        d.out = Some(b"x/prof.out");
        assert_eq!(path(&d, false), b"x/prof.out");
        d.root = false;
        assert_eq!(path(&d, false), b"x/prof.out.4242");
        d.seq = 2;
        assert_eq!(path(&d, false), b"x/prof.out.4242.2");
        d.out = None;
        assert_eq!(path(&d, false), b"/tmp/run.4242.2");
        assert_eq!(path(&d, true), b"gmon.out.4242.2");
        d.root = true;
        assert_eq!(path(&d, false), b"/tmp/run.4242.2");
        d.prefix = None;
        assert_eq!(path(&d, false), b"gmon.out");
        d.prefix = Some(b"/tmp/run");
        d.out = Some(b"x/prof.out");
        d.root = false;
        d.seq = 0;
        d.out = None;
        assert_eq!(path(&d, false), b"/tmp/run.4242");
        assert_eq!(path(&d, true), b"gmon.out.4242");
        d.prefix = None;
        assert_eq!(path(&d, false), b"gmon.out.4242");
        let mut t = PathBuf::new();
        temp_path(b"x/prof.out", 7, &mut t);
        assert_eq!(t.as_bytes(), b"x/.profil-tmp.7");
        let mut t = PathBuf::new();
        temp_path(b"gmon.out", 7, &mut t);
        assert_eq!(t.as_bytes(), b".profil-tmp.7");
    }

    #[test]
    fn a_taken_name_moves_on_to_the_next_numbered_one() {
        let names = |d: &Destination| -> Vec<Vec<u8>> {
            (0..3).map(|k| path(&candidate(d, k), false)).collect()
        };
        let mut d = Destination {
            out: None,
            prefix: None,
            format: Format::Gnu,
            root: true,
            seq: 0,
        };
        let want: [&[u8]; 3] = [b"gmon.out", b"gmon.out.4242", b"gmon.out.4242.1"];
        assert_eq!(names(&d), want);
        d.root = false;
        let want: [&[u8]; 3] = [b"gmon.out.4242", b"gmon.out.4242.1", b"gmon.out.4242.2"];
        assert_eq!(names(&d), want);
        d.seq = 3;
        let want: [&[u8]; 3] = [b"gmon.out.4242.3", b"gmon.out.4242.4", b"gmon.out.4242.5"];
        assert_eq!(names(&d), want);
        d = Destination {
            prefix: Some(b"run"),
            root: true,
            seq: 0,
            ..d
        };
        let want: [&[u8]; 3] = [b"run.4242", b"run.4242.1", b"run.4242.2"];
        assert_eq!(names(&d), want);
    }

    #[test]
    fn object_file_names_stay_valid_file_names() {
        let mut b = PathBuf::new();
        object_file_name(b"d/gmon.out", b"/lib/libc.so.6", 3, &mut b);
        assert_eq!(b.as_bytes(), b"d/gmon.out.libc.so.6.3");
        let long = [b'p'; 245];
        let mut b = PathBuf::new();
        object_file_name(&long, b"/lib/libc.so.6", 3, &mut b);
        assert_eq!(&b.as_bytes()[245..], b".o3");
    }

    fn counters(v: &[u32]) -> Vec<AtomicU32> {
        v.iter().map(|&x| AtomicU32::new(x)).collect()
    }

    #[test]
    fn gnu_counts_above_65535_become_extra_records_that_sum_back() {
        let layout = Layout::new(0x1000, 0x1014, 0x8000).unwrap();
        assert_eq!(layout.nbins, 8);
        let all = counters(&[0, 70000, 5, 65535, 200000, 0, 0, 0]);
        let p = Profile {
            layout,
            counters: &all,
            rate: 1000,
            arcs: None,
        };
        let mut buf = [0u8; 1024];
        let mut sink = gmon::write::SliceSink::new(&mut buf);
        encode(&p, Format::Gnu, &mut sink).unwrap();
        let out = sink.written();
        // header 20 + 4 records of (1 + 40 + 16)
        assert_eq!(out.len(), 20 + 4 * 57);
        let mut sums = [0u64; 8];
        for r in 0..4 {
            let rec = &out[20 + r * 57..20 + (r + 1) * 57];
            assert_eq!(rec[0], 0);
            assert_eq!(u64::from_le_bytes(rec[1..9].try_into().unwrap()), 0x1000);
            assert_eq!(u64::from_le_bytes(rec[9..17].try_into().unwrap()), 0x1020);
            assert_eq!(u32::from_le_bytes(rec[21..25].try_into().unwrap()), 1000);
            for (i, s) in sums.iter_mut().enumerate() {
                *s += u64::from(u16::from_le_bytes(
                    rec[41 + 2 * i..43 + 2 * i].try_into().unwrap(),
                ));
            }
        }
        assert_eq!(sums, [0, 70000, 5, 65535, 200000, 0, 0, 0]);
        assert_eq!(bsd_clipped(&all), 70000 - 65535 + 200000 - 65535);
    }

    #[test]
    fn bsd_saturates() {
        let layout = Layout::new(0x1000, 0x1008, 0x8000).unwrap();
        let c = counters(&[3, 100000, 0, 1]);
        let p = Profile {
            layout,
            counters: &c,
            rate: 250,
            arcs: None,
        };
        let mut buf = [0u8; 1024];
        let mut sink = gmon::write::SliceSink::new(&mut buf);
        encode(&p, Format::Bsd, &mut sink).unwrap();
        let out = sink.written();
        assert_eq!(out.len(), 40 + 8);
        assert_eq!(u32::from_le_bytes(out[16..20].try_into().unwrap()), 40 + 8);
        assert_eq!(
            u32::from_le_bytes(out[20..24].try_into().unwrap()),
            0x00051879
        );
        assert_eq!(u32::from_le_bytes(out[24..28].try_into().unwrap()), 250);
        assert_eq!(&out[40..48], &[3, 0, 0xff, 0xff, 0, 0, 1, 0]);
        assert_eq!(bsd_clipped(&c), 100000 - 65535);
    }
}
