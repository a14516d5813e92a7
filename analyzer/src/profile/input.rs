//! Reading the files named on the command line: the executable and the gmon files.
//!
//! Two rules keep bad or large inputs from costing more than they are worth:
//!
//! * **Every file is opened without blocking** (`O_NONBLOCK`), so a FIFO with no writer
//!   cannot hang the open. A regular file is then mapped (its size is known, and only the
//!   pages read count); anything else (pipe, FIFO, character device) has the flag cleared,
//!   so that a writer that is merely slow is waited for, and is read only as far as its own
//!   headers justify ([`super::extent`]) and never beyond [`NON_REGULAR_LIMIT`]: `/dev/zero`
//!   or `/dev/urandom` given as a profile or executable cost 64 bytes, and the parser then
//!   names the file and what is wrong with it.
//! * **gmon files are read one at a time.** [`load_inputs`] reads only the first bytes of each
//!   regular file to sort the inputs; each report then takes a file's bytes with
//!   [`GmonInput::bytes`], adds them to its sums and lets them go before the next file. Summing
//!   ninety 9 MB profiles holds one of them at a time, not all ninety. (Data from a pipe or
//!   device cannot be read twice, so it is held from the start; it is bounded as above.)

use std::fs::File;
use std::io::Read;
use std::ops::Deref;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use profil_symbols::file::FileBytes;

use super::extent::{justified_len, Extent};
use crate::{Error, Result};

/// The most bytes read from a file that is not a regular file (a pipe or a device), whatever
/// its headers claim.
pub const NON_REGULAR_LIMIT: u64 = 4 << 30;

/// Bytes read from a regular file to tell an executable from a gmon or pcsample file.
const HEAD: usize = 16;

/// An input file held in memory: the executable (mapped when it is a regular file).
#[derive(Debug)]
pub struct Input {
    /// The path as given.
    pub path: PathBuf,
    /// Its bytes (`Vec<u8>::into()` for bytes already in memory).
    pub data: FileBytes,
}

impl Input {
    /// The path for messages.
    pub fn name(&self) -> String {
        self.path.display().to_string()
    }
}

/// A gmon (or pcsample) file: its bytes are read when a report asks for them.
#[derive(Debug)]
pub struct GmonInput {
    /// The path as given.
    pub path: PathBuf,
    /// The first bytes of the file (up to 16).
    head: Vec<u8>,
    /// The whole file, for data that cannot be read again (a pipe) or was given in memory.
    held: Option<FileBytes>,
}

/// The bytes of a gmon file, for as long as a report needs them.
#[derive(Debug)]
pub enum GmonBytes<'a> {
    /// Held since [`load_inputs`].
    Held(&'a FileBytes),
    /// Read (mapped) for this use; released on drop.
    Read(FileBytes),
}

impl Deref for GmonBytes<'_> {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            GmonBytes::Held(b) => b,
            GmonBytes::Read(b) => b,
        }
    }
}

impl GmonInput {
    /// A gmon file whose bytes are already in memory (tests, fuzzing).
    pub fn from_bytes(path: impl Into<PathBuf>, data: Vec<u8>) -> GmonInput {
        GmonInput {
            path: path.into(),
            head: data[..data.len().min(HEAD)].to_vec(),
            held: Some(data.into()),
        }
    }

    /// The path for messages.
    pub fn name(&self) -> String {
        self.path.display().to_string()
    }

    /// The first bytes of the file (enough to recognise its format).
    pub fn head(&self) -> &[u8] {
        &self.head
    }

    /// The whole file.
    pub fn bytes(&self) -> Result<GmonBytes<'_>> {
        match &self.held {
            Some(b) => Ok(GmonBytes::Held(b)),
            None => read_path(&self.path).map(GmonBytes::Read),
        }
    }
}

/// The executable and the gmon files, sorted out by content.
#[derive(Debug)]
pub struct Inputs {
    /// The executable.
    pub exe: Input,
    /// The gmon files, in command-line order.
    pub gmons: Vec<GmonInput>,
}

/// The folder `run` and `cargo profil` keep a tree's files in, for the profile `out`:
/// `<out>.d` (`gmon.out.d/`), beside it. The main profile stays `out`; its side files (manifest,
/// stacks, shared objects' files) and every other process's files go into the folder, so the
/// working directory gets `out` and the folder only.
pub fn side_folder(out: &Path) -> PathBuf {
    let mut s = out.as_os_str().to_owned();
    s.push(".d");
    PathBuf::from(s)
}

