//! # The logical plan
//!
//! What `bind` produces and `optimize` rewrites: a tree of nodes, each
//! producing rows (`Vec<Value>`), whose expressions are already compiled
//! (`expr::E`: column positions, parameter values, subquery ids).
//!
//! ```text
//!   Limit(offset, n, visible width)          ORDER BY ... LIMIT
//!     Sort(keys)  / TopN
//!       Distinct(visible width)              SELECT DISTINCT
//!         Project(select list ++ sort keys, HAVING)
//!           Aggregate(group by, aggregates)  GROUP BY / COUNT(*) ...
//!             Join(sources, conjuncts)       FROM ... WHERE ...
//!   SetOp(UNION|INTERSECT|EXCEPT, ALL?) of two plans
//!   Values(rows)                             materialised rows
//! ```
//!
//! The FROM clause of a block is one `Join` node over *sources* (tables,
//! derived tables, CTE references, virtual tables). Every source's columns
//! have a fixed place in the block's row (its `offset`), whatever order
//! the optimizer reads the sources in: expressions never need rewriting
//! when the join order changes. The optimizer fills in `Join::steps`: the
//! order, each source's access path and the conjuncts checked at each
//! step.
//!
//! Subqueries in expressions are separate plans (`Subplan`), numbered in
//! one table per statement; an expression reads one through
//! `E::Subquery { id }`.

use std::sync::Arc;

use quire_engine::{LockMode, LockWait, TableDef, Value};

use crate::expr::{AggSpec, ColInfo, SubKind, E};
use crate::query::access::Access;
use crate::query::key::KeyOf;
use crate::ColumnMeta;

