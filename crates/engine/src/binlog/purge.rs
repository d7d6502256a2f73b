//! # Removing binary log files: PURGE BINARY LOGS, expiry, RESET MASTER
//!
//! ```text
//!  binlog.index   ./binlog.000004  ./binlog.000005  ./binlog.000006  ./binlog.000007
//!                 \________ purgeable ________/     ^ a replica reads   ^ active
//!                                                     it: kept, and so is every later file
//! ```
//!
//! **PURGE BINARY LOGS TO 'f'** removes the files before `f`; **BEFORE t**
//! the files last written before `t` (their mtime, as MySQL compares).
//! Both walk the index from its oldest file and stop at the first file that
//! must stay: the target, a newer file, the active file (warning 1868), or
//! a file a dump is reading (warning 1867, with how many of the wanted
//! files went). Expiry (`binlog_expire_logs_seconds`) is BEFORE now − age,
//! run at start-up and after each rotation, without warnings.
//!
//! **Crash safety.** The index is rewritten first (atomically, by rename:
//! `Binlog::write_index`), the files are unlinked after. A crash between
//! leaves files older than the index's first: never listed, never read,
//! never written over (new files are numbered after the index's last).
//!
//! **RESET MASTER [TO n]** removes every file and starts again at
//! `stem.n` (1 by default). It runs with the commit pipeline stopped and
//! every transaction decided in the redo log (as rotation), so no file is
//! needed for recovery any more. It first writes `stem.~reset~` naming
//! `n`; a start that finds that marker finishes the reset before anything
//! reads the log, so a crash anywhere in it ends with the reset done and
//! never with a log that lost its middle.
//!
//! Lock order: `active` → `index_lock` (rotation takes them so).

use std::time::SystemTime;

use quire_io::{FileKind, OpenOptions, Vfs};

use super::gtid::GtidSet;
use super::{io, Active, Binlog, BinlogConfig};
use crate::error::{EngineError, Result};
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// What to purge.
#[derive(Debug, Clone)]
pub enum PurgeTarget {
    /// Every file before this one (which must be in the index).
    To(String),
    /// Every file last written before this time.
    Before(SystemTime),
}

/// What a purge did.
#[derive(Debug, Default)]
pub struct PurgeOutcome {
    /// The files removed, oldest first.
    pub purged: Vec<String>,
    /// Warnings for the client: (code, message).
    pub warnings: Vec<(u16, String)>,
}

/// The highest file number RESET MASTER TO accepts (MySQL's limit).
pub const RESET_TO_MAX: u64 = 2_000_000_000;

/// ER_UNKNOWN_TARGET_BINLOG (1373).
fn unknown_target() -> EngineError {
    EngineError::new(1373, "HY000", "Target log not found in binlog index")
}

fn reset_marker(cfg: &BinlogConfig) -> std::path::PathBuf {
    cfg.dir.join(format!("{}.~reset~", cfg.stem))
}

/// Why the walk over the index stopped short of what was asked.
enum Stop {
    Active(String),
    InUse { name: String, readers: usize },
}

