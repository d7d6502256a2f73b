//! # JSON functions
//!
//! Owns JSON_EXTRACT (and `->`, `->>`), JSON_UNQUOTE, JSON_QUOTE,
//! JSON_OBJECT, JSON_ARRAY, JSON_SET/JSON_INSERT/JSON_REPLACE,
//! JSON_REMOVE, JSON_ARRAY_APPEND, JSON_CONTAINS, JSON_LENGTH, JSON_KEYS,
//! JSON_VALID, JSON_TYPE, JSON_DEPTH and CAST(... AS JSON).
//!
//! A JSON value travels as its printed text (a JSON column holds it so,
//! a function returns it as LONGTEXT); a function that takes JSON parses
//! the text again with the document model of the engine's `types::json`
//! (shared with the JSON column type). Which arguments of JSON_OBJECT/
//! JSON_ARRAY/JSON_SET... are themselves JSON (a JSON column, the result
//! of a JSON function or CAST AS JSON, to be nested rather than quoted as
//! a string) is decided when the call is compiled and passed as a bit
//! mask.
//!
//! Rules followed (MySQL 8.0):
//! * output as MySQL prints a JSON value: `{"a": 1, "b": [1, 2]}`, one
//!   space after `:` and `,`; object keys sorted by length, then by bytes,
//!   a duplicate key keeping its last value; non-ASCII characters printed
//!   as they are;
//! * numbers: integers stay integers (signed or unsigned 64-bit), other
//!   numbers of a JSON text are doubles, DECIMAL arguments stay decimals;
//! * invalid JSON text is error 3141 `Invalid JSON text in argument N to
//!   function F: "why" at position P.`; an invalid path is 3143; a
//!   wildcard path where one is not allowed is 3149; `$` in JSON_REMOVE
//!   is 3153; a NULL key in JSON_OBJECT is 3158; nesting beyond 100 is
//!   3157;
//! * paths: `$`, `.key`, `."quoted key"`, `.*`, `[n]`, `[last]`,
//!   `[last-n]`, `[*]`, `**`; a scalar is its own `[0]`.

use std::cmp::Ordering;

use quire_engine::types::json::{key_order, parse_text, print, print_into, quote_into, Parser, J};
use quire_engine::types::jsonb::{self, Node};
use quire_engine::{EngineError, Value};

use super::val;
use crate::SqlResult;

fn invalid(arg: usize, func: &str, why: &str, pos: usize) -> EngineError {
    if why == "depth" {
        return EngineError::new(
            3157,
            "22032",
            "The JSON document exceeds the maximum depth of 100.",
        );
    }
    EngineError::new(
        3141,
        "22032",
        format!(
            "Invalid JSON text in argument {arg} to function {func}: \"{why}\" at position {pos}."
        ),
    )
}

/// Reads a JSON document argument (1-based `arg` for the message).
fn doc(v: &Value, arg: usize, func: &str) -> SqlResult<Option<J>> {
    match v {
        Value::Null => Ok(None),
        Value::Bytes(b) => parse_text(b)
            .map(Some)
            .map_err(|(w, p)| invalid(arg, func, w, p)),
        Value::Int(_) | Value::UInt(_) | Value::Decimal(_) | Value::Double(_) | Value::Float(_) => {
            // A number is not JSON text (MySQL's error 3146).
            Err(EngineError::new(
                3146,
                "22032",
                format!("Invalid data type for JSON data in argument {arg} to function {func}; a JSON string or JSON type is required."),
            ))
        }
        other => parse_text(other.to_string().as_bytes())
            .map(Some)
            .map_err(|(w, p)| invalid(arg, func, w, p)),
    }
}

/// An SQL value as a JSON value: `is_json` when the argument is itself
/// JSON (a JSON function's result), otherwise strings become JSON
/// strings.
pub fn from_sql(v: &Value, is_json: bool, arg: usize, func: &str) -> SqlResult<J> {
    Ok(match v {
        Value::Null => J::Null,
        Value::Int(i) => J::Int(*i),
        Value::UInt(u) => J::UInt(*u),
        Value::Decimal(d) => J::Dec(d.to_string()),
        Value::Double(d) => J::Double(*d),
        Value::Float(f) => J::Double(f64::from(*f)),
        Value::Bytes(b) if is_json => parse_text(b).map_err(|(w, p)| invalid(arg, func, w, p))?,
        Value::Bytes(b) => J::Str(String::from_utf8_lossy(b).into_owned()),
        Value::Date(d) => J::Str(d.to_string()),
        Value::DateTime(t) => J::Str(t.format_fsp(if t.micro != 0 { 6 } else { 0 })),
        Value::Time(t) => J::Str(t.to_string()),
    })
}

fn out(j: &J) -> Value {
    Value::text(&print(j))
}

// ------------------------------------------------- stored binary documents

/// A document argument: parsed text, or a JSON column's stored binary
/// document read in place (`types::jsonb`).
enum Doc<'a> {
    Tree(J),
    Bin(Node<'a>),
}

fn corrupt_doc(why: String) -> EngineError {
    EngineError::internal(format!("stored JSON value: {why}"))
}

/// Reads document argument `arg`; `stored`: the argument holds a JSON
/// value (`Func::with_stored_arg`), so a first byte < 0x20 marks a
/// stored binary document, walked in place instead of parsed.
fn doc_arg<'a>(v: &'a Value, stored: bool, arg: usize, func: &str) -> SqlResult<Option<Doc<'a>>> {
    if let (true, Value::Bytes(b)) = (stored, v) {
        if jsonb::is_binary(b) {
            return jsonb::root(b)
                .map(|n| Some(Doc::Bin(n)))
                .map_err(corrupt_doc);
        }
    }
    Ok(doc(v, arg, func)?.map(Doc::Tree))
}

impl Doc<'_> {
    fn into_tree(self) -> SqlResult<J> {
        match self {
            Doc::Tree(j) => Ok(j),
            Doc::Bin(n) => jsonb::to_j(n, 0).map_err(corrupt_doc),
        }
    }
}

