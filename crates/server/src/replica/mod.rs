//! # quire as a replica: one channel that follows a source's binary log
//!
//! ```text
//!   CHANGE REPLICATION SOURCE TO ...  ──> mysql.quire_replica_source (durable)
//!   START REPLICA ──> channel thread:
//!        connect (client.rs) ─> check server ids ─> register ─> dump(file, pos)
//!            │  events, in order
//!            v
//!        Applier (applier.rs) ─> this server's transactions, each carrying
//!            the position it reached (mysql.quire_replica_position)
//!        stream broken?  roll back the open transaction, wait
//!            SOURCE_CONNECT_RETRY, reconnect from the stored position
//!        applier error?  stop; SHOW REPLICA STATUS says why
//!   STOP REPLICA ──> flag + socket shutdown, thread joined
//! ```
//!
//! One thread reads and applies (MySQL has an I/O thread, a relay log
//! and an SQL thread): there is no relay log, so Replica_IO_Running and
//! Replica_SQL_Running move together, and a restart asks the source again
//! from the last applied position, as `relay_log_recovery=ON` does. The
//! server starts the channel at start-up when a source is configured,
//! unless `skip_replica_start` is ON.

pub mod applier;
pub mod client;
pub mod committer;
pub mod io;

use std::net::{Shutdown, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use parking_lot::Mutex;
use quire_engine::catalog::ColumnDef;
use quire_engine::error::EngineError;
use quire_engine::types::{ColumnType, Value};
use quire_engine::{Engine, Isolation, Txn};
use quire_sql::replication::{ReplicaControl, SourceOptions};
use quire_sql::SqlResult;

use applier::{Applier, ApplyError, SourcePos, Stored};
use client::{ClientError, Login};
use io::{EventQueue, Item, Reader, ReaderSpec};

/// The one channel's name.
const CHANNEL: &str = "";
/// `mysql.quire_replica_source`: the source's address and account (as
/// MySQL's mysql.slave_master_info, password in clear as there).
const CONFIG_TABLE: &str = "quire_replica_source";
/// MySQL's default SOURCE_CONNECT_RETRY.
const DEFAULT_CONNECT_RETRY_S: u32 = 60;
/// MySQL's default heartbeat: half of replica_net_timeout (60 s).
const DEFAULT_HEARTBEAT_MS: u64 = 30_000;

/// The current reader's socket (io.rs), which STOP shuts down.
type SharedSocket = Arc<Mutex<Option<TcpStream>>>;

/// What CHANGE REPLICATION SOURCE configured.
#[derive(Debug, Clone, PartialEq)]
struct SourceConfig {
    login: Login,
    connect_retry_s: u32,
    heartbeat_ms: u64,
}

/// What SHOW REPLICA STATUS reads while the thread runs.
#[derive(Debug, Clone, Default)]
struct Progress {
    io_state: &'static str,
    io_running: &'static str,
    sql_running: bool,
    read: SourcePos,
    executed: SourcePos,
    last_io_error: Option<(u16, String, String)>,
    last_sql_error: Option<(u16, String, String)>,
    source_server_id: u32,
    source_uuid: String,
    /// Source timestamp of the event being applied while the applier is
    /// behind; 0 when caught up.
    applying_since: u32,
}

struct Running {
    stop: Arc<AtomicBool>,
    /// The current reader's socket, if connected.
    socket: Arc<Mutex<Option<SharedSocket>>>,
    handle: JoinHandle<()>,
}

/// The channel of one serving engine.
pub struct Channel {
    engine: Engine,
    report_port: u16,
    config: Mutex<Option<SourceConfig>>,
    running: Mutex<Option<Running>>,
    progress: Arc<Mutex<Progress>>,
}

/// The channels of the engines this process serves (tests serve several
/// engines in one process); bounded by the engines served at once.
fn channels() -> &'static Mutex<Vec<Arc<Channel>>> {
    static C: OnceLock<Mutex<Vec<Arc<Channel>>>> = OnceLock::new();
    C.get_or_init(|| Mutex::new(Vec::new()))
}

struct Control;

