//! # Storing a value into a column: strict-mode coercion
//!
//! [`coerce`] turns any [`Value`] into the canonical value of a column type
//! (see the table in [`value`](super::value)) or fails with the error MySQL
//! 8.0 raises for an `INSERT`/`UPDATE` under the default `sql_mode`
//! (`STRICT_TRANS_TABLES`, `NO_ZERO_IN_DATE`, `NO_ZERO_DATE`). The rules
//! mirror `Field_*::store()` in MySQL's `sql/field.cc`:
//!
//! | target | source | result |
//! |---|---|---|
//! | any | NULL into NOT NULL | **1048** (23000) `Column 'c' cannot be null` |
//! | integer | integer/decimal/double/date | rounded (decimal: half away from zero; double: `rint`, half to even), then range-checked: **1264** (22003) `Out of range value for column 'c' at row N` |
//! | integer | string | `strntoull10rnd`: leading space, sign, digits, `.fraction`, `e±exp`, rounded half away from zero (`'4.5'` → 5, `' 42 '` → 42, `'1e3'` → 1000). No number at all (`'abc'`, `''`): **1366** (HY000) `Incorrect integer value: 'abc' for column 'c' at row N`; out of range: 1264 (checked first); trailing non-space garbage (`'12abc'`): **1265** (01000) `Data truncated for column 'c' at row N` |
//! | DECIMAL | number/date | rounded half away from zero to the scale (MySQL only notes this); too many integer digits: 1264 |
//! | DECIMAL | string | the whole string (surrounding whitespace allowed) must be a number with at most 81 digits, else **1366** `Incorrect decimal value: '…' …`; then as above |
//! | FLOAT/DOUBLE | number/date | NaN, ±inf, or beyond `FLT_MAX` for FLOAT: 1264; FLOAT keeps f32 precision |
//! | FLOAT/DOUBLE | string | `my_strntod`: no number or any trailing byte (even a space, as in MySQL): **1265**; overflow: 1264 |
//! | CHAR/VARCHAR/TEXT | any | numbers become their text, dates `YYYY-MM-DD[ hh:mm:ss[.ffffff]]`; bytes must be UTF-8, else **1366** `Incorrect string value: '\xFF…' for column 'c' at row N`; longer than the column (characters for CHAR/VARCHAR, bytes for TEXT): **1406** (22001) `Data too long for column 'c' at row N` unless the excess is only spaces (then cut, as MySQL does with a note). CHAR values are stored without trailing spaces |
//! | BINARY/VARBINARY/BLOB | any | as above, lengths in bytes, no UTF-8 check, any excess byte is 1406; BINARY(n) is right-padded with 0x00 to n bytes |
//! | DATE | string/number/date | see [`datetime`](super::datetime) for accepted forms; invalid, zero or zero-part dates: **1292** (22007) `Incorrect date value: '…' for column 'c' at row N`; a time part is dropped |
//! | DATETIME/TIMESTAMP | string/number/date | as DATE, message `Incorrect datetime value`; fraction rounded half up to `fsp`; TIMESTAMP outside `1970-01-01 00:00:01` ..= `2038-01-19 03:14:07.999999`: 1292 |
//! | numeric | DATE/DATETIME | `YYYYMMDD` / `YYYYMMDDhhmmss[.ffffff]` |
//!
//! Values in messages are shown like MySQL's `ErrConvString`: the text, with
//! invalid UTF-8 bytes as `\xHH`, cut to 128 characters.
//!
//! Deviations: a DECIMAL or DOUBLE stored into a string column becomes its
//! exact text (`1.50`, DOUBLE shortest text), where MySQL formats decimals
//! through a double (`1.5`) and sizes double text to the column width.
//! Notes/warnings (rounding, truncated spaces) are not reported.

use crate::error::EngineError;

use super::coerce_kinds;
use super::datetime::{number_to_temporal, parse_temporal, Date, DateTime, TemporalParts};
use super::decimal::{Decimal, DecimalError, MAX_PARSE_DIGITS};
pub use super::store_err::{
    err_bad_null, err_bad_temporal, err_data_too_long, err_data_truncated, err_incorrect_value,
    err_no_default, err_out_of_range,
};
use super::store_err::{shown, shown_value};
use super::value::{
    format_double, format_float, scan_float_prefix, temporal_number, time_number, Value,
};
use super::ColumnType;

/// MySQL's `check_string_copy_error` rendering of the first bad sequence:
/// up to 6 bytes, printable ASCII as-is, others `\xHH`, `...` if more.
fn bad_string_excerpt(bytes: &[u8], pos: usize) -> String {
    let end = (pos + 6).min(bytes.len());
    let mut out = String::new();
    for &b in &bytes[pos..end] {
        if (0x20..=0x7f).contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("\\x{b:02X}"));
        }
    }
    if end < bytes.len() {
        out.push_str("...");
    }
    out
}

