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
//!   ResultSet
//! ```
//!
//! `explain.rs` prints the optimized plan (EXPLAIN, FORMAT=TREE);
//! `key.rs` is the hash key of GROUP BY / DISTINCT / UNION / IN;
//! `agg.rs` the aggregate states; `window.rs` the window functions.
//!
//! The write statements (`exec.rs`) use `access.rs` to find their rows
//! and [`select`] for INSERT ... SELECT; this module never imports them.

pub mod access;
pub mod agg;
pub mod bind;
pub mod explain;
pub mod key;
pub mod ops;
pub mod optimize;
pub mod plan;
pub mod window;

use quire_engine::{LockMode, Txn, Value};
use sqlparser::ast::Query;

use crate::ctx::{Ctx, ResultSet};
use crate::expr::{conform, OuterScope};
use crate::SqlResult;
use bind::Binder;
use ops::{Ex, Shared};
use plan::{Node, Plan};

/// Binds and optimizes a query.
pub fn plan(cx: &Ctx, q: &Query, lock: Option<LockMode>) -> SqlResult<(Plan, bool)> {
    let mut b = Binder::new(cx);
    let bound = b.bind_query(q, &OuterScope::default(), lock)?;
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

/// Runs a query (SELECT, set operation, VALUES, WITH ...).
pub fn select(cx: &Ctx, txn: &mut Txn, q: &Query, lock: Option<LockMode>) -> SqlResult<ResultSet> {
    let (plan, any_limit) = plan(cx, q, lock)?;
    if cx.describe {
        return Ok(ResultSet {
            columns: plan.columns,
            rows: Vec::new(),
        });
    }
    let sh = Shared::new(cx, &plan.subplans, any_limit);
    let mut ex = Ex {
        txn,
        sh: &sh,
        outer: &[],
    };
    let mut rows = ops::collect(&plan.root, &mut ex)?;
    // A block's Project already gave each value its column's type; rows
    // of set operations and VALUES get the merged type here.
    if !ends_in_project(&plan.root) {
        for r in rows.iter_mut() {
            for (v, c) in r.iter_mut().zip(&plan.columns) {
                let x = std::mem::replace(v, Value::Null);
                *v = conform(x, &c.ty);
            }
        }
    }
    Ok(ResultSet {
        columns: plan.columns,
        rows,
    })
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
