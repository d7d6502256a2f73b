//! # Binary JSON: the stored form of a JSON column
//!
//! A JSON column stores its document in a binary form designed after
//! MySQL 8.0's (`sql-common/json_binary.h`), so that a reader can walk to
//! one member without parsing the whole document: `j->'$.k'` on a 1 KB
//! document binary-searches the root's keys and prints one value, where
//! text would have to be parsed from its first byte to its last.
//!
//! ## Layout
//!
//! A document is one type byte followed by that type's value. Every
//! integer is little-endian.
//!
//! ```text
//!   document  := type(1) value
//!
//!   type   value
//!   0x00   small object   count(2) size(2) key-entry*  value-entry* key* value*
//!   0x01   large object   count(4) size(4) key-entry*  value-entry* key* value*
//!   0x02   small array    count(2) size(2)             value-entry*      value*
//!   0x03   large array    count(4) size(4)             value-entry*      value*
//!   0x04   literal        0x00 null | 0x01 true | 0x02 false
//!   0x05   int16          2 bytes            0x09  int64   8 bytes
//!   0x06   uint16         2 bytes            0x0a  uint64  8 bytes
//!   0x07   int32          4 bytes            0x0b  double  8 bytes (IEEE)
//!   0x08   uint32         4 bytes            0x0c  string  varlen(n) n bytes UTF-8
//!   0x0f   opaque         field-type(1) varlen(n) n bytes
//!                         (field type 246, DECIMAL: the decimal's text)
//!
//!   key-entry   := key-offset(2|4) key-length(2)
//!   value-entry := type(1) offset-or-inlined-value(2|4)
//!   varlen      := 1..5 bytes, 7 bits each, low bits first, high bit set
//!                  on every byte but the last
//! ```
//!
//! A container (object or array) after its type byte:
//!
//! ```text
//!   +-------+------+--------------+----------------+------+---------+
//!   | count | size | key entries  | value entries  | keys | values  |
//!   +-------+------+--------------+----------------+------+---------+
//!   0       w      2w             2w + n(w+2)  (objects only: keys)  size
//!                                  w = 2 (small) or 4 (large)
//! ```
//!
//! `size` is the container's byte length from its `count` field; offsets
//! are relative to that same start. A literal, int16 or uint16 (and in a
//! large container int32 or uint32) is *inlined* in its value entry;
//! anything else is stored after the entries and the entry holds its
//! offset. A container is small when its size and count fit 16 bits,
//! large otherwise (past 64 KiB). Object keys are sorted by MySQL's key
//! order (length, then bytes; [`key_order`]) without duplicates, so a key
//! is found by binary search; keys and non-inlined values are laid out in
//! entry order without overlap.
//!
//! Differences from MySQL's bytes: a DECIMAL (only from SQL, e.g.
//! `CAST(1.50 AS JSON)` inside a function; a stored document parsed from
//! text has none) is an opaque value holding the decimal's text, where
//! MySQL holds its binary decimal; dates and other opaque MySQL types do
//! not occur in quire documents.
//!
//! ## Telling it from the old text form
//!
//! Before this form, a JSON column stored the document's printed text
//! ([`super::json::print`]), which always starts with one of
//! `{ [ " - 0..9 t f n` (bytes >= 0x20; printing never emits leading
//! whitespace). Every binary document starts with a type byte < 0x20.
//! So the first byte tells them apart ([`is_binary`]): reads accept both,
//! writes produce binary. A stored value that is neither is refused as
//! corrupt ([`stored_text`]).
//!
//! ## Reading untrusted bytes
//!
//! Decoding checks every count, offset and length against the bytes it
//! has (a corrupt value is an `Err`, never a panic or an out-of-bounds
//! read); strings must be UTF-8, doubles finite, keys in order. Walks
//! that visit a whole document ([`to_j`], [`print_into`], [`validate`])
//! also check that each container's keys and values follow one another
//! without overlap and that nesting stays within [`MAX_DEPTH`] + 1, so a
//! corrupt value cannot make them loop or do more work than its size.

use std::borrow::Cow;

use super::json::{double_text, key_order, parse_text, quote_into, J, MAX_DEPTH};

