//! quire as a replica of quire (replica/): CHANGE REPLICATION SOURCE,
//! START/STOP/RESET REPLICA, SHOW REPLICA STATUS, the applier's rows and
//! DDL, its stop on a conflicting row, the channel surviving a restart of
//! the replica, and the errors MySQL gives. Both servers run in this
//! process; the real `kill -9` loop is tests/replication/quire-replica.sh.

mod wire;

use quire_config::Config;
use quire_server::ServerConfig;
use wire::{engine_config, fresh_dir, open_engine, serve, wait_for, Client, TestServer};

/// SHOW REPLICA STATUS columns by position (MySQL 8.0.22+ order).
const IO_RUNNING: usize = 10;
const SQL_RUNNING: usize = 11;
const RELAY_SOURCE_FILE: usize = 9;
const EXEC_POS: usize = 21;
const LAST_IO_ERRNO: usize = 34;
const LAST_SQL_ERRNO: usize = 36;
const LAST_SQL_ERROR: usize = 37;

fn server(dir: std::path::PathBuf, server_id: u32, log_bin: bool) -> TestServer {
    let cfg = Config {
        log_bin,
        server_id,
        innodb_lock_wait_timeout: 30,
        ..engine_config(dir.join("data"))
    };
    serve(dir, open_engine(&cfg), None, ServerConfig::default())
}

fn status(c: &mut Client) -> Vec<Option<String>> {
    c.ok("SHOW REPLICA STATUS")
        .into_iter()
        .next()
        .expect("a status row")
}

fn col(row: &[Option<String>], i: usize) -> String {
    row[i].clone().unwrap_or_default()
}

/// Waits until the replica executed up to the source's position.
fn caught_up(src: &mut Client, rep: &mut Client) {
    let master = src.ok("SHOW MASTER STATUS");
    let (file, pos) = (master[0][0].clone().unwrap(), master[0][1].clone().unwrap());
    let reached = wait_for(30, || {
        let st = status(rep);
        (col(&st, RELAY_SOURCE_FILE) == file && col(&st, EXEC_POS) == pos).then_some(())
    });
    assert!(
        reached.is_some(),
        "replica did not reach {file}:{pos}: {:?}",
        status(rep)
    );
}

fn change_source(rep: &mut Client, port: u16, user: &str) {
    rep.ok(&format!(
        "CHANGE REPLICATION SOURCE TO SOURCE_HOST='127.0.0.1', SOURCE_PORT={port}, \
         SOURCE_USER='{user}', SOURCE_PASSWORD='rpw', SOURCE_CONNECT_RETRY=1"
    ));
}

