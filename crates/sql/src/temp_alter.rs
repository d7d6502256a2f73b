//! # ALTER TABLE, CREATE / DROP INDEX and RENAME TABLE on temporary tables
//!
//! MySQL 8.0 changes a temporary table only by copying it
//! (`is_inplace_alter_impossible`: "we can't handle altering temporary
//! tables without a copy"; the manual: "The table is copied when creating
//! an index on a TEMPORARY TABLE"). quire does the same, through the
//! permanent table's plan (`alter_rebuild::plan`, every spec quire knows)
//! and the engine's copy (`Engine::rebuild_temporary_table`), so the
//! errors are the permanent table's (1054, 1060, 1061, 1062, 1068, 1091):
//!
//! ```text
//!   specs ─► RENAME apart (checked first: 1050 among this session's
//!            temporary tables, 1049 for an unknown database)
//!         ─► the rest: Rebuild plan ─► copy beside the old table ─► swap
//!            (a failure leaves the old table as it was)
//!         ─► AUTO_INCREMENT = n on the copy, then the rename
//!         ─► the session's TempTables map follows the engine's by_id
//! ```
//!
//! As MySQL: a statement that only renames is no copy (its
//! `simple_rename_or_index_change`), and accepts any ALGORITHM and LOCK;
//! any other statement is a copy, so ALGORITHM=INPLACE / INSTANT are
//! 1845 ("Try ALGORITHM=COPY") and LOCK=NONE is 1846 ("COPY algorithm
//! requires a lock"); LOCK=SHARED / EXCLUSIVE hold trivially (no other
//! session can reach the table). A copy reports the rows it copied
//! (`Records: n`), a rename alone a plain OK. ALTER TABLE, CREATE / DROP INDEX and RENAME TABLE
//! commit the open transaction first even on a temporary table (the
//! manual's "Statements That Cause an Implicit Commit": only CREATE and
//! DROP TEMPORARY TABLE are exempt), so the copy sees every row. Nothing
//! reaches the binary log. FOREIGN KEY stays refused (InnoDB has none
//! on temporary tables).
//!
//! RENAME TABLE with several pairs applies them in order over this
//! session's temporary names first (a name that is a temporary table
//! there renames it, as MySQL resolves names), the permanent pairs then
//! go to the engine together (all or none) before the temporary renames,
//! which cannot fail once checked.

use std::sync::Arc;

use quire_engine::{EngineError, RenamePair, TableDef};
use sqlparser::ast::{self, ObjectName};

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

/// ALGORITHM / LOCK of an ALTER TABLE on a temporary table (module docs).
fn check_algorithm(
    copies: bool,
    algorithm: Option<Algorithm>,
    lock: Option<LockLevel>,
) -> SqlResult<()> {
    let lock = lock.unwrap_or(LockLevel::Default);
    if algorithm == Some(Algorithm::Instant) && lock != LockLevel::Default {
        return Err(EngineError::new(
            1221,
            "HY000",
            "Incorrect usage of ALGORITHM=INSTANT and LOCK=NONE/SHARED/EXCLUSIVE",
        ));
    }
    if !copies {
        return Ok(());
    }
    let asked = match algorithm {
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

/// What the statement reports: the rows a copy copied, nothing for a
/// rename alone (MySQL's plain OK there).
fn records(copied: Option<u64>) -> Output {
    Output::Done {
        affected_rows: copied.unwrap_or(0),
        last_insert_id: 0,
        warnings: 0,
        info: copied
            .map(|n| format!("Records: {n}  Duplicates: 0  Warnings: 0"))
            .unwrap_or_default(),
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
    let copies = !rest.is_empty() || algorithm == Some(Algorithm::Copy);
    check_algorithm(copies, algorithm, lock)?;
    if let Some(to) = &to {
        rename_target_free(s, &from, to)?;
    }
    let rows = if copies {
        Some(rebuild(s, &from, &rest)?)
    } else {
        None
    };
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

/// RENAME TABLE a TO b [, ...] over temporary and permanent tables
/// (module docs).
pub(crate) fn rename_tables(s: &mut Session, pairs: &[(ObjectName, ObjectName)]) -> SqlResult<()> {
    // This session's temporary tables as the pairs rename them: (name
    // now, the table's name before the statement).
    let mut temps: Vec<(Name, Name)> = s
        .temps()
        .names()
        .into_iter()
        .map(|n| (n.clone(), n))
        .collect();
    let mut permanent = Vec::new();
    for (f, t) in pairs {
        let from = crate::show::table_db(s, f, None)?;
        let to = crate::show::table_db(s, t, None)?;
        match temps.iter().position(|(now, _)| same(now, &from)) {
            Some(i) => {
                if !same(&from, &to) && temps.iter().any(|(now, _)| same(now, &to)) {
                    return Err(exists(&to.1));
                }
                if s.engine().database_collation(&to.0).is_none() {
                    return Err(EngineError::unknown_database(&to.0));
                }
                temps[i].0 = to;
            }
            None => permanent.push(RenamePair { from, to }),
        }
    }
    if !permanent.is_empty() {
        s.engine().rename_tables(&permanent, Some(s.interrupt()))?;
    }
    apply_renames(s, &temps)
}

/// Puts the renamed temporary tables under their new names: all leave
/// the map before any comes back (pairs may swap names).
fn apply_renames(s: &mut Session, temps: &[(Name, Name)]) -> SqlResult<()> {
    let moved: Vec<&(Name, Name)> = temps
        .iter()
        .filter(|(now, was)| now.0 != was.0 || now.1 != was.1)
        .collect();
    let mut defs = Vec::with_capacity(moved.len());
    for (now, was) in &moved {
        if let Some(def) = s.temps_mut().remove(&was.0, &was.1) {
            defs.push((now, def));
        }
    }
    let mut first_err = None;
    for (now, def) in defs {
        match s.engine().rename_temporary_table(&def, &now.0, &now.1) {
            Ok(new) => s.temps_mut().insert(new),
            // Only a database dropped meanwhile: the table keeps its name.
            Err(e) => {
                s.temps_mut().insert(def);
                first_err.get_or_insert(e);
            }
        }
    }
    first_err.map_or(Ok(()), Err)
}
