//! Column types and row images in MySQL's binary row format.
//!
//! [`binlog_type`] maps a [`ColumnType`] to the `(type code, metadata)` pair
//! a TABLE_MAP_EVENT carries; [`encode_row_image`] writes one row image
//! (NULL bitmap, then the non-NULL values) the way a WRITE/UPDATE/DELETE_ROWS
//! event carries it; [`decode_row_image`] reads it back. The byte layouts are
//! described in the parent module's documentation.

use crate::types::{ColumnType, Date, DateTime, Decimal, Value};

/// MySQL's `enum_field_types` codes used in TABLE_MAP_EVENTs.
pub mod mysql_type {
    pub const TINY: u8 = 1;
    pub const SHORT: u8 = 2;
    pub const LONG: u8 = 3;
    pub const FLOAT: u8 = 4;
    pub const DOUBLE: u8 = 5;
    pub const LONGLONG: u8 = 8;
    pub const INT24: u8 = 9;
    pub const DATE: u8 = 10;
    pub const VARCHAR: u8 = 15;
    pub const TIMESTAMP2: u8 = 17;
    pub const DATETIME2: u8 = 18;
    pub const NEWDECIMAL: u8 = 246;
    pub const BLOB: u8 = 252;
    pub const STRING: u8 = 254;
}

/// The TABLE_MAP type code and per-column metadata of a column type.
///
/// | [`ColumnType`] | code | metadata |
/// |---|---|---|
/// | TINYINT / SMALLINT / MEDIUMINT / INT / BIGINT | 1 / 2 / 9 / 3 / 8 | — |
/// | DECIMAL(M,D) | 246 NEWDECIMAL | `M`, `D` |
/// | FLOAT / DOUBLE | 4 / 5 | pack length 4 / 8 |
/// | CHAR(n) / BINARY(n) | 254 STRING | `real_type ^ ((bytes & 0x300) >> 4)`, `bytes & 0xFF` |
/// | VARCHAR(n) / VARBINARY(n) | 15 VARCHAR | max bytes, u16 LE |
/// | TEXT / BLOB (all sizes) | 252 BLOB | pack length 1..=4 |
/// | DATE | 10 DATE | — |
/// | DATETIME(fsp) | 18 DATETIME2 | fsp |
/// | TIMESTAMP(fsp) | 17 TIMESTAMP2 | fsp |
///
/// CHAR and VARCHAR byte lengths are characters × the character set's
/// maximum bytes per character (4 for utf8mb4).
pub fn binlog_type(ty: &ColumnType) -> (u8, Vec<u8>) {
    use mysql_type as t;
    if let Some(pair) = super::kinds::binlog_type(ty) {
        return pair;
    }
    if *ty == ColumnType::Json {
        return binlog_type(&JSON_AS_BLOB);
    }
    match *ty {
        ColumnType::TinyInt { .. } => (t::TINY, Vec::new()),
        ColumnType::SmallInt { .. } => (t::SHORT, Vec::new()),
        ColumnType::MediumInt { .. } => (t::INT24, Vec::new()),
        ColumnType::Int { .. } => (t::LONG, Vec::new()),
        ColumnType::BigInt { .. } => (t::LONGLONG, Vec::new()),
        ColumnType::Decimal { precision, scale } => (t::NEWDECIMAL, vec![precision, scale]),
        ColumnType::Float => (t::FLOAT, vec![4]),
        ColumnType::Double => (t::DOUBLE, vec![8]),
        ColumnType::Char { .. } | ColumnType::Binary { .. } => {
            let bytes = max_bytes(ty);
            // Field_string::do_save_field_metadata: the two high bits of a
            // length up to 1023 are folded (inverted) into the real-type byte.
            let byte0 = t::STRING ^ (((bytes & 0x300) >> 4) as u8);
            (t::STRING, vec![byte0, (bytes & 0xFF) as u8])
        }
        ColumnType::Varchar { .. } | ColumnType::VarBinary { .. } => {
            let bytes = max_bytes(ty).min(65_535) as u16;
            (t::VARCHAR, bytes.to_le_bytes().to_vec())
        }
        ColumnType::Text { max_bytes, .. } | ColumnType::Blob { max_bytes } => {
            (t::BLOB, vec![blob_pack_len(max_bytes)])
        }
        ColumnType::Date => (t::DATE, Vec::new()),
        ColumnType::DateTime { fsp } => (t::DATETIME2, vec![fsp]),
        ColumnType::Timestamp { fsp } => (t::TIMESTAMP2, vec![fsp]),
        // The types of `kinds`, answered above.
        ColumnType::Year
        | ColumnType::Time { .. }
        | ColumnType::Bit { .. }
        | ColumnType::Enum { .. }
        | ColumnType::Set { .. }
        | ColumnType::Json => (t::STRING, Vec::new()),
    }
}

