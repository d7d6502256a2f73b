//! # Binary log format (MySQL binlog v4)
//!
//! Pure encoding and decoding of MySQL 8.0's binary log, so that files quire
//! writes can be read by `mysqlbinlog` / `mariadb-binlog`, MySQL-protocol
//! replicas and CDC tools. Nothing here touches files or threads: the binlog
//! manager (`binlog/mod.rs`) decides where events go and writes the bytes
//! [`EventWriter`] returns; [`parse_events`] reads a file back for recovery.
//!
//! ## File
//!
//! ```text
//! offset 0   FE 62 69 6E                    magic "\xfebin"
//! offset 4   FORMAT_DESCRIPTION_EVENT       122 bytes: end_log_pos 126
//!            PREVIOUS_GTIDS_LOG_EVENT       (empty set; MySQL 8 always has one)
//!            ANONYMOUS_GTID + QUERY "CREATE TABLE ..."          a DDL
//!            ANONYMOUS_GTID + QUERY "BEGIN"                      a transaction
//!              TABLE_MAP  WRITE_ROWS ... WRITE_ROWS[STMT_END_F]    statement 1
//!              TABLE_MAP  UPDATE_ROWS[STMT_END_F]                  statement 2
//!              XID_EVENT                                           commit
//!            ...
//!            ROTATE_EVENT "binlog.000002" (file full)  or  STOP_EVENT (shutdown)
//! ```
//!
//! ## Common header (19 bytes) and footer
//!
//! All integers are little-endian unless noted.
//!
//! ```text
//! +0  timestamp   u32   seconds since the epoch (the statement's start)
//! +4  type_code   u8    event type (module event_type)
//! +5  server_id   u32   server that originated the event
//! +9  event_size  u32   header + body + footer
//! +13 log_pos     u32   file offset just past this event (its end)
//! +17 flags       u16   LOG_EVENT_BINLOG_IN_USE_F (FDE only), LOG_EVENT_IGNORABLE_F
//! +19 body ...
//!     crc32       u32   only with binlog_checksum=CRC32: zlib crc32 (not CRC32C)
//!                       of header + body
//! ```
//!
//! The FORMAT_DESCRIPTION_EVENT always carries the 4-byte CRC (even with
//! checksums off), and its CRC is computed with LOG_EVENT_BINLOG_IN_USE_F
//! cleared: a writer sets that flag (at file offset [`FDE_FLAGS_OFFSET`])
//! while the file is open and clears it on close without touching the CRC.
//! Readers print "Warning: this binlog is either in use or was not closed
//! properly" while it is set, so a cleanly closed file must not have it.
//!
//! ## Event bodies
//!
//! ```text
//! FORMAT_DESCRIPTION_EVENT (15)
//!   binlog_version u16 = 4 | server_version [50] "8.0.36-quire" NUL-padded
//!   created u32 (startup time, or 0) | header_length u8 = 19
//!   post_header_lengths [41]  (MySQL 8.0's table, POST_HEADER_LENGTHS)
//!   checksum_alg u8 (1 = CRC32, 0 = off) | crc32 u32
//!
//! QUERY_EVENT (2)   post-header 13
//!   thread_id u32 | exec_time u32 | db_len u8 | error_code u16 | status_len u16
//!   status variables (status_len bytes) | db, NUL | SQL text (to the end)
//!   status: Q_FLAGS2 (0) u32 = 0, Q_SQL_MODE (1) u64 = 1168113696,
//!           Q_CATALOG_NZ (6) len "std", Q_CHARSET (4) 3 × u16 = 46,
//!           Q_TIME_ZONE (5) len "+00:00"
//!
//! TABLE_MAP_EVENT (19)   post-header 8
//!   table_id u48 | flags u16 = 1 (TM_BIT_LEN_EXACT_F)
//!   db_len u8, db, NUL | table_len u8, table, NUL
//!   column_count packed | column types [n] | metadata_len packed, metadata
//!   nullable bitmap [(n+7)/8]
//!   optional metadata TLVs: SIGNEDNESS (1): bit per numeric column, MSB
//!   first, 1 = unsigned; DEFAULT_CHARSET (2): 46, then (index among
//!   string columns, 63) for binary ones
//!
//! WRITE_ROWS (30) / UPDATE_ROWS (31) / DELETE_ROWS (32), v2   post-header 10
//!   table_id u48 | flags u16 (STMT_END_F = 1 on a statement's last event)
//!   extra_len u16 = 2 (counts itself; no extra data)
//!   column_count packed | columns present [(n+7)/8] (all set: row image FULL)
//!   UPDATE only: after-image columns present [(n+7)/8]
//!   rows: WRITE one after image, DELETE one before image, UPDATE before then
//!   after; each image = NULL bitmap [(n+7)/8] (bit i%8 of byte i/8, set =
//!   NULL) then the non-NULL values in column order
//!
//! XID_EVENT (16)            xid u64
//! ROTATE_EVENT (4)          position u64 = 4 | next file name (no NUL)
//! STOP_EVENT (3)            (empty)
//! PREVIOUS_GTIDS (35)       n_sids u64 = 0; header flag LOG_EVENT_IGNORABLE_F
//! ANONYMOUS_GTID (34)       post-header 42, MySQL 8.0.36 layout:
//!   flags u8 (1 = may have statements: DDL) | SID [16] = 0 | GNO i64 = 0
//!   clock type u8 = 2 | last_committed i64 | sequence_number i64
//!   immediate_commit_timestamp 7 bytes (µs) | transaction_length packed
//!   (this event included) | immediate_server_version u32 = 80036
//! ```
//!
//! "packed" is MySQL's length-encoded integer: one byte below 251, else
//! 0xFC + u16, 0xFD + u24, 0xFE + u64.
//!
//! ## Column types and values
//!
//! | quire type | TABLE_MAP code | metadata | value in a row image |
//! |---|---|---|---|
//! | TINYINT / SMALLINT / MEDIUMINT / INT / BIGINT | 1 / 2 / 9 / 3 / 8 | — | 1 / 2 / 3 / 4 / 8 bytes LE, two's complement (unsigned: same bits) |
//! | DECIMAL(M,D) | 246 NEWDECIMAL | M, D | decimal2bin: groups of 9 digits in 4 BE bytes, leading/trailing partial groups in 1–4 bytes, negatives inverted, top bit flipped |
//! | FLOAT / DOUBLE | 4 / 5 | 4 / 8 | IEEE 754 LE |
//! | CHAR(n) / BINARY(n) | 254 STRING | `0xFE ^ ((b & 0x300) >> 4)`, `b & 0xFF` with b = max bytes | length (1 byte if b < 256, else 2) + bytes |
//! | VARCHAR(n) / VARBINARY(n) | 15 VARCHAR | max bytes u16 | length (1 byte if max < 256, else 2) + bytes |
//! | TINY/…/LONG TEXT and BLOB | 252 BLOB | length bytes 1 / 2 / 3 / 4 | length (that many bytes) + bytes |
//! | DATE | 10 DATE | — | 3 bytes LE: `day | month << 5 | year << 9` |
//! | DATETIME(fsp) | 18 DATETIME2 | fsp | 5 bytes BE: `((year×13+month) << 22 | day << 17 | hour << 12 | min << 6 | sec) + 2^39`, then fraction |
//! | TIMESTAMP(fsp) | 17 TIMESTAMP2 | fsp | u32 BE seconds since the epoch (the stored literal read as UTC), then fraction |
//!
//! Max bytes of CHAR/VARCHAR are characters × 4 (utf8mb4), so CHAR(100) is
//! a 400-byte STRING. The fraction of DATETIME2/TIMESTAMP2 is 0 bytes for
//! fsp 0, 1 byte (1/100 s) for fsp 1–2, 2 bytes BE (1/10 000 s) for 3–4 and 3
//! bytes BE (µs) for 5–6. DECIMAL supports the full precision 65 (digits are
//! taken from the exact decimal text, not an i128).
//!
//! ## What mariadb-binlog needs (checked by the tests against MariaDB 10.11)
//!
//! * The FORMAT_DESCRIPTION_EVENT must declare a server version ≥ 5.6.1, or
//!   the reader does not look for the checksum-algorithm byte, and the
//!   post-header lengths of every type it decodes: 13 for QUERY, 8 for
//!   TABLE_MAP, 10 for the v2 rows events (a rows event's post-header length
//!   is how the reader tells v1 from v2), 8 for ROTATE. We send MySQL 8.0's
//!   whole 41-entry table, so the FDE is byte-for-byte shaped like MySQL's.
//! * Rows events v2 (30–32) decode fine, so we write them like MySQL 8.
//!   (The reader still accepts v1, 23–25.)
//! * MySQL's GTID events (ANONYMOUS_GTID 34, PREVIOUS_GTIDS 35) are accepted
//!   and printed as `# Ignorable event type 34 (MySQL Anonymous_Gtid)`, with
//!   no warning and exit status 0, so we write them like MySQL 8 with
//!   `gtid_mode=OFF`; MySQL replicas use their logical clock for parallel
//!   apply.
//! * QUERY status: MySQL 8's default collation id 255 (utf8mb4_0900_ai_ci) is
//!   unknown to MariaDB: it prints "Character set '#255' is not a compiled
//!   character set" on stderr and drops the `SET`. 46 (utf8mb4_bin, the
//!   binary collation quire implements) prints as `character_set_client=utf8mb4`.
//!   Q_FLAGS2 and Q_SQL_MODE make it print the session `SET`s a replay needs.
//! * With `--verbose` it prints every value: integers as signed with the
//!   unsigned reading in parentheses when negative (`-1 (255)`), DECIMAL
//!   exactly, DATE as `'2024:02:29'` (sic, MySQL's mysqlbinlog does the same
//!   for type 10), DATETIME2 as `'2024-01-15 10:20:30.123456'`, TIMESTAMP2 as
//!   epoch seconds `1705314030.500000`, strings quoted with control bytes as
//!   `\x0a`.
//! * `--verify-binlog-checksum` checks every CRC, the FDE's with the in-use
//!   flag masked.
//!
//! ## Reading back
//!
//! [`parse_events`] walks a file from the magic and stops at the first event
//! that is truncated, has a bad size, `log_pos` or CRC, or does not decode.
//! It returns the intact events, the XIDs of committed transactions and
//! [`ParsedLog::complete_tx_end`], the offset after the last complete unit
//! (XID_EVENT, DDL QUERY, FDE/PREVIOUS_GTIDS, ROTATE or STOP outside a
//! transaction): recovery truncates the file there.
//!
//! ## Using the writer
//!
//! ```text
//! let w = EventWriter::new(server_id, checksum);
//! file = MAGIC + w.format_description(4, now, startup_time_or_0)
//!             + w.previous_gtids(126, now)
//! per DDL:          w.ddl(pos, now, thread, db, sql, Some(&gtid))
//! per transaction:  w.transaction(pos, now, thread, db, Some(&gtid), &statements, xid,
//!                                 DEFAULT_ROWS_EVENT_MAX_SIZE)
//! full file:        w.rotate(pos, now, "binlog.000002");   shutdown: w.stop(pos, now)
//! ```
//!
//! A transaction may be encoded at position 0 before its place in the file is
//! known (e.g. by its own thread during prepare) and moved with
//! [`relocate_events`], which rewrites `log_pos` and the CRCs.

