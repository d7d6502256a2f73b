//! # Bind: from the parser's tree to a logical plan
//!
//! The binder resolves every name of a query against its scopes and
//! compiles every expression (`expr::Compiler`), producing a [`Node`] tree
//! (`plan.rs`) with nothing left to look up at run time:
//!
//! ```text
//!   WITH ...                  -> CTE definitions, bound at each reference
//!   SELECT list               -> Project (types as MySQL reports them)
//!   FROM a JOIN b ON ...      -> Join { sources, conjuncts }
//!   WHERE / ON                -> conjuncts (AND split)
//!   GROUP BY / aggregates     -> Aggregate
//!   HAVING                    -> Project.having
//!   DISTINCT                  -> Distinct
//!   ORDER BY                  -> hidden columns after the select list + Sort
//!   LIMIT / OFFSET            -> Limit (drops the hidden columns)
//!   UNION / INTERSECT / EXCEPT-> SetOp
//!   (SELECT ...) in an expr   -> Subplan, read through E::Subquery
//! ```
//!
//! Scopes: a block sees its own FROM columns first, then the columns of
//! each enclosing block, innermost first (`expr::OuterScope`); a reference
//! to an enclosing block's column is a correlated reference
//! (`E::Outer`). A derived table sees the enclosing blocks (and, when it
//! reads them, runs again per outer row); a LATERAL one also sees the FROM
//! columns before it as its innermost enclosing block
//! (`SourceKind::Lateral`, run again for each row of those sources).

use std::ops::Range;
use std::sync::Arc;

use quire_engine::{ColumnType, EngineError, Value, ViewDef};
use sqlparser::ast::{
    self, Expr, GroupByExpr, JoinConstraint, JoinOperator, LimitClause, OrderByKind,
    OrderByOptions, OrderBySort, Query, SelectItem, SetExpr, SetOperator, SetQuantifier,
    TableFactor, TableWithJoins,
};

use crate::ctx::{split_name, Ctx};
use crate::expr::{
    infer, key_at_result_scale, nullable, order_key, weigh_key, AggSpec, BoundSub, ColInfo,
    Compiler, OuterScope, Row, SubKind, SubqueryBinder, E,
};
use crate::query::fullgroup;
use crate::query::key::KeyOf;
use crate::query::locking::{self, Locking};
use crate::query::plan::{
    exposed_cols, Join, Node, ReadLock, SetOpKind, Source, SourceKind, Subplan,
};
use crate::{ColumnMeta, SqlResult};

/// A bound query: its plan and result columns.
pub struct Bound {
    pub node: Node,
    pub columns: Vec<ColumnMeta>,
    /// Positions in the outer scope it was bound with that it reads.
    pub refs: Vec<usize>,
}

/// A CTE visible to the query being bound.
#[derive(Clone)]
struct CteDef {
    name: String,
    query: Query,
    column_names: Vec<String>,
    recursive: bool,
    /// Set while binding its own recursive member: references read the
    /// working rows of this id with these columns.
    working: Option<(usize, Vec<ColumnMeta>)>,
}

/// Binds one statement (and its subqueries).
pub struct Binder<'a> {
    cx: &'a Ctx<'a>,
    pub subplans: Vec<Subplan>,
    ctes: Vec<CteDef>,
    next_working: usize,
    /// True when some block has a LIMIT (locking reads then fetch one row
    /// at a time, so no row past the limit is locked).
    pub any_limit: bool,
    /// Base tables read outside derived tables and CTEs (db, name): a
    /// write statement's subqueries may not read its target (1093).
    pub base_tables: Vec<(String, String)>,
    /// How many derived tables / CTE bodies are being bound around now.
    materialised_depth: usize,
    /// Window functions of the select list being compiled (None: not
    /// allowed in the clause being compiled).
    windows: Option<Vec<crate::expr::WinSpec>>,
    /// Views being expanded around now, (db, name) lower-cased: a view
    /// met again inside itself is MySQL's 1462.
    views_open: Vec<(String, String)>,
    /// Locking clauses applied source by source (`locking.rs`), from
    /// `bind_query` to the block's `bind_select`.
    pending_locks: Option<Vec<locking::Clause>>,
}

/// How deep views may nest inside one another.
const MAX_VIEW_DEPTH: usize = 64;

/// MySQL 1356: a view whose text no longer binds (a table, column or
/// function it names is gone).
pub fn err_invalid_view(v: &ViewDef) -> EngineError {
    EngineError::new(
        1356,
        "HY000",
        format!(
            "View '{}.{}' references invalid table(s) or column(s) or function(s) or definer/invoker of view lack rights to use them",
            v.db, v.name
        ),
    )
}

fn err_derived_alias() -> EngineError {
    EngineError::new(1248, "42000", "Every derived table must have its own alias")
}

pub fn conjuncts(e: E, out: &mut Vec<E>) {
    crate::stack::grow(|| match e {
        E::And(a, b) => {
            conjuncts(*a, out);
            conjuncts(*b, out);
        }
        other => out.push(other),
    })
}

pub fn table_cols(t: &quire_engine::TableDef, alias: &str) -> Vec<ColInfo> {
    t.columns
        .iter()
        .map(|c| ColInfo {
            table: alias.to_string(),
            org_table: t.name.clone(),
            db: t.db.clone(),
            name: c.name.clone(),
            org_name: c.name.clone(),
            ty: c.ty.clone(),
            nullable: c.nullable,
            hidden: false,
        })
        .collect()
}

pub fn meta_of_col(c: &ColInfo, name: &str) -> ColumnMeta {
    ColumnMeta {
        name: name.to_string(),
        org_name: c.org_name.clone(),
        table: c.table.clone(),
        org_table: c.org_table.clone(),
        db: c.db.clone(),
        ty: c.ty.clone(),
        nullable: c.nullable,
    }
}

fn expr_name(e: &Expr) -> String {
    match e {
        Expr::Identifier(i) => i.value.clone(),
        Expr::CompoundIdentifier(p) if !p[0].value.starts_with("@@") => {
            p.last().map(|i| i.value.clone()).unwrap_or_default()
        }
        other => other.to_string(),
    }
}

/// Whether an ORDER BY item sorts descending. PostgreSQL's `USING op` is
/// not MySQL syntax.
pub fn is_desc(o: &OrderByOptions) -> SqlResult<bool> {
    match &o.sort {
        None | Some(OrderBySort::Asc) => Ok(false),
        Some(OrderBySort::Desc) => Ok(true),
        Some(OrderBySort::Using(_)) => Err(crate::parse::syntax_error("USING")),
    }
}

/// `LIMIT n [OFFSET m]` / `LIMIT m, n` of a query: (limit, offset).
pub fn limit_offset(q: &Query) -> SqlResult<(Option<&Expr>, Option<&Expr>)> {
    match &q.limit_clause {
        None => Ok((None, None)),
        Some(LimitClause::OffsetCommaLimit { offset, limit }) => Ok((Some(limit), Some(offset))),
        Some(LimitClause::LimitOffset {
            limit,
            offset,
            limit_by,
        }) => {
            if !limit_by.is_empty() {
                // ClickHouse's LIMIT ... BY; not MySQL.
                return Err(crate::parse::syntax_error("BY"));
            }
            Ok((limit.as_ref(), offset.as_ref().map(|o| &o.value)))
        }
    }
}

/// A LIMIT or OFFSET value. A `?` is only known at execution: describing
/// a prepared statement (its columns) takes 0. A bound parameter may come
/// as an integer, a string of digits or an integral double (drivers such
/// as node's mysql2 send numbers as doubles); anything else is 1210.
pub fn eval_limit(cx: &Ctx, e: &Expr) -> SqlResult<usize> {
    let bad = || EngineError::new(1210, "HY000", "Incorrect arguments to LIMIT");
    let is_param = matches!(e, Expr::Value(v) if matches!(v.value, ast::Value::Placeholder(_)));
    if is_param && cx.describe {
        return Ok(0);
    }
    let mut c = cx.compiler(&[], None, "limit clause");
    let v = c.compile(e)?.eval(&Row::new(&[], &[]))?;
    let n: u64 = match v {
        Value::Int(i) => u64::try_from(i).map_err(|_| bad())?,
        Value::UInt(u) => u,
        Value::Bytes(b) if is_param => std::str::from_utf8(&b)
            .ok()
            .and_then(|t| t.trim().parse::<u64>().ok())
            .ok_or_else(bad)?,
        Value::Double(d) if is_param && d >= 0.0 && d.fract() == 0.0 && d < 1.8e19 => d as u64,
        _ => return Err(bad()),
    };
    Ok(usize::try_from(n).unwrap_or(usize::MAX))
}