/// JSON's row-image form: a LONGBLOB of the document text, as MariaDB
/// (whose JSON is LONGTEXT) logs it. MySQL logs type 245 with its binary
/// JSON; a MySQL replica needs that (not written yet).
const JSON_AS_BLOB: ColumnType = ColumnType::Blob {
    max_bytes: ColumnType::LONG_BYTES,
};

/// A text value in its column's character set, as MySQL logs it: latin1
/// columns as cp1252 bytes (quire holds every text as UTF-8); others as is.
fn to_charset<'a>(b: &'a [u8], ty: &ColumnType) -> std::borrow::Cow<'a, [u8]> {
    use crate::types::collation::{cp1252_byte, Charset};
    if ty.collation().map(|c| c.charset()) != Some(Charset::Latin1) {
        return std::borrow::Cow::Borrowed(b);
    }
    let text = String::from_utf8_lossy(b);
    std::borrow::Cow::Owned(
        text.chars()
            .map(|c| cp1252_byte(c).unwrap_or(b'?'))
            .collect(),
    )
}

/// [`to_charset`] undone: latin1 bytes back to UTF-8.
fn from_charset(b: &[u8], ty: &ColumnType) -> Vec<u8> {
    use crate::types::collation::{cp1252_char, Charset};
    if ty.collation().map(|c| c.charset()) != Some(Charset::Latin1) {
        return b.to_vec();
    }
    b.iter()
        .map(|&x| cp1252_char(x))
        .collect::<String>()
        .into_bytes()
}

/// Largest byte length of a string column (0 for other types).
fn max_bytes(ty: &ColumnType) -> u32 {
    match *ty {
        ColumnType::Char { len, .. } | ColumnType::Varchar { len, .. } => {
            len.saturating_mul(ty.max_char_bytes())
        }
        ColumnType::Binary { len } | ColumnType::VarBinary { len } => len,
        ColumnType::Text { max_bytes, .. } | ColumnType::Blob { max_bytes } => max_bytes,
        _ => 0,
    }
}

/// Bytes of the length prefix of a TEXT/BLOB value.
fn blob_pack_len(max_bytes: u32) -> u8 {
    if max_bytes <= ColumnType::TINY_BYTES {
        1
    } else if max_bytes <= ColumnType::REGULAR_BYTES {
        2
    } else if max_bytes <= ColumnType::MEDIUM_BYTES {
        3
    } else {
        4
    }
}

/// Bytes of the length prefix of a CHAR/BINARY/VARCHAR/VARBINARY value.
fn string_pack_len(ty: &ColumnType) -> usize {
    if max_bytes(ty) < 256 {
        1
    } else {
        2
    }
}

// ---------------------------------------------------------------------------
// Bitmaps and packed integers

/// Bytes of a bitmap of `bits` bits.
pub fn bitmap_len(bits: usize) -> usize {
    bits.div_ceil(8)
}

/// Appends MySQL's length-encoded ("packed") integer: one byte below 251,
/// else 0xFC + u16, 0xFD + u24, 0xFE + u64.
pub fn put_packed_int(out: &mut Vec<u8>, v: u64) {
    if v < 251 {
        out.push(v as u8);
    } else if v < 1 << 16 {
        out.push(0xFC);
        out.extend_from_slice(&(v as u16).to_le_bytes());
    } else if v < 1 << 24 {
        out.push(0xFD);
        out.extend_from_slice(&(v as u32).to_le_bytes()[..3]);
    } else {
        out.push(0xFE);
        out.extend_from_slice(&v.to_le_bytes());
    }
}

