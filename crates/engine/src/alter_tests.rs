//! ALTER TABLE / RENAME TABLE / DROP INDEX (alter.rs): every definition
//! survives a reopen, a crash at any I/O of RENAME TABLE, ADD INDEX or
//! DROP INDEX leaves the old or the new table whole with all its rows, and
//! each statement reaches the binlog as one QUERY event.

use std::sync::Arc;

use quire_io::{CrashMode, FlushMethod, SimFs, Vfs};

use crate::alter::{RenamePair, TableChange};
use crate::binlog::format::EventData;
use crate::catalog::ColumnDef;
use crate::engine::Engine;
use crate::tests::{binlog_events, cfg, open};
use crate::txn::{Isolation, Scan};
use crate::types::{ColumnType, Value};
use crate::TableDef;

pub(crate) const ROWS: i64 = 60;

pub(crate) fn reopen(sim: &SimFs, e: Engine) -> Engine {
    e.close(true).expect("close");
    drop(e);
    open(sim)
}

fn int() -> ColumnType {
    ColumnType::Int { unsigned: false }
}

/// d.t(id INT PRIMARY KEY AUTO_INCREMENT, v INT, KEY kv(v)) with ROWS rows,
/// and d.u(x INT PRIMARY KEY) with one row.
pub(crate) fn setup(e: &Engine) -> Arc<TableDef> {
    e.create_database("d", true).expect("db");
    let mut id = ColumnDef::new("id", int(), false);
    id.auto_increment = true;
    let t = e
        .create_table(
            "d",
            "t",
            vec![id, ColumnDef::new("v", int(), true)],
            vec![0],
            vec![("kv".into(), false, vec![1])],
            false,
        )
        .expect("t");
    let mut tx = e.begin(Isolation::RepeatableRead, false);
    for i in 1..=ROWS {
        tx.insert(&t, vec![Some(Value::Int(i)), Some(Value::Int(i * 10))])
            .expect("insert");
    }
    tx.commit().expect("commit");
    let u = e
        .create_table(
            "d",
            "u",
            vec![ColumnDef::new("x", int(), false)],
            vec![0],
            vec![],
            false,
        )
        .expect("u");
    let mut tx = e.begin(Isolation::RepeatableRead, false);
    tx.insert(&u, vec![Some(Value::Int(7))]).expect("insert u");
    tx.commit().expect("commit u");
    t
}

/// Rows of `db.name`, read through `index` (None: the primary key).
pub(crate) fn count(e: &Engine, db: &str, name: &str, index: Option<&str>) -> usize {
    let t = e.table(db, name).expect("table");
    let mut tx = e.begin(Isolation::RepeatableRead, false);
    let scan = Scan {
        index: index.map(str::to_string),
        ..Scan::default()
    };
    tx.scan(&t, &scan).expect("scan").len()
}

fn pair(from: &str, to: &str) -> RenamePair {
    RenamePair {
        from: ("d".into(), from.into()),
        to: ("d".into(), to.into()),
    }
}

pub(crate) fn queries(sim: &SimFs) -> Vec<String> {
    binlog_events(sim)
        .into_iter()
        .filter_map(|ev| match ev.data {
            EventData::Query { sql, .. } => Some(sql),
            _ => None,
        })
        .collect()
}

