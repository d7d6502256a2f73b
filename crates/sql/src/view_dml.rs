//! # Writes through views: INSERT / UPDATE / DELETE on an updatable view
//!
//! A write whose target is a view is rewritten, before it runs, into the
//! same statement on the view's base table, as MySQL's merge algorithm
//! does:
//!
//! ```text
//!   view v AS SELECT a AS x, b + 1 AS y FROM t WHERE a > 0
//!   UPDATE v SET x = 5 WHERE y = 3   ->  UPDATE t SET a = 5 WHERE (b + 1 = 3) AND (a > 0)
//!   DELETE FROM v WHERE x = 1        ->  DELETE FROM t WHERE (a = 1) AND (a > 0)
//!   INSERT INTO v (x) VALUES (1)     ->  INSERT INTO t (a) VALUES (1)
//! ```
//!
//! Views over views resolve level by level down to the base table: each
//! level's column expressions and WHERE are rewritten in terms of the
//! level below. The WHERE clauses of the chain restrict UPDATE and DELETE
//! to the rows the view shows; WITH CHECK OPTION turns them into
//! conditions on every row written (checked by `exec.rs` through
//! `Ctx::view_check`, error 1369): LOCAL checks the view's own WHERE and
//! those of views below that have a CHECK OPTION themselves, CASCADED
//! (the default) the WHERE of every view below too.
//!
//! Updatable means what `view::mergeable` says plus one base table in
//! FROM and not ALGORITHM=TEMPTABLE (1288, or 1471 for INSERT). A column
//! assigned must be a plain column of the base table (1348); INSERT needs
//! every view column to be one, each at most once (1471). A view over a
//! join: DELETE is MySQL's 1395; UPDATE and INSERT of one of its tables
//! are not supported yet (1235).

use std::ops::ControlFlow;

use quire_engine::{CheckOption, EngineError, ViewAlgorithm, ViewDef};
use sqlparser::ast::{
    self, Assignment, AssignmentTarget, BinaryOperator, Expr, Ident, ObjectName, ObjectNamePart,
    OrderByExpr, SelectItem, SetExpr, Statement, TableFactor, VisitMut, VisitorMut,
};

use crate::ctx::{split_name, ViewCheck};
use crate::parse::Parsed;
use crate::SqlResult;

/// A write statement rewritten onto a base table.
pub(crate) struct Rewritten {
    pub stmt: Statement,
    pub order: Vec<OrderByExpr>,
    pub limit: Option<Expr>,
    pub check: ViewCheck,
}

#[derive(Clone, Copy, PartialEq)]
enum Op {
    Insert,
    Update,
    Delete,
}

impl Op {
    fn name(self) -> &'static str {
        match self {
            Op::Insert => "INSERT",
            Op::Update => "UPDATE",
            Op::Delete => "DELETE",
        }
    }
}

/// What a chain of views comes down to.
struct Resolved {
    /// `db`.`t` of the base table.
    base: ObjectName,
    /// The base table's name inside the innermost view.
    alias: String,
    /// Each view column and its expression over the base table.
    cols: Vec<(String, Expr)>,
    /// The WHERE of every view of the chain.
    filters: Vec<Expr>,
    /// The conditions rows written must meet, with the view to name.
    checks: Vec<(Expr, String)>,
}

fn not_updatable(v: &ViewDef, op: Op) -> EngineError {
    if op == Op::Insert {
        EngineError::new(
            1471,
            "HY000",
            format!(
                "The target table {} of the INSERT is not insertable-into",
                v.name
            ),
        )
    } else {
        EngineError::new(
            1288,
            "HY000",
            format!(
                "The target table {} of the {} is not updatable",
                v.name,
                op.name()
            ),
        )
    }
}

fn ident_name(e: &Expr) -> String {
    match e {
        Expr::Identifier(i) => i.value.clone(),
        Expr::CompoundIdentifier(p) => p.last().map(|i| i.value.clone()).unwrap_or_default(),
        other => other.to_string(),
    }
}

