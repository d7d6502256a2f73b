//! # The engine: open, DDL, and the commit path
//!
//! ```text
//!  Txn (txn.rs)                               Engine
//!  writes buffered in a write set   commit    ─────────────────────────────────────────────
//!  reads: own writes, then tree  ─────────►  1. commit record (write set) appended to redo
//!  + version chains (mvcc.rs)                   as one engine frame; CSN = its end LSN   ┐ commit
//!  row locks (lock.rs) held                  2. applied to the trees in CSN order:       │ mutex
//!  until commit/rollback                        old value -> version chain, new value,   │
//!                                               secondary entries                        │
//!                                            3. visible_csn = CSN; purge what no         ┘
//!                                               snapshot can see any more
//!                                            4. release row locks
//!                                            5. durability, innodb_flush_log_at_trx_commit:
//!                                               1 = write+fsync redo to the CSN (grouped:
//!                                                   one fsync serves every waiting commit)
//!                                               2 = write to the OS now, fsync every second
//!                                               0 = nothing now, write+fsync every second
//! ```
//!
//! The commit record makes a transaction atomic: its effects on the trees
//! are several mini-transactions, but the record precedes them in the log
//! and holds a checkpoint pin until they are applied, so recovery either
//! finds no record (and, the log being a prefix, none of its page changes)
//! or the record, which it replays idempotently (full row images) after
//! physical redo has made the trees consistent.
//!
//! Stage 1-3 run under one mutex: applying a commit is a handful of tree
//! operations (microseconds), while the fsync in stage 5 runs outside it,
//! where many committers share one (the redo log's leader/follower flush).
//! The binary log and two-phase commit (next issue) slot in between 1 and
//! 2: the record becomes the *prepare*, the binlog decides the order.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use parking_lot::{Condvar, Mutex, RwLock};
use quire_config::Config;
use quire_io::Vfs;
use quire_storage::{Store, Tree};

use std::collections::HashSet;

use crate::bigtrx::{ExtRef, SideFiles, REC_COMMIT_EXT, REC_PREPARE_EXT};
use crate::binlog::{Binlog, BinlogConfig};
use crate::catalog::{Catalog, ColumnDef, IndexDef, IndexSpec, NewTable, TableDef};
use crate::commit::{
    decode_markers, decode_prepare, Pipeline, Prepared, REC_MARKERS, REC_PREPARE, REC_PREPARE_V1,
};
use crate::constraint::CheckDef;
use crate::error::{EngineError, Result};
use crate::interrupt::Interrupt;
use crate::lock::LockManager;
use crate::mdl::TableLocks;
use crate::mvcc::{self, Chains, PurgeItem, PurgeQueue, Snapshots, Version};
use crate::offpage;
use crate::stats::{StatsRegistry, TableCounter};
use crate::txn::{Isolation, Txn};
use crate::types::{self, Collation, ColumnType, Value};
use quire_storage::lob::LobRef;

pub(crate) const CATALOG_TREE: &str = "quire:catalog";
const AUTOINC_TREE: &str = "quire:autoinc";
pub(crate) const REC_COMMIT: u8 = 1;
/// Writes of a large transaction applied between two looks at the
/// checkpoint (bigtrx.rs).
pub(crate) const REPLAY_PIECE_WRITES: usize = 256;
const OP_PUT: u8 = 1;
const OP_DELETE: u8 = 2;

/// Which trees of a replaced definition go (`Engine::drop_when_unused`).
pub(crate) enum OldTrees {
    /// Every tree of the table's id.
    All,
    /// These (dropped secondary indexes).
    Named(Vec<String>),
}

/// Replaced rows one commit purges at most (see `Inner::purge`); more
/// than a commit group adds, so commits alone keep up with themselves.
const PURGE_ITEMS_PER_COMMIT: usize = 128;
/// Replaced rows the purge thread purges per hold of the commit mutex.
const PURGE_ITEMS_PER_SLICE: usize = 64;
/// How long the purge thread sleeps when there is nothing to purge.
const PURGE_IDLE_SLEEP_MS: u64 = 10;

/// Runtime-changeable settings (SET GLOBAL).
#[derive(Debug)]
pub struct Settings {
    pub flush_log_at_trx_commit: AtomicU32,
    pub flush_log_at_timeout_s: AtomicU32,
    pub lock_wait_timeout_s: AtomicU64,
    /// `lock_wait_timeout` (metadata locks, mdl.rs).
    pub mdl_wait_timeout_s: AtomicU64,
    pub sync_binlog: AtomicU32,
    pub sync_delay_us: AtomicU64,
    pub sync_no_delay_count: AtomicU64,
    pub max_binlog_size: AtomicU64,
    /// `binlog_cache_size`, `max_binlog_cache_size` (binlog/cache.rs).
    pub binlog_cache_size: AtomicU64,
    pub max_binlog_cache_size: AtomicU64,
    /// `binlog_row_metadata=FULL`.
    pub row_metadata_full: AtomicBool,
    /// `binlog_row_image` (`RowImageMode::as_u8`).
    pub row_image: AtomicU8,
    /// `binlog_expire_logs_seconds`, 0 while `binlog_expire_logs_auto_purge`
    /// is OFF (binlog/purge.rs).
    pub binlog_expire_s: AtomicU64,
    pub prepare_flush_per_trx: AtomicBool,
    /// `innodb_stats_persistent`, `innodb_stats_auto_recalc`,
    /// `innodb_stats_persistent_sample_pages` (stats.rs).
    pub stats_persistent: AtomicBool,
    pub stats_auto_recalc: AtomicBool,
    pub stats_sample_pages: AtomicU64,
}

/// Counters with MySQL status names.
#[derive(Debug, Default)]
pub struct Counters {
    pub com_commit: AtomicU64,
    pub com_rollback: AtomicU64,
    pub commits_with_writes: AtomicU64,
}

/// One write of a commit record.
#[derive(Debug, Clone)]
pub(crate) struct RecWrite {
    pub table: u32,
    pub pk: Vec<u8>,
    /// Encoded row; None = delete.
    pub row: Option<Vec<u8>>,
}

/// A large transaction being applied (bigtrx.rs): its id (names its
/// file), its XID (the end LSN of its frame) and its commit number.
pub(crate) struct BigCommit {
    pub trx: u64,
    pub xid: u64,
    pub csn: u64,
}

/// A write ready to apply: its table, its record form, its decoded row.
pub(crate) type ApplyWrite = (Arc<TableDef>, RecWrite, Option<Vec<Value>>);

pub(crate) struct CommitState {
    purge: PurgeQueue,
    /// Each table's statistics counter, for the commit path (stats.rs):
    /// guarded by the commit mutex, so finding it costs no atomic.
    pub(crate) stats: HashMap<u32, Arc<TableCounter>>,
    /// Scratch list of (table, net rows, rows changed) of the commit being
    /// applied, kept to spare the commit path an allocation.
    stat_counts: Vec<(u32, i64, u64)>,
}

pub(crate) struct Inner {
    pub store: Store,
    pub settings: Settings,
    pub catalog: RwLock<Catalog>,
    trees: RwLock<HashMap<String, Tree>>,
    pub locks: LockManager,
    /// Table metadata locks: DDL against open writers (mdl.rs).
    pub(crate) mdl: TableLocks,
    pub chains: Chains,
    pub snapshots: Snapshots,
    pub(crate) commit: Mutex<CommitState>,
    pub next_trx: AtomicU64,
    autoinc: Mutex<HashMap<u32, u64>>,
    pub counters: Counters,
    shutdown: AtomicBool,
    /// Threads dropping the trees of replaced tables once their last
    /// reader is done (`Engine::drop_when_unused`), joined at close.
    droppers: Mutex<Vec<JoinHandle<()>>>,
    flusher_wake: (Mutex<bool>, Condvar),
    /// The binary log and its group commit, when log_bin is ON.
    pub(crate) pipeline: Option<Pipeline>,
    /// The configuration, kept current by SET GLOBAL.
    pub(crate) config: Mutex<Config>,
    /// One redo resize at a time (SET GLOBAL innodb_redo_log_capacity),
    /// without holding `config` through it.
    redo_resize: Mutex<()>,
    /// Optimizer statistics (stats.rs).
    pub(crate) stats: StatsRegistry,
    /// Records of large transactions (bigtrx.rs).
    pub(crate) side: SideFiles,
    /// Shared by every binlog commit, exclusive for a large one
    /// (bigtrx.rs, "The commit gate").
    pub(crate) big_gate: RwLock<()>,
    /// `@@server_uuid`, from `auto.cnf` (server_uuid.rs).
    server_uuid: String,
}

/// An open engine (cheap to clone).
#[derive(Clone)]
pub struct Engine {
    pub(crate) inner: Arc<Inner>,
    flusher: Arc<Mutex<Option<JoinHandle<()>>>>,
    /// The statistics thread (stats.rs), stopped with the flusher.
    stats_thread: Arc<Mutex<Option<JoinHandle<()>>>>,
    /// The purge thread (`Inner::purge_loop`), stopped with the flusher.
    purge_thread: Arc<Mutex<Option<JoinHandle<()>>>>,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine").finish()
    }
}

/// What recovery did at open.
#[derive(Debug, Clone, Default)]
pub struct EngineRecovery {
    pub commits_replayed: u64,
    /// Prepared transactions committed (marker or xid in the binlog).
    pub prepared_committed: u64,
    /// Prepared transactions rolled back (the binlog does not have them).
    pub prepared_rolled_back: u64,
    /// Bytes of a partial transaction cut from the end of the last binlog.
    pub binlog_truncated_bytes: u64,
    /// Off-page value chains a crash left unowned, freed (offpage.rs).
    pub offpage_orphans_freed: u64,
    /// Pages reserved by an index build that a crash interrupted, given
    /// back to the free list.
    pub bulk_pages_reclaimed: u64,
    /// Large transactions replayed from their anchored files (bigtrx.rs)
    /// before the frames after the checkpoint.
    pub large_replayed: u64,
    /// Complete binlog transactions cut with that tail because their
    /// PREPARE record was not in the recovered redo (never acknowledged).
    pub binlog_cut_transactions: u64,
    /// The binlog index was missing and rebuilt from the files on disk.
    pub binlog_index_rebuilt: bool,
    pub storage: quire_storage::RecoveryReport,
}

/// A new table's definition from its CREATE TABLE parts (indexes get
/// ids 1, 2, ... in order). `auto_increment` and `skip_fk_checks` are the
/// caller's to act on.
pub(crate) fn new_table_def(
    id: u32,
    db: &str,
    name: &str,
    spec: NewTable,
    temporary: bool,
) -> TableDef {
    let indexes = spec
        .indexes
        .into_iter()
        .enumerate()
        .map(|(i, ix)| IndexDef {
            id: i as u32 + 1,
            name: ix.name,
            unique: ix.unique,
            columns: ix.columns,
            created_csn: 0,
            prefix: IndexDef::normal_prefix(ix.prefix),
        })
        .collect();
    TableDef {
        id,
        db: db.to_string(),
        name: name.to_string(),
        columns: spec.columns,
        primary: spec.primary,
        indexes,
        checks: spec.checks,
        foreign_keys: spec.foreign_keys,
        rebuilt_csn: 0,
        building: None,
        collation: spec.collation.unwrap_or(ColumnType::LEGACY_COLLATION),
        temporary,
    }
}

/// The checks every new table's definition passes (CREATE TABLE and
/// CREATE TEMPORARY TABLE): column and key types, key columns that exist.
/// The indexes' prefix lengths are put in normal form.
pub(crate) fn check_new_table(
    columns: &[ColumnDef],
    primary: &[usize],
    indexes: &mut [IndexSpec],
) -> Result<()> {
    validate_columns(columns, primary)?;
    check_key_types(columns, primary)?;
    check_key_parts(columns, primary, &[], true)?;
    for ix in indexes.iter_mut() {
        if ix.columns.is_empty() || ix.columns.iter().any(|&c| c >= columns.len()) {
            return Err(EngineError::new(
                1072,
                "42000",
                format!("Key column for index '{}' doesn't exist in table", ix.name),
            ));
        }
        check_key_types(columns, &ix.columns)?;
        ix.prefix = check_key_parts(columns, &ix.columns, &ix.prefix, false)?;
    }
    if columns.iter().any(|c| c.instant.is_some()) {
        return Err(EngineError::internal(
            "a new table's column has an instant value",
        ));
    }
    Ok(())
}

fn row_image_mode(cfg: &Config) -> crate::binlog::format::RowImageMode {
    use crate::binlog::format::RowImageMode;
    match cfg.binlog_row_image.as_str() {
        "MINIMAL" => RowImageMode::Minimal,
        "NOBLOB" => RowImageMode::NoBlob,
        _ => RowImageMode::Full,
    }
}

/// `enforce_gtid_consistency` as one of its three names.
fn enforce_name(v: &str) -> &'static str {
    match v.to_ascii_uppercase().as_str() {
        "ON" | "1" => "ON",
        "WARN" | "2" => "WARN",
        _ => "OFF",
    }
}

