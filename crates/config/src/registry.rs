//! The variable table: one [`VarInfo`] per variable, sorted by name.
//!
//! Adding a variable is one field on [`Config`] (with its `Default`) and
//! one entry in [`REGISTRY`]; parsing, printing, range checks, error
//! messages, `my.cnf` and command-line handling all follow from the entry.

use std::fmt;
use std::path::PathBuf;

use quire_io::FlushMethod;

use crate::size::{format_size, parse_size, ParseSizeError};
use crate::{Config, ConfigError, DoublewriteMode};

/// The type of a variable and what values it accepts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum VarKind {
    /// `ON`/`OFF`; accepts ON, OFF, TRUE, FALSE, 1, 0 in any case.
    Bool,
    /// An unsigned integer in `min..=max`. K/M/G/T/P/E suffixes are
    /// accepted (as MySQL accepts them for every numeric option); `size`
    /// only says the value is a byte count, so messages also show it as
    /// `5M`. When `multiple_of` > 1 the value must be a multiple of it;
    /// when `power_of_two`, a power of two.
    Uint {
        min: u64,
        max: u64,
        size: bool,
        multiple_of: u64,
        power_of_two: bool,
    },
    /// A decimal number in `min..=max` (MySQL `DOUBLE` variables).
    Float { min: f64, max: f64 },
    /// One of `values` (case-insensitive; shown as spelled here).
    /// `aliases` are further accepted spellings, each mapped to one of
    /// `values`; `unsupported` are MySQL values quire refuses, with why.
    Enum {
        values: &'static [&'static str],
        aliases: &'static [(&'static str, &'static str)],
        unsupported: &'static [(&'static str, &'static str)],
    },
    /// A file-system path. When `nullable`, the empty string means
    /// "not set" (MySQL's NULL) and prints as an empty value.
    Path { nullable: bool },
}

impl VarKind {
    /// Whether `--NAME` alone means ON and `--skip-NAME` means OFF: true
    /// for booleans and for enums that accept ON and OFF
    /// (`innodb_doublewrite`).
    pub fn is_boolean_like(&self) -> bool {
        match self {
            VarKind::Bool => true,
            VarKind::Enum { .. } => {
                parse_enum_name(self, "ON").is_some() && parse_enum_name(self, "OFF").is_some()
            }
            _ => false,
        }
    }
}

/// Metadata of one variable.
pub struct VarInfo {
    /// The MySQL name, with underscores (`innodb_buffer_pool_size`).
    pub name: &'static str,
    /// Type and accepted values.
    pub kind: VarKind,
    /// The default, spelled as `SHOW VARIABLES` prints it.
    pub default: &'static str,
    /// Whether MySQL allows `SET GLOBAL` on it. A read-only variable
    /// refused at runtime is MySQL error 1238.
    pub dynamic: bool,
    /// One line of help.
    pub help: &'static str,
    get: fn(&Config) -> Value,
    set: fn(&mut Config, Value),
}

impl fmt::Debug for VarInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("VarInfo")
            .field("name", &self.name)
            .field("kind", &self.kind)
            .field("default", &self.default)
            .field("dynamic", &self.dynamic)
            .field("help", &self.help)
            .finish()
    }
}

/// A typed value, between the string a user wrote and a `Config` field.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Value {
    Bool(bool),
    Uint(u64),
    Float(f64),
    /// Always one of the kind's `values` (the canonical spelling).
    Enum(&'static str),
    Path(Option<PathBuf>),
}

// The accessors below are only ever applied to a value parsed for the
// same entry (`parse_value` produces the variant of the entry's kind), so
// the fallbacks are unreachable; they keep the setters free of panics.
impl Value {
    fn as_bool(&self) -> bool {
        matches!(self, Value::Bool(true))
    }
    fn as_u64(&self) -> u64 {
        match self {
            Value::Uint(n) => *n,
            _ => 0,
        }
    }
    fn as_u32(&self) -> u32 {
        u32::try_from(self.as_u64()).unwrap_or(u32::MAX)
    }
    fn as_f64(&self) -> f64 {
        match self {
            Value::Float(x) => *x,
            Value::Uint(n) => *n as f64,
            _ => 0.0,
        }
    }
    fn as_name(&self) -> &'static str {
        match self {
            Value::Enum(s) => s,
            _ => "",
        }
    }
    fn into_path(self) -> Option<PathBuf> {
        match self {
            Value::Path(p) => p,
            _ => None,
        }
    }

    /// As `SHOW VARIABLES` prints it.
    pub(crate) fn show(&self) -> String {
        match self {
            Value::Bool(b) => if *b { "ON" } else { "OFF" }.to_string(),
            Value::Uint(n) => n.to_string(),
            // MySQL prints DOUBLE system variables with six decimals.
            Value::Float(x) => format!("{x:.6}"),
            Value::Enum(s) => s.to_string(),
            Value::Path(Some(p)) => p.display().to_string(),
            Value::Path(None) => String::new(),
        }
    }
}

const fn uint(min: u64, max: u64) -> VarKind {
    VarKind::Uint {
        min,
        max,
        size: false,
        multiple_of: 1,
        power_of_two: false,
    }
}

/// The largest `binlog_cache_size` / `max_binlog_cache_size` (MySQL's
/// 64-bit maximum, the largest multiple of 4096).
const MAX_CACHE_BYTES: u64 = 18_446_744_073_709_547_520;

const fn bytes(min: u64, max: u64, multiple_of: u64) -> VarKind {
    VarKind::Uint {
        min,
        max,
        size: true,
        multiple_of,
        power_of_two: false,
    }
}

const fn pow2_bytes(min: u64, max: u64) -> VarKind {
    VarKind::Uint {
        min,
        max,
        size: true,
        multiple_of: 1,
        power_of_two: true,
    }
}

const MIB: u64 = 1 << 20;

