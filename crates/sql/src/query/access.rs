//! # Access paths: how one table's rows are reached
//!
//! For a base table the optimizer looks at the conjuncts that constrain it
//! (`col = X`, `col < X` (`<=`, `>`, `>=`), `col BETWEEN X AND Y`, `col IN
//! (X, ...)`, and `col LIKE 'abc%'` for a column prefix part) where `X` is
//! *bound*: a constant, a parameter, an outer reference, or a column of a
//! table read earlier in the join order. Each
//! index (the primary key and every secondary index) gets the longest
//! prefix of its columns pinned by equalities (one IN allowed), plus one
//! range on the next column:
//!
//! ```text
//!   index (w_id, d_id, o_id)     w_id = ? AND d_id = 7 AND o_id > 100
//!          ^^^^  ^^^^  ^^^^
//!           eq    eq   range       -> seek [?,7,100) .. [?,7,+inf)
//! ```
//!
//! A full unique key of equalities is a point read. The estimate of rows
//! each candidate reads comes from the table's statistics (`ANALYZE TABLE`
//! distinct counts when there are some, fixed selectivities otherwise);
//! the cheapest wins, ties to the primary key.
//!
//! Bounds are a hint: every produced row is checked against the full
//! predicate again, so a bound the engine cannot encode exactly (it drops
//! it) only widens the scan. A column prefix index (`KEY (c(3))`) serves
//! `c = 'abcdef'`, ranges, BETWEEN and IN the same way: the engine keys
//! the bound's first 3 characters (a range end widened to include them,
//! txn.rs), so the index finds a superset and the filter keeps the rows
//! whose whole value matches. Such an index is never a point read and
//! gives no order from its prefix part on (optimize.rs).

use std::cmp::Ordering;
use std::collections::HashMap;
use std::ops::Bound;

use quire_engine::types::{compare, Collation};
use quire_engine::{ColumnType, TableDef, Value};

use crate::expr::{Cmp, Row, E};
use crate::SqlResult;

/// One constraint on a column, from a conjunct.
#[derive(Debug, Clone)]
pub enum Pred {
    /// `col = X`, or `col <=> X` (true: a NULL X looks up the NULL keys).
    Eq(E, bool),
    In(Vec<E>),
    Lo(E, bool),
    Hi(E, bool),
    /// `col LIKE 'abc%'`: the pattern's literal start (`'abc'`) and its
    /// length in characters. A column prefix part no longer than that
    /// start seeks it as an equality (every match shares its first N
    /// characters); other index parts do not use it.
    Like(E, usize),
}

/// How a base table is read.
#[derive(Debug, Clone)]
pub struct Access {
    /// None = the clustered (primary key) index.
    pub index: Option<String>,
    /// Equality (or IN) values on the leading columns.
    pub eq: Vec<Pred>,
    pub lo: Option<(E, bool)>,
    pub hi: Option<(E, bool)>,
    /// A full unique key of equalities without IN: at most one row.
    pub point: bool,
    /// Estimated rows read per execution.
    pub est_rows: f64,
    /// Read in descending key order (ORDER BY ... DESC by the index).
    pub reverse: bool,
}

impl Access {
    pub fn full_scan(index: Option<String>, rows: f64) -> Access {
        Access {
            index,
            eq: Vec::new(),
            lo: None,
            hi: None,
            point: false,
            est_rows: rows,
            reverse: false,
        }
    }

    /// EXPLAIN's `type` column.
    pub fn kind(&self) -> &'static str {
        let unique_point = self.point;
        if unique_point && self.index.is_none() {
            "const"
        } else if unique_point {
            "eq_ref"
        } else if self.eq.iter().any(|p| matches!(p, Pred::In(_)))
            || self.lo.is_some()
            || self.hi.is_some()
        {
            "range"
        } else if !self.eq.is_empty() {
            "ref"
        } else if self.index.is_some() || self.reverse {
            "index"
        } else {
            "ALL"
        }
    }

    /// Number of index columns the access pins (EXPLAIN's key parts).
    pub fn key_parts(&self) -> usize {
        self.eq.len() + usize::from(self.lo.is_some() || self.hi.is_some())
    }

    pub fn uses_key(&self) -> bool {
        !self.eq.is_empty() || self.lo.is_some() || self.hi.is_some()
    }
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