impl Binlog {
    /// PURGE BINARY LOGS (and expiry, with `auto`: no warnings).
    pub fn purge(&self, target: &PurgeTarget, auto: bool) -> Result<PurgeOutcome> {
        let active = self.active.lock().name.clone();
        let _index = self.index_lock.lock();
        let cfg = self.cfg.lock().clone();
        let names = Binlog::read_index(&self.vfs, &cfg)?;
        let target = match target {
            PurgeTarget::To(t) => {
                // MySQL takes the name's last component (the directory is
                // the log's own).
                let base = t.rsplit('/').next().unwrap_or(t).to_string();
                if !names.contains(&base) {
                    return Err(unknown_target());
                }
                PurgeTarget::To(base)
            }
            b => b.clone(),
        };
        let mut count = 0usize;
        let mut stop = None;
        for n in &names {
            if !self.wanted(&cfg, n, &target)? {
                break;
            }
            if *n == active {
                stop = Some(Stop::Active(n.clone()));
                break;
            }
            let readers = Binlog::seq_of(&cfg.stem, n).map_or(0, |s| self.readers_of(s));
            if readers > 0 {
                stop = Some(Stop::InUse {
                    name: n.clone(),
                    readers,
                });
                break;
            }
            count += 1;
        }
        let mut out = PurgeOutcome {
            purged: names[..count].to_vec(),
            warnings: Vec::new(),
        };
        if !auto {
            match stop {
                Some(Stop::Active(n)) => out.warnings.push((
                    1868,
                    format!("file ./{n} was not purged because it is the active log file."),
                )),
                Some(Stop::InUse { name, readers }) => {
                    let mut wanted = count + 1;
                    for n in &names[count + 1..] {
                        if *n == active || !self.wanted(&cfg, n, &target)? {
                            break;
                        }
                        wanted += 1;
                    }
                    out.warnings.push((
                        1867,
                        format!(
                            "file ./{name} was not purged because it was being read by {readers} thread(s), purged only {count} out of {wanted} files."
                        ),
                    ));
                }
                None => {}
            }
        }
        if count > 0 {
            Binlog::write_index(&self.vfs, &cfg, &names[count..])?;
            // What no file holds any more: the new first file's
            // PREVIOUS_GTIDS.
            let first = cfg.dir.join(&names[count]);
            self.gtids
                .set_purged(Binlog::previous_gtids_of(&self.vfs, &first)?);
            for n in &out.purged {
                match self.vfs.remove_file(&cfg.dir.join(n)) {
                    Ok(()) | Err(quire_io::IoError::NotFound { .. }) => {}
                    Err(e) => return Err(io(e)),
                }
            }
            self.vfs.sync_dir(&cfg.dir).map_err(io)?;
        }
        Ok(out)
    }

    /// Whether file `n` is among those the target asks to remove.
    fn wanted(&self, cfg: &BinlogConfig, n: &str, target: &PurgeTarget) -> Result<bool> {
        Ok(match target {
            PurgeTarget::To(t) => n != t,
            PurgeTarget::Before(cut) => match self.vfs.modified(&cfg.dir.join(n)) {
                Ok(m) => m < *cut,
                // Listed but gone: its line in the index goes.
                Err(quire_io::IoError::NotFound { .. }) => true,
                Err(e) => return Err(io(e)),
            },
        })
    }

    /// Expiry: removes the files last written more than `max_age_s` ago,
    /// if a rotation (or the start) happened since the last look.
    pub(crate) fn expire(&self, max_age_s: u64) -> Result<usize> {
        if max_age_s == 0 || !self.expiry_due.swap(false, Ordering::AcqRel) {
            return Ok(0);
        }
        let cut = SystemTime::now()
            .checked_sub(std::time::Duration::from_secs(max_age_s))
            .unwrap_or(std::time::UNIX_EPOCH);
        Ok(self.purge(&PurgeTarget::Before(cut), true)?.purged.len())
    }

    /// RESET MASTER: removes every file and makes `stem.first` the active
    /// one. The caller stopped the commit pipeline and made every
    /// transaction decided in the redo log.
    pub(crate) fn reset_locked(&self, a: &mut Active, first: u32) -> Result<()> {
        let cfg = self.cfg.lock().clone();
        let _index = self.index_lock.lock();
        let names = Binlog::read_index(&self.vfs, &cfg)?;
        let name = Binlog::file_name(&cfg.stem, first);
        if !names.contains(&name) {
            // A file the index does not list is not ours to remove.
            let p = cfg.dir.join(&name);
            if self.vfs.exists(&p).map_err(io)? {
                let f = self
                    .vfs
                    .open(&p, OpenOptions::existing(FileKind::Other))
                    .map_err(io)?;
                if Binlog::holds_events(&*f).map_err(io)? {
                    return Err(EngineError::new(
                        1105,
                        "HY000",
                        format!("RESET MASTER: '{name}' exists outside the binlog index and holds events"),
                    ));
                }
            }
        }
        let marker = reset_marker(&cfg);
        write_marker(&self.vfs, &cfg, &marker, first).map_err(io)?;
        let (file, pos) = finish_reset(&self.vfs, &cfg, &names, first)?;
        self.gtids.reset();
        self.switch_active(a, file, name, first, pos, cfg.checksum);
        self.resets.fetch_add(1, Ordering::AcqRel);
        {
            // Backwards, unlike `publish`: the old files are gone.
            let mut p = self.published.lock();
            *p = (a.seq, pos);
            self.published_cv.notify_all();
        }
        Ok(())
    }

