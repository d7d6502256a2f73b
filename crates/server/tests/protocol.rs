//! End-to-end protocol tests: a real engine in a temporary directory, the
//! server on 127.0.0.1:0, and the shared test client (`wire/`) with
//! strict checks of every reply's shape here.

mod wire;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use quire_server::codec::{cap, Reader};
use quire_server::ServerConfig;

use wire::TestServer;

/// A new, empty directory for one test server.
fn fresh_dir() -> PathBuf {
    wire::fresh_dir("server-test")
}

fn start(tweak: impl FnOnce(&mut ServerConfig)) -> TestServer {
    start_in(fresh_dir(), false, tweak)
}

/// A server on `dir` (kept if it exists); `persistent` = the accounts of
/// the data directory's grant tables, as `quire serve` has them, instead
/// of the process-wide in-memory table.
fn start_in(dir: PathBuf, persistent: bool, tweak: impl FnOnce(&mut ServerConfig)) -> TestServer {
    let engine = wire::open_engine(&wire::engine_config(dir.join("data")));
    let accounts =
        persistent.then(|| quire_server::Accounts::persistent(&engine).expect("grant tables"));
    let mut scfg = ServerConfig {
        socket: Some(dir.join("quire.sock")),
        ..ServerConfig::default()
    };
    tweak(&mut scfg);
    wire::serve(dir, engine, accounts, scfg)
}

/// A minimal MySQL client.
struct Client {
    s: TcpStream,
    caps: u32,
    /// Sequence id of the next reply packet.
    next_seq: u8,
}

#[derive(Debug)]
struct Err {
    code: u16,
    state: String,
    msg: String,
}

fn parse_err(p: &[u8]) -> Err {
    assert!(p.len() >= 9, "ERR packet too short: {p:?}");
    server_err(wire::ServerErr::parse(p))
}

/// Every ERR after the handshake carries a SQLSTATE.
fn server_err(e: wire::ServerErr) -> Err {
    Err {
        code: e.code,
        state: e.state.expect("ERR with a SQLSTATE"),
        msg: e.msg,
    }
}

fn read_packet_from(s: &mut TcpStream) -> Option<(u8, Vec<u8>)> {
    wire::read_packet(s)
}

fn write_packet_to(s: &mut TcpStream, seq: u8, payload: &[u8]) {
    wire::write_packets(s, seq, payload).unwrap();
}

const BASE_CAPS: u32 = cap::PROTOCOL_41
    | cap::SECURE_CONNECTION
    | cap::PLUGIN_AUTH
    | cap::PLUGIN_AUTH_LENENC_CLIENT_DATA
    | cap::TRANSACTIONS
    | cap::MULTI_RESULTS
    | cap::CONNECT_ATTRS
    | cap::LONG_PASSWORD;

impl Client {
    /// Handshake + auth; the final server packet (OK or ERR) is returned.
    fn connect_raw(
        port: u16,
        user: &str,
        password: &str,
        plugin: &str,
        caps: u32,
        db: Option<&str>,
    ) -> (Client, Result<(), Err>) {
        let login = wire::Login {
            user,
            password,
            plugin,
            caps,
            db,
            // attrs: one pair
            attrs: Some(b"\x0c_client_name\x04test"),
        };
        let c = wire::connect(&wire::Via::Tcp(port), &login).unwrap();
        assert_eq!(c.hello_seq, 0);
        let wire::Sock::Tcp(s) = c.s else {
            unreachable!("a TCP connection")
        };
        let caps = caps
            | if db.is_some() {
                cap::CONNECT_WITH_DB
            } else {
                0
            };
        let client = Client {
            s,
            caps,
            next_seq: 1,
        };
        if let Some(g) = &c.greeting {
            assert_eq!(g.version, b"8.0.36-quire");
            // TLS is set up (certificates generated in the data directory).
            assert_ne!(g.caps & cap::SSL, 0);
            assert_eq!(g.auth_len, 21);
            assert_eq!(g.nonce.len(), 20);
            // default_authentication_plugin.
            assert_eq!(g.plugin, b"caching_sha2_password");
            assert_eq!(c.trace.first_reply_seq, 2);
        }
        match c.result {
            Ok(()) => (client, Ok(())),
            Result::Err(wire::Fail::Server(e)) => (client, Result::Err(server_err(e))),
            Result::Err(f) => panic!("auth reply: {f:?}"),
        }
    }

