//! # Privileges: MySQL 8.0's model, resolved once per statement
//!
//! An account holds privileges at four levels, as in MySQL's grant tables:
//!
//! ```text
//!   level     granted with              kept in (quire serve)
//!   global    GRANT p ON *.*            mysql.user  (one Y/N column per static privilege)
//!                                       mysql.global_grants (dynamic privileges)
//!   database  GRANT p ON db.*           mysql.db    (one Y/N column per privilege)
//!   table     GRANT p ON db.t           mysql.tables_priv  Table_priv  SET('Select',...)
//!   column    GRANT p (c1, c2) ON db.t  mysql.columns_priv Column_priv SET('Select',...)
//! ```
//!
//! A privilege needed on a table is granted if any level holds it: the
//! effective set is `global | db | table` (and, for one column, `| column`),
//! `db` being the one `ON name.*` grant whose name (a LIKE pattern, `\_`
//! for a literal `_`) matches best.
//! Privileges are bits of a [`Privs`] word; the static ones in MySQL's
//! order (the order `SHOW GRANTS` prints them), then the four dynamic
//! privileges quire checks (`SYSTEM_VARIABLES_ADMIN`, `CONNECTION_ADMIN`,
//! `BINLOG_ADMIN`, `ROLE_ADMIN`); `SUPER` implies those four, as in MySQL.
//!
//! ## Where the check happens
//!
//! ```text
//!   statement ──parse──▶ AST ──authorize.rs──▶ (db, table, privilege, columns) set
//!                                                   │ checked against
//!   AccountStore ──privilege_version() (one atomic load) ──▶ Session's cached
//!        │ GRANT / REVOKE / FLUSH PRIVILEGES bump the version       Arc<AccountPrivs>
//!        └─ privileges(user, host) (read lock; only when the version moved)
//! ```
//!
//! Each statement is checked once, before it runs, from the set of tables
//! (and columns) it touches; nothing is checked per row. The session keeps
//! the account's [`AccountPrivs`] behind an `Arc` with the store's version
//! number; a statement costs one atomic load and a comparison unless
//! GRANT, REVOKE, FLUSH PRIVILEGES or an account change moved the version,
//! and then one read of the store. The check sits at statement level on
//! purpose: the planned query engine (bind → plan) can hand the bound
//! tables and columns to the same [`Checker`] calls.
//!
//! Column privileges are resolved by name: for a table the account can
//! reach only through column grants, every column the statement names
//! (qualified by that table or its alias, or unqualified) and every column
//! behind a `*` must be granted.
//!
//! ## Where this differs from MySQL
//!
//! * Column resolution is by name, not by binding: an unqualified column
//!   name that exists in a column-granted table counts as a read of it
//!   even when another table of the statement supplies it.
//! * Database names of `ON db.*` grants are LIKE patterns and one grant
//!   applies per database ([`AccountPrivs::db`]), as in MySQL; ties
//!   between equally specific patterns break by name, not row order.
//!   There are no partial revokes; of the dynamic privileges only
//!   `SYSTEM_VARIABLES_ADMIN`, `CONNECTION_ADMIN`, `BINLOG_ADMIN` and
//!   `ROLE_ADMIN` exist.
//! * Roles (`account/role.rs`): the session's [`AccountPrivs`] is the
//!   account's merged with its active roles' (and nested roles'), cached
//!   like the account's own and recomputed when the store's version moves
//!   or SET ROLE changes the active set.
//! * Privileges that guard features quire lacks (FILE, EXECUTE, EVENT,
//!   TRIGGER, CREATE ROUTINE, ...) are granted, stored and shown, and
//!   guard nothing.
//! * `information_schema` and `performance_schema` are readable by every
//!   account (quire serves only server-wide status and variables there).

use std::sync::Arc;

use quire_engine::EngineError;

use crate::SqlResult;

/// A set of privileges (one bit each).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash, PartialOrd, Ord)]
pub struct Privs(pub u64);

