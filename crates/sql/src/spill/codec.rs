//! # The spill row codec
//!
//! Rows written to temporary files are read back by the same process a
//! moment later, so the format only has to be compact, self-describing
//! and checked, not stable across versions. A row is its value count
//! then each value as a tag byte and its payload:
//!
//! ```text
//!   row     count varint | value*
//!   value   0 NULL
//!           1 INT       zigzag varint
//!           2 UINT      varint
//!           3 DECIMAL   scale u8 | text length varint | text (as printed)
//!           4 FLOAT     4 bytes LE          5 DOUBLE  8 bytes LE
//!           6 BYTES     length varint | bytes
//!           7 DATE      year u16 LE | month | day
//!           8 DATETIME  year u16 LE | month | day | hour | minute | second
//!                       | micro u32 LE
//! ```
//!
//! Decoding checks every length against the bytes left and every tag,
//! and a DECIMAL's scale against the text read back: a damaged file is
//! an error (1030, "Got error ... from storage engine"), never a wrong
//! row.

use quire_engine::types::{Date, DateTime, Decimal};
use quire_engine::{EngineError, Value};

use crate::SqlResult;

const NULL: u8 = 0;
const INT: u8 = 1;
const UINT: u8 = 2;
const DECIMAL: u8 = 3;
const FLOAT: u8 = 4;
const DOUBLE: u8 = 5;
const BYTES: u8 = 6;
const DATE: u8 = 7;
const DATETIME: u8 = 8;
const TIME: u8 = 9;

