//! # Multi-table UPDATE and DELETE
//!
//! ```text
//!   UPDATE t1 JOIN t2 ON ... SET t1.a = t2.b, t2.c = ... WHERE ...
//!   UPDATE t1, t2 SET ... WHERE ...              (the parser makes the comma a CROSS JOIN)
//!   DELETE t1, t2 FROM t1 LEFT JOIN t2 ON ... WHERE ...
//!   DELETE FROM t1, t2 USING t1 JOIN t2 ... WHERE ...
//! ```
//!
//! The table references and WHERE are bound by the query binder as one
//! block's `Join` (`Binder::bind_dml_join`), so the rows are found by the
//! query engine: join order by cost, index access paths, outer joins. Two
//! things are added to that join before it is optimized:
//!
//! * each **target** source gets a key slot: a position past the block's
//!   columns where the operator puts the engine key of the row it read
//!   (`plan::Source::key_slot`), which is how the row is then updated or
//!   deleted, tables without a primary key included;
//! * **locks** per source, as InnoDB takes them in a multi-table
//!   statement: target rows are read exclusively (a current read, like a
//!   single-table UPDATE), rows of the tables only read are read with
//!   shared locks at every isolation level (InnoDB uses a consistent read
//!   for them only in single-table UPDATE and INSERT ... SELECT under READ
//!   COMMITTED, not in the multi-table forms).
//!
//! All joined rows are read first, then the changes are applied, so a
//! change never feeds back into the scan that found it. Each target row
//! is changed at most once per statement, by the first joined row that
//! reaches it, however many rows it joins with (MySQL's rule). The SET
//! expressions of a target are evaluated left to right on the joined row,
//! a later one seeing the values the earlier ones gave that target's
//! columns. Rows are written through `Txn::update` / `Txn::delete`, so
//! the binlog's row events are those of single-table statements.
//!
//! MySQL's refusals: ORDER BY / LIMIT with a multi-table UPDATE is 1221
//! (with a multi-table DELETE the grammar has no place for them: 1064); a
//! target that is a derived table is 1288; a target named in DELETE that
//! is not in the FROM list is 1109; a subquery reading a target table is
//! 1093.

use std::collections::HashSet;
use std::sync::Arc;

use quire_engine::{EngineError, LockMode, TableDef, Txn, Value};
use sqlparser::ast::{self, Assignment, AssignmentTarget, Expr, FromTable, OrderByExpr};

use crate::ctx::Ctx;
use crate::exec::{same_row, touch_on_update, WriteResult};
use crate::expr::{ColInfo, E};
use crate::query::bind::Binder;
use crate::query::ops::{Ex, Shared};
use crate::query::plan::{Join, Node, Plan, ReadLock, SourceKind};
use crate::SqlResult;

/// One table a multi-table statement changes.
struct Target {
    /// Its source in the join.
    source: usize,
    def: Arc<TableDef>,
    /// Where its row key is in a joined row.
    slot: usize,
    /// UPDATE: (column index, value), in statement order.
    sets: Vec<(usize, E)>,
}

fn wrong_usage(stmt: &str, clause: &str) -> EngineError {
    EngineError::new(
        1221,
        "HY000",
        format!("Incorrect usage of {stmt} and {clause}"),
    )
}

fn not_updatable(name: &str, stmt: &str) -> EngineError {
    EngineError::new(
        1288,
        "HY000",
        format!("The target table {name} of the {stmt} is not updatable"),
    )
}

/// The join source a target name refers to: its alias (or table name
/// when it has none), optionally qualified by the database.
fn source_named(join: &Join, n: &ast::ObjectName) -> SqlResult<Option<usize>> {
    let (db, name) = crate::ctx::split_name(n)?;
    Ok(join.sources.iter().position(|s| {
        s.name.eq_ignore_ascii_case(&name)
            && match (&db, &s.kind) {
                (None, _) => true,
                (Some(d), SourceKind::Table { def, .. }) => def.db.eq_ignore_ascii_case(d),
                _ => false,
            }
    }))
}

