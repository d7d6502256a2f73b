//! Hash joins beyond `join_buffer_size`: the build side is partitioned to
//! `<datadir>/#tmp` with the probe rows (a grace hash join), the rows are
//! the same as in memory (inner and left joins, NULL keys, `<=>`), the
//! temporary files are counted and removed.

use std::path::PathBuf;

use quire_engine::Value;
use quire_sql::Session;

mod common;
use common::{ok, open_engine, rows, sorted, status, tmp_files};

/// `o(id, k, s)` with `n` rows and `i(id, k, pad)` with `n / 2` rows, no
/// index on either k; a tenth of the keys are NULL.
fn setup(tag: &str, n: u32) -> (Session, PathBuf) {
    let (engine, dir) = open_engine(tag);
    let mut s = Session::new(engine, "root");
    ok(&mut s, "CREATE DATABASE d");
    ok(&mut s, "USE d");
    ok(
        &mut s,
        "CREATE TABLE o (id INT PRIMARY KEY, k INT, s VARCHAR(20))",
    );
    ok(
        &mut s,
        "CREATE TABLE i (id INT PRIMARY KEY, k INT, pad VARCHAR(40))",
    );
    let key = |i: u32| {
        if i % 10 == 3 {
            "NULL".to_string()
        } else {
            ((i * 7919) % 1500).to_string()
        }
    };
    for (t, m, extra) in [("o", n, "'o'"), ("i", n / 2, "REPEAT('p', 30)")] {
        let mut id = 0u32;
        while id < m {
            let vals: Vec<String> = (id..(id + 1000).min(m))
                .map(|i| format!("({i}, {}, {extra})", key(i)))
                .collect();
            ok(
                &mut s,
                &format!("INSERT INTO {t} VALUES {}", vals.join(",")),
            );
            id += 1000;
        }
    }
    (s, dir.join("data"))
}

#[test]
fn hash_join_beyond_join_buffer_size_gives_the_in_memory_rows() {
    let (mut s, datadir) = setup("hj_spill", 6000);
    let queries = [
        "SELECT o.id, i.id FROM o JOIN i ON o.k = i.k",
        "SELECT o.id, i.id FROM o JOIN i ON o.k = i.k AND i.id > o.id",
        "SELECT o.id, i.id FROM o LEFT JOIN i ON o.k = i.k AND i.id % 3 = 0",
        "SELECT o.id, i.id FROM o JOIN i ON o.k <=> i.k WHERE o.id < 500",
        "SELECT o.k, COUNT(*) FROM o JOIN i ON i.k = o.k GROUP BY o.k",
    ];
    // The plan is a hash join on i.
    let plan = rows(&mut s, &format!("EXPLAIN {}", queries[0]));
    let hashed = plan
        .iter()
        .filter(
            |r| matches!(&r[11], Value::Bytes(b) if b.ends_with(b"Using join buffer (hash join)")),
        )
        .count();
    assert_eq!(hashed, 1, "{plan:?}");
    ok(&mut s, "SET join_buffer_size = 1073741824");
    let files0 = status(&mut s, "Created_tmp_files");
    let mut want = Vec::new();
    for q in queries {
        want.push(sorted(rows(&mut s, q)));
    }
    assert_eq!(
        status(&mut s, "Created_tmp_files"),
        files0,
        "a large buffer holds the build side"
    );
    // The rows a nested loop finds, by brute force: every pair compared.
    let all_o = rows(&mut s, "SELECT id, k FROM o");
    let all_i = rows(&mut s, "SELECT id, k FROM i");
    let mut pairs = Vec::new();
    for a in &all_o {
        for b in &all_i {
            if !a[1].is_null() && a[1] == b[1] {
                pairs.push(vec![a[0].clone(), b[0].clone()]);
            }
        }
    }
    assert_eq!(want[0], sorted(pairs), "the in-memory hash join");
    ok(&mut s, "SET join_buffer_size = 128");
    for (q, w) in queries.iter().zip(&want) {
        let files = status(&mut s, "Created_tmp_files");
        let got = sorted(rows(&mut s, q));
        assert!(&got == w, "{q}: differs when the build side spills");
        assert!(!got.is_empty(), "{q}");
        // `i.id > o.id` may be read as a range on i's primary key (a
        // nested loop); the plain equi-joins are hash joins and spill.
        if !q.contains("i.id >") {
            assert!(status(&mut s, "Created_tmp_files") > files, "{q}: spilled");
        }
    }
    assert_eq!(tmp_files(&datadir), 0, "temporary files removed");
}