mod kinds;
mod reader;
mod values;

#[cfg(test)]
mod tests;

pub use reader::{
    parse_event, parse_events, DecodedRow, EventData, ParsedEvent, ParsedLog, RowsEventData,
};
pub use values::{
    binlog_type, bitmap_len, decimal_bin_size, decode_decimal, decode_row_image, decode_value,
    encode_decimal, encode_partial_image, encode_row_image, encode_value, mysql_type,
    put_packed_int, take_packed_int, timestamp_seconds,
};

use crate::types::{ColumnType, Value};

/// The four bytes every binlog file starts with.
pub const MAGIC: [u8; 4] = [0xFE, b'b', b'i', b'n'];
/// Length of the common event header.
pub const HEADER_LEN: usize = 19;
/// Length of the CRC32 footer when `binlog_checksum=CRC32`.
pub const CHECKSUM_LEN: usize = 4;
/// Binlog format version written in the FORMAT_DESCRIPTION_EVENT.
pub const BINLOG_VERSION: u16 = 4;
/// Server version in the FORMAT_DESCRIPTION_EVENT. Readers parse the leading
/// `X.Y.Z` to decide which features the file has (checksums need ≥ 5.6.1).
pub const SERVER_VERSION: &str = "8.0.36-quire";
/// MySQL's default `binlog_row_event_max_size`: rows events are cut so one
/// event stays below this size unless a single row is bigger.
pub const DEFAULT_ROWS_EVENT_MAX_SIZE: usize = 8192;
/// Collation of text columns and of the session in QUERY_EVENTs
/// (`utf8mb4_bin`; MySQL 8's default 255 = `utf8mb4_0900_ai_ci` is unknown to
/// MariaDB's tools).
pub const COLLATION_UTF8MB4_BIN: u16 = 46;
/// Collation id of the `binary` character set (BINARY, VARBINARY, BLOB).
pub const COLLATION_BINARY: u16 = 63;
/// MySQL 8.0's default `sql_mode` as the bit set QUERY_EVENTs carry:
/// ONLY_FULL_GROUP_BY, STRICT_TRANS_TABLES, NO_ZERO_IN_DATE, NO_ZERO_DATE,
/// ERROR_FOR_DIVISION_BY_ZERO, NO_ENGINE_SUBSTITUTION.
pub const DEFAULT_SQL_MODE: u64 = 0x45A0_0020;

/// Event type codes (`Log_event_type`).
pub mod event_type {
    pub const QUERY: u8 = 2;
    pub const STOP: u8 = 3;
    pub const ROTATE: u8 = 4;
    pub const FORMAT_DESCRIPTION: u8 = 15;
    pub const XID: u8 = 16;
    pub const TABLE_MAP: u8 = 19;
    pub const IGNORABLE: u8 = 28;
    pub const WRITE_ROWS_V1: u8 = 23;
    pub const UPDATE_ROWS_V1: u8 = 24;
    pub const DELETE_ROWS_V1: u8 = 25;
    pub const WRITE_ROWS: u8 = 30;
    pub const UPDATE_ROWS: u8 = 31;
    pub const DELETE_ROWS: u8 = 32;
    pub const GTID: u8 = 33;
    pub const ANONYMOUS_GTID: u8 = 34;
    pub const PREVIOUS_GTIDS: u8 = 35;
}

