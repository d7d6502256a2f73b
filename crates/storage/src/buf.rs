//! # Buffer pool: pages in memory, pinned, latched, flushed in WAL order
//!
//! The buffer pool (`innodb_buffer_pool_size`) is a fixed array of *frames*,
//! each holding one page. A page is found through a sharded page table
//! (`PageId -> frame`). Callers get *guards*: a guard pins the frame (it
//! cannot be evicted) and holds its latch (a reader-writer lock on the page
//! bytes). Dropping the guard releases both.
//!
//! ```text
//!   page table (64 shards)         frames                      flush list
//!   +---------------------+       +----------------------+    (oldest_modification, page)
//!   | 0:17 -> f3          |       | f0  pin=0 ref=1 clean |    +------------------+
//!   | 0:2  -> f0          |  ---> | f1  free              |    | (1000, 0:17) f3  |
//!   | ...                 |       | f2  pin=2 dirty       |    | (1200, 0:9)  f2  |
//!   +---------------------+       | f3  pin=0 dirty       |    | ...              |
//!                                 +----------------------+    +------------------+
//!                                   CLOCK hand sweeps clean,
//!                                   unpinned frames for eviction
//! ```
//!
//! **Eviction** is CLOCK, an LRU approximation: every access sets a frame's
//! reference bit; the hand clears bits and evicts the first clean, unpinned
//! frame whose bit is already clear. It needs no lock on the hit path, which
//! matters for a million point reads a second. Dirty frames are never
//! evicted directly: when no clean frame can be found, the thread flushes a
//! batch of the oldest dirty pages itself (`Innodb_buffer_pool_wait_free`).
//!
//! **Flush list**: every dirty frame is on it, keyed by its *oldest
//! modification* LSN (the start LSN of the first mini-transaction that
//! dirtied it since it was last written). Mini-transactions insert under the
//! redo append lock, so the list's minimum is a valid checkpoint LSN.
//!
//! **Flushing a page** (a batch at a time, [`BufferPool::flush_batch`]):
//! 1. copy each page under its shared latch (writers keep going afterwards:
//!    a page modified again while its copy is in flight is *redirtied*, its
//!    new oldest modification recorded by the mini-transaction that did it);
//! 2. the WAL rule: redo is made durable up to the largest page LSN in the
//!    batch before any of the copies reaches a data file;
//! 3. doublewrite (when on): the batch is written and synced there first;
//! 4. in-place writes, data file sync, then the pages leave the flush list
//!    (or move to their redirty LSN). A page stays on the flush list until
//!    its write is durable, so the checkpoint never passes an unwritten page.
//!
//! Invariants:
//! * pin counts are raised only under the page table shard lock, and a frame
//!   is evicted only under that lock with pin == 0 and clean: no guard ever
//!   sees its page replaced;
//! * `oldest_modification` and `redirty_lsn` change only under the flush
//!   list lock;
//! * a frame's bytes change only under its exclusive latch.

use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use parking_lot::{Mutex, RwLock, RwLockReadGuard, RwLockWriteGuard};
use quire_io::{AlignedBuf, File, IoError};

use crate::dblwr::{Doublewrite, PageWrite};
use crate::error::{Result, StorageError};
use crate::page::{self, Lsn, PageCheck, PageId};
use crate::redo::RedoLog;
use crate::stats::Stats;

const SHARDS: usize = 64;

/// Hasher for the page table: keys are packed page ids (u64), so one
/// multiply spreads them well; SipHash would cost more than the lookup.
#[derive(Default, Clone, Copy)]
struct PageKeyHasher(u64);

