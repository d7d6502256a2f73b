//! # Grant tables: accounts kept in `mysql.user` and `mysql.db`
//!
//! A MySQL server keeps its accounts in ordinary tables of the `mysql`
//! schema, so they survive a restart and `SELECT User, Host FROM
//! mysql.user` lists them. quire does the same with the subset of columns
//! it uses (MySQL's names):
//!
//! ```text
//!   mysql.user  Host VARCHAR(255), User VARCHAR(32)          PRIMARY KEY (Host, User)
//!               plugin VARCHAR(64)                 'mysql_native_password'
//!               authentication_string VARCHAR(41)  '*' + 40 hex digits of SHA1(SHA1(pw)), '' = none
//!               Super_priv CHAR(1)                 'Y' = ALL PRIVILEGES ON *.*, else 'N'
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
//! As in MySQL, editing these tables with INSERT/UPDATE/DELETE does not
//! change the accounts the server uses until it reloads them with
//! `FLUSH PRIVILEGES` (or restarts).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use quire_engine::{
    ColumnDef, ColumnType, Engine, EngineError, Isolation, Scan, TableDef, Txn, Value,
};

/// One account as the grant tables hold it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct StoredAccount {
    pub stage2: Option<[u8; 20]>,
    pub all_privileges: bool,
    pub databases: BTreeSet<String>,
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
        let user = engine.create_table(
            "mysql",
            "user",
            vec![
                col("Host", ColumnType::Varchar { len: 255 }),
                col("User", ColumnType::Varchar { len: 32 }),
                col("plugin", ColumnType::Varchar { len: 64 }),
                col("authentication_string", ColumnType::Varchar { len: 41 }),
                col("Super_priv", ColumnType::Char { len: 1 }),
            ],
            vec![0, 1],
            vec![],
            true,
        )?;
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
            };
            t.put("root", "localhost", &root)?;
        }
        Ok(t)
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
            let stage2 = parse_hash(&text(&v[3])).map_err(|e| {
                EngineError::new(
                    1805,
                    "HY000",
                    format!("mysql.user row '{user}'@'{host}': {e}"),
                )
            })?;
            out.insert(
                (user, host),
                StoredAccount {
                    stage2,
                    all_privileges: text(&v[4]) == "Y",
                    databases: BTreeSet::new(),
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
                    Some(bytes("mysql_native_password")),
                    Some(bytes(&hash_text(&a.stage2))),
                    Some(bytes(if a.all_privileges { "Y" } else { "N" })),
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