struct Target<'a> {
    column: &'a str,
    row: u64,
}

impl Target<'_> {
    fn out_of_range(&self) -> EngineError {
        err_out_of_range(self.column, self.row)
    }
}

/// Converts `value` for storage in a column of type `ty` (see the module
/// docs). `column` and `row` (1-based, as MySQL counts rows of a multi-row
/// INSERT) only feed the error messages.
pub fn coerce(
    value: Value,
    ty: &ColumnType,
    nullable: bool,
    column: &str,
    row: u64,
) -> Result<Value, EngineError> {
    if value.is_null() {
        return if nullable {
            Ok(Value::Null)
        } else {
            Err(err_bad_null(column))
        };
    }
    let t = Target { column, row };
    let at = coerce_kinds::At { column, row };
    match *ty {
        ColumnType::TinyInt { .. }
        | ColumnType::SmallInt { .. }
        | ColumnType::MediumInt { .. }
        | ColumnType::Int { .. }
        | ColumnType::BigInt { .. } => to_integer(value, ty, &t),
        ColumnType::Decimal { precision, scale } => to_decimal(value, precision, scale, &t),
        ColumnType::Float => {
            let v = to_double(value, &t)?;
            if v.abs() > f64::from(f32::MAX) {
                return Err(t.out_of_range());
            }
            Ok(Value::Float(v as f32))
        }
        ColumnType::Double => Ok(Value::Double(to_double(value, &t)?)),
        ColumnType::Char { .. } | ColumnType::Varchar { .. } | ColumnType::Text { .. } => {
            to_text(value, ty, &t)
        }
        ColumnType::Binary { .. } | ColumnType::VarBinary { .. } | ColumnType::Blob { .. } => {
            to_binary(value, ty, &t)
        }
        ColumnType::Date => to_date(value, &t),
        ColumnType::DateTime { fsp } => to_datetime(value, fsp, false, &t),
        ColumnType::Timestamp { fsp } => to_datetime(value, fsp, true, &t),
        ColumnType::Time { fsp } => coerce_kinds::to_time(&value, fsp, &at),
        ColumnType::Year => coerce_kinds::to_year(&value, &at),
        ColumnType::Bit { bits } => coerce_kinds::to_bit(&value, bits, &at),
        ColumnType::Enum { ref members } => coerce_kinds::to_enum(&value, members, &at),
        ColumnType::Set { ref members } => coerce_kinds::to_set(&value, members, &at),
        ColumnType::Json => coerce_kinds::to_json(&value, &at),
    }
}

fn to_integer(value: Value, ty: &ColumnType, t: &Target) -> Result<Value, EngineError> {
    let (min, max) = ty
        .integer_range()
        .ok_or_else(|| EngineError::internal("not an integer type"))?;
    let mut trailing_garbage = false;
    let v: i128 = match &value {
        Value::Int(x) => i128::from(*x),
        Value::UInt(x) => i128::from(*x),
        Value::Decimal(d) => d.to_i128_round().ok_or_else(|| t.out_of_range())?,
        Value::Float(x) => double_to_i128(f64::from(*x)).ok_or_else(|| t.out_of_range())?,
        Value::Double(x) => double_to_i128(*x).ok_or_else(|| t.out_of_range())?,
        Value::Bytes(b) => match Decimal::parse_prefix(b) {
            Err(DecimalError::BadNumber) => {
                return Err(err_incorrect_value("integer", &shown(b), t.column, t.row))
            }
            Err(_) => return Err(t.out_of_range()),
            Ok(p) => {
                trailing_garbage = !b[p.consumed..].iter().all(|c| c.is_ascii_whitespace());
                p.value.to_i128_round().ok_or_else(|| t.out_of_range())?
            }
        },
        Value::Date(d) => i128::from(d.to_number()),
        Value::DateTime(dt) => {
            let rounded = dt.round_to_fsp(0).unwrap_or(*dt);
            i128::from(rounded.to_number())
        }
        Value::Time(tm) => i128::from(tm.round_to_fsp(0).unwrap_or(*tm).to_number()),
        Value::Null => return Ok(Value::Null),
    };
    if v < min || v > max {
        return Err(t.out_of_range());
    }
    if trailing_garbage {
        return Err(err_data_truncated(t.column, t.row));
    }
    Ok(if min < 0 {
        Value::Int(v as i64)
    } else {
        Value::UInt(v as u64)
    })
}

/// `rint()` then widen; `None` for NaN/inf.
fn double_to_i128(x: f64) -> Option<i128> {
    if !x.is_finite() {
        return None;
    }
    // Saturating cast: anything beyond i128 is out of every column range.
    Some(x.round_ties_even() as i128)
}

