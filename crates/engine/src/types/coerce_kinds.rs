//! # Storing into TIME, YEAR, BIT, ENUM and SET columns
//!
//! [`coerce`](super::coerce::coerce) hands these five types here. Each
//! follows MySQL 8.0's strict-mode store rules:
//!
//! | type | accepts | refuses with |
//! |---|---|---|
//! | TIME(fsp) | `[-][D ]hh:mm:ss[.f]` and shorter texts, numbers `[-]hhmmss[.f]`, DATETIME (its time), DATE (midnight) | 1292 not a time, or beyond ±838:59:59 |
//! | YEAR | 1901..2155 and 0; 1..69 → 20xx, 70..99 → 19xx; the strings `'0'`/`'00'` → 2000 | 1264 out of range, 1366 not a number, 1265 trailing text |
//! | BIT(n) | non-negative integers below 2ⁿ; a string as its big-endian bytes | 1406 too many bits |
//! | ENUM | a member's text (case-insensitive), a 1-based ordinal | 1265 |
//! | SET | comma-separated members, a mask below 2^members | 1265 |
//! | JSON | a valid JSON text (normalized as MySQL prints it) | 3140 invalid text, or not a string ("may need CAST"); 3157 nested beyond 100 |

use super::decimal::Decimal;
use super::enumset::{enum_member, enum_ordinal, set_mask, set_mask_fits, set_text};
use super::json::{parse_text, print};
use super::store_err::{
    err_bad_temporal, err_data_too_long, err_data_truncated, err_incorrect_value, err_out_of_range,
};
use super::time::Time;
use super::value::Value;
use crate::error::EngineError;

/// Where the value goes, for error messages.
pub(crate) struct At<'a> {
    pub column: &'a str,
    pub row: u64,
}

fn shown(v: &Value) -> String {
    match v {
        Value::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
        other => other.to_string(),
    }
}

/// A TIME(fsp) value.
pub(crate) fn to_time(value: &Value, fsp: u8, at: &At) -> Result<Value, EngineError> {
    let bad = || err_bad_temporal("time", &shown(value), at.column, at.row);
    let parsed = match value {
        Value::Time(t) => return t.round_to_fsp(fsp).map(Value::Time).ok_or_else(bad),
        Value::DateTime(dt) => {
            let micros =
                (i64::from(dt.hour) * 3600 + i64::from(dt.minute) * 60 + i64::from(dt.second))
                    * 1_000_000
                    + i64::from(dt.micro);
            let t = Time::from_micros(micros).ok_or_else(bad)?;
            return t.round_to_fsp(fsp).map(Value::Time).ok_or_else(bad);
        }
        Value::Date(_) => return Ok(Value::Time(Time::default())),
        Value::Bytes(b) => std::str::from_utf8(b).ok().and_then(Time::parse),
        Value::Int(_) | Value::UInt(_) | Value::Decimal(_) => Time::parse(&value.to_string()),
        Value::Float(_) | Value::Double(_) => {
            value.to_decimal().and_then(|d| Time::parse(&d.to_string()))
        }
        Value::Null => return Ok(Value::Null),
    };
    parsed
        .ok_or_else(bad)?
        .to_time(fsp)
        .map(Value::Time)
        .map_err(|_| bad())
}

/// A YEAR value (`UInt`).
pub(crate) fn to_year(value: &Value, at: &At) -> Result<Value, EngineError> {
    let out_of_range = || err_out_of_range(at.column, at.row);
    let (n, from_text): (i128, bool) = match value {
        Value::Int(x) => (i128::from(*x), false),
        Value::UInt(x) => (i128::from(*x), false),
        Value::Decimal(d) => (d.to_i128_round().ok_or_else(out_of_range)?, false),
        Value::Float(_) | Value::Double(_) => {
            let x = value.to_f64().unwrap_or(f64::NAN);
            if !x.is_finite() {
                return Err(out_of_range());
            }
            (x.round() as i128, false)
        }
        Value::Date(d) => (i128::from(d.year), false),
        Value::DateTime(dt) => (i128::from(dt.year), false),
        Value::Time(_) => return Err(out_of_range()),
        Value::Bytes(b) => {
            let text = String::from_utf8_lossy(b);
            let trimmed = text.trim();
            let p = Decimal::parse_prefix(trimmed.as_bytes())
                .map_err(|_| err_incorrect_value("integer", &shown(value), at.column, at.row))?;
            if p.consumed != trimmed.len() {
                return Err(err_data_truncated(at.column, at.row));
            }
            (p.value.to_i128_round().ok_or_else(out_of_range)?, true)
        }
        Value::Null => return Ok(Value::Null),
    };
    let year = match n {
        // A number 0 is the zero year; the strings '0' and '00' are 2000.
        0 if !from_text => 0,
        0..=69 => 2000 + n,
        70..=99 => 1900 + n,
        1901..=2155 => n,
        _ => return Err(out_of_range()),
    };
    Ok(Value::UInt(year as u64))
}

