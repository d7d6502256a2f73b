//! # Numeric functions
//!
//! Owns ROUND/TRUNCATE, the logarithms, EXP, POW, the trigonometric
//! functions, DEGREES/RADIANS, PI, RAND(seed), BIT_COUNT and the bit
//! operators `& | ^ ~ << >>`.
//!
//! Rules followed (MySQL 8.0):
//! * ROUND/TRUNCATE on exact values (integers, DECIMAL) stay exact and
//!   round half away from zero (`ROUND(2.5)` = 3, `ROUND(-2.5)` = -3); the
//!   result keeps the argument's type with the scale cut to the requested
//!   digits (`ROUND(1.2345, 2)` is DECIMAL with scale 2); on doubles the C
//!   library's `rint` applies: half to even (`ROUND(2.5e0)` = 2);
//! * LN/LOG/LOG2/LOG10 of a value ≤ 0 (and LOG with base 1) are NULL with
//!   warning 3020 "Invalid argument for logarithm";
//! * a double result that is not finite (EXP(1000), POW(10, 400),
//!   COT(0)) is error 1690 "DOUBLE value is out of range";
//! * SQRT, ASIN, ACOS outside their domain are NULL without a warning;
//! * RAND(n) is MySQL's `my_rnd` generator seeded as `my_rnd_init` does,
//!   so `RAND(1)` = 0.40540353712197724; a constant seed continues its
//!   sequence row after row within a statement;
//! * bit operators work on unsigned 64-bit integers (negative operands
//!   wrap) and give BIGINT UNSIGNED; shifts by 64 or more give 0.

use std::cell::RefCell;
use std::collections::HashMap;

use quire_engine::types::Decimal;
use quire_engine::{EngineError, Value};

use super::val;
use super::warn;
use crate::SqlResult;

fn out_of_range(what: &str) -> EngineError {
    EngineError::new(
        1690,
        "22003",
        format!("DOUBLE value is out of range in '{what}'"),
    )
}

fn finite(x: f64, what: impl FnOnce() -> String) -> SqlResult<Value> {
    if x.is_finite() {
        Ok(Value::Double(x))
    } else {
        Err(out_of_range(&what()))
    }
}

fn pow10_i128(k: u32) -> Option<i128> {
    10i128.checked_pow(k)
}

/// ROUND(x, d) / TRUNCATE(x, d).
pub fn round(x: &Value, d: i64, truncate: bool) -> SqlResult<Value> {
    Ok(match x {
        Value::Null => Value::Null,
        Value::Int(_) | Value::UInt(_) => {
            if d >= 0 {
                return Ok(x.clone());
            }
            let Some(p) = pow10_i128(d.unsigned_abs().min(40) as u32) else {
                return Ok(Value::Int(0));
            };
            let v = match x {
                Value::Int(i) => i128::from(*i),
                Value::UInt(u) => i128::from(*u),
                _ => 0,
            };
            let q = v / p;
            let r = v % p;
            let q = if !truncate && r.abs() * 2 >= p {
                q + v.signum()
            } else {
                q
            };
            let res = q * p;
            if matches!(x, Value::UInt(_)) {
                match u64::try_from(res) {
                    Ok(u) => Value::UInt(u),
                    Err(_) => return Err(range_err("round", x)),
                }
            } else {
                match i64::try_from(res) {
                    Ok(i) => Value::Int(i),
                    Err(_) => return Err(range_err("round", x)),
                }
            }
        }
        Value::Decimal(dec) => {
            if d >= i64::from(dec.scale()) {
                return Ok(x.clone());
            }
            if d >= 0 {
                let s = d as u8;
                return Ok(Value::Decimal(if truncate {
                    dec.truncate_to_scale(s)
                } else {
                    dec.round_to_scale(s)
                }));
            }
            let k = d.unsigned_abs().min(70) as u32;
            let whole = if truncate {
                dec.truncate_to_scale(0)
            } else {
                dec.clone()
            };
            match (
                whole.mantissa_i128(),
                pow10_i128(k + u32::from(whole.scale())),
            ) {
                (Some(m), Some(p)) => {
                    let q = m / p;
                    let r = m % p;
                    let q = if !truncate && r.abs() * 2 >= p {
                        q + m.signum()
                    } else {
                        q
                    };
                    match pow10_i128(k).and_then(|pk| q.checked_mul(pk)) {
                        Some(v) => Value::Decimal(Decimal::from_mantissa(v, 0)),
                        None => Value::Decimal(Decimal::zero()),
                    }
                }
                _ => Value::Decimal(Decimal::zero()),
            }
        }
        other => {
            let f = other.to_f64().unwrap_or(0.0);
            Value::Double(round_f64(f, d, truncate))
        }
    })
}

