//! # quire-config: server variables with MySQL's names
//!
//! quire is configured the way MySQL is: with *system variables* such as
//! `innodb_buffer_pool_size` or `innodb_flush_log_at_trx_commit`, under
//! MySQL 8.0's names, defaults and ranges, given in a `my.cnf` file, on
//! the command line, or (for the dynamic ones) with `SET GLOBAL` later.
//! Someone who has tuned MySQL should be able to tune quire without
//! reading a word of our documentation.
//!
//! ## One struct
//!
//! Every variable is a public field of one [`Config`]. The storage engine,
//! the benchmarks and, later, the SQL layer all read the same struct, so
//! there are no per-crate option structs to keep in sync, no two names for
//! one setting, and `SHOW VARIABLES` is just [`Config::variables`].
//!
//! Behind the struct is a table, [`registry()`], with one [`VarInfo`] per
//! variable: its name, type, default, range or allowed values, whether it
//! is dynamic, and a line of help. Parsing (`16M`, `ON`, `O_DIRECT`),
//! printing as `SHOW VARIABLES` would, range checks, error messages and
//! the command-line and `my.cnf` syntax are all driven by that table, so
//! a new variable (`sync_binlog`, `log_bin`, ...) is one field plus one
//! entry.
//!
//! ## Where values come from, and which wins
//!
//! From weakest to strongest:
//!
//! 1. the built-in defaults ([`Config::default`], MySQL 8.0's);
//! 2. the `[mysqld]` and `[server]` sections of the file named by
//!    `--defaults-file` (see [`parse_args`]);
//! 3. the command line (`--innodb-buffer-pool-size=256M`), wherever it
//!    sits relative to `--defaults-file`; a later occurrence beats an
//!    earlier one;
//! 4. at runtime, [`Config::set_global`] (what `SET GLOBAL` will call),
//!    for dynamic variables only.
//!
//! Names match with `-` or `_` and in any case; values take MySQL's
//! forms: `K`/`M`/`G`/`T` suffixes (powers of 1024), `ON`/`OFF`/`1`/`0`/
//! `TRUE`/`FALSE`, enum names in any case.
//!
//! ## Where we differ from MySQL, on purpose
//!
//! * **We reject, MySQL adjusts.** Given an out-of-range number at
//!   startup, `mysqld` clamps it to the nearest limit, rounds it to a
//!   block size, or quietly fixes a conflict (`innodb_io_capacity` above
//!   `innodb_io_capacity_max`, `innodb_max_dirty_pages_pct_lwm` above
//!   `innodb_max_dirty_pages_pct`, a write-ahead size that is not a power
//!   of two), and logs a warning that is easy to miss. A durability
//!   experiment run with a setting other than the one written down is
//!   worse than no run, so quire refuses, naming the variable and what it
//!   accepts: `Variable 'innodb_buffer_pool_size' can't be set to the
//!   value of '3M': allowed range is 5242880 (5M) .. 18446744073709551615`.
//! * Unknown variables in a defaults file are errors (prefix them with
//!   `loose-` to have them ignored, as MySQL allows); on the command line,
//!   options outside our namespace are handed back for the caller's own
//!   parser (see [`parse_args`]).
//! * `innodb_doublewrite = DETECT_AND_RECOVER` is accepted as the synonym
//!   of `ON` it is, and shown as `ON`.
//! * `innodb_flush_method = littlesync | nosync` (MySQL's internal test
//!   settings) are refused with an explicit "not supported".
//! * Defaults that MySQL derives from variables quire does not have are
//!   fixed at what MySQL derives for its own defaults: see
//!   `innodb_doublewrite_files` and `innodb_doublewrite_pages`.
//! * A variable that was *not* given still follows one that was, as in
//!   MySQL, so no one gets an error about a setting they never made:
//!   [`parse_args`] sets `innodb_io_capacity_max` to
//!   `max(2000, 2 * innodb_io_capacity)` and lowers
//!   `innodb_log_write_ahead_size` to `innodb_page_size` and
//!   `innodb_max_dirty_pages_pct_lwm` to `innodb_max_dirty_pages_pct`.
//!   Only when both were given and conflict is it an error.
//!
//! ## Example
//!
//! ```
//! let args = ["--keys", "100", "--innodb-buffer-pool-size=256M", "--skip-innodb-adaptive-flushing"];
//! let (config, rest) = quire_config::parse_args(args.map(String::from)).unwrap();
//! assert_eq!(config.innodb_buffer_pool_size, 256 << 20);
//! assert!(!config.innodb_adaptive_flushing);
//! assert_eq!(rest, ["--keys", "100"]);
//! assert_eq!(config.get("innodb-buffer-pool-size").unwrap(), "268435456");
//! ```

