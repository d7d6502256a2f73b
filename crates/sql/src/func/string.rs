//! # String functions
//!
//! Owns SUBSTRING_INDEX, FIND_IN_SET, INSERT(), LOCATE with a start
//! position, FORMAT, UNHEX, TO_BASE64/FROM_BASE64, ELT, FIELD, QUOTE,
//! SPACE, ASCII, ORD, CHAR(), BIN/OCT/CONV, STRCMP, SOUNDEX, and the
//! length-checked REPEAT/LPAD/RPAD.
//!
//! Rules followed (MySQL 8.0):
//! * positions and lengths count characters (UTF-8), not bytes;
//! * string comparison (FIELD, FIND_IN_SET, STRCMP, LOCATE) is by bytes,
//!   the binary collation quire uses everywhere else (`=`, LIKE); MySQL's
//!   default `utf8mb4_0900_ai_ci` would ignore case;
//! * a result longer than `max_allowed_packet` is NULL with warning 1301
//!   (REPEAT, LPAD, RPAD, SPACE, INSERT); the limit is the session's
//!   value, passed in by the compiler as a trailing argument;
//! * FROM_BASE64 and UNHEX of malformed input are NULL; CONV with a base
//!   outside 2..36 (absolute) is NULL; a negative base means signed;
//! * QUOTE(NULL) is the four letters `NULL`, not NULL.

use base64::Engine as _;
use quire_engine::Value;

use super::val;
use super::warn;

fn chars(v: &Value) -> Vec<char> {
    val::text(v).chars().collect()
}

/// `max_allowed_packet` as the trailing argument the compiler adds.
fn limit(v: Option<&Value>) -> u64 {
    v.and_then(val::int)
        .map_or(67_108_864, |n| n.max(1024) as u64)
}

pub fn substring_index(s: &Value, delim: &Value, count: &Value) -> Value {
    let s = val::bytes(s);
    let d = val::bytes(delim);
    let Some(n) = val::int(count) else {
        return Value::Null;
    };
    if d.is_empty() || n == 0 {
        return Value::text("");
    }
    let mut pos = Vec::new();
    let mut i = 0;
    while i + d.len() <= s.len() {
        if s[i..i + d.len()] == d[..] {
            pos.push(i);
            i += d.len();
        } else {
            i += 1;
        }
    }
    if n > 0 {
        let k = n as usize;
        match pos.get(k - 1) {
            Some(&p) => Value::Bytes(s[..p].to_vec()),
            None => Value::Bytes(s),
        }
    } else {
        let k = n.unsigned_abs() as usize;
        if k > pos.len() {
            Value::Bytes(s)
        } else {
            let p = pos[pos.len() - k];
            Value::Bytes(s[p + d.len()..].to_vec())
        }
    }
}

pub fn find_in_set(needle: &Value, list: &Value) -> Value {
    let n = val::bytes(needle);
    let l = val::bytes(list);
    if n.contains(&b',') {
        return Value::Int(0);
    }
    if l.is_empty() {
        return Value::Int(0);
    }
    for (i, part) in l.split(|&b| b == b',').enumerate() {
        if part == n.as_slice() {
            return Value::Int(i as i64 + 1);
        }
    }
    Value::Int(0)
}

/// INSERT(str, pos, len, newstr).
pub fn insert(s: &Value, pos: &Value, len: &Value, new: &Value, max: Option<&Value>) -> Value {
    let c = chars(s);
    let (Some(p), Some(l)) = (val::int(pos), val::int(len)) else {
        return Value::Null;
    };
    let n = c.len() as i64;
    if p < 1 || p > n {
        return Value::Bytes(val::bytes(s));
    }
    let start = (p - 1) as usize;
    let end = if l < 0 || l > n - p {
        c.len()
    } else {
        start + l as usize
    };
    let mut out: String = c[..start].iter().collect();
    out.push_str(&val::text(new));
    out.extend(&c[end..]);
    if out.len() as u64 > limit(max) {
        warn::too_long("insert", limit(max));
        return Value::Null;
    }
    Value::text(&out)
}

