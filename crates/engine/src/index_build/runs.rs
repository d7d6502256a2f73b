//! # Sorted runs of index keys, merged
//!
//! The fill of an index build (mod.rs) reads the table in primary-key
//! order, so the keys of a secondary index arrive in no useful order. Put
//! into the tree as they come, every insert lands on a random leaf: a
//! million 130-byte keys into a 128 MiB buffer pool wrote 270,000 pages
//! in 20 s. Sorted first, the tree fills left to right and each leaf is
//! written about once. This is InnoDB's sort of an online index build:
//!
//! ```text
//!   keys ─▶ [buffer ≤ innodb_sort_buffer_size] ─full─▶ sort ─▶ run 0 │ run 1 │ …
//!                                                        (appended to one temp file)
//!   finish: the last buffer becomes a run too; then one pass merges the
//!           run heads through a heap ─▶ keys in ascending order
//! ```
//!
//! A key is the secondary key followed by the primary key (unique, so no
//! two compare equal); the primary key's length travels with it, since
//! the tree's value is the primary key. A run is a sequence of records
//! `u32 LE key length, u16 LE primary-key length, key bytes`; where the
//! runs start and end is kept in memory.
//!
//! Memory: the buffer, then one read block per run while merging
//! (`innodb_sort_buffer_size / runs`, at least 4 KiB and at most 64 KiB).
//! The file is `<datadir>/#tmp/ib_sort_t<table>_<index>`, removed when the
//! sorter is dropped (success, error, KILL) and, after a crash, by the
//! next start's emptying of `#tmp`.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use quire_io::{File, FileKind, OpenOptions, Vfs};

use crate::error::{EngineError, Result};

/// Bytes a key costs in the buffer beyond its own (the Vec and the
/// primary-key length).
const KEY_OVERHEAD_BYTES: usize = 32;
/// Bytes written to the run file at once.
const WRITE_BLOCK_BYTES: usize = 64 << 10;
const MIN_READ_BLOCK_BYTES: usize = 4 << 10;
const MAX_READ_BLOCK_BYTES: usize = 64 << 10;
const RECORD_HEADER_BYTES: usize = 6;

fn io_err(what: &str, path: &Path, e: impl std::fmt::Display) -> EngineError {
    EngineError::internal(format!(
        "index build sort file '{}': {what}: {e}",
        path.display()
    ))
}

/// Collects keys and hands them back in ascending order.
pub(crate) struct KeySorter {
    vfs: Arc<dyn Vfs>,
    path: PathBuf,
    file: Option<Arc<dyn File>>,
    limit_bytes: usize,
    buf: Vec<(Vec<u8>, u16)>,
    buf_bytes: usize,
    /// (start, end) byte offsets of each run written.
    runs: Vec<(u64, u64)>,
    file_len: u64,
}

impl KeySorter {
    pub(crate) fn new(vfs: Arc<dyn Vfs>, path: PathBuf, limit_bytes: usize) -> KeySorter {
        KeySorter {
            vfs,
            path,
            file: None,
            limit_bytes: limit_bytes.max(MIN_READ_BLOCK_BYTES),
            buf: Vec::new(),
            buf_bytes: 0,
            runs: Vec::new(),
            file_len: 0,
        }
    }

    /// Adds a key whose last `pk_len` bytes are the primary key.
    pub(crate) fn push(&mut self, key: Vec<u8>, pk_len: usize) -> Result<()> {
        debug_assert!(pk_len <= key.len());
        let pk_len = u16::try_from(pk_len)
            .map_err(|_| EngineError::internal(format!("primary key of {pk_len} bytes")))?;
        self.buf_bytes += key.len() + KEY_OVERHEAD_BYTES;
        self.buf.push((key, pk_len));
        if self.buf_bytes >= self.limit_bytes {
            self.spill()?;
        }
        Ok(())
    }

    /// Runs written to the file so far.
    #[cfg(test)]
    pub(crate) fn runs(&self) -> usize {
        self.runs.len()
    }

