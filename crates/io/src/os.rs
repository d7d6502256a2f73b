//! # OsFs: real files with MySQL's flush methods
//!
//! [`OsFs`] is the production [`Vfs`]: plain `std::fs` files accessed with
//! positional I/O (`pread`/`pwrite` through [`FileExt`]), so one open file
//! is shared by many threads without a cursor or a lock. Its only policy is
//! the mapping from `innodb_flush_method` and `innodb_use_fdatasync` onto
//! open flags and sync calls, decided once per open file:
//!
//! ```text
//!                     open flags                 File::sync()
//!   fsync             -                          fsync / fdatasync
//!   O_DSYNC    Log    O_DSYNC                    no-op, Ok(false), unless
//!                                                set_len changed the size
//!              other  -                          fsync / fdatasync
//!   O_DIRECT   Data   O_DIRECT                   fsync / fdatasync
//!              other  -                          fsync / fdatasync
//!   O_DIRECT_  Data   O_DIRECT                   fsync / fdatasync only if the
//!   NO_FSYNC                                     size changed, else Ok(false)
//!              other  -                          fsync / fdatasync
//! ```
//!
//! "fsync / fdatasync" means `fdatasync(2)` when `innodb_use_fdatasync` is
//! ON and `fsync(2)` otherwise; `fdatasync` skips timestamps but still
//! persists the file size, which is all a database needs.
//!
//! ## O_DIRECT
//!
//! With `O_DIRECT` the buffer address, offset and length of every transfer
//! must be multiples of the logical block size. Misaligned requests are
//! refused *before* the system call with `EINVAL` and a message that says
//! what was misaligned: silently bouncing through an aligned copy would
//! hide a bug in the caller and cost a copy per page. We require 4096, the
//! block size of every current device (and a multiple of the 512-byte
//! legacy size), so [`Vfs::direct_io_alignment`] is 4096.
//!
//! Some file systems refuse `O_DIRECT` at `open` with `EINVAL` (tmpfs did
//! until Linux 6.6). That surfaces as [`IoError::Unsupported`] naming the
//! setting, so the server can fail at startup with a message an operator
//! can act on, like MySQL does.
//!
//! ## O_DIRECT_NO_FSYNC
//!
//! MySQL skips the fsync of data files under this setting, except when the
//! file was extended: the new size is metadata, which only an fsync makes
//! durable. Each open file tracks "size changed since the last sync" in an
//! atomic flag, set by `set_len` and by writes that end beyond the largest
//! length this handle has seen.
//!
//! ## O_DSYNC and set_len
//!
//! `O_DSYNC` makes each *write* durable when it returns, including the file
//! size when the write extends the file. It does not cover `ftruncate`, so
//! a redo file sized with `set_len` would not have a durable size if
//! `sync()` were an unconditional no-op. `sync()` on an `O_DSYNC` log file
//! therefore issues one fsync (and returns `Ok(true)`) when `set_len`
//! changed the size since the last sync, and is a no-op otherwise. In
//! steady state (writes only) it never syncs, as MySQL documents.

use crate::{File, FileKind, FlushMethod, IoError, OpenOptions, Result, Vfs};
use std::fs;
use std::io;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

/// Alignment required for `O_DIRECT` transfers on OsFs.
pub(crate) const OS_DIRECT_IO_ALIGNMENT: usize = 4096;

/// The operating system's file system, with `innodb_flush_method` applied.
#[derive(Debug, Clone)]
pub struct OsFs {
    flush_method: FlushMethod,
    use_fdatasync: bool,
}

impl OsFs {
    /// `use_fdatasync` is `innodb_use_fdatasync`: sync with `fdatasync`
    /// instead of `fsync`.
    pub fn new(flush_method: FlushMethod, use_fdatasync: bool) -> OsFs {
        OsFs {
            flush_method,
            use_fdatasync,
        }
    }

    /// Whether syncs use `fdatasync`.
    pub fn use_fdatasync(&self) -> bool {
        self.use_fdatasync
    }
}

