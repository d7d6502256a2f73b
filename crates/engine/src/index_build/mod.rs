//! # Online CREATE INDEX: the table's writers go on while the index fills
//!
//! Building an index over a million rows takes seconds. Holding the
//! table's writers off for all of it (what a plain metadata lock does)
//! stops an application's writes for that long; holding every commit off
//! (what this once did) stops the whole server, and with the redo log
//! full it never started again: the build's writes waited for a
//! checkpoint that the held-off commits pinned. InnoDB builds indexes
//! online, merging the changes made meanwhile from a log; quire gets the
//! same effect more simply, because a commit applies its rows under the
//! commit mutex against the table definition of that moment:
//!
//! ```text
//!   CREATE INDEX                         writers of t
//!   ────────────                         ────────────
//!   claim t (MDL, no writes), open      wait
//!     writers end
//!   [commit mutex] def.building = idx    (tree D, "delta"),
//!     purge held (a snapshot S)
//!   admit writers                        commit: apply puts idx keys
//!   fill: rows in primary-key order,       into D (logged)
//!     batches read from the tree, each
//!     row's current key sorted (runs.rs)
//!   bulk load the sorted keys into a
//!     new tree B, no redo (storage bulk.rs)
//!   [commit mutex] def.building = idx    commit: apply puts idx keys
//!     with B's id ("the switch")           into B (logged)
//!   copy D's entries into B, drop D
//!   release S: purge removes the stale keys
//!   (UNIQUE) open writers end, then      wait
//!     one pass finds duplicates → 1062
//!   exclusive: open readers and writers  readers and writers wait
//!     end (mdl.rs)
//!   [commit mutex] created_csn stamped,
//!     idx readable, catalog mtr, binlog
//!   release the claim                    go on
//! ```
//!
//! Why a second tree: putting a million keys one by one writes each to
//! the redo log (~170 bytes a key of sysbench's CHAR(120)), more than the
//! default log holds, so the checkpoint chased the build and every writer
//! of the server stalled at the log's sync point (half the TPS of a
//! 16-thread sysbench run was lost while the index built). The bulk load
//! writes the sorted keys as full pages straight to the data file, synced
//! before the tree is registered, as InnoDB's sorted index build does.
//! Only the writers' own keys go through the log, as they would anyway.
//!
//! Readers go on through all of it but the last step: the claim at the
//! start keeps writers out only (MySQL's SNW), the fill admits everyone,
//! and before the index becomes readable the build waits for every open
//! transaction that uses the table, so no transaction that read the
//! table before meets the index (1412) while it still holds it.
//! LOCK=SHARED keeps writers out throughout; LOCK=EXCLUSIVE keeps
//! readers out too.
//!
//! Why the filled index is complete for every snapshot allowed to use it
//! (one at or after `created_csn`; older ones get 1412), and holds no
//! entry that outlives the build unless a row version needs it:
//! - Every version applied before `building` was set is either replaced
//!   before the fill reads its row (then a later version is indexed) or
//!   read by the fill (its key is loaded into B). Every version applied
//!   after was indexed by its own commit, into D before the switch and
//!   into B after it: apply skips the put only when the row's key did not
//!   change, and then the fill has put that key or will.
//! - D's entries are copied into B after the switch, before the index can
//!   be read; a put is idempotent, so an entry both have stays one.
//!   Writers only add keys to an index (purge removes them), so B ∪ D is
//!   every key the index needs.
//! - The fill reads rows without holding commits off, so it may load the
//!   key of a version a commit is replacing at that moment. Such a key is
//!   stale, exactly like the keys any update leaves behind: readers check
//!   an entry against the row version they see, and purge removes it once
//!   no snapshot needs the version. Purge of the versions replaced during
//!   the build is held back by the snapshot S taken when `building` was
//!   set (every such commit has a CSN above it) until the copy is done,
//!   so it cannot run before the stale key it must remove is in B.
//!
//! Writers check uniqueness only against readable indexes, so a
//! duplicate can enter a UNIQUE index while it fills. After the fill the
//! build waits for the open writers to end (no unchecked row can arrive
//! after that) and reads the new index once: two live rows with one key
//! fail the build with 1062, as InnoDB's online ALTER fails when
//! concurrent DML added a duplicate.
//!
//! Giving up (1062, KILL, an I/O error) takes `building` out of the
//! definition under the commit mutex, so no apply or purge touches the
//! trees afterwards; D and B go once no statement holds the old
//! definition, and a bulk load cut short gives its reserved pages back.
//! A crash mid-build: the catalog never held the index, D and B are
//! orphans the next start drops, and a reservation B never registered is
//! freed by the storage at start (`quire_storage::bulk`).
//!
//! No part of the build holds the commit mutex for longer than a
//! catalog change: a write there that waits for the checkpoint would
//! wait forever (the commit frames it holds off pin it).