/// Upper limit of `innodb_io_capacity_max` (MySQL 8.0:
/// `SRV_MAX_IO_CAPACITY_LIMIT`, 2^32-1).
pub(crate) const IO_CAPACITY_MAX_LIMIT: u64 = u32::MAX as u64;

/// MySQL's default for `innodb_io_capacity_max` when it is not set:
/// twice `innodb_io_capacity`, at least 2000, at most the limit.
pub(crate) fn derived_io_capacity_max(io_capacity: u64) -> u64 {
    io_capacity
        .saturating_mul(2)
        .clamp(2000, IO_CAPACITY_MAX_LIMIT)
}

const FLUSH_METHODS: [FlushMethod; 4] = [
    FlushMethod::Fsync,
    FlushMethod::ODsync,
    FlushMethod::ODirect,
    FlushMethod::ODirectNoFsync,
];

fn flush_method_from_name(name: &str) -> FlushMethod {
    FLUSH_METHODS
        .into_iter()
        .find(|m| m.name() == name)
        .unwrap_or_default()
}

/// Every variable, sorted by name.
/// The semi-sync source variables, under MySQL 8.0.26+'s names
/// (`rpl_semi_sync_source_*`) and MariaDB's and older MySQL's
/// (`rpl_semi_sync_master_*`): both names set the same setting.
macro_rules! semi_sync_var {
    (enabled $name:literal) => {
        VarInfo {
            name: $name,
            kind: VarKind::Bool,
            default: "OFF",
            dynamic: true,
            help: "Commits wait, after the binary log sync, until a semi-synchronous replica has the transaction (or the timeout passes).",
            get: |c| Value::Bool(c.rpl_semi_sync_source_enabled),
            set: |c, v| c.rpl_semi_sync_source_enabled = v.as_bool(),
        }
    };
    (timeout $name:literal) => {
        VarInfo {
            name: $name,
            kind: uint(0, 4_294_967_295),
            default: "10000",
            dynamic: true,
            help: "Milliseconds a commit waits for a semi-synchronous replica's acknowledgement before the source goes on asynchronously.",
            get: |c| Value::Uint(c.rpl_semi_sync_source_timeout),
            set: |c, v| c.rpl_semi_sync_source_timeout = v.as_u64(),
        }
    };
    (count $name:literal) => {
        VarInfo {
            name: $name,
            kind: uint(1, 65_535),
            default: "1",
            dynamic: true,
            help: "Semi-synchronous replicas that must acknowledge a transaction before its commit returns.",
            get: |c| Value::Uint(c.rpl_semi_sync_source_wait_for_replica_count),
            set: |c, v| c.rpl_semi_sync_source_wait_for_replica_count = v.as_u64(),
        }
    };
    (wait_point $name:literal) => {
        VarInfo {
            name: $name,
            kind: VarKind::Enum {
                values: &["AFTER_SYNC"],
                aliases: &[],
                unsupported: &[(
                    "AFTER_COMMIT",
                    "quire waits for semi-sync acknowledgements after the binlog sync only (AFTER_SYNC)",
                )],
            },
            default: "AFTER_SYNC",
            dynamic: true,
            help: "Where commits wait for the semi-synchronous acknowledgement: AFTER_SYNC (before the commit is visible).",
            get: |_| Value::Enum("AFTER_SYNC"),
            set: |_, _| {},
        }
    };
}

