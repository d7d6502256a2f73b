//! # SimFs: an in-memory file system that can crash
//!
//! A storage engine is only as good as its recovery, and recovery is only
//! exercised by crashes. Real crashes are slow and unrepeatable; [`SimFs`]
//! makes them cheap and replayable. It is a [`Vfs`] that keeps every file
//! in memory and remembers, per file, what a power cut would leave behind.
//!
//! ## The model
//!
//! Each file holds three things:
//!
//! ```text
//!   volatile  what reads see: every completed write, in order
//!   durable   what survives a power cut: the state at the last sync
//!   pending   the writes and set_lens since the last sync, in order
//!
//!   invariant: volatile == durable + pending applied in order
//!              (except after a failed sync, see "Faults")
//!
//!   write_at ──► volatile += w, pending.push(w)
//!   sync     ──► durable  += pending (in order), pending = []
//!   crash    ──► durable  += (some of) pending, volatile = durable
//! ```
//!
//! `crash(mode, seed)` is the reboot. With [`CrashMode::Process`] (kill -9)
//! the operating system survives, so every completed write survives:
//! pending is applied whole. With [`CrashMode::Power`] each pending
//! operation, file by file in sorted path order, op by op in issue order,
//! is decided by a [`Rng`] seeded with `seed`:
//!
//! ```text
//!   pending write  1/3 kept whole
//!                  1/3 dropped
//!                  1/3 torn: cut at sector boundaries (absolute offsets,
//!                      512 B or 4 KiB) and each piece kept with prob. 1/2
//!
//!        offset 1000, len 8000, sector 4096:
//!        |1000 ... 4096|4096 ... 8192|8192 ... 9000|
//!          piece 0        piece 1       piece 2       each old-or-new
//!
//!   pending set_len  1/2 kept, 1/2 dropped
//! ```
//!
//! A kept write beyond the durable length extends the file with zeros up
//! to it. A sector is never mixed old and new (media assumption 1). Same
//! seed and same sequence of operations, same outcome: iteration is over
//! sorted paths and the generator is our own ([`Rng`]).
//!
//! ## Flush methods
//!
//! The flush method changes *when* a write becomes durable, as on a real
//! system (see [`FlushMethod`]):
//!
//! * `FileKind::Log` under `O_DSYNC`: a write is durable when it returns
//!   (it behaves as write + fdatasync, so it also makes earlier pending
//!   set_lens of the file durable). `sync()` is a no-op returning
//!   `Ok(false)`, except after `set_len` changed the size (ftruncate is not
//!   covered by `O_DSYNC`; same rule as [`crate::OsFs`]).
//! * `FileKind::Data` under `O_DIRECT` / `O_DIRECT_NO_FSYNC`: the device is
//!   assumed to have no volatile cache, so a write is durable when it
//!   returns, provided it lies inside the durable length and nothing is
//!   pending on the file. A write that extends the file (or follows an
//!   unsynced set_len) is pending like a buffered write: the new size is
//!   metadata, which needs an fsync. Under `O_DIRECT_NO_FSYNC`, `sync()`
//!   returns `Ok(false)` and does nothing unless the size changed since the
//!   last sync. Buffers, offsets and lengths must be aligned to 512
//!   ([`Vfs::direct_io_alignment`]); misaligned requests fail with `EINVAL`
//!   exactly like on [`crate::OsFs`], so misaligned code is caught in tests.
//! * Everything else: buffered, durable after `sync()`.
//!
//! ## Simplifications
//!
//! * **Directory operations are durable immediately.** Creating, renaming
//!   and removing files take effect in the durable state at once, so
//!   `sync_dir` only validates its argument (and counts as a crash point).
//!   Media assumption 3 promises less; code must still call `sync_dir`.
//! * Directories exist when created by `create_dir_all` (which creates all
//!   ancestors); files can only be created inside existing directories, so
//!   every file's directory exists. The root (`/` or the empty path) always
//!   exists. Renaming a directory requires that the target not exist.
//! * Paths are plain keys: no symlinks, no `..` resolution beyond what
//!   [`Path`] comparison does.
//! * A removed file that is still open keeps working through its handle
//!   (like an unlinked inode) and vanishes at the next crash.
//!
//! ## Power-off points
//!
//! `arm_crash_after(n)` lets the next `n` counted operations (write_at,
//! set_len, sync, sync_dir, on any file) complete and powers the machine
//! off during the one after: that operation and every later one, reads and
//! directory operations included, fail with [`IoError::Crashed`] until
//! `crash()` reboots. If the interrupted operation is a write, a random
//! prefix of its 512-byte pieces (possibly none, possibly all) reaches the
//! volatile content as a pending write, which the following `crash()`
//! treats like any other pending write. Handles opened before a `crash()`
//! belong to the previous boot and fail with `Crashed` forever, so a
//! background thread of a "dead" engine cannot scribble over the rebooted
//! state.
//!
//! ## Faults
//!
//! [`SimFs::inject`] arms a [`Fault`]: the n-th matching write or sync
//! (counted from injection) fails with `EIO` or `ENOSPC`. A failed write
//! changes nothing. A failed sync models Linux: the kernel drops the dirty
//! pages' error state and marks them clean, so the data stays visible to
//! reads but will *never* become durable. SimFs forgets the pending
//! operations of that file (they are lost at the next crash of either
//! mode) and a retried sync that succeeds does not bring them back. Only
//! syncs that would really issue an fsync (not the no-op syncs above) are
//! matched. `crash()` clears injected faults and armed power-off points: a
//! reboot starts with healthy hardware.
//!
//! ## Concurrency
//!
//! The namespace (path → file) is one mutex, each file has its own mutex,
//! and the fault / power-off controller is a third, only taken when
//! something is armed (an atomic flag keeps the common path lock-free).
//! Lock order: namespace → file → controller; the controller is a leaf.
//! Every mutation of a file happens under its mutex after re-checking the
//! boot epoch and the down flag, so `crash()` (which bumps the epoch and
//! then visits each file under its mutex) sees each file either before or
//! after any concurrent write, never during.

use crate::os::check_direct_alignment;
use crate::{File, FileKind, FlushMethod, IoError, OpenOptions, Result, Rng, Vfs};
use parking_lot::Mutex;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::ops::Bound;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

/// Alignment SimFs requires for `O_DIRECT` data files.
const SIM_DIRECT_IO_ALIGNMENT: usize = 512;
/// Granularity of the partial write interrupted by a power-off point.
const INTERRUPT_SECTOR: u64 = 512;

const EIO: i32 = 5;
const ENOSPC: i32 = 28;
const EEXIST: i32 = 17;
const ENOTDIR: i32 = 20;
const EISDIR: i32 = 21;
const ENOTEMPTY: i32 = 39;
const EINVAL: i32 = 22;
const EFBIG: i32 = 27;

/// How the machine goes down in [`SimFs::crash`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CrashMode {
    /// The process dies (kill -9); the OS and its page cache survive, so
    /// every completed write survives.
    Process,
    /// Power loss: each unsynced write is kept, dropped, or torn at
    /// `sector` boundaries (512 or 4096; any non-zero size works).
    Power { sector: usize },
}

/// What [`SimFs::crash`] did to the pending operations.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CrashReport {
    /// Files (in the namespace) that had pending operations.
    pub files_affected: u64,
    /// Pending writes that survived whole.
    pub writes_kept: u64,
    /// Pending writes that vanished whole.
    pub writes_dropped: u64,
    /// Pending writes cut at sector boundaries with pieces kept at random.
    pub writes_torn: u64,
    /// Sector pieces lost from torn writes.
    pub sectors_lost: u64,
    /// Pending set_len calls that took effect.
    pub set_lens_kept: u64,
    /// Pending set_len calls that did not.
    pub set_lens_dropped: u64,
}

/// The errno an injected fault produces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultKind {
    /// `EIO` (5): the device failed.
    Eio,
    /// `ENOSPC` (28): the file system is full.
    Enospc,
}

impl FaultKind {
    /// The errno, as `IoError::Os` carries it.
    pub fn errno(self) -> i32 {
        match self {
            FaultKind::Eio => EIO,
            FaultKind::Enospc => ENOSPC,
        }
    }

    fn message(self) -> &'static str {
        match self {
            FaultKind::Eio => "Input/output error (injected by SimFs)",
            FaultKind::Enospc => "No space left on device (injected by SimFs)",
        }
    }
}

/// Which operations a [`Fault`] counts and fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultOn {
    /// `File::write_at`.
    Write,
    /// `File::sync` calls that would issue an fsync (not the no-op ones).
    Sync,
}

/// An injected failure: the `nth` (1-based; 0 counts as 1) matching
/// operation after [`SimFs::inject`] fails with `kind`. With `sticky`,
/// every matching operation from the `nth` on fails (a disk that stays
/// full or broken) until `clear_faults` or `crash`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fault {
    pub kind: FaultKind,
    pub on: FaultOn,
    pub nth: u64,
    /// Only operations on files whose path contains this string count.
    pub path_contains: Option<String>,
    pub sticky: bool,
}

impl Fault {
    /// Fails the `nth` write from now on, any file.
    pub fn write(kind: FaultKind, nth: u64) -> Fault {
        Fault {
            kind,
            on: FaultOn::Write,
            nth,
            path_contains: None,
            sticky: false,
        }
    }

    /// Fails the `nth` fsync-issuing sync from now on, any file.
    pub fn sync(kind: FaultKind, nth: u64) -> Fault {
        Fault {
            on: FaultOn::Sync,
            ..Fault::write(kind, nth)
        }
    }

