//! # The process list: who is connected, what they run, and stopping them
//!
//! One [`Proc`] per authenticated connection, in a process-wide, bounded
//! registry ([`processes`]); the protocol server registers a connection
//! after authentication and the [`ProcGuard`] it gets back removes it when
//! the connection ends. Everything an operator sees comes from here:
//!
//! ```text
//!   conn.rs (server)          Session (this crate)           engine
//!   ────────────────          ────────────────────           ──────
//!   begin(Query, text) ──►  Proc { id, user, host,
//!   end() -> Sleep            db ◄─ USE,  state ◄─ statement phases,
//!                             info (statement text),
//!                             interrupt ─────────────────►  Txn: lock waits,
//!                             closer (shuts the socket) }      scans, commit
//!                                                              stage
//!   SHOW [FULL] PROCESSLIST, information_schema.PROCESSLIST,
//!   performance_schema.threads  ──►  snapshot()  (rows, filtered by PROCESS)
//!   KILL [QUERY|CONNECTION] expr ─►  get(id): owner / CONNECTION_ADMIN check,
//!                                    interrupt.kill(..), closer() for CONNECTION
//! ```
//!
//! ## State column
//! The engine's stage wins (`waiting for row lock`, `waiting for handler
//! commit`); otherwise the statement phase the session set (`executing`,
//! `Sending data` while a result is being built from rows, `User sleep`
//! in SLEEP()); a sleeping connection shows an empty state and NULL info,
//! as MySQL does.
//!
//! ## Privileges
//! The session decides PROCESS, CONNECTION_ADMIN (or SUPER) and SHUTDOWN
//! from its effective privileges (the account's and its active roles',
//! `privilege.rs`) and hands the answer to [`kill`] and [`visible_rows`];
//! [`has_global_privilege`] reads an account's own privileges for checks
//! made before a session exists (the extra connection at login).
//! Sessions without an account store (embedded use) may do everything.
//! Without PROCESS an account sees only threads of its own user name.
//! `KILL` takes any expression (`KILL CONNECTION_ID()`), evaluated by the
//! session as MySQL's `val_int()` (not a number: 0, which is error 1094).
//!
//! ## Bounds
//! The registry holds at most [`MAX_PROCS`] entries (the server's
//! `max_connections` is far below); statement text is kept up to
//! [`MAX_INFO`] bytes (SHOW PROCESSLIST cuts it to 100 characters,
//! FULL and the tables show what is kept).

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use quire_engine::{ColumnType, EngineError, Interrupt, Kill, Stage, Value};

use crate::exec::Virtual;
use crate::SqlResult;

/// Most connections the registry tracks at once.
pub const MAX_PROCS: usize = 200_000;
/// Statement text kept per connection, in bytes.
pub const MAX_INFO: usize = 65_535;
/// `SHOW PROCESSLIST` without FULL cuts Info to this many characters.
pub const SHORT_INFO: usize = 100;

/// What the connection's thread is doing (the `Command` column).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Cmd {
    Sleep = 0,
    Query = 1,
    Execute = 2,
    Prepare = 3,
    FieldList = 4,
    InitDb = 5,
    Ping = 6,
    Statistics = 7,
    Killed = 8,
    Connect = 9,
    Quit = 10,
    Other = 11,
}

impl Cmd {
    /// MySQL's name for the command.
    pub fn name(self) -> &'static str {
        match self {
            Cmd::Sleep => "Sleep",
            Cmd::Query => "Query",
            Cmd::Execute => "Execute",
            Cmd::Prepare => "Prepare",
            Cmd::FieldList => "Field List",
            Cmd::InitDb => "Init DB",
            Cmd::Ping => "Ping",
            Cmd::Statistics => "Statistics",
            Cmd::Killed => "Killed",
            Cmd::Connect => "Connect",
            Cmd::Quit => "Quit",
            Cmd::Other => "Daemon",
        }
    }
    fn from_u8(v: u8) -> Cmd {
        match v {
            1 => Cmd::Query,
            2 => Cmd::Execute,
            3 => Cmd::Prepare,
            4 => Cmd::FieldList,
            5 => Cmd::InitDb,
            6 => Cmd::Ping,
            7 => Cmd::Statistics,
            8 => Cmd::Killed,
            9 => Cmd::Connect,
            10 => Cmd::Quit,
            11 => Cmd::Other,
            _ => Cmd::Sleep,
        }
    }
}

