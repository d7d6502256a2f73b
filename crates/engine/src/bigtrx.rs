//! # Transactions larger than the redo log
//!
//! A commit is one logical redo frame (a PREPARE record with the binlog
//! on, a COMMIT record with it off) holding every row the transaction
//! wrote, and a frame is at most 1/16 of `innodb_redo_log_capacity`.
//! Applying a transaction writes its pages through many small mtrs, whose
//! redo the checkpoint may pass only once the frame that stands for them
//! is no longer needed (storage invariant 7): so a transaction whose
//! apply writes more redo than the log holds could never finish.
//!
//! A *large* transaction (record above 1/4 of that frame limit) keeps its
//! record in a side file instead, and the redo frame only names it:
//!
//! ```text
//!  #quire_trx/trx-<trx id>.ws
//!   0     slot 0 (anchor)     magic | xid | done LSN (0) | seq 1 | crc
//!   512   slot 1 (done)       magic | xid | done LSN     | seq 2 | crc
//!   1024  header              magic | version | trx id | payload length
//!                             | payload crc32c | header crc32c
//!   1056  payload             the PREPARE / COMMIT record, as in redo
//!
//!  redo frame  PREPARE_EXT / COMMIT_EXT: kind | trx id | length | crc32c
//! ```
//!
//! The file is written and synced (with its directory) before the frame
//! is appended, so a frame in the recovered log always finds its file.
//!
//! ## Anchoring
//!
//! Once the transaction is decided committed and that decision is durable
//! (its binlog bytes synced with the binlog on; its COMMIT frame synced
//! with it off), slot 0 is written and synced: the file is now *anchored*
//! and stands for the transaction by itself. The frame's checkpoint pin is
//! dropped before the apply starts, so the checkpoint moves freely while
//! millions of rows are applied. When the apply ends, slot 1 records the
//! log's LSN then (`done`) and is synced.
//!
//! Recovery, before replaying the frames after the checkpoint, replays
//! every anchored file whose frame is *not* among them and whose `done`
//! is missing or after the checkpoint (its pages may not all be written),
//! in XID order. Why the order is right: a large transaction commits
//! alone (the commit gate, below), so a transaction touching the same rows
//! either committed before it (its frame precedes the large one's, hence
//! precedes the checkpoint too, and its effects are durable) or prepared
//! after its slot 1 was durable (then its frame is after `done`: if that
//! frame is before the checkpoint, so is `done`, and the file is skipped;
//! if after, it is replayed after the file).
//!
//! ## The commit gate
//!
//! Every commit through the binlog pipeline holds the gate shared; a large
//! one holds it exclusively from its prepare until it is applied. That is
//! what the argument above needs, and it also means no other prepare pins
//! the checkpoint while the large apply runs. The price: other commits
//! wait for a large transaction's apply (InnoDB applies as statements run,
//! and commits in O(1)); with the binlog off, commits are serialized by
//! the commit mutex anyway.
//!
//! ## Removal
//!
//! A file is removed once the checkpoint has passed both its frame and its
//! `done` LSN (neither the frame scan nor the pre-pass would read it);
//! after recovery every file is removed, and a file whose frame never
//! reached the log (a crash between the two) is removed then too.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::Mutex;
use quire_io::{FileKind, OpenOptions, Vfs};

use crate::error::{EngineError, Result};

/// The side files' directory under the data directory.
pub(crate) const DIR: &str = "#quire_trx";
/// Redo frame kinds naming a side file.
pub(crate) const REC_PREPARE_EXT: u8 = 5;
pub(crate) const REC_COMMIT_EXT: u8 = 6;

const SLOT_BYTES: u64 = 512;
const HEADER_AT: u64 = 2 * SLOT_BYTES;
const HEADER_BYTES: usize = 32;
const PAYLOAD_AT: u64 = HEADER_AT + HEADER_BYTES as u64;
const SLOT_MAGIC: u32 = 0x5154_5341; // "QTSA"
const HEADER_MAGIC: u32 = 0x5154_5258; // "QTRX"
const VERSION: u32 = 1;
/// Writes of the payload go out in pieces of this size.
const WRITE_CHUNK_BYTES: usize = 1 << 20;

fn err(what: &str, path: &Path, e: impl std::fmt::Display) -> EngineError {
    EngineError::internal(format!(
        "large transaction file '{}': {what}: {e}",
        path.display()
    ))
}