/// Resolves view `v` to its base table for `op`.
fn resolve(
    engine: &quire_engine::Engine,
    v: &ViewDef,
    op: Op,
    depth: usize,
) -> SqlResult<Resolved> {
    if depth > 64 {
        return Err(EngineError::new(
            1462,
            "HY000",
            format!("`{}`.`{}` contains view recursion", v.db, v.name),
        ));
    }
    let q =
        crate::parse::parse_query(&v.body).map_err(|_| crate::query::bind::err_invalid_view(v))?;
    if v.algorithm == ViewAlgorithm::TempTable || !crate::view::mergeable(&q) {
        return Err(not_updatable(v, op));
    }
    let SetExpr::Select(sel) = &*q.body else {
        return Err(not_updatable(v, op));
    };
    if sel.from.len() != 1 || !sel.from[0].joins.is_empty() {
        return Err(match op {
            Op::Delete => EngineError::new(
                1395,
                "HY000",
                format!("Can not delete from join view '{}.{}'", v.db, v.name),
            ),
            _ => EngineError::not_supported(format!("{} through a join view", op.name())),
        });
    }
    let TableFactor::Table { name, alias, .. } = &sel.from[0].relation else {
        return Err(not_updatable(v, op));
    };
    let (d, t) = split_name(name)?;
    let d = d.unwrap_or_else(|| v.db.clone());
    let here = alias
        .as_ref()
        .map(|a| a.name.value.clone())
        .unwrap_or_else(|| t.clone());
    let inner = match engine.view(&d, &t) {
        Some(iv) => Some(resolve(engine, &iv, op, depth + 1)?),
        None => {
            engine
                .table(&d, &t)
                .map_err(|_| crate::query::bind::err_invalid_view(v))?;
            None
        }
    };
    // This level's columns, over what its FROM names.
    let mut cols: Vec<(String, Expr)> = Vec::new();
    for item in &sel.projection {
        match item {
            SelectItem::ExprWithAlias { expr, alias } => {
                cols.push((alias.value.clone(), expr.clone()))
            }
            SelectItem::UnnamedExpr(e) => cols.push((ident_name(e), e.clone())),
            SelectItem::ExprWithAliases { .. } => return Err(not_updatable(v, op)),
            SelectItem::Wildcard(_) | SelectItem::QualifiedWildcard(..) => match &inner {
                Some(r) => {
                    for (n, _) in &r.cols {
                        cols.push((n.clone(), Expr::Identifier(Ident::new(n))));
                    }
                }
                None => {
                    let def = engine.table(&d, &t)?;
                    for c in &def.columns {
                        cols.push((c.name.clone(), Expr::Identifier(Ident::new(&c.name))));
                    }
                }
            },
        }
    }
    if !v.columns.is_empty() {
        if v.columns.len() != cols.len() {
            return Err(crate::query::bind::err_invalid_view(v));
        }
        for (c, n) in cols.iter_mut().zip(&v.columns) {
            c.0 = n.clone();
        }
    }
    let mut filter = sel.selection.clone();
    let me = v.qualified();
    let Some(r) = inner else {
        let filters: Vec<Expr> = filter.into_iter().collect();
        let checks = if v.check == CheckOption::None {
            Vec::new()
        } else {
            filters.iter().map(|f| (f.clone(), me.clone())).collect()
        };
        return Ok(Resolved {
            base: ObjectName(vec![
                ObjectNamePart::Identifier(Ident::with_quote('`', &d)),
                ObjectNamePart::Identifier(Ident::with_quote('`', &t)),
            ]),
            alias: here,
            cols,
            filters,
            checks,
        });
    };
    // Over another view: rewrite this level in terms of the level below.
    let quals = [here.clone(), t.clone()];
    for (_, e) in cols.iter_mut() {
        substitute(e, &quals, &r.cols, &r.alias, None)?;
    }
    if let Some(f) = filter.as_mut() {
        substitute(f, &quals, &r.cols, &r.alias, None)?;
    }
    let mut filters = r.filters.clone();
    filters.extend(filter.clone());
    let checks = match v.check {
        CheckOption::None => r.checks,
        CheckOption::Local => {
            let mut c = r.checks;
            c.extend(filter.map(|f| (f, me.clone())));
            c
        }
        CheckOption::Cascaded => filters.iter().map(|f| (f.clone(), me.clone())).collect(),
    };
    Ok(Resolved {
        base: r.base,
        alias: r.alias,
        cols,
        filters,
        checks,
    })
}

