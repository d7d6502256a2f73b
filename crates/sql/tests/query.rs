//! The query engine against the engine's locks: a locking read locks only
//! the rows its plan reads (issue 10: tpcc-mysql's New-Order takes the
//! oldest new order of a district `ORDER BY no_o_id LIMIT 1 FOR UPDATE`,
//! and two terminals must not block each other on different rows).

use quire_sql::Session;

mod common;

fn setup(tag: &str) -> (quire_engine::Engine, std::path::PathBuf) {
    let (engine, dir) = common::open_engine(tag);
    let mut s = Session::new(engine.clone(), "root");
    for q in [
        "CREATE DATABASE d",
        "USE d",
        "CREATE TABLE new_orders (no_o_id INT, no_d_id INT, no_w_id INT, PRIMARY KEY (no_w_id, no_d_id, no_o_id))",
        "INSERT INTO new_orders VALUES (1, 1, 1), (2, 1, 1), (3, 1, 1), (4, 2, 1)",
    ] {
        s.execute(q).expect(q);
    }
    (engine, dir)
}

fn session(engine: &quire_engine::Engine) -> Session {
    let mut s = Session::new(engine.clone(), "root");
    s.execute("USE d").expect("use");
    s.execute("SET SESSION innodb_lock_wait_timeout = 1")
        .expect("timeout");
    s
}

fn code(s: &mut Session, q: &str) -> Option<u16> {
    s.execute(q).err().map(|e| e.code)
}

#[test]
fn order_by_limit_for_update_locks_only_the_first_row() {
    let (engine, _dir) = setup("q_lock_first");
    let mut a = session(&engine);
    let mut b = session(&engine);
    a.execute("BEGIN").expect("begin");
    a.execute(
        "SELECT no_o_id FROM new_orders WHERE no_d_id = 1 AND no_w_id = 1 ORDER BY no_o_id LIMIT 1 FOR UPDATE",
    )
    .expect("oldest");
    b.execute("BEGIN").expect("begin");
    // Another row of the same district is free ...
    assert_eq!(
        code(
            &mut b,
            "SELECT no_o_id FROM new_orders WHERE no_w_id = 1 AND no_d_id = 1 AND no_o_id = 3 FOR UPDATE"
        ),
        None
    );
    // ... the one A read is not (1205 after the 1 s timeout).
    assert_eq!(
        code(
            &mut b,
            "SELECT no_o_id FROM new_orders WHERE no_w_id = 1 AND no_d_id = 1 AND no_o_id = 1 FOR UPDATE"
        ),
        Some(1205)
    );
    // The newest of the district, read backwards, is also A-free.
    assert_eq!(
        code(
            &mut b,
            "SELECT no_o_id FROM new_orders WHERE no_w_id = 1 AND no_d_id = 1 ORDER BY no_o_id DESC LIMIT 1 FOR UPDATE"
        ),
        None
    );
}

/// CLIENT_FOUND_ROWS: UPDATE (single- and multi-table) and ON DUPLICATE
/// KEY UPDATE report rows found, and ROW_COUNT() follows, as MySQL.
#[test]
fn client_found_rows_counts_rows_found() {
    let (engine, _dir) = setup("q_found_rows");
    let affected = |s: &mut Session, q: &str| match s.execute(q).expect(q) {
        quire_sql::Output::Done { affected_rows, .. } => affected_rows,
        other => panic!("{q}: {other:?}"),
    };
    let mut plain = session(&engine);
    let mut found = session(&engine);
    found.set_client_found_rows(true);
    let same = "UPDATE new_orders SET no_o_id = no_o_id WHERE no_w_id = 1 AND no_d_id = 1";
    assert_eq!(affected(&mut plain, same), 0);
    assert_eq!(affected(&mut found, same), 3);
    let rows = |s: &mut Session, q: &str| match s.execute(q).expect(q) {
        quire_sql::Output::Rows { rows, .. } => format!("{rows:?}"),
        other => panic!("{q}: {other:?}"),
    };
    assert_eq!(rows(&mut found, "SELECT ROW_COUNT()"), "[[Int(3)]]");
    let multi =
        "UPDATE new_orders a JOIN new_orders b ON b.no_o_id = a.no_o_id SET a.no_d_id = a.no_d_id";
    assert_eq!(affected(&mut plain, multi), 0);
    assert_eq!(affected(&mut found, multi), 4);
    let odku = "INSERT INTO new_orders VALUES (1, 1, 1) ON DUPLICATE KEY UPDATE no_d_id = 1";
    assert_eq!(affected(&mut plain, odku), 0);
    assert_eq!(affected(&mut found, odku), 1);
}

/// `SET SESSION lock_wait_timeout` bounds this connection's metadata lock
/// waits: a CREATE INDEX behind another session's open write gives 1205
/// after 1 s, while the global value is a year.
#[test]
fn session_lock_wait_timeout_bounds_ddl_waiting_for_open_writers() {
    let (engine, _dir) = setup("q_mdl_session");
    let mut a = session(&engine);
    let mut b = session(&engine);
    a.execute("BEGIN").expect("begin");
    a.execute("INSERT INTO new_orders VALUES (9, 9, 9)")
        .expect("open write");
    b.execute("SET SESSION lock_wait_timeout = 1").expect("set");
    let t0 = std::time::Instant::now();
    assert_eq!(
        code(&mut b, "CREATE INDEX k ON new_orders (no_d_id)"),
        Some(1205)
    );
    assert!(t0.elapsed() < std::time::Duration::from_secs(30));
    // DEFAULT goes back to the global value; after A ends the DDL runs.
    b.execute("SET SESSION lock_wait_timeout = DEFAULT")
        .expect("default");
    a.execute("COMMIT").expect("commit");
    assert_eq!(code(&mut b, "CREATE INDEX k ON new_orders (no_d_id)"), None);
}