const SMALL_OBJECT: u8 = 0x00;
const LARGE_OBJECT: u8 = 0x01;
const SMALL_ARRAY: u8 = 0x02;
const LARGE_ARRAY: u8 = 0x03;
const LITERAL: u8 = 0x04;
const INT16: u8 = 0x05;
const UINT16: u8 = 0x06;
const INT32: u8 = 0x07;
const UINT32: u8 = 0x08;
const INT64: u8 = 0x09;
const UINT64: u8 = 0x0a;
const DOUBLE: u8 = 0x0b;
const STRING: u8 = 0x0c;
const OPAQUE: u8 = 0x0f;

const LIT_NULL: u8 = 0x00;
const LIT_TRUE: u8 = 0x01;
const LIT_FALSE: u8 = 0x02;

/// MySQL's field type number of DECIMAL, tagging an opaque decimal.
const FIELD_NEWDECIMAL: u8 = 246;

/// Longest object key (its length field has 16 bits).
pub const MAX_KEY_BYTES: usize = u16::MAX as usize;

/// Nesting a walk over stored bytes accepts (the parser allows
/// [`MAX_DEPTH`]; one more for the scalar at the bottom).
const MAX_WALK_DEPTH: usize = MAX_DEPTH + 2;

/// Whether stored JSON bytes are the binary form (a type byte < 0x20)
/// rather than the printed text older rows hold.
pub fn is_binary(stored: &[u8]) -> bool {
    stored.first().is_some_and(|&b| b < 0x20)
}

/// Whether `stored` starts as printed JSON text does.
fn starts_as_text(stored: &[u8]) -> bool {
    stored.first().is_some_and(|&b| {
        matches!(
            b,
            b'{' | b'[' | b'"' | b'-' | b'0'..=b'9' | b't' | b'f' | b'n'
        )
    })
}

// ================================================================ encoding

/// Why a document has no binary form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EncodeError {
    /// A key longer than [`MAX_KEY_BYTES`] (MySQL's 3151).
    KeyTooLong,
    /// A container beyond 4 GiB.
    TooLarge,
}

impl std::fmt::Display for EncodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EncodeError::KeyTooLong => {
                f.write_str("The JSON object contains a key name that is too long.")
            }
            EncodeError::TooLarge => {
                f.write_str("The JSON document is too large for its binary form.")
            }
        }
    }
}

/// The binary form of a document.
pub fn encode(j: &J) -> Result<Vec<u8>, EncodeError> {
    let mut out = vec![0];
    out[0] = encode_value(j, &mut out)?;
    debug_assert!(is_binary(&out));
    Ok(out)
}

/// Appends `j`'s value (without its type byte) and returns its type.
fn encode_value(j: &J, out: &mut Vec<u8>) -> Result<u8, EncodeError> {
    Ok(match j {
        J::Null => push_lit(out, LIT_NULL),
        J::Bool(true) => push_lit(out, LIT_TRUE),
        J::Bool(false) => push_lit(out, LIT_FALSE),
        J::Int(i) => encode_int(*i, out),
        J::UInt(u) => encode_uint(*u, out),
        J::Double(d) => {
            out.extend_from_slice(&d.to_le_bytes());
            DOUBLE
        }
        J::Dec(s) => {
            out.push(FIELD_NEWDECIMAL);
            put_varlen(s.len(), out)?;
            out.extend_from_slice(s.as_bytes());
            OPAQUE
        }
        J::Str(s) => {
            put_varlen(s.len(), out)?;
            out.extend_from_slice(s.as_bytes());
            STRING
        }
        J::Arr(a) => {
            let items: Vec<(Option<&str>, &J)> = a.iter().map(|v| (None, v)).collect();
            encode_container(&items, false, out)?
        }
        J::Obj(o) => encode_container(&sorted_members(o), true, out)?,
    })
}

fn push_lit(out: &mut Vec<u8>, lit: u8) -> u8 {
    out.push(lit);
    LITERAL
}

fn encode_int(i: i64, out: &mut Vec<u8>) -> u8 {
    if let Ok(x) = i16::try_from(i) {
        out.extend_from_slice(&x.to_le_bytes());
        INT16
    } else if let Ok(x) = i32::try_from(i) {
        out.extend_from_slice(&x.to_le_bytes());
        INT32
    } else {
        out.extend_from_slice(&i.to_le_bytes());
        INT64
    }
}