/// What a frame naming a side file carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ExtRef {
    pub trx_id: u64,
    pub len: u64,
    pub crc: u32,
}

impl ExtRef {
    pub(crate) fn encode(&self, kind: u8) -> Vec<u8> {
        let mut w = Vec::with_capacity(21);
        w.push(kind);
        w.extend_from_slice(&self.trx_id.to_le_bytes());
        w.extend_from_slice(&self.len.to_le_bytes());
        w.extend_from_slice(&self.crc.to_le_bytes());
        w
    }
    pub(crate) fn decode(b: &[u8]) -> std::result::Result<ExtRef, String> {
        if b.len() != 21 {
            return Err(format!("large transaction frame of {} bytes", b.len()));
        }
        let u64_at = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().unwrap_or([0; 8]));
        Ok(ExtRef {
            trx_id: u64_at(1),
            len: u64_at(9),
            crc: u32::from_le_bytes(b[17..21].try_into().unwrap_or([0; 4])),
        })
    }
}

/// A side file's anchor, as its slots say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Anchor {
    pub xid: u64,
    /// The log's LSN when the apply ended (slot 1), if it did.
    pub done: Option<u64>,
}

/// One anchored file found at recovery.
pub(crate) struct Found {
    pub trx_id: u64,
    pub anchor: Anchor,
}

/// The side files of one data directory.
pub(crate) struct SideFiles {
    vfs: Arc<dyn Vfs>,
    dir: PathBuf,
    /// Files to remove once the checkpoint passes the LSN.
    removable: Mutex<Vec<(u64, u64)>>,
}

impl SideFiles {
    pub(crate) fn new(vfs: Arc<dyn Vfs>, datadir: &Path) -> SideFiles {
        SideFiles {
            vfs,
            dir: datadir.join(DIR),
            removable: Mutex::new(Vec::new()),
        }
    }

    /// The file system the data directory is on.
    pub(crate) fn vfs(&self) -> Arc<dyn Vfs> {
        self.vfs.clone()
    }

    fn path(&self, trx_id: u64) -> PathBuf {
        self.dir.join(format!("trx-{trx_id:016x}.ws"))
    }

    /// Writes `payload` (a PREPARE or COMMIT record) to a new file and
    /// makes it durable, directory entry included.
    pub(crate) fn write(&self, trx_id: u64, payload: &[u8]) -> Result<ExtRef> {
        let path = self.path(trx_id);
        self.vfs
            .create_dir_all(&self.dir)
            .map_err(|e| err("creating the directory", &self.dir, e))?;
        let f = self
            .vfs
            .open(&path, OpenOptions::create(FileKind::Other))
            .map_err(|e| err("creating", &path, e))?;
        let crc = crc32c::crc32c(payload);
        let mut h = Vec::with_capacity(HEADER_BYTES);
        h.extend_from_slice(&HEADER_MAGIC.to_le_bytes());
        h.extend_from_slice(&VERSION.to_le_bytes());
        h.extend_from_slice(&trx_id.to_le_bytes());
        h.extend_from_slice(&(payload.len() as u64).to_le_bytes());
        h.extend_from_slice(&crc.to_le_bytes());
        let hcrc = crc32c::crc32c(&h);
        h.extend_from_slice(&hcrc.to_le_bytes());
        debug_assert_eq!(h.len(), HEADER_BYTES);
        // Slots stay zero (not anchored) until the transaction is decided.
        f.set_len(0).map_err(|e| err("truncating", &path, e))?;
        f.write_at(&[0u8; 2 * SLOT_BYTES as usize], 0)
            .map_err(|e| err("writing", &path, e))?;
        f.write_at(&h, HEADER_AT)
            .map_err(|e| err("writing", &path, e))?;
        let mut at = PAYLOAD_AT;
        for piece in payload.chunks(WRITE_CHUNK_BYTES) {
            f.write_at(piece, at)
                .map_err(|e| err("writing", &path, e))?;
            at += piece.len() as u64;
        }
        f.sync().map_err(|e| err("syncing", &path, e))?;
        self.vfs
            .sync_dir(&self.dir)
            .map_err(|e| err("syncing the directory", &self.dir, e))?;
        Ok(ExtRef {
            trx_id,
            len: payload.len() as u64,
            crc,
        })
    }