/// Header flag of the FORMAT_DESCRIPTION_EVENT while the file is open for
/// writing (`LOG_EVENT_BINLOG_IN_USE_F`); readers warn about files that
/// still carry it. Checksums are computed with this bit cleared, so the
/// flag can be set and cleared in place at [`FDE_FLAGS_OFFSET`].
pub const LOG_EVENT_BINLOG_IN_USE_F: u16 = 0x0001;
/// File offset of the FORMAT_DESCRIPTION_EVENT's 2-byte flags field.
pub const FDE_FLAGS_OFFSET: u64 = MAGIC.len() as u64 + 17;
/// Rows event flag on the last rows event of a statement (`STMT_END_F`).
pub const STMT_END_F: u16 = 0x0001;
/// Header flag telling readers that do not know the event type to skip it
/// (`LOG_EVENT_IGNORABLE_F`).
pub const LOG_EVENT_IGNORABLE_F: u16 = 0x0080;
/// TABLE_MAP flag MySQL always sets (`TM_BIT_LEN_EXACT_F`).
const TM_BIT_LEN_EXACT_F: u16 = 0x0001;

/// Post-header length of every event type 1..=41, as MySQL 8.0 declares
/// them in its FORMAT_DESCRIPTION_EVENT (index = type code - 1). Readers
/// find the start of each event's body through this table.
pub const POST_HEADER_LENGTHS: [u8; 41] = [
    0,  // 1 START_EVENT_V3
    13, // 2 QUERY_EVENT
    0,  // 3 STOP_EVENT
    8,  // 4 ROTATE_EVENT
    0,  // 5 INTVAR_EVENT
    0,  // 6 (obsolete LOAD_EVENT)
    0,  // 7 (obsolete SLAVE_EVENT)
    0,  // 8 (obsolete CREATE_FILE_EVENT)
    4,  // 9 APPEND_BLOCK_EVENT
    0,  // 10 (obsolete EXEC_LOAD_EVENT)
    4,  // 11 DELETE_FILE_EVENT
    0,  // 12 (obsolete NEW_LOAD_EVENT)
    0,  // 13 RAND_EVENT
    0,  // 14 USER_VAR_EVENT
    98, // 15 FORMAT_DESCRIPTION_EVENT (2 + 50 + 4 + 1 + 41)
    0,  // 16 XID_EVENT
    4,  // 17 BEGIN_LOAD_QUERY_EVENT
    26, // 18 EXECUTE_LOAD_QUERY_EVENT
    8,  // 19 TABLE_MAP_EVENT
    0,  // 20 (obsolete PRE_GA_WRITE_ROWS_EVENT)
    0,  // 21 (obsolete PRE_GA_UPDATE_ROWS_EVENT)
    0,  // 22 (obsolete PRE_GA_DELETE_ROWS_EVENT)
    8,  // 23 WRITE_ROWS_EVENT_V1
    8,  // 24 UPDATE_ROWS_EVENT_V1
    8,  // 25 DELETE_ROWS_EVENT_V1
    2,  // 26 INCIDENT_EVENT
    0,  // 27 HEARTBEAT_LOG_EVENT
    0,  // 28 IGNORABLE_LOG_EVENT
    0,  // 29 ROWS_QUERY_LOG_EVENT
    10, // 30 WRITE_ROWS_EVENT
    10, // 31 UPDATE_ROWS_EVENT
    10, // 32 DELETE_ROWS_EVENT
    42, // 33 GTID_LOG_EVENT
    42, // 34 ANONYMOUS_GTID_LOG_EVENT
    0,  // 35 PREVIOUS_GTIDS_LOG_EVENT
    18, // 36 TRANSACTION_CONTEXT_EVENT
    52, // 37 VIEW_CHANGE_EVENT
    0,  // 38 XA_PREPARE_LOG_EVENT
    10, // 39 PARTIAL_UPDATE_ROWS_EVENT
    40, // 40 TRANSACTION_PAYLOAD_EVENT
    0,  // 41 HEARTBEAT_LOG_EVENT_V2
];

/// Post-header of GTID events: flags, SID, GNO, clock type, two clocks.
const GTID_POST_HEADER_LEN: usize = 1 + 16 + 8 + 1 + 8 + 8;
/// `Gtid_event::FLAG_MAY_HAVE_SBR`: the transaction has statements (DDL).
const GTID_FLAG_MAY_HAVE_SBR: u8 = 1;
/// `LOGICAL_TIMESTAMP_TYPECODE`: last_committed and sequence_number follow.
const LOGICAL_TIMESTAMP_TYPECODE: u8 = 2;
/// `immediate_server_version` of GTID events: 8.0.36.
const GTID_SERVER_VERSION: u32 = 80036;

/// Checksum algorithm byte of the FORMAT_DESCRIPTION_EVENT.
const CHECKSUM_ALG_OFF: u8 = 0;
const CHECKSUM_ALG_CRC32: u8 = 1;

// QUERY_EVENT status variable codes.
const Q_FLAGS2_CODE: u8 = 0;
const Q_SQL_MODE_CODE: u8 = 1;
const Q_CHARSET_CODE: u8 = 4;
const Q_TIME_ZONE_CODE: u8 = 5;
const Q_CATALOG_NZ_CODE: u8 = 6;

// TABLE_MAP optional metadata field types.
const OPT_SIGNEDNESS: u8 = 1;
const OPT_DEFAULT_CHARSET: u8 = 2;
const OPT_ENUM_AND_SET_DEFAULT_CHARSET: u8 = 10;
// binlog_row_metadata=FULL only.
const OPT_COLUMN_NAME: u8 = 4;
const OPT_SET_STR_VALUE: u8 = 5;
const OPT_ENUM_STR_VALUE: u8 = 6;
const OPT_SIMPLE_PRIMARY_KEY: u8 = 8;

// ---------------------------------------------------------------------------
// CRC32 (IEEE 802.3 / zlib polynomial, reflected 0xEDB88320)

/// zlib's `crc32()` of `data` (what binlog event checksums use; not CRC32C).
pub fn crc32(data: &[u8]) -> u32 {
    // The zlib/IEEE CRC-32 (as MySQL's binlog_checksum=CRC32), computed
    // with the CPU's carry-less multiply where available.
    crc32fast::hash(data)
}

// ---------------------------------------------------------------------------
// Writer

/// Which rows event to build.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RowsKind {
    Write,
    Update,
    Delete,
}

impl RowsKind {
    /// The v2 event type code (30/31/32).
    pub fn type_code(self) -> u8 {
        match self {
            RowsKind::Write => event_type::WRITE_ROWS,
            RowsKind::Update => event_type::UPDATE_ROWS,
            RowsKind::Delete => event_type::DELETE_ROWS,
        }
    }
}