    fn connect(port: u16, caps: u32) -> Client {
        let (c, r) = Client::connect_raw(port, "root", "", "mysql_native_password", caps, None);
        r.expect("root login");
        c
    }

    fn command(&mut self, payload: &[u8]) {
        write_packet_to(&mut self.s, 0, payload);
        self.next_seq = (payload.len() / 0xFF_FFFF + 1) as u8;
    }

    fn read(&mut self) -> Option<(u8, Vec<u8>)> {
        read_packet_from(&mut self.s)
    }

    /// Reads one whole reply and checks its shape: Ok(rows) for a result
    /// set (text values), Ok(empty) for OK, Err for ERR.
    fn reply(&mut self) -> Result<Vec<Vec<Option<Vec<u8>>>>, Err> {
        let (seq, p) = self.read().expect("reply");
        assert_eq!(seq, self.next_seq);
        let mut expect_seq = seq.wrapping_add(1);
        match p[0] {
            0xFF => return Result::Err(parse_err(&p)),
            0x00 => {
                let mut r = Reader::new(&p[1..]);
                r.lenenc_int().unwrap();
                r.lenenc_int().unwrap();
                r.u16().unwrap();
                r.u16().unwrap();
                return Ok(Vec::new());
            }
            _ => {}
        }
        let n = Reader::new(&p).lenenc_int().unwrap() as usize;
        for _ in 0..n {
            let (seq, def) = self.read().unwrap();
            assert_eq!(seq, expect_seq);
            expect_seq = expect_seq.wrapping_add(1);
            assert!(def.len() < 2000, "column names are bounded");
            let mut r = Reader::new(&def);
            assert_eq!(r.lenenc_str().unwrap(), b"def");
            for _ in 0..5 {
                r.lenenc_str().unwrap();
            }
            assert_eq!(r.u8().unwrap(), 0x0C);
            r.bytes(12).unwrap();
            assert!(r.is_empty());
        }
        if self.caps & cap::DEPRECATE_EOF == 0 {
            let (_, eof) = self.read().unwrap();
            assert_eq!(eof[0], 0xFE);
            assert_eq!(eof.len(), 5);
            expect_seq = expect_seq.wrapping_add(1);
        }
        let mut rows = Vec::new();
        loop {
            let (seq, row) = self.read().unwrap();
            // A row of 16 MiB or more spans several packets; `seq` is the
            // last one's.
            let pieces = (row.len() / 0xFF_FFFF) as u8;
            assert_eq!(seq, expect_seq.wrapping_add(pieces));
            expect_seq = seq.wrapping_add(1);
            if row[0] == 0xFE && row.len() < 0xFF_FFFF {
                return Ok(rows);
            }
            if row[0] == 0xFF {
                return Result::Err(parse_err(&row));
            }
            let (vals, left) = wire::decode_text_row(&row, n);
            assert_eq!(left, 0, "nothing after the last value");
            rows.push(vals);
        }
    }

    fn expect_closed(&mut self) {
        let mut b = [0u8; 1];
        match self.s.read(&mut b) {
            Ok(0) => {}
            Ok(_) => panic!("expected the server to close the connection"),
            Result::Err(e) => assert_ne!(e.kind(), std::io::ErrorKind::WouldBlock),
        }
    }
}

