//! # Bulk load: a B+tree built bottom-up from sorted entries, without redo
//!
//! Filling a new index by putting its keys one by one writes every key to
//! the redo log (about 170 bytes a key for a 120-byte key): a million keys
//! are 180 MB of redo, more than the whole default log, so the checkpoint
//! has to chase the build and every other writer of the server stalls at
//! the log's sync point meanwhile. InnoDB's sorted index build writes the
//! pages of a new index directly and logs none of their contents; so does
//! this module:
//!
//! ```text
//!   sorted (key, value) ──push──▶ leaf │a b c│→│d e f│→│g h  │  (15/16 full)
//!                                        │     ╱       ╱
//!                                 level 1 │· d · g│         one open node
//!                                        │                  per level
//!                                 root (written last, at the page
//!                                       reserved first)
//!
//!   reserve chunk (logged, made durable) ─▶ pages written to the data
//!   file in page order, outside the buffer pool ─▶ fsync ─▶ one mtr: the
//!   directory names the root and forgets the reservation
//! ```
//!
//! ## Why it is crash-safe without redo for the pages
//!
//! - **Reservation.** Pages come from the high-water mark in chunks
//!   (64 pages, doubling to 4096). Each chunk is taken in one logged
//!   mini-transaction that also records it in the index directory under a
//!   key no index name can have (`0xFF "bulk " name 0x00 chunk#`), and the
//!   log is flushed past it before any page of the chunk is written. So a
//!   reserved page is never handed to anyone else, and every page a bulk
//!   load ever wrote is named by a durable reservation until the load is
//!   registered or its pages are freed.
//! - **Page LSN.** Every page is stamped with the flushed LSN at the time
//!   the chunk was reserved. No redo record for these pages precedes it,
//!   and every later one (a put into the registered tree, or the free of
//!   an abandoned page) is above it: recovery applies exactly the records
//!   that came after the page was written.
//! - **Registration.** The pages are written and the data file synced
//!   before the one mini-transaction that puts `name -> root` into the
//!   directory and deletes the reservation keys. A recovered directory
//!   either names the tree (then all its pages are on disk, whole) or
//!   still holds the reservation (then nothing references the pages).
//! - **Abandoned reservations** (a crash, an error, a cancelled build)
//!   are given back by [`reclaim_reservations`] at the next start or by
//!   dropping the [`BulkLoad`]: the pages are first overwritten with zeros
//!   and synced (a page torn by the crash would fail its checksum when
//!   recovery reads it for the free record), then freed a batch per
//!   mini-transaction, each batch shrinking the reservation in the same
//!   mini-transaction.
//!
//! Invariants (asserted in `push` and `finish`):
//! 1. Keys arrive strictly increasing.
//! 2. Every node carries the root's page number as its index id; only the
//!    top level has a single node, and it is written at the root page.
//! 3. Leaves are linked both ways in key order; internal nodes have a
//!    leftmost child and one cell per further child.

use std::collections::BTreeMap;
use std::ops::Bound;

use quire_io::AlignedBuf;

use crate::btree::node::{self, NIL};
use crate::btree::Tree;
use crate::error::{Result, StorageError};
use crate::mtr::Mtr;
use crate::page::{self, Lsn, PageId, PageType};
use crate::space;
use crate::stats::Stats;
use crate::store::{Shared, Store};

/// Directory keys of reservations start with this; no index name (UTF-8)
/// starts with 0xFF.
const RESERVATION_PREFIX: &[u8] = b"\xffbulk ";
const FIRST_CHUNK_PAGES: u32 = 64;
const MAX_CHUNK_PAGES: u32 = 4096;
/// Pages held before they are written out (contiguous runs coalesce).
const WRITE_BATCH_PAGES: usize = 64;
/// Pages freed per mini-transaction when a reservation is given back.
const FREE_BATCH_PAGES: u32 = 32;
/// Bytes written between syncs of the data file: writeback in steps
/// rather than one long sync at the end that other syncs queue behind.
const SYNC_EVERY_BYTES: u64 = 16 << 20;
/// Alignment of the write buffers (O_DIRECT).
const IO_ALIGN: usize = 4096;