fn to_decimal(value: Value, precision: u8, scale: u8, t: &Target) -> Result<Value, EngineError> {
    let d = match &value {
        Value::Int(x) => Decimal::from_i64(*x),
        Value::UInt(x) => Decimal::from_u64(*x),
        Value::Decimal(d) => d.clone(),
        Value::Float(x) => Decimal::from_f64(f64::from(*x)).ok_or_else(|| t.out_of_range())?,
        Value::Double(x) => Decimal::from_f64(*x).ok_or_else(|| t.out_of_range())?,
        Value::Bytes(b) => {
            let bad = || err_incorrect_value("decimal", &shown(b), t.column, t.row);
            let p = Decimal::parse_prefix(b).map_err(|_| bad())?;
            if !b[p.consumed..].iter().all(|c| c.is_ascii_whitespace())
                || p.lost_digits
                || p.value.total_digits() > MAX_PARSE_DIGITS
            {
                return Err(bad());
            }
            p.value
        }
        Value::Date(d) => Decimal::from_u64(d.to_number()),
        Value::DateTime(dt) => temporal_number(dt),
        Value::Time(tm) => time_number(tm),
        Value::Null => return Ok(Value::Null),
    };
    let rounded = d.round_to_scale(scale);
    if !rounded.fits(precision, scale) {
        return Err(t.out_of_range());
    }
    Ok(Value::Decimal(rounded))
}

fn to_double(value: Value, t: &Target) -> Result<f64, EngineError> {
    let v = match &value {
        Value::Int(x) => *x as f64,
        Value::UInt(x) => *x as f64,
        Value::Decimal(d) => d.to_f64(),
        Value::Float(x) => f64::from(*x),
        Value::Double(x) => *x,
        Value::Bytes(b) => {
            let Some((text, used)) = scan_float_prefix(b) else {
                return Err(err_data_truncated(t.column, t.row));
            };
            let v: f64 = text
                .parse()
                .map_err(|_| err_data_truncated(t.column, t.row))?;
            if !v.is_finite() {
                return Err(t.out_of_range());
            }
            if used != b.len() {
                return Err(err_data_truncated(t.column, t.row));
            }
            v
        }
        Value::Date(d) => d.to_number() as f64,
        Value::DateTime(dt) => temporal_number(dt).to_f64(),
        Value::Time(tm) => tm.to_f64(),
        Value::Null => 0.0,
    };
    if !v.is_finite() {
        return Err(t.out_of_range());
    }
    Ok(v)
}

/// The text a non-string value becomes in a string column.
fn value_text(value: Value) -> Vec<u8> {
    match value {
        Value::Bytes(b) => b,
        Value::Float(x) => format_float(x).into_bytes(),
        Value::Double(x) => format_double(x).into_bytes(),
        other => other.to_string().into_bytes(),
    }
}

fn is_space(b: u8) -> bool {
    b == b' '
}

fn to_text(value: Value, ty: &ColumnType, t: &Target) -> Result<Value, EngineError> {
    let mut bytes = value_text(value);
    if let Err(e) = std::str::from_utf8(&bytes) {
        let excerpt = bad_string_excerpt(&bytes, e.valid_up_to());
        return Err(err_incorrect_value("string", &excerpt, t.column, t.row));
    }
    let charset = ty.collation().map(|c| c.charset());
    if let Some(cs) = charset {
        let text = String::from_utf8_lossy(&bytes);
        if let Some((at, _)) = cs.unrepresentable(&text) {
            let excerpt = bad_string_excerpt(&bytes, at);
            return Err(err_incorrect_value("string", &excerpt, t.column, t.row));
        }
    }
    // A single-byte character set counts TEXT limits in characters.
    let single_byte = charset.is_some_and(|cs| cs.max_len() == 1);
    // Byte offset where the allowed length ends, if the value is longer.
    let cut: Option<usize> = match *ty {
        ColumnType::Char { len, .. } | ColumnType::Varchar { len, .. } => {
            // Find the byte offset of character number `len`.
            std::str::from_utf8(&bytes)
                .ok()
                .and_then(|s| s.char_indices().nth(len as usize).map(|(i, _)| i))
        }
        ColumnType::Text { max_bytes, .. } if single_byte => std::str::from_utf8(&bytes)
            .ok()
            .and_then(|s| s.char_indices().nth(max_bytes as usize).map(|(i, _)| i)),
        ColumnType::Text { max_bytes, .. } => {
            if bytes.len() as u64 > u64::from(max_bytes) {
                // Largest character boundary within the limit.
                let mut i = max_bytes as usize;
                while i > 0 && (bytes[i] & 0xC0) == 0x80 {
                    i -= 1;
                }
                Some(i)
            } else {
                None
            }
        }
        _ => None,
    };
    if let Some(cut) = cut {
        if !bytes[cut..].iter().all(|&b| is_space(b)) {
            return Err(err_data_too_long(t.column, t.row));
        }
        bytes.truncate(cut);
    }
    if matches!(ty, ColumnType::Char { .. }) {
        let keep = bytes
            .iter()
            .rposition(|&b| !is_space(b))
            .map_or(0, |p| p + 1);
        bytes.truncate(keep);
    }
    Ok(Value::Bytes(bytes))
}