/// The source and column an assignment target names.
fn assigned_column(
    cx: &Ctx,
    join: &Join,
    cols: &[ColInfo],
    a: &Assignment,
) -> SqlResult<(usize, usize)> {
    let AssignmentTarget::ColumnName(n) = &a.target else {
        return Err(EngineError::not_supported("tuple assignment"));
    };
    let parts: Vec<&str> =
        n.0.iter()
            .map(|p| p.as_ident().map(|i| i.value.as_str()))
            .collect::<Option<_>>()
            .ok_or_else(|| crate::parse::syntax_error(&n.to_string()))?;
    let (db, qual, name) = match parts.as_slice() {
        [c] => (None, None, *c),
        [t, c] => (None, Some(*t), *c),
        [d, t, c] => (Some(*d), Some(*t), *c),
        _ => return Err(crate::parse::syntax_error(&n.to_string())),
    };
    let pos = cx
        .compiler(cols, None, "field list")
        .resolve(qual, db, name)?;
    let si = join
        .sources
        .iter()
        .position(|s| pos >= s.offset && pos < s.offset + s.width)
        .ok_or_else(|| EngineError::internal("column outside every source"))?;
    Ok((si, pos - join.sources[si].offset))
}

/// Adds target `si` (once) and returns its index in `targets`.
fn add_target(join: &Join, targets: &mut Vec<Target>, si: usize, stmt: &str) -> SqlResult<usize> {
    if let Some(k) = targets.iter().position(|t| t.source == si) {
        return Ok(k);
    }
    let src = &join.sources[si];
    if src.kind.join_block().is_some() {
        return Err(EngineError::not_supported(format!(
            "{stmt} of a table inside a join block that an outer join null-extends as a whole (here {})",
            src.name
        )));
    }
    let SourceKind::Table { def, .. } = &src.kind else {
        return Err(not_updatable(&src.name, stmt));
    };
    targets.push(Target {
        source: si,
        def: def.clone(),
        slot: 0,
        sets: Vec::new(),
    });
    Ok(targets.len() - 1)
}

/// 1093: a subquery of the statement reads one of its targets.
fn check_subquery_reads(binder: &Binder, from_tables: usize, targets: &[Target]) -> SqlResult<()> {
    for (d, n) in binder.base_tables.iter().skip(from_tables) {
        if let Some(t) = targets
            .iter()
            .find(|t| t.def.db.eq_ignore_ascii_case(d) && t.def.name.eq_ignore_ascii_case(n))
        {
            return Err(EngineError::new(
                1093,
                "HY000",
                format!(
                    "You can't specify target table '{}' for update in FROM clause",
                    t.def.name
                ),
            ));
        }
    }
    Ok(())
}

/// Marks the targets (key slots, exclusive reads) and the tables only
/// read (shared reads), then optimizes and runs the join: every joined
/// row, each ending in the targets' row keys, and the plan (whose
/// subqueries the SET expressions read).
fn read_rows(
    cx: &Ctx,
    txn: &mut Txn,
    mut join: Join,
    targets: &mut [Target],
    subplans: Vec<crate::query::plan::Subplan>,
) -> SqlResult<(Plan, Vec<Vec<Value>>)> {
    for (k, t) in targets.iter_mut().enumerate() {
        t.slot = join.width + k;
        let src = &mut join.sources[t.source];
        src.key_slot = Some(t.slot);
        src.lock = Some(ReadLock::waiting(LockMode::Exclusive));
    }
    join.width += targets.len();
    for s in join.sources.iter_mut() {
        if s.lock.is_none() && matches!(s.kind, SourceKind::Table { .. }) {
            s.lock = Some(ReadLock::waiting(LockMode::Shared));
        }
    }
    let mut plan = Plan {
        root: Node::Join(Box::new(join)),
        columns: Vec::new(),
        subplans,
    };
    crate::query::optimize::optimize(&mut plan, cx.engine);
    let rows = {
        let sh = Shared::new(cx, &plan.subplans, false);
        let mut ex = Ex {
            txn,
            sh: &sh,
            outer: &[],
        };
        crate::query::ops::collect(&plan.root, &mut ex)?
    };
    Ok((plan, rows))
}

