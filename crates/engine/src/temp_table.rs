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

use std::sync::Arc;

use crate::catalog::{NewTable, TableDef};
use crate::engine::{check_new_table, new_table_def, Engine, OldTrees, CATALOG_TREE};
use crate::error::{EngineError, Result};

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
            return Err(EngineError::not_supported(
                "FOREIGN KEY on a temporary table",
            ));
        }
        let auto_increment = spec.auto_increment;
        let mut ddl = self.inner.commit.lock();
        let id = {
            let cat = self.inner.catalog.read();
            if !cat.has_db(db) {
                return Err(EngineError::unknown_database(db));
            }
            cat.next_table_id.max(1)
        };
        check_new_table(&spec.columns, &spec.primary, &mut spec.indexes)?;
        let def = new_table_def(id, db, name, spec, true);
        // The id counter first, so a crash never hands this id out again
        // while its trees may still exist.
        self.inner
            .tree(CATALOG_TREE)?
            .put(b"N", &(id + 1).to_le_bytes())?;
        self.inner.store.create_index(&def.clustered_tree())?;
        for i in &def.indexes {
            self.inner.store.create_index(&def.index_tree(i.id))?;
        }
        let next = auto_increment.unwrap_or(1).max(1);
        self.inner.set_autoinc(id, next - 1)?;
        let def = Arc::new(def);
        self.inner.stats_register_new(&mut ddl.stats, id)?;
        let mut cat = self.inner.catalog.write();
        cat.next_table_id = id + 1;
        cat.by_id.insert(id, def.clone());
        Ok(def)
    }

    /// Drops a temporary table (DROP TEMPORARY TABLE, the end of its
    /// session): it leaves `by_id`, then its trees go once no statement
    /// holds the definition. Nothing is logged.
    pub fn drop_temporary_table(&self, def: Arc<TableDef>) -> Result<()> {
        if !def.temporary {
            return Err(EngineError::internal(format!(
                "{}.{} is not a temporary table",
                def.db, def.name
            )));
        }
        {
            let mut ddl = self.inner.commit.lock();
            self.inner.catalog.write().by_id.remove(&def.id);
            self.inner.stats_forget(&mut ddl.stats, def.id)?;
        }
        self.drop_when_unused(def, OldTrees::All)
    }
}