    /// Writes slot 0 (`done` None: anchored) or slot 1 (`done` Some: the
    /// apply ended) and syncs it.
    pub(crate) fn anchor(&self, trx_id: u64, xid: u64, done: Option<u64>) -> Result<()> {
        let path = self.path(trx_id);
        let f = self
            .vfs
            .open(&path, OpenOptions::existing(FileKind::Other))
            .map_err(|e| err("opening", &path, e))?;
        let (at, seq) = match done {
            None => (0, 1u32),
            Some(_) => (SLOT_BYTES, 2u32),
        };
        let mut s = Vec::with_capacity(28);
        s.extend_from_slice(&SLOT_MAGIC.to_le_bytes());
        s.extend_from_slice(&xid.to_le_bytes());
        s.extend_from_slice(&done.unwrap_or(0).to_le_bytes());
        s.extend_from_slice(&seq.to_le_bytes());
        let c = crc32c::crc32c(&s);
        s.extend_from_slice(&c.to_le_bytes());
        f.write_at(&s, at).map_err(|e| err("writing", &path, e))?;
        f.sync().map_err(|e| err("syncing", &path, e))?;
        Ok(())
    }

    /// The record a frame names, checked against the frame.
    pub(crate) fn read(&self, r: &ExtRef) -> Result<Vec<u8>> {
        let path = self.path(r.trx_id);
        let f = self
            .vfs
            .open(&path, OpenOptions::existing(FileKind::Other))
            .map_err(|e| err("opening (the redo log names it)", &path, e))?;
        let mut h = [0u8; HEADER_BYTES];
        f.read_at(&mut h, HEADER_AT)
            .map_err(|e| err("reading", &path, e))?;
        let u32_at = |i: usize| u32::from_le_bytes(h[i..i + 4].try_into().unwrap_or([0; 4]));
        let u64_at = |i: usize| u64::from_le_bytes(h[i..i + 8].try_into().unwrap_or([0; 8]));
        if u32_at(0) != HEADER_MAGIC
            || u32_at(4) != VERSION
            || crc32c::crc32c(&h[..28]) != u32_at(28)
            || u64_at(8) != r.trx_id
            || u64_at(16) != r.len
            || u32_at(24) != r.crc
        {
            return Err(err("header", &path, "does not match its redo frame"));
        }
        let len = usize::try_from(r.len).map_err(|e| err("length", &path, e))?;
        let mut payload = vec![0u8; len];
        f.read_at(&mut payload, PAYLOAD_AT)
            .map_err(|e| err("reading", &path, e))?;
        if crc32c::crc32c(&payload) != r.crc {
            return Err(err("payload", &path, "checksum mismatch"));
        }
        Ok(payload)
    }

    /// The record of an anchored file found by [`SideFiles::anchored`].
    pub(crate) fn read_found(&self, trx_id: u64) -> Result<Vec<u8>> {
        let path = self.path(trx_id);
        let f = self
            .vfs
            .open(&path, OpenOptions::existing(FileKind::Other))
            .map_err(|e| err("opening", &path, e))?;
        let mut h = [0u8; HEADER_BYTES];
        f.read_at(&mut h, HEADER_AT)
            .map_err(|e| err("reading", &path, e))?;
        let len = u64::from_le_bytes(h[16..24].try_into().unwrap_or([0; 8]));
        let crc = u32::from_le_bytes(h[24..28].try_into().unwrap_or([0; 4]));
        self.read(&ExtRef { trx_id, len, crc })
    }

    fn read_slot(f: &dyn quire_io::File, at: u64) -> Option<(u64, u64, u32)> {
        let mut s = [0u8; 32];
        f.read_at(&mut s, at).ok()?;
        let u32_at = |i: usize| u32::from_le_bytes(s[i..i + 4].try_into().unwrap_or([0; 4]));
        let u64_at = |i: usize| u64::from_le_bytes(s[i..i + 8].try_into().unwrap_or([0; 8]));
        if u32_at(0) != SLOT_MAGIC || crc32c::crc32c(&s[..24]) != u32_at(24) {
            return None;
        }
        Some((u64_at(4), u64_at(12), u32_at(20)))
    }

