//! # The redo log
//!
//! Every change to a page happens inside a mini-transaction (mtr, see
//! `mtr`), and every mtr describes its change as a *redo payload* before
//! the change may reach the data files. This module stores those payloads,
//! in order, durably and cheaply:
//!
//! * **Write-ahead logging.** A dirty page may be written in place only
//!   after the redo up to its page LSN is durable (the buffer pool enforces
//!   this with [`RedoLog::flush_to`]). After a crash, recovery replays the
//!   redo from the last checkpoint, so every change whose redo was durable
//!   is redone, and nothing else is.
//! * **Sequential, grouped I/O.** Many threads append; one write and one
//!   fsync serve all of them (group flush). A commit costs a share of one
//!   fsync instead of a random page write.
//! * **Bounded space.** The log is a fixed set of files reused in a circle.
//!   Space behind the checkpoint (all pages with older changes are on disk)
//!   is free to be overwritten.
//!
//! The log does not interpret payloads; it hands them back, in order, to the
//! `apply` callback of [`RedoLog::open`].
//!
//! ## LSN
//!
//! An LSN ([`Lsn`]) counts redo *payload* bytes: the bytes of the frame
//! stream, not the block headers. A new log starts at [`START_LSN`] (16
//! blocks' worth). Block `b` holds the stream bytes
//! `[b * PAYLOAD, (b + 1) * PAYLOAD)`, so the block number is a pure
//! function of the LSN, and so is the block's place in the circle.
//!
//! ## Files
//!
//! `innodb_redo_log_capacity` is split over [`N_FILES`] = 32 files
//! `#innodb_redo/#ib_redo0 .. #ib_redo31` (as in MySQL 8.0.30+; a new
//! capacity moves the log to new files, online: `resize.rs`):
//!
//! ```text
//!  #ib_redoK:
//!  +---------+---------+---------+---------+----pad----+----------------------------+
//!  | header  | ckpt    | unused  | ckpt    | (zeros up | data area: blocks_per_file |
//!  | block 0 | slot 0  |         | slot 1  |  to wa)   | log blocks of 512 bytes    |
//!  +---------+---------+---------+---------+-----------+----------------------------+
//!  0         512       1024      1536      2048        data_start                   file end
//!            \___ slots only used in file 0 ___/
//!
//!  data_start = 2048 rounded up to innodb_log_write_ahead_size
//!  data area  = floor((capacity/32 - data_start) / write_ahead) * write_ahead
//!
//!  circle:   file 0 data | file 1 data | ... | file 31 data | (back to file 0)
//!  block b at circle offset (b mod blocks_in_circle) * 512
//! ```
//!
//! The data area starts at a write-ahead boundary (not right after the
//! 2048-byte header) so that every write-ahead unit of the data area is
//! aligned in the file, which is what lets padded writes avoid a
//! read-on-write of a partially covered page.
//!
//! ## Block format
//!
//! ```text
//!   0   8  block_no  = lsn / PAYLOAD of the payload it holds
//!   8   4  epoch     incarnation of the log that wrote it (see below)
//!  12   2  data_len  payload bytes used, 0..=484
//!  14   2  reserved  0
//!  16   8  sync_lsn  LSN known durable when this block was written
//!  24 484  payload   a slice of the frame stream
//! 508   4  crc32c of bytes [0, 508)
//! ```
//!
//! A block is 512 bytes because a 512-byte aligned sector write is atomic
//! (media assumption 1 in `quire_io`): a block on disk is either an old
//! version or a new one, never a mix. The last block of a write is usually
//! partial; the next write rewrites it with more data.
//!
//! ## Frames
//!
//! Each [`RedoLog::append`] adds one frame, `[u32 len][u32 crc32c(payload)]
//! [payload]`, to the stream, atomically: no other frame interleaves, and
//! [`RedoLog::lsn`] never points inside a frame. A frame is complete or
//! absent after recovery; a frame cut short by a crash (its tail never
//! reached the disk) ends the log and is dropped.
//!
//! ## Checkpoints
//!
//! Two slots in file 0 hold `(checkpoint_no, checkpoint_lsn, epoch)`;
//! checkpoint `n` goes to slot `n mod 2`, so a torn slot write leaves the
//! previous checkpoint intact in the other slot. Recovery takes the valid
//! slot with the highest number and scans from its LSN.
//!
//! ## Epochs (why stale blocks never replay)
//!
//! After a crash the disk may hold blocks *beyond* the recovered end that
//! belong to the dead incarnation: written but never synced, or the rest
//! of a torn frame. The new incarnation continues at the recovered end and
//! rewrites those block numbers, but if it crashes halfway, a mix of its
//! blocks and the old ones could look like a continuous log. To tell them
//! apart, each incarnation gets a new epoch, made durable in a checkpoint
//! before it writes any block; a scan stops at a block whose epoch is
//! lower than the previous block's. Recovery also rewrites the block
//! holding the recovered end, truncated to the end and stamped with the new
//! epoch (and syncs it), so a stale torn-frame tail inside that block can
//! never be glued to the new incarnation's next block.
//!
//! ## Recovery ([`RedoLog::open`])
//!
//! ```text
//!  1. newest valid checkpoint slot          -> checkpoint_lsn C, epoch
//!  2. scan blocks from block(C): valid = good crc, expected block_no,
//!     epoch >= previous block's; data_len < 484 or an invalid block ends
//!     the intact data at D; frames are parsed and applied up to the last
//!     complete one, E (<= D); a bad frame crc inside intact blocks is
//!     CorruptLog
//!  3. read the rest of the circle: a block of this lap with epoch >= the
//!     last valid one and sync_lsn > D proves synced redo was lost -> CorruptLog
//!  4. sync every redo file (a process crash leaves the log in the page cache)
//!  5. new epoch = max(checkpoint epoch, any block's epoch) + 1, written in
//!     the next checkpoint slot and synced
//!  6. rewrite block(E) truncated at E with the new epoch, sync
//!  7. ready to append at E
//! ```
//!
//! A crash anywhere in 4-6 leaves a state that recovers to the same E.
//! The sweep after E reads a bounded window (`scan::SWEEP_BLOCKS`, 4 MiB),
//! not the whole circle: enough to tell a torn tail (harmless) from media
//! damage before synced redo (corruption), without reading all of
//! `innodb_redo_log_capacity` at every start.
//!
//! ## Writing: buffer, group write, group flush
//!
//! ```text
//!   append (many threads)          write_to / flush_to
//!   ---------------------          -------------------
//!   lock buf                       lock writer (one writer at a time)
//!   copy frame into pre-formatted    lock buf: swap the active half with the
//!     blocks of the active half        spare, carry the partial last block
//!   lsn += frame                     unlock buf
//!   under_lock(start, end)         stamp headers (block_no, epoch, data_len,
//!   unlock                           sync_lsn, crc), pad with zero blocks to
//!                                    the next write-ahead boundary, write
//!                                  (flush_to only:) take dirty-file set,
//!                                    unlock writer, fsync those files
//! ```
//!
//! The log buffer (`innodb_log_buffer_size`) is two halves: appenders fill
//! one while the writer writes the other, so appends never wait for I/O
//! unless a whole half fills up (then they write it themselves and count
//! `Innodb_log_waits`). A frame larger than the free space is copied in
//! pieces, writing out in between, while other appenders wait for it to
//! finish (so frames never interleave).
//!
//! [`RedoLog::flush_to`] is a leader/follower group flush:
//!
//! ```text
//!   T1 flush_to(100) --> leader: write all appended (up to 180), fsync ----> flushed = 180
//!   T2 flush_to(150) --> follower: wait .................................. wake, 150 <= 180: done
//!   T3 flush_to(170) --> follower: wait .................................. wake, done
//!   T4 flush_to(220) --> (arrives during the fsync) wait ... wake, 220 > 180: next leader
//! ```
//!
//! ## Invariants
//!
//! 1. `checkpoint_lsn <= flushed_lsn <= written_lsn <= lsn()`; each only
//!    grows.
//! 2. A block on disk with block number `b` lies at circle slot
//!    `b mod blocks_in_circle`, and its epoch is that of the incarnation
//!    that wrote it; within one incarnation, successive versions of a block
//!    only add data (a prefix is never changed).
//! 3. No write (data or padding) touches a block that holds LSNs at or
//!    after the checkpoint of the previous lap: the highest LSN a write
//!    covers is `< checkpoint_lsn + capacity_lsn()`. A write that would
//!    break this fails with `Poisoned("redo log full ...")` instead.
//! 4. `sync_lsn` in a block is at most the durable LSN when the block was
//!    written, so after any crash it is `<=` the end of the intact log.
//!    Recovery uses this to detect lost synced redo: a later block whose
//!    `sync_lsn` exceeds the end of the intact log is corruption
//!    ([`StorageError::CorruptLog`]), not a torn tail.
//! 5. Errors are sticky: after a failed write or sync (or a full log),
//!    every later append, write, flush and checkpoint returns
//!    [`StorageError::Poisoned`], and no waiter is ever told that data was
//!    flushed when it was not.
//! 6. A checkpoint LSN must be a frame boundary at or below `flushed_lsn`
//!    (the caller's duty: the oldest modification of a dirty page, or
//!    `lsn()`, both frame boundaries).