mod args;
mod cnf;
mod error;
mod registry;
mod size;

use std::fmt;
use std::path::{Path, PathBuf};

pub use args::{parse_args, parse_defaults_file};
pub use error::{
    ConfigError, ER_INCORRECT_GLOBAL_LOCAL_VAR, ER_UNKNOWN_ERROR, ER_UNKNOWN_SYSTEM_VARIABLE,
    ER_WRONG_TYPE_FOR_VAR, ER_WRONG_VALUE_FOR_VAR,
};
pub use quire_io::FlushMethod;
pub use registry::{registry, var_info, VarInfo, VarKind};
pub use size::{format_size, parse_size, ParseSizeError};

use registry::Value;

/// `innodb_doublewrite` (MySQL 8.0.30 and later).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DoublewriteMode {
    /// Pages are written to the doublewrite buffer first, and recovery
    /// repairs torn pages from it. Also spelled `DETECT_AND_RECOVER`.
    #[default]
    On,
    /// No doublewrite buffer: a torn page is unrecoverable.
    Off,
    /// Only page metadata goes to the doublewrite buffer: torn pages are
    /// detected during recovery but not repaired.
    DetectOnly,
}

impl DoublewriteMode {
    /// As `SHOW VARIABLES` prints it: `ON`, `OFF`, `DETECT_ONLY`.
    pub fn name(self) -> &'static str {
        match self {
            DoublewriteMode::On => "ON",
            DoublewriteMode::Off => "OFF",
            DoublewriteMode::DetectOnly => "DETECT_ONLY",
        }
    }

    /// The mode whose [`name`](DoublewriteMode::name) is `name` (exact).
    fn from_name(name: &str) -> Option<Self> {
        [
            DoublewriteMode::On,
            DoublewriteMode::Off,
            DoublewriteMode::DetectOnly,
        ]
        .into_iter()
        .find(|m| m.name() == name)
    }

    /// Whether the doublewrite buffer is in use at all (ON or DETECT_ONLY).
    pub fn is_enabled(self) -> bool {
        self != DoublewriteMode::Off
    }
}