/// Replaces references to view columns (`c`, or `q.c` for a qualifier
/// `q` in `quals`) by their expressions over the base table known as
/// `alias`. Unqualified names are replaced outside subqueries only; a
/// name that is no view column is MySQL's 1054 (the base table's other
/// columns are not visible through the view) when `clause` is given.
fn substitute(
    e: &mut Expr,
    quals: &[String],
    cols: &[(String, Expr)],
    alias: &str,
    clause: Option<&'static str>,
) -> SqlResult<()> {
    let mut s = Subst {
        quals,
        cols,
        alias,
        clause,
        depth: 0,
        err: None,
    };
    let _ = e.visit(&mut s);
    match s.err {
        Some(err) => Err(err),
        None => Ok(()),
    }
}

struct Subst<'a> {
    quals: &'a [String],
    cols: &'a [(String, Expr)],
    alias: &'a str,
    clause: Option<&'static str>,
    depth: usize,
    err: Option<EngineError>,
}

impl Subst<'_> {
    fn column(&self, name: &str) -> Option<Expr> {
        let (_, e) = self
            .cols
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))?;
        Some(match e {
            // A plain column stays a name: bare outside subqueries,
            // qualified with the base table's name inside them.
            Expr::Identifier(_) | Expr::CompoundIdentifier(_) if self.depth == 0 => {
                Expr::Identifier(Ident::new(ident_name(e)))
            }
            Expr::Identifier(_) | Expr::CompoundIdentifier(_) => {
                Expr::CompoundIdentifier(vec![Ident::new(self.alias), Ident::new(ident_name(e))])
            }
            other => Expr::Nested(Box::new(other.clone())),
        })
    }
    fn unknown(&mut self, name: &str) {
        if let Some(clause) = self.clause {
            self.err
                .get_or_insert_with(|| crate::expr::err_unknown_column(name, clause));
        }
    }
}

impl VisitorMut for Subst<'_> {
    type Break = ();
    fn pre_visit_query(&mut self, _: &mut ast::Query) -> ControlFlow<()> {
        self.depth += 1;
        ControlFlow::Continue(())
    }
    fn post_visit_query(&mut self, _: &mut ast::Query) -> ControlFlow<()> {
        self.depth -= 1;
        ControlFlow::Continue(())
    }
    fn post_visit_expr(&mut self, e: &mut Expr) -> ControlFlow<()> {
        match e {
            Expr::Identifier(i)
                if self.depth == 0 && i.quote_style.is_none() && i.value.starts_with('@') => {}
            Expr::Identifier(i) if self.depth == 0 => {
                let name = i.value.clone();
                match self.column(&name) {
                    Some(x) => *e = x,
                    None => self.unknown(&name),
                }
            }
            Expr::CompoundIdentifier(p)
                if p.len() == 2
                    && self
                        .quals
                        .iter()
                        .any(|q| q.eq_ignore_ascii_case(&p[0].value)) =>
            {
                let name = p[1].value.clone();
                match self.column(&name) {
                    Some(x) => *e = x,
                    None => self.unknown(&format!("{}.{}", p[0].value, name)),
                }
            }
            _ => {}
        }
        ControlFlow::Continue(())
    }
}

fn and(a: Expr, b: Expr) -> Expr {
    Expr::BinaryOp {
        left: Box::new(Expr::Nested(Box::new(a))),
        op: BinaryOperator::And,
        right: Box::new(Expr::Nested(Box::new(b))),
    }
}

