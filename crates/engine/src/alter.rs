//! # ALTER TABLE (metadata changes) and RENAME TABLE
//!
//! What quire can change in a table without touching its rows: the
//! table's name and database, column names, column defaults, index names,
//! dropping a secondary index, the auto-increment counter, and adding a
//! column at the end (INSTANT: rows stored before read the value the
//! column was added with, `ColumnDef::instant`, offpage::decode). Adding an
//! index builds a tree and goes through `Engine::create_index`.
//!
//! Each statement is one catalog mini-transaction ([`Tree::apply_batch`]
//! over the `quire:catalog` tree): every `T` entry it changes is written in
//! the same redo frame, so after a crash the catalog holds all the old
//! definitions or all the new ones. RENAME TABLE of several tables is
//! therefore all-or-nothing, as MySQL's. Rows, trees and counters are keyed
//! by table id, which a rename keeps, so nothing else moves.
//!
//! Order of a DROP INDEX: the catalog entry without the index first (the
//! index is gone, atomically), then its tree is emptied and freed; a crash
//! in between leaves a tree no definition names, which the next start drops
//! (`Inner::drop_orphan_trees`), as it does the half-built tree of an
//! interrupted CREATE INDEX.
//!
//! Locking: each table the statement changes is claimed through the
//! metadata locks (`mdl.rs`, in table-id order so two renames cannot wait
//! for each other), which waits for its open writers, then the commit mutex
//! is held while the catalog changes, so no commit or purge sees a
//! definition half-way. The statement is written to the binlog as a QUERY
//! event, as CREATE INDEX is.
//!
//! `AUTO_INCREMENT = n` follows InnoDB: the counter becomes
//! max(n, largest value in the column + 1), never lower. Its counter lives
//! in another tree, so it is its own statement-level change and is not
//! combined with catalog changes in one statement (the SQL layer refuses
//! the mix).

use std::sync::Arc;

use crate::catalog::{Catalog, TableDef};
use crate::constraint::{self, CheckDef, ForeignKeyDef};
use crate::engine::{Engine, OldTrees, CATALOG_TREE};
use crate::error::{EngineError, Result};
use crate::interrupt::Interrupt;
use crate::mdl::DdlGuard;
use crate::mvcc;
use crate::types::{self, Value};

/// One metadata change of ALTER TABLE. Names of columns and indexes refer
/// to the table as it was before the statement (MySQL's rule).
#[derive(Debug, Clone, PartialEq)]
pub enum TableChange {
    /// `RENAME [TO|AS] db.name`.
    Rename { db: String, name: String },
    /// `RENAME COLUMN from TO to`.
    RenameColumn { from: String, to: String },
    /// `ALTER COLUMN c SET DEFAULT v` (`Some`, already of the column's
    /// type) or `DROP DEFAULT` (`None`).
    Default {
        column: String,
        value: Option<Value>,
    },
    /// `RENAME {INDEX|KEY} from TO to`.
    RenameIndex { from: String, to: String },
    /// `DROP {INDEX|KEY} name`.
    DropIndex(String),
    /// `ADD [CONSTRAINT [c]] CHECK (...) [[NOT] ENFORCED]`.
    AddCheck(CheckDef),
    /// `DROP CHECK c`.
    DropCheck(String),
    /// `ALTER CHECK c [NOT] ENFORCED` (also `ALTER CONSTRAINT`).
    EnforceCheck { name: String, enforced: bool },
    /// `ADD [CONSTRAINT [c]] FOREIGN KEY ...` (the child index exists).
    AddForeignKey(ForeignKeyDef),
    /// `DROP FOREIGN KEY c`.
    DropForeignKey(String),
    /// `DROP CONSTRAINT c`: the CHECK, FOREIGN KEY or UNIQUE key named c.
    DropConstraint(String),
    /// `ADD [COLUMN] c ...` at the end, ALGORITHM=INSTANT: no row is
    /// rewritten; rows stored before read the column's `instant` value
    /// (set: its default, or the type's implicit one).
    AddColumnInstant(crate::catalog::ColumnDef),
}

