//! # Foreign keys in DDL: what a definition must satisfy
//!
//! CREATE TABLE and ALTER TABLE ... ADD FOREIGN KEY check a key against
//! the catalog as InnoDB does (`constraint.rs` has the errors):
//!
//! - as many referencing as referenced columns (1239);
//! - SET NULL only on nullable columns (1830);
//! - the parent exists (1824) -- unless `foreign_key_checks=0`, which lets
//!   a dump create a child before its parent -- and has the columns
//!   (3734) with compatible types (3780: integers and decimals of the same
//!   type and sign, strings of the same kind whatever their length);
//! - the parent's PRIMARY KEY or one of its indexes starts with the
//!   referenced columns in order (1822);
//! - the child has an index starting with its columns: the SQL layer adds
//!   one before the definition gets here, named as MySQL names it.
//!
//! And what other DDL must respect while keys exist: a parent is not
//! dropped (3730) or truncated (1701) under a child, an index a key needs
//! is not dropped (1553).

use crate::catalog::{Catalog, TableDef};
use crate::constraint::{self, FkAction, ForeignKeyDef};
use crate::error::{EngineError, Result};
use crate::txn::fk_access_for;
use crate::types::ColumnType;

/// Whether a child column of type `a` may reference a parent column of
/// type `b`.
fn compatible(a: &ColumnType, b: &ColumnType) -> bool {
    use ColumnType::*;
    a == b
        || matches!(
            (a, b),
            (Char { .. } | Varchar { .. }, Char { .. } | Varchar { .. })
        )
        || matches!(
            (a, b),
            (
                Binary { .. } | VarBinary { .. },
                Binary { .. } | VarBinary { .. }
            )
        )
}

/// 3734 ER_FK_NO_COLUMN_PARENT.
fn no_parent_column(col: &str, fk: &str, parent: &str) -> EngineError {
    EngineError::new(
        3734,
        "HY000",
        format!("Failed to add the foreign key constraint. Missing column '{col}' for constraint '{fk}' in the referenced table '{parent}'"),
    )
}

/// Checks every foreign key of `def` (a table being created or altered)
/// against the catalog. `checks` is the session's foreign_key_checks.
pub(crate) fn validate(def: &TableDef, cat: &Catalog, checks: bool) -> Result<()> {
    for (i, fk) in def.foreign_keys.iter().enumerate() {
        if def.foreign_keys[..i]
            .iter()
            .any(|o| o.name.eq_ignore_ascii_case(&fk.name))
        {
            return Err(constraint::duplicate_fk_name(&fk.name));
        }
        validate_one(def, fk, cat, checks)?;
    }
    Ok(())
}

/// ALTER TABLE: the keys `added` to `def` (already in its list).
pub(crate) fn validate_added(
    def: &TableDef,
    added: &[ForeignKeyDef],
    cat: &Catalog,
    checks: bool,
) -> Result<()> {
    for fk in added {
        let same = def
            .foreign_keys
            .iter()
            .filter(|o| o.name.eq_ignore_ascii_case(&fk.name))
            .count();
        if same > 1 {
            return Err(constraint::duplicate_fk_name(&fk.name));
        }
        validate_one(def, fk, cat, checks)?;
    }
    Ok(())
}

/// `defs[0]` is the new definition of a table the catalog holds as it was
/// before (`old`, same id): a rename of it or of its columns. Every
/// foreign key naming it as parent follows -- children already in `defs`
/// are changed there, others are added to `defs` (one catalog
/// mini-transaction installs them all).
pub(crate) fn follow_parent(cat: &Catalog, old: &TableDef, defs: &mut Vec<TableDef>) {
    let Some(new) = defs.iter().find(|d| d.id == old.id).cloned() else {
        return;
    };
    let renamed = new.db != old.db
        || new.name != old.name
        || new
            .columns
            .iter()
            .zip(&old.columns)
            .any(|(a, b)| a.name != b.name);
    if !renamed {
        return;
    }
    for (child, k) in cat.children_of(&old.db, &old.name) {
        let pos = match defs.iter().position(|d| d.id == child.id) {
            Some(p) => p,
            None => {
                defs.push((*child).clone());
                defs.len() - 1
            }
        };
        let Some(fk) = defs[pos].foreign_keys.get_mut(k) else {
            continue;
        };
        fk.ref_db = new.db.clone();
        fk.ref_table = new.name.clone();
        for n in fk.ref_columns.iter_mut() {
            if let Some(i) = old.column(n) {
                if let Some(c) = new.columns.get(i) {
                    *n = c.name.clone();
                }
            }
        }
    }
}