pub static REGISTRY: &[VarInfo] = &[
    VarInfo {
        name: "activate_all_roles_on_login",
        kind: VarKind::Bool,
        default: "OFF",
        dynamic: true,
        help: "Activate every role granted to an account when it logs in, instead of its default roles (SET DEFAULT ROLE).",
        get: |c| Value::Bool(c.activate_all_roles_on_login),
        set: |c, v| c.activate_all_roles_on_login = v.as_bool(),
    },
    VarInfo {
        name: "auto_generate_certs",
        kind: VarKind::Bool,
        default: "ON",
        dynamic: false,
        help: "Create ca.pem, server-cert.pem and server-key.pem (and client ones) in the data directory on first start when ssl_ca/ssl_cert/ssl_key are not set.",
        get: |c| Value::Bool(c.auto_generate_certs),
        set: |c, v| c.auto_generate_certs = v.as_bool(),
    },
    VarInfo {
        name: "bind_address",
        kind: VarKind::Path { nullable: false },
        default: "127.0.0.1",
        dynamic: false,
        help: "Address quire serve listens on (MySQL's default is *; quire's is loopback).",
        get: |c| Value::Path(Some(std::path::PathBuf::from(&c.bind_address))),
        set: |c, v| {
            if let Some(p) = v.into_path() {
                c.bind_address = p.to_string_lossy().into_owned();
            }
        },
    },
    VarInfo {
        name: "binlog_cache_size",
        kind: bytes(4096, MAX_CACHE_BYTES, 4096),
        default: "32768",
        dynamic: true,
        help: "Bytes of a transaction's binary log events kept in memory; the rest goes to a temporary file (Binlog_cache_disk_use).",
        get: |c| Value::Uint(c.binlog_cache_size),
        set: |c, v| c.binlog_cache_size = v.as_u64(),
    },
    VarInfo {
        name: "binlog_checksum",
        kind: VarKind::Enum {
            values: &["NONE", "CRC32"],
            aliases: &[],
            unsupported: &[],
        },
        default: "CRC32",
        dynamic: true,
        help: "Checksum written with each binary log event.",
        get: |c| Value::Enum(if c.binlog_checksum { "CRC32" } else { "NONE" }),
        set: |c, v| c.binlog_checksum = v.as_name() == "CRC32",
    },
    VarInfo {
        name: "binlog_expire_logs_auto_purge",
        kind: VarKind::Bool,
        default: "ON",
        dynamic: true,
        help: "Whether binary log files older than binlog_expire_logs_seconds are removed automatically.",
        get: |c| Value::Bool(c.binlog_expire_logs_auto_purge),
        set: |c, v| c.binlog_expire_logs_auto_purge = v.as_bool(),
    },
    VarInfo {
        name: "binlog_expire_logs_seconds",
        kind: uint(0, 4_294_967_295),
        default: "2592000",
        dynamic: true,
        help: "Binary log files last written longer ago than this are removed at start-up and after each rotation (0: never).",
        get: |c| Value::Uint(c.binlog_expire_logs_seconds),
        set: |c, v| c.binlog_expire_logs_seconds = v.as_u64(),
    },
    VarInfo {
        name: "binlog_format",
        kind: VarKind::Enum {
            values: &["ROW"],
            aliases: &[],
            unsupported: &[
                ("STATEMENT", "quire writes row-based binary logs only (binlog_format=ROW)"),
                ("MIXED", "quire writes row-based binary logs only (binlog_format=ROW)"),
            ],
        },
        default: "ROW",
        dynamic: true,
        help: "Binary log format; ROW is the only one quire writes.",
        get: |_| Value::Enum("ROW"),
        set: |_, _| {},
    },
    VarInfo {
        name: "binlog_group_commit_sync_delay",
        kind: uint(0, 1_000_000),
        default: "0",
        dynamic: true,
        help: "Microseconds the binary log sync waits to gather more transactions into one fsync.",
        get: |c| Value::Uint(c.binlog_group_commit_sync_delay),
        set: |c, v| c.binlog_group_commit_sync_delay = v.as_u64(),
    },
    VarInfo {
        name: "binlog_group_commit_sync_no_delay_count",
        kind: uint(0, 100_000),
        default: "0",
        dynamic: true,
        help: "Transactions queued that cut binlog_group_commit_sync_delay short (0: no limit).",
        get: |c| Value::Uint(c.binlog_group_commit_sync_no_delay_count),
        set: |c, v| c.binlog_group_commit_sync_no_delay_count = v.as_u64(),
    },
    VarInfo {
        name: "binlog_row_image",
        kind: VarKind::Enum {
            values: &["MINIMAL", "FULL", "NOBLOB"],
            aliases: &[],
            unsupported: &[],
        },
        default: "FULL",
        dynamic: true,
        help: "Columns in the binary log's row images: FULL (all), MINIMAL (the key before, changed columns after), NOBLOB (all but unneeded BLOB/TEXT/JSON).",
        get: |c| Value::Enum(match c.binlog_row_image.as_str() {
            "MINIMAL" => "MINIMAL",
            "NOBLOB" => "NOBLOB",
            _ => "FULL",
        }),
        set: |c, v| c.binlog_row_image = v.as_name().to_string(),
    },
    VarInfo {
        name: "binlog_row_metadata",
        kind: VarKind::Enum {
            values: &["MINIMAL", "FULL"],
            aliases: &[],
            unsupported: &[],
        },
        default: "MINIMAL",
        dynamic: true,
        help: "Table metadata in the binary log's TABLE_MAP events; FULL adds column names, the primary key and ENUM/SET members.",
        get: |c| Value::Enum(if c.binlog_row_metadata_full { "FULL" } else { "MINIMAL" }),
        set: |c, v| c.binlog_row_metadata_full = v.as_name() == "FULL",
    },
    VarInfo {
        name: "caching_sha2_password_auto_generate_rsa_keys",
        kind: VarKind::Bool,
        default: "ON",
        dynamic: false,
        help: "Create private_key.pem/public_key.pem in the data directory on first start (caching_sha2_password over unencrypted TCP).",
        get: |c| Value::Bool(c.caching_sha2_password_auto_generate_rsa_keys),
        set: |c, v| c.caching_sha2_password_auto_generate_rsa_keys = v.as_bool(),
    },
    VarInfo {
        name: "cte_max_recursion_depth",
        kind: uint(0, 4_294_967_295),
        default: "1000",
        dynamic: true,
        help: "Rounds a recursive common table expression may run before it stops with error 3636.",
        get: |c| Value::Uint(c.cte_max_recursion_depth),
        set: |c, v| c.cte_max_recursion_depth = v.as_u64(),
    },
    VarInfo {
        name: "datadir",
        kind: VarKind::Path { nullable: false },
        default: "./quire-data",
        dynamic: false,
        help: "Directory holding all data and log files.",
        get: |c| Value::Path(Some(c.datadir.clone())),
        set: |c, v| {
            if let Some(p) = v.into_path() {
                c.datadir = p;
            }
        },
    },
    VarInfo {
        name: "default_authentication_plugin",
        kind: VarKind::Enum {
            values: &["caching_sha2_password", "mysql_native_password"],
            aliases: &[],
            unsupported: &[("sha256_password", "quire has caching_sha2_password and mysql_native_password")],
        },
        default: "caching_sha2_password",
        dynamic: false,
        help: "Plugin of accounts created without IDENTIFIED WITH, and the one the handshake names.",
        get: |c| Value::Enum(if c.default_authentication_plugin_native { "mysql_native_password" } else { "caching_sha2_password" }),
        set: |c, v| c.default_authentication_plugin_native = v.as_name() == "mysql_native_password",
    },
    VarInfo {
        name: "enforce_gtid_consistency",
        kind: VarKind::Enum {
            values: &["OFF", "ON", "WARN"],
            aliases: &[],
            unsupported: &[],
        },
        default: "OFF",
        dynamic: true,
        help: "Refuse statements that cannot be logged with a GTID (quire has none: all tables are transactional and temporary tables are not logged); gtid_mode=ON needs ON.",
        get: |c| Value::Enum(match c.enforce_gtid_consistency.as_str() {
            "ON" => "ON",
            "WARN" => "WARN",
            _ => "OFF",
        }),
        set: |c, v| c.enforce_gtid_consistency = v.as_name().to_string(),
    },
    VarInfo {
        name: "gtid_mode",
        kind: VarKind::Enum {
            values: &["OFF", "OFF_PERMISSIVE", "ON_PERMISSIVE", "ON"],
            aliases: &[],
            unsupported: &[],
        },
        default: "OFF",
        dynamic: true,
        help: "Whether transactions get GTIDs (ON, ON_PERMISSIVE) or are anonymous (OFF, OFF_PERMISSIVE); SET GLOBAL moves one step at a time.",
        get: |c| Value::Enum(match c.gtid_mode.as_str() {
            "OFF_PERMISSIVE" => "OFF_PERMISSIVE",
            "ON_PERMISSIVE" => "ON_PERMISSIVE",
            "ON" => "ON",
            _ => "OFF",
        }),
        set: |c, v| c.gtid_mode = v.as_name().to_string(),
    },
    VarInfo {
        name: "innodb_adaptive_flushing",
        kind: VarKind::Bool,
        default: "ON",
        dynamic: true,
        help: "Adjust the rate of flushing dirty pages to the rate of redo generation.",
        get: |c| Value::Bool(c.innodb_adaptive_flushing),
        set: |c, v| c.innodb_adaptive_flushing = v.as_bool(),
    },
    VarInfo {
        name: "innodb_adaptive_flushing_lwm",
        // An integer percentage in MySQL (ULONG), stored as f64 in Config.
        kind: uint(0, 70),
        default: "10",
        dynamic: true,
        help: "Percentage of redo log capacity below which adaptive flushing stays off.",
        get: |c| Value::Uint(c.innodb_adaptive_flushing_lwm as u64),
        set: |c, v| c.innodb_adaptive_flushing_lwm = v.as_f64(),
    },
    VarInfo {
        name: "innodb_buffer_pool_size",
        kind: bytes(5 * MIB, u64::MAX, MIB),
        default: "134217728",
        dynamic: true,
        help: "Size in bytes of the buffer pool caching table and index pages.",
        get: |c| Value::Uint(c.innodb_buffer_pool_size),
        set: |c, v| c.innodb_buffer_pool_size = v.as_u64(),
    },
    VarInfo {
        name: "innodb_doublewrite",
        kind: VarKind::Enum {
            values: &["ON", "OFF", "DETECT_ONLY"],
            aliases: &[
                ("DETECT_AND_RECOVER", "ON"),
                ("TRUE", "ON"),
                ("FALSE", "OFF"),
                ("1", "ON"),
                ("0", "OFF"),
            ],
            unsupported: &[],
        },
        default: "ON",
        dynamic: true,
        help: "Write pages to the doublewrite buffer before their home (ON), only detect torn pages (DETECT_ONLY), or not at all (OFF).",
        get: |c| Value::Enum(c.innodb_doublewrite.name()),
        set: |c, v| c.innodb_doublewrite = DoublewriteMode::from_name(v.as_name()).unwrap_or_default(),
    },
    VarInfo {
        name: "innodb_doublewrite_dir",
        kind: VarKind::Path { nullable: true },
        default: "",
        dynamic: false,
        help: "Directory for the doublewrite files (empty: the data directory).",
        get: |c| Value::Path(c.innodb_doublewrite_dir.clone()),
        set: |c, v| c.innodb_doublewrite_dir = v.into_path(),
    },
    VarInfo {
        name: "innodb_doublewrite_files",
        kind: uint(2, 256),
        default: "2",
        dynamic: false,
        help: "Number of doublewrite files.",
        get: |c| Value::Uint(c.innodb_doublewrite_files.into()),
        set: |c, v| c.innodb_doublewrite_files = v.as_u32(),
    },
    VarInfo {
        name: "innodb_doublewrite_pages",
        kind: uint(4, 512),
        default: "4",
        dynamic: false,
        help: "Maximum number of doublewrite pages per thread in one batch.",
        get: |c| Value::Uint(c.innodb_doublewrite_pages.into()),
        set: |c, v| c.innodb_doublewrite_pages = v.as_u32(),
    },
    VarInfo {
        name: "innodb_flush_log_at_timeout",
        kind: uint(1, 2700),
        default: "1",
        dynamic: true,
        help: "Write and flush the redo log every N seconds (with innodb_flush_log_at_trx_commit 0 or 2).",
        get: |c| Value::Uint(c.innodb_flush_log_at_timeout.into()),
        set: |c, v| c.innodb_flush_log_at_timeout = v.as_u32(),
    },
    VarInfo {
        name: "innodb_flush_log_at_trx_commit",
        kind: uint(0, 2),
        default: "1",
        dynamic: true,
        help: "1: write and flush redo at each commit; 2: write at commit, flush once per second; 0: write and flush once per second.",
        get: |c| Value::Uint(c.innodb_flush_log_at_trx_commit.into()),
        set: |c, v| c.innodb_flush_log_at_trx_commit = v.as_u32(),
    },
    VarInfo {
        name: "innodb_flush_method",
        kind: VarKind::Enum {
            values: &["fsync", "O_DSYNC", "O_DIRECT", "O_DIRECT_NO_FSYNC"],
            aliases: &[],
            unsupported: &[
                ("littlesync", "'littlesync' is a MySQL internal testing setting that quire does not support"),
                ("nosync", "'nosync' is a MySQL internal testing setting that quire does not support"),
            ],
        },
        default: "fsync",
        dynamic: false,
        help: "How data and redo log files are opened and flushed.",
        get: |c| Value::Enum(c.innodb_flush_method.name()),
        set: |c, v| c.innodb_flush_method = flush_method_from_name(v.as_name()),
    },
    VarInfo {
        name: "innodb_flush_neighbors",
        kind: uint(0, 2),
        default: "0",
        dynamic: true,
        help: "0: flush only the page; 1: also contiguous dirty neighbors in its extent; 2: any dirty neighbors in its extent.",
        get: |c| Value::Uint(c.innodb_flush_neighbors.into()),
        set: |c, v| c.innodb_flush_neighbors = v.as_u32(),
    },
    VarInfo {
        name: "innodb_io_capacity",
        kind: uint(100, u64::MAX),
        default: "200",
        dynamic: true,
        help: "I/O operations per second available to background flushing.",
        get: |c| Value::Uint(c.innodb_io_capacity),
        set: |c, v| c.innodb_io_capacity = v.as_u64(),
    },
    VarInfo {
        name: "innodb_io_capacity_max",
        kind: uint(100, IO_CAPACITY_MAX_LIMIT),
        default: "2000",
        dynamic: true,
        help: "Upper limit of I/O operations per second when flushing falls behind.",
        get: |c| Value::Uint(c.innodb_io_capacity_max),
        set: |c, v| c.innodb_io_capacity_max = v.as_u64(),
    },
    VarInfo {
        name: "innodb_lock_wait_timeout",
        kind: uint(1, 1_073_741_824),
        default: "50",
        dynamic: true,
        help: "Seconds a transaction waits for a row lock before giving up.",
        get: |c| Value::Uint(c.innodb_lock_wait_timeout),
        set: |c, v| c.innodb_lock_wait_timeout = v.as_u64(),
    },
    VarInfo {
        name: "innodb_log_buffer_size",
        kind: bytes(262_144, 4_294_967_295, 1024),
        default: "16777216",
        dynamic: true,
        help: "Size in bytes of the in-memory redo log buffer.",
        get: |c| Value::Uint(c.innodb_log_buffer_size),
        set: |c, v| c.innodb_log_buffer_size = v.as_u64(),
    },
    VarInfo {
        name: "innodb_log_write_ahead_size",
        kind: pow2_bytes(512, 65_536),
        default: "8192",
        dynamic: true,
        help: "Redo log writes are padded to this block size to avoid read-on-write; at most innodb_page_size.",
        get: |c| Value::Uint(c.innodb_log_write_ahead_size.into()),
        set: |c, v| c.innodb_log_write_ahead_size = v.as_u32(),
    },
    VarInfo {
        name: "innodb_max_dirty_pages_pct",
        kind: VarKind::Float { min: 0.0, max: 99.999 },
        default: "90.000000",
        dynamic: true,
        help: "Percentage of dirty pages in the buffer pool that flushing tries not to exceed.",
        get: |c| Value::Float(c.innodb_max_dirty_pages_pct),
        set: |c, v| c.innodb_max_dirty_pages_pct = v.as_f64(),
    },
    VarInfo {
        name: "innodb_max_dirty_pages_pct_lwm",
        kind: VarKind::Float { min: 0.0, max: 99.999 },
        default: "10.000000",
        dynamic: true,
        help: "Percentage of dirty pages at which preflushing starts (0: disabled).",
        get: |c| Value::Float(c.innodb_max_dirty_pages_pct_lwm),
        set: |c, v| c.innodb_max_dirty_pages_pct_lwm = v.as_f64(),
    },
    VarInfo {
        name: "innodb_page_size",
        kind: pow2_bytes(4096, 65_536),
        default: "16384",
        dynamic: false,
        help: "Page size of all tablespaces; fixed when the data directory is created.",
        get: |c| Value::Uint(c.innodb_page_size.into()),
        set: |c, v| c.innodb_page_size = v.as_u32(),
    },
    VarInfo {
        name: "innodb_redo_log_capacity",
        kind: bytes(8 * MIB, 137_438_953_472, MIB),
        default: "104857600",
        dynamic: true,
        help: "Total size in bytes of the redo log files.",
        get: |c| Value::Uint(c.innodb_redo_log_capacity),
        set: |c, v| c.innodb_redo_log_capacity = v.as_u64(),
    },
    VarInfo {
        name: "innodb_sort_buffer_size",
        kind: bytes(65_536, 67_108_864, 1),
        default: "1048576",
        dynamic: false,
        help: "Bytes of keys CREATE INDEX sorts in memory before writing a sorted run to a temporary file.",
        get: |c| Value::Uint(c.innodb_sort_buffer_size),
        set: |c, v| c.innodb_sort_buffer_size = v.as_u64(),
    },
    VarInfo {
        name: "innodb_stats_auto_recalc",
        kind: VarKind::Bool,
        default: "ON",
        dynamic: true,
        help: "Recalculate a table's persistent statistics in the background once more than 10% of its rows changed.",
        get: |c| Value::Bool(c.innodb_stats_auto_recalc),
        set: |c, v| c.innodb_stats_auto_recalc = v.as_bool(),
    },
    VarInfo {
        name: "innodb_stats_persistent",
        kind: VarKind::Bool,
        default: "ON",
        dynamic: true,
        help: "Store the optimizer statistics ANALYZE TABLE computes durably (OFF: in memory only).",
        get: |c| Value::Bool(c.innodb_stats_persistent),
        set: |c, v| c.innodb_stats_persistent = v.as_bool(),
    },
    VarInfo {
        name: "innodb_stats_persistent_sample_pages",
        kind: uint(1, u64::MAX),
        default: "20",
        dynamic: true,
        help: "Leaf pages ANALYZE TABLE samples per index.",
        get: |c| Value::Uint(c.innodb_stats_persistent_sample_pages),
        set: |c, v| c.innodb_stats_persistent_sample_pages = v.as_u64(),
    },
    VarInfo {
        name: "innodb_use_fdatasync",
        kind: VarKind::Bool,
        default: "OFF",
        dynamic: true,
        help: "Use fdatasync() instead of fsync() where the flush method calls for a sync.",
        get: |c| Value::Bool(c.innodb_use_fdatasync),
        set: |c, v| c.innodb_use_fdatasync = v.as_bool(),
    },
    VarInfo {
        name: "join_buffer_size",
        kind: bytes(128, 18_446_744_073_709_547_520, 128),
        default: "262144",
        dynamic: true,
        help: "Bytes of the buffer of a join without an index (no operator uses one yet).",
        get: |c| Value::Uint(c.join_buffer_size),
        set: |c, v| c.join_buffer_size = v.as_u64(),
    },
    VarInfo {
        name: "lock_wait_timeout",
        kind: uint(1, 31_536_000),
        default: "31536000",
        dynamic: true,
        help: "Seconds a statement waits for a metadata lock (DDL and the open writers of its table).",
        get: |c| Value::Uint(c.lock_wait_timeout),
        set: |c, v| c.lock_wait_timeout = v.as_u64(),
    },
    VarInfo {
        name: "log_bin",
        kind: VarKind::Bool,
        default: "ON",
        dynamic: false,
        help: "Write the binary log (MySQL 8.0 default ON; --skip-log-bin or log_bin=OFF disables it).",
        get: |c| Value::Bool(c.log_bin),
        set: |c, v| c.log_bin = v.as_bool(),
    },
    VarInfo {
        name: "log_bin_basename",
        kind: VarKind::Path { nullable: true },
        default: "",
        dynamic: false,
        help: "Path and base name of the binary log files (empty: DATADIR/binlog).",
        get: |c| Value::Path(c.log_bin_basename.clone()),
        set: |c, v| c.log_bin_basename = v.into_path(),
    },
    VarInfo {
        name: "max_allowed_packet",
        kind: bytes(1024, 1_073_741_824, 1024),
        default: "67108864",
        dynamic: true,
        help: "Largest packet or statement a client may send.",
        get: |c| Value::Uint(c.max_allowed_packet),
        set: |c, v| c.max_allowed_packet = v.as_u64(),
    },
    VarInfo {
        name: "max_binlog_cache_size",
        kind: bytes(4096, MAX_CACHE_BYTES, 4096),
        default: "18446744073709547520",
        dynamic: true,
        help: "A transaction whose binary log events need more bytes fails with error 1197.",
        get: |c| Value::Uint(c.max_binlog_cache_size),
        set: |c, v| c.max_binlog_cache_size = v.as_u64(),
    },
    VarInfo {
        name: "max_binlog_size",
        kind: bytes(4096, 1_073_741_824, 4096),
        default: "1073741824",
        dynamic: true,
        help: "The binary log rotates to a new file after a transaction that takes it past this size.",
        get: |c| Value::Uint(c.max_binlog_size),
        set: |c, v| c.max_binlog_size = v.as_u64(),
    },
    VarInfo {
        name: "max_connect_errors",
        kind: uint(1, u64::MAX),
        default: "100",
        dynamic: true,
        help: "Interrupted connection attempts from one host before it is blocked (error 1129; FLUSH HOSTS unblocks).",
        get: |c| Value::Uint(c.max_connect_errors),
        set: |c, v| c.max_connect_errors = v.as_u64(),
    },
    VarInfo {
        name: "max_connections",
        kind: uint(1, 100_000),
        default: "151",
        dynamic: true,
        help: "Client connections served at once (one more gets error 1040).",
        get: |c| Value::Uint(c.max_connections.into()),
        set: |c, v| c.max_connections = v.as_u32(),
    },
    VarInfo {
        name: "max_heap_table_size",
        kind: bytes(16_384, 1_844_674_407_370_954_752, 1024),
        default: "16777216",
        dynamic: true,
        help: "Largest in-memory temporary table, in bytes; with tmp_table_size (the smaller wins) the hash tables of GROUP BY, DISTINCT and set operations spill to disk beyond it.",
        get: |c| Value::Uint(c.max_heap_table_size),
        set: |c, v| c.max_heap_table_size = v.as_u64(),
    },
    VarInfo {
        name: "max_user_connections",
        kind: uint(0, u32::MAX as u64),
        default: "0",
        dynamic: true,
        help: "Connections one account may have open at once (0 = no limit; error 1203).",
        get: |c| Value::Uint(c.max_user_connections.into()),
        set: |c, v| c.max_user_connections = v.as_u32(),
    },
    VarInfo {
        name: "port",
        kind: uint(0, 65_535),
        default: "3306",
        dynamic: false,
        help: "TCP port quire serve listens on.",
        get: |c| Value::Uint(c.port.into()),
        set: |c, v| c.port = v.as_u32() as u16,
    },
    VarInfo {
        name: "quire_prepare_flush",
        kind: VarKind::Enum {
            values: &["GROUP", "PER_TRANSACTION"],
            aliases: &[],
            unsupported: &[],
        },
        default: "GROUP",
        dynamic: true,
        help: "GROUP: the binlog flush-stage leader flushes the redo of its whole group once (MySQL 5.7.6+); PER_TRANSACTION: each transaction flushes its own redo at prepare (MySQL before 5.7.6), to measure the difference.",
        get: |c| Value::Enum(if c.quire_prepare_flush_per_trx { "PER_TRANSACTION" } else { "GROUP" }),
        set: |c, v| c.quire_prepare_flush_per_trx = v.as_name() == "PER_TRANSACTION",
    },
    VarInfo {
        name: "require_secure_transport",
        kind: VarKind::Bool,
        default: "OFF",
        dynamic: true,
        help: "Refuse TCP connections without TLS (error 3159); the Unix socket counts as secure.",
        get: |c| Value::Bool(c.require_secure_transport),
        set: |c, v| c.require_secure_transport = v.as_bool(),
    },
    semi_sync_var!(enabled "rpl_semi_sync_master_enabled"),
    semi_sync_var!(timeout "rpl_semi_sync_master_timeout"),
    semi_sync_var!(count "rpl_semi_sync_master_wait_for_slave_count"),
    semi_sync_var!(wait_point "rpl_semi_sync_master_wait_point"),
    semi_sync_var!(enabled "rpl_semi_sync_source_enabled"),
    semi_sync_var!(timeout "rpl_semi_sync_source_timeout"),
    semi_sync_var!(count "rpl_semi_sync_source_wait_for_replica_count"),
    semi_sync_var!(wait_point "rpl_semi_sync_source_wait_point"),
    VarInfo {
        name: "server_id",
        kind: uint(0, 4_294_967_295),
        default: "1",
        dynamic: true,
        help: "Server id written into every binary log event.",
        get: |c| Value::Uint(c.server_id.into()),
        set: |c, v| c.server_id = v.as_u32(),
    },
    VarInfo {
        name: "skip_replica_start",
        kind: VarKind::Bool,
        default: "OFF",
        dynamic: false,
        help: "Do not start the replication channel when quire serve starts (START REPLICA does).",
        get: |c| Value::Bool(c.skip_replica_start),
        set: |c, v| c.skip_replica_start = v.as_bool(),
    },
    VarInfo {
        name: "socket",
        kind: VarKind::Path { nullable: true },
        default: "",
        dynamic: false,
        help: "Unix socket file quire serve also listens on (empty: none).",
        get: |c| Value::Path(c.socket.clone()),
        set: |c, v| c.socket = v.into_path(),
    },
    VarInfo {
        name: "sort_buffer_size",
        kind: bytes(32_768, u64::MAX, 1),
        default: "262144",
        dynamic: true,
        help: "Bytes of rows an ORDER BY sorts in memory; beyond, sorted runs go to temporary files and are merged.",
        get: |c| Value::Uint(c.sort_buffer_size),
        set: |c, v| c.sort_buffer_size = v.as_u64(),
    },
    VarInfo {
        name: "ssl_ca",
        kind: VarKind::Path { nullable: true },
        default: "",
        dynamic: false,
        help: "CA certificate (PEM) that client certificates are verified against (empty: DATADIR/ca.pem when generated).",
        get: |c| Value::Path(c.ssl_ca.clone()),
        set: |c, v| c.ssl_ca = v.into_path(),
    },
    VarInfo {
        name: "ssl_cert",
        kind: VarKind::Path { nullable: true },
        default: "",
        dynamic: false,
        help: "Server certificate (PEM) (empty: DATADIR/server-cert.pem).",
        get: |c| Value::Path(c.ssl_cert.clone()),
        set: |c, v| c.ssl_cert = v.into_path(),
    },
    VarInfo {
        name: "ssl_key",
        kind: VarKind::Path { nullable: true },
        default: "",
        dynamic: false,
        help: "Server private key (PEM) (empty: DATADIR/server-key.pem).",
        get: |c| Value::Path(c.ssl_key.clone()),
        set: |c, v| c.ssl_key = v.into_path(),
    },
    VarInfo {
        name: "sync_binlog",
        kind: uint(0, 4_294_967_295),
        default: "1",
        dynamic: true,
        help: "0: never fsync the binary log (quire: at most once a second in the background); N: fsync every N commit groups.",
        get: |c| Value::Uint(c.sync_binlog.into()),
        set: |c, v| c.sync_binlog = v.as_u32(),
    },
    VarInfo {
        name: "thread_stack",
        kind: bytes(131_072, 1 << 30, 1024),
        default: "8388608",
        dynamic: false,
        help: "Stack size of each connection thread (MySQL's default is 1M; quire's SQL layer gets 8M).",
        get: |c| Value::Uint(c.thread_stack),
        set: |c, v| c.thread_stack = v.as_u64(),
    },
    VarInfo {
        name: "tls_version",
        kind: VarKind::Path { nullable: false },
        default: "TLSv1.2,TLSv1.3",
        dynamic: false,
        help: "TLS protocol versions offered (comma-separated; empty = no TLS).",
        get: |c| Value::Path(Some(std::path::PathBuf::from(&c.tls_version))),
        set: |c, v| {
            if let Some(p) = v.into_path() {
                c.tls_version = p.to_string_lossy().into_owned();
            }
        },
    },
    VarInfo {
        name: "tmp_table_size",
        kind: bytes(1024, u64::MAX, 1),
        default: "16777216",
        dynamic: true,
        help: "Largest in-memory temporary table, in bytes (see max_heap_table_size).",
        get: |c| Value::Uint(c.tmp_table_size),
        set: |c, v| c.tmp_table_size = v.as_u64(),
    },
    VarInfo {
        name: "wait_timeout",
        kind: uint(1, 31_536_000),
        default: "28800",
        dynamic: true,
        help: "Seconds an idle connection is kept before the server closes it.",
        get: |c| Value::Uint(c.wait_timeout),
        set: |c, v| c.wait_timeout = v.as_u64(),
    },
];

