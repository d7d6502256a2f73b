//! SAVEPOINT / ROLLBACK TO [SAVEPOINT] / RELEASE SAVEPOINT with InnoDB's
//! semantics (issue 9 item 6). Before, SAVEPOINT was refused while the
//! transaction went on, so a following COMMIT committed what the
//! application had rolled back.

use std::time::{Duration, Instant};

use quire_engine::Value;
use quire_sql::{Output, Session};

mod common;

fn ids(s: &mut Session) -> Vec<i64> {
    match s.execute("SELECT id FROM t ORDER BY id").expect("select") {
        Output::Rows { rows, .. } => rows
            .iter()
            .map(|r| match r[0] {
                Value::Int(i) => i,
                ref v => panic!("{v:?}"),
            })
            .collect(),
        other => panic!("{other:?}"),
    }
}

fn ok(s: &mut Session, q: &str) {
    s.execute(q).unwrap_or_else(|e| panic!("{q}: {e:?}"));
}

fn err(s: &mut Session, q: &str) -> (u16, String) {
    let e = s.execute(q).expect_err(q);
    (e.code, e.message)
}

fn setup(tag: &str) -> (quire_engine::Engine, Session) {
    let (engine, _dir) = common::open_engine(tag);
    let mut s = Session::new(engine.clone(), "root");
    ok(&mut s, "CREATE DATABASE d");
    ok(&mut s, "USE d");
    ok(&mut s, "CREATE TABLE t (id INT PRIMARY KEY, k INT)");
    (engine, s)
}

#[test]
fn rollback_to_and_release() {
    let (_e, mut s) = setup("sp-basic");
    ok(&mut s, "BEGIN");
    ok(&mut s, "INSERT INTO t VALUES (1, 0)");
    ok(&mut s, "SAVEPOINT a");
    ok(&mut s, "INSERT INTO t VALUES (2, 0)");
    ok(&mut s, "SAVEPOINT b");
    ok(&mut s, "INSERT INTO t VALUES (3, 0)");
    assert_eq!(ids(&mut s), [1, 2, 3]);
    ok(&mut s, "ROLLBACK TO SAVEPOINT a");
    assert_eq!(ids(&mut s), [1]);
    // Rolling back to a discards the later savepoints; a itself stays.
    assert_eq!(
        err(&mut s, "ROLLBACK TO SAVEPOINT b"),
        (1305, "SAVEPOINT b does not exist".into())
    );
    ok(&mut s, "INSERT INTO t VALUES (4, 0)");
    ok(&mut s, "ROLLBACK WORK TO a");
    assert_eq!(ids(&mut s), [1]);
    ok(&mut s, "INSERT INTO t VALUES (5, 0)");
    ok(&mut s, "RELEASE SAVEPOINT A");
    assert_eq!(
        err(&mut s, "ROLLBACK TO a"),
        (1305, "SAVEPOINT a does not exist".into())
    );
    assert_eq!(
        err(&mut s, "RELEASE SAVEPOINT a"),
        (1305, "SAVEPOINT a does not exist".into())
    );
    ok(&mut s, "COMMIT");
    assert_eq!(ids(&mut s), [1, 5]);
    // Savepoints end with their transaction.
    ok(&mut s, "BEGIN");
    ok(&mut s, "SAVEPOINT c");
    ok(&mut s, "COMMIT");
    ok(&mut s, "BEGIN");
    assert_eq!(err(&mut s, "ROLLBACK TO c").0, 1305);
    ok(&mut s, "ROLLBACK");
}

#[test]
fn same_name_moves_the_savepoint() {
    let (_e, mut s) = setup("sp-same");
    ok(&mut s, "START TRANSACTION");
    ok(&mut s, "SAVEPOINT a");
    ok(&mut s, "INSERT INTO t VALUES (1, 0)");
    ok(&mut s, "SAVEPOINT a");
    ok(&mut s, "INSERT INTO t VALUES (2, 0)");
    ok(&mut s, "ROLLBACK TO SAVEPOINT a");
    ok(&mut s, "COMMIT");
    assert_eq!(ids(&mut s), [1]);
}

#[test]
fn outside_a_transaction() {
    let (_e, mut s) = setup("sp-auto");
    // autocommit: accepted, nothing to roll back to afterwards (MySQL).
    ok(&mut s, "SAVEPOINT x");
    assert_eq!(err(&mut s, "ROLLBACK TO SAVEPOINT x").0, 1305);
    // autocommit=0: SAVEPOINT opens the transaction like any statement.
    ok(&mut s, "SET autocommit = 0");
    ok(&mut s, "SAVEPOINT x");
    ok(&mut s, "INSERT INTO t VALUES (7, 0)");
    ok(&mut s, "ROLLBACK TO SAVEPOINT x");
    ok(&mut s, "COMMIT");
    ok(&mut s, "SET autocommit = 1");
    assert_eq!(ids(&mut s), Vec::<i64>::new());
    // A failed statement after a savepoint undoes only itself.
    ok(&mut s, "BEGIN");
    ok(&mut s, "INSERT INTO t VALUES (1, 0)");
    ok(&mut s, "SAVEPOINT y");
    ok(&mut s, "INSERT INTO t VALUES (2, 0)");
    assert_eq!(err(&mut s, "INSERT INTO t VALUES (3, 0), (1, 0)").0, 1062);
    ok(&mut s, "ROLLBACK TO y");
    ok(&mut s, "COMMIT");
    assert_eq!(ids(&mut s), [1]);
}