impl fmt::Display for DoublewriteMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Every server variable quire knows, under its MySQL name.
///
/// Each field says what it means, its default, what it accepts, and
/// whether MySQL lets `SET GLOBAL` change it at runtime ("dynamic").
/// Build one with [`Config::default`], [`parse_args`] or
/// [`parse_defaults_file`]; after changing fields directly, call
/// [`Config::validate`].
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// `datadir`: the directory holding every data and log file.
    /// Default `./quire-data` (MySQL's is compiled in, typically
    /// `/var/lib/mysql`). Any non-empty path. Not dynamic.
    pub datadir: PathBuf,

    /// `innodb_page_size`: size in bytes of every page of every
    /// tablespace, fixed when the data directory is created. Default
    /// 16384. One of 4096, 8192, 16384, 32768, 65536 (also written 4k,
    /// 8k, 16k, 32k, 64k). Not dynamic.
    pub innodb_page_size: u32,

    /// `innodb_buffer_pool_size`: bytes of memory caching table and index
    /// pages. Default 134217728 (128M). Range 5242880 (5M) ..
    /// 18446744073709551615, a multiple of 1M (MySQL rounds to its 1M
    /// block size and then to whole buffer-pool chunks; we require the
    /// multiple of 1M and do not round). Dynamic.
    pub innodb_buffer_pool_size: u64,

    /// `innodb_log_buffer_size`: bytes of the in-memory redo log buffer;
    /// a transaction larger than this must write redo before it commits.
    /// Default 16777216 (16M). Range 262144 (256K) .. 4294967295, a
    /// multiple of 1024. Dynamic.
    pub innodb_log_buffer_size: u64,

    /// `innodb_sort_buffer_size`: bytes of keys an index build sorts in
    /// memory before it writes them out as a sorted run (MySQL's sort
    /// buffer for online CREATE INDEX). Default 1048576 (1M). Range
    /// 65536 (64K) .. 67108864 (64M). Not dynamic.
    pub innodb_sort_buffer_size: u64,

    /// `innodb_redo_log_capacity`: total bytes of redo log files on disk;
    /// it bounds how far the checkpoint may lag behind the newest redo.
    /// Default 104857600 (100M). Range 8388608 (8M) .. 137438953472
    /// (128G), a multiple of 1M. Dynamic.
    pub innodb_redo_log_capacity: u64,

    /// `innodb_log_write_ahead_size`: redo writes are padded to a
    /// multiple of this many bytes, so the OS never has to read a
    /// partially written block before writing it. Default 8192. A power
    /// of two from 512 to `innodb_page_size` (checked by
    /// [`Config::validate`]; MySQL rounds up to a power of two and clamps
    /// to the page size). When not given, [`parse_args`] lowers it to
    /// `innodb_page_size` as MySQL does. Dynamic.
    pub innodb_log_write_ahead_size: u32,

    /// `innodb_flush_method`: how data and redo files are opened and made
    /// durable (see [`FlushMethod`]). Default `fsync`. One of `fsync`,
    /// `O_DSYNC`, `O_DIRECT`, `O_DIRECT_NO_FSYNC`, in any case; MySQL's
    /// `littlesync` and `nosync` are refused. Not dynamic.
    pub innodb_flush_method: FlushMethod,

    /// `innodb_use_fdatasync`: sync with `fdatasync()` instead of
    /// `fsync()` where the flush method calls for a sync. Default OFF.
    /// Dynamic.
    pub innodb_use_fdatasync: bool,

    /// `innodb_io_capacity`: I/O operations per second that background
    /// flushing may use in normal operation. Default 200. Range 100 ..
    /// 18446744073709551615; at most `innodb_io_capacity_max`. Dynamic.
    pub innodb_io_capacity: u64,

    /// `innodb_io_capacity_max`: how far flushing may exceed
    /// `innodb_io_capacity` when it falls behind. Default 2000; when not
    /// given, [`parse_args`] sets it as MySQL does, to
    /// `max(2000, 2 * innodb_io_capacity)`. Range 100 .. 4294967295; at
    /// least `innodb_io_capacity` (MySQL lowers `innodb_io_capacity`
    /// instead; we refuse). Dynamic.
    pub innodb_io_capacity_max: u64,

    /// `innodb_max_dirty_pages_pct`: percentage of buffer-pool pages
    /// that may be dirty before flushing works hard to bring it down.
    /// Default 90. Range 0 .. 99.999. Dynamic.
    pub innodb_max_dirty_pages_pct: f64,

    /// `innodb_max_dirty_pages_pct_lwm`: percentage of dirty pages at
    /// which preflushing starts; 0 disables it. Default 10. Range 0 ..
    /// 99.999, at most `innodb_max_dirty_pages_pct` (MySQL lowers the
    /// low-water mark to it with a warning; we refuse both given values,
    /// and [`parse_args`] lowers it only when it was not given). Dynamic.
    pub innodb_max_dirty_pages_pct_lwm: f64,

    /// `innodb_adaptive_flushing`: adjust the flushing rate to the rate
    /// of redo generation. Default ON. Dynamic.
    pub innodb_adaptive_flushing: bool,

    /// `innodb_adaptive_flushing_lwm`: percentage of the redo log
    /// capacity in use below which adaptive flushing stays off. Default
    /// 10. Range 0 .. 70, a whole number (an integer variable in MySQL;
    /// kept as `f64` here for the flushing arithmetic). Dynamic.
    pub innodb_adaptive_flushing_lwm: f64,

    /// `innodb_flush_neighbors`: when flushing a page, also flush dirty
    /// pages of the same extent: 0 no, 1 contiguous ones, 2 any. Default
    /// 0. Range 0 .. 2. Dynamic.
    pub innodb_flush_neighbors: u32,

    /// `innodb_doublewrite`: protection against torn page writes (see
    /// [`DoublewriteMode`]). Default ON. Accepts ON, OFF, DETECT_ONLY,
    /// DETECT_AND_RECOVER (same as ON; shown as ON), TRUE, FALSE, 1, 0.
    /// Dynamic, but only between ON and DETECT_ONLY: switching to or from
    /// OFF needs a restart, as in MySQL.
    pub innodb_doublewrite: DoublewriteMode,

    /// `innodb_doublewrite_dir`: directory of the doublewrite files;
    /// `None` (MySQL's NULL, written as an empty value) means the data
    /// directory. Default `None`. Not dynamic. See
    /// [`Config::doublewrite_dir`].
    pub innodb_doublewrite_dir: Option<PathBuf>,

    /// `innodb_doublewrite_files`: number of doublewrite files. Default 2
    /// (MySQL: `2 * innodb_buffer_pool_instances`, which is 2 for buffer
    /// pools under 1 GiB; quire has one instance, so 2 always). Range
    /// 2 .. 256. Not dynamic.
    pub innodb_doublewrite_files: u32,

    /// `innodb_doublewrite_pages`: maximum doublewrite pages per thread
    /// in one batch. Default 4 (MySQL 8.0: the value of
    /// `innodb_write_io_threads`, whose default is 4; it is also the
    /// minimum). Range 4 .. 512. Not dynamic.
    pub innodb_doublewrite_pages: u32,

    /// `innodb_flush_log_at_trx_commit`: 1 writes and flushes the redo
    /// log at every commit (durable); 2 writes at commit and flushes once
    /// per `innodb_flush_log_at_timeout` (survives a process crash, not
    /// an OS crash); 0 writes and flushes once per timeout. Default 1.
    /// Range 0 .. 2. Dynamic.
    pub innodb_flush_log_at_trx_commit: u32,

    /// `innodb_flush_log_at_timeout`: seconds between redo writes and
    /// flushes when `innodb_flush_log_at_trx_commit` is 0 or 2. Default
    /// 1. Range 1 .. 2700. Dynamic.
    pub innodb_flush_log_at_timeout: u32,

    /// `lock_wait_timeout`: seconds a statement waits for a metadata
    /// lock (DDL behind open writers of its table, writers behind a
    /// pending DDL) before error 1205. MySQL's default is a year.
    pub lock_wait_timeout: u64,
    /// `innodb_lock_wait_timeout`: seconds a statement waits for a row
    /// lock before failing with error 1205 (ER_LOCK_WAIT_TIMEOUT).
    /// Default 50. Range 1 .. 1073741824. Dynamic (global and session in
    /// MySQL; this is the global value).
    pub innodb_lock_wait_timeout: u64,

    /// `innodb_stats_persistent`: ANALYZE TABLE stores the statistics it
    /// computes durably (quire's `quire:stats` tree, MySQL's
    /// `mysql.innodb_table_stats`); OFF keeps them in memory only and
    /// ignores stored ones at start. Default ON. Dynamic.
    pub innodb_stats_persistent: bool,
    /// `innodb_stats_auto_recalc`: recalculate a table's statistics in the
    /// background once more than 10% of its rows changed since the last
    /// calculation (and at first use of a never analyzed table). Default
    /// ON. Dynamic.
    pub innodb_stats_auto_recalc: bool,
    /// `innodb_stats_persistent_sample_pages`: leaf pages sampled per
    /// index by ANALYZE TABLE. Default 20. Range 1 .. 2^64-1. Dynamic.
    pub innodb_stats_persistent_sample_pages: u64,

    /// `log_bin`: write the binary log (`--log-bin`, `--skip-log-bin`).
    /// Default ON, as MySQL 8.0. Not dynamic.
    pub log_bin: bool,

    /// `log_bin_basename`: path and base name of the binary log files;
    /// `None` = `DATADIR/binlog` (files `binlog.000001`, `binlog.index`).
    /// Not dynamic.
    pub log_bin_basename: Option<PathBuf>,

    /// `sync_binlog`: 0 = the server never fsyncs the binary log for a
    /// commit (quire still fsyncs it at most once a second in the
    /// background, like innodb_flush_log_at_timeout, so that redo can be
    /// checkpointed); 1 = every commit group; N = every N groups. Default 1.
    /// Range 0 .. 4294967295. Dynamic.
    pub sync_binlog: u32,

    /// `binlog_group_commit_sync_delay`: microseconds the sync-stage leader
    /// waits before the binary log fsync to gather later groups. Default 0.
    /// Range 0 .. 1000000. Dynamic.
    pub binlog_group_commit_sync_delay: u64,

    /// `binlog_group_commit_sync_no_delay_count`: the wait above ends once
    /// this many transactions are queued (0 = no count). Default 0. Range
    /// 0 .. 100000. Dynamic.
    pub binlog_group_commit_sync_no_delay_count: u64,

    /// `max_binlog_size`: rotate to a new binary log file after the
    /// transaction that passes this size. Default 1073741824 (1G). Range
    /// 4096 .. 1073741824, a multiple of 4096. Dynamic.
    pub max_binlog_size: u64,

    /// `binlog_cache_size`: bytes of a transaction's binlog events held
    /// in memory before the rest goes to a temporary file. Default 32768.
    /// Range 4096 .. 2^64 - 4096, a multiple of 4096. Dynamic.
    pub binlog_cache_size: u64,

    /// `max_binlog_cache_size`: a transaction needing more binlog bytes
    /// fails with 1197. Default and maximum 2^64 - 4096. Dynamic.
    pub max_binlog_cache_size: u64,

    /// `binlog_checksum`: CRC32 (default, true) or NONE. Dynamic.
    pub binlog_checksum: bool,

    /// `binlog_expire_logs_seconds`: binary log files last written longer
    /// ago are removed at start-up and after a rotation (0 = never).
    /// Default 2592000 (30 days). Range 0 .. 4294967295. Dynamic.
    pub binlog_expire_logs_seconds: u64,

    /// `binlog_expire_logs_auto_purge` (MySQL 8.0.29+): OFF stops expiry
    /// (PURGE BINARY LOGS still works). Default ON. Dynamic.
    pub binlog_expire_logs_auto_purge: bool,

    /// `rpl_semi_sync_source_enabled` (MySQL 8.0.26+; MariaDB and older
    /// MySQL: `rpl_semi_sync_master_enabled`): commits wait, after the
    /// binlog sync, for a semi-sync replica's acknowledgement. Default OFF.
    pub rpl_semi_sync_source_enabled: bool,

    /// `rpl_semi_sync_source_timeout`: ms a commit waits for the ack
    /// before the source goes on asynchronously. Default 10000.
    pub rpl_semi_sync_source_timeout: u64,

    /// `rpl_semi_sync_source_wait_for_replica_count`: acks a commit
    /// waits for. Default 1.
    pub rpl_semi_sync_source_wait_for_replica_count: u64,

    /// `gtid_mode`: OFF (default), OFF_PERMISSIVE, ON_PERMISSIVE, ON. With
    /// ON or ON_PERMISSIVE every transaction gets a GTID. SET GLOBAL moves
    /// it one step at a time; ON needs enforce_gtid_consistency=ON.
    pub gtid_mode: String,

    /// `enforce_gtid_consistency`: OFF (default), ON or WARN.
    pub enforce_gtid_consistency: String,

    /// `binlog_row_image`: FULL (default), MINIMAL or NOBLOB: which
    /// columns the binary log's row images carry. Dynamic.
    pub binlog_row_image: String,

    /// `binlog_row_metadata`: MINIMAL (default, false) or FULL (true:
    /// TABLE_MAP events also carry column names, the primary key and
    /// ENUM/SET members, as CDC tools want). Dynamic.
    pub binlog_row_metadata_full: bool,

    /// `server_id`: written into every event. Default 1. Dynamic.
    pub server_id: u32,

    /// `skip_replica_start`: the replication channel waits for START
    /// REPLICA instead of starting with the server.
    pub skip_replica_start: bool,

    /// `quire_prepare_flush` (quire's own): GROUP (default, false) lets the
    /// binlog flush-stage leader flush redo once for its group (MySQL
    /// 5.7.6+); PER_TRANSACTION (true) flushes each transaction's prepare
    /// on its own, as MySQL did before, so the gain can be measured.
    /// Dynamic.
    pub quire_prepare_flush_per_trx: bool,

    /// `port`: TCP port of `quire serve`. Default 3306. Not dynamic.
    pub port: u16,
    /// `bind_address`: listening address. Default 127.0.0.1 (MySQL: *).
    /// Not dynamic.
    pub bind_address: String,
    /// `socket`: Unix socket path; None = no socket. Not dynamic.
    pub socket: Option<PathBuf>,
    /// `max_connections`: default 151, range 1 .. 100000. Dynamic.
    pub max_connections: u32,
    /// `max_allowed_packet`: default 64M, range 1K .. 1G. Dynamic.
    pub max_allowed_packet: u64,
    /// `thread_stack`: bytes of stack per connection thread. Default 8M
    /// (MySQL: 1M; quire's recursive SQL layer needs more), range
    /// 128K .. 1G. Not dynamic.
    pub thread_stack: u64,
    /// `wait_timeout`: idle seconds before a connection is closed. Default
    /// 28800, range 1 .. 31536000. Dynamic.
    pub wait_timeout: u64,

    /// `cte_max_recursion_depth`: rounds a recursive CTE may run (3636
    /// past it). Default 1000, range 0 .. 2^32-1. Dynamic (global and
    /// session).
    pub cte_max_recursion_depth: u64,
    /// `sort_buffer_size`: bytes of rows an ORDER BY keeps in memory
    /// before writing sorted runs to `<datadir>/#tmp`. Default 256K, range
    /// 32K .. 2^64-1. Dynamic (global and session).
    pub sort_buffer_size: u64,
    /// `join_buffer_size`: MySQL's hash join buffer. Default 256K,
    /// multiple of 128: the bytes of build rows a hash join holds in
    /// memory before partitioning both sides to `<datadir>/#tmp`.
    pub join_buffer_size: u64,
    /// `tmp_table_size` and `max_heap_table_size`: the smaller is how many
    /// bytes a GROUP BY / DISTINCT / set operation hash table holds in
    /// memory before partitioning to disk. Default 16M each.
    pub tmp_table_size: u64,
    pub max_heap_table_size: u64,

    /// `ssl_ca`, `ssl_cert`, `ssl_key`: PEM files; None = the data
    /// directory's (auto-generated) ones. Not dynamic.
    pub ssl_ca: Option<PathBuf>,
    pub ssl_cert: Option<PathBuf>,
    pub ssl_key: Option<PathBuf>,
    /// `tls_version`: default `TLSv1.2,TLSv1.3`. Not dynamic.
    pub tls_version: String,
    /// `auto_generate_certs`: default ON. Not dynamic.
    pub auto_generate_certs: bool,
    /// `require_secure_transport`: default OFF. Dynamic.
    pub require_secure_transport: bool,
    /// `default_authentication_plugin`: `caching_sha2_password` (false,
    /// the default) or `mysql_native_password` (true). Not dynamic.
    pub default_authentication_plugin_native: bool,
    /// `caching_sha2_password_auto_generate_rsa_keys`: default ON.
    pub caching_sha2_password_auto_generate_rsa_keys: bool,
    /// `max_connect_errors`: default 100. Dynamic.
    pub max_connect_errors: u64,
    /// `max_user_connections`: default 0 (no limit). Dynamic.
    pub max_user_connections: u32,
    /// `activate_all_roles_on_login`: default OFF. Dynamic; read when a
    /// session logs in.
    pub activate_all_roles_on_login: bool,
}

