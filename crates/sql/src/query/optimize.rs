//! # Optimize: join order, access paths, predicate placement, LIMIT
//!
//! Rules applied to every `Join` node (and to every subplan and derived
//! table), in this order:
//!
//! 1. **Constant gate.** Conjuncts that read no column of the block
//!    (constants, parameters, outer references, uncorrelated subqueries)
//!    are checked once before anything is read.
//! 2. **Equality propagation.** Inner-join equalities `a.x = b.y` form
//!    classes of columns of one comparison type; a constant equal to one
//!    member is equal to all (`w_id = ? AND c_w_id = w_id` gives
//!    `c_w_id = ?`). The derived equalities only guide access paths: the
//!    original conjuncts are still checked, so they can never change a
//!    result.
//! 3. **Join order by cost.** Every order of up to 7 sources that keeps
//!    each outer join's right side after its left side is costed (rows read
//!    summed over the steps, each step's rows per probe from
//!    `access::choose_access`); the cheapest wins, ties to the written
//!    order. Larger joins keep the written order.
//! 4. **Predicate placement.** Each conjunct is checked at the first step
//!    where every source it reads is in place. Then **hash joins**: a
//!    step whose access uses no column of the steps before (a scan, or a
//!    derived table) and that has hashable equalities with them
//!    (`hash_join::find_keys`) reads its source once into a hash table
//!    when that costs less than one scan per row before it.
//! 5. **MIN/MAX by index.** `MIN(c)` / `MAX(c)` without GROUP BY, where
//!    `c` is the index column right after the access's equality prefix,
//!    reads one row from the start (end) of the range, skipping NULLs,
//!    instead of the whole range (tpcc-mysql's Delivery and Order-Status).
//! 6. **ORDER BY by index, LIMIT push-down.** `ORDER BY` over one table's
//!    index columns (after its equality prefix) reads the index in order
//!    (backwards for DESC) instead of sorting; a LIMIT over a plan that
//!    neither drops nor reorders rows is handed to the join, which then
//!    reads only as many rows as it needs (and a locking read locks only
//!    those).

use std::collections::HashMap;

use quire_engine::{ColumnType, Engine, TableDef};

use crate::expr::{AggKind, AggSpec, Cmp, E, F};
use crate::query::access::{choose_access, column_preds, Access, Pred, TableEstimate};
use crate::query::hash_join::find_keys;
use crate::query::plan::{Join, Node, Plan, SourceKind, Step};

/// Largest join whose orders are all costed.
const MAX_PERMUTED_SOURCES: usize = 7;

/// Optimizes a bound plan in place.
pub fn optimize(plan: &mut Plan, engine: &Engine) {
    optimize_node(&mut plan.root, engine);
    for s in plan.subplans.iter_mut() {
        crate::query::semijoin::decorrelate(s);
        optimize_node(&mut s.node, engine);
    }
    prune_columns(&mut plan.root);
    for s in plan.subplans.iter_mut() {
        prune_columns(&mut s.node);
    }
}

// ------------------------------------------------ rule: columns read

/// The last rule: each base table of a block whose rows go straight into
/// its select list (`Project` over a `Join`, or over an `Aggregate` over
/// one) decodes only the columns something in the block reads: the select
/// list, HAVING, GROUP BY, aggregate arguments, the join's filters and
/// access keys, and the columns correlated subqueries take from the block
/// (their `refs`). `SELECT c FROM sbtest1 WHERE id BETWEEN ? AND ?` then
/// builds no value for `pad` or `k`. Any other shape (windows, a Join
/// read by something else) keeps every column.
fn prune_columns(node: &mut Node) {
    crate::stack::grow(|| prune_inner(node))
}

