//! MySQL 8.0 roles over the wire, with the accounts kept in the grant
//! tables as `quire serve` keeps them: privileges reached only through a
//! role count after SET ROLE (and not before), default roles are active at
//! login, a REVOKE reaches connected sessions on their next statement,
//! role edges and default roles survive a restart, and the errors carry
//! MySQL's codes and texts.

mod wire;

use wire::{fresh_dir, start_in, Client};

fn login(port: u16, user: &str) -> Client {
    Client::login(port, user, "pw").unwrap_or_else(|e| panic!("{user} logs in: {e:?}"))
}

#[track_caller]
fn err(c: &mut Client, sql: &str) -> (u16, String) {
    match c.query(sql) {
        Err(e) => e,
        Ok(r) => panic!("{sql}: expected an error, got {r:?}"),
    }
}

fn lines(c: &mut Client, sql: &str) -> Vec<String> {
    c.ok(sql)
        .into_iter()
        .map(|r| r[0].clone().unwrap_or_default())
        .collect()
}

#[test]
fn roles_are_activated_revoked_and_survive_a_restart() {
    let srv = start_in(fresh_dir("roles"), true, |_| {});
    let mut root = Client::root(srv.port);
    for q in [
        "CREATE DATABASE app",
        "CREATE TABLE app.t (id INT PRIMARY KEY, v INT)",
        "INSERT INTO app.t VALUES (1, 10)",
        "CREATE ROLE r_read, 'r_write'",
        "GRANT SELECT ON app.* TO r_read",
        "GRANT INSERT, UPDATE ON app.t TO r_write",
        // Nesting: r_write brings r_read's privileges.
        "GRANT r_read TO r_write",
        "CREATE USER u IDENTIFIED BY 'pw'",
        "GRANT r_write TO u",
    ] {
        root.ok(q);
    }
    assert_eq!(
        err(&mut root, "CREATE ROLE r_read"),
        (1396, "Operation CREATE ROLE failed for 'r_read'@'%'".into())
    );
    root.ok("CREATE ROLE IF NOT EXISTS r_read");
    // A role is a locked account: nobody logs in as it.
    assert_eq!(
        Client::login(srv.port, "r_read", "")
            .map(|_| ())
            .unwrap_err()
            .0,
        3118
    );

    let mut u = login(srv.port, "u");
    assert_eq!(u.value("SELECT CURRENT_ROLE()").as_deref(), Some("NONE"));
    assert_eq!(err(&mut u, "SELECT v FROM app.t").0, 1142);
    assert_eq!(
        err(&mut u, "SET ROLE r_read"),
        (3530, "`r_read`@`%` is not granted to `u`@`%`".into())
    );
    u.ok("SET ROLE r_write");
    assert_eq!(
        u.value("SELECT CURRENT_ROLE()").as_deref(),
        Some("`r_write`@`%`")
    );
    assert_eq!(u.value("SELECT v FROM app.t").as_deref(), Some("10"));
    u.ok("UPDATE app.t SET v = 11 WHERE id = 1");
    assert_eq!(err(&mut u, "DELETE FROM app.t").0, 1142);
    // The own account without USING shows the active role expanded.
    assert_eq!(
        lines(&mut u, "SHOW GRANTS"),
        vec![
            "GRANT USAGE ON *.* TO `u`@`%`",
            "GRANT SELECT ON `app`.* TO `u`@`%`",
            "GRANT INSERT, UPDATE ON `app`.`t` TO `u`@`%`",
            "GRANT `r_write`@`%` TO `u`@`%`",
        ]
    );
    assert_eq!(
        lines(&mut root, "SHOW GRANTS FOR u"),
        vec![
            "GRANT USAGE ON *.* TO `u`@`%`",
            "GRANT `r_write`@`%` TO `u`@`%`",
        ]
    );
    assert_eq!(lines(&mut root, "SHOW GRANTS FOR u USING r_write").len(), 4);
    assert_eq!(
        err(&mut root, "SHOW GRANTS FOR u USING r_read"),
        (3530, "`r_read`@`%` is not granted to `u`@`%`".into())
    );
    assert_eq!(
        err(&mut root, "GRANT u TO r_read"),
        (
            4027,
            "User account `r_read`@`%` is directly or indirectly granted to the role `u`@`%`. The GRANT would create a loop"
                .into()
        )
    );
    assert_eq!(
        err(&mut root, "GRANT nosuch TO u"),
        (3523, "Unknown authorization ID `nosuch`@`%`".into())
    );
    // Granting roles needs ROLE_ADMIN (or the admin option).
    assert_eq!(err(&mut u, "GRANT r_read TO u").0, 1227);

    // REVOKE reaches the connected session on its next statement.
    root.ok("REVOKE r_write FROM u");
    assert_eq!(err(&mut u, "SELECT v FROM app.t").0, 1142);
    assert_eq!(u.value("SELECT CURRENT_ROLE()").as_deref(), Some("NONE"));

    // Default roles are active at login.
    root.ok("GRANT r_write TO u WITH ADMIN OPTION");
    assert_eq!(
        err(&mut root, "SET DEFAULT ROLE r_read TO u"),
        (3530, "`r_read`@`%` is not granted to `u`@`%`".into())
    );
    root.ok("SET DEFAULT ROLE r_write TO u");
    let mut u2 = login(srv.port, "u");
    assert_eq!(
        u2.value("SELECT CURRENT_ROLE()").as_deref(),
        Some("`r_write`@`%`")
    );
    assert_eq!(u2.value("SELECT v FROM app.t").as_deref(), Some("11"));
    // The admin option lets u hand r_write on.
    root.ok("CREATE USER w IDENTIFIED BY 'pw'");
    u2.ok("GRANT r_write TO w");
    u2.ok("SET ROLE NONE");
    assert_eq!(err(&mut u2, "SELECT v FROM app.t").0, 1142);
    u2.ok("SET ROLE DEFAULT");
    u2.ok("SELECT v FROM app.t");
    drop((u, u2, root));

    let dir = srv.stop_keeping_data();
    let srv = start_in(dir, true, |_| {});
    let mut root = Client::root(srv.port);
    assert_eq!(
        lines(&mut root, "SHOW GRANTS FOR u"),
        vec![
            "GRANT USAGE ON *.* TO `u`@`%`",
            "GRANT `r_write`@`%` TO `u`@`%` WITH ADMIN OPTION",
        ]
    );
    assert_eq!(
        root.ok(
            "SELECT FROM_USER, TO_USER, WITH_ADMIN_OPTION FROM mysql.role_edges ORDER BY TO_USER"
        ),
        vec![
            vec![
                Some("r_read".into()),
                Some("r_write".into()),
                Some("N".into())
            ],
            vec![Some("r_write".into()), Some("u".into()), Some("Y".into())],
            vec![Some("r_write".into()), Some("w".into()), Some("N".into())],
        ]
    );
    let mut u = login(srv.port, "u");
    assert_eq!(
        u.value("SELECT CURRENT_ROLE()").as_deref(),
        Some("`r_write`@`%`")
    );
    assert_eq!(u.value("SELECT v FROM app.t").as_deref(), Some("11"));
    // Dropping the role removes its edges and default-role rows, and the
    // session loses its privileges at once.
    root.ok("DROP ROLE r_write");
    assert_eq!(err(&mut u, "SELECT v FROM app.t").0, 1142);
    assert_eq!(u.value("SELECT CURRENT_ROLE()").as_deref(), Some("NONE"));
    assert_eq!(
        root.value("SELECT COUNT(*) FROM mysql.role_edges")
            .as_deref(),
        Some("0")
    );
    assert_eq!(
        root.value("SELECT COUNT(*) FROM mysql.default_roles")
            .as_deref(),
        Some("0")
    );
    assert_eq!(
        err(&mut root, "DROP ROLE r_write"),
        (1396, "Operation DROP ROLE failed for 'r_write'@'%'".into())
    );
    root.ok("DROP ROLE IF EXISTS r_write, r_read");
}