/// One row change of a rows event.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RowImage<'a> {
    /// The inserted row (WRITE_ROWS) or the deleted row (DELETE_ROWS).
    Row(&'a [Value]),
    /// The row before and after an UPDATE.
    Update {
        before: &'a [Value],
        after: &'a [Value],
    },
}

/// `binlog_row_image`: which columns the row images carry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RowImageMode {
    /// Every column, before and after (the default).
    Full,
    /// Before: the primary key (every column without one). After: the
    /// columns an UPDATE changed; every column of an INSERT.
    Minimal,
    /// FULL without the BLOB, TEXT and JSON columns nobody needs: those
    /// outside the primary key in before images, and the unchanged ones in
    /// an UPDATE's after image.
    NoBlob,
}

impl RowImageMode {
    pub fn as_u8(self) -> u8 {
        match self {
            RowImageMode::Full => 0,
            RowImageMode::Minimal => 1,
            RowImageMode::NoBlob => 2,
        }
    }

    pub fn from_u8(v: u8) -> RowImageMode {
        match v {
            1 => RowImageMode::Minimal,
            2 => RowImageMode::NoBlob,
            _ => RowImageMode::Full,
        }
    }
}

/// Which columns the row images of a rows event carry
/// (`binlog_row_image`): FULL has every column in both; MINIMAL and NOBLOB
/// leave some out. `before` is the image of DELETE and UPDATE, `after`
/// the image of WRITE and UPDATE's second image.
#[derive(Clone, Debug, PartialEq)]
pub struct ImageColumns {
    pub before: Vec<bool>,
    pub after: Vec<bool>,
}

impl ImageColumns {
    /// Every column in both images.
    pub fn full(columns: usize) -> ImageColumns {
        ImageColumns {
            before: vec![true; columns],
            after: vec![true; columns],
        }
    }

    fn is_full(&self) -> bool {
        self.before.iter().chain(&self.after).all(|&p| p)
    }

    /// The images `mode` asks for, for rows of `kind` of a table with
    /// these column types and primary key columns (none: every column
    /// identifies the row). An UPDATE's after image carries the columns
    /// any of `rows` changed: one bitmap serves a whole event, and a
    /// column that did not change in some row is logged with its value,
    /// which applies the same.
    pub fn for_rows(
        mode: RowImageMode,
        types: &[ColumnType],
        primary: &[usize],
        kind: RowsKind,
        rows: &[RowImage<'_>],
    ) -> ImageColumns {
        let n = types.len();
        if mode == RowImageMode::Full {
            return ImageColumns::full(n);
        }
        let key: Vec<bool> = if primary.is_empty() {
            vec![true; n]
        } else {
            (0..n).map(|i| primary.contains(&i)).collect()
        };
        let lob = |i: usize| {
            matches!(
                types[i],
                ColumnType::Blob { .. } | ColumnType::Text { .. } | ColumnType::Json
            )
        };
        let keep = |i: usize, wanted: bool| match mode {
            RowImageMode::NoBlob => wanted || !lob(i),
            _ => wanted,
        };
        let before: Vec<bool> = (0..n).map(|i| keep(i, key[i])).collect();
        let after = match kind {
            RowsKind::Write => vec![true; n],
            RowsKind::Delete => before.clone(),
            RowsKind::Update => {
                let mut changed = vec![false; n];
                for r in rows {
                    if let RowImage::Update { before, after } = r {
                        for (i, c) in changed.iter_mut().enumerate() {
                            *c |= before.get(i) != after.get(i);
                        }
                    }
                }
                if !changed.iter().any(|&c| c) {
                    // Nothing changed: the key, so the image is not empty.
                    changed = key.clone();
                }
                (0..n).map(|i| keep(i, changed[i])).collect()
            }
        };
        ImageColumns { before, after }
    }
}

/// Builds binlog events. Every method takes the file offset where the
/// event will start (`pos`) and returns the complete event bytes: header
/// with the right `event_size` and `log_pos` (= `pos + event_size`), body,
/// and the CRC32 footer when `checksum` is on.
///
/// `log_pos` is a 32-bit field: for files past 4 GiB it wraps, as MySQL's
/// does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EventWriter {
    pub server_id: u32,
    /// `binlog_checksum=CRC32` (true) or `NONE` (false).
    pub checksum: bool,
    /// The CRC32 footer is left zero, for events whose position is not
    /// known yet: [`relocate_events`] computes it once they are placed
    /// (the binlog cache), instead of computing it twice.
    pub crc_when_placed: bool,
}

impl EventWriter {
    pub fn new(server_id: u32, checksum: bool) -> EventWriter {
        EventWriter {
            server_id,
            checksum,
            crc_when_placed: false,
        }
    }

    /// A writer for events [`relocate_events`] will place (zero CRCs).
    pub fn unplaced(server_id: u32, checksum: bool) -> EventWriter {
        EventWriter {
            crc_when_placed: true,
            ..EventWriter::new(server_id, checksum)
        }
    }

    /// Wraps `body` in a header (and footer): the event as it goes to the file.
    pub fn event(
        &self,
        type_code: u8,
        pos: u64,
        timestamp: u32,
        flags: u16,
        body: &[u8],
    ) -> Vec<u8> {
        let with_crc = self.checksum || type_code == event_type::FORMAT_DESCRIPTION;
        let size = HEADER_LEN + body.len() + if with_crc { CHECKSUM_LEN } else { 0 };
        let mut out = Vec::with_capacity(size);
        out.extend_from_slice(&timestamp.to_le_bytes());
        out.push(type_code);
        out.extend_from_slice(&self.server_id.to_le_bytes());
        out.extend_from_slice(&(size as u32).to_le_bytes());
        out.extend_from_slice(&(pos.wrapping_add(size as u64) as u32).to_le_bytes());
        out.extend_from_slice(&flags.to_le_bytes());
        out.extend_from_slice(body);
        if with_crc {
            let crc = if self.crc_when_placed {
                0
            } else {
                event_crc(&out)
            };
            out.extend_from_slice(&crc.to_le_bytes());
        }
        out
    }

    /// FORMAT_DESCRIPTION_EVENT, the first event of every file (at `pos` 4,
    /// after [`MAGIC`]). `created` is the server start time for the first
    /// file written after startup (readers then print "at startup" and a
    /// ROLLBACK: the writer restarted) and 0 for files opened by rotation.
    /// Always carries a CRC32 footer, whatever `checksum` says: the
    /// algorithm byte tells readers whether the *other* events have one.
    pub fn format_description(&self, pos: u64, timestamp: u32, created: u32) -> Vec<u8> {
        let mut body = Vec::with_capacity(2 + 50 + 4 + 1 + POST_HEADER_LENGTHS.len() + 1);
        body.extend_from_slice(&BINLOG_VERSION.to_le_bytes());
        let mut version = [0u8; 50];
        let v = SERVER_VERSION.as_bytes();
        version[..v.len()].copy_from_slice(v);
        body.extend_from_slice(&version);
        body.extend_from_slice(&created.to_le_bytes());
        body.push(HEADER_LEN as u8);
        body.extend_from_slice(&POST_HEADER_LENGTHS);
        body.push(if self.checksum {
            CHECKSUM_ALG_CRC32
        } else {
            CHECKSUM_ALG_OFF
        });
        self.event(event_type::FORMAT_DESCRIPTION, pos, timestamp, 0, &body)
    }

