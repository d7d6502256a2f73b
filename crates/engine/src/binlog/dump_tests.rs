//! The dump cursor: every published event once, in order, across a
//! rotation and across a file a crash closed (no ROTATE at its end), and
//! never a byte past the published position.

use std::sync::Arc;
use std::time::Duration;

use quire_io::{CrashMode, FlushMethod, SimFs, Vfs};

use super::{DumpCursor, DumpStep};
use crate::binlog::format::event_type;
use crate::binlog::test_util::{commit_id, int_table};
use crate::engine::Engine;
use crate::tests::{cfg, open};

/// Reads until the cursor has caught up: (event types, files entered).
fn drain(e: &Engine, cur: &mut DumpCursor) -> (Vec<u8>, u32) {
    let b = e.binlog().expect("binlog on");
    let (mut types, mut files) = (Vec::new(), 0);
    loop {
        match b
            .dump_next(cur, Duration::from_millis(5))
            .expect("dump_next")
        {
            DumpStep::Event(ev) => types.push(ev[4]),
            DumpStep::NextFile => files += 1,
            DumpStep::Idle => return (types, files),
        }
    }
}

fn xids(types: &[u8]) -> usize {
    types.iter().filter(|&&t| t == event_type::XID).count()
}

#[test]
fn a_dump_reads_every_published_event_across_rotation_and_a_crash() {
    let sim = SimFs::new(FlushMethod::Fsync);
    let e = open(&sim);
    let t = int_table(&e);
    for id in 0..3 {
        commit_id(&e, &t, id).expect("commit");
    }
    let b = e.binlog().expect("binlog on");
    let mut cur = b.dump_open("", 0).expect("open first file");
    let (types, files) = drain(&e, &mut cur);
    assert_eq!(types.first(), Some(&event_type::FORMAT_DESCRIPTION));
    assert_eq!((xids(&types), files), (3, 0), "{types:?}");
    // Caught up exactly at the published end, never past it.
    assert_eq!((cur.seq, cur.pos), b.published());

    e.rotate_binlog().expect("rotate");
    for id in 3..5 {
        commit_id(&e, &t, id).expect("commit");
    }
    let (types, files) = drain(&e, &mut cur);
    assert_eq!(
        types.first(),
        Some(&event_type::ROTATE),
        "the old file's end"
    );
    assert_eq!(files, 1);
    assert_eq!(xids(&types), 2, "{types:?}");
    let crashed = cur.name.clone();

    // One more commit, then the power goes: recovery closes the file
    // without a ROTATE and the restart begins the next one.
    commit_id(&e, &t, 5).expect("commit");
    drop(e);
    sim.crash(CrashMode::Power { sector: 512 }, 1);
    let vfs: Arc<dyn Vfs> = Arc::new(sim.clone());
    let (e, _) = Engine::open(vfs, &cfg()).expect("recover");
    let t = e.table("d", "t").expect("t");
    commit_id(&e, &t, 6).expect("commit");
    let b = e.binlog().expect("binlog on");
    let mut cur = b.dump_open(&crashed, 0).expect("reopen the crashed file");
    let (types, files) = drain(&e, &mut cur);
    assert_eq!(files, 1, "on to the file the restart began");
    assert!(!types.contains(&event_type::ROTATE), "{types:?}");
    assert_eq!(xids(&types), 4, "ids 3, 4, 5 (acknowledged), then 6");
    assert_eq!((cur.seq, cur.pos), b.published());
}

#[test]
fn a_dump_from_an_unknown_file_or_past_the_end_is_error_1236() {
    let sim = SimFs::new(FlushMethod::Fsync);
    let e = open(&sim);
    let b = e.binlog().expect("binlog on");
    let err = |r: crate::error::Result<DumpCursor>| r.err().map(|e| (e.code, e.message));
    let (code, msg) = err(b.dump_open("binlog.999999", 4)).expect("unknown file refused");
    assert_eq!(code, 1236);
    assert!(msg.contains("Could not find first log file name"), "{msg}");
    let (name, end) = b.position();
    let (code, msg) = err(b.dump_open(&name, end + 1)).expect("past the end refused");
    assert_eq!(code, 1236);
    assert!(msg.contains("position > file size"), "{msg}");
    assert!(
        b.dump_open(&name, end).is_ok(),
        "at the end: waits for more"
    );
}