fn prune_inner(node: &mut Node) {
    match node {
        Node::Project {
            input,
            exprs,
            having,
            ..
        } => {
            let mut used = vec![false; 0];
            let mut reads = JsonReads::default();
            for e in exprs.iter().chain(having.iter()) {
                mark_cols(e, &mut used);
                reads.see(e);
            }
            match &mut **input {
                Node::Join(j) => prune_join(j, used, reads),
                Node::Aggregate {
                    input: inner,
                    group,
                    aggs,
                    ..
                } if matches!(**inner, Node::Join(_)) => {
                    for e in group
                        .iter()
                        .chain(aggs.iter().filter_map(|a| a.arg.as_ref()))
                    {
                        mark_cols(e, &mut used);
                        reads.see(e);
                    }
                    if let Node::Join(j) = &mut **inner {
                        prune_join(j, used, reads);
                    }
                }
                other => prune_inner(other),
            }
        }
        Node::Join(j) => prune_sources(j),
        Node::Aggregate { input, .. }
        | Node::Window { input, .. }
        | Node::Distinct { input, .. }
        | Node::Sort { input, .. }
        | Node::Limit { input, .. } => prune_inner(input),
        Node::SetOp { left, right, .. } => {
            prune_inner(left);
            prune_inner(right);
        }
        Node::Recursive { anchor, step, .. } => {
            prune_inner(anchor);
            prune_inner(step);
        }
        Node::Values(_) => {}
    }
}

/// Derived tables inside a join are blocks of their own.
fn prune_sources(j: &mut Join) {
    for s in j.sources.iter_mut() {
        if let SourceKind::Derived(n) | SourceKind::Lateral { node: n, .. } = &mut s.kind {
            prune_columns(n);
        }
    }
}

/// How a block reads its columns: every read (as `mark_cols` sees them,
/// correlated subqueries' included) and the reads that are the document
/// argument of a JSON function that walks stored binary JSON in place.
#[derive(Default)]
struct JsonReads {
    all: HashMap<usize, usize>,
    in_place: HashMap<usize, usize>,
}

impl JsonReads {
    fn see(&mut self, e: &E) {
        e.for_each_col(&mut |c| *self.all.entry(c).or_default() += 1);
        e.walk(&mut |x| {
            if let E::Func(F::Lib(f), args) = x {
                if let (true, Some(E::Col(c))) = (f.reads_stored_json(), args.first()) {
                    *self.in_place.entry(*c).or_default() += 1;
                }
            }
        });
    }

    /// A read that is not in place (a LATERAL table's).
    fn see_plain(&mut self, c: usize) {
        *self.all.entry(c).or_default() += 1;
    }

    /// Whether block column `c` is read only in place (or not at all).
    fn only_in_place(&self, c: usize) -> bool {
        self.all.get(&c).copied().unwrap_or(0) == self.in_place.get(&c).copied().unwrap_or(0)
    }
}

/// Whether a table source's JSON columns (block columns from `offset`)
/// may come from the engine as stored: each one is read only in place.
fn json_stored_ok(def: &TableDef, offset: usize, reads: &JsonReads) -> bool {
    let mut any = false;
    for (i, c) in def.columns.iter().enumerate() {
        if c.ty == ColumnType::Json {
            if !reads.only_in_place(offset + i) {
                return false;
            }
            any |= reads.all.contains_key(&(offset + i));
        }
    }
    any
}

