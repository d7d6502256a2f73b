//! The `sql` target: the SQL front end (`quire_sql::Session::execute`,
//! `prepare`, `execute_prepared`) on a real engine.
//!
//! One engine per process, on an in-memory `SimFs` (buffer pool 8M, redo
//! 8M, log_bin OFF, datadir `/fuzz`), with database `fz` and tables `t1`
//! (sysbench's `sbtest` layout) and `t2` (one column of most types) holding
//! a few rows. Every input gets a fresh session on `fz` that is closed
//! (open transaction rolled back) at the end; the schema is re-created if an
//! input dropped it. The engine is replaced by a fresh one every
//! `QUIRE_FUZZ_RESET` inputs (default 1000) so the data stays small.
//!
//! The first input byte picks how the rest is read:
//! * `0..=63`: raw text (lossy UTF-8), cut into statements by the server's
//!   multi-statement splitter;
//! * `64..=127`: token soup: each byte picks a keyword, identifier, literal
//!   or operator;
//! * `128..=255`: grammar: 1..=6 generated statements (SELECT with joins,
//!   GROUP BY, subqueries; INSERT/REPLACE/ON DUPLICATE KEY; UPDATE; DELETE;
//!   transactions; SET; SHOW; DDL on scratch tables; ...).
//!
//! Each statement is either executed, or prepared (when it has `?`
//! markers they are bound to generated values) and executed.
//!
//! Errors are fine; a panic, a hang or unbounded memory is a finding.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use quire_config::Config;
use quire_engine::types::{Date, DateTime, Decimal};
use quire_engine::{Engine, Value};
use quire_io::{FlushMethod, SimFs, Vfs};
use quire_sql::{Output, Session};

use crate::input::Input;
use crate::known::guarded;

const SCHEMA: &[&str] = &[
    "CREATE DATABASE IF NOT EXISTS fz",
    "CREATE TABLE IF NOT EXISTS fz.t1 (id INT NOT NULL AUTO_INCREMENT, k INT NOT NULL DEFAULT 0, \
     c CHAR(120) NOT NULL DEFAULT '', pad CHAR(60) NOT NULL DEFAULT '', PRIMARY KEY (id), \
     KEY k_1 (k)) ENGINE=InnoDB",
    "CREATE TABLE IF NOT EXISTS fz.t2 (a BIGINT UNSIGNED NOT NULL, b VARCHAR(20), \
     d DECIMAL(10,3), f DOUBLE, fl FLOAT, dt DATETIME(6), ts TIMESTAMP NULL, dd DATE, bl BLOB, \
     tx TEXT, ti TINYINT, si SMALLINT UNSIGNED, vb VARBINARY(8), PRIMARY KEY (a), \
     UNIQUE KEY ub (b), KEY kd (d, dd))",
];

const SEED_ROWS: &[&str] = &[
    "INSERT INTO fz.t1 (k, c, pad) VALUES (5, 'aaa-bbb', 'p1'), (3, 'ccc', 'p2'), \
     (5, '', 'p3'), (-7, 'x%y_z', 'p4'), (2147483647, 'zzz', ''), (0, 'NULL', 'p6')",
    "INSERT INTO fz.t2 VALUES (1, 'one', 1.5, 1e10, 0.25, '2024-02-29 12:34:56.123456', \
     '2001-01-01 00:00:00', '2024-02-29', X'00FF', 'text', -128, 65535, 'vb'), \
     (18446744073709551615, 'max', -9999999.999, -0.0, NULL, '9999-12-31 23:59:59', NULL, \
     '1000-01-01', '', '', 127, 0, NULL), \
     (2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)",
];

struct State {
    engine: Engine,
    inputs: u64,
    reset_every: u64,
    vars: Vec<String>,
}

fn open_engine() -> Engine {
    let cfg = Config {
        datadir: "/fuzz".into(),
        innodb_buffer_pool_size: 8 << 20,
        innodb_redo_log_capacity: 8 << 20,
        innodb_flush_method: FlushMethod::Fsync,
        log_bin: false,
        ..Config::default()
    };
    let vfs: Arc<dyn Vfs> = Arc::new(SimFs::new(FlushMethod::Fsync));
    let (engine, _) = Engine::open(vfs, &cfg).expect("open engine on SimFs");
    let mut s = Session::new(engine.clone(), "root");
    for sql in SCHEMA.iter().chain(SEED_ROWS) {
        s.execute(sql)
            .unwrap_or_else(|e| panic!("fuzz set-up `{sql}` failed: {e:?}"));
    }
    s.close();
    engine
}

fn state() -> &'static Mutex<State> {
    static STATE: OnceLock<Mutex<State>> = OnceLock::new();
    STATE.get_or_init(|| {
        let engine = open_engine();
        let vars = engine
            .config()
            .variables()
            .map(|(k, _)| k.to_string())
            .collect();
        let reset_every = std::env::var("QUIRE_FUZZ_RESET")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(1000);
        Mutex::new(State {
            engine,
            inputs: 0,
            reset_every,
            vars,
        })
    })
}

/// A fresh engine with the fuzz schema (for reproducing findings).
pub fn engine_for_repro() -> Engine {
    open_engine()
}

/// Opens the process's engine now (so its cost is not charged to the
/// first input).
pub fn init() {
    let _ = state();
}

