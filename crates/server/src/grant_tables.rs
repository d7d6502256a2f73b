//! # Grant tables: accounts kept in `mysql.user` and `mysql.db`
//!
//! A MySQL server keeps its accounts in ordinary tables of the `mysql`
//! schema, so they survive a restart and `SELECT User, Host FROM
//! mysql.user` lists them. quire does the same with the subset of columns
//! it uses (MySQL's names):
//!
//! ```text
//!   mysql.user  Host VARCHAR(255), User VARCHAR(32)          PRIMARY KEY (Host, User)
//!               plugin VARCHAR(64)                 'mysql_native_password' | 'caching_sha2_password'
//!               authentication_string VARCHAR(255) native: '*' + 40 hex digits of SHA1(SHA1(pw));
//!                                                  caching_sha2: '$A$005$' salt hash (sha2_password.rs);
//!                                                  '' = no password
//!               Super_priv CHAR(1)                 'Y' = ALL PRIVILEGES ON *.*, else 'N'
//!               ssl_type VARCHAR(9)                '' | 'ANY' (REQUIRE SSL) | 'X509'
//!               max_user_connections INT UNSIGNED  WITH MAX_USER_CONNECTIONS (0 = none)
//!               password_expired CHAR(1)           'Y' after PASSWORD EXPIRE
//!               account_locked CHAR(1)             'Y' after ACCOUNT LOCK
//!               User_attributes VARCHAR(1024)      JSON: Password_locking (login.rs), '' = NULL
//!   mysql.db    Host VARCHAR(255), Db VARCHAR(64), User VARCHAR(32)
//!                                                  PRIMARY KEY (Host, Db, User)
//!                                                  one row per GRANT ALL ON db.*
//! ```
//!
//! The server creates them (with `root@localhost`, no password) on the
//! first start of a data directory and loads them at every start. Every
//! account statement writes its rows in one engine transaction *before*
//! the in-memory table changes, under the table's write lock, so the two
//! never disagree after a statement returns: an engine error leaves both
//! as they were and the statement fails.
//!
//! A data directory made before the account-option columns existed gets
//! them on its first start with this version (the rows are copied into
//! the new layout with MySQL's defaults).
//!
//! As in MySQL, editing these tables with INSERT/UPDATE/DELETE does not
//! change the accounts the server uses until it reloads them with
//! `FLUSH PRIVILEGES` (or restarts).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use quire_engine::{
    ColumnDef, ColumnType, Engine, EngineError, Isolation, Scan, TableDef, Txn, Value,
};

/// Columns of `mysql.user` in this version.
const USER_COLUMNS: usize = 10;

/// One account as the grant tables hold it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct StoredAccount {
    pub stage2: Option<[u8; 20]>,
    pub all_privileges: bool,
    pub databases: BTreeSet<String>,
    /// Plugin, caching_sha2 hash, account options (`login.rs`).
    pub login: crate::login::AccountLogin,
}

/// The two tables of an open engine.
#[derive(Debug, Clone)]
pub(crate) struct GrantTables {
    engine: Engine,
    user: Arc<TableDef>,
    db: Arc<TableDef>,
}

fn col(name: &str, ty: ColumnType) -> ColumnDef {
    ColumnDef::new(name, ty, false)
}

fn text(v: &Value) -> String {
    match v {
        Value::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
        other => format!("{other:?}"),
    }
}

fn bytes(s: &str) -> Value {
    Value::Bytes(s.as_bytes().to_vec())
}

/// `*` + 40 upper-case hex digits, MySQL's form of a native password hash.
pub(crate) fn hash_text(stage2: &Option<[u8; 20]>) -> String {
    match stage2 {
        None => String::new(),
        Some(h) => {
            let mut s = String::with_capacity(41);
            s.push('*');
            for b in h {
                s.push_str(&format!("{b:02X}"));
            }
            s
        }
    }
}

/// Parses [`hash_text`]'s form back; `Err` names what is wrong.
fn parse_hash(s: &str) -> Result<Option<[u8; 20]>, String> {
    if s.is_empty() {
        return Ok(None);
    }
    let hex = s
        .strip_prefix('*')
        .filter(|h| h.len() == 40)
        .ok_or_else(|| format!("authentication_string '{s}' is not '*' + 40 hex digits"))?;
    let mut out = [0u8; 20];
    for (i, o) in out.iter_mut().enumerate() {
        *o = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16)
            .map_err(|_| format!("authentication_string '{s}' is not hex"))?;
    }
    Ok(Some(out))
}