    /// QUERY_EVENT: `BEGIN` before a transaction's row events, or a DDL
    /// statement. `db` is the default database (`use db`; may be empty).
    /// Status variables: flags2 = 0 (autocommit=1, foreign_key_checks=1,
    /// unique_checks=1, sql_auto_is_null=0), sql_mode = MySQL 8.0's default,
    /// catalog `std`, charset utf8mb4_bin for client/connection/server, and
    /// time_zone `+00:00` (quire stores TIMESTAMP literals as UTC).
    pub fn query(&self, pos: u64, timestamp: u32, thread_id: u32, db: &str, sql: &str) -> Vec<u8> {
        let db = &db.as_bytes()[..db.len().min(255)];
        let mut status = Vec::with_capacity(40);
        status.push(Q_FLAGS2_CODE);
        status.extend_from_slice(&0u32.to_le_bytes());
        status.push(Q_SQL_MODE_CODE);
        status.extend_from_slice(&DEFAULT_SQL_MODE.to_le_bytes());
        status.push(Q_CATALOG_NZ_CODE);
        status.push(3);
        status.extend_from_slice(b"std");
        status.push(Q_CHARSET_CODE);
        for _ in 0..3 {
            status.extend_from_slice(&COLLATION_UTF8MB4_BIN.to_le_bytes());
        }
        status.push(Q_TIME_ZONE_CODE);
        status.push(6);
        status.extend_from_slice(b"+00:00");

        let mut body = Vec::with_capacity(13 + status.len() + db.len() + 1 + sql.len());
        body.extend_from_slice(&thread_id.to_le_bytes());
        body.extend_from_slice(&0u32.to_le_bytes()); // exec_time
        body.push(db.len() as u8);
        body.extend_from_slice(&0u16.to_le_bytes()); // error_code
        body.extend_from_slice(&(status.len() as u16).to_le_bytes());
        body.extend_from_slice(&status);
        body.extend_from_slice(db);
        body.push(0);
        body.extend_from_slice(sql.as_bytes());
        self.event(event_type::QUERY, pos, timestamp, 0, &body)
    }

    /// TABLE_MAP_EVENT: binds `table_id` (48 bits) to a table and its
    /// column types for the rows events that follow in the same
    /// transaction. `nullable[i]` is whether column `i` may be NULL.
    /// Adds the optional metadata MySQL 8 writes with
    /// `binlog_row_metadata=MINIMAL`: signedness of numeric columns and the
    /// collation of string columns; with `full` (FULL) also the column
    /// names, ENUM/SET members and the primary key.
    #[allow(clippy::too_many_arguments)]
    pub fn table_map(
        &self,
        pos: u64,
        timestamp: u32,
        table_id: u64,
        db: &str,
        table: &str,
        types: &[ColumnType],
        nullable: &[bool],
        full: Option<&FullMetadata<'_>>,
    ) -> Vec<u8> {
        let db = &db.as_bytes()[..db.len().min(255)];
        let table = &table.as_bytes()[..table.len().min(255)];
        let mut body = Vec::with_capacity(64 + types.len() * 4);
        body.extend_from_slice(&table_id.to_le_bytes()[..6]);
        body.extend_from_slice(&TM_BIT_LEN_EXACT_F.to_le_bytes());
        body.push(db.len() as u8);
        body.extend_from_slice(db);
        body.push(0);
        body.push(table.len() as u8);
        body.extend_from_slice(table);
        body.push(0);
        put_packed_int(&mut body, types.len() as u64);
        let mut meta = Vec::with_capacity(types.len() * 2);
        for ty in types {
            let (code, m) = binlog_type(ty);
            body.push(code);
            meta.extend_from_slice(&m);
        }
        put_packed_int(&mut body, meta.len() as u64);
        body.extend_from_slice(&meta);
        let null_at = body.len();
        body.resize(null_at + bitmap_len(types.len()), 0);
        for (i, _) in types.iter().enumerate() {
            if nullable.get(i).copied().unwrap_or(true) {
                body[null_at + i / 8] |= 1 << (i % 8);
            }
        }
        optional_metadata(types, &mut body);
        if let Some(f) = full {
            full_metadata(types, f, &mut body);
        }
        self.event(event_type::TABLE_MAP, pos, timestamp, 0, &body)
    }