pub fn run(data: &[u8]) {
    let mut st = state().lock().unwrap_or_else(|p| p.into_inner());
    st.inputs += 1;
    if st.inputs.is_power_of_two() || st.inputs.is_multiple_of(100_000) {
        eprintln!(
            "quire-fuzz sql: {} inputs, {} statements ok, {} failed, {} known panics",
            st.inputs,
            OK.load(Ordering::Relaxed),
            ERR.load(Ordering::Relaxed),
            crate::known::KNOWN_PANICS.load(Ordering::Relaxed)
        );
    }
    if st.reset_every > 0 && st.inputs.is_multiple_of(st.reset_every) {
        let _ = st.engine.close(false);
        st.engine = open_engine();
    }
    let mut session = Session::new(st.engine.clone(), "root");
    // An earlier input may have dropped the schema: put it back.
    for sql in SCHEMA {
        let _ = guarded(|| session.execute(sql));
    }
    let _ = session.use_db("fz");
    let mut input = Input::new(data);
    let mode = input.u8();
    let statements: Vec<String> = match mode {
        0..=63 => {
            let text = String::from_utf8_lossy(input.rest()).into_owned();
            // Mode bit 0: whole text as one statement, else split.
            if mode & 1 == 0 {
                vec![text]
            } else {
                quire_server::split_statements(&text)
                    .into_iter()
                    .map(str::to_string)
                    .collect()
            }
        }
        64..=127 => vec![token_soup(&mut input)],
        _ => {
            let mut g = Gen {
                i: &mut input,
                vars: &st.vars,
                depth: 0,
                params: false,
            };
            g.params = mode & 2 != 0;
            let n = 1 + g.i.below(6);
            let mut v = Vec::new();
            for _ in 0..n {
                v.push(g.statement());
                if g.i.is_empty() {
                    break;
                }
            }
            v
        }
    };
    let prepared = mode & 2 != 0;
    for sql in statements.iter().take(16) {
        exec_one(&mut session, sql, prepared, &mut input);
    }
    // Also check the table is still usable after whatever happened.
    let _ = guarded(|| session.execute("SELECT COUNT(*) FROM t1 WHERE id > 0"));
    let _ = guarded(|| session.close());
    drop(session);
    drop(st);
}

fn verbose() -> bool {
    static V: OnceLock<bool> = OnceLock::new();
    *V.get_or_init(|| std::env::var("QUIRE_FUZZ_VERBOSE").is_ok_and(|v| v == "1"))
}

fn exec_one(s: &mut Session, sql: &str, prepared: bool, input: &mut Input<'_>) {
    if verbose() {
        eprintln!("SQL: {sql}");
    }
    if !prepared || input.chance(1, 4) {
        if let Some(r) = guarded(|| s.execute(sql)) {
            check_output(r);
        }
        return;
    }
    match guarded(|| s.prepare(sql)) {
        None => {}
        Some(Ok(info)) => {
            for _ in 0..1 + input.below(2) {
                let mut n = info.params;
                if input.chance(1, 16) {
                    n = input.below(4); // wrong count: must be error 1210
                }
                let params = (0..n).map(|_| value(input)).collect();
                if let Some(r) = guarded(|| s.execute_prepared(info.id, params)) {
                    check_output(r);
                }
            }
            if input.chance(1, 2) {
                let _ = s.reset_prepared(info.id);
            }
            s.close_prepared(info.id);
        }
        Some(Err(_)) => {
            let _ = guarded(|| s.execute(sql));
        }
    }
}

/// Statements that succeeded / failed so far in this process (for the
/// smoke test and for judging how deep the generator gets).
pub static OK: AtomicU64 = AtomicU64::new(0);
pub static ERR: AtomicU64 = AtomicU64::new(0);

fn check_output(r: quire_sql::SqlResult<Output>) {
    if verbose() {
        match &r {
            Ok(Output::Rows { rows, .. }) => eprintln!("  -> {} rows", rows.len()),
            Ok(Output::Streamed { rows }) => eprintln!("  -> {rows} rows streamed"),
            Ok(Output::Done { affected_rows, .. }) => {
                eprintln!("  -> ok, {affected_rows} affected")
            }
            Err(e) => eprintln!("  -> {e}"),
        }
    }
    if r.is_ok() {
        OK.fetch_add(1, Ordering::Relaxed);
    } else {
        ERR.fetch_add(1, Ordering::Relaxed);
    }
    if let Ok(Output::Rows { columns, rows }) = r {
        for row in &rows {
            assert_eq!(row.len(), columns.len(), "row width != column count");
        }
    }
}

/// A bound parameter value.
fn value(i: &mut Input<'_>) -> Value {
    match i.below(12) {
        0 => Value::Null,
        1 => Value::Int(*i.pick(&[0, 1, -1, i64::MIN, i64::MAX, 127, -128, 255, 65535])),
        2 => Value::Int(i.u64() as i64),
        3 => Value::UInt(*i.pick(&[0, u64::MAX, 1 << 63, 4294967295])),
        4 => Value::Double(*i.pick(&[
            0.0,
            -0.0,
            1.5,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::MAX,
            f64::MIN_POSITIVE,
            1e-300,
        ])),
        5 => Value::Double(f64::from_bits(i.u64())),
        6 => Value::Bytes(i.bytes(40).to_vec()),
        7 => Value::text(i.pick::<&str>(&[
            "",
            "abc",
            "1",
            "-5",
            "1e3",
            "2024-01-01",
            "0x10",
            "%",
            "NULL",
        ])),
        8 => Date::new(
            u32::from(i.u16() % 10000),
            u32::from(i.u8() % 13),
            u32::from(i.u8() % 32),
        )
        .map(Value::Date)
        .unwrap_or(Value::Null),
        9 => DateTime::new(
            u32::from(i.u16() % 10000),
            u32::from(i.u8() % 13),
            u32::from(i.u8() % 32),
            u32::from(i.u8() % 24),
            u32::from(i.u8() % 60),
            u32::from(i.u8() % 60),
            i.u32() % 1_000_000,
        )
        .map(Value::DateTime)
        .unwrap_or(Value::Null),
        10 => Value::Decimal(Decimal::from_mantissa(
            i128::from(i.u64() as i64) * i128::from(i.u16()),
            i.u8() % 31,
        )),
        _ => Value::Float(f32::from_bits(i.u32())),
    }
}

