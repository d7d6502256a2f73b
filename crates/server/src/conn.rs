//! # One connection: handshake, authentication, command loop
//!
//! ```text
//!            accept
//!              |
//!              v
//!   +---------------------+  ERR 1043 bad handshake / 1045 access denied /
//!   | CONNECT (login.rs)  |  1049 unknown database  -> close
//!   |  Handshake V10  --> |  3159 insecure transport, 3118 locked,
//!   |  [SSLRequest, TLS]  |  3955 failed logins, 1226/1203 user limits,
//!   |  <-- Response41     |  1862 expired password, 1129 host blocked
//!   |  [AuthSwitch <-->]  |
//!   |  [sha2 exchange]    |
//!   |  OK                 |
//!   +---------------------+
//!              |
//!              v
//!   +---------------------+  read error, EOF      -> close (Aborted_clients)
//!   | COMMAND (seq = 0)   |  idle > wait_timeout  -> ERR 4031, close
//!   |  read packet        |  too big              -> ERR 1153, close
//!   |  dispatch           |  bad sequence         -> ERR 1156, close
//!   |  reply (seq 1, 2..) |  malformed            -> ERR 1835, close
//!   +---------------------+  panic in a command   -> ERR 1105, close
//!         |   ^                COM_QUIT           -> close
//!         +---+
//! ```
//!
//! Replies are framed into one buffer and written with one `write` per
//! command. A SELECT streams: the session hands each row to a
//! [`PacketSink`] as the operators produce it, and the sink writes it to
//! the socket every 16 KiB, so the first rows reach the client while the
//! statement still runs; the EOF (with the status after an autocommit
//! commit) follows the last row, and an error part-way is an ERR packet
//! after the rows already sent, as MySQL does. SHOW and the other
//! statements answer with a materialised `Output::Rows`. Nothing a client sends can
//! panic this code; a panic inside the SQL layer is caught around the
//! session call, reported to the client as error 1105, logged, and ends
//! only this connection.
//!
//! Prepared statements: the session numbers them; the connection keeps per
//! statement its parameter count, the parameter types last bound (the
//! client sends them only when they change) and long data sent with
//! COM_STMT_SEND_LONG_DATA.

use std::collections::HashMap;
use std::io::{BufReader, Write};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::Duration;

use quire_engine::Value;
use quire_engine::{Engine, EngineError};
use quire_sql::{ColumnMeta, Output, RowSink, Session, SqlResult};

use crate::auth::{Accounts, ClientHost};
use crate::codec::{cap, status};
use crate::command::{decode_client_packet, decode_execute_params, Command, ParamError};
use crate::error::ProtocolError;
use crate::packet::{PacketReader, PacketWriter};
use crate::resultset::{
    write_binary_row, write_column_def, write_eof, write_err, write_ok, write_param_def,
    write_text_row,
};
use crate::sessions;
use crate::split::{hex_binary_literals, split_statements};
use crate::status::{self as st, counters};
use crate::stream::Stream;

mod dump;
mod login;

/// Materialised result sets flush to the socket once this many bytes
/// are buffered.
const FLUSH_AT: usize = 1 << 20;
/// A streamed result set flushes every this many bytes (MySQL's
/// `net_buffer_length` default), so the client gets rows as they come.
const STREAM_FLUSH_AT: usize = 16 << 10;
/// Limit on the handshake response (before authentication).
const MAX_HANDSHAKE: usize = 1 << 20;
/// `connect_timeout` (MySQL default 10 s).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// `net_write_timeout` (MySQL default 60 s).
const WRITE_TIMEOUT: Duration = Duration::from_secs(60);

/// What a connection needs from the server.
pub(crate) struct ConnParams {
    pub id: u32,
    pub engine: Engine,
    pub accounts: Accounts,
    pub from: ClientHost,
    pub max_allowed_packet: usize,
    pub wait_timeout: Option<Duration>,
    /// `ip:port` (or `localhost`) for the process list.
    pub host: String,
    /// The connection beyond max_connections: only CONNECTION_ADMIN stays.
    pub extra_slot: bool,
    /// The server's stop flag (SHUTDOWN, COM_SHUTDOWN).
    pub shutdown: Arc<std::sync::atomic::AtomicBool>,
    /// TLS and RSA keys (`login.rs`).
    pub auth: Arc<crate::login::AuthContext>,
}