/// A side file of the profile `gmon` (its manifest, its stacks file), named `name`: beside
/// it, else in its [`side_folder`] (where `run` keeps the main profile's), else (neither
/// exists) the path beside it.
pub fn side_file(gmon: &Path, name: &str) -> PathBuf {
    let beside = gmon.with_file_name(name);
    if beside.is_file() {
        return beside;
    }
    let kept = side_folder(gmon).join(name);
    if kept.is_file() {
        return kept;
    }
    beside
}

/// Open `path` for reading without blocking on a FIFO. For anything but a regular file,
/// `O_NONBLOCK` is cleared again after the open, so that reads wait for a slow writer (and a
/// FIFO without one reads as empty).
fn open(path: &Path) -> std::io::Result<(File, bool)> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    let meta = file.metadata()?;
    let regular = meta.is_file();
    if !regular && !meta.is_dir() {
        set_blocking(&file)?;
    }
    Ok((file, regular && meta.len() > 0))
}

fn set_blocking(file: &File) -> std::io::Result<()> {
    use std::os::unix::io::AsRawFd;
    let fd = file.as_raw_fd();
    // SAFETY: fcntl(F_GETFL) on a descriptor this function's caller owns; no memory is passed.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if flags < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: as above; F_SETFL with the same flags less O_NONBLOCK.
    if unsafe { libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Read a pipe or device as far as its content justifies (at most [`NON_REGULAR_LIMIT`]).
fn read_bounded(file: &mut File) -> std::io::Result<Result<Vec<u8>, u64>> {
    let mut buf: Vec<u8> = Vec::new();
    loop {
        let want = match justified_len(&buf) {
            Extent::Bytes(n) => n,
            Extent::ToEnd => u64::MAX,
        };
        let have = buf.len() as u64;
        if have >= want {
            return Ok(Ok(buf));
        }
        if have >= NON_REGULAR_LIMIT {
            return Ok(Err(want));
        }
        // At most 1 MiB at a time, so that the headers are looked at again as they arrive.
        let step = (want - have).min(NON_REGULAR_LIMIT - have).min(1 << 20);
        let n = file.by_ref().take(step).read_to_end(&mut buf)?;
        if n == 0 {
            return Ok(Ok(buf));
        }
    }
}

fn open_failed(path: &Path) -> impl Fn(std::io::Error) -> Error + '_ {
    move |e| {
        Error::input(format!(
            "{}: {}{}",
            path.display(),
            io_reason(&e),
            missing_hint(path, &e)
        ))
    }
}

/// Read a whole input file: mapped when regular, else read as far as its headers justify.
/// Errors name the file (`FILE: reason`).
pub fn read_path(path: &Path) -> Result<FileBytes> {
    read_file(path).map_err(open_failed(path))
}

/// [`read_path`] with the plain I/O error (a pipe or device beyond [`NON_REGULAR_LIMIT`] is
/// an `Other` error saying so).
pub fn read_file(path: &Path) -> std::io::Result<FileBytes> {
    let (file, regular) = open(path)?;
    read_opened(path, file, regular)
}

fn read_opened(path: &Path, mut file: File, regular: bool) -> std::io::Result<FileBytes> {
    if regular {
        drop(file);
        return FileBytes::open(path);
    }
    match read_bounded(&mut file)? {
        Ok(v) => Ok(FileBytes::from_vec(v)),
        Err(_) => Err(std::io::Error::other(format!(
            "more than {} GiB from a pipe or device; no profile or executable is that large",
            NON_REGULAR_LIMIT >> 30
        ))),
    }
}

/// The first bytes of a regular file, or all of a non-regular one.
fn peek(path: &Path) -> Result<(Vec<u8>, Option<FileBytes>)> {
    let (file, regular) = open(path).map_err(open_failed(path))?;
    if !regular {
        let all = read_opened(path, file, false).map_err(open_failed(path))?;
        return Ok((all[..all.len().min(HEAD)].to_vec(), Some(all)));
    }
    let mut head = Vec::with_capacity(HEAD);
    file.take(HEAD as u64)
        .read_to_end(&mut head)
        .map_err(open_failed(path))?;
    Ok((head, None))
}

/// What a new user should do when the default inputs are missing.
fn missing_hint(path: &Path, e: &std::io::Error) -> &'static str {
    if e.kind() != std::io::ErrorKind::NotFound {
        return "";
    }
    match path.file_name().and_then(|n| n.to_str()) {
        Some("gmon.out") => {
            " (no profile yet: run the program with `profil-report run ./prog`, or link the \
             runtime in with `profil-report link-args` / `cargo profil` and run it; it writes \
             gmon.out in its working directory when it exits)"
        }
        Some("a.out") if path == Path::new("a.out") => {
            " (name the profiled program: `profil-report gmon.out ./prog`)"
        }
        _ => "",
    }
}