impl Default for Config {
    /// MySQL 8.0's defaults (and `./quire-data` as the data directory).
    fn default() -> Self {
        Config {
            datadir: PathBuf::from("./quire-data"),
            innodb_page_size: 16384,
            innodb_buffer_pool_size: 134_217_728,
            innodb_log_buffer_size: 16_777_216,
            innodb_sort_buffer_size: 1_048_576,
            innodb_redo_log_capacity: 104_857_600,
            innodb_log_write_ahead_size: 8192,
            innodb_flush_method: FlushMethod::Fsync,
            innodb_use_fdatasync: false,
            innodb_io_capacity: 200,
            innodb_io_capacity_max: 2000,
            innodb_max_dirty_pages_pct: 90.0,
            innodb_max_dirty_pages_pct_lwm: 10.0,
            innodb_adaptive_flushing: true,
            innodb_adaptive_flushing_lwm: 10.0,
            innodb_flush_neighbors: 0,
            innodb_doublewrite: DoublewriteMode::On,
            innodb_doublewrite_dir: None,
            innodb_doublewrite_files: 2,
            innodb_doublewrite_pages: 4,
            innodb_flush_log_at_trx_commit: 1,
            innodb_flush_log_at_timeout: 1,
            innodb_lock_wait_timeout: 50,
            lock_wait_timeout: 31_536_000,
            innodb_stats_persistent: true,
            innodb_stats_auto_recalc: true,
            innodb_stats_persistent_sample_pages: 20,
            log_bin: true,
            log_bin_basename: None,
            sync_binlog: 1,
            binlog_group_commit_sync_delay: 0,
            binlog_group_commit_sync_no_delay_count: 0,
            max_binlog_size: 1_073_741_824,
            binlog_cache_size: 32_768,
            max_binlog_cache_size: 18_446_744_073_709_547_520,
            binlog_checksum: true,
            binlog_expire_logs_seconds: 2_592_000,
            binlog_expire_logs_auto_purge: true,
            binlog_row_image: "FULL".to_string(),
            gtid_mode: "OFF".to_string(),
            rpl_semi_sync_source_enabled: false,
            rpl_semi_sync_source_timeout: 10_000,
            rpl_semi_sync_source_wait_for_replica_count: 1,
            enforce_gtid_consistency: "OFF".to_string(),
            binlog_row_metadata_full: false,
            server_id: 1,
            skip_replica_start: false,
            quire_prepare_flush_per_trx: false,
            port: 3306,
            bind_address: "127.0.0.1".into(),
            socket: None,
            max_connections: 151,
            max_allowed_packet: 67_108_864,
            wait_timeout: 28_800,
            cte_max_recursion_depth: 1000,
            sort_buffer_size: 262_144,
            join_buffer_size: 262_144,
            tmp_table_size: 16_777_216,
            max_heap_table_size: 16_777_216,
            thread_stack: 8 << 20,
            ssl_ca: None,
            ssl_cert: None,
            ssl_key: None,
            tls_version: "TLSv1.2,TLSv1.3".into(),
            auto_generate_certs: true,
            require_secure_transport: false,
            default_authentication_plugin_native: false,
            caching_sha2_password_auto_generate_rsa_keys: true,
            max_connect_errors: 100,
            max_user_connections: 0,
            activate_all_roles_on_login: false,
        }
    }
}

