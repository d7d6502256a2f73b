//! # The applier: the source's events become this server's transactions
//!
//! ```text
//!   event stream ─> FDE       checksums on/off for what follows
//!                   ROTATE    source file and position move
//!                   QUERY     BEGIN opens a transaction; anything else is
//!                             DDL, run through an SQL session
//!                   TABLE_MAP table id -> this server's table (types checked)
//!                   ROWS      each row found by its primary key (or by its
//!                             whole before image without one) and written
//!                   XID       the position row is written in the same
//!                             transaction, then it commits
//! ```
//!
//! **Crash safety.** The position a restart resumes from lives in
//! `mysql.quire_replica_position` and is written inside the transaction
//! whose rows it covers, so after any crash the rows and the position
//! agree: recovery keeps both or neither. Commits overlap in source order
//! (committer.rs), each writing its own position slot. There is no relay log: like
//! MySQL with `relay_log_recovery=ON`, a restart asks the source again
//! from the stored position. DDL is not transactional here: it runs,
//! then the position moves in a transaction of its own; a crash between
//! the two replays the DDL, which then stops the applier with the
//! DDL's error (MySQL 5.7's window; 8.0 closes it with atomic DDL).
//!
//! Every applied transaction commits through the ordinary commit path,
//! with this server's durability settings, so it is in this server's
//! binary log too (as `log_replica_updates=ON`).

use std::collections::HashMap;
use std::sync::Arc;

use quire_engine::binlog::format::RowsKind;
use quire_engine::binlog::format::{binlog_type, parse_event, EventData, RowsEventData};
use quire_engine::catalog::{ColumnDef, TableDef};
use quire_engine::error::EngineError;
use quire_engine::types::{ColumnType, Value};
use quire_engine::{Engine, Isolation, LockMode, Scan, Txn};
use quire_sql::Session;

use super::committer::{Committer, Done, SLOTS};

/// `mysql.quire_replica_position`: where the applier stands, per channel.
pub const POSITION_TABLE: &str = "quire_replica_position";

/// Binlog event type codes the applier reads before parsing.
const ROTATE_EVENT: u8 = 4;
const FORMAT_DESCRIPTION_EVENT: u8 = 15;
const HEARTBEAT_EVENT: u8 = 27;
const CRC_BYTES: usize = 4;
const HEADER_BYTES: usize = 19;

/// An applier error: MySQL's code and message, as SHOW REPLICA STATUS
/// shows them in Last_SQL_Errno / Last_SQL_Error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApplyError {
    pub code: u16,
    pub message: String,
}

impl From<EngineError> for ApplyError {
    fn from(e: EngineError) -> ApplyError {
        ApplyError {
            code: e.code,
            message: e.message,
        }
    }
}

fn apply_error(code: u16, message: impl Into<String>) -> ApplyError {
    ApplyError {
        code,
        message: message.into(),
    }
}

/// A source table as this server holds it.
struct Mapped {
    table: Arc<TableDef>,
    types: Vec<ColumnType>,
}

/// A position in the source's binary log.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SourcePos {
    pub file: String,
    pub pos: u64,
}

/// Applies one source's event stream.
pub struct Applier {
    engine: Engine,
    channel: String,
    position_table: Arc<TableDef>,
    maps: HashMap<u64, Mapped>,
    txn: Option<Txn>,
    committer: Committer,
    ddl: Option<Session>,
    checksum: bool,
    /// Where the stream is (after the last event read).
    read: SourcePos,
    /// Where the last committed group ended (what is stored).
    pub executed: SourcePos,
    /// Source transactions applied since start.
    pub applied_trx: u64,
    /// The source's timestamp of the last applied event (Seconds_Behind_Source).
    pub last_event_time: u32,
}

/// Bound on table maps of one transaction (a source cannot grow it
/// without end).
const MAX_MAPS: usize = 65_536;

impl Applier {
    /// `start`: the stored position and its sequence number.
    pub fn new(engine: Engine, channel: &str, start: Stored) -> Result<Applier, EngineError> {
        let position_table = ensure_position_table(&engine)?;
        let Stored { pos: start, seq } = start;
        Ok(Applier {
            committer: Committer::new(seq + 1),
            engine,
            channel: channel.to_string(),
            position_table,
            maps: HashMap::new(),
            txn: None,
            ddl: None,
            checksum: false,
            read: start.clone(),
            executed: start,
            applied_trx: 0,
            last_event_time: 0,
        })
    }