    /// Every file's trx id, and its anchor when it has one.
    pub(crate) fn scan(&self) -> Result<Vec<(u64, Option<Anchor>)>> {
        if !self
            .vfs
            .is_dir(&self.dir)
            .map_err(|e| err("reading", &self.dir, e))?
        {
            return Ok(Vec::new());
        }
        let mut out = Vec::new();
        for name in self
            .vfs
            .list_dir(&self.dir)
            .map_err(|e| err("listing", &self.dir, e))?
        {
            let Some(id) = name
                .strip_prefix("trx-")
                .and_then(|r| r.strip_suffix(".ws"))
                .and_then(|h| u64::from_str_radix(h, 16).ok())
            else {
                continue;
            };
            let path = self.dir.join(&name);
            let f = self
                .vfs
                .open(&path, OpenOptions::existing(FileKind::Other))
                .map_err(|e| err("opening", &path, e))?;
            out.push((id, Self::anchor_in(f.as_ref())));
        }
        Ok(out)
    }

    /// Anchored files the pre-pass must replay (see the module doc), in
    /// XID order.
    pub(crate) fn to_replay(
        &self,
        checkpoint_lsn: u64,
        frame_ends: &std::collections::HashSet<u64>,
    ) -> Result<Vec<Found>> {
        let mut out: Vec<Found> = self
            .scan()?
            .into_iter()
            .filter_map(|(trx_id, a)| a.map(|anchor| Found { trx_id, anchor }))
            .filter(|f| {
                !frame_ends.contains(&f.anchor.xid)
                    && f.anchor.done.is_none_or(|d| d > checkpoint_lsn)
            })
            .collect();
        out.sort_by_key(|f| f.anchor.xid);
        Ok(out)
    }

    /// The anchor of the file of `trx_id` (None: not anchored). A large
    /// transaction writes no COMMIT MARKERS entry, and its XID may be in
    /// an earlier binlog file than the last one when the binlog rotated
    /// after it: its anchor is what decides it then.
    pub(crate) fn anchor_of(&self, trx_id: u64) -> Result<Option<Anchor>> {
        let path = self.path(trx_id);
        let f = self
            .vfs
            .open(&path, OpenOptions::existing(FileKind::Other))
            .map_err(|e| err("opening", &path, e))?;
        Ok(Self::anchor_in(f.as_ref()))
    }

    fn anchor_in(f: &dyn quire_io::File) -> Option<Anchor> {
        let s0 = Self::read_slot(f, 0);
        let s1 = Self::read_slot(f, SLOT_BYTES);
        // Slot 1 is written after slot 0 was synced, for the same xid.
        match (s0, s1) {
            (_, Some((xid, done, 2))) => Some(Anchor {
                xid,
                done: Some(done),
            }),
            (Some((xid, _, 1)), _) => Some(Anchor { xid, done: None }),
            _ => None,
        }
    }

    /// Removes the file once the checkpoint reaches `after_lsn`.
    pub(crate) fn remove_after(&self, trx_id: u64, after_lsn: u64) {
        self.removable.lock().push((after_lsn, trx_id));
    }

    /// Removes the files whose LSN the checkpoint has reached.
    pub(crate) fn collect(&self, checkpoint_lsn: u64) -> Result<()> {
        let ready: Vec<u64> = {
            let mut r = self.removable.lock();
            let (ready, keep): (Vec<_>, Vec<_>) = std::mem::take(&mut *r)
                .into_iter()
                .partition(|(lsn, _)| *lsn <= checkpoint_lsn);
            *r = keep;
            ready.into_iter().map(|(_, id)| id).collect()
        };
        for id in ready {
            let path = self.path(id);
            self.vfs
                .remove_file(&path)
                .map_err(|e| err("removing", &path, e))?;
        }
        Ok(())
    }

    /// After recovery: every file is either replayed and checkpointed or
    /// belongs to a frame that never reached the log.
    pub(crate) fn remove_all(&self) -> Result<()> {
        let files = self.scan()?;
        if files.is_empty() {
            return Ok(());
        }
        for (id, _) in files {
            let path = self.path(id);
            self.vfs
                .remove_file(&path)
                .map_err(|e| err("removing", &path, e))?;
        }
        self.vfs
            .sync_dir(&self.dir)
            .map_err(|e| err("syncing the directory", &self.dir, e))
    }
}
