//! # Regular expressions
//!
//! Owns `REGEXP`/`RLIKE`/`NOT REGEXP`, REGEXP_LIKE, REGEXP_REPLACE,
//! REGEXP_SUBSTR and REGEXP_INSTR, on the `regex` crate.
//!
//! Rules followed (MySQL 8.0, whose engine is ICU):
//! * matching is case-insensitive unless the match type says `c`, as
//!   under MySQL's default collation `utf8mb4_0900_ai_ci`; match type
//!   letters `c i m n u` as in the manual (the last one wins);
//! * positions and occurrences count characters from 1; REGEXP_REPLACE
//!   with occurrence 0 replaces every match; `$1` in the replacement is a
//!   group;
//! * a bad pattern is an error with MySQL's ICU error code: 3696 unclosed
//!   bracket, 3691 mismatched parenthesis, 3692 bad `{m,n}`, 3697 bad
//!   range, 3689 unknown escape, 3690 for ICU features the `regex` crate
//!   lacks (back-references, look-around), 3688 for other syntax errors;
//!   a bad match type is 3687 ... see [`bad_flag`]; a position beyond the
//!   subject is 3686 "Index out of bounds in regular expression search.";
//! * NULL in any argument gives NULL.

use std::cell::RefCell;

use quire_engine::{EngineError, Value};
use regex::{Regex, RegexBuilder};
use regex_syntax::ast::ErrorKind;

use super::val;
use crate::SqlResult;

thread_local! {
    static CACHE: RefCell<Option<(String, String, Regex)>> = const { RefCell::new(None) };
}

fn err(code: u16, msg: impl Into<String>) -> EngineError {
    EngineError::new(code, "HY000", msg.into())
}

fn bad_flag() -> EngineError {
    err(3687, "Invalid match mode flag in regular expression.")
}

fn syntax_error(pat: &str) -> EngineError {
    match regex_syntax::ast::parse::Parser::new().parse(pat) {
        Err(e) => {
            let pos = e.span().start.offset + 1;
            match e.kind() {
                ErrorKind::ClassUnclosed => err(
                    3696,
                    "The regular expression contains an unclosed bracket expression.",
                ),
                ErrorKind::GroupUnclosed | ErrorKind::GroupUnopened => {
                    err(3691, "Mismatched parenthesis in regular expression.")
                }
                ErrorKind::RepetitionCountInvalid
                | ErrorKind::RepetitionCountUnclosed
                | ErrorKind::RepetitionCountDecimalEmpty => {
                    err(3692, "Incorrect description of a {min,max} interval.")
                }
                ErrorKind::ClassRangeInvalid => err(
                    3697,
                    "The regular expression contains an [x-y] character range where x comes after y.",
                ),
                ErrorKind::EscapeUnrecognized => {
                    err(3689, "Unrecognized escape sequence in regular expression.")
                }
                ErrorKind::UnsupportedBackreference | ErrorKind::UnsupportedLookAround => err(
                    3690,
                    "The regular expression contains a feature that is not implemented in this library version.",
                ),
                _ => err(
                    3688,
                    format!("Syntax error in regular expression on line 1, character {pos}."),
                ),
            }
        }
        Ok(_) => err(
            3688,
            "Syntax error in regular expression on line 1, character 1.",
        ),
    }
}

fn compile(pat: &str, flags: &str) -> SqlResult<Regex> {
    if let Some(r) = CACHE.with(|c| {
        c.borrow()
            .as_ref()
            .filter(|(p, f, _)| p == pat && f == flags)
            .map(|(_, _, r)| r.clone())
    }) {
        return Ok(r);
    }
    let mut ci = true;
    let mut multi = false;
    let mut dotall = false;
    for ch in flags.chars() {
        match ch {
            'c' => ci = false,
            'i' => ci = true,
            'm' => multi = true,
            'n' => dotall = true,
            'u' => {}
            _ => return Err(bad_flag()),
        }
    }
    let r = RegexBuilder::new(pat)
        .case_insensitive(ci)
        .multi_line(multi)
        .dot_matches_new_line(dotall)
        .size_limit(1 << 22)
        .build()
        .map_err(|e| match e {
            regex::Error::CompiledTooBig(_) => err(
                3700,
                "Pattern exceeds the maximum length allowed by the regexp library.",
            ),
            _ => syntax_error(pat),
        })?;
    CACHE.with(|c| *c.borrow_mut() = Some((pat.to_string(), flags.to_string(), r.clone())));
    Ok(r)
}

fn opt_text(v: Option<&Value>) -> Option<String> {
    v.map(val::text)
}

/// The byte offset of character `pos` (1-based) in `s`, or an error when
/// `pos` is beyond the end.
fn byte_at(s: &str, pos: i64) -> SqlResult<usize> {
    let n = s.chars().count() as i64;
    if pos < 1 || pos > n + 1 || (pos > n && n > 0) {
        return Err(err(
            3686,
            "Index out of bounds in regular expression search.",
        ));
    }
    Ok(s.char_indices()
        .nth((pos - 1) as usize)
        .map_or(s.len(), |(i, _)| i))
}