impl Privs {
    pub const NONE: Privs = Privs(0);
    pub const SELECT: Privs = Privs(1 << 0);
    pub const INSERT: Privs = Privs(1 << 1);
    pub const UPDATE: Privs = Privs(1 << 2);
    pub const DELETE: Privs = Privs(1 << 3);
    pub const CREATE: Privs = Privs(1 << 4);
    pub const DROP: Privs = Privs(1 << 5);
    pub const RELOAD: Privs = Privs(1 << 6);
    pub const SHUTDOWN: Privs = Privs(1 << 7);
    pub const PROCESS: Privs = Privs(1 << 8);
    pub const FILE: Privs = Privs(1 << 9);
    pub const GRANT: Privs = Privs(1 << 10);
    pub const REFERENCES: Privs = Privs(1 << 11);
    pub const INDEX: Privs = Privs(1 << 12);
    pub const ALTER: Privs = Privs(1 << 13);
    pub const SHOW_DB: Privs = Privs(1 << 14);
    pub const SUPER: Privs = Privs(1 << 15);
    pub const CREATE_TMP: Privs = Privs(1 << 16);
    pub const LOCK_TABLES: Privs = Privs(1 << 17);
    pub const EXECUTE: Privs = Privs(1 << 18);
    pub const REPL_SLAVE: Privs = Privs(1 << 19);
    pub const REPL_CLIENT: Privs = Privs(1 << 20);
    pub const CREATE_VIEW: Privs = Privs(1 << 21);
    pub const SHOW_VIEW: Privs = Privs(1 << 22);
    pub const CREATE_PROC: Privs = Privs(1 << 23);
    pub const ALTER_PROC: Privs = Privs(1 << 24);
    pub const CREATE_USER: Privs = Privs(1 << 25);
    pub const EVENT: Privs = Privs(1 << 26);
    pub const TRIGGER: Privs = Privs(1 << 27);
    pub const CREATE_TABLESPACE: Privs = Privs(1 << 28);
    pub const CREATE_ROLE: Privs = Privs(1 << 29);
    pub const DROP_ROLE: Privs = Privs(1 << 30);
    // Dynamic privileges (global only; mysql.global_grants).
    pub const SYSTEM_VARIABLES_ADMIN: Privs = Privs(1 << 40);
    pub const CONNECTION_ADMIN: Privs = Privs(1 << 41);
    pub const BINLOG_ADMIN: Privs = Privs(1 << 42);
    pub const ROLE_ADMIN: Privs = Privs(1 << 43);
    pub const REPLICATION_SLAVE_ADMIN: Privs = Privs(1 << 44);

    /// Every static privilege (what `ALL` means on `*.*`, GRANT OPTION
    /// apart).
    pub const STATIC: Privs = Privs(((1 << 31) - 1) & !(1 << 10));
    pub const DYNAMIC: Privs = Privs(0b11111 << 40);
    /// What `ALL` means on `db.*` (GRANT OPTION apart).
    pub const DB_ALL: Privs = Privs(
        Self::SELECT.0
            | Self::INSERT.0
            | Self::UPDATE.0
            | Self::DELETE.0
            | Self::CREATE.0
            | Self::DROP.0
            | Self::REFERENCES.0
            | Self::INDEX.0
            | Self::ALTER.0
            | Self::CREATE_TMP.0
            | Self::LOCK_TABLES.0
            | Self::EXECUTE.0
            | Self::CREATE_VIEW.0
            | Self::SHOW_VIEW.0
            | Self::CREATE_PROC.0
            | Self::ALTER_PROC.0
            | Self::EVENT.0
            | Self::TRIGGER.0,
    );
    /// What `ALL` means on `db.t` (GRANT OPTION apart).
    pub const TABLE_ALL: Privs = Privs(
        Self::SELECT.0
            | Self::INSERT.0
            | Self::UPDATE.0
            | Self::DELETE.0
            | Self::CREATE.0
            | Self::DROP.0
            | Self::REFERENCES.0
            | Self::INDEX.0
            | Self::ALTER.0
            | Self::CREATE_VIEW.0
            | Self::SHOW_VIEW.0
            | Self::TRIGGER.0,
    );
    /// The privileges a column can hold.
    pub const COLUMN_ALL: Privs =
        Privs(Self::SELECT.0 | Self::INSERT.0 | Self::UPDATE.0 | Self::REFERENCES.0);

    pub const fn union(self, o: Privs) -> Privs {
        Privs(self.0 | o.0)
    }
    pub const fn minus(self, o: Privs) -> Privs {
        Privs(self.0 & !o.0)
    }
    pub const fn and(self, o: Privs) -> Privs {
        Privs(self.0 & o.0)
    }
    /// All of `o` held.
    pub const fn has(self, o: Privs) -> bool {
        self.0 & o.0 == o.0
    }
    /// Some of `o` held.
    pub const fn any(self, o: Privs) -> bool {
        self.0 & o.0 != 0
    }
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }
    /// The privileges as checks see them: SUPER brings the dynamic
    /// privileges it stands for in MySQL.
    pub const fn effective(self) -> Privs {
        if self.0 & Self::SUPER.0 != 0 {
            Privs(self.0 | Self::DYNAMIC.0)
        } else {
            self
        }
    }
    /// The individual privileges in MySQL's order.
    pub fn iter(self) -> impl Iterator<Item = &'static PrivInfo> {
        PRIVILEGES.iter().filter(move |p| self.has(p.bit))
    }
}

/// One privilege's names.
#[derive(Debug)]
pub struct PrivInfo {
    pub bit: Privs,
    /// As written in GRANT and printed by SHOW GRANTS.
    pub name: &'static str,
    /// The `mysql.user` / `mysql.db` column (`None` for dynamic ones).
    pub column: Option<&'static str>,
    /// The member of `Table_priv` / `Column_priv` (`None` if the
    /// privilege does not exist at table level).
    pub set_name: Option<&'static str>,
}