fn to_binary(value: Value, ty: &ColumnType, t: &Target) -> Result<Value, EngineError> {
    let mut bytes = value_text(value);
    let limit: u64 = match *ty {
        ColumnType::Binary { len } | ColumnType::VarBinary { len } => u64::from(len),
        ColumnType::Blob { max_bytes } => u64::from(max_bytes),
        _ => u64::MAX,
    };
    if bytes.len() as u64 > limit {
        return Err(err_data_too_long(t.column, t.row));
    }
    if let ColumnType::Binary { len } = *ty {
        bytes.resize(len as usize, 0);
    }
    Ok(Value::Bytes(bytes))
}

/// Broken-down parts of a numeric value read as a date/time, plus
/// microseconds from its fraction.
fn number_parts(value: &Value) -> Option<(TemporalParts, u32)> {
    let d = match value {
        Value::Int(x) => Decimal::from_i64(*x),
        Value::UInt(x) => Decimal::from_u64(*x),
        Value::Decimal(d) => d.clone(),
        Value::Float(x) => Decimal::from_f64(f64::from(*x))?,
        Value::Double(x) => Decimal::from_f64(*x)?,
        _ => return None,
    };
    if d.is_negative() {
        return None;
    }
    let whole = d.truncate_to_scale(0);
    let n = u64::try_from(whole.mantissa_i128()?).ok()?;
    let frac = d.checked_sub(&whole).ok()?;
    // Microseconds, rounded half up (1_000_000 means carry one second).
    let micros = frac.round_to_scale(6).mantissa_i128()? as u32;
    Some((number_to_temporal(n)?, micros))
}

fn to_date(value: Value, t: &Target) -> Result<Value, EngineError> {
    let date: Option<Date> = match &value {
        Value::Date(d) => Some(*d),
        Value::DateTime(dt) => Some(dt.date()),
        Value::Bytes(b) => parse_temporal(b).and_then(|p| p.to_date()),
        other => number_parts(other).and_then(|(p, _)| p.to_date()),
    };
    date.map(Value::Date)
        .ok_or_else(|| err_bad_temporal("date", &shown_value(&value), t.column, t.row))
}

fn to_datetime(value: Value, fsp: u8, timestamp: bool, t: &Target) -> Result<Value, EngineError> {
    let parsed: Option<DateTime> = match &value {
        Value::Date(d) => Some(d.to_datetime()),
        Value::DateTime(dt) => Some(*dt),
        Value::Bytes(b) => parse_temporal(b).and_then(|p| p.to_datetime()),
        other => number_parts(other).and_then(|(p, micros)| {
            let base = p.to_datetime()?;
            base.add_micros(micros)
        }),
    };
    let stored = parsed
        .and_then(|dt| dt.round_to_fsp(fsp))
        .filter(|dt| !timestamp || dt.in_timestamp_range());
    stored
        .map(Value::DateTime)
        .ok_or_else(|| err_bad_temporal("datetime", &shown_value(&value), t.column, t.row))
}

#[cfg(test)]
mod tests {
    use super::*;

    const INT: ColumnType = ColumnType::Int { unsigned: false };
    const UINT: ColumnType = ColumnType::Int { unsigned: true };

    fn ok(v: Value, ty: ColumnType) -> Value {
        coerce(v, &ty, true, "c", 1).unwrap()
    }

    fn err(v: Value, ty: ColumnType) -> (u16, &'static str, String) {
        let e = coerce(v, &ty, true, "c", 3).unwrap_err();
        (e.code, e.sqlstate, e.message)
    }

    fn s(x: &str) -> Value {
        Value::text(x)
    }

    fn dec(x: &str) -> Value {
        Value::Decimal(x.parse().unwrap())
    }

    #[test]
    fn coerce_null() {
        assert_eq!(ok(Value::Null, INT), Value::Null);
        let e = coerce(Value::Null, &INT, false, "id", 1).unwrap_err();
        assert_eq!(
            (e.code, e.sqlstate, e.message.as_str()),
            (1048, "23000", "Column 'id' cannot be null")
        );
    }

