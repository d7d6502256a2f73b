//! # The binlog cache: a transaction's events before the log has a place for them
//!
//! MySQL writes each transaction's binlog events into a per-session
//! *binlog cache* and copies the cache into the binary log at commit. The
//! cache lives in memory up to `binlog_cache_size` bytes and continues in
//! a temporary file past that (counted in `Binlog_cache_disk_use`); a
//! transaction that needs more than `max_binlog_cache_size` bytes fails
//! with 1197 (ER_TRANS_CACHE_FULL).
//!
//! quire encodes a transaction's events in the committing thread, before
//! its PREPARE is logged, so the flush stage (one leader at a time, on the
//! path of every commit in the group) only moves bytes:
//!
//! ```text
//!   committing thread                        flush-stage leader
//!   -----------------                        ------------------
//!   BEGIN, TABLE_MAP, ROWS ... encoded at     for each event: log_pos +=
//!   positions counted from 0                    the file offset, CRC32 again
//!      |                                      XID event (the xid is the
//!      v                                        PREPARE's LSN, known now)
//!   +------------------------+                append to the active file
//!   | file part | mem part  |   mem part <= binlog_cache_size;
//!   +------------------------+   when an event does not fit, the mem part
//!     #tmp/binlog_cache_<trx>    is written to the file and emptied
//! ```
//!
//! MySQL raises 1197 in the statement whose events overflow the cache.
//! quire logs a transaction's net row changes, encoded at COMMIT, so the
//! COMMIT (or the autocommit statement) fails and the whole transaction
//! rolls back.
//!
//! Invariants:
//! * the file part and the memory part each hold whole events, file first;
//! * the memory part never exceeds `mem_limit_bytes` except for a single
//!   event larger than it, which goes to the file directly;
//! * `total_bytes <= max_bytes`: the event that would pass it is refused
//!   (1197) and nothing of the transaction is logged;
//! * the file is removed when the cache is dropped (a crash leaves it in
//!   `#tmp`, which the next start empties).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use quire_io::{File, FileKind, OpenOptions, Vfs};

use crate::error::{EngineError, Result};

/// How much of the file part is read back at once.
const READ_CHUNK_BYTES: usize = 1 << 20;
/// The memory part's first allocation.
const FIRST_ALLOC_BYTES: u64 = 1024;
/// Common event header length (the size field is at +9, 4 bytes LE).
const HEADER_LEN: usize = 19;

/// Where a spilled cache goes, and the limits it keeps.
#[derive(Clone)]
pub(crate) struct CacheLimits {
    pub vfs: Arc<dyn Vfs>,
    /// `<datadir>/#tmp`; the file is `binlog_cache_<name.0><name.1>`,
    /// named only when it is made (most caches never are).
    pub dir: Arc<Path>,
    pub name: (&'static str, u64),
    /// `binlog_cache_size` (never above `max_bytes`, as MySQL clamps it).
    pub mem_limit_bytes: u64,
    /// `max_binlog_cache_size`.
    pub max_bytes: u64,
}

impl CacheLimits {
    /// The temporary file's path.
    pub(crate) fn path(&self) -> PathBuf {
        self.dir
            .join(format!("binlog_cache_{}{}", self.name.0, self.name.1))
    }
}

/// One transaction's events (BEGIN through its last rows event).
pub(crate) struct TrxCache {
    limits: CacheLimits,
    mem: Vec<u8>,
    file: Option<Arc<dyn File>>,
    file_bytes: u64,
    total_bytes: u64,
    /// Whether the events carry CRC32 (the active file's setting when they
    /// were encoded).
    pub checksum: bool,
}

/// ER_TRANS_CACHE_FULL.
pub(crate) fn cache_full() -> EngineError {
    EngineError::new(
        1197,
        "HY000",
        "Multi-statement transaction required more than 'max_binlog_cache_size' bytes of \
         storage; increase this mysqld variable and try again",
    )
}

impl TrxCache {
    pub(crate) fn new(limits: CacheLimits, checksum: bool) -> TrxCache {
        // Most transactions' events fit in this from the start.
        let first = limits.mem_limit_bytes.min(FIRST_ALLOC_BYTES) as usize;
        TrxCache {
            limits,
            mem: Vec::with_capacity(first),
            file: None,
            file_bytes: 0,
            total_bytes: 0,
            checksum,
        }
    }