impl GrantTables {
    /// Opens the tables, creating the schema with `root@localhost` (no
    /// password, all privileges) when the data directory has none yet.
    pub(crate) fn open(engine: &Engine) -> Result<GrantTables, EngineError> {
        let created = engine.table("mysql", "user").is_err();
        if created {
            engine.create_database("mysql", true)?;
        }
        let user_cols = || {
            vec![
                col("Host", ColumnType::Varchar { len: 255 }),
                col("User", ColumnType::Varchar { len: 32 }),
                col("plugin", ColumnType::Varchar { len: 64 }),
                col("authentication_string", ColumnType::Varchar { len: 255 }),
                col("Super_priv", ColumnType::Char { len: 1 }),
                col("ssl_type", ColumnType::Varchar { len: 9 }),
                col("max_user_connections", ColumnType::Int { unsigned: true }),
                col("password_expired", ColumnType::Char { len: 1 }),
                col("account_locked", ColumnType::Char { len: 1 }),
                col("User_attributes", ColumnType::Varchar { len: 1024 }),
            ]
        };
        let mut user =
            engine.create_table("mysql", "user", user_cols(), vec![0, 1], vec![], true)?;
        if user.columns.len() < USER_COLUMNS {
            user = Self::upgrade_user_table(engine, &user, user_cols())?;
        }
        let db = engine.create_table(
            "mysql",
            "db",
            vec![
                col("Host", ColumnType::Varchar { len: 255 }),
                col("Db", ColumnType::Varchar { len: 64 }),
                col("User", ColumnType::Varchar { len: 32 }),
            ],
            vec![0, 1, 2],
            vec![],
            true,
        )?;
        let t = GrantTables {
            engine: engine.clone(),
            user,
            db,
        };
        if created {
            let root = StoredAccount {
                stage2: None,
                all_privileges: true,
                databases: BTreeSet::new(),
                login: Default::default(),
            };
            t.put("root", "localhost", &root)?;
        }
        Ok(t)
    }

    /// Rewrites a `mysql.user` of an older layout (fewer columns) into
    /// the current one, keeping every account.
    fn upgrade_user_table(
        engine: &Engine,
        old: &TableDef,
        cols: Vec<ColumnDef>,
    ) -> Result<Arc<TableDef>, EngineError> {
        let mut tx = engine.begin(Isolation::RepeatableRead, false);
        let rows: Vec<Vec<Value>> = tx
            .scan(old, &Scan::default())?
            .into_iter()
            .map(|r| r.values)
            .collect();
        tx.rollback();
        engine.drop_table("mysql", "user")?;
        let new = engine.create_table("mysql", "user", cols, vec![0, 1], vec![], false)?;
        let mut tx = engine.begin(Isolation::RepeatableRead, false);
        for r in rows {
            let mut v: Vec<Option<Value>> = r.into_iter().map(Some).collect();
            v.resize(old.columns.len().min(5), None);
            v.extend([
                Some(bytes("")),
                Some(Value::UInt(0)),
                Some(bytes("N")),
                Some(bytes("N")),
                Some(bytes("")),
            ]);
            if let Err(e) = tx.insert(&new, v) {
                tx.rollback();
                return Err(e);
            }
        }
        tx.commit()?;
        Ok(new)
    }

    fn begin(&self) -> Txn {
        self.engine.begin(Isolation::RepeatableRead, false)
    }

