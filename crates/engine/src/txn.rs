//! # Transactions
//!
//! A transaction keeps its writes in a private *write set* (primary key ->
//! new row or delete) until commit; nothing it does is in the B+trees
//! before then, so rollback is dropping the set and statement rollback is
//! undoing the tail of an undo list.
//!
//! Reads come in two kinds, as in InnoDB:
//! * **consistent reads** (plain SELECT) see the transaction's own writes
//!   over a snapshot: REPEATABLE READ takes one snapshot at the first read
//!   and keeps it; READ COMMITTED takes a new one per statement
//!   ([`Txn::statement_start`]). They never lock and never wait.
//! * **current reads** (writes, SELECT ... FOR UPDATE / FOR SHARE) lock the
//!   row first (X or S, held to commit), then read its latest committed
//!   version. That is what prevents lost updates. A locking read may ask
//!   not to wait ([`LockWait`]): NOWAIT fails with 3572 at the first row
//!   another transaction holds, SKIP LOCKED leaves such rows out.
//!
//! The four isolation levels, as InnoDB runs them:
//! * REPEATABLE READ: one snapshot per transaction (above).
//! * READ COMMITTED: one snapshot per statement.
//! * READ UNCOMMITTED: as READ COMMITTED. InnoDB would let it see other
//!   transactions' uncommitted changes; here those live only in their
//!   transaction's private write set, so there is nothing dirty to read.
//! * SERIALIZABLE: as REPEATABLE READ, except that every consistent read
//!   becomes a locking read in shared mode (InnoDB's `LOCK IN SHARE MODE`
//!   conversion) unless the transaction is a single autocommit statement
//!   ([`Txn::set_single_statement`]), which reads a snapshot without
//!   locking.
//!
//! Uniqueness is checked under a lock on the key itself: the primary key
//! row lock, and for a unique secondary index an X lock on
//! (index, key value), so two transactions inserting the same value
//! serialize and the second sees the first's commit. Locks cover rows and
//! unique values only (no gap locks): locking reads do not prevent phantoms.
//!
//! ```text
//!   lock names:  'R' table u32 | primary key bytes          row
//!                'U' table u32 | index u32 | key bytes       unique value
//! ```

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::atomic::Ordering;
use std::sync::Arc;

mod fk;
pub(crate) use fk::{
    access_for as fk_access_for, describe as fk_describe, ref_positions as fk_ref_positions,
};

/// The access path a foreign key on `cols` of `t` uses: Some(None) the
/// primary key, Some(Some(index)), or None when no index leads with them.
pub fn fk_serving_index(t: &TableDef, cols: &[usize]) -> Option<Option<String>> {
    fk::access_for(t, cols)
}

use crate::catalog::{ColumnDef, IndexDef, TableDef};
use crate::commit::TxWrite;
use crate::engine::{display_key, display_vals, has_null, sec_key, Inner, RecWrite};
use crate::error::{EngineError, Result};
use crate::interrupt::{Interrupt, Stage};
use crate::lock::LockMode;
use crate::mdl::Use;
use crate::mvcc;
use crate::types::{self, ColumnType, JsonForm, Value};

/// Isolation levels (see the module docs for what each one means here).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Isolation {
    ReadUncommitted,
    ReadCommitted,
    #[default]
    RepeatableRead,
    Serializable,
}

/// What a locking read does about a row another transaction holds a
/// conflicting lock on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LockWait {
    /// Wait for it (up to `innodb_lock_wait_timeout`, then 1205).
    #[default]
    Wait,
    /// `NOWAIT`: fail the statement at once with 3572.
    NoWait,
    /// `SKIP LOCKED`: leave the row out of the result.
    SkipLocked,
}

/// MySQL's ER_LOCK_NOWAIT.
/// ER_TABLE_DEF_CHANGED (1412): a snapshot older than an index or a
/// rebuild of the table it reads.
pub fn definition_changed() -> EngineError {
    EngineError::new(
        1412,
        "HY000",
        "Table definition has changed, please retry transaction",
    )
}

/// ER_NEED_REPREPARE (1615): the statement read a table definition that
/// a DDL replaced while it waited; it is run again.
pub fn need_reprepare() -> EngineError {
    EngineError::new(1615, "HY000", "Prepared statement needs to be re-prepared")
}

pub fn lock_nowait_error() -> EngineError {
    EngineError::new(
        3572,
        "HY000",
        "Statement aborted because lock(s) could not be acquired immediately and NOWAIT is set.",
    )
}

/// A row as returned by reads: its primary key bytes (the handle for
/// updates and deletes, also for tables with a hidden row id) and values.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub key: Vec<u8>,
    pub values: Vec<Value>,
}

/// Which rows a scan visits.
#[derive(Debug, Clone)]
pub struct Scan {
    /// None = primary key order; Some(name) = a secondary index.
    pub index: Option<String>,
    /// Bounds on a prefix of the index columns.
    pub lower: Bound<Vec<Value>>,
    pub upper: Bound<Vec<Value>>,
    pub reverse: bool,
    /// Some(mode) = locking read (FOR SHARE / FOR UPDATE).
    pub lock: Option<LockMode>,
    /// A locking read's policy for rows locked by others.
    pub wait: LockWait,
    pub limit: Option<usize>,
}

impl Default for Scan {
    fn default() -> Self {
        Scan {
            index: None,
            lower: Bound::Unbounded,
            upper: Bound::Unbounded,
            reverse: false,
            lock: None,
            wait: LockWait::Wait,
            limit: None,
        }
    }
}

#[derive(Debug, Clone)]
struct Write {
    table: Arc<TableDef>,
    /// None = deleted.
    row: Option<Vec<Value>>,
    /// The committed row before this transaction first wrote the key
    /// (None = absent): the binlog's before image, and what recovery
    /// restores if the binlog decides the transaction never happened.
    before: Option<Vec<Value>>,
}

type WKey = (u32, Vec<u8>);

/// A position to roll back to (statement rollback).
#[derive(Debug, Clone, Copy)]
pub struct Savepoint(usize);

/// Result of an insert.
#[derive(Debug, Clone)]
pub struct Inserted {
    pub key: Vec<u8>,
    /// The AUTO_INCREMENT value generated, if one was.
    pub auto_id: Option<u64>,
}

