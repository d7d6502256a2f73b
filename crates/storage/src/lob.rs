//! # Large objects: values stored off-page in chains of LOB pages
//!
//! A B+tree cell holds at most a quarter of a page (`max_entry_bytes`), so
//! a long value (a 5 KB TEXT, a 2 MiB BLOB) cannot live in a node. As in
//! InnoDB's DYNAMIC row format, such a value is written to a chain of LOB
//! pages of its own and the row keeps a 20-byte [`LobRef`] to it:
//!
//! ```text
//!   row in a leaf:  ... | ref: space u32 | first u32 | len u64 | crc32c u32 | ...
//!                               │
//!                               v
//!   LOB page:  24 next u32 ──> next page of the chain (NIL on the last)
//!              28 data_len u32     bytes of the value on this page
//!              32 flags u8         1 = first page, 2 = on the orphan list
//!              36 orphan_prev u32  (first page) orphan-list links
//!              40 orphan_next u32
//!              44 total u64        (first page) the value's length
//!              52 data ...
//! ```
//!
//! Every change is a logged write in a mini-transaction, so a chain is as
//! crash-safe as a tree node. A chain longer than one mini-transaction can
//! carry is written by several, which raises the one real problem of off-
//! page storage: a crash between the last page of a chain and the row that
//! points to it must not leak the pages, nor must a crash between a row
//! losing its last reference to a chain (an UPDATE or purge) and the pages
//! being freed. Hence the **orphan list**, a doubly linked list through the
//! first pages of chains, with its head in the space header:
//!
//! ```text
//!   write(value)      chain born on the orphan list (first mtr)
//!   adopt(ref)        in the mtr that stores the row: off the list
//!   orphan(ref)       in the mtr that drops the row's reference: on the list
//!   reclaim(ref)      later (purge, when no snapshot reads it): freed, in
//!                     pieces from the tail, the first page last
//!   reclaim_orphans   end of recovery: whatever is still on the list
//! ```
//!
//! Invariants (checked by `check.rs`): every LOB page belongs to exactly
//! one chain; every chain is referenced by exactly one tree value or is on
//! the orphan list, never both; a chain's data lengths add up to its total.
//! Reads verify type, lengths and the checksum in the reference, so a
//! chain freed under a reader is an error, never wrong data.
//!
//! Latch order: index pages, then the space header, then LOB pages (the
//! same order as page allocation during a split).

use crate::btree::node::NIL;
use crate::error::{Result, StorageError};
use crate::mtr::{Mtr, Slot};
use crate::page::{get_u32, PageId, PageType};
use crate::space;
use crate::stats::Stats;
use crate::store::Shared;

const OFF_NEXT: usize = 24;
const OFF_DATA_LEN: usize = 28;
const OFF_FLAGS: usize = 32;
const OFF_ORPHAN_PREV: usize = 36;
const OFF_ORPHAN_NEXT: usize = 40;
const OFF_TOTAL: usize = 44;
/// Where a LOB page's data starts.
pub const LOB_HEADER_END: usize = 52;

const FLAG_FIRST: u8 = 1;
const FLAG_ORPHAN: u8 = 2;

/// Most pages one mini-transaction writes or frees.
const PAGES_PER_MTR: usize = 64;

/// Bytes of a [`LobRef`] in a row.
pub const LOB_REF_BYTES: usize = 20;

/// A row's reference to an off-page value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LobRef {
    pub space: u32,
    pub first: u32,
    pub len: u64,
    pub crc: u32,
}

impl LobRef {
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.space.to_le_bytes());
        out.extend_from_slice(&self.first.to_le_bytes());
        out.extend_from_slice(&self.len.to_le_bytes());
        out.extend_from_slice(&self.crc.to_le_bytes());
    }

    pub fn decode(b: &[u8]) -> Option<LobRef> {
        if b.len() != LOB_REF_BYTES {
            return None;
        }
        Some(LobRef {
            space: get_u32(b, 0),
            first: get_u32(b, 4),
            len: u64::from_le_bytes(b[8..16].try_into().ok()?),
            crc: get_u32(b, 16),
        })
    }
}

/// Data bytes one LOB page holds.
pub fn data_per_page(page_size: usize) -> usize {
    page_size - LOB_HEADER_END
}