fn channel_of(e: &Engine) -> SqlResult<Arc<Channel>> {
    channels()
        .lock()
        .iter()
        .find(|c| c.engine.same(e))
        .cloned()
        .ok_or_else(|| EngineError::not_supported("replication channels outside `quire serve`"))
}

impl ReplicaControl for Control {
    fn change_source(&self, e: &Engine, o: &SourceOptions) -> SqlResult<()> {
        channel_of(e)?.change_source(o)
    }
    fn start(&self, e: &Engine) -> SqlResult<Option<(u16, String)>> {
        channel_of(e)?.start()
    }
    fn stop(&self, e: &Engine) -> SqlResult<Option<(u16, String)>> {
        Ok(channel_of(e)?.stop())
    }
    fn reset(&self, e: &Engine, all: bool) -> SqlResult<()> {
        channel_of(e)?.reset(all)
    }
    fn status(&self, e: &Engine) -> Option<Vec<(&'static str, Value)>> {
        channel_of(e).ok()?.status()
    }
}

/// Sets up the channel of `engine` (at serve start): loads its
/// configuration and starts it when one is stored, unless
/// `skip_replica_start`.
pub fn open(engine: &Engine, report_port: u16) -> Result<Arc<Channel>, EngineError> {
    quire_sql::replication::install_replica_control(Box::new(Control));
    let ch = Arc::new(Channel {
        engine: engine.clone(),
        report_port,
        config: Mutex::new(load_config(engine)?),
        running: Mutex::new(None),
        progress: Arc::new(Mutex::new(Progress {
            io_running: "No",
            ..Progress::default()
        })),
    });
    if let Some(p) = applier::load_position(engine, CHANNEL)? {
        let mut g = ch.progress.lock();
        g.read = p.pos.clone();
        g.executed = p.pos;
    }
    channels().lock().push(ch.clone());
    let skip = engine.config_value("skip_replica_start").as_deref() == Some("ON");
    if !skip && ch.config.lock().is_some() {
        ch.start()?;
    }
    Ok(ch)
}

/// Stops the channel at serve end.
pub fn close(ch: &Arc<Channel>) {
    ch.stop();
    channels().lock().retain(|c| !Arc::ptr_eq(c, ch));
}

fn must_stop() -> EngineError {
    EngineError::new(
        3021,
        "HY000",
        "This operation cannot be performed with a running replica io thread; \
         run STOP REPLICA IO_THREAD FOR CHANNEL '' first.",
    )
}

impl Channel {
    fn change_source(&self, o: &SourceOptions) -> SqlResult<()> {
        if self.running.lock().is_some() {
            return Err(must_stop());
        }
        if o.auto_position == Some(true) {
            return Err(EngineError::not_supported(
                "SOURCE_AUTO_POSITION=1 (a quire replica tracks the source's file and position)",
            ));
        }
        let mut cfg = self.config.lock();
        let old = cfg.clone().unwrap_or(SourceConfig {
            login: Login {
                port: 3306,
                ..Login::default()
            },
            connect_retry_s: DEFAULT_CONNECT_RETRY_S,
            heartbeat_ms: DEFAULT_HEARTBEAT_MS,
        });
        let mut new = old.clone();
        apply_options(&mut new, o);
        // MySQL: a new host or port without a position starts at the
        // source's first file.
        let moved = new.login.host != old.login.host || new.login.port != old.login.port;
        let position = match (&o.log_file, o.log_pos) {
            (Some(f), p) => Some(SourcePos {
                file: f.clone(),
                pos: p.unwrap_or(4).max(4),
            }),
            (None, Some(p)) => {
                let cur = self.progress.lock().executed.clone();
                Some(SourcePos {
                    file: cur.file,
                    pos: p.max(4),
                })
            }
            (None, None) if moved => Some(SourcePos {
                file: String::new(),
                pos: 4,
            }),
            (None, None) => None,
        };
        store_config(&self.engine, &new)?;
        if let Some(p) = position {
            applier::set_position(&self.engine, CHANNEL, &p)?;
            let mut g = self.progress.lock();
            g.read = p.clone();
            g.executed = p;
        }
        *cfg = Some(new);
        Ok(())
    }

