//! Errors of the server crate.
//!
//! Two kinds: [`ServerError`] ends `serve` (the listener could not be set up
//! or accepting failed fatally); [`ProtocolError`] ends one connection (a
//! socket error, a malformed or oversized packet, a client that vanished).
//! Protocol errors that MySQL answers with an ERR packet before closing
//! carry the MySQL error number, SQLSTATE and message that the connection
//! loop sends ([`ProtocolError::to_mysql`]).

use std::io;

/// A fatal error of the accept loop.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    #[error("cannot listen on {addr}: {source}")]
    Bind { addr: String, source: io::Error },
    #[error("cannot use unix socket {path}: {source}")]
    Socket { path: String, source: io::Error },
    #[error("listener error: {0}")]
    Io(#[from] io::Error),
    #[error("cannot load the accounts (mysql.user, mysql.db): {0}")]
    GrantTables(quire_engine::EngineError),
    #[error("cannot open the replication channel (mysql.quire_replica_source): {0}")]
    Replica(quire_engine::EngineError),
    #[error("cannot set up TLS / caching_sha2_password keys: {0}")]
    Auth(String),
}

/// Why one connection ends (or one packet was refused).
#[derive(Debug, thiserror::Error)]
pub enum ProtocolError {
    /// The socket failed or the peer closed it mid-packet.
    #[error("i/o: {0}")]
    Io(#[from] io::Error),
    /// The peer closed the connection cleanly between packets.
    #[error("connection closed by client")]
    Closed,
    /// No command arrived within `wait_timeout`.
    #[error("idle longer than wait_timeout")]
    Timeout,
    /// A packet (all its 16 MiB pieces together) exceeds `max_allowed_packet`.
    #[error("Got a packet bigger than 'max_allowed_packet' bytes")]
    TooLarge,
    /// A packet's sequence id is not the expected one.
    #[error("Got packets out of order")]
    OutOfOrder { expected: u8, got: u8 },
    /// A packet's content does not parse.
    #[error("malformed packet: {0}")]
    Malformed(&'static str),
}

impl ProtocolError {
    /// The ERR packet MySQL sends for this error before closing, if any
    /// (`None` when the peer is gone anyway).
    pub fn to_mysql(&self) -> Option<(u16, &'static str, String)> {
        match self {
            ProtocolError::Io(_) | ProtocolError::Closed => None,
            // ER_CLIENT_INTERACTION_TIMEOUT (MySQL 8.0.24+).
            ProtocolError::Timeout => Some((
                4031,
                "HY000",
                "The client was disconnected by the server because of inactivity. \
                 See wait_timeout and interactive_timeout for configuring this behavior."
                    .to_string(),
            )),
            // ER_NET_PACKET_TOO_LARGE
            ProtocolError::TooLarge => Some((
                1153,
                "08S01",
                "Got a packet bigger than 'max_allowed_packet' bytes".to_string(),
            )),
            // ER_NET_PACKETS_OUT_OF_ORDER
            ProtocolError::OutOfOrder { .. } => {
                Some((1156, "08S01", "Got packets out of order".to_string()))
            }
            // ER_MALFORMED_PACKET
            ProtocolError::Malformed(_) => {
                Some((1835, "HY000", "Malformed communication packet.".to_string()))
            }
        }
    }
}
