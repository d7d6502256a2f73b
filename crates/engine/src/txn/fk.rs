//! # Foreign keys at the row operations
//!
//! InnoDB checks foreign keys inside its row operations, so every path
//! that writes a row is covered; so does quire, from `Txn::insert`,
//! `update` and `delete`:
//!
//! ```text
//!   child row written (insert, or update changing its key columns)
//!      -> the parent row must exist: looked up through the parent's
//!         PRIMARY KEY or an index that starts with the referenced
//!         columns, with a shared lock on it (a concurrent DELETE of the
//!         parent waits for this transaction, and this for it)
//!      -> none: 1452
//!
//!   parent row deleted, or updated changing referenced columns
//!      -> child rows holding the old values, found through the child's
//!         key index (locked: shared to refuse, exclusive to change)
//!      -> RESTRICT / NO ACTION: 1451
//!         CASCADE: delete them / set their key to the new values
//!         SET NULL: set their key columns to NULL
//!      cascaded writes are ordinary row writes: they check their own
//!      parents and cascade to their own children, at most 15 deep (3008)
//! ```
//!
//! The parent side runs after the parent's own write is recorded, so a
//! row that references itself is not its own child, and a cascaded child
//! update finds the parent's new values among this transaction's writes.
//! `foreign_key_checks=0` (the session's [`Txn::set_foreign_key_checks`])
//! turns all of it off, as in MySQL: no checks, no cascades.

use std::cmp::Ordering;
use std::ops::Bound;
use std::sync::Arc;

use super::{Row, Scan, Txn};
use crate::catalog::TableDef;
use crate::constraint::{self, FkAction, ForeignKeyDef, MAX_CASCADE_DEPTH};
use crate::error::Result;
use crate::lock::LockMode;
use crate::txn::LockWait;
use crate::types::{self, Value};

/// How a key's columns can be looked up in a table: through the clustered
/// tree (None) or a secondary index (its name), when the table's primary
/// key or that index starts with `cols` in order (whole columns: as in
/// InnoDB, a column prefix index serves no foreign key).
pub(crate) fn access_for(t: &TableDef, cols: &[usize]) -> Option<Option<String>> {
    if !t.primary.is_empty() && t.primary.starts_with(cols) {
        return Some(None);
    }
    t.indexes
        .iter()
        .find(|i| i.ordered_columns().starts_with(cols))
        .map(|i| Some(i.name.clone()))
}

/// `(`db`.`child`, CONSTRAINT ...)`: what 1451 and 1452 name.
pub(crate) fn describe(child: &TableDef, fk: &ForeignKeyDef) -> String {
    let names: Vec<String> = child.columns.iter().map(|c| c.name.clone()).collect();
    format!(
        "{}.{}, {}",
        constraint::q(&child.db),
        constraint::q(&child.name),
        fk.sql(&child.db, &names, ", ")
    )
}

fn same(a: &Value, b: &Value) -> bool {
    match (a.is_null(), b.is_null()) {
        (true, true) => true,
        (false, false) => types::compare(a, b) == Some(Ordering::Equal),
        _ => false,
    }
}

impl Txn {
    /// `foreign_key_checks` of the session running this transaction.
    pub fn set_foreign_key_checks(&mut self, on: bool) {
        self.fk_checks = on;
    }

    /// The rows of `t` whose `cols` equal `vals`, read through the best
    /// access path, locked in `mode`.
    fn fk_matching(
        &mut self,
        t: &TableDef,
        cols: &[usize],
        vals: &[Value],
        mode: LockMode,
        limit: Option<usize>,
    ) -> Result<Vec<Row>> {
        // A value the column cannot hold matches no row.
        let mut key = Vec::with_capacity(vals.len());
        for (&c, v) in cols.iter().zip(vals) {
            let col = &t.columns[c];
            match types::coerce(v.clone(), &col.ty, true, &col.name, 1) {
                Ok(x) => key.push(x),
                Err(_) => return Ok(Vec::new()),
            }
        }
        let s = match access_for(t, cols) {
            Some(index) => Scan {
                index,
                lower: Bound::Included(key.clone()),
                upper: Bound::Included(key.clone()),
                lock: Some(mode),
                wait: LockWait::Wait,
                limit,
                ..Scan::default()
            },
            // No index leads with the columns (only after
            // foreign_key_checks=0 DDL): every row is read.
            None => Scan {
                lock: Some(mode),
                ..Scan::default()
            },
        };
        let rows = self.scan(t, &s)?;
        Ok(rows
            .into_iter()
            .filter(|r| cols.iter().zip(&key).all(|(&c, v)| same(&r.values[c], v)))
            .collect())
    }

