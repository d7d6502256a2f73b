//! # quire-io: the file-system seam at the bottom of quire
//!
//! Every byte quire stores goes through the two small traits in this crate,
//! [`Vfs`] (a directory tree of files) and [`File`] (one open file with
//! positional reads and writes). Nothing above this crate touches `std::fs`
//! directly. That buys two things:
//!
//! * **Flush methods in one place.** [`OsFs`] maps MySQL's
//!   `innodb_flush_method` onto open flags (`O_DIRECT`, `O_DSYNC`) and sync
//!   calls (`fsync` or `fdatasync` per `innodb_use_fdatasync`). The storage
//!   layer only says *what kind* of file it opens ([`FileKind`]) and *when* it
//!   needs durability ([`File::sync`]); the Vfs decides how.
//! * **Crash simulation.** [`SimFs`] keeps every file in memory and tracks,
//!   per file, which bytes are *durable* (synced) and which are only
//!   *volatile* (written but not yet synced). `crash()` then decides, driven
//!   by a seed, what survives of each unsynced write: kept, dropped, or torn
//!   at sector granularity. Faults (EIO, ENOSPC) can be injected on the n-th
//!   write or sync. Same seed and same sequence of operations, same outcome.
//!
//! ```text
//!   storage (pages, redo, doublewrite)
//!        |  open(path, FileKind) / read_at / write_at / sync
//!        v
//!   +---------+      +-----------------------------------------+
//!   |  Vfs    |----->| OsFs:  std::fs + O_DIRECT/O_DSYNC flags  |
//!   | (trait) |      | SimFs: memory, durable vs volatile bytes |
//!   +---------+      +-----------------------------------------+
//! ```
//!
//! ## Media assumptions (what the layers above may rely on)
//!
//! 1. A write of one aligned 512-byte sector is atomic: after a crash it is
//!    either entirely old or entirely new. Larger writes may tear at any
//!    sector boundary (512 B or 4 KiB, SimFs can model either).
//! 2. Bytes are durable only after a successful `sync` of their file, except
//!    for files opened with `O_DSYNC` (durable when the write returns) and,
//!    under `O_DIRECT_NO_FSYNC`, data files opened `O_DIRECT` (the device is
//!    assumed to have no volatile write cache, which is the assumption under
//!    which MySQL documents that setting as safe).
//! 3. Creating, renaming and removing files is durable once
//!    [`Vfs::sync_dir`] returns for the containing directory.
//! 4. After a failed write or sync, the content of the file is unknown; the
//!    layers above make such errors sticky and never retry a failed fsync
//!    (a retried fsync can report success without the data being durable).

mod aligned;
mod os;
mod rng;
mod sim;

pub use aligned::AlignedBuf;
pub use os::{lower_thread_priority, OsFs};
pub use rng::Rng;
pub use sim::{CrashMode, CrashReport, Fault, FaultKind, FaultOn, SimFs, SimStats};

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Result type of this crate.
pub type Result<T> = std::result::Result<T, IoError>;

/// An I/O failure, with the path it happened on.
#[derive(Debug, thiserror::Error, Clone)]
pub enum IoError {
    /// An error from the operating system (or injected by SimFs with the
    /// same errno semantics).
    #[error("{op} {path}: {msg} (errno {errno})")]
    Os {
        op: &'static str,
        path: PathBuf,
        errno: i32,
        msg: String,
    },
    /// The file system refused a flush method (e.g. tmpfs and `O_DIRECT`).
    #[error("{path}: the file system does not support {setting}: {msg}")]
    Unsupported {
        path: PathBuf,
        setting: String,
        msg: String,
    },
    /// SimFs has been "powered off" (`SimFs::arm_crash_after`): every
    /// operation fails from then on until `crash()` produces the next state.
    #[error("{op} {path}: simulated machine is down")]
    Crashed { op: &'static str, path: PathBuf },
    /// A read past the end of the file.
    #[error("{path}: short read at offset {offset}: wanted {wanted} bytes, file has {len}")]
    ShortRead {
        path: PathBuf,
        offset: u64,
        wanted: usize,
        len: u64,
    },
    /// No such file.
    #[error("{path}: no such file or directory")]
    NotFound { path: PathBuf },
}

impl IoError {
    /// The device or file system is full (ENOSPC): the operation did not
    /// happen, and may succeed once space is freed.
    pub fn is_no_space(&self) -> bool {
        matches!(self, IoError::Os { errno, .. } if *errno == 28)
    }

    /// The errno when there is one (EIO = 5, ENOSPC = 28, ...).
    pub fn errno(&self) -> Option<i32> {
        match self {
            IoError::Os { errno, .. } => Some(*errno),
            _ => None,
        }
    }
}

/// `innodb_flush_method`, as MySQL 8.0 documents it for Unix.
///
/// | value               | data files        | redo log files      |
/// |---------------------|-------------------|---------------------|
/// | `fsync` (default)   | buffered + fsync  | buffered + fsync    |
/// | `O_DSYNC`           | buffered + fsync  | `O_DSYNC`, no fsync |
/// | `O_DIRECT`          | `O_DIRECT` + fsync| buffered + fsync    |
/// | `O_DIRECT_NO_FSYNC` | `O_DIRECT`, fsync only after the file grows | buffered + fsync |
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FlushMethod {
    #[default]
    Fsync,
    ODsync,
    ODirect,
    ODirectNoFsync,
}

impl FlushMethod {
    /// The MySQL spelling.
    pub fn name(self) -> &'static str {
        match self {
            FlushMethod::Fsync => "fsync",
            FlushMethod::ODsync => "O_DSYNC",
            FlushMethod::ODirect => "O_DIRECT",
            FlushMethod::ODirectNoFsync => "O_DIRECT_NO_FSYNC",
        }
    }
}