// ------------------------------------------------------------ token soup

const TOKENS: &[&str] = &[
    "SELECT",
    "FROM",
    "WHERE",
    "AND",
    "OR",
    "NOT",
    "XOR",
    "IN",
    "IS",
    "NULL",
    "LIKE",
    "BETWEEN",
    "INSERT",
    "INTO",
    "VALUES",
    "VALUE",
    "REPLACE",
    "UPDATE",
    "SET",
    "DELETE",
    "ON",
    "DUPLICATE",
    "KEY",
    "ORDER",
    "BY",
    "GROUP",
    "HAVING",
    "LIMIT",
    "OFFSET",
    "ASC",
    "DESC",
    "DISTINCT",
    "AS",
    "JOIN",
    "LEFT",
    "RIGHT",
    "INNER",
    "CROSS",
    "USING",
    "UNION",
    "ALL",
    "FOR",
    "LOCK",
    "SHARE",
    "MODE",
    "CREATE",
    "DROP",
    "TABLE",
    "DATABASE",
    "INDEX",
    "UNIQUE",
    "PRIMARY",
    "IF",
    "EXISTS",
    "TRUNCATE",
    "SHOW",
    "TABLES",
    "STATUS",
    "VARIABLES",
    "GLOBAL",
    "SESSION",
    "DESCRIBE",
    "USE",
    "BEGIN",
    "COMMIT",
    "ROLLBACK",
    "START",
    "TRANSACTION",
    "ISOLATION",
    "LEVEL",
    "READ",
    "COMMITTED",
    "REPEATABLE",
    "SERIALIZABLE",
    "ONLY",
    "WRITE",
    "CASE",
    "WHEN",
    "THEN",
    "ELSE",
    "END",
    "CAST",
    "CONVERT",
    "INTERVAL",
    "DIV",
    "MOD",
    "DEFAULT",
    "AUTO_INCREMENT",
    "ENGINE",
    "INT",
    "BIGINT",
    "UNSIGNED",
    "VARCHAR(10)",
    "CHAR(3)",
    "DECIMAL(5,2)",
    "DOUBLE",
    "DATE",
    "DATETIME",
    "TIMESTAMP",
    "BLOB",
    "TEXT",
    "ENGINE=InnoDB",
    "COUNT(*)",
    "SUM(",
    "MIN(",
    "MAX(",
    "AVG(",
    "CONCAT(",
    "COALESCE(",
    "IFNULL(",
    "LAST_INSERT_ID()",
    "NOW()",
    "DATABASE()",
    "SUBSTRING(",
    "LENGTH(",
    "ROUND(",
    "REPEAT(",
    "LPAD(",
    "GROUP_CONCAT(",
    "@@version_comment",
    "@@autocommit",
    "@@session.transaction_isolation",
    "@x",
    "@@global.sync_binlog",
    "t1",
    "t2",
    "fz.t1",
    "t3",
    "id",
    "k",
    "c",
    "pad",
    "a",
    "b",
    "d",
    "f",
    "dt",
    "dd",
    "bl",
    "ti",
    "t1.id",
    "x",
    "`id`",
    "`weird name`",
    "(",
    ")",
    "(",
    ")",
    ",",
    ",",
    ";",
    ".",
    "*",
    "+",
    "-",
    "/",
    "%",
    "=",
    "<>",
    "!=",
    "<",
    "<=",
    ">",
    ">=",
    "<=>",
    "&",
    "|",
    "^",
    "~",
    "<<",
    ">>",
    "!",
    "&&",
    "||",
    ":=",
    "?",
    "?",
    "0",
    "1",
    "-1",
    "42",
    "2147483648",
    "9223372036854775807",
    "-9223372036854775808",
    "18446744073709551615",
    "18446744073709551616",
    "1.5",
    ".5e-3",
    "1e308",
    "1e309",
    "0x41",
    "X'4142'",
    "b'101'",
    "'abc'",
    "''",
    "'it''s'",
    "'\\\\'",
    "'%'",
    "'2024-02-29'",
    "'0000-00-00 00:00:00'",
    "\"dq\"",
    "TRUE",
    "FALSE",
    "N'x'",
    "_utf8mb4'x'",
    "/*",
    "*/",
    "-- ",
    "#",
    "\n",
    "'",
    "\"",
    "`",
    "\\",
];

fn token_soup(i: &mut Input<'_>) -> String {
    let mut s = String::new();
    while !i.is_empty() && s.len() < 4096 {
        let b = i.u8();
        if b == 0xFF {
            // A raw character.
            s.push(char::from(i.u8()));
        } else {
            s.push_str(TOKENS[usize::from(b) % TOKENS.len()]);
        }
        if i.u8() & 3 != 0 {
            s.push(' ');
        }
    }
    s
}

// ------------------------------------------------------------ grammar

