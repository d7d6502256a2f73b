//! # Temporary tables
//!
//! `CREATE TEMPORARY TABLE` makes a table only its session sees, gone
//! when the session ends. The engine keeps it like any other table (the
//! same trees, transactions, MVCC and row locks, so ROLLBACK and
//! consistent reads work on it as InnoDB's do) with three differences:
//!
//! ```text
//!                      permanent table            temporary table
//!   catalog tree       "T" entry (durable)        none
//!   name map           (db, name) -> def          none: the session holds
//!                                                 the def and resolves names
//!   by_id map          id -> def                  id -> def (commits, purge)
//!   binary log         CREATE/DROP + row events   nothing (MySQL 8.0 with
//!                                                 binlog_format=ROW)
//! ```
//!
//! Its id comes from the same counter as a permanent table's (the counter
//! is written before the trees exist, so an id is never handed out twice).
//! A crash leaves its trees without a catalog entry: the orphan sweep of
//! the next start drops them (`Inner::drop_orphan_trees`), and recovery
//! skips its rows in commit records (no such table), exactly as a table
//! dropped before the crash. A transaction that wrote only temporary
//! tables puts nothing in the binary log; if a crash comes before its
//! commit marker, recovery undoes it, which is harmless for tables that
//! no longer exist.
//!
//! ALTER TABLE, CREATE INDEX and DROP INDEX on one copy it, as MySQL
//! does for every change of a temporary table (ALGORITHM=COPY): the
//! rebuild's plan and row copy (`rebuild.rs`) make a table of a new id
//! beside the old one, then `by_id` swaps them; no catalog entry, no
//! metadata lock (no other session sees it), no binary log. A failure
//! drops the new trees and leaves the old table as it was; a crash
//! leaves both sets of trees without a catalog entry, so the next start's
//! orphan sweep drops them as it drops any temporary table's. RENAME
//! only changes the name in the definition (same id, same trees).

use std::sync::Arc;

use crate::alter::{AlterChecks, TableChange};
use crate::catalog::{Catalog, NewTable, TableDef};
use crate::engine::{check_new_table, new_table_def, Engine, OldTrees};
use crate::error::{EngineError, Result};
use crate::interrupt::Interrupt;
use crate::rebuild::{Copied, Planned, Rebuild};

/// InnoDB keeps no foreign keys on temporary tables.
fn no_foreign_keys() -> EngineError {
    EngineError::not_supported("FOREIGN KEY on a temporary table")
}

fn not_temporary(def: &TableDef) -> EngineError {
    EngineError::internal(format!("{}.{} is not a temporary table", def.db, def.name))
}

impl Engine {
    /// CREATE TEMPORARY TABLE `db`.`name`: the definition, which the caller
    /// (the session) keeps and resolves names to; nobody else finds it.
    /// FOREIGN KEYs are refused (InnoDB has none on temporary tables).
    pub fn create_temporary_table(
        &self,
        db: &str,
        name: &str,
        mut spec: NewTable,
    ) -> Result<Arc<TableDef>> {
        if !spec.foreign_keys.is_empty() {
            return Err(no_foreign_keys());
        }
        let auto_increment = spec.auto_increment;
        let mut ddl = self.inner.commit.lock();
        if !self.inner.catalog.read().has_db(db) {
            return Err(EngineError::unknown_database(db));
        }
        check_new_table(&spec.columns, &spec.primary, &mut spec.indexes)?;
        let id = self.reserve_table_id()?;
        let def = new_table_def(id, db, name, spec, true);
        self.inner.store.create_index(&def.clustered_tree())?;
        for i in &def.indexes {
            self.inner.store.create_index(&def.index_tree(i.id))?;
        }
        let next = auto_increment.unwrap_or(1).max(1);
        self.inner.set_autoinc(id, next - 1)?;
        let def = Arc::new(def);
        self.inner.stats_register_new(&mut ddl.stats, id)?;
        self.inner.catalog.write().by_id.insert(id, def.clone());
        Ok(def)
    }

    /// Drops a temporary table (DROP TEMPORARY TABLE, the end of its
    /// session): it leaves `by_id`, then its trees go once no statement
    /// holds the definition. Nothing is logged.
    pub fn drop_temporary_table(&self, def: Arc<TableDef>) -> Result<()> {
        if !def.temporary {
            return Err(not_temporary(&def));
        }
        {
            let mut ddl = self.inner.commit.lock();
            self.inner.catalog.write().by_id.remove(&def.id);
            self.inner.stats_forget(&mut ddl.stats, def.id)?;
        }
        self.drop_when_unused(def, OldTrees::All)
    }