/// A check of one row against a table definition (ALTER's CHECK pass).
pub type RowCheck<'a> = &'a dyn Fn(&TableDef, &[Value]) -> Result<()>;

/// A check of a rebuilt table's columns (the SQL layer's row-size limit,
/// 1118).
pub type ColumnsCheck<'a> = &'a dyn Fn(&[crate::catalog::ColumnDef]) -> Result<()>;

/// Computes a copied row's generated columns, and the DEFAULT expressions
/// of the columns the statement adds (`fresh[i]`), in place (rebuild.rs;
/// the SQL layer evaluates; `u64`: the row number for errors).
pub type RowGenerate<'a> = &'a dyn Fn(&TableDef, &mut [Value], &[bool], u64) -> Result<()>;

/// What an ALTER TABLE must check beyond its changes' own rules.
pub struct AlterChecks<'a> {
    /// The session's foreign_key_checks: added keys are checked against
    /// their parent and the rows.
    pub foreign_key_checks: bool,
    /// Called with the new definition and each latest committed row when
    /// the statement adds or enforces a CHECK (the SQL layer evaluates
    /// the expressions; an error stops the statement).
    pub rows: Option<RowCheck<'a>>,
    /// Called with the columns of a table a rebuild makes (rebuild.rs).
    pub columns: Option<ColumnsCheck<'a>>,
    /// Computes generated values of each row a rebuild copies.
    pub generate: Option<RowGenerate<'a>>,
}

impl Default for AlterChecks<'_> {
    fn default() -> Self {
        AlterChecks {
            foreign_key_checks: true,
            rows: None,
            columns: None,
            generate: None,
        }
    }
}

/// One `a TO b` of RENAME TABLE, fully qualified.
#[derive(Debug, Clone, PartialEq)]
pub struct RenamePair {
    pub from: (String, String),
    pub to: (String, String),
}

/// 1054 for a column the table does not have.
pub(crate) fn unknown_column(col: &str, table: &str) -> EngineError {
    EngineError::new(
        1054,
        "42S22",
        format!("Unknown column '{col}' in '{table}'"),
    )
}

/// 1091 for a column or key to drop that is not there.
pub(crate) fn cant_drop(name: &str) -> EngineError {
    EngineError::new(
        1091,
        "42000",
        format!("Can't DROP '{name}'; check that column/key exists"),
    )
}

fn dup_key(name: &str) -> EngineError {
    EngineError::new(1061, "42000", format!("Duplicate key name '{name}'"))
}

fn exists(name: &str) -> EngineError {
    EngineError::new(1050, "42S01", format!("Table '{name}' already exists"))
}

pub(crate) fn catalog_key(id: u32) -> Vec<u8> {
    let mut k = b"T".to_vec();
    k.extend_from_slice(&id.to_be_bytes());
    k
}

fn q(name: &str) -> String {
    format!("`{}`", name.replace('`', "``"))
}

/// A column default as SQL text (the form SHOW CREATE TABLE prints).
fn default_sql(v: &Value, ty: &types::ColumnType) -> String {
    match v {
        Value::Null => "NULL".into(),
        v => format!("'{}'", v.to_string_mysql(ty).replace('\'', "''")),
    }
}