#[test]
fn handshake_ping_query_quit() {
    let srv = start(|_| {});
    for caps in [BASE_CAPS, BASE_CAPS | cap::DEPRECATE_EOF] {
        let mut c = Client::connect(srv.port, caps);
        c.command(&[0x0e]);
        assert!(c.reply().unwrap().is_empty(), "COM_PING -> OK");

        c.command(b"\x03SELECT 1");
        match c.reply() {
            Ok(rows) => assert_eq!(rows, vec![vec![Some(b"1".to_vec())]]),
            Result::Err(e) => {
                assert_eq!(e.code, 1235, "{e:?}");
                assert_eq!(e.state, "42000");
            }
        }

        c.command(b"\x02no_such_db");
        let e = c.reply().unwrap_err();
        assert_eq!((e.code, e.state.as_str()), (1049, "42000"));
        assert_eq!(e.msg, "Unknown database 'no_such_db'");

        c.command(&[0x99, 1, 2]);
        let e = c.reply().unwrap_err();
        assert_eq!((e.code, e.msg.as_str()), (1047, "Unknown command"));

        // Prepared statements: whatever the SQL layer answers is well formed.
        c.command(b"\x16SELECT ?");
        let (seq, p) = c.read().unwrap();
        assert_eq!(seq, 1);
        if p[0] == 0xFF {
            let e = parse_err(&p);
            assert!(e.code == 1235 || e.code == 1064, "{e:?}");
        } else {
            assert_eq!(p[0], 0);
            assert_eq!(p.len(), 12);
            let id = u32::from_le_bytes([p[1], p[2], p[3], p[4]]);
            let cols = u16::from_le_bytes([p[5], p[6]]) as usize;
            let params = u16::from_le_bytes([p[7], p[8]]) as usize;
            assert_eq!(params, 1);
            let eof = usize::from(caps & cap::DEPRECATE_EOF == 0);
            let more = params + eof + if cols > 0 { cols + eof } else { 0 };
            for _ in 0..more {
                c.read().unwrap();
            }
            let mut close = vec![0x19];
            close.extend_from_slice(&id.to_le_bytes());
            c.command(&close);
        }
        // Execute of an unknown statement.
        c.command(&[0x17, 99, 0, 0, 0, 0, 1, 0, 0, 0]);
        let e = c.reply().unwrap_err();
        assert_eq!(e.code, 1243);

        // COM_SET_OPTION, COM_RESET_CONNECTION, COM_FIELD_LIST, COM_STATISTICS.
        c.command(&[0x1b, 1, 0]);
        let (_, p) = c.read().unwrap();
        assert_eq!(p[0], 0xFE);
        c.command(&[0x1f]);
        assert!(c.reply().unwrap().is_empty());
        c.command(b"\x04t1\0");
        let (_, p) = c.read().unwrap();
        assert!(p[0] == 0xFE || p[0] == 0xFF, "{p:?}");
        c.command(&[0x09]);
        let (_, p) = c.read().unwrap();
        assert!(p.starts_with(b"Uptime: "));

        c.command(&[0x01]);
        c.expect_closed();
    }
    let status = quire_server::server_status();
    let get = |n: &str| {
        status
            .iter()
            .find(|(k, _)| k == n)
            .map(|(_, v)| *v)
            .unwrap()
    };
    assert!(get("Connections") >= 2);
    assert!(get("Questions") >= 2);
    assert!(get("Bytes_received") > 0 && get("Bytes_sent") > 0);
}

#[test]
fn passwords_and_auth_switch() {
    let srv = start(|_| {});
    let acc = quire_server::accounts();
    let _ = acc.create_user("alice", "%", "secret");
    let (_c, r) = Client::connect_raw(
        srv.port,
        "alice",
        "secret",
        "mysql_native_password",
        BASE_CAPS,
        None,
    );
    r.expect("correct password");
    let (mut c, r) = Client::connect_raw(
        srv.port,
        "alice",
        "wrong",
        "mysql_native_password",
        BASE_CAPS,
        None,
    );
    let e = r.unwrap_err();
    assert_eq!((e.code, e.state.as_str()), (1045, "28000"));
    assert_eq!(
        e.msg,
        "Access denied for user 'alice'@'localhost' (using password: YES)"
    );
    c.expect_closed();
    let (_, r) = Client::connect_raw(
        srv.port,
        "nobody",
        "",
        "mysql_native_password",
        BASE_CAPS,
        None,
    );
    assert_eq!(
        r.unwrap_err().msg,
        "Access denied for user 'nobody'@'localhost' (using password: NO)"
    );
    // A caching_sha2_password client is switched to native.
    let (_c, r) = Client::connect_raw(
        srv.port,
        "alice",
        "secret",
        "caching_sha2_password",
        BASE_CAPS,
        None,
    );
    r.expect("auth switch");
    let (_c, r) = Client::connect_raw(
        srv.port,
        "alice",
        "nope",
        "caching_sha2_password",
        BASE_CAPS,
        None,
    );
    assert_eq!(r.unwrap_err().code, 1045);
    // Unknown database at connect: 1049.
    let (_c, r) = Client::connect_raw(
        srv.port,
        "root",
        "",
        "mysql_native_password",
        BASE_CAPS,
        Some("nodb"),
    );
    assert_eq!(r.unwrap_err().code, 1049);
}