    /// ALTER TABLE on a temporary table (module docs): a copy of `old`
    /// changed by `rb` takes its place in `by_id`; returns it and the rows
    /// copied. `old` stays whole and in place when this fails; once it
    /// succeeds the caller hands `old` to `drop_replaced_temporary`.
    /// A rename in `rb.meta` and foreign keys are refused (the session
    /// renames, InnoDB has no foreign keys on temporary tables).
    pub fn rebuild_temporary_table(
        &self,
        old: &TableDef,
        rb: &Rebuild,
        interrupt: Option<&Interrupt>,
        checks: &AlterChecks<'_>,
    ) -> Result<(Arc<TableDef>, u64)> {
        if !old.temporary {
            return Err(not_temporary(old));
        }
        for ch in &rb.meta {
            match ch {
                TableChange::AddForeignKey(_) => return Err(no_foreign_keys()),
                TableChange::Rename { .. } => {
                    return Err(EngineError::internal(
                        "a temporary table is renamed by rename_temporary_table",
                    ))
                }
                _ => {}
            }
        }
        let mut planned = self.plan_temporary(old, rb, checks)?;
        let copied = self
            .copy_rows(old, &planned, interrupt, checks)
            .and_then(|c| {
                self.swap_in_temporary(old, &mut planned, &c)
                    .map(|n| (n, c.rows))
            });
        if copied.is_err() {
            // Trees nobody names; the next start's sweep if this fails.
            let _ = self.inner.drop_trees(planned.def.id);
        }
        copied
    }

    /// The new definition, under an id reserved durably before any of
    /// its trees exists. Planned against an empty catalog: the temporary
    /// table has no parents or children, and a permanent table it
    /// shadows (with its foreign keys) is no concern of it.
    fn plan_temporary(
        &self,
        old: &TableDef,
        rb: &Rebuild,
        checks: &AlterChecks<'_>,
    ) -> Result<Planned> {
        let _ddl = self.inner.commit.lock();
        let mut planned = crate::rebuild::plan(old, rb, &Catalog::default(), checks)?;
        planned.def.id = self.reserve_table_id()?;
        planned.def.temporary = true;
        Ok(planned)
    }

    /// The copy in the old table's place: counters, `by_id`, statistics.
    /// Nothing durable names either table.
    fn swap_in_temporary(
        &self,
        old: &TableDef,
        planned: &mut Planned,
        c: &Copied,
    ) -> Result<Arc<TableDef>> {
        let mut ddl = self.inner.commit.lock();
        let new_id = planned.def.id;
        planned.def.rebuilt_csn = self.rebuilt_csn();
        self.carry_counters(old, new_id, c)?;
        let new = Arc::new(planned.def.clone());
        {
            let mut cat = self.inner.catalog.write();
            cat.by_id.remove(&old.id);
            cat.by_id.insert(new_id, new.clone());
        }
        self.inner.stats_forget(&mut ddl.stats, old.id)?;
        self.inner.stats_register_new(&mut ddl.stats, new_id)?;
        if let Some(counter) = ddl.stats.get(&new_id) {
            counter.add(i64::try_from(c.rows).unwrap_or(i64::MAX), c.rows);
        }
        Ok(new)
    }

    /// The trees of a temporary table `rebuild_temporary_table` replaced,
    /// dropped once no statement holds its definition.
    pub fn drop_replaced_temporary(&self, old: Arc<TableDef>) -> Result<()> {
        if !old.temporary {
            return Err(not_temporary(&old));
        }
        self.drop_when_unused(old, OldTrees::All)
    }

    /// RENAME of a temporary table: the same table (id, trees, rows)
    /// under the name `db`.`name`; 1049 for a database that does not
    /// exist. Whether the name is free among the session's temporary
    /// tables is the session's to check (permanent tables do not
    /// matter: the temporary one shadows them).
    pub fn rename_temporary_table(
        &self,
        old: &TableDef,
        db: &str,
        name: &str,
    ) -> Result<Arc<TableDef>> {
        if !old.temporary {
            return Err(not_temporary(old));
        }
        let _ddl = self.inner.commit.lock();
        let mut cat = self.inner.catalog.write();
        if !cat.has_db(db) {
            return Err(EngineError::unknown_database(db));
        }
        let mut def = old.clone();
        def.db = db.to_string();
        def.name = name.to_string();
        let def = Arc::new(def);
        cat.by_id.insert(def.id, def.clone());
        Ok(def)
    }

    /// `AUTO_INCREMENT = n` on a temporary table (InnoDB's rule: not
    /// below the largest value the column holds).
    pub fn temporary_auto_increment(&self, def: &TableDef, n: u64) -> Result<()> {
        if !def.temporary {
            return Err(not_temporary(def));
        }
        let _ddl = self.inner.commit.lock();
        self.move_autoinc(def, n)
    }
}
