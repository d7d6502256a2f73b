//! # Aligned buffers for `O_DIRECT`
//!
//! With `O_DIRECT` the kernel moves bytes straight between the device and
//! the caller's memory, bypassing the page cache. The price is that the
//! buffer address, the file offset and the length must all be multiples of
//! the device's logical block size (we use 4096 on [`crate::OsFs`], 512 on
//! [`crate::SimFs`]); otherwise the system call fails with `EINVAL`. A
//! `Vec<u8>` only promises 1-byte alignment, so storage code that reads and
//! writes pages uses an [`AlignedBuf`] instead:
//!
//! ```text
//!   heap:  ...|<------------- len bytes ------------->|...
//!             ^
//!             ptr, a multiple of `align` (e.g. 4096)
//! ```
//!
//! The buffer is allocated with [`std::alloc::alloc_zeroed`] and a
//! [`Layout`] carrying the alignment, so it starts zeroed (no uninitialised
//! bytes can leak into a file) and it is freed with the same layout on drop.
//! It dereferences to `[u8]`, so it can be passed wherever a slice is
//! expected.

use std::alloc::{self, Layout};
use std::fmt;
use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;

/// A zero-initialised heap buffer whose start address is a multiple of a
/// chosen power-of-two alignment.
///
/// Invariants: `ptr` was returned by `alloc_zeroed(layout)` and is owned
/// exclusively by this value; `layout.size() == max(len, 1)` (a zero-sized
/// allocation is not allowed, so an empty buffer still owns one byte);
/// `layout.align()` is the requested alignment.
pub struct AlignedBuf {
    ptr: NonNull<u8>,
    len: usize,
    layout: Layout,
}

// SAFETY: AlignedBuf owns its allocation exclusively (like a Box<[u8]>);
// shared access only hands out `&[u8]` and mutation needs `&mut self`.
unsafe impl Send for AlignedBuf {}
// SAFETY: see above; `&AlignedBuf` only allows reads.
unsafe impl Sync for AlignedBuf {}

impl AlignedBuf {
    /// Allocates `len` zeroed bytes aligned to `align`.
    ///
    /// # Panics
    ///
    /// If `align` is not a power of two, or `len` rounded up to `align`
    /// overflows `isize`. Aborts (via [`alloc::handle_alloc_error`]) when
    /// the allocator is out of memory, like `Vec` does.
    pub fn new(len: usize, align: usize) -> AlignedBuf {
        let layout = Layout::from_size_align(len.max(1), align)
            .expect("AlignedBuf: align must be a power of two and len must fit in isize");
        // SAFETY: the layout has a non-zero size.
        let raw = unsafe { alloc::alloc_zeroed(layout) };
        let ptr = match NonNull::new(raw) {
            Some(p) => p,
            None => alloc::handle_alloc_error(layout),
        };
        AlignedBuf { ptr, len, layout }
    }

    /// Allocates a buffer aligned to `align` holding a copy of `data`.
    pub fn from_slice(data: &[u8], align: usize) -> AlignedBuf {
        let mut buf = AlignedBuf::new(data.len(), align);
        buf.copy_from_slice(data);
        buf
    }

    /// The alignment of the start address.
    pub fn align(&self) -> usize {
        self.layout.align()
    }

    /// Sets every byte to zero.
    pub fn zero(&mut self) {
        self.fill(0);
    }
}

impl Deref for AlignedBuf {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        // SAFETY: ptr is valid for `len` initialised (zeroed at allocation)
        // bytes for as long as self lives; we own it.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl DerefMut for AlignedBuf {
    fn deref_mut(&mut self) -> &mut [u8] {
        // SAFETY: as in `deref`, and `&mut self` guarantees exclusivity.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl AsRef<[u8]> for AlignedBuf {
    fn as_ref(&self) -> &[u8] {
        self
    }
}

impl AsMut<[u8]> for AlignedBuf {
    fn as_mut(&mut self) -> &mut [u8] {
        self
    }
}

impl Clone for AlignedBuf {
    /// A copy with the same length and alignment.
    fn clone(&self) -> AlignedBuf {
        AlignedBuf::from_slice(self, self.align())
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        // SAFETY: ptr came from alloc_zeroed with exactly this layout and is
        // freed only here.
        unsafe { alloc::dealloc(self.ptr.as_ptr(), self.layout) }
    }
}

impl fmt::Debug for AlignedBuf {
    // The content is usually a 16 KiB page; printing it helps nobody.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AlignedBuf")
            .field("len", &self.len)
            .field("align", &self.align())
            .finish()
    }
}

impl PartialEq for AlignedBuf {
    fn eq(&self, other: &AlignedBuf) -> bool {
        self[..] == other[..]
    }
}

impl Eq for AlignedBuf {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_and_zeroed() {
        for &align in &[1usize, 8, 512, 4096, 65536] {
            for &len in &[0usize, 1, 511, 4096, 16384 + 3] {
                let b = AlignedBuf::new(len, align);
                assert_eq!(b.len(), len);
                assert_eq!(b.as_ptr() as usize % align, 0, "align {align} len {len}");
                assert!(b.iter().all(|&x| x == 0));
                assert_eq!(b.align(), align);
            }
        }
    }

    #[test]
    fn read_write_clone() {
        let mut b = AlignedBuf::new(4096, 4096);
        b[..5].copy_from_slice(b"hello");
        b[4095] = 7;
        let c = b.clone();
        assert_eq!(c.as_ptr() as usize % 4096, 0);
        assert_eq!(&c[..5], b"hello");
        assert_eq!(c[4095], 7);
        assert_eq!(b, c);
        b.zero();
        assert!(b.iter().all(|&x| x == 0));
        let s = AlignedBuf::from_slice(b"abc", 512);
        assert_eq!(&s[..], b"abc");
        assert_eq!(format!("{s:?}"), "AlignedBuf { len: 3, align: 512 }");
    }

    #[test]
    fn send_sync_across_threads() {
        let mut b = AlignedBuf::new(512, 512);
        b[0] = 42;
        let h = std::thread::spawn(move || b[0]);
        assert_eq!(h.join().expect("thread"), 42);
    }

    #[test]
    #[should_panic(expected = "power of two")]
    fn bad_alignment_panics() {
        let _ = AlignedBuf::new(10, 3);
    }
}