/// The value at a path without wildcards in a binary document, walking
/// only the members on the way (keys by binary search): what
/// [`collect`] finds for such a path.
fn bin_locate<'a>(n: Node<'a>, p: &[Leg]) -> SqlResult<Option<Node<'a>>> {
    let Some((leg, rest)) = p.split_first() else {
        return Ok(Some(n));
    };
    let next = match (leg, n) {
        (Leg::Key(k), Node::Obj(c)) => c.get(k).map_err(corrupt_doc)?,
        (Leg::Index(ix), Node::Arr(c)) => match ix.resolve(c.len()).filter(|&i| i < c.len()) {
            Some(i) => Some(c.value(i).map_err(corrupt_doc)?),
            None => None,
        },
        (Leg::Index(ix), other) => (ix.resolve(1) == Some(0)).then_some(other),
        _ => None,
    };
    match next {
        Some(m) => bin_locate(m, rest),
        None => Ok(None),
    }
}

/// A binary node printed as MySQL prints a JSON value.
fn bin_out(n: Node<'_>) -> SqlResult<Value> {
    let mut s = String::new();
    jsonb::print_into(n, 0, &mut s).map_err(corrupt_doc)?;
    Ok(Value::Bytes(s.into_bytes()))
}

/// JSON_TYPE's answer for a binary node.
fn bin_type_name(n: Node<'_>) -> &'static str {
    match n {
        Node::Null => "NULL",
        Node::Bool(_) => "BOOLEAN",
        Node::Int(_) => "INTEGER",
        Node::UInt(_) => "UNSIGNED INTEGER",
        Node::Double(_) => "DOUBLE",
        Node::Dec(_) => "DECIMAL",
        Node::Str(_) => "STRING",
        Node::Arr(_) => "ARRAY",
        Node::Obj(_) => "OBJECT",
    }
}

// ---------------------------------------------------------------- paths

#[derive(Debug, Clone, PartialEq)]
enum Leg {
    Key(String),
    AnyKey,
    Index(Idx),
    AnyIndex,
    Range(Idx, Idx),
    Deep,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Idx {
    From(u64),
    Last(u64),
}

impl Idx {
    fn resolve(self, len: usize) -> Option<usize> {
        match self {
            Idx::From(n) => usize::try_from(n).ok(),
            Idx::Last(k) => (len as u64).checked_sub(1 + k).map(|x| x as usize),
        }
    }
}

fn bad_path(pos: usize) -> EngineError {
    EngineError::new(
        3143,
        "42000",
        format!("Invalid JSON path expression. The error is around character position {pos}."),
    )
}

fn parse_path(v: &Value) -> SqlResult<Vec<Leg>> {
    let s = val::text(v);
    let b = s.as_bytes();
    let mut i = 0;
    let skip_ws = |i: &mut usize| {
        while *i < b.len() && b[*i].is_ascii_whitespace() {
            *i += 1;
        }
    };
    skip_ws(&mut i);
    if b.get(i) != Some(&b'$') {
        return Err(bad_path(i + 1));
    }
    i += 1;
    let mut legs = Vec::new();
    loop {
        skip_ws(&mut i);
        let Some(&c) = b.get(i) else { break };
        match c {
            b'.' => {
                i += 1;
                skip_ws(&mut i);
                match b.get(i) {
                    Some(b'*') => {
                        i += 1;
                        legs.push(Leg::AnyKey);
                    }
                    Some(b'"') => {
                        let mut p = Parser { s: b, i };
                        let k = p.string().map_err(|_| bad_path(i + 1))?;
                        i = p.i;
                        legs.push(Leg::Key(k));
                    }
                    Some(_) => {
                        let st = i;
                        while i < b.len()
                            && (b[i].is_ascii_alphanumeric()
                                || b[i] == b'_'
                                || b[i] == b'$'
                                || b[i] >= 0x80)
                        {
                            i += 1;
                        }
                        if i == st || b[st].is_ascii_digit() {
                            return Err(bad_path(st + 1));
                        }
                        legs.push(Leg::Key(s[st..i].to_string()));
                    }
                    None => return Err(bad_path(i)),
                }
            }
            b'[' => {
                i += 1;
                skip_ws(&mut i);
                if b.get(i) == Some(&b'*') {
                    i += 1;
                    skip_ws(&mut i);
                    if b.get(i) != Some(&b']') {
                        return Err(bad_path(i + 1));
                    }
                    i += 1;
                    legs.push(Leg::AnyIndex);
                    continue;
                }
                let read_idx = |i: &mut usize| -> SqlResult<Idx> {
                    skip_ws(i);
                    if b[*i..].starts_with(b"last") {
                        *i += 4;
                        skip_ws(i);
                        if b.get(*i) == Some(&b'-') {
                            *i += 1;
                            skip_ws(i);
                            let st = *i;
                            while *i < b.len() && b[*i].is_ascii_digit() {
                                *i += 1;
                            }
                            let n: u64 = s[st..*i].parse().map_err(|_| bad_path(st + 1))?;
                            return Ok(Idx::Last(n));
                        }
                        return Ok(Idx::Last(0));
                    }
                    let st = *i;
                    while *i < b.len() && b[*i].is_ascii_digit() {
                        *i += 1;
                    }
                    let n: u64 = s[st..*i].parse().map_err(|_| bad_path(st + 1))?;
                    Ok(Idx::From(n))
                };
                let a = read_idx(&mut i)?;
                skip_ws(&mut i);
                let leg = if b[i..].starts_with(b"to") {
                    i += 2;
                    let z = read_idx(&mut i)?;
                    Leg::Range(a, z)
                } else {
                    Leg::Index(a)
                };
                skip_ws(&mut i);
                if b.get(i) != Some(&b']') {
                    return Err(bad_path(i + 1));
                }
                i += 1;
                legs.push(leg);
            }
            b'*' if b.get(i + 1) == Some(&b'*') => {
                i += 2;
                if i >= b.len() {
                    return Err(bad_path(i));
                }
                legs.push(Leg::Deep);
            }
            _ => return Err(bad_path(i + 1)),
        }
    }
    Ok(legs)
}

fn has_wildcard(p: &[Leg]) -> bool {
    p.iter()
        .any(|l| matches!(l, Leg::AnyKey | Leg::AnyIndex | Leg::Deep | Leg::Range(..)))
}

fn collect<'a>(j: &'a J, p: &[Leg], out: &mut Vec<&'a J>) {
    let Some((leg, rest)) = p.split_first() else {
        out.push(j);
        return;
    };
    match leg {
        Leg::Key(k) => {
            if let J::Obj(o) = j {
                if let Some((_, v)) = o.iter().find(|(x, _)| x == k) {
                    collect(v, rest, out);
                }
            }
        }
        Leg::AnyKey => {
            if let J::Obj(o) = j {
                for (_, v) in o {
                    collect(v, rest, out);
                }
            }
        }
        Leg::Index(ix) => match j {
            J::Arr(a) => {
                if let Some(v) = ix.resolve(a.len()).and_then(|i| a.get(i)) {
                    collect(v, rest, out);
                }
            }
            other => {
                if ix.resolve(1) == Some(0) {
                    collect(other, rest, out);
                }
            }
        },
        Leg::AnyIndex => {
            if let J::Arr(a) = j {
                for v in a {
                    collect(v, rest, out);
                }
            }
        }
        Leg::Range(x, y) => {
            if let J::Arr(a) = j {
                if let (Some(s), Some(e)) = (x.resolve(a.len()), y.resolve(a.len())) {
                    for v in a.iter().take(e.saturating_add(1)).skip(s) {
                        collect(v, rest, out);
                    }
                }
            }
        }
        Leg::Deep => {
            collect(j, rest, out);
            match j {
                J::Arr(a) => {
                    for v in a {
                        collect(v, p, out);
                    }
                }
                J::Obj(o) => {
                    for (_, v) in o {
                        collect(v, p, out);
                    }
                }
                _ => {}
            }
        }
    }
}

// ------------------------------------------------------------ functions

/// JSON_EXTRACT, `->`; `stored`: see [`doc_arg`].
pub fn extract(args: &[Value], stored: bool) -> SqlResult<Value> {
    let Some(d) = doc_arg(&args[0], stored, 1, "json_extract")? else {
        return Ok(Value::Null);
    };
    let mut paths = Vec::new();
    for p in &args[1..] {
        if p.is_null() {
            return Ok(Value::Null);
        }
        paths.push(parse_path(p)?);
    }
    if let (Doc::Bin(n), [p]) = (&d, paths.as_slice()) {
        if !has_wildcard(p) {
            return match bin_locate(*n, p)? {
                Some(m) => bin_out(m),
                None => Ok(Value::Null),
            };
        }
    }
    let d = d.into_tree()?;
    let mut found = Vec::new();
    for p in &paths {
        collect(&d, p, &mut found);
    }
    if paths.len() == 1 && !has_wildcard(&paths[0]) {
        return Ok(found.first().map_or(Value::Null, |j| out(j)));
    }
    if found.is_empty() {
        return Ok(Value::Null);
    }
    Ok(out(&J::Arr(found.into_iter().cloned().collect())))
}

pub fn unquote(v: &Value) -> SqlResult<Value> {
    if v.is_null() {
        return Ok(Value::Null);
    }
    let b = val::bytes(v);
    if b.len() >= 2 && b[0] == b'"' && b[b.len() - 1] == b'"' {
        let mut p = Parser { s: &b, i: 0 };
        return match p.string() {
            Ok(s) if p.i == b.len() => Ok(Value::text(&s)),
            Ok(_) => Err(invalid(
                1,
                "json_unquote",
                "The document root must not be followed by other values.",
                p.i,
            )),
            Err((w, pos)) => Err(invalid(1, "json_unquote", w, pos)),
        };
    }
    Ok(Value::Bytes(b))
}

pub fn quote(v: &Value) -> Value {
    if v.is_null() {
        return Value::Null;
    }
    let mut s = String::new();
    quote_into(&val::text(v), &mut s);
    Value::text(&s)
}

pub fn object(args: &[Value], json_mask: u64) -> SqlResult<Value> {
    let mut m = Vec::new();
    for (i, pair) in args.chunks(2).enumerate() {
        let [k, v] = pair else {
            return Err(EngineError::new(
                1582,
                "42000",
                "Incorrect parameter count in the call to native function 'json_object'",
            ));
        };
        if k.is_null() {
            return Err(EngineError::new(
                3158,
                "22032",
                "JSON documents may not contain NULL member names.",
            ));
        }
        let j = from_sql(v, mask_bit(json_mask, 2 * i + 1), 2 * i + 2, "json_object")?;
        J::put(&mut m, val::text(k), j);
    }
    Ok(out(&J::Obj(m)))
}

fn mask_bit(mask: u64, i: usize) -> bool {
    i < 64 && mask & (1 << i) != 0
}

pub fn array(args: &[Value], json_mask: u64) -> SqlResult<Value> {
    let mut a = Vec::with_capacity(args.len());
    for (i, v) in args.iter().enumerate() {
        a.push(from_sql(v, mask_bit(json_mask, i), i + 1, "json_array")?);
    }
    Ok(out(&J::Arr(a)))
}

pub fn cast(v: &Value) -> SqlResult<Value> {
    if v.is_null() {
        return Ok(Value::Null);
    }
    let j = match v {
        Value::Bytes(b) => parse_text(b).map_err(|(w, p)| invalid(1, "cast_as_json", w, p))?,
        other => from_sql(other, false, 1, "cast_as_json")?,
    };
    Ok(out(&j))
}

/// How JSON_SET, JSON_INSERT, JSON_REPLACE treat a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Modify {
    Set,
    Insert,
    Replace,
    ArrayAppend,
}

