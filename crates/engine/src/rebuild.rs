//! # ALTER TABLE that rebuilds the table (ALGORITHM=COPY)
//!
//! Adding, dropping, moving or changing columns, and changing the primary
//! key, change how every row is stored: the clustered key, the row image,
//! the secondary keys. quire does these the way InnoDB's COPY algorithm
//! does: a new table is built beside the old one from its latest committed
//! rows, then one catalog mini-transaction puts it in the old one's place.
//!
//! ```text
//!   claim the table (and its children) ── writers drain, new ones wait
//!   plan: old definition + changes ──► new definition, a source per
//!         new column (an old column, converted; or a fill value)
//!   reserve a table id (catalog "N")
//!   copy:  t<old>.0 ──row by row──► t<new>.0, t<new>.<index>...
//!          (convert, check NOT NULL / range / CHECK, unique keys)
//!   swap (commit mutex, one catalog mtr):
//!          delete T<old>, put T<new> (rebuilt_csn), children renamed
//!   drop the old trees
//! ```
//!
//! Crash safety: until the swap, the new trees belong to no definition
//! and the next start drops them (`Inner::drop_orphan_trees`); after it,
//! the old trees are the orphans. A crash anywhere therefore leaves the
//! old table or the new one, whole. Only the latest committed rows are
//! copied (writers are held off by the metadata lock, readers go on
//! reading the old table), so a snapshot older than the swap cannot read
//! the new table: it gets 1412, as in MySQL.
//!
//! Conversions follow strict mode: a value that does not fit the new type
//! stops the statement with the error an INSERT would give (1264, 1265,
//! 1366, 1292) at its row number; a NULL into NOT NULL is 1138. A column
//! added without DEFAULT gets NULL, or the type's implicit default when
//! NOT NULL (0, ''; a zero date is 1292, as MySQL's NO_ZERO_DATE).
//!
//! Generated columns and DEFAULT expressions: the engine cannot evaluate
//! expressions, so every generated column of the new table is computed
//! again for each copied row, and a column the statement adds with a
//! DEFAULT expression gets it evaluated per row, through the SQL layer's
//! callback (`AlterChecks::generate`); a rebuild of a table with one and
//! no callback is refused. A column another column's expression reads
//! cannot be dropped or renamed (3108 / 3766); VIRTUAL and STORED do not
//! turn into each other or a VIRTUAL column into an ordinary one (3106,
//! as MySQL); an ordinary column may become STORED (computed) and a
//! STORED one ordinary (its values kept).

use std::collections::HashSet;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::alter::{cant_drop, unknown_column, AlterChecks, TableChange};
use crate::catalog::{Catalog, ColumnDef, IndexDef, TableDef};
use crate::constraint;
use crate::engine::{display_vals, has_null, sec_key, Engine, OldTrees, CATALOG_TREE};
use crate::error::{EngineError, Result};
use crate::index_build::BuildLock;
use crate::interrupt::Interrupt;
use crate::mvcc;
use crate::types::{self, ColumnType, Value};

/// Where an added or moved column goes.
#[derive(Debug, Clone, PartialEq)]
pub enum Place {
    Last,
    First,
    After(String),
}

/// One column change (names as in the table before the statement).
#[derive(Debug, Clone, PartialEq)]
pub enum ColumnChange {
    /// `ADD [COLUMN] c ...`. `fill`: what existing rows get when it is
    /// not the column's default (DEFAULT CURRENT_TIMESTAMP: the
    /// statement's time).
    Add {
        column: ColumnDef,
        at: Place,
        fill: Option<Value>,
    },
    /// `DROP [COLUMN] c`.
    Drop(String),
    /// `MODIFY c ...` (same name) or `CHANGE from c ...`.
    Modify {
        from: String,
        column: ColumnDef,
        at: Option<Place>,
    },
}

/// An index the statement adds (column names of the new table).
#[derive(Debug, Clone, PartialEq)]
pub struct NewIndex {
    pub name: Option<String>,
    pub unique: bool,
    pub columns: Vec<String>,
    /// Per key part, its column prefix length (empty: whole columns).
    pub prefix: Vec<Option<u32>>,
}

/// Everything a rebuilding ALTER TABLE changes.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Rebuild {
    /// Metadata changes (alter.rs), applied first.
    pub meta: Vec<TableChange>,
    /// Column changes, in statement order.
    pub columns: Vec<ColumnChange>,
    pub drop_primary: bool,
    /// `ADD PRIMARY KEY (cols)`, names of the new table.
    pub add_primary: Option<Vec<String>>,
    pub add_indexes: Vec<NewIndex>,
    /// The LOCK clause: SHARED (and DEFAULT) lets readers read the old
    /// table during the copy, EXCLUSIVE keeps them out (mdl.rs).
    pub lock: BuildLock,
}

