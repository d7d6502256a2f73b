//! # Optimizer statistics: row estimates, sampled index statistics, ANALYZE
//!
//! What the cost-based optimizer asks at every plan is [`TableStats`]: how
//! many rows a table has and, for each index, how many distinct values each
//! prefix of its columns has (InnoDB's `stat_n_rows` and `stat_n_diff_key_vals`,
//! shown by `SHOW INDEX` as Cardinality). This module owns both numbers.
//!
//! ## The row estimate: one atomic add per table per commit
//!
//! Every table has a [`TableCounter`]. Applying a commit (engine.rs
//! `apply_commit`, under the commit mutex) already reads the current version
//! of each row it writes, so it knows exactly whether a write inserts a live
//! row, deletes one or replaces one. It sums, per table of the transaction,
//! the net row change and the number of rows changed, and adds both to the
//! table's `pending` word with **one** `fetch_add`: the word holds
//! `mods * 2^40 + net` in wrapping 64-bit arithmetic. Because that is plain
//! linear arithmetic, any sum of such words decodes exactly (the low 40 bits
//! sign-extended are the net change, as long as it stays within ±2^39; the
//! rest is the change count modulo 2^24), so concurrent adds need no
//! coordination. Readers *fold* the word into 64-bit totals under the
//! table's own mutex (load it, subtract what was loaded, decode), which
//! commits never take. The background thread folds every table each
//! second, long before 2^24 changes can pile up; a transaction changing
//! more rows than that adds in chunks. The commit path therefore costs one
//! uncontended atomic add per table (and a hash lookup in a map the commit
//! mutex already guards), nothing else.
//!
//! Rollbacks cost nothing: writes are buffered until commit, so a rolled
//! back transaction never reaches `apply_commit`. Delete-marked rows waiting
//! for purge are not counted (the count changes when the delete commits).
//!
//! A clean shutdown stores every table's count (keys `"R" ++ id`) and a
//! marker (`"C"`) in the stats tree; the next open starts from them and
//! deletes them at once, before any commit (the redo log being a prefix,
//! a crash can never leave the marker with counts older than the data).
//! Otherwise (after a crash), at open, after recovery and before any
//! commit, each table's count starts from a bounded sample of its
//! clustered tree ([`Tree::sample_leaves`]: the
//! exact leaf count and at most `innodb_stats_persistent_sample_pages`
//! leaves). When the tree has no more leaves than that, the count is exact
//! and then stays exact; otherwise it is an estimate (live rows per sampled
//! leaf × leaves), which each ANALYZE replaces with its own estimate.
//!
//! ## ANALYZE: sampled leaves, distinct values per prefix
//!
//! [`Inner::analyze`] samples up to `innodb_stats_persistent_sample_pages`
//! leaves of each index, spread evenly over the key order. Keys are
//! memcomparable (types/keycodec.rs), so two entries agree on the first k
//! columns exactly when their encodings of those columns are equal; the
//! column boundaries come from decoding the key prefix. Within each sampled
//! leaf the estimator counts adjacent pairs and, per prefix length, the
//! pairs whose prefixes differ (a *boundary*). In a sorted sequence of R
//! entries with D distinct prefixes there are exactly D-1 boundaries among
//! R-1 pairs, so D ≈ 1 + boundaries/pairs ×, with R = live entries
//! per sampled leaf × leaf pages. When every leaf is sampled, the leaves are
//! one sequence and the result is exact. (Counting distinct values per page
//! and scaling by the page count instead would count every value that
//! straddles pages twice: +100% for an index of one value per page.)
//! Secondary indexes count only their declared columns (their keys end in
//! the primary key). Delete-marked clustered entries are skipped, as InnoDB
//! does with `innodb_stats_include_delete_marked=OFF`; secondary entries of
//! old versions, until purged, are counted.
//!
//! ## Durability: the `quire:stats` tree
//!
//! With `innodb_stats_persistent=ON` the result is stored in the system
//! tree `quire:stats` (MySQL's `mysql.innodb_table_stats` and
//! `innodb_index_stats`): key `"S" ++ table id (u32 BE)`, value
//! [`Analyzed::encode`]. One `put` is one mini-transaction through the
//! redo log like every catalog change, so after a crash a table has its
//! previous statistics or its new ones, never half of each; stats being
//! advisory, a lost last ANALYZE (redo not yet flushed) is acceptable and
//! nothing else depends on it. A malformed value is ignored (the table is
//! simply unanalyzed), never an error at open. DROP/TRUNCATE TABLE delete
//! the entry; an entry whose table no longer exists (a crash between the
//! two, or an ANALYZE racing a DROP) is deleted at open. Index statistics
//! are stored with their index id and column count, so a later index with
//! a reused id is never described by its predecessor's numbers.
//!
//! ## Automatic recalculation
//!
//! With `innodb_stats_auto_recalc=ON`, a table whose changes since its
//! last analysis exceed 10% of its rows (MySQL's `stat_modified_counter >
//! n_rows / 10`), or that holds rows and was never analyzed, is queued
//! for the background thread `quire-stats`, which runs ANALYZE on it.
//! The check runs at every [`Engine::table_stats`] call (queuing is an
//! atomic swap and a short mutex, never I/O) and every second in the
//! thread itself; nothing of it is on the commit path.
//!
//! ## Invariants
//!
//! * `table_stats` takes only the table's fold mutex and the registry's
//!   read lock; it never reads a page.
//! * A `TableCounter` is in the commit-side map (`CommitState::stats`) and
//!   the registry at once, for every table of the catalog; both are edited
//!   under the commit mutex (create, drop, open).
//! * Estimates are never negative and distinct counts never exceed rows.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::{Condvar, Mutex, RwLock};
use quire_storage::{LeafSample, Tree};

