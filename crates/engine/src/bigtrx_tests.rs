//! Transactions larger than the redo log (bigtrx.rs): they commit, and a
//! crash at any point of their commit, or of the recovery after it, keeps
//! them all or nothing, and all when acknowledged.

use std::path::PathBuf;
use std::sync::Arc;

use quire_config::Config;
use quire_io::{CrashMode, FlushMethod, SimFs, Vfs};

use crate::catalog::ColumnDef;
use crate::engine::Engine;
use crate::txn::{Isolation, Scan};
use crate::types::{ColumnType, Value};
use crate::TableDef;

/// 8 MiB of redo: the largest frame is 512 KiB, so a record of more than
/// 128 KiB goes to a side file, and applying `ROWS` rows through three
/// trees writes about twice the log's capacity of redo.
fn cfg(binlog: bool) -> Config {
    Config {
        datadir: PathBuf::from("/big/data"),
        innodb_page_size: 4096,
        innodb_buffer_pool_size: 8 << 20,
        innodb_redo_log_capacity: 8 << 20,
        innodb_log_buffer_size: 256 << 10,
        innodb_log_write_ahead_size: 4096,
        log_bin: binlog,
        ..Config::default()
    }
}

const ROWS: i64 = 40_000;

fn open(sim: &SimFs, binlog: bool) -> crate::error::Result<Engine> {
    open_rec(sim, binlog).map(|(e, _)| e)
}

fn open_rec(sim: &SimFs, binlog: bool) -> crate::error::Result<(Engine, crate::EngineRecovery)> {
    let vfs: Arc<dyn Vfs> = Arc::new(sim.clone());
    Engine::open(vfs, &cfg(binlog))
}

/// big(id INT PRIMARY KEY, pad VARCHAR(200), grp INT, KEY(grp), KEY(pad))
fn table(e: &Engine) -> Arc<TableDef> {
    e.create_database("d", true).expect("db");
    let t = e
        .create_table(
            "d",
            "big",
            vec![
                ColumnDef::new("id", ColumnType::Int { unsigned: false }, false),
                ColumnDef::new("pad", ColumnType::varchar(200), false),
                ColumnDef::new("grp", ColumnType::Int { unsigned: false }, false),
            ],
            vec![0],
            vec![
                ("grp".into(), false, vec![2]),
                ("pad".into(), false, vec![1]),
            ],
            false,
        )
        .expect("table");
    e.store().sync_log().expect("sync");
    t
}

fn row(i: i64, round: i64) -> Vec<Option<Value>> {
    vec![
        Some(Value::Int(i)),
        Some(Value::Bytes(
            format!("{round:04}-{i:08}-{}", "p".repeat(80)).into_bytes(),
        )),
        Some(Value::Int(i % 97)),
    ]
}

/// Round 0 inserts every row; round r > 0 rewrites every row's pad.
fn big_commit(e: &Engine, t: &TableDef, round: i64) -> crate::error::Result<u64> {
    let mut tx = e.begin(Isolation::RepeatableRead, false);
    for i in 0..ROWS {
        if round == 0 {
            tx.insert(t, row(i, 0))?;
        } else {
            let k = crate::txn::Txn::encode_pk(t, &[Value::Int(i)])?;
            let r: Vec<Value> = row(i, round).into_iter().flatten().collect();
            tx.update(t, &k, r)?;
        }
    }
    tx.commit()
}

/// Which round every row shows (None: no rows), after checking that the
/// rows are all of one round and both indexes agree with them.
fn state(e: &Engine) -> Result<Option<i64>, String> {
    let t = e.table("d", "big").map_err(|x| x.to_string())?;
    let mut tx = e.begin(Isolation::RepeatableRead, true);
    let rows = tx.scan(&t, &Scan::default()).map_err(|x| x.to_string())?;
    for idx in ["grp", "pad"] {
        let via = tx
            .scan(
                &t,
                &Scan {
                    index: Some(idx.into()),
                    ..Scan::default()
                },
            )
            .map_err(|x| x.to_string())?;
        if via.len() != rows.len() {
            return Err(format!(
                "index {idx}: {} entries for {} rows",
                via.len(),
                rows.len()
            ));
        }
    }
    if rows.is_empty() {
        return Ok(None);
    }
    if rows.len() as i64 != ROWS {
        return Err(format!(
            "{} rows of {ROWS}: a transaction in part",
            rows.len()
        ));
    }
    let round_of = |r: &crate::Row| match &r.values[1] {
        Value::Bytes(b) => String::from_utf8_lossy(&b[..4]).parse::<i64>().ok(),
        _ => None,
    };
    let first = round_of(&rows[0]);
    if rows.iter().any(|r| round_of(r) != first) {
        return Err("rows of different transactions: one applied in part".into());
    }
    first.map(Some).ok_or_else(|| "unreadable pad".into())
}

#[test]
fn a_transaction_larger_than_the_redo_log_commits_and_survives_power_loss() {
    for binlog in [false, true] {
        let sim = SimFs::new(FlushMethod::Fsync);
        {
            let e = open(&sim, binlog).expect("open");
            let t = table(&e);
            big_commit(&e, &t, 0).expect("insert commit");
            let before = e.store().log().lsn();
            big_commit(&e, &t, 1).expect("update commit");
            assert_eq!(state(&e), Ok(Some(1)), "binlog {binlog}");
            // More redo than the log holds went by: the checkpoint had to
            // pass the transaction's own frame while it applied.
            assert!(
                e.store().log().lsn() - before > 8 << 20,
                "the update wrote {} bytes of redo",
                e.store().log().lsn() - before
            );
            assert!(e.store().log().checkpoint_lsn() > before);
            e.close(false).expect("close");
        }
        sim.crash(CrashMode::Power { sector: 512 }, 7);
        let e = open(&sim, binlog).expect("recover");
        assert_eq!(state(&e), Ok(Some(1)), "binlog {binlog}: after power loss");
        e.close(true).expect("close");
        drop(e);
        // Every side file is gone after a recovery and a clean close.
        let left = sim
            .list_dir(&cfg(binlog).datadir.join(crate::bigtrx::DIR))
            .unwrap_or_default()
            .into_iter()
            .filter(|p| p.ends_with(".ws"))
            .count();
        assert_eq!(left, 0, "binlog {binlog}: side files left");
    }
}