    /// One WRITE/UPDATE/DELETE_ROWS event (v2) carrying all of `rows`
    /// (full row images, every column present). `end_of_statement` sets
    /// STMT_END_F: it must be on the last rows event of each statement.
    /// Use [`EventWriter::rows_events`] to respect a size limit.
    #[allow(clippy::too_many_arguments)]
    pub fn rows(
        &self,
        pos: u64,
        timestamp: u32,
        kind: RowsKind,
        table_id: u64,
        types: &[ColumnType],
        rows: &[RowImage<'_>],
        end_of_statement: bool,
    ) -> Result<Vec<u8>, String> {
        let cols = ImageColumns::full(types.len());
        let mut data = Vec::new();
        for row in rows {
            encode_row(kind, types, &cols, row, &mut data)?;
        }
        check_event_size(self.rows_event_overhead(kind, types.len()) + data.len())?;
        Ok(self.rows_event(
            pos,
            timestamp,
            kind,
            table_id,
            &cols,
            &data,
            end_of_statement,
        ))
    }

    /// The rows of one statement as consecutive rows events, starting at
    /// `pos`, each at most `max_event_size` bytes (unless one row alone is
    /// bigger: it then gets an event of its own), like MySQL with
    /// `binlog_row_event_max_size`. Only the last event carries STMT_END_F,
    /// and only if `end_of_statement`. An empty `rows` gives no events.
    #[allow(clippy::too_many_arguments)]
    pub fn rows_events(
        &self,
        pos: u64,
        timestamp: u32,
        kind: RowsKind,
        table_id: u64,
        types: &[ColumnType],
        cols: &ImageColumns,
        rows: &[RowImage<'_>],
        end_of_statement: bool,
        max_event_size: usize,
    ) -> Result<Vec<Vec<u8>>, String> {
        if cols.before.len() != types.len() || cols.after.len() != types.len() {
            return Err(format!(
                "image bitmaps of {}/{} columns for {} types",
                cols.before.len(),
                cols.after.len(),
                types.len()
            ));
        }
        let overhead = self.rows_event_overhead(kind, types.len());
        let budget = max_event_size.saturating_sub(overhead);
        let mut events = Vec::new();
        let mut pos = pos;
        let mut data = Vec::new();
        let mut row = Vec::new();
        for (i, r) in rows.iter().enumerate() {
            row.clear();
            encode_row(kind, types, cols, r, &mut row)?;
            if !data.is_empty() && data.len() + row.len() > budget {
                let ev = self.rows_event(pos, timestamp, kind, table_id, cols, &data, false);
                pos += ev.len() as u64;
                events.push(ev);
                data.clear();
            }
            data.extend_from_slice(&row);
            check_event_size(overhead + data.len())?;
            if i + 1 == rows.len() {
                let ev = self.rows_event(
                    pos,
                    timestamp,
                    kind,
                    table_id,
                    cols,
                    &data,
                    end_of_statement,
                );
                events.push(ev);
            }
        }
        Ok(events)
    }

    /// Bytes of a rows event besides its row images.
    fn rows_event_overhead(&self, kind: RowsKind, columns: usize) -> usize {
        let mut packed = Vec::new();
        put_packed_int(&mut packed, columns as u64);
        let bitmaps = if kind == RowsKind::Update { 2 } else { 1 };
        HEADER_LEN
            + 10
            + packed.len()
            + bitmaps * bitmap_len(columns)
            + if self.checksum { CHECKSUM_LEN } else { 0 }
    }

    /// Assembles a rows event around already encoded row images.
    #[allow(clippy::too_many_arguments)]
    fn rows_event(
        &self,
        pos: u64,
        timestamp: u32,
        kind: RowsKind,
        table_id: u64,
        cols: &ImageColumns,
        row_data: &[u8],
        end_of_statement: bool,
    ) -> Vec<u8> {
        let mut body = Vec::with_capacity(32 + row_data.len());
        body.extend_from_slice(&table_id.to_le_bytes()[..6]);
        let flags = if end_of_statement { STMT_END_F } else { 0 };
        body.extend_from_slice(&flags.to_le_bytes());
        body.extend_from_slice(&2u16.to_le_bytes()); // extra data length (itself only)
        put_packed_int(&mut body, cols.before.len() as u64);
        // The first bitmap is the image a WRITE carries (its after image);
        // DELETE's and UPDATE's before image; UPDATE adds its after image.
        let first = if kind == RowsKind::Write {
            &cols.after
        } else {
            &cols.before
        };
        body.extend_from_slice(&columns_bitmap(first));
        if kind == RowsKind::Update {
            body.extend_from_slice(&columns_bitmap(&cols.after));
        }
        body.extend_from_slice(row_data);
        self.event(kind.type_code(), pos, timestamp, 0, &body)
    }

    /// XID_EVENT: commits the transaction; `xid` is the engine's
    /// transaction id that XA recovery matches against prepared redo.
    pub fn xid(&self, pos: u64, timestamp: u32, xid: u64) -> Vec<u8> {
        self.event(event_type::XID, pos, timestamp, 0, &xid.to_le_bytes())
    }

    /// ROTATE_EVENT, the last event of a full file: names the next file
    /// (which starts at position 4).
    pub fn rotate(&self, pos: u64, timestamp: u32, next_file: &str) -> Vec<u8> {
        let mut body = Vec::with_capacity(8 + next_file.len());
        body.extend_from_slice(&(MAGIC.len() as u64).to_le_bytes());
        body.extend_from_slice(next_file.as_bytes());
        self.event(event_type::ROTATE, pos, timestamp, 0, &body)
    }

    /// A placeholder of exactly `len` bytes at `pos` (an IGNORABLE_LOG_EVENT,
    /// flagged LOG_EVENT_IGNORABLE_F, zeros for a body): the preallocated
    /// tail of the active file is a chain of these, so that a reader of
    /// the file sees events it may skip up to the end instead of zeros it
    /// cannot decode. Never part of a transaction; recovery and dumps stop
    /// at the first one. `len` is at least [`EventWriter::placeholder_min`].
    pub fn placeholder(&self, pos: u64, len: usize) -> Vec<u8> {
        let body = vec![0u8; len.saturating_sub(self.placeholder_min())];
        self.event(event_type::IGNORABLE, pos, 0, LOG_EVENT_IGNORABLE_F, &body)
    }

    /// The smallest placeholder: a header (and a checksum).
    pub fn placeholder_min(&self) -> usize {
        HEADER_LEN + if self.checksum { CHECKSUM_LEN } else { 0 }
    }

    /// STOP_EVENT, the last event of a file closed at shutdown.
    pub fn stop(&self, pos: u64, timestamp: u32) -> Vec<u8> {
        self.event(event_type::STOP, pos, timestamp, 0, &[])
    }

    /// PREVIOUS_GTIDS_LOG_EVENT with an empty GTID set, which MySQL 8
    /// writes right after the FORMAT_DESCRIPTION_EVENT of every file
    /// (quire has no GTIDs: all transactions are anonymous). Flagged
    /// LOG_EVENT_IGNORABLE_F; MariaDB's tools print it as an ignorable
    /// event.
    pub fn previous_gtids(&self, pos: u64, timestamp: u32) -> Vec<u8> {
        self.previous_gtids_of(pos, timestamp, &super::gtid::GtidSet::default())
    }

    /// PREVIOUS_GTIDS_LOG_EVENT naming `set`: every GTID in the files
    /// before this one.
    pub fn previous_gtids_of(
        &self,
        pos: u64,
        timestamp: u32,
        set: &super::gtid::GtidSet,
    ) -> Vec<u8> {
        self.event(
            event_type::PREVIOUS_GTIDS,
            pos,
            timestamp,
            LOG_EVENT_IGNORABLE_F,
            &set.encode(),
        )
    }

    /// ANONYMOUS_GTID_LOG_EVENT, which MySQL 8 (`gtid_mode=OFF`) writes
    /// before every transaction and DDL: the logical clock for parallel
    /// replicas, the commit time and the transaction's length.
    /// `rest_len` is the byte length of the transaction's other events
    /// (BEGIN ... XID, or the DDL QUERY); the `transaction_length` field
    /// counts this event too and is computed here. `rbr_only` is false for
    /// DDL (MySQL's FLAG_MAY_HAVE_SBR).
    pub fn anonymous_gtid(
        &self,
        pos: u64,
        timestamp: u32,
        gtid: &Gtid,
        rbr_only: bool,
        rest_len: u64,
    ) -> Vec<u8> {
        self.gtid_event(pos, timestamp, None, gtid, rbr_only, rest_len)
    }

    /// GTID_LOG_EVENT (`Some((uuid, number))`, gtid_mode ON) or
    /// ANONYMOUS_GTID_LOG_EVENT (None): same layout, see
    /// [`EventWriter::anonymous_gtid`].
    pub fn gtid_event(
        &self,
        pos: u64,
        timestamp: u32,
        id: Option<(&[u8; 16], u64)>,
        gtid: &Gtid,
        rbr_only: bool,
        rest_len: u64,
    ) -> Vec<u8> {
        let transaction_length = self.gtid_transaction_length(rest_len);
        let mut body = Vec::with_capacity(GTID_POST_HEADER_LEN + 7 + 9 + 4);
        body.push(if rbr_only { 0 } else { GTID_FLAG_MAY_HAVE_SBR });
        let (sid, gno, type_code) = match id {
            Some((sid, gno)) => (*sid, gno as i64, event_type::GTID),
            None => ([0u8; 16], 0, event_type::ANONYMOUS_GTID),
        };
        body.extend_from_slice(&sid);
        body.extend_from_slice(&gno.to_le_bytes());
        body.push(LOGICAL_TIMESTAMP_TYPECODE);
        body.extend_from_slice(&gtid.last_committed.to_le_bytes());
        body.extend_from_slice(&gtid.sequence_number.to_le_bytes());
        // immediate_commit_timestamp (µs, 7 bytes; the top bit would announce
        // a different original_commit_timestamp, which a source never has).
        let micros = gtid.commit_micros & ((1u64 << 55) - 1);
        body.extend_from_slice(&micros.to_le_bytes()[..7]);
        put_packed_int(&mut body, transaction_length);
        body.extend_from_slice(&GTID_SERVER_VERSION.to_le_bytes());
        self.event(type_code, pos, timestamp, 0, &body)
    }

    /// Size of an ANONYMOUS_GTID_LOG_EVENT whose transaction has `rest_len`
    /// further bytes, and the resulting self-inclusive transaction length.
    fn gtid_transaction_length(&self, rest_len: u64) -> u64 {
        let fixed = (HEADER_LEN + GTID_POST_HEADER_LEN + 7 + 4) as u64
            + if self.checksum {
                CHECKSUM_LEN as u64
            } else {
                0
            };
        let mut width = 1u64;
        loop {
            let total = rest_len + fixed + width;
            let need = packed_int_len(total);
            if need == width {
                return total;
            }
            width = need;
        }
    }

    /// Bytes [`EventWriter::anonymous_gtid`] produces for a transaction of
    /// `rest_len` further bytes.
    pub fn anonymous_gtid_len(&self, rest_len: u64) -> u64 {
        self.gtid_transaction_length(rest_len) - rest_len
    }

    /// A whole committed transaction as MySQL 8 writes it: optional
    /// ANONYMOUS_GTID, `BEGIN`, then per statement a TABLE_MAP and its rows
    /// events (cut at `max_rows_event_size`, STMT_END_F on the last), then
    /// the XID_EVENT. `pos` is where the first byte goes; encode at any
    /// position and move the result with [`relocate_events`] if the final
    /// position is not known yet.
    #[allow(clippy::too_many_arguments)]
    pub fn transaction(
        &self,
        pos: u64,
        timestamp: u32,
        thread_id: u32,
        db: &str,
        gtid: Option<&Gtid>,
        statements: &[TableRows<'_>],
        xid: u64,
        max_rows_event_size: usize,
    ) -> Result<Vec<u8>, String> {
        // Encode the events after the GTID at a guessed start, then fix the
        // positions up if the GTID event's size differs from the guess.
        let guess = match gtid {
            Some(_) => self.anonymous_gtid_len(1 << 12),
            None => 0,
        };
        let start = pos + guess;
        let mut rest = self.query(start, timestamp, thread_id, db, "BEGIN");
        for st in statements {
            if st.rows.is_empty() {
                continue;
            }
            let p = start + rest.len() as u64;
            rest.extend(self.table_map(
                p,
                timestamp,
                st.table_id,
                st.db,
                st.table,
                st.types,
                st.nullable,
                None,
            ));
            let p = start + rest.len() as u64;
            for ev in self.rows_events(
                p,
                timestamp,
                st.kind,
                st.table_id,
                st.types,
                &ImageColumns::full(st.types.len()),
                st.rows,
                true,
                max_rows_event_size,
            )? {
                rest.extend(ev);
            }
        }
        let p = start + rest.len() as u64;
        rest.extend(self.xid(p, timestamp, xid));
        self.prepend_gtid(pos, timestamp, gtid, true, guess, rest)
    }

    /// A DDL statement as MySQL 8 writes it: optional ANONYMOUS_GTID, then
    /// the QUERY_EVENT (no BEGIN, no XID).
    pub fn ddl(
        &self,
        pos: u64,
        timestamp: u32,
        thread_id: u32,
        db: &str,
        sql: &str,
        gtid: Option<&Gtid>,
    ) -> Result<Vec<u8>, String> {
        let guess = match gtid {
            Some(_) => self.anonymous_gtid_len(1 << 12),
            None => 0,
        };
        let rest = self.query(pos + guess, timestamp, thread_id, db, sql);
        self.prepend_gtid(pos, timestamp, gtid, false, guess, rest)
    }

    /// Puts the GTID event (if any) in front of `rest`, which was encoded
    /// to start at `pos + guess`, relocating it when the guess was wrong.
    fn prepend_gtid(
        &self,
        pos: u64,
        timestamp: u32,
        gtid: Option<&Gtid>,
        rbr_only: bool,
        guess: u64,
        mut rest: Vec<u8>,
    ) -> Result<Vec<u8>, String> {
        let Some(g) = gtid else {
            return Ok(rest);
        };
        let mut out = self.anonymous_gtid(pos, timestamp, g, rbr_only, rest.len() as u64);
        if out.len() as u64 != guess {
            relocate_events(&mut rest, pos + out.len() as u64, self.checksum)?;
        }
        out.extend_from_slice(&rest);
        Ok(out)
    }
}

/// Logical clock and commit time of an ANONYMOUS_GTID_LOG_EVENT.
///
/// Replicas with `replica_parallel_type=LOGICAL_CLOCK` may apply two
/// transactions in parallel when one's `last_committed` is not below the
/// other's `sequence_number`. MySQL numbers transactions 1, 2, 3, ... in
/// each file (`sequence_number`) and sets `last_committed` to the highest
/// sequence number already committed when the transaction prepared (with
/// group commit: the last transaction of the previous group); 0 at the
/// start of a file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Gtid {
    pub last_committed: i64,
    pub sequence_number: i64,
    /// Commit time, microseconds since the epoch.
    pub commit_micros: u64,
}

/// One statement's row changes on one table, for [`EventWriter::transaction`].
#[derive(Clone, Copy, Debug)]
pub struct TableRows<'a> {
    pub table_id: u64,
    pub db: &'a str,
    pub table: &'a str,
    pub types: &'a [ColumnType],
    pub nullable: &'a [bool],
    pub kind: RowsKind,
    pub rows: &'a [RowImage<'a>],
}

