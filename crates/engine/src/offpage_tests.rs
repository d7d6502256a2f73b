//! Off-page values end to end: every size from 0 bytes to MiBs through
//! insert, update, delete, snapshots reading old versions, purge, DROP,
//! and crashes (power loss after acknowledged commits; a crash at every
//! I/O of a statement), each checked against a model of what was
//! acknowledged and by the offline checker (no leaked or doubly owned page).

use std::collections::BTreeMap;
use std::sync::Arc;

use quire_io::{CrashMode, FlushMethod, SimFs, Vfs};

use crate::catalog::ColumnDef;
use crate::engine::Engine;
use crate::tests::{cfg, open};
use crate::txn::{Isolation, Scan};
use crate::types::{ColumnType, Value};
use crate::TableDef;

/// docs(id INT PRIMARY KEY, body LONGBLOB, note TEXT, tag VARCHAR(200), KEY(tag))
fn docs(e: &Engine) -> Arc<TableDef> {
    e.create_database("d", true).expect("db");
    e.create_table(
        "d",
        "docs",
        vec![
            ColumnDef::new("id", ColumnType::Int { unsigned: false }, false),
            ColumnDef::new(
                "body",
                ColumnType::Blob {
                    max_bytes: u32::MAX,
                },
                true,
            ),
            ColumnDef::new("note", ColumnType::text(65535), true),
            ColumnDef::new("tag", ColumnType::varchar(200), true),
        ],
        vec![0],
        vec![("tag".into(), false, vec![3])],
        false,
    )
    .expect("table")
}

fn bytes(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            b'a' + (x % 26) as u8
        })
        .collect()
}

/// The row for `id` at `version`: sizes cycle through the interesting
/// boundaries (in-row, just past the 40-byte rule, one page, many pages).
fn row(id: i64, version: u64) -> Vec<Value> {
    const SIZES: [usize; 10] = [0, 1, 40, 41, 900, 1005, 4052, 5000, 70_000, 600_000];
    let k = (id as u64 * 7 + version * 3) as usize;
    let body = bytes(SIZES[k % SIZES.len()], id as u64 * 1000 + version);
    let note = bytes(SIZES[(k + 3) % 8], version);
    let tag = bytes(10 + (k % 180), id as u64);
    vec![
        Value::Int(id),
        Value::Bytes(body),
        Value::Bytes(note),
        Value::Bytes(tag),
    ]
}

fn key(t: &TableDef, id: i64) -> Vec<u8> {
    let mut k = Vec::new();
    crate::types::encode_key(&[Value::Int(id)], &t.pk_types(), &mut k);
    k
}

fn opt(v: Vec<Value>) -> Vec<Option<Value>> {
    v.into_iter().map(Some).collect()
}

fn contents(e: &Engine) -> BTreeMap<i64, Vec<Value>> {
    let t = e.table("d", "docs").expect("table");
    let mut tx = e.begin(Isolation::RepeatableRead, false);
    let rows = tx.scan(&t, &Scan::default()).expect("scan");
    tx.commit().expect("end");
    rows.into_iter()
        .map(|r| {
            let Value::Int(id) = r.values[0] else {
                panic!("id")
            };
            (id, r.values)
        })
        .collect()
}

fn check(sim: &SimFs) -> quire_storage::check::CheckReport {
    let vfs: Arc<dyn Vfs> = Arc::new(sim.clone());
    let r = crate::offpage::check_datadir(&vfs, &cfg().datadir).expect("check");
    assert!(r.is_ok(), "{:?}", r.errors);
    r
}

