//! # Session: one connection's SQL state and the statement dispatcher
//!
//! A [`Session`] owns what MySQL keeps per connection: the current
//! database, `autocommit`, the open transaction, the isolation level,
//! session and user variables, `LAST_INSERT_ID()`, the warnings of the last
//! statement and the prepared statements.
//!
//! Every statement goes parse (`parse.rs`) → dispatch (here) → plan and
//! execute (`exec.rs`, `ddl.rs`, `show.rs`).
//!
//! ## Transactions
//! Without `BEGIN`, and with `autocommit=1`, each statement runs in a
//! transaction of its own that commits when the statement succeeds and is
//! rolled back when it fails. With `autocommit=0` the first statement
//! opens a transaction that stays open until COMMIT or ROLLBACK. Inside a
//! transaction, each statement starts with a savepoint: a failing
//! statement (1062 duplicate key, 1205 lock wait timeout, a bad value, ...)
//! rolls back only its own changes, as InnoDB does; a deadlock (1213) rolls
//! back the whole transaction. `BEGIN` and DDL commit an open transaction
//! first (MySQL's implicit commit).
//!
//! Named savepoints (`SAVEPOINT`, `ROLLBACK TO [SAVEPOINT]`, `RELEASE
//! SAVEPOINT`) are positions in the transaction's undo list, kept here by
//! name with the transaction's id: ROLLBACK TO undoes the writes since and
//! drops the later savepoints but keeps the row locks (InnoDB); an unknown
//! name is 1305.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

use quire_engine::types::Collation;
use quire_engine::{
    ColumnType, Engine, EngineError, Interrupt, Isolation, LockMode, TableDef, Txn, Value,
};
use sqlparser::ast::{self, Expr, FlushType, ObjectType, Statement};

use crate::account::{self, AccountStore};
use crate::exec::{self, Ctx, Virtual};
use crate::expr::{self, Compiler, Env, Row};
use crate::parse::{self, Command, Parsed, Scope, SetItem};
use crate::process::{self, Phase, Proc};
use crate::{ColumnMeta, Output, PreparedInfo, RowSink, SqlResult};

/// Statement counters the SQL layer keeps (SHOW STATUS `Com_*`).
#[derive(Default)]
pub(crate) struct Counters {
    pub select: AtomicU64,
    pub insert: AtomicU64,
    pub update: AtomicU64,
    pub delete: AtomicU64,
    pub replace: AtomicU64,
    pub begin: AtomicU64,
    pub set_option: AtomicU64,
    pub questions: AtomicU64,
    pub connections: AtomicU64,
}

pub(crate) fn counters() -> &'static Counters {
    static C: OnceLock<Counters> = OnceLock::new();
    C.get_or_init(Counters::default)
}

pub(crate) fn started() -> Instant {
    static S: OnceLock<Instant> = OnceLock::new();
    *S.get_or_init(Instant::now)
}

/// `SET GLOBAL` of variables the SQL layer owns (sql_mode, ...).
fn global_overrides() -> &'static Mutex<HashMap<String, String>> {
    static G: OnceLock<Mutex<HashMap<String, String>>> = OnceLock::new();
    G.get_or_init(|| Mutex::new(HashMap::new()))
}

static NEXT_CONN: AtomicU64 = AtomicU64::new(1);

pub(crate) const VERSION: &str = "8.0.36-quire";

/// Session variables the SQL layer knows, with their defaults.
pub(crate) const SESSION_VARS: &[(&str, &str)] = &[
    ("auto_increment_increment", "1"),
    ("auto_increment_offset", "1"),
    ("autocommit", "ON"),
    ("character_set_client", "utf8mb4"),
    ("character_set_connection", "utf8mb4"),
    ("character_set_database", "utf8mb4"),
    ("character_set_filesystem", "binary"),
    ("character_set_results", "utf8mb4"),
    ("character_set_server", "utf8mb4"),
    ("character_set_system", "utf8mb3"),
    ("collation_connection", "utf8mb4_0900_ai_ci"),
    ("collation_database", "utf8mb4_0900_ai_ci"),
    ("collation_server", "utf8mb4_0900_ai_ci"),
    ("default_storage_engine", "InnoDB"),
    // gtid_mode and enforce_gtid_consistency are the config registry's;
    // gtid_executed and gtid_purged are read from the engine (`gtid_var`).
    ("foreign_key_checks", "ON"),
    ("gtid_executed", ""),
    ("gtid_next", "AUTOMATIC"),
    ("gtid_purged", ""),
    ("init_connect", ""),
    ("interactive_timeout", "28800"),
    ("license", "Apache-2.0"),
    ("lower_case_table_names", "0"),
    ("mandatory_roles", ""),
    ("max_allowed_packet", "67108864"),
    ("max_execution_time", "0"),
    ("net_buffer_length", "16384"),
    ("net_read_timeout", "30"),
    ("net_write_timeout", "60"),
    ("performance_schema", "OFF"),
    ("query_cache_size", "0"),
    ("query_cache_type", "OFF"),
    // The engine's (auto.cnf): see `Session::sysvar`.
    ("server_uuid", ""),
    ("session_track_gtids", "OFF"),
    ("sql_auto_is_null", "OFF"),
    ("sql_mode", "ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION"),
    ("sql_notes", "ON"),
    ("sql_quote_show_create", "ON"),
    ("sql_safe_updates", "OFF"),
    ("sql_select_limit", "18446744073709551615"),
    ("sql_warnings", "OFF"),
    ("system_time_zone", "UTC"),
    ("time_zone", "SYSTEM"),
    ("transaction_isolation", "REPEATABLE-READ"),
    ("transaction_read_only", "OFF"),
    ("tx_isolation", "REPEATABLE-READ"),
    ("tx_read_only", "OFF"),
    ("unique_checks", "ON"),
    ("version", VERSION),
    ("version_comment", "quire"),
    ("version_compile_machine", "x86_64"),
    ("version_compile_os", "Linux"),
    ("wait_timeout", "28800"),
];

/// Variables SET must refuse at any scope (1238).
const READ_ONLY_VARS: &[&str] = &[
    "gtid_executed",
    "server_uuid",
    "version",
    "version_comment",
    "license",
    "system_time_zone",
    "character_set_system",
    "lower_case_table_names",
    "version_compile_os",
    "version_compile_machine",
];

/// Variables quire accepts but does not act on: SET takes only the value
/// that behaves as quire does (the default), and refuses any other with
/// 1235 naming it, instead of answering OK and behaving differently.
/// `mandatory_roles`: quire grants no role to every account.
fn inert_value_ok(name: &str, text: &str) -> Option<bool> {
    let up = text.trim().to_ascii_uppercase();
    let flag = |want: bool| on_off(&up) == Some(want) || up == "DEFAULT";
    Some(match name {
        "sql_select_limit" => up == "DEFAULT" || up == "18446744073709551615",
        "sql_safe_updates" | "sql_auto_is_null" => flag(false),
        "sql_log_bin" => flag(true),
        // SHOW CREATE TABLE always quotes names (mariadb-dump sets it ON).
        "sql_quote_show_create" => flag(true),
        "auto_increment_increment" | "auto_increment_offset" => up == "1" || up == "DEFAULT",
        "mandatory_roles" => up.is_empty() || up == "DEFAULT",
        "gtid_next" => up == "AUTOMATIC" || up == "DEFAULT",
        "gtid_purged" => up.is_empty(),
        _ => return None,
    })
}

fn check_inert(name: &str, lname: &str, text: &str) -> SqlResult<()> {
    if lname == "max_execution_time" {
        // Milliseconds, 0 = none (process.rs applies it to SELECTs).
        let t = text.trim().trim_matches('\'');
        let ok = t.eq_ignore_ascii_case("DEFAULT")
            || (!t.is_empty() && t.len() <= 10 && t.bytes().all(|b| b.is_ascii_digit()));
        return if ok {
            Ok(())
        } else {
            Err(EngineError::new(
                1232,
                "42000",
                format!("Incorrect argument type to variable '{name}'"),
            ))
        };
    }
    match inert_value_ok(lname, text) {
        Some(false) => Err(EngineError::not_supported(format!("{name} = {text}"))),
        _ => Ok(()),
    }
}

/// 1231 for `SET time_zone = NULL`, 1232 for a number (the variable is
/// a string, as MySQL's).
fn bad_zone_value(v: &Value) -> Option<EngineError> {
    match v {
        Value::Null => Some(EngineError::new(
            1231,
            "42000",
            "Variable 'time_zone' can't be set to the value of 'NULL'",
        )),
        Value::Int(_) | Value::UInt(_) | Value::Decimal(_) | Value::Double(_) | Value::Float(_) => {
            Some(EngineError::new(
                1232,
                "42000",
                "Incorrect argument type to variable 'time_zone'",
            ))
        }
        _ => None,
    }
}

/// Whether a SET value is the keyword DEFAULT.
fn is_default(v: &Value, text: &str) -> bool {
    matches!(v, Value::Bytes(_)) && text.eq_ignore_ascii_case("DEFAULT")
}

/// `SET GLOBAL time_zone`: checked like the session value (1298), kept
/// as the default of sessions that connect later (DEFAULT: back to
/// `--default-time-zone`, i.e. SYSTEM).
fn set_global_time_zone(v: &Value, text: &str) -> SqlResult<()> {
    if let Some(e) = bad_zone_value(v) {
        return Err(e);
    }
    let Ok(mut g) = global_overrides().lock() else {
        return Err(EngineError::internal("global variables are unavailable"));
    };
    if is_default(v, text) {
        g.remove("time_zone");
        return Ok(());
    }
    let z = crate::tz::Zone::parse(text).ok_or_else(|| crate::tz::unknown_zone(text))?;
    g.insert("time_zone".into(), z.name().to_string());
    Ok(())
}

/// A shorter-lived handle on the row sink, for one run of a statement.
fn reborrow<'a>(sink: &'a mut Option<&mut dyn RowSink>) -> Option<&'a mut dyn RowSink> {
    match sink {
        Some(s) => Some(&mut **s),
        None => None,
    }
}

/// Times a statement is run again after 1615 (`run_with_func_warnings`).
const REPREPARE_TRIES: usize = 3;

struct Prepared {
    /// Shared, not cloned per execution: cloning a tree is a recursion too.
    parsed: Arc<Parsed>,
    /// `/*+ MAX_EXECUTION_TIME(n) */` of the statement text.
    hint_ms: Option<u64>,
    /// The statement text, for the process list's Info while it executes.
    text: Arc<str>,
}

/// One connection's SQL state.
pub struct Session {
    engine: Engine,
    db: Option<String>,
    user: String,
    /// The matched account's host pattern (CURRENT_USER()).
    account_host: String,
    /// Where the client connects from (USER()).
    client_host: String,
    accounts: Option<Arc<dyn AccountStore>>,
    /// The effective privileges (the account's and its active roles') as
    /// last computed, with the store's privilege version then
    /// (`privilege.rs`); `None` after SET ROLE.
    privs: Option<(u64, Arc<crate::privilege::AccountPrivs>)>,
    /// The active roles (`account/role.rs`), sorted.
    roles: Vec<crate::role_graph::AuthId>,
    conn_id: u64,
    autocommit: bool,
    txn: Option<Txn>,
    isolation: Isolation,
    /// `SET TRANSACTION ...` without scope: the next transaction only.
    next_isolation: Option<Isolation>,
    next_read_only: Option<bool>,
    vars: HashMap<String, String>,
    /// CREATE TEMPORARY TABLE's tables (temp.rs).
    temps: crate::temp::TempTables,
    /// User variables and LAST_INSERT_ID (`uservars.rs`).
    live: crate::uservars::Live,
    /// `ROW_COUNT()`: the last statement's affected rows, -1 after a
    /// result set or an error.
    row_count: i64,
    /// `FOUND_ROWS()`: rows of the last SELECT (before its LIMIT with
    /// SQL_CALC_FOUND_ROWS).
    found_rows: u64,
    /// The client connected with CLIENT_FOUND_ROWS: UPDATE and ODKU
    /// report rows found rather than rows changed.
    client_found_rows: bool,
    warnings: Vec<(String, u16, String)>,
    prepared: HashMap<u32, Prepared>,
    next_stmt: u32,
    /// KILL / max_execution_time reach the engine through this (process.rs).
    interrupt: Interrupt,
    /// This connection's process-list entry (set by the server).
    proc: Option<Arc<Proc>>,
    /// The running statement's MAX_EXECUTION_TIME hint.
    hint_ms: Option<u64>,
    /// Named savepoints, oldest first, each with the id of the transaction
    /// it belongs to (entries of an ended transaction are dropped on use).
    savepoints: Vec<(u64, String, quire_engine::Savepoint)>,
    /// Login facts the server hands over (`Ssl_*`, sandbox mode).
    login: crate::login_state::LoginState,
    /// Set while a write through a view runs (`view_dml.rs`).
    view_check: Option<crate::ctx::ViewCheck>,
}