impl Modify {
    fn name(self) -> &'static str {
        match self {
            Modify::Set => "json_set",
            Modify::Insert => "json_insert",
            Modify::Replace => "json_replace",
            Modify::ArrayAppend => "json_array_append",
        }
    }
}

fn wildcard_err() -> EngineError {
    EngineError::new(
        3149,
        "42000",
        "In this situation, path expressions may not contain the * and ** tokens or an array range.",
    )
}

/// The value at `p` (no wildcards), mutable.
fn locate_mut<'a>(j: &'a mut J, p: &[Leg]) -> Option<&'a mut J> {
    let Some((leg, rest)) = p.split_first() else {
        return Some(j);
    };
    match (leg, j) {
        (Leg::Key(k), J::Obj(o)) => {
            let i = o.iter().position(|(x, _)| x == k)?;
            locate_mut(&mut o[i].1, rest)
        }
        (Leg::Index(ix), J::Arr(a)) => {
            let i = ix.resolve(a.len())?;
            locate_mut(a.get_mut(i)?, rest)
        }
        (Leg::Index(ix), other) if ix.resolve(1) == Some(0) => locate_mut(other, rest),
        _ => None,
    }
}

pub fn modify(kind: Modify, args: &[Value], json_mask: u64) -> SqlResult<Value> {
    let f = kind.name();
    if args.len() < 3 || args.len().is_multiple_of(2) {
        return Err(EngineError::new(
            1582,
            "42000",
            format!("Incorrect parameter count in the call to native function '{f}'"),
        ));
    }
    let Some(mut d) = doc(&args[0], 1, f)? else {
        return Ok(Value::Null);
    };
    for (i, pair) in args[1..].chunks(2).enumerate() {
        let (pv, vv) = (&pair[0], &pair[1]);
        if pv.is_null() {
            return Ok(Value::Null);
        }
        let p = parse_path(pv)?;
        if has_wildcard(&p) {
            return Err(wildcard_err());
        }
        let newv = from_sql(vv, mask_bit(json_mask, 2 * i + 2), 2 * i + 3, f)?;
        if kind == Modify::ArrayAppend {
            if let Some(t) = locate_mut(&mut d, &p) {
                match t {
                    J::Arr(a) => a.push(newv),
                    other => {
                        let old = std::mem::replace(other, J::Null);
                        *other = J::Arr(vec![old, newv]);
                    }
                }
            }
            continue;
        }
        let Some((last, parent_path)) = p.split_last() else {
            // `$` itself.
            if kind != Modify::Insert {
                d = newv;
            }
            continue;
        };
        let Some(parent) = locate_mut(&mut d, parent_path) else {
            continue;
        };
        match (last, parent) {
            (Leg::Key(k), J::Obj(o)) => {
                let exists = o.iter().any(|(x, _)| x == k);
                if (exists && kind != Modify::Insert) || (!exists && kind != Modify::Replace) {
                    J::put(o, k.clone(), newv);
                }
            }
            (Leg::Index(ix), J::Arr(a)) => match ix.resolve(a.len()).filter(|&i| i < a.len()) {
                Some(i) => {
                    if kind != Modify::Insert {
                        a[i] = newv;
                    }
                }
                None => {
                    if kind != Modify::Replace && matches!(ix, Idx::From(_)) {
                        a.push(newv);
                    }
                }
            },
            (Leg::Index(ix), other) => {
                if ix.resolve(1) == Some(0) {
                    if kind != Modify::Insert {
                        *other = newv;
                    }
                } else if kind != Modify::Replace && matches!(ix, Idx::From(_)) {
                    let old = std::mem::replace(other, J::Null);
                    *other = J::Arr(vec![old, newv]);
                }
            }
            _ => {}
        }
    }
    Ok(out(&d))
}