/// The FROM clause while it is being bound.
#[derive(Default)]
struct From {
    cols: Vec<ColInfo>,
    sources: Vec<Source>,
    /// ON conditions of inner joins (join the WHERE conjuncts), each
    /// with the block columns it may name.
    inner_on: Vec<(Expr, Range<usize>)>,
    /// ON conditions of outer joins, per source index.
    outer_on: Vec<(usize, Expr, Range<usize>)>,
    /// Where the current comma-separated FROM item's columns start: the
    /// comma binds looser than JOIN, so an ON sees no column before it.
    scope_start: usize,
    /// The index of the current FROM item's first source (the left
    /// operand a RIGHT JOIN null-extends).
    scope_first: usize,
    /// The columns `SELECT *` lists, in its order: every column of every
    /// source, except that a USING / NATURAL join lists the coalesced
    /// common columns first and leaves their hidden twins out.
    star: Vec<usize>,
    /// The `*` order of the nested block about to be pushed (relative to
    /// its first column), set by `nested_block`.
    pending_star: Option<Vec<usize>>,
    /// Table names inside nested join blocks (for 1066).
    nested_names: Vec<String>,
    /// The enclosing blocks' columns (what a LATERAL derived table sees
    /// after this FROM's own preceding columns).
    outer: OuterScope,
    /// Positions in `outer` that LATERAL derived tables read (the
    /// block's own correlated references).
    refs: Vec<usize>,
    /// Set while binding the right operand of a RIGHT JOIN: a LATERAL
    /// derived table there may not read the left operand.
    lateral_blind: bool,
}

impl From {
    /// Appends a source whose columns are `cols` (placed after the FROM's
    /// columns so far); returns its index.
    fn push_source(
        &mut self,
        name: String,
        kind: SourceKind,
        cols: Vec<ColInfo>,
        after: Vec<usize>,
    ) -> usize {
        let index = self.sources.len();
        let (offset, width) = (self.cols.len(), cols.len());
        self.cols.extend(cols);
        match self.pending_star.take() {
            Some(rel) => self.star.extend(rel.into_iter().map(|p| offset + p)),
            None => self.star.extend(offset..offset + width),
        }
        self.sources.push(Source {
            name,
            kind,
            offset,
            width,
            outer_on: None,
            after,
            lock: None,
            key_slot: None,
        });
        index
    }

    /// A USING / NATURAL join of the current item's columns before
    /// `right_start` with those from it on: each common pair `(l, r)`
    /// becomes one column, the left one (the right one for a RIGHT JOIN,
    /// whose right operand is never NULL-extended) standing for
    /// `COALESCE(l, r)` and the other hidden. `SELECT *` then lists the
    /// coalesced columns first, then the first operand's others, then the
    /// second's (the right operand is the first for RIGHT JOIN), as MySQL.
    fn coalesce(&mut self, pairs: &[(usize, usize)], right_start: usize, right_join: bool) {
        let cut = self
            .star
            .iter()
            .position(|&p| p >= self.scope_start)
            .unwrap_or(self.star.len());
        let item: Vec<usize> = self.star.split_off(cut);
        let (left, right): (Vec<usize>, Vec<usize>) =
            item.into_iter().partition(|&p| p < right_start);
        let (first, second, keep): (&[usize], &[usize], Vec<usize>) = if right_join {
            (&right, &left, pairs.iter().map(|p| p.1).collect())
        } else {
            (&left, &right, pairs.iter().map(|p| p.0).collect())
        };
        let common: Vec<usize> = pairs.iter().flat_map(|p| [p.0, p.1]).collect();
        // Kept columns are visible, so each is in the item's `*` list.
        self.star
            .extend(first.iter().copied().filter(|p| keep.contains(p)));
        self.star
            .extend(first.iter().copied().filter(|p| !common.contains(p)));
        self.star
            .extend(second.iter().copied().filter(|p| !common.contains(p)));
        for &(l, r) in pairs {
            let hide = if right_join { l } else { r };
            if let Some(c) = self.cols.get_mut(hide) {
                c.hidden = true;
            }
        }
    }
}

/// The select-list items of a block, as compiled.
struct SelectList {
    outs: Vec<(E, ColumnMeta)>,
    aliases: Vec<String>,
}

impl SubqueryBinder for Binder<'_> {
    fn bind_subquery(
        &mut self,
        q: &Query,
        outer: &OuterScope,
        kind: SubKind,
    ) -> SqlResult<BoundSub> {
        let b = self.bind_query(q, outer, None)?;
        let id = self.subplans.len();
        self.subplans.push(Subplan {
            node: b.node,
            correlated: !b.refs.is_empty(),
            kind,
            lookup: None,
        });
        Ok(BoundSub {
            id,
            columns: b.columns.iter().map(|c| c.ty.clone()).collect(),
            refs: b.refs,
        })
    }
}

