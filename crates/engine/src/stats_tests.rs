//! Engine tests of the optimizer statistics (stats.rs): the row estimate
//! through commits, rollbacks and restarts, sampled distinct counts,
//! durability (crash included) and automatic recalculation.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use quire_config::Config;
use quire_io::{CrashMode, FlushMethod, SimFs, Vfs};

use crate::catalog::ColumnDef;
use crate::engine::Engine;
use crate::txn::Isolation;
use crate::types::{ColumnType, Value};
use crate::TableDef;

fn cfg() -> Config {
    Config {
        datadir: PathBuf::from("/s/data"),
        innodb_page_size: 4096,
        innodb_buffer_pool_size: 8 << 20,
        innodb_redo_log_capacity: 8 << 20,
        innodb_log_buffer_size: 256 << 10,
        innodb_log_write_ahead_size: 4096,
        ..Config::default()
    }
}

fn open_with(sim: &SimFs, c: &Config) -> Engine {
    let vfs: Arc<dyn Vfs> = Arc::new(sim.clone());
    Engine::open(vfs, c).expect("open engine").0
}

fn int() -> ColumnType {
    ColumnType::Int { unsigned: false }
}

/// t(id INT PRIMARY KEY, c INT NOT NULL, d INT, KEY k(c, d))
fn table(e: &Engine) -> Arc<TableDef> {
    e.create_database("s", true).expect("db");
    e.create_table(
        "s",
        "t",
        vec![
            ColumnDef::new("id", int(), false),
            ColumnDef::new("c", int(), false),
            ColumnDef::new("d", int(), true),
        ],
        vec![0],
        vec![("k".into(), false, vec![1, 2])],
        false,
    )
    .expect("table")
}

/// Rows `from..to`: c = id % 100, d = id % 1000, committed `batch` at a time.
fn fill(e: &Engine, t: &TableDef, from: i64, to: i64, batch: i64) {
    let mut i = from;
    while i < to {
        let mut tx = e.begin(Isolation::RepeatableRead, false);
        for j in i..(i + batch).min(to) {
            tx.insert(
                t,
                vec![
                    Some(Value::Int(j)),
                    Some(Value::Int(j % 100)),
                    Some(Value::Int(j % 1000)),
                ],
            )
            .expect("insert");
        }
        tx.commit().expect("commit");
        i += batch;
    }
}

fn key(t: &TableDef, id: i64) -> Vec<u8> {
    crate::txn::Txn::encode_pk(t, &[Value::Int(id)]).expect("pk")
}

fn within(got: u64, want: u64, pct: u64) -> bool {
    got.abs_diff(want) * 100 <= want * pct
}

fn no_recalc() -> Config {
    Config {
        innodb_stats_auto_recalc: false,
        ..cfg()
    }
}

#[test]
fn row_estimate_follows_commits_and_ignores_rollbacks() {
    let sim = SimFs::new(FlushMethod::Fsync);
    let e = open_with(&sim, &no_recalc());
    let t = table(&e);
    assert_eq!(e.table_stats(&t).rows, 0);
    assert!(!e.table_stats(&t).analyzed);
    fill(&e, &t, 0, 100, 7);
    assert_eq!(e.table_stats(&t).rows, 100);
    // Deletes, an update (no change in count), a delete and re-insert of
    // the same key in one transaction, an insert deleted again in its
    // own transaction.
    let mut tx = e.begin(Isolation::RepeatableRead, false);
    for id in 0..10 {
        assert!(tx.delete(&t, &key(&t, id)).expect("delete"));
    }
    tx.update(
        &t,
        &key(&t, 50),
        vec![Value::Int(50), Value::Int(1), Value::Int(2)],
    )
    .expect("update");
    tx.delete(&t, &key(&t, 60)).expect("delete");
    tx.insert(&t, vec![Some(Value::Int(60)), Some(Value::Int(0)), None])
        .expect("reinsert");
    tx.insert(&t, vec![Some(Value::Int(1000)), Some(Value::Int(0)), None])
        .expect("insert");
    tx.delete(&t, &key(&t, 1000)).expect("delete own insert");
    tx.commit().expect("commit");
    assert_eq!(e.table_stats(&t).rows, 90);
    // Rolled back: nothing counted.
    let mut tx = e.begin(Isolation::RepeatableRead, false);
    for id in 2000..2050 {
        tx.insert(&t, vec![Some(Value::Int(id)), Some(Value::Int(0)), None])
            .expect("insert");
    }
    tx.rollback();
    assert_eq!(e.table_stats(&t).rows, 90);
    // Never negative, and deleting everything gives 0.
    let mut tx = e.begin(Isolation::RepeatableRead, false);
    for id in 0..100 {
        tx.delete(&t, &key(&t, id)).expect("delete");
    }
    tx.commit().expect("commit");
    assert_eq!(e.table_stats(&t).rows, 0);
    // TRUNCATE: a new table, empty.
    fill(&e, &t, 0, 30, 30);
    e.truncate_table("s", "t", None).expect("truncate");
    let t2 = e.table("s", "t").expect("table");
    assert_eq!(e.table_stats(&t2).rows, 0);
}