pub fn like(args: &[Value]) -> SqlResult<Value> {
    if args.iter().take(2).any(Value::is_null) {
        return Ok(Value::Null);
    }
    let flags = opt_text(args.get(2)).unwrap_or_default();
    let r = compile(&val::text(&args[1]), &flags)?;
    Ok(Value::Int(i64::from(r.is_match(&val::text(&args[0])))))
}

/// REGEXP_INSTR(expr, pat[, pos[, occurrence[, return_option[, flags]]]]).
pub fn instr(args: &[Value]) -> SqlResult<Value> {
    if args.iter().any(Value::is_null) {
        return Ok(Value::Null);
    }
    let s = val::text(&args[0]);
    let pos = args.get(2).and_then(val::int).unwrap_or(1);
    let occ = args.get(3).and_then(val::int).unwrap_or(1).max(1);
    let ret = args.get(4).and_then(val::int).unwrap_or(0);
    if ret != 0 && ret != 1 {
        return Err(err(3685, "Illegal argument to a regular expression."));
    }
    let r = compile(
        &val::text(&args[1]),
        &opt_text(args.get(5)).unwrap_or_default(),
    )?;
    let start = byte_at(&s, pos)?;
    let found = r
        .find_iter(&s[start..])
        .nth((occ - 1) as usize)
        .map(|m| start + if ret == 0 { m.start() } else { m.end() });
    Ok(match found {
        Some(b) => Value::Int(s[..b].chars().count() as i64 + 1),
        None => Value::Int(0),
    })
}

/// REGEXP_SUBSTR(expr, pat[, pos[, occurrence[, flags]]]).
pub fn substr(args: &[Value]) -> SqlResult<Value> {
    if args.iter().any(Value::is_null) {
        return Ok(Value::Null);
    }
    let s = val::text(&args[0]);
    let pos = args.get(2).and_then(val::int).unwrap_or(1);
    let occ = args.get(3).and_then(val::int).unwrap_or(1).max(1);
    let r = compile(
        &val::text(&args[1]),
        &opt_text(args.get(4)).unwrap_or_default(),
    )?;
    let start = byte_at(&s, pos)?;
    let found = r
        .find_iter(&s[start..])
        .nth((occ - 1) as usize)
        .map(|m| Value::text(m.as_str()));
    Ok(found.unwrap_or(Value::Null))
}

/// REGEXP_REPLACE(expr, pat, repl[, pos[, occurrence[, flags]]]).
pub fn replace(args: &[Value]) -> SqlResult<Value> {
    if args.iter().any(Value::is_null) {
        return Ok(Value::Null);
    }
    let s = val::text(&args[0]);
    let repl = val::text(&args[2]);
    let pos = args.get(3).and_then(val::int).unwrap_or(1);
    let occ = args.get(4).and_then(val::int).unwrap_or(0);
    let r = compile(
        &val::text(&args[1]),
        &opt_text(args.get(5)).unwrap_or_default(),
    )?;
    let start = byte_at(&s, pos)?;
    let (head, tail) = s.split_at(start);
    let out = if occ <= 0 {
        r.replace_all(tail, repl.as_str()).into_owned()
    } else {
        let mut out = String::new();
        let mut last = 0;
        for (i, c) in r.captures_iter(tail).enumerate() {
            if i as i64 + 1 == occ {
                let Some(m) = c.get(0) else { break };
                out.push_str(&tail[last..m.start()]);
                c.expand(&repl, &mut out);
                last = m.end();
                break;
            }
        }
        out.push_str(&tail[last..]);
        out
    };
    Ok(Value::text(&format!("{head}{out}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Value {
        Value::text(s)
    }

    #[test]
    fn basics() {
        assert_eq!(like(&[t("Michael!"), t(".*")]).unwrap(), Value::Int(1));
        assert_eq!(like(&[t("ABC"), t("abc")]).unwrap(), Value::Int(1));
        assert_eq!(like(&[t("ABC"), t("abc"), t("c")]).unwrap(), Value::Int(0));
        assert_eq!(
            instr(&[t("dog cat dog"), t("dog"), Value::Int(2)]).unwrap(),
            Value::Int(9)
        );
        assert_eq!(
            substr(&[t("abc def ghi"), t("[a-z]+"), Value::Int(1), Value::Int(3)]).unwrap(),
            t("ghi")
        );
        assert_eq!(
            replace(&[
                t("abc def ghi"),
                t("[a-z]+"),
                t("X"),
                Value::Int(1),
                Value::Int(3)
            ])
            .unwrap(),
            t("abc def X")
        );
        assert_eq!(like(&[t("a"), t("[a")]).unwrap_err().code, 3696);
        assert_eq!(like(&[t("a"), t("(a")]).unwrap_err().code, 3691);
    }
}
