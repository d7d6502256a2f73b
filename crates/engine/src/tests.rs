//! Engine scenarios: isolation anomalies, locking, deadlocks, timeouts,
//! duplicate keys and statement rollback, secondary indexes and MVCC,
//! purge, durability across simulated crashes.

use std::ops::Bound;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use quire_config::Config;
use quire_io::{CrashMode, FlushMethod, SimFs, Vfs};

use crate::catalog::ColumnDef;
use crate::engine::Engine;
use crate::lock::LockMode;
use crate::txn::{Isolation, Scan};
use crate::types::{ColumnType, Value};
use crate::TableDef;

pub(crate) fn cfg() -> Config {
    Config {
        datadir: PathBuf::from("/e/data"),
        innodb_page_size: 4096,
        innodb_buffer_pool_size: 8 << 20,
        innodb_redo_log_capacity: 8 << 20,
        innodb_log_buffer_size: 256 << 10,
        innodb_log_write_ahead_size: 4096,
        ..Config::default()
    }
}

pub(crate) fn open(sim: &SimFs) -> Engine {
    let vfs: Arc<dyn Vfs> = Arc::new(sim.clone());
    Engine::open(vfs, &cfg()).expect("open engine").0
}

fn col(name: &str, ty: ColumnType, nullable: bool) -> ColumnDef {
    ColumnDef::new(name, ty, nullable)
}

fn int() -> ColumnType {
    ColumnType::Int { unsigned: false }
}

/// accounts(id INT PRIMARY KEY, owner VARCHAR(20) UNIQUE, balance INT, KEY(balance))
fn accounts(e: &Engine) -> Arc<TableDef> {
    e.create_database("bank", true).expect("db");
    e.create_table(
        "bank",
        "accounts",
        vec![
            col("id", int(), false),
            col("owner", ColumnType::varchar(20), true),
            col("balance", int(), false),
        ],
        vec![0],
        vec![
            ("owner".into(), true, vec![1]),
            ("balance".into(), false, vec![2]),
        ],
        false,
    )
    .expect("table")
}

fn s(x: &str) -> Value {
    Value::Bytes(x.as_bytes().to_vec())
}

/// The XIDs of every binlog file the index names, in order.
fn binlog_xids(sim: &SimFs) -> Vec<u64> {
    let idx = sim
        .file_bytes(&cfg().datadir.join("binlog.index"))
        .expect("index");
    let mut out = Vec::new();
    for line in String::from_utf8_lossy(&idx).lines() {
        let name = line.trim().trim_start_matches("./");
        if let Some(b) = sim.file_bytes(&cfg().datadir.join(name)) {
            out.extend(crate::binlog::format::parse_events(&b).xids);
        }
    }
    out
}

fn put(e: &Engine, t: &TableDef, id: i64, owner: &str, bal: i64) {
    let mut tx = e.begin(Isolation::RepeatableRead, false);
    tx.insert(
        t,
        vec![Some(Value::Int(id)), Some(s(owner)), Some(Value::Int(bal))],
    )
    .expect("insert");
    tx.commit().expect("commit");
}

fn balance(row: &Option<Vec<Value>>) -> i64 {
    match row.as_ref().map(|r| &r[2]) {
        Some(Value::Int(b)) => *b,
        other => panic!("no balance: {other:?}"),
    }
}

fn key(t: &TableDef, id: i64) -> Vec<u8> {
    crate::txn::Txn::encode_pk(t, &[Value::Int(id)]).expect("pk")
}

fn with_balance(row: &[Value], b: i64) -> Vec<Value> {
    let mut r = row.to_vec();
    r[2] = Value::Int(b);
    r
}

#[test]
fn no_dirty_reads_and_repeatable_reads() {
    let sim = SimFs::new(FlushMethod::Fsync);
    let e = open(&sim);
    let t = accounts(&e);
    put(&e, &t, 1, "ann", 100);

    let mut reader = e.begin(Isolation::RepeatableRead, false);
    assert_eq!(
        balance(&reader.get(&t, &[Value::Int(1)]).expect("read")),
        100
    );

    let mut writer = e.begin(Isolation::RepeatableRead, false);
    let row = writer
        .get_for(&t, &[Value::Int(1)], LockMode::Exclusive)
        .expect("lock")
        .expect("row");
    writer
        .update(&t, &key(&t, 1), with_balance(&row, 50))
        .expect("update");
    // Dirty read? The writer has not committed.
    assert_eq!(
        balance(&reader.get(&t, &[Value::Int(1)]).expect("read")),
        100,
        "dirty read"
    );
    writer.commit().expect("commit");
    // Non-repeatable read? The reader's snapshot predates the commit.
    assert_eq!(
        balance(&reader.get(&t, &[Value::Int(1)]).expect("read")),
        100,
        "non-repeatable read"
    );
    // ... also through the secondary index.
    let by_bal = reader
        .scan(
            &t,
            &Scan {
                index: Some("balance".into()),
                lower: Bound::Included(vec![Value::Int(100)]),
                upper: Bound::Included(vec![Value::Int(100)]),
                ..Scan::default()
            },
        )
        .expect("scan");
    assert_eq!(
        by_bal.len(),
        1,
        "old snapshot finds the row under its old index key"
    );
    reader.commit().expect("commit");

    let mut fresh = e.begin(Isolation::RepeatableRead, false);
    assert_eq!(balance(&fresh.get(&t, &[Value::Int(1)]).expect("read")), 50);
    let by_bal = fresh
        .scan(
            &t,
            &Scan {
                index: Some("balance".into()),
                lower: Bound::Included(vec![Value::Int(100)]),
                upper: Bound::Included(vec![Value::Int(100)]),
                ..Scan::default()
            },
        )
        .expect("scan");
    assert!(
        by_bal.is_empty(),
        "the stale index entry is not visible to new snapshots"
    );
}

#[test]
fn read_committed_sees_each_statements_latest_commit() {
    let sim = SimFs::new(FlushMethod::Fsync);
    let e = open(&sim);
    let t = accounts(&e);
    put(&e, &t, 1, "ann", 100);
    let mut rc = e.begin(Isolation::ReadCommitted, false);
    rc.statement_start();
    assert_eq!(balance(&rc.get(&t, &[Value::Int(1)]).expect("read")), 100);
    let mut w = e.begin(Isolation::RepeatableRead, false);
    let row = w
        .get_for(&t, &[Value::Int(1)], LockMode::Exclusive)
        .expect("lock")
        .expect("row");
    w.update(&t, &key(&t, 1), with_balance(&row, 7))
        .expect("update");
    w.commit().expect("commit");
    rc.statement_start();
    assert_eq!(balance(&rc.get(&t, &[Value::Int(1)]).expect("read")), 7);
}

#[test]
fn locking_reads_prevent_lost_updates() {
    let sim = SimFs::new(FlushMethod::Fsync);
    let e = open(&sim);
    let t = accounts(&e);
    put(&e, &t, 1, "ann", 0);
    std::thread::scope(|sc| {
        for _ in 0..4 {
            let (e, t) = (&e, &t);
            sc.spawn(move || {
                for _ in 0..50 {
                    let mut tx = e.begin(Isolation::RepeatableRead, false);
                    let row = tx
                        .get_for(t, &[Value::Int(1)], LockMode::Exclusive)
                        .expect("lock")
                        .expect("row");
                    let b = balance(&Some(row.clone()));
                    tx.update(t, &key(t, 1), with_balance(&row, b + 1))
                        .expect("update");
                    tx.commit().expect("commit");
                }
            });
        }
    });
    let mut tx = e.begin(Isolation::RepeatableRead, false);
    assert_eq!(
        balance(&tx.get(&t, &[Value::Int(1)]).expect("read")),
        200,
        "an increment was lost"
    );
}

#[test]
fn deadlock_is_detected_quickly_and_the_victim_gets_1213() {
    let sim = SimFs::new(FlushMethod::Fsync);
    let e = open(&sim);
    e.settings()
        .lock_wait_timeout_s
        .store(30, Ordering::Relaxed);
    let t = accounts(&e);
    put(&e, &t, 1, "ann", 10);
    put(&e, &t, 2, "bob", 10);
    let mut t1 = e.begin(Isolation::RepeatableRead, false);
    let mut t2 = e.begin(Isolation::RepeatableRead, false);
    t1.get_for(&t, &[Value::Int(1)], LockMode::Exclusive)
        .expect("t1 locks 1");
    t2.get_for(&t, &[Value::Int(2)], LockMode::Exclusive)
        .expect("t2 locks 2");
    let start = Instant::now();
    let (r1, r2) = std::thread::scope(|sc| {
        let h = sc.spawn(|| {
            let r = t1
                .get_for(&t, &[Value::Int(2)], LockMode::Exclusive)
                .map(|_| ());
            if r.is_err() {
                t1.rollback();
            } else {
                t1.commit().expect("commit");
            }
            r
        });
        std::thread::sleep(Duration::from_millis(50));
        let r2 = t2
            .get_for(&t, &[Value::Int(1)], LockMode::Exclusive)
            .map(|_| ());
        if r2.is_err() {
            t2.rollback();
        } else {
            t2.commit().expect("commit");
        }
        (h.join().expect("thread"), r2)
    });
    let elapsed = start.elapsed();
    let errs: Vec<_> = [&r1, &r2]
        .into_iter()
        .filter_map(|r| r.as_ref().err())
        .collect();
    assert_eq!(errs.len(), 1, "exactly one victim: {r1:?} {r2:?}");
    assert_eq!(errs[0].code, 1213);
    assert_eq!(errs[0].sqlstate, "40001");
    assert_eq!(
        errs[0].message,
        "Deadlock found when trying to get lock; try restarting transaction"
    );
    assert!(
        elapsed < Duration::from_secs(5),
        "took {elapsed:?} (timeout is 30 s)"
    );
    assert!(e
        .status()
        .iter()
        .any(|(k, v)| k == "Innodb_deadlocks" && *v >= 1));
}