impl fmt::Display for FlushMethod {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What a file is used for; decides open flags and sync behaviour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// Tablespace data files and doublewrite files.
    Data,
    /// Redo log files.
    Log,
    /// Anything else (binary log, control files): buffered, synced with
    /// fdatasync whatever `innodb_use_fdatasync` says (MySQL's my_sync).
    Other,
}

/// How to open a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpenOptions {
    pub kind: FileKind,
    /// Create the file if it does not exist.
    pub create: bool,
    /// Fail if the file already exists (with `create`).
    pub create_new: bool,
}

impl OpenOptions {
    pub fn existing(kind: FileKind) -> Self {
        OpenOptions {
            kind,
            create: false,
            create_new: false,
        }
    }
    pub fn create(kind: FileKind) -> Self {
        OpenOptions {
            kind,
            create: true,
            create_new: false,
        }
    }
}

/// One open file. All offsets are absolute; there is no cursor, so a file
/// is shared between threads without locking (`&self` everywhere).
#[allow(clippy::len_without_is_empty)]
pub trait File: Send + Sync + fmt::Debug {
    /// Fills `buf` from `offset`. Reading past the end is
    /// [`IoError::ShortRead`]. Under `O_DIRECT`, `buf`, `offset` and the
    /// length must be aligned to [`Vfs::direct_io_alignment`]; use
    /// [`AlignedBuf`].
    fn read_at(&self, buf: &mut [u8], offset: u64) -> Result<()>;
    /// Writes all of `buf` at `offset`, growing the file if needed. Same
    /// alignment rule as `read_at` under `O_DIRECT`.
    fn write_at(&self, buf: &[u8], offset: u64) -> Result<()>;
    /// Makes every completed write durable, following the flush method:
    /// `fdatasync` when `innodb_use_fdatasync` is ON else `fsync`, and a
    /// no-op where the flush method says so (`O_DSYNC` log files,
    /// `O_DIRECT_NO_FSYNC` data files whose size did not change). Returns
    /// whether an fsync-class call was actually issued (for the
    /// `Innodb_*_fsyncs` counters).
    fn sync(&self) -> Result<bool>;
    /// Sets the length (grows with zeros or truncates). Durable after the
    /// next `sync`.
    fn set_len(&self, len: u64) -> Result<()>;
    /// Grows the file to at least `len` bytes with its blocks reserved on
    /// the device (`posix_fallocate`), so later writes inside it cannot
    /// fail for want of space; never shrinks. Fails with ENOSPC *before*
    /// anything depends on the space. Durable after the next `sync`.
    fn allocate(&self, len: u64) -> Result<()> {
        if self.len()? < len {
            self.set_len(len)?;
        }
        Ok(())
    }
    /// Current length in bytes.
    fn len(&self) -> Result<u64>;
    /// Path it was opened with (for messages).
    fn path(&self) -> &Path;
}

/// A file system: a tree of files under some root.
pub trait Vfs: Send + Sync + fmt::Debug {
    /// Opens (or creates) a file. With `FileKind::Data` and an `O_DIRECT`
    /// flush method, a file system that refuses `O_DIRECT` gives
    /// [`IoError::Unsupported`] naming `innodb_flush_method`.
    fn open(&self, path: &Path, opts: OpenOptions) -> Result<Arc<dyn File>>;
    fn exists(&self, path: &Path) -> Result<bool>;
    fn is_dir(&self, path: &Path) -> Result<bool>;
    fn create_dir_all(&self, path: &Path) -> Result<()>;
    fn remove_file(&self, path: &Path) -> Result<()>;
    /// Removes an empty directory.
    fn remove_dir(&self, path: &Path) -> Result<()>;
    fn rename(&self, from: &Path, to: &Path) -> Result<()>;
    /// File names (not paths) directly inside `dir`, sorted.
    fn list_dir(&self, dir: &Path) -> Result<Vec<String>>;
    /// Makes creations, renames and removals inside `dir` durable.
    fn sync_dir(&self, dir: &Path) -> Result<()>;
    /// When the file's contents last changed (its mtime): what binary log
    /// expiry and `PURGE BINARY LOGS BEFORE` compare, as MySQL does.
    fn modified(&self, path: &Path) -> Result<std::time::SystemTime>;
    /// Alignment required for buffers, offsets and lengths of `O_DIRECT`
    /// files (4096 on OsFs, 512 on SimFs). Callers may always align more.
    fn direct_io_alignment(&self) -> usize;
    /// The flush method this Vfs applies.
    fn flush_method(&self) -> FlushMethod;
    /// Whether the store should run its background work (page cleaner
    /// rounds, checkpoints) at the deterministic points of recovery instead
    /// of in a free-running thread while recovery replays. A simulated
    /// machine says yes so that one seed replays one interleaving of the
    /// replay with the cleaner; a real one says no.
    fn steps_background(&self) -> bool {
        false
    }
}