/// LOCATE(sub, str[, pos]) / INSTR(str, sub) / POSITION(sub IN str).
pub fn locate(sub: &Value, s: &Value, pos: Option<&Value>) -> Value {
    let hay = chars(s);
    let needle = chars(sub);
    let start = match pos {
        None => 1,
        Some(p) => match val::int(p) {
            None => return Value::Null,
            Some(p) => p,
        },
    };
    if start < 1 || start as usize > hay.len() + 1 {
        return Value::Int(0);
    }
    let from = (start - 1) as usize;
    if needle.is_empty() {
        return Value::Int(start);
    }
    if needle.len() > hay.len() {
        return Value::Int(0);
    }
    for i in from..=hay.len() - needle.len() {
        if hay[i..i + needle.len()] == needle[..] {
            return Value::Int(i as i64 + 1);
        }
    }
    Value::Int(0)
}

/// Groups the integer digits of `s` (`-1234567.89`) by thousands.
fn group_thousands(s: &str) -> String {
    let (neg, body) = match s.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, s),
    };
    let (int, frac) = match body.split_once('.') {
        Some((a, b)) => (a, Some(b)),
        None => (body, None),
    };
    let mut out = String::new();
    for (i, ch) in int.chars().enumerate() {
        if i > 0 && (int.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    if let Some(f) = frac {
        out.push('.');
        out.push_str(f);
    }
    if neg && out.chars().any(|c| c.is_ascii_digit() && c != '0') {
        format!("-{out}")
    } else {
        out
    }
}

/// FORMAT(x, d): rounded to `d` decimals (at most 30), thousands grouped
/// with `,` (the `en_US` locale).
pub fn format(x: &Value, d: &Value) -> Value {
    let Some(d) = val::int(d) else {
        return Value::Null;
    };
    let d = d.clamp(0, 30) as u8;
    let s = match x {
        Value::Null => return Value::Null,
        Value::Int(_) | Value::UInt(_) | Value::Decimal(_) => match x.to_decimal() {
            Some(dec) => dec.round_to_scale(d).to_string(),
            None => return Value::Null,
        },
        other => super::math::round_f64_str(other.to_f64().unwrap_or(0.0), d),
    };
    Value::text(&group_thousands(&s))
}

pub fn unhex(v: &Value) -> Value {
    let s = val::bytes(v);
    let s: Vec<u8> = if s.len() % 2 == 1 {
        std::iter::once(b'0').chain(s).collect()
    } else {
        s
    };
    let mut out = Vec::with_capacity(s.len() / 2);
    for pair in s.chunks(2) {
        let h = |b: u8| (b as char).to_digit(16);
        match (h(pair[0]), h(pair[1])) {
            (Some(a), Some(b)) => out.push((a * 16 + b) as u8),
            _ => return Value::Null,
        }
    }
    Value::Bytes(out)
}

/// TO_BASE64: MySQL wraps the output every 76 characters.
pub fn to_base64(v: &Value) -> Value {
    let enc = base64::engine::general_purpose::STANDARD.encode(val::bytes(v));
    let mut out = String::with_capacity(enc.len() + enc.len() / 76);
    for (i, c) in enc.chars().enumerate() {
        if i > 0 && i.is_multiple_of(76) {
            out.push('\n');
        }
        out.push(c);
    }
    Value::text(&out)
}

pub fn from_base64(v: &Value) -> Value {
    let clean: Vec<u8> = val::bytes(v)
        .into_iter()
        .filter(|b| !b.is_ascii_whitespace())
        .collect();
    match base64::engine::general_purpose::STANDARD.decode(&clean) {
        Ok(b) => Value::Bytes(b),
        Err(_) => Value::Null,
    }
}

pub fn elt(args: &[Value]) -> Value {
    let Some(n) = args.first().and_then(val::int) else {
        return Value::Null;
    };
    if n < 1 {
        return Value::Null;
    }
    args.get(n as usize).cloned().unwrap_or(Value::Null)
}

pub fn field(args: &[Value]) -> Value {
    let Some(first) = args.first() else {
        return Value::Int(0);
    };
    if first.is_null() {
        return Value::Int(0);
    }
    let all_strings = args
        .iter()
        .all(|v| matches!(v, Value::Bytes(_) | Value::Null));
    for (i, v) in args.iter().enumerate().skip(1) {
        if v.is_null() {
            continue;
        }
        let eq = if all_strings {
            val::bytes(v) == val::bytes(first)
        } else if args.iter().all(|v| val::is_exact(v) || v.is_null()) {
            quire_engine::types::compare(first, v) == Some(std::cmp::Ordering::Equal)
        } else {
            first.to_f64() == v.to_f64()
        };
        if eq {
            return Value::Int(i as i64);
        }
    }
    Value::Int(0)
}

pub fn quote(v: &Value) -> Value {
    if v.is_null() {
        return Value::text("NULL");
    }
    let mut out = vec![b'\''];
    for b in val::bytes(v) {
        match b {
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\'' => out.extend_from_slice(b"\\'"),
            0 => out.extend_from_slice(b"\\0"),
            0x1a => out.extend_from_slice(b"\\Z"),
            other => out.push(other),
        }
    }
    out.push(b'\'');
    Value::Bytes(out)
}

pub fn space(n: &Value, max: Option<&Value>) -> Value {
    let Some(n) = val::int(n) else {
        return Value::Null;
    };
    let n = n.max(0) as u64;
    if n > limit(max) {
        warn::too_long("space", limit(max));
        return Value::Null;
    }
    Value::Bytes(vec![b' '; n as usize])
}

pub fn repeat(s: &Value, n: &Value, max: Option<&Value>) -> Value {
    let Some(n) = val::int(n) else {
        return Value::Null;
    };
    let b = val::bytes(s);
    let n = n.max(0) as u64;
    if b.is_empty() || n == 0 {
        return Value::text("");
    }
    if (b.len() as u64).saturating_mul(n) > limit(max) {
        warn::too_long("repeat", limit(max));
        return Value::Null;
    }
    Value::Bytes(b.repeat(n as usize))
}

pub fn pad(left: bool, s: &Value, n: &Value, p: &Value, max: Option<&Value>) -> Value {
    let Some(n) = val::int(n) else {
        return Value::Null;
    };
    if n < 0 {
        return Value::Null;
    }
    let c = chars(s);
    let n = n as u64;
    if n <= c.len() as u64 {
        return Value::text(&c[..n as usize].iter().collect::<String>());
    }
    let pad = chars(p);
    if pad.is_empty() {
        return Value::Null;
    }
    let max_char = c
        .iter()
        .chain(pad.iter())
        .map(|ch| ch.len_utf8() as u64)
        .max()
        .unwrap_or(1);
    if n.saturating_mul(max_char) > limit(max) {
        warn::too_long(if left { "lpad" } else { "rpad" }, limit(max));
        return Value::Null;
    }
    let fill: String = pad.iter().cycle().take(n as usize - c.len()).collect();
    let body: String = c.iter().collect();
    Value::text(&if left { fill + &body } else { body + &fill })
}

pub fn ascii(v: &Value) -> Value {
    Value::Int(val::bytes(v).first().map_or(0, |b| i64::from(*b)))
}

/// ORD: the first character's bytes as a big-endian number.
pub fn ord(v: &Value) -> Value {
    let b = val::bytes(v);
    let Some(&first) = b.first() else {
        return Value::Int(0);
    };
    let len = match first {
        0xC0..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xF7 => 4,
        _ => 1,
    };
    if b.len() < len || std::str::from_utf8(&b[..len]).is_err() {
        return Value::Int(i64::from(first));
    }
    Value::Int(b[..len].iter().fold(0i64, |a, &x| a * 256 + i64::from(x)))
}

/// CHAR(n, ...): each integer's bytes, big-endian without leading zero
/// bytes; NULL arguments are skipped.
pub fn char_fn(args: &[Value]) -> Value {
    let mut out = Vec::new();
    for a in args {
        let Some(n) = val::uint_wrapping(a) else {
            continue;
        };
        let n = n as u32;
        let bytes = n.to_be_bytes();
        let skip = bytes.iter().take_while(|&&b| b == 0).count().min(3);
        out.extend_from_slice(&bytes[skip..]);
    }
    Value::Bytes(out)
}

/// CONV(n, from, to), BIN(n) = CONV(n, 10, 2), OCT(n) = CONV(n, 10, 8).
pub fn conv(n: &Value, from: i64, to: i64) -> Value {
    if !(2..=36).contains(&from.abs()) || !(2..=36).contains(&to.abs()) {
        return Value::Null;
    }
    let s = match n {
        Value::Null => return Value::Null,
        Value::Int(_) | Value::UInt(_) | Value::Decimal(_) | Value::Double(_) | Value::Float(_)
            if from == 10 =>
        {
            // A number in base 10 is its integer value.
            match val::uint_wrapping(n) {
                Some(u) => {
                    if matches!(n, Value::Int(i) if *i < 0) || n.to_f64().is_some_and(|f| f < 0.0) {
                        format!("-{}", (u as i64).unsigned_abs())
                    } else {
                        u.to_string()
                    }
                }
                None => return Value::Null,
            }
        }
        other => val::text(other),
    };
    let t = s.trim();
    let (neg, digits) = match t.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, t),
    };
    let base = from.unsigned_abs() as u32;
    let mut acc: u64 = 0;
    let mut overflow = false;
    for ch in digits.chars() {
        let Some(d) = ch.to_digit(base) else { break };
        match acc
            .checked_mul(u64::from(base))
            .and_then(|x| x.checked_add(u64::from(d)))
        {
            Some(v) => acc = v,
            None => {
                overflow = true;
                break;
            }
        }
    }
    let value: u64 = if from < 0 {
        // Signed input: clamp to the i64 range.
        let mag = if overflow { u64::MAX } else { acc };
        let v: i64 = if neg {
            if mag > 1u64 << 63 {
                i64::MIN
            } else {
                (mag as i128).wrapping_neg() as i64
            }
        } else {
            mag.min(i64::MAX as u64) as i64
        };
        v as u64
    } else {
        let mag = if overflow { u64::MAX } else { acc };
        if neg {
            mag.wrapping_neg()
        } else {
            mag
        }
    };
    let to_b = to.unsigned_abs();
    let (neg_out, mut mag) = if to < 0 && (value as i64) < 0 {
        (true, (value as i64).unsigned_abs())
    } else {
        (false, value)
    };
    let mut out = Vec::new();
    loop {
        let d = (mag % to_b) as u32;
        out.push(
            std::char::from_digit(d, 36)
                .unwrap_or('0')
                .to_ascii_uppercase(),
        );
        mag /= to_b;
        if mag == 0 {
            break;
        }
    }
    if neg_out {
        out.push('-');
    }
    out.reverse();
    Value::text(&out.into_iter().collect::<String>())
}

