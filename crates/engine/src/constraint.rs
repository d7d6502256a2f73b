//! # Constraints: FOREIGN KEY and CHECK definitions, and their errors
//!
//! A table's definition (`catalog.rs`) carries its CHECK constraints and
//! the FOREIGN KEYs it declares (the *child* side). This module holds their
//! shapes, their binary form inside the table definition, the text SHOW
//! CREATE TABLE prints for them, and every error they raise, with MySQL
//! 8.0's codes and messages in one place.
//!
//! ```text
//!   child t (declares the key)              parent p (is referenced)
//!   +----+------+                           +----+
//!   | id | p_id | --- FOREIGN KEY (p_id) -> | id |  PRIMARY KEY or an index
//!   +----+------+     REFERENCES p (id)     +----+  whose first columns
//!      index on p_id (made if missing)              are the referenced ones
//! ```
//!
//! Who enforces what:
//! - CHECK: the SQL layer, which can evaluate expressions. The engine only
//!   keeps the normalised expression text and the ENFORCED flag.
//! - FOREIGN KEY: the engine (`fk.rs`), inside `Txn::insert`, `update`
//!   and `delete`, so every write path (INSERT, REPLACE, ON DUPLICATE KEY
//!   UPDATE, multi-table UPDATE/DELETE, cascades) goes through the same
//!   check, as InnoDB does it in its row operations.
//!
//! The referenced side is kept by name (database, table, column names),
//! not by id: with `foreign_key_checks=0` a key may name a table that does
//! not exist yet (how `mariadb-dump` output loads), and it binds to
//! whatever table holds the name when a row is checked. RENAME TABLE and
//! RENAME COLUMN of a parent rewrite the names in its children.
//!
//! Binary form (appended to a format-3 table definition, see catalog.rs):
//!
//! ```text
//!   u32 n_checks  { str name, str expr, u8 enforced }*
//!   u32 n_fks     { str name, u32 n, u32 col*, str ref_db, str ref_table,
//!                   u32 m, str ref_col*, u8 on_delete, u8 on_update }*
//! ```

use crate::error::EngineError;

/// The referential action of ON DELETE / ON UPDATE.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FkAction {
    /// Nothing written: InnoDB treats it as RESTRICT (checked at once).
    NoAction,
    Restrict,
    Cascade,
    SetNull,
}

impl FkAction {
    fn code(self) -> u8 {
        match self {
            FkAction::NoAction => 0,
            FkAction::Restrict => 1,
            FkAction::Cascade => 2,
            FkAction::SetNull => 3,
        }
    }
    fn from_code(c: u8) -> Result<FkAction, String> {
        Ok(match c {
            0 => FkAction::NoAction,
            1 => FkAction::Restrict,
            2 => FkAction::Cascade,
            3 => FkAction::SetNull,
            _ => return Err(format!("unknown foreign key action {c}")),
        })
    }
    /// The SQL words (`NO ACTION`, `SET NULL`, ...).
    pub fn sql(self) -> &'static str {
        match self {
            FkAction::NoAction => "NO ACTION",
            FkAction::Restrict => "RESTRICT",
            FkAction::Cascade => "CASCADE",
            FkAction::SetNull => "SET NULL",
        }
    }
}

/// A CHECK constraint.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckDef {
    pub name: String,
    /// The expression as SQL text, identifiers back-quoted (what SHOW
    /// CREATE TABLE prints between `CHECK (` and `)`).
    pub expr: String,
    pub enforced: bool,
}

/// A FOREIGN KEY of the table that declares it (the child).
#[derive(Debug, Clone, PartialEq)]
pub struct ForeignKeyDef {
    pub name: String,
    /// Child column positions.
    pub columns: Vec<usize>,
    pub ref_db: String,
    pub ref_table: String,
    /// Parent column names, one per child column.
    pub ref_columns: Vec<String>,
    pub on_delete: FkAction,
    pub on_update: FkAction,
}

impl ForeignKeyDef {
    /// Whether the key names `db.table` as its parent.
    pub fn references(&self, db: &str, table: &str) -> bool {
        self.ref_db.eq_ignore_ascii_case(db) && self.ref_table.eq_ignore_ascii_case(table)
    }