/// Where a column of the new table takes its values from.
#[derive(Debug, Clone, PartialEq)]
enum Source {
    /// The old table's column at this position (converted if the type
    /// or nullability changed).
    Old(usize),
    /// A new column: this value for every row (None: NULL or the
    /// type's implicit default).
    Fill(Option<Value>),
}

/// The new definition (with the old id until one is reserved) and how to
/// make its rows.
#[derive(Debug)]
pub(crate) struct Planned {
    pub(crate) def: TableDef,
    sources: Vec<Source>,
    /// Children whose keys name renamed columns of this table.
    children: Vec<TableDef>,
    sql: Vec<String>,
}

fn q(name: &str) -> String {
    format!("`{}`", name.replace('`', "``"))
}

/// ER_INVALID_USE_OF_NULL: a NULL met a column that became NOT NULL.
fn invalid_null() -> EngineError {
    EngineError::new(1138, "22004", "Invalid use of NULL value")
}

fn place_sql(at: &Place) -> String {
    match at {
        Place::Last => String::new(),
        Place::First => " FIRST".into(),
        Place::After(c) => format!(" AFTER {}", q(c)),
    }
}

/// Position in `cols` a column goes to (1054 for an unknown AFTER).
fn position(cols: &[(ColumnDef, Source)], at: &Place, table: &str) -> Result<usize> {
    match at {
        Place::Last => Ok(cols.len()),
        Place::First => Ok(0),
        Place::After(c) => find(cols, c)
            .map(|i| i + 1)
            .ok_or_else(|| unknown_column(c, table)),
    }
}

fn find(cols: &[(ColumnDef, Source)], name: &str) -> Option<usize> {
    cols.iter()
        .position(|(c, _)| c.name.eq_ignore_ascii_case(name))
}

/// A CHECK naming column `col` (the expression text quotes its columns).
fn check_using<'a>(def: &'a TableDef, col: &str) -> Option<&'a constraint::CheckDef> {
    let quoted = q(col).to_ascii_lowercase();
    def.checks
        .iter()
        .find(|c| c.expr.to_ascii_lowercase().contains(&quoted))
}

/// Applies the column changes to `cols` (1054, 1060, 1091, 1828, 1829,
/// 3959).
fn change_columns(
    old: &TableDef,
    def: &TableDef,
    cols: &mut Vec<(ColumnDef, Source)>,
    changes: &[ColumnChange],
    cat: &Catalog,
    sql: &mut Vec<String>,
) -> Result<()> {
    for ch in changes {
        match ch {
            ColumnChange::Drop(name) => {
                let i = find(cols, name)
                    .filter(|&i| matches!(cols[i].1, Source::Old(_)))
                    .ok_or_else(|| cant_drop(name))?;
                let cname = cols[i].0.name.clone();
                if let Some(c) = check_using(def, &cname) {
                    return Err(constraint::column_used_by_check(&c.name, &cname));
                }
                if let Source::Old(o) = cols[i].1 {
                    column_not_in_keys(old, def, o, cat)?;
                }
                cols.remove(i);
                sql.push(format!("DROP COLUMN {}", q(name)));
            }
            ColumnChange::Add { column, at, fill } => {
                if find(cols, &column.name).is_some() {
                    return Err(EngineError::new(
                        1060,
                        "42S21",
                        format!("Duplicate column name '{}'", column.name),
                    ));
                }
                let p = position(cols, at, &old.name)?;
                let fill = fill.clone().or_else(|| column.default.clone());
                cols.insert(p, (column.clone(), Source::Fill(fill)));
                sql.push(format!("ADD COLUMN {}{}", column.sql(), place_sql(at)));
            }
            ColumnChange::Modify { from, column, at } => {
                let i = find(cols, from).ok_or_else(|| unknown_column(from, &old.name))?;
                let cur = cols[i].0.name.clone();
                stored_status_kept(&cols[i].0, column)?;
                if !cur.eq_ignore_ascii_case(&column.name) {
                    if let Some(c) = check_using(def, &cur) {
                        return Err(constraint::column_used_by_check(&c.name, &cur));
                    }
                    if find(cols, &column.name).is_some() {
                        return Err(EngineError::new(
                            1060,
                            "42S21",
                            format!("Duplicate column name '{}'", column.name),
                        ));
                    }
                }
                let (_, src) = cols.remove(i);
                let p = match at {
                    Some(at) => position(cols, at, &old.name)?,
                    None => i,
                };
                cols.insert(p, (column.clone(), src));
                let place = at.as_ref().map(place_sql).unwrap_or_default();
                sql.push(format!("CHANGE COLUMN {} {}{place}", q(from), column.sql()));
            }
        }
    }
    if cols.is_empty() {
        return Err(EngineError::new(
            1090,
            "42000",
            "You can't delete all columns with ALTER TABLE; use DROP TABLE instead",
        ));
    }
    Ok(())
}