/// The engine key of target `t` in joined row `row` (None: the NULL row
/// of an outer join).
fn key_of<'r>(t: &Target, row: &'r [Value]) -> Option<&'r [u8]> {
    match row.get(t.slot) {
        Some(Value::Bytes(k)) => Some(k),
        _ => None,
    }
}

/// Base tables of the FROM clause itself (the first entries of
/// `Binder::base_tables`; the rest were met in subqueries).
fn from_table_count(join: &Join) -> usize {
    join.sources
        .iter()
        .map(|s| match (&s.kind, s.kind.join_block()) {
            (SourceKind::Table { .. }, _) => 1,
            // A join block is part of the FROM, not a subquery.
            (_, Some(j)) => from_table_count(j),
            _ => 0,
        })
        .sum()
}

/// `UPDATE t1 JOIN t2 ... SET ...`.
pub fn update(
    cx: &Ctx,
    txn: &mut Txn,
    u: &ast::Update,
    order: &[OrderByExpr],
    limit: Option<&Expr>,
) -> SqlResult<WriteResult> {
    if !order.is_empty() {
        return Err(wrong_usage("UPDATE", "ORDER BY"));
    }
    if limit.is_some() {
        return Err(wrong_usage("UPDATE", "LIMIT"));
    }
    let mut binder = Binder::new(cx);
    let (join, cols) =
        binder.bind_dml_join(std::slice::from_ref(&u.table), u.selection.as_ref())?;
    let from_tables = from_table_count(&join);
    let mut targets: Vec<Target> = Vec::new();
    for a in &u.assignments {
        let (si, ci) = assigned_column(cx, &join, &cols, a)?;
        let k = add_target(&join, &mut targets, si, "UPDATE")?;
        if !crate::generated::keep_assignment(&targets[k].def, ci, &a.value)? {
            continue;
        }
        let mut c = cx.compiler(&cols, None, "field list");
        c.binder = Some(&mut binder);
        let e = c.compile(&a.value)?;
        targets[k].sets.push((ci, e));
    }
    check_subquery_reads(&binder, from_tables, &targets)?;
    let offsets: Vec<usize> = targets
        .iter()
        .map(|t| join.sources[t.source].offset)
        .collect();
    let (plan, rows) = read_rows(cx, txn, join, &mut targets, binder.subplans)?;
    // The SET values may run subqueries (bound into the plan).
    let sh = Shared::new(cx, &plan.subplans, false);
    apply_updates(cx, txn, &sh, &targets, &offsets, &rows)
}

fn apply_updates(
    cx: &Ctx,
    txn: &mut Txn,
    sh: &Shared,
    targets: &[Target],
    offsets: &[usize],
    rows: &[Vec<Value>],
) -> SqlResult<WriteResult> {
    let stamp = crate::expr::now_local_fsp(6);
    let checks = targets
        .iter()
        .map(|t| crate::constraints::TableChecks::compile(cx, &t.def))
        .collect::<SqlResult<Vec<_>>>()?;
    let gens = targets
        .iter()
        .map(|t| crate::generated::TableGen::compile(cx, &t.def))
        .collect::<SqlResult<Vec<_>>>()?;
    let mut done: Vec<HashSet<Vec<u8>>> = vec![HashSet::new(); targets.len()];
    let (mut matched, mut changed) = (0u64, 0u64);
    for row in rows {
        // A safe point for KILL QUERY / max_execution_time.
        txn.tick()?;
        for (k, t) in targets.iter().enumerate() {
            let Some(key) = key_of(t, row) else { continue };
            if !done[k].insert(key.to_vec()) {
                continue;
            }
            matched += 1;
            let width = t.def.columns.len();
            let old = &row[offsets[k]..offsets[k] + width];
            let mut ctx_row = row.clone();
            let mut new = old.to_vec();
            for (ci, e) in &t.sets {
                let v = Ex {
                    txn: &mut *txn,
                    sh,
                    outer: &[],
                }
                .eval(e, &ctx_row, &[])?;
                let c = &t.def.columns[*ci];
                let v = crate::tz::coerce_session(v, c, c.nullable, 1)?;
                ctx_row[offsets[k] + ci] = v.clone();
                new[*ci] = v;
            }
            gens[k].recompute(&t.def, &mut new, matched)?;
            if same_row(&new, old) {
                continue;
            }
            touch_on_update(&t.def, &t.sets, &mut new, stamp);
            gens[k].recompute(&t.def, &mut new, matched)?;
            checks[k].verify(&new)?;
            if txn.update(&t.def, key, new)? {
                changed += 1;
            }
        }
    }
    Ok(WriteResult {
        affected: changed,
        last_insert_id: None,
        info: format!("Rows matched: {matched}  Changed: {changed}  Warnings: 0"),
        unchanged: matched - changed,
    })
}