use crate::catalog::TableDef;
use crate::engine::{Engine, Inner};
use crate::error::{EngineError, Result};
use crate::mvcc;
use crate::types::{self, ColumnType};

/// The system tree of persisted statistics.
pub(crate) const STATS_TREE: &str = "quire:stats";

/// Statistics of one index (None name = the clustered/primary index).
#[derive(Debug, Clone, PartialEq)]
pub struct IndexStats {
    pub name: Option<String>,
    /// distinct[k] = estimated number of distinct values of the first k+1
    /// columns of the index (for a secondary index, prefix lengths count
    /// only its declared columns). A table without a primary key has one
    /// entry for its clustered index: the hidden row id, unique.
    pub distinct: Vec<u64>,
}

/// Statistics of one table.
#[derive(Debug, Clone, PartialEq)]
pub struct TableStats {
    /// Estimated number of rows (kept current cheaply between ANALYZEs).
    pub rows: u64,
    /// The clustered index first, then the secondary indexes in
    /// definition order.
    pub indexes: Vec<IndexStats>,
    /// False until the table was analyzed at least once (explicitly or
    /// automatically).
    pub analyzed: bool,
}

const NET_BITS: u32 = 40;
const NET_MASK: u64 = (1 << NET_BITS) - 1;
const NET_SIGN: u64 = 1 << (NET_BITS - 1);
/// The most changes one add carries (well below the 2^24 of the field).
const MODS_CHUNK: u64 = 1 << 22;

fn pack(net: i64, mods: u64) -> u64 {
    (mods << NET_BITS).wrapping_add(net as u64)
}

fn unpack(v: u64) -> (i64, u64) {
    let low = v & NET_MASK;
    let net = if low >= NET_SIGN {
        low as i64 - (1i64 << NET_BITS)
    } else {
        low as i64
    };
    let mods = v.wrapping_sub(net as u64) >> NET_BITS;
    (net, mods)
}

/// What an analysis found: the row estimate of that moment and, per index
/// id (0 = clustered), its declared column count and distinct values per
/// prefix.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Analyzed {
    pub rows: u64,
    pub indexes: Vec<(u32, Vec<u64>)>,
}

impl Analyzed {
    const FORMAT: u8 = 1;

    pub(crate) fn encode(&self) -> Vec<u8> {
        let mut w = vec![Self::FORMAT];
        w.extend_from_slice(&self.rows.to_le_bytes());
        w.extend_from_slice(&(self.indexes.len() as u32).to_le_bytes());
        for (id, d) in &self.indexes {
            w.extend_from_slice(&id.to_le_bytes());
            w.extend_from_slice(&(d.len() as u32).to_le_bytes());
            for x in d {
                w.extend_from_slice(&x.to_le_bytes());
            }
        }
        w
    }