/// The error for a spill file that does not read back as written.
pub fn corrupt(what: &str) -> EngineError {
    EngineError::new(
        1030,
        "HY000",
        format!("Got error 'corrupt temporary file: {what}' from storage engine"),
    )
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Appends the encoding of `row` to `out`.
pub fn encode_row(out: &mut Vec<u8>, row: &[Value]) {
    put_varint(out, row.len() as u64);
    for v in row {
        encode_value(out, v);
    }
}

fn encode_value(out: &mut Vec<u8>, v: &Value) {
    match v {
        Value::Null => out.push(NULL),
        Value::Int(i) => {
            out.push(INT);
            put_varint(out, ((*i << 1) ^ (*i >> 63)) as u64);
        }
        Value::UInt(u) => {
            out.push(UINT);
            put_varint(out, *u);
        }
        Value::Decimal(d) => {
            out.push(DECIMAL);
            out.push(d.scale());
            let s = d.to_string();
            put_varint(out, s.len() as u64);
            out.extend_from_slice(s.as_bytes());
        }
        Value::Float(f) => {
            out.push(FLOAT);
            out.extend_from_slice(&f.to_le_bytes());
        }
        Value::Double(f) => {
            out.push(DOUBLE);
            out.extend_from_slice(&f.to_le_bytes());
        }
        Value::Bytes(b) => {
            out.push(BYTES);
            put_varint(out, b.len() as u64);
            out.extend_from_slice(b);
        }
        Value::Date(d) => {
            out.push(DATE);
            out.extend_from_slice(&d.year.to_le_bytes());
            out.extend_from_slice(&[d.month, d.day]);
        }
        Value::DateTime(t) => {
            out.push(DATETIME);
            out.extend_from_slice(&t.year.to_le_bytes());
            out.extend_from_slice(&[t.month, t.day, t.hour, t.minute, t.second]);
            out.extend_from_slice(&t.micro.to_le_bytes());
        }
        Value::Time(t) => {
            out.push(TIME);
            out.extend_from_slice(&t.micros().to_le_bytes());
        }
    }
}

/// Reads values back from a byte slice, checking as it goes.
pub struct Decoder<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Decoder<'a> {
    pub fn new(buf: &'a [u8]) -> Decoder<'a> {
        Decoder { buf, pos: 0 }
    }

    /// Bytes not consumed yet.
    pub fn rest(&self) -> usize {
        self.buf.len() - self.pos
    }

    fn take(&mut self, n: usize) -> SqlResult<&'a [u8]> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|e| *e <= self.buf.len())
            .ok_or_else(|| corrupt("value past the end of its block"))?;
        let s = &self.buf[self.pos..end];
        self.pos = end;
        Ok(s)
    }

    fn byte(&mut self) -> SqlResult<u8> {
        Ok(self.take(1)?[0])
    }

    fn varint(&mut self) -> SqlResult<u64> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.byte()?;
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(corrupt("varint longer than 10 bytes"))
    }

    fn len(&mut self) -> SqlResult<usize> {
        let n = self.varint()?;
        usize::try_from(n)
            .ok()
            .filter(|n| *n <= self.buf.len() - self.pos)
            .ok_or_else(|| corrupt("length past the end of its block"))
    }

    fn array<const N: usize>(&mut self) -> SqlResult<[u8; N]> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N)?);
        Ok(a)
    }

    /// The next row.
    pub fn row(&mut self) -> SqlResult<Vec<Value>> {
        let n = self.len()?;
        let mut row = Vec::with_capacity(n);
        for _ in 0..n {
            row.push(self.value()?);
        }
        Ok(row)
    }

    fn value(&mut self) -> SqlResult<Value> {
        Ok(match self.byte()? {
            NULL => Value::Null,
            INT => {
                let z = self.varint()?;
                Value::Int(((z >> 1) as i64) ^ -((z & 1) as i64))
            }
            UINT => Value::UInt(self.varint()?),
            DECIMAL => {
                let scale = self.byte()?;
                let n = self.len()?;
                let text = std::str::from_utf8(self.take(n)?)
                    .map_err(|_| corrupt("decimal text is not UTF-8"))?;
                let d: Decimal = text
                    .parse()
                    .map_err(|_| corrupt("decimal text does not parse"))?;
                if d.scale() != scale {
                    return Err(corrupt("decimal scale changed"));
                }
                Value::Decimal(d)
            }
            FLOAT => Value::Float(f32::from_le_bytes(self.array()?)),
            DOUBLE => Value::Double(f64::from_le_bytes(self.array()?)),
            BYTES => {
                let n = self.len()?;
                Value::Bytes(self.take(n)?.to_vec())
            }
            DATE => {
                let year = u16::from_le_bytes(self.array()?);
                let [month, day] = self.array()?;
                Value::Date(Date { year, month, day })
            }
            DATETIME => {
                let year = u16::from_le_bytes(self.array()?);
                let [month, day, hour, minute, second] = self.array()?;
                let micro = u32::from_le_bytes(self.array()?);
                if micro >= 1_000_000 {
                    return Err(corrupt("microseconds out of range"));
                }
                Value::DateTime(DateTime {
                    year,
                    month,
                    day,
                    hour,
                    minute,
                    second,
                    micro,
                })
            }
            TIME => {
                let micros = i64::from_le_bytes(self.array()?);
                Value::Time(
                    quire_engine::types::Time::from_micros(micros)
                        .ok_or_else(|| corrupt("time out of range"))?,
                )
            }
            t => return Err(corrupt(&format!("unknown value tag {t}"))),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Vec<Value> {
        vec![
            Value::Null,
            Value::Int(0),
            Value::Int(-1),
            Value::Int(i64::MIN),
            Value::Int(i64::MAX),
            Value::UInt(u64::MAX),
            Value::Decimal("-123.4500".parse().expect("decimal")),
            Value::Decimal("0.005".parse().expect("decimal")),
            Value::Float(1.5),
            Value::Double(-0.0),
            Value::Double(f64::NAN),
            Value::Bytes(Vec::new()),
            Value::Bytes(vec![0, 255, 7]),
            Value::Date(Date {
                year: 2024,
                month: 2,
                day: 29,
            }),
            Value::DateTime(DateTime {
                year: 9999,
                month: 12,
                day: 31,
                hour: 23,
                minute: 59,
                second: 59,
                micro: 999_999,
            }),
        ]
    }

    #[test]
    fn rows_read_back_as_written() {
        let row = sample();
        let mut buf = Vec::new();
        encode_row(&mut buf, &row);
        encode_row(&mut buf, &[]);
        let mut d = Decoder::new(&buf);
        let got = d.row().expect("row");
        assert_eq!(d.row().expect("empty row"), Vec::<Value>::new());
        assert_eq!(d.rest(), 0);
        assert_eq!(got.len(), row.len());
        for (a, b) in got.iter().zip(&row) {
            // NaN != NaN and Decimal has no Eq: compare the printed forms
            // and the variants.
            assert_eq!(format!("{a:?}"), format!("{b:?}"));
        }
    }

    #[test]
    fn truncated_or_damaged_input_is_an_error() {
        let mut buf = Vec::new();
        encode_row(&mut buf, &sample());
        for cut in 0..buf.len() {
            let r = Decoder::new(&buf[..cut]).row();
            assert_eq!(r.map_err(|e| e.code).err(), Some(1030), "cut at {cut}");
        }
        let mut bad = buf.clone();
        bad[1] = 42; // first value's tag
        assert_eq!(
            Decoder::new(&bad).row().map_err(|e| e.code).err(),
            Some(1030)
        );
    }
}