/// Whether a directory key is a reservation (not an index name).
pub fn is_reservation_key(key: &[u8]) -> bool {
    key.starts_with(RESERVATION_PREFIX)
}

/// A reservation's (first page, page count) from its directory value.
pub fn decode_reservation(v: &[u8]) -> Option<(u32, u32)> {
    let first = u32::from_le_bytes(v.get(0..4)?.try_into().ok()?);
    let count = u32::from_le_bytes(v.get(4..8)?.try_into().ok()?);
    (v.len() == 8).then_some((first, count))
}

fn encode_reservation(first: u32, count: u32) -> [u8; 8] {
    let mut v = [0u8; 8];
    v[..4].copy_from_slice(&first.to_le_bytes());
    v[4..].copy_from_slice(&count.to_le_bytes());
    v
}

fn directory(shared: &std::sync::Arc<Shared>) -> Tree {
    Tree::new(shared.clone(), 0, space::DIR_ROOT_PAGE)
}

/// One level of the tree being built: the node still open on it.
struct Level {
    page: Vec<u8>,
    /// Assigned when the node's successor starts (the first node of a
    /// level may turn out to be the root, which has its own page).
    page_no: Option<u32>,
}

/// A tree being built from sorted entries (see the module doc).
pub struct BulkLoad<'s> {
    store: &'s Store,
    name: String,
    key_base: Vec<u8>,
    /// Reserved chunks: (first, count), in the order taken.
    chunks: Vec<(u32, u32)>,
    next_free: u32,
    chunk_end: u32,
    root: u32,
    stamp: Lsn,
    levels: Vec<Level>,
    pending: BTreeMap<u32, Vec<u8>>,
    fill_limit_bytes: usize,
    last_key: Vec<u8>,
    entries: u64,
    pages_written: u64,
    unsynced_bytes: u64,
    done: bool,
}

impl Store {
    /// Starts a bulk load of a new index `name` (which must not exist).
    pub fn bulk_load(&self, name: &str) -> Result<BulkLoad<'_>> {
        if self.index(name)?.is_some() {
            return Err(StorageError::Internal(format!(
                "bulk load of index '{name}', which exists"
            )));
        }
        let ps = self.shared().pool.page_size();
        let mut key_base = RESERVATION_PREFIX.to_vec();
        key_base.extend_from_slice(name.as_bytes());
        key_base.push(0);
        let mut b = BulkLoad {
            store: self,
            name: name.to_string(),
            key_base,
            chunks: Vec::new(),
            next_free: 0,
            chunk_end: 0,
            root: NIL,
            stamp: 0,
            levels: Vec::new(),
            pending: BTreeMap::new(),
            fill_limit_bytes: node::capacity(ps) * 15 / 16,
            last_key: Vec::new(),
            entries: 0,
            pages_written: 0,
            unsynced_bytes: 0,
            done: false,
        };
        b.root = b.alloc()?;
        let leaf = b.new_node(0);
        b.levels.push(Level {
            page: leaf,
            page_no: None,
        });
        Ok(b)
    }
}