fn range_err(f: &str, x: &Value) -> EngineError {
    EngineError::new(
        1690,
        "22003",
        format!("BIGINT value is out of range in '{f}({x})'"),
    )
}

/// `my_double_round`.
pub fn round_f64(value: f64, dec: i64, truncate: bool) -> f64 {
    let neg = dec < 0;
    let abs = dec.unsigned_abs();
    let tmp = 10f64.powi(abs.min(400) as i32);
    let mul = value * tmp;
    if neg && tmp.is_infinite() {
        return 0.0;
    }
    if !neg && mul.is_infinite() {
        return value;
    }
    if truncate {
        if value >= 0.0 {
            if neg {
                (value / tmp).floor() * tmp
            } else {
                mul.floor() / tmp
            }
        } else if neg {
            (value / tmp).ceil() * tmp
        } else {
            mul.ceil() / tmp
        }
    } else if neg {
        (value / tmp).round_ties_even() * tmp
    } else {
        mul.round_ties_even() / tmp
    }
}

/// A double rounded to `d` decimals as fixed-point text (FORMAT: first
/// `my_double_round`, so half to even, then printed).
pub fn round_f64_str(f: f64, d: u8) -> String {
    let r = round_f64(f, i64::from(d), false);
    match Decimal::from_f64(r) {
        Some(dec) => dec.round_to_scale(d).to_string(),
        None => format!("{r:.prec$}", prec = usize::from(d)),
    }
}

/// RAND(n) with a constant seed: one sequence per call site (`site`, the
/// compiled expression's address) for the statement.
pub fn rand_at(site: usize, seed: &Value) -> Value {
    let s = val::int(seed).unwrap_or(0) as u32;
    RAND.with(|r| {
        let mut m = r.borrow_mut();
        let st = m.entry(site).or_insert_with(|| rnd_init(s));
        Value::Double(rnd_next(st))
    })
}

fn log_arg(x: f64) -> Option<f64> {
    if x <= 0.0 || x.is_nan() {
        warn::warn(3020, "Invalid argument for logarithm");
        None
    } else {
        Some(x)
    }
}

/// One-argument double functions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unary {
    Exp,
    Ln,
    Log2,
    Log10,
    Sin,
    Cos,
    Tan,
    Asin,
    Acos,
    Atan,
    Cot,
    Degrees,
    Radians,
}

pub fn unary(f: Unary, v: &Value) -> SqlResult<Value> {
    let Some(x) = val::f64v(v) else {
        return Ok(Value::Null);
    };
    let name = |n: &str| format!("{n}({v})");
    Ok(match f {
        Unary::Exp => return finite(x.exp(), || name("exp")),
        Unary::Ln => log_arg(x).map_or(Value::Null, |x| Value::Double(x.ln())),
        Unary::Log2 => log_arg(x).map_or(Value::Null, |x| Value::Double(x.log2())),
        Unary::Log10 => log_arg(x).map_or(Value::Null, |x| Value::Double(x.log10())),
        Unary::Sin => Value::Double(x.sin()),
        Unary::Cos => Value::Double(x.cos()),
        Unary::Tan => return finite(x.tan(), || name("tan")),
        Unary::Asin => {
            if (-1.0..=1.0).contains(&x) {
                Value::Double(x.asin())
            } else {
                Value::Null
            }
        }
        Unary::Acos => {
            if (-1.0..=1.0).contains(&x) {
                Value::Double(x.acos())
            } else {
                Value::Null
            }
        }
        Unary::Atan => Value::Double(x.atan()),
        Unary::Cot => {
            let t = x.tan();
            if t == 0.0 {
                return Err(out_of_range(&name("cot")));
            }
            return finite(1.0 / t, || name("cot"));
        }
        Unary::Degrees => return finite(x.to_degrees(), || name("degrees")),
        Unary::Radians => Value::Double(x.to_radians()),
    })
}

/// LOG(x) or LOG(b, x).
pub fn log(args: &[Value]) -> Value {
    match args {
        [x] => match val::f64v(x) {
            Some(x) => log_arg(x).map_or(Value::Null, |x| Value::Double(x.ln())),
            None => Value::Null,
        },
        [b, x] => {
            let (Some(b), Some(x)) = (val::f64v(b), val::f64v(x)) else {
                return Value::Null;
            };
            if b <= 0.0 || x <= 0.0 || b == 1.0 {
                warn::warn(3020, "Invalid argument for logarithm");
                return Value::Null;
            }
            Value::Double(x.ln() / b.ln())
        }
        _ => Value::Null,
    }
}

