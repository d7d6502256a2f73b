//! # Temporary files: append-only, block-checked, removed on drop
//!
//! A [`SpillFile`] is one file in the server's temporary directory
//! (`<datadir>/#tmp`, emptied at every start-up, so a crash leaves
//! nothing behind for long). It is created with a name no one else uses
//! (`#sql_<pid>_<n>.spill`), written by appending whole blocks and read
//! back with positioned reads; dropping it removes the file, so a
//! statement that ends with an error, a KILL or a panic unwinding
//! through its operators cleans up the same way as one that finishes.
//!
//! Several *streams* share a file (the runs of a sort, the partitions of
//! a hash table): each [`StreamWriter`] buffers rows into a block of
//! about [`BLOCK_BYTES`] and remembers where its blocks went; a
//! [`StreamReader`] walks that list. A block is
//!
//! ```text
//!   payload length u32 LE | row count u32 LE | crc32 of payload u32 LE
//!   | payload: rows (codec.rs)
//! ```
//!
//! and reading one checks the length against the list, the checksum,
//! and that the rows decode to exactly the payload.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};

use quire_engine::{EngineError, Value};

use super::codec::{corrupt, encode_row, Decoder};
use super::stats;
use crate::SqlResult;

/// Rows are written in blocks of about this many bytes (a row larger
/// than this is a block of its own).
pub const BLOCK_BYTES: usize = 16 << 10;
const HEADER: usize = 12;

static NEXT_FILE: AtomicU64 = AtomicU64::new(1);

/// Error 1030 for an I/O failure on a temporary file (ENOSPC gives
/// MySQL's "No space left on device" text through the OS message).
fn io_error(what: &str, path: &Path, e: &std::io::Error) -> EngineError {
    EngineError::new(
        1030,
        "HY000",
        format!(
            "Got error {} '{e}' from storage engine ({what} {})",
            e.raw_os_error().unwrap_or(0),
            path.display()
        ),
    )
}

/// One temporary file.
pub struct SpillFile {
    file: File,
    path: PathBuf,
    end: std::cell::Cell<u64>,
}

impl SpillFile {
    /// Creates a new empty file in `dir` (created if missing; its parent,
    /// the data directory, must exist).
    pub fn create(dir: &Path) -> SqlResult<Rc<SpillFile>> {
        if let Err(e) = std::fs::create_dir(dir) {
            if e.kind() != std::io::ErrorKind::AlreadyExists {
                return Err(io_error("creating directory", dir, &e));
            }
        }
        let n = NEXT_FILE.fetch_add(1, Ordering::Relaxed);
        let path = dir.join(format!("#sql_{}_{n}.spill", std::process::id()));
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(|e| io_error("creating", &path, &e))?;
        stats::file_created();
        Ok(Rc::new(SpillFile {
            file,
            path,
            end: std::cell::Cell::new(0),
        }))
    }

    fn append(&self, block: &[u8]) -> SqlResult<u64> {
        let at = self.end.get();
        self.file
            .write_all_at(block, at)
            .map_err(|e| io_error("writing", &self.path, &e))?;
        self.end.set(at + block.len() as u64);
        Ok(at)
    }

    fn read_at(&self, buf: &mut [u8], at: u64) -> SqlResult<()> {
        self.file
            .read_exact_at(buf, at)
            .map_err(|e| io_error("reading", &self.path, &e))
    }

    #[cfg(test)]
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for SpillFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Where one block of a stream is: offset and total length.
#[derive(Clone, Copy, Debug)]
struct BlockRef {
    at: u64,
    len: u32,
}

/// Writes one stream of rows into a shared file.
pub struct StreamWriter {
    file: Rc<SpillFile>,
    buf: Vec<u8>,
    rows_in_buf: u32,
    blocks: Vec<BlockRef>,
    rows: u64,
}

impl StreamWriter {
    pub fn new(file: Rc<SpillFile>) -> StreamWriter {
        StreamWriter {
            file,
            buf: Vec::new(),
            rows_in_buf: 0,
            blocks: Vec::new(),
            rows: 0,
        }
    }

