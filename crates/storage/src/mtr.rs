//! # Mini-transactions: atomic groups of page changes, and their redo
//!
//! Every change to a page happens inside a mini-transaction (mtr). The mtr
//! holds the exclusive latches of the pages it changes, applies each change
//! to the page *and* appends a redo record describing it. At commit, all its
//! records enter the redo log as one frame (atomic: recovery replays all of
//! them or none), every changed page is stamped with the frame's end LSN and
//! put on the flush list, and only then are the latches released.
//!
//! Records are *physiological*: they name a page and describe an operation
//! on it ("insert this cell at slot 5"), replayed by the very same functions
//! that made the change (`btree::node`). Replay is deterministic because a
//! record is applied only to the page state it was generated from: a page
//! whose LSN is at least the record's end LSN already has it; one below
//! has exactly the state the change started from (pages reach disk whole,
//! thanks to the doublewrite buffer).
//!
//! ```text
//!  frame payload = FRAME_PHYSICAL u8, record*   (FRAME_LOGICAL frames carry
//!                  engine records the storage layer does not interpret)
//!  record = type u8 | space u32 | page u32 | body
//!
//!  type  body                                       replay
//!  ----  -----------------------------------------  -------------------------
//!  1     level u16, index_id u32                    format as empty B+tree node
//!  2     slot u16, klen u16, vlen u16, key, value   node::insert
//!  3     slot u16                                   node::remove
//!  4     slot u16, vlen u16, value                  node::set_value
//!  5     offset u16, len u16, bytes                 copy bytes (header fields)
//!  6     head u32, tail_off u32, head, tail bytes   whole page image (compacted)
//!  7     page_type u16                              zero the page, set header
//!  8     from u16                                   node::move_tail into scratch
//!  9     n u16                                      node::truncate_front
//! ```
//! Offsets in type 5 are within the page; the 24-byte file header (checksum,
//! LSN) is never logged, it is recomputed.

use crate::btree::node;
use crate::buf::{BufferPool, PageMut};
use crate::error::{Result, StorageError};
use crate::page::{self, get_u16, get_u32, Lsn, PageId, PageType, FIL_HEADER_BYTES};
use crate::redo::RedoLog;

/// First byte of a frame of page records (mini-transactions).
pub const FRAME_PHYSICAL: u8 = 1;
/// First byte of a frame of engine (logical) records.
pub const FRAME_LOGICAL: u8 = 2;

const R_INIT_NODE: u8 = 1;
const R_INSERT: u8 = 2;
const R_REMOVE: u8 = 3;
const R_SET_VALUE: u8 = 4;
const R_WRITE: u8 = 5;
const R_IMAGE: u8 = 6;
const R_INIT_PAGE: u8 = 7;
const R_MOVE_TAIL: u8 = 8;
const R_TRUNCATE_FRONT: u8 = 9;

/// Handle of a page latched by an mtr.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slot(usize);

/// A mini-transaction.
pub struct Mtr<'a> {
    pool: &'a BufferPool,
    pages: Vec<(PageMut<'a>, bool)>,
    log: Vec<u8>,
}

impl<'a> Mtr<'a> {
    pub fn new(pool: &'a BufferPool) -> Self {
        Mtr {
            pool,
            pages: Vec::new(),
            log: vec![FRAME_PHYSICAL],
        }
    }