    pub(crate) fn decode(b: &[u8]) -> Option<Analyzed> {
        fn take<'a>(r: &mut &'a [u8], n: usize) -> Option<&'a [u8]> {
            if r.len() < n {
                return None;
            }
            let (a, rest) = r.split_at(n);
            *r = rest;
            Some(a)
        }
        fn u32_(r: &mut &[u8]) -> Option<u32> {
            Some(u32::from_le_bytes(take(r, 4)?.try_into().ok()?))
        }
        fn u64_(r: &mut &[u8]) -> Option<u64> {
            Some(u64::from_le_bytes(take(r, 8)?.try_into().ok()?))
        }
        let mut r = b;
        if take(&mut r, 1)? != [Self::FORMAT] {
            return None;
        }
        let rows = u64_(&mut r)?;
        let n = u32_(&mut r)? as usize;
        let mut indexes = Vec::new();
        for _ in 0..n {
            let id = u32_(&mut r)?;
            let k = u32_(&mut r)? as usize;
            let mut d = Vec::new();
            for _ in 0..k {
                d.push(u64_(&mut r)?);
            }
            indexes.push((id, d));
        }
        if !r.is_empty() {
            return None;
        }
        Some(Analyzed { rows, indexes })
    }
}

#[derive(Debug, Default)]
struct Folded {
    /// Rows: the starting count plus every folded net change.
    rows: i64,
    /// The count is exact (counted, not estimated).
    exact: bool,
    /// Rows changed since the last analysis.
    mods: u64,
    analyzed: Option<Arc<Analyzed>>,
}

/// The statistics state of one table (see the module doc).
#[derive(Debug, Default)]
pub(crate) struct TableCounter {
    /// Changes not folded yet: `mods * 2^40 + net`, wrapping.
    pending: AtomicU64,
    folded: Mutex<Folded>,
    /// In the background queue.
    queued: AtomicBool,
}

impl TableCounter {
    /// The commit path: `net` rows more (or fewer), `mods` rows changed.
    pub(crate) fn add(&self, net: i64, mods: u64) {
        if mods <= MODS_CHUNK {
            self.pending.fetch_add(pack(net, mods), Ordering::Relaxed);
            return;
        }
        let (mut net, mut mods) = (net, mods);
        while mods > 0 {
            let m = mods.min(MODS_CHUNK);
            self.pending.fetch_add(pack(net, m), Ordering::Relaxed);
            mods -= m;
            net = 0;
        }
    }

    fn fold(&self, f: &mut Folded) {
        let v = self.pending.load(Ordering::Acquire);
        if v == 0 {
            return;
        }
        self.pending.fetch_sub(v, Ordering::AcqRel);
        let (net, mods) = unpack(v);
        f.rows = f.rows.saturating_add(net);
        f.mods = f.mods.saturating_add(mods);
    }

    fn new(rows: u64, exact: bool, analyzed: Option<Analyzed>) -> TableCounter {
        TableCounter {
            pending: AtomicU64::new(0),
            folded: Mutex::new(Folded {
                rows: i64::try_from(rows).unwrap_or(i64::MAX),
                exact,
                mods: 0,
                analyzed: analyzed.map(Arc::new),
            }),
            queued: AtomicBool::new(false),
        }
    }
}

/// Every table's counter plus the background queue.
#[derive(Debug, Default)]
pub(crate) struct StatsRegistry {
    tables: RwLock<HashMap<u32, Arc<TableCounter>>>,
    queue: Mutex<VecDeque<u32>>,
    wake: Condvar,
    /// Analyses run by the background thread (tests, status).
    pub(crate) auto_runs: AtomicU64,
}

impl StatsRegistry {
    pub(crate) fn get(&self, id: u32) -> Option<Arc<TableCounter>> {
        self.tables.read().get(&id).cloned()
    }
    pub(crate) fn insert(&self, id: u32, c: Arc<TableCounter>) {
        self.tables.write().insert(id, c);
    }
    pub(crate) fn remove(&self, id: u32) {
        self.tables.write().remove(&id);
    }
    fn schedule(&self, id: u32, c: &TableCounter) {
        if !c.queued.swap(true, Ordering::AcqRel) {
            self.queue.lock().push_back(id);
            self.wake.notify_one();
        }
    }
    /// Wakes the background thread (shutdown).
    pub(crate) fn wake_all(&self) {
        let _q = self.queue.lock();
        self.wake.notify_all();
    }
}

/// Live-entry filter of a sampled index: the clustered tree skips
/// delete-marked rows, a secondary tree takes every entry.
#[derive(Clone, Copy)]
enum Kind {
    Clustered,
    Secondary,
}