fn iso_name(i: Isolation) -> &'static str {
    match i {
        Isolation::ReadUncommitted => "READ-UNCOMMITTED",
        Isolation::ReadCommitted => "READ-COMMITTED",
        Isolation::RepeatableRead => "REPEATABLE-READ",
        Isolation::Serializable => "SERIALIZABLE",
    }
}

/// A `transaction_isolation` value: one of the four names or the enum's
/// position (0..3), as MySQL accepts them.
fn parse_iso(s: &str) -> SqlResult<Isolation> {
    match s.to_ascii_uppercase().as_str() {
        "READ-UNCOMMITTED" | "0" => Ok(Isolation::ReadUncommitted),
        "READ-COMMITTED" | "1" => Ok(Isolation::ReadCommitted),
        "REPEATABLE-READ" | "2" => Ok(Isolation::RepeatableRead),
        "SERIALIZABLE" | "3" => Ok(Isolation::Serializable),
        _ => Err(EngineError::new(
            1231,
            "42000",
            format!("Variable 'transaction_isolation' can't be set to the value of '{s}'"),
        )),
    }
}

/// SET GLOBAL of the isolation level: the default of sessions that
/// connect later, under both of its names.
fn set_global_iso(i: Isolation) {
    if let Ok(mut g) = global_overrides().lock() {
        for k in ["transaction_isolation", "tx_isolation"] {
            g.insert(k.into(), iso_name(i).into());
        }
    }
}

fn on_off(s: &str) -> Option<bool> {
    match s.to_ascii_uppercase().as_str() {
        "1" | "ON" | "TRUE" => Some(true),
        "0" | "OFF" | "FALSE" => Some(false),
        _ => None,
    }
}

/// A character set the client may send and read in: quire speaks UTF-8
/// on the wire (utf8mb4, or its subsets utf8mb3 and ascii; `binary`
/// passes bytes through). Others would need converting every statement
/// and result, which quire does not do: refused by name (1115 for an
/// unknown one).
fn client_charset(name: &str) -> SqlResult<quire_engine::types::Charset> {
    use quire_engine::types::Charset;
    let cs = crate::collate::charset(name)?;
    match cs {
        Charset::Utf8mb4 | Charset::Utf8mb3 | Charset::Ascii | Charset::Binary => Ok(cs),
        Charset::Latin1 => Err(EngineError::not_supported(format!(
            "client character set {} (quire exchanges utf8mb4 text)",
            cs.name()
        ))),
    }
}

/// The collation a `SET` of a collation (`charset`: false) or character
/// set variable names: DEFAULT is MySQL 8.0's utf8mb4_0900_ai_ci, a
/// character set its default collation; 1115 / 1273 for unknown names.
fn collation_value(v: &Value, text: &str, charset: bool) -> SqlResult<Collation> {
    if is_default(v, text) {
        Ok(Collation::Utf8mb4_0900AiCi)
    } else if charset {
        Ok(crate::collate::charset(text)?.default_collation())
    } else {
        crate::collate::collation(text)
    }
}

fn var_value(s: &str) -> Value {
    if let Ok(i) = s.parse::<i64>() {
        return Value::Int(i);
    }
    if let Ok(u) = s.parse::<u64>() {
        return Value::UInt(u);
    }
    match s {
        "ON" => Value::Int(1),
        "OFF" => Value::Int(0),
        _ => Value::text(s),
    }
}

pub(crate) fn done(affected: u64, last_insert_id: u64, warnings: u16, info: String) -> Output {
    Output::Done {
        affected_rows: affected,
        last_insert_id,
        warnings,
        info,
    }
}

impl Env for Session {
    fn sysvar(&self, name: &str, scope: Scope) -> SqlResult<Value> {
        let n = name.to_ascii_lowercase();
        match n.as_str() {
            "autocommit" if scope != Scope::Global => {
                return Ok(Value::Int(i64::from(self.autocommit)))
            }
            "transaction_isolation" | "tx_isolation" if scope != Scope::Global => {
                return Ok(Value::text(iso_name(self.isolation)))
            }
            "last_insert_id" | "identity" => return Ok(Value::UInt(self.live.last_insert_id())),
            "warning_count" => return Ok(Value::Int(self.warnings.len() as i64)),
            "error_count" => return Ok(Value::Int(0)),
            "pseudo_thread_id" => return Ok(Value::UInt(self.conn_id)),
            "server_uuid" => return Ok(Value::text(self.engine.server_uuid())),
            "hostname" => return Ok(Value::text("localhost")),
            "collation_database" | "character_set_database" if scope != Scope::Global => {
                let c = match self.db.as_deref() {
                    Some(db) => self.database_collation(db),
                    None => self.server_collation(),
                };
                return Ok(Value::text(if n == "collation_database" {
                    c.name()
                } else {
                    c.charset().name()
                }));
            }
            _ => {}
        }
        // Enumerations whose values include OFF/ON: read as text (MySQL's
        // @@gtid_mode is 'OFF', not 0).
        if let Some(v) = self.engine.gtid_var(&n) {
            return Ok(Value::text(&v));
        }
        if scope != Scope::Global {
            if let Some(v) = self.vars.get(&n) {
                return Ok(var_value(v));
            }
        }
        if let Some(v) = self.engine.config_value(&n) {
            return Ok(var_value(&v));
        }
        if let Some(v) = global_overrides()
            .lock()
            .ok()
            .and_then(|g| g.get(&n).cloned())
        {
            return Ok(var_value(&v));
        }
        if let Some((_, v)) = SESSION_VARS.iter().find(|(k, _)| *k == n) {
            return Ok(var_value(v));
        }
        Err(EngineError::new(
            1193,
            "HY000",
            format!("Unknown system variable '{name}'"),
        ))
    }
    fn live(&self) -> crate::uservars::Live {
        self.live.clone()
    }
    fn connection_collation(&self) -> Collation {
        // Read per compiled literal: the session map holds the canonical
        // name (set_connection_collation), no sysvar lookup needed.
        self.vars
            .get("collation_connection")
            .and_then(|v| Collation::ALL.into_iter().find(|c| c.name() == v))
            .unwrap_or(Collation::Utf8mb4_0900AiCi)
    }
    fn row_count(&self) -> i64 {
        self.row_count
    }
    fn found_rows(&self) -> u64 {
        self.found_rows
    }
    fn database(&self) -> Option<String> {
        self.db.clone()
    }
    fn user(&self) -> String {
        format!("{}@{}", self.user, self.client_host)
    }
    fn current_user(&self) -> String {
        format!("{}@{}", self.user, self.account_host)
    }
    fn gtid_state(&self) -> Option<std::sync::Arc<quire_engine::binlog::gtid::GtidState>> {
        self.engine.binlog().map(|b| b.gtids.clone())
    }
    fn connection_id(&self) -> u64 {
        self.conn_id
    }
    fn column_def(&self, db: &str, table: &str, col: &str) -> Option<quire_engine::ColumnDef> {
        let t = self.engine.table(db, table).ok()?;
        let i = t.column(col)?;
        Some(t.columns[i].clone())
    }
    fn current_role(&self) -> String {
        let live = match self.accounts.as_deref() {
            Some(store) => {
                let g = store.role_graph();
                account::role::live_roles(&g, &self.me_id(), &self.roles)
            }
            None => Vec::new(),
        };
        crate::role_graph::current_role_text(&live)
    }
}

