//! The test client every integration test of quire-server shares, and the
//! small in-process server of the session and hostile-client tests.
//!
//! * Packets: [`read_packet`] (joins a payload split into 16 MiB pieces),
//!   [`write_packet`] (one frame, as given: hostile tests frame by hand)
//!   and [`write_packets`] (splits at 16 MiB as a real client does).
//! * [`ServerErr`]: an ERR packet taken apart.
//! * The connection phase, once: [`connect`] reads Handshake V10
//!   ([`Greeting`]), optionally switches to TLS ([`Via::Tls`], a rustls
//!   client that verifies the server against the data directory's CA,
//!   [`tls_config`]), sends HandshakeResponse41 ([`Login`]: user,
//!   password, plugin, capabilities, database, attributes) and follows
//!   the server: AuthSwitchRequest, caching_sha2_password's fast path and
//!   full path (cleartext over TLS and the Unix socket, the RSA exchange
//!   over plain TCP). What happened is in the [`Trace`]; each test file
//!   turns the result into its own client type and asserts what it
//!   asserts on the greeting itself.
//! * [`TestServer`]/[`start`]: the server on 127.0.0.1:0 with the
//!   process-wide accounts ([`engine_config`] and [`fresh_dir`] serve the
//!   files that start servers their own way).
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use quire_config::Config;
use quire_engine::Engine;
use quire_io::{OsFs, Vfs};
use quire_server::codec::{cap, Reader};
use quire_server::sha2_password::{self as sha2, RsaKeys};
use quire_server::{native_password_token, ServerConfig};

// ------------------------------------------------------------ packets

/// A client socket: TCP, Unix, or TLS over TCP.
pub enum Sock {
    Tcp(TcpStream),
    Unix(UnixStream),
    Tls(Box<rustls::StreamOwned<rustls::ClientConnection, TcpStream>>),
}

impl Read for Sock {
    fn read(&mut self, b: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Sock::Tcp(s) => s.read(b),
            Sock::Unix(s) => s.read(b),
            Sock::Tls(s) => s.read(b),
        }
    }
}

impl Write for Sock {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        match self {
            Sock::Tcp(s) => s.write(b),
            Sock::Unix(s) => s.write(b),
            Sock::Tls(s) => s.write(b),
        }
    }
    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Sock::Tcp(s) => s.flush(),
            Sock::Unix(s) => s.flush(),
            Sock::Tls(s) => s.flush(),
        }
    }
}

/// One packet (a payload of 16 MiB or more is joined from its pieces; the
/// sequence id is the last piece's). `None` at EOF or on an error.
pub fn read_packet(s: &mut impl Read) -> Option<(u8, Vec<u8>)> {
    let mut payload = Vec::new();
    loop {
        let mut h = [0u8; 4];
        if let Err(e) = s.read_exact(&mut h) {
            if e.kind() != std::io::ErrorKind::UnexpectedEof {
                eprintln!("client read error: {e}");
            }
            return None;
        }
        let len = u32::from_le_bytes([h[0], h[1], h[2], 0]) as usize;
        let at = payload.len();
        payload.resize(at + len, 0);
        s.read_exact(&mut payload[at..]).ok()?;
        if len < 0xFF_FFFF {
            return Some((h[3], payload));
        }
    }
}

/// One frame with `payload` as it is (its length in 3 bytes).
pub fn write_packet(s: &mut impl Write, seq: u8, payload: &[u8]) -> std::io::Result<()> {
    let mut out = Vec::with_capacity(payload.len() + 4);
    out.extend_from_slice(&(payload.len() as u32).to_le_bytes()[..3]);
    out.push(seq);
    out.extend_from_slice(payload);
    s.write_all(&out)
}

/// `payload` in 16 MiB pieces (an empty one after an exact multiple).
pub fn write_packets(s: &mut impl Write, mut seq: u8, payload: &[u8]) -> std::io::Result<()> {
    let mut out = Vec::new();
    let mut rest = payload;
    loop {
        let n = rest.len().min(0xFF_FFFF);
        out.extend_from_slice(&(n as u32).to_le_bytes()[..3]);
        out.push(seq);
        seq = seq.wrapping_add(1);
        out.extend_from_slice(&rest[..n]);
        rest = &rest[n..];
        if n < 0xFF_FFFF {
            break;
        }
    }
    s.write_all(&out)
}

