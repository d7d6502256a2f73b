//! # The store: creating, opening and recovering a data directory
//!
//! ```text
//!  datadir/
//!    ibdata1                  system tablespace (space 0): header, index
//!                             directory, B+tree pages, free pages
//!    #innodb_redo/#ib_redoN   the redo log, 32 files reused in a circle
//!    #ib_16384_N.dblwr        doublewrite files (innodb_doublewrite_dir)
//! ```
//!
//! ## Opening: recovery, always
//!
//! Every open of an existing directory runs the same steps, whether the
//! last shutdown was clean or not (after a clean one they find nothing to
//! do):
//!
//! 1. **Doublewrite**: every page copy in the doublewrite files whose
//!    in-place page fails its checksum is written back (ON); in
//!    DETECT_ONLY mode such pages are reported and start-up is refused.
//! 2. **Redo**: from the newest valid checkpoint to the end of the valid
//!    log, each mini-transaction's records are applied to the pages whose
//!    LSN is older. A page that fails its checksum here (OFF, or damage the
//!    doublewrite buffer did not cover) refuses start-up, naming the page.
//! 3. **Flush and checkpoint**: all recovered pages go to disk (through
//!    the doublewrite buffer), then the checkpoint moves, through
//!    `make_checkpoint` like any other, to the end of the log, or to the
//!    first *engine frame* (a logical record the caller replays after
//!    `open_with` returns) when there is one: a pin holds it there until
//!    the caller has replayed every frame and calls
//!    [`Store::finish_recovery`].
//!
//! A crash at any point of this repeats it from the old checkpoint: pages
//! already written carry their LSN and are skipped, torn writes are covered
//! by the doublewrite buffer, engine frames are read again. Recovery is
//! idempotent.
//!
//! ## Invariant 7: the checkpoint never passes effects that are not durable
//!
//! ```text
//!   redo:  ... | frame F (logical) | ... | mtrs applying F | ...
//!                ^ pinned from append      ^ may sit after the checkpoint,
//!                  until applied             on pages not yet written
//! ```
//!
//! An engine frame stands for page changes made later by other mtrs. The
//! checkpoint may pass the frame only when those changes can no longer be
//! lost: the frame is unpinned only after they are in the log buffer, and
//! `make_checkpoint` reads the pins *before* the current LSN and makes the
//! redo durable up to that LSN (not just to the checkpoint) before it
//! writes the checkpoint. Recovery holds one pin at the first frame it
//! found; it follows the caller's replay (`recovery_progress`: pages
//! written, pin moved past the frames already applied) so that a long
//! replay cannot fill the log, and is released by `finish_recovery`. `RedoLog::checkpoint` is
//! private to this crate, so no other path can write a checkpoint.
//! (Before this rule, recovery checkpointed at the end of the log before
//! the engine replayed its records: a second crash during the replay lost
//! acknowledged commits.)
//!
//! ## Keeping checkpoint age bounded
//!
//! Redo space between the checkpoint and the end of the log cannot be
//! reused. Before each write, [`Shared::before_write`] looks at the
//! checkpoint age (LSN - checkpoint LSN): past the *async point* (3/4 of the
//! log) it wakes the page cleaner to flush without pacing; past the *sync
//! point* (7/8) the writer itself flushes the oldest pages and moves the
//! checkpoint before it goes on (`Innodb_log_waits`). This happens before
//! any page is latched, so the flush can never wait for the writer.
//!
//! During recovery's replay the checkpoint is held by recovery's own pin,
//! and a crash may leave the log right at the sync point: waiting there
//! would wait forever. The replay's writes may use the headroom above it
//! (up to 29/32 of the log, which still takes the largest mtr), the pin
//! moves frame by frame, and if even that cannot make room the write
//! fails with an error naming the cause instead of hanging. The replay
//! writes little: a commit record names the chains of its long values,
//! written before it, instead of carrying them (engine `offpage.rs`).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use parking_lot::{Mutex, RwLock};
use quire_config::{Config, DoublewriteMode};
use quire_io::{FileKind, OpenOptions, Vfs};

use crate::btree::Tree;
use crate::buf::{BufferPool, Poison, PoolConfig, SpaceFile};
use crate::cleaner;
use crate::dblwr::{DblwrConfig, DblwrMode, Doublewrite};
use crate::error::{Result, StorageError};
use crate::mtr::{self, Mtr};
use crate::page::{self, Lsn, PageCheck, PageId};
use crate::redo::{RedoConfig, RedoLog};
use crate::space;
use crate::stats::Stats;

pub const SYSTEM_SPACE_FILE: &str = "ibdata1";
/// Present while a data directory is being created (see `open_with`).
pub const INIT_MARKER: &str = "#quire_init_unfinished";
const INITIAL_SPACE_PAGES: u32 = 64;

/// What opening found and did.
#[derive(Debug, Clone, Default)]
pub struct RecoveryReport {
    pub created: bool,
    pub checkpoint_lsn: Lsn,
    pub end_lsn: Lsn,
    pub mtrs_applied: u64,
    pub redo_bytes: u64,
    pub pages_applied: u64,
    pub torn_restored: u64,
    /// Time spent scanning and applying redo.
    pub redo_apply_duration: Duration,
    /// Start LSN of the first engine frame between the checkpoint and the
    /// end of the log (the checkpoint stays there until the caller's
    /// `finish_recovery`).
    pub first_logical_lsn: Option<Lsn>,
    /// Time the whole open took.
    pub duration: Duration,
    pub notes: Vec<String>,
}

