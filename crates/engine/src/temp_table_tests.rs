//! ALTER TABLE on a temporary table (temp_table.rs): the copy takes the
//! old table's place in `by_id` only, a failure leaves the old table and
//! no trees behind, nothing reaches the binary log, a rename keeps the
//! id and trees; a crash at any I/O of the copy leaves no tree of either
//! table after the next start, and the permanent tables whole.

use std::collections::BTreeSet;
use std::sync::Arc;

use quire_io::{CrashMode, FlushMethod, SimFs, Vfs};

use crate::alter::AlterChecks;
use crate::alter_tests::{setup, ROWS};
use crate::catalog::ColumnDef;
use crate::engine::Engine;
use crate::rebuild::{ColumnChange, NewIndex, Place, Rebuild};
use crate::tests::{cfg, open};
use crate::txn::Isolation;
use crate::types::{ColumnType, Value};
use crate::TableDef;

const TEMP_ROWS: i64 = 5;

fn int() -> ColumnType {
    ColumnType::Int { unsigned: false }
}

/// The table ids that have trees in the store.
fn tree_ids(e: &Engine) -> BTreeSet<u32> {
    e.store()
        .indexes()
        .expect("indexes")
        .into_iter()
        .filter_map(|(n, _)| {
            let rest = n.strip_prefix('t')?;
            rest.split_once('.')?.0.parse().ok()
        })
        .collect()
}

/// Bytes in every binlog file the index names.
fn binlog_bytes(sim: &SimFs) -> usize {
    let idx = sim
        .file_bytes(&cfg().datadir.join("binlog.index"))
        .expect("index");
    String::from_utf8_lossy(&idx)
        .lines()
        .filter_map(|l| sim.file_bytes(&cfg().datadir.join(l.trim().trim_start_matches("./"))))
        .map(|b| b.len())
        .sum()
}

/// A temporary d.t (shadowing the permanent one) with `rows` rows,
/// every `v` 1.
fn temp_t(e: &Engine, rows: i64) -> Arc<TableDef> {
    let perm = e.table("d", "t").expect("t");
    let tmp = e
        .create_temporary_table("d", "t", Engine::like_spec(&perm, "t"))
        .expect("temporary");
    let mut tx = e.begin(Isolation::RepeatableRead, false);
    for i in 1..=rows {
        tx.insert(&tmp, vec![Some(Value::Int(i)), Some(Value::Int(1))])
            .expect("insert");
    }
    tx.commit().expect("commit");
    tmp
}

/// ADD COLUMN w FIRST (9 for the rows there), KEY kw (w).
fn add_w() -> Rebuild {
    Rebuild {
        columns: vec![ColumnChange::Add {
            column: ColumnDef::new("w", int(), true),
            at: Place::First,
            fill: Some(Value::Int(9)),
        }],
        add_indexes: vec![NewIndex {
            name: Some("kw".into()),
            unique: false,
            columns: vec!["w".into()],
            prefix: Vec::new(),
        }],
        ..Rebuild::default()
    }
}

