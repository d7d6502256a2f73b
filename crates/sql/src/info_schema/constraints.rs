//! # REFERENTIAL_CONSTRAINTS, CHECK_CONSTRAINTS, and the foreign-key and
//! CHECK rows of KEY_COLUMN_USAGE and TABLE_CONSTRAINTS
//!
//! Read from the table definitions (`quire_engine::constraint`): a foreign
//! key is listed under the table that declares it, naming its parent by
//! the names it keeps (which need not exist after `foreign_key_checks=0`).
//! `UNIQUE_CONSTRAINT_NAME` is the parent's index the key uses (`PRIMARY`
//! or the index name), NULL when the parent or such an index is missing,
//! as MySQL 8.0 shows it.

use quire_engine::{TableDef, Value};

use super::{text, uint, Cols, Visible, CATALOG};
use crate::ctx::Virtual;
use crate::session::Session;

/// The visible tables, (database, definition).
fn visible_tables(s: &Session) -> Vec<(String, std::sync::Arc<TableDef>)> {
    let vis = Visible::of(s);
    let engine = s.engine();
    let mut out = Vec::new();
    for db in engine.databases() {
        let Ok(tables) = engine.tables(&db) else {
            continue;
        };
        for t in tables {
            if vis.table(&db, &t.name) {
                out.push((db.clone(), t));
            }
        }
    }
    out
}

/// The parent index a key uses: `PRIMARY`, an index name, or None.
fn unique_name(s: &Session, t: &TableDef, k: usize) -> Option<String> {
    let fk = &t.foreign_keys[k];
    let parent = s.engine().table(&fk.ref_db, &fk.ref_table).ok()?;
    let cols: Option<Vec<usize>> = fk.ref_columns.iter().map(|n| parent.column(n)).collect();
    match quire_engine::txn::fk_serving_index(&parent, &cols?)? {
        None => Some("PRIMARY".into()),
        Some(i) => Some(i),
    }
}

/// `information_schema.REFERENTIAL_CONSTRAINTS`.
pub(crate) fn referential_constraints(s: &Session) -> Virtual {
    let cols = Cols::new()
        .v("CONSTRAINT_CATALOG", 64)
        .v("CONSTRAINT_SCHEMA", 64)
        .v("CONSTRAINT_NAME", 64)
        .v("UNIQUE_CONSTRAINT_CATALOG", 64)
        .v("UNIQUE_CONSTRAINT_SCHEMA", 64)
        .v("UNIQUE_CONSTRAINT_NAME", 64)
        .v("MATCH_OPTION", 7)
        .v("UPDATE_RULE", 11)
        .v("DELETE_RULE", 11)
        .v("TABLE_NAME", 64)
        .v("REFERENCED_TABLE_NAME", 64)
        .done();
    let mut rows = Vec::new();
    for (db, t) in visible_tables(s) {
        for (k, fk) in t.foreign_keys.iter().enumerate() {
            rows.push(vec![
                text(CATALOG),
                text(&db),
                text(&fk.name),
                text(CATALOG),
                text(&fk.ref_db),
                unique_name(s, &t, k).map_or(Value::Null, |n| text(&n)),
                text("NONE"),
                text(fk.on_update.sql()),
                text(fk.on_delete.sql()),
                text(&t.name),
                text(&fk.ref_table),
            ]);
        }
    }
    (cols, rows)
}

/// `information_schema.CHECK_CONSTRAINTS`.
pub(crate) fn check_constraints(s: &Session) -> Virtual {
    let cols = Cols::new()
        .v("CONSTRAINT_CATALOG", 64)
        .v("CONSTRAINT_SCHEMA", 64)
        .v("CONSTRAINT_NAME", 64)
        .v("CHECK_CLAUSE", 1024)
        .done();
    let mut rows = Vec::new();
    for (db, t) in visible_tables(s) {
        for c in &t.checks {
            rows.push(vec![text(CATALOG), text(&db), text(&c.name), text(&c.expr)]);
        }
    }
    (cols, rows)
}

/// KEY_COLUMN_USAGE rows of `t`'s foreign keys.
pub(crate) fn key_column_rows(db: &str, t: &TableDef, rows: &mut Vec<Vec<Value>>) {
    for fk in &t.foreign_keys {
        for (seq, (&c, rc)) in fk.columns.iter().zip(&fk.ref_columns).enumerate() {
            rows.push(vec![
                text(CATALOG),
                text(db),
                text(&fk.name),
                text(CATALOG),
                text(db),
                text(&t.name),
                text(&t.columns[c].name),
                uint(seq as u64 + 1),
                uint(seq as u64 + 1),
                text(&fk.ref_db),
                text(&fk.ref_table),
                text(rc),
            ]);
        }
    }
}

/// TABLE_CONSTRAINTS rows of `t`'s foreign keys and CHECKs.
pub(crate) fn table_constraint_rows(db: &str, t: &TableDef, rows: &mut Vec<Vec<Value>>) {
    for fk in &t.foreign_keys {
        rows.push(vec![
            text(CATALOG),
            text(db),
            text(&fk.name),
            text(db),
            text(&t.name),
            text("FOREIGN KEY"),
            text("YES"),
        ]);
    }
    for c in &t.checks {
        rows.push(vec![
            text(CATALOG),
            text(db),
            text(&c.name),
            text(db),
            text(&t.name),
            text("CHECK"),
            text(if c.enforced { "YES" } else { "NO" }),
        ]);
    }
}
