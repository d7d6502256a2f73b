//! # Row images
//!
//! [`encode_row`] packs a full row (every column of a table, in order) into
//! the value stored in the clustered index; [`decode_row`] reads it back
//! given the column types. The layout is compact and self-checking:
//!
//! ```text
//!   varint  column count n            (LEB128; lets a reader notice a
//!                                      schema mismatch, and rows stored
//!                                      before an INSTANT ADD COLUMN be read:
//!                                      offpage::decode fills the rest)
//!   ⌈n/8⌉   null bitmap               bit (i % 8) of byte (i / 8) set = column i is NULL;
//!                                      unused high bits of the last byte are 0
//!   then, for each non-NULL column in order, its payload:
//! ```
//!
//! | column type | payload |
//! |---|---|
//! | TINYINT / SMALLINT / MEDIUMINT / INT / BIGINT | 1 / 2 / 3 / 4 / 8 bytes little-endian (two's complement when signed) |
//! | FLOAT / DOUBLE | IEEE bits, 4 / 8 bytes little-endian (−0.0 kept) |
//! | DECIMAL(M,D) | the fixed BCD form of the key encoding, 1 + ⌈M/2⌉ bytes |
//! | CHAR, VARCHAR, TEXT, BINARY, VARBINARY, BLOB | varint byte length, then the bytes (CHAR without trailing spaces) |
//! | DATE | packed date, 3 bytes little-endian |
//! | DATETIME, TIMESTAMP | packed microseconds, 8 bytes little-endian |
//! | YEAR | the year (0 or 1901..2155), 2 bytes little-endian |
//! | TIME | signed microseconds, 8 bytes little-endian |
//! | BIT(n) | the value, 8 bytes little-endian |
//! | ENUM | the 1-based ordinal, varint |
//! | SET | the member mask, varint |
//! | JSON | varint byte length, then the binary document (`jsonb.rs`); rows written before it hold the printed text, told apart by the first byte and read back as text |
//!
//! Decoding validates everything it reads — counts, bitmap padding,
//! lengths against the buffer *and* the column's maximum, decimal digits,
//! calendar dates, NaN floats, trailing bytes — and returns `Err` for any
//! malformed input; it never panics and never allocates more than the
//! input's size.

use super::canon::{
    bit_of, bytes_of, date_of, datetime_of, decimal_of, decimal_width, f32_of, f64_of, get_decimal,
    int_of, int_width, mask_of, member_of, ordinal_of, put_decimal, set_of, time_of, year_of,
};
use super::datetime::{Date, DateTime};
use super::decimal::Decimal;
use super::jsonb;
use super::time::Time;
use super::value::Value;
use super::ColumnType;

/// Encodes a full row by appending to `out`.
///
/// # Panics
/// If the counts differ or a value does not fit its column type (see
/// [`try_encode_row`]); values must come from `coerce`.
pub fn encode_row(values: &[Value], types: &[ColumnType], out: &mut Vec<u8>) {
    if let Err(e) = try_encode_row(values, types, out) {
        panic!("encode_row: {e}; values must pass through coerce() first");
    }
}

/// [`encode_row`] that reports mismatches instead of panicking. On error
/// `out` may hold a partial row.
pub fn try_encode_row(
    values: &[Value],
    types: &[ColumnType],
    out: &mut Vec<u8>,
) -> Result<(), String> {
    if values.len() != types.len() {
        return Err(format!(
            "{} values for a row of {} columns",
            values.len(),
            types.len()
        ));
    }
    put_varint(values.len() as u64, out);
    let bitmap_at = out.len();
    out.resize(bitmap_at + values.len().div_ceil(8), 0);
    for (i, v) in values.iter().enumerate() {
        if v.is_null() {
            out[bitmap_at + i / 8] |= 1 << (i % 8);
        }
    }
    for (v, ty) in values.iter().zip(types) {
        if !v.is_null() {
            encode_payload(v, ty, out)?;
        }
    }
    Ok(())
}