#[test]
fn analyze_estimates_distinct_prefixes_from_sampled_leaves() {
    let sim = SimFs::new(FlushMethod::Fsync);
    let e = open_with(&sim, &no_recalc());
    let t = table(&e);
    fill(&e, &t, 0, 10_000, 500);
    let st = e.analyze_table(&t).expect("analyze");
    assert!(st.analyzed);
    assert_eq!(st.rows, 10_000, "the counted estimate stays exact");
    assert_eq!(st.indexes.len(), 2);
    assert_eq!(st.indexes[0].name, None);
    assert_eq!(st.indexes[0].distinct, vec![10_000]);
    assert_eq!(st.indexes[1].name.as_deref(), Some("k"));
    let d = &st.indexes[1].distinct;
    assert_eq!(d.len(), 2);
    assert!(within(d[0], 100, 20), "c: {d:?}");
    assert!(within(d[1], 1000, 20), "(c, d): {d:?}");
    // Sampling fewer pages still lands near; sampling all is exact.
    e.set_global("innodb_stats_persistent_sample_pages", "5")
        .expect("set");
    let d = e.analyze_table(&t).expect("analyze").indexes[1]
        .distinct
        .clone();
    assert!(within(d[0], 100, 40) && within(d[1], 1000, 40), "{d:?}");
    e.set_global("innodb_stats_persistent_sample_pages", "100000")
        .expect("set");
    let d = e.analyze_table(&t).expect("analyze").indexes[1]
        .distinct
        .clone();
    assert_eq!(d, vec![100, 1000]);
    // A table without a primary key: the hidden row id is unique.
    e.create_table(
        "s",
        "h",
        vec![ColumnDef::new("v", int(), true)],
        vec![],
        vec![],
        false,
    )
    .expect("h");
    let h = e.table("s", "h").expect("h");
    let mut tx = e.begin(Isolation::RepeatableRead, false);
    for i in 0..50 {
        tx.insert(&h, vec![Some(Value::Int(i % 3))])
            .expect("insert");
    }
    tx.commit().expect("commit");
    let st = e.analyze_table(&h).expect("analyze h");
    assert_eq!((st.rows, st.indexes[0].distinct.clone()), (50, vec![50]));
}

#[test]
fn statistics_survive_a_restart_and_a_crash() {
    let sim = SimFs::new(FlushMethod::Fsync);
    let before = {
        let e = open_with(&sim, &no_recalc());
        let t = table(&e);
        fill(&e, &t, 0, 3000, 300);
        let st = e.analyze_table(&t).expect("analyze");
        e.close(true).expect("close");
        st
    };
    let e = open_with(&sim, &no_recalc());
    let t = e.table("s", "t").expect("t");
    let st = e.table_stats(&t);
    assert_eq!(st, before, "after a clean restart (the exact count kept)");
    // More rows, a new ANALYZE, a commit that flushes the redo, a crash.
    fill(&e, &t, 3000, 4000, 1000);
    let after = e.analyze_table(&t).expect("analyze");
    fill(&e, &t, 4000, 4001, 1);
    e.close(false).expect("close");
    drop(e);
    sim.crash(CrashMode::Power { sector: 512 }, 1);
    let e = open_with(&sim, &no_recalc());
    let t = e.table("s", "t").expect("t");
    let st = e.table_stats(&t);
    assert!(st.analyzed);
    assert_eq!(st.indexes[1], after.indexes[1]);
    // After a crash the count at open comes from a sample of the leaves.
    assert!(within(st.rows, 4001, 5), "{}", st.rows);
    // DROP TABLE takes its statistics along.
    e.drop_table("s", "t", None).expect("drop");
    let t = table(&e);
    assert!(!e.table_stats(&t).analyzed);
    e.close(true).expect("close");
    // innodb_stats_persistent=OFF: stored statistics are not used.
    let e = open_with(&sim, &no_recalc());
    let t = e.table("s", "t").expect("t");
    fill(&e, &t, 0, 100, 100);
    e.analyze_table(&t).expect("analyze");
    e.close(true).expect("close");
    let off = Config {
        innodb_stats_persistent: false,
        ..no_recalc()
    };
    let e = open_with(&sim, &off);
    let t = e.table("s", "t").expect("t");
    assert!(!e.table_stats(&t).analyzed);
    assert_eq!(e.table_stats(&t).rows, 100);
}