/// Reads a packed integer from the front of `buf`, advancing it.
pub fn take_packed_int(buf: &mut &[u8]) -> Result<u64, String> {
    let first = *buf.first().ok_or("packed integer is truncated")?;
    let width = match first {
        0..=250 => {
            *buf = &buf[1..];
            return Ok(u64::from(first));
        }
        0xFC => 2,
        0xFD => 3,
        0xFE => 8,
        _ => return Err(format!("bad packed integer prefix {first:#x}")),
    };
    let bytes = buf.get(1..1 + width).ok_or("packed integer is truncated")?;
    let mut raw = [0u8; 8];
    raw[..width].copy_from_slice(bytes);
    *buf = &buf[1 + width..];
    Ok(u64::from_le_bytes(raw))
}

// ---------------------------------------------------------------------------
// DECIMAL: MySQL's decimal2bin / bin2decimal

/// Digits per 4-byte word.
const DIG_PER_WORD: usize = 9;
/// Bytes needed for 0..=9 leftover digits.
const DIG2BYTES: [usize; 10] = [0, 1, 1, 2, 2, 3, 3, 4, 4, 4];

/// Bytes of a `DECIMAL(precision, scale)` value in binary form
/// (`decimal_bin_size`).
pub fn decimal_bin_size(precision: u8, scale: u8) -> usize {
    let intg = usize::from(precision.saturating_sub(scale));
    let frac = usize::from(scale);
    (intg / DIG_PER_WORD) * 4
        + DIG2BYTES[intg % DIG_PER_WORD]
        + (frac / DIG_PER_WORD) * 4
        + DIG2BYTES[frac % DIG_PER_WORD]
}

/// Appends `digits` (ASCII, at most 9) as a big-endian number of `width` bytes.
fn put_digit_group(out: &mut Vec<u8>, digits: &[u8], width: usize, mask: u8) {
    let mut v: u32 = 0;
    for &d in digits {
        v = v * 10 + u32::from(d - b'0');
    }
    let be = v.to_be_bytes();
    out.extend(be[4 - width..].iter().map(|b| b ^ mask));
}

/// Appends `d` as MySQL's binary `DECIMAL(precision, scale)`: the integer
/// digits (left-padded to `precision - scale`) and the fractional digits
/// (right-padded to `scale`) in groups of nine, each group a big-endian
/// 4-byte word; a leading partial integer group and a trailing partial
/// fractional group take only as many bytes as their digits need
/// (1-2 digits: 1 byte, 3-4: 2, 5-6: 3, 7-9: 4). Negative numbers have every
/// byte inverted; finally the top bit of the first byte is flipped, so the
/// bytes compare like the numbers.
pub fn encode_decimal(
    d: &Decimal,
    precision: u8,
    scale: u8,
    out: &mut Vec<u8>,
) -> Result<(), String> {
    if precision == 0 || scale > precision || precision > crate::types::decimal::MAX_PRECISION {
        return Err(format!("bad DECIMAL({precision},{scale})"));
    }
    let text = d.round_to_scale(scale).to_string();
    let negative = text.starts_with('-');
    let unsigned = text.trim_start_matches('-');
    let (int_part, frac_part) = match unsigned.split_once('.') {
        Some((i, f)) => (i, f),
        None => (unsigned, ""),
    };
    let int_part = int_part.trim_start_matches('0');
    let intg = usize::from(precision - scale);
    let frac = usize::from(scale);
    if int_part.len() > intg || frac_part.len() != frac {
        return Err(format!("{text} does not fit DECIMAL({precision},{scale})"));
    }
    let mut int_digits = vec![b'0'; intg - int_part.len()];
    int_digits.extend_from_slice(int_part.as_bytes());
    let mask = if negative { 0xFF } else { 0 };
    let start = out.len();
    let lead = intg % DIG_PER_WORD;
    put_digit_group(out, &int_digits[..lead], DIG2BYTES[lead], mask);
    for group in int_digits[lead..].chunks(DIG_PER_WORD) {
        put_digit_group(out, group, 4, mask);
    }
    let frac_digits = frac_part.as_bytes();
    let full = frac / DIG_PER_WORD * DIG_PER_WORD;
    for group in frac_digits[..full].chunks(DIG_PER_WORD) {
        put_digit_group(out, group, 4, mask);
    }
    let tail = &frac_digits[full..];
    put_digit_group(out, tail, DIG2BYTES[tail.len()], mask);
    if let Some(first) = out.get_mut(start) {
        *first ^= 0x80;
    }
    Ok(())
}