/// What `mariadb-dump --single-transaction` sends around each table.
#[test]
fn dump_pattern() {
    let (_e, mut s) = setup("sp-dump");
    ok(&mut s, "INSERT INTO t VALUES (1, 0), (2, 0)");
    ok(&mut s, "START TRANSACTION WITH CONSISTENT SNAPSHOT");
    ok(&mut s, "SAVEPOINT sp");
    assert_eq!(ids(&mut s), [1, 2]);
    ok(&mut s, "ROLLBACK TO SAVEPOINT sp");
    ok(&mut s, "RELEASE SAVEPOINT sp");
    ok(&mut s, "COMMIT");
}

/// Row locks taken after a savepoint stay held after ROLLBACK TO it, as
/// InnoDB keeps them, until the transaction ends.
#[test]
fn locks_after_the_savepoint_are_kept() {
    let (engine, mut a) = setup("sp-locks");
    ok(&mut a, "INSERT INTO t VALUES (1, 0)");
    ok(&mut a, "SET GLOBAL innodb_lock_wait_timeout = 1");
    let mut b = Session::new(engine, "root");
    ok(&mut b, "USE d");
    ok(&mut a, "BEGIN");
    ok(&mut a, "SAVEPOINT s");
    ok(&mut a, "UPDATE t SET k = 1 WHERE id = 1");
    ok(&mut a, "ROLLBACK TO SAVEPOINT s");
    let t0 = Instant::now();
    assert_eq!(err(&mut b, "UPDATE t SET k = 2 WHERE id = 1").0, 1205);
    assert!(t0.elapsed() >= Duration::from_millis(900));
    ok(&mut a, "COMMIT");
    ok(&mut b, "UPDATE t SET k = 2 WHERE id = 1");
    match b.execute("SELECT k FROM t").expect("select") {
        Output::Rows { rows, .. } => assert_eq!(rows, vec![vec![Value::Int(2)]]),
        other => panic!("{other:?}"),
    }
}

/// A session's `innodb_lock_wait_timeout` governs its own lock waits
/// (it was accepted and ignored: a wait lasted the global 50 s).
#[test]
fn session_lock_wait_timeout() {
    let (engine, mut a) = setup("sp-lockwait");
    ok(&mut a, "INSERT INTO t VALUES (1, 0)");
    let mut b = Session::new(engine.clone(), "root");
    ok(&mut b, "USE d");
    ok(&mut b, "SET SESSION innodb_lock_wait_timeout = 1");
    let v = |s: &mut Session, q: &str| match s.execute(q).expect(q) {
        Output::Rows { rows, .. } => rows[0][0].clone(),
        other => panic!("{other:?}"),
    };
    assert_eq!(
        v(&mut b, "SELECT @@session.innodb_lock_wait_timeout"),
        Value::Int(1)
    );
    assert_eq!(
        v(&mut b, "SELECT @@global.innodb_lock_wait_timeout"),
        Value::Int(50)
    );
    ok(&mut a, "BEGIN");
    ok(&mut a, "UPDATE t SET k = 1 WHERE id = 1");
    let t0 = Instant::now();
    assert_eq!(err(&mut b, "UPDATE t SET k = 2 WHERE id = 1").0, 1205);
    let waited = t0.elapsed();
    assert!(
        waited >= Duration::from_millis(900) && waited < Duration::from_secs(10),
        "{waited:?}"
    );
    // Set inside an open transaction: its next waits use the new value.
    ok(&mut b, "SET SESSION innodb_lock_wait_timeout = 50");
    ok(&mut b, "BEGIN");
    ok(&mut b, "SET SESSION innodb_lock_wait_timeout = 2");
    let t0 = Instant::now();
    assert_eq!(err(&mut b, "UPDATE t SET k = 2 WHERE id = 1").0, 1205);
    let waited = t0.elapsed();
    assert!(
        waited >= Duration::from_millis(1900) && waited < Duration::from_secs(10),
        "{waited:?}"
    );
    ok(&mut b, "ROLLBACK");
    // Out of range is clamped with a warning; a non-number is 1232.
    match b
        .execute("SET innodb_lock_wait_timeout = 0")
        .expect("clamp")
    {
        Output::Done { warnings, .. } => assert_eq!(warnings, 1),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        v(&mut b, "SELECT @@innodb_lock_wait_timeout"),
        Value::Int(1)
    );
    assert_eq!(err(&mut b, "SET innodb_lock_wait_timeout = 'x'").0, 1232);
    ok(&mut b, "SET innodb_lock_wait_timeout = DEFAULT");
    assert_eq!(
        v(&mut b, "SELECT @@innodb_lock_wait_timeout"),
        Value::Int(50)
    );
    ok(&mut a, "COMMIT");
    // A new session starts from the global value.
    let mut c = Session::new(engine, "root");
    assert_eq!(
        v(&mut c, "SELECT @@innodb_lock_wait_timeout"),
        Value::Int(50)
    );
}
