//! # quire-storage: the crash-safe page store
//!
//! See `docs/ARCHITECTURE.md` for the map. Modules, bottom up:
//! `page` (format, checksums), `redo` (the log), `dblwr` (doublewrite),
//! `buf` (buffer pool), `mtr` (mini-transactions), `space` (allocation),
//! `btree`, `lob` (off-page values), `cleaner` (page cleaner, checkpoints), `store` (open, recover),
//! `check` (offline verification).

pub mod btree;
pub mod buf;
pub mod bulk;
pub mod check;
pub mod cleaner;
pub mod dblwr;
pub mod error;
pub mod lob;
pub mod mtr;
pub mod page;
pub mod redo;
pub mod space;
pub mod stats;
pub mod store;

pub use btree::{LeafSample, Tree};
pub use error::{Result, StorageError};
pub use page::{Lsn, PageId};
pub use stats::Stats;
pub use store::{CheckpointPin, RecoveryReport, Store};