    /// Every account in the tables.
    pub(crate) fn load(&self) -> Result<BTreeMap<(String, String), StoredAccount>, EngineError> {
        let mut tx = self.begin();
        let mut out = BTreeMap::new();
        for row in tx.scan(&self.user, &Scan::default())? {
            let v = &row.values;
            let (host, user) = (text(&v[0]).to_ascii_lowercase(), text(&v[1]));
            let bad = |e: String| {
                EngineError::new(
                    1805,
                    "HY000",
                    format!("mysql.user row '{user}'@'{host}': {e}"),
                )
            };
            let plugin_name = text(&v[2]);
            let plugin = crate::login::Plugin::from_name(&plugin_name)
                .ok_or_else(|| bad(format!("plugin '{plugin_name}' is not loaded")))?;
            let auth = text(&v[3]);
            let mut login = crate::login::AccountLogin {
                plugin,
                ..Default::default()
            };
            let stage2 = match plugin {
                crate::login::Plugin::Native => parse_hash(&auth).map_err(bad)?,
                crate::login::Plugin::CachingSha2 => {
                    if !auth.is_empty() {
                        if !crate::sha2_password::is_valid_stored(&auth) {
                            return Err(bad(format!(
                                "authentication_string is not a caching_sha2_password hash ({} bytes)",
                                auth.len()
                            )));
                        }
                        login.sha2 = Some(auth);
                    }
                    None
                }
            };
            if v.len() >= USER_COLUMNS {
                login.ssl = quire_sql::SslRequire::from_column(&text(&v[5]))
                    .filter(|r| *r != quire_sql::SslRequire::None);
                login.max_user_connections = match &v[6] {
                    Value::UInt(n) => u32::try_from(*n).unwrap_or(u32::MAX),
                    Value::Int(n) => u32::try_from(*n).unwrap_or(0),
                    _ => 0,
                };
                login.password_expired = text(&v[7]) == "Y";
                login.locked = text(&v[8]) == "Y";
                login.parse_user_attributes(&text(&v[9])).map_err(bad)?;
            }
            out.insert(
                (user, host),
                StoredAccount {
                    stage2,
                    all_privileges: text(&v[4]) == "Y",
                    databases: BTreeSet::new(),
                    login,
                },
            );
        }
        for row in tx.scan(&self.db, &Scan::default())? {
            let v = &row.values;
            let key = (text(&v[2]), text(&v[0]).to_ascii_lowercase());
            if let Some(a) = out.get_mut(&key) {
                a.databases.insert(text(&v[1]));
            }
        }
        tx.rollback();
        Ok(out)
    }

    /// Runs `f` in one transaction: committed if it succeeds, rolled back
    /// if not.
    fn in_txn(
        &self,
        f: impl FnOnce(&mut Txn) -> Result<(), EngineError>,
    ) -> Result<(), EngineError> {
        let mut tx = self.begin();
        match f(&mut tx) {
            Ok(()) => tx.commit().map(|_| ()),
            Err(e) => {
                tx.rollback();
                Err(e)
            }
        }
    }

    /// Writes one account (its `mysql.user` row and its `mysql.db` rows),
    /// replacing what was there.
    pub(crate) fn put(&self, user: &str, host: &str, a: &StoredAccount) -> Result<(), EngineError> {
        self.in_txn(|tx| {
            Self::remove_in(tx, &self.user, &self.db, user, host)?;
            tx.insert(
                &self.user,
                vec![
                    Some(bytes(host)),
                    Some(bytes(user)),
                    Some(bytes(a.login.plugin.name())),
                    Some(bytes(&match a.login.plugin {
                        crate::login::Plugin::Native => hash_text(&a.stage2),
                        crate::login::Plugin::CachingSha2 => {
                            a.login.sha2.clone().unwrap_or_default()
                        }
                    })),
                    Some(bytes(if a.all_privileges { "Y" } else { "N" })),
                    Some(bytes(a.login.ssl.map(|r| r.column()).unwrap_or(""))),
                    Some(Value::UInt(a.login.max_user_connections.into())),
                    Some(bytes(if a.login.password_expired { "Y" } else { "N" })),
                    Some(bytes(if a.login.locked { "Y" } else { "N" })),
                    Some(bytes(&a.login.user_attributes())),
                ],
            )?;
            for d in &a.databases {
                tx.insert(
                    &self.db,
                    vec![Some(bytes(host)), Some(bytes(d)), Some(bytes(user))],
                )?;
            }
            Ok(())
        })
    }

    /// Removes one account and its database grants.
    pub(crate) fn remove(&self, user: &str, host: &str) -> Result<(), EngineError> {
        self.in_txn(|tx| Self::remove_in(tx, &self.user, &self.db, user, host))
    }

    fn remove_in(
        tx: &mut Txn,
        user_t: &TableDef,
        db_t: &TableDef,
        user: &str,
        host: &str,
    ) -> Result<(), EngineError> {
        let k = Txn::encode_pk(user_t, &[bytes(host), bytes(user)])?;
        tx.delete(user_t, &k)?;
        let grants: Vec<Vec<u8>> = tx
            .scan(db_t, &Scan::default())?
            .into_iter()
            .filter(|r| text(&r.values[0]) == host && text(&r.values[2]) == user)
            .map(|r| r.key)
            .collect();
        for k in grants {
            tx.delete(db_t, &k)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_text_round_trips() {
        let h = Some([0xAB; 20]);
        let s = hash_text(&h);
        assert_eq!(s.len(), 41);
        assert!(s.starts_with("*ABAB"));
        assert_eq!(parse_hash(&s), Ok(h));
        assert_eq!(parse_hash(""), Ok(None));
        assert!(parse_hash("*12").is_err());
        assert!(parse_hash(&format!("*{}", "G".repeat(40))).is_err());
    }
}
