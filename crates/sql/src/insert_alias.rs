//! # INSERT ... AS row_alias [(col, ...)] ON DUPLICATE KEY UPDATE
//!
//! MySQL 8.0.19 names the row being inserted: `INSERT INTO t (a, b)
//! VALUES (1, 2) AS new ON DUPLICATE KEY UPDATE b = new.b`, optionally
//! with column aliases (`AS new(m, n) ... UPDATE b = m + n`), for VALUES
//! and SET inserts alike. It replaces `VALUES(col)` (deprecated in
//! 8.0.20), which means the same thing: the value the row would have had.
//!
//! So the alias is resolved by rewriting the ON DUPLICATE KEY UPDATE
//! expressions before they are compiled: `new.b`, and an unqualified
//! column alias that is not a column of the table, become `VALUES(b)`,
//! which `exec.rs` already evaluates against the new row. An unqualified
//! name that is a table column keeps meaning the existing row's column,
//! as it always did. A reference to a column the alias does not have is
//! 1054; a column alias list of the wrong length is 1136.

use std::ops::ControlFlow;

use quire_engine::{EngineError, TableDef};
use sqlparser::ast::{self, Assignment, Expr, Ident};

use crate::SqlResult;

/// The alias's columns: (name the statement uses, table column name).
type AliasCols = Vec<(String, String)>;

/// The ON DUPLICATE KEY UPDATE assignments of `ins` with its row alias
/// resolved (unchanged when it has none). `targets` are the inserted
/// columns in statement order (the column list, the SET list, or every
/// column).
pub fn resolve(
    ins: &ast::Insert,
    t: &TableDef,
    targets: &[usize],
    list: &[Assignment],
) -> SqlResult<Vec<Assignment>> {
    let Some(al) = &ins.insert_alias else {
        return Ok(list.to_vec());
    };
    let alias = match al.row_alias.0.as_slice() {
        [p] => p.as_ident().map(|i| i.value.clone()),
        _ => None,
    }
    .ok_or_else(|| crate::parse::syntax_error(&al.row_alias.to_string()))?;
    let is_values = ins
        .source
        .as_ref()
        .is_none_or(|q| matches!(&*q.body, ast::SetExpr::Values(_)));
    if !is_values {
        // A row alias names VALUES / SET rows only.
        return Err(crate::parse::syntax_error(&format!("AS {alias}")));
    }
    let names: Vec<String> = targets.iter().map(|&i| t.columns[i].name.clone()).collect();
    let cols: AliasCols = match al.col_aliases.as_deref() {
        Some(c) if !c.is_empty() => {
            if c.len() != names.len() {
                return Err(EngineError::new(
                    1136,
                    "21S01",
                    "Column count doesn't match value count at row 1",
                ));
            }
            c.iter().map(|i| i.value.clone()).zip(names).collect()
        }
        _ => names.iter().cloned().zip(names.iter().cloned()).collect(),
    };
    let mut out = list.to_vec();
    for a in out.iter_mut() {
        rewrite(&mut a.value, &alias, &cols, t)?;
    }
    Ok(out)
}

fn rewrite(e: &mut Expr, alias: &str, cols: &AliasCols, t: &TableDef) -> SqlResult<()> {
    let mut err = None;
    let _ = ast::visit_expressions_mut(e, |x| {
        let target = match x {
            Expr::CompoundIdentifier(p)
                if p.len() == 2 && p[0].value.eq_ignore_ascii_case(alias) =>
            {
                match lookup(cols, &p[1].value) {
                    Some(c) => Some(c),
                    None => {
                        err = Some(crate::expr::err_unknown_column(
                            &format!("{}.{}", p[0].value, p[1].value),
                            "field list",
                        ));
                        return ControlFlow::Break(());
                    }
                }
            }
            Expr::Identifier(i) if i.quote_style.is_none() || i.quote_style == Some('`') => {
                if t.column(&i.value).is_some() {
                    None
                } else {
                    lookup(cols, &i.value)
                }
            }
            _ => None,
        };
        if let Some(col) = target {
            *x = values_of(&col);
        }
        ControlFlow::Continue(())
    });
    match err {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

fn lookup(cols: &AliasCols, name: &str) -> Option<String> {
    cols.iter()
        .find(|(a, _)| a.eq_ignore_ascii_case(name))
        .map(|(_, c)| c.clone())
}

/// `VALUES(`col`)` as sqlparser builds it.
fn values_of(col: &str) -> Expr {
    let mut id = Ident::new(col);
    id.quote_style = Some('`');
    let text = format!("VALUES({id})");
    let dialect = crate::dialect::QuireDialect::default();
    sqlparser::parser::Parser::new(&dialect)
        .try_with_sql(&text)
        .and_then(|mut p| p.parse_expr())
        .unwrap_or(Expr::Identifier(id))
}