    /// Bytes held (memory and file).
    pub(crate) fn total_bytes(&self) -> u64 {
        self.total_bytes
    }

    /// Whether no event was put in.
    pub(crate) fn is_empty(&self) -> bool {
        self.total_bytes == 0
    }

    /// Whether part of the cache went to the temporary file.
    pub(crate) fn spilled(&self) -> bool {
        self.file.is_some()
    }

    /// Appends one whole event.
    pub(crate) fn push(&mut self, event: &[u8]) -> Result<()> {
        let n = event.len() as u64;
        if self.total_bytes.saturating_add(n) > self.limits.max_bytes {
            return Err(cache_full());
        }
        let limit = self.limits.mem_limit_bytes.min(self.limits.max_bytes);
        if self.mem.len() as u64 + n > limit {
            self.spill_mem()?;
            if n > limit {
                self.write_file(event)?;
                self.total_bytes += n;
                return Ok(());
            }
        }
        self.mem.extend_from_slice(event);
        self.total_bytes += n;
        Ok(())
    }

    fn spill_mem(&mut self) -> Result<()> {
        if self.mem.is_empty() {
            return Ok(());
        }
        let mem = std::mem::take(&mut self.mem);
        self.write_file(&mem)?;
        self.mem = mem;
        self.mem.clear();
        Ok(())
    }

    fn write_file(&mut self, bytes: &[u8]) -> Result<()> {
        let file = match &self.file {
            Some(f) => f.clone(),
            None => {
                let f = self.create_file()?;
                self.file = Some(f.clone());
                f
            }
        };
        file.write_at(bytes, self.file_bytes)
            .map_err(|e| self.io_err("writing", e))?;
        self.file_bytes += bytes.len() as u64;
        Ok(())
    }

    fn create_file(&self) -> Result<Arc<dyn File>> {
        let path = self.limits.path();
        self.limits
            .vfs
            .create_dir_all(&self.limits.dir)
            .map_err(|e| self.io_err("creating the directory of", e))?;
        self.limits
            .vfs
            .open(&path, OpenOptions::create(FileKind::Other))
            .map_err(|e| self.io_err("creating", e))
    }

    fn io_err(&self, what: &str, e: quire_io::IoError) -> EngineError {
        // ER_ERROR_ON_WRITE-like: the statement fails, the log is untouched.
        EngineError::new(
            1026,
            "HY000",
            format!(
                "Error {what} the binlog cache file '{}': {e}",
                self.limits.path().display()
            ),
        )
    }

    /// Hands the events to `sink` in order, relocated so that the first
    /// byte sits at file offset `start` of a file whose events carry CRC32
    /// iff `self.checksum`; each call of `sink` gets whole events.
    pub(crate) fn drain_to(
        &mut self,
        start: u64,
        sink: &mut dyn FnMut(&[u8]) -> Result<()>,
    ) -> Result<()> {
        let mut at = start;
        if let Some(file) = self.file.clone() {
            let mut off = 0u64;
            let mut buf: Vec<u8> = Vec::new();
            while off < self.file_bytes {
                let n = (self.file_bytes - off).min(READ_CHUNK_BYTES as u64) as usize;
                let old = buf.len();
                buf.resize(old + n, 0);
                file.read_at(&mut buf[old..], off)
                    .map_err(|e| self.io_err("reading", e))?;
                off += n as u64;
                let whole = whole_events_len(&buf);
                if whole > 0 {
                    self.relocate(&mut buf[..whole], at)?;
                    sink(&buf[..whole])?;
                    at += whole as u64;
                    buf.drain(..whole);
                }
            }
            if !buf.is_empty() {
                return Err(EngineError::internal(format!(
                    "the binlog cache file '{}' ends inside an event",
                    self.limits.path().display()
                )));
            }
        }
        let mut mem = std::mem::take(&mut self.mem);
        self.relocate(&mut mem, at)?;
        sink(&mem)
    }

