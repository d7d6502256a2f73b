//! # Doublewrite: torn-page protection for in-place page writes
//!
//! ## What and why
//!
//! A data page (16 KiB by default) is larger than the unit the device
//! writes atomically (one 512-byte sector, see the media assumptions in
//! `quire_io`). If the machine dies while a page is being written in place,
//! the page on disk can end up half old, half new: a *torn page*. Its
//! checksum fails, and redo cannot repair it, because redo records are
//! applied *to* a page image and a torn image is not one.
//!
//! The doublewrite buffer closes that hole the way InnoDB does (the MySQL
//! 8.0.20+ design with separate `#ib_<page_size>_<n>.dblwr` files). Before
//! the page cleaner writes a batch of dirty pages in place, it hands the
//! batch to [`Doublewrite::write_batch`], which writes a copy of every page
//! (plus a header naming them) to a free doublewrite file and syncs it. Only
//! then are the pages written in place. After a crash, recovery
//! ([`Doublewrite::recover`]) returns the synced copies; a page whose
//! checksum fails in its data file is restored from its copy, and redo then
//! proceeds from an intact page.
//!
//! With `innodb_doublewrite=DETECT_ONLY` ([`DblwrMode::DetectOnly`]) only
//! the header is written: which pages are about to be written, with their
//! LSN and checksum. That costs one small write and one sync per batch
//! instead of a second copy of every page. Recovery can then tell that a
//! corrupt page was being written when the machine died (a torn write, not
//! random damage) but it cannot repair it. `innodb_doublewrite=OFF` means
//! the caller creates no [`Doublewrite`] at all.
//!
//! ## Files and slots
//!
//! `innodb_doublewrite_files` files live in `innodb_doublewrite_dir`
//! (default: the data directory), named like MySQL's:
//! `#ib_16384_0.dblwr`, `#ib_16384_1.dblwr`, ... Each file holds exactly one
//! batch at a time (one *slot*), of up to `innodb_doublewrite_pages` pages.
//! So up to `files` batches can be in flight at once; a further
//! `write_batch` waits on a condition variable until a batch finishes.
//!
//! ```text
//!   #ib_16384_0.dblwr (Full mode)
//!   +---------------+-----------+-----------+-----+-------------------------+
//!   | header region | copy 0    | copy 1    | ... | copy batch_pages-1      |
//!   | (1 page, more | page_size | page_size |     | page_size               |
//!   |  if needed)   |           |           |     |                         |
//!   +---------------+-----------+-----------+-----+-------------------------+
//!   0               H           H+ps        ...                 H+batch_pages*ps
//!
//!   #ib_16384_0.dblwr (DetectOnly mode): the header region only.
//! ```
//!
//! ## Header layout
//!
//! All integers little-endian, like every quire on-disk format.
//!
//! ```text
//!  offset        size  field
//!  ------------  ----  ------------------------------------------------------
//!        0          8  magic "QuireDbw"
//!        8          4  format version (1)
//!       12          4  page size in bytes
//!       16          4  batch_pages: page slots of this file's geometry
//!       20          4  flags: bit 0 set = page copies follow the header (Full)
//!       24          8  batch sequence number (increasing across all files
//!                      and restarts: the newest batch is the highest one)
//!       32          4  entry count n (0 = empty, nothing to recover)
//!       36          4  reserved, zero
//!       40       20*n  entries, one per page of the batch, in slot order:
//!                        +0  4  space id
//!                        +4  4  page number
//!                        +8  8  page LSN
//!                       +16  4  page checksum (the page's stored crc32c)
//!   40+20*n         4  crc32c of bytes [0, 40+20*n)
//! ```
//!
//! The header region is the header rounded up to whole pages, `H` above
//! (one page unless a small page size meets a large batch). Copy `i` (Full
//! mode) is the page named by entry `i`, at byte offset `H + i * page_size`.
//! A header whose magic, version or crc is wrong, including an all-zero one,
//! is no batch at all.
//!
//! ## Write path
//!
//! The header and the copies are assembled in one contiguous buffer,
//! allocated once per file with [`AlignedBuf`] at
//! [`Vfs::direct_io_alignment`] (files open as [`FileKind::Data`], so they
//! may be `O_DIRECT`), then go out as ONE `write_at` at offset 0 followed by
//! ONE `sync`. In DetectOnly mode the write is only the header, rounded up
//! to the I/O alignment.
//!
//! ## The order invariant
//!
//! **A batch's file is never reused until the caller drops the
//! [`DblwrGuard`] of that batch, and the caller drops it only after the
//! in-place writes of that batch are durable (data files synced).** The
//! structure enforces the first half: the slot is marked busy when
//! `write_batch` picks it, and the *only* code that marks it free is
//! `DblwrGuard::drop` (or a failed `write_batch` that never handed out a
//! guard and so never let an in-place write start). Hence at any crash,
//! every page whose in-place write might be torn has a synced copy (Full)
//! or synced metadata (DetectOnly) in some doublewrite file:
//!
//! ```text
//!  write_batch: [slot busy] -> write header+copies -> sync ---> guard
//!  caller:                                write pages in place -> sync data
//!  drop(guard): [slot free] ------------------------------------------> reuse
//! ```
//!
//! The converse needs no protection: a batch whose doublewrite sync never
//! completed never had its in-place writes started, so its pages on disk
//! are the old, intact ones. Its header or copies may be torn; recovery
//! rejects a header whose crc fails, and a copy that does not verify
//! ([`page::verify`]) or does not match the LSN and checksum its header
//! recorded (which catches an intact copy left over from an older batch in
//! the same slot). So a copy returned by recovery is never corrupt.
//!
//! ## Errors are sticky
//!
//! A failed write or sync poisons the Doublewrite: every later
//! `write_batch` (and `reset`) fails with [`StorageError::Poisoned`]. After
//! a failed sync the file content is unknown, and retrying the sync can
//! report success without the data being durable. The caller should also
//! call [`Doublewrite::poison`] when an *in-place* write fails: then no slot
//! is reused, and the copies of pages that may now be torn stay in the
//! files for the next recovery.
//!
//! ## Start-up protocol
//!
//! [`Doublewrite::open`] never changes a file holding an intact header: what
//! the files hold is needed by recovery (a file without one, say created
//! just before a crash, holds nothing and is initialised). The caller then
//! 1. calls [`Doublewrite::recover`], restores every torn page from its
//!    copy (or reports it, DetectOnly) and syncs the data files;
//! 2. calls [`Doublewrite::reset`], which empties every file (synced),
//!    resizes it to the configured geometry (`innodb_doublewrite_pages` or
//!    the mode may have changed), and removes files beyond
//!    `innodb_doublewrite_files`.
//!
//! As long as the files may hold a batch that `recover` has not read,
//! `write_batch` and `reset` refuse with [`StorageError::Recovery`], so
//! nothing overwrites a copy that recovery still needs.
//!
//! ## Status counters
//!
//! Per batch: `Innodb_dblwr_writes` +1; `Innodb_dblwr_pages_written` +pages
//! in the batch, **in both modes**, because that is what MySQL 8.0.30+ does
//! (`Double_write::write_complete` adds the batch size for regular and
//! reduced, i.e. DETECT_ONLY, batches alike); `Innodb_data_fsyncs` +1 for
//! each sync that issued an fsync-class call. MySQL adds the pages when the
//! batch's in-place writes complete; quire adds them when the doublewrite
//! write is synced, so the counter never lags behind a batch that stalls.

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use parking_lot::{Condvar, Mutex};
use quire_io::{AlignedBuf, File, FileKind, OpenOptions, Vfs};

use crate::error::{Result, StorageError};
use crate::page::{self, get_u32, get_u64, put_u32, put_u64, Lsn, PageCheck, PageId, PAGE_SIZES};
use crate::stats::Stats;

/// `innodb_doublewrite`, minus OFF (with OFF no [`Doublewrite`] exists).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DblwrMode {
    /// `ON`: header and a full copy of every page; torn pages are repaired.
    Full,
    /// `DETECT_ONLY`: header (page ids, LSNs, checksums) only; torn pages
    /// are detected, not repaired.
    DetectOnly,
}

