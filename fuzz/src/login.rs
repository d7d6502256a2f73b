//! The `login` target: the whole connection phase of `quire-server`, from
//! the first byte of Handshake V10 to the command loop, against a client
//! whose every move the input chooses.
//!
//! ## The world (once per process)
//!
//! An engine on an in-memory `SimFs` whose data directory is a real
//! temporary directory only for the server's TLS certificates and
//! caching_sha2_password's RSA pair (generated there at start, read into
//! memory, and the directory removed again). A [`DirectServer`] with TLS on
//! and the RSA keys loaded runs each connection on a thread of its own; a
//! loopback TCP listener bound once hands it the server side of each TCP
//! connection, and `UnixStream::pair()` gives the Unix-socket transport
//! (a secure one: cleartext full authentication is allowed there).
//!
//! Accounts (see [`ACCOUNTS`]): mysql_native_password and
//! caching_sha2_password with passwords, both plugins without one,
//! `REQUIRE SSL`, `ACCOUNT LOCK`, `PASSWORD EXPIRE`, `FAILED_LOGIN_ATTEMPTS`
//! and a user that does not exist. The caching_sha2 cache of the account
//! a flow uses is made cold (the password set again) or warm (a clean
//! login first) or left as the previous inputs left it.
//!
//! ## One input
//!
//! The first byte picks byte soup (raw input bytes to the server, after
//! an optional greeting read and SSLRequest + nothing) or a *flow*: a
//! plausible client that answers the server correctly for the account —
//! SSLRequest and a rustls handshake that verifies the server's
//! certificate, HandshakeResponse41 with a chosen plugin and capability
//! set, AuthSwitchRequest, the fast path, the full path in cleartext
//! (TLS, Unix socket) or RSA (public key requested or known in advance),
//! then COM_PING/COM_QUERY/COM_QUIT — with at most one packet mutation
//! (bytes flipped, truncated, wrong sequence id, oversized or short
//! length header, garbage appended, an extra packet, closing instead) and
//! at most one raw mutation of the byte stream the client writes, TLS
//! records included (a flipped byte, garbage injected, the stream cut).
//! After a mutation the client stops, half-closes and reads until EOF.
//!
//! ## Invariants
//!
//! * no panic anywhere (libFuzzer's hook aborts on one in any thread);
//! * the server thread ends once the client has closed: [`HANG`] bounds
//!   every client read and the wait for the server thread — far above
//!   anything a working server needs (its own `connect_timeout` is 10 s),
//!   so only a server that stops answering and stops reading trips it;
//! * an unmutated flow gets the answer the account calls for (OK, or ERR
//!   1045/3118/1862/3955/1044/1049 as its options say) and the server
//!   speaks the protocol on the way: sequence ids in order, only the
//!   packets the exchange allows;
//! * every [`CHECK_EVERY`] inputs (and on the first) correct logins still
//!   succeed: caching_sha2 over TLS, over plain TCP with RSA (cold cache)
//!   and on the fast path, mysql_native_password over plain TCP.

use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex, OnceLock};
use std::time::Duration;

use quire_config::Config;
use quire_engine::Engine;
use quire_io::{FlushMethod, SimFs, Vfs};
use quire_server::codec::cap;
use quire_server::sha2_password::{self as sha2, RsaKeys};
use quire_server::{native_password_token, Accounts, DirectServer, ServerConfig};
use quire_sql::Session;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};

use crate::input::Input;

/// Bound on every client read and on the wait for the server thread.
pub const HANG: Duration = Duration::from_secs(30);
/// Correct logins are checked every this many inputs.
pub const CHECK_EVERY: u64 = 64;

/// Inputs run, flows that logged in, flows that got an ERR, inputs that
/// were mutated or byte soup.
pub static INPUTS: AtomicU64 = AtomicU64::new(0);
pub static LOGGED_IN: AtomicU64 = AtomicU64::new(0);
pub static REFUSED: AtomicU64 = AtomicU64::new(0);
pub static MUTATED: AtomicU64 = AtomicU64::new(0);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Plugin {
    Native,
    Sha2,
}

