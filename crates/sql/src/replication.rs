//! # Replica statements: CHANGE REPLICATION SOURCE, START/STOP/RESET REPLICA
//!
//! ```text
//!  CHANGE REPLICATION SOURCE TO SOURCE_HOST='h', SOURCE_PORT=3306, ...
//!  CHANGE MASTER TO MASTER_HOST='h', ...          (the older names)
//!  START {REPLICA | SLAVE}      STOP {REPLICA | SLAVE}
//!  RESET {REPLICA | SLAVE} [ALL]
//!  SHOW {REPLICA | SLAVE} STATUS                   (show.rs)
//! ```
//!
//! The statements are parsed and authorized here; the channel itself (a
//! client of the source and an applier) belongs to the server, which
//! installs a [`ReplicaControl`] at start. Without one (the embedded
//! engine) the statements are refused with an error that says so. Every
//! option quire takes effect; any other option is refused by name.

use std::sync::OnceLock;

use quire_engine::error::EngineError;
use quire_engine::types::Value;
use quire_engine::Engine;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::Token;

use crate::binlog_admin::{expect_word, word};
use crate::parse::Command;
use crate::session::{done, Session};
use crate::{Output, SqlResult};

/// The options of CHANGE REPLICATION SOURCE TO that quire applies (None =
/// keep the current value).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SourceOptions {
    pub host: Option<String>,
    pub port: Option<u16>,
    pub user: Option<String>,
    pub password: Option<String>,
    pub log_file: Option<String>,
    pub log_pos: Option<u64>,
    pub connect_retry_s: Option<u32>,
    pub heartbeat_period_ms: Option<u64>,
    pub get_public_key: Option<bool>,
    pub auto_position: Option<bool>,
}

/// What the server's replication channels offer the SQL layer; each call
/// names the engine whose channel it means (one process may serve
/// several engines, as the tests do).
pub trait ReplicaControl: Send + Sync {
    fn change_source(&self, e: &Engine, o: &SourceOptions) -> SqlResult<()>;
    /// Starts the channel; Some(note) when it was running already.
    fn start(&self, e: &Engine) -> SqlResult<Option<(u16, String)>>;
    /// Stops it; Some(note) when it was stopped already.
    fn stop(&self, e: &Engine) -> SqlResult<Option<(u16, String)>>;
    fn reset(&self, e: &Engine, all: bool) -> SqlResult<()>;
    /// One SHOW REPLICA STATUS row by column name (MySQL 8.0.22+ names),
    /// None when no source is configured.
    fn status(&self, e: &Engine) -> Option<Vec<(&'static str, Value)>>;
}

static CONTROL: OnceLock<Box<dyn ReplicaControl>> = OnceLock::new();

/// Installs the server's channel (once per process).
pub fn install_replica_control(c: Box<dyn ReplicaControl>) {
    let _ = CONTROL.set(c);
}

fn control() -> SqlResult<&'static dyn ReplicaControl> {
    CONTROL
        .get()
        .map(|b| b.as_ref())
        .ok_or_else(|| EngineError::not_supported("replication channels outside `quire serve`"))
}

/// The SHOW REPLICA STATUS row, if a source is configured.
pub(crate) fn status_row(e: &Engine) -> Option<Vec<(&'static str, Value)>> {
    CONTROL.get().and_then(|c| c.status(e))
}

/// The statements of this module.
#[derive(Debug, Clone, PartialEq)]
pub enum ReplicaStmt {
    Change(SourceOptions),
    Start,
    Stop,
    Reset { all: bool },
}

/// `CHANGE {REPLICATION SOURCE | MASTER} TO ...` (CHANGE not consumed).
pub(crate) fn parse_change(p: &mut Parser, sql: &str) -> Result<Command, EngineError> {
    p.next_token();
    let t = p.next_token();
    let legacy = match word(&t.token).as_deref() {
        Some("MASTER") => true,
        Some("REPLICATION") => {
            let next = p.next_token();
            if !matches!(word(&next.token).as_deref(), Some("SOURCE")) {
                return Err(syntax(p.expected("SOURCE", next), sql));
            }
            false
        }
        _ => return Err(syntax(p.expected("REPLICATION SOURCE or MASTER", t), sql)),
    };
    expect_word(p, "TO").map_err(|e| crate::parse::perr(e, sql))?;
    let mut o = SourceOptions::default();
    loop {
        let t = p.next_token();
        let Some(name) = word(&t.token) else {
            return Err(syntax(p.expected("an option name", t), sql));
        };
        if !p.consume_token(&Token::Eq) {
            return Err(syntax(p.expected("=", p.peek_token()), sql));
        }
        let v = p.next_token();
        if is_get_public_key(&name) {
            let n = number_of(&v.token).ok_or_else(|| bad_value(&name))?;
            o.get_public_key = Some(flag(n, &name)?);
        } else {
            set_option(&mut o, &name, &v.token, legacy)?;
        }
        if !p.consume_token(&Token::Comma) {
            break;
        }
    }
    if p.peek_token().token != Token::EOF && p.peek_token().token != Token::SemiColon {
        let w = word(&p.peek_token().token).unwrap_or_default();
        if w == "FOR" {
            return Err(EngineError::not_supported(
                "FOR CHANNEL (quire has one replication channel, '')",
            ));
        }
        return Err(syntax(p.expected("end of statement", p.peek_token()), sql));
    }
    Ok(Command::Replica(ReplicaStmt::Change(o)))
}

/// 1064 for what `p.expected(...)` returned.
fn syntax(r: Result<(), ParserError>, sql: &str) -> EngineError {
    match r {
        Err(e) => crate::parse::perr(e, sql),
        Ok(_) => crate::parse::syntax_error(sql),
    }
}