impl std::hash::Hasher for PageKeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ b as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = (v ^ (v >> 29)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

type PageTable = HashMap<u64, u32, std::hash::BuildHasherDefault<PageKeyHasher>>;
const NO_PAGE: u64 = u64::MAX;

const STATE_LOADING: u8 = 0;
const STATE_OK: u8 = 1;
const STATE_FAILED: u8 = 2;

/// Sticky failure shared by every part of the store.
#[derive(Debug, Default)]
pub struct Poison {
    failed: AtomicBool,
    first: Mutex<Option<String>>,
}

impl Poison {
    pub fn set(&self, why: &str) {
        let mut first = self.first.lock();
        if first.is_none() {
            *first = Some(why.to_string());
        }
        self.failed.store(true, Ordering::Release);
    }
    pub fn check(&self) -> Result<()> {
        if self.failed.load(Ordering::Acquire) {
            let why = self.first.lock().clone().unwrap_or_default();
            return Err(StorageError::Poisoned(why));
        }
        Ok(())
    }
    pub fn is_set(&self) -> bool {
        self.failed.load(Ordering::Acquire)
    }
    /// Runs an I/O step; a failure poisons the store.
    pub fn guard<T>(&self, r: std::result::Result<T, IoError>) -> Result<T> {
        match r {
            Ok(v) => Ok(v),
            Err(e) => {
                self.set(&e.to_string());
                Err(e.into())
            }
        }
    }
}

/// One data file (tablespace) the pool reads and writes.
#[derive(Debug)]
pub struct SpaceFile {
    pub file: Arc<dyn File>,
    pub path: PathBuf,
}

struct Frame {
    latch: RwLock<AlignedBuf>,
    id: AtomicU64,
    pin: AtomicU32,
    referenced: AtomicBool,
    state: AtomicU8,
    /// 0 = clean. Changes only under the flush list lock.
    oldest_mod: AtomicU64,
    /// Set while a copy of the page is being written.
    flushing: AtomicBool,
    /// First modification after the in-flight copy was taken (0 = none).
    redirty_lsn: AtomicU64,
    /// Error text of a failed load.
    load_error: Mutex<Option<StorageError>>,
}

/// Configuration of the pool.
#[derive(Debug, Clone)]
pub struct PoolConfig {
    pub page_size: usize,
    pub capacity_bytes: u64,
    /// Pages per flush batch (`innodb_doublewrite_pages`).
    pub batch_pages: usize,
    /// `innodb_flush_neighbors`: 0 off, 1 contiguous dirty neighbours,
    /// 2 any dirty page in the same extent.
    pub flush_neighbors: u32,
    /// Buffer alignment for I/O (O_DIRECT).
    pub io_alignment: usize,
}

/// The buffer pool.
pub struct BufferPool {
    cfg: PoolConfig,
    frames: Box<[Frame]>,
    table: Box<[Mutex<PageTable>]>,
    free: Mutex<Vec<u32>>,
    hand: AtomicUsize,
    flush_list: Mutex<BTreeSet<(Lsn, u64)>>,
    dirty_count: AtomicUsize,
    /// One flush batch at a time (page cleaner, eviction, checkpoints).
    flush_mutex: Mutex<()>,
    spaces: RwLock<HashMap<u32, Arc<SpaceFile>>>,
    log: OnceLock<Arc<RedoLog>>,
    dblwr: Option<Arc<Doublewrite>>,
    recovering: AtomicBool,
    /// High-water mark of the system tablespace as allocation last saw it
    /// (pages in use or freed; the file beyond it is spare room).
    hwm_pages: AtomicU32,
    pub stats: Arc<Stats>,
    pub poison: Arc<Poison>,
}

impl std::fmt::Debug for BufferPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BufferPool")
            .field("frames", &self.frames.len())
            .field("dirty", &self.dirty_count.load(Ordering::Relaxed))
            .finish()
    }
}

/// A pinned, shared-latched page.
pub struct PageRef<'a> {
    pool: &'a BufferPool,
    frame: u32,
    guard: RwLockReadGuard<'a, AlignedBuf>,
}

/// A pinned, exclusively latched page. Changes go through a mini-transaction.
pub struct PageMut<'a> {
    pool: &'a BufferPool,
    frame: u32,
    pub(crate) id: PageId,
    guard: RwLockWriteGuard<'a, AlignedBuf>,
}

impl<'a> PageRef<'a> {
    pub fn bytes(&self) -> &[u8] {
        &self.guard
    }
    pub fn id(&self) -> PageId {
        PageId::from_u64(
            self.pool.frames[self.frame as usize]
                .id
                .load(Ordering::Relaxed),
        )
    }
}

impl Drop for PageRef<'_> {
    fn drop(&mut self) {
        self.pool.unpin(self.frame);
    }
}

