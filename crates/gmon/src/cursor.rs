//! The one bounds-checked cursor every reader and writer of this crate goes through.
//!
//! A [`Cursor`] is a position in a byte buffer plus the [`Target`] (pointer size and byte order,
//! both runtime values). Over a `&[u8]` it reads, over a `&mut [u8]` it writes; either way every
//! multi-byte field goes through `byteorder`'s [`ByteOrder`] (`LittleEndian` or `BigEndian`, chosen
//! by the target's [`Endian`] value at each call), and every access is checked against the buffer:
//! a short buffer is a [`CursorError`] carrying the byte offset and the name of the field, never a
//! panic. The format modules turn that error into their own ([`crate::Error`],
//! [`crate::pcsample::PcError`]) without losing either.
//!
//! Writers build each record in a small stack buffer with a write cursor and hand the finished
//! bytes to their [`crate::write::Sink`], so nothing here allocates.

use byteorder::{BigEndian, ByteOrder, LittleEndian};

use crate::{Endian, PtrSize, Target};

/// Run `$body` with `$B` bound to `byteorder`'s type for the runtime byte order `$e`.
macro_rules! with_order {
    ($e:expr, $B:ident => $body:expr) => {
        match $e {
            Endian::Little => {
                type $B = LittleEndian;
                $body
            }
            Endian::Big => {
                type $B = BigEndian;
                $body
            }
        }
    };
}

impl Endian {
    /// Decode a `u16` from the first two bytes of `b` (callers pass exactly two).
    #[inline]
    pub(crate) fn read_u16(self, b: &[u8]) -> u16 {
        with_order!(self, B => B::read_u16(b))
    }

    /// Decode a `u32` from the first four bytes of `b`.
    #[inline]
    pub(crate) fn read_u32(self, b: &[u8]) -> u32 {
        with_order!(self, B => B::read_u32(b))
    }

    /// Decode a `u64` from the first eight bytes of `b`.
    #[inline]
    pub(crate) fn read_u64(self, b: &[u8]) -> u64 {
        with_order!(self, B => B::read_u64(b))
    }
}

impl Target {
    /// Decode a pointer-sized value from the first 4 or 8 bytes of `b`.
    #[inline]
    pub(crate) fn read_ptr(self, b: &[u8]) -> u64 {
        match self.ptr_size {
            PtrSize::Four => u64::from(self.endian.read_u32(b)),
            PtrSize::Eight => self.endian.read_u64(b),
        }
    }
}

/// What went wrong at a cursor position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CursorErrorKind {
    /// The field runs past the end of the buffer.
    Truncated {
        /// Bytes the field needs.
        needed: u64,
        /// Bytes left at its offset.
        available: u64,
    },
    /// A count of items whose total size exceeds what is left.
    CountExceeds {
        /// The count.
        count: u64,
        /// Bytes per item.
        item_bytes: u64,
        /// Bytes left.
        available: u64,
    },
    /// A NUL-terminated string without its NUL.
    UnterminatedString,
    /// A value that does not fit its field (an address above 4 GiB with 4-byte pointers).
    TooWide(u64),
}

/// A failed cursor access: which field, at which byte offset, and why.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct CursorError {
    /// Byte offset of the field from the start of the buffer.
    pub offset: u64,
    /// The field's name.
    pub field: &'static str,
    /// What is wrong.
    pub kind: CursorErrorKind,
}

/// A position in a byte buffer that decodes (over `&[u8]`) or encodes (over `&mut [u8]`)
/// fields in the byte order and pointer size of its [`Target`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct Cursor<B> {
    buf: B,
    pos: usize,
    target: Target,
}

impl<B: AsRef<[u8]>> Cursor<B> {
    /// A cursor at the start of `buf`.
    #[inline]
    pub(crate) fn new(buf: B, target: Target) -> Self {
        Cursor {
            buf,
            pos: 0,
            target,
        }
    }

    /// The byte order and pointer size fields are decoded with.
    #[inline]
    pub(crate) fn target(&self) -> Target {
        self.target
    }