/// Reads a binary `DECIMAL(precision, scale)` from the front of `buf`.
pub fn decode_decimal(buf: &[u8], precision: u8, scale: u8) -> Result<(Decimal, usize), String> {
    if precision == 0 || scale > precision {
        return Err(format!("bad DECIMAL({precision},{scale})"));
    }
    let size = decimal_bin_size(precision, scale);
    let raw = buf.get(..size).ok_or("DECIMAL value is truncated")?;
    let mut bytes = raw.to_vec();
    let negative = bytes.first().is_some_and(|b| b & 0x80 == 0);
    if let Some(first) = bytes.first_mut() {
        *first ^= 0x80;
    }
    if negative {
        for b in &mut bytes {
            *b = !*b;
        }
    }
    let intg = usize::from(precision - scale);
    let frac = usize::from(scale);
    let mut text = String::new();
    if negative {
        text.push('-');
    }
    let mut rest: &[u8] = &bytes;
    let mut group = |digits: usize, text: &mut String| -> Result<(), String> {
        let width = if digits == DIG_PER_WORD {
            4
        } else {
            DIG2BYTES[digits]
        };
        if width == 0 {
            return Ok(());
        }
        let src = rest.get(..width).ok_or("DECIMAL value is truncated")?;
        let mut be = [0u8; 4];
        be[4 - width..].copy_from_slice(src);
        rest = &rest[width..];
        let v = u32::from_be_bytes(be);
        if u64::from(v) >= 10u64.pow(digits as u32) {
            return Err("DECIMAL digit group out of range".to_string());
        }
        text.push_str(&format!("{v:0digits$}"));
        Ok(())
    };
    group(intg % DIG_PER_WORD, &mut text)?;
    for _ in 0..intg / DIG_PER_WORD {
        group(DIG_PER_WORD, &mut text)?;
    }
    if intg == 0 {
        text.push('0');
    }
    if frac > 0 {
        text.push('.');
        for _ in 0..frac / DIG_PER_WORD {
            group(DIG_PER_WORD, &mut text)?;
        }
        group(frac % DIG_PER_WORD, &mut text)?;
    }
    let d: Decimal = text
        .parse()
        .map_err(|e| format!("bad DECIMAL text {text}: {e}"))?;
    Ok((d.round_to_scale(scale), size))
}

// ---------------------------------------------------------------------------
// Temporal values

/// Days since 1970-01-01 of a proleptic Gregorian date.
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = if month > 2 { month - 3 } else { month + 9 };
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Inverse of [`days_from_civil`]: (year, month, day).
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = if z >= 0 { z } else { z - 146_096 } / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// Seconds since the epoch of a TIMESTAMP literal read as UTC.
pub fn timestamp_seconds(t: &DateTime) -> i64 {
    let days = days_from_civil(i64::from(t.year), i64::from(t.month), i64::from(t.day));
    days * 86_400 + i64::from(t.hour) * 3_600 + i64::from(t.minute) * 60 + i64::from(t.second)
}

/// Bytes of the fractional part of DATETIME2/TIMESTAMP2 for `fsp`.
fn frac_len(fsp: u8) -> usize {
    usize::from(fsp.min(6)).div_ceil(2)
}

/// Appends the fractional-seconds part: fsp 1-2 one byte (1/100 s),
/// 3-4 two bytes big-endian (1/10000 s), 5-6 three bytes big-endian (µs).
fn put_frac(out: &mut Vec<u8>, micro: u32, fsp: u8) {
    match frac_len(fsp) {
        1 => out.push((micro / 10_000) as u8),
        2 => out.extend_from_slice(&((micro / 100) as u16).to_be_bytes()),
        3 => out.extend_from_slice(&micro.to_be_bytes()[1..]),
        _ => {}
    }
}

