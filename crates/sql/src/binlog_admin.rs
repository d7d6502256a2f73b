//! # Binary log administration: PURGE BINARY LOGS and RESET MASTER
//!
//! ```text
//!  PURGE {BINARY | MASTER} LOGS TO 'binlog.000007'     files before it go
//!  PURGE {BINARY | MASTER} LOGS BEFORE expr            files last written before
//!  RESET MASTER [TO n]                                 every file; binlog.n is next
//!  RESET BINARY LOGS AND GTIDS [TO n]                  (MySQL 8.2's name for it)
//! ```
//!
//! The parsing and the client's view live here (privileges in
//! `authorize.rs`); the files are the engine's (`binlog/purge.rs`).
//! PURGE needs BINLOG_ADMIN (or SUPER) and does nothing with the binary
//! log off; RESET MASTER needs RELOAD, commits the open transaction
//! first, and with the binary log off is error 1381, as in MySQL.

use std::time::{Duration, UNIX_EPOCH};

use quire_engine::binlog::purge::{PurgeTarget, RESET_TO_MAX};
use quire_engine::error::EngineError;
use quire_engine::types::Value;
use sqlparser::ast::Expr;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::Token;

use crate::parse::Command;
use crate::session::{done, Session};
use crate::{Output, SqlResult};

/// What PURGE BINARY LOGS removes.
#[derive(Debug, Clone)]
pub enum Purge {
    To(String),
    Before(Box<Expr>),
}

/// An unquoted word, upper-cased (also used by replication.rs).
pub(crate) fn word(t: &Token) -> Option<String> {
    match t {
        Token::Word(w) if w.quote_style.is_none() => Some(w.value.to_ascii_uppercase()),
        _ => None,
    }
}

pub(crate) fn expect_word(p: &mut Parser, want: &str) -> Result<(), ParserError> {
    let t = p.next_token();
    if word(&t.token).as_deref() == Some(want) {
        Ok(())
    } else {
        p.expected(want, t)
    }
}

/// `PURGE {BINARY | MASTER} LOGS {TO 'f' | BEFORE expr}` (PURGE not yet
/// consumed).
pub(crate) fn parse_purge(p: &mut Parser) -> Result<Command, ParserError> {
    p.next_token();
    let t = p.next_token();
    if !matches!(word(&t.token).as_deref(), Some("BINARY" | "MASTER")) {
        return p.expected("BINARY or MASTER", t);
    }
    expect_word(p, "LOGS")?;
    let t = p.next_token();
    match word(&t.token).as_deref() {
        Some("TO") => Ok(Command::PurgeLogs(Purge::To(p.parse_literal_string()?))),
        Some("BEFORE") => Ok(Command::PurgeLogs(Purge::Before(Box::new(p.parse_expr()?)))),
        _ => p.expected("TO or BEFORE", t),
    }
}

/// `RESET MASTER [TO n]` / `RESET BINARY LOGS AND GTIDS [TO n]` (RESET
/// not yet consumed); None for the other RESET statements.
pub(crate) fn parse_reset(p: &mut Parser) -> Option<Result<Command, ParserError>> {
    let second = word(&p.peek_nth_token(1).token)?;
    let words: &[&str] = match second.as_str() {
        "MASTER" => &["MASTER"],
        "BINARY" => &["BINARY", "LOGS", "AND", "GTIDS"],
        _ => return None,
    };
    p.next_token();
    Some((|| {
        for w in words {
            expect_word(p, w)?;
        }
        let to = if word(&p.peek_token().token).as_deref() == Some("TO") {
            p.next_token();
            let t = p.next_token();
            match &t.token {
                // MySQL's grammar takes an unsigned number; anything
                // larger than u64 is as out of range as 0.
                Token::Number(n, _) => Some(n.parse::<u64>().unwrap_or(u64::MAX)),
                _ => return p.expected("a number", t),
            }
        } else {
            None
        };
        Ok(Command::ResetMaster { to })
    })())
}

/// ER_WRONG_ARGUMENTS (1210) for PURGE ... BEFORE.
fn wrong_before() -> EngineError {
    EngineError::new(1210, "HY000", "Incorrect arguments to PURGE LOGS BEFORE")
}

/// Runs PURGE BINARY LOGS.
pub(crate) fn purge(s: &mut Session, what: &Purge, params: &[Value]) -> SqlResult<Output> {
    let target = match what {
        Purge::To(name) => PurgeTarget::To(name.clone()),
        Purge::Before(e) => {
            let v = s.eval_const(e, params)?;
            let ts = crate::func::date::unix_timestamp(&v);
            let secs = match ts {
                Value::Int(i) => i as f64,
                Value::Null => return Err(wrong_before()),
                other => other.to_f64().ok_or_else(wrong_before)?,
            };
            if !secs.is_finite() || secs < 0.0 {
                return Err(wrong_before());
            }
            PurgeTarget::Before(UNIX_EPOCH + Duration::from_secs_f64(secs))
        }
    };
    let out = s.engine().purge_binlog(&target)?;
    let n = out.warnings.len() as u16;
    s.add_warnings(
        out.warnings
            .into_iter()
            .map(|(code, msg)| ("Warning".to_string(), code, msg))
            .collect(),
    );
    Ok(done(0, 0, n, String::new()))
}

/// Runs RESET MASTER.
pub(crate) fn reset(s: &mut Session, to: Option<u64>) -> SqlResult<Output> {
    let first = to.unwrap_or(1);
    if first == 0 || first > RESET_TO_MAX {
        return Err(EngineError::new(
            3567,
            "HY000",
            format!(
                "The requested value '{first}' for the next binary log index is out of range. Please use a value between '1' and '{RESET_TO_MAX}'."
            ),
        ));
    }
    s.implicit_commit()?;
    s.engine().reset_binlog(first as u32)?;
    Ok(done(0, 0, 0, String::new()))
}