    fn start(&self) -> SqlResult<Option<(u16, String)>> {
        let mut running = self.running.lock();
        if let Some(r) = running.as_ref() {
            if !r.handle.is_finished() {
                return Ok(Some((
                    3083,
                    "Replication thread(s) for channel '' are already runnning.".to_string(),
                )));
            }
        }
        if let Some(r) = running.take() {
            let _ = r.handle.join();
        }
        let Some(cfg) = self.config.lock().clone() else {
            return Err(EngineError::new(
                1200,
                "HY000",
                "The server is not configured as replica; fix in config file or with \
                 CHANGE REPLICATION SOURCE TO",
            ));
        };
        let stored = applier::load_position(&self.engine, CHANNEL)?.unwrap_or(Stored {
            pos: SourcePos {
                file: String::new(),
                pos: 4,
            },
            seq: 0,
        });
        let start = stored.pos.clone();
        let applier = Applier::new(self.engine.clone(), CHANNEL, stored)?;
        {
            let mut g = self.progress.lock();
            g.io_running = "Connecting";
            g.sql_running = true;
            g.io_state = "Connecting to source";
            g.read = start.clone();
            g.executed = start;
            g.last_sql_error = None;
            g.last_io_error = None;
        }
        let stop = Arc::new(AtomicBool::new(false));
        let socket = Arc::new(Mutex::new(None));
        let worker = Worker {
            cfg,
            server_id: server_id(&self.engine),
            report_port: self.report_port,
            stop: stop.clone(),
            socket: socket.clone(),
            progress: self.progress.clone(),
            applier,
        };
        let handle = std::thread::Builder::new()
            .name("replica".to_string())
            .spawn(move || worker.run())
            .map_err(EngineError::internal)?;
        *running = Some(Running {
            stop,
            socket,
            handle,
        });
        Ok(None)
    }

    fn stop(&self) -> Option<(u16, String)> {
        let Some(r) = self.running.lock().take() else {
            return Some((
                3084,
                "Replication thread(s) for channel '' are already stopped.".to_string(),
            ));
        };
        r.stop.store(true, Ordering::SeqCst);
        if let Some(sock) = r.socket.lock().as_ref() {
            if let Some(s) = sock.lock().as_ref() {
                let _ = s.shutdown(Shutdown::Both);
            }
        }
        let _ = r.handle.join();
        let mut g = self.progress.lock();
        g.io_running = "No";
        g.sql_running = false;
        g.io_state = "";
        None
    }

    fn reset(&self, all: bool) -> SqlResult<()> {
        if self.running.lock().is_some() {
            return Err(EngineError::new(
                3081,
                "HY000",
                "This operation cannot be performed with running replication threads; \
                 run STOP REPLICA FOR CHANNEL '' first",
            ));
        }
        applier::clear_position(&self.engine, CHANNEL)?;
        {
            let mut g = self.progress.lock();
            g.read = SourcePos::default();
            g.executed = SourcePos::default();
            g.last_io_error = None;
            g.last_sql_error = None;
        }
        if all {
            clear_config(&self.engine)?;
            *self.config.lock() = None;
        }
        Ok(())
    }

