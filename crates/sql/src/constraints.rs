//! # CHECK and FOREIGN KEY clauses: from the parser to the catalog
//!
//! CREATE TABLE and ALTER TABLE hand their CHECK and FOREIGN KEY clauses
//! here; what comes out is the engine's [`CheckDef`] / [`ForeignKeyDef`]
//! (`quire_engine::constraint`), named as MySQL 8.0 names them:
//!
//! ```text
//!   CHECK (qty >= 0)                  -> `t_chk_1`   CHECK ((`qty` >= 0))
//!   FOREIGN KEY (p) REFERENCES p(id)  -> `t_ibfk_1`  + index `p` if none
//!                                                      starts with (p)
//! ```
//!
//! A CHECK expression is validated as MySQL does before it is stored: its
//! columns exist (3820), a column-level CHECK names only its column
//! (3813), no auto-increment column (3818), no variables (3816), no
//! subqueries (3815) and no function whose value is not a function of the
//! row (3814: NOW(), RAND(), USER(), ...). Its text is stored with
//! back-quoted identifiers; DML compiles it again (`exec.rs`,
//! [`TableChecks`]) and refuses a row for which it is FALSE (3819); NULL
//! passes, as SQL says.

use std::ops::ControlFlow;

use quire_engine::constraint::{FkAction, ForeignKeyDef};
use quire_engine::{CheckDef, ColumnDef, EngineError, TableDef, Value};
use sqlparser::ast::{
    self, Expr, ForeignKeyConstraint, Ident, ReferentialAction, VisitMut, VisitorMut,
};

use crate::ctx::Ctx;
use crate::expr::{truth, Row, E};
use crate::SqlResult;

/// Functions whose value is not a function of the row: MySQL refuses them
/// in a CHECK (3814) and in a generated column (3763).
pub(crate) const NOT_OF_THE_ROW: &[&str] = &[
    "BENCHMARK",
    "CONNECTION_ID",
    "CURDATE",
    "CURRENT_DATE",
    "CURRENT_ROLE",
    "CURRENT_TIME",
    "CURRENT_TIMESTAMP",
    "CURRENT_USER",
    "CURTIME",
    "DATABASE",
    "FOUND_ROWS",
    "GET_LOCK",
    "IS_FREE_LOCK",
    "IS_USED_LOCK",
    "LAST_INSERT_ID",
    "LOAD_FILE",
    "LOCALTIME",
    "LOCALTIMESTAMP",
    "MASTER_POS_WAIT",
    "NOW",
    "RAND",
    "RANDOM_BYTES",
    "RELEASE_ALL_LOCKS",
    "RELEASE_LOCK",
    "ROW_COUNT",
    "SCHEMA",
    "SESSION_USER",
    "SLEEP",
    "SYSDATE",
    "SYSTEM_USER",
    "UNIX_TIMESTAMP",
    "USER",
    "UTC_DATE",
    "UTC_TIME",
    "UTC_TIMESTAMP",
    "UUID",
    "UUID_SHORT",
    "VERSION",
];

/// Aggregates: not of one row either.
const AGGREGATES: &[&str] = &["AVG", "COUNT", "GROUP_CONCAT", "MAX", "MIN", "SUM"];

fn disallowed_function(check: &str, f: &str) -> EngineError {
    EngineError::new(
        3814,
        "HY000",
        format!("An expression of a check constraint '{check}' contains disallowed function: {f}."),
    )
}

/// Rewrites a CHECK expression's column names to the declared, quoted
/// ones and refuses what MySQL refuses.
struct CheckExpr<'a> {
    name: &'a str,
    columns: &'a [ColumnDef],
    /// A column-level CHECK: the one column it may name.
    only: Option<&'a str>,
}