/// A transaction. Dropping it without commit rolls it back.
pub struct Txn {
    e: Arc<Inner>,
    id: u64,
    isolation: Isolation,
    read_only: bool,
    snapshot: Option<u64>,
    writes: BTreeMap<WKey, Write>,
    undo: Vec<(WKey, Option<Write>)>,
    done: bool,
    /// The connection's kill flag (KILL, max_execution_time), polled in
    /// lock waits and scans; see `interrupt.rs`.
    interrupt: Option<Interrupt>,
    /// The session's `innodb_lock_wait_timeout`; None = the global value.
    lock_wait: Option<std::time::Duration>,
    /// Tables this transaction has read or written, each counted once in
    /// the table's metadata lock until the transaction ends (mdl.rs).
    mdl_tables: Vec<(u32, Use)>,
    /// This transaction in the metadata locks' wait-for graph.
    mdl_owner: crate::mdl::Owner,
    /// One autocommit statement: SERIALIZABLE reads do not lock.
    single_statement: bool,
    /// The session's `foreign_key_checks` (txn/fk.rs).
    fk_checks: bool,
    /// How deep the foreign-key cascade being applied is.
    fk_depth: usize,
    /// The session's time zone for TIMESTAMP columns (tszone.rs); None
    /// converts nothing (UTC).
    ts_zone: Option<crate::tszone::Zone>,
}

fn row_lock_name(table: u32, pk: &[u8]) -> Vec<u8> {
    let mut n = Vec::with_capacity(5 + pk.len());
    n.push(b'R');
    n.extend_from_slice(&table.to_be_bytes());
    n.extend_from_slice(pk);
    n
}

fn unique_lock_name(table: u32, index: u32, key: &[u8]) -> Vec<u8> {
    let mut n = Vec::with_capacity(9 + key.len());
    n.push(b'U');
    n.extend_from_slice(&table.to_be_bytes());
    n.extend_from_slice(&index.to_be_bytes());
    n.extend_from_slice(key);
    n
}

fn successor(prefix: &[u8]) -> Option<Vec<u8>> {
    types::key_prefix_successor(prefix)
}

/// One batch of a range scan ([`Txn::scan_after_cols`]).
#[derive(Debug, Default)]
pub struct ScanBatch {
    /// The rows, in scan order.
    pub rows: Vec<Row>,
    /// The position key of the last row: pass it as `after` to resume.
    pub resume: Option<Vec<u8>>,
}

impl Txn {
    pub(crate) fn new(e: Arc<Inner>, isolation: Isolation, read_only: bool) -> Txn {
        let mdl_owner = e.mdl.owner();
        let id = e.next_trx.fetch_add(1, Ordering::Relaxed);
        Txn {
            e,
            id,
            isolation,
            read_only,
            snapshot: None,
            writes: BTreeMap::new(),
            undo: Vec::new(),
            done: false,
            interrupt: None,
            lock_wait: None,
            mdl_tables: Vec::new(),
            mdl_owner,
            single_statement: false,
            fk_checks: true,
            fk_depth: 0,
            ts_zone: None,
        }
    }

    /// Marks the transaction as one autocommit statement outside BEGIN:
    /// under SERIALIZABLE its plain reads then stay consistent nonlocking
    /// reads, as InnoDB does with autocommit on.
    pub fn set_single_statement(&mut self, single: bool) {
        self.single_statement = single;
    }

    /// The session time zone TIMESTAMP values are written and read in
    /// (tszone.rs); None = UTC, no conversion.
    pub fn set_timestamp_zone(&mut self, zone: Option<crate::tszone::Zone>) {
        self.ts_zone = zone;
    }

    /// Runs `f` with the session zone set aside: foreign-key checks and
    /// cascades read and write stored (UTC) values.
    fn utc_only<T>(&mut self, f: impl FnOnce(&mut Txn) -> Result<T>) -> Result<T> {
        let zone = self.ts_zone.take();
        let r = f(self);
        self.ts_zone = zone;
        r
    }

    /// A key's values for a 1062 message: TIMESTAMPs in session time, as
    /// MySQL prints them.
    /// `idx` None: the primary key.
    fn shown_key(&self, t: &TableDef, idx: Option<&IndexDef>, row: &[Value]) -> String {
        let show = |row: &[Value]| match idx {
            Some(i) => display_key(t, i, row),
            None => display_vals(&t.primary, row),
        };
        let Some(z) = self.ts_zone.as_deref() else {
            return show(row);
        };
        let mut local = row.to_vec();
        crate::tszone::row_to_local(z, &crate::tszone::timestamp_columns(&t.columns), &mut local);
        show(&local)
    }

    /// A row read through the public interface, in session time.
    fn out_row(&self, t: &TableDef, row: Option<Vec<Value>>) -> Option<Vec<Value>> {
        let Some(z) = self.ts_zone.as_deref() else {
            return row;
        };
        row.map(|mut r| {
            let ts = crate::tszone::timestamp_columns(&t.columns);
            crate::tszone::row_to_local(z, &ts, &mut r);
            r
        })
    }

    /// A value written to column `c`, checked against its type (and for a
    /// TIMESTAMP in a session zone, converted to UTC first).
    fn store_value(&self, c: &ColumnDef, v: Value, row_no: u64) -> Result<Value> {
        match (&c.ty, self.ts_zone.as_deref()) {
            (ColumnType::Timestamp { fsp }, Some(z)) => {
                crate::tszone::store_timestamp(z, v, *fsp, c.nullable, &c.name, row_no)
            }
            _ => types::coerce(v, &c.ty, c.nullable, &c.name, row_no),
        }
    }

    /// The lock a plain (consistent) read takes: S under SERIALIZABLE in
    /// a multi-statement transaction, else none.
    fn plain_read_lock(&self) -> Option<LockMode> {
        (self.isolation == Isolation::Serializable && !self.single_statement)
            .then_some(LockMode::Shared)
    }

    /// Opens the transaction's snapshot now (START TRANSACTION WITH
    /// CONSISTENT SNAPSHOT) rather than at its first read.
    pub fn open_snapshot(&mut self) {
        self.snap();
    }

    /// Attaches the connection's interrupt: lock waits and scans of this
    /// transaction then stop with 1317/3024 when it is killed.
    pub fn set_interrupt(&mut self, i: Option<Interrupt>) {
        self.interrupt = i;
    }

    /// The attached interrupt, if any.
    pub fn interrupt(&self) -> Option<&Interrupt> {
        self.interrupt.as_ref()
    }

    /// A safe point for callers' row loops: `Err` (1317/3024) once the
    /// attached interrupt is killed; cheap enough to call per row.
    pub fn tick(&self) -> Result<()> {
        match &self.interrupt {
            Some(i) => i.tick(),
            None => Ok(()),
        }
    }

    pub fn id(&self) -> u64 {
        self.id
    }
    pub fn isolation(&self) -> Isolation {
        self.isolation
    }
    /// Sets how long this transaction's row lock waits last before 1205
    /// (a session's `innodb_lock_wait_timeout`); None = the global value
    /// at the time of each wait.
    pub fn set_lock_wait_timeout(&mut self, t: Option<std::time::Duration>) {
        self.lock_wait = t;
    }

    pub fn has_writes(&self) -> bool {
        !self.writes.is_empty()
    }

    fn snap(&mut self) -> u64 {
        match self.snapshot {
            Some(s) => s,
            None => {
                let s = self.e.snapshots.open();
                self.snapshot = Some(s);
                s
            }
        }
    }

