//! # Grant tables: accounts and privileges kept in the `mysql` schema
//!
//! A MySQL server keeps its accounts in ordinary tables of the `mysql`
//! schema, so they survive a restart and `SELECT User, Host FROM
//! mysql.user` lists them. quire does the same with the subset of columns
//! it uses (MySQL's names):
//!
//! ```text
//!   mysql.user          Host, User                       PRIMARY KEY (Host, User)
//!                       Select_priv ... Drop_role_priv   CHAR(1) 'Y'/'N', one per static privilege
//!                       plugin                           'mysql_native_password'
//!                       authentication_string            '*' + 40 hex digits of SHA1(SHA1(pw)), '' = none
//!   mysql.db            Host, Db, User                   PRIMARY KEY (Host, Db, User)
//!                       Select_priv ... Trigger_priv     the database-level privileges
//!   mysql.tables_priv   Host, Db, User, Table_name       PRIMARY KEY (Host, Db, User, Table_name)
//!                       Grantor, Table_priv, Column_priv SET text: 'Select,Insert'
//!   mysql.columns_priv  Host, Db, User, Table_name, Column_name, Column_priv
//!   mysql.global_grants USER, HOST, PRIV, WITH_GRANT_OPTION   dynamic privileges
//!   mysql.role_edges    FROM_HOST, FROM_USER, TO_HOST, TO_USER, WITH_ADMIN_OPTION
//!                       the role FROM_USER@FROM_HOST granted to TO_USER@TO_HOST
//!   mysql.default_roles HOST, USER, DEFAULT_ROLE_HOST, DEFAULT_ROLE_USER
//! ```
//!
//! Columns are found by name, so a row layout with more columns reads the
//! same. The server creates the tables (with `root@localhost`, no
//! password, every privilege) on the first start of a data directory and
//! loads them at every start. A data directory from before privileges
//! were kept (`mysql.user` with only `Super_priv`, `mysql.db` with no
//! privilege columns) is converted on open: its accounts are read, the
//! two tables are rebuilt and the accounts written back (`Super_priv =
//! 'Y'` becoming every privilege, a `mysql.db` row `ALL` on that
//! database). Every account statement writes its rows in one engine
//! transaction *before* the in-memory table changes, under the table's
//! write lock, so the two never disagree after a statement returns: an
//! engine error leaves both as they were and the statement fails.
//!
//! As in MySQL, editing these tables with INSERT/UPDATE/DELETE (which
//! needs the privileges on them) does not change the accounts the server
//! uses until it reloads them with `FLUSH PRIVILEGES` (or restarts).

use std::collections::BTreeMap;
use std::sync::Arc;

use quire_engine::{
    ColumnDef, ColumnType, Engine, EngineError, Isolation, Scan, TableDef, Txn, Value,
};
use quire_sql::privilege::{from_set, to_set, AccountPrivs, Privs, TablePrivs, PRIVILEGES};
use quire_sql::{AuthId, RoleEdge, RoleGraph};

/// One account as the grant tables hold it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct StoredAccount {
    pub stage2: Option<[u8; 20]>,
    pub privs: AccountPrivs,
    /// Plugin, caching_sha2 hash, account options (`login.rs`).
    pub login: crate::login::AccountLogin,
}

