//! # Account options of CREATE USER / ALTER USER
//!
//! What follows the user list (MySQL 8.0 grammar; the order of the groups
//! is fixed, options inside the last group come in any order):
//!
//! ```text
//!   [REQUIRE NONE | REQUIRE SSL | REQUIRE X509]
//!   [WITH MAX_USER_CONNECTIONS n [MAX_... n ...]]
//!   [PASSWORD EXPIRE [DEFAULT | NEVER]
//!    | FAILED_LOGIN_ATTEMPTS n | PASSWORD_LOCK_TIME {n | UNBOUNDED}
//!    | ACCOUNT LOCK | ACCOUNT UNLOCK] ...
//! ```
//!
//! They are enforced at login by the server (see the server's
//! `login.rs`): `REQUIRE` (1045 without TLS / without a client
//! certificate), `ACCOUNT LOCK` (3118), `PASSWORD EXPIRE` (the session
//! runs in MySQL's *sandbox mode*: every statement but `ALTER USER`,
//! `SET PASSWORD` and `SET` is error 1820 until the password is reset),
//! `FAILED_LOGIN_ATTEMPTS`/`PASSWORD_LOCK_TIME` (3955),
//! `MAX_USER_CONNECTIONS` (1226).
//!
//! Parsed but not implemented, each error 1235 naming the clause:
//! `REQUIRE CIPHER/ISSUER/SUBJECT`, `MAX_QUERIES_PER_HOUR`,
//! `MAX_UPDATES_PER_HOUR`, `MAX_CONNECTIONS_PER_HOUR`,
//! `PASSWORD EXPIRE INTERVAL`, `PASSWORD HISTORY`, `PASSWORD REUSE
//! INTERVAL`, `PASSWORD REQUIRE CURRENT`, `COMMENT`, `ATTRIBUTE`.
//! (`PASSWORD EXPIRE DEFAULT/NEVER` are accepted: quire has no password
//! lifetime, which is MySQL's `default_password_lifetime = 0`.)

use quire_engine::EngineError;
use sqlparser::tokenizer::Token;

use crate::SqlResult;

/// `REQUIRE ...`, as `mysql.user.ssl_type` stores it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SslRequire {
    /// `''`
    None,
    /// `'ANY'`
    Ssl,
    /// `'X509'`
    X509,
}

impl SslRequire {
    /// The `ssl_type` column value.
    pub fn column(self) -> &'static str {
        match self {
            SslRequire::None => "",
            SslRequire::Ssl => "ANY",
            SslRequire::X509 => "X509",
        }
    }
    pub fn from_column(s: &str) -> Option<SslRequire> {
        match s.to_ascii_uppercase().as_str() {
            "" => Some(SslRequire::None),
            "ANY" => Some(SslRequire::Ssl),
            "X509" => Some(SslRequire::X509),
            _ => None,
        }
    }
}

/// `PASSWORD_LOCK_TIME`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LockTime {
    Days(u32),
    Unbounded,
}

/// The options of one CREATE/ALTER USER; `None` = not given (CREATE uses
/// the defaults, ALTER leaves the account's value).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AccountOptions {
    pub require: Option<SslRequire>,
    pub max_user_connections: Option<u32>,
    /// `PASSWORD EXPIRE` (immediately).
    pub expire_now: bool,
    pub account_locked: Option<bool>,
    pub failed_login_attempts: Option<u32>,
    pub password_lock_time: Option<LockTime>,
}

impl AccountOptions {
    pub fn is_empty(&self) -> bool {
        *self == AccountOptions::default()
    }
}

/// The `IDENTIFIED` clause of one user of CREATE/ALTER USER.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AuthClause {
    /// Whether `IDENTIFIED ...` was given at all.
    pub identified: bool,
    /// `IDENTIFIED WITH plugin` (lower-cased), `None` = the default
    /// plugin (CREATE) or the account's own (ALTER).
    pub plugin: Option<String>,
}

fn word_is(t: Option<&Token>, w: &str) -> bool {
    matches!(t, Some(Token::Word(x)) if x.quote_style.is_none() && x.value.eq_ignore_ascii_case(w))
}