/// Lower-cases `name` and turns `-` into `_`: `Innodb-Page-Size` →
/// `innodb_page_size`.
pub(crate) fn normalize_name(name: &str) -> String {
    name.trim()
        .chars()
        .map(|c| {
            if c == '-' {
                '_'
            } else {
                c.to_ascii_lowercase()
            }
        })
        .collect()
}

/// The metadata of variable `name` (`-` or `_`, any case), if it exists.
pub fn var_info(name: &str) -> Option<&'static VarInfo> {
    let name = normalize_name(name);
    REGISTRY.iter().find(|v| v.name == name)
}

/// All variables, sorted by name.
pub fn registry() -> &'static [VarInfo] {
    REGISTRY
}

impl VarInfo {
    pub(crate) fn get_value(&self, config: &Config) -> Value {
        (self.get)(config)
    }

    /// Parses and range-checks `raw` for this variable, then stores it.
    pub(crate) fn apply(&self, config: &mut Config, raw: &str) -> Result<(), ConfigError> {
        let value = self.parse(raw)?;
        self.check(&value, raw)?;
        (self.set)(config, value);
        Ok(())
    }

    fn wrong_value(&self, raw: &str, reason: String) -> ConfigError {
        ConfigError::WrongValue {
            name: self.name.to_string(),
            value: raw.to_string(),
            reason,
        }
    }