/// Statement phases the SQL layer reports (the engine adds its stages).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Phase {
    None = 0,
    Executing = 1,
    SendingData = 2,
    UserSleep = 3,
}

impl Phase {
    fn name(v: u8) -> &'static str {
        match v {
            1 => "executing",
            2 => "Sending data",
            3 => "User sleep",
            _ => "",
        }
    }
}

/// Closes a connection's socket (installed by the server).
pub type Closer = Box<dyn Fn() + Send + Sync>;

struct Mutable {
    db: Option<String>,
    info: Option<String>,
    since: Instant,
}

/// One connection in the process list.
pub struct Proc {
    pub id: u64,
    pub user: String,
    /// `ip:port`, or `localhost` for the Unix socket.
    pub host: String,
    /// The account's host pattern (for privilege checks).
    pub account_host: String,
    command: AtomicU8,
    phase: AtomicU8,
    m: Mutex<Mutable>,
    interrupt: Interrupt,
    closer: Option<Closer>,
    /// The serving server's stop flag (SHUTDOWN).
    shutdown: Option<Arc<AtomicBool>>,
}

impl std::fmt::Debug for Proc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Proc")
            .field("id", &self.id)
            .field("user", &self.user)
            .field("host", &self.host)
            .finish()
    }
}

fn cut(s: &str) -> String {
    s[..info_len(s)].to_string()
}

/// How many bytes of `s` the process list keeps (a char boundary).
pub fn info_len(s: &str) -> usize {
    let mut end = s.len().min(MAX_INFO);
    while end > 0 && !s.is_char_boundary(end) {
        end -= 1;
    }
    end
}

impl Proc {
    /// A connection `id` of `user` (matched account host `account_host`)
    /// from `host`; `closer` shuts its socket down (KILL CONNECTION).
    pub fn new(
        id: u64,
        user: &str,
        account_host: &str,
        host: &str,
        interrupt: Interrupt,
        closer: Option<Closer>,
    ) -> Proc {
        Proc {
            id,
            user: user.to_string(),
            host: host.to_string(),
            account_host: account_host.to_string(),
            command: AtomicU8::new(Cmd::Sleep as u8),
            phase: AtomicU8::new(Phase::None as u8),
            m: Mutex::new(Mutable {
                db: None,
                info: None,
                since: Instant::now(),
            }),
            interrupt,
            closer,
            shutdown: None,
        }
    }

    /// The flag that stops the server this connection belongs to.
    pub fn with_shutdown(mut self, flag: Arc<AtomicBool>) -> Proc {
        self.shutdown = Some(flag);
        self
    }

    /// Asks the connection's server to shut down cleanly. Error 1235 for
    /// a connection that has no server (embedded use).
    pub fn request_shutdown(&self) -> SqlResult<()> {
        match &self.shutdown {
            Some(f) => {
                f.store(true, Ordering::SeqCst);
                Ok(())
            }
            None => Err(EngineError::not_supported("SHUTDOWN without a server")),
        }
    }

    /// The connection's interrupt (shared with its session).
    pub fn interrupt(&self) -> &Interrupt {
        &self.interrupt
    }

    /// A command starts (`info`: the statement text, if any).
    pub fn begin(&self, cmd: Cmd, info: Option<&str>) {
        if let Ok(mut m) = self.m.lock() {
            m.info = info.map(cut);
            m.since = Instant::now();
        }
        self.phase.store(Phase::None as u8, Ordering::Relaxed);
        self.command.store(cmd as u8, Ordering::Relaxed);
    }

    /// The command ended: the connection sleeps.
    pub fn end(&self) {
        self.begin(Cmd::Sleep, None);
    }