const fn p(
    bit: Privs,
    name: &'static str,
    column: Option<&'static str>,
    set_name: Option<&'static str>,
) -> PrivInfo {
    PrivInfo {
        bit,
        name,
        column,
        set_name,
    }
}

/// Every privilege quire knows, in the order MySQL 8.0 lists them.
pub static PRIVILEGES: &[PrivInfo] = &[
    p(Privs::SELECT, "SELECT", Some("Select_priv"), Some("Select")),
    p(Privs::INSERT, "INSERT", Some("Insert_priv"), Some("Insert")),
    p(Privs::UPDATE, "UPDATE", Some("Update_priv"), Some("Update")),
    p(Privs::DELETE, "DELETE", Some("Delete_priv"), Some("Delete")),
    p(Privs::CREATE, "CREATE", Some("Create_priv"), Some("Create")),
    p(Privs::DROP, "DROP", Some("Drop_priv"), Some("Drop")),
    p(Privs::RELOAD, "RELOAD", Some("Reload_priv"), None),
    p(Privs::SHUTDOWN, "SHUTDOWN", Some("Shutdown_priv"), None),
    p(Privs::PROCESS, "PROCESS", Some("Process_priv"), None),
    p(Privs::FILE, "FILE", Some("File_priv"), None),
    p(
        Privs::GRANT,
        "GRANT OPTION",
        Some("Grant_priv"),
        Some("Grant"),
    ),
    p(
        Privs::REFERENCES,
        "REFERENCES",
        Some("References_priv"),
        Some("References"),
    ),
    p(Privs::INDEX, "INDEX", Some("Index_priv"), Some("Index")),
    p(Privs::ALTER, "ALTER", Some("Alter_priv"), Some("Alter")),
    p(Privs::SHOW_DB, "SHOW DATABASES", Some("Show_db_priv"), None),
    p(Privs::SUPER, "SUPER", Some("Super_priv"), None),
    p(
        Privs::CREATE_TMP,
        "CREATE TEMPORARY TABLES",
        Some("Create_tmp_table_priv"),
        None,
    ),
    p(
        Privs::LOCK_TABLES,
        "LOCK TABLES",
        Some("Lock_tables_priv"),
        None,
    ),
    p(Privs::EXECUTE, "EXECUTE", Some("Execute_priv"), None),
    p(
        Privs::REPL_SLAVE,
        "REPLICATION SLAVE",
        Some("Repl_slave_priv"),
        None,
    ),
    p(
        Privs::REPL_CLIENT,
        "REPLICATION CLIENT",
        Some("Repl_client_priv"),
        None,
    ),
    p(
        Privs::CREATE_VIEW,
        "CREATE VIEW",
        Some("Create_view_priv"),
        Some("Create View"),
    ),
    p(
        Privs::SHOW_VIEW,
        "SHOW VIEW",
        Some("Show_view_priv"),
        Some("Show view"),
    ),
    p(
        Privs::CREATE_PROC,
        "CREATE ROUTINE",
        Some("Create_routine_priv"),
        None,
    ),
    p(
        Privs::ALTER_PROC,
        "ALTER ROUTINE",
        Some("Alter_routine_priv"),
        None,
    ),
    p(
        Privs::CREATE_USER,
        "CREATE USER",
        Some("Create_user_priv"),
        None,
    ),
    p(Privs::EVENT, "EVENT", Some("Event_priv"), None),
    p(
        Privs::TRIGGER,
        "TRIGGER",
        Some("Trigger_priv"),
        Some("Trigger"),
    ),
    p(
        Privs::CREATE_TABLESPACE,
        "CREATE TABLESPACE",
        Some("Create_tablespace_priv"),
        None,
    ),
    p(
        Privs::CREATE_ROLE,
        "CREATE ROLE",
        Some("Create_role_priv"),
        None,
    ),
    p(Privs::DROP_ROLE, "DROP ROLE", Some("Drop_role_priv"), None),
    p(Privs::BINLOG_ADMIN, "BINLOG_ADMIN", None, None),
    p(Privs::CONNECTION_ADMIN, "CONNECTION_ADMIN", None, None),
    p(
        Privs::REPLICATION_SLAVE_ADMIN,
        "REPLICATION_SLAVE_ADMIN",
        None,
        None,
    ),
    p(Privs::ROLE_ADMIN, "ROLE_ADMIN", None, None),
    p(
        Privs::SYSTEM_VARIABLES_ADMIN,
        "SYSTEM_VARIABLES_ADMIN",
        None,
        None,
    ),
];

/// The privilege named `name` (as in GRANT, upper-cased words joined by
/// one space).
pub fn by_name(name: &str) -> Option<&'static PrivInfo> {
    PRIVILEGES
        .iter()
        .find(|p| p.name.eq_ignore_ascii_case(name))
}