/// Rewrites the positions of consecutive complete events in `buf` (as the
/// writer produced them) so that they start at file offset `new_start`:
/// each header's `log_pos` and, when checksums are on, each CRC32. Lets a
/// transaction be encoded before its place in the file is known.
pub fn relocate_events(buf: &mut [u8], new_start: u64, checksum: bool) -> Result<(), String> {
    let mut at = 0usize;
    while at < buf.len() {
        let header = buf
            .get(at..at + HEADER_LEN)
            .ok_or("relocate: truncated event header")?;
        let size = u32::from_le_bytes([header[9], header[10], header[11], header[12]]) as usize;
        let has_crc = checksum || header[4] == event_type::FORMAT_DESCRIPTION;
        let min = HEADER_LEN + if has_crc { CHECKSUM_LEN } else { 0 };
        let end = at
            .checked_add(size)
            .ok_or("relocate: event size overflows")?;
        if size < min || end > buf.len() {
            return Err(format!("relocate: bad event size {size} at {at}"));
        }
        let log_pos = new_start.wrapping_add(end as u64) as u32;
        buf[at + 13..at + 17].copy_from_slice(&log_pos.to_le_bytes());
        if has_crc {
            let crc = event_crc(&buf[at..end - CHECKSUM_LEN]);
            buf[end - CHECKSUM_LEN..end].copy_from_slice(&crc.to_le_bytes());
        }
        at = end;
    }
    Ok(())
}

