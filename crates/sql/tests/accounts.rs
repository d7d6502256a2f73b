//! Account statements against an in-memory [`AccountStore`] (the server
//! installs its own; this one records passwords in clear for checking).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use quire_engine::EngineError;
use quire_engine::Value;
use quire_sql::{AccountGrants, AccountStore, Output, Session};

mod common;
use common::open_engine;

type Table = BTreeMap<(String, String), (String, AccountGrants)>;

#[derive(Default)]
struct MemStore(Mutex<Table>);

impl MemStore {
    fn with_root() -> MemStore {
        let s = MemStore::default();
        s.0.lock().unwrap().insert(
            ("root".into(), "localhost".into()),
            (
                String::new(),
                AccountGrants {
                    all_privileges: true,
                    databases: Vec::new(),
                },
            ),
        );
        s
    }
    fn password(&self, u: &str, h: &str) -> Option<String> {
        self.0
            .lock()
            .unwrap()
            .get(&(u.to_string(), h.to_string()))
            .map(|a| a.0.clone())
    }
}

impl MemStore {
    fn create_user_b(&self, user: &str, host: &str, password: &str) -> bool {
        let mut t = self.0.lock().unwrap();
        let k = (user.to_string(), host.to_string());
        if t.contains_key(&k) {
            return false;
        }
        t.insert(k, (password.to_string(), AccountGrants::default()));
        true
    }
    fn drop_user_b(&self, user: &str, host: &str) -> bool {
        self.0
            .lock()
            .unwrap()
            .remove(&(user.to_string(), host.to_string()))
            .is_some()
    }
    fn set_password_b(&self, user: &str, host: &str, password: &str) -> bool {
        let mut t = self.0.lock().unwrap();
        match t.get_mut(&(user.to_string(), host.to_string())) {
            Some(a) => {
                a.0 = password.to_string();
                true
            }
            None => false,
        }
    }
    fn grant_all_b(&self, user: &str, host: &str, db: Option<&str>) -> bool {
        let mut t = self.0.lock().unwrap();
        let Some(a) = t.get_mut(&(user.to_string(), host.to_string())) else {
            return false;
        };
        match db {
            None => a.1.all_privileges = true,
            Some(d) => {
                if !a.1.databases.iter().any(|x| x == d) {
                    a.1.databases.push(d.to_string());
                    a.1.databases.sort();
                }
            }
        }
        true
    }
}

impl AccountStore for MemStore {
    fn create_user(&self, user: &str, host: &str, password: &str) -> Result<bool, EngineError> {
        Ok(self.create_user_b(user, host, password))
    }
    fn drop_user(&self, user: &str, host: &str) -> Result<bool, EngineError> {
        Ok(self.drop_user_b(user, host))
    }
    fn set_password(&self, user: &str, host: &str, password: &str) -> Result<bool, EngineError> {
        Ok(self.set_password_b(user, host, password))
    }
    fn grant_all(&self, user: &str, host: &str, db: Option<&str>) -> Result<bool, EngineError> {
        Ok(self.grant_all_b(user, host, db))
    }
    fn grants(&self, user: &str, host: &str) -> Option<AccountGrants> {
        self.0
            .lock()
            .unwrap()
            .get(&(user.to_string(), host.to_string()))
            .map(|a| a.1.clone())
    }
    fn list(&self) -> Vec<(String, String)> {
        self.0.lock().unwrap().keys().cloned().collect()
    }
    /// Keeps what the old model can hold (ALL on *.*, ALL on db.*).
    fn set_privileges(
        &self,
        user: &str,
        host: &str,
        privs: &quire_sql::AccountPrivs,
    ) -> Result<bool, EngineError> {
        let mut t = self.0.lock().unwrap();
        let Some(a) = t.get_mut(&(user.to_string(), host.to_string())) else {
            return Ok(false);
        };
        a.1.all_privileges = privs.is_all();
        a.1.databases = privs.all_dbs();
        Ok(true)
    }
}

