//! # Plan and execute: SELECT, INSERT, REPLACE, UPDATE, DELETE
//!
//! ## Sources and rows
//! A query's FROM clause becomes a list of *sources* (base tables, derived
//! tables, and the few virtual tables such as
//! `performance_schema.global_status`). The row an expression sees is the
//! concatenation of all sources' columns; a source's columns start at its
//! `offset`. Expressions are compiled against that layout (`expr.rs`).
//!
//! ## Plan: index choice
//! The WHERE clause (and each join's ON clause) is split into its AND-ed
//! conjuncts. For each base-table source the planner looks for conjuncts
//! of the forms `col = X`, `col < X` (`<=`, `>`, `>=`), `col BETWEEN X AND
//! Y` and `col IN (X, ...)` where `col` belongs to the source and `X`
//! only reads columns of *earlier* sources (constants for the first one).
//! Every index (the primary key and each secondary index) is scored by how
//! long a prefix of its columns is pinned by equalities, plus one range on
//! the next column; the best wins, ties going to the primary key. A full
//! primary-key equality becomes a point read; `IN` becomes one range per
//! value. Anything else is a full scan in primary-key order. For the inner
//! sources of a join the bound values are evaluated per outer row, which
//! makes the join a nested loop over an index.
//!
//! Bounds are only a hint: every produced row is checked against the full
//! predicate again, so a bound the engine cannot encode exactly (it drops
//! it) only widens the scan. Conjuncts are applied as soon as every column
//! they read is bound.
//!
//! ## Execute
//! Joined rows flow into either plain projection or grouping (GROUP BY
//! and/or aggregates: one state per group, the group's first row stands in
//! for non-aggregated columns as MySQL does without ONLY_FULL_GROUP_BY),
//! then HAVING, DISTINCT, ORDER BY (keys computed beside each output row)
//! and LIMIT/OFFSET. Writes read rows with locking (current) reads, as
//! InnoDB does, and re-check the WHERE on the locked version.

use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};
use std::ops::Bound;
use std::sync::Arc;

use quire_engine::types::{compare, DateTime, Decimal};
use quire_engine::{ColumnType, Engine, EngineError, LockMode, Scan, TableDef, Txn, Value};
use sqlparser::ast::{
    self, Assignment, AssignmentTarget, Expr, GroupByExpr, JoinConstraint, JoinOperator,
    LimitClause, ObjectName, OrderByExpr, OrderByKind, OrderByOptions, OrderBySort, Query,
    SelectItem, SetExpr, TableFactor, TableWithJoins,
};

use crate::expr::{
    conform, infer, nullable, truth, AggKind, AggSpec, Cmp, ColInfo, Compiler, Env, Row, E,
};
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
        self.engine.table(&db, &t)
    }

    fn compiler<'b>(
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
        }
    }
}

fn conjuncts(e: &E, out: &mut Vec<E>) {
    crate::stack::grow(|| conjuncts_inner(e, out))
}

fn conjuncts_inner(e: &E, out: &mut Vec<E>) {
    match e {
        E::And(a, b) => {
            conjuncts(a, out);
            conjuncts(b, out);
        }
        other => out.push(other.clone()),
    }
}

// ------------------------------------------------------------------ sources

enum SrcKind {
    Table {
        def: Arc<TableDef>,
        force: Option<String>,
    },
    Rows(Vec<Vec<Value>>),
}

struct Src {
    kind: SrcKind,
    offset: usize,
    width: usize,
    left: bool,
    /// Conjuncts of this source's ON clause (left joins only).
    on: Vec<E>,
    on_ast: Option<Expr>,
}

fn table_cols(t: &TableDef, alias: &str) -> Vec<ColInfo> {
    t.columns
        .iter()
        .map(|c| ColInfo {
            table: alias.to_string(),
            org_table: t.name.clone(),
            db: t.db.clone(),
            name: c.name.clone(),
            org_name: c.name.clone(),
            ty: c.ty,
            nullable: c.nullable,
        })
        .collect()
}

fn add_factor(
    cx: &Ctx,
    txn: &mut Txn,
    f: &TableFactor,
    cols: &mut Vec<ColInfo>,
    srcs: &mut Vec<Src>,
    left: bool,
    on: Option<Expr>,
) -> SqlResult<()> {
    crate::stack::check()?;
    let offset = cols.len();
    match f {
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
                return Err(not_partitioned());
            }
            if sample.is_some() {
                return Err(crate::parse::syntax_error("TABLESAMPLE"));
            }
            let (db, tname) = split_name(name)?;
            let alias_name = alias
                .as_ref()
                .map(|a| a.name.value.clone())
                .unwrap_or_else(|| tname.clone());
            if let Some(d) = &db {
                if let Some((vc, rows)) = (cx.virt)(d, &tname) {
                    for (n, ty) in &vc {
                        cols.push(ColInfo {
                            table: alias_name.clone(),
                            org_table: tname.to_ascii_uppercase(),
                            db: d.clone(),
                            name: n.clone(),
                            org_name: n.clone(),
                            ty: *ty,
                            nullable: true,
                        });
                    }
                    srcs.push(Src {
                        kind: SrcKind::Rows(rows),
                        offset,
                        width: vc.len(),
                        left,
                        on: Vec::new(),
                        on_ast: on,
                    });
                    return Ok(());
                }
            }
            let def = cx.table(name)?;
            let mut force = None;
            for d in index_directives {
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
            let c = table_cols(&def, &alias_name);
            let width = c.len();
            cols.extend(c);
            srcs.push(Src {
                kind: SrcKind::Table { def, force },
                offset,
                width,
                left,
                on: Vec::new(),
                on_ast: on,
            });
        }
        TableFactor::Derived {
            subquery, alias, ..
        } => {
            let Some(alias) = alias else {
                return Err(EngineError::new(
                    1248,
                    "42000",
                    "Every derived table must have its own alias",
                ));
            };
            let rs = select(cx, txn, subquery, None)?;
            for c in &rs.columns {
                cols.push(ColInfo {
                    table: alias.name.value.clone(),
                    org_table: String::new(),
                    db: String::new(),
                    name: c.name.clone(),
                    org_name: c.name.clone(),
                    ty: c.ty,
                    nullable: c.nullable,
                });
            }
            srcs.push(Src {
                kind: SrcKind::Rows(rs.rows),
                offset,
                width: rs.columns.len(),
                left,
                on: Vec::new(),
                on_ast: on,
            });
        }
        TableFactor::NestedJoin {
            table_with_joins, ..
        } => {
            if !table_with_joins.joins.is_empty() {
                return Err(EngineError::not_supported("nested joins"));
            }
            add_factor(cx, txn, &table_with_joins.relation, cols, srcs, left, on)?;
        }
        _ => return Err(EngineError::not_supported("this kind of table reference")),
    }
    Ok(())
}