fn take_frac(buf: &[u8], fsp: u8) -> Result<u32, String> {
    let n = frac_len(fsp);
    let b = buf.get(..n).ok_or("fractional seconds are truncated")?;
    let micro = match n {
        1 => u32::from(b[0]) * 10_000,
        2 => u32::from(u16::from_be_bytes([b[0], b[1]])) * 100,
        3 => u32::from_be_bytes([0, b[0], b[1], b[2]]),
        _ => 0,
    };
    if micro > 999_999 {
        return Err("fractional seconds out of range".to_string());
    }
    Ok(micro)
}

/// Offset added to the 40-bit DATETIME2 integer part (`DATETIMEF_INT_OFS`).
const DATETIMEF_INT_OFS: u64 = 0x80_0000_0000;

/// Appends DATETIME2: 5 bytes big-endian of
/// `((year×13 + month) << 22 | day << 17 | hour << 12 | minute << 6 | second)
/// + 0x8000000000`, then the fraction.
fn put_datetime2(out: &mut Vec<u8>, t: &DateTime, fsp: u8) {
    let ym = u64::from(t.year) * 13 + u64::from(t.month);
    let ymd = (ym << 5) | u64::from(t.day);
    let hms = (u64::from(t.hour) << 12) | (u64::from(t.minute) << 6) | u64::from(t.second);
    let int_part = ((ymd << 17) | hms) + DATETIMEF_INT_OFS;
    out.extend_from_slice(&int_part.to_be_bytes()[3..]);
    put_frac(out, t.micro, fsp);
}

fn take_datetime2(buf: &[u8], fsp: u8) -> Result<(DateTime, usize), String> {
    let b = buf.get(..5).ok_or("DATETIME2 value is truncated")?;
    let mut raw = [0u8; 8];
    raw[3..].copy_from_slice(b);
    let int_part = u64::from_be_bytes(raw)
        .checked_sub(DATETIMEF_INT_OFS)
        .ok_or("negative DATETIME2 value")?;
    let micro = take_frac(&buf[5..], fsp)?;
    let hms = int_part & 0x1_FFFF;
    let ymd = int_part >> 17;
    let ym = ymd >> 5;
    let t = DateTime::new(
        (ym / 13) as u32,
        (ym % 13) as u32,
        (ymd & 31) as u32,
        (hms >> 12) as u32,
        ((hms >> 6) & 63) as u32,
        (hms & 63) as u32,
        micro,
    )
    .ok_or("invalid DATETIME2 value")?;
    Ok((t, 5 + frac_len(fsp)))
}

fn take_timestamp2(buf: &[u8], fsp: u8) -> Result<(DateTime, usize), String> {
    let b = buf.get(..4).ok_or("TIMESTAMP2 value is truncated")?;
    let secs = i64::from(u32::from_be_bytes([b[0], b[1], b[2], b[3]]));
    let micro = take_frac(&buf[4..], fsp)?;
    let (y, m, d) = civil_from_days(secs.div_euclid(86_400));
    let sod = secs.rem_euclid(86_400);
    let t = DateTime::new(
        y as u32,
        m as u32,
        d as u32,
        (sod / 3600) as u32,
        (sod / 60 % 60) as u32,
        (sod % 60) as u32,
        micro,
    )
    .ok_or("invalid TIMESTAMP2 value")?;
    Ok((t, 4 + frac_len(fsp)))
}

// ---------------------------------------------------------------------------
// Row images

fn int_of(v: &Value) -> Option<i128> {
    match v {
        Value::Int(i) => Some(i128::from(*i)),
        Value::UInt(u) => Some(i128::from(*u)),
        _ => None,
    }
}

fn mismatch(v: &Value, ty: &ColumnType) -> String {
    format!("value {v:?} does not match column type {ty}")
}

/// A JSON value as its row-image LONGBLOB: always the printed document.
/// Rows hand the engine's values over as text; a value still in the
/// stored binary form (types/jsonb.rs) is printed first, so no binary
/// bytes reach mariadb-binlog or a replica.
fn encode_json(v: &Value, out: &mut Vec<u8>) -> Result<(), String> {
    match v {
        Value::Bytes(b) if crate::types::jsonb::is_binary(b) => {
            let text = crate::types::jsonb::print(b)?;
            encode_value(&Value::Bytes(text.into_bytes()), &JSON_AS_BLOB, out)
        }
        _ => encode_value(v, &JSON_AS_BLOB, out),
    }
}