/// The estimate of one index from its sample: (entries, distinct per prefix).
fn estimate(sample: &LeafSample, types: Option<&[ColumnType]>, kind: Kind) -> (u64, Vec<u64>) {
    let ncols = types.map_or(1, |t| t.len());
    let all = sample.leaves.len() as u64 >= sample.leaf_pages;
    let mut live: u64 = 0;
    let mut pairs: u64 = 0;
    let mut bounds = vec![0u64; ncols];
    // Prefix ends of the previous live entry (and its key), carried over
    // from leaf to leaf only when every leaf is in the sample.
    let mut prev: Option<(Vec<u8>, Vec<usize>)> = None;
    for leaf in &sample.leaves {
        if !all {
            prev = None;
        }
        for (k, v) in leaf {
            if matches!(kind, Kind::Clustered) {
                match mvcc::split_value(v) {
                    Some((_, false, _)) => {}
                    _ => continue,
                }
            }
            let ends = prefix_ends(k, types, ncols);
            live += 1;
            if let Some((pk, pe)) = &prev {
                pairs += 1;
                // The first prefix length at which the two differ; every
                // longer prefix differs too.
                if let Some(j) = (0..ncols).find(|&j| pk[..pe[j]] != k[..ends[j]]) {
                    for b in &mut bounds[j..] {
                        *b += 1;
                    }
                }
            }
            prev = Some((k.clone(), ends));
        }
    }
    let sampled = sample.leaves.len().max(1) as u64;
    let rows = if all {
        live
    } else {
        (live as u128 * sample.leaf_pages as u128 / sampled as u128) as u64
    };
    let distinct = bounds
        .iter()
        .map(|&b| {
            if rows == 0 {
                0
            } else if pairs == 0 {
                // One entry per sampled leaf: nothing to compare; assume
                // distinct (a unique-looking index).
                rows
            } else {
                let d = 1 + (b as u128 * (rows - 1) as u128 / pairs as u128) as u64;
                d.clamp(1, rows)
            }
        })
        .collect();
    (rows, distinct)
}

/// Byte offsets where each of the first `ncols` columns of `key` ends
/// (`types` None: the whole key is one column, the hidden row id). A key
/// that does not decode (never expected) counts as one column throughout.
fn prefix_ends(key: &[u8], types: Option<&[ColumnType]>, ncols: usize) -> Vec<usize> {
    let Some(types) = types else {
        return vec![key.len()];
    };
    let mut ends = Vec::with_capacity(ncols);
    let mut pos = 0;
    for ty in types {
        match types::decode_key_prefix(&key[pos..], std::slice::from_ref(ty)) {
            Ok((_, used)) => pos += used,
            Err(_) => pos = key.len(),
        }
        ends.push(pos);
    }
    ends
}

/// Distinct counts as reported: the stored ones capped at `rows`, exact
/// ones for unique full prefixes, and `rows` (every value distinct) where
/// nothing is known.
fn report(stored: Option<&Vec<u64>>, ncols: usize, unique: bool, rows: u64) -> Vec<u64> {
    (0..ncols)
        .map(|k| {
            if unique && k + 1 == ncols {
                return rows;
            }
            match stored.and_then(|s| s.get(k)) {
                Some(&d) => d.min(rows),
                None => rows,
            }
        })
        .collect()
}

impl Inner {
    /// Counter of table `id`, created (with rows 0) if the commit path
    /// meets a table it does not know (never expected: create_table and
    /// open register every table).
    pub(crate) fn stats_counter_for_commit(
        &self,
        map: &mut HashMap<u32, Arc<TableCounter>>,
        id: u32,
    ) -> Arc<TableCounter> {
        if let Some(c) = map.get(&id) {
            return c.clone();
        }
        let c = self.stats.get(id).unwrap_or_else(|| {
            let c = Arc::new(TableCounter::new(0, true, None));
            self.stats.insert(id, c.clone());
            c
        });
        map.insert(id, c.clone());
        c
    }

    fn sample_pages(&self) -> usize {
        let n = self.settings.stats_sample_pages.load(Ordering::Relaxed);
        usize::try_from(n).unwrap_or(usize::MAX).max(1)
    }

