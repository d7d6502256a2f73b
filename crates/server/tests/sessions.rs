//! Sessions an operator can see and stop: SHOW PROCESSLIST and its tables,
//! KILL [QUERY|CONNECTION], SLEEP(), max_execution_time, SHUTDOWN, the
//! extra connection for CONNECTION_ADMIN, max_allowed_packet for new
//! connections, the connection status counters. Timings here are generous
//! bounds (the KILL latency figure is measured by examples/kill_latency.rs).

mod wire;

use std::time::{Duration, Instant};

use wire::{start, wait_for, Client};

/// A table whose three-way cross join is a 10,077,696-row scan.
fn load_cross_table(c: &mut Client, db: &str, n: u32) {
    c.ok(&format!("CREATE DATABASE {db}"));
    c.ok(&format!("CREATE TABLE {db}.t (id INT PRIMARY KEY, v INT)"));
    let vals: Vec<String> = (0..n).map(|i| format!("({i},{i})")).collect();
    c.ok(&format!("INSERT INTO {db}.t VALUES {}", vals.join(",")));
}

/// The process-list row of connection `id` as `(command, state, info)`.
fn proc_row(c: &mut Client, id: u32) -> Option<(String, String, Option<String>)> {
    c.ok("SHOW FULL PROCESSLIST")
        .into_iter()
        .find(|r| r[0].as_deref() == Some(&id.to_string()))
        .map(|r| {
            (
                r[4].clone().unwrap_or_default(),
                r[6].clone().unwrap_or_default(),
                r[7].clone(),
            )
        })
}

#[test]
fn processlist_shows_sleep_and_kill_query_wakes_it() {
    let srv = start("sess-pl", |_| {});
    let mut a = Client::root(srv.port);
    let mut b = Client::root(srv.port);
    let a_id = a.id;
    assert_eq!(a.value("SELECT CONNECTION_ID()"), Some(a_id.to_string()));
    a.ok("CREATE DATABASE pl");
    a.ok("USE pl");
    let h = std::thread::spawn(move || {
        let t0 = Instant::now();
        let r = a.query("SELECT SLEEP(20)");
        (a, r, t0.elapsed())
    });
    let (cmd, state, info) = wait_for(10, || {
        proc_row(&mut b, a_id).filter(|(c, s, _)| c == "Query" && s == "User sleep")
    })
    .expect("the sleeping statement shows in the process list");
    assert_eq!((cmd.as_str(), state.as_str()), ("Query", "User sleep"));
    assert_eq!(info.as_deref(), Some("SELECT SLEEP(20)"));
    // The same through information_schema and performance_schema.
    let rows = b.ok(&format!(
        "SELECT USER, DB, COMMAND, STATE, INFO FROM information_schema.PROCESSLIST WHERE ID = {a_id}"
    ));
    assert_eq!(
        rows,
        vec![vec![
            Some("root".into()),
            Some("pl".into()),
            Some("Query".into()),
            Some("User sleep".into()),
            Some("SELECT SLEEP(20)".into())
        ]]
    );
    let rows = b.ok(&format!(
        "SELECT PROCESSLIST_USER, PROCESSLIST_COMMAND, TYPE FROM performance_schema.threads \
         WHERE PROCESSLIST_ID = {a_id}"
    ));
    assert_eq!(
        rows,
        vec![vec![
            Some("root".into()),
            Some("Query".into()),
            Some("FOREGROUND".into())
        ]]
    );
    // B itself runs a query while it asks: Threads_running >= 1.
    let running = b
        .ok("SHOW GLOBAL STATUS LIKE 'Threads_running'")
        .into_iter()
        .next()
        .and_then(|r| r[1].clone())
        .and_then(|v| v.parse::<u64>().ok())
        .expect("Threads_running");
    assert!(running >= 2, "A sleeps and B asks: {running}");
    b.ok(&format!("KILL QUERY {a_id}"));
    let (mut a, r, took) = h.join().unwrap();
    // SLEEP interrupted returns 1, as in MySQL; the statement succeeds.
    assert_eq!(r.unwrap(), vec![vec![Some("1".into())]]);
    assert!(took < Duration::from_secs(15), "took {took:?}");
    // The connection goes on, and sleeps again in the list.
    assert_eq!(a.value("SELECT 1"), Some("1".into()));
    let (cmd, state, info) = proc_row(&mut b, a_id).unwrap();
    assert_eq!((cmd.as_str(), state.as_str(), info), ("Sleep", "", None));
    // Unknown thread.
    assert_eq!(
        b.query("KILL 4000000000").unwrap_err(),
        (1094, "Unknown thread id: 4000000000".into())
    );
    // Negative SLEEP is an error in strict mode.
    assert_eq!(a.query("SELECT SLEEP(-1)").unwrap_err().0, 1210);
    assert_eq!(a.value("SELECT SLEEP(0)"), Some("0".into()));
    // COM_RESET_CONNECTION keeps the connection's id and its entry.
    a.send(&[0x1f]);
    a.reply().expect("reset");
    assert_eq!(a.value("SELECT CONNECTION_ID()"), Some(a_id.to_string()));
    let h = std::thread::spawn(move || {
        let r = a.query("SELECT SLEEP(20)");
        (a, r)
    });
    wait_for(10, || {
        proc_row(&mut b, a_id).filter(|(_, s, _)| s == "User sleep")
    })
    .expect("sleeping after the reset");
    b.ok(&format!("KILL QUERY {a_id}"));
    let (_a, r) = h.join().unwrap();
    assert_eq!(r.unwrap(), vec![vec![Some("1".into())]]);
}

