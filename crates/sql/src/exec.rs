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
use std::ops::Bound;
use std::sync::Arc;

use quire_engine::types::{compare, DateTime};
use quire_engine::{EngineError, LockMode, Scan, TableDef, Txn, Value};
use sqlparser::ast::{
    self, Assignment, AssignmentTarget, Expr, OrderByExpr, Query, SetExpr, TableFactor,
    TableWithJoins,
};

use crate::constraints::TableChecks;
use crate::expr::{truth, ColInfo, Compiler, Row, E};
use crate::generated::TableGen;
use crate::SqlResult;

pub use crate::ctx::{no_db, split_name, Ctx, ResultSet, Virtual};
use crate::query::access::{choose_access, column_preds, exact, key_ranges, Access};
use crate::query::bind::{self, eval_limit, is_desc, table_cols, Binder};
use crate::query::ops::{Ex, Shared};
use crate::query::optimize::table_estimate;
use crate::query::plan::Subplan;

// ------------------------------------------------------------ row access

/// Runs a query (SELECT, set operations, WITH ...): the query engine.
pub fn select(cx: &Ctx, txn: &mut Txn, q: &Query, lock: Option<LockMode>) -> SqlResult<ResultSet> {
    crate::query::select(cx, txn, q, lock)
}

fn run_access(
    txn: &mut Txn,
    def: &TableDef,
    acc: &Access,
    row: &[Value],
    lock: Option<LockMode>,
    limit: Option<usize>,
) -> SqlResult<Vec<quire_engine::Row>> {
    // The same key ranges the query engine reads (IN multiplies them).
    let Some(ranges) = key_ranges(acc, &Row::new(row, &[]))? else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    let many = ranges.len() > 1;
    for range in ranges {
        if acc.point && acc.index.is_none() {
            let tys = def.pk_types();
            let exact_vals: Option<Vec<Value>> = range
                .prefix
                .iter()
                .zip(&tys)
                .map(|(v, t)| exact(v, t))
                .collect();
            if let Some(pk) = exact_vals {
                let got = match lock {
                    Some(m) => txn.get_for(def, &pk, m)?,
                    None => txn.get(def, &pk)?,
                };
                if let Some(values) = got {
                    let key = txn.encode_session_pk(def, &pk)?;
                    out.push(quire_engine::Row { key, values });
                }
                continue;
            }
        }
        let s = Scan {
            index: acc.index.clone(),
            lower: range.lower,
            upper: range.upper,
            reverse: false,
            lock,
            wait: quire_engine::LockWait::Wait,
            limit: if many { None } else { limit },
        };
        out.extend(txn.scan(def, &s)?);
    }
    if many {
        // A bound the engine cannot encode exactly widens its range, so
        // the ranges of an IN list may overlap: each row once (an UPDATE
        // must not apply twice).
        let mut seen = std::collections::HashSet::new();
        out.retain(|r| seen.insert(r.key.clone()));
    }
    Ok(out)
}

/// Evaluates `e` on `row`, running its subqueries (if any) in `txn`.
fn eval_in(txn: &mut Txn, sh: &Shared, e: &E, row: &[Value]) -> SqlResult<Value> {
    Ex {
        txn,
        sh,
        outer: &[],
    }
    .eval(e, row, &[])
}

