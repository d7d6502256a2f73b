//! binlog_row_image: FULL logs every column; MINIMAL the key before and
//! the changed columns after; NOBLOB leaves out the BLOB/TEXT columns
//! nobody needs. Decoded back from the file, each image holds exactly
//! those columns with the right values.

use std::path::Path;

use quire_io::{FlushMethod, SimFs};

use super::format::{parse_events, EventData, RowsKind};
use crate::catalog::ColumnDef;
use crate::engine::Engine;
use crate::tests::open;
use crate::txn::Isolation;
use crate::types::{ColumnType, Value};

type Images = Vec<(RowsKind, Option<Vec<bool>>, Option<Vec<bool>>)>;

/// Runs insert, update (one column), delete under `mode`; returns, per
/// rows event, which columns each image carried, and checks the values.
fn run(mode: &str) -> Images {
    let sim = SimFs::new(FlushMethod::Fsync);
    let e: Engine = open(&sim);
    e.set_global("binlog_row_image", mode).expect("set");
    e.create_database("d", true).expect("db");
    let int = ColumnType::Int { unsigned: false };
    let t = e
        .create_table(
            "d",
            "t",
            vec![
                ColumnDef::new("id", int.clone(), false),
                ColumnDef::new("a", int.clone(), true),
                ColumnDef::new("b", ColumnType::Blob { max_bytes: 65_535 }, true),
            ],
            vec![0],
            vec![],
            false,
        )
        .expect("table");
    let row = |id: i64, a: i64| {
        vec![
            Some(Value::Int(id)),
            Some(Value::Int(a)),
            Some(Value::Bytes(b"blob".to_vec())),
        ]
    };
    let mut tx = e.begin(Isolation::RepeatableRead, false);
    tx.insert(&t, row(1, 10)).expect("insert");
    tx.commit().expect("commit");
    let mut tx = e.begin(Isolation::RepeatableRead, false);
    let old: Vec<Value> = row(1, 10).into_iter().map(|v| v.expect("v")).collect();
    let new: Vec<Value> = row(1, 11).into_iter().map(|v| v.expect("v")).collect();
    let key = crate::txn::Txn::encode_pk(&t, &[Value::Int(1)]).expect("pk");
    tx.update(&t, &key, new.clone()).expect("update");
    tx.commit().expect("commit");
    let mut tx = e.begin(Isolation::RepeatableRead, false);
    tx.delete(&t, &key).expect("delete");
    tx.commit().expect("commit");

    let (name, _) = e.binlog().expect("binlog").position();
    let bytes = sim
        .file_bytes(&Path::new("/e/data").join(name))
        .expect("file");
    let types = t.types();
    let mut out = Vec::new();
    for ev in parse_events(&bytes).events {
        let EventData::Rows(r) = ev.data else {
            continue;
        };
        for (before, after) in r.decode_partial(&types).expect("decode") {
            let shape = |img: &Option<Vec<Option<Value>>>| {
                img.as_ref()
                    .map(|v| v.iter().map(Option::is_some).collect::<Vec<bool>>())
            };
            // Whatever is present has the row's value.
            for (img, full) in [(&before, &old), (&after, &new)] {
                if let Some(img) = img {
                    for (i, v) in img.iter().enumerate() {
                        if let Some(v) = v {
                            let want = if r.kind == RowsKind::Write || r.kind == RowsKind::Delete {
                                // WRITE logs row(1, 10), DELETE row(1, 11).
                                if r.kind == RowsKind::Write {
                                    &old[i]
                                } else {
                                    &new[i]
                                }
                            } else {
                                &full[i]
                            };
                            assert_eq!(v, want, "{mode} {:?} column {i}", r.kind);
                        }
                    }
                }
            }
            out.push((r.kind, shape(&before), shape(&after)));
        }
    }
    out
}

#[test]
fn each_row_image_mode_logs_its_columns() {
    let (t, f) = (true, false);
    assert_eq!(
        run("FULL"),
        [
            (RowsKind::Write, None, Some(vec![t, t, t])),
            (RowsKind::Update, Some(vec![t, t, t]), Some(vec![t, t, t])),
            (RowsKind::Delete, Some(vec![t, t, t]), None),
        ]
    );
    assert_eq!(
        run("MINIMAL"),
        [
            (RowsKind::Write, None, Some(vec![t, t, t])),
            (RowsKind::Update, Some(vec![t, f, f]), Some(vec![f, t, f])),
            (RowsKind::Delete, Some(vec![t, f, f]), None),
        ]
    );
    assert_eq!(
        run("NOBLOB"),
        [
            (RowsKind::Write, None, Some(vec![t, t, t])),
            (RowsKind::Update, Some(vec![t, t, f]), Some(vec![t, t, f])),
            (RowsKind::Delete, Some(vec![t, t, f]), None),
        ]
    );
}
