//! # SHOW BINLOG EVENTS
//!
//! ```text
//!  SHOW BINLOG EVENTS [IN 'file'] [FROM pos] [LIMIT [offset,] n]
//!  Log_name | Pos | Event_type | Server_id | End_log_pos | Info
//! ```
//!
//! Reads one file (the first of the index when none is named) through a
//! dump cursor (dump.rs), so only what replicas may read is shown and
//! the active file's preallocated tail never is. `FROM` must be where an
//! event starts; the Info column is MySQL's wording for each event type.

use std::time::Duration;

use super::dump::{fde_has_checksums, DumpStep};
use super::format::{parse_event, EventData, ParsedEvent, RowsKind};
use super::Binlog;
use crate::error::{EngineError, Result};

/// One row of SHOW BINLOG EVENTS.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShowEvent {
    pub log_name: String,
    pub pos: u64,
    pub event_type: &'static str,
    pub server_id: u32,
    pub end_log_pos: u64,
    pub info: String,
}

/// ER_ERROR_WHEN_EXECUTING_COMMAND (1220) for SHOW BINLOG EVENTS.
fn failed(why: &str) -> EngineError {
    EngineError::new(
        1220,
        "HY000",
        format!("Error when executing command SHOW BINLOG EVENTS: {why}"),
    )
}

impl Binlog {
    /// The events of `file` from offset `from` (0: the first), skipping
    /// `offset` of them and returning at most `limit`.
    pub fn show_events(
        &self,
        file: Option<&str>,
        from: u64,
        offset: u64,
        limit: Option<u64>,
    ) -> Result<Vec<ShowEvent>> {
        let Some(file) = self.indexed_file(file.unwrap_or(""))? else {
            return Err(failed("Could not find target log"));
        };
        let mut cur = self
            .dump_open(&file, from)
            .map_err(|_| failed("Wrong offset or I/O error"))?;
        let checksum = fde_has_checksums(&self.dump_format_description(&cur)?);
        let (name, seq) = (cur.name.clone(), cur.seq);
        let mut out = Vec::new();
        let mut skipped = 0;
        while limit.is_none_or(|n| (out.len() as u64) < n) {
            let at = cur.pos;
            let step = self
                .dump_next(&mut cur, Duration::ZERO)
                .map_err(|_| failed("Wrong offset or I/O error"))?;
            let ev = match step {
                DumpStep::Event(ev) if cur.seq == seq => ev,
                _ => break,
            };
            let parsed =
                parse_event(&ev, at, checksum).map_err(|_| failed("Wrong offset or I/O error"))?;
            if skipped < offset {
                skipped += 1;
                continue;
            }
            let (event_type, info) = describe(&parsed);
            out.push(ShowEvent {
                log_name: name.clone(),
                pos: at,
                event_type,
                server_id: parsed.server_id,
                end_log_pos: parsed.end,
                info,
            });
        }
        Ok(out)
    }
}

/// MySQL's Event_type name and Info text for an event.
fn describe(ev: &ParsedEvent) -> (&'static str, String) {
    match &ev.data {
        EventData::FormatDescription {
            binlog_version,
            server_version,
            ..
        } => (
            "Format_desc",
            format!("Server ver: {server_version}, Binlog ver: {binlog_version}"),
        ),
        EventData::PreviousGtids(set) => ("Previous_gtids", set.to_text()),
        EventData::Gtid {
            anonymous: true, ..
        } => (
            "Anonymous_Gtid",
            "SET @@SESSION.GTID_NEXT= 'ANONYMOUS'".to_string(),
        ),
        EventData::Gtid { sid, gno, .. } => (
            "Gtid",
            format!(
                "SET @@SESSION.GTID_NEXT= '{}:{gno}'",
                super::gtid::sid_text(sid)
            ),
        ),
        EventData::Query { db, sql, .. } => {
            let bare = sql.trim().eq_ignore_ascii_case("BEGIN") || db.is_empty();
            let info = if bare {
                sql.clone()
            } else {
                format!("use `{db}`; {sql}")
            };
            ("Query", info)
        }
        EventData::TableMap {
            table_id,
            db,
            table,
            ..
        } => ("Table_map", format!("table_id: {table_id} ({db}.{table})")),
        EventData::Rows(r) => {
            let name = match r.kind {
                RowsKind::Write => "Write_rows",
                RowsKind::Update => "Update_rows",
                RowsKind::Delete => "Delete_rows",
            };
            let end = if r.flags & super::format::STMT_END_F != 0 {
                " flags: STMT_END_F"
            } else {
                ""
            };
            (name, format!("table_id: {}{end}", r.table_id))
        }
        EventData::Xid(x) => ("Xid", format!("COMMIT /* xid={x} */")),
        EventData::Rotate {
            position,
            next_file,
        } => ("Rotate", format!("{next_file};pos={position}")),
        EventData::Stop => ("Stop", String::new()),
        EventData::Other => ("Unknown", String::new()),
    }
}