/// A BIT(bits) value (`UInt`).
pub(crate) fn to_bit(value: &Value, bits: u8, at: &At) -> Result<Value, EngineError> {
    let too_long = || err_data_too_long(at.column, at.row);
    let v: u64 = match value {
        Value::Int(x) => u64::try_from(*x).map_err(|_| too_long())?,
        Value::UInt(x) => *x,
        Value::Decimal(d) => {
            let n = d.to_i128_round().ok_or_else(too_long)?;
            u64::try_from(n).map_err(|_| too_long())?
        }
        Value::Float(_) | Value::Double(_) => {
            let x = value.to_f64().unwrap_or(f64::NAN);
            if !x.is_finite() || x < 0.0 || x.round() > u64::MAX as f64 {
                return Err(too_long());
            }
            x.round() as u64
        }
        Value::Bytes(b) => {
            if b.len() > 8 {
                return Err(too_long());
            }
            b.iter()
                .fold(0u64, |acc, &byte| (acc << 8) | u64::from(byte))
        }
        Value::Date(_) | Value::DateTime(_) | Value::Time(_) => {
            let n = value.to_decimal().and_then(|d| d.to_i128_round());
            n.and_then(|n| u64::try_from(n).ok()).ok_or_else(too_long)?
        }
        Value::Null => return Ok(Value::Null),
    };
    if bits < 64 && v >> bits != 0 {
        return Err(too_long());
    }
    Ok(Value::UInt(v))
}

/// A number used as an ENUM ordinal or SET mask: integers as they are,
/// other numbers only when whole.
fn whole_number(value: &Value) -> Option<Option<u64>> {
    Some(match value {
        Value::Int(x) => u64::try_from(*x).ok(),
        Value::UInt(x) => Some(*x),
        Value::Decimal(_) | Value::Float(_) | Value::Double(_) => {
            let d = value.to_decimal()?;
            let whole = d.truncate_to_scale(0);
            if whole != d {
                None
            } else {
                whole.to_i128_round().and_then(|n| u64::try_from(n).ok())
            }
        }
        _ => return None,
    })
}

/// An ENUM value: the member's text as declared.
pub(crate) fn to_enum(value: &Value, members: &[String], at: &At) -> Result<Value, EngineError> {
    let truncated = || err_data_truncated(at.column, at.row);
    let member = match whole_number(value) {
        Some(n) => n.and_then(|n| enum_member(members, n)),
        None => {
            let text = shown(value);
            enum_ordinal(members, &text).and_then(|o| enum_member(members, u64::from(o)))
        }
    };
    member
        .map(|m| Value::Bytes(m.as_bytes().to_vec()))
        .ok_or_else(truncated)
}

/// A SET value: its members in declaration order, comma-separated.
pub(crate) fn to_set(value: &Value, members: &[String], at: &At) -> Result<Value, EngineError> {
    let truncated = || err_data_truncated(at.column, at.row);
    let mask = match whole_number(value) {
        Some(n) => n.filter(|&m| set_mask_fits(members, m)),
        None => set_mask(members, &shown(value)),
    };
    mask.map(|m| Value::Bytes(set_text(members, m).into_bytes()))
        .ok_or_else(truncated)
}