fn encode_uint(u: u64, out: &mut Vec<u8>) -> u8 {
    if let Ok(x) = u16::try_from(u) {
        out.extend_from_slice(&x.to_le_bytes());
        UINT16
    } else if let Ok(x) = u32::try_from(u) {
        out.extend_from_slice(&x.to_le_bytes());
        UINT32
    } else {
        out.extend_from_slice(&u.to_le_bytes());
        UINT64
    }
}

/// An object's members in key order without duplicates (the last value
/// of a key wins, as when parsing); already so when built by `J::put`.
fn sorted_members(o: &[(String, J)]) -> Vec<(Option<&str>, &J)> {
    let ordered = o.windows(2).all(|w| key_order(&w[0].0, &w[1].0).is_lt());
    let mut items: Vec<(Option<&str>, &J)> = o.iter().map(|(k, v)| (Some(k.as_str()), v)).collect();
    if !ordered {
        // Stable: among equal keys the last one stays last.
        items.sort_by(|a, b| key_order(a.0.unwrap_or(""), b.0.unwrap_or("")));
        let mut dedup: Vec<(Option<&str>, &J)> = Vec::with_capacity(items.len());
        for it in items {
            match dedup.last_mut() {
                Some(last) if last.0 == it.0 => *last = it,
                _ => dedup.push(it),
            }
        }
        items = dedup;
    }
    items
}

/// A value inlined in an entry: its type and the entry's bits.
fn inlined(j: &J, large: bool) -> Option<(u8, u32)> {
    match j {
        J::Null => Some((LITERAL, u32::from(LIT_NULL))),
        J::Bool(true) => Some((LITERAL, u32::from(LIT_TRUE))),
        J::Bool(false) => Some((LITERAL, u32::from(LIT_FALSE))),
        J::Int(i) => match (i16::try_from(*i), i32::try_from(*i)) {
            (Ok(x), _) => Some((INT16, u32::from(x as u16))),
            (_, Ok(x)) if large => Some((INT32, x as u32)),
            _ => None,
        },
        J::UInt(u) => match (u16::try_from(*u), u32::try_from(*u)) {
            (Ok(x), _) => Some((UINT16, u32::from(x))),
            (_, Ok(x)) if large => Some((UINT32, x)),
            _ => None,
        },
        _ => None,
    }
}

/// Appends an object (keys given) or array (no keys) and returns its
/// type. Nested containers and strings are encoded once into their own
/// buffers (they are position-independent); small is tried first.
fn encode_container(
    items: &[(Option<&str>, &J)],
    is_obj: bool,
    out: &mut Vec<u8>,
) -> Result<u8, EncodeError> {
    for (k, _) in items {
        if k.is_some_and(|k| k.len() > MAX_KEY_BYTES) {
            return Err(EncodeError::KeyTooLong);
        }
    }
    // Values never inlined whatever the width: encoded once here.
    let mut bodies: Vec<Option<(u8, Vec<u8>)>> = Vec::with_capacity(items.len());
    for (_, v) in items {
        bodies.push(if inlined(v, true).is_some() {
            None
        } else {
            let mut b = Vec::new();
            let t = encode_value(v, &mut b)?;
            Some((t, b))
        });
    }
    if let Some(small) = layout(items, &bodies, is_obj, false) {
        out.extend_from_slice(&small);
        return Ok(if is_obj { SMALL_OBJECT } else { SMALL_ARRAY });
    }
    let large = layout(items, &bodies, is_obj, true).ok_or(EncodeError::TooLarge)?;
    out.extend_from_slice(&large);
    Ok(if is_obj { LARGE_OBJECT } else { LARGE_ARRAY })
}