    /// Sorts the buffer and appends it to the file as one run.
    fn spill(&mut self) -> Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        self.buf.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        let file = match &self.file {
            Some(f) => f.clone(),
            None => {
                let dir = self.path.parent().unwrap_or(Path::new("."));
                self.vfs
                    .create_dir_all(dir)
                    .map_err(|e| io_err("creating the directory", dir, e))?;
                let f = self
                    .vfs
                    .open(&self.path, OpenOptions::create(FileKind::Other))
                    .map_err(|e| io_err("creating", &self.path, e))?;
                self.file = Some(f.clone());
                f
            }
        };
        let start = self.file_len;
        let mut block: Vec<u8> = Vec::with_capacity(WRITE_BLOCK_BYTES);
        for (key, pk_len) in self.buf.drain(..) {
            block.extend_from_slice(&(key.len() as u32).to_le_bytes());
            block.extend_from_slice(&pk_len.to_le_bytes());
            block.extend_from_slice(&key);
            if block.len() >= WRITE_BLOCK_BYTES {
                file.write_at(&block, self.file_len)
                    .map_err(|e| io_err("writing", &self.path, e))?;
                self.file_len += block.len() as u64;
                block.clear();
            }
        }
        if !block.is_empty() {
            file.write_at(&block, self.file_len)
                .map_err(|e| io_err("writing", &self.path, e))?;
            self.file_len += block.len() as u64;
        }
        self.runs.push((start, self.file_len));
        self.buf_bytes = 0;
        Ok(())
    }

    /// Every key pushed, ascending: from memory when nothing was spilled,
    /// else merged from the runs.
    pub(crate) fn finish(mut self) -> Result<Merged> {
        if self.runs.is_empty() {
            self.buf.sort_unstable_by(|a, b| a.0.cmp(&b.0));
            let keys = std::mem::take(&mut self.buf);
            return Ok(Merged {
                source: Source::Memory(keys.into_iter()),
                _sorter: self,
            });
        }
        self.spill()?;
        let file = self
            .file
            .clone()
            .ok_or_else(|| EngineError::internal("sort runs without a file"))?;
        let block =
            (self.limit_bytes / self.runs.len()).clamp(MIN_READ_BLOCK_BYTES, MAX_READ_BLOCK_BYTES);
        let mut readers = Vec::with_capacity(self.runs.len());
        let mut heap = BinaryHeap::with_capacity(self.runs.len());
        for (i, &(start, end)) in self.runs.iter().enumerate() {
            let mut r = RunReader::new(file.clone(), self.path.clone(), start, end, block);
            if let Some((key, pk_len)) = r.next_key()? {
                heap.push(Reverse((key, i, pk_len)));
            }
            readers.push(r);
        }
        Ok(Merged {
            source: Source::Runs { heap, readers },
            _sorter: self,
        })
    }
}

impl Drop for KeySorter {
    fn drop(&mut self) {
        if self.file.take().is_some() {
            // A file left behind is removed by the next start (#tmp).
            let _ = self.vfs.remove_file(&self.path);
        }
    }
}

enum Source {
    Memory(std::vec::IntoIter<(Vec<u8>, u16)>),
    Runs {
        heap: BinaryHeap<Reverse<(Vec<u8>, usize, u16)>>,
        readers: Vec<RunReader>,
    },
}

/// The keys in ascending order, each with its primary key's length. Owns
/// the sorter, so the file lives as long as the merge.
pub(crate) struct Merged {
    source: Source,
    _sorter: KeySorter,
}

impl Merged {
    pub(crate) fn next_key(&mut self) -> Result<Option<(Vec<u8>, usize)>> {
        match &mut self.source {
            Source::Memory(it) => Ok(it.next().map(|(k, p)| (k, usize::from(p)))),
            Source::Runs { heap, readers } => {
                let Some(Reverse((key, i, pk_len))) = heap.pop() else {
                    return Ok(None);
                };
                if let Some((k, p)) = readers[i].next_key()? {
                    heap.push(Reverse((k, i, p)));
                }
                Ok(Some((key, usize::from(pk_len))))
            }
        }
    }
}

/// Reads one run's records a block at a time.
struct RunReader {
    file: Arc<dyn File>,
    path: PathBuf,
    /// Next file offset to read.
    at: u64,
    end: u64,
    block_bytes: usize,
    buf: Vec<u8>,
    pos: usize,
}

