//! Online CREATE INDEX (index_build.rs): writes to the table between fill
//! batches, through a test hook, so every case is deterministic. The
//! model of the rows is the judge of the finished index.

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::Arc;

use quire_io::{FlushMethod, SimFs};

use crate::catalog::ColumnDef;
use crate::engine::Engine;
use crate::index_build::{AFTER_FILL_BATCH, AFTER_SWITCH};
use crate::interrupt::{Interrupt, Kill};
use crate::tests::open;
use crate::txn::{Isolation, Scan};
use crate::types::{ColumnType, Value};
use crate::TableDef;

fn int() -> ColumnType {
    ColumnType::Int { unsigned: false }
}

/// `db.<name>(id INT PRIMARY KEY, k INT NULL)` with `rows` rows, k = f(id).
fn table(e: &Engine, name: &str, rows: i64, f: impl Fn(i64) -> i64) -> Arc<TableDef> {
    let _ = e.create_database("ob", true);
    e.create_table(
        "ob",
        name,
        vec![
            ColumnDef::new("id", int(), false),
            ColumnDef::new("k", int(), true),
        ],
        vec![0],
        vec![],
        false,
    )
    .expect("table");
    let t = e.table("ob", name).expect("table");
    let mut tx = e.begin(Isolation::RepeatableRead, false);
    for id in 0..rows {
        tx.insert(&t, vec![Some(Value::Int(id)), Some(Value::Int(f(id)))])
            .expect("insert");
    }
    tx.commit().expect("commit");
    t
}

/// Runs `hook` once, after fill batch `at` of an index on table `name`.
fn after_batch(name: &str, at: usize, hook: impl Fn() + Send + 'static) {
    let n = std::sync::atomic::AtomicUsize::new(0);
    AFTER_FILL_BATCH.lock().push((
        name.to_string(),
        Box::new(move || {
            if n.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1 == at {
                hook();
            }
        }),
    ));
}

fn unhook(name: &str) {
    AFTER_FILL_BATCH.lock().retain(|(n, _)| n != name);
    AFTER_SWITCH.lock().retain(|(n, _)| n != name);
}

/// Runs `hook` after the switch to the bulk-loaded tree of an index on
/// table `name`, before the copy of what writers put meanwhile.
fn after_switch(name: &str, hook: impl Fn() + Send + 'static) {
    AFTER_SWITCH.lock().push((name.to_string(), Box::new(hook)));
}

/// Trees of table `t` and bulk-load reservations in the directory.
fn trees_of(e: &Engine, t: &TableDef) -> Vec<String> {
    let prefix = format!("t{}.", t.id);
    e.store()
        .indexes()
        .expect("trees")
        .into_iter()
        .map(|(n, _)| n)
        .filter(|n| n.starts_with(&prefix))
        .collect()
}

/// The rows' ids through index `index` for k = `k`, with a snapshot taken now.
fn ids_with(e: &Engine, name: &str, index: &str, k: i64) -> Vec<i64> {
    let t = e.table("ob", name).expect("table");
    let mut tx = e.begin(Isolation::RepeatableRead, true);
    let rows = tx
        .scan(
            &t,
            &Scan {
                index: Some(index.into()),
                lower: Bound::Included(vec![Value::Int(k)]),
                upper: Bound::Included(vec![Value::Int(k)]),
                ..Scan::default()
            },
        )
        .expect("index scan");
    tx.rollback();
    let mut ids: Vec<i64> = rows
        .iter()
        .map(|r| match r.values[0] {
            Value::Int(i) => i,
            ref v => panic!("id {v:?}"),
        })
        .collect();
    ids.sort();
    ids
}

/// One transaction of changes on `ob.<name>`: (id, Some(k)) upserts,
/// (id, None) deletes; the model follows.
fn write(e: &Engine, name: &str, model: &mut BTreeMap<i64, i64>, changes: &[(i64, Option<i64>)]) {
    let t = e.table("ob", name).expect("table");
    let mut tx = e.begin(Isolation::RepeatableRead, false);
    for &(id, k) in changes {
        let key = crate::Txn::encode_pk(&t, &[Value::Int(id)]).expect("pk");
        let exists = model.contains_key(&id);
        match (k, exists) {
            (Some(k), false) => {
                tx.insert(&t, vec![Some(Value::Int(id)), Some(Value::Int(k))])
                    .expect("insert");
                model.insert(id, k);
            }
            (Some(k), true) => {
                tx.update(&t, &key, vec![Value::Int(id), Value::Int(k)])
                    .expect("update");
                model.insert(id, k);
            }
            (None, true) => {
                tx.delete(&t, &key).expect("delete");
                model.remove(&id);
            }
            (None, false) => {}
        }
    }
    tx.commit().expect("commit");
}

