//! The privilege matrix: statement classes × privilege levels, each
//! allowed or refused with MySQL's error, against an in-memory account
//! store that keeps privileges (and a version, as the server's does).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use quire_engine::{EngineError, Value};
use quire_sql::{
    AccountGrants, AccountOptions, AccountPrivs, AccountStore, AuthId, AuthSpec, Output, RoleEdge,
    RoleGraph, Session,
};

mod common;
use common::open_engine;

#[derive(Default)]
struct Store {
    accounts: Mutex<BTreeMap<(String, String), Arc<AccountPrivs>>>,
    version: AtomicU64,
    roles: Mutex<Arc<RoleGraph>>,
}

impl Store {
    fn with_root() -> Arc<Store> {
        let s = Store::default();
        s.accounts.lock().unwrap().insert(
            ("root".into(), "localhost".into()),
            Arc::new(AccountPrivs::from_legacy(true, &[])),
        );
        Arc::new(s)
    }
    fn bump(&self) {
        self.version.fetch_add(1, Ordering::Release);
    }
}

impl AccountStore for Store {
    fn create_user(&self, user: &str, host: &str, _pw: &str) -> Result<bool, EngineError> {
        let mut t = self.accounts.lock().unwrap();
        let k = (user.to_string(), host.to_string());
        if t.contains_key(&k) {
            return Ok(false);
        }
        t.insert(k, Arc::default());
        self.bump();
        Ok(true)
    }
    fn create_account(
        &self,
        user: &str,
        host: &str,
        _auth: &AuthSpec,
        _opts: &AccountOptions,
    ) -> Result<bool, EngineError> {
        self.create_user(user, host, "")
    }
    fn role_graph(&self) -> Arc<RoleGraph> {
        self.roles.lock().unwrap().clone()
    }
    fn change_roles(&self, grant: bool, edges: &[RoleEdge]) -> Result<(), EngineError> {
        let mut g = self.roles.lock().unwrap();
        let g = Arc::make_mut(&mut g);
        for e in edges {
            if grant {
                g.grant(e);
            } else {
                g.revoke(&e.role, &e.to);
            }
        }
        self.bump();
        Ok(())
    }
    fn set_default_roles(&self, who: &AuthId, roles: &[AuthId]) -> Result<bool, EngineError> {
        Arc::make_mut(&mut self.roles.lock().unwrap()).set_defaults(who, roles);
        self.bump();
        Ok(true)
    }
    fn drop_user(&self, user: &str, host: &str) -> Result<bool, EngineError> {
        Arc::make_mut(&mut self.roles.lock().unwrap())
            .remove_account(&(user.to_string(), host.to_string()));
        let r = self
            .accounts
            .lock()
            .unwrap()
            .remove(&(user.to_string(), host.to_string()))
            .is_some();
        self.bump();
        Ok(r)
    }
    fn set_password(&self, user: &str, host: &str, _pw: &str) -> Result<bool, EngineError> {
        Ok(self.grants(user, host).is_some())
    }
    fn grant_all(&self, _u: &str, _h: &str, _db: Option<&str>) -> Result<bool, EngineError> {
        Err(EngineError::not_supported("grant_all"))
    }
    fn grants(&self, user: &str, host: &str) -> Option<AccountGrants> {
        self.privileges(user, host).map(|p| AccountGrants {
            all_privileges: p.is_all(),
            databases: p.all_dbs(),
        })
    }
    fn list(&self) -> Vec<(String, String)> {
        self.accounts.lock().unwrap().keys().cloned().collect()
    }
    fn privileges(&self, user: &str, host: &str) -> Option<Arc<AccountPrivs>> {
        self.accounts
            .lock()
            .unwrap()
            .get(&(user.to_string(), host.to_string()))
            .cloned()
    }
    fn privilege_version(&self) -> u64 {
        self.version.load(Ordering::Acquire)
    }
    fn set_privileges(
        &self,
        user: &str,
        host: &str,
        privs: &AccountPrivs,
    ) -> Result<bool, EngineError> {
        let mut t = self.accounts.lock().unwrap();
        let Some(a) = t.get_mut(&(user.to_string(), host.to_string())) else {
            return Ok(false);
        };
        *a = Arc::new(privs.clone());
        self.bump();
        Ok(true)
    }
}

fn session(engine: &quire_engine::Engine, store: &Arc<Store>, user: &str, host: &str) -> Session {
    let mut s = Session::new(engine.clone(), user);
    s.set_account_store(store.clone());
    s.set_identity(host, "localhost");
    s
}

#[track_caller]
fn ok(s: &mut Session, sql: &str) {
    if let Err(e) = s.execute(sql) {
        panic!("{sql}: {} {}", e.code, e.message);
    }
}

#[track_caller]
fn code(s: &mut Session, sql: &str) -> u16 {
    match s.execute(sql) {
        Err(e) => e.code,
        Ok(o) => panic!("{sql}: expected an error, got {o:?}"),
    }
}