/// Sets each table step's column mask from `used` plus the join's own
/// expressions, and whether its JSON columns may come as stored.
fn prune_join(j: &mut Join, mut used: Vec<bool>, mut reads: JsonReads) {
    prune_sources(j);
    let own = j.conj.iter().chain(j.gate.iter());
    let steps = j.steps.iter().flat_map(|s| {
        let acc = s.access.iter().flat_map(|a| {
            let eq = a.eq.iter().flat_map(|p| match p {
                Pred::Eq(e, _) | Pred::Lo(e, _) | Pred::Hi(e, _) | Pred::Like(e, _) => vec![e],
                Pred::In(v) => v.iter().collect(),
            });
            eq.chain(a.lo.iter().map(|(e, _)| e))
                .chain(a.hi.iter().map(|(e, _)| e))
        });
        s.filter.iter().chain(acc)
    });
    let outer = j.sources.iter().flat_map(|s| s.outer_on.iter().flatten());
    let hashes = j.steps.iter().filter_map(|s| s.hash.as_ref());
    let hash_keys = hashes.flat_map(|h| h.build.iter().chain(h.probe.iter()));
    for e in own.chain(steps).chain(outer).chain(hash_keys) {
        mark_cols(e, &mut used);
        reads.see(e);
    }
    used.resize(j.width, false);
    for s in &j.sources {
        if let SourceKind::Lateral { reads: lat, .. } = &s.kind {
            for &c in lat {
                reads.see_plain(c);
                if let Some(u) = used.get_mut(c) {
                    *u = true;
                }
            }
        }
    }
    for st in j.steps.iter_mut() {
        let src = &j.sources[st.source];
        let SourceKind::Table { def, .. } = &src.kind else {
            continue;
        };
        st.json_stored = json_stored_ok(def, src.offset, &reads);
        let mask: Vec<bool> = (src.offset..src.offset + src.width)
            .map(|c| used.get(c).copied().unwrap_or(true))
            .collect();
        st.columns = (!mask.iter().all(|&w| w)).then_some(mask);
    }
}

/// Marks the block columns `e` reads (directly, or through a correlated
/// subquery's references).
fn mark_cols(e: &E, used: &mut Vec<bool>) {
    let mut see = |c: usize| {
        if used.len() <= c {
            used.resize(c + 1, false);
        }
        used[c] = true;
    };
    e.for_each_col(&mut see);
}

/// Optimizes the subqueries of a write statement.
pub fn optimize_subplans(subplans: &mut [crate::query::plan::Subplan], engine: &Engine) {
    for s in subplans.iter_mut() {
        crate::query::semijoin::decorrelate(s);
        optimize_node(&mut s.node, engine);
    }
}

fn optimize_node(node: &mut Node, engine: &Engine) {
    crate::stack::grow(|| optimize_inner(node, engine))
}

fn optimize_inner(node: &mut Node, engine: &Engine) {
    match node {
        Node::Join(j) => {
            for s in j.sources.iter_mut() {
                if let SourceKind::Derived(n) | SourceKind::Lateral { node: n, .. } = &mut s.kind {
                    optimize_node(n, engine);
                }
            }
            plan_join(j, engine);
        }
        Node::Aggregate {
            input, group, aggs, ..
        } => {
            optimize_node(input, engine);
            if group.is_empty() {
                min_max_by_index(input, aggs);
            }
        }
        Node::Distinct { input, .. } => optimize_node(input, engine),
        Node::Project { input, .. } | Node::Window { input, .. } => optimize_node(input, engine),
        Node::Sort { input, .. } => optimize_node(input, engine),
        Node::Limit { .. } => {
            if let Node::Limit { input, .. } = node {
                optimize_node(input, engine);
            }
            push_limit(node);
        }
        Node::SetOp { left, right, .. } => {
            optimize_node(left, engine);
            optimize_node(right, engine);
        }
        Node::Recursive { anchor, step, .. } => {
            optimize_node(anchor, engine);
            optimize_node(step, engine);
        }
        Node::Values(_) => {}
    }
}

/// What the optimizer knows about a base table's size: the engine's row
/// count (kept current at commit) and, once the table was analyzed
/// (`ANALYZE TABLE` or automatically), distinct values per index prefix.
pub fn table_estimate(engine: &Engine, def: &TableDef) -> TableEstimate {
    let st = engine.table_stats(def);
    TableEstimate {
        // An empty table is costed as a small one: plans made on an empty
        // table (a freshly created schema) must not be absurd once it fills.
        rows: (st.rows as f64).max(10.0),
        distinct: if st.analyzed {
            st.indexes
                .into_iter()
                .map(|i| (i.name, i.distinct))
                .collect()
        } else {
            Vec::new()
        },
    }
}

