//! # SHOW, DESCRIBE and the virtual tables
//!
//! SHOW statements build their rows from the catalog (`SHOW TABLES`,
//! `SHOW CREATE TABLE`, `DESCRIBE`, `SHOW INDEX`), the configuration
//! (`SHOW VARIABLES`, from `Engine::config().variables()` plus the session
//! variables the SQL layer owns), the status counters (`SHOW STATUS`, from
//! `Engine::status()` plus the `Com_*` counters kept here) and the binary
//! log (`SHOW BINARY LOGS`, `SHOW MASTER STATUS`). `LIKE` filters match the
//! first column case-insensitively; `WHERE` filters are ordinary
//! expressions over the result's columns.
//!
//! `performance_schema.global_status` / `session_status` /
//! `global_variables` / `session_variables` are served as virtual tables,
//! so `SELECT ... FROM performance_schema.global_status WHERE
//! VARIABLE_NAME IN (...)` goes through the normal SELECT executor; so is
//! `mysql.user` (columns `Host`, `User`, `plugin`) when the session has
//! the server's account table.

use std::sync::atomic::Ordering;

use quire_engine::{ColumnType, Engine, EngineError, Value};
use sqlparser::ast::ObjectName;

use crate::exec::{split_name, Virtual};
use crate::expr::{self, like, truth, ColInfo, Compiler, Row};
use crate::parse::{Filter, Show};
use crate::session::{counters, started, text_col, Session};
use crate::{Output, SqlResult};

fn rows_out(names: &[&str], rows: Vec<Vec<Value>>) -> Output {
    Output::Rows {
        columns: names.iter().map(|n| text_col(n)).collect(),
        rows,
    }
}

/// SHOW REPLICA STATUS: the channel's row under either set of names
/// (SHOW SLAVE STATUS says Master/Slave where 8.0.22 says Source/Replica);
/// a column the channel does not fill is ''.
fn replica_status_rows(e: &quire_engine::Engine, columns: &[&str]) -> Vec<Vec<Value>> {
    let Some(row) = crate::replication::status_row(e) else {
        return Vec::new();
    };
    let value_of = |name: &str| {
        let modern = name
            .replace("Master", "Source")
            .replace("master", "source")
            .replace("Slave", "Replica");
        row.iter()
            .find(|(n, _)| *n == name || *n == modern)
            .map(|(_, v)| v.clone())
            .unwrap_or_else(|| Value::text(""))
    };
    vec![columns.iter().map(|c| value_of(c)).collect()]
}

fn text(s: &str) -> Value {
    Value::text(s)
}

/// Applies a LIKE / WHERE filter to rows whose columns are `names`.
fn filter(
    s: &Session,
    names: &[&str],
    rows: Vec<Vec<Value>>,
    f: &Filter,
) -> SqlResult<Vec<Vec<Value>>> {
    match f {
        Filter::None => Ok(rows),
        Filter::Like(p) => {
            let p = p.to_ascii_lowercase();
            Ok(rows
                .into_iter()
                .filter(|r| {
                    let v = match &r[0] {
                        Value::Bytes(b) => String::from_utf8_lossy(b).to_ascii_lowercase(),
                        o => o.to_string().to_ascii_lowercase(),
                    };
                    like(v.as_bytes(), p.as_bytes(), b'\\')
                })
                .collect())
        }
        Filter::Where(e) => {
            let cols: Vec<ColInfo> = names
                .iter()
                .map(|n| ColInfo {
                    table: String::new(),
                    org_table: String::new(),
                    db: String::new(),
                    name: n.to_string(),
                    org_name: n.to_string(),
                    ty: ColumnType::varchar(1024),
                    nullable: true,
                    hidden: false,
                })
                .collect();
            let mut c = Compiler {
                cols: &cols,
                params: &[],
                env: s,
                aggs: None,
                clause: "where clause",
                now: expr::now_utc(),
                values_offset: None,
                aliases: None,
                outer: &crate::expr::NO_OUTER,
                binder: None,
                outer_refs: Vec::new(),
                windows: None,
            };
            let ce = c.compile(e)?;
            let mut out = Vec::new();
            for r in rows {
                // Names compare case-insensitively, as MySQL's collation does.
                let lowered: Vec<Value> = r.clone();
                if truth(&ce.eval(&Row::new(&lowered, &[]))?) == Some(true)
                    || name_ci_match(&ce, &r)?
                {
                    out.push(r);
                }
            }
            Ok(out)
        }
    }
}