/// The binlog age expiry removes at (0: none).
fn expire_seconds(cfg: &Config) -> u64 {
    if cfg.binlog_expire_logs_auto_purge {
        cfg.binlog_expire_logs_seconds
    } else {
        0
    }
}

/// A configuration registry error as the client sees it (1193 unknown
/// variable, 1231/1232/1238 ...).
fn config_error(e: quire_config::ConfigError) -> EngineError {
    let sqlstate = if e.mysql_errno() == 1193 {
        "HY000"
    } else {
        "42000"
    };
    EngineError::new(e.mysql_errno(), sqlstate, e.mysql_message())
}

/// A failed `SET GLOBAL innodb_redo_log_capacity`: the log stays as it
/// was (ER_WRONG_VALUE_FOR_VAR when the new size cannot hold the redo
/// after the checkpoint, else the storage error).
fn redo_resize_error(e: quire_storage::StorageError) -> EngineError {
    match e {
        quire_storage::StorageError::Config(m) => EngineError::new(
            1231,
            "42000",
            format!("Variable 'innodb_redo_log_capacity' can't be set to the value: {m}"),
        ),
        other => other.into(),
    }
}

/// Where the SQL layer puts the temporary files of sorts and hash
/// tables that outgrow their memory limits: `<datadir>/#tmp`.
pub fn tmpdir(datadir: &std::path::Path) -> std::path::PathBuf {
    datadir.join("#tmp")
}