/// Applies `changes` to a copy of `old` (names as in `old`). Returns the
/// new definition and the binlog text of each change.
pub(crate) fn apply_changes(
    old: &TableDef,
    changes: &[TableChange],
    cat: &Catalog,
) -> Result<(TableDef, Vec<String>)> {
    let mut def = old.clone();
    let mut sql = Vec::new();
    let mut dropped: Vec<u32> = Vec::new();
    for ch in changes {
        match ch {
            TableChange::Rename { db, name } => {
                rename_target_free(cat, old, db, name)?;
                def.db = db.clone();
                def.name = name.clone();
                sql.push(format!("RENAME TO {}.{}", q(db), q(name)));
            }
            TableChange::RenameColumn { from, to } => {
                let i = old
                    .column(from)
                    .ok_or_else(|| unknown_column(from, &old.name))?;
                let quoted = q(&old.columns[i].name).to_ascii_lowercase();
                if let Some(c) = def
                    .checks
                    .iter()
                    .find(|c| c.expr.to_ascii_lowercase().contains(&quoted))
                {
                    return Err(constraint::column_used_by_check(
                        &c.name,
                        &old.columns[i].name,
                    ));
                }
                if !old.columns[i].name.eq_ignore_ascii_case(to) {
                    def.column_unused_by_expressions(&old.columns[i].name, &[])?;
                }
                def.columns[i].name = to.clone();
                sql.push(format!("RENAME COLUMN {} TO {}", q(from), q(to)));
            }
            TableChange::Default { column, value } => {
                let i = old
                    .column(column)
                    .ok_or_else(|| unknown_column(column, &old.name))?;
                let c = &mut def.columns[i];
                if c.generated.is_some() {
                    // MySQL's ER_WRONG_USAGE for ALTER COLUMN .. SET/DROP
                    // DEFAULT on a generated column.
                    return Err(EngineError::new(
                        1221,
                        "HY000",
                        "Incorrect usage of DEFAULT and generated column",
                    ));
                }
                c.default_now = None;
                c.default_expr = None;
                c.default = value.clone();
                sql.push(match value {
                    Some(v) => format!(
                        "ALTER COLUMN {} SET DEFAULT {}",
                        q(column),
                        default_sql(v, &c.ty)
                    ),
                    None => format!("ALTER COLUMN {} DROP DEFAULT", q(column)),
                });
            }
            TableChange::RenameIndex { from, to } => {
                let id = old
                    .index(from)
                    .ok_or_else(|| {
                        EngineError::new(
                            1176,
                            "42000",
                            format!("Key '{from}' doesn't exist in table '{}'", old.name),
                        )
                    })?
                    .id;
                if let Some(ix) = def.indexes.iter_mut().find(|ix| ix.id == id) {
                    ix.name = to.clone();
                }
                sql.push(format!("RENAME INDEX {} TO {}", q(from), q(to)));
            }
            TableChange::DropIndex(name) => {
                drop_index(old, &mut def, &mut dropped, name, cat)?;
                sql.push(format!("DROP INDEX {}", q(name)));
            }
            TableChange::AddCheck(c) => {
                if def
                    .checks
                    .iter()
                    .any(|o| o.name.eq_ignore_ascii_case(&c.name))
                {
                    return Err(constraint::duplicate_check_name(&c.name));
                }
                def.checks.push(c.clone());
                sql.push(format!("ADD {}", constraint::check_sql(c)));
            }
            TableChange::DropCheck(name) => {
                let before = def.checks.len();
                def.checks.retain(|c| !c.name.eq_ignore_ascii_case(name));
                if def.checks.len() == before {
                    return Err(constraint::check_not_found(name));
                }
                sql.push(format!("DROP CHECK {}", q(name)));
            }
            TableChange::EnforceCheck { name, enforced } => {
                let c = def
                    .checks
                    .iter_mut()
                    .find(|c| c.name.eq_ignore_ascii_case(name))
                    .ok_or_else(|| constraint::check_not_found(name))?;
                c.enforced = *enforced;
                let not = if *enforced { "" } else { "NOT " };
                sql.push(format!("ALTER CHECK {} {not}ENFORCED", q(name)));
            }
            TableChange::AddForeignKey(fk) => {
                def.foreign_keys.push(fk.clone());
                let names: Vec<String> = def.columns.iter().map(|c| c.name.clone()).collect();
                sql.push(format!("ADD {}", fk.sql(&def.db, &names, ",")));
            }
            TableChange::DropForeignKey(name) => {
                let before = def.foreign_keys.len();
                def.foreign_keys
                    .retain(|f| !f.name.eq_ignore_ascii_case(name));
                if def.foreign_keys.len() == before {
                    return Err(cant_drop(name));
                }
                sql.push(format!("DROP FOREIGN KEY {}", q(name)));
            }
            TableChange::DropConstraint(name) => {
                drop_constraint(old, &mut def, &mut dropped, name, cat)?;
                sql.push(format!("DROP CONSTRAINT {}", q(name)));
            }
            TableChange::AddColumnInstant(c) => {
                if c.instant.is_none()
                    || c.auto_increment
                    || c.generated.is_some()
                    || c.default_expr.is_some()
                {
                    return Err(EngineError::internal(format!(
                        "column '{}' cannot be added instantly",
                        c.name
                    )));
                }
                def.columns.push(c.clone());
                sql.push(format!("ADD COLUMN {}", c.sql()));
            }
        }
    }
    check_names(&def)?;
    Ok((def, sql))
}