pub fn remove(args: &[Value]) -> SqlResult<Value> {
    let Some(mut d) = doc(&args[0], 1, "json_remove")? else {
        return Ok(Value::Null);
    };
    for pv in &args[1..] {
        if pv.is_null() {
            return Ok(Value::Null);
        }
        let p = parse_path(pv)?;
        if has_wildcard(&p) {
            return Err(wildcard_err());
        }
        let Some((last, parent_path)) = p.split_last() else {
            return Err(EngineError::new(
                3153,
                "42000",
                "The path expression '$' is not allowed in this context.",
            ));
        };
        if let Some(parent) = locate_mut(&mut d, parent_path) {
            match (last, parent) {
                (Leg::Key(k), J::Obj(o)) => o.retain(|(x, _)| x != k),
                (Leg::Index(ix), J::Arr(a)) => {
                    if let Some(i) = ix.resolve(a.len()).filter(|&i| i < a.len()) {
                        a.remove(i);
                    }
                }
                _ => {}
            }
        }
    }
    Ok(out(&d))
}

fn contains(t: &J, c: &J) -> bool {
    match (t, c) {
        (J::Arr(ta), J::Arr(ca)) => ca.iter().all(|x| ta.iter().any(|y| contains(y, x))),
        (J::Arr(ta), other) => ta.iter().any(|y| contains(y, other)),
        (J::Obj(to), J::Obj(co)) => co.iter().all(|(k, v)| {
            to.iter()
                .find(|(x, _)| x == k)
                .is_some_and(|(_, tv)| contains(tv, v))
        }),
        (a, b) => match (a.num(), b.num()) {
            (Some(x), Some(y)) => x == y,
            _ => a == b,
        },
    }
}

pub fn contains_fn(args: &[Value]) -> SqlResult<Value> {
    let Some(t) = doc(&args[0], 1, "json_contains")? else {
        return Ok(Value::Null);
    };
    let Some(c) = doc(&args[1], 2, "json_contains")? else {
        return Ok(Value::Null);
    };
    let target = match args.get(2) {
        Some(Value::Null) => return Ok(Value::Null),
        Some(p) => {
            let p = parse_path(p)?;
            if has_wildcard(&p) {
                return Err(wildcard_err());
            }
            let mut f = Vec::new();
            collect(&t, &p, &mut f);
            match f.first() {
                Some(j) => (*j).clone(),
                None => return Ok(Value::Null),
            }
        }
        None => t,
    };
    Ok(Value::Int(i64::from(contains(&target, &c))))
}