/// MySQL's rules for a key over generated columns: a key column may not
/// be VIRTUAL (3733), nor a generated one the key's action would write
/// (3104); a column a STORED generated column reads may not be written by
/// a cascade (3192). quire also keeps VIRTUAL values in the row, so a
/// cascade that writes a column a VIRTUAL one reads is refused (1235)
/// rather than leave the value stale.
fn generated_columns_allow(def: &TableDef, fk: &ForeignKeyDef) -> Result<()> {
    let writes = |a: FkAction| matches!(a, FkAction::Cascade | FkAction::SetNull);
    let action = if fk.on_update == FkAction::Cascade {
        Some("ON UPDATE CASCADE")
    } else if fk.on_update == FkAction::SetNull {
        Some("ON UPDATE SET NULL")
    } else if fk.on_delete == FkAction::SetNull {
        Some("ON DELETE SET NULL")
    } else {
        None
    };
    for &c in &fk.columns {
        let col = &def.columns[c];
        if let Some(g) = &col.generated {
            if !g.stored {
                return Err(EngineError::new(
                    3733,
                    "HY000",
                    format!(
                        "Foreign key '{}' uses virtual column '{}' which is not supported.",
                        fk.name, col.name
                    ),
                ));
            }
            if let Some(a) = action {
                return Err(EngineError::new(
                    3104,
                    "HY000",
                    format!("Cannot define foreign key with {a} clause on a generated column."),
                ));
            }
        }
        let cascades = writes(fk.on_update) || fk.on_delete == FkAction::SetNull;
        if !cascades {
            continue;
        }
        for g in def.columns.iter().filter_map(|x| x.generated.as_ref()) {
            if !crate::catalog::expr_names_column(&g.expr, &col.name) {
                continue;
            }
            if g.stored {
                return Err(EngineError::new(
                    3192,
                    "HY000",
                    "Cannot add foreign key on the base column of stored column. ",
                ));
            }
            return Err(EngineError::not_supported(format!(
                "a foreign key whose {} writes column '{}' read by a virtual generated column",
                action.unwrap_or("action"),
                col.name
            )));
        }
    }
    Ok(())
}

fn validate_one(def: &TableDef, fk: &ForeignKeyDef, cat: &Catalog, checks: bool) -> Result<()> {
    if fk.columns.len() != fk.ref_columns.len() || fk.columns.is_empty() {
        return Err(constraint::wrong_fk_def(&fk.name));
    }
    for &c in &fk.columns {
        let col = &def.columns[c];
        let set_null = fk.on_delete == FkAction::SetNull || fk.on_update == FkAction::SetNull;
        if set_null && !col.nullable {
            return Err(constraint::column_not_null(&col.name, &fk.name));
        }
    }
    generated_columns_allow(def, fk)?;
    if fk_access_for(def, &fk.columns).is_none() {
        // The SQL layer adds the index; a definition without one is a bug
        // upstream, refused rather than stored.
        return Err(EngineError::internal(format!(
            "foreign key '{}' has no index on the referencing columns",
            fk.name
        )));
    }
    let own = fk.references(&def.db, &def.name);
    let parent = if own {
        def.clone()
    } else {
        match cat.table(&fk.ref_db, &fk.ref_table) {
            Ok(p) => (*p).clone(),
            Err(_) if !checks => return Ok(()),
            Err(_) => return Err(constraint::cannot_open_parent(&fk.ref_table)),
        }
    };
    let mut pcols = Vec::with_capacity(fk.ref_columns.len());
    for (&c, rname) in fk.columns.iter().zip(&fk.ref_columns) {
        let p = parent
            .column(rname)
            .ok_or_else(|| no_parent_column(rname, &fk.name, &parent.name))?;
        let (cc, pc) = (&def.columns[c], &parent.columns[p]);
        if !compatible(&cc.ty, &pc.ty) {
            return Err(constraint::incompatible_columns(
                &cc.name, &pc.name, &fk.name,
            ));
        }
        pcols.push(p);
    }
    if fk_access_for(&parent, &pcols).is_none() {
        return Err(constraint::no_parent_index(&fk.name, &parent.name));
    }
    Ok(())
}

/// The first foreign key of another table that names `db.table` as its
/// parent, skipping children in `also_dropped` (dropped by the same
/// statement): what stops a DROP TABLE (3730).
pub(crate) fn blocking_child(
    cat: &Catalog,
    db: &str,
    table: &str,
    also_dropped: &[(String, String)],
) -> Option<EngineError> {
    cat.children_of(db, table)
        .into_iter()
        .find(|(child, _)| {
            let is = |d: &str, n: &str| {
                child.db.eq_ignore_ascii_case(d) && child.name.eq_ignore_ascii_case(n)
            };
            !is(db, table) && !also_dropped.iter().any(|(d, n)| is(d, n))
        })
        .map(|(child, k)| {
            constraint::cannot_drop_parent(table, &child.foreign_keys[k].name, &child.name)
        })
}

/// TRUNCATE of a table another table references (1701).
pub(crate) fn truncate_blocked(cat: &Catalog, db: &str, table: &str) -> Option<EngineError> {
    cat.children_of(db, table)
        .into_iter()
        .find(|(child, _)| {
            !(child.db.eq_ignore_ascii_case(db) && child.name.eq_ignore_ascii_case(table))
        })
        .map(|(child, k)| {
            let names: Vec<String> = child.columns.iter().map(|c| c.name.clone()).collect();
            let fk = &child.foreign_keys[k];
            constraint::truncate_referenced(&format!(
                "{}.{}, {}",
                constraint::q(&child.db),
                constraint::q(&child.name),
                fk.sql(&child.db, &names, ", ")
            ))
        })
}

/// After dropping index `dropped` of a table, `new` (its definition
/// without the index) must still serve every key that needs an index on
/// it, as child or as parent (1553 otherwise).
pub(crate) fn index_still_served(new: &TableDef, cat: &Catalog, dropped: &str) -> Result<()> {
    let served = new
        .foreign_keys
        .iter()
        .all(|fk| fk_access_for(new, &fk.columns).is_some())
        && cat
            .children_of(&new.db, &new.name)
            .iter()
            .all(
                |(child, k)| match crate::txn::fk_ref_positions(new, &child.foreign_keys[*k]) {
                    Some(pcols) => fk_access_for(new, &pcols).is_some(),
                    None => true,
                },
            );
    if served {
        Ok(())
    } else {
        Err(constraint::index_needed(dropped))
    }
}
