//! # EXPLAIN: the optimized plan as MySQL prints it
//!
//! Two forms, both read off the optimized [`Plan`] (nothing is executed):
//!
//! * the traditional table: one row per table read, in join order, with
//!   MySQL's columns (`id`, `select_type`, `table`, `type`, `key`, `ref`,
//!   `rows`, `Extra`, ...). `type` is the access path (`const`, `eq_ref`,
//!   `ref`, `range`, `index`, `ALL`); `rows` is the optimizer's estimate
//!   per probe; `key_len` is not computed (NULL).
//! * `FORMAT=TREE`: the operator tree, one `-> ` line per operator,
//!   children indented by four spaces, as MySQL 8.0 prints it.

use quire_engine::{ColumnType, Value};

use crate::query::access::Access;
use crate::query::plan::{Join, Node, Plan, SetOpKind, SourceKind};
use crate::ColumnMeta;

/// One row of the traditional table, before it becomes values.
struct Line {
    id: usize,
    select_type: String,
    table: Option<String>,
    kind: Option<String>,
    key: Option<String>,
    ref_: Option<String>,
    rows: Option<u64>,
    extra: Vec<String>,
}

fn col(name: &str, ty: ColumnType) -> ColumnMeta {
    ColumnMeta {
        name: name.to_string(),
        org_name: String::new(),
        table: String::new(),
        org_table: String::new(),
        db: String::new(),
        ty,
        nullable: true,
    }
}

/// The traditional EXPLAIN result set.
pub fn table(plan: &Plan) -> (Vec<ColumnMeta>, Vec<Vec<Value>>) {
    let v = ColumnType::varchar(256);
    let columns = vec![
        col("id", ColumnType::BigInt { unsigned: true }),
        col("select_type", v.clone()),
        col("table", v.clone()),
        col("partitions", v.clone()),
        col("type", v.clone()),
        col("possible_keys", v.clone()),
        col("key", v.clone()),
        col("key_len", v.clone()),
        col("ref", v.clone()),
        col("rows", ColumnType::BigInt { unsigned: true }),
        col("filtered", ColumnType::Double),
        col("Extra", v),
    ];
    let mut w = Walk {
        lines: Vec::new(),
        next_id: 1,
    };
    let nested = !plan.subplans.is_empty() || has_nested(&plan.root);
    let top = if nested { "PRIMARY" } else { "SIMPLE" };
    w.node(&plan.root, top);
    for sp in &plan.subplans {
        let t = if sp.lookup.is_some() {
            "MATERIALIZED"
        } else if sp.correlated {
            "DEPENDENT SUBQUERY"
        } else {
            "SUBQUERY"
        };
        w.node(&sp.node, t);
    }
    let text = |s: Option<String>| s.map_or(Value::Null, |x| Value::Bytes(x.into_bytes()));
    let rows = w
        .lines
        .into_iter()
        .map(|l| {
            let extra = if l.extra.is_empty() {
                None
            } else {
                Some(l.extra.join("; "))
            };
            vec![
                Value::UInt(l.id as u64),
                Value::Bytes(l.select_type.into_bytes()),
                text(l.table),
                Value::Null,
                text(l.kind),
                text(l.key.clone()),
                text(l.key),
                Value::Null,
                text(l.ref_),
                l.rows.map_or(Value::Null, Value::UInt),
                if l.rows.is_some() {
                    Value::Double(100.0)
                } else {
                    Value::Null
                },
                text(extra),
            ]
        })
        .collect();
    (columns, rows)
}

fn has_nested(n: &Node) -> bool {
    match n {
        Node::Join(j) => j
            .sources
            .iter()
            .any(|s| matches!(s.kind, SourceKind::Derived(_) | SourceKind::Lateral { .. })),
        Node::Aggregate { input, .. }
        | Node::Window { input, .. }
        | Node::Project { input, .. }
        | Node::Distinct { input, .. }
        | Node::Sort { input, .. }
        | Node::Limit { input, .. } => has_nested(input),
        Node::SetOp { .. } | Node::Recursive { .. } => true,
        Node::Values(_) => false,
    }
}