impl BulkLoad<'_> {
    fn shared(&self) -> &std::sync::Arc<Shared> {
        self.store.shared()
    }

    fn chunk_key(&self, i: usize) -> Vec<u8> {
        let mut k = self.key_base.clone();
        k.extend_from_slice(&(i as u32).to_be_bytes());
        k
    }

    fn new_node(&self, level: u16) -> Vec<u8> {
        let mut p = vec![0u8; self.shared().pool.page_size()];
        node::init(&mut p, level, self.root);
        p
    }

    /// Pages written so far.
    pub fn pages_written(&self) -> u64 {
        self.pages_written
    }

    /// Entries pushed so far.
    pub fn entries(&self) -> u64 {
        self.entries
    }

    /// Adds the next entry; keys must be strictly increasing.
    pub fn push(&mut self, key: &[u8], val: &[u8]) -> Result<()> {
        if self.entries > 0 && key <= self.last_key.as_slice() {
            return Err(StorageError::Internal(format!(
                "bulk load of '{}': keys out of order",
                self.name
            )));
        }
        let ps = self.shared().pool.page_size();
        if key.len() > crate::btree::max_key_bytes(ps)
            || key.len() + val.len() > node::max_cell_payload(ps)
        {
            return Err(StorageError::TooLarge(format!(
                "entry of {} bytes (key {}) in index '{}' is larger than a page allows",
                key.len() + val.len(),
                key.len(),
                self.name
            )));
        }
        self.add(0, key, val)?;
        self.last_key.clear();
        self.last_key.extend_from_slice(key);
        self.entries += 1;
        Ok(())
    }

    /// Adds (key, val) to the open node of `level`; when it is full, the
    /// node is written, a new one starts, and the new node's first key goes
    /// up one level with the new node's page.
    fn add(&mut self, level: usize, key: &[u8], val: &[u8]) -> Result<()> {
        let fits = {
            let p = &self.levels[level].page;
            node::count(p) == 0
                || node::used_bytes(p) + node::cell_bytes(key.len(), val.len())
                    <= self.fill_limit_bytes
        };
        if fits {
            let p = &mut self.levels[level].page;
            let n = node::count(p);
            if node::insert(p, n, key, val) {
                return Ok(());
            }
        }
        let old_no = match self.levels[level].page_no {
            Some(n) => n,
            None => self.alloc()?,
        };
        let new_no = self.alloc()?;
        let mut fresh = self.new_node(level as u16);
        if level == 0 {
            node::set_prev(&mut fresh, old_no);
            if !node::insert(&mut fresh, 0, key, val) {
                return Err(StorageError::Internal(
                    "bulk load: an entry does not fit an empty leaf".into(),
                ));
            }
        } else {
            let child = u32::from_le_bytes(val.try_into().map_err(|_| {
                StorageError::Internal("bulk load: internal value is not a page".into())
            })?);
            node::set_leftmost(&mut fresh, child);
        }
        let mut old = std::mem::replace(&mut self.levels[level].page, fresh);
        self.levels[level].page_no = Some(new_no);
        if level == 0 {
            node::set_next(&mut old, new_no);
        }
        self.emit(old, old_no)?;
        if level + 1 == self.levels.len() {
            let mut parent = self.new_node(level as u16 + 1);
            node::set_leftmost(&mut parent, old_no);
            self.levels.push(Level {
                page: parent,
                page_no: None,
            });
        }
        self.add(level + 1, key, &new_no.to_le_bytes())
    }

    /// The next reserved page, reserving a chunk when none is left.
    fn alloc(&mut self) -> Result<u32> {
        if self.next_free == self.chunk_end {
            self.reserve_chunk()?;
        }
        let p = self.next_free;
        self.next_free += 1;
        Ok(p)
    }

    fn reserve_chunk(&mut self) -> Result<()> {
        let pages = (FIRST_CHUNK_PAGES << self.chunks.len().min(6)).min(MAX_CHUNK_PAGES);
        self.store.reserve_pages(pages as u64)?;
        let sh = self.shared().clone();
        sh.before_write()?;
        let key = self.chunk_key(self.chunks.len());
        let dir = directory(&sh);
        let latch = sh.index_latch(0, space::DIR_ROOT_PAGE);
        let end = {
            let _x = latch.write();
            let mut mtr = Mtr::new(&sh.pool);
            let first = space::reserve(&mut mtr, 0, pages)?;
            dir.put_in(&mut mtr, &key, &encode_reservation(first, pages))?;
            let end = mtr.commit(&sh.log)?;
            self.chunks.push((first, pages));
            self.next_free = first;
            self.chunk_end = first + pages;
            end
        };
        // The reservation is durable before any of its pages is written,
        // and the pages' LSN is one no later record can be below.
        sh.log.flush_to(end)?;
        self.stamp = sh.log.flushed_lsn();
        Ok(())
    }

    /// A finished node: identity, LSN and checksum, then queued for writing.
    fn emit(&mut self, mut p: Vec<u8>, page_no: u32) -> Result<()> {
        debug_assert!(node::check(&p).is_ok(), "{:?}", node::check(&p));
        debug_assert_eq!(node::index_id(&p), self.root);
        page::init_header(&mut p, PageId::new(0, page_no), PageType::Index);
        page::set_page_lsn(&mut p, self.stamp);
        page::seal(&mut p);
        self.pending.insert(page_no, p);
        if self.pending.len() >= WRITE_BATCH_PAGES {
            self.write_pending()?;
        }
        Ok(())
    }

    /// Writes the queued pages, one write per run of consecutive pages.
    fn write_pending(&mut self) -> Result<()> {
        let sh = self.shared().clone();
        let ps = sh.pool.page_size();
        let sf = sh.pool.space_file(0)?;
        let pending = std::mem::take(&mut self.pending);
        self.pages_written += pending.len() as u64;
        self.unsynced_bytes += (pending.len() * ps) as u64;
        let mut run: Vec<(u32, Vec<u8>)> = Vec::new();
        for (no, p) in pending {
            if run.last().is_some_and(|(last, _)| *last + 1 != no) {
                write_run(&sh, &sf.file, ps, &run)?;
                run.clear();
            }
            run.push((no, p));
        }
        write_run(&sh, &sf.file, ps, &run)?;
        if self.unsynced_bytes >= SYNC_EVERY_BYTES {
            sync_data(&sh)?;
            self.unsynced_bytes = 0;
        }
        Ok(())
    }

    /// Writes the last node of every level (the top one at the root page),
    /// gives back the unused reserved pages, syncs the data file and
    /// registers the tree under its name. Returns the tree.
    pub fn finish(mut self) -> Result<Tree> {
        let top = self.levels.len() - 1;
        for l in 0..=top {
            let page = std::mem::take(&mut self.levels[l].page);
            let no = match (l == top, self.levels[l].page_no) {
                (true, None) => self.root,
                (false, Some(n)) => n,
                _ => {
                    return Err(StorageError::Internal(format!(
                        "bulk load of '{}': level {l} of {top} out of shape",
                        self.name
                    )))
                }
            };
            self.emit(page, no)?;
        }
        self.write_pending()?;
        let sh = self.shared().clone();
        sync_data(&sh)?;
        // Unused pages of the last chunk go back to the free list (never
        // written: nothing to zero).
        if let Some(last) = self.chunks.len().checked_sub(1) {
            let (first, _) = self.chunks[last];
            let used = self.next_free - first;
            let key = self.chunk_key(last);
            // The count shrinks with each batch freed, so that an abandon
            // after an error here never touches a page given back.
            free_tail(&sh, &key, first, &mut self.chunks[last].1, used)?;
        }
        sh.before_write()?;
        let dir = directory(&sh);
        let latch = sh.index_latch(0, space::DIR_ROOT_PAGE);
        {
            let _x = latch.write();
            let mut mtr = Mtr::new(&sh.pool);
            dir.put_in(&mut mtr, self.name.as_bytes(), &self.root.to_le_bytes())?;
            for i in 0..self.chunks.len() {
                let key = self.chunk_key(i);
                dir.delete_in(&mut mtr, &key)?;
            }
            mtr.commit(&sh.log)?;
        }
        self.done = true;
        Ok(Tree::new(sh, 0, self.root))
    }

    /// Gives every reserved page back (the tree is not registered).
    fn abandon(&mut self) -> Result<()> {
        let sh = self.shared().clone();
        self.pending.clear();
        for i in 0..self.chunks.len() {
            let key = self.chunk_key(i);
            let first = self.chunks[i].0;
            give_back(&sh, &key, first, &mut self.chunks[i].1)?;
        }
        self.chunks.clear();
        Ok(())
    }
}