/// The latch of one index (see `btree`), by (space, root page).
type IndexLatch = Arc<RwLock<()>>;

/// State shared by trees, the cleaner and the store handle.
pub struct Shared {
    pub cfg: Config,
    pub vfs: Arc<dyn Vfs>,
    pub pool: BufferPool,
    pub log: Arc<RedoLog>,
    pub stats: Arc<Stats>,
    pub poison: Arc<Poison>,
    index_latches: Mutex<HashMap<(u32, u32), IndexLatch>>,
    pub(crate) cleaner: cleaner::Signal,
    shutdown: AtomicBool,
    /// Checkpoint pins: start LSNs of engine frames whose page changes are
    /// still being applied. The checkpoint never passes the smallest.
    pins: Mutex<std::collections::BTreeMap<Lsn, u32>>,
    /// Serialises checkpoint computation and writing.
    checkpoint_lock: Mutex<()>,
    /// Pages the system tablespace file is known to hold (a lower bound;
    /// see `Store::reserve_pages`), and one grower at a time.
    file_pages: AtomicU64,
    grow_lock: Mutex<()>,
    /// Set while the caller replays engine frames (between `open_with`
    /// and `finish_recovery`): the checkpoint is then held by recovery
    /// itself, see [`Shared::write_limit`].
    replaying: AtomicBool,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared").field("pool", &self.pool).finish()
    }
}

impl Shared {
    pub(crate) fn index_latch(&self, space: u32, root: u32) -> IndexLatch {
        self.index_latches
            .lock()
            .entry((space, root))
            .or_insert_with(|| Arc::new(RwLock::new(())))
            .clone()
    }

    /// Redo LSN units at which the cleaner stops pacing itself.
    pub fn async_point(&self) -> u64 {
        self.log.capacity_lsn() / 4 * 3
    }
    /// Redo LSN units at which writers stop and flush.
    pub fn sync_point(&self) -> u64 {
        self.log.capacity_lsn() / 8 * 7
    }
    pub fn checkpoint_age(&self) -> u64 {
        self.log.lsn().saturating_sub(self.log.checkpoint_lsn())
    }

    /// The checkpoint age at which a write waits for the checkpoint. In
    /// service, the sync point. During recovery's replay the checkpoint
    /// is pinned at the first engine frame not yet replayed, and the crash
    /// may have left the log right at the sync point, so the replay's own
    /// writes get the headroom above it (up to 29/32 of the circle: the
    /// largest mini-transaction, 1/16, plus write-ahead padding still
    /// fits); they move the pin frame by frame (`recovery_progress`).
    fn write_limit(&self) -> u64 {
        if self.replaying.load(Ordering::Acquire) {
            self.log.capacity_lsn() / 32 * 29
        } else {
            self.sync_point()
        }
    }

    /// Called before a write latches anything: refuses after an I/O error,
    /// and keeps the checkpoint age below the sync point.
    pub fn before_write(&self) -> Result<()> {
        self.poison.check()?;
        if self.shutdown.load(Ordering::Acquire) {
            return Err(StorageError::Shutdown);
        }
        let age = self.checkpoint_age();
        if age < self.async_point() {
            return Ok(());
        }
        self.cleaner.wake();
        let limit = self.write_limit();
        if age >= limit {
            Stats::inc(&self.stats.innodb_log_waits);
            while self.checkpoint_age() >= limit {
                self.poison.check()?;
                if self.shutdown.load(Ordering::Acquire) {
                    return Err(StorageError::Shutdown);
                }
                let target = self.log.lsn().saturating_sub(self.async_point());
                let n = self.pool.flush_batch(self.pool.batch_pages(), target)?;
                self.make_checkpoint()?;
                if n == 0 && self.checkpoint_age() >= limit {
                    if self.replaying.load(Ordering::Acquire) {
                        return self.replay_stuck(limit);
                    }
                    // Pages latched by others right now: let them finish.
                    std::thread::sleep(Duration::from_micros(200));
                }
            }
        }
        Ok(())
    }

    /// Recovery's replay is the only writer and its own pin holds the
    /// checkpoint: with every page written, either the checkpoint moves
    /// or waiting can never help, and an error naming the cause beats a
    /// start-up that hangs.
    fn replay_stuck(&self, limit: u64) -> Result<()> {
        self.pool.flush_all()?;
        self.make_checkpoint()?;
        let age = self.checkpoint_age();
        if age < limit {
            return Ok(());
        }
        Err(StorageError::Poisoned(format!(
            "crash recovery cannot finish: replaying the transactions after the checkpoint \
             needs more redo than innodb_redo_log_capacity leaves free (checkpoint age {age} \
             of {} LSN); nothing is lost, the log still holds every transaction it \
             replays",
            self.log.capacity_lsn()
        )))
    }