impl Plugin {
    fn name(self) -> &'static str {
        match self {
            Plugin::Native => quire_server::handshake::NATIVE_PLUGIN,
            Plugin::Sha2 => sha2::PLUGIN,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Plain,
    RequireSsl,
    Locked,
    Expired,
    FailedLock,
    /// Not created: every login is 1045.
    Missing,
}

struct Account {
    user: &'static str,
    password: &'static str,
    plugin: Plugin,
    kind: Kind,
}

/// The accounts a flow can log in as (all `'user'@'%'`).
const ACCOUNTS: &[Account] = &[
    Account {
        user: "nat",
        password: "natpw",
        plugin: Plugin::Native,
        kind: Kind::Plain,
    },
    Account {
        user: "sha",
        password: "shapw",
        plugin: Plugin::Sha2,
        kind: Kind::Plain,
    },
    Account {
        user: "shanone",
        password: "",
        plugin: Plugin::Sha2,
        kind: Kind::Plain,
    },
    Account {
        user: "natnone",
        password: "",
        plugin: Plugin::Native,
        kind: Kind::Plain,
    },
    Account {
        user: "ssl",
        password: "sslpw",
        plugin: Plugin::Sha2,
        kind: Kind::RequireSsl,
    },
    Account {
        user: "lock",
        password: "lockpw",
        plugin: Plugin::Sha2,
        kind: Kind::Locked,
    },
    Account {
        user: "natlock",
        password: "lockpw",
        plugin: Plugin::Native,
        kind: Kind::Locked,
    },
    Account {
        user: "exp",
        password: "exppw",
        plugin: Plugin::Sha2,
        kind: Kind::Expired,
    },
    Account {
        user: "flk",
        password: "flkpw",
        plugin: Plugin::Sha2,
        kind: Kind::FailedLock,
    },
    Account {
        user: "ghost",
        password: "ghostpw",
        plugin: Plugin::Sha2,
        kind: Kind::Missing,
    },
];

fn create_sql(a: &Account) -> Option<String> {
    let with = match (a.plugin, a.password.is_empty()) {
        (p, true) => format!("IDENTIFIED WITH {}", p.name()),
        (p, false) => format!("IDENTIFIED WITH {} BY '{}'", p.name(), a.password),
    };
    let opts = match a.kind {
        Kind::Plain => "",
        Kind::RequireSsl => " REQUIRE SSL",
        Kind::Locked => " ACCOUNT LOCK",
        Kind::Expired => " PASSWORD EXPIRE",
        Kind::FailedLock => " FAILED_LOGIN_ATTEMPTS 3 PASSWORD_LOCK_TIME 1",
        Kind::Missing => return None,
    };
    Some(format!("CREATE USER '{}'@'%' {with}{opts}", a.user))
}

struct World {
    server: Arc<DirectServer>,
    accounts: Accounts,
    listener: TcpListener,
    addr: SocketAddr,
    tls12: Arc<rustls::ClientConfig>,
    tls13: Arc<rustls::ClientConfig>,
    public_pem: String,
}

fn tls_config(
    ca: &[CertificateDer<'static>],
    v: &'static rustls::SupportedProtocolVersion,
) -> Arc<rustls::ClientConfig> {
    let mut roots = rustls::RootCertStore::empty();
    for c in ca {
        roots.add(c.clone()).expect("the generated ca.pem loads");
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    Arc::new(
        rustls::ClientConfig::builder_with_provider(provider)
            .with_protocol_versions(&[v])
            .expect("TLS version")
            .with_root_certificates(roots)
            .with_no_client_auth(),
    )
}

fn build_world() -> World {
    let dir = std::env::temp_dir().join(format!("quire-fuzz-login-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create the certificate directory");
    let cfg = Config {
        datadir: dir.clone(),
        innodb_buffer_pool_size: 8 << 20,
        innodb_redo_log_capacity: 8 << 20,
        innodb_flush_method: FlushMethod::Fsync,
        log_bin: false,
        ..Config::default()
    };
    let vfs: Arc<dyn Vfs> = Arc::new(SimFs::new(FlushMethod::Fsync));
    let (engine, _) = Engine::open(vfs, &cfg).expect("open engine on SimFs");
    let accounts = Accounts::new();
    let scfg = ServerConfig {
        // No wait_timeout: a logged-in connection ends when the client
        // closes (the invariant), not after a timer.
        wait_timeout_s: 0,
        ..ServerConfig::default()
    };
    let server = DirectServer::new(engine.clone(), accounts.clone(), &scfg)
        .expect("server set-up (TLS certificates, RSA keys)");
    assert!(server.has_tls() && server.has_rsa(), "TLS and RSA are on");
    let ca: Vec<CertificateDer<'static>> =
        CertificateDer::pem_file_iter(dir.join(quire_server::tls::CA_PEM))
            .expect("ca.pem")
            .collect::<Result<_, _>>()
            .expect("ca.pem parses");
    let public_pem = RsaKeys::load_or_generate(&dir, false)
        .expect("RSA keys load")
        .expect("RSA keys exist")
        .public_pem;
    let _ = std::fs::remove_dir_all(&dir);

    let mut s = Session::new(engine, "root");
    s.set_account_store(Arc::new(accounts.clone()));
    s.set_identity("localhost", "localhost");
    for a in ACCOUNTS {
        if let Some(sql) = create_sql(a) {
            s.execute(&sql)
                .unwrap_or_else(|e| panic!("fuzz set-up `{sql}` failed: {e:?}"));
        }
    }
    s.close();

    let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
    let addr = listener.local_addr().expect("listener address");
    World {
        server: Arc::new(server),
        accounts,
        listener,
        addr,
        tls12: tls_config(&ca, &rustls::version::TLS12),
        tls13: tls_config(&ca, &rustls::version::TLS13),
        public_pem,
    }
}

fn world() -> &'static Mutex<World> {
    static W: OnceLock<Mutex<World>> = OnceLock::new();
    W.get_or_init(|| Mutex::new(build_world()))
}

/// Sets the world up now (certificates, RSA keys, accounts), so that the
/// first input is not charged for it.
pub fn init() {
    let _ = world();
}

// ------------------------------------------------------------ transport

enum Sock {
    Tcp(TcpStream),
    Unix(UnixStream),
}

impl Sock {
    fn try_clone(&self) -> io::Result<Sock> {
        Ok(match self {
            Sock::Tcp(s) => Sock::Tcp(s.try_clone()?),
            Sock::Unix(s) => Sock::Unix(s.try_clone()?),
        })
    }
    fn shutdown(&self, how: Shutdown) {
        let _ = match self {
            Sock::Tcp(s) => s.shutdown(how),
            Sock::Unix(s) => s.shutdown(how),
        };
    }
    fn set_read_timeout(&self, d: Duration) {
        let _ = match self {
            Sock::Tcp(s) => s.set_read_timeout(Some(d)),
            Sock::Unix(s) => s.set_read_timeout(Some(d)),
        };
    }
}

impl Read for Sock {
    fn read(&mut self, b: &mut [u8]) -> io::Result<usize> {
        match self {
            Sock::Tcp(s) => s.read(b),
            Sock::Unix(s) => s.read(b),
        }
    }
}

impl Write for Sock {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        match self {
            Sock::Tcp(s) => s.write(b),
            Sock::Unix(s) => s.write(b),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A mutation of the raw byte stream the client writes.
#[derive(Debug, Clone)]
enum RawMut {
    Flip(u8),
    Inject(Vec<u8>),
    Cut,
}

/// The client's socket with the raw mutation applied at byte `at` of
/// everything written (TLS records included).
struct Wire {
    sock: Sock,
    written: usize,
    raw: Option<(usize, RawMut)>,
    fired: bool,
}

impl Read for Wire {
    fn read(&mut self, b: &mut [u8]) -> io::Result<usize> {
        // Once the stream is mutated the flow stops; nothing may block
        // waiting for an answer that a mangled request need not get (the
        // drain reads through the socket's clone instead).
        if self.fired {
            return Err(io::Error::other("mutated"));
        }
        self.sock.read(b)
    }
}

impl Write for Wire {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        if self.fired && matches!(self.raw, Some((_, RawMut::Cut))) {
            return Err(io::ErrorKind::BrokenPipe.into());
        }
        let start = self.written;
        let hit = match &self.raw {
            Some((at, _)) if !self.fired && *at >= start && *at < start + b.len() => *at - start,
            _ => {
                self.sock.write_all(b)?;
                self.written += b.len();
                return Ok(b.len());
            }
        };
        self.fired = true;
        let kind = self.raw.as_ref().map(|(_, k)| k.clone());
        match kind {
            Some(RawMut::Flip(mask)) => {
                let mut v = b.to_vec();
                v[hit] ^= mask.max(1);
                self.sock.write_all(&v)?;
            }
            Some(RawMut::Inject(junk)) => {
                self.sock.write_all(&b[..hit])?;
                self.sock.write_all(&junk)?;
                self.sock.write_all(&b[hit..])?;
            }
            Some(RawMut::Cut) | None => {
                self.sock.write_all(&b[..hit])?;
                self.sock.shutdown(Shutdown::Write);
                return Err(io::ErrorKind::BrokenPipe.into());
            }
        }
        self.written += b.len();
        Ok(b.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

enum Chan {
    Plain(Wire),
    Tls(Box<rustls::StreamOwned<rustls::ClientConnection, Wire>>),
    /// Only while switching.
    Gone,
}

impl Chan {
    fn wire(&self) -> Option<&Wire> {
        match self {
            Chan::Plain(w) => Some(w),
            Chan::Tls(t) => Some(&t.sock),
            Chan::Gone => None,
        }
    }
}

impl Read for Chan {
    fn read(&mut self, b: &mut [u8]) -> io::Result<usize> {
        match self {
            Chan::Plain(w) => w.read(b),
            Chan::Tls(t) => t.read(b),
            Chan::Gone => Err(io::ErrorKind::NotConnected.into()),
        }
    }
}

impl Write for Chan {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        match self {
            Chan::Plain(w) => w.write(b),
            Chan::Tls(t) => t.write(b),
            Chan::Gone => Err(io::ErrorKind::NotConnected.into()),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        match self {
            Chan::Plain(w) => w.flush(),
            Chan::Tls(t) => t.flush(),
            Chan::Gone => Err(io::ErrorKind::NotConnected.into()),
        }
    }
}

// ------------------------------------------------------------ the plan

/// A mutation of one packet the client sends.
#[derive(Debug, Clone)]
enum PktMut {
    Flip { pos: usize, mask: u8 },
    Truncate(usize),
    Seq(u8),
    LenHuge,
    LenShort(usize),
    Append(Vec<u8>),
    Extra(Vec<u8>),
    Close,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ClientPlugin {
    Native,
    Sha2,
    /// No plugin name (taken as mysql_native_password).
    Empty,
    /// One the server does not have.
    Other,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cache {
    Cold,
    Warm,
    AsIs,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum After {
    Quit,
    Ping,
    Query,
    Close,
}

#[derive(Debug, Clone)]
struct Plan {
    unix: bool,
    acct: usize,
    wrong_password: bool,
    tls: Option<bool>,
    /// Bytes sent instead of the TLS handshake after the SSLRequest.
    tls_junk: Option<Vec<u8>>,
    plugin: ClientPlugin,
    extra_caps: u32,
    /// Leaves out CLIENT_PLUGIN_AUTH (a pre-plugin client).
    no_plugin_auth: bool,
    db: Option<&'static str>,
    cache: Cache,
    known_key: bool,
    after: After,
    pkt_mut: Option<(usize, PktMut)>,
    raw_mut: Option<(usize, RawMut)>,
}

/// Optional client capabilities a flow may set.
const OPTIONAL_CAPS: [u32; 9] = [
    cap::CAN_HANDLE_EXPIRED_PASSWORDS,
    cap::PLUGIN_AUTH_LENENC_CLIENT_DATA,
    cap::CONNECT_ATTRS,
    cap::MULTI_STATEMENTS,
    cap::MULTI_RESULTS,
    cap::DEPRECATE_EOF,
    cap::FOUND_ROWS,
    cap::INTERACTIVE,
    cap::SESSION_TRACK,
];

fn plan(inp: &mut Input) -> Plan {
    let flags = inp.u8();
    let acct = inp.below(ACCOUNTS.len());
    let unix = flags & 1 != 0;
    let tls = match inp.below(3) {
        0 => None,
        1 => Some(false),
        _ => Some(true),
    };
    let plugin = match inp.below(8) {
        0..=2 => ClientPlugin::Sha2,
        3..=5 => ClientPlugin::Native,
        6 => ClientPlugin::Empty,
        _ => ClientPlugin::Other,
    };
    let mask = inp.u16();
    let mut extra_caps = 0;
    for (i, c) in OPTIONAL_CAPS.iter().enumerate() {
        if mask & (1 << i) != 0 {
            extra_caps |= c;
        }
    }
    let db = match inp.below(8) {
        0 => Some("nope"),
        1 => Some("mysql"),
        _ => None,
    };
    let cache = match inp.below(3) {
        0 => Cache::Cold,
        1 => Cache::Warm,
        _ => Cache::AsIs,
    };
    let after = match inp.below(4) {
        0 => After::Quit,
        1 => After::Ping,
        2 => After::Query,
        _ => After::Close,
    };
    let tls_junk = (tls.is_some() && inp.chance(1, 16)).then(|| inp.bytes(64).to_vec());
    let pkt_mut = if inp.chance(1, 3) {
        let at = inp.below(6);
        let m = match inp.below(8) {
            0 => PktMut::Flip {
                pos: inp.u8() as usize,
                mask: inp.u8(),
            },
            1 => PktMut::Truncate(inp.u8() as usize),
            2 => PktMut::Seq(inp.u8()),
            3 => PktMut::LenHuge,
            4 => PktMut::LenShort(inp.u8() as usize),
            5 => PktMut::Append(inp.bytes(32).to_vec()),
            6 => PktMut::Extra(inp.bytes(32).to_vec()),
            _ => PktMut::Close,
        };
        Some((at, m))
    } else {
        None
    };
    let raw_mut = if inp.chance(1, 4) {
        let at = inp.u16() as usize;
        let m = match inp.below(3) {
            0 => RawMut::Flip(inp.u8()),
            1 => RawMut::Inject(inp.bytes(48).to_vec()),
            _ => RawMut::Cut,
        };
        Some((at, m))
    } else {
        None
    };
    Plan {
        unix,
        acct,
        wrong_password: flags & 2 != 0,
        tls,
        tls_junk,
        plugin,
        extra_caps,
        no_plugin_auth: flags & 4 != 0 && flags & 8 != 0,
        db,
        cache,
        known_key: flags & 16 != 0,
        after,
        pkt_mut,
        raw_mut,
    }
}

// ------------------------------------------------------------ the client

/// Why a flow stopped early.
#[derive(Debug)]
enum Stop {
    /// A mutation was applied: from here on anything goes.
    Mutated,
    /// The connection broke or closed (a finding unless mutated).
    Io(io::Error),
    /// The server sent something the exchange does not allow.
    Protocol(String),
}

impl From<io::Error> for Stop {
    fn from(e: io::Error) -> Stop {
        Stop::Io(e)
    }
}

/// How the connection phase ended.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Outcome {
    Ok,
    Err(u16),
}

struct Client {
    chan: Chan,
    /// A clone of the socket, for the half-close.
    ctl: Sock,
    seq: u8,
    sent: usize,
    pkt_mut: Option<(usize, PktMut)>,
    mutated: bool,
}

impl Client {
    fn fired(&self) -> bool {
        self.mutated || self.chan.wire().is_some_and(|w| w.fired)
    }

    fn send(&mut self, payload: &[u8]) -> Result<(), Stop> {
        let idx = self.sent;
        self.sent += 1;
        let seq = self.seq;
        self.seq = self.seq.wrapping_add(1);
        let frame = |len: usize, seq: u8, body: &[u8]| -> Vec<u8> {
            let mut f = Vec::with_capacity(4 + body.len());
            f.extend_from_slice(&(len as u32).to_le_bytes()[..3]);
            f.push(seq);
            f.extend_from_slice(body);
            f
        };
        let mut bytes = frame(payload.len(), seq, payload);
        let m = match &self.pkt_mut {
            Some((at, m)) if *at == idx => Some(m.clone()),
            _ => None,
        };
        if let Some(m) = m {
            self.mutated = true;
            match m {
                PktMut::Flip { pos, mask } => {
                    let i = pos % bytes.len();
                    bytes[i] ^= mask.max(1);
                }
                PktMut::Truncate(n) => bytes.truncate(n % bytes.len()),
                PktMut::Seq(d) => bytes[3] = seq.wrapping_add(d.max(1)),
                PktMut::LenHuge => bytes[..3].copy_from_slice(&[0xFF, 0xFF, 0xFF]),
                PktMut::LenShort(n) => {
                    let len = n % payload.len().max(1);
                    bytes[..3].copy_from_slice(&(len as u32).to_le_bytes()[..3]);
                }
                PktMut::Append(junk) => bytes.extend_from_slice(&junk),
                PktMut::Extra(body) => bytes.extend(frame(body.len(), seq.wrapping_add(1), &body)),
                PktMut::Close => {
                    self.ctl.shutdown(Shutdown::Write);
                    return Err(Stop::Mutated);
                }
            }
        }
        self.chan.write_all(&bytes)?;
        self.chan.flush()?;
        if self.fired() {
            return Err(Stop::Mutated);
        }
        Ok(())
    }

    fn recv(&mut self) -> Result<Vec<u8>, Stop> {
        let mut h = [0u8; 4];
        self.chan.read_exact(&mut h)?;
        let len = u32::from_le_bytes([h[0], h[1], h[2], 0]) as usize;
        if h[3] != self.seq {
            return Err(Stop::Protocol(format!(
                "server packet with sequence id {} where {} was due",
                h[3], self.seq
            )));
        }
        self.seq = h[3].wrapping_add(1);
        let mut p = vec![0u8; len];
        self.chan.read_exact(&mut p)?;
        Ok(p)
    }

    /// SSLRequest, then the TLS handshake (or junk instead of it).
    fn start_tls(
        &mut self,
        caps: u32,
        config: Arc<rustls::ClientConfig>,
        junk: Option<&[u8]>,
    ) -> Result<(), Stop> {
        let mut req = Vec::with_capacity(32);
        req.extend_from_slice(&(caps | cap::SSL).to_le_bytes());
        req.extend_from_slice(&(16u32 << 20).to_le_bytes());
        req.push(0xFF);
        req.extend_from_slice(&[0; 23]);
        self.send(&req)?;
        if let Some(j) = junk {
            self.mutated = true;
            self.chan.write_all(j)?;
            self.ctl.shutdown(Shutdown::Write);
            return Err(Stop::Mutated);
        }
        let Chan::Plain(wire) = std::mem::replace(&mut self.chan, Chan::Gone) else {
            return Err(Stop::Protocol("TLS started twice".into()));
        };
        let name = ServerName::try_from("localhost").map_err(|e| Stop::Protocol(e.to_string()))?;
        let conn = rustls::ClientConnection::new(config, name)
            .map_err(|e| Stop::Protocol(e.to_string()))?;
        let mut tls = rustls::StreamOwned::new(conn, wire);
        let done = loop {
            if !tls.conn.is_handshaking() {
                break Ok(());
            }
            if let Err(e) = tls.conn.complete_io(&mut tls.sock) {
                break Err(e);
            }
        };
        let fired = tls.sock.fired;
        self.chan = Chan::Tls(Box::new(tls));
        match done {
            Ok(()) if fired => Err(Stop::Mutated),
            Ok(()) => Ok(()),
            Err(_) if fired => Err(Stop::Mutated),
            Err(e) => Err(Stop::Io(e)),
        }
    }

    /// Half-closes and reads until the server closes.
    fn drain(&mut self) -> Result<(), String> {
        self.ctl.shutdown(Shutdown::Write);
        let mut buf = [0u8; 4096];
        loop {
            match self.ctl.read(&mut buf) {
                Ok(0) => return Ok(()),
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                    ) =>
                {
                    return Err(format!(
                        "server neither answered nor closed within {HANG:?}"
                    ));
                }
                // Reset by the server: closed.
                Err(_) => return Ok(()),
            }
        }
    }
}

/// What the client learns from Handshake V10.
struct Greeting {
    caps: u32,
    nonce: Vec<u8>,
}

fn parse_greeting(p: &[u8]) -> Result<Greeting, String> {
    let bad = || format!("malformed Handshake V10: {p:02x?}");
    if p.first() != Some(&10) {
        return Err(bad());
    }
    let ver_end = p.iter().position(|&b| b == 0).ok_or_else(bad)?;
    let mut i = ver_end + 1 + 4;
    let part1 = p.get(i..i + 8).ok_or_else(bad)?.to_vec();
    i += 9;
    let lo = p.get(i..i + 2).ok_or_else(bad)?;
    let caps_lo = u16::from_le_bytes([lo[0], lo[1]]) as u32;
    i += 2 + 1 + 2;
    let hi = p.get(i..i + 2).ok_or_else(bad)?;
    let caps = caps_lo | (u16::from_le_bytes([hi[0], hi[1]]) as u32) << 16;
    i += 2;
    let auth_len = *p.get(i).ok_or_else(bad)? as usize;
    i += 1 + 10;
    let n2 = auth_len.saturating_sub(8).max(13);
    let part2 = p.get(i..i + n2).ok_or_else(bad)?;
    let mut nonce = part1;
    nonce.extend_from_slice(&part2[..12]);
    Ok(Greeting { caps, nonce })
}

fn token(plugin: Plugin, password: &str, nonce: &[u8]) -> Vec<u8> {
    match plugin {
        Plugin::Native => native_password_token(password.as_bytes(), nonce),
        Plugin::Sha2 => sha2::scramble(password.as_bytes(), nonce),
    }
}

fn put_lenenc(out: &mut Vec<u8>, n: usize) {
    if n < 251 {
        out.push(n as u8);
    } else {
        out.push(0xFC);
        out.extend_from_slice(&(n as u16).to_le_bytes());
    }
}

/// The expected end of an unmutated flow.
fn expected(p: &Plan, tls_on: bool) -> Vec<Outcome> {
    let a = &ACCOUNTS[p.acct];
    let e = Outcome::Err;
    if a.kind == Kind::Missing {
        return vec![e(1045)];
    }
    let flk = a.kind == Kind::FailedLock;
    if p.no_plugin_auth {
        // A pre-plugin client: it cannot be switched; what it gets
        // depends on whether its token happens to suit the account (and
        // its wrong tokens count as failed logins).
        return vec![
            Outcome::Ok,
            e(1045),
            e(3118),
            e(1862),
            e(3955),
            e(1044),
            e(1049),
            e(1820),
        ];
    }
    if p.wrong_password {
        return if flk {
            vec![e(1045), e(3955)]
        } else {
            vec![e(1045)]
        };
    }
    let ok = match a.kind {
        Kind::Locked => return vec![e(3118)],
        Kind::RequireSsl if !tls_on => return vec![e(1045)],
        Kind::Expired if p.extra_caps & cap::CAN_HANDLE_EXPIRED_PASSWORDS == 0 => {
            return vec![e(1862)]
        }
        Kind::FailedLock => vec![Outcome::Ok, e(3955)],
        _ => vec![Outcome::Ok],
    };
    if p.db.is_some() {
        // USE of an unknown database, or one the account has no grant on
        // (or any, in the sandbox of an expired password: 1820).
        let mut v = vec![e(1044), e(1049), e(1820)];
        if flk {
            v.push(e(3955));
        }
        if p.db == Some("mysql") {
            v.push(Outcome::Ok);
        }
        return v;
    }
    ok
}

/// Runs the flow up to the end of the connection phase and the after-
/// login step; `Ok(outcome)` when nothing was mutated on the way.
fn flow(c: &mut Client, p: &Plan, w: &World, tls_on: &mut bool) -> Result<Outcome, Stop> {
    let a = &ACCOUNTS[p.acct];
    let password = if p.wrong_password {
        format!("{}x", a.password)
    } else {
        a.password.to_string()
    };
    let g = c.recv()?;
    if g.first() == Some(&0xFF) {
        return Ok(Outcome::Err(err_code(&g)));
    }
    let greeting = parse_greeting(&g).map_err(Stop::Protocol)?;
    let mut caps = cap::LONG_PASSWORD
        | cap::LONG_FLAG
        | cap::PROTOCOL_41
        | cap::TRANSACTIONS
        | cap::SECURE_CONNECTION
        | cap::PLUGIN_AUTH
        | p.extra_caps;
    if p.no_plugin_auth {
        caps &= !(cap::PLUGIN_AUTH | cap::PLUGIN_AUTH_LENENC_CLIENT_DATA);
    }
    if p.db.is_some() {
        caps |= cap::CONNECT_WITH_DB;
    }
    if let Some(v13) = p.tls {
        if greeting.caps & cap::SSL == 0 {
            return Err(Stop::Protocol("the server does not offer TLS".into()));
        }
        let config = if v13 {
            w.tls13.clone()
        } else {
            w.tls12.clone()
        };
        c.start_tls(caps, config, p.tls_junk.as_deref())?;
        caps |= cap::SSL;
        *tls_on = true;
    }
    let secure = *tls_on || p.unix;
    let first_plugin = match p.plugin {
        ClientPlugin::Native | ClientPlugin::Empty => Some(Plugin::Native),
        ClientPlugin::Sha2 => Some(Plugin::Sha2),
        ClientPlugin::Other => None,
    };
    let first_token = match first_plugin {
        Some(pl) => token(pl, &password, &greeting.nonce),
        None => greeting.nonce.iter().rev().copied().collect(),
    };
    let mut r = Vec::new();
    r.extend_from_slice(&caps.to_le_bytes());
    r.extend_from_slice(&(16u32 << 20).to_le_bytes());
    r.push(0xFF);
    r.extend_from_slice(&[0; 23]);
    r.extend_from_slice(a.user.as_bytes());
    r.push(0);
    if caps & cap::PLUGIN_AUTH_LENENC_CLIENT_DATA != 0 {
        put_lenenc(&mut r, first_token.len());
    } else {
        r.push(first_token.len() as u8);
    }
    r.extend_from_slice(&first_token);
    if let Some(db) = p.db {
        r.extend_from_slice(db.as_bytes());
        r.push(0);
    }
    if caps & cap::PLUGIN_AUTH != 0 {
        let name = match p.plugin {
            ClientPlugin::Native => Plugin::Native.name(),
            ClientPlugin::Sha2 => Plugin::Sha2.name(),
            ClientPlugin::Empty => "",
            ClientPlugin::Other => "sha256_password",
        };
        r.extend_from_slice(name.as_bytes());
        r.push(0);
    }
    if caps & cap::CONNECT_ATTRS != 0 {
        let mut attrs = Vec::new();
        for (k, v) in [("_client_name", "quire-fuzz"), ("_pid", "1")] {
            put_lenenc(&mut attrs, k.len());
            attrs.extend_from_slice(k.as_bytes());
            put_lenenc(&mut attrs, v.len());
            attrs.extend_from_slice(v.as_bytes());
        }
        put_lenenc(&mut r, attrs.len());
        r.extend_from_slice(&attrs);
    }
    c.send(&r)?;

    let mut plugin = first_plugin;
    let mut nonce = greeting.nonce.clone();
    let mut switched = false;
    let mut asked_key = false;
    let mut full = false;
    let mut fast = false;
    let outcome = loop {
        let pk = c.recv()?;
        match pk.first() {
            Some(0x00) => break Outcome::Ok,
            Some(0xFF) => break Outcome::Err(err_code(&pk)),
            Some(0xFE) if !switched && !full => {
                switched = true;
                let end = pk[1..]
                    .iter()
                    .position(|&b| b == 0)
                    .ok_or_else(|| Stop::Protocol("AuthSwitchRequest without a plugin".into()))?;
                let name = std::str::from_utf8(&pk[1..1 + end]).unwrap_or("");
                let pl = match name {
                    n if n == Plugin::Native.name() => Plugin::Native,
                    n if n == Plugin::Sha2.name() => Plugin::Sha2,
                    n => return Err(Stop::Protocol(format!("switch to unknown plugin {n:?}"))),
                };
                if pl != a.plugin {
                    return Err(Stop::Protocol(format!(
                        "switch to {name} for an account of {}",
                        a.plugin.name()
                    )));
                }
                let mut n = pk[2 + end..].to_vec();
                if n.last() == Some(&0) {
                    n.pop();
                }
                if n != greeting.nonce {
                    return Err(Stop::Protocol(
                        "AuthSwitchRequest with another nonce".into(),
                    ));
                }
                nonce = n;
                plugin = Some(pl);
                c.send(&token(pl, &password, &nonce))?;
            }
            Some(0x01) if plugin == Some(Plugin::Sha2) => match pk.get(1) {
                Some(&sha2::FAST_AUTH_SUCCESS) if pk.len() == 2 && !full && !fast => fast = true,
                Some(&sha2::PERFORM_FULL_AUTH) if pk.len() == 2 && !full && !fast => {
                    full = true;
                    if secure {
                        let mut pw = password.as_bytes().to_vec();
                        pw.push(0);
                        c.send(&pw)?;
                    } else if p.known_key {
                        let enc =
                            RsaKeys::encrypt_password(&w.public_pem, password.as_bytes(), &nonce)
                                .ok_or_else(|| Stop::Protocol("RSA encryption failed".into()))?;
                        c.send(&enc)?;
                    } else {
                        asked_key = true;
                        c.send(&[sha2::REQUEST_PUBLIC_KEY])?;
                    }
                }
                _ if asked_key && pk.len() > 2 => {
                    asked_key = false;
                    let pem = std::str::from_utf8(&pk[1..])
                        .map_err(|_| Stop::Protocol("public key is not text".into()))?;
                    if pem != w.public_pem {
                        return Err(Stop::Protocol("another public key".into()));
                    }
                    let enc = RsaKeys::encrypt_password(pem, password.as_bytes(), &nonce)
                        .ok_or_else(|| Stop::Protocol("RSA encryption failed".into()))?;
                    c.send(&enc)?;
                }
                _ => return Err(Stop::Protocol(format!("unexpected AuthMoreData {pk:02x?}"))),
            },
            _ => {
                return Err(Stop::Protocol(format!(
                    "unexpected packet in the connection phase: {:02x?}",
                    &pk[..pk.len().min(16)]
                )))
            }
        }
    };
    if outcome == Outcome::Ok {
        c.seq = 0;
        match p.after {
            After::Ping => {
                c.send(&[0x0E])?;
                let pk = c.recv()?;
                if !matches!(pk.first(), Some(0x00 | 0xFF)) {
                    return Err(Stop::Protocol(format!("COM_PING answered {pk:02x?}")));
                }
                c.seq = 0;
                c.send(&[0x01])?;
            }
            After::Query => {
                let mut q = vec![0x03];
                q.extend_from_slice(b"SELECT CURRENT_USER(), @@ssl_cipher IS NOT NULL");
                c.send(&q)?;
                let pk = c.recv()?;
                if !matches!(pk.first(), Some(0x02 | 0xFF)) {
                    return Err(Stop::Protocol(format!("COM_QUERY answered {pk:02x?}")));
                }
            }
            After::Quit => {
                c.send(&[0x01])?;
            }
            After::Close => {}
        }
    }
    Ok(outcome)
}

fn err_code(p: &[u8]) -> u16 {
    match p.get(1..3) {
        Some(b) => u16::from_le_bytes([b[0], b[1]]),
        None => 0,
    }
}

/// One connection: the server on its own thread, the client here.
/// Returns what the client function returned; panics if the server hangs.
fn connect<T>(w: &World, unix: bool, client: impl FnOnce(Sock) -> T) -> T {
    let (server_side, client_side) = if unix {
        let (a, b) = UnixStream::pair().expect("socketpair");
        (Sock::Unix(a), Sock::Unix(b))
    } else {
        let c = TcpStream::connect(w.addr).expect("connect to the loopback listener");
        let (s, _) = w
            .listener
            .accept()
            .expect("accept on the loopback listener");
        let _ = c.set_nodelay(true);
        (Sock::Tcp(s), Sock::Tcp(c))
    };
    client_side.set_read_timeout(HANG);
    let (tx, rx) = mpsc::channel();
    let server = w.server.clone();
    let t = std::thread::Builder::new()
        .name("quire-fuzz-conn".into())
        .spawn(move || {
            match server_side {
                Sock::Tcp(s) => server.serve_tcp(s),
                Sock::Unix(s) => server.serve_unix(s),
            }
            let _ = tx.send(());
        })
        .expect("spawn the server thread");
    let out = client(client_side);
    if rx.recv_timeout(HANG).is_err() {
        panic!("the server thread did not end within {HANG:?} after the client closed");
    }
    let _ = t.join();
    out
}

fn prepare_cache(w: &World, p: &Plan) {
    let a = &ACCOUNTS[p.acct];
    if a.plugin != Plugin::Sha2 || a.password.is_empty() || a.kind == Kind::Missing {
        return;
    }
    match p.cache {
        Cache::AsIs => {}
        Cache::Cold => {
            let opts = quire_sql::AccountOptions {
                expire_now: a.kind == Kind::Expired,
                ..Default::default()
            };
            w.accounts
                .alter_account(a.user, "%", Some((a.password, None)), &opts)
                .expect("ALTER USER of a fuzz account");
        }
        Cache::Warm => {
            // Only a login that passes the password check fills the cache.
            if matches!(a.kind, Kind::Plain | Kind::RequireSsl | Kind::Expired) {
                let warm = Plan {
                    unix: true,
                    acct: p.acct,
                    wrong_password: false,
                    tls: None,
                    tls_junk: None,
                    plugin: ClientPlugin::Sha2,
                    extra_caps: cap::CAN_HANDLE_EXPIRED_PASSWORDS,
                    no_plugin_auth: false,
                    db: None,
                    cache: Cache::AsIs,
                    known_key: false,
                    after: After::Quit,
                    pkt_mut: None,
                    raw_mut: None,
                };
                run_plan(w, &warm, true);
            }
        }
    }
}

/// Runs one flow; with `strict`, asserts its outcome.
fn run_plan(w: &World, p: &Plan, strict: bool) {
    let r = connect(w, p.unix, |sock| {
        let ctl = sock.try_clone().expect("clone the client socket");
        let mut c = Client {
            chan: Chan::Plain(Wire {
                sock,
                written: 0,
                raw: p.raw_mut.clone(),
                fired: false,
            }),
            ctl,
            seq: 0,
            sent: 0,
            pkt_mut: p.pkt_mut.clone(),
            mutated: false,
        };
        let mut tls_on = false;
        let r = flow(&mut c, p, w, &mut tls_on);
        let mutated = c.fired();
        let drained = c.drain();
        (r, mutated, drained, tls_on)
    });
    let (r, mutated, drained, tls_on) = r;
    if let Err(e) = drained {
        panic!("{e} (plan {p:?}, flow {r:?})");
    }
    if mutated {
        MUTATED.fetch_add(1, Ordering::Relaxed);
        return;
    }
    match r {
        Ok(Outcome::Ok) => {
            LOGGED_IN.fetch_add(1, Ordering::Relaxed);
        }
        Ok(Outcome::Err(_)) => {
            REFUSED.fetch_add(1, Ordering::Relaxed);
        }
        Err(Stop::Mutated) => {}
        Err(Stop::Io(e)) => panic!("unmutated flow: connection broke: {e} (plan {p:?})"),
        Err(Stop::Protocol(m)) => panic!("unmutated flow: {m} (plan {p:?})"),
    }
    if let Ok(o) = &r {
        let want = expected(p, tls_on);
        if strict && !want.contains(o) {
            panic!("unmutated flow ended with {o:?}, expected one of {want:?} (plan {p:?})");
        }
    }
}

/// Bytes to the server as they come (after an optional greeting read and
/// SSLRequest).
fn soup(w: &World, inp: &mut Input) {
    let flags = inp.u8();
    let unix = flags & 1 != 0;
    let read_greeting = flags & 2 != 0;
    let ssl_first = flags & 4 != 0;
    let body = inp.rest().to_vec();
    let drained = connect(w, unix, |mut sock| {
        let ctl = sock.try_clone().expect("clone the client socket");
        let mut go = || -> io::Result<()> {
            if read_greeting || ssl_first {
                let mut h = [0u8; 4];
                sock.read_exact(&mut h)?;
                let len = u32::from_le_bytes([h[0], h[1], h[2], 0]) as usize;
                let mut g = vec![0u8; len];
                sock.read_exact(&mut g)?;
            }
            if ssl_first {
                let mut req = vec![32, 0, 0, 1];
                let caps = cap::PROTOCOL_41 | cap::SECURE_CONNECTION | cap::SSL;
                req.extend_from_slice(&caps.to_le_bytes());
                req.extend_from_slice(&(16u32 << 20).to_le_bytes());
                req.push(0xFF);
                req.extend_from_slice(&[0; 23]);
                sock.write_all(&req)?;
            }
            sock.write_all(&body)
        };
        let _ = go();
        let mut c = Client {
            chan: Chan::Gone,
            ctl,
            seq: 0,
            sent: 0,
            pkt_mut: None,
            mutated: true,
        };
        c.drain()
    });
    MUTATED.fetch_add(1, Ordering::Relaxed);
    if let Err(e) = drained {
        panic!("{e} (byte soup)");
    }
}

/// The logins that must keep working whatever came before.
fn check_logins(w: &World) {
    let base = Plan {
        unix: false,
        acct: 1,
        wrong_password: false,
        tls: Some(true),
        tls_junk: None,
        plugin: ClientPlugin::Sha2,
        extra_caps: 0,
        no_plugin_auth: false,
        db: None,
        cache: Cache::Cold,
        known_key: false,
        after: After::Ping,
        pkt_mut: None,
        raw_mut: None,
    };
    let before = LOGGED_IN.load(Ordering::Relaxed);
    let plans = [
        // caching_sha2, cold: full authentication inside TLS 1.3.
        base.clone(),
        // cold over plain TCP: the public key requested, RSA.
        Plan {
            tls: None,
            ..base.clone()
        },
        // warm now: the fast path, TLS 1.2.
        Plan {
            tls: Some(false),
            cache: Cache::AsIs,
            ..base.clone()
        },
        // mysql_native_password over plain TCP, switched from sha2.
        Plan {
            acct: 0,
            tls: None,
            ..base.clone()
        },
    ];
    for p in &plans {
        prepare_cache(w, p);
        run_plan(w, p, true);
    }
    assert_eq!(
        LOGGED_IN.load(Ordering::Relaxed) - before,
        plans.len() as u64,
        "a correct login failed"
    );
}

pub fn run(data: &[u8]) {
    let w = world().lock().unwrap_or_else(|e| e.into_inner());
    let n = INPUTS.fetch_add(1, Ordering::Relaxed) + 1;
    if n.is_power_of_two() || n.is_multiple_of(100_000) {
        eprintln!(
            "quire-fuzz login: {n} inputs, {} logged in, {} refused, {} mutated or soup",
            LOGGED_IN.load(Ordering::Relaxed),
            REFUSED.load(Ordering::Relaxed),
            MUTATED.load(Ordering::Relaxed),
        );
    }
    if n == 1 || n.is_multiple_of(CHECK_EVERY) {
        check_logins(&w);
    }
    let mut inp = Input::new(data);
    if inp.below(8) == 0 {
        soup(&w, &mut inp);
        return;
    }
    let p = plan(&mut inp);
    prepare_cache(&w, &p);
    run_plan(&w, &p, true);
}
