//! # Resizing the redo log while it runs
//!
//! `SET GLOBAL innodb_redo_log_capacity = N` (MySQL 8.0.30+) and a start
//! with a capacity other than the files' both end here. The log moves to
//! a new set of files with the new geometry; nothing is flushed or
//! replayed, because a block's content does not depend on where it lies:
//! its number is a function of its LSN, and the circle slot a function of
//! the number. So the live window, from the checkpoint to the written
//! end, is copied block by block to its slot in the new circle.
//!
//! ```text
//!  1. #innodb_redo_tmp/#ib_redo0..31   new geometry, zeros, headers, synced
//!  2. copy blocks [block(C), block(W0))          no lock: these blocks are
//!                                                final (C = checkpoint,
//!                                                W0 = written end, now)
//!  3. flush barrier (no flush leader), checkpoint lock, writer lock:
//!     no write, fsync or checkpoint of the old files from here on
//!     copy blocks [block(W0), ceil(W / PAYLOAD))   W = written end, now
//!     checkpoint record (C', same epoch) in the new file 0
//!     sync the new files and the tmp directory
//!  4. rename #innodb_redo -> #innodb_redo_old
//!     rename #innodb_redo_tmp -> #innodb_redo, sync the data directory
//!  5. the writer continues in the new circle; old files removed
//! ```
//!
//! Appenders are never stopped: they fill the log buffer, whose blocks
//! are placed by number, so the next write puts them in the new circle.
//! Commits wait only for step 3 and 4 (a copy of what was written since
//! step 2, a few syncs and renames).
//!
//! ## A crash at any point
//!
//! [`settle`] runs before the log is opened and decides from the names:
//!
//! | on disk                                   | meaning                     | settle              |
//! |-------------------------------------------|-----------------------------|---------------------|
//! | `#innodb_redo` + `#innodb_redo_tmp`       | before rename 1             | remove tmp          |
//! | `#innodb_redo_tmp` only (+ `_old`)        | between the renames         | rename tmp, drop old|
//! | `#innodb_redo` + `#innodb_redo_old`       | after rename 2              | remove old          |
//!
//! The tmp files are complete and synced before rename 1, and both copies
//! hold the same redo until the data directory is synced after rename 2
//! (the old files receive no write after step 3), so either one recovers
//! every acknowledged commit. The locks are released only after that sync:
//! no commit is acknowledged from the new files while the renames could
//! still be undone by a crash.
//!
//! ## Limits
//!
//! The window from the checkpoint to the end of the log must fit in half
//! of the new circle (a smaller capacity needs a checkpoint first; the
//! store makes one before calling in). The new geometry follows the same
//! rules as a new log (`Geometry::for_capacity`: at least 8 MiB).

use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use quire_io::{AlignedBuf, File, FileKind, OpenOptions, Vfs};

use super::format::{CheckpointRecord, FileHeader, Geometry};
use super::{
    file_name, open_files, write_checkpoint, Circle, RedoLog, BLOCK_BYTES, BLOCK_U64,
    BUF_ALIGN_BYTES, N_FILES, PAYLOAD_U64, REDO_DIR,
};
use crate::error::{Result, StorageError};
use crate::stats::Stats;

/// Where the new files are built.
pub const REDO_TMP_DIR: &str = "#innodb_redo_tmp";
/// Where the old files wait to be removed.
pub const REDO_OLD_DIR: &str = "#innodb_redo_old";

/// Blocks copied per read/write during a resize.
const COPY_RUN_BLOCKS: u64 = 2048;

/// What a resize did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resized {
    pub from_bytes: u64,
    pub to_bytes: u64,
    /// Redo bytes (blocks) copied from the old files.
    pub copied_bytes: u64,
}

/// Finishes or undoes a resize a crash interrupted (see the module doc).
/// Returns a line for the error log when it found one.
pub fn settle(vfs: &dyn Vfs, datadir: &Path) -> Result<Option<String>> {
    let dir = datadir.join(REDO_DIR);
    let tmp = datadir.join(REDO_TMP_DIR);
    let old = datadir.join(REDO_OLD_DIR);
    let mut note = None;
    if !vfs.is_dir(&dir)? && vfs.is_dir(&tmp)? {
        vfs.rename(&tmp, &dir)?;
        vfs.sync_dir(datadir)?;
        note = Some("finished a redo log resize a crash interrupted".to_string());
    }
    for leftover in [&tmp, &old] {
        if vfs.is_dir(leftover)? {
            remove_dir_files(vfs, leftover)?;
            note.get_or_insert_with(|| "removed the files of an unfinished redo resize".into());
        }
    }
    Ok(note)
}