impl Drop for BulkLoad<'_> {
    fn drop(&mut self) {
        if !self.done {
            // An I/O error here poisoned the store; the next start gives
            // the reservation back.
            let _ = self.abandon();
        }
    }
}

fn sync_data(sh: &Shared) -> Result<()> {
    let sf = sh.pool.space_file(0)?;
    if sh.poison.guard(sf.file.sync())? {
        Stats::inc(&sh.stats.innodb_data_fsyncs);
    }
    Ok(())
}

fn write_run(
    sh: &Shared,
    file: &std::sync::Arc<dyn quire_io::File>,
    ps: usize,
    run: &[(u32, Vec<u8>)],
) -> Result<()> {
    let Some((first, _)) = run.first() else {
        return Ok(());
    };
    let mut buf = AlignedBuf::new(ps * run.len(), IO_ALIGN);
    for (i, (_, p)) in run.iter().enumerate() {
        buf[i * ps..(i + 1) * ps].copy_from_slice(p);
    }
    sh.poison
        .guard(file.write_at(&buf[..], *first as u64 * ps as u64))?;
    Stats::add(&sh.stats.innodb_pages_written, run.len() as u64);
    Ok(())
}

/// Frees pages `[first + used, first + count)` of a reservation whose
/// first `used` pages stay reserved, a batch per mini-transaction, each
/// shrinking the reservation record (and `count`) with it. With
/// `used == 0` the record goes with the last batch.
fn free_tail(
    sh: &std::sync::Arc<Shared>,
    key: &[u8],
    first: u32,
    count: &mut u32,
    used: u32,
) -> Result<()> {
    let dir = directory(sh);
    let latch = sh.index_latch(0, space::DIR_ROOT_PAGE);
    while *count > used {
        let end = first + *count;
        let from = end.saturating_sub(FREE_BATCH_PAGES).max(first + used);
        sh.before_write()?;
        let _x = latch.write();
        let mut mtr = Mtr::new(&sh.pool);
        for p in (from..end).rev() {
            space::free_unread(&mut mtr, 0, p)?;
        }
        if from == first {
            dir.delete_in(&mut mtr, key)?;
        } else {
            dir.put_in(&mut mtr, key, &encode_reservation(first, from - first))?;
        }
        mtr.commit(&sh.log)?;
        *count = from - first;
    }
    Ok(())
}