/// Appends one non-NULL value in binary row format.
pub fn encode_value(v: &Value, ty: &ColumnType, out: &mut Vec<u8>) -> Result<(), String> {
    if super::kinds::encode_value(v, ty, out)? {
        return Ok(());
    }
    if *ty == ColumnType::Json {
        return encode_json(v, out);
    }
    match *ty {
        ColumnType::TinyInt { .. }
        | ColumnType::SmallInt { .. }
        | ColumnType::MediumInt { .. }
        | ColumnType::Int { .. }
        | ColumnType::BigInt { .. } => {
            let i = int_of(v).ok_or_else(|| mismatch(v, ty))?;
            let (lo, hi) = ty.integer_range().ok_or_else(|| mismatch(v, ty))?;
            if i < lo || i > hi {
                return Err(format!("{i} is out of range for {ty}"));
            }
            let width = match ty {
                ColumnType::TinyInt { .. } => 1,
                ColumnType::SmallInt { .. } => 2,
                ColumnType::MediumInt { .. } => 3,
                ColumnType::Int { .. } => 4,
                _ => 8,
            };
            // Two's complement, little-endian, truncated to the width.
            out.extend_from_slice(&(i as u64).to_le_bytes()[..width]);
        }
        ColumnType::Decimal { precision, scale } => {
            let d = match v {
                Value::Decimal(d) => d.clone(),
                Value::Int(i) => Decimal::from_i64(*i),
                Value::UInt(u) => Decimal::from_u64(*u),
                _ => return Err(mismatch(v, ty)),
            };
            encode_decimal(&d, precision, scale, out)?;
        }
        ColumnType::Float => {
            let f = match v {
                Value::Float(f) => *f,
                Value::Double(d) => *d as f32,
                _ => return Err(mismatch(v, ty)),
            };
            out.extend_from_slice(&f.to_le_bytes());
        }
        ColumnType::Double => {
            let f = match v {
                Value::Double(d) => *d,
                Value::Float(f) => f64::from(*f),
                _ => return Err(mismatch(v, ty)),
            };
            out.extend_from_slice(&f.to_le_bytes());
        }
        ColumnType::Char { .. }
        | ColumnType::Varchar { .. }
        | ColumnType::Binary { .. }
        | ColumnType::VarBinary { .. } => {
            let Value::Bytes(b) = v else {
                return Err(mismatch(v, ty));
            };
            let b = &*to_charset(b, ty);
            if b.len() as u64 > u64::from(max_bytes(ty)) {
                return Err(format!("{} bytes are too long for {ty}", b.len()));
            }
            if string_pack_len(ty) == 1 {
                out.push(b.len() as u8);
            } else {
                out.extend_from_slice(&(b.len() as u16).to_le_bytes());
            }
            out.extend_from_slice(b);
        }
        ColumnType::Text { max_bytes, .. } | ColumnType::Blob { max_bytes } => {
            let Value::Bytes(b) = v else {
                return Err(mismatch(v, ty));
            };
            let b = &*to_charset(b, ty);
            let pack = usize::from(blob_pack_len(max_bytes));
            let limit: u64 = (1u64 << (8 * pack)) - 1;
            if b.len() as u64 > limit.min(u64::from(max_bytes)) {
                return Err(format!("{} bytes are too long for {ty}", b.len()));
            }
            out.extend_from_slice(&(b.len() as u64).to_le_bytes()[..pack]);
            out.extend_from_slice(b);
        }
        ColumnType::Date => {
            let d = match v {
                Value::Date(d) => *d,
                _ => return Err(mismatch(v, ty)),
            };
            // Field_newdate: day | month << 5 | year << 9, 3 bytes LE.
            let packed = u32::from(d.day) | (u32::from(d.month) << 5) | (u32::from(d.year) << 9);
            out.extend_from_slice(&packed.to_le_bytes()[..3]);
        }
        ColumnType::DateTime { fsp } => {
            let t = match v {
                Value::DateTime(t) => *t,
                Value::Date(d) => d.to_datetime(),
                _ => return Err(mismatch(v, ty)),
            };
            put_datetime2(out, &t, fsp);
        }
        ColumnType::Year
        | ColumnType::Time { .. }
        | ColumnType::Bit { .. }
        | ColumnType::Enum { .. }
        | ColumnType::Set { .. }
        | ColumnType::Json => return Err(format!("{ty} is written above")),
        ColumnType::Timestamp { fsp } => {
            let t = match v {
                Value::DateTime(t) => *t,
                Value::Date(d) => d.to_datetime(),
                _ => return Err(mismatch(v, ty)),
            };
            let secs = timestamp_seconds(&t);
            let secs = u32::try_from(secs)
                .map_err(|_| format!("{} is outside the TIMESTAMP range", t.format_fsp(fsp)))?;
            out.extend_from_slice(&secs.to_be_bytes());
            put_frac(out, t.micro, fsp);
        }
    }
    Ok(())
}

