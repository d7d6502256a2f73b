//! # Memcomparable index keys
//!
//! [`encode_key`] turns a tuple of column values into bytes whose plain
//! lexicographic order (`memcmp`, what the B+tree compares) equals the SQL
//! order of the tuples, so the tree needs no knowledge of types. Each column
//! is a *null flag* byte followed, for non-NULL values, by a payload:
//!
//! | column type | payload (after flag 0x01; NULL is the lone byte 0x00) |
//! |---|---|
//! | signed TINYINT / SMALLINT / MEDIUMINT / INT / BIGINT | value + 2^(bits−1) as 1/2/3/4/8 bytes big-endian (two's complement with the sign bit flipped) |
//! | unsigned integers | value as 1/2/3/4/8 bytes big-endian |
//! | DECIMAL(M,D) | sign byte (0x00 negative, 0x01 zero/positive), then the value × 10^D as exactly M digits, two per byte (BCD, a leading 0 pad digit when M is odd); negative values store each digit d as 9−d, so larger magnitudes sort first; 1 + ⌈M/2⌉ bytes |
//! | FLOAT / DOUBLE | IEEE bits big-endian; positive: sign bit set; negative: all bits inverted; −0.0 encoded as +0.0 (4 / 8 bytes). NaN is not storable |
//! | BLOB, BINARY, VARBINARY; VARCHAR, TEXT in a byte-order NO PAD collation (`utf8mb4_0900_bin`) | the bytes with each 0x00 written 0x00 0xFF, then the terminator 0x00 0x01 |
//! | VARCHAR, TEXT in any other collation | the collation's weight string ([`Collation::weight`](super::collation::Collation::weight)), escaped and terminated as above |
//! | CHAR | as VARCHAR after removing trailing spaces (CHAR values never keep them) |
//! | DATE | (year×13 + month)×32 + day, 3 bytes big-endian |
//! | DATETIME, TIMESTAMP | the packed microsecond count of [`DateTime::pack`](super::datetime::DateTime::pack), 8 bytes big-endian |
//! | YEAR | the year, 2 bytes big-endian |
//! | TIME | signed microseconds with the sign bit flipped, 8 bytes big-endian |
//! | BIT(n) | the value, 8 bytes big-endian |
//! | ENUM | the 1-based ordinal, 2 bytes big-endian (index order is declaration order, as InnoDB's) |
//! | SET | the member mask, 8 bytes big-endian |
//!
//! Why these choices:
//!
//! * **NULL first**: InnoDB sorts NULL before every value in an index, and
//!   `ORDER BY c` returns NULLs first in MySQL; 0x00 < 0x01 does that.
//! * **Strings**: escaping 0x00 keeps the encoding prefix-free, so in a
//!   composite key one column never runs into the next, and gives
//!   `"a" < "a\0" < "ab"`: `"a"` ends with `00 01`, `"a\0"` continues with
//!   `00 FF`, `"ab"` with `62`. A character string in a collation other
//!   than byte order is keyed by its weight string, so the key order is
//!   the collation's order and strings the collation calls equal (`'abc'`
//!   and `'ABC'` under `_ci`) have one key: a UNIQUE index refuses the
//!   second. The row keeps the value itself; [`decode_key`] gives back the
//!   weight string for such a column (only its length is ever used).
//! * **Fixed widths** for numbers and dates: the column type is known when
//!   decoding, so no lengths are needed, and equal values have equal bytes
//!   (DECIMAL is encoded at the column's scale, so 1.5 and 1.50 agree).
//!
//! [`decode_key`] inverts the encoding given the column types (statistics
//! use it to find column boundaries), rejecting any malformed input with
//! an error rather than panicking.
//! [`key_prefix_successor`] gives the first key after every key starting
//! with a prefix, for range scans over `col1 = x` on an index `(col1, col2)`.
//!
//! Values should be what [`coerce`](super::coerce::coerce) produces; a few
//! exact conversions are accepted (`Int` for unsigned columns in range,
//! integers for DECIMAL, `Date` for DATETIME). `try_encode_key` reports
//! anything else as an error; `encode_key` panics on it (a caller bug).