/// Everything the doublewrite buffer needs from the configuration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DblwrConfig {
    /// `innodb_doublewrite_dir` (the data directory when unset). Must exist.
    pub dir: PathBuf,
    pub mode: DblwrMode,
    /// `innodb_doublewrite_files`: files, i.e. batches that can be in
    /// flight at once.
    pub files: u32,
    /// `innodb_doublewrite_pages`: most pages in one batch.
    pub batch_pages: u32,
    /// `innodb_page_size` in bytes.
    pub page_size: usize,
}

/// A page about to be written in place: full image, already sealed
/// ([`page::seal`]), page LSN inside.
#[derive(Clone, Copy, Debug)]
pub struct PageWrite<'a> {
    pub id: PageId,
    pub image: &'a [u8],
}

/// What a DetectOnly batch recorded about one page.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DetectEntry {
    pub id: PageId,
    /// Page LSN of the image that was about to be written.
    pub lsn: Lsn,
    /// Checksum stored in that image (bytes 0..4 of the page).
    pub checksum: u32,
}

/// What the doublewrite files hold, as found by [`Doublewrite::recover`].
#[derive(Clone, Default, PartialEq, Eq)]
pub struct DblwrContents {
    /// Full-mode batches: for each page, the valid copy with the highest
    /// page LSN. Every copy verifies ([`page::verify`] is `Valid` for its
    /// id) and matches the LSN and checksum its header recorded.
    pub copies: HashMap<PageId, Vec<u8>>,
    /// DetectOnly batches: one entry per page (the one with the highest
    /// LSN when several batches named it), sorted by page id.
    pub detect_only: Vec<DetectEntry>,
}

impl fmt::Debug for DblwrContents {
    // Printing whole page copies helps nobody: list the ids and LSNs.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut copies: Vec<(PageId, Lsn)> = self
            .copies
            .iter()
            .map(|(id, img)| (*id, page::page_lsn(img)))
            .collect();
        copies.sort();
        f.debug_struct("DblwrContents")
            .field("copies (id, lsn)", &copies)
            .field("detect_only", &self.detect_only)
            .finish()
    }
}

// ---------------------------------------------------------------------------
// On-disk header format (see the module doc for the diagram).

const MAGIC: [u8; 8] = *b"QuireDbw";
const FORMAT_VERSION: u32 = 1;
const OFF_MAGIC: usize = 0;
const OFF_VERSION: usize = 8;
const OFF_PAGE_SIZE: usize = 12;
const OFF_BATCH_PAGES: usize = 16;
const OFF_FLAGS: usize = 20;
const OFF_SEQ: usize = 24;
const OFF_COUNT: usize = 32;
const HEADER_FIXED_BYTES: usize = 40;
const ENTRY_BYTES: usize = 20;
const CRC_BYTES: usize = 4;
/// Flag bit: page copies follow the header region (Full mode).
const FLAG_PAGE_COPIES: u32 = 1;
/// Upper bound on `batch_pages` accepted from a header or a config, so a
/// damaged header cannot make recovery compute absurd offsets. MySQL caps
/// `innodb_doublewrite_pages` at 512.
const MAX_BATCH_PAGES: u32 = 1 << 16;

/// Bytes of a header holding `entries` entries, crc included.
const fn header_bytes(entries: usize) -> usize {
    HEADER_FIXED_BYTES + entries * ENTRY_BYTES + CRC_BYTES
}

/// The header region of a file: the largest header, in whole pages.
fn header_region_bytes(page_size: usize, batch_pages: u32) -> usize {
    round_up(header_bytes(batch_pages as usize), page_size)
}

fn round_up(n: usize, to: usize) -> usize {
    n.div_ceil(to) * to
}

/// The doublewrite file name MySQL uses: `#ib_<page_size>_<n>.dblwr`.
pub fn file_name(page_size: usize, n: u32) -> String {
    format!("#ib_{page_size}_{n}.dblwr")
}

/// Parses `#ib_<page_size>_<n>.dblwr` for our page size; returns `n`.
fn parse_file_name(name: &str, page_size: usize) -> Option<u32> {
    let rest = name.strip_prefix(&format!("#ib_{page_size}_"))?;
    let n = rest.strip_suffix(".dblwr")?;
    if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    n.parse().ok()
}

/// A decoded, crc-checked header.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Header {
    page_size: usize,
    batch_pages: u32,
    has_copies: bool,
    seq: u64,
    entries: Vec<DetectEntry>,
}

impl Header {
    /// Serialises into `buf` (which must hold `header_bytes(entries)`);
    /// returns the header length in bytes.
    fn encode(&self, buf: &mut [u8]) -> usize {
        let len = header_bytes(self.entries.len());
        buf[..len].fill(0);
        buf[OFF_MAGIC..OFF_MAGIC + MAGIC.len()].copy_from_slice(&MAGIC);
        put_u32(buf, OFF_VERSION, FORMAT_VERSION);
        put_u32(buf, OFF_PAGE_SIZE, self.page_size as u32);
        put_u32(buf, OFF_BATCH_PAGES, self.batch_pages);
        put_u32(
            buf,
            OFF_FLAGS,
            if self.has_copies { FLAG_PAGE_COPIES } else { 0 },
        );
        put_u64(buf, OFF_SEQ, self.seq);
        put_u32(buf, OFF_COUNT, self.entries.len() as u32);
        for (i, e) in self.entries.iter().enumerate() {
            let at = HEADER_FIXED_BYTES + i * ENTRY_BYTES;
            put_u32(buf, at, e.id.space);
            put_u32(buf, at + 4, e.id.page_no);
            put_u64(buf, at + 8, e.lsn);
            put_u32(buf, at + 16, e.checksum);
        }
        let crc_at = len - CRC_BYTES;
        let crc = crc32c::crc32c(&buf[..crc_at]);
        put_u32(buf, crc_at, crc);
        len
    }

    /// Decodes the header at the start of `buf`; `None` when it is not a
    /// complete, intact header (torn, zero, foreign, or cut short).
    fn decode(buf: &[u8]) -> Option<Header> {
        if buf.len() < header_bytes(0) || buf[OFF_MAGIC..OFF_MAGIC + MAGIC.len()] != MAGIC {
            return None;
        }
        if get_u32(buf, OFF_VERSION) != FORMAT_VERSION {
            return None;
        }
        let count = get_u32(buf, OFF_COUNT) as usize;
        let batch_pages = get_u32(buf, OFF_BATCH_PAGES);
        if batch_pages > MAX_BATCH_PAGES || count > batch_pages as usize {
            return None;
        }
        let len = header_bytes(count);
        if buf.len() < len {
            return None;
        }
        let crc_at = len - CRC_BYTES;
        if crc32c::crc32c(&buf[..crc_at]) != get_u32(buf, crc_at) {
            return None;
        }
        let entries = (0..count)
            .map(|i| {
                let at = HEADER_FIXED_BYTES + i * ENTRY_BYTES;
                DetectEntry {
                    id: PageId::new(get_u32(buf, at), get_u32(buf, at + 4)),
                    lsn: get_u64(buf, at + 8),
                    checksum: get_u32(buf, at + 16),
                }
            })
            .collect();
        Some(Header {
            page_size: get_u32(buf, OFF_PAGE_SIZE) as usize,
            batch_pages,
            has_copies: get_u32(buf, OFF_FLAGS) & FLAG_PAGE_COPIES != 0,
            seq: get_u64(buf, OFF_SEQ),
            entries,
        })
    }
}

// ---------------------------------------------------------------------------
// The doublewrite buffer.

/// One doublewrite file: one batch slot.
struct Slot {
    path: PathBuf,
    file: Arc<dyn File>,
    /// Assembly buffer for header + copies, aligned for `O_DIRECT`. Only
    /// the holder of the slot touches it; the mutex is never contended.
    write_buf: Mutex<AlignedBuf>,
}

/// Which slots are taken; protected by `Doublewrite::state`.
struct SlotState {
    busy: Vec<bool>,
    /// Sequence number for the next batch (or empty header).
    next_seq: u64,
    /// Set while `recover`/`reset` wait for or hold every slot, so new
    /// batches queue behind them instead of starving them.
    exclusive: bool,
}