    #[test]
    fn coerce_integer_ranges() {
        let cases: [(ColumnType, i128, i128); 10] = [
            (ColumnType::TinyInt { unsigned: false }, -128, 127),
            (ColumnType::TinyInt { unsigned: true }, 0, 255),
            (ColumnType::SmallInt { unsigned: false }, -32768, 32767),
            (ColumnType::SmallInt { unsigned: true }, 0, 65535),
            (ColumnType::MediumInt { unsigned: false }, -8388608, 8388607),
            (ColumnType::MediumInt { unsigned: true }, 0, 16777215),
            (INT, -2147483648, 2147483647),
            (UINT, 0, 4294967295),
            (
                ColumnType::BigInt { unsigned: false },
                i64::MIN.into(),
                i64::MAX.into(),
            ),
            (ColumnType::BigInt { unsigned: true }, 0, u64::MAX.into()),
        ];
        let as_value = |v: i128| {
            if v < 0 {
                Value::Int(v as i64)
            } else {
                Value::UInt(v as u64)
            }
        };
        for (ty, lo, hi) in cases {
            let want = |v: i128| {
                if lo < 0 {
                    Value::Int(v as i64)
                } else {
                    Value::UInt(v as u64)
                }
            };
            assert_eq!(ok(as_value(lo), ty.clone()), want(lo), "{ty:?}");
            assert_eq!(ok(as_value(hi), ty.clone()), want(hi), "{ty:?}");
            assert_eq!(ok(s(&hi.to_string()), ty.clone()), want(hi), "{ty:?}");
            for bad in [lo - 1, hi + 1] {
                let as_val = if let Ok(v) = i64::try_from(bad) {
                    Some(Value::Int(v))
                } else {
                    u64::try_from(bad).ok().map(Value::UInt)
                };
                if let Some(v) = as_val {
                    assert_eq!(err(v, ty.clone()).0, 1264, "{ty:?} {bad}");
                }
                assert_eq!(err(s(&bad.to_string()), ty.clone()).0, 1264, "{ty:?} {bad}");
            }
        }
        assert_eq!(
            err(Value::Int(-1), UINT),
            (
                1264,
                "22003",
                "Out of range value for column 'c' at row 3".to_string()
            )
        );
        assert_eq!(err(s("-1"), UINT).0, 1264);
        assert_eq!(ok(s("-0.4"), UINT), Value::UInt(0));
        assert_eq!(err(s("-0.5"), UINT).0, 1264);
    }

    #[test]
    fn coerce_integer_from_strings_and_numbers() {
        assert_eq!(ok(s("42"), INT), Value::Int(42));
        assert_eq!(ok(s(" 42 "), INT), Value::Int(42));
        assert_eq!(ok(s("+7"), INT), Value::Int(7));
        assert_eq!(ok(s("4.5"), INT), Value::Int(5));
        assert_eq!(ok(s("-4.5"), INT), Value::Int(-5));
        assert_eq!(ok(s("4.4"), INT), Value::Int(4));
        assert_eq!(ok(s("1e3"), INT), Value::Int(1000));
        assert_eq!(ok(s(".5"), INT), Value::Int(1));
        assert_eq!(ok(dec("2.5"), INT), Value::Int(3));
        assert_eq!(ok(dec("-2.5"), INT), Value::Int(-3));
        assert_eq!(
            ok(Value::Double(2.5), INT),
            Value::Int(2),
            "rint: half to even"
        );
        assert_eq!(ok(Value::Double(3.5), INT), Value::Int(4));
        assert_eq!(ok(Value::Float(-2.5), INT), Value::Int(-2));
        assert_eq!(ok(Value::UInt(5), INT), Value::Int(5));
        assert_eq!(ok(Value::Int(5), UINT), Value::UInt(5));
        assert_eq!(
            ok(Value::Date(Date::new(2024, 1, 31).unwrap()), INT),
            Value::Int(20240131)
        );
        assert_eq!(
            ok(
                Value::DateTime(DateTime::new(2024, 1, 31, 10, 0, 0, 600_000).unwrap()),
                ColumnType::BigInt { unsigned: false }
            ),
            Value::Int(20240131100001)
        );
        assert_eq!(
            err(s("abc"), INT),
            (
                1366,
                "HY000",
                "Incorrect integer value: 'abc' for column 'c' at row 3".to_string()
            )
        );
        assert_eq!(err(s(""), INT).0, 1366);
        assert_eq!(err(s("  "), INT).0, 1366);
        assert_eq!(
            err(s("12abc"), INT),
            (
                1265,
                "01000",
                "Data truncated for column 'c' at row 3".to_string()
            )
        );
        assert_eq!(err(s("0x10"), INT).0, 1265);
        assert_eq!(err(s("99999999999abc"), INT).0, 1264, "range checked first");
        assert_eq!(err(s("1e400"), INT).0, 1264);
        assert_eq!(err(Value::Double(f64::NAN), INT).0, 1264);
        assert_eq!(err(Value::Double(f64::INFINITY), INT).0, 1264);
        assert_eq!(err(Value::Double(1e30), INT).0, 1264);
    }

