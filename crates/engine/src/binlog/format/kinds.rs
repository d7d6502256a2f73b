//! Row-image forms of YEAR, TIME, BIT, ENUM and SET, as MySQL 8.0's
//! `Field_*::pack` writes them and `mariadb-binlog` reads them:
//!
//! | type | TABLE_MAP code | metadata | value |
//! |---|---|---|---|
//! | YEAR | 13 YEAR | — | year − 1900 (0 for 0), 1 byte |
//! | TIME(fsp) | 19 TIME2 | fsp | `my_time_packed_to_binary`: 3 bytes (0x800000 + h<<12 \| m<<6 \| s, big-endian), then 0/1/2/3 bytes of fraction |
//! | BIT(n) | 16 BIT | n % 8, n / 8 | ⌈n/8⌉ bytes big-endian |
//! | ENUM | 254 STRING | 247, pack length (1 or 2) | the ordinal, little-endian |
//! | SET | 254 STRING | 248, pack length (⌈members/8⌉, 8 above 32) | the mask, little-endian |
//!
//! TIME's packed form is `(h<<12 | m<<6 | s) << 24 | µs`, negated for a
//! negative time; fsp 1–4 store the integer part shifted right by 24
//! (arithmetic) and the C remainder of the fraction, so a negative
//! fraction borrows from the integer part exactly as MySQL's does.

use crate::types::enumset::{enum_member, enum_ordinal, set_mask, set_mask_fits, set_text};
use crate::types::{ColumnType, Time, Value};

pub const YEAR: u8 = 13;
pub const BIT: u8 = 16;
pub const TIME2: u8 = 19;
pub const ENUM: u8 = 247;
pub const SET: u8 = 248;
/// MYSQL_TYPE_STRING, the TABLE_MAP code of ENUM and SET.
const STRING: u8 = 254;

const TIMEF_INT_OFS: i64 = 0x80_0000;
const TIMEF_OFS: i64 = 0x8000_0000_0000;

/// ENUM's stored width: 1 byte up to 255 members.
fn enum_pack_len(members: &[String]) -> usize {
    if members.len() < 256 {
        1
    } else {
        2
    }
}

/// SET's stored width: a bit per member, in 1, 2, 3, 4 or 8 bytes.
fn set_pack_len(members: &[String]) -> usize {
    match members.len().div_ceil(8) {
        0 | 1 => 1,
        n @ 2..=4 => n,
        _ => 8,
    }
}

/// `(code, metadata)` for the types of this module; `None` for others.
pub fn binlog_type(ty: &ColumnType) -> Option<(u8, Vec<u8>)> {
    Some(match ty {
        ColumnType::Year => (YEAR, Vec::new()),
        ColumnType::Time { fsp } => (TIME2, vec![*fsp]),
        ColumnType::Bit { bits } => (BIT, vec![bits % 8, bits / 8]),
        ColumnType::Enum { members } => (STRING, vec![ENUM, enum_pack_len(members) as u8]),
        ColumnType::Set { members } => (STRING, vec![SET, set_pack_len(members) as u8]),
        _ => return None,
    })
}

fn mismatch(v: &Value, ty: &ColumnType) -> String {
    format!("value {v:?} does not match column type {ty}")
}

fn time_packed(t: &Time) -> i64 {
    let (h, m, s, us) = t.parts();
    let packed = (((h as i64) << 12 | i64::from(m) << 6 | i64::from(s)) << 24) + i64::from(us);
    if t.is_negative() {
        -packed
    } else {
        packed
    }
}

fn put_be(out: &mut Vec<u8>, v: u64, width: usize) {
    out.extend_from_slice(&v.to_be_bytes()[8 - width..]);
}

fn frac_width(fsp: u8) -> usize {
    usize::from(fsp).div_ceil(2)
}

/// Appends a value of a type of this module; `Ok(false)` for other types.
pub fn encode_value(v: &Value, ty: &ColumnType, out: &mut Vec<u8>) -> Result<bool, String> {
    match ty {
        ColumnType::Year => {
            let Value::UInt(y) = v else {
                return Err(mismatch(v, ty));
            };
            out.push(if *y == 0 { 0 } else { (y - 1900) as u8 });
        }
        ColumnType::Time { fsp } => {
            let Value::Time(t) = v else {
                return Err(mismatch(v, ty));
            };
            let nr = time_packed(t);
            let int_part = nr >> 24;
            let frac = nr % (1 << 24);
            match fsp {
                0 => put_be(out, (TIMEF_INT_OFS + int_part) as u64, 3),
                1 | 2 => {
                    put_be(out, (TIMEF_INT_OFS + int_part) as u64, 3);
                    out.push((frac / 10_000) as i8 as u8);
                }
                3 | 4 => {
                    put_be(out, (TIMEF_INT_OFS + int_part) as u64, 3);
                    put_be(out, (frac / 100) as i16 as u16 as u64, 2);
                }
                _ => put_be(out, (nr + TIMEF_OFS) as u64, 6),
            }
        }
        ColumnType::Bit { bits } => {
            let Value::UInt(x) = v else {
                return Err(mismatch(v, ty));
            };
            put_be(out, *x, usize::from(*bits).div_ceil(8));
        }
        ColumnType::Enum { members } => {
            let ordinal = match v {
                Value::Bytes(b) => std::str::from_utf8(b)
                    .ok()
                    .and_then(|s| enum_ordinal(members, s)),
                _ => None,
            }
            .ok_or_else(|| mismatch(v, ty))?;
            let n = enum_pack_len(members);
            out.extend_from_slice(&ordinal.to_le_bytes()[..n]);
        }
        ColumnType::Set { members } => {
            let mask = match v {
                Value::Bytes(b) => std::str::from_utf8(b)
                    .ok()
                    .and_then(|s| set_mask(members, s)),
                _ => None,
            }
            .ok_or_else(|| mismatch(v, ty))?;
            let n = set_pack_len(members);
            out.extend_from_slice(&mask.to_le_bytes()[..n]);
        }
        _ => return Ok(false),
    }
    Ok(true)
}