/// The privileges of a `Table_priv` / `Column_priv` SET value
/// (`'Select,Insert'`); unknown members are ignored.
pub fn from_set(s: &str) -> Privs {
    let mut out = Privs::NONE;
    for part in s.split(',') {
        let part = part.trim();
        if let Some(p) = PRIVILEGES
            .iter()
            .find(|p| p.set_name.is_some_and(|n| n.eq_ignore_ascii_case(part)))
        {
            out = out.union(p.bit);
        }
    }
    out
}

/// The SET text of `privs` (table-level members only).
pub fn to_set(privs: Privs) -> String {
    let names: Vec<&str> = privs.iter().filter_map(|p| p.set_name).collect();
    names.join(",")
}

/// Grants on one table.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TablePrivs {
    pub db: String,
    pub table: String,
    /// Table-level privileges (GRANT OPTION included).
    pub privs: Privs,
    /// Column-level privileges, sorted by column name.
    pub columns: Vec<(String, Privs)>,
}

impl TablePrivs {
    /// The union of the column privileges (what MySQL keeps as
    /// `tables_priv.Column_priv`).
    pub fn column_union(&self) -> Privs {
        self.columns
            .iter()
            .fold(Privs::NONE, |a, (_, p)| a.union(*p))
    }
}

/// Everything one account was granted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AccountPrivs {
    /// `ON *.*` (static and dynamic privileges, GRANT OPTION included).
    pub global: Privs,
    /// `ON db.*`, sorted by database name.
    pub dbs: Vec<(String, Privs)>,
    /// `ON db.t` and column grants, sorted by (db, table).
    pub tables: Vec<TablePrivs>,
}

impl AccountPrivs {
    /// What the old `GRANT ALL`-only model recorded, as privileges.
    pub fn from_legacy(all: bool, databases: &[String]) -> AccountPrivs {
        AccountPrivs {
            global: if all {
                Privs::STATIC.union(Privs::DYNAMIC).union(Privs::GRANT)
            } else {
                Privs::NONE
            },
            dbs: databases
                .iter()
                .map(|d| (d.clone(), Privs::DB_ALL))
                .collect(),
            tables: Vec::new(),
        }
    }

    /// Whether `ALL PRIVILEGES ON *.*` is held (the old model's flag).
    pub fn is_all(&self) -> bool {
        self.global.has(Privs::STATIC)
    }

    /// Database names with full `ALL` on them (the old model's list).
    pub fn all_dbs(&self) -> Vec<String> {
        self.dbs
            .iter()
            .filter(|(_, p)| p.has(Privs::DB_ALL))
            .map(|(d, _)| d.clone())
            .collect()
    }

    /// Privileges at the database level for `db`: those of the one
    /// `ON name.*` grant that matches best, as MySQL picks the first
    /// matching row of its sorted `mysql.db` (an exact name before any
    /// pattern; among patterns, the longest text before the first
    /// wildcard; then by name). Grants are not added up across rows.
    pub fn db(&self, db: &str) -> Privs {
        let mut best: Option<(usize, &str, Privs)> = None;
        for (d, p) in &self.dbs {
            if d == db {
                return *p;
            }
            if !d.contains(['%', '_', '\\']) || !db_pattern_matches(d, db) {
                continue;
            }
            let rank = wildcard_position(d);
            if best
                .as_ref()
                .is_none_or(|(r, n, _)| rank > *r || (rank == *r && d.as_str() < *n))
            {
                best = Some((rank, d, *p));
            }
        }
        best.map(|(_, _, p)| p).unwrap_or_default()
    }

    /// Adds everything `other` holds (a role's privileges to an
    /// account's, for the session's effective set).
    pub fn merge(&mut self, other: &AccountPrivs) {
        self.global = self.global.union(other.global);
        for (d, p) in &other.dbs {
            self.grant_db(d, *p);
        }
        for t in &other.tables {
            self.grant_table(&t.db, &t.table, t.privs, &t.columns);
        }
    }

    pub fn table_entry(&self, db: &str, table: &str) -> Option<&TablePrivs> {
        self.tables
            .iter()
            .find(|t| t.db == db && t.table.eq_ignore_ascii_case(table))
    }

    /// Global privileges as checks see them (SUPER implies the dynamic
    /// ones).
    pub fn global_effective(&self) -> Privs {
        self.global.effective()
    }

    /// Privileges on table `db.table` from the global, database and table
    /// levels.
    pub fn on_table(&self, db: &str, table: &str) -> Privs {
        let mut p = self.global.union(self.db(db));
        if let Some(t) = self.table_entry(db, table) {
            p = p.union(t.privs);
        }
        p
    }

    /// Privileges on one column (all levels).
    pub fn on_column(&self, db: &str, table: &str, column: &str) -> Privs {
        let mut p = self.on_table(db, table);
        if let Some(t) = self.table_entry(db, table) {
            if let Some((_, c)) = t
                .columns
                .iter()
                .find(|(c, _)| c.eq_ignore_ascii_case(column))
            {
                p = p.union(*c);
            }
        }
        p
    }