#[test]
fn each_ddl_survives_a_reopen_and_reaches_the_binlog() {
    let sim = SimFs::new(FlushMethod::Fsync);
    let mut e = open(&sim);
    setup(&e);
    e.rename_tables(&[pair("t", "tmp"), pair("u", "t"), pair("tmp", "u")], None)
        .expect("swap");
    e = reopen(&sim, e);
    assert_eq!(count(&e, "d", "u", None), ROWS as usize);
    assert_eq!(count(&e, "d", "t", None), 1);
    let changes = [
        TableChange::RenameColumn {
            from: "v".into(),
            to: "w".into(),
        },
        TableChange::Default {
            column: "v".into(),
            value: Some(Value::Int(5)),
        },
        TableChange::RenameIndex {
            from: "kv".into(),
            to: "kw".into(),
        },
    ];
    e.alter_table("d", "u", &changes, None).expect("alter");
    e = reopen(&sim, e);
    let u = e.table("d", "u").expect("u");
    assert_eq!(u.columns[1].name, "w");
    assert_eq!(u.columns[1].default, Some(Value::Int(5)));
    assert_eq!(count(&e, "d", "u", Some("kw")), ROWS as usize);
    e.alter_table("d", "u", &[TableChange::DropIndex("kw".into())], None)
        .expect("drop index");
    e = reopen(&sim, e);
    assert!(e.table("d", "u").expect("u").indexes.is_empty());
    let id = e.table("d", "u").expect("u").id;
    let trees: Vec<String> = e
        .store()
        .indexes()
        .expect("dir")
        .into_iter()
        .map(|x| x.0)
        .collect();
    assert!(!trees.contains(&format!("t{id}.1")), "{trees:?}");
    e.create_index("d", "u", "kw2", true, vec![1], None)
        .expect("add index");
    e.alter_auto_increment("d", "u", 5, None)
        .expect("auto_increment");
    e = reopen(&sim, e);
    assert_eq!(count(&e, "d", "u", Some("kw2")), ROWS as usize);
    let next = e.peek_auto_increment(id).expect("peek");
    assert_eq!(next, ROWS as u64 + 1, "never below max + 1");
    e.alter_auto_increment("d", "u", 1000, None).expect("raise");
    e.create_database("d2", false).expect("d2");
    e.alter_table(
        "d",
        "u",
        &[TableChange::Rename {
            db: "d2".into(),
            name: "moved".into(),
        }],
        None,
    )
    .expect("move");
    e = reopen(&sim, e);
    assert_eq!(e.peek_auto_increment(id).expect("peek"), 1000);
    assert_eq!(count(&e, "d2", "moved", Some("kw2")), ROWS as usize);
    assert_eq!(e.table("d", "u").expect_err("moved").code, 1146);
    let q = queries(&sim);
    for want in [
        "RENAME TABLE `d`.`t` TO `d`.`tmp`, `d`.`u` TO `d`.`t`, `d`.`tmp` TO `d`.`u`",
        "ALTER TABLE `d`.`u` RENAME COLUMN `v` TO `w`, ALTER COLUMN `v` SET DEFAULT '5', RENAME INDEX `kv` TO `kw`",
        "ALTER TABLE `d`.`u` DROP INDEX `kw`",
        "CREATE UNIQUE INDEX `kw2` ON `d`.`u` (`w`)",
        "ALTER TABLE `d`.`u` AUTO_INCREMENT=5",
        "ALTER TABLE `d`.`u` RENAME TO `d2`.`moved`",
    ] {
        assert!(q.iter().any(|x| x == want), "{want} not in {q:#?}");
    }
    e.close(true).expect("close");
}

#[test]
fn a_failed_rename_or_alter_changes_nothing() {
    let sim = SimFs::new(FlushMethod::Fsync);
    let e = open(&sim);
    setup(&e);
    let err = e
        .rename_tables(&[pair("t", "t2"), pair("nope", "x")], None)
        .expect_err("missing source");
    assert_eq!(err.code, 1146);
    let err = e
        .rename_tables(&[pair("t", "t2"), pair("u", "t2")], None)
        .expect_err("taken target");
    assert_eq!(err.code, 1050);
    assert!(e.table("d", "t").is_ok() && e.table("d", "t2").is_err());
    let changes = [
        TableChange::RenameColumn {
            from: "v".into(),
            to: "w".into(),
        },
        TableChange::DropIndex("nope".into()),
    ];
    assert_eq!(
        e.alter_table("d", "t", &changes, None)
            .expect_err("1091")
            .code,
        1091
    );
    assert_eq!(e.table("d", "t").expect("t").columns[1].name, "v");
    let dup = [TableChange::RenameColumn {
        from: "v".into(),
        to: "ID".into(),
    }];
    assert_eq!(
        e.alter_table("d", "t", &dup, None).expect_err("1060").code,
        1060
    );
    // A failed unique build leaves no tree behind for the next index.
    let mut tx = e.begin(Isolation::RepeatableRead, false);
    let t = e.table("d", "t").expect("t");
    tx.insert(&t, vec![Some(Value::Int(1000)), Some(Value::Int(10))])
        .expect("dup v");
    tx.commit().expect("commit");
    let err = e
        .create_index("d", "t", "uv", true, vec![1], None)
        .expect_err("duplicate");
    assert_eq!(err.code, 1062);
    e.create_index("d", "t", "iv", false, vec![0], None)
        .expect("index after a failed one");
    assert_eq!(count(&e, "d", "t", Some("iv")), ROWS as usize + 1);
    e.close(true).expect("close");
}

/// Crashes at every I/O of `ddl` (until one run finishes without reaching
/// the crash point) and hands each recovered engine to `judge`, which says
/// whether it found the new definition; both outcomes must be met.
/// I/O operations a swept DDL may take.
const MAX_CRASH_POINTS: u64 = 2000;

pub(crate) fn crash_sweep(ddl: impl Fn(&Engine), judge: impl Fn(&Engine, u64) -> bool) {
    crash_sweep_seeds(1, &ddl, &judge);
}