struct Stmt {
    params: usize,
    types: Vec<(u8, u8)>,
    long_data: Vec<Option<Vec<u8>>>,
    long_data_too_big: bool,
}

enum Flow {
    Continue,
    Close,
}

struct Conn {
    p: ConnParams,
    r: PacketReader<BufReader<Stream>>,
    w: PacketWriter,
    caps: u32,
    /// The collation id the client asked for in its handshake response.
    client_collation: u8,
    user: String,
    /// The matched account's host pattern (CURRENT_USER()).
    account_host: String,
    session: Option<Session>,
    stmts: HashMap<u32, Stmt>,
    multi_statements: bool,
    /// Bytes already added to the global counters.
    counted_in: u64,
    counted_out: u64,
    /// This connection's process-list entry (removed when dropped).
    proc: Option<sessions::ProcGuard>,
    /// The account's connection slot (`max_user_connections`).
    user_conn: Option<crate::login::UserConnGuard>,
    /// This connection's COM_REGISTER_SLAVE entry (removed when dropped).
    replica: Option<quire_sql::replicas::Registered>,
}

/// Runs one connection to its end. Never panics outward (the caller also
/// wraps it in `catch_unwind`).
pub(crate) fn run(stream: Stream, p: ConnParams) {
    let _ = stream.set_nonblocking(false);
    let _ = stream.set_write_timeout(Some(WRITE_TIMEOUT));
    let _ = stream.set_read_timeout(Some(CONNECT_TIMEOUT));
    let max = p.max_allowed_packet;
    let mut c = Conn {
        p,
        r: PacketReader::new(
            BufReader::with_capacity(16 << 10, stream),
            MAX_HANDSHAKE.min(max),
        ),
        w: PacketWriter::new(),
        caps: 0,
        client_collation: 0,
        user: String::new(),
        account_host: String::new(),
        session: None,
        stmts: HashMap::new(),
        multi_statements: false,
        counted_in: 0,
        counted_out: 0,
        proc: None,
        user_conn: None,
        replica: None,
    };
    match c.login() {
        Ok(true) => {
            c.r.max_payload = max;
            let _ = c.r.get_ref().get_ref().set_read_timeout(c.p.wait_timeout);
            c.command_loop();
        }
        Ok(false) | Err(_) => {
            add(&counters().aborted_connects, 1);
        }
    }
    if let Some(mut s) = c.session.take() {
        if catch_unwind(AssertUnwindSafe(|| s.close())).is_err() {
            eprintln!(
                "quire-server: connection {}: panic while closing the session",
                c.p.id
            );
        }
    }
    c.count_bytes();
}

fn add(c: &std::sync::atomic::AtomicU64, n: u64) {
    st::add(c, n);
}

impl Conn {
    /// KILL CONNECTION reached this connection: it ends now.
    fn killed(&self) -> bool {
        self.session
            .as_ref()
            .is_some_and(|s| s.interrupt().killed() == quire_engine::Kill::Connection)
    }

    fn flush(&mut self) -> Result<(), ProtocolError> {
        let Conn { r, w, .. } = self;
        w.flush_to(r.get_mut().get_mut())?;
        Ok(())
    }

    fn count_bytes(&mut self) {
        let c = counters();
        add(&c.bytes_received, self.r.bytes_read - self.counted_in);
        add(&c.bytes_sent, self.w.bytes_written - self.counted_out);
        self.counted_in = self.r.bytes_read;
        self.counted_out = self.w.bytes_written;
    }

    fn send_err(&mut self, code: u16, sqlstate: &str, msg: &str) {
        write_err(self.w.begin(), code, sqlstate, msg);
        self.w.finish();
    }

    fn send_engine_err(&mut self, e: &EngineError) {
        self.send_err(e.code, e.sqlstate, &e.message);
    }

    /// SERVER_STATUS_AUTOCOMMIT and SERVER_STATUS_IN_TRANS from the
    /// session's state after the statement (before authentication:
    /// autocommit, no transaction).
    fn status(&self) -> u16 {
        match &self.session {
            None => status::AUTOCOMMIT,
            Some(s) => {
                let mut f = 0;
                if s.autocommit() {
                    f |= status::AUTOCOMMIT;
                }
                if s.in_transaction() {
                    f |= status::IN_TRANS;
                }
                f
            }
        }
    }