/// The base column a view column names (1348 when it is an expression).
fn base_column(r: &Resolved, view_col: &str, op: Op, v: &ViewDef) -> SqlResult<String> {
    let Some((_, e)) = r
        .cols
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(view_col))
    else {
        return Err(crate::expr::err_unknown_column(view_col, "field list"));
    };
    match e {
        Expr::Identifier(_) | Expr::CompoundIdentifier(_) => Ok(ident_name(e)),
        _ if op == Op::Insert => Err(not_updatable(v, op)),
        _ => Err(EngineError::new(
            1348,
            "HY000",
            format!("Column '{view_col}' is not updatable"),
        )),
    }
}

fn target_of(a: &Assignment) -> SqlResult<String> {
    match &a.target {
        AssignmentTarget::ColumnName(n) => Ok(n
            .0
            .last()
            .and_then(|p| p.as_ident())
            .map(|i| i.value.clone())
            .unwrap_or_default()),
        AssignmentTarget::Tuple(_) => Err(EngineError::not_supported("tuple assignment")),
    }
}

/// Rewrites SET assignments onto base columns.
fn assignments(
    list: &mut [Assignment],
    r: &Resolved,
    quals: &[String],
    op: Op,
    v: &ViewDef,
) -> SqlResult<()> {
    for a in list.iter_mut() {
        let col = base_column(r, &target_of(a)?, op, v)?;
        a.target = AssignmentTarget::ColumnName(ObjectName(vec![ObjectNamePart::Identifier(
            Ident::new(col),
        )]));
        substitute(&mut a.value, quals, &r.cols, &r.alias, Some("field list"))?;
    }
    Ok(())
}

/// Points a FROM item at the base table under the innermost view's name.
fn retarget(tf: &mut TableFactor, r: &Resolved) {
    if let TableFactor::Table { name, alias, .. } = tf {
        *name = r.base.clone();
        *alias = Some(ast::TableAlias {
            explicit: true,
            name: Ident::with_quote('`', &r.alias),
            columns: Vec::new(),
            at: None,
        });
    }
}

fn restrict(sel: Option<Expr>, r: &Resolved) -> Option<Expr> {
    r.filters.iter().cloned().fold(sel, |acc, f| match acc {
        None => Some(f),
        Some(a) => Some(and(a, f)),
    })
}

fn view_of(
    engine: &quire_engine::Engine,
    db: Option<&str>,
    n: &ObjectName,
) -> SqlResult<Option<std::sync::Arc<ViewDef>>> {
    let (d, t) = split_name(n)?;
    let Some(d) = d.or_else(|| db.map(str::to_string)) else {
        return Ok(None);
    };
    Ok(engine.view(&d, &t))
}