    /// Moves the checkpoint to the oldest modification still unflushed.
    pub fn make_checkpoint(&self) -> Result<()> {
        // One at a time: the cleaner and a writer at the sync point may both
        // get here, and a checkpoint computed earlier must never be written
        // after a newer one (checkpoints only move forward).
        let _one = self.checkpoint_lock.lock();
        // Invariant 7 (see the module doc): the checkpoint passes an engine
        // frame only once the page changes it stands for are durable.
        // 1. The pins first: a frame not pinned now has been applied, so
        //    its page changes are mtrs already in the log buffer...
        let pinned = self.pins.lock().first_key_value().map(|(&l, _)| l);
        // 2. ... below this LSN, read after the pins. Read before the flush
        //    list: an mtr appended after this read has its pages on the
        //    flush list before the next read sees the list.
        let lsn = self.log.lsn();
        let mut ck = self.pool.oldest_modification().unwrap_or(lsn).min(lsn);
        if let Some(pinned) = pinned {
            ck = ck.min(pinned);
        }
        if ck > self.log.checkpoint_lsn() {
            // 3. Redo durable to `lsn`, not just to `ck`: the mtrs that
            //    applied a frame before `ck` may lie after `ck` (on pages
            //    not yet written), and once the checkpoint passes the frame
            //    they are the only record of its effects.
            self.log.flush_to(lsn)?;
            self.log.checkpoint(ck)?;
        }
        Ok(())
    }

    fn unpin(&self, lsn: Lsn) {
        let mut p = self.pins.lock();
        match p.get_mut(&lsn) {
            Some(n) if *n > 1 => *n -= 1,
            Some(_) => {
                p.remove(&lsn);
            }
            None => debug_assert!(false, "unpinning an LSN that was not pinned"),
        }
    }

    pub fn is_shutdown(&self) -> bool {
        self.shutdown.load(Ordering::Acquire)
    }
}

/// Holds the checkpoint at or below an engine frame's start LSN.
pub struct CheckpointPin {
    shared: Arc<Shared>,
    lsn: Lsn,
}

impl Drop for CheckpointPin {
    fn drop(&mut self) {
        self.shared.unpin(self.lsn);
    }
}

/// An open data directory.
pub struct Store {
    shared: Arc<Shared>,
    cleaner: Mutex<Option<JoinHandle<()>>>,
    report: RecoveryReport,
    /// Holds the checkpoint at the first engine frame recovery found,
    /// until the caller has replayed them all (`finish_recovery`).
    recovery_pin: Mutex<Option<CheckpointPin>>,
    /// The cleaner is paused and steps at `recovery_step` (SimFs).
    stepped_recovery: AtomicBool,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("report", &self.report)
            .finish()
    }
}

fn redo_config(cfg: &Config) -> RedoConfig {
    RedoConfig {
        capacity_bytes: cfg.innodb_redo_log_capacity,
        log_buffer_bytes: cfg.innodb_log_buffer_size,
        write_ahead_bytes: cfg.innodb_log_write_ahead_size,
    }
}

impl Store {
    /// Opens `cfg.datadir`, creating and initialising it when it holds no
    /// data directory yet, recovering it otherwise.
    pub fn open(vfs: Arc<dyn Vfs>, cfg: &Config) -> Result<Store> {
        Store::open_with(vfs, cfg, &mut |_, _, _| {})
    }