/// Appends one full row image (binlog_row_image=FULL): a NULL bitmap with
/// one bit per column (bit `i % 8` of byte `i / 8`, set = NULL), then every
/// non-NULL value in column order.
pub fn encode_row_image(
    values: &[Value],
    types: &[ColumnType],
    out: &mut Vec<u8>,
) -> Result<(), String> {
    encode_partial_image(values, types, None, out)
}

/// Appends one row image of the columns in `present` (every column when
/// None; binlog_row_image MINIMAL and NOBLOB leave some out): a NULL
/// bitmap with one bit per *present* column, then the present non-NULL
/// values in column order.
pub fn encode_partial_image(
    values: &[Value],
    types: &[ColumnType],
    present: Option<&[bool]>,
    out: &mut Vec<u8>,
) -> Result<(), String> {
    if let Some(p) = present {
        if p.len() != types.len() {
            return Err(format!(
                "image bitmap has {} columns for {} types",
                p.len(),
                types.len()
            ));
        }
    }
    if values.len() != types.len() {
        return Err(format!(
            "row has {} values for {} columns",
            values.len(),
            types.len()
        ));
    }
    let is_present = |i: usize| present.is_none_or(|p| p[i]);
    let n_present = (0..types.len()).filter(|&i| is_present(i)).count();
    let bitmap_at = out.len();
    out.resize(bitmap_at + bitmap_len(n_present), 0);
    let mut bit = 0usize;
    for (i, (v, ty)) in values.iter().zip(types).enumerate() {
        if !is_present(i) {
            continue;
        }
        if v.is_null() {
            out[bitmap_at + bit / 8] |= 1 << (bit % 8);
        } else {
            encode_value(v, ty, out)?;
        }
        bit += 1;
    }
    Ok(())
}

fn take<'a>(buf: &'a [u8], n: usize, what: &str) -> Result<&'a [u8], String> {
    buf.get(..n).ok_or_else(|| format!("{what} is truncated"))
}

