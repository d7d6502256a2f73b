//! # Reading the binary log for replicas (the dump side)
//!
//! A replica, `mariadb-binlog --read-from-remote-server` or a CDC client
//! asks for the log from a file and position (COM_BINLOG_DUMP); the server
//! then sends every event from there on, following the active file as it
//! grows and across rotations. This module is the engine's half: a
//! [`DumpCursor`] that yields whole events, one at a time, and waits when
//! it has caught up. The protocol half (packets, fake ROTATE, heartbeats)
//! is `quire-server`'s `conn/dump.rs`.
//!
//! ```text
//!  binlog.000007 (closed)  MAGIC FDE ..events.. ROTATE   read to its end,
//!                                                       then binlog.000008
//!  binlog.000008 (active)  MAGIC FDE ..events..|..........  zeros (prealloc)
//!                                              ^ published: readers stop here
//! ```
//!
//! **What a reader may see.** Only the bytes below the *published*
//! position, which the commit pipeline moves once a group is through the
//! sync stage: after the binlog fsync with `sync_binlog=1`, after the
//! write otherwise (as MySQL moves its dump threads' end position). So a
//! replica never receives a transaction the source could still lose in a
//! crash at `sync_binlog=1`, never reads a group half-written, and never
//! reads the active file's preallocated zeros. A closed file (a file
//! before the published one) is complete: it is read to its length.
//!
//! **Cost to the commit path.** Publishing is one mutex and a condition
//! variable notification per group; readers read the files through their
//! own handles and never take the binlog's locks.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use quire_io::{File, FileKind, OpenOptions};

use super::format::{self, event_type, CHECKSUM_LEN, HEADER_LEN, MAGIC};
use super::{io, Binlog};
use crate::error::{EngineError, Result};

/// Where a dump reads: one file of the log and the offset of the next
/// event in it.
pub struct DumpCursor {
    pub name: String,
    pub seq: u32,
    pub pos: u64,
    file: Arc<dyn File>,
    /// This cursor's file seq, as `Binlog::readers` sees it: a file being
    /// read is never purged.
    _reading: Arc<AtomicU32>,
    /// `Binlog::resets` when the cursor was opened: a RESET MASTER since
    /// ends the dump.
    resets: u64,
    /// Bytes of the file read ahead (all below the published end when
    /// read, so final): events are cut from here, one read per
    /// [`READ_AHEAD_BYTES`] instead of two per event.
    ahead: Vec<u8>,
    /// File offset of `ahead[0]`.
    ahead_at: u64,
    /// How far this file could be read when last asked (it only grows
    /// within a file, and a RESET MASTER ends the cursor): events below it
    /// need no look at the published end.
    known_limit: u64,
}

/// How much a dump cursor reads at once.
const READ_AHEAD_BYTES: u64 = 256 << 10;

/// What [`Binlog::dump_next`] found.
pub enum DumpStep {
    /// The next event (header, body and checksum as in the file).
    Event(Vec<u8>),
    /// The file ended (its ROTATE was the last event); the cursor is now
    /// at the start of the next file, whose FORMAT_DESCRIPTION comes next.
    NextFile,
    /// Nothing new within the wait.
    Idle,
}

/// ER_MASTER_FATAL_ERROR_READING_BINLOG (1236) with MySQL's wording.
fn fatal(msg: impl Into<String>) -> EngineError {
    EngineError::new(1236, "HY000", msg.into())
}

impl Binlog {
    /// Moves what readers may see forward to (seq, pos) (never back).
    pub(crate) fn publish(&self, seq: u32, pos: u64) {
        let mut p = self.published.lock();
        if (seq, pos) > *p {
            *p = (seq, pos);
            self.published_cv.notify_all();
        }
    }

    /// (file seq, offset) below which every byte may be sent.
    pub fn published(&self) -> (u32, u64) {
        *self.published.lock()
    }

    /// The index's file `name`, or its first file when `name` is empty;
    /// None when the index has no such file.
    pub fn indexed_file(&self, name: &str) -> Result<Option<String>> {
        let cfg = self.cfg.lock().clone();
        let names = Binlog::read_index(&self.vfs, &cfg)?;
        Ok(if name.is_empty() {
            names.into_iter().next()
        } else {
            names.into_iter().find(|n| n == name)
        })
    }

    /// A cursor at `pos` of `name` (the first file of the index when
    /// `name` is empty; an offset below 4 means the first event).
    pub fn dump_open(&self, name: &str, pos: u64) -> Result<DumpCursor> {
        let Some(name) = self.indexed_file(name)? else {
            return Err(fatal(
                "Could not find first log file name in binary log index file",
            ));
        };
        let mut cur = self.open_cursor(&name)?;
        let len = self.readable_len(&cur)?;
        let pos = pos.max(MAGIC.len() as u64);
        if pos > len {
            return Err(fatal(
                "Client requested master to start replication from position > file size",
            ));
        }
        cur.pos = pos;
        Ok(cur)
    }