impl Session {
    /// `user` is the authenticated account name (for CURRENT_USER()).
    pub fn new(engine: Engine, user: &str) -> Session {
        started();
        counters().connections.fetch_add(1, Ordering::Relaxed);
        let mut vars = HashMap::new();
        if let Ok(g) = global_overrides().lock() {
            for (k, v) in g.iter() {
                vars.insert(k.clone(), v.clone());
            }
        }
        // A session value MySQL copies from the global value at connect.
        let k = "cte_max_recursion_depth";
        if let Some(v) = engine.config_value(k) {
            vars.entry(k.to_string()).or_insert(v);
        }
        // SET GLOBAL autocommit / transaction_isolation are the defaults of
        // sessions that connect later (MySQL); they are kept as fields.
        let autocommit = vars
            .get("autocommit")
            .and_then(|v| on_off(v))
            .unwrap_or(true);
        let isolation = vars
            .get("transaction_isolation")
            .or_else(|| vars.get("tx_isolation"))
            .and_then(|v| parse_iso(v).ok())
            .unwrap_or(Isolation::RepeatableRead);
        Session {
            engine,
            db: None,
            user: user.to_string(),
            account_host: "%".to_string(),
            client_host: "localhost".to_string(),
            accounts: None,
            privs: None,
            roles: Vec::new(),
            conn_id: NEXT_CONN.fetch_add(1, Ordering::Relaxed),
            autocommit,
            txn: None,
            isolation,
            next_isolation: None,
            next_read_only: None,
            vars,
            temps: crate::temp::TempTables::default(),
            live: Default::default(),
            row_count: -1,
            found_rows: 0,
            client_found_rows: false,
            warnings: Vec::new(),
            prepared: HashMap::new(),
            next_stmt: 1,
            interrupt: Interrupt::new(),
            proc: None,
            hint_ms: None,
            savepoints: Vec::new(),
            login: Default::default(),
            view_check: None,
        }
    }
    /// The client's CLIENT_FOUND_ROWS flag: the affected rows of UPDATE
    /// and INSERT ... ON DUPLICATE KEY UPDATE (and `ROW_COUNT()`) then
    /// count rows found, not only rows changed, as MySQL.
    pub fn set_client_found_rows(&mut self, on: bool) {
        self.client_found_rows = on;
    }
    /// Affected rows of a write as the client asked to count them.
    fn affected(&self, r: &exec::WriteResult) -> u64 {
        if self.client_found_rows {
            r.affected + r.unchanged
        } else {
            r.affected
        }
    }
    /// The session's interrupt: `KILL` sets it, statements poll it.
    pub fn interrupt(&self) -> &Interrupt {
        &self.interrupt
    }
    /// Links the session to its process-list entry: `CONNECTION_ID()`
    /// becomes the entry's id and the entry's interrupt is used.
    pub fn set_process(&mut self, p: Arc<Proc>) {
        self.conn_id = p.id;
        let mdl_wait = self.interrupt.mdl_wait_timeout();
        self.interrupt = p.interrupt().clone();
        self.interrupt.set_mdl_wait_timeout(mdl_wait);
        p.set_db(self.db.as_deref());
        self.proc = Some(p);
    }
    pub fn engine(&self) -> &Engine {
        &self.engine
    }
    /// Installs the account table that CREATE USER, DROP USER, GRANT ALL,
    /// ALTER USER, SET PASSWORD and SHOW GRANTS work on (the server's).
    /// Without one those statements are error 1235.
    pub fn set_account_store(&mut self, store: Arc<dyn AccountStore>) {
        self.accounts = Some(store);
        self.privs = None;
        self.activate_login_roles();
    }
    /// The authenticated identity: `account_host` is the host pattern of
    /// the account that matched (`CURRENT_USER()` = user@account_host),
    /// `client_host` where the client connects from (`USER()`). The
    /// defaults are `%` and `localhost`.
    pub fn set_identity(&mut self, account_host: &str, client_host: &str) {
        self.account_host = account_host.to_string();
        self.client_host = client_host.to_string();
        self.privs = None;
        self.activate_login_roles();
    }
    /// The account as an authorization ID (host lower-cased).
    fn me_id(&self) -> crate::role_graph::AuthId {
        (self.user.clone(), self.account_host.to_ascii_lowercase())
    }
    /// The roles a login starts with: the account's default roles, or
    /// every granted role when `activate_all_roles_on_login` is ON.
    fn activate_login_roles(&mut self) {
        self.roles = match self.accounts.as_deref() {
            Some(store) => {
                let all = self.engine.config().activate_all_roles_on_login;
                account::role::login_roles(store, &self.me_id(), all)
            }
            None => Vec::new(),
        };
    }
    /// The effective privileges, `None` when no account store is
    /// installed (an embedded session: nothing is checked). One atomic
    /// load per call unless GRANT/REVOKE/FLUSH PRIVILEGES moved the
    /// store's version or SET ROLE changed the active roles.
    pub(crate) fn privileges(&mut self) -> Option<Arc<crate::privilege::AccountPrivs>> {
        let store = self.accounts.as_ref()?;
        let v = store.privilege_version();
        if let Some((cv, p)) = &self.privs {
            if *cv == v && v != u64::MAX {
                return Some(p.clone());
            }
        }
        let p = account::role::effective_privileges(&**store, &self.me_id(), &self.roles);
        self.privs = Some((v, p.clone()));
        Some(p)
    }
    /// [`Self::privileges`] without updating the cache (for `&self`
    /// callers: the process-list views).
    pub(crate) fn privileges_now(&self) -> Option<Arc<crate::privilege::AccountPrivs>> {
        let store = self.accounts.as_ref()?;
        let v = store.privilege_version();
        match &self.privs {
            Some((cv, p)) if *cv == v && v != u64::MAX => Some(p.clone()),
            _ => Some(account::role::effective_privileges(
                &**store,
                &self.me_id(),
                &self.roles,
            )),
        }
    }
    /// Whether the session sees every thread in the process list
    /// (PROCESS; always for a session without an account store).
    pub(crate) fn sees_all_threads(&self) -> bool {
        self.privileges_now()
            .is_none_or(|a| a.global_effective().has(crate::privilege::Privs::PROCESS))
    }
    /// SET ROLE: replaces the active roles (the cached privileges are
    /// recomputed on the next check).
    fn set_role(&mut self, spec: &account::RoleSpec) -> SqlResult<Output> {
        let Some(store) = self.accounts.as_deref() else {
            return Err(EngineError::not_supported(
                "SET ROLE without a server (this session has no account table)",
            ));
        };
        self.roles = account::role::set_role(store, &self.me_id(), spec)?;
        self.privs = None;
        Ok(done(0, 0, 0, String::new()))
    }
    /// Checks that the account may run `p` (`authorize.rs`).
    fn authorize(&mut self, p: &Parsed) -> SqlResult<()> {
        let Some(privs) = self.privileges() else {
            return Ok(());
        };
        let ck = crate::privilege::Checker {
            privs: &privs,
            user: &self.user,
            account_host: &self.account_host,
            client_host: &self.client_host,
        };
        let definer = |u: &str, h: &str| self.definer_privileges(u, h);
        let tg = crate::authorize::Target {
            ck: &ck,
            db: self.db.as_deref(),
            engine: &self.engine,
            share_lock: p.share_lock,
            definer: &definer,
            depth: 0,
            temps: Some(&self.temps),
        };
        crate::authorize::check(&tg, &p.cmd)
    }
    /// The privileges a view's definer acts with: the account's own and
    /// those of its default roles; `None` when it does not exist.
    fn definer_privileges(
        &self,
        user: &str,
        host: &str,
    ) -> Option<Arc<crate::privilege::AccountPrivs>> {
        let store = self.accounts.as_deref()?;
        store.privileges(user, host)?;
        let who = (user.to_string(), host.to_ascii_lowercase());
        let all = self.engine.config().activate_all_roles_on_login;
        let roles = account::role::login_roles(store, &who, all);
        Some(account::role::effective_privileges(store, &who, &roles))
    }
    /// Whether the account holds global privilege `p` (always, for a
    /// session without an account store); for checks made outside the
    /// SQL layer (KILL, SHUTDOWN, SHOW PROCESSLIST).
    pub fn has_global_privilege(&mut self, p: crate::privilege::Privs) -> bool {
        self.privileges()
            .is_none_or(|a| a.global_effective().has(p))
    }
    /// What VERSION() and @@version say to this session (the server's
    /// compatibility answer to a client that refuses 8.0, see
    /// quire-server's login).
    pub fn set_reported_version(&mut self, v: &str) {
        self.vars.insert("version".to_string(), v.to_string());
    }
    /// `@name` (NULL when never set): what replicas announce with user
    /// variables before COM_BINLOG_DUMP (`@master_binlog_checksum`,
    /// `@master_heartbeat_period`).
    pub fn user_var(&self, name: &str) -> Value {
        self.live.get(name)
    }
    /// The connection's TLS protocol and cipher (`Ssl_version`,
    /// `Ssl_cipher` in SHOW STATUS); unset = not encrypted.
    pub fn set_tls(&mut self, version: &str, cipher: &str) {
        self.login.tls = Some((version.to_string(), cipher.to_string()));
    }
    /// The account's password has expired: MySQL's sandbox mode (every
    /// statement but ALTER USER / SET PASSWORD / SET is error 1820 until
    /// the password is reset).
    pub fn set_password_expired(&mut self, expired: bool) {
        self.login.password_expired = expired;
    }
    /// Whether the session is in sandbox mode.
    pub fn password_expired(&self) -> bool {
        self.login.password_expired
    }
    pub(crate) fn login_state(&self) -> &crate::login_state::LoginState {
        &self.login
    }
    /// The account store, if the server installed one.
    pub(crate) fn account_store(&self) -> Option<&dyn AccountStore> {
        self.accounts.as_deref()
    }
    /// The current database (COM_INIT_DB / USE).
    pub fn current_db(&self) -> Option<&str> {
        self.db.as_deref()
    }

    /// The collation a client named in its handshake (MySQL's
    /// `character_set_client`, `_connection`, `_results` and
    /// `collation_connection`). One quire does not exchange (latin1) or
    /// does not know leaves the server default, as MySQL does for an
    /// unknown number.
    pub fn set_client_collation(&mut self, id: u16) {
        let Some(c) = Collation::by_id(id) else {
            return;
        };
        if client_charset(c.charset().name()).is_err() {
            return;
        }
        for k in ["character_set_client", "character_set_results"] {
            self.vars.insert(k.into(), c.charset().name().into());
        }
        self.set_connection_collation(c);
    }

    /// `collation_connection` and `character_set_connection` together.
    fn set_connection_collation(&mut self, c: Collation) {
        self.vars
            .insert("collation_connection".into(), c.name().into());
        self.vars
            .insert("character_set_connection".into(), c.charset().name().into());
    }

    /// `collation_server` (session, then global): the default of a
    /// database created without one.
    pub(crate) fn server_collation(&self) -> Collation {
        let fallback = Collation::Utf8mb4_0900AiCi;
        match self.sysvar("collation_server", Scope::Session) {
            Ok(Value::Bytes(b)) => {
                Collation::by_name(&String::from_utf8_lossy(&b)).unwrap_or(fallback)
            }
            _ => fallback,
        }
    }

    /// A database's default collation: its own, or the server's for one
    /// created before databases had one.
    pub(crate) fn database_collation(&self, db: &str) -> Collation {
        self.engine
            .database_collation(db)
            .unwrap_or_else(|| self.server_collation())
    }

    /// The default collation of a new table `name`: its database's.
    pub(crate) fn table_default_collation(&self, name: &ast::ObjectName) -> SqlResult<Collation> {
        let (db, _) = exec::split_name(name)?;
        Ok(match db.as_deref().or(self.db.as_deref()) {
            Some(db) => self.database_collation(db),
            None => self.server_collation(),
        })
    }
    /// COM_INIT_DB.
    pub fn use_db(&mut self, db: &str) -> SqlResult<()> {
        if let Some(privs) = self.privileges() {
            let ck = crate::privilege::Checker {
                privs: &privs,
                user: &self.user,
                account_host: &self.account_host,
                client_host: &self.client_host,
            };
            crate::authorize::check_use(&ck, db)?;
        }
        // information_schema is no stored database, yet every account may
        // make it the default (CDC tools connect with it).
        let found = if db.eq_ignore_ascii_case("information_schema") {
            Some("information_schema".to_string())
        } else {
            self.engine
                .databases()
                .into_iter()
                .find(|d| d.eq_ignore_ascii_case(db))
        };
        match found {
            Some(_) => {
                self.db = Some(db.to_string());
                if let Some(p) = &self.proc {
                    p.set_db(Some(db));
                }
                Ok(())
            }
            None => Err(EngineError::new(
                1049,
                "42000",
                format!("Unknown database '{db}'"),
            )),
        }
    }
    /// COM_QUERY: one statement (a trailing ';' is allowed).
    pub fn execute(&mut self, sql: &str) -> SqlResult<Output> {
        self.execute_to(sql, None)
    }
    /// COM_QUERY with a SELECT's rows handed to `sink` as they are
    /// produced ([`Output::Streamed`]); other statements answer as
    /// [`Session::execute`] does.
    pub fn execute_streaming(&mut self, sql: &str, sink: &mut dyn RowSink) -> SqlResult<Output> {
        self.execute_to(sql, Some(sink))
    }
    fn execute_to(&mut self, sql: &str, sink: Option<&mut dyn RowSink>) -> SqlResult<Output> {
        counters().questions.fetch_add(1, Ordering::Relaxed);
        self.interrupt.reset_query();
        if process::is_shutdown(sql) {
            return self.shutdown();
        }
        let parsed = parse::parse(sql)?;
        if parsed.params > 0 {
            return Err(parse::syntax_error("?"));
        }
        self.hint_ms = process::hint_max_execution_time(sql);
        let _cur = process::enter_statement(&self.interrupt, self.proc.as_ref());
        self.run_with_func_warnings(&parsed, &[], sink)
    }
    /// `SHUTDOWN` / COM_SHUTDOWN: needs the SHUTDOWN privilege.
    pub fn shutdown(&mut self) -> SqlResult<Output> {
        if !self.has_global_privilege(crate::privilege::Privs::SHUTDOWN) {
            return Err(EngineError::new(
                1227,
                "42000",
                "Access denied; you need (at least one of) the SHUTDOWN privilege(s) for this operation",
            ));
        }
        match &self.proc {
            Some(p) => p.request_shutdown()?,
            None => return Err(EngineError::not_supported("SHUTDOWN without a server")),
        }
        Ok(done(0, 0, 0, String::new()))
    }
    /// COM_STMT_PREPARE.
    pub fn prepare(&mut self, sql: &str) -> SqlResult<PreparedInfo> {
        let parsed = parse::parse(sql)?;
        if matches!(parsed.cmd, Command::Empty) {
            return Err(EngineError::new(1065, "42000", "Query was empty"));
        }
        self.authorize(&parsed)?;
        let columns = self.describe(&parsed)?;
        let id = self.next_stmt;
        self.next_stmt = self.next_stmt.wrapping_add(1).max(1);
        let params = parsed.params;
        let hint_ms = process::hint_max_execution_time(sql);
        let text: Arc<str> = Arc::from(&sql[..process::info_len(sql)]);
        self.prepared.insert(
            id,
            Prepared {
                parsed: Arc::new(parsed),
                hint_ms,
                text,
            },
        );
        Ok(PreparedInfo {
            id,
            params,
            columns,
        })
    }
    /// COM_STMT_EXECUTE with the bound parameters (NULL = Value::Null).
    pub fn execute_prepared(&mut self, id: u32, params: Vec<Value>) -> SqlResult<Output> {
        self.execute_prepared_to(id, params, None)
    }
    /// COM_STMT_EXECUTE, a SELECT's rows streamed to `sink`.
    pub fn execute_prepared_streaming(
        &mut self,
        id: u32,
        params: Vec<Value>,
        sink: &mut dyn RowSink,
    ) -> SqlResult<Output> {
        self.execute_prepared_to(id, params, Some(sink))
    }
    fn execute_prepared_to(
        &mut self,
        id: u32,
        params: Vec<Value>,
        sink: Option<&mut dyn RowSink>,
    ) -> SqlResult<Output> {
        counters().questions.fetch_add(1, Ordering::Relaxed);
        let Some(p) = self.prepared.get(&id) else {
            return Err(EngineError::new(
                1243,
                "HY000",
                format!("Unknown prepared statement handler ({id}) given to mysqld_stmt_execute"),
            ));
        };
        if params.len() != p.parsed.params {
            return Err(EngineError::new(
                1210,
                "HY000",
                "Incorrect arguments to mysqld_stmt_execute",
            ));
        }
        let parsed = Arc::clone(&p.parsed);
        self.hint_ms = p.hint_ms;
        if let Some(pr) = &self.proc {
            pr.set_info(&p.text);
        }
        self.interrupt.reset_query();
        let _cur = process::enter_statement(&self.interrupt, self.proc.as_ref());
        self.run_with_func_warnings(&parsed, &params, sink)
    }
    /// COM_STMT_CLOSE.
    pub fn close_prepared(&mut self, id: u32) {
        self.prepared.remove(&id);
    }
    /// COM_STMT_RESET.
    pub fn reset_prepared(&mut self, id: u32) -> SqlResult<()> {
        if self.prepared.contains_key(&id) {
            Ok(())
        } else {
            Err(EngineError::new(
                1243,
                "HY000",
                format!("Unknown prepared statement handler ({id}) given to mysqld_stmt_reset"),
            ))
        }
    }
    /// The connection ends: roll back an open transaction.
    pub fn close(&mut self) {
        if let Some(t) = self.txn.take() {
            t.rollback();
        }
        crate::userlock::release_all(self.conn_id);
        // A failure leaves trees the next start's orphan sweep drops.
        for def in self.temps.take_all() {
            let _ = self.engine.drop_temporary_table(def);
        }
    }

