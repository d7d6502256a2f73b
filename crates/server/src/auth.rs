//! # Accounts and `mysql_native_password`
//!
//! ## The scramble
//!
//! The server sends 20 random bytes (the *scramble*) in its handshake. A
//! client that knows the password `P` answers with
//!
//! ```text
//!   token = SHA1(P)  XOR  SHA1(scramble ++ SHA1(SHA1(P)))
//! ```
//!
//! The server stores only `stage2 = SHA1(SHA1(P))` (what MySQL keeps in
//! `mysql.user.authentication_string`, printed as `*` + 40 hex digits). It
//! recovers `stage1 = token XOR SHA1(scramble ++ stage2)` and accepts when
//! `SHA1(stage1) = stage2`. The password never crosses the wire and the
//! stored hash alone does not let anyone log in on a *different* server
//! (they would need `stage1`). An empty password is an empty token.
//!
//! ## Plugins
//!
//! Each account has a plugin: `caching_sha2_password` (the default,
//! `default_authentication_plugin`; see `sha2_password.rs`) or this one.
//! [`Accounts::find`] returns the account a login matches;
//! `conn/login.rs` runs the plugin and the account options (`login.rs`).
//! [`Accounts::check`] is the one-packet check (native token, or the
//! caching_sha2 fast path when the digest is cached).
//!
//! ## Accounts
//!
//! [`Accounts`] is a small in-memory account table: `(user, host pattern)`
//! → stage2 hash and an "ALL PRIVILEGES" flag. Host patterns follow MySQL:
//! `%` matches any host, `_` one character, `localhost` matches the Unix
//! socket and loopback addresses (127.0.0.0/8, ::1). When several rows
//! match, the most specific host wins (no wildcard before wildcards), as in
//! MySQL's sorted `mysql.user`.
//!
//! The default table has one account, `root@localhost` with no password and
//! all privileges: a fresh `quire serve` is reachable from the same machine
//! only. The process-wide table is [`accounts()`]; the SQL layer wires
//! `CREATE USER` / `DROP USER` / `GRANT ALL` to [`Accounts::create_user`],
//! [`Accounts::drop_user`] and [`Accounts::grant_all`] through the
//! [`quire_sql::AccountStore`] trait, which [`Accounts`] implements and
//! the server installs on every session.
//!
//! ## Persistence
//!
//! As in MySQL, `quire serve` keeps its accounts in the `mysql` schema
//! (`mysql.user`, `mysql.db`; see `grant_tables.rs`): [`Accounts::persistent`]
//! loads them at start and every change is written there before the
//! in-memory table changes. [`Accounts::new`] (tests, embedded use) is a
//! table in memory only.
//!
//! Each account carries its privileges at every level
//! ([`quire_sql::AccountPrivs`], behind an `Arc`); the SQL layer checks
//! them on every statement (`privilege.rs`). Every change to the table
//! moves a version number ([`quire_sql::AccountStore::privilege_version`])
//! so sessions re-read their privileges only after GRANT, REVOKE, an
//! account change or FLUSH PRIVILEGES.
//!
//! The role graph ([`quire_sql::RoleGraph`]: `mysql.role_edges`,
//! `mysql.default_roles`) sits next to the table behind its own lock,
//! taken only after the table's (never the other way round); sessions get
//! it as a shared snapshot. Dropping an account drops its edges, in the
//! same transaction and under the same lock.

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use parking_lot::RwLock;
use quire_engine::{Engine, EngineError};
use quire_sql::privilege::{AccountPrivs, Privs};
use quire_sql::{AuthId, RoleEdge, RoleGraph};

use crate::grant_tables::{GrantTables, StoredAccount};
use crate::login::{AccountLogin, LoginRegistry, Plugin};

/// Length of the scramble in the handshake.
pub const SCRAMBLE_LEN: usize = 20;

/// `SHA1(data)`.
pub fn sha1(parts: &[&[u8]]) -> [u8; 20] {
    let mut h = sha1_smol::Sha1::new();
    for p in parts {
        h.update(p);
    }
    h.digest().bytes()
}

/// `SHA1(SHA1(password))`: what an account stores.
pub fn native_password_hash(password: &[u8]) -> [u8; 20] {
    sha1(&[&sha1(&[password])])
}