    /// The current byte offset.
    #[inline]
    pub(crate) fn pos(&self) -> usize {
        self.pos
    }

    /// Bytes from the position to the end of the buffer.
    #[inline]
    pub(crate) fn remaining(&self) -> usize {
        self.buf.as_ref().len() - self.pos
    }

    /// Move to `pos` (clamped to the end of the buffer, so the cursor stays valid).
    #[inline]
    pub(crate) fn seek(&mut self, pos: usize) {
        self.pos = pos.min(self.buf.as_ref().len());
    }

    #[inline]
    fn error(&self, field: &'static str, kind: CursorErrorKind) -> CursorError {
        CursorError {
            offset: self.pos as u64,
            field,
            kind,
        }
    }

    /// Check that `n` bytes remain for `field`; return the start offset.
    #[inline]
    fn reserve(&self, n: usize, field: &'static str) -> Result<usize, CursorError> {
        let available = self.remaining();
        if n > available {
            return Err(self.error(
                field,
                CursorErrorKind::Truncated {
                    needed: n as u64,
                    available: available as u64,
                },
            ));
        }
        Ok(self.pos)
    }
}

impl<'a> Cursor<&'a [u8]> {
    /// The whole buffer.
    #[inline]
    pub(crate) fn data(&self) -> &'a [u8] {
        self.buf
    }

    /// The next `n` bytes.
    #[inline]
    pub(crate) fn take(&mut self, n: usize, field: &'static str) -> Result<&'a [u8], CursorError> {
        let at = self.reserve(n, field)?;
        self.pos = at + n;
        Ok(&self.buf[at..at + n])
    }

    /// The next `N` bytes as an array.
    #[inline]
    pub(crate) fn array<const N: usize>(
        &mut self,
        field: &'static str,
    ) -> Result<[u8; N], CursorError> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N, field)?);
        Ok(a)
    }

    /// One byte.
    #[inline]
    pub(crate) fn u8(&mut self, field: &'static str) -> Result<u8, CursorError> {
        Ok(self.take(1, field)?[0])
    }

    /// A `u16` in the target's byte order.
    #[cfg_attr(not(feature = "alloc"), allow(dead_code))] // only the pcsample reader
    #[inline]
    pub(crate) fn u16(&mut self, field: &'static str) -> Result<u16, CursorError> {
        let e = self.target.endian;
        Ok(e.read_u16(self.take(2, field)?))
    }

    /// A `u32` in the target's byte order.
    #[inline]
    pub(crate) fn u32(&mut self, field: &'static str) -> Result<u32, CursorError> {
        let e = self.target.endian;
        Ok(e.read_u32(self.take(4, field)?))
    }

    /// A `u64` in the target's byte order.
    #[cfg_attr(not(feature = "alloc"), allow(dead_code))] // only the pcsample reader
    #[inline]
    pub(crate) fn u64(&mut self, field: &'static str) -> Result<u64, CursorError> {
        let e = self.target.endian;
        Ok(e.read_u64(self.take(8, field)?))
    }

    /// A pointer-sized value (4 or 8 bytes) in the target's byte order.
    #[inline]
    pub(crate) fn ptr(&mut self, field: &'static str) -> Result<u64, CursorError> {
        let t = self.target;
        Ok(t.read_ptr(self.take(t.ptr_size.bytes(), field)?))
    }

    /// `count` items of `item` bytes each. The product is checked against what remains before
    /// anything is taken; an excess is reported at `count_offset`, where the count was read.
    #[inline]
    pub(crate) fn take_items(
        &mut self,
        count: u64,
        item: u64,
        count_offset: usize,
        field: &'static str,
    ) -> Result<&'a [u8], CursorError> {
        let available = self.remaining() as u64;
        match count.checked_mul(item) {
            Some(total) if total <= available => self.take(total as usize, field),
            _ => Err(CursorError {
                offset: count_offset as u64,
                field,
                kind: CursorErrorKind::CountExceeds {
                    count,
                    item_bytes: item,
                    available,
                },
            }),
        }
    }

    /// Skip a NUL-terminated string (and its NUL).
    #[inline]
    pub(crate) fn skip_string(&mut self, field: &'static str) -> Result<(), CursorError> {
        match self.buf[self.pos..].iter().position(|&b| b == 0) {
            Some(i) => {
                self.pos += i + 1;
                Ok(())
            }
            None => Err(self.error(field, CursorErrorKind::UnterminatedString)),
        }
    }
}

