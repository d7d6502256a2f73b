//! # quire-sql: SQL sessions over the engine
//!
//! The contract the wire-protocol server (`quire-server`) codes against.
//! A [`Session`] is one client connection's SQL state: current database,
//! autocommit, the open transaction, session variables, prepared
//! statements. The server hands it statement text or prepared-statement
//! parameters and gets back [`Output`]s or an [`EngineError`] carrying the
//! MySQL error number and SQLSTATE.
//!
//! Two things the SQL layer needs from the server are passed in rather than
//! depended on (the server depends on this crate): the account table, as
//! an [`AccountStore`] installed per session with
//! [`Session::set_account_store`] (CREATE/ALTER/DROP USER, GRANT ALL, SET
//! PASSWORD, SHOW GRANTS, `mysql.user`; see `account.rs`), and the
//! server's status counters, registered once with [`set_status_source`]
//! (SHOW STATUS, `performance_schema.global_status`).

use quire_engine::{ColumnType, EngineError, Value};

pub mod account;
mod account_opts;
mod admin;
mod alter;
mod alter_exec;
mod alter_rebuild;
mod authorize;
mod binlog_admin;
mod collate;
mod constraints;
mod create_select;
mod ctx;
mod ddl;
mod dialect;
mod exec;
mod exec_multi;
mod expr;
mod func;
mod generated;
mod gtid_funcs;
mod info_schema;
mod insert_alias;
mod login_state;
mod parse;
pub mod privilege;
pub mod process;
mod query;
pub mod replicas;
pub mod replication;
pub mod role_graph;
pub mod session;
mod session_sql;
mod show;
mod sort;
pub mod spill;
pub mod stack;
pub mod temp;
mod temp_alter;
pub(crate) mod tz;
mod userlock;
mod uservars;
mod view;
mod view_dml;
mod win_frame;

pub use account::{
    AccountGrants, AccountOptions, AccountStore, AuthClause, AuthSpec, LockTime, SslRequire,
};
pub use privilege::{AccountPrivs, Privs};
pub use role_graph::{AuthId, RoleEdge, RoleGraph};
pub use session::Session;
pub use show::{set_status_source, StatusSource};

/// Describes one column of a result set (what the protocol's column
/// definition packet carries).
#[derive(Debug, Clone, PartialEq)]
pub struct ColumnMeta {
    /// Name as selected (alias if any).
    pub name: String,
    /// Original column name ("" for expressions).
    pub org_name: String,
    /// Table alias and original table ("" for expressions).
    pub table: String,
    pub org_table: String,
    pub db: String,
    /// The SQL type of the values in this column; expressions get the
    /// type MySQL would report (BIGINT for COUNT, DECIMAL for SUM of
    /// integers, VARCHAR for strings, ...).
    pub ty: ColumnType,
    pub nullable: bool,
}

/// What one statement produced.
#[derive(Debug, Clone, PartialEq)]
pub enum Output {
    /// A result set (SELECT, SHOW, DESCRIBE, ...).
    Rows {
        columns: Vec<ColumnMeta>,
        rows: Vec<Vec<Value>>,
    },
    /// A result set already handed to the caller's [`RowSink`] as it was
    /// produced (a SELECT run with [`Session::execute_streaming`]); only
    /// its end (EOF / OK with the final status) is left to send.
    Streamed { rows: u64 },
    /// An OK packet's content.
    Done {
        affected_rows: u64,
        last_insert_id: u64,
        warnings: u16,
        info: String,
    },
}

/// Where a streamed result set goes (the server: packets on the
/// socket). A SELECT calls [`RowSink::columns`] once, before its first
/// row, then [`RowSink::row`] for each row as the operators produce it;
/// the statement (and an autocommit transaction) ends after the last
/// row. An error part-way comes back from the session call after some
/// rows were sent, as MySQL sends an ERR packet after rows. An error
/// from the sink (the client went away) ends the statement with it.
pub trait RowSink {
    fn columns(&mut self, columns: &[ColumnMeta]) -> SqlResult<()>;
    fn row(&mut self, row: Vec<Value>) -> SqlResult<()>;
}

/// A prepared statement as the protocol reports it.
#[derive(Debug, Clone, PartialEq)]
pub struct PreparedInfo {
    pub id: u32,
    pub params: usize,
    /// Result columns if the statement returns rows (may be empty when not
    /// known before execution).
    pub columns: Vec<ColumnMeta>,
}

/// Result of a SQL call.
pub type SqlResult<T> = std::result::Result<T, EngineError>;

/// The server moves sessions between threads.
const _: () = {
    const fn assert_send<T: Send>() {}
    assert_send::<Session>();
};
