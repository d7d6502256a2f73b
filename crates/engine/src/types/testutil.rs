//! Test helpers shared by the codec tests: a tiny deterministic PRNG and
//! a generator of random, valid (coerced) values for every column type.

use super::coerce::coerce;
use super::value::Value;
use super::ColumnType;

/// xorshift64*: small deterministic PRNG for property tests.
pub(crate) struct Rng(pub(crate) u64);
impl Rng {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    pub(crate) fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.index(items.len())]
    }
    /// A position in a slice of `len` (> 0) items.
    pub(crate) fn index(&mut self, len: usize) -> usize {
        self.below(len as u64) as usize
    }
    pub(crate) fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
}

pub(crate) fn all_types() -> Vec<ColumnType> {
    let mut v = Vec::new();
    for unsigned in [false, true] {
        v.push(ColumnType::TinyInt { unsigned });
        v.push(ColumnType::SmallInt { unsigned });
        v.push(ColumnType::MediumInt { unsigned });
        v.push(ColumnType::Int { unsigned });
        v.push(ColumnType::BigInt { unsigned });
    }
    v.extend([
        ColumnType::Decimal {
            precision: 5,
            scale: 2,
        },
        ColumnType::Decimal {
            precision: 10,
            scale: 0,
        },
        ColumnType::Decimal {
            precision: 65,
            scale: 30,
        },
        ColumnType::Decimal {
            precision: 1,
            scale: 1,
        },
        ColumnType::Float,
        ColumnType::Double,
        ColumnType::char(6),
        ColumnType::varchar(8),
        ColumnType::text(255),
        ColumnType::Blob { max_bytes: 65535 },
        ColumnType::Binary { len: 4 },
        ColumnType::VarBinary { len: 8 },
        ColumnType::Date,
        ColumnType::DateTime { fsp: 0 },
        ColumnType::DateTime { fsp: 6 },
        ColumnType::Timestamp { fsp: 3 },
        ColumnType::Year,
        ColumnType::Time { fsp: 0 },
        ColumnType::Time { fsp: 6 },
        ColumnType::Bit { bits: 10 },
        ColumnType::Bit { bits: 64 },
        // Members in text order, so ordinal (key) order is text order.
        ColumnType::Enum {
            members: vec!["a".to_string(), "b".to_string(), "c".to_string()].into(),
        },
    ]);
    v
}

/// A random valid value of `ty` (NULL sometimes), built through coerce.
pub(crate) fn random_value(rng: &mut Rng, ty: &ColumnType) -> Value {
    if rng.below(12) == 0 {
        return Value::Null;
    }
    let raw = match *ty {
        ColumnType::TinyInt { .. }
        | ColumnType::SmallInt { .. }
        | ColumnType::MediumInt { .. }
        | ColumnType::Int { .. }
        | ColumnType::BigInt { .. } => {
            let (min, max) = ty.integer_range().unwrap();
            let x = match rng.below(4) {
                0 => *rng.pick(&[min, max, 0, -1, 1, min + 1, max - 1]),
                1 => i128::from(rng.next() as i8),
                _ => {
                    i128::from(rng.next() as i64)
                        + i128::from(rng.next() % 2) * i128::from(u64::MAX / 2)
                }
            };
            let x = x.clamp(min, max);
            if x < 0 {
                Value::Int(x as i64)
            } else {
                Value::UInt(x as u64)
            }
        }
        ColumnType::Decimal { precision, scale } => {
            let int_len = (precision - scale) as u64;
            let mut s = String::new();
            if rng.below(2) == 0 {
                s.push('-');
            }
            let n_int = rng.below(int_len + 1);
            for _ in 0..n_int {
                s.push((b'0' + rng.below(10) as u8) as char);
            }
            if n_int == 0 {
                s.push('0');
            }
            if scale > 0 {
                s.push('.');
                for _ in 0..rng.below(u64::from(scale) + 1) {
                    s.push(*rng.pick(&['0', '5', '9', '1']));
                }
            }
            Value::text(&s)
        }
        ColumnType::Float | ColumnType::Double => match rng.below(5) {
            0 => Value::Double(*rng.pick(&[0.0, -0.0, 1.0, -1.0, 1e-30, -1e30, 3.0e38, -3.0e38])),
            1 => Value::Double((rng.next() as i32) as f64 / 1024.0),
            _ => {
                let bits = rng.next();
                let x = f64::from_bits(bits);
                let x = if x.is_finite() { x } else { 1.5 };
                if matches!(ty, ColumnType::Float) {
                    Value::Double(f64::from(x as f32).clamp(-3.0e38, 3.0e38))
                } else {
                    Value::Double(x)
                }
            }
        },
        ColumnType::Char { .. } | ColumnType::Varchar { .. } | ColumnType::Text { .. } => {
            let alphabet = ["a", "b", " ", "\0", "\u{1}", "é", "z", "A"];
            let n = rng.below(7);
            let s: String = (0..n).map(|_| *rng.pick(&alphabet)).collect();
            Value::text(&s)
        }
        ColumnType::Blob { .. } | ColumnType::Binary { .. } | ColumnType::VarBinary { .. } => {
            let alphabet = [0u8, 1, 0xFF, 0xFE, b'a', b' ', 0x80];
            let n = rng.below(5);
            Value::Bytes((0..n).map(|_| *rng.pick(&alphabet)).collect())
        }
        ColumnType::Date | ColumnType::DateTime { .. } | ColumnType::Timestamp { .. } => {
            let (lo, hi) = if matches!(ty, ColumnType::Timestamp { .. }) {
                (1971, 2037)
            } else {
                (0, 9999)
            };
            let year = lo + rng.below(hi - lo + 1);
            let year = if rng.below(3) == 0 {
                *rng.pick(&[lo, hi, 2024])
            } else {
                year
            };
            let month = 1 + rng.below(12);
            let day = 1 + rng.below(28);
            let text = format!(
                "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02}.{:06}",
                rng.below(24),
                rng.below(60),
                rng.below(60),
                rng.below(1_000_000)
            );
            Value::text(&text)
        }
        ColumnType::Json => {
            let docs = ["null", "[1, 2.5]", "{\"k\": \"v\"}", "\"s\""];
            Value::text(docs[rng.below(4) as usize])
        }
        ColumnType::Year => Value::Int(*rng.pick(&[0, 1901, 2155, 1999, 2024, 69, 70])),
        ColumnType::Time { .. } => {
            let span = 2 * crate::types::Time::MAX_MICROS as u64 + 1;
            let micros = (rng.next() % span) as i64 - crate::types::Time::MAX_MICROS;
            let micros = if rng.below(4) == 0 {
                *rng.pick(&[0, 1, -1, crate::types::Time::MAX_MICROS])
            } else {
                micros
            };
            let t = crate::types::Time::from_micros(micros).unwrap();
            // Round down to whole seconds where rounding could leave the range.
            let t = crate::types::Time::from_micros(t.micros() / 1_000_000 * 1_000_000).unwrap();
            Value::Time(t)
        }
        ColumnType::Bit { bits } => {
            let x = rng.next();
            Value::UInt(if bits < 64 { x & ((1 << bits) - 1) } else { x })
        }
        ColumnType::Enum { ref members } | ColumnType::Set { ref members } => {
            let n = members.len().min(63) as u64;
            if matches!(ty, ColumnType::Enum { .. }) {
                Value::UInt(1 + rng.below(n))
            } else {
                Value::UInt(rng.below(1 << n))
            }
        }
    };
    coerce(raw, ty, true, "c", 1).unwrap_or_else(|e| panic!("{ty:?}: {e}"))
}
