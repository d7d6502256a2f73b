//! # quire-engine: tables, transactions, MVCC, durable commit
//!
//! See `engine.rs` for the commit path, `txn.rs` for transactions and
//! isolation, `mvcc.rs` for versions and purge, `lock.rs` for row locks and
//! deadlock detection, `catalog.rs` for table definitions, `types.rs` for
//! MySQL types, strict-mode checks and the key/row encodings.

pub mod alter;
mod bigtrx;
pub mod binlog;
pub mod catalog;
mod check_table;
mod commit;
pub mod constraint;
pub mod engine;
pub mod error;
mod fk_ddl;
pub mod index_build;
pub mod interrupt;
pub mod lock;
mod mdl;
pub mod mvcc;
pub mod offpage;
pub mod rebuild;
mod server_uuid;
mod sizes;
mod stats;
mod syncer;
mod temp_table;
pub mod tszone;
pub mod txn;
pub mod types;
pub mod view;

pub use alter::{RenamePair, TableChange};
pub use catalog::{ColumnDef, Generated, IndexDef, IndexSpec, NewTable, TableDef};
pub use commit::OnQueued;
pub use constraint::{CheckDef, FkAction, ForeignKeyDef};
pub use engine::{check_key_parts, index_key, tmpdir, Engine, EngineRecovery};
pub use error::{EngineError, Result};
pub use index_build::BuildLock;
pub use interrupt::{Interrupt, Kill, Stage};
pub use lock::LockMode;
pub use rebuild::{ColumnChange, NewIndex, Place, Rebuild};
pub use sizes::TablePages;
pub use stats::{IndexStats, TableStats};
pub use txn::{
    lock_nowait_error, Inserted, Isolation, LockWait, Row, Savepoint, Scan, ScanBatch, Txn,
};
pub use types::{ColumnType, Value};
pub use view::{CheckOption, ViewAlgorithm, ViewDef};

#[cfg(test)]
mod alter_tests;
#[cfg(test)]
mod bigtrx_tests;
#[cfg(test)]
mod fk_tests;
#[cfg(test)]
mod index_build_tests;
#[cfg(test)]
mod offpage_tests;
#[cfg(test)]
mod rebuild_tests;
#[cfg(test)]
mod temp_table_tests;
#[cfg(test)]
mod tests;