/// [`crash_sweep`] with `seeds` power losses per crash point (each tears
/// the unsynced writes differently). Returns the crashes run.
pub(crate) fn crash_sweep_seeds(
    seeds: u64,
    ddl: &dyn Fn(&Engine),
    judge: &dyn Fn(&Engine, u64) -> bool,
) -> u64 {
    let (mut old, mut new) = (0u64, 0u64);
    for n in 0..MAX_CRASH_POINTS {
        let mut fired = false;
        for seed in 0..seeds {
            let sim = SimFs::new(FlushMethod::Fsync);
            {
                let e = open(&sim);
                setup(&e);
                e.store().checkpoint().expect("checkpoint");
                sim.arm_crash_after(n);
                ddl(&e);
                let _ = e.store().sync_log();
                let _ = e.close(false);
            }
            fired = sim.is_down();
            sim.disarm();
            sim.crash(CrashMode::Power { sector: 512 }, n * 1000 + seed);
            let e = open(&sim);
            if judge(&e, n) {
                new += 1;
            } else {
                old += 1;
            }
            e.close(true).expect("close");
            drop(e);
            let vfs: Arc<dyn Vfs> = Arc::new(sim.clone());
            let r = quire_storage::check::check_datadir(&vfs, &cfg().datadir).expect("check");
            assert!(r.is_ok(), "crash point {n} seed {seed}: {:?}", r.errors);
        }
        if !fired {
            assert!(old > 0 && new > 1, "crash points: {old} old, {new} new");
            return old + new;
        }
    }
    panic!("the DDL did not finish within {MAX_CRASH_POINTS} I/O operations");
}

/// A DDL statement swept by the crash tests: what it does to the
/// table `setup` made, and a judge of the state a crash left (true: the
/// new state).
pub(crate) struct DdlCase {
    pub name: &'static str,
    pub ddl: fn(&Engine),
    pub judge: fn(&Engine, u64) -> bool,
}

/// RENAME TABLE swapping t and u through tmp: all old or all new names.
pub(crate) const RENAME_SWAP: DdlCase = DdlCase {
    name: "rename-table-swap",
    ddl: |e| {
        let _ = e.rename_tables(&[pair("t", "tmp"), pair("u", "t"), pair("tmp", "u")], None);
    },
    judge: |e, n| {
        let big_at = if e.table("d", "u").expect("u").columns.len() == 2 {
            "u"
        } else {
            "t"
        };
        let small_at = if big_at == "u" { "t" } else { "u" };
        assert_eq!(
            count(e, "d", big_at, None),
            ROWS as usize,
            "crash point {n}"
        );
        assert_eq!(
            count(e, "d", big_at, Some("kv")),
            ROWS as usize,
            "crash point {n}"
        );
        assert_eq!(count(e, "d", small_at, None), 1, "crash point {n}");
        assert!(e.table("d", "tmp").is_err(), "crash point {n}");
        big_at == "u"
    },
};

/// CREATE UNIQUE INDEX: no index or a whole one.
pub(crate) const ADD_INDEX: DdlCase = DdlCase {
    name: "add-index",
    ddl: |e| {
        let _ = e.create_index("d", "t", "kid", true, vec![0, 1], None);
    },
    judge: |e, n| {
        assert_eq!(count(e, "d", "t", None), ROWS as usize, "crash point {n}");
        let t = e.table("d", "t").expect("t");
        let there = t.index("kid").is_some();
        if !there {
            e.create_index("d", "t", "kid", true, vec![0, 1], None)
                .expect("add after the crash");
        }
        assert_eq!(
            count(e, "d", "t", Some("kid")),
            ROWS as usize,
            "crash point {n}"
        );
        there
    },
};

/// DROP INDEX: a whole index or none, and no orphan tree.
pub(crate) const DROP_INDEX: DdlCase = DdlCase {
    name: "drop-index",
    ddl: |e| {
        let _ = e.alter_table("d", "t", &[TableChange::DropIndex("kv".into())], None);
    },
    judge: |e, n| {
        assert_eq!(count(e, "d", "t", None), ROWS as usize, "crash point {n}");
        let t = e.table("d", "t").expect("t");
        match t.index("kv") {
            Some(_) => {
                assert_eq!(
                    count(e, "d", "t", Some("kv")),
                    ROWS as usize,
                    "crash point {n}"
                );
                false
            }
            None => {
                let trees: Vec<String> = e
                    .store()
                    .indexes()
                    .expect("dir")
                    .into_iter()
                    .map(|x| x.0)
                    .collect();
                assert!(
                    !trees.contains(&t.index_tree(1)),
                    "crash point {n}: orphan tree left: {trees:?}"
                );
                true
            }
        }
    },
};

#[test]
fn a_crash_at_any_io_of_rename_table_leaves_all_old_or_all_new_names() {
    crash_sweep(RENAME_SWAP.ddl, RENAME_SWAP.judge);
}

#[test]
fn a_crash_at_any_io_of_add_index_leaves_no_index_or_a_whole_one() {
    crash_sweep(ADD_INDEX.ddl, ADD_INDEX.judge);
}

#[test]
fn a_crash_at_any_io_of_drop_index_leaves_a_whole_index_or_none() {
    crash_sweep(DROP_INDEX.ddl, DROP_INDEX.judge);
}
