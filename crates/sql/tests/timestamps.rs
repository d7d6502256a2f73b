//! DEFAULT CURRENT_TIMESTAMP / ON UPDATE CURRENT_TIMESTAMP on DATETIME and
//! TIMESTAMP columns (issue 9 item 6): they were dropped without an error
//! and rows got NULL.

use quire_engine::Value;
use quire_sql::{Output, Session};

mod common;

fn ok(s: &mut Session, q: &str) {
    s.execute(q).unwrap_or_else(|e| panic!("{q}: {e:?}"));
}

fn row(s: &mut Session, q: &str) -> Vec<Value> {
    match s.execute(q).unwrap_or_else(|e| panic!("{q}: {e:?}")) {
        Output::Rows { mut rows, .. } => rows.remove(0),
        other => panic!("{other:?}"),
    }
}

fn text(v: &Value) -> String {
    match v {
        Value::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
        other => other.to_string(),
    }
}

#[test]
fn defaults_and_on_update() {
    let (engine, _dir) = common::open_engine("ts");
    let mut s = Session::new(engine, "root");
    ok(&mut s, "CREATE DATABASE d");
    ok(&mut s, "USE d");
    ok(
        &mut s,
        "CREATE TABLE t (id INT PRIMARY KEY, v INT, \
         c DATETIME DEFAULT CURRENT_TIMESTAMP, \
         u TIMESTAMP(6) NULL DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6), \
         n DATETIME DEFAULT NOW(), \
         l DATETIME(3) ON UPDATE LOCALTIMESTAMP(3), \
         x DATETIME DEFAULT LOCALTIME)",
    );
    let sct = text(&row(&mut s, "SHOW CREATE TABLE t")[1]);
    for want in [
        " DEFAULT CURRENT_TIMESTAMP,",
        " DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6),",
        " ON UPDATE CURRENT_TIMESTAMP(3),",
    ] {
        assert!(sct.contains(want), "{want} in {sct}");
    }
    // Omitted and DEFAULT columns get the statement's time.
    ok(&mut s, "INSERT INTO t (id, v) VALUES (1, 1)");
    ok(
        &mut s,
        "INSERT INTO t VALUES (2, 1, DEFAULT, DEFAULT, DEFAULT, NULL, DEFAULT)",
    );
    ok(
        &mut s,
        "INSERT INTO t SET id = 3, c = '2001-02-03 04:05:06'",
    );
    for id in [1, 2] {
        let r = row(
            &mut s,
            &format!(
                "SELECT c > '2020-01-01', u > '2020-01-01', n > '2020-01-01', l IS NULL, \
                 x > '2020-01-01' FROM t WHERE id = {id}"
            ),
        );
        assert_eq!(r, vec![Value::Int(1); 5], "row {id}");
    }
    let r = row(&mut s, "SELECT c, u > '2020-01-01' FROM t WHERE id = 3");
    assert_eq!(text(&r[0]), "2001-02-03 04:05:06");
    assert_eq!(r[1], Value::Int(1));
    // Assigning the column itself: no automatic update.
    ok(
        &mut s,
        "UPDATE t SET u = '2000-01-01 00:00:00', l = '2000-01-01' WHERE id = 1",
    );
    let r = row(&mut s, "SELECT u, l FROM t WHERE id = 1");
    assert!(text(&r[0]).starts_with("2000-01-01 00:00:00"), "{r:?}");
    assert!(text(&r[1]).starts_with("2000-01-01 00:00:00"), "{r:?}");
    // No value changes: no automatic update either (MySQL).
    ok(&mut s, "UPDATE t SET v = 1 WHERE id = 1");
    let r = row(
        &mut s,
        "SELECT u = '2000-01-01', l = '2000-01-01' FROM t WHERE id = 1",
    );
    assert_eq!(r, vec![Value::Int(1), Value::Int(1)]);
    // Another column changes: both ON UPDATE columns take the time.
    ok(&mut s, "UPDATE t SET v = 2 WHERE id = 1");
    let r = row(
        &mut s,
        "SELECT u > '2020-01-01', l > '2020-01-01', c > '2020-01-01' FROM t WHERE id = 1",
    );
    assert_eq!(r, vec![Value::Int(1); 3]);
    // ON DUPLICATE KEY UPDATE changes the row too.
    ok(&mut s, "UPDATE t SET u = '2000-01-01', v = 3 WHERE id = 2");
    ok(
        &mut s,
        "INSERT INTO t (id, v) VALUES (2, 0) ON DUPLICATE KEY UPDATE v = 4",
    );
    let r = row(&mut s, "SELECT v, u > '2020-01-01' FROM t WHERE id = 2");
    assert_eq!(r, vec![Value::Int(4), Value::Int(1)]);
}

#[test]
fn invalid_clauses() {
    let (engine, _dir) = common::open_engine("ts-bad");
    let mut s = Session::new(engine, "root");
    ok(&mut s, "CREATE DATABASE d");
    ok(&mut s, "USE d");
    for (q, code) in [
        ("CREATE TABLE b (a INT DEFAULT CURRENT_TIMESTAMP)", 1067),
        (
            "CREATE TABLE b (a DATETIME(3) DEFAULT CURRENT_TIMESTAMP)",
            1067,
        ),
        (
            "CREATE TABLE b (a DATETIME DEFAULT CURRENT_TIMESTAMP(6))",
            1067,
        ),
        (
            "CREATE TABLE b (a DATETIME ON UPDATE CURRENT_TIMESTAMP(2))",
            1294,
        ),
        ("CREATE TABLE b (a INT ON UPDATE NOW())", 1294),
        ("CREATE TABLE b (a DATETIME ON UPDATE 5)", 1294),
        ("CREATE TABLE b (a DATETIME(6) DEFAULT NOW(7))", 1426),
    ] {
        let e = s.execute(q).expect_err(q);
        assert_eq!(e.code, code, "{q}: {e:?}");
    }
    let e = s
        .execute("CREATE TABLE b (a DATETIME ON UPDATE 5)")
        .expect_err("on update");
    assert_eq!(e.message, "Invalid ON UPDATE clause for 'a' column");
}