pub fn strcmp(a: &Value, b: &Value) -> Value {
    Value::Int(match val::bytes(a).cmp(&val::bytes(b)) {
        std::cmp::Ordering::Less => -1,
        std::cmp::Ordering::Equal => 0,
        std::cmp::Ordering::Greater => 1,
    })
}

/// SOUNDEX as MySQL computes it: not cut to 4 characters.
pub fn soundex(v: &Value) -> Value {
    const MAP: &[u8; 26] = b"01230120022455012623010202";
    let code = |c: char| -> u8 {
        let u = c.to_ascii_uppercase();
        if u.is_ascii_uppercase() {
            MAP[(u as u8 - b'A') as usize]
        } else {
            b'0'
        }
    };
    let s = val::text(v);
    let mut it = s.chars().filter(|c| c.is_alphabetic());
    let Some(first) = it.next() else {
        return Value::text("");
    };
    let mut out = String::new();
    out.extend(first.to_uppercase());
    let mut last = code(first);
    for c in it {
        let k = code(c);
        if k != b'0' && k != last {
            out.push(k as char);
        }
        last = k;
    }
    while out.chars().count() < 4 {
        out.push('0');
    }
    Value::text(&out)
}

pub fn bit_length(v: &Value) -> Value {
    Value::Int(val::bytes(v).len() as i64 * 8)
}