#[test]
fn lock_wait_timeout_gives_1205_and_the_transaction_goes_on() {
    let sim = SimFs::new(FlushMethod::Fsync);
    let e = open(&sim);
    e.settings().lock_wait_timeout_s.store(1, Ordering::Relaxed);
    let t = accounts(&e);
    put(&e, &t, 1, "ann", 10);
    put(&e, &t, 2, "bob", 10);
    let mut holder = e.begin(Isolation::RepeatableRead, false);
    holder
        .get_for(&t, &[Value::Int(1)], LockMode::Exclusive)
        .expect("lock");
    let mut waiter = e.begin(Isolation::RepeatableRead, false);
    let start = Instant::now();
    let err = waiter
        .get_for(&t, &[Value::Int(1)], LockMode::Shared)
        .expect_err("must time out");
    assert!(start.elapsed() >= Duration::from_millis(900));
    assert_eq!((err.code, err.sqlstate), (1205, "HY000"));
    assert_eq!(
        err.message,
        "Lock wait timeout exceeded; try restarting transaction"
    );
    // The waiter's transaction is still usable.
    let row = waiter
        .get_for(&t, &[Value::Int(2)], LockMode::Exclusive)
        .expect("other row")
        .expect("row");
    waiter
        .update(&t, &key(&t, 2), with_balance(&row, 11))
        .expect("update");
    waiter.commit().expect("commit");
    holder.rollback();
}

#[test]
fn duplicate_key_rolls_back_the_statement_only() {
    let sim = SimFs::new(FlushMethod::Fsync);
    let e = open(&sim);
    let t = accounts(&e);
    put(&e, &t, 1, "ann", 10);
    let mut tx = e.begin(Isolation::RepeatableRead, false);
    tx.insert(
        &t,
        vec![Some(Value::Int(2)), Some(s("bob")), Some(Value::Int(5))],
    )
    .expect("insert 2");
    // A two-row statement whose second row collides on the primary key.
    let sp = tx.savepoint();
    tx.insert(
        &t,
        vec![Some(Value::Int(3)), Some(s("cy")), Some(Value::Int(5))],
    )
    .expect("insert 3");
    let err = tx
        .insert(
            &t,
            vec![Some(Value::Int(1)), Some(s("dup")), Some(Value::Int(5))],
        )
        .expect_err("duplicate");
    assert_eq!((err.code, err.sqlstate), (1062, "23000"));
    assert_eq!(
        err.message,
        "Duplicate entry '1' for key 'accounts.PRIMARY'"
    );
    tx.rollback_to(sp);
    // Unique secondary key.
    let err = tx
        .insert(
            &t,
            vec![Some(Value::Int(4)), Some(s("ann")), Some(Value::Int(5))],
        )
        .expect_err("duplicate owner");
    assert_eq!(
        err.message,
        "Duplicate entry 'ann' for key 'accounts.owner'"
    );
    tx.commit().expect("the transaction is still usable");
    let mut r = e.begin(Isolation::RepeatableRead, false);
    let all = r.scan(&t, &Scan::default()).expect("scan");
    let ids: Vec<Value> = all.iter().map(|row| row.values[0].clone()).collect();
    assert_eq!(
        ids,
        vec![Value::Int(1), Value::Int(2)],
        "row 3 was rolled back with its statement"
    );
}

#[test]
fn unique_insert_waits_for_the_first_inserter() {
    let sim = SimFs::new(FlushMethod::Fsync);
    let e = open(&sim);
    let t = accounts(&e);
    let mut t1 = e.begin(Isolation::RepeatableRead, false);
    t1.insert(
        &t,
        vec![Some(Value::Int(1)), Some(s("same")), Some(Value::Int(0))],
    )
    .expect("t1");
    std::thread::scope(|sc| {
        let h = sc.spawn(|| {
            let mut t2 = e.begin(Isolation::RepeatableRead, false);
            let r = t2.insert(
                &t,
                vec![Some(Value::Int(2)), Some(s("same")), Some(Value::Int(0))],
            );
            (r.map(|_| ()), t2)
        });
        std::thread::sleep(Duration::from_millis(100));
        t1.commit().expect("commit");
        let (r, t2) = h.join().expect("thread");
        let err = r.expect_err("the second inserter sees the first's commit");
        assert_eq!(err.code, 1062);
        t2.rollback();
    });
}

#[test]
fn scans_in_both_directions_with_own_writes_merged() {
    let sim = SimFs::new(FlushMethod::Fsync);
    let e = open(&sim);
    let t = accounts(&e);
    for i in 0..50 {
        put(&e, &t, i, &format!("o{i}"), i * 10);
    }
    let mut tx = e.begin(Isolation::RepeatableRead, false);
    tx.delete(&t, &key(&t, 10)).expect("delete");
    tx.insert(
        &t,
        vec![Some(Value::Int(100)), Some(s("new")), Some(Value::Int(505))],
    )
    .expect("insert");
    let fwd = tx
        .scan(
            &t,
            &Scan {
                lower: Bound::Included(vec![Value::Int(8)]),
                upper: Bound::Excluded(vec![Value::Int(13)]),
                ..Scan::default()
            },
        )
        .expect("scan");
    let ids: Vec<_> = fwd.iter().map(|r| r.values[0].clone()).collect();
    assert_eq!(
        ids,
        vec![Value::Int(8), Value::Int(9), Value::Int(11), Value::Int(12)]
    );
    let back = tx
        .scan(
            &t,
            &Scan {
                index: Some("balance".into()),
                lower: Bound::Included(vec![Value::Int(470)]),
                reverse: true,
                limit: Some(3),
                ..Scan::default()
            },
        )
        .expect("scan");
    let bals: Vec<_> = back.iter().map(|r| r.values[2].clone()).collect();
    assert_eq!(
        bals,
        vec![Value::Int(505), Value::Int(490), Value::Int(480)],
        "own insert merged in order"
    );
    let high = tx
        .scan(
            &t,
            &Scan {
                index: Some("balance".into()),
                lower: Bound::Excluded(vec![Value::Int(490)]),
                ..Scan::default()
            },
        )
        .expect("scan");
    assert_eq!(high.len(), 1, "own insert found through the index");
    assert_eq!(high[0].values[0], Value::Int(100));
}

#[test]
fn create_index_on_a_populated_table() {
    let sim = SimFs::new(FlushMethod::Fsync);
    let e = open(&sim);
    let t = accounts(&e);
    for i in 0..200 {
        put(&e, &t, i, &format!("o{i}"), i % 7);
    }
    // A snapshot taken before the build (WITH CONSISTENT SNAPSHOT: no
    // table used yet, so the build does not wait for it).
    let mut old = e.begin(Isolation::RepeatableRead, false);
    old.open_snapshot();
    let t2 = e
        .create_index("bank", "accounts", "bal2", false, vec![2], None)
        .expect("create index");
    let mut tx = e.begin(Isolation::RepeatableRead, false);
    let rows = tx
        .scan(
            &t2,
            &Scan {
                index: Some("bal2".into()),
                lower: Bound::Included(vec![Value::Int(3)]),
                upper: Bound::Included(vec![Value::Int(3)]),
                ..Scan::default()
            },
        )
        .expect("scan");
    assert_eq!(rows.len(), (0..200).filter(|i| i % 7 == 3).count());
    let err = old
        .scan(
            &t2,
            &Scan {
                index: Some("bal2".into()),
                ..Scan::default()
            },
        )
        .expect_err("older snapshot");
    assert_eq!(err.code, 1412);
    let dup = e
        .create_index("bank", "accounts", "u_bal", true, vec![2], None)
        .expect_err("duplicates");
    assert_eq!(dup.code, 1062);
}

/// CREATE UNIQUE INDEX waits for the open writers of its table (table
/// metadata locks, mdl.rs): a row buffered by an open transaction was
/// never checked against the new index, so building first and applying
/// that row later would put a duplicate in a UNIQUE index. Here the
/// build waits, the writer commits a duplicate, and the build then finds
/// it (1062). With `lock_wait_timeout` short the DDL gives up with 1205
/// and writers go on.
#[test]
fn create_unique_index_waits_for_open_writers_of_the_table() {
    let sim = SimFs::new(FlushMethod::Fsync);
    let e = open(&sim);
    let t = accounts(&e);
    for i in 0..10 {
        put(&e, &t, i, &format!("o{i}"), i);
    }
    // An open writer with a balance that duplicates row 3's.
    let mut w = e.begin(Isolation::RepeatableRead, false);
    w.insert(
        &t,
        vec![Some(Value::Int(100)), Some(s("dup")), Some(Value::Int(3))],
    )
    .expect("insert");
    let e2 = e.clone();
    let ddl = std::thread::spawn(move || {
        e2.create_index("bank", "accounts", "u_bal", true, vec![2], None)
            .map(|_| ())
            .map_err(|err| err.code)
    });
    std::thread::sleep(std::time::Duration::from_millis(100));
    assert!(!ddl.is_finished(), "the DDL waits for the open writer");
    w.commit().expect("the writer commits");
    assert_eq!(
        ddl.join().expect("ddl"),
        Err(1062),
        "the duplicate is found"
    );
    assert!(e
        .table("bank", "accounts")
        .expect("t")
        .index("u_bal")
        .is_none());
    // A DDL that cannot get the table in time: 1205, nothing changed.
    e.set_global("lock_wait_timeout", "1").expect("set");
    let mut w = e.begin(Isolation::RepeatableRead, false);
    w.insert(
        &t,
        vec![Some(Value::Int(101)), Some(s("w2")), Some(Value::Int(50))],
    )
    .expect("insert");
    let err = e
        .create_index("bank", "accounts", "bal2", false, vec![2], None)
        .expect_err("timed out");
    assert_eq!(err.code, 1205, "{err}");
    w.commit().expect("the writer still commits");
    put(&e, &t, 102, "after", 51);
    e.create_index("bank", "accounts", "bal2", false, vec![2], None)
        .expect("no writer open: the index is built");
}

