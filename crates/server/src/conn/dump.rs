//! # Replication source: COM_REGISTER_SLAVE, COM_BINLOG_DUMP[_GTID]
//!
//! A replica (MySQL or MariaDB), `mariadb-binlog --read-from-remote-server`
//! and CDC clients read the binary log over an ordinary connection: they
//! set a few user variables, may register, then send COM_BINLOG_DUMP and
//! from then on only read. The connection's thread becomes the dump
//! thread:
//!
//! ```text
//!  replica                                   source (this file)
//!  SET @master_binlog_checksum = ...    ->   (user variable)
//!  SET @master_heartbeat_period = ns    ->   (user variable)
//!  COM_REGISTER_SLAVE id host port      ->   OK      (REPLICATION SLAVE)
//!  COM_BINLOG_DUMP file pos flags id    ->
//!                                       <-   ROTATE   artificial: file, pos
//!                                       <-   FORMAT_DESCRIPTION of file
//!                                            (log_pos 0 when pos > 4)
//!                                       <-   events from pos ...
//!                                       <-   HEARTBEAT when idle a period
//!                                       <-   ROTATE (artificial), next
//!                                            file's FDE, its events ...
//!                                       <-   EOF (only with NON_BLOCK)
//! ```
//!
//! Each event travels as one packet: a 0x00 byte, then the event exactly
//! as in the file. Events come from `quire_engine::binlog::dump`, which
//! hands out only what the commit pipeline has published (synced, at
//! `sync_binlog=1`). The artificial events carry a CRC32 footer only
//! when the replica announced `@master_binlog_checksum = 'CRC32'`; a
//! client that announced nothing cannot strip footers and is refused when
//! the log has them (MySQL's rule).
//!
//! COM_BINLOG_DUMP_GTID with the replica's executed GTID set
//! (MASTER_AUTO_POSITION=1) starts at the newest file whose PREVIOUS_GTIDS
//! the replica holds and leaves out every transaction it has (`SkipState`);
//! 1236 when purged files held GTIDs it lacks, when it has GTIDs of this
//! server that this server does not, or at an anonymous transaction.
//!
//! The dump ends when the client goes away (a write fails), on KILL, at
//! shutdown, when a new dump for the same replica server_id starts, or
//! (NON_BLOCK) once it has caught up; the connection closes then, as
//! MySQL's does.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use quire_engine::binlog::dump::{
    artificial_event, fde_has_checksums, mid_file_format_description, DumpCursor, DumpStep,
};
use quire_engine::binlog::format::{event_type, CHECKSUM_LEN, HEADER_LEN};
use quire_engine::binlog::gtid::GtidSet;
use quire_engine::binlog::Binlog;
use quire_engine::{Engine, EngineError};
use quire_sql::Privs;

use super::{Conn, Flow};
use crate::command::{Replica, BINLOG_DUMP_NON_BLOCK};
use crate::error::ProtocolError;
use quire_sql::replicas;

/// How long one wait for new events lasts: also how soon KILL and
/// shutdown are noticed by an idle dump thread.
const POLL: Duration = Duration::from_millis(500);
const HEARTBEAT_LOG_EVENT: u8 = 27;

/// What the replica announced before the dump.
struct Announced {
    /// `@master_binlog_checksum` set at all (the client strips footers).
    checksum_aware: bool,
    /// ... and to CRC32: artificial events get a footer too.
    checksum_crc32: bool,
    /// `@master_heartbeat_period` (nanoseconds), if not 0.
    heartbeat: Option<Duration>,
    /// `@mariadb_slave_capability` set: a MariaDB replica or tool, which
    /// gets DDL in its dialect (`for_mariadb`).
    mariadb: bool,
    /// `@rpl_semi_sync_slave` / `@rpl_semi_sync_replica` = 1: a
    /// semi-synchronous replica. Every event packet carries the 2-byte
    /// semi-sync header (0xEF, flag); it answers flagged ones with an ack.
    semisync: bool,
}