/// MySQL's rule for MODIFY / CHANGE of generated columns: VIRTUAL never
/// becomes STORED or ordinary and no column becomes VIRTUAL (3106).
fn stored_status_kept(was: &ColumnDef, now: &ColumnDef) -> Result<()> {
    let virtual_ = |c: &ColumnDef| c.generated.as_ref().is_some_and(|g| !g.stored);
    let stored = |c: &ColumnDef| c.generated.as_ref().is_some_and(|g| g.stored);
    let changed = virtual_(was) != virtual_(now)
        || (was.generated.is_some() && now.generated.is_some() && stored(was) != stored(now));
    if changed {
        return Err(EngineError::new(
            3106,
            "HY000",
            "'Changing the STORED status' is not supported for generated columns.",
        ));
    }
    Ok(())
}

/// Columns of the old table that the new one no longer has by name
/// (dropped or renamed) must not be read by a generated column or a
/// DEFAULT expression the new table keeps (3108, 3766).
fn expressions_still_resolve(old: &TableDef, new: &TableDef) -> Result<()> {
    for oc in &old.columns {
        if new.column(&oc.name).is_some() {
            continue;
        }
        for c in &new.columns {
            if c.generated
                .as_ref()
                .is_some_and(|g| crate::catalog::expr_names_column(&g.expr, &oc.name))
            {
                return Err(crate::catalog::generated_dependency(&oc.name));
            }
            if c.default_expr
                .as_deref()
                .is_some_and(|e| crate::catalog::expr_names_column(e, &oc.name))
            {
                return Err(crate::catalog::default_expr_dependency(&oc.name, &old.name));
            }
        }
    }
    Ok(())
}

/// Old column `o` is in no foreign key, of this table (1828) or of a
/// child naming it (1829).
fn column_not_in_keys(old: &TableDef, def: &TableDef, o: usize, cat: &Catalog) -> Result<()> {
    let name = &old.columns[o].name;
    if let Some(fk) = def.foreign_keys.iter().find(|f| f.columns.contains(&o)) {
        return Err(EngineError::new(
            1828,
            "HY000",
            format!(
                "Cannot drop column '{name}': needed in a foreign key constraint '{}'",
                fk.name
            ),
        ));
    }
    for (child, k) in cat.children_of(&old.db, &old.name) {
        let fk = &child.foreign_keys[k];
        if fk.ref_columns.iter().any(|n| n.eq_ignore_ascii_case(name)) {
            return Err(EngineError::new(
                1829,
                "HY000",
                format!(
                    "Cannot drop column '{name}': needed in a foreign key constraint '{}' of table '{}'",
                    fk.name, child.name
                ),
            ));
        }
    }
    Ok(())
}

/// The name MySQL gives an unnamed index: its first column's, then
/// `_2`, `_3`, ... while taken.
pub fn generated_index_name(def: &TableDef, first: &str) -> String {
    let taken = |n: &str| n.eq_ignore_ascii_case("PRIMARY") || def.index(n).is_some();
    if !taken(first) {
        return first.to_string();
    }
    (2..)
        .map(|i| format!("{first}_{i}"))
        .find(|n| !taken(n))
        .unwrap_or_else(|| first.to_string())
}

/// Positions of `names` in `def` (1072 for one it lacks).
fn key_positions(def: &TableDef, names: &[String]) -> Result<Vec<usize>> {
    names
        .iter()
        .map(|n| {
            def.column(n).ok_or_else(|| {
                EngineError::new(
                    1072,
                    "42000",
                    format!("Key column '{n}' doesn't exist in table"),
                )
            })
        })
        .collect()
}