struct Walk {
    lines: Vec<Line>,
    next_id: usize,
}

/// Notes a block's operators above its join leave on its first line.
#[derive(Default)]
struct BlockExtras {
    filesort: bool,
    temporary: bool,
}

impl Walk {
    fn node(&mut self, n: &Node, select_type: &str) {
        let id = self.next_id;
        self.next_id += 1;
        self.block(n, id, select_type, BlockExtras::default());
    }

    fn block(&mut self, n: &Node, id: usize, st: &str, mut ex: BlockExtras) {
        match n {
            Node::Join(j) => self.join(j, id, st, ex),
            Node::Aggregate { input, group, .. } => {
                if !group.is_empty() {
                    ex.temporary = true;
                }
                self.block(input, id, st, ex)
            }
            Node::Distinct { input, .. } => {
                ex.temporary = true;
                self.block(input, id, st, ex)
            }
            Node::Sort { input, .. } => {
                ex.filesort = true;
                self.block(input, id, st, ex)
            }
            Node::Window { input, .. } => {
                ex.temporary = true;
                ex.filesort = true;
                self.block(input, id, st, ex)
            }
            Node::Project { input, .. } | Node::Limit { input, .. } => {
                self.block(input, id, st, ex)
            }
            Node::SetOp {
                op, left, right, ..
            } => {
                let first = self.next_id - 1;
                self.block(left, id, st, BlockExtras::default());
                let rid = self.next_id;
                self.next_id += 1;
                let kind = match op {
                    SetOpKind::Union => "UNION",
                    SetOpKind::Intersect => "INTERSECT",
                    SetOpKind::Except => "EXCEPT",
                };
                self.block(right, rid, kind, BlockExtras::default());
                self.lines.push(Line {
                    id: 0,
                    select_type: format!("{kind} RESULT"),
                    table: Some(format!("<{}{},{rid}>", kind.to_lowercase(), first.max(1))),
                    kind: Some("ALL".into()),
                    key: None,
                    ref_: None,
                    rows: None,
                    extra: vec!["Using temporary".into()],
                });
            }
            Node::Recursive { anchor, step, .. } => {
                self.block(anchor, id, st, BlockExtras::default());
                let rid = self.next_id;
                self.next_id += 1;
                self.block(step, rid, "UNION", BlockExtras::default());
            }
            Node::Values(rows) => self.lines.push(Line {
                id,
                select_type: st.to_string(),
                table: None,
                kind: None,
                key: None,
                ref_: None,
                rows: Some(rows.len() as u64),
                extra: vec!["No tables used".into()],
            }),
        }
    }