    #[test]
    fn coerce_decimal() {
        let ty = ColumnType::Decimal {
            precision: 5,
            scale: 2,
        };
        assert_eq!(ok(s("123.456"), ty.clone()), dec("123.46"));
        assert_eq!(ok(s("1.005"), ty.clone()).to_string(), "1.01");
        assert_eq!(ok(s("-1.005"), ty.clone()).to_string(), "-1.01");
        assert_eq!(ok(s(" 1e2 "), ty.clone()).to_string(), "100.00");
        assert_eq!(ok(Value::Int(7), ty.clone()).to_string(), "7.00");
        assert_eq!(ok(Value::Double(0.125), ty.clone()).to_string(), "0.13");
        assert_eq!(ok(dec("999.99"), ty.clone()).to_string(), "999.99");
        assert_eq!(ok(dec("-999.994"), ty.clone()).to_string(), "-999.99");
        assert_eq!(err(dec("999.995"), ty.clone()).0, 1264);
        assert_eq!(err(Value::Int(1000), ty.clone()).0, 1264);
        assert_eq!(err(s("-1000"), ty.clone()).0, 1264);
        assert_eq!(err(s("1e50"), ty.clone()).0, 1264);
        assert_eq!(
            err(s("abc"), ty.clone()),
            (
                1366,
                "HY000",
                "Incorrect decimal value: 'abc' for column 'c' at row 3".to_string()
            )
        );
        assert_eq!(err(s("12abc"), ty.clone()).0, 1366);
        assert_eq!(err(s(""), ty.clone()).0, 1366);
        assert_eq!(err(s("1e100"), ty.clone()).0, 1366, "more than 81 digits");
        assert_eq!(err(Value::Double(f64::NAN), ty.clone()).0, 1264);
        let wide = ColumnType::Decimal {
            precision: 65,
            scale: 30,
        };
        let big = format!("{}.{}", "9".repeat(35), "1".repeat(30));
        assert_eq!(ok(s(&big), wide.clone()).to_string(), big);
        assert_eq!(
            err(s(&format!("1{}", "0".repeat(35))), wide.clone()).0,
            1264
        );
        assert_eq!(
            ok(
                Value::Int(0),
                ColumnType::Decimal {
                    precision: 1,
                    scale: 1
                }
            )
            .to_string(),
            "0.0"
        );
    }

    #[test]
    fn coerce_float_double() {
        assert_eq!(ok(s("1.5"), ColumnType::Double), Value::Double(1.5));
        assert_eq!(ok(s(" -2e3"), ColumnType::Double), Value::Double(-2000.0));
        assert_eq!(ok(Value::Int(3), ColumnType::Double), Value::Double(3.0));
        assert_eq!(ok(dec("0.1"), ColumnType::Double), Value::Double(0.1));
        assert_eq!(ok(Value::Double(0.1), ColumnType::Float), Value::Float(0.1));
        assert_eq!(
            ok(Value::Double(f64::from(f32::MAX)), ColumnType::Float),
            Value::Float(f32::MAX)
        );
        assert_eq!(err(Value::Double(1e39), ColumnType::Float).0, 1264);
        assert_eq!(err(Value::Double(f64::NAN), ColumnType::Double).0, 1264);
        assert_eq!(
            err(Value::Double(f64::NEG_INFINITY), ColumnType::Double).0,
            1264
        );
        assert_eq!(err(s("1e400"), ColumnType::Double).0, 1264);
        assert_eq!(
            err(s("abc"), ColumnType::Double),
            (
                1265,
                "01000",
                "Data truncated for column 'c' at row 3".to_string()
            )
        );
        assert_eq!(err(s(""), ColumnType::Float).0, 1265);
        assert_eq!(err(s("1.5 "), ColumnType::Double).0, 1265);
        assert_eq!(err(s("1.5x"), ColumnType::Double).0, 1265);
    }

