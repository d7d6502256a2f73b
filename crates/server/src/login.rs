//! # Login policy: plugins, account options, throttling
//!
//! Everything about an account that decides whether a login may proceed,
//! apart from the password itself, and the in-memory state that goes
//! with it:
//!
//! | what | stored as (mysql.user) | enforced |
//! |---|---|---|
//! | plugin | `plugin` | handshake names the default, AuthSwitchRequest to the account's |
//! | `REQUIRE SSL / X509` | `ssl_type` `ANY` / `X509` | after the password: 1045 without TLS / without a verified client certificate |
//! | `ACCOUNT LOCK` | `account_locked` `Y` | after the password: 3118 |
//! | `PASSWORD EXPIRE` | `password_expired` `Y` | login allowed only for clients with `CLIENT_CAN_HANDLE_EXPIRED_PASSWORDS` (else 1862), the session then in sandbox mode (1820) |
//! | `FAILED_LOGIN_ATTEMPTS n PASSWORD_LOCK_TIME d` | `User_attributes` `{"Password_locking": {"failed_login_attempts": n, "password_lock_time_days": d}}` (-1 = UNBOUNDED) | n consecutive wrong passwords lock the account for d days: 3955 |
//! | `WITH MAX_USER_CONNECTIONS n` | `max_user_connections` | 1226 beyond n; else the global `max_user_connections`: 1203 |
//!
//! The consecutive-failure counters and the temporary locks live in
//! memory ([`FailedLogins`]), as in MySQL: a restart, `FLUSH PRIVILEGES`
//! or `ALTER USER` of the account resets them, and so does a successful
//! login.
//!
//! ## Host blocking (`max_connect_errors`)
//!
//! [`HostCache`] counts, per client IP, connection attempts that broke off
//! during the handshake (a malformed or missing handshake response, a
//! timeout) — not wrong passwords — and a successful login resets the
//! count. A host with `max_connect_errors` consecutive such errors gets
//! error 1129 before the handshake until `FLUSH HOSTS`. As in MySQL,
//! loopback addresses and the Unix socket are never blocked (the cache
//! is for remote hosts); `HostCache::include_loopback` lifts that for
//! tests.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use quire_sql::{AccountOptions, LockTime, SslRequire};

use crate::auth::ClientHost;

/// The two authentication methods.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Plugin {
    Native,
    #[default]
    CachingSha2,
}

impl Plugin {
    pub fn name(self) -> &'static str {
        match self {
            Plugin::Native => crate::handshake::NATIVE_PLUGIN,
            Plugin::CachingSha2 => crate::sha2_password::PLUGIN,
        }
    }
    pub fn from_name(s: &str) -> Option<Plugin> {
        match s.to_ascii_lowercase().as_str() {
            "mysql_native_password" => Some(Plugin::Native),
            "caching_sha2_password" => Some(Plugin::CachingSha2),
            _ => None,
        }
    }
}

/// The login-related part of an account.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AccountLogin {
    pub plugin: Plugin,
    /// caching_sha2_password's stored `$A$005$...` (None = no password).
    pub sha2: Option<String>,
    pub ssl: Option<SslRequire>,
    pub max_user_connections: u32,
    pub password_expired: bool,
    pub locked: bool,
    pub failed_login_attempts: u32,
    /// Days; -1 = UNBOUNDED; 0 = no lock.
    pub password_lock_time: i32,
}

impl AccountLogin {
    /// Applies the options of a CREATE/ALTER USER.
    pub fn apply(&mut self, o: &AccountOptions) {
        if let Some(r) = o.require {
            self.ssl = (r != SslRequire::None).then_some(r);
        }
        if let Some(n) = o.max_user_connections {
            self.max_user_connections = n;
        }
        if o.expire_now {
            self.password_expired = true;
        }
        if let Some(l) = o.account_locked {
            self.locked = l;
        }
        if let Some(n) = o.failed_login_attempts {
            self.failed_login_attempts = n;
        }
        if let Some(t) = o.password_lock_time {
            self.password_lock_time = match t {
                LockTime::Unbounded => -1,
                LockTime::Days(d) => d as i32,
            };
        }
    }