use std::ops::Bound;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use quire_storage::btree::Tree;

use crate::catalog::{IndexDef, IndexSpec, TableDef};
use crate::engine::{display_key, has_null, sec_key, Engine, OldTrees, CATALOG_TREE};
use crate::error::{EngineError, Result};
use crate::interrupt::Interrupt;
use crate::mvcc;
use crate::offpage;

mod runs;
use runs::KeySorter;

/// Nice value of the thread that reads, sorts and loads an index's keys
/// (statements run at 0): under load it yields the CPU to them.
const FILL_NICE: i32 = 19;
/// Rows a fill batch reads at most.
const FILL_BATCH_ROWS: usize = 256;
/// Bytes of row bodies a fill batch reads at most.
const FILL_BATCH_BODY_BYTES: usize = 1 << 20;
/// Test hooks by table name: each runs once per fill batch of an index on
/// that table, after the batch's rows were read and before their keys are
/// put, with nothing held, so a test can write to the table mid-build
/// (tests run in parallel: each uses its own table name).
#[cfg(test)]
pub(crate) type FillHook = Box<dyn Fn() + Send>;
#[cfg(test)]
pub(crate) static AFTER_FILL_BATCH: parking_lot::Mutex<Vec<(String, FillHook)>> =
    parking_lot::Mutex::new(Vec::new());
/// Test hooks by table name, run once after the switch to the
/// bulk-loaded tree and before the copy of the writers' tree.
#[cfg(test)]
pub(crate) static AFTER_SWITCH: parking_lot::Mutex<Vec<(String, FillHook)>> =
    parking_lot::Mutex::new(Vec::new());

/// What the table's writers may do while an index builds (MySQL's
/// `LOCK` clause of ALTER TABLE).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BuildLock {
    /// LOCK=NONE (and DEFAULT): readers and writers go on.
    #[default]
    None,
    /// LOCK=SHARED: readers go on, writers wait for the build.
    Shared,
    /// LOCK=EXCLUSIVE: readers and writers wait for the build.
    Exclusive,
}

impl Engine {
    /// CREATE INDEX on a table that may hold rows, online: the table's
    /// writers go on while it fills (see the module doc). Snapshots older
    /// than the build cannot use it (error 1412).
    pub fn create_index(
        &self,
        db: &str,
        table: &str,
        name: &str,
        unique: bool,
        columns: Vec<usize>,
        interrupt: Option<&Interrupt>,
    ) -> Result<Arc<TableDef>> {
        let spec = IndexSpec::whole(name, unique, columns);
        self.create_index_with(db, table, spec, BuildLock::None, interrupt)
    }