use super::canon::{
    bit_of, bytes_of, date_of, datetime_of, decimal_of, decimal_width, f32_of, f64_of, get_decimal,
    int_of, int_width, mask_of, member_of, ordinal_of, put_decimal, set_of, time_of, year_of,
};
use super::datetime::{Date, DateTime};
use super::decimal::Decimal;
use super::time::Time;
use super::value::Value;
use super::ColumnType;

const NULL_FLAG: u8 = 0x00;
const VALUE_FLAG: u8 = 0x01;
const ESCAPE: u8 = 0xFF;
const TERMINATOR: u8 = 0x01;

/// Encodes `values` (a prefix of the index columns is allowed:
/// `values.len() <= types.len()`) by appending to `out`.
///
/// # Panics
/// If a value does not fit its column type (see [`try_encode_key`]).
pub fn encode_key(values: &[Value], types: &[ColumnType], out: &mut Vec<u8>) {
    if let Err(e) = try_encode_key(values, types, out) {
        panic!("encode_key: {e}; values must pass through coerce() first");
    }
}

/// [`encode_key`] that reports a value that does not fit its column type.
/// On error `out` may hold a partial key.
pub fn try_encode_key(
    values: &[Value],
    types: &[ColumnType],
    out: &mut Vec<u8>,
) -> Result<(), String> {
    if values.len() > types.len() {
        return Err(format!(
            "{} values for a key of {} columns",
            values.len(),
            types.len()
        ));
    }
    encode_parts(values.iter().zip(types), out)
}

/// Appends the key of each (value, column type) pair, in order.
pub fn encode_parts<'a>(
    parts: impl IntoIterator<Item = (&'a Value, &'a ColumnType)>,
    out: &mut Vec<u8>,
) -> Result<(), String> {
    for (v, ty) in parts {
        encode_one(v, ty, out)?;
    }
    Ok(())
}

fn put_uint_be(x: u64, width: usize, out: &mut Vec<u8>) {
    out.extend_from_slice(&x.to_be_bytes()[8 - width..]);
}

fn encode_one(v: &Value, ty: &ColumnType, out: &mut Vec<u8>) -> Result<(), String> {
    if v.is_null() {
        out.push(NULL_FLAG);
        return Ok(());
    }
    out.push(VALUE_FLAG);
    match *ty {
        ColumnType::TinyInt { unsigned }
        | ColumnType::SmallInt { unsigned }
        | ColumnType::MediumInt { unsigned }
        | ColumnType::Int { unsigned }
        | ColumnType::BigInt { unsigned } => {
            let x = int_of(v, ty)?;
            let width = int_width(ty);
            let biased = if unsigned {
                x
            } else {
                x + (1i128 << (width * 8 - 1))
            };
            put_uint_be(biased as u64, width, out);
        }
        ColumnType::Decimal { precision, scale } => {
            let (negative, digits) = decimal_of(v, ty, precision, scale)?;
            put_decimal(negative, &digits, out);
        }
        ColumnType::Float => {
            let x = f32_of(v, ty)?;
            let bits = if x == 0.0 { 0 } else { x.to_bits() };
            let key = if bits >> 31 == 1 {
                !bits
            } else {
                bits | (1 << 31)
            };
            out.extend_from_slice(&key.to_be_bytes());
        }
        ColumnType::Double => {
            let x = f64_of(v, ty)?;
            let bits = if x == 0.0 { 0 } else { x.to_bits() };
            let key = if bits >> 63 == 1 {
                !bits
            } else {
                bits | (1 << 63)
            };
            out.extend_from_slice(&key.to_be_bytes());
        }
        ColumnType::Char { .. }
        | ColumnType::Varchar { .. }
        | ColumnType::Text { .. }
        | ColumnType::Blob { .. }
        | ColumnType::Binary { .. }
        | ColumnType::VarBinary { .. } => {
            let bytes = bytes_of(v, ty)?;
            match ty.collation().filter(|c| !c.is_plain_bytes()) {
                None => put_escaped(bytes, out),
                Some(coll) => put_escaped(&coll.weight_of(bytes), out),
            }
        }
        ColumnType::Date => {
            put_uint_be(u64::from(date_of(v, ty)?.pack()), 3, out);
        }
        ColumnType::DateTime { .. } | ColumnType::Timestamp { .. } => {
            put_uint_be(datetime_of(v, ty)?.pack(), 8, out);
        }
        ColumnType::Year => put_uint_be(u64::from(year_of(v, ty)?), 2, out),
        ColumnType::Time { .. } => {
            put_uint_be((time_of(v, ty)?.micros() as u64) ^ (1 << 63), 8, out)
        }
        ColumnType::Bit { bits } => put_uint_be(bit_of(v, ty, bits)?, 8, out),
        ColumnType::Enum { ref members } => {
            put_uint_be(u64::from(ordinal_of(v, ty, members)?), 2, out)
        }
        ColumnType::Set { ref members } => put_uint_be(mask_of(v, ty, members)?, 8, out),
        // MySQL indexes JSON only through generated columns (3152).
        ColumnType::Json => return Err("a JSON column is not indexable".to_string()),
    }
    Ok(())
}