/// Lays out a container at width `large`; None when its size or count
/// does not fit that width.
fn layout(
    items: &[(Option<&str>, &J)],
    bodies: &[Option<(u8, Vec<u8>)>],
    is_obj: bool,
    large: bool,
) -> Option<Vec<u8>> {
    let w = if large { 4 } else { 2 };
    let max = if large {
        u64::from(u32::MAX)
    } else {
        u64::from(u16::MAX)
    };
    let n = items.len();
    let entries = if is_obj { n * (w + 2) } else { 0 } + n * (1 + w);
    let keys_bytes: usize = items.iter().map(|(k, _)| k.map_or(0, str::len)).sum();
    // Values inlined only in a large container are 4 bytes out of line.
    let small_only = |v: &J| inlined(v, false).is_none() && inlined(v, true).is_some();
    let values_bytes: usize = items
        .iter()
        .zip(bodies)
        .map(|((_, v), b)| match b {
            Some((_, body)) => body.len(),
            None if !large && small_only(v) => 4,
            None => 0,
        })
        .sum();
    let size = 2 * w + entries + keys_bytes + values_bytes;
    if n as u64 > max || size as u64 > max {
        return None;
    }
    let mut out = Vec::with_capacity(size);
    put_width(&mut out, n, large);
    put_width(&mut out, size, large);
    let mut at = 2 * w + entries;
    if is_obj {
        for (k, _) in items {
            let len = k.map_or(0, str::len);
            put_width(&mut out, at, large);
            out.extend_from_slice(&(len as u16).to_le_bytes());
            at += len;
        }
    }
    let mut tail: Vec<u8> = Vec::with_capacity(values_bytes);
    for ((_, v), b) in items.iter().zip(bodies) {
        match (b, inlined(v, large)) {
            (Some((t, body)), _) => {
                out.push(*t);
                put_width(&mut out, at + tail.len(), large);
                tail.extend_from_slice(body);
            }
            (None, Some((t, bits))) => {
                out.push(t);
                out.extend_from_slice(&bits.to_le_bytes()[..w]);
            }
            (None, None) => {
                // An int32/uint32 out of line in a small container.
                out.push(0);
                let entry_type = out.len() - 1;
                put_width(&mut out, at + tail.len(), large);
                out[entry_type] = encode_value(v, &mut tail).ok()?;
            }
        }
    }
    for (k, _) in items {
        out.extend_from_slice(k.unwrap_or("").as_bytes());
    }
    out.extend_from_slice(&tail);
    debug_assert_eq!(out.len(), size);
    Some(out)
}

/// An offset, count or size at the container's width (it fits: checked
/// against the width's maximum by the caller).
fn put_width(out: &mut Vec<u8>, x: usize, large: bool) {
    if large {
        out.extend_from_slice(&(x as u32).to_le_bytes());
    } else {
        out.extend_from_slice(&(x as u16).to_le_bytes());
    }
}

fn put_varlen(len: usize, out: &mut Vec<u8>) -> Result<(), EncodeError> {
    let mut x = u32::try_from(len).map_err(|_| EncodeError::TooLarge)?;
    loop {
        let b = (x & 0x7f) as u8;
        x >>= 7;
        if x == 0 {
            out.push(b);
            return Ok(());
        }
        out.push(b | 0x80);
    }
}

// ================================================================ decoding

/// A decoding failure: what was wrong with the stored bytes.
pub type DResult<T> = Result<T, String>;

fn corrupt(what: &str) -> String {
    format!("corrupt binary JSON: {what}")
}

/// One value of a binary document, borrowed from its bytes.
#[derive(Debug, Clone, Copy)]
pub enum Node<'a> {
    Null,
    Bool(bool),
    Int(i64),
    UInt(u64),
    Double(f64),
    Dec(&'a str),
    Str(&'a str),
    Arr(Container<'a>),
    Obj(Container<'a>),
}

/// An object or array: exactly its `size` bytes from its count field.
#[derive(Debug, Clone, Copy)]
pub struct Container<'a> {
    data: &'a [u8],
    large: bool,
    is_obj: bool,
    count: usize,
}

/// The root of a binary document.
pub fn root(doc: &[u8]) -> DResult<Node<'_>> {
    let (&t, rest) = doc.split_first().ok_or_else(|| corrupt("empty value"))?;
    let (node, used) = node_at(t, rest)?;
    if used != rest.len() {
        return Err(corrupt("bytes after the document"));
    }
    Ok(node)
}

fn take(data: &[u8], at: usize, len: usize) -> DResult<&[u8]> {
    at.checked_add(len)
        .and_then(|end| data.get(at..end))
        .ok_or_else(|| corrupt("value past its container"))
}

fn read_le(data: &[u8], at: usize, width: usize) -> DResult<u64> {
    let b = take(data, at, width)?;
    Ok(b.iter()
        .rev()
        .fold(0u64, |acc, &x| (acc << 8) | u64::from(x)))
}

fn read_varlen(data: &[u8]) -> DResult<(usize, usize)> {
    let mut len: u64 = 0;
    for i in 0..5 {
        let b = *data.get(i).ok_or_else(|| corrupt("truncated length"))?;
        len |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            let len = usize::try_from(len).map_err(|_| corrupt("length too large"))?;
            return Ok((len, i + 1));
        }
    }
    Err(corrupt("length of more than 5 bytes"))
}

