//! ALTER TABLE, CREATE INDEX and DROP INDEX on temporary tables
//! (temp_alter.rs), what the golden script cannot see: none reaches the
//! binary log, the session's map stays the engine's, so the end of the
//! session drops every tree the statements made, and RENAME TABLE of a
//! permanent table a temporary one shadows needs the permanent table's
//! privileges.

use std::collections::BTreeSet;

use quire_engine::{Engine, Value};
use quire_sql::Session;

mod common;
use common::{ok, open_engine, rows};

/// The binary log's current position (SHOW MASTER STATUS).
fn binlog_position(s: &mut Session) -> (Vec<u8>, Value) {
    let r = rows(s, "SHOW MASTER STATUS");
    let file = match &r[0][0] {
        Value::Bytes(b) => b.clone(),
        other => panic!("file: {other:?}"),
    };
    (file, r[0][1].clone())
}

/// Every table tree the store holds.
fn trees(e: &Engine) -> BTreeSet<String> {
    e.store()
        .indexes()
        .expect("indexes")
        .into_iter()
        .map(|(n, _)| n)
        .filter(|n| n.starts_with('t'))
        .collect()
}

const TEMP_DDL: &[&str] = &[
    "BEGIN",
    "INSERT INTO t (v) VALUES ('in a transaction')",
    "ALTER TABLE t ADD COLUMN z INT DEFAULT 7 FIRST, ADD INDEX kz (z)",
    "CREATE UNIQUE INDEX uv ON t (v)",
    "DROP INDEX kz ON t",
    "ALTER TABLE t AUTO_INCREMENT = 50",
    "ALTER TABLE t RENAME t2",
    "ALTER TABLE t2 RENAME t, MODIFY v VARCHAR(40)",
    "ALTER TABLE t RENAME COLUMN z TO zz, ALTER COLUMN z SET DEFAULT 1",
];

#[test]
fn temporary_table_ddl_reaches_no_binlog() {
    let (engine, _dir) = open_engine("tempalter-binlog");
    let mut s = Session::new(engine.clone(), "root");
    for sql in [
        "CREATE DATABASE d",
        "USE d",
        "CREATE TABLE p (id INT PRIMARY KEY)",
        "CREATE TEMPORARY TABLE t (id INT PRIMARY KEY AUTO_INCREMENT, v VARCHAR(20))",
        "INSERT INTO t (v) VALUES ('a'), ('b')",
    ] {
        ok(&mut s, sql);
    }
    let before = binlog_position(&mut s);
    for sql in TEMP_DDL {
        ok(&mut s, sql);
    }
    assert_eq!(binlog_position(&mut s), before, "temporary DDL was logged");
    let r = rows(&mut s, "SELECT COUNT(*) FROM t");
    assert_eq!(
        r[0][0],
        Value::Int(3),
        "the transaction's row was committed"
    );
    // The check can fail: a permanent table's ALTER is logged.
    ok(&mut s, "ALTER TABLE p ADD COLUMN w INT");
    assert_ne!(binlog_position(&mut s), before);
}

#[test]
fn the_end_of_the_session_drops_every_tree_the_statements_made() {
    let (engine, _dir) = open_engine("tempalter-trees");
    let mut s = Session::new(engine.clone(), "root");
    for sql in [
        "CREATE DATABASE d",
        "USE d",
        "CREATE TABLE p (id INT PRIMARY KEY)",
    ] {
        ok(&mut s, sql);
    }
    let baseline = trees(&engine);
    ok(
        &mut s,
        "CREATE TEMPORARY TABLE t (id INT PRIMARY KEY AUTO_INCREMENT, v VARCHAR(20))",
    );
    ok(&mut s, "CREATE TEMPORARY TABLE u (a INT)");
    ok(&mut s, "INSERT INTO t (v) VALUES ('a'), ('b')");
    for sql in TEMP_DDL {
        ok(&mut s, sql);
    }
    // A failed copy (duplicates), a swap of names, and RENAME TABLE of
    // the permanent table a temporary one shadows.
    assert!(s.execute("ALTER TABLE t ADD UNIQUE KEY (zz)").is_err());
    for sql in [
        "ALTER TABLE t RENAME x",
        "ALTER TABLE u RENAME t",
        "ALTER TABLE x RENAME u",
        "CREATE TEMPORARY TABLE p (b INT)",
        "RENAME TABLE p TO p2",
    ] {
        ok(&mut s, sql);
    }
    let r = rows(&mut s, "SELECT COUNT(*) FROM u");
    assert_eq!(r[0][0], Value::Int(3));
    assert!(engine.table("d", "p2").is_ok() && engine.table("d", "p").is_err());
    assert!(trees(&engine).len() > baseline.len());
    s.close();
    drop(s);
    // The trees of a definition still held go when it is let go.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while trees(&engine) != baseline && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert_eq!(trees(&engine), baseline);
}
