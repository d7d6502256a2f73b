//! Bounded memory: ORDER BY beyond `sort_buffer_size`, GROUP BY /
//! DISTINCT / set operations beyond `tmp_table_size` give the same rows
//! as in memory, write temporary files under `<datadir>/#tmp`, and leave
//! none behind (after success and after KILL QUERY).

use std::path::PathBuf;

use quire_engine::{Kill, Value};
use quire_sql::Session;

mod common;
use common::{ok, open_engine, rows, sorted, status, tmp_files};

/// A session on a fresh engine with `t(id, k, s)` of `n` rows: k repeats
/// (1000 values, in an order unrelated to id), s is a short string.
fn setup(tag: &str, n: u32) -> (Session, PathBuf) {
    let (engine, dir) = open_engine(tag);
    let mut s = Session::new(engine, "root");
    ok(&mut s, "CREATE DATABASE d");
    ok(&mut s, "USE d");
    ok(
        &mut s,
        "CREATE TABLE t (id INT PRIMARY KEY, k INT, s VARCHAR(20))",
    );
    let mut id = 0u32;
    while id < n {
        let vals: Vec<String> = (id..(id + 2000).min(n))
            .map(|i| format!("({i}, {}, 'v{}')", (i * 7919) % 1000, i % 97))
            .collect();
        ok(&mut s, &format!("INSERT INTO t VALUES {}", vals.join(",")));
        id += 2000;
    }
    (s, dir.join("data"))
}

#[test]
fn order_by_beyond_sort_buffer_equals_the_in_memory_sort() {
    let (mut s, datadir) = setup("sort", 100_000);
    // Ties on k keep their input (id) order in both: the sort is stable.
    let q = "SELECT k, id, s FROM t ORDER BY k DESC, s";
    ok(&mut s, "SET sort_buffer_size = 1073741824");
    let passes0 = status(&mut s, "Sort_merge_passes");
    let files0 = status(&mut s, "Created_tmp_files");
    let want = rows(&mut s, q);
    assert_eq!(want.len(), 100_000);
    ok(&mut s, "SET sort_buffer_size = 32768");
    assert_eq!(
        rows(&mut s, "SELECT @@sort_buffer_size"),
        vec![vec![Value::Int(32768)]]
    );
    let got = rows(&mut s, q);
    assert!(got == want, "external sort differs from the in-memory sort");
    assert!(
        status(&mut s, "Created_tmp_files") > files0,
        "runs were written"
    );
    assert!(
        status(&mut s, "Sort_merge_passes") > passes0,
        "more runs than one merge takes"
    );
    assert_eq!(tmp_files(&datadir), 0, "temporary files removed");
    // ORDER BY ... LIMIT over spilled runs.
    let top = rows(&mut s, "SELECT k, id FROM t ORDER BY k, id DESC LIMIT 2500");
    let mut all: Vec<Vec<Value>> = want
        .iter()
        .map(|r| vec![r[0].clone(), r[1].clone()])
        .collect();
    all.sort_by(|a, b| {
        quire_engine::types::compare(&a[0], &b[0])
            .unwrap_or(std::cmp::Ordering::Equal)
            .then_with(|| {
                quire_engine::types::compare(&b[1], &a[1]).unwrap_or(std::cmp::Ordering::Equal)
            })
    });
    all.truncate(2500);
    assert!(top == all, "top-N over runs");
    // Too small is clamped, with MySQL's warning.
    ok(&mut s, "SET sort_buffer_size = 1");
    assert_eq!(
        rows(&mut s, "SELECT @@sort_buffer_size"),
        vec![vec![Value::Int(32768)]]
    );
    assert_eq!(
        s.execute("SET sort_buffer_size = 'big'")
            .map_err(|e| e.code)
            .err(),
        Some(1232)
    );
}