mod format;
mod resize;
mod scan;
#[cfg(test)]
mod tests;

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::{Condvar, Mutex, MutexGuard, RwLock};
use quire_io::{AlignedBuf, File, FileKind, IoError, OpenOptions, Vfs};

use crate::error::{Result, StorageError};
use crate::page::{put_u32, Lsn};
use crate::stats::Stats;

use format::{
    block_crc_ok, payload, BlockHeader, CheckpointRecord, FileHeader, Geometry, OFF_PAYLOAD,
};
pub use format::{BLOCK_BYTES, N_FILES, PAYLOAD};
pub use resize::{settle as settle_resize, Resized, REDO_OLD_DIR, REDO_TMP_DIR};
pub use scan::FRAME_HEADER_BYTES;

/// The LSN a new log starts at.
pub const START_LSN: Lsn = 16 * PAYLOAD as u64;

/// Name of the redo directory inside the data directory.
pub const REDO_DIR: &str = "#innodb_redo";

/// Smallest accepted `innodb_log_buffer_size` (the buffer is two halves of
/// at least 4 blocks each). MySQL's own minimum (256 KiB) is enforced by the
/// configuration layer; tests use tiny buffers to force waits.
pub const MIN_LOG_BUFFER_BYTES: u64 = 4096;

const PAYLOAD_U64: u64 = PAYLOAD as u64;
const BLOCK_U64: u64 = BLOCK_BYTES as u64;
/// Alignment of the I/O buffers (enough for any O_DIRECT device).
const BUF_ALIGN_BYTES: usize = 4096;

/// The callback [`RedoLog::open`] feeds each recovered frame to:
/// `apply(start_lsn, end_lsn, payload)`, in LSN order.
pub type ApplyFn<'a> = dyn FnMut(Lsn, Lsn, &[u8]) -> Result<()> + 'a;

/// File name of redo file `index`.
pub fn file_name(index: u32) -> String {
    format!("#ib_redo{index}")
}