/// The client's side: the token sent for `password` and `scramble`
/// (empty for an empty password).
pub fn native_password_token(password: &[u8], scramble: &[u8]) -> Vec<u8> {
    if password.is_empty() {
        return Vec::new();
    }
    let stage1 = sha1(&[password]);
    let stage2 = sha1(&[&stage1]);
    let mix = sha1(&[scramble, &stage2]);
    stage1.iter().zip(mix.iter()).map(|(a, b)| a ^ b).collect()
}

/// The server's side: does `token` prove knowledge of the password whose
/// stage2 hash is `stage2` (`None` = the account has no password)?
pub fn native_password_check(stage2: Option<&[u8; 20]>, scramble: &[u8], token: &[u8]) -> bool {
    match stage2 {
        None => token.is_empty(),
        Some(stage2) => {
            if token.len() != 20 {
                return false;
            }
            let mix = sha1(&[scramble, stage2]);
            let mut stage1 = [0u8; 20];
            for i in 0..20 {
                stage1[i] = token[i] ^ mix[i];
            }
            // Not constant-time; the token is a one-time value.
            &sha1(&[&stage1]) == stage2
        }
    }
}

/// A new random scramble: 20 printable ASCII bytes (no NUL, which would
/// end the string in the handshake, and no `$`).
pub fn new_scramble() -> [u8; SCRAMBLE_LEN] {
    use std::collections::hash_map::RandomState;
    use std::hash::{BuildHasher, Hasher};
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut out = [0u8; SCRAMBLE_LEN];
    // RandomState is seeded from the OS per process and per instance; mix
    // in a counter and the clock so two scrambles never repeat.
    let state = RandomState::new();
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    let mut word = 0u64;
    for (i, b) in out.iter_mut().enumerate() {
        if i % 8 == 0 {
            let mut h = state.build_hasher();
            h.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
            h.write_u64(nanos);
            h.write_usize(i);
            word = h.finish();
        }
        let v = (word & 0xFF) as u8;
        word >>= 8;
        // 94 printable characters from '!' (33) to '~' (126), minus '$'.
        let mut c = 33 + v % 94;
        if c == b'$' {
            c = b'#';
        }
        *b = c;
    }
    out
}

/// Where a client connects from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientHost {
    /// The Unix socket.
    Socket,
    Ip(IpAddr),
}

impl ClientHost {
    /// The host as MySQL error messages show it.
    pub fn display(&self) -> String {
        match self {
            ClientHost::Socket => "localhost".to_string(),
            ClientHost::Ip(ip) if ip.is_loopback() => "localhost".to_string(),
            ClientHost::Ip(ip) => ip.to_string(),
        }
    }
    fn is_local(&self) -> bool {
        match self {
            ClientHost::Socket => true,
            ClientHost::Ip(IpAddr::V6(v6)) => {
                v6.is_loopback() || v6.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback())
            }
            ClientHost::Ip(ip) => ip.is_loopback(),
        }
    }
}