/// Readers take metadata locks as MySQL's do (issue 11): a transaction
/// that read a table holds ALTER TABLE off until it ends, so its
/// REPEATABLE READ snapshot goes on reading instead of failing with 1412;
/// autocommit reads hold the table for their statement only; a waiting
/// ALTER goes on once the reader commits.
/// Two transactions each read one table while an ALTER waits on each
/// table; then each reads the other table. The waits form a cycle through
/// both ALTERs, which quire finds at once (MySQL's MDL deadlock
/// detector): the transaction that closes it gets 1213 and is rolled
/// back, and everything else finishes, with no lock_wait_timeout.
#[test]
fn a_metadata_lock_cycle_across_tables_is_a_deadlock_not_a_hang() {
    let (engine, _dir) = setup("q_mdl_cycle");
    let mut a = session(&engine);
    let mut b = session(&engine);
    for t in ["m1", "m2"] {
        a.execute(&format!("CREATE TABLE {t} (id INT PRIMARY KEY)"))
            .expect("create");
        a.execute(&format!("INSERT INTO {t} VALUES (1)"))
            .expect("insert");
    }
    a.execute("BEGIN").expect("begin");
    a.execute("SELECT * FROM m1").expect("T1 reads m1");
    b.execute("BEGIN").expect("begin");
    b.execute("SELECT * FROM m2").expect("T2 reads m2");
    let alter = |t: &'static str| {
        let engine = engine.clone();
        std::thread::spawn(move || {
            session(&engine)
                .execute(&format!("ALTER TABLE {t} ADD COLUMN x INT"))
                .map(|_| ())
                .map_err(|e| e.code)
        })
    };
    let alter1 = alter("m1");
    let alter2 = alter("m2");
    std::thread::sleep(std::time::Duration::from_millis(200));
    let t1 = std::thread::spawn(move || {
        let r = a
            .execute("SELECT * FROM m2")
            .map(|_| ())
            .map_err(|e| e.code);
        (a, r)
    });
    std::thread::sleep(std::time::Duration::from_millis(200));
    assert!(!t1.is_finished(), "T1 waits behind the ALTER of m2");
    let started = std::time::Instant::now();
    assert_eq!(
        code(&mut b, "SELECT * FROM m1"),
        Some(1213),
        "T2 closes the cycle"
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    // T2 was rolled back: the ALTER of m2 runs, then T1 reads m2 (with
    // the new column) and commits, and the ALTER of m1 runs.
    assert_eq!(alter2.join().expect("alter m2"), Ok(()));
    let (mut a, r) = t1.join().expect("t1");
    assert_eq!(r, Ok(()), "T1 reads m2 once the ALTER of m2 is done");
    a.execute("COMMIT").expect("commit");
    assert_eq!(alter1.join().expect("alter m1"), Ok(()));
    b.execute("SELECT x FROM m1").expect("both ALTERs ran");
    b.execute("SELECT x FROM m2").expect("both ALTERs ran");
}

#[test]
fn readers_hold_alter_off_until_their_transaction_ends() {
    let (engine, _dir) = setup("q_mdl_readers");
    let mut a = session(&engine);
    let mut b = session(&engine);
    let count = |s: &mut Session| match s.execute("SELECT COUNT(*) FROM new_orders") {
        Ok(quire_sql::Output::Rows { rows, .. }) => rows[0][0].clone(),
        other => panic!("{other:?}"),
    };
    // Autocommit reads hold nothing after their statement.
    assert_eq!(count(&mut a), quire_engine::Value::Int(4));
    b.execute("SET SESSION lock_wait_timeout = 1").expect("set");
    b.execute("ALTER TABLE new_orders ADD COLUMN x INT")
        .expect("no reader open");
    a.execute("START TRANSACTION").expect("begin");
    assert_eq!(count(&mut a), quire_engine::Value::Int(4));
    for ddl in [
        "ALTER TABLE new_orders ADD COLUMN y INT",
        "ALTER TABLE new_orders DROP COLUMN x",
        "CREATE INDEX k ON new_orders (no_d_id)",
        "TRUNCATE TABLE new_orders",
        "DROP TABLE new_orders",
    ] {
        assert_eq!(code(&mut b, ddl), Some(1205), "{ddl}");
    }
    // The reader goes on, its snapshot intact.
    b.execute("INSERT INTO new_orders VALUES (7, 7, 7, 7)")
        .expect("other writers go on");
    assert_eq!(count(&mut a), quire_engine::Value::Int(4));
    a.execute("COMMIT").expect("commit");
    b.execute("ALTER TABLE new_orders DROP COLUMN x")
        .expect("the reader ended");
    assert_eq!(count(&mut a), quire_engine::Value::Int(5));
    // A waiting ALTER goes on once the reader commits.
    a.execute("BEGIN").expect("begin");
    assert_eq!(count(&mut a), quire_engine::Value::Int(5));
    let engine2 = engine.clone();
    let alter = std::thread::spawn(move || {
        let mut c = session(&engine2);
        c.execute("ALTER TABLE new_orders ADD COLUMN z INT")
            .map(|_| ())
            .map_err(|e| e.code)
    });
    std::thread::sleep(std::time::Duration::from_millis(200));
    assert!(!alter.is_finished(), "the ALTER waits for the reader");
    assert_eq!(count(&mut a), quire_engine::Value::Int(5));
    a.execute("COMMIT").expect("commit");
    assert_eq!(alter.join().expect("alter"), Ok(()));
    match a.execute("SELECT * FROM new_orders WHERE no_o_id = 7") {
        Ok(quire_sql::Output::Rows { columns, .. }) => assert_eq!(columns.len(), 4),
        other => panic!("{other:?}"),
    }
}