    /// Whether the account has any privilege inside database `db` (USE,
    /// SHOW DATABASES): MySQL's test for error 1044.
    pub fn any_in_db(&self, db: &str) -> bool {
        self.global.any(Privs::DB_ALL.union(Privs::GRANT))
            || !self.db(db).is_empty()
            || self
                .tables
                .iter()
                .any(|t| t.db == db && (!t.privs.is_empty() || !t.columns.is_empty()))
    }

    /// Whether the account has any privilege on table `db.table` (SHOW
    /// TABLES, DESCRIBE).
    pub fn any_on_table(&self, db: &str, table: &str) -> bool {
        self.on_table(db, table)
            .any(Privs::TABLE_ALL.union(Privs::GRANT))
            || self
                .table_entry(db, table)
                .is_some_and(|t| !t.columns.is_empty())
    }

    /// Whether nothing at all is granted.
    pub fn is_empty(&self) -> bool {
        self.global.is_empty() && self.dbs.is_empty() && self.tables.is_empty()
    }

    /// Adds `privs` at `db.*`.
    pub fn grant_db(&mut self, db: &str, privs: Privs) {
        match self.dbs.iter_mut().find(|(d, _)| d == db) {
            Some((_, p)) => *p = p.union(privs),
            None => {
                self.dbs.push((db.to_string(), privs));
                self.dbs.sort();
            }
        }
    }

    /// Removes `privs` from `db.*`; `false` if there was no grant there.
    pub fn revoke_db(&mut self, db: &str, privs: Privs) -> bool {
        let Some(i) = self.dbs.iter().position(|(d, _)| d == db) else {
            return false;
        };
        let p = self.dbs[i].1.minus(privs);
        if p.is_empty() {
            self.dbs.remove(i);
        } else {
            self.dbs[i].1 = p;
        }
        true
    }

    fn table_mut(&mut self, db: &str, table: &str) -> &mut TablePrivs {
        let i = match self
            .tables
            .iter()
            .position(|t| t.db == db && t.table.eq_ignore_ascii_case(table))
        {
            Some(i) => i,
            None => {
                self.tables.push(TablePrivs {
                    db: db.to_string(),
                    table: table.to_string(),
                    ..Default::default()
                });
                self.tables
                    .sort_by(|a, b| (&a.db, &a.table).cmp(&(&b.db, &b.table)));
                self.tables
                    .iter()
                    .position(|t| t.db == db && t.table == table)
                    .unwrap_or(0)
            }
        };
        &mut self.tables[i]
    }

    /// Adds `privs` on `db.table`, and `col_privs` on each of `columns`.
    pub fn grant_table(
        &mut self,
        db: &str,
        table: &str,
        privs: Privs,
        columns: &[(String, Privs)],
    ) {
        let t = self.table_mut(db, table);
        t.privs = t.privs.union(privs);
        for (c, p) in columns {
            match t
                .columns
                .iter_mut()
                .find(|(n, _)| n.eq_ignore_ascii_case(c))
            {
                Some((_, x)) => *x = x.union(*p),
                None => {
                    t.columns.push((c.clone(), *p));
                    t.columns.sort();
                }
            }
        }
    }

    /// Removes `privs` from `db.table` (and from every column), and
    /// `col_privs` from the given columns; `false` if there was no grant
    /// on the table.
    pub fn revoke_table(
        &mut self,
        db: &str,
        table: &str,
        privs: Privs,
        columns: &[(String, Privs)],
    ) -> bool {
        let Some(i) = self
            .tables
            .iter()
            .position(|t| t.db == db && t.table.eq_ignore_ascii_case(table))
        else {
            return false;
        };
        let t = &mut self.tables[i];
        t.privs = t.privs.minus(privs);
        for (name, p) in t.columns.iter_mut() {
            *p = p.minus(privs);
            if let Some((_, cp)) = columns.iter().find(|(c, _)| c.eq_ignore_ascii_case(name)) {
                *p = p.minus(*cp);
            }
        }
        t.columns.retain(|(_, p)| !p.is_empty());
        if t.privs.is_empty() && t.columns.is_empty() {
            self.tables.remove(i);
        }
        true
    }

