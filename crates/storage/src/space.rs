//! # Tablespaces: page allocation, the free list, file growth
//!
//! A tablespace is one data file, an array of pages. Page 0 is the *space
//! header*; it records how far the file has been handed out and the head of
//! a singly linked list of freed pages:
//!
//! ```text
//!  page 0 (SpaceHeader)
//!   24  magic u32 "QSPC"
//!   28  page_size u32
//!   32  size_pages u32     pages the file has been grown to
//!   36  hwm u32            pages [0, hwm) are in use or on the free list
//!   40  free_head u32      first free page (NIL = none)
//!   44  free_count u32
//!   48  dir_root u32       root page of the index directory tree
//!   52  lob_orphans u32    head of the LOB orphan list (lob.rs; 0 or NIL
//!                          = empty: spaces made before LOBs hold 0)
//!
//!  free page (type Free): 24 next u32 -> next free page or NIL
//!
//!  file:  [hdr][dir][ tree pages and free pages ... ][hwm .. size: unused]
//! ```
//!
//! Allocation takes the free list head, else the page at the high-water
//! mark, growing the file by an extent batch when the mark reaches its size
//! (64 pages, or an eighth of the file, at most 4096 pages). Every change to
//! the header is a logged write in the caller's mini-transaction, so an
//! allocation is atomic with the structure change that needed it.
//!
//! File growth itself is not logged: `set_len` runs before the new pages
//! are used, and recovery treats reads beyond the end of the file as pages
//! never written, which redo then initialises.

use crate::btree::node::NIL;
use crate::error::{Result, StorageError};
use crate::mtr::{Mtr, Slot};
use crate::page::{get_u32, PageId, PageType};

pub const OFF_MAGIC: usize = 24;
pub const OFF_PAGE_SIZE: usize = 28;
pub const OFF_SIZE: usize = 32;
pub const OFF_HWM: usize = 36;
pub const OFF_FREE_HEAD: usize = 40;
pub const OFF_FREE_COUNT: usize = 44;
pub const OFF_DIR_ROOT: usize = 48;
pub const OFF_LOB_ORPHANS: usize = 52;
pub const OFF_FREE_NEXT: usize = 24;
pub const MAGIC: u32 = u32::from_le_bytes(*b"QSPC");

/// The page number of the index directory's root in every new space.
pub const DIR_ROOT_PAGE: u32 = 1;

/// Fields of a space header page.
#[derive(Debug, Clone, Copy)]
pub struct Header {
    pub page_size: u32,
    pub size_pages: u32,
    pub hwm: u32,
    pub free_head: u32,
    pub free_count: u32,
    pub dir_root: u32,
}

pub fn read_header(p: &[u8]) -> Option<Header> {
    if get_u32(p, OFF_MAGIC) != MAGIC {
        return None;
    }
    Some(Header {
        page_size: get_u32(p, OFF_PAGE_SIZE),
        size_pages: get_u32(p, OFF_SIZE),
        hwm: get_u32(p, OFF_HWM),
        free_head: get_u32(p, OFF_FREE_HEAD),
        free_count: get_u32(p, OFF_FREE_COUNT),
        dir_root: get_u32(p, OFF_DIR_ROOT),
    })
}

fn header(mtr: &Mtr<'_>, s: Slot) -> Result<Header> {
    read_header(mtr.page(s)).ok_or_else(|| {
        StorageError::BadDatadir(format!("{} is not a tablespace header", mtr.id(s)))
    })
}

/// Formats page 0 of a brand-new space (in the caller's mtr).
pub fn format(mtr: &mut Mtr<'_>, space: u32, page_size: u32, size_pages: u32) -> Result<Slot> {
    let s = mtr.latch_new(PageId::new(space, 0))?;
    mtr.init_page(s, PageType::SpaceHeader);
    mtr.write_u32(s, OFF_MAGIC, MAGIC);
    mtr.write_u32(s, OFF_PAGE_SIZE, page_size);
    mtr.write_u32(s, OFF_SIZE, size_pages);
    mtr.write_u32(s, OFF_HWM, 1);
    mtr.write_u32(s, OFF_FREE_HEAD, NIL);
    mtr.write_u32(s, OFF_FREE_COUNT, 0);
    mtr.write_u32(s, OFF_DIR_ROOT, NIL);
    mtr.write_u32(s, OFF_LOB_ORPHANS, NIL);
    Ok(s)
}