/// Appends `x` as LEB128 (7 bits per byte, high bit = more).
pub fn put_varint(mut x: u64, out: &mut Vec<u8>) {
    while x >= 0x80 {
        out.push((x as u8) | 0x80);
        x >>= 7;
    }
    out.push(x as u8);
}

/// Reads a LEB128 varint at `*pos` (at most 10 bytes, no overflow).
pub fn get_varint(buf: &[u8], pos: &mut usize) -> Result<u64, String> {
    let mut x: u64 = 0;
    for i in 0..10 {
        let b = *buf.get(*pos).ok_or("row is truncated (varint)")?;
        *pos += 1;
        let bits = u64::from(b & 0x7f);
        if i == 9 && bits > 1 {
            return Err("varint overflows 64 bits".to_string());
        }
        x |= bits << (7 * i);
        if b & 0x80 == 0 {
            return Ok(x);
        }
    }
    Err("varint longer than 10 bytes".to_string())
}

fn encode_payload(v: &Value, ty: &ColumnType, out: &mut Vec<u8>) -> Result<(), String> {
    match *ty {
        ColumnType::TinyInt { .. }
        | ColumnType::SmallInt { .. }
        | ColumnType::MediumInt { .. }
        | ColumnType::Int { .. }
        | ColumnType::BigInt { .. } => {
            let x = int_of(v, ty)?;
            out.extend_from_slice(&(x as i64).to_le_bytes()[..int_width(ty)]);
        }
        ColumnType::Decimal { precision, scale } => {
            let (negative, digits) = decimal_of(v, ty, precision, scale)?;
            put_decimal(negative, &digits, out);
        }
        ColumnType::Float => out.extend_from_slice(&f32_of(v, ty)?.to_le_bytes()),
        ColumnType::Double => out.extend_from_slice(&f64_of(v, ty)?.to_le_bytes()),
        ColumnType::Char { .. }
        | ColumnType::Varchar { .. }
        | ColumnType::Text { .. }
        | ColumnType::Blob { .. }
        | ColumnType::Binary { .. }
        | ColumnType::VarBinary { .. } => {
            let bytes = bytes_of(v, ty)?;
            put_varint(bytes.len() as u64, out);
            out.extend_from_slice(bytes);
        }
        ColumnType::Json => {
            // Empty: the place of a column moved off-page (offpage.rs).
            let bytes = bytes_of(v, ty)?;
            let stored = if bytes.is_empty() {
                std::borrow::Cow::Borrowed(bytes)
            } else {
                jsonb::stored_form(bytes)?
            };
            put_varint(stored.len() as u64, out);
            out.extend_from_slice(&stored);
        }
        ColumnType::Date => {
            out.extend_from_slice(&date_of(v, ty)?.pack().to_le_bytes()[..3]);
        }
        ColumnType::DateTime { .. } | ColumnType::Timestamp { .. } => {
            out.extend_from_slice(&datetime_of(v, ty)?.pack().to_le_bytes());
        }
        ColumnType::Year => out.extend_from_slice(&year_of(v, ty)?.to_le_bytes()),
        ColumnType::Time { .. } => out.extend_from_slice(&time_of(v, ty)?.micros().to_le_bytes()),
        ColumnType::Bit { bits } => out.extend_from_slice(&bit_of(v, ty, bits)?.to_le_bytes()),
        ColumnType::Enum { ref members } => put_varint(u64::from(ordinal_of(v, ty, members)?), out),
        ColumnType::Set { ref members } => put_varint(mask_of(v, ty, members)?, out),
    }
    Ok(())
}

/// The column count stored in a row image (to detect rows written under an
/// older schema).
pub fn row_column_count(buf: &[u8]) -> Result<usize, String> {
    let mut pos = 0;
    usize::try_from(get_varint(buf, &mut pos)?).map_err(|_| "column count too large".to_string())
}

/// Decodes a row image written by [`encode_row`] for the same `types`.
pub fn decode_row(buf: &[u8], types: &[ColumnType]) -> Result<Vec<Value>, String> {
    decode_row_typed(buf, types.iter(), None)
}