impl<'a> Binder<'a> {
    pub fn new(cx: &'a Ctx<'a>) -> Binder<'a> {
        Binder {
            cx,
            subplans: Vec::new(),
            ctes: Vec::new(),
            next_working: 0,
            any_limit: false,
            base_tables: Vec::new(),
            materialised_depth: 0,
            windows: None,
            views_open: Vec::new(),
            pending_locks: None,
        }
    }

    /// Compiles one expression of a block, collecting outer references.
    #[allow(clippy::too_many_arguments)]
    fn compile(
        &mut self,
        e: &Expr,
        cols: &[ColInfo],
        outer: &OuterScope,
        aggs: Option<&mut Vec<AggSpec>>,
        aliases: Option<(&[String], &[E])>,
        clause: &'static str,
        refs: &mut Vec<usize>,
    ) -> SqlResult<E> {
        let cx = self.cx;
        let allowed = matches!(clause, "field list" | "order clause");
        let mut wins = if allowed { self.windows.take() } else { None };
        let mut c = Compiler {
            cols,
            params: cx.params,
            env: cx.env,
            aggs,
            clause,
            now: cx.now,
            values_offset: None,
            aliases,
            outer,
            binder: Some(self),
            outer_refs: Vec::new(),
            windows: wins.as_mut(),
        };
        let out = c.compile(e);
        let refs_seen = std::mem::take(&mut c.outer_refs);
        drop(c);
        if allowed {
            self.windows = wins;
        }
        let out = out?;
        for r in refs_seen {
            if !refs.contains(&r) {
                refs.push(r);
            }
        }
        Ok(out)
    }

    /// Binds a whole query (WITH, body, ORDER BY, LIMIT, locking clause).
    pub fn bind_query(
        &mut self,
        q: &Query,
        outer: &OuterScope,
        lock: Option<ReadLock>,
    ) -> SqlResult<Bound> {
        crate::stack::check()?;
        if q.fetch.is_some() {
            return Err(EngineError::not_supported("FETCH"));
        }
        let (lock, per_source) = match locking::clauses(q)? {
            Locking::Inherit => (lock, None),
            Locking::Block(l) => (Some(l), None),
            Locking::PerSource(c) => (None, Some(c)),
        };
        let saved = self.ctes.len();
        if let Some(w) = &q.with {
            for cte in &w.cte_tables {
                let name = cte.alias.name.value.clone();
                if self.ctes[saved..]
                    .iter()
                    .any(|c| c.name.eq_ignore_ascii_case(&name))
                {
                    return Err(EngineError::new(
                        1066,
                        "42000",
                        format!("Not unique table/alias: '{name}'"),
                    ));
                }
                self.ctes.push(CteDef {
                    name,
                    query: (*cte.query).clone(),
                    column_names: cte
                        .alias
                        .columns
                        .iter()
                        .map(|c| c.name.value.clone())
                        .collect(),
                    recursive: w.recursive,
                    working: None,
                });
            }
        }
        if per_source.is_some() && !matches!(&*q.body, SetExpr::Select(_)) {
            return Err(EngineError::not_supported(
                "FOR UPDATE/SHARE OF around a set operation or parenthesized query",
            ));
        }
        self.pending_locks = per_source;
        let r = self.bind_query_body(q, outer, lock);
        self.ctes.truncate(saved);
        r
    }

    fn bind_query_body(
        &mut self,
        q: &Query,
        outer: &OuterScope,
        lock: Option<ReadLock>,
    ) -> SqlResult<Bound> {
        let (limit, offset) = limit_offset(q)?;
        let limit = match limit {
            Some(l) => Some(eval_limit(self.cx, l)?),
            None => None,
        };
        let offset = match offset {
            Some(o) => eval_limit(self.cx, o)?,
            None => 0,
        };
        if limit.is_some() {
            self.any_limit = true;
        }
        let order: &[ast::OrderByExpr] = match &q.order_by {
            None => &[],
            Some(ob) => match &ob.kind {
                OrderByKind::Expressions(list) => list,
                OrderByKind::All(_) => return Err(EngineError::not_supported("ORDER BY ALL")),
            },
        };
        if let SetExpr::Select(s) = &*q.body {
            return self.bind_select(s, order, limit, offset, outer, lock);
        }
        if lock.is_some() && !matches!(&*q.body, SetExpr::Query(_)) {
            // MySQL allows FOR UPDATE on a UNION's blocks, not around it.
            if !q.locks.is_empty() {
                return Err(EngineError::not_supported(
                    "FOR UPDATE/SHARE on a set operation",
                ));
            }
        }
        let inner = self.bind_set_expr(&q.body, outer, lock)?;
        if order.is_empty() && limit.is_none() && offset == 0 {
            return Ok(inner);
        }
        self.order_limit_over(inner, order, limit, offset, outer)
    }

    /// ORDER BY / LIMIT over a set operation or a parenthesized query: the
    /// keys are expressions over its result columns.
    fn order_limit_over(
        &mut self,
        inner: Bound,
        order: &[ast::OrderByExpr],
        limit: Option<usize>,
        offset: usize,
        outer: &OuterScope,
    ) -> SqlResult<Bound> {
        let cols = exposed_cols(&inner.columns, "");
        let n = cols.len();
        let mut refs = inner.refs;
        let mut exprs: Vec<E> = (0..n).map(E::Col).collect();
        let mut keys = Vec::new();
        for o in order {
            let e = match &o.expr {
                Expr::Value(v) if matches!(v.value, ast::Value::Number(..)) => {
                    let ast::Value::Number(s, _) = &v.value else {
                        return Err(EngineError::internal("order position"));
                    };
                    let k: usize = s.parse().unwrap_or(0);
                    if k == 0 || k > n {
                        return Err(crate::expr::err_unknown_column(s, "order clause"));
                    }
                    E::Col(k - 1)
                }
                other => {
                    self.compile(other, &cols, outer, None, None, "order clause", &mut refs)?
                }
            };
            keys.push((exprs.len(), is_desc(&o.options)?));
            let conn = self.cx.env.connection_collation();
            exprs.push(order_key(e, &cols, &[], conn));
        }
        let types = inner.columns.iter().map(|c| c.ty.clone()).collect();
        let mut node = Node::Project {
            input: Box::new(inner.node),
            exprs,
            having: None,
            agg_width: None,
            types,
            wins: 0,
        };
        if !keys.is_empty() {
            node = Node::Sort {
                input: Box::new(node),
                keys,
                top: limit.map(|l| l.saturating_add(offset)),
            };
        }
        node = Node::Limit {
            input: Box::new(node),
            offset,
            limit,
            width: n,
        };
        Ok(Bound {
            node,
            columns: inner.columns,
            refs,
        })
    }

    fn bind_set_expr(
        &mut self,
        body: &SetExpr,
        outer: &OuterScope,
        lock: Option<ReadLock>,
    ) -> SqlResult<Bound> {
        crate::stack::check()?;
        match body {
            SetExpr::Select(s) => self.bind_select(s, &[], None, 0, outer, lock),
            SetExpr::Query(q) => self.bind_query(q, outer, lock),
            SetExpr::SetOperation {
                left,
                op,
                set_quantifier,
                right,
            } => {
                let kind = match op {
                    SetOperator::Union => SetOpKind::Union,
                    SetOperator::Intersect => SetOpKind::Intersect,
                    SetOperator::Except => SetOpKind::Except,
                    SetOperator::Minus => return Err(crate::parse::syntax_error("MINUS")),
                };
                let all = match set_quantifier {
                    SetQuantifier::All => true,
                    SetQuantifier::Distinct | SetQuantifier::None => false,
                    other => return Err(crate::parse::syntax_error(&other.to_string())),
                };
                let l = self.bind_set_expr(left, outer, lock)?;
                let r = self.bind_set_expr(right, outer, lock)?;
                set_op(kind, all, l, r)
            }
            SetExpr::Values(v) => self.bind_values(v, outer),
            _ => Err(EngineError::not_supported("this query form")),
        }
    }

    /// `VALUES ROW(1, 2), ROW(3, 4)` as a query: columns column_0, ...
    fn bind_values(&mut self, v: &ast::Values, outer: &OuterScope) -> SqlResult<Bound> {
        let mut rows = Vec::new();
        let mut refs = Vec::new();
        let mut types: Vec<ColumnType> = Vec::new();
        for r in &v.rows {
            let mut out = Vec::new();
            for e in &r.content {
                let ce = self.compile(e, &[], outer, None, None, "field list", &mut refs)?;
                if !refs.is_empty() || ce.has_subquery() {
                    return Err(EngineError::not_supported("VALUES rows reading columns"));
                }
                out.push(ce.eval(&Row::new(&[], &[]))?);
            }
            if !rows.is_empty() && out.len() != types.len() {
                return Err(EngineError::new(
                    1222,
                    "21000",
                    "The used SELECT statements have a different number of columns",
                ));
            }
            if types.is_empty() {
                types = out
                    .iter()
                    .map(|v| infer(&E::Lit(v.clone()), &[], &[]))
                    .collect();
            }
            rows.push(out);
        }
        let columns = types
            .iter()
            .enumerate()
            .map(|(i, ty)| ColumnMeta {
                name: format!("column_{i}"),
                org_name: String::new(),
                table: String::new(),
                org_table: String::new(),
                db: String::new(),
                ty: ty.clone(),
                nullable: true,
            })
            .collect();
        Ok(Bound {
            node: Node::Values(Arc::new(rows)),
            columns,
            refs,
        })
    }

    // ------------------------------------------------------------- FROM

    fn add_factor(
        &mut self,
        f: &TableFactor,
        from: &mut From,
        lock: Option<ReadLock>,
    ) -> SqlResult<usize> {
        crate::stack::check()?;
        let index = from.sources.len();
        // A LATERAL derived table is joined after every source before it.
        let mut after = Vec::new();
        let (name, kind, cols) = match f {
            TableFactor::Table {
                name,
                alias,
                args,
                index_directives,
                partitions,
                sample,
                ..
            } => {
                if args.is_some() {
                    return Err(EngineError::not_supported("table functions"));
                }
                if !partitions.is_empty() {
                    return Err(EngineError::new(
                        1747,
                        "HY000",
                        "PARTITION () clause on non partitioned table",
                    ));
                }
                if sample.is_some() {
                    return Err(crate::parse::syntax_error("TABLESAMPLE"));
                }
                let (mut db, tname) = split_name(name)?;
                // With information_schema the current database, an
                // unqualified name is one of its tables.
                if db.is_none()
                    && self
                        .cx
                        .db
                        .is_some_and(|d| d.eq_ignore_ascii_case("information_schema"))
                {
                    db = Some("information_schema".to_string());
                }
                let alias_name = alias
                    .as_ref()
                    .map(|a| a.name.value.clone())
                    .unwrap_or_else(|| tname.clone());
                if db.is_none() {
                    if let Some(b) = self.cte_ref(&tname, &alias_name)? {
                        b
                    } else if let Some(v) = self.view_named(db.as_deref(), &tname) {
                        self.view_ref(&v, &alias_name, lock)?
                    } else {
                        self.base_table(name, &alias_name, index_directives)?
                    }
                } else if let Some(v) = self.view_named(db.as_deref(), &tname) {
                    self.view_ref(&v, &alias_name, lock)?
                } else if let Some((vc, rows)) = (self.cx.virt)(db.as_deref().unwrap_or(""), &tname)
                {
                    let d = db.clone().unwrap_or_default();
                    let cols = vc
                        .iter()
                        .map(|(n, ty)| ColInfo {
                            table: alias_name.clone(),
                            org_table: tname.to_ascii_uppercase(),
                            db: d.clone(),
                            name: n.clone(),
                            org_name: n.clone(),
                            ty: ty.clone(),
                            nullable: true,
                            hidden: false,
                        })
                        .collect();
                    (alias_name, SourceKind::Rows(Arc::new(rows)), cols)
                } else {
                    self.base_table(name, &alias_name, index_directives)?
                }
            }
            TableFactor::Derived {
                lateral,
                subquery,
                alias,
                ..
            } => {
                let Some(alias) = alias else {
                    return Err(err_derived_alias());
                };
                // A LATERAL derived table sees the FROM's preceding
                // columns, then the enclosing blocks'; a plain one only the
                // enclosing blocks' (outer references, MySQL 8.0.14+).
                let scope = if *lateral {
                    self.lateral_scope(from)
                } else {
                    from.outer.clone()
                };
                self.materialised_depth += 1;
                let b = self.bind_query(subquery, &scope, None);
                self.materialised_depth -= 1;
                let b = b?;
                let names: Vec<String> =
                    alias.columns.iter().map(|c| c.name.value.clone()).collect();
                let columns = rename_columns(b.columns, &names)?;
                let cols = exposed_cols(&columns, &alias.name.value);
                // References below `enclosing` read the enclosing blocks
                // (the block's own correlated references); the others read
                // this FROM's preceding columns (LATERAL only).
                let enclosing = from.outer.cols.len();
                from.refs
                    .extend(b.refs.iter().copied().filter(|&r| r < enclosing));
                let mut reads: Vec<usize> = b
                    .refs
                    .iter()
                    .filter_map(|&r| r.checked_sub(enclosing))
                    .collect();
                reads.sort_unstable();
                reads.dedup();
                if *lateral && !from.lateral_blind {
                    after = (0..index).collect();
                }
                // One that reads nothing outside runs once per statement;
                // otherwise again per outer row (and per row before it).
                let kind = if *lateral || !b.refs.is_empty() {
                    SourceKind::Lateral {
                        node: Box::new(b.node),
                        reads,
                    }
                } else {
                    SourceKind::Derived(Box::new(b.node))
                };
                (alias.name.value.clone(), kind, cols)
            }
            TableFactor::NestedJoin {
                table_with_joins,
                alias,
            } => {
                if alias.is_some() {
                    return Err(EngineError::not_supported("an alias on a nested join"));
                }
                if table_with_joins.joins.is_empty() {
                    return self.add_factor(&table_with_joins.relation, from, lock);
                }
                let has_right = table_with_joins.joins.iter().any(|j| {
                    matches!(
                        j.join_operator,
                        JoinOperator::Right(_) | JoinOperator::RightOuter(_)
                    )
                });
                if has_right {
                    self.nested_block(table_with_joins, from, lock)?
                } else {
                    // `a JOIN (b LEFT JOIN c ON ...) ON ...` and a nested
                    // join first in FROM flatten into the enclosing FROM:
                    // an inner join of the block is a filter of the cross
                    // product either way, and the block's outer joins'
                    // ON conditions read only its own tables.
                    let first = self.add_factor(&table_with_joins.relation, from, lock)?;
                    for j in &table_with_joins.joins {
                        self.add_join(j, from, lock)?;
                    }
                    return Ok(first);
                }
            }
            _ => return Err(EngineError::not_supported("this kind of table reference")),
        };
        if !matches!(f, TableFactor::NestedJoin { .. }) {
            check_unique(from, &name)?;
        }
        debug_assert_eq!(
            index,
            from.sources.len(),
            "`after` names the sources before it"
        );
        Ok(from.push_source(name, kind, cols, after))
    }

    /// What a LATERAL derived table about to be added to `from` may read:
    /// the FROM's columns so far (nameless on the right of a RIGHT JOIN,
    /// whose left operand it may not read), then the enclosing blocks'.
    /// At run time its outer row is the block's outer row followed by the
    /// join row up to the derived table's offset (`ops::lateral_rows`).
    fn lateral_scope(&self, from: &From) -> OuterScope {
        let mut visible = from.cols.clone();
        if from.lateral_blind {
            for c in &mut visible {
                c.table.clear();
                c.name.clear();
            }
        }
        from.outer.child(&visible)
    }

    /// A parenthesised join that cannot be flattened into the enclosing
    /// FROM (the right side of an outer join, or holding a RIGHT JOIN):
    /// bound as a block of its own whose rows are one source, so an
    /// outer join null-extends all its tables together. Its columns keep
    /// their tables' names (`b.x`, `c.*` resolve as before).
    fn nested_block(
        &mut self,
        twj: &TableWithJoins,
        from: &mut From,
        lock: Option<ReadLock>,
    ) -> SqlResult<(String, SourceKind, Vec<ColInfo>)> {
        let (mut join, cols, star) =
            self.bind_join_block_star(std::slice::from_ref(twj), None, lock)?;
        join.lock = lock;
        // The block's USING / NATURAL coalescing shows in the enclosing
        // `SELECT *` too (`push_source` takes it).
        from.pending_star = Some(star);
        let mut names: Vec<String> = Vec::new();
        for c in &cols {
            if !names.iter().any(|n| n.eq_ignore_ascii_case(&c.table)) {
                names.push(c.table.clone());
            }
        }
        for n in &names {
            check_unique(from, n)?;
        }
        from.nested_names.extend(names.iter().cloned());
        Ok((
            names.join(","),
            SourceKind::Derived(Box::new(Node::Join(Box::new(join)))),
            cols,
        ))
    }

    fn base_table(
        &mut self,
        name: &ast::ObjectName,
        alias: &str,
        directives: &[ast::TableIndexDirective],
    ) -> SqlResult<(String, SourceKind, Vec<ColInfo>)> {
        let def = self.cx.table(name)?;
        if self.materialised_depth == 0 {
            self.base_tables.push((def.db.clone(), def.name.clone()));
        }
        let mut force = None;
        for d in directives {
            // Only MySQL's USE/FORCE/IGNORE INDEX reach here from the
            // MySQL dialect; SQLite's INDEXED BY is not MySQL syntax.
            let ast::TableIndexDirective::MySql(h) = d else {
                return Err(crate::parse::syntax_error(&d.to_string()));
            };
            if matches!(
                h.hint_type,
                ast::TableIndexHintType::Force | ast::TableIndexHintType::Use
            ) {
                if let Some(n) = h.index_names.first() {
                    force = Some(n.value.clone());
                }
            }
        }
        if let Some(n) = &force {
            if !n.eq_ignore_ascii_case("PRIMARY") && def.index(n).is_none() {
                return Err(EngineError::new(
                    1176,
                    "42000",
                    format!("Key '{n}' doesn't exist in table '{}'", def.name),
                ));
            }
        }
        let cols = table_cols(&def, alias);
        Ok((alias.to_string(), SourceKind::Table { def, force }, cols))
    }

    /// The view `db.name` (`db` defaulting to the current database).
    fn view_named(&self, db: Option<&str>, name: &str) -> Option<Arc<ViewDef>> {
        let db = db.or(self.cx.db)?;
        self.cx.engine.view(db, name)
    }

    /// A reference to a view: its stored SELECT bound as a derived table
    /// (its text names every table with its database, and the CTEs of
    /// the referencing query are not visible inside it). Invalid
    /// references inside are MySQL's 1356, a view inside itself 1462.
    fn view_ref(
        &mut self,
        v: &ViewDef,
        alias: &str,
        lock: Option<ReadLock>,
    ) -> SqlResult<(String, SourceKind, Vec<ColInfo>)> {
        let key = (v.db.to_ascii_lowercase(), v.name.to_ascii_lowercase());
        if self.views_open.contains(&key) || self.views_open.len() >= MAX_VIEW_DEPTH {
            return Err(EngineError::new(
                1462,
                "HY000",
                format!("`{}`.`{}` contains view recursion", v.db, v.name),
            ));
        }
        let q = crate::parse::parse_query(&v.body).map_err(|_| err_invalid_view(v))?;
        self.views_open.push(key);
        let saved = std::mem::take(&mut self.ctes);
        let temptable = v.algorithm == quire_engine::ViewAlgorithm::TempTable;
        self.materialised_depth += usize::from(temptable);
        let r = self.bind_query(&q, &OuterScope::default(), lock);
        self.materialised_depth -= usize::from(temptable);
        self.ctes = saved;
        self.views_open.pop();
        let b = r.map_err(|e| match e.code {
            1146 | 1054 | 1305 | 1049 | 1051 | 1109 => err_invalid_view(v),
            _ => e,
        })?;
        let columns = rename_columns(b.columns, &v.columns)?;
        let mut cols = exposed_cols(&columns, alias);
        for c in cols.iter_mut() {
            c.org_table = v.name.clone();
            c.db = v.db.clone();
        }
        Ok((
            alias.to_string(),
            SourceKind::Derived(Box::new(b.node)),
            cols,
        ))
    }

    /// A reference to a CTE in scope, bound as a derived table (or, inside
    /// its own recursive member, as the previous round's rows).
    fn cte_ref(
        &mut self,
        name: &str,
        alias: &str,
    ) -> SqlResult<Option<(String, SourceKind, Vec<ColInfo>)>> {
        let Some(pos) = self
            .ctes
            .iter()
            .rposition(|c| c.name.eq_ignore_ascii_case(name))
        else {
            return Ok(None);
        };
        let def = self.ctes[pos].clone();
        if let Some((id, columns)) = &def.working {
            let cols = exposed_cols(columns, alias);
            return Ok(Some((alias.to_string(), SourceKind::Working(*id), cols)));
        }
        // Bind with only the CTEs defined before it visible (and itself,
        // when recursive).
        let keep = if def.recursive { pos + 1 } else { pos };
        let saved: Vec<CteDef> = self.ctes.drain(keep..).collect();
        self.materialised_depth += 1;
        let r = if def.recursive {
            self.bind_recursive(pos, &def)
        } else {
            self.bind_query(&def.query, &OuterScope::default(), None)
        };
        self.materialised_depth -= 1;
        // Restore the scope whatever happened.
        self.ctes.truncate(keep);
        if self.ctes.len() < keep {
            self.ctes.push(def.clone());
        }
        self.ctes.extend(saved);
        let b = r?;
        let columns = rename_columns(b.columns, &def.column_names)?;
        let cols = exposed_cols(&columns, alias);
        Ok(Some((
            alias.to_string(),
            SourceKind::Derived(Box::new(b.node)),
            cols,
        )))
    }

    /// `WITH RECURSIVE r AS (anchor UNION [ALL] step)`.
    fn bind_recursive(&mut self, pos: usize, def: &CteDef) -> SqlResult<Bound> {
        let q = &def.query;
        let self_ref = |b: &SetExpr| set_expr_mentions(b, &def.name);
        let (anchor, step, all) = match &*q.body {
            SetExpr::SetOperation {
                left,
                op: SetOperator::Union,
                set_quantifier,
                right,
            } if self_ref(right) => {
                if self_ref(left) {
                    return Err(EngineError::new(
                        3573,
                        "HY000",
                        format!(
                            "Recursive Common Table Expression '{}' should have one or more non-recursive query blocks followed by one or more recursive ones",
                            def.name
                        ),
                    ));
                }
                (left, right, matches!(set_quantifier, SetQuantifier::All))
            }
            _ if self_ref(&q.body) => {
                return Err(EngineError::new(
                    3573,
                    "HY000",
                    format!(
                        "Recursive Common Table Expression '{}' should have one or more non-recursive query blocks followed by one or more recursive ones",
                        def.name
                    ),
                ))
            }
            // Declared RECURSIVE but not referring to itself: plain.
            _ => {
                self.ctes.truncate(pos);
                return self.bind_query(q, &OuterScope::default(), None);
            }
        };
        if q.order_by.is_some() || q.limit_clause.is_some() {
            return Err(EngineError::not_supported(
                "ORDER BY / LIMIT in a recursive common table expression",
            ));
        }
        // The anchor does not see the CTE itself.
        let me = self.ctes.remove(pos);
        let a = self.bind_set_expr(anchor, &OuterScope::default(), None);
        self.ctes.insert(pos, me);
        let a = a?;
        let columns = rename_columns(a.columns, &def.column_names)?;
        let id = self.next_working;
        self.next_working += 1;
        self.ctes[pos].working = Some((id, columns.clone()));
        let s = self.bind_set_expr(step, &OuterScope::default(), None);
        self.ctes[pos].working = None;
        let s = s?;
        if s.columns.len() != columns.len() {
            return Err(EngineError::new(
                1222,
                "21000",
                "The used SELECT statements have a different number of columns",
            ));
        }
        Ok(Bound {
            node: Node::Recursive {
                id,
                anchor: Box::new(a.node),
                step: Box::new(s.node),
                distinct: !all,
            },
            columns,
            refs: Vec::new(),
        })
    }

    fn add_join(
        &mut self,
        j: &ast::Join,
        from: &mut From,
        lock: Option<ReadLock>,
    ) -> SqlResult<()> {
        enum Side {
            Inner,
            Left,
            Right,
        }
        let (side, cons) = match &j.join_operator {
            JoinOperator::Join(c) | JoinOperator::Inner(c) => (Side::Inner, c),
            // In MySQL CROSS JOIN and STRAIGHT_JOIN (a join-order hint)
            // are inner joins and may carry ON.
            JoinOperator::CrossJoin(c) | JoinOperator::StraightJoin(c) => (Side::Inner, c),
            JoinOperator::Left(c) | JoinOperator::LeftOuter(c) => (Side::Left, c),
            JoinOperator::Right(c) | JoinOperator::RightOuter(c) => (Side::Right, c),
            JoinOperator::FullOuter(_) => return Err(crate::parse::syntax_error("FULL")),
            _ => return Err(EngineError::not_supported("this join type")),
        };
        let before = from.sources.len();
        let left_cols = from.cols[from.scope_start..].to_vec();
        let idx = match (&side, &j.relation) {
            (
                Side::Left | Side::Right,
                TableFactor::NestedJoin {
                    table_with_joins,
                    alias: None,
                },
            ) if !table_with_joins.joins.is_empty() => {
                let (name, kind, cols) = self.nested_block(table_with_joins, from, lock)?;
                from.push_source(name, kind, cols, Vec::new())
            }
            _ => {
                from.lateral_blind = matches!(side, Side::Right);
                let idx = self.add_factor(&j.relation, from, lock);
                from.lateral_blind = false;
                idx?
            }
        };
        let added = from.sources.len() - before;
        let scope = from.scope_start..from.cols.len();
        let on: Option<Expr> = match cons {
            JoinConstraint::On(e) => Some(e.clone()),
            JoinConstraint::None => None,
            JoinConstraint::Using(names) => {
                let mut cond: Option<Expr> = None;
                for n in names {
                    let (_, col) = split_name(n)?;
                    cond = Some(using_eq(
                        cond,
                        &col,
                        &left_cols,
                        &from.cols[from.scope_start + left_cols.len()..],
                    )?);
                }
                cond
            }
            JoinConstraint::Natural => {
                let right = &from.cols[from.scope_start + left_cols.len()..];
                let mut cond: Option<Expr> = None;
                for c in right.iter().filter(|c| !c.hidden) {
                    if left_cols
                        .iter()
                        .any(|l| !l.hidden && l.name.eq_ignore_ascii_case(&c.name))
                    {
                        cond = Some(using_eq(cond, &c.name, &left_cols, right)?);
                    }
                }
                cond
            }
            JoinConstraint::UsingAlias(..) => {
                return Err(crate::parse::syntax_error("AS"));
            }
        };
        let right_start = from.scope_start + left_cols.len();
        let common: Option<Vec<String>> = match cons {
            JoinConstraint::Using(names) => Some(
                names
                    .iter()
                    .map(|n| split_name(n).map(|(_, c)| c))
                    .collect::<SqlResult<_>>()?,
            ),
            JoinConstraint::Natural => Some(
                left_cols
                    .iter()
                    .filter(|l| !l.hidden)
                    .filter(|l| {
                        from.cols[right_start..]
                            .iter()
                            .any(|r| !r.hidden && r.name.eq_ignore_ascii_case(&l.name))
                    })
                    .map(|l| l.name.clone())
                    .collect(),
            ),
            _ => None,
        };
        if let Some(names) = common {
            let find = |range: Range<usize>, name: &str| {
                range
                    .clone()
                    .find(|&p| !from.cols[p].hidden && from.cols[p].name.eq_ignore_ascii_case(name))
            };
            let mut pairs = Vec::new();
            for n in &names {
                if let (Some(l), Some(r)) = (
                    find(from.scope_start..right_start, n),
                    find(right_start..from.cols.len(), n),
                ) {
                    pairs.push((l, r));
                }
            }
            from.coalesce(&pairs, right_start, matches!(side, Side::Right));
        }
        match side {
            Side::Inner => {
                if let Some(e) = on {
                    from.inner_on.push((e, scope));
                }
            }
            Side::Left => {
                if added != 1 {
                    return Err(EngineError::not_supported("LEFT JOIN of a nested join"));
                }
                from.sources[idx].after = (0..idx).collect();
                from.outer_on
                    .push((idx, on.unwrap_or_else(true_expr), scope));
            }
            Side::Right => {
                // `A RIGHT JOIN B ON c` is `B LEFT JOIN A ON c` with A's
                // columns still first. `regroup_right_joins` and
                // `bind_from` made A (this FROM item so far) one source,
                // and a nested B is one source too.
                let first = from.scope_first;
                if before != first + 1 || added != 1 {
                    return Err(EngineError::not_supported(
                        "RIGHT JOIN with more than one table on a side",
                    ));
                }
                from.sources[first].after = vec![idx];
                from.outer_on
                    .push((first, on.unwrap_or_else(true_expr), scope));
            }
        }
        Ok(())
    }

    /// Compiles an ON condition that may name only the block columns in
    /// `scope` (the others are there, positions unchanged, but nameless).
    fn compile_on(
        &mut self,
        e: &Expr,
        cols: &[ColInfo],
        scope: &Range<usize>,
        outer: &OuterScope,
        refs: &mut Vec<usize>,
    ) -> SqlResult<E> {
        if scope.start == 0 && scope.end >= cols.len() {
            return self.compile(e, cols, outer, None, None, "on clause", refs);
        }
        let mut visible = cols.to_vec();
        for (i, c) in visible.iter_mut().enumerate() {
            if !scope.contains(&i) {
                c.table.clear();
                c.name.clear();
            }
        }
        self.compile(e, &visible, outer, None, None, "on clause", refs)
    }

    fn bind_from(
        &mut self,
        list: &[TableWithJoins],
        lock: Option<ReadLock>,
        outer: &OuterScope,
    ) -> SqlResult<From> {
        // MySQL's limit on one block's tables. It also bounds how deep
        // `regroup_right_joins` nests a chain of RIGHT JOINs, which is
        // bound recursively (`nested_block`).
        let tables: usize = list.iter().map(count_tables).sum();
        if tables > MAX_JOIN_TABLES {
            return Err(EngineError::new(
                1116,
                "HY000",
                format!("Too many tables; quire can only use {MAX_JOIN_TABLES} tables in a join"),
            ));
        }
        let mut from = From {
            outer: outer.clone(),
            ..From::default()
        };
        for twj in list {
            // A comma-joined item after an outer join: MySQL reads
            // `a LEFT JOIN b, c` as `(a LEFT JOIN b), c`; nothing to order.
            let twj = regroup_right_joins(twj);
            from.scope_start = from.cols.len();
            from.scope_first = from.sources.len();
            match &twj.relation {
                // `(a JOIN b) RIGHT JOIN c`: the left operand is null-
                // extended as a whole, so it is one block source.
                TableFactor::NestedJoin {
                    table_with_joins,
                    alias: None,
                } if twj.joins.first().is_some_and(is_right_join)
                    && !table_with_joins.joins.is_empty() =>
                {
                    let (name, kind, cols) =
                        self.nested_block(table_with_joins, &mut from, lock)?;
                    from.push_source(name, kind, cols, Vec::new());
                }
                r => {
                    self.add_factor(r, &mut from, lock)?;
                }
            }
            for j in &twj.joins {
                self.add_join(j, &mut from, lock)?;
            }
        }
        Ok(from)
    }

    /// The table references and WHERE of a multi-table UPDATE/DELETE as
    /// one block's `Join` (WHERE and ON conjuncts, outer joins), with the
    /// block's columns; `exec_multi.rs` compiles the SET list against
    /// them and marks the targets.
    pub fn bind_dml_join(
        &mut self,
        list: &[TableWithJoins],
        selection: Option<&Expr>,
    ) -> SqlResult<(Join, Vec<ColInfo>)> {
        self.bind_join_block(list, selection, None)
    }

    /// Table references and an optional WHERE as one `Join`, seeing no
    /// enclosing query.
    fn bind_join_block(
        &mut self,
        list: &[TableWithJoins],
        selection: Option<&Expr>,
        lock: Option<ReadLock>,
    ) -> SqlResult<(Join, Vec<ColInfo>)> {
        let (join, cols, _) = self.bind_join_block_star(list, selection, lock)?;
        Ok((join, cols))
    }

    /// [`Binder::bind_join_block`], with the block's `SELECT *` order.
    fn bind_join_block_star(
        &mut self,
        list: &[TableWithJoins],
        selection: Option<&Expr>,
        lock: Option<ReadLock>,
    ) -> SqlResult<(Join, Vec<ColInfo>, Vec<usize>)> {
        let from = self.bind_from(list, lock, &OuterScope::default())?;
        let cols = from.cols.clone();
        let star = from.star.clone();
        let outer = OuterScope::default();
        let mut refs = Vec::new();
        let mut conj = Vec::new();
        if let Some(w) = selection {
            let e = self.compile(w, &cols, &outer, None, None, "where clause", &mut refs)?;
            conjuncts(e, &mut conj);
        }
        for (e, scope) in &from.inner_on {
            let e = self.compile_on(e, &cols, scope, &outer, &mut refs)?;
            conjuncts(e, &mut conj);
        }
        let mut sources = from.sources;
        for (i, e, scope) in &from.outer_on {
            let ce = self.compile_on(e, &cols, scope, &outer, &mut refs)?;
            let mut v = Vec::new();
            conjuncts(ce, &mut v);
            sources[*i].outer_on = Some(v);
        }
        let width = cols.len();
        let join = Join {
            sources,
            width,
            conj,
            steps: Vec::new(),
            gate: Vec::new(),
            limit: None,
            lock: None,
            col_types: cols.iter().map(|c| c.ty.clone()).collect(),
            col_names: cols.iter().map(qualified_name).collect(),
        };
        Ok((join, cols, star))
    }

    // ----------------------------------------------------------- SELECT

    #[allow(clippy::too_many_arguments)]
    /// Whether the session's sql_mode has ONLY_FULL_GROUP_BY.
    /// (A context without session variables has MySQL's default mode.)
    fn only_full_group_by(&self) -> bool {
        match self.cx.env.sysvar("sql_mode", crate::parse::Scope::Session) {
            Ok(mode) => mode
                .to_string()
                .split(',')
                .any(|m| m.trim().eq_ignore_ascii_case("ONLY_FULL_GROUP_BY")),
            Err(_) => true,
        }
    }

    fn bind_select(
        &mut self,
        s: &ast::Select,
        order: &[ast::OrderByExpr],
        limit: Option<usize>,
        offset: usize,
        outer: &OuterScope,
        lock: Option<ReadLock>,
    ) -> SqlResult<Bound> {
        let per_source_locks = self.pending_locks.take();
        // WINDOW w AS (...): references replaced by what they stand for.
        let expanded = crate::query::named_windows::expand(s, order)?;
        let (s, order) = match &expanded {
            Some((s2, o2)) => (s2, o2.as_slice()),
            None => (s, order),
        };
        reject_foreign_clauses(s)?;
        if s.into.is_some() {
            return Err(EngineError::not_supported("SELECT ... INTO"));
        }
        if s.select_modifiers
            .as_ref()
            .is_some_and(|m| m.sql_calc_found_rows)
        {
            // The session strips it from the outermost block
            // (`session_sql.rs`); anywhere else MySQL refuses it.
            return Err(EngineError::new(
                1234,
                "42000",
                "Incorrect usage/placement of 'SQL_CALC_FOUND_ROWS'",
            ));
        }
        let mut from = self.bind_from(&s.from, lock, outer)?;
        if let Some(c) = &per_source_locks {
            locking::assign(&mut from.sources, c)?;
        }
        let cols = from.cols.clone();
        let mut refs: Vec<usize> = std::mem::take(&mut from.refs);
        // This block's window functions (a subquery has its own list).
        let outer_wins = self.windows.replace(Vec::new());
        // WHERE and inner-join ON conjuncts.
        let mut conj = Vec::new();
        if let Some(w) = &s.selection {
            let e = self.compile(w, &cols, outer, None, None, "where clause", &mut refs)?;
            conjuncts(e, &mut conj);
        }
        for (e, scope) in &from.inner_on {
            let e = self.compile_on(e, &cols, scope, outer, &mut refs)?;
            conjuncts(e, &mut conj);
        }
        let mut sources = from.sources;
        for (i, e, scope) in &from.outer_on {
            let ce = self.compile_on(e, &cols, scope, outer, &mut refs)?;
            let mut v = Vec::new();
            conjuncts(ce, &mut v);
            sources[*i].outer_on = Some(v);
        }
        // Select list.
        let mut aggs: Vec<AggSpec> = Vec::new();
        let list = self.select_list(s, &cols, &from.star, &sources, outer, &mut aggs, &mut refs)?;
        let SelectList { mut outs, aliases } = list;
        // GROUP BY
        let (group_exprs, rollup) = match &s.group_by {
            GroupByExpr::Expressions(list, mods) => {
                let mut rollup = false;
                for m in mods {
                    match m {
                        ast::GroupByWithModifier::Rollup => rollup = true,
                        _ => return Err(EngineError::not_supported("this GROUP BY modifier")),
                    }
                }
                let mut v = Vec::new();
                for g in list {
                    v.push(self.resolve_ref(
                        g,
                        &cols,
                        outer,
                        &outs,
                        &aliases,
                        None,
                        "group statement",
                        &mut refs,
                    )?);
                }
                (v, rollup)
            }
            GroupByExpr::All(_) => return Err(EngineError::not_supported("GROUP BY ALL")),
        };
        if rollup && group_exprs.is_empty() {
            return Err(crate::parse::syntax_error("WITH ROLLUP"));
        }
        let having = match &s.having {
            Some(h) => Some(self.resolve_ref(
                h,
                &cols,
                outer,
                &outs,
                &aliases,
                Some(&mut aggs),
                "having clause",
                &mut refs,
            )?),
            None => None,
        };
        let mut order_keys: Vec<(E, bool)> = Vec::new();
        for o in order {
            let e = self.resolve_ref(
                &o.expr,
                &cols,
                outer,
                &outs,
                &aliases,
                Some(&mut aggs),
                "order clause",
                &mut refs,
            )?;
            order_keys.push((e, is_desc(&o.options)?));
        }
        let distinct = match &s.distinct {
            None | Some(ast::Distinct::All) => false,
            Some(ast::Distinct::Distinct) => true,
            Some(ast::Distinct::On(_)) => return Err(EngineError::not_supported("DISTINCT ON")),
        };
        let grouped = !aggs.is_empty() || !group_exprs.is_empty();
        let items: Vec<E> = outs.iter().map(|(e, _)| e.clone()).collect();
        let order_exprs: Vec<E> = order_keys.iter().map(|(e, _)| e.clone()).collect();
        let block = fullgroup::Block {
            cols: &cols,
            sources: &sources,
            conj: &conj,
            group: &group_exprs,
            items: &items,
            order: &order_exprs,
            having: having.as_ref(),
            grouped,
            distinct,
        };
        // The sql_mode lookup only where the check can matter.
        let full = (block.grouped || block.distinct) && self.only_full_group_by();
        fullgroup::check(&block, full)?;
        for (e, m) in outs.iter_mut() {
            if !matches!(e, E::Col(_)) {
                m.ty = infer(e, &cols, &aggs);
            }
            if grouped && rollup {
                m.nullable = true;
            }
        }
        // Keys compare as MySQL's temporary table and filesort hold them.
        let conn = self.cx.env.connection_collation();
        let distinct_colls: Vec<_> = outs
            .iter()
            .map(|(e, _)| {
                if crate::expr::holds_json_value(e, &cols) {
                    return KeyOf::Json;
                }
                KeyOf::of_coll(crate::expr::derive(e, &cols, &aggs, conn).map(|d| d.coll))
            })
            .collect();
        let group_exprs: Vec<E> = group_exprs
            .into_iter()
            .map(|e| weigh_key(key_at_result_scale(e, &cols, &aggs), &cols, &aggs, conn))
            .collect();
        let order_keys: Vec<(E, bool)> = order_keys
            .into_iter()
            .map(|(e, d)| (order_key(e, &cols, &aggs, conn), d))
            .collect();
        let width = cols.len();
        let join = Join {
            sources,
            width,
            conj,
            steps: Vec::new(),
            gate: Vec::new(),
            limit: None,
            lock,
            col_types: cols.iter().map(|c| c.ty.clone()).collect(),
            col_names: cols.iter().map(qualified_name).collect(),
        };
        let mut node = Node::Join(Box::new(join));
        if grouped {
            node = Node::Aggregate {
                input: Box::new(node),
                group: group_exprs,
                aggs,
                width,
                rollup,
            };
        }
        let n = outs.len();
        let types: Vec<ColumnType> = outs.iter().map(|(_, m)| m.ty.clone()).collect();
        let mut exprs: Vec<E> = outs.iter().map(|(e, _)| e.clone()).collect();
        let mut keys = Vec::new();
        for (e, d) in order_keys {
            keys.push((exprs.len(), d));
            exprs.push(e);
        }
        let specs = std::mem::replace(&mut self.windows, outer_wins).unwrap_or_default();
        let nwins = specs.len();
        let mut having = having;
        if !specs.is_empty() {
            // Window functions see the rows HAVING keeps.
            node = Node::Window {
                input: Box::new(node),
                specs,
                having: having.take(),
                agg_width: grouped.then_some(width),
            };
        }
        node = Node::Project {
            input: Box::new(node),
            exprs,
            having,
            agg_width: grouped.then_some(width),
            types,
            wins: nwins,
        };
        if distinct {
            node = Node::Distinct {
                input: Box::new(node),
                width: n,
                colls: distinct_colls,
            };
        }
        if !keys.is_empty() {
            node = Node::Sort {
                input: Box::new(node),
                keys,
                top: limit.map(|l| l.saturating_add(offset)),
            };
        }
        if limit.is_some() || offset > 0 || exprs_len(&node) > n {
            node = Node::Limit {
                input: Box::new(node),
                offset,
                limit,
                width: n,
            };
        }
        Ok(Bound {
            node,
            columns: outs.into_iter().map(|(_, m)| m).collect(),
            refs,
        })
    }

    #[allow(clippy::too_many_arguments)]
    fn select_list(
        &mut self,
        s: &ast::Select,
        cols: &[ColInfo],
        star: &[usize],
        sources: &[Source],
        outer: &OuterScope,
        aggs: &mut Vec<AggSpec>,
        refs: &mut Vec<usize>,
    ) -> SqlResult<SelectList> {
        let mut outs: Vec<(E, ColumnMeta)> = Vec::new();
        let mut aliases: Vec<String> = Vec::new();
        for item in &s.projection {
            match item {
                SelectItem::Wildcard(_) | SelectItem::QualifiedWildcard(..) => {
                    let qual = match item {
                        SelectItem::QualifiedWildcard(
                            ast::SelectItemQualifiedWildcardKind::ObjectName(n),
                            _,
                        ) => Some(split_name(n)?.1),
                        SelectItem::QualifiedWildcard(..) => {
                            return Err(EngineError::not_supported("this wildcard"))
                        }
                        _ => None,
                    };
                    if sources.is_empty() {
                        return Err(EngineError::new(1096, "HY000", "No tables used"));
                    }
                    let mut any = false;
                    // `*` in the FROM's order (USING / NATURAL coalesced);
                    // `t.*` every column of t, hidden twins included.
                    let order: Vec<usize> = match &qual {
                        None => star.to_vec(),
                        Some(_) => (0..cols.len()).collect(),
                    };
                    for i in order {
                        let Some(c) = cols.get(i) else { continue };
                        if qual
                            .as_ref()
                            .is_some_and(|q| !q.eq_ignore_ascii_case(&c.table))
                        {
                            continue;
                        }
                        any = true;
                        outs.push((E::Col(i), meta_of_col(c, &c.name)));
                        aliases.push(c.name.clone());
                    }
                    if !any {
                        return Err(EngineError::new(
                            1051,
                            "42S02",
                            format!("Unknown table '{}'", qual.unwrap_or_default()),
                        ));
                    }
                }
                SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } => {
                    let name = match item {
                        SelectItem::ExprWithAlias { alias, .. } => alias.value.clone(),
                        _ => expr_name(e),
                    };
                    let ce = self.compile(e, cols, outer, Some(aggs), None, "field list", refs)?;
                    let meta = match &ce {
                        E::Col(i) => meta_of_col(&cols[*i], &name),
                        other => ColumnMeta {
                            name: name.clone(),
                            org_name: String::new(),
                            table: String::new(),
                            org_table: String::new(),
                            db: String::new(),
                            ty: ColumnType::Int { unsigned: false },
                            nullable: nullable(other, cols),
                        },
                    };
                    aliases.push(name);
                    outs.push((ce, meta));
                }
                // Spark's `expr AS (a, b)`; the MySQL dialect does not produce it.
                SelectItem::ExprWithAliases { .. } => {
                    return Err(crate::parse::syntax_error(&item.to_string()))
                }
            }
        }
        Ok(SelectList { outs, aliases })
    }

    /// ORDER BY / GROUP BY / HAVING item: a position, an output alias, or
    /// an expression over the sources.
    #[allow(clippy::too_many_arguments)]
    fn resolve_ref(
        &mut self,
        e: &Expr,
        cols: &[ColInfo],
        outer: &OuterScope,
        outs: &[(E, ColumnMeta)],
        aliases: &[String],
        aggs: Option<&mut Vec<AggSpec>>,
        clause: &'static str,
        refs: &mut Vec<usize>,
    ) -> SqlResult<E> {
        if let Expr::Value(v) = e {
            if let ast::Value::Number(n, _) = &v.value {
                let k: usize = n.parse().unwrap_or(0);
                if k == 0 || k > outs.len() {
                    return Err(crate::expr::err_unknown_column(n, clause));
                }
                return Ok(outs[k - 1].0.clone());
            }
        }
        if let Expr::Identifier(id) = e {
            let own = cols.iter().any(|c| c.name.eq_ignore_ascii_case(&id.value));
            if !own || clause == "having clause" {
                if let Some(k) = aliases
                    .iter()
                    .position(|a| a.eq_ignore_ascii_case(&id.value))
                {
                    return Ok(outs[k].0.clone());
                }
            }
        }
        let exprs: Vec<E> = outs.iter().map(|(e, _)| e.clone()).collect();
        self.compile(e, cols, outer, aggs, Some((aliases, &exprs)), clause, refs)
    }
}