fn passes(txn: &mut Txn, sh: &Shared, conds: &[E], row: &[Value]) -> SqlResult<bool> {
    for c in conds {
        if truth(&eval_in(txn, sh, c, row)?) != Some(true) {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Compiles an expression of a write statement; its subqueries are bound
/// by `binder` (the query engine's).
fn compile_with(
    cx: &Ctx,
    binder: &mut Binder,
    cols: &[ColInfo],
    e: &Expr,
    clause: &'static str,
) -> SqlResult<E> {
    let mut c = cx.compiler(cols, None, clause);
    c.binder = Some(binder);
    c.compile(e)
}

/// The subqueries a write statement's expressions bound, optimized. A
/// subquery may not read the table being changed (MySQL's 1093) unless
/// through a derived table, which is materialised first.
fn finish_subqueries(cx: &Ctx, binder: Binder, target: &TableDef) -> SqlResult<Vec<Subplan>> {
    if binder
        .base_tables
        .iter()
        .any(|(d, n)| d.eq_ignore_ascii_case(&target.db) && n.eq_ignore_ascii_case(&target.name))
    {
        return Err(EngineError::new(
            1093,
            "HY000",
            format!(
                "You can't specify target table '{}' for update in FROM clause",
                target.name
            ),
        ));
    }
    let mut subplans = binder.subplans;
    crate::query::optimize::optimize_subplans(&mut subplans, cx.engine);
    Ok(subplans)
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

// ------------------------------------------------------------------- writes

pub struct WriteResult {
    pub affected: u64,
    pub last_insert_id: Option<u64>,
    pub info: String,
    /// Rows found but left as they were (UPDATE's matched-but-unchanged,
    /// ODKU's duplicates set to their own values): a client connected
    /// with CLIENT_FOUND_ROWS counts them as affected.
    pub unchanged: u64,
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

/// Rows of `t` matching the WHERE conjuncts `conj`, read with exclusive
/// locks, in the order of `order` (compiled keys, descending flags).
#[allow(clippy::too_many_arguments)]
fn matching_rows(
    cx: &Ctx,
    txn: &mut Txn,
    sh: &Shared,
    t: &TableDef,
    cols: &[ColInfo],
    conj: &[E],
    order: &[(E, bool)],
    limit: Option<&Expr>,
) -> SqlResult<Vec<quire_engine::Row>> {
    let constant = |e: &E| e.max_col().is_none() && !e.has_subquery();
    let col_ty = |c: usize| cols.get(c).map(|c| c.ty.clone());
    let preds = column_preds(conj, 0, cols.len(), &constant, &col_ty);
    let acc = choose_access(t, &None, &preds, &table_estimate(cx.engine, t));
    let limit = match limit {
        Some(l) => Some(eval_limit(cx, l)?),
        None => None,
    };
    let scan_limit = if conj.is_empty() && order.is_empty() {
        limit
    } else {
        None
    };
    let bounds_row: Vec<Value> = Vec::new();
    let rows = run_access(
        txn,
        t,
        &acc,
        &bounds_row,
        Some(LockMode::Exclusive),
        scan_limit,
    )?;
    let mut out = Vec::new();
    for r in rows {
        if passes(txn, sh, conj, &r.values)? {
            out.push(r);
        }
    }
    if !order.is_empty() {
        let mut keyed = Vec::new();
        let desc: Vec<bool> = order.iter().map(|(_, d)| *d).collect();
        for r in out {
            let mut k = Vec::with_capacity(order.len());
            for (e, _) in order {
                k.push(eval_in(txn, sh, e, &r.values)?);
            }
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

/// WHERE conjuncts and ORDER BY keys (expression, descending).
type WhereOrder = (Vec<E>, Vec<(E, bool)>);

/// WHERE conjuncts and ORDER BY keys of a single-table UPDATE/DELETE.
fn where_and_order(
    cx: &Ctx,
    binder: &mut Binder,
    cols: &[ColInfo],
    selection: Option<&Expr>,
    order: &[OrderByExpr],
) -> SqlResult<WhereOrder> {
    let mut conj = Vec::new();
    if let Some(w) = selection {
        bind::conjuncts(
            compile_with(cx, binder, cols, w, "where clause")?,
            &mut conj,
        );
    }
    let mut keys = Vec::new();
    for o in order {
        keys.push((
            compile_with(cx, binder, cols, &o.expr, "order clause")?,
            is_desc(&o.options)?,
        ));
    }
    Ok((conj, keys))
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

pub(crate) fn same_row(a: &[Value], b: &[Value]) -> bool {
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
pub(crate) fn touch_on_update(
    t: &TableDef,
    assigned: &[(usize, E)],
    new: &mut [Value],
    stamp: DateTime,
) {
    for (i, c) in t.columns.iter().enumerate() {
        if let Some(fsp) = c.on_update_now {
            if !assigned.iter().any(|(ci, _)| *ci == i) {
                new[i] = Value::DateTime(crate::expr::truncate_fsp(stamp, fsp));
            }
        }
    }
}

fn apply_assignments(
    txn: &mut Txn,
    sh: &Shared,
    t: &TableDef,
    compiled: &[(usize, E)],
    old: &[Value],
    extra: &[Value],
) -> SqlResult<Vec<Value>> {
    let mut new = old.to_vec();
    for (ci, e) in compiled {
        let mut ctxrow = new.clone();
        ctxrow.extend_from_slice(extra);
        let v = eval_in(txn, sh, e, &ctxrow)?;
        let c = &t.columns[*ci];
        new[*ci] = crate::tz::coerce_session(v, c, c.nullable, 1)?;
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
    let mut binder = Binder::new(cx);
    let mut compiled = Vec::new();
    for a in assignments {
        let ci = assignment_cols(&t, a)?;
        if !crate::generated::keep_assignment(&t, ci, &a.value)? {
            continue;
        }
        compiled.push((
            ci,
            compile_with(cx, &mut binder, &cols, &a.value, "field list")?,
        ));
    }
    let (conj, keys) = where_and_order(cx, &mut binder, &cols, selection, order)?;
    let checks = view_checks(cx, &mut binder, &t)?;
    let table_checks = TableChecks::compile(cx, &t)?;
    let gen = TableGen::compile(cx, &t)?;
    let subplans = finish_subqueries(cx, binder, &t)?;
    let sh = Shared::new(cx, &subplans, false);
    let rows = matching_rows(cx, txn, &sh, &t, &cols, &conj, &keys, limit)?;
    let stamp = crate::expr::now_local_fsp(6);
    let (mut matched, mut changed) = (0u64, 0u64);
    for r in rows {
        // A safe point for KILL QUERY / max_execution_time.
        txn.tick()?;
        matched += 1;
        let mut new = apply_assignments(txn, &sh, &t, &compiled, &r.values, &[])?;
        gen.recompute(&t, &mut new, matched)?;
        if same_row(&new, &r.values) {
            continue;
        }
        touch_on_update(&t, &compiled, &mut new, stamp);
        gen.recompute(&t, &mut new, matched)?;
        check_view_row(txn, &sh, &checks, &new)?;
        table_checks.verify(&new)?;
        if txn.update(&t, &r.key, new)? {
            changed += 1;
        }
    }
    Ok(WriteResult {
        affected: changed,
        last_insert_id: None,
        info: format!("Rows matched: {matched}  Changed: {changed}  Warnings: 0"),
        unchanged: matched - changed,
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
    let mut binder = Binder::new(cx);
    let (conj, keys) = where_and_order(cx, &mut binder, &cols, d.selection.as_ref(), &d.order_by)?;
    let subplans = finish_subqueries(cx, binder, &t)?;
    let sh = Shared::new(cx, &subplans, false);
    let rows = matching_rows(cx, txn, &sh, &t, &cols, &conj, &keys, d.limit.as_ref())?;
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
        unchanged: 0,
    })
}

/// The CHECK OPTION conditions of a write through a view
/// (`Ctx::view_check`, view_dml.rs), compiled over the base table's row.
fn view_checks(cx: &Ctx, binder: &mut Binder, t: &TableDef) -> SqlResult<Vec<(E, String)>> {
    let Some(vc) = cx.view_check else {
        return Ok(Vec::new());
    };
    let cols = table_cols(t, &vc.alias);
    vc.conds
        .iter()
        .map(|(e, v)| {
            Ok((
                compile_with(cx, binder, &cols, e, "where clause")?,
                v.clone(),
            ))
        })
        .collect()
}

/// MySQL 1369 when a row written through a view fails its CHECK OPTION
/// (NULL fails, as MySQL's check does).
fn check_view_row(
    txn: &mut Txn,
    sh: &Shared,
    checks: &[(E, String)],
    row: &[Value],
) -> SqlResult<()> {
    for (e, v) in checks {
        if truth(&eval_in(txn, sh, e, row)?) != Some(true) {
            return Err(EngineError::new(
                1369,
                "HY000",
                format!("CHECK OPTION failed '{v}'"),
            ));
        }
    }
    Ok(())
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
            if let Ok(key) = txn.encode_session_pk(t, &pk) {
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
            wait: quire_engine::LockWait::Wait,
            limit: None,
        };
        // A column prefix key conflicts on its first N characters.
        let want = i.has_prefix().then(|| quire_engine::index_key(t, i, vals));
        for r in txn.scan(t, &s)? {
            let same = match &want {
                Some(w) => w.is_some() && quire_engine::index_key(t, i, &r.values) == *w,
                None => i
                    .columns
                    .iter()
                    .zip(&k)
                    .all(|(&c, v)| compare(&r.values[c], v) == Some(Ordering::Equal)),
            };
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
    // ON DUPLICATE KEY UPDATE, even when its only assignments were
    // `generated_col = DEFAULT` (dropped: the row is recomputed anyway).
    let odku = matches!(ins.on, Some(ast::OnInsert::DuplicateKeyUpdate(_)));
    // The row alias (INSERT ... AS new) names the inserted columns in
    // statement order; only ON DUPLICATE KEY UPDATE reads it.
    let alias_targets: Vec<usize> = if ins.assignments.is_empty() {
        targets.clone()
    } else {
        ins.assignments
            .iter()
            .map(|a| assignment_cols(&t, a))
            .collect::<SqlResult<_>>()?
    };
    if ins.on.is_none() {
        crate::insert_alias::resolve(ins, &t, &alias_targets, &[])?;
    }
    if let Some(on) = &ins.on {
        match on {
            ast::OnInsert::DuplicateKeyUpdate(list) => {
                let list = crate::insert_alias::resolve(ins, &t, &alias_targets, list)?;
                for a in &list {
                    let ci = assignment_cols(&t, a)?;
                    if !crate::generated::keep_assignment(&t, ci, &a.value)? {
                        continue;
                    }
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
    let stamp = crate::expr::now_local_fsp(6);
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
    let mut check_binder = Binder::new(cx);
    let checks = view_checks(cx, &mut check_binder, &t)?;
    let check_plans = finish_subqueries(cx, check_binder, &t)?;
    let check_sh = Shared::new(cx, &check_plans, false);
    let table_checks = TableChecks::compile(cx, &t)?;
    let gen = TableGen::compile(cx, &t)?;
    let replace = ins.replace_into;
    let n_rows = src_rows.len();
    let mut affected = 0u64;
    let mut first_id: Option<u64> = None;
    let mut skipped = 0u64;
    // Rows REPLACE deleted and rows ON DUPLICATE KEY UPDATE changed
    // (MySQL's "Duplicates" of the info line).
    let mut dups = 0u64;
    let mut unchanged = 0u64;
    for (row_no, mut row) in src_rows.into_iter().enumerate() {
        // Generated columns and DEFAULT expressions (generated.rs).
        gen.complete_insert(&t, &mut row, ins.ignore, row_no as u64 + 1)?;
        let mut attempts = 0;
        loop {
            attempts += 1;
            let sp = txn.savepoint();
            let inserted = txn.insert(&t, row.clone()).and_then(|ins_res| {
                if !checks.is_empty() || !table_checks.is_empty() {
                    // The row as stored: defaults, coercion, AUTO_INCREMENT.
                    let stored = txn.get_by_key(&t, &ins_res.key)?.unwrap_or_default();
                    check_view_row(txn, &check_sh, &checks, &stored)?;
                    table_checks.verify(&stored)?;
                }
                Ok(ins_res)
            });
            match inserted {
                // INSERT IGNORE: a row failing a CHECK or a foreign key is
                // skipped with the error as a warning, as MySQL does.
                Err(e) if ins.ignore && (e.code == 3819 || e.code == 1452) => {
                    txn.rollback_to(sp);
                    crate::func::warn::warn(e.code, e.message);
                    skipped += 1;
                    break;
                }
                Ok(ins_res) => {
                    if first_id.is_none() {
                        first_id = ins_res.auto_id;
                    }
                    affected += 1;
                    break;
                }
                Err(e) if e.code == 1062 && (replace || odku || ins.ignore) && attempts < 32 => {
                    txn.rollback_to(sp);
                    let full: Vec<Value> = row
                        .iter()
                        .enumerate()
                        .map(|(i, v)| match v {
                            Some(v) => {
                                let c = &t.columns[i];
                                crate::tz::coerce_session(v.clone(), c, true, 1)
                                    .unwrap_or(Value::Null)
                            }
                            None => t.columns[i].default.clone().unwrap_or(Value::Null),
                        })
                        .collect();
                    if ins.ignore && !odku && !replace {
                        skipped += 1;
                        break;
                    }
                    let Some(old) = find_conflict(txn, &t, &full)? else {
                        return Err(e);
                    };
                    if replace {
                        txn.delete(&t, &old.key)?;
                        affected += 1;
                        dups += 1;
                        continue;
                    }
                    let no_subqueries = Shared::new(cx, &[], false);
                    let mut new =
                        apply_assignments(txn, &no_subqueries, &t, &dup, &old.values, &full)?;
                    gen.recompute(&t, &mut new, row_no as u64 + 1)?;
                    if same_row(&new, &old.values) {
                        unchanged += 1;
                    } else {
                        touch_on_update(&t, &dup, &mut new, stamp);
                        gen.recompute(&t, &mut new, row_no as u64 + 1)?;
                        check_view_row(txn, &check_sh, &checks, &new)?;
                        table_checks.verify(&new)?;
                        txn.update(&t, &old.key, new)?;
                        affected += 2;
                        dups += 1;
                    }
                    break;
                }
                Err(e) => return Err(e),
            }
        }
    }
    // MySQL's info line: for more than one row, and always after
    // INSERT ... SELECT; IGNORE counts the skipped rows as duplicates
    // (each was a warning), otherwise rows replaced or updated count.
    let from_select = ins.assignments.is_empty()
        && ins
            .source
            .as_ref()
            .is_some_and(|q| !matches!(&*q.body, SetExpr::Values(_)));
    let info = if n_rows > 1 || from_select {
        let dup = if ins.ignore { skipped } else { dups };
        format!("Records: {n_rows}  Duplicates: {dup}  Warnings: {skipped}")
    } else {
        String::new()
    };
    Ok(WriteResult {
        affected,
        last_insert_id: first_id,
        info,
        unchanged,
    })
}

fn default_or(c: &mut Compiler, e: &Expr) -> SqlResult<Option<Value>> {
    if let Expr::Identifier(i) = e {
        if i.quote_style.is_none() && i.value.eq_ignore_ascii_case("DEFAULT") {
            return Ok(None);
        }
    }
    Ok(Some(c.compile(e)?.eval(&Row::new(&[], &[]))?))
}