    /// The snapshot to read `t` with: 1412 when it is older than the
    /// table's last rebuild (a copying ALTER TABLE kept no older rows).
    fn snap_for(&mut self, t: &TableDef) -> Result<u64> {
        let s = self.snap();
        if t.rebuilt_csn > s {
            return Err(definition_changed());
        }
        Ok(s)
    }

    fn close_snapshot(&mut self) {
        if let Some(s) = self.snapshot.take() {
            self.e.snapshots.close(s);
        }
    }

    /// Marks a statement boundary: READ COMMITTED reads after it see
    /// everything committed before it.
    pub fn statement_start(&mut self) {
        if matches!(
            self.isolation,
            Isolation::ReadCommitted | Isolation::ReadUncommitted
        ) {
            self.close_snapshot();
        }
    }

    fn check_writable(&self) -> Result<()> {
        if self.read_only {
            return Err(EngineError::new(
                1792,
                "25006",
                "Cannot execute statement in a READ ONLY transaction.",
            ));
        }
        if self.done {
            return Err(EngineError::internal("transaction already ended"));
        }
        Ok(())
    }

    /// The first write of the transaction to `t`: waits for a DDL on it
    /// (mdl.rs); a transaction that only read `t` so far becomes one of
    /// its writers (1213 if a DDL waits for it meanwhile). If a DDL
    /// changed the table before this transaction used it, `t` (read
    /// before the wait) is stale: 1615, and the SQL layer runs the
    /// statement again with the new definition (MySQL re-prepares it the
    /// same way). The lock is released when the transaction ends.
    fn write_to(&mut self, t: &TableDef) -> Result<()> {
        self.check_writable()?;
        match self.mdl_tables.iter_mut().find(|(id, _)| *id == t.id) {
            Some((_, Use::Write)) => Ok(()),
            Some((id, u)) => {
                self.e.mdl.upgrade(*id, self.mdl_owner)?;
                *u = Use::Write;
                Ok(())
            }
            None => self.enter_table(t, Use::Write),
        }
    }

    /// The first read of the transaction from `t` (a permanent table):
    /// as [`Self::write_to`], as a reader. DDL on `t` then waits for this
    /// transaction to end, so a REPEATABLE READ snapshot never finds the
    /// table changed under it. The SQL layer opens a statement's tables
    /// this way before it sends a row ([`Self::open_table`]); the reads
    /// themselves call it too.
    fn read_from(&mut self, t: &TableDef) -> Result<()> {
        if t.temporary || self.mdl_tables.iter().any(|(id, _)| *id == t.id) {
            return Ok(());
        }
        self.enter_table(t, Use::Read)
    }

    /// Takes the metadata lock of a table a statement is about to read,
    /// before any of its work is visible: 1615 if a DDL replaced the
    /// definition the statement was planned with (run it again).
    pub fn open_table(&mut self, t: &TableDef) -> Result<()> {
        self.read_from(t)
    }

    fn enter_table(&mut self, t: &TableDef, what: Use) -> Result<()> {
        self.e.mdl.enter(
            t.id,
            what,
            self.mdl_owner,
            self.e.mdl_timeout_for(self.interrupt.as_ref()),
            self.interrupt.as_ref(),
        )?;
        let current = self.e.catalog.read().by_id.get(&t.id).cloned();
        let fresh = current.is_some_and(|c| std::ptr::eq(Arc::as_ptr(&c), t) || *c == *t);
        if !fresh {
            self.e.mdl.leave(t.id, what, self.mdl_owner);
            return Err(need_reprepare());
        }
        self.mdl_tables.push((t.id, what));
        Ok(())
    }

    /// The end of the transaction: DDL waiting on its tables may go on.
    fn release_tables(&mut self) {
        for (t, what) in self.mdl_tables.drain(..) {
            self.e.mdl.leave(t, what, self.mdl_owner);
        }
    }

    pub fn savepoint(&self) -> Savepoint {
        Savepoint(self.undo.len())
    }

    /// Undoes every write since `sp` (locks stay held, as in InnoDB).
    pub fn rollback_to(&mut self, sp: Savepoint) {
        while self.undo.len() > sp.0 {
            let (k, prev) = self.undo.pop().expect("undo entry");
            match prev {
                Some(w) => {
                    self.writes.insert(k, w);
                }
                None => {
                    self.writes.remove(&k);
                }
            }
        }
    }

    fn record(&mut self, k: WKey, mut w: Write) {
        if let Some(p) = self.writes.get(&k) {
            // Written before in this transaction: the original committed
            // row stays the before image.
            w.before = p.before.clone();
        }
        let prev = self.writes.insert(k.clone(), w);
        self.undo.push((k, prev));
    }

    fn lock(&self, name: &[u8], mode: LockMode) -> Result<()> {
        self.e
            .locks
            .lock_interruptible(
                self.id,
                name,
                mode,
                self.lock_wait.unwrap_or_else(|| self.e.lock_timeout()),
                self.interrupt.as_ref(),
            )
            .map(|_| ())
    }

    /// Locks `name` under a locking read's `wait` policy: Ok(false) means
    /// SKIP LOCKED passes the row by.
    fn lock_for_read(&self, name: &[u8], mode: LockMode, wait: LockWait) -> Result<bool> {
        match wait {
            LockWait::Wait => self.lock(name, mode).map(|_| true),
            LockWait::NoWait => {
                if self.e.locks.try_lock(self.id, name, mode) {
                    Ok(true)
                } else {
                    Err(lock_nowait_error())
                }
            }
            LockWait::SkipLocked => Ok(self.e.locks.try_lock(self.id, name, mode)),
        }
    }

    /// Encodes primary key values (or a hidden row id).
    pub fn encode_pk(t: &TableDef, pk: &[Value]) -> Result<Vec<u8>> {
        Self::encode_pk_in(t, pk, None)
    }

    /// [`Txn::encode_pk`] of primary key values as the SQL layer holds
    /// them: TIMESTAMP values in this transaction's session zone.
    pub fn encode_session_pk(&self, t: &TableDef, pk: &[Value]) -> Result<Vec<u8>> {
        Self::encode_pk_in(t, pk, self.ts_zone.as_deref())
    }