    /// `CONSTRAINT `fk` FOREIGN KEY (`a`) REFERENCES `p` (`id`) ON DELETE
    /// CASCADE`: SHOW CREATE TABLE's line and the text of 1451/1452. The
    /// parent's database is printed only when it differs from `child_db`.
    /// SHOW CREATE TABLE separates columns with `,`, InnoDB's error
    /// messages with `, ` (`sep`).
    pub fn sql(&self, child_db: &str, child_cols: &[String], sep: &str) -> String {
        let cols = |names: &mut dyn Iterator<Item = &String>| {
            names.map(|n| q(n)).collect::<Vec<_>>().join(sep)
        };
        let parent = if self.ref_db.eq_ignore_ascii_case(child_db) {
            q(&self.ref_table)
        } else {
            format!("{}.{}", q(&self.ref_db), q(&self.ref_table))
        };
        let mut s = format!(
            "CONSTRAINT {} FOREIGN KEY ({}) REFERENCES {parent} ({})",
            q(&self.name),
            cols(&mut self.columns.iter().filter_map(|&c| child_cols.get(c))),
            cols(&mut self.ref_columns.iter()),
        );
        // MySQL prints an action only when one was written other than the
        // default (NO ACTION and RESTRICT both print, as written).
        if self.on_delete != FkAction::NoAction {
            s.push_str(&format!(" ON DELETE {}", self.on_delete.sql()));
        }
        if self.on_update != FkAction::NoAction {
            s.push_str(&format!(" ON UPDATE {}", self.on_update.sql()));
        }
        s
    }
}

/// The SHOW CREATE TABLE line of a CHECK constraint.
pub fn check_sql(c: &CheckDef) -> String {
    let mut s = format!("CONSTRAINT {} CHECK ({})", q(&c.name), c.expr);
    if !c.enforced {
        s.push_str(" /*!80016 NOT ENFORCED */");
    }
    s
}

pub(crate) fn q(name: &str) -> String {
    format!("`{}`", name.replace('`', "``"))
}

// ---- binary form -------------------------------------------------------

pub(crate) fn encode(checks: &[CheckDef], fks: &[ForeignKeyDef], w: &mut Vec<u8>) {
    put_u32(w, checks.len() as u32);
    for c in checks {
        put_str(w, &c.name);
        put_str(w, &c.expr);
        w.push(u8::from(c.enforced));
    }
    put_u32(w, fks.len() as u32);
    for f in fks {
        put_str(w, &f.name);
        put_u32(w, f.columns.len() as u32);
        for &c in &f.columns {
            put_u32(w, c as u32);
        }
        put_str(w, &f.ref_db);
        put_str(w, &f.ref_table);
        put_u32(w, f.ref_columns.len() as u32);
        for c in &f.ref_columns {
            put_str(w, c);
        }
        w.push(f.on_delete.code());
        w.push(f.on_update.code());
    }
}

/// Reads what [`encode`] wrote; `n_columns` bounds the child positions.
pub(crate) fn decode(
    r: &mut &[u8],
    n_columns: usize,
) -> Result<(Vec<CheckDef>, Vec<ForeignKeyDef>), String> {
    let n = get_u32(r)? as usize;
    let mut checks = Vec::with_capacity(n.min(1024));
    for _ in 0..n {
        let name = get_str(r)?;
        let expr = get_str(r)?;
        let enforced = take(r, 1)?[0] != 0;
        checks.push(CheckDef {
            name,
            expr,
            enforced,
        });
    }
    let n = get_u32(r)? as usize;
    let mut fks = Vec::with_capacity(n.min(1024));
    for _ in 0..n {
        let name = get_str(r)?;
        let nc = get_u32(r)? as usize;
        let mut columns = Vec::with_capacity(nc.min(64));
        for _ in 0..nc {
            let c = get_u32(r)? as usize;
            if c >= n_columns {
                return Err("foreign key column out of range".into());
            }
            columns.push(c);
        }
        let ref_db = get_str(r)?;
        let ref_table = get_str(r)?;
        let nr = get_u32(r)? as usize;
        let mut ref_columns = Vec::with_capacity(nr.min(64));
        for _ in 0..nr {
            ref_columns.push(get_str(r)?);
        }
        if ref_columns.len() != columns.len() || columns.is_empty() {
            return Err("foreign key column counts differ".into());
        }
        let on_delete = FkAction::from_code(take(r, 1)?[0])?;
        let on_update = FkAction::from_code(take(r, 1)?[0])?;
        fks.push(ForeignKeyDef {
            name,
            columns,
            ref_db,
            ref_table,
            ref_columns,
            on_delete,
            on_update,
        });
    }
    Ok((checks, fks))
}

