//! # Replies: OK, ERR, EOF, column definitions, text and binary rows
//!
//! ```text
//!  OK     00 | affected int<lenenc> | last_insert_id int<lenenc>
//!            | status int<2> | warnings int<2> | [info string<lenenc>]
//!  ERR    FF | code int<2> | '#' | sqlstate 5 bytes | message string<EOF>
//!  EOF    FE | warnings int<2> | status int<2>           (5 bytes)
//! ```
//!
//! A result set, text (COM_QUERY) or binary (COM_STMT_EXECUTE):
//!
//! ```text
//!  column count int<lenenc>
//!  ColumnDefinition41 x count
//!  EOF                                  only without CLIENT_DEPRECATE_EOF
//!  row x N
//!  EOF, or with CLIENT_DEPRECATE_EOF an OK packet whose header is FE
//! ```
//!
//! ColumnDefinition41:
//!
//! ```text
//!  "def" | schema | table | org_table | name | org_name  (string<lenenc> each)
//!  0x0C  | charset int<2> | column length int<4> | type int<1>
//!  flags int<2> | decimals int<1> | 00 00
//! ```
//!
//! A text row is one `string<lenenc>` per column (0xFB for NULL), each the
//! value's MySQL text form ([`Value::to_mysql_text`]). A binary row is
//!
//! ```text
//!  00 | NULL bitmap ((count + 7 + 2) / 8 bytes, column i = bit i + 2)
//!     | each non-NULL value in its binary form:
//!       TINY 1 byte, SHORT 2, LONG/INT24 4, LONGLONG 8, FLOAT 4, DOUBLE 8,
//!       DATE/DATETIME/TIMESTAMP: length (0, 4, 7 or 11) | year int<2> |
//!           month | day | [hour | minute | second | [micro int<4>]]
//!       DECIMAL and strings: string<lenenc>
//! ```
//!
//! The column type, length, charset and flags come from the engine's
//! [`ColumnType`] through [`column_wire`]: integers as TINY/SHORT/INT24/
//! LONG/LONGLONG with UNSIGNED, DECIMAL as NEWDECIMAL, text as
//! STRING/VAR_STRING/BLOB in utf8mb4, binary strings with charset 63 and
//! the BINARY flag, temporal types with their fsp as `decimals`.

use quire_engine::types::{Date, DateTime, Decimal, Time};
use quire_engine::{ColumnType, Value};
use quire_sql::ColumnMeta;

use crate::codec::{charset, flag, put_lenenc_int, put_lenenc_str, ty};

/// Wire description of a column type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ColumnWire {
    pub type_code: u8,
    pub charset: u16,
    pub length: u32,
    pub flags: u16,
    pub decimals: u8,
}