    /// The `User_attributes` JSON (empty when there is nothing to say).
    pub fn user_attributes(&self) -> String {
        if self.failed_login_attempts == 0 && self.password_lock_time == 0 {
            return String::new();
        }
        format!(
            "{{\"Password_locking\": {{\"failed_login_attempts\": {}, \"password_lock_time_days\": {}}}}}",
            self.failed_login_attempts, self.password_lock_time
        )
    }

    /// Reads [`Self::user_attributes`] back (unknown keys are ignored).
    pub fn parse_user_attributes(&mut self, s: &str) -> Result<(), String> {
        if s.trim().is_empty() {
            return Ok(());
        }
        let v: serde_json::Value =
            serde_json::from_str(s).map_err(|e| format!("User_attributes is not JSON: {e}"))?;
        if let Some(p) = v.get("Password_locking") {
            let get = |k: &str| p.get(k).and_then(serde_json::Value::as_i64).unwrap_or(0);
            self.failed_login_attempts = get("failed_login_attempts").clamp(0, 32767) as u32;
            self.password_lock_time = get("password_lock_time_days").clamp(-1, 32767) as i32;
        }
        Ok(())
    }
}

/// `(user, host pattern)`.
type AccountKey = (String, String);

/// Consecutive failed logins and, once locked, since when; per account.
#[derive(Debug, Default)]
pub struct FailedLogins {
    m: Mutex<HashMap<AccountKey, (u32, Option<Instant>)>>,
}

/// A temporarily locked account: how long for and what is left.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Blocked {
    /// Days (-1 = unbounded).
    pub days: i32,
    /// Whole days remaining, rounded up (unbounded: -1).
    pub remaining: i64,
}

impl FailedLogins {
    /// Is the account locked now? (An expired lock is lifted.)
    pub fn blocked(&self, key: &(String, String), a: &AccountLogin) -> Option<Blocked> {
        let mut m = self.m.lock();
        let (_, since) = m.get(key)?;
        let since = (*since)?;
        if a.password_lock_time < 0 {
            return Some(Blocked {
                days: -1,
                remaining: -1,
            });
        }
        let span = Duration::from_secs(a.password_lock_time as u64 * 86_400);
        let gone = since.elapsed();
        if gone >= span {
            m.remove(key);
            return None;
        }
        let left = (span - gone).as_secs().div_ceil(86_400) as i64;
        Some(Blocked {
            days: a.password_lock_time,
            remaining: left,
        })
    }

    /// A wrong password: counts it and returns the new lock if this one
    /// crossed the limit.
    pub fn failed(&self, key: &(String, String), a: &AccountLogin) -> Option<Blocked> {
        if a.failed_login_attempts == 0 || a.password_lock_time == 0 {
            return None;
        }
        let mut m = self.m.lock();
        let e = m.entry(key.clone()).or_insert((0, None));
        e.0 += 1;
        if e.0 >= a.failed_login_attempts {
            e.0 = 0;
            e.1 = Some(Instant::now());
            return Some(Blocked {
                days: a.password_lock_time,
                remaining: i64::from(a.password_lock_time),
            });
        }
        None
    }

    pub fn reset(&self, key: &(String, String)) {
        self.m.lock().remove(key);
    }

    pub fn clear(&self) {
        self.m.lock().clear();
    }
}

/// Error 3955 for a temporarily locked account.
pub fn blocked_message(user: &str, host: &str, b: Blocked, attempts: u32) -> String {
    let days = if b.days < 0 {
        "unlimited".to_string()
    } else {
        b.days.to_string()
    };
    let left = if b.remaining < 0 {
        "unlimited".to_string()
    } else {
        b.remaining.to_string()
    };
    format!(
        "Access denied for user '{user}'@'{host}'. Account is blocked for {days} day(s) \
         ({left} day(s) remaining) due to {attempts} consecutive failed logins."
    )
}

