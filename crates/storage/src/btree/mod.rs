//! # B+tree: one per index
//!
//! Keys and values are byte strings; keys compare as bytes (the engine
//! encodes SQL values memcomparably above this layer). Leaves hold the
//! entries and are linked both ways for range scans; internal nodes hold
//! separator keys and child page numbers (`node` describes the page format).
//! The root page number never changes, so an index is named by its root.
//!
//! ```text
//!                    [ root (level 2): L | "k" -> R ]
//!                   /                               \
//!      [ level 1: a | "d" | "h" ]            [ level 1: k | "p" ]
//!       /        |        \                     /         \
//!   [a b c] <-> [d e g] <-> [h i j]  <->  [k m n] <-> [p q r]     leaves
//! ```
//!
//! ## Concurrency: an index latch plus latch coupling
//!
//! Each tree has an *index latch* (a reader-writer lock):
//! * Reads, scans and the common write (the change fits in its leaf) take it
//!   **shared**. They descend with shared page latches, coupling (the child
//!   is latched before the parent is released); a writer latches only the
//!   leaf exclusively. Many of them run at once on different leaves.
//! * A write that must change the structure (split a full leaf, free an
//!   emptied one) gives up, takes the index latch **exclusively** and redoes
//!   its descent, latching the whole path exclusively. Nothing else is in
//!   the tree then, so the split can climb to the root freely.
//!
//! Since structure changes only happen under the exclusive index latch, a
//! sibling pointer read under the shared latch stays valid after the page
//! holding it is released: backward scans rely on this.
//!
//! Every write is one mini-transaction, the structure change included, so it
//! is atomic in redo. Cursors never hold latches between calls: they copy a
//! leaf's worth of entries and remember the last key, re-seeking from it.
//!
//! Entries larger than a quarter page are rejected with a clear error
//! ([`max_entry_bytes`]): no overflow pages (the engine stores long values
//! in chunks above this layer).
//!
//! Every page reached during a descent is checked for being an index node
//! of this tree at the expected level; anything else is reported as a
//! corrupt page, never followed.

pub mod node;
#[cfg(test)]
pub(crate) mod tests;

use std::collections::VecDeque;
use std::ops::Bound;
use std::sync::Arc;

use parking_lot::RwLock;

use crate::buf::PageRef;
use crate::error::{Result, StorageError};
use crate::mtr::{Mtr, Slot};
use crate::page::{self, Lsn, PageId, PageType};
use crate::space;
use crate::store::Shared;

/// Largest key + value an entry may have for a page size.
pub fn max_entry_bytes(page_size: usize) -> usize {
    node::max_cell_payload(page_size)
}

/// Largest key for a page size (keys are copied into internal nodes with a
/// 4-byte child pointer; InnoDB's limit is 3072 bytes).
pub fn max_key_bytes(page_size: usize) -> usize {
    (node::max_cell_payload(page_size) - 4).min(3072)
}

/// A handle on one B+tree. Cheap to clone.
#[derive(Clone)]
pub struct Tree {
    shared: Arc<Shared>,
    space: u32,
    root: u32,
    latch: Arc<RwLock<()>>,
}

impl std::fmt::Debug for Tree {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Tree(space {}, root {})", self.space, self.root)
    }
}

/// Where a descent came from, for structure changes.
struct PathStep {
    slot: Slot,
    /// Position of the child taken: None = leftmost, Some(i) = cell i.
    pos: Option<usize>,
}

impl Tree {
    pub(crate) fn new(shared: Arc<Shared>, space: u32, root: u32) -> Tree {
        let latch = shared.index_latch(space, root);
        Tree {
            shared,
            space,
            root,
            latch,
        }
    }

    pub fn root(&self) -> u32 {
        self.root
    }
    pub fn space(&self) -> u32 {
        self.space
    }
    fn pid(&self, p: u32) -> PageId {
        PageId::new(self.space, p)
    }

    fn corrupt(&self, p: u32, why: impl Into<String>) -> StorageError {
        let path = self
            .shared
            .pool
            .space_file(self.space)
            .map(|f| f.path.clone())
            .unwrap_or_default();
        StorageError::corrupt(path, p, why)
    }