/// [`decode_row`] over any sequence of column types (a table's columns
/// without collecting their types first: this runs once per row read).
///
/// `wanted`: the columns the reader uses (None = all). A column not wanted
/// comes back as NULL; its bytes are stepped over (bounds still checked)
/// without building a value, which saves a copy per long string a query
/// never looks at.
pub fn decode_row_typed<'a>(
    buf: &[u8],
    types: impl ExactSizeIterator<Item = &'a ColumnType>,
    wanted: Option<&[bool]>,
) -> Result<Vec<Value>, String> {
    decode_columns(buf, types, wanted, false, JsonForm::Printed)
}

/// How a row decode gives JSON columns back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum JsonForm {
    /// The printed text (what every reader of a value expects).
    #[default]
    Printed,
    /// The stored bytes as they are: a binary document, or the printed
    /// text of a row written before binary JSON (`jsonb::is_binary`
    /// tells which). For readers that walk the binary form themselves
    /// (the SQL layer's JSON functions), which saves printing it.
    Stored,
}

/// [`decode_row_typed`] giving JSON columns in the form `json`.
pub fn decode_row_typed_as<'a>(
    buf: &[u8],
    types: impl ExactSizeIterator<Item = &'a ColumnType>,
    wanted: Option<&[bool]>,
    json: JsonForm,
) -> Result<Vec<Value>, String> {
    decode_columns(buf, types, wanted, false, json)
}

/// [`decode_row_prefix`] giving JSON columns in the form `json`.
pub fn decode_row_prefix_as<'a>(
    buf: &[u8],
    types: impl ExactSizeIterator<Item = &'a ColumnType>,
    wanted: Option<&[bool]>,
    json: JsonForm,
) -> Result<Vec<Value>, String> {
    decode_columns(buf, types, wanted, true, json)
}

/// The first `types.len()` columns of a row image that may hold more (a
/// row written after columns were added, read through a definition taken
/// before): the rest is not looked at.
pub fn decode_row_prefix<'a>(
    buf: &[u8],
    types: impl ExactSizeIterator<Item = &'a ColumnType>,
    wanted: Option<&[bool]>,
) -> Result<Vec<Value>, String> {
    decode_columns(buf, types, wanted, true, JsonForm::Printed)
}

fn decode_columns<'a>(
    buf: &[u8],
    types: impl ExactSizeIterator<Item = &'a ColumnType>,
    wanted: Option<&[bool]>,
    prefix: bool,
    json: JsonForm,
) -> Result<Vec<Value>, String> {
    let n = types.len();
    let mut pos = 0;
    let count = get_varint(buf, &mut pos)?;
    let stored = usize::try_from(count).map_err(|_| "column count too large".to_string())?;
    if stored != n && !(prefix && stored > n) {
        return Err(format!("row has {count} columns, table has {n}"));
    }
    let bm_start = pos;
    let bitmap_len = stored.div_ceil(8);
    let bitmap = take(buf, &mut pos, bitmap_len)?;
    if !stored.is_multiple_of(8) {
        if let Some(&last) = bitmap.last() {
            if last >> (stored % 8) != 0 {
                return Err("bad null bitmap padding".to_string());
            }
        }
    }
    let mut values = Vec::with_capacity(n);
    for (i, ty) in types.enumerate() {
        if buf[bm_start + i / 8] & (1 << (i % 8)) != 0 {
            values.push(Value::Null);
        } else if wanted.is_some_and(|w| !w.get(i).copied().unwrap_or(true)) {
            skip_payload(buf, &mut pos, ty)?;
            values.push(Value::Null);
        } else {
            values.push(match (ty, json) {
                (ColumnType::Json, JsonForm::Stored) => {
                    Value::Bytes(string_bytes(buf, &mut pos, ty)?.to_vec())
                }
                _ => decode_payload(buf, &mut pos, ty)?,
            });
        }
    }
    if pos != buf.len() && !prefix {
        return Err(format!("{} bytes after the row", buf.len() - pos));
    }
    Ok(values)
}

fn take<'a>(buf: &'a [u8], pos: &mut usize, n: usize) -> Result<&'a [u8], String> {
    let end = pos
        .checked_add(n)
        .filter(|&e| e <= buf.len())
        .ok_or_else(|| "row is truncated".to_string())?;
    let s = &buf[*pos..end];
    *pos = end;
    Ok(s)
}

