//! Server-owned status counters (`SHOW GLOBAL STATUS` merges them with the
//! engine's and the SQL layer's).
//!
//! They are process-wide, like MySQL's: one server per process is the
//! normal case, and tests that run several servers simply see the sum.
//! Byte and question counts are added once per command (not per packet) to
//! keep the shared cache lines cold on the hot path.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::OnceLock;
use std::time::Instant;

macro_rules! counters {
    ($($field:ident => $name:literal),* $(,)?) => {
        /// The counters, one atomic each.
        #[derive(Default)]
        pub struct Counters { $(pub $field: AtomicU64,)* }
        impl Counters {
            fn snapshot(&self) -> Vec<(String, u64)> {
                vec![$(($name.to_string(), self.$field.load(Relaxed)),)*]
            }
        }
    };
}

counters! {
    aborted_clients => "Aborted_clients",
    aborted_connects => "Aborted_connects",
    bytes_received => "Bytes_received",
    bytes_sent => "Bytes_sent",
    com_stmt_close => "Com_stmt_close",
    com_stmt_execute => "Com_stmt_execute",
    com_stmt_fetch => "Com_stmt_fetch",
    com_stmt_prepare => "Com_stmt_prepare",
    com_stmt_reset => "Com_stmt_reset",
    com_stmt_send_long_data => "Com_stmt_send_long_data",
    connection_errors_max_connections => "Connection_errors_max_connections",
    connections => "Connections",
    max_used_connections => "Max_used_connections",
    prepared_stmt_count => "Prepared_stmt_count",
    questions => "Questions",
    threads_connected => "Threads_connected",
    threads_created => "Threads_created",
}

/// The process-wide counters.
pub fn counters() -> &'static Counters {
    static C: OnceLock<Counters> = OnceLock::new();
    C.get_or_init(Counters::default)
}

fn started() -> &'static Instant {
    static T: OnceLock<Instant> = OnceLock::new();
    T.get_or_init(Instant::now)
}

/// Marks the server start (for `Uptime`).
pub(crate) fn mark_start() {
    let _ = started();
}

/// Seconds since the first server started in this process.
pub fn uptime_secs() -> u64 {
    started().elapsed().as_secs()
}

/// Counters the server owns, by their MySQL names, sorted by name
/// (`Threads_running` counts the process list's non-sleeping connections;
/// `Uptime` is included).
pub fn server_status() -> Vec<(String, u64)> {
    let mut v = counters().snapshot();
    v.push(("Uptime".to_string(), uptime_secs()));
    v.push(("Uptime_since_flush_status".to_string(), uptime_secs()));
    v.push((
        "Threads_running".to_string(),
        crate::sessions::threads_running(),
    ));
    v.sort();
    v
}

/// Adds `n` to a counter.
pub(crate) fn add(c: &AtomicU64, n: u64) {
    if n != 0 {
        c.fetch_add(n, Relaxed);
    }
}

/// A new connection became active: `Threads_connected` and
/// `Max_used_connections`.
pub(crate) fn connected() {
    let c = counters();
    let now = c.threads_connected.fetch_add(1, Relaxed) + 1;
    c.max_used_connections.fetch_max(now, Relaxed);
}

pub(crate) fn disconnected() {
    counters().threads_connected.fetch_sub(1, Relaxed);
}