#[test]
fn a_temporary_table_is_altered_by_a_copy_that_replaces_it() {
    let sim = SimFs::new(FlushMethod::Fsync);
    let e = open(&sim);
    let perm = setup(&e);
    let tmp = temp_t(&e, TEMP_ROWS);
    let trees = tree_ids(&e);
    let logged = binlog_bytes(&sim);
    // UNIQUE over duplicates: 1062, the old table and trees untouched.
    let unique = Rebuild {
        add_indexes: vec![NewIndex {
            name: Some("uv".into()),
            unique: true,
            columns: vec!["v".into()],
            prefix: Vec::new(),
        }],
        ..Rebuild::default()
    };
    let err = e
        .rebuild_temporary_table(&tmp, &unique, None, &AlterChecks::default())
        .expect_err("duplicates");
    assert_eq!(err.code, 1062, "{err:?}");
    assert_eq!(tree_ids(&e), trees, "the failed copy's trees are gone");
    let mut tx = e.begin(Isolation::RepeatableRead, false);
    assert!(tx.get(&tmp, &[Value::Int(2)]).expect("get").is_some());
    drop(tx);
    // The copy: a new id and trees, the rows with the new column.
    let (new, rows) = e
        .rebuild_temporary_table(&tmp, &add_w(), None, &AlterChecks::default())
        .expect("rebuild");
    assert_eq!(rows, TEMP_ROWS as u64);
    assert!(new.temporary && new.id != tmp.id && new.index("kw").is_some());
    assert_eq!(new.columns[0].name, "w");
    assert_eq!(e.table("d", "t").expect("by name").id, perm.id);
    let old_id = tmp.id;
    e.drop_replaced_temporary(tmp).expect("drop old");
    let now = tree_ids(&e);
    assert!(!now.contains(&old_id) && now.contains(&new.id), "{now:?}");
    let mut tx = e.begin(Isolation::RepeatableRead, false);
    let row = tx.get(&new, &[Value::Int(3)]).expect("get").expect("row");
    assert_eq!(row, vec![Value::Int(9), Value::Int(3), Value::Int(1)]);
    drop(tx);
    assert_eq!(binlog_bytes(&sim), logged, "nothing logged");
    // A rename keeps the table; an unknown database is 1049.
    let err = e
        .rename_temporary_table(&new, "nodb", "x")
        .expect_err("no database");
    assert_eq!(err.code, 1049);
    let renamed = e.rename_temporary_table(&new, "d", "z").expect("rename");
    assert_eq!((renamed.id, renamed.name.as_str()), (new.id, "z"));
    assert!(e.table("d", "z").is_err(), "no catalog name");
    // AUTO_INCREMENT = n: not below the largest id.
    e.temporary_auto_increment(&renamed, 2)
        .expect("auto_increment");
    let mut tx = e.begin(Isolation::RepeatableRead, false);
    tx.insert(
        &renamed,
        vec![Some(Value::Int(1)), None, Some(Value::Int(1))],
    )
    .expect("insert");
    tx.commit().expect("commit");
    let mut tx = e.begin(Isolation::RepeatableRead, false);
    assert!(tx
        .get(&renamed, &[Value::Int(TEMP_ROWS + 1)])
        .expect("get")
        .is_some());
    drop(tx);
    drop(new);
    e.drop_temporary_table(renamed).expect("drop");
    assert_eq!(
        tree_ids(&e),
        trees.into_iter().filter(|&i| i != old_id).collect()
    );
    assert!(e
        .rebuild_temporary_table(&perm, &add_w(), None, &AlterChecks::default())
        .is_err());
}

/// A crash at every I/O of the copy: the next start finds neither the
/// old nor the new temporary table's trees, and the permanent d.t whole.
#[test]
fn a_crash_during_a_temporary_tables_copy_leaves_nothing_behind() {
    for n in 0..2000u64 {
        let sim = SimFs::new(FlushMethod::Fsync);
        let baseline;
        {
            let e = open(&sim);
            setup(&e);
            baseline = tree_ids(&e);
            // Enough rows that the copy's log fills and writes.
            let tmp = temp_t(&e, 4000);
            e.store().checkpoint().expect("checkpoint");
            sim.arm_crash_after(n);
            if let Ok((_, _)) =
                e.rebuild_temporary_table(&tmp, &add_w(), None, &AlterChecks::default())
            {
                let _ = e.drop_replaced_temporary(tmp);
            }
            let _ = e.store().sync_log();
            let _ = e.close(false);
        }
        let fired = sim.is_down();
        sim.disarm();
        sim.crash(CrashMode::Power { sector: 512 }, n);
        let e = open(&sim);
        assert_eq!(tree_ids(&e), baseline, "crash point {n}");
        let t = e.table("d", "t").expect("t");
        let mut tx = e.begin(Isolation::RepeatableRead, false);
        assert!(tx.get(&t, &[Value::Int(ROWS)]).expect("get").is_some());
        drop(tx);
        e.close(true).expect("close");
        drop(e);
        let vfs: Arc<dyn Vfs> = Arc::new(sim.clone());
        let r = quire_storage::check::check_datadir(&vfs, &cfg().datadir).expect("check");
        assert!(r.is_ok(), "crash point {n}: {:?}", r.errors);
        if !fired {
            assert!(n > 0, "the copy did some I/O");
            return;
        }
    }
    panic!("the copy did not finish within 2000 I/O operations");
}