/// One write per commit: insert, update or delete `id` per `step`.
fn apply(e: &Engine, t: &TableDef, model: &mut BTreeMap<i64, Vec<Value>>, step: u64) {
    let id = (step * 5 % 13) as i64;
    let mut tx = e.begin(Isolation::RepeatableRead, false);
    match (model.contains_key(&id), step % 4) {
        (false, _) => {
            tx.insert(t, opt(row(id, step))).expect("insert");
            model.insert(id, row(id, step));
        }
        (true, 3) => {
            assert!(tx.delete(t, &key(t, id)).expect("delete"));
            model.remove(&id);
        }
        (true, 2) => {
            // Only the tag changes: the long columns keep their chains.
            let mut r = model[&id].clone();
            r[3] = Value::Bytes(format!("tag-{step}").into_bytes());
            assert!(tx.update(t, &key(t, id), r.clone()).expect("update"));
            model.insert(id, r);
        }
        (true, _) => {
            assert!(tx.update(t, &key(t, id), row(id, step)).expect("update"));
            model.insert(id, row(id, step));
        }
    }
    tx.commit().expect("commit");
}

#[test]
fn every_size_through_insert_update_delete_snapshots_and_purge() {
    let sim = SimFs::new(FlushMethod::Fsync);
    let e = open(&sim);
    let t = docs(&e);
    let mut model = BTreeMap::new();
    for step in 0..40 {
        apply(&e, &t, &mut model, step);
    }
    assert_eq!(contents(&e), model);
    // A snapshot keeps reading the versions it saw while they are
    // replaced (their chains orphaned, not yet freed).
    let mut long = e.begin(Isolation::RepeatableRead, false);
    let seen = {
        let rows = long.scan(&t, &Scan::default()).expect("scan");
        rows.len()
    };
    let before = model.clone();
    for step in 40..80 {
        apply(&e, &t, &mut model, step);
    }
    let again = long.scan(&t, &Scan::default()).expect("scan");
    assert_eq!(again.len(), seen);
    for r in &again {
        let Value::Int(id) = r.values[0] else {
            panic!("id")
        };
        assert_eq!(Some(&r.values), before.get(&id), "snapshot row {id}");
    }
    long.commit().expect("end");
    apply(&e, &t, &mut model, 80);
    assert_eq!(contents(&e), model);
    // The secondary index finds rows whose other columns are off-page.
    let mut tx = e.begin(Isolation::RepeatableRead, false);
    let (&id, want) = model.iter().next().expect("a row");
    let got = tx.get(&t, &[Value::Int(id)]).expect("get").expect("row");
    assert_eq!(&got, want);
    tx.commit().expect("end");
    e.close(true).expect("close");
    drop(e);
    let r = check(&sim);
    let offpage_cols: u64 = model
        .values()
        .map(|v| {
            v[1..]
                .iter()
                .filter(|x| matches!(x, Value::Bytes(b) if b.len() > 40))
                .count() as u64
        })
        .sum();
    assert!(
        r.lob_chains >= 1 && r.lob_chains <= offpage_cols,
        "{} chains",
        r.lob_chains
    );
    assert_eq!(r.lob_orphans, 0, "purge freed every replaced value");
    // DROP frees every chain.
    let e = open(&sim);
    e.drop_table("d", "docs", None).expect("drop");
    e.close(true).expect("close");
    drop(e);
    let r = check(&sim);
    assert_eq!((r.lob_chains, r.lob_orphans), (0, 0));
}

#[test]
fn acknowledged_long_values_survive_power_loss_and_nothing_leaks() {
    for seed in 0..6u64 {
        let sim = SimFs::new(FlushMethod::Fsync);
        let mut model = BTreeMap::new();
        {
            let e = open(&sim);
            let t = docs(&e);
            for step in 0..(12 + seed * 3) {
                apply(&e, &t, &mut model, step);
            }
            // trx_commit=1: each commit above was durable when acknowledged.
            e.close(false).expect("close");
        }
        sim.crash(CrashMode::Power { sector: 512 }, seed);
        let e = open(&sim);
        assert_eq!(contents(&e), model, "seed {seed}");
        e.close(true).expect("close");
        drop(e);
        let r = check(&sim);
        assert_eq!(r.lob_orphans, 0, "seed {seed}");
    }
}