#[test]
fn max_connections() {
    let srv = start(|c| c.max_connections = 2);
    let a = Client::connect(srv.port, BASE_CAPS);
    let _b = Client::connect(srv.port, BASE_CAPS);
    // One connection beyond max_connections is kept for an account with
    // CONNECTION_ADMIN/SUPER (root), as in MySQL; the next one is refused.
    let _extra = Client::connect(srv.port, BASE_CAPS);
    let (mut c, r) = Client::connect_raw(
        srv.port,
        "root",
        "",
        "mysql_native_password",
        BASE_CAPS,
        None,
    );
    let e = r.unwrap_err();
    assert_eq!(
        (e.code, e.state.as_str(), e.msg.as_str()),
        (1040, "08004", "Too many connections")
    );
    c.expect_closed();
    drop(a);
    // The slot frees once the server notices the close.
    let t0 = Instant::now();
    loop {
        let (_c, r) = Client::connect_raw(
            srv.port,
            "root",
            "",
            "mysql_native_password",
            BASE_CAPS,
            None,
        );
        if r.is_ok() {
            break;
        }
        assert!(t0.elapsed() < Duration::from_secs(5), "slot never freed");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn oversized_out_of_order_and_garbage() {
    let srv = start(|c| c.max_allowed_packet = 1024);
    let mut c = Client::connect(srv.port, BASE_CAPS);
    let mut q = b"\x03SELECT '".to_vec();
    q.extend_from_slice(&[b'x'; 2000]);
    q.push(b'\'');
    c.command(&q);
    let (_, p) = c.read().unwrap();
    let e = parse_err(&p);
    assert_eq!((e.code, e.state.as_str()), (1153, "08S01"));
    c.expect_closed();

    let mut c = Client::connect(srv.port, BASE_CAPS);
    write_packet_to(&mut c.s, 5, &[0x0e]);
    let (_, p) = c.read().unwrap();
    assert_eq!(parse_err(&p).code, 1156);
    c.expect_closed();

    // Garbage from many clients: each gets an error or a close; the
    // server keeps serving.
    let mut seed = 12345u64;
    for i in 0..50 {
        let mut c = Client::connect(srv.port, BASE_CAPS);
        let mut junk = Vec::new();
        for _ in 0..(i * 7 % 300) {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            junk.push((seed >> 33) as u8);
        }
        let _ = c.s.write_all(&junk);
        let _ = c.s.shutdown(std::net::Shutdown::Write);
        while c.read().is_some() {}
    }
    let mut c = Client::connect(srv.port, BASE_CAPS);
    c.command(&[0x0e]);
    assert!(c.reply().unwrap().is_empty());
    // Garbage instead of a handshake response.
    let mut s = TcpStream::connect(("127.0.0.1", srv.port)).unwrap();
    read_packet_from(&mut s).unwrap();
    write_packet_to(&mut s, 1, b"\x01\x02\x03");
    let (_, p) = read_packet_from(&mut s).unwrap();
    assert_eq!(parse_err(&p).code, 1043);
}

#[test]
fn multi_packet_query() {
    let srv = start(|_| {});
    let mut c = Client::connect(srv.port, BASE_CAPS | cap::DEPRECATE_EOF);
    let mut q = b"\x03SELECT '".to_vec();
    q.resize(0xFF_FFFF + 100, b'y');
    q.push(b'\'');
    c.command(&q);
    // Not supported today (or a 16 MiB value once SQL lands): well formed.
    match c.reply() {
        Ok(rows) => assert_eq!(rows[0][0].as_ref().unwrap().len(), q.len() - 10),
        Result::Err(e) => assert!(e.msg.len() < 600, "message is bounded"),
    }
    c.command(&[0x0e]);
    assert!(c.reply().unwrap().is_empty());
}

#[test]
fn wait_timeout_and_shutdown() {
    let mut srv = start(|c| c.wait_timeout_s = 1);
    let mut c = Client::connect(srv.port, BASE_CAPS);
    std::thread::sleep(Duration::from_millis(1500));
    let (_, p) = c.read().expect("timeout error");
    assert_eq!(parse_err(&p).code, 4031);
    c.expect_closed();
    // An idle connection does not hold up shutdown.
    let _idle = Client::connect(srv.port, BASE_CAPS);
    let took = srv.stop();
    assert!(took < Duration::from_secs(5), "shutdown took {took:?}");
    assert!(!srv.socket.exists(), "socket file removed");
}

#[test]
fn mariadb_client() {
    if !std::path::Path::new("/usr/bin/mariadb").exists() {
        eprintln!("no /usr/bin/mariadb; skipped");
        return;
    }
    let srv = start(|_| {});
    let port = srv.port.to_string();
    let sock = srv.socket.display().to_string();
    for args in [
        vec!["-h127.0.0.1", "-P", port.as_str(), "-uroot"],
        vec!["-S", sock.as_str(), "-uroot"],
    ] {
        let out = std::process::Command::new("/usr/bin/mariadb")
            .args(&args)
            .args(["--skip-ssl", "-e", "SELECT 1"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        let stdout = String::from_utf8_lossy(&out.stdout);
        // Either the SQL layer answered, or it refused the statement after
        // a successful login.
        assert!(
            out.status.success() || stderr.contains("ERROR 1235"),
            "mariadb {args:?}: stdout {stdout:?} stderr {stderr:?}"
        );
        assert!(!stderr.contains("Access denied") && !stderr.contains("Can't connect"));
    }
}

#[test]
fn hundreds_of_connections() {
    let srv = start(|c| c.max_connections = 400);
    let port = srv.port;
    let threads: Vec<_> = (0..300)
        .map(|_| {
            std::thread::spawn(move || {
                let mut c = Client::connect(port, BASE_CAPS | cap::DEPRECATE_EOF);
                for _ in 0..20 {
                    c.command(&[0x0e]);
                    assert!(c.reply().unwrap().is_empty());
                    c.command(b"\x03SELECT 1");
                    let _ = c.reply();
                }
                c
            })
        })
        .collect();
    // All 300 are connected at once (each thread returns its client).
    let clients: Vec<Client> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    assert_eq!(clients.len(), 300);
    let status = quire_server::server_status();
    let max_used = status
        .iter()
        .find(|(k, _)| k == "Max_used_connections")
        .unwrap()
        .1;
    assert!(max_used >= 300, "Max_used_connections {max_used}");
}

impl Client {
    /// Sends COM_QUERY `sql` and returns the status flags of its OK packet.
    fn ok_status(&mut self, sql: &str) -> u16 {
        let mut p = vec![0x03];
        p.extend_from_slice(sql.as_bytes());
        self.command(&p);
        let (_, p) = self.read().expect("reply");
        assert_eq!(p[0], 0x00, "{sql}: expected OK, got {:?}", parse_err(&p));
        let mut r = Reader::new(&p[1..]);
        r.lenenc_int().unwrap();
        r.lenenc_int().unwrap();
        r.u16().unwrap()
    }

    fn query(&mut self, sql: &str) -> Result<Vec<Vec<Option<Vec<u8>>>>, Err> {
        let mut p = vec![0x03];
        p.extend_from_slice(sql.as_bytes());
        self.command(&p);
        self.reply()
    }
}

#[test]
fn transaction_status_flags() {
    const IN_TRANS: u16 = 1;
    const AUTOCOMMIT: u16 = 2;
    let srv = start(|_| {});
    let mut c = Client::connect(srv.port, BASE_CAPS);
    let flags = |s: u16| s & (IN_TRANS | AUTOCOMMIT);
    assert_eq!(flags(c.ok_status("CREATE DATABASE st")), AUTOCOMMIT);
    assert_eq!(flags(c.ok_status("USE st")), AUTOCOMMIT);
    c.ok_status("CREATE TABLE t (id INT PRIMARY KEY)");
    assert_eq!(flags(c.ok_status("INSERT INTO t VALUES (1)")), AUTOCOMMIT);
    assert_eq!(flags(c.ok_status("BEGIN")), AUTOCOMMIT | IN_TRANS);
    assert_eq!(
        flags(c.ok_status("INSERT INTO t VALUES (2)")),
        AUTOCOMMIT | IN_TRANS
    );
    assert_eq!(flags(c.ok_status("COMMIT")), AUTOCOMMIT);
    assert_eq!(flags(c.ok_status("SET autocommit = 0")), 0);
    assert_eq!(flags(c.ok_status("INSERT INTO t VALUES (3)")), IN_TRANS);
    assert_eq!(flags(c.ok_status("ROLLBACK")), 0);
    // A failing statement inside the transaction keeps it open.
    assert_eq!(flags(c.ok_status("INSERT INTO t VALUES (4)")), IN_TRANS);
    assert_eq!(c.query("INSERT INTO t VALUES (1)").unwrap_err().code, 1062);
    assert_eq!(flags(c.ok_status("SET @x = 1")), IN_TRANS);
    assert_eq!(flags(c.ok_status("SET autocommit = 1")), AUTOCOMMIT);
    assert_eq!(
        c.query("SELECT id FROM t ORDER BY id").unwrap(),
        vec![
            vec![Some(b"1".to_vec())],
            vec![Some(b"2".to_vec())],
            vec![Some(b"4".to_vec())]
        ]
    );
    // The EOF after a result set carries the flags too.
    c.ok_status("BEGIN");
    c.command(b"\x03SELECT 1");
    let mut last = Vec::new();
    for _ in 0..5 {
        last = c.read().unwrap().1;
    }
    assert_eq!(last[0], 0xFE);
    let st = u16::from_le_bytes([last[3], last[4]]);
    assert_eq!(flags(st), AUTOCOMMIT | IN_TRANS);
    assert_eq!(flags(c.ok_status("ROLLBACK")), AUTOCOMMIT);
}

#[test]
fn accounts_over_the_wire() {
    let srv = start(|_| {});
    let mut root = Client::connect(srv.port, BASE_CAPS);
    assert_eq!(
        root.query("SELECT CURRENT_USER(), USER()").unwrap(),
        vec![vec![
            Some(b"root@localhost".to_vec()),
            Some(b"root@localhost".to_vec())
        ]]
    );
    root.query("CREATE USER 'wire'@'%' IDENTIFIED BY 'pw1'")
        .unwrap();
    let e = root
        .query("CREATE USER 'wire'@'%' IDENTIFIED BY 'pw1'")
        .unwrap_err();
    assert_eq!(
        (e.code, e.msg.as_str()),
        (1396, "Operation CREATE USER failed for 'wire'@'%'")
    );
    let login = |pw: &str| {
        Client::connect_raw(
            srv.port,
            "wire",
            pw,
            "mysql_native_password",
            BASE_CAPS,
            None,
        )
    };
    let (mut w, r) = login("pw1");
    r.expect("the new account logs in");
    assert_eq!(
        w.query("SELECT CURRENT_USER(), USER()").unwrap(),
        vec![vec![
            Some(b"wire@%".to_vec()),
            Some(b"wire@localhost".to_vec())
        ]]
    );
    assert_eq!(w.query("CREATE USER other").unwrap_err().code, 1227);
    assert_eq!(login("bad").1.unwrap_err().code, 1045);
    // The user changes its own password.
    w.query("SET PASSWORD = 'pw2'").unwrap();
    assert_eq!(login("pw1").1.unwrap_err().code, 1045);
    login("pw2").1.expect("new password");
    root.query("ALTER USER wire@'%' IDENTIFIED BY 'pw3'")
        .unwrap();
    login("pw3").1.expect("password set by root");
    root.query("GRANT ALL PRIVILEGES ON *.* TO 'wire'@'%'")
        .unwrap();
    // MySQL 8.0 spells out the static privileges, then the dynamic ones.
    let g = w.query("SHOW GRANTS").unwrap();
    assert_eq!(g.len(), 2, "{g:?}");
    let first = String::from_utf8_lossy(g[0][0].as_deref().unwrap_or_default()).into_owned();
    assert!(
        first.starts_with("GRANT SELECT, INSERT, UPDATE, DELETE, CREATE, DROP, RELOAD,")
            && first.ends_with(", CREATE ROLE, DROP ROLE ON *.* TO `wire`@`%`"),
        "{first}"
    );
    w.query("CREATE USER other").unwrap();
    w.query("DROP USER other").unwrap();
    root.query("DROP USER 'wire'@'%'").unwrap();
    assert_eq!(login("pw3").1.unwrap_err().code, 1045);
    let e = root.query("DROP USER 'wire'@'%'").unwrap_err();
    assert_eq!(
        (e.code, e.msg.as_str()),
        (1396, "Operation DROP USER failed for 'wire'@'%'")
    );
}

/// Privileges are enforced over the wire and kept in the grant tables:
/// an account with everything on one database cannot make itself an
/// administrator through the mysql schema, SET GLOBAL or FLUSH.
#[test]
fn privileges_are_enforced_and_survive_a_restart() {
    let dir = fresh_dir();
    let login = |port: u16| {
        Client::connect_raw(port, "app", "pw", "mysql_native_password", BASE_CAPS, None)
    };
    {
        let mut srv = start_in(dir.clone(), true, |_| {});
        let mut root = Client::connect(srv.port, BASE_CAPS);
        for q in [
            "CREATE DATABASE sbtest",
            "CREATE DATABASE other",
            "CREATE TABLE sbtest.t (id INT PRIMARY KEY, k INT, pad INT)",
            "CREATE TABLE other.t (id INT PRIMARY KEY, pad INT)",
            "CREATE USER 'app'@'%' IDENTIFIED BY 'pw'",
            "GRANT ALL ON sbtest.* TO 'app'@'%'",
            "GRANT SELECT (id) ON other.t TO 'app'@'%'",
        ] {
            root.query(q).unwrap();
        }
        let (mut app, r) = login(srv.port);
        r.expect("app logs in");
        app.query("INSERT INTO sbtest.t VALUES (1, 2, 3)").unwrap();
        app.query("UPDATE sbtest.t SET k = k + 1 WHERE id = 1")
            .unwrap();
        for (q, code) in [
            (
                "INSERT INTO mysql.user (Host, User, Super_priv) VALUES ('%', 'evil', 'Y')",
                1142,
            ),
            (
                "UPDATE mysql.user SET Super_priv = 'Y' WHERE User = 'app'",
                1142,
            ),
            ("DELETE FROM mysql.user", 1142),
            ("SELECT authentication_string FROM mysql.user", 1142),
            ("DROP TABLE mysql.user", 1142),
            (
                "INSERT INTO mysql.db (Host, Db, User) VALUES ('%', 'other', 'app')",
                1142,
            ),
            ("FLUSH PRIVILEGES", 1227),
            ("SET GLOBAL innodb_flush_log_at_trx_commit = 0", 1227),
            ("GRANT ALL ON *.* TO 'app'@'%'", 1045),
            ("SELECT pad FROM other.t", 1143),
            ("USE mysql", 1044),
            ("DROP DATABASE other", 1044),
        ] {
            assert_eq!(app.query(q).unwrap_err().code, code, "{q}");
        }
        let e = app.query("DROP TABLE mysql.user").unwrap_err();
        assert_eq!(
            e.msg,
            "DROP command denied to user 'app'@'localhost' for table 'mysql.user'"
        );
        app.query("SELECT id FROM other.t").unwrap();
        // Root may edit the grant tables; the edit counts after FLUSH.
        root.query("UPDATE mysql.user SET Reload_priv = 'Y' WHERE User = 'app'")
            .unwrap();
        assert_eq!(app.query("FLUSH TABLES").unwrap_err().code, 1227);
        root.query("FLUSH PRIVILEGES").unwrap();
        app.query("FLUSH TABLES").unwrap();
        assert_eq!(
            root.query("SELECT Table_priv, Column_priv FROM mysql.tables_priv WHERE User = 'app'")
                .unwrap(),
            vec![vec![Some(b"".to_vec()), Some(b"Select".to_vec())]]
        );
        drop((app, root));
        srv.stop();
        srv.engine.close(true).expect("close");
        srv.dir = std::env::temp_dir().join("quire-server-test-nothing-to-remove");
    }
    let srv = start_in(dir.clone(), true, |_| {});
    let (mut app, r) = login(srv.port);
    r.expect("app logs in after the restart");
    assert_eq!(
        app.query("SHOW GRANTS").unwrap(),
        vec![
            vec![Some(b"GRANT RELOAD ON *.* TO `app`@`%`".to_vec())],
            vec![Some(
                b"GRANT ALL PRIVILEGES ON `sbtest`.* TO `app`@`%`".to_vec()
            )],
            vec![Some(
                b"GRANT SELECT (`id`) ON `other`.`t` TO `app`@`%`".to_vec()
            )],
        ]
    );
    assert_eq!(app.query("SELECT pad FROM other.t").unwrap_err().code, 1143);
    app.query("SELECT k FROM sbtest.t").unwrap();
}

#[test]
fn accounts_survive_a_restart_in_the_grant_tables() {
    let dir = fresh_dir();
    let login = |port: u16, pw: &str| {
        Client::connect_raw(port, "keep", pw, "mysql_native_password", BASE_CAPS, None)
    };
    {
        let mut srv = start_in(dir.clone(), true, |_| {});
        let mut root = Client::connect(srv.port, BASE_CAPS);
        root.query("CREATE USER 'keep'@'%' IDENTIFIED BY 'pw1', 'gone'@'%'")
            .unwrap();
        root.query("GRANT ALL ON shop.* TO 'keep'@'%'").unwrap();
        root.query("DROP USER 'gone'@'%'").unwrap();
        login(srv.port, "pw1").1.expect("new account");
        assert_eq!(
            root.query("SELECT User, Host, plugin FROM mysql.user ORDER BY User")
                .unwrap(),
            vec![
                vec![
                    Some(b"keep".to_vec()),
                    Some(b"%".to_vec()),
                    Some(b"caching_sha2_password".to_vec())
                ],
                vec![
                    Some(b"root".to_vec()),
                    Some(b"localhost".to_vec()),
                    Some(b"caching_sha2_password".to_vec())
                ],
            ]
        );
        drop(root);
        srv.stop();
        srv.engine.close(true).expect("close");
        // Keep the directory for the second start.
        srv.dir = std::env::temp_dir().join("quire-server-test-nothing-to-remove");
    }
    let srv = start_in(dir.clone(), true, |_| {});
    let (mut c, r) = login(srv.port, "pw1");
    r.expect("the account survived the restart");
    assert_eq!(
        c.query("SHOW GRANTS").unwrap(),
        vec![
            vec![Some(b"GRANT USAGE ON *.* TO `keep`@`%`".to_vec())],
            vec![Some(
                b"GRANT ALL PRIVILEGES ON `shop`.* TO `keep`@`%`".to_vec()
            )],
        ]
    );
    assert_eq!(login(srv.port, "wrong").1.unwrap_err().code, 1045);
    // A direct edit of the grant table counts after FLUSH PRIVILEGES.
    let mut root = Client::connect(srv.port, BASE_CAPS);
    root.query("UPDATE mysql.user SET authentication_string = '' WHERE User = 'keep'")
        .unwrap();
    login(srv.port, "pw1").1.expect("not reloaded yet");
    root.query("FLUSH PRIVILEGES").unwrap();
    login(srv.port, "")
        .1
        .expect("the edited (empty) password after the reload");
    let gone = Client::connect_raw(
        srv.port,
        "gone",
        "",
        "mysql_native_password",
        BASE_CAPS,
        None,
    );
    assert_eq!(
        gone.1.unwrap_err().code,
        1045,
        "the dropped account stays dropped"
    );
    drop(srv);
    let _ = std::fs::remove_dir_all(&dir);
}