    /// `SHOW GRANTS` lines for `'user'@'host'`, as MySQL 8.0 prints them.
    pub fn show_grants(&self, user: &str, host: &str) -> Vec<String> {
        let who = format!("`{user}`@`{host}`");
        let mut out = Vec::new();
        let stat = self.global.and(Privs::STATIC);
        let with = |p: Privs| {
            if p.has(Privs::GRANT) {
                " WITH GRANT OPTION"
            } else {
                ""
            }
        };
        let g = if stat.is_empty() {
            "USAGE".to_string()
        } else {
            names(stat)
        };
        out.push(format!("GRANT {g} ON *.* TO {who}{}", with(self.global)));
        let dynamic = self.global.and(Privs::DYNAMIC);
        if !dynamic.is_empty() {
            let mut d: Vec<&str> = dynamic.iter().map(|p| p.name).collect();
            d.sort_unstable();
            out.push(format!(
                "GRANT {} ON *.* TO {who}{}",
                d.join(","),
                with(self.global)
            ));
        }
        for (db, privs) in &self.dbs {
            let body = privs.minus(Privs::GRANT);
            let text = if body.has(Privs::DB_ALL) {
                "ALL PRIVILEGES".to_string()
            } else if body.is_empty() {
                "USAGE".to_string()
            } else {
                names(body)
            };
            out.push(format!(
                "GRANT {text} ON `{}`.* TO {who}{}",
                db.replace('`', "``"),
                with(*privs)
            ));
        }
        for t in &self.tables {
            let body = t.privs.minus(Privs::GRANT);
            let mut parts: Vec<String> = Vec::new();
            if body.has(Privs::TABLE_ALL) {
                parts.push("ALL PRIVILEGES".into());
            } else {
                for p in PRIVILEGES.iter().filter(|p| p.set_name.is_some()) {
                    if p.bit == Privs::GRANT {
                        continue;
                    }
                    if body.has(p.bit) {
                        parts.push(p.name.to_string());
                    } else {
                        let cols: Vec<String> = t
                            .columns
                            .iter()
                            .filter(|(_, cp)| cp.has(p.bit))
                            .map(|(c, _)| format!("`{c}`"))
                            .collect();
                        if !cols.is_empty() {
                            parts.push(format!("{} ({})", p.name, cols.join(", ")));
                        }
                    }
                }
            }
            if parts.is_empty() {
                parts.push("USAGE".into());
            }
            out.push(format!(
                "GRANT {} ON `{}`.`{}` TO {who}{}",
                parts.join(", "),
                t.db.replace('`', "``"),
                t.table.replace('`', "``"),
                with(t.privs)
            ));
        }
        out
    }
}

/// Where the first unescaped wildcard (`%` or `_`) of a database-grant
/// name is, in characters of the name as written; a name without one
/// (`db\_1` included) ranks above every pattern. MySQL sorts `mysql.db`
/// by this (its `get_sort`).
fn wildcard_position(pattern: &str) -> usize {
    let mut it = pattern.chars().enumerate();
    while let Some((i, c)) = it.next() {
        match c {
            '\\' => {
                it.next();
            }
            '%' | '_' => return i,
            _ => {}
        }
    }
    usize::MAX
}

/// Whether the database name of a grant, read as a `LIKE` pattern (`%`
/// any run, `_` one character, `\%` and `\_` themselves), matches `db`.
/// Names compare case-sensitively, as database names do with
/// `lower_case_table_names = 0`.
pub fn db_pattern_matches(pattern: &str, db: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let s: Vec<char> = db.chars().collect();
    like_at(&p, &s)
}

/// LIKE with `\` escapes over chars (iterative, with one backtrack
/// point per `%`: linear in practice, never exponential).
fn like_at(p: &[char], s: &[char]) -> bool {
    let (mut pi, mut si) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while si < s.len() {
        let step = match p.get(pi) {
            Some('%') => {
                star = Some((pi, si));
                pi += 1;
                continue;
            }
            Some('\\') if pi + 1 < p.len() => (p[pi + 1] == s[si]).then_some(2),
            Some('_') => Some(1),
            Some(c) => (*c == s[si]).then_some(1),
            None => None,
        };
        match (step, star) {
            (Some(n), _) => {
                pi += n;
                si += 1;
            }
            (None, Some((sp, ss))) => {
                pi = sp + 1;
                si = ss + 1;
                star = Some((sp, ss + 1));
            }
            (None, None) => return false,
        }
    }
    p[pi..].iter().all(|c| *c == '%')
}

/// `SELECT, INSERT, ...` in MySQL's order.
fn names(p: Privs) -> String {
    let v: Vec<&str> = p
        .minus(Privs::GRANT)
        .iter()
        .filter(|i| i.column.is_some())
        .map(|i| i.name)
        .collect();
    v.join(", ")
}

/// The name a denied-command error gives for the first privilege of
/// `need` (`SELECT`, `INSERT`, ... , `GRANT`).
pub fn command_name(need: Privs) -> &'static str {
    if need.has(Privs::GRANT) {
        return "GRANT";
    }
    PRIVILEGES
        .iter()
        .find(|p| need.has(p.bit))
        .map(|p| p.name)
        .unwrap_or("USAGE")
}

// ----------------------------------------------------------------- checks

/// ER_TABLEACCESS_DENIED_ERROR (1142).
pub fn table_denied(cmd: &str, user: &str, host: &str, db: &str, table: &str) -> EngineError {
    EngineError::new(
        1142,
        "42000",
        format!("{cmd} command denied to user '{user}'@'{host}' for table '{db}.{table}'"),
    )
}

/// ER_TABLEACCESS_DENIED_ERROR (1142) naming the table without its
/// database, as MySQL words it for a locking read.
pub fn table_denied_named(cmd: &str, user: &str, host: &str, table: &str) -> EngineError {
    EngineError::new(
        1142,
        "42000",
        format!("{cmd} command denied to user '{user}'@'{host}' for table '{table}'"),
    )
}