    /// Registers a new (empty) table: a counter that is exact at 0, and
    /// no stored statistics (an entry left by a crashed DROP of an id is
    /// impossible, ids are never reused, but is removed anyway). Caller
    /// holds the commit mutex.
    pub(crate) fn stats_register_new(
        &self,
        map: &mut HashMap<u32, Arc<TableCounter>>,
        id: u32,
    ) -> Result<()> {
        let c = Arc::new(TableCounter::new(0, true, None));
        map.insert(id, c.clone());
        self.stats.insert(id, c);
        Ok(())
    }

    /// Forgets a dropped table: its counter and its stored statistics.
    /// Caller holds the commit mutex.
    pub(crate) fn stats_forget(
        &self,
        map: &mut HashMap<u32, Arc<TableCounter>>,
        id: u32,
    ) -> Result<()> {
        map.remove(&id);
        self.stats.remove(id);
        self.tree(STATS_TREE)?.delete(&stats_key(id))?;
        Ok(())
    }

    /// At open (after recovery, before any commit): each table's starting
    /// count from a bounded sample of its clustered tree, its stored
    /// statistics (with `innodb_stats_persistent=ON`), and the removal of
    /// entries whose table is gone.
    pub(crate) fn stats_load(
        &self,
        map: &mut HashMap<u32, Arc<TableCounter>>,
        persistent: bool,
    ) -> Result<()> {
        let st = self.tree(STATS_TREE)?;
        let mut stored: HashMap<u32, Analyzed> = HashMap::new();
        let mut counted: HashMap<u32, (u64, bool)> = HashMap::new();
        let mut clean = false;
        let mut stale: Vec<Vec<u8>> = Vec::new();
        let tables: Vec<Arc<TableDef>> = self.catalog.read().by_id.values().cloned().collect();
        for (k, v) in st.scan_all()? {
            let id = k
                .get(1..5)
                .and_then(|b| b.try_into().ok())
                .map(u32::from_be_bytes);
            match id {
                // Counts of a clean shutdown: read, then deleted (below)
                // before anything can change the tables again.
                Some(id) if k.len() == 5 && k[0] == b'R' && v.len() == 9 => {
                    let rows = v[..8].try_into().map(u64::from_le_bytes).unwrap_or(0);
                    counted.insert(id, (rows, v[8] != 0));
                    stale.push(k);
                }
                Some(id) if k.len() == 5 && k[0] == b'S' => {
                    if !tables.iter().any(|t| t.id == id) {
                        stale.push(k);
                    } else if let Some(a) = Analyzed::decode(&v) {
                        stored.insert(id, a);
                    }
                }
                _ => {
                    clean |= k == CLEAN_KEY;
                    stale.push(k);
                }
            }
        }
        for k in stale {
            st.delete(&k)?;
        }
        let pages = self.sample_pages();
        for t in tables {
            let (rows, exact) = match counted.get(&t.id) {
                Some(&c) if clean => c,
                _ => {
                    let sample = self.tree(&t.clustered_tree())?.sample_leaves(pages)?;
                    let exact = sample.leaves.len() as u64 >= sample.leaf_pages;
                    let pk = t.pk_types();
                    let types = (!t.primary.is_empty()).then_some(pk.as_slice());
                    // Only the entry count is needed: a one-column estimate.
                    let (rows, _) = estimate(&sample, types.map(|t| &t[..1]), Kind::Clustered);
                    (rows, exact)
                }
            };
            let analyzed = if persistent {
                stored.remove(&t.id)
            } else {
                None
            };
            let c = Arc::new(TableCounter::new(rows, exact, analyzed));
            map.insert(t.id, c.clone());
            self.stats.insert(t.id, c);
        }
        Ok(())
    }

    /// Clean shutdown (no commit runs any more): every table's count, then
    /// the marker saying they are current, so the next open starts from
    /// them instead of a sample. The next open deletes both before any
    /// commit, and the redo log is a prefix, so after a crash a marker is
    /// never found with counts older than the data.
    pub(crate) fn stats_save_counts(&self) -> Result<()> {
        let st = self.tree(STATS_TREE)?;
        let all: Vec<(u32, Arc<TableCounter>)> = self
            .stats
            .tables
            .read()
            .iter()
            .map(|(k, v)| (*k, v.clone()))
            .collect();
        for (id, c) in all {
            let mut f = c.folded.lock();
            c.fold(&mut f);
            let mut v = u64::try_from(f.rows).unwrap_or(0).to_le_bytes().to_vec();
            v.push(u8::from(f.exact));
            drop(f);
            let mut k = stats_key(id);
            k[0] = b'R';
            st.put(&k, &v)?;
        }
        st.put(CLEAN_KEY, &[])?;
        Ok(())
    }