fn drop_index(
    old: &TableDef,
    def: &mut TableDef,
    dropped: &mut Vec<u32>,
    name: &str,
    cat: &Catalog,
) -> Result<()> {
    let id = old.index(name).ok_or_else(|| cant_drop(name))?.id;
    if dropped.contains(&id) {
        return Err(cant_drop(name));
    }
    dropped.push(id);
    def.indexes.retain(|ix| ix.id != id);
    crate::fk_ddl::index_still_served(def, cat, name)
}

/// DROP CONSTRAINT: whichever of CHECK, FOREIGN KEY and UNIQUE key has
/// the name (3940 none, 3939 more than one).
fn drop_constraint(
    old: &TableDef,
    def: &mut TableDef,
    dropped: &mut Vec<u32>,
    name: &str,
    cat: &Catalog,
) -> Result<()> {
    let is_check = def.checks.iter().any(|c| c.name.eq_ignore_ascii_case(name));
    let is_fk = def
        .foreign_keys
        .iter()
        .any(|f| f.name.eq_ignore_ascii_case(name));
    let is_unique = old.index(name).is_some_and(|i| i.unique);
    match (is_check, is_fk, is_unique) {
        (false, false, false) => Err(constraint::constraint_not_found(name)),
        (true, false, false) => {
            def.checks.retain(|c| !c.name.eq_ignore_ascii_case(name));
            Ok(())
        }
        (false, true, false) => {
            def.foreign_keys
                .retain(|f| !f.name.eq_ignore_ascii_case(name));
            Ok(())
        }
        (false, false, true) => drop_index(old, def, dropped, name, cat),
        _ => Err(EngineError::new(
            3939,
            "HY000",
            format!("Table has multiple constraints with the name '{name}'. Please use constraint specific 'DROP' clause."),
        )),
    }
}

/// The new definition's column and index names are unique (1060, 1061).
pub(crate) fn check_names(def: &TableDef) -> Result<()> {
    crate::engine::check_column_names(&def.columns)?;
    for (i, ix) in def.indexes.iter().enumerate() {
        if ix.name.eq_ignore_ascii_case("PRIMARY") {
            return Err(EngineError::new(
                1280,
                "42000",
                format!("Incorrect index name '{}'", ix.name),
            ));
        }
        if def.indexes[..i]
            .iter()
            .any(|o| o.name.eq_ignore_ascii_case(&ix.name))
        {
            return Err(dup_key(&ix.name));
        }
    }
    Ok(())
}

/// `db.name` is free for `t` to move to: the database exists and no other
/// table or view has the name (1049, 1050).
fn rename_target_free(cat: &Catalog, t: &TableDef, db: &str, name: &str) -> Result<()> {
    if !cat.has_db(db) {
        return Err(EngineError::unknown_database(db));
    }
    let key = Catalog::key(db, name);
    if cat.views.contains_key(&key) {
        return Err(exists(name));
    }
    match cat.tables.get(&key) {
        Some(other) if other.id != t.id => Err(exists(name)),
        _ => Ok(()),
    }
}