/// Empties the temporary directory when the engine opens: files there
/// belong to statements of a process that is gone (a crash, a kill -9).
fn reset_tmpdir(datadir: &std::path::Path) {
    if let Ok(entries) = std::fs::read_dir(tmpdir(datadir)) {
        for e in entries.flatten() {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

impl Engine {
    /// Opens (creating if needed) the data directory of `cfg`.
    pub fn open(vfs: Arc<dyn Vfs>, cfg: &Config) -> Result<(Engine, EngineRecovery)> {
        // Engine records after the checkpoint: (start, end, payload).
        let mut logical: Vec<(u64, u64, Vec<u8>)> = Vec::new();
        let store = Store::open_with(vfs.clone(), cfg, &mut |s, e, p| {
            logical.push((s, e, p.to_vec()))
        })?;
        reset_tmpdir(&cfg.datadir);
        let server_uuid = crate::server_uuid::load_or_create(&vfs, &cfg.datadir)?;
        // Frames naming a large transaction's file get its record (the
        // file was synced before the frame was appended: bigtrx.rs).
        let side = SideFiles::new(vfs.clone(), &cfg.datadir);
        let mut ext_frames: HashMap<u64, (u64, bool)> = HashMap::new();
        for (_, end, payload) in logical.iter_mut() {
            if let Some(&k @ (REC_PREPARE_EXT | REC_COMMIT_EXT)) = payload.first() {
                let r = ExtRef::decode(payload).map_err(|e| {
                    EngineError::internal(format!("engine record at LSN {end} is malformed: {e}"))
                })?;
                let record = side.read(&r)?;
                let want = if k == REC_PREPARE_EXT {
                    REC_PREPARE
                } else {
                    REC_COMMIT
                };
                if record.first() != Some(&want) {
                    return Err(EngineError::internal(format!(
                        "large transaction file of the record at LSN {end} holds another kind of record"
                    )));
                }
                *payload = record;
                let anchored = side.anchor_of(r.trx_id)?.is_some_and(|a| a.xid == *end);
                ext_frames.insert(*end, (r.trx_id, anchored));
            }
        }
        drop(side);
        let binlog_cfg = cfg.log_bin.then(|| {
            let (dir, stem) =
                crate::binlog::location(&cfg.datadir, cfg.log_bin_basename.as_deref());
            BinlogConfig {
                dir,
                stem,
                server_id: cfg.server_id,
                checksum: cfg.binlog_checksum,
                sid: crate::binlog::gtid::parse_sid(&server_uuid).unwrap_or_default(),
                gtid_mode: crate::binlog::gtid::GtidMode::parse(&cfg.gtid_mode)
                    .unwrap_or(crate::binlog::gtid::GtidMode::Off),
                enforce_gtid: enforce_name(&cfg.enforce_gtid_consistency),
            }
        });
        if crate::binlog::gtid::GtidMode::parse(&cfg.gtid_mode)
            == Some(crate::binlog::gtid::GtidMode::On)
            && enforce_name(&cfg.enforce_gtid_consistency) != "ON"
        {
            return Err(crate::binlog::gtid::needs_enforce());
        }
        // A binlog transaction's XID is the end LSN of its PREPARE record.
        // An XID after the checkpoint with no PREPARE record ending there
        // names a prepare that did not survive the crash; such a
        // transaction was never acknowledged at trx_commit=1 (see
        // commit.rs), and the binlog is cut back to before it.
        let checkpoint_lsn = store.report().checkpoint_lsn;
        let prepare_ends: HashSet<u64> = logical
            .iter()
            .filter(|(_, _, p)| p.first() == Some(&REC_PREPARE))
            .map(|(_, end, _)| *end)
            .collect();
        let binlog_rec = match &binlog_cfg {
            Some(bc) => Binlog::recover(&vfs, bc, |xid| {
                xid > checkpoint_lsn && !prepare_ends.contains(&xid)
            })?,
            None => Default::default(),
        };
        let first_xid = ((store.log().epoch() as u64) << 40) + 1;
        let mut inner = Arc::new(Inner {
            store,
            settings: Settings {
                flush_log_at_trx_commit: AtomicU32::new(cfg.innodb_flush_log_at_trx_commit),
                flush_log_at_timeout_s: AtomicU32::new(cfg.innodb_flush_log_at_timeout),
                lock_wait_timeout_s: AtomicU64::new(cfg.innodb_lock_wait_timeout),
                mdl_wait_timeout_s: AtomicU64::new(cfg.lock_wait_timeout),
                sync_binlog: AtomicU32::new(cfg.sync_binlog),
                sync_delay_us: AtomicU64::new(cfg.binlog_group_commit_sync_delay),
                sync_no_delay_count: AtomicU64::new(cfg.binlog_group_commit_sync_no_delay_count),
                max_binlog_size: AtomicU64::new(cfg.max_binlog_size),
                binlog_cache_size: AtomicU64::new(cfg.binlog_cache_size),
                max_binlog_cache_size: AtomicU64::new(cfg.max_binlog_cache_size),
                row_metadata_full: AtomicBool::new(cfg.binlog_row_metadata_full),
                row_image: AtomicU8::new(row_image_mode(cfg).as_u8()),
                binlog_expire_s: AtomicU64::new(expire_seconds(cfg)),
                prepare_flush_per_trx: AtomicBool::new(cfg.quire_prepare_flush_per_trx),
                stats_persistent: AtomicBool::new(cfg.innodb_stats_persistent),
                stats_auto_recalc: AtomicBool::new(cfg.innodb_stats_auto_recalc),
                stats_sample_pages: AtomicU64::new(cfg.innodb_stats_persistent_sample_pages),
            },
            catalog: RwLock::new(Catalog::default()),
            trees: RwLock::new(HashMap::new()),
            locks: LockManager::new(),
            mdl: TableLocks::default(),
            chains: Chains::default(),
            snapshots: Snapshots::default(),
            commit: Mutex::new(CommitState {
                purge: PurgeQueue::default(),
                stats: HashMap::new(),
                stat_counts: Vec::new(),
            }),
            // Transaction ids are the binlog's XIDs, so they must never
            // repeat, even across a restart that lost the redo of the
            // previous run (trx_commit=2, power loss) while its binlog
            // survived: the high bits are the redo epoch, which every open
            // bumps and syncs before writing anything else.
            next_trx: AtomicU64::new(first_xid),
            autoinc: Mutex::new(HashMap::new()),
            counters: Counters::default(),
            shutdown: AtomicBool::new(false),
            droppers: Mutex::new(Vec::new()),
            flusher_wake: (Mutex::new(false), Condvar::new()),
            pipeline: None,
            config: Mutex::new(cfg.clone()),
            redo_resize: Mutex::new(()),
            stats: StatsRegistry::default(),
            side: SideFiles::new(vfs.clone(), &cfg.datadir),
            big_gate: RwLock::new(()),
            server_uuid,
        });
        inner.load_catalog()?;
        let mut rec = EngineRecovery {
            storage: inner.store.report().clone(),
            ..Default::default()
        };
        rec.binlog_truncated_bytes = binlog_rec.truncated_bytes;
        rec.binlog_cut_transactions = binlog_rec.cut_transactions;
        rec.binlog_index_rebuilt = binlog_rec.index_rebuilt;
        // Every record is in memory, so every decision is made first: a
        // prepare commits when a marker or the binlog has its XID.
        let mut marked: HashSet<u64> = HashSet::new();
        for (_, end, payload) in &logical {
            let bad = |e: String| {
                EngineError::internal(format!("engine record at LSN {end} is malformed: {e}"))
            };
            match payload.first() {
                Some(&REC_MARKERS) => marked.extend(decode_markers(payload).map_err(bad)?),
                Some(&REC_PREPARE_V1) => {
                    return Err(EngineError::internal(format!(
                        "the redo log holds a prepared transaction (LSN {end}) written by an \
                         earlier quire build, whose binlog XIDs this build does not read; \
                         recover the data directory with that build first"
                    )))
                }
                Some(&REC_COMMIT) | Some(&REC_PREPARE) => {}
                _ => return Err(bad("unknown kind".into())),
            }
        }
        // Then the replay, in log order: commits and committed prepares
        // apply their after images; rolled-back prepares (the tail of the
        // binlog order) are undone from their before images at the end,
        // newest first. While every record so far is done, the recovery
        // pin follows the replay (Store::recovery_progress), so a long log
        // never fills the redo while its checkpoint is held.
        // Large transactions whose files stand for them (anchored) and
        // whose frames the checkpoint passed: first, in XID order
        // (bigtrx.rs says why that order is right).
        let is_data = |p: &[u8]| matches!(p.first(), Some(&REC_COMMIT) | Some(&REC_PREPARE));
        let first_data = logical
            .iter()
            .find(|(_, _, p)| is_data(p))
            .map(|(s, _, _)| *s);
        let last_data_end = logical
            .iter()
            .rev()
            .find(|(_, _, p)| is_data(p))
            .map(|(_, e, _)| *e);
        let frame_ends: HashSet<u64> = logical.iter().map(|(_, e, _)| *e).collect();
        let found = inner.side.to_replay(checkpoint_lsn, &frame_ends)?;
        // Which record wrote each row last: only that one may adopt the
        // chains its body names (see `LastWriters`).
        let mut last = LastWriters::default();
        for f in &found {
            let record = inner.side.read_found(f.trx_id)?;
            last.note(f.anchor.xid, &big_record_writes(&record, f.anchor.xid)?);
        }
        for (_, end, payload) in &logical {
            if is_data(payload) {
                last.note(*end, &frame_writes(payload, *end)?);
            }
        }
        for f in found {
            let record = inner.side.read_found(f.trx_id)?;
            let writes = big_record_writes(&record, f.anchor.xid)?;
            drop(record);
            for piece in writes.chunks(REPLAY_PIECE_WRITES) {
                inner.replay(f.anchor.xid, piece, &last, Replay::Commit)?;
                inner.store.recovery_progress(first_data)?;
            }
            inner.store.recovery_step()?;
            rec.large_replayed += 1;
        }
        let mut undo: Vec<(u64, Vec<RecWrite>)> = Vec::new();
        let mut all_done = true;
        for (start, end, payload) in &logical {
            if all_done {
                inner.store.recovery_progress(Some(*start))?;
            }
            let bad = |e: String| {
                EngineError::internal(format!("engine record at LSN {end} is malformed: {e}"))
            };
            match payload.first() {
                Some(&REC_COMMIT) => {
                    let writes = decode_commit(payload).map_err(bad)?;
                    let big = ext_frames
                        .get(end)
                        .map(|&(trx, _)| (trx, all_done && last_data_end == Some(*end)));
                    inner.replay_committed(*start, *end, &writes, big, &last)?;
                    rec.commits_replayed += 1;
                }
                Some(&REC_PREPARE) => {
                    let p: Prepared = decode_prepare(payload).map_err(bad)?;
                    // The XID of a prepared transaction is its record's end LSN.
                    // A large transaction's anchored file decides it too.
                    let commit = marked.contains(end)
                        || binlog_rec.xids.contains(end)
                        || ext_frames.get(end).is_some_and(|&(_, anchored)| anchored);
                    let writes: Vec<RecWrite> = p
                        .writes
                        .into_iter()
                        .map(|(table, pk, after, before)| RecWrite {
                            table,
                            pk,
                            row: if commit { after } else { before },
                        })
                        .collect();
                    if commit {
                        let big = ext_frames
                            .get(end)
                            .map(|&(trx, _)| (trx, all_done && last_data_end == Some(*end)));
                        inner.replay_committed(*start, *end, &writes, big, &last)?;
                        rec.prepared_committed += 1;
                    } else {
                        undo.push((*end, writes));
                        rec.prepared_rolled_back += 1;
                        all_done = false;
                    }
                }
                _ => {}
            }
            inner.store.recovery_step()?;
        }
        for (end, writes) in undo.iter().rev() {
            inner.replay(*end, writes, &last, Replay::Undo)?;
            inner.store.recovery_step()?;
        }
        // Until here the checkpoint is held at the first engine record
        // (storage invariant 7): a crash during the replay above replays
        // it all again. Now the replay goes to disk and the checkpoint
        // moves past the records, which are never read again.
        if let Some(note) = inner.store.finish_recovery()? {
            rec.storage.notes.push(note);
        }
        inner.side.remove_all()?;
        // Chains a crash left unowned (offpage.rs): no snapshot reads them.
        rec.offpage_orphans_freed = quire_storage::lob::reclaim_orphans(inner.store.shared())?;
        // Pages an index build reserved and never registered (bulk.rs).
        rec.bulk_pages_reclaimed = quire_storage::bulk::reclaim_reservations(&inner.store)?;
        // Only now, with every decision durable, may a new binlog file
        // become the "last" one that a later recovery reads.
        if let Some(bc) = binlog_cfg {
            let b = Binlog::start(vfs.clone(), bc, binlog_rec.executed.clone())?;
            b.semisync
                .enabled
                .store(cfg.rpl_semi_sync_source_enabled, Ordering::Release);
            b.semisync
                .timeout_ms
                .store(cfg.rpl_semi_sync_source_timeout, Ordering::Release);
            b.semisync.wait_count.store(
                cfg.rpl_semi_sync_source_wait_for_replica_count,
                Ordering::Release,
            );
            // CSNs continue above everything recovery wrote (and above the
            // visibility watermark set just below).
            let csn_start = inner.store.log().lsn();
            Arc::get_mut(&mut inner)
                .ok_or_else(|| EngineError::internal("engine shared during recovery"))?
                .pipeline = Some(Pipeline::new(
                b,
                tmpdir(&cfg.datadir),
                csn_start,
                crate::syncer::RedoSyncer::start(inner.store.log().clone())?,
            ));
        }
        inner.drop_orphan_trees()?;
        // MySQL expires old binlog files at start-up too.
        inner.binlog_expire()?;
        {
            let mut st = inner.commit.lock();
            inner.stats_load(&mut st.stats, cfg.innodb_stats_persistent)?;
        }
        inner
            .snapshots
            .visible
            .store(inner.store.log().lsn(), Ordering::Release);
        let engine = Engine {
            inner: inner.clone(),
            flusher: Arc::new(Mutex::new(None)),
            stats_thread: Arc::new(Mutex::new(None)),
            purge_thread: Arc::new(Mutex::new(None)),
        };
        let i2 = inner.clone();
        let h = std::thread::Builder::new()
            .name("quire-log-flusher".into())
            .spawn(move || i2.flusher_loop())
            .map_err(EngineError::internal)?;
        *engine.flusher.lock() = Some(h);
        let i3 = inner.clone();
        let h = std::thread::Builder::new()
            .name("quire-stats".into())
            .spawn(move || i3.stats_loop())
            .map_err(EngineError::internal)?;
        *engine.stats_thread.lock() = Some(h);
        let i4 = inner.clone();
        let h = std::thread::Builder::new()
            .name("quire-purge".into())
            .spawn(move || i4.purge_loop())
            .map_err(EngineError::internal)?;
        *engine.purge_thread.lock() = Some(h);
        Ok((engine, rec))
    }

    /// Whether `other` is a handle of the same open engine.
    pub fn same(&self, other: &Engine) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    pub fn store(&self) -> &Store {
        &self.inner.store
    }
    pub fn settings(&self) -> &Settings {
        &self.inner.settings
    }

    /// `innodb_flush_log_at_trx_commit` at runtime (0, 1 or 2).
    pub fn set_flush_log_at_trx_commit(&self, v: u32) -> Result<()> {
        // (sync_binlog and the group commit knobs are atomics in `settings`.)
        if v > 2 {
            return Err(EngineError::new(
                1231,
                "42000",
                format!(
                    "Variable 'innodb_flush_log_at_trx_commit' can't be set to the value of '{v}'"
                ),
            ));
        }
        self.inner
            .settings
            .flush_log_at_trx_commit
            .store(v, Ordering::Release);
        Ok(())
    }

    /// `SET GLOBAL name = value` for the engine's dynamic variables:
    /// checked by the configuration registry (MySQL names, ranges, error
    /// 1193/1231/1238), then applied to the running engine.
    pub fn set_global(&self, name: &str, value: &str) -> Result<()> {
        if let Some(r) = self.set_gtid_var(name, value) {
            r?;
        }
        if name.eq_ignore_ascii_case("innodb_redo_log_capacity") {
            return self.set_redo_capacity(name, value);
        }
        let mut cfg = self.inner.config.lock();
        let mut next = cfg.clone();
        next.set_global(name, value).map_err(config_error)?;
        let s = &self.inner.settings;
        s.flush_log_at_trx_commit
            .store(next.innodb_flush_log_at_trx_commit, Ordering::Release);
        s.flush_log_at_timeout_s
            .store(next.innodb_flush_log_at_timeout, Ordering::Release);
        s.lock_wait_timeout_s
            .store(next.innodb_lock_wait_timeout, Ordering::Release);
        s.mdl_wait_timeout_s
            .store(next.lock_wait_timeout, Ordering::Release);
        s.sync_binlog.store(next.sync_binlog, Ordering::Release);
        s.sync_delay_us
            .store(next.binlog_group_commit_sync_delay, Ordering::Release);
        s.sync_no_delay_count.store(
            next.binlog_group_commit_sync_no_delay_count,
            Ordering::Release,
        );
        s.max_binlog_size
            .store(next.max_binlog_size, Ordering::Release);
        s.binlog_cache_size
            .store(next.binlog_cache_size, Ordering::Release);
        s.max_binlog_cache_size
            .store(next.max_binlog_cache_size, Ordering::Release);
        s.row_metadata_full
            .store(next.binlog_row_metadata_full, Ordering::Release);
        s.row_image
            .store(row_image_mode(&next).as_u8(), Ordering::Release);
        s.binlog_expire_s
            .store(expire_seconds(&next), Ordering::Release);
        if let Some(p) = &self.inner.pipeline {
            let ss = &p.binlog.semisync;
            ss.enabled
                .store(next.rpl_semi_sync_source_enabled, Ordering::Release);
            ss.timeout_ms
                .store(next.rpl_semi_sync_source_timeout, Ordering::Release);
            ss.wait_count.store(
                next.rpl_semi_sync_source_wait_for_replica_count,
                Ordering::Release,
            );
        }
        if let Some(p) = &self.inner.pipeline {
            // A shorter age applies now, not only at the next rotation.
            p.binlog.expiry_due.store(true, Ordering::Release);
        }
        s.prepare_flush_per_trx
            .store(next.quire_prepare_flush_per_trx, Ordering::Release);
        s.stats_persistent
            .store(next.innodb_stats_persistent, Ordering::Release);
        s.stats_auto_recalc
            .store(next.innodb_stats_auto_recalc, Ordering::Release);
        s.stats_sample_pages
            .store(next.innodb_stats_persistent_sample_pages, Ordering::Release);
        if let Some(p) = &self.inner.pipeline {
            p.binlog.set_checksum(next.binlog_checksum);
            p.binlog.set_server_id(next.server_id);
        }
        *cfg = next;
        Ok(())
    }

    /// `SET GLOBAL innodb_redo_log_capacity` (MySQL 8.0.30+): the log
    /// moves to files of the new size while commits go on
    /// (redo/resize.rs). The configuration lock is not held meanwhile
    /// (a resize takes seconds; SHOW VARIABLES reads it); resizes take
    /// turns on their own lock.
    fn set_redo_capacity(&self, name: &str, value: &str) -> Result<()> {
        let _one = self.inner.redo_resize.lock();
        let wanted = {
            let mut next = self.inner.config.lock().clone();
            next.set_global(name, value).map_err(config_error)?;
            next.innodb_redo_log_capacity
        };
        self.inner
            .store
            .resize_redo(wanted)
            .map_err(redo_resize_error)?;
        self.inner.config.lock().innodb_redo_log_capacity = wanted;
        Ok(())
    }

    /// The configuration as it is now (SHOW VARIABLES).
    pub fn config(&self) -> Config {
        self.inner.config.lock().clone()
    }

    /// One variable's value as `SHOW VARIABLES` prints it, without copying
    /// the whole configuration (sessions read variables per statement).
    pub fn config_value(&self, name: &str) -> Option<String> {
        self.inner.config.lock().get(name).ok()
    }

    /// A new table id for a table about to be made (a rebuild's copy, a
    /// temporary table's), reserved durably before any of its trees
    /// exists: the catalog's "N" counter is written first, so a crash
    /// never hands the id out again while its trees may remain. The
    /// caller holds the commit mutex.
    pub(crate) fn reserve_table_id(&self) -> Result<u32> {
        let id = {
            let mut c = self.inner.catalog.write();
            let id = c.next_table_id.max(1);
            c.next_table_id = id + 1;
            id
        };
        self.inner
            .tree(CATALOG_TREE)?
            .put(b"N", &(id + 1).to_le_bytes())?;
        Ok(id)
    }

    pub fn begin(&self, isolation: Isolation, read_only: bool) -> Txn {
        Txn::new(self.inner.clone(), isolation, read_only)
    }

    pub fn create_database(&self, name: &str, if_not_exists: bool) -> Result<()> {
        self.create_database_collated(name, if_not_exists, None)
    }

    /// CREATE DATABASE with a default collation (`DEFAULT CHARACTER SET` /
    /// `COLLATE`), kept in the catalog entry after the name and a 0 byte.
    pub fn create_database_collated(
        &self,
        name: &str,
        if_not_exists: bool,
        coll: Option<Collation>,
    ) -> Result<()> {
        let _ddl = self.inner.commit.lock();
        let mut cat = self.inner.catalog.write();
        if cat.has_db(name) {
            if if_not_exists {
                return Ok(());
            }
            return Err(EngineError::new(
                1007,
                "HY000",
                format!("Can't create database '{name}'; database exists"),
            ));
        }
        let mut k = b"D".to_vec();
        k.extend_from_slice(name.to_ascii_lowercase().as_bytes());
        let mut v = name.as_bytes().to_vec();
        let mut sql = format!("CREATE DATABASE `{name}`");
        if let Some(c) = coll {
            v.push(0);
            v.extend_from_slice(c.name().as_bytes());
            sql.push_str(&format!(
                " DEFAULT CHARACTER SET {} COLLATE {}",
                c.charset().name(),
                c.name()
            ));
        }
        self.inner.tree(CATALOG_TREE)?.put(&k, &v)?;
        cat.databases.insert(name.to_ascii_lowercase(), coll);
        drop(cat);
        self.inner.binlog_database_ddl(name, &sql)?;
        Ok(())
    }

    /// A database's default collation; None if it has none recorded (or
    /// does not exist).
    pub fn database_collation(&self, db: &str) -> Option<Collation> {
        let cat = self.inner.catalog.read();
        cat.databases
            .get(&db.to_ascii_lowercase())
            .copied()
            .flatten()
    }

    pub fn databases(&self) -> Vec<String> {
        self.inner
            .catalog
            .read()
            .databases
            .keys()
            .cloned()
            .collect()
    }

    pub fn tables(&self, db: &str) -> Result<Vec<Arc<TableDef>>> {
        let cat = self.inner.catalog.read();
        if !cat.has_db(db) {
            return Err(EngineError::unknown_database(db));
        }
        let dbl = db.to_ascii_lowercase();
        Ok(cat
            .tables
            .iter()
            .filter(|((d, _), _)| *d == dbl)
            .map(|(_, t)| t.clone())
            .collect())
    }

    pub fn table(&self, db: &str, name: &str) -> Result<Arc<TableDef>> {
        self.inner.catalog.read().table(db, name)
    }

    /// CREATE TABLE. `primary` = primary key column positions (empty: a
    /// hidden row id); `indexes` = (name, unique, columns).
    pub fn create_table(
        &self,
        db: &str,
        name: &str,
        columns: Vec<ColumnDef>,
        primary: Vec<usize>,
        indexes: Vec<(String, bool, Vec<usize>)>,
        if_not_exists: bool,
    ) -> Result<Arc<TableDef>> {
        let spec = NewTable {
            columns,
            primary,
            indexes: indexes
                .into_iter()
                .map(|(n, u, c)| IndexSpec::whole(n, u, c))
                .collect(),
            ..NewTable::default()
        };
        self.create_table_with(db, name, spec, if_not_exists)
    }

    /// CREATE TABLE with table options ([`NewTable`]).
    pub fn create_table_with(
        &self,
        db: &str,
        name: &str,
        mut spec: NewTable,
        if_not_exists: bool,
    ) -> Result<Arc<TableDef>> {
        let (auto_increment, skip_fk_checks) = (spec.auto_increment, spec.skip_fk_checks);
        let mut ddl = self.inner.commit.lock();
        let (id, def) = {
            let cat = self.inner.catalog.read();
            if !cat.has_db(db) {
                return Err(EngineError::unknown_database(db));
            }
            if cat.views.contains_key(&Catalog::key(db, name)) {
                return Err(EngineError::new(
                    1050,
                    "42S01",
                    format!("Table '{name}' already exists"),
                ));
            }
            if let Ok(t) = cat.table(db, name) {
                if if_not_exists {
                    return Ok(t);
                }
                return Err(EngineError::new(
                    1050,
                    "42S01",
                    format!("Table '{name}' already exists"),
                ));
            }
            check_new_table(&spec.columns, &spec.primary, &mut spec.indexes)?;
            let id = cat.next_table_id.max(1);
            let def = new_table_def(id, db, name, spec, false);
            crate::fk_ddl::validate(&def, &cat, !skip_fk_checks)?;
            (id, def)
        };
        // Trees first, then the catalog entry (one mtr): a crash between
        // leaves unreferenced empty trees, never a table without trees.
        self.inner.store.create_index(&def.clustered_tree())?;
        for i in &def.indexes {
            self.inner.store.create_index(&def.index_tree(i.id))?;
        }
        // The counter of a new id is always written: a crash after this
        // and before the catalog entry leaves a counter the id's next
        // owner overwrites here, never inherits.
        let next = auto_increment.unwrap_or(1).max(1);
        self.inner.set_autoinc(id, next - 1)?;
        let cat_tree = self.inner.tree(CATALOG_TREE)?;
        cat_tree.put(b"N", &(id + 1).to_le_bytes())?;
        let mut k = b"T".to_vec();
        k.extend_from_slice(&id.to_be_bytes());
        cat_tree.put(&k, &def.encode())?;
        let def = Arc::new(def);
        self.inner.stats_register_new(&mut ddl.stats, id)?;
        let mut cat = self.inner.catalog.write();
        cat.next_table_id = id + 1;
        cat.insert(def.clone());
        drop(cat);
        self.inner
            .binlog_ddl(&def.db, &def.create_sql_with(auto_increment))?;
        Ok(def)
    }

    /// CREATE TABLE `db.name` LIKE `src_db.src`: the source's columns,
    /// primary key, indexes and CHECKs (all named anew, `name_chk_N`, as
    /// MySQL), no foreign keys, no rows.
    pub fn create_table_like(
        &self,
        db: &str,
        name: &str,
        src_db: &str,
        src: &str,
        if_not_exists: bool,
    ) -> Result<Arc<TableDef>> {
        let def = self.table(src_db, src)?;
        let spec = Engine::like_spec(&def, name);
        drop(def);
        self.create_table_with(db, name, spec, if_not_exists)
    }

    /// What CREATE TABLE `name` LIKE `def` creates: the columns, primary
    /// key, indexes and CHECKs (renamed `name_chk_N`), no foreign keys.
    pub fn like_spec(def: &TableDef, name: &str) -> NewTable {
        // MySQL generates every CHECK name of the copy: name_chk_1, ...
        let checks = def
            .checks
            .iter()
            .enumerate()
            .map(|(i, c)| CheckDef {
                name: format!("{name}_chk_{}", i + 1),
                ..c.clone()
            })
            .collect();
        let columns = def
            .columns
            .iter()
            .map(|c| ColumnDef {
                instant: None,
                ..c.clone()
            })
            .collect();
        NewTable {
            columns,
            primary: def.primary.clone(),
            indexes: def
                .indexes
                .iter()
                .map(|i| IndexSpec {
                    name: i.name.clone(),
                    unique: i.unique,
                    columns: i.columns.clone(),
                    prefix: i.prefix.clone(),
                })
                .collect(),
            checks,
            collation: Some(def.collation),
            ..NewTable::default()
        }
    }

    /// The value the next auto-increment insert into `table` would get
    /// (without taking it): `SHOW CREATE TABLE`'s `AUTO_INCREMENT=n`.
    pub fn peek_auto_increment(&self, table: u32) -> Result<u64> {
        Ok(self.inner.autoinc_value(table)?.saturating_add(1))
    }

    /// DROP TABLE: the catalog entry goes first (one mini-transaction: the
    /// table is gone, atomically), then its trees are emptied and freed; a
    /// crash in between leaves unreferenced trees that the next start
    /// drops. It first waits for the table's open writers to end
    /// (metadata locks, mdl.rs).
    pub fn drop_table(&self, db: &str, name: &str, interrupt: Option<&Interrupt>) -> Result<()> {
        let id = self.table(db, name)?.id;
        let _mdl = self.inner.mdl.enter_ddl(
            id,
            self.inner.mdl.owner(),
            self.inner.mdl_timeout_for(interrupt),
            interrupt,
        )?;
        let t = {
            let mut ddl = self.inner.commit.lock();
            let t = self.table(db, name)?;
            let mut k = b"T".to_vec();
            k.extend_from_slice(&t.id.to_be_bytes());
            self.inner.tree(CATALOG_TREE)?.delete(&k)?;
            let mut cat = self.inner.catalog.write();
            cat.tables.remove(&Catalog::key(&t.db, &t.name));
            cat.by_id.remove(&t.id);
            drop(cat);
            self.inner.stats_forget(&mut ddl.stats, t.id)?;
            self.inner.binlog_ddl(
                &t.db,
                &format!("DROP TABLE `{}` /* generated by server */", t.name),
            )?;
            t
        };
        drop(_mdl);
        self.drop_when_unused(t, OldTrees::All)
    }

    /// Drops trees of `old`, a definition the catalog no longer has (a
    /// dropped or replaced table, or one whose indexes were dropped).
    /// Statements read a table through the definition they took at their
    /// start, without a metadata lock, so the trees may go only once every
    /// such statement has let go of it: now when none holds it (the usual
    /// case), else on a thread that waits for the last one (the DDL does
    /// not wait). A crash or a close before then leaves the trees to the
    /// next start's orphan sweep (`Inner::drop_orphan_trees`).
    pub(crate) fn drop_when_unused(&self, old: Arc<TableDef>, what: OldTrees) -> Result<()> {
        if Arc::strong_count(&old) == 1 {
            return self.inner.drop_old_trees(&old, &what);
        }
        let inner = Arc::clone(&self.inner);
        let h = std::thread::Builder::new()
            .name("quire-drop".into())
            .spawn(move || {
                while Arc::strong_count(&old) > 1 {
                    if inner.is_shutdown() {
                        return;
                    }
                    std::thread::sleep(Duration::from_millis(1));
                }
                // A failure leaves orphans the next start drops.
                let _ = inner.drop_old_trees(&old, &what);
            })
            .map_err(|e| EngineError::internal(format!("cannot start a drop thread: {e}")))?;
        let mut d = self.inner.droppers.lock();
        d.retain(|h| !h.is_finished());
        d.push(h);
        Ok(())
    }

    /// DROP DATABASE: every table, then the database entry.
    pub fn drop_database(&self, db: &str, interrupt: Option<&Interrupt>) -> Result<()> {
        if !self.inner.catalog.read().has_db(db) {
            return Err(EngineError::new(
                1008,
                "HY000",
                format!("Can't drop database '{db}'; database doesn't exist"),
            ));
        }
        let names: Vec<String> = self.tables(db)?.iter().map(|t| t.name.clone()).collect();
        for name in names {
            self.drop_table(db, &name, interrupt)?;
        }
        self.drop_views_of(db)?;
        let _ddl = self.inner.commit.lock();
        let mut k = b"D".to_vec();
        k.extend_from_slice(db.to_ascii_lowercase().as_bytes());
        self.inner.tree(CATALOG_TREE)?.delete(&k)?;
        self.inner
            .catalog
            .write()
            .databases
            .remove(&db.to_ascii_lowercase());
        self.inner
            .binlog_database_ddl(db, &format!("DROP DATABASE `{db}`"))?;
        Ok(())
    }

    /// DROP TABLE under foreign_key_checks: refused while another table's
    /// foreign key names this one (3730), unless that table is in
    /// `listed` (dropped by the same statement).
    pub fn check_drop(&self, db: &str, name: &str, listed: &[(String, String)]) -> Result<()> {
        match crate::fk_ddl::blocking_child(&self.inner.catalog.read(), db, name, listed) {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// TRUNCATE TABLE under foreign_key_checks: refused while another
    /// table's foreign key names this one (1701).
    pub fn check_truncate(&self, db: &str, name: &str) -> Result<()> {
        match crate::fk_ddl::truncate_blocked(&self.inner.catalog.read(), db, name) {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Status counters with MySQL names (engine, locks, storage).
    pub fn status(&self) -> Vec<(String, u64)> {
        let c = &self.inner.counters;
        let mut v = vec![
            (
                "Com_commit".to_string(),
                c.com_commit.load(Ordering::Relaxed),
            ),
            (
                "Com_rollback".to_string(),
                c.com_rollback.load(Ordering::Relaxed),
            ),
        ];
        v.extend(
            self.inner
                .locks
                .status()
                .into_iter()
                .map(|(k, n)| (k.to_string(), n)),
        );
        let (versions, bytes) = self.inner.chains.usage();
        v.push(("Quire_mvcc_versions".into(), versions as u64));
        v.push(("Quire_mvcc_version_bytes".into(), bytes as u64));
        v.push((
            "Quire_purge_queue".into(),
            self.inner.commit.lock().purge.items.len() as u64,
        ));
        if let Some(p) = &self.inner.pipeline {
            let c = &p.counters;
            for (k, a) in [
                ("Binlog_commits", &c.binlog_commits),
                ("Binlog_group_commits", &c.binlog_group_commits),
                ("Binlog_group_commit_trigger_count", &c.trigger_count),
                ("Binlog_group_commit_trigger_timeout", &c.trigger_timeout),
                (
                    "Binlog_group_commit_trigger_lock_wait",
                    &c.trigger_lock_wait,
                ),
                ("Binlog_bytes_written", &p.binlog.bytes_written),
                ("Binlog_cache_use", &c.cache_use),
                ("Binlog_cache_disk_use", &c.cache_disk_use),
                ("Quire_binlog_fsyncs", &p.binlog.fsyncs),
            ] {
                v.push((k.to_string(), a.load(Ordering::Relaxed)));
            }
            for (k, n) in p.binlog.semisync.status() {
                v.push((k.to_string(), n));
            }
        }
        v.extend(self.inner.store.status());
        v
    }

    /// `FLUSH BINARY LOGS`: every transaction of the active binlog file is
    /// made decided, the file ends with ROTATE and the next one starts
    /// (nothing happens with the binary log off, as in MySQL).
    pub fn rotate_binlog(&self) -> Result<()> {
        self.inner.rotate_binlog()
    }

    /// SET GLOBAL gtid_mode / enforce_gtid_consistency: checked against
    /// the binlog's GTID state (one step at a time, ON needs enforcement);
    /// None for other variables. The config registry then records the
    /// value as for any variable.
    fn set_gtid_var(&self, name: &str, value: &str) -> Option<Result<()>> {
        use crate::binlog::gtid::GtidMode;
        let lname = name.to_ascii_lowercase();
        let r = match lname.as_str() {
            "gtid_mode" => {
                let Some(mode) = GtidMode::parse(value) else {
                    return None; // the registry answers 1231
                };
                match self.binlog() {
                    Some(b) => b.gtids.set_mode(mode),
                    None if mode == GtidMode::Off => Ok(()),
                    None => Err(EngineError::not_supported(format!(
                        "gtid_mode = {} without log_bin",
                        mode.name()
                    ))),
                }
            }
            "enforce_gtid_consistency" => {
                let v = value.trim().to_ascii_uppercase();
                if !matches!(v.as_str(), "ON" | "OFF" | "WARN" | "0" | "1" | "2") {
                    return None;
                }
                match self.binlog() {
                    Some(b) => b.gtids.set_enforce(enforce_name(&v)),
                    None => Ok(()),
                }
            }
            _ => return None,
        };
        Some(r)
    }

    /// `@@gtid_mode`, `@@enforce_gtid_consistency`, `@@gtid_executed`,
    /// `@@gtid_purged` as text (None for other names).
    pub fn gtid_var(&self, name: &str) -> Option<String> {
        let b = self.binlog();
        Some(match name.to_ascii_lowercase().as_str() {
            "gtid_mode" => b.map_or("OFF", |b| b.gtids.mode().name()).to_string(),
            "enforce_gtid_consistency" => b.map_or("OFF", |b| b.gtids.enforce()).to_string(),
            "gtid_executed" => b
                .map(|b| b.gtids.executed_set().to_text())
                .unwrap_or_default(),
            "gtid_purged" => b
                .map(|b| b.gtids.purged_set().to_text())
                .unwrap_or_default(),
            _ => return None,
        })
    }

    /// `RESET MASTER [TO first]` (`RESET BINARY LOGS AND GTIDS`).
    pub fn reset_binlog(&self, first: u32) -> Result<()> {
        self.inner.reset_binlog(first)
    }

    /// `PURGE BINARY LOGS` (nothing happens with the binary log off, as in
    /// MySQL).
    pub fn purge_binlog(
        &self,
        target: &crate::binlog::purge::PurgeTarget,
    ) -> Result<crate::binlog::purge::PurgeOutcome> {
        match self.binlog() {
            Some(b) => b.purge(target, false),
            None => Ok(Default::default()),
        }
    }

    /// `@@server_uuid`: this data directory's identity (`auto.cnf`).
    pub fn server_uuid(&self) -> &str {
        &self.inner.server_uuid
    }

    /// The binary log, when log_bin is ON.
    pub fn binlog(&self) -> Option<&Binlog> {
        self.inner.pipeline.as_ref().map(|p| &p.binlog)
    }

    /// Stops background work; with `clean`, checkpoints (a clean shutdown).
    pub fn close(&self, clean: bool) -> Result<()> {
        self.inner.shutdown.store(true, Ordering::Release);
        {
            let (m, cv) = &self.inner.flusher_wake;
            *m.lock() = true;
            cv.notify_all();
        }
        if let Some(h) = self.flusher.lock().take() {
            let _ = h.join();
        }
        self.inner.stats.wake_all();
        if let Some(h) = self.stats_thread.lock().take() {
            let _ = h.join();
        }
        if let Some(h) = self.purge_thread.lock().take() {
            let _ = h.join();
        }
        let droppers: Vec<JoinHandle<()>> = std::mem::take(&mut *self.inner.droppers.lock());
        for h in droppers {
            let _ = h.join();
        }
        if clean {
            self.inner.stats_save_counts()?;
            if let Some(p) = &self.inner.pipeline {
                // A commit-stage leader may still be writing markers after
                // waking its members: let it finish.
                let _g = p.commit.lock.lock();
                p.binlog.sync()?;
                self.inner.append_markers(p, true)?;
                p.binlog.close()?;
            }
            self.inner.store.sync_log()?;
        }
        self.inner.store.close(clean)?;
        Ok(())
    }
}

/// MySQL indexes a JSON column only through a generated column on a
/// path (3152).
pub(crate) fn check_key_types(columns: &[ColumnDef], key: &[usize]) -> Result<()> {
    for col in key.iter().filter_map(|&c| columns.get(c)) {
        if col.ty == ColumnType::Json {
            return Err(EngineError::new(
                3152,
                "42000",
                format!(
                    "JSON column '{}' supports indexing only via generated columns on a specified JSON path.",
                    col.name
                ),
            ));
        }
    }
    Ok(())
}

/// MySQL's limit on a key (InnoDB, DYNAMIC rows): 3072 bytes.
const MAX_KEY_BYTES: u64 = 3072;

fn too_long_key() -> EngineError {
    EngineError::new(
        1071,
        "42000",
        format!("Specified key was too long; max key length is {MAX_KEY_BYTES} bytes"),
    )
}

/// The bytes MySQL counts for a key part of a column of type `ty` (the
/// whole column, or `prefix` characters / bytes of it).
fn key_part_bytes(ty: &ColumnType, prefix: Option<u32>) -> u64 {
    let chars = |n: u32, ty: &ColumnType| {
        u64::from(n) * u64::from(ty.collation().map_or(1, |c| c.charset().max_len()))
    };
    match *ty {
        ColumnType::Char { len, .. } | ColumnType::Varchar { len, .. } => {
            chars(prefix.unwrap_or(len), ty)
        }
        ColumnType::Text { max_bytes, .. } => prefix.map_or(u64::from(max_bytes), |n| chars(n, ty)),
        ColumnType::Binary { len } | ColumnType::VarBinary { len } => {
            u64::from(prefix.unwrap_or(len))
        }
        ColumnType::Blob { max_bytes } => u64::from(prefix.unwrap_or(max_bytes)),
        ColumnType::TinyInt { .. } | ColumnType::Year => 1,
        ColumnType::SmallInt { .. } => 2,
        ColumnType::MediumInt { .. } | ColumnType::Date => 3,
        ColumnType::Int { .. } | ColumnType::Float => 4,
        ColumnType::Decimal { precision, .. } => u64::from(precision) / 2 + 1,
        ColumnType::Enum { .. } => 2,
        _ => 8,
    }
}

/// Checks one key's parts as MySQL 8.0 does and gives its prefix lengths
/// in normal form (a prefix as long as a CHAR/VARCHAR/BINARY/VARBINARY
/// column is the whole column, as MySQL keys it): 1391 for a zero
/// length, 1089 for a prefix on a column that is not a string or longer
/// than the column, 1170 for a TEXT/BLOB column without one, 1071 for a
/// part or key over 3072 bytes; `primary`: a PRIMARY KEY, where a
/// remaining prefix is refused (1235: the clustered key holds whole
/// values). `prefix` shorter than `key` means whole columns for the rest.
pub fn check_key_parts(
    columns: &[ColumnDef],
    key: &[usize],
    prefix: &[Option<u32>],
    primary: bool,
) -> Result<Vec<Option<u32>>> {
    let mut out = Vec::with_capacity(key.len());
    let mut total = 0u64;
    for (p, &c) in key.iter().enumerate() {
        let Some(col) = columns.get(c) else {
            return Err(EngineError::new(
                1072,
                "42000",
                "Key column doesn't exist in table",
            ));
        };
        let wrong = || {
            EngineError::new(
                1089,
                "HY000",
                "Incorrect prefix key; the used key part isn't a string, the used length is longer than the key part, or the storage engine doesn't support unique prefix keys",
            )
        };
        let lob = matches!(col.ty, ColumnType::Text { .. } | ColumnType::Blob { .. });
        let part = match prefix.get(p).copied().flatten() {
            Some(0) => {
                return Err(EngineError::new(
                    1391,
                    "HY000",
                    format!("Key part '{}' length cannot be 0", col.name),
                ))
            }
            Some(n) => match col.ty {
                ColumnType::Char { len, .. }
                | ColumnType::Varchar { len, .. }
                | ColumnType::Binary { len }
                | ColumnType::VarBinary { len } => match n.cmp(&len) {
                    std::cmp::Ordering::Greater => return Err(wrong()),
                    std::cmp::Ordering::Equal => None,
                    std::cmp::Ordering::Less => Some(n),
                },
                ColumnType::Text { max_bytes, .. } | ColumnType::Blob { max_bytes } => {
                    if n > max_bytes {
                        return Err(wrong());
                    }
                    Some(n)
                }
                _ => return Err(wrong()),
            },
            None if lob => {
                return Err(EngineError::new(
                    1170,
                    "42000",
                    format!(
                        "BLOB/TEXT column '{}' used in key specification without a key length",
                        col.name
                    ),
                ))
            }
            None => None,
        };
        if primary && part.is_some() {
            return Err(EngineError::not_supported(
                "a column prefix length in a PRIMARY KEY",
            ));
        }
        let bytes = key_part_bytes(&col.ty, part);
        total += bytes;
        if bytes > MAX_KEY_BYTES || total > MAX_KEY_BYTES {
            return Err(too_long_key());
        }
        out.push(part);
    }
    Ok(IndexDef::normal_prefix(out))
}

pub(crate) fn validate_columns(columns: &[ColumnDef], primary: &[usize]) -> Result<()> {
    if columns.is_empty() {
        return Err(EngineError::new(
            1113,
            "42000",
            "A table must have at least 1 column",
        ));
    }
    check_column_names(columns)?;
    for c in columns {
        if c.auto_increment && !c.ty.is_integer() {
            return Err(EngineError::new(
                1063,
                "42000",
                format!("Incorrect column specifier for column '{}'", c.name),
            ));
        }
    }
    if columns.iter().filter(|c| c.auto_increment).count() > 1 {
        return Err(EngineError::new(1075, "42000", "Incorrect table definition; there can be only one auto column and it must be defined as a key"));
    }
    for &p in primary {
        if p >= columns.len() {
            return Err(EngineError::new(
                1072,
                "42000",
                "Key column doesn't exist in table",
            ));
        }
    }
    Ok(())
}

/// Secondary key bytes (without the primary key suffix) of a row whose
/// values passed through coerce(), so every one fits its column.
pub(crate) fn sec_key(t: &TableDef, idx: &IndexDef, row: &[Value]) -> Vec<u8> {
    index_key(t, idx, row).unwrap_or_else(|| {
        panic!(
            "sec_key: a value of index {} does not fit its column; values must pass through coerce() first",
            idx.name
        )
    })
}

pub(crate) fn has_null(idx: &IndexDef, row: &[Value]) -> bool {
    idx.columns.iter().any(|&c| matches!(row[c], Value::Null))
}

/// The secondary key bytes of `row` in `idx` (without the primary key
/// suffix): two rows conflict in a UNIQUE index when these are equal
/// (column prefixes cut, strings weighed by their collations). None when
/// a value does not fit its column.
pub fn index_key(t: &TableDef, idx: &IndexDef, row: &[Value]) -> Option<Vec<u8>> {
    if idx.columns.iter().any(|&c| c >= row.len()) {
        return None;
    }
    let vals = idx.key_values(t, row);
    let tys = idx.columns.iter().map(|&c| &t.columns[c].ty);
    let mut out = Vec::new();
    types::encode_parts(vals.iter().zip(tys), &mut out).ok()?;
    Some(out)
}

/// A key's values as MySQL's 1062 message shows them: the key parts of
/// `row` (column prefixes cut, as MySQL prints a prefix key's entry).
pub(crate) fn display_key(t: &TableDef, idx: &IndexDef, row: &[Value]) -> String {
    idx.key_values(t, row)
        .iter()
        .map(|v| v.to_string())
        .collect::<Vec<_>>()
        .join("-")
}

pub(crate) fn display_vals(cols: &[usize], row: &[Value]) -> String {
    cols.iter()
        .map(|&c| row[c].to_string())
        .collect::<Vec<_>>()
        .join("-")
}

pub(crate) fn encode_commit(trx: u64, writes: &[RecWrite]) -> Vec<u8> {
    let mut w = Vec::new();
    w.push(REC_COMMIT);
    w.extend_from_slice(&trx.to_le_bytes());
    w.extend_from_slice(&(writes.len() as u32).to_le_bytes());
    for x in writes {
        w.extend_from_slice(&x.table.to_le_bytes());
        w.push(if x.row.is_some() { OP_PUT } else { OP_DELETE });
        w.extend_from_slice(&(x.pk.len() as u32).to_le_bytes());
        w.extend_from_slice(&x.pk);
        if let Some(r) = &x.row {
            w.extend_from_slice(&(r.len() as u32).to_le_bytes());
            w.extend_from_slice(r);
        }
    }
    w
}

/// Recovery: for each row, the end LSN of the last record in the log that
/// writes it (the CSN its replay uses). A committed write is replayed
/// only by the row's last writer:
///
/// * Only the last writer's apply can be missing from the recovered
///   pages. A transaction writing a row another one wrote waited for
///   that one's row lock, released after its apply, so the earlier
///   apply's mtrs precede the later record in the log; the recovered log
///   is a prefix, so with the later record it holds the whole earlier
///   apply, which the redo pass has put on the pages. Replaying the
///   earlier record would rewrite the row to an old state and the later
///   one back again: redo for nothing, written while the checkpoint is
///   pinned at the earlier record, and for a large transaction more than
///   the log has free.
/// * A commit record's body may name chains written before the record
///   (`Inner::stage_body`); once a later commit replaced the row, purge
///   may have freed those chains and their pages may hold another chain
///   by now.
///
/// Undoing a rolled-back prepare is not a committed write; its before
/// image is written even when a later record writes the row (another
/// rolled-back prepare, undone first), except a before image naming
/// chains, for the second reason.
#[derive(Default)]
pub(crate) struct LastWriters(HashMap<(u32, Vec<u8>), u64>);

impl LastWriters {
    fn note(&mut self, lsn: u64, writes: &[RecWrite]) {
        for w in writes {
            let e = self.0.entry((w.table, w.pk.clone())).or_insert(lsn);
            *e = (*e).max(lsn);
        }
    }

    fn is_last(&self, table: u32, pk: &[u8], lsn: u64) -> bool {
        self.0.get(&(table, pk.to_vec())).is_none_or(|&l| l == lsn)
    }
}

/// What a recovery replay writes (see [`LastWriters`]).
#[derive(Clone, Copy)]
pub(crate) enum Replay {
    /// A committed record's after images: only where it is the last writer.
    Commit,
    /// A rolled-back prepare's before images.
    Undo,
}

/// The writes of a COMMIT or PREPARE record (a prepare's after images).
fn record_writes(record: &[u8]) -> std::result::Result<Vec<RecWrite>, String> {
    match record.first() {
        Some(&REC_PREPARE) => Ok(decode_prepare(record)?
            .writes
            .into_iter()
            .map(|(table, pk, after, _)| RecWrite {
                table,
                pk,
                row: after,
            })
            .collect()),
        Some(&REC_COMMIT) => decode_commit(record),
        _ => Err("unknown kind".into()),
    }
}

/// [`record_writes`] of a large transaction's file.
fn big_record_writes(record: &[u8], xid: u64) -> Result<Vec<RecWrite>> {
    record_writes(record).map_err(|e| {
        EngineError::internal(format!(
            "large transaction file of XID {xid} is malformed: {e}"
        ))
    })
}

/// [`record_writes`] of the engine frame ending at `end`.
fn frame_writes(payload: &[u8], end: u64) -> Result<Vec<RecWrite>> {
    record_writes(payload)
        .map_err(|e| EngineError::internal(format!("engine record at LSN {end} is malformed: {e}")))
}

fn decode_commit(b: &[u8]) -> std::result::Result<Vec<RecWrite>, String> {
    fn take<'a>(r: &mut &'a [u8], n: usize) -> std::result::Result<&'a [u8], String> {
        if r.len() < n {
            return Err("truncated".into());
        }
        let (a, b) = r.split_at(n);
        *r = b;
        Ok(a)
    }
    fn u32_(r: &mut &[u8]) -> std::result::Result<u32, String> {
        Ok(u32::from_le_bytes(
            take(r, 4)?.try_into().map_err(|_| "u32")?,
        ))
    }
    let mut r = b;
    if take(&mut r, 1)?[0] != REC_COMMIT {
        return Err("unknown record kind".into());
    }
    take(&mut r, 8)?;
    let n = u32_(&mut r)? as usize;
    let mut out = Vec::with_capacity(n.min(1 << 16));
    for _ in 0..n {
        let table = u32_(&mut r)?;
        let op = take(&mut r, 1)?[0];
        let pl = u32_(&mut r)? as usize;
        let pk = take(&mut r, pl)?.to_vec();
        let row = match op {
            OP_PUT => {
                let rl = u32_(&mut r)? as usize;
                Some(take(&mut r, rl)?.to_vec())
            }
            OP_DELETE => None,
            o => return Err(format!("unknown op {o}")),
        };
        out.push(RecWrite { table, pk, row });
    }
    if !r.is_empty() {
        return Err("trailing bytes".into());
    }
    Ok(out)
}

impl Inner {
    pub(crate) fn tree(&self, name: &str) -> Result<Tree> {
        if let Some(t) = self.trees.read().get(name) {
            return Ok(t.clone());
        }
        // Only the engine's own trees are created on first use; a table's
        // trees are created by CREATE TABLE/INDEX, so a lookup racing a
        // DROP TABLE cannot bring a dropped tree back.
        let t = match self.store.index(name)? {
            Some(t) => t,
            None if name == CATALOG_TREE
                || name == AUTOINC_TREE
                || name == crate::stats::STATS_TREE =>
            {
                self.store.create_index(name)?
            }
            None => {
                return Err(EngineError::new(
                    1146,
                    "42S02",
                    format!("Table storage '{name}' doesn't exist (dropped?)"),
                ))
            }
        };
        self.trees.write().insert(name.to_string(), t.clone());
        Ok(t)
    }

    pub(crate) fn is_shutdown(&self) -> bool {
        self.shutdown.load(Ordering::Acquire)
    }

    pub(crate) fn lock_timeout(&self) -> Duration {
        Duration::from_secs(self.settings.lock_wait_timeout_s.load(Ordering::Relaxed))
    }

    /// How long a metadata lock wait lasts (`lock_wait_timeout`): the
    /// connection's own value if it set one, else the global.
    pub(crate) fn mdl_timeout_for(&self, interrupt: Option<&Interrupt>) -> Duration {
        interrupt
            .and_then(Interrupt::mdl_wait_timeout)
            .unwrap_or_else(|| {
                Duration::from_secs(self.settings.mdl_wait_timeout_s.load(Ordering::Relaxed))
            })
    }

    fn drop_old_trees(&self, old: &TableDef, what: &OldTrees) -> Result<()> {
        match what {
            OldTrees::All => self.drop_trees(old.id),
            OldTrees::Named(names) => {
                for n in names {
                    self.drop_tree_named(n)?;
                }
                Ok(())
            }
        }
    }

    /// Drops every tree of table `id` (and forgets the cached handles).
    pub(crate) fn drop_trees(&self, id: u32) -> Result<()> {
        let prefix = format!("t{id}.");
        let names: Vec<String> = self
            .store
            .indexes()?
            .into_iter()
            .map(|(n, _)| n)
            .filter(|n| n.starts_with(&prefix))
            .collect();
        let mut drained = Vec::new();
        for n in names {
            if n == format!("t{id}.0") {
                drained = self.drain_offpage(&n)?;
            }
            self.trees.write().remove(&n);
            self.store.drop_index(&n)?;
        }
        self.free_version_chains(id, &drained)
    }

    /// A dropped table's superseded versions: forgotten, and the chains
    /// only they named (on the orphan list since their row was replaced)
    /// freed now rather than at the next recovery. `drained`: the chains
    /// the table's tree owned, already freed (a version may share one
    /// with a newer row when the column did not change).
    fn free_version_chains(&self, id: u32, drained: &[LobRef]) -> Result<()> {
        let mut seen: HashSet<LobRef> = drained.iter().copied().collect();
        let mut orphans: Vec<LobRef> = Vec::new();
        for v in self.chains.take_table(id) {
            for r in offpage::refs(&v.row)? {
                if seen.insert(r) {
                    orphans.push(r);
                }
            }
        }
        offpage::reclaim_all(self.store.shared(), &orphans)
    }

    /// Removes a dropped table's rows that own off-page chains, each with
    /// its chains orphaned in the delete's mini-transaction and then
    /// freed: crash-safe row by row, like the drop that follows. Returns
    /// the chains it freed.
    fn drain_offpage(&self, name: &str) -> Result<Vec<LobRef>> {
        let mut freed = Vec::new();
        let Some(tree) = self.store.index(name)? else {
            return Ok(freed);
        };
        let mut from = std::ops::Bound::Unbounded;
        loop {
            let batch: Vec<(Vec<u8>, Vec<u8>)> = tree
                .range(from.clone(), std::ops::Bound::Unbounded, false)
                .take(512)
                .collect::<quire_storage::Result<_>>()?;
            let Some((last, _)) = batch.last() else {
                return Ok(freed);
            };
            from = std::ops::Bound::Excluded(last.clone());
            for (k, v) in &batch {
                let refs = match mvcc::split_value(v) {
                    Some((_, _, body)) => offpage::refs(body)?,
                    None => continue,
                };
                if refs.is_empty() {
                    continue;
                }
                tree.delete_with(k, &mut |m| offpage::swap_owner(m, &[], &refs))?;
                offpage::reclaim_all(self.store.shared(), &refs)?;
                freed.extend(refs);
            }
        }
    }

    /// Drops one named tree if it exists (and forgets its cached handle).
    pub(crate) fn drop_tree_named(&self, name: &str) -> Result<()> {
        self.trees.write().remove(name);
        self.store.drop_index(name)?;
        Ok(())
    }

    /// Trees of tables the catalog no longer has (a DROP or CREATE TABLE
    /// that a crash interrupted) and secondary-index trees no definition
    /// names (an interrupted CREATE INDEX or DROP INDEX, alter.rs).
    /// Finished here.
    fn drop_orphan_trees(&self) -> Result<()> {
        let by_id = self.catalog.read().by_id.clone();
        let mut orphans: Vec<u32> = Vec::new();
        let mut orphan_indexes: Vec<String> = Vec::new();
        for (n, _) in self.store.indexes()? {
            let Some(rest) = n.strip_prefix('t') else {
                continue;
            };
            let Some((id, iid)) = rest.split_once('.') else {
                continue;
            };
            let (Ok(id), Ok(iid)) = (id.parse::<u32>(), iid.parse::<u32>()) else {
                continue;
            };
            match by_id.get(&id) {
                None if !orphans.contains(&id) => orphans.push(id),
                Some(t) if iid != 0 && !t.indexes.iter().any(|i| i.id == iid) => {
                    orphan_indexes.push(n.clone())
                }
                _ => {}
            }
        }
        for id in orphans {
            self.drop_trees(id)?;
        }
        for n in orphan_indexes {
            self.drop_tree_named(&n)?;
        }
        Ok(())
    }

    fn load_catalog(&self) -> Result<()> {
        let t = self.tree(CATALOG_TREE)?;
        self.tree(AUTOINC_TREE)?;
        let mut cat = Catalog::default();
        for e in t.scan_all()? {
            let (k, v) = e;
            match k.first() {
                Some(b'D') => {
                    let coll = v
                        .iter()
                        .position(|&b| b == 0)
                        .and_then(|at| std::str::from_utf8(&v[at + 1..]).ok())
                        .and_then(Collation::by_name);
                    cat.databases
                        .insert(String::from_utf8_lossy(&k[1..]).into_owned(), coll);
                }
                Some(b'T') => {
                    let def = TableDef::decode(&v).map_err(|e| {
                        EngineError::internal(format!("catalog entry is malformed: {e}"))
                    })?;
                    cat.insert(Arc::new(def));
                }
                Some(b'V') => {
                    let def = crate::view::ViewDef::decode(&v).map_err(|e| {
                        EngineError::internal(format!("catalog view entry is malformed: {e}"))
                    })?;
                    cat.views
                        .insert(Catalog::key(&def.db, &def.name), Arc::new(def));
                }
                Some(b'N') => {
                    cat.next_table_id =
                        u32::from_le_bytes(v.as_slice().try_into().unwrap_or([1, 0, 0, 0]));
                }
                _ => {}
            }
        }
        *self.catalog.write() = cat;
        Ok(())
    }

    /// Next auto-increment value (or hidden row id) for a table: persisted
    /// on every allocation, so values are never reused after a restart
    /// (MySQL 8.0 behaviour). `at_least` raises the counter (explicit
    /// values larger than it).
    pub(crate) fn next_autoinc(
        &self,
        table: u32,
        hidden: bool,
        at_least: Option<u64>,
    ) -> Result<u64> {
        let key_id = if hidden { table | 0x8000_0000 } else { table };
        let tree = self.tree(AUTOINC_TREE)?;
        let key = key_id.to_be_bytes();
        let mut m = self.autoinc.lock();
        let cur = Self::autoinc_current(&m, &tree, key_id)?;
        let (next, store) = match at_least {
            Some(x) if x > cur => (x, x),
            Some(_) => return Ok(cur),
            None => match cur.checked_add(1) {
                Some(n) => (n, n),
                // The counter is exhausted (found by fuzzing: it reached
                // u64::MAX); MySQL answers ER_AUTOINC_READ_FAILED.
                None => {
                    return Err(EngineError::new(
                        1467,
                        "HY000",
                        "Failed to read auto-increment value from storage engine",
                    ))
                }
            },
        };
        tree.put(&key, &store.to_le_bytes())?;
        m.insert(key_id, store);
        Ok(next)
    }

    /// The last auto-increment value handed out (0: none yet).
    fn autoinc_current(cache: &HashMap<u32, u64>, tree: &Tree, key_id: u32) -> Result<u64> {
        if let Some(&v) = cache.get(&key_id) {
            return Ok(v);
        }
        Ok(tree
            .get(&key_id.to_be_bytes())?
            .and_then(|v| v.as_slice().try_into().ok().map(u64::from_le_bytes))
            .unwrap_or(0))
    }

    /// The last auto-increment value of `table` (0: none yet).
    pub(crate) fn autoinc_value(&self, table: u32) -> Result<u64> {
        let tree = self.tree(AUTOINC_TREE)?;
        let m = self.autoinc.lock();
        Self::autoinc_current(&m, &tree, table)
    }

    /// The last hidden row id of a table without primary key (0: none).
    pub(crate) fn hidden_rowid_value(&self, table: u32) -> Result<u64> {
        let tree = self.tree(AUTOINC_TREE)?;
        let m = self.autoinc.lock();
        Self::autoinc_current(&m, &tree, table | 0x8000_0000)
    }

    /// Sets the hidden row id counter of a table made just now.
    pub(crate) fn set_hidden_rowid(&self, table: u32, last: u64) -> Result<()> {
        self.set_autoinc(table | 0x8000_0000, last)
    }

    /// Sets the counter of a table created just now (`AUTO_INCREMENT=n`
    /// stores n-1, the value "last handed out").
    pub(crate) fn set_autoinc(&self, table: u32, last: u64) -> Result<()> {
        let tree = self.tree(AUTOINC_TREE)?;
        let mut m = self.autoinc.lock();
        tree.put(&table.to_be_bytes(), &last.to_le_bytes())?;
        m.insert(table, last);
        Ok(())
    }

    /// Applies a commit to the trees (caller holds the commit mutex).
    pub(crate) fn apply_commit(
        &self,
        st: &mut CommitState,
        csn: u64,
        writes: &[ApplyWrite],
    ) -> Result<()> {
        // Per table of the transaction: (id, net rows, rows changed),
        // added to its statistics counter once at the end (stats.rs).
        let mut counts = std::mem::take(&mut st.stat_counts);
        counts.clear();
        let r = self.apply_writes(st, csn, writes, &mut counts);
        for &(id, net, mods) in &counts {
            self.stats_counter_for_commit(&mut st.stats, id)
                .add(net, mods);
        }
        st.stat_counts = counts;
        r
    }

    fn apply_writes(
        &self,
        st: &mut CommitState,
        csn: u64,
        writes: &[ApplyWrite],
        counts: &mut Vec<(u32, i64, u64)>,
    ) -> Result<()> {
        for (t, w, vals) in writes {
            // The table as it is now: an index being built online
            // (index_build.rs) or created since this transaction wrote
            // must get this row too. CREATE INDEX changes no column, so
            // `vals` still fit.
            let Some(now) = self.catalog.read().by_id.get(&t.id).cloned() else {
                // Dropped while this transaction was open: its writes have
                // no table to go to.
                continue;
            };
            let t = &now;
            let ct = self.tree(&t.clustered_tree())?;
            let cur = ct.get(&w.pk)?;
            let cur_parsed = cur.as_deref().and_then(mvcc::split_value);
            let was_live = matches!(cur_parsed, Some((_, false, _)));
            let net = i64::from(w.row.is_some()) - i64::from(was_live);
            if was_live || w.row.is_some() {
                match counts.iter_mut().find(|c| c.0 == t.id) {
                    Some(c) => {
                        c.1 += net;
                        c.2 += 1;
                    }
                    None => counts.push((t.id, net, 1)),
                }
            }
            if let Some((ccsn, cdel, crow)) = cur_parsed {
                self.chains.push(
                    t.id,
                    &w.pk,
                    Version {
                        csn: ccsn,
                        deleted: cdel,
                        row: crow.to_vec(),
                    },
                );
            }
            match (&w.row, vals) {
                (Some(row), Some(vals)) => {
                    let old_body = cur_parsed.map(|(_, _, crow)| crow);
                    self.put_row(&ct, t, &w.pk, csn, row, vals, old_body)?;
                    let old_vals = match cur_parsed {
                        Some((_, false, crow)) => Some(self.decode_indexed(t, crow)?),
                        _ => None,
                    };
                    for idx in t.maintained_indexes() {
                        let sk = sec_key(t, idx, vals);
                        if let Some(ov) = &old_vals {
                            if sec_key(t, idx, ov) == sk {
                                continue;
                            }
                        }
                        let mut key = sk;
                        key.extend_from_slice(&w.pk);
                        self.tree(&t.index_tree(idx.id))?.put(&key, &w.pk)?;
                    }
                }
                _ => {
                    if let Some((_, false, crow)) = cur_parsed {
                        ct.put(&w.pk, &mvcc::make_value(csn, true, crow))?;
                    }
                }
            }
            st.purge.items.push_back(PurgeItem {
                csn,
                table: t.id,
                pk: w.pk.clone(),
            });
        }
        Ok(())
    }

    /// Runs purge for the commits no snapshot can look behind any more
    /// (at most `PURGE_ITEMS_PER_COMMIT` replaced rows per call).
    /// Returns the chains the purged versions alone named, unreferenced
    /// now (on the orphan list): the caller frees them with
    /// [`Inner::free_purged`] after releasing the commit mutex, so that a
    /// multi-MiB value's pages are not freed inside every commit's
    /// critical section.
    pub(crate) fn purge(&self, st: &mut CommitState) -> Result<Vec<LobRef>> {
        self.purge_some(st, PURGE_ITEMS_PER_COMMIT)
    }

    /// Purges at most `budget` replaced rows (see [`Inner::purge`]).
    fn purge_some(&self, st: &mut CommitState, budget: usize) -> Result<Vec<LobRef>> {
        let oldest = self.snapshots.oldest();
        let mut freed = Vec::new();
        // A bounded share per commit: when a long snapshot (a long
        // transaction, an online index build) ends, its backlog is purged
        // by the purge thread in slices, and commits go on between them
        // (purged inside one commit's critical section, a 20 s backlog
        // stalled every commit for 7 s).
        let mut budget = budget;
        while let Some(front) = st.purge.items.front() {
            if front.csn > oldest || budget == 0 {
                break;
            }
            budget -= 1;
            let item = st.purge.items.pop_front().expect("front exists");
            freed.extend(self.purge_one(&item, oldest)?);
        }
        Ok(freed)
    }

    /// Frees what [`Inner::purge`] handed back. Failing is not the
    /// commit's failure (the commit is applied): an error here is an I/O
    /// error, which poisoned the store, and the next write sees it; the
    /// chains stay orphans that the next recovery frees.
    pub(crate) fn free_purged(&self, freed: Result<Vec<LobRef>>) {
        if let Ok(refs) = freed {
            let _ = offpage::reclaim_all(self.store.shared(), &refs);
        }
    }

    /// Purges one replaced row: its versions older than every snapshot,
    /// their secondary entries, the row itself if it is delete-marked and
    /// unseen. Returns the chains to free (see [`Inner::purge`]).
    fn purge_one(&self, item: &PurgeItem, oldest: u64) -> Result<Vec<LobRef>> {
        let t = match self.catalog.read().by_id.get(&item.table) {
            Some(t) => t.clone(),
            // Dropped: DROP freed its tree's chains and its versions'
            // (drop_trees, free_version_chains).
            None => return Ok(Vec::new()),
        };
        let (removed, rest) = self.chains.prune(item.table, &item.pk, item.csn);
        let ct = self.tree(&t.clustered_tree())?;
        let cur = ct.get(&item.pk)?;
        let decode = |row: &[u8]| self.decode_indexed(&t, row);
        let mut in_use: Vec<Vec<Value>> = Vec::new();
        let mut stale: Vec<Vec<Value>> = Vec::new();
        let mut delete_row = false;
        let mut tree_refs = Vec::new();
        if let Some((ccsn, cdel, crow)) = cur.as_deref().and_then(mvcc::split_value) {
            tree_refs = offpage::refs(crow)?;
            if cdel {
                if ccsn <= oldest && rest.is_empty() {
                    delete_row = true;
                    stale.push(decode(crow)?);
                }
            } else {
                in_use.push(decode(crow)?);
            }
        }
        for v in &rest {
            if !v.deleted {
                in_use.push(decode(&v.row)?);
            }
        }
        for v in &removed {
            if !v.deleted {
                stale.push(decode(&v.row)?);
            }
        }
        for idx in t.maintained_indexes() {
            let used: Vec<Vec<u8>> = in_use.iter().map(|r| sec_key(&t, idx, r)).collect();
            let mut done: Vec<Vec<u8>> = Vec::new();
            for r in &stale {
                let sk = sec_key(&t, idx, r);
                if used.contains(&sk) || done.contains(&sk) {
                    continue;
                }
                let mut key = sk.clone();
                key.extend_from_slice(&item.pk);
                self.tree(&t.index_tree(idx.id))?.delete(&key)?;
                done.push(sk);
            }
        }
        let reclaim = self.unreferenced_chains(&removed, &rest, &tree_refs, delete_row)?;
        if delete_row {
            ct.delete_with(&item.pk, &mut |m| offpage::swap_owner(m, &[], &tree_refs))?;
        }
        Ok(reclaim)
    }

    /// The chains purge frees: those of the versions it drops (and of the
    /// tree's row when it removes that too) that no remaining version and
    /// no tree value refers to. A chain appears in several versions only
    /// through delete-marked copies, hence the dedup.
    fn unreferenced_chains(
        &self,
        removed: &[Version],
        rest: &[Version],
        tree_refs: &[LobRef],
        delete_row: bool,
    ) -> Result<Vec<LobRef>> {
        let mut keep: Vec<LobRef> = Vec::new();
        for v in rest {
            keep.extend(offpage::refs(&v.row)?);
        }
        let mut out: Vec<LobRef> = Vec::new();
        if delete_row {
            out.extend_from_slice(tree_refs);
        } else {
            keep.extend_from_slice(tree_refs);
        }
        for v in removed {
            for r in offpage::refs(&v.row)? {
                if !keep.contains(&r) && !out.contains(&r) {
                    out.push(r);
                }
            }
        }
        Ok(out)
    }

    /// A stored body decoded for its secondary keys only: columns no
    /// index uses are left NULL, so no long value elsewhere is read.
    fn decode_indexed(&self, t: &TableDef, body: &[u8]) -> Result<Vec<Value>> {
        let mut indexed = vec![false; t.columns.len()];
        for idx in t.maintained_indexes() {
            for &c in &idx.columns {
                indexed[c] = true;
            }
        }
        offpage::decode(self.store.shared(), body, &t.columns, Some(&indexed))
    }

    /// A stored row body decoded (off-page columns read).
    pub(crate) fn decode_body(&self, t: &TableDef, body: &[u8]) -> Result<Vec<Value>> {
        offpage::decode(self.store.shared(), body, &t.columns, None)
    }

    /// Largest body a clustered entry with a `key_len`-byte key holds
    /// in-row (the CSN and flags take 9 bytes).
    pub(crate) fn body_limit(&self, key_len: usize) -> usize {
        let ps = self.store.shared().pool.page_size();
        quire_storage::btree::max_entry_bytes(ps).saturating_sub(key_len + 9)
    }

    /// The body a row is stored with, made before its commit record is
    /// logged (outside the commit mutex): in-row when its image fits,
    /// else with its longest columns written to chains now (offpage.rs),
    /// which are born orphans and pushed on `staged`; the record then
    /// carries 20-byte references instead of the values, and the apply
    /// (or recovery's replay) adopts them. An unchanged column keeps the
    /// chain of the row it replaces (the caller holds that row's lock).
    pub(crate) fn stage_body(
        &self,
        t: &TableDef,
        pk: &[u8],
        image: Vec<u8>,
        vals: &[Value],
        staged: &mut Vec<LobRef>,
    ) -> Result<Vec<u8>> {
        if image.len() <= self.body_limit(pk.len()) {
            return Ok(image);
        }
        let cur = self.tree(&t.clustered_tree())?.get(pk)?;
        let old_body = cur.as_deref().and_then(mvcc::split_value).map(|c| c.2);
        match self.externalize(t, pk, &image, vals, old_body)? {
            Some(st) => {
                staged.extend(st.new);
                Ok(st.body)
            }
            None => Ok(image),
        }
    }

    /// A too-long plain `image` with its longest columns written to new
    /// chains, keeping `old_body`'s chain for a column whose value did
    /// not change (None: it fits in-row after all).
    fn externalize(
        &self,
        t: &TableDef,
        pk: &[u8],
        image: &[u8],
        vals: &[Value],
        old_body: Option<&[u8]>,
    ) -> Result<Option<offpage::Stored>> {
        let old_cols = match old_body {
            Some(b) => offpage::column_refs(b)?,
            None => Vec::new(),
        };
        let limit = self.body_limit(pk.len());
        offpage::store_body(
            self.store.shared(),
            image,
            vals,
            &t.types(),
            limit,
            &old_cols,
        )
    }

    /// Frees the chains staged for a commit that never reached the log.
    pub(crate) fn unstage(&self, staged: &[LobRef]) {
        // They are orphans: a failure here leaves them to the next
        // recovery's reclaim, never to a reader.
        let _ = offpage::reclaim_all(self.store.shared(), staged);
    }

    /// Stores `row` at `pk` with commit number `csn`, replacing `old_body`
    /// (the tree's value, if any). `row` is a stored body (a commit
    /// record's after image, see [`Inner::stage_body`]) or, from an undo's
    /// before image or a record of an earlier build, a plain image that
    /// may be too long for a node: its long columns go off-page here.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn put_row(
        &self,
        ct: &Tree,
        t: &TableDef,
        pk: &[u8],
        csn: u64,
        row: &[u8],
        vals: &[Value],
        old_body: Option<&[u8]>,
    ) -> Result<()> {
        if offpage::is_extern(row) || row.len() <= self.body_limit(pk.len()) {
            return self.put_body(ct, pk, csn, row, old_body);
        }
        match self.externalize(t, pk, row, vals, old_body)? {
            Some(st) => self.put_body(ct, pk, csn, &st.body, old_body),
            None => self.put_body(ct, pk, csn, row, old_body),
        }
    }

    /// Puts a stored body: in the put's mini-transaction, the chains it
    /// names that `old_body` did not are adopted and those of `old_body`
    /// it no longer names are orphaned (offpage.rs).
    fn put_body(
        &self,
        ct: &Tree,
        pk: &[u8],
        csn: u64,
        body: &[u8],
        old_body: Option<&[u8]>,
    ) -> Result<()> {
        let old = match old_body {
            Some(b) => offpage::refs(b)?,
            None => Vec::new(),
        };
        let new = offpage::refs(body)?;
        let adopt: Vec<LobRef> = new.iter().filter(|r| !old.contains(r)).copied().collect();
        let orphans: Vec<LobRef> = old.iter().filter(|r| !new.contains(r)).copied().collect();
        let value = mvcc::make_value(csn, false, body);
        if adopt.is_empty() && orphans.is_empty() {
            ct.put(pk, &value)?;
        } else {
            ct.put_with(pk, &value, &mut |m| {
                offpage::swap_owner(m, &adopt, &orphans)
            })?;
        }
        Ok(())
    }

    /// Replays a committed frame. A large transaction's (bigtrx.rs) goes
    /// in pieces; `big` = (its trx id, whether it is the last data frame
    /// and every frame before it is done). In that case its file is
    /// anchored first, so the checkpoint may pass its frame while the
    /// replay writes more redo than the log holds; otherwise the
    /// checkpoint stays at the frame (the transaction then finished its
    /// apply before the crash, so replaying it writes little redo).
    fn replay_committed(
        &self,
        start: u64,
        end: u64,
        writes: &[RecWrite],
        big: Option<(u64, bool)>,
        last: &LastWriters,
    ) -> Result<()> {
        let Some((trx, last_frame)) = big else {
            return self.replay(end, writes, last, Replay::Commit);
        };
        let next = if last_frame {
            self.side.anchor(trx, end, None)?;
            None
        } else {
            Some(start)
        };
        for piece in writes.chunks(REPLAY_PIECE_WRITES) {
            self.replay(end, piece, last, Replay::Commit)?;
            self.store.recovery_progress(next)?;
        }
        Ok(())
    }

    /// Recovery: re-applies a record's writes (after images of a commit,
    /// before images of an undone prepare) on the recovered trees. Whole
    /// rows make it idempotent; no snapshot exists, so what a write
    /// replaces is removed at once. A committed write is applied only by
    /// the row's last writer in the log, an undo's before image naming
    /// chains likewise (see [`LastWriters`]).
    fn replay(&self, csn: u64, writes: &[RecWrite], last: &LastWriters, how: Replay) -> Result<()> {
        for w in writes {
            let t = match self.catalog.read().by_id.get(&w.table) {
                Some(t) => t.clone(),
                None => continue,
            };
            let skip = match how {
                Replay::Commit => true,
                Replay::Undo => w.row.as_deref().is_some_and(offpage::is_extern),
            };
            if skip && !last.is_last(w.table, &w.pk, csn) {
                continue;
            }
            let ct = self.tree(&t.clustered_tree())?;
            let cur = ct.get(&w.pk)?;
            let cur_parsed = cur.as_deref().and_then(mvcc::split_value);
            let old_vals = match cur_parsed {
                Some((_, _, crow)) => Some(self.decode_indexed(&t, crow)?),
                None => None,
            };
            let old_refs = match cur_parsed {
                Some((_, _, crow)) => offpage::refs(crow)?,
                None => Vec::new(),
            };
            let new_vals = match &w.row {
                Some(r) => Some(self.decode_body(&t, r)?),
                None => None,
            };
            let same_row = match (cur_parsed, &w.row) {
                (Some((_, false, crow)), Some(r)) => {
                    crow == r.as_slice()
                        || (!offpage::is_extern(r)
                            && offpage::plain_image(self.store.shared(), crow, &t.columns)?
                                .as_ref()
                                == r.as_slice())
                }
                _ => false,
            };
            match (&w.row, &new_vals) {
                // Already there (the apply reached the pages before the
                // crash): keep it, with its commit number, and write no
                // redo; the index entries below are put again regardless.
                (Some(_), _) if same_row => {}
                (Some(r), Some(vals)) => {
                    self.put_row(&ct, &t, &w.pk, csn, r, vals, cur_parsed.map(|c| c.2))?;
                }
                _ => {
                    ct.delete_with(&w.pk, &mut |m| offpage::swap_owner(m, &[], &old_refs))?;
                }
            }
            for idx in t.maintained_indexes() {
                let new_k = new_vals.as_ref().map(|v| sec_key(&t, idx, v));
                let old_k = old_vals.as_ref().map(|v| sec_key(&t, idx, v));
                let tree = self.tree(&t.index_tree(idx.id))?;
                if let Some(ok) = &old_k {
                    if new_k.as_ref() != Some(ok) {
                        let mut key = ok.clone();
                        key.extend_from_slice(&w.pk);
                        tree.delete(&key)?;
                    }
                }
                if let Some(nk) = new_k {
                    let mut key = nk;
                    key.extend_from_slice(&w.pk);
                    tree.put(&key, &w.pk)?;
                }
            }
        }
        Ok(())
    }

    /// Commits a write set (see the module doc). Returns the CSN once the
    /// commit record is in the log (even if applying it then failed: such a
    /// commit is in doubt, recovery will finish it), and the outcome.
    pub(crate) fn commit_writes(
        &self,
        trx: u64,
        writes: Vec<ApplyWrite>,
    ) -> (Option<u64>, Result<()>) {
        if let Some(w) = writes.first() {
            let long_bytes = writes
                .iter()
                .filter_map(|(_, rw, _)| rw.row.as_ref())
                .map(|r| r.len() as u64)
                .filter(|&n| n > 1024)
                .sum();
            if let Err(e) = self.reserve_space(&w.0, writes.len(), long_bytes) {
                return (None, Err(e));
            }
        }
        let mut writes = writes;
        let mut staged = Vec::new();
        for (t, rw, vals) in writes.iter_mut() {
            let (Some(row), Some(vals)) = (rw.row.as_mut(), vals.as_deref()) else {
                continue;
            };
            if row.len() > self.body_limit(rw.pk.len()) {
                match self.stage_body(t, &rw.pk, std::mem::take(row), vals, &mut staged) {
                    Ok(b) => *row = b,
                    Err(e) => {
                        self.unstage(&staged);
                        return (None, Err(e));
                    }
                }
            }
        }
        let rec_writes: Vec<RecWrite> = writes.iter().map(|w| w.1.clone()).collect();
        let mut record = encode_commit(trx, &rec_writes);
        drop(rec_writes);
        let big = record.len() as u64 > self.big_record_bytes();
        if big {
            // bigtrx.rs: the record goes to a file, the frame names it.
            match self.side.write(trx, &record) {
                Ok(r) => record = r.encode(REC_COMMIT_EXT),
                Err(e) => {
                    self.unstage(&staged);
                    return (None, Err(e));
                }
            }
        }
        let mut st = self.commit.lock();
        let (csn, pin) = match self.store.append_logical(&record, |_, _| {}) {
            Ok(x) => x,
            Err(e) => {
                drop(st);
                self.unstage(&staged);
                return (None, Err(e.into()));
            }
        };
        let applied = if big {
            drop(record);
            self.apply_big(
                &mut st,
                BigCommit { trx, xid: csn, csn },
                pin,
                &writes,
                || Ok(self.store.log().flush_to(csn)?),
            )
            .map(|_| None)
        } else {
            self.apply_commit(&mut st, csn, &writes).map(|()| Some(pin))
        };
        let pin = match applied {
            Ok(p) => p,
            Err(e) => {
                // The record is in the log but the trees are half-way: only
                // recovery can finish it. Refuse everything until restart.
                self.store
                    .shared()
                    .poison
                    .set(&format!("applying commit {csn} failed: {e}"));
                return (Some(csn), Err(e));
            }
        };
        self.snapshots.visible.store(csn, Ordering::Release);
        drop(pin);
        let freed = self.purge(&mut st);
        drop(st);
        self.free_purged(freed);
        (Some(csn), Ok(()))
    }

    /// Records longer than this go to a side file (bigtrx.rs): a quarter
    /// of the largest frame the redo log takes.
    pub(crate) fn big_record_bytes(&self) -> u64 {
        self.store.log().max_payload_bytes() / 4
    }

    /// Applies a large transaction (bigtrx.rs) whose frame is in the log:
    /// makes its decision durable (`decided`), anchors its file, lets the
    /// checkpoint go (drops `pin`), applies the writes in pieces, then
    /// records where the apply ended. The caller holds the commit mutex
    /// (`st`) and, with the binlog on, the commit gate exclusively.
    pub(crate) fn apply_big(
        &self,
        st: &mut CommitState,
        BigCommit { trx, xid, csn }: BigCommit,
        pin: quire_storage::CheckpointPin,
        writes: &[ApplyWrite],
        decided: impl FnOnce() -> Result<()>,
    ) -> Result<()> {
        decided()?;
        self.side.anchor(trx, xid, None)?;
        drop(pin);
        for piece in writes.chunks(REPLAY_PIECE_WRITES) {
            self.apply_commit(st, csn, piece)?;
        }
        let done = self.store.log().lsn();
        self.side.anchor(trx, xid, Some(done))?;
        self.side.remove_after(trx, done.max(xid));
        Ok(())
    }

    /// Durability of a commit at `csn` per innodb_flush_log_at_trx_commit.
    /// Before a commit's first durable step: room in the tablespace for
    /// its `n_writes` row writes, so that a full disk fails this commit
    /// with MySQL's 1114 (nothing written, the transaction rolled back)
    /// instead of failing it half-applied, and later commits work again
    /// once space is freed. An estimate: a page per two row writes plus
    /// the store's margin; a transaction that outruns it grows the file
    /// while applying, where ENOSPC still poisons.
    /// `long_bytes`: the bytes of rows long enough to go off-page, which
    /// take LOB pages of their own (offpage.rs).
    pub(crate) fn reserve_space(
        &self,
        table: &TableDef,
        n_writes: usize,
        long_bytes: u64,
    ) -> Result<()> {
        let ps = self.store.shared().pool.page_size();
        let lob_pages = long_bytes / quire_storage::lob::data_per_page(ps) as u64;
        match self
            .store
            .reserve_pages(n_writes as u64 / 2 + 1 + lob_pages)
        {
            Ok(()) => Ok(()),
            Err(quire_storage::StorageError::Full(_)) => Err(EngineError::new(
                1114,
                "HY000",
                format!("The table '{}' is full", table.name),
            )),
            Err(e) => Err(e.into()),
        }
    }

    pub(crate) fn make_durable(&self, csn: u64) -> Result<()> {
        match self
            .settings
            .flush_log_at_trx_commit
            .load(Ordering::Acquire)
        {
            0 => Ok(()),
            2 => Ok(self.store.log().write_to(csn)?),
            _ => Ok(self.store.log().flush_to(csn)?),
        }
    }

    /// Background: every innodb_flush_log_at_timeout seconds, write and
    /// fsync the redo log (what settings 0 and 2 rely on).
    /// Background: purges what commits left (a backlog after a long
    /// snapshot ended, or after the last commit), a slice at a time with
    /// the commit mutex released in between (InnoDB's purge thread).
    fn purge_loop(&self) {
        while !self.shutdown.load(Ordering::Acquire) {
            let freed = {
                let mut st = self.commit.lock();
                let ready = st
                    .purge
                    .items
                    .front()
                    .is_some_and(|f| f.csn <= self.snapshots.oldest());
                ready.then(|| self.purge_some(&mut st, PURGE_ITEMS_PER_SLICE))
            };
            match freed {
                Some(Err(_)) => return, // sticky: commits report it
                Some(ok) => {
                    self.free_purged(ok);
                    std::thread::yield_now();
                }
                None => std::thread::sleep(Duration::from_millis(PURGE_IDLE_SLEEP_MS)),
            }
        }
    }

    fn flusher_loop(&self) {
        loop {
            let secs = self
                .settings
                .flush_log_at_timeout_s
                .load(Ordering::Relaxed)
                .max(1);
            {
                let (m, cv) = &self.flusher_wake;
                let mut g = m.lock();
                if !*g {
                    cv.wait_for(&mut g, Duration::from_secs(secs as u64));
                }
                *g = false;
            }
            if self.shutdown.load(Ordering::Acquire) {
                return;
            }
            if self.store.sync_log().is_err() || self.binlog_background_sync().is_err() {
                // Sticky: commits see the error themselves.
                return;
            }
            // A failed expiry is tried again after the next rotation.
            let _ = self.binlog_expire();
            // Large transactions' files the checkpoint has passed. A file
            // that cannot be removed now is removed after the next start.
            let _ = self.side.collect(self.store.log().checkpoint_lsn());
        }
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        if Arc::strong_count(&self.flusher) == 1 {
            self.inner.shutdown.store(true, Ordering::Release);
            let (m, cv) = &self.inner.flusher_wake;
            *m.lock() = true;
            cv.notify_all();
            if let Some(h) = self.flusher.lock().take() {
                let _ = h.join();
            }
            self.inner.stats.wake_all();
            if let Some(h) = self.stats_thread.lock().take() {
                let _ = h.join();
            }
            if let Some(h) = self.purge_thread.lock().take() {
                let _ = h.join();
            }
        }
    }
}

/// Column names are unique, ignoring case (1060).
pub(crate) fn check_column_names(columns: &[ColumnDef]) -> Result<()> {
    for (i, c) in columns.iter().enumerate() {
        if columns[..i]
            .iter()
            .any(|o| o.name.eq_ignore_ascii_case(&c.name))
        {
            return Err(EngineError::new(
                1060,
                "42S21",
                format!("Duplicate column name '{}'", c.name),
            ));
        }
    }
    Ok(())
}