    /// The statistics as the optimizer sees them (see [`TableStats`]).
    pub(crate) fn table_stats(&self, t: &TableDef) -> TableStats {
        let (rows, analyzed) = match self.stats.get(t.id) {
            Some(c) => {
                let mut f = c.folded.lock();
                c.fold(&mut f);
                let rows = u64::try_from(f.rows).unwrap_or(0);
                let a = f.analyzed.clone();
                let due = self.recalc_due(&f, rows);
                drop(f);
                if due {
                    self.stats.schedule(t.id, &c);
                }
                (rows, a)
            }
            None => (0, None),
        };
        let stored = |id: u32, ncols: usize| {
            analyzed
                .as_ref()
                .and_then(|a| a.indexes.iter().find(|(i, d)| *i == id && d.len() == ncols))
                .map(|(_, d)| d)
        };
        let pk_cols = t.primary.len().max(1);
        let mut indexes = vec![IndexStats {
            name: None,
            distinct: report(stored(0, pk_cols), pk_cols, true, rows),
        }];
        for idx in &t.indexes {
            let n = idx.columns.len();
            let unique = idx.unique && idx.columns.iter().all(|&c| !t.columns[c].nullable);
            indexes.push(IndexStats {
                name: Some(idx.name.clone()),
                distinct: report(stored(idx.id, n), n, unique, rows),
            });
        }
        TableStats {
            rows,
            indexes,
            analyzed: analyzed.is_some(),
        }
    }

    /// `innodb_stats_auto_recalc`: more than 10% of the rows changed since
    /// the last analysis, or never analyzed and not empty.
    fn recalc_due(&self, f: &Folded, rows: u64) -> bool {
        if !self.settings.stats_auto_recalc.load(Ordering::Relaxed) {
            return false;
        }
        match f.analyzed {
            None => rows > 0,
            Some(_) => f.mods > 0 && f.mods > rows / 10,
        }
    }

    /// ANALYZE TABLE on the current definition of table `id`.
    pub(crate) fn analyze(&self, id: u32) -> Result<()> {
        let Some(t) = self.catalog.read().by_id.get(&id).cloned() else {
            return Err(EngineError::new(
                1146,
                "42S02",
                format!("Table id {id} doesn't exist"),
            ));
        };
        let pages = self.sample_pages();
        let sample_of = |name: String| -> Result<LeafSample> {
            let tree: Tree = self.tree(&name)?;
            Ok(tree.sample_leaves(pages)?)
        };
        let mut a = Analyzed::default();
        let cs = sample_of(t.clustered_tree())?;
        let pk = t.pk_types();
        let types = (!t.primary.is_empty()).then_some(pk.as_slice());
        let (rows, d) = estimate(&cs, types, Kind::Clustered);
        a.rows = rows;
        a.indexes.push((0, d));
        for idx in &t.indexes {
            let s = sample_of(t.index_tree(idx.id))?;
            let tys: Vec<ColumnType> = idx
                .columns
                .iter()
                .map(|&c| t.columns[c].ty.clone())
                .collect();
            let (_, d) = estimate(&s, Some(&tys), Kind::Secondary);
            a.indexes.push((idx.id, d));
        }
        if self.settings.stats_persistent.load(Ordering::Relaxed) {
            self.tree(STATS_TREE)?.put(&stats_key(id), &a.encode())?;
        }
        if let Some(c) = self.stats.get(id) {
            let mut f = c.folded.lock();
            c.fold(&mut f);
            // An exact count stays (it also saw the commits that raced
            // the sample); an estimate gives way to the newer one.
            if !f.exact {
                f.rows = i64::try_from(rows).unwrap_or(i64::MAX);
            }
            f.mods = 0;
            f.analyzed = Some(Arc::new(a));
        }
        Ok(())
    }