impl Cursor<&mut [u8]> {
    /// The bytes written so far (from the start of the buffer to the position).
    #[inline]
    pub(crate) fn written(&self) -> &[u8] {
        &self.buf[..self.pos]
    }

    /// Room for `n` bytes at the position, advancing past them.
    #[inline]
    fn room(&mut self, n: usize, field: &'static str) -> Result<&mut [u8], CursorError> {
        let at = self.reserve(n, field)?;
        self.pos = at + n;
        Ok(&mut self.buf[at..at + n])
    }

    /// Raw bytes.
    #[inline]
    pub(crate) fn put(&mut self, bytes: &[u8], field: &'static str) -> Result<(), CursorError> {
        self.room(bytes.len(), field)?.copy_from_slice(bytes);
        Ok(())
    }

    /// One byte.
    #[inline]
    pub(crate) fn put_u8(&mut self, v: u8, field: &'static str) -> Result<(), CursorError> {
        self.put(&[v], field)
    }

    /// A `u16` in the target's byte order.
    #[inline]
    pub(crate) fn put_u16(&mut self, v: u16, field: &'static str) -> Result<(), CursorError> {
        let e = self.target.endian;
        let b = self.room(2, field)?;
        with_order!(e, B => B::write_u16(b, v));
        Ok(())
    }

    /// A `u32` in the target's byte order.
    #[inline]
    pub(crate) fn put_u32(&mut self, v: u32, field: &'static str) -> Result<(), CursorError> {
        let e = self.target.endian;
        let b = self.room(4, field)?;
        with_order!(e, B => B::write_u32(b, v));
        Ok(())
    }

    /// A `u64` in the target's byte order.
    #[inline]
    pub(crate) fn put_u64(&mut self, v: u64, field: &'static str) -> Result<(), CursorError> {
        let e = self.target.endian;
        let b = self.room(8, field)?;
        with_order!(e, B => B::write_u64(b, v));
        Ok(())
    }

    /// As many `u16`s from `values` as fit the rest of the buffer, at most `max`; returns how
    /// many were written (fewer only when the buffer is full or `values` ends). The byte order
    /// is dispatched once per call, not once per value: this is the histogram bins' hot loop.
    #[inline]
    pub(crate) fn put_u16s<I: Iterator<Item = u16>>(&mut self, values: &mut I, max: u64) -> u64 {
        fn fill<B: ByteOrder, I: Iterator<Item = u16>>(
            room: &mut [u8],
            values: &mut I,
            max: u64,
        ) -> u64 {
            let mut n = 0u64;
            for slot in room.chunks_exact_mut(2) {
                if n == max {
                    break;
                }
                let Some(v) = values.next() else {
                    break;
                };
                B::write_u16(slot, v);
                n += 1;
            }
            n
        }
        let e = self.target.endian;
        let room = &mut self.buf[self.pos..];
        let n = with_order!(e, B => fill::<B, I>(room, values, max));
        self.pos += 2 * n as usize;
        n
    }