    #[test]
    fn coerce_strings() {
        let vc = ColumnType::varchar(3);
        assert_eq!(ok(s("abc"), vc.clone()), s("abc"));
        assert_eq!(
            ok(s("héé"), vc.clone()),
            s("héé"),
            "length counts characters"
        );
        assert_eq!(
            ok(s("ab   "), vc.clone()),
            s("ab "),
            "excess spaces are cut"
        );
        assert_eq!(
            err(s("abcd"), vc.clone()),
            (
                1406,
                "22001",
                "Data too long for column 'c' at row 3".to_string()
            )
        );
        assert_eq!(err(s("abc d"), vc.clone()).0, 1406);
        assert_eq!(ok(Value::Int(-12), vc.clone()), s("-12"));
        assert_eq!(err(Value::Int(1234), vc.clone()).0, 1406);
        assert_eq!(ok(Value::Double(1.5), vc.clone()), s("1.5"));
        let ch = ColumnType::char(4);
        assert_eq!(
            ok(s("ab  "), ch.clone()),
            s("ab"),
            "CHAR strips trailing spaces"
        );
        assert_eq!(ok(s("  "), ch.clone()), s(""));
        assert_eq!(ok(s("a b      "), ch.clone()), s("a b"));
        assert_eq!(err(s("abcde"), ch.clone()).0, 1406);
        let tiny = ColumnType::text(255);
        assert_eq!(ok(s(&"x".repeat(255)), tiny.clone()), s(&"x".repeat(255)));
        assert_eq!(err(s(&"x".repeat(256)), tiny.clone()).0, 1406);
        assert_eq!(
            err(s(&"é".repeat(128)), tiny.clone()).0,
            1406,
            "bytes, not chars"
        );
        assert_eq!(
            ok(s(&format!("{} ", "x".repeat(255))), tiny.clone()),
            s(&"x".repeat(255))
        );
        assert_eq!(
            err(Value::Bytes(vec![b'a', 0xF0, 0x9F, 0x98]), vc.clone()),
            (
                1366,
                "HY000",
                "Incorrect string value: '\\xF0\\x9F\\x98' for column 'c' at row 3".to_string()
            )
        );
        assert_eq!(
            err(
                Value::Bytes(b"\xFFabcdefgh".to_vec()),
                ColumnType::text(65535)
            )
            .2,
            "Incorrect string value: '\\xFFabcde...' for column 'c' at row 3"
        );
        assert_eq!(
            ok(
                Value::Date(Date::new(2024, 1, 31).unwrap()),
                ColumnType::varchar(20)
            ),
            s("2024-01-31")
        );
        assert_eq!(
            ok(
                Value::DateTime(DateTime::new(2024, 1, 31, 1, 2, 3, 4).unwrap()),
                ColumnType::varchar(30)
            ),
            s("2024-01-31 01:02:03.000004")
        );
    }

    #[test]
    fn coerce_binary() {
        let bin = ColumnType::Binary { len: 4 };
        assert_eq!(ok(s("ab"), bin.clone()), Value::Bytes(b"ab\0\0".to_vec()));
        assert_eq!(err(s("abcde"), bin.clone()).0, 1406);
        let vb = ColumnType::VarBinary { len: 2 };
        assert_eq!(
            ok(Value::Bytes(vec![0xff, 0]), vb.clone()),
            Value::Bytes(vec![0xff, 0])
        );
        assert_eq!(
            err(s("a  "), vb.clone()).0,
            1406,
            "spaces are data in binary strings"
        );
        let blob = ColumnType::Blob { max_bytes: 255 };
        assert_eq!(
            ok(Value::Bytes(vec![0xC3; 255]), blob.clone()),
            Value::Bytes(vec![0xC3; 255])
        );
        assert_eq!(err(Value::Bytes(vec![1; 256]), blob.clone()).0, 1406);
        assert_eq!(ok(Value::Int(5), blob.clone()), s("5"));
    }

    #[test]
    fn coerce_dates() {
        let date = |y, m, d| Value::Date(Date::new(y, m, d).unwrap());
        assert_eq!(ok(s("2024-02-29"), ColumnType::Date), date(2024, 2, 29));
        assert_eq!(
            ok(s("2024-01-31 23:59:59.9"), ColumnType::Date),
            date(2024, 1, 31)
        );
        assert_eq!(
            ok(Value::Int(20240131), ColumnType::Date),
            date(2024, 1, 31)
        );
        assert_eq!(ok(Value::Int(240131), ColumnType::Date), date(2024, 1, 31));
        assert_eq!(ok(dec("20240131.5"), ColumnType::Date), date(2024, 1, 31));
        assert_eq!(
            err(s("2023-02-29"), ColumnType::Date),
            (
                1292,
                "22007",
                "Incorrect date value: '2023-02-29' for column 'c' at row 3".to_string()
            )
        );
        for bad in [
            "0000-00-00",
            "2024-00-01",
            "2024-01-00",
            "x",
            "",
            "2024-01-31x",
        ] {
            assert_eq!(err(s(bad), ColumnType::Date).0, 1292, "{bad}");
        }
        assert_eq!(
            err(Value::Int(0), ColumnType::Date).2,
            "Incorrect date value: '0' for column 'c' at row 3"
        );
        assert_eq!(err(Value::Int(-20240101), ColumnType::Date).0, 1292);
    }

