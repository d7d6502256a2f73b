//! # Statement context: what planning and execution read from the session
//!
//! [`Ctx`] carries, for one statement, the engine, the current database,
//! the bound parameters, the session values expressions read ([`Env`]),
//! the statement's clock and the virtual tables (`performance_schema`,
//! `mysql.user`, ...). It sits below both the query engine (`query/`) and
//! the write paths (`exec.rs`), so neither imports the other for it.

use std::sync::Arc;

use quire_engine::types::DateTime;
use quire_engine::{ColumnType, Engine, EngineError, TableDef, Value};
use sqlparser::ast::ObjectName;

use crate::expr::{AggSpec, ColInfo, Compiler, Env};
use crate::{ColumnMeta, SqlResult};

/// A virtual table: column names/types and rows.
pub type Virtual = (Vec<(String, ColumnType)>, Vec<Vec<Value>>);

/// What execution needs from the session.
pub struct Ctx<'a> {
    pub engine: &'a Engine,
    pub db: Option<&'a str>,
    pub params: &'a [Value],
    pub env: &'a dyn Env,
    pub now: DateTime,
    pub virt: &'a dyn Fn(&str, &str) -> Option<Virtual>,
    /// Only work out the result columns (COM_STMT_PREPARE).
    pub describe: bool,
    /// A write through a view WITH CHECK OPTION (`view_dml.rs`): what
    /// every row it writes must satisfy.
    pub view_check: Option<&'a ViewCheck>,
    /// The session's temporary tables, which shadow the catalog's.
    pub temps: &'a crate::temp::TempTables,
    /// The permanent tables [`Ctx::table`] resolved for this statement:
    /// a query takes their metadata locks before it sends a row
    /// (`query::select_to`).
    pub opened: std::cell::RefCell<Vec<Arc<TableDef>>>,
}

/// The CHECK OPTION conditions of a write through a view: each
/// condition (over the base table known as `alias`) with the view named
/// in its 1369 error (`db.v`).
#[derive(Debug, Clone)]
pub struct ViewCheck {
    pub alias: String,
    pub conds: Vec<(sqlparser::ast::Expr, String)>,
}

pub struct ResultSet {
    pub columns: Vec<ColumnMeta>,
    pub rows: Vec<Vec<Value>>,
}

pub fn split_name(n: &ObjectName) -> SqlResult<(Option<String>, String)> {
    // A part that is not a plain identifier (sqlparser's
    // `ObjectNamePart::Function`, another dialect's `IDENTIFIER(...)`) is
    // no MySQL name: a syntax error rather than silently dropped.
    let parts: Vec<String> =
        n.0.iter()
            .map(|p| p.as_ident().map(|i| i.value.clone()))
            .collect::<Option<_>>()
            .ok_or_else(|| crate::parse::syntax_error(&n.to_string()))?;
    match parts.as_slice() {
        [t] => Ok((None, t.clone())),
        [d, t] => Ok((Some(d.clone()), t.clone())),
        _ => Err(crate::parse::syntax_error(&n.to_string())),
    }
}

pub fn no_db() -> EngineError {
    EngineError::new(1046, "3D000", "No database selected")
}

impl Ctx<'_> {
    pub fn table(&self, n: &ObjectName) -> SqlResult<Arc<TableDef>> {
        let (db, t) = split_name(n)?;
        let db = match db {
            Some(d) => d,
            None => self.db.ok_or_else(no_db)?.to_string(),
        };
        if let Some(def) = self.temps.get(&db, &t) {
            return Ok(def.clone());
        }
        let def = self.engine.table(&db, &t)?;
        self.opened.borrow_mut().push(def.clone());
        Ok(def)
    }

    pub fn compiler<'b>(
        &'b self,
        cols: &'b [ColInfo],
        aggs: Option<&'b mut Vec<AggSpec>>,
        clause: &'static str,
    ) -> Compiler<'b> {
        Compiler {
            cols,
            params: self.params,
            env: self.env,
            aggs,
            clause,
            now: self.now,
            values_offset: None,
            aliases: None,
            outer: &crate::expr::NO_OUTER,
            binder: None,
            outer_refs: Vec::new(),
            windows: None,
        }
    }
}