fn utf8(b: &[u8]) -> DResult<&str> {
    std::str::from_utf8(b).map_err(|_| corrupt("string not UTF-8"))
}

/// The value of type `t` at the start of `data`, and its byte length.
fn node_at(t: u8, data: &[u8]) -> DResult<(Node<'_>, usize)> {
    let int = |w: usize| read_le(data, 0, w);
    Ok(match t {
        SMALL_OBJECT | LARGE_OBJECT | SMALL_ARRAY | LARGE_ARRAY => {
            let c = Container::at(t, data)?;
            let node = if c.is_obj { Node::Obj(c) } else { Node::Arr(c) };
            (node, c.data.len())
        }
        LITERAL => (
            literal(*data.first().ok_or_else(|| corrupt("truncated literal"))?)?,
            1,
        ),
        INT16 => (Node::Int(i64::from(int(2)? as u16 as i16)), 2),
        UINT16 => (Node::UInt(int(2)?), 2),
        INT32 => (Node::Int(i64::from(int(4)? as u32 as i32)), 4),
        UINT32 => (Node::UInt(int(4)?), 4),
        INT64 => (Node::Int(int(8)? as i64), 8),
        UINT64 => (Node::UInt(int(8)?), 8),
        DOUBLE => {
            let d = f64::from_bits(int(8)?);
            if !d.is_finite() {
                return Err(corrupt("non-finite double"));
            }
            (Node::Double(d), 8)
        }
        STRING => {
            let (len, hdr) = read_varlen(data)?;
            (Node::Str(utf8(take(data, hdr, len)?)?), hdr + len)
        }
        OPAQUE => opaque(data)?,
        _ => return Err(corrupt(&format!("unknown type 0x{t:02x}"))),
    })
}

fn literal(b: u8) -> DResult<Node<'static>> {
    match b {
        LIT_NULL => Ok(Node::Null),
        LIT_TRUE => Ok(Node::Bool(true)),
        LIT_FALSE => Ok(Node::Bool(false)),
        _ => Err(corrupt("unknown literal")),
    }
}

fn opaque(data: &[u8]) -> DResult<(Node<'_>, usize)> {
    let field = *data
        .first()
        .ok_or_else(|| corrupt("truncated opaque value"))?;
    if field != FIELD_NEWDECIMAL {
        return Err(corrupt(&format!("opaque value of field type {field}")));
    }
    let (len, hdr) = read_varlen(&data[1..])?;
    let text = utf8(take(data, 1 + hdr, len)?)?;
    let numeric = !text.is_empty()
        && text
            .bytes()
            .all(|b| b.is_ascii_digit() || b == b'-' || b == b'.');
    if !numeric {
        return Err(corrupt("decimal text"));
    }
    Ok((Node::Dec(text), 1 + hdr + len))
}

impl<'a> Container<'a> {
    /// The container of type `t` whose count field starts `data`.
    fn at(t: u8, data: &'a [u8]) -> DResult<Self> {
        let large = t == LARGE_OBJECT || t == LARGE_ARRAY;
        let is_obj = t == SMALL_OBJECT || t == LARGE_OBJECT;
        let w = if large { 4 } else { 2 };
        let count = usize::try_from(read_le(data, 0, w)?).map_err(|_| corrupt("count"))?;
        let size = usize::try_from(read_le(data, w, w)?).map_err(|_| corrupt("size"))?;
        let c = Container {
            data: take(data, 0, size)?,
            large,
            is_obj,
            count,
        };
        // The entries must fit (this also bounds `count` by `size`).
        let header = count
            .checked_mul(c.entry_bytes())
            .and_then(|e| e.checked_add(2 * w))
            .ok_or_else(|| corrupt("count"))?;
        if header > size {
            return Err(corrupt("entries past the container's size"));
        }
        Ok(c)
    }

    fn width(&self) -> usize {
        if self.large {
            4
        } else {
            2
        }
    }

    /// Bytes of entries one member takes (key entry + value entry).
    fn entry_bytes(&self) -> usize {
        let w = self.width();
        if self.is_obj {
            w + 2 + 1 + w
        } else {
            1 + w
        }
    }