/// Little-endian, sign-extended from `bytes.len()` bytes when `signed`.
fn get_int_le(bytes: &[u8], signed: bool) -> i128 {
    let mut raw = [0u8; 8];
    raw[..bytes.len()].copy_from_slice(bytes);
    let x = u64::from_le_bytes(raw);
    let bits = bytes.len() * 8;
    if signed && bits < 64 && (x >> (bits - 1)) & 1 == 1 {
        i128::from(x) - (1i128 << bits)
    } else if signed {
        i128::from(x as i64)
    } else {
        i128::from(x)
    }
}

/// Longest byte string a string column can hold (utf8mb4: 4 bytes a char).
fn max_string_bytes(ty: &ColumnType) -> u64 {
    match *ty {
        ColumnType::Char { len, .. } | ColumnType::Varchar { len, .. } => u64::from(len) * 4,
        ColumnType::Binary { len } | ColumnType::VarBinary { len } => u64::from(len),
        ColumnType::Text { max_bytes, .. } | ColumnType::Blob { max_bytes } => u64::from(max_bytes),
        ColumnType::Json => u64::from(ColumnType::LONG_BYTES),
        _ => 0,
    }
}

/// Steps over one column's bytes: strings by their length, everything
/// else (fixed width, no allocation) by decoding it.
fn skip_payload(buf: &[u8], pos: &mut usize, ty: &ColumnType) -> Result<(), String> {
    match ty {
        ColumnType::Char { .. }
        | ColumnType::Varchar { .. }
        | ColumnType::Text { .. }
        | ColumnType::Blob { .. }
        | ColumnType::Binary { .. }
        | ColumnType::VarBinary { .. }
        | ColumnType::Json => string_bytes(buf, pos, ty).map(drop),
        _ => decode_payload(buf, pos, ty).map(drop),
    }
}

/// A string column's bytes: its length, checked against the type, then
/// the bytes themselves.
fn string_bytes<'a>(buf: &'a [u8], pos: &mut usize, ty: &ColumnType) -> Result<&'a [u8], String> {
    let len = get_varint(buf, pos)?;
    if len > max_string_bytes(ty) {
        return Err(format!("string of {len} bytes exceeds {}", ty.name()));
    }
    let len = usize::try_from(len).map_err(|_| "string too long".to_string())?;
    take(buf, pos, len)
}

fn decode_payload(buf: &[u8], pos: &mut usize, ty: &ColumnType) -> Result<Value, String> {
    Ok(match *ty {
        ColumnType::TinyInt { unsigned }
        | ColumnType::SmallInt { unsigned }
        | ColumnType::MediumInt { unsigned }
        | ColumnType::Int { unsigned }
        | ColumnType::BigInt { unsigned } => {
            let x = get_int_le(take(buf, pos, int_width(ty))?, !unsigned);
            if unsigned {
                Value::UInt(x as u64)
            } else {
                Value::Int(x as i64)
            }
        }
        ColumnType::Decimal { precision, scale } => {
            let (negative, digits) =
                get_decimal(take(buf, pos, decimal_width(precision))?, precision)?;
            Value::Decimal(Decimal::from_fixed_digits(negative, digits, scale))
        }
        ColumnType::Float => {
            let mut raw = [0u8; 4];
            raw.copy_from_slice(take(buf, pos, 4)?);
            let x = f32::from_le_bytes(raw);
            if !x.is_finite() {
                return Err("non-finite float in row".to_string());
            }
            Value::Float(x)
        }
        ColumnType::Double => {
            let mut raw = [0u8; 8];
            raw.copy_from_slice(take(buf, pos, 8)?);
            let x = f64::from_le_bytes(raw);
            if !x.is_finite() {
                return Err("non-finite double in row".to_string());
            }
            Value::Double(x)
        }
        ColumnType::Char { .. }
        | ColumnType::Varchar { .. }
        | ColumnType::Text { .. }
        | ColumnType::Blob { .. }
        | ColumnType::Binary { .. }
        | ColumnType::VarBinary { .. } => {
            let bytes = string_bytes(buf, pos, ty)?;
            if matches!(ty, ColumnType::Char { .. }) && bytes.last() == Some(&b' ') {
                return Err("CHAR value with trailing spaces".to_string());
            }
            Value::Bytes(bytes.to_vec())
        }
        ColumnType::Json => {
            let stored = string_bytes(buf, pos, ty)?;
            if stored.is_empty() {
                // An off-page column's place (offpage.rs fills it).
                Value::Bytes(Vec::new())
            } else {
                Value::Bytes(jsonb::stored_text(stored)?)
            }
        }
        ColumnType::Date => {
            let x = get_int_le(take(buf, pos, 3)?, false) as u32;
            Value::Date(Date::unpack(x).ok_or("bad date in row")?)
        }
        ColumnType::DateTime { .. } | ColumnType::Timestamp { .. } => {
            let x = get_int_le(take(buf, pos, 8)?, false) as u64;
            Value::DateTime(DateTime::unpack(x).ok_or("bad datetime in row")?)
        }
        ColumnType::Year
        | ColumnType::Time { .. }
        | ColumnType::Bit { .. }
        | ColumnType::Enum { .. }
        | ColumnType::Set { .. } => decode_other(buf, pos, ty)?,
    })
}