/// The keys of the new table: old ones with their columns moved (a
/// dropped column leaves its keys; a key left with none goes), then the
/// primary key and index changes (1068, 1072, 1091).
fn rekey(
    old: &TableDef,
    def: &mut TableDef,
    at: &[Option<usize>],
    rb: &Rebuild,
    sql: &mut Vec<String>,
) -> Result<()> {
    let moved = |cs: &[usize]| -> Vec<usize> { cs.iter().filter_map(|&c| at[c]).collect() };
    let mut primary = moved(&def.primary);
    if rb.drop_primary {
        if old.primary.is_empty() {
            return Err(cant_drop("PRIMARY"));
        }
        primary.clear();
        sql.push("DROP PRIMARY KEY".into());
    }
    if let Some(names) = &rb.add_primary {
        if !primary.is_empty() {
            return Err(EngineError::new(
                1068,
                "42000",
                "Multiple primary key defined",
            ));
        }
        primary = key_positions(def, names)?;
        let cols: Vec<String> = names.iter().map(|n| q(n)).collect();
        sql.push(format!("ADD PRIMARY KEY ({})", cols.join(",")));
    }
    // Primary key columns are NOT NULL (MySQL makes them so).
    for &p in &primary {
        def.columns[p].nullable = false;
    }
    def.primary = primary;
    let mut indexes: Vec<IndexDef> = Vec::new();
    for ix in &def.indexes {
        // A dropped column leaves the index (MySQL), its prefix with it.
        let (cols, prefix): (Vec<usize>, Vec<Option<u32>>) = ix
            .columns
            .iter()
            .enumerate()
            .filter_map(|(p, &c)| at[c].map(|n| (n, ix.prefix_len(p))))
            .unzip();
        // As MySQL's ALTER: a part whose column became a non-string or no
        // longer than the prefix keys the whole column.
        let prefix = cols
            .iter()
            .zip(prefix)
            .map(|(&c, len)| {
                let len = len?;
                match def.columns[c].ty {
                    ColumnType::Char { len: l, .. }
                    | ColumnType::Varchar { len: l, .. }
                    | ColumnType::Binary { len: l }
                    | ColumnType::VarBinary { len: l } => (len < l).then_some(len),
                    ColumnType::Text { .. } | ColumnType::Blob { .. } => Some(len),
                    _ => None,
                }
            })
            .collect();
        if !cols.is_empty() {
            indexes.push(IndexDef {
                columns: cols,
                created_csn: 0,
                prefix: IndexDef::normal_prefix(prefix),
                ..ix.clone()
            });
        }
    }
    def.indexes = indexes;
    for ni in &rb.add_indexes {
        let cols = key_positions(def, &ni.columns)?;
        let name = match &ni.name {
            Some(n) => n.clone(),
            None => generated_index_name(def, &def.columns[cols[0]].name),
        };
        let id = def.indexes.iter().map(|i| i.id).max().unwrap_or(0) + 1;
        let names: Vec<String> = ni
            .columns
            .iter()
            .enumerate()
            .map(|(p, n)| match ni.prefix.get(p).copied().flatten() {
                Some(len) => format!("{}({len})", q(n)),
                None => q(n),
            })
            .collect();
        sql.push(format!(
            "ADD {}INDEX {} ({})",
            if ni.unique { "UNIQUE " } else { "" },
            q(&name),
            names.join(",")
        ));
        def.indexes.push(IndexDef {
            id,
            name,
            unique: ni.unique,
            columns: cols,
            created_csn: 0,
            prefix: IndexDef::normal_prefix(ni.prefix.clone()),
        });
    }
    for fk in def.foreign_keys.iter_mut() {
        fk.columns = moved(&fk.columns);
    }
    Ok(())
}

/// The auto-increment column leads a key (1075, as MySQL).
fn auto_is_a_key(def: &TableDef) -> Result<()> {
    let Some(ai) = def.auto_increment_column() else {
        return Ok(());
    };
    let keyed = def.primary.first() == Some(&ai)
        || def.indexes.iter().any(|i| i.columns.first() == Some(&ai));
    if keyed {
        Ok(())
    } else {
        Err(EngineError::new(
            1075,
            "42000",
            "Incorrect table definition; there can be only one auto column and it must be defined as a key",
        ))
    }
}