    /// Checks that a page reached by descent belongs here.
    fn expect_node(&self, p: &[u8], page_no: u32, level: Option<u16>) -> Result<()> {
        if page::page_type(p) != Some(PageType::Index) {
            return Err(self.corrupt(page_no, "expected a B+tree node"));
        }
        if node::index_id(p) != self.root {
            return Err(self.corrupt(
                page_no,
                format!(
                    "node of index {} found in index {}",
                    node::index_id(p),
                    self.root
                ),
            ));
        }
        if let Some(l) = level {
            if node::level(p) != l {
                return Err(self.corrupt(
                    page_no,
                    format!("node at level {} where {l} was expected", node::level(p)),
                ));
            }
        }
        Ok(())
    }

    fn check_entry(&self, key: &[u8], val: &[u8]) -> Result<()> {
        let ps = self.shared.pool.page_size();
        if key.len() > max_key_bytes(ps) {
            return Err(StorageError::TooLarge(format!(
                "key of {} bytes is longer than the maximum {} for innodb_page_size={ps}",
                key.len(),
                max_key_bytes(ps)
            )));
        }
        if key.len() + val.len() > max_entry_bytes(ps) {
            return Err(StorageError::TooLarge(format!(
                "entry of {} bytes (key {} + value {}) is larger than the maximum {} for innodb_page_size={ps}",
                key.len() + val.len(),
                key.len(),
                val.len(),
                max_entry_bytes(ps)
            )));
        }
        Ok(())
    }