/// The comparison class of a column type: equalities propagate only
/// between columns compared the same way.
fn type_class(t: &ColumnType) -> u8 {
    use ColumnType as T;
    match t {
        T::TinyInt { .. }
        | T::SmallInt { .. }
        | T::MediumInt { .. }
        | T::Int { .. }
        | T::BigInt { .. }
        | T::Decimal { .. } => 1,
        T::Float | T::Double => 2,
        T::Char { .. } | T::Varchar { .. } | T::Text { .. } => 3,
        _ => 0,
    }
}

/// Derived equalities (rule 2).
fn propagate(j: &Join, types: &[ColumnType], inner_col: &dyn Fn(usize) -> bool) -> Vec<E> {
    // Union-find over column positions.
    let mut parent: HashMap<usize, usize> = HashMap::new();
    fn find(p: &mut HashMap<usize, usize>, x: usize) -> usize {
        let mut r = x;
        while let Some(&q) = p.get(&r) {
            if q == r {
                break;
            }
            r = q;
        }
        p.insert(x, r);
        r
    }
    let mut consts: Vec<(usize, E)> = Vec::new();
    let class = |i: usize| types.get(i).map_or(0, type_class);
    for c in &j.conj {
        let E::Cmp(Cmp::Eq, a, b) = c else { continue };
        match (&**a, &**b) {
            (E::Col(x), E::Col(y))
                if inner_col(*x) && inner_col(*y) && class(*x) != 0 && class(*x) == class(*y) =>
            {
                let (rx, ry) = (find(&mut parent, *x), find(&mut parent, *y));
                parent.insert(rx, ry);
                parent.entry(ry).or_insert(ry);
            }
            (E::Col(x), k) | (k, E::Col(x))
                if k.max_col().is_none()
                    && !k.has_subquery()
                    && inner_col(*x)
                    && class(*x) != 0 =>
            {
                consts.push((*x, k.clone()));
            }
            _ => {}
        }
    }
    let cols: Vec<usize> = parent.keys().copied().collect();
    let mut out = Vec::new();
    for &x in &cols {
        let rx = find(&mut parent, x);
        for &y in &cols {
            if x < y && find(&mut parent, y) == rx {
                out.push(E::Cmp(Cmp::Eq, Box::new(E::Col(x)), Box::new(E::Col(y))));
            }
        }
        for (c, k) in &consts {
            if *c != x && parent.contains_key(c) && find(&mut parent, *c) == rx {
                // Only between columns of one comparison class: the
                // constant compares with x as it did with c.
                if class(*c) == class(x) {
                    out.push(E::Cmp(Cmp::Eq, Box::new(E::Col(x)), Box::new(k.clone())));
                }
            }
        }
    }
    out
}

fn source_of(j: &Join, col: usize) -> Option<usize> {
    j.sources
        .iter()
        .position(|s| col >= s.offset && col < s.offset + s.width)
}

/// The declared type of a block column that belongs to a base table.
fn column_type(j: &Join, col: usize) -> Option<ColumnType> {
    let s = &j.sources[source_of(j, col)?];
    match &s.kind {
        SourceKind::Table { def, .. } => def.columns.get(col - s.offset).map(|c| c.ty.clone()),
        _ => None,
    }
}

/// The sources an expression reads.
fn sources_read(j: &Join, e: &E) -> Vec<usize> {
    let mut out = Vec::new();
    let mut see = |c: usize| {
        if let Some(s) = source_of(j, c) {
            if !out.contains(&s) {
                out.push(s);
            }
        }
    };
    e.for_each_col(&mut see);
    out
}

/// The best access for source `si` once the sources in `bound` are read.
fn access_for(
    j: &Join,
    si: usize,
    bound: &[bool],
    usable: &[E],
    est: &[Option<TableEstimate>],
) -> Option<Access> {
    let s = &j.sources[si];
    let SourceKind::Table { def, force } = &s.kind else {
        return None;
    };
    let is_bound = |e: &E| sources_read(j, e).iter().all(|&x| bound[x]);
    let col_ty = |c: usize| column_type(j, c);
    let preds: HashMap<usize, Vec<Pred>> =
        column_preds(usable, s.offset, s.width, &is_bound, &col_ty);
    let fallback;
    let e = match &est[si] {
        Some(e) => e,
        None => {
            fallback = TableEstimate {
                rows: 1000.0,
                distinct: Vec::new(),
            };
            &fallback
        }
    };
    Some(choose_access(def, force, &preds, e))
}