fn lookup(name: &str) -> Result<&'static VarInfo, ConfigError> {
    var_info(name).ok_or_else(|| ConfigError::UnknownVariable {
        name: registry::normalize_name(name),
    })
}

impl Config {
    /// Sets variable `name` (`-` or `_`, any case) from its textual form,
    /// after checking the value against the variable's own range.
    ///
    /// This is the startup path: read-only variables are accepted, and
    /// rules that involve two variables are left to [`Config::validate`]
    /// (so a batch of settings may pass through inconsistent states).
    pub fn set(&mut self, name: &str, value: &str) -> Result<(), ConfigError> {
        lookup(name)?.apply(self, value)
    }

    /// `SET GLOBAL name = value`: like [`Config::set`], but refuses
    /// read-only variables (error 1238) and leaves the configuration
    /// unchanged unless the result passes [`Config::validate`]; a
    /// conflict with another variable is reported against `name`.
    pub fn set_global(&mut self, name: &str, value: &str) -> Result<(), ConfigError> {
        let info = lookup(name)?;
        if !info.dynamic {
            return Err(ConfigError::ReadOnly {
                name: info.name.to_string(),
            });
        }
        let mut next = self.clone();
        info.apply(&mut next, value)?;
        if next.innodb_doublewrite.is_enabled() != self.innodb_doublewrite.is_enabled() {
            return Err(ConfigError::WrongValue {
                name: info.name.to_string(),
                value: value.to_string(),
                reason: format!(
                    "switching the doublewrite buffer between OFF and ON/DETECT_ONLY \
                     needs a restart (it is {} now)",
                    self.innodb_doublewrite
                ),
            });
        }
        next.validate().map_err(|e| match e {
            ConfigError::WrongValue { reason, .. } => ConfigError::WrongValue {
                name: info.name.to_string(),
                value: value.to_string(),
                reason,
            },
            other => other,
        })?;
        *self = next;
        Ok(())
    }