/// The payloads of YEAR, TIME, BIT, ENUM and SET, out of line so the
/// common types' decoding stays small (it runs for every column of every
/// row read).
#[inline(never)]
fn decode_other(buf: &[u8], pos: &mut usize, ty: &ColumnType) -> Result<Value, String> {
    Ok(match *ty {
        ColumnType::Year => {
            let y = get_int_le(take(buf, pos, 2)?, false) as u64;
            year_of(&Value::UInt(y), ty)?;
            Value::UInt(y)
        }
        ColumnType::Time { .. } => {
            let x = get_int_le(take(buf, pos, 8)?, true) as i64;
            Value::Time(Time::from_micros(x).ok_or("bad time in row")?)
        }
        ColumnType::Bit { bits } => {
            let x = get_int_le(take(buf, pos, 8)?, false) as u64;
            Value::UInt(bit_of(&Value::UInt(x), ty, bits)?)
        }
        ColumnType::Enum { ref members } => member_of(members, get_varint(buf, pos)?)?,
        ColumnType::Set { ref members } => set_of(members, get_varint(buf, pos)?)?,
        _ => return Err(format!("{ty} is not decoded here")),
    })
}

#[cfg(test)]
mod tests {
    use super::super::coerce::coerce;
    use super::super::testutil::{all_types, random_value, Rng};
    use super::*;

    fn table() -> Vec<ColumnType> {
        vec![
            ColumnType::BigInt { unsigned: false },
            ColumnType::TinyInt { unsigned: false },
            ColumnType::MediumInt { unsigned: false },
            ColumnType::MediumInt { unsigned: true },
            ColumnType::Int { unsigned: true },
            ColumnType::SmallInt { unsigned: false },
            ColumnType::Decimal {
                precision: 65,
                scale: 30,
            },
            ColumnType::Decimal {
                precision: 5,
                scale: 2,
            },
            ColumnType::Float,
            ColumnType::Double,
            ColumnType::char(10),
            ColumnType::varchar(100),
            ColumnType::text(65535),
            ColumnType::Blob { max_bytes: 255 },
            ColumnType::Binary { len: 3 },
            ColumnType::VarBinary { len: 10 },
            ColumnType::Date,
            ColumnType::DateTime { fsp: 6 },
            ColumnType::Timestamp { fsp: 0 },
        ]
    }