/// A transaction that read a table holds its metadata lock to its end,
/// as MySQL's shared MDL: CREATE INDEX waits for it (1205 after
/// `lock_wait_timeout`), so its REPEATABLE READ snapshot never meets the
/// new index (1412) while it runs; once it ends the build goes on. A
/// reader that writes while the build waits for it is the deadlock's
/// victim (1213), and the build then goes on.
#[test]
fn readers_hold_ddl_off_until_their_transaction_ends() {
    let sim = SimFs::new(FlushMethod::Fsync);
    let e = open(&sim);
    let t = accounts(&e);
    for i in 0..20 {
        put(&e, &t, i, &format!("o{i}"), i % 3);
    }
    let mut r = e.begin(Isolation::RepeatableRead, false);
    r.get(&t, &[Value::Int(0)]).expect("read");
    e.set_global("lock_wait_timeout", "1").expect("set");
    let err = e
        .create_index("bank", "accounts", "bal2", false, vec![2], None)
        .expect_err("the reader holds the table");
    assert_eq!(err.code, 1205, "{err}");
    e.set_global("lock_wait_timeout", "30").expect("set");
    let e2 = e.clone();
    let ddl = std::thread::spawn(move || {
        e2.create_index("bank", "accounts", "bal2", false, vec![2], None)
            .map(|_| ())
            .map_err(|err| err.code)
    });
    std::thread::sleep(std::time::Duration::from_millis(100));
    assert!(!ddl.is_finished(), "the build waits for the reader");
    let all = r.scan(&t, &Scan::default()).expect("the reader reads on");
    assert_eq!(all.len(), 20);
    r.commit().expect("the reader ends");
    assert_eq!(ddl.join().expect("ddl"), Ok(()));
    let t2 = e.table("bank", "accounts").expect("t");
    let mut fresh = e.begin(Isolation::RepeatableRead, false);
    let by_bal = Scan {
        index: Some("bal2".into()),
        ..Scan::default()
    };
    assert_eq!(fresh.scan(&t2, &by_bal).expect("index").len(), 20);
    fresh.commit().expect("commit");
    // A reader that writes while a DDL waits for it: 1213 at once.
    let mut r = e.begin(Isolation::RepeatableRead, false);
    r.get(&t2, &[Value::Int(1)]).expect("read");
    let e2 = e.clone();
    let ddl = std::thread::spawn(move || {
        e2.create_index("bank", "accounts", "bal3", false, vec![2], None)
            .map(|_| ())
            .map_err(|err| err.code)
    });
    // Wait until the build waits for `r` with the table exclusive: a new
    // reader then times out (the build's own wait keeps its 30 s).
    std::thread::sleep(std::time::Duration::from_millis(50));
    e.set_global("lock_wait_timeout", "1").expect("set");
    let t0 = std::time::Instant::now();
    loop {
        let mut probe = e.begin(Isolation::RepeatableRead, false);
        match probe.get(&t2, &[Value::Int(2)]) {
            Err(err) if err.code == 1205 => break,
            Err(err) => panic!("unexpected {err}"),
            Ok(_) => probe.rollback(),
        }
        assert!(t0.elapsed().as_secs() < 20, "the build never waited");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let err = r
        .insert(
            &t2,
            vec![Some(Value::Int(500)), Some(s("w")), Some(Value::Int(1))],
        )
        .expect_err("the build waits for this reader");
    assert_eq!(err.code, 1213);
    r.rollback();
    assert_eq!(ddl.join().expect("ddl"), Ok(()), "the build goes on");
}

#[test]
fn old_versions_are_purged_and_memory_stays_bounded() {
    let sim = SimFs::new(FlushMethod::Fsync);
    let e = open(&sim);
    let t = accounts(&e);
    for i in 0..20 {
        put(&e, &t, i, &format!("o{i}"), 0);
    }
    let versions = |e: &Engine| {
        e.status()
            .into_iter()
            .find(|(k, _)| k == "Quire_mvcc_versions")
            .map(|x| x.1)
            .expect("counter")
    };
    let update_all = |round: i64| {
        for i in 0..20 {
            let mut tx = e.begin(Isolation::RepeatableRead, false);
            let row = tx
                .get_for(&t, &[Value::Int(i)], LockMode::Exclusive)
                .expect("lock")
                .expect("row");
            tx.update(&t, &key(&t, i), with_balance(&row, round))
                .expect("update");
            tx.commit().expect("commit");
        }
    };
    for round in 0..20 {
        update_all(round);
    }
    assert_eq!(
        versions(&e),
        0,
        "no snapshot open: every old version purged"
    );
    // A long-running snapshot pins versions...
    let mut long = e.begin(Isolation::RepeatableRead, false);
    assert_eq!(balance(&long.get(&t, &[Value::Int(3)]).expect("read")), 19);
    for round in 100..110 {
        update_all(round);
    }
    assert_eq!(versions(&e), 200);
    assert_eq!(
        balance(&long.get(&t, &[Value::Int(3)]).expect("read")),
        19,
        "still its snapshot"
    );
    long.commit().expect("end");
    // ... and they go with the next commit after it ends.
    update_all(200);
    assert_eq!(versions(&e), 0);
}

#[test]
fn commits_survive_power_loss_all_or_nothing() {
    for seed in 0..5u64 {
        let sim = SimFs::new(FlushMethod::Fsync);
        {
            let e = open(&sim);
            let t = accounts(&e);
            for i in 0..10 {
                put(&e, &t, i, &format!("o{i}"), 100);
            }
            // Transfers: each moves 1 between two accounts; total stays 1000.
            for n in 0..300i64 {
                let (a, b) = (n % 10, (n * 7 + 3) % 10);
                if a == b {
                    continue;
                }
                let mut tx = e.begin(Isolation::RepeatableRead, false);
                let ra = tx
                    .get_for(&t, &[Value::Int(a)], LockMode::Exclusive)
                    .expect("a")
                    .expect("row");
                let rb = tx
                    .get_for(&t, &[Value::Int(b)], LockMode::Exclusive)
                    .expect("b")
                    .expect("row");
                let (ba, bb) = (balance(&Some(ra.clone())), balance(&Some(rb.clone())));
                tx.update(&t, &key(&t, a), with_balance(&ra, ba - 1))
                    .expect("update");
                tx.update(&t, &key(&t, b), with_balance(&rb, bb + 1))
                    .expect("update");
                tx.commit().expect("commit");
            }
            e.close(false).expect("close");
        }
        sim.crash(CrashMode::Power { sector: 512 }, seed);
        let e = open(&sim);
        let t = e.table("bank", "accounts").expect("table");
        let mut tx = e.begin(Isolation::RepeatableRead, false);
        let rows = tx.scan(&t, &Scan::default()).expect("scan");
        assert_eq!(rows.len(), 10, "seed {seed}");
        let total: i64 = rows.iter().map(|r| balance(&Some(r.values.clone()))).sum();
        assert_eq!(total, 1000, "seed {seed}: a transfer was applied in part");
        // trx_commit=1: every acknowledged transfer survived; the last one
        // moved account 9's... check one known final value: recompute.
        let mut expect = [100i64; 10];
        for n in 0..300i64 {
            let (a, b) = ((n % 10) as usize, ((n * 7 + 3) % 10) as usize);
            if a != b {
                expect[a] -= 1;
                expect[b] += 1;
            }
        }
        let got: Vec<i64> = rows
            .iter()
            .map(|r| balance(&Some(r.values.clone())))
            .collect();
        assert_eq!(
            got,
            expect.to_vec(),
            "seed {seed}: an acknowledged commit was lost"
        );
    }
}

/// `AUTO_INCREMENT=n` at CREATE TABLE: the first value is n, after a
/// crash too; a table created without it starts at 1.
#[test]
fn auto_increment_table_option_sets_the_first_value_and_survives_a_crash() {
    let sim = SimFs::new(FlushMethod::Fsync);
    let mut c = col("id", ColumnType::BigInt { unsigned: true }, false);
    c.auto_increment = true;
    let spec = |start| crate::NewTable {
        columns: vec![c.clone(), col("v", int(), true)],
        primary: vec![0],
        indexes: vec![],
        auto_increment: start,
        ..crate::NewTable::default()
    };
    {
        let e = open(&sim);
        e.create_database("d", false).expect("db");
        let t = e
            .create_table_with("d", "t", spec(Some(500)), false)
            .expect("table");
        assert_eq!(e.peek_auto_increment(t.id).expect("peek"), 500);
        let u = e.create_table_with("d", "u", spec(None), false).expect("u");
        assert_eq!(e.peek_auto_increment(u.id).expect("peek"), 1);
        e.store().sync_log().expect("sync");
        e.close(false).expect("close");
    }
    sim.crash(CrashMode::Process, 0);
    let e = open(&sim);
    // One committed insert with an automatic id; the id it got.
    let insert_auto = |name: &str| {
        let t = e.table("d", name).expect("table");
        let mut tx = e.begin(Isolation::RepeatableRead, false);
        let got = tx.insert(&t, vec![None, Some(Value::Int(1))]);
        tx.commit().expect("commit");
        got.expect("insert").auto_id.expect("id")
    };
    assert_eq!(insert_auto("t"), 500);
    assert_eq!(insert_auto("u"), 1);
}

#[test]
fn auto_increment_is_not_reused_after_restart() {
    let sim = SimFs::new(FlushMethod::Fsync);
    let mut c = col("id", ColumnType::BigInt { unsigned: true }, false);
    c.auto_increment = true;
    let first;
    {
        let e = open(&sim);
        e.create_database("d", false).expect("db");
        let t = e
            .create_table(
                "d",
                "t",
                vec![c.clone(), col("v", int(), true)],
                vec![0],
                vec![],
                false,
            )
            .expect("table");
        let mut tx = e.begin(Isolation::RepeatableRead, false);
        first = tx
            .insert(&t, vec![None, Some(Value::Int(1))])
            .expect("insert")
            .auto_id
            .expect("id");
        tx.commit().expect("commit");
        let mut tx = e.begin(Isolation::RepeatableRead, false);
        let rolled = tx
            .insert(&t, vec![None, Some(Value::Int(2))])
            .expect("insert")
            .auto_id
            .expect("id");
        assert_eq!(rolled, first + 1);
        tx.rollback();
        e.store().sync_log().expect("sync");
        e.close(false).expect("close");
    }
    sim.crash(CrashMode::Process, 0);
    let e = open(&sim);
    let t = e.table("d", "t").expect("table");
    let mut tx = e.begin(Isolation::RepeatableRead, false);
    let next = tx
        .insert(&t, vec![None, Some(Value::Int(3))])
        .expect("insert")
        .auto_id
        .expect("id");
    assert_eq!(
        next,
        first + 2,
        "the rolled-back value is not handed out again"
    );
}

#[test]
fn flush_log_at_trx_commit_decides_the_fsyncs() {
    let sim = SimFs::new(FlushMethod::Fsync);
    let e = open(&sim);
    let t = accounts(&e);
    let fsyncs = |e: &Engine| {
        e.status()
            .into_iter()
            .find(|(k, _)| k == "Innodb_os_log_fsyncs")
            .map(|x| x.1)
            .expect("counter")
    };
    for (mode, base) in [(1u32, 0i64), (2, 100), (0, 200)] {
        e.set_flush_log_at_trx_commit(mode).expect("set");
        let before = fsyncs(&e);
        for i in 0..20 {
            put(&e, &t, base + i, &format!("m{mode}-{i}"), 0);
        }
        let n = fsyncs(&e) - before;
        match mode {
            1 => assert!(n >= 20, "one fsync per serial commit at 1, got {n}"),
            _ => assert!(n <= 2, "no fsync per commit at {mode}, got {n}"),
        }
    }
    assert!(e.set_flush_log_at_trx_commit(3).is_err());
}

#[test]
fn set_global_changes_the_running_engine_with_mysql_errors() {
    let sim = SimFs::new(FlushMethod::Fsync);
    let e = open(&sim);
    e.set_global("binlog_group_commit_sync_delay", "10")
        .expect("set");
    assert_eq!(e.settings().sync_delay_us.load(Ordering::Relaxed), 10);
    e.set_global("sync_binlog", "1000").expect("set");
    assert_eq!(e.config().sync_binlog, 1000);
    let err = e
        .set_global("innodb_page_size", "4096")
        .expect_err("read-only");
    assert_eq!(err.code, 1238);
    let err = e.set_global("no_such_var", "1").expect_err("unknown");
    assert_eq!(err.code, 1193);
    let err = e.set_global("sync_binlog", "-1").expect_err("range");
    assert_eq!(err.code, 1231);
}

#[test]
fn a_crash_mid_ddl_leaves_the_old_or_the_new_definition() {
    for n in 0..60u64 {
        let sim = SimFs::new(FlushMethod::Fsync);
        {
            let e = open(&sim);
            e.create_database("d", false).expect("db");
            e.store().sync_log().expect("sync");
            sim.arm_crash_after(n);
            let _ = e.create_table(
                "d",
                "t",
                vec![col("id", int(), false), col("v", int(), true)],
                vec![0],
                vec![("v".into(), false, vec![1])],
                false,
            );
            let _ = e.store().sync_log();
            let _ = e.close(false);
        }
        sim.crash(CrashMode::Power { sector: 512 }, n);
        let e = open(&sim);
        match e.table("d", "t") {
            Err(err) => assert_eq!(err.code, 1146, "crash point {n}: {err}"),
            Ok(t) => {
                // Complete and usable: insert and read back through the index.
                let mut tx = e.begin(Isolation::RepeatableRead, false);
                tx.insert(&t, vec![Some(Value::Int(1)), Some(Value::Int(5))])
                    .expect("insert");
                tx.commit().expect("commit");
                let mut tx = e.begin(Isolation::RepeatableRead, false);
                let rows = tx
                    .scan(
                        &t,
                        &Scan {
                            index: Some("v".into()),
                            ..Scan::default()
                        },
                    )
                    .expect("scan");
                assert_eq!(rows.len(), 1, "crash point {n}");
            }
        }
    }
}

/// An fsync failure in the binlog or redo sync stage fails every member of
/// the group, acknowledges nothing afterwards, and the directory recovers
/// to exactly what the binlog holds.
#[test]
fn a_failed_sync_fails_the_whole_group_and_recovers_cleanly() {
    for target in ["binlog.", "#ib_redo"] {
        let sim = SimFs::new(FlushMethod::Fsync);
        let acked: Vec<i64>;
        {
            let e = open(&sim);
            let t = accounts(&e);
            put(&e, &t, 0, "seed", 0);
            sim.inject(quire_io::Fault::sync(quire_io::FaultKind::Eio, 3).on_path(target));
            let results: Vec<(i64, bool)> = std::thread::scope(|sc| {
                let hs: Vec<_> = (1..=8i64)
                    .map(|th| {
                        let (e, t) = (&e, &t);
                        sc.spawn(move || {
                            let mut out = Vec::new();
                            for n in 0..10 {
                                let id = th * 100 + n;
                                let mut tx = e.begin(Isolation::RepeatableRead, false);
                                let ok = tx
                                    .insert(
                                        t,
                                        vec![
                                            Some(Value::Int(id)),
                                            Some(s(&format!("o{id}"))),
                                            Some(Value::Int(1)),
                                        ],
                                    )
                                    .is_ok()
                                    && tx.commit().is_ok();
                                out.push((id, ok));
                            }
                            out
                        })
                    })
                    .collect();
                hs.into_iter()
                    .flat_map(|h| h.join().expect("thread"))
                    .collect()
            });
            let failed = results.iter().filter(|r| !r.1).count();
            assert!(
                failed > 0,
                "{target}: the injected fsync error must fail commits"
            );
            acked = results.iter().filter(|r| r.1).map(|r| r.0).collect();
            // Sticky: nothing is acknowledged after the failure.
            let mut tx = e.begin(Isolation::RepeatableRead, false);
            let late = tx
                .insert(
                    &t,
                    vec![Some(Value::Int(9999)), Some(s("late")), Some(Value::Int(1))],
                )
                .and_then(|_| tx.commit());
            assert!(
                late.is_err(),
                "{target}: a commit after the failure was acknowledged"
            );
            let _ = e.close(false);
        }
        sim.crash(CrashMode::Process, 7);
        let e = open(&sim);
        let t = e.table("bank", "accounts").expect("table");
        let mut tx = e.begin(Isolation::RepeatableRead, false);
        let ids: Vec<i64> = tx
            .scan(&t, &Scan::default())
            .expect("scan")
            .iter()
            .map(|r| match r.values[0] {
                Value::Int(i) => i,
                _ => -1,
            })
            .collect();
        for a in &acked {
            assert!(ids.contains(a), "{target}: acknowledged id {a} lost");
        }
        // The engine holds exactly what the binlog holds.
        let binlog_xids = binlog_xids(&sim).len();
        // Every committed transaction is one insert (the table setup put
        // one row through a transaction too).
        assert_eq!(
            ids.len(),
            binlog_xids,
            "{target}: engine and binlog disagree"
        );
        assert!(!ids.contains(&9999));
    }
}

#[test]
fn binlog_off_commits_survive_power_loss_too() {
    let sim = SimFs::new(FlushMethod::Fsync);
    let off = Config {
        log_bin: false,
        ..cfg()
    };
    let vfs: Arc<dyn Vfs> = Arc::new(sim.clone());
    {
        let (e, _) = Engine::open(vfs.clone(), &off).expect("open");
        assert!(e.binlog().is_none());
        let t = accounts(&e);
        for i in 0..50 {
            put(&e, &t, i, &format!("o{i}"), i);
        }
        e.close(false).expect("close");
    }
    sim.crash(CrashMode::Power { sector: 4096 }, 3);
    let (e, _) = Engine::open(vfs, &off).expect("reopen");
    let t = e.table("bank", "accounts").expect("table");
    let mut tx = e.begin(Isolation::RepeatableRead, false);
    assert_eq!(tx.scan(&t, &Scan::default()).expect("scan").len(), 50);
}

#[test]
fn drop_table_frees_every_page_even_across_a_crash() {
    for crash_at in [None, Some(5u64), Some(40)] {
        let sim = SimFs::new(FlushMethod::Fsync);
        {
            let e = open(&sim);
            let t = accounts(&e);
            for i in 0..400 {
                put(&e, &t, i, &format!("owner-{i}"), i);
            }
            e.store().checkpoint().expect("checkpoint");
            if let Some(n) = crash_at {
                sim.arm_crash_after(n);
            }
            let r = e.drop_table("bank", "accounts", None);
            if crash_at.is_none() {
                r.expect("drop");
                assert_eq!(e.table("bank", "accounts").expect_err("gone").code, 1146);
            }
            let _ = e.close(crash_at.is_none());
        }
        sim.crash(CrashMode::Power { sector: 512 }, 9);
        let e = open(&sim);
        // Either the table is gone, or (crash before the catalog change) it
        // is whole; never half.
        if let Ok(t) = e.table("bank", "accounts") {
            let mut tx = e.begin(Isolation::RepeatableRead, false);
            assert_eq!(tx.scan(&t, &Scan::default()).expect("scan").len(), 400);
            e.drop_table("bank", "accounts", None)
                .expect("drop after restart");
        }
        e.close(true).expect("close");
        drop(e);
        let vfs: Arc<dyn Vfs> = Arc::new(sim.clone());
        let r = crate::offpage::check_datadir(&vfs, &cfg().datadir).expect("check");
        assert!(r.is_ok(), "{crash_at:?}: {:?}", r.errors);
        let names: Vec<String> = {
            let e = open(&sim);
            e.store()
                .indexes()
                .expect("dir")
                .into_iter()
                .map(|x| x.0)
                .collect()
        };
        assert!(
            !names.iter().any(|n| n.starts_with("t1.")),
            "{crash_at:?}: trees left: {names:?}"
        );
    }
}

#[test]
fn an_oversized_row_is_refused_before_commit_and_the_store_goes_on() {
    let sim = SimFs::new(FlushMethod::Fsync);
    let e = open(&sim);
    e.create_database("d", false).expect("db");
    // 40 columns of 40 bytes: none may go off-page (InnoDB's 40-byte
    // rule), and together they pass a 4 KiB page's in-row limit.
    let mut cols = vec![col("id", int(), false)];
    for i in 0..40 {
        cols.push(col(&format!("c{i}"), ColumnType::varchar(40), true));
    }
    cols.push(col(
        "b",
        ColumnType::Blob {
            max_bytes: 4_294_967_295,
        },
        true,
    ));
    let t = e
        .create_table("d", "t", cols, vec![0], vec![], false)
        .expect("table");
    let row = |id: i64, short: usize, blob: usize| {
        let mut v = vec![Some(Value::Int(id))];
        v.extend((0..40).map(|_| Some(Value::Bytes(vec![b'x'; short]))));
        v.push(Some(Value::Bytes(vec![b'y'; blob])));
        v
    };
    let mut tx = e.begin(Isolation::RepeatableRead, false);
    let err = tx
        .insert(&t, row(1, 40, 10))
        .expect_err("too large for a 4 KiB page");
    assert_eq!((err.code, err.sqlstate), (1118, "42000"), "{}", err.message);
    tx.insert(&t, row(2, 10, 500_000))
        .expect("a long value goes off-page");
    tx.commit().expect("commit");
    e.close(false).expect("close");
    drop(e);
    sim.crash(CrashMode::Process, 1);
    let e = open(&sim);
    let t = e.table("d", "t").expect("table");
    let mut tx = e.begin(Isolation::RepeatableRead, false);
    let rows = tx.scan(&t, &Scan::default()).expect("scan");
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].values[41], Value::Bytes(vec![b'y'; 500_000]));
}

