//! PURGE BINARY LOGS keeps what a dump reads and the active file, with
//! MySQL's warnings; expiry removes old files only; RESET MASTER is
//! all-or-nothing through a crash at any of its I/Os.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use quire_io::{CrashMode, FlushMethod, SimFs, Vfs};

use super::{PurgeTarget, RESET_TO_MAX};
use crate::binlog::dump::DumpStep;
use crate::binlog::test_util::{commit_id, count_rows, int_table};
use crate::engine::Engine;
use crate::tests::{cfg, open};
use crate::TableDef;

fn names(e: &Engine) -> Vec<String> {
    let b = e.binlog().expect("binlog on");
    b.files()
        .expect("files")
        .into_iter()
        .map(|(n, _)| n)
        .collect()
}

/// Files binlog.000001 .. binlog.000005 (the last active), one commit each.
fn five_files(e: &Engine, t: &TableDef) {
    for id in 0..4 {
        commit_id(e, t, id).expect("commit");
        e.rotate_binlog().expect("rotate");
    }
    commit_id(e, t, 4).expect("commit");
}

#[test]
fn purge_to_stops_at_a_file_a_dump_reads_and_warns_as_mysql() {
    let sim = SimFs::new(FlushMethod::Fsync);
    let e = open(&sim);
    let t = int_table(&e);
    five_files(&e, &t);
    let b = e.binlog().expect("binlog on");
    let err = b
        .purge(&PurgeTarget::To("binlog.999999".into()), false)
        .expect_err("unknown target");
    assert_eq!(err.code, 1373);

    let cur = b.dump_open("binlog.000003", 4).expect("dump");
    let out = b
        .purge(&PurgeTarget::To("binlog.000005".into()), false)
        .expect("purge");
    assert_eq!(out.purged, ["binlog.000001", "binlog.000002"]);
    assert_eq!(out.warnings.len(), 1);
    assert_eq!(out.warnings[0].0, 1867);
    assert_eq!(
        out.warnings[0].1,
        "file ./binlog.000003 was not purged because it was being read by 1 thread(s), purged only 2 out of 4 files."
    );
    assert_eq!(names(&e)[0], "binlog.000003");
    assert!(!sim.files().iter().any(|p| p.ends_with("binlog.000002")));

    drop(cur);
    let out = b
        .purge(&PurgeTarget::To("./binlog.000005".into()), false)
        .expect("purge");
    assert_eq!(out.purged, ["binlog.000003", "binlog.000004"]);
    assert!(out.warnings.is_empty(), "TO the active file: no warning");
    assert_eq!(names(&e), ["binlog.000005"]);

    // BEFORE a time after every file: the active one stays, with 1868.
    let later = SystemTime::now() + Duration::from_secs(3600);
    let out = b.purge(&PurgeTarget::Before(later), false).expect("purge");
    assert!(out.purged.is_empty());
    assert_eq!(out.warnings[0].0, 1868);
    assert_eq!(
        out.warnings[0].1,
        "file ./binlog.000005 was not purged because it is the active log file."
    );
    // Automatic purges (expiry) warn nobody.
    let out = b.purge(&PurgeTarget::Before(later), true).expect("purge");
    assert!(out.warnings.is_empty());

    // The log goes on, and survives a restart with its index.
    commit_id(&e, &t, 5).expect("commit");
    drop(e);
    sim.crash(CrashMode::Power { sector: 512 }, 1);
    let vfs: Arc<dyn Vfs> = Arc::new(sim.clone());
    let (e, _) = Engine::open(vfs, &cfg()).expect("recover");
    assert_eq!(names(&e), ["binlog.000005", "binlog.000006"]);
    assert_eq!(count_rows(&e), 6);
}

#[test]
fn purge_before_removes_only_files_last_written_before_the_time() {
    let sim = SimFs::new(FlushMethod::Fsync);
    let e = open(&sim);
    let t = int_table(&e);
    five_files(&e, &t);
    let b = e.binlog().expect("binlog on");
    let cut = SystemTime::now();
    std::thread::sleep(Duration::from_millis(20));
    commit_id(&e, &t, 5).expect("commit");
    e.rotate_binlog().expect("rotate");
    let out = b.purge(&PurgeTarget::Before(cut), false).expect("purge");
    // Files 1-4 were closed before `cut`; 5 was written after it.
    assert_eq!(
        out.purged,
        [
            "binlog.000001",
            "binlog.000002",
            "binlog.000003",
            "binlog.000004"
        ]
    );
    assert!(
        out.warnings.is_empty(),
        "stopped at a newer file: no warning"
    );
    assert_eq!(names(&e), ["binlog.000005", "binlog.000006"]);
}