/// An ERR packet: code, SQLSTATE (`None` without the `#` marker) and
/// message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerErr {
    pub code: u16,
    pub state: Option<String>,
    pub msg: String,
}

impl ServerErr {
    pub fn parse(p: &[u8]) -> ServerErr {
        assert_eq!(p[0], 0xFF, "expected ERR, got {p:?}");
        let code = u16::from_le_bytes([p[1], p[2]]);
        if p.len() >= 9 && p[3] == b'#' {
            ServerErr {
                code,
                state: Some(String::from_utf8_lossy(&p[4..9]).into_owned()),
                msg: String::from_utf8_lossy(&p[9..]).into_owned(),
            }
        } else {
            ServerErr {
                code,
                state: None,
                msg: String::from_utf8_lossy(&p[3..]).into_owned(),
            }
        }
    }
}

/// The `n` values of a text-protocol row (NULL = `None`) and how many
/// bytes of the row were left over.
pub fn decode_text_row(row: &[u8], n: usize) -> (Vec<Option<Vec<u8>>>, usize) {
    let mut r = Reader::new(row);
    let mut vals = Vec::with_capacity(n);
    for _ in 0..n {
        if row.get(row.len() - r.remaining()) == Some(&0xFB) {
            r.u8().unwrap();
            vals.push(None);
        } else {
            vals.push(Some(r.lenenc_str().unwrap().to_vec()));
        }
    }
    (vals, r.remaining())
}

/// A text row as strings (lossy UTF-8).
pub fn text_row_strings(row: &[u8], n: usize) -> Vec<Option<String>> {
    decode_text_row(row, n)
        .0
        .into_iter()
        .map(|v| v.map(|b| String::from_utf8_lossy(&b).into_owned()))
        .collect()
}

/// (code, message) of an ERR packet.
pub fn err_of(p: &[u8]) -> (u16, String) {
    let e = ServerErr::parse(p);
    (e.code, e.msg)
}

// ------------------------------------------------------------ connecting

/// What Handshake V10 says.
#[derive(Debug, Clone)]
pub struct Greeting {
    pub seq: u8,
    pub version: Vec<u8>,
    pub id: u32,
    /// The 20-byte nonce (both parts).
    pub nonce: Vec<u8>,
    pub caps: u32,
    pub charset: u8,
    /// Length of the auth plugin data (nonce + NUL).
    pub auth_len: u8,
    pub plugin: Vec<u8>,
}

/// Handshake V10 taken apart (`seq` is its sequence id).
pub fn parse_greeting(seq: u8, hs: &[u8]) -> Greeting {
    let mut r = Reader::new(hs);
    assert_eq!(r.u8().unwrap(), 10, "protocol version");
    let version = r.nul_str().unwrap().to_vec();
    let id = r.u32().unwrap();
    let mut nonce = r.bytes(8).unwrap().to_vec();
    r.u8().unwrap();
    let lo = r.u16().unwrap() as u32;
    let charset = r.u8().unwrap();
    r.u16().unwrap();
    let hi = r.u16().unwrap() as u32;
    let auth_len = r.u8().unwrap();
    r.bytes(10).unwrap();
    nonce.extend_from_slice(r.nul_str().unwrap());
    let plugin = r.nul_str().unwrap().to_vec();
    Greeting {
        seq,
        version,
        id,
        nonce,
        caps: lo | hi << 16,
        charset,
        auth_len,
        plugin,
    }
}

/// A rustls client trusting the data directory's `ca.pem`, with the
/// generated client certificate when `with_cert`.
pub fn tls_config(datadir: &Path, with_cert: bool) -> Arc<rustls::ClientConfig> {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let mut roots = rustls::RootCertStore::empty();
    for c in CertificateDer::pem_file_iter(datadir.join("ca.pem")).unwrap() {
        roots.add(c.unwrap()).unwrap();
    }
    let b = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(roots);
    Arc::new(if with_cert {
        let certs: Vec<_> = CertificateDer::pem_file_iter(datadir.join("client-cert.pem"))
            .unwrap()
            .map(|c| c.unwrap())
            .collect();
        let key = PrivateKeyDer::from_pem_file(datadir.join("client-key.pem")).unwrap();
        b.with_client_auth_cert(certs, key).unwrap()
    } else {
        b.with_no_client_auth()
    })
}

