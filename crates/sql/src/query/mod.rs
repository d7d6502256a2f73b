//! # The query engine: bind → plan → optimize → operators
//!
//! A SELECT (and every query nested in one: subqueries, derived tables,
//! CTEs, set operations) goes through four layers, each its own module,
//! each importing only the ones before it:
//!
//! ```text
//!   sqlparser AST
//!        │  bind.rs      names, scopes, correlated references, types
//!        ▼
//!   plan.rs  Node tree   Join / Aggregate / Project / Distinct / Sort /
//!        │               Limit / SetOp / Recursive / Values, + Subplans
//!        │  optimize.rs  gate, equality propagation, join order by cost,
//!        ▼               access paths (access.rs), ORDER BY by index, LIMIT
//!   ops.rs   operators   pull-based: next() streams rows from the engine's
//!        │               batched scans (Txn::scan_after) to the result
//!        ▼
//!   RowSink              select_to: each row as produced (the server's
//!                        packets); select: collected (a ResultSet)
//! ```
//!
//! `explain.rs` prints the optimized plan (EXPLAIN, FORMAT=TREE);
//! `hash_join.rs` decides which equalities a hash join may use and holds
//! its build side (in memory, or partitioned to disk);
//! `key.rs` is the hash key of GROUP BY / DISTINCT / UNION / IN;
//! `agg.rs` the aggregate states; `window.rs` the window functions;
//! `semijoin.rs` is the optimizer rule that reads a correlated EXISTS once
//! into a key set when no index serves its correlation.
//!
//! The write statements (`exec.rs`) use `access.rs` to find their rows
//! and [`select`] for INSERT ... SELECT; this module never imports them.

pub mod access;
pub mod agg;
pub mod bind;
pub mod explain;
pub mod fullgroup;
pub mod hash_join;
pub mod key;
pub mod locking;
pub mod named_windows;
pub mod ops;
pub mod optimize;
pub mod plan;
pub mod semijoin;
pub mod window;

use quire_engine::{LockMode, Txn, Value};
use sqlparser::ast::Query;

use crate::ctx::{Ctx, ResultSet};
use crate::expr::{conform_stored, OuterScope};
use crate::{ColumnMeta, RowSink, SqlResult};
use bind::Binder;
use ops::{Ex, Shared};
use plan::{Node, Plan};

/// Binds and optimizes a query.
pub fn plan(cx: &Ctx, q: &Query, lock: Option<LockMode>) -> SqlResult<(Plan, bool)> {
    let mut b = Binder::new(cx);
    let bound = b.bind_query(q, &OuterScope::default(), lock.map(plan::ReadLock::waiting))?;
    let any_limit = b.any_limit;
    let mut plan = Plan {
        root: bound.node,
        columns: bound.columns,
        subplans: b.subplans,
    };
    if !cx.describe {
        optimize::optimize(&mut plan, cx.engine);
    }
    Ok((plan, any_limit))
}

/// Runs a query (SELECT, set operation, VALUES, WITH ...), collecting
/// its rows.
pub fn select(cx: &Ctx, txn: &mut Txn, q: &Query, lock: Option<LockMode>) -> SqlResult<ResultSet> {
    let mut sink = Collect::default();
    select_to(cx, txn, q, lock, &mut sink)?;
    Ok(ResultSet {
        columns: sink.columns,
        rows: sink.rows,
    })
}

/// Runs a query, handing each row to `sink` as the operators produce
/// it (nothing is collected here). Returns the number of rows.
pub fn select_to(
    cx: &Ctx,
    txn: &mut Txn,
    q: &Query,
    lock: Option<LockMode>,
    sink: &mut dyn RowSink,
) -> SqlResult<u64> {
    let (plan, any_limit) = plan(cx, q, lock)?;
    if !cx.describe {
        // Every table's metadata lock before the first row goes out: a
        // DDL that replaced one since it was bound is 1615 here, and the
        // statement runs again with nothing sent (see mdl.rs).
        for t in cx.opened.take() {
            txn.open_table(&t)?;
        }
    }
    sink.columns(&plan.columns)?;
    if cx.describe {
        return Ok(0);
    }
    let sh = Shared::new(cx, &plan.subplans, any_limit);
    let mut ex = Ex {
        txn,
        sh: &sh,
        outer: &[],
    };
    // A block's Project already gave each value its column's type; rows
    // of set operations and VALUES get the merged type here.
    let conform_here = !ends_in_project(&plan.root);
    let mut op = ops::build(&plan.root);
    let mut n = 0u64;
    while let Some(mut r) = op.next(&mut ex)? {
        if conform_here {
            for (v, c) in r.iter_mut().zip(&plan.columns) {
                let x = std::mem::replace(v, Value::Null);
                *v = conform_stored(x, &c.ty);
            }
        }
        sink.row(r)?;
        n += 1;
    }
    Ok(n)
}

/// A sink that keeps everything (the materialised path).
#[derive(Default)]
struct Collect {
    columns: Vec<ColumnMeta>,
    rows: Vec<Vec<Value>>,
}

impl RowSink for Collect {
    fn columns(&mut self, columns: &[ColumnMeta]) -> SqlResult<()> {
        self.columns = columns.to_vec();
        Ok(())
    }
    fn row(&mut self, row: Vec<Value>) -> SqlResult<()> {
        self.rows.push(row);
        Ok(())
    }
}

fn ends_in_project(n: &Node) -> bool {
    match n {
        Node::Project { .. } => true,
        Node::Limit { input, .. } | Node::Sort { input, .. } | Node::Distinct { input, .. } => {
            ends_in_project(input)
        }
        _ => false,
    }
}
