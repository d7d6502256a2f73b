//! Reading a binlog file back: [`parse_events`] for recovery and tests.

use super::values::{bitmap_len, decode_partial_image, decode_row_image, take_packed_int};
use super::{
    event_crc, event_type, RowsKind, CHECKSUM_ALG_CRC32, CHECKSUM_LEN, HEADER_LEN,
    LOG_EVENT_BINLOG_IN_USE_F, LOG_EVENT_IGNORABLE_F, MAGIC, POST_HEADER_LENGTHS,
};
use crate::types::{ColumnType, Value};

/// One intact event of a binlog file.
#[derive(Clone, Debug, PartialEq)]
pub struct ParsedEvent {
    pub type_code: u8,
    /// File offset of the event's first byte.
    pub pos: u64,
    /// File offset just past the event (its `log_pos`).
    pub end: u64,
    pub timestamp: u32,
    pub server_id: u32,
    pub flags: u16,
    pub data: EventData,
}

/// What [`parse_events`] decodes of an event body.
#[derive(Clone, Debug, PartialEq)]
pub enum EventData {
    FormatDescription {
        binlog_version: u16,
        server_version: String,
        created: u32,
        /// Whether the other events carry a CRC32 footer.
        checksum: bool,
    },
    Query {
        thread_id: u32,
        db: String,
        sql: String,
    },
    TableMap {
        table_id: u64,
        db: String,
        table: String,
        /// TABLE_MAP type codes, one per column.
        column_types: Vec<u8>,
        /// Concatenated per-column metadata.
        metadata: Vec<u8>,
        nullable: Vec<bool>,
    },
    Rows(RowsEventData),
    Xid(u64),
    Rotate {
        position: u64,
        next_file: String,
    },
    Stop,
    /// GTID_LOG_EVENT / ANONYMOUS_GTID_LOG_EVENT (MySQL 8 layout).
    Gtid {
        anonymous: bool,
        /// The server UUID and number (zeros for an anonymous one).
        sid: [u8; 16],
        gno: i64,
        /// False when the transaction may contain statements (DDL).
        rbr_only: bool,
        last_committed: i64,
        sequence_number: i64,
        commit_micros: u64,
        /// Bytes of the whole transaction, this event included (0 if absent).
        transaction_length: u64,
    },
    /// PREVIOUS_GTIDS_LOG_EVENT: the GTIDs of the files before.
    PreviousGtids(crate::binlog::gtid::GtidSet),
    /// Any other event type: checked, not decoded.
    Other,
}

/// A WRITE/UPDATE/DELETE_ROWS event (v1 or v2), rows still encoded.
#[derive(Clone, Debug, PartialEq)]
pub struct RowsEventData {
    pub kind: RowsKind,
    pub table_id: u64,
    pub flags: u16,
    /// Columns of the table (width of the bitmaps).
    pub columns: usize,
    /// Columns present in the (before) image.
    pub present: Vec<bool>,
    /// Columns present in the after image (UPDATE only; else empty).
    pub present_after: Vec<bool>,
    /// The row images, back to back.
    pub rows: Vec<u8>,
}

/// One decoded row change: `before` for UPDATE and DELETE, `after` for
/// WRITE and UPDATE.
#[derive(Clone, Debug, PartialEq)]
pub struct DecodedRow {
    pub before: Option<Vec<Value>>,
    pub after: Option<Vec<Value>>,
}

impl RowsEventData {
    /// Decodes the row images, given the column types of the table
    /// (full row images only: every column present).
    pub fn decode(&self, types: &[ColumnType]) -> Result<Vec<DecodedRow>, String> {
        if types.len() != self.columns {
            return Err(format!(
                "rows event has {} columns, {} types given",
                self.columns,
                types.len()
            ));
        }
        if !self.present.iter().all(|&p| p)
            || (self.kind == RowsKind::Update && !self.present_after.iter().all(|&p| p))
        {
            return Err("partial row images are not supported".to_string());
        }
        let mut out = Vec::new();
        let mut rest: &[u8] = &self.rows;
        while !rest.is_empty() {
            let (first, n) = decode_row_image(rest, types)?;
            rest = &rest[n..];
            out.push(match self.kind {
                RowsKind::Write => DecodedRow {
                    before: None,
                    after: Some(first),
                },
                RowsKind::Delete => DecodedRow {
                    before: Some(first),
                    after: None,
                },
                RowsKind::Update => {
                    let (second, n) = decode_row_image(rest, types)?;
                    rest = &rest[n..];
                    DecodedRow {
                        before: Some(first),
                        after: Some(second),
                    }
                }
            });
        }
        Ok(out)
    }
}

