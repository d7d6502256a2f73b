//! # information_schema
//!
//! MySQL tools learn about a server from `information_schema`:
//! `mariadb-dump` asks `COLUMNS` whether a table has generated columns and
//! `TABLES` whether it is a view, `mariadb-check` and `mariadb-show` list
//! tables through it, ORMs (Django, SQLAlchemy) introspect `TABLES`,
//! `COLUMNS`, `STATISTICS` and `KEY_COLUMN_USAGE` before a migration, and
//! monitoring agents read `PROCESSLIST` and the privilege tables. quire
//! keeps no data dictionary tables of its own: every table here is a
//! *virtual table* computed from the catalog, the statistics and the
//! session's privileges when a statement names it (`show::virtual_table`
//! hands the rows to the binder as a row source), so any WHERE, JOIN,
//! GROUP BY or ORDER BY works on it as on a base table, and the answer is
//! always as current as the catalog.
//!
//! Each table has MySQL 8.0's columns in MySQL 8.0's order, with its names
//! (upper case) and types. What is there:
//!
//! * `SCHEMATA`, `TABLES`, `VIEWS`, `PARTITIONS` (one row per table, as
//!   MySQL shows an unpartitioned table), `FILES` (the system tablespace):
//!   `info_schema/tables.rs`;
//! * `COLUMNS`, `STATISTICS`, `KEY_COLUMN_USAGE`, `TABLE_CONSTRAINTS`:
//!   `info_schema/columns.rs`, which SHOW [FULL] COLUMNS shares;
//! * `CHARACTER_SETS`, `COLLATIONS`, `COLLATION_CHARACTER_SET_APPLICABILITY`,
//!   `ENGINES`, `PLUGINS`, the privilege tables and the tables of objects
//!   quire does not have yet: `info_schema/server.rs`;
//! * `PROCESSLIST`: `process.rs`.
//!
//! ## Privileges
//!
//! As in MySQL, a row about an object appears only when the account has
//! some privilege on it (a table: any table-level privilege or a column
//! grant on it; a database: any privilege inside it, or SHOW DATABASES).
//! The privilege tables show the session's own account, and every account
//! when the session may read the grant tables (SELECT on `mysql`).
//!
//! ## Values quire does not know
//!
//! Nothing here is invented: where quire keeps no such figure the column
//! is NULL, which is what MySQL shows for an unknown value.
//!
//! * `TABLES.CREATE_TIME`, `UPDATE_TIME`, `CHECK_TIME`: NULL (the catalog
//!   records no times; InnoDB too shows `UPDATE_TIME` NULL after a
//!   restart and `CHECK_TIME` NULL always).
//! * `TABLES.DATA_FREE`: NULL (free space is kept per tablespace, and
//!   quire does not attribute it to tables).
//! * `TABLES.CHECKSUM`: NULL, as InnoDB.
//! * `TABLE_ROWS`: the optimizer's row count (exact for small tables,
//!   an estimate for large ones, as InnoDB's). `DATA_LENGTH` and
//!   `INDEX_LENGTH`: leaf pages × `innodb_page_size` of the clustered and
//!   the secondary trees, counted when asked (`Engine::table_pages`);
//!   `AVG_ROW_LENGTH` is `DATA_LENGTH / TABLE_ROWS` as InnoDB computes it.
//! * `CREATE_OPTIONS` is empty and `TABLE_COMMENT` / `COLUMN_COMMENT`
//!   are empty strings: quire stores no table options or comments (a
//!   COMMENT clause is not kept).
//!
//! * `REFERENTIAL_CONSTRAINTS`, `CHECK_CONSTRAINTS` and the foreign-key
//!   and CHECK rows of `KEY_COLUMN_USAGE` / `TABLE_CONSTRAINTS` come from
//!   the table definitions (`constraints.rs`).
//!
//! Routines, triggers and events do not exist in quire yet, so
//! `ROUTINES`, `TRIGGERS`, `EVENTS` and `PARAMETERS` are truthfully empty.
//! `INNODB_TRX` is not served: quire's engine does not expose its open
//! transactions, and an empty table would claim there are none; naming it
//! is error 1146 like any table information_schema does not have (MySQL
//! says 1109 there; quire's binder has one answer for a missing table).

mod columns;
mod constraints;
mod server;
mod tables;

use std::sync::Arc;

use quire_engine::{ColumnType, Value};

use crate::ctx::Virtual;
use crate::privilege::{AccountPrivs, Privs};
use crate::session::Session;

pub(crate) use columns::{column_collation, full_columns, key_parts};
pub(crate) use server::{character_sets, collations, engines};
pub(crate) use tables::table_status;

/// The catalog name MySQL reports (`TABLE_CATALOG`): always `def`.
const CATALOG: &str = "def";

