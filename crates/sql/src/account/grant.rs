//! # GRANT and REVOKE at every level
//!
//! ```text
//!   GRANT priv [(col, ...)] [, priv ...] ON level TO user [, user] [WITH GRANT OPTION]
//!   REVOKE priv [(col, ...)] [, priv ...] ON level FROM user [, user]
//!   REVOKE ALL [PRIVILEGES], GRANT OPTION FROM user [, user]
//!   level: *.* | * (current db) | db.* | db.tbl | tbl (current db)
//!   priv:  ALL [PRIVILEGES] | USAGE | SELECT | ... (privilege.rs) | GRANT OPTION
//! ```
//!
//! As in MySQL the grantor needs GRANT OPTION and every privilege it
//! hands out (or takes back) at that level or above: short of it, error
//! 1045 for `*.*`, 1044 for `db.*`, 1142 for a table. The account must
//! exist (1410: GRANT does not create users in 8.0). The new privilege
//! set is computed here and handed to the store whole
//! ([`AccountStore::set_privileges`]), which persists it in the grant
//! tables and moves the privilege version so every session re-reads it.

use quire_engine::EngineError;
use sqlparser::tokenizer::Token;

use super::{resolve, AccountCmd, AccountStore, Cur, Me, Note, UserSpec};
use crate::privilege::{
    access_denied, by_name, db_denied, specific_denied, table_denied, AccountPrivs, Privs,
};
use crate::{Output, SqlResult};

/// What a GRANT or REVOKE applies to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Level {
    /// `*.*`
    Global,
    /// `db.*`
    Db(String),
    /// `*`
    CurrentDb,
    /// `db.tbl` or `tbl`
    Table(Option<String>, String),
}

/// A parsed GRANT / REVOKE of privileges.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrantStmt {
    pub revoke: bool,
    /// Table-level (or higher) privileges named; GRANT OPTION included.
    pub privs: Privs,
    /// `ALL [PRIVILEGES]` (the level's full set).
    pub all: bool,
    /// Column privileges: `SELECT (a, b)`.
    pub columns: Vec<(String, Privs)>,
    pub on: Level,
    pub users: Vec<UserSpec>,
    /// `REVOKE ALL PRIVILEGES, GRANT OPTION FROM ...`.
    pub everything: bool,
}

fn illegal_for_table() -> EngineError {
    EngineError::new(
        1144,
        "42000",
        "Illegal GRANT/REVOKE command; please consult the manual to see which privileges can be used",
    )
}

/// Reads one privilege name (one or more words) at the cursor.
fn privilege_name(c: &mut Cur) -> SqlResult<String> {
    let mut words: Vec<String> = Vec::new();
    while let Some(Token::Word(w)) = c.peek() {
        if w.quote_style.is_some() || w.value.eq_ignore_ascii_case("ON") {
            break;
        }
        if w.value.eq_ignore_ascii_case("TO") || w.value.eq_ignore_ascii_case("FROM") {
            break;
        }
        words.push(w.value.to_ascii_uppercase());
        c.i += 1;
    }
    if words.is_empty() {
        return Err(c.err());
    }
    Ok(words.join(" "))
}

fn column_list(c: &mut Cur) -> SqlResult<Vec<String>> {
    let mut v = Vec::new();
    loop {
        v.push(c.name()?);
        if c.tok(&Token::RParen) {
            return Ok(v);
        }
        if !c.tok(&Token::Comma) {
            return Err(c.err());
        }
    }
}