    /// Drops a table this statement created and then failed to fill
    /// (CREATE TABLE ... SELECT); errors leave it to the orphan sweep.
    pub(crate) fn drop_created(&mut self, db: &str, name: &str, temporary: bool) {
        if temporary {
            if let Some(def) = self.temps.remove(db, name) {
                let _ = self.engine.drop_temporary_table(def);
            }
        } else {
            let _ = self.engine.drop_table(db, name, None);
        }
    }

    /// TRUNCATE of a temporary table: an empty one of the same definition
    /// takes its place (the counter restarts, as in MySQL). False when
    /// `db.t` is no temporary table.
    fn truncate_temporary(&mut self, db: &str, t: &str) -> SqlResult<bool> {
        let Some(old) = self.temps.get(db, t).cloned() else {
            return Ok(false);
        };
        let mut spec = Engine::like_spec(&old, &old.name);
        spec.checks = old.checks.clone();
        let new = self.engine.create_temporary_table(db, &old.name, spec)?;
        self.temps.insert(new);
        self.engine.drop_temporary_table(old)?;
        Ok(true)
    }

    /// This session's temporary tables (temp.rs).
    pub(crate) fn temps(&self) -> &crate::temp::TempTables {
        &self.temps
    }

    /// This session's temporary tables, for the statements that change
    /// one (temp_alter.rs keeps them as the engine's `by_id`).
    pub(crate) fn temps_mut(&mut self) -> &mut crate::temp::TempTables {
        &mut self.temps
    }

    /// A table by name as this session sees it: its temporary table of
    /// that name, else the catalog's.
    pub(crate) fn table_def(&self, db: &str, name: &str) -> SqlResult<Arc<TableDef>> {
        match self.temps.get(db, name) {
            Some(def) => Ok(def.clone()),
            None => self.engine.table(db, name),
        }
    }

    /// Whether a transaction is open (BEGIN or autocommit=0).
    pub fn in_transaction(&self) -> bool {
        self.txn.is_some()
    }

    /// Whether autocommit is on (for the protocol's status flags).
    pub fn autocommit(&self) -> bool {
        self.autocommit
    }

    // ------------------------------------------------------------ helpers