/// How one open file behaves, fixed at open time from the flush method and
/// the file kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SyncPolicy {
    /// `fsync`/`fdatasync` on every `sync()`.
    Always,
    /// Opened `O_DSYNC`: every write (including one that extends the
    /// file) is durable when it returns, so `sync` is a no-op, except after
    /// `set_len` changed the size: `ftruncate` is not covered by
    /// `O_DSYNC`, so then one fsync is issued.
    AfterSetLen,
    /// `O_DIRECT_NO_FSYNC` data file: only when the size changed.
    WhenSizeChanged,
}

/// Open flags and sync policy for a file of `kind` under `method`
/// (the table in the module doc). Returns (extra open flags, policy,
/// whether the file is `O_DIRECT`).
fn plan(method: FlushMethod, kind: FileKind) -> (i32, SyncPolicy, bool) {
    match (method, kind) {
        (FlushMethod::ODsync, FileKind::Log) => (libc::O_DSYNC, SyncPolicy::AfterSetLen, false),
        (FlushMethod::ODirect, FileKind::Data) => (libc::O_DIRECT, SyncPolicy::Always, true),
        (FlushMethod::ODirectNoFsync, FileKind::Data) => {
            (libc::O_DIRECT, SyncPolicy::WhenSizeChanged, true)
        }
        _ => (0, SyncPolicy::Always, false),
    }
}

/// Strips std's " (os error N)" suffix: [`IoError::Os`] prints the errno
/// itself.
fn clean_msg(e: &io::Error) -> String {
    let s = e.to_string();
    match s.rfind(" (os error ") {
        Some(i) if s.ends_with(')') => s[..i].to_string(),
        _ => s,
    }
}

/// Maps a std error onto [`IoError`]: `NotFound` keeps its own variant,
/// everything else becomes `Os` with the raw errno (EIO = 5 when the error
/// did not come from a system call).
pub(crate) fn map_err(op: &'static str, path: &Path, e: io::Error) -> IoError {
    if e.kind() == io::ErrorKind::NotFound {
        return IoError::NotFound {
            path: path.to_path_buf(),
        };
    }
    IoError::Os {
        op,
        path: path.to_path_buf(),
        errno: e.raw_os_error().unwrap_or(libc::EIO),
        msg: clean_msg(&e),
    }
}

/// Maps an `open` failure. `EINVAL` on an `O_DIRECT` open means the file
/// system refuses direct I/O: report the setting, not the errno.
fn map_open_err(path: &Path, e: io::Error, direct: bool, method: FlushMethod) -> IoError {
    if direct && e.raw_os_error() == Some(libc::EINVAL) {
        return IoError::Unsupported {
            path: path.to_path_buf(),
            setting: format!("innodb_flush_method={}", method.name()),
            msg: "open with O_DIRECT failed with EINVAL; this file system (tmpfs on \
                  older kernels, some FUSE and network file systems) does not do \
                  direct I/O. Use innodb_flush_method=fsync or O_DSYNC, or put the \
                  data directory on a file system that supports O_DIRECT"
                .to_string(),
        };
    }
    map_err("open", path, e)
}

/// Refuses a misaligned `O_DIRECT` transfer with `EINVAL`, naming what is
/// misaligned, before the kernel refuses it with a bare `EINVAL`.
pub(crate) fn check_direct_alignment(
    op: &'static str,
    path: &Path,
    addr: usize,
    len: usize,
    offset: u64,
    align: usize,
) -> Result<()> {
    let mut bad = Vec::new();
    if !addr.is_multiple_of(align) {
        bad.push(format!("buffer address {addr:#x}"));
    }
    if !offset.is_multiple_of(align as u64) {
        bad.push(format!("offset {offset}"));
    }
    if !len.is_multiple_of(align) {
        bad.push(format!("length {len}"));
    }
    if bad.is_empty() {
        return Ok(());
    }
    Err(IoError::Os {
        op,
        path: path.to_path_buf(),
        errno: libc::EINVAL,
        msg: format!(
            "O_DIRECT requires buffer address, offset and length aligned to {align} bytes \
             (use AlignedBuf); misaligned: {}",
            bad.join(", ")
        ),
    })
}