    /// Restricts the fault to paths containing `s`.
    pub fn on_path(mut self, s: impl Into<String>) -> Fault {
        self.path_contains = Some(s.into());
        self
    }

    /// Keeps failing after the `nth` operation.
    pub fn make_sticky(mut self) -> Fault {
        self.sticky = true;
        self
    }

    fn matches(&self, on: FaultOn, path: &Path) -> bool {
        self.on == on
            && match &self.path_contains {
                None => true,
                Some(s) => path.to_string_lossy().contains(s.as_str()),
            }
    }
}

/// Counters since the SimFs was created (crashes do not reset them).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SimStats {
    /// Operations that count towards `arm_crash_after`: write_at, set_len,
    /// sync and sync_dir calls (including failed ones). Run a workload
    /// once, read this, and you know the range of power-off points.
    pub ops: u64,
    /// Completed `write_at` calls.
    pub writes: u64,
    pub bytes_written: u64,
    /// Completed `read_at` calls.
    pub reads: u64,
    pub bytes_read: u64,
    /// Completed `File::sync` calls, including no-ops.
    pub sync_calls: u64,
    /// Completed syncs that issued an fsync (returned `Ok(true)`).
    pub syncs: u64,
    /// Completed `set_len` calls.
    pub set_lens: u64,
    /// Completed `sync_dir` calls.
    pub dir_syncs: u64,
    /// Injected faults that fired.
    pub faults_fired: u64,
    /// Pending writes forgotten because their file's sync failed.
    pub writes_lost_to_failed_sync: u64,
    /// `crash()` calls.
    pub crashes: u64,
}

#[derive(Default)]
struct Counters {
    ops: AtomicU64,
    writes: AtomicU64,
    bytes_written: AtomicU64,
    reads: AtomicU64,
    bytes_read: AtomicU64,
    sync_calls: AtomicU64,
    syncs: AtomicU64,
    set_lens: AtomicU64,
    dir_syncs: AtomicU64,
    faults_fired: AtomicU64,
    writes_lost_to_failed_sync: AtomicU64,
    crashes: AtomicU64,
}

fn bump(c: &AtomicU64, n: u64) {
    c.fetch_add(n, Ordering::Relaxed);
}

impl Counters {
    fn snapshot(&self) -> SimStats {
        let g = |c: &AtomicU64| c.load(Ordering::Relaxed);
        SimStats {
            ops: g(&self.ops),
            writes: g(&self.writes),
            bytes_written: g(&self.bytes_written),
            reads: g(&self.reads),
            bytes_read: g(&self.bytes_read),
            sync_calls: g(&self.sync_calls),
            syncs: g(&self.syncs),
            set_lens: g(&self.set_lens),
            dir_syncs: g(&self.dir_syncs),
            faults_fired: g(&self.faults_fired),
            writes_lost_to_failed_sync: g(&self.writes_lost_to_failed_sync),
            crashes: g(&self.crashes),
        }
    }
}

/// An operation since the last sync, kept for the crash decision.
#[derive(Clone)]
enum Pending {
    Write { offset: u64, data: Vec<u8> },
    SetLen(u64),
}

/// The content of one file (an inode; several paths over time, several
/// handles at once).
#[derive(Default, Clone)]
struct Node {
    volatile: Vec<u8>,
    durable: Vec<u8>,
    pending: Vec<Pending>,
    /// The size changed since the last fsync in a way the file's
    /// write mode does not make durable by itself (decides whether the
    /// conditional syncs of O_DSYNC and O_DIRECT_NO_FSYNC do anything).
    size_changed: bool,
    /// Last change of the contents (wall clock; None: never written).
    modified: Option<std::time::SystemTime>,
}

/// Copies `data` into `content` at `offset`, zero-filling any gap.
/// Callers guarantee `offset + data.len()` fits in `usize`.
fn apply_write(content: &mut Vec<u8>, offset: u64, data: &[u8]) {
    let start = offset as usize;
    let end = start + data.len();
    if content.len() < end {
        content.resize(end, 0);
    }
    content[start..end].copy_from_slice(data);
}

impl Node {
    /// Makes every pending operation durable, in order.
    fn flush_pending(&mut self) {
        for p in self.pending.drain(..) {
            match p {
                Pending::Write { offset, data } => apply_write(&mut self.durable, offset, &data),
                Pending::SetLen(len) => self.durable.resize(len as usize, 0),
            }
        }
    }
}

type NodeRef = Arc<Mutex<Node>>;

/// Splits `[offset, offset + len)` at multiples of `sector`; returns the
/// pieces as ranges relative to `offset`.
fn sector_pieces(offset: u64, len: usize, sector: u64) -> Vec<(usize, usize)> {
    let end = offset + len as u64;
    let mut pieces = Vec::with_capacity((len as u64 / sector + 2) as usize);
    let mut pos = offset;
    while pos < end {
        let next = ((pos / sector + 1) * sector).min(end);
        pieces.push(((pos - offset) as usize, (next - offset) as usize));
        pos = next;
    }
    pieces
}

/// The directory tree. Invariant: every key of `files` and `dirs` has a
/// parent that is the root or in `dirs`.
#[derive(Default)]
struct Namespace {
    files: BTreeMap<PathBuf, NodeRef>,
    dirs: BTreeSet<PathBuf>,
}

fn is_root(p: &Path) -> bool {
    p.as_os_str().is_empty() || p == Path::new("/")
}

impl Namespace {
    fn dir_exists(&self, p: &Path) -> bool {
        is_root(p) || self.dirs.contains(p)
    }

    fn parent_exists(&self, p: &Path) -> bool {
        match p.parent() {
            Some(parent) => self.dir_exists(parent),
            None => false,
        }
    }
}

/// The power-off point and the injected faults.
struct Control {
    /// `Some(n)`: n more counted operations complete, the next one is
    /// interrupted.
    countdown: Option<u64>,
    faults: Vec<ArmedFault>,
    /// Decides the prefix of an interrupted write.
    rng: Rng,
}

struct ArmedFault {
    fault: Fault,
    seen: u64,
}

#[derive(Clone, Copy)]
enum Op {
    Write,
    SetLen,
    Sync { would_fsync: bool },
    SyncDir,
}

/// What the controller says about an operation.
enum Verdict {
    Go,
    Fail(IoError),
    /// The machine just went down during this operation.
    PowerOff(Rng),
}

struct Shared {
    flush_method: FlushMethod,
    ns: Mutex<Namespace>,
    /// Boot number; bumped by every crash. Handles remember theirs.
    epoch: AtomicU64,
    /// Powered off by an armed crash point; cleared by crash().
    down: AtomicBool,
    /// Mirrors "control has a countdown or faults", so the common path
    /// skips the controller mutex.
    control_active: AtomicBool,
    control: Mutex<Control>,
    stats: Counters,
    /// See [`Vfs::steps_background`].
    steps_background: AtomicBool,
}

impl Shared {
    fn check_up(&self, op: &'static str, path: &Path) -> Result<()> {
        if self.down.load(Ordering::Acquire) {
            return Err(IoError::Crashed {
                op,
                path: path.to_path_buf(),
            });
        }
        Ok(())
    }

    fn set_active(&self, c: &Control) {
        self.control_active.store(
            c.countdown.is_some() || !c.faults.is_empty(),
            Ordering::Release,
        );
    }

    /// Counts a crash-point operation and consults the controller.
    fn hook(&self, op: Op, path: &Path) -> Verdict {
        bump(&self.stats.ops, 1);
        if !self.control_active.load(Ordering::Acquire) {
            return Verdict::Go;
        }
        let mut c = self.control.lock();
        if let Some(n) = c.countdown {
            if n == 0 {
                c.countdown = None;
                self.down.store(true, Ordering::Release);
                let rng = c.rng.fork();
                self.set_active(&c);
                return Verdict::PowerOff(rng);
            }
            c.countdown = Some(n - 1);
        }
        let on = match op {
            Op::Write => FaultOn::Write,
            Op::Sync { would_fsync: true } => FaultOn::Sync,
            _ => return Verdict::Go,
        };
        let mut fired: Option<usize> = None;
        for (i, armed) in c.faults.iter_mut().enumerate() {
            if !armed.fault.matches(on, path) {
                continue;
            }
            armed.seen += 1;
            let nth = armed.fault.nth.max(1);
            let hit = armed.seen == nth || (armed.fault.sticky && armed.seen > nth);
            if hit && fired.is_none() {
                fired = Some(i);
            }
        }
        let Some(i) = fired else {
            return Verdict::Go;
        };
        let fault = c.faults[i].fault.clone();
        if !fault.sticky {
            c.faults.remove(i);
            self.set_active(&c);
        }
        drop(c);
        bump(&self.stats.faults_fired, 1);
        Verdict::Fail(IoError::Os {
            op: match on {
                FaultOn::Write => "write",
                FaultOn::Sync => "fsync",
            },
            path: path.to_path_buf(),
            errno: fault.kind.errno(),
            msg: fault.kind.message().to_string(),
        })
    }
}

/// The in-memory crash-simulating file system. Cloning is cheap and gives
/// another handle on the same files.
#[derive(Clone)]
pub struct SimFs {
    shared: Arc<Shared>,
}

impl fmt::Debug for SimFs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // try_lock: Debug must not deadlock when printed mid-operation.
        let mut d = f.debug_struct("SimFs");
        d.field("flush_method", &self.shared.flush_method);
        match self.shared.ns.try_lock() {
            Some(ns) => d.field("files", &ns.files.len()),
            None => d.field("files", &"<locked>"),
        };
        d.field("down", &self.is_down()).finish()
    }
}

