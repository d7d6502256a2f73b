//! # CREATE TABLE ... SELECT
//!
//! `CREATE TABLE t [(definitions)] [AS] SELECT ...` makes a table whose
//! columns are the written definitions the SELECT does not name, followed
//! by the SELECT's result columns (a written definition standing in for
//! the result column of its name: MySQL's order), and fills it with the
//! result:
//!
//! ```text
//!   SELECT's result columns ──describe──▶ name, type, nullability
//!   written definitions (keys, checks, …) ─┐
//!   + result columns not written ──────────┴─▶ CREATE TABLE (binlogged DDL)
//!   INSERT INTO t (result columns) SELECT ... ─▶ rows (strict conversions,
//!                                                defaults, keys, checks)
//!   the INSERT fails ─▶ DROP TABLE: the statement leaves no table behind
//! ```
//!
//! A result column takes the type the result reports (what a client's
//! column definition says), nullable unless the result cannot be NULL;
//! NULL itself is BINARY(0), as in MySQL. Keys, AUTO_INCREMENT and
//! defaults are not copied from the source tables (MySQL copies only the
//! type and NOT NULL). With IF NOT EXISTS and the table there, nothing is
//! inserted (MySQL 8.0) and a note 1050 says so.
//!
//! Not atomic across a crash: a crash between the CREATE and the INSERT's
//! commit leaves the table empty (MySQL 8.0 drops it at recovery).

use sqlparser::ast;

use quire_engine::{ColumnDef, EngineError};

use crate::session::done;
use crate::session::Session;
use crate::{Output, SqlResult};

fn ident(name: &str) -> String {
    format!("`{}`", name.replace('`', "``"))
}

pub(crate) fn run(s: &mut Session, ct: &ast::CreateTable) -> SqlResult<Output> {
    let Some(query) = &ct.query else {
        return Err(EngineError::internal(
            "CREATE TABLE ... SELECT without SELECT",
        ));
    };
    let result = s.describe_query(query)?;
    if result.is_empty() {
        return Err(EngineError::not_supported(
            "CREATE TABLE ... SELECT of a statement without a result set",
        ));
    }
    let mut bare = ct.clone();
    bare.query = None;
    let default = s.table_default_collation(&ct.name)?;
    let mut spec = crate::ddl::table_spec_with(&bare, s.current_db(), false, default)?;
    let mut filled: Vec<String> = Vec::with_capacity(result.len());
    for (i, col) in result.iter().enumerate() {
        if result[..i]
            .iter()
            .any(|c| c.name.eq_ignore_ascii_case(&col.name))
        {
            return Err(EngineError::new(
                1060,
                "42S21",
                format!("Duplicate column name '{}'", col.name),
            ));
        }
        filled.push(col.name.clone());
    }
    order_columns(&mut spec, &result);
    // Generated columns and DEFAULT expressions may read the result's
    // columns.
    crate::generated::validate_table(&mut spec.columns)?;
    let Some((db, name)) = s.create_from_spec(spec)? else {
        return Ok(done(0, 0, 1, String::new()));
    };
    let cols: Vec<String> = filled.iter().map(|c| ident(c)).collect();
    let sql = format!(
        "INSERT INTO {}.{} ({}) {}",
        ident(&db),
        ident(&name),
        cols.join(", "),
        query
    );
    let inserted = crate::parse::parse(&sql).and_then(|p| s.run_nested(&p));
    if let Err(e) = inserted {
        // The statement fails as a whole: the table it made goes too.
        s.drop_created(&db, &name, ct.temporary);
        return Err(e);
    }
    inserted
}

/// The table's columns as MySQL orders them: the written ones the result
/// does not name, then the result's columns in its order (a written
/// definition standing in for the result column of its name). Key
/// positions follow their columns.
fn order_columns(spec: &mut crate::ddl::TableSpec, result: &[crate::ColumnMeta]) {
    let named = |c: &ColumnDef| result.iter().any(|r| r.name.eq_ignore_ascii_case(&c.name));
    // Old position -> new position, for the written columns.
    let mut moved = vec![0usize; spec.columns.len()];
    let mut columns: Vec<ColumnDef> = Vec::with_capacity(spec.columns.len() + result.len());
    for (i, c) in spec.columns.iter().enumerate() {
        if !named(c) {
            moved[i] = columns.len();
            columns.push(c.clone());
        }
    }
    for r in result {
        match spec
            .columns
            .iter()
            .position(|c| c.name.eq_ignore_ascii_case(&r.name))
        {
            Some(i) => {
                moved[i] = columns.len();
                columns.push(spec.columns[i].clone());
            }
            None => {
                // A computed string has no collation of its own here: it
                // takes the new table's (a column keeps its own).
                let ty = match r.ty.collation() {
                    Some(quire_engine::ColumnType::LEGACY_COLLATION) => {
                        r.ty.clone().with_collation(spec.collation)
                    }
                    _ => r.ty.clone(),
                };
                columns.push(ColumnDef::new(&r.name, ty, r.nullable))
            }
        }
    }
    let remap = |v: &mut Vec<usize>| v.iter_mut().for_each(|p| *p = moved[*p]);
    remap(&mut spec.primary);
    for ix in &mut spec.indexes {
        remap(&mut ix.columns);
    }
    for fk in &mut spec.foreign_keys {
        remap(&mut fk.columns);
    }
    spec.columns = columns;
}
