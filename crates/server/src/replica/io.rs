//! # The I/O thread: source events into a bounded queue
//!
//! ```text
//!   source ──TCP──> reader thread ──> EventQueue (≤ QUEUE_BYTES) ──> applier
//!                     connect, check ids,     │ full: the reader waits,
//!                     register, dump           │ so a slow applier slows
//!                     (file, pos)              │ the stream (TCP back-
//!                                              │ pressure to the source)
//!                   error / EOF ──> Broken(e) ─┘ last item; the thread ends
//! ```
//!
//! The queue stands in for MySQL's relay log, in memory: reading and
//! applying overlap, and what is queued but not applied tells how far
//! behind the applier is (Seconds_Behind_Source). It is not durable; a
//! restart asks the source again from the applied position.

use std::collections::VecDeque;
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use parking_lot::{Condvar, Mutex};

use super::applier::SourcePos;
use super::client::{ClientError, Login, SourceConn};

/// Bytes of events queued ahead of the applier (one larger event is
/// still let in when the queue is empty).
pub const QUEUE_BYTES: usize = 16 << 20;
/// Connect/login timeout (MySQL's replica uses replica_net_timeout).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// One queued item.
pub enum Item {
    Event(Vec<u8>),
    /// The stream ended: the reader's last item.
    Broken(ClientError),
}

#[derive(Default)]
struct Inner {
    items: VecDeque<Item>,
    bytes: usize,
    closed: bool,
}

/// A byte-bounded single-producer single-consumer queue.
#[derive(Default)]
pub struct EventQueue {
    inner: Mutex<Inner>,
    changed: Condvar,
}

impl EventQueue {
    /// Queues `item`, waiting while the queue is full; false once closed.
    fn push(&self, item: Item) -> bool {
        let n = match &item {
            Item::Event(e) => e.len(),
            Item::Broken(_) => 0,
        };
        let mut g = self.inner.lock();
        while !g.closed && g.bytes > 0 && g.bytes + n > QUEUE_BYTES {
            self.changed.wait(&mut g);
        }
        if g.closed {
            return false;
        }
        g.bytes += n;
        g.items.push_back(item);
        self.changed.notify_all();
        true
    }

    /// The next item; None once closed.
    pub fn pop(&self) -> Option<Item> {
        let mut g = self.inner.lock();
        loop {
            if g.closed {
                return None;
            }
            if let Some(item) = g.items.pop_front() {
                if let Item::Event(e) = &item {
                    g.bytes -= e.len();
                }
                self.changed.notify_all();
                return Some(item);
            }
            self.changed.wait(&mut g);
        }
    }

    /// Whether nothing is waiting for the applier.
    pub fn is_empty(&self) -> bool {
        self.inner.lock().items.is_empty()
    }

    /// Ends the queue: both sides return.
    pub fn close(&self) {
        let mut g = self.inner.lock();
        g.closed = true;
        g.items.clear();
        g.bytes = 0;
        self.changed.notify_all();
    }
}

/// What the reader learnt of the source at connect.
#[derive(Debug, Clone, Default)]
pub struct SourceInfo {
    pub server_id: u32,
    pub uuid: String,
    pub checksum: bool,
}

/// What a reader needs.
pub struct ReaderSpec {
    pub login: Login,
    pub heartbeat_ms: u64,
    pub server_id: u32,
    pub report_port: u16,
    pub from: SourcePos,
}

/// A running reader thread.
pub struct Reader {
    pub queue: Arc<EventQueue>,
    socket: Arc<Mutex<Option<TcpStream>>>,
    handle: Option<JoinHandle<()>>,
}