    /// [`Self::create_index`] of the index `spec` (column prefixes
    /// allowed: each entry keys the first N characters or bytes) with the
    /// writers' `lock` during the build.
    pub fn create_index_with(
        &self,
        db: &str,
        table: &str,
        spec: IndexSpec,
        lock: BuildLock,
        interrupt: Option<&Interrupt>,
    ) -> Result<Arc<TableDef>> {
        let IndexSpec {
            name,
            unique,
            columns,
            prefix,
        } = spec;
        let name = name.as_str();
        let id = self.table(db, table)?.id;
        let wait = self.inner.mdl_timeout_for(interrupt);
        let who = self.inner.mdl.owner();
        let mdl = match lock {
            BuildLock::Exclusive => self.inner.mdl.enter_ddl(id, who, wait, interrupt)?,
            BuildLock::None | BuildLock::Shared => self
                .inner
                .mdl
                .enter_ddl_no_write(id, who, wait, interrupt)?,
        };
        let t = self.table(db, table)?;
        if t.id != id {
            return Err(crate::txn::definition_changed());
        }
        check_new_index(&t, name, &columns)?;
        let prefix = crate::engine::check_key_parts(&t.columns, &columns, &prefix, false)?;
        let id_in_tree = self.free_index_id(&t)?;
        let idx = IndexDef {
            id: id_in_tree,
            name: name.to_string(),
            unique,
            columns,
            created_csn: 0,
            prefix,
        };
        let tree_name = t.index_tree(idx.id);
        drop(t);
        let tree = self.inner.store.create_index(&tree_name)?;
        let (def, held) = {
            let _c = self.inner.commit.lock();
            let mut def = (*self.current(id)?).clone();
            def.building = Some(idx.clone());
            let def = Arc::new(def);
            self.inner.catalog.write().insert(def.clone());
            (def, PurgeHold::new(&self.inner.snapshots))
        };
        if lock == BuildLock::None {
            mdl.admit_writers();
        }
        // The keys go into a tree of their own, bulk-loaded without redo
        // (quire_storage::bulk): its id is the index's id from the switch
        // on (see `fill_index`).
        let bulk_id = self.free_index_id(&def)?;
        let mut trees = vec![tree_name, def.index_tree(bulk_id)];
        let built = self.fill_index(&def, &idx, &tree, bulk_id, interrupt);
        drop(held);
        drop(def);
        let built = built.and_then(|(bulk, replaced)| {
            if unique {
                if lock == BuildLock::None {
                    mdl.exclude_writers(wait, interrupt)?;
                }
                self.check_unique(id, &bulk.idx, &bulk.tree, interrupt)?;
            }
            // The transactions that use the table end before the index is
            // theirs to see: a snapshot older than the index cannot use it
            // (1412), and one holding the table must not meet it (MySQL's
            // upgrade to an exclusive lock to commit the ALTER).
            if lock != BuildLock::Exclusive {
                mdl.exclusive(wait, interrupt)?;
            }
            Ok((bulk, replaced))
        });
        let (idx, delta) = match built {
            Ok((bulk, delta)) => (bulk.idx, delta),
            Err(e) => {
                // The build's own error is the one to report; giving up can
                // only fail on an I/O error, which poisoned the store (every
                // later write reports it), and then the trees are orphans
                // the next start drops.
                let _ = self.abandon_build(id, trees);
                return Err(e);
            }
        };
        let def = self.install_index(id, idx)?;
        drop(mdl);
        // The tree writers filled during the build (its entries are in the
        // bulk-loaded tree) goes once the index is in place and the table's
        // statements run again: a drop deletes entry by entry. A failure
        // leaves an orphan the next start drops.
        let _ = self.drop_when_unused(delta, OldTrees::Named(vec![trees.remove(0)]));
        Ok(def)
    }

    /// An index id past the table's whose tree name no tree has: a
    /// dropped index's tree may still be there, waiting for the last
    /// statement that read it (`Engine::drop_when_unused`), and when it
    /// goes it goes by name — a new index under the same name would go
    /// with it (seen as "corrupt page" after DROP INDEX then ADD INDEX).
    /// A tree a crash left is skipped too (the next start drops it).
    fn free_index_id(&self, t: &TableDef) -> Result<u32> {
        let taken: std::collections::HashSet<String> = self
            .inner
            .store
            .indexes()?
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        let mut id = t.indexes.iter().map(|i| i.id).max().unwrap_or(0) + 1;
        while taken.contains(&t.index_tree(id)) {
            id += 1;
        }
        Ok(id)
    }

    /// The table as the catalog has it now, by id.
    fn current(&self, id: u32) -> Result<Arc<TableDef>> {
        self.inner
            .catalog
            .read()
            .by_id
            .get(&id)
            .cloned()
            .ok_or_else(|| EngineError::internal(format!("table {id} vanished under its DDL")))
    }