    /// Start-up: finishes a RESET MASTER a crash interrupted (before the
    /// log is read for recovery).
    pub(crate) fn finish_interrupted_reset(vfs: &Arc<dyn Vfs>, cfg: &BinlogConfig) -> Result<()> {
        let marker = reset_marker(cfg);
        if !vfs.exists(&marker).map_err(io)? {
            return Ok(());
        }
        let f = vfs
            .open(&marker, OpenOptions::existing(FileKind::Other))
            .map_err(io)?;
        let mut buf = vec![0u8; f.len().map_err(io)? as usize];
        f.read_at(&mut buf, 0).map_err(io)?;
        let first = String::from_utf8_lossy(&buf)
            .trim()
            .parse::<u32>()
            .ok()
            .filter(|&n| n >= 1 && u64::from(n) <= RESET_TO_MAX)
            .ok_or_else(|| {
                EngineError::internal(format!(
                    "{} does not hold a binlog file number",
                    marker.display()
                ))
            })?;
        let names = Binlog::read_index(vfs, cfg)?;
        finish_reset(vfs, cfg, &names, first)?;
        Ok(())
    }
}

/// Writes the RESET marker durably (temporary file, sync, rename).
fn write_marker(
    vfs: &Arc<dyn Vfs>,
    cfg: &BinlogConfig,
    marker: &std::path::Path,
    first: u32,
) -> quire_io::Result<()> {
    let tmp = cfg.dir.join(format!("{}.~reset~.tmp", cfg.stem));
    let f = vfs.open(&tmp, OpenOptions::create(FileKind::Other))?;
    f.set_len(0)?;
    f.write_at(format!("{first}\n").as_bytes(), 0)?;
    f.sync()?;
    vfs.rename(&tmp, marker)?;
    vfs.sync_dir(&cfg.dir)
}

/// The reset's steps after its marker is durable; each may be repeated
/// after a crash: remove the indexed files (and a header-only `stem.first`
/// from an earlier attempt), create `stem.first`, list it alone, remove the
/// marker.
fn finish_reset(
    vfs: &Arc<dyn Vfs>,
    cfg: &BinlogConfig,
    names: &[String],
    first: u32,
) -> Result<(Arc<dyn quire_io::File>, u64)> {
    let name = Binlog::file_name(&cfg.stem, first);
    for n in names.iter().chain(std::iter::once(&name)) {
        let p = cfg.dir.join(n);
        if n == &name && !names.contains(n) && vfs.exists(&p).map_err(io)? {
            // Checked by reset_locked before the marker: header only.
            let f = vfs
                .open(&p, OpenOptions::existing(FileKind::Other))
                .map_err(io)?;
            if Binlog::holds_events(&*f).map_err(io)? {
                continue;
            }
        }
        match vfs.remove_file(&p) {
            Ok(()) | Err(quire_io::IoError::NotFound { .. }) => {}
            Err(e) => return Err(io(e)),
        }
    }
    vfs.sync_dir(&cfg.dir).map_err(io)?;
    let made = Binlog::create_file(vfs, cfg, &name, false, &GtidSet::default())?;
    Binlog::write_index(vfs, cfg, std::slice::from_ref(&name))?;
    vfs.remove_file(&reset_marker(cfg)).map_err(io)?;
    vfs.sync_dir(&cfg.dir).map_err(io)?;
    Ok(made)
}

#[cfg(test)]
#[path = "purge_tests.rs"]
mod tests;
