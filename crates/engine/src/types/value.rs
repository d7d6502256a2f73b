//! # Runtime values
//!
//! [`Value`] is what flows between the SQL layer and the engine: one cell of
//! a row. After [`coerce`](super::coerce::coerce) a value has the canonical
//! variant of its column type:
//!
//! | column type                          | variant                          |
//! |--------------------------------------|----------------------------------|
//! | signed TINYINT..BIGINT               | `Int(i64)`                       |
//! | unsigned TINYINT..BIGINT             | `UInt(u64)`                      |
//! | DECIMAL(M,D)                         | `Decimal` with scale exactly D   |
//! | FLOAT                                | `Float(f32)`                     |
//! | DOUBLE                               | `Double(f64)`                    |
//! | CHAR/VARCHAR/TEXT/BINARY/VARBINARY/BLOB | `Bytes` (UTF-8 for text types) |
//! | DATE                                 | `Date`                           |
//! | DATETIME(fsp), TIMESTAMP(fsp)        | `DateTime`, micro rounded to fsp |
//!
//! ## Text rendering
//!
//! [`Value::to_mysql_text`] gives the bytes MySQL's text protocol sends for
//! a column of a given type; `Display` is the same without a type (datetime
//! microseconds shown when non-zero). Floating point follows `my_gcvt`:
//!
//! * DOUBLE: the shortest digits that read back as the same double, FLOAT:
//!   at most 6 significant digits (`FLT_DIG`), so FLOAT 1234567 shows as
//!   `1234570` and FLOAT 0.1 as `0.1`;
//! * fixed notation when the decimal exponent `decpt` (value =
//!   0.d₁d₂… × 10^decpt) satisfies −14 ≤ decpt ≤ 15 (`DBL_DIG`), or the
//!   number has digits after the point; scientific otherwise, written
//!   `1e20`, `1.5e-7`, `-1.2345678901234568e17` (no `+`, no exponent
//!   padding);
//! * `-0` for negative zero, as MySQL prints it.
//!
//! ## Comparison
//!
//! [`compare`] implements SQL comparison between two values (`None` when
//! either is NULL), after MySQL's `item_cmp_type` rules: integers compare
//! exactly (signed vs unsigned too), integers and decimals as decimals, any
//! pair with a FLOAT/DOUBLE as doubles, a string against a number as
//! doubles (`'abc' = 0`), a string against a date/datetime as a datetime
//! when the string parses as one, DATE against DATETIME as DATETIME (midnight).
//! Strings compare as bytes (binary collation, NO PAD: `'a' < 'a '`).

use std::cmp::Ordering;
use std::fmt;

use super::datetime::{parse_temporal, Date, DateTime};
use super::decimal::Decimal;
use super::time::Time;
use super::ColumnType;

/// One SQL value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Null,
    Int(i64),
    UInt(u64),
    Decimal(Decimal),
    Float(f32),
    Double(f64),
    /// Strings (UTF-8 bytes for text columns) and binary strings.
    Bytes(Vec<u8>),
    Date(Date),
    /// DATETIME and TIMESTAMP (no time zone; see the `datetime` module).
    DateTime(DateTime),
    /// TIME: a signed duration (see the `time` module).
    Time(Time),
}

impl Value {
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// Convenience constructor for text.
    pub fn text(s: &str) -> Value {
        Value::Bytes(s.as_bytes().to_vec())
    }

    /// The value as a double, MySQL-style (strings by their numeric prefix,
    /// dates as `YYYYMMDD[hhmmss[.ffffff]]`); `None` for NULL.
    pub fn to_f64(&self) -> Option<f64> {
        Some(match self {
            Value::Null => return None,
            Value::Int(v) => *v as f64,
            Value::UInt(v) => *v as f64,
            Value::Decimal(d) => d.to_f64(),
            Value::Float(v) => f64::from(*v),
            Value::Double(v) => *v,
            Value::Bytes(b) => string_to_f64_prefix(b),
            Value::Date(d) => d.to_number() as f64,
            Value::DateTime(t) => t.to_number() as f64 + f64::from(t.micro) / 1e6,
            Value::Time(t) => t.to_f64(),
        })
    }