    /// A session for the authenticated account, with the account table.
    fn new_session(&self) -> Session {
        let mut s = Session::new(self.p.engine.clone(), &self.user);
        s.set_account_store(Arc::new(self.p.accounts.clone()));
        s.set_identity(&self.account_host, &self.p.from.display());
        s.set_client_collation(u16::from(self.client_collation));
        s
    }

    fn send_ok(&mut self, affected: u64, insert_id: u64, warnings: u16, info: &str, more: bool) {
        let s = self.status() | if more { status::MORE_RESULTS_EXISTS } else { 0 };
        write_ok(self.w.begin(), 0, affected, insert_id, s, warnings, info);
        self.w.finish();
    }

    fn deprecate_eof(&self) -> bool {
        self.caps & cap::DEPRECATE_EOF != 0
    }

    /// EOF, or the OK packet that replaces it under CLIENT_DEPRECATE_EOF.
    fn send_end(&mut self, more: bool) {
        let s = self.status() | if more { status::MORE_RESULTS_EXISTS } else { 0 };
        let warnings = self.session.as_ref().map_or(0, Session::warning_count);
        if self.deprecate_eof() {
            write_ok(self.w.begin(), 0xFE, 0, 0, s, warnings, "");
        } else {
            write_eof(self.w.begin(), warnings, s);
        }
        self.w.finish();
    }

    /// The EOF after column definitions (absent under DEPRECATE_EOF).
    fn send_mid_eof(&mut self) {
        if !self.deprecate_eof() {
            let s = self.status();
            write_eof(self.w.begin(), 0, s);
            self.w.finish();
        }
    }

    /// Sends a ERR for a protocol error (if it has one) and flushes.
    fn fail(&mut self, e: &ProtocolError) {
        if let Some((code, state, msg)) = e.to_mysql() {
            self.w.seq = self.r.seq;
            self.send_err(code, state, &msg);
            let _ = self.flush();
        }
    }

    // -- connection phase -------------------------------------------------

    // (The connection phase is `conn/login.rs`.)

    // -- command phase ----------------------------------------------------

    fn command_loop(&mut self) {
        let mut buf = Vec::with_capacity(4096);
        loop {
            self.r.seq = 0;
            if let Err(e) = self.r.read_packet(&mut buf) {
                self.fail(&e);
                add(&counters().aborted_clients, 1);
                return;
            }
            self.w.seq = self.r.seq;
            if let Some(g) = &self.proc {
                sessions::begin(&g.proc, &buf);
            }
            let flow = self.dispatch(&buf);
            if let Some(g) = &self.proc {
                g.proc.end();
            }
            let flushed = self.flush();
            self.count_bytes();
            if buf.capacity() > 1 << 20 {
                buf = Vec::with_capacity(4096);
            }
            if self.killed() {
                return;
            }
            match (flow, flushed) {
                (Ok(Flow::Continue), Ok(())) => {}
                (Ok(Flow::Close), _) => return,
                (Err(e), _) => {
                    self.fail(&e);
                    return;
                }
                (_, Err(_)) => {
                    add(&counters().aborted_clients, 1);
                    return;
                }
            }
        }
    }

    /// Calls into the session with a panic guard. `Err(())` = the session
    /// panicked; the ERR was queued and the connection must close.
    fn guarded<T>(
        &mut self,
        f: impl FnOnce(&mut Session) -> SqlResult<T>,
    ) -> Result<SqlResult<T>, ()> {
        let Some(session) = self.session.as_mut() else {
            return Ok(Err(EngineError::new(1105, "HY000", "no session")));
        };
        match catch_unwind(AssertUnwindSafe(|| f(session))) {
            Ok(r) => Ok(r),
            Err(panic) => {
                self.report_panic(panic);
                Err(())
            }
        }
    }

    fn report_panic(&mut self, panic: Box<dyn std::any::Any + Send>) {
        let what = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".to_string());
        eprintln!(
            "quire-server: connection {}: panic in the SQL layer: {what}",
            self.p.id
        );
        // The connection closes; `run` then closes the session (rolling
        // back) under its own panic guard.
        self.send_err(1105, "HY000", &format!("Internal error: {what}"));
    }