/// A JSON document: valid text, stored as MySQL prints it.
pub(crate) fn to_json(value: &Value, at: &At) -> Result<Value, EngineError> {
    let invalid = |why: &str, pos: usize| {
        EngineError::new(
            3140,
            "22032",
            format!(
                "Invalid JSON text: \"{why}\" at position {pos} in value for column '{}'.",
                at.column
            ),
        )
    };
    match value {
        Value::Null => Ok(Value::Null),
        Value::Bytes(b) => match parse_text(b) {
            Ok(doc) => Ok(Value::Bytes(print(&doc).into_bytes())),
            Err(("depth", _)) => Err(EngineError::new(
                3157,
                "22032",
                "The JSON document exceeds the maximum depth of 100.",
            )),
            Err((why, pos)) => Err(invalid(why, pos)),
        },
        _ => Err(invalid("not a JSON text, may need CAST", 0)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const AT: At = At {
        column: "c",
        row: 1,
    };

    fn s(x: &str) -> Value {
        Value::text(x)
    }

    fn code(r: Result<Value, EngineError>) -> u16 {
        r.unwrap_err().code
    }

    #[test]
    fn time_values() {
        let t = |v: Value, fsp| to_time(&v, fsp, &AT).map(|v| v.to_string());
        assert_eq!(t(s("12:34"), 0).unwrap(), "12:34:00");
        assert_eq!(t(Value::Int(1234), 0).unwrap(), "00:12:34");
        assert_eq!(t(Value::Int(-1234), 0).unwrap(), "-00:12:34");
        assert_eq!(
            t(Value::Decimal("1234.567".parse().unwrap()), 2).unwrap(),
            "00:12:34.570000"
        );
        assert_eq!(code(to_time(&s("900:00:00"), 0, &AT)), 1292);
        assert_eq!(code(to_time(&s("abc"), 0, &AT)), 1292);
        assert_eq!(code(to_time(&Value::Int(8_390_000), 0, &AT)), 1292);
    }

    #[test]
    fn year_values() {
        let y = |v: Value| to_year(&v, &AT);
        assert_eq!(y(Value::Int(69)).unwrap(), Value::UInt(2069));
        assert_eq!(y(Value::Int(70)).unwrap(), Value::UInt(1970));
        assert_eq!(y(Value::Int(0)).unwrap(), Value::UInt(0));
        assert_eq!(y(s("0")).unwrap(), Value::UInt(2000));
        assert_eq!(y(s("00")).unwrap(), Value::UInt(2000));
        assert_eq!(y(s("2024")).unwrap(), Value::UInt(2024));
        assert_eq!(code(y(Value::Int(1900))), 1264);
        assert_eq!(code(y(Value::Int(2156))), 1264);
        assert_eq!(code(y(s("abc"))), 1366);
        assert_eq!(code(y(s("2024x"))), 1265);
    }

    #[test]
    fn bit_values() {
        let b = |v: Value, bits| to_bit(&v, bits, &AT);
        assert_eq!(b(Value::Int(1023), 10).unwrap(), Value::UInt(1023));
        assert_eq!(code(b(Value::Int(1024), 10)), 1406);
        assert_eq!(code(b(Value::Int(-1), 64)), 1406);
        assert_eq!(b(s("a"), 8).unwrap(), Value::UInt(0x61));
        assert_eq!(b(Value::UInt(u64::MAX), 64).unwrap(), Value::UInt(u64::MAX));
    }

    #[test]
    fn json_values() {
        let j = |v: Value| to_json(&v, &AT);
        assert_eq!(
            j(s(r#" {"b": [1, 2.5, "x"], "a" : null, "a": true} "#)).unwrap(),
            s(r#"{"a": true, "b": [1, 2.5, "x"]}"#)
        );
        let e = j(s("{")).unwrap_err();
        assert_eq!((e.code, e.sqlstate), (3140, "22032"));
        assert!(
            e.message.contains("at position 1 in value for column 'c'"),
            "{}",
            e.message
        );
        assert_eq!(code(j(Value::Int(1))), 3140);
        assert_eq!(code(j(s(&"[".repeat(101)))), 3157);
    }

    #[test]
    fn enum_and_set_values() {
        let e: Vec<String> = ["b", "a", "c"].iter().map(|x| x.to_string()).collect();
        assert_eq!(to_enum(&s("A"), &e, &AT).unwrap(), s("a"));
        assert_eq!(to_enum(&Value::Int(3), &e, &AT).unwrap(), s("c"));
        assert_eq!(code(to_enum(&Value::Int(0), &e, &AT)), 1265);
        assert_eq!(code(to_enum(&s(""), &e, &AT)), 1265);
        assert_eq!(code(to_enum(&s("d"), &e, &AT)), 1265);
        let st: Vec<String> = ["x", "y", "z"].iter().map(|x| x.to_string()).collect();
        assert_eq!(to_set(&s("z,x"), &st, &AT).unwrap(), s("x,z"));
        assert_eq!(to_set(&Value::Int(7), &st, &AT).unwrap(), s("x,y,z"));
        assert_eq!(to_set(&s(""), &st, &AT).unwrap(), s(""));
        assert_eq!(code(to_set(&Value::Int(8), &st, &AT)), 1265);
        assert_eq!(code(to_set(&s("x,w"), &st, &AT)), 1265);
    }
}