/// `max_connect_errors` bookkeeping per client IP.
#[derive(Debug, Default)]
pub struct HostCache {
    errors: Mutex<HashMap<IpAddr, u64>>,
    /// Count loopback connections too (tests; MySQL never does).
    pub include_loopback: AtomicBool,
}

impl HostCache {
    fn key(&self, from: ClientHost) -> Option<IpAddr> {
        match from {
            ClientHost::Socket => None,
            ClientHost::Ip(ip) => {
                let ip = match ip {
                    IpAddr::V6(v6) => v6.to_ipv4_mapped().map(IpAddr::V4).unwrap_or(ip),
                    v4 => v4,
                };
                (!ip.is_loopback() || self.include_loopback.load(Ordering::Relaxed)).then_some(ip)
            }
        }
    }
    /// Whether `from` is blocked at `max` errors.
    pub fn is_blocked(&self, from: ClientHost, max: u64) -> bool {
        self.key(from)
            .and_then(|ip| self.errors.lock().get(&ip).copied())
            .is_some_and(|n| n >= max)
    }
    pub fn error(&self, from: ClientHost) {
        if let Some(ip) = self.key(from) {
            *self.errors.lock().entry(ip).or_insert(0) += 1;
        }
    }
    pub fn success(&self, from: ClientHost) {
        if let Some(ip) = self.key(from) {
            self.errors.lock().remove(&ip);
        }
    }
    /// FLUSH HOSTS.
    pub fn flush(&self) {
        self.errors.lock().clear();
    }
}

/// Open connections per account, for `max_user_connections`.
#[derive(Debug, Default)]
pub struct UserConnections {
    m: Mutex<HashMap<(String, String), u32>>,
}

/// Held by a connection for its lifetime; dropping it gives the slot back.
#[derive(Debug)]
pub struct UserConnGuard {
    owner: Arc<UserConnections>,
    key: (String, String),
}

impl Drop for UserConnGuard {
    fn drop(&mut self) {
        let mut m = self.owner.m.lock();
        if let Some(n) = m.get_mut(&self.key) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                m.remove(&self.key);
            }
        }
    }
}

/// Why a connection was refused a slot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConnLimit {
    /// The account's own limit: 1226.
    Account(u32),
    /// The global `max_user_connections`: 1203.
    Global,
}

impl UserConnections {
    /// Takes a slot for `key` unless the account's limit (`own`, 0 = use
    /// the global one) or the global `max_user_connections` is reached.
    pub fn acquire(
        self: &Arc<Self>,
        key: &(String, String),
        own: u32,
        global: u32,
    ) -> Result<UserConnGuard, ConnLimit> {
        let mut m = self.m.lock();
        let n = m.get(key).copied().unwrap_or(0);
        if own > 0 {
            if n >= own {
                return Err(ConnLimit::Account(own));
            }
        } else if global > 0 && n >= global {
            return Err(ConnLimit::Global);
        }
        m.insert(key.clone(), n + 1);
        Ok(UserConnGuard {
            owner: self.clone(),
            key: key.clone(),
        })
    }
}

/// The in-memory login state shared by every clone of an account table.
#[derive(Debug, Default)]
pub struct LoginRegistry {
    pub failed: FailedLogins,
    pub hosts: HostCache,
    pub conns: Arc<UserConnections>,
    pub sha2_cache: crate::sha2_password::Sha2Cache,
    /// `default_authentication_plugin` is mysql_native_password.
    pub default_native: AtomicBool,
}

impl LoginRegistry {
    pub fn default_plugin(&self) -> Plugin {
        if self.default_native.load(Ordering::Relaxed) {
            Plugin::Native
        } else {
            Plugin::CachingSha2
        }
    }
}

/// What the server set up at start for authentication: TLS and the RSA
/// pair of caching_sha2_password.
#[derive(Debug, Default)]
pub struct AuthContext {
    pub tls: Option<crate::tls::TlsContext>,
    pub rsa: Option<crate::sha2_password::RsaKeys>,
}