/// A plan node.
#[derive(Debug)]
pub enum Node {
    Join(Box<Join>),
    /// Groups its input. Output: the group's first row (its columns stand
    /// for non-aggregated references, as MySQL without ONLY_FULL_GROUP_BY)
    /// followed by one value per aggregate. Without GROUP BY (`group`
    /// empty) there is exactly one output row.
    Aggregate {
        input: Box<Node>,
        group: Vec<E>,
        aggs: Vec<AggSpec>,
        /// Width of the input rows (where the aggregate values start).
        width: usize,
        /// WITH ROLLUP: super-aggregate rows after each group change.
        rollup: bool,
    },
    /// The select list, then the hidden sort keys; rows failing HAVING are
    /// dropped. `agg_width`: the input is an `Aggregate`'s (row ++ aggs).
    Project {
        input: Box<Node>,
        exprs: Vec<E>,
        having: Option<E>,
        agg_width: Option<usize>,
        /// Result types the select-list values are conformed to.
        types: Vec<quire_engine::ColumnType>,
        /// How many window values end each input row (`Window` below).
        wins: usize,
    },
    /// Window functions: HAVING first (`having`, over an Aggregate's
    /// rows), then each row gets one value per function appended.
    Window {
        input: Box<Node>,
        specs: Vec<crate::expr::WinSpec>,
        having: Option<E>,
        agg_width: Option<usize>,
    },
    /// Drops rows whose first `width` values were seen before.
    Distinct {
        input: Box<Node>,
        width: usize,
        /// How each key column compares (collation, JSON).
        colls: Vec<KeyOf>,
    },
    /// Sorts by the given columns (position, descending). `top`: only the
    /// first `top` rows are needed (ORDER BY ... LIMIT).
    Sort {
        input: Box<Node>,
        keys: Vec<(usize, bool)>,
        top: Option<usize>,
    },
    /// Skips `offset` rows, passes `limit`, keeps the first `width` values.
    Limit {
        input: Box<Node>,
        offset: usize,
        limit: Option<usize>,
        width: usize,
    },
    SetOp {
        op: SetOpKind,
        all: bool,
        left: Box<Node>,
        right: Box<Node>,
        /// How each column compares (collation, JSON).
        colls: Vec<KeyOf>,
    },
    /// A recursive CTE: `anchor` once, then `step` over the rows the
    /// previous round produced until a round produces none.
    Recursive {
        id: usize,
        anchor: Box<Node>,
        step: Box<Node>,
        distinct: bool,
    },
    /// Rows known at plan time (virtual tables, VALUES, SELECT without
    /// FROM is a Join without sources).
    Values(Arc<Vec<Vec<Value>>>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SetOpKind {
    Union,
    Intersect,
    Except,
}

/// One FROM clause.
#[derive(Debug)]
pub struct Join {
    pub sources: Vec<Source>,
    /// Width of the block's row (all sources' columns).
    pub width: usize,
    /// WHERE and inner-join ON conjuncts.
    pub conj: Vec<E>,
    /// Filled by the optimizer: the sources in reading order.
    pub steps: Vec<Step>,
    /// Conjuncts without columns, checked once before reading anything.
    pub gate: Vec<E>,
    /// Filled by the optimizer: rows the consumer needs at most (LIMIT
    /// pushed down through nothing that drops or reorders rows).
    pub limit: Option<usize>,
    /// Locking read mode (FOR UPDATE / FOR SHARE) of the block's tables.
    pub lock: Option<ReadLock>,
    /// Each column of the block's row: its type and its qualified name
    /// (`t1.a`), for the hash join's key check and EXPLAIN.
    pub col_types: Vec<quire_engine::ColumnType>,
    pub col_names: Vec<String>,
}

/// How a locking read locks a source's rows: the mode, and what it does
/// about rows another transaction holds (wait, NOWAIT, SKIP LOCKED).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadLock {
    pub mode: LockMode,
    pub wait: LockWait,
}

impl ReadLock {
    /// A locking read that waits for rows others hold.
    pub fn waiting(mode: LockMode) -> ReadLock {
        ReadLock {
            mode,
            wait: LockWait::Wait,
        }
    }
}

#[derive(Debug)]
pub struct Source {
    /// Alias (or table name) the source is referred to by.
    pub name: String,
    pub kind: SourceKind,
    pub offset: usize,
    pub width: usize,
    /// The right side of a LEFT JOIN (or the left side of a RIGHT JOIN):
    /// its ON conjuncts decide a match; no match gives one NULL row.
    pub outer_on: Option<Vec<E>>,
    /// Sources that must be read before this one (a LEFT JOIN's left side).
    pub after: Vec<usize>,
    /// The lock this source's rows are read with, instead of
    /// `Join::lock` (a multi-table UPDATE/DELETE: its targets exclusive,
    /// the tables it only reads shared; FOR UPDATE OF / FOR SHARE OF).
    pub lock: Option<ReadLock>,
    /// A multi-table UPDATE/DELETE target: where in the block's row
    /// (past its columns, `Join::width` includes it) the engine key of
    /// this source's current row goes, as `Value::Bytes` (NULL for the
    /// NULL row of an outer join).
    pub key_slot: Option<usize>,
}

#[derive(Debug)]
pub enum SourceKind {
    Table {
        def: Arc<TableDef>,
        /// USE/FORCE INDEX.
        force: Option<String>,
    },
    /// Materialised rows (virtual tables).
    Rows(Arc<Vec<Vec<Value>>>),
    /// A derived table, view or CTE reference: its plan runs once per
    /// statement, at first use.
    Derived(Box<Node>),
    /// A LATERAL derived table: its plan reads the sources before it in
    /// the FROM (its outer row is the block's outer row followed by the
    /// join row up to its offset) and runs again for each of their rows.
    /// Joined after all of them (`Source::after`).
    Lateral {
        node: Box<Node>,
        /// The join-row columns it reads (they must be decoded).
        reads: Vec<usize>,
    },
    /// The rows of the previous round of recursive CTE `id`.
    Working(usize),
}

impl SourceKind {
    /// A parenthesised join block bound as one source (`Binder::
    /// nested_block`: the right side of an outer join, or the left operand
    /// of a RIGHT JOIN): part of the FROM, not a derived table.
    pub fn join_block(&self) -> Option<&Join> {
        match self {
            SourceKind::Derived(n) => match &**n {
                Node::Join(j) => Some(j),
                _ => None,
            },
            _ => None,
        }
    }
}

/// One source read by the join, in order.
#[derive(Debug)]
pub struct Step {
    pub source: usize,
    /// Base tables only.
    pub access: Option<Access>,
    /// Conjuncts checked once this step's row is in place (for an outer
    /// source, after the match decision: they see the NULL row too).
    pub filter: Vec<E>,
    /// Estimated rows this step produces per row of the previous steps.
    pub fanout: f64,
    /// Rows to ask the engine for at most (LIMIT pushed to the scan).
    pub scan_limit: Option<usize>,
    /// Base tables only: the columns the block uses (None = all); the
    /// engine decodes only these, the others read as NULL. Set by the
    /// optimizer's last rule (`prune_columns`).
    pub columns: Option<Vec<bool>>,
    /// Base tables only: the engine gives JSON columns as stored (binary,
    /// `JsonForm::Stored`) rather than printed, because every read of
    /// them in the block is a JSON function that walks the binary form
    /// in place (`Func::reads_stored_json`). Set by `prune_columns`.
    pub json_stored: bool,
    /// Set by the optimizer when this step is a hash join: its source is
    /// read once into a hash table on `HashJoin::build`, and each row of
    /// the steps before looks its candidates up by `HashJoin::probe`.
    pub hash: Option<HashJoin>,
}

/// The equi-join keys of a hash-join step. Only the candidates are taken
/// from the table: the step's filter (or ON) still checks every
/// conjunct, equalities included.
#[derive(Debug, Clone)]
pub struct HashJoin {
    /// Key expressions over the step's own source (the build side).
    pub build: Vec<E>,
    /// The matching expressions over the sources read before it.
    pub probe: Vec<E>,
    /// Per key: `<=>` (NULL matches NULL) rather than `=`.
    pub null_safe: Vec<bool>,
    /// The equalities as EXPLAIN prints them (`t2.a = t1.a`).
    pub text: String,
}

/// A subquery used as a value, bound once per statement.
#[derive(Debug)]
pub struct Subplan {
    pub node: Node,
    /// Outer values it reads (empty: evaluated once, cached).
    pub correlated: bool,
    /// How the expression around it uses it (EXISTS, IN, a scalar, ...).
    pub kind: SubKind,
    /// Set by the optimizer (`semijoin.rs`): a correlated EXISTS read once
    /// into a set of keys (`node` then yields the inner key columns), each
    /// enclosing row looking its own key up.
    pub lookup: Option<SemiLookup>,
}

/// A decorrelated EXISTS: the enclosing row's side of each correlated
/// equality, in the order of the keys `Subplan::node` yields.
#[derive(Debug)]
pub struct SemiLookup {
    /// Expressions over the subquery's outer row (`E::Outer`).
    pub outer_keys: Vec<E>,
    /// The inner key columns as EXPLAIN prints them (`t2.a, t2.b`).
    pub text: String,
}

/// A bound, optimized statement.
#[derive(Debug)]
pub struct Plan {
    pub root: Node,
    pub columns: Vec<ColumnMeta>,
    pub subplans: Vec<Subplan>,
}

/// The columns a block exposes (its select list) to an enclosing block.
pub fn exposed_cols(columns: &[ColumnMeta], alias: &str) -> Vec<ColInfo> {
    columns
        .iter()
        .map(|c| ColInfo {
            table: alias.to_string(),
            org_table: String::new(),
            db: String::new(),
            name: c.name.clone(),
            org_name: c.name.clone(),
            ty: c.ty.clone(),
            nullable: c.nullable,
            hidden: false,
        })
        .collect()
}