#[test]
fn auto_increment_exhausted_is_an_error_not_a_panic() {
    let sim = SimFs::new(FlushMethod::Fsync);
    let e = open(&sim);
    e.create_database("d", false).expect("db");
    let mut c = col("id", ColumnType::BigInt { unsigned: true }, false);
    c.auto_increment = true;
    let t = e
        .create_table(
            "d",
            "t",
            vec![c, col("v", int(), true)],
            vec![0],
            vec![],
            false,
        )
        .expect("table");
    let mut tx = e.begin(Isolation::RepeatableRead, false);
    tx.insert(&t, vec![Some(Value::UInt(u64::MAX)), Some(Value::Int(1))])
        .expect("max id");
    let err = tx
        .insert(&t, vec![None, Some(Value::Int(2))])
        .expect_err("exhausted");
    assert_eq!(err.code, 1467);
    let big: crate::types::Decimal = "1e9223372036854775807"
        .parse()
        .unwrap_or_else(|_| crate::types::Decimal::from_i64(0));
    let _ = big; // parsing must not panic (overflow is an error or a value)
    let _ = "1.5e-9223372036854775807".parse::<crate::types::Decimal>();
}

#[test]
fn a_rejected_auto_increment_value_does_not_move_the_counter() {
    let sim = SimFs::new(FlushMethod::Fsync);
    let e = open(&sim);
    e.create_database("d", false).expect("db");
    let mut c = col("id", int(), false);
    c.auto_increment = true;
    let t = e
        .create_table(
            "d",
            "t",
            vec![c, col("v", int(), true)],
            vec![0],
            vec![],
            false,
        )
        .expect("table");
    let mut tx = e.begin(Isolation::RepeatableRead, false);
    let err = tx
        .insert(&t, vec![Some(Value::Int(i64::MAX)), Some(Value::Int(1))])
        .expect_err("out of range for INT");
    assert_eq!(err.code, 1264);
    let id = tx
        .insert(&t, vec![None, Some(Value::Int(2))])
        .expect("next insert")
        .auto_id;
    assert_eq!(
        id,
        Some(1),
        "the rejected value must not have moved the counter"
    );
}