/// The type of a block column, where the caller knows it.
pub type ColType<'a> = &'a dyn Fn(usize) -> Option<ColumnType>;

/// Whether comparing column `col` with `other` compares in the column's
/// own order, so that its index can serve the comparison. A string
/// column compared with a number (or a date) compares as numbers (or
/// dates): `'a' = 0`, `'10' > 5`, no string key finds those rows.
fn key_comparable(col: usize, other: &E, col_ty: ColType<'_>) -> bool {
    let Some(ty) = col_ty(col) else {
        return true;
    };
    if !ty.is_string() {
        return true;
    }
    let other_ty = match other {
        E::Lit(Value::Null) => return true,
        E::Col(j) => col_ty(*j),
        e => {
            let mut open = false;
            e.walk(&mut |x| open |= matches!(x, E::Col(_) | E::Outer(..)));
            (!open).then(|| crate::expr::infer(e, &[], &[]))
        }
    };
    other_ty.is_some_and(|t| t.is_string())
}

/// Predicates on the columns of one source (positions relative to its
/// `off`), from conjuncts whose other side `bound` accepts and whose
/// comparison the column's index order serves (`col_ty`).
pub fn column_preds(
    conj: &[E],
    off: usize,
    width: usize,
    bound: &dyn Fn(&E) -> bool,
    col_ty: ColType<'_>,
) -> HashMap<usize, Vec<Pred>> {
    let mut m: HashMap<usize, Vec<Pred>> = HashMap::new();
    let mine = |i: usize| i >= off && i < off + width;
    let usable = |i: usize, x: &E| bound(x) && key_comparable(i, x, col_ty);
    for c in conj {
        // A string comparison serves an index only in the column's own
        // collation (the key holds that collation's weights).
        let (c, coll) = match c {
            E::Collated(k, node) => (&**node, Some(*k)),
            node => (node, None),
        };
        let usable = |i: usize, x: &E| usable(i, x) && same_collation(i, coll, col_ty);
        match c {
            E::Cmp(op, a, b) => {
                let (col, other, op) = match (&**a, &**b) {
                    (E::Col(i), x) if mine(*i) && usable(*i, x) => (*i, x, *op),
                    (x, E::Col(i)) if mine(*i) && usable(*i, x) => (*i, x, flip(*op)),
                    _ => continue,
                };
                // An ENUM/SET index is in member order, its comparisons
                // are by text: only equality can use it.
                let by_member = col_ty(col).is_some_and(|t| t.is_enum_or_set());
                if by_member && !matches!(op, Cmp::Eq | Cmp::NullSafeEq) {
                    continue;
                }
                let p = match op {
                    Cmp::Eq => Pred::Eq(other.clone(), false),
                    Cmp::NullSafeEq => Pred::Eq(other.clone(), true),
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
                    let by_member = col_ty(*i).is_some_and(|t| t.is_enum_or_set());
                    if mine(*i) && !by_member && usable(*i, lo) && usable(*i, hi) {
                        let v = m.entry(i - off).or_default();
                        v.push(Pred::Lo((**lo).clone(), true));
                        v.push(Pred::Hi((**hi).clone(), true));
                    }
                }
            }
            E::Like(x, pat, false, esc) => {
                if let (E::Col(i), E::Lit(Value::Bytes(b))) = (&**x, &**pat) {
                    if mine(*i) && usable(*i, pat) {
                        if let Some((start, chars)) = like_start(b, *esc) {
                            let lit = E::Lit(Value::Bytes(start));
                            m.entry(i - off).or_default().push(Pred::Like(lit, chars));
                        }
                    }
                }
            }
            E::InList(x, list, false) => {
                if let E::Col(i) = &**x {
                    if mine(*i) && list.iter().all(|x| usable(*i, x)) && !list.is_empty() {
                        m.entry(i - off).or_default().push(Pred::In(list.clone()));
                    }
                }
            }
            _ => {}
        }
    }
    m
}