/// Events carry their size in 32 bits.
fn check_event_size(size: usize) -> Result<(), String> {
    if size > u32::MAX as usize {
        return Err(format!("binlog event of {size} bytes exceeds 4 GiB"));
    }
    Ok(())
}

/// Bytes of a packed integer.
fn packed_int_len(v: u64) -> u64 {
    match v {
        0..=250 => 1,
        251..=0xFFFF => 3,
        0x1_0000..=0xFF_FFFF => 4,
        _ => 9,
    }
}

/// Appends the row image(s) of one row change.
fn encode_row(
    kind: RowsKind,
    types: &[ColumnType],
    cols: &ImageColumns,
    row: &RowImage<'_>,
    out: &mut Vec<u8>,
) -> Result<(), String> {
    let full = cols.is_full();
    fn mask(full: bool, m: &[bool]) -> Option<&[bool]> {
        (!full).then_some(m)
    }
    match (kind, row) {
        (RowsKind::Write, RowImage::Row(values)) => {
            encode_partial_image(values, types, mask(full, &cols.after), out)
        }
        (RowsKind::Delete, RowImage::Row(values)) => {
            encode_partial_image(values, types, mask(full, &cols.before), out)
        }
        (RowsKind::Update, RowImage::Update { before, after }) => {
            encode_partial_image(before, types, mask(full, &cols.before), out)?;
            encode_partial_image(after, types, mask(full, &cols.after), out)
        }
        (RowsKind::Update, RowImage::Row(_)) => {
            Err("UPDATE_ROWS needs before and after images".to_string())
        }
        (_, RowImage::Update { .. }) => Err(format!("{kind:?} rows take one image")),
    }
}

/// A bitmap with bit `i` set for each column `i` present.
fn columns_bitmap(present: &[bool]) -> Vec<u8> {
    let mut b = vec![0u8; bitmap_len(present.len())];
    for (i, _) in present.iter().enumerate().filter(|(_, &p)| p) {
        b[i / 8] |= 1 << (i % 8);
    }
    b
}

/// Appends TABLE_MAP optional metadata: SIGNEDNESS (one bit per numeric
/// column, most significant bit first, 1 = unsigned) and DEFAULT_CHARSET
/// (utf8mb4_bin, with `binary` listed for binary string columns by their
/// index among string columns).
fn optional_metadata(types: &[ColumnType], out: &mut Vec<u8>) {
    let numeric: Vec<bool> = types
        .iter()
        .filter(|t| t.is_numeric())
        .map(|t| t.is_unsigned())
        .collect();
    if !numeric.is_empty() {
        let mut bits = vec![0u8; bitmap_len(numeric.len())];
        for (i, &unsigned) in numeric.iter().enumerate() {
            if unsigned {
                bits[i / 8] |= 0x80 >> (i % 8);
            }
        }
        out.push(OPT_SIGNEDNESS);
        put_packed_int(out, bits.len() as u64);
        out.extend_from_slice(&bits);
    }
    let strings: Vec<&ColumnType> = types.iter().filter(|t| t.is_string()).collect();
    if !strings.is_empty() {
        let mut v = Vec::new();
        put_packed_int(&mut v, u64::from(COLLATION_UTF8MB4_BIN));
        for (i, t) in strings.iter().enumerate() {
            let id = t.collation().map_or(COLLATION_BINARY, |c| c.id());
            if id != COLLATION_UTF8MB4_BIN {
                put_packed_int(&mut v, i as u64);
                put_packed_int(&mut v, u64::from(id));
            }
        }
        out.push(OPT_DEFAULT_CHARSET);
        put_packed_int(out, v.len() as u64);
        out.extend_from_slice(&v);
    }
    // ENUM and SET members are utf8mb4 text: one default for all of them
    // (readers decode the members of FULL metadata with it).
    if types
        .iter()
        .any(|t| matches!(t, ColumnType::Enum { .. } | ColumnType::Set { .. }))
    {
        let mut v = Vec::new();
        put_packed_int(&mut v, u64::from(COLLATION_UTF8MB4_BIN));
        out.push(OPT_ENUM_AND_SET_DEFAULT_CHARSET);
        put_packed_int(out, v.len() as u64);
        out.extend_from_slice(&v);
    }
}

/// What `binlog_row_metadata=FULL` adds to a TABLE_MAP event.
pub struct FullMetadata<'a> {
    /// Every column's name, in table order.
    pub names: &'a [&'a str],
    /// The primary key's columns (by position), if it has one.
    pub primary_key: &'a [usize],
}

/// The FULL part of a TABLE_MAP's optional metadata, in MySQL's order of
/// field types: COLUMN_NAME, SET_STR_VALUE, ENUM_STR_VALUE,
/// SIMPLE_PRIMARY_KEY. Each field is type, packed length, value.
fn full_metadata(types: &[ColumnType], f: &FullMetadata<'_>, out: &mut Vec<u8>) {
    let field = |out: &mut Vec<u8>, kind: u8, v: &[u8]| {
        out.push(kind);
        put_packed_int(out, v.len() as u64);
        out.extend_from_slice(v);
    };
    let put_str = |v: &mut Vec<u8>, s: &str| {
        put_packed_int(v, s.len() as u64);
        v.extend_from_slice(s.as_bytes());
    };
    let mut v = Vec::new();
    for n in f.names {
        put_str(&mut v, n);
    }
    field(out, OPT_COLUMN_NAME, &v);
    for (kind, want_set) in [(OPT_SET_STR_VALUE, true), (OPT_ENUM_STR_VALUE, false)] {
        let mut v = Vec::new();
        for t in types {
            let members = match t {
                ColumnType::Set { members } if want_set => members,
                ColumnType::Enum { members } if !want_set => members,
                _ => continue,
            };
            put_packed_int(&mut v, members.len() as u64);
            for m in members.iter() {
                put_str(&mut v, m);
            }
        }
        if !v.is_empty() {
            field(out, kind, &v);
        }
    }
    if !f.primary_key.is_empty() {
        let mut v = Vec::new();
        for &c in f.primary_key {
            put_packed_int(&mut v, c as u64);
        }
        field(out, OPT_SIMPLE_PRIMARY_KEY, &v);
    }
}

/// CRC32 of an event (header and body, no footer) as binlog readers check
/// it: a FORMAT_DESCRIPTION_EVENT is summed with LOG_EVENT_BINLOG_IN_USE_F
/// cleared, so that flag can change without rewriting the checksum.
fn event_crc(event: &[u8]) -> u32 {
    if event.len() >= HEADER_LEN && event[4] == event_type::FORMAT_DESCRIPTION {
        let mut copy = event.to_vec();
        copy[17] &= !(LOG_EVENT_BINLOG_IN_USE_F as u8);
        crc32(&copy)
    } else {
        crc32(event)
    }
}