    fn join(&mut self, j: &Join, id: usize, st: &str, ex: BlockExtras) {
        let mut extra_first = Vec::new();
        if ex.temporary {
            extra_first.push("Using temporary".to_string());
        }
        if ex.filesort {
            extra_first.push("Using filesort".to_string());
        }
        if j.steps.is_empty() {
            let mut extra = vec!["No tables used".to_string()];
            if !j.gate.is_empty() {
                extra = vec!["Impossible WHERE noticed after reading const tables".into()];
            }
            self.lines.push(Line {
                id,
                select_type: st.to_string(),
                table: None,
                kind: None,
                key: None,
                ref_: None,
                rows: None,
                extra,
            });
            return;
        }
        let mut derived = Vec::new();
        let mut rematerialize: Vec<String> = Vec::new();
        for (k, step) in j.steps.iter().enumerate() {
            let src = &j.sources[step.source];
            let (table, kind, key, ref_) = match (&src.kind, &step.access) {
                (SourceKind::Table { .. }, Some(a)) => (
                    src.name.clone(),
                    a.kind().to_string(),
                    key_name(a),
                    key_ref(a),
                ),
                (SourceKind::Derived(n), _) => {
                    let did = self.next_id + derived.len();
                    derived.push((&**n, "DERIVED"));
                    (format!("<derived{did}>"), "ALL".into(), None, None)
                }
                (SourceKind::Lateral { node: n, reads }, _) => {
                    let did = self.next_id + derived.len();
                    derived.push((&**n, "DEPENDENT DERIVED"));
                    if !reads.is_empty() {
                        rematerialize.push(format!("<derived{did}>"));
                    }
                    (format!("<derived{did}>"), "ALL".into(), None, None)
                }
                _ => (src.name.clone(), "ALL".into(), None, None),
            };
            let mut extra = if k == 0 {
                std::mem::take(&mut extra_first)
            } else {
                Vec::new()
            };
            if !step.filter.is_empty() || src.outer_on.is_some() {
                extra.push("Using where".into());
            }
            if step.access.as_ref().is_some_and(|a| a.reverse) {
                extra.push("Backward index scan".into());
            }
            if step.hash.is_some() {
                extra.push("Using join buffer (hash join)".into());
            }
            self.lines.push(Line {
                id,
                select_type: st.to_string(),
                table: Some(table),
                kind: Some(kind),
                key,
                ref_,
                rows: Some(step.fanout.max(1.0).round() as u64),
                extra,
            });
        }
        if !rematerialize.is_empty() {
            // MySQL notes on the join's first table that the lateral
            // derived tables are materialised again for each of its rows.
            if let Some(first) = self.lines.iter_mut().rev().nth(j.steps.len() - 1) {
                first
                    .extra
                    .push(format!("Rematerialize ({})", rematerialize.join(",")));
            }
        }
        for (n, st) in derived {
            self.node(n, st);
        }
    }
}

fn key_name(a: &Access) -> Option<String> {
    if !a.uses_key() && a.index.is_none() {
        return None;
    }
    Some(a.index.clone().unwrap_or_else(|| "PRIMARY".into()))
}

fn key_ref(a: &Access) -> Option<String> {
    if a.eq.is_empty() {
        return None;
    }
    let parts: Vec<&str> = (0..a.key_parts().min(a.eq.len()))
        .map(|_| "const")
        .collect();
    Some(parts.join(","))
}

// -------------------------------------------------------------- FORMAT=TREE

/// `EXPLAIN FORMAT=TREE`: one text column.
pub fn tree(plan: &Plan) -> (Vec<ColumnMeta>, Vec<Vec<Value>>) {
    let mut out = String::new();
    tree_node(&plan.root, 0, &mut out);
    for (i, sp) in plan.subplans.iter().enumerate() {
        let n = i + 2;
        let header = match (&sp.lookup, sp.correlated) {
            // A decorrelated EXISTS: its rows are read once into a set.
            (Some(lk), _) => format!(
                "Select #{n} (subquery in condition; run only once, looked up by ({}))",
                lk.text
            ),
            (None, true) => format!("Select #{n}"),
            (None, false) => format!("Select # (subquery in condition; run only once) {n}"),
        };
        out.push_str(&format!("-> {header}\n"));
        tree_node(&sp.node, 1, &mut out);
    }
    let columns = vec![col("EXPLAIN", ColumnType::text(u32::MAX))];
    (columns, vec![vec![Value::Bytes(out.into_bytes())]])
}

fn line(depth: usize, text: &str, out: &mut String) {
    out.push_str(&" ".repeat(depth * 4));
    out.push_str("-> ");
    out.push_str(text);
    out.push('\n');
}