/// Maps an engine type to its protocol type code, charset, length, flags
/// and decimals, as MySQL 8.0 reports a column of that type.
pub fn column_wire(t: &ColumnType) -> ColumnWire {
    let num = |type_code: u8, signed_len: u32, unsigned: bool| ColumnWire {
        type_code,
        charset: charset::BINARY,
        length: if unsigned { signed_len - 1 } else { signed_len },
        flags: flag::NUM | flag::BINARY | if unsigned { flag::UNSIGNED } else { 0 },
        decimals: 0,
    };
    let text = |type_code: u8, length: u32, extra: u16| ColumnWire {
        type_code,
        charset: charset::UTF8MB4,
        length,
        flags: extra,
        decimals: 0,
    };
    let bin = |type_code: u8, length: u32, extra: u16| ColumnWire {
        type_code,
        charset: charset::BINARY,
        length,
        flags: flag::BINARY | extra,
        decimals: 0,
    };
    let temporal = |type_code: u8, fsp: u8| ColumnWire {
        type_code,
        charset: charset::BINARY,
        length: 19 + if fsp > 0 { u32::from(fsp) + 1 } else { 0 },
        flags: flag::BINARY,
        decimals: fsp,
    };
    match *t {
        ColumnType::TinyInt { unsigned } => num(ty::TINY, 4, unsigned),
        ColumnType::SmallInt { unsigned } => num(ty::SHORT, 6, unsigned),
        ColumnType::MediumInt { unsigned } => num(ty::INT24, 9, unsigned),
        ColumnType::Int { unsigned } => num(ty::LONG, 11, unsigned),
        // BIGINT's display width is 20 signed or not; the UNSIGNED flag
        // tells binary-protocol clients how to read the 8 bytes.
        ColumnType::BigInt { unsigned } => ColumnWire {
            length: 20,
            ..num(ty::LONGLONG, 20, unsigned)
        },
        ColumnType::Decimal { precision, scale } => ColumnWire {
            type_code: ty::NEWDECIMAL,
            charset: charset::BINARY,
            length: u32::from(precision) + u32::from(scale > 0) + 1,
            flags: flag::NUM | flag::BINARY,
            decimals: scale,
        },
        ColumnType::Float => ColumnWire {
            type_code: ty::FLOAT,
            charset: charset::BINARY,
            length: 12,
            flags: flag::NUM | flag::BINARY,
            decimals: 31,
        },
        ColumnType::Double => ColumnWire {
            type_code: ty::DOUBLE,
            charset: charset::BINARY,
            length: 22,
            flags: flag::NUM | flag::BINARY,
            decimals: 31,
        },
        ColumnType::Char { len, .. } => text(ty::STRING, len.saturating_mul(4), 0),
        ColumnType::Varchar { len, .. } => text(ty::VAR_STRING, len.saturating_mul(4), 0),
        ColumnType::Text { max_bytes, .. } => text(ty::BLOB, max_bytes, flag::BLOB),
        ColumnType::Blob { max_bytes } => bin(ty::BLOB, max_bytes, flag::BLOB),
        ColumnType::Binary { len } => bin(ty::STRING, len, 0),
        ColumnType::VarBinary { len } => bin(ty::VAR_STRING, len, 0),
        ColumnType::Date => ColumnWire {
            length: 10,
            ..temporal(ty::DATE, 0)
        },
        ColumnType::DateTime { fsp } => temporal(ty::DATETIME, fsp),
        ColumnType::Timestamp { fsp } => temporal(ty::TIMESTAMP, fsp),
        ColumnType::Year => ColumnWire {
            type_code: ty::YEAR,
            charset: charset::BINARY,
            length: 4,
            flags: flag::NUM | flag::UNSIGNED | flag::ZEROFILL,
            decimals: 0,
        },
        ColumnType::Time { fsp } => ColumnWire {
            length: 10 + if fsp > 0 { u32::from(fsp) + 1 } else { 0 },
            ..temporal(ty::TIME, fsp)
        },
        ColumnType::Bit { bits } => ColumnWire {
            type_code: ty::BIT,
            charset: charset::BINARY,
            length: u32::from(bits),
            flags: flag::UNSIGNED,
            decimals: 0,
        },
        // MySQL 8.0 sends JSON as its own type with the binary charset.
        ColumnType::Json => bin(ty::JSON, u32::MAX, flag::BLOB),
        ColumnType::Enum { ref members } => {
            let longest = members.iter().map(|m| m.chars().count()).max();
            text(
                ty::STRING,
                (longest.unwrap_or(0) as u32).saturating_mul(4),
                flag::ENUM,
            )
        }
        ColumnType::Set { ref members } => {
            let chars: usize = members.iter().map(|m| m.chars().count() + 1).sum();
            text(
                ty::STRING,
                (chars.saturating_sub(1) as u32).saturating_mul(4),
                flag::SET,
            )
        }
    }
}

/// Appends an OK payload (header 0x00, or 0xFE when it ends a result set
/// under CLIENT_DEPRECATE_EOF).
pub fn write_ok(
    out: &mut Vec<u8>,
    header: u8,
    affected: u64,
    last_insert_id: u64,
    status: u16,
    warnings: u16,
    info: &str,
) {
    out.push(header);
    put_lenenc_int(out, affected);
    put_lenenc_int(out, last_insert_id);
    out.extend_from_slice(&status.to_le_bytes());
    out.extend_from_slice(&warnings.to_le_bytes());
    // The protocol documentation says string<EOF> without session
    // tracking, but MySQL's `net_send_ok` stores a length-encoded string
    // and libmysqlclient/libmariadb read one.
    if !info.is_empty() {
        put_lenenc_str(out, info.as_bytes());
    }
}

