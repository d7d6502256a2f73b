//! # One connection on the caller's thread
//!
//! [`serve`](crate::serve) owns its sockets: it accepts, spawns a thread per
//! connection and catches a panic in it. A harness that wants to drive the
//! connection code itself (the `login` fuzz target) needs the opposite: to
//! hand over one socket it made (a loopback TCP pair, a `UnixStream::pair`),
//! run the real connection phase and command loop on a thread of its own
//! choosing, and see a panic or a hang as what they are. [`DirectServer`]
//! is that: the same start-up as the listener (TLS certificates and RSA
//! keys from the data directory, the default plugin, the status source)
//! and the same [`conn::run`] per connection, minus the accept loop,
//! `max_connections` and the panic guard.
//!
//! The connection id comes from the listener's counter, and the status
//! counters (`Connections`, `Threads_connected`, `Aborted_connects`, ...)
//! move as they would for an accepted connection.

use std::net::TcpStream;
use std::os::unix::net::UnixStream;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use quire_engine::Engine;

use crate::auth::{Accounts, ClientHost};
use crate::conn::{self, ConnParams};
use crate::error::ServerError;
use crate::login::AuthContext;
use crate::server::{next_connection_id, ServerConfig};
use crate::status::{self, counters};
use crate::stream::Stream;

/// The parts of a server one connection needs, without a listener.
#[derive(Debug)]
pub struct DirectServer {
    engine: Engine,
    accounts: Accounts,
    auth: Arc<AuthContext>,
    max_allowed_packet: usize,
    wait_timeout: Option<Duration>,
    shutdown: Arc<AtomicBool>,
}

impl DirectServer {
    /// Sets up as [`serve_with_accounts`](crate::serve_with_accounts)
    /// does (certificates and keys in the engine's data directory are
    /// generated when missing). `cfg.bind_address`, `port`, `socket`,
    /// `max_connections` and `thread_stack` are not used.
    pub fn new(
        engine: Engine,
        accounts: Accounts,
        cfg: &ServerConfig,
    ) -> Result<DirectServer, ServerError> {
        status::mark_start();
        quire_sql::set_status_source(status::server_status);
        let engine_cfg = engine.config();
        let auth = Arc::new(AuthContext::from_config(&engine_cfg).map_err(ServerError::Auth)?);
        accounts.set_default_plugin_native(engine_cfg.default_authentication_plugin_native);
        Ok(DirectServer {
            engine,
            accounts,
            auth,
            max_allowed_packet: usize::try_from(cfg.max_allowed_packet).unwrap_or(usize::MAX),
            wait_timeout: (cfg.wait_timeout_s > 0).then(|| Duration::from_secs(cfg.wait_timeout_s)),
            shutdown: Arc::new(AtomicBool::new(false)),
        })
    }

    /// Whether TLS is on (`CLIENT_SSL` in the handshake).
    pub fn has_tls(&self) -> bool {
        self.auth.tls.is_some()
    }

    /// Whether caching_sha2_password's RSA key pair is loaded.
    pub fn has_rsa(&self) -> bool {
        self.auth.rsa.is_some()
    }

    /// Runs a TCP connection to its end on this thread; the client's
    /// address is the peer address.
    pub fn serve_tcp(&self, s: TcpStream) {
        let _ = s.set_nodelay(true);
        let (from, host) = match s.peer_addr() {
            Ok(a) => (ClientHost::Ip(a.ip()), a.to_string()),
            // A peer gone before we asked: the connection will see EOF.
            Err(_) => (
                ClientHost::Ip(std::net::Ipv4Addr::LOCALHOST.into()),
                "127.0.0.1".to_string(),
            ),
        };
        self.serve(Stream::Tcp(s), from, host);
    }

    /// Runs a Unix-socket connection (a secure transport, from
    /// `localhost`) to its end on this thread.
    pub fn serve_unix(&self, s: UnixStream) {
        self.serve(Stream::Unix(s), ClientHost::Socket, "localhost".to_string());
    }

    fn serve(&self, stream: Stream, from: ClientHost, host: String) {
        let c = counters();
        status::add(&c.connections, 1);
        status::connected();
        let params = ConnParams {
            id: next_connection_id(),
            engine: self.engine.clone(),
            accounts: self.accounts.clone(),
            from,
            max_allowed_packet: self.max_allowed_packet,
            wait_timeout: self.wait_timeout,
            host,
            extra_slot: false,
            shutdown: self.shutdown.clone(),
            auth: self.auth.clone(),
        };
        conn::run(stream, params);
        status::disconnected();
    }
}
