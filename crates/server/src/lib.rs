//! # quire-server: the MySQL client/server protocol
//!
//! This crate puts a [`quire_sql::Session`] behind the MySQL wire protocol,
//! so that the `mariadb`/`mysql` clients, sysbench, and every MySQL driver
//! talk to quire unchanged. It speaks the protocol of MySQL 8.0 (version
//! string `8.0.36-quire`): TCP and Unix sockets, TLS, `caching_sha2_password`
//! and `mysql_native_password`, account options, text results for COM_QUERY and the binary protocol for server-side
//! prepared statements.
//!
//! ```text
//!   client ──TCP/Unix──> [server.rs] accept loop, max_connections, shutdown
//!                             │ [sessions.rs] limits, extra connection,
//!                             │   process-list entry, KILL/SHUTDOWN hooks
//!                             │ one thread per connection
//!                             v
//!                        [conn.rs] state machine: handshake ─> auth ─> commands
//!                             │         │                     │
//!               [packet.rs] framing     [handshake.rs,        [command.rs] decode COM_*
//!               (16 MiB pieces,          auth.rs] V10,         + binary parameters
//!                seq ids, limits)        native password,     [resultset.rs] OK/ERR/EOF,
//!                                        accounts              column defs, text and
//!                                                              binary rows
//!                             │
//!                             v
//!                       quire_sql::Session  (execute / prepare / execute_prepared)
//! ```
//!
//! ## Public API
//!
//! * [`serve`] binds `bind_address:port` (and [`ServerConfig::socket`]) and
//!   serves until the `shutdown` flag is set; [`serve_on`] takes a bound
//!   listener (tests use port 0). Both return after closing every
//!   connection; the caller then closes the engine.
//! * [`DirectServer`] runs one connection on the caller's thread over a
//!   socket the caller made (no listener): the `login` fuzz target drives
//!   the whole connection phase through it (`direct.rs`).
//! * [`accounts()`] is the process-wide [`Accounts`] table (`root@localhost`
//!   without password by default) that the SQL layer's `CREATE USER`,
//!   `DROP USER`, `GRANT ALL`, `ALTER USER` and `SET PASSWORD` manipulate:
//!   [`Accounts`] implements [`quire_sql::AccountStore`] and every session
//!   gets the table and its identity (`CURRENT_USER()`, `USER()`) at
//!   connect.
//! * [`server_status()`] gives the counters the server owns
//!   (`Connections`, `Threads_connected`, `Max_used_connections`,
//!   `Aborted_connects`, `Bytes_received`, `Bytes_sent`, `Questions`,
//!   `Com_stmt_*`, ...) for `SHOW GLOBAL STATUS`.
//! * [`decode_client_packet`] and [`decode_execute_params`] are public for
//!   fuzzing: whatever the bytes, they return an error rather than panic.
//!
//! ## Where quire differs from MySQL
//!
//! * TLS 1.2/1.3 through rustls (ECDSA certificates generated on first
//!   start; MySQL generates RSA ones). `ssl_*` and `tls_version` are
//!   read-only (no `ALTER INSTANCE RELOAD TLS`). No compression, no
//!   `LOAD DATA LOCAL`, no session-state tracking, no COM_CHANGE_USER.
//! * `caching_sha2_password` (the default) and `mysql_native_password`,
//!   switched per account as MySQL does; salts of stored hashes are
//!   printable (a subset of MySQL's). No sha256_password, no
//!   `REQUIRE CIPHER/ISSUER/SUBJECT`, no per-hour resource limits, no
//!   password lifetime or history (1235 errors naming the clause).
//! * `max_connect_errors` never blocks loopback or the socket (as MySQL);
//!   performance_schema.host_cache is not there.
//! * The status flags carry `AUTOCOMMIT` and `IN_TRANS` from the session
//!   but not `IN_TRANS_READONLY`.
//! * Cursors (COM_STMT_FETCH) are not supported; results are sent whole.
//! * `performance_schema.threads` lists foreground (connection) threads
//!   only, with THREAD_ID = PROCESSLIST_ID.
//! * KILL does not abandon a commit once its prepare record is written
//!   (MySQL lets such a commit finish too); it is checked once before.
//! * Accounts are kept in `mysql.user` / `mysql.db` with a subset of
//!   MySQL's columns; editing those tables directly takes effect at
//!   `FLUSH PRIVILEGES`, as in MySQL. Grants are recorded but only
//!   account management checks them.

mod auth;
pub mod codec;
mod command;
mod conn;
mod direct;
mod error;
mod grant_tables;
pub mod handshake;
mod login;
pub mod packet;
pub mod replica;
pub mod resultset;
mod server;
mod sessions;
pub mod sha2_password;
mod split;
mod status;
mod stream;
pub mod tls;

pub use auth::{
    accounts, native_password_check, native_password_hash, native_password_token, AccountError,
    Accounts, Authenticated, ClientHost,
};
pub use command::{decode_client_packet, decode_execute_params, Command, ParamError};
pub use direct::DirectServer;
pub use error::{ProtocolError, ServerError};
pub use server::{serve, serve_on, serve_with_accounts, ServerConfig};
pub use split::split_statements;
pub use status::{server_status, uptime_secs};