fn tree_node(n: &Node, depth: usize, out: &mut String) {
    match n {
        Node::Limit {
            input,
            offset,
            limit,
            ..
        } => {
            match limit {
                Some(l) if *offset > 0 => {
                    line(depth, &format!("Limit/Offset: {l}/{offset} row(s)"), out)
                }
                Some(l) => line(depth, &format!("Limit: {l} row(s)"), out),
                None if *offset > 0 => line(depth, &format!("Offset: {offset} row(s)"), out),
                None => return tree_node(input, depth, out),
            }
            tree_node(input, depth + 1, out)
        }
        Node::Sort { input, keys, top } => {
            let t = match top {
                Some(t) => format!(
                    "Sort: {} key(s), limit input to {t} row(s) per chunk",
                    keys.len()
                ),
                None => format!("Sort: {} key(s)", keys.len()),
            };
            line(depth, &t, out);
            tree_node(input, depth + 1, out)
        }
        Node::Window { input, specs, .. } => {
            line(
                depth,
                &format!("Window aggregate: {} function(s)", specs.len()),
                out,
            );
            line(depth + 1, "Sort: partition and order keys", out);
            tree_node(input, depth + 2, out)
        }
        Node::Distinct { input, .. } => {
            line(depth, "Table scan on <temporary>", out);
            line(depth + 1, "Temporary table with deduplication", out);
            tree_node(input, depth + 2, out)
        }
        Node::Project { input, having, .. } => {
            if having.is_some() {
                line(depth, "Filter: (having condition)", out);
                tree_node(input, depth + 1, out)
            } else {
                tree_node(input, depth, out)
            }
        }
        Node::Aggregate {
            input,
            group,
            rollup,
            ..
        } => {
            let t = match (group.is_empty(), rollup) {
                (true, _) => "Aggregate".to_string(),
                (false, true) => "Group aggregate with rollup".to_string(),
                (false, false) => "Table scan on <temporary>".to_string(),
            };
            line(depth, &t, out);
            if group.is_empty() || *rollup {
                tree_node(input, depth + 1, out)
            } else {
                line(depth + 1, "Aggregate using temporary table", out);
                tree_node(input, depth + 2, out)
            }
        }
        Node::SetOp {
            op,
            all,
            left,
            right,
            ..
        } => {
            let name = match op {
                SetOpKind::Union => "Union",
                SetOpKind::Intersect => "Intersect",
                SetOpKind::Except => "Except",
            };
            let t = if *all {
                format!("{name} all materialize")
            } else {
                format!("{name} materialize with deduplication")
            };
            line(depth, &t, out);
            tree_node(left, depth + 1, out);
            tree_node(right, depth + 1, out)
        }
        Node::Recursive { anchor, step, .. } => {
            line(depth, "Materialize recursive CTE", out);
            tree_node(anchor, depth + 1, out);
            line(depth + 1, "Repeat until convergence", out);
            tree_node(step, depth + 2, out)
        }
        Node::Values(rows) => line(
            depth,
            &format!("Rows fetched before execution ({} rows)", rows.len()),
            out,
        ),
        Node::Join(j) => tree_join(j, depth, out),
    }
}

fn tree_join(j: &Join, depth: usize, out: &mut String) {
    let mut depth = depth;
    if !j.gate.is_empty() {
        line(depth, "Filter: (constant condition)", out);
        depth += 1;
    }
    if j.steps.is_empty() {
        return line(depth, "Rows fetched before execution", out);
    }
    tree_steps(j, j.steps.len(), depth, out)
}

/// The first `n` steps: a left-deep tree of nested loops.
fn tree_steps(j: &Join, n: usize, depth: usize, out: &mut String) {
    let step = &j.steps[n - 1];
    if n == 1 {
        return tree_step(j, step, depth, out);
    }
    let src = &j.sources[step.source];
    if let Some(h) = &step.hash {
        return tree_hash_join(j, n, h, depth, out);
    }
    let kind = if src.outer_on.is_some() {
        "Nested loop left join"
    } else {
        "Nested loop inner join"
    };
    line(depth, kind, out);
    tree_steps(j, n - 1, depth + 1, out);
    tree_step(j, step, depth + 1, out)
}