/// The value at the optional path argument, or the document (a stored
/// binary document read in place).
fn at_path_doc<'a>(args: &'a [Value], func: &str, stored: bool) -> SqlResult<Option<Doc<'a>>> {
    let Some(d) = doc_arg(&args[0], stored, 1, func)? else {
        return Ok(None);
    };
    match args.get(1) {
        None => Ok(Some(d)),
        Some(Value::Null) => Ok(None),
        Some(p) => {
            let p = parse_path(p)?;
            if has_wildcard(&p) {
                return Err(wildcard_err());
            }
            match d {
                Doc::Bin(n) => Ok(bin_locate(n, &p)?.map(Doc::Bin)),
                Doc::Tree(d) => {
                    let mut f = Vec::new();
                    collect(&d, &p, &mut f);
                    Ok(f.first().map(|j| Doc::Tree((*j).clone())))
                }
            }
        }
    }
}

/// JSON_LENGTH; `stored`: see [`doc_arg`].
pub fn length(args: &[Value], stored: bool) -> SqlResult<Value> {
    Ok(match at_path_doc(args, "json_length", stored)? {
        None => Value::Null,
        Some(Doc::Tree(J::Arr(a))) => Value::Int(a.len() as i64),
        Some(Doc::Tree(J::Obj(o))) => Value::Int(o.len() as i64),
        Some(Doc::Bin(Node::Arr(c) | Node::Obj(c))) => Value::Int(c.len() as i64),
        Some(_) => Value::Int(1),
    })
}

/// JSON_KEYS; `stored`: see [`doc_arg`].
pub fn keys(args: &[Value], stored: bool) -> SqlResult<Value> {
    Ok(match at_path_doc(args, "json_keys", stored)? {
        Some(Doc::Tree(J::Obj(o))) => out(&J::Arr(o.into_iter().map(|(k, _)| J::Str(k)).collect())),
        Some(Doc::Bin(Node::Obj(c))) => {
            let mut names = Vec::with_capacity(c.len());
            for i in 0..c.len() {
                names.push(J::Str(c.key(i).map_err(corrupt_doc)?.to_string()));
            }
            out(&J::Arr(names))
        }
        _ => Value::Null,
    })
}

pub fn valid(v: &Value) -> Value {
    match v {
        Value::Null => Value::Null,
        Value::Bytes(b) => Value::Int(i64::from(parse_text(b).is_ok())),
        _ => Value::Int(0),
    }
}

/// JSON_TYPE; `stored`: see [`doc_arg`].
pub fn type_of(v: &Value, stored: bool) -> SqlResult<Value> {
    Ok(match doc_arg(v, stored, 1, "json_type")? {
        None => Value::Null,
        Some(Doc::Tree(j)) => Value::text(j.type_name()),
        Some(Doc::Bin(n)) => Value::text(bin_type_name(n)),
    })
}

/// JSON_DEPTH; `stored`: see [`doc_arg`].
pub fn depth(v: &Value, stored: bool) -> SqlResult<Value> {
    Ok(match doc_arg(v, stored, 1, "json_depth")? {
        None => Value::Null,
        Some(d) => Value::Int(d.into_tree()?.depth()),
    })
}

/// JSON_CONTAINS_PATH; `stored`: see [`doc_arg`].
pub fn contains_path(args: &[Value], stored: bool) -> SqlResult<Value> {
    let Some(d) = doc_arg(&args[0], stored, 1, "json_contains_path")? else {
        return Ok(Value::Null);
    };
    if args[1..].iter().any(Value::is_null) {
        return Ok(Value::Null);
    }
    let all = match val::text(&args[1]).to_ascii_lowercase().as_str() {
        "all" => true,
        "one" => false,
        _ => return Err(EngineError::new(
            3150,
            "42000",
            "The oneOrAll argument to json_contains_path may take these values: 'one' or 'all'.",
        )),
    };
    let mut hits = Vec::new();
    let mut tree: Option<J> = None;
    for pv in &args[2..] {
        let p = parse_path(pv)?;
        if let (Doc::Bin(n), false) = (&d, has_wildcard(&p)) {
            hits.push(bin_locate(*n, &p)?.is_some());
            continue;
        }
        let t = match (&d, &mut tree) {
            (Doc::Tree(j), _) => j,
            (Doc::Bin(n), slot) => match slot {
                Some(j) => &*j,
                None => &*slot.insert(jsonb::to_j(*n, 0).map_err(corrupt_doc)?),
            },
        };
        let mut f = Vec::new();
        collect(t, &p, &mut f);
        hits.push(!f.is_empty());
    }
    let r = if all {
        hits.iter().all(|h| *h)
    } else {
        hits.iter().any(|h| *h)
    };
    Ok(Value::Int(i64::from(r)))
}

fn merge_preserve(a: J, b: J) -> J {
    match (a, b) {
        (J::Obj(mut x), J::Obj(y)) => {
            for (k, v) in y {
                match x.iter().position(|(kk, _)| *kk == k) {
                    Some(i) => {
                        let old = std::mem::replace(&mut x[i].1, J::Null);
                        x[i].1 = merge_preserve(old, v);
                    }
                    None => J::put(&mut x, k, v),
                }
            }
            J::Obj(x)
        }
        (a, b) => {
            let mut xs = match a {
                J::Arr(v) => v,
                other => vec![other],
            };
            match b {
                J::Arr(v) => xs.extend(v),
                other => xs.push(other),
            }
            J::Arr(xs)
        }
    }
}

fn merge_patch(a: J, b: J) -> J {
    let J::Obj(patch) = b else {
        return b;
    };
    let mut target = match a {
        J::Obj(x) => x,
        _ => Vec::new(),
    };
    for (k, v) in patch {
        if v == J::Null {
            target.retain(|(kk, _)| *kk != k);
            continue;
        }
        let old = target
            .iter()
            .position(|(kk, _)| *kk == k)
            .map(|i| target.remove(i).1)
            .unwrap_or(J::Null);
        J::put(&mut target, k, merge_patch(old, v));
    }
    J::Obj(target)
}