impl RunReader {
    fn new(
        file: Arc<dyn File>,
        path: PathBuf,
        start: u64,
        end: u64,
        block_bytes: usize,
    ) -> RunReader {
        RunReader {
            file,
            path,
            at: start,
            end,
            block_bytes,
            buf: Vec::new(),
            pos: 0,
        }
    }

    /// Makes at least `n` unread bytes available; false at the run's end.
    fn fill(&mut self, n: usize) -> Result<bool> {
        if self.buf.len() - self.pos >= n {
            return Ok(true);
        }
        self.buf.drain(..self.pos);
        self.pos = 0;
        while self.buf.len() < n {
            if self.at >= self.end {
                return Ok(false);
            }
            let want = (self.end - self.at).min(self.block_bytes.max(n) as u64) as usize;
            let old = self.buf.len();
            self.buf.resize(old + want, 0);
            self.file
                .read_at(&mut self.buf[old..], self.at)
                .map_err(|e| io_err("reading", &self.path, e))?;
            self.at += want as u64;
        }
        Ok(true)
    }

    fn next_key(&mut self) -> Result<Option<(Vec<u8>, u16)>> {
        if !self.fill(RECORD_HEADER_BYTES)? {
            if self.pos < self.buf.len() {
                return Err(io_err("reading", &self.path, "a record cut short"));
            }
            return Ok(None);
        }
        let h = &self.buf[self.pos..self.pos + RECORD_HEADER_BYTES];
        let len = u32::from_le_bytes([h[0], h[1], h[2], h[3]]) as usize;
        let pk_len = u16::from_le_bytes([h[4], h[5]]);
        if usize::from(pk_len) > len {
            return Err(io_err(
                "reading",
                &self.path,
                "a record's key is shorter than its primary key",
            ));
        }
        if !self.fill(RECORD_HEADER_BYTES + len)? {
            return Err(io_err("reading", &self.path, "a record cut short"));
        }
        let s = self.pos + RECORD_HEADER_BYTES;
        let key = self.buf[s..s + len].to_vec();
        self.pos = s + len;
        Ok(Some((key, pk_len)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quire_io::{FlushMethod, SimFs};

    fn sorted_through(limit: usize, keys: &[Vec<u8>]) -> (Vec<Vec<u8>>, usize, bool) {
        let sim = SimFs::new(FlushMethod::Fsync);
        let vfs: Arc<dyn Vfs> = Arc::new(sim.clone());
        let path = PathBuf::from("/d/#tmp/ib_sort_t1_1");
        let mut s = KeySorter::new(vfs.clone(), path.clone(), limit);
        for k in keys {
            s.push(k.clone(), 4).expect("push");
        }
        let runs = s.runs();
        let mut m = s.finish().expect("finish");
        let mut out = Vec::new();
        while let Some((k, p)) = m.next_key().expect("next") {
            assert_eq!(p, 4);
            out.push(k);
        }
        drop(m);
        let left = vfs.exists(&path).expect("exists");
        (out, runs, left)
    }

    /// Keys of varied lengths come back ascending and complete, from
    /// memory and through many runs (some records straddling read
    /// blocks), and the file is gone afterwards.
    #[test]
    fn keys_come_back_sorted_from_memory_and_from_runs() {
        let mut keys: Vec<Vec<u8>> = (0u32..20_000)
            .map(|i| {
                let x = i.wrapping_mul(2_654_435_761);
                let mut k = vec![b'a'; (x % 300) as usize];
                k.extend_from_slice(&x.to_be_bytes());
                k.extend_from_slice(&i.to_be_bytes());
                k
            })
            .collect();
        let (from_memory, runs, _) = sorted_through(64 << 20, &keys);
        assert_eq!(runs, 0);
        let (from_runs, runs, left) = sorted_through(64 << 10, &keys);
        assert!(runs > 20, "{runs} runs");
        assert!(!left, "the run file is removed");
        keys.sort();
        assert_eq!(from_memory, keys);
        assert_eq!(from_runs, keys);
    }
}