    pub fn pool(&self) -> &'a BufferPool {
        self.pool
    }

    /// Latches a page exclusively for this mtr (or returns the handle it
    /// already has).
    pub fn latch(&mut self, id: PageId) -> Result<Slot> {
        if let Some(i) = self.pages.iter().position(|(p, _)| p.id() == id) {
            return Ok(Slot(i));
        }
        let g = self.pool.write(id)?;
        self.pages.push((g, false));
        Ok(Slot(self.pages.len() - 1))
    }

    /// Adopts a page the caller already latched exclusively.
    pub fn adopt(&mut self, g: PageMut<'a>) -> Slot {
        self.pages.push((g, false));
        Slot(self.pages.len() - 1)
    }

    /// Latches a page that is about to be initialised (not read from disk).
    pub fn latch_new(&mut self, id: PageId) -> Result<Slot> {
        if let Some(i) = self.pages.iter().position(|(p, _)| p.id() == id) {
            return Ok(Slot(i));
        }
        let g = self.pool.create(id)?;
        self.pages.push((g, false));
        Ok(Slot(self.pages.len() - 1))
    }

    /// Releases a page that this mtr has not modified (latch coupling).
    pub fn release(&mut self, s: Slot) {
        assert!(
            !self.pages[s.0].1,
            "releasing a modified page before commit"
        );
        // Keep indices stable: swap in nothing; mark by removing lazily is
        // complex, so only the last page may be released early.
        assert_eq!(
            s.0,
            self.pages.len() - 1,
            "only the newest latch may be released"
        );
        self.pages.pop();
    }

    pub fn page(&self, s: Slot) -> &[u8] {
        self.pages[s.0].0.bytes()
    }
    pub fn id(&self, s: Slot) -> PageId {
        self.pages[s.0].0.id()
    }
    pub fn is_modified(&self) -> bool {
        self.log.len() > 1
    }

    fn begin_record(&mut self, s: Slot, ty: u8) -> &mut [u8] {
        let id = self.pages[s.0].0.id();
        self.pages[s.0].1 = true;
        self.log.push(ty);
        self.log.extend_from_slice(&id.space.to_le_bytes());
        self.log.extend_from_slice(&id.page_no.to_le_bytes());
        self.pages[s.0].0.bytes_mut()
    }

    /// Formats the page as an empty B+tree node.
    pub fn init_node(&mut self, s: Slot, level: u16, index_id: u32) {
        let id = self.id(s);
        let p = self.begin_record(s, R_INIT_NODE);
        apply_init_node(p, id, level, index_id);
        self.log.extend_from_slice(&level.to_le_bytes());
        self.log.extend_from_slice(&index_id.to_le_bytes());
    }

    /// Zeroes the page and gives it a type (space header, free page).
    pub fn init_page(&mut self, s: Slot, ty: PageType) {
        let id = self.id(s);
        let p = self.begin_record(s, R_INIT_PAGE);
        apply_init_page(p, id, ty);
        self.log.extend_from_slice(&(ty as u16).to_le_bytes());
    }

    /// Inserts a cell; false (and nothing logged) if it does not fit.
    pub fn insert(&mut self, s: Slot, i: usize, key: &[u8], val: &[u8]) -> bool {
        if !node::insert(self.pages[s.0].0.bytes_mut(), i, key, val) {
            return false;
        }
        self.begin_record(s, R_INSERT);
        self.log.extend_from_slice(&(i as u16).to_le_bytes());
        self.log
            .extend_from_slice(&(key.len() as u16).to_le_bytes());
        self.log
            .extend_from_slice(&(val.len() as u16).to_le_bytes());
        self.log.extend_from_slice(key);
        self.log.extend_from_slice(val);
        true
    }

    pub fn remove(&mut self, s: Slot, i: usize) {
        let p = self.begin_record(s, R_REMOVE);
        node::remove(p, i);
        self.log.extend_from_slice(&(i as u16).to_le_bytes());
    }

    /// Replaces a value; false (and nothing logged) if it does not fit.
    pub fn set_value(&mut self, s: Slot, i: usize, val: &[u8]) -> bool {
        if !node::set_value(self.pages[s.0].0.bytes_mut(), i, val) {
            return false;
        }
        self.begin_record(s, R_SET_VALUE);
        self.log.extend_from_slice(&(i as u16).to_le_bytes());
        self.log
            .extend_from_slice(&(val.len() as u16).to_le_bytes());
        self.log.extend_from_slice(val);
        true
    }

    /// Writes bytes at an offset past the file header (header fields).
    pub fn write_bytes(&mut self, s: Slot, off: usize, bytes: &[u8]) {
        assert!(off >= FIL_HEADER_BYTES, "the file header is never logged");
        let p = self.begin_record(s, R_WRITE);
        p[off..off + bytes.len()].copy_from_slice(bytes);
        self.log.extend_from_slice(&(off as u16).to_le_bytes());
        self.log
            .extend_from_slice(&(bytes.len() as u16).to_le_bytes());
        self.log.extend_from_slice(bytes);
    }

    pub fn write_u32(&mut self, s: Slot, off: usize, v: u32) {
        self.write_bytes(s, off, &v.to_le_bytes());
    }

    /// Node sibling/leftmost pointers: changed by `node`'s setters, logged
    /// as a write of the node-header bytes that changed.
    pub fn set_next(&mut self, s: Slot, v: u32) {
        self.header_change(s, |p| node::set_next(p, v));
    }
    pub fn set_prev(&mut self, s: Slot, v: u32) {
        self.header_change(s, |p| node::set_prev(p, v));
    }
    pub fn set_leftmost(&mut self, s: Slot, v: u32) {
        self.header_change(s, |p| node::set_leftmost(p, v));
    }

    fn header_change(&mut self, s: Slot, f: impl FnOnce(&mut [u8])) {
        let end = node::NODE_HEADER_END;
        let mut hdr = [0u8; 128];
        assert!(end <= hdr.len(), "node header larger than expected");
        hdr[..end].copy_from_slice(&self.page(s)[..end]);
        f(&mut hdr[..end]);
        let old = &self.page(s)[..end];
        let first = (FIL_HEADER_BYTES..end).find(|&i| old[i] != hdr[i]);
        if let Some(a) = first {
            let b = (a..end).rev().find(|&i| old[i] != hdr[i]).unwrap_or(a) + 1;
            let bytes = hdr[a..b].to_vec();
            self.write_bytes(s, a, &bytes);
        }
    }

    /// Moves cells [from..) of `src` to the empty node `dst`: logged as a
    /// tail cut of `src` and a full image of `dst`.
    pub fn move_tail(&mut self, src: Slot, dst: Slot, from: usize) {
        assert_ne!(src, dst);
        let (a, b) = if src.0 < dst.0 {
            let (l, r) = self.pages.split_at_mut(dst.0);
            (&mut l[src.0], &mut r[0])
        } else {
            let (l, r) = self.pages.split_at_mut(src.0);
            (&mut r[0], &mut l[dst.0])
        };
        node::move_tail(a.0.bytes_mut(), b.0.bytes_mut(), from);
        self.begin_record(src, R_MOVE_TAIL);
        self.log.extend_from_slice(&(from as u16).to_le_bytes());
        self.log_image(dst);
    }

    pub fn truncate_front(&mut self, s: Slot, n: usize) {
        let p = self.begin_record(s, R_TRUNCATE_FRONT);
        node::truncate_front(p, n);
        self.log.extend_from_slice(&(n as u16).to_le_bytes());
    }

    /// Replaces the page body by `content`'s body (same page size), logged as
    /// an image. Used for root growth and collapse.
    pub fn copy_body_from(&mut self, s: Slot, content: &[u8]) {
        {
            let id = self.pages[s.0].0.id();
            let ty = page::page_type(content).expect("copying a page of a known type");
            let p = self.pages[s.0].0.bytes_mut();
            page::init_header(p, id, ty);
            p[FIL_HEADER_BYTES..].copy_from_slice(&content[FIL_HEADER_BYTES..]);
        }
        self.log_image(s);
    }

    /// Logs the whole (compacted) page as an image record.
    pub fn log_image(&mut self, s: Slot) {
        let p = self.begin_record(s, R_IMAGE);
        node::compact(p);
        let (head, tail) = node::image_extent(p);
        let head_bytes = p[FIL_HEADER_BYTES..head].to_vec();
        let tail_bytes = p[tail..].to_vec();
        let ty = page::get_u16(p, page::OFF_TYPE);
        self.log.extend_from_slice(&ty.to_le_bytes());
        self.log.extend_from_slice(&(head as u32).to_le_bytes());
        self.log.extend_from_slice(&(tail as u32).to_le_bytes());
        self.log.extend_from_slice(&head_bytes);
        self.log.extend_from_slice(&tail_bytes);
    }

    /// Commits: appends the records as one redo frame, stamps the changed
    /// pages and puts them on the flush list, releases the latches.
    /// Returns the end LSN of the frame (0 for an mtr that changed nothing).
    pub fn commit(mut self, log: &RedoLog) -> Result<Lsn> {
        if !self.is_modified() {
            self.log.clear();
            return Ok(0);
        }
        let records = std::mem::take(&mut self.log);
        let pool = self.pool;
        let pages = &mut self.pages;
        let (_start, end) = log
            .append(&records, |start, end| {
                for (g, modified) in pages.iter_mut() {
                    if *modified {
                        page::set_page_lsn(g.bytes_mut(), end);
                        pool.note_modified(g.frame(), start);
                    }
                }
            })
            .inspect_err(|e| pool.poison.set(&e.to_string()))?;
        Ok(end)
    }
}