    /// Like [`Store::open`]; `logical` receives, in LSN order, every engine
    /// frame (see [`Store::append_logical`]) between the checkpoint and the
    /// end of the log, after which the caller replays them on the recovered
    /// trees.
    pub fn open_with(
        vfs: Arc<dyn Vfs>,
        cfg: &Config,
        logical: &mut dyn FnMut(Lsn, Lsn, &[u8]),
    ) -> Result<Store> {
        let t0 = Instant::now();
        let cfg = cfg.clone();
        let ps = cfg.innodb_page_size as usize;
        if !page::PAGE_SIZES.contains(&ps) {
            return Err(StorageError::Config(format!(
                "innodb_page_size={ps} is not one of 4096, 8192, 16384, 32768, 65536"
            )));
        }
        let datadir = cfg.datadir.clone();
        let data_path = datadir.join(SYSTEM_SPACE_FILE);
        let redo_dir = datadir.join("#innodb_redo");
        // Creating a data directory is all-or-nothing: a marker made durable
        // first and removed last says it is unfinished. Nothing in an
        // unfinished one was ever acknowledged (no commit runs before open
        // returns), so the next start removes what it holds and begins
        // again: a crash or ENOSPC during initialisation never leaves a
        // directory that cannot be opened.
        let marker = datadir.join(INIT_MARKER);
        let unfinished = vfs.exists(&marker)?;
        if unfinished {
            remove_unfinished(&vfs, &data_path, &redo_dir)?;
        }
        let has_data = vfs.exists(&data_path)?;
        let has_redo = vfs.exists(&redo_dir)?;
        let create = match (has_data, has_redo) {
            _ if unfinished => true,
            (false, false) => true,
            (true, true) => false,
            (d, _) => {
                return Err(StorageError::BadDatadir(format!(
                    "{} is damaged: {} is {} but {} is {}",
                    datadir.display(),
                    SYSTEM_SPACE_FILE,
                    if d { "present" } else { "missing" },
                    redo_dir.display(),
                    if d { "missing" } else { "present" },
                )))
            }
        };
        if create && !unfinished {
            vfs.create_dir_all(&datadir)?;
            let m = vfs.open(&marker, OpenOptions::create(FileKind::Other))?;
            m.sync()?;
            vfs.sync_dir(&datadir)?;
            if let Some(parent) = datadir.parent().filter(|p| !p.as_os_str().is_empty()) {
                vfs.sync_dir(parent)?;
            }
        }
        let stats = Arc::new(Stats::default());
        let poison = Arc::new(Poison::default());
        let dblwr = match cfg.innodb_doublewrite {
            DoublewriteMode::Off => None,
            mode => Some(Arc::new(Doublewrite::open(
                vfs.clone(),
                DblwrConfig {
                    dir: cfg.doublewrite_dir().to_path_buf(),
                    mode: if mode == DoublewriteMode::DetectOnly {
                        DblwrMode::DetectOnly
                    } else {
                        DblwrMode::Full
                    },
                    files: cfg.innodb_doublewrite_files,
                    batch_pages: cfg.innodb_doublewrite_pages,
                    page_size: ps,
                },
                stats.clone(),
            )?)),
        };
        let pool = BufferPool::new(
            PoolConfig {
                page_size: ps,
                capacity_bytes: cfg.innodb_buffer_pool_size,
                batch_pages: cfg.innodb_doublewrite_pages as usize,
                flush_neighbors: cfg.innodb_flush_neighbors,
                io_alignment: vfs.direct_io_alignment(),
            },
            dblwr.clone(),
            stats.clone(),
            poison.clone(),
        )?;
        let file = vfs.open(
            &data_path,
            if create {
                OpenOptions::create(FileKind::Data)
            } else {
                OpenOptions::existing(FileKind::Data)
            },
        )?;
        pool.add_space(
            0,
            Arc::new(SpaceFile {
                file: file.clone(),
                path: data_path.clone(),
            }),
        );
        if !create {
            // A page size other than the one the directory was made with
            // would make every page look corrupt: say what is wrong instead.
            if let Some(found) = crate::check::detect_page_size(&file)? {
                if found != ps {
                    return Err(StorageError::Config(format!(
                        "innodb_page_size={ps} but {} was created with innodb_page_size={found}",
                        data_path.display()
                    )));
                }
            }
        }
        let mut report = RecoveryReport {
            created: create,
            ..Default::default()
        };
        let log = if create {
            if let Some(d) = &dblwr {
                // Leftovers of an earlier installation in
                // innodb_doublewrite_dir belong to no page of this one.
                d.recover()?;
                d.reset()?;
            }
            file.set_len(INITIAL_SPACE_PAGES as u64 * ps as u64)?;
            let log = RedoLog::create(vfs.clone(), &datadir, &redo_config(&cfg), stats.clone())?;
            pool.set_log(log.clone());
            log
        } else {
            pool.set_recovering(true);
            if let Some(d) = &dblwr {
                report.torn_restored = restore_from_doublewrite(&pool, d, &cfg)?;
                Stats::add(&stats.quire_torn_pages_restored, report.torn_restored);
                // Restored pages are synced; the copies are no longer
                // needed, and a changed geometry takes effect now.
                d.reset()?;
            }
            let mut pages_applied = 0u64;
            let mut first_logical: Option<Lsn> = None;
            let t_redo = Instant::now();
            let (log, rec) = RedoLog::open(
                vfs.clone(),
                &datadir,
                &redo_config(&cfg),
                stats.clone(),
                &mut |start, end, payload| match payload.first() {
                    Some(&mtr::FRAME_PHYSICAL) => {
                        pages_applied +=
                            apply_frame(&pool, &cfg, &stats, start, end, &payload[1..])?;
                        Ok(())
                    }
                    Some(&mtr::FRAME_LOGICAL) => {
                        first_logical.get_or_insert(start);
                        logical(start, end, &payload[1..]);
                        Ok(())
                    }
                    _ => Err(StorageError::CorruptLog(format!(
                        "frame at LSN {start} has an unknown kind"
                    ))),
                },
            )?;
            report.redo_apply_duration = t_redo.elapsed();
            report.checkpoint_lsn = rec.checkpoint_lsn;
            report.end_lsn = rec.end_lsn;
            report.mtrs_applied = rec.mtrs;
            report.redo_bytes = rec.payload_bytes;
            report.pages_applied = pages_applied;
            if let Some(n) = rec.note.clone() {
                report.notes.push(n);
            }
            report.first_logical_lsn = first_logical;
            pool.set_log(log.clone());
            // The recovered pages go to disk now; the checkpoint moves
            // below, through make_checkpoint like every other, so it stops
            // at the first engine frame the caller has still to replay.
            pool.flush_all()?;
            pool.set_recovering(false);
            log
        };
        let shared = Arc::new(Shared {
            cfg,
            vfs: vfs.clone(),
            pool,
            log,
            stats,
            poison,
            index_latches: Mutex::new(HashMap::new()),
            cleaner: cleaner::Signal::default(),
            shutdown: AtomicBool::new(false),
            pins: Mutex::new(std::collections::BTreeMap::new()),
            checkpoint_lock: Mutex::new(()),
            file_pages: AtomicU64::new(0),
            grow_lock: Mutex::new(()),
            replaying: AtomicBool::new(report.first_logical_lsn.is_some()),
        });
        // Engine frames found by recovery are replayed by the caller after
        // this returns: one pin at the first of them holds the checkpoint
        // until `finish_recovery` (invariant 7).
        let recovery_pin = report.first_logical_lsn.map(|lsn| {
            *shared.pins.lock().entry(lsn).or_insert(0) += 1;
            CheckpointPin {
                shared: shared.clone(),
                lsn,
            }
        });
        if create {
            bootstrap(&shared)?;
            vfs.sync_dir(&datadir)?;
            // Everything is durable: the directory is finished.
            vfs.remove_file(&marker)?;
            vfs.sync_dir(&datadir)?;
        } else {
            shared.make_checkpoint()?;
            let g = shared.pool.read(PageId::new(0, 0)).map_err(|e| {
                StorageError::BadDatadir(format!(
                    "{}: cannot read the tablespace header ({e}); if initialisation of this data directory was interrupted, remove it and start again",
                    data_path.display()
                ))
            })?;
            let h = space::read_header(g.bytes()).ok_or_else(|| {
                StorageError::BadDatadir(format!(
                    "{}: page 0 is not a tablespace header",
                    data_path.display()
                ))
            })?;
            if h.page_size as usize != ps {
                return Err(StorageError::Config(format!(
                    "innodb_page_size={ps} but {} was created with innodb_page_size={}",
                    data_path.display(),
                    h.page_size
                )));
            }
            shared.pool.note_hwm(h.hwm);
        }
        report.duration = t0.elapsed();
        // On a simulated machine the cleaner waits while the caller replays
        // and runs its rounds at the replay's recovery points instead
        // (`recovery_step`), so one seed gives one interleaving.
        let stepped = recovery_pin.is_some() && vfs.steps_background();
        if stepped {
            shared.cleaner.paused.store(true, Ordering::Release);
        }
        let handle = cleaner::start(shared.clone());
        Ok(Store {
            shared,
            cleaner: Mutex::new(Some(handle)),
            report,
            recovery_pin: Mutex::new(recovery_pin),
            stepped_recovery: AtomicBool::new(stepped),
        })
    }