    /// The statement text of the command now running (multi-statement
    /// queries report each piece).
    pub fn set_info(&self, info: &str) {
        if let Ok(mut m) = self.m.lock() {
            m.info = Some(cut(info));
        }
    }

    pub fn set_db(&self, db: Option<&str>) {
        if let Ok(mut m) = self.m.lock() {
            m.db = db.map(str::to_string);
        }
    }

    pub(crate) fn set_phase(&self, p: Phase) {
        self.phase.store(p as u8, Ordering::Relaxed);
    }

    pub fn command(&self) -> Cmd {
        if self.interrupt.killed() == Kill::Connection {
            return Cmd::Killed;
        }
        Cmd::from_u8(self.command.load(Ordering::Relaxed))
    }

    /// The `State` column.
    pub fn state(&self) -> &'static str {
        let stage = self.interrupt.stage();
        if stage != Stage::None {
            return stage.name();
        }
        if self.command() == Cmd::Sleep {
            return "";
        }
        match self.phase.load(Ordering::Relaxed) {
            0 => "executing",
            p => Phase::name(p),
        }
    }

    /// Stops the running statement (`KILL QUERY`) or the connection.
    pub fn kill(&self, how: Kill) {
        self.interrupt.kill(how);
        if how == Kill::Connection {
            if let Some(c) = &self.closer {
                c();
            }
        }
    }

    fn row(&self) -> ProcRow {
        let (db, info, secs) = match self.m.lock() {
            Ok(m) => (m.db.clone(), m.info.clone(), m.since.elapsed().as_secs()),
            Err(_) => (None, None, 0),
        };
        let command = self.command();
        ProcRow {
            id: self.id,
            user: self.user.clone(),
            host: self.host.clone(),
            db,
            command: command.name(),
            time: secs,
            state: self.state(),
            info: if command == Cmd::Sleep { None } else { info },
        }
    }
}

/// One line of the process list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcRow {
    pub id: u64,
    pub user: String,
    pub host: String,
    pub db: Option<String>,
    pub command: &'static str,
    pub time: u64,
    pub state: &'static str,
    pub info: Option<String>,
}

/// The process-wide registry.
#[derive(Default)]
pub struct ProcessList {
    map: Mutex<HashMap<u64, Arc<Proc>>>,
}

/// Removes its connection from the registry when dropped.
pub struct ProcGuard {
    pub proc: Arc<Proc>,
}

impl Drop for ProcGuard {
    fn drop(&mut self) {
        if let Ok(mut m) = processes().map.lock() {
            if m.get(&self.proc.id)
                .is_some_and(|p| Arc::ptr_eq(p, &self.proc))
            {
                m.remove(&self.proc.id);
            }
        }
    }
}

/// The registry of this process.
pub fn processes() -> &'static ProcessList {
    static P: OnceLock<ProcessList> = OnceLock::new();
    P.get_or_init(ProcessList::default)
}

impl ProcessList {
    /// Adds a connection; `None` when the registry is full.
    pub fn register(&self, p: Proc) -> Option<ProcGuard> {
        let p = Arc::new(p);
        let mut m = self.map.lock().ok()?;
        if m.len() >= MAX_PROCS {
            return None;
        }
        m.insert(p.id, Arc::clone(&p));
        Some(ProcGuard { proc: p })
    }

    pub fn get(&self, id: u64) -> Option<Arc<Proc>> {
        self.map.lock().ok()?.get(&id).cloned()
    }

    /// Every connection, by id.
    pub fn snapshot(&self) -> Vec<Arc<Proc>> {
        let mut v: Vec<Arc<Proc>> = match self.map.lock() {
            Ok(m) => m.values().cloned().collect(),
            Err(_) => Vec::new(),
        };
        v.sort_by_key(|p| p.id);
        v
    }

    /// `Threads_running`: connections not sleeping.
    pub fn running(&self) -> u64 {
        match self.map.lock() {
            Ok(m) => m.values().filter(|p| p.command() != Cmd::Sleep).count() as u64,
            Err(_) => 0,
        }
    }
}

