//! # The listener: accepting, limiting, shutting down
//!
//! ```text
//!   serve(engine, cfg, shutdown)
//!     bind TCP (bind_address:port) [+ Unix socket]
//!     loop until shutdown:
//!       accept (non-blocking, 5 ms nap when idle)
//!         limits as of now (SET GLOBAL max_connections/max_allowed_packet
//!           apply to new connections, sessions.rs)
//!         active >= max_connections + 1 ?  -> ERR 1040, close
//!         active == max_connections ? -> the extra slot: after auth only
//!           CONNECTION_ADMIN/SUPER stays (MySQL's rule), others ERR 1040
//!         spawn "quire-conn-<id>" thread (thread_stack bytes) -> conn::run
//!     shutdown: stop accepting, shut every live socket down (blocked reads
//!               see EOF, sessions roll back), wait for the threads
//!               (up to 30 s), remove the socket file, return
//! ```
//!
//! One OS thread per connection keeps the code simple and the hot path
//! short (a blocking read, the statement, one write); a few hundred
//! connections (sysbench's 256 threads) are a few hundred mostly idle
//! threads with `thread_stack` (default 8 MiB) of reserved, not committed,
//! stack each.

use std::collections::HashMap;
use std::io;
use std::net::{SocketAddr, TcpListener};
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use quire_engine::Engine;

use crate::auth::{accounts, Accounts, ClientHost};
use crate::conn::{self, ConnParams};
use crate::error::ServerError;
use crate::sessions::Limits;
use crate::status::{self, counters};
use crate::stream::Stream;

/// Listener and connection settings (MySQL variable names and defaults).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerConfig {
    /// `bind_address` (default `127.0.0.1`; `0.0.0.0` or `::` for all).
    pub bind_address: String,
    /// `port` (default 3306).
    pub port: u16,
    /// `socket`: a Unix socket path to listen on as well.
    pub socket: Option<PathBuf>,
    /// `max_connections` (default 151).
    pub max_connections: u32,
    /// `max_allowed_packet` in bytes (default 64 MiB).
    pub max_allowed_packet: u64,
    /// `wait_timeout` in seconds (default 28800; 0 = never).
    pub wait_timeout_s: u64,
    /// `thread_stack`: stack size of each connection thread in bytes
    /// (default 8 MiB, see `sessions.rs`; at least 128 KiB).
    pub thread_stack: usize,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            bind_address: "127.0.0.1".to_string(),
            port: 3306,
            socket: None,
            max_connections: 151,
            max_allowed_packet: 64 << 20,
            wait_timeout_s: 28800,
            thread_stack: crate::sessions::DEFAULT_THREAD_STACK,
        }
    }
}

/// Binds `cfg.bind_address:cfg.port` and serves until `shutdown` is set,
/// with the accounts of the engine's grant tables (`mysql.user`).
pub fn serve(
    engine: Engine,
    cfg: ServerConfig,
    shutdown: Arc<AtomicBool>,
) -> Result<(), ServerError> {
    let addr = if cfg.bind_address.contains(':') && !cfg.bind_address.starts_with('[') {
        format!("[{}]:{}", cfg.bind_address, cfg.port)
    } else {
        format!("{}:{}", cfg.bind_address, cfg.port)
    };
    let listener = TcpListener::bind(&addr).map_err(|source| ServerError::Bind { addr, source })?;
    // The server's accounts live in the data directory's grant tables.
    let accounts = Accounts::persistent(&engine).map_err(ServerError::GrantTables)?;
    serve_with_accounts(listener, engine, cfg, accounts, shutdown)
}

/// Serves on an already bound listener (tests bind port 0), with the
/// process-wide [`accounts()`]; `cfg.bind_address`/`port` are ignored.
pub fn serve_on(
    listener: TcpListener,
    engine: Engine,
    cfg: ServerConfig,
    shutdown: Arc<AtomicBool>,
) -> Result<(), ServerError> {
    serve_with_accounts(listener, engine, cfg, accounts().clone(), shutdown)
}