    /// Whether the stream's events carry CRC32 footers (what the source's
    /// binlog_checksum said at connect; the FORMAT_DESCRIPTION confirms).
    pub fn set_checksum(&mut self, on: bool) {
        self.checksum = on;
    }

    /// Where the stream stands (Read_Source_Log_Pos).
    pub fn read_pos(&self) -> &SourcePos {
        &self.read
    }

    /// Whether a transaction is open (a stop waits for its end).
    pub fn in_transaction(&self) -> bool {
        self.txn.is_some()
    }

    /// Drops an open transaction (the stream broke in its middle; the
    /// source sends it again from the stored position).
    pub fn abandon(&mut self) {
        if let Some(t) = self.txn.take() {
            t.rollback();
        }
        // What is in flight still commits (or fails); the position is
        // where the last one in order ended.
        let _ = self.take(Vec::new(), true);
        self.maps.clear();
        self.read = self.executed.clone();
    }

    /// Records finished commits in order (`drain`: after waiting for all
    /// in flight); the first failure is the applier's error.
    fn take(&mut self, mut done: Vec<Done>, drain: bool) -> Result<(), ApplyError> {
        if drain {
            done.extend(self.committer.drain());
        }
        let mut first_err = None;
        for d in done {
            match d.result {
                Ok(()) if first_err.is_none() => {
                    self.executed = d.pos;
                    self.applied_trx += 1;
                }
                Ok(()) => {}
                Err(e) => {
                    first_err.get_or_insert(e);
                }
            }
        }
        first_err.map_or(Ok(()), Err)
    }

    /// Waits for the commits in flight (the stream is idle): the
    /// executed position catches up with what was applied.
    pub fn settle(&mut self) -> Result<(), ApplyError> {
        self.take(Vec::new(), true)
    }

    /// Whether commits are still in flight.
    pub fn committing(&self) -> bool {
        self.committer.in_flight()
    }

    /// Applies one event (as read from the dump, without the OK byte).
    pub fn apply(&mut self, ev: &[u8]) -> Result<(), ApplyError> {
        if ev.len() < HEADER_BYTES {
            return Err(apply_error(1594, "Relay log read failure: event too short"));
        }
        let type_code = ev[4];
        let log_pos = u64::from(u32::from_le_bytes([ev[13], ev[14], ev[15], ev[16]]));
        match type_code {
            HEARTBEAT_EVENT => return Ok(()),
            ROTATE_EVENT => return self.rotate(ev),
            _ => {}
        }
        let size = ev.len() as u64;
        // log_pos 0: an artificial event (the FORMAT_DESCRIPTION a dump
        // sends when it starts past a file's beginning).
        let start = match log_pos {
            0 => 0,
            _ => log_pos.checked_sub(size).ok_or_else(|| {
                apply_error(
                    1594,
                    format!("event end {log_pos} is before its size {size}"),
                )
            })?,
        };
        let checksum = self.checksum && type_code != FORMAT_DESCRIPTION_EVENT;
        let parsed = parse_event(ev, start, checksum)
            .map_err(|why| apply_error(1594, format!("Relay log read failure: {why}")))?;
        if log_pos == 0 {
            // Artificial: it moves no position.
            if let EventData::FormatDescription { checksum, .. } = parsed.data {
                self.checksum = checksum;
            }
            return Ok(());
        }
        if parsed.timestamp != 0 {
            self.last_event_time = parsed.timestamp;
        }
        self.read.pos = log_pos;
        match parsed.data {
            EventData::FormatDescription { checksum, .. } => {
                self.checksum = checksum;
                Ok(())
            }
            EventData::Query { db, sql, .. } => self.query(&db, &sql, log_pos),
            EventData::TableMap {
                table_id,
                db,
                table,
                column_types,
                ..
            } => self.table_map(table_id, &db, &table, &column_types),
            EventData::Rows(rows) => self.rows(&rows),
            EventData::Xid(_) => self.commit(log_pos),
            // GTID, PREVIOUS_GTIDS, STOP, and event types the applier has
            // nothing to do for (MariaDB's annotate/checkpoint events).
            _ => Ok(()),
        }
    }

