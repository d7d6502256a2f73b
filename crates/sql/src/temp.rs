//! # A session's temporary tables
//!
//! `CREATE TEMPORARY TABLE` makes a table only this session sees; it
//! shadows a permanent table of the same name until it is dropped, and
//! goes when the session ends (or COM_RESET_CONNECTION / COM_CHANGE_USER).
//! The engine keeps its rows like any table's (quire_engine's
//! `temp_table.rs`); the session keeps its definition and resolves names:
//!
//! ```text
//!   name (db, t) ──▶ this session's temporary tables ──found──▶ that table
//!                              │ not found
//!                              ▼
//!                    the engine's catalog (permanent tables, views)
//! ```
//!
//! As in MySQL 8.0: creating and dropping one commits nothing, needs the
//! CREATE TEMPORARY TABLES privilege on the database and nothing after
//! that (the session owns the table), and neither reaches the binary log;
//! `DROP TABLE t` drops the temporary `t` if there is one, `DROP
//! TEMPORARY TABLE` never a permanent table; SHOW TABLES and
//! information_schema.TABLES do not list them.
//!
//! ALTER TABLE (every change quire makes to a permanent table, ALTER
//! TABLE ... RENAME included), CREATE [UNIQUE] INDEX and DROP INDEX work
//! on one as in MySQL 8.0 (`temp_alter.rs`): by a copy of the table
//! (MySQL's only algorithm for temporary tables); renamed, it stays
//! temporary and shadows under its new name. They commit the open
//! transaction first, as on permanent tables. RENAME TABLE does not see
//! temporary tables (MySQL 8.0: "RENAME TABLE does not work. Use ALTER
//! TABLE instead"): it renames the permanent table a temporary one
//! shadows, or finds none (1146). FOREIGN KEY on one is refused (1235),
//! as InnoDB keeps none on temporary tables. This map always names what
//! the engine's `by_id` holds: a failed change leaves both as they were.

use std::collections::HashMap;
use std::sync::Arc;

use quire_engine::TableDef;

/// This session's temporary tables by (database, name), lower-cased as
/// the catalog keys names.
#[derive(Default)]
pub struct TempTables {
    map: HashMap<(String, String), Arc<TableDef>>,
}

fn key(db: &str, name: &str) -> (String, String) {
    (db.to_ascii_lowercase(), name.to_ascii_lowercase())
}

impl TempTables {
    pub fn get(&self, db: &str, name: &str) -> Option<&Arc<TableDef>> {
        if self.map.is_empty() {
            return None;
        }
        self.map.get(&key(db, name))
    }

    pub fn contains(&self, db: &str, name: &str) -> bool {
        self.get(db, name).is_some()
    }

    pub(crate) fn insert(&mut self, def: Arc<TableDef>) {
        self.map.insert(key(&def.db, &def.name), def);
    }

    pub(crate) fn remove(&mut self, db: &str, name: &str) -> Option<Arc<TableDef>> {
        self.map.remove(&key(db, name))
    }

    /// Every table, for the end of the session.
    pub(crate) fn take_all(&mut self) -> Vec<Arc<TableDef>> {
        self.map.drain().map(|(_, d)| d).collect()
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}