/// Step `n - 1` as MySQL prints a hash join: the conditions left after
/// the hashed equalities as a Filter above it (an outer join's other ON
/// conditions as its "extra conditions"), the steps before as the probe
/// input, the step's own read under `Hash`.
fn tree_hash_join(
    j: &Join,
    n: usize,
    h: &crate::query::plan::HashJoin,
    depth: usize,
    out: &mut String,
) {
    let step = &j.steps[n - 1];
    let src = &j.sources[step.source];
    let keys = h.build.len();
    let (kind, extra_on, filter) = match &src.outer_on {
        Some(on) => ("Left", on.len().saturating_sub(keys), step.filter.len()),
        None => ("Inner", 0, step.filter.len().saturating_sub(keys)),
    };
    let mut depth = depth;
    if filter > 0 {
        line(depth, &format!("Filter: ({filter} condition(s))"), out);
        depth += 1;
    }
    let mut text = format!("{kind} hash join ({})", h.text);
    if extra_on > 0 {
        text.push_str(&format!(", extra conditions: ({extra_on} condition(s))"));
    }
    line(depth, &text, out);
    tree_steps(j, n - 1, depth + 1, out);
    line(depth + 1, "Hash", out);
    tree_scan(j, step, depth + 2, out)
}

fn tree_step(j: &Join, step: &crate::query::plan::Step, depth: usize, out: &mut String) {
    let mut depth = depth;
    if !step.filter.is_empty() {
        line(
            depth,
            &format!("Filter: ({} condition(s))", step.filter.len()),
            out,
        );
        depth += 1;
    }
    tree_scan(j, step, depth, out)
}

/// How a step reads its source.
fn tree_scan(j: &Join, step: &crate::query::plan::Step, depth: usize, out: &mut String) {
    let src = &j.sources[step.source];
    let rows = step.fanout.max(1.0).round() as u64;
    let t = match (&src.kind, &step.access) {
        (SourceKind::Table { .. }, Some(a)) => {
            let key = a.index.clone().unwrap_or_else(|| "PRIMARY".into());
            let rev = if a.reverse { " (reverse)" } else { "" };
            match a.kind() {
                "const" | "eq_ref" => format!(
                    "Single-row index lookup on {} using {key}  (rows={rows})",
                    src.name
                ),
                "ref" => format!(
                    "Index lookup on {} using {key}{rev}  (rows={rows})",
                    src.name
                ),
                "range" => format!(
                    "Index range scan on {} using {key}{rev}  (rows={rows})",
                    src.name
                ),
                "index" => format!("Index scan on {} using {key}{rev}  (rows={rows})", src.name),
                _ if a.reverse => {
                    format!("Index scan on {} using {key}{rev}  (rows={rows})", src.name)
                }
                _ => format!("Table scan on {}  (rows={rows})", src.name),
            }
        }
        (SourceKind::Derived(n), _) => {
            line(depth, &format!("Table scan on {}", src.name), out);
            line(depth + 1, "Materialize", out);
            return tree_node(n, depth + 2, out);
        }
        (SourceKind::Lateral { node: n, reads }, _) => {
            line(depth, &format!("Table scan on {}", src.name), out);
            // MySQL names the tables whose new row makes it run again.
            let from: Vec<&str> = j
                .sources
                .iter()
                .filter(|s| {
                    reads
                        .iter()
                        .any(|&c| (s.offset..s.offset + s.width).contains(&c))
                })
                .map(|s| s.name.as_str())
                .collect();
            let what = if from.is_empty() {
                "Materialize".to_string()
            } else {
                format!("Materialize (invalidate on row from {})", from.join(", "))
            };
            line(depth + 1, &what, out);
            return tree_node(n, depth + 2, out);
        }
        (SourceKind::Working(_), _) => format!("Scan new records on {}", src.name),
        _ => format!("Table scan on {}", src.name),
    };
    line(depth, &t, out)
}