    fn wrong_type(&self, raw: &str, expected: &'static str) -> ConfigError {
        ConfigError::WrongType {
            name: self.name.to_string(),
            value: raw.to_string(),
            expected,
        }
    }

    /// Turns the user's string into a value of this variable's type,
    /// without range checks.
    fn parse(&self, raw: &str) -> Result<Value, ConfigError> {
        let s = raw.trim();
        match &self.kind {
            VarKind::Bool => parse_bool(s)
                .map(Value::Bool)
                .ok_or_else(|| self.wrong_value(raw, self.allowed())),
            VarKind::Uint { size, .. } => match parse_size(s) {
                Ok(n) => Ok(Value::Uint(n)),
                Err(ParseSizeError::Overflow(_)) => Err(self.wrong_value(raw, self.allowed())),
                Err(_) if is_negative_integer(s) => Err(self.wrong_value(raw, self.allowed())),
                Err(_) if *size => Err(self.wrong_type(raw, "a size such as 1048576, 1024K or 1M")),
                Err(_) => Err(self.wrong_type(raw, "an unsigned integer")),
            },
            VarKind::Float { .. } => match s.parse::<f64>() {
                Ok(x) if x.is_finite() => Ok(Value::Float(x)),
                _ => Err(self.wrong_type(raw, "a number")),
            },
            VarKind::Enum { unsupported, .. } => {
                if let Some(name) = parse_enum_name(&self.kind, s) {
                    return Ok(Value::Enum(name));
                }
                if let Some((_, why)) = unsupported.iter().find(|(u, _)| u.eq_ignore_ascii_case(s))
                {
                    return Err(self.wrong_value(raw, format!("{why}; {}", self.allowed())));
                }
                Err(self.wrong_value(raw, self.allowed()))
            }
            VarKind::Path { nullable } => {
                if s.is_empty() {
                    if *nullable {
                        Ok(Value::Path(None))
                    } else {
                        Err(self.wrong_value(raw, "the path must not be empty".to_string()))
                    }
                } else {
                    Ok(Value::Path(Some(PathBuf::from(s))))
                }
            }
        }
    }

