//! Fixed-capacity byte buffers for messages and paths: the runtime formats without allocating
//! (it may run before `main`, at exit, and inside programs whose allocator we must not touch).

use core::ffi::CStr;
use core::fmt;

/// A byte buffer of capacity `N` that can be formatted into with `write!`. Output beyond the
/// capacity is dropped and remembered in [`FixedBuf::overflowed`].
pub struct FixedBuf<const N: usize> {
    bytes: [u8; N],
    len: usize,
    overflowed: bool,
}

impl<const N: usize> FixedBuf<N> {
    /// An empty buffer.
    pub const fn new() -> Self {
        FixedBuf {
            bytes: [0; N],
            len: 0,
            overflowed: false,
        }
    }

    /// Append bytes, truncating at the capacity.
    pub fn push(&mut self, data: &[u8]) {
        let room = N - self.len;
        let n = data.len().min(room);
        self.bytes[self.len..self.len + n].copy_from_slice(&data[..n]);
        self.len += n;
        if n < data.len() {
            self.overflowed = true;
        }
    }

    /// The bytes written so far.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len]
    }

    /// True if something did not fit.
    pub fn overflowed(&self) -> bool {
        self.overflowed
    }

    /// The contents as a C string: `None` if something did not fit, there is no room left for
    /// the terminating NUL, or the contents contain a NUL. (Bytes past `len` are never written,
    /// so the byte at `len` is the zero the buffer started with.)
    pub fn as_cstr(&self) -> Option<&CStr> {
        if self.overflowed || self.len >= N {
            return None;
        }
        CStr::from_bytes_with_nul(&self.bytes[..=self.len]).ok()
    }
}

impl<const N: usize> fmt::Debug for FixedBuf<N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "\"{}\"", Lossy(self.as_bytes()))
    }
}

impl<const N: usize> Default for FixedBuf<N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const N: usize> fmt::Write for FixedBuf<N> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.push(s.as_bytes());
        Ok(())
    }
}

/// Shows bytes from the environment or a path, replacing invalid UTF-8 (no allocation).
pub struct Lossy<'a>(pub &'a [u8]);

impl fmt::Display for Lossy<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for chunk in self.0.utf8_chunks() {
            f.write_str(chunk.valid())?;
            if !chunk.invalid().is_empty() {
                f.write_str("\u{FFFD}")?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::fmt::Write;

    #[test]
    fn truncates_and_reports_overflow() {
        let mut b = FixedBuf::<8>::new();
        write!(b, "{}-{}", 1234, 56789).unwrap();
        assert_eq!(b.as_bytes(), b"1234-567");
        assert!(b.overflowed());
        assert!(b.as_cstr().is_none());
    }

    #[test]
    fn cstr_needs_room_for_nul_and_no_inner_nul() {
        let mut b = FixedBuf::<8>::new();
        b.push(b"gmon.ou");
        assert_eq!(b.as_cstr().unwrap().to_bytes(), b"gmon.ou");
        let mut full = FixedBuf::<4>::new();
        full.push(b"abcd");
        assert!(full.as_cstr().is_none());
        let mut nul = FixedBuf::<8>::new();
        nul.push(b"a\0b");
        assert!(nul.as_cstr().is_none());
    }

    #[test]
    fn lossy_replaces_invalid_utf8() {
        let mut b = FixedBuf::<32>::new();
        write!(b, "{}", Lossy(b"a\xffb")).unwrap();
        assert_eq!(b.as_bytes(), "a\u{FFFD}b".as_bytes());
    }
}
