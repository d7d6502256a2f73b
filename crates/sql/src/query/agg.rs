//! # Aggregate states: COUNT, SUM, AVG, MIN, MAX, GROUP_CONCAT, BIT_AND/OR
//!
//! One [`AggState`] per aggregate per group. Sums stay exact: integers in
//! an `i128`, exact numbers in DECIMAL, and only a float or string argument
//! makes the sum a DOUBLE, as MySQL does. AVG of exact numbers is a
//! DECIMAL with 4 more digits of scale (`div_precision_increment`).
//! `DISTINCT` arguments are de-duplicated by the hash key of `key.rs`
//! (MySQL's equality), not by their text.

use foldhash::HashSet;
use std::cmp::Ordering;

use quire_engine::types::Decimal;
use quire_engine::{EngineError, Value};

use crate::expr::compare_in;
use crate::expr::{AggKind, AggSpec};
use crate::query::key::{key_part_of, KeyOf, KeyPart};
use crate::SqlResult;

#[derive(Clone)]
pub struct AggState {
    count: i64,
    sum_int: i128,
    sum_dec: Option<Decimal>,
    sum_f: f64,
    kind_num: u8, // 0 int, 1 decimal, 2 double
    best: Value,
    concat: Vec<Vec<u8>>,
    bits: u64,
    seen: HashSet<Vec<KeyPart>>,
    any: bool,
}

impl AggState {
    pub fn new(kind: AggKind) -> AggState {
        AggState {
            count: 0,
            sum_int: 0,
            sum_dec: None,
            sum_f: 0.0,
            kind_num: 0,
            best: Value::Null,
            concat: Vec::new(),
            bits: if kind == AggKind::BitAnd { u64::MAX } else { 0 },
            seen: HashSet::default(),
            any: false,
        }
    }

    /// Adds one input row, whose argument value is `v` (None for
    /// COUNT(*)).
    pub fn add(&mut self, spec: &AggSpec, v: Option<Value>) -> SqlResult<()> {
        let Some(v) = v else {
            self.count += 1;
            return Ok(());
        };
        if v.is_null() {
            return Ok(());
        }
        // DISTINCT compares as the argument does: in its collation, or
        // as JSON values (1 and 1.0 count once).
        let kind = match spec.json {
            true => KeyOf::Json,
            false => KeyOf::of_coll(spec.coll),
        };
        if spec.distinct && !self.seen.insert(vec![key_part_of(&v, kind)]) {
            return Ok(());
        }
        self.count += 1;
        self.any = true;
        match spec.kind {
            AggKind::Sum | AggKind::Avg => match &v {
                Value::Int(i) if self.kind_num == 0 => {
                    self.sum_int = self
                        .sum_int
                        .checked_add(i128::from(*i))
                        .ok_or_else(|| EngineError::internal("sum overflow"))?
                }
                Value::UInt(u) if self.kind_num == 0 => {
                    self.sum_int = self
                        .sum_int
                        .checked_add(i128::from(*u))
                        .ok_or_else(|| EngineError::internal("sum overflow"))?
                }
                Value::Float(_) | Value::Double(_) | Value::Bytes(_) => {
                    self.kind_num = 2;
                    self.sum_f += v.to_f64().unwrap_or(0.0);
                }
                other => {
                    if self.kind_num == 0 {
                        self.kind_num = 1;
                    }
                    if let Some(d) = other.to_decimal() {
                        let cur = self.sum_dec.take().unwrap_or_else(Decimal::zero);
                        self.sum_dec = Some(cur.checked_add(&d).map_err(EngineError::internal)?);
                    }
                    self.sum_f += other.to_f64().unwrap_or(0.0);
                }
            },
            AggKind::Min | AggKind::Max => {
                let order = match spec.json {
                    true => crate::func::json::compare(&v, true, &self.best, true)?,
                    false => compare_in(&v, &self.best, spec.coll),
                };
                let better = self.best.is_null()
                    || match order {
                        Some(Ordering::Less) => spec.kind == AggKind::Min,
                        Some(Ordering::Greater) => spec.kind == AggKind::Max,
                        _ => false,
                    };
                if better {
                    self.best = v;
                }
            }
            AggKind::GroupConcat => self.concat.push(match v {
                Value::Bytes(b) => b,
                o => o.to_string().into_bytes(),
            }),
            AggKind::BitAnd | AggKind::BitOr => {
                let x = match v {
                    Value::Int(i) => i as u64,
                    Value::UInt(u) => u,
                    o => o.to_f64().unwrap_or(0.0) as u64,
                };
                if spec.kind == AggKind::BitAnd {
                    self.bits &= x;
                } else {
                    self.bits |= x;
                }
            }
            AggKind::Count | AggKind::CountStar => {}
        }
        Ok(())
    }

    pub fn finish(&self, spec: &AggSpec) -> SqlResult<Value> {
        Ok(match spec.kind {
            AggKind::Count | AggKind::CountStar => Value::Int(self.count),
            AggKind::Sum | AggKind::Avg => {
                if !self.any {
                    return Ok(Value::Null);
                }
                let total = match self.kind_num {
                    0 => Value::Decimal(Decimal::from_mantissa(self.sum_int, 0)),
                    1 => {
                        let d = self.sum_dec.clone().unwrap_or_else(Decimal::zero);
                        let i = Decimal::from_mantissa(self.sum_int, 0);
                        Value::Decimal(d.checked_add(&i).map_err(EngineError::internal)?)
                    }
                    _ => Value::Double(self.sum_f + self.sum_int as f64),
                };
                if spec.kind == AggKind::Sum {
                    total
                } else {
                    match total {
                        // As MySQL's `/` (the sum divided by the count,
                        // cut after whole 9-digit groups); the result
                        // column's scale (s + 4) rounds it.
                        Value::Decimal(d) => Value::Decimal(
                            d.checked_div_mysql(&Decimal::from_i64(self.count))
                                .map_err(EngineError::internal)?,
                        ),
                        other => Value::Double(other.to_f64().unwrap_or(0.0) / self.count as f64),
                    }
                }
            }
            AggKind::Min | AggKind::Max => self.best.clone(),
            AggKind::GroupConcat => {
                if !self.any {
                    Value::Null
                } else {
                    Value::Bytes(self.concat.join(&b","[..]))
                }
            }
            AggKind::BitAnd | AggKind::BitOr => Value::UInt(self.bits),
        })
    }
}