#[test]
fn kill_query_stops_a_long_scan_and_the_connection_goes_on() {
    let srv = start("sess-scan", |_| {});
    let mut a = Client::root(srv.port);
    let mut b = Client::root(srv.port);
    load_cross_table(&mut a, "scan", 400);
    let a_id = a.id;
    let h = std::thread::spawn(move || {
        // 64,000,000 rows: far longer than the test waits.
        let r =
            a.query("SELECT COUNT(*) FROM scan.t x, scan.t y, scan.t z WHERE x.v + y.v + z.v < 0");
        (a, r, Instant::now())
    });
    wait_for(10, || {
        proc_row(&mut b, a_id).filter(|(c, _, _)| c == "Query")
    })
    .expect("scan running");
    std::thread::sleep(Duration::from_millis(200));
    let killed_at = Instant::now();
    b.ok(&format!("KILL QUERY {a_id}"));
    let (mut a, r, done) = h.join().unwrap();
    assert_eq!(
        r.unwrap_err(),
        (1317, "Query execution was interrupted".into())
    );
    let took = done.duration_since(killed_at);
    assert!(took < Duration::from_secs(10), "kill took {took:?}");
    assert_eq!(a.value("SELECT COUNT(*) FROM scan.t"), Some("400".into()));
}

#[test]
fn kill_connection_rolls_back_and_releases_row_locks() {
    let srv = start("sess-locks", |_| {});
    let mut a = Client::root(srv.port);
    let mut b = Client::root(srv.port);
    let mut c = Client::root(srv.port);
    a.ok("CREATE DATABASE lk");
    a.ok("CREATE TABLE lk.t (id INT PRIMARY KEY, v INT)");
    a.ok("INSERT INTO lk.t VALUES (1, 0), (2, 0)");
    a.ok("BEGIN");
    a.ok("UPDATE lk.t SET v = 100 WHERE id = 1");
    let b_id = b.id;
    let h = std::thread::spawn(move || {
        let r = b.query("UPDATE lk.t SET v = v + 1 WHERE id = 1");
        (b, r)
    });
    // B waits for A's row lock, and the list says so.
    wait_for(10, || {
        proc_row(&mut c, b_id).filter(|(_, s, _)| s == "waiting for row lock")
    })
    .expect("B waits for the row lock");
    // KILL QUERY ends the wait with 1317; B's connection goes on.
    c.ok(&format!("KILL QUERY {b_id}"));
    let (mut b, r) = h.join().unwrap();
    assert_eq!(r.unwrap_err().0, 1317);
    let h = std::thread::spawn(move || {
        let r = b.query("UPDATE lk.t SET v = v + 1 WHERE id = 1");
        (b, r)
    });
    wait_for(10, || {
        proc_row(&mut c, b_id).filter(|(_, s, _)| s == "waiting for row lock")
    })
    .expect("B waits again");
    // Killing A's connection rolls A back and releases its lock: B goes on.
    c.ok(&format!("KILL CONNECTION {}", a.id));
    assert!(a.closed(), "A's client sees the connection gone");
    let (mut b, r) = h.join().unwrap();
    r.expect("B's update runs once A's lock is released");
    assert_eq!(b.value("SELECT v FROM lk.t WHERE id = 1"), Some("1".into()));
    // A's entry leaves the list.
    let a_id = a.id;
    wait_for(10, || proc_row(&mut c, a_id).is_none().then_some(()))
        .expect("killed connection leaves the process list");
}