fn unsupported(what: &str) -> EngineError {
    EngineError::not_supported(format!("account option {what}"))
}

fn syntax(t: &[Token], i: usize) -> EngineError {
    let near: Vec<String> = t[i.min(t.len())..]
        .iter()
        .take(4)
        .map(|x| x.to_string())
        .collect();
    crate::parse::syntax_error(&near.join(" "))
}

/// A number in `0..=max` at `t[*i]`.
fn number(t: &[Token], i: &mut usize, max: u64, what: &str) -> SqlResult<u32> {
    match t.get(*i) {
        Some(Token::Number(n, _)) => {
            *i += 1;
            match n.parse::<u64>() {
                Ok(v) if v <= max => Ok(v as u32),
                _ => Err(EngineError::new(
                    1064,
                    "42000",
                    format!("Incorrect {what} value: '{n}' (allowed 0 .. {max})"),
                )),
            }
        }
        _ => Err(syntax(t, *i)),
    }
}

/// Parses the options starting at `t[i]` up to the end of the statement.
pub(crate) fn parse(t: &[Token], mut i: usize) -> SqlResult<AccountOptions> {
    let mut o = AccountOptions::default();
    let w = |i: usize, s: &str| word_is(t.get(i), s);
    if w(i, "REQUIRE") {
        i += 1;
        if w(i, "NONE") {
            o.require = Some(SslRequire::None);
            i += 1;
        } else {
            let mut any = false;
            loop {
                if w(i, "SSL") {
                    i += 1;
                    if o.require != Some(SslRequire::X509) {
                        o.require = Some(SslRequire::Ssl);
                    }
                } else if w(i, "X509") {
                    i += 1;
                    o.require = Some(SslRequire::X509);
                } else if w(i, "CIPHER") || w(i, "ISSUER") || w(i, "SUBJECT") {
                    return Err(unsupported(&format!(
                        "REQUIRE {} (quire has REQUIRE NONE, SSL and X509)",
                        t[i].to_string().to_ascii_uppercase()
                    )));
                } else if any {
                    break;
                } else {
                    return Err(syntax(t, i));
                }
                any = true;
                if w(i, "AND") {
                    i += 1;
                }
            }
        }
    }
    if w(i, "WITH") {
        i += 1;
        let mut any = false;
        loop {
            if w(i, "MAX_USER_CONNECTIONS") {
                i += 1;
                o.max_user_connections =
                    Some(number(t, &mut i, u32::MAX as u64, "MAX_USER_CONNECTIONS")?);
            } else if w(i, "MAX_QUERIES_PER_HOUR")
                || w(i, "MAX_UPDATES_PER_HOUR")
                || w(i, "MAX_CONNECTIONS_PER_HOUR")
            {
                return Err(unsupported(&format!(
                    "{} (quire limits MAX_USER_CONNECTIONS only)",
                    t[i].to_string().to_ascii_uppercase()
                )));
            } else if any {
                break;
            } else {
                return Err(syntax(t, i));
            }
            any = true;
        }
    }
    while i < t.len() {
        if w(i, "ACCOUNT") {
            i += 1;
            if w(i, "LOCK") {
                o.account_locked = Some(true);
            } else if w(i, "UNLOCK") {
                o.account_locked = Some(false);
            } else {
                return Err(syntax(t, i));
            }
            i += 1;
        } else if w(i, "FAILED_LOGIN_ATTEMPTS") {
            i += 1;
            o.failed_login_attempts = Some(number(t, &mut i, 32767, "FAILED_LOGIN_ATTEMPTS")?);
        } else if w(i, "PASSWORD_LOCK_TIME") {
            i += 1;
            if w(i, "UNBOUNDED") {
                i += 1;
                o.password_lock_time = Some(LockTime::Unbounded);
            } else {
                o.password_lock_time = Some(LockTime::Days(number(
                    t,
                    &mut i,
                    32767,
                    "PASSWORD_LOCK_TIME",
                )?));
            }
        } else if w(i, "PASSWORD") {
            i += 1;
            if w(i, "EXPIRE") {
                i += 1;
                if w(i, "DEFAULT") || w(i, "NEVER") {
                    i += 1;
                } else if w(i, "INTERVAL") {
                    return Err(unsupported(
                        "PASSWORD EXPIRE INTERVAL (quire has no password lifetime; \
                         PASSWORD EXPIRE expires the password now)",
                    ));
                } else {
                    o.expire_now = true;
                }
            } else if w(i, "HISTORY") || w(i, "REUSE") || w(i, "REQUIRE") {
                return Err(unsupported(&format!(
                    "PASSWORD {}",
                    t[i].to_string().to_ascii_uppercase()
                )));
            } else {
                return Err(syntax(t, i));
            }
        } else if w(i, "COMMENT") || w(i, "ATTRIBUTE") {
            return Err(unsupported(&t[i].to_string().to_ascii_uppercase()));
        } else if w(i, "DEFAULT") && w(i + 1, "ROLE") {
            return Err(unsupported("DEFAULT ROLE"));
        } else {
            return Err(syntax(t, i));
        }
    }
    Ok(o)
}