    fn relocate(&self, events: &mut [u8], start: u64) -> Result<()> {
        super::format::relocate_events(events, start, self.checksum)
            .map_err(|e| EngineError::internal(format!("binlog cache: {e}")))
    }
}

/// Length of the complete events at the start of `buf`.
fn whole_events_len(buf: &[u8]) -> usize {
    let mut at = 0usize;
    while let Some(h) = buf.get(at..at + HEADER_LEN) {
        let size = u32::from_le_bytes([h[9], h[10], h[11], h[12]]) as usize;
        if size < HEADER_LEN || at + size > buf.len() {
            break;
        }
        at += size;
    }
    at
}

impl Drop for TrxCache {
    fn drop(&mut self) {
        if self.file.take().is_some() {
            // A file left behind is removed by the next start (#tmp).
            let _ = self.limits.vfs.remove_file(&self.limits.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::format::EventWriter;
    use super::*;
    use crate::types::testutil::Rng;
    use quire_io::{FlushMethod, SimFs};

    fn limits(vfs: &Arc<dyn Vfs>, mem: u64, max: u64) -> CacheLimits {
        CacheLimits {
            vfs: vfs.clone(),
            dir: Arc::from(Path::new("/d/#tmp")),
            name: ("trx", 1),
            mem_limit_bytes: mem,
            max_bytes: max,
        }
    }

    /// QUERY events of random sizes encoded from `start` on, with the
    /// text lengths that make them.
    fn events(w: &EventWriter, lens: &[usize], start: u64) -> Vec<Vec<u8>> {
        let mut at = start;
        lens.iter()
            .map(|&len| {
                let ev = w.query(at, 7, 1, "db", &"x".repeat(len));
                at += ev.len() as u64;
                ev
            })
            .collect()
    }

    /// Whatever the memory limit, the drained bytes are the events as the
    /// writer would have encoded them at `start`: positions and CRCs
    /// right, order kept, each sink call whole events; the file exists
    /// only when the events outgrew memory and is gone after the drop.
    #[test]
    fn drained_events_equal_direct_encoding_at_any_limit() {
        for checksum in [true, false] {
            let w = EventWriter::new(9, checksum);
            for (seed, mem) in [(1u64, 4096u64), (2, 32_768), (3, 1 << 30), (4, 4096)] {
                let sim = SimFs::new(FlushMethod::Fsync);
                let vfs: Arc<dyn Vfs> = Arc::new(sim);
                let mut rng = Rng(seed);
                let lens: Vec<usize> = (0..60)
                    .map(|_| match rng.below(10) {
                        0 => 5_000 + rng.index(70_000),
                        _ => rng.index(300),
                    })
                    .collect();
                let evs = events(&w, &lens, 0);
                let mut c = TrxCache::new(limits(&vfs, mem, u64::MAX), checksum);
                for e in &evs {
                    c.push(e).expect("push");
                }
                let total: usize = evs.iter().map(Vec::len).sum();
                assert_eq!(c.total_bytes(), total as u64);
                assert_eq!(c.spilled(), total as u64 > mem);
                let path = PathBuf::from("/d/#tmp/binlog_cache_trx1");
                assert_eq!(vfs.exists(&path).expect("exists"), c.spilled());
                let start = 1_000_003u64;
                let mut out = Vec::new();
                c.drain_to(start, &mut |b| {
                    assert_eq!(whole_events_len(b), b.len(), "a sink call cut an event");
                    out.extend_from_slice(b);
                    Ok(())
                })
                .expect("drain");
                // Encoded directly at their final offsets: the same bytes.
                let want: Vec<u8> = events(&w, &lens, start).concat();
                assert_eq!(out, want, "checksum={checksum} mem={mem}");
                drop(c);
                assert!(!vfs.exists(&path).expect("exists"));
            }
        }
    }

    /// The event that would pass max_binlog_cache_size is refused with
    /// 1197; the ones before it stay.
    #[test]
    fn past_the_maximum_is_1197() {
        let sim = SimFs::new(FlushMethod::Fsync);
        let vfs: Arc<dyn Vfs> = Arc::new(sim);
        let w = EventWriter::new(1, true);
        let ev = w.query(0, 1, 1, "db", &"y".repeat(1000));
        let n = ev.len() as u64;
        let mut c = TrxCache::new(limits(&vfs, 4096, 3 * n), true);
        for _ in 0..3 {
            c.push(&ev).expect("fits");
        }
        let e = c.push(&ev).expect_err("the fourth passes the maximum");
        assert_eq!((e.code, e.sqlstate), (1197, "HY000"));
        assert!(e.message.contains("max_binlog_cache_size"), "{}", e.message);
        assert_eq!(c.total_bytes(), 3 * n);
    }
}
