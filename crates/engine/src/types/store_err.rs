//! The errors a value refused by a column raises, worded as MySQL 8.0
//! words them (`sql/share/messages_to_clients.txt`), and the way a value
//! is shown inside them. Shared by [`coerce`](super::coerce) and the
//! per-type store rules of `coerce_kinds`.

use super::value::Value;
use crate::error::EngineError;

/// ER_BAD_NULL_ERROR (1048, 23000).
pub fn err_bad_null(column: &str) -> EngineError {
    EngineError::new(1048, "23000", format!("Column '{column}' cannot be null"))
}

/// ER_WARN_DATA_OUT_OF_RANGE (1264, 22003).
pub fn err_out_of_range(column: &str, row: u64) -> EngineError {
    EngineError::new(
        1264,
        "22003",
        format!("Out of range value for column '{column}' at row {row}"),
    )
}

/// ER_NO_DEFAULT_FOR_FIELD (1364, HY000): a NOT NULL column without a
/// default that a row does not give.
pub fn err_no_default(column: &str) -> EngineError {
    EngineError::new(
        1364,
        "HY000",
        format!("Field '{column}' doesn't have a default value"),
    )
}

/// ER_DATA_TOO_LONG (1406, 22001).
pub fn err_data_too_long(column: &str, row: u64) -> EngineError {
    EngineError::new(
        1406,
        "22001",
        format!("Data too long for column '{column}' at row {row}"),
    )
}

/// WARN_DATA_TRUNCATED raised to an error by strict mode (1265, 01000).
pub fn err_data_truncated(column: &str, row: u64) -> EngineError {
    EngineError::new(
        1265,
        "01000",
        format!("Data truncated for column '{column}' at row {row}"),
    )
}

/// ER_TRUNCATED_WRONG_VALUE_FOR_FIELD (1366, HY000); `kind` is `integer`,
/// `decimal` or `string`.
pub fn err_incorrect_value(kind: &str, shown: &str, column: &str, row: u64) -> EngineError {
    EngineError::new(
        1366,
        "HY000",
        format!("Incorrect {kind} value: '{shown}' for column '{column}' at row {row}"),
    )
}

/// ER_TRUNCATED_WRONG_VALUE (1292, 22007) as MySQL words it for a column;
/// `kind` is `date` or `datetime`.
pub fn err_bad_temporal(kind: &str, shown: &str, column: &str, row: u64) -> EngineError {
    EngineError::new(
        1292,
        "22007",
        format!("Incorrect {kind} value: '{shown}' for column '{column}' at row {row}"),
    )
}

/// Text of a value for an error message (`ErrConvString`-like).
pub(crate) fn shown(bytes: &[u8]) -> String {
    let mut out = String::new();
    for chunk in bytes.utf8_chunks() {
        out.push_str(chunk.valid());
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02X}"));
        }
    }
    match out.char_indices().nth(128) {
        Some((cut, _)) => out[..cut].to_string(),
        None => out,
    }
}

pub(crate) fn shown_value(v: &Value) -> String {
    match v {
        Value::Bytes(b) => shown(b),
        other => shown(other.to_string().as_bytes()),
    }
}