    /// Descends with shared latches to the leaf for `key`.
    fn find_leaf_shared(&self, key: Option<&[u8]>, rightmost: bool) -> Result<PageRef<'_>> {
        let pool = &self.shared.pool;
        let mut page_no = self.root;
        let mut g = pool.read(self.pid(page_no))?;
        self.expect_node(g.bytes(), page_no, None)?;
        loop {
            let p = g.bytes();
            if node::is_leaf(p) {
                return Ok(g);
            }
            let level = node::level(p);
            let child = match key {
                Some(k) => node::route(p, k).0,
                None if rightmost => match node::count(p) {
                    0 => node::leftmost(p),
                    n => node::child(p, n - 1),
                },
                None => node::leftmost(p),
            };
            let c = pool.read(self.pid(child))?;
            self.expect_node(c.bytes(), child, Some(level - 1))?;
            page_no = child;
            let _ = page_no;
            g = c;
        }
    }

    /// Point read for callers already holding the index latch.
    pub(crate) fn get_unlatched(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        let g = self.find_leaf_shared(Some(key), false)?;
        let p = g.bytes();
        Ok(match node::search(p, key) {
            Ok(i) => Some(node::value(p, i).to_vec()),
            Err(_) => None,
        })
    }

    /// Point read.
    pub fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.get_with(key, |v| v.map(|v| v.to_vec()))
    }

    /// Point read without copying: `f` sees the value under the leaf latch.
    pub fn get_with<R>(&self, key: &[u8], f: impl FnOnce(Option<&[u8]>) -> R) -> Result<R> {
        let _il = self.latch.read();
        let g = self.find_leaf_shared(Some(key), false)?;
        let p = g.bytes();
        Ok(match node::search(p, key) {
            Ok(i) => f(Some(node::value(p, i))),
            Err(_) => f(None),
        })
    }

    /// Latches the leaf for `key` exclusively, under the shared index latch
    /// held by the caller.
    fn find_leaf_exclusive<'a>(&'a self, mtr: &mut Mtr<'a>, key: &[u8]) -> Result<Slot> {
        let pool = &self.shared.pool;
        let g = pool.read(self.pid(self.root))?;
        self.expect_node(g.bytes(), self.root, None)?;
        if node::is_leaf(g.bytes()) {
            drop(g);
            // The root cannot change level while we hold the shared index
            // latch, so it is still a leaf once latched exclusively.
            let s = mtr.latch(self.pid(self.root))?;
            return Ok(s);
        }
        let mut g = g;
        loop {
            let p = g.bytes();
            let level = node::level(p);
            let child = node::route(p, key).0;
            if level == 1 {
                let s = mtr.latch(self.pid(child))?;
                drop(g);
                self.expect_node(mtr.page(s), child, Some(0))?;
                return Ok(s);
            }
            let c = pool.read(self.pid(child))?;
            self.expect_node(c.bytes(), child, Some(level - 1))?;
            g = c;
        }
    }

    /// Inserts or replaces. Returns the end LSN of its mini-transaction.
    pub fn put(&self, key: &[u8], val: &[u8]) -> Result<Lsn> {
        self.put_with(key, val, &mut |_| Ok(()))
    }

    /// [`Tree::put`] that runs `also` inside the same mini-transaction once
    /// the entry is in place, so that its page changes are atomic with the
    /// put (lob.rs: adopting the value's chains, orphaning the replaced
    /// value's). `also` latches only pages after index pages in latch order.
    pub fn put_with(
        &self,
        key: &[u8],
        val: &[u8],
        also: &mut dyn FnMut(&mut Mtr<'_>) -> Result<()>,
    ) -> Result<Lsn> {
        self.check_entry(key, val)?;
        self.shared.before_write()?;
        {
            let _il = self.latch.read();
            let mut mtr = Mtr::new(&self.shared.pool);
            let s = self.find_leaf_exclusive(&mut mtr, key)?;
            let done = match node::search(mtr.page(s), key) {
                // Already this value (recovery re-applying a transaction
                // whose changes reached the pages): no change, no redo.
                Ok(i) if node::value(mtr.page(s), i) == val => {
                    return Ok(self.shared.log.lsn());
                }
                Ok(i) => mtr.set_value(s, i, val),
                Err(i) => mtr.insert(s, i, key, val),
            };
            if done {
                also(&mut mtr)?;
                return mtr.commit(&self.shared.log);
            }
        }
        let _il = self.latch.write();
        let mut mtr = Mtr::new(&self.shared.pool);
        self.put_in(&mut mtr, key, val)?;
        also(&mut mtr)?;
        mtr.commit(&self.shared.log)
    }

    /// Deletes. Returns the end LSN, or None if the key was absent.
    pub fn delete(&self, key: &[u8]) -> Result<Option<Lsn>> {
        self.delete_with(key, &mut |_| Ok(()))
    }

    /// [`Tree::delete`] that runs `also` in the same mini-transaction when
    /// the key was there (see [`Tree::put_with`]).
    pub fn delete_with(
        &self,
        key: &[u8],
        also: &mut dyn FnMut(&mut Mtr<'_>) -> Result<()>,
    ) -> Result<Option<Lsn>> {
        self.shared.before_write()?;
        {
            let _il = self.latch.read();
            let mut mtr = Mtr::new(&self.shared.pool);
            let s = self.find_leaf_exclusive(&mut mtr, key)?;
            match node::search(mtr.page(s), key) {
                Err(_) => return Ok(None),
                Ok(i) => {
                    if node::count(mtr.page(s)) > 1 || mtr.id(s).page_no == self.root {
                        mtr.remove(s, i);
                        also(&mut mtr)?;
                        return mtr.commit(&self.shared.log).map(Some);
                    }
                }
            }
        }
        let _il = self.latch.write();
        let mut mtr = Mtr::new(&self.shared.pool);
        let found = self.delete_in(&mut mtr, key)?;
        if found {
            also(&mut mtr)?;
        }
        let lsn = mtr.commit(&self.shared.log)?;
        Ok(found.then_some(lsn))
    }

    /// Several puts (`Some(value)`) and deletes (`None`) as ONE
    /// mini-transaction: after a crash either all of them are in the tree
    /// or none is (invariant 4). For small batches of small entries (a
    /// catalog change touching several rows, e.g. RENAME TABLE of several
    /// tables); every page it touches stays latched until the commit.
    pub fn apply_batch(&self, ops: &[(Vec<u8>, Option<Vec<u8>>)]) -> Result<Lsn> {
        for (k, v) in ops {
            self.check_entry(k, v.as_deref().unwrap_or(&[]))?;
        }
        self.shared.before_write()?;
        let _il = self.latch.write();
        let mut mtr = Mtr::new(&self.shared.pool);
        for (k, v) in ops {
            match v {
                Some(v) => self.put_in(&mut mtr, k, v)?,
                None => {
                    self.delete_in(&mut mtr, k)?;
                }
            }
        }
        mtr.commit(&self.shared.log)
    }

    /// Exclusive descent recording the path (caller holds the index latch
    /// exclusively).
    fn descend_x<'a>(&'a self, mtr: &mut Mtr<'a>, key: &[u8]) -> Result<(Vec<PathStep>, Slot)> {
        let mut path = Vec::new();
        let mut page_no = self.root;
        let mut s = mtr.latch(self.pid(page_no))?;
        self.expect_node(mtr.page(s), page_no, None)?;
        loop {
            let p = mtr.page(s);
            if node::is_leaf(p) {
                return Ok((path, s));
            }
            let level = node::level(p);
            let (child, pos) = node::route(p, key);
            path.push(PathStep { slot: s, pos });
            page_no = child;
            s = mtr.latch(self.pid(page_no))?;
            self.expect_node(mtr.page(s), page_no, Some(level - 1))?;
        }
    }

    /// Insert-or-replace inside the caller's mtr, splitting as needed. The
    /// caller holds the index latch exclusively.
    pub(crate) fn put_in<'a>(&'a self, mtr: &mut Mtr<'a>, key: &[u8], val: &[u8]) -> Result<()> {
        let (path, leaf) = self.descend_x(mtr, key)?;
        let pos = match node::search(mtr.page(leaf), key) {
            Ok(i) => {
                if mtr.set_value(leaf, i, val) {
                    return Ok(());
                }
                mtr.remove(leaf, i);
                i
            }
            Err(i) => i,
        };
        if mtr.insert(leaf, pos, key, val) {
            return Ok(());
        }
        self.split_insert(mtr, path, leaf, key, val)
    }

    /// Splits `target` (full) and inserts (key, val) where it belongs, then
    /// adds the separator to the parent, splitting upwards as needed.
    fn split_insert<'a>(
        &'a self,
        mtr: &mut Mtr<'a>,
        mut path: Vec<PathStep>,
        mut target: Slot,
        key: &[u8],
        val: &[u8],
    ) -> Result<()> {
        let mut key = key.to_vec();
        let mut val = val.to_vec();
        loop {
            let level = node::level(mtr.page(target));
            if path.is_empty() {
                // Root split: move the root's content to a new page first,
                // so the root keeps its page number.
                debug_assert_eq!(mtr.id(target).page_no, self.root);
                let content = mtr.page(target).to_vec();
                let (lno, ls) = space::allocate(mtr, self.space)?;
                mtr.copy_body_from(ls, &content);
                mtr.init_node(target, level + 1, self.root);
                mtr.set_leftmost(target, lno);
                path.push(PathStep {
                    slot: target,
                    pos: None,
                });
                target = ls;
            }
            let pos = match node::search(mtr.page(target), &key) {
                Ok(i) | Err(i) => i,
            };
            let cell = node::cell_bytes(key.len(), val.len());
            let count = node::count(mtr.page(target));
            let mut s = node::split_point(mtr.page(target), pos, cell);
            let leaf = level == 0;
            if !leaf {
                s = s.min(count - 1);
            }
            let left_no = mtr.id(target).page_no;
            let (rno, rs) = space::allocate(mtr, self.space)?;
            mtr.init_node(rs, level, self.root);
            mtr.move_tail(target, rs, s);
            let sep = if leaf {
                let old_next = node::next(mtr.page(target));
                mtr.set_next(rs, old_next);
                mtr.set_prev(rs, left_no);
                mtr.set_next(target, rno);
                if old_next != node::NIL {
                    let ns = mtr.latch(self.pid(old_next))?;
                    self.expect_node(mtr.page(ns), old_next, Some(0))?;
                    mtr.set_prev(ns, rno);
                }
                let into = if pos < s { target } else { rs };
                self.insert_sorted(mtr, into, &key, &val)?;
                node::key(mtr.page(rs), 0).to_vec()
            } else {
                let up_key = node::key(mtr.page(rs), 0).to_vec();
                let up_child = node::child(mtr.page(rs), 0);
                mtr.truncate_front(rs, 1);
                mtr.set_leftmost(rs, up_child);
                let into = if key.as_slice() < up_key.as_slice() {
                    target
                } else {
                    rs
                };
                self.insert_sorted(mtr, into, &key, &val)?;
                up_key
            };
            // Hook the new right node into the parent.
            let parent = path.pop().expect("path holds the parent").slot;
            let rval = rno.to_le_bytes();
            let ppos = match node::search(mtr.page(parent), &sep) {
                Ok(_) => {
                    return Err(self.corrupt(
                        mtr.id(parent).page_no,
                        "separator already present in parent during split",
                    ))
                }
                Err(i) => i,
            };
            if mtr.insert(parent, ppos, &sep, &rval) {
                return Ok(());
            }
            target = parent;
            key = sep;
            val = rval.to_vec();
        }
    }

    fn insert_sorted(&self, mtr: &mut Mtr<'_>, s: Slot, key: &[u8], val: &[u8]) -> Result<()> {
        let i = match node::search(mtr.page(s), key) {
            Ok(_) => {
                return Err(self.corrupt(mtr.id(s).page_no, "duplicate key after split"));
            }
            Err(i) => i,
        };
        if !mtr.insert(s, i, key, val) {
            return Err(StorageError::Recovery(format!(
                "internal error: entry of {} bytes does not fit a half-empty node after a split of {}",
                key.len() + val.len(),
                mtr.id(s)
            )));
        }
        Ok(())
    }

    /// Delete inside the caller's mtr, freeing emptied nodes. Caller holds
    /// the index latch exclusively. Returns whether the key was there.
    pub(crate) fn delete_in<'a>(&'a self, mtr: &mut Mtr<'a>, key: &[u8]) -> Result<bool> {
        let (mut path, leaf) = self.descend_x(mtr, key)?;
        let i = match node::search(mtr.page(leaf), key) {
            Ok(i) => i,
            Err(_) => return Ok(false),
        };
        mtr.remove(leaf, i);
        if node::count(mtr.page(leaf)) > 0 || path.is_empty() {
            return Ok(true);
        }
        // The leaf is empty and not the root: unlink and free it, then
        // remove its pointer from the parent, climbing while parents empty.
        let prev = node::prev(mtr.page(leaf));
        let next = node::next(mtr.page(leaf));
        if prev != node::NIL {
            let ps = mtr.latch(self.pid(prev))?;
            mtr.set_next(ps, next);
        }
        if next != node::NIL {
            let ns = mtr.latch(self.pid(next))?;
            mtr.set_prev(ns, prev);
        }
        let mut gone = mtr.id(leaf).page_no;
        space::free(mtr, self.space, gone)?;
        while let Some(step) = path.pop() {
            let parent = step.slot;
            match step.pos {
                Some(i) => mtr.remove(parent, i),
                None => {
                    if node::count(mtr.page(parent)) > 0 {
                        let c0 = node::child(mtr.page(parent), 0);
                        mtr.set_leftmost(parent, c0);
                        mtr.remove(parent, 0);
                    } else {
                        // The parent lost its only child.
                        if path.is_empty() {
                            // It is the root: the tree is now empty.
                            mtr.init_node(parent, 0, self.root);
                            return Ok(true);
                        }
                        gone = mtr.id(parent).page_no;
                        space::free(mtr, self.space, gone)?;
                        continue;
                    }
                }
            }
            let _ = gone;
            break;
        }
        self.collapse_root(mtr)?;
        Ok(true)
    }

    /// While the root is an internal node with a single child, pull the
    /// child's content into the root and free the child.
    fn collapse_root<'a>(&'a self, mtr: &mut Mtr<'a>) -> Result<()> {
        loop {
            let rs = mtr.latch(self.pid(self.root))?;
            let p = mtr.page(rs);
            if node::is_leaf(p) || node::count(p) > 0 {
                return Ok(());
            }
            let child = node::leftmost(p);
            let cs = mtr.latch(self.pid(child))?;
            let content = mtr.page(cs).to_vec();
            mtr.copy_body_from(rs, &content);
            space::free(mtr, self.space, child)?;
        }
    }

    /// A cursor over `range`, ascending or descending.
    pub fn range(&self, lower: Bound<Vec<u8>>, upper: Bound<Vec<u8>>, reverse: bool) -> Cursor<'_> {
        Cursor {
            tree: self,
            lower,
            upper,
            reverse,
            buf: VecDeque::new(),
            last: None,
            done: false,
        }
    }

    /// Every entry in key order (tests, checks).
    pub fn scan_all(&self) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
        self.range(Bound::Unbounded, Bound::Unbounded, false)
            .collect()
    }

    /// Optimizer statistics: the number of leaf pages (exact, counted
    /// from the child pointers of the level-1 nodes) and the entries of at
    /// most `max_leaves` of them, spread evenly over the key order (every
    /// leaf when there are no more than that; in key order either way).
    ///
    /// The index latch is held shared throughout, so the structure does
    /// not change under the walk (splits and merges wait); each page is
    /// read under its own shared latch, which leaf writes do not need to
    /// wait long for. The cost is one read of every internal page plus
    /// the sampled leaves: for a tree of N leaves about N/100 + max_leaves
    /// pages.
    pub fn sample_leaves(&self, max_leaves: usize) -> Result<LeafSample> {
        let pool = &self.shared.pool;
        let _il = self.latch.read();
        let entries = |p: &[u8]| -> Vec<(Vec<u8>, Vec<u8>)> {
            (0..node::count(p))
                .map(|i| (node::key(p, i).to_vec(), node::value(p, i).to_vec()))
                .collect()
        };
        let root = pool.read(self.pid(self.root))?;
        self.expect_node(root.bytes(), self.root, None)?;
        if node::is_leaf(root.bytes()) {
            return Ok(LeafSample {
                leaf_pages: 1,
                leaves: vec![entries(root.bytes())],
            });
        }
        // Walk the internal levels top-down: `level` holds the page
        // numbers of one level, left to right.
        let mut height = node::level(root.bytes());
        let children = |p: &[u8]| -> Vec<u32> {
            std::iter::once(node::leftmost(p))
                .chain((0..node::count(p)).map(|i| node::child(p, i)))
                .collect()
        };
        let mut level: Vec<u32> = children(root.bytes());
        drop(root);
        while height > 1 {
            let mut next = Vec::new();
            for &pg in &level {
                let g = pool.read(self.pid(pg))?;
                self.expect_node(g.bytes(), pg, Some(height - 1))?;
                next.extend(children(g.bytes()));
            }
            level = next;
            height -= 1;
        }
        // `level` now lists every leaf, in key order.
        let n = level.len();
        let take = max_leaves.max(1).min(n);
        let mut leaves = Vec::with_capacity(take);
        for i in 0..take {
            // The middle of the i-th of `take` equal strata.
            let idx = ((2 * i + 1) * n / (2 * take)).min(n - 1);
            let pg = level[idx];
            let g = pool.read(self.pid(pg))?;
            self.expect_node(g.bytes(), pg, Some(0))?;
            leaves.push(entries(g.bytes()));
        }
        Ok(LeafSample {
            leaf_pages: n as u64,
            leaves,
        })
    }
}