impl Drop for Mtr<'_> {
    fn drop(&mut self) {
        if self.is_modified() {
            // Pages were changed in memory but the change never reached the
            // log: memory and disk can no longer be reconciled. Refuse every
            // further write; a restart recovers from the log.
            self.pool.poison.set(
                "a mini-transaction was abandoned after changing pages (an error in the middle of a structure change)",
            );
        }
    }
}

fn apply_init_page(p: &mut [u8], id: PageId, ty: PageType) {
    p.fill(0);
    page::init_header(p, id, ty);
}

fn apply_init_node(p: &mut [u8], id: PageId, level: u16, index_id: u32) {
    p.fill(0);
    page::init_header(p, id, PageType::Index);
    node::init(p, level, index_id);
}

/// A bounded reader over a record payload; every read is checked.
struct Reader<'b> {
    b: &'b [u8],
    pos: usize,
    lsn: Lsn,
}

impl<'b> Reader<'b> {
    fn take(&mut self, n: usize) -> Result<&'b [u8]> {
        if self.pos + n > self.b.len() {
            return Err(StorageError::CorruptLog(format!(
                "mtr at LSN {} ends inside a record",
                self.lsn
            )));
        }
        let s = &self.b[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }
    fn u8(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }
    fn u16(&mut self) -> Result<u16> {
        Ok(get_u16(self.take(2)?, 0))
    }
    fn u32(&mut self) -> Result<u32> {
        Ok(get_u32(self.take(4)?, 0))
    }
}

