//! # Window functions
//!
//! `f(...) OVER (PARTITION BY p ORDER BY o)` gives every row a value
//! computed over the rows of its partition, ordered by `o`. The operator
//! reads all its input (after GROUP BY and HAVING), then, for each window
//! function, sorts row positions by (partition, order), walks the
//! partitions and writes one value per row; each row leaves with its
//! values appended, in input order.
//!
//! Frames are MySQL's defaults (explicit ROWS/RANGE frames are refused):
//! with ORDER BY, from the partition's start to the current row's last
//! peer (rows with equal order keys), so a running SUM includes the
//! peers; without ORDER BY, the whole partition.
//!
//! ```text
//!   partition  order  ROW_NUMBER RANK DENSE_RANK SUM(x)  (x = 1 each)
//!   a          1      1          1    1          1
//!   a          2      2          2    2          3      peers 2,2:
//!   a          2      3          2    2          3      same RANK/SUM
//!   a          5      4          4    3          4
//!   b          1      1          1    1          1
//! ```

use std::cmp::Ordering;

use quire_engine::{EngineError, Value};

use crate::expr::{AggSpec, WinFunc, WinSpec, E};
use crate::query::agg::AggState;
use crate::query::key::key_part;
use crate::query::ops::{null_first, split_row, BoxOp, Ex, Operator};
use crate::SqlResult;

pub struct WindowOp<'p> {
    input: BoxOp<'p>,
    specs: &'p [WinSpec],
    having: Option<&'p E>,
    agg_width: Option<usize>,
    out: Option<std::vec::IntoIter<Vec<Value>>>,
}

impl<'p> WindowOp<'p> {
    pub fn new(
        input: BoxOp<'p>,
        specs: &'p [WinSpec],
        having: Option<&'p E>,
        agg_width: Option<usize>,
    ) -> WindowOp<'p> {
        WindowOp {
            input,
            specs,
            having,
            agg_width,
            out: None,
        }
    }
}

/// Per row: partition keys, order keys, argument values.
struct Keyed {
    part: Vec<Value>,
    order: Vec<Value>,
    args: Vec<Value>,
}

fn cmp_keys(a: &[Value], b: &[Value], desc: &[bool]) -> Ordering {
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        let o = null_first(x, y);
        let o = if desc.get(i).copied().unwrap_or(false) {
            o.reverse()
        } else {
            o
        };
        if o != Ordering::Equal {
            return o;
        }
    }
    Ordering::Equal
}

fn same(a: &[Value], b: &[Value]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| key_part(x) == key_part(y))
}

fn int(v: &Value) -> Option<i64> {
    match v {
        Value::Int(i) => Some(*i),
        Value::UInt(u) => i64::try_from(*u).ok(),
        Value::Null => None,
        other => other.to_f64().map(|f| f as i64),
    }
}

impl<'p> WindowOp<'p> {
    fn eval_all(&self, es: &[E], row: &[Value], ex: &mut Ex<'_, 'p>) -> SqlResult<Vec<Value>> {
        let (r, aggs, _) = split_row(row, self.agg_width, 0);
        let mut out = Vec::with_capacity(es.len());
        for e in es {
            out.push(ex.eval(e, r, aggs)?);
        }
        Ok(out)
    }

    /// The values of window function `spec` for every row.
    fn compute(
        &self,
        spec: &WinSpec,
        rows: &[Vec<Value>],
        ex: &mut Ex<'_, 'p>,
    ) -> SqlResult<Vec<Value>> {
        let order_es: Vec<E> = spec.order.iter().map(|(e, _)| e.clone()).collect();
        let desc: Vec<bool> = spec.order.iter().map(|(_, d)| *d).collect();
        let mut keyed = Vec::with_capacity(rows.len());
        for r in rows {
            ex.txn.tick()?;
            keyed.push(Keyed {
                part: self.eval_all(&spec.partition, r, ex)?,
                order: self.eval_all(&order_es, r, ex)?,
                args: self.eval_all(&spec.args, r, ex)?,
            });
        }
        let mut idx: Vec<usize> = (0..rows.len()).collect();
        let no_desc = vec![false; spec.partition.len()];
        let t: &quire_engine::Txn = ex.txn;
        crate::sort::sort_stoppable(
            &mut idx,
            |&a, &b| {
                cmp_keys(&keyed[a].part, &keyed[b].part, &no_desc)
                    .then_with(|| cmp_keys(&keyed[a].order, &keyed[b].order, &desc))
            },
            || t.tick(),
        )?;
        let mut out = vec![Value::Null; rows.len()];
        let mut start = 0;
        while start < idx.len() {
            let mut end = start + 1;
            while end < idx.len() && same(&keyed[idx[end]].part, &keyed[idx[start]].part) {
                end += 1;
            }
            self.partition(spec, &keyed, &idx[start..end], &mut out)?;
            start = end;
        }
        Ok(out)
    }