/// A crash at every k-th I/O of a commit that replaces long values: the
/// recovered table is the old or the new state (the commit is atomic), and
/// the data directory checks clean with no orphan left.
#[test]
fn a_crash_at_any_io_of_a_long_value_commit_is_atomic() {
    let mut points = 0;
    let mut n = 0u64;
    loop {
        let sim = SimFs::new(FlushMethod::Fsync);
        let mut model = BTreeMap::new();
        let e = open(&sim);
        let t = docs(&e);
        for step in 0..6 {
            apply(&e, &t, &mut model, step);
        }
        let old = model.clone();
        sim.arm_crash_after(n);
        let mut tx = e.begin(Isolation::RepeatableRead, false);
        let mut new = model.clone();
        let mut ok = true;
        for id in [0i64, 5, 10] {
            let r = if new.contains_key(&id) {
                tx.update(&t, &key(&t, id), row(id, 99)).map(drop)
            } else {
                tx.insert(&t, opt(row(id, 99))).map(drop)
            };
            ok &= r.is_ok();
            new.insert(id, row(id, 99));
        }
        let committed = ok && tx.commit().is_ok();
        // Page writes too: the flush of the chains and the row.
        let _ = e.store().checkpoint();
        let crashed = sim.is_down();
        sim.disarm();
        let _ = e.close(false);
        drop(e);
        sim.crash(CrashMode::Power { sector: 512 }, n);
        let e = open(&sim);
        let got = contents(&e);
        if committed {
            assert_eq!(got, new, "crash after {n} I/Os: acknowledged commit lost");
        } else {
            assert!(got == old || got == new, "crash after {n} I/Os: a mix");
        }
        e.close(true).expect("close");
        drop(e);
        assert_eq!(check(&sim).lob_orphans, 0);
        points += 1;
        if !crashed {
            break;
        }
        n += 1;
    }
    assert!(points > 20, "{points} crash points");
}

/// An UPDATE that leaves a long column as it was keeps its chain (no LOB
/// page written), shared with the old version a snapshot still reads;
/// purge frees it only once nothing refers to it.
#[test]
fn an_update_of_other_columns_keeps_the_chain() {
    let sim = SimFs::new(FlushMethod::Fsync);
    let e = open(&sim);
    let t = docs(&e);
    let written = |e: &Engine| {
        e.status()
            .into_iter()
            .find(|(k, _)| k == "Quire_lob_pages_written")
            .map(|x| x.1)
            .expect("counter")
    };
    let big = bytes(300_000, 7);
    let mut tx = e.begin(Isolation::RepeatableRead, false);
    let first = vec![
        Value::Int(1),
        Value::Bytes(big.clone()),
        Value::Null,
        Value::Bytes(b"one".to_vec()),
    ];
    tx.insert(&t, opt(first.clone())).expect("insert");
    tx.commit().expect("commit");
    let before = written(&e);
    let mut snap = e.begin(Isolation::RepeatableRead, false);
    assert_eq!(
        snap.get(&t, &[Value::Int(1)]).expect("get"),
        Some(first.clone())
    );
    let mut second = first.clone();
    second[3] = Value::Bytes(b"two".to_vec());
    let mut tx = e.begin(Isolation::RepeatableRead, false);
    assert!(tx.update(&t, &key(&t, 1), second.clone()).expect("update"));
    tx.commit().expect("commit");
    assert_eq!(written(&e), before, "the unchanged value's chain is kept");
    assert_eq!(snap.get(&t, &[Value::Int(1)]).expect("get"), Some(first));
    snap.commit().expect("end");
    // A new value for the column: a new chain; the old one freed by purge.
    let mut third = second.clone();
    third[1] = Value::Bytes(bytes(300_000, 8));
    let mut tx = e.begin(Isolation::RepeatableRead, false);
    assert!(tx.update(&t, &key(&t, 1), third.clone()).expect("update"));
    tx.commit().expect("commit");
    assert!(written(&e) > before);
    let got = contents(&e);
    assert_eq!(got.get(&1), Some(&third));
    e.close(true).expect("close");
    drop(e);
    let r = check(&sim);
    assert_eq!((r.lob_chains, r.lob_orphans), (1, 0));
}