fn remove_dir_files(vfs: &dyn Vfs, dir: &Path) -> Result<()> {
    for name in vfs.list_dir(dir)? {
        vfs.remove_file(&dir.join(name))?;
    }
    vfs.remove_dir(dir)?;
    Ok(())
}

/// Creates the files of a log with geometry `geo` in `dir` (which must not
/// hold redo files): written out (not sparse), each with its header,
/// synced. The checkpoint slots stay empty.
pub(super) fn make_files(
    vfs: &dyn Vfs,
    dir: &Path,
    geo: &Geometry,
    write_ahead_bytes: u32,
    stats: &Stats,
) -> Result<Vec<Arc<dyn File>>> {
    vfs.create_dir_all(dir)?;
    let mut files = Vec::with_capacity(N_FILES as usize);
    let zeros = vec![0u8; 1 << 20];
    for index in 0..N_FILES {
        let path = dir.join(file_name(index));
        let opts = OpenOptions {
            kind: FileKind::Log,
            create: true,
            create_new: true,
        };
        let file = vfs.open(&path, opts)?;
        // Written out, not sparse (as MySQL does): a write into a hole
        // allocates blocks, and the fsync after it then commits file
        // system metadata too. Measured with fio on this machine: 4 KiB
        // write + fdatasync ~6.3k/s into new space, ~11.4k/s overwriting.
        let mut off = 0u64;
        while off < geo.file_bytes() {
            let n = (geo.file_bytes() - off).min(zeros.len() as u64) as usize;
            file.write_at(&zeros[..n], off)?;
            off += n as u64;
        }
        let mut head = AlignedBuf::new(geo.data_start_bytes as usize, BUF_ALIGN_BYTES);
        let header = FileHeader {
            file_index: index,
            geometry: *geo,
            write_ahead_bytes,
        };
        head[..BLOCK_BYTES].copy_from_slice(&header.encode());
        file.write_at(&head, 0)?;
        if file.sync()? {
            Stats::inc(&stats.innodb_os_log_fsyncs);
        }
        files.push(file);
    }
    vfs.sync_dir(dir)?;
    Ok(files)
}

/// Copies blocks `[from, to)` from one circle to the other.
fn copy_blocks(src: &Circle, dst: &Circle, from: u64, to: u64) -> Result<u64> {
    let mut buf = vec![0u8; (COPY_RUN_BLOCKS * BLOCK_U64) as usize];
    let mut b = from;
    while b < to {
        let run = src
            .geo
            .run_in_file(b)
            .min(dst.geo.run_in_file(b))
            .min(COPY_RUN_BLOCKS)
            .min(to - b);
        let bytes = &mut buf[..(run * BLOCK_U64) as usize];
        let (sf, so) = src.geo.locate(b);
        src.files[sf].read_at(bytes, so)?;
        let (df, doff) = dst.geo.locate(b);
        dst.files[df].write_at(bytes, doff)?;
        b += run;
    }
    Ok((to.saturating_sub(from)) * BLOCK_U64)
}

impl RedoLog {
    /// Moves the log to files of `capacity_bytes` (module doc). A no-op
    /// when the geometry would not change. Errors leave the old log in
    /// use and intact (the files built so far are removed, or by the next
    /// start); an error after the first rename poisons the log.
    pub fn resize(&self, capacity_bytes: u64) -> Result<Option<Resized>> {
        self.check_poison()?;
        let write_ahead = u32::try_from(self.write_ahead_bytes)
            .map_err(|_| StorageError::Config("innodb_log_write_ahead_size".into()))?;
        let new_geo = Geometry::for_capacity(capacity_bytes, write_ahead)?;
        let old = self.circle.read().clone();
        if new_geo == old.geo {
            return Ok(None);
        }
        let datadir = self
            .dir
            .parent()
            .ok_or_else(|| StorageError::Config("the redo directory has no parent".into()))?
            .to_path_buf();
        settle(self.vfs.as_ref(), &datadir)?;
        let tmp = datadir.join(REDO_TMP_DIR);
        let files = make_files(self.vfs.as_ref(), &tmp, &new_geo, write_ahead, &self.stats)?;
        let new = Circle {
            geo: new_geo,
            files,
        };
        match self.move_to(&old, new, &datadir, &tmp) {
            Ok(copied_bytes) => Ok(Some(Resized {
                from_bytes: old.geo.total_bytes(),
                to_bytes: new_geo.total_bytes(),
                copied_bytes,
            })),
            Err(e) => {
                if self.vfs.is_dir(&self.dir).unwrap_or(false) {
                    // Old log still in place: drop what was built.
                    let _ = remove_dir_files(self.vfs.as_ref(), &tmp);
                }
                Err(e)
            }
        }
    }

