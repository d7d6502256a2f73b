//! # Session-level SQL around a statement: SELECT ... INTO, FOUND_ROWS, 1287s
//!
//! What MySQL keeps per connection about the *previous* statement, and
//! the statement forms that only make sense against that state:
//!
//! * **`SELECT ... INTO @a, @b`**: the parser cuts the INTO clause out
//!   (`parse::cut_select_into`), the query runs as usual and
//!   [`assign_into`] stores its one row: more than one row is error 1172,
//!   a column count other than the variables' is 1222, no row leaves the
//!   variables as they were with warning 1329. The statement answers OK
//!   with the row count as affected rows (what `ROW_COUNT()` then sees).
//! * **`SQL_CALC_FOUND_ROWS`** on the outermost query block:
//!   [`strip_calc_found_rows`] gives the query without the modifier and
//!   without its LIMIT; the session runs that, keeps the row count for
//!   `FOUND_ROWS()` and applies the LIMIT to the rows itself (MySQL counts
//!   the rows the query would return without the LIMIT). Without the
//!   modifier, `FOUND_ROWS()` is the number of rows the last SELECT
//!   returned. Elsewhere in a statement the modifier is 1234, as MySQL.
//! * **Deprecation warnings** MySQL 8.0 gives at parse time, one per
//!   occurrence ([`deprecations`]): `@x := expr` inside an expression
//!   (8.0.13), `SQL_CALC_FOUND_ROWS` and `FOUND_ROWS()` (8.0.17), and
//!   `VALUES(col)` in ON DUPLICATE KEY UPDATE (8.0.20).
//!
//! `ROW_COUNT()` itself needs no code here: the session records each
//! statement's affected rows (an OK packet), -1 after a result set or an
//! error, exactly as MySQL's `my_ok` / `my_eof` / error paths do.

use std::ops::ControlFlow;

use quire_engine::{EngineError, Value};
use sqlparser::ast::{self, BinaryOperator, Expr, Query, SetExpr, Statement, Visit, Visitor};

use crate::ctx::{Ctx, ResultSet};
use crate::parse::{Command, SetItem};
use crate::uservars::Live;
use crate::SqlResult;

const USER_SET_EXPR: &str = "Setting user variables within expressions is deprecated and will be removed in a future release. Consider alternatives: 'SET variable=expression, ...', or 'SELECT expression(s) INTO variables(s)'.";
const CALC_FOUND_ROWS: &str = "SQL_CALC_FOUND_ROWS is deprecated and will be removed in a future release. Consider using two separate queries instead.";
const FOUND_ROWS: &str = "FOUND_ROWS() is deprecated and will be removed in a future release. Consider using COUNT(*) instead.";
const VALUES_FUNCTION: &str = "'VALUES function' is deprecated and will be removed in a future release. Please use an alias (INSERT INTO ... VALUES (...) AS alias) and replace VALUES(col) in the ON DUPLICATE KEY UPDATE clause with alias.col instead";

/// Counts the deprecated forms met while visiting a statement.
#[derive(Default)]
struct Deprecated {
    found: Vec<&'static str>,
}

impl Visitor for Deprecated {
    type Break = ();
    fn pre_visit_expr(&mut self, e: &Expr) -> ControlFlow<()> {
        match e {
            Expr::BinaryOp {
                op: BinaryOperator::Assignment,
                ..
            } => self.found.push(USER_SET_EXPR),
            Expr::Function(f) if is_named(&f.name, "FOUND_ROWS") => self.found.push(FOUND_ROWS),
            _ => {}
        }
        ControlFlow::Continue(())
    }
    fn pre_visit_select(&mut self, s: &ast::Select) -> ControlFlow<()> {
        if s.select_modifiers
            .as_ref()
            .is_some_and(|m| m.sql_calc_found_rows)
        {
            self.found.push(CALC_FOUND_ROWS);
        }
        ControlFlow::Continue(())
    }
    fn pre_visit_statement(&mut self, st: &Statement) -> ControlFlow<()> {
        if let Statement::Insert(ins) = st {
            if let Some(ast::OnInsert::DuplicateKeyUpdate(list)) = &ins.on {
                for a in list {
                    let _ = ast::visit_expressions(&a.value, |x| {
                        if matches!(x, Expr::Function(f) if is_named(&f.name, "VALUES")) {
                            self.found.push(VALUES_FUNCTION);
                        }
                        ControlFlow::<()>::Continue(())
                    });
                }
            }
        }
        ControlFlow::Continue(())
    }
}

fn is_named(n: &ast::ObjectName, want: &str) -> bool {
    matches!(n.0.as_slice(), [p] if p.as_ident().is_some_and(|i| i.value.eq_ignore_ascii_case(want)))
}

/// Raises warning 1287 for each deprecated form in `cmd` (into the
/// statement's warning sink, `func/warn.rs`).
pub fn deprecations(cmd: &Command) {
    let mut d = Deprecated::default();
    match cmd {
        Command::Sql(st) => {
            let _ = st.visit(&mut d);
        }
        Command::Set(items) => {
            for it in items {
                if let SetItem::Var { value, .. } = it {
                    let _ = value.visit(&mut d);
                }
            }
        }
        _ => {}
    }
    for msg in d.found {
        crate::func::warn::warn(1287, msg);
    }
}