/// Sizing of the log (the MySQL variables of the same names).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RedoConfig {
    /// `innodb_redo_log_capacity`: total size of the redo files.
    pub capacity_bytes: u64,
    /// `innodb_log_buffer_size`.
    pub log_buffer_bytes: u64,
    /// `innodb_log_write_ahead_size`: writes are padded to this.
    pub write_ahead_bytes: u32,
}

impl RedoConfig {
    fn validate(&self) -> Result<()> {
        format::check_write_ahead(self.write_ahead_bytes)?;
        if self.log_buffer_bytes < MIN_LOG_BUFFER_BYTES {
            return Err(StorageError::Config(format!(
                "innodb_log_buffer_size = {}: must be at least {MIN_LOG_BUFFER_BYTES}",
                self.log_buffer_bytes
            )));
        }
        Ok(())
    }
}

/// What [`RedoLog::open`] recovered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecoveredLog {
    /// The checkpoint the scan started from.
    pub checkpoint_lsn: Lsn,
    /// End of the last complete frame: where the log continues.
    pub end_lsn: Lsn,
    /// Frames handed to `apply`.
    pub mtrs: u64,
    /// Payload bytes handed to `apply` (frame headers excluded).
    pub payload_bytes: u64,
    /// Bytes of a torn frame dropped at the end (`end of intact blocks -
    /// end_lsn`).
    pub torn_tail_bytes: u64,
    /// Epoch of the new incarnation.
    pub epoch: u32,
    /// Set when something deserves a line in the error log, e.g. the files
    /// on disk have a different size than `innodb_redo_log_capacity`.
    pub note: Option<String>,
}

/// The pre-formatted blocks appenders copy into (the active half).
struct LogBuffer {
    /// `data_blocks + write-ahead blocks` blocks; block `i` is block number
    /// `first_block_no + i`. The tail beyond `data_blocks` is room for
    /// write-ahead padding when this buffer is written.
    blocks: AlignedBuf,
    /// Block number of `blocks[0]`: the block holding `written_lsn`.
    first_block_no: u64,
    /// End of every byte copied in, including a frame still being copied
    /// in pieces (`RedoLog::lsn` excludes that one).
    end_lsn: Lsn,
    /// Blocks of this half that may hold data.
    data_blocks: u64,
    /// A frame is being copied in pieces; other appenders wait.
    frame_in_progress: bool,
}

impl LogBuffer {
    /// Payload bytes that can still be appended to this half.
    fn free_bytes(&self) -> u64 {
        self.data_blocks * PAYLOAD_U64 - (self.end_lsn - self.first_block_no * PAYLOAD_U64)
    }

    /// Copies `bytes` into the payload areas at `end_lsn`.
    fn copy_in(&mut self, bytes: &[u8]) {
        debug_assert!(bytes.len() as u64 <= self.free_bytes());
        let mut rest = bytes;
        while !rest.is_empty() {
            let rel = self.end_lsn - self.first_block_no * PAYLOAD_U64;
            let (idx, off) = ((rel / PAYLOAD_U64) as usize, (rel % PAYLOAD_U64) as usize);
            let n = (PAYLOAD - off).min(rest.len());
            let dst = idx * BLOCK_BYTES + OFF_PAYLOAD + off;
            self.blocks[dst..dst + n].copy_from_slice(&rest[..n]);
            rest = &rest[n..];
            self.end_lsn += n as u64;
        }
    }
}

/// State owned by the one thread writing at a time.
struct Writer {
    /// The other half of the log buffer: the one being written, or free.
    spare: AlignedBuf,
    /// Files written since the last flush leader took this set (bit i =
    /// file i).
    dirty_files: u64,
}

struct FlushState {
    /// A flush leader is writing and syncing right now.
    leader_active: bool,
}

/// The redo files in use and how blocks map onto them.
struct Circle {
    geo: Geometry,
    files: Vec<Arc<dyn File>>,
}

/// The redo log. Shared via `Arc`; every method takes `&self`.
///
/// Dropping it writes nothing: what was appended but not flushed is lost,
/// as in a crash. A clean shutdown calls `flush_to(lsn())` (and usually a
/// final checkpoint) first.
pub struct RedoLog {
    vfs: Arc<dyn Vfs>,
    dir: PathBuf,
    /// The files and their geometry; replaced only by [`RedoLog::resize`],
    /// which holds the writer and checkpoint locks while it does, so a
    /// holder of either reads a stable circle.
    circle: RwLock<Arc<Circle>>,
    /// `circle.geo.capacity_lsn()` and `total_bytes()`, readable without
    /// the lock (every append checks the frame limit).
    capacity_lsn_now: AtomicU64,
    capacity_bytes_now: AtomicU64,
    stats: Arc<Stats>,
    write_ahead_bytes: u64,
    /// Epoch of this incarnation, stamped on every block it writes.
    epoch: u32,

    buf: Mutex<LogBuffer>,
    /// Signalled when a frame copied in pieces is complete.
    frame_done: Condvar,
    writer: Mutex<Writer>,
    flush: Mutex<FlushState>,
    /// Signalled when a flush leader finishes (successfully or not).
    flush_done: Condvar,
    /// The newest checkpoint on disk; its lock serialises checkpoints.
    ckpt: Mutex<CheckpointRecord>,

    /// End of all bytes in the buffer (may be inside a frame).
    appended_lsn: AtomicU64,
    /// End of all complete frames.
    lsn: AtomicU64,
    written_lsn: AtomicU64,
    flushed_lsn: AtomicU64,
    checkpoint_lsn: AtomicU64,

    poisoned: AtomicBool,
    poison_msg: Mutex<Option<String>>,
}