/// Reads one non-NULL value; returns it and the bytes consumed.
pub fn decode_value(buf: &[u8], ty: &ColumnType) -> Result<(Value, usize), String> {
    if let Some(decoded) = super::kinds::decode_value(buf, ty)? {
        return Ok(decoded);
    }
    if *ty == ColumnType::Json {
        return decode_value(buf, &JSON_AS_BLOB);
    }
    let int = |width: usize, unsigned: bool| -> Result<(Value, usize), String> {
        let b = take(buf, width, "integer")?;
        let mut raw = [0u8; 8];
        raw[..width].copy_from_slice(b);
        let u = u64::from_le_bytes(raw);
        if unsigned {
            Ok((Value::UInt(u), width))
        } else {
            let shift = 64 - 8 * width as u32;
            Ok((Value::Int(((u << shift) as i64) >> shift), width))
        }
    };
    match *ty {
        ColumnType::TinyInt { unsigned } => int(1, unsigned),
        ColumnType::SmallInt { unsigned } => int(2, unsigned),
        ColumnType::MediumInt { unsigned } => int(3, unsigned),
        ColumnType::Int { unsigned } => int(4, unsigned),
        ColumnType::BigInt { unsigned } => int(8, unsigned),
        ColumnType::Decimal { precision, scale } => {
            let (d, n) = decode_decimal(buf, precision, scale)?;
            Ok((Value::Decimal(d), n))
        }
        ColumnType::Float => {
            let b = take(buf, 4, "FLOAT")?;
            Ok((
                Value::Float(f32::from_le_bytes([b[0], b[1], b[2], b[3]])),
                4,
            ))
        }
        ColumnType::Double => {
            let b = take(buf, 8, "DOUBLE")?;
            let mut raw = [0u8; 8];
            raw.copy_from_slice(b);
            Ok((Value::Double(f64::from_le_bytes(raw)), 8))
        }
        ColumnType::Char { .. }
        | ColumnType::Varchar { .. }
        | ColumnType::Binary { .. }
        | ColumnType::VarBinary { .. }
        | ColumnType::Text { .. }
        | ColumnType::Blob { .. } => {
            let pack = match *ty {
                ColumnType::Text { max_bytes, .. } | ColumnType::Blob { max_bytes } => {
                    usize::from(blob_pack_len(max_bytes))
                }
                _ => string_pack_len(ty),
            };
            let b = take(buf, pack, "string length")?;
            let mut raw = [0u8; 8];
            raw[..pack].copy_from_slice(b);
            let len = usize::try_from(u64::from_le_bytes(raw))
                .map_err(|_| "string length overflows".to_string())?;
            let end = pack.checked_add(len).ok_or("string length overflows")?;
            let data = buf.get(pack..end).ok_or("string value is truncated")?;
            Ok((Value::Bytes(from_charset(data, ty)), end))
        }
        ColumnType::Date => {
            let b = take(buf, 3, "DATE")?;
            let packed = u32::from_le_bytes([b[0], b[1], b[2], 0]);
            let d = Date::new(packed >> 9, (packed >> 5) & 15, packed & 31)
                .ok_or("invalid DATE value")?;
            Ok((Value::Date(d), 3))
        }
        ColumnType::DateTime { fsp } => {
            let (t, n) = take_datetime2(buf, fsp)?;
            Ok((Value::DateTime(t), n))
        }
        ColumnType::Year
        | ColumnType::Time { .. }
        | ColumnType::Bit { .. }
        | ColumnType::Enum { .. }
        | ColumnType::Set { .. }
        | ColumnType::Json => Err(format!("{ty} is read above")),
        ColumnType::Timestamp { fsp } => {
            let (t, n) = take_timestamp2(buf, fsp)?;
            Ok((Value::DateTime(t), n))
        }
    }
}

/// Reads one full row image written by [`encode_row_image`]; returns the
/// values and the bytes consumed.
/// Reads a row image of the columns in `present` (None for absent ones).
pub fn decode_partial_image(
    buf: &[u8],
    types: &[ColumnType],
    present: &[bool],
) -> Result<(Vec<Option<Value>>, usize), String> {
    let n_present = present.iter().filter(|&&p| p).count();
    let nb = bitmap_len(n_present);
    let bitmap = take(buf, nb, "NULL bitmap")?;
    let mut at = nb;
    let mut bit = 0usize;
    let mut values = Vec::with_capacity(types.len());
    for (ty, &p) in types.iter().zip(present) {
        if !p {
            values.push(None);
            continue;
        }
        if bitmap[bit / 8] & (1 << (bit % 8)) != 0 {
            values.push(Some(Value::Null));
        } else {
            let rest = buf.get(at..).ok_or("row image is truncated")?;
            let (v, n) = decode_value(rest, ty)?;
            values.push(Some(v));
            at += n;
        }
        bit += 1;
    }
    Ok((values, at))
}

pub fn decode_row_image(buf: &[u8], types: &[ColumnType]) -> Result<(Vec<Value>, usize), String> {
    let nb = bitmap_len(types.len());
    let bitmap = take(buf, nb, "NULL bitmap")?;
    let mut at = nb;
    let mut values = Vec::with_capacity(types.len());
    for (i, ty) in types.iter().enumerate() {
        if bitmap[i / 8] & (1 << (i % 8)) != 0 {
            values.push(Value::Null);
        } else {
            let rest = buf.get(at..).ok_or("row image is truncated")?;
            let (v, n) = decode_value(rest, ty)?;
            values.push(v);
            at += n;
        }
    }
    Ok((values, at))
}