/// Whether `token` starts the options (ends the user list).
pub(crate) fn starts_options(t: Option<&Token>) -> bool {
    [
        "REQUIRE",
        "WITH",
        "ACCOUNT",
        "PASSWORD",
        "FAILED_LOGIN_ATTEMPTS",
        "PASSWORD_LOCK_TIME",
        "COMMENT",
        "ATTRIBUTE",
        "DEFAULT",
    ]
    .iter()
    .any(|w| word_is(t, w))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(sql: &str) -> SqlResult<AccountOptions> {
        let toks: Vec<Token> =
            sqlparser::tokenizer::Tokenizer::new(&sqlparser::dialect::MySqlDialect {}, sql)
                .tokenize()
                .unwrap()
                .into_iter()
                .filter(|t| !matches!(t, Token::Whitespace(_)))
                .collect();
        parse(&toks, 0)
    }

    #[test]
    fn options_parse() {
        let o = opts("REQUIRE SSL WITH MAX_USER_CONNECTIONS 3 PASSWORD EXPIRE ACCOUNT LOCK FAILED_LOGIN_ATTEMPTS 2 PASSWORD_LOCK_TIME UNBOUNDED").unwrap();
        assert_eq!(
            o,
            AccountOptions {
                require: Some(SslRequire::Ssl),
                max_user_connections: Some(3),
                expire_now: true,
                account_locked: Some(true),
                failed_login_attempts: Some(2),
                password_lock_time: Some(LockTime::Unbounded),
            }
        );
        assert_eq!(
            opts("REQUIRE SSL AND X509").unwrap().require,
            Some(SslRequire::X509)
        );
        assert_eq!(
            opts("REQUIRE NONE").unwrap().require,
            Some(SslRequire::None)
        );
        assert_eq!(
            opts("PASSWORD_LOCK_TIME 3 ACCOUNT UNLOCK").unwrap(),
            AccountOptions {
                password_lock_time: Some(LockTime::Days(3)),
                account_locked: Some(false),
                ..Default::default()
            }
        );
        assert!(opts("PASSWORD EXPIRE NEVER").unwrap().is_empty());
        assert!(opts("").unwrap().is_empty());
        for (sql, code) in [
            ("REQUIRE CIPHER 'x'", 1235),
            ("REQUIRE", 1064),
            ("WITH MAX_QUERIES_PER_HOUR 3", 1235),
            ("WITH", 1064),
            ("PASSWORD EXPIRE INTERVAL 3 DAY", 1235),
            ("PASSWORD HISTORY 3", 1235),
            ("FAILED_LOGIN_ATTEMPTS 40000", 1064),
            ("FAILED_LOGIN_ATTEMPTS", 1064),
            ("ACCOUNT", 1064),
            ("COMMENT 'x'", 1235),
            ("LOCK", 1064),
        ] {
            assert_eq!(opts(sql).unwrap_err().code, code, "{sql}");
        }
    }
}