impl fmt::Debug for RedoLog {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedoLog")
            .field("dir", &self.dir)
            .field("epoch", &self.epoch)
            .field("lsn", &self.lsn())
            .field("written_lsn", &self.written_lsn())
            .field("flushed_lsn", &self.flushed_lsn())
            .field("checkpoint_lsn", &self.checkpoint_lsn())
            .field("capacity_lsn", &self.capacity_lsn())
            .field("poisoned", &self.poisoned.load(Ordering::Relaxed))
            .finish()
    }
}

impl RedoLog {
    /// New data directory: creates `#innodb_redo` and the files, writes
    /// their headers and a first checkpoint at [`START_LSN`] (epoch 1), and
    /// syncs the files and the directories. Fails if a redo file exists.
    pub fn create(
        vfs: Arc<dyn Vfs>,
        datadir: &Path,
        cfg: &RedoConfig,
        stats: Arc<Stats>,
    ) -> Result<Arc<RedoLog>> {
        cfg.validate()?;
        let geo = Geometry::for_capacity(cfg.capacity_bytes, cfg.write_ahead_bytes)?;
        let dir = datadir.join(REDO_DIR);
        let ckpt = CheckpointRecord {
            checkpoint_no: 1,
            checkpoint_lsn: START_LSN,
            epoch: 1,
        };
        let files = resize::make_files(vfs.as_ref(), &dir, &geo, cfg.write_ahead_bytes, &stats)?;
        write_checkpoint(files[0].as_ref(), &ckpt, &stats)?;
        vfs.sync_dir(datadir)?;
        Ok(RedoLog::assemble(
            vfs,
            dir,
            geo,
            files,
            stats,
            cfg,
            ckpt,
            START_LSN,
            &[],
        ))
    }

    /// Existing data directory: recovers the log.
    ///
    /// Reads the newest checkpoint, scans from it to the end of the valid
    /// log calling `apply(start_lsn, end_lsn, payload)` for every complete
    /// frame in order, checks the rest of the circle for lost synced redo,
    /// syncs the redo files (after a process crash the scanned bytes may be
    /// only in the OS page cache), makes a new epoch durable in a
    /// checkpoint, rewrites the block holding the end (truncated, new
    /// epoch) and returns a log ready to append at the end.
    ///
    /// The on-disk geometry wins over `cfg.capacity_bytes`; a difference is
    /// reported in [`RecoveredLog::note`]. If this returns an error after
    /// `apply` ran, nothing applied may be persisted.
    pub fn open(
        vfs: Arc<dyn Vfs>,
        datadir: &Path,
        cfg: &RedoConfig,
        stats: Arc<Stats>,
        apply: &mut ApplyFn<'_>,
    ) -> Result<(Arc<RedoLog>, RecoveredLog)> {
        cfg.validate()?;
        let settled = resize::settle(vfs.as_ref(), datadir)?;
        let dir = datadir.join(REDO_DIR);
        if !vfs.is_dir(&dir)? {
            return Err(StorageError::BadDatadir(format!(
                "{}: the redo log directory is missing",
                dir.display()
            )));
        }
        let files = open_files(vfs.as_ref(), &dir)?;
        let geo = read_geometry(&files)?;
        let ckpt = read_checkpoint(files[0].as_ref())?;

        let mut note = settled;
        match Geometry::for_capacity(cfg.capacity_bytes, cfg.write_ahead_bytes) {
            Ok(wanted) if wanted == geo => {}
            _ => {
                note = Some(format!(
                    "innodb_redo_log_capacity = {} but the redo files in {} hold {} bytes \
                     ({N_FILES} files of {}); recovering from the files as they are",
                    cfg.capacity_bytes,
                    dir.display(),
                    geo.total_bytes(),
                    geo.file_bytes()
                ));
            }
        }

        let outcome = scan::scan(&files, &geo, &ckpt, apply)?;
        for file in &files {
            if file.sync()? {
                Stats::inc(&stats.innodb_os_log_fsyncs);
            }
        }

        let epoch = outcome.max_epoch.checked_add(1).ok_or_else(|| {
            StorageError::Recovery("the redo log epoch counter is exhausted".to_string())
        })?;
        let new_ckpt = CheckpointRecord {
            checkpoint_no: ckpt.checkpoint_no + 1,
            checkpoint_lsn: ckpt.checkpoint_lsn,
            epoch,
        };
        write_checkpoint(files[0].as_ref(), &new_ckpt, &stats)?;

        let end_lsn = outcome.end_lsn;
        let tail = read_tail(&files, &geo, &ckpt, end_lsn)?;
        write_truncated_tail(&files, &geo, epoch, end_lsn, &tail, &stats)?;

        let recovered = RecoveredLog {
            checkpoint_lsn: ckpt.checkpoint_lsn,
            end_lsn,
            mtrs: outcome.mtrs,
            payload_bytes: outcome.payload_bytes,
            torn_tail_bytes: outcome.data_end_lsn - end_lsn,
            epoch,
            note,
        };
        let log = RedoLog::assemble(vfs, dir, geo, files, stats, cfg, new_ckpt, end_lsn, &tail);
        Ok((log, recovered))
    }