/// Rows a non-table source yields.
fn source_rows(j: &Join, si: usize) -> f64 {
    match &j.sources[si].kind {
        SourceKind::Rows(r) => r.len() as f64,
        _ => 100.0,
    }
}

fn plan_join(j: &mut Join, engine: &Engine) {
    let n = j.sources.len();
    let mut types = vec![ColumnType::Double; j.width];
    let est: Vec<Option<TableEstimate>> = j
        .sources
        .iter()
        .map(|s| match &s.kind {
            SourceKind::Table { def, .. } => {
                for (k, c) in def.columns.iter().enumerate() {
                    if let Some(t) = types.get_mut(s.offset + k) {
                        *t = c.ty.clone();
                    }
                }
                Some(table_estimate(engine, def))
            }
            _ => None,
        })
        .collect();
    // Rule 1: the gate.
    let (gate, conj): (Vec<E>, Vec<E>) = std::mem::take(&mut j.conj)
        .into_iter()
        .partition(|c| sources_read(j, c).is_empty());
    j.gate = gate;
    j.conj = conj;
    // Rule 2: derived equalities, over inner sources only.
    let outer_src: Vec<bool> = j.sources.iter().map(|s| s.outer_on.is_some()).collect();
    let inner_col = |c: usize| source_of(j, c).is_some_and(|s| !outer_src[s]);
    let derived = propagate(j, &types, &inner_col);
    let mut inner_usable = j.conj.clone();
    inner_usable.extend(derived);
    // Rule 3: order.
    let order = choose_order(j, &inner_usable, &est);
    // Rule 4: steps with their accesses and filters.
    let mut bound = vec![false; n];
    let mut steps = Vec::with_capacity(n);
    let mut placed = vec![false; j.conj.len()];
    for &si in &order {
        let usable: &[E] = match &j.sources[si].outer_on {
            Some(on) => on,
            None => &inner_usable,
        };
        let access = access_for(j, si, &bound, usable, &est);
        bound[si] = true;
        let mut filter = Vec::new();
        for (k, c) in j.conj.iter().enumerate() {
            if !placed[k] && sources_read(j, c).iter().all(|&x| bound[x]) {
                placed[k] = true;
                filter.push(c.clone());
            }
        }
        let fanout = access
            .as_ref()
            .map_or_else(|| source_rows(j, si), |a| a.est_rows);
        steps.push(Step {
            source: si,
            access,
            filter,
            fanout,
            scan_limit: None,
            columns: None,
            json_stored: false,
            hash: None,
        });
    }
    // Every conjunct reads only sources of this block, so all are placed;
    // keep any stragglers on the last step rather than drop them.
    if let Some(last) = steps.last_mut() {
        for (k, c) in j.conj.iter().enumerate() {
            if !placed[k] {
                last.filter.push(c.clone());
            }
        }
    }
    choose_hash(j, &mut steps);
    j.steps = steps;
}

/// Whether step `si`'s access reads nothing of the steps before it (it
/// is the same for every row before: a scan, or a constant range).
fn access_independent(a: Option<&Access>) -> bool {
    let Some(a) = a else { return true };
    let mut reads = false;
    let mut see = |e: &E| e.for_each_col(&mut |_| reads = true);
    for p in &a.eq {
        match p {
            Pred::Eq(e, _) | Pred::Lo(e, _) | Pred::Hi(e, _) | Pred::Like(e, _) => see(e),
            Pred::In(v) => v.iter().for_each(&mut see),
        }
    }
    a.lo.iter().chain(a.hi.iter()).for_each(|(e, _)| see(e));
    !reads
}