/// The new definition of `old` after `rb`, and where its columns come
/// from (pure: nothing is written).
pub(crate) fn plan(
    old: &TableDef,
    rb: &Rebuild,
    cat: &Catalog,
    checks: &AlterChecks<'_>,
) -> Result<Planned> {
    let (mut def, mut sql) = if rb.meta.is_empty() {
        (old.clone(), Vec::new())
    } else {
        crate::alter::apply_changes(old, &rb.meta, cat)?
    };
    // An index build holds the table against other DDL, so there is none;
    // the copy never carries one.
    def.building = None;
    let mut cols: Vec<(ColumnDef, Source)> = def
        .columns
        .iter()
        .enumerate()
        .map(|(i, c)| (c.clone(), Source::Old(i)))
        .collect();
    change_columns(old, &def, &mut cols, &rb.columns, cat, &mut sql)?;
    // Old position -> new position.
    let mut at: Vec<Option<usize>> = vec![None; old.columns.len()];
    for (j, (_, s)) in cols.iter().enumerate() {
        if let Source::Old(i) = s {
            at[*i] = Some(j);
        }
    }
    let (columns, sources): (Vec<ColumnDef>, Vec<Source>) = cols.into_iter().unzip();
    def.columns = columns;
    // Every copied row holds every column: no instant values needed.
    for c in def.columns.iter_mut() {
        c.instant = None;
    }
    crate::engine::validate_columns(&def.columns, &[])?;
    expressions_still_resolve(old, &def)?;
    if let Some(f) = checks.columns {
        f(&def.columns)?;
    }
    rekey(old, &mut def, &at, rb, &mut sql)?;
    crate::engine::check_key_types(&def.columns, &def.primary)?;
    crate::engine::check_key_parts(&def.columns, &def.primary, &[], true)?;
    for ix in def.indexes.iter_mut() {
        crate::engine::check_key_types(&def.columns, &ix.columns)?;
        // A changed column type may make a prefix the whole column.
        ix.prefix = crate::engine::check_key_parts(&def.columns, &ix.columns, &ix.prefix, false)?;
    }
    auto_is_a_key(&def)?;
    crate::alter::check_names(&def)?;
    // Keys naming renamed columns follow them: this table's own keys to
    // itself and its children's.
    let rename = |n: &mut String| {
        if let Some(i) = old.column(n) {
            if let Some(j) = at[i] {
                *n = def.columns[j].name.clone();
            }
        }
    };
    let mut own = def.foreign_keys.clone();
    for fk in own.iter_mut().filter(|f| f.references(&old.db, &old.name)) {
        fk.ref_columns.iter_mut().for_each(rename);
    }
    def.foreign_keys = own;
    let mut children: Vec<TableDef> = Vec::new();
    for (child, k) in cat.children_of(&old.db, &old.name) {
        if child.id == old.id {
            continue;
        }
        let pos = match children.iter().position(|c| c.id == child.id) {
            Some(p) => p,
            None => {
                children.push((*child).clone());
                children.len() - 1
            }
        };
        if let Some(fk) = children[pos].foreign_keys.get_mut(k) {
            fk.ref_columns.iter_mut().for_each(rename);
        }
    }
    // The keys still hold: this table's against their parents (types of
    // changed columns), the children's against this table.
    let mut with_new = cat.clone();
    with_new.insert(Arc::new(def.clone()));
    crate::fk_ddl::validate(&def, &with_new, checks.foreign_key_checks)?;
    for c in &children {
        crate::fk_ddl::validate(c, &with_new, false)?;
    }
    Ok(Planned {
        def,
        sources: sources.into_iter().collect(),
        children,
        sql,
    })
}

/// The value a NOT NULL column without DEFAULT gives an existing row
/// (MySQL's implicit default; a zero date is refused as NO_ZERO_DATE
/// does, 1292).
fn implicit_default(c: &ColumnDef, row: u64) -> Result<Value> {
    let zero_date = |v: &str| {
        EngineError::new(
            1292,
            "22007",
            format!(
                "Incorrect {} value: '{v}' for column '{}' at row {row}",
                if matches!(c.ty, ColumnType::Date) {
                    "date"
                } else {
                    "datetime"
                },
                c.name
            ),
        )
    };
    match &c.ty {
        ColumnType::Date => Err(zero_date("0000-00-00")),
        ColumnType::DateTime { .. } | ColumnType::Timestamp { .. } => {
            Err(zero_date("0000-00-00 00:00:00"))
        }
        ty if ty.is_numeric() => types::coerce(Value::Int(0), &c.ty, false, &c.name, row),
        _ => types::coerce(Value::Bytes(Vec::new()), &c.ty, false, &c.name, row),
    }
}

/// Makes the new table's rows from the old one's.
struct RowMaker<'a> {
    old: &'a TableDef,
    new: &'a TableDef,
    sources: &'a [Source],
    /// The new auto-increment column, and the last value it holds or
    /// was given.
    auto: Option<usize>,
    last_auto: u64,
}