/// At trx_commit=1 a group's redo and binlog fsyncs run at the same time.
/// When the binlog one completes and the redo one does not (here: EIO,
/// which drops the unsynced redo like Linux does), the binlog holds a
/// transaction whose PREPARE record is gone. It was never acknowledged;
/// recovery must cut it from the binlog, so that engine and binlog agree.
#[test]
fn a_binlog_transaction_whose_prepare_was_lost_is_cut_at_recovery() {
    let sim = SimFs::new(FlushMethod::Fsync);
    let before;
    {
        let e = open(&sim);
        let t = accounts(&e);
        put(&e, &t, 1, "one", 10);
        before = binlog_xids(&sim);
        sim.inject(quire_io::Fault::sync(quire_io::FaultKind::Eio, 1).on_path("#ib_redo"));
        let mut tx = e.begin(Isolation::RepeatableRead, false);
        tx.insert(
            &t,
            vec![Some(Value::Int(2)), Some(s("two")), Some(Value::Int(20))],
        )
        .expect("insert");
        assert!(tx.commit().is_err(), "the redo fsync failed: no ack");
        // The binlog fsync went through: the transaction is in the binlog.
        assert_eq!(binlog_xids(&sim).len(), before.len() + 1);
        let _ = e.close(false);
    }
    sim.crash(CrashMode::Power { sector: 512 }, 3);
    let vfs: Arc<dyn Vfs> = Arc::new(sim.clone());
    let (e, rec) = Engine::open(vfs, &cfg()).expect("recovery");
    assert_eq!(rec.binlog_cut_transactions, 1, "{rec:?}");
    assert_eq!(binlog_xids(&sim), before, "the lost transaction is cut");
    let t = e.table("bank", "accounts").expect("table");
    let mut tx = e.begin(Isolation::RepeatableRead, false);
    assert!(tx.get(&t, &[Value::Int(1)]).expect("get").is_some());
    assert!(tx.get(&t, &[Value::Int(2)]).expect("get").is_none());
    drop(tx);
    // And the engine goes on: a new commit lands in both.
    put(&e, &t, 3, "three", 30);
    assert_eq!(binlog_xids(&sim).len(), before.len() + 1);
}

/// `FLUSH BINARY LOGS`: the active file ends with ROTATE, the next one
/// starts, commits go on in it, and a crash afterwards recovers with the
/// engine equal to the binlog (every transaction of the closed file was
/// decided before it was closed).
#[test]
fn flush_binary_logs_rotates_and_recovers() {
    let sim = SimFs::new(FlushMethod::Fsync);
    let files = |sim: &SimFs| -> usize {
        let idx = sim
            .file_bytes(&cfg().datadir.join("binlog.index"))
            .expect("index");
        String::from_utf8_lossy(&idx).lines().count()
    };
    {
        let e = open(&sim);
        let t = accounts(&e);
        put(&e, &t, 1, "one", 10);
        let before = files(&sim);
        e.rotate_binlog().expect("rotate");
        assert_eq!(files(&sim), before + 1);
        put(&e, &t, 2, "two", 20);
        e.rotate_binlog().expect("rotate again");
        put(&e, &t, 3, "three", 30);
        assert_eq!(files(&sim), before + 2);
        let _ = e.close(false);
    }
    sim.crash(CrashMode::Power { sector: 512 }, 5);
    let e = open(&sim);
    let t = e.table("bank", "accounts").expect("table");
    let mut tx = e.begin(Isolation::RepeatableRead, false);
    for id in 1..=3 {
        assert!(
            tx.get(&t, &[Value::Int(id)]).expect("get").is_some(),
            "row {id}"
        );
    }
    assert_eq!(binlog_xids(&sim).len(), 3, "one XID per committed row");
}

/// A full disk when the binlog rotates puts the rotation off instead of
/// poisoning the engine: commits go on in the active file (past
/// max_binlog_size), FLUSH BINARY LOGS answers ER_ERROR_ON_WRITE (3) and
/// changes nothing, and once space is freed the next group rotates. A
/// crash afterwards loses nothing and the binlog holds every commit.
#[test]
fn a_full_disk_puts_off_binlog_rotation_and_commits_go_on() {
    let sim = SimFs::new(FlushMethod::Fsync);
    let vfs: Arc<dyn Vfs> = Arc::new(sim.clone());
    let c = Config {
        max_binlog_size: 4096,
        ..cfg()
    };
    let files = |sim: &SimFs| -> usize {
        let idx = sim
            .file_bytes(&cfg().datadir.join("binlog.index"))
            .expect("index");
        String::from_utf8_lossy(&idx).lines().count()
    };
    {
        let e = Engine::open(vfs.clone(), &c).expect("open").0;
        let t = accounts(&e);
        let before = files(&sim);
        let next = e.binlog().expect("binlog").next_file_name();
        sim.inject(
            quire_io::Fault::write(quire_io::FaultKind::Enospc, 1)
                .on_path(next.as_str())
                .make_sticky(),
        );
        for id in 0..100 {
            put(&e, &t, id, &format!("full{id}"), id);
        }
        let b = e.binlog().expect("binlog");
        assert!(b.rotations_deferred() > 0, "rotation was attempted");
        assert_eq!(files(&sim), before, "no file was added");
        let err = e
            .rotate_binlog()
            .expect_err("FLUSH BINARY LOGS on a full disk");
        assert_eq!(err.code, 3, "{err}");
        assert!(err.message.contains(&next), "{err}");
        // Space is freed: the next group rotates, commits go on.
        sim.clear_faults();
        for id in 100..110 {
            put(&e, &t, id, &format!("freed{id}"), id);
        }
        assert!(files(&sim) > before, "rotated once space was freed");
        let _ = e.close(false);
    }
    sim.crash(CrashMode::Power { sector: 512 }, 9);
    let e = Engine::open(vfs, &c).expect("reopen").0;
    let t = e.table("bank", "accounts").expect("table");
    let mut tx = e.begin(Isolation::RepeatableRead, false);
    for id in 0..110 {
        assert!(
            tx.get(&t, &[Value::Int(id)]).expect("get").is_some(),
            "row {id}"
        );
    }
    assert_eq!(binlog_xids(&sim).len(), 110, "one XID per committed row");
}