/// One decoded record, borrowed from the frame payload.
pub enum Record<'b> {
    InitNode {
        level: u16,
        index_id: u32,
    },
    InitPage {
        ty: u16,
    },
    Insert {
        slot: usize,
        key: &'b [u8],
        val: &'b [u8],
    },
    Remove {
        slot: usize,
    },
    SetValue {
        slot: usize,
        val: &'b [u8],
    },
    Write {
        off: usize,
        bytes: &'b [u8],
    },
    Image {
        ty: u16,
        head: usize,
        tail_off: usize,
        head_bytes: &'b [u8],
        tail_bytes: &'b [u8],
    },
    MoveTail {
        from: usize,
    },
    TruncateFront {
        n: usize,
    },
}

/// Decodes a frame payload into (page, record) pairs.
pub fn decode(payload: &[u8], lsn: Lsn, page_size: usize) -> Result<Vec<(PageId, Record<'_>)>> {
    let mut r = Reader {
        b: payload,
        pos: 0,
        lsn,
    };
    let bad = |what: String| StorageError::CorruptLog(format!("mtr at LSN {lsn}: {what}"));
    let mut out = Vec::new();
    while r.pos < payload.len() {
        let ty = r.u8()?;
        let id = PageId::new(r.u32()?, r.u32()?);
        let rec = match ty {
            R_INIT_NODE => Record::InitNode {
                level: r.u16()?,
                index_id: r.u32()?,
            },
            R_INIT_PAGE => Record::InitPage { ty: r.u16()? },
            R_INSERT => {
                let slot = r.u16()? as usize;
                let kl = r.u16()? as usize;
                let vl = r.u16()? as usize;
                Record::Insert {
                    slot,
                    key: r.take(kl)?,
                    val: r.take(vl)?,
                }
            }
            R_REMOVE => Record::Remove {
                slot: r.u16()? as usize,
            },
            R_SET_VALUE => {
                let slot = r.u16()? as usize;
                let vl = r.u16()? as usize;
                Record::SetValue {
                    slot,
                    val: r.take(vl)?,
                }
            }
            R_WRITE => {
                let off = r.u16()? as usize;
                let len = r.u16()? as usize;
                if off < FIL_HEADER_BYTES || off + len > page_size {
                    return Err(bad(format!("write record {off}+{len} outside the page")));
                }
                Record::Write {
                    off,
                    bytes: r.take(len)?,
                }
            }
            R_IMAGE => {
                let ty = r.u16()?;
                let head = r.u32()? as usize;
                let tail_off = r.u32()? as usize;
                if head < FIL_HEADER_BYTES || head > tail_off || tail_off > page_size {
                    return Err(bad(format!("image record {head}/{tail_off} out of range")));
                }
                Record::Image {
                    ty,
                    head,
                    tail_off,
                    head_bytes: r.take(head - FIL_HEADER_BYTES)?,
                    tail_bytes: r.take(page_size - tail_off)?,
                }
            }
            R_MOVE_TAIL => Record::MoveTail {
                from: r.u16()? as usize,
            },
            R_TRUNCATE_FRONT => Record::TruncateFront {
                n: r.u16()? as usize,
            },
            other => return Err(bad(format!("unknown record type {other}"))),
        };
        out.push((id, rec));
    }
    Ok(out)
}