fn build_sources(
    cx: &Ctx,
    txn: &mut Txn,
    from: &[TableWithJoins],
) -> SqlResult<(Vec<ColInfo>, Vec<Src>, Vec<Expr>)> {
    let mut cols = Vec::new();
    let mut srcs = Vec::new();
    // ON conditions of inner joins join the WHERE conjuncts.
    let mut inner_on = Vec::new();
    for twj in from {
        add_factor(cx, txn, &twj.relation, &mut cols, &mut srcs, false, None)?;
        for j in &twj.joins {
            let (left, cons) = match &j.join_operator {
                JoinOperator::Join(c) | JoinOperator::Inner(c) => (false, Some(c)),
                // In MySQL CROSS JOIN and STRAIGHT_JOIN (a join-order hint)
                // are inner joins and may carry ON (sqlparser 0.64 parses
                // both; 0.55 did not).
                JoinOperator::CrossJoin(c) | JoinOperator::StraightJoin(c) => (false, Some(c)),
                JoinOperator::Left(c) | JoinOperator::LeftOuter(c) => (true, Some(c)),
                _ => return Err(EngineError::not_supported("this join type")),
            };
            let on = match cons {
                Some(JoinConstraint::On(e)) => Some(e.clone()),
                Some(JoinConstraint::None) | None => None,
                Some(_) => return Err(EngineError::not_supported("JOIN ... USING / NATURAL")),
            };
            if left {
                add_factor(cx, txn, &j.relation, &mut cols, &mut srcs, true, on)?;
            } else {
                add_factor(cx, txn, &j.relation, &mut cols, &mut srcs, false, None)?;
                if let Some(e) = on {
                    inner_on.push(e);
                }
            }
        }
    }
    Ok((cols, srcs, inner_on))
}

// --------------------------------------------------------------------- plan

#[derive(Debug, Clone)]
enum Pred {
    Eq(E),
    In(Vec<E>),
    Lo(E, bool),
    Hi(E, bool),
}

#[derive(Debug, Clone)]
struct Access {
    index: Option<String>,
    /// Equality (or IN) values on the leading columns.
    eq: Vec<Pred>,
    lo: Option<(E, bool)>,
    hi: Option<(E, bool)>,
    point: bool,
}

fn flip(op: Cmp) -> Cmp {
    match op {
        Cmp::Lt => Cmp::Gt,
        Cmp::Le => Cmp::Ge,
        Cmp::Gt => Cmp::Lt,
        Cmp::Ge => Cmp::Le,
        o => o,
    }
}

/// Predicates on column positions of one source, from conjuncts.
fn column_preds(conj: &[E], off: usize, width: usize) -> HashMap<usize, Vec<Pred>> {
    let mut m: HashMap<usize, Vec<Pred>> = HashMap::new();
    let bound = |x: &E| x.max_col().is_none_or(|c| c < off);
    let mine = |i: usize| i >= off && i < off + width;
    for c in conj {
        match c {
            E::Cmp(op, a, b) => {
                let (col, other, op) = match (&**a, &**b) {
                    (E::Col(i), x) if mine(*i) && bound(x) => (*i, x, *op),
                    (x, E::Col(i)) if mine(*i) && bound(x) => (*i, x, flip(*op)),
                    _ => continue,
                };
                let p = match op {
                    Cmp::Eq | Cmp::NullSafeEq => Pred::Eq(other.clone()),
                    Cmp::Lt => Pred::Hi(other.clone(), false),
                    Cmp::Le => Pred::Hi(other.clone(), true),
                    Cmp::Gt => Pred::Lo(other.clone(), false),
                    Cmp::Ge => Pred::Lo(other.clone(), true),
                    Cmp::Ne => continue,
                };
                m.entry(col - off).or_default().push(p);
            }
            E::Between(x, lo, hi, false) => {
                if let E::Col(i) = &**x {
                    if mine(*i) && bound(lo) && bound(hi) {
                        let v = m.entry(i - off).or_default();
                        v.push(Pred::Lo((**lo).clone(), true));
                        v.push(Pred::Hi((**hi).clone(), true));
                    }
                }
            }
            E::InList(x, list, false) => {
                if let E::Col(i) = &**x {
                    if mine(*i) && list.iter().all(bound) && !list.is_empty() {
                        m.entry(i - off).or_default().push(Pred::In(list.clone()));
                    }
                }
            }
            _ => {}
        }
    }
    m
}

fn plan_index(
    cols: &[usize],
    preds: &HashMap<usize, Vec<Pred>>,
    name: Option<String>,
    unique_full: bool,
) -> (i32, Access) {
    let mut acc = Access {
        index: name,
        eq: Vec::new(),
        lo: None,
        hi: None,
        point: false,
    };
    let mut score = 0;
    let mut has_in = false;
    for &c in cols {
        let Some(ps) = preds.get(&c) else { break };
        if let Some(Pred::Eq(e)) = ps.iter().find(|p| matches!(p, Pred::Eq(_))) {
            acc.eq.push(Pred::Eq(e.clone()));
            score += 10;
            continue;
        }
        if !has_in {
            if let Some(Pred::In(l)) = ps.iter().find(|p| matches!(p, Pred::In(_))) {
                if l.len() <= 1000 {
                    acc.eq.push(Pred::In(l.clone()));
                    has_in = true;
                    score += 8;
                    continue;
                }
            }
        }
        for p in ps {
            match p {
                Pred::Lo(e, inc) if acc.lo.is_none() => acc.lo = Some((e.clone(), *inc)),
                Pred::Hi(e, inc) if acc.hi.is_none() => acc.hi = Some((e.clone(), *inc)),
                _ => {}
            }
        }
        if acc.lo.is_some() || acc.hi.is_some() {
            score += 5;
        }
        break;
    }
    if unique_full && acc.eq.len() == cols.len() && !cols.is_empty() {
        score += 100;
        acc.point = !has_in;
    }
    (score, acc)
}

fn choose_access(
    def: &TableDef,
    force: &Option<String>,
    preds: &HashMap<usize, Vec<Pred>>,
) -> Access {
    let mut best: Option<(i32, Access)> = None;
    let mut consider = |s: i32, a: Access| {
        if best.as_ref().is_none_or(|(b, _)| s > *b) {
            best = Some((s, a));
        }
    };
    let forced = |n: &str| force.as_ref().is_none_or(|f| f.eq_ignore_ascii_case(n));
    if !def.has_hidden_pk() && forced("PRIMARY") {
        let (s, a) = plan_index(&def.primary, preds, None, true);
        consider(s + 1, a);
    }
    for i in &def.indexes {
        if forced(&i.name) {
            let (s, a) = plan_index(&i.columns, preds, Some(i.name.clone()), i.unique);
            consider(s, a);
        }
    }
    match best {
        Some((s, a)) if s > 1 => a,
        _ => Access {
            index: force
                .as_ref()
                .filter(|f| !f.eq_ignore_ascii_case("PRIMARY"))
                .cloned(),
            eq: Vec::new(),
            lo: None,
            hi: None,
            point: false,
        },
    }
}

/// Exact coercion of a key value to a column type (None: not exact).
fn exact(v: &Value, ty: &ColumnType) -> Option<Value> {
    let c = quire_engine::types::coerce(v.clone(), ty, true, "key", 1).ok()?;
    (compare(&c, v) == Some(Ordering::Equal)).then_some(c)
}