/// Appends an ERR payload.
pub fn write_err(out: &mut Vec<u8>, code: u16, sqlstate: &str, message: &str) {
    out.push(0xFF);
    out.extend_from_slice(&code.to_le_bytes());
    out.push(b'#');
    let mut state = [b'H', b'Y', b'0', b'0', b'0'];
    for (d, s) in state.iter_mut().zip(sqlstate.bytes()) {
        *d = s;
    }
    out.extend_from_slice(&state);
    // MySQL truncates messages to MYSQL_ERRMSG_SIZE (512).
    let msg = message.as_bytes();
    let mut end = msg.len().min(511);
    while end < msg.len() && !message.is_char_boundary(end) {
        end -= 1;
    }
    out.extend_from_slice(&msg[..end]);
}

/// Appends an EOF payload.
pub fn write_eof(out: &mut Vec<u8>, warnings: u16, status: u16) {
    out.push(0xFE);
    out.extend_from_slice(&warnings.to_le_bytes());
    out.extend_from_slice(&status.to_le_bytes());
}

/// Whether a result column is NULL-typed (`SELECT NULL`, `CASE WHEN c
/// THEN NULL END`, `MIN(NULL)`): the SQL layer types those BINARY(0)
/// (what CREATE TABLE ... SELECT stores, as in MySQL), and MySQL reports
/// them as type NULL; a BINARY(0) column read from a base table stays a
/// STRING column.
fn is_null_typed(c: &ColumnMeta) -> bool {
    c.ty == ColumnType::Binary { len: 0 } && c.org_table.is_empty()
}

/// MySQL's definition of a NULL-typed column: type NULL, binary, length 0.
const NULL_WIRE: ColumnWire = ColumnWire {
    type_code: ty::NULL,
    charset: charset::BINARY,
    length: 0,
    flags: flag::BINARY,
    decimals: 0,
};

/// Appends a ColumnDefinition41 payload.
pub fn write_column_def(out: &mut Vec<u8>, c: &ColumnMeta) {
    let w = if is_null_typed(c) {
        NULL_WIRE
    } else {
        column_wire(&c.ty)
    };
    put_lenenc_str(out, b"def");
    put_lenenc_str(out, c.db.as_bytes());
    put_lenenc_str(out, c.table.as_bytes());
    put_lenenc_str(out, c.org_table.as_bytes());
    put_lenenc_str(out, truncate_name(&c.name));
    put_lenenc_str(out, truncate_name(&c.org_name));
    out.push(0x0C);
    out.extend_from_slice(&w.charset.to_le_bytes());
    out.extend_from_slice(&w.length.to_le_bytes());
    out.push(w.type_code);
    let flags = w.flags | if c.nullable { 0 } else { flag::NOT_NULL };
    out.extend_from_slice(&flags.to_le_bytes());
    out.push(w.decimals);
    out.extend_from_slice(&[0, 0]);
}

/// MySQL names an expression column by its text, cut to 256 characters
/// (`MAX_ALIAS_NAME`); a 16 MiB literal must not make a 16 MiB column
/// definition.
fn truncate_name(name: &str) -> &[u8] {
    match name.char_indices().nth(256) {
        Some((at, _)) => &name.as_bytes()[..at],
        None => name.as_bytes(),
    }
}

/// A parameter's definition in the COM_STMT_PREPARE reply (`?`, VAR_STRING).
pub fn write_param_def(out: &mut Vec<u8>) {
    for s in [&b"def"[..], b"", b"", b"", b"?", b""] {
        put_lenenc_str(out, s);
    }
    out.push(0x0C);
    out.extend_from_slice(&charset::BINARY.to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes());
    out.push(ty::VAR_STRING);
    out.extend_from_slice(&flag::BINARY.to_le_bytes());
    out.push(0);
    out.extend_from_slice(&[0, 0]);
}

/// Appends a text-protocol row.
pub fn write_text_row(out: &mut Vec<u8>, columns: &[ColumnMeta], row: &[Value]) {
    for (i, c) in columns.iter().enumerate() {
        match row.get(i).and_then(|v| v.mysql_text(&c.ty)) {
            Some(text) => put_lenenc_str(out, &text),
            None => out.push(0xFB),
        }
    }
}