/// The hash keys of source `si` after `bound`, when a hash join may read
/// it: its access depends on nothing before it, and the equalities
/// `conds` give keys.
fn hash_keys(
    j: &Join,
    si: usize,
    bound: &[bool],
    access: Option<&Access>,
    conds: &[E],
) -> Option<crate::query::plan::HashJoin> {
    if !bound.iter().any(|&b| b) || !access_independent(access) {
        return None;
    }
    if matches!(j.sources[si].kind, SourceKind::Table { .. }) && access.is_none() {
        return None;
    }
    // A LATERAL derived table changes with the rows before it: there is
    // no one build side to hash.
    if matches!(j.sources[si].kind, SourceKind::Lateral { .. }) {
        return None;
    }
    find_keys(j, si, bound, conds)
}

/// Rule 4's hash joins: a step becomes one when building its table once
/// (its rows, plus a probe per row before) costs less than a scan per
/// row before.
fn choose_hash(j: &Join, steps: &mut [Step]) {
    let mut bound = vec![false; j.sources.len()];
    let mut rows_before = 1.0f64;
    for st in steps.iter_mut() {
        let src = &j.sources[st.source];
        let conds: &[E] = match &src.outer_on {
            Some(on) => on,
            None => &st.filter,
        };
        if let Some(h) = hash_keys(j, st.source, &bound, st.access.as_ref(), conds) {
            let loop_cost = rows_before * (st.fanout + 1.0);
            let hash_cost = st.fanout + rows_before;
            if hash_cost < loop_cost {
                st.hash = Some(h);
            }
        }
        bound[st.source] = true;
        rows_before *= st.fanout.max(0.01);
    }
}

/// Whether `order` reads every outer join's right side after its left.
fn order_ok(j: &Join, order: &[usize]) -> bool {
    let mut seen = vec![false; j.sources.len()];
    for &s in order {
        if j.sources[s].after.iter().any(|&a| !seen[a]) {
            return false;
        }
        seen[s] = true;
    }
    true
}

/// Estimated cost (rows read) of reading the sources in `order`.
fn order_cost(j: &Join, order: &[usize], usable: &[E], est: &[Option<TableEstimate>]) -> f64 {
    let mut bound = vec![false; j.sources.len()];
    let mut rows = 1.0f64;
    let mut cost = 0.0f64;
    for &si in order {
        let u: &[E] = match &j.sources[si].outer_on {
            Some(on) => on,
            None => usable,
        };
        let access = access_for(j, si, &bound, u, est);
        let per_probe = access
            .as_ref()
            .map_or_else(|| source_rows(j, si), |a| a.est_rows);
        // A probe costs something even when it finds nothing; a hash
        // join reads the source once and probes a table per row.
        let mut step_cost = rows * (per_probe + 1.0);
        if hash_keys(j, si, &bound, access.as_ref(), u).is_some() {
            step_cost = step_cost.min(per_probe + rows);
        }
        bound[si] = true;
        cost += step_cost;
        let out = if j.sources[si].outer_on.is_some() {
            per_probe.max(1.0)
        } else {
            per_probe
        };
        rows *= out.max(0.01);
    }
    cost
}

/// The written order, with each outer join's right side moved after the
/// sources it must follow (a RIGHT JOIN's left side comes after its right).
fn written_order(j: &Join) -> Vec<usize> {
    let n = j.sources.len();
    let mut placed = vec![false; n];
    let mut order = Vec::with_capacity(n);
    while order.len() < n {
        let next = (0..n).find(|&s| !placed[s] && j.sources[s].after.iter().all(|&a| placed[a]));
        // `after` only points backwards in a FROM clause except for a
        // RIGHT JOIN's single pair, so some source is always ready.
        let s = next.unwrap_or_else(|| (0..n).find(|&s| !placed[s]).unwrap_or(0));
        placed[s] = true;
        order.push(s);
    }
    order
}