/// A column prefix key part (`KEY (c(n))`): the first `n` characters of
/// `v` for a character column (values are UTF-8 whatever the character
/// set, `collation.rs`: `n` UTF-8 sequences, which for latin1 and ascii
/// are their `n` characters too), the first `n` bytes for a binary one. The part is then encoded (weighed by the column's
/// collation) as a whole value would be. Other values are returned as
/// they are (NULL; a prefix is only ever set on a string column).
pub fn key_prefix(v: &Value, ty: &ColumnType, n: u32) -> Value {
    let Value::Bytes(b) = v else {
        return v.clone();
    };
    let n = n as usize;
    let characters = ty
        .collation()
        .is_some_and(|c| c.charset() != super::collation::Charset::Binary);
    let cut = if characters {
        utf8_prefix_len(b, n)
    } else {
        n.min(b.len())
    };
    Value::Bytes(b[..cut].to_vec())
}

/// The byte length of the first `chars` characters of UTF-8 `b` (a lead
/// byte's sequence length, clipped to what is there, so malformed input
/// is cut somewhere rather than refused).
fn utf8_prefix_len(b: &[u8], chars: usize) -> usize {
    let mut at = 0;
    for _ in 0..chars {
        if at >= b.len() {
            break;
        }
        let step = match b[at] {
            0xF0..=0xF7 => 4,
            0xE0..=0xEF => 3,
            0xC0..=0xDF => 2,
            _ => 1,
        };
        at = (at + step).min(b.len());
    }
    at
}

/// A string payload: each 0x00 escaped as 0x00 0xFF, then the terminator.
fn put_escaped(bytes: &[u8], out: &mut Vec<u8>) {
    for &b in bytes {
        out.push(b);
        if b == 0 {
            out.push(ESCAPE);
        }
    }
    out.push(0);
    out.push(TERMINATOR);
}

/// Decodes a whole key: every column of `types`, and nothing after it.
pub fn decode_key(buf: &[u8], types: &[ColumnType]) -> Result<Vec<Value>, String> {
    let (values, used) = decode_key_prefix(buf, types)?;
    if used != buf.len() {
        return Err(format!("{} bytes after the key", buf.len() - used));
    }
    Ok(values)
}

/// Decodes the columns `types` from the start of `buf`; returns them and
/// the number of bytes they took (the rest may be further columns, e.g. the
/// primary key appended to a secondary-index key).
pub fn decode_key_prefix(buf: &[u8], types: &[ColumnType]) -> Result<(Vec<Value>, usize), String> {
    let mut pos = 0;
    let mut values = Vec::with_capacity(types.len());
    for ty in types {
        let v = decode_one(buf, &mut pos, ty)?;
        values.push(v);
    }
    Ok((values, pos))
}