/// Replays one record on a page (recovery). The caller has checked that the
/// page LSN is below the frame's end LSN, and stamps it afterwards.
pub fn apply(p: &mut [u8], id: PageId, rec: &Record<'_>, lsn: Lsn) -> Result<()> {
    let ps = p.len();
    let bad = |what: &str| StorageError::CorruptLog(format!("replaying LSN {lsn} on {id}: {what}"));
    let is_init = matches!(
        rec,
        Record::InitNode { .. } | Record::InitPage { .. } | Record::Image { .. }
    );
    if !is_init && page::page_type(p).is_none() {
        return Err(bad("record for a page that was never initialised"));
    }
    match *rec {
        Record::InitNode { level, index_id } => apply_init_node(p, id, level, index_id),
        Record::InitPage { ty } => {
            let ty = PageType::from_u16(ty).ok_or_else(|| bad("unknown page type"))?;
            apply_init_page(p, id, ty)
        }
        Record::Insert { slot, key, val } => {
            if slot > node::count(p) || !node::insert(p, slot, key, val) {
                return Err(bad("insert does not fit"));
            }
        }
        Record::Remove { slot } => {
            if slot >= node::count(p) {
                return Err(bad("remove of a missing slot"));
            }
            node::remove(p, slot)
        }
        Record::SetValue { slot, val } => {
            if slot >= node::count(p) || !node::set_value(p, slot, val) {
                return Err(bad("set_value does not fit"));
            }
        }
        Record::Write { off, bytes } => p[off..off + bytes.len()].copy_from_slice(bytes),
        Record::Image {
            ty,
            head,
            tail_off,
            head_bytes,
            tail_bytes,
        } => {
            p.fill(0);
            page::init_header(
                p,
                id,
                PageType::from_u16(ty).ok_or_else(|| bad("unknown page type"))?,
            );
            p[FIL_HEADER_BYTES..head].copy_from_slice(head_bytes);
            p[tail_off..ps].copy_from_slice(tail_bytes);
        }
        Record::MoveTail { from } => {
            if from > node::count(p) {
                return Err(bad("move_tail past the end"));
            }
            let mut scratch = vec![0u8; ps];
            page::init_header(&mut scratch, id, PageType::Index);
            node::init(&mut scratch, node::level(p), node::index_id(p));
            node::move_tail(p, &mut scratch, from);
        }
        Record::TruncateFront { n } => {
            if n > node::count(p) {
                return Err(bad("truncate past the end"));
            }
            node::truncate_front(p, n)
        }
    }
    if cfg!(debug_assertions) && page::page_type(p) == Some(PageType::Index) {
        if let Err(e) = node::check(p) {
            return Err(bad(&format!("node invalid after replay: {e}")));
        }
    }
    Ok(())
}