    pub fn push(&mut self, row: &[Value]) -> SqlResult<()> {
        if self.buf.is_empty() {
            self.buf.extend_from_slice(&[0; HEADER]);
        }
        encode_row(&mut self.buf, row);
        self.rows_in_buf += 1;
        self.rows += 1;
        if self.buf.len() >= BLOCK_BYTES || self.rows_in_buf == u32::MAX {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> SqlResult<()> {
        if self.rows_in_buf == 0 {
            return Ok(());
        }
        let payload = self.buf.len() - HEADER;
        let len32 =
            u32::try_from(payload).map_err(|_| EngineError::internal("spill row over 4 GiB"))?;
        let crc = crc32fast::hash(&self.buf[HEADER..]);
        self.buf[0..4].copy_from_slice(&len32.to_le_bytes());
        self.buf[4..8].copy_from_slice(&self.rows_in_buf.to_le_bytes());
        self.buf[8..12].copy_from_slice(&crc.to_le_bytes());
        let at = self.file.append(&self.buf)?;
        let len = u32::try_from(self.buf.len())
            .map_err(|_| EngineError::internal("spill block over 4 GiB"))?;
        self.blocks.push(BlockRef { at, len });
        self.buf.clear();
        // A buffer grown by one huge row is not kept.
        if self.buf.capacity() > 4 * BLOCK_BYTES {
            self.buf = Vec::new();
        }
        self.rows_in_buf = 0;
        Ok(())
    }

    /// Rows pushed so far.
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// Ends the stream; its rows can be read back.
    pub fn finish(mut self) -> SqlResult<StreamReader> {
        self.flush()?;
        Ok(StreamReader {
            file: self.file,
            blocks: self.blocks,
            next: 0,
            buf: Vec::new(),
            pos: 0,
            left_in_block: 0,
            rows: self.rows,
        })
    }
}

/// Reads one stream back, a block at a time.
pub struct StreamReader {
    file: Rc<SpillFile>,
    blocks: Vec<BlockRef>,
    next: usize,
    buf: Vec<u8>,
    pos: usize,
    left_in_block: u32,
    rows: u64,
}

impl StreamReader {
    /// Rows in the stream (as written).
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// The next row, or None at the end of the stream.
    pub fn next_row(&mut self) -> SqlResult<Option<Vec<Value>>> {
        while self.left_in_block == 0 {
            if self.pos != self.buf.len() {
                return Err(corrupt("bytes after the last row of a block"));
            }
            let Some(b) = self.blocks.get(self.next).copied() else {
                return Ok(None);
            };
            self.next += 1;
            self.load(b)?;
        }
        let mut d = Decoder::new(&self.buf[self.pos..]);
        let row = d.row()?;
        self.pos = self.buf.len() - d.rest();
        self.left_in_block -= 1;
        Ok(Some(row))
    }

    fn load(&mut self, b: BlockRef) -> SqlResult<()> {
        let len = b.len as usize;
        if len < HEADER {
            return Err(corrupt("block shorter than its header"));
        }
        self.buf.clear();
        self.buf.resize(len, 0);
        self.file.read_at(&mut self.buf, b.at)?;
        let word = |i: usize| {
            let mut a = [0u8; 4];
            a.copy_from_slice(&self.buf[i..i + 4]);
            u32::from_le_bytes(a)
        };
        let (payload, rows, crc) = (word(0), word(4), word(8));
        if payload as usize != len - HEADER {
            return Err(corrupt("block length does not match"));
        }
        if crc32fast::hash(&self.buf[HEADER..]) != crc {
            return Err(corrupt("block checksum mismatch"));
        }
        if rows == 0 {
            return Err(corrupt("empty block"));
        }
        self.pos = HEADER;
        self.left_in_block = rows;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("quire-spill-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).expect("dir");
        d
    }

    #[test]
    fn streams_share_a_file_and_read_back_in_order() {
        let d = dir("streams").join("#tmp");
        let f = SpillFile::create(&d).expect("create");
        let path = f.path().to_path_buf();
        let mut a = StreamWriter::new(f.clone());
        let mut b = StreamWriter::new(f.clone());
        for i in 0..20_000i64 {
            a.push(&[Value::Int(i), Value::text("x")]).expect("push");
            if i % 3 == 0 {
                b.push(&[Value::Int(-i)]).expect("push");
            }
        }
        let (mut ra, mut rb) = (a.finish().expect("a"), b.finish().expect("b"));
        assert_eq!(ra.rows(), 20_000);
        for i in 0..20_000i64 {
            assert_eq!(
                ra.next_row().expect("row"),
                Some(vec![Value::Int(i), Value::text("x")])
            );
        }
        assert_eq!(ra.next_row().expect("end"), None);
        let mut n = 0;
        while let Some(r) = rb.next_row().expect("row") {
            assert_eq!(r, vec![Value::Int(-3 * n)]);
            n += 1;
        }
        assert_eq!(n, 6667);
        assert!(path.exists());
        drop((f, ra, rb));
        assert!(!path.exists(), "dropping the last handle removes the file");
    }

    #[test]
    fn a_flipped_byte_is_detected() {
        let d = dir("flip").join("#tmp");
        let f = SpillFile::create(&d).expect("create");
        let mut w = StreamWriter::new(f.clone());
        for i in 0..100i64 {
            w.push(&[Value::Int(i)]).expect("push");
        }
        let mut r = w.finish().expect("finish");
        f.file.write_all_at(&[0xAA], 40).expect("flip");
        assert_eq!(r.next_row().map_err(|e| e.code).err(), Some(1030));
    }
}