    fn virt(&self) -> impl Fn(&str, &str) -> Option<Virtual> + '_ {
        move |db: &str, name: &str| crate::show::virtual_table(self, db, name)
    }

    pub(crate) fn variable_rows(&self, global: bool) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = self
            .engine
            .config()
            .variables()
            .map(|(k, v)| (k.to_string(), v))
            .collect();
        if !global {
            // Engine variables with a session value of their own
            // (innodb_lock_wait_timeout, lock_wait_timeout).
            for (k, v) in out.iter_mut() {
                if let Some(sv) = self.vars.get(k.as_str()) {
                    *v = sv.clone();
                }
            }
        }
        let overrides = global_overrides()
            .lock()
            .map(|g| g.clone())
            .unwrap_or_default();
        for (k, v) in SESSION_VARS {
            if out.iter().any(|(n, _)| n == k) {
                continue;
            }
            let val = if *k == "server_uuid" {
                self.engine.server_uuid().to_string()
            } else if let Some(v) = self.engine.gtid_var(k) {
                v
            } else if global {
                overrides.get(*k).cloned().unwrap_or_else(|| v.to_string())
            } else {
                match *k {
                    "autocommit" => if self.autocommit { "ON" } else { "OFF" }.to_string(),
                    "transaction_isolation" | "tx_isolation" => {
                        iso_name(self.isolation).to_string()
                    }
                    _ => self
                        .vars
                        .get(*k)
                        .cloned()
                        .or_else(|| overrides.get(*k).cloned())
                        .unwrap_or_else(|| v.to_string()),
                }
            };
            out.push((k.to_string(), val));
        }
        out.sort();
        out
    }

    fn describe(&mut self, p: &Parsed) -> SqlResult<Vec<ColumnMeta>> {
        let Command::Sql(stmt) = &p.cmd else {
            return Ok(Vec::new());
        };
        let Statement::Query(q) = &**stmt else {
            return Ok(Vec::new());
        };
        if p.into.is_some() || p.discard {
            // SELECT ... INTO and DO answer OK, without a result set.
            return Ok(Vec::new());
        }
        let params = vec![Value::Null; p.params];
        let mut txn = self.engine.begin(self.isolation, true);
        txn.set_single_statement(true);
        let r = {
            let virt = self.virt();
            let cx = Ctx {
                engine: &self.engine,
                db: self.db.as_deref(),
                params: &params,
                env: self,
                now: expr::now_utc(),
                virt: &virt,
                describe: true,
                view_check: None,
                temps: &self.temps,
                opened: Default::default(),
            };
            exec::select(&cx, &mut txn, q, None)
        };
        txn.rollback();
        Ok(r?.columns)
    }

    /// The session's `time_zone` (its own value, else the global one).
    pub(crate) fn zone(&self) -> crate::tz::Zone {
        let spec = match self.vars.get("time_zone") {
            Some(v) => Some(v.clone()),
            None => global_overrides()
                .lock()
                .ok()
                .and_then(|g| g.get("time_zone").cloned()),
        };
        spec.and_then(|s| crate::tz::Zone::parse(&s))
            .unwrap_or_default()
    }

    pub(crate) fn implicit_commit(&mut self) -> SqlResult<()> {
        if let Some(t) = self.txn.take() {
            t.commit()?;
        }
        Ok(())
    }

    fn begin_txn(&mut self, read_only: bool) -> Txn {
        let iso = self.next_isolation.take().unwrap_or(self.isolation);
        let ro = self.next_read_only.take().unwrap_or(read_only);
        let mut t = self.engine.begin(iso, ro);
        t.set_interrupt(Some(self.interrupt.clone()));
        t.set_lock_wait_timeout(self.session_lock_wait());
        t.set_foreign_key_checks(self.fk_checks());
        t
    }

    /// The session's `foreign_key_checks`.
    pub(crate) fn fk_checks(&self) -> bool {
        self.vars
            .get("foreign_key_checks")
            .is_none_or(|v| v.eq_ignore_ascii_case("ON"))
    }

    /// START TRANSACTION WITH CONSISTENT SNAPSHOT: the snapshot is taken
    /// now under REPEATABLE READ; InnoDB ignores the clause at the other
    /// levels, with its warning (false).
    fn consistent_snapshot(&mut self, t: &mut Txn) -> bool {
        if t.isolation() == Isolation::RepeatableRead {
            t.open_snapshot();
            return true;
        }
        self.warnings.push((
            "Warning".into(),
            138,
            "InnoDB: WITH CONSISTENT SNAPSHOT was ignored because this phrase can only be used with REPEATABLE READ isolation level.".into(),
        ));
        false
    }

    /// The session's own `innodb_lock_wait_timeout`, if it set one.
    fn session_lock_wait(&self) -> Option<std::time::Duration> {
        self.vars
            .get("innodb_lock_wait_timeout")
            .and_then(|v| v.parse::<u64>().ok())
            .map(std::time::Duration::from_secs)
    }

    /// Runs `f` inside the session's transaction (see the module docs).
    fn in_txn<T>(
        &mut self,
        f: impl FnOnce(&mut Session, &mut Txn) -> SqlResult<T>,
    ) -> SqlResult<T> {
        let implicit = self.txn.is_none();
        let mut txn = match self.txn.take() {
            Some(t) => t,
            None => {
                let mut t = self.begin_txn(false);
                // An autocommit statement: SERIALIZABLE reads do not lock.
                t.set_single_statement(self.autocommit);
                t
            }
        };
        txn.statement_start();
        // TIMESTAMP columns are read and written in the statement's zone.
        txn.set_timestamp_zone(crate::tz::engine_zone(&crate::tz::current()));
        let sp = txn.savepoint();
        match f(self, &mut txn) {
            Ok(v) => {
                if implicit && self.autocommit {
                    txn.commit()?;
                } else {
                    self.txn = Some(txn);
                }
                Ok(v)
            }
            Err(e) => {
                if e.code == 1213 || (implicit && self.autocommit) {
                    txn.rollback();
                } else {
                    txn.rollback_to(sp);
                    self.txn = Some(txn);
                }
                Err(e)
            }
        }
    }

    pub(crate) fn with_ctx<T>(
        &mut self,
        params: &[Value],
        f: impl FnOnce(&Ctx, &mut Txn) -> SqlResult<T>,
    ) -> SqlResult<T> {
        self.in_txn(|s, txn| {
            let virt = s.virt();
            let cx = Ctx {
                engine: &s.engine,
                db: s.db.as_deref(),
                params,
                env: s,
                now: expr::now_utc(),
                virt: &virt,
                describe: false,
                view_check: s.view_check.as_ref(),
                temps: &s.temps,
                opened: Default::default(),
            };
            f(&cx, txn)
        })
    }

    /// CREATE TABLE new LIKE old (also `(LIKE old)`): an empty table with
    /// old's columns, keys and CHECKs, as MySQL (its foreign keys are not
    /// copied; the counter starts at 1). 1146 for a missing source, 1347
    /// for a view, 1050 for a taken name (a note with IF NOT EXISTS).
    /// CREATE TABLE from its definition: the new table's (db, name), or
    /// None when IF NOT EXISTS found it there (a note 1050 is added).
    pub(crate) fn create_from_spec(
        &mut self,
        spec: crate::ddl::TableSpec,
    ) -> SqlResult<Option<(String, String)>> {
        let db = match spec.db {
            Some(d) => d,
            None => self.current_db_or_err()?,
        };
        let existed = if spec.temporary {
            self.temps.contains(&db, &spec.name)
        } else {
            self.engine.table(&db, &spec.name).is_ok()
        };
        // Generated columns and DEFAULT expressions compile (an unknown
        // function fails the CREATE, not the first INSERT).
        if !existed {
            let (cols, name) = (&spec.columns, &spec.name);
            self.with_ctx(&[], |cx, _| {
                crate::generated::compile_check(cx, &db, name, cols)
            })?;
        }
        let new = quire_engine::NewTable {
            columns: spec.columns,
            primary: spec.primary,
            indexes: spec.indexes,
            auto_increment: spec.auto_increment,
            checks: spec.checks,
            foreign_keys: spec.foreign_keys,
            skip_fk_checks: !self.fk_checks(),
            collation: Some(spec.collation),
        };
        if spec.temporary {
            if existed && !spec.if_not_exists {
                return Err(EngineError::new(
                    1050,
                    "42S01",
                    format!("Table '{}' already exists", spec.name),
                ));
            }
            if !existed {
                let def = self.engine.create_temporary_table(&db, &spec.name, new)?;
                self.temps.insert(def);
            }
        } else {
            self.engine
                .create_table_with(&db, &spec.name, new, spec.if_not_exists)?;
        }
        if existed {
            self.warnings.push((
                "Note".into(),
                1050,
                format!("Table '{}' already exists", spec.name),
            ));
            return Ok(None);
        }
        Ok(Some((db, spec.name)))
    }

    /// Runs an already parsed statement inside the current one (CREATE
    /// TABLE ... SELECT's INSERT): no new Questions count, no new
    /// processlist entry, and the warnings join the current statement's.
    pub(crate) fn run_nested(&mut self, p: &Parsed) -> SqlResult<Output> {
        self.run_with_func_warnings(p, &[], None)
    }

    /// CREATE [TEMPORARY] TABLE ... LIKE where the new table or its
    /// source is temporary: the source as this session sees it.
    fn create_temporary_like(
        &mut self,
        ct: &ast::CreateTable,
        (db, name): (&str, &str),
        (src_db, src): (&str, &str),
    ) -> SqlResult<Output> {
        let existed = if ct.temporary {
            self.temps.contains(db, name)
        } else {
            self.engine.table(db, name).is_ok()
        };
        if existed && !ct.if_not_exists {
            return Err(EngineError::new(
                1050,
                "42S01",
                format!("Table '{name}' already exists"),
            ));
        }
        if existed {
            self.warnings.push((
                "Note".into(),
                1050,
                format!("Table '{name}' already exists"),
            ));
            return Ok(done(0, 0, 1, String::new()));
        }
        let def = self.table_def(src_db, src)?;
        let spec = Engine::like_spec(&def, name);
        drop(def);
        if ct.temporary {
            let def = self.engine.create_temporary_table(db, name, spec)?;
            self.temps.insert(def);
        } else {
            self.engine.create_table_with(db, name, spec, false)?;
        }
        Ok(done(0, 0, 0, String::new()))
    }

    fn create_table_like(&mut self, ct: &ast::CreateTable) -> SqlResult<Output> {
        let like = match &ct.like {
            Some(
                ast::CreateTableLikeKind::Plain(l) | ast::CreateTableLikeKind::Parenthesized(l),
            ) => l,
            None => return Err(EngineError::internal("CREATE TABLE LIKE without LIKE")),
        };
        if like.defaults.is_some() {
            return Err(parse::syntax_error("INCLUDING"));
        }
        if !ct.columns.is_empty() || !ct.constraints.is_empty() || ct.query.is_some() {
            return Err(parse::syntax_error("LIKE"));
        }
        let (db, name) = crate::show::table_db(self, &ct.name, None)?;
        let (src_db, src) = crate::show::table_db(self, &like.name, None)?;
        if ct.temporary || self.temps.contains(&src_db, &src) {
            return self.create_temporary_like(ct, (&db, &name), (&src_db, &src));
        }
        if self.engine.view(&src_db, &src).is_some() {
            return Err(quire_engine::view::err_wrong_object(
                &src_db,
                &src,
                "BASE TABLE",
            ));
        }
        let existed = self.engine.table(&db, &name).is_ok();
        self.engine
            .create_table_like(&db, &name, &src_db, &src, ct.if_not_exists)?;
        let w = if existed {
            self.warnings.push((
                "Note".into(),
                1050,
                format!("Table '{name}' already exists"),
            ));
            1
        } else {
            0
        };
        Ok(done(0, 0, w, String::new()))
    }

    fn current_db_or_err(&self) -> SqlResult<String> {
        self.db.clone().ok_or_else(exec::no_db)
    }

    // ---------------------------------------------------------- dispatch

    // ---- hook of the expression warning channel (func/warn.rs) ----
    /// [`Session::run`] with the evaluation warning sink emptied first and
    /// drained into the statement's warnings after (division by zero,
    /// bad dates, ... raised while evaluating expressions).
    fn run_with_func_warnings(
        &mut self,
        p: &Parsed,
        params: &[Value],
        sink: Option<&mut dyn RowSink>,
    ) -> SqlResult<Output> {
        crate::func::warn::begin();
        crate::tz::set_current(&self.zone());
        self.live.statement_start();
        if p.maybe_deprecated {
            crate::session_sql::deprecations(&p.cmd);
        }
        let mut sink = sink;
        let mut r = self.run(p, params, reborrow(&mut sink));
        // 1615: a table the statement read was replaced by a DDL it then
        // waited for (its changes are rolled back); run it again with the
        // new definition, as MySQL re-prepares (a bounded number of times).
        for _ in 0..REPREPARE_TRIES {
            if !matches!(&r, Err(e) if e.code == 1615) {
                break;
            }
            r = self.run(p, params, reborrow(&mut sink));
        }
        self.after_statement(&mut r);
        let (list, n) = crate::func::warn::drain();
        if n > 0 {
            self.warnings.extend(list);
            if let Ok(Output::Done { warnings, .. }) = &mut r {
                *warnings = warnings.saturating_add(u16::try_from(n).unwrap_or(u16::MAX));
            }
        }
        r
    }
    // ---- end of the hook ----

    /// What the next statement's `ROW_COUNT()` reads (`session_sql.rs`),
    /// and the OK packet's insert id after `LAST_INSERT_ID(expr)`.
    fn after_statement(&mut self, r: &mut SqlResult<Output>) {
        self.row_count = match r {
            Ok(Output::Done {
                affected_rows,
                last_insert_id,
                ..
            }) => {
                if let Some(id) = self.live.set_in_statement() {
                    *last_insert_id = id;
                }
                i64::try_from(*affected_rows).unwrap_or(i64::MAX)
            }
            _ => -1,
        };
    }

    /// A SELECT: its rows, or with `SELECT ... INTO` the variables set;
    /// `FOUND_ROWS()` is recorded either way.
    fn run_query(
        &mut self,
        q: &ast::Query,
        p: &Parsed,
        params: &[Value],
        lock: Option<LockMode>,
    ) -> SqlResult<Output> {
        let calc = crate::session_sql::strip_calc_found_rows(q);
        let (rs, found) = self.with_ctx(params, |cx, txn| match &calc {
            Some(all) => {
                let mut rs = exec::select(cx, txn, all, lock)?;
                let found = rs.rows.len() as u64;
                crate::session_sql::apply_limit(cx, q, &mut rs.rows)?;
                Ok((rs, found))
            }
            None => {
                let rs = exec::select(cx, txn, q, lock)?;
                let n = rs.rows.len() as u64;
                Ok((rs, n))
            }
        })?;
        if p.discard {
            return Ok(done(0, 0, 0, String::new()));
        }
        self.found_rows = found;
        if let Some(names) = &p.into {
            let n = crate::session_sql::assign_into(&self.live, names, rs)?;
            return Ok(done(n, 0, 0, String::new()));
        }
        Ok(Output::Rows {
            columns: rs.columns,
            rows: rs.rows,
        })
    }

    fn run(
        &mut self,
        p: &Parsed,
        params: &[Value],
        sink: Option<&mut dyn RowSink>,
    ) -> SqlResult<Output> {
        let is_show_warnings = matches!(
            p.cmd,
            Command::Show(ref s) if matches!(**s, parse::Show::Warnings | parse::Show::Errors)
        );
        if !is_show_warnings {
            self.warnings.clear();
        }
        if self.login.password_expired {
            crate::login_state::sandbox_check(&p.cmd)?;
        }
        self.authorize(p)?;
        match &p.cmd {
            Command::Empty => Err(EngineError::new(1065, "42000", "Query was empty")),
            Command::Set(items) => {
                counters().set_option.fetch_add(1, Ordering::Relaxed);
                // MySQL evaluates every value before assigning any
                // (`sql_set_variables`: check all, then update all), so
                // `SET @a = 1, @b = @a` reads @a as it was before.
                let mut values = Vec::with_capacity(items.len());
                for it in items {
                    values.push(match it {
                        SetItem::Var { value, .. } => Some(self.eval_set_value(value, params)?),
                        _ => None,
                    });
                }
                for (it, v) in items.iter().zip(values) {
                    self.set(it, v)?;
                }
                Ok(done(0, 0, self.warnings.len() as u16, String::new()))
            }
            Command::Show(s) => crate::show::show(self, s),
            Command::Describe(n) => crate::show::describe(self, n),
            Command::Begin {
                read_only,
                snapshot,
            } => {
                counters().begin.fetch_add(1, Ordering::Relaxed);
                self.implicit_commit()?;
                let mut t = self.begin_txn(*read_only);
                let warned = *snapshot && !self.consistent_snapshot(&mut t);
                self.txn = Some(t);
                Ok(done(0, 0, u16::from(warned), String::new()))
            }
            Command::Commit => {
                self.implicit_commit()?;
                Ok(done(0, 0, 0, String::new()))
            }
            Command::Rollback => {
                if let Some(t) = self.txn.take() {
                    t.rollback();
                }
                Ok(done(0, 0, 0, String::new()))
            }
            Command::Use(db) => {
                self.use_db(db)?;
                Ok(done(0, 0, 0, String::new()))
            }
            Command::KeysToggle(n) => {
                let (d, t) = crate::show::table_db(self, n, None)?;
                self.table_def(&d, &t)?;
                self.warnings.push((
                    "Note".into(),
                    1031,
                    format!("Table storage engine for '{t}' doesn't have this option"),
                ));
                Ok(done(0, 0, 1, String::new()))
            }
            Command::CheckTable {
                tables,
                for_upgrade,
            } => {
                self.implicit_commit()?;
                crate::admin::check(self, tables, *for_upgrade)
            }
            Command::Analyze { tables, local } => {
                // An implicit commit, as every administrative statement.
                self.implicit_commit()?;
                crate::show::analyze(self, tables, *local)
            }
            Command::PurgeLogs(what) => crate::binlog_admin::purge(self, what, params),
            Command::Replica(stmt) => crate::replication::run(self, stmt),
            Command::ResetMaster { to } => crate::binlog_admin::reset(self, *to),
            Command::Kill { query_only, id } => {
                let id = self.eval_kill_id(id, params)?;
                let admin = self.has_global_privilege(crate::privilege::Privs::CONNECTION_ADMIN);
                process::kill(&self.user, admin, id, *query_only)?;
                Ok(done(0, 0, 0, String::new()))
            }
            Command::Account(cmd) => {
                if let account::AccountCmd::Role(rc) = &**cmd {
                    if let account::RoleCmd::Set(spec) = &**rc {
                        return self.set_role(spec);
                    }
                }
                if !matches!(**cmd, account::AccountCmd::ShowGrants { .. }) {
                    self.implicit_commit()?;
                }
                let privs = self.privileges();
                let me = account::Me {
                    user: &self.user,
                    host: &self.account_host,
                    client_host: &self.client_host,
                    db: self.db.as_deref(),
                    engine: Some(&self.engine),
                    privs: privs.as_deref(),
                    roles: &self.roles,
                };
                let mut notes = Vec::new();
                let r = account::execute(self.accounts.as_deref(), &me, cmd, &mut notes);
                self.warnings = notes;
                if r.is_ok() && crate::login_state::resets_own_password(cmd, &me) {
                    self.login.password_expired = false;
                }
                r
            }
            Command::View(v) => {
                self.implicit_commit()?;
                crate::view::create(self, v)
            }
            Command::Alter(cmd) => {
                self.implicit_commit()?;
                crate::alter_exec::run(self, cmd)
            }
            Command::Sql(stmt) => self.run_sql(stmt, p, params, sink),
        }
    }

    /// One SET assignment; `value` is the evaluated value of a `Var`.
    fn set(&mut self, it: &SetItem, value: Option<Value>) -> SqlResult<()> {
        match it {
            SetItem::Names {
                charset,
                collation,
                names,
            } => {
                let cs = client_charset(charset)?;
                let coll = crate::collate::resolve(
                    Some(charset),
                    collation.as_deref(),
                    cs.default_collation(),
                )?;
                self.vars
                    .insert("character_set_client".into(), cs.name().into());
                self.vars
                    .insert("character_set_results".into(), cs.name().into());
                // SET CHARACTER SET: the connection takes the database's.
                let conn = if *names {
                    coll
                } else {
                    match self.db.as_deref() {
                        Some(db) => self.database_collation(db),
                        None => self.server_collation(),
                    }
                };
                self.set_connection_collation(conn);
                Ok(())
            }
            SetItem::Transaction {
                scope,
                isolation,
                read_only,
            } => {
                let iso = match isolation {
                    Some(s) => Some(parse_iso(s)?),
                    None => None,
                };
                match scope {
                    None => self.set_next_txn(iso, *read_only)?,
                    Some(Scope::Global) => {
                        if let Some(i) = iso {
                            set_global_iso(i);
                        }
                    }
                    Some(_) => {
                        if let Some(i) = iso {
                            // Also overrides a pending next-transaction level.
                            self.isolation = i;
                            self.next_isolation = None;
                        }
                    }
                }
                Ok(())
            }
            SetItem::Var {
                scope,
                name,
                next_txn,
                ..
            } => {
                let v = value.unwrap_or(Value::Null);
                let lname = name.to_ascii_lowercase();
                if *next_txn {
                    return self.set_next_txn_var(&lname, name, &v);
                }
                match scope {
                    Scope::User => {
                        self.live.set(&lname, v);
                        Ok(())
                    }
                    Scope::Global => {
                        let text = set_text(&v);
                        if READ_ONLY_VARS.contains(&lname.as_str()) {
                            return Err(EngineError::new(
                                1238,
                                "HY000",
                                format!("Variable '{name}' is a read only variable"),
                            ));
                        }
                        check_inert(name, &lname, &text)?;
                        if matches!(lname.as_str(), "transaction_isolation" | "tx_isolation") {
                            set_global_iso(parse_iso(&text)?);
                            return Ok(());
                        }
                        if lname == "time_zone" {
                            return set_global_time_zone(&v, &text);
                        }
                        let text = match crate::spill::normalise_var(&lname, &text) {
                            Some(r) => {
                                let (value, warning) = r?;
                                if let Some(w) = warning {
                                    self.warnings.push(("Warning".into(), 1292, w));
                                }
                                value
                            }
                            None => text,
                        };
                        // `= DEFAULT`: the registry's compiled-in default.
                        let text = match quire_config::var_info(&lname) {
                            Some(info) if is_default(&v, &text) => info.default.to_string(),
                            _ => text,
                        };
                        match self.engine.set_global(&lname, &text) {
                            Ok(()) => Ok(()),
                            Err(e) if e.code == 1193 => {
                                if SESSION_VARS.iter().any(|(k, _)| *k == lname) {
                                    if let Ok(mut g) = global_overrides().lock() {
                                        g.insert(lname, text);
                                    }
                                    Ok(())
                                } else {
                                    Err(e)
                                }
                            }
                            Err(e) => Err(e),
                        }
                    }
                    Scope::Session => self.set_session(&lname, name, &v),
                }
            }
        }
    }

    /// `SET TRANSACTION ...` without a scope: the next transaction only;
    /// refused inside a transaction (1568), as MySQL.
    fn set_next_txn(&mut self, iso: Option<Isolation>, read_only: Option<bool>) -> SqlResult<()> {
        if self.txn.is_some() {
            return Err(EngineError::new(
                1568,
                "25001",
                "Transaction characteristics can't be changed while a transaction is in progress",
            ));
        }
        if iso.is_some() {
            self.next_isolation = iso;
        }
        if read_only.is_some() {
            self.next_read_only = read_only;
        }
        Ok(())
    }

    /// `SET @@transaction_isolation = ...` / `SET @@transaction_read_only
    /// = ...` (no scope word): like SET TRANSACTION, the next transaction
    /// only (MySQL's "Transaction Characteristic Scope").
    fn set_next_txn_var(&mut self, lname: &str, name: &str, v: &Value) -> SqlResult<()> {
        let text = set_text(v);
        match lname {
            "transaction_isolation" | "tx_isolation" => {
                self.set_next_txn(Some(parse_iso(&text)?), None)
            }
            _ => {
                let ro = on_off(&text).ok_or_else(|| {
                    EngineError::new(
                        1231,
                        "42000",
                        format!("Variable '{name}' can't be set to the value of '{text}'"),
                    )
                })?;
                self.set_next_txn(None, Some(ro))
            }
        }
    }

    fn set_session(&mut self, lname: &str, name: &str, v: &Value) -> SqlResult<()> {
        let text = set_text(v);
        // sort_buffer_size, tmp_table_size, ...: clamped as MySQL does.
        if let Some(r) = crate::spill::normalise_var(lname, &text) {
            let (value, warning) = r?;
            if let Some(w) = warning {
                self.warnings.push(("Warning".into(), 1292, w));
            }
            self.vars.insert(lname.to_string(), value);
            return Ok(());
        }
        check_inert(name, lname, &text)?;
        match lname {
            // Global-only in MySQL.
            "mandatory_roles" | "gtid_mode" | "enforce_gtid_consistency" | "gtid_purged" => {
                Err(EngineError::new(
                    1229,
                    "HY000",
                    format!(
                        "Variable '{name}' is a GLOBAL variable and should be set with SET GLOBAL"
                    ),
                ))
            }
            // Session value read-only in MySQL (it is the global's, copied
            // at connect).
            "max_allowed_packet" | "net_buffer_length" => Err(EngineError::new(
                1621,
                "HY000",
                format!(
                    "SESSION variable '{name}' is read-only. Use SET GLOBAL to assign the value"
                ),
            )),
            "autocommit" => {
                let on = on_off(&text).ok_or_else(|| {
                    EngineError::new(
                        1231,
                        "42000",
                        format!("Variable 'autocommit' can't be set to the value of '{text}'"),
                    )
                })?;
                if on && !self.autocommit {
                    self.implicit_commit()?;
                }
                self.autocommit = on;
                Ok(())
            }
            "transaction_isolation" | "tx_isolation" => {
                self.isolation = parse_iso(&text)?;
                self.next_isolation = None;
                Ok(())
            }
            "sql_mode" => {
                match normalise_sql_mode(&text) {
                    Some(_) if text.trim().eq_ignore_ascii_case("DEFAULT") => {
                        self.vars.remove(lname)
                    }
                    Some(mode) => self.vars.insert(lname.to_string(), mode),
                    None => {
                        return Err(EngineError::new(
                            1231,
                            "42000",
                            format!("Variable 'sql_mode' can't be set to the value of '{text}'"),
                        ))
                    }
                };
                Ok(())
            }
            "foreign_key_checks" => {
                let on = on_off(&text).ok_or_else(|| {
                    EngineError::new(
                        1231,
                        "42000",
                        format!("Variable '{name}' can't be set to the value of '{text}'"),
                    )
                })?;
                self.vars
                    .insert(lname.to_string(), if on { "ON" } else { "OFF" }.into());
                if let Some(txn) = self.txn.as_mut() {
                    txn.set_foreign_key_checks(on);
                }
                Ok(())
            }
            "time_zone" => {
                if let Some(e) = bad_zone_value(v) {
                    return Err(e);
                }
                if is_default(v, &text) {
                    self.vars.remove(lname);
                } else {
                    let z = crate::tz::Zone::parse(&text)
                        .ok_or_else(|| crate::tz::unknown_zone(&text))?;
                    self.vars.insert(lname.to_string(), z.name().to_string());
                }
                crate::tz::set_current(&self.zone());
                Ok(())
            }
            "character_set_results" | "character_set_client" => {
                let cs = if is_default(v, &text) {
                    quire_engine::types::Charset::Utf8mb4
                } else if v.is_null() && lname == "character_set_results" {
                    // NULL: results unconverted (MySQL allows it).
                    quire_engine::types::Charset::Utf8mb4
                } else {
                    client_charset(&text)?
                };
                self.vars.insert(lname.to_string(), cs.name().to_string());
                Ok(())
            }
            "character_set_connection" => {
                let c = collation_value(v, &text, true)?;
                self.set_connection_collation(c);
                Ok(())
            }
            "collation_connection" => {
                let c = collation_value(v, &text, false)?;
                self.set_connection_collation(c);
                Ok(())
            }
            "collation_database" => Err(EngineError::not_supported(
                "SET collation_database (use ALTER DATABASE)",
            )),
            "collation_server" | "character_set_server" => {
                let c = collation_value(v, &text, lname == "character_set_server")?;
                self.vars
                    .insert("collation_server".to_string(), c.name().to_string());
                self.vars.insert(
                    "character_set_server".to_string(),
                    c.charset().name().to_string(),
                );
                Ok(())
            }
            _ if SESSION_VARS.iter().any(|(k, _)| *k == lname) => {
                if READ_ONLY_VARS.contains(&lname) {
                    return Err(EngineError::new(
                        1238,
                        "HY000",
                        format!("Variable '{name}' is a read only variable"),
                    ));
                }
                self.vars.insert(lname.to_string(), text);
                Ok(())
            }
            "last_insert_id" | "insert_id" => {
                self.live
                    .set_last_insert_id(v.to_f64().map(|f| f as u64).unwrap_or(0));
                Ok(())
            }
            "sql_log_bin"
            | "session_track_schema"
            | "session_track_state_change"
            | "session_track_system_variables"
            | "session_track_transaction_info"
            | "optimizer_switch"
            | "big_tables"
            | "sql_big_selects"
            | "group_concat_max_len"
            | "sql_notes"
            | "profiling"
            | "innodb_strict_mode"
            | "div_precision_increment" => {
                self.vars.insert(lname.to_string(), text);
                Ok(())
            }
            _ => {
                if self.engine.config().get(lname).is_ok() {
                    if lname == "innodb_lock_wait_timeout" {
                        return self.set_session_lock_wait(name, &text);
                    }
                    if lname == "lock_wait_timeout" {
                        return self.set_session_mdl_wait(name, &text);
                    }
                    Err(EngineError::new(
                        1229,
                        "HY000",
                        format!(
                            "Variable '{name}' is a GLOBAL variable and should be set with SET GLOBAL"
                        ),
                    ))
                } else {
                    Err(EngineError::new(
                        1193,
                        "HY000",
                        format!("Unknown system variable '{name}'"),
                    ))
                }
            }
        }
    }

    /// `SET SESSION innodb_lock_wait_timeout`: this session's lock waits
    /// (the open transaction's next ones included) last this long; DEFAULT
    /// goes back to the global value. Out of 1..=1073741824 is clamped
    /// with warning 1292, as MySQL does.
    fn set_session_lock_wait(&mut self, name: &str, text: &str) -> SqlResult<()> {
        const MAX: u64 = 1_073_741_824;
        let key = "innodb_lock_wait_timeout";
        if text.eq_ignore_ascii_case("DEFAULT") {
            self.vars.remove(key);
        } else {
            let v: i128 = text.trim().parse().map_err(|_| {
                EngineError::new(
                    1232,
                    "42000",
                    format!("Incorrect argument type to variable '{name}'"),
                )
            })?;
            let clamped = v.clamp(1, i128::from(MAX));
            if clamped != v {
                self.warnings.push((
                    "Warning".into(),
                    1292,
                    format!("Truncated incorrect {key} value: '{v}'"),
                ));
            }
            self.vars.insert(key.to_string(), clamped.to_string());
        }
        let t = self.session_lock_wait();
        if let Some(txn) = self.txn.as_mut() {
            txn.set_lock_wait_timeout(t);
        }
        Ok(())
    }

    /// `SET SESSION lock_wait_timeout` (MySQL: session and global; monitoring
    /// agents such as mysqld_exporter set it on connect): this connection's
    /// metadata lock waits (its DDL waiting for open writers, its first
    /// write to a table waiting behind a DDL) last this long; DEFAULT goes
    /// back to the global value. Out of 1..=31536000 is clamped with
    /// warning 1292, as MySQL does.
    fn set_session_mdl_wait(&mut self, name: &str, text: &str) -> SqlResult<()> {
        const MAX: i128 = 31_536_000;
        let key = "lock_wait_timeout";
        if text.eq_ignore_ascii_case("DEFAULT") {
            self.vars.remove(key);
            self.interrupt.set_mdl_wait_timeout(None);
            return Ok(());
        }
        let v: i128 = text.trim().parse().map_err(|_| {
            EngineError::new(
                1232,
                "42000",
                format!("Incorrect argument type to variable '{name}'"),
            )
        })?;
        let clamped = v.clamp(1, MAX);
        if clamped != v {
            self.warnings.push((
                "Warning".into(),
                1292,
                format!("Truncated incorrect {key} value: '{v}'"),
            ));
        }
        self.interrupt
            .set_mdl_wait_timeout(Some(std::time::Duration::from_secs(clamped as u64)));
        self.vars.insert(key.to_string(), clamped.to_string());
        Ok(())
    }

    /// The thread id of `KILL expr`: the expression's integer value, as
    /// MySQL's `val_int()` (a value that is not a number is 0, which no
    /// thread has: error 1094).
    fn eval_kill_id(&mut self, e: &Expr, params: &[Value]) -> SqlResult<u64> {
        let v = self.eval_const(e, params)?;
        Ok(match v {
            Value::Int(i) => u64::try_from(i).unwrap_or(0),
            Value::UInt(u) => u,
            Value::Null => 0,
            other => set_text(&other)
                .trim()
                .split(|c: char| !c.is_ascii_digit())
                .next()
                .and_then(|d| d.parse::<u64>().ok())
                .unwrap_or(0),
        })
    }

    fn eval_set_value(&mut self, e: &Expr, params: &[Value]) -> SqlResult<Value> {
        if let Expr::Identifier(id) = e {
            if !id.value.starts_with('@') {
                return Ok(Value::text(&id.value));
            }
        }
        self.eval_const(e, params)
    }

    /// An expression without columns (SET values, KILL ids), evaluated
    /// as in a field list.
    pub(crate) fn eval_const(&mut self, e: &Expr, params: &[Value]) -> SqlResult<Value> {
        let mut c = Compiler {
            cols: &[],
            params,
            env: self,
            aggs: None,
            clause: "field list",
            now: expr::now_utc(),
            values_offset: None,
            aliases: None,
            outer: &crate::expr::NO_OUTER,
            binder: None,
            outer_refs: Vec::new(),
            windows: None,
        };
        c.compile(e)?.eval(&Row::new(&[], &[]))
    }

    fn run_sql(
        &mut self,
        stmt: &Statement,
        p: &Parsed,
        params: &[Value],
        sink: Option<&mut dyn RowSink>,
    ) -> SqlResult<Output> {
        if let Some(rw) = crate::view_dml::rewrite(&self.engine, self.db.as_deref(), stmt, p)? {
            return self.run_through_view(rw, p, params);
        }
        match stmt {
            Statement::Query(q) => {
                counters().select.fetch_add(1, Ordering::Relaxed);
                let lock = if p.share_lock {
                    Some(LockMode::Shared)
                } else {
                    None
                };
                let limit_ms = self.max_execution_ms();
                if limit_ms > 0 {
                    self.interrupt
                        .set_deadline(Some(std::time::Duration::from_millis(limit_ms)));
                }
                if let Some(pr) = &self.proc {
                    pr.set_phase(Phase::SendingData);
                }
                // Streamed to the client as produced, unless the rows
                // go to variables (INTO) or must all be counted first
                // (SQL_CALC_FOUND_ROWS).
                let streams = p.into.is_none()
                    && !p.discard
                    && crate::session_sql::strip_calc_found_rows(q).is_none();
                let out = match sink {
                    Some(sink) if streams => {
                        let r = self.with_ctx(params, |cx, txn| {
                            crate::query::select_to(cx, txn, q, lock, sink)
                        });
                        if let Ok(n) = &r {
                            self.found_rows = *n;
                        }
                        r.map(|rows| Output::Streamed { rows })
                    }
                    _ => self.run_query(q, p, params, lock),
                };
                self.interrupt.set_deadline(None);
                out
            }
            Statement::Insert(ins) => {
                if ins.replace_into {
                    counters().replace.fetch_add(1, Ordering::Relaxed);
                } else {
                    counters().insert.fetch_add(1, Ordering::Relaxed);
                }
                let r = self.with_ctx(params, |cx, txn| exec::insert(cx, txn, ins))?;
                if let Some(id) = r.last_insert_id {
                    self.live.set_last_insert_id(id);
                }
                Ok(done(
                    self.affected(&r),
                    r.last_insert_id.unwrap_or(0),
                    0,
                    r.info,
                ))
            }
            Statement::Update(u) => {
                let ast::Update {
                    table,
                    assignments,
                    from,
                    selection,
                    returning,
                    order_by,
                    limit,
                    ..
                } = u;
                if from.is_some() || returning.is_some() {
                    return Err(EngineError::not_supported("UPDATE ... FROM/RETURNING"));
                }
                // `parse` cuts a top-level ORDER BY/LIMIT tail off before
                // sqlparser sees the statement (`Parsed::update_order`), so
                // the parser's own fields stay empty.
                if !order_by.is_empty() || limit.is_some() {
                    return Err(parse::syntax_error("ORDER BY"));
                }
                counters().update.fetch_add(1, Ordering::Relaxed);
                if !table.joins.is_empty() {
                    let r = self.with_ctx(params, |cx, txn| {
                        crate::exec_multi::update(
                            cx,
                            txn,
                            u,
                            &p.update_order,
                            p.update_limit.as_ref(),
                        )
                    })?;
                    return Ok(done(self.affected(&r), 0, 0, r.info));
                }
                let r = self.with_ctx(params, |cx, txn| {
                    exec::update(
                        cx,
                        txn,
                        table,
                        assignments,
                        selection.as_ref(),
                        &p.update_order,
                        p.update_limit.as_ref(),
                    )
                })?;
                Ok(done(self.affected(&r), 0, 0, r.info))
            }
            Statement::Delete(d) => {
                counters().delete.fetch_add(1, Ordering::Relaxed);
                let r = if crate::exec_multi::is_multi_delete(d) {
                    self.with_ctx(params, |cx, txn| crate::exec_multi::delete(cx, txn, d))?
                } else {
                    self.with_ctx(params, |cx, txn| exec::delete(cx, txn, d))?
                };
                Ok(done(r.affected, 0, 0, r.info))
            }
            Statement::CreateDatabase {
                db_name,
                if_not_exists,
                default_charset,
                default_collation,
                ..
            } => {
                self.implicit_commit()?;
                let (_, name) = exec::split_name(db_name)?;
                let coll = crate::collate::resolve(
                    default_charset.as_deref(),
                    default_collation.as_deref(),
                    self.server_collation(),
                )?;
                let exists = self
                    .engine
                    .databases()
                    .iter()
                    .any(|d| d.eq_ignore_ascii_case(&name));
                self.engine
                    .create_database_collated(&name, *if_not_exists, Some(coll))?;
                let w = if exists && *if_not_exists {
                    self.warnings.push((
                        "Note".into(),
                        1007,
                        format!("Can't create database '{name}'; database exists"),
                    ));
                    1
                } else {
                    0
                };
                Ok(done(u64::from(!exists), 0, w, String::new()))
            }
            Statement::CreateSchema {
                schema_name,
                if_not_exists,
                ..
            } => {
                self.implicit_commit()?;
                let name = schema_name.to_string().trim_matches('`').to_string();
                let coll = Some(self.server_collation());
                self.engine
                    .create_database_collated(&name, *if_not_exists, coll)?;
                Ok(done(1, 0, 0, String::new()))
            }
            // CREATE TEMPORARY TABLE commits nothing (MySQL).
            Statement::CreateTable(ct) if ct.like.is_some() => {
                if !ct.temporary {
                    self.implicit_commit()?;
                }
                self.create_table_like(ct)
            }
            Statement::CreateTable(ct) if ct.query.is_some() => {
                if !ct.temporary {
                    self.implicit_commit()?;
                }
                crate::create_select::run(self, ct)
            }
            Statement::CreateTable(ct) => {
                if !ct.temporary {
                    self.implicit_commit()?;
                }
                let default = self.table_default_collation(&ct.name)?;
                let spec = crate::ddl::table_spec(ct, self.db.as_deref(), default)?;
                let created = self.create_from_spec(spec)?;
                Ok(done(0, 0, u16::from(created.is_none()), String::new()))
            }
            Statement::CreateIndex(ci) => {
                self.implicit_commit()?;
                let (db, t) = exec::split_name(&ci.table_name)?;
                let db = match db {
                    Some(d) => d,
                    None => self.current_db_or_err()?,
                };
                let def = self.table_def(&db, &t)?;
                let Some(name) = &ci.name else {
                    return Err(parse::syntax_error("ON"));
                };
                let name = exec::split_name(name)?.1;
                let mut cols = Vec::new();
                let mut prefix = Vec::new();
                for c in &ci.columns {
                    let (cname, len) = crate::ddl::key_part(c)?;
                    prefix.push(len);
                    cols.push(def.column(cname).ok_or_else(|| {
                        EngineError::new(
                            1072,
                            "42000",
                            format!("Key column '{cname}' doesn't exist in table"),
                        )
                    })?);
                }
                if ci.if_not_exists && def.index(&name).is_some() {
                    return Ok(done(0, 0, 0, String::new()));
                }
                if def.temporary {
                    let names = cols.iter().map(|&c| def.columns[c].name.clone()).collect();
                    let spec = crate::alter::Spec::AddIndex {
                        name: Some(name),
                        unique: ci.unique,
                        columns: names,
                        prefix,
                    };
                    return crate::temp_alter::alter(self, &db, &t, &[spec], None, None);
                }
                let spec = quire_engine::IndexSpec {
                    name: name.clone(),
                    unique: ci.unique,
                    columns: cols,
                    prefix,
                };
                self.engine.create_index_with(
                    &db,
                    &t,
                    spec,
                    quire_engine::BuildLock::None,
                    Some(&self.interrupt),
                )?;
                Ok(done(
                    0,
                    0,
                    0,
                    "Records: 0  Duplicates: 0  Warnings: 0".into(),
                ))
            }
            Statement::Drop {
                object_type,
                if_exists,
                names,
                temporary,
                ..
            } => self.drop(*object_type, *if_exists, *temporary, names),
            Statement::Truncate(tr) => {
                // `TRUNCATE TABLE IF EXISTS` and PostgreSQL's `name *` are
                // not MySQL syntax; sqlparser 0.64 reads them, 0.55 did not.
                if tr.if_exists {
                    return Err(parse::syntax_error("IF EXISTS"));
                }
                if let Some(tn) = tr.table_names.iter().find(|tn| tn.has_asterisk) {
                    return Err(parse::syntax_error(&format!("{} *", tn.name)));
                }
                self.implicit_commit()?;
                for tn in &tr.table_names {
                    let (db, t) = exec::split_name(&tn.name)?;
                    let db = match db {
                        Some(d) => d,
                        None => self.current_db_or_err()?,
                    };
                    if self.truncate_temporary(&db, &t)? {
                        continue;
                    }
                    if self.fk_checks() {
                        self.engine.check_truncate(&db, &t)?;
                    }
                    self.engine.truncate_table(&db, &t, Some(&self.interrupt))?;
                }
                Ok(done(0, 0, 0, String::new()))
            }
            Statement::Explain {
                statement,
                format,
                analyze,
                ..
            } => {
                let Statement::Query(q) = &**statement else {
                    return Err(EngineError::not_supported("EXPLAIN of this statement"));
                };
                if *analyze {
                    return Err(EngineError::not_supported("EXPLAIN ANALYZE"));
                }
                let tree = match format {
                    None => false,
                    Some(
                        ast::AnalyzeFormatKind::Keyword(f) | ast::AnalyzeFormatKind::Assignment(f),
                    ) => match f {
                        ast::AnalyzeFormat::TRADITIONAL => false,
                        ast::AnalyzeFormat::TREE => true,
                        other => {
                            return Err(EngineError::not_supported(format!(
                                "EXPLAIN FORMAT={other}"
                            )))
                        }
                    },
                };
                let (columns, rows) = self.with_ctx(params, |cx, _| {
                    let (plan, _) = crate::query::plan(cx, q, None)?;
                    Ok(if tree {
                        crate::query::explain::tree(&plan)
                    } else {
                        crate::query::explain::table(&plan)
                    })
                })?;
                Ok(Output::Rows { columns, rows })
            }
            Statement::ExplainTable { .. } => Err(EngineError::not_supported("EXPLAIN")),
            Statement::StartTransaction { .. } => {
                counters().begin.fetch_add(1, Ordering::Relaxed);
                self.implicit_commit()?;
                let t = self.begin_txn(false);
                self.txn = Some(t);
                Ok(done(0, 0, 0, String::new()))
            }
            Statement::Commit { .. } => {
                self.implicit_commit()?;
                Ok(done(0, 0, 0, String::new()))
            }
            Statement::Rollback {
                savepoint: None, ..
            } => {
                if let Some(t) = self.txn.take() {
                    t.rollback();
                }
                Ok(done(0, 0, 0, String::new()))
            }
            Statement::Savepoint { name } => {
                self.savepoint(&name.value)?;
                Ok(done(0, 0, 0, String::new()))
            }
            Statement::Rollback {
                savepoint: Some(name),
                chain,
            } => {
                if *chain {
                    return Err(parse::syntax_error("AND CHAIN"));
                }
                self.rollback_to_savepoint(&name.value)?;
                Ok(done(0, 0, 0, String::new()))
            }
            Statement::ReleaseSavepoint { name } => {
                self.release_savepoint(&name.value)?;
                Ok(done(0, 0, 0, String::new()))
            }
            // Parsed by alter.rs; sqlparser's reading never gets here.
            Statement::AlterTable { .. } => Err(EngineError::not_supported("ALTER TABLE")),
            Statement::CreateView { .. } => Err(EngineError::not_supported("views")),
            Statement::LockTables { .. } | Statement::UnlockTables => {
                Ok(done(0, 0, 0, String::new()))
            }
            Statement::Flush { object_type, .. } => {
                match object_type {
                    FlushType::Privileges => {
                        if let Some(a) = self.accounts.as_deref() {
                            a.reload()?;
                        }
                    }
                    FlushType::Hosts => {
                        if let Some(a) = self.accounts.as_deref() {
                            a.flush_hosts()?;
                        }
                    }
                    // MySQL's FLUSH LOGS closes and reopens the binary log too.
                    FlushType::BinaryLogs | FlushType::Logs => self.engine.rotate_binlog()?,
                    // Tables, status, hosts, ...: nothing cached to drop.
                    _ => {}
                }
                Ok(done(0, 0, 0, String::new()))
            }
            Statement::Analyze { .. } | Statement::OptimizeTable { .. } => {
                Err(EngineError::not_supported("ANALYZE/OPTIMIZE TABLE"))
            }
            other => {
                let kind: String = other
                    .to_string()
                    .split_whitespace()
                    .take(2)
                    .collect::<Vec<_>>()
                    .join(" ");
                Err(EngineError::not_supported(kind))
            }
        }
    }

    /// The named savepoints of the open transaction (those of an ended
    /// one are forgotten here).
    /// A write through a view, rewritten onto its base table
    /// (`view_dml.rs`), run with the view's CHECK OPTION conditions.
    fn run_through_view(
        &mut self,
        rw: crate::view_dml::Rewritten,
        p: &Parsed,
        params: &[Value],
    ) -> SqlResult<Output> {
        let mut p2 = p.clone();
        p2.update_order = rw.order;
        p2.update_limit = rw.limit;
        self.view_check = Some(rw.check);
        let r = self.run_sql(&rw.stmt, &p2, params, None);
        self.view_check = None;
        r
    }

    /// The result columns of query `q` (nothing read): CREATE VIEW's
    /// check and a view's DESCRIBE.
    pub(crate) fn describe_query(&self, q: &ast::Query) -> SqlResult<Vec<ColumnMeta>> {
        let virt = self.virt();
        let cx = Ctx {
            engine: &self.engine,
            db: self.db.as_deref(),
            params: &[],
            env: self,
            now: expr::now_utc(),
            virt: &virt,
            describe: true,
            view_check: None,
            temps: &self.temps,
            opened: Default::default(),
        };
        crate::query::plan(&cx, q, None).map(|(plan, _)| plan.columns)
    }

    /// Adds warnings to the statement's list (view statements' notes).
    pub(crate) fn add_warnings(&mut self, w: Vec<(String, u16, String)>) {
        self.warnings.extend(w);
    }

    fn live_savepoints(&mut self) -> &mut Vec<(u64, String, quire_engine::Savepoint)> {
        let id = self.txn.as_ref().map(Txn::id);
        self.savepoints.retain(|(t, _, _)| Some(*t) == id);
        &mut self.savepoints
    }

    fn savepoint_position(&mut self, name: &str) -> SqlResult<usize> {
        self.live_savepoints()
            .iter()
            .position(|(_, n, _)| n.eq_ignore_ascii_case(name))
            .ok_or_else(|| {
                EngineError::new(1305, "42000", format!("SAVEPOINT {name} does not exist"))
            })
    }

    /// `SAVEPOINT name` (InnoDB: a savepoint of the same name is replaced).
    /// In autocommit mode outside a transaction there is nothing to mark,
    /// and MySQL answers OK.
    fn savepoint(&mut self, name: &str) -> SqlResult<()> {
        if self.txn.is_none() {
            if self.autocommit {
                return Ok(());
            }
            let t = self.begin_txn(false);
            self.txn = Some(t);
        }
        let Some(t) = self.txn.as_ref() else {
            return Ok(());
        };
        let (id, sp) = (t.id(), t.savepoint());
        let list = self.live_savepoints();
        list.retain(|(_, n, _)| !n.eq_ignore_ascii_case(name));
        list.push((id, name.to_string(), sp));
        Ok(())
    }

    /// `ROLLBACK [WORK] TO [SAVEPOINT] name`: undoes the writes made since;
    /// row locks taken since stay held (as InnoDB); later savepoints are
    /// discarded, this one stays.
    fn rollback_to_savepoint(&mut self, name: &str) -> SqlResult<()> {
        let pos = self.savepoint_position(name)?;
        let sp = self.savepoints[pos].2;
        self.savepoints.truncate(pos + 1);
        if let Some(t) = self.txn.as_mut() {
            t.rollback_to(sp);
        }
        Ok(())
    }

    /// `RELEASE SAVEPOINT name`: forgets it and every later one.
    fn release_savepoint(&mut self, name: &str) -> SqlResult<()> {
        let pos = self.savepoint_position(name)?;
        self.savepoints.truncate(pos);
        Ok(())
    }

    fn drop(
        &mut self,
        ot: ObjectType,
        if_exists: bool,
        temporary: bool,
        names: &[ast::ObjectName],
    ) -> SqlResult<Output> {
        if temporary && ot != ObjectType::Table {
            return Err(parse::syntax_error("TEMPORARY"));
        }
        // DROP TEMPORARY TABLE commits nothing (MySQL).
        if !temporary {
            self.implicit_commit()?;
        }
        match ot {
            ObjectType::Table => {
                let mut missing = Vec::new();
                let mut listed = Vec::new();
                for n in names {
                    let (db, t) = exec::split_name(n)?;
                    let db = match db {
                        Some(d) => d,
                        None => self.current_db_or_err()?,
                    };
                    listed.push((db, t));
                }
                if self.fk_checks() {
                    for (db, t) in &listed {
                        if !temporary && !self.temps.contains(db, t) {
                            self.engine.check_drop(db, t, &listed)?;
                        }
                    }
                }
                for (db, t) in listed {
                    // A temporary table first: it shadows the catalog's.
                    if let Some(def) = self.temps.remove(&db, &t) {
                        self.engine.drop_temporary_table(def)?;
                        continue;
                    }
                    if temporary {
                        missing.push(format!("{db}.{t}"));
                        continue;
                    }
                    // (Only whether it exists: a definition held across
                    // the drop would hold its trees up.)
                    let exists = self.engine.table(&db, &t).map(|_| ());
                    match exists {
                        Ok(()) => self.engine.drop_table(&db, &t, Some(&self.interrupt))?,
                        Err(e) if e.code == 1146 || e.code == 1049 => {
                            missing.push(format!("{db}.{t}"))
                        }
                        Err(e) => return Err(e),
                    }
                }
                if !missing.is_empty() && !if_exists {
                    return Err(EngineError::new(
                        1051,
                        "42S02",
                        format!("Unknown table '{}'", missing.join(",")),
                    ));
                }
                for m in &missing {
                    self.warnings
                        .push(("Note".into(), 1051, format!("Unknown table '{m}'")));
                }
                Ok(done(0, 0, missing.len() as u16, String::new()))
            }
            ObjectType::Schema | ObjectType::Database => {
                let Some(n) = names.first() else {
                    return Err(parse::syntax_error(""));
                };
                let (_, db) = exec::split_name(n)?;
                let exists = self
                    .engine
                    .databases()
                    .iter()
                    .any(|d| d.eq_ignore_ascii_case(&db));
                if !exists {
                    if if_exists {
                        self.warnings.push((
                            "Note".into(),
                            1008,
                            format!("Can't drop database '{db}'; database doesn't exist"),
                        ));
                        return Ok(done(0, 0, 1, String::new()));
                    }
                    return Err(EngineError::new(
                        1008,
                        "HY000",
                        format!("Can't drop database '{db}'; database doesn't exist"),
                    ));
                }
                let n = self.engine.tables(&db)?.len() as u64;
                self.engine.drop_database(&db, Some(&self.interrupt))?;
                if self
                    .db
                    .as_deref()
                    .is_some_and(|d| d.eq_ignore_ascii_case(&db))
                {
                    self.db = None;
                }
                Ok(done(n, 0, 0, String::new()))
            }
            ObjectType::View => crate::view::drop(self, names, if_exists),
            ObjectType::Index => Err(EngineError::not_supported(
                "DROP INDEX (the engine cannot drop indexes yet)",
            )),
            other => Err(EngineError::not_supported(format!("DROP {other}"))),
        }
    }

    pub(crate) fn warnings(&self) -> &[(String, u16, String)] {
        &self.warnings
    }

    /// The last statement's warning count (the EOF packet after a result
    /// set carries it, as MySQL's).
    pub fn warning_count(&self) -> u16 {
        u16::try_from(self.warnings.len()).unwrap_or(u16::MAX)
    }

    /// The running SELECT's time limit in ms: its MAX_EXECUTION_TIME hint,
    /// else the `max_execution_time` variable (0 = none).
    fn max_execution_ms(&self) -> u64 {
        if let Some(h) = self.hint_ms {
            return h;
        }
        // Not in the engine's config registry: skip `sysvar`'s lookup
        // there (this runs for every statement). Session value, then the
        // SET GLOBAL one, then the default, as `sysvar` orders them.
        debug_assert!(self.engine.config_value("max_execution_time").is_none());
        let text = self.vars.get("max_execution_time").cloned().or_else(|| {
            global_overrides()
                .lock()
                .ok()
                .and_then(|g| g.get("max_execution_time").cloned())
        });
        let v = match &text {
            Some(t) => var_value(t),
            None => SESSION_VARS
                .iter()
                .find(|(k, _)| *k == "max_execution_time")
                .map_or(Value::Int(0), |(_, d)| var_value(d)),
        };
        match v {
            Value::Int(i) => u64::try_from(i).unwrap_or(0),
            Value::UInt(u) => u,
            _ => 0,
        }
    }

    /// The account's identity for privilege checks (user, host pattern).
    pub(crate) fn account(&self) -> (&str, &str) {
        (&self.user, &self.account_host)
    }
}