#[test]
fn kill_needs_ownership_and_processlist_needs_process() {
    let srv = start("sess-owner", |_| {});
    let mut root = Client::root(srv.port);
    root.ok("CREATE USER 'sess_bob'@'%' IDENTIFIED WITH mysql_native_password BY 'pw'");
    root.ok("CREATE USER 'sess_eve'@'%' IDENTIFIED WITH mysql_native_password BY 'pw'");
    let mut bob = Client::login(srv.port, "sess_bob", "pw").expect("bob");
    let mut bob2 = Client::login(srv.port, "sess_bob", "pw").expect("bob 2");
    let mut eve = Client::login(srv.port, "sess_eve", "pw").expect("eve");
    // Without PROCESS: only the own user's threads.
    let ids: Vec<String> = bob
        .ok("SHOW PROCESSLIST")
        .into_iter()
        .filter_map(|r| r[0].clone())
        .collect();
    assert!(ids.contains(&bob.id.to_string()) && ids.contains(&bob2.id.to_string()));
    assert!(
        !ids.contains(&root.id.to_string()),
        "root's thread is hidden"
    );
    assert!(!ids.contains(&eve.id.to_string()), "eve's thread is hidden");
    let n = bob
        .ok("SELECT ID FROM information_schema.PROCESSLIST")
        .len();
    assert_eq!(n, ids.len());
    // Root sees everyone.
    let all: Vec<String> = root
        .ok("SHOW PROCESSLIST")
        .into_iter()
        .filter_map(|r| r[0].clone())
        .collect();
    assert!(all.contains(&eve.id.to_string()) && all.contains(&bob.id.to_string()));
    // Not the owner.
    assert_eq!(
        bob.query(&format!("KILL {}", root.id)).unwrap_err(),
        (1095, format!("You are not owner of thread {}", root.id))
    );
    assert_eq!(
        eve.query(&format!("KILL QUERY {}", bob.id)).unwrap_err().0,
        1095
    );
    // The same user may kill its other connection; root may kill anyone.
    bob.ok(&format!("KILL {}", bob2.id));
    assert!(bob2.closed());
    root.ok(&format!("KILL CONNECTION {}", eve.id));
    assert!(eve.closed());
    // COM_PROCESS_KILL (mysqladmin kill) and COM_PROCESS_INFO.
    let mut victim = Client::root(srv.port);
    let mut p = vec![0x0c];
    p.extend_from_slice(&victim.id.to_le_bytes());
    root.send(&p);
    assert!(root.reply().is_ok());
    assert!(victim.closed());
    root.send(&[0x0a]);
    let rows = root.reply().expect("COM_PROCESS_INFO");
    assert!(rows
        .iter()
        .any(|r| r[0].as_deref() == Some(&root.id.to_string())));
    // SHUTDOWN needs the SHUTDOWN privilege.
    assert_eq!(bob.query("SHUTDOWN").unwrap_err().0, 1227);
    bob.send(&[0x08, 0x00]);
    assert_eq!(bob.reply().unwrap_err().0, 1227);
    assert!(root.ping());
}

#[test]
fn max_execution_time_and_its_hint() {
    let srv = start("sess-met", |_| {});
    let mut a = Client::root(srv.port);
    load_cross_table(&mut a, "met", 400);
    let q = "SELECT COUNT(*) FROM met.t x, met.t y, met.t z WHERE x.v + y.v + z.v < 0";
    a.ok("SET SESSION max_execution_time = 200");
    let t0 = Instant::now();
    assert_eq!(
        a.query(q).unwrap_err(),
        (
            3024,
            "Query execution was interrupted, maximum statement execution time exceeded".into()
        )
    );
    assert!(t0.elapsed() < Duration::from_secs(10));
    // Only SELECT is limited; the connection goes on.
    assert_eq!(a.value("SELECT 1"), Some("1".into()));
    a.ok("SET SESSION max_execution_time = 0");
    let hinted = q.replacen("SELECT", "SELECT /*+ MAX_EXECUTION_TIME(150) */", 1);
    assert_eq!(a.query(&hinted).unwrap_err().0, 3024);
    // SLEEP under a deadline returns 1 (interrupted), as in MySQL.
    assert_eq!(
        a.value("SELECT /*+ MAX_EXECUTION_TIME(100) */ SLEEP(5)"),
        Some("1".into())
    );
    assert_eq!(a.value("SELECT @@max_execution_time"), Some("0".into()));
}

#[test]
fn extra_connection_is_kept_for_connection_admin() {
    let srv = start("sess-extra", |c| c.max_connections = 2);
    {
        let mut root = Client::root(srv.port);
        root.ok("CREATE USER 'sess_carl'@'%' IDENTIFIED WITH mysql_native_password BY 'pw'");
    }
    // Wait for the setup connection to leave.
    let _a = wait_for(10, || Client::login(srv.port, "sess_carl", "pw").ok()).unwrap();
    let mut b = Client::login(srv.port, "sess_carl", "pw").expect("second");
    // Third: the extra slot; carl is refused after authentication ...
    assert_eq!(
        Client::login(srv.port, "sess_carl", "pw").err(),
        Some((1040, "Too many connections".into()))
    );
    // ... root gets in.
    let mut root = wait_for(10, || Client::login(srv.port, "root", "").ok())
        .expect("root uses the extra connection");
    // A fourth is refused before the handshake, root or not.
    assert_eq!(
        Client::login(srv.port, "root", "").err().map(|e| e.0),
        Some(1040)
    );
    assert!(b.ping() && root.ping());
    let errs = root
        .ok("SHOW GLOBAL STATUS LIKE 'Connection_errors_max_connections'")
        .into_iter()
        .next()
        .and_then(|r| r[1].clone())
        .unwrap();
    assert!(errs.parse::<u64>().unwrap() >= 2);
}