    /// [`Conn::guarded`] for a statement whose result set streams: `f`
    /// gets a sink writing rows to this connection's socket.
    fn guarded_streaming(
        &mut self,
        binary: bool,
        f: impl FnOnce(&mut Session, &mut dyn RowSink) -> SqlResult<Output>,
    ) -> Result<SqlResult<Output>, ()> {
        let deprecate_eof = self.deprecate_eof();
        let status = self.status();
        let Conn { session, w, r, .. } = self;
        let Some(session) = session.as_mut() else {
            return Ok(Err(EngineError::new(1105, "HY000", "no session")));
        };
        let mut sink = PacketSink {
            w,
            sock: r.get_mut().get_mut(),
            binary,
            deprecate_eof,
            status,
            columns: Vec::new(),
        };
        let r = catch_unwind(AssertUnwindSafe(|| f(session, &mut sink)));
        match r {
            Ok(r) => Ok(r),
            Err(panic) => {
                self.report_panic(panic);
                Err(())
            }
        }
    }

    fn dispatch(&mut self, payload: &[u8]) -> Result<Flow, ProtocolError> {
        let cmd = decode_client_packet(payload)?;
        let c = counters();
        match cmd {
            Command::Quit => return Ok(Flow::Close),
            Command::Ping => self.send_ok(0, 0, 0, "", false),
            Command::InitDb(db) => {
                add(&c.questions, 1);
                let db = String::from_utf8_lossy(db).into_owned();
                match self.guarded(|s| s.use_db(&db)) {
                    Err(()) => return Ok(Flow::Close),
                    Ok(Ok(())) => self.send_ok(0, 0, 0, "", false),
                    Ok(Err(e)) => self.send_engine_err(&e),
                }
            }
            Command::Query(sql) => return self.query(sql),
            Command::FieldList { table, .. } => {
                add(&c.questions, 1);
                return self.field_list(table);
            }
            Command::Statistics => {
                let c = counters();
                let up = st::uptime_secs();
                let q = c.questions.load(Relaxed);
                let text = format!(
                    "Uptime: {up}  Threads: {}  Questions: {q}  Slow queries: 0  Opens: 0  \
                     Flush tables: 1  Open tables: 0  Queries per second avg: {:.3}",
                    c.threads_connected.load(Relaxed),
                    q as f64 / up.max(1) as f64
                );
                self.w.packet(text.as_bytes());
            }
            Command::Debug => self.send_end(false),
            Command::StmtPrepare(sql) => return self.prepare(sql),
            Command::StmtExecute {
                stmt_id, params, ..
            } => return self.execute(stmt_id, params),
            Command::StmtSendLongData {
                stmt_id,
                param,
                data,
            } => {
                add(&c.com_stmt_send_long_data, 1);
                let max = self.p.max_allowed_packet;
                // No reply, even for an unknown statement (as MySQL).
                if let Some(s) = self.stmts.get_mut(&stmt_id) {
                    let i = param as usize;
                    if i < s.params {
                        let slot = s.long_data[i].get_or_insert_with(Vec::new);
                        if slot.len() + data.len() > max {
                            s.long_data_too_big = true;
                        } else {
                            slot.extend_from_slice(data);
                        }
                    }
                }
            }
            Command::StmtClose(id) => {
                add(&c.com_stmt_close, 1);
                if self.stmts.remove(&id).is_some() {
                    c.prepared_stmt_count.fetch_sub(1, Relaxed);
                }
                if self
                    .guarded(|s| {
                        s.close_prepared(id);
                        Ok(())
                    })
                    .is_err()
                {
                    return Ok(Flow::Close);
                }
            }
            Command::StmtReset(id) => {
                add(&c.com_stmt_reset, 1);
                let Some(stmt) = self.stmts.get_mut(&id) else {
                    self.send_err(
                        1243,
                        "HY000",
                        &format!(
                            "Unknown prepared statement handler ({id}) given to mysqld_stmt_reset"
                        ),
                    );
                    return Ok(Flow::Continue);
                };
                stmt.long_data.iter_mut().for_each(|d| *d = None);
                stmt.long_data_too_big = false;
                match self.guarded(|s| s.reset_prepared(id)) {
                    Err(()) => return Ok(Flow::Close),
                    Ok(Ok(())) => self.send_ok(0, 0, 0, "", false),
                    Ok(Err(e)) => self.send_engine_err(&e),
                }
            }
            Command::StmtFetch(id) => {
                add(&c.com_stmt_fetch, 1);
                self.send_err(
                    1421,
                    "HY000",
                    &format!("The statement ({id}) has no open cursor."),
                );
            }
            Command::SetOption(opt) => match opt {
                0 => {
                    self.multi_statements = true;
                    self.send_end(false);
                }
                1 => {
                    self.multi_statements = false;
                    self.send_end(false);
                }
                _ => self.send_err(1047, "08S01", "Unknown command"),
            },
            Command::ResetConnection => {
                let db = self
                    .session
                    .as_ref()
                    .and_then(|s| s.current_db().map(str::to_string));
                let closed = self.guarded(|s| {
                    s.close();
                    Ok(())
                });
                if closed.is_err() {
                    return Ok(Flow::Close);
                }
                let n = self.stmts.len() as u64;
                self.stmts.clear();
                c.prepared_stmt_count.fetch_sub(n, Relaxed);
                let mut session = self.new_session();
                if let Some(g) = &self.proc {
                    // Same connection: same id, same KILL target.
                    session.set_process(Arc::clone(&g.proc));
                }
                if let Some(db) = db {
                    let _ = session.use_db(&db);
                }
                self.session = Some(session);
                self.send_ok(0, 0, 0, "", false);
            }
            Command::Shutdown => match self.guarded(|s| s.shutdown()) {
                Err(()) => return Ok(Flow::Close),
                Ok(Ok(_)) => self.send_end(false),
                Ok(Err(e)) => self.send_engine_err(&e),
            },
            Command::ProcessInfo => {
                add(&c.questions, 1);
                match self.guarded(|s| s.execute("SHOW PROCESSLIST")) {
                    Err(()) => return Ok(Flow::Close),
                    Ok(Ok(out)) => self.send_output(out, false, false)?,
                    Ok(Err(e)) => self.send_engine_err(&e),
                }
            }
            Command::ProcessKill(id) => {
                add(&c.questions, 1);
                match self.guarded(|s| s.execute(&format!("KILL CONNECTION {id}"))) {
                    Err(()) => return Ok(Flow::Close),
                    Ok(Ok(_)) => self.send_ok(0, 0, 0, "", false),
                    Ok(Err(e)) => self.send_engine_err(&e),
                }
            }
            Command::RegisterReplica(r) => return self.register_replica(r),
            Command::BinlogDump {
                pos,
                flags,
                server_id,
                file,
            } => return self.binlog_dump(pos, flags, server_id, file),
            Command::BinlogDumpGtid {
                flags,
                server_id,
                file,
                pos,
                gtids,
            } => return self.binlog_dump_gtid(flags, server_id, file, pos, gtids),
            Command::ChangeUser | Command::Unknown(_) => {
                self.send_err(1047, "08S01", "Unknown command");
            }
        }
        Ok(Flow::Continue)
    }