fn set_text(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
        other => other.to_string(),
    }
}

/// Column metadata for text columns of SHOW output.
pub(crate) fn text_col(name: &str) -> ColumnMeta {
    ColumnMeta {
        name: name.to_string(),
        org_name: name.to_string(),
        table: String::new(),
        org_table: String::new(),
        db: String::new(),
        ty: ColumnType::varchar(1024),
        nullable: true,
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.close();
    }
}

/// MySQL 8.0's sql_mode names, in the order MySQL lists a mode's parts.
const SQL_MODES: &[&str] = &[
    "REAL_AS_FLOAT",
    "PIPES_AS_CONCAT",
    "ANSI_QUOTES",
    "IGNORE_SPACE",
    "ONLY_FULL_GROUP_BY",
    "NO_UNSIGNED_SUBTRACTION",
    "NO_DIR_IN_CREATE",
    "NO_AUTO_VALUE_ON_ZERO",
    "NO_BACKSLASH_ESCAPES",
    "STRICT_TRANS_TABLES",
    "STRICT_ALL_TABLES",
    "NO_ZERO_IN_DATE",
    "NO_ZERO_DATE",
    "ALLOW_INVALID_DATES",
    "ERROR_FOR_DIVISION_BY_ZERO",
    "HIGH_NOT_PRECEDENCE",
    "NO_ENGINE_SUBSTITUTION",
    "PAD_CHAR_TO_FULL_LENGTH",
    "TIME_TRUNCATE_FRACTIONAL",
];