    fn sample_row() -> Vec<Value> {
        let raw = [
            Value::Int(i64::MIN),
            Value::Int(-128),
            Value::Int(-8388608),
            Value::UInt(16777215),
            Value::UInt(u64::from(u32::MAX)),
            Value::Null,
            Value::text(&format!("-{}.{}", "9".repeat(35), "9".repeat(30))),
            Value::text("-0.05"),
            Value::Double(-0.0),
            Value::Double(1e-310),
            Value::text("héllo  "),
            Value::text(""),
            Value::text("x\0y"),
            Value::Bytes(vec![0, 0xFF, 0x80]),
            Value::text("a"),
            Value::Null,
            Value::text("2024-02-29"),
            Value::text("9999-12-31 23:59:59.999999"),
            Value::text("2038-01-19 03:14:07"),
        ];
        raw.into_iter()
            .zip(table())
            .map(|(v, ty)| coerce(v, &ty, true, "c", 1).unwrap())
            .collect()
    }

    #[test]
    fn row_round_trip() {
        let types = table();
        let row = sample_row();
        let mut buf = Vec::new();
        encode_row(&row, &types, &mut buf);
        let back = decode_row(&buf, &types).unwrap();
        assert_eq!(back, row);
        assert!(matches!(back[8], Value::Float(x) if x == 0.0 && x.is_sign_negative()));
        assert_eq!(back[10], Value::text("héllo"));
        assert_eq!(back[14], Value::Bytes(b"a\0\0".to_vec()));
        assert_eq!(row_column_count(&buf).unwrap(), types.len());
        // All NULL and all-columns-NULL bitmaps.
        let nulls = vec![Value::Null; types.len()];
        let mut buf = Vec::new();
        encode_row(&nulls, &types, &mut buf);
        assert_eq!(buf.len(), 1 + 3);
        assert_eq!(decode_row(&buf, &types).unwrap(), nulls);
        // Empty row.
        let mut buf = Vec::new();
        encode_row(&[], &[], &mut buf);
        assert_eq!(buf, vec![0]);
        assert_eq!(decode_row(&buf, &[]).unwrap(), Vec::<Value>::new());
    }

    #[test]
    fn row_round_trip_randomized() {
        let mut rng = Rng(0x00DD_BA11_5EED);
        let all = all_types();
        for _ in 0..2000 {
            let n = rng.below(12) as usize;
            let types: Vec<ColumnType> = (0..n).map(|_| rng.pick(&all).clone()).collect();
            let row: Vec<Value> = types.iter().map(|t| random_value(&mut rng, t)).collect();
            let mut buf = Vec::new();
            encode_row(&row, &types, &mut buf);
            let back = decode_row(&buf, &types).unwrap();
            assert_eq!(back.len(), row.len());
            for (a, b) in back.iter().zip(&row) {
                // Bit-exact (PartialEq on f64 would equate -0.0 and 0.0).
                match (a, b) {
                    (Value::Double(x), Value::Double(y)) => assert_eq!(x.to_bits(), y.to_bits()),
                    (Value::Float(x), Value::Float(y)) => assert_eq!(x.to_bits(), y.to_bits()),
                    _ => assert_eq!(a, b, "{types:?}"),
                }
            }
        }
    }

    #[test]
    fn json_is_stored_binary_and_old_text_rows_still_read() {
        let types = [ColumnType::Int { unsigned: false }, ColumnType::Json];
        let doc = r#"{"a": [1, 2.5, "x"], "bb": null}"#;
        let mut buf = Vec::new();
        encode_row(&[Value::Int(7), Value::text(doc)], &types, &mut buf);
        // count, bitmap, int, then varint length and a binary document.
        let payload = &buf[1 + 1 + 4 + 1..];
        assert!(jsonb::is_binary(payload), "{payload:?}");
        assert_eq!(jsonb::print(payload).unwrap(), doc);
        let back = decode_row(&buf, &types).unwrap();
        assert_eq!(back, vec![Value::Int(7), Value::text(doc)]);
        // A row written before binary JSON: the printed text, as it was
        // stored then (varint length and the bytes), reads as it is.
        let mut old = vec![2, 0];
        old.extend_from_slice(&7i32.to_le_bytes());
        old.push(doc.len() as u8);
        old.extend_from_slice(doc.as_bytes());
        assert_eq!(decode_row(&old, &types).unwrap(), back);
        // Stored bytes that are neither form are corrupt, not text.
        let mut bad = vec![2, 0];
        bad.extend_from_slice(&7i32.to_le_bytes());
        bad.extend_from_slice(&[2, b' ', b'1']);
        assert!(decode_row(&bad, &types).is_err());
        // A truncated binary document is an error too.
        let mut cut = buf[..buf.len() - 1].to_vec();
        cut[6] -= 1;
        assert!(decode_row(&cut, &types).is_err());
    }