impl RowMaker<'_> {
    fn make(&mut self, old_vals: &[Value], row: u64) -> Result<Vec<Value>> {
        let mut out = Vec::with_capacity(self.new.columns.len());
        for (j, (c, s)) in self.new.columns.iter().zip(self.sources).enumerate() {
            // Computed after the row is made (the SQL layer's callback).
            if c.generated.is_some() || (c.default_expr.is_some() && matches!(s, Source::Fill(_))) {
                out.push(Value::Null);
                continue;
            }
            let v = match s {
                Source::Old(i) => {
                    let v = old_vals.get(*i).cloned().unwrap_or(Value::Null);
                    if self.old.columns[*i].ty == c.ty && (c.nullable || !v.is_null()) {
                        v
                    } else if v.is_null() && !c.nullable && self.auto != Some(j) {
                        return Err(invalid_null());
                    } else if v.is_null() {
                        v
                    } else {
                        types::coerce(v, &c.ty, c.nullable, &c.name, row)?
                    }
                }
                Source::Fill(Some(v)) => v.clone(),
                Source::Fill(None) if c.nullable || self.auto == Some(j) => Value::Null,
                Source::Fill(None) => implicit_default(c, row)?,
            };
            out.push(v);
        }
        if let Some(a) = self.auto {
            let n = match &out[a] {
                Value::Int(i) => u64::try_from(*i).unwrap_or(0),
                Value::UInt(u) => *u,
                _ => 0,
            };
            if n == 0 {
                // NULL or 0 in the auto-increment column: the next value.
                self.last_auto = self.last_auto.saturating_add(1);
                out[a] = types::coerce(
                    Value::UInt(self.last_auto),
                    &self.new.columns[a].ty,
                    false,
                    &self.new.columns[a].name,
                    row,
                )?;
            } else {
                self.last_auto = self.last_auto.max(n);
            }
        }
        Ok(out)
    }
}

fn duplicate(def: &TableDef, key: &str, cols: &[usize], vals: &[Value]) -> EngineError {
    EngineError::new(
        1062,
        "23000",
        format!(
            "Duplicate entry '{}' for key '{}.{key}'",
            display_vals(cols, vals),
            def.name
        ),
    )
}

/// Rows per batch read from the old tree.
const COPY_BATCH_ROWS: usize = 512;

/// What the new table starts with.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Fill {
    /// The old table's rows (ALTER TABLE).
    CopyRows,
    /// None, counters from the start (TRUNCATE TABLE).
    Empty,
}

/// What the copy leaves for the swap.
#[derive(Default)]
pub(crate) struct Copied {
    pub(crate) rows: u64,
    last_auto: u64,
    last_hidden: u64,
}

impl Engine {
    /// ALTER TABLE with changes that rebuild the table (module docs):
    /// columns added, dropped, moved or changed, the primary key added or
    /// dropped, or `ENGINE=InnoDB` / `FORCE` (an empty `rb`).
    pub fn rebuild_table(
        &self,
        db: &str,
        table: &str,
        rb: &Rebuild,
        interrupt: Option<&Interrupt>,
        checks: &AlterChecks<'_>,
    ) -> Result<(Arc<TableDef>, u64)> {
        self.rebuild_with(db, table, rb, interrupt, checks, Fill::CopyRows)
    }

    /// TRUNCATE TABLE: the table rebuilt empty (a new id, as InnoDB gives
    /// the table a new tablespace), its counters back to the start; one
    /// catalog mini-transaction, so a crash leaves the rows or none.
    pub fn truncate_table(
        &self,
        db: &str,
        name: &str,
        interrupt: Option<&Interrupt>,
    ) -> Result<()> {
        let checks = AlterChecks::default();
        self.rebuild_with(
            db,
            name,
            &Rebuild::default(),
            interrupt,
            &checks,
            Fill::Empty,
        )
        .map(|_| ())
    }

    fn rebuild_with(
        &self,
        db: &str,
        table: &str,
        rb: &Rebuild,
        interrupt: Option<&Interrupt>,
        checks: &AlterChecks<'_>,
        fill: Fill,
    ) -> Result<(Arc<TableDef>, u64)> {
        // A copy reads the old table while readers go on (MySQL's SNW);
        // TRUNCATE and LOCK=EXCLUSIVE keep everyone out throughout.
        let no_write = fill == Fill::CopyRows && rb.lock != BuildLock::Exclusive;
        let (first, _mdl) = self.claim_with_children_at(db, table, no_write, interrupt)?;
        let (old, mut planned) = {
            let _ddl = self.inner.commit.lock();
            let old = self.table(db, table)?;
            if old.id != first {
                return Err(crate::txn::definition_changed());
            }
            let cat = self.inner.catalog.read().clone();
            let mut planned = plan(&old, rb, &cat, checks)?;
            planned.def.id = self.reserve_table_id()?;
            (old, planned)
        };
        let copied = match fill {
            Fill::CopyRows => self.copy_rows(&old, &planned, interrupt, checks),
            Fill::Empty => self.create_trees(&planned.def).map(|_| Copied::default()),
        };
        let copied = match copied {
            Ok(c) => c,
            Err(e) => {
                let _ = self.inner.drop_trees(planned.def.id);
                return Err(e);
            }
        };
        let swapped = self
            .take_exclusive(&_mdl, interrupt)
            .and_then(|()| self.swap_in(&old, &mut planned, &copied, fill));
        let new = match swapped {
            Ok(n) => n,
            Err(e) => {
                let _ = self.inner.drop_trees(planned.def.id);
                return Err(e);
            }
        };
        drop(_mdl);
        self.drop_when_unused(old, OldTrees::All)?;
        Ok((new, copied.rows))
    }