/// MAKE_SET(bits, s1, s2, ...): the strings whose bit is set, comma
/// separated; NULL strings are skipped.
pub fn make_set(args: &[Value]) -> Value {
    let Some(bits) = args.first().and_then(val::uint_wrapping) else {
        return Value::Null;
    };
    let parts: Vec<Vec<u8>> = args[1..]
        .iter()
        .enumerate()
        .filter(|(i, v)| *i < 64 && bits & (1 << i) != 0 && !v.is_null())
        .map(|(_, v)| val::bytes(v))
        .collect();
    Value::Bytes(parts.join(&b","[..]))
}

/// EXPORT_SET(bits, on, off[, separator[, number_of_bits]]).
pub fn export_set(args: &[Value]) -> Value {
    if args.iter().any(Value::is_null) {
        return Value::Null;
    }
    let bits = val::uint_wrapping(&args[0]).unwrap_or(0);
    let on = val::bytes(&args[1]);
    let off = val::bytes(&args[2]);
    let sep = args.get(3).map_or_else(|| b",".to_vec(), val::bytes);
    let n = args.get(4).and_then(val::int).map_or(64, |n| {
        if (0..=64).contains(&n) {
            n as u32
        } else {
            64
        }
    });
    let parts: Vec<&[u8]> = (0..n)
        .map(|i| {
            if bits & (1u64 << i) != 0 {
                &on[..]
            } else {
                &off[..]
            }
        })
        .collect();
    Value::Bytes(parts.join(&sep[..]))
}