/// One decoded row change of a partial image (binlog_row_image MINIMAL or
/// NOBLOB): None for a column the image leaves out.
pub type PartialRow = Vec<Option<Value>>;

/// A row change of partial images: (before, after).
pub type PartialChange = (Option<PartialRow>, Option<PartialRow>);

impl RowsEventData {
    /// Decodes row images of any width: (before, after) per row, each
    /// with None for the columns its bitmap leaves out.
    pub fn decode_partial(&self, types: &[ColumnType]) -> Result<Vec<PartialChange>, String> {
        if types.len() != self.columns {
            return Err(format!(
                "rows event has {} columns, {} types given",
                self.columns,
                types.len()
            ));
        }
        let mut out = Vec::new();
        let mut rest: &[u8] = &self.rows;
        while !rest.is_empty() {
            let (first, n) = decode_partial_image(rest, types, &self.present)?;
            rest = &rest[n..];
            out.push(match self.kind {
                RowsKind::Write => (None, Some(first)),
                RowsKind::Delete => (Some(first), None),
                RowsKind::Update => {
                    let (second, n) = decode_partial_image(rest, types, &self.present_after)?;
                    rest = &rest[n..];
                    (Some(first), Some(second))
                }
            });
        }
        Ok(out)
    }
}

/// The result of scanning a binlog file.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ParsedLog {
    /// Every intact event, in file order (the FORMAT_DESCRIPTION_EVENT first).
    pub events: Vec<ParsedEvent>,
    /// Whether the FORMAT_DESCRIPTION_EVENT announced CRC32 checksums.
    pub checksum: bool,
    /// Whether the FORMAT_DESCRIPTION_EVENT still has
    /// LOG_EVENT_BINLOG_IN_USE_F (the writer did not close the file).
    pub in_use: bool,
    /// Offset just past the last intact event (0 without magic).
    pub valid_end: u64,
    /// Offset just past the last complete transaction: after the last
    /// XID_EVENT, or after the last event outside any transaction
    /// (FORMAT_DESCRIPTION, a DDL QUERY, ROTATE, STOP), whichever is later.
    /// Everything after it belongs to an unfinished transaction or is
    /// garbage, and can be cut. 0 when the magic is missing; 4 when no
    /// intact FORMAT_DESCRIPTION_EVENT follows it.
    pub complete_tx_end: u64,
    /// XIDs of the committed (XID_EVENT-terminated) transactions, in order.
    pub xids: Vec<u64>,
    /// Where each of those transactions starts (its first event), same order.
    pub xid_starts: Vec<u64>,
    /// Why the scan stopped before the end of the buffer, if it did
    /// (truncated event, bad checksum, malformed event).
    pub error: Option<String>,
}

/// Walks a binlog file from its magic: checks each event's size, `log_pos`
/// and (when the FORMAT_DESCRIPTION_EVENT says CRC32) checksum, decodes the
/// events recovery cares about, and stops at the first incomplete or
/// corrupt event. Never panics, whatever the bytes.
pub fn parse_events(buf: &[u8]) -> ParsedLog {
    let mut log = ParsedLog::default();
    if buf.len() < MAGIC.len() || buf[..MAGIC.len()] != MAGIC {
        log.error = Some("missing binlog magic".to_string());
        return log;
    }
    let mut pos = MAGIC.len();
    log.valid_end = pos as u64;
    log.complete_tx_end = pos as u64;
    let mut in_tx = false;
    let mut have_fde = false;
    while pos < buf.len() {
        match parse_one(buf, pos, have_fde, log.checksum) {
            Ok(ev)
                if ev.type_code == event_type::IGNORABLE
                    && ev.flags & LOG_EVENT_IGNORABLE_F != 0 =>
            {
                // The active file's preallocated tail (placeholders):
                // the end of the log.
                break;
            }
            Ok(ev) => {
                let end = ev.end;
                match &ev.data {
                    EventData::FormatDescription { checksum: c, .. } => {
                        if have_fde {
                            log.error = Some(format!("second FORMAT_DESCRIPTION_EVENT at {pos}"));
                            break;
                        }
                        have_fde = true;
                        log.checksum = *c;
                        log.in_use = ev.flags & LOG_EVENT_BINLOG_IN_USE_F != 0;
                        log.complete_tx_end = end;
                    }
                    EventData::Query { sql, .. } => {
                        let word = sql.trim().to_ascii_uppercase();
                        if word == "BEGIN" || word.starts_with("XA START") {
                            in_tx = true;
                        } else if in_tx {
                            if word == "COMMIT" || word == "ROLLBACK" {
                                in_tx = false;
                                log.complete_tx_end = end;
                            }
                        } else {
                            log.complete_tx_end = end;
                        }
                    }
                    EventData::Xid(xid) => {
                        in_tx = false;
                        log.xids.push(*xid);
                        // Transactions never interleave: this one began
                        // right after the previous complete unit.
                        log.xid_starts.push(log.complete_tx_end);
                        log.complete_tx_end = end;
                    }
                    EventData::Rotate { .. } | EventData::Stop | EventData::PreviousGtids(_)
                        if !in_tx =>
                    {
                        log.complete_tx_end = end;
                    }
                    _ => {}
                }
                log.valid_end = end;
                log.events.push(ev);
                pos = end as usize;
            }
            Err(e) => {
                log.error = Some(format!("at offset {pos}: {e}"));
                break;
            }
        }
    }
    log
}