fn choose_order(j: &Join, usable: &[E], est: &[Option<TableEstimate>]) -> Vec<usize> {
    let n = j.sources.len();
    let written = written_order(j);
    if n <= 1 || n > MAX_PERMUTED_SOURCES {
        return written;
    }
    let mut best = written.clone();
    let mut best_cost = order_cost(j, &written, usable, est);
    let mut perm: Vec<usize> = (0..n).collect();
    // Heap's algorithm, iteratively.
    let mut c = vec![0usize; n];
    let mut i = 0;
    while i < n {
        if c[i] < i {
            if i % 2 == 0 {
                perm.swap(0, i);
            } else {
                perm.swap(c[i], i);
            }
            if order_ok(j, &perm) {
                let cost = order_cost(j, &perm, usable, est);
                if cost < best_cost * 0.999 {
                    best_cost = cost;
                    best = perm.clone();
                }
            }
            c[i] += 1;
            i = 0;
        } else {
            c[i] = 0;
            i += 1;
        }
    }
    if !order_ok(j, &best) {
        return written;
    }
    best
}

// ------------------------------------------------------------------ LIMIT

/// Rule 5 on a `Limit` node.
fn push_limit(node: &mut Node) {
    let Node::Limit {
        input,
        offset,
        limit,
        ..
    } = node
    else {
        return;
    };
    let Some(l) = *limit else { return };
    let want = l.saturating_add(*offset);
    match &mut **input {
        Node::Sort { input: p, keys, .. } => {
            let keys = keys.clone();
            if sort_by_index(p, &keys, want) {
                // The sort is satisfied by the read order: drop it.
                let Node::Sort { input: p, .. } =
                    std::mem::replace(&mut **input, Node::Values(Default::default()))
                else {
                    return;
                };
                **input = *p;
            }
        }
        Node::Project {
            input: j,
            having: None,
            agg_width: None,
            ..
        } => {
            if let Node::Join(j) = &mut **j {
                set_join_limit(j, want);
            }
        }
        _ => {}
    }
}

fn set_join_limit(j: &mut Join, want: usize) {
    j.limit = Some(want);
    if j.steps.len() == 1 && j.steps[0].filter.is_empty() && j.gate.is_empty() {
        j.steps[0].scan_limit = Some(want);
    }
}

/// If the rows under `p` (a Project over a one-table Join) can come in
/// the order of `keys` by reading an index, switch to that index and
/// return true.
fn sort_by_index(p: &mut Node, keys: &[(usize, bool)], want: usize) -> bool {
    let Node::Project {
        input,
        exprs,
        having: None,
        agg_width: None,
        ..
    } = p
    else {
        return false;
    };
    let Node::Join(j) = &mut **input else {
        return false;
    };
    if j.steps.len() != 1 || j.sources[0].outer_on.is_some() {
        return false;
    }
    let desc = keys[0].1;
    if keys.iter().any(|(_, d)| *d != desc) {
        return false;
    }
    let mut cols = Vec::new();
    for (pos, _) in keys {
        match exprs.get(*pos) {
            Some(E::Col(c)) => cols.push(*c - j.sources[0].offset),
            _ => return false,
        }
    }
    let SourceKind::Table { def, force } = &j.sources[0].kind else {
        return false;
    };
    let def = def.clone();
    let force = force.clone();
    let (offset, width) = (j.sources[0].offset, j.sources[0].width);
    let step = &mut j.steps[0];
    let Some(acc) = &step.access else {
        return false;
    };
    // The access in use, or another index that gives the order.
    let mut candidates: Vec<Access> = vec![acc.clone()];
    let is_bound = |e: &E| e.max_col().is_none();
    let col_ty = |c: usize| {
        c.checked_sub(offset)
            .and_then(|i| def.columns.get(i))
            .map(|c| c.ty.clone())
    };
    let preds = column_preds(&step.filter, offset, width, &is_bound, &col_ty);
    let est = TableEstimate {
        rows: acc.est_rows.max(1000.0),
        distinct: Vec::new(),
    };
    let forced = |n: &str| force.as_ref().is_none_or(|f| f.eq_ignore_ascii_case(n));
    if !def.has_hidden_pk() && forced("PRIMARY") {
        let mut only = (*def).clone();
        only.indexes.clear();
        candidates.push(choose_access(&only, &None, &preds, &est));
    }
    for i in &def.indexes {
        if forced(&i.name) {
            let mut only = (*def).clone();
            only.indexes = vec![i.clone()];
            let f = Some(i.name.clone());
            candidates.push(choose_access(&only, &f, &preds, &est));
        }
    }
    for mut cand in candidates {
        let idx_cols: Vec<usize> = match &cand.index {
            None => def.primary.clone(),
            // A secondary index is ordered by its columns, then the
            // primary key's (the row reference stored in each entry); a
            // column prefix part orders nothing from there on.
            Some(n) => match def.index(n) {
                Some(i) => ordered_index_cols(&def, i),
                None => continue,
            },
        };
        if cand.eq.iter().any(|p| matches!(p, Pred::In(_))) || cand.eq.len() > idx_cols.len() {
            continue;
        }
        // Skip the columns pinned by equalities; the keys must follow.
        let rest = &idx_cols[cand.eq.len().min(idx_cols.len())..];
        let mut ks = cols.iter().copied().peekable();
        // Leading sort keys on pinned columns are constant: skip them.
        while ks
            .peek()
            .is_some_and(|c| idx_cols[..cand.eq.len().min(idx_cols.len())].contains(c))
        {
            ks.next();
        }
        let remaining: Vec<usize> = ks.collect();
        if remaining.len() > rest.len() || remaining[..] != rest[..remaining.len()] {
            continue;
        }
        cand.reverse = desc;
        step.access = Some(cand);
        set_join_limit(j, want);
        return true;
    }
    false
}