    #[test]
    fn row_compact_sizes() {
        let types = [ColumnType::Int { unsigned: false }, ColumnType::varchar(10)];
        let mut buf = Vec::new();
        encode_row(&[Value::Int(1), Value::text("ab")], &types, &mut buf);
        assert_eq!(buf, vec![2, 0, 1, 0, 0, 0, 2, b'a', b'b']);
    }

    #[test]
    fn row_rejects_mismatches() {
        let types = [ColumnType::Int { unsigned: false }];
        assert!(try_encode_row(&[], &types, &mut Vec::new()).is_err());
        assert!(try_encode_row(&[Value::text("1")], &types, &mut Vec::new()).is_err());
        assert!(try_encode_row(&[Value::Int(1 << 40)], &types, &mut Vec::new()).is_err());
        let mut buf = Vec::new();
        encode_row(&[Value::Int(7)], &types, &mut buf);
        assert!(decode_row(&buf, &[]).is_err());
        assert!(decode_row(&buf, &[types[0].clone(), types[0].clone()]).is_err());
        buf.push(0);
        assert!(decode_row(&buf, &types).is_err(), "trailing byte");
        // Bitmap padding bits must be zero.
        assert!(decode_row(&[1, 0b10], &types).is_err());
        // A string longer than the column allows.
        let vc = [ColumnType::VarBinary { len: 2 }];
        assert!(decode_row(&[1, 0, 3, 1, 2, 3], &vc).is_err());
        assert!(decode_row(&[1, 0, 2, 1, 2], &vc).is_ok());
    }

    #[test]
    fn row_varint() {
        for x in [0u64, 1, 127, 128, 300, u64::from(u32::MAX), u64::MAX] {
            let mut b = Vec::new();
            put_varint(x, &mut b);
            let mut pos = 0;
            assert_eq!(get_varint(&b, &mut pos).unwrap(), x);
            assert_eq!(pos, b.len());
        }
        let mut pos = 0;
        assert!(get_varint(&[0xFF; 11], &mut pos).is_err());
        let mut pos = 0;
        assert!(get_varint(
            &[0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x02],
            &mut pos
        )
        .is_err());
        let mut pos = 0;
        assert!(get_varint(&[0x80], &mut pos).is_err());
    }

    #[test]
    fn row_decode_random_bytes_never_panics() {
        let types = table();
        let mut rng = Rng(0xFEED_FACE_0042);
        let mut good = Vec::new();
        encode_row(&sample_row(), &types, &mut good);
        let mut decoded_ok = 0;
        for round in 0..30_000 {
            let buf: Vec<u8> = if round % 2 == 0 {
                let n = rng.below(80) as usize;
                let mut b: Vec<u8> = (0..n).map(|_| rng.next() as u8).collect();
                if !b.is_empty() {
                    b[0] = types.len() as u8;
                }
                b
            } else {
                // Mutate a valid row: flip bytes, truncate or extend.
                let mut b = good.clone();
                for _ in 0..1 + rng.below(3) {
                    let i = rng.below(b.len() as u64) as usize;
                    b[i] = rng.next() as u8;
                }
                match rng.below(3) {
                    0 => b.truncate(rng.below(b.len() as u64) as usize),
                    1 => b.push(rng.next() as u8),
                    _ => {}
                }
                b
            };
            let k = (rng.below(types.len() as u64) + 1) as usize;
            let tys = if round % 3 == 0 {
                &types[..k]
            } else {
                &types[..]
            };
            if let Ok(values) = decode_row(&buf, tys) {
                decoded_ok += 1;
                // Anything accepted is a valid row of that table.
                let mut again = Vec::new();
                try_encode_row(&values, tys, &mut again).unwrap();
                assert_eq!(decode_row(&again, tys).unwrap(), values);
            }
        }
        assert!(decoded_ok > 0);
    }
}