/// Pages a value of `len` bytes takes off-page.
pub fn pages_for(page_size: usize, len: u64) -> u64 {
    len.div_ceil(data_per_page(page_size) as u64).max(1)
}

fn bad(msg: String) -> StorageError {
    StorageError::BadDatadir(msg)
}

fn orphan_head(hdr: &[u8]) -> u32 {
    match get_u32(hdr, space::OFF_LOB_ORPHANS) {
        // Spaces formatted before LOBs existed hold 0 there.
        0 => NIL,
        p => p,
    }
}

fn flags(p: &[u8]) -> u8 {
    p[OFF_FLAGS]
}

fn latch_lob(mtr: &mut Mtr<'_>, page_no: u32) -> Result<Slot> {
    let s = mtr.latch(PageId::new(0, page_no))?;
    if crate::page::page_type(mtr.page(s)) != Some(PageType::Lob) {
        return Err(bad(format!("page {page_no} should be a LOB page")));
    }
    Ok(s)
}

fn set_flags(mtr: &mut Mtr<'_>, s: Slot, f: u8) {
    mtr.write_bytes(s, OFF_FLAGS, &[f]);
}

/// Puts the chain starting at `first` (latched as `fs`) at the head of the
/// orphan list. The space header is latched first (latch order).
fn link_orphan(mtr: &mut Mtr<'_>, first: u32, fs: Slot, hs: Slot) -> Result<()> {
    let head = orphan_head(mtr.page(hs));
    if head != NIL {
        let h = latch_lob(mtr, head)?;
        mtr.write_u32(h, OFF_ORPHAN_PREV, first);
    }
    mtr.write_u32(fs, OFF_ORPHAN_PREV, NIL);
    mtr.write_u32(fs, OFF_ORPHAN_NEXT, head);
    mtr.write_u32(hs, space::OFF_LOB_ORPHANS, first);
    set_flags(mtr, fs, FLAG_FIRST | FLAG_ORPHAN);
    Ok(())
}

fn unlink_orphan(mtr: &mut Mtr<'_>, first: u32, fs: Slot, hs: Slot) -> Result<()> {
    let prev = get_u32(mtr.page(fs), OFF_ORPHAN_PREV);
    let next = get_u32(mtr.page(fs), OFF_ORPHAN_NEXT);
    if prev == NIL {
        if orphan_head(mtr.page(hs)) != first {
            return Err(bad(format!(
                "LOB {first} has no predecessor but is not the orphan head"
            )));
        }
        mtr.write_u32(hs, space::OFF_LOB_ORPHANS, next);
    } else {
        let p = latch_lob(mtr, prev)?;
        mtr.write_u32(p, OFF_ORPHAN_NEXT, next);
    }
    if next != NIL {
        let n = latch_lob(mtr, next)?;
        mtr.write_u32(n, OFF_ORPHAN_PREV, prev);
    }
    mtr.write_u32(fs, OFF_ORPHAN_PREV, NIL);
    mtr.write_u32(fs, OFF_ORPHAN_NEXT, NIL);
    set_flags(mtr, fs, FLAG_FIRST);
    Ok(())
}

/// Latches the space header and the first page of `r`'s chain, checking
/// that it is one.
fn latch_first(mtr: &mut Mtr<'_>, r: &LobRef) -> Result<(Slot, Slot)> {
    if r.space != 0 {
        return Err(bad(format!("LOB reference to space {}", r.space)));
    }
    let hs = mtr.latch(PageId::new(0, 0))?;
    let fs = latch_lob(mtr, r.first)?;
    let p = mtr.page(fs);
    if flags(p) & FLAG_FIRST == 0 || u64_at(p, OFF_TOTAL) != r.len {
        return Err(bad(format!(
            "page {} is not the first page of a {}-byte LOB",
            r.first, r.len
        )));
    }
    Ok((hs, fs))
}

fn u64_at(p: &[u8], off: usize) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&p[off..off + 8]);
    u64::from_le_bytes(b)
}