/// INET_ATON('a.b.c.d'): MySQL also reads short forms (`'127.1'` is
/// 127.0.0.1); anything else is NULL.
pub fn inet_aton(v: &Value) -> Value {
    let s = val::text(v);
    let parts: Vec<&str> = s.split('.').collect();
    if parts.is_empty()
        || parts.len() > 4
        || parts
            .iter()
            .any(|p| p.is_empty() || p.len() > 3 || !p.chars().all(|c| c.is_ascii_digit()))
    {
        return Value::Null;
    }
    let mut nums = Vec::with_capacity(4);
    for p in &parts {
        match p.parse::<u64>() {
            Ok(n) if n <= 255 => nums.push(n),
            _ => return Value::Null,
        }
    }
    let last = nums.pop().unwrap_or(0);
    let mut r: u64 = 0;
    for n in &nums {
        r = (r << 8) | n;
    }
    r <<= 8 * (4 - nums.len() as u64);
    Value::UInt(r | last)
}

pub fn inet_ntoa(v: &Value) -> Value {
    match val::int(v) {
        Some(n) if (0..=i64::from(u32::MAX)).contains(&n) => {
            let b = (n as u32).to_be_bytes();
            Value::text(&format!("{}.{}.{}.{}", b[0], b[1], b[2], b[3]))
        }
        _ => Value::Null,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Value {
        Value::text(s)
    }

    #[test]
    fn conversions() {
        assert_eq!(conv(&t("a"), 16, 2), t("1010"));
        assert_eq!(conv(&t("6E"), 18, 8), t("172"));
        assert_eq!(conv(&t("-17"), 10, -18), t("-H"));
        assert_eq!(conv(&Value::Int(10), 10, 10), t("10"));
        assert_eq!(conv(&Value::Int(-1), 10, 2).to_string().len(), 64);
        assert_eq!(soundex(&t("Hello")), t("H400"));
        assert_eq!(soundex(&t("Quadratically")), t("Q36324"));
        assert_eq!(
            substring_index(&t("www.mysql.com"), &t("."), &Value::Int(-2)),
            t("mysql.com")
        );
        assert_eq!(
            format(
                &Value::Decimal("12332.123456".parse().expect("d")),
                &Value::Int(4)
            ),
            t("12,332.1235")
        );
        assert_eq!(
            format(&Value::Int(-1234567), &Value::Int(0)),
            t("-1,234,567")
        );
    }
}