/// A `SET sql_mode` value as MySQL stores it: upper case, combination
/// modes expanded, in MySQL's order; None for an unknown name (1231).
/// `DEFAULT` is the default mode.
fn normalise_sql_mode(text: &str) -> Option<String> {
    let t = text.trim();
    if t.eq_ignore_ascii_case("DEFAULT") {
        return Some(String::new());
    }
    let mut on: Vec<&str> = Vec::new();
    for part in t.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let up = part.to_ascii_uppercase();
        let names: &[&str] = match up.as_str() {
            "ANSI" => &[
                "REAL_AS_FLOAT",
                "PIPES_AS_CONCAT",
                "ANSI_QUOTES",
                "IGNORE_SPACE",
                "ONLY_FULL_GROUP_BY",
            ],
            "TRADITIONAL" => &[
                "STRICT_TRANS_TABLES",
                "STRICT_ALL_TABLES",
                "NO_ZERO_IN_DATE",
                "NO_ZERO_DATE",
                "ERROR_FOR_DIVISION_BY_ZERO",
                "NO_ENGINE_SUBSTITUTION",
            ],
            _ => match SQL_MODES.iter().find(|m| **m == up) {
                Some(m) => std::slice::from_ref(m),
                None => return None,
            },
        };
        on.extend_from_slice(names);
    }
    let ordered: Vec<&str> = SQL_MODES
        .iter()
        .copied()
        .filter(|m| on.contains(m))
        .collect();
    Some(ordered.join(","))
}