fn exprs_len(node: &Node) -> usize {
    match node {
        Node::Project { exprs, .. } => exprs.len(),
        Node::Distinct { input, .. } | Node::Sort { input, .. } => exprs_len(input),
        _ => 0,
    }
}

/// Error 1066 when `name` is already a table of the FROM clause.
fn check_unique(from: &From, name: &str) -> SqlResult<()> {
    let taken = from
        .sources
        .iter()
        .map(|s| &s.name)
        .chain(&from.nested_names);
    for t in taken {
        if t.eq_ignore_ascii_case(name) {
            return Err(EngineError::new(
                1066,
                "42000",
                format!("Not unique table/alias: '{name}'"),
            ));
        }
    }
    Ok(())
}

/// `alias.column`, as EXPLAIN names a column.
/// Tables one query block may join (MySQL's `MAX_TABLES`, error 1116).
const MAX_JOIN_TABLES: usize = 61;

/// The table references of one FROM item, parenthesised joins included
/// (a derived table counts as one; its own FROM is another block).
fn count_tables(twj: &TableWithJoins) -> usize {
    let factor = |f: &TableFactor| match f {
        TableFactor::NestedJoin {
            table_with_joins, ..
        } => count_tables(table_with_joins),
        _ => 1,
    };
    factor(&twj.relation) + twj.joins.iter().map(|j| factor(&j.relation)).sum::<usize>()
}