    /// A point of the caller's replay of the engine frames where the
    /// background work may run. On a real machine the page cleaner runs
    /// in its thread whenever it likes and this does nothing; on one that
    /// steps background work (SimFs) it is one cleaner round here: a batch
    /// of the oldest dirty pages written and a checkpoint attempt, exactly
    /// what the thread could do at that moment of a real recovery.
    pub fn recovery_step(&self) -> Result<()> {
        if !self.stepped_recovery.load(Ordering::Acquire) {
            return Ok(());
        }
        let sh = &self.shared;
        sh.pool.flush_batch(4, Lsn::MAX)?;
        sh.make_checkpoint()
    }

    /// Makes sure the system tablespace file has room for `pages` more
    /// pages (plus a margin) past its high-water mark, reserving blocks on
    /// the device (fallocate) when it does not. Called before a commit
    /// makes its first durable step, so that a full disk is an error the
    /// client sees (`StorageError::Full`, nothing written, nothing
    /// poisoned) and the next commit after space is freed simply works;
    /// other I/O errors poison as usual. One atomic comparison when there
    /// is room.
    pub fn reserve_pages(&self, pages: u64) -> Result<()> {
        const MARGIN_PAGES: u64 = 64;
        let sh = &self.shared;
        let need = sh.pool.hwm_pages() as u64 + pages + MARGIN_PAGES;
        if sh.file_pages.load(Ordering::Acquire) >= need {
            return Ok(());
        }
        let _one = sh.grow_lock.lock();
        sh.poison.check()?;
        let ps = sh.pool.page_size() as u64;
        let sf = sh.pool.space_file(0)?;
        let have = sh.poison.guard(sf.file.len())? / ps;
        if have >= need {
            sh.file_pages.fetch_max(have, Ordering::AcqRel);
            return Ok(());
        }
        // Grow in steps as allocation does (1/8 of the size, 64..4096
        // pages), at least to what is needed.
        let target = need.max(have + (have / 8).clamp(64, 4096));
        match sf.file.allocate(target * ps) {
            Ok(()) => {
                sh.file_pages.fetch_max(target, Ordering::AcqRel);
                Ok(())
            }
            Err(e) if e.is_no_space() => Err(StorageError::Full(format!(
                "no space left to grow {} to {} pages: {e}",
                sf.path.display(),
                target
            ))),
            Err(e) => {
                sh.poison.set(&e.to_string());
                Err(e.into())
            }
        }
    }

    /// The caller's replay has finished (and applied) every engine frame
    /// before `next` (the start LSN of the next one to replay; `None`:
    /// all of them). When the checkpoint age has passed the async point,
    /// writes every page, so that those frames' effects are durable, and
    /// moves the recovery pin up to `next`: the checkpoint may then pass
    /// them (invariant 7), and a long replay cannot fill the redo log
    /// while its checkpoint is held at the first frame.
    pub fn recovery_progress(&self, next: Option<Lsn>) -> Result<()> {
        let sh = &self.shared;
        if sh.checkpoint_age() < sh.async_point() {
            return Ok(());
        }
        let mut pin = self.recovery_pin.lock();
        let Some(old) = pin.as_ref().map(|p| p.lsn) else {
            return Ok(());
        };
        if next.is_some_and(|n| n <= old) {
            return Ok(());
        }
        sh.pool.flush_all()?;
        *pin = next.map(|lsn| {
            *sh.pins.lock().entry(lsn).or_insert(0) += 1;
            CheckpointPin {
                shared: sh.clone(),
                lsn,
            }
        });
        drop(pin);
        sh.make_checkpoint()
    }