    /// Number of members or elements.
    pub fn len(&self) -> usize {
        self.count
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Where the entries end (keys or values begin).
    fn header_end(&self) -> usize {
        2 * self.width() + self.count * self.entry_bytes()
    }

    /// Key `i`'s offset and bytes (objects only).
    fn key_at(&self, i: usize) -> DResult<(usize, &'a str)> {
        let w = self.width();
        let at = 2 * w + i * (w + 2);
        let off = read_le(self.data, at, w)? as usize;
        let len = read_le(self.data, at + w, 2)? as usize;
        if off < self.header_end() {
            return Err(corrupt("key inside the entries"));
        }
        Ok((off, utf8(take(self.data, off, len)?)?))
    }

    /// Key `i` of an object.
    pub fn key(&self, i: usize) -> DResult<&'a str> {
        if !self.is_obj || i >= self.count {
            return Err(corrupt("key index"));
        }
        self.key_at(i).map(|(_, k)| k)
    }

    /// Value `i` and, when stored out of line, its offset and length.
    fn value_at(&self, i: usize) -> DResult<(Node<'a>, Option<(usize, usize)>)> {
        if i >= self.count {
            return Err(corrupt("value index"));
        }
        let w = self.width();
        let keys = if self.is_obj { self.count * (w + 2) } else { 0 };
        let at = 2 * w + keys + i * (1 + w);
        let t = *self.data.get(at).ok_or_else(|| corrupt("value entry"))?;
        let slot = read_le(self.data, at + 1, w)?;
        match (t, self.large) {
            (LITERAL, _) => Ok((literal(slot as u8)?, None)),
            (INT16, _) => Ok((Node::Int(i64::from(slot as u16 as i16)), None)),
            (UINT16, _) => Ok((Node::UInt(slot & 0xffff), None)),
            (INT32, true) => Ok((Node::Int(i64::from(slot as u32 as i32)), None)),
            (UINT32, true) => Ok((Node::UInt(slot), None)),
            _ => {
                let off = slot as usize;
                if off < self.header_end() || off >= self.data.len() {
                    return Err(corrupt("value offset"));
                }
                let (node, len) = node_at(t, &self.data[off..])?;
                Ok((node, Some((off, len))))
            }
        }
    }

    /// Element or member value `i`.
    pub fn value(&self, i: usize) -> DResult<Node<'a>> {
        self.value_at(i).map(|(n, _)| n)
    }

    /// The value of member `key` of an object (binary search: keys are
    /// in MySQL's order).
    pub fn get(&self, key: &str) -> DResult<Option<Node<'a>>> {
        if !self.is_obj {
            return Ok(None);
        }
        let (mut lo, mut hi) = (0, self.count);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            match key_order(self.key(mid)?, key) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return self.value(mid).map(Some),
            }
        }
        Ok(None)
    }

    /// Checks what a whole-document walk relies on: keys strictly in
    /// order, keys and out-of-line values one after another without
    /// overlap, inside the container.
    fn check_layout(&self) -> DResult<()> {
        let mut next = self.header_end();
        let mut prev: Option<&str> = None;
        if self.is_obj {
            for i in 0..self.count {
                let (off, k) = self.key_at(i)?;
                if off < next || prev.is_some_and(|p| !key_order(p, k).is_lt()) {
                    return Err(corrupt("keys out of order"));
                }
                next = off + k.len();
                prev = Some(k);
            }
        }
        for i in 0..self.count {
            if let (_, Some((off, len))) = self.value_at(i)? {
                if off < next {
                    return Err(corrupt("overlapping values"));
                }
                next = off + len;
            }
        }
        Ok(())
    }
}

// ================================================================ walks

/// The document model value of a binary document.
pub fn decode(doc: &[u8]) -> DResult<J> {
    to_j(root(doc)?, 0)
}

