//! # Accounts: CREATE USER, DROP USER, GRANT, REVOKE, passwords, CURRENT_USER()
//!
//! The SQL layer does not own the account table: the wire-protocol server
//! authenticates connections and keeps the accounts (quire-sql must not
//! depend on quire-server, which depends on quire-sql). The server hands
//! each session an [`AccountStore`] (`Session::set_account_store`) and the
//! identity of the connection (`Session::set_identity`); the statements
//! here are parsed from tokens and applied to that store.
//!
//! ```text
//!   CREATE USER [IF NOT EXISTS] user [IDENTIFIED [WITH plugin] BY 'pw'] [, ...] [options]
//!   ALTER USER [IF EXISTS] user [IDENTIFIED [WITH plugin] BY 'pw'] [, ...] [options]
//!   DROP USER [IF EXISTS] user [, ...]
//!   SET PASSWORD [FOR user] = 'pw' | PASSWORD('pw')
//!   GRANT priv [(cols)], ... ON *.* | db.* | * | db.t | t TO user [, ...] [WITH GRANT OPTION]
//!   REVOKE priv [(cols)], ... ON ... FROM user [, ...]
//!   REVOKE ALL [PRIVILEGES], GRANT OPTION FROM user [, ...]
//!   SHOW GRANTS [FOR user [USING role [, ...]]]
//!   CREATE ROLE, DROP ROLE, GRANT role TO, REVOKE role FROM, SET ROLE,
//!   SET DEFAULT ROLE, ALTER USER ... DEFAULT ROLE      (account/role.rs)
//!   user: 'name'@'host' | name@host | 'name' (host '%') | CURRENT_USER[()]
//! ```
//!
//! Privileges themselves (the model, the checks every statement goes
//! through) are in `privilege.rs` and `authorize.rs`; GRANT and REVOKE in
//! `account/grant.rs`; roles in `account/role.rs` over the graph of
//! `role_graph.rs`.
//!
//! ## Where this differs from MySQL
//!
//! * Where accounts live is the store's business: `quire serve` keeps them
//!   in the grant tables (`mysql.user`, `mysql.db`, `mysql.tables_priv`,
//!   `mysql.columns_priv`, `mysql.global_grants`, `mysql.role_edges`,
//!   `mysql.default_roles`) as MySQL does, so they
//!   survive a restart. A store that keeps them in memory only (tests,
//!   embedded use) says so ([`AccountStore::is_persistent`]) and each
//!   statement that changes an account then succeeds with a `Note` (SHOW
//!   WARNINGS) saying the change lasts until the server stops.
//! * Account management needs the `CREATE USER` privilege (MySQL also
//!   accepts INSERT/UPDATE/DELETE on the `mysql` schema instead); another
//!   account's password needs `CREATE USER` too (error 1227); another
//!   account's grants need SELECT on `mysql.user` (1044); anyone may
//!   change their own password and see their own grants.
//! * Database names of `ON db.*` grants are `LIKE` patterns as in MySQL
//!   (`%`, `_`; `\_` and `\%` for the characters themselves), and one
//!   grant applies to a database: the exact name, else the pattern with
//!   the longest text before its first wildcard. MySQL breaks a tie
//!   between equally specific patterns by row order; quire by name.
//!   There are no partial revokes.
//! * Roles follow MySQL 8.0 (`account/role.rs`), with these differences:
//!   `mandatory_roles` can only be empty (setting it is error 1235); a
//!   role revoked from an account stops counting at once in its sessions
//!   and drops out of `CURRENT_ROLE()` (MySQL keeps showing it until the
//!   next SET ROLE); REVOKE of a role also removes it from the account's
//!   default roles; the admin option that lets an account grant a role
//!   is the one granted to the account itself, not one reached through
//!   its active roles; `SHOW GRANTS` for the session's own account
//!   without USING expands its active roles; `REVOKE IF EXISTS` / `IGNORE
//!   UNKNOWN USER` and `roles_graphml()` do not exist.
//! * Proxy users, `RENAME USER` and `IDENTIFIED ... AS 'hash'` are error
//!   1235. Routine-level grants (`ON PROCEDURE`) do not parse (quire has
//!   no routines).
//! * `mysql.tables_priv` keeps no `Timestamp` and an empty `Grantor`.
//! * Account options (`REQUIRE`, `WITH MAX_USER_CONNECTIONS`, `PASSWORD
//!   EXPIRE`, `FAILED_LOGIN_ATTEMPTS`, `PASSWORD_LOCK_TIME`, `ACCOUNT
//!   LOCK`) are parsed in `account_opts.rs` and handed to the store
//!   ([`AccountStore::create_account`], [`AccountStore::alter_account`]);
//!   the server enforces them at login. The ones quire lacks are 1235.
//! * `IDENTIFIED WITH mysql_native_password | caching_sha2_password`
//!   picks the plugin; without `WITH`, CREATE USER uses the server's
//!   `default_authentication_plugin` and ALTER USER keeps the account's.
//! * `CREATE USER` and `DROP USER` of several accounts are all-or-nothing,
//!   as in MySQL 8.0: if one fails, none is changed and error 1396 lists
//!   the failing accounts.

use std::sync::Arc;

use quire_engine::{ColumnType, Engine, EngineError};
use sqlparser::tokenizer::{Token, Word};

use crate::privilege::{AccountPrivs, Privs};
use crate::role_graph::{AuthId, RoleEdge, RoleGraph};
use crate::{ColumnMeta, Output, SqlResult};