impl<'a> PageMut<'a> {
    pub fn bytes(&self) -> &[u8] {
        &self.guard
    }
    /// Raw mutable access; only the mini-transaction uses it.
    pub(crate) fn bytes_mut(&mut self) -> &mut [u8] {
        &mut self.guard
    }
    pub fn id(&self) -> PageId {
        self.id
    }
    pub(crate) fn frame(&self) -> u32 {
        self.frame
    }
}

impl Drop for PageMut<'_> {
    fn drop(&mut self) {
        self.pool.unpin(self.frame);
    }
}

fn shard_of(key: u64) -> usize {
    // Fibonacci hashing spreads consecutive page numbers over shards.
    ((key.wrapping_mul(0x9E37_79B9_7F4A_7C15)) >> 58) as usize % SHARDS
}

impl BufferPool {
    pub fn new(
        cfg: PoolConfig,
        dblwr: Option<Arc<Doublewrite>>,
        stats: Arc<Stats>,
        poison: Arc<Poison>,
    ) -> Result<BufferPool> {
        let n = (cfg.capacity_bytes / cfg.page_size as u64) as usize;
        if n < 64 {
            return Err(StorageError::Config(format!(
                "innodb_buffer_pool_size={} holds only {n} pages of {} bytes; at least 64 are needed",
                cfg.capacity_bytes, cfg.page_size
            )));
        }
        let frames: Vec<Frame> = (0..n)
            .map(|_| Frame {
                latch: RwLock::new(AlignedBuf::new(cfg.page_size, cfg.io_alignment.max(8))),
                id: AtomicU64::new(NO_PAGE),
                pin: AtomicU32::new(0),
                referenced: AtomicBool::new(false),
                state: AtomicU8::new(STATE_OK),
                oldest_mod: AtomicU64::new(0),
                flushing: AtomicBool::new(false),
                redirty_lsn: AtomicU64::new(0),
                load_error: Mutex::new(None),
            })
            .collect();
        let free: Vec<u32> = (0..n as u32).rev().collect();
        Ok(BufferPool {
            cfg,
            frames: frames.into_boxed_slice(),
            table: (0..SHARDS)
                .map(|_| Mutex::new(PageTable::default()))
                .collect(),
            free: Mutex::new(free),
            hand: AtomicUsize::new(0),
            flush_list: Mutex::new(BTreeSet::new()),
            dirty_count: AtomicUsize::new(0),
            flush_mutex: Mutex::new(()),
            spaces: RwLock::new(HashMap::new()),
            hwm_pages: AtomicU32::new(0),
            log: OnceLock::new(),
            dblwr,
            recovering: AtomicBool::new(false),
            stats,
            poison,
        })
    }

    pub fn page_size(&self) -> usize {
        self.cfg.page_size
    }
    pub fn frame_count(&self) -> usize {
        self.frames.len()
    }
    pub fn dirty_pages(&self) -> usize {
        self.dirty_count.load(Ordering::Relaxed)
    }
    pub fn batch_pages(&self) -> usize {
        self.cfg.batch_pages
    }

    /// Attaches the redo log (after recovery has scanned it). Until then,
    /// flushes skip the WAL wait: everything being replayed is already on
    /// disk.
    pub fn set_log(&self, log: Arc<RedoLog>) {
        let _ = self.log.set(log);
    }
    pub fn set_recovering(&self, on: bool) {
        self.recovering.store(on, Ordering::Release);
    }

    /// Records that allocation reached page `hwm` (exclusive).
    pub(crate) fn note_hwm(&self, hwm: u32) {
        self.hwm_pages.fetch_max(hwm, Ordering::AcqRel);
    }
    pub(crate) fn hwm_pages(&self) -> u32 {
        self.hwm_pages.load(Ordering::Acquire)
    }

    pub fn add_space(&self, space: u32, file: Arc<SpaceFile>) {
        self.spaces.write().insert(space, file);
    }
    pub fn space_file(&self, space: u32) -> Result<Arc<SpaceFile>> {
        self.spaces
            .read()
            .get(&space)
            .cloned()
            .ok_or_else(|| StorageError::BadDatadir(format!("tablespace {space} is not open")))
    }