/// Parses `GRANT ...` / `REVOKE ...` (the first word not yet consumed).
pub(super) fn parse(c: &mut Cur) -> SqlResult<AccountCmd> {
    let revoke = if c.word("GRANT") {
        false
    } else {
        c.expect_word("REVOKE")?;
        true
    };
    if super::role::is_role_grant(&c.t[c.i..]) {
        return super::role::parse_grant(c, revoke);
    }
    let mut st = GrantStmt {
        revoke,
        privs: Privs::NONE,
        all: false,
        columns: Vec::new(),
        on: Level::Global,
        users: Vec::new(),
        everything: false,
    };
    loop {
        let name = privilege_name(c)?;
        match name.as_str() {
            "ALL" | "ALL PRIVILEGES" => st.all = true,
            "USAGE" => {}
            _ => {
                let Some(info) = by_name(&name) else {
                    return Err(crate::parse::syntax_error(&name));
                };
                if c.tok(&Token::LParen) {
                    let cols = column_list(c)?;
                    if !Privs::COLUMN_ALL.has(info.bit) {
                        return Err(illegal_for_table());
                    }
                    for col in cols {
                        match st
                            .columns
                            .iter_mut()
                            .find(|(n, _)| n.eq_ignore_ascii_case(&col))
                        {
                            Some((_, p)) => *p = p.union(info.bit),
                            None => st.columns.push((col, info.bit)),
                        }
                    }
                } else {
                    st.privs = st.privs.union(info.bit);
                }
            }
        }
        if !c.tok(&Token::Comma) {
            break;
        }
    }
    if revoke && st.all && st.privs == Privs::GRANT && c.word("FROM") {
        st.everything = true;
        st.users = c.users()?;
        c.end()?;
        return Ok(AccountCmd::Grant(Box::new(st)));
    }
    c.expect_word("ON")?;
    c.word("TABLE");
    st.on = if c.tok(&Token::Mul) {
        if c.tok(&Token::Period) {
            if !c.tok(&Token::Mul) {
                return Err(c.err());
            }
            Level::Global
        } else {
            Level::CurrentDb
        }
    } else {
        let first = c.name()?;
        if c.tok(&Token::Period) {
            if c.tok(&Token::Mul) {
                Level::Db(first)
            } else {
                Level::Table(Some(first), c.name()?)
            }
        } else {
            Level::Table(None, first)
        }
    };
    c.expect_word(if revoke { "FROM" } else { "TO" })?;
    st.users = c.users()?;
    if !revoke && c.word("WITH") {
        c.expect_word("GRANT")?;
        c.expect_word("OPTION")?;
        st.privs = st.privs.union(Privs::GRANT);
    }
    if c.peek().is_some() {
        if c.word("IDENTIFIED") {
            // MySQL 5.7's GRANT ... IDENTIFIED BY, removed in 8.0.
            return Err(super::syntax(&c.t[c.i - 1..]));
        }
        return Err(super::account_option(c));
    }
    Ok(AccountCmd::Grant(Box::new(st)))
}

/// The level with the current database filled in.
enum At {
    Global,
    Db(String),
    Table(String, String),
}

