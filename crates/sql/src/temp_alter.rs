//! # ALTER TABLE, CREATE INDEX and DROP INDEX on temporary tables
//!
//! MySQL 8.0 changes a temporary table only by copying it
//! (`is_inplace_alter_impossible`: "we can't handle altering temporary
//! tables without a copy"; the manual: "The table is copied when creating
//! an index on a TEMPORARY TABLE"), an `ALTER TABLE tmp RENAME u` too
//! ("Records: n"). quire does the same, through the permanent table's
//! plan (`alter_rebuild::plan`, every spec quire knows) and the engine's
//! copy (`Engine::rebuild_temporary_table`), so the errors are the
//! permanent table's (1054, 1060, 1061, 1062, 1068, 1075, 1091):
//!
//! ```text
//!   specs ─► RENAME apart, checked first (1050 among this session's
//!            temporary tables, 1049 for an unknown database; a permanent
//!            table of the name does not matter: the temporary one
//!            shadows it)
//!         ─► the rest: Rebuild plan ─► copy beside the old table ─► swap
//!            (a failure leaves the old table as it was)
//!         ─► AUTO_INCREMENT = n on the copy, then the rename
//!         ─► the session's TempTables map follows the engine's by_id
//! ```
//!
//! Every statement is a copy, so ALGORITHM=INPLACE / INSTANT are 1845
//! ("Try ALGORITHM=COPY") and LOCK=NONE is 1846 ("COPY algorithm requires
//! a lock"); LOCK=SHARED / EXCLUSIVE hold trivially (no other session can
//! reach the table). The statement reports the rows it copied. ALTER
//! TABLE, CREATE INDEX and DROP INDEX commit the open transaction first
//! even on a temporary table (the manual's "Statements That Cause an
//! Implicit Commit": only CREATE and DROP TEMPORARY TABLE are exempt), so
//! the copy sees every row. Nothing reaches the binary log. FOREIGN KEY
//! stays refused (InnoDB has none on temporary tables). RENAME TABLE is
//! not here: it never sees temporary tables (`alter_exec.rs`).

use std::sync::Arc;

use quire_engine::{EngineError, TableDef};
use sqlparser::ast;

use crate::alter::{Algorithm, LockLevel, Spec};
use crate::session::Session;
use crate::{Output, SqlResult};

type Name = (String, String);

fn same(a: &Name, b: &Name) -> bool {
    a.0.eq_ignore_ascii_case(&b.0) && a.1.eq_ignore_ascii_case(&b.1)
}

/// ER_TABLE_EXISTS_ERROR.
fn exists(name: &str) -> EngineError {
    EngineError::new(1050, "42S01", format!("Table '{name}' already exists"))
}

/// The checks of a RENAME to `to` of a temporary table: no other of this
/// session's temporary tables has the name (permanent ones may: the
/// temporary table shadows them), and the database exists.
fn rename_target_free(s: &Session, from: &Name, to: &Name) -> SqlResult<()> {
    if !same(from, to) && s.temps().contains(&to.0, &to.1) {
        return Err(exists(&to.1));
    }
    if s.engine().database_collation(&to.0).is_none() {
        return Err(EngineError::unknown_database(&to.0));
    }
    Ok(())
}

/// ALGORITHM / LOCK of an ALTER TABLE on a temporary table: always a
/// copy (module docs).
fn check_algorithm(algorithm: Option<Algorithm>, lock: Option<LockLevel>) -> SqlResult<()> {
    let lock = lock.unwrap_or(LockLevel::Default);
    let asked = match algorithm {
        Some(Algorithm::Instant) if lock != LockLevel::Default => {
            return Err(EngineError::new(
                1221,
                "HY000",
                "Incorrect usage of ALGORITHM=INSTANT and LOCK=NONE/SHARED/EXCLUSIVE",
            ));
        }
        Some(Algorithm::Inplace) => Some("ALGORITHM=INPLACE"),
        Some(Algorithm::Instant) => Some("ALGORITHM=INSTANT"),
        _ => None,
    };
    if let Some(asked) = asked {
        return Err(EngineError::new(
            1845,
            "0A000",
            format!("{asked} is not supported for this operation. Try ALGORITHM=COPY."),
        ));
    }
    if lock == LockLevel::None {
        return Err(EngineError::new(
            1846,
            "0A000",
            "LOCK=NONE is not supported. Reason: COPY algorithm requires a lock. Try LOCK=SHARED.",
        ));
    }
    Ok(())
}

/// What the statement reports: the rows the copy copied.
fn records(n: u64) -> Output {
    Output::Done {
        affected_rows: n,
        last_insert_id: 0,
        warnings: 0,
        info: format!("Records: {n}  Duplicates: 0  Warnings: 0"),
    }
}

/// ALTER TABLE (and CREATE / DROP INDEX) on this session's temporary
/// table `db`.`t`.
pub(crate) fn alter(
    s: &mut Session,
    db: &str,
    t: &str,
    specs: &[Spec],
    algorithm: Option<Algorithm>,
    lock: Option<LockLevel>,
) -> SqlResult<Output> {
    let from: Name = (db.to_string(), t.to_string());
    let mut to = None;
    let mut rest = Vec::with_capacity(specs.len());
    for sp in specs {
        match sp {
            Spec::Rename(n) => to = Some(crate::show::table_db(s, n, None)?),
            Spec::AddConstraint(c) if matches!(**c, ast::TableConstraint::ForeignKey(_)) => {
                return Err(EngineError::not_supported(
                    "FOREIGN KEY on a temporary table",
                ));
            }
            other => rest.push(other.clone()),
        }
    }
    check_algorithm(algorithm, lock)?;
    if let Some(to) = &to {
        rename_target_free(s, &from, to)?;
    }
    let rows = rebuild(s, &from, &rest)?;
    if let Some(to) = to {
        rename_one(s, &from, &to)?;
    }
    Ok(records(rows))
}

/// The copy of `from` changed by `specs` in its place; the rows copied.
fn rebuild(s: &mut Session, from: &Name, specs: &[Spec]) -> SqlResult<u64> {
    let old = current(s, from)?;
    let (rb, auto_increment) = crate::alter_rebuild::plan(s, &old, specs)?;
    let (new, rows) = crate::alter_rebuild::with_checks(s, &from.0, &from.1, |e, checks, i| {
        e.rebuild_temporary_table(&old, &rb, Some(i), checks)
    })?;
    s.temps_mut().insert(new.clone());
    s.engine().drop_replaced_temporary(old)?;
    if let Some(n) = auto_increment {
        s.engine().temporary_auto_increment(&new, n)?;
    }
    Ok(rows)
}

/// This session's temporary table of that name.
fn current(s: &Session, name: &Name) -> SqlResult<Arc<TableDef>> {
    s.temps().get(&name.0, &name.1).cloned().ok_or_else(|| {
        EngineError::new(
            1146,
            "42S02",
            format!("Table '{}.{}' doesn't exist", name.0, name.1),
        )
    })
}

/// Renames the temporary table `from` (checked by `rename_target_free`).
fn rename_one(s: &mut Session, from: &Name, to: &Name) -> SqlResult<()> {
    let old = current(s, from)?;
    let new = s.engine().rename_temporary_table(&old, &to.0, &to.1)?;
    s.temps_mut().remove(&from.0, &from.1);
    s.temps_mut().insert(new);
    Ok(())
}