// ---------------------------------------------------------------- MIN/MAX

/// The columns an access reads in order: the index's, then (secondary
/// indexes) the primary key's.
fn ordered_cols(def: &TableDef, acc: &Access) -> Option<Vec<usize>> {
    match &acc.index {
        None => Some(def.primary.clone()),
        Some(n) => Some(ordered_index_cols(def, def.index(n)?)),
    }
}

/// The columns a secondary index gives rows in: its columns, then the
/// primary key's; with a column prefix part, only the columns before it
/// (`KEY (a, c(3))` orders by `a`, then by the first 3 characters of c:
/// neither c nor the primary key is in order within an `a`).
fn ordered_index_cols(def: &TableDef, i: &quire_engine::IndexDef) -> Vec<usize> {
    if i.has_prefix() {
        return i.ordered_columns().to_vec();
    }
    let mut c = i.columns.clone();
    c.extend(def.primary.iter().filter(|p| !i.columns.contains(p)));
    c
}

/// Rule 5 on an `Aggregate` without GROUP BY over `input`.
fn min_max_by_index(input: &mut Node, aggs: &[AggSpec]) {
    let Node::Join(j) = input else { return };
    if j.steps.len() != 1 || aggs.is_empty() {
        return;
    }
    let mut col = None;
    let mut want_max = None;
    for a in aggs {
        let max = match a.kind {
            AggKind::Min => false,
            AggKind::Max => true,
            _ => return,
        };
        let Some(E::Col(c)) = &a.arg else { return };
        if col.is_some_and(|x| x != *c) || want_max.is_some_and(|m| m != max) {
            return;
        }
        col = Some(*c);
        want_max = Some(max);
    }
    let (Some(col), Some(max)) = (col, want_max) else {
        return;
    };
    let src = &j.sources[0];
    let SourceKind::Table { def, .. } = &src.kind else {
        return;
    };
    let Some(acc) = &j.steps[0].access else {
        return;
    };
    if acc.eq.iter().any(|p| matches!(p, Pred::In(_))) || acc.reverse {
        return;
    }
    let Some(cols) = ordered_cols(def, acc) else {
        return;
    };
    if col < src.offset || cols.get(acc.eq.len()) != Some(&(col - src.offset)) {
        return;
    }
    let step = &mut j.steps[0];
    if let Some(a) = step.access.as_mut() {
        a.reverse = max;
    }
    // NULLs sort first and are not a MIN.
    step.filter.push(E::IsNull(Box::new(E::Col(col)), true));
    j.limit = Some(1);
}