/// The doublewrite buffer: `files` doublewrite files, each holding at most
/// one batch. `Send + Sync`; share it behind an `Arc` or a reference.
pub struct Doublewrite {
    vfs: Arc<dyn Vfs>,
    cfg: DblwrConfig,
    stats: Arc<Stats>,
    /// `vfs.direct_io_alignment()`: buffers, offsets, lengths.
    io_align_bytes: usize,
    /// Header region of the configured geometry (whole pages).
    header_region_bytes: usize,
    /// File length of the configured geometry.
    file_bytes: u64,
    slots: Vec<Slot>,
    state: Mutex<SlotState>,
    /// Signalled whenever a slot is freed (and when exclusivity ends).
    slot_freed: Condvar,
    /// The first I/O failure; once set, writes are refused.
    poison: OnceLock<String>,
    /// Some file may hold a batch that `recover` has not read yet.
    unrecovered: AtomicBool,
    /// Some file has another geometry than configured, or there are files
    /// beyond `files`: `reset` will fix that.
    geometry_mismatch: AtomicBool,
}

impl fmt::Debug for Doublewrite {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Doublewrite")
            .field("cfg", &self.cfg)
            .field("poisoned", &self.poison.get())
            .field("unrecovered", &self.unrecovered.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

/// Keeps a batch's doublewrite file reserved. Drop it only after the
/// batch's pages have been written in place AND the data files synced:
/// dropping it lets the next batch overwrite the copies.
#[must_use = "dropping the guard releases the doublewrite copy; hold it until the in-place writes are synced"]
pub struct DblwrGuard<'a> {
    dw: &'a Doublewrite,
    /// `None` for an empty batch (nothing was reserved).
    slot: Option<usize>,
    seq: u64,
}

impl DblwrGuard<'_> {
    /// Sequence number of the batch (0 for an empty batch).
    pub fn seq(&self) -> u64 {
        self.seq
    }

    /// The doublewrite file holding the batch, if any.
    pub fn path(&self) -> Option<&Path> {
        self.slot.map(|i| self.dw.slots[i].path.as_path())
    }
}

impl fmt::Debug for DblwrGuard<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DblwrGuard")
            .field("slot", &self.slot)
            .field("seq", &self.seq)
            .finish()
    }
}

impl Drop for DblwrGuard<'_> {
    /// The only place a batch slot becomes free (see the order invariant).
    fn drop(&mut self) {
        if let Some(i) = self.slot.take() {
            self.dw.release_slot(i);
        }
    }
}

impl Doublewrite {
    /// Opens the doublewrite files in `cfg.dir`, creating missing ones
    /// (empty header, sized for the configured geometry; synced, directory
    /// synced). An existing file with an intact header is only read, never
    /// changed: call [`recover`](Self::recover) and then
    /// [`reset`](Self::reset). (An existing file without one holds nothing
    /// recoverable and is initialised like a new one.)
    ///
    /// Errors: [`StorageError::Config`] when `cfg.dir` does not exist
    /// (`innodb_doublewrite_dir '<dir>' does not exist`) or a setting cannot
    /// work; I/O errors as [`StorageError::Io`].
    pub fn open(vfs: Arc<dyn Vfs>, cfg: DblwrConfig, stats: Arc<Stats>) -> Result<Doublewrite> {
        if !PAGE_SIZES.contains(&cfg.page_size) {
            return Err(StorageError::Config(format!(
                "innodb_page_size {} is not one of {:?}",
                cfg.page_size, PAGE_SIZES
            )));
        }
        if cfg.files == 0 {
            return Err(StorageError::Config(
                "innodb_doublewrite_files must be at least 1".into(),
            ));
        }
        if cfg.batch_pages == 0 || cfg.batch_pages > MAX_BATCH_PAGES {
            return Err(StorageError::Config(format!(
                "innodb_doublewrite_pages {} is out of range (1..={MAX_BATCH_PAGES})",
                cfg.batch_pages
            )));
        }
        if !vfs.is_dir(&cfg.dir)? {
            let what = if vfs.exists(&cfg.dir)? {
                "is not a directory"
            } else {
                "does not exist"
            };
            return Err(StorageError::Config(format!(
                "innodb_doublewrite_dir '{}' {what}",
                cfg.dir.display()
            )));
        }
        let io_align_bytes = vfs.direct_io_alignment();
        if !io_align_bytes.is_power_of_two() || !cfg.page_size.is_multiple_of(io_align_bytes) {
            return Err(StorageError::Config(format!(
                "innodb_page_size {} is not a multiple of the direct I/O alignment {io_align_bytes}",
                cfg.page_size
            )));
        }
        let header_region_bytes = header_region_bytes(cfg.page_size, cfg.batch_pages);
        let file_bytes = match cfg.mode {
            DblwrMode::Full => header_region_bytes + cfg.batch_pages as usize * cfg.page_size,
            DblwrMode::DetectOnly => header_region_bytes,
        } as u64;
        let buf_bytes = match cfg.mode {
            DblwrMode::Full => file_bytes as usize,
            DblwrMode::DetectOnly => {
                round_up(header_bytes(cfg.batch_pages as usize), io_align_bytes)
            }
        };

        let mut dw = Doublewrite {
            vfs: vfs.clone(),
            cfg,
            stats,
            io_align_bytes,
            header_region_bytes,
            file_bytes,
            slots: Vec::new(),
            state: Mutex::new(SlotState {
                busy: Vec::new(),
                next_seq: 1,
                exclusive: false,
            }),
            slot_freed: Condvar::new(),
            poison: OnceLock::new(),
            unrecovered: AtomicBool::new(false),
            geometry_mismatch: AtomicBool::new(false),
        };

        // What is already there: newest sequence number, pending batches,
        // geometry. A file holding an intact header is not modified here:
        // recovery may need it.
        let mut max_seq = 0u64;
        let mut intact: Vec<u32> = Vec::new();
        for (n, path) in dw.existing_files()? {
            let file = vfs.open(&path, OpenOptions::existing(FileKind::Data))?;
            let head = dw.read_prefix(file.as_ref(), dw.header_region_bytes)?;
            let Some(h) = dw.read_whole_header(file.as_ref(), head)? else {
                // Nothing recoverable (e.g. created, then a crash before its
                // first header was durable). Own files are initialised below.
                if n >= dw.cfg.files {
                    dw.geometry_mismatch.store(true, Ordering::Relaxed);
                }
                continue;
            };
            intact.push(n);
            max_seq = max_seq.max(h.seq);
            if !h.entries.is_empty() {
                dw.unrecovered.store(true, Ordering::Relaxed);
            }
            if n >= dw.cfg.files
                || file.len()? != dw.file_bytes
                || h.page_size != dw.cfg.page_size
                || h.batch_pages != dw.cfg.batch_pages
                || h.has_copies != (dw.cfg.mode == DblwrMode::Full)
            {
                dw.geometry_mismatch.store(true, Ordering::Relaxed);
            }
        }

        let mut created = false;
        for n in 0..dw.cfg.files {
            let path = dw.cfg.dir.join(file_name(dw.cfg.page_size, n));
            created |= !vfs.exists(&path)?;
            let file = vfs.open(&path, OpenOptions::create(FileKind::Data))?;
            let mut write_buf = AlignedBuf::new(buf_bytes, io_align_bytes);
            if !intact.contains(&n) {
                max_seq += 1;
                dw.write_empty(file.as_ref(), &mut write_buf, max_seq)?;
            }
            dw.slots.push(Slot {
                path,
                file,
                write_buf: Mutex::new(write_buf),
            });
        }
        if created {
            vfs.sync_dir(&dw.cfg.dir)?;
        }
        {
            let st = dw.state.get_mut();
            st.busy = vec![false; dw.slots.len()];
            st.next_seq = max_seq + 1;
        }
        Ok(dw)
    }

    /// The configuration this Doublewrite was opened with.
    pub fn config(&self) -> &DblwrConfig {
        &self.cfg
    }

    /// Paths of the configured doublewrite files, in slot order.
    pub fn file_paths(&self) -> Vec<PathBuf> {
        self.slots.iter().map(|s| s.path.clone()).collect()
    }

    /// True when the files on disk do not have the configured geometry
    /// (page size, `innodb_doublewrite_pages`, mode, number of files);
    /// [`reset`](Self::reset) fixes that after recovery.
    pub fn needs_reset(&self) -> bool {
        self.geometry_mismatch.load(Ordering::Relaxed)
    }

    /// The first I/O error, when the Doublewrite refuses writes.
    pub fn poisoned(&self) -> Option<&str> {
        self.poison.get().map(String::as_str)
    }

