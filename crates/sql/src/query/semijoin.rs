//! # Semi-join decorrelation: a correlated EXISTS read once
//!
//! A correlated subquery runs again for every row of the block around it.
//! When it is `EXISTS (SELECT ... FROM t2 WHERE t2.a = t1.a AND ...)` and
//! `t2.a` leads no index, each run is a full scan of `t2`, and the query
//! costs rows(t1) × rows(t2). MySQL turns such a subquery into a semi-join
//! and, without a usable index, runs it by *materialization*: the subquery
//! without its correlated equalities is read once into a temporary table
//! keyed by the inner columns, and each outer row looks its key up.
//!
//! This rule does the same, as an execution strategy of the subquery
//! (the enclosing expression still asks "does a row exist?"):
//!
//! ```text
//!   before:  for each t1 row:  scan t2, keep rows with t2.a = t1.a AND rest
//!   after:   once:             scan t2, keep rows with rest, insert key (t2.a)
//!            for each t1 row:  EXISTS  <=>  key (t1.a) is in the set
//! ```
//!
//! It applies only where the answers are the same by construction:
//!
//! * the subquery is used by EXISTS (two-valued: a NULL key matches
//!   nothing, as `t2.a = NULL` is never true), is one block (a Project
//!   over a Join, under ORDER BY or a LIMIT that is not 0 and no OFFSET)
//!   over base tables, without a locking read;
//! * every reference to the enclosing row is one side of a top-level
//!   equality `inner_column = outer_column` whose types compare by hash
//!   key exactly (`hash_join::hashable`), and appears nowhere else;
//! * nothing in it is evaluated for its side effects or differs between
//!   runs (user variables, RAND, SLEEP, UUID, BENCHMARK, nested subqueries);
//! * no inner key column leads an index (the primary key included): then
//!   the per-row index lookup is already cheap and is kept.
//!
//! The select list is not evaluated by EXISTS in MySQL either; it is
//! replaced by the key columns. EXPLAIN shows the subquery as
//! `MATERIALIZED` (FORMAT=TREE: a hash lookup on the keys).

use quire_engine::{ColumnType, TableDef};

use crate::expr::{Cmp, SubKind, E, F};
use crate::func::Func;
use crate::query::hash_join::hashable;
use crate::query::plan::{Join, Node, SemiLookup, SourceKind, Subplan};

/// Rewrites `sp` into a lookup when the rules above allow it.
pub fn decorrelate(sp: &mut Subplan) {
    if !sp.correlated || sp.kind != SubKind::Exists || sp.lookup.is_some() {
        return;
    }
    let Some(j) = core_join(&sp.node) else {
        return;
    };
    let Some(split) = split_conjuncts(j) else {
        return;
    };
    if split.corr.iter().any(|(col, _)| leads_an_index(j, *col)) {
        return;
    }
    let old = std::mem::replace(&mut sp.node, Node::Values(Default::default()));
    let Some(mut j) = into_core_join(old) else {
        return; // unreachable: core_join accepted the same shape
    };
    j.conj = std::mem::take(&mut j.conj)
        .into_iter()
        .enumerate()
        .filter(|(i, _)| !split.corr_at.contains(i))
        .map(|(_, c)| c)
        .collect();
    let text = split
        .corr
        .iter()
        .map(|(col, _)| j.col_names.get(*col).cloned().unwrap_or_default())
        .collect::<Vec<_>>()
        .join(", ");
    let types: Vec<ColumnType> = split
        .corr
        .iter()
        .map(|(c, _)| j.col_types[*c].clone())
        .collect();
    let exprs = split.corr.iter().map(|(c, _)| E::Col(*c)).collect();
    sp.node = Node::Project {
        input: Box::new(Node::Join(j)),
        exprs,
        having: None,
        agg_width: None,
        types,
        wins: 0,
    };
    sp.lookup = Some(SemiLookup {
        outer_keys: split.corr.into_iter().map(|(_, o)| o).collect(),
        text,
    });
}