    #[allow(clippy::too_many_arguments)]
    fn assemble(
        vfs: Arc<dyn Vfs>,
        dir: PathBuf,
        geo: Geometry,
        files: Vec<Arc<dyn File>>,
        stats: Arc<Stats>,
        cfg: &RedoConfig,
        ckpt: CheckpointRecord,
        end_lsn: Lsn,
        tail: &[u8],
    ) -> Arc<RedoLog> {
        assert_eq!(
            tail.len() as u64,
            end_lsn % PAYLOAD_U64,
            "tail = partial last block"
        );
        let data_blocks = (cfg.log_buffer_bytes / 2 / BLOCK_U64).max(4);
        let pad_blocks = u64::from(cfg.write_ahead_bytes) / BLOCK_U64;
        let half_bytes = ((data_blocks + pad_blocks) * BLOCK_U64) as usize;
        let mut blocks = AlignedBuf::new(half_bytes, BUF_ALIGN_BYTES);
        blocks[OFF_PAYLOAD..OFF_PAYLOAD + tail.len()].copy_from_slice(tail);
        Arc::new(RedoLog {
            vfs,
            dir,
            capacity_lsn_now: AtomicU64::new(geo.capacity_lsn()),
            capacity_bytes_now: AtomicU64::new(geo.total_bytes()),
            circle: RwLock::new(Arc::new(Circle { geo, files })),
            stats,
            write_ahead_bytes: u64::from(cfg.write_ahead_bytes),
            epoch: ckpt.epoch,
            buf: Mutex::new(LogBuffer {
                blocks,
                first_block_no: end_lsn / PAYLOAD_U64,
                end_lsn,
                data_blocks,
                frame_in_progress: false,
            }),
            frame_done: Condvar::new(),
            writer: Mutex::new(Writer {
                spare: AlignedBuf::new(half_bytes, BUF_ALIGN_BYTES),
                dirty_files: 0,
            }),
            flush: Mutex::new(FlushState {
                leader_active: false,
            }),
            flush_done: Condvar::new(),
            ckpt: Mutex::new(ckpt),
            appended_lsn: AtomicU64::new(end_lsn),
            lsn: AtomicU64::new(end_lsn),
            written_lsn: AtomicU64::new(end_lsn),
            flushed_lsn: AtomicU64::new(end_lsn),
            checkpoint_lsn: AtomicU64::new(ckpt.checkpoint_lsn),
            poisoned: AtomicBool::new(false),
            poison_msg: Mutex::new(None),
        })
    }

    /// Largest payload one [`append`](RedoLog::append) accepts: 1/16 of
    /// the circle (about 470 KB at the 8 MiB minimum capacity). A frame is
    /// written before the checkpoint can move past its start, so one frame
    /// must fit in the headroom the checkpoint pacing leaves (1/8 of the
    /// capacity above the sync point) with room to spare.
    pub fn max_payload_bytes(&self) -> u64 {
        (self.capacity_lsn() / 16)
            .saturating_sub(FRAME_HEADER_BYTES as u64)
            .min(u64::from(u32::MAX))
    }

    /// Appends one mtr's payload as one frame, atomically (no other frame
    /// interleaves). `under_lock(start_lsn, end_lsn)` runs while the append
    /// lock is held, so calls to it happen in LSN order; it must not call
    /// back into the log. If the buffer has no room, the caller writes it
    /// out (counting `Innodb_log_waits`); a payload larger than the buffer
    /// goes through in pieces. Returns `(start_lsn, end_lsn)` with
    /// `end_lsn = start_lsn + 8 + payload.len()`.
    pub fn append(&self, payload: &[u8], under_lock: impl FnOnce(Lsn, Lsn)) -> Result<(Lsn, Lsn)> {
        if payload.len() as u64 > self.max_payload_bytes() {
            return Err(StorageError::TooLarge(format!(
                "a mini-transaction of {} redo bytes exceeds the limit of {} \
                 (1/16 of innodb_redo_log_capacity)",
                payload.len(),
                self.max_payload_bytes()
            )));
        }
        let mut header = [0u8; FRAME_HEADER_BYTES];
        put_u32(&mut header, 0, payload.len() as u32);
        put_u32(&mut header, 4, crc32c::crc32c(payload));
        let frame_bytes = (FRAME_HEADER_BYTES + payload.len()) as u64;

        let mut b = self.buf.lock();
        while b.frame_in_progress {
            self.check_poison()?;
            self.frame_done.wait(&mut b);
        }
        self.check_poison()?;
        let start_lsn = b.end_lsn;
        let end_lsn = start_lsn + frame_bytes;
        if b.free_bytes() >= frame_bytes {
            b.copy_in(&header);
            b.copy_in(payload);
        } else {
            b.frame_in_progress = true;
            let copied = self.append_in_pieces(&mut b, &[&header, payload]);
            b.frame_in_progress = false;
            self.frame_done.notify_all();
            copied?;
        }
        debug_assert_eq!(b.end_lsn, end_lsn);
        self.appended_lsn.store(end_lsn, Ordering::Release);
        self.lsn.store(end_lsn, Ordering::Release);
        under_lock(start_lsn, end_lsn);
        Ok((start_lsn, end_lsn))
    }

    /// Copies `parts` into the buffer as space allows, writing the buffer
    /// out whenever it is full. The caller has set `frame_in_progress`.
    fn append_in_pieces(&self, b: &mut MutexGuard<'_, LogBuffer>, parts: &[&[u8]]) -> Result<()> {
        for part in parts {
            let mut rest = *part;
            while !rest.is_empty() {
                let room = b.free_bytes().min(rest.len() as u64) as usize;
                if room == 0 {
                    Stats::inc(&self.stats.innodb_log_waits);
                    let upto_lsn = b.end_lsn;
                    MutexGuard::unlocked(b, || self.write_to(upto_lsn))?;
                    continue;
                }
                b.copy_in(&rest[..room]);
                rest = &rest[room..];
                self.appended_lsn.store(b.end_lsn, Ordering::Release);
            }
        }
        Ok(())
    }

    /// Writes the buffer to the files up to at least `lsn` (or everything
    /// appended, if `lsn` is beyond that), without fsync. If another thread
    /// is writing, waits for it and re-checks.
    pub fn write_to(&self, lsn: Lsn) -> Result<()> {
        self.check_poison()?;
        if self.written_lsn.load(Ordering::Acquire) >= lsn {
            return Ok(());
        }
        let mut w = self.writer.lock();
        self.check_poison()?;
        if self.written_lsn.load(Ordering::Acquire) >= lsn {
            return Ok(());
        }
        self.write_locked(&mut w)?;
        Ok(())
    }