// ------------------------------------------------------------ privileges

/// Global privileges this module needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GlobalPriv {
    /// See every thread.
    Process,
    /// Kill other users' threads (CONNECTION_ADMIN or SUPER); also the
    /// extra connection beyond max_connections.
    ConnectionAdmin,
    /// SHUTDOWN / COM_SHUTDOWN.
    Shutdown,
}

/// Whether `user@account_host` holds `p` at the global level (SUPER
/// implies CONNECTION_ADMIN, as in MySQL); without an account store
/// (embedded sessions) everything is allowed.
pub fn has_global_privilege(
    store: Option<&dyn crate::AccountStore>,
    user: &str,
    account_host: &str,
    p: GlobalPriv,
) -> bool {
    use crate::privilege::Privs;
    let want = match p {
        GlobalPriv::Process => Privs::PROCESS,
        GlobalPriv::ConnectionAdmin => Privs::CONNECTION_ADMIN,
        GlobalPriv::Shutdown => Privs::SHUTDOWN,
    };
    match store {
        None => true,
        Some(s) => s
            .privileges(user, account_host)
            .is_some_and(|a| a.global_effective().has(want)),
    }
}

// ---------------------------------------------------------------- KILL

/// `KILL [CONNECTION|QUERY] id` for a session of `user`; `admin` = the
/// session holds CONNECTION_ADMIN (or SUPER), directly or through an
/// active role, and may stop other users' threads.
pub fn kill(user: &str, admin: bool, id: u64, query_only: bool) -> SqlResult<()> {
    let Some(p) = processes().get(id) else {
        return Err(EngineError::new(
            1094,
            "HY000",
            format!("Unknown thread id: {id}"),
        ));
    };
    if p.user != user && !admin {
        return Err(EngineError::new(
            1095,
            "HY000",
            format!("You are not owner of thread {id}"),
        ));
    }
    p.kill(if query_only {
        Kill::Query
    } else {
        Kill::Connection
    });
    Ok(())
}

// ------------------------------------------------------------ SHUTDOWN

/// Whether `sql` is the `SHUTDOWN` statement.
pub fn is_shutdown(sql: &str) -> bool {
    sql.trim()
        .trim_end_matches(';')
        .trim()
        .eq_ignore_ascii_case("shutdown")
}

// ------------------------------------------------ SLEEP and statements

thread_local! {
    static CURRENT: RefCell<Option<(Interrupt, Option<Arc<Proc>>)>> = const { RefCell::new(None) };
}

/// Makes `i` the interrupt of statements running on this thread until the
/// guard drops (SLEEP() finds it here).
pub(crate) fn enter_statement(i: &Interrupt, p: Option<&Arc<Proc>>) -> CurrentGuard {
    let prev = CURRENT.with(|c| c.replace(Some((i.clone(), p.cloned()))));
    CurrentGuard(prev)
}

pub(crate) struct CurrentGuard(Option<(Interrupt, Option<Arc<Proc>>)>);

impl Drop for CurrentGuard {
    fn drop(&mut self) {
        let prev = self.0.take();
        CURRENT.with(|c| *c.borrow_mut() = prev);
    }
}

/// The interrupt and process entry of the thread's current statement.
fn current() -> Option<(Interrupt, Option<Arc<Proc>>)> {
    CURRENT.with(|c| c.borrow().clone())
}

/// Fails with the statement's interrupt error once it is killed or past
/// `max_execution_time` (BENCHMARK's loop, `func/`).
pub(crate) fn check_interrupt() -> SqlResult<()> {
    match current() {
        Some((i, _)) => i.check(),
        None => Ok(()),
    }
}

/// Longest SLEEP() honoured (MySQL caps it near a year too).
const MAX_SLEEP: f64 = 365.0 * 24.0 * 3600.0;