/// Where to connect.
pub enum Via<'a> {
    Tcp(u16),
    Unix(&'a Path),
    /// SSLRequest, then TLS (server name `localhost`).
    Tls {
        port: u16,
        config: Arc<rustls::ClientConfig>,
    },
}

/// The HandshakeResponse41 to send.
pub struct Login<'a> {
    pub user: &'a str,
    pub password: &'a str,
    /// The plugin named in the response (its token is sent first).
    pub plugin: &'a str,
    /// `CONNECT_WITH_DB` (with `db`) and `SSL` (with TLS) are added.
    pub caps: u32,
    pub db: Option<&'a str>,
    /// Connection attributes, already encoded (sent when `Some`).
    pub attrs: Option<&'a [u8]>,
}

/// What the exchange went through.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Trace {
    pub switched_to: Option<String>,
    pub fast: bool,
    pub full: bool,
    pub public_key_requested: bool,
    /// Sequence id of the server's first answer to the response.
    pub first_reply_seq: u8,
}

/// Why a login did not succeed.
#[derive(Debug)]
pub enum Fail {
    /// The server's ERR (before the greeting or after the response).
    Server(ServerErr),
    /// No answer at all to the handshake response.
    Closed,
    /// The connection broke later, or the exchange went astray.
    Io(String),
}

/// The socket after the connection phase, the greeting (absent when the
/// server refused with an ERR first), what the exchange went through and
/// how the login ended.
pub struct Connected {
    pub s: Sock,
    /// Sequence id of the server's first packet (greeting or ERR).
    pub hello_seq: u8,
    pub greeting: Option<Greeting>,
    pub trace: Trace,
    pub result: Result<(), Fail>,
}

fn token(plugin: &[u8], password: &str, nonce: &[u8]) -> Vec<u8> {
    if plugin == b"mysql_native_password" {
        native_password_token(password.as_bytes(), nonce)
    } else {
        sha2::scramble(password.as_bytes(), nonce)
    }
}

/// Connects and runs the connection phase (read timeout 30 s).
pub fn connect(via: &Via, l: &Login) -> std::io::Result<Connected> {
    let timeout = Some(Duration::from_secs(30));
    let mut s = match via {
        Via::Unix(path) => {
            let u = UnixStream::connect(path)?;
            u.set_read_timeout(timeout)?;
            Sock::Unix(u)
        }
        Via::Tcp(port) | Via::Tls { port, .. } => {
            let t = TcpStream::connect(("127.0.0.1", *port))?;
            t.set_read_timeout(timeout)?;
            Sock::Tcp(t)
        }
    };
    let Some((hello_seq, hs)) = read_packet(&mut s) else {
        return Ok(Connected {
            s,
            hello_seq: 0,
            greeting: None,
            trace: Trace::default(),
            result: Err(Fail::Io("no handshake".into())),
        });
    };
    if hs[0] == 0xFF {
        return Ok(Connected {
            s,
            hello_seq,
            greeting: None,
            trace: Trace::default(),
            result: Err(Fail::Server(ServerErr::parse(&hs))),
        });
    }
    let g = parse_greeting(hello_seq, &hs);
    let mut caps = l.caps;
    if l.db.is_some() {
        caps |= cap::CONNECT_WITH_DB;
    }
    let mut seq = 1;
    if let Via::Tls { config, .. } = via {
        assert_ne!(g.caps & cap::SSL, 0, "server offers TLS");
        caps |= cap::SSL;
        let mut req = caps.to_le_bytes().to_vec();
        req.extend_from_slice(&(16u32 << 20).to_le_bytes());
        req.push(255);
        req.extend_from_slice(&[0; 23]);
        write_packet(&mut s, 1, &req)?;
        seq = 2;
        let Sock::Tcp(t) = s else {
            unreachable!("TLS goes over TCP")
        };
        let name = rustls::pki_types::ServerName::try_from("localhost").unwrap();
        let conn = rustls::ClientConnection::new(config.clone(), name).unwrap();
        s = Sock::Tls(Box::new(rustls::StreamOwned::new(conn, t)));
    }
    let mut p = caps.to_le_bytes().to_vec();
    p.extend_from_slice(&(16u32 << 20).to_le_bytes());
    p.push(255);
    p.extend_from_slice(&[0; 23]);
    p.extend_from_slice(l.user.as_bytes());
    p.push(0);
    let first = token(l.plugin.as_bytes(), l.password, &g.nonce);
    p.push(first.len() as u8);
    p.extend_from_slice(&first);
    if let Some(db) = l.db {
        p.extend_from_slice(db.as_bytes());
        p.push(0);
    }
    p.extend_from_slice(l.plugin.as_bytes());
    p.push(0);
    if let Some(attrs) = l.attrs {
        p.push(attrs.len() as u8);
        p.extend_from_slice(attrs);
    }
    write_packet(&mut s, seq, &p)?;
    let plain_tcp = matches!(via, Via::Tcp(_));
    let mut trace = Trace::default();
    let result = exchange(&mut s, l.password, g.nonce.clone(), plain_tcp, &mut trace);
    Ok(Connected {
        s,
        hello_seq,
        greeting: Some(g),
        trace,
        result,
    })
}