#[test]
fn expiry_runs_after_a_rotation_and_never_takes_the_active_file() {
    let sim = SimFs::new(FlushMethod::Fsync);
    let e = open(&sim);
    let t = int_table(&e);
    five_files(&e, &t);
    let b = e.binlog().expect("binlog on");
    std::thread::sleep(Duration::from_millis(1100));
    // Nothing is due until a rotation (or the start) says so.
    b.expiry_due
        .store(false, std::sync::atomic::Ordering::Release);
    assert_eq!(b.expire(1).expect("expire"), 0);
    e.rotate_binlog().expect("rotate");
    assert_eq!(b.expire(0).expect("expire"), 0, "0 = never");
    e.rotate_binlog().expect("rotate");
    let gone = b.expire(1).expect("expire");
    // Files 1-4 were last written before the sleep (5 got its ROTATE
    // after it).
    assert!(
        gone >= 4,
        "files 1-4 were written over a second ago: {gone}"
    );
    assert_eq!(names(&e).last().map(String::as_str), Some("binlog.000007"));
}

#[test]
fn reset_master_ends_dumps_and_restarts_numbering() {
    let sim = SimFs::new(FlushMethod::Fsync);
    let e = open(&sim);
    let t = int_table(&e);
    five_files(&e, &t);
    let b = e.binlog().expect("binlog on");
    let mut cur = b.dump_open("binlog.000002", 4).expect("dump");
    e.reset_binlog(7).expect("reset");
    let err = b.dump_next(&mut cur, Duration::from_millis(5)).err();
    assert_eq!(err.map(|e| e.code), Some(1236));
    assert_eq!(names(&e), ["binlog.000007"]);
    assert!(!sim.files().iter().any(|p| p.ends_with("binlog.000001")));
    commit_id(&e, &t, 5).expect("commit");
    let mut cur = b.dump_open("", 4).expect("dump from the first file");
    assert_eq!(cur.name, "binlog.000007");
    let mut xids = 0;
    while let DumpStep::Event(ev) = b
        .dump_next(&mut cur, Duration::from_millis(5))
        .expect("next")
    {
        xids += usize::from(ev[4] == crate::binlog::format::event_type::XID);
    }
    assert_eq!(xids, 1);
    assert!(RESET_TO_MAX < u64::from(u32::MAX));
}

/// A crash at every I/O of RESET MASTER: afterwards the log is either
/// untouched or reset (never a log missing its middle), every committed
/// row is there, and the server starts.
#[test]
fn reset_master_is_all_or_nothing_through_a_crash_at_any_io() {
    for k in 0.. {
        assert!(k < 500, "RESET never completed within 500 I/Os");
        let sim = SimFs::new(FlushMethod::Fsync);
        let e = open(&sim);
        let t = int_table(&e);
        for id in 0..3 {
            commit_id(&e, &t, id).expect("commit");
            e.rotate_binlog().expect("rotate");
        }
        sim.arm_crash_after(k);
        let reset = e.reset_binlog(9);
        let completed = reset.is_ok() && !sim.is_down();
        drop(e);
        sim.crash(CrashMode::Power { sector: 512 }, k);
        let vfs: Arc<dyn Vfs> = Arc::new(sim.clone());
        let (e, _) = Engine::open(vfs, &cfg()).expect("start after the crash");
        assert_eq!(count_rows(&e), 3, "k={k}");
        let files = names(&e);
        let reset_done = files == ["binlog.000009", "binlog.000010"];
        let untouched = files
            == [
                "binlog.000001",
                "binlog.000002",
                "binlog.000003",
                "binlog.000004",
                "binlog.000005",
            ];
        assert!(reset_done || untouched, "k={k}: {files:?}");
        if reset.is_ok() {
            assert!(reset_done, "k={k}: acknowledged RESET undone: {files:?}");
        }
        for f in &files {
            assert!(
                sim.files().iter().any(|p| p.ends_with(f)),
                "k={k}: {f} listed but missing"
            );
        }
        if completed {
            break;
        }
    }
}