/// `SLEEP(secs)`: 0 when it slept the whole time, 1 when KILL QUERY or
/// max_execution_time interrupted it (as MySQL). Negative → error 1210.
pub fn sleep(secs: f64) -> SqlResult<Value> {
    if secs.is_nan() || secs < 0.0 {
        return Err(EngineError::new(
            1210,
            "HY000",
            "Incorrect arguments to sleep.",
        ));
    }
    let d = Duration::from_secs_f64(secs.min(MAX_SLEEP));
    let end = Instant::now() + d;
    let (i, p) = match current() {
        Some((i, p)) => (Some(i), p),
        None => (None, None),
    };
    if let Some(p) = &p {
        p.set_phase(Phase::UserSleep);
    }
    let done = |v: i64| {
        if let Some(p) = &p {
            p.set_phase(Phase::Executing);
        }
        Ok(Value::Int(v))
    };
    loop {
        if let Some(i) = &i {
            if i.check().is_err() {
                return done(1);
            }
        }
        let now = Instant::now();
        if now >= end {
            return done(0);
        }
        std::thread::sleep((end - now).min(quire_engine::interrupt::WAIT_SLICE));
    }
}

/// `/*+ MAX_EXECUTION_TIME(n) */` right after the leading SELECT of
/// `sql`: n milliseconds.
pub fn hint_max_execution_time(sql: &str) -> Option<u64> {
    let t = sql.trim_start();
    let rest = t.get(..6).filter(|w| w.eq_ignore_ascii_case("select"))?;
    let _ = rest;
    let after = t[6..].trim_start();
    let body = after.strip_prefix("/*+")?;
    let end = body.find("*/")?;
    let hints = &body[..end];
    let upper = hints.to_ascii_uppercase();
    let at = upper.find("MAX_EXECUTION_TIME")?;
    let args = hints[at + "MAX_EXECUTION_TIME".len()..].trim_start();
    let args = args.strip_prefix('(')?;
    let close = args.find(')')?;
    args[..close].trim().parse::<u64>().ok()
}

// ------------------------------------------------------------- output

/// Rows of the process list as `user` may see them (`all`: the session
/// holds PROCESS).
pub fn visible_rows(user: &str, all: bool) -> Vec<ProcRow> {
    processes()
        .snapshot()
        .into_iter()
        .filter(|p| all || p.user == user)
        .map(|p| p.row())
        .collect()
}

fn opt(v: &Option<String>) -> Value {
    v.as_deref().map_or(Value::Null, Value::text)
}

/// `SHOW [FULL] PROCESSLIST` rows (Id, User, Host, db, Command, Time,
/// State, Info).
pub fn show_rows(rows: &[ProcRow], full: bool) -> Vec<Vec<Value>> {
    rows.iter()
        .map(|r| {
            let info = match (&r.info, full) {
                (Some(i), false) => Value::text(&i.chars().take(SHORT_INFO).collect::<String>()),
                (i, _) => opt(i),
            };
            vec![
                Value::UInt(r.id),
                Value::text(&r.user),
                Value::text(&r.host),
                opt(&r.db),
                Value::text(r.command),
                Value::UInt(r.time),
                Value::text(r.state),
                info,
            ]
        })
        .collect()
}

/// `information_schema.PROCESSLIST`.
pub fn information_schema(rows: &[ProcRow]) -> Virtual {
    let cols = vec![
        ("ID".to_string(), ColumnType::BigInt { unsigned: true }),
        ("USER".to_string(), ColumnType::varchar(32)),
        ("HOST".to_string(), ColumnType::varchar(261)),
        ("DB".to_string(), ColumnType::varchar(64)),
        ("COMMAND".to_string(), ColumnType::varchar(16)),
        ("TIME".to_string(), ColumnType::Int { unsigned: false }),
        ("STATE".to_string(), ColumnType::varchar(64)),
        ("INFO".to_string(), ColumnType::varchar(65535)),
    ];
    (cols, show_rows(rows, true))
}