mod grant;
pub(crate) mod role;
pub use crate::account_opts::{AccountOptions, AuthClause, LockTime, SslRequire};
pub use grant::{GrantStmt, Level};
pub use role::{RoleCmd, RoleSpec};

/// A password and, if named, the plugin to store it for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AuthSpec {
    pub password: String,
    /// `IDENTIFIED WITH plugin`; `None` = the default plugin (CREATE) or
    /// the account's own (ALTER, SET PASSWORD).
    pub plugin: Option<String>,
}

/// The account table as the SQL layer sees it; implemented by the server.
///
/// Host names are patterns as in MySQL (`%`, `_`, `localhost`, an IP);
/// stores compare them case-insensitively and user names exactly. The
/// mutating calls return `Ok(false)` when the account is in the wrong
/// state (already there for `create_user`, missing for the others); the
/// SQL layer turns that into MySQL's error. `Err` is a failure to store
/// the change (nothing changed), passed on to the client as it is.
pub trait AccountStore: Send + Sync {
    /// Adds an account (an empty password = none). `false` if it exists.
    fn create_user(&self, user: &str, host: &str, password: &str) -> Result<bool, EngineError>;
    /// Removes an account. `false` if it does not exist.
    fn drop_user(&self, user: &str, host: &str) -> Result<bool, EngineError>;
    /// Replaces an account's password. `false` if it does not exist.
    fn set_password(&self, user: &str, host: &str, password: &str) -> Result<bool, EngineError>;
    /// `GRANT ALL ON *.*` (`db` = `None`) or `ON db.*`. `false` if the
    /// account does not exist.
    fn grant_all(&self, user: &str, host: &str, db: Option<&str>) -> Result<bool, EngineError>;
    /// Whether changes survive a restart. When not, account statements
    /// add a Note saying so.
    fn is_persistent(&self) -> bool {
        false
    }
    /// `FLUSH PRIVILEGES`: re-reads the accounts from where they are kept
    /// (nothing to do for a store in memory).
    fn reload(&self) -> Result<(), EngineError> {
        Ok(())
    }
    /// An account's privileges; `None` if it does not exist.
    fn grants(&self, user: &str, host: &str) -> Option<AccountGrants>;
    /// Every account, `(user, host)`, sorted.
    fn list(&self) -> Vec<(String, String)>;
    /// An account's privileges at every level; `None` if it does not
    /// exist. The default reads them from [`AccountStore::grants`].
    fn privileges(&self, user: &str, host: &str) -> Option<Arc<AccountPrivs>> {
        self.grants(user, host)
            .map(|g| Arc::new(AccountPrivs::from_legacy(g.all_privileges, &g.databases)))
    }
    /// A number that changes whenever any account's privileges change
    /// (GRANT, REVOKE, FLUSH PRIVILEGES, DROP USER); sessions keep the
    /// privileges they read until it moves. `u64::MAX` (the default)
    /// means "re-read every statement".
    fn privilege_version(&self) -> u64 {
        u64::MAX
    }
    /// Replaces an account's privileges (GRANT / REVOKE). `false` if the
    /// account does not exist.
    fn set_privileges(
        &self,
        _user: &str,
        _host: &str,
        _privs: &AccountPrivs,
    ) -> Result<bool, EngineError> {
        Err(EngineError::not_supported(
            "GRANT/REVOKE of individual privileges on this account store",
        ))
    }
    /// CREATE USER with a plugin and account options (`account_opts.rs`).
    /// `false` if the account exists. The default (a store without
    /// plugins or options) takes plain accounts only.
    fn create_account(
        &self,
        user: &str,
        host: &str,
        auth: &AuthSpec,
        opts: &AccountOptions,
    ) -> Result<bool, EngineError> {
        if !opts.is_empty() {
            return Err(EngineError::not_supported(
                "account options in this account store",
            ));
        }
        self.create_user(user, host, &auth.password)
    }
    /// ALTER USER: a new password (`auth`) and/or options. `false` if the
    /// account does not exist.
    fn alter_account(
        &self,
        user: &str,
        host: &str,
        auth: Option<&AuthSpec>,
        opts: &AccountOptions,
    ) -> Result<bool, EngineError> {
        if !opts.is_empty() {
            return Err(EngineError::not_supported(
                "account options in this account store",
            ));
        }
        match auth {
            Some(a) => self.set_password(user, host, &a.password),
            None => Ok(self.grants(user, host).is_some()),
        }
    }
    /// `FLUSH HOSTS`: unblocks the hosts blocked by `max_connect_errors`.
    fn flush_hosts(&self) -> Result<(), EngineError> {
        Ok(())
    }
    /// The role grants and default roles (`role_graph.rs`), as a shared
    /// snapshot. A store without roles has an empty graph.
    fn role_graph(&self) -> Arc<RoleGraph> {
        Arc::new(RoleGraph::default())
    }
    /// Adds (`grant`) or removes role edges and moves the privilege
    /// version. The SQL layer has checked the accounts exist and that no
    /// cycle forms; removing an edge also removes the role from the
    /// account's default roles.
    fn change_roles(&self, _grant: bool, _edges: &[RoleEdge]) -> Result<(), EngineError> {
        Err(EngineError::not_supported("roles in this account store"))
    }
    /// Replaces `who`'s default roles. `false` if the account does not
    /// exist.
    fn set_default_roles(&self, _who: &AuthId, _roles: &[AuthId]) -> Result<bool, EngineError> {
        Err(EngineError::not_supported("roles in this account store"))
    }
}