impl CheckExpr<'_> {
    fn column(&self, i: &mut Ident) -> Result<(), EngineError> {
        if i.quote_style.is_none() && i.value.starts_with('@') {
            return Err(EngineError::new(
                3816,
                "HY000",
                format!(
                    "An expression of a check constraint '{}' cannot refer to a user or system variable.",
                    self.name
                ),
            ));
        }
        let Some(c) = self
            .columns
            .iter()
            .find(|c| c.name.eq_ignore_ascii_case(&i.value))
        else {
            return Err(EngineError::new(
                3820,
                "HY000",
                format!(
                    "Check constraint '{}' refers to non-existing column '{}'.",
                    self.name, i.value
                ),
            ));
        };
        if let Some(only) = self.only {
            if !c.name.eq_ignore_ascii_case(only) {
                return Err(EngineError::new(
                    3813,
                    "HY000",
                    format!(
                        "Column check constraint '{}' references other column.",
                        self.name
                    ),
                ));
            }
        }
        if c.auto_increment {
            return Err(EngineError::new(
                3818,
                "HY000",
                format!(
                    "Check constraint '{}' cannot refer to an auto-increment column.",
                    self.name
                ),
            ));
        }
        *i = Ident::with_quote('`', c.name.clone());
        Ok(())
    }
}

impl VisitorMut for CheckExpr<'_> {
    type Break = EngineError;
    /// Any subquery (scalar, IN, EXISTS): 3815.
    fn pre_visit_query(&mut self, _: &mut ast::Query) -> ControlFlow<EngineError> {
        ControlFlow::Break(EngineError::new(
            3815,
            "HY000",
            format!(
                "An expression of a check constraint '{}' contains disallowed function.",
                self.name
            ),
        ))
    }
    fn pre_visit_expr(&mut self, e: &mut Expr) -> ControlFlow<EngineError> {
        let r = match e {
            Expr::Identifier(i) => self.column(i),
            // `t.c`: the table's own name may qualify a column; MySQL
            // stores the bare column.
            Expr::CompoundIdentifier(parts) => match parts.last().cloned() {
                Some(mut i) => self.column(&mut i).map(|()| *e = Expr::Identifier(i)),
                None => Ok(()),
            },
            Expr::Function(f) => {
                let fname = f.name.to_string().to_ascii_uppercase();
                if NOT_OF_THE_ROW.contains(&fname.as_str()) || AGGREGATES.contains(&fname.as_str()) || f.over.is_some() {
                    Err(disallowed_function(self.name, &fname.to_ascii_lowercase()))
                } else {
                    Ok(())
                }
            }
            Expr::Value(v) if matches!(v.value, ast::Value::Placeholder(_)) => Err(
                EngineError::new(
                    3816,
                    "HY000",
                    format!(
                        "An expression of a check constraint '{}' cannot refer to a user or system variable.",
                        self.name
                    ),
                ),
            ),
            _ => Ok(()),
        };
        match r {
            Ok(()) => ControlFlow::Continue(()),
            Err(e) => ControlFlow::Break(e),
        }
    }
}

/// MySQL's name for the next unnamed constraint of `table`:
/// `<table>_<infix>_<n>` (`chk` for CHECK, `ibfk` for FOREIGN KEY) past
/// every such name already `taken`.
pub fn next_name(table: &str, infix: &str, taken: &[String]) -> String {
    let prefix = format!("{}_{infix}_", table.to_ascii_lowercase());
    let n = taken
        .iter()
        .filter_map(|t| {
            t.to_ascii_lowercase()
                .strip_prefix(&prefix)?
                .parse::<u64>()
                .ok()
        })
        .max()
        .unwrap_or(0);
    format!("{table}_{infix}_{}", n + 1)
}

/// The name a clause gives (`named`), else the next generated one.
pub fn name_or_next(named: Option<&Ident>, table: &str, infix: &str, taken: &[String]) -> String {
    match named {
        Some(n) => n.value.clone(),
        None => next_name(table, infix, taken),
    }
}

/// A CHECK clause of `table` as the catalog keeps it. `only`: the column
/// of a column-level CHECK.
pub fn check_def(
    name: String,
    expr: &Expr,
    enforced: Option<bool>,
    columns: &[ColumnDef],
    only: Option<&str>,
) -> SqlResult<CheckDef> {
    if name.chars().count() > 64 {
        return Err(EngineError::new(
            1059,
            "42000",
            format!("Identifier name '{name}' is too long"),
        ));
    }
    // Outer parentheses are MySQL's to add: `CHECK ((a > 0))` read back
    // from SHOW CREATE TABLE stores what `CHECK (a > 0)` did.
    let mut e = expr.clone();
    while let Expr::Nested(inner) = e {
        e = *inner;
    }
    let mut v = CheckExpr {
        name: &name,
        columns,
        only,
    };
    if let ControlFlow::Break(err) = e.visit(&mut v) {
        return Err(err);
    }
    Ok(CheckDef {
        expr: format!("({e})"),
        name,
        enforced: enforced.unwrap_or(true),
    })
}

