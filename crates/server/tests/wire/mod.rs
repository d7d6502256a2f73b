//! A small MySQL client and an in-process server for the session and
//! hostile-client tests (protocol.rs keeps its own, richer one).
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use quire_config::Config;
use quire_engine::Engine;
use quire_io::{OsFs, Vfs};
use quire_server::codec::{cap, Reader};
use quire_server::{native_password_token, ServerConfig};

pub struct TestServer {
    pub port: u16,
    pub shutdown: Arc<AtomicBool>,
    pub thread: Option<JoinHandle<()>>,
    pub engine: Engine,
    pub dir: PathBuf,
}

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
        datadir: dir.join("data"),
        innodb_buffer_pool_size: 16 << 20,
        innodb_redo_log_capacity: 8 << 20,
        innodb_lock_wait_timeout: 30,
        log_bin: false,
        ..Config::default()
    };
    let vfs: Arc<dyn Vfs> = Arc::new(OsFs::new(cfg.innodb_flush_method, cfg.innodb_use_fdatasync));
    let (engine, _) = Engine::open(vfs, &cfg).expect("open engine");
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let mut scfg = ServerConfig::default();
    tweak(&mut scfg);
    let shutdown = Arc::new(AtomicBool::new(false));
    let (e, s) = (engine.clone(), shutdown.clone());
    let thread = std::thread::spawn(move || {
        if persistent {
            let acc = quire_server::Accounts::persistent(&e).expect("grant tables");
            quire_server::serve_with_accounts(listener, e, scfg, acc, s).expect("serve");
        } else {
            quire_server::serve_on(listener, e, scfg, s).expect("serve");
        }
    });
    TestServer {
        port,
        shutdown,
        thread: Some(thread),
        engine,
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

    pub fn stop(&mut self) {
        self.shutdown.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            t.join().unwrap();
        }
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.stop();
        let _ = self.engine.close(true);
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

pub fn read_packet(s: &mut TcpStream) -> Option<(u8, Vec<u8>)> {
    let mut h = [0u8; 4];
    s.read_exact(&mut h).ok()?;
    let len = u32::from_le_bytes([h[0], h[1], h[2], 0]) as usize;
    let mut p = vec![0; len];
    s.read_exact(&mut p).ok()?;
    Some((h[3], p))
}

pub fn write_packet(s: &mut TcpStream, seq: u8, payload: &[u8]) -> std::io::Result<()> {
    let mut out = Vec::with_capacity(payload.len() + 4);
    out.extend_from_slice(&(payload.len() as u32).to_le_bytes()[..3]);
    out.push(seq);
    out.extend_from_slice(payload);
    s.write_all(&out)
}

/// (code, message) of an ERR packet.
pub fn err_of(p: &[u8]) -> (u16, String) {
    assert_eq!(p[0], 0xFF, "expected ERR, got {p:?}");
    let code = u16::from_le_bytes([p[1], p[2]]);
    let msg = if p.len() > 9 && p[3] == b'#' {
        String::from_utf8_lossy(&p[9..]).into_owned()
    } else {
        String::from_utf8_lossy(&p[3..]).into_owned()
    };
    (code, msg)
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
        let mut s = TcpStream::connect(("127.0.0.1", port)).map_err(|e| (0, e.to_string()))?;
        s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        let (_, hs) = read_packet(&mut s).ok_or((0, "no handshake".to_string()))?;
        if hs[0] == 0xFF {
            return Err(err_of(&hs));
        }
        let mut r = Reader::new(&hs);
        r.u8().unwrap();
        r.nul_str().unwrap();
        let id = r.u32().unwrap();
        let mut scramble = r.bytes(8).unwrap().to_vec();
        r.u8().unwrap();
        r.u16().unwrap();
        r.u8().unwrap();
        r.u16().unwrap();
        r.u16().unwrap();
        r.u8().unwrap();
        r.bytes(10).unwrap();
        scramble.extend_from_slice(r.nul_str().unwrap());
        let mut p = Vec::new();
        p.extend_from_slice(&CAPS.to_le_bytes());
        p.extend_from_slice(&(16u32 << 20).to_le_bytes());
        p.push(255);
        p.extend_from_slice(&[0; 23]);
        p.extend_from_slice(user.as_bytes());
        p.push(0);
        let token = native_password_token(password.as_bytes(), &scramble);
        p.push(token.len() as u8);
        p.extend_from_slice(&token);
        p.extend_from_slice(b"mysql_native_password\0");
        write_packet(&mut s, 1, &p).map_err(|e| (0, e.to_string()))?;
        let no_reply = || (0, "no auth reply".to_string());
        let (mut seq, mut reply) = read_packet(&mut s).ok_or_else(no_reply)?;
        let mut nonce = scramble.clone();
        // The account's plugin may differ (caching_sha2_password is the
        // default): follow the switch, fast auth and the RSA exchange.
        while reply.first() == Some(&0xFE) || reply.first() == Some(&0x01) {
            let answer = if reply[0] == 0xFE {
                let mut r = Reader::new(&reply[1..]);
                let to = r.nul_str().unwrap_or_default().to_vec();
                nonce = r.bytes(20).unwrap_or_default().to_vec();
                if to == b"mysql_native_password" {
                    native_password_token(password.as_bytes(), &nonce)
                } else {
                    quire_server::sha2_password::scramble(password.as_bytes(), &nonce)
                }
            } else if reply == [0x01, 0x03] {
                (seq, reply) = read_packet(&mut s).ok_or_else(no_reply)?;
                continue;
            } else if reply == [0x01, 0x04] {
                write_packet(&mut s, seq + 1, &[0x02]).map_err(|e| (0, e.to_string()))?;
                let (kseq, key) = read_packet(&mut s).ok_or_else(no_reply)?;
                let pem = String::from_utf8_lossy(&key[1..]).into_owned();
                seq = kseq;
                quire_server::sha2_password::RsaKeys::encrypt_password(
                    &pem,
                    password.as_bytes(),
                    &nonce,
                )
                .ok_or((0, "RSA encryption failed".to_string()))?
            } else {
                return Err((0, format!("unexpected auth packet {reply:?}")));
            };
            write_packet(&mut s, seq + 1, &answer).map_err(|e| (0, e.to_string()))?;
            (seq, reply) = read_packet(&mut s).ok_or_else(no_reply)?;
        }
        if reply[0] == 0xFF {
            return Err(err_of(&reply));
        }
        assert_eq!(reply[0], 0);
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
            let mut r = Reader::new(&row);
            let mut vals = Vec::new();
            for _ in 0..n {
                if row.get(row.len() - r.remaining()) == Some(&0xFB) {
                    r.u8().unwrap();
                    vals.push(None);
                } else {
                    vals.push(Some(
                        String::from_utf8_lossy(r.lenenc_str().unwrap()).into_owned(),
                    ));
                }
            }
            rows.push(vals);
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
