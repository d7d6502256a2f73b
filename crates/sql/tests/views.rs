//! Views survive a restart: they are catalog entries (one
//! mini-transaction each), read back at open; DROP DATABASE takes its
//! views with it, durably too. Also after a crash (no clean close).

use std::path::Path;
use std::sync::Arc;

use quire_config::Config;
use quire_engine::{Engine, Value};
use quire_io::{FlushMethod, OsFs, Vfs};
use quire_sql::{Output, Session};

fn open(dir: &Path) -> Engine {
    let cfg = Config {
        datadir: dir.join("data"),
        innodb_buffer_pool_size: 16 << 20,
        innodb_redo_log_capacity: 16 << 20,
        innodb_flush_method: FlushMethod::Fsync,
        innodb_flush_log_at_trx_commit: 1,
        log_bin: true,
        ..Config::default()
    };
    let vfs: Arc<dyn Vfs> = Arc::new(OsFs::new(FlushMethod::Fsync, false));
    Engine::open(vfs, &cfg).expect("open engine").0
}

#[track_caller]
fn rows(s: &mut Session, sql: &str) -> Vec<String> {
    match s.execute(sql) {
        Ok(Output::Rows { rows, .. }) => rows
            .iter()
            .map(|r| {
                r.iter()
                    .map(|v| match v {
                        Value::Null => "NULL".to_string(),
                        Value::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
                        o => o.to_string(),
                    })
                    .collect::<Vec<_>>()
                    .join("|")
            })
            .collect(),
        Ok(o) => panic!("{sql}: {o:?}"),
        Err(e) => panic!("{sql}: {} {}", e.code, e.message),
    }
}

#[track_caller]
fn ok(s: &mut Session, sql: &str) {
    if let Err(e) = s.execute(sql) {
        panic!("{sql}: {} {}", e.code, e.message);
    }
}

#[test]
fn views_survive_restart_and_crash() {
    let dir = std::env::temp_dir().join(format!("quire-sql-views-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("dir");
    let show;
    {
        let e = open(&dir);
        let mut s = Session::new(e.clone(), "root");
        for sql in [
            "CREATE DATABASE d",
            "USE d",
            "CREATE TABLE t (id INT PRIMARY KEY, a INT)",
            "INSERT INTO t VALUES (1, 5), (2, 50)",
            "CREATE ALGORITHM=MERGE SQL SECURITY INVOKER VIEW v (k, x) AS SELECT id, a FROM t WHERE a > 1 WITH LOCAL CHECK OPTION",
            "CREATE VIEW vv AS SELECT k FROM v WHERE x < 10",
            "CREATE DATABASE gone",
            "CREATE VIEW gone.g AS SELECT 1 AS one",
        ] {
            ok(&mut s, sql);
        }
        show = rows(&mut s, "SHOW CREATE VIEW v");
        s.close();
        e.close(true).expect("close");
    }
    {
        let e = open(&dir);
        let mut s = Session::new(e.clone(), "root");
        ok(&mut s, "USE d");
        assert_eq!(rows(&mut s, "SHOW CREATE VIEW v"), show);
        assert_eq!(rows(&mut s, "SELECT * FROM vv"), vec!["1"]);
        assert_eq!(rows(&mut s, "SELECT * FROM gone.g"), vec!["1"]);
        ok(&mut s, "DROP DATABASE gone");
        ok(&mut s, "DROP VIEW vv");
        ok(&mut s, "CREATE OR REPLACE VIEW v AS SELECT a FROM t");
        // No clean close: the changes must come back from the redo log.
        s.close();
        drop(s);
        drop(e);
    }
    {
        let e = open(&dir);
        let mut s = Session::new(e.clone(), "root");
        ok(&mut s, "USE d");
        assert_eq!(
            rows(&mut s, "SHOW FULL TABLES"),
            vec!["t|BASE TABLE", "v|VIEW"]
        );
        assert_eq!(rows(&mut s, "SELECT * FROM v ORDER BY a"), vec!["5", "50"]);
        assert!(e.views("gone").is_empty());
        ok(&mut s, "CREATE DATABASE gone");
        assert!(rows(&mut s, "SHOW TABLES FROM gone").is_empty());
        e.close(true).expect("close");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
