//! The active file decodes as events to its very end: the transactions,
//! then placeholder events over the preallocated space (what lets
//! `mariadb-binlog` read a live file), which recovery cuts.

use std::path::Path;
use std::sync::Arc;

use quire_io::{CrashMode, FlushMethod, SimFs, Vfs};

use super::format::{self, event_type, parse_event, parse_events, LOG_EVENT_IGNORABLE_F};
use crate::catalog::ColumnDef;
use crate::engine::Engine;
use crate::tests::{cfg, open};
use crate::txn::Isolation;
use crate::types::{ColumnType, Value};

/// Walks every event of `buf` by its size field, checking each (and its
/// CRC32); returns (type, flags, pos, end) of each.
fn walk(buf: &[u8]) -> Vec<(u8, u16, u64, u64)> {
    let checksum = parse_events(buf).checksum;
    let mut out = Vec::new();
    let mut pos = format::MAGIC.len();
    while pos < buf.len() {
        let ev = parse_event(&buf[pos..], pos as u64, checksum)
            .unwrap_or_else(|e| panic!("no event at {pos} of {}: {e}", buf.len()));
        out.push((ev.type_code, ev.flags, ev.pos, ev.end));
        pos = ev.end as usize;
    }
    assert_eq!(pos, buf.len(), "the last event ends at the file's end");
    out
}

fn active_bytes(sim: &SimFs, e: &Engine) -> Vec<u8> {
    let (name, _) = e.binlog().expect("binlog on").position();
    sim.file_bytes(&Path::new("/e/data").join(name))
        .expect("active file")
}

#[test]
fn the_active_file_is_events_to_its_end_and_recovery_cuts_the_placeholders() {
    let sim = SimFs::new(FlushMethod::Fsync);
    let e = open(&sim);
    e.create_database("d", true).expect("db");
    let t = e
        .create_table(
            "d",
            "t",
            vec![
                ColumnDef::new("id", ColumnType::Int { unsigned: false }, false),
                ColumnDef::new(
                    "v",
                    ColumnType::Blob {
                        max_bytes: 16_777_215,
                    },
                    true,
                ),
            ],
            vec![0],
            vec![],
            false,
        )
        .expect("table");
    // Small and large groups: fillers of every length, and an append
    // larger than SMALL_APPEND_BYTES (written in two writes).
    for id in 0..40i64 {
        let len = [0usize, 1, 17, 4000, 4096, 300_000][id as usize % 6];
        let mut tx = e.begin(Isolation::RepeatableRead, false);
        tx.insert(
            &t,
            vec![Some(Value::Int(id)), Some(Value::Bytes(vec![b'x'; len]))],
        )
        .expect("insert");
        tx.commit().expect("commit");
        let evs = walk(&active_bytes(&sim, &e));
        let (_, pos) = e.binlog().expect("binlog").position();
        let tail: Vec<_> = evs.iter().filter(|x| x.2 >= pos).collect();
        assert!(!tail.is_empty(), "placeholders after the events");
        for (ty, flags, at, end) in tail {
            assert_eq!(*ty, event_type::IGNORABLE, "at {at}");
            assert_ne!(flags & LOG_EVENT_IGNORABLE_F, 0);
            assert!(*at == pos || at % 4096 == 0, "chunk at {at}");
            assert!(end % 4096 == 0, "chunk end {end}");
        }
        assert!(
            evs.iter().any(|x| x.3 == pos),
            "an event ends exactly at the log's position {pos}"
        );
    }
    let parsed = parse_events(&active_bytes(&sim, &e));
    assert_eq!(parsed.xids.len(), 40);
    assert_eq!(parsed.error, None, "the placeholders end the scan cleanly");
    assert_eq!(parsed.complete_tx_end, e.binlog().expect("b").position().1);

    drop(e);
    sim.crash(CrashMode::Power { sector: 512 }, 3);
    let vfs: Arc<dyn Vfs> = Arc::new(sim.clone());
    let (e, _) = Engine::open(vfs, &cfg()).expect("recover");
    // The file the crash left (the restart began the next one).
    let files = e.binlog().expect("b").files().expect("files");
    let file = files[files.len() - 2].0.clone();
    let bytes = sim
        .file_bytes(&Path::new("/e/data").join(&file))
        .expect("file");
    let evs = walk(&bytes);
    assert!(
        evs.iter().all(|x| x.0 != event_type::IGNORABLE),
        "recovery cut the placeholders of {file}"
    );
    assert_eq!(parse_events(&bytes).xids.len(), 40);
    drop(e);
}
