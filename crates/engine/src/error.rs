//! Engine errors carry a MySQL error number and SQLSTATE, so the SQL layer
//! can send them to clients unchanged.

use quire_storage::StorageError;

pub type Result<T> = std::result::Result<T, EngineError>;

#[derive(Debug, Clone, thiserror::Error)]
#[error("{message}")]
pub struct EngineError {
    /// MySQL error number (1062 duplicate key, 1205 lock wait timeout, ...).
    pub code: u16,
    /// Five-character SQLSTATE ("23000", "HY000", "40001", ...).
    pub sqlstate: &'static str,
    pub message: String,
}

impl EngineError {
    pub fn new(code: u16, sqlstate: &'static str, message: impl Into<String>) -> Self {
        EngineError {
            code,
            sqlstate,
            message: message.into(),
        }
    }
    /// ER_NOT_SUPPORTED_YET (1235).
    pub fn not_supported(what: impl Into<String>) -> Self {
        EngineError::new(
            1235,
            "42000",
            format!(
                "This version of quire doesn't yet support '{}'",
                what.into()
            ),
        )
    }
    /// ER_BAD_DB_ERROR (1049).
    pub fn unknown_database(db: &str) -> Self {
        EngineError::new(1049, "42000", format!("Unknown database '{db}'"))
    }
    /// ER_UNKNOWN_ERROR-style internal failure (1105) wrapping a storage error.
    pub fn internal(e: impl std::fmt::Display) -> Self {
        EngineError::new(1105, "HY000", e.to_string())
    }
}

impl From<StorageError> for EngineError {
    fn from(e: StorageError) -> Self {
        match &e {
            StorageError::TooLarge(m) => {
                // ER_TOO_BIG_ROWSIZE
                EngineError::new(1118, "42000", format!("Row size too large: {m}"))
            }
            // ER_ERROR_DURING_COMMIT-like: the store refuses writes.
            StorageError::Poisoned(_) | StorageError::Io(_) => {
                EngineError::new(1180, "HY000", format!("Got error during COMMIT: {e}"))
            }
            _ => EngineError::internal(e),
        }
    }
}
