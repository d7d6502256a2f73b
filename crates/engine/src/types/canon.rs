//! Shared by the key and row codecs: the exact representation a column
//! stores for a value. Values normally arrive canonical (from
//! [`coerce`](super::coerce::coerce)); the few exact conversions accepted
//! here (e.g. `Int(5)` for an unsigned column, `Date` for a DATETIME) make
//! search keys easy to build. Anything that would lose information is an
//! error, never a silent rounding.

use std::borrow::Cow;

use super::datetime::{Date, DateTime};
use super::enumset::{enum_member, enum_ordinal, set_mask, set_mask_fits, set_text};
use super::time::Time;
use super::value::Value;
use super::ColumnType;

pub(crate) fn mismatch(v: &Value, ty: &ColumnType) -> String {
    format!("value {v:?} does not fit column type {}", ty.name())
}

/// The integer of an integer column, range-checked for its width.
pub(crate) fn int_of(v: &Value, ty: &ColumnType) -> Result<i128, String> {
    let x = match v {
        Value::Int(x) => i128::from(*x),
        Value::UInt(x) => i128::from(*x),
        _ => return Err(mismatch(v, ty)),
    };
    let (min, max) = ty.integer_range().ok_or_else(|| mismatch(v, ty))?;
    if x < min || x > max {
        return Err(mismatch(v, ty));
    }
    Ok(x)
}

/// Sign and exactly `precision` digits at `scale` of a DECIMAL value.
pub(crate) fn decimal_of(
    v: &Value,
    ty: &ColumnType,
    precision: u8,
    scale: u8,
) -> Result<(bool, Vec<u8>), String> {
    let d = match v {
        Value::Decimal(d) => Cow::Borrowed(d),
        Value::Int(_) | Value::UInt(_) => {
            Cow::Owned(v.to_decimal().ok_or_else(|| mismatch(v, ty))?)
        }
        _ => return Err(mismatch(v, ty)),
    };
    let digits = d
        .fixed_digits(precision, scale)
        .ok_or_else(|| mismatch(v, ty))?;
    Ok((d.is_negative(), digits))
}

pub(crate) fn f32_of(v: &Value, ty: &ColumnType) -> Result<f32, String> {
    let x = match v {
        Value::Float(x) => *x,
        Value::Double(x) if f64::from(*x as f32) == *x => *x as f32,
        _ => return Err(mismatch(v, ty)),
    };
    if x.is_nan() {
        return Err(mismatch(v, ty));
    }
    Ok(x)
}

pub(crate) fn f64_of(v: &Value, ty: &ColumnType) -> Result<f64, String> {
    let x = match v {
        Value::Double(x) => *x,
        Value::Float(x) => f64::from(*x),
        _ => return Err(mismatch(v, ty)),
    };
    if x.is_nan() {
        return Err(mismatch(v, ty));
    }
    Ok(x)
}

/// The bytes of a string value; CHAR loses trailing spaces (PAD SPACE:
/// `'a'` and `'a  '` are the same CHAR value).
pub(crate) fn bytes_of<'a>(v: &'a Value, ty: &ColumnType) -> Result<&'a [u8], String> {
    let Value::Bytes(b) = v else {
        return Err(mismatch(v, ty));
    };
    if matches!(ty, ColumnType::Char { .. }) {
        let keep = b.iter().rposition(|&c| c != b' ').map_or(0, |p| p + 1);
        return Ok(&b[..keep]);
    }
    Ok(b)
}

pub(crate) fn date_of(v: &Value, ty: &ColumnType) -> Result<Date, String> {
    match v {
        Value::Date(d) => Ok(*d),
        Value::DateTime(t) if t.hour == 0 && t.minute == 0 && t.second == 0 && t.micro == 0 => {
            Ok(t.date())
        }
        _ => Err(mismatch(v, ty)),
    }
}

pub(crate) fn datetime_of(v: &Value, ty: &ColumnType) -> Result<DateTime, String> {
    match v {
        Value::DateTime(t) => Ok(*t),
        Value::Date(d) => Ok(d.to_datetime()),
        _ => Err(mismatch(v, ty)),
    }
}

/// Byte width of an integer type's storage.
pub(crate) fn int_width(ty: &ColumnType) -> usize {
    match ty {
        ColumnType::TinyInt { .. } => 1,
        ColumnType::SmallInt { .. } => 2,
        ColumnType::MediumInt { .. } => 3,
        ColumnType::Int { .. } => 4,
        _ => 8,
    }
}

/// Bytes of a DECIMAL(precision, _) in the fixed BCD encoding: one sign
/// byte, then two digits per byte.
pub(crate) fn decimal_width(precision: u8) -> usize {
    1 + (precision as usize).div_ceil(2)
}