    fn query(&mut self, sql: &[u8]) -> Result<Flow, ProtocolError> {
        let rewritten;
        let sql = match std::str::from_utf8(sql) {
            Ok(s) => s,
            // Raw binary bytes inside string literals (drivers send BLOB
            // values that way): as hex literals.
            Err(_) => match hex_binary_literals(sql) {
                Some(s) => {
                    rewritten = s;
                    rewritten.as_str()
                }
                None => {
                    add(&counters().questions, 1);
                    self.send_err(
                        1300,
                        "HY000",
                        "Invalid utf8mb4 character string in statement text",
                    );
                    return Ok(Flow::Continue);
                }
            },
        };
        let pieces = if self.multi_statements {
            split_statements(sql)
        } else {
            vec![sql]
        };
        let n = pieces.len();
        for (i, stmt) in pieces.into_iter().enumerate() {
            add(&counters().questions, 1);
            let more = i + 1 < n;
            if n > 1 {
                if let Some(g) = &self.proc {
                    g.proc.set_info(stmt);
                }
            }
            match self.guarded_streaming(false, |s, sink| s.execute_streaming(stmt, sink)) {
                Err(()) => return Ok(Flow::Close),
                Ok(Ok(out)) => self.send_output(out, false, more)?,
                Ok(Err(e)) => {
                    self.send_engine_err(&e);
                    break;
                }
            }
        }
        Ok(Flow::Continue)
    }