/// A commit record carries references to chains written before it, not
/// the long values: a value close to half the redo log costs about its
/// own size in redo (not twice), and recovery, which holds the
/// checkpoint at the first record it replays, adopts the chains instead
/// of writing them again, so it fits the log and finishes.
#[test]
fn a_value_near_half_the_redo_log_commits_once_and_recovers() {
    for log_bin in [true, false] {
        let c = quire_config::Config { log_bin, ..cfg() };
        let sim = SimFs::new(FlushMethod::Fsync);
        let vfs: Arc<dyn Vfs> = Arc::new(sim.clone());
        let mut model = BTreeMap::new();
        {
            let e = Engine::open(vfs.clone(), &c).expect("open").0;
            let t = docs(&e);
            e.store().checkpoint().expect("checkpoint");
            for id in 0..3i64 {
                let len = (7 << 20) / 2 - 4096 * id as usize;
                let r = vec![
                    Value::Int(id),
                    Value::Bytes(bytes(len, id as u64)),
                    Value::Bytes(bytes(5000, 7)),
                    Value::Bytes(b"t".to_vec()),
                ];
                let lsn0 = e.store().log().lsn();
                let mut tx = e.begin(Isolation::RepeatableRead, false);
                tx.insert(&t, opt(r.clone())).expect("insert");
                tx.commit().expect("commit");
                let redo = e.store().log().lsn() - lsn0;
                assert!(
                    redo < len as u64 * 5 / 4,
                    "log_bin={log_bin}: {redo} bytes of redo for a {len}-byte value"
                );
                model.insert(id, r);
            }
            e.close(false).expect("close");
        }
        sim.crash(CrashMode::Power { sector: 512 }, 3);
        let e = Engine::open(vfs, &c).expect("recover").0;
        assert_eq!(contents(&e), model, "log_bin={log_bin}");
        e.close(true).expect("close");
        drop(e);
        assert_eq!(check(&sim).lob_orphans, 0);
    }
}

/// DROP TABLE frees the chains that only superseded versions still named
/// (a snapshot kept purge from freeing them) at once, not at the next
/// recovery: after a clean shutdown the checker finds no orphan.
#[test]
fn drop_frees_the_chains_of_superseded_versions() {
    let sim = SimFs::new(FlushMethod::Fsync);
    let e = open(&sim);
    let t = docs(&e);
    let mut model = BTreeMap::new();
    for step in 0..20 {
        apply(&e, &t, &mut model, step);
    }
    let mut long = e.begin(Isolation::RepeatableRead, false);
    long.scan(&t, &Scan::default()).expect("scan");
    for step in 20..60 {
        apply(&e, &t, &mut model, step);
    }
    long.commit().expect("end");
    // Nothing holds the definition (a statement reading it would keep the
    // trees until it ends, and a close before then leaves them to the
    // next start).
    drop(t);
    e.drop_table("d", "docs", None).expect("drop");
    e.close(true).expect("close");
    drop(e);
    let r = check(&sim);
    assert_eq!((r.lob_chains, r.lob_orphans), (0, 0));
}

/// A JSON document of about `bytes_approx` bytes of text, with objects
/// and arrays large enough (past 64 KiB) for the binary form's large
/// containers.
fn json_doc(bytes_approx: usize, seed: u64) -> String {
    let n = bytes_approx / 40 + 1;
    let members: Vec<String> = (0..n)
        .map(|i| {
            let s = String::from_utf8(bytes(8, seed + i as u64)).expect("ascii");
            format!(
                "\"k{i}\": [{i}, \"{s}\", {{\"ü\": {}.5, \"n\": null}}]",
                i * 3
            )
        })
        .collect();
    format!("{{{}}}", members.join(", "))
}

