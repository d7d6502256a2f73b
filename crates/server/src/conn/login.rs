//! # The connection phase: TLS switch, plugins, account checks
//!
//! ```text
//!  host blocked (max_connect_errors)?          -> ERR 1129 (instead of the handshake)
//!  Handshake V10: CLIENT_SSL when TLS is set up, plugin = default_authentication_plugin
//!  <- 32-byte SSLRequest?  -> TLS handshake, then the response arrives inside TLS
//!  <- HandshakeResponse41
//!  require_secure_transport and plain TCP?     -> ERR 3159
//!  account (user, most specific host) ........ unknown -> ERR 1045
//!  temporarily locked (FAILED_LOGIN_ATTEMPTS)? -> ERR 3955
//!  client's plugin != account's?               -> AuthSwitchRequest (same nonce),
//!                                                 even for an account without password
//!  passwordless account and empty answer?      -> accepted
//!  mysql_native_password: token check
//!  caching_sha2_password: fast path / full path (sha2_password.rs)
//!  wrong password -> ERR 1045, or 3955 when this failure locks the account
//!  ACCOUNT LOCK -> 3118; REQUIRE SSL/X509 unmet -> 1045
//!  MAX_USER_CONNECTIONS -> 1226; global max_user_connections -> 1203
//!  PASSWORD EXPIRE: client without CAN_HANDLE_EXPIRED_PASSWORDS -> 1862,
//!                   else the session starts in sandbox mode
//!  OK
//! ```
//!
//! Handshake-level failures (I/O errors, timeouts, malformed packets,
//! 1043) count against the client's host for `max_connect_errors`; a
//! completed login resets its count. Wrong passwords do not count (MySQL
//! counts them elsewhere).

use std::io::BufReader;
use std::os::unix::net::UnixStream;

use quire_sql::SslRequire;

use super::Conn;
use crate::auth::{native_password_check, new_scramble, FoundAccount, SCRAMBLE_LEN};
use crate::codec::{cap, put_nul_str};
use crate::error::ProtocolError;
use crate::handshake::{parse_handshake_response, write_handshake_with};
use crate::login::{blocked_message, AuthContext, ConnLimit, Plugin};
use crate::sha2_password as sha2;
use crate::stream::Stream;

/// How a login attempt ended (when not by an I/O error).
enum Outcome {
    LoggedIn,
    /// Refused (wrong password, locked, ...): not a host error.
    Denied,
    /// The handshake itself was broken (1043): a host error.
    BadHandshake,
}

impl Conn {
    /// The whole connection phase; `Ok(true)` when the command phase may
    /// begin.
    pub(super) fn login(&mut self) -> Result<bool, ProtocolError> {
        let reg = self.p.accounts.registry().clone();
        let cfg = self.p.engine.config();
        if reg.hosts.is_blocked(self.p.from, cfg.max_connect_errors) {
            let host = match self.p.from {
                crate::auth::ClientHost::Ip(ip) => ip.to_string(),
                crate::auth::ClientHost::Socket => "localhost".to_string(),
            };
            self.w.seq = 0;
            self.send_err(
                1129,
                "HY000",
                &format!(
                    "Host '{host}' is blocked because of many connection errors; \
                     unblock with 'mysqladmin flush-hosts'"
                ),
            );
            self.flush()?;
            return Ok(false);
        }
        match self.login_steps(&cfg) {
            Ok(Outcome::LoggedIn) => {
                reg.hosts.success(self.p.from);
                Ok(true)
            }
            Ok(Outcome::Denied) => Ok(false),
            Ok(Outcome::BadHandshake) => {
                reg.hosts.error(self.p.from);
                Ok(false)
            }
            Err(e) => {
                reg.hosts.error(self.p.from);
                Err(e)
            }
        }
    }

    fn read_or_fail(&mut self, buf: &mut Vec<u8>) -> Result<(), ProtocolError> {
        if let Err(e) = self.r.read_packet(buf) {
            match e {
                ProtocolError::Malformed(_)
                | ProtocolError::OutOfOrder { .. }
                | ProtocolError::TooLarge => self.fail(&e),
                _ => {}
            }
            return Err(e);
        }
        Ok(())
    }

