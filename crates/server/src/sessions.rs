//! # Connections in the process list, KILL, SHUTDOWN, connection limits
//!
//! The protocol side of `quire_sql::process` (the registry and KILL live
//! there, because SHOW PROCESSLIST and the KILL statement are SQL):
//!
//! ```text
//!   accept ──► limits(): active >= max_connections + 1 ?  ERR 1040 before the handshake
//!                        active >= max_connections      ?  "extra slot": after
//!                            authentication only an account with CONNECTION_ADMIN
//!                            (or SUPER; today: ALL ON *.*) stays, others get 1040
//!   authenticated ──► register(): Proc { id, user, ip:port } + a closer that shuts
//!                     the socket down (KILL CONNECTION wakes a blocked read)
//!   every command ──► begin(): Command = Query/Execute/..., Info = statement text;
//!                     end(): Sleep. A connection killed meanwhile is closed.
//! ```
//!
//! `max_connections` and `max_allowed_packet` are read for every new
//! connection: the server's configured values until `SET GLOBAL` changes
//! the engine's copy, then the engine's (MySQL applies both to new
//! connections; sessions already open keep theirs).

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;

use quire_engine::Engine;
pub(crate) use quire_sql::process::ProcGuard;
use quire_sql::process::{self, Cmd, Proc};

use crate::codec::com;
use crate::stream::Stream;

/// `thread_stack` default: 8 MiB (MySQL: 1 MiB). quire's SQL layer
/// recurses over expressions and joins, so it gets more; the pages are
/// reserved, not committed, so idle connections cost little.
pub const DEFAULT_THREAD_STACK: usize = 8 << 20;
/// Smallest `thread_stack` accepted (MySQL's minimum, 128 KiB) .
pub const MIN_THREAD_STACK: usize = 128 << 10;

/// Limits that SET GLOBAL may change, as of server start.
pub(crate) struct Limits {
    base_max_connections: u32,
    base_max_allowed_packet: u64,
    cfg_max_connections: u32,
    cfg_max_allowed_packet: usize,
}

impl Limits {
    pub fn new(engine: &Engine, max_connections: u32, max_allowed_packet: usize) -> Limits {
        let c = engine.config();
        Limits {
            base_max_connections: c.max_connections,
            base_max_allowed_packet: c.max_allowed_packet,
            cfg_max_connections: max_connections,
            cfg_max_allowed_packet: max_allowed_packet,
        }
    }

    /// (max_connections, max_allowed_packet) for a connection accepted now.
    pub fn current(&self, engine: &Engine) -> (u32, usize) {
        let c = engine.config();
        let mc = if c.max_connections != self.base_max_connections {
            c.max_connections
        } else {
            self.cfg_max_connections
        };
        let mp = if c.max_allowed_packet != self.base_max_allowed_packet {
            usize::try_from(c.max_allowed_packet).unwrap_or(usize::MAX)
        } else {
            self.cfg_max_allowed_packet
        };
        (mc, mp)
    }
}

/// Admission at accept: `Err(())` = refuse with 1040 now; `Ok(extra)` =
/// accept, `extra` when this is the one connection beyond
/// `max_connections` kept for CONNECTION_ADMIN.
pub(crate) fn admit(active: &AtomicU32, max_connections: u32) -> Result<bool, ()> {
    let now = active.load(Ordering::Relaxed);
    if now >= max_connections.saturating_add(1) {
        return Err(());
    }
    Ok(now >= max_connections)
}

/// Whether the account may use the extra connection.
pub(crate) fn may_use_extra(accounts: &crate::auth::Accounts, user: &str, host: &str) -> bool {
    process::has_global_privilege(
        Some(accounts as &dyn quire_sql::AccountStore),
        user,
        host,
        process::GlobalPriv::ConnectionAdmin,
    )
}

/// Registers an authenticated connection in the process list.
pub(crate) fn register(
    id: u32,
    user: &str,
    account_host: &str,
    host: &str,
    session: &mut quire_sql::Session,
    stream: &Stream,
    shutdown: &Arc<AtomicBool>,
) -> Option<ProcGuard> {
    let closer: Option<process::Closer> = stream.try_clone().ok().map(|s| {
        let f: process::Closer = Box::new(move || s.shutdown());
        f
    });
    let p = Proc::new(
        u64::from(id),
        user,
        account_host,
        host,
        session.interrupt().clone(),
        closer,
    )
    .with_shutdown(Arc::clone(shutdown));
    let g = process::processes().register(p)?;
    session.set_process(Arc::clone(&g.proc));
    Some(g)
}

/// The process list's Command and Info for a command packet.
pub(crate) fn begin(p: &Proc, payload: &[u8]) {
    let Some(&code) = payload.first() else {
        return;
    };
    let text =
        |b: &[u8]| String::from_utf8_lossy(&b[..b.len().min(process::MAX_INFO)]).into_owned();
    match code {
        com::QUERY => p.begin(Cmd::Query, Some(&text(&payload[1..]))),
        com::STMT_EXECUTE => p.begin(Cmd::Execute, None),
        com::STMT_PREPARE => p.begin(Cmd::Prepare, Some(&text(&payload[1..]))),
        com::FIELD_LIST => p.begin(Cmd::FieldList, None),
        com::INIT_DB => p.begin(Cmd::InitDb, None),
        com::PING => p.begin(Cmd::Ping, None),
        com::STATISTICS => p.begin(Cmd::Statistics, None),
        com::QUIT => p.begin(Cmd::Quit, None),
        _ => p.begin(Cmd::Other, None),
    }
}

/// `Threads_running`.
pub(crate) fn threads_running() -> u64 {
    process::processes().running()
}
