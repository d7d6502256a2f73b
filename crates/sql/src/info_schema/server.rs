//! # Server-wide tables: character sets, engines, plugins, privileges
//!
//! These describe the server rather than a database: the character sets
//! and collations quire implements (SHOW CHARACTER SET and SHOW COLLATION
//! read the same lists), its one storage engine, the plugins that are
//! really compiled in, and the grants of accounts. The tables of objects
//! quire does not have yet (stored routines, triggers, events, foreign
//! keys, CHECK constraints) are here with MySQL 8.0's columns and no rows.

use quire_engine::Value;

use super::{text, uint, Cols, Visible, CATALOG};
use crate::ctx::Virtual;
use crate::privilege::{AccountPrivs, Privs};
use crate::session::Session;

/// A character set: name, default collation, description, max bytes per
/// character.
pub(crate) type Charset = (&'static str, &'static str, &'static str, u64);

/// The character sets quire implements (the engine's
/// `types::collation`), by name.
pub(crate) fn character_sets() -> Vec<Charset> {
    quire_engine::types::Charset::ALL
        .into_iter()
        .map(|c| {
            (
                c.name(),
                c.default_collation().name(),
                c.description(),
                u64::from(c.max_len()),
            )
        })
        .collect()
}

/// A collation: name, character set, id, default, sort length, pad
/// attribute.
pub(crate) type Collation = (&'static str, &'static str, u64, bool, u64, &'static str);

/// The collations quire implements (the engine's `types::collation`),
/// by name.
pub(crate) fn collations() -> Vec<Collation> {
    quire_engine::types::Collation::ALL
        .into_iter()
        .map(|c| {
            (
                c.name(),
                c.charset().name(),
                u64::from(c.id()),
                c.is_default(),
                u64::from(c.sort_len()),
                c.pad_attribute(),
            )
        })
        .collect()
}

/// An engine row: Engine, Support, Comment, Transactions, XA, Savepoints.
/// XA is NO: quire uses two-phase commit internally (binlog and engine),
/// but clients cannot run XA statements.
pub(crate) fn engines() -> Vec<[&'static str; 6]> {
    vec![[
        "InnoDB",
        "DEFAULT",
        "quire's transactional engine",
        "YES",
        "NO",
        "YES",
    ]]
}

pub(crate) fn table(s: &Session, upper: &str) -> Option<Virtual> {
    Some(match upper {
        "CHARACTER_SETS" => {
            let cols = Cols::new()
                .v("CHARACTER_SET_NAME", 64)
                .v("DEFAULT_COLLATE_NAME", 64)
                .v("DESCRIPTION", 2048)
                .u32("MAXLEN")
                .done();
            let rows = character_sets()
                .iter()
                .map(|(n, c, d, m)| vec![text(n), text(c), text(d), uint(*m)])
                .collect();
            (cols, rows)
        }
        "COLLATIONS" => {
            let cols = Cols::new()
                .v("COLLATION_NAME", 64)
                .v("CHARACTER_SET_NAME", 64)
                .u("ID")
                .v("IS_DEFAULT", 3)
                .v("IS_COMPILED", 3)
                .u32("SORTLEN")
                .v("PAD_ATTRIBUTE", 9)
                .done();
            let rows = collations()
                .iter()
                .map(|(n, cs, id, def, len, pad)| {
                    vec![
                        text(n),
                        text(cs),
                        uint(*id),
                        text(if *def { "Yes" } else { "" }),
                        text("Yes"),
                        uint(*len),
                        text(pad),
                    ]
                })
                .collect();
            (cols, rows)
        }
        "COLLATION_CHARACTER_SET_APPLICABILITY" => {
            let cols = Cols::new()
                .v("COLLATION_NAME", 64)
                .v("CHARACTER_SET_NAME", 64)
                .done();
            let rows = collations()
                .iter()
                .map(|(n, cs, ..)| vec![text(n), text(cs)])
                .collect();
            (cols, rows)
        }
        "ENGINES" => {
            let cols = Cols::new()
                .v("ENGINE", 64)
                .v("SUPPORT", 8)
                .v("COMMENT", 80)
                .v("TRANSACTIONS", 3)
                .v("XA", 3)
                .v("SAVEPOINTS", 3)
                .done();
            let rows = engines()
                .iter()
                .map(|r| r.iter().map(|x| text(x)).collect())
                .collect();
            (cols, rows)
        }
        "PLUGINS" => plugins(),
        // quire never compresses pages: every counter of InnoDB's
        // compression tables is truly zero, one row per compressed page
        // size as MySQL lists them.
        "INNODB_CMP" | "INNODB_CMP_RESET" => {
            let cols = Cols::new()
                .i("page_size")
                .i("compress_ops")
                .i("compress_ops_ok")
                .i("compress_time")
                .i("uncompress_ops")
                .i("uncompress_time")
                .done();
            let rows = CMP_PAGE_SIZES
                .iter()
                .map(|&p| {
                    let mut r = vec![Value::Int(p)];
                    r.extend(std::iter::repeat_n(Value::Int(0), 5));
                    r
                })
                .collect();
            (cols, rows)
        }
        "INNODB_CMPMEM" | "INNODB_CMPMEM_RESET" => {
            let cols = Cols::new()
                .i("page_size")
                .i("buffer_pool_instance")
                .i("pages_used")
                .i("pages_free")
                .i("relocation_ops")
                .i("relocation_time")
                .done();
            let rows = CMP_PAGE_SIZES
                .iter()
                .map(|&p| {
                    let mut r = vec![Value::Int(p), Value::Int(0)];
                    r.extend(std::iter::repeat_n(Value::Int(0), 4));
                    r
                })
                .collect();
            (cols, rows)
        }
        "USER_PRIVILEGES" => privilege_rows(s, Level::User),
        "SCHEMA_PRIVILEGES" => privilege_rows(s, Level::Schema),
        "TABLE_PRIVILEGES" => privilege_rows(s, Level::Table),
        "COLUMN_PRIVILEGES" => privilege_rows(s, Level::Column),
        "ROUTINES" => empty(&[
            "SPECIFIC_NAME",
            "ROUTINE_CATALOG",
            "ROUTINE_SCHEMA",
            "ROUTINE_NAME",
            "ROUTINE_TYPE",
            "DATA_TYPE",
            "CHARACTER_MAXIMUM_LENGTH",
            "CHARACTER_OCTET_LENGTH",
            "NUMERIC_PRECISION",
            "NUMERIC_SCALE",
            "DATETIME_PRECISION",
            "CHARACTER_SET_NAME",
            "COLLATION_NAME",
            "DTD_IDENTIFIER",
            "ROUTINE_BODY",
            "ROUTINE_DEFINITION",
            "EXTERNAL_NAME",
            "EXTERNAL_LANGUAGE",
            "PARAMETER_STYLE",
            "IS_DETERMINISTIC",
            "SQL_DATA_ACCESS",
            "SQL_PATH",
            "SECURITY_TYPE",
            "CREATED",
            "LAST_ALTERED",
            "SQL_MODE",
            "ROUTINE_COMMENT",
            "DEFINER",
            "CHARACTER_SET_CLIENT",
            "COLLATION_CONNECTION",
            "DATABASE_COLLATION",
        ]),
        "PARAMETERS" => empty(&[
            "SPECIFIC_CATALOG",
            "SPECIFIC_SCHEMA",
            "SPECIFIC_NAME",
            "ORDINAL_POSITION",
            "PARAMETER_MODE",
            "PARAMETER_NAME",
            "DATA_TYPE",
            "CHARACTER_MAXIMUM_LENGTH",
            "CHARACTER_OCTET_LENGTH",
            "NUMERIC_PRECISION",
            "NUMERIC_SCALE",
            "DATETIME_PRECISION",
            "CHARACTER_SET_NAME",
            "COLLATION_NAME",
            "DTD_IDENTIFIER",
            "ROUTINE_TYPE",
        ]),
        "TRIGGERS" => empty(&[
            "TRIGGER_CATALOG",
            "TRIGGER_SCHEMA",
            "TRIGGER_NAME",
            "EVENT_MANIPULATION",
            "EVENT_OBJECT_CATALOG",
            "EVENT_OBJECT_SCHEMA",
            "EVENT_OBJECT_TABLE",
            "ACTION_ORDER",
            "ACTION_CONDITION",
            "ACTION_STATEMENT",
            "ACTION_ORIENTATION",
            "ACTION_TIMING",
            "ACTION_REFERENCE_OLD_TABLE",
            "ACTION_REFERENCE_NEW_TABLE",
            "ACTION_REFERENCE_OLD_ROW",
            "ACTION_REFERENCE_NEW_ROW",
            "CREATED",
            "SQL_MODE",
            "DEFINER",
            "CHARACTER_SET_CLIENT",
            "COLLATION_CONNECTION",
            "DATABASE_COLLATION",
        ]),
        "EVENTS" => empty(&[
            "EVENT_CATALOG",
            "EVENT_SCHEMA",
            "EVENT_NAME",
            "DEFINER",
            "TIME_ZONE",
            "EVENT_BODY",
            "EVENT_DEFINITION",
            "EVENT_TYPE",
            "EXECUTE_AT",
            "INTERVAL_VALUE",
            "INTERVAL_FIELD",
            "SQL_MODE",
            "STARTS",
            "ENDS",
            "STATUS",
            "ON_COMPLETION",
            "CREATED",
            "LAST_ALTERED",
            "LAST_EXECUTED",
            "EVENT_COMMENT",
            "ORIGINATOR",
            "CHARACTER_SET_CLIENT",
            "COLLATION_CONNECTION",
            "DATABASE_COLLATION",
        ]),
        _ => return None,
    })
}

/// The compressed page sizes InnoDB's compression tables list.
const CMP_PAGE_SIZES: [i64; 5] = [1024, 2048, 4096, 8192, 16384];

/// A table of objects quire does not have: MySQL's columns, no rows.
fn empty(names: &[&str]) -> Virtual {
    let mut cols = Cols::new();
    for n in names {
        cols = cols.v(n, 64);
    }
    (cols.done(), Vec::new())
}

/// The plugins compiled into quire, as MySQL names them.
fn plugins() -> Virtual {
    let cols = Cols::new()
        .v("PLUGIN_NAME", 64)
        .v("PLUGIN_VERSION", 20)
        .v("PLUGIN_STATUS", 10)
        .v("PLUGIN_TYPE", 80)
        .v("PLUGIN_TYPE_VERSION", 20)
        .v("PLUGIN_LIBRARY", 64)
        .v("PLUGIN_LIBRARY_VERSION", 20)
        .v("PLUGIN_AUTHOR", 64)
        .text("PLUGIN_DESCRIPTION")
        .v("PLUGIN_LICENSE", 80)
        .v("LOAD_OPTION", 64)
        .done();
    let row = |name: &str, ty: &str, desc: &str| {
        vec![
            text(name),
            text("1.0"),
            text("ACTIVE"),
            text(ty),
            Value::Null,
            Value::Null,
            Value::Null,
            text("quire"),
            text(desc),
            text("Apache-2.0"),
            text("FORCE"),
        ]
    };
    let rows = vec![
        row("binlog", "STORAGE ENGINE", "The binary log"),
        row(
            "mysql_native_password",
            "AUTHENTICATION",
            "Native MySQL authentication",
        ),
        row(
            "caching_sha2_password",
            "AUTHENTICATION",
            "Caching sha2 authentication",
        ),
        row("InnoDB", "STORAGE ENGINE", "quire's transactional engine"),
    ];
    (cols, rows)
}

#[derive(Clone, Copy, PartialEq)]
enum Level {
    User,
    Schema,
    Table,
    Column,
}

/// One account's grants at `level` as rows (GRANTEE first).
fn account_rows(user: &str, host: &str, p: &AccountPrivs, level: Level, out: &mut Vec<Vec<Value>>) {
    let grantee = format!("'{user}'@'{host}'");
    let each = |privs: Privs| {
        let grantable = if privs.has(Privs::GRANT) { "YES" } else { "NO" };
        privs
            .minus(Privs::GRANT)
            .iter()
            .map(move |i| (i.name, grantable))
            .collect::<Vec<_>>()
    };
    match level {
        Level::User => {
            let v = each(p.global);
            if v.is_empty() {
                let g = if p.global.has(Privs::GRANT) {
                    "YES"
                } else {
                    "NO"
                };
                out.push(vec![text(&grantee), text(CATALOG), text("USAGE"), text(g)]);
            }
            for (name, g) in v {
                out.push(vec![text(&grantee), text(CATALOG), text(name), text(g)]);
            }
        }
        Level::Schema => {
            for (db, privs) in &p.dbs {
                for (name, g) in each(*privs) {
                    out.push(vec![
                        text(&grantee),
                        text(CATALOG),
                        text(db),
                        text(name),
                        text(g),
                    ]);
                }
            }
        }
        Level::Table => {
            for t in &p.tables {
                for (name, g) in each(t.privs) {
                    out.push(vec![
                        text(&grantee),
                        text(CATALOG),
                        text(&t.db),
                        text(&t.table),
                        text(name),
                        text(g),
                    ]);
                }
            }
        }
        Level::Column => {
            for t in &p.tables {
                let g = if t.privs.has(Privs::GRANT) {
                    "YES"
                } else {
                    "NO"
                };
                for (c, privs) in &t.columns {
                    for i in privs.minus(Privs::GRANT).iter() {
                        out.push(vec![
                            text(&grantee),
                            text(CATALOG),
                            text(&t.db),
                            text(&t.table),
                            text(c),
                            text(i.name),
                            text(g),
                        ]);
                    }
                }
            }
        }
    }
}

/// USER_ / SCHEMA_ / TABLE_ / COLUMN_PRIVILEGES: the session's own
/// account's grants, or every account's when the session may read the
/// grant tables (SELECT on `mysql`). Without an account store (embedded
/// use) there are no accounts and no rows.
fn privilege_rows(s: &Session, level: Level) -> Virtual {
    let mut cols = Cols::new().v("GRANTEE", 292).v("TABLE_CATALOG", 512);
    cols = match level {
        Level::User => cols,
        Level::Schema => cols.v("TABLE_SCHEMA", 64),
        Level::Table => cols.v("TABLE_SCHEMA", 64).v("TABLE_NAME", 64),
        Level::Column => cols
            .v("TABLE_SCHEMA", 64)
            .v("TABLE_NAME", 64)
            .v("COLUMN_NAME", 64),
    };
    let cols = cols.v("PRIVILEGE_TYPE", 64).v("IS_GRANTABLE", 3).done();
    let mut rows = Vec::new();
    let Some(store) = s.account_store() else {
        return (cols, rows);
    };
    let vis = Visible::of(s);
    let all = vis
        .privs()
        .is_some_and(|p| p.on_table("mysql", "user").has(Privs::SELECT));
    let (me_user, me_host) = s.account();
    let mut accounts = store.list();
    accounts.sort();
    for (user, host) in accounts {
        if !(all || (user == me_user && host == me_host)) {
            continue;
        }
        if let Some(p) = store.privileges(&user, &host) {
            account_rows(&user, &host, &p, level, &mut rows);
        }
    }
    (cols, rows)
}