    /// Sends one packet in the exchange and sets up for the client's answer.
    fn exchange(&mut self, payload: &[u8]) -> Result<(), ProtocolError> {
        self.w.seq = self.r.seq;
        self.w.packet(payload);
        self.flush()?;
        self.r.seq = self.w.seq;
        Ok(())
    }

    fn deny(&mut self, code: u16, state: &str, msg: &str) -> Result<Outcome, ProtocolError> {
        self.w.seq = self.r.seq;
        self.send_err(code, state, msg);
        self.flush()?;
        Ok(Outcome::Denied)
    }

    fn bad_handshake(&mut self) -> Result<Outcome, ProtocolError> {
        self.w.seq = self.r.seq;
        self.send_err(1043, "08S01", "Bad handshake");
        self.flush()?;
        Ok(Outcome::BadHandshake)
    }

    fn access_denied(
        &mut self,
        user: &str,
        using_password: bool,
    ) -> Result<Outcome, ProtocolError> {
        let msg = format!(
            "Access denied for user '{user}'@'{}' (using password: {})",
            self.p.from.display(),
            if using_password { "YES" } else { "NO" }
        );
        self.deny(1045, "28000", &msg)
    }

    /// Replaces the socket by a TLS session over it.
    fn start_tls(&mut self, ctx: &crate::tls::TlsContext) -> Result<(), ProtocolError> {
        let (placeholder, _) = UnixStream::pair()?;
        let old = std::mem::replace(self.r.get_mut(), BufReader::new(Stream::Unix(placeholder)));
        let tls = ctx.accept(old)?;
        *self.r.get_mut() = BufReader::with_capacity(16 << 10, Stream::Tls(Box::new(tls)));
        Ok(())
    }