/// [`serve_on`] with an explicit account table.
pub fn serve_with_accounts(
    listener: TcpListener,
    engine: Engine,
    cfg: ServerConfig,
    accounts: Accounts,
    shutdown: Arc<AtomicBool>,
) -> Result<(), ServerError> {
    status::mark_start();
    quire_sql::set_status_source(status::server_status);
    // TLS certificates and caching_sha2_password's RSA keys (generated in
    // the data directory on first start) and the default plugin.
    let engine_cfg = engine.config();
    let auth =
        Arc::new(crate::login::AuthContext::from_config(&engine_cfg).map_err(ServerError::Auth)?);
    accounts.set_default_plugin_native(engine_cfg.default_authentication_plugin_native);
    // std binds with a backlog of 128; sysbench opens hundreds of
    // connections at once. Listening again on a listening socket only
    // changes its backlog (Linux), so raise it to what MySQL uses
    // (back_log = 80 + max_connections/5, at least 1024 here).
    {
        use std::os::fd::AsRawFd;
        let backlog = (80 + cfg.max_connections / 5).max(1024) as libc::c_int;
        // SAFETY: listen(2) on a socket we own; failure leaves the old
        // backlog, which still works.
        unsafe {
            libc::listen(listener.as_raw_fd(), backlog);
        }
    }
    listener.set_nonblocking(true)?;
    let unix = match &cfg.socket {
        Some(path) => Some(bind_unix(path)?),
        None => None,
    };
    let limits = Limits::new(
        &engine,
        cfg.max_connections,
        usize::try_from(cfg.max_allowed_packet).unwrap_or(usize::MAX),
    );
    let server = Server {
        engine,
        accounts,
        limits,
        wait_timeout: (cfg.wait_timeout_s > 0).then(|| Duration::from_secs(cfg.wait_timeout_s)),
        thread_stack: cfg.thread_stack.max(crate::sessions::MIN_THREAD_STACK),
        shutdown: shutdown.clone(),
        auth,
        active: Arc::new(AtomicU32::new(0)),
        live: Arc::new(Mutex::new(HashMap::new())),
    };
    // The replication channel (started when a source is configured).
    let channel = crate::replica::open(&server.engine, cfg.port).map_err(ServerError::Replica)?;
    let mut threads: Vec<JoinHandle<()>> = Vec::new();
    while !shutdown.load(Ordering::Relaxed) {
        let mut accepted = false;
        match listener.accept() {
            Ok((s, peer)) => {
                accepted = true;
                let _ = s.set_nodelay(true);
                server.start(
                    Stream::Tcp(s),
                    client_host(peer),
                    peer.to_string(),
                    &mut threads,
                );
            }
            Err(e) => accept_error(e),
        }
        if let Some(u) = &unix {
            match u.accept() {
                Ok((s, _)) => {
                    accepted = true;
                    server.start(
                        Stream::Unix(s),
                        ClientHost::Socket,
                        "localhost".to_string(),
                        &mut threads,
                    );
                }
                Err(e) => accept_error(e),
            }
        }
        if !accepted {
            threads.retain(|t| !t.is_finished());
            std::thread::sleep(Duration::from_millis(5));
        }
    }
    drop(listener);
    crate::replica::close(&channel);
    // Wake every connection thread: reads see EOF, the loop ends, the
    // session rolls back.
    for s in server.live.lock().values() {
        s.shutdown();
    }
    let deadline = Instant::now() + Duration::from_secs(30);
    while threads.iter().any(|t| !t.is_finished()) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
        for s in server.live.lock().values() {
            s.shutdown();
        }
    }
    for t in threads {
        if t.is_finished() {
            let _ = t.join();
        }
    }
    if let (Some(_), Some(path)) = (unix, &cfg.socket) {
        let _ = std::fs::remove_file(path);
    }
    Ok(())
}