/// A LIKE pattern's literal start (before the first `%` or `_`, escapes
/// resolved) and its length in characters; None when it starts with a
/// wildcard or is not UTF-8.
fn like_start(pattern: &[u8], esc: u8) -> Option<(Vec<u8>, usize)> {
    let text = std::str::from_utf8(pattern).ok()?;
    let mut out = String::new();
    let mut chars = 0;
    let mut it = text.chars();
    while let Some(c) = it.next() {
        let c = match c {
            '%' | '_' => break,
            c if esc.is_ascii() && c == char::from(esc) => match it.next() {
                Some(n) => n,
                None => c,
            },
            c => c,
        };
        out.push(c);
        chars += 1;
    }
    (chars > 0).then(|| (out.into_bytes(), chars))
}

/// Whether a comparison under `coll` (None: byte order, or not strings)
/// orders column `col` as its index does.
fn same_collation(col: usize, coll: Option<Collation>, col_ty: ColType<'_>) -> bool {
    match col_ty(col).and_then(|t| t.collation()) {
        None => true,
        Some(c) => coll == Some(c) || (coll.is_none() && c.is_plain_bytes()),
    }
}

/// Row-count knowledge the estimates use.
pub struct TableEstimate {
    pub rows: f64,
    /// Per index (None = primary): distinct values per prefix length.
    pub distinct: Vec<(Option<String>, Vec<u64>)>,
}

impl TableEstimate {
    fn distinct(&self, index: &Option<String>, prefix: usize) -> Option<f64> {
        let (_, d) = self.distinct.iter().find(|(n, _)| match (n, index) {
            (None, None) => true,
            (Some(a), Some(b)) => a.eq_ignore_ascii_case(b),
            _ => false,
        })?;
        d.get(prefix.checked_sub(1)?).map(|&x| (x.max(1)) as f64)
    }
}