    /// ROTATE: the next file (artificial ones carry log_pos 0).
    fn rotate(&mut self, ev: &[u8]) -> Result<(), ApplyError> {
        let end = ev.len() - if self.checksum { CRC_BYTES } else { 0 };
        let body = ev
            .get(HEADER_BYTES..end)
            .filter(|b| b.len() >= 8)
            .ok_or_else(|| apply_error(1594, "ROTATE event too short"))?;
        let mut p = [0u8; 8];
        p.copy_from_slice(&body[..8]);
        let file = String::from_utf8_lossy(&body[8..]).into_owned();
        self.read = SourcePos {
            file,
            pos: u64::from_le_bytes(p),
        };
        Ok(())
    }

    fn query(&mut self, db: &str, sql: &str, end: u64) -> Result<(), ApplyError> {
        let trimmed = sql.trim();
        if trimmed.eq_ignore_ascii_case("BEGIN") {
            self.begin()?;
            return Ok(());
        }
        if trimmed.eq_ignore_ascii_case("COMMIT") {
            return self.commit(end);
        }
        if self.txn.is_some() {
            return Err(apply_error(
                1594,
                format!("statement inside a row-based transaction: {trimmed}"),
            ));
        }
        // DDL runs alone: everything before it committed first.
        self.take(Vec::new(), true)?;
        self.run_ddl(db, sql)?;
        self.maps.clear();
        let mut t = self.engine.begin(Isolation::ReadCommitted, false);
        self.read.pos = end;
        let seq = self.committer.next_seq();
        store_position(&mut t, &self.position_table, &self.channel, seq, &self.read)?;
        let done = self.committer.submit(t, self.read.clone());
        self.take(done, true)
    }

    fn run_ddl(&mut self, db: &str, sql: &str) -> Result<(), ApplyError> {
        let s = self
            .ddl
            .get_or_insert_with(|| Session::new(self.engine.clone(), "system user"));
        if !db.is_empty() {
            s.execute(&format!("USE `{}`", db.replace('`', "``")))
                .map_err(ApplyError::from)?;
        }
        s.execute(sql).map_err(|e| ApplyError {
            code: e.code,
            message: format!(
                "Error '{}' on query. Default database: '{db}'. Query: '{sql}'",
                e.message
            ),
        })?;
        Ok(())
    }

    fn begin(&mut self) -> Result<(), ApplyError> {
        if self.txn.is_some() {
            return Err(apply_error(1594, "BEGIN inside an open transaction"));
        }
        self.txn = Some(self.engine.begin(Isolation::ReadCommitted, false));
        Ok(())
    }

    fn commit(&mut self, end: u64) -> Result<(), ApplyError> {
        let Some(mut t) = self.txn.take() else {
            return Err(apply_error(1594, "COMMIT without a transaction"));
        };
        self.maps.clear();
        self.read.pos = end;
        let seq = self.committer.next_seq();
        store_position(&mut t, &self.position_table, &self.channel, seq, &self.read)?;
        let done = self.committer.submit(t, self.read.clone());
        self.take(done, false)
    }

    fn table_map(
        &mut self,
        table_id: u64,
        db: &str,
        table: &str,
        source_types: &[u8],
    ) -> Result<(), ApplyError> {
        if self.maps.len() >= MAX_MAPS {
            return Err(apply_error(1594, "too many tables in one transaction"));
        }
        let def = self.engine.table(db, table)?;
        let ours: Vec<ColumnType> = def.columns.iter().map(|c| c.ty.clone()).collect();
        check_types(&def, source_types)?;
        self.maps.insert(
            table_id,
            Mapped {
                table: def,
                types: ours,
            },
        );
        Ok(())
    }

    fn rows(&mut self, ev: &RowsEventData) -> Result<(), ApplyError> {
        let m = self.maps.get(&ev.table_id).ok_or_else(|| {
            apply_error(
                1594,
                format!("rows event for unmapped table id {}", ev.table_id),
            )
        })?;
        let table = m.table.clone();
        // A row is found through its primary key's lock, which waits for an
        // earlier transaction still committing. A scan (no primary key) or
        // a unique secondary index check could miss such a transaction's
        // rows: those wait for every commit in flight first.
        let needs_settled = table.has_hidden_pk() || table.indexes.iter().any(|i| i.unique);
        if needs_settled && self.committer.in_flight() {
            self.take(Vec::new(), true)?;
        }
        let m = &self.maps[&ev.table_id];
        let changes = ev.decode_partial(&m.types).map_err(|why| {
            apply_error(
                1594,
                format!("rows event of {} does not decode: {why}", table.qualified()),
            )
        })?;
        let txn = self
            .txn
            .as_mut()
            .ok_or_else(|| apply_error(1594, "rows event outside a transaction"))?;
        for (before, after) in changes {
            match ev.kind {
                RowsKind::Write => write_row(txn, &table, after)?,
                RowsKind::Update => update_row(txn, &table, before, after)?,
                RowsKind::Delete => delete_row(txn, &table, before)?,
            }
        }
        Ok(())
    }
}