/// Crashes at many points of a large commit, and inside the recovery
/// after it: the rows are the old round or the new one, the new one when
/// the commit was acknowledged.
#[test]
fn a_crash_anywhere_in_a_large_commit_or_its_recovery_is_all_or_nothing() {
    let (mut old, mut new, mut prepass) = (0, 0, 0);
    for binlog in [false, true] {
        let base = SimFs::new(FlushMethod::Fsync);
        {
            let e = open(&base, binlog).expect("open");
            let t = table(&e);
            big_commit(&e, &t, 0).expect("insert");
            e.close(true).expect("close");
        }
        // How many I/O operations the update commit does, uninterrupted.
        let probe = base.fork();
        let ops = {
            let e = open(&probe, binlog).expect("open");
            let t = e.table("d", "big").expect("t");
            let before = probe.stats().ops;
            big_commit(&e, &t, 1).expect("update");
            let n = probe.stats().ops - before;
            e.close(false).expect("close");
            n
        };
        // Power loss at spread points with the binlog on, process crashes
        // with it off (a bounded slice: each case applies 40,000 rows).
        let (points, modes): (u64, &[CrashMode]) = if binlog {
            (4, &[CrashMode::Power { sector: 512 }])
        } else {
            (3, &[CrashMode::Process])
        };
        for p in 0..points {
            let at = p * ops / points + p;
            for &mode in modes {
                let sim = base.fork();
                let e = open(&sim, binlog).expect("open");
                let t = e.table("d", "big").expect("t");
                sim.arm_crash_after(at);
                let acked = big_commit(&e, &t, 1).is_ok() && !sim.is_down();
                if !sim.is_down() {
                    sim.arm_crash_after(0);
                    let _ = e.store().sync_log();
                }
                drop(e);
                sim.crash(mode, at);
                // A crash inside the recovery too, at a spread point.
                sim.arm_crash_after(at % 97 + 3);
                match open(&sim, binlog) {
                    Ok(e) => drop(e),
                    Err(_) => assert!(sim.is_down(), "recovery failed without a crash"),
                }
                sim.crash(mode, at + 1);
                sim.disarm();
                let (e, rec) = open_rec(&sim, binlog).expect("recover");
                prepass += rec.large_replayed;
                let got = state(&e);
                let what = format!("binlog {binlog}, crash at I/O {at} of {ops}, {mode:?}");
                match got {
                    Ok(Some(1)) => new += 1,
                    Ok(Some(0)) => {
                        assert!(!acked, "{what}: an acknowledged commit was lost");
                        old += 1;
                    }
                    other => panic!("{what}: {other:?}"),
                }
            }
        }
    }
    eprintln!(
        "outcomes: old {old}, new {new}; large transactions replayed from anchored files {prepass}"
    );
    assert!(old > 0 && new > 0, "the crash points cover both outcomes");
    assert!(prepass > 0, "some recovery replayed an anchored file");
}

/// A large transaction whose rows a later one rewrote, both after the
/// checkpoint when the power goes: recovery must not rewrite the first
/// one's rows (their pages already hold the later state), or its replay
/// needs more redo than the pinned checkpoint leaves free.
#[test]
fn recovery_replays_only_the_last_writer_of_each_row() {
    const N: i64 = 10_000;
    let sim = SimFs::new(FlushMethod::Fsync);
    {
        let e = open(&sim, false).expect("open");
        let t = table(&e);
        let mut tx = e.begin(Isolation::RepeatableRead, false);
        for i in 0..N {
            tx.insert(&t, row(i, 0)).expect("insert");
        }
        tx.commit().expect("insert commit");
        e.close(true).expect("close");
    }
    let (cp, lsn) = {
        let e = open(&sim, false).expect("open");
        let t = e.table("d", "big").expect("t");
        for round in 1..=2 {
            let mut tx = e.begin(Isolation::RepeatableRead, false);
            for i in 0..N {
                let k = crate::txn::Txn::encode_pk(&t, &[Value::Int(i)]).expect("pk");
                let r: Vec<Value> = row(i, round).into_iter().flatten().collect();
                tx.update(&t, &k, r).expect("update");
            }
            tx.commit().expect("update commit");
        }
        e.store().sync_log().expect("sync");
        let log = e.store().log();
        let at = (log.checkpoint_lsn(), log.lsn());
        drop(e);
        at
    };
    sim.crash(CrashMode::Power { sector: 512 }, 11);
    let (e, rec) = open_rec(&sim, false).expect("recover");
    // Both large records were after the checkpoint: the case at hand.
    assert_eq!(rec.commits_replayed, 2, "checkpoint {cp}, log end {lsn}");
    let t = e.table("d", "big").expect("t");
    let mut tx = e.begin(Isolation::RepeatableRead, true);
    let rows = tx.scan(&t, &Scan::default()).expect("scan");
    assert_eq!(rows.len() as i64, N, "checkpoint {cp}, log end {lsn}");
    let round2 = rows
        .iter()
        .filter(|r| matches!(&r.values[1], Value::Bytes(b) if b.starts_with(b"0002")))
        .count();
    assert_eq!(round2 as i64, N, "every row shows the last round; {rec:?}");
}