impl Conn {
    /// REPLICATION SLAVE, as MySQL requires for both commands.
    fn may_replicate(&mut self) -> Result<bool, ()> {
        match self.guarded(|s| Ok(s.has_global_privilege(Privs::REPL_SLAVE))) {
            Err(()) => Err(()),
            Ok(Ok(true)) => Ok(true),
            Ok(_) => {
                self.send_err(
                    1227,
                    "42000",
                    "Access denied; you need (at least one of) the REPLICATION SLAVE \
                     privilege(s) for this operation",
                );
                Ok(false)
            }
        }
    }

    pub(super) fn register_replica(&mut self, r: Replica) -> Result<Flow, ProtocolError> {
        match self.may_replicate() {
            Err(()) => return Ok(Flow::Close),
            Ok(false) => return Ok(Flow::Continue),
            Ok(true) => {}
        }
        self.replica = Some(replicas::register(self.p.id, r));
        self.send_ok(0, 0, 0, "", false);
        Ok(Flow::Continue)
    }

    fn announced(&self) -> Announced {
        let var = |n: &str| {
            let v = self.session.as_ref()?.user_var(n);
            (!v.is_null()).then(|| v.to_string())
        };
        let checksum = var("master_binlog_checksum");
        let heartbeat_ns = var("master_heartbeat_period")
            .and_then(|v| v.trim().parse::<f64>().ok())
            .filter(|&ns| ns >= 1.0)
            .map(|ns| Duration::from_nanos(ns.min(u64::MAX as f64) as u64));
        Announced {
            checksum_aware: checksum.is_some(),
            checksum_crc32: checksum.is_some_and(|c| c.eq_ignore_ascii_case("CRC32")),
            heartbeat: heartbeat_ns,
            mariadb: var("mariadb_slave_capability").is_some(),
            semisync: ["rpl_semi_sync_slave", "rpl_semi_sync_replica"]
                .iter()
                .any(|n| var(n).is_some_and(|v| v.trim() == "1")),
        }
    }

    /// What both dump commands check first: REPLICATION SLAVE (1227) and
    /// a binary log (1381, answered here). `Err` is how the connection goes
    /// on after a refusal.
    fn dump_allowed(&mut self) -> Result<Engine, Flow> {
        match self.may_replicate() {
            Err(()) => return Err(Flow::Close),
            Ok(false) => return Err(Flow::Continue),
            Ok(true) => {}
        }
        let engine: Engine = self.p.engine.clone();
        if engine.binlog().is_none() {
            self.send_err(1381, "HY000", "You are not using binary logging");
            return Err(Flow::Continue);
        }
        Ok(engine)
    }

    /// COM_BINLOG_DUMP. A refusal before the log is opened (1227, 1381) is
    /// an ERR and the connection goes on; otherwise the connection ends
    /// with the dump (after an ERR when the log could not be read), as
    /// MySQL's does.
    pub(super) fn binlog_dump(
        &mut self,
        pos: u32,
        flags: u16,
        replica_id: u32,
        file: &[u8],
    ) -> Result<Flow, ProtocolError> {
        let engine = match self.dump_allowed() {
            Ok(e) => e,
            Err(flow) => return Ok(flow),
        };
        let name = String::from_utf8_lossy(file).into_owned();
        let req = Request {
            name: &name,
            pos: u64::from(pos),
            flags,
            dumping: Dumping::start(replica_id),
            gtids: None,
        };
        self.run_dump(&engine, &req)
    }

    /// COM_BINLOG_DUMP_GTID: with a GTID set (auto-position), the stream
    /// starts at the newest file whose PREVIOUS_GTIDS the replica has and
    /// skips every transaction the replica has already; anonymous
    /// transactions cannot be sent (1236), as in MySQL. Without one, it is
    /// COM_BINLOG_DUMP with a 64-bit position.
    pub(super) fn binlog_dump_gtid(
        &mut self,
        flags: u16,
        replica_id: u32,
        file: &[u8],
        pos: u64,
        gtids: Option<&[u8]>,
    ) -> Result<Flow, ProtocolError> {
        let engine = match self.dump_allowed() {
            Ok(e) => e,
            Err(flow) => return Ok(flow),
        };
        let set = match gtids.map(GtidSet::decode).transpose() {
            Ok(s) => s,
            Err(e) => {
                self.send_err(
                    1236,
                    "HY000",
                    &format!("Malformed GTID set from the replica: {e}"),
                );
                return Ok(Flow::Close);
            }
        };
        let name = String::from_utf8_lossy(file).into_owned();
        let req = Request {
            name: &name,
            pos,
            flags,
            dumping: Dumping::start(replica_id),
            gtids: set,
        };
        self.run_dump(&engine, &req)
    }