#[test]
fn group_by_distinct_and_set_operations_beyond_tmp_table_size() {
    let (mut s, datadir) = setup("hash", 20_000);
    let queries = [
        "SELECT k, COUNT(*), SUM(id), MIN(s), MAX(id) FROM t GROUP BY k",
        "SELECT s, k, COUNT(DISTINCT id % 7) FROM t GROUP BY s, k",
        "SELECT DISTINCT k, s FROM t",
        "SELECT k FROM t UNION SELECT k + 500 FROM t",
        "SELECT k, s FROM t INTERSECT SELECT k, s FROM t WHERE id % 3 = 0",
        "SELECT k, s FROM t EXCEPT SELECT k, s FROM t WHERE id % 3 = 0",
        "SELECT k FROM t INTERSECT ALL SELECT k FROM t WHERE id < 5000",
        "SELECT k FROM t EXCEPT ALL SELECT k FROM t WHERE id < 5000",
        "SELECT COUNT(*) FROM (SELECT DISTINCT k, s FROM t) x",
    ];
    let mut want = Vec::new();
    for q in queries {
        want.push(sorted(rows(&mut s, q)));
    }
    let tables0 = status(&mut s, "Created_tmp_disk_tables");
    ok(
        &mut s,
        "SET tmp_table_size = 1024, max_heap_table_size = 1048576",
    );
    for (q, w) in queries.iter().zip(&want) {
        let got = sorted(rows(&mut s, q));
        assert!(&got == w, "{q}: differs when spilled");
        assert!(!got.is_empty(), "{q}");
    }
    assert!(status(&mut s, "Created_tmp_disk_tables") > tables0);
    assert_eq!(tmp_files(&datadir), 0);
    // The smaller of the two is the limit.
    ok(
        &mut s,
        "SET tmp_table_size = 1073741824, max_heap_table_size = 16384",
    );
    let before = status(&mut s, "Created_tmp_disk_tables");
    assert_eq!(sorted(rows(&mut s, queries[0])), want[0]);
    assert!(status(&mut s, "Created_tmp_disk_tables") > before);
}

#[test]
fn kill_query_during_a_spilling_sort_leaves_no_files() {
    let (mut s, datadir) = setup("kill", 100_000);
    ok(&mut s, "SET sort_buffer_size = 32768");
    let interrupt = s.interrupt().clone();
    let dir = datadir.clone();
    let killer = std::thread::spawn(move || {
        // Kill once the sort has written its first run.
        for _ in 0..60_000 {
            if tmp_files(&dir) > 0 {
                interrupt.kill(Kill::Query);
                return true;
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        false
    });
    let r =
        s.execute("SELECT a.k, a.id, b.id FROM t a, t b WHERE b.id < 3 ORDER BY a.s, b.id DESC");
    assert!(killer.join().expect("killer"), "the sort spilled");
    assert_eq!(r.map_err(|e| e.code).err(), Some(1317));
    assert_eq!(tmp_files(&datadir), 0, "no file left after KILL");
    // The session goes on.
    assert_eq!(
        rows(&mut s, "SELECT COUNT(*) FROM t"),
        vec![vec![Value::Int(100_000)]]
    );
}

#[test]
fn files_of_a_crashed_process_are_removed_at_start_up() {
    let (engine, dir) = open_engine("reset");
    let datadir = dir.join("data");
    std::fs::create_dir_all(datadir.join("#tmp")).expect("dir");
    std::fs::write(datadir.join("#tmp").join("#sql_1_1.spill"), b"left over").expect("write");
    drop(engine);
    let vfs: std::sync::Arc<dyn quire_io::Vfs> =
        std::sync::Arc::new(quire_io::OsFs::new(quire_io::FlushMethod::Fsync, false));
    let cfg = quire_config::Config {
        datadir: datadir.clone(),
        innodb_buffer_pool_size: 16 << 20,
        innodb_redo_log_capacity: 16 << 20,
        ..quire_config::Config::default()
    };
    let (_e, _) = quire_engine::Engine::open(vfs, &cfg).expect("reopen");
    assert_eq!(tmp_files(&datadir), 0);
}