/// Gives a whole reservation back: zeroes its pages on disk (synced),
/// then frees them (see the module doc).
fn give_back(sh: &std::sync::Arc<Shared>, key: &[u8], first: u32, count: &mut u32) -> Result<()> {
    let ps = sh.pool.page_size();
    let sf = sh.pool.space_file(0)?;
    let zero_pages = 256u32;
    let zeros = AlignedBuf::new(ps * zero_pages as usize, IO_ALIGN);
    let mut p = first;
    while p < first + *count {
        let n = zero_pages.min(first + *count - p);
        sh.poison.guard(
            sf.file
                .write_at(&zeros[..n as usize * ps], p as u64 * ps as u64),
        )?;
        p += n;
    }
    sync_data(sh)?;
    free_tail(sh, key, first, count, 0)
}

/// At start, after recovery: gives back every reservation a bulk load
/// left (no load survives a restart). Returns the pages freed.
pub fn reclaim_reservations(store: &Store) -> Result<u64> {
    let sh = store.shared().clone();
    let dir = directory(&sh);
    let lower = Bound::Included(RESERVATION_PREFIX.to_vec());
    let mut found: Vec<(Vec<u8>, u32, u32)> = Vec::new();
    for e in dir.range(lower, Bound::Unbounded, false) {
        let (k, v) = e?;
        if !is_reservation_key(&k) {
            break;
        }
        let (first, count) = decode_reservation(&v).ok_or_else(|| {
            StorageError::BadDatadir(format!(
                "reservation {:?} in the index directory is malformed",
                String::from_utf8_lossy(&k)
            ))
        })?;
        found.push((k, first, count));
    }
    let mut freed = 0u64;
    for (k, first, count) in found {
        let mut left = count;
        give_back(&sh, &k, first, &mut left)?;
        freed += count as u64;
    }
    Ok(freed)
}

#[cfg(test)]
#[path = "bulk_tests.rs"]
mod tests;