    /// The new table's trees, empty.
    fn create_trees(
        &self,
        new: &TableDef,
    ) -> Result<(quire_storage::Tree, Vec<quire_storage::Tree>)> {
        let ct = self.inner.store.create_index(&new.clustered_tree())?;
        let mut trees = Vec::with_capacity(new.indexes.len());
        for ix in &new.indexes {
            trees.push(self.inner.store.create_index(&new.index_tree(ix.id))?);
        }
        Ok((ct, trees))
    }

    /// Fills the new table's trees from the old table's latest committed
    /// rows.
    pub(crate) fn copy_rows(
        &self,
        old: &TableDef,
        planned: &Planned,
        interrupt: Option<&Interrupt>,
        checks: &AlterChecks<'_>,
    ) -> Result<Copied> {
        let new = &planned.def;
        let (ct, trees) = self.create_trees(new)?;
        let auto = new.auto_increment_column();
        let last_auto = match (auto, old.auto_increment_column()) {
            (Some(_), Some(_)) => self.inner.autoinc_value(old.id)?,
            _ => 0,
        };
        let mut maker = RowMaker {
            old,
            new,
            sources: &planned.sources,
            auto,
            last_auto,
        };
        // Columns the statement adds (their DEFAULT expressions are
        // evaluated per row); whether any value must be computed.
        let fresh: Vec<bool> = planned
            .sources
            .iter()
            .map(|s| matches!(s, Source::Fill(_)))
            .collect();
        let computed = new
            .columns
            .iter()
            .zip(&fresh)
            .any(|(c, f)| c.generated.is_some() || (*f && c.default_expr.is_some()));
        let enforced = new.checks.iter().any(|c| c.enforced);
        let row_check = checks.rows.filter(|_| enforced);
        let types = new.types();
        let mut unique: Vec<HashSet<Vec<u8>>> = vec![HashSet::new(); new.indexes.len()];
        let src = self.inner.tree(&old.clustered_tree())?;
        let mut from = std::ops::Bound::Unbounded;
        let mut c = Copied::default();
        loop {
            if let Some(i) = interrupt {
                i.check()?;
            }
            let batch: Vec<(Vec<u8>, Vec<u8>)> = src
                .range(from.clone(), std::ops::Bound::Unbounded, false)
                .take(COPY_BATCH_ROWS)
                .collect::<quire_storage::Result<_>>()?;
            let Some((last, _)) = batch.last() else {
                break;
            };
            from = std::ops::Bound::Excluded(last.clone());
            for (k, v) in &batch {
                let Some((csn, deleted, body)) = mvcc::split_value(v) else {
                    continue;
                };
                if deleted {
                    continue;
                }
                c.rows += 1;
                let old_vals = self.inner.decode_body(old, body)?;
                let mut vals = maker.make(&old_vals, c.rows)?;
                if computed {
                    let Some(generate) = checks.generate else {
                        return Err(EngineError::internal(
                            "a rebuild of a table with generated columns needs the SQL layer",
                        ));
                    };
                    generate(new, &mut vals, &fresh, c.rows)?;
                }
                if let Some(check) = row_check {
                    check(new, &vals)?;
                }
                let key = if !new.has_hidden_pk() {
                    let pk: Vec<Value> = new.primary.iter().map(|&p| vals[p].clone()).collect();
                    let mut b = Vec::new();
                    types::encode_key(&pk, &new.pk_types(), &mut b);
                    if ct.get(&b)?.is_some() {
                        return Err(duplicate(new, "PRIMARY", &new.primary, &vals));
                    }
                    b
                } else if old.has_hidden_pk() {
                    k.clone()
                } else {
                    c.last_hidden += 1;
                    c.last_hidden.to_be_bytes().to_vec()
                };
                let mut image = Vec::new();
                types::encode_row(&vals, &types, &mut image);
                self.inner
                    .put_row(&ct, new, &key, csn, &image, &vals, None)?;
                for ((ix, tree), seen) in new.indexes.iter().zip(&trees).zip(&mut unique) {
                    let sk = sec_key(new, ix, &vals);
                    if ix.unique && !has_null(ix, &vals) && !seen.insert(sk.clone()) {
                        let parts: Vec<usize> = (0..ix.columns.len()).collect();
                        let shown = ix.key_values(new, &vals);
                        return Err(duplicate(new, &ix.name, &parts, &shown));
                    }
                    let mut ek = sk;
                    ek.extend_from_slice(&key);
                    tree.put(&ek, &key)?;
                }
            }
        }
        c.last_auto = maker.last_auto;
        Ok(c)
    }