/// How writes of one handle become durable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum WriteMode {
    /// Durable at sync.
    Buffered,
    /// `O_DSYNC` log file: durable on return.
    Dsync,
    /// `O_DIRECT` data file: durable on return inside the durable length.
    Direct { no_fsync: bool },
}

impl SimFs {
    /// An empty file system applying `flush_method`. The generator for
    /// interrupted writes starts from seed 0 (see [`SimFs::reseed`]).
    pub fn new(flush_method: FlushMethod) -> SimFs {
        SimFs {
            shared: Arc::new(Shared {
                flush_method,
                ns: Mutex::new(Namespace::default()),
                epoch: AtomicU64::new(0),
                down: AtomicBool::new(false),
                control_active: AtomicBool::new(false),
                control: Mutex::new(Control {
                    countdown: None,
                    faults: Vec::new(),
                    rng: Rng::new(0),
                }),
                stats: Counters::default(),
                steps_background: AtomicBool::new(false),
            }),
        }
    }

    /// Reseeds the generator that picks how much of an interrupted write
    /// lands (`arm_crash_after`). `crash(_, seed)` also reseeds it from
    /// `seed`.
    pub fn reseed(&self, seed: u64) {
        self.shared.control.lock().rng = Rng::new(seed);
    }

    /// Powers the machine off during the operation after the next `ops`
    /// counted operations (write_at, set_len, sync, sync_dir). `0` means
    /// the very next one. Replaces an earlier arming.
    pub fn arm_crash_after(&self, ops: u64) {
        let mut c = self.shared.control.lock();
        c.countdown = Some(ops);
        self.shared.set_active(&c);
    }

    /// A second machine whose disk holds a copy of this one's files, in
    /// the same state (durable and volatile bytes, pending operations);
    /// nothing is shared from then on. A crash test forks the disk after a
    /// crash to try recovery from one state many times (one interrupted
    /// recovery per I/O operation). Paths that share a file here share
    /// one in the copy. Stale handles of this machine do not reach it.
    pub fn fork(&self) -> SimFs {
        let ns = self.shared.ns.lock();
        let copy = SimFs::new(self.shared.flush_method);
        copy.set_steps_background(self.steps_background());
        {
            let mut to = copy.shared.ns.lock();
            let mut seen: Vec<(*const Mutex<Node>, NodeRef)> = Vec::new();
            for (path, node) in &ns.files {
                let key = Arc::as_ptr(node);
                let new = match seen.iter().find(|(k, _)| *k == key) {
                    Some((_, n)) => n.clone(),
                    None => {
                        let n: NodeRef = Arc::new(Mutex::new(node.lock().clone()));
                        seen.push((key, n.clone()));
                        n
                    }
                };
                to.files.insert(path.clone(), new);
            }
            to.dirs = ns.dirs.clone();
        }
        copy
    }

    /// Asks the store to run its background work at the deterministic
    /// points of recovery (see [`Vfs::steps_background`]).
    pub fn set_steps_background(&self, on: bool) {
        self.shared.steps_background.store(on, Ordering::Release);
    }

    /// Cancels an armed power-off point. A machine already down stays down
    /// until `crash()`.
    pub fn disarm(&self) {
        let mut c = self.shared.control.lock();
        c.countdown = None;
        self.shared.set_active(&c);
    }

    /// Whether an armed power-off point has fired (every operation fails
    /// with `Crashed` until `crash()`).
    pub fn is_down(&self) -> bool {
        self.shared.down.load(Ordering::Acquire)
    }

    /// Arms a fault; see [`Fault`].
    pub fn inject(&self, fault: Fault) {
        let mut c = self.shared.control.lock();
        c.faults.push(ArmedFault { fault, seen: 0 });
        self.shared.set_active(&c);
    }

    /// Removes every injected fault.
    pub fn clear_faults(&self) {
        let mut c = self.shared.control.lock();
        c.faults.clear();
        self.shared.set_active(&c);
    }

    /// A snapshot of the counters.
    pub fn stats(&self) -> SimStats {
        self.shared.stats.snapshot()
    }

    /// Crashes and reboots the machine: decides what of every pending
    /// operation survives (see the module doc), makes each file's content
    /// its durable content, clears the down state, armed power-off points
    /// and injected faults, and invalidates every open handle.
    ///
    /// # Panics
    ///
    /// If `mode` is `Power { sector: 0 }`.
    pub fn crash(&self, mode: CrashMode, seed: u64) -> CrashReport {
        if let CrashMode::Power { sector } = mode {
            assert!(sector > 0, "SimFs::crash: sector size must be non-zero");
        }
        let sh = &self.shared;
        // Holding the namespace lock keeps opens, renames and removals out
        // until the reboot is complete.
        let ns = sh.ns.lock();
        // From here on, stale handles fail at their next file-lock check.
        sh.epoch.fetch_add(1, Ordering::AcqRel);
        let mut rng = Rng::new(seed);
        let mut report = CrashReport::default();
        for node in ns.files.values() {
            let mut node = node.lock();
            if !node.pending.is_empty() {
                report.files_affected += 1;
            }
            match mode {
                CrashMode::Process => {
                    report.writes_kept += node
                        .pending
                        .iter()
                        .filter(|p| matches!(p, Pending::Write { .. }))
                        .count() as u64;
                    report.set_lens_kept += node
                        .pending
                        .iter()
                        .filter(|p| matches!(p, Pending::SetLen(_)))
                        .count() as u64;
                    node.flush_pending();
                }
                CrashMode::Power { sector } => {
                    power_cut(&mut node, sector as u64, &mut rng, &mut report);
                }
            }
            let n = &mut *node;
            n.volatile.clear();
            n.volatile.extend_from_slice(&n.durable);
            n.size_changed = false;
        }
        {
            let mut c = sh.control.lock();
            c.countdown = None;
            c.faults.clear();
            c.rng = rng.fork();
            sh.set_active(&c);
        }
        sh.down.store(false, Ordering::Release);
        bump(&sh.stats.crashes, 1);
        drop(ns);
        report
    }

    fn node(&self, path: &Path) -> Option<NodeRef> {
        self.shared.ns.lock().files.get(path).cloned()
    }

    /// What reads of `path` see now (`None` if there is no such file).
    pub fn file_bytes(&self, path: &Path) -> Option<Vec<u8>> {
        self.node(path).map(|n| n.lock().volatile.clone())
    }

    /// What `path` would hold if every pending operation were lost.
    pub fn durable_bytes(&self, path: &Path) -> Option<Vec<u8>> {
        self.node(path).map(|n| n.lock().durable.clone())
    }

    /// Number of pending (unsynced) operations on `path`.
    pub fn pending_ops(&self, path: &Path) -> usize {
        self.node(path).map_or(0, |n| n.lock().pending.len())
    }

    /// Every file path, sorted.
    pub fn files(&self) -> Vec<PathBuf> {
        self.shared.ns.lock().files.keys().cloned().collect()
    }

    /// XORs the byte at `offset` of `path` with `xor` in the volatile and
    /// durable content and in every pending write covering it: bit rot
    /// that no crash outcome can undo, for testing checksum detection.
    /// Returns whether any copy of that byte existed.
    pub fn corrupt(&self, path: &Path, offset: u64, xor: u8) -> bool {
        let Some(node) = self.node(path) else {
            return false;
        };
        let mut guard = node.lock();
        let n = &mut *guard;
        let mut hit = false;
        let i = offset as usize;
        for content in [&mut n.volatile, &mut n.durable] {
            if let Some(b) = content.get_mut(i) {
                *b ^= xor;
                hit = true;
            }
        }
        for p in n.pending.iter_mut() {
            if let Pending::Write { offset: o, data } = p {
                if offset >= *o && offset < *o + data.len() as u64 {
                    data[(offset - *o) as usize] ^= xor;
                    hit = true;
                }
            }
        }
        hit
    }

    fn write_mode(&self, kind: FileKind) -> WriteMode {
        match (self.shared.flush_method, kind) {
            (FlushMethod::ODsync, FileKind::Log) => WriteMode::Dsync,
            (FlushMethod::ODirect, FileKind::Data) => WriteMode::Direct { no_fsync: false },
            (FlushMethod::ODirectNoFsync, FileKind::Data) => WriteMode::Direct { no_fsync: true },
            _ => WriteMode::Buffered,
        }
    }
}

/// Decides the fate of `node`'s pending operations under a power cut.
fn power_cut(node: &mut Node, sector: u64, rng: &mut Rng, report: &mut CrashReport) {
    let pending = std::mem::take(&mut node.pending);
    for p in pending {
        match p {
            Pending::SetLen(len) => {
                if rng.below(2) == 0 {
                    node.durable.resize(len as usize, 0);
                    report.set_lens_kept += 1;
                } else {
                    report.set_lens_dropped += 1;
                }
            }
            Pending::Write { offset, data } => {
                let pieces = sector_pieces(offset, data.len(), sector);
                let mut fate = rng.below(3);
                if fate == 2 && pieces.len() < 2 {
                    // Nothing to tear inside one sector: keep or drop.
                    fate = rng.below(2);
                }
                match fate {
                    0 => {
                        apply_write(&mut node.durable, offset, &data);
                        report.writes_kept += 1;
                    }
                    1 => report.writes_dropped += 1,
                    _ => {
                        report.writes_torn += 1;
                        for (a, b) in pieces {
                            if rng.below(2) == 0 {
                                apply_write(&mut node.durable, offset + a as u64, &data[a..b]);
                            } else {
                                report.sectors_lost += 1;
                            }
                        }
                    }
                }
            }
        }
    }
}