impl Vfs for OsFs {
    fn open(&self, path: &Path, opts: OpenOptions) -> Result<Arc<dyn File>> {
        let (flags, policy, direct) = plan(self.flush_method, opts.kind);
        // If an O_DIRECT create fails on a file system that refuses direct
        // I/O, Linux may already have created the file; remove it again so
        // a refused startup leaves no debris. Only if it did not exist.
        let creating = opts.create || opts.create_new;
        let existed_before = direct && creating && path.exists();
        let mut oo = fs::OpenOptions::new();
        oo.read(true)
            .write(true)
            .create(creating)
            .create_new(opts.create_new)
            .custom_flags(flags);
        let file = match oo.open(path) {
            Ok(f) => f,
            Err(e) => {
                let err = map_open_err(path, e, direct, self.flush_method);
                if matches!(err, IoError::Unsupported { .. }) && creating && !existed_before {
                    // Best effort: the error we return is the useful one.
                    let _ = fs::remove_file(path);
                }
                return Err(err);
            }
        };
        let len = file.metadata().map_err(|e| map_err("stat", path, e))?.len();
        Ok(Arc::new(OsFile {
            file,
            path: path.to_path_buf(),
            policy,
            direct,
            // innodb_use_fdatasync governs InnoDB's files; other files (the
            // binary log, control files) are synced with fdatasync, as
            // MySQL's my_sync() does: their metadata needed to read the
            // data (the size) is flushed by fdatasync too.
            use_fdatasync: self.use_fdatasync || opts.kind == FileKind::Other,
            size_changed: AtomicBool::new(false),
            max_len_seen: AtomicU64::new(len),
        }))
    }

    fn exists(&self, path: &Path) -> Result<bool> {
        path.try_exists().map_err(|e| map_err("stat", path, e))
    }

    fn is_dir(&self, path: &Path) -> Result<bool> {
        match fs::metadata(path) {
            Ok(m) => Ok(m.is_dir()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(map_err("stat", path, e)),
        }
    }

    fn create_dir_all(&self, path: &Path) -> Result<()> {
        fs::create_dir_all(path).map_err(|e| map_err("mkdir", path, e))
    }

    fn remove_file(&self, path: &Path) -> Result<()> {
        fs::remove_file(path).map_err(|e| map_err("unlink", path, e))
    }

    fn remove_dir(&self, path: &Path) -> Result<()> {
        fs::remove_dir(path).map_err(|e| map_err("rmdir", path, e))
    }

    fn rename(&self, from: &Path, to: &Path) -> Result<()> {
        fs::rename(from, to).map_err(|e| map_err("rename", from, e))
    }

    fn list_dir(&self, dir: &Path) -> Result<Vec<String>> {
        let mut names = Vec::new();
        for entry in fs::read_dir(dir).map_err(|e| map_err("readdir", dir, e))? {
            let entry = entry.map_err(|e| map_err("readdir", dir, e))?;
            names.push(entry.file_name().to_string_lossy().into_owned());
        }
        names.sort();
        Ok(names)
    }

    fn sync_dir(&self, dir: &Path) -> Result<()> {
        // A directory's entries are made durable by fsync on the directory
        // itself (fdatasync is not meaningful there).
        let d = fs::File::open(dir).map_err(|e| map_err("open dir", dir, e))?;
        d.sync_all().map_err(|e| map_err("fsync dir", dir, e))
    }

    fn modified(&self, path: &Path) -> Result<std::time::SystemTime> {
        fs::metadata(path)
            .and_then(|m| m.modified())
            .map_err(|e| map_err("stat", path, e))
    }

    fn direct_io_alignment(&self) -> usize {
        OS_DIRECT_IO_ALIGNMENT
    }

    fn flush_method(&self) -> FlushMethod {
        self.flush_method
    }
}

/// One open OS file.
#[derive(Debug)]
struct OsFile {
    file: fs::File,
    path: PathBuf,
    policy: SyncPolicy,
    /// Opened with `O_DIRECT`: transfers must be aligned.
    direct: bool,
    use_fdatasync: bool,
    /// Set when the size changed since the last successful sync in a way
    /// the policy does not make durable by itself: by `set_len`, or (under
    /// `WhenSizeChanged`) by a write past the end. Unused under `Always`.
    size_changed: AtomicBool,
    /// The largest length this handle has seen or produced; a write ending
    /// beyond it extends the file.
    max_len_seen: AtomicU64,
}

impl OsFile {
    fn check_align(&self, op: &'static str, addr: usize, len: usize, offset: u64) -> Result<()> {
        if self.direct {
            check_direct_alignment(op, &self.path, addr, len, offset, OS_DIRECT_IO_ALIGNMENT)
        } else {
            Ok(())
        }
    }