/// What [`Tree::sample_leaves`] found.
#[derive(Debug, Clone, Default)]
pub struct LeafSample {
    /// Leaf pages in the tree.
    pub leaf_pages: u64,
    /// The (key, value) entries of each sampled leaf; all leaves, in key
    /// order, when `leaves.len() as u64 == leaf_pages`.
    pub leaves: Vec<Vec<(Vec<u8>, Vec<u8>)>>,
}

/// A range cursor. It holds no latch between calls: each refill re-seeks
/// from the last key returned and copies one leaf's worth of entries.
pub struct Cursor<'t> {
    tree: &'t Tree,
    lower: Bound<Vec<u8>>,
    upper: Bound<Vec<u8>>,
    reverse: bool,
    buf: VecDeque<(Vec<u8>, Vec<u8>)>,
    last: Option<Vec<u8>>,
    done: bool,
}

fn above_lower(k: &[u8], b: &Bound<Vec<u8>>) -> bool {
    match b {
        Bound::Unbounded => true,
        Bound::Included(x) => k >= x.as_slice(),
        Bound::Excluded(x) => k > x.as_slice(),
    }
}
fn below_upper(k: &[u8], b: &Bound<Vec<u8>>) -> bool {
    match b {
        Bound::Unbounded => true,
        Bound::Included(x) => k <= x.as_slice(),
        Bound::Excluded(x) => k < x.as_slice(),
    }
}