/// What an account was granted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AccountGrants {
    /// `ALL PRIVILEGES ON *.*`.
    pub all_privileges: bool,
    /// `ALL PRIVILEGES ON db.*`, sorted.
    pub databases: Vec<String>,
}

/// `'user'@'host'`, or the session's own account.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UserSpec {
    Named {
        user: String,
        host: String,
    },
    /// `CURRENT_USER` / `CURRENT_USER()` / `USER()`.
    Current,
}

/// A parsed account statement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AccountCmd {
    Create {
        if_not_exists: bool,
        users: Vec<(UserSpec, String)>,
        /// Per user, its IDENTIFIED clause.
        auth: Vec<AuthClause>,
        opts: AccountOptions,
    },
    Alter {
        if_exists: bool,
        users: Vec<(UserSpec, String)>,
        /// Per user, its IDENTIFIED clause.
        auth: Vec<AuthClause>,
        opts: AccountOptions,
    },
    Drop {
        if_exists: bool,
        users: Vec<UserSpec>,
    },
    SetPassword {
        user: UserSpec,
        password: String,
    },
    /// GRANT / REVOKE of privileges (`grant.rs`).
    Grant(Box<GrantStmt>),
    /// Role statements (`role.rs`).
    Role(Box<RoleCmd>),
    ShowGrants {
        user: UserSpec,
        /// `USING role, ...`.
        using: Vec<AuthId>,
    },
}

// ------------------------------------------------------------------ parse

fn syntax(near: &[Token]) -> EngineError {
    let text: Vec<String> = near.iter().map(|t| t.to_string()).collect();
    crate::parse::syntax_error(&text.join(" "))
}

/// A cursor over the significant tokens of one statement.
struct Cur<'a> {
    t: &'a [Token],
    i: usize,
}

impl<'a> Cur<'a> {
    fn peek(&self) -> Option<&'a Token> {
        self.t.get(self.i)
    }
    fn err(&self) -> EngineError {
        syntax(&self.t[self.i.min(self.t.len())..])
    }
    /// Consumes the unquoted word `w` if it is next.
    fn word(&mut self, w: &str) -> bool {
        match self.peek() {
            Some(Token::Word(x)) if x.quote_style.is_none() && x.value.eq_ignore_ascii_case(w) => {
                self.i += 1;
                true
            }
            _ => false,
        }
    }
    fn expect_word(&mut self, w: &str) -> SqlResult<()> {
        if self.word(w) {
            Ok(())
        } else {
            Err(self.err())
        }
    }
    fn tok(&mut self, t: &Token) -> bool {
        if self.peek() == Some(t) {
            self.i += 1;
            true
        } else {
            false
        }
    }
    fn end(&self) -> SqlResult<()> {
        if self.i < self.t.len() {
            Err(self.err())
        } else {
            Ok(())
        }
    }
    /// A string literal ('...' or "...").
    fn string(&mut self) -> SqlResult<String> {
        match self.peek() {
            Some(Token::SingleQuotedString(s)) | Some(Token::DoubleQuotedString(s)) => {
                self.i += 1;
                Ok(s.clone())
            }
            _ => Err(self.err()),
        }
    }
    /// A name: an identifier (quoted or not) or a string literal.
    fn name(&mut self) -> SqlResult<String> {
        match self.peek() {
            Some(Token::SingleQuotedString(s)) | Some(Token::DoubleQuotedString(s)) => {
                self.i += 1;
                Ok(s.clone())
            }
            Some(Token::Word(w)) => {
                self.i += 1;
                Ok(w.value.clone())
            }
            _ => Err(self.err()),
        }
    }

    /// `'user'@'host'`, `user@host`, `'user'` or `CURRENT_USER[()]`. The
    /// tokenizer splits these in several ways (`'u'` `@` `'h'`,
    /// `u@localhost` as one word, `u@` then `'h'`, `'u'` then `@localhost`).
    fn user(&mut self) -> SqlResult<UserSpec> {
        let user = match self.peek() {
            Some(Token::Word(w))
                if w.quote_style.is_none()
                    && (w.value.eq_ignore_ascii_case("CURRENT_USER")
                        || w.value.eq_ignore_ascii_case("USER")) =>
            {
                let is_user_fn = w.value.eq_ignore_ascii_case("USER");
                self.i += 1;
                let parens = self.tok(&Token::LParen);
                if parens && !self.tok(&Token::RParen) {
                    return Err(self.err());
                }
                if is_user_fn && !parens {
                    // A user literally named USER.
                    return self.host_part("USER".to_string());
                }
                return Ok(UserSpec::Current);
            }
            Some(Token::Word(Word {
                value,
                quote_style: None,
                ..
            })) if value.contains('@') => {
                self.i += 1;
                let (u, h) = value.split_once('@').unwrap_or((value, ""));
                let host = if h.is_empty() {
                    self.name()?
                } else {
                    h.to_string()
                };
                return check_lengths(u.to_string(), host);
            }
            _ => self.name()?,
        };
        self.host_part(user)
    }

    fn host_part(&mut self, user: String) -> SqlResult<UserSpec> {
        let host = if self.tok(&Token::AtSign) {
            self.name()?
        } else {
            match self.peek() {
                Some(Token::Word(Word {
                    value,
                    quote_style: None,
                    ..
                })) if value.starts_with('@') => {
                    self.i += 1;
                    let h = &value[1..];
                    if h.is_empty() {
                        self.name()?
                    } else {
                        h.to_string()
                    }
                }
                _ => "%".to_string(),
            }
        };
        check_lengths(user, host)
    }

    fn users(&mut self) -> SqlResult<Vec<UserSpec>> {
        let mut v = vec![self.user()?];
        while self.tok(&Token::Comma) {
            v.push(self.user()?);
        }
        Ok(v)
    }

    /// `[IDENTIFIED [WITH plugin] BY 'pw']`; `None` when absent.
    fn identified(&mut self) -> SqlResult<Option<(String, Option<String>)>> {
        if !self.word("IDENTIFIED") {
            return Ok(None);
        }
        let mut named = None;
        if self.word("WITH") {
            let plugin = self.name()?;
            let p = plugin.to_ascii_lowercase();
            if p != "mysql_native_password" && p != "caching_sha2_password" {
                return Err(EngineError::new(
                    1524,
                    "HY000",
                    format!("Plugin '{plugin}' is not loaded"),
                ));
            }
            named = Some(p);
            if self.word("AS") {
                return Err(EngineError::not_supported(
                    "IDENTIFIED ... AS 'hash' (give the password with IDENTIFIED BY)",
                ));
            }
            if !self.word("BY") {
                return Ok(Some((String::new(), named)));
            }
        } else {
            self.expect_word("BY")?;
        }
        if self.word("RANDOM") || self.word("PASSWORD") {
            return Err(EngineError::not_supported(
                "IDENTIFIED BY RANDOM PASSWORD / BY PASSWORD 'hash'",
            ));
        }
        Ok(Some((self.string()?, named)))
    }

    /// Users each with an optional IDENTIFIED clause, then the account
    /// options (`account_opts.rs`) to the end.
    #[allow(clippy::type_complexity)]
    fn users_with_passwords(
        &mut self,
        alter: bool,
    ) -> SqlResult<(Vec<(UserSpec, String)>, Vec<AuthClause>, AccountOptions)> {
        let mut v = Vec::new();
        let mut auth = Vec::new();
        loop {
            let u = self.user()?;
            let pw = self.identified()?;
            auth.push(AuthClause {
                identified: pw.is_some(),
                plugin: pw.as_ref().and_then(|(_, p)| p.clone()),
            });
            v.push((u, pw.map(|(p, _)| p).unwrap_or_default()));
            if !self.tok(&Token::Comma) {
                break;
            }
        }
        if self.peek().is_some() && !crate::account_opts::starts_options(self.peek()) {
            return Err(self.err());
        }
        let opts = crate::account_opts::parse(self.t, self.i)?;
        self.i = self.t.len();
        if alter && opts.is_empty() && auth.iter().all(|a| !a.identified) {
            // ALTER USER u with nothing to change.
            return Err(self.err());
        }
        Ok((v, auth, opts))
    }
}