fn io_reason(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such file".into(),
        std::io::ErrorKind::PermissionDenied => "permission denied".into(),
        _ => e.to_string(),
    }
}

/// Sort `files` by content into the executable (at most one, read) and the gmon files (only
/// looked at; read by [`GmonInput::bytes`]), in order. No defaults are filled in.
pub fn sort_inputs(files: &[PathBuf]) -> Result<(Option<Input>, Vec<GmonInput>)> {
    sort_inputs_deferring(files, false)
}

/// [`sort_inputs`]; with `defer`, a file after the executable that cannot be opened is taken
/// as a gmon file whose [`GmonInput::bytes`] fails (gprof opens each gmon file only when it
/// reads it, after printing what `-i` says of the ones before).
fn sort_inputs_deferring(
    files: &[PathBuf],
    defer: bool,
) -> Result<(Option<Input>, Vec<GmonInput>)> {
    let mut exe: Option<Input> = None;
    let mut gmons = Vec::new();
    for f in files {
        let (head, held) = match peek(f) {
            Ok(peeked) => peeked,
            Err(_) if defer && exe.is_some() => {
                gmons.push(GmonInput {
                    path: f.clone(),
                    head: Vec::new(),
                    held: None,
                });
                continue;
            }
            Err(e) => return Err(e),
        };
        if profil_symbols::elf::looks_like_elf(&head) {
            if let Some(first) = &exe {
                return Err(Error::input(format!(
                    "{}: a second executable (already have {}); give exactly one",
                    f.display(),
                    first.name()
                )));
            }
            let data = match held {
                Some(d) => d,
                None => read_path(f)?,
            };
            exe = Some(Input {
                path: f.clone(),
                data,
            });
        } else if gmon::stacks::looks_like_stacks(&head) {
            // A stacks file (`gmon.out.stacks`, caught by a glob such as `gmon.out*`) is read
            // beside its gmon file by the reports (`super::stacks`), not as a profile.
            continue;
        } else {
            gmons.push(GmonInput {
                path: f.clone(),
                head,
                held,
            });
        }
    }
    Ok((exe, gmons))
}

/// Tell the executable from the gmon files (by content) and read the executable. gmon
/// files are only looked at here; their bytes are read by [`GmonInput::bytes`].
pub fn load_inputs(files: &[PathBuf]) -> Result<Inputs> {
    load_inputs_deferring(files, false)
}

/// [`load_inputs`]; with `defer` (the `--gprof` modes), a gmon file after the executable that
/// cannot be opened fails only when a report reads it ([`GmonInput::bytes`]).
pub fn load_inputs_deferring(files: &[PathBuf], defer: bool) -> Result<Inputs> {
    let files: Vec<PathBuf> = if files.is_empty() {
        vec![PathBuf::from("a.out"), PathBuf::from("gmon.out")]
    } else {
        files.to_vec()
    };
    let (exe, mut gmons) = sort_inputs_deferring(&files, defer)?;
    let exe = exe.ok_or_else(|| {
        // Name what was read, so that a damaged or wrong "executable" is recognisable.
        let names: Vec<String> = gmons.iter().map(GmonInput::name).collect();
        Error::input(format!(
            "no executable among the inputs ({} not ELF; give the program as well as its gmon files)",
            names.join(", ")
        ))
    })?;
    if gmons.is_empty() {
        let path = PathBuf::from("gmon.out");
        let (head, held) = peek(&path)?;
        gmons.push(GmonInput { path, head, held });
    }
    Ok(Inputs { exe, gmons })
}

/// Parse the executable (`exe`'s name in the error).
pub fn parse_exe(exe: &Input) -> Result<profil_symbols::ElfImage<'_>> {
    profil_symbols::ElfImage::parse(&exe.data)
        .map_err(|e| Error::input(format!("{}: {e}", exe.name())))
}

#[cfg(test)]
mod tests {
    use super::super::extent::PROBE;
    use super::*;

    #[test]
    fn zero_and_random_devices_read_only_a_probe() {
        assert_eq!(read_path(Path::new("/dev/zero")).unwrap().len(), PROBE);
        // Noise can pass for a BSD header with 4-byte addresses: bounded, not endless.
        let limit = super::super::extent::BSD_HISTOGRAM_LIMIT as usize + 4096;
        for _ in 0..4 {
            assert!(read_path(Path::new("/dev/urandom")).unwrap().len() <= limit);
        }
    }

    #[test]
    fn a_fifo_without_a_writer_reads_as_empty() {
        let dir = std::env::temp_dir().join(format!("profil-input-fifo-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let fifo = dir.join("f");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: mkfifo with a NUL-terminated path that lives across the call.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert_eq!(read_path(&fifo).unwrap().len(), 0);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