fn put_u32(w: &mut Vec<u8>, v: u32) {
    w.extend_from_slice(&v.to_le_bytes());
}
fn put_str(w: &mut Vec<u8>, s: &str) {
    put_u32(w, s.len() as u32);
    w.extend_from_slice(s.as_bytes());
}
fn take<'a>(r: &mut &'a [u8], n: usize) -> Result<&'a [u8], String> {
    if r.len() < n {
        return Err("truncated constraint definition".into());
    }
    let (a, b) = r.split_at(n);
    *r = b;
    Ok(a)
}
fn get_u32(r: &mut &[u8]) -> Result<u32, String> {
    let b = take(r, 4)?;
    Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}
fn get_str(r: &mut &[u8]) -> Result<String, String> {
    let n = get_u32(r)? as usize;
    String::from_utf8(take(r, n)?.to_vec()).map_err(|_| "name is not UTF-8".to_string())
}

// ---- errors (MySQL 8.0's codes and messages) ----------------------------

/// 1451 ER_ROW_IS_REFERENCED_2: a parent row still has children.
pub fn row_is_referenced(what: &str) -> EngineError {
    EngineError::new(
        1451,
        "23000",
        format!("Cannot delete or update a parent row: a foreign key constraint fails ({what})"),
    )
}

/// 1452 ER_NO_REFERENCED_ROW_2: a child row has no parent.
pub fn no_referenced_row(what: &str) -> EngineError {
    EngineError::new(
        1452,
        "23000",
        format!("Cannot add or update a child row: a foreign key constraint fails ({what})"),
    )
}

/// 1822 ER_FK_NO_INDEX_PARENT.
pub fn no_parent_index(fk: &str, parent: &str) -> EngineError {
    EngineError::new(
        1822,
        "HY000",
        format!("Failed to add the foreign key constraint. Missing index for constraint '{fk}' in the referenced table '{parent}'"),
    )
}

/// 1824 ER_FK_CANNOT_OPEN_PARENT.
pub fn cannot_open_parent(parent: &str) -> EngineError {
    EngineError::new(
        1824,
        "HY000",
        format!("Failed to open the referenced table '{parent}'"),
    )
}

/// 3780 ER_FK_INCOMPATIBLE_COLUMNS.
pub fn incompatible_columns(col: &str, ref_col: &str, fk: &str) -> EngineError {
    EngineError::new(
        3780,
        "HY000",
        format!("Referencing column '{col}' and referenced column '{ref_col}' in foreign key constraint '{fk}' are incompatible."),
    )
}

/// 1830 ER_FK_COLUMN_NOT_NULL: SET NULL on a NOT NULL column.
pub fn column_not_null(col: &str, fk: &str) -> EngineError {
    EngineError::new(
        1830,
        "HY000",
        format!(
            "Column '{col}' cannot be NOT NULL: needed in a foreign key constraint '{fk}' SET NULL"
        ),
    )
}

/// 1826 ER_FK_DUP_NAME.
pub fn duplicate_fk_name(name: &str) -> EngineError {
    EngineError::new(
        1826,
        "HY000",
        format!("Duplicate foreign key constraint name '{name}'"),
    )
}

/// 1239 ER_WRONG_FK_DEF: column counts differ.
pub fn wrong_fk_def(name: &str) -> EngineError {
    EngineError::new(
        1239,
        "42000",
        format!("Incorrect foreign key definition for '{name}': Key reference and table reference don't match"),
    )
}