/// A second try with the first column upper- and lower-cased, so that
/// `WHERE Variable_name IN ('innodb_os_log_fsyncs')` finds
/// `Innodb_os_log_fsyncs` as MySQL's case-insensitive collation does.
fn name_ci_match(e: &expr::E, r: &[Value]) -> SqlResult<bool> {
    let Some(Value::Bytes(b)) = r.first() else {
        return Ok(false);
    };
    let orig = String::from_utf8_lossy(b).into_owned();
    for cand in [orig.to_ascii_lowercase(), orig.to_ascii_uppercase()] {
        let mut row = r.to_vec();
        row[0] = Value::text(&cand);
        if truth(&e.eval(&Row::new(&row, &[]))?) == Some(true) {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Counters kept outside the SQL layer (the protocol server's
/// `Connections`, `Threads_connected`, `Bytes_sent`, `Com_stmt_*`, ...).
pub type StatusSource = fn() -> Vec<(String, u64)>;

static STATUS_SOURCE: std::sync::RwLock<Option<StatusSource>> = std::sync::RwLock::new(None);

/// Registers the counters of the protocol server for SHOW STATUS and
/// `performance_schema.global_status` (process-wide; the last call wins).
/// Where a name is also counted here (`Connections`, `Questions`,
/// `Uptime`), the registered source's value is shown.
pub fn set_status_source(f: StatusSource) {
    if let Ok(mut g) = STATUS_SOURCE.write() {
        *g = Some(f);
    }
}

/// Status counters: the server's (if registered), the engine's, the SQL
/// layer's; for a name given twice the first in that order wins.
pub fn status_rows(engine: &Engine) -> Vec<(String, String)> {
    let c = counters();
    let source = STATUS_SOURCE.read().ok().and_then(|g| *g);
    let mut v: Vec<(String, String)> = source
        .map(|f| f())
        .unwrap_or_default()
        .into_iter()
        .map(|(k, n)| (k, n.to_string()))
        .collect();
    v.extend(engine.status().into_iter().map(|(k, n)| (k, n.to_string())));
    for (k, a) in [
        ("Com_select", &c.select),
        ("Com_insert", &c.insert),
        ("Com_update", &c.update),
        ("Com_delete", &c.delete),
        ("Com_replace", &c.replace),
        ("Com_begin", &c.begin),
        ("Com_set_option", &c.set_option),
        ("Questions", &c.questions),
        ("Queries", &c.questions),
        ("Connections", &c.connections),
    ] {
        v.push((k.to_string(), a.load(Ordering::Relaxed).to_string()));
    }
    v.extend(crate::spill::status_rows());
    v.push(("Uptime".into(), started().elapsed().as_secs().to_string()));
    v.sort_by_key(|a| a.0.to_ascii_lowercase());
    v.dedup_by(|a, b| a.0 == b.0);
    v
}

fn pairs(v: Vec<(String, String)>) -> Vec<Vec<Value>> {
    v.into_iter()
        .map(|(k, x)| vec![text(&k), text(&x)])
        .collect()
}

/// SHOW BINLOG EVENTS' columns.
const BINLOG_EVENT_COLUMNS: [&str; 6] = [
    "Log_name",
    "Pos",
    "Event_type",
    "Server_id",
    "End_log_pos",
    "Info",
];

pub fn virtual_table(s: &Session, db: &str, name: &str) -> Option<Virtual> {
    let db = db.to_ascii_lowercase();
    let name = name.to_ascii_lowercase();
    if db == "mysql" && name == "user" && s.engine().table("mysql", "user").is_err() {
        // The account list (no password hashes), when the server installed
        // an account table kept in memory; a persistent store keeps its
        // accounts in the real mysql.user (all of MySQL's columns quire
        // has: plugin, authentication_string, ssl_type, account_locked,
        // ...), which is then read as it is.
        let store = s.account_store()?;
        if store.is_persistent() {
            return None;
        }
        let cols = vec![
            ("Host".to_string(), ColumnType::char(255)),
            ("User".to_string(), ColumnType::char(32)),
            ("plugin".to_string(), ColumnType::char(64)),
        ];
        let rows = store
            .list()
            .into_iter()
            .map(|(u, h)| vec![text(&h), text(&u), text("mysql_native_password")])
            .collect();
        return Some((cols, rows));
    }
    if db == "information_schema" {
        return crate::info_schema::table(s, &name);
    }
    if db == "performance_schema" && name == "threads" {
        let rows = crate::process::visible_rows(s.account().0, s.sees_all_threads());
        return Some(crate::process::performance_schema_threads(&rows));
    }
    if db != "performance_schema" {
        return None;
    }
    let cols = vec![
        ("VARIABLE_NAME".to_string(), ColumnType::varchar(64)),
        ("VARIABLE_VALUE".to_string(), ColumnType::varchar(1024)),
    ];
    let rows = match name.as_str() {
        "global_status" | "session_status" => {
            pairs(s.login_state().with_status(status_rows(s.engine())))
        }
        "global_variables" => pairs(s.variable_rows(true)),
        "session_variables" => pairs(s.variable_rows(false)),
        _ => return None,
    };
    Some((cols, rows))
}

pub(crate) fn table_db(
    s: &Session,
    n: &ObjectName,
    db: Option<&str>,
) -> SqlResult<(String, String)> {
    let (d, t) = split_name(n)?;
    let d = match (db, d) {
        (Some(x), _) => x.to_string(),
        (None, Some(x)) => x,
        (None, None) => s
            .current_db()
            .map(str::to_string)
            .ok_or_else(crate::exec::no_db)?,
    };
    Ok((d, t))
}

/// `ANALYZE TABLE t1, t2, ...`: one result row per table, as MySQL's
/// admin statements answer: `db.t | analyze | status | OK`, or, for a
/// table that cannot be analyzed, an `Error` row with the message and a
/// `status | Operation failed` row. The statistics are recalculated and
/// stored (stats.rs in the engine). Unless `local` (NO_WRITE_TO_BINLOG,
/// LOCAL), the statement goes to the binary log once some table was
/// analyzed, as MySQL writes it for replicas.
pub(crate) fn analyze(s: &mut Session, tables: &[ObjectName], local: bool) -> SqlResult<Output> {
    let mut rows = Vec::new();
    let mut names: Vec<String> = Vec::new();
    let mut any_ok = false;
    for n in tables {
        let (d, t) = table_db(s, n, None)?;
        let name = format!("{d}.{t}");
        let res = s
            .table_def(&d, &t)
            .and_then(|def| s.engine().analyze_table(&def));
        // A temporary table is this session's: replicas never see it.
        if !s.temps().contains(&d, &t) {
            names.push(format!(
                "`{}`.`{}`",
                d.replace('`', "``"),
                t.replace('`', "``")
            ));
        }
        match res {
            Ok(_) => {
                any_ok = true;
                rows.push(vec![
                    text(&name),
                    text("analyze"),
                    text("status"),
                    text("OK"),
                ]);
            }
            Err(e) => {
                let msg = match e.code {
                    1049 | 1146 => format!("Table '{name}' doesn't exist"),
                    _ => e.message,
                };
                rows.push(vec![
                    text(&name),
                    text("analyze"),
                    text("Error"),
                    text(&msg),
                ]);
                rows.push(vec![
                    text(&name),
                    text("analyze"),
                    text("status"),
                    text("Operation failed"),
                ]);
            }
        }
    }
    if any_ok && !local && !names.is_empty() {
        let db = s.current_db().unwrap_or_default().to_string();
        s.engine()
            .binlog_analyze(&db, &format!("ANALYZE TABLE {}", names.join(", ")))?;
    }
    Ok(rows_out(&["Table", "Op", "Msg_type", "Msg_text"], rows))
}

pub fn describe(s: &Session, n: &ObjectName) -> SqlResult<Output> {
    columns(s, n, None, false, &Filter::None)
}

/// SHOW [FULL] COLUMNS / DESCRIBE: Field, Type, [Collation,] Null, Key,
/// Default, Extra[, Privileges, Comment] (the values are
/// information_schema.COLUMNS', `info_schema::full_columns`).
fn columns(
    s: &Session,
    n: &ObjectName,
    db: Option<&str>,
    full: bool,
    f: &Filter,
) -> SqlResult<Output> {
    let (d, t) = table_db(s, n, db)?;
    if let Some(v) = s.engine().view(&d, &t) {
        return view_columns(s, &v, full, f);
    }
    let def = s.table_def(&d, &t)?;
    let rows = crate::info_schema::full_columns(s, &def);
    short_or_full(s, rows, full, f)
}

/// Cuts full SHOW COLUMNS rows down to the short form unless FULL, then
/// applies the filter.
fn short_or_full(s: &Session, rows: Vec<Vec<Value>>, full: bool, f: &Filter) -> SqlResult<Output> {
    const FULL: [&str; 9] = [
        "Field",
        "Type",
        "Collation",
        "Null",
        "Key",
        "Default",
        "Extra",
        "Privileges",
        "Comment",
    ];
    const SHORT: [usize; 6] = [0, 1, 3, 4, 5, 6];
    let (names, rows): (Vec<&str>, Vec<Vec<Value>>) = if full {
        (FULL.to_vec(), rows)
    } else {
        (
            SHORT.iter().map(|&i| FULL[i]).collect(),
            rows.into_iter()
                .map(|r| SHORT.iter().map(|&i| r[i].clone()).collect())
                .collect(),
        )
    };
    let rows = filter(s, &names, rows, f)?;
    Ok(rows_out(&names, rows))
}

/// DESCRIBE / SHOW COLUMNS of a view: its columns as the SELECT types
/// them now; no keys or defaults (MySQL shows the base column's default
/// for a plain column; quire shows NULL).
fn view_columns(
    s: &Session,
    v: &quire_engine::ViewDef,
    full: bool,
    f: &Filter,
) -> SqlResult<Output> {
    let vis_privs = s.privileges_now();
    let rows = crate::view::columns(s, v)?
        .iter()
        .map(|c| {
            let privs = match &vis_privs {
                None => "select,insert,update,references".to_string(),
                Some(p) => {
                    let have = p.on_column(&v.db, &v.name, &c.name);
                    [
                        (crate::privilege::Privs::SELECT, "select"),
                        (crate::privilege::Privs::INSERT, "insert"),
                        (crate::privilege::Privs::UPDATE, "update"),
                        (crate::privilege::Privs::REFERENCES, "references"),
                    ]
                    .iter()
                    .filter(|(b, _)| have.has(*b))
                    .map(|(_, n)| *n)
                    .collect::<Vec<_>>()
                    .join(",")
                }
            };
            vec![
                text(&c.name),
                text(&c.ty.name()),
                crate::info_schema::column_collation(&c.ty).map_or(Value::Null, text),
                text(if c.nullable { "YES" } else { "NO" }),
                text(""),
                Value::Null,
                text(""),
                text(&privs),
                text(""),
            ]
        })
        .collect();
    short_or_full(s, rows, full, f)
}

fn innodb_status(engine: &Engine) -> String {
    let st = engine.status();
    let get = |k: &str| {
        st.iter()
            .find(|(n, _)| n == k)
            .map(|(_, v)| *v)
            .unwrap_or(0)
    };
    let lsn = get("Innodb_lsn_current");
    let ckpt = get("Innodb_lsn_last_checkpoint");
    let flushed = st
        .iter()
        .find(|(n, _)| n == "Innodb_lsn_flushed")
        .map(|(_, v)| *v)
        .unwrap_or(lsn);
    let pending = get("Innodb_data_pending_writes");
    let now = expr::now_utc().format_fsp(0);
    format!(
        "\n=====================================\n{now} INNODB MONITOR OUTPUT\n=====================================\n\
---\nLOG\n---\n\
Log sequence number          {lsn}\n\
Log buffer assigned up to    {lsn}\n\
Log flushed up to            {flushed}\n\
Last checkpoint at           {ckpt}\n\
{log_waits} log waits\n\
----------------------\nBUFFER POOL AND MEMORY\n----------------------\n\
Modified db pages  {dirty}\n\
Pending writes: LRU 0, flush list {pending}, single page 0\n\
Pending writes {pending}\n\
----------------------------\nEND OF INNODB MONITOR OUTPUT\n============================\n",
        log_waits = get("Innodb_log_waits"),
        dirty = get("Innodb_buffer_pool_pages_dirty"),
    )
}

pub fn show(s: &mut Session, sh: &Show) -> SqlResult<Output> {
    let engine = s.engine().clone();
    match sh {
        Show::Databases(f) => {
            let privs = s.privileges();
            // Only databases the account has some privilege in, unless
            // it holds SHOW DATABASES (MySQL).
            let visible = |d: &str| {
                privs.as_ref().is_none_or(|p| {
                    p.global_effective().has(crate::privilege::Privs::SHOW_DB)
                        || d.eq_ignore_ascii_case("information_schema")
                        || d.eq_ignore_ascii_case("performance_schema")
                        || p.any_in_db(d)
                })
            };
            let mut rows: Vec<Vec<Value>> = engine
                .databases()
                .iter()
                .filter(|d| visible(d))
                .map(|d| vec![text(d)])
                .collect();
            rows.sort_by(|a, b| a[0].to_string().cmp(&b[0].to_string()));
            let rows = filter(s, &["Database"], rows, f)?;
            Ok(rows_out(&["Database"], rows))
        }
        Show::Tables {
            db,
            full,
            filter: f,
        } => {
            let db = match db {
                Some(d) => d.clone(),
                None => s
                    .current_db()
                    .map(str::to_string)
                    .ok_or_else(crate::exec::no_db)?,
            };
            let col = format!("Tables_in_{db}");
            let privs = s.privileges();
            let views: Vec<(String, &str)> = engine
                .views(&db)
                .iter()
                .map(|v| (v.name.clone(), "VIEW"))
                .collect();
            let mut rows: Vec<Vec<Value>> = engine
                .tables(&db)?
                .iter()
                .map(|t| (t.name.clone(), "BASE TABLE"))
                .chain(views)
                .filter(|(n, _)| privs.as_ref().is_none_or(|p| p.any_on_table(&db, n)))
                .map(|(n, kind)| {
                    let mut r = vec![text(&n)];
                    if *full {
                        r.push(text(kind));
                    }
                    r
                })
                .collect();
            rows.sort_by(|a, b| a[0].to_string().cmp(&b[0].to_string()));
            let names: Vec<&str> = if *full {
                vec![col.as_str(), "Table_type"]
            } else {
                vec![col.as_str()]
            };
            let rows = filter(s, &names, rows, f)?;
            Ok(rows_out(&names, rows))
        }
        Show::Columns {
            table,
            db,
            full,
            filter: f,
        } => columns(s, table, db.as_deref(), *full, f),
        Show::TableStatus { db, filter: f } => {
            let db = match db {
                Some(d) => d.clone(),
                None => s
                    .current_db()
                    .map(str::to_string)
                    .ok_or_else(crate::exec::no_db)?,
            };
            if !engine.databases().contains(&db) {
                return Err(EngineError::new(
                    1049,
                    "42000",
                    format!("Unknown database '{db}'"),
                ));
            }
            let (names, rows) = crate::info_schema::table_status(s, &db);
            let rows = filter(s, &names, rows, f)?;
            let mut out = rows_out(&names, rows);
            if let Output::Rows { columns, .. } = &mut out {
                for c in columns.iter_mut().skip(2).take(9) {
                    if c.name != "Row_format" {
                        c.ty = ColumnType::BigInt { unsigned: true };
                    }
                }
            }
            Ok(out)
        }
        Show::CreateView(n) => {
            let (d, t) = table_db(s, n, None)?;
            match engine.view(&d, &t) {
                Some(v) => Ok(crate::view::show_create(s, &v)),
                None if engine.table(&d, &t).is_ok() => {
                    Err(quire_engine::view::err_wrong_object(&d, &t, "VIEW"))
                }
                None => Err(quire_engine::view::err_no_view(&d, &t)),
            }
        }
        Show::CreateTable(n) => {
            let (d, t) = table_db(s, n, None)?;
            if let Some(v) = engine.view(&d, &t) {
                return Ok(crate::view::show_create(s, &v));
            }
            let def = s.table_def(&d, &t)?;
            // MySQL shows the next auto-increment value once it is past 1.
            let next = match def.auto_increment_column() {
                Some(_) => Some(engine.peek_auto_increment(def.id)?),
                None => None,
            };
            Ok(rows_out(
                &["Table", "Create Table"],
                vec![vec![text(&def.name), text(&def.create_sql_with(next))]],
            ))
        }
        Show::CreateDatabase(db) => {
            if !engine
                .databases()
                .iter()
                .any(|d| d.eq_ignore_ascii_case(db))
            {
                return Err(EngineError::new(
                    1049,
                    "42000",
                    format!("Unknown database '{db}'"),
                ));
            }
            Ok(rows_out(
                &["Database", "Create Database"],
                vec![vec![
                    text(db),
                    text(&{
                        let c = s.database_collation(db);
                        format!(
                            "CREATE DATABASE `{db}` /*!40100 DEFAULT CHARACTER SET {} COLLATE {} */ /*!80016 DEFAULT ENCRYPTION='N' */",
                            c.charset().name(),
                            c.name()
                        )
                    }),
                ]],
            ))
        }
        Show::Variables { global, filter: f } => {
            let rows = pairs(s.variable_rows(*global));
            let names = ["Variable_name", "Value"];
            let rows = filter(s, &names, rows, f)?;
            Ok(rows_out(&names, rows))
        }
        Show::Status { filter: f, .. } => {
            let rows = pairs(s.login_state().with_status(status_rows(&engine)));
            let names = ["Variable_name", "Value"];
            let rows = filter(s, &names, rows, f)?;
            Ok(rows_out(&names, rows))
        }
        Show::EngineInnodbStatus => Ok(rows_out(
            &["Type", "Name", "Status"],
            vec![vec![
                text("InnoDB"),
                text(""),
                text(&innodb_status(&engine)),
            ]],
        )),
        Show::BinaryLogs => {
            let Some(b) = engine.binlog() else {
                return Err(EngineError::new(
                    1381,
                    "HY000",
                    "You are not using binary logging",
                ));
            };
            let rows = b
                .files()?
                .into_iter()
                .map(|(n, sz)| vec![text(&n), Value::UInt(sz), text("No")])
                .collect();
            let mut out = rows_out(&["Log_name", "File_size", "Encrypted"], rows);
            if let Output::Rows { columns, .. } = &mut out {
                columns[1].ty = ColumnType::BigInt { unsigned: true };
            }
            Ok(out)
        }
        Show::Replicas { legacy } => {
            let names: [&str; 5] = if *legacy {
                ["Server_id", "Host", "Port", "Master_id", "Slave_UUID"]
            } else {
                ["Server_Id", "Host", "Port", "Source_Id", "Replica_UUID"]
            };
            let rows = crate::replicas::list()
                .into_iter()
                .map(|(_, r)| {
                    vec![
                        Value::UInt(u64::from(r.server_id)),
                        text(&r.host),
                        Value::UInt(u64::from(r.port)),
                        Value::UInt(u64::from(r.source_id)),
                        text(""),
                    ]
                })
                .collect();
            let mut out = rows_out(&names, rows);
            if let Output::Rows { columns, .. } = &mut out {
                for i in [0, 2, 3] {
                    columns[i].ty = ColumnType::BigInt { unsigned: true };
                }
            }
            Ok(out)
        }
        Show::BinlogEvents {
            file,
            from,
            offset,
            limit,
        } => {
            let Some(b) = engine.binlog() else {
                // MySQL answers an empty set without a binary log.
                return Ok(rows_out(&BINLOG_EVENT_COLUMNS, Vec::new()));
            };
            let rows = b
                .show_events(file.as_deref(), *from, *offset, *limit)?
                .into_iter()
                .map(|e| {
                    vec![
                        text(&e.log_name),
                        Value::UInt(e.pos),
                        text(e.event_type),
                        Value::UInt(u64::from(e.server_id)),
                        Value::UInt(e.end_log_pos),
                        text(&e.info),
                    ]
                })
                .collect();
            let mut out = rows_out(&BINLOG_EVENT_COLUMNS, rows);
            if let Output::Rows { columns, .. } = &mut out {
                for i in [1, 3, 4] {
                    columns[i].ty = ColumnType::BigInt { unsigned: true };
                }
            }
            Ok(out)
        }
        Show::MasterStatus => {
            let rows = match engine.binlog() {
                Some(b) => {
                    let (f, pos) = b.position();
                    vec![vec![
                        text(&f),
                        Value::UInt(pos),
                        text(""),
                        text(""),
                        text(&b.gtids.executed_set().to_text()),
                    ]]
                }
                None => Vec::new(),
            };
            let mut out = rows_out(
                &[
                    "File",
                    "Position",
                    "Binlog_Do_DB",
                    "Binlog_Ignore_DB",
                    "Executed_Gtid_Set",
                ],
                rows,
            );
            if let Output::Rows { columns, .. } = &mut out {
                columns[1].ty = ColumnType::BigInt { unsigned: true };
            }
            Ok(out)
        }
        Show::Warnings | Show::Errors => {
            let only_errors = matches!(sh, Show::Errors);
            let rows = s
                .warnings()
                .iter()
                .filter(|(l, _, _)| !only_errors || l == "Error")
                .map(|(l, c, m)| vec![text(l), Value::UInt(u64::from(*c)), text(m)])
                .collect();
            let mut out = rows_out(&["Level", "Code", "Message"], rows);
            if let Output::Rows { columns, .. } = &mut out {
                columns[1].ty = ColumnType::Int { unsigned: true };
            }
            Ok(out)
        }
        Show::Index(n) => {
            let (d, t) = table_db(s, n, None)?;
            let def = s.table_def(&d, &t)?;
            // Cardinality: the optimizer statistics' distinct values of
            // each prefix (stats.rs; exact row counts, sampled distincts).
            let stats = engine.table_stats(&def);
            let mut rows = Vec::new();
            for k in crate::info_schema::key_parts(&def, &stats) {
                let tail = k.tail();
                let mut row = vec![
                    text(&def.name),
                    Value::Int(i64::from(!k.unique)),
                    text(k.index),
                    Value::Int(k.seq as i64),
                    text(&k.column.name),
                    text("A"),
                    k.cardinality,
                    k.sub_part,
                ];
                row.extend(tail);
                rows.push(row);
            }
            Ok(rows_out(
                &[
                    "Table",
                    "Non_unique",
                    "Key_name",
                    "Seq_in_index",
                    "Column_name",
                    "Collation",
                    "Cardinality",
                    "Sub_part",
                    "Packed",
                    "Null",
                    "Index_type",
                    "Comment",
                    "Index_comment",
                    "Visible",
                    "Expression",
                ],
                rows,
            ))
        }
        Show::NoObjects { columns, filter: f } => {
            let rows = filter(s, columns, Vec::new(), f)?;
            Ok(rows_out(columns, rows))
        }
        Show::ReplicaStatus { columns } => {
            Ok(rows_out(columns, replica_status_rows(s.engine(), columns)))
        }
        Show::Engines => {
            let rows = crate::info_schema::engines()
                .iter()
                .map(|r| r.iter().map(|x| text(x)).collect())
                .collect();
            Ok(rows_out(
                &[
                    "Engine",
                    "Support",
                    "Comment",
                    "Transactions",
                    "XA",
                    "Savepoints",
                ],
                rows,
            ))
        }
        Show::Charset(f) => {
            let names = ["Charset", "Description", "Default collation", "Maxlen"];
            let rows = crate::info_schema::character_sets()
                .iter()
                .map(|(n, c, d, m)| vec![text(n), text(d), text(c), Value::UInt(*m)])
                .collect();
            let rows = filter(s, &names, rows, f)?;
            Ok(rows_out(&names, rows))
        }
        Show::Collation(f) => {
            let names = [
                "Collation",
                "Charset",
                "Id",
                "Default",
                "Compiled",
                "Sortlen",
                "Pad_attribute",
            ];
            let rows = crate::info_schema::collations()
                .iter()
                .map(|(n, cs, id, def, len, pad)| {
                    vec![
                        text(n),
                        text(cs),
                        Value::UInt(*id),
                        text(if *def { "Yes" } else { "" }),
                        text("Yes"),
                        Value::UInt(*len),
                        text(pad),
                    ]
                })
                .collect();
            let rows = filter(s, &names, rows, f)?;
            Ok(rows_out(&names, rows))
        }
        Show::Processlist { full } => {
            let rows = crate::process::visible_rows(s.account().0, s.sees_all_threads());
            Ok(rows_out(
                &[
                    "Id", "User", "Host", "db", "Command", "Time", "State", "Info",
                ],
                crate::process::show_rows(&rows, *full),
            ))
        }
    }
}