/// A full disk is an error to the client, not a poisoned engine: commits
/// that need the tablespace to grow fail with 1114 and change nothing, and
/// once space is freed the next commits work without a restart. (Binlog
/// on and off.)
#[test]
fn a_full_disk_fails_commits_with_1114_and_writes_resume_when_space_is_freed() {
    for log_bin in [true, false] {
        let sim = SimFs::new(FlushMethod::Fsync);
        let vfs: Arc<dyn Vfs> = Arc::new(sim.clone());
        let c = Config { log_bin, ..cfg() };
        let e = Engine::open(vfs.clone(), &c).expect("open").0;
        let t = accounts(&e);
        // Growing ibdata1 fails from now on, as on a full device.
        sim.inject(
            quire_io::Fault::write(quire_io::FaultKind::Enospc, 1)
                .on_path("ibdata1")
                .make_sticky(),
        );
        let mut refused = 0;
        let mut committed = Vec::new();
        for id in 0..4000i64 {
            let mut tx = e.begin(Isolation::RepeatableRead, false);
            tx.insert(
                &t,
                vec![
                    Some(Value::Int(id)),
                    Some(s(&format!("owner{id}"))),
                    Some(Value::Int(id)),
                ],
            )
            .expect("insert (buffered)");
            match tx.commit() {
                Ok(_) => committed.push(id),
                Err(err) => {
                    assert_eq!(err.code, 1114, "{err}");
                    assert!(err.message.contains("is full"), "{err}");
                    refused += 1;
                    if refused > 5 {
                        break;
                    }
                }
            }
        }
        assert!(refused > 0, "the disk never filled (log_bin={log_bin})");
        // Space is freed: writes resume without a restart.
        sim.clear_faults();
        put(&e, &t, 100_000, "after", 7);
        let mut tx = e.begin(Isolation::RepeatableRead, true);
        assert_eq!(
            balance(&tx.get(&t, &[Value::Int(100_000)]).expect("get")),
            7
        );
        for id in &committed {
            assert!(tx.get(&t, &[Value::Int(*id)]).expect("get").is_some());
        }
        drop(tx);
        e.close(true).expect("close");
        // And everything acknowledged is there after a reopen.
        drop(e);
        let e = Engine::open(vfs, &c).expect("reopen").0;
        let t = e.table("bank", "accounts").expect("table");
        let mut tx = e.begin(Isolation::RepeatableRead, true);
        for id in committed.iter().chain([100_000i64].iter()) {
            assert!(
                tx.get(&t, &[Value::Int(*id)]).expect("get").is_some(),
                "id {id}"
            );
        }
    }
}

#[test]
fn kill_before_commit_rolls_back_but_a_commit_in_the_pipeline_completes() {
    use crate::interrupt::{Interrupt, Kill, Stage};
    let sim = SimFs::new(FlushMethod::Fsync);
    let e = open(&sim);
    let t = accounts(&e);
    // Killed before the commit starts: nothing reaches the redo log, 1317.
    let i = Interrupt::new();
    let mut tx = e.begin(Isolation::RepeatableRead, false);
    tx.set_interrupt(Some(i.clone()));
    tx.insert(
        &t,
        vec![Some(Value::Int(1)), Some(s("a")), Some(Value::Int(10))],
    )
    .expect("insert");
    i.kill(Kill::Query);
    assert_eq!(tx.commit().map_err(|e| e.code), Err(1317));
    let mut r = e.begin(Isolation::RepeatableRead, true);
    assert_eq!(r.get(&t, &[Value::Int(1)]).expect("get"), None);
    r.rollback();
    // Killed while it waits in the group commit (held there by the sync
    // delay): the commit is not abandoned, as in MySQL.
    e.set_global("binlog_group_commit_sync_delay", "500000")
        .expect("sync delay");
    let i = Interrupt::new();
    let mut tx = e.begin(Isolation::RepeatableRead, false);
    tx.set_interrupt(Some(i.clone()));
    tx.insert(
        &t,
        vec![Some(Value::Int(2)), Some(s("b")), Some(Value::Int(20))],
    )
    .expect("insert");
    let h = std::thread::spawn(move || tx.commit());
    let t0 = Instant::now();
    while i.stage() != Stage::HandlerCommit && t0.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(1));
    }
    assert_eq!(
        i.stage(),
        Stage::HandlerCommit,
        "waiting for handler commit"
    );
    i.kill(Kill::Connection);
    assert!(h.join().expect("committer").is_ok(), "the commit completes");
    assert_eq!(i.stage(), Stage::None);
    let mut r = e.begin(Isolation::RepeatableRead, true);
    assert_eq!(balance(&r.get(&t, &[Value::Int(2)]).expect("get")), 20);
    r.rollback();
    e.set_global("binlog_group_commit_sync_delay", "0")
        .expect("sync delay");
}

/// CREATE INDEX on a populated table while writer threads insert and
/// update (sysbench's prepare builds its secondary index this way; issue
/// 9 item 6). Before the fix the index was stamped with a redo LSN while
/// the binlog pipeline numbers commits with its own counter: the first
/// commit after the build moved the visibility watermark back below the
/// index, and every read through it was 1412 until restart. Writes made
/// before the build and committed after it must reach the index too.
#[test]
fn create_index_under_concurrent_writes() {
    use std::sync::atomic::{AtomicBool, AtomicI64};
    let sim = SimFs::new(FlushMethod::Fsync);
    let e = open(&sim);
    assert!(e.binlog().is_some(), "the binlog pipeline numbers commits");
    let t = accounts(&e);
    for i in 0..300 {
        put(&e, &t, i, &format!("o{i}"), i % 11);
    }
    let stop = Arc::new(AtomicBool::new(false));
    let next_id = Arc::new(AtomicI64::new(10_000));
    let mut writers = Vec::new();
    for w in 0..3i64 {
        let (e, stop, next_id) = (e.clone(), stop.clone(), next_id.clone());
        writers.push(std::thread::spawn(move || {
            let mut n = 0u64;
            while !stop.load(Ordering::Relaxed) || n < 20 {
                let t = e.table("bank", "accounts").expect("table");
                let mut tx = e.begin(Isolation::RepeatableRead, false);
                let id = next_id.fetch_add(1, Ordering::Relaxed);
                let ins = tx.insert(
                    &t,
                    vec![Some(Value::Int(id)), None, Some(Value::Int(id % 11))],
                );
                // 1615: the build replaced the definition this writer took
                // before waiting for it; the SQL layer runs the statement
                // again, so does this writer.
                if let Err(err) = ins {
                    assert_eq!(err.code, 1615, "{err:?}");
                    tx.rollback();
                    continue;
                }
                // Update an existing row: its balance moves to another key.
                let victim = (id * 7 + w) % 300;
                let key = crate::Txn::encode_pk(&t, &[Value::Int(victim)]).expect("pk");
                if let Ok(Some(mut row)) =
                    tx.get_for(&t, &[Value::Int(victim)], LockMode::Exclusive)
                {
                    row[2] = Value::Int((id + w) % 11);
                    tx.update(&t, &key, row).expect("update");
                }
                // Hold the writes open for a moment so some straddle the build.
                if n.is_multiple_of(5) {
                    std::thread::sleep(Duration::from_millis(1));
                }
                match tx.commit() {
                    Ok(_) => {}
                    Err(err) => assert_eq!(err.code, 1213, "{err:?}"),
                }
                n += 1;
            }
            n
        }));
    }
    std::thread::sleep(Duration::from_millis(30));
    let t2 = e
        .create_index("bank", "accounts", "bal2", false, vec![2], None)
        .expect("create index");
    std::thread::sleep(Duration::from_millis(30));
    stop.store(true, Ordering::Relaxed);
    let total: u64 = writers.into_iter().map(|h| h.join().expect("writer")).sum();
    assert!(total >= 60, "writers ran ({total} transactions)");
    // One more write after the build (the original report), then reads.
    put(&e, &t2, 99_999, "last", 4);
    let mut tx = e.begin(Isolation::RepeatableRead, false);
    let all = tx.scan(&t2, &Scan::default()).expect("full scan");
    let mut through_index = 0;
    for b in 0..11 {
        let rows = tx
            .scan(
                &t2,
                &Scan {
                    index: Some("bal2".into()),
                    lower: Bound::Included(vec![Value::Int(b)]),
                    upper: Bound::Included(vec![Value::Int(b)]),
                    ..Scan::default()
                },
            )
            .expect("index scan (never 1412 after the build)");
        let want: Vec<&Vec<Value>> = all
            .iter()
            .filter(|r| r.values[2] == Value::Int(b))
            .map(|r| &r.values)
            .collect();
        let got: Vec<&Vec<Value>> = rows.iter().map(|r| &r.values).collect();
        assert_eq!(got.len(), want.len(), "balance {b}");
        for r in &want {
            assert!(
                got.contains(r),
                "balance {b}: {r:?} not found through the index"
            );
        }
        through_index += got.len();
    }
    assert_eq!(through_index, all.len());
    drop(tx);
    e.close(true).expect("close");
    drop(e);
    let vfs: Arc<dyn Vfs> = Arc::new(sim.clone());
    let r = crate::offpage::check_datadir(&vfs, &cfg().datadir).expect("check");
    assert!(r.is_ok(), "{:?}", r.errors);
    // And after a restart the index still answers.
    let e = open(&sim);
    let t3 = e.table("bank", "accounts").expect("table");
    let mut tx = e.begin(Isolation::RepeatableRead, false);
    let n = tx
        .scan(
            &t3,
            &Scan {
                index: Some("bal2".into()),
                ..Scan::default()
            },
        )
        .expect("index scan after restart")
        .len();
    assert_eq!(n, all.len());
}