impl Vfs for SimFs {
    fn open(&self, path: &Path, opts: OpenOptions) -> Result<Arc<dyn File>> {
        let sh = &self.shared;
        sh.check_up("open", path)?;
        let mut ns = sh.ns.lock();
        // Read the epoch under the namespace lock: crash() bumps it under
        // the same lock, so a handle can never be born stale-but-unaware.
        let epoch = sh.epoch.load(Ordering::Acquire);
        if ns.dir_exists(path) {
            return Err(os_err("open", path, EISDIR, "is a directory"));
        }
        let node = match ns.files.get(path) {
            Some(node) => {
                if opts.create_new {
                    return Err(os_err("open", path, EEXIST, "file exists"));
                }
                node.clone()
            }
            None => {
                if !(opts.create || opts.create_new) || !ns.parent_exists(path) {
                    return Err(IoError::NotFound {
                        path: path.to_path_buf(),
                    });
                }
                let node = NodeRef::default();
                node.lock().modified = Some(std::time::SystemTime::now());
                ns.files.insert(path.to_path_buf(), node.clone());
                node
            }
        };
        drop(ns);
        Ok(Arc::new(SimFile {
            shared: sh.clone(),
            node,
            path: path.to_path_buf(),
            mode: self.write_mode(opts.kind),
            epoch,
        }))
    }

    fn exists(&self, path: &Path) -> Result<bool> {
        self.shared.check_up("stat", path)?;
        let ns = self.shared.ns.lock();
        Ok(ns.files.contains_key(path) || ns.dir_exists(path))
    }

    fn is_dir(&self, path: &Path) -> Result<bool> {
        self.shared.check_up("stat", path)?;
        Ok(self.shared.ns.lock().dir_exists(path))
    }

    fn create_dir_all(&self, path: &Path) -> Result<()> {
        self.shared.check_up("mkdir", path)?;
        let mut ns = self.shared.ns.lock();
        // Validate every ancestor first so a failure creates nothing.
        for a in path.ancestors() {
            if ns.files.contains_key(a) {
                let (errno, msg) = if a == path {
                    (EEXIST, "file exists")
                } else {
                    (ENOTDIR, "a path component is a file")
                };
                return Err(os_err("mkdir", path, errno, msg));
            }
        }
        for a in path.ancestors() {
            if is_root(a) || !ns.dirs.insert(a.to_path_buf()) {
                // Already there: so are its ancestors (namespace invariant).
                break;
            }
        }
        Ok(())
    }

    fn remove_file(&self, path: &Path) -> Result<()> {
        self.shared.check_up("unlink", path)?;
        let mut ns = self.shared.ns.lock();
        if ns.dir_exists(path) {
            return Err(os_err("unlink", path, EISDIR, "is a directory"));
        }
        match ns.files.remove(path) {
            Some(_) => Ok(()),
            None => Err(IoError::NotFound {
                path: path.to_path_buf(),
            }),
        }
    }

    fn remove_dir(&self, path: &Path) -> Result<()> {
        self.shared.check_up("rmdir", path)?;
        let mut ns = self.shared.ns.lock();
        if !ns.dirs.contains(path) {
            return Err(IoError::NotFound {
                path: path.to_path_buf(),
            });
        }
        let busy = ns.files.keys().any(|f| f.starts_with(path))
            || ns.dirs.iter().any(|d| d != path && d.starts_with(path));
        if busy {
            return Err(os_err("rmdir", path, ENOTEMPTY, "directory not empty"));
        }
        ns.dirs.remove(path);
        Ok(())
    }

    fn rename(&self, from: &Path, to: &Path) -> Result<()> {
        self.shared.check_up("rename", from)?;
        let mut ns = self.shared.ns.lock();
        if ns.files.contains_key(from) {
            if from == to {
                return Ok(());
            }
            if ns.dir_exists(to) {
                return Err(os_err("rename", to, EISDIR, "target is a directory"));
            }
            if !ns.parent_exists(to) {
                return Err(IoError::NotFound {
                    path: to.to_path_buf(),
                });
            }
            let node = ns.files.remove(from).expect("checked above");
            // Replacing an existing target orphans its node, like unlink.
            ns.files.insert(to.to_path_buf(), node);
            return Ok(());
        }
        if !is_root(from) && ns.dirs.contains(from) {
            if from == to {
                return Ok(());
            }
            if to.starts_with(from) {
                return Err(os_err(
                    "rename",
                    to,
                    EINVAL,
                    "cannot move a directory into itself",
                ));
            }
            if ns.files.contains_key(to) || ns.dir_exists(to) {
                return Err(os_err(
                    "rename",
                    to,
                    EEXIST,
                    "target exists (SimFs does not replace directories)",
                ));
            }
            if !ns.parent_exists(to) {
                return Err(IoError::NotFound {
                    path: to.to_path_buf(),
                });
            }
            let moved_dirs: Vec<PathBuf> = ns
                .dirs
                .range::<Path, _>((Bound::Included(from), Bound::Unbounded))
                .take_while(|d| d.starts_with(from))
                .cloned()
                .collect();
            for d in moved_dirs {
                ns.dirs.remove(&d);
                let rel = d.strip_prefix(from).expect("descendant of from");
                ns.dirs.insert(to.join(rel));
            }
            let moved_files: Vec<PathBuf> = ns
                .files
                .range::<Path, _>((Bound::Excluded(from), Bound::Unbounded))
                .map(|(k, _)| k)
                .take_while(|k| k.starts_with(from))
                .cloned()
                .collect();
            for f in moved_files {
                let node = ns.files.remove(&f).expect("listed above");
                let rel = f.strip_prefix(from).expect("descendant of from");
                ns.files.insert(to.join(rel), node);
            }
            return Ok(());
        }
        Err(IoError::NotFound {
            path: from.to_path_buf(),
        })
    }

    fn modified(&self, path: &Path) -> Result<std::time::SystemTime> {
        self.shared.check_up("stat", path)?;
        let ns = self.shared.ns.lock();
        let node = ns.files.get(path).ok_or_else(|| IoError::NotFound {
            path: path.to_path_buf(),
        })?;
        let m = node.lock().modified;
        Ok(m.unwrap_or(std::time::UNIX_EPOCH))
    }

    fn list_dir(&self, dir: &Path) -> Result<Vec<String>> {
        self.shared.check_up("readdir", dir)?;
        let ns = self.shared.ns.lock();
        if !ns.dir_exists(dir) {
            return Err(IoError::NotFound {
                path: dir.to_path_buf(),
            });
        }
        // Descendants of `dir` sort right after it (Path orders by
        // components), so a range scan finds them.
        let after = (Bound::Excluded(dir), Bound::Unbounded);
        let files = ns.files.range::<Path, _>(after).map(|(k, _)| k);
        let dirs = ns.dirs.range::<Path, _>(after);
        let mut names: Vec<String> = files
            .take_while(|k| k.starts_with(dir))
            .chain(dirs.take_while(|k| k.starts_with(dir)))
            .filter(|k| k.parent() == Some(dir))
            .filter_map(|k| k.file_name())
            .map(|n| n.to_string_lossy().into_owned())
            .collect();
        names.sort();
        Ok(names)
    }

    fn sync_dir(&self, dir: &Path) -> Result<()> {
        let sh = &self.shared;
        sh.check_up("fsync dir", dir)?;
        if !sh.ns.lock().dir_exists(dir) {
            return Err(IoError::NotFound {
                path: dir.to_path_buf(),
            });
        }
        match sh.hook(Op::SyncDir, dir) {
            Verdict::Go => {}
            Verdict::Fail(e) => return Err(e),
            Verdict::PowerOff(_) => return Err(crashed("fsync dir", dir)),
        }
        // Directory operations are already durable (module doc).
        bump(&sh.stats.dir_syncs, 1);
        Ok(())
    }

    fn direct_io_alignment(&self) -> usize {
        SIM_DIRECT_IO_ALIGNMENT
    }

    fn flush_method(&self) -> FlushMethod {
        self.shared.flush_method
    }
    fn steps_background(&self) -> bool {
        self.shared.steps_background.load(Ordering::Acquire)
    }
}

fn os_err(op: &'static str, path: &Path, errno: i32, msg: &str) -> IoError {
    IoError::Os {
        op,
        path: path.to_path_buf(),
        errno,
        msg: msg.to_string(),
    }
}

fn crashed(op: &'static str, path: &Path) -> IoError {
    IoError::Crashed {
        op,
        path: path.to_path_buf(),
    }
}

/// An open SimFs file.
struct SimFile {
    shared: Arc<Shared>,
    node: NodeRef,
    path: PathBuf,
    mode: WriteMode,
    /// The boot this handle was opened in.
    epoch: u64,
}

impl fmt::Debug for SimFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SimFile")
            .field("path", &self.path)
            .field("mode", &self.mode)
            .field("epoch", &self.epoch)
            .finish()
    }
}

impl SimFile {
    /// The machine is up and this handle belongs to the current boot.
    /// Checked before an operation and again under the file lock before
    /// anything is changed.
    fn check_live(&self, op: &'static str) -> Result<()> {
        if self.shared.down.load(Ordering::Acquire)
            || self.shared.epoch.load(Ordering::Acquire) != self.epoch
        {
            return Err(crashed(op, &self.path));
        }
        Ok(())
    }