    /// Writes and makes durable everything up to at least `lsn` (capped at
    /// what is appended). One write and one sync serve every concurrent
    /// caller: the first becomes leader and writes everything appended so
    /// far; the others wait and return once `flushed_lsn >= lsn`, or with
    /// the leader's error.
    pub fn flush_to(&self, lsn: Lsn) -> Result<()> {
        self.check_poison()?;
        let lsn = lsn.min(self.appended_lsn.load(Ordering::Acquire));
        if self.flushed_lsn.load(Ordering::Acquire) >= lsn {
            return Ok(());
        }
        let mut f = self.flush.lock();
        loop {
            self.check_poison()?;
            if self.flushed_lsn.load(Ordering::Acquire) >= lsn {
                return Ok(());
            }
            if f.leader_active {
                self.flush_done.wait(&mut f);
                continue;
            }
            f.leader_active = true;
            let led = MutexGuard::unlocked(&mut f, || self.lead_flush());
            f.leader_active = false;
            self.flush_done.notify_all();
            led?;
        }
    }

    /// The flush leader's work: write everything appended, then fsync every
    /// file written since the previous leader took the dirty set. Only
    /// then does `flushed_lsn` move, to what was written before the fsync.
    fn lead_flush(&self) -> Result<()> {
        let (target_lsn, dirty, circle) = {
            let mut w = self.writer.lock();
            self.check_poison()?;
            let target_lsn = self.write_locked(&mut w)?;
            let circle = self.circle.read().clone();
            (target_lsn, std::mem::take(&mut w.dirty_files), circle)
        };
        for (index, file) in circle.files.iter().enumerate() {
            if dirty & (1u64 << index) == 0 {
                continue;
            }
            match file.sync() {
                Ok(true) => Stats::inc(&self.stats.innodb_os_log_fsyncs),
                Ok(false) => {}
                Err(e) => return Err(self.poison(e.into())),
            }
        }
        self.flushed_lsn.fetch_max(target_lsn, Ordering::AcqRel);
        Ok(())
    }

    /// Writes everything appended so far (caller holds the writer lock).
    /// Returns the new `written_lsn`.
    fn write_locked(&self, w: &mut Writer) -> Result<Lsn> {
        let circle = self.circle.read().clone();
        let (geo, files) = (&circle.geo, &circle.files);
        let written_lsn = self.written_lsn.load(Ordering::Acquire);
        // Swap halves under the buffer lock: appenders continue in the
        // other half right away, starting with the partial last block.
        let (first_block, target_lsn) = {
            let mut b = self.buf.lock();
            let target_lsn = b.end_lsn;
            if target_lsn == written_lsn {
                return Ok(written_lsn);
            }
            assert_eq!(
                b.first_block_no,
                written_lsn / PAYLOAD_U64,
                "the buffer starts at the block holding written_lsn"
            );
            let first_block = b.first_block_no;
            std::mem::swap(&mut b.blocks, &mut w.spare);
            let tail_bytes = (target_lsn % PAYLOAD_U64) as usize;
            if tail_bytes > 0 {
                let idx = (target_lsn / PAYLOAD_U64 - first_block) as usize;
                let src = idx * BLOCK_BYTES + OFF_PAYLOAD;
                b.blocks[OFF_PAYLOAD..OFF_PAYLOAD + tail_bytes]
                    .copy_from_slice(&w.spare[src..src + tail_bytes]);
            }
            b.first_block_no = target_lsn / PAYLOAD_U64;
            (first_block, target_lsn)
        };

        // Stamp the headers. sync_lsn = what is durable right now, which
        // can only be at or below what is durable at any later crash.
        let last_block = (target_lsn - 1) / PAYLOAD_U64;
        let n_blocks = last_block - first_block + 1;
        let sync_lsn = self.flushed_lsn.load(Ordering::Acquire);
        for i in 0..n_blocks {
            let block_no = first_block + i;
            let data_len = (target_lsn - block_no * PAYLOAD_U64).min(PAYLOAD_U64) as u16;
            let at = i as usize * BLOCK_BYTES;
            let block = &mut w.spare[at..at + BLOCK_BYTES];
            BlockHeader {
                block_no,
                epoch: self.epoch,
                data_len,
                sync_lsn,
            }
            .stamp(block);
        }

        // Pad with zero blocks to the next write-ahead boundary of the file
        // (never past the end of its data area).
        let end_block = last_block + 1;
        let end_idx = geo.index_in_file(end_block);
        let pad_blocks = if end_idx == 0 {
            0 // the write ends exactly at the end of a file's data area
        } else {
            let end_offset = geo.data_start_bytes + end_idx * BLOCK_U64;
            let pad_bytes = (self.write_ahead_bytes - end_offset % self.write_ahead_bytes)
                % self.write_ahead_bytes;
            (pad_bytes / BLOCK_U64).min(geo.blocks_per_file() - end_idx)
        };
        let total_blocks = n_blocks + pad_blocks;
        w.spare[n_blocks as usize * BLOCK_BYTES..total_blocks as usize * BLOCK_BYTES].fill(0);

        // Invariant 3: never overwrite the log at or after the checkpoint
        // of the previous lap.
        let checkpoint_lsn = self.checkpoint_lsn.load(Ordering::Acquire);
        let highest_lsn = (first_block + total_blocks) * PAYLOAD_U64 - 1;
        if highest_lsn >= checkpoint_lsn + geo.capacity_lsn() {
            return Err(self.poison(StorageError::Poisoned(format!(
                "redo log full: writing up to LSN {highest_lsn} would overwrite redo after the \
                 checkpoint at LSN {checkpoint_lsn} (capacity {} LSN); the checkpoint did not \
                 keep up",
                geo.capacity_lsn()
            ))));
        }

        let mut i = 0u64;
        while i < total_blocks {
            let block_no = first_block + i;
            let run = geo.run_in_file(block_no).min(total_blocks - i);
            let bytes = &w.spare[i as usize * BLOCK_BYTES..(i + run) as usize * BLOCK_BYTES];
            for (j, block) in bytes.chunks_exact(BLOCK_BYTES).enumerate() {
                check_before_write(
                    block,
                    block_no + j as u64,
                    self.epoch,
                    i + (j as u64) < n_blocks,
                );
            }
            let (file, offset) = geo.locate(block_no);
            if let Err(e) = files[file].write_at(bytes, offset) {
                return Err(self.poison(e.into()));
            }
            w.dirty_files |= 1u64 << file;
            Stats::inc(&self.stats.innodb_log_writes);
            Stats::add(&self.stats.innodb_os_log_written, bytes.len() as u64);
            i += run;
        }
        self.written_lsn.store(target_lsn, Ordering::Release);
        Ok(target_lsn)
    }