/// 1677 unless every column's binlog type is the one this server's column
/// would have (no type conversion, as `replica_type_conversions=''`).
fn check_types(def: &TableDef, source_types: &[u8]) -> Result<(), ApplyError> {
    if source_types.len() != def.columns.len() {
        return Err(apply_error(
            1677,
            format!(
                "Table {} has {} columns on the source and {} here",
                def.qualified(),
                source_types.len(),
                def.columns.len()
            ),
        ));
    }
    for (i, (c, &src)) in def.columns.iter().zip(source_types).enumerate() {
        let (ours, _) = binlog_type(&c.ty);
        if ours != src {
            return Err(apply_error(
                1677,
                format!(
                    "Column {i} of table '{}.{}' cannot be converted from type {src} to type '{}'",
                    def.db,
                    def.name,
                    c.ty.name()
                ),
            ));
        }
    }
    Ok(())
}

type Image = Option<Vec<Option<Value>>>;

/// A row's key and values.
type KeyedRow = (Vec<u8>, Vec<Value>);

fn missing(table: &TableDef, what: &str) -> ApplyError {
    apply_error(
        1032,
        format!(
            "Could not execute {what}_rows event on table {}; Can't find record in '{}', Error_code: 1032",
            table.qualified(),
            table.name
        ),
    )
}

fn write_row(txn: &mut Txn, t: &TableDef, after: Image) -> Result<(), ApplyError> {
    let after = after.ok_or_else(|| apply_error(1594, "WRITE_ROWS without an image"))?;
    txn.insert(t, after)?;
    Ok(())
}

/// The key and current values of the row a before image names.
fn find_row(
    txn: &mut Txn,
    t: &TableDef,
    before: &[Option<Value>],
) -> Result<Option<KeyedRow>, ApplyError> {
    let pk_known = !t.has_hidden_pk() && t.primary.iter().all(|&i| before[i].is_some());
    if pk_known {
        let pk: Vec<Value> = t
            .primary
            .iter()
            .map(|&i| before[i].clone().unwrap_or(Value::Null))
            .collect();
        let key = Txn::encode_pk(t, &pk)?;
        // A locking read: the latest committed row, after any earlier
        // transaction still committing (committer.rs) is done with it.
        return Ok(txn.get_for(t, &pk, LockMode::Exclusive)?.map(|v| (key, v)));
    }
    // No usable key: the first row equal on every column the image has.
    let scan = Scan {
        lock: Some(LockMode::Exclusive),
        ..Scan::default()
    };
    for row in txn.scan(t, &scan)? {
        let same = before
            .iter()
            .zip(&row.values)
            .all(|(b, v)| b.as_ref().is_none_or(|b| b == v));
        if same {
            return Ok(Some((row.key, row.values)));
        }
    }
    Ok(None)
}

fn update_row(txn: &mut Txn, t: &TableDef, before: Image, after: Image) -> Result<(), ApplyError> {
    let (Some(before), Some(after)) = (before, after) else {
        return Err(apply_error(1594, "UPDATE_ROWS without both images"));
    };
    let (key, mut current) = find_row(txn, t, &before)?.ok_or_else(|| missing(t, "Update"))?;
    for (slot, v) in current.iter_mut().zip(after) {
        if let Some(v) = v {
            *slot = v;
        }
    }
    if !txn.update(t, &key, current)? {
        return Err(missing(t, "Update"));
    }
    Ok(())
}

fn delete_row(txn: &mut Txn, t: &TableDef, before: Image) -> Result<(), ApplyError> {
    let before = before.ok_or_else(|| apply_error(1594, "DELETE_ROWS without an image"))?;
    let (key, _) = find_row(txn, t, &before)?.ok_or_else(|| missing(t, "Delete"))?;
    if !txn.delete(t, &key)? {
        return Err(missing(t, "Delete"));
    }
    Ok(())
}