    /// The value of `name` as `SHOW VARIABLES` prints it: `ON`/`OFF`,
    /// enum names, integers in bytes, decimals with six places, an empty
    /// string for an unset path.
    pub fn get(&self, name: &str) -> Result<String, ConfigError> {
        Ok(lookup(name)?.get_value(self).show())
    }

    /// Every `(name, value)`, sorted by name, as `SHOW VARIABLES`.
    pub fn variables(&self) -> impl Iterator<Item = (&'static str, String)> + '_ {
        registry()
            .iter()
            .map(move |info| (info.name, info.get_value(self).show()))
    }

    /// The directory of the doublewrite files: `innodb_doublewrite_dir`,
    /// or the data directory when it is not set.
    pub fn doublewrite_dir(&self) -> &Path {
        self.innodb_doublewrite_dir
            .as_deref()
            .unwrap_or(&self.datadir)
    }

    /// Checks every variable against its range (fields are public, so
    /// they may have been set directly) and the rules between variables:
    ///
    /// * `innodb_io_capacity_max` >= `innodb_io_capacity`;
    /// * `innodb_log_write_ahead_size` <= `innodb_page_size` (and a power
    ///   of two, like the page size);
    /// * `innodb_max_dirty_pages_pct_lwm` <= `innodb_max_dirty_pages_pct`;
    /// * `innodb_adaptive_flushing_lwm` is a whole number.
    ///
    /// MySQL adjusts one of the two values in each case, with a warning;
    /// we refuse (see the crate documentation).
    pub fn validate(&self) -> Result<(), ConfigError> {
        for info in registry() {
            let value = info.get_value(self);
            info.check(&value, &value.show())?;
        }
        let lwm = self.innodb_adaptive_flushing_lwm;
        if lwm.fract() != 0.0 {
            return Err(ConfigError::WrongValue {
                name: "innodb_adaptive_flushing_lwm".into(),
                value: lwm.to_string(),
                reason: "the value must be a whole number".into(),
            });
        }
        if self.innodb_io_capacity_max < self.innodb_io_capacity {
            return Err(ConfigError::WrongValue {
                name: "innodb_io_capacity_max".into(),
                value: self.innodb_io_capacity_max.to_string(),
                reason: format!(
                    "innodb_io_capacity_max ({}) must be at least innodb_io_capacity ({})",
                    self.innodb_io_capacity_max, self.innodb_io_capacity
                ),
            });
        }
        if self.innodb_log_write_ahead_size > self.innodb_page_size {
            return Err(ConfigError::WrongValue {
                name: "innodb_log_write_ahead_size".into(),
                value: self.innodb_log_write_ahead_size.to_string(),
                reason: format!(
                    "innodb_log_write_ahead_size ({}) must be at most innodb_page_size ({})",
                    self.innodb_log_write_ahead_size, self.innodb_page_size
                ),
            });
        }
        if self.innodb_max_dirty_pages_pct_lwm > self.innodb_max_dirty_pages_pct {
            return Err(ConfigError::WrongValue {
                name: "innodb_max_dirty_pages_pct_lwm".into(),
                value: Value::Float(self.innodb_max_dirty_pages_pct_lwm).show(),
                reason: format!(
                    "innodb_max_dirty_pages_pct_lwm ({}) must be at most \
                     innodb_max_dirty_pages_pct ({})",
                    self.innodb_max_dirty_pages_pct_lwm, self.innodb_max_dirty_pages_pct
                ),
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