fn is_right_join(j: &ast::Join) -> bool {
    matches!(
        j.join_operator,
        JoinOperator::Right(_) | JoinOperator::RightOuter(_)
    )
}

/// Joins associate to the left: `a JOIN b ON x RIGHT JOIN c ON y` is
/// `(a JOIN b ON x) RIGHT JOIN c ON y`. Each RIGHT JOIN that is not the
/// first join of the item gets everything before it as one parenthesised
/// block, the left operand it null-extends as a whole.
fn regroup_right_joins(twj: &TableWithJoins) -> std::borrow::Cow<'_, TableWithJoins> {
    if !twj.joins.iter().skip(1).any(is_right_join) {
        return std::borrow::Cow::Borrowed(twj);
    }
    let mut relation = twj.relation.clone();
    let mut joins: Vec<ast::Join> = Vec::new();
    for j in &twj.joins {
        if is_right_join(j) && !joins.is_empty() {
            relation = TableFactor::NestedJoin {
                table_with_joins: Box::new(TableWithJoins {
                    relation,
                    joins: std::mem::take(&mut joins),
                }),
                alias: None,
            };
        }
        joins.push(j.clone());
    }
    std::borrow::Cow::Owned(TableWithJoins { relation, joins })
}

fn qualified_name(c: &ColInfo) -> String {
    format!("{}.{}", c.table, c.name)
}