fn run_access(
    txn: &mut Txn,
    def: &TableDef,
    acc: &Access,
    row: &[Value],
    lock: Option<LockMode>,
    limit: Option<usize>,
) -> SqlResult<Vec<quire_engine::Row>> {
    let r = Row { row, aggs: &[] };
    // Equality prefixes (IN multiplies them).
    let mut prefixes: Vec<Vec<Value>> = vec![Vec::new()];
    for p in &acc.eq {
        match p {
            Pred::Eq(e) => {
                let v = e.eval(&r)?;
                if v.is_null() {
                    return Ok(Vec::new());
                }
                for pr in prefixes.iter_mut() {
                    pr.push(v.clone());
                }
            }
            Pred::In(list) => {
                let mut vals = Vec::new();
                for e in list {
                    let v = e.eval(&r)?;
                    if !v.is_null() && !vals.iter().any(|x| compare(x, &v) == Some(Ordering::Equal))
                    {
                        vals.push(v);
                    }
                }
                let mut next = Vec::new();
                for pr in &prefixes {
                    for v in &vals {
                        let mut p = pr.clone();
                        p.push(v.clone());
                        next.push(p);
                    }
                }
                prefixes = next;
            }
            _ => {}
        }
    }
    let lo = match &acc.lo {
        Some((e, inc)) => {
            let v = e.eval(&r)?;
            if v.is_null() {
                return Ok(Vec::new());
            }
            Some((v, *inc))
        }
        None => None,
    };
    let hi = match &acc.hi {
        Some((e, inc)) => {
            let v = e.eval(&r)?;
            if v.is_null() {
                return Ok(Vec::new());
            }
            Some((v, *inc))
        }
        None => None,
    };
    let mut out = Vec::new();
    let many = prefixes.len() > 1;
    for pr in prefixes {
        if acc.point && acc.index.is_none() {
            let tys = def.pk_types();
            let exact_vals: Option<Vec<Value>> =
                pr.iter().zip(&tys).map(|(v, t)| exact(v, t)).collect();
            if let Some(pk) = exact_vals {
                let got = match lock {
                    Some(m) => txn.get_for(def, &pk, m)?,
                    None => txn.get(def, &pk)?,
                };
                if let Some(values) = got {
                    let key = Txn::encode_pk(def, &pk)?;
                    out.push(quire_engine::Row { key, values });
                }
                continue;
            }
        }
        // Prefix values plus an optional range end on the next column.
        let bound = |end: &Option<(Value, bool)>| match end {
            Some((v, inc)) => {
                let mut k = pr.clone();
                k.push(v.clone());
                if *inc {
                    Bound::Included(k)
                } else {
                    Bound::Excluded(k)
                }
            }
            None if !pr.is_empty() => Bound::Included(pr.clone()),
            None => Bound::Unbounded,
        };
        let lower = bound(&lo);
        let upper = bound(&hi);
        let s = Scan {
            index: acc.index.clone(),
            lower,
            upper,
            reverse: false,
            lock,
            limit: if many { None } else { limit },
        };
        out.extend(txn.scan(def, &s)?);
    }
    Ok(out)
}

// ------------------------------------------------------------------- select

fn passes(conds: &[E], row: &[Value]) -> SqlResult<bool> {
    let r = Row { row, aggs: &[] };
    for c in conds {
        if truth(&c.eval(&r)?) != Some(true) {
            return Ok(false);
        }
    }
    Ok(true)
}

struct JoinPlan {
    /// Per source: access (tables) and the conjuncts checked once it is bound.
    access: Vec<Option<Access>>,
    checks: Vec<Vec<E>>,
    final_checks: Vec<E>,
}

fn plan_join(srcs: &[Src], conj: &[E]) -> JoinPlan {
    let any_left = srcs.iter().any(|s| s.left);
    let mut access = Vec::new();
    let mut checks: Vec<Vec<E>> = vec![Vec::new(); srcs.len()];
    let mut final_checks = Vec::new();
    for (si, s) in srcs.iter().enumerate() {
        let usable: Vec<E> = if s.left {
            s.on.clone()
        } else if any_left {
            Vec::new()
        } else {
            conj.to_vec()
        };
        let a = match &s.kind {
            SrcKind::Table { def, force } => {
                let preds = column_preds(&usable, s.offset, s.width);
                Some(choose_access(def, force, &preds))
            }
            SrcKind::Rows(_) => None,
        };
        access.push(a);
        if s.left {
            checks[si] = s.on.clone();
        }
    }
    for c in conj {
        if any_left {
            final_checks.push(c.clone());
            continue;
        }
        let m = c.max_col();
        let si = match m {
            None => 0,
            Some(col) => srcs
                .iter()
                .position(|s| col < s.offset + s.width)
                .unwrap_or(srcs.len().saturating_sub(1)),
        };
        if srcs.is_empty() {
            final_checks.push(c.clone());
        } else {
            checks[si].push(c.clone());
        }
    }
    JoinPlan {
        access,
        checks,
        final_checks,
    }
}

#[allow(clippy::too_many_arguments)]
fn join_rows(
    txn: &mut Txn,
    srcs: &[Src],
    plan: &JoinPlan,
    si: usize,
    row: &mut Vec<Value>,
    lock: Option<LockMode>,
    limit: Option<usize>,
    out: &mut Vec<Vec<Value>>,
) -> SqlResult<()> {
    if si == srcs.len() {
        if passes(&plan.final_checks, row)? {
            out.push(row.clone());
        }
        return Ok(());
    }
    if limit.is_some_and(|l| out.len() >= l) {
        return Ok(());
    }
    let s = &srcs[si];
    let candidates: Vec<Vec<Value>> = match &s.kind {
        SrcKind::Table { def, .. } => {
            let acc = plan.access[si]
                .as_ref()
                .ok_or_else(|| EngineError::internal("missing access path"))?;
            let scan_limit =
                if srcs.len() == 1 && plan.checks[0].is_empty() && plan.final_checks.is_empty() {
                    limit
                } else {
                    None
                };
            run_access(txn, def, acc, row, lock, scan_limit)?
                .into_iter()
                .map(|r| r.values)
                .collect()
        }
        SrcKind::Rows(rows) => rows.clone(),
    };
    let mut matched = false;
    for vals in candidates {
        // A safe point for KILL QUERY / max_execution_time (interrupt.rs).
        txn.tick()?;
        for (k, v) in vals.into_iter().enumerate().take(s.width) {
            row[s.offset + k] = v;
        }
        if !passes(&plan.checks[si], row)? {
            continue;
        }
        matched = true;
        join_rows(txn, srcs, plan, si + 1, row, lock, limit, out)?;
        if limit.is_some_and(|l| out.len() >= l) {
            break;
        }
    }
    if !matched && s.left {
        for k in 0..s.width {
            row[s.offset + k] = Value::Null;
        }
        join_rows(txn, srcs, plan, si + 1, row, lock, limit, out)?;
    }
    for k in 0..s.width {
        row[s.offset + k] = Value::Null;
    }
    Ok(())
}