fn le_u16(b: &[u8], at: usize) -> Result<u16, String> {
    let s = b.get(at..at + 2).ok_or("event is too short")?;
    Ok(u16::from_le_bytes([s[0], s[1]]))
}

fn le_u32(b: &[u8], at: usize) -> Result<u32, String> {
    let s = b.get(at..at + 4).ok_or("event is too short")?;
    Ok(u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
}

fn le_u48(b: &[u8], at: usize) -> Result<u64, String> {
    let s = b.get(at..at + 6).ok_or("event is too short")?;
    let mut raw = [0u8; 8];
    raw[..6].copy_from_slice(s);
    Ok(u64::from_le_bytes(raw))
}

fn le_u64(b: &[u8], at: usize) -> Result<u64, String> {
    let s = b.get(at..at + 8).ok_or("event is too short")?;
    let mut raw = [0u8; 8];
    raw.copy_from_slice(s);
    Ok(u64::from_le_bytes(raw))
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Checks and decodes the event at `pos`.
fn parse_one(
    buf: &[u8],
    pos: usize,
    have_fde: bool,
    checksum: bool,
) -> Result<ParsedEvent, String> {
    let rest = buf.get(pos..).ok_or("truncated event header")?;
    parse_at(rest, pos as u64, have_fde, checksum)
}

/// One event read on its own (SHOW BINLOG EVENTS): `event` holds it from
/// its first byte, which lies at file offset `pos`; `checksum` is what its
/// file's FORMAT_DESCRIPTION says. Checked as [`parse_events`] checks.
/// `pos` 0 with `log_pos` 0 in the header: an artificial event of a dump
/// stream (accepted; `end` is then its size).
pub fn parse_event(event: &[u8], pos: u64, checksum: bool) -> Result<ParsedEvent, String> {
    parse_at(event, pos, true, checksum)
}

/// Parses the event at the start of `buf`, which lies at file offset `pos`.
fn parse_at(buf: &[u8], pos: u64, have_fde: bool, checksum: bool) -> Result<ParsedEvent, String> {
    let header = buf.get(..HEADER_LEN).ok_or("truncated event header")?;
    let timestamp = le_u32(header, 0)?;
    let type_code = header[4];
    let server_id = le_u32(header, 5)?;
    let size = le_u32(header, 9)? as usize;
    let log_pos = le_u32(header, 13)?;
    let flags = le_u16(header, 17)?;
    let is_fde = type_code == event_type::FORMAT_DESCRIPTION;
    if !have_fde && !is_fde {
        return Err(format!(
            "first event has type {type_code}, not FORMAT_DESCRIPTION"
        ));
    }
    let has_crc = checksum || is_fde;
    let min = HEADER_LEN + if has_crc { CHECKSUM_LEN } else { 0 };
    if size < min {
        return Err(format!("event size {size} is too small"));
    }
    let end = pos.checked_add(size as u64).ok_or("event size overflows")?;
    let event = buf.get(..size).ok_or("truncated event")?;
    // An artificial event of a dump (log_pos 0, at no place in a file) is
    // parsed at position 0, where no real event can be (the magic is).
    let artificial = pos == 0 && log_pos == 0;
    if log_pos != end as u32 && !artificial {
        return Err(format!(
            "log_pos {log_pos} does not match the event end {end}"
        ));
    }
    let body_end = size - if has_crc { CHECKSUM_LEN } else { 0 };
    let body = &event[HEADER_LEN..body_end];
    let fde_checksum = if is_fde {
        // binlog_version, server_version[50], created, header_len,
        // post-header lengths..., checksum algorithm byte.
        let alg = *body.last().ok_or("FORMAT_DESCRIPTION_EVENT is empty")?;
        if body.len() < 2 + 50 + 4 + 1 + 1 {
            return Err("FORMAT_DESCRIPTION_EVENT is too short".to_string());
        }
        Some(alg == CHECKSUM_ALG_CRC32)
    } else {
        None
    };
    let verify = if is_fde {
        fde_checksum == Some(true)
    } else {
        has_crc
    };
    if verify {
        let stored = le_u32(event, body_end)?;
        let computed = event_crc(&event[..body_end]);
        if stored != computed {
            return Err(format!(
                "checksum mismatch (stored {stored:#010x}, computed {computed:#010x})"
            ));
        }
    }
    let data = decode_body(type_code, body, fde_checksum)?;
    Ok(ParsedEvent {
        type_code,
        pos,
        end,
        timestamp,
        server_id,
        flags,
        data,
    })
}

fn decode_body(
    type_code: u8,
    body: &[u8],
    fde_checksum: Option<bool>,
) -> Result<EventData, String> {
    Ok(match type_code {
        event_type::FORMAT_DESCRIPTION => {
            let binlog_version = le_u16(body, 0)?;
            let version_raw = body
                .get(2..52)
                .ok_or("FORMAT_DESCRIPTION_EVENT is too short")?;
            let nul = version_raw.iter().position(|&b| b == 0).unwrap_or(50);
            let created = le_u32(body, 52)?;
            let header_len = *body
                .get(56)
                .ok_or("FORMAT_DESCRIPTION_EVENT is too short")?;
            if binlog_version != 4 || usize::from(header_len) != HEADER_LEN {
                return Err(format!(
                    "unsupported binlog version {binlog_version} / header length {header_len}"
                ));
            }
            let post = body
                .get(57..body.len().saturating_sub(1))
                .ok_or("FORMAT_DESCRIPTION_EVENT is too short")?;
            for (i, (&got, &want)) in post.iter().zip(POST_HEADER_LENGTHS.iter()).enumerate() {
                let t = i as u8 + 1;
                let matters = matches!(
                    t,
                    event_type::QUERY
                        | event_type::ROTATE
                        | event_type::XID
                        | event_type::TABLE_MAP
                        | event_type::WRITE_ROWS_V1..=event_type::DELETE_ROWS_V1
                        | event_type::WRITE_ROWS..=event_type::DELETE_ROWS
                );
                if matters && got != want {
                    return Err(format!(
                        "post-header length {got} for event type {t} (expected {want})"
                    ));
                }
            }
            EventData::FormatDescription {
                binlog_version,
                server_version: text(&version_raw[..nul]),
                created,
                checksum: fde_checksum.unwrap_or(false),
            }
        }
        event_type::QUERY => {
            let thread_id = le_u32(body, 0)?;
            let db_len = usize::from(*body.get(8).ok_or("QUERY_EVENT is too short")?);
            let status_len = usize::from(le_u16(body, 11)?);
            let db_at = 13 + status_len;
            let db = body
                .get(db_at..db_at + db_len)
                .ok_or("QUERY_EVENT database is truncated")?;
            if body.get(db_at + db_len) != Some(&0) {
                return Err("QUERY_EVENT database is not NUL-terminated".to_string());
            }
            EventData::Query {
                thread_id,
                db: text(db),
                sql: text(&body[db_at + db_len + 1..]),
            }
        }
        event_type::TABLE_MAP => {
            let table_id = le_u48(body, 0)?;
            let mut rest: &[u8] = body.get(8..).ok_or("TABLE_MAP_EVENT is too short")?;
            let name = |rest: &mut &[u8]| -> Result<String, String> {
                let n = usize::from(*rest.first().ok_or("TABLE_MAP_EVENT is truncated")?);
                let s = rest
                    .get(1..1 + n)
                    .ok_or("TABLE_MAP_EVENT name is truncated")?;
                if rest.get(1 + n) != Some(&0) {
                    return Err("TABLE_MAP_EVENT name is not NUL-terminated".to_string());
                }
                let out = text(s);
                *rest = &rest[n + 2..];
                Ok(out)
            };
            let db = name(&mut rest)?;
            let table = name(&mut rest)?;
            let columns = usize::try_from(take_packed_int(&mut rest)?)
                .map_err(|_| "column count overflows".to_string())?;
            let column_types = rest
                .get(..columns)
                .ok_or("TABLE_MAP_EVENT types are truncated")?
                .to_vec();
            rest = &rest[columns..];
            let meta_len = usize::try_from(take_packed_int(&mut rest)?)
                .map_err(|_| "metadata length overflows".to_string())?;
            let metadata = rest
                .get(..meta_len)
                .ok_or("TABLE_MAP_EVENT metadata is truncated")?
                .to_vec();
            rest = &rest[meta_len..];
            let nulls = rest
                .get(..bitmap_len(columns))
                .ok_or("TABLE_MAP_EVENT NULL bitmap is truncated")?;
            let nullable = (0..columns)
                .map(|i| nulls[i / 8] & (1 << (i % 8)) != 0)
                .collect();
            EventData::TableMap {
                table_id,
                db,
                table,
                column_types,
                metadata,
                nullable,
            }
        }
        event_type::WRITE_ROWS_V1..=event_type::DELETE_ROWS_V1
        | event_type::WRITE_ROWS..=event_type::DELETE_ROWS => {
            let v2 = type_code >= event_type::WRITE_ROWS;
            let kind = match type_code {
                event_type::WRITE_ROWS_V1 | event_type::WRITE_ROWS => RowsKind::Write,
                event_type::UPDATE_ROWS_V1 | event_type::UPDATE_ROWS => RowsKind::Update,
                _ => RowsKind::Delete,
            };
            let table_id = le_u48(body, 0)?;
            let flags = le_u16(body, 6)?;
            let mut at = 8;
            if v2 {
                let extra = usize::from(le_u16(body, 8)?);
                if extra < 2 {
                    return Err("rows event extra data length below 2".to_string());
                }
                at += extra;
            }
            let mut rest: &[u8] = body.get(at..).ok_or("rows event is truncated")?;
            let columns = usize::try_from(take_packed_int(&mut rest)?)
                .map_err(|_| "column count overflows".to_string())?;
            let bitmap = |rest: &mut &[u8]| -> Result<Vec<bool>, String> {
                let b = rest
                    .get(..bitmap_len(columns))
                    .ok_or("rows event bitmap is truncated")?;
                let v = (0..columns)
                    .map(|i| b[i / 8] & (1 << (i % 8)) != 0)
                    .collect();
                *rest = &rest[bitmap_len(columns)..];
                Ok(v)
            };
            let present = bitmap(&mut rest)?;
            let present_after = if kind == RowsKind::Update {
                bitmap(&mut rest)?
            } else {
                Vec::new()
            };
            EventData::Rows(RowsEventData {
                kind,
                table_id,
                flags,
                columns,
                present,
                present_after,
                rows: rest.to_vec(),
            })
        }
        event_type::XID => EventData::Xid(le_u64(body, 0)?),
        event_type::ROTATE => EventData::Rotate {
            position: le_u64(body, 0)?,
            next_file: text(&body[8..]),
        },
        event_type::STOP => EventData::Stop,
        event_type::PREVIOUS_GTIDS => {
            EventData::PreviousGtids(crate::binlog::gtid::GtidSet::decode(body)?)
        }
        event_type::GTID | event_type::ANONYMOUS_GTID => {
            let flags = *body.first().ok_or("GTID event is empty")?;
            let typecode = *body.get(25).ok_or("GTID event is too short")?;
            let (last_committed, sequence_number) = if typecode == 2 {
                (le_u64(body, 26)? as i64, le_u64(body, 34)? as i64)
            } else {
                (0, 0)
            };
            let mut commit_micros = 0;
            let mut transaction_length = 0;
            if let Some(ts) = body.get(42..49) {
                let mut raw = [0u8; 8];
                raw[..7].copy_from_slice(ts);
                let v = u64::from_le_bytes(raw);
                commit_micros = v & ((1 << 55) - 1);
                let mut rest = &body[if v & (1 << 55) != 0 { 56 } else { 49 }.min(body.len())..];
                if !rest.is_empty() {
                    transaction_length = take_packed_int(&mut rest)?;
                }
            }
            let sid: [u8; 16] = body
                .get(1..17)
                .ok_or("GTID event is too short")?
                .try_into()
                .map_err(|_| "GTID event is too short")?;
            EventData::Gtid {
                anonymous: type_code == event_type::ANONYMOUS_GTID,
                sid,
                gno: le_u64(body, 17)? as i64,
                rbr_only: flags & 1 == 0,
                last_committed,
                sequence_number,
                commit_micros,
                transaction_length,
            }
        }
        _ => EventData::Other,
    })
}