/// Runs a GRANT / REVOKE for `me` (whose privileges are `mine`).
pub(super) fn execute(
    store: &dyn AccountStore,
    me: &Me,
    mine: &AccountPrivs,
    st: &GrantStmt,
    notes: &mut Vec<Note>,
) -> SqlResult<Output> {
    let targets: Vec<(String, String)> = st.users.iter().map(|u| resolve(me, u)).collect();
    if st.everything {
        if !mine.global_effective().has(Privs::CREATE_USER) {
            return Err(specific_denied("CREATE USER"));
        }
        for (u, h) in &targets {
            if store.grants(u, h).is_none() {
                return Err(super::cannot("REVOKE", &[(u.clone(), h.clone())]));
            }
        }
        for (u, h) in &targets {
            if !store.set_privileges(u, h, &AccountPrivs::default())? {
                return Err(super::cannot("REVOKE", &[(u.clone(), h.clone())]));
            }
        }
        super::in_memory_note(store, notes);
        return Ok(super::done(notes));
    }
    let at = match &st.on {
        Level::Global => At::Global,
        Level::Db(d) => At::Db(d.clone()),
        Level::CurrentDb => At::Db(me.db.map(str::to_string).ok_or_else(crate::exec::no_db)?),
        Level::Table(d, t) => {
            let d = match d {
                Some(d) => d.clone(),
                None => me.db.map(str::to_string).ok_or_else(crate::exec::no_db)?,
            };
            At::Table(d, t.clone())
        }
    };
    // The privileges at this level; ALL is the level's full set.
    let level_all = match at {
        At::Global => Privs::STATIC.union(Privs::DYNAMIC),
        At::Db(_) => Privs::DB_ALL,
        At::Table(..) => Privs::TABLE_ALL,
    };
    let privs = if st.all {
        st.privs.union(level_all)
    } else {
        st.privs
    };
    match at {
        At::Global => {
            if !st.columns.is_empty() {
                return Err(illegal_for_table());
            }
        }
        At::Db(_) => {
            if let Some(d) = privs.and(Privs::DYNAMIC).iter().next() {
                return Err(EngineError::new(
                    3619,
                    "HY000",
                    format!("Illegal privilege level specified for {}", d.name),
                ));
            }
            if !st.columns.is_empty() || !Privs::DB_ALL.union(Privs::GRANT).has(privs) {
                return Err(EngineError::new(
                    1221,
                    "HY000",
                    "Incorrect usage of DB GRANT and GLOBAL PRIVILEGES",
                ));
            }
        }
        At::Table(..) => {
            if let Some(d) = privs.and(Privs::DYNAMIC).iter().next() {
                return Err(EngineError::new(
                    3619,
                    "HY000",
                    format!("Illegal privilege level specified for {}", d.name),
                ));
            }
            if !Privs::TABLE_ALL.union(Privs::GRANT).has(privs) {
                return Err(illegal_for_table());
            }
        }
    }
    // The grantor holds GRANT OPTION and what it hands out.
    let col_privs = st.columns.iter().fold(Privs::NONE, |a, (_, p)| a.union(*p));
    let need = privs.union(col_privs).union(Privs::GRANT);
    match &at {
        At::Global => {
            if !mine.global.has(need) {
                return Err(access_denied(me.user, me.client_host));
            }
        }
        At::Db(d) => {
            if !mine.global.union(mine.db(d)).has(need) {
                return Err(db_denied(me.user, me.host, d));
            }
        }
        At::Table(d, t) => {
            let have = mine.on_table(d, t);
            let ok = have.has(need)
                || (have.has(privs.union(Privs::GRANT))
                    && st
                        .columns
                        .iter()
                        .all(|(c, p)| mine.on_column(d, t, c).has(*p)));
            if !ok {
                return Err(table_denied("GRANT", me.user, me.client_host, d, t));
            }
        }
    }
    // The objects exist (a table grant names a real table and columns).
    if let At::Table(d, t) = &at {
        let Some(engine) = me.engine else {
            return Err(EngineError::not_supported("table grants without an engine"));
        };
        let is_view = engine.view(d, t).is_some();
        if is_view && !st.columns.is_empty() {
            return Err(EngineError::not_supported("column privileges on a view"));
        }
        let def = match engine.table(d, t) {
            Ok(def) => Some(def),
            Err(_) if is_view => None,
            Err(_) => {
                return Err(EngineError::new(
                    1146,
                    "42S02",
                    format!("Table '{d}.{t}' doesn't exist"),
                ))
            }
        };
        for (c, _) in &st.columns {
            if def.as_ref().is_some_and(|def| def.column(c).is_none()) {
                return Err(EngineError::new(
                    1054,
                    "42S22",
                    format!("Unknown column '{c}' in '{t}'"),
                ));
            }
        }
    }
    // The accounts exist.
    let mut current = Vec::new();
    for (u, h) in &targets {
        match store.privileges(u, h) {
            Some(p) => current.push((u.clone(), h.clone(), (*p).clone())),
            None if st.revoke => return Err(super::cannot("REVOKE", &[(u.clone(), h.clone())])),
            None => {
                return Err(EngineError::new(
                    1410,
                    "42000",
                    "You are not allowed to create a user with GRANT",
                ))
            }
        }
    }
    for (u, h, mut p) in current {
        match &at {
            At::Global if st.revoke => p.global = p.global.minus(privs),
            At::Global => p.global = p.global.union(privs),
            At::Db(d) if st.revoke => {
                if !p.revoke_db(d, privs) {
                    return Err(EngineError::new(
                        1141,
                        "42000",
                        format!("There is no such grant defined for user '{u}' on host '{h}'"),
                    ));
                }
            }
            At::Db(d) => p.grant_db(d, privs),
            At::Table(d, t) if st.revoke => {
                if !p.revoke_table(d, t, privs, &st.columns) {
                    return Err(EngineError::new(
                        1147,
                        "42000",
                        format!(
                            "There is no such grant defined for user '{u}' on host '{h}' on table '{t}'"
                        ),
                    ));
                }
            }
            At::Table(d, t) => {
                // GRANT OPTION on a column grant is held at table level.
                p.grant_table(d, t, privs, &st.columns)
            }
        }
        if !store.set_privileges(&u, &h, &p)? {
            return Err(super::cannot(
                if st.revoke { "REVOKE" } else { "GRANT" },
                &[(u, h)],
            ));
        }
    }
    super::in_memory_note(store, notes);
    Ok(super::done(notes))
}