    /// Ends recovery: the caller has replayed every engine frame the open
    /// handed it. Releases the pin that held the checkpoint at the first
    /// of them, writes every page and checkpoints at the end of the log;
    /// from here on the frames before it are never read again.
    ///
    /// A log whose files have another size than `innodb_redo_log_capacity`
    /// is resized here, with nothing after the checkpoint left to copy;
    /// the line for the error log is returned.
    pub fn finish_recovery(&self) -> Result<Option<String>> {
        drop(self.recovery_pin.lock().take());
        self.shared.replaying.store(false, Ordering::Release);
        self.checkpoint()?;
        if self.stepped_recovery.swap(false, Ordering::AcqRel) {
            self.shared.cleaner.paused.store(false, Ordering::Release);
        }
        let wanted = self.shared.cfg.innodb_redo_log_capacity;
        Ok(self.resize_redo(wanted)?.map(|r| {
            format!(
                "resized the redo log from {} to {} bytes (innodb_redo_log_capacity = {wanted})",
                r.from_bytes, r.to_bytes
            )
        }))
    }

    /// `SET GLOBAL innodb_redo_log_capacity` (redo/resize.rs): when the
    /// log after the checkpoint would fill much of the new size, every
    /// dirty page is written first so that the checkpoint comes near the
    /// end of the log. None when the size does not change.
    ///
    /// Under heavy writes the log may grow past half the new size while
    /// the new files are built; the resize then gives up, the old log
    /// goes on, and this tries again after another checkpoint (three
    /// times in all) before the error reaches the caller.
    pub fn resize_redo(&self, capacity_bytes: u64) -> Result<Option<crate::redo::Resized>> {
        const TRIES: usize = 3;
        let log = &self.shared.log;
        let mut tries = 0;
        loop {
            if self.shared.checkpoint_age() > capacity_bytes / 8 {
                self.checkpoint()?;
            }
            tries += 1;
            match log.resize(capacity_bytes) {
                Err(StorageError::Config(_)) if tries < TRIES => continue,
                other => return other,
            }
        }
    }