fn take<'a>(buf: &'a [u8], pos: &mut usize, n: usize) -> Result<&'a [u8], String> {
    let end = pos
        .checked_add(n)
        .filter(|&e| e <= buf.len())
        .ok_or_else(|| "key is truncated".to_string())?;
    let s = &buf[*pos..end];
    *pos = end;
    Ok(s)
}

fn get_uint_be(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0u64, |acc, &b| (acc << 8) | u64::from(b))
}

fn decode_one(buf: &[u8], pos: &mut usize, ty: &ColumnType) -> Result<Value, String> {
    match take(buf, pos, 1)?[0] {
        NULL_FLAG => return Ok(Value::Null),
        VALUE_FLAG => {}
        b => return Err(format!("bad null flag {b:#04x}")),
    }
    Ok(match *ty {
        ColumnType::TinyInt { unsigned }
        | ColumnType::SmallInt { unsigned }
        | ColumnType::MediumInt { unsigned }
        | ColumnType::Int { unsigned }
        | ColumnType::BigInt { unsigned } => {
            let width = int_width(ty);
            let raw = i128::from(get_uint_be(take(buf, pos, width)?));
            if unsigned {
                Value::UInt(raw as u64)
            } else {
                Value::Int((raw - (1i128 << (width * 8 - 1))) as i64)
            }
        }
        ColumnType::Decimal { precision, scale } => {
            let (negative, digits) =
                get_decimal(take(buf, pos, decimal_width(precision))?, precision)?;
            Value::Decimal(Decimal::from_fixed_digits(negative, digits, scale))
        }
        ColumnType::Float => {
            let key = get_uint_be(take(buf, pos, 4)?) as u32;
            let bits = if key >> 31 == 1 {
                key & !(1 << 31)
            } else {
                !key
            };
            let x = f32::from_bits(bits);
            if x.is_nan() || (x == 0.0 && bits != 0) {
                return Err("bad float key".to_string());
            }
            Value::Float(x)
        }
        ColumnType::Double => {
            let key = get_uint_be(take(buf, pos, 8)?);
            let bits = if key >> 63 == 1 {
                key & !(1 << 63)
            } else {
                !key
            };
            let x = f64::from_bits(bits);
            if x.is_nan() || (x == 0.0 && bits != 0) {
                return Err("bad double key".to_string());
            }
            Value::Double(x)
        }
        ColumnType::Char { .. }
        | ColumnType::Varchar { .. }
        | ColumnType::Text { .. }
        | ColumnType::Blob { .. }
        | ColumnType::Binary { .. }
        | ColumnType::VarBinary { .. } => {
            let mut bytes = Vec::new();
            loop {
                let b = take(buf, pos, 1)?[0];
                if b != 0 {
                    bytes.push(b);
                    continue;
                }
                match take(buf, pos, 1)?[0] {
                    ESCAPE => bytes.push(0),
                    TERMINATOR => break,
                    other => return Err(format!("bad string escape {other:#04x}")),
                }
            }
            Value::Bytes(bytes)
        }
        ColumnType::Date => {
            let packed = get_uint_be(take(buf, pos, 3)?) as u32;
            Value::Date(Date::unpack(packed).ok_or("bad date key")?)
        }
        ColumnType::DateTime { .. } | ColumnType::Timestamp { .. } => {
            let packed = get_uint_be(take(buf, pos, 8)?);
            Value::DateTime(DateTime::unpack(packed).ok_or("bad datetime key")?)
        }
        ColumnType::Year => {
            let y = get_uint_be(take(buf, pos, 2)?);
            year_of(&Value::UInt(y), ty)?;
            Value::UInt(y)
        }
        ColumnType::Time { .. } => {
            let micros = (get_uint_be(take(buf, pos, 8)?) ^ (1 << 63)) as i64;
            Value::Time(Time::from_micros(micros).ok_or("bad time key")?)
        }
        ColumnType::Bit { bits } => {
            let x = get_uint_be(take(buf, pos, 8)?);
            Value::UInt(bit_of(&Value::UInt(x), ty, bits)?)
        }
        ColumnType::Enum { ref members } => member_of(members, get_uint_be(take(buf, pos, 2)?))?,
        ColumnType::Set { ref members } => set_of(members, get_uint_be(take(buf, pos, 8)?))?,
        ColumnType::Json => return Err("a JSON column is not indexable".to_string()),
    })
}