    /// Puts the copied table in the old one's place: one catalog
    /// mini-transaction, then the in-memory catalog, statistics and the
    /// binlog.
    fn swap_in(
        &self,
        old: &TableDef,
        planned: &mut Planned,
        c: &Copied,
        fill: Fill,
    ) -> Result<Arc<TableDef>> {
        let mut ddl = self.inner.commit.lock();
        let new_id = planned.def.id;
        planned.def.rebuilt_csn = self.rebuilt_csn();
        // Counters first: a crash before the catalog entry leaves them to
        // the id's next owner, which overwrites them.
        match fill {
            Fill::Empty => {
                self.inner.set_autoinc(new_id, 0)?;
                self.inner.set_hidden_rowid(new_id, 0)?;
            }
            Fill::CopyRows => self.carry_counters(old, new_id, c)?,
        }
        let mut ops: Vec<(Vec<u8>, Option<Vec<u8>>)> = vec![
            (crate::alter::catalog_key(old.id), None),
            (
                crate::alter::catalog_key(new_id),
                Some(planned.def.encode()),
            ),
        ];
        for ch in &planned.children {
            ops.push((crate::alter::catalog_key(ch.id), Some(ch.encode())));
        }
        self.inner.tree(CATALOG_TREE)?.apply_batch(&ops)?;
        let new = Arc::new(planned.def.clone());
        {
            let mut cat = self.inner.catalog.write();
            cat.tables.remove(&Catalog::key(&old.db, &old.name));
            cat.by_id.remove(&old.id);
            cat.insert(new.clone());
            for ch in &planned.children {
                cat.insert(Arc::new(ch.clone()));
            }
        }
        self.inner.stats_forget(&mut ddl.stats, old.id)?;
        self.inner.stats_register_new(&mut ddl.stats, new_id)?;
        if let Some(counter) = ddl.stats.get(&new_id) {
            let n = i64::try_from(c.rows).unwrap_or(i64::MAX);
            counter.add(n, c.rows);
        }
        let text = match fill {
            Fill::Empty => format!("TRUNCATE TABLE {}", q(&old.name)),
            Fill::CopyRows if planned.sql.is_empty() => {
                format!("ALTER TABLE {}.{} FORCE", q(&old.db), q(&old.name))
            }
            Fill::CopyRows => format!(
                "ALTER TABLE {}.{} {}",
                q(&old.db),
                q(&old.name),
                planned.sql.join(", ")
            ),
        };
        self.inner.binlog_ddl(&old.db, &text)?;
        drop(ddl);
        Ok(new)
    }

    /// The commit sequence number a rebuilt table's rows start at: every
    /// snapshot taken so far predates them (such a snapshot gets 1412).
    /// The caller holds the commit mutex.
    pub(crate) fn rebuilt_csn(&self) -> u64 {
        let csn = match &self.inner.pipeline {
            Some(p) => p.take_csn(),
            None => self.inner.store.log().lsn(),
        };
        self.inner
            .snapshots
            .visible
            .fetch_max(csn, Ordering::AcqRel);
        csn.max(1)
    }

    /// The copy's counters (AUTO_INCREMENT, hidden row id) under the new
    /// table's id: the old table's, moved past what the copy gave out.
    pub(crate) fn carry_counters(&self, old: &TableDef, new_id: u32, c: &Copied) -> Result<()> {
        let auto = self.inner.autoinc_value(old.id)?.max(c.last_auto);
        let hidden = if old.has_hidden_pk() {
            self.inner.hidden_rowid_value(old.id)?
        } else {
            c.last_hidden
        };
        self.inner.set_autoinc(new_id, auto)?;
        self.inner.set_hidden_rowid(new_id, hidden)
    }
}