/// JSON_MERGE_PRESERVE (`patch` false) / JSON_MERGE_PATCH.
pub fn merge(args: &[Value], patch: bool) -> SqlResult<Value> {
    let f = if patch {
        "json_merge_patch"
    } else {
        "json_merge_preserve"
    };
    let mut acc: Option<J> = None;
    for (i, v) in args.iter().enumerate() {
        let Some(j) = doc(v, i + 1, f)? else {
            return Ok(Value::Null);
        };
        acc = Some(match acc {
            None => j,
            Some(a) if patch => merge_patch(a, j),
            Some(a) => merge_preserve(a, j),
        });
    }
    Ok(acc.map_or(Value::Null, |j| out(&j)))
}

fn pretty_into(j: &J, indent: usize, out: &mut String) {
    let pad = |n: usize, out: &mut String| out.extend(std::iter::repeat_n(' ', n));
    match j {
        J::Arr(a) if !a.is_empty() => {
            out.push_str("[\n");
            for (i, x) in a.iter().enumerate() {
                pad(indent + 2, out);
                pretty_into(x, indent + 2, out);
                if i + 1 < a.len() {
                    out.push(',');
                }
                out.push('\n');
            }
            pad(indent, out);
            out.push(']');
        }
        J::Obj(o) if !o.is_empty() => {
            out.push_str("{\n");
            for (i, (k, v)) in o.iter().enumerate() {
                pad(indent + 2, out);
                quote_into(k, out);
                out.push_str(": ");
                pretty_into(v, indent + 2, out);
                if i + 1 < o.len() {
                    out.push(',');
                }
                out.push('\n');
            }
            pad(indent, out);
            out.push('}');
        }
        other => print_into(other, out),
    }
}

pub fn pretty(v: &Value) -> SqlResult<Value> {
    Ok(match doc(v, 1, "json_pretty")? {
        None => Value::Null,
        Some(j) => {
            let mut s = String::new();
            pretty_into(&j, 0, &mut s);
            Value::text(&s)
        }
    })
}

pub fn array_insert(args: &[Value], json_mask: u64) -> SqlResult<Value> {
    let f = "json_array_insert";
    if args.len() < 3 || args.len().is_multiple_of(2) {
        return Err(EngineError::new(
            1582,
            "42000",
            format!("Incorrect parameter count in the call to native function '{f}'"),
        ));
    }
    let Some(mut d) = doc(&args[0], 1, f)? else {
        return Ok(Value::Null);
    };
    for (i, pair) in args[1..].chunks(2).enumerate() {
        if pair[0].is_null() {
            return Ok(Value::Null);
        }
        let p = parse_path(&pair[0])?;
        if has_wildcard(&p) {
            return Err(wildcard_err());
        }
        let Some((Leg::Index(ix), parent_path)) = p.split_last() else {
            return Err(EngineError::new(
                3165,
                "42000",
                "A path expression is not a path to a cell in an array.",
            ));
        };
        let newv = from_sql(&pair[1], mask_bit(json_mask, 2 * i + 2), 2 * i + 3, f)?;
        if let Some(J::Arr(a)) = locate_mut(&mut d, parent_path) {
            let at = match ix {
                Idx::From(n) => usize::try_from(*n).unwrap_or(usize::MAX).min(a.len()),
                Idx::Last(_) => ix.resolve(a.len()).unwrap_or(0).min(a.len()),
            };
            a.insert(at, newv);
        }
    }
    Ok(out(&d))
}

// ------------------------------------------------- comparison and order

/// The rank of a JSON value's type in MySQL's order of JSON values,
/// lowest first: null, numbers (integers, decimals and doubles compare
/// as numbers), strings, objects, arrays, booleans. (MySQL ranks its
/// date, time, opaque and bit types above booleans; quire's JSON values
/// hold none of them: a date converted to JSON is a string here.)
fn type_rank(j: &J) -> u8 {
    match j {
        J::Null => 0,
        J::Int(_) | J::UInt(_) | J::Double(_) | J::Dec(_) => 1,
        J::Str(_) => 2,
        J::Obj(_) => 3,
        J::Arr(_) => 4,
        J::Bool(_) => 5,
    }
}

/// Two JSON numbers' order: exactly for two integers, as doubles
/// otherwise.
fn number_order(a: &J, b: &J) -> Ordering {
    let as_f64 = |j: &J| match j {
        J::Int(i) => *i as f64,
        J::UInt(u) => *u as f64,
        // + 0.0: -0.0 and 0.0 are one number.
        J::Double(d) => *d + 0.0,
        J::Dec(s) => s.parse::<f64>().unwrap_or(0.0) + 0.0,
        _ => 0.0,
    };
    match (a, b) {
        (J::Int(x), J::Int(y)) => x.cmp(y),
        (J::UInt(x), J::UInt(y)) => x.cmp(y),
        (J::Int(x), J::UInt(y)) => i128::from(*x).cmp(&i128::from(*y)),
        (J::UInt(x), J::Int(y)) => i128::from(*x).cmp(&i128::from(*y)),
        _ => as_f64(a).total_cmp(&as_f64(b)),
    }
}