fn text_of(t: &Token) -> Option<String> {
    match t {
        Token::SingleQuotedString(s) | Token::DoubleQuotedString(s) => Some(s.clone()),
        _ => None,
    }
}

fn number_of(t: &Token) -> Option<u64> {
    match t {
        Token::Number(n, _) => n.parse::<u64>().ok(),
        _ => None,
    }
}

fn decimal_of(t: &Token) -> Option<f64> {
    match t {
        Token::Number(n, _) => n.parse::<f64>().ok(),
        _ => None,
    }
}

fn bad_value(name: &str) -> EngineError {
    EngineError::new(
        1210,
        "HY000",
        format!("Incorrect arguments to CHANGE REPLICATION SOURCE TO ({name})"),
    )
}

/// One option; `legacy` names start with MASTER_, the others SOURCE_.
fn set_option(o: &mut SourceOptions, name: &str, v: &Token, legacy: bool) -> SqlResult<()> {
    let prefix = if legacy { "MASTER_" } else { "SOURCE_" };
    let Some(key) = name.strip_prefix(prefix) else {
        return Err(EngineError::not_supported(format!(
            "CHANGE REPLICATION SOURCE option {name}"
        )));
    };
    let text = || text_of(v).ok_or_else(|| bad_value(name));
    let num = || number_of(v).ok_or_else(|| bad_value(name));
    match key {
        "HOST" => o.host = Some(text()?),
        "USER" => o.user = Some(text()?),
        "PASSWORD" => o.password = Some(text()?),
        "LOG_FILE" => o.log_file = Some(text()?),
        "PORT" => o.port = Some(u16::try_from(num()?).map_err(|_| bad_value(name))?),
        "LOG_POS" => o.log_pos = Some(num()?),
        "CONNECT_RETRY" => {
            o.connect_retry_s = Some(u32::try_from(num()?).map_err(|_| bad_value(name))?)
        }
        "HEARTBEAT_PERIOD" => {
            let s = decimal_of(v).ok_or_else(|| bad_value(name))?;
            // MySQL: 0 disables, otherwise 0.001 .. 4294967 seconds.
            if !(0.0..=4_294_967.0).contains(&s) || (s > 0.0 && s < 0.001) {
                return Err(EngineError::new(
                    1703,
                    "HY000",
                    "The requested value for the heartbeat period is either negative or exceeds the maximum allowed (4294967 seconds).",
                ));
            }
            o.heartbeat_period_ms = Some((s * 1000.0).round() as u64);
        }
        "AUTO_POSITION" => o.auto_position = Some(flag(num()?, name)?),
        "PUBLIC_KEY_PATH" => {
            return Err(EngineError::not_supported(format!(
                "{name} (use GET_{prefix}PUBLIC_KEY=1)"
            )))
        }
        _ => {
            return Err(EngineError::not_supported(format!(
                "CHANGE REPLICATION SOURCE option {name}"
            )))
        }
    }
    Ok(())
}

fn flag(n: u64, name: &str) -> SqlResult<bool> {
    match n {
        0 => Ok(false),
        1 => Ok(true),
        _ => Err(bad_value(name)),
    }
}

/// GET_SOURCE_PUBLIC_KEY / GET_MASTER_PUBLIC_KEY start with GET_, not the
/// prefix: handled before [`set_option`].
fn is_get_public_key(name: &str) -> bool {
    matches!(name, "GET_SOURCE_PUBLIC_KEY" | "GET_MASTER_PUBLIC_KEY")
}

/// `START|STOP|RESET {REPLICA|SLAVE}` (first word not consumed); None when
/// the second word is not REPLICA/SLAVE.
pub(crate) fn parse_control(p: &mut Parser, sql: &str) -> Option<Result<Command, EngineError>> {
    let first = word(&p.peek_nth_token(0).token)?;
    let second = word(&p.peek_nth_token(1).token)?;
    if !matches!(second.as_str(), "REPLICA" | "SLAVE") {
        return None;
    }
    p.next_token();
    p.next_token();
    let rest = word(&p.peek_token().token);
    let stmt = match (first.as_str(), rest.as_deref()) {
        ("RESET", Some("ALL")) => {
            p.next_token();
            ReplicaStmt::Reset { all: true }
        }
        ("RESET", None) => ReplicaStmt::Reset { all: false },
        ("START", None) => ReplicaStmt::Start,
        ("STOP", None) => ReplicaStmt::Stop,
        (_, Some(other)) => {
            return Some(Err(EngineError::not_supported(format!(
                "{first} REPLICA ... {other} (the channel's threads start and stop together)"
            ))))
        }
        _ => return None,
    };
    if p.peek_token().token != Token::EOF && p.peek_token().token != Token::SemiColon {
        return Some(Err(syntax(
            p.expected("end of statement", p.peek_token()),
            sql,
        )));
    }
    Some(Ok(Command::Replica(stmt)))
}

/// Runs a replica statement (privileges checked in `authorize.rs`).
pub(crate) fn run(s: &mut Session, stmt: &ReplicaStmt) -> SqlResult<Output> {
    let c = control()?;
    let e = s.engine().clone();
    let note = match stmt {
        ReplicaStmt::Change(o) => {
            c.change_source(&e, o)?;
            None
        }
        ReplicaStmt::Start => c.start(&e)?,
        ReplicaStmt::Stop => c.stop(&e)?,
        ReplicaStmt::Reset { all } => {
            c.reset(&e, *all)?;
            None
        }
    };
    let n = u16::from(note.is_some());
    if let Some((code, msg)) = note {
        s.add_warnings(vec![("Note".to_string(), code, msg)]);
    }
    Ok(done(0, 0, n, String::new()))
}