fn true_expr() -> Expr {
    Expr::Value(ast::Value::Boolean(true).into())
}

/// `l.col = r.col` for USING / NATURAL, AND-ed onto `acc`.
fn using_eq(acc: Option<Expr>, col: &str, left: &[ColInfo], right: &[ColInfo]) -> SqlResult<Expr> {
    let unknown = || crate::expr::err_unknown_column(col, "from clause");
    let l = left
        .iter()
        .find(|c| !c.hidden && c.name.eq_ignore_ascii_case(col))
        .ok_or_else(unknown)?;
    let r = right
        .iter()
        .find(|c| !c.hidden && c.name.eq_ignore_ascii_case(col))
        .ok_or_else(unknown)?;
    let side = |c: &ColInfo| {
        Expr::CompoundIdentifier(vec![
            ast::Ident::new(c.table.clone()),
            ast::Ident::new(c.name.clone()),
        ])
    };
    let eq = Expr::BinaryOp {
        left: Box::new(side(l)),
        op: ast::BinaryOperator::Eq,
        right: Box::new(side(r)),
    };
    Ok(match acc {
        None => eq,
        Some(a) => Expr::BinaryOp {
            left: Box::new(a),
            op: ast::BinaryOperator::And,
            right: Box::new(eq),
        },
    })
}