#[track_caller]
fn msg(s: &mut Session, sql: &str) -> String {
    match s.execute(sql) {
        Err(e) => format!("{} {}", e.code, e.message),
        Ok(o) => panic!("{sql}: expected an error, got {o:?}"),
    }
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

fn setup(
    name: &str,
) -> (
    quire_engine::Engine,
    std::path::PathBuf,
    Arc<Store>,
    Session,
) {
    let (engine, dir) = open_engine(name);
    let store = Store::with_root();
    let mut root = session(&engine, &store, "root", "localhost");
    for sql in [
        "CREATE DATABASE db1",
        "CREATE DATABASE db2",
        "CREATE DATABASE mysql",
        "CREATE TABLE mysql.user (Host VARCHAR(255), User VARCHAR(32), Super_priv CHAR(1), PRIMARY KEY (Host, User))",
        "INSERT INTO mysql.user VALUES ('localhost', 'root', 'Y')",
        "CREATE TABLE db1.t (id INT PRIMARY KEY, a INT, secret INT)",
        "CREATE TABLE db1.u (id INT PRIMARY KEY)",
        "CREATE TABLE db2.t (id INT PRIMARY KEY)",
        "INSERT INTO db1.t VALUES (1, 10, 100), (2, 20, 200)",
        "INSERT INTO db1.u VALUES (1)",
        "INSERT INTO db2.t VALUES (7)",
    ] {
        ok(&mut root, sql);
    }
    (engine, dir, store, root)
}

/// A user with SELECT on db1 only: reads db1, changes nothing, sees
/// nothing else, and none of the escalations work.
#[test]
fn select_on_one_database_reads_and_nothing_else() {
    let (engine, dir, store, mut root) = setup("priv_select_db");
    ok(&mut root, "CREATE USER reader");
    ok(&mut root, "GRANT SELECT ON db1.* TO reader");
    let mut r = session(&engine, &store, "reader", "%");

    // Reads in db1, in any form.
    assert_eq!(rows(&mut r, "SELECT a FROM db1.t WHERE id = 1"), vec!["10"]);
    ok(&mut r, "USE db1");
    assert_eq!(
        rows(
            &mut r,
            "SELECT t.id FROM t JOIN (SELECT id FROM u) AS x ON t.id = x.id"
        ),
        vec!["1"]
    );
    // A CTE name is no table; a CTE body reading elsewhere is refused.
    assert_eq!(
        rows(&mut r, "WITH x AS (SELECT id FROM t) SELECT * FROM x"),
        vec!["1", "2"]
    );
    assert_eq!(
        code(&mut r, "WITH x AS (SELECT id FROM db2.t) SELECT * FROM x"),
        1142
    );
    assert_eq!(
        code(&mut r, "SELECT * FROM (SELECT id FROM db2.t) AS d"),
        1142
    );
    assert_eq!(rows(&mut r, "SHOW TABLES"), vec!["t", "u"]);
    ok(&mut r, "DESCRIBE t");

    // Writes of every kind: 1142 naming the command and db.table.
    assert_eq!(
        msg(&mut r, "INSERT INTO t VALUES (3, 0, 0)"),
        "1142 INSERT command denied to user 'reader'@'localhost' for table 'db1.t'"
    );
    assert_eq!(code(&mut r, "UPDATE t SET a = 0"), 1142);
    assert_eq!(code(&mut r, "DELETE FROM t WHERE id = 1"), 1142);
    assert_eq!(code(&mut r, "REPLACE INTO t VALUES (1, 0, 0)"), 1142);
    assert_eq!(code(&mut r, "CREATE TABLE n (id INT)"), 1142);
    assert_eq!(code(&mut r, "DROP TABLE t"), 1142);
    assert_eq!(code(&mut r, "TRUNCATE TABLE t"), 1142);
    assert_eq!(code(&mut r, "CREATE INDEX ia ON t (a)"), 1142);
    assert_eq!(
        msg(&mut r, "CREATE DATABASE db3"),
        "1044 Access denied for user 'reader'@'%' to database 'db3'"
    );
    assert_eq!(code(&mut r, "DROP DATABASE db1"), 1044);
    // A subquery into another database is a read of it.
    assert_eq!(
        code(
            &mut r,
            "SELECT id FROM t WHERE id IN (SELECT id FROM db2.t)"
        ),
        1142
    );
    // INSERT ... SELECT reading db1 into db2.
    assert_eq!(code(&mut r, "INSERT INTO db2.t SELECT id FROM t"), 1142);
    // Nothing outside db1.
    assert_eq!(code(&mut r, "SELECT * FROM db2.t"), 1142);
    assert_eq!(
        msg(&mut r, "USE db2"),
        "1044 Access denied for user 'reader'@'%' to database 'db2'"
    );
    assert_eq!(code(&mut r, "SHOW TABLES FROM db2"), 1044);
    assert_eq!(code(&mut r, "DESCRIBE db2.t"), 1142);
    let dbs = rows(&mut r, "SHOW DATABASES");
    assert!(dbs.contains(&"db1".to_string()), "{dbs:?}");
    assert!(!dbs.iter().any(|d| d == "db2" || d == "mysql"), "{dbs:?}");
    assert!(rows(&mut root, "SHOW DATABASES").contains(&"db2".to_string()));
    // The escalations.
    assert_eq!(code(&mut r, "SELECT * FROM mysql.user"), 1142);
    assert_eq!(
        code(&mut r, "INSERT INTO mysql.user VALUES ('%', 'evil', 'Y')"),
        1142
    );
    assert_eq!(code(&mut r, "UPDATE mysql.user SET Super_priv = 'Y'"), 1142);
    assert_eq!(code(&mut r, "DROP TABLE mysql.user"), 1142);
    assert_eq!(
        msg(&mut r, "FLUSH PRIVILEGES"),
        "1227 Access denied; you need (at least one of) the RELOAD privilege(s) for this operation"
    );
    assert_eq!(
        msg(&mut r, "SET GLOBAL innodb_flush_log_at_trx_commit = 0"),
        "1227 Access denied; you need (at least one of) the SUPER or SYSTEM_VARIABLES_ADMIN privilege(s) for this operation"
    );
    assert_eq!(code(&mut r, "SET GLOBAL sql_mode = ''"), 1227);
    assert_eq!(code(&mut r, "CREATE USER x"), 1227);
    assert_eq!(code(&mut r, "GRANT SELECT ON db1.* TO reader"), 1044);
    assert_eq!(code(&mut r, "GRANT ALL ON *.* TO reader"), 1045);
    assert_eq!(code(&mut r, "GRANT SELECT ON db1.t TO reader"), 1142);
    assert_eq!(code(&mut r, "SHOW GRANTS FOR root@localhost"), 1044);
    // A session variable is still the session's own.
    ok(&mut r, "SET SESSION sql_mode = ''");
    // Prepared statements are checked too.
    assert_eq!(
        r.prepare("DELETE FROM t WHERE id = ?").unwrap_err().code,
        1142
    );
    // Nothing changed.
    assert_eq!(rows(&mut root, "SELECT COUNT(*) FROM db1.t"), vec!["2"]);
    assert_eq!(
        rows(&mut root, "SELECT COUNT(*) FROM mysql.user"),
        vec!["1"]
    );

    drop((r, root));
    let _ = engine.close(true);
    let _ = std::fs::remove_dir_all(dir);
}

/// Each statement class allowed by exactly the privilege it needs, at
/// database, table and global level.
#[test]
fn statement_classes_by_level() {
    let (engine, dir, store, mut root) = setup("priv_matrix");
    ok(&mut root, "CREATE USER w");
    let mut w = session(&engine, &store, "w", "%");
    // (grant, allowed statement, refused code before the grant)
    let cases: &[(&str, &str, u16)] = &[
        (
            "INSERT ON db1.t",
            "INSERT INTO db1.t VALUES (5, 5, 5)",
            1142,
        ),
        ("UPDATE ON db1.t", "UPDATE db1.t SET a = 1", 1142),
        // UPDATE reading a column needs SELECT too.
        (
            "SELECT ON db1.t",
            "UPDATE db1.t SET a = a + 1 WHERE id = 5",
            1142,
        ),
        ("DELETE ON db1.t", "DELETE FROM db1.t WHERE id = 5", 1142),
        ("INDEX ON db1.t", "CREATE INDEX ia ON db1.t (a)", 1142),
        (
            "CREATE ON db2.*",
            "CREATE TABLE db2.n (id INT PRIMARY KEY)",
            1142,
        ),
        ("DROP ON db2.*", "DROP TABLE db2.n", 1142),
        ("CREATE ON db3.*", "CREATE DATABASE db3", 1044),
        ("DROP ON db3.*", "DROP DATABASE db3", 1044),
        ("RELOAD ON *.*", "FLUSH TABLES", 1227),
        (
            "SYSTEM_VARIABLES_ADMIN ON *.*",
            "SET GLOBAL sql_mode = 'STRICT_TRANS_TABLES'",
            1227,
        ),
        ("CREATE USER ON *.*", "CREATE USER made", 1227),
        (
            "BINLOG_ADMIN ON *.*",
            "PURGE BINARY LOGS BEFORE '2001-01-01'",
            1227,
        ),
    ];
    // RESET MASTER needs RELOAD (granted below).
    assert_eq!(code(&mut w, "RESET MASTER"), 1227);
    for (grant, sql, refused) in cases {
        assert_eq!(code(&mut w, sql), *refused, "{sql} before GRANT {grant}");
        ok(&mut root, &format!("GRANT {grant} TO w"));
        ok(&mut w, sql);
    }
    // SUPER implies SYSTEM_VARIABLES_ADMIN.
    ok(&mut root, "REVOKE SYSTEM_VARIABLES_ADMIN ON *.* FROM w");
    assert_eq!(code(&mut w, "SET GLOBAL sql_mode = ''"), 1227);
    ok(&mut root, "GRANT SUPER ON *.* TO w");
    ok(&mut w, "SET GLOBAL sql_mode = ''");
    ok(&mut w, "RESET MASTER");
    // REVOKE takes effect on the next statement of a live session.
    ok(&mut root, "REVOKE INSERT ON db1.t FROM w");
    assert_eq!(code(&mut w, "INSERT INTO db1.t VALUES (6, 6, 6)"), 1142);
    ok(&mut root, "REVOKE ALL PRIVILEGES, GRANT OPTION FROM w");
    assert_eq!(code(&mut w, "UPDATE db1.t SET a = 1"), 1142);
    assert_eq!(
        rows(&mut root, "SHOW GRANTS FOR w"),
        vec!["GRANT USAGE ON *.* TO `w`@`%`"]
    );
    // REVOKE of something never granted.
    assert_eq!(
        msg(&mut root, "REVOKE SELECT ON db2.* FROM w"),
        "1141 There is no such grant defined for user 'w' on host '%'"
    );
    assert_eq!(code(&mut root, "REVOKE SELECT ON db1.u FROM w"), 1147);

    drop((w, root));
    let _ = engine.close(true);
    let _ = std::fs::remove_dir_all(dir);
}

/// Column grants: only the granted columns can be read or written.
#[test]
fn column_privileges() {
    let (engine, dir, store, mut root) = setup("priv_columns");
    ok(&mut root, "CREATE USER c");
    ok(&mut root, "GRANT SELECT (id, a), UPDATE (a) ON db1.t TO c");
    let mut c = session(&engine, &store, "c", "%");
    assert_eq!(
        rows(&mut c, "SELECT id, a FROM db1.t WHERE id = 2"),
        vec!["2|20"]
    );
    assert_eq!(
        msg(&mut c, "SELECT secret FROM db1.t"),
        "1143 SELECT command denied to user 'c'@'localhost' for column 'secret' in table 't'"
    );
    assert_eq!(code(&mut c, "SELECT * FROM db1.t"), 1143);
    assert_eq!(code(&mut c, "SELECT id FROM db1.t WHERE secret > 0"), 1143);
    ok(&mut c, "UPDATE db1.t SET a = a + 1 WHERE id = 1");
    assert_eq!(code(&mut c, "UPDATE db1.t SET secret = 0"), 1143);
    assert_eq!(code(&mut c, "INSERT INTO db1.t (id) VALUES (9)"), 1142);
    assert_eq!(code(&mut c, "SELECT * FROM db1.u"), 1142);
    // USE works: the account has something in db1.
    ok(&mut c, "USE db1");
    assert_eq!(rows(&mut c, "SHOW TABLES"), vec!["t"]);
    assert_eq!(
        rows(&mut root, "SHOW GRANTS FOR c"),
        vec![
            "GRANT USAGE ON *.* TO `c`@`%`",
            "GRANT SELECT (`a`, `id`), UPDATE (`a`) ON `db1`.`t` TO `c`@`%`"
        ]
    );
    ok(&mut root, "REVOKE SELECT (a) ON db1.t FROM c");
    assert_eq!(code(&mut c, "SELECT a FROM db1.t"), 1143);
    ok(&mut c, "SELECT id FROM db1.t");
    // Grants name real tables and columns.
    assert_eq!(code(&mut root, "GRANT SELECT ON db1.nope TO c"), 1146);
    assert_eq!(code(&mut root, "GRANT SELECT (nope) ON db1.t TO c"), 1054);
    assert_eq!(code(&mut root, "GRANT RELOAD ON db1.t TO c"), 1144);
    assert_eq!(code(&mut root, "GRANT RELOAD ON db1.* TO c"), 1221);
    assert_eq!(code(&mut root, "GRANT SELECT ON db1.* TO nobody"), 1410);

    drop((c, root));
    let _ = engine.close(true);
    let _ = std::fs::remove_dir_all(dir);
}

/// GRANT needs GRANT OPTION and the privileges handed on; SHOW GRANTS
/// prints MySQL's lines.
#[test]
fn grant_option_and_show_grants() {
    let (engine, dir, store, mut root) = setup("priv_grant_option");
    ok(&mut root, "CREATE USER g, h");
    ok(
        &mut root,
        "GRANT SELECT, INSERT ON db1.* TO g WITH GRANT OPTION",
    );
    let mut g = session(&engine, &store, "g", "%");
    ok(&mut g, "GRANT SELECT ON db1.* TO h");
    ok(&mut g, "GRANT INSERT ON db1.t TO h");
    assert_eq!(
        msg(&mut g, "GRANT DELETE ON db1.* TO h"),
        "1044 Access denied for user 'g'@'%' to database 'db1'"
    );
    assert_eq!(code(&mut g, "GRANT SELECT ON db2.* TO h"), 1044);
    assert_eq!(
        msg(&mut g, "GRANT SELECT ON *.* TO h"),
        "1045 Access denied for user 'g'@'localhost' (using password: YES)"
    );
    assert_eq!(
        rows(&mut root, "SHOW GRANTS FOR g"),
        vec![
            "GRANT USAGE ON *.* TO `g`@`%`",
            "GRANT SELECT, INSERT ON `db1`.* TO `g`@`%` WITH GRANT OPTION"
        ]
    );
    assert_eq!(
        rows(&mut root, "SHOW GRANTS FOR h"),
        vec![
            "GRANT USAGE ON *.* TO `h`@`%`",
            "GRANT SELECT ON `db1`.* TO `h`@`%`",
            "GRANT INSERT ON `db1`.`t` TO `h`@`%`"
        ]
    );
    ok(&mut root, "GRANT ALL ON db2.* TO h");
    ok(&mut root, "GRANT RELOAD, PROCESS ON *.* TO h");
    let lines = rows(&mut root, "SHOW GRANTS FOR h");
    assert_eq!(lines[0], "GRANT RELOAD, PROCESS ON *.* TO `h`@`%`");
    assert!(lines.contains(&"GRANT ALL PRIVILEGES ON `db2`.* TO `h`@`%`".to_string()));
    let root_lines = rows(&mut root, "SHOW GRANTS");
    assert!(root_lines[0].starts_with("GRANT SELECT, INSERT, UPDATE, DELETE, CREATE, DROP, RELOAD, SHUTDOWN, PROCESS, FILE, REFERENCES, INDEX, ALTER, SHOW DATABASES, SUPER,"));
    assert!(root_lines[0].ends_with(" ON *.* TO `root`@`localhost` WITH GRANT OPTION"));
    // The grantee's own SHOW GRANTS works without privileges on mysql.
    let mut h = session(&engine, &store, "h", "%");
    assert_eq!(rows(&mut h, "SHOW GRANTS").len(), 4);
    ok(&mut h, "FLUSH PRIVILEGES");

    drop((g, h, root));
    let _ = engine.close(true);
    let _ = std::fs::remove_dir_all(dir);
}

/// Roles in one process: privileges through a role count only while it
/// is active, nested roles count, REVOKE and SET ROLE take effect on the
/// next statement, and default roles start a new session.
#[test]
fn roles_add_privileges_while_active() {
    let (engine, dir, store, mut root) = setup("priv_roles");
    for sql in [
        "CREATE ROLE r_read, r_all",
        "GRANT SELECT ON db1.* TO r_read",
        "GRANT r_read TO r_all",
        "CREATE USER u",
        "GRANT r_all TO u",
    ] {
        ok(&mut root, sql);
    }
    let mut u = session(&engine, &store, "u", "%");
    assert_eq!(rows(&mut u, "SELECT CURRENT_ROLE()"), vec!["NONE"]);
    assert_eq!(code(&mut u, "SELECT a FROM db1.t WHERE id = 1"), 1142);
    assert_eq!(
        msg(&mut u, "SET ROLE r_read"),
        "3530 `r_read`@`%` is not granted to `u`@`%`"
    );
    ok(&mut u, "SET ROLE ALL");
    assert_eq!(rows(&mut u, "SELECT CURRENT_ROLE()"), vec!["`r_all`@`%`"]);
    assert_eq!(rows(&mut u, "SELECT a FROM db1.t WHERE id = 1"), vec!["10"]);
    // A role's own privileges change for the sessions using it at once.
    ok(&mut root, "REVOKE SELECT ON db1.* FROM r_read");
    assert_eq!(code(&mut u, "SELECT a FROM db1.t WHERE id = 1"), 1142);
    ok(&mut root, "GRANT SELECT ON db1.* TO r_read");
    ok(&mut u, "SELECT a FROM db1.t WHERE id = 1");
    ok(&mut root, "REVOKE r_all FROM u");
    assert_eq!(code(&mut u, "SELECT a FROM db1.t WHERE id = 1"), 1142);
    assert_eq!(
        msg(&mut root, "GRANT r_all TO r_read"),
        "4027 User account `r_read`@`%` is directly or indirectly granted to the role `r_all`@`%`. The GRANT would create a loop"
    );
    assert_eq!(code(&mut root, "GRANT r_read TO r_read"), 4027);
    assert_eq!(
        msg(&mut root, "REVOKE r_read FROM nobody"),
        "3523 Unknown authorization ID `nobody`@`%`"
    );
    ok(&mut root, "GRANT r_read TO u");
    ok(&mut root, "ALTER USER u DEFAULT ROLE ALL");
    let mut u2 = session(&engine, &store, "u", "%");
    assert_eq!(rows(&mut u2, "SELECT CURRENT_ROLE()"), vec!["`r_read`@`%`"]);
    ok(&mut u2, "SELECT a FROM db1.t WHERE id = 1");
    // Another account's default roles need CREATE USER.
    assert_eq!(
        code(&mut u2, "SET DEFAULT ROLE NONE TO root@localhost"),
        1227
    );
    ok(&mut u2, "SET DEFAULT ROLE NONE TO u");
    assert_eq!(
        rows(&mut root, "SHOW GRANTS FOR u USING r_read"),
        vec![
            "GRANT USAGE ON *.* TO `u`@`%`",
            "GRANT SELECT ON `db1`.* TO `u`@`%`",
            "GRANT `r_read`@`%` TO `u`@`%`"
        ]
    );
    ok(&mut root, "DROP ROLE r_read");
    assert_eq!(code(&mut u2, "SELECT a FROM db1.t WHERE id = 1"), 1142);
    assert_eq!(rows(&mut u2, "SELECT CURRENT_ROLE()"), vec!["NONE"]);
    drop((u, u2, root));
    let _ = engine.close(true);
    let _ = std::fs::remove_dir_all(dir);
}

/// `ON `db\_%`.*`: the database name is a LIKE pattern.
#[test]
fn wildcard_database_grants() {
    let (engine, dir, store, mut root) = setup("priv_wildcard");
    for sql in [
        "CREATE DATABASE shop_1",
        "CREATE DATABASE shopx1",
        "CREATE TABLE shop_1.t (id INT PRIMARY KEY)",
        "CREATE TABLE shopx1.t (id INT PRIMARY KEY)",
        "CREATE USER w",
        "GRANT SELECT ON `shop\\_%`.* TO w",
    ] {
        ok(&mut root, sql);
    }
    let mut w = session(&engine, &store, "w", "%");
    ok(&mut w, "SELECT * FROM shop_1.t");
    assert_eq!(code(&mut w, "SELECT * FROM shopx1.t"), 1142);
    ok(&mut w, "USE shop_1");
    // An exact-name grant wins over the pattern (no adding up).
    ok(&mut root, "GRANT INSERT ON shop_1.* TO w");
    assert_eq!(code(&mut w, "SELECT * FROM shop_1.t"), 1142);
    ok(&mut w, "INSERT INTO shop_1.t VALUES (1)");
    assert_eq!(
        rows(&mut root, "SHOW GRANTS FOR w"),
        vec![
            "GRANT USAGE ON *.* TO `w`@`%`",
            "GRANT SELECT ON `shop\\_%`.* TO `w`@`%`",
            "GRANT INSERT ON `shop_1`.* TO `w`@`%`"
        ]
    );
    drop((w, root));
    let _ = engine.close(true);
    let _ = std::fs::remove_dir_all(dir);
}

/// Locking reads need UPDATE, DELETE or LOCK TABLES besides SELECT.
#[test]
fn locking_reads_need_more_than_select() {
    let (engine, dir, store, mut root) = setup("priv_locking");
    ok(&mut root, "CREATE USER l");
    ok(&mut root, "GRANT SELECT ON db1.* TO l");
    let mut l = session(&engine, &store, "l", "%");
    ok(&mut l, "SELECT id FROM db1.t");
    for sql in [
        "SELECT id FROM db1.t FOR UPDATE",
        "SELECT id FROM db1.t FOR SHARE",
        "SELECT id FROM db1.t LOCK IN SHARE MODE",
        "SELECT t.id FROM db1.u JOIN db1.t ON t.id = u.id FOR UPDATE",
    ] {
        let m = msg(&mut l, sql);
        assert!(
            m.starts_with("1142 SELECT with locking clause command denied to user 'l'@'localhost' for table '"),
            "{sql}: {m}"
        );
    }
    // A derived table's table is read without a lock.
    ok(&mut root, "GRANT UPDATE ON db1.u TO l");
    ok(
        &mut l,
        "SELECT u.id FROM db1.u JOIN (SELECT id FROM db1.t) AS x ON x.id = u.id FOR UPDATE",
    );
    ok(&mut root, "GRANT LOCK TABLES ON db1.* TO l");
    ok(&mut l, "SELECT id FROM db1.t FOR UPDATE");
    ok(&mut l, "SELECT id FROM db1.t LOCK IN SHARE MODE");
    drop((l, root));
    let _ = engine.close(true);
    let _ = std::fs::remove_dir_all(dir);
}

/// `KILL expr`: an expression, evaluated; an id nobody has is 1094.
#[test]
fn kill_takes_an_expression() {
    let (engine, dir, _store, mut root) = setup("priv_kill");
    assert_eq!(
        msg(&mut root, "KILL 999999998 + 1"),
        "1094 Unknown thread id: 999999999"
    );
    assert_eq!(
        msg(&mut root, "KILL QUERY 'abc'"),
        "1094 Unknown thread id: 0"
    );
    // Not registered in the process list (no server): unknown too.
    assert_eq!(code(&mut root, "KILL CONNECTION CONNECTION_ID()"), 1094);
    assert_eq!(code(&mut root, "KILL"), 1064);
    drop(root);
    let _ = engine.close(true);
    let _ = std::fs::remove_dir_all(dir);
}

/// ANALYZE TABLE needs SELECT and INSERT on each table (MySQL's
/// sql_admin.cc): either alone is refused with 1142 before any table is
/// analyzed.
#[test]
fn analyze_table_needs_select_and_insert() {
    let (engine, dir, store, mut root) = setup("priv_analyze");
    ok(&mut root, "CREATE USER an");
    ok(&mut root, "GRANT SELECT ON db1.* TO an");
    let mut a = session(&engine, &store, "an", "%");
    assert_eq!(code(&mut a, "ANALYZE TABLE db1.t"), 1142);
    ok(&mut root, "GRANT INSERT ON db1.t TO an");
    let mut a = session(&engine, &store, "an", "%");
    assert_eq!(
        rows(&mut a, "ANALYZE TABLE db1.t"),
        vec!["db1.t|analyze|status|OK"]
    );
    // One table short of INSERT refuses the whole statement.
    assert_eq!(code(&mut a, "ANALYZE TABLE db1.t, db1.u"), 1142);
    assert_eq!(code(&mut a, "ANALYZE TABLE db2.t"), 1142);
    drop(a);
    drop(root);
    drop(engine);
    let _ = std::fs::remove_dir_all(dir);
}

/// Views: CREATE VIEW needs CREATE VIEW and SELECT on what it reads;
/// reading one needs SELECT on the view, and the tables below are
/// checked as its definer (SQL SECURITY DEFINER) or as the reader
/// (INVOKER, 1356 when the reader lacks them); SHOW CREATE VIEW needs
/// SHOW VIEW and SELECT; writing through a view needs the privilege on
/// the view and, in its security context, on the table below.
#[test]
fn views_check_as_definer_or_invoker() {
    let (engine, _dir, _store, mut root) = setup("views");
    ok(&mut root, "CREATE USER maker");
    ok(&mut root, "GRANT SELECT ON db1.t TO maker");
    ok(&mut root, "CREATE USER reader");
    let mut m = session(&engine, &_store, "maker", "%");
    let mut r = session(&engine, &_store, "reader", "%");
    // No CREATE VIEW privilege yet.
    assert_eq!(
        code(&mut m, "CREATE VIEW db1.v AS SELECT id, a FROM db1.t"),
        1142
    );
    ok(&mut root, "GRANT CREATE VIEW ON db1.* TO maker");
    // Needs SELECT on what the view reads.
    assert_eq!(
        code(&mut m, "CREATE VIEW db1.vu AS SELECT id FROM db1.u"),
        1142
    );
    ok(&mut m, "CREATE VIEW db1.v AS SELECT id, a FROM db1.t");
    // Another account as DEFINER needs SUPER.
    assert_eq!(
        msg(&mut m, "CREATE DEFINER = 'root'@'localhost' VIEW db1.v2 AS SELECT id FROM db1.t"),
        "1227 Access denied; you need (at least one of) the SUPER or SET_USER_ID privilege(s) for this operation"
    );
    // Reading needs SELECT on the view itself ...
    assert_eq!(code(&mut r, "SELECT * FROM db1.v"), 1142);
    ok(&mut root, "GRANT SELECT ON db1.v TO reader");
    // ... and no more: the table below is read as the definer.
    assert_eq!(
        rows(&mut r, "SELECT a FROM db1.v ORDER BY id"),
        vec!["10", "20"]
    );
    assert_eq!(code(&mut r, "SELECT * FROM db1.t"), 1142);
    // SQL SECURITY INVOKER: the reader's own privileges, else 1356.
    ok(
        &mut root,
        "CREATE SQL SECURITY INVOKER VIEW db1.vi AS SELECT id, a FROM db1.t",
    );
    ok(&mut root, "GRANT SELECT ON db1.vi TO reader");
    assert_eq!(code(&mut r, "SELECT * FROM db1.vi"), 1356);
    ok(&mut root, "GRANT SELECT ON db1.t TO reader");
    assert_eq!(rows(&mut r, "SELECT count(*) FROM db1.vi"), vec!["2"]);
    // The definer losing its privilege breaks the DEFINER view (1356).
    ok(&mut root, "REVOKE SELECT ON db1.t FROM maker");
    assert_eq!(code(&mut r, "SELECT * FROM db1.v"), 1356);
    ok(&mut root, "GRANT SELECT ON db1.t TO maker");
    // SHOW CREATE VIEW: SHOW VIEW + SELECT.
    assert_eq!(code(&mut r, "SHOW CREATE VIEW db1.v"), 1142);
    ok(&mut root, "GRANT SHOW VIEW ON db1.v TO reader");
    assert_eq!(rows(&mut r, "SHOW CREATE VIEW db1.v").len(), 1);
    // Writing through the view: UPDATE on the view, and on the table
    // below for its definer.
    assert_eq!(code(&mut r, "UPDATE db1.v SET a = 11 WHERE id = 1"), 1142);
    ok(&mut root, "GRANT UPDATE ON db1.v TO reader");
    assert_eq!(code(&mut r, "UPDATE db1.v SET a = 11 WHERE id = 1"), 1356);
    ok(&mut root, "GRANT UPDATE ON db1.t TO maker");
    ok(&mut r, "UPDATE db1.v SET a = 11 WHERE id = 1");
    assert_eq!(
        rows(&mut root, "SELECT a FROM db1.t WHERE id = 1"),
        vec!["11"]
    );
    // A definer that no longer exists: 1449.
    ok(&mut root, "DROP USER maker");
    assert_eq!(code(&mut r, "SELECT * FROM db1.v"), 1449);
    // DROP VIEW needs DROP.
    assert_eq!(code(&mut r, "DROP VIEW db1.v"), 1142);
    ok(&mut root, "DROP VIEW db1.v, db1.vi");
}

/// Multi-table UPDATE/DELETE: UPDATE (or DELETE) on each target, SELECT
/// on the tables only read and on the target columns the statement reads;
/// a DELETE target named by its alias is checked on its table.
#[test]
fn multi_table_update_delete() {
    let (engine, dir, store, mut root) = setup("priv_multi");
    ok(&mut root, "CREATE USER mt");
    let mut m = session(&engine, &store, "mt", "%");
    let upd = "UPDATE db1.t JOIN db1.u ON u.id = t.id SET t.a = t.a + 1";
    assert_eq!(code(&mut m, upd), 1142);
    ok(&mut root, "GRANT UPDATE ON db1.t TO mt");
    // t's columns are read (ON, SET value): SELECT on t too.
    let m1 = msg(&mut m, upd);
    assert!(
        m1.starts_with("1142 SELECT") && m1.contains("'db1.t'"),
        "{m1}"
    );
    ok(&mut root, "GRANT SELECT ON db1.t TO mt");
    // u is only read: SELECT on it.
    let m1 = msg(&mut m, upd);
    assert!(m1.contains("for table 'db1.u'"), "{m1}");
    ok(&mut root, "GRANT SELECT ON db1.u TO mt");
    ok(&mut m, upd);
    // Setting a column of u needs UPDATE on u.
    let m2 = msg(
        &mut m,
        "UPDATE db1.t JOIN db1.u ON u.id = t.id SET u.id = u.id",
    );
    assert!(m2.starts_with("1142 UPDATE command denied"), "{m2}");
    // DELETE through an alias: DELETE on the aliased table only.
    let del = "DELETE a FROM db1.t AS a JOIN db1.u AS b ON b.id = a.id WHERE b.id = 99";
    let m3 = msg(&mut m, del);
    assert!(
        m3.starts_with("1142 DELETE command denied") && m3.contains("'db1.t'"),
        "{m3}"
    );
    ok(&mut root, "GRANT DELETE ON db1.t TO mt");
    ok(&mut m, del);
    drop((m, root));
    let _ = engine.close(true);
    let _ = std::fs::remove_dir_all(dir);
}

/// ALTER TABLE needs ALTER; DROP INDEX needs INDEX (CREATE INDEX too);
/// RENAME TABLE (and ALTER TABLE ... RENAME) needs ALTER and DROP on the
/// old name, CREATE and INSERT on the new one (MySQL 8.0's
/// `check_rename_table`): 1142 naming the first privilege short.
#[test]
fn alter_rename_and_drop_index_privileges() {
    let (engine, dir, store, mut root) = setup("priv_alter");
    ok(&mut root, "CREATE INDEX ka ON db1.t (a)");
    ok(&mut root, "CREATE USER al");
    ok(&mut root, "GRANT SELECT ON db1.* TO al");
    let mut a = session(&engine, &store, "al", "%");
    assert_eq!(
        msg(&mut a, "ALTER TABLE db1.t RENAME COLUMN a TO b"),
        "1142 ALTER command denied to user 'al'@'localhost' for table 'db1.t'"
    );
    assert_eq!(code(&mut a, "DROP INDEX ka ON db1.t"), 1142);
    assert_eq!(code(&mut a, "RENAME TABLE db1.t TO db1.t2"), 1142);
    ok(&mut root, "GRANT ALTER ON db1.t TO al");
    let mut a = session(&engine, &store, "al", "%");
    ok(&mut a, "ALTER TABLE db1.t RENAME COLUMN a TO b");
    ok(&mut a, "ALTER TABLE db1.t RENAME COLUMN b TO a");
    // ALTER alone does not drop an index through DROP INDEX (INDEX), nor rename.
    assert_eq!(code(&mut a, "DROP INDEX ka ON db1.t"), 1142);
    assert_eq!(code(&mut a, "RENAME TABLE db1.t TO db1.t2"), 1142);
    assert_eq!(code(&mut a, "ALTER TABLE db1.t RENAME TO db1.t2"), 1142);
    ok(&mut root, "GRANT INDEX ON db1.t TO al");
    let mut a = session(&engine, &store, "al", "%");
    ok(&mut a, "DROP INDEX ka ON db1.t");
    ok(&mut root, "GRANT DROP ON db1.t TO al");
    ok(&mut root, "GRANT CREATE ON db2.* TO al");
    let mut a = session(&engine, &store, "al", "%");
    // CREATE but not INSERT on the new name.
    assert_eq!(code(&mut a, "RENAME TABLE db1.t TO db2.t2"), 1142);
    ok(&mut root, "GRANT INSERT ON db2.* TO al");
    let mut a = session(&engine, &store, "al", "%");
    ok(&mut a, "RENAME TABLE db1.t TO db2.t2");
    assert_eq!(rows(&mut root, "SELECT COUNT(*) FROM db2.t2"), vec!["2"]);
    drop(a);
    drop(root);
    drop(engine);
    let _ = std::fs::remove_dir_all(dir);
}

/// A temporary table is its creator's without further privileges (ALTER
/// TABLE, CREATE / DROP INDEX on it), but RENAME TABLE never sees one:
/// renaming the permanent table a temporary one shadows needs that
/// table's ALTER and DROP, as in MySQL.
#[test]
fn temporary_tables_change_freely_but_rename_table_checks_the_permanent_one() {
    let (engine, dir, store, mut root) = setup("priv_temp_alter");
    ok(&mut root, "CREATE USER tmpuser");
    ok(
        &mut root,
        "GRANT CREATE TEMPORARY TABLES, CREATE, INSERT, SELECT ON db1.* TO tmpuser",
    );
    let mut u = session(&engine, &store, "tmpuser", "%");
    ok(&mut u, "USE db1");
    ok(
        &mut u,
        "CREATE TEMPORARY TABLE t (id INT PRIMARY KEY, v INT)",
    );
    ok(&mut u, "INSERT INTO t VALUES (1, 5)");
    ok(
        &mut u,
        "ALTER TABLE t ADD COLUMN w INT DEFAULT 2, ADD INDEX kv (v)",
    );
    ok(&mut u, "CREATE INDEX kw ON t (w)");
    ok(&mut u, "DROP INDEX kv ON t");
    // Not the temporary t: the permanent db1.t, which the user may not
    // alter or drop.
    assert_eq!(code(&mut u, "RENAME TABLE t TO t9"), 1142);
    assert_eq!(code(&mut root, "SELECT * FROM db1.t9"), 1146);
    assert_eq!(rows(&mut root, "SELECT COUNT(*) FROM db1.t"), vec!["2"]);
    ok(&mut u, "ALTER TABLE t RENAME t9");
    assert_eq!(rows(&mut u, "SELECT id, v, w FROM t9"), vec!["1|5|2"]);
    u.close();
    drop(u);
    let _ = std::fs::remove_dir_all(dir);
}