const T1_COLS: &[&str] = &["id", "k", "c", "pad"];
const T2_COLS: &[&str] = &[
    "a", "b", "d", "f", "fl", "dt", "ts", "dd", "bl", "tx", "ti", "si", "vb",
];
const TYPES: &[&str] = &[
    "INT",
    "INT UNSIGNED",
    "TINYINT",
    "SMALLINT",
    "MEDIUMINT",
    "BIGINT",
    "BIGINT UNSIGNED",
    "DECIMAL(10,2)",
    "DECIMAL(65,30)",
    "DECIMAL(1,0)",
    "FLOAT",
    "DOUBLE",
    "CHAR(1)",
    "CHAR(255)",
    "VARCHAR(1)",
    "VARCHAR(300)",
    "TEXT",
    "TINYTEXT",
    "BLOB",
    "TINYBLOB",
    "BINARY(4)",
    "VARBINARY(10)",
    "DATE",
    "DATETIME",
    "DATETIME(6)",
    "TIMESTAMP",
    "TIMESTAMP(3)",
    "YEAR",
    "TIME",
    "BOOL",
    "SERIAL",
    "BIT(3)",
    "ENUM('a','b')",
    "JSON",
];
const CAST_TYPES: &[&str] = &[
    "SIGNED",
    "UNSIGNED",
    "CHAR",
    "CHAR(2)",
    "BINARY",
    "DECIMAL(5,2)",
    "DOUBLE",
    "DATE",
    "DATETIME",
    "TIME",
    "INT",
];
const FUNCS: &[(&str, usize)] = &[
    ("ABS", 1),
    ("CEIL", 1),
    ("FLOOR", 1),
    ("ROUND", 2),
    ("TRUNCATE", 2),
    ("MOD", 2),
    ("POW", 2),
    ("SQRT", 1),
    ("SIGN", 1),
    ("RAND", 1),
    ("CRC32", 1),
    ("MD5", 1),
    ("HEX", 1),
    ("CONCAT", 3),
    ("CONCAT_WS", 3),
    ("LENGTH", 1),
    ("CHAR_LENGTH", 1),
    ("LOWER", 1),
    ("UPPER", 1),
    ("SUBSTRING", 3),
    ("SUBSTR", 2),
    ("MID", 3),
    ("LEFT", 2),
    ("RIGHT", 2),
    ("TRIM", 1),
    ("LTRIM", 1),
    ("RTRIM", 1),
    ("REPLACE", 3),
    ("REVERSE", 1),
    ("REPEAT", 2),
    ("LPAD", 3),
    ("RPAD", 3),
    ("LOCATE", 2),
    ("INSTR", 2),
    ("COALESCE", 3),
    ("IFNULL", 2),
    ("NULLIF", 2),
    ("IF", 3),
    ("GREATEST", 3),
    ("LEAST", 2),
    ("NOW", 0),
    ("CURDATE", 0),
    ("SYSDATE", 0),
    ("UNIX_TIMESTAMP", 1),
    ("LAST_INSERT_ID", 0),
    ("LAST_INSERT_ID", 1),
    ("DATABASE", 0),
    ("USER", 0),
    ("CURRENT_USER", 0),
    ("VERSION", 0),
    ("CONNECTION_ID", 0),
    ("UTC_TIMESTAMP", 0),
    ("FOO", 1),
    ("ABS", 0),
    ("CONCAT", 0),
];
const AGGS: &[&str] = &[
    "COUNT",
    "SUM",
    "MIN",
    "MAX",
    "AVG",
    "BIT_AND",
    "BIT_OR",
    "GROUP_CONCAT",
];
const BINOPS: &[&str] = &[
    "+", "-", "*", "/", "DIV", "%", "MOD", "=", "<>", "!=", "<", "<=", ">", ">=", "<=>", "AND",
    "OR", "XOR", "&&", "||", "&", "|", "^", "<<", ">>", "LIKE", "NOT LIKE", "REGEXP",
];

struct Gen<'i, 'a> {
    i: &'i mut Input<'a>,
    vars: &'i [String],
    depth: u32,
    /// Whether `?` markers may be emitted for literals.
    params: bool,
}

impl Gen<'_, '_> {
    fn statement(&mut self) -> String {
        self.depth = 0;
        match self.i.below(24) {
            0..=5 => self.select(),
            6..=8 => self.insert(),
            9..=10 => self.update(),
            11 => self.delete(),
            12..=13 => self.txn(),
            14..=15 => self.set(),
            16..=17 => self.show(),
            18..=19 => self.ddl(),
            20 => format!("SELECT {}", self.expr_list(Some(&[]))),
            21 => self.sysbench(),
            22 => self.account(),
            _ => {
                let mut s = self.select();
                self.mangle(&mut s);
                s
            }
        }
    }

    /// Damages a statement a little: drops or duplicates a span, or
    /// inserts a token.
    fn mangle(&mut self, s: &mut String) {
        if s.is_empty() {
            return;
        }
        let at = floor_char(s, self.i.below(s.len() + 1));
        match self.i.below(3) {
            0 => {
                let end = floor_char(s, (at + 1 + self.i.below(8)).min(s.len()));
                s.replace_range(at..end, "");
            }
            1 => {
                let t = TOKENS[self.i.below(TOKENS.len())];
                s.insert_str(at, &format!(" {t} "));
            }
            _ => {
                let tail = s[at..].to_string();
                s.push(' ');
                s.push_str(&tail);
            }
        }
    }