fn tree_exists(e: &Engine, tree: &str) -> bool {
    e.store()
        .indexes()
        .expect("trees")
        .iter()
        .any(|(n, _)| n == tree)
}

/// Writers change rows the fill has passed and rows it has not reached,
/// in two transactions between batches; the finished index holds exactly
/// the model's keys, and CHECK TABLE finds nothing.
#[test]
fn rows_changed_while_the_index_fills_are_indexed_exactly() {
    let sim = SimFs::new(FlushMethod::Fsync);
    let e = open(&sim);
    let rows = 3000;
    table(&e, "fill", rows, |id| id % 50);
    let model: Arc<parking_lot::Mutex<BTreeMap<i64, i64>>> = Arc::new(parking_lot::Mutex::new(
        (0..rows).map(|id| (id, id % 50)).collect(),
    ));
    {
        let (e, model) = (e.clone(), model.clone());
        // Batch 3 (ids 512..768) is read, its keys not yet put; the fill
        // has passed ids 0..512.
        after_batch("fill", 3, move || {
            let mut m = model.lock();
            write(
                &e,
                "fill",
                &mut m,
                &[
                    (10, Some(1000)),   // filled, key changes
                    (2900, Some(1001)), // not reached, key changes
                    (20, None),         // filled, deleted
                    (2950, None),       // not reached, deleted
                    (2000, Some(0)),    // not reached, key unchanged (2000 % 50)
                    (5000, Some(7)),    // new row, after every other
                    (500, Some(1002)),  // filled
                    (600, Some(1004)),  // read by the fill: its old key goes in stale
                ],
            );
            // Back and forth: the key a row ends with is the one indexed.
            write(
                &e,
                "fill",
                &mut m,
                &[(500, Some(500 % 50)), (2900, Some(1003))],
            );
        });
    }
    let t = e
        .create_index("ob", "fill", "by_k", false, vec![1], None)
        .expect("create index");
    unhook("fill");
    let m = model.lock().clone();
    assert!(m.contains_key(&5000), "the hook ran mid-build");
    let mut keys: Vec<i64> = m.values().copied().collect();
    keys.extend([10, 20, 1002, 1004]);
    keys.sort();
    keys.dedup();
    for k in keys {
        let want: Vec<i64> = m
            .iter()
            .filter(|(_, v)| **v == k)
            .map(|(id, _)| *id)
            .collect();
        assert_eq!(ids_with(&e, "fill", "by_k", k), want, "k = {k}");
    }
    assert_eq!(e.check_table(&t).expect("check"), Vec::<String>::new());
    assert!(t.building.is_none());
    // The stale keys (old versions, and row 600's key the fill put after
    // the row had moved on) go with purge once the build released it:
    // commits and the purge thread run it, and then the index holds one
    // entry per row.
    write(&e, "fill", &mut model.lock(), &[(6000, Some(1))]);
    let tree = e
        .inner
        .tree(&t.index_tree(t.index("by_k").expect("index").id))
        .expect("tree");
    let count = || {
        tree.range(Bound::Unbounded, Bound::Unbounded, false)
            .count()
    };
    // A liveness bound, not a timing: purge runs within milliseconds.
    let t0 = std::time::Instant::now();
    while count() != model.lock().len() && t0.elapsed() < std::time::Duration::from_secs(60) {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    assert_eq!(count(), model.lock().len(), "entries after purge");
}

/// A duplicate written while a UNIQUE index fills fails the build with
/// 1062 after the fill; the table is as before (no index, no tree, no
/// building entry) and takes writes, and the build succeeds once the
/// duplicate is gone.
#[test]
fn a_duplicate_written_during_a_unique_build_fails_it_cleanly() {
    let sim = SimFs::new(FlushMethod::Fsync);
    let e = open(&sim);
    let t0 = table(&e, "uniq", 1500, |id| id);
    {
        let e = e.clone();
        after_batch("uniq", 2, move || {
            let mut m = BTreeMap::new();
            // id 9000 takes k = 1400, which row 1400 (not reached) holds.
            write(&e, "uniq", &mut m, &[(9000, Some(1400))]);
        });
    }
    let err = e
        .create_index("ob", "uniq", "uk", true, vec![1], None)
        .expect_err("a duplicate");
    unhook("uniq");
    assert_eq!(err.code, 1062, "{err:?}");
    assert!(err.message.contains("'1400'"), "{}", err.message);
    let t = e.table("ob", "uniq").expect("table");
    assert!(t.index("uk").is_none() && t.building.is_none());
    assert!(
        !tree_exists(&e, &t0.index_tree(1)),
        "the half-built tree went"
    );
    let mut m: BTreeMap<i64, i64> = [(9000, 1400)].into();
    write(&e, "uniq", &mut m, &[(9000, None), (9001, Some(-1))]);
    let t = e
        .create_index("ob", "uniq", "uk", true, vec![1], None)
        .expect("create index without the duplicate");
    assert_eq!(ids_with(&e, "uniq", "uk", 1400), vec![1400]);
    assert_eq!(ids_with(&e, "uniq", "uk", -1), vec![9001]);
    assert_eq!(e.check_table(&t).expect("check"), Vec::<String>::new());
}

/// NULLs never clash in a UNIQUE index, also when they arrive mid-build.
#[test]
fn nulls_written_during_a_unique_build_do_not_clash() {
    let sim = SimFs::new(FlushMethod::Fsync);
    let e = open(&sim);
    table(&e, "nul", 1000, |id| id);
    {
        let e = e.clone();
        after_batch("nul", 1, move || {
            let t = e.table("ob", "nul").expect("table");
            let mut tx = e.begin(Isolation::RepeatableRead, false);
            for id in [7000, 7001] {
                tx.insert(&t, vec![Some(Value::Int(id)), None])
                    .expect("insert");
            }
            tx.commit().expect("commit");
        });
    }
    e.create_index("ob", "nul", "uk", true, vec![1], None)
        .expect("NULLs are no duplicates");
    unhook("nul");
    assert_eq!(ids_with(&e, "nul", "uk", 999), vec![999]);
}

/// KILL stops a build between batches (1317) and leaves nothing behind.
#[test]
fn a_killed_build_leaves_nothing_behind() {
    let sim = SimFs::new(FlushMethod::Fsync);
    let e = open(&sim);
    let t0 = table(&e, "kill", 2000, |id| id % 3);
    let i = Interrupt::new();
    {
        let i = i.clone();
        after_batch("kill", 2, move || i.kill(Kill::Query));
    }
    let err = e
        .create_index("ob", "kill", "k", false, vec![1], Some(&i))
        .expect_err("killed");
    unhook("kill");
    assert_eq!(err.code, 1317);
    let t = e.table("ob", "kill").expect("table");
    assert!(t.index("k").is_none() && t.building.is_none());
    assert!(!tree_exists(&e, &t0.index_tree(1)));
    let mut m: BTreeMap<i64, i64> = (0..2000).map(|id| (id, id % 3)).collect();
    write(&e, "kill", &mut m, &[(1, Some(5))]);
}

/// With writers held off (LOCK=SHARED) a UNIQUE build still finds the
/// duplicates the table already has.
#[test]
fn a_unique_build_with_writers_held_finds_existing_duplicates() {
    let sim = SimFs::new(FlushMethod::Fsync);
    let e = open(&sim);
    table(&e, "held", 1200, |id| if id == 1100 { 3 } else { id });
    let err = e
        .create_index_with(
            "ob",
            "held",
            crate::IndexSpec::whole("uk", true, vec![1]),
            crate::BuildLock::Shared,
            None,
        )
        .expect_err("3 twice");
    assert_eq!(err.code, 1062);
    assert!(err.message.contains("'3'"), "{}", err.message);
    let t = e.table("ob", "held").expect("table");
    assert!(t.index("uk").is_none() && t.building.is_none());
}

/// DROP INDEX while a statement still reads the old definition leaves the
/// tree to a thread that drops it by name when the statement lets go; an
/// index created meanwhile must not get that name (it went with the old
/// tree: "corrupt page" in the golden scripts).
#[test]
fn an_index_made_while_a_dropped_one_waits_keeps_its_own_tree() {
    let sim = SimFs::new(FlushMethod::Fsync);
    let e = open(&sim);
    table(&e, "redo", 2000, |id| id % 7);
    e.create_index("ob", "redo", "k1", false, vec![1], None)
        .expect("k1");
    let reader = e.table("ob", "redo").expect("a statement's definition");
    e.alter_table(
        "ob",
        "redo",
        &[crate::TableChange::DropIndex("k1".into())],
        None,
    )
    .expect("drop k1");
    let t = e
        .create_index("ob", "redo", "k2", false, vec![1], None)
        .expect("k2");
    let old_tree = reader.index_tree(reader.index("k1").expect("k1").id);
    drop(reader);
    // The waiting drop runs now (a liveness bound, not a timing); the
    // new index stays whole.
    let t0 = std::time::Instant::now();
    while tree_exists(&e, &old_tree) && t0.elapsed().as_secs() < 60 {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    assert_eq!(ids_with(&e, "redo", "k2", 3).len(), 2000 / 7 + 1);
    assert_eq!(e.check_table(&t).expect("check"), Vec::<String>::new());
}

/// Writes before the bulk load (into the writers' tree, copied over) and
/// after the switch (straight into the bulk-loaded tree), in one build:
/// the index holds exactly the model's keys, the writers' tree is gone,
/// and the build wrote no redo for the keys it loaded.
#[test]
fn writes_on_both_sides_of_the_switch_are_indexed_and_the_keys_cost_no_redo() {
    let sim = SimFs::new(FlushMethod::Fsync);
    let e = open(&sim);
    let rows = 20_000;
    let t0 = table(&e, "sw", rows, |id| id % 100);
    let model: Arc<parking_lot::Mutex<BTreeMap<i64, i64>>> = Arc::new(parking_lot::Mutex::new(
        (0..rows).map(|id| (id, id % 100)).collect(),
    ));
    {
        let (e, model) = (e.clone(), model.clone());
        after_batch("sw", 2, move || {
            write(
                &e,
                "sw",
                &mut model.lock(),
                &[(5, Some(555)), (19_000, None), (30_000, Some(7))],
            );
        });
    }
    {
        let (e, model) = (e.clone(), model.clone());
        after_switch("sw", move || {
            write(
                &e,
                "sw",
                &mut model.lock(),
                &[(6, Some(555)), (30_000, Some(8)), (30_001, Some(555))],
            );
        });
    }
    let lsn0 = e.store().log().lsn();
    let t = e
        .create_index("ob", "sw", "by_k", false, vec![1], None)
        .expect("create index");
    let redo_bytes = e.store().log().lsn() - lsn0;
    unhook("sw");
    let m = model.lock().clone();
    for k in [555, 7, 8, 5, 6, 0, 99] {
        let want: Vec<i64> = m
            .iter()
            .filter(|(_, v)| **v == k)
            .map(|(id, _)| *id)
            .collect();
        assert_eq!(ids_with(&e, "sw", "by_k", k), want, "k = {k}");
    }
    assert_eq!(e.check_table(&t).expect("check"), Vec::<String>::new());
    // One tree for the table and one for the index: the writers' tree
    // went (now, or once its last reader let go: a liveness bound).
    let t1 = std::time::Instant::now();
    while trees_of(&e, &t0).len() > 2 && t1.elapsed().as_secs() < 60 {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let idx = t.index("by_k").expect("index");
    assert_eq!(
        trees_of(&e, &t0),
        vec![t0.clustered_tree(), t.index_tree(idx.id)]
    );
    // 20,000 keys of 9+ bytes put one by one wrote ~60 bytes of redo each;
    // loaded in bulk, what is left is the writers' six rows, the copy of
    // three entries, the reservations and the catalog.
    assert!(
        redo_bytes < 200_000,
        "the build wrote {redo_bytes} redo bytes"
    );
}

/// A build killed after the switch (during the copy) leaves neither tree
/// nor any reserved page behind.
#[test]
fn a_build_killed_after_the_switch_leaves_nothing_behind() {
    let sim = SimFs::new(FlushMethod::Fsync);
    let e = open(&sim);
    let t0 = table(&e, "ks", 5000, |id| id % 9);
    let i = Interrupt::new();
    {
        let i = i.clone();
        after_switch("ks", move || i.kill(Kill::Query));
    }
    let err = e
        .create_index("ob", "ks", "k", false, vec![1], Some(&i))
        .expect_err("killed");
    unhook("ks");
    assert_eq!(err.code, 1317);
    let t = e.table("ob", "ks").expect("table");
    assert!(t.index("k").is_none() && t.building.is_none());
    let t1 = std::time::Instant::now();
    while trees_of(&e, &t0).len() > 1 && t1.elapsed().as_secs() < 60 {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    assert_eq!(trees_of(&e, &t0), vec![t0.clustered_tree()]);
    let t = e
        .create_index("ob", "ks", "k", false, vec![1], None)
        .expect("the build runs again");
    assert_eq!(ids_with(&e, "ks", "k", 4).len(), 5000 / 9 + 1);
    assert_eq!(e.check_table(&t).expect("check"), Vec::<String>::new());
}