    fn unpin(&self, frame: u32) {
        let prev = self.frames[frame as usize]
            .pin
            .fetch_sub(1, Ordering::Release);
        debug_assert!(prev > 0, "unpin of an unpinned frame");
    }

    /// Shared access to a page, reading it from disk if needed.
    pub fn read(&self, id: PageId) -> Result<PageRef<'_>> {
        let f = self.fix(id, false)?;
        let guard = self.frames[f as usize].latch.read();
        let r = PageRef {
            pool: self,
            frame: f,
            guard,
        };
        self.check_loaded(f)?;
        Ok(r)
    }

    /// Exclusive access to a page, reading it from disk if needed.
    pub fn write(&self, id: PageId) -> Result<PageMut<'_>> {
        let f = self.fix(id, false)?;
        let guard = self.frames[f as usize].latch.write();
        let w = PageMut {
            pool: self,
            frame: f,
            id,
            guard,
        };
        self.check_loaded(f)?;
        Ok(w)
    }

    /// Exclusive access to a page that is being (re)initialised: its old
    /// content is not read from disk. The bytes are zeroed unless cached.
    pub fn create(&self, id: PageId) -> Result<PageMut<'_>> {
        let f = self.fix(id, true)?;
        let guard = self.frames[f as usize].latch.write();
        let w = PageMut {
            pool: self,
            frame: f,
            id,
            guard,
        };
        // A create of a page whose earlier load failed overrides it: the
        // caller initialises every byte.
        self.frames[f as usize]
            .state
            .store(STATE_OK, Ordering::Release);
        Ok(w)
    }

    fn check_loaded(&self, f: u32) -> Result<()> {
        let fr = &self.frames[f as usize];
        match fr.state.load(Ordering::Acquire) {
            STATE_OK => Ok(()),
            _ => Err(fr
                .load_error
                .lock()
                .clone()
                .unwrap_or_else(|| StorageError::Recovery("page load failed".into()))),
        }
    }

    /// Finds or loads the page and pins its frame.
    fn fix(&self, id: PageId, create: bool) -> Result<u32> {
        let key = id.to_u64();
        let shard = &self.table[shard_of(key)];
        loop {
            {
                let t = shard.lock();
                if let Some(&f) = t.get(&key) {
                    let fr = &self.frames[f as usize];
                    fr.pin.fetch_add(1, Ordering::Acquire);
                    if !fr.referenced.load(Ordering::Relaxed) {
                        fr.referenced.store(true, Ordering::Relaxed);
                    }
                    return Ok(f);
                }
            }
            let f = self.get_free_frame()?;
            let fr = &self.frames[f as usize];
            let mut t = shard.lock();
            if t.contains_key(&key) {
                drop(t);
                self.free.lock().push(f);
                continue;
            }
            fr.id.store(key, Ordering::Relaxed);
            fr.pin.store(1, Ordering::Relaxed);
            fr.referenced.store(true, Ordering::Relaxed);
            fr.state.store(STATE_LOADING, Ordering::Relaxed);
            // Take the exclusive latch before publishing, so concurrent
            // fixers wait for the load on the latch.
            let mut g = fr.latch.write();
            t.insert(key, f);
            drop(t);
            let res = if create {
                g.fill(0);
                Ok(())
            } else {
                self.load(id, &mut g)
            };
            match res {
                Ok(()) => {
                    fr.state.store(STATE_OK, Ordering::Release);
                    drop(g);
                    return Ok(f);
                }
                Err(e) => {
                    *fr.load_error.lock() = Some(e.clone());
                    fr.state.store(STATE_FAILED, Ordering::Release);
                    drop(g);
                    self.unpin(f);
                    return Err(e);
                }
            }
        }
    }

    /// Reads and verifies one page from its data file.
    fn load(&self, id: PageId, buf: &mut [u8]) -> Result<()> {
        let sf = self.space_file(id.space)?;
        let off = id.page_no as u64 * self.cfg.page_size as u64;
        Stats::inc(&self.stats.innodb_pages_read);
        match sf.file.read_at(buf, off) {
            Ok(()) => {}
            Err(IoError::ShortRead { .. }) if self.recovering.load(Ordering::Acquire) => {
                // Recovery: the file grew after the last checkpoint and the
                // growth was lost; redo re-initialises the page.
                buf.fill(0);
                return Ok(());
            }
            Err(IoError::ShortRead { len, .. }) => {
                return Err(StorageError::corrupt(
                    &sf.path,
                    id.page_no,
                    format!("page is beyond the end of the file ({len} bytes)"),
                ))
            }
            Err(e) => return Err(e.into()),
        }
        match page::verify(buf, id) {
            PageCheck::Valid => Ok(()),
            PageCheck::Zero if self.recovering.load(Ordering::Acquire) => Ok(()),
            PageCheck::Zero => Err(StorageError::corrupt(
                &sf.path,
                id.page_no,
                "page was never written (all zero)",
            )),
            PageCheck::Bad(why) => Err(StorageError::corrupt(&sf.path, id.page_no, why)),
        }
    }

    /// A free frame: from the free list, else by CLOCK eviction of a clean
    /// page, else after flushing a batch of dirty pages.
    fn get_free_frame(&self) -> Result<u32> {
        let n = self.frames.len();
        let mut waited = false;
        loop {
            if let Some(f) = self.free.lock().pop() {
                return Ok(f);
            }
            for _ in 0..2 * n {
                let f = self.hand.fetch_add(1, Ordering::Relaxed) % n;
                let fr = &self.frames[f];
                if fr.pin.load(Ordering::Relaxed) > 0
                    || fr.oldest_mod.load(Ordering::Relaxed) != 0
                    || fr.flushing.load(Ordering::Relaxed)
                {
                    continue;
                }
                if fr.referenced.swap(false, Ordering::Relaxed) {
                    continue;
                }
                let key = fr.id.load(Ordering::Relaxed);
                if key == NO_PAGE {
                    continue;
                }
                let mut t = self.table[shard_of(key)].lock();
                if fr.id.load(Ordering::Relaxed) != key
                    || fr.pin.load(Ordering::Acquire) > 0
                    || fr.oldest_mod.load(Ordering::Acquire) != 0
                    || fr.flushing.load(Ordering::Acquire)
                {
                    continue;
                }
                t.remove(&key);
                fr.id.store(NO_PAGE, Ordering::Relaxed);
                *fr.load_error.lock() = None;
                return Ok(f as u32);
            }
            // Everything is dirty or pinned: flush the oldest batch ourselves.
            if !waited {
                Stats::inc(&self.stats.innodb_buffer_pool_wait_free);
                waited = true;
            }
            self.poison.check()?;
            let flushed = self.flush_batch(self.cfg.batch_pages, Lsn::MAX)?;
            if flushed == 0 && self.dirty_pages() == 0 {
                // Every frame is pinned: the pool is too small for the
                // concurrency asked of it.
                std::thread::yield_now();
            }
        }
    }

    /// Called by a mini-transaction under the redo append lock: the page
    /// (exclusively latched by the caller) was changed by the mtr spanning
    /// [start, end).
    pub(crate) fn note_modified(&self, frame: u32, start: Lsn) {
        let fr = &self.frames[frame as usize];
        let mut fl = self.flush_list.lock();
        if fr.oldest_mod.load(Ordering::Relaxed) == 0 {
            fr.oldest_mod.store(start, Ordering::Relaxed);
            fl.insert((start, fr.id.load(Ordering::Relaxed)));
            self.dirty_count.fetch_add(1, Ordering::Relaxed);
        } else if fr.flushing.load(Ordering::Relaxed) && fr.redirty_lsn.load(Ordering::Relaxed) == 0
        {
            fr.redirty_lsn.store(start, Ordering::Relaxed);
        }
    }

    /// Oldest modification among dirty pages, if any.
    pub fn oldest_modification(&self) -> Option<Lsn> {
        self.flush_list.lock().first().map(|&(l, _)| l)
    }

    /// Writes up to `max_pages` of the oldest dirty pages whose oldest
    /// modification is below `below_lsn`. Returns how many were written.
    pub fn flush_batch(&self, max_pages: usize, below_lsn: Lsn) -> Result<usize> {
        let _one = self.flush_mutex.lock();
        self.poison.check()?;
        let max_pages = max_pages.clamp(1, self.cfg.batch_pages);
        // 1. pick victims (oldest first), plus neighbours.
        let mut picked: Vec<(u64, u32)> = Vec::with_capacity(max_pages);
        {
            let fl = self.flush_list.lock();
            for &(lsn, key) in fl.iter() {
                if picked.len() >= max_pages || lsn >= below_lsn {
                    break;
                }
                if let Some(f) = self.lookup_pinned(key) {
                    picked.push((key, f));
                }
            }
        }
        if picked.is_empty() {
            return Ok(0);
        }
        if self.cfg.flush_neighbors > 0 {
            self.add_neighbours(&mut picked, max_pages);
        }
        picked.sort_unstable();
        // 2. copy under shared latches. A page latched exclusively right now
        // is skipped (`try_read`): the latch holder may be this very thread,
        // flushing to find a free frame in the middle of a page split.
        let mut latched = Vec::with_capacity(picked.len());
        for &(key, f) in &picked {
            match self.frames[f as usize].latch.try_read() {
                Some(g) => latched.push((key, f, g)),
                None => self.unpin(f),
            }
        }
        if latched.is_empty() {
            return Ok(0);
        }
        let picked: Vec<(u64, u32)> = latched.iter().map(|&(k, f, _)| (k, f)).collect();
        let ps = self.cfg.page_size;
        let mut copies = AlignedBuf::new(ps * picked.len(), self.cfg.io_alignment.max(8));
        let mut max_lsn: Lsn = 0;
        for (i, (_, f, g)) in latched.into_iter().enumerate() {
            let fr = &self.frames[f as usize];
            {
                let _fl = self.flush_list.lock();
                fr.flushing.store(true, Ordering::Relaxed);
                fr.redirty_lsn.store(0, Ordering::Relaxed);
            }
            let dst = &mut copies[i * ps..(i + 1) * ps];
            dst.copy_from_slice(&g);
            drop(g);
            max_lsn = max_lsn.max(page::page_lsn(dst));
            page::seal(dst);
        }
        let res = self.write_copies(&picked, &copies, max_lsn);
        // 4. update the flush list.
        {
            let mut fl = self.flush_list.lock();
            for &(key, f) in &picked {
                let fr = &self.frames[f as usize];
                fr.flushing.store(false, Ordering::Relaxed);
                if res.is_ok() {
                    let old = fr.oldest_mod.load(Ordering::Relaxed);
                    fl.remove(&(old, key));
                    let re = fr.redirty_lsn.swap(0, Ordering::Relaxed);
                    if re != 0 {
                        fr.oldest_mod.store(re, Ordering::Relaxed);
                        fl.insert((re, key));
                    } else {
                        fr.oldest_mod.store(0, Ordering::Relaxed);
                        self.dirty_count.fetch_sub(1, Ordering::Relaxed);
                    }
                }
                self.unpin(f);
            }
        }
        res.map(|()| picked.len())
    }

    /// Pins a frame holding `key` if it is cached.
    fn lookup_pinned(&self, key: u64) -> Option<u32> {
        let t = self.table[shard_of(key)].lock();
        let &f = t.get(&key)?;
        self.frames[f as usize].pin.fetch_add(1, Ordering::Acquire);
        Some(f)
    }

    /// `innodb_flush_neighbors`: adds dirty pages of the same 64-page extent
    /// (1: only those contiguous with a picked page; 2: any).
    fn add_neighbours(&self, picked: &mut Vec<(u64, u32)>, max_pages: usize) {
        let base: Vec<u64> = picked.iter().map(|p| p.0).collect();
        for key in base {
            let id = PageId::from_u64(key);
            let extent = id.page_no / 64 * 64;
            let range: Vec<u32> = if self.cfg.flush_neighbors == 1 {
                let mut v = Vec::new();
                let mut p = id.page_no;
                while p > extent {
                    p -= 1;
                    if !self.is_dirty(PageId::new(id.space, p)) {
                        break;
                    }
                    v.push(p);
                }
                let mut p = id.page_no + 1;
                while p < extent + 64 && self.is_dirty(PageId::new(id.space, p)) {
                    v.push(p);
                    p += 1;
                }
                v
            } else {
                (extent..extent + 64).collect()
            };
            for p in range {
                if picked.len() >= self.cfg.batch_pages.max(max_pages) {
                    return;
                }
                let k = PageId::new(id.space, p).to_u64();
                if picked.iter().any(|x| x.0 == k) || !self.is_dirty(PageId::from_u64(k)) {
                    continue;
                }
                if let Some(f) = self.lookup_pinned(k) {
                    if self.frames[f as usize].oldest_mod.load(Ordering::Acquire) != 0 {
                        picked.push((k, f));
                    } else {
                        self.unpin(f);
                    }
                }
            }
        }
    }

    fn is_dirty(&self, id: PageId) -> bool {
        let key = id.to_u64();
        let t = self.table[shard_of(key)].lock();
        match t.get(&key) {
            Some(&f) => self.frames[f as usize].oldest_mod.load(Ordering::Relaxed) != 0,
            None => false,
        }
    }

    /// Steps 2-3-4 of a flush: WAL, doublewrite, in place, sync.
    fn write_copies(&self, picked: &[(u64, u32)], copies: &[u8], max_lsn: Lsn) -> Result<()> {
        let ps = self.cfg.page_size;
        if let Some(log) = self.log.get() {
            log.flush_to(max_lsn)?;
            debug_assert!(log.flushed_lsn() >= max_lsn, "WAL rule");
        }
        let writes: Vec<PageWrite<'_>> = picked
            .iter()
            .enumerate()
            .map(|(i, &(key, _))| PageWrite {
                id: PageId::from_u64(key),
                image: &copies[i * ps..(i + 1) * ps],
            })
            .collect();
        // Assert right before writing: every image is sealed and names itself.
        for w in &writes {
            let state = page::verify(w.image, w.id);
            assert_eq!(
                state,
                PageCheck::Valid,
                "about to write an invalid image of {}",
                w.id
            );
            if page::page_type(w.image) == Some(page::PageType::Index) {
                if let Err(e) = crate::btree::node::check(w.image) {
                    panic!("about to write a malformed B+tree node {}: {e}", w.id);
                }
            }
        }
        let guard = match &self.dblwr {
            Some(d) => Some(d.write_batch(&writes)?),
            None => None,
        };
        Stats::add(&self.stats.innodb_data_pending_writes, writes.len() as u64);
        let res = self.write_in_place(&writes);
        self.stats
            .innodb_data_pending_writes
            .fetch_sub(writes.len() as u64, Ordering::Relaxed);
        if let Err(e) = res {
            // In-place writes may be torn now: keep this batch's copies
            // (the slot must never be reused before a restart recovers).
            if let Some(d) = &self.dblwr {
                d.poison(&e.to_string());
            }
            std::mem::forget(guard);
            return Err(e);
        }
        drop(guard);
        Stats::add(&self.stats.innodb_pages_written, writes.len() as u64);
        Stats::add(
            &self.stats.innodb_buffer_pool_pages_flushed,
            writes.len() as u64,
        );
        Ok(())
    }

    fn write_in_place(&self, writes: &[PageWrite<'_>]) -> Result<()> {
        let ps = self.cfg.page_size as u64;
        let mut touched: Vec<u32> = Vec::new();
        for w in writes {
            let sf = self.space_file(w.id.space)?;
            self.poison
                .guard(sf.file.write_at(w.image, w.id.page_no as u64 * ps))?;
            if !touched.contains(&w.id.space) {
                touched.push(w.id.space);
            }
        }
        for s in touched {
            let sf = self.space_file(s)?;
            if self.poison.guard(sf.file.sync())? {
                Stats::inc(&self.stats.innodb_data_fsyncs);
            }
        }
        Ok(())
    }

    /// Flushes every dirty page (shutdown, end of recovery).
    pub fn flush_all(&self) -> Result<()> {
        while self.dirty_pages() > 0 {
            self.flush_batch(self.cfg.batch_pages, Lsn::MAX)?;
        }
        Ok(())
    }

    /// Drops every cached copy of a space's pages (none may be pinned or dirty).
    pub fn invalidate_all(&self) {
        for shard in self.table.iter() {
            let mut t = shard.lock();
            for (_, f) in t.drain() {
                let fr = &self.frames[f as usize];
                fr.id.store(NO_PAGE, Ordering::Relaxed);
                self.free.lock().push(f);
            }
        }
    }
}