    /// Records a checkpoint at `lsn`: every change before `lsn` is in the
    /// data files. Writes the next slot and syncs file 0; equal to the
    /// current checkpoint is a no-op.
    ///
    /// # Panics
    ///
    /// If `lsn` is below the current checkpoint or above `flushed_lsn`
    /// (a caller bug: the checkpoint only moves forward, over durable redo).
    ///
    /// Crate-private: the one caller is `Shared::make_checkpoint`, which
    /// decides *where* a checkpoint may go (storage invariant 7); nothing
    /// outside the store can write one past records still needed.
    pub(crate) fn checkpoint(&self, lsn: Lsn) -> Result<()> {
        self.check_poison()?;
        let mut c = self.ckpt.lock();
        assert!(
            lsn >= c.checkpoint_lsn,
            "checkpoint at LSN {lsn} is older than the current one at {}",
            c.checkpoint_lsn
        );
        if lsn == c.checkpoint_lsn {
            return Ok(());
        }
        let flushed_lsn = self.flushed_lsn();
        assert!(
            lsn <= flushed_lsn,
            "checkpoint at LSN {lsn} is beyond the durable redo (flushed to {flushed_lsn})"
        );
        let next = CheckpointRecord {
            checkpoint_no: c.checkpoint_no + 1,
            checkpoint_lsn: lsn,
            epoch: self.epoch,
        };
        let circle = self.circle.read().clone();
        write_checkpoint(circle.files[0].as_ref(), &next, &self.stats)
            .map_err(|e| self.poison(e))?;
        *c = next;
        self.checkpoint_lsn.store(lsn, Ordering::Release);
        Ok(())
    }

    /// End of everything appended (complete frames only).
    pub fn lsn(&self) -> Lsn {
        self.lsn.load(Ordering::Acquire)
    }

    /// End of what has been written to the files (maybe not durable).
    pub fn written_lsn(&self) -> Lsn {
        self.written_lsn.load(Ordering::Acquire)
    }

    /// End of what is durable.
    pub fn flushed_lsn(&self) -> Lsn {
        self.flushed_lsn.load(Ordering::Acquire)
    }

    /// The newest checkpoint on disk.
    pub fn checkpoint_lsn(&self) -> Lsn {
        self.checkpoint_lsn.load(Ordering::Acquire)
    }

    /// Usable circle size in LSN units (payload bytes that fit).
    pub fn capacity_lsn(&self) -> u64 {
        self.capacity_lsn_now.load(Ordering::Acquire)
    }

    /// Total bytes of the redo files on disk.
    pub fn capacity_bytes(&self) -> u64 {
        self.capacity_bytes_now.load(Ordering::Acquire)
    }

    /// Epoch of this incarnation.
    pub fn epoch(&self) -> u32 {
        self.epoch
    }

    /// The `#innodb_redo` directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The first error that poisoned the log, if any.
    pub fn poison_reason(&self) -> Option<String> {
        self.poison_msg.lock().clone()
    }

    fn check_poison(&self) -> Result<()> {
        if self.poisoned.load(Ordering::Acquire) {
            let msg = self.poison_msg.lock().clone().unwrap_or_default();
            return Err(StorageError::Poisoned(msg));
        }
        Ok(())
    }

    /// Makes the log refuse all further work, remembering the first error;
    /// returns `err` for the caller that hit it.
    fn poison(&self, err: StorageError) -> StorageError {
        let mut msg = self.poison_msg.lock();
        if msg.is_none() {
            *msg = Some(format!("redo log: {err}"));
        }
        self.poisoned.store(true, Ordering::Release);
        err
    }
}

/// Asserts, right before a block goes to disk, that it is what its
/// position requires: a data block with the right number, this epoch and
/// a good crc, or an all-zero padding block.
fn check_before_write(block: &[u8], block_no: u64, epoch: u32, is_data: bool) {
    if is_data {
        let h = BlockHeader::read(block);
        assert!(
            h.block_no == block_no && h.epoch == epoch && usize::from(h.data_len) <= PAYLOAD,
            "redo block about to be written at block {block_no} (epoch {epoch}) claims {h:?}"
        );
        debug_assert!(
            block_crc_ok(block),
            "redo block {block_no}: bad crc before write"
        );
    } else {
        debug_assert!(
            block.iter().all(|&x| x == 0),
            "padding block {block_no} is not zero"
        );
    }
}