    /// Checks a typed value against this variable's range. `raw` is what
    /// the error message quotes.
    pub(crate) fn check(&self, value: &Value, raw: &str) -> Result<(), ConfigError> {
        match (&self.kind, value) {
            (
                VarKind::Uint {
                    min,
                    max,
                    size,
                    multiple_of,
                    power_of_two,
                },
                Value::Uint(n),
            ) => {
                if n < min || n > max || (*power_of_two && !n.is_power_of_two()) {
                    return Err(self.wrong_value(raw, self.allowed()));
                }
                if *multiple_of > 1 && !n.is_multiple_of(*multiple_of) {
                    return Err(self.wrong_value(
                        raw,
                        format!(
                            "the value must be a multiple of {}",
                            show_num(*multiple_of, *size)
                        ),
                    ));
                }
                Ok(())
            }
            (VarKind::Float { min, max }, Value::Float(x)) => {
                if x.is_finite() && x >= min && x <= max {
                    Ok(())
                } else {
                    Err(self.wrong_value(raw, self.allowed()))
                }
            }
            (VarKind::Path { nullable: false }, Value::Path(p)) => match p {
                Some(p) if !p.as_os_str().is_empty() => Ok(()),
                _ => Err(self.wrong_value(raw, "the path must not be empty".to_string())),
            },
            _ => Ok(()),
        }
    }

