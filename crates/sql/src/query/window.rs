//! # Window functions
//!
//! `f(...) OVER (PARTITION BY p ORDER BY o)` gives every row a value
//! computed over the rows of its partition, ordered by `o`. The operator
//! reads all its input (after GROUP BY and HAVING), then, for each window
//! function, sorts row positions by (partition, order), walks the
//! partitions and writes one value per row; each row leaves with its
//! values appended, in input order.
//!
//! Aggregates, FIRST_VALUE, LAST_VALUE and NTH_VALUE are computed over
//! each row's frame (`win_frame.rs`): by default, with ORDER BY, from the
//! partition's start to the current row's last peer (rows with equal order
//! keys), so a running SUM includes the peers; without ORDER BY, the whole
//! partition; or what `ROWS | RANGE BETWEEN ...` says. A frame that starts
//! at UNBOUNDED PRECEDING (or ends at UNBOUNDED FOLLOWING) only grows from
//! one row to the next, so its aggregate is built up row by row; other
//! explicit frames are aggregated afresh for each row. The ranking
//! functions, LAG/LEAD and NTILE look at the whole partition.
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

use crate::expr::{AggSpec, Arith, Row, WinFunc, WinSpec, E};
use crate::query::agg::AggState;
use crate::query::key::key_part;
use crate::query::ops::{null_first, split_row, BoxOp, Ex, Operator};
use crate::win_frame::{self, Bound, Partition};
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

/// `x + n` / `x - n` for RANGE offsets, with MySQL's arithmetic.
fn shift(x: &Value, n: &Value, add: bool) -> Result<Value, EngineError> {
    let op = if add { Arith::Add } else { Arith::Sub };
    E::Arith(op, Box::new(E::Lit(x.clone())), Box::new(E::Lit(n.clone()))).eval(&Row::new(&[], &[]))
}

/// Row `k`'s frame as a range of partition positions (empty when the
/// frame is).
fn frame_range(spec: &WinSpec, p: &Partition, k: usize) -> SqlResult<std::ops::Range<usize>> {
    let (lo, hi) = win_frame::bounds(spec.frame.as_ref(), p, k, &shift)?;
    Ok(match hi {
        Some(h) if lo <= h => lo..h + 1,
        _ => 0..0,
    })
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
            WinFunc::FirstValue | WinFunc::LastValue | WinFunc::NthValue => {
                let order = |i: usize| keyed[part[i]].order.as_slice();
                let p = Partition {
                    len: n,
                    order: &order,
                    peers: &peers,
                    desc: spec.order.first().is_some_and(|(_, d)| *d),
                };
                // NTH_VALUE(x, N): N a positive integer.
                let nth = match spec.func {
                    WinFunc::FirstValue => 1,
                    WinFunc::LastValue => 0,
                    _ => keyed[part[0]]
                        .args
                        .get(1)
                        .and_then(int)
                        .filter(|b| *b > 0)
                        .ok_or_else(|| {
                            EngineError::new(1210, "HY000", "Incorrect arguments to nth_value")
                        })? as usize,
                };
                for (k, &r) in part.iter().enumerate() {
                    let f = frame_range(spec, &p, k)?;
                    let at = if f.is_empty() {
                        None
                    } else if nth == 0 {
                        Some(f.end - 1)
                    } else {
                        Some(f.start + nth - 1).filter(|i| *i < f.end)
                    };
                    out[r] = at
                        .and_then(|i| keyed[part[i]].args.first().cloned())
                        .unwrap_or(Value::Null);
                }
            }
            WinFunc::Agg(kind) => {
                let agg = AggSpec {
                    kind,
                    arg: None,
                    distinct: spec.distinct,
                    coll: spec.coll,
                    json: spec.json,
                };
                if spec.frame.is_some() {
                    return self.framed_agg(spec, &agg, keyed, part, &peers, out);
                }
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

    /// An aggregate over explicit frames: grown row by row when the frame
    /// is anchored at either end of the partition, else per row.
    fn framed_agg(
        &self,
        spec: &WinSpec,
        agg: &AggSpec,
        keyed: &[Keyed],
        part: &[usize],
        peers: &[(usize, usize)],
        out: &mut [Value],
    ) -> SqlResult<()> {
        let n = part.len();
        let order = |i: usize| keyed[part[i]].order.as_slice();
        let p = Partition {
            len: n,
            order: &order,
            peers,
            desc: spec.order.first().is_some_and(|(_, d)| *d),
        };
        let arg = |i: usize| keyed[part[i]].args.first().cloned();
        let (start, end) = match &spec.frame {
            Some(f) => (&f.start, &f.end),
            None => return Err(EngineError::internal("framed aggregate without a frame")),
        };
        if *start == Bound::UnboundedPreceding || *end == Bound::UnboundedFollowing {
            let forward = *start == Bound::UnboundedPreceding;
            let mut state = AggState::new(agg.kind);
            // Rows added so far: 0..next (forward) or next..n (backward).
            let mut next = if forward { 0 } else { n };
            let ks: Vec<usize> = if forward {
                (0..n).collect()
            } else {
                (0..n).rev().collect()
            };
            for k in ks {
                let f = frame_range(spec, &p, k)?;
                if !f.is_empty() {
                    if forward {
                        while next < f.end {
                            state.add(agg, arg(next))?;
                            next += 1;
                        }
                    } else {
                        while next > f.start {
                            next -= 1;
                            state.add(agg, arg(next))?;
                        }
                    }
                }
                out[part[k]] = if f.is_empty() {
                    AggState::new(agg.kind).finish(agg)?
                } else {
                    state.finish(agg)?
                };
            }
            return Ok(());
        }
        for k in 0..n {
            let mut state = AggState::new(agg.kind);
            for i in frame_range(spec, &p, k)? {
                state.add(agg, arg(i))?;
            }
            out[part[k]] = state.finish(agg)?;
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