/// Writes `value` to a new chain (born on the orphan list) in as many
/// mini-transactions as it needs; the caller adopts it in the mtr that
/// stores the row.
pub fn write(sh: &Shared, value: &[u8]) -> Result<LobRef> {
    let ps = sh.pool.page_size();
    let per_page = data_per_page(ps);
    let budget_pages = (sh.log.max_payload_bytes() as usize / 4 / ps).clamp(1, PAGES_PER_MTR);
    let chunks: Vec<&[u8]> = if value.is_empty() {
        vec![&[]]
    } else {
        value.chunks(per_page).collect()
    };
    let mut first = NIL;
    let mut prev = NIL;
    for group in chunks.chunks(budget_pages) {
        sh.before_write()?;
        let mut mtr = Mtr::new(&sh.pool);
        for chunk in group {
            let (p, s) = space::allocate(&mut mtr, 0)?;
            mtr.init_page(s, PageType::Lob);
            mtr.write_u32(s, OFF_NEXT, NIL);
            mtr.write_u32(s, OFF_DATA_LEN, chunk.len() as u32);
            if !chunk.is_empty() {
                mtr.write_bytes(s, LOB_HEADER_END, chunk);
            }
            if first == NIL {
                first = p;
                mtr.write_bytes(s, OFF_TOTAL, &(value.len() as u64).to_le_bytes());
                let hs = mtr.latch(PageId::new(0, 0))?;
                link_orphan(&mut mtr, p, s, hs)?;
            } else {
                let ps_ = latch_lob(&mut mtr, prev)?;
                mtr.write_u32(ps_, OFF_NEXT, p);
            }
            prev = p;
        }
        mtr.commit(&sh.log)?;
    }
    Stats::add(&sh.stats.quire_lob_pages_written, chunks.len() as u64);
    Ok(LobRef {
        space: 0,
        first,
        len: value.len() as u64,
        crc: crc32c::crc32c(value),
    })
}

/// Reads a whole value, verifying the chain and the checksum.
pub fn read(sh: &Shared, r: &LobRef) -> Result<Vec<u8>> {
    let ps = sh.pool.page_size();
    if r.space != 0 {
        return Err(bad(format!("bad LOB reference {r:?}")));
    }
    let cap = usize::try_from(r.len).map_err(|_| bad(format!("LOB of {} bytes", r.len)))?;
    let mut out = Vec::with_capacity(cap);
    let mut p = r.first;
    let mut first = true;
    let mut pages = 0u64;
    while p != NIL {
        let g = sh.pool.read(PageId::new(0, p))?;
        let b = g.bytes();
        if crate::page::page_type(b) != Some(PageType::Lob)
            || (flags(b) & FLAG_FIRST != 0) != first
            || (first && u64_at(b, OFF_TOTAL) != r.len)
        {
            return Err(bad(format!(
                "page {p} is not page {pages} of the {}-byte LOB at page {}",
                r.len, r.first
            )));
        }
        let n = get_u32(b, OFF_DATA_LEN) as usize;
        if n > data_per_page(ps) || out.len() + n > cap {
            return Err(bad(format!("LOB page {p} holds {n} bytes, too many")));
        }
        out.extend_from_slice(&b[LOB_HEADER_END..LOB_HEADER_END + n]);
        p = get_u32(b, OFF_NEXT);
        first = false;
        pages += 1;
    }
    if out.len() != cap || crc32c::crc32c(&out) != r.crc {
        return Err(bad(format!(
            "LOB at page {} reads {} bytes with a bad checksum (expected {})",
            r.first,
            out.len(),
            r.len
        )));
    }
    Stats::add(&sh.stats.quire_lob_pages_read, pages);
    Ok(out)
}

/// Takes `r`'s chain off the orphan list, in the caller's mtr (the one
/// that stores the row referring to it).
pub fn adopt(mtr: &mut Mtr<'_>, r: &LobRef) -> Result<()> {
    let (hs, fs) = latch_first(mtr, r)?;
    if flags(mtr.page(fs)) & FLAG_ORPHAN == 0 {
        return Err(bad(format!("LOB at page {} adopted twice", r.first)));
    }
    unlink_orphan(mtr, r.first, fs, hs)
}

/// Puts `r`'s chain on the orphan list, in the caller's mtr (the one that
/// removes the last tree reference to it); `reclaim` frees it later.
pub fn orphan(mtr: &mut Mtr<'_>, r: &LobRef) -> Result<()> {
    let (hs, fs) = latch_first(mtr, r)?;
    if flags(mtr.page(fs)) & FLAG_ORPHAN != 0 {
        return Err(bad(format!("LOB at page {} orphaned twice", r.first)));
    }
    link_orphan(mtr, r.first, fs, hs)
}