    /// A pointer-sized value; with 4-byte pointers a value above `u32::MAX` is
    /// [`CursorErrorKind::TooWide`] and nothing is written.
    #[inline]
    pub(crate) fn put_ptr(&mut self, v: u64, field: &'static str) -> Result<(), CursorError> {
        match self.target.ptr_size {
            PtrSize::Four => {
                let v32 =
                    u32::try_from(v).map_err(|_| self.error(field, CursorErrorKind::TooWide(v)))?;
                self.put_u32(v32, field)
            }
            PtrSize::Eight => self.put_u64(v, field),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TARGETS: [Target; 4] = [
        Target::new(PtrSize::Four, Endian::Little),
        Target::new(PtrSize::Four, Endian::Big),
        Target::new(PtrSize::Eight, Endian::Little),
        Target::new(PtrSize::Eight, Endian::Big),
    ];

    #[test]
    fn writes_read_back_in_every_target() {
        for t in TARGETS {
            let mut buf = [0u8; 32];
            let mut w = Cursor::new(&mut buf[..], t);
            w.put_u8(7, "a").unwrap();
            w.put_u16(0x1234, "b").unwrap();
            w.put_u32(0xdead_beef, "c").unwrap();
            w.put_u64(0x0102_0304_0506_0708, "d").unwrap();
            w.put_ptr(0x8000_0001, "e").unwrap();
            let mut it = [0xa1b2u16, 0xc3d4, 0xe5f6].into_iter();
            assert_eq!(w.put_u16s(&mut it, 2), 2);
            assert_eq!(w.remaining(), 32 - 19 - t.ptr_size.bytes());
            let n = w.pos();
            assert_eq!(n, 19 + t.ptr_size.bytes());
            let mut r = Cursor::new(&buf[..n], t);
            assert_eq!(r.u8("a"), Ok(7));
            assert_eq!(r.u16("b"), Ok(0x1234));
            assert_eq!(r.u32("c"), Ok(0xdead_beef));
            assert_eq!(r.u64("d"), Ok(0x0102_0304_0506_0708));
            assert_eq!(r.ptr("e"), Ok(0x8000_0001));
            assert_eq!(r.u16("f"), Ok(0xa1b2));
            assert_eq!(r.u16("g"), Ok(0xc3d4));
            assert_eq!(r.remaining(), 0);
        }
    }

    #[test]
    fn byte_order_is_the_targets() {
        let mut buf = [0u8; 4];
        let mut w = Cursor::new(&mut buf[..], Target::new(PtrSize::Four, Endian::Big));
        w.put_u32(1, "x").unwrap();
        assert_eq!(buf, [0, 0, 0, 1]);
        let mut w = Cursor::new(&mut buf[..], Target::new(PtrSize::Four, Endian::Little));
        w.put_u32(1, "x").unwrap();
        assert_eq!(buf, [1, 0, 0, 0]);
    }

    #[test]
    fn short_reads_and_writes_name_field_and_offset() {
        let t = TARGETS[2];
        let data = [1u8, 2, 3, 4, 5];
        let mut r = Cursor::new(&data[..], t);
        r.u8("first").unwrap();
        let e = r.ptr("pc").unwrap_err();
        assert_eq!(
            e,
            CursorError {
                offset: 1,
                field: "pc",
                kind: CursorErrorKind::Truncated {
                    needed: 8,
                    available: 4
                }
            }
        );
        // A failed read does not move the cursor.
        assert_eq!(r.pos(), 1);
        let e = r.take_items(u64::MAX, 2, 0, "count").unwrap_err();
        assert_eq!(e.offset, 0);
        assert!(matches!(e.kind, CursorErrorKind::CountExceeds { .. }));
        assert_eq!(
            r.skip_string("s").unwrap_err().kind,
            CursorErrorKind::UnterminatedString
        );

        let mut buf = [0u8; 3];
        let mut w = Cursor::new(&mut buf[..], t);
        w.put_u16(1, "x").unwrap();
        let e = w.put_u16(2, "y").unwrap_err();
        assert_eq!((e.offset, e.field), (2, "y"));
        assert_eq!(w.written(), &[1, 0]);
        let mut w = Cursor::new(&mut buf[..], TARGETS[0]);
        assert_eq!(
            w.put_ptr(1 << 32, "addr").unwrap_err().kind,
            CursorErrorKind::TooWide(1 << 32)
        );
        assert_eq!(w.pos(), 0);
    }
}