    /// [`Txn::encode_pk`] with TIMESTAMP key values read in `zone`.
    fn encode_pk_in(
        t: &TableDef,
        pk: &[Value],
        zone: Option<&dyn crate::tszone::TimestampZone>,
    ) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        if t.has_hidden_pk() {
            match pk {
                [Value::UInt(id)] => out.extend_from_slice(&id.to_be_bytes()),
                _ => {
                    return Err(EngineError::internal(
                        "a table without primary key is addressed by its row id",
                    ))
                }
            }
        } else {
            if pk.len() != t.primary.len() {
                return Err(EngineError::internal("wrong number of primary key values"));
            }
            let mut vals = Vec::with_capacity(pk.len());
            for (i, v) in pk.iter().enumerate() {
                let c = &t.columns[t.primary[i]];
                vals.push(match (&c.ty, zone) {
                    (ColumnType::Timestamp { fsp }, Some(z)) => {
                        crate::tszone::store_timestamp(z, v.clone(), *fsp, false, &c.name, 1)?
                    }
                    _ => types::coerce(v.clone(), &c.ty, false, &c.name, 1)?,
                });
            }
            types::encode_key(&vals, &t.pk_types(), &mut out);
        }
        Ok(out)
    }

    fn pk_of(t: &TableDef, row: &[Value], hidden: Option<u64>) -> Vec<u8> {
        let mut out = Vec::new();
        if t.has_hidden_pk() {
            out.extend_from_slice(&hidden.unwrap_or(0).to_be_bytes());
        } else {
            let vals: Vec<Value> = t.primary.iter().map(|&i| row[i].clone()).collect();
            types::encode_key(&vals, &t.pk_types(), &mut out);
        }
        out
    }

    fn decode(&self, t: &TableDef, row: &[u8]) -> Result<Vec<Value>> {
        self.decode_cols(t, row, None, JsonForm::Printed)
    }

    /// Decodes the columns in `wanted` (None = all) of a stored body,
    /// reading off-page columns only when wanted (offpage.rs); the rest
    /// are NULL. JSON columns come back in the form `json`.
    fn decode_cols(
        &self,
        t: &TableDef,
        row: &[u8],
        wanted: Option<&[bool]>,
        json: JsonForm,
    ) -> Result<Vec<Value>> {
        crate::offpage::decode_as(self.e.store.shared(), row, &t.columns, wanted, json)
    }

    /// Latest committed row (current read, caller holds the row lock).
    fn read_latest(&self, t: &TableDef, pk: &[u8]) -> Result<Option<Vec<Value>>> {
        let v = self.e.tree(&t.clustered_tree())?.get(pk)?;
        match v.as_deref().and_then(mvcc::split_value) {
            Some((_, false, row)) => Ok(Some(self.decode(t, row)?)),
            _ => Ok(None),
        }
    }

    /// The version visible at `snap` given the tree value `v`.
    /// (`wanted`: the columns to decode, None = all; the rest are NULL.)
    fn resolve_cols(
        &self,
        t: &TableDef,
        pk: &[u8],
        v: Option<&[u8]>,
        snap: u64,
        wanted: Option<&[bool]>,
        json: JsonForm,
    ) -> Result<Option<Vec<Value>>> {
        match v.and_then(mvcc::split_value) {
            None => Ok(None),
            Some((csn, del, row)) if csn <= snap => {
                if del {
                    Ok(None)
                } else {
                    Ok(Some(self.decode_cols(t, row, wanted, json)?))
                }
            }
            Some(_) => match self.e.chains.visible(t.id, pk, snap) {
                Some(ver) if !ver.deleted => Ok(Some(self.decode_cols(t, &ver.row, wanted, json)?)),
                _ => Ok(None),
            },
        }
    }

    /// Consistent read of one row by primary key values.
    pub fn get(&mut self, t: &TableDef, pk: &[Value]) -> Result<Option<Vec<Value>>> {
        let k = Self::encode_pk_in(t, pk, self.ts_zone.as_deref())?;
        self.get_by_key(t, &k)
    }

    pub fn get_by_key(&mut self, t: &TableDef, key: &[u8]) -> Result<Option<Vec<Value>>> {
        let r = self.get_by_key_cols(t, key, None)?;
        Ok(self.out_row(t, r))
    }

    /// Consistent read of one row by primary key values, decoding only the
    /// `wanted` columns (None = all; the others are NULL). A row this
    /// transaction wrote comes back whole.
    pub fn get_cols(
        &mut self,
        t: &TableDef,
        pk: &[Value],
        wanted: Option<&[bool]>,
    ) -> Result<Option<Vec<Value>>> {
        let k = Self::encode_pk_in(t, pk, self.ts_zone.as_deref())?;
        let r = self.get_by_key_cols(t, &k, wanted)?;
        Ok(self.out_row(t, r))
    }

    fn get_by_key_cols(
        &mut self,
        t: &TableDef,
        key: &[u8],
        wanted: Option<&[bool]>,
    ) -> Result<Option<Vec<Value>>> {
        if let Some(mode) = self.plain_read_lock() {
            return self.current(t, key, mode, LockWait::Wait);
        }
        if !self.writes.is_empty() {
            if let Some(w) = self.writes.get(&(t.id, key.to_vec())) {
                return Ok(w.row.clone());
            }
        }
        self.read_from(t)?;
        let snap = self.snap_for(t)?;
        let v = self.e.tree(&t.clustered_tree())?.get(key)?;
        self.resolve_cols(t, key, v.as_deref(), snap, wanted, JsonForm::Printed)
    }

    /// Locking read of one row (FOR SHARE / FOR UPDATE).
    pub fn get_for(
        &mut self,
        t: &TableDef,
        pk: &[Value],
        mode: LockMode,
    ) -> Result<Option<Vec<Value>>> {
        self.get_locked(t, pk, mode, LockWait::Wait)
    }

    /// [`Txn::get_for`] with a policy for a row another transaction holds:
    /// wait, fail at once (3572), or read it as absent (SKIP LOCKED).
    pub fn get_locked(
        &mut self,
        t: &TableDef,
        pk: &[Value],
        mode: LockMode,
        wait: LockWait,
    ) -> Result<Option<Vec<Value>>> {
        let k = Self::encode_pk_in(t, pk, self.ts_zone.as_deref())?;
        let r = self.current(t, &k, mode, wait)?;
        Ok(self.out_row(t, r))
    }

    fn current(
        &mut self,
        t: &TableDef,
        key: &[u8],
        mode: LockMode,
        wait: LockWait,
    ) -> Result<Option<Vec<Value>>> {
        self.read_from(t)?;
        if !self.lock_for_read(&row_lock_name(t.id, key), mode, wait)? {
            return Ok(None);
        }
        if let Some(w) = self.writes.get(&(t.id, key.to_vec())) {
            return Ok(w.row.clone());
        }
        self.read_latest(t, key)
    }

    /// Fills defaults and auto-increment, checks every value against its
    /// column (strict mode). `values[i] = None` means "not given".
    fn complete_row(
        &self,
        t: &TableDef,
        values: Vec<Option<Value>>,
        row_no: u64,
    ) -> Result<(Vec<Value>, Option<u64>)> {
        if values.len() != t.columns.len() {
            return Err(EngineError::new(
                1136,
                "21S01",
                format!("Column count doesn't match value count at row {row_no}"),
            ));
        }
        let mut out = Vec::with_capacity(values.len());
        let mut auto_id = None;
        for (c, v) in t.columns.iter().zip(values) {
            // A written value is in session time; a literal column default
            // is kept as stored (UTC, see tszone.rs).
            let explicit = v.is_some();
            let v = match v {
                // NULL, absent, or 0 generate the next value (MySQL,
                // without NO_AUTO_VALUE_ON_ZERO in sql_mode).
                Some(Value::Null) | Some(Value::Int(0)) | Some(Value::UInt(0)) | None
                    if c.auto_increment =>
                {
                    let id = self.e.next_autoinc(t.id, false, None)?;
                    auto_id = Some(id);
                    Value::UInt(id)
                }
                Some(v) => v,
                None => match &c.default {
                    Some(d) => d.clone(),
                    None if c.nullable => Value::Null,
                    None => {
                        return Err(crate::types::err_no_default(&c.name));
                    }
                },
            };
            let v = if explicit {
                self.store_value(c, v, row_no)?
            } else {
                types::coerce(v, &c.ty, c.nullable, &c.name, row_no)?
            };
            // An explicit value raises the counter only once it is known to
            // fit the column: a rejected INSERT must not move it (MySQL).
            if c.auto_increment && auto_id.is_none() {
                if let Some(n) = int_of(&v) {
                    if n > 0 {
                        self.e.next_autoinc(t.id, false, Some(n))?;
                    }
                }
            }
            out.push(v);
        }
        Ok((out, auto_id))
    }

    /// INSERT one row. Error 1062 if a primary or unique key exists.
    pub fn insert(&mut self, t: &TableDef, values: Vec<Option<Value>>) -> Result<Inserted> {
        self.write_to(t)?;
        let (row, auto_id) = self.complete_row(t, values, 1)?;
        let hidden = if t.has_hidden_pk() {
            Some(self.e.next_autoinc(t.id, true, None)?)
        } else {
            None
        };
        let key = Self::pk_of(t, &row, hidden);
        if !t.foreign_keys.is_empty() {
            self.utc_only(|tx| tx.fk_check_parents(t, &row, None))?;
        }
        self.insert_row(t, key.clone(), row)?;
        Ok(Inserted { key, auto_id })
    }

    /// Refuses a row whose B+tree entries cannot fit a page even with its
    /// long columns off-page (offpage.rs), before it can reach a commit
    /// record: a logged commit that cannot be applied would poison the
    /// store.
    fn check_fits(&self, t: &TableDef, key: &[u8], row: &[Value]) -> Result<()> {
        let ps = self.e.store.shared().pool.page_size();
        let max_key = quire_storage::btree::max_key_bytes(ps);
        let mut bytes = Vec::new();
        types::try_encode_row(row, &t.types(), &mut bytes).map_err(EngineError::internal)?;
        let too_large = |what: String| {
            EngineError::new(
                1118,
                "42000",
                format!("Row size too large: {what}; the maximum for innodb_page_size={ps} is {max_key} bytes per key"),
            )
        };
        if key.len() > max_key {
            return Err(too_large(format!(
                "the primary key takes {} bytes",
                key.len()
            )));
        }
        let limit = self.e.body_limit(key.len());
        if let Err(min) = crate::offpage::plan(bytes.len(), row, &t.types(), limit)? {
            return Err(EngineError::new(
                1118,
                "42000",
                format!(
                    "Row size too large (> {limit}). Changing some columns to TEXT or BLOB may help. In current row format, BLOB prefix of 0 bytes is stored inline. (this row needs {min} bytes in the page)"
                ),
            ));
        }
        let max_entry = quire_storage::btree::max_entry_bytes(ps);
        for idx in &t.indexes {
            let sk = sec_key(t, idx, row).len() + key.len();
            if sk > max_key || sk + key.len() > max_entry {
                return Err(too_large(format!(
                    "the key of index '{}' takes {sk} bytes",
                    idx.name
                )));
            }
        }
        Ok(())
    }

    fn insert_row(&mut self, t: &TableDef, key: Vec<u8>, row: Vec<Value>) -> Result<()> {
        self.check_fits(t, &key, &row)?;
        if self
            .current(t, &key, LockMode::Exclusive, LockWait::Wait)?
            .is_some()
        {
            let shown = if t.has_hidden_pk() {
                String::new()
            } else {
                self.shown_key(t, None, &row)
            };
            return Err(EngineError::new(
                1062,
                "23000",
                format!("Duplicate entry '{shown}' for key '{}.PRIMARY'", t.name),
            ));
        }
        self.check_unique(t, &key, &row, None)?;
        let table = self.table_arc(t);
        self.record(
            (t.id, key),
            Write {
                table,
                row: Some(row),
                before: None,
            },
        );
        Ok(())
    }

    fn table_arc(&self, t: &TableDef) -> Arc<TableDef> {
        self.e
            .catalog
            .read()
            .by_id
            .get(&t.id)
            .cloned()
            .unwrap_or_else(|| Arc::new(t.clone()))
    }

    /// Checks unique secondary indexes for `row` (stored under `key`),
    /// locking each unique value. `old` = the row it replaces (update):
    /// unchanged values need no check.
    fn check_unique(
        &mut self,
        t: &TableDef,
        key: &[u8],
        row: &[Value],
        old: Option<&[Value]>,
    ) -> Result<()> {
        for idx in t.indexes.iter().filter(|i| i.unique) {
            if has_null(idx, row) {
                continue; // NULLs never conflict in a unique index
            }
            let sk = sec_key(t, idx, row);
            if let Some(o) = old {
                if sec_key(t, idx, o) == sk {
                    continue;
                }
            }
            self.lock(&unique_lock_name(t.id, idx.id, &sk), LockMode::Exclusive)?;
            if self.unique_taken(t, idx, &sk, key)? {
                return Err(EngineError::new(
                    1062,
                    "23000",
                    format!(
                        "Duplicate entry '{}' for key '{}.{}'",
                        self.shown_key(t, Some(idx), row),
                        t.name,
                        idx.name
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Whether another row currently (latest committed or own write) has
    /// unique key `sk` in `idx`.
    fn unique_taken(
        &mut self,
        t: &TableDef,
        idx: &IndexDef,
        sk: &[u8],
        key: &[u8],
    ) -> Result<bool> {
        for ((tid, k), w) in self.writes.range((t.id, Vec::new())..) {
            if *tid != t.id {
                break;
            }
            if k.as_slice() != key {
                if let Some(r) = &w.row {
                    if !has_null(idx, r) && sec_key(t, idx, r) == sk {
                        return Ok(true);
                    }
                }
            }
        }
        let tree = self.e.tree(&t.index_tree(idx.id))?;
        let upper = match successor(sk) {
            Some(s) => Bound::Excluded(s),
            None => Bound::Unbounded,
        };
        for e in tree.range(Bound::Included(sk.to_vec()), upper, false) {
            let (_, pk) = e?;
            if pk == key || self.writes.contains_key(&(t.id, pk.clone())) {
                continue; // own writes were checked above
            }
            if let Some(r) = self.read_latest(t, &pk)? {
                if sec_key(t, idx, &r) == sk {
                    return Ok(true);
                }
            }
        }
        Ok(false)
    }

    /// UPDATE one row addressed by its key: `values` is the full new row.
    /// Returns false if the row does not exist (any more).
    pub fn update(&mut self, t: &TableDef, key: &[u8], values: Vec<Value>) -> Result<bool> {
        self.write_to(t)?;
        let Some(old) = self.current(t, key, LockMode::Exclusive, LockWait::Wait)? else {
            return Ok(false);
        };
        let mut row = Vec::with_capacity(values.len());
        for (c, v) in t.columns.iter().zip(values) {
            row.push(self.store_value(c, v, 1)?);
        }
        if let Some(ai) = t.auto_increment_column() {
            if let Some(n) = int_of(&row[ai]) {
                if n > 0 {
                    self.e.next_autoinc(t.id, false, Some(n))?;
                }
            }
        }
        let new_key = if t.has_hidden_pk() {
            key.to_vec()
        } else {
            Self::pk_of(t, &row, None)
        };
        if !t.foreign_keys.is_empty() {
            self.utc_only(|tx| tx.fk_check_parents(t, &row, Some(&old)))?;
        }
        let table = self.table_arc(t);
        // The parent side needs both images after the write is recorded.
        let referenced = self.fk_checks && self.e.catalog.read().is_referenced(&t.db, &t.name);
        let images = referenced.then(|| (old.clone(), row.clone()));
        if new_key != key {
            // Primary key change: a delete and an insert.
            self.record(
                (t.id, key.to_vec()),
                Write {
                    table: table.clone(),
                    row: None,
                    before: Some(old),
                },
            );
            self.insert_row(t, new_key, row)?;
        } else {
            self.check_fits(t, key, &row)?;
            self.check_unique(t, key, &row, Some(&old))?;
            self.record(
                (t.id, key.to_vec()),
                Write {
                    table,
                    row: Some(row),
                    before: Some(old),
                },
            );
        }
        if let Some((old, new)) = images {
            self.utc_only(|tx| tx.fk_parent_changed(t, &old, Some(&new)))?;
        }
        Ok(true)
    }

    /// DELETE one row addressed by its key. False if it does not exist.
    pub fn delete(&mut self, t: &TableDef, key: &[u8]) -> Result<bool> {
        self.write_to(t)?;
        let Some(old) = self.current(t, key, LockMode::Exclusive, LockWait::Wait)? else {
            return Ok(false);
        };
        let table = self.table_arc(t);
        let referenced = self.fk_checks && self.e.catalog.read().is_referenced(&t.db, &t.name);
        let image = referenced.then(|| old.clone());
        self.record(
            (t.id, key.to_vec()),
            Write {
                table,
                row: None,
                before: Some(old),
            },
        );
        if let Some(old) = image {
            self.utc_only(|tx| tx.fk_parent_changed(t, &old, None))?;
        }
        Ok(true)
    }

    /// Range scan in primary key or secondary index order.
    pub fn scan(&mut self, t: &TableDef, s: &Scan) -> Result<Vec<Row>> {
        Ok(self.scan_after_cols(t, s, None, None)?.rows)
    }

    /// A range scan that resumes strictly after `after`, a position key
    /// returned by an earlier call (in scan direction,
    /// [`ScanBatch::resume`]). The SQL layer reads a long range in bounded
    /// batches this way: `LIMIT 10` over a million rows reads tens of
    /// rows, and no batch holds more than its `limit`.
    ///
    /// It decodes only the `wanted` columns of rows read from the tree
    /// (None = all; the others are NULL). A secondary index scan decodes
    /// its index and primary key columns too (it checks each entry against
    /// its row). Locking reads and this transaction's own writes come back
    /// whole.
    pub fn scan_after_cols(
        &mut self,
        t: &TableDef,
        s: &Scan,
        after: Option<&[u8]>,
        wanted: Option<&[bool]>,
    ) -> Result<ScanBatch> {
        self.scan_after_cols_as(t, s, after, wanted, JsonForm::Printed)
    }

    /// [`Txn::scan_after_cols`] giving the JSON columns of rows read from
    /// the tree in the form `json` (`JsonForm::Stored`: as stored, for a
    /// reader that walks binary JSON itself). Locking reads and this
    /// transaction's own writes give printed text, as always.
    pub fn scan_after_cols_as(
        &mut self,
        t: &TableDef,
        s: &Scan,
        after: Option<&[u8]>,
        wanted: Option<&[bool]>,
        json: JsonForm,
    ) -> Result<ScanBatch> {
        let idx = match &s.index {
            None => None,
            Some(n) => Some(t.index(n).cloned().ok_or_else(|| {
                EngineError::new(
                    1176,
                    "42000",
                    format!("Key '{n}' doesn't exist in table '{}'", t.name),
                )
            })?),
        };
        self.read_from(t)?;
        let lock = s.lock.or(self.plain_read_lock());
        let snap = match lock {
            Some(_) => None,
            None => Some(self.snap_for(t)?),
        };
        if let (Some(i), Some(sn)) = (&idx, snap) {
            if i.created_csn > sn {
                return Err(definition_changed());
            }
        }
        // A secondary entry is checked against its row's index columns.
        let wanted: Option<Vec<bool>> = wanted.map(|w| {
            let mut w = w.to_vec();
            w.resize(t.columns.len(), true);
            if let Some(i) = &idx {
                for &c in &i.columns {
                    if let Some(x) = w.get_mut(c) {
                        *x = true;
                    }
                }
            }
            w
        });
        let wanted = wanted.as_deref();
        let key_types: Vec<ColumnType> = match &idx {
            None if t.has_hidden_pk() => Vec::new(),
            None => t.pk_types(),
            Some(i) => i.columns.iter().map(|&c| t.columns[c].ty.clone()).collect(),
        };
        // A bound value that does not fit the column (300 for a TINYINT,
        // 'abc' for an INT) cannot be encoded exactly: the bound is dropped
        // (None) and the scan is wider than asked. Callers that pass such
        // values (the SQL layer) filter rows by their predicate anyway.
        // TIMESTAMP key values are session time: converted to UTC
        // (tszone.rs). In a zone with transitions the bound is widened and
        // cut after that column (`widened`): it then includes its key.
        let zone = self.ts_zone.clone();
        // Both ends the same values: equalities only (a prefix part keys
        // an equal value's first N characters in any collation).
        let point =
            matches!((&s.lower, &s.upper), (Bound::Included(a), Bound::Included(b)) if a == b);
        let enc = |vals: &[Value], lower: bool| -> Option<(Vec<u8>, bool)> {
            let mut out = Vec::new();
            if key_types.is_empty() {
                if let [Value::UInt(id)] = vals {
                    out.extend_from_slice(&id.to_be_bytes());
                }
                return Some((out, false));
            }
            let n = vals.len().min(key_types.len());
            let mut cv = Vec::with_capacity(n);
            let mut widened = false;
            for (p, (v, ty)) in vals[..n].iter().zip(&key_types).enumerate() {
                if let (ColumnType::Timestamp { fsp }, Some(z), false) =
                    (ty, zone.as_deref(), v.is_null())
                {
                    let (c, exact) = crate::tszone::bound_to_utc(z, v, *fsp, lower)?;
                    cv.push(c);
                    if !exact {
                        widened = true;
                        break;
                    }
                    continue;
                }
                let c = types::coerce(v.clone(), ty, true, "key", 1).ok()?;
                if types::compare(&c, v) != Some(std::cmp::Ordering::Equal) && !v.is_null() {
                    return None; // rounded or clamped: not an exact bound
                }
                // A column prefix part keys the value's first N characters:
                // an equality keeps its place (every equal value has that
                // key), a range end is widened to include its key and cut
                // there (`c > 'abcdef'` on c(3) must still read 'abcz').
                // Under a multi-level collation a cut value does not order
                // as the whole one: the range end is dropped there.
                match idx.as_ref().and_then(|i| i.prefix_len(p)) {
                    Some(len) if p + 1 == n => {
                        widened = true;
                        let ordered = ty.collation().is_none_or(|c| c.single_level());
                        if ordered || point {
                            cv.push(types::key_prefix(&c, ty, len));
                        }
                        break;
                    }
                    Some(len) => cv.push(types::key_prefix(&c, ty, len)),
                    None => cv.push(c),
                }
            }
            types::try_encode_key(&cv, &key_types[..cv.len()], &mut out).ok()?;
            Some((out, widened))
        };
        // Byte bounds over the tree (see the prefix rules in types).
        let lower = match &s.lower {
            Bound::Unbounded => Bound::Unbounded,
            Bound::Included(v) => {
                enc(v, true).map_or(Bound::Unbounded, |(k, _)| Bound::Included(k))
            }
            Bound::Excluded(v) => match enc(v, true) {
                None => Bound::Unbounded,
                Some((k, true)) => Bound::Included(k),
                Some((k, false)) => match successor(&k) {
                    Some(x) => Bound::Included(x),
                    None => return Ok(ScanBatch::default()),
                },
            },
        };
        let upper = match &s.upper {
            Bound::Unbounded => Bound::Unbounded,
            Bound::Excluded(v) => match enc(v, false) {
                None => Bound::Unbounded,
                Some((k, false)) => Bound::Excluded(k),
                Some((k, true)) => successor(&k).map_or(Bound::Unbounded, Bound::Excluded),
            },
            Bound::Included(v) => match enc(v, false).and_then(|(k, _)| successor(&k)) {
                Some(x) => Bound::Excluded(x),
                None => Bound::Unbounded,
            },
        };
        // Resume: the position key narrows the side the scan moves from.
        let (tree_lower, tree_upper) = match after {
            None => (lower.clone(), upper.clone()),
            Some(a) if !s.reverse => {
                let tighter = match &lower {
                    Bound::Included(l) => a >= l.as_slice(),
                    Bound::Excluded(l) => a >= l.as_slice(),
                    Bound::Unbounded => true,
                };
                let lo = if tighter {
                    Bound::Excluded(a.to_vec())
                } else {
                    lower.clone()
                };
                (lo, upper.clone())
            }
            Some(a) => {
                let tighter = match &upper {
                    Bound::Included(u) => a <= u.as_slice(),
                    Bound::Excluded(u) => a <= u.as_slice(),
                    Bound::Unbounded => true,
                };
                let hi = if tighter {
                    Bound::Excluded(a.to_vec())
                } else {
                    upper.clone()
                };
                (lower.clone(), hi)
            }
        };
        let in_range = |k: &[u8]| -> bool {
            (match &lower {
                Bound::Unbounded => true,
                Bound::Included(l) => k >= l.as_slice(),
                Bound::Excluded(l) => k > l.as_slice(),
            }) && (match &upper {
                Bound::Unbounded => true,
                Bound::Included(u) => k <= u.as_slice(),
                Bound::Excluded(u) => k < u.as_slice(),
            })
        };
        let own: Vec<(Vec<u8>, Option<Vec<Value>>)> = self
            .writes
            .range((t.id, Vec::new())..)
            .take_while(|((tid, _), _)| *tid == t.id)
            .map(|((_, k), w)| (k.clone(), w.row.clone()))
            .collect();
        let want = s.limit.map(|l| l + own.len());
        // (sort key, row); None: the row's primary key is its sort key
        // (a clustered scan), kept once.
        let mut found: Vec<(Option<Vec<u8>>, Row)> = Vec::new();
        let tree_name = match &idx {
            None => t.clustered_tree(),
            Some(i) => t.index_tree(i.id),
        };
        let tree = self.e.tree(&tree_name)?;
        let cursor = tree.range(tree_lower, tree_upper, s.reverse);
        for e in cursor {
            if want.is_some_and(|w| found.len() >= w) {
                break;
            }
            self.tick()?;
            let (k, v) = e?;
            let (sort, pk) = match &idx {
                None => (None, k),
                Some(_) => (Some(k), v.clone()),
            };
            if !own.is_empty() && self.writes.contains_key(&(t.id, pk.clone())) {
                continue; // own write decides; merged below
            }
            let row = match (lock, snap) {
                (Some(mode), _) => {
                    // Only rows that exist now are locked and returned.
                    if idx.is_none() && !matches!(mvcc::split_value(&v), Some((_, false, _))) {
                        continue;
                    }
                    self.current(t, &pk, mode, s.wait)?
                }
                (None, Some(sn)) => match &idx {
                    None => self.resolve_cols(t, &pk, Some(&v), sn, wanted, json)?,
                    Some(_) => {
                        let cv = self.e.tree(&t.clustered_tree())?.get(&pk)?;
                        self.resolve_cols(t, &pk, cv.as_deref(), sn, wanted, json)?
                    }
                },
                (None, None) => None,
            };
            let Some(row) = row else { continue };
            if let (Some(i), Some(k)) = (&idx, &sort) {
                // Stale entries (old versions) point at rows whose key moved.
                let sk = sec_key(t, i, &row);
                if k.len() < pk.len() || k[..k.len() - pk.len()] != sk[..] {
                    continue;
                }
            }
            found.push((
                sort,
                Row {
                    key: pk,
                    values: row,
                },
            ));
        }
        let tree_rows = found.len();
        for (pk, row) in own {
            let Some(row) = row else { continue };
            let sort = match &idx {
                None => pk.clone(),
                Some(i) => {
                    let mut sk = sec_key(t, i, &row);
                    sk.extend_from_slice(&pk);
                    sk
                }
            };
            let check = match &idx {
                None => sort.clone(),
                Some(i) => sec_key(t, i, &row),
            };
            if !in_range(&check) {
                continue;
            }
            let past = |a: &[u8]| {
                if s.reverse {
                    sort.as_slice() < a
                } else {
                    sort.as_slice() > a
                }
            };
            if after.is_some_and(|a| !past(a)) {
                continue;
            }
            if let Some(mode) = lock {
                // Our own write: the X lock is ours already.
                self.lock(&row_lock_name(t.id, &pk), mode)?;
            }
            found.push((
                Some(sort),
                Row {
                    key: pk,
                    values: row,
                },
            ));
        }
        fn key_of(e: &(Option<Vec<u8>>, Row)) -> &[u8] {
            e.0.as_deref().unwrap_or(&e.1.key)
        }
        if found.len() > tree_rows {
            // Tree rows came in scan order; own writes were appended.
            if s.reverse {
                found.sort_by(|a, b| key_of(b).cmp(key_of(a)));
            } else {
                found.sort_by(|a, b| key_of(a).cmp(key_of(b)));
            }
        }
        if let Some(l) = s.limit {
            found.truncate(l);
        }
        let resume = found.last().map(|e| key_of(e).to_vec());
        let ts_cols = match self.ts_zone.as_deref() {
            Some(_) => crate::tszone::timestamp_columns(&t.columns),
            None => Vec::new(),
        };
        let mut rows: Vec<Row> = found.into_iter().map(|(_, r)| r).collect();
        if let (Some(z), false) = (self.ts_zone.as_deref(), ts_cols.is_empty()) {
            for r in &mut rows {
                crate::tszone::row_to_local(z, &ts_cols, &mut r.values);
            }
        }
        Ok(ScanBatch { rows, resume })
    }

    /// Commits. Returns the commit sequence number (0 for a transaction
    /// that wrote nothing). Error means the commit is not acknowledged.
    pub fn commit(self) -> Result<u64> {
        let (_, r) = self.commit_detailed();
        r
    }

    /// Like [`Txn::commit`], but also returns the transaction's place in
    /// the commit order when its record reached the redo log: the LSN of
    /// its commit record (binlog off, = the CSN) or of its prepare record
    /// (binlog on). A commit that failed after that is *in doubt*: not
    /// acknowledged, yet recovery may keep it. Crash tests use this.
    pub fn commit_detailed(self) -> (Option<u64>, Result<u64>) {
        self.commit_with(None)
    }

    /// Commits, calling `on_queued` as soon as this transaction's place in
    /// the commit order is fixed (binlog on: its ticket is in the flush
    /// queue; off: its commit record is in the redo log), before it is
    /// durable. A caller that starts the next commit only after that call
    /// gets commits in its own order while they share fsyncs: a replica's
    /// applier does. On a failure before that point `on_queued` is dropped
    /// uncalled.
    pub fn commit_ordered(self, on_queued: crate::commit::OnQueued) -> Result<u64> {
        self.commit_with(Some(on_queued)).1
    }

    fn commit_with(
        mut self,
        on_queued: Option<crate::commit::OnQueued>,
    ) -> (Option<u64>, Result<u64>) {
        // The last point where a KILL may still stop the commit: nothing
        // of it is in the redo log yet (see interrupt.rs).
        if !self.writes.is_empty() {
            if let Some(Err(e)) = self.interrupt.as_ref().map(|i| i.check()) {
                self.finish_rollback();
                return (None, Err(e));
            }
        }
        let interrupt = self.interrupt.clone();
        let _stage = interrupt.as_ref().map(|i| i.enter(Stage::HandlerCommit));
        self.done = true;
        let writes = std::mem::take(&mut self.writes);
        let result: (Option<u64>, Result<u64>) = if writes.is_empty() {
            (Some(0), Ok(0))
        } else if self.e.pipeline.is_some() {
            let list: Vec<TxWrite> = writes
                .into_iter()
                .map(|((_, pk), w)| TxWrite {
                    table: w.table,
                    pk,
                    after: w.row,
                    before: w.before,
                })
                .filter(|w| w.after.is_some() || w.before.is_some())
                .collect();
            if list.is_empty() {
                (Some(0), Ok(0))
            } else {
                // Durability is the pipeline's business (flush, sync stages).
                self.e.commit_2pc(self.id, list, on_queued)
            }
        } else {
            let mut list = Vec::with_capacity(writes.len());
            for ((tid, pk), w) in writes {
                let row_bytes = match &w.row {
                    Some(r) => {
                        let mut b = Vec::new();
                        types::encode_row(r, &w.table.types(), &mut b);
                        Some(b)
                    }
                    None => None,
                };
                list.push((
                    w.table.clone(),
                    RecWrite {
                        table: tid,
                        pk,
                        row: row_bytes,
                    },
                    w.row,
                ));
            }
            let committed = self.e.commit_writes(self.id, list);
            if let (Some(_), Ok(()), Some(f)) = (&committed.0, &committed.1, on_queued) {
                f();
            }
            match committed {
                (Some(csn), Ok(())) => match self.e.make_durable(csn) {
                    Ok(()) => (Some(csn), Ok(csn)),
                    Err(e) => (Some(csn), Err(e)),
                },
                (c, Err(e)) => (c, Err(e)),
                (None, Ok(())) => (None, Err(EngineError::internal("commit without a CSN"))),
            }
        };
        self.e.locks.release_all(self.id);
        self.release_tables();
        self.close_snapshot();
        let (key, csn) = match result {
            (k, Ok(c)) => (k, c),
            (k, Err(e)) => return (k, Err(e)),
        };
        if csn > 0 {
            self.e
                .counters
                .commits_with_writes
                .fetch_add(1, Ordering::Relaxed);
        }
        self.e.counters.com_commit.fetch_add(1, Ordering::Relaxed);
        (key, Ok(csn))
    }

    /// Rolls back: the write set is dropped, locks released.
    pub fn rollback(mut self) {
        self.finish_rollback();
    }

    fn finish_rollback(&mut self) {
        if self.done {
            return;
        }
        self.done = true;
        self.writes.clear();
        self.undo.clear();
        self.e.locks.release_all(self.id);
        self.release_tables();
        self.close_snapshot();
        self.e.counters.com_rollback.fetch_add(1, Ordering::Relaxed);
    }
}

impl Drop for Txn {
    fn drop(&mut self) {
        self.finish_rollback();
    }
}

fn int_of(v: &Value) -> Option<u64> {
    match v {
        Value::Int(i) if *i > 0 => Some(*i as u64),
        Value::UInt(u) => Some(*u),
        _ => None,
    }
}