    /// Steps 2-5 of the module doc.
    fn move_to(&self, old: &Circle, new: Circle, datadir: &Path, tmp: &Path) -> Result<u64> {
        let c0 = self.checkpoint_lsn();
        let w0 = self.written_lsn();
        let mut copied = copy_blocks(old, &new, c0 / PAYLOAD_U64, w0 / PAYLOAD_U64)?;

        let _barrier = FlushBarrier::raise(self);
        let mut ck = self.ckpt.lock();
        let mut w = self.writer.lock();
        self.check_poison()?;
        let c = ck.checkpoint_lsn;
        let written = self.written_lsn();
        let window = self.appended_lsn.load(Ordering::Acquire) - c;
        if window > new.geo.capacity_lsn() / 2 {
            return Err(StorageError::Config(format!(
                "innodb_redo_log_capacity = {}: the log holds {window} bytes of redo after \
                 the checkpoint, more than half of that capacity; retry once the \
                 checkpoint has advanced",
                new.geo.total_bytes()
            )));
        }
        copied += copy_blocks(old, &new, w0 / PAYLOAD_U64, written.div_ceil(PAYLOAD_U64))?;
        let next = CheckpointRecord {
            checkpoint_no: ck.checkpoint_no + 1,
            checkpoint_lsn: c,
            epoch: self.epoch,
        };
        // write_checkpoint syncs file 0; the others are synced here.
        for f in &new.files[1..] {
            if f.sync()? {
                Stats::inc(&self.stats.innodb_os_log_fsyncs);
            }
        }
        write_checkpoint(new.files[0].as_ref(), &next, &self.stats)?;
        self.vfs.sync_dir(tmp)?;

        let old_dir = datadir.join(REDO_OLD_DIR);
        self.vfs.rename(&self.dir, &old_dir)?;
        // From here on the old log is gone from its name: a failure must
        // stop the log (the next start settles the directories).
        let swap = || -> Result<Vec<Arc<dyn File>>> {
            self.vfs.rename(tmp, &self.dir)?;
            self.vfs.sync_dir(datadir)?;
            open_files(self.vfs.as_ref(), &self.dir)
        };
        let files = swap().map_err(|e| self.poison(e))?;
        let geo = new.geo;
        drop(new);
        *self.circle.write() = Arc::new(Circle { geo, files });
        self.capacity_lsn_now
            .store(geo.capacity_lsn(), Ordering::Release);
        self.capacity_bytes_now
            .store(geo.total_bytes(), Ordering::Release);
        // Everything written is in the new files, synced.
        w.dirty_files = 0;
        self.flushed_lsn.fetch_max(written, Ordering::AcqRel);
        *ck = next;
        drop(w);
        drop(ck);
        // Old files: nothing reads them any more (best effort; the next
        // start removes what is left).
        let _ = remove_dir_files(self.vfs.as_ref(), &old_dir);
        Stats::inc(&self.stats.innodb_redo_log_resizes);
        Ok(copied)
    }
}

/// Keeps flush leaders out while a resize swaps the files: waits for the
/// running one to finish (its fsyncs target the old files), then holds
/// `leader_active` so that no other starts; lowered on drop.
struct FlushBarrier<'a> {
    log: &'a RedoLog,
}

impl<'a> FlushBarrier<'a> {
    fn raise(log: &'a RedoLog) -> FlushBarrier<'a> {
        let mut f = log.flush.lock();
        while f.leader_active {
            log.flush_done.wait(&mut f);
        }
        f.leader_active = true;
        FlushBarrier { log }
    }
}

impl Drop for FlushBarrier<'_> {
    fn drop(&mut self) {
        self.log.flush.lock().leader_active = false;
        self.log.flush_done.notify_all();
    }
}