    fn run_dump(&mut self, engine: &Engine, req: &Request<'_>) -> Result<Flow, ProtocolError> {
        let Some(b) = engine.binlog() else {
            return Ok(Flow::Continue); // checked by dump_allowed
        };
        let mut ann = self.announced();
        let server_id = engine.config().server_id;
        // A semi-sync replica's acks arrive on this socket while events go
        // out: a thread reads them (not over TLS, whose session cannot be
        // shared between threads: such a replica is served
        // asynchronously, without the header).
        let stream = self.r.get_ref().get_ref();
        let acks = match ann.semisync && stream.tls().is_none() {
            true => match stream.try_clone() {
                Ok(s) => Some(AckReader::start(engine.clone(), u64::from(self.p.id), s)),
                Err(_) => None,
            },
            false => None,
        };
        ann.semisync = acks.is_some();
        match self.stream_binlog(b, server_id, req, &ann) {
            Ok(()) => Ok(Flow::Close),
            Err(DumpEnd::Client(e)) => Err(e),
            Err(DumpEnd::Log(e)) => {
                self.send_err(e.code, e.sqlstate, &e.message);
                Ok(Flow::Close)
            }
        }
    }

    fn stream_binlog(
        &mut self,
        b: &Binlog,
        server_id: u32,
        req: &Request<'_>,
        ann: &Announced,
    ) -> Result<(), DumpEnd> {
        let mut cur = match &req.gtids {
            Some(set) => b.dump_open_gtid(set),
            None => b.dump_open(req.name, req.pos),
        }
        .map_err(DumpEnd::Log)?;
        let mut skip = SkipState::default();
        let fde = b.dump_format_description(&cur).map_err(DumpEnd::Log)?;
        if !ann.checksum_aware && fde_has_checksums(&fde) {
            return Err(DumpEnd::Log(EngineError::new(
                1236,
                "HY000",
                format!(
                    "Slave can not handle replication events with the checksum that master is \
                     configured to log; the first event '{}' at {}",
                    cur.name, cur.pos
                ),
            )));
        }
        let ss = |need: bool| ann.semisync.then_some(need);
        // The artificial ROTATE naming where the stream starts.
        self.send_event_to(
            &artificial_rotate(server_id, &cur, ann.checksum_crc32),
            ss(false),
        )?;
        // From the start of a file the FDE comes as its first event;
        // from the middle it is sent ahead, marked as not a position.
        let mut file_crc = fde_has_checksums(&fde);
        if cur.pos > 4 {
            self.send_event_to(&mid_file_format_description(fde), ss(false))?;
        }
        self.flush_dump()?;
        let mut last_sent = Instant::now();
        loop {
            if self.killed() || self.p.shutdown.load(Ordering::Acquire) || req.dumping.superseded()
            {
                return Ok(());
            }
            let step = b.dump_next(&mut cur, POLL).map_err(DumpEnd::Log)?;
            match step {
                DumpStep::Event(mut ev) => {
                    if let Some(have) = &req.gtids {
                        if skip
                            .skips(&ev, have, file_crc, &cur)
                            .map_err(DumpEnd::Log)?
                        {
                            continue;
                        }
                    }
                    match ev.get(4) {
                        Some(&event_type::FORMAT_DESCRIPTION) => file_crc = fde_has_checksums(&ev),
                        Some(&event_type::QUERY) if ann.mariadb => for_mariadb(&mut ev, file_crc),
                        _ => {}
                    }
                    let need_ack = ann.semisync
                        && b.semisync.enabled.load(Ordering::Relaxed)
                        && ends_transaction(&ev, file_crc);
                    self.send_event_to(&ev, ss(need_ack))?;
                    if need_ack {
                        // The source waits for this ack: send it now.
                        self.flush_dump()?;
                    }
                    // Batch what is ready; flush once caught up.
                    if self.w.pending() >= 64 << 10 {
                        self.flush_dump()?;
                    }
                    last_sent = Instant::now();
                    continue;
                }
                DumpStep::NextFile => {
                    // Named to the replica by an artificial ROTATE: a file
                    // a crash closed ends without its own ROTATE event.
                    // The next file's FDE is then its first event.
                    self.send_event_to(
                        &artificial_rotate(server_id, &cur, ann.checksum_crc32),
                        ss(false),
                    )?;
                    continue;
                }
                DumpStep::Idle => {}
            }
            self.flush_dump()?;
            if req.flags & BINLOG_DUMP_NON_BLOCK != 0 {
                crate::resultset::write_eof(self.w.begin(), 0, 0);
                self.w.finish();
                self.flush_dump()?;
                return Ok(());
            }
            if let Some(period) = ann.heartbeat {
                if last_sent.elapsed() >= period {
                    let hb = artificial_event(
                        server_id,
                        HEARTBEAT_LOG_EVENT,
                        cur.pos as u32,
                        cur.name.as_bytes(),
                        ann.checksum_crc32,
                    );
                    self.send_event_to(&hb, ss(false))?;
                    self.flush_dump()?;
                    last_sent = Instant::now();
                }
            }
        }
    }

