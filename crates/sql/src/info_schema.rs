//! # information_schema.TABLES
//!
//! ORMs list a database's tables through `information_schema.TABLES`
//! rather than SHOW TABLES: Django's MySQL introspection runs
//! `SELECT table_name, table_type, table_comment FROM
//! information_schema.tables WHERE table_schema = DATABASE()` before every
//! `migrate`. This module answers that view from the catalog, one row per
//! base table the account has some privilege on (MySQL hides the others),
//! with MySQL 8.0's column names in its order.
//!
//! Only the columns quire can fill truthfully are here: the names, the
//! type (`BASE TABLE`), the engine and row format every quire table has,
//! the row-count estimate the optimizer uses (as MySQL's own is an
//! estimate), the collation SHOW CREATE TABLE prints and an empty comment.
//! MySQL's size, time and checksum columns are absent, so a query naming
//! one gets 1054 instead of an invented value. The rest of
//! information_schema (COLUMNS, STATISTICS, KEY_COLUMN_USAGE, ...) belongs
//! to the schema work and is not here yet.

use quire_engine::{ColumnType, Value};

use crate::ctx::Virtual;
use crate::session::Session;

/// The rows of information_schema.TABLES the session may see.
pub fn tables(s: &Session) -> Virtual {
    let name = |n: &str, len: u32| (n.to_string(), ColumnType::Varchar { len });
    let cols = vec![
        name("TABLE_CATALOG", 64),
        name("TABLE_SCHEMA", 64),
        name("TABLE_NAME", 64),
        name("TABLE_TYPE", 64),
        name("ENGINE", 64),
        ("VERSION".to_string(), ColumnType::Int { unsigned: false }),
        name("ROW_FORMAT", 10),
        (
            "TABLE_ROWS".to_string(),
            ColumnType::BigInt { unsigned: true },
        ),
        name("TABLE_COLLATION", 64),
        name("TABLE_COMMENT", 2048),
    ];
    let engine = s.engine();
    let privs = s.privileges_now();
    let mut rows = Vec::new();
    for db in engine.databases() {
        let Ok(defs) = engine.tables(&db) else {
            continue; // dropped since it was listed
        };
        for t in defs {
            if !privs.as_ref().is_none_or(|p| p.any_on_table(&db, &t.name)) {
                continue;
            }
            let rows_estimate = engine.table_stats(&t).rows;
            rows.push(vec![
                Value::text("def"),
                Value::text(&db),
                Value::text(&t.name),
                Value::text("BASE TABLE"),
                Value::text("InnoDB"),
                Value::Int(10),
                Value::text("Dynamic"),
                Value::UInt(rows_estimate),
                Value::text("utf8mb4_bin"),
                Value::text(""),
            ]);
        }
    }
    rows.sort_by(|a, b| {
        (a[1].to_string(), a[2].to_string()).cmp(&(b[1].to_string(), b[2].to_string()))
    });
    (cols, rows)
}