fn accept_error(e: io::Error) {
    match e.kind() {
        io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted => {}
        // Out of descriptors, a connection reset before accept, ...: log,
        // back off a little, keep serving.
        _ => {
            eprintln!("quire-server: accept failed: {e}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

fn client_host(peer: SocketAddr) -> ClientHost {
    ClientHost::Ip(peer.ip())
}

fn bind_unix(path: &Path) -> Result<UnixListener, ServerError> {
    use std::os::unix::fs::FileTypeExt;
    let err = |source| ServerError::Socket {
        path: path.display().to_string(),
        source,
    };
    // A socket file left by a killed server is removed; anything else at
    // that path is not touched.
    if let Ok(meta) = std::fs::symlink_metadata(path) {
        if meta.file_type().is_socket() {
            std::fs::remove_file(path).map_err(err)?;
        }
    }
    let l = UnixListener::bind(path).map_err(err)?;
    l.set_nonblocking(true).map_err(err)?;
    Ok(l)
}

struct Server {
    engine: Engine,
    accounts: Accounts,
    limits: Limits,
    wait_timeout: Option<Duration>,
    thread_stack: usize,
    /// The accept loop's stop flag (SHUTDOWN / COM_SHUTDOWN set it).
    shutdown: Arc<AtomicBool>,
    auth: Arc<crate::login::AuthContext>,
    active: Arc<AtomicU32>,
    /// A clone of every live connection's socket, to shut down on exit.
    live: Arc<Mutex<HashMap<u32, Stream>>>,
}

/// Connection ids, process-wide like MySQL's (never 0).
static NEXT_ID: AtomicU32 = AtomicU32::new(1);

/// The next connection id (shared with `direct.rs`).
pub(crate) fn next_connection_id() -> u32 {
    NEXT_ID.fetch_add(1, Ordering::Relaxed).max(1)
}

impl Server {
    fn start(
        &self,
        stream: Stream,
        from: ClientHost,
        host: String,
        threads: &mut Vec<JoinHandle<()>>,
    ) {
        let c = counters();
        status::add(&c.connections, 1);
        let (max_connections, max_allowed_packet) = self.limits.current(&self.engine);
        let Ok(extra_slot) = crate::sessions::admit(&self.active, max_connections) else {
            status::add(&c.connection_errors_max_connections, 1);
            conn::refuse_too_many(stream);
            return;
        };
        let id = next_connection_id();
        self.active.fetch_add(1, Ordering::Relaxed);
        status::connected();
        if let Ok(clone) = stream.try_clone() {
            self.live.lock().insert(id, clone);
        }
        let params = ConnParams {
            id,
            engine: self.engine.clone(),
            accounts: self.accounts.clone(),
            from,
            max_allowed_packet,
            wait_timeout: self.wait_timeout,
            host,
            extra_slot,
            shutdown: self.shutdown.clone(),
            auth: self.auth.clone(),
        };
        let active = self.active.clone();
        let live = self.live.clone();
        let spawned = std::thread::Builder::new()
            .name(format!("quire-conn-{id}"))
            .stack_size(self.thread_stack)
            .spawn(move || {
                if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    conn::run(stream, params)
                }))
                .is_err()
                {
                    eprintln!("quire-server: connection {id}: panic; connection closed");
                }
                live.lock().remove(&id);
                active.fetch_sub(1, Ordering::Relaxed);
                status::disconnected();
            });
        match spawned {
            Ok(t) => {
                status::add(&c.threads_created, 1);
                threads.push(t);
            }
            Err(e) => {
                eprintln!("quire-server: cannot create a thread: {e}");
                // The closure (and the stream in it) was dropped: the
                // client sees the connection close.
                self.live.lock().remove(&id);
                self.active.fetch_sub(1, Ordering::Relaxed);
                status::disconnected();
            }
        }
    }
}