    fn status(&self) -> Option<Vec<(&'static str, Value)>> {
        let cfg = self.config.lock().clone()?;
        let running = self
            .running
            .lock()
            .as_ref()
            .is_some_and(|r| !r.handle.is_finished());
        let g = self.progress.lock().clone();
        let yes_no = |b: bool| Value::text(if b { "Yes" } else { "No" });
        let (io_errno, io_error, io_ts) = g.last_io_error.clone().unwrap_or_default();
        let (sql_errno, sql_error, sql_ts) = g.last_sql_error.clone().unwrap_or_default();
        let (last_errno, last_error) = (sql_errno, sql_error.clone());
        let behind = match (running && g.sql_running, g.applying_since) {
            (false, _) => Value::Null,
            (true, 0) => Value::UInt(0),
            (true, ts) => Value::UInt(now_s().saturating_sub(u64::from(ts))),
        };
        Some(vec![
            (
                "Replica_IO_State",
                Value::text(if running { g.io_state } else { "" }),
            ),
            ("Source_Host", Value::text(&cfg.login.host)),
            ("Source_User", Value::text(&cfg.login.user)),
            ("Source_Port", Value::UInt(u64::from(cfg.login.port))),
            ("Connect_Retry", Value::UInt(u64::from(cfg.connect_retry_s))),
            ("Source_Log_File", Value::text(&g.read.file)),
            ("Read_Source_Log_Pos", Value::UInt(g.read.pos)),
            ("Relay_Log_File", Value::text("")),
            ("Relay_Log_Pos", Value::UInt(0)),
            ("Relay_Source_Log_File", Value::text(&g.executed.file)),
            (
                "Replica_IO_Running",
                Value::text(if running { g.io_running } else { "No" }),
            ),
            ("Replica_SQL_Running", yes_no(running && g.sql_running)),
            ("Last_Errno", Value::UInt(u64::from(last_errno))),
            ("Last_Error", Value::text(&last_error)),
            ("Skip_Counter", Value::UInt(0)),
            ("Exec_Source_Log_Pos", Value::UInt(g.executed.pos)),
            ("Relay_Log_Space", Value::UInt(0)),
            ("Until_Condition", Value::text("None")),
            ("Until_Log_Pos", Value::UInt(0)),
            ("Source_SSL_Allowed", Value::text("No")),
            ("Seconds_Behind_Source", behind),
            ("Source_SSL_Verify_Server_Cert", Value::text("No")),
            ("Last_IO_Errno", Value::UInt(u64::from(io_errno))),
            ("Last_IO_Error", Value::text(&io_error)),
            ("Last_SQL_Errno", Value::UInt(u64::from(sql_errno))),
            ("Last_SQL_Error", Value::text(&sql_error)),
            (
                "Source_Server_Id",
                Value::UInt(u64::from(g.source_server_id)),
            ),
            ("Source_UUID", Value::text(&g.source_uuid)),
            (
                "Source_Info_File",
                Value::text("mysql.quire_replica_source"),
            ),
            ("SQL_Delay", Value::UInt(0)),
            ("SQL_Remaining_Delay", Value::Null),
            (
                "Replica_SQL_Running_State",
                Value::text(if running && g.sql_running {
                    "Replica has read all relay log; waiting for more updates"
                } else {
                    ""
                }),
            ),
            ("Source_Retry_Count", Value::UInt(86400)),
            ("Last_IO_Error_Timestamp", Value::text(&io_ts)),
            ("Last_SQL_Error_Timestamp", Value::text(&sql_ts)),
            ("Auto_Position", Value::UInt(0)),
            ("Channel_Name", Value::text(CHANNEL)),
            (
                "Get_source_public_key",
                Value::UInt(u64::from(cfg.login.get_public_key)),
            ),
        ])
    }
}

fn apply_options(c: &mut SourceConfig, o: &SourceOptions) {
    if let Some(h) = &o.host {
        c.login.host = h.clone();
    }
    if let Some(p) = o.port {
        c.login.port = p;
    }
    if let Some(u) = &o.user {
        c.login.user = u.clone();
    }
    if let Some(p) = &o.password {
        c.login.password = p.clone();
    }
    if let Some(k) = o.get_public_key {
        c.login.get_public_key = k;
    }
    if let Some(r) = o.connect_retry_s {
        c.connect_retry_s = r;
    }
    if let Some(h) = o.heartbeat_period_ms {
        c.heartbeat_ms = h;
    }
}

fn server_id(engine: &Engine) -> u32 {
    engine
        .config_value("server_id")
        .and_then(|v| v.parse().ok())
        .unwrap_or(1)
}

/// Why one session with the source ended.
enum Ended {
    /// STOP REPLICA or shutdown.
    Stopped,
    /// The connection failed: retry after SOURCE_CONNECT_RETRY.
    Io(ClientError),
    /// The applier failed: the channel stops.
    Sql(ApplyError),
}