fn action(a: Option<&ReferentialAction>, on: &str) -> SqlResult<FkAction> {
    Ok(match a {
        None | Some(ReferentialAction::NoAction) => FkAction::NoAction,
        Some(ReferentialAction::Restrict) => FkAction::Restrict,
        Some(ReferentialAction::Cascade) => FkAction::Cascade,
        Some(ReferentialAction::SetNull) => FkAction::SetNull,
        // InnoDB rejects SET DEFAULT; quire says so by name.
        Some(ReferentialAction::SetDefault) => {
            return Err(EngineError::not_supported(format!("ON {on} SET DEFAULT")))
        }
    })
}

/// A FOREIGN KEY clause of a table with `columns`, named `name`.
/// `ref_db` is the database an unqualified parent name means.
pub fn fk_def(
    fk: &ForeignKeyConstraint,
    name: String,
    columns: &[ColumnDef],
    ref_db: &str,
) -> SqlResult<ForeignKeyDef> {
    if fk.match_kind.is_some() || fk.characteristics.is_some() {
        return Err(EngineError::not_supported(format!("{fk}")));
    }
    let mut cols = Vec::with_capacity(fk.columns.len());
    for c in &fk.columns {
        let p = columns
            .iter()
            .position(|x| x.name.eq_ignore_ascii_case(&c.value))
            .ok_or_else(|| {
                EngineError::new(
                    1072,
                    "42000",
                    format!("Key column '{}' doesn't exist in table", c.value),
                )
            })?;
        cols.push(p);
    }
    let (db, table) = crate::ctx::split_name(&fk.foreign_table)?;
    let ref_columns: Vec<String> = fk
        .referred_columns
        .iter()
        .map(|i| i.value.clone())
        .collect();
    if ref_columns.len() != cols.len() {
        return Err(quire_engine::constraint::wrong_fk_def(&name));
    }
    Ok(ForeignKeyDef {
        name,
        columns: cols,
        ref_db: db.unwrap_or_else(|| ref_db.to_string()),
        ref_table: table,
        ref_columns,
        on_delete: action(fk.on_delete.as_ref(), "DELETE")?,
        on_update: action(fk.on_update.as_ref(), "UPDATE")?,
    })
}

/// The name of the index MySQL creates for a foreign key whose columns
/// lead no index: the CONSTRAINT name, else the FOREIGN KEY's index name,
/// else the first column's name.
pub fn fk_index_name(fk: &ForeignKeyConstraint, columns: &[ColumnDef], cols: &[usize]) -> String {
    fk.name
        .as_ref()
        .or(fk.index_name.as_ref())
        .map(|i| i.value.clone())
        .unwrap_or_else(|| columns[cols[0]].name.clone())
}

/// The enforced CHECK constraints of a table, compiled for a statement.
pub(crate) struct TableChecks(Vec<(E, String)>);

impl TableChecks {
    /// Compiles `t`'s enforced CHECKs over its row.
    pub(crate) fn compile(cx: &Ctx, t: &TableDef) -> SqlResult<TableChecks> {
        let mut out = Vec::new();
        if t.checks.iter().any(|c| c.enforced) {
            let cols = crate::query::bind::table_cols(t, &t.name);
            for c in t.checks.iter().filter(|c| c.enforced) {
                let e = crate::parse::parse_expr(&c.expr)?;
                out.push((
                    cx.compiler(&cols, None, "check").compile(&e)?,
                    c.name.clone(),
                ));
            }
        }
        Ok(TableChecks(out))
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// 3819 when a constraint is FALSE for `row` (NULL passes).
    pub(crate) fn verify(&self, row: &[Value]) -> SqlResult<()> {
        for (e, name) in &self.0 {
            if truth(&e.eval(&Row::new(row, &[]))?) == Some(false) {
                return Err(quire_engine::constraint::check_violated(name));
            }
        }
        Ok(())
    }
}