/// Column names given by `name (a, b)` / `AS t (a, b)`.
fn rename_columns(mut columns: Vec<ColumnMeta>, names: &[String]) -> SqlResult<Vec<ColumnMeta>> {
    if names.is_empty() {
        for (i, c) in columns.iter().enumerate() {
            if columns[..i]
                .iter()
                .any(|o| o.name.eq_ignore_ascii_case(&c.name))
            {
                return Err(EngineError::new(
                    1060,
                    "42S21",
                    format!("Duplicate column name '{}'", c.name),
                ));
            }
        }
        return Ok(columns);
    }
    if names.len() != columns.len() {
        return Err(EngineError::new(
            1353,
            "HY000",
            "In definition of view, derived table or common table expression, SELECT list and column names list have different column counts",
        ));
    }
    for (c, n) in columns.iter_mut().zip(names) {
        c.name = n.clone();
    }
    Ok(columns)
}

/// Whether a query body names table `name` (a recursive CTE's self
/// reference) in any FROM clause, including nested queries in FROM.
fn set_expr_mentions(b: &SetExpr, name: &str) -> bool {
    match b {
        SetExpr::Select(s) => s.from.iter().any(|t| {
            factor_mentions(&t.relation, name)
                || t.joins.iter().any(|j| factor_mentions(&j.relation, name))
        }),
        SetExpr::Query(q) => set_expr_mentions(&q.body, name),
        SetExpr::SetOperation { left, right, .. } => {
            set_expr_mentions(left, name) || set_expr_mentions(right, name)
        }
        _ => false,
    }
}