#[derive(Clone)]
struct AggState {
    count: i64,
    sum_int: i128,
    sum_dec: Option<Decimal>,
    sum_f: f64,
    kind_num: u8, // 0 int, 1 decimal, 2 double
    best: Value,
    concat: Vec<Vec<u8>>,
    bits: u64,
    seen: HashSet<String>,
    any: bool,
}

impl AggState {
    fn new(kind: AggKind) -> AggState {
        AggState {
            count: 0,
            sum_int: 0,
            sum_dec: None,
            sum_f: 0.0,
            kind_num: 0,
            best: Value::Null,
            concat: Vec::new(),
            bits: if kind == AggKind::BitAnd { u64::MAX } else { 0 },
            seen: HashSet::new(),
            any: false,
        }
    }

    fn add(&mut self, spec: &AggSpec, row: &[Value]) -> SqlResult<()> {
        let v = match &spec.arg {
            None => {
                self.count += 1;
                return Ok(());
            }
            Some(e) => e.eval(&Row { row, aggs: &[] })?,
        };
        if v.is_null() {
            return Ok(());
        }
        if spec.distinct && !self.seen.insert(format!("{v:?}")) {
            return Ok(());
        }
        self.count += 1;
        self.any = true;
        match spec.kind {
            AggKind::Sum | AggKind::Avg => match &v {
                Value::Int(i) if self.kind_num == 0 => {
                    self.sum_int = self
                        .sum_int
                        .checked_add(i128::from(*i))
                        .ok_or_else(|| EngineError::internal("sum overflow"))?
                }
                Value::UInt(u) if self.kind_num == 0 => {
                    self.sum_int = self
                        .sum_int
                        .checked_add(i128::from(*u))
                        .ok_or_else(|| EngineError::internal("sum overflow"))?
                }
                Value::Float(_) | Value::Double(_) | Value::Bytes(_) => {
                    self.kind_num = 2;
                    self.sum_f += v.to_f64().unwrap_or(0.0);
                }
                other => {
                    if self.kind_num == 0 {
                        self.kind_num = 1;
                    }
                    if let Some(d) = other.to_decimal() {
                        let cur = self.sum_dec.take().unwrap_or_else(Decimal::zero);
                        self.sum_dec = Some(cur.checked_add(&d).map_err(EngineError::internal)?);
                    }
                    self.sum_f += other.to_f64().unwrap_or(0.0);
                }
            },
            AggKind::Min | AggKind::Max => {
                let better = self.best.is_null()
                    || match compare(&v, &self.best) {
                        Some(Ordering::Less) => spec.kind == AggKind::Min,
                        Some(Ordering::Greater) => spec.kind == AggKind::Max,
                        _ => false,
                    };
                if better {
                    self.best = v;
                }
            }
            AggKind::GroupConcat => self.concat.push(match v {
                Value::Bytes(b) => b,
                o => o.to_string().into_bytes(),
            }),
            AggKind::BitAnd | AggKind::BitOr => {
                let x = match v {
                    Value::Int(i) => i as u64,
                    Value::UInt(u) => u,
                    o => o.to_f64().unwrap_or(0.0) as u64,
                };
                if spec.kind == AggKind::BitAnd {
                    self.bits &= x;
                } else {
                    self.bits |= x;
                }
            }
            AggKind::Count | AggKind::CountStar => {}
        }
        Ok(())
    }

    fn finish(&self, spec: &AggSpec) -> SqlResult<Value> {
        Ok(match spec.kind {
            AggKind::Count | AggKind::CountStar => Value::Int(self.count),
            AggKind::Sum | AggKind::Avg => {
                if !self.any {
                    return Ok(Value::Null);
                }
                let total = match self.kind_num {
                    0 => Value::Decimal(Decimal::from_mantissa(self.sum_int, 0)),
                    1 => {
                        let d = self.sum_dec.clone().unwrap_or_else(Decimal::zero);
                        let i = Decimal::from_mantissa(self.sum_int, 0);
                        Value::Decimal(d.checked_add(&i).map_err(EngineError::internal)?)
                    }
                    _ => Value::Double(self.sum_f + self.sum_int as f64),
                };
                if spec.kind == AggKind::Sum {
                    total
                } else {
                    match total {
                        Value::Decimal(d) => {
                            let sc = (d.scale() + 4).min(30);
                            Value::Decimal(
                                d.checked_div_scale(&Decimal::from_i64(self.count), sc)
                                    .map_err(EngineError::internal)?,
                            )
                        }
                        other => Value::Double(other.to_f64().unwrap_or(0.0) / self.count as f64),
                    }
                }
            }
            AggKind::Min | AggKind::Max => self.best.clone(),
            AggKind::GroupConcat => {
                if !self.any {
                    Value::Null
                } else {
                    Value::Bytes(self.concat.join(&b","[..]))
                }
            }
            AggKind::BitAnd | AggKind::BitOr => Value::UInt(self.bits),
        })
    }
}