/// The columns of `mysql.quire_replica_position`: one row per slot
/// (committer.rs), the highest `Seq` is where a restart resumes.
pub fn position_columns() -> Vec<ColumnDef> {
    let uint = |n: &str| ColumnDef::new(n, ColumnType::BigInt { unsigned: true }, false);
    vec![
        ColumnDef::new("Channel_name", ColumnType::varchar(64), false),
        uint("Slot"),
        uint("Seq"),
        ColumnDef::new("Source_log_name", ColumnType::varchar(512), false),
        uint("Source_log_pos"),
    ]
}

/// Creates `mysql.quire_replica_position` if missing.
pub fn ensure_position_table(engine: &Engine) -> Result<Arc<TableDef>, EngineError> {
    engine.create_database("mysql", true)?;
    engine.create_table(
        "mysql",
        POSITION_TABLE,
        position_columns(),
        vec![0, 1],
        vec![],
        true,
    )
}

/// Writes `pos` as `channel`'s position number `seq` inside `t` (slot
/// `seq % SLOTS`).
pub fn store_position(
    t: &mut Txn,
    table: &TableDef,
    channel: &str,
    seq: u64,
    pos: &SourcePos,
) -> Result<(), EngineError> {
    let slot = Value::UInt(seq % SLOTS);
    let row = vec![
        Value::text(channel),
        slot.clone(),
        Value::UInt(seq),
        Value::text(&pos.file),
        Value::UInt(pos.pos),
    ];
    let pk = [Value::text(channel), slot];
    let key = Txn::encode_pk(table, &pk)?;
    if t.get_for(table, &pk, LockMode::Exclusive)?.is_some() {
        t.update(table, &key, row)?;
    } else {
        t.insert(table, row.into_iter().map(Some).collect())?;
    }
    Ok(())
}

/// A stored position and its sequence number.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Stored {
    pub pos: SourcePos,
    pub seq: u64,
}

fn slot_rows(t: &mut Txn, table: &TableDef, channel: &str) -> Result<Vec<KeyedRow>, EngineError> {
    let mut out = Vec::new();
    for slot in 0..SLOTS {
        let key = Txn::encode_pk(table, &[Value::text(channel), Value::UInt(slot)])?;
        if let Some(r) = t.get_by_key(table, &key)? {
            out.push((key, r));
        }
    }
    Ok(out)
}

/// The stored position of `channel` (the slot with the highest Seq).
pub fn load_position(engine: &Engine, channel: &str) -> Result<Option<Stored>, EngineError> {
    let Ok(table) = engine.table("mysql", POSITION_TABLE) else {
        return Ok(None);
    };
    let mut t = engine.begin(Isolation::ReadCommitted, true);
    let rows = slot_rows(&mut t, &table, channel)?;
    t.rollback();
    let num = |v: &Value| match v {
        Value::UInt(n) => *n,
        Value::Int(n) => (*n).max(0) as u64,
        _ => 0,
    };
    Ok(rows
        .into_iter()
        .map(|(_, r)| Stored {
            seq: num(&r[2]),
            pos: SourcePos {
                file: match &r[3] {
                    Value::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
                    _ => String::new(),
                },
                pos: num(&r[4]),
            },
        })
        .max_by_key(|s| s.seq))
}

/// Sets `channel`'s position (CHANGE REPLICATION SOURCE): one slot row
/// with the next sequence number, the others removed.
pub fn set_position(engine: &Engine, channel: &str, pos: &SourcePos) -> Result<(), EngineError> {
    let table = ensure_position_table(engine)?;
    let seq = load_position(engine, channel)?.map_or(0, |s| s.seq) + 1;
    let mut t = engine.begin(Isolation::ReadCommitted, false);
    for (key, _) in slot_rows(&mut t, &table, channel)? {
        t.delete(&table, &key)?;
    }
    store_position(&mut t, &table, channel, seq, pos)?;
    t.commit()?;
    Ok(())
}

/// Removes `channel`'s stored position (RESET REPLICA).
pub fn clear_position(engine: &Engine, channel: &str) -> Result<(), EngineError> {
    let Ok(table) = engine.table("mysql", POSITION_TABLE) else {
        return Ok(());
    };
    let mut t = engine.begin(Isolation::ReadCommitted, false);
    for (key, _) in slot_rows(&mut t, &table, channel)? {
        t.delete(&table, &key)?;
    }
    t.commit()?;
    Ok(())
}