/// The server's side of the login after the response, followed to OK or
/// ERR.
fn exchange(
    s: &mut Sock,
    password: &str,
    mut nonce: Vec<u8>,
    plain_tcp: bool,
    trace: &mut Trace,
) -> Result<(), Fail> {
    let lost = |what: &str| Fail::Io(format!("no {what}"));
    let (mut seq, mut reply) = read_packet(s).ok_or(Fail::Closed)?;
    trace.first_reply_seq = seq;
    loop {
        let answer = match reply.first() {
            Some(0x00) => return Ok(()),
            Some(0xFF) => return Err(Fail::Server(ServerErr::parse(&reply))),
            Some(0xFE) => {
                // AuthSwitchRequest to the account's plugin.
                let mut r = Reader::new(&reply[1..]);
                let to = r.nul_str().map_err(|_| lost("plugin name"))?.to_vec();
                assert!(
                    to == b"mysql_native_password" || to == b"caching_sha2_password",
                    "switch to {to:?}"
                );
                nonce = r.bytes(20).map_err(|_| lost("nonce"))?.to_vec();
                trace.switched_to = Some(String::from_utf8_lossy(&to).into_owned());
                token(&to, password, &nonce)
            }
            Some(0x01) if reply == [0x01, 0x03] => {
                // caching_sha2 fast auth success: the OK follows.
                trace.fast = true;
                (seq, reply) = read_packet(s).ok_or_else(|| lost("OK after fast auth"))?;
                continue;
            }
            Some(0x01) if reply == [0x01, 0x04] => {
                trace.full = true;
                if plain_tcp {
                    // Full authentication over plain TCP: the RSA exchange.
                    trace.public_key_requested = true;
                    write_packet(s, seq.wrapping_add(1), &[0x02])
                        .map_err(|e| Fail::Io(e.to_string()))?;
                    let (kseq, key) = read_packet(s).ok_or_else(|| lost("public key"))?;
                    assert_eq!(key[0], 0x01);
                    seq = kseq;
                    let pem = String::from_utf8(key[1..].to_vec()).unwrap();
                    RsaKeys::encrypt_password(&pem, password.as_bytes(), &nonce)
                        .ok_or_else(|| Fail::Io("RSA encryption failed".into()))?
                } else {
                    // TLS or the Unix socket: the password in clear.
                    let mut pw = password.as_bytes().to_vec();
                    pw.push(0);
                    pw
                }
            }
            _ => return Err(Fail::Io(format!("unexpected auth packet {reply:?}"))),
        };
        write_packet(s, seq.wrapping_add(1), &answer).map_err(|e| Fail::Io(e.to_string()))?;
        (seq, reply) = read_packet(s).ok_or_else(|| lost("auth reply"))?;
    }
}

// ------------------------------------------------------------ servers