/// Error 1235 for an account option quire does not have (`PASSWORD
/// EXPIRE`, `REQUIRE SSL`, `ACCOUNT LOCK`, `DEFAULT ROLE`, ...).
fn account_option(c: &Cur) -> EngineError {
    let rest: Vec<String> = c.t[c.i..].iter().take(3).map(|t| t.to_string()).collect();
    EngineError::not_supported(format!("account option {}", rest.join(" ")))
}

fn check_lengths(user: String, host: String) -> SqlResult<UserSpec> {
    if user.chars().count() > 32 {
        return Err(EngineError::new(
            1470,
            "HY000",
            format!("String '{user}' is too long for user name (should be no longer than 32)"),
        ));
    }
    if host.chars().count() > 255 {
        return Err(EngineError::new(
            1470,
            "HY000",
            format!("String '{host}' is too long for host name (should be no longer than 255)"),
        ));
    }
    Ok(UserSpec::Named {
        user,
        host: host.to_ascii_lowercase(),
    })
}

/// Whether a statement starting with `first second` is an account
/// statement (upper-cased words).
pub(crate) fn is_account_statement(first: &str, second: &str) -> bool {
    matches!(
        (first, second),
        ("CREATE", "USER")
            | ("ALTER", "USER")
            | ("DROP", "USER")
            | ("CREATE", "ROLE")
            | ("DROP", "ROLE")
            | ("SET", "ROLE")
            | ("SET", "DEFAULT")
            | ("SET", "PASSWORD")
            | ("SHOW", "GRANTS")
            | ("GRANT", _)
            | ("REVOKE", _)
    )
}

/// An account name (`'u'@'h'`, `u@h`, `CURRENT_USER[()]`) at the start
/// of `tokens` (CREATE VIEW's DEFINER): the account and the tokens it took.
pub(crate) fn parse_user_prefix(tokens: &[Token]) -> SqlResult<(UserSpec, usize)> {
    let mut c = Cur { t: tokens, i: 0 };
    let u = c.user()?;
    Ok((u, c.i))
}