/// Appends a binary-protocol row.
pub fn write_binary_row(out: &mut Vec<u8>, columns: &[ColumnMeta], row: &[Value]) {
    out.push(0);
    let bitmap_at = out.len();
    let bitmap_len = (columns.len() + 7 + 2) / 8;
    out.resize(bitmap_at + bitmap_len, 0);
    for (i, c) in columns.iter().enumerate() {
        let v = row.get(i).unwrap_or(&Value::Null);
        // A NULL-typed column has no binary form for a value (it only
        // ever holds NULL).
        if v.is_null() || is_null_typed(c) {
            let bit = i + 2;
            out[bitmap_at + bit / 8] |= 1 << (bit % 8);
            continue;
        }
        write_binary_value(out, &c.ty, v);
    }
}

/// Appends one non-NULL value in the binary form of column type `t`.
pub fn write_binary_value(out: &mut Vec<u8>, t: &ColumnType, v: &Value) {
    match column_wire(t).type_code {
        ty::TINY => out.push(as_i64(v) as u8),
        ty::SHORT => out.extend_from_slice(&(as_i64(v) as u16).to_le_bytes()),
        ty::INT24 | ty::LONG => out.extend_from_slice(&(as_i64(v) as u32).to_le_bytes()),
        ty::LONGLONG => out.extend_from_slice(&(as_i64(v) as u64).to_le_bytes()),
        ty::FLOAT => {
            let f = match v {
                Value::Float(f) => *f,
                other => other.to_f64().unwrap_or(0.0) as f32,
            };
            out.extend_from_slice(&f.to_le_bytes());
        }
        ty::DOUBLE => {
            let f = v.to_f64().unwrap_or(0.0);
            out.extend_from_slice(&f.to_le_bytes());
        }
        ty::YEAR => out.extend_from_slice(&(as_i64(v) as u16).to_le_bytes()),
        ty::TIME => match v {
            Value::Time(t) => write_binary_time(out, t),
            _ => out.push(0),
        },
        ty::DATE | ty::DATETIME | ty::TIMESTAMP => match v {
            Value::Date(d) => write_binary_date(out, d),
            Value::DateTime(dt) if matches!(t, ColumnType::Date) => {
                write_binary_date(out, &dt.date())
            }
            Value::DateTime(dt) => write_binary_datetime(out, dt),
            // A value of another kind in a temporal column: send its text
            // form would break the row format; send the zero value.
            _ => out.push(0),
        },
        _ => put_lenenc_str(out, &v.mysql_text(t).unwrap_or_default()),
    }
}

/// The value as a 64-bit integer bit pattern (unsigned values wrap into
/// i64 and are sent as the same bytes).
fn as_i64(v: &Value) -> i64 {
    match v {
        Value::Int(i) => *i,
        Value::UInt(u) => *u as i64,
        Value::Decimal(d) => decimal_to_i64(d),
        Value::Bytes(b) => std::str::from_utf8(b)
            .ok()
            .and_then(|s| s.trim().parse::<i64>().ok())
            .unwrap_or(0),
        other => other.to_f64().map(|f| f.round() as i64).unwrap_or(0),
    }
}

fn decimal_to_i64(d: &Decimal) -> i64 {
    d.to_i128_round()
        .map(|i| i.clamp(i128::from(i64::MIN), i128::from(u64::MAX)) as i64)
        .unwrap_or(0)
}

fn write_binary_date(out: &mut Vec<u8>, d: &Date) {
    out.push(4);
    out.extend_from_slice(&d.year.to_le_bytes());
    out.push(d.month);
    out.push(d.day);
}

/// MYSQL_TIME in the binary protocol: length 0 (zero), 8 or 12, then
/// sign, days, hours (below 24), minutes, seconds, microseconds.
fn write_binary_time(out: &mut Vec<u8>, t: &Time) {
    let (hours, minutes, seconds, micro) = t.parts();
    if t.micros() == 0 {
        out.push(0);
        return;
    }
    out.push(if micro != 0 { 12 } else { 8 });
    out.push(u8::from(t.is_negative()));
    out.extend_from_slice(&((hours / 24) as u32).to_le_bytes());
    out.extend_from_slice(&[(hours % 24) as u8, minutes as u8, seconds as u8]);
    if micro != 0 {
        out.extend_from_slice(&micro.to_le_bytes());
    }
}