/// RENAME TABLE's pairs applied in order to the catalog's name space:
/// the definitions that change (by table id, last name wins).
fn plan_renames(cat: &Catalog, pairs: &[RenamePair]) -> Result<Vec<TableDef>> {
    let mut names = cat.tables.clone();
    let mut out: Vec<TableDef> = Vec::new();
    for p in pairs {
        let (fdb, fname) = (&p.from.0, &p.from.1);
        let (tdb, tname) = (&p.to.0, &p.to.1);
        let from_key = Catalog::key(fdb, fname);
        let Some(src) = names.get(&from_key).cloned() else {
            if cat.views.contains_key(&from_key) {
                return Err(EngineError::not_supported("RENAME TABLE of a view"));
            }
            return Err(EngineError::new(
                1146,
                "42S02",
                format!("Table '{fdb}.{fname}' doesn't exist"),
            ));
        };
        if !cat.has_db(tdb) {
            return Err(EngineError::new(
                1049,
                "42000",
                format!("Unknown database '{tdb}'"),
            ));
        }
        let to_key = Catalog::key(tdb, tname);
        if names.contains_key(&to_key) || cat.views.contains_key(&to_key) {
            return Err(exists(tname));
        }
        let mut def = (*src).clone();
        def.db = tdb.clone();
        def.name = tname.clone();
        names.remove(&from_key);
        let def = Arc::new(def);
        names.insert(to_key, def.clone());
        out.retain(|d| d.id != def.id);
        out.push((*def).clone());
    }
    Ok(out)
}