    /// A cursor for a replica that auto-positions by GTID
    /// (COM_BINLOG_DUMP_GTID): at the start of the newest file whose
    /// PREVIOUS_GTIDS the replica has all of, as MySQL chooses. Error 1236
    /// when the replica misses GTIDs that only purged files held, or has
    /// GTIDs of this server that this server does not.
    pub fn dump_open_gtid(&self, replica: &super::gtid::GtidSet) -> Result<DumpCursor> {
        let purged = self.gtids.purged_set();
        if !purged.is_subset_of(replica) {
            return Err(fatal(format!(
                "Cannot replicate because the master purged required binary logs. Replicate \
                 the missing transactions from elsewhere, or provision a new slave from backup. \
                 Consider increasing the master's binary log expiration period. The GTID set \
                 sent by the slave is '{}', and the missing transactions are '{}'.",
                replica.to_text(),
                purged.subtract(replica).to_text()
            )));
        }
        let sid = self.gtids.sid;
        let executed = self.gtids.executed_set();
        if replica.last_gno(&sid) > executed.last_gno(&sid) {
            return Err(fatal(
                "Slave has more GTIDs than the master has, using the master's SERVER_UUID. \
                 This may indicate that the end of the binary log was truncated or that the \
                 last binary log file was lost, e.g., after a power or disk failure when \
                 sync_binlog != 1.",
            ));
        }
        let cfg = self.cfg.lock().clone();
        let names = Binlog::read_index(&self.vfs, &cfg)?;
        let mut start = names.first().cloned();
        for n in names.iter().rev() {
            if Binlog::previous_gtids_of(&self.vfs, &cfg.dir.join(n))?.is_subset_of(replica) {
                start = Some(n.clone());
                break;
            }
        }
        let Some(name) = start else {
            return Err(fatal(
                "Could not find first log file name in binary log index file",
            ));
        };
        self.dump_open(&name, MAGIC.len() as u64)
    }

    fn open_cursor(&self, name: &str) -> Result<DumpCursor> {
        let stem = self.cfg.lock().stem.clone();
        let seq = Binlog::seq_of(&stem, name)
            .ok_or_else(|| fatal(format!("Binary log '{name}' has no sequence number")))?;
        let file = self
            .vfs
            .open(&self.path(name), OpenOptions::existing(FileKind::Other))
            .map_err(|_| fatal(format!("Could not open log file '{name}'")))?;
        let reading = Arc::new(AtomicU32::new(seq));
        {
            let mut r = self.readers.lock();
            r.retain(|w| w.strong_count() > 0);
            r.push(Arc::downgrade(&reading));
        }
        Ok(DumpCursor {
            name: name.to_string(),
            seq,
            pos: MAGIC.len() as u64,
            file,
            _reading: reading,
            resets: self.resets.load(Ordering::Acquire),
            ahead: Vec::new(),
            ahead_at: 0,
            known_limit: 0,
        })
    }

    /// How many dump cursors are reading file `seq` now (MySQL's
    /// `log_in_use`).
    pub(crate) fn readers_of(&self, seq: u32) -> usize {
        self.readers
            .lock()
            .iter()
            .filter_map(|w| w.upgrade())
            .filter(|a| a.load(Ordering::Acquire) == seq)
            .count()
    }

    /// How far the cursor's file may be read now.
    fn readable_len(&self, cur: &DumpCursor) -> Result<u64> {
        let (seq, pos) = self.published();
        if cur.seq < seq {
            cur.file.len().map_err(io)
        } else if cur.seq == seq {
            Ok(pos)
        } else {
            Ok(MAGIC.len() as u64)
        }
    }

    /// The FORMAT_DESCRIPTION event of the cursor's file (after MAGIC),
    /// whatever the cursor's position.
    pub fn dump_format_description(&self, cur: &DumpCursor) -> Result<Vec<u8>> {
        self.read_event_at(cur, MAGIC.len() as u64, u64::MAX)
            .and_then(|e| {
                if e.get(4) == Some(&event_type::FORMAT_DESCRIPTION) {
                    Ok(e)
                } else {
                    Err(fatal(format!(
                        "binary log '{}' does not start with a format description event",
                        cur.name
                    )))
                }
            })
    }

    /// Reads the event at `at`, which must end by `limit`.
    fn read_event_at(&self, cur: &DumpCursor, at: u64, limit: u64) -> Result<Vec<u8>> {
        let mut header = [0u8; HEADER_LEN];
        cur.file.read_at(&mut header, at).map_err(io)?;
        let size = u32::from_le_bytes([header[9], header[10], header[11], header[12]]) as u64;
        if size < HEADER_LEN as u64 || at + size > limit.min(at + (1u64 << 32)) {
            return Err(fatal(format!(
                "event of {size} bytes at {at} in '{}' does not fit the log",
                cur.name
            )));
        }
        let mut ev = vec![0u8; size as usize];
        cur.file.read_at(&mut ev, at).map_err(io)?;
        Ok(ev)
    }