fn ok(s: &mut Session, sql: &str) -> u16 {
    match s.execute(sql) {
        Ok(Output::Done { warnings, .. }) => warnings,
        other => panic!("{sql}: {other:?}"),
    }
}

fn err(s: &mut Session, sql: &str) -> (u16, String) {
    match s.execute(sql) {
        Err(e) => (e.code, e.message),
        other => panic!("{sql}: expected an error, got {other:?}"),
    }
}

fn rows(s: &mut Session, sql: &str) -> Vec<Vec<String>> {
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
                    .collect()
            })
            .collect(),
        other => panic!("{sql}: {other:?}"),
    }
}

fn session(
    engine: &quire_engine::Engine,
    store: &Arc<MemStore>,
    user: &str,
    host: &str,
) -> Session {
    let mut s = Session::new(engine.clone(), user);
    s.set_account_store(store.clone());
    s.set_identity(host, "localhost");
    s
}

#[test]
fn account_statements() {
    let (engine, dir) = open_engine("accounts");
    let store = Arc::new(MemStore::with_root());
    let mut root = session(&engine, &store, "root", "localhost");

    assert_eq!(
        rows(&mut root, "SELECT CURRENT_USER(), USER(), CURRENT_USER"),
        vec![vec![
            "root@localhost".to_string(),
            "root@localhost".into(),
            "root@localhost".into()
        ]]
    );

    // CREATE USER: one Note (accounts are in memory), then 1396 on repeat.
    assert_eq!(
        ok(&mut root, "CREATE USER 'app'@'%' IDENTIFIED BY 'pw1'"),
        1
    );
    assert_eq!(store.password("app", "%").as_deref(), Some("pw1"));
    let w = rows(&mut root, "SHOW WARNINGS");
    assert_eq!(w.len(), 1);
    assert_eq!(w[0][0], "Note");
    assert!(w[0][2].contains("in memory"), "{w:?}");
    assert_eq!(
        err(&mut root, "CREATE USER 'app'@'%' IDENTIFIED BY 'x'"),
        (
            1396,
            "Operation CREATE USER failed for 'app'@'%'".to_string()
        )
    );
    // All or nothing: 'b' is not created because 'app' exists.
    assert_eq!(err(&mut root, "CREATE USER b@localhost, app").0, 1396,);
    assert!(store.grants("b", "localhost").is_none());
    // IF NOT EXISTS: a Note 3163 instead of the error.
    ok(
        &mut root,
        "CREATE USER IF NOT EXISTS app IDENTIFIED BY 'other'",
    );
    assert_eq!(store.password("app", "%").as_deref(), Some("pw1"));
    assert_eq!(rows(&mut root, "SHOW WARNINGS")[0][1], "3163");

    // mysql.user lists the accounts.
    assert_eq!(
        rows(
            &mut root,
            "SELECT User, Host FROM mysql.user WHERE User = 'app'"
        ),
        vec![vec!["app".to_string(), "%".to_string()]]
    );

    // GRANT, SHOW GRANTS.
    ok(&mut root, "GRANT ALL ON sbtest.* TO 'app'@'%'");
    assert_eq!(
        rows(&mut root, "SHOW GRANTS FOR app"),
        vec![
            vec!["GRANT USAGE ON *.* TO `app`@`%`".to_string()],
            vec!["GRANT ALL PRIVILEGES ON `sbtest`.* TO `app`@`%`".to_string()]
        ]
    );
    assert_eq!(
        err(&mut root, "GRANT ALL PRIVILEGES ON *.* TO nobody").0,
        1410
    );
    // Roles: r1 does not exist (3523, as MySQL); a store without roles
    // refuses SET ROLE ... with 1235 only when it has to change a graph.
    assert_eq!(err(&mut root, "GRANT r1 TO app").0, 3523);

    // A user without global privileges cannot manage accounts but may
    // change its own password and see its own grants.
    let mut app = session(&engine, &store, "app", "%");
    assert_eq!(
        rows(&mut app, "SELECT CURRENT_USER(), USER()"),
        vec![vec!["app@%".to_string(), "app@localhost".to_string()]]
    );
    assert_eq!(err(&mut app, "CREATE USER x").0, 1227);
    assert_eq!(err(&mut app, "DROP USER root@localhost").0, 1227);
    assert_eq!(err(&mut app, "GRANT ALL ON *.* TO app").0, 1045);
    assert_eq!(
        err(&mut app, "SET PASSWORD FOR root@localhost = 'x'").0,
        1227
    );
    assert_eq!(err(&mut app, "SHOW GRANTS FOR root@localhost").0, 1044);
    ok(&mut app, "SET PASSWORD = 'pw2'");
    assert_eq!(store.password("app", "%").as_deref(), Some("pw2"));
    ok(&mut app, "ALTER USER CURRENT_USER() IDENTIFIED BY 'pw3'");
    assert_eq!(store.password("app", "%").as_deref(), Some("pw3"));
    assert_eq!(rows(&mut app, "SHOW GRANTS").len(), 2);

    // ALTER USER / SET PASSWORD by the administrator.
    ok(
        &mut root,
        "ALTER USER 'app'@'%' IDENTIFIED WITH mysql_native_password BY 'pw4'",
    );
    assert_eq!(store.password("app", "%").as_deref(), Some("pw4"));
    ok(&mut root, "SET PASSWORD FOR app = PASSWORD('pw5')");
    assert_eq!(store.password("app", "%").as_deref(), Some("pw5"));
    assert_eq!(
        err(&mut root, "ALTER USER ghost IDENTIFIED BY 'x'"),
        (
            1396,
            "Operation ALTER USER failed for 'ghost'@'%'".to_string()
        )
    );
    assert_eq!(err(&mut root, "SET PASSWORD FOR ghost = 'x'").0, 1133);

    // GRANT ALL ON *.* makes app an administrator.
    ok(
        &mut root,
        "GRANT ALL PRIVILEGES ON *.* TO app WITH GRANT OPTION",
    );
    ok(&mut app, "CREATE USER tmp@localhost");
    ok(&mut app, "DROP USER tmp@localhost");

    // DROP USER.
    assert_eq!(
        err(&mut root, "DROP USER ghost@localhost"),
        (
            1396,
            "Operation DROP USER failed for 'ghost'@'localhost'".to_string()
        )
    );
    ok(&mut root, "DROP USER IF EXISTS ghost@localhost");
    assert_eq!(rows(&mut root, "SHOW WARNINGS")[0][1], "3162");
    ok(&mut root, "DROP USER 'app'@'%'");
    assert!(store.grants("app", "%").is_none());

    // Account statements commit an open transaction (implicit commit).
    ok(&mut root, "CREATE DATABASE d");
    ok(&mut root, "USE d");
    ok(&mut root, "CREATE TABLE t (id INT PRIMARY KEY)");
    ok(&mut root, "BEGIN");
    ok(&mut root, "INSERT INTO t VALUES (1)");
    assert!(root.in_transaction());
    ok(&mut root, "CREATE USER x");
    assert!(!root.in_transaction());
    ok(&mut root, "ROLLBACK");
    assert_eq!(
        rows(&mut root, "SELECT id FROM t"),
        vec![vec!["1".to_string()]]
    );

    // Without a store (an embedded session): 1235, not a panic.
    let mut bare = Session::new(engine.clone(), "root");
    assert_eq!(err(&mut bare, "CREATE USER y").0, 1235);
    assert_eq!(
        rows(&mut bare, "SELECT CURRENT_USER()"),
        vec![vec!["root@%".to_string()]]
    );

    drop((root, app, bare));
    let _ = engine.close(true);
    let _ = std::fs::remove_dir_all(dir);
}
