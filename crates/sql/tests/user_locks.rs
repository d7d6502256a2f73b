//! User-level locks between connections (`userlock.rs`): a held lock
//! makes others wait up to their timeout, a release or a disconnect hands
//! it on, and a cycle of waits is 3058 at once rather than a wait until
//! the timeouts. Lock names are global to the process: each test uses
//! its own.

use quire_engine::Value;
use quire_sql::Session;

mod common;

fn one(s: &mut Session, q: &str) -> Value {
    match s.execute(q) {
        Ok(quire_sql::Output::Rows { rows, .. }) => rows[0][0].clone(),
        other => panic!("{q}: {other:?}"),
    }
}

fn int(s: &mut Session, q: &str) -> i64 {
    match one(s, q) {
        Value::Int(n) => n,
        Value::UInt(n) => n as i64,
        other => panic!("{q}: {other:?}"),
    }
}

#[test]
fn a_held_lock_waits_times_out_and_passes_on() {
    let (engine, _dir) = common::open_engine("ul_wait");
    let mut a = Session::new(engine.clone(), "root");
    let mut b = Session::new(engine.clone(), "root");
    assert_eq!(int(&mut a, "SELECT GET_LOCK('ul_w', 0)"), 1);
    let a_id = int(&mut a, "SELECT CONNECTION_ID()");
    assert_eq!(
        int(&mut b, "SELECT GET_LOCK('ul_w', 0)"),
        0,
        "held: no wait"
    );
    let t0 = std::time::Instant::now();
    assert_eq!(int(&mut b, "SELECT GET_LOCK('ul_w', 1)"), 0, "times out");
    assert!(
        t0.elapsed() >= std::time::Duration::from_millis(900),
        "waited"
    );
    assert_eq!(int(&mut b, "SELECT IS_USED_LOCK('ul_w')"), a_id);
    assert_eq!(
        int(&mut b, "SELECT RELEASE_LOCK('ul_w')"),
        0,
        "not b's to release"
    );
    assert_eq!(int(&mut b, "SELECT RELEASE_ALL_LOCKS()"), 0);
    // b waits; a's release hands the lock to b.
    let waiter = std::thread::spawn(move || {
        let got = int(&mut b, "SELECT GET_LOCK('ul_w', 30)");
        (b, got)
    });
    std::thread::sleep(std::time::Duration::from_millis(100));
    assert!(!waiter.is_finished(), "b waits for a");
    assert_eq!(int(&mut a, "SELECT RELEASE_LOCK('ul_w')"), 1);
    let (mut b, got) = waiter.join().expect("waiter");
    assert_eq!(got, 1, "b got the lock once a released it");
    let b_id = int(&mut b, "SELECT CONNECTION_ID()");
    assert_eq!(int(&mut a, "SELECT IS_USED_LOCK('ul_w')"), b_id);
    // A disconnect releases everything the connection held.
    drop(b);
    assert_eq!(int(&mut a, "SELECT IS_FREE_LOCK('ul_w')"), 1);
}

#[test]
fn a_cycle_of_waits_is_a_deadlock_and_a_disconnect_ends_a_wait() {
    let (engine, _dir) = common::open_engine("ul_cycle");
    let mut a = Session::new(engine.clone(), "root");
    let mut b = Session::new(engine.clone(), "root");
    assert_eq!(int(&mut a, "SELECT GET_LOCK('ul_x', 0)"), 1);
    assert_eq!(int(&mut b, "SELECT GET_LOCK('ul_y', 0)"), 1);
    let waiter = std::thread::spawn(move || {
        let got = int(&mut a, "SELECT GET_LOCK('ul_y', 30)");
        (a, got)
    });
    std::thread::sleep(std::time::Duration::from_millis(100));
    assert!(!waiter.is_finished(), "a waits for b's lock");
    let t0 = std::time::Instant::now();
    let e = b
        .execute("SELECT GET_LOCK('ul_x', 30)")
        .err()
        .map(|e| e.code);
    assert_eq!(e, Some(3058), "b would close the cycle");
    assert!(t0.elapsed() < std::time::Duration::from_secs(5), "at once");
    // b keeps its lock after the error; its disconnect frees it for a.
    assert_eq!(
        int(&mut b, "SELECT IS_USED_LOCK('ul_y') = CONNECTION_ID()"),
        1
    );
    drop(b);
    let (mut a, got) = waiter.join().expect("waiter");
    assert_eq!(got, 1, "a got b's lock when b disconnected");
    assert_eq!(int(&mut a, "SELECT RELEASE_ALL_LOCKS()"), 2);
}