    #[test]
    fn coerce_datetimes() {
        let dt = |y, mo, d, h, mi, s, us| {
            Value::DateTime(DateTime::new(y, mo, d, h, mi, s, us).unwrap())
        };
        let d0 = ColumnType::DateTime { fsp: 0 };
        let d6 = ColumnType::DateTime { fsp: 6 };
        assert_eq!(
            ok(s("2024-01-31 10:00:00"), d0.clone()),
            dt(2024, 1, 31, 10, 0, 0, 0)
        );
        assert_eq!(
            ok(s("2024-01-31T10:00:00"), d0.clone()),
            dt(2024, 1, 31, 10, 0, 0, 0)
        );
        assert_eq!(ok(s("2024-01-31"), d0.clone()), dt(2024, 1, 31, 0, 0, 0, 0));
        assert_eq!(
            ok(s("2024-01-31 10:00:00.5"), d0.clone()),
            dt(2024, 1, 31, 10, 0, 1, 0)
        );
        assert_eq!(
            ok(s("2024-01-31 10:00:00.4"), d0.clone()),
            dt(2024, 1, 31, 10, 0, 0, 0)
        );
        assert_eq!(
            ok(
                s("2024-01-31 10:00:00.123456"),
                ColumnType::DateTime { fsp: 3 }
            ),
            dt(2024, 1, 31, 10, 0, 0, 123_000)
        );
        assert_eq!(
            ok(
                s("2024-12-31 23:59:59.9995"),
                ColumnType::DateTime { fsp: 3 }
            ),
            dt(2025, 1, 1, 0, 0, 0, 0)
        );
        assert_eq!(
            ok(s("2024-01-31 10:00:00.5"), d6.clone()),
            dt(2024, 1, 31, 10, 0, 0, 500_000)
        );
        assert_eq!(
            ok(Value::Int(20240131102030), d0.clone()),
            dt(2024, 1, 31, 10, 20, 30, 0)
        );
        assert_eq!(
            ok(dec("20240131102030.25"), d6.clone()),
            dt(2024, 1, 31, 10, 20, 30, 250_000)
        );
        assert_eq!(
            ok(Value::Date(Date::new(2024, 1, 31).unwrap()), d0.clone()),
            dt(2024, 1, 31, 0, 0, 0, 0)
        );
        assert_eq!(
            err(s("x"), d0.clone()),
            (
                1292,
                "22007",
                "Incorrect datetime value: 'x' for column 'c' at row 3".to_string()
            )
        );
        for bad in [
            "0000-00-00 00:00:00",
            "2024-01-31 24:00:00",
            "2023-02-29 00:00:00",
            "9999-12-31 23:59:59.5",
        ] {
            assert_eq!(err(s(bad), d0.clone()).0, 1292, "{bad}");
        }
        assert_eq!(
            ok(s("9999-12-31 23:59:59.5"), d6.clone()),
            dt(9999, 12, 31, 23, 59, 59, 500_000)
        );
    }

    #[test]
    fn coerce_timestamp_range() {
        let ts = ColumnType::Timestamp { fsp: 0 };
        let ts6 = ColumnType::Timestamp { fsp: 6 };
        assert!(coerce(s("1970-01-01 00:00:01"), &ts, false, "t", 1).is_ok());
        assert!(coerce(s("2038-01-19 03:14:07"), &ts, false, "t", 1).is_ok());
        assert!(coerce(s("2038-01-19 03:14:07.999999"), &ts6, false, "t", 1).is_ok());
        assert_eq!(
            err(s("1970-01-01 00:00:00"), ts.clone()),
            (
                1292,
                "22007",
                "Incorrect datetime value: '1970-01-01 00:00:00' for column 'c' at row 3"
                    .to_string()
            )
        );
        assert_eq!(err(s("2038-01-19 03:14:08"), ts.clone()).0, 1292);
        assert_eq!(
            err(s("2038-01-19 03:14:07.5"), ts.clone()).0,
            1292,
            "rounds past the end"
        );
        assert_eq!(err(s("1969-12-31 23:59:59"), ts6).0, 1292);
    }

    #[test]
    fn coerce_message_shows_bytes() {
        assert_eq!(
            err(Value::Bytes(b"a\xFFb".to_vec()), INT).2,
            "Incorrect integer value: 'a\\xFFb' for column 'c' at row 3"
        );
        let long = "z".repeat(300);
        let msg = err(s(&long), INT).2;
        assert!(msg.contains(&format!("'{}'", "z".repeat(128))), "{msg}");
    }
}
