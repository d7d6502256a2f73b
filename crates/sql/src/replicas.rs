//! # Registered replicas (COM_REGISTER_SLAVE)
//!
//! A replica announces its server_id, host and port before it asks for
//! the binary log; MySQL lists them in SHOW REPLICAS. The registry holds
//! one entry per connection that registered, removed when the connection
//! ends (quire-server registers them). Bounded by the connections
//! themselves (at most max_connections + 1 entries).

use std::collections::BTreeMap;
use std::sync::OnceLock;

use parking_lot::Mutex;

/// What COM_REGISTER_SLAVE carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replica {
    pub server_id: u32,
    pub host: String,
    pub user: String,
    pub port: u16,
    pub source_id: u32,
}

fn registry() -> &'static Mutex<BTreeMap<u32, Replica>> {
    static R: OnceLock<Mutex<BTreeMap<u32, Replica>>> = OnceLock::new();
    R.get_or_init(|| Mutex::new(BTreeMap::new()))
}

/// A connection's registration; dropping it removes the entry.
pub struct Registered {
    conn_id: u32,
}

impl Drop for Registered {
    fn drop(&mut self) {
        registry().lock().remove(&self.conn_id);
    }
}

/// Records (or replaces) connection `conn_id`'s registration.
pub fn register(conn_id: u32, r: Replica) -> Registered {
    registry().lock().insert(conn_id, r);
    Registered { conn_id }
}

/// The registered replicas, by connection id (SHOW REPLICAS).
pub fn list() -> Vec<(u32, Replica)> {
    registry()
        .lock()
        .iter()
        .map(|(k, v)| (*k, v.clone()))
        .collect()
}