/// MySQL's order of two JSON values: by type rank, then numbers by
/// value, strings by their utf8mb4 bytes, booleans false first, arrays
/// element by element (a prefix first). MySQL leaves the order of two
/// different objects unspecified; quire compares their members (keys in
/// MySQL's key order, then values), so equal objects are equal.
pub fn order(a: &J, b: &J) -> Ordering {
    let ranks = type_rank(a).cmp(&type_rank(b));
    if ranks != Ordering::Equal {
        return ranks;
    }
    match (a, b) {
        (J::Str(x), J::Str(y)) => x.as_bytes().cmp(y.as_bytes()),
        (J::Bool(x), J::Bool(y)) => x.cmp(y),
        (J::Arr(x), J::Arr(y)) => x
            .iter()
            .zip(y)
            .map(|(p, q)| order(p, q))
            .find(|o| o.is_ne())
            .unwrap_or_else(|| x.len().cmp(&y.len())),
        (J::Obj(x), J::Obj(y)) => {
            let (x, y) = (sorted_members(x), sorted_members(y));
            x.iter()
                .zip(&y)
                .map(|(p, q)| key_order(&p.0, &q.0).then_with(|| order(&p.1, &q.1)))
                .find(|o| o.is_ne())
                .unwrap_or_else(|| x.len().cmp(&y.len()))
        }
        (J::Null, J::Null) => Ordering::Equal,
        _ => number_order(a, b),
    }
}

/// An object's members in MySQL's key order.
fn sorted_members(o: &[(String, J)]) -> Vec<&(String, J)> {
    let mut m: Vec<&(String, J)> = o.iter().collect();
    m.sort_by(|p, q| key_order(&p.0, &q.0));
    m
}

/// One side of a comparison as a JSON value: a JSON value as it is
/// (printed text or a stored binary document), any other SQL value
/// converted as MySQL does (a string is a JSON string, not parsed).
fn side(v: &Value, is_json: bool) -> SqlResult<J> {
    if is_json {
        return match doc_arg(v, true, 1, "json comparison")? {
            Some(d) => d.into_tree(),
            None => Ok(J::Null),
        };
    }
    from_sql(v, false, 1, "json comparison")
}

/// The order of `a` and `b` when at least one holds a JSON value
/// (`a_json`, `b_json`), as MySQL compares JSON with JSON or with an SQL
/// value; None when either is SQL NULL.
pub fn compare(a: &Value, a_json: bool, b: &Value, b_json: bool) -> SqlResult<Option<Ordering>> {
    if a.is_null() || b.is_null() {
        return Ok(None);
    }
    Ok(Some(order(&side(a, a_json)?, &side(b, b_json)?)))
}

/// An ORDER BY key for a JSON value whose byte order is MySQL's order of
/// JSON scalars: the type rank, then a number as an order-preserving
/// double, a string's bytes, a boolean's 0 or 1. An array or an object
/// keys by its rank alone, with MySQL's warning 1235 (it does not sort
/// non-scalar JSON values either).
pub fn sort_key(v: &Value) -> SqlResult<Value> {
    if v.is_null() {
        return Ok(Value::Null);
    }
    let j = side(v, true)?;
    let mut out = vec![type_rank(&j)];
    match &j {
        J::Null => {}
        J::Bool(b) => out.push(u8::from(*b)),
        J::Str(s) => out.extend_from_slice(s.as_bytes()),
        J::Arr(_) | J::Obj(_) => crate::func::warn::warn(
            1235,
            "This version of MySQL doesn't yet support 'sorting of non-scalar JSON values'",
        ),
        n => {
            let d = match n {
                J::Int(i) => *i as f64,
                J::UInt(u) => *u as f64,
                J::Double(d) => *d,
                J::Dec(s) => s.parse::<f64>().unwrap_or(0.0),
                _ => 0.0,
            } + 0.0;
            let bits = d.to_bits();
            let ordered = if d.is_sign_negative() {
                !bits
            } else {
                bits | (1 << 63)
            };
            out.extend_from_slice(&ordered.to_be_bytes());
        }
    }
    Ok(Value::Bytes(out))
}

/// A GROUP BY / PARTITION BY key for a JSON value: equal exactly when
/// the values are equal in MySQL's comparison (1 and 1.0 one group,
/// objects whatever their member order), arrays and objects included.
/// Integral numbers key as integers, others as doubles; strings are
/// escaped so that no key is a prefix of another.
pub fn group_key(v: &Value) -> SqlResult<Value> {
    if v.is_null() {
        return Ok(Value::Null);
    }
    let mut out = Vec::new();
    group_key_into(&side(v, true)?, &mut out);
    Ok(Value::Bytes(out))
}

fn group_key_into(j: &J, out: &mut Vec<u8>) {
    let escaped = |s: &str, out: &mut Vec<u8>| {
        for &b in s.as_bytes() {
            out.push(b);
            if b == 0 {
                out.push(0xff);
            }
        }
        out.extend_from_slice(&[0, 0]);
    };
    out.push(type_rank(j));
    match j {
        J::Null => {}
        J::Bool(b) => out.push(u8::from(*b)),
        J::Str(s) => escaped(s, out),
        J::Arr(a) => {
            out.extend_from_slice(&(a.len() as u64).to_be_bytes());
            for x in a {
                group_key_into(x, out);
            }
        }
        J::Obj(o) => {
            out.extend_from_slice(&(o.len() as u64).to_be_bytes());
            for (k, x) in sorted_members(o) {
                escaped(k, out);
                group_key_into(x, out);
            }
        }
        J::Int(i) => integral_key(i128::from(*i), out),
        J::UInt(u) => integral_key(i128::from(*u), out),
        J::Double(_) | J::Dec(_) => {
            let d = match j {
                J::Double(d) => *d,
                J::Dec(s) => s.parse::<f64>().unwrap_or(0.0),
                _ => 0.0,
            } + 0.0;
            if d.fract() == 0.0 && d.abs() < 1e18 {
                integral_key(d as i128, out);
            } else {
                out.push(1);
                out.extend_from_slice(&d.to_bits().to_be_bytes());
            }
        }
    }
}