/// Stores the one row of a `SELECT ... INTO @a, ...` result; returns how
/// many rows it had (0 or 1).
pub fn assign_into(live: &Live, names: &[String], rs: ResultSet) -> SqlResult<u64> {
    if rs.columns.len() != names.len() {
        return Err(EngineError::new(
            1222,
            "21000",
            "The used SELECT statements have a different number of columns",
        ));
    }
    let mut rows = rs.rows.into_iter();
    let Some(row) = rows.next() else {
        crate::func::warn::warn(1329, "No data - zero rows fetched, selected, or processed");
        return Ok(0);
    };
    if rows.next().is_some() {
        return Err(EngineError::new(
            1172,
            "42000",
            "Result consisted of more than one row",
        ));
    }
    for (n, v) in names.iter().zip(row) {
        live.set(n, v);
    }
    Ok(1)
}

/// A query with SQL_CALC_FOUND_ROWS on its outermost block, without the
/// modifier and without its LIMIT (None: the modifier is not there).
pub fn strip_calc_found_rows(q: &Query) -> Option<Query> {
    // Looked up before anything is copied: almost no query has it.
    if !has_calc_found_rows(&q.body) {
        return None;
    }
    let mut q2 = q.clone();
    let first = leftmost_select(&mut q2.body)?;
    let m = first.select_modifiers.as_mut()?;
    if !m.sql_calc_found_rows {
        return None;
    }
    m.sql_calc_found_rows = false;
    q2.limit_clause = None;
    Some(q2)
}

fn has_calc_found_rows(b: &SetExpr) -> bool {
    match b {
        SetExpr::Select(s) => s
            .select_modifiers
            .as_ref()
            .is_some_and(|m| m.sql_calc_found_rows),
        SetExpr::SetOperation { left, .. } => has_calc_found_rows(left),
        SetExpr::Query(q) => has_calc_found_rows(&q.body),
        _ => false,
    }
}

fn leftmost_select(b: &mut SetExpr) -> Option<&mut ast::Select> {
    match b {
        SetExpr::Select(s) => Some(s),
        SetExpr::SetOperation { left, .. } => leftmost_select(left),
        SetExpr::Query(q) => leftmost_select(&mut q.body),
        _ => None,
    }
}

/// Applies `q`'s LIMIT / OFFSET to rows read without them.
pub fn apply_limit(cx: &Ctx, q: &Query, rows: &mut Vec<Vec<Value>>) -> SqlResult<()> {
    let (limit, offset) = crate::query::bind::limit_offset(q)?;
    let offset = match offset {
        Some(e) => crate::query::bind::eval_limit(cx, e)?,
        None => 0,
    };
    let limit = match limit {
        Some(e) => Some(crate::query::bind::eval_limit(cx, e)?),
        None => None,
    };
    rows.drain(..offset.min(rows.len()));
    if let Some(l) = limit {
        rows.truncate(l);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cmd(sql: &str) -> Command {
        crate::parse::parse(sql).expect("parse").cmd
    }

    fn warnings_of(sql: &str) -> Vec<u16> {
        crate::func::warn::begin();
        deprecations(&cmd(sql));
        let codes: Vec<u16> = crate::func::warn::drain()
            .0
            .into_iter()
            .map(|w| w.1)
            .collect();
        // The session walks the tree only when the parser's token filter
        // says a deprecated form may be there: it must never miss one.
        if !codes.is_empty() {
            let p = crate::parse::parse(sql).expect("parse");
            assert!(p.maybe_deprecated, "token filter missed: {sql}");
        }
        codes
    }

    #[test]
    fn each_deprecated_form_warns_once() {
        assert_eq!(warnings_of("SELECT @a := 1, @b := 2"), vec![1287, 1287]);
        assert_eq!(warnings_of("SET @a = 1"), Vec::<u16>::new());
        assert_eq!(warnings_of("SET @a = @b := 1"), vec![1287]);
        assert_eq!(
            warnings_of("SELECT SQL_CALC_FOUND_ROWS 1 LIMIT 1"),
            vec![1287]
        );
        assert_eq!(warnings_of("SELECT FOUND_ROWS()"), vec![1287]);
        assert_eq!(warnings_of("select found_rows /* c */ ()"), vec![1287]);
        assert_eq!(
            warnings_of("SELECT /*!80000 SQL_CALC_FOUND_ROWS */ 1"),
            vec![1287]
        );
        assert_eq!(
            warnings_of("INSERT INTO t VALUES (1) ON DUPLICATE KEY UPDATE a = VALUES(a)"),
            vec![1287]
        );
    }

    #[test]
    fn calc_found_rows_strips_modifier_and_limit() {
        let Command::Sql(st) = cmd("SELECT SQL_CALC_FOUND_ROWS a FROM t ORDER BY a LIMIT 1, 2")
        else {
            panic!("not sql")
        };
        let Statement::Query(q) = *st else {
            panic!("not a query")
        };
        let s = strip_calc_found_rows(&q).expect("stripped");
        assert_eq!(s.to_string(), "SELECT a FROM t ORDER BY a");
        let Command::Sql(st) = cmd("SELECT a FROM t LIMIT 1") else {
            panic!("not sql")
        };
        let Statement::Query(q) = *st else {
            panic!("not a query")
        };
        assert!(strip_calc_found_rows(&q).is_none());
    }
}