/// The smallest byte string greater than every string that starts with
/// `prefix` (the exclusive upper bound of a prefix scan): drop trailing
/// 0xFF bytes and increment the last remaining byte. `None` when there is
/// no such bound (empty or all-0xFF prefix: scan to the end).
pub fn key_prefix_successor(prefix: &[u8]) -> Option<Vec<u8>> {
    let keep = prefix.iter().rposition(|&b| b != 0xFF)?;
    let mut out = prefix[..=keep].to_vec();
    out[keep] += 1;
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{all_types, random_value, Rng};
    use super::super::value::compare;
    use super::*;
    use std::cmp::Ordering;

    /// SQL order with NULL first (as an index orders it).
    fn sql_cmp(a: &Value, b: &Value) -> Ordering {
        match (a.is_null(), b.is_null()) {
            (true, true) => Ordering::Equal,
            (true, false) => Ordering::Less,
            (false, true) => Ordering::Greater,
            (false, false) => compare(a, b).unwrap(),
        }
    }

    fn key(values: &[Value], types: &[ColumnType]) -> Vec<u8> {
        let mut out = Vec::new();
        encode_key(values, types, &mut out);
        out
    }

    #[test]
    fn key_prefix_cuts_characters_or_bytes() {
        use super::super::collation::Collation;
        let utf = ColumnType::Varchar {
            len: 20,
            coll: Collation::Utf8mb4_0900AiCi,
        };
        let lat = ColumnType::Varchar {
            len: 20,
            coll: Collation::Latin1SwedishCi,
        };
        let bin = ColumnType::VarBinary { len: 20 };
        let v = Value::text("é€😀ab");
        assert_eq!(key_prefix(&v, &utf, 3), Value::text("é€😀"));
        assert_eq!(key_prefix(&v, &utf, 1), Value::text("é"));
        assert_eq!(key_prefix(&v, &utf, 50), v);
        assert_eq!(
            key_prefix(&v, &bin, 3),
            Value::Bytes("é€".as_bytes()[..3].to_vec())
        );
        assert_eq!(key_prefix(&Value::text("éabc"), &lat, 2), Value::text("éa"));
        assert_eq!(key_prefix(&Value::Null, &utf, 2), Value::Null);
        // A truncated sequence is cut at its end, never past it.
        let bad = Value::Bytes(vec![b'a', 0xF0, 0x9F]);
        assert_eq!(key_prefix(&bad, &utf, 5), bad);
        assert_eq!(key_prefix(&bad, &utf, 1), Value::text("a"));
    }

    #[test]
    fn key_order_matches_sql_order_for_every_type() {
        let mut rng = Rng(0x5EED_1234_ABCD_0001);
        for ty in all_types() {
            let values: Vec<Value> = (0..150).map(|_| random_value(&mut rng, &ty)).collect();
            let keys: Vec<Vec<u8>> = values
                .iter()
                .map(|v| key(std::slice::from_ref(v), std::slice::from_ref(&ty)))
                .collect();
            for i in 0..values.len() {
                // Round trip.
                let back = decode_key(&keys[i], std::slice::from_ref(&ty)).unwrap();
                assert_eq!(
                    sql_cmp(&back[0], &values[i]),
                    Ordering::Equal,
                    "{ty:?}: {:?} -> {:?}",
                    values[i],
                    back[0]
                );
                assert_eq!(key(&back, std::slice::from_ref(&ty)), keys[i]);
                for j in 0..values.len() {
                    assert_eq!(
                        keys[i].cmp(&keys[j]),
                        sql_cmp(&values[i], &values[j]),
                        "{ty:?}: {:?} vs {:?}",
                        values[i],
                        values[j]
                    );
                }
            }
        }
    }

    #[test]
    fn key_composite_order() {
        let mut rng = Rng(0xC0FF_EE00_1234_5678);
        let shapes: [Vec<ColumnType>; 4] = [
            vec![ColumnType::varchar(8), ColumnType::Int { unsigned: false }],
            vec![
                ColumnType::Blob { max_bytes: 255 },
                ColumnType::Blob { max_bytes: 255 },
            ],
            vec![
                ColumnType::char(6),
                ColumnType::Decimal {
                    precision: 5,
                    scale: 2,
                },
                ColumnType::DateTime { fsp: 6 },
            ],
            vec![
                ColumnType::Double,
                ColumnType::Date,
                ColumnType::VarBinary { len: 8 },
            ],
        ];
        for types in &shapes {
            let tuples: Vec<Vec<Value>> = (0..120)
                .map(|_| types.iter().map(|t| random_value(&mut rng, t)).collect())
                .collect();
            let keys: Vec<Vec<u8>> = tuples.iter().map(|t| key(t, types)).collect();
            for i in 0..tuples.len() {
                let back = decode_key(&keys[i], types).unwrap();
                assert_eq!(key(&back, types), keys[i]);
                for j in 0..tuples.len() {
                    let want = tuples[i]
                        .iter()
                        .zip(&tuples[j])
                        .map(|(a, b)| sql_cmp(a, b))
                        .find(|o| *o != Ordering::Equal)
                        .unwrap_or(Ordering::Equal);
                    assert_eq!(
                        keys[i].cmp(&keys[j]),
                        want,
                        "{:?} vs {:?}",
                        tuples[i],
                        tuples[j]
                    );
                }
            }
        }
    }

    #[test]
    fn key_string_escaping_examples() {
        let t = [ColumnType::VarBinary { len: 100 }];
        let k = |b: &[u8]| key(&[Value::Bytes(b.to_vec())], &t);
        assert!(k(b"a") < k(b"a\0"));
        assert!(k(b"a\0") < k(b"ab"));
        assert!(k(b"") < k(b"\0"));
        assert!(k(b"\0") < k(b"\0\0"));
        assert!(k(b"\0\0") < k(b"\x01"));
        assert_eq!(k(b"a\0"), vec![1, b'a', 0, 0xFF, 0, 1]);
        // Composite: ("a", "b") < ("a\0", "") < ("ab", "").
        let t2 = [
            ColumnType::VarBinary { len: 100 },
            ColumnType::VarBinary { len: 100 },
        ];
        let k2 =
            |a: &[u8], b: &[u8]| key(&[Value::Bytes(a.to_vec()), Value::Bytes(b.to_vec())], &t2);
        assert!(k2(b"a", b"zzz") < k2(b"a\0", b""));
        assert!(k2(b"a\0", b"") < k2(b"ab", b""));
        // CHAR ignores trailing spaces; VARCHAR does not.
        let ch = [ColumnType::char(5)];
        assert_eq!(
            key(&[Value::text("a  ")], &ch),
            key(&[Value::text("a")], &ch)
        );
        let vc = [ColumnType::varchar(5)];
        assert!(key(&[Value::text("a")], &vc) < key(&[Value::text("a ")], &vc));
    }

    #[test]
    fn key_numeric_examples() {
        let dec = [ColumnType::Decimal {
            precision: 6,
            scale: 3,
        }];
        let k = |s: &str| key(&[Value::Decimal(s.parse().unwrap())], &dec);
        let ordered = ["-1.5", "-1", "0", "0.001", "2"];
        for w in ordered.windows(2) {
            assert!(k(w[0]) < k(w[1]), "{w:?}");
        }
        assert_eq!(k("1.5"), k("1.500"));
        assert_eq!(k("1.5").len(), 1 + 1 + 3);
        // Integers accepted for DECIMAL, exactly.
        assert_eq!(key(&[Value::Int(2)], &dec), k("2"));
        assert!(try_encode_key(
            &[Value::Decimal("1.0005".parse().unwrap())],
            &dec,
            &mut Vec::new()
        )
        .is_err());
        assert!(try_encode_key(&[Value::Int(1000)], &dec, &mut Vec::new()).is_err());
        let dbl = [ColumnType::Double];
        assert_eq!(
            key(&[Value::Double(-0.0)], &dbl),
            key(&[Value::Double(0.0)], &dbl)
        );
        assert!(key(&[Value::Double(-1e-300)], &dbl) < key(&[Value::Double(0.0)], &dbl));
        assert!(
            key(&[Value::Double(f64::NEG_INFINITY)], &dbl) < key(&[Value::Double(f64::MIN)], &dbl)
        );
        assert!(try_encode_key(&[Value::Double(f64::NAN)], &dbl, &mut Vec::new()).is_err());
        let ti = [ColumnType::TinyInt { unsigned: false }];
        assert_eq!(key(&[Value::Int(-128)], &ti), vec![1, 0x00]);
        assert_eq!(key(&[Value::Int(127)], &ti), vec![1, 0xFF]);
        assert!(try_encode_key(&[Value::Int(128)], &ti, &mut Vec::new()).is_err());
        let ub = [ColumnType::BigInt { unsigned: true }];
        assert_eq!(key(&[Value::Int(5)], &ub), key(&[Value::UInt(5)], &ub));
        assert!(try_encode_key(&[Value::Int(-5)], &ub, &mut Vec::new()).is_err());
        assert!(try_encode_key(&[Value::text("5")], &ub, &mut Vec::new()).is_err());
        // NULL sorts first.
        assert!(key(&[Value::Null], &ti) < key(&[Value::Int(-128)], &ti));
        assert_eq!(key(&[Value::Null], &ti), vec![0]);
    }

    #[test]
    fn key_prefix_and_successor() {
        let types = [ColumnType::Int { unsigned: false }, ColumnType::varchar(10)];
        let prefix = key(&[Value::Int(5)], &types);
        let hi = key_prefix_successor(&prefix).unwrap();
        for s in ["", "a", "\u{10FFFF}", "zzzz"] {
            let full = key(&[Value::Int(5), Value::text(s)], &types);
            assert!(full.starts_with(&prefix));
            assert!(prefix <= full && full < hi);
        }
        assert!(key(&[Value::Int(6), Value::text("")], &types) >= hi);
        assert_eq!(key_prefix_successor(&[1, 2, 0xFF, 0xFF]), Some(vec![1, 3]));
        assert_eq!(key_prefix_successor(&[0xFF, 0xFF]), None);
        assert_eq!(key_prefix_successor(&[]), None);
        // decode_key_prefix splits a secondary key from the primary key.
        let sec = [ColumnType::varchar(10)];
        let pk = [ColumnType::BigInt { unsigned: true }];
        let mut k = key(&[Value::text("x\0y")], &sec);
        encode_key(&[Value::UInt(42)], &pk, &mut k);
        let (s, used) = decode_key_prefix(&k, &sec).unwrap();
        assert_eq!(s, vec![Value::text("x\0y")]);
        assert_eq!(decode_key(&k[used..], &pk).unwrap(), vec![Value::UInt(42)]);
        assert!(decode_key(&k, &sec).is_err(), "trailing bytes");
        assert!(try_encode_key(&[Value::Int(1), Value::Int(2)], &pk, &mut Vec::new()).is_err());
    }

    #[test]
    fn key_decode_garbage_never_panics() {
        let mut rng = Rng(0xBAD_C0DE);
        let types = all_types();
        for _ in 0..20_000 {
            let n = rng.below(24) as usize;
            let buf: Vec<u8> = (0..n)
                .map(|_| {
                    let r = rng.next() as u8;
                    *rng.pick(&[0u8, 1, 0xFF, r])
                })
                .collect();
            let k = 1 + rng.below(3) as usize;
            let tys: Vec<ColumnType> = (0..k).map(|_| rng.pick(&types).clone()).collect();
            if let Ok(values) = decode_key(&buf, &tys) {
                // Whatever decodes must re-encode to the same bytes.
                assert_eq!(key(&values, &tys), buf, "{tys:?}");
            }
        }
    }
}