    /// Fills the new index: every row's current key, the table read a
    /// bounded batch at a time (no latch held meanwhile), the keys sorted
    /// (runs.rs) and bulk-loaded into a tree of their own, `bulk_id`; then
    /// the switch (see the module doc) and the copy of what writers put
    /// into `delta` meanwhile. Returns the index as it now is and the
    /// definition the switch replaced (its `building` names `delta`).
    fn fill_index(
        &self,
        t: &TableDef,
        idx: &IndexDef,
        delta: &Tree,
        bulk_id: u32,
        interrupt: Option<&Interrupt>,
    ) -> Result<(Built, Arc<TableDef>)> {
        // The scan, sort and load are CPU-bound for seconds: they run on
        // a thread of lower priority (FILL_NICE), so that on a busy
        // server the statements keep the CPU and the build takes what
        // they leave.
        let tree = std::thread::scope(|scope| {
            let h = std::thread::Builder::new()
                .name("quire-index-fill".into())
                .spawn_scoped(scope, || {
                    quire_io::lower_thread_priority(FILL_NICE);
                    self.load_keys(t, idx, bulk_id, interrupt)
                })
                .map_err(|e| EngineError::internal(format!("cannot start the fill: {e}")))?;
            h.join()
                .map_err(|_| EngineError::internal("the index fill thread panicked"))?
        })?;
        let mut idx = idx.clone();
        idx.id = bulk_id;
        let replaced = self.switch_building(t.id, &idx)?;
        #[cfg(test)]
        for (_, hook) in AFTER_SWITCH.lock().iter().filter(|(n, _)| *n == t.name) {
            hook();
        }
        self.copy_delta(delta, &tree, interrupt)?;
        Ok((Built { idx, tree }, replaced))
    }

    /// Reads every row's current key, sorts them (runs.rs) and bulk-loads
    /// them into the new tree `bulk_id` (see `fill_index`).
    fn load_keys(
        &self,
        t: &TableDef,
        idx: &IndexDef,
        bulk_id: u32,
        interrupt: Option<&Interrupt>,
    ) -> Result<Tree> {
        let (path, sort_buffer_bytes) = {
            let c = self.inner.config.lock();
            let name = format!("ib_sort_t{}_{}", t.id, idx.id);
            (
                crate::engine::tmpdir(&c.datadir).join(name),
                c.innodb_sort_buffer_size,
            )
        };
        let limit = usize::try_from(sort_buffer_bytes).unwrap_or(usize::MAX);
        let mut sorter = KeySorter::new(self.inner.side.vfs(), path, limit);
        let ct = self.inner.tree(&t.clustered_tree())?;
        let mut after: Option<Vec<u8>> = None;
        loop {
            if let Some(i) = interrupt {
                i.check()?;
            }
            let lower = match after.take() {
                Some(k) => Bound::Excluded(k),
                None => Bound::Unbounded,
            };
            let mut batch = Vec::new();
            let mut body_bytes = 0;
            for e in ct.range(lower, Bound::Unbounded, false) {
                let (pk, v) = e?;
                body_bytes += v.len();
                batch.push((pk, v));
                if batch.len() >= FILL_BATCH_ROWS || body_bytes >= FILL_BATCH_BODY_BYTES {
                    break;
                }
            }
            // Between reading rows and putting their keys: a test's
            // writes here replace versions whose keys the fill then puts.
            #[cfg(test)]
            for (_, hook) in AFTER_FILL_BATCH.lock().iter().filter(|(n, _)| *n == t.name) {
                hook();
            }
            for (pk, v) in &batch {
                let Some((_, false, body)) = mvcc::split_value(v) else {
                    continue;
                };
                let vals = self.index_values(t, idx, body)?;
                let mut key = sec_key(t, idx, &vals);
                key.extend_from_slice(pk);
                sorter.push(key, pk.len())?;
            }
            match batch.pop() {
                Some((last, _)) => after = Some(last),
                None => break,
            }
        }
        let mut merged = sorter.finish()?;
        let bulk_name = t.index_tree(bulk_id);
        let mut bulk = self.inner.store.bulk_load(&bulk_name)?;
        let mut n: u64 = 0;
        while let Some((key, pk_len)) = merged.next_key()? {
            n += 1;
            if n.is_multiple_of(1024) {
                if let Some(i) = interrupt {
                    i.check()?;
                }
            }
            bulk.push(&key, &key[key.len() - pk_len..])?;
        }
        Ok(bulk.finish()?)
    }