    fn os_sync(&self) -> Result<()> {
        let r = if self.use_fdatasync {
            self.file.sync_data()
        } else {
            self.file.sync_all()
        };
        r.map_err(|e| {
            map_err(
                if self.use_fdatasync {
                    "fdatasync"
                } else {
                    "fsync"
                },
                &self.path,
                e,
            )
        })
    }
}

impl File for OsFile {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> Result<()> {
        self.check_align("read", buf.as_ptr() as usize, buf.len(), offset)?;
        let mut done = 0usize;
        // pread may return fewer bytes than asked (signals, file end);
        // loop until the buffer is full or the file ends.
        while done < buf.len() {
            match self.file.read_at(&mut buf[done..], offset + done as u64) {
                Ok(0) => {
                    let len = self
                        .file
                        .metadata()
                        .map_err(|e| map_err("stat", &self.path, e))?
                        .len();
                    return Err(IoError::ShortRead {
                        path: self.path.clone(),
                        offset,
                        wanted: buf.len(),
                        len,
                    });
                }
                Ok(n) => done += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(map_err("read", &self.path, e)),
            }
        }
        Ok(())
    }

    fn write_at(&self, buf: &[u8], offset: u64) -> Result<()> {
        self.check_align("write", buf.as_ptr() as usize, buf.len(), offset)?;
        let mut done = 0usize;
        while done < buf.len() {
            match self.file.write_at(&buf[done..], offset + done as u64) {
                Ok(0) => {
                    return Err(IoError::Os {
                        op: "write",
                        path: self.path.clone(),
                        errno: libc::EIO,
                        msg: format!("pwrite wrote 0 bytes at offset {}", offset + done as u64),
                    })
                }
                Ok(n) => done += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(map_err("write", &self.path, e)),
            }
        }
        let end = offset + buf.len() as u64;
        // Growth by a write is covered by O_DSYNC itself (the size is
        // metadata needed to read the data back), so only the O_DIRECT
        // policy cares about it.
        if end > self.max_len_seen.fetch_max(end, Ordering::AcqRel)
            && self.policy == SyncPolicy::WhenSizeChanged
        {
            self.size_changed.store(true, Ordering::Release);
        }
        Ok(())
    }

    fn sync(&self) -> Result<bool> {
        match self.policy {
            SyncPolicy::Always => self.os_sync().map(|()| true),
            SyncPolicy::AfterSetLen | SyncPolicy::WhenSizeChanged => {
                if !self.size_changed.swap(false, Ordering::AcqRel) {
                    return Ok(false);
                }
                match self.os_sync() {
                    Ok(()) => Ok(true),
                    Err(e) => {
                        // Still not durable; a later sync must try again
                        // (the layers above treat the error as fatal anyway).
                        self.size_changed.store(true, Ordering::Release);
                        Err(e)
                    }
                }
            }
        }
    }

    fn set_len(&self, len: u64) -> Result<()> {
        let old = self
            .file
            .metadata()
            .map_err(|e| map_err("stat", &self.path, e))?
            .len();
        self.file
            .set_len(len)
            .map_err(|e| map_err("ftruncate", &self.path, e))?;
        self.max_len_seen.store(len, Ordering::Release);
        if old != len {
            self.size_changed.store(true, Ordering::Release);
        }
        Ok(())
    }