    fn check_align(&self, op: &'static str, addr: usize, len: usize, offset: u64) -> Result<()> {
        match self.mode {
            WriteMode::Direct { .. } => {
                check_direct_alignment(op, &self.path, addr, len, offset, SIM_DIRECT_IO_ALIGNMENT)
            }
            _ => Ok(()),
        }
    }

    /// `offset + len` as an in-memory size, or EFBIG.
    fn end(&self, op: &'static str, offset: u64, len: usize) -> Result<usize> {
        offset
            .checked_add(len as u64)
            .and_then(|e| usize::try_from(e).ok())
            .filter(|&e| e <= isize::MAX as usize)
            .ok_or_else(|| os_err(op, &self.path, EFBIG, "file too large for SimFs"))
    }

    /// Whether `sync()` on this handle issues an fsync now.
    fn would_fsync(&self, node: &Node) -> bool {
        match self.mode {
            WriteMode::Buffered | WriteMode::Direct { no_fsync: false } => true,
            // Conditional syncs fire when the size changed, or when
            // anything else is pending (a write that extended the file, or
            // one from a buffered handle on the same file): being more
            // eager than OsFs here only ever makes more data durable.
            WriteMode::Dsync | WriteMode::Direct { no_fsync: true } => {
                node.size_changed || !node.pending.is_empty()
            }
        }
    }
}

impl File for SimFile {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> Result<()> {
        self.check_live("read")?;
        self.check_align("read", buf.as_ptr() as usize, buf.len(), offset)?;
        let node = self.node.lock();
        self.check_live("read")?;
        let len = node.volatile.len() as u64;
        match offset.checked_add(buf.len() as u64) {
            Some(end) if end <= len => {
                let start = offset as usize;
                buf.copy_from_slice(&node.volatile[start..start + buf.len()]);
            }
            _ => {
                return Err(IoError::ShortRead {
                    path: self.path.clone(),
                    offset,
                    wanted: buf.len(),
                    len,
                })
            }
        }
        drop(node);
        bump(&self.shared.stats.reads, 1);
        bump(&self.shared.stats.bytes_read, buf.len() as u64);
        Ok(())
    }

    fn write_at(&self, buf: &[u8], offset: u64) -> Result<()> {
        self.check_live("write")?;
        self.check_align("write", buf.as_ptr() as usize, buf.len(), offset)?;
        let end = self.end("write", offset, buf.len())?;
        match self.shared.hook(Op::Write, &self.path) {
            Verdict::Go => {}
            Verdict::Fail(e) => return Err(e),
            Verdict::PowerOff(mut rng) => {
                // Interrupted mid-write: a prefix of the sector pieces
                // reached the page cache / device.
                let pieces = sector_pieces(offset, buf.len(), INTERRUPT_SECTOR);
                let k = rng.below(pieces.len() as u64 + 1) as usize;
                if k > 0 {
                    let mut node = self.node.lock();
                    if self.shared.epoch.load(Ordering::Acquire) == self.epoch {
                        let part = &buf[..pieces[k - 1].1];
                        apply_write(&mut node.volatile, offset, part);
                        node.pending.push(Pending::Write {
                            offset,
                            data: part.to_vec(),
                        });
                    }
                }
                return Err(crashed("write", &self.path));
            }
        }
        if buf.is_empty() {
            // pwrite of nothing: no change, not even to the size.
            bump(&self.shared.stats.writes, 1);
            return Ok(());
        }
        let mut guard = self.node.lock();
        self.check_live("write")?;
        let node = &mut *guard;
        let grows = end > node.volatile.len();
        apply_write(&mut node.volatile, offset, buf);
        node.modified = Some(std::time::SystemTime::now());
        match self.mode {
            WriteMode::Dsync => {
                // write + fdatasync: everything earlier becomes durable too.
                node.flush_pending();
                apply_write(&mut node.durable, offset, buf);
                node.size_changed = false;
            }
            WriteMode::Direct { .. } if node.pending.is_empty() && end <= node.durable.len() => {
                apply_write(&mut node.durable, offset, buf);
            }
            _ => {
                node.pending.push(Pending::Write {
                    offset,
                    data: buf.to_vec(),
                });
                if grows {
                    node.size_changed = true;
                }
            }
        }
        drop(guard);
        bump(&self.shared.stats.writes, 1);
        bump(&self.shared.stats.bytes_written, buf.len() as u64);
        Ok(())
    }

    fn sync(&self) -> Result<bool> {
        self.check_live("fsync")?;
        let mut node = self.node.lock();
        self.check_live("fsync")?;
        let would_fsync = self.would_fsync(&node);
        match self.shared.hook(Op::Sync { would_fsync }, &self.path) {
            Verdict::Go => {}
            Verdict::Fail(e) => {
                // Linux after a failed fsync: the dirty pages are marked
                // clean and their data will never reach the disk, whatever
                // later syncs report. Reads still see it.
                let lost = node
                    .pending
                    .iter()
                    .filter(|p| matches!(p, Pending::Write { .. }))
                    .count() as u64;
                node.pending.clear();
                drop(node);
                bump(&self.shared.stats.writes_lost_to_failed_sync, lost);
                return Err(e);
            }
            Verdict::PowerOff(_) => return Err(crashed("fsync", &self.path)),
        }
        if would_fsync {
            node.flush_pending();
            node.size_changed = false;
        }
        drop(node);
        bump(&self.shared.stats.sync_calls, 1);
        if would_fsync {
            bump(&self.shared.stats.syncs, 1);
        }
        Ok(would_fsync)
    }

    fn set_len(&self, len: u64) -> Result<()> {
        self.check_live("ftruncate")?;
        let new_len = self.end("ftruncate", len, 0)?;
        match self.shared.hook(Op::SetLen, &self.path) {
            Verdict::Go => {}
            Verdict::Fail(e) => return Err(e),
            Verdict::PowerOff(_) => return Err(crashed("ftruncate", &self.path)),
        }
        let mut node = self.node.lock();
        self.check_live("ftruncate")?;
        if node.volatile.len() != new_len {
            node.size_changed = true;
        }
        node.volatile.resize(new_len, 0);
        node.modified = Some(std::time::SystemTime::now());
        node.pending.push(Pending::SetLen(len));
        drop(node);
        bump(&self.shared.stats.set_lens, 1);
        Ok(())
    }

    fn allocate(&self, len: u64) -> Result<()> {
        self.check_live("fallocate")?;
        if self.len()? >= len {
            return Ok(());
        }
        // Reserving blocks is where a full device says ENOSPC: injected
        // write faults (Fault::write) fire here too.
        match self.shared.hook(Op::Write, &self.path) {
            Verdict::Go => {}
            Verdict::Fail(e) => return Err(e),
            Verdict::PowerOff(_) => return Err(crashed("fallocate", &self.path)),
        }
        self.set_len(len)
    }

    fn len(&self) -> Result<u64> {
        self.check_live("stat")?;
        let node = self.node.lock();
        self.check_live("stat")?;
        Ok(node.volatile.len() as u64)
    }