/// The applier thread: it starts a reader (io.rs) from the applied
/// position, applies what it queues, and on a broken stream rolls back the
/// open transaction and starts a new reader after SOURCE_CONNECT_RETRY.
struct Worker {
    cfg: SourceConfig,
    server_id: u32,
    report_port: u16,
    stop: Arc<AtomicBool>,
    socket: Arc<Mutex<Option<SharedSocket>>>,
    progress: Arc<Mutex<Progress>>,
    applier: Applier,
}

/// Now as MySQL prints error timestamps: `YYMMDD HH:MM:SS` (UTC).
fn now_text() -> String {
    let secs = now_s() as i64;
    let (y, m, d) = quire_engine::tszone::civil_from_days(secs.div_euclid(86_400));
    let t = secs.rem_euclid(86_400);
    format!(
        "{:02}{m:02}{d:02} {:02}:{:02}:{:02}",
        y % 100,
        t / 3600,
        t / 60 % 60,
        t % 60
    )
}

fn now_s() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

impl Worker {
    fn run(mut self) {
        loop {
            match self.session() {
                Ended::Stopped => break,
                Ended::Sql(e) => {
                    self.applier.abandon();
                    let mut g = self.progress.lock();
                    g.sql_running = false;
                    g.io_running = "No";
                    g.last_sql_error = Some((e.code, e.message, now_text()));
                    break;
                }
                Ended::Io(e) => {
                    self.applier.abandon();
                    {
                        let mut g = self.progress.lock();
                        g.io_running = "Connecting";
                        g.io_state = "Waiting to reconnect after a failed source event read";
                        g.applying_since = 0;
                        g.last_io_error = Some((e.code, e.message, now_text()));
                    }
                    if !self.sleep(Duration::from_secs(u64::from(self.cfg.connect_retry_s))) {
                        break;
                    }
                }
            }
        }
        *self.socket.lock() = None;
    }

    /// Sleeps up to `d`; false when stopped meanwhile.
    fn sleep(&self, d: Duration) -> bool {
        let step = Duration::from_millis(50);
        let mut left = d;
        while !left.is_zero() {
            if self.stop.load(Ordering::SeqCst) {
                return false;
            }
            let s = left.min(step);
            std::thread::sleep(s);
            left -= s;
        }
        !self.stop.load(Ordering::SeqCst)
    }

    fn stopped(&self) -> bool {
        self.stop.load(Ordering::SeqCst)
    }

    /// One connection's worth of events.
    fn session(&mut self) -> Ended {
        if self.stopped() {
            return Ended::Stopped;
        }
        let spec = ReaderSpec {
            login: self.cfg.login.clone(),
            heartbeat_ms: self.cfg.heartbeat_ms,
            server_id: self.server_id,
            report_port: self.report_port,
            from: self.applier.executed.clone(),
        };
        let (mut reader, info) = match Reader::start(spec, self.stop.clone()) {
            Ok(r) => r,
            Err(e) if self.stopped() => {
                let _ = e;
                return Ended::Stopped;
            }
            Err(e) => return Ended::Io(e),
        };
        *self.socket.lock() = Some(reader.socket());
        self.applier.set_checksum(info.checksum);
        {
            let mut g = self.progress.lock();
            g.io_running = "Yes";
            g.io_state = "Waiting for source to send event";
            g.source_server_id = info.server_id;
            g.source_uuid = info.uuid;
        }
        let ended = self.apply_queue(&reader.queue);
        reader.finish();
        *self.socket.lock() = None;
        ended
    }