    /// Points the table's `building` index at the bulk-loaded tree, under
    /// the commit mutex: every commit from here on puts its keys there.
    /// Returns the definition replaced.
    fn switch_building(&self, id: u32, idx: &IndexDef) -> Result<Arc<TableDef>> {
        let _c = self.inner.commit.lock();
        let old = self.current(id)?;
        let mut def = (*old).clone();
        def.building = Some(idx.clone());
        self.inner.catalog.write().insert(Arc::new(def));
        Ok(old)
    }

    /// Puts into `to` every entry writers put into `delta` before the
    /// switch (a put is idempotent: an entry both have stays one).
    fn copy_delta(&self, delta: &Tree, to: &Tree, interrupt: Option<&Interrupt>) -> Result<()> {
        if let Some(i) = interrupt {
            i.check()?;
        }
        for_each_entry(delta, interrupt, |key, pk| {
            to.put(&key, &pk)?;
            Ok(())
        })
    }

    /// A row body decoded for `idx`'s columns only (no other long value
    /// is read).
    fn index_values(
        &self,
        t: &TableDef,
        idx: &IndexDef,
        body: &[u8],
    ) -> Result<Vec<crate::types::Value>> {
        let mut wanted = vec![false; t.columns.len()];
        for &c in &idx.columns {
            wanted[c] = true;
        }
        offpage::decode(self.inner.store.shared(), body, &t.columns, Some(&wanted))
    }

    /// With the table's writers ended: 1062 if two live rows share a key
    /// of the new UNIQUE index (NULLs never clash). Reads the index once
    /// in key order and looks rows up only where a key repeats.
    fn check_unique(
        &self,
        id: u32,
        idx: &IndexDef,
        tree: &Tree,
        interrupt: Option<&Interrupt>,
    ) -> Result<()> {
        let t = self.current(id)?;
        let ct = self.inner.tree(&t.clustered_tree())?;
        let mut group: Vec<Vec<u8>> = Vec::new();
        let mut group_key: Vec<u8> = Vec::new();
        for_each_entry(tree, interrupt, |key, pk| {
            let sk = key[..key.len().saturating_sub(pk.len())].to_vec();
            if sk != group_key {
                self.check_group(&t, &ct, idx, &group_key, &group)?;
                group.clear();
                group_key = sk;
            }
            group.push(pk);
            Ok(())
        })?;
        self.check_group(&t, &ct, idx, &group_key, &group)
    }

    /// One key's entries: 1062 if two of them are live rows that still
    /// have the key (others are versions purge has not reached).
    fn check_group(
        &self,
        t: &TableDef,
        ct: &Tree,
        idx: &IndexDef,
        sk: &[u8],
        pks: &[Vec<u8>],
    ) -> Result<()> {
        if pks.len() < 2 {
            return Ok(());
        }
        let mut holder: Option<Vec<crate::types::Value>> = None;
        for pk in pks {
            let Some(v) = ct.get(pk)? else { continue };
            let Some((_, false, body)) = mvcc::split_value(&v) else {
                continue;
            };
            let vals = self.index_values(t, idx, body)?;
            if has_null(idx, &vals) || sec_key(t, idx, &vals) != sk {
                continue;
            }
            if holder.is_some() {
                return Err(EngineError::new(
                    1062,
                    "23000",
                    format!(
                        "Duplicate entry '{}' for key '{}.{}'",
                        display_key(t, idx, &vals),
                        t.name,
                        idx.name
                    ),
                ));
            }
            holder = Some(vals);
        }
        Ok(())
    }

    /// Gives a build up: the definition loses the index under the commit
    /// mutex (no apply or purge touches the tree after), and the tree goes
    /// once no statement holds the definition that named it.
    fn abandon_build(&self, id: u32, tree_names: Vec<String>) -> Result<()> {
        let old = {
            let _c = self.inner.commit.lock();
            let old = self.current(id)?;
            let mut def = (*old).clone();
            def.building = None;
            self.inner.catalog.write().insert(Arc::new(def));
            old
        };
        self.drop_when_unused(old, OldTrees::Named(tree_names))
    }

