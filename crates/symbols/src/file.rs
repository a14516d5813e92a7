//! Reading input files without copying them: a read-only memory map, or the bytes in memory
//! when mapping is not possible (pipes, empty files, non-Unix).
//!
//! An executable with debug info can be hundreds of megabytes, of which a flat profile needs
//! only the symbol table. Mapped, only the pages actually read count towards the resident
//! memory, which keeps the analyzer below gprof's peak memory on large inputs.
//!
//! The usual caveat of mapped files applies: if another process truncates the file while it
//! is mapped, reading the lost pages raises SIGBUS. Inputs are files the user points us at
//! and that we only read, so this trade is the same one every mapping reader makes.

use std::fs::File;
use std::io::Read;
use std::ops::Deref;
use std::path::Path;

/// The bytes of a file.
#[derive(Debug)]
pub struct FileBytes(Repr);

#[derive(Debug)]
enum Repr {
    Mapped { ptr: *const u8, len: usize },
    Owned(Vec<u8>),
}

// SAFETY: the mapping is private and read-only; nothing writes through `ptr`, so sharing the
// view between threads is as safe as sharing a `&[u8]`.
unsafe impl Send for FileBytes {}
// SAFETY: as above: an immutable view.
unsafe impl Sync for FileBytes {}

impl FileBytes {
    /// Map `path` read-only (or read it, if it cannot be mapped).
    pub fn open(path: &Path) -> std::io::Result<FileBytes> {
        let mut file = File::open(path)?;
        let meta = file.metadata()?;
        let len = meta.len();
        if meta.is_file() && len > 0 && len <= isize::MAX as u64 {
            if let Some(m) = map(&file, len as usize) {
                return Ok(m);
            }
        }
        // Exactly what `std::fs::read` does, with the same errors (e.g. EISDIR).
        let mut v = Vec::new();
        file.read_to_end(&mut v)?;
        Ok(FileBytes(Repr::Owned(v)))
    }

    /// Wrap bytes already in memory.
    pub fn from_vec(v: Vec<u8>) -> FileBytes {
        FileBytes(Repr::Owned(v))
    }
}

#[cfg(unix)]
fn map(file: &File, len: usize) -> Option<FileBytes> {
    use std::os::unix::io::AsRawFd;
    // SAFETY: a fresh private read-only mapping of an open file descriptor; the kernel checks
    // the arguments and reports failure as MAP_FAILED, which we test.
    let ptr = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ,
            libc::MAP_PRIVATE,
            file.as_raw_fd(),
            0,
        )
    };
    if ptr == libc::MAP_FAILED {
        return None;
    }
    Some(FileBytes(Repr::Mapped {
        ptr: ptr as *const u8,
        len,
    }))
}

#[cfg(not(unix))]
fn map(_file: &File, _len: usize) -> Option<FileBytes> {
    None
}

impl Deref for FileBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match &self.0 {
            // SAFETY: `ptr` is a live mapping of `len` readable bytes until `drop`.
            Repr::Mapped { ptr, len } => unsafe { std::slice::from_raw_parts(*ptr, *len) },
            Repr::Owned(v) => v,
        }
    }
}

impl From<Vec<u8>> for FileBytes {
    fn from(v: Vec<u8>) -> Self {
        FileBytes(Repr::Owned(v))
    }
}

impl AsRef<[u8]> for FileBytes {
    fn as_ref(&self) -> &[u8] {
        self
    }
}

impl Drop for FileBytes {
    fn drop(&mut self) {
        #[cfg(unix)]
        if let Repr::Mapped { ptr, len } = self.0 {
            // SAFETY: unmapping exactly the region `map` created, once; no borrow of it can
            // outlive `self`.
            unsafe { libc::munmap(ptr as *mut libc::c_void, len) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_and_reads_the_same_bytes() {
        let dir = std::env::temp_dir().join(format!("profil-symbols-file-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("f");
        std::fs::write(&p, b"hello, mapped world").unwrap();
        let m = FileBytes::open(&p).unwrap();
        assert_eq!(&*m, b"hello, mapped world");
        std::fs::write(&p, b"").unwrap();
        assert_eq!(&*FileBytes::open(&p).unwrap(), b"");
        assert!(FileBytes::open(&dir).is_err());
        assert!(FileBytes::open(&dir.join("absent")).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