impl Engine {
    /// Claims the tables `ids` (metadata locks, ascending id order).
    pub(crate) fn claim_tables(
        &self,
        ids: Vec<u32>,
        interrupt: Option<&Interrupt>,
    ) -> Result<Vec<DdlGuard<'_>>> {
        self.claim_tables_at(ids, false, interrupt)
    }

    /// [`Self::claim_tables`], keeping writers out only when `no_write`
    /// (readers go on until [`Self::take_exclusive`]).
    pub(crate) fn claim_tables_at(
        &self,
        mut ids: Vec<u32>,
        no_write: bool,
        interrupt: Option<&Interrupt>,
    ) -> Result<Vec<DdlGuard<'_>>> {
        ids.sort_unstable();
        ids.dedup();
        let wait = self.inner.mdl_timeout_for(interrupt);
        let mdl = &self.inner.mdl;
        // One owner for all the claims: this DDL holds the first tables
        // while it waits for the next.
        let who = mdl.owner();
        ids.into_iter()
            .map(|id| match no_write {
                true => mdl.enter_ddl_no_write(id, who, wait, interrupt),
                false => mdl.enter_ddl(id, who, wait, interrupt),
            })
            .collect()
    }

    /// Raises claims taken by [`Self::claim_tables_at`] to exclusive:
    /// returns once no transaction uses any of the tables.
    pub(crate) fn take_exclusive(
        &self,
        claims: &[DdlGuard<'_>],
        interrupt: Option<&Interrupt>,
    ) -> Result<()> {
        let wait = self.inner.mdl_timeout_for(interrupt);
        claims.iter().try_for_each(|g| g.exclusive(wait, interrupt))
    }

    /// Claims `db.table` and the tables whose foreign keys name it (their
    /// definitions follow a renamed parent or column): the table's id
    /// and the claims.
    pub(crate) fn claim_with_children(
        &self,
        db: &str,
        table: &str,
        interrupt: Option<&Interrupt>,
    ) -> Result<(u32, Vec<DdlGuard<'_>>)> {
        self.claim_with_children_at(db, table, false, interrupt)
    }

    /// [`Self::claim_with_children`] at the level `no_write` chooses
    /// (see [`Self::claim_tables_at`]).
    pub(crate) fn claim_with_children_at(
        &self,
        db: &str,
        table: &str,
        no_write: bool,
        interrupt: Option<&Interrupt>,
    ) -> Result<(u32, Vec<DdlGuard<'_>>)> {
        let id = self.table(db, table)?.id;
        let mut claim = vec![id];
        claim.extend(
            self.inner
                .catalog
                .read()
                .children_of(db, table)
                .iter()
                .map(|(c, _)| c.id),
        );
        Ok((id, self.claim_tables_at(claim, no_write, interrupt)?))
    }

    /// Writes the new definitions in one catalog mini-transaction and
    /// installs them in the in-memory catalog (caller holds the commit
    /// mutex and the tables' metadata locks).
    fn install_defs(&self, defs: &[TableDef]) -> Result<Vec<Arc<TableDef>>> {
        let ops: Vec<(Vec<u8>, Option<Vec<u8>>)> = defs
            .iter()
            .map(|d| (catalog_key(d.id), Some(d.encode())))
            .collect();
        self.inner.tree(CATALOG_TREE)?.apply_batch(&ops)?;
        let mut cat = self.inner.catalog.write();
        for d in defs {
            if let Some(old) = cat.by_id.get(&d.id).cloned() {
                cat.tables.remove(&Catalog::key(&old.db, &old.name));
            }
        }
        let out: Vec<Arc<TableDef>> = defs.iter().map(|d| Arc::new(d.clone())).collect();
        for d in &out {
            cat.insert(d.clone());
        }
        Ok(out)
    }

    /// RENAME TABLE a TO b [, c TO d ...]: applied in order (so `a TO tmp,
    /// b TO a, tmp TO b` swaps), all or none (1146 for a missing source,
    /// 1050 for a taken target, 1049 for an unknown database).
    pub fn rename_tables(&self, pairs: &[RenamePair], interrupt: Option<&Interrupt>) -> Result<()> {
        // The renamed tables and their children (whose keys follow).
        let ids = |cat: &Catalog| -> Result<Vec<u32>> {
            let mut ids = Vec::new();
            for d in plan_renames(cat, pairs)? {
                ids.push(d.id);
                if let Some(old) = cat.by_id.get(&d.id) {
                    ids.extend(
                        cat.children_of(&old.db, &old.name)
                            .iter()
                            .map(|(c, _)| c.id),
                    );
                }
            }
            Ok(ids)
        };
        let mut want = ids(&self.inner.catalog.read())?;
        for _ in 0..8 {
            let _mdl = self.claim_tables(want.clone(), interrupt)?;
            let _ddl = self.inner.commit.lock();
            let defs = plan_renames(&self.inner.catalog.read(), pairs)?;
            let now: Vec<u32> = defs.iter().map(|d| d.id).collect();
            if now.iter().any(|id| !want.contains(id)) {
                // Another DDL moved names between the two looks: claim again.
                want = ids(&self.inner.catalog.read())?;
                continue;
            }
            let mut defs = defs;
            {
                let cat = self.inner.catalog.read();
                for id in now.iter() {
                    if let Some(old) = cat.by_id.get(id) {
                        crate::fk_ddl::follow_parent(&cat, old, &mut defs);
                    }
                }
            }
            self.install_defs(&defs)?;
            let text: Vec<String> = pairs
                .iter()
                .map(|p| {
                    format!(
                        "{}.{} TO {}.{}",
                        q(&p.from.0),
                        q(&p.from.1),
                        q(&p.to.0),
                        q(&p.to.1)
                    )
                })
                .collect();
            let db = pairs.first().map(|p| p.from.0.clone()).unwrap_or_default();
            return self
                .inner
                .binlog_ddl(&db, &format!("RENAME TABLE {}", text.join(", ")));
        }
        Err(EngineError::new(
            1205,
            "HY000",
            "Lock wait timeout exceeded; try restarting transaction",
        ))
    }

    /// ALTER TABLE's metadata changes, all in one catalog mini-transaction.
    /// Dropped indexes' trees are freed afterwards.
    pub fn alter_table(
        &self,
        db: &str,
        table: &str,
        changes: &[TableChange],
        interrupt: Option<&Interrupt>,
    ) -> Result<Arc<TableDef>> {
        self.alter_table_with(db, table, changes, interrupt, &AlterChecks::default())
    }

    /// [`Self::alter_table`] with the checks added constraints need: the
    /// rows are read (latest committed, under the metadata lock and the
    /// commit mutex) when a CHECK is added or enforced or a foreign key
    /// is added with foreign_key_checks on.
    pub fn alter_table_with(
        &self,
        db: &str,
        table: &str,
        changes: &[TableChange],
        interrupt: Option<&Interrupt>,
        checks: &AlterChecks<'_>,
    ) -> Result<Arc<TableDef>> {
        // Children follow a renamed parent: their definitions change too.
        let (id, _mdl) = self.claim_with_children(db, table, interrupt)?;
        let (new, dropped, old) = {
            let _ddl = self.inner.commit.lock();
            let old = self.table(db, table)?;
            if old.id != id {
                return Err(crate::txn::definition_changed());
            }
            let cat = self.inner.catalog.read().clone();
            let (def, sql) = apply_changes(&old, changes, &cat)?;
            let added: Vec<ForeignKeyDef> = changes
                .iter()
                .filter_map(|c| match c {
                    TableChange::AddForeignKey(f) => Some(f.clone()),
                    _ => None,
                })
                .collect();
            crate::fk_ddl::validate_added(&def, &added, &cat, checks.foreign_key_checks)?;
            let enforces = changes.iter().any(|c| {
                matches!(c, TableChange::AddCheck(k) if k.enforced)
                    || matches!(c, TableChange::EnforceCheck { enforced: true, .. })
            });
            let rows = checks.rows.filter(|_| enforces);
            let fks: &[ForeignKeyDef] = if checks.foreign_key_checks {
                &added
            } else {
                &[]
            };
            if rows.is_some() || !fks.is_empty() {
                self.check_rows(&def, fks, rows, &cat)?;
            }
            let dropped: Vec<String> = old
                .indexes
                .iter()
                .filter(|ix| !def.indexes.iter().any(|n| n.id == ix.id))
                .map(|ix| old.index_tree(ix.id))
                .collect();
            let mut defs = vec![def];
            crate::fk_ddl::follow_parent(&cat, &old, &mut defs);
            drop(cat);
            let new = self
                .install_defs(&defs)?
                .into_iter()
                .next()
                .ok_or_else(|| EngineError::internal("no definition installed"))?;
            if !sql.is_empty() {
                self.inner.binlog_ddl(
                    &old.db,
                    &format!(
                        "ALTER TABLE {}.{} {}",
                        q(&old.db),
                        q(&old.name),
                        sql.join(", ")
                    ),
                )?;
            }
            (new, dropped, old)
        };
        drop(_mdl);
        if !dropped.is_empty() {
            self.drop_when_unused(old, OldTrees::Named(dropped))?;
        }
        Ok(new)
    }

    /// `ALTER TABLE t AUTO_INCREMENT = n`: the next value becomes
    /// max(n, largest value in the auto-increment column + 1) (InnoDB's
    /// rule: the counter never goes below what the table holds).
    pub fn alter_auto_increment(
        &self,
        db: &str,
        table: &str,
        n: u64,
        interrupt: Option<&Interrupt>,
    ) -> Result<()> {
        let id = self.table(db, table)?.id;
        let _mdl = self.claim_tables(vec![id], interrupt)?;
        let _ddl = self.inner.commit.lock();
        let t = self.table(db, table)?;
        self.move_autoinc(&t, n)?;
        self.inner.binlog_ddl(
            &t.db,
            &format!("ALTER TABLE {}.{} AUTO_INCREMENT={n}", q(&t.db), q(&t.name)),
        )
    }

    /// `AUTO_INCREMENT = n` on `t`: the next value is `n`, or past the
    /// largest value the column holds (InnoDB's rule). The caller holds
    /// the commit mutex.
    pub(crate) fn move_autoinc(&self, t: &TableDef, n: u64) -> Result<()> {
        let floor = match t.auto_increment_column() {
            Some(col) => self.max_column_value(t, col)?.saturating_add(1),
            None => 1,
        };
        let next = n.max(floor).max(1);
        self.inner.set_autoinc(t.id, next - 1)
    }

    /// The largest non-negative integer in column `col` over the latest
    /// committed rows (0 when none).
    fn max_column_value(&self, t: &TableDef, col: usize) -> Result<u64> {
        let mut max = 0u64;
        // Only `col`: no off-page column is read (offpage.rs).
        let wanted: Vec<bool> = (0..t.columns.len()).map(|i| i == col).collect();
        self.for_each_latest(t, Some(&wanted), |vals| {
            let n = match vals.get(col) {
                Some(Value::Int(i)) => u64::try_from(*i).unwrap_or(0),
                Some(Value::UInt(u)) => *u,
                Some(Value::Double(d)) if *d > 0.0 => *d as u64,
                Some(Value::Float(f)) if *f > 0.0 => *f as u64,
                _ => 0,
            };
            max = max.max(n);
            Ok(())
        })?;
        Ok(max)
    }

    /// Calls `f` with each latest committed row of `t` (only the `wanted`
    /// columns decoded; None = all). The caller holds the commit mutex.
    fn for_each_latest(
        &self,
        t: &TableDef,
        wanted: Option<&[bool]>,
        mut f: impl FnMut(Vec<Value>) -> Result<()>,
    ) -> Result<()> {
        for (_, v) in self.inner.tree(&t.clustered_tree())?.scan_all()? {
            let Some((_, deleted, row)) = mvcc::split_value(&v) else {
                continue;
            };
            if deleted {
                continue;
            }
            let vals = crate::offpage::decode(self.inner.store.shared(), row, &t.columns, wanted)?;
            f(vals)?;
        }
        Ok(())
    }

    /// The rows of `def` (the new definition) against the CHECK callback
    /// and the added foreign keys `fks` (1452 for a row without parent).
    fn check_rows(
        &self,
        def: &TableDef,
        fks: &[ForeignKeyDef],
        rows: Option<RowCheck<'_>>,
        cat: &Catalog,
    ) -> Result<()> {
        // The parents' keys, encoded in the parent's column types.
        let mut parents = Vec::new();
        for fk in fks {
            let parent = if fk.references(&def.db, &def.name) {
                Arc::new(def.clone())
            } else {
                match cat.table(&fk.ref_db, &fk.ref_table) {
                    Ok(p) => p,
                    Err(_) => continue,
                }
            };
            let Some(pcols) = crate::txn::fk_ref_positions(&parent, fk) else {
                continue;
            };
            let tys: Vec<types::ColumnType> = pcols
                .iter()
                .map(|&c| parent.columns[c].ty.clone())
                .collect();
            let mut keys = std::collections::HashSet::new();
            self.for_each_latest(&parent, None, |vals| {
                let k: Vec<Value> = pcols.iter().map(|&c| vals[c].clone()).collect();
                if !k.iter().any(Value::is_null) {
                    let mut b = Vec::new();
                    types::encode_key(&k, &tys, &mut b);
                    keys.insert(b);
                }
                Ok(())
            })?;
            parents.push((fk, tys, keys));
        }
        self.for_each_latest(def, None, |vals| {
            if let Some(check) = rows {
                check(def, &vals)?;
            }
            for (fk, tys, keys) in &parents {
                let k: Vec<Value> = fk.columns.iter().map(|&c| vals[c].clone()).collect();
                if k.iter().any(Value::is_null) {
                    continue;
                }
                let coerced: Option<Vec<Value>> = k
                    .into_iter()
                    .zip(tys)
                    .map(|(v, ty)| types::coerce(v, ty, true, "", 1).ok())
                    .collect();
                let found = coerced.is_some_and(|c| {
                    let mut b = Vec::new();
                    types::encode_key(&c, tys, &mut b);
                    keys.contains(&b)
                });
                if !found {
                    return Err(constraint::no_referenced_row(&crate::txn::fk_describe(
                        def, fk,
                    )));
                }
            }
            Ok(())
        })
    }
}
