//! Hostile clients: garbage, truncated and oversized packets, a flood of
//! connections beyond max_connections, a client that trickles one byte a
//! second. After each, another client must still be served, and at the end
//! the process's resident memory must be back near where it started
//! (the server runs in this process, so /proc/self/status is its RSS).
//!
//! One test function on purpose: RSS is per process, and parallel tests
//! would blur it.

mod wire;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use wire::{read_packet, rss_kib, start, wait_for, write_packet, Client};

const MAX_CONNECTIONS: u32 = 40;
const MAX_PACKET: u64 = 1 << 20;

fn junk(seed: &mut u64, n: usize) -> Vec<u8> {
    (0..n)
        .map(|_| {
            *seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (*seed >> 33) as u8
        })
        .collect()
}

fn raw(port: u16) -> TcpStream {
    let s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    s
}

/// Reads until the server closes (or 20 s pass); the bytes read.
fn drain(s: &mut TcpStream) -> Vec<u8> {
    let mut out = Vec::new();
    let mut b = [0u8; 4096];
    while let Ok(n) = s.read(&mut b) {
        if n == 0 {
            break;
        }
        out.extend_from_slice(&b[..n]);
        if out.len() > 1 << 20 {
            break;
        }
    }
    out
}

/// Another client is served: login, a query, within a generous bound.
fn still_serving(port: u16, what: &str) {
    eprintln!(
        "[{:?}] {what}",
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() % 100_000)
            .unwrap_or(0)
    );
    let t0 = Instant::now();
    let mut c = wait_for(15, || Client::login(port, "root", "").ok())
        .unwrap_or_else(|| panic!("after {what}: no login"));
    assert_eq!(c.value("SELECT 1 + 1"), Some("2".into()), "after {what}");
    assert!(
        t0.elapsed() < Duration::from_secs(15),
        "after {what}: served in {:?}",
        t0.elapsed()
    );
}

fn threads_connected(c: &mut Client) -> u64 {
    c.ok("SHOW GLOBAL STATUS LIKE 'Threads_connected'")
        .into_iter()
        .next()
        .and_then(|r| r[1].clone())
        .and_then(|v| v.parse().ok())
        .unwrap_or(u64::MAX)
}