#[test]
fn a_quire_replica_applies_rows_and_ddl_and_stops_on_a_conflict() {
    let src_srv = server(fresh_dir("repl-src"), 1, true);
    let rep_srv = server(fresh_dir("repl-rep"), 2, true);
    let mut src = Client::root(src_srv.port);
    let mut rep = Client::root(rep_srv.port);

    // Not configured yet: no status row, START is 1200.
    assert!(rep.ok("SHOW REPLICA STATUS").is_empty());
    assert_eq!(rep.query("START REPLICA").unwrap_err().0, 1200);
    // Options quire does not take are refused by name.
    let e = rep
        .query("CHANGE REPLICATION SOURCE TO SOURCE_SSL=1")
        .unwrap_err();
    assert_eq!(e.0, 1235, "{e:?}");
    assert!(e.1.contains("SOURCE_SSL"), "{e:?}");
    let e = rep
        .query("CHANGE REPLICATION SOURCE TO SOURCE_AUTO_POSITION=1")
        .unwrap_err();
    assert_eq!(e.0, 1235, "{e:?}");
    assert_eq!(
        rep.query("CHANGE MASTER TO SOURCE_HOST='x'").unwrap_err().0,
        1235,
        "CHANGE MASTER takes MASTER_ names"
    );
    assert_eq!(rep.query("START REPLICA IO_THREAD").unwrap_err().0, 1235);

    // (Accounts are process-wide in these tests: one name per test.)
    src.ok("CREATE USER repl1@'%' IDENTIFIED WITH mysql_native_password BY 'rpw'");
    src.ok("GRANT REPLICATION SLAVE ON *.* TO repl1@'%'");
    change_source(&mut rep, src_srv.port, "repl1");
    rep.ok("START REPLICA");
    rep.ok("START REPLICA");
    let w = rep.ok("SHOW WARNINGS");
    assert_eq!(w[0][1].as_deref(), Some("3083"), "{w:?}");

    src.ok("CREATE DATABASE d");
    src.ok(
        "CREATE TABLE d.t (id INT PRIMARY KEY, v VARCHAR(20), n DECIMAL(10,2), \
         at DATETIME(6), b BLOB)",
    );
    src.ok("CREATE TABLE d.nokey (a INT, b VARCHAR(10))");
    src.ok(
        "INSERT INTO d.t VALUES (1,'a',1.50,'2026-12-05 10:00:00.123456',x'00ff'), \
         (2,'b',-2.25,NULL,NULL), (3,'c',0,NULL,REPEAT('z',5000))",
    );
    src.ok("INSERT INTO d.nokey VALUES (1,'x'),(1,'x'),(2,'y')");
    src.ok("BEGIN");
    src.ok("UPDATE d.t SET v = 'bb', n = n * 2 WHERE id = 2");
    src.ok("DELETE FROM d.t WHERE id = 1");
    src.ok("UPDATE d.nokey SET b = 'w' WHERE a = 2");
    src.ok("DELETE FROM d.nokey WHERE a = 1 LIMIT 1");
    src.ok("COMMIT");
    src.ok("SET GLOBAL binlog_row_image = MINIMAL");
    src.ok("UPDATE d.t SET v = 'cc' WHERE id = 3");
    src.ok("ALTER TABLE d.t ADD COLUMN extra INT DEFAULT 7");
    src.ok("INSERT INTO d.t (id, v, n) VALUES (4, 'd', 4)");
    caught_up(&mut src, &mut rep);
    for q in [
        "SELECT * FROM d.t ORDER BY id",
        "SELECT a, b FROM d.nokey ORDER BY a, b",
    ] {
        assert_eq!(src.ok(q), rep.ok(q), "{q}");
    }
    let st = status(&mut rep);
    assert_eq!(
        (col(&st, IO_RUNNING), col(&st, SQL_RUNNING)),
        ("Yes".into(), "Yes".into())
    );
    // The applied transactions are in the replica's own binary log.
    let events = rep.ok("SHOW BINLOG EVENTS");
    assert!(
        events
            .iter()
            .any(|e| e[5].as_deref().unwrap_or("").contains("Write_rows")
                || e[2].as_deref() == Some("Write_rows")),
        "replica binlog: {events:?}"
    );

    // Running: CHANGE is 3021, RESET is 3081.
    assert_eq!(
        rep.query("CHANGE REPLICATION SOURCE TO SOURCE_PORT=1")
            .unwrap_err()
            .0,
        3021
    );
    assert_eq!(rep.query("RESET REPLICA").unwrap_err().0, 3081);

    // STOP, more writes, START: it resumes where it stopped.
    rep.ok("STOP REPLICA");
    let st = status(&mut rep);
    assert_eq!(
        (col(&st, IO_RUNNING), col(&st, SQL_RUNNING)),
        ("No".into(), "No".into())
    );
    src.ok("INSERT INTO d.t (id, v, n) VALUES (5, 'e', 5)");
    rep.ok("START REPLICA");
    caught_up(&mut src, &mut rep);
    assert_eq!(rep.value("SELECT COUNT(*) FROM d.t"), Some("4".into()));

    // A restart of the replica: the channel starts by itself and resumes.
    drop(rep);
    let kept = rep_srv.stop_keeping_data();
    let rep_srv = server(kept, 2, true);
    let mut rep = Client::root(rep_srv.port);
    src.ok("INSERT INTO d.t (id, v, n) VALUES (6, 'f', 6)");
    caught_up(&mut src, &mut rep);
    assert_eq!(
        src.ok("SELECT * FROM d.t ORDER BY id"),
        rep.ok("SELECT * FROM d.t ORDER BY id")
    );

    // A row the replica has already: the applier stops with 1062 and
    // says so; the rows before it stay applied.
    rep.ok("INSERT INTO d.t (id, v, n) VALUES (7, 'replica', 0)");
    src.ok("INSERT INTO d.t (id, v, n) VALUES (7, 'source', 0)");
    let st = wait_for(30, || {
        let st = status(&mut rep);
        (col(&st, SQL_RUNNING) == "No").then_some(st)
    })
    .expect("the applier stops on the duplicate");
    assert_eq!(col(&st, LAST_SQL_ERRNO), "1062", "{st:?}");
    assert!(
        col(&st, LAST_SQL_ERROR).contains("Duplicate entry"),
        "{st:?}"
    );
    // Fixed by hand, then START applies it.
    rep.ok("DELETE FROM d.t WHERE id = 7");
    rep.ok("START REPLICA");
    caught_up(&mut src, &mut rep);
    assert_eq!(
        rep.value("SELECT v FROM d.t WHERE id = 7"),
        Some("source".into())
    );

    // RESET REPLICA ALL forgets the source.
    rep.ok("STOP REPLICA");
    rep.ok("RESET REPLICA ALL");
    assert!(rep.ok("SHOW REPLICA STATUS").is_empty());
}

#[test]
fn replica_statements_need_replication_slave_admin_and_distinct_server_ids() {
    let src_srv = server(fresh_dir("repl-ids-src"), 7, true);
    let rep_srv = server(fresh_dir("repl-ids-rep"), 7, false);
    let mut src = Client::root(src_srv.port);
    let mut rep = Client::root(rep_srv.port);
    src.ok("CREATE USER repl2@'%' IDENTIFIED WITH mysql_native_password BY 'rpw'");
    src.ok("GRANT REPLICATION SLAVE ON *.* TO repl2@'%'");

    rep.ok("CREATE USER plain@'%' IDENTIFIED BY 'ppw'");
    let mut plain = Client::login(rep_srv.port, "plain", "ppw").expect("login");
    for q in [
        "START REPLICA",
        "STOP REPLICA",
        "RESET REPLICA",
        "CHANGE MASTER TO MASTER_PORT=1",
    ] {
        assert_eq!(plain.query(q).unwrap_err().0, 1227, "{q}");
    }
    rep.ok("GRANT REPLICATION_SLAVE_ADMIN ON *.* TO plain@'%'");
    let mut plain = Client::login(rep_srv.port, "plain", "ppw").expect("login");
    plain.ok(&format!(
        "CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT={}, MASTER_USER='repl2', \
         MASTER_PASSWORD='rpw', MASTER_CONNECT_RETRY=1",
        src_srv.port
    ));
    plain.ok("START SLAVE");
    // Same server_id on both sides: the I/O side refuses (13117).
    let st = wait_for(30, || {
        let st = status(&mut rep);
        (col(&st, LAST_IO_ERRNO) == "13117").then_some(st)
    });
    assert!(st.is_some(), "{:?}", status(&mut rep));
    plain.ok("STOP SLAVE");
    let w = plain.ok("STOP SLAVE");
    assert!(w.is_empty());
    let w = plain.ok("SHOW WARNINGS");
    assert_eq!(w[0][1].as_deref(), Some("3084"), "{w:?}");
}