/// An integral JSON number's group key part (after the type rank).
fn integral_key(n: i128, out: &mut Vec<u8>) {
    out.push(0);
    out.extend_from_slice(&n.to_be_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Value {
        Value::text(s)
    }

    /// JSON_EXTRACT of a string argument (never read as binary).
    fn extract(args: &[Value]) -> SqlResult<Value> {
        super::extract(args, false)
    }

    /// A stored document read in place answers as its printed text does.
    #[test]
    fn stored_binary_documents_answer_as_text() {
        let text = r#"{"a": [1, {"b": "x"}, 3.5], "cc": null, "d": {"e": 18446744073709551615}}"#;
        let j = parse_text(text.as_bytes()).unwrap();
        let bin = Value::Bytes(jsonb::encode(&j).unwrap());
        let doc = t(text);
        for p in [
            "$",
            "$.a",
            "$.a[1].b",
            "$.a[last]",
            "$.a[0][0]",
            "$.zz",
            "$.d.e",
            "$[0]",
            "$.a[*]",
            "$**.b",
        ] {
            assert_eq!(
                super::extract(&[bin.clone(), t(p)], true).unwrap(),
                super::extract(&[doc.clone(), t(p)], true).unwrap(),
                "{p}"
            );
            let args = [bin.clone(), t(p)];
            if !p.contains('*') {
                assert_eq!(
                    length(&args, true).unwrap(),
                    length(&[doc.clone(), t(p)], false).unwrap(),
                    "{p}"
                );
                assert_eq!(
                    keys(&args, true).unwrap(),
                    keys(&[doc.clone(), t(p)], false).unwrap(),
                    "{p}"
                );
            }
            let cp = [bin.clone(), t("one"), t(p)];
            assert_eq!(
                contains_path(&cp, true).unwrap(),
                contains_path(&[doc.clone(), t("one"), t(p)], false).unwrap(),
                "{p}"
            );
        }
        assert_eq!(type_of(&bin, true).unwrap(), t("OBJECT"));
        assert_eq!(depth(&bin, true).unwrap(), depth(&doc, false).unwrap());
        // Without the mark a string starting with a control byte is text.
        assert_eq!(type_of(&bin, false).unwrap_err().code, 3141);
    }

    #[test]
    fn printing_and_paths() {
        let d = t(r#"{"b": [1, 2], "a": 1, "aa": {"x": "y\n"}}"#);
        assert_eq!(
            cast(&d).unwrap(),
            t(r#"{"a": 1, "b": [1, 2], "aa": {"x": "y\n"}}"#)
        );
        assert_eq!(extract(&[d.clone(), t("$.b[1]")]).unwrap(), t("2"));
        assert_eq!(extract(&[d.clone(), t("$.b[*]")]).unwrap(), t("[1, 2]"));
        assert_eq!(extract(&[d.clone(), t("$.zz")]).unwrap(), Value::Null);
        assert_eq!(extract(&[d.clone(), t("$.b[last]")]).unwrap(), t("2"));
        assert_eq!(
            modify(Modify::Set, &[t("[1]"), t("$[5]"), Value::Int(2)], 0).unwrap(),
            t("[1, 2]")
        );
        assert_eq!(
            modify(Modify::Insert, &[t("1"), t("$[1]"), Value::Int(2)], 0).unwrap(),
            t("[1, 2]")
        );
        assert_eq!(remove(&[t("[1, 2, 3]"), t("$[1]")]).unwrap(), t("[1, 3]"));
        assert_eq!(
            contains_fn(&[t(r#"{"a": 1, "b": [1, 2]}"#), t("[2]"), t("$.b")]).unwrap(),
            Value::Int(1)
        );
        assert_eq!(extract(&[t("[1"), t("$")]).unwrap_err().code, 3141);
        assert_eq!(extract(&[t("[1]"), t("a")]).unwrap_err().code, 3143);
        assert_eq!(unquote(&t("\"a\\tb\"")).unwrap(), t("a\tb"));
        assert_eq!(extract(&[t("1.0"), t("$")]).unwrap(), t("1.0"));
    }

    /// The ORDER BY key sorts scalars exactly as `order` compares them,
    /// across types and within numbers (negative, zero, -0.0, fractions,
    /// integers past 2^53 aside).
    #[test]
    fn sort_keys_follow_the_json_order_of_scalars() {
        let docs = [
            "null", "-1e300", "-5", "-0.5", "-0.0", "0", "0.25", "1", "1.0", "2", "10", "1e20",
            "\"\"", "\"a\"", "\"ab\"", "\"b\"", "false", "true",
        ];
        let js: Vec<J> = docs
            .iter()
            .map(|d| parse_text(d.as_bytes()).expect("valid"))
            .collect();
        for (i, a) in js.iter().enumerate() {
            for (k, b) in js.iter().enumerate() {
                let ka = sort_key(&Value::text(docs[i])).expect("key");
                let kb = sort_key(&Value::text(docs[k])).expect("key");
                let by_key = match (ka, kb) {
                    (Value::Bytes(x), Value::Bytes(y)) => x.cmp(&y),
                    other => panic!("{other:?}"),
                };
                assert_eq!(by_key, order(a, b), "{} vs {}", docs[i], docs[k]);
            }
        }
        assert!(order(&js[3], &js[4]).is_lt() && order(&js[4], &js[5]).is_eq());
    }

    /// Two JSON values share a GROUP BY key exactly when `order` calls
    /// them equal, for scalars, arrays and objects (member order aside).
    #[test]
    fn group_keys_are_equal_exactly_for_equal_values() {
        let docs = [
            "null",
            "0",
            "-0.0",
            "1",
            "1.0",
            "1.5",
            "\"1\"",
            "\"a\\u0000b\"",
            "\"a\"",
            "[1, 2]",
            "[1.0, 2]",
            "[2, 1]",
            "[[1], 2]",
            "[1, [2]]",
            "{\"a\": 1, \"b\": [2]}",
            "{\"b\": [2.0], \"a\": 1}",
            "{\"a\": 1}",
            "{\"a\": \"1\"}",
            "true",
            "false",
            "9007199254740993",
            "9007199254740992",
        ];
        for a in docs {
            for b in docs {
                let ja = parse_text(a.as_bytes()).expect("valid");
                let jb = parse_text(b.as_bytes()).expect("valid");
                let ka = group_key(&Value::text(a)).expect("key");
                let kb = group_key(&Value::text(b)).expect("key");
                assert_eq!(ka == kb, order(&ja, &jb).is_eq(), "{a} vs {b}");
            }
        }
    }
}