pub fn pow(a: &Value, b: &Value) -> SqlResult<Value> {
    let (Some(x), Some(y)) = (val::f64v(a), val::f64v(b)) else {
        return Ok(Value::Null);
    };
    let r = x.powf(y);
    if r.is_nan() {
        // POW(-8, 1/3): MySQL raises the same range error.
        return Err(out_of_range(&format!("pow({a},{b})")));
    }
    finite(r, || format!("pow({a},{b})"))
}

pub fn atan2(a: &Value, b: &Value) -> Value {
    match (val::f64v(a), val::f64v(b)) {
        (Some(y), Some(x)) => Value::Double(y.atan2(x)),
        _ => Value::Null,
    }
}

// ------------------------------------------------------------------ RAND

thread_local! {
    static RAND: RefCell<HashMap<usize, (u64, u64)>> = RefCell::new(HashMap::new());
}

/// Forgets the per-statement RAND(n) sequences.
pub fn reset_rand() {
    RAND.with(|r| r.borrow_mut().clear());
}

const RND_MAX: u64 = 0x3FFF_FFFF;

fn rnd_init(seed: u32) -> (u64, u64) {
    let s = u64::from(seed);
    (
        (s.wrapping_mul(0x10001).wrapping_add(55_555_555)) % RND_MAX,
        (s.wrapping_mul(0x1000_0001)) % RND_MAX,
    )
}

fn rnd_next(st: &mut (u64, u64)) -> f64 {
    st.0 = (st.0 * 3 + st.1) % RND_MAX;
    st.1 = (st.0 + st.1 + 33) % RND_MAX;
    st.0 as f64 / RND_MAX as f64
}

/// RAND(seed) with a seed that is not a constant: seeded anew per row.
pub fn rand_seeded(seed: &Value) -> Value {
    let s = val::int(seed).unwrap_or(0) as u32;
    let mut st = rnd_init(s);
    Value::Double(rnd_next(&mut st))
}

// ------------------------------------------------------------ bit operators

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BitOp {
    And,
    Or,
    Xor,
    Shl,
    Shr,
}

pub fn bit(op: BitOp, a: &Value, b: &Value) -> Value {
    let (Some(x), Some(y)) = (val::uint_wrapping(a), val::uint_wrapping(b)) else {
        return Value::Null;
    };
    Value::UInt(match op {
        BitOp::And => x & y,
        BitOp::Or => x | y,
        BitOp::Xor => x ^ y,
        BitOp::Shl => {
            if y >= 64 {
                0
            } else {
                x << y
            }
        }
        BitOp::Shr => {
            if y >= 64 {
                0
            } else {
                x >> y
            }
        }
    })
}

pub fn bit_not(a: &Value) -> Value {
    val::uint_wrapping(a).map_or(Value::Null, |x| Value::UInt(!x))
}

pub fn bit_count(a: &Value) -> Value {
    val::uint_wrapping(a).map_or(Value::Null, |x| Value::Int(i64::from(x.count_ones())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding() {
        let d = |s: &str| Value::Decimal(s.parse().expect("dec"));
        assert_eq!(round(&d("2.5"), 0, false).unwrap().to_string(), "3");
        assert_eq!(round(&d("-2.5"), 0, false).unwrap().to_string(), "-3");
        assert_eq!(round(&d("1.2345"), 2, false).unwrap().to_string(), "1.23");
        assert_eq!(round(&d("1234.5"), -2, false).unwrap().to_string(), "1200");
        assert_eq!(round(&d("1250"), -2, false).unwrap().to_string(), "1300");
        assert_eq!(round(&Value::Int(-15), -1, false).unwrap(), Value::Int(-20));
        assert_eq!(round(&Value::Int(15), -1, true).unwrap(), Value::Int(10));
        assert_eq!(
            round(&Value::Double(2.5), 0, false).unwrap(),
            Value::Double(2.0)
        );
        assert_eq!(round(&d("1.999"), 1, true).unwrap().to_string(), "1.9");
    }

    #[test]
    fn rand_matches_mysql() {
        let Value::Double(x) = rand_seeded(&Value::Int(1)) else {
            panic!("double")
        };
        assert!((x - 0.405_403_537_121_977_24).abs() < 1e-15);
    }
}