    /// The value as an exact decimal when it is a number or temporal value
    /// (`None` for NULL, strings and non-finite doubles).
    pub fn to_decimal(&self) -> Option<Decimal> {
        match self {
            Value::Int(v) => Some(Decimal::from_i64(*v)),
            Value::UInt(v) => Some(Decimal::from_u64(*v)),
            Value::Decimal(d) => Some(d.clone()),
            Value::Float(v) => Decimal::from_f64(f64::from(*v)),
            Value::Double(v) => Decimal::from_f64(*v),
            Value::Date(d) => Some(Decimal::from_u64(d.to_number())),
            Value::DateTime(t) => Some(temporal_number(t)),
            Value::Time(t) => Some(time_number(t)),
            Value::Null | Value::Bytes(_) => None,
        }
    }

    /// The bytes MySQL's text protocol sends for this value in a column of
    /// type `ty` (`None` for NULL): DATETIME/TIMESTAMP with exactly `fsp`
    /// fractional digits, DECIMAL with exactly the column's scale, FLOAT and
    /// DOUBLE through `my_gcvt` rules.
    pub fn to_mysql_text(&self, ty: &ColumnType) -> Option<Vec<u8>> {
        self.mysql_text(ty).map(std::borrow::Cow::into_owned)
    }

    /// [`Value::to_mysql_text`] without a copy for strings (the result
    /// path writes a row's strings straight from the values).
    pub fn mysql_text(&self, ty: &ColumnType) -> Option<std::borrow::Cow<'_, [u8]>> {
        if let Value::Bytes(b) = self {
            return Some(std::borrow::Cow::Borrowed(b));
        }
        Some(std::borrow::Cow::Owned(match (self, ty) {
            (Value::Null, _) => return None,
            (Value::DateTime(t), ColumnType::DateTime { fsp } | ColumnType::Timestamp { fsp }) => {
                t.format_fsp(*fsp).into_bytes()
            }
            (Value::DateTime(t), ColumnType::Date) => t.date().to_string().into_bytes(),
            (Value::Time(t), ColumnType::Time { fsp }) => t.format_fsp(*fsp).into_bytes(),
            (Value::UInt(y), ColumnType::Year) => format!("{y:04}").into_bytes(),
            (Value::UInt(b), ColumnType::Bit { bits }) => bit_bytes(*b, *bits),
            (Value::Decimal(d), ColumnType::Decimal { scale, .. }) => {
                d.round_to_scale(*scale).to_string().into_bytes()
            }
            (Value::Double(v), ColumnType::Float) => format_float(*v as f32).into_bytes(),
            (v, _) => v.to_string().into_bytes(),
        }))
    }

    /// [`Value::to_mysql_text`] as a `String` (invalid UTF-8 replaced).
    pub fn to_string_mysql(&self, ty: &ColumnType) -> String {
        match self.to_mysql_text(ty) {
            None => "NULL".to_string(),
            Some(b) => String::from_utf8_lossy(&b).into_owned(),
        }
    }
}

/// A BIT(bits) value as the protocol and `mariadb` show it: the
/// big-endian bytes, ⌈bits/8⌉ of them.
pub fn bit_bytes(v: u64, bits: u8) -> Vec<u8> {
    let n = usize::from(bits).div_ceil(8).clamp(1, 8);
    v.to_be_bytes()[8 - n..].to_vec()
}

/// `[-]hhmmss[.ffffff]` as an exact decimal.
pub(crate) fn time_number(t: &Time) -> Decimal {
    let whole = i128::from(t.to_number());
    let micro = i128::from(t.parts().3);
    if micro == 0 {
        Decimal::from_mantissa(whole, 0)
    } else if whole < 0 || t.is_negative() {
        Decimal::from_mantissa(whole * 1_000_000 - micro, 6)
    } else {
        Decimal::from_mantissa(whole * 1_000_000 + micro, 6)
    }
}

/// `YYYYMMDDhhmmss[.ffffff]` as an exact decimal.
pub(crate) fn temporal_number(t: &DateTime) -> Decimal {
    let whole = i128::from(t.to_number());
    if t.micro == 0 {
        Decimal::from_mantissa(whole, 0)
    } else {
        Decimal::from_mantissa(whole * 1_000_000 + i128::from(t.micro), 6)
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Null => f.write_str("NULL"),
            Value::Int(v) => write!(f, "{v}"),
            Value::UInt(v) => write!(f, "{v}"),
            Value::Decimal(d) => write!(f, "{d}"),
            Value::Float(v) => f.write_str(&format_float(*v)),
            Value::Double(v) => f.write_str(&format_double(*v)),
            Value::Bytes(b) => f.write_str(&String::from_utf8_lossy(b)),
            Value::Date(d) => write!(f, "{d}"),
            Value::DateTime(t) => write!(f, "{t}"),
            Value::Time(t) => write!(f, "{t}"),
        }
    }
}