    /// Child side: each foreign key of `t` whose columns `row` sets (all
    /// non-NULL, and changed from `old` when updating) names an existing
    /// parent row (1452).
    pub(super) fn fk_check_parents(
        &mut self,
        t: &TableDef,
        row: &[Value],
        old: Option<&[Value]>,
    ) -> Result<()> {
        if !self.fk_checks {
            return Ok(());
        }
        for fk in &t.foreign_keys {
            let vals: Vec<Value> = fk.columns.iter().map(|&c| row[c].clone()).collect();
            if vals.iter().any(Value::is_null) {
                continue;
            }
            if let Some(o) = old {
                if fk.columns.iter().all(|&c| same(&o[c], &row[c])) {
                    continue;
                }
            }
            let parent = self.e.catalog.read().table(&fk.ref_db, &fk.ref_table).ok();
            let found = match parent {
                Some(p) => match ref_positions(&p, fk) {
                    Some(pcols) => !self
                        .fk_matching(&p, &pcols, &vals, LockMode::Shared, Some(1))?
                        .is_empty(),
                    None => false,
                },
                None => false,
            };
            if !found {
                return Err(constraint::no_referenced_row(&describe(t, fk)));
            }
        }
        Ok(())
    }

    /// Parent side: `old` of `t` was deleted (`new` None) or updated to
    /// `new`; its children follow their keys' rules.
    pub(super) fn fk_parent_changed(
        &mut self,
        t: &TableDef,
        old: &[Value],
        new: Option<&[Value]>,
    ) -> Result<()> {
        if !self.fk_checks {
            return Ok(());
        }
        let children = self.e.catalog.read().children_of(&t.db, &t.name);
        for (child, k) in children {
            let fk = &child.foreign_keys[k];
            let Some(pcols) = ref_positions(t, fk) else {
                continue;
            };
            let vals: Vec<Value> = pcols.iter().map(|&c| old[c].clone()).collect();
            if vals.iter().any(Value::is_null) {
                continue;
            }
            if let Some(n) = new {
                if pcols.iter().all(|&c| same(&old[c], &n[c])) {
                    continue;
                }
            }
            let action = if new.is_some() {
                fk.on_update
            } else {
                fk.on_delete
            };
            let restrict = matches!(action, FkAction::Restrict | FkAction::NoAction);
            let mode = if restrict {
                LockMode::Shared
            } else {
                LockMode::Exclusive
            };
            let limit = restrict.then_some(1);
            let rows = self.fk_matching(&child, &fk.columns, &vals, mode, limit)?;
            if rows.is_empty() {
                continue;
            }
            if restrict {
                return Err(constraint::row_is_referenced(&describe(&child, fk)));
            }
            if self.fk_depth >= MAX_CASCADE_DEPTH {
                return Err(constraint::depth_exceeded());
            }
            self.fk_depth += 1;
            let r = self.fk_cascade(&child, fk, &pcols, rows, action, new);
            self.fk_depth -= 1;
            r?;
        }
        Ok(())
    }

    /// CASCADE / SET NULL on the child rows `rows` of one key.
    fn fk_cascade(
        &mut self,
        child: &Arc<TableDef>,
        fk: &ForeignKeyDef,
        pcols: &[usize],
        rows: Vec<Row>,
        action: FkAction,
        new: Option<&[Value]>,
    ) -> Result<()> {
        for r in rows {
            self.tick()?;
            match (action, new) {
                (FkAction::Cascade, None) => {
                    self.delete(child, &r.key)?;
                }
                (FkAction::Cascade, Some(n)) => {
                    let mut v = r.values;
                    for (&c, &p) in fk.columns.iter().zip(pcols) {
                        v[c] = n[p].clone();
                    }
                    self.update(child, &r.key, v)?;
                }
                _ => {
                    let mut v = r.values;
                    for &c in &fk.columns {
                        v[c] = Value::Null;
                    }
                    self.update(child, &r.key, v)?;
                }
            }
        }
        Ok(())
    }
}

/// The parent's column positions a key references (None if one is gone).
pub(crate) fn ref_positions(parent: &TableDef, fk: &ForeignKeyDef) -> Option<Vec<usize>> {
    fk.ref_columns.iter().map(|n| parent.column(n)).collect()
}
