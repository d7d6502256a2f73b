//! # ONLY_FULL_GROUP_BY: which columns a grouped block may show
//!
//! A grouped block (GROUP BY, or aggregates without it) produces one row
//! per group; a column that is neither grouped nor inside an aggregate
//! would have to come from one arbitrary row of the group. MySQL 8.0
//! refuses such a query when `sql_mode` has ONLY_FULL_GROUP_BY (its
//! default), unless the column is *functionally dependent* on the
//! grouped ones, i.e. one value per group is guaranteed:
//!
//! ```text
//!   known := the grouped columns
//!   repeat until nothing changes:
//!     a table (or a single-table derived table) whose PRIMARY KEY or a
//!       UNIQUE key of NOT NULL columns is all known   -> all its columns
//!     a WHERE / inner-join ON conjunct `col = expr`
//!       whose expr reads only known columns (or none) -> col
//! ```
//!
//! An expression equal to a GROUP BY expression counts as grouped as a
//! whole. The errors: 1055 (with GROUP BY), 1140 (aggregates without
//! it), 3065 (SELECT DISTINCT ... ORDER BY a column not selected). HAVING
//! is a name rule, not a mode rule: outside aggregates it sees only
//! select-list and GROUP BY columns (1054), whatever the sql_mode.
//!
//! MariaDB knows no functional dependence (it answers 1055 where MySQL
//! accepts a column of a table whose key is grouped); quire follows MySQL.

use std::collections::HashSet;

use quire_engine::{EngineError, TableDef};

use crate::expr::{err_unknown_column, Cmp, ColInfo, E};
use crate::query::plan::{Node, Source, SourceKind};
use crate::SqlResult;

/// What the checks need to know about one SELECT block.
pub struct Block<'a> {
    pub cols: &'a [ColInfo],
    pub sources: &'a [Source],
    /// WHERE and inner-join ON conjuncts.
    pub conj: &'a [E],
    pub group: &'a [E],
    /// The select list.
    pub items: &'a [E],
    /// ORDER BY expressions (as resolved: a position or alias is the
    /// select item itself).
    pub order: &'a [E],
    pub having: Option<&'a E>,
    pub grouped: bool,
    pub distinct: bool,
}

/// Runs the checks; `full`: ONLY_FULL_GROUP_BY is in the sql_mode.
pub fn check(b: &Block<'_>, full: bool) -> SqlResult<()> {
    if b.grouped {
        check_having_names(b)?;
    }
    if !full {
        return Ok(());
    }
    if b.grouped {
        let known = dependent_columns(b);
        let group_texts: Vec<String> = b.group.iter().map(|g| format!("{g:?}")).collect();
        for (k, e) in b.items.iter().enumerate() {
            if let Some(c) = ungrouped_column(e, &known, &group_texts) {
                return Err(err_not_grouped(b, k + 1, "SELECT list", c));
            }
        }
        for (k, e) in b.order.iter().enumerate() {
            if let Some(c) = ungrouped_column(e, &known, &group_texts) {
                return Err(err_not_grouped(b, k + 1, "ORDER BY clause", c));
            }
        }
    }
    if b.distinct {
        check_distinct_order(b)?;
    }
    Ok(())
}

/// The block columns functionally dependent on the grouped ones.
fn dependent_columns(b: &Block<'_>) -> HashSet<usize> {
    let mut known: HashSet<usize> = b
        .group
        .iter()
        .filter_map(|g| match g {
            E::Col(i) => Some(*i),
            _ => None,
        })
        .collect();
    let keys: Vec<(usize, usize, Vec<Vec<usize>>)> = b
        .sources
        .iter()
        .map(|s| (s.offset, s.width, source_keys(s)))
        .collect();
    loop {
        let before = known.len();
        for (off, width, ks) in &keys {
            if ks
                .iter()
                .any(|k| k.iter().all(|c| known.contains(&(off + c))))
            {
                known.extend(*off..off + width);
            }
        }
        for c in b.conj {
            if let E::Cmp(Cmp::Eq, l, r) = c {
                for (x, y) in [(l, r), (r, l)] {
                    if let E::Col(i) = &**x {
                        if !known.contains(i) && reads_only(y, &known) {
                            known.insert(*i);
                        }
                    }
                }
            }
        }
        if known.len() == before {
            return known;
        }
    }
}

/// Whether `e` is a deterministic expression over `known` columns only.
fn reads_only(e: &E, known: &HashSet<usize>) -> bool {
    if e.has_subquery() {
        return false;
    }
    let mut ok = true;
    e.walk(&mut |x| {
        if matches!(x, E::Agg(_) | E::Win(..)) {
            ok = false;
        }
    });
    e.for_each_col(&mut |i| ok &= known.contains(&i));
    ok
}

/// Unique keys of a source, as column positions within it: a table's
/// PRIMARY KEY and UNIQUE keys over NOT NULL columns; a derived table
/// over one table passes on the keys whose columns it selects as such.
fn source_keys(s: &Source) -> Vec<Vec<usize>> {
    match &s.kind {
        SourceKind::Table { def, .. } => table_keys(def),
        SourceKind::Derived(node) | SourceKind::Lateral { node, .. } => derived_keys(node, s.width),
        _ => Vec::new(),
    }
}