/// ER_COLUMNACCESS_DENIED_ERROR (1143).
pub fn column_denied(cmd: &str, user: &str, host: &str, column: &str, table: &str) -> EngineError {
    EngineError::new(
        1143,
        "42000",
        format!(
            "{cmd} command denied to user '{user}'@'{host}' for column '{column}' in table '{table}'"
        ),
    )
}

/// ER_DBACCESS_DENIED_ERROR (1044).
pub fn db_denied(user: &str, host: &str, db: &str) -> EngineError {
    EngineError::new(
        1044,
        "42000",
        format!("Access denied for user '{user}'@'{host}' to database '{db}'"),
    )
}

/// ER_SPECIFIC_ACCESS_DENIED_ERROR (1227); `what` is `SUPER` or
/// `SUPER or SYSTEM_VARIABLES_ADMIN`.
pub fn specific_denied(what: &str) -> EngineError {
    EngineError::new(
        1227,
        "42000",
        format!(
            "Access denied; you need (at least one of) the {what} privilege(s) for this operation"
        ),
    )
}

/// ER_ACCESS_DENIED_ERROR (1045), as GRANT ... ON *.* reports a grantor
/// short of the privileges.
pub fn access_denied(user: &str, host: &str) -> EngineError {
    EngineError::new(
        1045,
        "28000",
        format!("Access denied for user '{user}'@'{host}' (using password: YES)"),
    )
}

/// The account a statement runs as, with its privileges.
pub struct Checker<'a> {
    pub privs: &'a AccountPrivs,
    /// `CURRENT_USER()`'s user.
    pub user: &'a str,
    /// The account's host pattern (1044's host).
    pub account_host: &'a str,
    /// Where the client connects from (1142/1143's host).
    pub client_host: &'a str,
}

impl Checker<'_> {
    /// Global privilege check: all of `need` (SUPER counting for the
    /// dynamic privileges).
    pub fn global(&self, need: Privs) -> bool {
        self.privs.global_effective().has(need)
    }

    /// `need` on `db.table` from the table level or above, else error
    /// 1142 naming the first missing privilege.
    pub fn table(&self, db: &str, table: &str, need: Privs) -> SqlResult<()> {
        let have = self.privs.on_table(db, table);
        if have.has(need) {
            return Ok(());
        }
        Err(table_denied(
            command_name(need.minus(have)),
            self.user,
            self.client_host,
            db,
            table,
        ))
    }

    /// `need` on `db.table` at table level, or on each of `columns`
    /// (column grants); 1143 names the first column short of it, 1142 a
    /// table with no column grant of that kind at all.
    pub fn columns<'c>(
        &self,
        db: &str,
        table: &str,
        need: Privs,
        columns: impl IntoIterator<Item = &'c str>,
    ) -> SqlResult<()> {
        let have = self.privs.on_table(db, table);
        if have.has(need) {
            return Ok(());
        }
        let missing = need.minus(have);
        let entry = self.privs.table_entry(db, table);
        if !entry.is_some_and(|t| t.column_union().any(missing)) {
            return Err(table_denied(
                command_name(missing),
                self.user,
                self.client_host,
                db,
                table,
            ));
        }
        for c in columns {
            let cp = self.privs.on_column(db, table, c);
            if !cp.has(need) {
                return Err(column_denied(
                    command_name(need.minus(cp)),
                    self.user,
                    self.client_host,
                    c,
                    table,
                ));
            }
        }
        Ok(())
    }

    /// Whether `need` on `db.table` could only come from column grants
    /// (then the caller resolves the columns and calls [`Self::columns`]).
    pub fn needs_columns(&self, db: &str, table: &str, need: Privs) -> bool {
        let have = self.privs.on_table(db, table);
        !have.has(need)
            && self
                .privs
                .table_entry(db, table)
                .is_some_and(|t| t.column_union().any(need.minus(have)))
    }

    /// `need` at the database level or above (CREATE/DROP DATABASE), else
    /// error 1044.
    pub fn db(&self, db: &str, need: Privs) -> SqlResult<()> {
        if self.privs.global.union(self.privs.db(db)).has(need) {
            Ok(())
        } else {
            Err(db_denied(self.user, self.account_host, db))
        }
    }
}

