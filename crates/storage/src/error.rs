//! Errors of the storage layer.
//!
//! Two rules shape this type. A bad page is an error that names the file and
//! the page (never data handed to a caller). And an I/O failure is *sticky*:
//! once a write or sync has failed, the store answers
//! [`StorageError::Poisoned`] to every later write until it is reopened,
//! because the content of the file is unknown and a retried fsync can report
//! success without the data being durable.

use std::path::PathBuf;

use quire_io::IoError;

pub type Result<T> = std::result::Result<T, StorageError>;

#[derive(Debug, thiserror::Error, Clone)]
pub enum StorageError {
    #[error(transparent)]
    Io(#[from] IoError),

    /// A page failed its checksum or identity check when read.
    #[error("corrupt page {page_no} in {}: {reason}", file.display())]
    CorruptPage {
        file: PathBuf,
        page_no: u32,
        reason: String,
    },

    /// The redo log is damaged before records that were known durable.
    #[error("redo log corruption: {0}")]
    CorruptLog(String),

    /// Start-up refused: something on disk cannot be trusted.
    #[error("recovery failed: {0}")]
    Recovery(String),

    /// An earlier I/O error made the store refuse writes until reopened.
    #[error("the store refuses writes after an earlier I/O error: {0}")]
    Poisoned(String),

    /// A key or value does not fit the page format.
    #[error("{0}")]
    TooLarge(String),

    /// A configuration that cannot work (names the variable).
    #[error("{0}")]
    Config(String),

    /// The data directory is missing pieces or holds something else.
    #[error("{0}")]
    BadDatadir(String),

    /// The device is full (ENOSPC) where nothing had changed yet: the
    /// write was refused, and may be retried once space is freed.
    #[error("{0}")]
    Full(String),

    /// A caller broke an API's contract (a bug, reported, never a panic).
    #[error("internal error: {0}")]
    Internal(String),

    /// The store was shut down.
    #[error("the store is shut down")]
    Shutdown,
}

impl StorageError {
    pub fn corrupt(file: impl Into<PathBuf>, page_no: u32, reason: impl Into<String>) -> Self {
        StorageError::CorruptPage {
            file: file.into(),
            page_no,
            reason: reason.into(),
        }
    }
}