/// Parses an account statement from its significant tokens.
pub(crate) fn parse(tokens: &[Token]) -> SqlResult<AccountCmd> {
    let mut c = Cur { t: tokens, i: 0 };
    if c.word("CREATE") && c.word("ROLE") {
        return role::parse_create_drop(&mut c, true);
    }
    if c.word("DROP") && c.word("ROLE") {
        return role::parse_create_drop(&mut c, false);
    }
    c.i = 0;
    if c.word("SET") && c.word("ROLE") {
        return role::parse_set_role(&mut c);
    }
    c.i = 0;
    if c.word("SET") && c.word("DEFAULT") {
        return role::parse_set_default(&mut c);
    }
    c.i = 0;
    if c.word("CREATE") {
        c.expect_word("USER")?;
        let if_not_exists = c.word("IF");
        if if_not_exists {
            c.expect_word("NOT")?;
            c.expect_word("EXISTS")?;
        }
        let (users, auth, opts) = c.users_with_passwords(false)?;
        return Ok(AccountCmd::Create {
            if_not_exists,
            users,
            auth,
            opts,
        });
    }
    if c.word("ALTER") {
        c.expect_word("USER")?;
        let if_exists = c.word("IF");
        if if_exists {
            c.expect_word("EXISTS")?;
        }
        let at = c.i;
        let first = c.user()?;
        if c.word("DEFAULT") && c.word("ROLE") {
            return role::parse_alter_default(&mut c, first);
        }
        c.i = at;
        let (users, auth, opts) = c.users_with_passwords(true)?;
        return Ok(AccountCmd::Alter {
            if_exists,
            users,
            auth,
            opts,
        });
    }
    if c.word("DROP") {
        c.expect_word("USER")?;
        let if_exists = c.word("IF");
        if if_exists {
            c.expect_word("EXISTS")?;
        }
        let users = c.users()?;
        c.end()?;
        return Ok(AccountCmd::Drop { if_exists, users });
    }
    if c.word("SET") {
        c.expect_word("PASSWORD")?;
        let user = if c.word("FOR") {
            c.user()?
        } else {
            UserSpec::Current
        };
        if !(c.tok(&Token::Eq) || c.tok(&Token::Assignment)) {
            return Err(c.err());
        }
        let password = if c.word("PASSWORD") {
            if !c.tok(&Token::LParen) {
                return Err(c.err());
            }
            let p = c.string()?;
            if !c.tok(&Token::RParen) {
                return Err(c.err());
            }
            p
        } else {
            c.string()?
        };
        c.end()?;
        return Ok(AccountCmd::SetPassword { user, password });
    }
    if c.word("SHOW") {
        c.expect_word("GRANTS")?;
        let user = if c.word("FOR") {
            c.user()?
        } else {
            UserSpec::Current
        };
        let mut using = Vec::new();
        if c.word("USING") {
            for r in c.users()? {
                match r {
                    UserSpec::Named { user, host } => using.push((user, host)),
                    UserSpec::Current => return Err(c.err()),
                }
            }
        }
        c.end()?;
        return Ok(AccountCmd::ShowGrants { user, using });
    }
    grant::parse(&mut c)
}

// ---------------------------------------------------------------- execute

/// Who is running the statement.
pub(crate) struct Me<'a> {
    pub user: &'a str,
    /// The matched account's host pattern (CURRENT_USER()'s host).
    pub host: &'a str,
    /// Where the client connects from (error 1045's host).
    pub client_host: &'a str,
    pub db: Option<&'a str>,
    /// To check that a table grant names a real table.
    pub engine: Option<&'a Engine>,
    /// The session's effective privileges (its own and its active
    /// roles'); `None` = read the account's own from the store.
    pub privs: Option<&'a AccountPrivs>,
    /// The session's active roles (SHOW GRANTS of the own account).
    pub roles: &'a [AuthId],
}

/// A Note a successful account statement carries.
pub(crate) type Note = (String, u16, String);

fn quoted(user: &str, host: &str) -> String {
    format!("'{user}'@'{host}'")
}

fn resolve(me: &Me, u: &UserSpec) -> (String, String) {
    match u {
        UserSpec::Named { user, host } => (user.clone(), host.clone()),
        UserSpec::Current => (me.user.to_string(), me.host.to_ascii_lowercase()),
    }
}

fn denied(privilege: &str) -> EngineError {
    EngineError::new(
        1227,
        "42000",
        format!("Access denied; you need (at least one of) the {privilege} privilege(s) for this operation"),
    )
}

fn cannot(op: &str, failed: &[(String, String)]) -> EngineError {
    let list: Vec<String> = failed.iter().map(|(u, h)| quoted(u, h)).collect();
    EngineError::new(
        1396,
        "HY000",
        format!("Operation {op} failed for {}", list.join(",")),
    )
}

fn in_memory_note(store: &dyn AccountStore, notes: &mut Vec<Note>) {
    if store.is_persistent() {
        return;
    }
    notes.push((
        "Note".into(),
        1105,
        "quire keeps accounts in memory: this change lasts until the server stops \
         (MySQL would keep it in the mysql schema)"
            .into(),
    ));
}

fn done(notes: &[Note]) -> Output {
    crate::session::done(0, 0, notes.len() as u16, String::new())
}