/// A shared, immutable view of one account's privileges.
pub type SharedPrivs = Arc<AccountPrivs>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_combine() {
        let mut a = AccountPrivs::default();
        a.grant_db("d", Privs::SELECT);
        a.grant_table("d", "t", Privs::INSERT, &[("c".into(), Privs::UPDATE)]);
        assert!(a.on_table("d", "x").has(Privs::SELECT));
        assert!(!a.on_table("e", "x").has(Privs::SELECT));
        assert!(a.on_table("d", "t").has(Privs::SELECT.union(Privs::INSERT)));
        assert!(!a.on_table("d", "t").has(Privs::UPDATE));
        assert!(a.on_column("d", "t", "C").has(Privs::UPDATE));
        assert!(a.any_in_db("d") && !a.any_in_db("e"));
        assert!(a.revoke_table("d", "t", Privs::INSERT, &[]));
        assert!(a.table_entry("d", "t").is_some());
        assert!(a.revoke_table("d", "t", Privs::NONE, &[("c".into(), Privs::UPDATE)]));
        assert!(a.table_entry("d", "t").is_none());
        assert!(!a.revoke_table("d", "t", Privs::INSERT, &[]));
        assert!(a.revoke_db("d", Privs::SELECT));
        assert!(a.is_empty());
    }

    #[test]
    fn database_patterns() {
        assert!(db_pattern_matches("db\\_%", "db_1"));
        assert!(!db_pattern_matches("db\\_%", "dbx1"));
        assert!(db_pattern_matches("db_%", "dbx1"));
        assert!(db_pattern_matches("a%b%c", "aXbYbc"));
        assert!(!db_pattern_matches("a%b%c", "aXbYb"));
        assert!(db_pattern_matches("100\\%", "100%"));
        assert!(!db_pattern_matches("100\\%", "1000"));
        assert!(!db_pattern_matches("Shop", "shop"));
        let mut a = AccountPrivs::default();
        a.grant_db("db\\_%", Privs::SELECT);
        a.grant_db("db\\_1", Privs::INSERT);
        a.grant_db("%", Privs::DELETE);
        // The exact row wins and rows do not add up, as in MySQL.
        assert_eq!(a.db("db_1"), Privs::INSERT);
        assert_eq!(a.db("db_2"), Privs::SELECT);
        assert_eq!(a.db("other"), Privs::DELETE);
        assert!(a.on_table("db_2", "t").has(Privs::SELECT));
        assert!(a.any_in_db("db_9") && a.any_in_db("zzz"));
        let mut b = AccountPrivs::default();
        b.grant_db("db\\_%", Privs::UPDATE);
        b.grant_table("x", "t", Privs::SELECT, &[("c".into(), Privs::INSERT)]);
        a.merge(&b);
        assert_eq!(a.db("db_2"), Privs::SELECT.union(Privs::UPDATE));
        assert!(a.on_column("x", "t", "c").has(Privs::INSERT));
    }

    #[test]
    fn super_implies_dynamic() {
        let a = AccountPrivs {
            global: Privs::SUPER,
            ..Default::default()
        };
        assert!(a.global_effective().has(Privs::SYSTEM_VARIABLES_ADMIN));
        assert!(!AccountPrivs::default()
            .global_effective()
            .has(Privs::SYSTEM_VARIABLES_ADMIN));
    }

    #[test]
    fn sets_round_trip() {
        let p = Privs::SELECT.union(Privs::CREATE_VIEW).union(Privs::GRANT);
        assert_eq!(to_set(p), "Select,Grant,Create View");
        assert_eq!(from_set("Select,Grant,Create View"), p);
        assert_eq!(from_set(""), Privs::NONE);
    }

    #[test]
    fn show_grants_text() {
        let mut a = AccountPrivs::default();
        assert_eq!(
            a.show_grants("u", "%"),
            vec!["GRANT USAGE ON *.* TO `u`@`%`"]
        );
        a.global = Privs::SELECT
            .union(Privs::RELOAD)
            .union(Privs::BINLOG_ADMIN);
        a.grant_db("d", Privs::DB_ALL.union(Privs::GRANT));
        a.grant_table(
            "d",
            "t",
            Privs::DELETE,
            &[("a".into(), Privs::SELECT), ("b".into(), Privs::SELECT)],
        );
        assert_eq!(
            a.show_grants("u", "%"),
            vec![
                "GRANT SELECT, RELOAD ON *.* TO `u`@`%`",
                "GRANT BINLOG_ADMIN ON *.* TO `u`@`%`",
                "GRANT ALL PRIVILEGES ON `d`.* TO `u`@`%` WITH GRANT OPTION",
                "GRANT SELECT (`a`, `b`), DELETE ON `d`.`t` TO `u`@`%`",
            ]
        );
        let root = AccountPrivs::from_legacy(true, &[]);
        let g = root.show_grants("root", "localhost");
        assert!(g[0].starts_with("GRANT SELECT, INSERT, UPDATE, DELETE, CREATE, DROP, RELOAD"));
        assert!(
            g[0].ends_with("CREATE ROLE, DROP ROLE ON *.* TO `root`@`localhost` WITH GRANT OPTION")
        );
        assert_eq!(
            g[1],
            "GRANT BINLOG_ADMIN,CONNECTION_ADMIN,REPLICATION_SLAVE_ADMIN,ROLE_ADMIN,SYSTEM_VARIABLES_ADMIN ON *.* TO `root`@`localhost` WITH GRANT OPTION"
        );
    }
}