    fn login_steps(&mut self, cfg: &quire_config::Config) -> Result<Outcome, ProtocolError> {
        let auth: std::sync::Arc<AuthContext> = self.p.auth.clone();
        let reg = self.p.accounts.registry().clone();
        let scramble = new_scramble();
        let mut server_caps = cap::SERVER;
        if auth.tls.is_some() {
            server_caps |= cap::SSL;
        }
        let default_plugin = reg.default_plugin();
        write_handshake_with(
            self.w.begin(),
            self.p.id,
            &scramble,
            server_caps,
            default_plugin.name(),
        );
        self.w.finish();
        self.flush()?;
        self.r.seq = 1;
        let mut buf = Vec::new();
        self.read_or_fail(&mut buf)?;
        let client_caps = buf
            .get(..4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .unwrap_or(0);
        if client_caps & cap::SSL != 0 && buf.len() == 32 {
            let Some(tls) = auth.tls.as_ref() else {
                return self.bad_handshake();
            };
            self.start_tls(tls)?;
            self.read_or_fail(&mut buf)?;
        }
        let tls_on = self.stream().tls().is_some();
        let resp = match parse_handshake_response(&buf) {
            // CLIENT_SSL in a full response without the switch: the
            // client believes it is encrypted and is not.
            Ok(r) if r.capabilities & cap::SSL != 0 && !tls_on => return self.bad_handshake(),
            Ok(r) => r,
            Err(_) => return self.bad_handshake(),
        };
        self.caps = resp.capabilities & cap::SERVER;
        self.client_collation = resp.charset;
        self.multi_statements = self.caps & cap::MULTI_STATEMENTS != 0;
        if cfg.require_secure_transport && !self.stream().is_secure() {
            return self.deny(
                3159,
                "HY000",
                "Connections using insecure transport are prohibited while \
                 --require_secure_transport=ON.",
            );
        }
        let Some(acct) = self.p.accounts.find(&resp.user, self.p.from) else {
            let using = !(resp.auth_response.is_empty() || resp.auth_response == [0]);
            return self.access_denied(&resp.user, using);
        };
        let client_host = self.p.from.display();
        if let Some(b) = reg.failed.blocked(&acct.key, &acct.login) {
            let msg = blocked_message(
                &resp.user,
                &client_host,
                b,
                acct.login.failed_login_attempts,
            );
            return self.deny(3955, "HY000", &msg);
        }
        let (ok, using_password) = self.authenticate(&acct, &resp, &scramble)?;
        if !ok {
            if let Some(b) = reg.failed.failed(&acct.key, &acct.login) {
                let msg = blocked_message(
                    &resp.user,
                    &client_host,
                    b,
                    acct.login.failed_login_attempts,
                );
                return self.deny(3955, "HY000", &msg);
            }
            return self.access_denied(&resp.user, using_password);
        }
        reg.failed.reset(&acct.key);
        if acct.login.locked {
            let msg = format!(
                "Access denied for user '{}'@'{client_host}'. Account is locked.",
                resp.user
            );
            return self.deny(3118, "HY000", &msg);
        }
        let tls_state = self
            .stream()
            .tls()
            .map(|t| (t.version(), t.cipher(), t.has_peer_certificate()));
        let ssl_ok = match acct.login.ssl {
            None | Some(SslRequire::None) => true,
            Some(SslRequire::Ssl) => tls_state.is_some(),
            Some(SslRequire::X509) => tls_state.as_ref().is_some_and(|t| t.2),
        };
        if !ssl_ok {
            return self.access_denied(&resp.user, using_password);
        }
        match reg.conns.acquire(
            &acct.key,
            acct.login.max_user_connections,
            cfg.max_user_connections,
        ) {
            Ok(g) => self.user_conn = Some(g),
            Err(ConnLimit::Account(n)) => {
                let msg = format!(
                    "User '{}' has exceeded the 'max_user_connections' resource (current value: {n})",
                    resp.user
                );
                return self.deny(1226, "42000", &msg);
            }
            Err(ConnLimit::Global) => {
                let msg = format!(
                    "User {} already has more than 'max_user_connections' active connections",
                    resp.user
                );
                return self.deny(1203, "42000", &msg);
            }
        }
        if acct.login.password_expired && resp.capabilities & cap::CAN_HANDLE_EXPIRED_PASSWORDS == 0
        {
            return self.deny(
                1862,
                "HY000",
                "Your password has expired. To log in you must change it using a client \
                 that supports expired passwords.",
            );
        }
        if self.p.extra_slot
            && !crate::sessions::may_use_extra(&self.p.accounts, &acct.key.0, &acct.key.1)
        {
            crate::status::add(
                &crate::status::counters().connection_errors_max_connections,
                1,
            );
            return self.deny(1040, "08004", "Too many connections");
        }
        self.user = acct.key.0.clone();
        self.account_host = acct.key.1.clone();
        self.w.seq = self.r.seq;
        let mut session = self.new_session();
        session.set_password_expired(acct.login.password_expired);
        session.set_client_found_rows(self.caps & cap::FOUND_ROWS != 0);
        if let Some((version, cipher, _)) = &tls_state {
            session.set_tls(version, cipher);
        }
        if is_mariadb_binlog_reader(&resp.attrs) {
            session.set_reported_version(MARIADB_BINLOG_READER_VERSION);
        }
        if let Some(db) = &resp.database {
            if let Err(e) = session.use_db(db) {
                self.send_engine_err(&e);
                self.flush()?;
                self.session = Some(session);
                return Ok(Outcome::Denied);
            }
        }
        self.proc = crate::sessions::register(
            self.p.id,
            &self.user,
            &self.account_host,
            &self.p.host,
            &mut session,
            self.stream(),
            &self.p.shutdown,
        );
        self.session = Some(session);
        self.send_ok(0, 0, 0, "", false);
        self.flush()?;
        self.count_bytes();
        Ok(Outcome::LoggedIn)
    }

    fn stream(&self) -> &Stream {
        self.r.get_ref().get_ref()
    }

    /// Runs the account's plugin. Returns (accepted, "using password").
    fn authenticate(
        &mut self,
        acct: &FoundAccount,
        resp: &crate::handshake::HandshakeResponse,
        scramble: &[u8; SCRAMBLE_LEN],
    ) -> Result<(bool, bool), ProtocolError> {
        let first = &resp.auth_response;
        let empty = |t: &[u8]| t.is_empty() || t == [0];
        let want = acct.login.plugin;
        let client_plugin = if resp.plugin.is_empty() {
            crate::handshake::NATIVE_PLUGIN
        } else {
            resp.plugin.as_str()
        };
        let mut token = first.clone();
        // An empty answer in the account's own plugin: the client's
        // plugin is not the one the greeting's scramble was offered for
        // (libmariadb with --default-auth=mysql_native_password, a MariaDB
        // replica) and it waits for a switch to it, as MySQL sends.
        let restart = client_plugin == want.name()
            && empty(first)
            && !acct.passwordless()
            && resp.capabilities & cap::PLUGIN_AUTH != 0;
        if client_plugin != want.name() || restart {
            if resp.capabilities & cap::PLUGIN_AUTH == 0 {
                // A pre-plugin client cannot be switched; it can still
                // log in to an account without a password.
                let ok = acct.passwordless() && empty(first);
                return Ok((ok, !empty(first)));
            }
            // Switched even for an account without a password, as MySQL
            // does: a client whose answer came from another plugin (e.g.
            // libmariadb's fallback when loading caching_sha2_password.so
            // raced in another thread) keeps its own dialogue going and
            // would answer an OK with one more packet, which then
            // arrives out of order in the command phase.
            let mut p = vec![0xFE];
            put_nul_str(&mut p, want.name().as_bytes());
            p.extend_from_slice(scramble);
            p.push(0);
            self.exchange(&p)?;
            self.read_or_fail(&mut token)?;
        }
        let using = !empty(&token);
        if acct.passwordless() {
            return Ok((empty(&token), using));
        }
        let ok = match want {
            Plugin::Native => native_password_check(acct.stage2.as_ref(), scramble, &token),
            Plugin::CachingSha2 => self.sha2_auth(acct, &token, scramble)?,
        };
        Ok((ok, using))
    }

    /// caching_sha2_password after the client's scramble (see
    /// `sha2_password.rs` for the exchange).
    fn sha2_auth(
        &mut self,
        acct: &FoundAccount,
        token: &[u8],
        scramble: &[u8; SCRAMBLE_LEN],
    ) -> Result<bool, ProtocolError> {
        let Some(stored) = acct.login.sha2.as_deref() else {
            return Ok(false);
        };
        if token.is_empty() || token == [0] {
            return Ok(false);
        }
        let reg = self.p.accounts.registry().clone();
        let (user, host) = (&acct.key.0, &acct.key.1);
        if let Some(d) = reg.sha2_cache.get(user, host) {
            if sha2::check_scramble(&d, scramble, token) {
                self.exchange(&[0x01, sha2::FAST_AUTH_SUCCESS])?;
                return Ok(true);
            }
            // A cached digest that does not match: wrong password.
            return Ok(false);
        }
        self.exchange(&[0x01, sha2::PERFORM_FULL_AUTH])?;
        let mut answer = Vec::new();
        self.read_or_fail(&mut answer)?;
        let password = if self.stream().is_secure() {
            let mut pw = answer;
            if pw.last() == Some(&0) {
                pw.pop();
            }
            pw
        } else {
            let auth = self.p.auth.clone();
            let Some(keys) = auth.rsa.as_ref() else {
                // No keys: MySQL refuses the unencrypted exchange too.
                return Ok(false);
            };
            if answer == [sha2::REQUEST_PUBLIC_KEY] {
                let mut p = vec![0x01];
                p.extend_from_slice(keys.public_pem.as_bytes());
                self.exchange(&p)?;
                self.read_or_fail(&mut answer)?;
            }
            match keys.decrypt_password(&answer, scramble) {
                Some(pw) => pw,
                None => return Ok(false),
            }
        };
        if sha2::check_password(stored, &password) {
            reg.sha2_cache.put(user, host, sha2::fast_digest(&password));
            Ok(true)
        } else {
            Ok(false)
        }
    }
}

/// VERSION() for MariaDB's `mariadb-binlog --read-from-remote-server`,
/// which accepts only servers whose VERSION() starts with 3, 4, 5 or 10
/// and refuses `8.0.36-quire`. MariaDB's own servers lead their handshake
/// version with `5.5.5-` for old clients, a prefix MariaDB's client
/// library knows to strip; this is that convention, for this one client,
/// still naming quire and the MySQL version it follows.
const MARIADB_BINLOG_READER_VERSION: &str = "5.5.5-8.0.36-quire";

/// Whether the connect attributes say MariaDB's binlog reader (MySQL's
/// `mysqlbinlog` accepts 8.0 and gets the true version).
fn is_mariadb_binlog_reader(attrs: &[(String, String)]) -> bool {
    let get = |k: &str| attrs.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
    get("_client_name") == Some("libmariadb")
        && matches!(get("program_name"), Some("mysqlbinlog" | "mariadb-binlog"))
}