fn take<'a>(buf: &'a [u8], n: usize, what: &str) -> Result<&'a [u8], String> {
    buf.get(..n)
        .ok_or_else(|| format!("{what} value is truncated"))
}

fn be(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0, |acc, &b| (acc << 8) | u64::from(b))
}

fn le(bytes: &[u8]) -> u64 {
    bytes
        .iter()
        .rev()
        .fold(0, |acc, &b| (acc << 8) | u64::from(b))
}

/// Reads a value of a type of this module: `Ok(None)` for other types.
pub fn decode_value(buf: &[u8], ty: &ColumnType) -> Result<Option<(Value, usize)>, String> {
    Ok(Some(match ty {
        ColumnType::Year => {
            let b = take(buf, 1, "YEAR")?[0];
            let y = if b == 0 { 0 } else { 1900 + u64::from(b) };
            (Value::UInt(y), 1)
        }
        ColumnType::Time { fsp } => {
            let fw = frac_width(*fsp);
            let raw = take(buf, 3 + fw, "TIME2")?;
            let nr = if fw == 3 {
                be(raw) as i64 - TIMEF_OFS
            } else {
                let mut int_part = be(&raw[..3]) as i64 - TIMEF_INT_OFS;
                let mut frac = match fw {
                    0 => 0,
                    1 => i64::from(raw[3]),
                    _ => be(&raw[3..5]) as i64,
                };
                if int_part < 0 && frac != 0 {
                    int_part += 1;
                    frac -= if fw == 1 { 0x100 } else { 0x1_0000 };
                }
                let scale = if fw == 1 { 10_000 } else { 100 };
                (int_part << 24) + frac * scale
            };
            let mag = nr.abs();
            let hms = mag >> 24;
            let (h, m, s) = (hms >> 12, (hms >> 6) & 63, hms & 63);
            let micros = ((h * 3600 + m * 60 + s) * 1_000_000) + (mag & 0xFF_FFFF);
            let t = Time::from_micros(if nr < 0 { -micros } else { micros })
                .ok_or("TIME2 value out of range")?;
            (Value::Time(t), 3 + fw)
        }
        ColumnType::Bit { bits } => {
            let n = usize::from(*bits).div_ceil(8);
            (Value::UInt(be(take(buf, n, "BIT")?)), n)
        }
        ColumnType::Enum { members } => {
            let n = enum_pack_len(members);
            let ordinal = le(take(buf, n, "ENUM")?);
            let m = enum_member(members, ordinal).ok_or("ENUM ordinal out of range")?;
            (Value::Bytes(m.as_bytes().to_vec()), n)
        }
        ColumnType::Set { members } => {
            let n = set_pack_len(members);
            let mask = le(take(buf, n, "SET")?);
            if !set_mask_fits(members, mask) {
                return Err("SET mask names no member".to_string());
            }
            (Value::Bytes(set_text(members, mask).into_bytes()), n)
        }
        _ => return Ok(None),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(ty: &ColumnType, v: Value) -> Vec<u8> {
        let mut out = Vec::new();
        assert!(encode_value(&v, ty, &mut out).unwrap());
        let (back, n) = decode_value(&out, ty).unwrap().unwrap();
        assert_eq!(back, v, "{ty}");
        assert_eq!(n, out.len());
        out
    }

    fn time(s: &str) -> Value {
        Value::Time(Time::parse(s).unwrap().to_time(6).unwrap())
    }

    #[test]
    fn time2_like_mysql() {
        // 10:11:12 at fsp 0: 0x800000 + (10<<12 | 11<<6 | 12).
        let b = round_trip(&ColumnType::Time { fsp: 0 }, time("10:11:12"));
        assert_eq!(be(&b) as i64, TIMEF_INT_OFS + (10 << 12 | 11 << 6 | 12));
        for fsp in 0..=6u8 {
            let ty = ColumnType::Time { fsp };
            for s in [
                "00:00:00",
                "-00:00:01",
                "838:59:59",
                "-838:59:59",
                "-12:34:56",
            ] {
                round_trip(&ty, time(s));
            }
        }
        for (fsp, s) in [
            (1, "-00:00:00.5"),
            (2, "-01:02:03.45"),
            (3, "-01:02:03.456"),
            (4, "12:00:00.1234"),
            (6, "-838:59:58.999999"),
        ] {
            round_trip(&ColumnType::Time { fsp }, time(s));
        }
    }

    #[test]
    fn year_bit_enum_set() {
        assert_eq!(round_trip(&ColumnType::Year, Value::UInt(2024)), [124]);
        assert_eq!(round_trip(&ColumnType::Year, Value::UInt(0)), [0]);
        assert_eq!(
            round_trip(&ColumnType::Bit { bits: 10 }, Value::UInt(0x2AB)),
            [0x02, 0xAB]
        );
        let members: crate::types::Members =
            vec!["b".to_string(), "a".to_string(), "c".to_string()].into();
        let e = ColumnType::Enum {
            members: members.clone(),
        };
        assert_eq!(round_trip(&e, Value::text("a")), [2]);
        let s = ColumnType::Set { members };
        assert_eq!(round_trip(&s, Value::text("b,c")), [0b101]);
        assert_eq!(binlog_type(&s), Some((STRING, vec![SET, 1])));
    }
}