impl Cursor<'_> {
    fn fill(&mut self) -> Result<()> {
        let tree = self.tree;
        let pool = &tree.shared.pool;
        let _il = tree.latch.read();
        if !self.reverse {
            // Start: after the last key, else at the lower bound.
            let (start, inclusive): (Option<&[u8]>, bool) = match (&self.last, &self.lower) {
                (Some(l), _) => (Some(l.as_slice()), false),
                (None, Bound::Included(x)) => (Some(x.as_slice()), true),
                (None, Bound::Excluded(x)) => (Some(x.as_slice()), false),
                (None, Bound::Unbounded) => (None, true),
            };
            let mut g = tree.find_leaf_shared(start, false)?;
            let mut pos = match start {
                None => 0,
                Some(k) => match node::search(g.bytes(), k) {
                    Ok(i) if inclusive => i,
                    Ok(i) => i + 1,
                    Err(i) => i,
                },
            };
            loop {
                let p = g.bytes();
                let n = node::count(p);
                while pos < n {
                    let k = node::key(p, pos);
                    if !below_upper(k, &self.upper) {
                        self.done = true;
                        return Ok(());
                    }
                    self.buf
                        .push_back((k.to_vec(), node::value(p, pos).to_vec()));
                    pos += 1;
                }
                if !self.buf.is_empty() {
                    return Ok(());
                }
                let next = node::next(p);
                if next == node::NIL {
                    self.done = true;
                    return Ok(());
                }
                let c = pool.read(tree.pid(next))?;
                tree.expect_node(c.bytes(), next, Some(0))?;
                g = c;
                pos = 0;
            }
        } else {
            let (start, inclusive): (Option<&[u8]>, bool) = match (&self.last, &self.upper) {
                (Some(l), _) => (Some(l.as_slice()), false),
                (None, Bound::Included(x)) => (Some(x.as_slice()), true),
                (None, Bound::Excluded(x)) => (Some(x.as_slice()), false),
                (None, Bound::Unbounded) => (None, true),
            };
            let mut g = tree.find_leaf_shared(start, true)?;
            // `end`: entries [0, end) of this leaf are candidates.
            let mut end = match start {
                None => node::count(g.bytes()),
                Some(k) => match node::search(g.bytes(), k) {
                    Ok(i) if inclusive => i + 1,
                    Ok(i) | Err(i) => i,
                },
            };
            loop {
                let p = g.bytes();
                while end > 0 {
                    end -= 1;
                    let k = node::key(p, end);
                    if !above_lower(k, &self.lower) {
                        self.done = true;
                        return Ok(());
                    }
                    self.buf
                        .push_back((k.to_vec(), node::value(p, end).to_vec()));
                }
                if !self.buf.is_empty() {
                    return Ok(());
                }
                let prev = node::prev(p);
                if prev == node::NIL {
                    self.done = true;
                    return Ok(());
                }
                // Structure is stable under the shared index latch, so the
                // prev pointer stays valid after releasing this leaf (and
                // latching right-to-left while holding would risk deadlock
                // with left-to-right scans).
                drop(g);
                let c = pool.read(tree.pid(prev))?;
                tree.expect_node(c.bytes(), prev, Some(0))?;
                end = node::count(c.bytes());
                g = c;
            }
        }
    }
}

impl Iterator for Cursor<'_> {
    type Item = Result<(Vec<u8>, Vec<u8>)>;
    fn next(&mut self) -> Option<Self::Item> {
        if self.buf.is_empty() {
            if self.done {
                return None;
            }
            if let Err(e) = self.fill() {
                self.done = true;
                return Some(Err(e));
            }
            // The next fill resumes after the last key of this batch (the
            // batch is drained before the next fill): one copy per batch,
            // not one per key.
            if let Some((k, _)) = self.buf.back() {
                self.last = Some(k.clone());
            }
        }
        let item = self.buf.pop_front()?;
        Some(Ok(item))
    }
}