fn write_binary_datetime(out: &mut Vec<u8>, t: &DateTime) {
    let len = if t.micro != 0 {
        11
    } else if t.hour != 0 || t.minute != 0 || t.second != 0 {
        7
    } else {
        4
    };
    out.push(len);
    out.extend_from_slice(&t.year.to_le_bytes());
    out.push(t.month);
    out.push(t.day);
    if len >= 7 {
        out.extend_from_slice(&[t.hour, t.minute, t.second]);
    }
    if len == 11 {
        out.extend_from_slice(&t.micro.to_le_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::Reader;

    fn meta(name: &str, t: ColumnType, nullable: bool) -> ColumnMeta {
        ColumnMeta {
            name: name.into(),
            org_name: name.into(),
            table: "t".into(),
            org_table: "t".into(),
            db: "d".into(),
            ty: t,
            nullable,
        }
    }

    fn bin(t: ColumnType, v: Value) -> Vec<u8> {
        let mut out = Vec::new();
        write_binary_value(&mut out, &t, &v);
        out
    }

    #[test]
    fn binary_values_per_type() {
        assert_eq!(
            bin(ColumnType::TinyInt { unsigned: false }, Value::Int(-1)),
            [0xFF]
        );
        assert_eq!(
            bin(ColumnType::TinyInt { unsigned: true }, Value::UInt(200)),
            [200]
        );
        assert_eq!(
            bin(ColumnType::SmallInt { unsigned: false }, Value::Int(-2)),
            (-2i16).to_le_bytes()
        );
        assert_eq!(
            bin(ColumnType::MediumInt { unsigned: false }, Value::Int(70000)),
            70000i32.to_le_bytes()
        );
        assert_eq!(
            bin(
                ColumnType::Int { unsigned: true },
                Value::UInt(4_000_000_000)
            ),
            4_000_000_000u32.to_le_bytes()
        );
        assert_eq!(
            bin(ColumnType::BigInt { unsigned: true }, Value::UInt(u64::MAX)),
            u64::MAX.to_le_bytes()
        );
        assert_eq!(
            bin(ColumnType::BigInt { unsigned: false }, Value::Int(i64::MIN)),
            i64::MIN.to_le_bytes()
        );
        assert_eq!(
            bin(ColumnType::Float, Value::Float(1.5)),
            1.5f32.to_le_bytes()
        );
        assert_eq!(
            bin(ColumnType::Double, Value::Double(-2.25)),
            (-2.25f64).to_le_bytes()
        );
        let d = Decimal::parse_prefix(b"12.50").map(|p| p.value);
        if let Ok(d) = d {
            assert_eq!(
                bin(
                    ColumnType::Decimal {
                        precision: 10,
                        scale: 2
                    },
                    Value::Decimal(d)
                ),
                b"\x0512.50"
            );
        }
        assert_eq!(
            bin(ColumnType::varchar(10), Value::text("héllo")),
            b"\x06h\xc3\xa9llo"
        );
        assert_eq!(
            bin(
                ColumnType::Blob { max_bytes: 65535 },
                Value::Bytes(vec![0, 1])
            ),
            [2, 0, 1]
        );
        let date = Date::new(2024, 2, 29).unwrap();
        assert_eq!(
            bin(ColumnType::Date, Value::Date(date)),
            [4, 0xE8, 0x07, 2, 29]
        );
        let dt = DateTime::new(2024, 2, 29, 13, 14, 15, 0).unwrap();
        assert_eq!(
            bin(ColumnType::DateTime { fsp: 0 }, Value::DateTime(dt)),
            [7, 0xE8, 0x07, 2, 29, 13, 14, 15]
        );
        let dtu = DateTime::new(2024, 2, 29, 0, 0, 0, 5).unwrap();
        assert_eq!(
            bin(ColumnType::Timestamp { fsp: 6 }, Value::DateTime(dtu)),
            [11, 0xE8, 0x07, 2, 29, 0, 0, 0, 5, 0, 0, 0]
        );
        let midnight = DateTime::new(2024, 1, 1, 0, 0, 0, 0).unwrap();
        assert_eq!(
            bin(ColumnType::DateTime { fsp: 0 }, Value::DateTime(midnight)),
            [4, 0xE8, 0x07, 1, 1]
        );
    }

    #[test]
    fn binary_row_null_bitmap() {
        let cols: Vec<ColumnMeta> = (0..9)
            .map(|i| meta(&format!("c{i}"), ColumnType::Int { unsigned: false }, true))
            .collect();
        let mut row = vec![Value::Int(1); 9];
        row[0] = Value::Null;
        row[6] = Value::Null;
        let mut out = Vec::new();
        write_binary_row(&mut out, &cols, &row);
        // header, 2 bitmap bytes ((9 + 9) / 8), then 7 four-byte values.
        assert_eq!(out.len(), 1 + 2 + 7 * 4);
        assert_eq!(out[0], 0);
        assert_eq!(out[1], 0b0000_0100); // column 0 -> bit 2
        assert_eq!(out[2], 0b0000_0001); // column 6 -> bit 8
    }

    #[test]
    fn unsigned_flags() {
        for (t, len) in [
            (ColumnType::TinyInt { unsigned: true }, 3),
            (ColumnType::Int { unsigned: true }, 10),
            (ColumnType::BigInt { unsigned: true }, 20),
        ] {
            let w = column_wire(&t);
            assert_ne!(w.flags & flag::UNSIGNED, 0, "{t:?}");
            assert_eq!(w.length, len, "{t:?}");
        }
        let w = column_wire(&ColumnType::BigInt { unsigned: false });
        assert_eq!((w.flags & flag::UNSIGNED, w.length), (0, 20));
    }

    #[test]
    fn text_row_and_column_def() {
        let cols = vec![
            meta("id", ColumnType::Int { unsigned: true }, false),
            meta("s", ColumnType::char(10), true),
        ];
        let mut out = Vec::new();
        write_text_row(&mut out, &cols, &[Value::UInt(7), Value::Null]);
        assert_eq!(out, [1, b'7', 0xFB]);

        let mut def = Vec::new();
        write_column_def(&mut def, &cols[0]);
        let mut r = Reader::new(&def);
        assert_eq!(r.lenenc_str().unwrap(), b"def");
        assert_eq!(r.lenenc_str().unwrap(), b"d");
        assert_eq!(r.lenenc_str().unwrap(), b"t");
        assert_eq!(r.lenenc_str().unwrap(), b"t");
        assert_eq!(r.lenenc_str().unwrap(), b"id");
        assert_eq!(r.lenenc_str().unwrap(), b"id");
        assert_eq!(r.u8().unwrap(), 0x0C);
        assert_eq!(r.u16().unwrap(), 63);
        assert_eq!(r.u32().unwrap(), 10);
        assert_eq!(r.u8().unwrap(), ty::LONG);
        assert_eq!(
            r.u16().unwrap(),
            flag::NOT_NULL | flag::UNSIGNED | flag::NUM | flag::BINARY
        );
        assert_eq!(r.u8().unwrap(), 0);
        assert_eq!(r.bytes(2).unwrap(), &[0, 0]);
        assert!(r.is_empty());
    }

    #[test]
    fn ok_err_eof_layouts() {
        let mut out = Vec::new();
        write_ok(&mut out, 0, 300, 5, 2, 1, "");
        assert_eq!(out, [0, 0xFC, 0x2C, 0x01, 5, 2, 0, 1, 0]);
        out.clear();
        write_ok(&mut out, 0, 1, 0, 2, 0, "Rows matched: 1");
        assert_eq!(&out[..8], &[0, 1, 0, 2, 0, 0, 0, 15]);
        assert_eq!(&out[8..], b"Rows matched: 1");
        out.clear();
        write_err(&mut out, 1045, "28000", "Access denied");
        assert_eq!(&out[..9], b"\xFF\x15\x04#28000");
        assert_eq!(&out[9..], b"Access denied");
        out.clear();
        write_eof(&mut out, 0, 2);
        assert_eq!(out, [0xFE, 0, 0, 2, 0]);
    }
}
