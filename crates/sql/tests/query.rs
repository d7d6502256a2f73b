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