impl From<i64> for Value {
    fn from(v: i64) -> Value {
        Value::Int(v)
    }
}

impl From<u64> for Value {
    fn from(v: u64) -> Value {
        Value::UInt(v)
    }
}

impl From<&str> for Value {
    fn from(v: &str) -> Value {
        Value::text(v)
    }
}

impl From<Decimal> for Value {
    fn from(v: Decimal) -> Value {
        Value::Decimal(v)
    }
}

// ---------------------------------------------------------------------------
// Floating-point text (my_gcvt).

/// MySQL's `DBL_DIG`-based switch between fixed and scientific notation.
const MAX_DECPT_FOR_F_FORMAT: i32 = 15;

/// Formats significant `digits` (no leading/trailing zeros) with decimal
/// exponent `decpt` (value = 0.digits × 10^decpt) the way `my_gcvt` does
/// with a wide buffer.
fn gcvt_layout(negative: bool, digits: &str, decpt: i32) -> String {
    let len = digits.len() as i32;
    let mut out = String::with_capacity(digits.len() + 8);
    if negative {
        out.push('-');
    }
    let fixed = (-MAX_DECPT_FOR_F_FORMAT < decpt && decpt <= MAX_DECPT_FOR_F_FORMAT)
        || (decpt > 0 && len > decpt);
    if fixed {
        if decpt <= 0 {
            out.push_str("0.");
            for _ in 0..(-decpt) {
                out.push('0');
            }
            out.push_str(digits);
        } else if decpt < len {
            out.push_str(&digits[..decpt as usize]);
            out.push('.');
            out.push_str(&digits[decpt as usize..]);
        } else {
            out.push_str(digits);
            for _ in 0..(decpt - len) {
                out.push('0');
            }
        }
    } else {
        out.push_str(&digits[..1]);
        if len > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        out.push('e');
        out.push_str(&(decpt - 1).to_string());
    }
    out
}