    /// What this variable accepts, for error messages:
    /// `allowed range is 5242880 (5M) .. 18446744073709551615`.
    pub fn allowed(&self) -> String {
        match &self.kind {
            VarKind::Bool => "allowed values are ON, OFF (also TRUE, FALSE, 1, 0)".to_string(),
            VarKind::Uint {
                min,
                max,
                size,
                power_of_two,
                ..
            } => {
                if *power_of_two {
                    format!(
                        "allowed values are powers of 2 from {} to {}",
                        show_num(*min, *size),
                        show_num(*max, *size)
                    )
                } else {
                    format!(
                        "allowed range is {} .. {}",
                        show_num(*min, *size),
                        show_num(*max, *size)
                    )
                }
            }
            VarKind::Float { min, max } => format!("allowed range is {min} .. {max}"),
            VarKind::Enum {
                values, aliases, ..
            } => {
                let mut s = format!("allowed values are {}", values.join(", "));
                if !aliases.is_empty() {
                    let names: Vec<&str> = aliases.iter().map(|(a, _)| *a).collect();
                    s.push_str(&format!(" (also {})", names.join(", ")));
                }
                s
            }
            VarKind::Path { nullable: true } => {
                "allowed values are a directory path, or empty".to_string()
            }
            VarKind::Path { nullable: false } => {
                "allowed values are a non-empty directory path".to_string()
            }
        }
    }
}