/// The names the binlog index lists, in order.
fn binlog_index_names(sim: &SimFs) -> Vec<String> {
    let idx = sim
        .file_bytes(&cfg().datadir.join("binlog.index"))
        .expect("index");
    String::from_utf8_lossy(&idx)
        .lines()
        .map(|l| l.trim().trim_start_matches("./").to_string())
        .collect()
}

/// An index lost by an older quire's crash (it removed the index before
/// renaming the new one into place) is rebuilt from the files at the next
/// start: numbering goes on after the last file instead of starting at
/// binlog.000001 again over the oldest files, which lost the first
/// transactions of a kill loop on 2026-12-02.
#[test]
fn a_lost_binlog_index_is_rebuilt_from_the_files_and_none_is_overwritten() {
    let sim = SimFs::new(FlushMethod::Fsync);
    let vfs: Arc<dyn Vfs> = Arc::new(sim.clone());
    {
        let e = open(&sim);
        let t = accounts(&e);
        put(&e, &t, 1, "one", 10);
        e.rotate_binlog().expect("rotate");
        put(&e, &t, 2, "two", 20);
        e.rotate_binlog().expect("rotate");
        put(&e, &t, 3, "three", 30);
        let _ = e.close(false);
    }
    let before = binlog_xids(&sim);
    let names_before = binlog_index_names(&sim);
    assert_eq!(before.len(), 3, "{before:?}");
    vfs.remove_file(&cfg().datadir.join("binlog.index"))
        .expect("remove the index");
    let (e, rec) = Engine::open(vfs, &cfg()).expect("reopen");
    assert!(rec.binlog_index_rebuilt, "{rec:?}");
    let names = binlog_index_names(&sim);
    assert_eq!(names[..names_before.len()], names_before[..]);
    assert_eq!(names.len(), names_before.len() + 1, "{names:?}");
    let t = e.table("bank", "accounts").expect("table");
    put(&e, &t, 4, "four", 40);
    let after = binlog_xids(&sim);
    assert_eq!(after[..3], before[..], "the old transactions are kept");
    assert_eq!(after.len(), 4, "{after:?}");
}

/// A binlog file with events that the index does not name (copied in by
/// hand, say) is never written over: the next file is numbered after it.
#[test]
fn an_unindexed_binlog_file_with_events_is_never_overwritten() {
    let sim = SimFs::new(FlushMethod::Fsync);
    let vfs: Arc<dyn Vfs> = Arc::new(sim.clone());
    {
        let e = open(&sim);
        let t = accounts(&e);
        put(&e, &t, 1, "one", 10);
        let _ = e.close(false);
    }
    let first = binlog_index_names(&sim)[0].clone();
    let bytes = sim
        .file_bytes(&cfg().datadir.join(&first))
        .expect("first file");
    let stray = cfg().datadir.join("binlog.000007");
    let f = vfs
        .open(
            &stray,
            quire_io::OpenOptions::create(quire_io::FileKind::Other),
        )
        .expect("create");
    f.write_at(&bytes, 0).expect("write");
    f.sync().expect("sync");
    let (e, rec) = Engine::open(vfs, &cfg()).expect("reopen");
    assert!(!rec.binlog_index_rebuilt);
    let names = binlog_index_names(&sim);
    assert_eq!(names.last().map(String::as_str), Some("binlog.000008"));
    let t = e.table("bank", "accounts").expect("table");
    put(&e, &t, 2, "two", 20);
    assert_eq!(sim.file_bytes(&stray), Some(bytes), "left as it was");
}

/// A crash at any I/O of a binlog rotation, of the commits after it, and
/// again inside the start-up that follows (which rewrites the index and
/// creates a file) loses no acknowledged commit and leaves the binlog
/// equal to the table: one XID per row, none twice.
#[test]
fn a_crash_at_any_io_of_binlog_rotation_and_startup_keeps_every_transaction() {
    for n in 0..48u64 {
        let sim = SimFs::new(FlushMethod::Fsync);
        let vfs: Arc<dyn Vfs> = Arc::new(sim.clone());
        let mut acked = vec![1i64, 2];
        {
            let e = open(&sim);
            let t = accounts(&e);
            put(&e, &t, 1, "one", 10);
            put(&e, &t, 2, "two", 20);
            sim.arm_crash_after(n);
            let _ = e.rotate_binlog();
            for id in 3..6i64 {
                let mut tx = e.begin(Isolation::RepeatableRead, false);
                let row = vec![Some(Value::Int(id)), Some(s("x")), Some(Value::Int(id))];
                if tx.insert(&t, row).is_ok() && tx.commit().is_ok() {
                    acked.push(id);
                }
            }
            let _ = e.close(false);
        }
        sim.crash(CrashMode::Power { sector: 512 }, n);
        // A second crash, inside recovery.
        sim.arm_crash_after(n / 2);
        let _ = Engine::open(vfs.clone(), &cfg());
        sim.crash(CrashMode::Power { sector: 512 }, n + 1000);
        let e = open(&sim);
        let t = e.table("bank", "accounts").expect("table");
        let mut tx = e.begin(Isolation::RepeatableRead, false);
        for id in &acked {
            assert!(
                tx.get(&t, &[Value::Int(*id)]).expect("get").is_some(),
                "crash point {n}: acknowledged row {id} lost"
            );
        }
        let rows = tx.scan(&t, &Scan::default()).expect("scan").len();
        let xids = binlog_xids(&sim);
        let unique: std::collections::HashSet<u64> = xids.iter().copied().collect();
        assert_eq!(unique.len(), xids.len(), "crash point {n}: {xids:?}");
        assert_eq!(xids.len(), rows, "crash point {n}: binlog vs table");
    }
}

/// An index build whose redo passes the redo log's sync point while other
/// tables commit. The build once held every commit off: its writes waited
/// for the checkpoint, the checkpoint for a commit group that could not
/// finish without the commit mutex, and the server stopped (0 TPS for an
/// hour in a sysbench run). Now the other table's commits go on, and the
/// build finishes.
#[test]
fn create_index_larger_than_the_redo_log_while_others_commit() {
    use std::sync::atomic::AtomicBool;
    let sim = SimFs::new(FlushMethod::Fsync);
    let e = open(&sim);
    let acc = accounts(&e);
    e.create_table(
        "bank",
        "big",
        vec![
            col("id", int(), false),
            col("s", ColumnType::varchar(240), false),
        ],
        vec![0],
        vec![],
        false,
    )
    .expect("big");
    let big = e.table("bank", "big").expect("big");
    let rows = 40_000i64;
    for chunk in 0..rows / 1000 {
        let mut tx = e.begin(Isolation::RepeatableRead, false);
        for i in chunk * 1000..(chunk + 1) * 1000 {
            let v = format!("{:0>240}", i * 7919 % rows);
            tx.insert(&big, vec![Some(Value::Int(i)), Some(s(&v))])
                .expect("insert");
        }
        tx.commit().expect("commit");
    }
    let stop = Arc::new(AtomicBool::new(false));
    let writer = {
        let (e, stop) = (e.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut n = 0i64;
            while !stop.load(Ordering::Relaxed) {
                put(&e, &acc, 1_000_000 + n, &format!("w{n}"), n % 11);
                n += 1;
            }
            n
        })
    };
    let lsn0 = e.store().log().lsn();
    let (done_tx, done_rx) = std::sync::mpsc::channel();
    {
        let e = e.clone();
        std::thread::spawn(move || {
            let r = e.create_index("bank", "big", "by_s", true, vec![1], None);
            let _ = done_tx.send(r.map(|_| ()));
        });
    }
    // A liveness bound, not a timing: the build takes seconds.
    let built = done_rx
        .recv_timeout(Duration::from_secs(120))
        .expect("the index build finishes (it used to wait forever)");
    stop.store(true, Ordering::Relaxed);
    let commits = writer.join().expect("writer");
    built.expect("create index");
    // The index (40,000 keys of 244 bytes) is larger than the 8 MiB log;
    // its keys are bulk-loaded without redo now (index_build), so the log
    // no longer wraps because of them, but the liveness bound above still
    // holds the build to finishing while the other table commits.
    let _ = lsn0;
    assert!(commits > 0, "the other table committed during the build");
    let big = e.table("bank", "big").expect("big");
    let mut tx = e.begin(Isolation::RepeatableRead, false);
    let through = tx
        .scan(
            &big,
            &Scan {
                index: Some("by_s".into()),
                ..Scan::default()
            },
        )
        .expect("index scan");
    assert_eq!(through.len() as i64, rows);
}

/// Every row the binlog files hold for table `t`, decoded: (xid count,
/// after images of WRITE_ROWS events).
/// Every event of every binlog file the index lists, in order.
pub(crate) fn binlog_events(sim: &SimFs) -> Vec<crate::binlog::format::ParsedEvent> {
    let idx = sim
        .file_bytes(&cfg().datadir.join("binlog.index"))
        .expect("index");
    let mut out = Vec::new();
    for line in String::from_utf8_lossy(&idx).lines() {
        let name = line.trim().trim_start_matches("./");
        if let Some(b) = sim.file_bytes(&cfg().datadir.join(name)) {
            out.extend(crate::binlog::format::parse_events(&b).events);
        }
    }
    out
}