    fn send_output(&mut self, out: Output, binary: bool, more: bool) -> Result<(), ProtocolError> {
        match out {
            Output::Done {
                affected_rows,
                last_insert_id,
                warnings,
                info,
            } => self.send_ok(affected_rows, last_insert_id, warnings, &info, more),
            // Columns and rows went out through the PacketSink.
            Output::Streamed { .. } => self.send_end(more),
            Output::Rows { columns, rows } => {
                self.send_columns(&columns);
                for row in &rows {
                    if binary {
                        write_binary_row(self.w.begin(), &columns, row);
                    } else {
                        write_text_row(self.w.begin(), &columns, row);
                    }
                    self.w.finish();
                    if self.w.out.len() >= FLUSH_AT {
                        self.flush()?;
                    }
                }
                self.send_end(more);
            }
        }
        Ok(())
    }

    /// Column count, definitions, and the EOF after them.
    fn send_columns(&mut self, columns: &[ColumnMeta]) {
        let status = self.status();
        let deprecate_eof = self.deprecate_eof();
        write_columns(&mut self.w, columns, deprecate_eof, status);
    }

    /// COM_FIELD_LIST: the table's columns, from `SELECT * ... LIMIT 0`.
    fn field_list(&mut self, table: &[u8]) -> Result<Flow, ProtocolError> {
        let table = String::from_utf8_lossy(table).replace('`', "``");
        let sql = format!("SELECT * FROM `{table}` LIMIT 0");
        match self.guarded(|s| s.execute(&sql)) {
            Err(()) => return Ok(Flow::Close),
            Ok(Ok(Output::Rows { columns, .. })) => {
                for c in &columns {
                    let b = self.w.begin();
                    write_column_def(b, c);
                    b.push(0xFB); // default value: NULL (not known here)
                    self.w.finish();
                }
                self.send_end(false);
            }
            Ok(Err(e)) if matches!(e.code, 1046 | 1049 | 1146) => self.send_engine_err(&e),
            // Anything else (e.g. not supported yet): an empty list.
            Ok(_) => self.send_end(false),
        }
        Ok(Flow::Continue)
    }

    fn prepare(&mut self, sql: &[u8]) -> Result<Flow, ProtocolError> {
        add(&counters().com_stmt_prepare, 1);
        let sql = String::from_utf8_lossy(sql).into_owned();
        let info = match self.guarded(|s| s.prepare(&sql)) {
            Err(()) => return Ok(Flow::Close),
            Ok(Err(e)) => {
                self.send_engine_err(&e);
                return Ok(Flow::Continue);
            }
            Ok(Ok(info)) => info,
        };
        if info.params > usize::from(u16::MAX) || info.columns.len() > usize::from(u16::MAX) {
            let _ = self.guarded(|s| {
                s.close_prepared(info.id);
                Ok(())
            });
            self.send_err(
                1390,
                "HY000",
                "Prepared statement contains too many placeholders",
            );
            return Ok(Flow::Continue);
        }
        let b = self.w.begin();
        b.push(0);
        b.extend_from_slice(&info.id.to_le_bytes());
        b.extend_from_slice(&(info.columns.len() as u16).to_le_bytes());
        b.extend_from_slice(&(info.params as u16).to_le_bytes());
        b.push(0);
        b.extend_from_slice(&0u16.to_le_bytes());
        self.w.finish();
        if info.params > 0 {
            for _ in 0..info.params {
                write_param_def(self.w.begin());
                self.w.finish();
            }
            self.send_mid_eof();
        }
        if !info.columns.is_empty() {
            for c in &info.columns {
                write_column_def(self.w.begin(), c);
                self.w.finish();
            }
            self.send_mid_eof();
        }
        let old = self.stmts.insert(
            info.id,
            Stmt {
                params: info.params,
                types: Vec::new(),
                long_data: vec![None; info.params],
                long_data_too_big: false,
            },
        );
        if old.is_none() {
            counters().prepared_stmt_count.fetch_add(1, Relaxed);
        }
        Ok(Flow::Continue)
    }