    fn allocate(&self, len: u64) -> Result<()> {
        let old = self.len()?;
        if old >= len {
            return Ok(());
        }
        let fd = std::os::unix::io::AsRawFd::as_raw_fd(&self.file);
        // SAFETY: fd is this file's open descriptor; posix_fallocate only
        // reads its arguments.
        let rc = unsafe { libc::posix_fallocate(fd, 0, len as libc::off_t) };
        match rc {
            0 => {}
            // A file system without fallocate: plain growth.
            libc::EOPNOTSUPP | libc::EINVAL => return self.set_len(len),
            errno => {
                return Err(map_err(
                    "fallocate",
                    &self.path,
                    io::Error::from_raw_os_error(errno),
                ))
            }
        }
        self.max_len_seen.store(len, Ordering::Release);
        self.size_changed.store(true, Ordering::Release);
        Ok(())
    }

    fn len(&self) -> Result<u64> {
        Ok(self
            .file
            .metadata()
            .map_err(|e| map_err("stat", &self.path, e))?
            .len())
    }

    fn path(&self) -> &Path {
        &self.path
    }
}

/// Lowers the calling thread's CPU priority to nice value `nice` (on
/// Linux a thread's nice value is its own). Background work that must
/// leave the CPU to statements (an index build's fill) runs on a thread
/// of its own and calls this first: without privilege a thread cannot
/// raise its priority back. Returns whether it took effect.
pub fn lower_thread_priority(nice: i32) -> bool {
    // SAFETY: gettid and setpriority take no pointers; on failure they
    // return -1 and change nothing.
    unsafe {
        let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
        libc::setpriority(libc::PRIO_PROCESS, tid, nice) == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::AlignedBuf;
    use std::sync::atomic::AtomicUsize;

    /// The nice value is the calling thread's own: another thread of the
    /// process keeps its priority.
    #[test]
    fn a_lowered_priority_is_the_threads_own() {
        fn nice_of_this_thread() -> i32 {
            // SAFETY: no pointers; errno is cleared first because -1 is
            // also a valid nice value.
            unsafe {
                let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
                *libc::__errno_location() = 0;
                libc::getpriority(libc::PRIO_PROCESS, tid)
            }
        }
        let before = nice_of_this_thread();
        let lowered = std::thread::spawn(move || {
            assert!(lower_thread_priority(19));
            nice_of_this_thread()
        })
        .join()
        .expect("thread");
        assert_eq!(lowered, 19);
        assert_eq!(nice_of_this_thread(), before);
    }

    /// A fresh directory under the system temp dir, removed on drop.
    struct TempDir(PathBuf);

    impl TempDir {
        fn new(tag: &str) -> TempDir {
            TempDir::under(&std::env::temp_dir(), tag)
        }
        fn under(base: &Path, tag: &str) -> TempDir {
            static N: AtomicUsize = AtomicUsize::new(0);
            let p = base.join(format!(
                "quire-io-{tag}-{}-{}",
                std::process::id(),
                N.fetch_add(1, Ordering::Relaxed)
            ));
            fs::create_dir_all(&p).expect("create temp dir");
            TempDir(p)
        }
    }

    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    #[test]
    fn round_trip_and_directory_ops() {
        let t = TempDir::new("rt");
        let fs = OsFs::new(FlushMethod::Fsync, false);
        let sub = t.0.join("a/b");
        fs.create_dir_all(&sub).expect("mkdir");
        assert!(fs.is_dir(&sub).expect("is_dir"));
        let p = sub.join("f.dat");
        assert!(!fs.exists(&p).expect("exists"));
        let f = fs
            .open(&p, OpenOptions::create(FileKind::Other))
            .expect("open");
        f.write_at(b"hello world", 0).expect("write");
        f.write_at(b"!", 20).expect("write past end");
        assert_eq!(f.len().expect("len"), 21);
        let mut buf = [0u8; 5];
        f.read_at(&mut buf, 6).expect("read");
        assert_eq!(&buf, b"world");
        let mut gap = [9u8; 9];
        f.read_at(&mut gap, 11).expect("read gap");
        assert_eq!(gap, [0u8; 9]);
        assert!(f.sync().expect("sync"));
        match f.read_at(&mut [0u8; 4], 19) {
            Err(IoError::ShortRead {
                offset: 19,
                wanted: 4,
                len: 21,
                ..
            }) => {}
            other => panic!("expected short read, got {other:?}"),
        }
        f.set_len(5).expect("truncate");
        assert_eq!(f.len().expect("len"), 5);
        assert_eq!(f.path(), p.as_path());

        let q = sub.join("g.dat");
        fs.rename(&p, &q).expect("rename");
        fs.sync_dir(&sub).expect("sync_dir");
        fs.open(&sub.join("z"), OpenOptions::create(FileKind::Data))
            .expect("create z");
        assert_eq!(fs.list_dir(&sub).expect("ls"), vec!["g.dat", "z"]);
        fs.remove_file(&q).expect("rm");
        assert_eq!(fs.list_dir(&sub).expect("ls"), vec!["z"]);
        assert!(matches!(
            fs.open(&q, OpenOptions::existing(FileKind::Data)),
            Err(IoError::NotFound { .. })
        ));
        assert!(matches!(fs.remove_file(&q), Err(IoError::NotFound { .. })));
        match fs.open(
            &sub.join("z"),
            OpenOptions {
                kind: FileKind::Data,
                create: true,
                create_new: true,
            },
        ) {
            Err(IoError::Os { errno, .. }) => assert_eq!(errno, libc::EEXIST),
            other => panic!("expected EEXIST, got {other:?}"),
        }
        assert!(!fs.is_dir(&t.0.join("nope")).expect("is_dir"));
    }

    #[test]
    fn fdatasync_and_dsync_policies() {
        let t = TempDir::new("pol");
        let fs = OsFs::new(FlushMethod::ODsync, true);
        let log = fs
            .open(&t.0.join("ib_redo0"), OpenOptions::create(FileKind::Log))
            .expect("open log");
        log.write_at(&[1u8; 512], 0).expect("write");
        // O_DSYNC log: durable on write, sync is a no-op...
        assert!(!log.sync().expect("sync"));
        log.write_at(&[1u8; 512], 4096)
            .expect("write growing the file");
        assert!(!log.sync().expect("growth by write is covered by O_DSYNC"));
        // ...except after ftruncate, which O_DSYNC does not cover.
        log.set_len(1 << 20).expect("size the log");
        assert!(log.sync().expect("sync after set_len"));
        assert!(!log.sync().expect("and then a no-op again"));
        let data = fs
            .open(&t.0.join("t.ibd"), OpenOptions::create(FileKind::Data))
            .expect("open data");
        data.write_at(&[2u8; 100], 3)
            .expect("unaligned write is fine");
        assert!(data.sync().expect("sync"));
        assert_eq!(plan(FlushMethod::ODsync, FileKind::Data).0, 0);
        assert_eq!(
            plan(FlushMethod::Fsync, FileKind::Log).1,
            SyncPolicy::Always
        );
        assert_eq!(
            plan(FlushMethod::ODirect, FileKind::Log),
            (0, SyncPolicy::Always, false)
        );
    }

    /// Opens an O_DIRECT data file somewhere that supports it, or returns
    /// None (after checking the error is the documented one).
    fn direct_file(t: &TempDir, method: FlushMethod) -> Option<Arc<dyn File>> {
        let fs = OsFs::new(method, false);
        match fs.open(&t.0.join("d.ibd"), OpenOptions::create(FileKind::Data)) {
            Ok(f) => Some(f),
            Err(IoError::Unsupported { setting, .. }) => {
                assert!(setting.contains("O_DIRECT"), "{setting}");
                None
            }
            Err(e) => panic!("unexpected open error {e}"),
        }
    }

    #[test]
    fn direct_io_alignment_is_enforced() {
        let t = TempDir::new("direct");
        let Some(f) = direct_file(&t, FlushMethod::ODirect) else {
            eprintln!("temp dir does not support O_DIRECT; skipping");
            return;
        };
        let mut page = AlignedBuf::new(4096, 4096);
        page[..3].copy_from_slice(b"abc");
        f.write_at(&page, 4096).expect("aligned write");
        let mut back = AlignedBuf::new(4096, 4096);
        f.read_at(&mut back, 4096).expect("aligned read");
        assert_eq!(&back[..3], b"abc");
        assert!(f.sync().expect("sync"));

        // Misaligned offset, length, and address each give EINVAL with a
        // message that says why.
        let big = AlignedBuf::new(8192, 4096);
        let cases: Vec<(&[u8], u64, &str)> = vec![
            (&page[..], 100, "offset 100"),
            (&page[..512], 0, "length 512"),
            (&big[512..512 + 4096], 0, "buffer address"),
        ];
        for (buf, off, what) in cases {
            match f.write_at(buf, off) {
                Err(IoError::Os { errno, msg, .. }) => {
                    assert_eq!(errno, libc::EINVAL);
                    assert!(msg.contains("aligned to 4096"), "{msg}");
                    assert!(msg.contains(what), "{msg}");
                }
                other => panic!("expected EINVAL, got {other:?}"),
            }
        }
        let mut big = big;
        let e = f.read_at(&mut big[512..512 + 4096], 0);
        assert!(
            matches!(
                e,
                Err(IoError::Os {
                    errno: libc::EINVAL,
                    ..
                })
            ),
            "{e:?}"
        );
    }

    #[test]
    fn direct_no_fsync_syncs_only_after_size_change() {
        let t = TempDir::new("nofsync");
        let Some(f) = direct_file(&t, FlushMethod::ODirectNoFsync) else {
            eprintln!("temp dir does not support O_DIRECT; skipping");
            return;
        };
        // New file: nothing changed yet.
        assert!(!f.sync().expect("sync"));
        f.set_len(16384).expect("extend");
        assert!(f.sync().expect("sync after extend"));
        assert!(!f.sync().expect("second sync"));
        let page = AlignedBuf::new(4096, 4096);
        f.write_at(&page, 0).expect("overwrite inside");
        assert!(!f.sync().expect("no size change"));
        f.write_at(&page, 16384).expect("append");
        assert!(f.sync().expect("write grew the file"));
        f.set_len(20480).expect("same size");
        assert!(!f.sync().expect("set_len to the same size"));
    }

    #[test]
    fn tmpfs_direct_open_is_unsupported_or_works() {
        let shm = Path::new("/dev/shm");
        if !shm.is_dir() {
            eprintln!("/dev/shm missing; skipping");
            return;
        }
        let t = TempDir::under(shm, "shm");
        let fs = OsFs::new(FlushMethod::ODirect, false);
        let p = t.0.join("t.ibd");
        match fs.open(&p, OpenOptions::create(FileKind::Data)) {
            // Linux >= 6.6 tmpfs supports O_DIRECT.
            Ok(_) => {}
            Err(IoError::Unsupported { setting, msg, .. }) => {
                assert_eq!(setting, "innodb_flush_method=O_DIRECT");
                assert!(msg.contains("O_DIRECT"));
                assert!(!p.exists(), "refused create must not leave a file");
            }
            Err(e) => panic!("unexpected error {e}"),
        }
    }

    #[test]
    fn einval_on_direct_open_maps_to_unsupported() {
        let e = map_open_err(
            Path::new("/x/t.ibd"),
            io::Error::from_raw_os_error(libc::EINVAL),
            true,
            FlushMethod::ODirectNoFsync,
        );
        match e {
            IoError::Unsupported { setting, .. } => {
                assert_eq!(setting, "innodb_flush_method=O_DIRECT_NO_FSYNC")
            }
            other => panic!("{other:?}"),
        }
        // Without O_DIRECT, EINVAL is just an OS error.
        let e = map_open_err(
            Path::new("/x"),
            io::Error::from_raw_os_error(libc::EINVAL),
            false,
            FlushMethod::ODirect,
        );
        assert_eq!(e.errno(), Some(libc::EINVAL));
        let e = map_err(
            "read",
            Path::new("/x"),
            io::Error::from_raw_os_error(libc::EIO),
        );
        assert_eq!(e.to_string(), "read /x: Input/output error (errno 5)");
        let e = map_err("read", Path::new("/x"), io::Error::other("boom"));
        assert_eq!(e.errno(), Some(libc::EIO));
    }
}