/// 3730 ER_FK_CANNOT_DROP_PARENT.
pub fn cannot_drop_parent(table: &str, fk: &str, child: &str) -> EngineError {
    EngineError::new(
        3730,
        "HY000",
        format!("Cannot drop table '{table}' referenced by a foreign key constraint '{fk}' on table '{child}'."),
    )
}

/// 1701 ER_TRUNCATE_ILLEGAL_FK.
pub fn truncate_referenced(what: &str) -> EngineError {
    EngineError::new(
        1701,
        "42000",
        format!("Cannot truncate a table referenced in a foreign key constraint ({what})"),
    )
}

/// 1553 ER_DROP_INDEX_FK.
pub fn index_needed(index: &str) -> EngineError {
    EngineError::new(
        1553,
        "HY000",
        format!("Cannot drop index '{index}': needed in a foreign key constraint"),
    )
}

/// 3008 ER_FK_DEPTH_EXCEEDED.
pub fn depth_exceeded() -> EngineError {
    EngineError::new(
        3008,
        "HY000",
        format!("Foreign key cascade delete/update exceeds max depth of {MAX_CASCADE_DEPTH}."),
    )
}

/// 3819 ER_CHECK_CONSTRAINT_VIOLATED.
pub fn check_violated(name: &str) -> EngineError {
    EngineError::new(
        3819,
        "HY000",
        format!("Check constraint '{name}' is violated."),
    )
}

/// 3822 ER_CHECK_CONSTRAINT_DUP_NAME.
pub fn duplicate_check_name(name: &str) -> EngineError {
    EngineError::new(
        3822,
        "HY000",
        format!("Duplicate check constraint name '{name}'."),
    )
}

/// 3821 ER_CHECK_CONSTRAINT_NOT_FOUND.
pub fn check_not_found(name: &str) -> EngineError {
    EngineError::new(
        3821,
        "HY000",
        format!("Check constraint '{name}' is not found in the table."),
    )
}

/// 3940 ER_CONSTRAINT_NOT_FOUND (DROP CONSTRAINT).
pub fn constraint_not_found(name: &str) -> EngineError {
    EngineError::new(
        3940,
        "HY000",
        format!("Constraint '{name}' does not exist."),
    )
}

/// 3959 ER_DEPENDENT_BY_CHECK_CONSTRAINT.
pub fn column_used_by_check(check: &str, column: &str) -> EngineError {
    EngineError::new(
        3959,
        "HY000",
        format!("Check constraint '{check}' uses column '{column}', hence column cannot be dropped or renamed."),
    )
}

/// InnoDB's FK_MAX_CASCADE_DEL: how deep cascades may recurse.
pub const MAX_CASCADE_DEPTH: usize = 15;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constraints_round_trip_and_truncation_is_an_error() {
        let checks = vec![CheckDef {
            name: "t_chk_1".into(),
            expr: "(`qty` >= 0)".into(),
            enforced: false,
        }];
        let fks = vec![ForeignKeyDef {
            name: "t_ibfk_1".into(),
            columns: vec![1, 0],
            ref_db: "db".into(),
            ref_table: "p".into(),
            ref_columns: vec!["a".into(), "b".into()],
            on_delete: FkAction::Cascade,
            on_update: FkAction::SetNull,
        }];
        let mut w = Vec::new();
        encode(&checks, &fks, &mut w);
        let mut r = w.as_slice();
        assert_eq!(decode(&mut r, 2), Ok((checks.clone(), fks.clone())));
        assert!(r.is_empty());
        // A column position past the table is refused, not trusted.
        assert!(decode(&mut w.as_slice(), 1).is_err());
        for cut in 0..w.len() {
            assert!(decode(&mut &w[..cut], 2).is_err(), "cut at {cut}");
        }
        let cols = vec!["id".to_string(), "pid".to_string()];
        assert_eq!(
            fks[0].sql("db", &cols, ", "),
            "CONSTRAINT `t_ibfk_1` FOREIGN KEY (`pid`, `id`) REFERENCES `p` (`a`, `b`) ON DELETE CASCADE ON UPDATE SET NULL"
        );
        assert_eq!(
            check_sql(&checks[0]),
            "CONSTRAINT `t_chk_1` CHECK ((`qty` >= 0)) /*!80016 NOT ENFORCED */"
        );
    }
}
