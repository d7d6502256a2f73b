//! # quire-engine: tables, transactions, MVCC, durable commit
pub mod error;
pub mod lock;
pub mod types;