    fn path(&self) -> &Path {
        &self.path
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::AlignedBuf;

    const SECTOR: usize = 512;

    fn p(s: &str) -> PathBuf {
        PathBuf::from(s)
    }

    /// A SimFs with `/db` created.
    fn fs(method: FlushMethod) -> SimFs {
        let fs = SimFs::new(method);
        fs.create_dir_all(&p("/db")).expect("mkdir");
        fs
    }

    fn open(fs: &SimFs, path: &str, kind: FileKind) -> Arc<dyn File> {
        fs.open(&p(path), OpenOptions::create(kind)).expect("open")
    }

    fn power(sector: usize) -> CrashMode {
        CrashMode::Power { sector }
    }

    #[test]
    fn fork_copies_the_disk_and_shares_nothing() {
        let fs = fs(FlushMethod::Fsync);
        fs.set_steps_background(true);
        let f = open(&fs, "/db/t.ibd", FileKind::Data);
        f.write_at(b"durable", 0).expect("write");
        assert!(f.sync().expect("sync"));
        f.write_at(b"pending", 0).expect("write");
        let copy = fs.fork();
        assert!(copy.steps_background());
        assert_eq!(copy.pending_ops(&p("/db/t.ibd")), 1);
        assert_eq!(copy.file_bytes(&p("/db/t.ibd")).expect("file"), b"pending");
        assert_eq!(
            copy.durable_bytes(&p("/db/t.ibd")).expect("file"),
            b"durable"
        );
        // A crash of the copy leaves the original as it was, and the
        // original's handle never reaches the copy.
        copy.crash(power(SECTOR), 3);
        f.write_at(b"later!!", 0).expect("write");
        assert_eq!(fs.file_bytes(&p("/db/t.ibd")).expect("file"), b"later!!");
        assert_eq!(fs.pending_ops(&p("/db/t.ibd")), 2);
        assert_eq!(copy.pending_ops(&p("/db/t.ibd")), 0);
        assert_ne!(copy.file_bytes(&p("/db/t.ibd")).expect("file"), b"later!!");
        assert!(copy.exists(&p("/db")).expect("exists"));
    }

    #[test]
    fn process_crash_keeps_every_completed_write() {
        let fs = fs(FlushMethod::Fsync);
        let f = open(&fs, "/db/t.ibd", FileKind::Data);
        f.write_at(b"durable", 0).expect("write");
        assert!(f.sync().expect("sync"));
        f.write_at(b"VOLATILE", 0).expect("write");
        f.write_at(b"tail", 100).expect("write");
        f.set_len(50).expect("truncate");
        assert_eq!(fs.durable_bytes(&p("/db/t.ibd")).expect("file"), b"durable");
        let before = fs.file_bytes(&p("/db/t.ibd")).expect("file");
        let r = fs.crash(CrashMode::Process, 1);
        assert_eq!(r.writes_kept, 2);
        assert_eq!(r.set_lens_kept, 1);
        assert_eq!(r.files_affected, 1);
        assert_eq!(fs.durable_bytes(&p("/db/t.ibd")).expect("file"), before);
        assert_eq!(fs.file_bytes(&p("/db/t.ibd")).expect("file"), before);
        assert_eq!(before.len(), 50);
        assert_eq!(&before[..8], b"VOLATILE");
        assert_eq!(fs.pending_ops(&p("/db/t.ibd")), 0);
    }

    #[test]
    fn power_crash_sectors_are_old_or_new_never_mixed() {
        let (mut all_old, mut all_new, mut mixed) = (0, 0, 0);
        for seed in 0..300 {
            let fs = fs(FlushMethod::Fsync);
            let f = open(&fs, "/db/t.ibd", FileKind::Data);
            f.write_at(&[0xAA; 4 * SECTOR], 0).expect("write");
            f.sync().expect("sync");
            f.write_at(&[0xBB; 4 * SECTOR], 0).expect("write");
            let r = fs.crash(power(SECTOR), seed);
            assert_eq!(r.writes_kept + r.writes_dropped + r.writes_torn, 1);
            let d = fs.durable_bytes(&p("/db/t.ibd")).expect("file");
            assert_eq!(d.len(), 4 * SECTOR);
            let mut new = 0;
            for s in d.chunks(SECTOR) {
                assert!(
                    s.iter().all(|&b| b == 0xAA) || s.iter().all(|&b| b == 0xBB),
                    "seed {seed}: a sector mixes old and new"
                );
                new += usize::from(s[0] == 0xBB);
            }
            assert_eq!(
                r.sectors_lost as usize,
                if r.writes_torn == 1 { 4 - new } else { 0 }
            );
            match new {
                0 => all_old += 1,
                4 => all_new += 1,
                _ => mixed += 1,
            }
            // After the reboot, reads see the durable state.
            assert_eq!(fs.file_bytes(&p("/db/t.ibd")).expect("file"), d);
        }
        assert!(
            all_old > 50 && all_new > 50 && mixed > 50,
            "{all_old} {all_new} {mixed}"
        );
    }

    #[test]
    fn tearing_follows_absolute_sector_boundaries() {
        // offset 1000, len 8000, 4 KiB sectors: pieces [1000,4096),
        // [4096,8192), [8192,9000); each must be wholly old or new.
        assert_eq!(
            sector_pieces(1000, 8000, 4096),
            vec![(0, 3096), (3096, 7192), (7192, 8000)]
        );
        assert_eq!(sector_pieces(0, 1024, 512), vec![(0, 512), (512, 1024)]);
        assert_eq!(sector_pieces(10, 0, 512), vec![]);
        let mut seen_torn = false;
        for seed in 0..100 {
            let fs = fs(FlushMethod::Fsync);
            let f = open(&fs, "/db/x", FileKind::Other);
            f.write_at(&[1u8; 12288], 0).expect("write");
            f.sync().expect("sync");
            f.write_at(&[2u8; 8000], 1000).expect("write");
            let r = fs.crash(power(4096), seed);
            seen_torn |= r.writes_torn > 0;
            let d = fs.durable_bytes(&p("/db/x")).expect("file");
            assert!(d[..1000].iter().all(|&b| b == 1));
            assert!(d[9000..].iter().all(|&b| b == 1));
            for (a, b) in [(1000, 4096), (4096, 8192), (8192, 9000)] {
                let piece = &d[a..b];
                assert!(
                    piece.iter().all(|&x| x == piece[0]),
                    "seed {seed}: piece {a}..{b} is mixed"
                );
            }
        }
        assert!(seen_torn);
    }

    #[test]
    fn synced_data_always_survives() {
        for seed in 0..50 {
            let fs = fs(FlushMethod::Fsync);
            let a = open(&fs, "/db/a", FileKind::Data);
            let b = open(&fs, "/db/b", FileKind::Log);
            a.write_at(&[7u8; 2048], 0).expect("write");
            b.write_at(&[8u8; 1000], 0).expect("write");
            a.sync().expect("sync");
            b.sync().expect("sync");
            a.write_at(&[9u8; 2048], 4096).expect("unsynced write");
            fs.crash(power(SECTOR), seed);
            let da = fs.durable_bytes(&p("/db/a")).expect("a");
            assert_eq!(&da[..2048], &[7u8; 2048][..]);
            assert_eq!(fs.file_bytes(&p("/db/b")).expect("b"), vec![8u8; 1000]);
            // The unsynced write either extended the file or did not.
            assert!(da.len() == 2048 || da.len() > 4096, "{}", da.len());
        }
    }

    /// A workload over several files; returns every file's bytes after a
    /// power crash with `seed`, and the report.
    fn scenario(seed: u64) -> (Vec<(PathBuf, Vec<u8>)>, CrashReport) {
        let fs = fs(FlushMethod::Fsync);
        let mut rng = Rng::new(1234);
        let files: Vec<_> = ["/db/c", "/db/a", "/db/b"]
            .iter()
            .map(|n| open(&fs, n, FileKind::Data))
            .collect();
        for i in 0..200u64 {
            let f = &files[rng.below(3) as usize];
            let mut buf = vec![0u8; rng.range(1, 5000) as usize];
            rng.fill(&mut buf);
            f.write_at(&buf, rng.below(40_000)).expect("write");
            if i % 37 == 0 {
                f.sync().expect("sync");
            }
            if i % 53 == 0 {
                f.set_len(rng.below(50_000)).expect("set_len");
            }
        }
        let report = fs.crash(power(SECTOR), seed);
        let state = fs
            .files()
            .into_iter()
            .map(|path| {
                let bytes = fs.file_bytes(&path).expect("file");
                (path, bytes)
            })
            .collect();
        (state, report)
    }

    #[test]
    fn same_seed_same_result() {
        let (s1, r1) = scenario(99);
        let (s2, r2) = scenario(99);
        assert_eq!(r1, r2);
        assert_eq!(s1, s2);
        assert!(r1.writes_kept > 0 && r1.writes_dropped > 0 && r1.writes_torn > 0);
        let (s3, _) = scenario(100);
        assert_ne!(s1, s3, "different seeds should differ somewhere");
    }

    #[test]
    fn pending_set_len_and_extension_zero_fill() {
        let mut outcomes = BTreeSet::new();
        for seed in 0..100 {
            let fs = fs(FlushMethod::Fsync);
            let f = open(&fs, "/db/g", FileKind::Data);
            f.write_at(&[5u8; 100], 0).expect("write");
            f.sync().expect("sync");
            f.set_len(1000).expect("grow");
            f.write_at(&[6u8; 10], 2000).expect("write far out");
            fs.crash(power(SECTOR), seed);
            let d = fs.file_bytes(&p("/db/g")).expect("file");
            assert_eq!(&d[..100], &[5u8; 100][..]);
            assert!(d[100..d.len().min(2000)].iter().all(|&b| b == 0));
            match d.len() {
                100 | 1000 => {}
                2010 => assert_eq!(&d[2000..], &[6u8; 10][..]),
                n => panic!("unexpected length {n}"),
            }
            outcomes.insert(d.len());
        }
        assert_eq!(
            outcomes.into_iter().collect::<Vec<_>>(),
            vec![100, 1000, 2010]
        );
    }

    #[test]
    fn fault_on_nth_write() {
        let fs = fs(FlushMethod::Fsync);
        let data = open(&fs, "/db/t.ibd", FileKind::Data);
        let log = open(&fs, "/db/ib_redo0", FileKind::Log);
        fs.inject(Fault::write(FaultKind::Eio, 3).on_path(".ibd"));
        data.write_at(b"1", 0).expect("first");
        log.write_at(b"x", 0).expect("other path does not count");
        data.write_at(b"2", 1).expect("second");
        match data.write_at(b"3", 2) {
            Err(e @ IoError::Os { .. }) => assert_eq!(e.errno(), Some(5)),
            other => panic!("expected EIO, got {other:?}"),
        }
        // A failed write changes nothing.
        assert_eq!(fs.file_bytes(&p("/db/t.ibd")).expect("file"), b"12");
        data.write_at(b"4", 2).expect("one-shot fault is gone");
        assert_eq!(fs.stats().faults_fired, 1);

        // A sticky ENOSPC: every write from the 2nd on fails.
        fs.inject(Fault::write(FaultKind::Enospc, 2).make_sticky());
        log.write_at(b"y", 1).expect("first");
        for _ in 0..3 {
            let e = log.write_at(b"z", 2).expect_err("disk full");
            assert_eq!(e.errno(), Some(28));
        }
        fs.clear_faults();
        log.write_at(b"z", 2).expect("space again");
    }

    #[test]
    fn fault_on_nth_sync() {
        let fs = fs(FlushMethod::Fsync);
        let f = open(&fs, "/db/t.ibd", FileKind::Data);
        fs.inject(Fault::sync(FaultKind::Eio, 2));
        f.write_at(b"a", 0).expect("write");
        assert!(f.sync().expect("first sync"));
        f.write_at(b"b", 1).expect("write");
        let e = f.sync().expect_err("second sync fails");
        assert_eq!(e.errno(), Some(5));
        assert!(f.sync().expect("third sync works"));
    }

    #[test]
    fn failed_fsync_then_successful_retry_is_not_durable() {
        for mode in [CrashMode::Process, power(SECTOR)] {
            let fs = fs(FlushMethod::Fsync);
            let f = open(&fs, "/db/t.ibd", FileKind::Data);
            f.write_at(b"old!", 0).expect("write");
            f.sync().expect("sync");
            f.write_at(b"NEW!", 0).expect("write");
            fs.inject(Fault::sync(FaultKind::Eio, 1));
            f.sync().expect_err("injected EIO");
            // The page cache still shows the data...
            assert_eq!(fs.file_bytes(&p("/db/t.ibd")).expect("file"), b"NEW!");
            // ...and a retried fsync "succeeds"...
            assert!(f.sync().expect("retry"));
            // ...but the data never reached the disk.
            assert_eq!(fs.durable_bytes(&p("/db/t.ibd")).expect("file"), b"old!");
            // Writes after the failure are durable normally.
            f.write_at(b"more", 4).expect("write");
            f.sync().expect("sync");
            fs.crash(mode, 7);
            assert_eq!(fs.file_bytes(&p("/db/t.ibd")).expect("file"), b"old!more");
            assert_eq!(fs.stats().writes_lost_to_failed_sync, 1);
        }
    }

    #[test]
    fn arm_crash_after_powers_off_mid_write() {
        let fs = fs(FlushMethod::Fsync);
        let f = open(&fs, "/db/t.ibd", FileKind::Data);
        f.write_at(&[1u8; 4096], 0).expect("setup");
        f.sync().expect("setup sync");
        fs.reseed(5);
        fs.arm_crash_after(2);
        f.write_at(&[2u8; 512], 0).expect("op 1");
        f.sync().expect("op 2");
        assert!(!fs.is_down());
        let e = f.write_at(&[3u8; 4096], 0).expect_err("op 3 crashes");
        assert!(matches!(e, IoError::Crashed { .. }), "{e:?}");
        assert!(fs.is_down());
        // Everything fails while the machine is down, reads included.
        assert!(matches!(
            f.read_at(&mut [0u8; 1], 0),
            Err(IoError::Crashed { .. })
        ));
        assert!(matches!(f.sync(), Err(IoError::Crashed { .. })));
        assert!(matches!(
            fs.open(&p("/db/t.ibd"), OpenOptions::existing(FileKind::Data)),
            Err(IoError::Crashed { .. })
        ));
        assert!(matches!(
            fs.list_dir(&p("/db")),
            Err(IoError::Crashed { .. })
        ));

        // The interrupted write landed as a prefix of 512-byte pieces.
        let v = fs.file_bytes(&p("/db/t.ibd")).expect("file");
        let k = v.chunks(512).take_while(|s| s[0] == 3).count();
        for (i, s) in v.chunks(512).enumerate() {
            let want = if i < k {
                3
            } else if i == 0 {
                2
            } else {
                1
            };
            assert!(s.iter().all(|&b| b == want), "sector {i}");
        }

        fs.crash(CrashMode::Process, 0);
        assert!(!fs.is_down());
        // Handles from before the reboot stay dead.
        assert!(matches!(f.len(), Err(IoError::Crashed { .. })));
        let g = fs
            .open(&p("/db/t.ibd"), OpenOptions::existing(FileKind::Data))
            .expect("reopen");
        let mut back = vec![0u8; 4096];
        g.read_at(&mut back, 0).expect("read");
        assert_eq!(back, v, "process crash keeps the partial write");
        g.write_at(b"alive", 0).expect("usable after reboot");
    }

    #[test]
    fn arm_crash_after_zero_and_disarm() {
        let fs = fs(FlushMethod::Fsync);
        let f = open(&fs, "/db/t", FileKind::Other);
        fs.arm_crash_after(0);
        fs.disarm();
        f.write_at(b"ok", 0).expect("disarmed");
        fs.arm_crash_after(0);
        assert!(matches!(f.set_len(10), Err(IoError::Crashed { .. })));
        assert_eq!(fs.file_bytes(&p("/db/t")).expect("file"), b"ok");
        assert!(matches!(
            fs.sync_dir(&p("/db")),
            Err(IoError::Crashed { .. })
        ));
        fs.crash(power(SECTOR), 3);
        fs.sync_dir(&p("/db")).expect("up again");
        assert_eq!(fs.stats().ops, 3);
    }

    #[test]
    fn odsync_log_writes_are_durable_without_sync() {
        let fs = fs(FlushMethod::ODsync);
        let log = open(&fs, "/db/ib_redo0", FileKind::Log);
        let data = open(&fs, "/db/t.ibd", FileKind::Data);
        log.write_at(&[1u8; 1536], 0).expect("write");
        data.write_at(&[2u8; 1536], 0).expect("write");
        assert_eq!(
            fs.durable_bytes(&p("/db/ib_redo0")).expect("log"),
            vec![1u8; 1536]
        );
        assert!(fs.durable_bytes(&p("/db/t.ibd")).expect("data").is_empty());
        assert!(!log.sync().expect("no-op"));
        // set_len is not covered by O_DSYNC: the next sync does fsync.
        log.set_len(4096).expect("size");
        assert!(log.sync().expect("sync after set_len"));
        assert_eq!(
            fs.durable_bytes(&p("/db/ib_redo0")).expect("log").len(),
            4096
        );
        assert!(!log.sync().expect("no-op again"));
        for seed in 0..20 {
            log.write_at(&[seed as u8; 512], 512).expect("write");
        }
        fs.crash(power(SECTOR), 11);
        let l = fs.file_bytes(&p("/db/ib_redo0")).expect("log");
        assert_eq!(&l[512..1024], &[19u8; 512][..]);
        let st = fs.stats();
        assert_eq!(st.syncs, 1);
        assert_eq!(st.sync_calls, 3);
    }

    #[test]
    fn odirect_data_files() {
        let fs = fs(FlushMethod::ODirect);
        assert_eq!(fs.direct_io_alignment(), 512);
        let f = open(&fs, "/db/t.ibd", FileKind::Data);
        let page = AlignedBuf::from_slice(&[4u8; 1024], 512);
        // Misaligned offset, length or address: EINVAL, nothing written.
        let e = f.write_at(&page, 100).expect_err("offset");
        assert_eq!(e.errno(), Some(22));
        assert!(e.to_string().contains("aligned to 512"), "{e}");
        f.write_at(&page[..100], 0).expect_err("length");
        f.write_at(&page[1..513], 0).expect_err("address");
        let mut rb = AlignedBuf::new(1024, 512);
        f.read_at(&mut rb[..10], 0).expect_err("read length");
        assert_eq!(fs.file_bytes(&p("/db/t.ibd")).expect("file"), b"");
        // Log files are not O_DIRECT: anything goes.
        open(&fs, "/db/log", FileKind::Log)
            .write_at(b"x", 3)
            .expect("log");

        // Extending write: pending until the fsync.
        f.write_at(&page, 0).expect("write");
        assert_eq!(fs.pending_ops(&p("/db/t.ibd")), 1);
        assert!(f.sync().expect("sync"));
        // Inside the durable length: durable on return.
        let page2 = AlignedBuf::from_slice(&[5u8; 512], 512);
        f.write_at(&page2, 512).expect("write");
        assert_eq!(fs.pending_ops(&p("/db/t.ibd")), 0);
        fs.crash(power(SECTOR), 1);
        let d = fs.file_bytes(&p("/db/t.ibd")).expect("file");
        assert_eq!(&d[..512], &[4u8; 512][..]);
        assert_eq!(&d[512..], &[5u8; 512][..]);
        let g = fs
            .open(&p("/db/t.ibd"), OpenOptions::existing(FileKind::Data))
            .expect("reopen");
        g.read_at(&mut rb, 0).expect("aligned read");
        assert_eq!(&rb[..], &d[..]);
    }

    #[test]
    fn odirect_no_fsync_syncs_only_when_size_changed() {
        let fs = fs(FlushMethod::ODirectNoFsync);
        let f = open(&fs, "/db/t.ibd", FileKind::Data);
        assert!(!f.sync().expect("nothing changed"));
        f.set_len(4096).expect("extend");
        assert!(f.sync().expect("size changed"));
        assert!(!f.sync().expect("no change since"));
        let page = AlignedBuf::from_slice(&[1u8; 512], 512);
        f.write_at(&page, 0).expect("inside");
        assert!(!f.sync().expect("write inside the file"));
        assert_eq!(fs.durable_bytes(&p("/db/t.ibd")).expect("file")[0], 1);
        f.write_at(&page, 4096).expect("append");
        assert!(f.sync().expect("write grew the file"));
        assert_eq!(fs.durable_bytes(&p("/db/t.ibd")).expect("file").len(), 4608);
        f.set_len(4608).expect("same size");
        assert!(f.sync().expect("pending set_len is flushed conservatively"));
        let st = fs.stats();
        assert_eq!((st.syncs, st.sync_calls), (3, 6));
    }

    #[test]
    fn namespace_operations() {
        let fs = SimFs::new(FlushMethod::Fsync);
        assert!(matches!(
            fs.open(&p("/nodir/x"), OpenOptions::create(FileKind::Data)),
            Err(IoError::NotFound { .. })
        ));
        assert!(matches!(
            fs.open(&p("/x"), OpenOptions::existing(FileKind::Data)),
            Err(IoError::NotFound { .. })
        ));
        fs.create_dir_all(&p("/d/sub/deeper")).expect("mkdir");
        assert!(fs.is_dir(&p("/d/sub")).expect("is_dir"));
        assert!(fs.exists(&p("/d")).expect("exists"));
        assert!(fs.is_dir(&p("/")).expect("root"));
        open(&fs, "/d/b", FileKind::Data);
        open(&fs, "/d/a", FileKind::Data);
        open(&fs, "/d0", FileKind::Data);
        open(&fs, "/d/sub/deeper/z", FileKind::Data);
        assert_eq!(fs.list_dir(&p("/d")).expect("ls"), vec!["a", "b", "sub"]);
        assert_eq!(fs.list_dir(&p("/")).expect("ls"), vec!["d", "d0"]);
        assert!(matches!(
            fs.list_dir(&p("/nope")),
            Err(IoError::NotFound { .. })
        ));
        let e = fs
            .open(
                &p("/d/a"),
                OpenOptions {
                    kind: FileKind::Data,
                    create: true,
                    create_new: true,
                },
            )
            .expect_err("exists");
        assert_eq!(e.errno(), Some(17));
        assert_eq!(
            fs.open(&p("/d/sub"), OpenOptions::create(FileKind::Data))
                .expect_err("dir")
                .errno(),
            Some(21)
        );
        assert_eq!(
            fs.create_dir_all(&p("/d/a/x"))
                .expect_err("file in the way")
                .errno(),
            Some(20)
        );

        // Rename replaces the target; an open handle follows the inode.
        let a = open(&fs, "/d/a", FileKind::Data);
        a.write_at(b"A", 0).expect("write");
        open(&fs, "/d/b", FileKind::Data)
            .write_at(b"B", 0)
            .expect("write");
        fs.rename(&p("/d/a"), &p("/d/b")).expect("rename");
        assert_eq!(fs.list_dir(&p("/d")).expect("ls"), vec!["b", "sub"]);
        a.write_at(b"2", 1).expect("write via old handle");
        assert_eq!(fs.file_bytes(&p("/d/b")).expect("b"), b"A2");
        assert!(matches!(
            fs.rename(&p("/d/a"), &p("/d/c")),
            Err(IoError::NotFound { .. })
        ));
        assert!(matches!(
            fs.rename(&p("/d/b"), &p("/nodir/c")),
            Err(IoError::NotFound { .. })
        ));

        // Directory rename moves the subtree.
        fs.rename(&p("/d/sub"), &p("/d/moved")).expect("rename dir");
        assert!(fs.exists(&p("/d/moved/deeper/z")).expect("exists"));
        assert!(!fs.exists(&p("/d/sub")).expect("exists"));
        assert_eq!(
            fs.rename(&p("/d"), &p("/d/moved/x"))
                .expect_err("into itself")
                .errno(),
            Some(22)
        );

        // Remove; an open handle keeps working until the crash.
        let b = open(&fs, "/d/b", FileKind::Data);
        fs.remove_file(&p("/d/b")).expect("rm");
        assert!(matches!(
            fs.remove_file(&p("/d/b")),
            Err(IoError::NotFound { .. })
        ));
        assert_eq!(fs.remove_file(&p("/d")).expect_err("dir").errno(), Some(21));
        b.write_at(b"orphan", 0)
            .expect("unlinked inode still writable");
        assert_eq!(b.len().expect("len"), 6);
        fs.sync_dir(&p("/d")).expect("sync_dir");
        assert!(matches!(
            fs.sync_dir(&p("/zz")),
            Err(IoError::NotFound { .. })
        ));

        // Directory operations are durable at once; unsynced files exist
        // after a power cut, possibly empty.
        open(&fs, "/d/new", FileKind::Data)
            .write_at(b"x", 0)
            .expect("write");
        fs.crash(power(SECTOR), 2);
        assert_eq!(
            fs.files(),
            vec![p("/d/moved/deeper/z"), p("/d/new"), p("/d0")]
        );
        let n = fs.file_bytes(&p("/d/new")).expect("new");
        assert!(n.is_empty() || n == b"x");
    }

    #[test]
    fn relative_paths_live_under_an_implicit_root() {
        let fs = SimFs::new(FlushMethod::Fsync);
        open(&fs, "ibdata1", FileKind::Data);
        fs.create_dir_all(&p("sub")).expect("mkdir");
        open(&fs, "sub/f", FileKind::Data);
        assert_eq!(fs.list_dir(&p("")).expect("ls"), vec!["ibdata1", "sub"]);
        assert_eq!(fs.list_dir(&p("sub")).expect("ls"), vec!["f"]);
    }

    #[test]
    fn corrupt_flips_both_views() {
        let fs = fs(FlushMethod::Fsync);
        let f = open(&fs, "/db/t", FileKind::Data);
        f.write_at(&[0u8; 16], 0).expect("write");
        f.sync().expect("sync");
        f.write_at(&[0u8; 4], 8).expect("pending");
        assert!(fs.corrupt(&p("/db/t"), 9, 0x10));
        assert_eq!(fs.file_bytes(&p("/db/t")).expect("file")[9], 0x10);
        assert_eq!(fs.durable_bytes(&p("/db/t")).expect("file")[9], 0x10);
        for seed in 0..10 {
            fs.crash(power(SECTOR), seed);
            assert_eq!(fs.file_bytes(&p("/db/t")).expect("file")[9], 0x10);
        }
        assert!(!fs.corrupt(&p("/db/t"), 100, 1));
        assert!(!fs.corrupt(&p("/db/none"), 0, 1));
        let mut b = [0u8; 1];
        let g = fs
            .open(&p("/db/t"), OpenOptions::existing(FileKind::Data))
            .expect("open");
        g.read_at(&mut b, 9).expect("read");
        assert_eq!(b[0], 0x10);
    }

    #[test]
    fn reads_and_stats() {
        let fs = fs(FlushMethod::Fsync);
        let f = open(&fs, "/db/t", FileKind::Data);
        f.write_at(b"hello", 0).expect("write");
        let mut b = [0u8; 3];
        f.read_at(&mut b, 2).expect("read");
        assert_eq!(&b, b"llo");
        match f.read_at(&mut [0u8; 4], 3) {
            Err(IoError::ShortRead {
                offset: 3,
                wanted: 4,
                len: 5,
                ..
            }) => {}
            other => panic!("expected a short read, got {other:?}"),
        }
        f.sync().expect("sync");
        f.set_len(2).expect("truncate");
        fs.sync_dir(&p("/db")).expect("sync_dir");
        fs.crash(CrashMode::Process, 0);
        let s = fs.stats();
        assert_eq!(
            s,
            SimStats {
                ops: 4,
                writes: 1,
                bytes_written: 5,
                reads: 1,
                bytes_read: 3,
                sync_calls: 1,
                syncs: 1,
                set_lens: 1,
                dir_syncs: 1,
                faults_fired: 0,
                writes_lost_to_failed_sync: 0,
                crashes: 1,
            }
        );
        assert!(format!("{fs:?}").contains("files: 1"));
    }

    #[test]
    fn crash_clears_faults_and_arming() {
        let fs = fs(FlushMethod::Fsync);
        fs.inject(Fault::write(FaultKind::Eio, 1));
        fs.arm_crash_after(10);
        fs.crash(power(4096), 0);
        let f = open(&fs, "/db/t", FileKind::Data);
        for i in 0..20 {
            f.write_at(b"x", i).expect("healthy after reboot");
        }
    }

    #[test]
    fn many_threads_then_crash() {
        let fs = fs(FlushMethod::Fsync);
        let threads: Vec<_> = (0..8u8)
            .map(|t| {
                let fs = fs.clone();
                std::thread::spawn(move || {
                    let f = fs
                        .open(
                            &PathBuf::from(format!("/db/f{t}")),
                            OpenOptions::create(FileKind::Data),
                        )
                        .expect("open");
                    let page = vec![t; 16384];
                    for i in 0..200u64 {
                        f.write_at(&page, i * 16384).expect("write");
                        if i % 10 == 9 {
                            f.sync().expect("sync");
                        }
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().expect("thread");
        }
        assert_eq!(fs.stats().writes, 1600);
        fs.crash(power(4096), 42);
        for t in 0..8u8 {
            let d = fs
                .file_bytes(&PathBuf::from(format!("/db/f{t}")))
                .expect("file");
            // All 200 pages were synced (the last sync is after page 199).
            assert_eq!(d.len(), 200 * 16384);
            assert!(d.iter().all(|&b| b == t));
        }
    }

    #[test]
    fn concurrent_writers_during_power_off() {
        // Threads keep writing while a crash point fires; nothing panics,
        // every failure is Crashed, and the state after crash() is usable.
        let fs = fs(FlushMethod::Fsync);
        let files: Vec<_> = (0..4u8)
            .map(|t| (t, open(&fs, &format!("/db/f{t}"), FileKind::Data)))
            .collect();
        fs.arm_crash_after(500);
        let threads: Vec<_> = files
            .into_iter()
            .map(|(t, f)| {
                std::thread::spawn(move || {
                    for i in 0..1000u64 {
                        let r = if i % 7 == 0 {
                            f.sync().map(|_| ())
                        } else {
                            f.write_at(&[t; 4096], (i % 16) * 4096)
                        };
                        if let Err(e) = r {
                            assert!(matches!(e, IoError::Crashed { .. }), "{e:?}");
                            return;
                        }
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().expect("thread");
        }
        assert!(fs.is_down());
        fs.crash(power(SECTOR), 9);
        let f = open(&fs, "/db/f0", FileKind::Data);
        f.write_at(b"ok", 0).expect("write after reboot");
    }
}