/// `performance_schema.threads` (foreground threads only; THREAD_ID =
/// PROCESSLIST_ID here).
pub fn performance_schema_threads(rows: &[ProcRow]) -> Virtual {
    let v = |n: &str, len: u32| (n.to_string(), ColumnType::varchar(len));
    let u = |n: &str| (n.to_string(), ColumnType::BigInt { unsigned: true });
    let cols = vec![
        u("THREAD_ID"),
        v("NAME", 128),
        v("TYPE", 10),
        u("PROCESSLIST_ID"),
        v("PROCESSLIST_USER", 32),
        v("PROCESSLIST_HOST", 255),
        v("PROCESSLIST_DB", 64),
        v("PROCESSLIST_COMMAND", 16),
        (
            "PROCESSLIST_TIME".to_string(),
            ColumnType::BigInt { unsigned: false },
        ),
        v("PROCESSLIST_STATE", 64),
        v("PROCESSLIST_INFO", 65535),
    ];
    let data = rows
        .iter()
        .map(|r| {
            vec![
                Value::UInt(r.id),
                Value::text("thread/sql/one_connection"),
                Value::text("FOREGROUND"),
                Value::UInt(r.id),
                Value::text(&r.user),
                Value::text(&r.host),
                opt(&r.db),
                Value::text(r.command),
                Value::Int(i64::try_from(r.time).unwrap_or(i64::MAX)),
                if r.state.is_empty() {
                    Value::Null
                } else {
                    Value::text(r.state)
                },
                opt(&r.info),
            ]
        })
        .collect();
    (cols, data)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hint_parsing() {
        assert_eq!(
            hint_max_execution_time("SELECT /*+ MAX_EXECUTION_TIME(1000) */ 1"),
            Some(1000)
        );
        assert_eq!(
            hint_max_execution_time("  select /*+ BKA(t) max_execution_time( 5 ) */ * from t"),
            Some(5)
        );
        assert_eq!(
            hint_max_execution_time("SELECT /* MAX_EXECUTION_TIME(5) */ 1"),
            None
        );
        assert_eq!(
            hint_max_execution_time("UPDATE /*+ MAX_EXECUTION_TIME(5) */ t"),
            None
        );
        assert_eq!(hint_max_execution_time("SEL"), None);
        assert_eq!(hint_max_execution_time("SELECTé"), None);
    }

    #[test]
    fn registry_kill_and_visibility() {
        let i = Interrupt::new();
        let g = processes()
            .register(Proc::new(
                9_000_001,
                "alice",
                "%",
                "1.2.3.4:5",
                i.clone(),
                None,
            ))
            .expect("registered");
        g.proc.begin(Cmd::Query, Some(&"x".repeat(300)));
        let rows = visible_rows("bob", true);
        let r = rows.iter().find(|r| r.id == 9_000_001).expect("visible");
        assert_eq!(r.command, "Query");
        assert_eq!(r.state, "executing");
        let short = show_rows(std::slice::from_ref(r), false);
        assert_eq!(short[0][7], Value::text(&"x".repeat(100)));
        assert_eq!(
            kill("bob", true, 9_000_002, true).map_err(|e| e.code),
            Err(1094)
        );
        assert_eq!(
            kill("bob", false, 9_000_001, true).map_err(|e| e.code),
            Err(1095)
        );
        kill("alice", false, 9_000_001, true).expect("own thread");
        assert_eq!(i.check().map_err(|e| e.code), Err(1317));
        g.proc.end();
        assert_eq!(g.proc.state(), "");
        drop(g);
        assert!(processes().get(9_000_001).is_none());
    }

    #[test]
    fn sleep_is_interrupted() {
        let i = Interrupt::new();
        let _g = enter_statement(&i, None);
        assert_eq!(sleep(0.0).ok(), Some(Value::Int(0)));
        assert_eq!(sleep(-1.0).map_err(|e| e.code), Err(1210));
        i.kill(Kill::Query);
        let t = Instant::now();
        assert_eq!(sleep(30.0).ok(), Some(Value::Int(1)));
        assert!(t.elapsed() < Duration::from_secs(5));
    }
}