fn factor_mentions(f: &TableFactor, name: &str) -> bool {
    match f {
        TableFactor::Table { name: n, .. } => {
            n.0.len() == 1
                && n.0[0]
                    .as_ident()
                    .is_some_and(|i| i.value.eq_ignore_ascii_case(name))
        }
        TableFactor::Derived { subquery, .. } => set_expr_mentions(&subquery.body, name),
        TableFactor::NestedJoin {
            table_with_joins, ..
        } => {
            factor_mentions(&table_with_joins.relation, name)
                || table_with_joins
                    .joins
                    .iter()
                    .any(|j| factor_mentions(&j.relation, name))
        }
        _ => false,
    }
}

/// Other dialects' clauses that sqlparser reads everywhere: not MySQL
/// syntax, so a syntax error rather than a clause silently dropped.
fn reject_foreign_clauses(s: &ast::Select) -> SqlResult<()> {
    if !s.connect_by.is_empty() {
        return Err(crate::parse::syntax_error("CONNECT BY"));
    }
    for (present, what) in [
        (s.top.is_some(), "TOP"),
        (s.exclude.is_some(), "EXCLUDE"),
        (!s.lateral_views.is_empty(), "LATERAL VIEW"),
        (s.prewhere.is_some(), "PREWHERE"),
        (!s.cluster_by.is_empty(), "CLUSTER BY"),
        (!s.distribute_by.is_empty(), "DISTRIBUTE BY"),
        (!s.sort_by.is_empty(), "SORT BY"),
        (s.qualify.is_some(), "QUALIFY"),
        (s.value_table_mode.is_some(), "AS VALUE"),
    ] {
        if present {
            return Err(crate::parse::syntax_error(what));
        }
    }
    Ok(())
}

/// The result columns of `l op r`: names from the left; each type wide
/// enough for both sides.
fn set_op(kind: SetOpKind, all: bool, l: Bound, r: Bound) -> SqlResult<Bound> {
    if l.columns.len() != r.columns.len() {
        return Err(EngineError::new(
            1222,
            "21000",
            "The used SELECT statements have a different number of columns",
        ));
    }
    let columns = l
        .columns
        .iter()
        .zip(&r.columns)
        .map(|(a, b)| ColumnMeta {
            name: a.name.clone(),
            org_name: String::new(),
            table: String::new(),
            org_table: String::new(),
            db: String::new(),
            ty: merge_types(a.ty.clone(), b.ty.clone()),
            nullable: a.nullable || b.nullable,
        })
        .collect();
    // UNION compares strings in the collation of the left side's column,
    // or the right's where the left has none.
    let colls = l
        .columns
        .iter()
        .zip(&r.columns)
        .map(|(a, b)| {
            if a.ty == ColumnType::Json && b.ty == ColumnType::Json {
                return KeyOf::Json;
            }
            KeyOf::of_coll(
                crate::expr::type_collation(&a.ty).or_else(|| crate::expr::type_collation(&b.ty)),
            )
        })
        .collect();
    let mut refs = l.refs;
    for x in r.refs {
        if !refs.contains(&x) {
            refs.push(x);
        }
    }
    Ok(Bound {
        node: Node::SetOp {
            op: kind,
            all,
            left: Box::new(l.node),
            right: Box::new(r.node),
            colls,
        },
        columns,
        refs,
    })
}

/// The type a UNION column gets from its two sides: MySQL's type
/// aggregation, as for CASE and COALESCE (NULL-typed sides do not count).
pub fn merge_types(a: ColumnType, b: ColumnType) -> ColumnType {
    crate::expr::merge_column_types(&[a, b])
}