    fn execute(&mut self, id: u32, data: &[u8]) -> Result<Flow, ProtocolError> {
        let c = counters();
        add(&c.com_stmt_execute, 1);
        add(&c.questions, 1);
        let Some(stmt) = self.stmts.get_mut(&id) else {
            self.send_err(
                1243,
                "HY000",
                &format!("Unknown prepared statement handler ({id}) given to mysqld_stmt_execute"),
            );
            return Ok(Flow::Continue);
        };
        if stmt.long_data_too_big {
            stmt.long_data.iter_mut().for_each(|d| *d = None);
            stmt.long_data_too_big = false;
            self.send_err(
                1153,
                "08S01",
                "Parameter of prepared statement which is set through mysql_send_long_data() \
                 is longer than 'max_allowed_packet' bytes",
            );
            return Ok(Flow::Continue);
        }
        let values =
            match decode_execute_params(data, stmt.params, &mut stmt.types, &mut stmt.long_data) {
                Ok(v) => v,
                Err(ParamError::NoTypes) => {
                    self.send_err(1210, "HY000", "Incorrect arguments to mysqld_stmt_execute");
                    return Ok(Flow::Continue);
                }
                Err(ParamError::Malformed(m)) => return Err(ProtocolError::Malformed(m)),
            };
        match self.guarded_streaming(true, |s, sink| {
            s.execute_prepared_streaming(id, values, sink)
        }) {
            Err(()) => return Ok(Flow::Close),
            Ok(Ok(out)) => self.send_output(out, true, false)?,
            Ok(Err(e)) => self.send_engine_err(&e),
        }
        Ok(Flow::Continue)
    }
}

/// Column count, definitions, and (without CLIENT_DEPRECATE_EOF) the
/// EOF after them.
fn write_columns(w: &mut PacketWriter, columns: &[ColumnMeta], deprecate_eof: bool, status: u16) {
    let b = w.begin();
    crate::codec::put_lenenc_int(b, columns.len() as u64);
    w.finish();
    for c in columns {
        write_column_def(w.begin(), c);
        w.finish();
    }
    if !deprecate_eof {
        write_eof(w.begin(), 0, status);
        w.finish();
    }
}

/// Writes a streamed result set's column definitions and rows into the
/// connection's packet buffer, flushing it to the socket every
/// [`STREAM_FLUSH_AT`] bytes. The end of the result set (EOF, or ERR
/// after an error) is the connection's, once the session call returns.
struct PacketSink<'a> {
    w: &'a mut PacketWriter,
    sock: &'a mut Stream,
    binary: bool,
    deprecate_eof: bool,
    /// Status flags for the EOF after the column definitions.
    status: u16,
    columns: Vec<ColumnMeta>,
}

impl PacketSink<'_> {
    fn flush_if_full(&mut self) -> SqlResult<()> {
        if self.w.out.len() < STREAM_FLUSH_AT {
            return Ok(());
        }
        self.w.flush_to(self.sock).map_err(|e| {
            // ER_NET_ERROR_ON_WRITE: the statement stops; the connection
            // closes when the command loop's own flush fails too.
            EngineError::new(
                1160,
                "08S01",
                format!("Got an error writing communication packets ({e})"),
            )
        })
    }
}

impl RowSink for PacketSink<'_> {
    fn columns(&mut self, columns: &[ColumnMeta]) -> SqlResult<()> {
        self.columns = columns.to_vec();
        write_columns(self.w, columns, self.deprecate_eof, self.status);
        self.flush_if_full()
    }

    fn row(&mut self, row: Vec<Value>) -> SqlResult<()> {
        if self.binary {
            write_binary_row(self.w.begin(), &self.columns, &row);
        } else {
            write_text_row(self.w.begin(), &self.columns, &row);
        }
        self.w.finish();
        self.flush_if_full()
    }
}

/// Writes ERR 1040 to a connection refused for `max_connections`.
pub(crate) fn refuse_too_many(mut stream: Stream) {
    let _ = stream.set_nonblocking(false);
    let _ = stream.set_write_timeout(Some(Duration::from_secs(1)));
    let mut w = PacketWriter::new();
    write_err(w.begin(), 1040, "08004", "Too many connections");
    w.finish();
    let _ = w.flush_to(&mut stream);
    let _ = stream.flush();
    stream.shutdown();
}