/// Whether a DELETE names its targets apart from its table references
/// (`DELETE t1 FROM ...`, `DELETE FROM t1 USING ...`) or joins tables.
pub fn is_multi_delete(d: &ast::Delete) -> bool {
    let from = match &d.from {
        FromTable::WithFromKeyword(f) | FromTable::WithoutKeyword(f) => f,
    };
    !d.tables.is_empty()
        || d.using.is_some()
        || from.len() > 1
        || from.iter().any(|t| !t.joins.is_empty())
}

/// `DELETE t1, t2 FROM ...` / `DELETE FROM t1, t2 USING ...`.
pub fn delete(cx: &Ctx, txn: &mut Txn, d: &ast::Delete) -> SqlResult<WriteResult> {
    if let Some(o) = d.order_by.first() {
        return Err(crate::parse::syntax_error(&format!("ORDER BY {o}")));
    }
    if let Some(l) = &d.limit {
        return Err(crate::parse::syntax_error(&format!("LIMIT {l}")));
    }
    let from = match &d.from {
        FromTable::WithFromKeyword(f) | FromTable::WithoutKeyword(f) => f,
    };
    // `DELETE t1, t2 FROM <join>` or `DELETE FROM t1, t2 USING <join>`.
    let (names, list): (Vec<ast::ObjectName>, &[ast::TableWithJoins]) = match &d.using {
        Some(using) => {
            if !d.tables.is_empty() {
                return Err(crate::parse::syntax_error("USING"));
            }
            let mut names = Vec::new();
            for twj in from {
                match (&twj.relation, twj.joins.is_empty()) {
                    (
                        ast::TableFactor::Table {
                            name, alias: None, ..
                        },
                        true,
                    ) => names.push(name.clone()),
                    _ => return Err(crate::parse::syntax_error(&twj.to_string())),
                }
            }
            (names, using.as_slice())
        }
        None if d.tables.is_empty() => {
            // `DELETE FROM t1 JOIN t2 ...` / `DELETE FROM t1, t2`: the
            // targets must be listed (before FROM, or with USING).
            return Err(crate::parse::syntax_error(
                &from
                    .iter()
                    .map(|t| t.to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
            ));
        }
        None => (d.tables.clone(), from.as_slice()),
    };
    let mut binder = Binder::new(cx);
    let (join, _cols) = binder.bind_dml_join(list, d.selection.as_ref())?;
    let from_tables = from_table_count(&join);
    let mut targets: Vec<Target> = Vec::new();
    for n in &names {
        let si = source_named(&join, n)?.ok_or_else(|| {
            let (_, t) = crate::ctx::split_name(n).unwrap_or((None, n.to_string()));
            EngineError::new(
                1109,
                "42S02",
                format!("Unknown table '{t}' in MULTI DELETE"),
            )
        })?;
        add_target(&join, &mut targets, si, "DELETE")?;
    }
    check_subquery_reads(&binder, from_tables, &targets)?;
    let (_plan, rows) = read_rows(cx, txn, join, &mut targets, binder.subplans)?;
    let mut done: Vec<HashSet<Vec<u8>>> = vec![HashSet::new(); targets.len()];
    let mut n = 0u64;
    for row in &rows {
        txn.tick()?;
        for (k, t) in targets.iter().enumerate() {
            let Some(key) = key_of(t, row) else { continue };
            if done[k].insert(key.to_vec()) && txn.delete(&t.def, key)? {
                n += 1;
            }
        }
    }
    Ok(WriteResult {
        affected: n,
        last_insert_id: None,
        info: String::new(),
        unchanged: 0,
    })
}