/// Splits Rust's `{:e}` output ("-1.2345e-7") into (negative, digits, decpt).
fn sci_parts(sci: &str) -> (bool, String, i32) {
    let (negative, body) = match sci.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, sci),
    };
    let (mantissa, exp) = body.split_once('e').unwrap_or((body, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let mut digits: String = mantissa.chars().filter(|c| c.is_ascii_digit()).collect();
    while digits.len() > 1 && digits.ends_with('0') {
        digits.pop();
    }
    (negative, digits, exp + 1)
}

/// A DOUBLE as MySQL prints it: shortest round-trip digits, `my_gcvt`
/// layout (`1.5`, `1e20`, `0.30000000000000004`, `1.2345678901234568e17`).
pub fn format_double(v: f64) -> String {
    if v.is_nan() {
        return "NaN".to_string();
    }
    if v.is_infinite() {
        return if v > 0.0 { "inf" } else { "-inf" }.to_string();
    }
    if v == 0.0 {
        return if v.is_sign_negative() { "-0" } else { "0" }.to_string();
    }
    let (negative, digits, decpt) = sci_parts(&format!("{v:e}"));
    gcvt_layout(negative, &digits, decpt)
}

/// A FLOAT as MySQL prints it: at most 6 significant digits (`FLT_DIG`),
/// `my_gcvt` layout (FLOAT 1234567 → `1234570`, 3.14159265 → `3.14159`).
pub fn format_float(v: f32) -> String {
    if v.is_nan() {
        return "NaN".to_string();
    }
    if v.is_infinite() {
        return if v > 0.0 { "inf" } else { "-inf" }.to_string();
    }
    if v == 0.0 {
        return if v.is_sign_negative() { "-0" } else { "0" }.to_string();
    }
    let wide = f64::from(v);
    // Shortest f32 digits when they are few enough, else 6 rounded digits.
    let shortest = format!("{v:e}");
    let (negative, digits, decpt) = if sci_parts(&shortest).1.len() <= 6 {
        sci_parts(&shortest)
    } else {
        sci_parts(&format!("{wide:.5e}"))
    };
    gcvt_layout(negative, &digits, decpt)
}

// ---------------------------------------------------------------------------
// String → number prefixes (comparison context, never errors).

/// The numeric prefix of a string as a double, 0 when there is none
/// (MySQL's `'12abc' + 0 = 12`, `'abc' = 0`).
pub(crate) fn string_to_f64_prefix(b: &[u8]) -> f64 {
    match scan_float_prefix(b) {
        Some((text, _)) => text.parse::<f64>().unwrap_or(0.0),
        None => 0.0,
    }
}

/// Finds `[ws][sign]digits[.digits][e[sign]digits]` at the start of `b`;
/// returns a canonical text Rust's `f64` parser accepts, and the bytes used.
pub(crate) fn scan_float_prefix(b: &[u8]) -> Option<(String, usize)> {
    let mut i = 0;
    while i < b.len() && b[i].is_ascii_whitespace() {
        i += 1;
    }
    let mut text = String::new();
    if i < b.len() && (b[i] == b'-' || b[i] == b'+') {
        if b[i] == b'-' {
            text.push('-');
        }
        i += 1;
    }
    let int_start = i;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    let int_digits = &b[int_start..i];
    let mut frac_digits: &[u8] = &[];
    if i < b.len() && b[i] == b'.' {
        let mut j = i + 1;
        while j < b.len() && b[j].is_ascii_digit() {
            j += 1;
        }
        if !int_digits.is_empty() || j > i + 1 {
            frac_digits = &b[i + 1..j];
            i = j;
        }
    }
    if int_digits.is_empty() && frac_digits.is_empty() {
        return None;
    }
    text.push_str(if int_digits.is_empty() {
        "0"
    } else {
        std::str::from_utf8(int_digits).unwrap_or("0")
    });
    if !frac_digits.is_empty() {
        text.push('.');
        text.push_str(std::str::from_utf8(frac_digits).unwrap_or("0"));
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        let mut j = i + 1;
        let mut exp = String::from("e");
        if j < b.len() && (b[j] == b'-' || b[j] == b'+') {
            if b[j] == b'-' {
                exp.push('-');
            }
            j += 1;
        }
        let start = j;
        while j < b.len() && b[j].is_ascii_digit() {
            j += 1;
        }
        if j > start {
            // Clamp absurd exponents; the parser saturates to inf/0 anyway.
            let digits = std::str::from_utf8(&b[start..j]).unwrap_or("0");
            let digits = digits.trim_start_matches('0');
            if digits.len() > 6 {
                exp.push_str("999999");
            } else if digits.is_empty() {
                exp.push('0');
            } else {
                exp.push_str(digits);
            }
            text.push_str(&exp);
            i = j;
        }
    }
    Some((text, i))
}

// ---------------------------------------------------------------------------
// Comparison.

fn is_number(v: &Value) -> bool {
    matches!(
        v,
        Value::Int(_) | Value::UInt(_) | Value::Decimal(_) | Value::Float(_) | Value::Double(_)
    )
}

fn is_temporal(v: &Value) -> bool {
    matches!(v, Value::Date(_) | Value::DateTime(_))
}

fn as_datetime(v: &Value) -> Option<DateTime> {
    match v {
        Value::Date(d) => Some(d.to_datetime()),
        Value::DateTime(t) => Some(*t),
        Value::Bytes(b) => parse_temporal(b).and_then(|p| p.to_datetime()),
        _ => None,
    }
}

fn int128(v: &Value) -> Option<i128> {
    match v {
        Value::Int(x) => Some(i128::from(*x)),
        Value::UInt(x) => Some(i128::from(*x)),
        _ => None,
    }
}

/// SQL comparison of two values; `None` if either is NULL (or a NaN is
/// involved). See the module docs for the conversion rules.
pub fn compare(a: &Value, b: &Value) -> Option<Ordering> {
    if a.is_null() || b.is_null() {
        return None;
    }
    if let (Some(x), Some(y)) = (int128(a), int128(b)) {
        return Some(x.cmp(&y));
    }
    match (a, b) {
        (Value::Bytes(x), Value::Bytes(y)) => return Some(x.cmp(y)),
        (Value::Float(x), Value::Float(y)) => return x.partial_cmp(y),
        _ => {}
    }
    if is_number(a) && is_number(b) {
        let float_involved = matches!(a, Value::Float(_) | Value::Double(_))
            || matches!(b, Value::Float(_) | Value::Double(_));
        if !float_involved {
            return Some(a.to_decimal()?.cmp(&b.to_decimal()?));
        }
        return a.to_f64()?.partial_cmp(&b.to_f64()?);
    }
    if matches!(a, Value::Time(_)) || matches!(b, Value::Time(_)) {
        return compare_time(a, b);
    }
    if is_temporal(a) || is_temporal(b) {
        if is_number(a) || is_number(b) {
            // Date against number: the date's numeric form.
            return match (a.to_decimal(), b.to_decimal()) {
                (Some(x), Some(y)) => Some(x.cmp(&y)),
                _ => a.to_f64()?.partial_cmp(&b.to_f64()?),
            };
        }
        if let (Some(x), Some(y)) = (as_datetime(a), as_datetime(b)) {
            return Some(x.cmp(&y));
        }
        // A string that is not a date: compare the texts.
        let x = a.to_string().into_bytes();
        let y = b.to_string().into_bytes();
        let (x, y) = match (a, b) {
            (Value::Bytes(s), _) => (s.clone(), y),
            (_, Value::Bytes(s)) => (x, s.clone()),
            _ => (x, y),
        };
        return Some(x.cmp(&y));
    }
    // String against number: both as doubles.
    a.to_f64()?.partial_cmp(&b.to_f64()?)
}

/// A TIME against anything (neither NULL): two TIMEs by their signed
/// duration, a string read as a TIME (its text when it is none), others
/// by their numbers (`hhmmss[.ffffff]`).
fn compare_time(a: &Value, b: &Value) -> Option<Ordering> {
    let as_time = |v: &Value| match v {
        Value::Time(t) => Some(*t),
        Value::Bytes(s) => std::str::from_utf8(s)
            .ok()
            .and_then(Time::parse)
            .and_then(|p| p.to_time(6).ok()),
        _ => None,
    };
    if let (Some(x), Some(y)) = (as_time(a), as_time(b)) {
        return Some(x.cmp(&y));
    }
    match (a, b) {
        (Value::Bytes(s), t) | (t, Value::Bytes(s)) => {
            let other = t.to_string().into_bytes();
            let ord = s.as_slice().cmp(other.as_slice());
            Some(if matches!(a, Value::Bytes(_)) {
                ord
            } else {
                ord.reverse()
            })
        }
        _ => match (a.to_decimal(), b.to_decimal()) {
            (Some(x), Some(y)) => Some(x.cmp(&y)),
            _ => a.to_f64()?.partial_cmp(&b.to_f64()?),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cmp::Ordering::{Equal, Greater, Less};

    fn dec(s: &str) -> Value {
        Value::Decimal(s.parse().unwrap())
    }

    #[test]
    fn double_text_like_mysql() {
        for (v, want) in [
            (1.5, "1.5"),
            (1e20, "1e20"),
            (1e15, "1e15"),
            (1e14, "100000000000000"),
            (123456789012345.0, "123456789012345"),
            (1234567890123456.0, "1.234567890123456e15"),
            (123456789012345.6, "123456789012345.6"),
            (1.2345678901234568e17, "1.2345678901234568e17"),
            (0.1 + 0.2, "0.30000000000000004"),
            (0.0001, "0.0001"),
            (1e-5, "0.00001"),
            (1e-15, "0.000000000000001"),
            (1e-16, "1e-16"),
            (1.5e-7, "0.00000015"),
            (-2.5, "-2.5"),
            (-1e100, "-1e100"),
            (100.0, "100"),
            (0.0, "0"),
            (-0.0, "-0"),
            (f64::MAX, "1.7976931348623157e308"),
            (5e-324, "5e-324"),
            (123.456, "123.456"),
        ] {
            assert_eq!(format_double(v), want, "{v:e}");
        }
    }

    #[test]
    fn float_text_like_mysql() {
        for (v, want) in [
            (0.1f32, "0.1"),
            (1.5, "1.5"),
            (1234567.0, "1234570"),
            (2.7182817, "2.71828"),
            (1.2345678, "1.23457"),
            (123456.0, "123456"),
            (1e20, "1e20"),
            (-0.000123, "-0.000123"),
            (16777216.0, "16777200"),
            (f32::MAX, "3.40282e38"),
        ] {
            assert_eq!(format_float(v), want, "{v:e}");
        }
    }

    #[test]
    fn value_display_and_text() {
        assert_eq!(Value::Int(-5).to_string(), "-5");
        assert_eq!(Value::UInt(u64::MAX).to_string(), "18446744073709551615");
        assert_eq!(dec("-0.50").to_string(), "-0.50");
        assert_eq!(Value::text("héllo").to_string(), "héllo");
        assert_eq!(Value::Null.to_string(), "NULL");
        let t = DateTime::new(2024, 1, 31, 10, 0, 0, 500_000).unwrap();
        assert_eq!(
            Value::DateTime(t).to_string_mysql(&ColumnType::DateTime { fsp: 6 }),
            "2024-01-31 10:00:00.500000"
        );
        assert_eq!(
            Value::DateTime(t).to_string_mysql(&ColumnType::Timestamp { fsp: 1 }),
            "2024-01-31 10:00:00.5"
        );
        assert_eq!(
            Value::Date(Date::new(2024, 1, 31).unwrap()).to_string_mysql(&ColumnType::Date),
            "2024-01-31"
        );
        assert_eq!(
            dec("1.5").to_string_mysql(&ColumnType::Decimal {
                precision: 10,
                scale: 2
            }),
            "1.50"
        );
        assert_eq!(Value::Null.to_mysql_text(&ColumnType::Double), None);
        assert_eq!(
            Value::Bytes(vec![0xff, 0]).to_mysql_text(&ColumnType::Blob { max_bytes: 65535 }),
            Some(vec![0xff, 0])
        );
    }

    #[test]
    fn compare_sql_semantics() {
        let c = compare;
        assert_eq!(c(&Value::Null, &Value::Int(1)), None);
        assert_eq!(c(&Value::Int(1), &Value::Null), None);
        assert_eq!(c(&Value::Int(-1), &Value::UInt(u64::MAX)), Some(Less));
        assert_eq!(c(&Value::UInt(5), &Value::Int(5)), Some(Equal));
        assert_eq!(c(&Value::Int(2), &dec("1.99")), Some(Greater));
        assert_eq!(c(&dec("1.0"), &Value::UInt(1)), Some(Equal));
        assert_eq!(c(&dec("-1.5"), &dec("-1.50")), Some(Equal));
        assert_eq!(c(&Value::Double(1.5), &dec("1.5")), Some(Equal));
        assert_eq!(c(&Value::Double(0.1), &Value::Float(0.1)), Some(Less));
        assert_eq!(c(&Value::Float(1.5), &Value::Float(2.5)), Some(Less));
        assert_eq!(c(&Value::Double(f64::NAN), &Value::Int(1)), None);
        assert_eq!(c(&Value::text("abc"), &Value::Int(0)), Some(Equal));
        assert_eq!(c(&Value::text("12abc"), &Value::Int(12)), Some(Equal));
        assert_eq!(c(&Value::text(" 1e2"), &Value::Double(100.0)), Some(Equal));
        assert_eq!(c(&Value::text("a"), &Value::text("a ")), Some(Less));
        assert_eq!(c(&Value::text("b"), &Value::text("ab")), Some(Greater));
        let d = Value::Date(Date::new(2024, 1, 31).unwrap());
        let t = Value::DateTime(DateTime::new(2024, 1, 31, 0, 0, 0, 0).unwrap());
        let t2 = Value::DateTime(DateTime::new(2024, 1, 31, 0, 0, 0, 1).unwrap());
        assert_eq!(c(&d, &t), Some(Equal));
        assert_eq!(c(&d, &t2), Some(Less));
        assert_eq!(c(&t2, &d), Some(Greater));
        assert_eq!(c(&d, &Value::text("2024-01-31")), Some(Equal));
        assert_eq!(c(&Value::text("2024-1-31 00:00:00"), &d), Some(Equal));
        assert_eq!(c(&d, &Value::Int(20240131)), Some(Equal));
        assert_eq!(c(&t2, &Value::Int(20240131000000)), Some(Greater));
        assert_eq!(c(&d, &Value::text("zzz")), Some(Less));
    }
}