    /// Makes the Doublewrite refuse every later write (sticky). Call it when
    /// an in-place write or data-file sync of a batch fails: the batch's
    /// copies then stay in their file for the next recovery, since no slot
    /// is ever reused again.
    pub fn poison(&self, reason: &str) {
        // Set under the state lock so a waiter cannot check the poison,
        // miss it, and then sleep through the wake-up below.
        let st = self.state.lock();
        let _ = self.poison.set(reason.to_owned());
        drop(st);
        self.slot_freed.notify_all();
    }

    /// Writes `pages` (at most `innodb_doublewrite_pages`) to a free
    /// doublewrite file and syncs it; Full mode writes header and copies,
    /// DetectOnly the header only. Waits while every file holds a batch.
    ///
    /// Returns a guard that keeps the file reserved: the caller writes the
    /// pages in place, syncs the data files, and only then drops the guard.
    /// A thread must not wait here while holding guards that are needed to
    /// free a slot (with `files = 1`, never hold a guard across a call).
    ///
    /// # Panics
    ///
    /// When `pages.len() > batch_pages` or an image is not `page_size`
    /// bytes: these are caller bugs.
    pub fn write_batch(&self, pages: &[PageWrite<'_>]) -> Result<DblwrGuard<'_>> {
        assert!(
            pages.len() <= self.cfg.batch_pages as usize,
            "doublewrite batch of {} pages exceeds innodb_doublewrite_pages = {}",
            pages.len(),
            self.cfg.batch_pages
        );
        for p in pages {
            assert_eq!(
                p.image.len(),
                self.cfg.page_size,
                "doublewrite: image of {} is not one page",
                p.id
            );
            debug_assert_eq!(
                page::page_id(p.image),
                p.id,
                "doublewrite: image/id mismatch"
            );
        }
        self.check_writable()?;
        if pages.is_empty() {
            return Ok(DblwrGuard {
                dw: self,
                slot: None,
                seq: 0,
            });
        }

        let (slot_index, seq) = self.acquire_slot()?;
        // From here on the guard owns the slot: on an error below it is
        // dropped and frees the slot (no in-place write has started).
        let guard = DblwrGuard {
            dw: self,
            slot: Some(slot_index),
            seq,
        };
        let slot = &self.slots[slot_index];

        let header = Header {
            page_size: self.cfg.page_size,
            batch_pages: self.cfg.batch_pages,
            has_copies: self.cfg.mode == DblwrMode::Full,
            seq,
            entries: pages
                .iter()
                .map(|p| DetectEntry {
                    id: p.id,
                    lsn: page::page_lsn(p.image),
                    checksum: get_u32(p.image, page::OFF_CHECKSUM),
                })
                .collect(),
        };

        let mut buf = slot.write_buf.lock();
        let header_len = header.encode(&mut buf);
        let write_len = match self.cfg.mode {
            DblwrMode::Full => {
                for (i, p) in pages.iter().enumerate() {
                    let at = self.header_region_bytes + i * self.cfg.page_size;
                    buf[at..at + self.cfg.page_size].copy_from_slice(p.image);
                }
                self.header_region_bytes + pages.len() * self.cfg.page_size
            }
            DblwrMode::DetectOnly => round_up(header_len, self.io_align_bytes),
        };
        // Bytes between the header and the end of what we write must not be
        // leftovers that look meaningful; the crc makes them irrelevant, but
        // zero them anyway so the files are easy to read with a hex dump.
        let pad_end = match self.cfg.mode {
            DblwrMode::Full => self.header_region_bytes,
            DblwrMode::DetectOnly => write_len,
        };
        buf[header_len..pad_end].fill(0);

        self.io(slot.file.write_at(&buf[..write_len], 0))?;
        drop(buf);
        self.sync(slot.file.as_ref())?;

        Stats::inc(&self.stats.innodb_dblwr_writes);
        Stats::add(&self.stats.innodb_dblwr_pages_written, pages.len() as u64);
        Ok(guard)
    }

    /// Reads every doublewrite file of this page size in the directory
    /// (including files beyond `innodb_doublewrite_files` left by an earlier
    /// configuration) and returns what they hold: for Full batches the
    /// valid copy with the highest LSN per page; for DetectOnly batches the
    /// recorded entries. Headers that fail their crc are ignored. Waits for
    /// batches in flight (so never call it while holding a [`DblwrGuard`]);
    /// does not modify anything.
    pub fn recover(&self) -> Result<DblwrContents> {
        let _all = self.acquire_all();
        let mut copies: HashMap<PageId, Vec<u8>> = HashMap::new();
        let mut detect: HashMap<PageId, DetectEntry> = HashMap::new();

        for (n, path) in self.existing_files()? {
            let file = match self.slots.get(n as usize) {
                Some(slot) if slot.path == path => slot.file.clone(),
                _ => self
                    .vfs
                    .open(&path, OpenOptions::existing(FileKind::Data))?,
            };
            let head = self.read_prefix(file.as_ref(), self.header_region_bytes)?;
            let Some(h) = self.read_whole_header(file.as_ref(), head)? else {
                continue;
            };
            if h.page_size != self.cfg.page_size {
                // A foreign geometry under our file name: unusable copies.
                continue;
            }
            if !h.has_copies {
                for e in &h.entries {
                    let keep = detect.get(&e.id).is_none_or(|old| e.lsn > old.lsn);
                    if keep {
                        detect.insert(e.id, *e);
                    }
                }
                continue;
            }
            // Header region of the geometry the batch was written with (the
            // configuration may have changed since), then its copies.
            let region = header_region_bytes(h.page_size, h.batch_pages);
            let content =
                self.read_prefix(file.as_ref(), region + h.entries.len() * h.page_size)?;
            for (i, e) in h.entries.iter().enumerate() {
                let at = region + i * h.page_size;
                let Some(copy) = content.get(at..at + h.page_size) else {
                    continue; // file cut short: that copy never arrived
                };
                let intact = page::verify(copy, e.id) == PageCheck::Valid
                    && page::page_lsn(copy) == e.lsn
                    && get_u32(copy, page::OFF_CHECKSUM) == e.checksum;
                if !intact {
                    continue;
                }
                let newer = copies
                    .get(&e.id)
                    .is_none_or(|old| page::page_lsn(old) < e.lsn);
                if newer {
                    copies.insert(e.id, copy.to_vec());
                }
            }
        }
        self.unrecovered.store(false, Ordering::Relaxed);

        let mut detect_only: Vec<DetectEntry> = detect.into_values().collect();
        detect_only.sort_by_key(|e| e.id);
        Ok(DblwrContents {
            copies,
            detect_only,
        })
    }

    /// Empties every doublewrite file (a valid header with no entries),
    /// resizes it to the configured geometry (dropping old copies), syncs,
    /// and removes doublewrite files beyond `innodb_doublewrite_files`.
    /// Call it after [`recover`](Self::recover), once restored pages are
    /// durable in the data files. Waits for batches in flight (so never
    /// call it while holding a [`DblwrGuard`]). A failure poisons the
    /// Doublewrite.
    pub fn reset(&self) -> Result<()> {
        self.check_writable()?;
        let all = self.acquire_all();
        for slot in &self.slots {
            let mut buf = slot.write_buf.lock();
            let seq = all.take_seq();
            // Empty header first, then drop whatever followed it.
            self.write_empty(slot.file.as_ref(), &mut buf, seq)?;
        }
        let mut removed = false;
        for (n, path) in self.existing_files()? {
            if n >= self.cfg.files {
                self.io(self.vfs.remove_file(&path))?;
                removed = true;
            }
        }
        if removed {
            self.io(self.vfs.sync_dir(&self.cfg.dir))?;
        }
        self.geometry_mismatch.store(false, Ordering::Relaxed);
        Ok(())
    }

    // -- internals ---------------------------------------------------------

    /// Writes an empty header (sequence `seq`), sets the file to the
    /// configured length with nothing after the header, and syncs.
    fn write_empty(&self, file: &dyn File, buf: &mut AlignedBuf, seq: u64) -> Result<()> {
        let header = Header {
            page_size: self.cfg.page_size,
            batch_pages: self.cfg.batch_pages,
            has_copies: self.cfg.mode == DblwrMode::Full,
            seq,
            entries: Vec::new(),
        };
        let header_len = header.encode(buf);
        let write_len = round_up(header_len, self.io_align_bytes);
        buf[header_len..write_len].fill(0);
        self.io(file.write_at(&buf[..write_len], 0))?;
        // Truncate to the header region, then grow: old copies become zeros.
        self.io(file.set_len(self.header_region_bytes as u64))?;
        self.io(file.set_len(self.file_bytes))?;
        self.sync(file)
    }

    /// Doublewrite files of our page size in the directory, sorted by `n`.
    fn existing_files(&self) -> Result<Vec<(u32, PathBuf)>> {
        let mut found: Vec<(u32, PathBuf)> = self
            .vfs
            .list_dir(&self.cfg.dir)?
            .into_iter()
            .filter_map(|name| {
                parse_file_name(&name, self.cfg.page_size).map(|n| (n, self.cfg.dir.join(name)))
            })
            .collect();
        found.sort();
        Ok(found)
    }

    /// Reads up to `want_bytes` from offset 0, rounded to the I/O alignment
    /// (up, but never past the aligned end of the file).
    fn read_prefix(&self, file: &dyn File, want_bytes: usize) -> Result<AlignedBuf> {
        let align = self.io_align_bytes as u64;
        let aligned_len = file.len()? / align * align;
        let want = round_up(want_bytes, self.io_align_bytes) as u64;
        let n = usize::try_from(want.min(aligned_len)).unwrap_or(usize::MAX);
        let mut buf = AlignedBuf::new(n, self.io_align_bytes);
        if n > 0 {
            file.read_at(&mut buf, 0)?;
        }
        Ok(buf)
    }

    /// Decodes the header from `head`, re-reading a longer prefix when the
    /// header is longer than what `head` holds.
    fn read_whole_header(&self, file: &dyn File, head: AlignedBuf) -> Result<Option<Header>> {
        if let Some(h) = Header::decode(&head) {
            return Ok(Some(h));
        }
        if head.len() < header_bytes(0) || head[..MAGIC.len()] != MAGIC {
            return Ok(None);
        }
        let count = get_u32(&head, OFF_COUNT) as usize;
        let need = header_bytes(count.min(MAX_BATCH_PAGES as usize));
        if need <= head.len() {
            return Ok(None); // it was all there, and it is not intact
        }
        let longer = self.read_prefix(file, need)?;
        Ok(Header::decode(&longer))
    }

    fn check_writable(&self) -> Result<()> {
        if let Some(reason) = self.poison.get() {
            return Err(StorageError::Poisoned(reason.clone()));
        }
        if self.unrecovered.load(Ordering::Relaxed) {
            return Err(StorageError::Recovery(format!(
                "the doublewrite files in '{}' hold batches not yet recovered: \
                 recover() must run before they are overwritten",
                self.cfg.dir.display()
            )));
        }
        Ok(())
    }

    /// An I/O result; a failure poisons.
    fn io<T>(&self, r: quire_io::Result<T>) -> Result<T> {
        r.map_err(|e| {
            self.poison(&format!("doublewrite: {e}"));
            StorageError::Io(e)
        })
    }

    fn sync(&self, file: &dyn File) -> Result<()> {
        if self.io(file.sync())? {
            Stats::inc(&self.stats.innodb_data_fsyncs);
        }
        Ok(())
    }

    /// Waits for a free slot and marks it busy; returns it with the batch
    /// sequence number.
    fn acquire_slot(&self) -> Result<(usize, u64)> {
        let mut st = self.state.lock();
        loop {
            if let Some(reason) = self.poison.get() {
                return Err(StorageError::Poisoned(reason.clone()));
            }
            if !st.exclusive {
                let n = st.busy.len();
                // Round-robin from the sequence number: spreads batches over
                // the files, so each file holds one of the latest batches.
                let start = (st.next_seq % n as u64) as usize;
                let free = (0..n).map(|k| (start + k) % n).find(|&i| !st.busy[i]);
                if let Some(i) = free {
                    debug_assert!(!st.busy[i]);
                    st.busy[i] = true;
                    let seq = st.next_seq;
                    st.next_seq += 1;
                    return Ok((i, seq));
                }
            }
            self.slot_freed.wait(&mut st);
        }
    }

    fn release_slot(&self, i: usize) {
        let mut st = self.state.lock();
        assert!(st.busy[i], "doublewrite slot {i} released twice");
        st.busy[i] = false;
        drop(st);
        self.slot_freed.notify_all();
    }

    /// Waits until no batch is in flight and keeps new ones out until the
    /// returned value is dropped.
    fn acquire_all(&self) -> AllSlots<'_> {
        let mut st = self.state.lock();
        while st.exclusive {
            self.slot_freed.wait(&mut st);
        }
        st.exclusive = true;
        while st.busy.iter().any(|&b| b) {
            self.slot_freed.wait(&mut st);
        }
        AllSlots { dw: self }
    }
}

/// Exclusive hold on every slot (for `recover` and `reset`).
struct AllSlots<'a> {
    dw: &'a Doublewrite,
}

