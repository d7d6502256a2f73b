//! Value helpers shared by the function modules: MySQL's implicit
//! conversions of an argument to bytes, text, an integer or a double.

use quire_engine::types::Decimal;
use quire_engine::Value;

/// The argument as bytes (numbers and dates in their text form).
pub fn bytes(v: &Value) -> Vec<u8> {
    match v {
        Value::Bytes(b) => b.clone(),
        other => other.to_string().into_bytes(),
    }
}

/// The argument as text (invalid UTF-8 replaced).
pub fn text(v: &Value) -> String {
    match v {
        Value::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
        other => other.to_string(),
    }
}

/// The argument as an integer the way MySQL reads an integer argument:
/// exact numbers and doubles rounded half away from zero, strings by their
/// numeric prefix; `None` for NULL.
pub fn int(v: &Value) -> Option<i64> {
    Some(match v {
        Value::Null => return None,
        Value::Int(i) => *i,
        Value::UInt(u) => i64::try_from(*u).unwrap_or(i64::MAX),
        Value::Decimal(d) => clamp_i128(d.to_i128_round()?),
        Value::Bytes(b) => match Decimal::parse_prefix(b) {
            Ok(p) => clamp_i128(p.value.to_i128_round().unwrap_or(0)),
            Err(_) => {
                let f = v.to_f64().unwrap_or(0.0);
                f.round().clamp(i64::MIN as f64, i64::MAX as f64) as i64
            }
        },
        other => {
            let f = other.to_f64()?;
            if f.is_nan() {
                0
            } else {
                f.round().clamp(i64::MIN as f64, i64::MAX as f64) as i64
            }
        }
    })
}

/// An integer argument as MySQL's unsigned 64-bit view (negative values
/// wrap, as `BIN(-1)` shows).
pub fn uint_wrapping(v: &Value) -> Option<u64> {
    match v {
        Value::UInt(u) => Some(*u),
        Value::Null => None,
        Value::Double(_) | Value::Float(_) => {
            let f = v.to_f64()?.round();
            Some(if f < 0.0 {
                (f.max(i64::MIN as f64) as i64) as u64
            } else {
                f.min(u64::MAX as f64) as u64
            })
        }
        Value::Decimal(d) => {
            let i = d.to_i128_round()?;
            Some(if i < 0 {
                clamp_i128(i) as u64
            } else {
                i.min(i128::from(u64::MAX)) as u64
            })
        }
        other => int(other).map(|i| i as u64),
    }
}

fn clamp_i128(x: i128) -> i64 {
    x.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
}

/// The argument as a double; `None` for NULL.
pub fn f64v(v: &Value) -> Option<f64> {
    v.to_f64()
}

/// Whether the value is an exact number (integer or DECIMAL).
pub fn is_exact(v: &Value) -> bool {
    matches!(v, Value::Int(_) | Value::UInt(_) | Value::Decimal(_))
}