impl Reader {
    /// Connects (on this thread: connect errors come back at once), then
    /// streams on a thread of its own.
    pub fn start(
        spec: ReaderSpec,
        stop: Arc<AtomicBool>,
    ) -> Result<(Reader, SourceInfo), ClientError> {
        let (conn, info) = connect(&spec)?;
        let socket = Arc::new(Mutex::new(Some(conn.shutdown_handle()?)));
        let queue = Arc::new(EventQueue::default());
        let q = queue.clone();
        let handle = std::thread::Builder::new()
            .name("replica-io".to_string())
            .spawn(move || stream(conn, &q, &stop))
            .map_err(|e| ClientError {
                code: 2013,
                message: format!("cannot start the replica I/O thread: {e}"),
            })?;
        Ok((
            Reader {
                queue,
                socket,
                handle: Some(handle),
            },
            info,
        ))
    }

    /// Ends the stream and the thread.
    pub fn finish(&mut self) {
        if let Some(s) = self.socket.lock().take() {
            let _ = s.shutdown(std::net::Shutdown::Both);
        }
        self.queue.close();
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }

    /// A handle STOP REPLICA uses to end a blocked read.
    pub fn socket(&self) -> Arc<Mutex<Option<TcpStream>>> {
        self.socket.clone()
    }
}

impl Drop for Reader {
    fn drop(&mut self) {
        self.finish();
    }
}

fn stream(mut conn: SourceConn, q: &EventQueue, stop: &AtomicBool) {
    loop {
        let item = match conn.next_event() {
            Ok(Some(ev)) => Item::Event(ev),
            Ok(None) => Item::Broken(ClientError {
                code: 2013,
                message: "the source ended the binary log stream".to_string(),
            }),
            Err(e) => Item::Broken(e),
        };
        // Every way out leaves a Broken item last (or a closed queue), so
        // the applier never waits for an item that will not come.
        let last = matches!(item, Item::Broken(_));
        if !q.push(item) || last {
            conn.close();
            return;
        }
        if stop.load(Ordering::SeqCst) {
            q.push(Item::Broken(ClientError {
                code: 2013,
                message: "stopped".to_string(),
            }));
            conn.close();
            return;
        }
    }
}

/// Logs in, checks the source, registers and asks for the binlog.
fn connect(spec: &ReaderSpec) -> Result<(SourceConn, SourceInfo), ClientError> {
    let mut conn = SourceConn::connect(&spec.login, CONNECT_TIMEOUT)?;
    let server_id: u32 = conn
        .query_value("SELECT @@GLOBAL.SERVER_ID")?
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    if server_id == spec.server_id {
        return Err(ClientError {
            code: 13117,
            message: "Fatal error: The replica I/O thread stops because source and replica have \
                      equal MySQL server ids; these ids must be different for replication to \
                      work (or the --replicate-same-server-id option must be used on replica \
                      but this does not always make sense; please check the manual before \
                      using it)."
                .to_string(),
        });
    }
    let uuid = conn
        .query_value("SELECT @@GLOBAL.SERVER_UUID")
        .ok()
        .flatten()
        .unwrap_or_default();
    // The source then sends every event with its checksum, the artificial
    // ROTATE before the FORMAT_DESCRIPTION included.
    let checksum = conn
        .query_value("SELECT @@GLOBAL.BINLOG_CHECKSUM")?
        .is_some_and(|v| v.eq_ignore_ascii_case("CRC32"));
    conn.query("SET @master_binlog_checksum = @@global.binlog_checksum")?;
    conn.query("SET @source_binlog_checksum = @@global.binlog_checksum")?;
    let hb_ns = spec.heartbeat_ms.saturating_mul(1_000_000);
    conn.query(&format!("SET @master_heartbeat_period = {hb_ns}"))?;
    let idle = if spec.heartbeat_ms > 0 {
        Duration::from_millis(spec.heartbeat_ms.saturating_mul(2).max(1000))
    } else {
        Duration::from_secs(60)
    };
    conn.set_read_timeout(idle)?;
    conn.register(spec.server_id, spec.report_port)?;
    conn.dump(spec.server_id, &spec.from.file, spec.from.pos)?;
    Ok((
        conn,
        SourceInfo {
            server_id,
            uuid,
            checksum,
        },
    ))
}
