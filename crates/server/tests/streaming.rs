//! Result sets stream: rows reach the client while the statement still
//! runs, an error part-way is an ERR packet after rows, and the binary
//! protocol streams the same way. No timing decides pass or fail.

mod wire;

use std::time::{Duration, Instant};

use quire_server::codec::Reader;
use wire::{err_of, read_packet, start, write_packet, Client};

/// A table of `n` rows whose three-way cross join never ends in a test.
fn load(c: &mut Client, db: &str, n: u32) {
    c.ok(&format!("CREATE DATABASE {db}"));
    c.ok(&format!("CREATE TABLE {db}.t (id INT PRIMARY KEY, v INT)"));
    let vals: Vec<String> = (0..n).map(|i| format!("({i},{i})")).collect();
    c.ok(&format!("INSERT INTO {db}.t VALUES {}", vals.join(",")));
}

/// Reads a result set's header (column count, definitions, EOF) and
/// returns the column count.
fn read_header(c: &mut Client) -> usize {
    let (_, p) = read_packet(&mut c.s).expect("column count");
    assert_ne!(p[0], 0xFF, "ERR instead of a result set: {:?}", err_of(&p));
    let n = Reader::new(&p).lenenc_int().expect("count") as usize;
    for _ in 0..n {
        read_packet(&mut c.s).expect("column definition");
    }
    let (_, eof) = read_packet(&mut c.s).expect("EOF");
    assert_eq!(eof[0], 0xFE);
    n
}

/// Reads rows until the end of the result set: (rows, ERR if any).
fn read_rest(c: &mut Client) -> (u64, Option<(u16, String)>) {
    let mut rows = 0;
    loop {
        let (_, p) = read_packet(&mut c.s).expect("row or end");
        if p[0] == 0xFE && p.len() < 9 {
            return (rows, None);
        }
        if p[0] == 0xFF {
            return (rows, Some(err_of(&p)));
        }
        rows += 1;
    }
}

#[test]
fn first_rows_arrive_before_the_statement_ends_and_kill_ends_it_with_err() {
    let srv = start("stream-kill", |_| {});
    let mut a = Client::root(srv.port);
    let mut b = Client::root(srv.port);
    load(&mut a, "st", 500);
    // 125,000,000 rows: were the result collected before sending, the
    // client would see nothing here for a very long time.
    let mut p = vec![0x03];
    p.extend_from_slice(b"SELECT x.id, y.id, z.id FROM st.t x, st.t y, st.t z");
    write_packet(&mut a.s, 0, &p).expect("send");
    a.s.set_read_timeout(Some(Duration::from_secs(120)))
        .expect("timeout");
    assert_eq!(read_header(&mut a), 3);
    for _ in 0..100 {
        let (_, row) = read_packet(&mut a.s).expect("a row");
        assert!(row[0] != 0xFF && row[0] != 0xFE, "a row, not the end");
    }
    // The statement is still running: it shows in the process list.
    let running = b
        .ok("SHOW FULL PROCESSLIST")
        .into_iter()
        .any(|r| r[0].as_deref() == Some(&a.id.to_string()) && r[4].as_deref() == Some("Query"));
    assert!(
        running,
        "the SELECT is still executing while its rows arrive"
    );
    b.ok(&format!("KILL QUERY {}", a.id));
    let t0 = Instant::now();
    let (rows, err) = read_rest(&mut a);
    assert_eq!(
        err.map(|e| e.0),
        Some(1317),
        "ERR 1317 after {rows} more rows"
    );
    assert!(t0.elapsed() < Duration::from_secs(100));
    // The connection goes on.
    assert_eq!(a.value("SELECT COUNT(*) FROM st.t"), Some("500".into()));
}

#[test]
fn an_error_part_way_is_an_err_packet_after_rows() {
    let srv = start("stream-err", |_| {});
    let mut a = Client::root(srv.port);
    load(&mut a, "se", 5000);
    // The scalar subquery fails only at id = 4000 (two rows): 1242 after
    // the rows before it were sent.
    let sql = "SELECT id, (SELECT v FROM se.t WHERE id = 1 OR (x.id = 4000 AND id < 3)) \
               FROM se.t x";
    let mut p = vec![0x03];
    p.extend_from_slice(sql.as_bytes());
    write_packet(&mut a.s, 0, &p).expect("send");
    assert_eq!(read_header(&mut a), 2);
    let (rows, err) = read_rest(&mut a);
    assert_eq!(rows, 4000);
    assert_eq!(err.map(|e| e.0), Some(1242));
    assert_eq!(a.value("SELECT 1"), Some("1".into()));
}

#[test]
fn binary_protocol_streams_the_same_rows() {
    let srv = start("stream-bin", |_| {});
    let mut a = Client::root(srv.port);
    load(&mut a, "sb", 3000);
    let mut p = vec![0x16];
    p.extend_from_slice(b"SELECT id, v FROM sb.t WHERE id >= ? ORDER BY v DESC");
    write_packet(&mut a.s, 0, &p).expect("prepare");
    let (_, ok) = read_packet(&mut a.s).expect("prepare ok");
    assert_eq!(ok[0], 0);
    let id = u32::from_le_bytes([ok[1], ok[2], ok[3], ok[4]]);
    // One parameter definition + EOF, two column definitions + EOF.
    for _ in 0..5 {
        read_packet(&mut a.s).expect("definition");
    }
    let mut e = vec![0x17];
    e.extend_from_slice(&id.to_le_bytes());
    e.push(0); // no cursor
    e.extend_from_slice(&1u32.to_le_bytes());
    e.push(0); // NULL bitmap
    e.push(1); // new parameter types
    e.extend_from_slice(&[8, 0]); // LONGLONG
    e.extend_from_slice(&1000i64.to_le_bytes());
    write_packet(&mut a.s, 0, &e).expect("execute");
    assert_eq!(read_header(&mut a), 2);
    let mut first = None;
    let mut n = 0;
    loop {
        let (_, row) = read_packet(&mut a.s).expect("row");
        if row[0] == 0xFE && row.len() < 9 {
            break;
        }
        assert_eq!(row[0], 0, "binary row header");
        if first.is_none() {
            // 00 | null bitmap (1 byte) | id i32 | v i32
            first = Some(i32::from_le_bytes([row[6], row[7], row[8], row[9]]));
        }
        n += 1;
    }
    assert_eq!(n, 2000);
    assert_eq!(first, Some(2999));
}
