//! # Pages: the unit of I/O
//!
//! Every data file is an array of fixed-size pages (`innodb_page_size`,
//! default 16 KiB). Each page starts with the same 24-byte *file header*,
//! which lets any page be checked on its own when it is read:
//!
//! ```text
//!  offset  size  field
//!  ------  ----  ---------------------------------------------------------
//!       0     4  checksum: crc32c of bytes [4, page_size)
//!       4     4  space id
//!       8     4  page number
//!      12     2  page type (PageType)
//!      14     2  reserved, zero
//!      16     8  page LSN: end LSN of the newest redo applied to this page
//!      24   ...  type-specific body
//! ```
//!
//! All integers in quire's on-disk formats are little-endian, except inside
//! B+tree keys (memcomparable, big-endian).
//!
//! Invariants checked on every read from disk ([`verify`]):
//! * the checksum matches,
//! * space id and page number match where the page was read from (this
//!   catches misdirected writes, which a checksum alone would not),
//! * the page type is known.
//!
//! A page of all zero bytes is "never written" (a file grown but not yet
//! written there); it is reported as such, not as corruption, and only
//! recovery may accept it (when redo initialises the page).

use std::fmt;

/// Log sequence number: a position in the redo stream, counted in redo
/// payload bytes (see `redo`). Page LSNs and checkpoints use it.
pub type Lsn = u64;

pub const FIL_HEADER_BYTES: usize = 24;
pub const OFF_CHECKSUM: usize = 0;
pub const OFF_SPACE: usize = 4;
pub const OFF_PAGE_NO: usize = 8;
pub const OFF_TYPE: usize = 12;
pub const OFF_LSN: usize = 16;

/// Identifies a page: tablespace and page number within it.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PageId {
    pub space: u32,
    pub page_no: u32,
}

impl PageId {
    pub const fn new(space: u32, page_no: u32) -> Self {
        PageId { space, page_no }
    }
    /// Packs into one u64 (space in the high half) for atomics and hashing.
    pub const fn to_u64(self) -> u64 {
        ((self.space as u64) << 32) | self.page_no as u64
    }
    pub const fn from_u64(v: u64) -> Self {
        PageId {
            space: (v >> 32) as u32,
            page_no: v as u32,
        }
    }
}

impl fmt::Debug for PageId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.space, self.page_no)
    }
}

impl fmt::Display for PageId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "space {} page {}", self.space, self.page_no)
    }
}

/// Page types. The numeric values are on disk: never renumber.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u16)]
pub enum PageType {
    /// Space header (page 0 of every tablespace): size, free list.
    SpaceHeader = 1,
    /// A page on the tablespace free list.
    Free = 2,
    /// A B+tree node (leaf or internal).
    Index = 3,
    /// A page of an off-page value's chain (lob.rs).
    Lob = 4,
}

impl PageType {
    pub fn from_u16(v: u16) -> Option<PageType> {
        match v {
            1 => Some(PageType::SpaceHeader),
            2 => Some(PageType::Free),
            3 => Some(PageType::Index),
            4 => Some(PageType::Lob),
            _ => None,
        }
    }
}

/// The allowed `innodb_page_size` values.
pub const PAGE_SIZES: [usize; 5] = [4096, 8192, 16384, 32768, 65536];

#[inline]
pub fn get_u16(b: &[u8], off: usize) -> u16 {
    u16::from_le_bytes([b[off], b[off + 1]])
}
#[inline]
pub fn put_u16(b: &mut [u8], off: usize, v: u16) {
    b[off..off + 2].copy_from_slice(&v.to_le_bytes());
}
#[inline]
pub fn get_u32(b: &[u8], off: usize) -> u32 {
    u32::from_le_bytes(b[off..off + 4].try_into().expect("4-byte slice"))
}
#[inline]
pub fn put_u32(b: &mut [u8], off: usize, v: u32) {
    b[off..off + 4].copy_from_slice(&v.to_le_bytes());
}
#[inline]
pub fn get_u64(b: &[u8], off: usize) -> u64 {
    u64::from_le_bytes(b[off..off + 8].try_into().expect("8-byte slice"))
}
#[inline]
pub fn put_u64(b: &mut [u8], off: usize, v: u64) {
    b[off..off + 8].copy_from_slice(&v.to_le_bytes());
}

pub fn page_type_raw(page: &[u8]) -> u16 {
    get_u16(page, OFF_TYPE)
}
pub fn page_type(page: &[u8]) -> Option<PageType> {
    PageType::from_u16(page_type_raw(page))
}
pub fn page_lsn(page: &[u8]) -> Lsn {
    get_u64(page, OFF_LSN)
}
pub fn set_page_lsn(page: &mut [u8], lsn: Lsn) {
    put_u64(page, OFF_LSN, lsn)
}
pub fn page_id(page: &[u8]) -> PageId {
    PageId::new(get_u32(page, OFF_SPACE), get_u32(page, OFF_PAGE_NO))
}

/// Writes the file header's identity fields and type, leaving the body.
pub fn init_header(page: &mut [u8], id: PageId, ty: PageType) {
    page[..FIL_HEADER_BYTES].fill(0);
    put_u32(page, OFF_SPACE, id.space);
    put_u32(page, OFF_PAGE_NO, id.page_no);
    put_u16(page, OFF_TYPE, ty as u16);
}

/// crc32c over everything but the checksum field itself.
pub fn compute_checksum(page: &[u8]) -> u32 {
    crc32c::crc32c(&page[OFF_CHECKSUM + 4..])
}

/// Stamps the checksum; call right before the page goes to disk.
pub fn seal(page: &mut [u8]) {
    let c = compute_checksum(page);
    put_u32(page, OFF_CHECKSUM, c);
}

/// What a page read from disk turned out to be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PageCheck {
    /// Checksum, identity and type are right.
    Valid,
    /// Every byte is zero: never written.
    Zero,
    /// Anything else; the string says what is wrong.
    Bad(String),
}

/// Verifies a page just read from where `expect` lives.
pub fn verify(page: &[u8], expect: PageId) -> PageCheck {
    let stored = get_u32(page, OFF_CHECKSUM);
    let computed = compute_checksum(page);
    if stored != computed {
        if page.iter().all(|&b| b == 0) {
            return PageCheck::Zero;
        }
        return PageCheck::Bad(format!(
            "checksum mismatch (stored {stored:#010x}, computed {computed:#010x})"
        ));
    }
    let found = page_id(page);
    if found != expect {
        return PageCheck::Bad(format!("page claims to be {found} (misdirected write?)"));
    }
    if page_type(page).is_none() {
        return PageCheck::Bad(format!("unknown page type {}", page_type_raw(page)));
    }
    PageCheck::Valid
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seal_then_verify() {
        let mut p = vec![0u8; 4096];
        let id = PageId::new(0, 7);
        init_header(&mut p, id, PageType::Index);
        set_page_lsn(&mut p, 1234);
        p[100] = 42;
        seal(&mut p);
        assert_eq!(verify(&p, id), PageCheck::Valid);
        p[100] ^= 1;
        assert!(matches!(verify(&p, id), PageCheck::Bad(_)));
        p[100] ^= 1;
        assert!(matches!(verify(&p, PageId::new(0, 8)), PageCheck::Bad(_)));
        assert_eq!(verify(&vec![0u8; 4096], id), PageCheck::Zero);
    }
}