    /// Sends one event; to a semi-sync replica with its header, asking for
    /// an ack (`need_ack`) at the end of each transaction while semi-sync
    /// is on.
    fn send_event_to(&mut self, ev: &[u8], semisync: Option<bool>) -> Result<(), DumpEnd> {
        let Some(need_ack) = semisync else {
            return self.send_event(ev);
        };
        if ev.len() + 3 > self.p.max_allowed_packet {
            return self.send_event(ev); // the size error below
        }
        let out = self.w.begin();
        out.push(0);
        out.push(SEMISYNC_MAGIC);
        out.push(u8::from(need_ack));
        out.extend_from_slice(ev);
        self.w.finish();
        Ok(())
    }

    fn send_event(&mut self, ev: &[u8]) -> Result<(), DumpEnd> {
        if ev.len() + 1 > self.p.max_allowed_packet {
            return Err(DumpEnd::Log(EngineError::new(
                1236,
                "HY000",
                format!(
                    "log event entry exceeded max_allowed_packet; Increase \
                     max_allowed_packet on master; the event is {} bytes",
                    ev.len()
                ),
            )));
        }
        let out = self.w.begin();
        out.push(0);
        out.extend_from_slice(ev);
        self.w.finish();
        Ok(())
    }

    fn flush_dump(&mut self) -> Result<(), DumpEnd> {
        self.flush().map_err(DumpEnd::Client)?;
        self.count_bytes();
        Ok(())
    }
}

/// The artificial ROTATE that names the file (and offset) the events
/// after it come from.
fn artificial_rotate(server_id: u32, cur: &DumpCursor, crc: bool) -> Vec<u8> {
    let mut body = cur.pos.to_le_bytes().to_vec();
    body.extend_from_slice(cur.name.as_bytes());
    artificial_event(server_id, event_type::ROTATE, 0, &body, crc)
}

/// What COM_BINLOG_DUMP asked for.
struct Request<'a> {
    name: &'a str,
    pos: u64,
    flags: u16,
    dumping: Dumping,
    /// The replica's executed GTIDs (COM_BINLOG_DUMP_GTID auto-position).
    gtids: Option<GtidSet>,
}

/// Where an auto-positioned stream is in the transactions it skips.
#[derive(Default)]
struct SkipState {
    /// The last GTID event was one the replica has: its transaction is
    /// being left out (`in_trx` once its BEGIN came).
    skipping: bool,
    in_trx: bool,
    /// A GTID event was sent or skipped and its transaction has not ended.
    after_gtid: bool,
}