/// Frees an orphaned chain: its tail in pieces (the first page's `next`
/// moved past each piece, so the chain stays well formed after every
/// mtr), then the first page together with its unlinking.
pub fn reclaim(sh: &Shared, r: &LobRef) -> Result<()> {
    loop {
        sh.before_write()?;
        let mut mtr = Mtr::new(&sh.pool);
        let (hs, fs) = latch_first(&mut mtr, r)?;
        if flags(mtr.page(fs)) & FLAG_ORPHAN == 0 {
            return Err(bad(format!(
                "reclaiming LOB at page {} that is not an orphan",
                r.first
            )));
        }
        let mut next = get_u32(mtr.page(fs), OFF_NEXT);
        if next == NIL {
            unlink_orphan(&mut mtr, r.first, fs, hs)?;
            space::free(&mut mtr, 0, r.first)?;
            mtr.commit(&sh.log)?;
            Stats::add(&sh.stats.quire_lob_pages_freed, 1);
            return Ok(());
        }
        let mut freed = 0u64;
        while next != NIL && freed < PAGES_PER_MTR as u64 {
            let s = latch_lob(&mut mtr, next)?;
            let after = get_u32(mtr.page(s), OFF_NEXT);
            space::free(&mut mtr, 0, next)?;
            next = after;
            freed += 1;
        }
        mtr.write_u32(fs, OFF_NEXT, next);
        mtr.commit(&sh.log)?;
        Stats::add(&sh.stats.quire_lob_pages_freed, freed);
    }
}

/// Frees every chain on the orphan list (end of recovery: no snapshot can
/// read them). Returns how many.
pub fn reclaim_orphans(sh: &Shared) -> Result<u64> {
    let mut n = 0;
    loop {
        let head = {
            let g = sh.pool.read(PageId::new(0, 0))?;
            orphan_head(g.bytes())
        };
        if head == NIL {
            return Ok(n);
        }
        let (len, f) = {
            let g = sh.pool.read(PageId::new(0, head))?;
            (u64_at(g.bytes(), OFF_TOTAL), flags(g.bytes()))
        };
        if f & FLAG_ORPHAN == 0 {
            return Err(bad(format!("orphan list head {head} is not an orphan")));
        }
        reclaim(
            sh,
            &LobRef {
                space: 0,
                first: head,
                len,
                crc: 0,
            },
        )?;
        n += 1;
    }
}

/// For the offline checker: a chain's pages from its first, and whether
/// the first page says it is an orphan. `read` gives page bytes.
pub(crate) fn chain_pages(
    first: u32,
    mut read: impl FnMut(u32) -> Option<Vec<u8>>,
    limit: u32,
) -> std::result::Result<(Vec<u32>, u64, u64, bool, u32), String> {
    let mut pages = Vec::new();
    let mut data = 0u64;
    let mut p = first;
    let mut total = 0;
    let mut orphan = false;
    let mut orphan_next = NIL;
    while p != NIL {
        if pages.len() as u32 > limit {
            return Err(format!("LOB chain from page {first} has a cycle"));
        }
        let b = read(p).ok_or_else(|| format!("LOB chain from {first}: page {p} unreadable"))?;
        if crate::page::page_type(&b) != Some(PageType::Lob) {
            return Err(format!(
                "LOB chain from {first}: page {p} is not a LOB page"
            ));
        }
        let is_first = flags(&b) & FLAG_FIRST != 0;
        if is_first != pages.is_empty() {
            return Err(format!(
                "LOB chain from {first}: page {p} has a wrong first flag"
            ));
        }
        if is_first {
            total = u64_at(&b, OFF_TOTAL);
            orphan = flags(&b) & FLAG_ORPHAN != 0;
            orphan_next = get_u32(&b, OFF_ORPHAN_NEXT);
        }
        data += u64::from(get_u32(&b, OFF_DATA_LEN));
        pages.push(p);
        p = get_u32(&b, OFF_NEXT);
    }
    Ok((pages, total, data, orphan, orphan_next))
}

#[cfg(test)]
#[path = "lob_tests.rs"]
mod tests;