/// The rows of `information_schema.<name>` (any case) the session may see;
/// `None` if information_schema has no such table.
pub fn table(s: &Session, name: &str) -> Option<Virtual> {
    let n = name.to_ascii_uppercase();
    let v = match n.as_str() {
        "SCHEMATA" => tables::schemata(s),
        "TABLES" => tables::tables(s),
        "VIEWS" => tables::views(s),
        "PARTITIONS" => tables::partitions(s),
        "FILES" => tables::files(s),
        "COLUMNS" => columns::columns(s),
        "STATISTICS" => columns::statistics(s),
        "KEY_COLUMN_USAGE" => columns::key_column_usage(s),
        "TABLE_CONSTRAINTS" => columns::table_constraints(s),
        "REFERENTIAL_CONSTRAINTS" => constraints::referential_constraints(s),
        "CHECK_CONSTRAINTS" => constraints::check_constraints(s),
        "PROCESSLIST" => {
            let rows = crate::process::visible_rows(s.account().0, s.sees_all_threads());
            crate::process::information_schema(&rows)
        }
        other => server::table(s, other)?,
    };
    Some(v)
}

/// Column definitions, written compactly.
pub(crate) struct Cols(Vec<(String, ColumnType)>);

impl Cols {
    pub(crate) fn new() -> Cols {
        Cols(Vec::new())
    }
    /// `VARCHAR(len)`.
    pub(crate) fn v(mut self, name: &str, len: u32) -> Cols {
        self.0.push((name.to_string(), ColumnType::varchar(len)));
        self
    }
    /// `LONGTEXT`.
    pub(crate) fn text(mut self, name: &str) -> Cols {
        self.0
            .push((name.to_string(), ColumnType::text(ColumnType::LONG_BYTES)));
        self
    }
    /// `BIGINT UNSIGNED`.
    pub(crate) fn u(mut self, name: &str) -> Cols {
        self.0
            .push((name.to_string(), ColumnType::BigInt { unsigned: true }));
        self
    }
    /// `BIGINT` (signed).
    pub(crate) fn i(mut self, name: &str) -> Cols {
        self.0
            .push((name.to_string(), ColumnType::BigInt { unsigned: false }));
        self
    }
    /// `INT UNSIGNED`.
    pub(crate) fn u32(mut self, name: &str) -> Cols {
        self.0
            .push((name.to_string(), ColumnType::Int { unsigned: true }));
        self
    }
    /// `DATETIME`.
    pub(crate) fn dt(mut self, name: &str) -> Cols {
        self.0
            .push((name.to_string(), ColumnType::DateTime { fsp: 0 }));
        self
    }
    pub(crate) fn done(self) -> Vec<(String, ColumnType)> {
        self.0
    }
}

pub(crate) fn text(s: &str) -> Value {
    Value::text(s)
}

pub(crate) fn uint(n: u64) -> Value {
    Value::UInt(n)
}

/// Sorts rows by their first `n` columns as text (a stable order for
/// tools that diff answers; MySQL gives no order without ORDER BY).
pub(crate) fn sort_rows(rows: &mut [Vec<Value>], keys: &[usize]) {
    rows.sort_by(|a, b| {
        for &k in keys {
            let o = a[k].to_string().cmp(&b[k].to_string());
            if o != std::cmp::Ordering::Equal {
                return o;
            }
        }
        std::cmp::Ordering::Equal
    });
}

/// What the session may see: `None` privileges (embedded use, no account
/// store) see everything.
pub(crate) struct Visible(Option<Arc<AccountPrivs>>);

impl Visible {
    pub(crate) fn of(s: &Session) -> Visible {
        Visible(s.privileges_now())
    }
    /// A database: any privilege inside it, or SHOW DATABASES.
    pub(crate) fn db(&self, db: &str) -> bool {
        self.0
            .as_ref()
            .is_none_or(|p| p.global_effective().has(Privs::SHOW_DB) || p.any_in_db(db))
    }
    /// A table or view: any privilege on it.
    pub(crate) fn table(&self, db: &str, t: &str) -> bool {
        self.0.as_ref().is_none_or(|p| p.any_on_table(db, t))
    }
    /// The column privileges MySQL lists in `COLUMNS.PRIVILEGES`.
    pub(crate) fn column_privs(&self, db: &str, t: &str, c: &str) -> String {
        let have = match &self.0 {
            None => Privs::SELECT
                .union(Privs::INSERT)
                .union(Privs::UPDATE)
                .union(Privs::REFERENCES),
            Some(p) => p.on_column(db, t, c),
        };
        [
            (Privs::SELECT, "select"),
            (Privs::INSERT, "insert"),
            (Privs::UPDATE, "update"),
            (Privs::REFERENCES, "references"),
        ]
        .iter()
        .filter(|(b, _)| have.has(*b))
        .map(|(_, n)| *n)
        .collect::<Vec<_>>()
        .join(",")
    }
    pub(crate) fn privs(&self) -> Option<&AccountPrivs> {
        self.0.as_deref()
    }
}