impl SkipState {
    /// Whether `ev` is left out. The replica gets every transaction whose
    /// GTID it lacks; an anonymous one (no GTID event) is 1236.
    fn skips(
        &mut self,
        ev: &[u8],
        have: &GtidSet,
        crc: bool,
        cur: &DumpCursor,
    ) -> Result<bool, EngineError> {
        let ty = ev.get(4).copied().unwrap_or(0);
        let footer = if crc { CHECKSUM_LEN } else { 0 };
        let body = ev
            .get(HEADER_LEN..ev.len().saturating_sub(footer))
            .unwrap_or(&[]);
        match ty {
            event_type::GTID => {
                let sid: [u8; 16] = body
                    .get(1..17)
                    .and_then(|b| b.try_into().ok())
                    .unwrap_or([0; 16]);
                let gno = body
                    .get(17..25)
                    .and_then(|b| b.try_into().ok())
                    .map_or(0, u64::from_le_bytes);
                self.skipping = have.contains(&sid, gno);
                self.in_trx = false;
                self.after_gtid = true;
                Ok(self.skipping)
            }
            event_type::QUERY | event_type::XID => {
                let begin = ty == event_type::QUERY && query_is_begin(body);
                if !self.after_gtid {
                    return Err(EngineError::new(
                        1236,
                        "HY000",
                        format!(
                            "Cannot replicate anonymous transaction when AUTO_POSITION = 1, at file {}, position {}.",
                            cur.name,
                            cur.pos - ev.len() as u64
                        ),
                    ));
                }
                let skipped = self.skipping;
                if begin {
                    self.in_trx = true;
                } else if ty == event_type::XID || !self.in_trx {
                    // The transaction (or the DDL statement) ends here.
                    self.after_gtid = false;
                    self.skipping = false;
                    self.in_trx = false;
                }
                Ok(skipped)
            }
            _ => Ok(self.skipping),
        }
    }
}

/// Whether a QUERY_EVENT body is `BEGIN`.
fn query_is_begin(body: &[u8]) -> bool {
    let (Some(&db_len), Some(status_len)) = (body.get(8), body.get(11..13)) else {
        return false;
    };
    let status_len = u16::from_le_bytes([status_len[0], status_len[1]]) as usize;
    let sql_at = 13 + status_len + db_len as usize + 1;
    body.get(sql_at..)
        .is_some_and(|sql| sql.eq_ignore_ascii_case(b"BEGIN"))
}

/// The running dumps by replica server_id: a replica that reconnects
/// (its old connection may look alive for a long time after a crash or a
/// network cut) ends the dump still streaming to its server_id, as
/// MySQL's `kill_zombie_dump_threads` does. server_id 0 (mariadb-binlog
/// without --stop-never) never supersedes another.
fn dumps() -> &'static Mutex<HashMap<u32, Arc<AtomicBool>>> {
    static D: OnceLock<Mutex<HashMap<u32, Arc<AtomicBool>>>> = OnceLock::new();
    D.get_or_init(|| Mutex::new(HashMap::new()))
}

/// This connection's entry in [`dumps`], removed when dropped (if it is
/// still this connection's).
struct Dumping {
    replica_id: u32,
    stop: Arc<AtomicBool>,
}

impl Dumping {
    fn start(replica_id: u32) -> Dumping {
        let stop = Arc::new(AtomicBool::new(false));
        if replica_id != 0 {
            if let Some(old) = dumps().lock().insert(replica_id, stop.clone()) {
                old.store(true, Ordering::Release);
            }
        }
        Dumping { replica_id, stop }
    }

    fn superseded(&self) -> bool {
        self.stop.load(Ordering::Acquire)
    }
}

impl Drop for Dumping {
    fn drop(&mut self) {
        let mut d = dumps().lock();
        if d.get(&self.replica_id)
            .is_some_and(|s| Arc::ptr_eq(s, &self.stop))
        {
            d.remove(&self.replica_id);
        }
    }
}

/// Why a dump stopped early.
enum DumpEnd {
    /// The client is gone (a write failed).
    Client(ProtocolError),
    /// The log could not be read: sent to the client as ERR.
    Log(EngineError),
}

/// MySQL 8.0 collations MariaDB 10.11 does not have, and the MariaDB
/// collation of the same name length that stands in for each in DDL sent
/// to a MariaDB replica: the event keeps its size, so every position the
/// replica records stays the source's. `utf8mb4_unicode_ci` (UCA 4.0,
/// accent and case insensitive) is MariaDB's nearest to
/// `utf8mb4_0900_ai_ci` (UCA 9.0); the padding after `utf8mb4_bin` is
/// whitespace in the statement. See tests/differential/known_differences.
const MARIADB_COLLATIONS: [(&[u8], &[u8]); 2] = [
    (b"utf8mb4_0900_ai_ci", b"utf8mb4_unicode_ci"),
    (b"utf8mb4_0900_bin", b"utf8mb4_bin     "),
];