/// The grant tables of an open engine.
#[derive(Debug, Clone)]
pub(crate) struct GrantTables {
    engine: Engine,
    user: Arc<TableDef>,
    db: Arc<TableDef>,
    tables_priv: Arc<TableDef>,
    columns_priv: Arc<TableDef>,
    global_grants: Arc<TableDef>,
    role_edges: Arc<TableDef>,
    default_roles: Arc<TableDef>,
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

fn yn(b: bool) -> Value {
    bytes(if b { "Y" } else { "N" })
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

/// The static privileges with a `mysql.user` column, in MySQL's order.
fn user_priv_columns() -> impl Iterator<Item = (&'static str, Privs)> {
    PRIVILEGES
        .iter()
        .filter_map(|p| p.column.map(|c| (c, p.bit)))
}

/// The privileges with a `mysql.db` column.
fn db_priv_columns() -> impl Iterator<Item = (&'static str, Privs)> {
    user_priv_columns().filter(|(_, b)| Privs::DB_ALL.union(Privs::GRANT).has(*b))
}

/// A row's value by column name ("" when the table has no such column).
fn get(def: &TableDef, row: &[Value], name: &str) -> String {
    def.column(name)
        .and_then(|i| row.get(i))
        .map(text)
        .unwrap_or_default()
}

/// A row for `def` from (column, value) pairs; other columns get ''.
fn row_of(def: &TableDef, vals: &[(&str, Value)]) -> Vec<Option<Value>> {
    def.columns
        .iter()
        .map(|c| {
            Some(
                vals.iter()
                    .find(|(n, _)| c.name.eq_ignore_ascii_case(n))
                    .map(|(_, v)| v.clone())
                    .unwrap_or_else(|| bytes(if c.name.ends_with("_priv") { "N" } else { "" })),
            )
        })
        .collect()
}

fn vc(len: u32) -> ColumnType {
    ColumnType::varchar(len)
}

fn user_columns() -> Vec<ColumnDef> {
    let mut v = vec![col("Host", vc(255)), col("User", vc(32))];
    for (c, _) in user_priv_columns() {
        v.push(col(c, ColumnType::char(1)));
    }
    v.push(col("plugin", vc(64)));
    v.push(col("authentication_string", vc(255)));
    v.push(col("ssl_type", vc(9)));
    v.push(col(
        "max_user_connections",
        ColumnType::Int { unsigned: true },
    ));
    v.push(col("password_expired", ColumnType::char(1)));
    v.push(col("account_locked", ColumnType::char(1)));
    v.push(col("User_attributes", vc(1024)));
    v
}

/// The password hash and login facts of a `mysql.user` row (columns by
/// name; a layout without the account-option columns reads as none set).
fn read_login(
    u: &TableDef,
    v: &[Value],
    user: &str,
    host: &str,
) -> Result<(Option<[u8; 20]>, crate::login::AccountLogin), EngineError> {
    use crate::login::{AccountLogin, Plugin};
    let bad = |e: String| {
        EngineError::new(
            1805,
            "HY000",
            format!("mysql.user row '{user}'@'{host}': {e}"),
        )
    };
    let plugin_name = get(u, v, "plugin");
    let plugin = if plugin_name.is_empty() {
        Plugin::Native
    } else {
        Plugin::from_name(&plugin_name)
            .ok_or_else(|| bad(format!("plugin '{plugin_name}' is not loaded")))?
    };
    let auth = get(u, v, "authentication_string");
    let mut login = AccountLogin {
        plugin,
        ..Default::default()
    };
    let stage2 = match plugin {
        Plugin::Native => parse_hash(&auth).map_err(bad)?,
        Plugin::CachingSha2 => {
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
    login.ssl = quire_sql::SslRequire::from_column(&get(u, v, "ssl_type"))
        .filter(|r| *r != quire_sql::SslRequire::None);
    login.max_user_connections = match u.column("max_user_connections").and_then(|i| v.get(i)) {
        Some(Value::UInt(n)) => u32::try_from(*n).unwrap_or(u32::MAX),
        Some(Value::Int(n)) => u32::try_from(*n).unwrap_or(0),
        _ => 0,
    };
    login.password_expired = get(u, v, "password_expired") == "Y";
    login.locked = get(u, v, "account_locked") == "Y";
    login
        .parse_user_attributes(&get(u, v, "User_attributes"))
        .map_err(bad)?;
    Ok((stage2, login))
}

fn db_columns() -> Vec<ColumnDef> {
    let mut v = vec![col("Host", vc(255)), col("Db", vc(64)), col("User", vc(32))];
    for (c, _) in db_priv_columns() {
        v.push(col(c, ColumnType::char(1)));
    }
    v
}

impl GrantTables {
    /// Opens the tables, creating the schema with `root@localhost` (no
    /// password, all privileges) when the data directory has none yet,
    /// and converting the layout of an older data directory.
    pub(crate) fn open(engine: &Engine) -> Result<GrantTables, EngineError> {
        let created = engine.table("mysql", "user").is_err();
        if created {
            engine.create_database("mysql", true)?;
        }
        let legacy = match engine.table("mysql", "user") {
            // Before per-privilege columns, or before the account-option
            // columns: convert.
            Ok(u) if u.column("Select_priv").is_none() || u.column("account_locked").is_none() => {
                Some(Self::read_legacy(engine, &u)?)
            }
            _ => None,
        };
        if legacy.is_some() {
            engine.drop_table("mysql", "user", None)?;
            if engine.table("mysql", "db").is_ok() {
                engine.drop_table("mysql", "db", None)?;
            }
        }
        // Every grant table: in schema mysql, no secondary index, kept
        // if it exists.
        let mk = |name: &str, cols, pk| engine.create_table("mysql", name, cols, pk, vec![], true);
        let user = mk("user", user_columns(), vec![0, 1])?;
        let db = mk("db", db_columns(), vec![0, 1, 2])?;
        let tables_priv = mk(
            "tables_priv",
            vec![
                col("Host", vc(255)),
                col("Db", vc(64)),
                col("User", vc(32)),
                col("Table_name", vc(64)),
                col("Grantor", vc(288)),
                col("Table_priv", vc(255)),
                col("Column_priv", vc(255)),
            ],
            vec![0, 1, 2, 3],
        )?;
        let columns_priv = mk(
            "columns_priv",
            vec![
                col("Host", vc(255)),
                col("Db", vc(64)),
                col("User", vc(32)),
                col("Table_name", vc(64)),
                col("Column_name", vc(64)),
                col("Column_priv", vc(255)),
            ],
            vec![0, 1, 2, 3, 4],
        )?;
        let global_grants = mk(
            "global_grants",
            vec![
                col("USER", vc(32)),
                col("HOST", vc(255)),
                col("PRIV", vc(32)),
                col("WITH_GRANT_OPTION", ColumnType::char(1)),
            ],
            vec![0, 1, 2],
        )?;
        let role_edges = mk(
            "role_edges",
            vec![
                col("FROM_HOST", vc(255)),
                col("FROM_USER", vc(32)),
                col("TO_HOST", vc(255)),
                col("TO_USER", vc(32)),
                col("WITH_ADMIN_OPTION", ColumnType::char(1)),
            ],
            vec![0, 1, 2, 3],
        )?;
        let default_roles = mk(
            "default_roles",
            vec![
                col("HOST", vc(255)),
                col("USER", vc(32)),
                col("DEFAULT_ROLE_HOST", vc(255)),
                col("DEFAULT_ROLE_USER", vc(32)),
            ],
            vec![0, 1, 2, 3],
        )?;
        let t = GrantTables {
            engine: engine.clone(),
            user,
            db,
            tables_priv,
            columns_priv,
            global_grants,
            role_edges,
            default_roles,
        };
        if created {
            let root = StoredAccount {
                stage2: None,
                privs: AccountPrivs::from_legacy(true, &[]),
                login: Default::default(),
            };
            t.put("root", "localhost", &root)?;
        }
        if let Some(accounts) = legacy {
            for ((user, host), a) in accounts {
                t.put(&user, &host, &a)?;
            }
        }
        Ok(t)
    }

    /// The accounts of the layout before privileges were kept
    /// (`Super_priv` = ALL ON *.*, a `mysql.db` row = ALL ON db.*).
    fn read_legacy(
        engine: &Engine,
        user: &TableDef,
    ) -> Result<BTreeMap<(String, String), StoredAccount>, EngineError> {
        let mut tx = engine.begin(Isolation::RepeatableRead, false);
        let mut out = BTreeMap::new();
        for row in tx.scan(user, &Scan::default())? {
            let v = &row.values;
            let (host, name) = (
                get(user, v, "Host").to_ascii_lowercase(),
                get(user, v, "User"),
            );
            let (stage2, login) = read_login(user, v, &name, &host)?;
            let all = get(user, v, "Super_priv") == "Y";
            out.insert(
                (name, host),
                StoredAccount {
                    stage2,
                    privs: AccountPrivs::from_legacy(all, &[]),
                    login,
                },
            );
        }
        if let Ok(db) = engine.table("mysql", "db") {
            for row in tx.scan(&db, &Scan::default())? {
                let v = &row.values;
                let key = (
                    get(&db, v, "User"),
                    get(&db, v, "Host").to_ascii_lowercase(),
                );
                if let Some(a) = out.get_mut(&key) {
                    a.privs.grant_db(&get(&db, v, "Db"), Privs::DB_ALL);
                }
            }
        }
        tx.rollback();
        Ok(out)
    }

    fn begin(&self) -> Txn {
        self.engine.begin(Isolation::RepeatableRead, false)
    }

    /// Every account in the tables.
    pub(crate) fn load(&self) -> Result<BTreeMap<(String, String), StoredAccount>, EngineError> {
        let mut tx = self.begin();
        let mut out = BTreeMap::new();
        let u = &self.user;
        for row in tx.scan(u, &Scan::default())? {
            let v = &row.values;
            let (host, user) = (get(u, v, "Host").to_ascii_lowercase(), get(u, v, "User"));
            let (stage2, login) = read_login(u, v, &user, &host)?;
            let mut privs = AccountPrivs::default();
            for (c, bit) in user_priv_columns() {
                if get(u, v, c).eq_ignore_ascii_case("Y") {
                    privs.global = privs.global.union(bit);
                }
            }
            out.insert(
                (user, host),
                StoredAccount {
                    stage2,
                    privs,
                    login,
                },
            );
        }
        let g = &self.global_grants;
        for row in tx.scan(g, &Scan::default())? {
            let v = &row.values;
            let key = (get(g, v, "USER"), get(g, v, "HOST").to_ascii_lowercase());
            if let (Some(a), Some(p)) = (
                out.get_mut(&key),
                quire_sql::privilege::by_name(&get(g, v, "PRIV")),
            ) {
                if Privs::DYNAMIC.has(p.bit) {
                    a.privs.global = a.privs.global.union(p.bit);
                }
            }
        }
        let d = &self.db;
        for row in tx.scan(d, &Scan::default())? {
            let v = &row.values;
            let key = (get(d, v, "User"), get(d, v, "Host").to_ascii_lowercase());
            if let Some(a) = out.get_mut(&key) {
                let mut p = Privs::NONE;
                for (c, bit) in db_priv_columns() {
                    if get(d, v, c).eq_ignore_ascii_case("Y") {
                        p = p.union(bit);
                    }
                }
                a.privs.grant_db(&get(d, v, "Db"), p);
            }
        }
        let t = &self.tables_priv;
        for row in tx.scan(t, &Scan::default())? {
            let v = &row.values;
            let key = (get(t, v, "User"), get(t, v, "Host").to_ascii_lowercase());
            if let Some(a) = out.get_mut(&key) {
                a.privs.grant_table(
                    &get(t, v, "Db"),
                    &get(t, v, "Table_name"),
                    from_set(&get(t, v, "Table_priv")),
                    &[],
                );
            }
        }
        let c = &self.columns_priv;
        for row in tx.scan(c, &Scan::default())? {
            let v = &row.values;
            let key = (get(c, v, "User"), get(c, v, "Host").to_ascii_lowercase());
            if let Some(a) = out.get_mut(&key) {
                a.privs.grant_table(
                    &get(c, v, "Db"),
                    &get(c, v, "Table_name"),
                    Privs::NONE,
                    &[(
                        get(c, v, "Column_name"),
                        from_set(&get(c, v, "Column_priv")),
                    )],
                );
            }
        }
        tx.rollback();
        Ok(out)
    }

    /// The role graph: `mysql.role_edges` and `mysql.default_roles`.
    pub(crate) fn load_roles(&self) -> Result<RoleGraph, EngineError> {
        let mut tx = self.begin();
        let mut g = RoleGraph::default();
        let e = &self.role_edges;
        for row in tx.scan(e, &Scan::default())? {
            let v = &row.values;
            g.grant(&RoleEdge {
                role: (
                    get(e, v, "FROM_USER"),
                    get(e, v, "FROM_HOST").to_ascii_lowercase(),
                ),
                to: (
                    get(e, v, "TO_USER"),
                    get(e, v, "TO_HOST").to_ascii_lowercase(),
                ),
                admin: get(e, v, "WITH_ADMIN_OPTION").eq_ignore_ascii_case("Y"),
            });
        }
        let d = &self.default_roles;
        let mut defaults: BTreeMap<AuthId, Vec<AuthId>> = BTreeMap::new();
        for row in tx.scan(d, &Scan::default())? {
            let v = &row.values;
            defaults
                .entry((get(d, v, "USER"), get(d, v, "HOST").to_ascii_lowercase()))
                .or_default()
                .push((
                    get(d, v, "DEFAULT_ROLE_USER"),
                    get(d, v, "DEFAULT_ROLE_HOST").to_ascii_lowercase(),
                ));
        }
        for (who, roles) in defaults {
            g.set_defaults(&who, &roles);
        }
        tx.rollback();
        Ok(g)
    }

    /// Deletes the rows of `t` for which `hit(row)` holds.
    fn delete_where(
        tx: &mut Txn,
        t: &TableDef,
        hit: impl Fn(&[Value]) -> bool,
    ) -> Result<(), EngineError> {
        let keys: Vec<Vec<u8>> = tx
            .scan(t, &Scan::default())?
            .into_iter()
            .filter(|r| hit(&r.values))
            .map(|r| r.key)
            .collect();
        for k in keys {
            tx.delete(t, &k)?;
        }
        Ok(())
    }

    /// Whether columns `{p}_USER`/`{p}_HOST` (or `USER`/`HOST` for an
    /// empty `p`) of a row name `who`.
    fn names(t: &TableDef, v: &[Value], p: &str, who: &AuthId) -> bool {
        let (u, h) = if p.is_empty() {
            ("USER".to_string(), "HOST".to_string())
        } else {
            (format!("{p}_USER"), format!("{p}_HOST"))
        };
        get(t, v, &u) == who.0 && get(t, v, &h).eq_ignore_ascii_case(&who.1)
    }

    /// Adds (`grant`) or removes role edges in one transaction; removing
    /// an edge also removes that role from the account's default roles.
    pub(crate) fn change_roles(&self, grant: bool, edges: &[RoleEdge]) -> Result<(), EngineError> {
        let (e, d) = (&self.role_edges, &self.default_roles);
        self.in_txn(|tx| {
            for x in edges {
                Self::delete_where(tx, e, |v| {
                    Self::names(e, v, "FROM", &x.role) && Self::names(e, v, "TO", &x.to)
                })?;
                if grant {
                    tx.insert(
                        e,
                        row_of(
                            e,
                            &[
                                ("FROM_HOST", bytes(&x.role.1)),
                                ("FROM_USER", bytes(&x.role.0)),
                                ("TO_HOST", bytes(&x.to.1)),
                                ("TO_USER", bytes(&x.to.0)),
                                ("WITH_ADMIN_OPTION", yn(x.admin)),
                            ],
                        ),
                    )?;
                } else {
                    Self::delete_where(tx, d, |v| {
                        Self::names(d, v, "", &x.to) && Self::names(d, v, "DEFAULT_ROLE", &x.role)
                    })?;
                }
            }
            Ok(())
        })
    }

    /// Replaces `who`'s rows of `mysql.default_roles`.
    pub(crate) fn set_default_roles(
        &self,
        who: &AuthId,
        roles: &[AuthId],
    ) -> Result<(), EngineError> {
        let d = &self.default_roles;
        self.in_txn(|tx| {
            Self::delete_where(tx, d, |v| Self::names(d, v, "", who))?;
            for r in roles {
                tx.insert(
                    d,
                    row_of(
                        d,
                        &[
                            ("HOST", bytes(&who.1)),
                            ("USER", bytes(&who.0)),
                            ("DEFAULT_ROLE_HOST", bytes(&r.1)),
                            ("DEFAULT_ROLE_USER", bytes(&r.0)),
                        ],
                    ),
                )?;
            }
            Ok(())
        })
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

    /// Writes one account (its rows in every grant table), replacing what
    /// was there.
    pub(crate) fn put(&self, user: &str, host: &str, a: &StoredAccount) -> Result<(), EngineError> {
        self.in_txn(|tx| {
            self.remove_in(tx, user, host)?;
            let mut vals: Vec<(&str, Value)> = vec![("Host", bytes(host)), ("User", bytes(user))];
            for (c, bit) in user_priv_columns() {
                vals.push((c, yn(a.privs.global.has(bit))));
            }
            let l = &a.login;
            vals.push(("plugin", bytes(l.plugin.name())));
            vals.push((
                "authentication_string",
                bytes(&match l.plugin {
                    crate::login::Plugin::Native => hash_text(&a.stage2),
                    crate::login::Plugin::CachingSha2 => l.sha2.clone().unwrap_or_default(),
                }),
            ));
            vals.push(("ssl_type", bytes(l.ssl.map(|r| r.column()).unwrap_or(""))));
            vals.push((
                "max_user_connections",
                Value::UInt(l.max_user_connections.into()),
            ));
            vals.push(("password_expired", yn(l.password_expired)));
            vals.push(("account_locked", yn(l.locked)));
            vals.push(("User_attributes", bytes(&l.user_attributes())));
            tx.insert(&self.user, row_of(&self.user, &vals))?;
            let grant_opt = a.privs.global.has(Privs::GRANT);
            for p in a.privs.global.and(Privs::DYNAMIC).iter() {
                tx.insert(
                    &self.global_grants,
                    row_of(
                        &self.global_grants,
                        &[
                            ("USER", bytes(user)),
                            ("HOST", bytes(host)),
                            ("PRIV", bytes(p.name)),
                            ("WITH_GRANT_OPTION", yn(grant_opt)),
                        ],
                    ),
                )?;
            }
            for (d, privs) in &a.privs.dbs {
                let mut vals: Vec<(&str, Value)> = vec![
                    ("Host", bytes(host)),
                    ("Db", bytes(d)),
                    ("User", bytes(user)),
                ];
                for (c, bit) in db_priv_columns() {
                    vals.push((c, yn(privs.has(bit))));
                }
                tx.insert(&self.db, row_of(&self.db, &vals))?;
            }
            for TablePrivs {
                db,
                table,
                privs,
                columns,
            } in &a.privs.tables
            {
                let col_union = columns.iter().fold(Privs::NONE, |x, (_, p)| x.union(*p));
                tx.insert(
                    &self.tables_priv,
                    row_of(
                        &self.tables_priv,
                        &[
                            ("Host", bytes(host)),
                            ("Db", bytes(db)),
                            ("User", bytes(user)),
                            ("Table_name", bytes(table)),
                            ("Grantor", bytes("")),
                            ("Table_priv", bytes(&to_set(*privs))),
                            ("Column_priv", bytes(&to_set(col_union))),
                        ],
                    ),
                )?;
                for (c, p) in columns {
                    tx.insert(
                        &self.columns_priv,
                        row_of(
                            &self.columns_priv,
                            &[
                                ("Host", bytes(host)),
                                ("Db", bytes(db)),
                                ("User", bytes(user)),
                                ("Table_name", bytes(table)),
                                ("Column_name", bytes(c)),
                                ("Column_priv", bytes(&to_set(*p))),
                            ],
                        ),
                    )?;
                }
            }
            Ok(())
        })
    }

    /// Removes one account, all its grants, and every role edge and
    /// default-role row that names it (as holder or as role).
    pub(crate) fn remove(&self, user: &str, host: &str) -> Result<(), EngineError> {
        let who: AuthId = (user.to_string(), host.to_string());
        let (e, d) = (&self.role_edges, &self.default_roles);
        self.in_txn(|tx| {
            self.remove_in(tx, user, host)?;
            Self::delete_where(tx, e, |v| {
                Self::names(e, v, "FROM", &who) || Self::names(e, v, "TO", &who)
            })?;
            Self::delete_where(tx, d, |v| {
                Self::names(d, v, "", &who) || Self::names(d, v, "DEFAULT_ROLE", &who)
            })
        })
    }

    fn remove_in(&self, tx: &mut Txn, user: &str, host: &str) -> Result<(), EngineError> {
        for t in [
            &self.user,
            &self.db,
            &self.tables_priv,
            &self.columns_priv,
            &self.global_grants,
        ] {
            // Column names match case-insensitively (global_grants has
            // HOST/USER).
            let (hc, uc) = ("Host", "User");
            let keys: Vec<Vec<u8>> = tx
                .scan(t, &Scan::default())?
                .into_iter()
                .filter(|r| {
                    get(t, &r.values, hc).eq_ignore_ascii_case(host)
                        && get(t, &r.values, uc) == user
                })
                .map(|r| r.key)
                .collect();
            for k in keys {
                tx.delete(t, &k)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn engine(name: &str) -> (Engine, std::path::PathBuf) {
        let dir =
            std::env::temp_dir().join(format!("quire-grant-tables-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let cfg = quire_config::Config {
            datadir: dir.join("data"),
            innodb_buffer_pool_size: 16 << 20,
            innodb_redo_log_capacity: 8 << 20,
            log_bin: false,
            ..quire_config::Config::default()
        };
        let vfs: Arc<dyn quire_io::Vfs> = Arc::new(quire_io::OsFs::new(
            cfg.innodb_flush_method,
            cfg.innodb_use_fdatasync,
        ));
        let (e, _) = Engine::open(vfs, &cfg).expect("open engine");
        (e, dir)
    }

    /// A data directory from before privileges were kept: mysql.user with
    /// only Super_priv, mysql.db with no privilege columns. Opening it
    /// rebuilds both tables with the accounts and their grants intact.
    #[test]
    fn legacy_layout_is_converted() {
        let (e, dir) = engine("legacy");
        e.create_database("mysql", true).unwrap();
        let user = e
            .create_table(
                "mysql",
                "user",
                vec![
                    col("Host", vc(255)),
                    col("User", vc(32)),
                    col("plugin", vc(64)),
                    col("authentication_string", vc(41)),
                    col("Super_priv", ColumnType::char(1)),
                ],
                vec![0, 1],
                vec![],
                false,
            )
            .unwrap();
        let db = e
            .create_table(
                "mysql",
                "db",
                vec![col("Host", vc(255)), col("Db", vc(64)), col("User", vc(32))],
                vec![0, 1, 2],
                vec![],
                false,
            )
            .unwrap();
        let pw = hash_text(&Some([7; 20]));
        let mut tx = e.begin(Isolation::RepeatableRead, false);
        for (h, u, sup) in [("localhost", "root", "Y"), ("%", "app", "N")] {
            let a = if u == "app" { pw.as_str() } else { "" };
            tx.insert(
                &user,
                vec![
                    Some(bytes(h)),
                    Some(bytes(u)),
                    Some(bytes("mysql_native_password")),
                    Some(bytes(a)),
                    Some(bytes(sup)),
                ],
            )
            .unwrap();
        }
        tx.insert(
            &db,
            vec![Some(bytes("%")), Some(bytes("shop")), Some(bytes("app"))],
        )
        .unwrap();
        tx.commit().unwrap();

        let t = GrantTables::open(&e).unwrap();
        let all = t.load().unwrap();
        let root = &all[&("root".to_string(), "localhost".to_string())];
        assert!(root.privs.is_all() && root.privs.global.has(Privs::GRANT));
        let app = &all[&("app".to_string(), "%".to_string())];
        assert_eq!(app.stage2, Some([7; 20]));
        assert!(app.privs.global.is_empty());
        assert_eq!(app.privs.dbs, vec![("shop".to_string(), Privs::DB_ALL)]);
        assert!(e
            .table("mysql", "user")
            .unwrap()
            .column("Select_priv")
            .is_some());
        // Opening again changes nothing.
        let again = GrantTables::open(&e).unwrap().load().unwrap();
        assert_eq!(again, all);
        // Every level round-trips through the tables.
        let mut p = AccountPrivs {
            global: Privs::RELOAD.union(Privs::BINLOG_ADMIN).union(Privs::GRANT),
            ..Default::default()
        };
        p.grant_db("shop", Privs::SELECT.union(Privs::GRANT));
        p.grant_table(
            "shop",
            "t",
            Privs::DELETE.union(Privs::CREATE_VIEW),
            &[("a".into(), Privs::SELECT.union(Privs::UPDATE))],
        );
        p.grant_table("shop", "u", Privs::NONE, &[("b".into(), Privs::INSERT)]);
        let acct = StoredAccount {
            stage2: None,
            privs: p,
            login: Default::default(),
        };
        t.put("app", "%", &acct).unwrap();
        let loaded = t.load().unwrap();
        assert_eq!(loaded[&("app".to_string(), "%".to_string())], acct);
        t.remove("app", "%").unwrap();
        assert!(!t
            .load()
            .unwrap()
            .contains_key(&("app".to_string(), "%".to_string())));
        let _ = e.close(true);
        let _ = std::fs::remove_dir_all(dir);
    }

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