    pub fn report(&self) -> &RecoveryReport {
        &self.report
    }
    pub fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }
    pub fn stats(&self) -> &Arc<Stats> {
        &self.shared.stats
    }
    pub fn log(&self) -> &Arc<RedoLog> {
        &self.shared.log
    }
    pub fn datadir(&self) -> &Path {
        &self.shared.cfg.datadir
    }

    /// The index directory: name -> root page.
    fn directory(&self) -> Tree {
        Tree::new(self.shared.clone(), 0, space::DIR_ROOT_PAGE)
    }

    /// Opens a named index.
    pub fn index(&self, name: &str) -> Result<Option<Tree>> {
        match self.directory().get(name.as_bytes())? {
            None => Ok(None),
            Some(v) => {
                let root = u32::from_le_bytes(v.as_slice().try_into().map_err(|_| {
                    StorageError::BadDatadir(format!("index directory entry '{name}' is malformed"))
                })?);
                Ok(Some(Tree::new(self.shared.clone(), 0, root)))
            }
        }
    }

    /// Creates a named index (one mini-transaction: root page and directory
    /// entry together). Returns the existing one if it is there.
    pub fn create_index(&self, name: &str) -> Result<Tree> {
        if let Some(t) = self.index(name)? {
            return Ok(t);
        }
        self.shared.before_write()?;
        let dir = self.directory();
        let dir_latch = self.shared.index_latch(0, space::DIR_ROOT_PAGE);
        let _x = dir_latch.write();
        if let Some(v) = dir.get_unlatched(name.as_bytes())? {
            let root = u32::from_le_bytes(v.as_slice().try_into().unwrap_or([0; 4]));
            return Ok(Tree::new(self.shared.clone(), 0, root));
        }
        let mut mtr = Mtr::new(&self.shared.pool);
        let (root, rs) = space::allocate(&mut mtr, 0)?;
        mtr.init_node(rs, 0, root);
        dir.put_in(&mut mtr, name.as_bytes(), &root.to_le_bytes())?;
        mtr.commit(&self.shared.log)?;
        Ok(Tree::new(self.shared.clone(), 0, root))
    }

    /// Drops a named index and frees its pages. Crash-safe step by step:
    /// the tree is emptied by ordinary deletes (each one mini-transaction,
    /// freeing emptied pages, the tree valid after each), then one last
    /// mini-transaction frees the root and removes the directory entry. A
    /// crash in the middle leaves a smaller but valid tree, still in the
    /// directory, that a later drop finishes.
    pub fn drop_index(&self, name: &str) -> Result<bool> {
        let Some(tree) = self.index(name)? else {
            return Ok(false);
        };
        loop {
            let batch: Vec<Vec<u8>> = tree
                .range(
                    std::ops::Bound::Unbounded,
                    std::ops::Bound::Unbounded,
                    false,
                )
                .take(512)
                .map(|e| e.map(|(k, _)| k))
                .collect::<Result<_>>()?;
            if batch.is_empty() {
                break;
            }
            for k in batch {
                tree.delete(&k)?;
            }
        }
        self.shared.before_write()?;
        let dir = self.directory();
        let dir_latch = self.shared.index_latch(0, space::DIR_ROOT_PAGE);
        let _x = dir_latch.write();
        let root_latch = self.shared.index_latch(0, tree.root());
        let _r = root_latch.write();
        let mut mtr = Mtr::new(&self.shared.pool);
        dir.delete_in(&mut mtr, name.as_bytes())?;
        space::free(&mut mtr, 0, tree.root())?;
        mtr.commit(&self.shared.log)?;
        Ok(true)
    }

    /// Every (name, root) in the directory.
    pub fn indexes(&self) -> Result<Vec<(String, u32)>> {
        let mut out = Vec::new();
        for e in self.directory().scan_all()? {
            let (k, v) = e;
            if crate::bulk::is_reservation_key(&k) {
                continue;
            }
            let root = u32::from_le_bytes(v.as_slice().try_into().map_err(|_| {
                StorageError::BadDatadir("index directory entry is malformed".into())
            })?);
            out.push((String::from_utf8_lossy(&k).into_owned(), root));
        }
        Ok(out)
    }

    /// Flushes every dirty page and checkpoints at the end of the log.
    pub fn checkpoint(&self) -> Result<()> {
        self.shared.pool.flush_all()?;
        self.shared.make_checkpoint()
    }

    /// Appends an engine frame (opaque to storage) as one atomic redo frame
    /// and pins the checkpoint at its start until the returned pin is
    /// dropped: the caller applies the frame's effects to the trees while
    /// holding the pin, so a checkpoint can never fall between the frame and
    /// the page changes it stands for. `under_lock` runs under the redo
    /// append lock with the frame's (start, end) LSNs: frames appended from
    /// several threads reach the log in the order `under_lock` observes.
    pub fn append_logical(
        &self,
        payload: &[u8],
        under_lock: impl FnOnce(Lsn, Lsn),
    ) -> Result<(Lsn, CheckpointPin)> {
        self.shared.poison.check()?;
        let mut frame = Vec::with_capacity(payload.len() + 1);
        frame.push(mtr::FRAME_LOGICAL);
        frame.extend_from_slice(payload);
        let shared = &self.shared;
        let (start, end) = shared.log.append(&frame, |start, end| {
            *shared.pins.lock().entry(start).or_insert(0) += 1;
            under_lock(start, end);
        })?;
        Ok((
            end,
            CheckpointPin {
                shared: self.shared.clone(),
                lsn: start,
            },
        ))
    }

    /// Makes redo durable up to the current LSN (what a commit does).
    pub fn sync_log(&self) -> Result<()> {
        let lsn = self.shared.log.lsn();
        self.shared.log.flush_to(lsn)
    }

    /// Counters with MySQL names, plus LSN figures.
    pub fn status(&self) -> Vec<(String, u64)> {
        let s = &self.shared;
        let mut v: Vec<(String, u64)> = s
            .stats
            .snapshot()
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect();
        v.push((
            "Innodb_buffer_pool_pages_dirty".into(),
            s.pool.dirty_pages() as u64,
        ));
        v.push((
            "Innodb_buffer_pool_pages_total".into(),
            s.pool.frame_count() as u64,
        ));
        v.push(("Innodb_lsn_current".into(), s.log.lsn()));
        v.push(("Innodb_lsn_flushed".into(), s.log.flushed_lsn()));
        v.push(("Innodb_lsn_last_checkpoint".into(), s.log.checkpoint_lsn()));
        v.push(("Innodb_checkpoint_age".into(), s.checkpoint_age()));
        v
    }

    /// Stops the cleaner; with `clean`, flushes everything and checkpoints
    /// (a clean shutdown); without, leaves the files as a crash would.
    pub fn close(&self, clean: bool) -> Result<()> {
        self.shared.shutdown.store(true, Ordering::Release);
        self.shared.cleaner.wake();
        if let Some(h) = self.cleaner.lock().take() {
            let _ = h.join();
        }
        if clean {
            self.checkpoint()?;
        }
        Ok(())
    }
}

impl Drop for Store {
    fn drop(&mut self) {
        self.shared.shutdown.store(true, Ordering::Release);
        self.shared.cleaner.wake();
        if let Some(h) = self.cleaner.lock().take() {
            let _ = h.join();
        }
    }
}

/// Formats a new system space: header page, empty index directory.
/// Removes what an unfinished initialisation created (the system
/// tablespace and the redo files; leftover doublewrite files are reset by
/// the creation itself), keeping the marker.
fn remove_unfinished(vfs: &Arc<dyn Vfs>, data_path: &Path, redo_dir: &Path) -> Result<()> {
    if vfs.exists(data_path)? {
        vfs.remove_file(data_path)?;
    }
    if vfs.is_dir(redo_dir)? {
        for name in vfs.list_dir(redo_dir)? {
            vfs.remove_file(&redo_dir.join(name))?;
        }
        vfs.sync_dir(redo_dir)?;
    }
    if let Some(dir) = data_path.parent() {
        vfs.sync_dir(dir)?;
    }
    Ok(())
}