    /// One partition: `part` holds row positions in window order.
    fn partition(
        &self,
        spec: &WinSpec,
        keyed: &[Keyed],
        part: &[usize],
        out: &mut [Value],
    ) -> SqlResult<()> {
        let n = part.len();
        let ordered = !spec.order.is_empty();
        // peers[i]: (first, last) position of row i's peer group.
        let mut peers = vec![(0usize, 0usize); n];
        let mut i = 0;
        while i < n {
            let mut j = i + 1;
            while ordered && j < n && same(&keyed[part[j]].order, &keyed[part[i]].order) {
                j += 1;
            }
            if !ordered {
                j = n;
            }
            for p in peers.iter_mut().take(j).skip(i) {
                *p = (i, j - 1);
            }
            i = j;
        }
        match spec.func {
            WinFunc::RowNumber => {
                for (k, &r) in part.iter().enumerate() {
                    out[r] = Value::UInt(k as u64 + 1);
                }
            }
            WinFunc::Rank | WinFunc::PercentRank => {
                for (k, &r) in part.iter().enumerate() {
                    let rank = peers[k].0 as u64 + 1;
                    out[r] = if spec.func == WinFunc::Rank {
                        Value::UInt(rank)
                    } else if n <= 1 {
                        Value::Double(0.0)
                    } else {
                        Value::Double((rank - 1) as f64 / (n - 1) as f64)
                    };
                }
            }
            WinFunc::DenseRank => {
                let mut dense = 0u64;
                for (k, &r) in part.iter().enumerate() {
                    if peers[k].0 == k {
                        dense += 1;
                    }
                    out[r] = Value::UInt(dense);
                }
            }
            WinFunc::CumeDist => {
                for (k, &r) in part.iter().enumerate() {
                    out[r] = Value::Double((peers[k].1 + 1) as f64 / n as f64);
                }
            }
            WinFunc::Ntile => {
                let buckets = keyed[part[0]]
                    .args
                    .first()
                    .and_then(int)
                    .filter(|b| *b > 0)
                    .ok_or_else(|| {
                        EngineError::new(1210, "HY000", "Incorrect arguments to ntile")
                    })? as usize;
                let (size, extra) = (n / buckets, n % buckets);
                let mut k = 0;
                for b in 0..buckets {
                    let len = size + usize::from(b < extra);
                    for _ in 0..len {
                        if k < n {
                            out[part[k]] = Value::UInt(b as u64 + 1);
                            k += 1;
                        }
                    }
                }
            }
            WinFunc::Lag | WinFunc::Lead => {
                for (k, &r) in part.iter().enumerate() {
                    let a = &keyed[r].args;
                    let off = match a.get(1) {
                        None => 1,
                        Some(v) => int(v).filter(|o| *o >= 0).ok_or_else(|| {
                            EngineError::new(1210, "HY000", "Incorrect arguments to lag/lead")
                        })? as usize,
                    };
                    let at = if spec.func == WinFunc::Lag {
                        k.checked_sub(off)
                    } else {
                        k.checked_add(off).filter(|x| *x < n)
                    };
                    out[r] = match at {
                        Some(p) => keyed[part[p]].args.first().cloned().unwrap_or(Value::Null),
                        None => a.get(2).cloned().unwrap_or(Value::Null),
                    };
                }
            }
            WinFunc::FirstValue => {
                let v = keyed[part[0]].args.first().cloned().unwrap_or(Value::Null);
                for &r in part {
                    out[r] = v.clone();
                }
            }
            WinFunc::LastValue => {
                for (k, &r) in part.iter().enumerate() {
                    let last = part[peers[k].1];
                    out[r] = keyed[last].args.first().cloned().unwrap_or(Value::Null);
                }
            }
            WinFunc::Agg(kind) => {
                let agg = AggSpec {
                    kind,
                    arg: None,
                    distinct: spec.distinct,
                };
                let mut state = AggState::new(kind);
                let mut k = 0;
                while k < n {
                    let (_, last) = peers[k];
                    for &r in &part[k..=last] {
                        state.add(&agg, keyed[r].args.first().cloned())?;
                    }
                    let v = state.finish(&agg)?;
                    for &r in &part[k..=last] {
                        out[r] = v.clone();
                    }
                    k = last + 1;
                }
            }
        }
        Ok(())
    }
}

impl<'p> Operator<'p> for WindowOp<'p> {
    fn next(&mut self, ex: &mut Ex<'_, 'p>) -> SqlResult<Option<Vec<Value>>> {
        if self.out.is_none() {
            let mut rows = Vec::new();
            while let Some(r) = self.input.next(ex)? {
                if let Some(h) = self.having {
                    let (row, aggs, _) = split_row(&r, self.agg_width, 0);
                    if crate::expr::truth(&ex.eval(h, row, aggs)?) != Some(true) {
                        continue;
                    }
                }
                rows.push(r);
            }
            let mut values = Vec::with_capacity(self.specs.len());
            for spec in self.specs {
                values.push(self.compute(spec, &rows, ex)?);
            }
            for (i, r) in rows.iter_mut().enumerate() {
                for v in &values {
                    r.push(v[i].clone());
                }
            }
            self.out = Some(rows.into_iter());
        }
        Ok(self.out.as_mut().and_then(|o| o.next()))
    }
}