#[test]
fn activate_all_roles_on_login_and_mandatory_roles() {
    let srv = start_in(fresh_dir("roles-all"), true, |_| {});
    let mut root = Client::root(srv.port);
    for q in [
        "CREATE DATABASE d",
        "CREATE TABLE d.t (id INT PRIMARY KEY)",
        "CREATE ROLE r1, r2",
        "GRANT SELECT ON d.* TO r2",
        "CREATE USER u IDENTIFIED BY 'pw'",
        "GRANT r2, r1 TO u",
    ] {
        root.ok(q);
    }
    assert_eq!(
        root.value("SELECT @@GLOBAL.activate_all_roles_on_login")
            .as_deref(),
        Some("0")
    );
    let mut before = login(srv.port, "u");
    assert_eq!(
        before.value("SELECT CURRENT_ROLE()").as_deref(),
        Some("NONE")
    );
    root.ok("SET GLOBAL activate_all_roles_on_login = ON");
    let mut u = login(srv.port, "u");
    assert_eq!(
        u.value("SELECT CURRENT_ROLE()").as_deref(),
        Some("`r1`@`%`,`r2`@`%`")
    );
    u.ok("SELECT * FROM d.t");
    // Sessions that logged in before keep their roles.
    assert_eq!(err(&mut before, "SELECT * FROM d.t").0, 1142);
    u.ok("SET ROLE ALL EXCEPT r2");
    assert_eq!(
        u.value("SELECT CURRENT_ROLE()").as_deref(),
        Some("`r1`@`%`")
    );
    assert_eq!(err(&mut u, "SELECT * FROM d.t").0, 1142);
    root.ok("SET GLOBAL activate_all_roles_on_login = OFF");
    root.ok("SET GLOBAL mandatory_roles = ''");
    let e = err(&mut root, "SET GLOBAL mandatory_roles = 'r1'");
    assert_eq!(e.0, 1235, "{e:?}");
    assert!(e.1.contains("mandatory_roles"), "{e:?}");
    // Global-only, as in MySQL.
    assert_eq!(err(&mut root, "SET SESSION mandatory_roles = ''").0, 1229);
}