#[test]
fn set_global_max_allowed_packet_applies_to_new_connections() {
    let srv = start("sess-map", |_| {});
    let mut old = Client::root(srv.port);
    old.ok("SET GLOBAL max_allowed_packet = 1024");
    assert_eq!(
        old.value("SELECT @@global.max_allowed_packet"),
        Some("1024".into())
    );
    let big = format!("SELECT '{}'", "x".repeat(3000));
    // A new connection gets the new limit: 1153 and closed.
    let mut new = Client::root(srv.port);
    assert_eq!(new.query(&big).unwrap_err().0, 1153);
    assert!(new.closed());
    // The old one keeps its limit.
    assert_eq!(old.ok(&big).len(), 1);
    old.ok("SET GLOBAL max_allowed_packet = 67108864");
}

#[test]
fn connection_status_counters() {
    let srv = start("sess-status", |_| {});
    let mut a = Client::root(srv.port);
    let status = |c: &mut Client| -> std::collections::HashMap<String, u64> {
        c.ok("SHOW GLOBAL STATUS")
            .into_iter()
            .filter_map(|r| Some((r[0].clone()?, r[1].clone()?.parse().ok()?)))
            .collect()
    };
    let s0 = status(&mut a);
    for k in [
        "Threads_connected",
        "Threads_running",
        "Max_used_connections",
        "Connections",
        "Aborted_connects",
    ] {
        assert!(s0.contains_key(k), "{k} missing");
    }
    assert!(s0["Threads_connected"] >= 1 && s0["Threads_running"] >= 1);
    assert!(s0["Max_used_connections"] >= s0["Threads_connected"]);
    // A failed login is an aborted connect; every attempt a connection.
    assert_eq!(
        Client::login(srv.port, "root", "wrong").err().map(|e| e.0),
        Some(1045)
    );
    let _b = Client::root(srv.port);
    let s1 = status(&mut a);
    assert!(s1["Aborted_connects"] > s0["Aborted_connects"]);
    assert!(s1["Connections"] >= s0["Connections"] + 2);
    assert!(s1["Threads_connected"] >= 2);
}

#[test]
fn shutdown_statement_stops_the_server() {
    let mut srv = start("sess-shut", |_| {});
    let mut a = Client::root(srv.port);
    a.ok("SHUTDOWN");
    let t = srv.thread.take().unwrap();
    let t0 = Instant::now();
    while !t.is_finished() && t0.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(t.is_finished(), "server stopped after SHUTDOWN");
    t.join().unwrap();
    assert!(a.closed());
}

/// `mariadb-admin processlist`, `kill` and `shutdown` against the server
/// (skipped where the tool is not installed).
#[test]
fn mariadb_admin_processlist_kill_shutdown() {
    let tool = "/usr/bin/mariadb-admin";
    if !std::path::Path::new(tool).exists() {
        eprintln!("no {tool}; skipped");
        return;
    }
    let mut srv = start("sess-admin", |_| {});
    let port = srv.port.to_string();
    let admin = |args: &[&str]| {
        let out = std::process::Command::new(tool)
            .args(["-h127.0.0.1", "-P", port.as_str(), "-uroot", "--skip-ssl"])
            .args(args)
            .output()
            .unwrap();
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let mut victim = Client::root(srv.port);
    victim.ok("CREATE DATABASE admin_db");
    victim.ok("USE admin_db");
    let (ok, out, err) = admin(&["processlist"]);
    assert!(ok, "processlist: {out} {err}");
    assert!(out.contains("admin_db") && out.contains("Sleep"), "{out}");
    let (ok, out, err) = admin(&["kill", &victim.id.to_string()]);
    assert!(ok, "kill: {out} {err}");
    assert!(victim.closed(), "killed by mariadb-admin");
    let (ok, out, err) = admin(&["shutdown"]);
    assert!(ok, "shutdown: {out} {err}");
    let t = srv.thread.take().unwrap();
    let t0 = Instant::now();
    while !t.is_finished() && t0.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(
        t.is_finished(),
        "server stopped after mariadb-admin shutdown"
    );
    t.join().unwrap();
}