fn bootstrap(shared: &Arc<Shared>) -> Result<()> {
    let ps = shared.pool.page_size() as u32;
    let mut mtr = Mtr::new(&shared.pool);
    let hs = space::format(&mut mtr, 0, ps, INITIAL_SPACE_PAGES)?;
    let _ = hs;
    let (root, rs) = space::allocate(&mut mtr, 0)?;
    assert_eq!(
        root,
        space::DIR_ROOT_PAGE,
        "first allocation of a new space"
    );
    mtr.init_node(rs, 0, root);
    let hs = mtr.latch(PageId::new(0, 0))?;
    mtr.write_u32(hs, space::OFF_DIR_ROOT, root);
    mtr.commit(&shared.log)?;
    shared.pool.flush_all()?;
    shared.make_checkpoint()?;
    Ok(())
}

/// Step 1 of recovery. Returns how many torn pages were restored.
fn restore_from_doublewrite(pool: &BufferPool, d: &Doublewrite, cfg: &Config) -> Result<u64> {
    let contents = d.recover()?;
    let ps = pool.page_size();
    let mut restored = 0;
    let mut torn: Vec<String> = Vec::new();
    let mut buf = quire_io::AlignedBuf::new(ps, pool_alignment(pool));
    let mut ids: Vec<&PageId> = contents.copies.keys().collect();
    ids.sort();
    for id in ids {
        let copy = &contents.copies[id];
        let sf = pool.space_file(id.space)?;
        let state = match sf.file.read_at(&mut buf, id.page_no as u64 * ps as u64) {
            Ok(()) => page::verify(&buf, *id),
            Err(quire_io::IoError::ShortRead { .. }) => PageCheck::Zero,
            Err(e) => return Err(e.into()),
        };
        match state {
            PageCheck::Valid => {}
            PageCheck::Zero => {
                buf.copy_from_slice(copy);
                pool.poison
                    .guard(sf.file.write_at(&buf, id.page_no as u64 * ps as u64))?;
            }
            PageCheck::Bad(_) => {
                buf.copy_from_slice(copy);
                pool.poison
                    .guard(sf.file.write_at(&buf, id.page_no as u64 * ps as u64))?;
                restored += 1;
            }
        }
    }
    for e in &contents.detect_only {
        let sf = pool.space_file(e.id.space)?;
        let state = match sf.file.read_at(&mut buf, e.id.page_no as u64 * ps as u64) {
            Ok(()) => page::verify(&buf, e.id),
            Err(quire_io::IoError::ShortRead { .. }) => PageCheck::Zero,
            Err(err) => return Err(err.into()),
        };
        if let PageCheck::Bad(why) = state {
            Stats::inc(&pool.stats.quire_torn_pages_detected);
            torn.push(format!("{} in {} ({why})", e.id, sf.path.display()));
        }
    }
    if !torn.is_empty() {
        return Err(StorageError::Recovery(format!(
            "torn page(s) detected by the doublewrite buffer: {}; innodb_doublewrite={} keeps no page copies, so they cannot be repaired: restore the data directory from a backup",
            torn.join(", "),
            cfg.innodb_doublewrite.name()
        )));
    }
    if restored > 0 || !contents.copies.is_empty() {
        let spaces: Vec<u32> = {
            let mut v: Vec<u32> = contents.copies.keys().map(|id| id.space).collect();
            v.sort_unstable();
            v.dedup();
            v
        };
        for s in spaces {
            let sf = pool.space_file(s)?;
            pool.poison.guard(sf.file.sync())?;
        }
    }
    Ok(restored)
}

fn pool_alignment(pool: &BufferPool) -> usize {
    let _ = pool;
    4096
}

/// Step 2 of recovery, for one redo frame. Returns pages changed.
fn apply_frame(
    pool: &BufferPool,
    cfg: &Config,
    stats: &Stats,
    start: Lsn,
    end: Lsn,
    payload: &[u8],
) -> Result<u64> {
    let records = mtr::decode(payload, start, pool.page_size())?;
    debug_assert!(!records.is_empty(), "an mtr frame without records");
    // Per page: apply this frame or not, decided on the page's LSN before
    // the frame's first record touches it.
    let mut touched: Vec<(PageId, crate::buf::PageMut<'_>, bool)> = Vec::new();
    for (id, rec) in &records {
        let idx = match touched.iter().position(|t| t.0 == *id) {
            Some(i) => i,
            None => {
                let g = pool.write(*id).map_err(|e| match e {
                    StorageError::CorruptPage { .. } => {
                        Stats::inc(&stats.quire_torn_pages_detected);
                        StorageError::Recovery(format!(
                            "{e}; redo at LSN {start} needs this page and innodb_doublewrite={} could not restore it: restore the data directory from a backup",
                            cfg.innodb_doublewrite.name()
                        ))
                    }
                    other => other,
                })?;
                let apply = page::page_lsn(g.bytes()) < end;
                touched.push((*id, g, apply));
                touched.len() - 1
            }
        };
        let (_, g, apply) = &mut touched[idx];
        if *apply {
            mtr::apply(g.bytes_mut(), *id, rec, start)?;
        }
    }
    let mut n = 0;
    for (_, mut g, apply) in touched {
        if apply {
            page::set_page_lsn(g.bytes_mut(), end);
            pool.note_modified(g.frame(), start);
            n += 1;
        }
    }
    Ok(n)
}

/// Where the doublewrite files of a configuration live (for messages).
pub fn doublewrite_dir(cfg: &Config) -> PathBuf {
    cfg.doublewrite_dir().to_path_buf()
}

#[cfg(test)]
#[path = "store_tests.rs"]
mod tests;