/// The statement `stmt` rewritten onto a base table when its target is
/// a view; `None` otherwise (one catalog lookup).
pub(crate) fn rewrite(
    engine: &quire_engine::Engine,
    db: Option<&str>,
    stmt: &Statement,
    p: &Parsed,
) -> SqlResult<Option<Rewritten>> {
    match stmt {
        Statement::Update(u) => {
            if !u.table.joins.is_empty() {
                return Ok(None);
            }
            let TableFactor::Table { name, alias, .. } = &u.table.relation else {
                return Ok(None);
            };
            let Some(v) = view_of(engine, db, name)? else {
                return Ok(None);
            };
            let r = resolve(engine, &v, Op::Update, 0)?;
            let quals = quals_of(name, alias.as_ref());
            let mut u = u.clone();
            retarget(&mut u.table.relation, &r);
            assignments(&mut u.assignments, &r, &quals, Op::Update, &v)?;
            if let Some(w) = u.selection.as_mut() {
                substitute(w, &quals, &r.cols, &r.alias, Some("where clause"))?;
            }
            u.selection = restrict(u.selection.take(), &r);
            let mut order = p.update_order.clone();
            for o in order.iter_mut() {
                substitute(&mut o.expr, &quals, &r.cols, &r.alias, Some("order clause"))?;
            }
            Ok(Some(Rewritten {
                stmt: Statement::Update(u),
                order,
                limit: p.update_limit.clone(),
                check: ViewCheck {
                    alias: r.alias.clone(),
                    conds: r.checks,
                },
            }))
        }
        Statement::Delete(d) => {
            if !d.tables.is_empty() || d.using.is_some() {
                return Ok(None);
            }
            let from = match &d.from {
                ast::FromTable::WithFromKeyword(f) | ast::FromTable::WithoutKeyword(f) => f,
            };
            let [twj] = from.as_slice() else {
                return Ok(None);
            };
            let TableFactor::Table { name, alias, .. } = &twj.relation else {
                return Ok(None);
            };
            if !twj.joins.is_empty() {
                return Ok(None);
            }
            let Some(v) = view_of(engine, db, name)? else {
                return Ok(None);
            };
            let r = resolve(engine, &v, Op::Delete, 0)?;
            let quals = quals_of(name, alias.as_ref());
            let mut d = d.clone();
            let (ast::FromTable::WithFromKeyword(f) | ast::FromTable::WithoutKeyword(f)) =
                &mut d.from;
            retarget(&mut f[0].relation, &r);
            if let Some(w) = d.selection.as_mut() {
                substitute(w, &quals, &r.cols, &r.alias, Some("where clause"))?;
            }
            d.selection = restrict(d.selection.take(), &r);
            for o in d.order_by.iter_mut() {
                substitute(&mut o.expr, &quals, &r.cols, &r.alias, Some("order clause"))?;
            }
            Ok(Some(Rewritten {
                stmt: Statement::Delete(d),
                order: Vec::new(),
                limit: None,
                check: ViewCheck {
                    alias: r.alias.clone(),
                    conds: Vec::new(),
                },
            }))
        }
        Statement::Insert(ins) => {
            let ast::TableObject::TableName(name) = &ins.table else {
                return Ok(None);
            };
            let Some(v) = view_of(engine, db, name)? else {
                return Ok(None);
            };
            let r = resolve(engine, &v, Op::Insert, 0)?;
            insert(ins, name, &v, r).map(Some)
        }
        _ => Ok(None),
    }
}

fn quals_of(name: &ObjectName, alias: Option<&ast::TableAlias>) -> Vec<String> {
    match alias {
        Some(a) => vec![a.name.value.clone()],
        None => name
            .0
            .last()
            .and_then(|p| p.as_ident())
            .map(|i| vec![i.value.clone()])
            .unwrap_or_default(),
    }
}

/// INSERT through a view: every view column must be a distinct plain
/// column of the base table (MySQL's insertable-into rule).
fn insert(ins: &ast::Insert, name: &ObjectName, v: &ViewDef, r: Resolved) -> SqlResult<Rewritten> {
    let mut seen: Vec<String> = Vec::new();
    for (n, _) in &r.cols {
        let c = base_column(&r, n, Op::Insert, v)?;
        if seen.iter().any(|s| s.eq_ignore_ascii_case(&c)) {
            return Err(not_updatable(v, Op::Insert));
        }
        seen.push(c);
    }
    let mut ins = ins.clone();
    let listed: Vec<String> = if ins.columns.is_empty() && ins.assignments.is_empty() {
        r.cols.iter().map(|(n, _)| n.clone()).collect()
    } else {
        ins.columns
            .iter()
            .map(|c| {
                c.0.last()
                    .and_then(|p| p.as_ident())
                    .map(|i| i.value.clone())
                    .unwrap_or_default()
            })
            .collect()
    };
    if ins.assignments.is_empty() {
        ins.columns = listed
            .iter()
            .map(|n| {
                base_column(&r, n, Op::Insert, v)
                    .map(|c| ObjectName(vec![ObjectNamePart::Identifier(Ident::new(c))]))
            })
            .collect::<SqlResult<_>>()?;
    }
    let quals = quals_of(name, None);
    assignments(&mut ins.assignments, &r, &quals, Op::Insert, v)?;
    if let Some(ast::OnInsert::DuplicateKeyUpdate(list)) = ins.on.as_mut() {
        assignments(list, &r, &quals, Op::Update, v)?;
    }
    ins.table = ast::TableObject::TableName(r.base.clone());
    Ok(Rewritten {
        stmt: Statement::Insert(ins),
        order: Vec::new(),
        limit: None,
        check: ViewCheck {
            alias: r.alias.clone(),
            conds: r.checks,
        },
    })
}