/// `5242880 (5M)` for sizes with an exact suffix, else plain digits.
fn show_num(n: u64, size: bool) -> String {
    let short = format_size(n);
    if size && short != n.to_string() {
        format!("{n} ({short})")
    } else {
        n.to_string()
    }
}

/// `-5`, `-1M`: a number, but below zero.
fn is_negative_integer(s: &str) -> bool {
    s.strip_prefix('-').is_some_and(|d| {
        !matches!(
            parse_size(d),
            Err(ParseSizeError::Empty | ParseSizeError::Invalid(_))
        )
    })
}

/// ON, OFF, TRUE, FALSE, 1, 0 in any case.
pub(crate) fn parse_bool(s: &str) -> Option<bool> {
    const TRUE: [&str; 3] = ["ON", "TRUE", "1"];
    const FALSE: [&str; 3] = ["OFF", "FALSE", "0"];
    if TRUE.iter().any(|t| t.eq_ignore_ascii_case(s)) {
        Some(true)
    } else if FALSE.iter().any(|f| f.eq_ignore_ascii_case(s)) {
        Some(false)
    } else {
        None
    }
}

/// The canonical name of `s` for an enum kind (values, then aliases).
fn parse_enum_name(kind: &VarKind, s: &str) -> Option<&'static str> {
    let VarKind::Enum {
        values, aliases, ..
    } = kind
    else {
        return None;
    };
    values
        .iter()
        .find(|v| v.eq_ignore_ascii_case(s))
        .copied()
        .or_else(|| {
            aliases
                .iter()
                .find(|(a, _)| a.eq_ignore_ascii_case(s))
                .map(|(_, canonical)| *canonical)
        })
}