/// A node as a document model value (checking it whole).
pub fn to_j(node: Node<'_>, depth: usize) -> DResult<J> {
    if depth > MAX_WALK_DEPTH {
        return Err(corrupt("nested too deep"));
    }
    Ok(match node {
        Node::Null => J::Null,
        Node::Bool(b) => J::Bool(b),
        Node::Int(i) => J::Int(i),
        Node::UInt(u) => J::UInt(u),
        Node::Double(d) => J::Double(d),
        Node::Dec(s) => J::Dec(s.to_string()),
        Node::Str(s) => J::Str(s.to_string()),
        Node::Arr(c) => {
            c.check_layout()?;
            let mut a = Vec::with_capacity(c.len());
            for i in 0..c.len() {
                a.push(to_j(c.value(i)?, depth + 1)?);
            }
            J::Arr(a)
        }
        Node::Obj(c) => {
            c.check_layout()?;
            let mut o = Vec::with_capacity(c.len());
            for i in 0..c.len() {
                o.push((c.key(i)?.to_string(), to_j(c.value(i)?, depth + 1)?));
            }
            J::Obj(o)
        }
    })
}

/// The printed text of a binary document, as [`super::json::print`]
/// prints its value (without building the value).
pub fn print(doc: &[u8]) -> DResult<String> {
    let mut out = String::with_capacity(doc.len() + doc.len() / 2);
    print_into(root(doc)?, 0, &mut out)?;
    Ok(out)
}

/// Appends a node's printed text (checking it whole).
pub fn print_into(node: Node<'_>, depth: usize, out: &mut String) -> DResult<()> {
    if depth > MAX_WALK_DEPTH {
        return Err(corrupt("nested too deep"));
    }
    match node {
        Node::Null => out.push_str("null"),
        Node::Bool(b) => out.push_str(if b { "true" } else { "false" }),
        Node::Int(i) => out.push_str(&i.to_string()),
        Node::UInt(u) => out.push_str(&u.to_string()),
        Node::Double(d) => out.push_str(&double_text(d)),
        Node::Dec(s) => out.push_str(s),
        Node::Str(s) => quote_into(s, out),
        Node::Arr(c) => {
            c.check_layout()?;
            out.push('[');
            for i in 0..c.len() {
                if i > 0 {
                    out.push_str(", ");
                }
                print_into(c.value(i)?, depth + 1, out)?;
            }
            out.push(']');
        }
        Node::Obj(c) => {
            c.check_layout()?;
            out.push('{');
            for i in 0..c.len() {
                if i > 0 {
                    out.push_str(", ");
                }
                quote_into(c.key(i)?, out);
                out.push_str(": ");
                print_into(c.value(i)?, depth + 1, out)?;
            }
            out.push('}');
        }
    }
    Ok(())
}

/// Checks a whole binary document without building anything.
pub fn validate(doc: &[u8]) -> DResult<()> {
    validate_node(root(doc)?, 0)
}

fn validate_node(node: Node<'_>, depth: usize) -> DResult<()> {
    if depth > MAX_WALK_DEPTH {
        return Err(corrupt("nested too deep"));
    }
    if let Node::Arr(c) | Node::Obj(c) = node {
        c.check_layout()?;
        for i in 0..c.len() {
            validate_node(c.value(i)?, depth + 1)?;
        }
    }
    Ok(())
}

// ================================================================ stored values

/// The bytes a JSON column stores for a value: binary bytes kept as they
/// are (after [`validate`]); text (what `coerce` gives: printed, so it
/// starts with a byte >= 0x20) parsed and encoded.
pub fn stored_form(v: &[u8]) -> DResult<Cow<'_, [u8]>> {
    if is_binary(v) {
        validate(v)?;
        return Ok(Cow::Borrowed(v));
    }
    let doc = parse_text(v).map_err(|(why, pos)| format!("invalid JSON text: {why} at {pos}"))?;
    encode(&doc).map(Cow::Owned).map_err(|e| e.to_string())
}

/// The printed text of a stored JSON value, binary or (older rows) text.
/// Old text is given back as it is; it must start as printed text does.
pub fn stored_text(stored: &[u8]) -> DResult<Vec<u8>> {
    if is_binary(stored) {
        return print(stored).map(String::into_bytes);
    }
    if !starts_as_text(stored) {
        return Err(corrupt("neither binary nor printed text"));
    }
    Ok(stored.to_vec())
}

/// A stored JSON value as a document model value, binary or text.
pub fn stored_doc(stored: &[u8]) -> DResult<J> {
    if is_binary(stored) {
        return decode(stored);
    }
    parse_text(stored).map_err(|(why, pos)| format!("invalid JSON text: {why} at {pos}"))
}

#[cfg(test)]
#[path = "jsonb_tests.rs"]
mod tests;