impl AllSlots<'_> {
    fn take_seq(&self) -> u64 {
        let mut st = self.dw.state.lock();
        let seq = st.next_seq;
        st.next_seq += 1;
        seq
    }
}

impl Drop for AllSlots<'_> {
    fn drop(&mut self) {
        self.dw.state.lock().exclusive = false;
        self.dw.slot_freed.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::page::{init_header, seal, set_page_lsn, PageType};
    use quire_io::{CrashMode, Fault, FaultKind, FlushMethod, IoError, SimFs};
    use std::sync::atomic::AtomicUsize;

    const PS: usize = 4096;
    const DIR: &str = "/data";

    fn sim(method: FlushMethod) -> Arc<SimFs> {
        let fs = Arc::new(SimFs::new(method));
        fs.create_dir_all(Path::new(DIR)).expect("mkdir");
        fs
    }

    fn cfg(mode: DblwrMode, files: u32, batch_pages: u32) -> DblwrConfig {
        DblwrConfig {
            dir: PathBuf::from(DIR),
            mode,
            files,
            batch_pages,
            page_size: PS,
        }
    }

    fn open(fs: &Arc<SimFs>, c: DblwrConfig) -> (Doublewrite, Arc<Stats>) {
        let stats = Arc::new(Stats::default());
        let dw = Doublewrite::open(fs.clone(), c, stats.clone()).expect("open doublewrite");
        (dw, stats)
    }

    /// A sealed index page whose body is `fill` repeated.
    fn page(space: u32, page_no: u32, lsn: Lsn, fill: u8) -> Vec<u8> {
        let mut p = vec![fill; PS];
        init_header(&mut p, PageId::new(space, page_no), PageType::Index);
        set_page_lsn(&mut p, lsn);
        seal(&mut p);
        p
    }

    fn writes(images: &[Vec<u8>]) -> Vec<PageWrite<'_>> {
        images
            .iter()
            .map(|img| PageWrite {
                id: page::page_id(img),
                image: img,
            })
            .collect()
    }

    fn path(n: u32) -> PathBuf {
        Path::new(DIR).join(file_name(PS, n))
    }

    #[test]
    fn missing_dir_is_a_clear_config_error() {
        let fs = sim(FlushMethod::Fsync);
        let mut c = cfg(DblwrMode::Full, 2, 8);
        c.dir = PathBuf::from("/no/such/dir");
        let err = Doublewrite::open(fs.clone(), c, Arc::new(Stats::default()))
            .expect_err("must refuse a missing dir");
        assert!(matches!(err, StorageError::Config(_)), "{err:?}");
        assert_eq!(
            err.to_string(),
            "innodb_doublewrite_dir '/no/such/dir' does not exist"
        );
    }

    #[test]
    fn bad_settings_are_config_errors() {
        let fs = sim(FlushMethod::Fsync);
        for c in [
            cfg(DblwrMode::Full, 0, 8),
            cfg(DblwrMode::Full, 2, 0),
            DblwrConfig {
                page_size: 1000,
                ..cfg(DblwrMode::Full, 2, 8)
            },
        ] {
            let err = Doublewrite::open(fs.clone(), c, Arc::new(Stats::default()))
                .expect_err("bad config");
            assert!(matches!(err, StorageError::Config(_)), "{err:?}");
        }
    }

    #[test]
    fn open_creates_empty_files_of_the_configured_size() {
        let fs = sim(FlushMethod::Fsync);
        let (dw, stats) = open(&fs, cfg(DblwrMode::Full, 2, 8));
        assert_eq!(dw.file_paths(), vec![path(0), path(1)]);
        for n in 0..2 {
            let durable = fs.durable_bytes(&path(n)).expect("file exists");
            assert_eq!(durable.len(), PS + 8 * PS, "1 header page + 8 slots");
            let h = Header::decode(&durable).expect("valid empty header");
            assert!(h.entries.is_empty());
            assert_eq!((h.page_size, h.batch_pages, h.has_copies), (PS, 8, true));
        }
        assert!(!dw.needs_reset());
        assert_eq!(Stats::get(&stats.innodb_data_fsyncs), 2);
        assert_eq!(dw.recover().expect("recover"), DblwrContents::default());

        let (dw, _) = open(&fs, cfg(DblwrMode::DetectOnly, 1, 8));
        drop(dw);
        // Existing files are never changed by open.
        assert_eq!(fs.durable_bytes(&path(0)).map(|b| b.len()), Some(9 * PS));
    }

    #[test]
    fn half_created_file_is_initialised_at_open() {
        let fs = sim(FlushMethod::Fsync);
        // Created, then a crash before its first header was durable.
        fs.open(&path(0), OpenOptions::create(FileKind::Data))
            .expect("create");
        let (dw, _) = open(&fs, cfg(DblwrMode::Full, 1, 4));
        assert!(!dw.needs_reset());
        let bytes = fs.durable_bytes(&path(0)).expect("file");
        assert_eq!(bytes.len(), 5 * PS);
        assert!(Header::decode(&bytes).is_some_and(|h| h.entries.is_empty()));
        drop(
            dw.write_batch(&writes(&[page(0, 1, 1, 1)]))
                .expect("usable"),
        );
    }

    #[test]
    fn header_roundtrip_and_damage() {
        let h = Header {
            page_size: PS,
            batch_pages: 4,
            has_copies: true,
            seq: 42,
            entries: vec![
                DetectEntry {
                    id: PageId::new(1, 2),
                    lsn: 300,
                    checksum: 0xdead_beef,
                },
                DetectEntry {
                    id: PageId::new(0, 9),
                    lsn: 7,
                    checksum: 1,
                },
            ],
        };
        let mut buf = vec![0u8; PS];
        let len = h.encode(&mut buf);
        assert_eq!(len, 40 + 2 * 20 + 4);
        assert_eq!(&buf[..8], b"QuireDbw");
        assert_eq!(Header::decode(&buf), Some(h.clone()));
        assert_eq!(Header::decode(&buf[..len - 1]), None, "cut short");
        for i in 0..len {
            let mut bad = buf.clone();
            bad[i] ^= 0x10;
            assert_eq!(Header::decode(&bad), None, "flip at byte {i}");
        }
        assert_eq!(Header::decode(&vec![0u8; PS]), None, "zero header");
        // A header longer than one page of a small page size.
        assert_eq!(header_region_bytes(4096, 512), 3 * 4096);
        assert_eq!(header_region_bytes(16384, 512), 16384);
    }

    #[test]
    fn file_names_follow_mysql() {
        assert_eq!(file_name(16384, 1), "#ib_16384_1.dblwr");
        assert_eq!(parse_file_name("#ib_16384_12.dblwr", 16384), Some(12));
        assert_eq!(parse_file_name("#ib_8192_1.dblwr", 16384), None);
        assert_eq!(parse_file_name("#ib_16384_.dblwr", 16384), None);
        assert_eq!(parse_file_name("#ib_16384_1.bdblwr", 16384), None);
    }

    #[test]
    fn full_batch_is_one_write_and_one_sync_and_counted() {
        let fs = sim(FlushMethod::Fsync);
        let (dw, stats) = open(&fs, cfg(DblwrMode::Full, 2, 8));
        let before = fs.stats();
        let images: Vec<Vec<u8>> = (0..5).map(|i| page(0, i, 100 + i as u64, 0xA0)).collect();
        let guard = dw.write_batch(&writes(&images)).expect("batch");
        let after = fs.stats();
        assert_eq!(
            after.writes - before.writes,
            1,
            "header + copies in one write"
        );
        assert_eq!(
            after.bytes_written - before.bytes_written,
            (PS + 5 * PS) as u64
        );
        assert_eq!(after.syncs - before.syncs, 1);
        assert_eq!(Stats::get(&stats.innodb_dblwr_writes), 1);
        assert_eq!(Stats::get(&stats.innodb_dblwr_pages_written), 5);
        assert_eq!(Stats::get(&stats.innodb_data_fsyncs), 2 + 1);
        // The batch is durable before the guard is handed out.
        let file = guard.path().expect("reserved file").to_path_buf();
        assert_eq!(fs.pending_ops(&file), 0);
        drop(guard);

        // An empty batch costs nothing.
        let g = dw.write_batch(&[]).expect("empty batch");
        assert_eq!(g.path(), None);
        drop(g);
        assert_eq!(Stats::get(&stats.innodb_dblwr_writes), 1);
    }

    #[test]
    #[should_panic(expected = "exceeds innodb_doublewrite_pages")]
    fn oversized_batch_panics() {
        let fs = sim(FlushMethod::Fsync);
        let (dw, _) = open(&fs, cfg(DblwrMode::Full, 1, 2));
        let images: Vec<Vec<u8>> = (0..3).map(|i| page(0, i, 1, 0)).collect();
        let _ = dw.write_batch(&writes(&images));
    }

    /// Batch 1 is synced and its guard held (in-place writes in flight);
    /// batch 2 is interrupted by a power cut before or during its sync.
    /// Recovery returns all of batch 1, and of batch 2 only exact images.
    #[test]
    fn power_crash_keeps_synced_batches_and_never_returns_corrupt_copies() {
        let mut torn_or_lost = 0;
        let mut batch2_whole = 0;
        for seed in 0..96u64 {
            let sector = if seed % 2 == 0 { 512 } else { 4096 };
            let arm_after = (seed / 2) % 2; // 0: during write_at, 1: during sync
            let fs = sim(FlushMethod::Fsync);
            let (dw, _) = open(&fs, cfg(DblwrMode::Full, 2, 4));
            let batch1: Vec<Vec<u8>> = (0..4).map(|i| page(1, i, 100, 0x11)).collect();
            // Batch 2 rewrites pages 1:0 and 1:1 at a higher LSN, plus others.
            let batch2: Vec<Vec<u8>> = vec![
                page(1, 0, 200, 0x22),
                page(1, 1, 200, 0x22),
                page(2, 0, 200, 0x22),
                page(2, 1, 200, 0x22),
            ];
            let g1 = dw.write_batch(&writes(&batch1)).expect("batch 1");
            fs.arm_crash_after(arm_after);
            let err = dw.write_batch(&writes(&batch2)).expect_err("power is off");
            assert!(
                matches!(err, StorageError::Io(IoError::Crashed { .. })),
                "{err:?}"
            );
            assert!(matches!(
                dw.write_batch(&writes(&batch1)),
                Err(StorageError::Poisoned(_))
            ));
            drop(g1);
            drop(dw);
            fs.crash(CrashMode::Power { sector }, seed);

            let (dw, _) = open(&fs, cfg(DblwrMode::Full, 2, 4));
            let got = dw.recover().expect("recover");
            for img in &batch1[2..] {
                let id = page::page_id(img);
                assert_eq!(
                    got.copies.get(&id),
                    Some(img),
                    "seed {seed}: {id} from batch 1"
                );
            }
            for (old, new) in batch1[..2].iter().zip(&batch2[..2]) {
                let id = page::page_id(old);
                let copy = got.copies.get(&id).expect("batch 1 copy at least");
                assert!(copy == old || copy == new, "seed {seed}: {id} corrupt copy");
            }
            let mut whole = true;
            for img in &batch2 {
                let id = page::page_id(img);
                match got.copies.get(&id) {
                    Some(c) if c == img => {}
                    Some(c) => {
                        whole = false;
                        assert_eq!(page::page_lsn(c), 100, "seed {seed}: {id} corrupt copy");
                    }
                    None => whole = false,
                }
            }
            if whole {
                batch2_whole += 1;
            } else {
                torn_or_lost += 1;
            }
            assert!(got.detect_only.is_empty());
        }
        // The seeds exercise both outcomes.
        assert!(
            torn_or_lost > 0 && batch2_whole > 0,
            "{torn_or_lost} {batch2_whole}"
        );
    }

    #[test]
    fn highest_lsn_copy_wins_across_files() {
        for newest_first in [false, true] {
            let fs = sim(FlushMethod::Fsync);
            let (dw, _) = open(&fs, cfg(DblwrMode::Full, 2, 4));
            let low = vec![page(0, 5, 100, 0x01), page(0, 6, 100, 0x01)];
            let high = vec![page(0, 5, 300, 0x03)];
            let order = if newest_first {
                [&high, &low]
            } else {
                [&low, &high]
            };
            let mut paths = Vec::new();
            for batch in order {
                let g = dw.write_batch(&writes(batch)).expect("batch");
                paths.push(g.path().expect("file").to_path_buf());
            }
            assert_ne!(paths[0], paths[1], "batches went to different files");
            drop(dw);
            fs.crash(CrashMode::Process, 1);

            let (dw, _) = open(&fs, cfg(DblwrMode::Full, 2, 4));
            let got = dw.recover().expect("recover");
            assert_eq!(got.copies.len(), 2);
            assert_eq!(got.copies.get(&PageId::new(0, 5)), Some(&high[0]));
            assert_eq!(got.copies.get(&PageId::new(0, 6)), Some(&low[1]));
        }
    }

    #[test]
    fn damaged_copies_and_headers_are_ignored() {
        let fs = sim(FlushMethod::Fsync);
        let (dw, _) = open(&fs, cfg(DblwrMode::Full, 2, 4));
        let a = vec![page(0, 1, 10, 0x0A), page(0, 2, 10, 0x0A)];
        let b = vec![page(0, 3, 10, 0x0B)];
        let pa = dw
            .write_batch(&writes(&a))
            .expect("a")
            .path()
            .map(Path::to_path_buf);
        let pb = dw
            .write_batch(&writes(&b))
            .expect("b")
            .path()
            .map(Path::to_path_buf);
        let (pa, pb) = (pa.expect("file a"), pb.expect("file b"));
        // Bit rot in the second copy of batch a, and in batch b's header.
        assert!(fs.corrupt(&pa, (PS + PS + 100) as u64, 0x40));
        assert!(fs.corrupt(&pb, 33, 0x01));
        let got = dw.recover().expect("recover");
        assert_eq!(got.copies.len(), 1);
        assert_eq!(got.copies.get(&PageId::new(0, 1)), Some(&a[0]));
    }

    /// A crash can leave a new, intact header over the copies of an older
    /// batch in the same file; those copies verify on their own but do not
    /// match the header, and must not be returned.
    #[test]
    fn stale_copy_under_new_header_is_rejected() {
        let fs = sim(FlushMethod::Fsync);
        let (dw, _) = open(&fs, cfg(DblwrMode::Full, 1, 4));
        let old = vec![page(0, 1, 100, 0x01)];
        drop(dw.write_batch(&writes(&old)).expect("old"));
        let new = page(0, 1, 200, 0x02);
        let h = Header {
            page_size: PS,
            batch_pages: 4,
            has_copies: true,
            seq: 99,
            entries: vec![DetectEntry {
                id: PageId::new(0, 1),
                lsn: 200,
                checksum: get_u32(&new, 0),
            }],
        };
        let mut buf = AlignedBuf::new(PS, 512);
        h.encode(&mut buf);
        let f = fs
            .open(&path(0), OpenOptions::existing(FileKind::Data))
            .expect("open");
        f.write_at(&buf, 0).expect("write header only");
        f.sync().expect("sync");
        let got = dw.recover().expect("recover");
        assert!(got.copies.is_empty(), "{got:?}");
    }

    #[test]
    fn detect_only_writes_metadata_and_no_page_images() {
        let fs = sim(FlushMethod::Fsync);
        let (dw, stats) = open(&fs, cfg(DblwrMode::DetectOnly, 2, 8));
        let images: Vec<Vec<u8>> = (0..3).map(|i| page(4, i, 500 + i as u64, 0xAB)).collect();
        let before = fs.stats();
        let g = dw.write_batch(&writes(&images)).expect("batch");
        let after = fs.stats();
        assert_eq!(after.writes - before.writes, 1);
        assert_eq!(
            after.bytes_written - before.bytes_written,
            512,
            "header only"
        );
        assert_eq!(after.syncs - before.syncs, 1);
        drop(g);
        assert_eq!(Stats::get(&stats.innodb_dblwr_writes), 1);
        assert_eq!(
            Stats::get(&stats.innodb_dblwr_pages_written),
            3,
            "as MySQL counts"
        );

        for n in 0..2 {
            let bytes = fs.durable_bytes(&path(n)).expect("file");
            assert_eq!(bytes.len(), PS, "header region only");
            assert!(
                !bytes.windows(64).any(|w| w.iter().all(|&b| b == 0xAB)),
                "no page body in the doublewrite file"
            );
        }
        fs.crash(CrashMode::Power { sector: 512 }, 3);
        let (dw, _) = open(&fs, cfg(DblwrMode::DetectOnly, 2, 8));
        let got = dw.recover().expect("recover");
        assert!(got.copies.is_empty());
        let want: Vec<DetectEntry> = images
            .iter()
            .map(|img| DetectEntry {
                id: page::page_id(img),
                lsn: page::page_lsn(img),
                checksum: page::compute_checksum(img),
            })
            .collect();
        assert_eq!(got.detect_only, want);
    }

    #[test]
    fn detect_only_keeps_the_highest_lsn_per_page() {
        let fs = sim(FlushMethod::Fsync);
        let (dw, _) = open(&fs, cfg(DblwrMode::DetectOnly, 2, 8));
        drop(dw.write_batch(&writes(&[page(0, 1, 50, 1)])).expect("a"));
        drop(
            dw.write_batch(&writes(&[page(0, 1, 70, 1), page(0, 0, 70, 1)]))
                .expect("b"),
        );
        let got = dw.recover().expect("recover");
        let lsns: Vec<(PageId, Lsn)> = got.detect_only.iter().map(|e| (e.id, e.lsn)).collect();
        assert_eq!(lsns, vec![(PageId::new(0, 0), 70), (PageId::new(0, 1), 70)]);
    }

    #[test]
    fn concurrent_batches_wait_for_a_free_file() {
        const THREADS: u32 = 8;
        const BATCHES: u32 = 20;
        let fs = sim(FlushMethod::Fsync);
        let (dw, stats) = open(&fs, cfg(DblwrMode::Full, 2, 4));
        let in_flight = AtomicUsize::new(0);
        let max_in_flight = AtomicUsize::new(0);
        std::thread::scope(|s| {
            for t in 0..THREADS {
                let (dw, in_flight, max_in_flight) = (&dw, &in_flight, &max_in_flight);
                s.spawn(move || {
                    for b in 0..BATCHES {
                        let images: Vec<Vec<u8>> = (0..4)
                            .map(|i| page(t, b * 4 + i, u64::from(b) + 1, t as u8))
                            .collect();
                        let g = dw.write_batch(&writes(&images)).expect("batch");
                        let now = in_flight.fetch_add(1, Ordering::SeqCst) + 1;
                        max_in_flight.fetch_max(now, Ordering::SeqCst);
                        // "Write in place and sync": hold the slot a while.
                        std::thread::sleep(std::time::Duration::from_micros(200));
                        in_flight.fetch_sub(1, Ordering::SeqCst);
                        drop(g);
                    }
                });
            }
        });
        let max = max_in_flight.load(Ordering::SeqCst);
        assert!(
            (1..=2).contains(&max),
            "at most one batch per file, saw {max}"
        );
        let total = u64::from(THREADS * BATCHES);
        assert_eq!(Stats::get(&stats.innodb_dblwr_writes), total);
        assert_eq!(Stats::get(&stats.innodb_dblwr_pages_written), total * 4);
        // The two files hold the last two batches, intact.
        let got = dw.recover().expect("recover");
        assert_eq!(got.copies.len(), 8);
        for (id, copy) in &got.copies {
            assert_eq!(page::verify(copy, *id), PageCheck::Valid);
        }
    }

    #[test]
    fn injected_sync_failure_poisons() {
        let fs = sim(FlushMethod::Fsync);
        let (dw, stats) = open(&fs, cfg(DblwrMode::Full, 2, 4));
        let images = vec![page(0, 1, 10, 1)];
        fs.inject(Fault::sync(FaultKind::Eio, 1).on_path(".dblwr"));
        let err = dw.write_batch(&writes(&images)).expect_err("sync fails");
        assert!(
            matches!(&err, StorageError::Io(e) if e.errno() == Some(5)),
            "{err:?}"
        );
        assert!(dw.poisoned().is_some());
        fs.clear_faults();
        for _ in 0..2 {
            let err = dw.write_batch(&writes(&images)).expect_err("sticky");
            assert!(matches!(err, StorageError::Poisoned(_)), "{err:?}");
        }
        assert!(matches!(dw.reset(), Err(StorageError::Poisoned(_))));
        assert_eq!(Stats::get(&stats.innodb_dblwr_writes), 0);
    }

    #[test]
    fn injected_write_failure_poisons_and_caller_can_poison() {
        let fs = sim(FlushMethod::Fsync);
        let (dw, _) = open(&fs, cfg(DblwrMode::DetectOnly, 2, 4));
        let images = vec![page(0, 1, 10, 1)];
        fs.inject(Fault::write(FaultKind::Enospc, 1));
        let err = dw.write_batch(&writes(&images)).expect_err("write fails");
        assert!(matches!(&err, StorageError::Io(e) if e.errno() == Some(28)));
        assert!(matches!(
            dw.write_batch(&writes(&images)),
            Err(StorageError::Poisoned(_))
        ));

        // The caller poisons after a failed in-place write.
        let (dw, _) = open(&fs, cfg(DblwrMode::DetectOnly, 2, 4));
        dw.poison("in-place write of 0:1 failed");
        let err = dw.write_batch(&writes(&images)).expect_err("poisoned");
        assert!(
            err.to_string().contains("in-place write of 0:1 failed"),
            "{err}"
        );
    }

    #[test]
    fn poison_wakes_a_waiting_writer() {
        let fs = sim(FlushMethod::Fsync);
        let (dw, _) = open(&fs, cfg(DblwrMode::Full, 1, 4));
        let images = vec![page(0, 1, 10, 1)];
        let g = dw.write_batch(&writes(&images)).expect("first");
        std::thread::scope(|s| {
            let waiter = s.spawn(|| dw.write_batch(&writes(&images)).map(|_| ()));
            std::thread::sleep(std::time::Duration::from_millis(20));
            dw.poison("test");
            let r = waiter.join().expect("thread");
            assert!(matches!(r, Err(StorageError::Poisoned(_))), "{r:?}");
        });
        drop(g);
    }

    #[test]
    fn recover_must_run_before_files_are_overwritten() {
        let fs = sim(FlushMethod::Fsync);
        let (dw, _) = open(&fs, cfg(DblwrMode::Full, 2, 4));
        let first = dw.write_batch(&writes(&[page(0, 1, 10, 1)])).expect("a");
        let seq = first.seq();
        drop(first);
        drop(dw);
        fs.crash(CrashMode::Process, 0);

        let (dw, _) = open(&fs, cfg(DblwrMode::Full, 2, 4));
        let images = vec![page(0, 2, 20, 2)];
        assert!(matches!(
            dw.write_batch(&writes(&images)),
            Err(StorageError::Recovery(_))
        ));
        assert!(matches!(dw.reset(), Err(StorageError::Recovery(_))));
        assert_eq!(dw.recover().expect("recover").copies.len(), 1);
        let g = dw.write_batch(&writes(&images)).expect("after recover");
        assert!(g.seq() > seq, "sequence numbers continue across restarts");
    }

    #[test]
    fn reset_clears() {
        let fs = sim(FlushMethod::Fsync);
        let (dw, _) = open(&fs, cfg(DblwrMode::Full, 2, 4));
        let images: Vec<Vec<u8>> = (0..4).map(|i| page(0, i, 10, 0x5A)).collect();
        drop(dw.write_batch(&writes(&images)).expect("batch"));
        assert_eq!(dw.recover().expect("recover").copies.len(), 4);
        dw.reset().expect("reset");
        assert_eq!(dw.recover().expect("recover"), DblwrContents::default());
        for n in 0..2 {
            let bytes = fs.durable_bytes(&path(n)).expect("file");
            assert_eq!(bytes.len(), 5 * PS);
            assert!(bytes[PS..].iter().all(|&b| b == 0), "old copies dropped");
        }
        // Still usable afterwards, and durable across a power cut.
        drop(dw.write_batch(&writes(&images[..1])).expect("batch"));
        fs.crash(CrashMode::Power { sector: 512 }, 9);
        let (dw, _) = open(&fs, cfg(DblwrMode::Full, 2, 4));
        assert_eq!(dw.recover().expect("recover").copies.len(), 1);
    }

    #[test]
    fn geometry_change_is_recovered_then_reset() {
        let fs = sim(FlushMethod::Fsync);
        let (dw, _) = open(&fs, cfg(DblwrMode::Full, 3, 4));
        let a: Vec<Vec<u8>> = (0..4).map(|i| page(0, i, 10, 1)).collect();
        let b: Vec<Vec<u8>> = (4..8).map(|i| page(0, i, 10, 1)).collect();
        let c: Vec<Vec<u8>> = (8..12).map(|i| page(0, i, 10, 1)).collect();
        let ga = dw.write_batch(&writes(&a)).expect("a");
        let gb = dw.write_batch(&writes(&b)).expect("b");
        let gc = dw.write_batch(&writes(&c)).expect("c");
        drop((ga, gb, gc));
        drop(dw);
        fs.crash(CrashMode::Process, 0);

        // Fewer files, bigger batches, DetectOnly.
        let (dw, _) = open(&fs, cfg(DblwrMode::DetectOnly, 2, 8));
        assert!(dw.needs_reset());
        let got = dw.recover().expect("recover");
        assert_eq!(
            got.copies.len(),
            12,
            "old geometry and the extra file are read"
        );
        dw.reset().expect("reset");
        assert!(!dw.needs_reset());
        assert!(!fs.exists(&path(2)).expect("exists"), "extra file removed");
        for n in 0..2 {
            assert_eq!(fs.durable_bytes(&path(n)).map(|b| b.len()), Some(PS));
        }
        assert_eq!(dw.recover().expect("recover"), DblwrContents::default());
        let (dw, _) = open(&fs, cfg(DblwrMode::DetectOnly, 2, 8));
        assert!(!dw.needs_reset());
    }

    #[test]
    fn aligned_io_works_under_o_direct() {
        for method in [FlushMethod::ODirect, FlushMethod::ODirectNoFsync] {
            for mode in [DblwrMode::Full, DblwrMode::DetectOnly] {
                let fs = sim(method);
                let (dw, _) = open(&fs, cfg(mode, 2, 4));
                let images: Vec<Vec<u8>> = (0..3).map(|i| page(0, i, 10, 7)).collect();
                let g = dw
                    .write_batch(&writes(&images))
                    .expect("batch under O_DIRECT");
                drop(g);
                fs.crash(CrashMode::Power { sector: 512 }, 5);
                let (dw, _) = open(&fs, cfg(mode, 2, 4));
                let got = dw.recover().expect("recover under O_DIRECT");
                match mode {
                    DblwrMode::Full => assert_eq!(got.copies.len(), 3, "{method}"),
                    DblwrMode::DetectOnly => assert_eq!(got.detect_only.len(), 3, "{method}"),
                }
                dw.reset().expect("reset under O_DIRECT");
            }
        }
    }

    #[test]
    fn header_longer_than_one_page() {
        let fs = sim(FlushMethod::Fsync);
        // 40 + 300 * 20 + 4 bytes of header: two 4 KiB pages.
        let (dw, _) = open(&fs, cfg(DblwrMode::Full, 1, 300));
        assert_eq!(fs.durable_bytes(&path(0)).map(|b| b.len()), Some(302 * PS));
        let images: Vec<Vec<u8>> = (0..300).map(|i| page(3, i, 77, i as u8)).collect();
        drop(dw.write_batch(&writes(&images)).expect("batch"));
        drop(dw);
        fs.crash(CrashMode::Process, 0);
        let (dw, _) = open(&fs, cfg(DblwrMode::Full, 1, 300));
        let got = dw.recover().expect("recover");
        assert_eq!(got.copies.len(), 300);
        for img in &images {
            assert_eq!(got.copies.get(&page::page_id(img)), Some(img));
        }
    }

    #[test]
    fn doublewrite_is_send_and_sync() {
        fn check<T: Send + Sync>() {}
        check::<Doublewrite>();
    }
}