    /// Makes the filled index readable: stamped with the commit sequence
    /// point every later snapshot is at or after, written to the catalog
    /// (one mini-transaction) and the binlog.
    fn install_index(&self, id: u32, mut idx: IndexDef) -> Result<Arc<TableDef>> {
        let _c = self.inner.commit.lock();
        let mut def = (*self.current(id)?).clone();
        debug_assert_eq!(def.building.as_ref().map(|b| b.id), Some(idx.id));
        def.building = None;
        // Every snapshot taken so far is older than the index: move the
        // visibility watermark past it (commits are held off, so nothing
        // between is unapplied) and stamp the index with that point. The
        // point is a number of the commit sequence in use: with the binary
        // log that is the pipeline's counter, not the redo LSN (an LSN
        // here put the index ahead of every later commit's CSN, so the
        // first commit after it moved the watermark back below the index
        // and every read through it was 1412 until restart).
        idx.created_csn = match &self.inner.pipeline {
            Some(p) => p.take_csn(),
            None => self.inner.store.log().lsn(),
        };
        self.inner
            .snapshots
            .visible
            .fetch_max(idx.created_csn, Ordering::AcqRel);
        let sql = format!(
            "CREATE {}INDEX `{}` ON `{}`.`{}` ({})",
            if idx.unique { "UNIQUE " } else { "" },
            idx.name,
            def.db,
            def.name,
            idx.parts_sql(&def)
        );
        def.indexes.push(idx);
        let mut k = b"T".to_vec();
        k.extend_from_slice(&def.id.to_be_bytes());
        self.inner.tree(CATALOG_TREE)?.put(&k, &def.encode())?;
        let def = Arc::new(def);
        self.inner.catalog.write().insert(def.clone());
        self.inner.binlog_ddl(&def.db, &sql)?;
        Ok(def)
    }
}

/// A filled index: its definition (with the bulk-loaded tree's id) and
/// that tree.
struct Built {
    idx: IndexDef,
    tree: Tree,
}

/// Holds purge back while an index fills (see the module doc): a
/// snapshot taken with `building` set, closed when dropped.
struct PurgeHold<'a> {
    snapshots: &'a crate::mvcc::Snapshots,
    at: u64,
}

impl<'a> PurgeHold<'a> {
    fn new(snapshots: &'a crate::mvcc::Snapshots) -> PurgeHold<'a> {
        PurgeHold {
            snapshots,
            at: snapshots.open(),
        }
    }
}

impl Drop for PurgeHold<'_> {
    fn drop(&mut self) {
        self.snapshots.close(self.at);
    }
}

/// Every (key, value) of `tree` in key order, checking `interrupt` every
/// 1024 entries.
fn for_each_entry(
    tree: &Tree,
    interrupt: Option<&Interrupt>,
    mut f: impl FnMut(Vec<u8>, Vec<u8>) -> Result<()>,
) -> Result<()> {
    for (n, e) in tree
        .range(Bound::Unbounded, Bound::Unbounded, false)
        .enumerate()
    {
        if n.is_multiple_of(1024) {
            if let Some(i) = interrupt {
                i.check()?;
            }
        }
        let (key, val) = e?;
        f(key, val)?;
    }
    Ok(())
}

/// 1061 for a name in use, 1072 for a column that is not there.
fn check_new_index(t: &TableDef, name: &str, columns: &[usize]) -> Result<()> {
    if t.index(name).is_some() || name.eq_ignore_ascii_case("PRIMARY") {
        return Err(EngineError::new(
            1061,
            "42000",
            format!("Duplicate key name '{name}'"),
        ));
    }
    if columns.is_empty() || columns.iter().any(|&c| c >= t.columns.len()) {
        return Err(EngineError::new(
            1072,
            "42000",
            format!("Key column for index '{name}' doesn't exist in table"),
        ));
    }
    crate::engine::check_key_types(&t.columns, columns)
}