impl AuthContext {
    /// From the configuration (`ssl_*`, `tls_version`,
    /// `auto_generate_certs`, `caching_sha2_password_auto_generate_rsa_keys`),
    /// generating what is missing in the data directory. A TLS or key
    /// setup that is asked for but fails is an error (the server does not
    /// start), as a wrong `ssl_cert` is in MySQL.
    pub fn from_config(cfg: &quire_config::Config) -> Result<AuthContext, String> {
        let files = crate::tls::resolve_files(
            &cfg.datadir,
            cfg.ssl_ca.as_deref(),
            cfg.ssl_cert.as_deref(),
            cfg.ssl_key.as_deref(),
            cfg.auto_generate_certs,
        )?;
        let tls = match files {
            Some(f) => crate::tls::TlsContext::load(&f, &cfg.tls_version)?,
            None => None,
        };
        let rsa = crate::sha2_password::RsaKeys::load_or_generate(
            &cfg.datadir,
            cfg.caching_sha2_password_auto_generate_rsa_keys,
        )?;
        Ok(AuthContext { tls, rsa })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;

    #[test]
    fn attributes_round_trip() {
        let mut a = AccountLogin::default();
        assert_eq!(a.user_attributes(), "");
        a.apply(&AccountOptions {
            failed_login_attempts: Some(3),
            password_lock_time: Some(LockTime::Unbounded),
            require: Some(SslRequire::X509),
            ..Default::default()
        });
        let s = a.user_attributes();
        let mut b = AccountLogin::default();
        b.parse_user_attributes(&s).unwrap();
        assert_eq!(b.failed_login_attempts, 3);
        assert_eq!(b.password_lock_time, -1);
        assert!(b.parse_user_attributes("{not json").is_err());
        a.apply(&AccountOptions {
            require: Some(SslRequire::None),
            ..Default::default()
        });
        assert_eq!(a.ssl, None);
    }

    #[test]
    fn failed_logins_lock_after_n() {
        let f = FailedLogins::default();
        let k = ("u".to_string(), "%".to_string());
        let a = AccountLogin {
            failed_login_attempts: 2,
            password_lock_time: 1,
            ..Default::default()
        };
        assert_eq!(f.failed(&k, &a), None);
        assert!(f.blocked(&k, &a).is_none());
        let b = f.failed(&k, &a).unwrap();
        assert_eq!(b.days, 1);
        assert_eq!(f.blocked(&k, &a).unwrap().remaining, 1);
        assert_eq!(
            blocked_message("u", "h", b, 2),
            "Access denied for user 'u'@'h'. Account is blocked for 1 day(s) (1 day(s) remaining) due to 2 consecutive failed logins."
        );
        f.reset(&k);
        assert!(f.blocked(&k, &a).is_none());
        let off = AccountLogin::default();
        for _ in 0..10 {
            assert_eq!(f.failed(&k, &off), None);
        }
    }

    #[test]
    fn host_cache_blocks_and_flushes() {
        let h = HostCache::default();
        let remote = ClientHost::Ip(IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)));
        let lo = ClientHost::Ip(IpAddr::V4(Ipv4Addr::LOCALHOST));
        for _ in 0..3 {
            h.error(remote);
            h.error(lo);
        }
        assert!(h.is_blocked(remote, 3));
        assert!(!h.is_blocked(remote, 4));
        assert!(!h.is_blocked(lo, 1), "loopback is never blocked");
        h.flush();
        assert!(!h.is_blocked(remote, 1));
        h.error(remote);
        h.success(remote);
        assert!(!h.is_blocked(remote, 1));
    }

    #[test]
    fn user_connection_limits() {
        let c = Arc::new(UserConnections::default());
        let k = ("u".to_string(), "%".to_string());
        let g1 = c.acquire(&k, 2, 0).unwrap();
        let _g2 = c.acquire(&k, 2, 0).unwrap();
        assert_eq!(c.acquire(&k, 2, 0).unwrap_err(), ConnLimit::Account(2));
        drop(g1);
        let _g3 = c.acquire(&k, 2, 0).unwrap();
        assert_eq!(c.acquire(&k, 0, 2).unwrap_err(), ConnLimit::Global);
        assert!(c.acquire(&k, 0, 0).is_ok());
    }
}