/// A new, empty directory `quire-<tag>-<pid>-<n>` under the temp dir.
pub fn fresh_dir(tag: &str) -> PathBuf {
    static N: AtomicU32 = AtomicU32::new(0);
    let d = std::env::temp_dir().join(format!(
        "quire-{tag}-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The engine settings of the test servers (small buffers, no binlog).
pub fn engine_config(datadir: PathBuf) -> Config {
    Config {
        datadir,
        innodb_buffer_pool_size: 16 << 20,
        innodb_redo_log_capacity: 8 << 20,
        log_bin: false,
        ..Config::default()
    }
}

/// Opens an engine on the real file system.
pub fn open_engine(cfg: &Config) -> Engine {
    let vfs: Arc<dyn Vfs> = Arc::new(OsFs::new(cfg.innodb_flush_method, cfg.innodb_use_fdatasync));
    Engine::open(vfs, cfg).expect("open engine").0
}

/// A server on 127.0.0.1:0 (and a Unix socket when configured) on its
/// own thread; stopped and its directory removed when dropped.
pub struct TestServer {
    pub port: u16,
    pub shutdown: Arc<AtomicBool>,
    pub thread: Option<JoinHandle<()>>,
    pub engine: Engine,
    pub dir: PathBuf,
    /// `ServerConfig::socket` (a placeholder path when there is none).
    pub socket: PathBuf,
}

/// A server with the process-wide accounts in a fresh directory.
pub fn start(tag: &str, tweak: impl FnOnce(&mut ServerConfig)) -> TestServer {
    start_in(fresh_dir(tag), false, tweak)
}

/// A server over `dir` (its data kept if there is some); `persistent` =
/// the accounts of the data directory's grant tables, as `quire serve`
/// keeps them, instead of the process-wide table in memory.
pub fn start_in(
    dir: PathBuf,
    persistent: bool,
    tweak: impl FnOnce(&mut ServerConfig),
) -> TestServer {
    let cfg = Config {
        innodb_lock_wait_timeout: 30,
        ..engine_config(dir.join("data"))
    };
    let engine = open_engine(&cfg);
    let mut scfg = ServerConfig::default();
    tweak(&mut scfg);
    let accounts =
        persistent.then(|| quire_server::Accounts::persistent(&engine).expect("grant tables"));
    serve(dir, engine, accounts, scfg)
}

/// Serves `engine` (in `dir`) with `accounts` (`None`: the process-wide
/// table); returns once the Unix socket, if any, is there.
pub fn serve(
    dir: PathBuf,
    engine: Engine,
    accounts: Option<quire_server::Accounts>,
    scfg: ServerConfig,
) -> TestServer {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let socket = scfg.socket.clone();
    let shutdown = Arc::new(AtomicBool::new(false));
    let (e, s) = (engine.clone(), shutdown.clone());
    let thread = std::thread::spawn(move || match accounts {
        Some(acc) => quire_server::serve_with_accounts(listener, e, scfg, acc, s).expect("serve"),
        None => quire_server::serve_on(listener, e, scfg, s).expect("serve"),
    });
    // The Unix socket is bound inside the server's thread.
    if let Some(socket) = &socket {
        let t0 = Instant::now();
        while !socket.exists() && t0.elapsed() < Duration::from_secs(60) {
            std::thread::sleep(Duration::from_millis(5));
        }
    }
    TestServer {
        port,
        shutdown,
        thread: Some(thread),
        engine,
        socket: socket.unwrap_or_else(|| dir.join("no-socket")),
        dir,
    }
}

impl TestServer {
    /// Stops the server and closes the engine, keeping the directory for
    /// another start (a restart).
    pub fn stop_keeping_data(mut self) -> PathBuf {
        self.stop();
        let _ = self.engine.close(true);
        std::mem::replace(&mut self.dir, PathBuf::from("/nonexistent/quire-kept"))
    }

    /// Stops the server; how long that took.
    pub fn stop(&mut self) -> Duration {
        let t0 = Instant::now();
        self.shutdown.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            t.join().unwrap();
        }
        t0.elapsed()
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.stop();
        let _ = self.engine.close(true);
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

pub type Rows = Vec<Vec<Option<String>>>;

pub struct Client {
    pub s: TcpStream,
    pub id: u32,
}

const CAPS: u32 = cap::PROTOCOL_41
    | cap::SECURE_CONNECTION
    | cap::PLUGIN_AUTH
    | cap::TRANSACTIONS
    | cap::MULTI_RESULTS
    | cap::LONG_PASSWORD;

impl Client {
    /// Logs in; Err = the server's ERR (code, message) or (0, why).
    pub fn login(port: u16, user: &str, password: &str) -> Result<Client, (u16, String)> {
        let l = Login {
            user,
            password,
            plugin: "mysql_native_password",
            caps: CAPS,
            db: None,
            attrs: None,
        };
        let c = connect(&Via::Tcp(port), &l).map_err(|e| (0, e.to_string()))?;
        match c.result {
            Ok(()) => {}
            Err(Fail::Server(e)) => return Err((e.code, e.msg)),
            Err(Fail::Closed) => return Err((0, "no auth reply".to_string())),
            Err(Fail::Io(why)) => return Err((0, why)),
        }
        let Sock::Tcp(s) = c.s else {
            unreachable!("a TCP login")
        };
        let id = c.greeting.map_or(0, |g| g.id);
        Ok(Client { s, id })
    }

    pub fn root(port: u16) -> Client {
        Client::login(port, "root", "").expect("root login")
    }

    pub fn send(&mut self, payload: &[u8]) {
        write_packet(&mut self.s, 0, payload).expect("send");
    }

    /// Reads one reply: rows (empty for OK) or the ERR.
    pub fn reply(&mut self) -> Result<Rows, (u16, String)> {
        let (_, p) = read_packet(&mut self.s).ok_or((0, "connection closed".to_string()))?;
        match p[0] {
            0xFF => return Err(err_of(&p)),
            0x00 | 0xFE => return Ok(Vec::new()),
            _ => {}
        }
        let n = Reader::new(&p).lenenc_int().unwrap() as usize;
        for _ in 0..n {
            read_packet(&mut self.s).ok_or((0, "closed".to_string()))?;
        }
        let (_, eof) = read_packet(&mut self.s).ok_or((0, "closed".to_string()))?;
        assert_eq!(eof[0], 0xFE);
        let mut rows = Vec::new();
        loop {
            let (_, row) = read_packet(&mut self.s).ok_or((0, "closed".to_string()))?;
            if row[0] == 0xFE && row.len() < 9 {
                return Ok(rows);
            }
            if row[0] == 0xFF {
                return Err(err_of(&row));
            }
            rows.push(text_row_strings(&row, n));
        }
    }

    pub fn query(&mut self, sql: &str) -> Result<Rows, (u16, String)> {
        let mut p = vec![0x03];
        p.extend_from_slice(sql.as_bytes());
        write_packet(&mut self.s, 0, &p).map_err(|e| (0, e.to_string()))?;
        self.reply()
    }

    pub fn ok(&mut self, sql: &str) -> Rows {
        match self.query(sql) {
            Ok(r) => r,
            Err(e) => panic!("{sql}: {e:?}"),
        }
    }

    /// One value.
    pub fn value(&mut self, sql: &str) -> Option<String> {
        self.ok(sql)
            .into_iter()
            .next()
            .and_then(|r| r.into_iter().next().flatten())
    }

    pub fn ping(&mut self) -> bool {
        write_packet(&mut self.s, 0, &[0x0e]).is_ok() && self.reply().is_ok()
    }

    /// Whether the server closed the connection (EOF or reset).
    pub fn closed(&mut self) -> bool {
        self.s
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        let mut b = [0u8; 256];
        loop {
            match self.s.read(&mut b) {
                Ok(0) => return true,
                Ok(_) => continue, // an ERR packet before the close
                Err(e) => {
                    return !matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    )
                }
            }
        }
    }
}

/// Polls `f` until it returns Some or `secs` pass.
pub fn wait_for<T>(secs: u64, mut f: impl FnMut() -> Option<T>) -> Option<T> {
    let t0 = Instant::now();
    while t0.elapsed() < Duration::from_secs(secs) {
        if let Some(v) = f() {
            return Some(v);
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    None
}

/// VmRSS of this process in KiB.
pub fn rss_kib() -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    s.lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}
