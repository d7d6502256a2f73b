//! GTIDs through the engine: with gtid_mode ON every transaction and DDL
//! gets the next number in binlog order, each file's PREVIOUS_GTIDS names
//! the GTIDs before it, PURGE moves gtid_purged, RESET MASTER empties both,
//! and after a crash at any I/O gtid_executed is exactly what the
//! recovered binlog holds: every acknowledged commit, one GTID per row.

use std::path::Path;
use std::sync::Arc;

use quire_config::Config;
use quire_io::{CrashMode, FlushMethod, SimFs, Vfs};

use super::GtidSet;
use crate::binlog::format::{parse_events, EventData};
use crate::binlog::purge::PurgeTarget;
use crate::binlog::test_util::{commit_id as commit, count_rows as rows, int_table as table};
use crate::engine::Engine;
use crate::tests::cfg;

fn gtid_cfg() -> Config {
    Config {
        gtid_mode: "ON".into(),
        enforce_gtid_consistency: "ON".into(),
        ..cfg()
    }
}

fn open_on(sim: &SimFs) -> Engine {
    let vfs: Arc<dyn Vfs> = Arc::new(sim.clone());
    Engine::open(vfs, &gtid_cfg()).expect("open").0
}

fn executed(e: &Engine) -> String {
    e.gtid_var("gtid_executed").expect("var")
}

fn uuid(e: &Engine) -> String {
    e.server_uuid().to_string()
}

#[test]
fn gtid_mode_steps_up_from_off_and_numbers_every_transaction() {
    let sim = SimFs::new(FlushMethod::Fsync);
    let vfs: Arc<dyn Vfs> = Arc::new(sim.clone());
    let e = Engine::open(vfs, &cfg()).expect("open").0;
    assert_eq!(e.gtid_var("gtid_mode").as_deref(), Some("OFF"));
    assert_eq!(
        e.set_global("gtid_mode", "ON").expect_err("jump").code,
        1788
    );
    e.set_global("gtid_mode", "OFF_PERMISSIVE").expect("step");
    e.set_global("gtid_mode", "ON_PERMISSIVE").expect("step");
    assert_eq!(
        e.set_global("gtid_mode", "ON").expect_err("enforce").code,
        1779
    );
    e.set_global("enforce_gtid_consistency", "ON")
        .expect("enforce");
    e.set_global("gtid_mode", "ON").expect("on");
    assert_eq!(e.gtid_var("gtid_mode").as_deref(), Some("ON"));
    let t = table(&e); // GTIDs 1 (CREATE DATABASE) and 2 (CREATE TABLE)
    for id in 0..5 {
        commit(&e, &t, id).expect("commit");
    }
    let u = uuid(&e);
    assert_eq!(executed(&e), format!("{u}:1-7"));

    // The next file names them all; purging the older file makes them
    // purged.
    e.rotate_binlog().expect("rotate");
    commit(&e, &t, 5).expect("commit");
    assert_eq!(executed(&e), format!("{u}:1-8"));
    let b = e.binlog().expect("binlog");
    let (active, _) = b.position();
    let bytes = sim
        .file_bytes(&Path::new("/e/data").join(&active))
        .expect("file");
    let log = parse_events(&bytes);
    let prev = log.events.iter().find_map(|ev| match &ev.data {
        EventData::PreviousGtids(s) => Some(s.clone()),
        _ => None,
    });
    assert_eq!(prev.map(|s| s.to_text()), Some(format!("{u}:1-7")));
    let gnos: Vec<i64> = log
        .events
        .iter()
        .filter_map(|ev| match &ev.data {
            EventData::Gtid {
                anonymous: false,
                gno,
                ..
            } => Some(*gno),
            _ => None,
        })
        .collect();
    assert_eq!(gnos, [8]);
    assert_eq!(e.gtid_var("gtid_purged").as_deref(), Some(""));
    b.purge(&PurgeTarget::To(active.clone()), false)
        .expect("purge");
    assert_eq!(e.gtid_var("gtid_purged"), Some(format!("{u}:1-7")));

    // Down again: anonymous transactions, no new GTIDs.
    e.set_global("gtid_mode", "ON_PERMISSIVE").expect("down");
    e.set_global("gtid_mode", "OFF_PERMISSIVE").expect("down");
    commit(&e, &t, 6).expect("commit");
    assert_eq!(executed(&e), format!("{u}:1-8"));

    e.reset_binlog(1).expect("reset");
    assert_eq!(executed(&e), "");
    assert_eq!(e.gtid_var("gtid_purged").as_deref(), Some(""));
}

/// A crash at every I/O while GTID transactions commit: afterwards
/// gtid_executed holds every acknowledged commit's GTID, is gap-free, and
/// counts exactly the DDL plus the rows the table holds; new GTIDs
/// continue after it.
#[test]
fn gtid_executed_after_a_crash_is_what_the_recovered_binlog_holds() {
    for k in (0..400).step_by(7) {
        let sim = SimFs::new(FlushMethod::Fsync);
        let e = open_on(&sim);
        let t = table(&e);
        let u = uuid(&e);
        e.rotate_binlog().expect("rotate");
        sim.arm_crash_after(k);
        let mut acked = 0;
        for id in 0..12 {
            if commit(&e, &t, id).is_err() {
                break;
            }
            acked += 1;
            if id == 6 && e.rotate_binlog().is_err() {
                break;
            }
        }
        let crashed = sim.is_down();
        drop(e);
        sim.crash(CrashMode::Power { sector: 512 }, k);
        let e = open_on(&sim);
        let set = GtidSet::parse(&executed(&e)).expect("parse");
        let n = rows(&e) as u64;
        assert!(n >= acked, "k={k}: {n} rows, {acked} acknowledged");
        assert_eq!(set.count(), 2 + n, "k={k}: {} for {n} rows", set.to_text());
        let want = GtidSet::parse(&format!("{u}:1-{}", 2 + n)).expect("p");
        assert_eq!(set, want, "k={k}");
        let t = e.table("d", "t").expect("t");
        commit(&e, &t, 100).expect("commit after recovery");
        assert_eq!(executed(&e), format!("{u}:1-{}", 3 + n), "k={k}");
        if !crashed {
            break;
        }
    }
}