fn binlog_inserted_rows(sim: &SimFs, t: &TableDef) -> Vec<Vec<Value>> {
    let mut out = Vec::new();
    for ev in binlog_events(sim) {
        if let crate::binlog::format::EventData::Rows(r) = ev.data {
            if r.table_id == u64::from(t.id) {
                for row in r.decode(&t.types()).expect("rows decode") {
                    out.extend(row.after);
                }
            }
        }
    }
    out
}

fn status_of(e: &Engine, name: &str) -> u64 {
    e.status()
        .into_iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v)
        .unwrap_or_else(|| panic!("no status {name}"))
}

/// The binlog cache (binlog/cache.rs): a transaction whose events outgrow
/// binlog_cache_size continues in a temporary file (Binlog_cache_disk_use)
/// and reaches the binlog whole and in order, the file gone afterwards;
/// one past max_binlog_cache_size fails with 1197 and leaves no row and
/// no binlog event; commits go on, and power loss keeps what was acked.
#[test]
fn binlog_cache_spills_past_its_size_and_refuses_past_its_maximum() {
    let sim = SimFs::new(FlushMethod::Fsync);
    let row = |id: i64| -> Vec<Value> {
        vec![
            Value::Int(id),
            s(&format!("owner-{id:05}-{}", "x".repeat(12))[..20]),
            Value::Int(id * 7),
        ]
    };
    let insert_all = |e: &Engine, t: &TableDef, ids: std::ops::Range<i64>| {
        let mut tx = e.begin(Isolation::RepeatableRead, false);
        for id in ids {
            tx.insert(t, row(id).into_iter().map(Some).collect())
                .expect("insert");
        }
        tx.commit()
    };
    {
        let e = open(&sim);
        let t = accounts(&e);
        e.set_global("binlog_cache_size", "4096").expect("set");
        let (use0, disk0) = (
            status_of(&e, "Binlog_cache_use"),
            status_of(&e, "Binlog_cache_disk_use"),
        );
        insert_all(&e, &t, 0..10).expect("small commit");
        assert_eq!(status_of(&e, "Binlog_cache_disk_use"), disk0, "fits");
        insert_all(&e, &t, 10..1010).expect("large commit");
        assert_eq!(status_of(&e, "Binlog_cache_use"), use0 + 2);
        assert_eq!(status_of(&e, "Binlog_cache_disk_use"), disk0 + 1);
        let tmp = crate::engine::tmpdir(&cfg().datadir);
        let left: Vec<String> = Vfs::list_dir(&sim, &tmp)
            .unwrap_or_default()
            .into_iter()
            .filter(|n| n.starts_with("binlog_cache_"))
            .collect();
        assert!(left.is_empty(), "cache files left: {left:?}");
        let want: Vec<Vec<Value>> = (0..1010).map(row).collect();
        assert_eq!(binlog_inserted_rows(&sim, &t), want);

        e.set_global("max_binlog_cache_size", "8192").expect("set");
        let xids = binlog_xids(&sim);
        let err = insert_all(&e, &t, 2000..2300).expect_err("past the maximum");
        assert_eq!((err.code, err.sqlstate), (1197, "HY000"), "{err}");
        assert_eq!(binlog_xids(&sim), xids, "nothing of it in the binlog");
        let mut tx = e.begin(Isolation::RepeatableRead, false);
        assert!(tx.get(&t, &[Value::Int(2000)]).expect("get").is_none());
        drop(tx);
        insert_all(&e, &t, 3000..3001).expect("commits go on");
        let _ = e.close(false);
    }
    sim.crash(CrashMode::Power { sector: 512 }, 11);
    let e = open(&sim);
    let t = e.table("bank", "accounts").expect("table");
    let mut tx = e.begin(Isolation::RepeatableRead, false);
    for id in [0, 9, 10, 1009, 3000] {
        assert!(
            tx.get(&t, &[Value::Int(id)]).expect("get").is_some(),
            "{id}"
        );
    }
    assert!(tx.get(&t, &[Value::Int(2000)]).expect("get").is_none());
}

/// `SET GLOBAL innodb_redo_log_capacity` moves the running log to files
/// of the new size (MySQL 8.0.30+); a start with another configured size
/// than the files' resizes too (after recovery); commits acknowledged on
/// either side of a resize survive power loss.
#[test]
fn redo_capacity_resizes_online_and_at_start() {
    let sim = SimFs::new(FlushMethod::Fsync);
    {
        let e = open(&sim);
        let t = accounts(&e);
        put(&e, &t, 1, "one", 10);
        assert_eq!(e.store().log().capacity_bytes(), 8 << 20);
        e.set_global("innodb_redo_log_capacity", "16777216")
            .expect("resize up");
        assert_eq!(e.store().log().capacity_bytes(), 16 << 20);
        assert_eq!(status_of(&e, "Quire_redo_log_resizes"), 1);
        put(&e, &t, 2, "two", 20);
        let bad = e
            .set_global("innodb_redo_log_capacity", "4194304")
            .expect_err("below MySQL's minimum");
        assert_eq!(bad.code, 1231, "{bad}");
        assert_eq!(e.store().log().capacity_bytes(), 16 << 20);
        let _ = e.close(false);
    }
    sim.crash(CrashMode::Power { sector: 512 }, 21);
    // Configured 8 MiB again: recovery reads the 16 MiB files, then the
    // start resizes them back.
    let vfs: Arc<dyn Vfs> = Arc::new(sim.clone());
    let (e, rec) = Engine::open(vfs, &cfg()).expect("reopen");
    assert!(
        rec.storage
            .notes
            .iter()
            .any(|n| n.contains("resized the redo log")),
        "{:?}",
        rec.storage.notes
    );
    assert_eq!(e.store().log().capacity_bytes(), 8 << 20);
    let t = e.table("bank", "accounts").expect("table");
    let mut tx = e.begin(Isolation::RepeatableRead, false);
    for id in [1, 2] {
        assert!(
            tx.get(&t, &[Value::Int(id)]).expect("get").is_some(),
            "{id}"
        );
    }
}

/// Temporary tables (temp_table.rs): rows go through transactions like
/// any table's but never reach the binary log (a transaction that wrote
/// only them logs nothing); nobody finds one by name; DROP frees its
/// trees, and a crash leaves trees the next start drops, with recovery
/// skipping their rows.
#[test]
fn temporary_tables_are_not_logged_and_vanish_with_a_crash() {
    let sim = SimFs::new(FlushMethod::Fsync);
    let trees_of = |e: &Engine, id: u32| -> Vec<String> {
        e.store()
            .indexes()
            .expect("indexes")
            .into_iter()
            .map(|(n, _)| n)
            .filter(|n| n.starts_with(&format!("t{id}.")))
            .collect()
    };
    let (temp_id, dropped_id);
    {
        let e = open(&sim);
        let t = accounts(&e);
        let spec =
            |e: &Engine| crate::Engine::like_spec(&e.table("bank", "accounts").expect("t"), "tmp");
        let tmp = e
            .create_temporary_table("bank", "accounts", spec(&e))
            .expect("temporary");
        assert!(tmp.temporary && tmp.id != t.id);
        assert_eq!(e.table("bank", "accounts").expect("by name").id, t.id);
        assert!(!trees_of(&e, tmp.id).is_empty());
        let xids = binlog_xids(&sim);
        put(&e, &tmp, 1, "temp-only", 1);
        assert_eq!(
            binlog_xids(&sim),
            xids,
            "a temporary-only transaction logs nothing"
        );
        let mut tx = e.begin(Isolation::RepeatableRead, false);
        tx.insert(
            &tmp,
            vec![Some(Value::Int(2)), Some(s("temp")), Some(Value::Int(2))],
        )
        .expect("insert temp");
        tx.insert(
            &t,
            vec![Some(Value::Int(7)), Some(s("perm")), Some(Value::Int(7))],
        )
        .expect("insert perm");
        tx.commit().expect("commit both");
        assert_eq!(binlog_xids(&sim).len(), xids.len() + 1);
        let logged = binlog_inserted_rows(&sim, &t);
        assert_eq!(logged.len(), 1, "only the permanent row: {logged:?}");
        assert!(binlog_inserted_rows(&sim, &tmp).is_empty());
        let mut tx = e.begin(Isolation::RepeatableRead, false);
        assert!(tx.get(&tmp, &[Value::Int(2)]).expect("get").is_some());
        drop(tx);
        // DROP frees the trees (nothing holds the definition).
        let other = e
            .create_temporary_table("bank", "other", spec(&e))
            .expect("temporary");
        dropped_id = other.id;
        e.drop_temporary_table(other).expect("drop");
        assert!(trees_of(&e, dropped_id).is_empty());
        temp_id = tmp.id;
        drop(tmp);
        let _ = e.close(false);
    }
    sim.crash(CrashMode::Power { sector: 512 }, 31);
    let e = open(&sim);
    assert!(
        trees_of(&e, temp_id).is_empty(),
        "the orphan sweep dropped them"
    );
    let t = e.table("bank", "accounts").expect("table");
    let mut tx = e.begin(Isolation::RepeatableRead, false);
    assert!(tx.get(&t, &[Value::Int(7)]).expect("get").is_some());
    assert!(tx.get(&t, &[Value::Int(2)]).expect("get").is_none());
    drop(tx);
    // An id whose trees may exist is not handed out again (the counter
    // is logged before the trees; `dropped_id`'s creation came after the
    // last flush and was lost with its trees).
    let again = e
        .create_temporary_table("bank", "x", crate::Engine::like_spec(&t, "x"))
        .expect("temporary");
    assert!(again.id > temp_id);
}