/// A crash at any point of an ANALYZE leaves the old statistics or the
/// new ones, and the data directory opens.
#[test]
fn a_crash_mid_analyze_keeps_old_or_new_statistics() {
    for n in 0..12u64 {
        let sim = SimFs::new(FlushMethod::Fsync);
        let (old, new) = {
            let e = open_with(&sim, &no_recalc());
            let t = table(&e);
            fill(&e, &t, 0, 200, 200);
            let old = e.analyze_table(&t).expect("analyze");
            fill(&e, &t, 200, 2000, 600);
            e.store().sync_log().expect("sync");
            sim.arm_crash_after(n);
            let new = e.analyze_table(&t).ok();
            let _ = e.store().sync_log();
            let _ = e.close(false);
            (old, new)
        };
        sim.crash(CrashMode::Power { sector: 512 }, n);
        let e = open_with(&sim, &no_recalc());
        let t = e.table("s", "t").expect("t");
        let st = e.table_stats(&t);
        // (The primary key's count is the row count: compare the index.)
        let is_old = st.indexes[1] == old.indexes[1];
        let is_new = new.as_ref().is_some_and(|x| x.indexes[1] == st.indexes[1]);
        assert!(st.analyzed && (is_old || is_new), "crash point {n}: {st:?}");
        assert_eq!(st.rows, 2000, "crash point {n}");
    }
}

#[test]
fn auto_recalc_runs_in_the_background_after_ten_percent_changed() {
    let sim = SimFs::new(FlushMethod::Fsync);
    let e = open_with(&sim, &cfg());
    let t = table(&e);
    fill(&e, &t, 0, 1000, 1000);
    let wait_for = |what: &str, f: &dyn Fn() -> bool| {
        let t0 = Instant::now();
        while !f() {
            assert!(t0.elapsed() < Duration::from_secs(20), "{what}");
            std::thread::sleep(Duration::from_millis(10));
        }
    };
    // Never analyzed and not empty: analyzed in the background.
    wait_for("first analysis", &|| e.table_stats(&t).analyzed);
    let runs = e.stats_auto_runs();
    assert!(runs >= 1);
    assert_eq!(e.table_stats(&t).indexes[1].distinct, vec![100, 1000]);
    // 5% more rows: not due.
    fill(&e, &t, 1000, 1050, 50);
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(e.stats_auto_runs(), runs);
    // Past 10% (rows now 1150, changes 150): recalculated, and it sees
    // 50 new values of c, 100 new pairs (c, d).
    let mut tx = e.begin(Isolation::RepeatableRead, false);
    for k in 0..100 {
        tx.insert(
            &t,
            vec![
                Some(Value::Int(100_000 + k)),
                Some(Value::Int(200 + k % 50)),
                Some(Value::Int(k)),
            ],
        )
        .expect("insert");
    }
    tx.commit().expect("commit");
    wait_for("recalculation", &|| e.stats_auto_runs() > runs);
    wait_for("new distinct count", &|| {
        e.table_stats(&t).indexes[1].distinct == vec![150, 1100]
    });
    // OFF: nothing more happens.
    e.set_global("innodb_stats_auto_recalc", "OFF")
        .expect("set");
    let runs = e.stats_auto_runs();
    let mut tx = e.begin(Isolation::RepeatableRead, false);
    for id in 0..1000 {
        tx.delete(&t, &key(&t, id)).expect("delete");
    }
    tx.commit().expect("commit");
    e.table_stats(&t);
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(e.stats_auto_runs(), runs);
    assert_eq!(e.table_stats(&t).rows, 150);
}
