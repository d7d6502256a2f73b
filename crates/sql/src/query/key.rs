//! # Hash keys: values as GROUP BY, DISTINCT, UNION and IN compare them
//!
//! Grouping and de-duplication need a key that is equal exactly when
//! MySQL's comparison says the values are equal, and that hashes the same
//! then. `1`, `1.0` (DECIMAL) and `1e0` (DOUBLE) are one group; `NULL`s
//! group together (unlike `=`); strings compare by bytes, or by their
//! weight strings under a collation ([`key_part_in`]: `'a'` and `'A'` are
//! one group under a `_ci` collation). Numbers are brought to one canonical form:
//! integral values become an `i128`, others a normalised decimal string
//! or the bits of the double.

use quire_engine::types::Collation;
use quire_engine::Value;

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum KeyPart {
    Null,
    Int(i128),
    /// A non-integral exact number, without trailing zeros.
    Dec(String),
    /// A non-integral double's bits.
    Double(u64),
    Bytes(Vec<u8>),
    /// Dates and datetimes by their text (one canonical format each).
    Temporal(String),
}

/// The canonical key of one value.
pub fn key_part(v: &Value) -> KeyPart {
    match v {
        Value::Null => KeyPart::Null,
        Value::Int(i) => KeyPart::Int(i128::from(*i)),
        Value::UInt(u) => KeyPart::Int(i128::from(*u)),
        Value::Decimal(d) => {
            let s = d.to_string();
            let trimmed = if s.contains('.') {
                s.trim_end_matches('0').trim_end_matches('.').to_string()
            } else {
                s
            };
            match trimmed.parse::<i128>() {
                Ok(i) => KeyPart::Int(i),
                Err(_) => KeyPart::Dec(if trimmed == "-0" { "0".into() } else { trimmed }),
            }
        }
        Value::Float(f) => double_key(f64::from(*f)),
        Value::Double(f) => double_key(*f),
        Value::Bytes(b) => KeyPart::Bytes(b.clone()),
        other => KeyPart::Temporal(other.to_string()),
    }
}

fn double_key(f: f64) -> KeyPart {
    if f.fract() == 0.0 && f.abs() < 1e30 {
        return KeyPart::Int(f as i128);
    }
    KeyPart::Double(if f == 0.0 { 0 } else { f.to_bits() })
}

/// [`key_part`] of a string compared under `coll`: its weight string.
pub fn key_part_in(v: &Value, coll: Option<Collation>) -> KeyPart {
    match (v, coll) {
        (Value::Bytes(b), Some(c)) if !c.is_plain_bytes() => KeyPart::Bytes(c.weight_of(b)),
        _ => key_part(v),
    }
}

/// How one key column's values compare (DISTINCT, UNION).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum KeyOf {
    /// As [`key_part`] has them (strings by their bytes).
    Value,
    /// Strings by their weights in a collation.
    Coll(Collation),
    /// As JSON values ([`crate::func::json::group_key`]: `1` and `1.0`
    /// one key, objects whatever their member order), as MySQL compares
    /// JSON in DISTINCT and UNION.
    Json,
}

impl KeyOf {
    /// A string column's collation (None, or plain bytes: by value).
    pub fn of_coll(c: Option<Collation>) -> KeyOf {
        match c {
            Some(c) if !c.is_plain_bytes() => KeyOf::Coll(c),
            _ => KeyOf::Value,
        }
    }
}

/// The key of one value compared as `k` says. A JSON column's value that
/// is not valid JSON (it cannot be; defensively) keys by its bytes.
pub fn key_part_of(v: &Value, k: KeyOf) -> KeyPart {
    match k {
        KeyOf::Value => key_part(v),
        KeyOf::Coll(c) => key_part_in(v, Some(c)),
        KeyOf::Json => match crate::func::json::group_key(v) {
            Ok(Value::Bytes(b)) => KeyPart::Bytes(b),
            Ok(Value::Null) => KeyPart::Null,
            _ => key_part(v),
        },
    }
}

/// [`row_key`] with a [`KeyOf`] per column (missing ones: by value).
pub fn row_key_of(vals: &[Value], kinds: &[KeyOf]) -> Vec<KeyPart> {
    vals.iter()
        .enumerate()
        .map(|(i, v)| key_part_of(v, kinds.get(i).copied().unwrap_or(KeyOf::Value)))
        .collect()
}

/// The key of a row (or of its first `n` values).
pub fn row_key(vals: &[Value]) -> Vec<KeyPart> {
    vals.iter().map(key_part).collect()
}