    fn apply_queue(&mut self, q: &EventQueue) -> Ended {
        loop {
            let ev = match q.pop() {
                Some(Item::Event(ev)) => ev,
                Some(Item::Broken(e)) if !self.stopped() => return Ended::Io(e),
                _ => return Ended::Stopped,
            };
            let ts = u32::from_le_bytes([ev[0], ev[1], ev[2], ev[3]]);
            if let Err(e) = self.applier.apply(&ev) {
                return Ended::Sql(e);
            }
            if q.is_empty() && !self.applier.in_transaction() && self.applier.committing() {
                if let Err(e) = self.applier.settle() {
                    return Ended::Sql(e);
                }
            }
            let mut g = self.progress.lock();
            g.read = self.applier.read_pos().clone();
            g.executed = self.applier.executed.clone();
            // Behind while events wait or a transaction is open; caught
            // up otherwise (Seconds_Behind_Source 0).
            let busy = self.applier.in_transaction() || self.applier.committing() || !q.is_empty();
            g.applying_since = if busy && ts > 0 { ts } else { 0 };
            drop(g);
            if self.stopped() {
                return Ended::Stopped;
            }
        }
    }
}

/// The columns of `mysql.quire_replica_source`.
fn config_columns() -> Vec<ColumnDef> {
    let vc = |n: &str, len| ColumnDef::new(n, ColumnType::varchar(len), false);
    let uint = |n: &str| ColumnDef::new(n, ColumnType::BigInt { unsigned: true }, false);
    vec![
        vc("Channel_name", 64),
        vc("Host", 255),
        uint("Port"),
        vc("User_name", 96),
        vc("User_password", 512),
        uint("Connect_retry"),
        uint("Heartbeat_ms"),
        uint("Get_public_key"),
    ]
}

fn config_table(engine: &Engine) -> Result<Arc<quire_engine::TableDef>, EngineError> {
    engine.create_database("mysql", true)?;
    engine.create_table(
        "mysql",
        CONFIG_TABLE,
        config_columns(),
        vec![0],
        vec![],
        true,
    )
}

fn store_config(engine: &Engine, c: &SourceConfig) -> Result<(), EngineError> {
    let table = config_table(engine)?;
    let row = vec![
        Value::text(CHANNEL),
        Value::text(&c.login.host),
        Value::UInt(u64::from(c.login.port)),
        Value::text(&c.login.user),
        Value::text(&c.login.password),
        Value::UInt(u64::from(c.connect_retry_s)),
        Value::UInt(c.heartbeat_ms),
        Value::UInt(u64::from(c.login.get_public_key)),
    ];
    let mut t = engine.begin(Isolation::ReadCommitted, false);
    let key = Txn::encode_pk(&table, &[Value::text(CHANNEL)])?;
    if t.get_by_key(&table, &key)?.is_some() {
        t.update(&table, &key, row)?;
    } else {
        t.insert(&table, row.into_iter().map(Some).collect())?;
    }
    t.commit()?;
    Ok(())
}

fn clear_config(engine: &Engine) -> Result<(), EngineError> {
    let Ok(table) = engine.table("mysql", CONFIG_TABLE) else {
        return Ok(());
    };
    let mut t = engine.begin(Isolation::ReadCommitted, false);
    let key = Txn::encode_pk(&table, &[Value::text(CHANNEL)])?;
    t.delete(&table, &key)?;
    t.commit()?;
    Ok(())
}

fn load_config(engine: &Engine) -> Result<Option<SourceConfig>, EngineError> {
    let Ok(table) = engine.table("mysql", CONFIG_TABLE) else {
        return Ok(None);
    };
    let mut t = engine.begin(Isolation::ReadCommitted, true);
    let key = Txn::encode_pk(&table, &[Value::text(CHANNEL)])?;
    let row = t.get_by_key(&table, &key)?;
    t.rollback();
    let Some(r) = row else {
        return Ok(None);
    };
    let text = |v: &Value| match v {
        Value::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
        _ => String::new(),
    };
    let num = |v: &Value| match v {
        Value::UInt(n) => *n,
        Value::Int(n) => (*n).max(0) as u64,
        _ => 0,
    };
    Ok(Some(SourceConfig {
        login: Login {
            host: text(&r[1]),
            port: u16::try_from(num(&r[2])).unwrap_or(3306),
            user: text(&r[3]),
            password: text(&r[4]),
            get_public_key: num(&r[7]) != 0,
        },
        connect_retry_s: u32::try_from(num(&r[5])).unwrap_or(DEFAULT_CONNECT_RETRY_S),
        heartbeat_ms: num(&r[6]),
    }))
}