fn plan_index(
    cols: &[usize],
    prefix: &[Option<u32>],
    preds: &HashMap<usize, Vec<Pred>>,
    name: Option<String>,
    unique: bool,
    est: &TableEstimate,
) -> Access {
    let mut acc = Access::full_scan(name, est.rows);
    let mut has_in = false;
    let mut null_safe_any = false;
    let mut in_len = 1usize;
    for (part, &c) in cols.iter().enumerate() {
        let Some(ps) = preds.get(&c) else { break };
        if let Some(Pred::Eq(e, null_safe)) = ps.iter().find(|p| matches!(p, Pred::Eq(..))) {
            acc.eq.push(Pred::Eq(e.clone(), *null_safe));
            // NULL <=> NULL: a UNIQUE key holds any number of NULLs.
            null_safe_any |= *null_safe;
            continue;
        }
        // LIKE 'abcd%' on a c(3) part: every match keys 'abc'.
        let cut = prefix.get(part).copied().flatten();
        let like = ps.iter().find_map(|p| match p {
            Pred::Like(e, chars) if cut.is_some_and(|n| n as usize <= *chars) => Some(e),
            _ => None,
        });
        if let Some(e) = like {
            acc.eq.push(Pred::Eq(e.clone(), false));
            continue;
        }
        if !has_in {
            if let Some(Pred::In(l)) = ps.iter().find(|p| matches!(p, Pred::In(_))) {
                if l.len() <= 1000 {
                    acc.eq.push(Pred::In(l.clone()));
                    has_in = true;
                    in_len = l.len();
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
        break;
    }
    let k = acc.eq.len();
    let full_unique = unique && k == cols.len() && !cols.is_empty();
    acc.point = full_unique && !has_in && !null_safe_any;
    let mut rows = if full_unique {
        1.0
    } else if k > 0 {
        match est.distinct(&acc.index, k) {
            Some(d) => est.rows / d,
            // No statistics: each pinned column keeps a tenth.
            None => est.rows * 0.1f64.powi(k as i32),
        }
    } else {
        est.rows
    };
    rows *= in_len as f64;
    if acc.lo.is_some() || acc.hi.is_some() {
        let f = if acc.lo.is_some() && acc.hi.is_some() {
            0.1
        } else {
            0.3
        };
        rows *= f;
    }
    // A secondary index read pays a clustered lookup per row.
    let penalty = if acc.index.is_some() && !acc.point {
        1.1
    } else {
        1.0
    };
    acc.est_rows = (rows * penalty).max(if full_unique { 1.0 } else { 0.5 });
    acc
}

/// The cheapest access to `def` given the usable predicates (`force`:
/// USE/FORCE INDEX).
pub fn choose_access(
    def: &TableDef,
    force: &Option<String>,
    preds: &HashMap<usize, Vec<Pred>>,
    est: &TableEstimate,
) -> Access {
    let forced = |n: &str| force.as_ref().is_none_or(|f| f.eq_ignore_ascii_case(n));
    let mut best: Option<Access> = None;
    let mut consider = |a: Access| {
        let better = match &best {
            None => true,
            Some(b) => a.uses_key() && (!b.uses_key() || a.est_rows < b.est_rows),
        };
        if better {
            best = Some(a);
        }
    };
    if !def.has_hidden_pk() && forced("PRIMARY") {
        consider(plan_index(&def.primary, &[], preds, None, true, est));
    }
    for i in &def.indexes {
        if forced(&i.name) {
            let mut a = plan_index(
                &i.columns,
                &i.prefix,
                preds,
                Some(i.name.clone()),
                i.unique,
                est,
            );
            // A column prefix key finds the rows sharing the value's first
            // N characters, a range of them (the engine widens such
            // bounds; every row is checked against the predicate).
            if i.has_prefix() {
                a.point = false;
            }
            consider(a);
        }
    }
    match best {
        Some(a) if a.uses_key() => a,
        _ => Access::full_scan(
            force
                .as_ref()
                .filter(|f| !f.eq_ignore_ascii_case("PRIMARY"))
                .cloned(),
            est.rows,
        ),
    }
}

/// Exact coercion of a key value to a column type (None: not exact).
pub fn exact(v: &Value, ty: &ColumnType) -> Option<Value> {
    let c = quire_engine::types::coerce(v.clone(), ty, true, "key", 1).ok()?;
    (compare(&c, v) == Some(Ordering::Equal)).then_some(c)
}

/// One contiguous key range of an access, its values evaluated.
#[derive(Debug, Clone)]
pub struct KeyRange {
    pub prefix: Vec<Value>,
    pub lower: Bound<Vec<Value>>,
    pub upper: Bound<Vec<Value>>,
}

/// The key ranges of `acc` for the current row (None: a NULL key value,
/// which matches no row).
pub fn key_ranges(acc: &Access, r: &Row) -> SqlResult<Option<Vec<KeyRange>>> {
    let mut prefixes: Vec<Vec<Value>> = vec![Vec::new()];
    for p in &acc.eq {
        match p {
            Pred::Eq(e, null_safe) => {
                let v = e.eval(r)?;
                if v.is_null() && !null_safe {
                    return Ok(None);
                }
                for pr in prefixes.iter_mut() {
                    pr.push(v.clone());
                }
            }
            Pred::In(list) => {
                let mut vals: Vec<Value> = Vec::new();
                for e in list {
                    let v = e.eval(r)?;
                    if !v.is_null() && !vals.iter().any(|x| compare(x, &v) == Some(Ordering::Equal))
                    {
                        vals.push(v);
                    }
                }
                vals.sort_by(|a, b| compare(a, b).unwrap_or(Ordering::Equal));
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
    let end = |e: &Option<(E, bool)>| -> SqlResult<Option<Option<(Value, bool)>>> {
        match e {
            Some((e, inc)) => {
                let v = e.eval(r)?;
                if v.is_null() {
                    return Ok(None);
                }
                Ok(Some(Some((v, *inc))))
            }
            None => Ok(Some(None)),
        }
    };
    let Some(lo) = end(&acc.lo)? else {
        return Ok(None);
    };
    let Some(hi) = end(&acc.hi)? else {
        return Ok(None);
    };
    let mut out = Vec::with_capacity(prefixes.len());
    for pr in prefixes {
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
        out.push(KeyRange {
            lower: bound(&lo),
            upper: bound(&hi),
            prefix: pr,
        });
    }
    Ok(Some(out))
}