    fn table(&mut self) -> (&'static str, &'static [&'static str]) {
        match self.i.below(10) {
            0..=4 => ("t1", T1_COLS),
            5..=8 => ("t2", T2_COLS),
            _ => ("t3", &["x", "y"]),
        }
    }

    fn column(&mut self, cols: Option<&[&str]>) -> String {
        let all: &[&str] = cols.unwrap_or(T1_COLS);
        if all.is_empty() {
            return self.literal();
        }
        match self.i.below(32) {
            31 => "nosuch".into(),
            30 => format!("t1.{}", self.i.pick(T1_COLS)),
            29 => format!("t2.{}", self.i.pick(T2_COLS)),
            28 => format!("`{}`", self.i.pick(all)),
            _ => self.i.pick(all).to_string(),
        }
    }

    fn literal(&mut self) -> String {
        if self.params && self.i.chance(1, 3) {
            return "?".into();
        }
        match self.i.below(14) {
            13 => "NULL".into(),
            1 => self
                .i
                .pick(&[
                    "0",
                    "1",
                    "-1",
                    "127",
                    "-128",
                    "255",
                    "256",
                    "65535",
                    "2147483647",
                    "-2147483648",
                    "4294967295",
                    "9223372036854775807",
                    "-9223372036854775808",
                    "18446744073709551615",
                    "18446744073709551616",
                    "99999999999999999999999999999999999999999999999999999999999999999999",
                ])
                .to_string(),
            2 => (i64::from(self.i.u16() as i16)).to_string(),
            3 => self
                .i
                .pick(&[
                    "1.5",
                    "-0.0",
                    "0.1",
                    "1e308",
                    "1e309",
                    "-1e-320",
                    ".5",
                    "5.",
                    "1.000000001",
                    "123456789012345678901234567890.123456789",
                ])
                .to_string(),
            4 => self
                .i
                .pick(&[
                    "'2024-02-29'",
                    "'2023-02-29'",
                    "'0000-00-00'",
                    "'9999-12-31 23:59:59.999999'",
                    "'2024-01-01 25:61:61'",
                    "'1970-01-01 00:00:00'",
                    "'2038-01-19 03:14:08'",
                    "DATE '2024-01-01'",
                    "TIMESTAMP '2024-01-01 00:00:00'",
                ])
                .to_string(),
            5 => self
                .i
                .pick(&[
                    "TRUE",
                    "FALSE",
                    "0x00ff",
                    "X'0A'",
                    "b'11'",
                    "N'n'",
                    "_binary 'b'",
                ])
                .to_string(),
            6..=8 => {
                let raw = self.i.bytes(12);
                let mut s = String::from("'");
                for ch in String::from_utf8_lossy(raw).chars() {
                    match ch {
                        '\'' => s.push_str("''"),
                        '\\' => s.push_str("\\\\"),
                        '\0' => s.push_str("\\0"),
                        c => s.push(c),
                    }
                }
                s.push('\'');
                s
            }
            9 => self
                .i
                .pick(&[
                    "'abc'",
                    "''",
                    "'%'",
                    "'a%'",
                    "'_'",
                    "'x%y\\_z'",
                    "' 12abc'",
                    "'1e3'",
                ])
                .to_string(),
            10 => format!("@v{}", self.i.below(3)),
            11 => format!("@@{}", self.var()),
            _ => (i32::from(self.i.u8()) - 16).to_string(),
        }
    }

    fn var(&mut self) -> String {
        match self.i.below(8) {
            7 => "nosuch_var".into(),
            1 => self
                .i
                .pick(&[
                    "autocommit",
                    "transaction_isolation",
                    "tx_isolation",
                    "sql_mode",
                    "version_comment",
                    "last_insert_id",
                    "character_set_client",
                    "max_allowed_packet",
                ])
                .to_string(),
            _ if !self.vars.is_empty() => self.vars[self.i.below(self.vars.len())].clone(),
            _ => "autocommit".into(),
        }
    }

    fn expr(&mut self, cols: Option<&[&str]>) -> String {
        self.depth += 1;
        let leaf = self.depth > 4 || self.i.chance(1, 3);
        let e = if leaf {
            if self.i.chance(1, 2) {
                self.column(cols)
            } else {
                self.literal()
            }
        } else {
            match self.i.below(20) {
                0..=3 | 14..=15 => {
                    let op = *self.i.pick(BINOPS);
                    format!("{} {op} {}", self.expr(cols), self.expr(cols))
                }
                4 => format!("({})", self.expr(cols)),
                5 => {
                    let op = *self.i.pick(&["-", "NOT ", "~", "!", "+"]);
                    format!("{op}{}", self.expr(cols))
                }
                6 => {
                    let (f, n) = *self.i.pick(FUNCS);
                    let args: Vec<String> = (0..n).map(|_| self.expr(cols)).collect();
                    format!("{f}({})", args.join(", "))
                }
                7 => format!(
                    "{} {}BETWEEN {} AND {}",
                    self.expr(cols),
                    if self.i.chance(1, 4) { "NOT " } else { "" },
                    self.expr(cols),
                    self.expr(cols)
                ),
                8 => {
                    let n = 1 + self.i.below(4);
                    let items: Vec<String> = (0..n).map(|_| self.literal()).collect();
                    format!(
                        "{} {}IN ({})",
                        self.expr(cols),
                        if self.i.chance(1, 4) { "NOT " } else { "" },
                        items.join(", ")
                    )
                }
                9 => format!(
                    "{} IS {}NULL",
                    self.expr(cols),
                    if self.i.chance(1, 2) { "NOT " } else { "" }
                ),
                10 => format!(
                    "CASE WHEN {} THEN {} ELSE {} END",
                    self.expr(cols),
                    self.expr(cols),
                    self.expr(cols)
                ),
                11 => format!("CAST({} AS {})", self.expr(cols), self.i.pick(CAST_TYPES)),
                12 => format!(
                    "(SELECT {} FROM t1 WHERE {} LIMIT 1)",
                    self.expr(Some(T1_COLS)),
                    self.expr(Some(T1_COLS))
                ),
                13 => format!("{} + INTERVAL {} DAY", self.expr(cols), self.literal()),
                _ => {
                    let (f, n) = *self.i.pick(FUNCS);
                    let args: Vec<String> = (0..n).map(|_| self.expr(cols)).collect();
                    format!("{f}({})", args.join(", "))
                }
            }
        };
        self.depth -= 1;
        e
    }

    fn expr_list(&mut self, cols: Option<&[&str]>) -> String {
        let n = 1 + self.i.below(4);
        let v: Vec<String> = (0..n)
            .map(|_| {
                let mut e = match self.i.below(8) {
                    7 if !cols.is_some_and(|c| c.is_empty()) => return "*".into(),
                    6 => {
                        let a = *self.i.pick(AGGS);
                        let d = if self.i.chance(1, 4) { "DISTINCT " } else { "" };
                        if a == "COUNT" && self.i.chance(1, 2) {
                            "COUNT(*)".into()
                        } else {
                            format!("{a}({d}{})", self.expr(cols))
                        }
                    }
                    _ => self.expr(cols),
                };
                if self.i.chance(1, 5) {
                    e.push_str(&format!(" AS al{}", self.i.below(3)));
                }
                e
            })
            .collect();
        v.join(", ")
    }

    fn select(&mut self) -> String {
        let (t, cols) = self.table();
        let mut s = String::from("SELECT ");
        if self.i.chance(1, 5) {
            s.push_str("DISTINCT ");
        }
        let from = match self.i.below(10) {
            9 => {
                let (t2, _) = self.table();
                let kind = *self
                    .i
                    .pick(&["JOIN", "INNER JOIN", "LEFT JOIN", ",", "CROSS JOIN"]);
                let on = if kind == "," || kind == "CROSS JOIN" {
                    String::new()
                } else {
                    format!(" ON {}", self.expr(None))
                };
                format!("{t} AS x {kind} {t2} AS y{on}")
            }
            8 => format!(
                "(SELECT {} FROM {t} LIMIT {}) AS dt",
                self.expr_list(Some(cols)),
                self.i.below(20)
            ),
            7 => "performance_schema.global_status".into(),
            6 => format!("fz.{t}"),
            _ => t.to_string(),
        };
        s.push_str(&self.expr_list(Some(cols)));
        s.push_str(" FROM ");
        s.push_str(&from);
        if self.i.chance(2, 3) {
            s.push_str(&format!(" WHERE {}", self.expr(Some(cols))));
        }
        if self.i.chance(1, 4) {
            s.push_str(&format!(" GROUP BY {}", self.column(Some(cols))));
            if self.i.chance(1, 2) {
                s.push_str(&format!(" HAVING {}", self.expr(Some(cols))));
            }
        }
        if self.i.chance(1, 3) {
            let dir = *self.i.pick(&["", " ASC", " DESC"]);
            s.push_str(&format!(" ORDER BY {}{dir}", self.expr(Some(cols))));
        }
        if self.i.chance(1, 3) {
            s.push_str(&format!(" LIMIT {}", self.limit()));
            if self.i.chance(1, 3) {
                s.push_str(&format!(" OFFSET {}", self.limit()));
            }
        }
        match self.i.below(12) {
            11 => s.push_str(" FOR UPDATE"),
            10 => s.push_str(" LOCK IN SHARE MODE"),
            9 => s.push_str(" FOR SHARE"),
            _ => {}
        }
        s
    }

    fn limit(&mut self) -> String {
        if self.params && self.i.chance(1, 3) {
            return "?".into();
        }
        self.i
            .pick(&[
                "0",
                "1",
                "2",
                "10",
                "18446744073709551615",
                "-1",
                "1.5",
                "'3'",
            ])
            .to_string()
    }

    fn row(&mut self, n: usize) -> String {
        let v: Vec<String> = (0..n)
            .map(|_| {
                if self.i.chance(1, 8) {
                    "DEFAULT".into()
                } else {
                    self.literal()
                }
            })
            .collect();
        format!("({})", v.join(", "))
    }

    fn insert(&mut self) -> String {
        let (t, cols) = self.table();
        let verb = *self
            .i
            .pick(&["INSERT", "INSERT", "REPLACE", "INSERT IGNORE"]);
        let mut s = format!("{verb} INTO {t} ");
        let n = if self.i.chance(1, 2) {
            let k = 1 + self.i.below(cols.len());
            let mut chosen = Vec::new();
            for _ in 0..k {
                chosen.push(self.column(Some(cols)));
            }
            s.push_str(&format!("({}) ", chosen.join(", ")));
            k
        } else {
            cols.len() + usize::from(self.i.chance(1, 8))
        };
        if self.i.chance(1, 8) {
            s.push_str(&format!(
                "SELECT {} FROM {t} LIMIT 2",
                self.expr_list(Some(cols))
            ));
        } else {
            let rows = 1 + self.i.below(4);
            let v: Vec<String> = (0..rows).map(|_| self.row(n)).collect();
            s.push_str("VALUES ");
            s.push_str(&v.join(", "));
        }
        if verb == "INSERT" && self.i.chance(1, 3) {
            let c = self.column(Some(cols));
            let e = if self.i.chance(1, 2) {
                format!("VALUES({c})")
            } else {
                self.expr(Some(cols))
            };
            s.push_str(&format!(" ON DUPLICATE KEY UPDATE {c} = {e}"));
        }
        s
    }

    fn update(&mut self) -> String {
        let (t, cols) = self.table();
        let n = 1 + self.i.below(3);
        let sets: Vec<String> = (0..n)
            .map(|_| format!("{} = {}", self.column(Some(cols)), self.expr(Some(cols))))
            .collect();
        let mut s = format!("UPDATE {t} SET {}", sets.join(", "));
        if self.i.chance(3, 4) {
            s.push_str(&format!(" WHERE {}", self.expr(Some(cols))));
        }
        if self.i.chance(1, 4) {
            s.push_str(&format!(" ORDER BY {} DESC", self.column(Some(cols))));
        }
        if self.i.chance(1, 3) {
            s.push_str(&format!(" LIMIT {}", self.limit()));
        }
        s
    }

    fn delete(&mut self) -> String {
        let (t, cols) = self.table();
        let mut s = format!("DELETE FROM {t}");
        if self.i.chance(7, 8) {
            s.push_str(&format!(" WHERE {}", self.expr(Some(cols))));
        }
        if self.i.chance(1, 4) {
            s.push_str(&format!(" ORDER BY {}", self.column(Some(cols))));
        }
        if self.i.chance(1, 2) {
            s.push_str(&format!(" LIMIT {}", self.limit()));
        }
        s
    }

    fn txn(&mut self) -> String {
        self.i
            .pick(&[
                "BEGIN",
                "START TRANSACTION",
                "START TRANSACTION READ ONLY",
                "START TRANSACTION READ WRITE",
                "START TRANSACTION WITH CONSISTENT SNAPSHOT",
                "COMMIT",
                "ROLLBACK",
                "COMMIT WORK",
                "SET autocommit = 0",
                "SET autocommit = 1",
                "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED",
                "SET TRANSACTION ISOLATION LEVEL SERIALIZABLE",
                "SET TRANSACTION ISOLATION LEVEL READ UNCOMMITTED",
                "SET SESSION transaction_isolation = 'REPEATABLE-READ'",
                "SET transaction_read_only = 1",
                "SAVEPOINT sp",
                "ROLLBACK TO SAVEPOINT sp",
                "RELEASE SAVEPOINT sp",
            ])
            .to_string()
    }

    fn set(&mut self) -> String {
        match self.i.below(6) {
            0 => format!("SET @v{} = {}", self.i.below(3), self.expr(None)),
            1 => self
                .i
                .pick(&[
                    "SET NAMES utf8mb4",
                    "SET NAMES 'latin1' COLLATE 'latin1_swedish_ci'",
                    "SET character_set_results = NULL",
                    "SET sql_mode = ''",
                    "SET SESSION sql_mode = 'STRICT_TRANS_TABLES'",
                ])
                .to_string(),
            _ => {
                let scope = *self.i.pick(&[
                    "",
                    "SESSION ",
                    "GLOBAL ",
                    "@@",
                    "@@global.",
                    "@@session.",
                    "LOCAL ",
                ]);
                let v = self.var();
                let val = if self.i.chance(1, 2) {
                    self.literal()
                } else {
                    self.i
                        .pick(&[
                            "ON",
                            "OFF",
                            "DEFAULT",
                            "1",
                            "0",
                            "2",
                            "'fsync'",
                            "'O_DIRECT'",
                        ])
                        .to_string()
                };
                format!("SET {scope}{v} = {val}")
            }
        }
    }

    fn show(&mut self) -> String {
        match self.i.below(6) {
            0 => format!("SELECT @@{}", self.var()),
            1 => format!(
                "SHOW {}VARIABLES LIKE '{}%'",
                self.i.pick(&["", "GLOBAL ", "SESSION "]),
                self.i.pick(&["innodb", "sync", "", "%", "_"])
            ),
            2 => format!(
                "SHOW {}STATUS WHERE Variable_name IN ('Com_commit', 'Innodb_os_log_fsyncs', {})",
                self.i.pick(&["", "GLOBAL ", "SESSION "]),
                self.literal()
            ),
            _ => self
                .i
                .pick(&[
                    "SHOW TABLES",
                    "SHOW DATABASES",
                    "SHOW CREATE TABLE t1",
                    "SHOW CREATE TABLE t2",
                    "SHOW CREATE TABLE t3",
                    "DESCRIBE t2",
                    "DESC t1",
                    "SHOW COLUMNS FROM t2",
                    "SHOW INDEX FROM t1",
                    "SHOW ENGINE INNODB STATUS",
                    "SHOW BINARY LOGS",
                    "SHOW MASTER STATUS",
                    "SHOW FULL PROCESSLIST",
                    "SHOW WARNINGS",
                    "SHOW ERRORS",
                    "SHOW TABLE STATUS",
                    "SELECT DATABASE()",
                    "SELECT @@version_comment LIMIT 1",
                    "SELECT VARIABLE_VALUE FROM performance_schema.global_status \
                     WHERE VARIABLE_NAME IN ('COM_COMMIT', 'INNODB_LOG_WAITS')",
                    "SHOW GLOBAL STATUS WHERE Variable_name IN ('Innodb_os_log_fsyncs',\
                     'Innodb_log_waits','Innodb_dblwr_writes','Innodb_dblwr_pages_written',\
                     'Com_commit','Com_rollback')",
                    "USE fz",
                    "USE nosuch",
                    "SELECT * FROM information_schema.tables",
                ])
                .to_string(),
        }
    }

    fn ddl(&mut self) -> String {
        match self.i.below(10) {
            0..=3 => {
                let n = 1 + self.i.below(4);
                let mut defs = Vec::new();
                let names = ["x", "y", "z", "w"];
                for name in names.iter().take(n) {
                    let mut d = format!("{name} {}", self.i.pick(TYPES));
                    for _ in 0..self.i.below(3) {
                        let opt = match self.i.below(8) {
                            0 => "NOT NULL".to_string(),
                            1 => "NULL".to_string(),
                            2 => format!("DEFAULT {}", self.literal()),
                            3 => "AUTO_INCREMENT".to_string(),
                            4 => "PRIMARY KEY".to_string(),
                            5 => "UNIQUE".to_string(),
                            6 => "COMMENT 'c'".to_string(),
                            _ => "CHARACTER SET utf8mb4".to_string(),
                        };
                        d.push(' ');
                        d.push_str(&opt);
                    }
                    defs.push(d);
                }
                match self.i.below(4) {
                    0 => defs.push("PRIMARY KEY (x)".into()),
                    1 => defs.push(format!("KEY kx ({}(3))", names[self.i.below(n)])),
                    2 => defs.push(format!("UNIQUE KEY ux ({}, x)", names[self.i.below(n)])),
                    _ => {}
                }
                format!(
                    "CREATE TABLE {}t3 ({}){}",
                    if self.i.chance(1, 2) {
                        "IF NOT EXISTS "
                    } else {
                        ""
                    },
                    defs.join(", "),
                    self.i.pick(&[
                        "",
                        " ENGINE=InnoDB",
                        " DEFAULT CHARSET=utf8mb4",
                        " AUTO_INCREMENT=5"
                    ])
                )
            }
            4 => "DROP TABLE IF EXISTS t3".into(),
            5 => self
                .i
                .pick(&[
                    "CREATE INDEX iy ON t3 (y)",
                    "CREATE UNIQUE INDEX ix ON t3 (x)",
                    "DROP INDEX iy ON t3",
                    "CREATE INDEX ik2 ON t1 (k, c)",
                    "DROP INDEX ik2 ON t1",
                    "CREATE INDEX ib ON t2 (b(4))",
                ])
                .to_string(),
            6 => self
                .i
                .pick(&["TRUNCATE TABLE t3", "TRUNCATE t2", "TRUNCATE TABLE t1"])
                .to_string(),
            7 => self
                .i
                .pick(&[
                    "CREATE DATABASE d2",
                    "CREATE DATABASE IF NOT EXISTS d2",
                    "DROP DATABASE d2",
                    "DROP DATABASE IF EXISTS d2",
                    "CREATE TABLE d2.t (a INT PRIMARY KEY)",
                    "USE d2",
                    "CREATE SCHEMA d3 CHARACTER SET utf8mb4",
                ])
                .to_string(),
            8 => self
                .i
                .pick(&[
                    "DROP TABLE t1",
                    "DROP TABLE t2",
                    "DROP DATABASE fz",
                    "DROP TABLE t1, t3",
                ])
                .to_string(),
            _ => self
                .i
                .pick(&[
                    "CREATE TABLE t3 LIKE t1",
                    "CREATE TABLE t3 AS SELECT * FROM t1",
                    "ALTER TABLE t3 ADD COLUMN q INT",
                    "RENAME TABLE t3 TO t4",
                    "CREATE TEMPORARY TABLE t3 (a INT)",
                    "CREATE VIEW v AS SELECT 1",
                ])
                .to_string(),
        }
    }

    /// The statements sysbench's OLTP scripts send, with generated values.
    fn sysbench(&mut self) -> String {
        let id = self.literal();
        match self.i.below(9) {
            0 => format!("SELECT c FROM t1 WHERE id={id}"),
            1 => format!(
                "SELECT c FROM t1 WHERE id BETWEEN {id} AND {}",
                self.literal()
            ),
            2 => format!(
                "SELECT SUM(k) FROM t1 WHERE id BETWEEN {id} AND {}",
                self.literal()
            ),
            3 => format!(
                "SELECT c FROM t1 WHERE id BETWEEN {id} AND {} ORDER BY c",
                self.literal()
            ),
            4 => format!(
                "SELECT DISTINCT c FROM t1 WHERE id BETWEEN {id} AND {} ORDER BY c",
                self.literal()
            ),
            5 => format!("UPDATE t1 SET k=k+1 WHERE id={id}"),
            6 => format!("UPDATE t1 SET c={} WHERE id={id}", self.literal()),
            7 => format!("DELETE FROM t1 WHERE id={id}"),
            _ => format!(
                "INSERT INTO t1 (id, k, c, pad) VALUES ({id}, {}, {}, {})",
                self.literal(),
                self.literal(),
                self.literal()
            ),
        }
    }

    fn account(&mut self) -> String {
        self.i
            .pick(&[
                "CREATE USER 'fz'@'%' IDENTIFIED BY 'pw'",
                "CREATE USER IF NOT EXISTS fz",
                "GRANT ALL ON *.* TO 'fz'@'%'",
                "GRANT ALL PRIVILEGES ON fz.* TO fz",
                "DROP USER 'fz'@'%'",
                "DROP USER IF EXISTS fz",
                "FLUSH PRIVILEGES",
                "ALTER USER 'fz'@'%' IDENTIFIED BY 'x'",
                "SELECT CURRENT_USER()",
            ])
            .to_string()
    }
}

fn floor_char(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}