fn open_files(vfs: &dyn Vfs, dir: &Path) -> Result<Vec<Arc<dyn File>>> {
    let mut files = Vec::with_capacity(N_FILES as usize);
    for index in 0..N_FILES {
        let path = dir.join(file_name(index));
        match vfs.open(&path, OpenOptions::existing(FileKind::Log)) {
            Ok(f) => files.push(f),
            Err(IoError::NotFound { .. }) => {
                return Err(StorageError::BadDatadir(format!(
                    "{}: redo log file missing (the log needs all {N_FILES} files)",
                    path.display()
                )))
            }
            Err(e) => return Err(e.into()),
        }
    }
    Ok(files)
}

/// Reads and cross-checks every file header; returns the geometry.
fn read_geometry(files: &[Arc<dyn File>]) -> Result<Geometry> {
    let mut geo: Option<Geometry> = None;
    let mut block = [0u8; BLOCK_BYTES];
    for (index, file) in files.iter().enumerate() {
        file.read_at(&mut block, 0)?;
        let bad = |why: String| StorageError::Recovery(format!("{}: {why}", file.path().display()));
        let h = FileHeader::decode(&block).map_err(bad)?;
        if h.file_index as usize != index {
            return Err(bad(format!("header says it is redo file {}", h.file_index)));
        }
        match geo {
            None => geo = Some(h.geometry),
            Some(g) if g != h.geometry => {
                return Err(bad(format!(
                    "geometry {:?} differs from the first file's {g:?}",
                    h.geometry
                )))
            }
            Some(_) => {}
        }
        let len = file.len()?;
        if len < h.geometry.file_bytes() {
            return Err(bad(format!(
                "file is {len} bytes, its header says {}",
                h.geometry.file_bytes()
            )));
        }
    }
    geo.ok_or_else(|| StorageError::Recovery("no redo files".to_string()))
}

/// The valid checkpoint slot with the highest number.
fn read_checkpoint(file0: &dyn File) -> Result<CheckpointRecord> {
    let mut best: Option<CheckpointRecord> = None;
    let mut block = [0u8; BLOCK_BYTES];
    for offset in format::CHECKPOINT_SLOT_OFFSETS {
        file0.read_at(&mut block, offset)?;
        if let Some(c) = CheckpointRecord::decode(&block) {
            if c.slot_offset() == offset && best.is_none_or(|b| c.checkpoint_no > b.checkpoint_no) {
                best = Some(c);
            }
        }
    }
    let c = best.ok_or_else(|| {
        StorageError::Recovery(format!(
            "no valid redo checkpoint in {} (both checkpoint slots fail their checksum)",
            file0.path().display()
        ))
    })?;
    if c.checkpoint_lsn < START_LSN {
        return Err(StorageError::Recovery(format!(
            "{}: checkpoint {} is at LSN {}, before the start of any log ({START_LSN})",
            file0.path().display(),
            c.checkpoint_no,
            c.checkpoint_lsn
        )));
    }
    Ok(c)
}

fn write_checkpoint(file0: &dyn File, c: &CheckpointRecord, stats: &Stats) -> Result<()> {
    let block = c.encode();
    debug_assert_eq!(CheckpointRecord::decode(&block), Some(*c));
    file0.write_at(&block, c.slot_offset())?;
    if file0.sync()? {
        Stats::inc(&stats.innodb_os_log_fsyncs);
    }
    Ok(())
}

/// The payload bytes of the block holding `end_lsn` that lie before it.
fn read_tail(
    files: &[Arc<dyn File>],
    geo: &Geometry,
    ckpt: &CheckpointRecord,
    end_lsn: Lsn,
) -> Result<Vec<u8>> {
    let tail_bytes = (end_lsn % PAYLOAD_U64) as usize;
    if tail_bytes == 0 {
        return Ok(Vec::new());
    }
    let block_no = end_lsn / PAYLOAD_U64;
    let (file, offset) = geo.locate(block_no);
    let mut block = [0u8; BLOCK_BYTES];
    files[file].read_at(&mut block, offset)?;
    let h = block_crc_ok(&block).then(|| BlockHeader::read(&block));
    match h {
        Some(h) if h.block_no == block_no && usize::from(h.data_len) >= tail_bytes => {
            Ok(payload(&block)[..tail_bytes].to_vec())
        }
        // The end is the checkpoint itself and its block is unreadable:
        // the bytes before the checkpoint are never parsed again.
        _ if end_lsn == ckpt.checkpoint_lsn => Ok(vec![0u8; tail_bytes]),
        _ => Err(StorageError::Recovery(format!(
            "redo block {block_no} holding the end of the log (LSN {end_lsn}) changed \
             during recovery"
        ))),
    }
}

/// Rewrites the block holding `end_lsn` with exactly the bytes before it,
/// stamped with the new epoch, and syncs it. Afterwards no version of that
/// block on disk holds bytes at or after `end_lsn` from the old
/// incarnation.
fn write_truncated_tail(
    files: &[Arc<dyn File>],
    geo: &Geometry,
    epoch: u32,
    end_lsn: Lsn,
    tail: &[u8],
    stats: &Stats,
) -> Result<()> {
    let block_no = end_lsn / PAYLOAD_U64;
    let mut block = [0u8; BLOCK_BYTES];
    block[OFF_PAYLOAD..OFF_PAYLOAD + tail.len()].copy_from_slice(tail);
    BlockHeader {
        block_no,
        epoch,
        data_len: tail.len() as u16,
        sync_lsn: end_lsn,
    }
    .stamp(&mut block);
    check_before_write(&block, block_no, epoch, true);
    let (file, offset) = geo.locate(block_no);
    files[file].write_at(&block, offset)?;
    Stats::inc(&stats.innodb_log_writes);
    Stats::add(&stats.innodb_os_log_written, BLOCK_U64);
    if files[file].sync()? {
        Stats::inc(&stats.innodb_os_log_fsyncs);
    }
    Ok(())
}