/// A LIMIT or OFFSET value. A `?` is only known at execution: describing
/// a prepared statement (its columns) takes 0. A bound parameter may come
/// as an integer, a string of digits or an integral double (drivers such
/// as node's mysql2 send numbers as doubles); anything else is 1210.
fn eval_limit(cx: &Ctx, e: &Expr) -> SqlResult<usize> {
    let bad = || EngineError::new(1210, "HY000", "Incorrect arguments to LIMIT");
    let is_param = matches!(e, Expr::Value(v) if matches!(v.value, ast::Value::Placeholder(_)));
    if is_param && cx.describe {
        return Ok(0);
    }
    let mut c = cx.compiler(&[], None, "limit clause");
    let v = c.compile(e)?.eval(&Row {
        row: &[],
        aggs: &[],
    })?;
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

/// `LIMIT n [OFFSET m]` / `LIMIT m, n` of a query: (limit, offset).
fn limit_offset(q: &Query) -> SqlResult<(Option<&Expr>, Option<&Expr>)> {
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

/// Whether an ORDER BY item sorts descending. `NULLS FIRST/LAST` is
/// ignored, as it always was (NULLs sort first ascending). PostgreSQL's
/// `USING op` is not MySQL syntax (the parser does not produce it for an
/// ORDER BY today; should it, it is a syntax error).
fn is_desc(o: &OrderByOptions) -> SqlResult<bool> {
    match &o.sort {
        None | Some(OrderBySort::Asc) => Ok(false),
        Some(OrderBySort::Desc) => Ok(true),
        Some(OrderBySort::Using(_)) => Err(crate::parse::syntax_error("USING")),
    }
}

fn sort_cmp(a: &[Value], b: &[Value], desc: &[bool]) -> Ordering {
    for (i, d) in desc.iter().enumerate() {
        let (x, y) = (&a[i], &b[i]);
        let o = match (x.is_null(), y.is_null()) {
            (true, true) => Ordering::Equal,
            (true, false) => Ordering::Less,
            (false, true) => Ordering::Greater,
            _ => compare(x, y).unwrap_or(Ordering::Equal),
        };
        let o = if *d { o.reverse() } else { o };
        if o != Ordering::Equal {
            return o;
        }
    }
    Ordering::Equal
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

/// Runs a query (SELECT, possibly with derived tables).
pub fn select(cx: &Ctx, txn: &mut Txn, q: &Query, lock: Option<LockMode>) -> SqlResult<ResultSet> {
    crate::stack::check()?;
    if q.with.is_some() {
        return Err(EngineError::not_supported(
            "WITH (common table expressions)",
        ));
    }
    if q.fetch.is_some() {
        return Err(EngineError::not_supported("FETCH"));
    }
    // NOWAIT / SKIP LOCKED / OF change which rows a locking read waits
    // for or returns: refused rather than read as a plain locking read.
    if let Some(l) = q
        .locks
        .iter()
        .find(|l| l.nonblock.is_some() || l.of.is_some())
    {
        let what = match (&l.nonblock, &l.of) {
            (Some(ast::NonBlock::Nowait), _) => "NOWAIT",
            (Some(ast::NonBlock::SkipLocked), _) => "SKIP LOCKED",
            _ => "FOR UPDATE/SHARE OF",
        };
        return Err(EngineError::not_supported(what));
    }
    let lock = match q.locks.first() {
        Some(l) => Some(match l.lock_type {
            ast::LockType::Share => LockMode::Shared,
            ast::LockType::Update => LockMode::Exclusive,
        }),
        None => lock,
    };
    let s = match &*q.body {
        SetExpr::Select(s) => s,
        SetExpr::Query(inner) => {
            if q.order_by.is_none() && q.limit_clause.is_none() {
                return select(cx, txn, inner, lock);
            }
            return Err(EngineError::not_supported(
                "ORDER BY/LIMIT around a parenthesized query",
            ));
        }
        SetExpr::SetOperation { .. } => return Err(EngineError::not_supported("UNION")),
        SetExpr::Values(_) => return Err(EngineError::not_supported("VALUES as a query")),
        _ => return Err(EngineError::not_supported("this query form")),
    };
    if s.into.is_some() {
        return Err(EngineError::not_supported("SELECT ... INTO"));
    }
    // Oracle's CONNECT BY / START WITH, which sqlparser 0.64 reads in every
    // dialect (0.55 did not): a syntax error, not a clause to drop.
    if !s.connect_by.is_empty() {
        return Err(crate::parse::syntax_error("CONNECT BY"));
    }
    // Other dialects' clauses that sqlparser reads everywhere: not MySQL
    // syntax, so a syntax error rather than a clause silently dropped.
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
    // MySQL 8 syntax that quire does not implement.
    if !s.named_window.is_empty() {
        return Err(EngineError::not_supported("window functions (WINDOW)"));
    }
    // MySQL's SELECT modifiers (sqlparser 0.64 parses them; with 0.55 they
    // were read as column names). All but SQL_CALC_FOUND_ROWS are hints
    // that do not change the result; that one needs FOUND_ROWS(), which
    // quire does not have.
    if s.select_modifiers
        .as_ref()
        .is_some_and(|m| m.sql_calc_found_rows)
    {
        return Err(EngineError::not_supported("SQL_CALC_FOUND_ROWS"));
    }
    let (cols, srcs, inner_on) = build_sources(cx, txn, &s.from)?;
    // WHERE and inner-join ON conjuncts.
    let mut conj = Vec::new();
    {
        let mut c = cx.compiler(&cols, None, "where clause");
        if let Some(w) = &s.selection {
            conjuncts(&c.compile(w)?, &mut conj);
        }
        c.clause = "on clause";
        for e in &inner_on {
            conjuncts(&c.compile(e)?, &mut conj);
        }
    }
    let mut srcs = srcs;
    for src in srcs.iter_mut() {
        if let Some(on) = src.on_ast.clone() {
            let mut c = cx.compiler(&cols, None, "on clause");
            let mut v = Vec::new();
            conjuncts(&c.compile(&on)?, &mut v);
            src.on = v;
        }
    }
    // Select list.
    let mut aggs: Vec<AggSpec> = Vec::new();
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
                if srcs.is_empty() {
                    return Err(EngineError::new(1096, "HY000", "No tables used"));
                }
                let mut any = false;
                for (i, c) in cols.iter().enumerate() {
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
                let mut c = cx.compiler(&cols, Some(&mut aggs), "field list");
                let ce = c.compile(e)?;
                let meta = match &ce {
                    E::Col(i) => meta_of_col(&cols[*i], &name),
                    other => ColumnMeta {
                        name: name.clone(),
                        org_name: String::new(),
                        table: String::new(),
                        org_table: String::new(),
                        db: String::new(),
                        ty: ColumnType::Int { unsigned: false },
                        nullable: nullable(other, &cols),
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
    // GROUP BY
    let group_exprs: Vec<E> = match &s.group_by {
        GroupByExpr::Expressions(list, mods) => {
            if !mods.is_empty() {
                return Err(EngineError::not_supported("GROUP BY modifiers"));
            }
            let mut v = Vec::new();
            for g in list {
                v.push(resolve_ref(
                    cx,
                    g,
                    &cols,
                    &outs,
                    &aliases,
                    None,
                    "group statement",
                )?);
            }
            v
        }
        GroupByExpr::All(_) => return Err(EngineError::not_supported("GROUP BY ALL")),
    };
    let having = match &s.having {
        Some(h) => Some(resolve_ref(
            cx,
            h,
            &cols,
            &outs,
            &aliases,
            Some(&mut aggs),
            "having clause",
        )?),
        None => None,
    };
    // ORDER BY
    let mut order: Vec<(E, bool)> = Vec::new();
    if let Some(ob) = &q.order_by {
        match &ob.kind {
            OrderByKind::Expressions(list) => {
                for o in list {
                    let e = resolve_ref(
                        cx,
                        &o.expr,
                        &cols,
                        &outs,
                        &aliases,
                        Some(&mut aggs),
                        "order clause",
                    )?;
                    order.push((e, is_desc(&o.options)?));
                }
            }
            OrderByKind::All(_) => return Err(EngineError::not_supported("ORDER BY ALL")),
        }
    }
    let grouped = !aggs.is_empty() || !group_exprs.is_empty();
    let (limit, offset) = limit_offset(q)?;
    let limit = match limit {
        Some(l) => Some(eval_limit(cx, l)?),
        None => None,
    };
    let offset = match offset {
        Some(o) => eval_limit(cx, o)?,
        None => 0,
    };
    let distinct = match &s.distinct {
        // sqlparser 0.64 records an explicit `SELECT ALL`; 0.55 dropped it.
        None | Some(ast::Distinct::All) => false,
        Some(ast::Distinct::Distinct) => true,
        Some(ast::Distinct::On(_)) => return Err(EngineError::not_supported("DISTINCT ON")),
    };
    // Types.
    for (e, m) in outs.iter_mut() {
        if !matches!(e, E::Col(_)) {
            m.ty = infer(e, &cols, &aggs);
        }
    }
    if cx.describe {
        return Ok(ResultSet {
            columns: outs.into_iter().map(|(_, m)| m).collect(),
            rows: Vec::new(),
        });
    }
    // Join.
    let plan = plan_join(&srcs, &conj);
    let pushdown = if !grouped && !distinct && order.is_empty() && having.is_none() {
        limit.map(|l| l.saturating_add(offset))
    } else {
        None
    };
    let mut rows = Vec::new();
    let width = cols.len();
    if srcs.is_empty() {
        if passes(&conj, &[])? {
            rows.push(Vec::new());
        }
    } else if pushdown != Some(0) {
        let mut row = vec![Value::Null; width];
        join_rows(txn, &srcs, &plan, 0, &mut row, lock, pushdown, &mut rows)?;
    }
    // Project (and group).
    let mut produced: Vec<(Vec<Value>, Vec<Value>)> = Vec::new();
    let emit = |row: &[Value],
                aggv: &[Value],
                produced: &mut Vec<(Vec<Value>, Vec<Value>)>|
     -> SqlResult<()> {
        let r = Row { row, aggs: aggv };
        if let Some(h) = &having {
            if truth(&h.eval(&r)?) != Some(true) {
                return Ok(());
            }
        }
        let mut o = Vec::with_capacity(outs.len());
        for (e, m) in &outs {
            o.push(conform(e.eval(&r)?, &m.ty));
        }
        let mut k = Vec::with_capacity(order.len());
        for (e, _) in &order {
            k.push(e.eval(&r)?);
        }
        produced.push((o, k));
        Ok(())
    };
    if grouped {
        let mut groups: Vec<(Vec<Value>, Vec<AggState>)> = Vec::new();
        let mut index: HashMap<String, usize> = HashMap::new();
        for row in rows {
            let r = Row {
                row: &row,
                aggs: &[],
            };
            let mut key = String::new();
            for g in &group_exprs {
                key.push_str(&format!("{:?}\u{1}", g.eval(&r)?));
            }
            let gi = match index.get(&key) {
                Some(&i) => i,
                None => {
                    groups.push((
                        row.clone(),
                        aggs.iter().map(|a| AggState::new(a.kind)).collect(),
                    ));
                    index.insert(key, groups.len() - 1);
                    groups.len() - 1
                }
            };
            for (st, spec) in groups[gi].1.iter_mut().zip(&aggs) {
                st.add(spec, &row)?;
            }
        }
        if groups.is_empty() && group_exprs.is_empty() {
            groups.push((
                vec![Value::Null; width],
                aggs.iter().map(|a| AggState::new(a.kind)).collect(),
            ));
        }
        if !group_exprs.is_empty() && order.is_empty() {
            // MySQL 8 does not sort GROUP BY output, but results in group
            // key order are what users expect from an index-ordered scan.
        }
        for (row, states) in groups {
            let vals = states
                .iter()
                .zip(&aggs)
                .map(|(s, a)| s.finish(a))
                .collect::<SqlResult<Vec<_>>>()?;
            emit(&row, &vals, &mut produced)?;
        }
    } else {
        for row in &rows {
            emit(row, &[], &mut produced)?;
        }
    }
    if distinct {
        let mut seen = HashSet::new();
        produced.retain(|(o, _)| seen.insert(format!("{o:?}")));
    }
    if !order.is_empty() {
        let desc: Vec<bool> = order.iter().map(|(_, d)| *d).collect();
        let t: &Txn = txn;
        crate::sort::sort_stoppable(
            &mut produced,
            |a, b| sort_cmp(&a.1, &b.1, &desc),
            || t.tick(),
        )?;
    }
    let rows: Vec<Vec<Value>> = produced
        .into_iter()
        .skip(offset)
        .take(limit.unwrap_or(usize::MAX))
        .map(|(o, _)| o)
        .collect();
    Ok(ResultSet {
        columns: outs.into_iter().map(|(_, m)| m).collect(),
        rows,
    })
}

fn meta_of_col(c: &ColInfo, name: &str) -> ColumnMeta {
    ColumnMeta {
        name: name.to_string(),
        org_name: c.org_name.clone(),
        table: c.table.clone(),
        org_table: c.org_table.clone(),
        db: c.db.clone(),
        ty: c.ty,
        nullable: c.nullable,
    }
}

/// ORDER BY / GROUP BY / HAVING item: a position, an output alias, or an
/// expression over the sources.
fn resolve_ref(
    cx: &Ctx,
    e: &Expr,
    cols: &[ColInfo],
    outs: &[(E, ColumnMeta)],
    aliases: &[String],
    aggs: Option<&mut Vec<AggSpec>>,
    clause: &'static str,
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
    let mut c = cx.compiler(cols, aggs, clause);
    c.aliases = Some((aliases, &exprs));
    c.compile(e)
}

// ------------------------------------------------------------------- writes

pub struct WriteResult {
    pub affected: u64,
    pub last_insert_id: Option<u64>,
    pub info: String,
}

fn single_table(cx: &Ctx, twj: &TableWithJoins) -> SqlResult<(Arc<TableDef>, String)> {
    if !twj.joins.is_empty() {
        return Err(EngineError::not_supported("multi-table UPDATE/DELETE"));
    }
    match &twj.relation {
        TableFactor::Table { name, alias, .. } => {
            let t = cx.table(name)?;
            let a = alias
                .as_ref()
                .map(|a| a.name.value.clone())
                .unwrap_or_else(|| t.name.clone());
            Ok((t, a))
        }
        _ => Err(EngineError::not_supported(
            "UPDATE/DELETE of a derived table",
        )),
    }
}

/// Rows of `t` matching `selection`, read with exclusive locks.
#[allow(clippy::too_many_arguments)]
fn matching_rows(
    cx: &Ctx,
    txn: &mut Txn,
    t: &TableDef,
    cols: &[ColInfo],
    selection: Option<&Expr>,
    order: &[OrderByExpr],
    limit: Option<&Expr>,
) -> SqlResult<Vec<quire_engine::Row>> {
    let mut conj = Vec::new();
    if let Some(w) = selection {
        let mut c = cx.compiler(cols, None, "where clause");
        conjuncts(&c.compile(w)?, &mut conj);
    }
    let preds = column_preds(&conj, 0, cols.len());
    let acc = choose_access(t, &None, &preds);
    let limit = match limit {
        Some(l) => Some(eval_limit(cx, l)?),
        None => None,
    };
    let scan_limit = if conj.is_empty() && order.is_empty() {
        limit
    } else {
        None
    };
    let rows = run_access(txn, t, &acc, &[], Some(LockMode::Exclusive), scan_limit)?;
    let mut out = Vec::new();
    for r in rows {
        if passes(&conj, &r.values)? {
            out.push(r);
        }
    }
    if !order.is_empty() {
        let mut keyed = Vec::new();
        let mut c = cx.compiler(cols, None, "order clause");
        let es = order
            .iter()
            .map(|o| c.compile(&o.expr))
            .collect::<SqlResult<Vec<_>>>()?;
        let desc: Vec<bool> = order
            .iter()
            .map(|o| is_desc(&o.options))
            .collect::<SqlResult<_>>()?;
        for r in out {
            let rr = Row {
                row: &r.values,
                aggs: &[],
            };
            let k = es
                .iter()
                .map(|e| e.eval(&rr))
                .collect::<SqlResult<Vec<_>>>()?;
            keyed.push((k, r));
        }
        let t: &Txn = txn;
        crate::sort::sort_stoppable(&mut keyed, |a, b| sort_cmp(&a.0, &b.0, &desc), || t.tick())?;
        out = keyed.into_iter().map(|(_, r)| r).collect();
    }
    if let Some(l) = limit {
        out.truncate(l);
    }
    Ok(out)
}

fn assignment_cols(t: &TableDef, a: &Assignment) -> SqlResult<usize> {
    let name = match &a.target {
        AssignmentTarget::ColumnName(n) => {
            n.0.last()
                .and_then(|p| p.as_ident())
                .map(|i| i.value.clone())
                .unwrap_or_default()
        }
        AssignmentTarget::Tuple(_) => return Err(EngineError::not_supported("tuple assignment")),
    };
    t.column(&name)
        .ok_or_else(|| crate::expr::err_unknown_column(&name, "field list"))
}

fn same_row(a: &[Value], b: &[Value]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| match (x.is_null(), y.is_null()) {
                (true, true) => true,
                (false, false) => {
                    x == y
                        || compare(x, y) == Some(Ordering::Equal)
                            && std::mem::discriminant(x) == std::mem::discriminant(y)
                }
                _ => false,
            })
}

/// Applies SET assignments to a copy of `old` (left to right, later ones
/// see earlier results, as in MySQL).
/// ON UPDATE CURRENT_TIMESTAMP: a row that changes gets the statement's
/// time in each such column the statement does not assign itself (MySQL:
/// only when some column value actually changes; the caller checks).
fn touch_on_update(t: &TableDef, assigned: &[(usize, E)], new: &mut [Value], stamp: DateTime) {
    for (i, c) in t.columns.iter().enumerate() {
        if let Some(fsp) = c.on_update_now {
            if !assigned.iter().any(|(ci, _)| *ci == i) {
                new[i] = Value::DateTime(crate::expr::truncate_fsp(stamp, fsp));
            }
        }
    }
}

fn apply_assignments(
    t: &TableDef,
    compiled: &[(usize, E)],
    old: &[Value],
    extra: &[Value],
) -> SqlResult<Vec<Value>> {
    let mut new = old.to_vec();
    for (ci, e) in compiled {
        let mut ctxrow = new.clone();
        ctxrow.extend_from_slice(extra);
        let v = e.eval(&Row {
            row: &ctxrow,
            aggs: &[],
        })?;
        let c = &t.columns[*ci];
        new[*ci] = quire_engine::types::coerce(v, &c.ty, c.nullable, &c.name, 1)?;
    }
    Ok(new)
}

#[allow(clippy::too_many_arguments)]
pub fn update(
    cx: &Ctx,
    txn: &mut Txn,
    table: &TableWithJoins,
    assignments: &[Assignment],
    selection: Option<&Expr>,
    order: &[OrderByExpr],
    limit: Option<&Expr>,
) -> SqlResult<WriteResult> {
    let (t, alias) = single_table(cx, table)?;
    let cols = table_cols(&t, &alias);
    let mut compiled = Vec::new();
    for a in assignments {
        let ci = assignment_cols(&t, a)?;
        let mut c = cx.compiler(&cols, None, "field list");
        compiled.push((ci, c.compile(&a.value)?));
    }
    let rows = matching_rows(cx, txn, &t, &cols, selection, order, limit)?;
    let stamp = crate::expr::now_utc_fsp(6);
    let (mut matched, mut changed) = (0u64, 0u64);
    for r in rows {
        // A safe point for KILL QUERY / max_execution_time.
        txn.tick()?;
        matched += 1;
        let mut new = apply_assignments(&t, &compiled, &r.values, &[])?;
        if same_row(&new, &r.values) {
            continue;
        }
        touch_on_update(&t, &compiled, &mut new, stamp);
        if txn.update(&t, &r.key, new)? {
            changed += 1;
        }
    }
    Ok(WriteResult {
        affected: changed,
        last_insert_id: None,
        info: format!("Rows matched: {matched}  Changed: {changed}  Warnings: 0"),
    })
}

pub fn delete(cx: &Ctx, txn: &mut Txn, d: &ast::Delete) -> SqlResult<WriteResult> {
    if !d.tables.is_empty() || d.using.is_some() {
        return Err(EngineError::not_supported("multi-table DELETE"));
    }
    let from = match &d.from {
        ast::FromTable::WithFromKeyword(f) | ast::FromTable::WithoutKeyword(f) => f,
    };
    let [twj] = from.as_slice() else {
        return Err(EngineError::not_supported("multi-table DELETE"));
    };
    let (t, alias) = single_table(cx, twj)?;
    let cols = table_cols(&t, &alias);
    let rows = matching_rows(
        cx,
        txn,
        &t,
        &cols,
        d.selection.as_ref(),
        &d.order_by,
        d.limit.as_ref(),
    )?;
    let mut n = 0;
    for r in rows {
        // A safe point for KILL QUERY / max_execution_time.
        txn.tick()?;
        if txn.delete(&t, &r.key)? {
            n += 1;
        }
    }
    Ok(WriteResult {
        affected: n,
        last_insert_id: None,
        info: String::new(),
    })
}

/// The existing row that conflicts with `vals` on the primary key or a
/// unique index (locked exclusively).
fn find_conflict(
    txn: &mut Txn,
    t: &TableDef,
    vals: &[Value],
) -> SqlResult<Option<quire_engine::Row>> {
    if !t.has_hidden_pk() {
        let pk: Vec<Value> = t.primary.iter().map(|&i| vals[i].clone()).collect();
        if pk.iter().all(|v| !v.is_null()) {
            if let Ok(key) = Txn::encode_pk(t, &pk) {
                if let Some(values) = txn.get_for(t, &pk, LockMode::Exclusive)? {
                    return Ok(Some(quire_engine::Row { key, values }));
                }
            }
        }
    }
    for i in t.indexes.iter().filter(|i| i.unique) {
        let k: Vec<Value> = i.columns.iter().map(|&c| vals[c].clone()).collect();
        if k.iter().any(|v| v.is_null()) {
            continue;
        }
        let s = Scan {
            index: Some(i.name.clone()),
            lower: Bound::Included(k.clone()),
            upper: Bound::Included(k.clone()),
            reverse: false,
            lock: Some(LockMode::Exclusive),
            limit: None,
        };
        for r in txn.scan(t, &s)? {
            let same = i
                .columns
                .iter()
                .zip(&k)
                .all(|(&c, v)| compare(&r.values[c], v) == Some(Ordering::Equal));
            if same {
                return Ok(Some(r));
            }
        }
    }
    Ok(None)
}

/// INSERT, INSERT IGNORE, REPLACE, INSERT ... ON DUPLICATE KEY UPDATE.
/// MySQL's 1747 for a PARTITION (...) clause: quire has no partitioned
/// tables.
fn not_partitioned() -> EngineError {
    EngineError::new(
        1747,
        "HY000",
        "PARTITION () clause on non partitioned table",
    )
}

pub fn insert(cx: &Ctx, txn: &mut Txn, ins: &ast::Insert) -> SqlResult<WriteResult> {
    if ins.partitioned.is_some() {
        return Err(not_partitioned());
    }
    let t = match &ins.table {
        ast::TableObject::TableName(n) => cx.table(n)?,
        _ => return Err(EngineError::not_supported("INSERT INTO a table function")),
    };
    let ncols = t.columns.len();
    // Target positions.
    let targets: Vec<usize> = if ins.columns.is_empty() && ins.assignments.is_empty() {
        (0..ncols).collect()
    } else if !ins.columns.is_empty() {
        let mut v = Vec::new();
        for c in &ins.columns {
            // sqlparser 0.64 reads the column list as object names;
            // quire takes plain column names only (a qualified `t.c` was
            // a syntax error with 0.55 and stays one).
            let name = match c.0.as_slice() {
                [part] => part.as_ident().map(|i| i.value.as_str()),
                _ => None,
            }
            .ok_or_else(|| crate::parse::syntax_error(&c.to_string()))?;
            let p = t
                .column(name)
                .ok_or_else(|| crate::expr::err_unknown_column(name, "field list"))?;
            v.push(p);
        }
        v
    } else {
        Vec::new()
    };
    // Source rows (each value None = DEFAULT).
    let mut src_rows: Vec<Vec<Option<Value>>> = Vec::new();
    if !ins.assignments.is_empty() {
        let mut row = vec![None; ncols];
        for a in &ins.assignments {
            let ci = assignment_cols(&t, a)?;
            let mut c = cx.compiler(&[], None, "field list");
            row[ci] = default_or(&mut c, &a.value)?;
        }
        src_rows.push(row);
    } else {
        let Some(src) = &ins.source else {
            return Err(crate::parse::syntax_error("INSERT"));
        };
        match &*src.body {
            SetExpr::Values(v) => {
                let mut c = cx.compiler(&[], None, "field list");
                for (ri, r) in v.rows.iter().enumerate() {
                    if r.len() != targets.len() {
                        return Err(EngineError::new(
                            1136,
                            "21S01",
                            format!("Column count doesn't match value count at row {}", ri + 1),
                        ));
                    }
                    let mut row = vec![None; ncols];
                    for (k, e) in r.iter().enumerate() {
                        row[targets[k]] = default_or(&mut c, e)?;
                    }
                    src_rows.push(row);
                }
            }
            _ => {
                let rs = select(cx, txn, src, None)?;
                if rs.columns.len() != targets.len() {
                    return Err(EngineError::new(
                        1136,
                        "21S01",
                        "Column count doesn't match value count at row 1",
                    ));
                }
                for r in rs.rows {
                    let mut row = vec![None; ncols];
                    for (k, v) in r.into_iter().enumerate() {
                        row[targets[k]] = Some(v);
                    }
                    src_rows.push(row);
                }
            }
        }
    }
    // ON DUPLICATE KEY UPDATE assignments see the old row, and VALUES(col)
    // the new one (placed after it).
    let cols = table_cols(&t, &t.name);
    let mut dup: Vec<(usize, E)> = Vec::new();
    if let Some(on) = &ins.on {
        match on {
            ast::OnInsert::DuplicateKeyUpdate(list) => {
                for a in list {
                    let ci = assignment_cols(&t, a)?;
                    let mut c = cx.compiler(&cols, None, "field list");
                    c.values_offset = Some(ncols);
                    dup.push((ci, c.compile(&a.value)?));
                }
            }
            _ => return Err(EngineError::not_supported("ON CONFLICT")),
        }
    }
    // DEFAULT CURRENT_TIMESTAMP columns left out (or DEFAULT): the
    // statement's time, the same for every row.
    let stamp = crate::expr::now_utc_fsp(6);
    for (i, c) in t.columns.iter().enumerate() {
        if let Some(fsp) = c.default_now {
            let now = Value::DateTime(crate::expr::truncate_fsp(stamp, fsp));
            for row in src_rows.iter_mut() {
                if row[i].is_none() {
                    row[i] = Some(now.clone());
                }
            }
        }
    }
    let replace = ins.replace_into;
    let n_rows = src_rows.len();
    let mut affected = 0u64;
    let mut first_id: Option<u64> = None;
    let mut skipped = 0u64;
    for row in src_rows {
        let mut attempts = 0;
        loop {
            attempts += 1;
            let sp = txn.savepoint();
            match txn.insert(&t, row.clone()) {
                Ok(ins_res) => {
                    if first_id.is_none() {
                        first_id = ins_res.auto_id;
                    }
                    affected += 1;
                    break;
                }
                Err(e)
                    if e.code == 1062
                        && (replace || !dup.is_empty() || ins.ignore)
                        && attempts < 32 =>
                {
                    txn.rollback_to(sp);
                    let full: Vec<Value> = row
                        .iter()
                        .enumerate()
                        .map(|(i, v)| match v {
                            Some(v) => {
                                let c = &t.columns[i];
                                quire_engine::types::coerce(v.clone(), &c.ty, true, &c.name, 1)
                                    .unwrap_or(Value::Null)
                            }
                            None => t.columns[i].default.clone().unwrap_or(Value::Null),
                        })
                        .collect();
                    if ins.ignore && dup.is_empty() && !replace {
                        skipped += 1;
                        break;
                    }
                    let Some(old) = find_conflict(txn, &t, &full)? else {
                        return Err(e);
                    };
                    if replace {
                        txn.delete(&t, &old.key)?;
                        affected += 1;
                        continue;
                    }
                    let mut new = apply_assignments(&t, &dup, &old.values, &full)?;
                    if !same_row(&new, &old.values) {
                        touch_on_update(&t, &dup, &mut new, stamp);
                        txn.update(&t, &old.key, new)?;
                        affected += 2;
                    }
                    break;
                }
                Err(e) => return Err(e),
            }
        }
    }
    let info = if n_rows > 1 {
        format!(
            "Records: {}  Duplicates: {}  Warnings: {}",
            affected + skipped,
            skipped,
            skipped
        )
    } else {
        String::new()
    };
    Ok(WriteResult {
        affected,
        last_insert_id: first_id,
        info,
    })
}

fn default_or(c: &mut Compiler, e: &Expr) -> SqlResult<Option<Value>> {
    if let Expr::Identifier(i) = e {
        if i.quote_style.is_none() && i.value.eq_ignore_ascii_case("DEFAULT") {
            return Ok(None);
        }
    }
    Ok(Some(c.compile(e)?.eval(&Row {
        row: &[],
        aggs: &[],
    })?))
}