fn table_keys(def: &TableDef) -> Vec<Vec<usize>> {
    let mut out = Vec::new();
    if !def.has_hidden_pk() {
        out.push(def.primary.clone());
    }
    for i in &def.indexes {
        // A UNIQUE column prefix key determines nothing: rows sharing
        // the prefix differ in the rest of the column.
        if i.unique && !i.has_prefix() && i.columns.iter().all(|&c| !def.columns[c].nullable) {
            out.push(i.columns.clone());
        }
    }
    out
}

fn derived_keys(node: &Node, width: usize) -> Vec<Vec<usize>> {
    match node {
        Node::Limit { input, .. } | Node::Sort { input, .. } | Node::Distinct { input, .. } => {
            derived_keys(input, width)
        }
        Node::Project {
            input,
            exprs,
            agg_width: None,
            ..
        } => {
            let Node::Join(j) = &**input else {
                return Vec::new();
            };
            let [src] = j.sources.as_slice() else {
                return Vec::new();
            };
            let shown = &exprs[..width.min(exprs.len())];
            source_keys(src)
                .into_iter()
                .filter_map(|k| {
                    k.iter()
                        .map(|c| {
                            shown
                                .iter()
                                .position(|e| matches!(e, E::Col(i) if *i == src.offset + c))
                        })
                        .collect::<Option<Vec<usize>>>()
                })
                .collect()
        }
        _ => Vec::new(),
    }
}

/// The first column `e` reads outside aggregates and outside any part
/// equal to a GROUP BY expression that is not functionally dependent.
fn ungrouped_column(e: &E, known: &HashSet<usize>, group_texts: &[String]) -> Option<usize> {
    let mut bad = None;
    e.walk_pruned(&mut |x| {
        if bad.is_some() || matches!(x, E::Agg(_) | E::Win(..) | E::Lit(_)) {
            return false;
        }
        if !matches!(x, E::Col(_)) && group_texts.iter().any(|g| *g == format!("{x:?}")) {
            return false;
        }
        let mut own = |i: usize| {
            if bad.is_none() && !known.contains(&i) {
                bad = Some(i);
            }
        };
        match x {
            E::Col(i) => own(*i),
            E::Subquery {
                refs, outer_len, ..
            } => refs
                .iter()
                .filter(|&&r| r >= *outer_len)
                .for_each(|&r| own(r - outer_len)),
            _ => {}
        }
        true
    });
    bad
}

/// HAVING outside aggregates: a column must be a select item or grouped
/// (MySQL resolves HAVING's names there; 1054 otherwise).
fn check_having_names(b: &Block<'_>) -> SqlResult<()> {
    let Some(h) = b.having else {
        return Ok(());
    };
    let visible = |i: usize| {
        b.items
            .iter()
            .chain(b.group)
            .any(|e| matches!(e, E::Col(c) if *c == i))
    };
    let mut bad = None;
    h.walk_pruned(&mut |x| match x {
        E::Agg(_) | E::Subquery { .. } => false,
        E::Col(i) => {
            if bad.is_none() && !visible(*i) {
                bad = Some(*i);
            }
            false
        }
        _ => true,
    });
    match bad {
        Some(i) => Err(err_unknown_column(&b.cols[i].name, "having clause")),
        None => Ok(()),
    }
}

/// SELECT DISTINCT: each ORDER BY expression is a select item, or reads
/// only columns that are select items (3065).
fn check_distinct_order(b: &Block<'_>) -> SqlResult<()> {
    let item_texts: Vec<String> = b.items.iter().map(|e| format!("{e:?}")).collect();
    let selected = |i: usize| b.items.iter().any(|e| matches!(e, E::Col(c) if *c == i));
    for (k, o) in b.order.iter().enumerate() {
        if item_texts.contains(&format!("{o:?}")) {
            continue;
        }
        let mut bad = None;
        o.walk_pruned(&mut |x| {
            if let E::Col(i) = x {
                if bad.is_none() && !selected(*i) {
                    bad = Some(*i);
                }
            }
            !matches!(x, E::Agg(_))
        });
        if let Some(i) = bad {
            return Err(EngineError::new(
                3065,
                "HY000",
                format!(
                    "Expression #{} of ORDER BY clause is not in SELECT list, references column '{}' which is not in SELECT list; this is incompatible with DISTINCT",
                    k + 1,
                    full_name(&b.cols[i])
                ),
            ));
        }
    }
    Ok(())
}

/// `db.table.column` as MySQL names a column in these messages.
fn full_name(c: &ColInfo) -> String {
    if c.db.is_empty() {
        format!("{}.{}", c.table, c.name)
    } else {
        format!("{}.{}.{}", c.db, c.table, c.name)
    }
}

fn err_not_grouped(b: &Block<'_>, n: usize, clause: &str, col: usize) -> EngineError {
    let name = full_name(&b.cols[col]);
    if b.group.is_empty() {
        return EngineError::new(
            1140,
            "42000",
            format!(
                "In aggregated query without GROUP BY, expression #{n} of {clause} contains nonaggregated column '{name}'; this is incompatible with sql_mode=only_full_group_by"
            ),
        );
    }
    EngineError::new(
        1055,
        "42000",
        format!(
            "Expression #{n} of {clause} is not in GROUP BY clause and contains nonaggregated column '{name}' which is not functionally dependent on columns in GROUP BY clause; this is incompatible with sql_mode=only_full_group_by"
        ),
    )
}