/// A QUERY event's statement with MySQL-only collation names replaced
/// (same length), its checksum computed again when the file has them.
fn for_mariadb(ev: &mut [u8], crc: bool) {
    let end = ev.len() - if crc { CHECKSUM_LEN } else { 0 };
    if end <= HEADER_LEN {
        return;
    }
    let mut changed = false;
    for (from, to) in MARIADB_COLLATIONS {
        debug_assert_eq!(from.len(), to.len());
        let mut i = HEADER_LEN;
        while i + from.len() <= end {
            if ev[i..i + from.len()].eq_ignore_ascii_case(from) {
                ev[i..i + from.len()].copy_from_slice(to);
                changed = true;
                i += from.len();
            } else {
                i += 1;
            }
        }
    }
    if changed && crc {
        let c = quire_engine::binlog::format::crc32(&ev[..end]);
        ev[end..].copy_from_slice(&c.to_le_bytes());
    }
}

/// The semi-sync header's first byte, and the ack packet's.
const SEMISYNC_MAGIC: u8 = 0xEF;

/// Whether an event ends a transaction (XID, or a statement QUERY that is
/// not BEGIN): where a semi-sync replica is asked for an ack.
fn ends_transaction(ev: &[u8], crc: bool) -> bool {
    match ev.get(4) {
        Some(&event_type::XID) => true,
        Some(&event_type::QUERY) => {
            let footer = if crc { CHECKSUM_LEN } else { 0 };
            let body = ev
                .get(HEADER_LEN..ev.len().saturating_sub(footer))
                .unwrap_or(&[]);
            !query_is_begin(body)
        }
        _ => false,
    }
}

/// Reads a semi-sync replica's acks (0xEF, position u64, file name) from
/// its socket and hands them to the engine; attached for the dump's
/// lifetime (the replica counts in `Rpl_semi_sync_source_clients`).
struct AckReader {
    engine: Engine,
    conn: u64,
    socket: crate::stream::Stream,
}

impl AckReader {
    fn start(engine: Engine, conn: u64, socket: crate::stream::Stream) -> AckReader {
        if let Some(b) = engine.binlog() {
            b.semisync.attach(conn);
        }
        if let Ok(mut rd) = socket.try_clone() {
            let _ = rd.set_read_timeout(None);
            let e2 = engine.clone();
            let spawned = std::thread::Builder::new()
                .name("quire-semisync-ack".into())
                .spawn(move || read_acks(&e2, conn, &mut rd));
            if spawned.is_err() {
                socket.shutdown();
            }
        }
        AckReader {
            engine,
            conn,
            socket,
        }
    }
}

impl Drop for AckReader {
    fn drop(&mut self) {
        if let Some(b) = self.engine.binlog() {
            b.semisync.detach(self.conn);
        }
        // Ends the reader thread (and the connection, which closes with
        // the dump anyway).
        self.socket.shutdown();
    }
}

/// The ack loop: each packet is `len u24, seq u8`, then 0xEF, the
/// position (u64) and the binlog file name. Anything else ends it.
fn read_acks(engine: &Engine, conn: u64, rd: &mut crate::stream::Stream) {
    use std::io::Read;
    let Some(b) = engine.binlog() else {
        return;
    };
    let mut head = [0u8; 4];
    let mut body = Vec::new();
    while rd.read_exact(&mut head).is_ok() {
        let len = u32::from_le_bytes([head[0], head[1], head[2], 0]) as usize;
        if !(9..=9 + 512).contains(&len) {
            return;
        }
        body.resize(len, 0);
        if rd.read_exact(&mut body).is_err() || body[0] != SEMISYNC_MAGIC {
            return;
        }
        let mut pos = [0u8; 8];
        pos.copy_from_slice(&body[1..9]);
        let name = String::from_utf8_lossy(&body[9..]);
        if let Some(seq) = b.file_seq(name.trim_end_matches('\0')) {
            b.semisync
                .ack(conn, seq, u64::from_le_bytes(pos), b.published());
        }
    }
    // The replica is gone (or sent something else): it no longer counts,
    // even before the dump thread's next write fails.
    b.semisync.detach(conn);
}