#[test]
fn hostile_clients_do_not_hurt_the_server() {
    let srv = start("hostile", |c| {
        c.max_connections = MAX_CONNECTIONS;
        c.max_allowed_packet = MAX_PACKET;
    });
    let port = srv.port;
    let mut seed = 0x5eed_u64;

    // Warm up (threads, buffers, allocator arenas), then take the baseline.
    {
        let mut cs: Vec<Client> = (0..20).map(|_| Client::root(port)).collect();
        for c in &mut cs {
            c.ok("SELECT 1");
        }
    }
    still_serving(port, "warm-up");
    std::thread::sleep(Duration::from_millis(300));
    let baseline = rss_kib();

    // 1. Garbage before the handshake is even read.
    for n in [1usize, 3, 4, 100, 5000] {
        let mut s = raw(port);
        let _ = s.write_all(&junk(&mut seed, n));
        // Half-close: a short junk header would otherwise keep the server
        // waiting for the rest until connect_timeout (10 s), as MySQL does.
        let _ = s.shutdown(std::net::Shutdown::Write);
        drain(&mut s);
    }
    still_serving(port, "garbage before the handshake");

    // 2. Garbage after authentication, framed and unframed.
    for n in [1usize, 7, 64, 3000] {
        let mut c = Client::root(port);
        let _ = c.s.write_all(&junk(&mut seed, n));
        let _ = c.s.shutdown(std::net::Shutdown::Write);
        drain(&mut c.s);
        let mut c = Client::root(port);
        let _ = write_packet(&mut c.s, 0, &junk(&mut seed, n));
        let _ = c.s.shutdown(std::net::Shutdown::Write);
        drain(&mut c.s);
    }
    still_serving(port, "garbage after the handshake");

    // 3. Truncated packets: the header promises more than comes.
    {
        let mut s = raw(port);
        read_packet(&mut s).expect("handshake");
        let _ = s.write_all(&[100, 0, 0, 1, 1, 2, 3]);
        drop(s);
        let mut c = Client::root(port);
        let _ = c.s.write_all(&[200, 0, 0, 0, 0x03, b'S']);
        drop(c);
        let mut s = raw(port);
        let _ = s.write_all(&[5, 0]); // half a header
        drop(s);
    }
    still_serving(port, "truncated packets");

    // 4. A 16 MiB packet header (the largest one piece can be), then close.
    for authed in [false, true] {
        let mut s = if authed {
            Client::root(port).s
        } else {
            let mut s = raw(port);
            read_packet(&mut s).expect("handshake");
            s
        };
        let _ = s.write_all(&[0xFF, 0xFF, 0xFF, u8::from(!authed)]);
        let _ = s.write_all(&junk(&mut seed, 1000));
        drop(s);
    }
    still_serving(port, "16 MiB header then close");

    // 5. Over max_allowed_packet: ERR 1153, then the server closes.
    {
        let mut c = Client::root(port);
        let mut q = b"\x03SELECT '".to_vec();
        q.resize(MAX_PACKET as usize + 10, b'x');
        q.push(b'\'');
        let _ = write_packet(&mut c.s, 0, &q);
        let (_, p) = read_packet(&mut c.s).expect("an ERR");
        assert_eq!(wire::err_of(&p).0, 1153);
        assert!(c.closed());
        // A multi-piece packet over the limit too.
        let mut c = Client::root(port);
        let mut q = vec![0x03];
        q.resize(0xFF_FFFF, b'y');
        let _ = write_packet(&mut c.s, 0, &q);
        let _ = write_packet(&mut c.s, 1, b"tail");
        let got = drain(&mut c.s);
        if got.len() > 4 {
            assert_eq!(wire::err_of(&got[4..]).0, 1153);
        }
    }
    still_serving(port, "oversized packets");

    // 6. 1,000 simultaneous connects: at most max_connections + 1 get a
    // handshake, every other one ERR 1040.
    {
        let mut socks: Vec<TcpStream> = Vec::with_capacity(1000);
        for _ in 0..1000 {
            socks.push(raw(port));
        }
        let (mut hello, mut refused, mut other) = (0u32, 0u32, 0u32);
        for s in &mut socks {
            match read_packet(s) {
                Some((_, p)) if p.first() == Some(&10) => hello += 1,
                Some((_, p)) if p.first() == Some(&0xFF) && wire::err_of(&p).0 == 1040 => {
                    refused += 1
                }
                _ => other += 1,
            }
        }
        assert_eq!(other, 0, "every connect is answered");
        assert!(hello <= MAX_CONNECTIONS + 1, "{hello} handshakes");
        assert!(hello >= 1);
        assert_eq!(hello + refused, 1000);
        drop(socks);
    }
    still_serving(port, "a connection flood");

    // 7. A client trickling its handshake response, one byte a second,
    // does not hold anyone else up.
    {
        let trickle = std::thread::spawn(move || {
            let mut s = raw(port);
            read_packet(&mut s).expect("handshake");
            for b in [60u8, 0, 0, 1] {
                if s.write_all(&[b]).is_err() {
                    break;
                }
                std::thread::sleep(Duration::from_secs(1));
            }
        });
        std::thread::sleep(Duration::from_millis(200));
        for _ in 0..5 {
            let t0 = Instant::now();
            still_serving(port, "a trickling client");
            assert!(t0.elapsed() < Duration::from_secs(3));
        }
        trickle.join().unwrap();
    }
    still_serving(port, "a trickling client");

    // Everything hostile is gone: only our checker is connected, and the
    // memory it used is back (a generous bound: allocator caches stay).
    let mut c = Client::root(port);
    wait_for(20, || (threads_connected(&mut c) == 1).then_some(()))
        .expect("hostile connections all closed");
    std::thread::sleep(Duration::from_millis(300));
    let after = rss_kib();
    eprintln!("RSS baseline {baseline} KiB, after {after} KiB");
    assert!(baseline > 0);
    assert!(
        after < baseline + 96 * 1024,
        "RSS grew from {baseline} KiB to {after} KiB"
    );
}