    /// The event at the cursor (which ends by `limit`), from the
    /// read-ahead buffer, refilled when it does not hold the event.
    fn next_event(&self, cur: &mut DumpCursor, limit: u64) -> Result<Vec<u8>> {
        let in_ahead = |cur: &DumpCursor, from: u64, to: u64| {
            from >= cur.ahead_at && to <= cur.ahead_at + cur.ahead.len() as u64
        };
        if !in_ahead(cur, cur.pos, cur.pos + HEADER_LEN as u64) {
            let n = (limit - cur.pos).min(READ_AHEAD_BYTES) as usize;
            cur.ahead.resize(n, 0);
            cur.file.read_at(&mut cur.ahead, cur.pos).map_err(io)?;
            cur.ahead_at = cur.pos;
        }
        let at = (cur.pos - cur.ahead_at) as usize;
        let h = &cur.ahead[at..at + HEADER_LEN];
        let size = u32::from_le_bytes([h[9], h[10], h[11], h[12]]) as u64;
        if size >= HEADER_LEN as u64 && in_ahead(cur, cur.pos, cur.pos + size) {
            return Ok(cur.ahead[at..at + size as usize].to_vec());
        }
        // Larger than what is read ahead (or malformed: checked there).
        self.read_event_at(cur, cur.pos, limit)
    }

    /// The next event after the cursor, waiting up to `wait` for one.
    pub fn dump_next(&self, cur: &mut DumpCursor, wait: Duration) -> Result<DumpStep> {
        let deadline = Instant::now() + wait;
        loop {
            if self.resets.load(Ordering::Acquire) != cur.resets {
                return Err(fatal(
                    "The binary log was reset (RESET MASTER) while it was being read",
                ));
            }
            let limit = if cur.pos + HEADER_LEN as u64 <= cur.known_limit {
                cur.known_limit
            } else {
                let l = self.readable_len(cur)?;
                cur.known_limit = l;
                l
            };
            if cur.pos + HEADER_LEN as u64 <= limit {
                let ev = self.next_event(cur, limit)?;
                cur.pos += ev.len() as u64;
                return Ok(DumpStep::Event(ev));
            }
            if cur.seq < self.published().0 {
                // A closed file read to its end: on to the next one.
                let stem = self.cfg.lock().stem.clone();
                let next = Binlog::file_name(&stem, cur.seq + 1);
                *cur = self.open_cursor(&next)?;
                return Ok(DumpStep::NextFile);
            }
            let mut p = self.published.lock();
            let now = Instant::now();
            if now >= deadline {
                return Ok(DumpStep::Idle);
            }
            if p.0 == cur.seq && p.1 <= cur.pos {
                self.published_cv.wait_for(&mut p, deadline - now);
            }
        }
    }
}

/// Whether a file's FORMAT_DESCRIPTION event says its events carry CRC32:
/// the checksum algorithm byte sits just before the FDE's own footer
/// (FDEs always have one, see `EventWriter::event`).
pub fn fde_has_checksums(fde: &[u8]) -> bool {
    fde.len() > HEADER_LEN + CHECKSUM_LEN && fde[fde.len() - CHECKSUM_LEN - 1] == 1
}

/// An event the source makes up for the stream (fake ROTATE, HEARTBEAT):
/// timestamp 0, `LOG_EVENT_ARTIFICIAL_F`, the given `log_pos`, and a CRC32
/// footer when the replica asked for checksums.
pub fn artificial_event(
    server_id: u32,
    type_code: u8,
    log_pos: u32,
    body: &[u8],
    checksum: bool,
) -> Vec<u8> {
    const LOG_EVENT_ARTIFICIAL_F: u16 = 0x0020;
    let size = HEADER_LEN + body.len() + if checksum { CHECKSUM_LEN } else { 0 };
    let mut out = Vec::with_capacity(size);
    out.extend_from_slice(&0u32.to_le_bytes());
    out.push(type_code);
    out.extend_from_slice(&server_id.to_le_bytes());
    out.extend_from_slice(&(size as u32).to_le_bytes());
    out.extend_from_slice(&log_pos.to_le_bytes());
    out.extend_from_slice(&LOG_EVENT_ARTIFICIAL_F.to_le_bytes());
    out.extend_from_slice(body);
    if checksum {
        let crc = format::crc32(&out);
        out.extend_from_slice(&crc.to_le_bytes());
    }
    out
}

/// The FORMAT_DESCRIPTION sent ahead of events from the middle of a file:
/// `log_pos` 0 (the replica must not take it as its position) and not "in
/// use", with its checksum computed again when it has one.
pub fn mid_file_format_description(mut fde: Vec<u8>) -> Vec<u8> {
    if fde.len() < HEADER_LEN + CHECKSUM_LEN {
        return fde;
    }
    fde[13..17].copy_from_slice(&0u32.to_le_bytes());
    fde[17] &= !(format::LOG_EVENT_BINLOG_IN_USE_F as u8);
    // The checksum algorithm byte sits just before the footer when the
    // file has checksums (FDEs always carry a footer: see EventWriter).
    let n = fde.len();
    let crc = format::crc32(&fde[..n - CHECKSUM_LEN]);
    fde[n - CHECKSUM_LEN..].copy_from_slice(&crc.to_le_bytes());
    fde
}

#[cfg(test)]
#[path = "dump_tests.rs"]
mod tests;