/// Appends the memcomparable DECIMAL form: sign byte (0x00 negative,
/// 0x01 zero/positive), then `precision` digits as BCD, nine's-complemented
/// when negative, with a leading pad digit when `precision` is odd.
pub(crate) fn put_decimal(negative: bool, digits: &[u8], out: &mut Vec<u8>) {
    out.push(if negative { 0x00 } else { 0x01 });
    let mut nibbles: Vec<u8> = Vec::with_capacity(digits.len() + 1);
    if digits.len() % 2 == 1 {
        nibbles.push(0);
    }
    nibbles.extend_from_slice(digits);
    for pair in nibbles.chunks(2) {
        let (mut hi, mut lo) = (pair[0], pair[1]);
        if negative {
            hi = 9 - hi;
            lo = 9 - lo;
        }
        out.push((hi << 4) | lo);
    }
}

/// Reads [`put_decimal`]'s form back: (negative, `precision` digits).
pub(crate) fn get_decimal(buf: &[u8], precision: u8) -> Result<(bool, Vec<u8>), String> {
    let width = decimal_width(precision);
    if buf.len() < width {
        return Err("truncated decimal".to_string());
    }
    let negative = match buf[0] {
        0x00 => true,
        0x01 => false,
        b => return Err(format!("bad decimal sign byte {b:#04x}")),
    };
    let mut nibbles = Vec::with_capacity(width * 2);
    for &b in &buf[1..width] {
        for mut n in [b >> 4, b & 0x0f] {
            if n > 9 {
                return Err(format!("bad decimal digit {n}"));
            }
            if negative {
                n = 9 - n;
            }
            nibbles.push(n);
        }
    }
    if precision % 2 == 1 {
        if nibbles[0] != 0 {
            return Err("bad decimal pad digit".to_string());
        }
        nibbles.remove(0);
    }
    if negative && nibbles.iter().all(|&d| d == 0) {
        return Err("negative zero decimal".to_string());
    }
    Ok((negative, nibbles))
}

/// A YEAR: 0 or 1901..=2155.
pub(crate) fn year_of(v: &Value, ty: &ColumnType) -> Result<u16, String> {
    let y = match v {
        Value::UInt(y) => *y,
        Value::Int(y) => u64::try_from(*y).map_err(|_| mismatch(v, ty))?,
        _ => return Err(mismatch(v, ty)),
    };
    if y == 0 || (1901..=2155).contains(&y) {
        Ok(y as u16)
    } else {
        Err(mismatch(v, ty))
    }
}

/// A TIME within ±838:59:59 (a time text is read exactly, for search keys).
pub(crate) fn time_of(v: &Value, ty: &ColumnType) -> Result<Time, String> {
    let t = match v {
        Value::Time(t) => *t,
        Value::Bytes(b) => std::str::from_utf8(b)
            .ok()
            .and_then(Time::parse)
            .and_then(|p| p.to_time(6).ok())
            .ok_or_else(|| mismatch(v, ty))?,
        _ => return Err(mismatch(v, ty)),
    };
    if t.micros().abs() > Time::MAX_MICROS {
        return Err(mismatch(v, ty));
    }
    Ok(t)
}

/// A BIT(bits) value below 2^bits.
pub(crate) fn bit_of(v: &Value, ty: &ColumnType, bits: u8) -> Result<u64, String> {
    let x = match v {
        Value::UInt(x) => *x,
        Value::Int(x) => u64::try_from(*x).map_err(|_| mismatch(v, ty))?,
        _ => return Err(mismatch(v, ty)),
    };
    if bits < 64 && x >> bits != 0 {
        return Err(mismatch(v, ty));
    }
    Ok(x)
}

/// The 1-based ordinal of an ENUM member's text.
pub(crate) fn ordinal_of(v: &Value, ty: &ColumnType, members: &[String]) -> Result<u16, String> {
    let Value::Bytes(b) = v else {
        return Err(mismatch(v, ty));
    };
    std::str::from_utf8(b)
        .ok()
        .and_then(|s| enum_ordinal(members, s))
        .ok_or_else(|| mismatch(v, ty))
}

/// The member text of a stored ordinal.
pub(crate) fn member_of(members: &[String], ordinal: u64) -> Result<Value, String> {
    enum_member(members, ordinal)
        .map(|m| Value::Bytes(m.as_bytes().to_vec()))
        .ok_or_else(|| format!("ENUM ordinal {ordinal} out of range"))
}

/// The member mask of a SET text.
pub(crate) fn mask_of(v: &Value, ty: &ColumnType, members: &[String]) -> Result<u64, String> {
    let Value::Bytes(b) = v else {
        return Err(mismatch(v, ty));
    };
    std::str::from_utf8(b)
        .ok()
        .and_then(|s| set_mask(members, s))
        .ok_or_else(|| mismatch(v, ty))
}

/// The text of a stored SET mask.
pub(crate) fn set_of(members: &[String], mask: u64) -> Result<Value, String> {
    if !set_mask_fits(members, mask) {
        return Err(format!("SET mask {mask:#x} names no member"));
    }
    Ok(Value::Bytes(set_text(members, mask).into_bytes()))
}