/// The Join of a one-block subquery whose row count EXISTS depends on.
fn core_join(node: &Node) -> Option<&Join> {
    match node {
        Node::Limit {
            input,
            offset: 0,
            limit,
            ..
        } if *limit != Some(0) => core_join(input),
        Node::Sort { input, .. } => core_join(input),
        Node::Project {
            input,
            having: None,
            agg_width: None,
            wins: 0,
            ..
        } => match &**input {
            Node::Join(j) => Some(j),
            _ => None,
        },
        _ => None,
    }
}

/// [`core_join`], taking the Join out.
fn into_core_join(node: Node) -> Option<Box<Join>> {
    match node {
        Node::Limit { input, .. } | Node::Sort { input, .. } => into_core_join(*input),
        Node::Project { input, .. } => match *input {
            Node::Join(j) => Some(j),
            _ => None,
        },
        _ => None,
    }
}

struct Split {
    /// (inner column of the block row, outer key expression).
    corr: Vec<(usize, E)>,
    /// Positions in `conj` of the correlated equalities (the rest stay).
    corr_at: Vec<usize>,
}

fn split_conjuncts(j: &Join) -> Option<Split> {
    if j.lock.is_some() || !j.gate.is_empty() {
        return None;
    }
    for s in &j.sources {
        if !matches!(s.kind, SourceKind::Table { .. }) || s.key_slot.is_some() || s.lock.is_some() {
            return None;
        }
        if s.outer_on
            .iter()
            .flatten()
            .any(|e| reads_outer(e) || volatile(e))
        {
            return None;
        }
    }
    let mut split = Split {
        corr: Vec::new(),
        corr_at: Vec::new(),
    };
    for (i, c) in j.conj.iter().enumerate() {
        if let Some(pair) = correlated_eq(c, j) {
            split.corr.push(pair);
            split.corr_at.push(i);
        } else if reads_outer(c) || volatile(c) {
            return None;
        }
    }
    (!split.corr.is_empty()).then_some(split)
}

/// `inner_col = outer_col` (either way round) with hash-comparable types.
fn correlated_eq(c: &E, j: &Join) -> Option<(usize, E)> {
    let E::Cmp(Cmp::Eq, a, b) = c else {
        return None;
    };
    let (col, outer) = match (&**a, &**b) {
        (E::Col(i), o @ E::Outer(..)) | (o @ E::Outer(..), E::Col(i)) => (*i, o),
        _ => return None,
    };
    let E::Outer(_, outer_ty) = outer else {
        return None;
    };
    let inner_ty = j.col_types.get(col)?;
    hashable(inner_ty, outer_ty).then(|| (col, outer.clone()))
}

fn reads_outer(e: &E) -> bool {
    let mut found = false;
    e.walk(&mut |x| found |= matches!(x, E::Outer(..)));
    found
}

/// Parts whose value is not the same on every run, or that act on the
/// session: running them once instead of per row would show.
fn volatile(e: &E) -> bool {
    let mut found = false;
    e.walk(&mut |x| {
        found |= matches!(
            x,
            E::Live(..)
                | E::Subquery { .. }
                | E::Func(
                    F::Rand
                        | F::Sleep
                        | F::GetLock
                        | F::ReleaseLock
                        | F::ReleaseAllLocks
                        | F::IsFreeLock
                        | F::IsUsedLock,
                    _
                )
                | E::Func(F::Lib(Func::Uuid | Func::UuidShort | Func::Benchmark), _)
        )
    });
    found
}

/// Whether block column `col` is the first column of an index of its
/// table (the primary key included).
fn leads_an_index(j: &Join, col: usize) -> bool {
    j.sources.iter().any(|s| match &s.kind {
        SourceKind::Table { def, .. } if col >= s.offset && col < s.offset + s.width => {
            first_columns(def).any(|c| c == col - s.offset)
        }
        _ => false,
    })
}

fn first_columns(def: &TableDef) -> impl Iterator<Item = usize> + '_ {
    def.primary.first().copied().into_iter().chain(
        def.indexes
            .iter()
            .filter_map(|i| i.columns.first().copied()),
    )
}