/// JSON columns keep their documents whole in the binary form, in-row
/// and off-page (the chain holds the binary document), through an update
/// that keeps the chain, a clean restart and a power loss.
#[test]
fn json_documents_in_row_and_off_page_survive_restart_and_power_loss() {
    let sim = SimFs::new(FlushMethod::Fsync);
    let texts: Vec<String> = [10, 1000, 5000, 200_000, 1_500_000]
        .iter()
        .enumerate()
        .map(|(i, &n)| {
            let doc = json_doc(n, i as u64);
            let j = crate::types::json::parse_text(doc.as_bytes()).expect("valid");
            crate::types::json::print(&j)
        })
        .collect();
    let table = |e: &Engine| {
        e.create_database("d", true).expect("db");
        e.create_table(
            "d",
            "j",
            vec![
                ColumnDef::new("id", ColumnType::Int { unsigned: false }, false),
                ColumnDef::new("doc", ColumnType::Json, true),
                ColumnDef::new("tag", ColumnType::varchar(20), true),
            ],
            vec![0],
            vec![],
            false,
        )
        .expect("table")
    };
    let expect = |id: usize, tag: &str| {
        vec![
            Value::Int(id as i64),
            Value::text(&texts[id]),
            Value::text(tag),
        ]
    };
    let read_all = |e: &Engine| {
        let t = e.table("d", "j").expect("table");
        let mut tx = e.begin(Isolation::RepeatableRead, false);
        let rows = tx.scan(&t, &Scan::default()).expect("scan");
        tx.commit().expect("end");
        rows.into_iter().map(|r| r.values).collect::<Vec<_>>()
    };
    {
        let e = open(&sim);
        let t = table(&e);
        for (id, text) in texts.iter().enumerate() {
            let mut tx = e.begin(Isolation::RepeatableRead, false);
            let row = crate::types::coerce(Value::text(text), &ColumnType::Json, true, "doc", 1)
                .expect("coerce");
            assert_eq!(row, Value::text(text), "stored text is printed");
            tx.insert(&t, opt(vec![Value::Int(id as i64), row, Value::text("a")]))
                .expect("insert");
            tx.commit().expect("commit");
        }
        // Another column changes: the off-page document's chain is kept.
        let written = |e: &Engine| {
            e.status()
                .into_iter()
                .find(|(k, _)| k == "Quire_lob_pages_written")
                .map(|x| x.1)
                .expect("counter")
        };
        let before = written(&e);
        let mut tx = e.begin(Isolation::RepeatableRead, false);
        assert!(tx.update(&t, &key(&t, 4), expect(4, "b")).expect("update"));
        tx.commit().expect("commit");
        assert_eq!(
            written(&e),
            before,
            "the unchanged document's chain is kept"
        );
        let want: Vec<Vec<Value>> = (0..texts.len())
            .map(|i| expect(i, if i == 4 { "b" } else { "a" }))
            .collect();
        assert_eq!(read_all(&e), want);
        e.close(true).expect("close");
    }
    let r = check(&sim);
    // 4 KiB pages: every document but the 10-byte one is off-page.
    assert_eq!(r.lob_chains, 4);
    let want: Vec<Vec<Value>> = (0..texts.len())
        .map(|i| expect(i, if i == 4 { "b" } else { "a" }))
        .collect();
    {
        let e = open(&sim);
        assert_eq!(read_all(&e), want, "after a restart");
        e.close(false).expect("close");
    }
    sim.crash(CrashMode::Power { sector: 512 }, 3);
    let e = open(&sim);
    assert_eq!(read_all(&e), want, "after a power loss");
    e.close(true).expect("close");
}