/// Runs `cmd` against `store` on behalf of `me`; Notes go to `notes`.
pub(crate) fn execute(
    store: Option<&dyn AccountStore>,
    me: &Me,
    cmd: &AccountCmd,
    notes: &mut Vec<Note>,
) -> SqlResult<Output> {
    let Some(store) = store else {
        return Err(EngineError::not_supported(
            "account management without a server (this session has no account table)",
        ));
    };
    let own;
    let mine: &AccountPrivs = match me.privs {
        Some(p) => p,
        None => {
            own = store
                .privileges(me.user, &me.host.to_ascii_lowercase())
                .unwrap_or_default();
            &own
        }
    };
    let admin = mine.global_effective().has(Privs::CREATE_USER);
    // SHOW GRANTS FOR another account: SELECT on the mysql schema.
    let may_read_grants = mine.on_table("mysql", "user").has(Privs::SELECT);
    let myself = (me.user.to_string(), me.host.to_ascii_lowercase());
    match cmd {
        AccountCmd::Create {
            if_not_exists,
            users,
            auth,
            opts,
        } => {
            if !admin {
                return Err(denied("CREATE USER"));
            }
            let mut failed = Vec::new();
            let mut todo = Vec::new();
            for ((u, pw), a) in users.iter().zip(auth) {
                let (user, host) = resolve(me, u);
                let pw = AuthSpec {
                    password: pw.clone(),
                    plugin: a.plugin.clone(),
                };
                if store.grants(&user, &host).is_some()
                    || todo.iter().any(|(x, _)| *x == (user.clone(), host.clone()))
                {
                    if *if_not_exists {
                        notes.push((
                            "Note".into(),
                            3163,
                            format!("Authorization ID {} already exists.", quoted(&user, &host)),
                        ));
                    } else {
                        failed.push((user, host));
                    }
                } else {
                    todo.push(((user, host), pw));
                }
            }
            if !failed.is_empty() {
                notes.clear();
                return Err(cannot("CREATE USER", &failed));
            }
            let mut created: Vec<(String, String)> = Vec::new();
            for ((user, host), pw) in todo {
                let made = store.create_account(&user, &host, &pw, opts);
                if let Ok(true) = made {
                    created.push((user, host));
                } else {
                    // Created by another session in between, or not stored:
                    // undo ours (all or nothing).
                    for (u, h) in &created {
                        let _ = store.drop_user(u, h);
                    }
                    made?;
                    notes.clear();
                    return Err(cannot("CREATE USER", &[(user, host)]));
                }
            }
            if !created.is_empty() {
                in_memory_note(store, notes);
            }
            Ok(done(notes))
        }
        AccountCmd::Drop { if_exists, users } => {
            if !admin {
                return Err(denied("CREATE USER"));
            }
            let mut failed = Vec::new();
            let mut todo = Vec::new();
            for u in users {
                let (user, host) = resolve(me, u);
                if store.grants(&user, &host).is_none() {
                    if *if_exists {
                        notes.push((
                            "Note".into(),
                            3162,
                            format!("Authorization ID {} does not exist.", quoted(&user, &host)),
                        ));
                    } else {
                        failed.push((user, host));
                    }
                } else if !todo.contains(&(user.clone(), host.clone())) {
                    todo.push((user, host));
                }
            }
            if !failed.is_empty() {
                notes.clear();
                return Err(cannot("DROP USER", &failed));
            }
            let mut gone = Vec::new();
            for (user, host) in todo {
                if !store.drop_user(&user, &host)? {
                    gone.push((user, host));
                }
            }
            if !gone.is_empty() && !*if_exists {
                notes.clear();
                return Err(cannot("DROP USER", &gone));
            }
            in_memory_note(store, notes);
            Ok(done(notes))
        }
        AccountCmd::Alter {
            if_exists,
            users,
            auth,
            opts,
        } => {
            let targets: Vec<((String, String), Option<AuthSpec>)> = users
                .iter()
                .zip(auth)
                .map(|((u, pw), a)| {
                    let spec = a.identified.then(|| AuthSpec {
                        password: pw.clone(),
                        plugin: a.plugin.clone(),
                    });
                    (resolve(me, u), spec)
                })
                .collect();
            // Anyone may change their own password; options (and other
            // accounts) need the privilege.
            if !admin && (!opts.is_empty() || targets.iter().any(|(t, _)| *t != myself)) {
                return Err(denied("CREATE USER"));
            }
            let mut failed = Vec::new();
            for ((user, host), _) in &targets {
                if store.grants(user, host).is_none() {
                    if *if_exists {
                        notes.push((
                            "Note".into(),
                            3162,
                            format!("Authorization ID {} does not exist.", quoted(user, host)),
                        ));
                    } else {
                        failed.push((user.clone(), host.clone()));
                    }
                }
            }
            if !failed.is_empty() {
                notes.clear();
                return Err(cannot("ALTER USER", &failed));
            }
            let mut changed = false;
            for ((user, host), spec) in &targets {
                changed |= store.alter_account(user, host, spec.as_ref(), opts)?;
            }
            if changed {
                in_memory_note(store, notes);
            }
            Ok(done(notes))
        }
        AccountCmd::SetPassword { user, password } => {
            let (u, h) = resolve(me, user);
            if !admin && (u.clone(), h.clone()) != myself {
                return Err(denied("CREATE USER"));
            }
            if !store.set_password(&u, &h, password)? {
                return Err(EngineError::new(
                    1133,
                    "42000",
                    "Can't find any matching row in the user table",
                ));
            }
            in_memory_note(store, notes);
            Ok(done(notes))
        }
        AccountCmd::Grant(st) => grant::execute(store, me, mine, st, notes),
        AccountCmd::Role(rc) => role::execute(store, me, mine, rc, notes),
        AccountCmd::ShowGrants { user, using } => {
            let (u, h) = resolve(me, user);
            if !may_read_grants && (u.clone(), h.clone()) != myself {
                return Err(EngineError::new(
                    1044,
                    "42000",
                    format!(
                        "Access denied for user {} to database 'mysql'",
                        quoted(me.user, me.host)
                    ),
                ));
            }
            let Some(g) = store.privileges(&u, &h) else {
                return Err(EngineError::new(
                    1141,
                    "42000",
                    format!("There is no such grant defined for user '{u}' on host '{h}'"),
                ));
            };
            let who = (u.clone(), h.clone());
            // The own account without USING: its active roles expanded.
            let using = if using.is_empty() && who == myself {
                me.roles
            } else {
                using.as_slice()
            };
            let rows = role::show_lines(store, &who, g, using)?
                .iter()
                .map(|l| vec![quire_engine::Value::text(l)])
                .collect();
            let name = format!("Grants for {u}@{h}");
            Ok(Output::Rows {
                columns: vec![ColumnMeta {
                    name: name.clone(),
                    org_name: name,
                    table: String::new(),
                    org_table: String::new(),
                    db: String::new(),
                    ty: ColumnType::varchar(1024),
                    nullable: false,
                }],
                rows,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(sql: &str) -> SqlResult<AccountCmd> {
        match crate::parse::parse(sql)?.cmd {
            crate::parse::Command::Account(a) => Ok(*a),
            other => panic!("{sql}: {other:?}"),
        }
    }

    fn named(u: &str, h: &str) -> UserSpec {
        UserSpec::Named {
            user: u.into(),
            host: h.into(),
        }
    }

    fn id(u: &str, h: &str) -> AuthId {
        (u.to_string(), h.to_string())
    }

    fn role(sql: &str) -> RoleCmd {
        match p(sql) {
            Ok(AccountCmd::Role(r)) => *r,
            other => panic!("{sql}: {other:?}"),
        }
    }

    #[test]
    fn role_statements() {
        assert_eq!(
            role("CREATE ROLE IF NOT EXISTS r1, 'r2'@localhost"),
            RoleCmd::Create {
                if_not_exists: true,
                roles: vec![id("r1", "%"), id("r2", "localhost")]
            }
        );
        assert_eq!(
            role("DROP ROLE r1"),
            RoleCmd::Drop {
                if_exists: false,
                roles: vec![id("r1", "%")]
            }
        );
        assert_eq!(
            role("GRANT r1, r2 TO u, CURRENT_USER WITH ADMIN OPTION"),
            RoleCmd::Grant {
                revoke: false,
                roles: vec![id("r1", "%"), id("r2", "%")],
                to: vec![named("u", "%"), UserSpec::Current],
                admin: true
            }
        );
        assert_eq!(
            role("REVOKE r1 FROM u"),
            RoleCmd::Grant {
                revoke: true,
                roles: vec![id("r1", "%")],
                to: vec![named("u", "%")],
                admin: false
            }
        );
        assert_eq!(role("SET ROLE DEFAULT"), RoleCmd::Set(RoleSpec::Default));
        assert_eq!(role("SET ROLE NONE"), RoleCmd::Set(RoleSpec::None));
        assert_eq!(
            role("SET ROLE ALL EXCEPT r1"),
            RoleCmd::Set(RoleSpec::All {
                except: vec![id("r1", "%")]
            })
        );
        assert_eq!(
            role("SET ROLE `none`, r2"),
            RoleCmd::Set(RoleSpec::List(vec![id("none", "%"), id("r2", "%")]))
        );
        assert_eq!(
            role("SET DEFAULT ROLE ALL TO u1, u2"),
            RoleCmd::Default {
                users: vec![named("u1", "%"), named("u2", "%")],
                roles: RoleSpec::All { except: vec![] }
            }
        );
        assert_eq!(
            role("ALTER USER u DEFAULT ROLE r1, r2"),
            RoleCmd::Default {
                users: vec![named("u", "%")],
                roles: RoleSpec::List(vec![id("r1", "%"), id("r2", "%")])
            }
        );
        // REVOKE ALL ..., GRANT OPTION is still the privilege statement.
        assert!(matches!(
            p("REVOKE ALL PRIVILEGES, GRANT OPTION FROM u").unwrap(),
            AccountCmd::Grant(_)
        ));
    }

    #[test]
    fn user_forms() {
        for (sql, spec) in [
            ("DROP USER 'u'@'h'", named("u", "h")),
            ("DROP USER u@localhost", named("u", "localhost")),
            ("DROP USER `u`@`%`", named("u", "%")),
            ("DROP USER u@'10.0.%'", named("u", "10.0.%")),
            ("DROP USER 'u' @ \"H\"", named("u", "h")),
            ("DROP USER 'u'@localhost", named("u", "localhost")),
            ("DROP USER 'u'", named("u", "%")),
            ("DROP USER u", named("u", "%")),
            ("DROP USER CURRENT_USER()", UserSpec::Current),
            ("DROP USER CURRENT_USER", UserSpec::Current),
        ] {
            assert_eq!(
                p(sql).unwrap(),
                AccountCmd::Drop {
                    if_exists: false,
                    users: vec![spec]
                },
                "{sql}"
            );
        }
    }

    #[test]
    fn statements() {
        assert_eq!(
            p("CREATE USER IF NOT EXISTS 'a'@'%' IDENTIFIED BY 'x', b IDENTIFIED WITH mysql_native_password BY 'y', c;").unwrap(),
            AccountCmd::Create {
                if_not_exists: true,
                users: vec![
                    (named("a", "%"), "x".into()),
                    (named("b", "%"), "y".into()),
                    (named("c", "%"), String::new())
                ],
                auth: vec![
                    AuthClause {
                        identified: true,
                        plugin: None
                    },
                    AuthClause {
                        identified: true,
                        plugin: Some("mysql_native_password".into())
                    },
                    AuthClause::default()
                ],
                opts: AccountOptions::default(),
            }
        );
        let AccountCmd::Grant(g) =
            p("GRANT ALL PRIVILEGES ON *.* TO 'a'@'%' WITH GRANT OPTION").unwrap()
        else {
            panic!("not a grant")
        };
        assert!(g.all && g.privs == Privs::GRANT && g.on == Level::Global && !g.revoke);
        assert_eq!(g.users, vec![named("a", "%")]);
        let AccountCmd::Grant(g) = p("GRANT ALL ON sbtest.* TO a@localhost, 'b'").unwrap() else {
            panic!("not a grant")
        };
        assert_eq!(g.on, Level::Db("sbtest".into()));
        assert_eq!(g.users, vec![named("a", "localhost"), named("b", "%")]);
        let AccountCmd::Grant(g) =
            p("GRANT SELECT (a, `b`), INSERT, SHOW VIEW ON d.t TO u").unwrap()
        else {
            panic!("not a grant")
        };
        assert_eq!(g.privs, Privs::INSERT.union(Privs::SHOW_VIEW));
        assert_eq!(
            g.columns,
            vec![
                ("a".to_string(), Privs::SELECT),
                ("b".to_string(), Privs::SELECT)
            ]
        );
        assert_eq!(g.on, Level::Table(Some("d".into()), "t".into()));
        let AccountCmd::Grant(g) = p("REVOKE ALL PRIVILEGES, GRANT OPTION FROM u").unwrap() else {
            panic!("not a grant")
        };
        assert!(g.revoke && g.everything);
        let AccountCmd::Grant(g) = p("REVOKE DELETE ON t FROM u").unwrap() else {
            panic!("not a grant")
        };
        assert_eq!(g.on, Level::Table(None, "t".into()));
        assert_eq!(
            p("SET PASSWORD = 'n'").unwrap(),
            AccountCmd::SetPassword {
                user: UserSpec::Current,
                password: "n".into()
            }
        );
        assert_eq!(
            p("SET PASSWORD FOR 'a'@'%' = PASSWORD('n')").unwrap(),
            AccountCmd::SetPassword {
                user: named("a", "%"),
                password: "n".into()
            }
        );
        assert_eq!(
            p("ALTER USER USER() IDENTIFIED BY 'z'").unwrap(),
            AccountCmd::Alter {
                if_exists: false,
                users: vec![(UserSpec::Current, "z".into())],
                auth: vec![AuthClause {
                    identified: true,
                    plugin: None
                }],
                opts: AccountOptions::default(),
            }
        );
        assert_eq!(
            p("ALTER USER a@'%' IDENTIFIED WITH caching_sha2_password BY 'p' REQUIRE X509 ACCOUNT LOCK")
                .unwrap(),
            AccountCmd::Alter {
                if_exists: false,
                users: vec![(named("a", "%"), "p".into())],
                auth: vec![AuthClause {
                    identified: true,
                    plugin: Some("caching_sha2_password".into())
                }],
                opts: AccountOptions {
                    require: Some(SslRequire::X509),
                    account_locked: Some(true),
                    ..Default::default()
                },
            }
        );
        assert!(matches!(
            p("ALTER USER b ACCOUNT UNLOCK").unwrap(),
            AccountCmd::Alter { ref auth, ref opts, .. }
                if !auth[0].identified && opts.account_locked == Some(false)
        ));
        assert_eq!(
            p("SHOW GRANTS FOR 'a'@'%'").unwrap(),
            AccountCmd::ShowGrants {
                user: named("a", "%"),
                using: vec![]
            }
        );
        assert_eq!(
            p("SHOW GRANTS").unwrap(),
            AccountCmd::ShowGrants {
                user: UserSpec::Current,
                using: vec![]
            }
        );
        assert_eq!(
            p("SHOW GRANTS FOR u USING r1, 'r2'@'h'").unwrap(),
            AccountCmd::ShowGrants {
                user: named("u", "%"),
                using: vec![id("r1", "%"), id("r2", "h")]
            }
        );
        for (sql, code) in [
            ("CREATE USER", 1064),
            ("CREATE USER 'a'@", 1064),
            ("CREATE USER a IDENTIFIED BY", 1064),
            ("CREATE USER a IDENTIFIED WITH sha256_password BY 'x'", 1524),
            ("CREATE USER a PASSWORD EXPIRE INTERVAL 2 DAY", 1235),
            ("CREATE USER a REQUIRE ISSUER 'x'", 1235),
            ("CREATE USER a IDENTIFIED BY 'x' LOCK", 1064),
            ("ALTER USER a", 1064),
            ("GRANT r1 ON a", 1064),
            ("GRANT r1 TO", 1064),
            ("GRANT SELECT TO a", 1064),
            ("REVOKE INSERT FROM a", 1064),
            ("SET ROLE ALL EXCEPT", 1064),
            ("SET DEFAULT ROLE r1", 1064),
            ("CREATE ROLE CURRENT_USER()", 1064),
            ("GRANT r1 TO u WITH GRANT OPTION", 1064),
            ("GRANT SELECT (a) ON *.* FROM a", 1064),
            ("GRANT FROB ON *.* TO a", 1064),
            ("ALTER USER a ACCOUNT", 1064),
            ("GRANT ALL ON *.* TO a IDENTIFIED BY 'x'", 1064),
            ("DROP USER 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'", 1470),
            ("SET PASSWORD 'x'", 1064),
        ] {
            assert_eq!(p(sql).unwrap_err().code, code, "{sql}");
        }
    }
}