    /// The background thread: every second (or when woken) folds every
    /// counter, queues the tables due for recalculation and analyzes the
    /// queued ones.
    pub(crate) fn stats_loop(&self) {
        loop {
            {
                let mut q = self.stats.queue.lock();
                if q.is_empty() && !self.is_shutdown() {
                    self.stats.wake.wait_for(&mut q, Duration::from_secs(1));
                }
            }
            if self.is_shutdown() {
                return;
            }
            let all: Vec<(u32, Arc<TableCounter>)> = self
                .stats
                .tables
                .read()
                .iter()
                .map(|(k, v)| (*k, v.clone()))
                .collect();
            for (id, c) in all {
                let mut f = c.folded.lock();
                c.fold(&mut f);
                let due = self.recalc_due(&f, u64::try_from(f.rows).unwrap_or(0));
                drop(f);
                if due {
                    self.stats.schedule(id, &c);
                }
            }
            loop {
                if self.is_shutdown() {
                    return;
                }
                let Some(id) = self.stats.queue.lock().pop_front() else {
                    break;
                };
                if let Some(c) = self.stats.get(id) {
                    c.queued.store(false, Ordering::Release);
                }
                // Advisory work: a failure (the table dropped meanwhile, an
                // I/O error the next statement reports) is not retried
                // until the table is due again.
                if self.analyze(id).is_ok() {
                    self.stats.auto_runs.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
    }
}

/// The marker of counts saved at a clean shutdown.
const CLEAN_KEY: &[u8] = b"C";

pub(crate) fn stats_key(id: u32) -> [u8; 5] {
    let b = id.to_be_bytes();
    [b'S', b[0], b[1], b[2], b[3]]
}

impl Engine {
    /// Cheap (in-memory) and never blocks on I/O: called at every query
    /// plan. May queue the table for a background recalculation
    /// (`innodb_stats_auto_recalc`).
    pub fn table_stats(&self, t: &TableDef) -> TableStats {
        self.inner.table_stats(t)
    }

    /// ANALYZE TABLE: samples each index and stores the result durably
    /// (with `innodb_stats_persistent=ON`). Error 1146 if the table no
    /// longer exists.
    pub fn analyze_table(&self, t: &TableDef) -> Result<TableStats> {
        self.inner.analyze(t.id).map_err(|e| {
            if e.code == 1146 {
                EngineError::new(
                    1146,
                    "42S02",
                    format!("Table '{}.{}' doesn't exist", t.db, t.name),
                )
            } else {
                e
            }
        })?;
        let now = self.inner.catalog.read().by_id.get(&t.id).cloned();
        Ok(self.inner.table_stats(now.as_deref().unwrap_or(t)))
    }

    /// Writes an ANALYZE TABLE statement to the binary log (MySQL logs it
    /// unless NO_WRITE_TO_BINLOG/LOCAL, so that replicas recalculate too);
    /// nothing with the binary log off.
    pub fn binlog_analyze(&self, db: &str, sql: &str) -> Result<()> {
        self.inner.binlog_ddl(db, sql)
    }

    /// Analyses the background thread has run so far.
    pub fn stats_auto_runs(&self) -> u64 {
        self.inner.stats.auto_runs.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
#[path = "stats_tests.rs"]
mod engine_tests;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packing_decodes_any_sum() {
        let cases: [(i64, u64); 5] = [(1, 1), (-1, 1), (0, 1), (-5, 7), (3, 3)];
        let mut v = 0u64;
        let (mut n, mut m) = (0i64, 0u64);
        for _ in 0..1000 {
            for (dn, dm) in cases {
                v = v.wrapping_add(pack(dn, dm));
                n += dn;
                m += dm;
            }
        }
        assert_eq!(unpack(v), (n, m));
        // Negative totals.
        let v = pack(-3, 2).wrapping_add(pack(-4, 4));
        assert_eq!(unpack(v), (-7, 6));
        // Subtracting what was read leaves what came after.
        let mut w = pack(10, 10);
        let read = w;
        w = w.wrapping_add(pack(-2, 2));
        w = w.wrapping_sub(read);
        assert_eq!(unpack(w), (-2, 2));
    }

    #[test]
    fn analyzed_round_trips_and_rejects_garbage() {
        let a = Analyzed {
            rows: 42,
            indexes: vec![(0, vec![42]), (3, vec![5, 40])],
        };
        let b = a.encode();
        assert_eq!(Analyzed::decode(&b), Some(a));
        assert_eq!(Analyzed::decode(&b[..b.len() - 1]), None);
        assert_eq!(Analyzed::decode(&[9]), None);
        let mut long = b.clone();
        long.push(0);
        assert_eq!(Analyzed::decode(&long), None);
    }
}