/// Errors of account management (mapped to MySQL's by the SQL layer).
#[derive(Debug, Clone, thiserror::Error)]
pub enum AccountError {
    /// ER_CANNOT_USER (1396) for CREATE USER of an existing account.
    #[error("Operation CREATE USER failed for '{0}'@'{1}'")]
    Exists(String, String),
    /// ER_CANNOT_USER (1396) for DROP USER / GRANT of a missing account.
    #[error("Operation {0} failed for '{1}'@'{2}'")]
    Missing(&'static str, String, String),
    /// Writing the grant tables failed (the engine's error).
    #[error("{0}")]
    Storage(#[from] EngineError),
}

impl AccountError {
    /// MySQL error number and SQLSTATE.
    pub fn code(&self) -> (u16, &'static str) {
        match self {
            AccountError::Storage(e) => (e.code, e.sqlstate),
            _ => (1396, "HY000"),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Account {
    /// `SHA1(SHA1(password))`, `None` for no password.
    stage2: Option<[u8; 20]>,
    /// Privileges at every level.
    privs: Arc<AccountPrivs>,
    /// Plugin, caching_sha2 hash and account options (`login.rs`).
    login: AccountLogin,
}

/// The account table (cheap to clone; clones share the table).
#[derive(Debug, Clone)]
pub struct Accounts {
    inner: Arc<RwLock<BTreeMap<(String, String), Account>>>,
    /// Where changes are made durable (`None`: memory only).
    tables: Option<GrantTables>,
    /// Moves on every change (the privilege version sessions compare).
    version: Arc<AtomicU64>,
    /// Role grants and default roles; locked after `inner`, never before.
    roles: Arc<RwLock<Arc<RoleGraph>>>,
    /// Failed logins, host blocking, connection counts, the
    /// caching_sha2 cache (`login.rs`).
    reg: Arc<LoginRegistry>,
}

impl Default for Accounts {
    fn default() -> Self {
        Accounts::new()
    }
}

/// The result of a successful [`Accounts::check`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Authenticated {
    pub user: String,
    /// The matching account's host pattern (`CURRENT_USER()`'s host).
    pub host: String,
    pub all_privileges: bool,
}

impl Accounts {
    /// A table holding only `root@localhost` without password.
    pub fn new() -> Accounts {
        let a = Accounts {
            inner: Arc::new(RwLock::new(BTreeMap::new())),
            tables: None,
            version: Arc::new(AtomicU64::new(1)),
            roles: Default::default(),
            reg: Default::default(),
        };
        a.inner.write().insert(
            ("root".to_string(), "localhost".to_string()),
            Account {
                stage2: None,
                privs: Arc::new(AccountPrivs::from_legacy(true, &[])),
                login: Default::default(),
            },
        );
        a
    }

    /// The table kept in `engine`'s grant tables (`mysql.user`,
    /// `mysql.db`), created with `root@localhost` on a new data directory.
    pub fn persistent(engine: &Engine) -> Result<Accounts, EngineError> {
        let tables = GrantTables::open(engine)?;
        let a = Accounts {
            inner: Arc::new(RwLock::new(BTreeMap::new())),
            tables: Some(tables),
            version: Arc::new(AtomicU64::new(1)),
            roles: Default::default(),
            reg: Default::default(),
        };
        a.reload()?;
        Ok(a)
    }

    /// Whether changes survive a restart.
    pub fn is_persistent(&self) -> bool {
        self.tables.is_some()
    }

    /// `FLUSH PRIVILEGES`: replaces the table in memory with what the
    /// grant tables hold now (picking up direct edits of `mysql.user`).
    pub fn reload(&self) -> Result<(), EngineError> {
        let Some(tables) = &self.tables else {
            return Ok(());
        };
        let mut t = self.inner.write();
        let graph = tables.load_roles()?;
        *t = tables
            .load()?
            .into_iter()
            .map(|(k, a)| {
                (
                    k,
                    Account {
                        stage2: a.stage2,
                        privs: Arc::new(a.privs),
                        login: a.login,
                    },
                )
            })
            .collect();
        *self.roles.write() = Arc::new(graph);
        self.version.fetch_add(1, Ordering::Release);
        // As in MySQL, FLUSH PRIVILEGES empties the caching_sha2 cache
        // and the failed-login counters.
        self.reg.sha2_cache.clear();
        self.reg.failed.clear();
        Ok(())
    }

    /// Applies `change` to account `(user, host)` (`None` = absent): the
    /// grant tables first, then memory, under the write lock. `op` names
    /// the statement for error 1396; `must_exist` is the state the
    /// account must be in before.
    fn change(
        &self,
        op: &'static str,
        user: &str,
        host: &str,
        must_exist: bool,
        change: impl FnOnce(Option<&Account>) -> Option<Account>,
    ) -> Result<(), AccountError> {
        let mut t = self.inner.write();
        let key = (user.to_string(), host.to_ascii_lowercase());
        let old = t.get(&key);
        match (old.is_some(), must_exist) {
            (true, false) => return Err(AccountError::Exists(key.0, key.1)),
            (false, true) => return Err(AccountError::Missing(op, key.0, key.1)),
            _ => {}
        }
        let new = change(old);
        if let Some(tables) = &self.tables {
            match &new {
                Some(a) => tables.put(
                    &key.0,
                    &key.1,
                    &StoredAccount {
                        stage2: a.stage2,
                        privs: (*a.privs).clone(),
                        login: a.login.clone(),
                    },
                )?,
                None => tables.remove(&key.0, &key.1)?,
            }
        }
        // Any change of an account ends its cached fast-auth digest and
        // its failed-login count (MySQL: ALTER USER resets both).
        self.reg.sha2_cache.forget(&key.0, &key.1);
        self.reg.failed.reset(&key);
        match new {
            Some(a) => {
                t.insert(key, a);
            }
            None => {
                Arc::make_mut(&mut *self.roles.write()).remove_account(&key);
                t.remove(&key);
            }
        }
        self.version.fetch_add(1, Ordering::Release);
        Ok(())
    }

    /// Adds (`grant`) or removes role edges: the grant tables, then the
    /// graph in memory, under the table's write lock (so no account can
    /// be dropped in between). Removing an edge also removes the role
    /// from the holder's default roles.
    pub fn change_roles(&self, grant: bool, edges: &[RoleEdge]) -> Result<(), EngineError> {
        let _t = self.inner.write();
        if let Some(tables) = &self.tables {
            tables.change_roles(grant, edges)?;
        }
        let mut g = self.roles.write();
        let g = Arc::make_mut(&mut g);
        for e in edges {
            if grant {
                g.grant(e);
            } else {
                g.revoke(&e.role, &e.to);
                let kept: Vec<AuthId> = g
                    .defaults_of(&e.to)
                    .into_iter()
                    .filter(|r| *r != e.role)
                    .collect();
                g.set_defaults(&e.to, &kept);
            }
        }
        self.version.fetch_add(1, Ordering::Release);
        Ok(())
    }

    /// Replaces `who`'s default roles; `false` if there is no such
    /// account.
    pub fn set_default_roles(&self, who: &AuthId, roles: &[AuthId]) -> Result<bool, EngineError> {
        let t = self.inner.write();
        let key = (who.0.clone(), who.1.to_ascii_lowercase());
        if !t.contains_key(&key) {
            return Ok(false);
        }
        if let Some(tables) = &self.tables {
            tables.set_default_roles(&key, roles)?;
        }
        Arc::make_mut(&mut *self.roles.write()).set_defaults(&key, roles);
        self.version.fetch_add(1, Ordering::Release);
        Ok(true)
    }

    /// The role graph as it is now.
    pub fn role_graph(&self) -> Arc<RoleGraph> {
        self.roles.read().clone()
    }

    /// `CREATE USER 'user'@'host' IDENTIFIED BY 'password'` (empty
    /// password = none).
    pub fn create_user(&self, user: &str, host: &str, password: &str) -> Result<(), AccountError> {
        self.create_account(user, host, password, None, &Default::default())
    }

    /// `CREATE USER` with a plugin (`None` = `default_authentication_plugin`)
    /// and account options.
    pub fn create_account(
        &self,
        user: &str,
        host: &str,
        password: &str,
        plugin: Option<Plugin>,
        opts: &quire_sql::AccountOptions,
    ) -> Result<(), AccountError> {
        let mut login = AccountLogin {
            plugin: plugin.unwrap_or_else(|| self.reg.default_plugin()),
            ..Default::default()
        };
        let stage2 = set_credentials(&mut login, password);
        login.apply(opts);
        self.change("CREATE USER", user, host, false, |_| {
            Some(Account {
                stage2,
                privs: Default::default(),
                login,
            })
        })
    }

    /// `ALTER USER ... IDENTIFIED BY` / `SET PASSWORD` (the account keeps
    /// its plugin).
    pub fn set_password(&self, user: &str, host: &str, password: &str) -> Result<(), AccountError> {
        self.alter_account(user, host, Some((password, None)), &Default::default())
    }

    /// `ALTER USER`: a new password (and plugin) and/or options. A new
    /// password also ends `PASSWORD EXPIRE` (unless given again).
    pub fn alter_account(
        &self,
        user: &str,
        host: &str,
        password: Option<(&str, Option<Plugin>)>,
        opts: &quire_sql::AccountOptions,
    ) -> Result<(), AccountError> {
        self.change("ALTER USER", user, host, true, |old| {
            old.cloned().map(|mut a| {
                if let Some((pw, plugin)) = password {
                    if let Some(p) = plugin {
                        a.login.plugin = p;
                    }
                    a.stage2 = set_credentials(&mut a.login, pw);
                    a.login.password_expired = false;
                }
                a.login.apply(opts);
                a
            })
        })
    }

    /// `default_authentication_plugin`: the plugin of accounts created
    /// without `IDENTIFIED WITH` (caching_sha2_password unless set).
    pub fn set_default_plugin_native(&self, native: bool) {
        self.reg
            .default_native
            .store(native, std::sync::atomic::Ordering::Relaxed);
    }

    /// Counts handshake errors from loopback addresses too for
    /// `max_connect_errors` (MySQL never blocks loopback; tests need to).
    pub fn count_loopback_connect_errors(&self, on: bool) {
        self.reg
            .hosts
            .include_loopback
            .store(on, std::sync::atomic::Ordering::Relaxed);
    }

    /// The login registry shared by this table's clones.
    pub(crate) fn registry(&self) -> &Arc<LoginRegistry> {
        &self.reg
    }

    /// The account `user` connecting from `from` would log in as (the
    /// most specific host match), with what its login needs.
    pub(crate) fn find(&self, user: &str, from: ClientHost) -> Option<FoundAccount> {
        let t = self.inner.read();
        let mut best: Option<(u8, &(String, String), &Account)> = None;
        for (key, acct) in t.iter().filter(|((u, _), _)| u == user) {
            if let Some(rank) = host_match(&key.1, from) {
                if best.as_ref().is_none_or(|(r, _, _)| rank < *r) {
                    best = Some((rank, key, acct));
                }
            }
        }
        let (_, key, acct) = best?;
        Some(FoundAccount {
            key: key.clone(),
            stage2: acct.stage2,
            all_privileges: acct.privs.is_all(),
            login: acct.login.clone(),
        })
    }

    /// `DROP USER 'user'@'host'`.
    pub fn drop_user(&self, user: &str, host: &str) -> Result<(), AccountError> {
        self.change("DROP USER", user, host, true, |_| None)
    }

    /// `GRANT ALL [PRIVILEGES] ON *.* TO 'user'@'host'`.
    pub fn grant_all(&self, user: &str, host: &str) -> Result<(), AccountError> {
        self.change("GRANT", user, host, true, |old| {
            old.cloned().map(|a| {
                let mut p = (*a.privs).clone();
                p.global = p
                    .global
                    .union(AccountPrivs::from_legacy(true, &[]).global)
                    .minus(Privs::GRANT)
                    .union(a.privs.global.and(Privs::GRANT));
                Account {
                    privs: Arc::new(p),
                    ..a
                }
            })
        })
    }

    /// `GRANT ALL [PRIVILEGES] ON db.* TO 'user'@'host'`.
    pub fn grant_all_on_db(&self, user: &str, host: &str, db: &str) -> Result<(), AccountError> {
        self.change("GRANT", user, host, true, |old| {
            old.cloned().map(|a| {
                let mut p = (*a.privs).clone();
                p.grant_db(db, Privs::DB_ALL);
                Account {
                    privs: Arc::new(p),
                    ..a
                }
            })
        })
    }

    /// Replaces an account's privileges (GRANT / REVOKE).
    pub fn set_privileges(
        &self,
        user: &str,
        host: &str,
        privs: &AccountPrivs,
    ) -> Result<(), AccountError> {
        self.change("GRANT", user, host, true, |old| {
            old.cloned().map(|a| Account {
                privs: Arc::new(privs.clone()),
                ..a
            })
        })
    }

    /// An account's privileges, `None` if there is no such account.
    pub fn privileges(&self, user: &str, host: &str) -> Option<Arc<AccountPrivs>> {
        let key = (user.to_string(), host.to_ascii_lowercase());
        self.inner.read().get(&key).map(|a| a.privs.clone())
    }

    /// An account's grants, `None` if there is no such account.
    pub fn grants(&self, user: &str, host: &str) -> Option<quire_sql::AccountGrants> {
        let key = (user.to_string(), host.to_ascii_lowercase());
        self.inner
            .read()
            .get(&key)
            .map(|a| quire_sql::AccountGrants {
                all_privileges: a.privs.is_all(),
                databases: a.privs.all_dbs(),
            })
    }

    /// `(user, host)` of every account, sorted.
    pub fn list(&self) -> Vec<(String, String)> {
        self.inner.read().keys().cloned().collect()
    }

    /// Authenticates `user` connecting from `from` with `token` computed
    /// over `scramble`. `None` means "Access denied" (unknown user, host
    /// not allowed, or wrong password: MySQL does not say which).
    pub fn check(
        &self,
        user: &str,
        from: ClientHost,
        scramble: &[u8],
        token: &[u8],
    ) -> Option<Authenticated> {
        let a = self.find(user, from)?;
        let ok = if a.passwordless() {
            token.is_empty()
        } else {
            match a.login.plugin {
                Plugin::Native => native_password_check(a.stage2.as_ref(), scramble, token),
                // Only the fast path: the full one needs the exchange.
                Plugin::CachingSha2 => self
                    .reg
                    .sha2_cache
                    .get(&a.key.0, &a.key.1)
                    .is_some_and(|d| crate::sha2_password::check_scramble(&d, scramble, token)),
            }
        };
        ok.then(|| Authenticated {
            user: a.key.0.clone(),
            host: a.key.1.clone(),
            all_privileges: a.all_privileges,
        })
    }
}

/// Sets the password's stored form for the login's plugin; returns the
/// native stage2 hash (None for caching_sha2 or no password).
fn set_credentials(login: &mut AccountLogin, password: &str) -> Option<[u8; 20]> {
    login.sha2 = None;
    if password.is_empty() {
        return None;
    }
    match login.plugin {
        Plugin::Native => Some(native_password_hash(password.as_bytes())),
        Plugin::CachingSha2 => {
            login.sha2 = Some(crate::sha2_password::hash_password(password.as_bytes()));
            None
        }
    }
}

/// An account found for a login ([`Accounts::find`]).
#[derive(Debug, Clone)]
pub(crate) struct FoundAccount {
    /// `(user, host pattern)`.
    pub key: (String, String),
    pub stage2: Option<[u8; 20]>,
    pub all_privileges: bool,
    pub login: AccountLogin,
}

impl FoundAccount {
    /// The account has no password.
    pub fn passwordless(&self) -> bool {
        self.stage2.is_none() && self.login.sha2.is_none()
    }
}

fn plugin_of(name: &Option<String>) -> Result<Option<Plugin>, EngineError> {
    match name {
        None => Ok(None),
        Some(n) => Plugin::from_name(n)
            .map(Some)
            .ok_or_else(|| EngineError::new(1524, "HY000", format!("Plugin '{n}' is not loaded"))),
    }
}

/// The SQL layer's view of the table (installed on every session).
impl quire_sql::AccountStore for Accounts {
    fn create_account(
        &self,
        user: &str,
        host: &str,
        auth: &quire_sql::AuthSpec,
        opts: &quire_sql::AccountOptions,
    ) -> Result<bool, EngineError> {
        let plugin = plugin_of(&auth.plugin)?;
        store_result(Accounts::create_account(
            self,
            user,
            host,
            &auth.password,
            plugin,
            opts,
        ))
    }
    fn alter_account(
        &self,
        user: &str,
        host: &str,
        auth: Option<&quire_sql::AuthSpec>,
        opts: &quire_sql::AccountOptions,
    ) -> Result<bool, EngineError> {
        let pw = match auth {
            Some(a) => Some((a.password.as_str(), plugin_of(&a.plugin)?)),
            None => None,
        };
        store_result(Accounts::alter_account(self, user, host, pw, opts))
    }
    fn flush_hosts(&self) -> Result<(), EngineError> {
        self.reg.hosts.flush();
        Ok(())
    }
    fn create_user(&self, user: &str, host: &str, password: &str) -> Result<bool, EngineError> {
        store_result(Accounts::create_user(self, user, host, password))
    }
    fn drop_user(&self, user: &str, host: &str) -> Result<bool, EngineError> {
        store_result(Accounts::drop_user(self, user, host))
    }
    fn set_password(&self, user: &str, host: &str, password: &str) -> Result<bool, EngineError> {
        store_result(Accounts::set_password(self, user, host, password))
    }
    fn grant_all(&self, user: &str, host: &str, db: Option<&str>) -> Result<bool, EngineError> {
        store_result(match db {
            None => Accounts::grant_all(self, user, host),
            Some(db) => self.grant_all_on_db(user, host, db),
        })
    }
    fn grants(&self, user: &str, host: &str) -> Option<quire_sql::AccountGrants> {
        Accounts::grants(self, user, host)
    }
    fn list(&self) -> Vec<(String, String)> {
        Accounts::list(self)
    }
    fn is_persistent(&self) -> bool {
        Accounts::is_persistent(self)
    }
    fn reload(&self) -> Result<(), EngineError> {
        Accounts::reload(self)
    }
    fn privileges(&self, user: &str, host: &str) -> Option<Arc<AccountPrivs>> {
        Accounts::privileges(self, user, host)
    }
    fn privilege_version(&self) -> u64 {
        self.version.load(Ordering::Acquire)
    }
    fn role_graph(&self) -> Arc<RoleGraph> {
        Accounts::role_graph(self)
    }
    fn change_roles(&self, grant: bool, edges: &[RoleEdge]) -> Result<(), EngineError> {
        Accounts::change_roles(self, grant, edges)
    }
    fn set_default_roles(&self, who: &AuthId, roles: &[AuthId]) -> Result<bool, EngineError> {
        Accounts::set_default_roles(self, who, roles)
    }
    fn set_privileges(
        &self,
        user: &str,
        host: &str,
        privs: &AccountPrivs,
    ) -> Result<bool, EngineError> {
        store_result(Accounts::set_privileges(self, user, host, privs))
    }
}

/// The trait's view of an account change: `Ok(false)` for an account in
/// the wrong state (the SQL layer words error 1396 itself), `Err` for a
/// failure to store it.
fn store_result(r: Result<(), AccountError>) -> Result<bool, EngineError> {
    match r {
        Ok(()) => Ok(true),
        Err(AccountError::Storage(e)) => Err(e),
        Err(AccountError::Exists(..) | AccountError::Missing(..)) => Ok(false),
    }
}

/// Whether host pattern `pattern` admits `from`; the rank orders matches
/// (0 = exact/localhost, 1 = with wildcards, 2 = `%`).
fn host_match(pattern: &str, from: ClientHost) -> Option<u8> {
    if pattern == "%" {
        return Some(2);
    }
    if pattern == "localhost" {
        return from.is_local().then_some(0);
    }
    let ip = match from {
        ClientHost::Socket => return None,
        ClientHost::Ip(IpAddr::V6(v6)) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => IpAddr::V6(v6),
        },
        ClientHost::Ip(ip) => ip,
    };
    let text = ip.to_string();
    if !pattern.contains(['%', '_']) {
        return (pattern == text).then_some(0);
    }
    like(pattern.as_bytes(), text.as_bytes()).then_some(1)
}

/// SQL `LIKE` without escapes: `%` any run, `_` one byte.
fn like(p: &[u8], s: &[u8]) -> bool {
    let (mut pi, mut si) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while si < s.len() {
        if pi < p.len() && (p[pi] == b'_' || p[pi] == s[si]) {
            pi += 1;
            si += 1;
        } else if pi < p.len() && p[pi] == b'%' {
            star = Some((pi, si));
            pi += 1;
        } else if let Some((sp, ss)) = star {
            pi = sp + 1;
            si = ss + 1;
            star = Some((sp, ss + 1));
        } else {
            return false;
        }
    }
    while pi < p.len() && p[pi] == b'%' {
        pi += 1;
    }
    pi == p.len()
}

/// The process-wide account table used by [`crate::serve`].
pub fn accounts() -> &'static Accounts {
    static ACCOUNTS: OnceLock<Accounts> = OnceLock::new();
    ACCOUNTS.get_or_init(Accounts::new)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;

    /// SHA-1 of "abc" from FIPS 180-1, to pin the hash itself.
    #[test]
    fn sha1_vector() {
        let d = sha1(&[b"abc"]);
        let hex: String = d.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(hex, "a9993e364706816aba3e25717850c26c9cd0d89d");
    }

    /// MySQL's `PASSWORD('password')` (5.7) is
    /// `*2470C0C06DEE42FD1618BB99005ADCA2EC9D1E19`: the stage2 hash.
    #[test]
    fn stage2_matches_mysql_password_function() {
        let h = native_password_hash(b"password");
        let hex: String = h.iter().map(|b| format!("{b:02X}")).collect();
        assert_eq!(hex, "2470C0C06DEE42FD1618BB99005ADCA2EC9D1E19");
    }

    #[test]
    fn token_round_trip_and_independent_computation() {
        let scramble: Vec<u8> = (1..=20).collect();
        let token = native_password_token(b"secret", &scramble);
        // Independent computation, written out step by step.
        let s1 = sha1_smol::Sha1::from(b"secret").digest().bytes();
        let s2 = sha1_smol::Sha1::from(s1).digest().bytes();
        let mut m = sha1_smol::Sha1::new();
        m.update(&scramble);
        m.update(&s2);
        let mix = m.digest().bytes();
        let expect: Vec<u8> = (0..20).map(|i| s1[i] ^ mix[i]).collect();
        assert_eq!(token, expect);
        let stored = native_password_hash(b"secret");
        assert!(native_password_check(Some(&stored), &scramble, &token));
        assert!(!native_password_check(
            Some(&stored),
            &scramble,
            &native_password_token(b"Secret", &scramble)
        ));
        assert!(!native_password_check(Some(&stored), &scramble, b""));
        assert!(native_password_check(None, &scramble, b""));
        assert!(!native_password_check(None, &scramble, &token));
    }

    #[test]
    fn scramble_is_printable_and_varies() {
        let a = new_scramble();
        let b = new_scramble();
        assert_ne!(a, b);
        assert!(a.iter().all(|&c| (33..=126).contains(&c) && c != b'$'));
    }

    #[test]
    fn accounts_match_hosts() {
        let acc = Accounts::new();
        let lo = ClientHost::Ip(IpAddr::V4(Ipv4Addr::LOCALHOST));
        let remote = ClientHost::Ip(IpAddr::V4(Ipv4Addr::new(10, 1, 2, 3)));
        let s = new_scramble();
        assert!(acc.check("root", lo, &s, b"").is_some());
        assert!(acc.check("root", ClientHost::Socket, &s, b"").is_some());
        assert!(acc.check("root", remote, &s, b"").is_none());
        acc.create_account(
            "app",
            "10.1.%",
            "pw",
            Some(Plugin::Native),
            &Default::default(),
        )
        .unwrap();
        assert!(acc.create_user("app", "10.1.%", "pw").is_err());
        // A caching_sha2 account never passes on an empty or native token.
        acc.create_user("sha", "%", "pw").unwrap();
        assert!(acc.check("sha", remote, &s, b"").is_none());
        assert!(acc
            .check("sha", remote, &s, &native_password_token(b"pw", &s))
            .is_none());
        let d = crate::sha2_password::fast_digest(b"pw");
        acc.registry().sha2_cache.put("sha", "%", d);
        let tok2 = crate::sha2_password::scramble(b"pw", &s);
        assert!(acc.check("sha", remote, &s, &tok2).is_some());
        acc.set_password("sha", "%", "new").unwrap();
        assert!(
            acc.check("sha", remote, &s, &tok2).is_none(),
            "cache entry dropped"
        );
        let tok = native_password_token(b"pw", &s);
        let ok = acc.check("app", remote, &s, &tok).unwrap();
        assert_eq!(ok.host, "10.1.%");
        assert!(!ok.all_privileges);
        assert!(acc.check("app", lo, &s, &tok).is_none());
        acc.grant_all("app", "10.1.%").unwrap();
        assert!(acc.check("app", remote, &s, &tok).unwrap().all_privileges);
        acc.drop_user("app", "10.1.%").unwrap();
        assert!(acc.check("app", remote, &s, &tok).is_none());
        assert!(acc.drop_user("app", "10.1.%").is_err());
        assert!(like(b"a%c", b"abbbc"));
        assert!(!like(b"a_c", b"abbc"));
    }
}