/// Allocates one page in `space`; the caller initialises it (the page is
/// latched in the mtr, content undefined).
pub fn allocate(mtr: &mut Mtr<'_>, space: u32) -> Result<(u32, Slot)> {
    let hs = mtr.latch(PageId::new(space, 0))?;
    let h = header(mtr, hs)?;
    if h.free_head != NIL {
        let p = h.free_head;
        if p == 0 || p >= h.hwm {
            return Err(StorageError::BadDatadir(format!(
                "space {space}: free list head {p} out of range (hwm {})",
                h.hwm
            )));
        }
        let fs = mtr.latch(PageId::new(space, p))?;
        if crate::page::page_type(mtr.page(fs)) != Some(PageType::Free) {
            return Err(StorageError::BadDatadir(format!(
                "space {space}: page {p} on the free list is not a free page"
            )));
        }
        let next = get_u32(mtr.page(fs), OFF_FREE_NEXT);
        mtr.write_u32(hs, OFF_FREE_HEAD, next);
        mtr.write_u32(hs, OFF_FREE_COUNT, h.free_count - 1);
        return Ok((p, fs));
    }
    let p = h.hwm;
    if p == u32::MAX - 1 {
        return Err(StorageError::TooLarge(format!(
            "space {space} is full ({} pages)",
            h.hwm
        )));
    }
    grow_to(mtr, hs, &h, space, p + 1)?;
    mtr.write_u32(hs, OFF_HWM, p + 1);
    mtr.pool().note_hwm(p + 1);
    let s = mtr.latch_new(PageId::new(space, p))?;
    Ok((p, s))
}

/// Grows the space so that pages below `end` exist: by an eighth of its
/// size (64..4096 pages) or to `end`, whichever is more. Usually a no-op:
/// Store::reserve_pages keeps the file ahead of the high-water mark before
/// commits start (an ENOSPC there is an error to the client); running out
/// here, inside a mini-transaction that may have changed pages, poisons
/// the store.
fn grow_to(mtr: &mut Mtr<'_>, hs: Slot, h: &Header, space: u32, end: u32) -> Result<()> {
    if end <= h.size_pages {
        return Ok(());
    }
    let grow = (h.size_pages / 8).clamp(64, 4096);
    let new_size = end.max(h.size_pages.saturating_add(grow));
    let pool = mtr.pool();
    let sf = pool.space_file(space)?;
    pool.poison
        .guard(sf.file.allocate(new_size as u64 * pool.page_size() as u64))?;
    mtr.write_u32(hs, OFF_SIZE, new_size);
    Ok(())
}

/// Returns a page to the free list (in the caller's mtr). The page must be
/// latched in this mtr already or unlatched by everyone else.
pub fn free(mtr: &mut Mtr<'_>, space: u32, page_no: u32) -> Result<()> {
    free_page(mtr, space, page_no, true)
}

/// [`free`] of a page whose content is not read first (it may be all
/// zero or never written): a reserved page a bulk load did not use.
pub fn free_unread(mtr: &mut Mtr<'_>, space: u32, page_no: u32) -> Result<()> {
    free_page(mtr, space, page_no, false)
}

fn free_page(mtr: &mut Mtr<'_>, space: u32, page_no: u32, read: bool) -> Result<()> {
    assert!(page_no > DIR_ROOT_PAGE, "freeing a fixed page {page_no}");
    let hs = mtr.latch(PageId::new(space, 0))?;
    let h = header(mtr, hs)?;
    let id = PageId::new(space, page_no);
    let s = if read {
        mtr.latch(id)?
    } else {
        mtr.latch_new(id)?
    };
    mtr.init_page(s, PageType::Free);
    mtr.write_u32(s, OFF_FREE_NEXT, h.free_head);
    mtr.write_u32(hs, OFF_FREE_HEAD, page_no);
    mtr.write_u32(hs, OFF_FREE_COUNT, h.free_count + 1);
    Ok(())
}

/// Hands out `pages` consecutive pages at the high-water mark (never the
/// free list) in the caller's mtr, growing the file as [`allocate`] does.
/// The pages are not latched or initialised: a bulk load (bulk.rs)
/// writes them outside the buffer pool. Returns the first page.
pub fn reserve(mtr: &mut Mtr<'_>, space: u32, pages: u32) -> Result<u32> {
    let hs = mtr.latch(PageId::new(space, 0))?;
    let h = header(mtr, hs)?;
    let first = h.hwm;
    let end = first
        .checked_add(pages)
        .filter(|&e| e < u32::MAX - 1)
        .ok_or_else(|| {
            StorageError::TooLarge(format!(
                "space {space} is full ({} pages, {pages} more asked for)",
                h.hwm
            ))
        })?;
    grow_to(mtr, hs, &h, space, end)?;
    mtr.write_u32(hs, OFF_HWM, end);
    mtr.pool().note_hwm(end);
    Ok(first)
}
