//! Shared by the integration tests: an engine on a temporary directory.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use quire_config::Config;
use quire_engine::{Engine, Value};
use quire_io::{FlushMethod, OsFs, Vfs};
use quire_sql::{Output, Session};

fn temp_dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!(
        "quire-sql-{tag}-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0)
    ));
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

pub fn open_engine(tag: &str) -> (Engine, PathBuf) {
    let dir = temp_dir(tag);
    (open_engine_at(&dir), dir)
}

/// The engine of `dir` (made by [`open_engine`]) opened again, as after a
/// restart.
#[allow(dead_code)]
pub fn open_engine_at(dir: &Path) -> Engine {
    let cfg = Config {
        datadir: dir.join("data"),
        innodb_buffer_pool_size: 16 << 20,
        innodb_redo_log_capacity: 16 << 20,
        innodb_flush_method: FlushMethod::Fsync,
        innodb_flush_log_at_trx_commit: 2,
        sync_binlog: 0,
        log_bin: true,
        ..Config::default()
    };
    let vfs: Arc<dyn Vfs> = Arc::new(OsFs::new(FlushMethod::Fsync, false));
    let (e, _) = Engine::open(vfs, &cfg).expect("open engine");
    e
}

// Session helpers of the spill and hash-join tests (not every test binary
// that includes this module uses each of them).

/// The rows of a query; panics on an error or a non-row result.
#[allow(dead_code)]
pub fn rows(s: &mut Session, sql: &str) -> Vec<Vec<Value>> {
    match s.execute(sql) {
        Ok(Output::Rows { rows, .. }) => rows,
        other => panic!("{sql}: {other:?}"),
    }
}

/// Runs a statement that must succeed.
#[allow(dead_code)]
pub fn ok(s: &mut Session, sql: &str) {
    if let Err(e) = s.execute(sql) {
        panic!("{sql}: {e:?}");
    }
}

/// A global status counter's value.
#[allow(dead_code)]
pub fn status(s: &mut Session, name: &str) -> u64 {
    let r = rows(s, &format!("SHOW GLOBAL STATUS LIKE '{name}'"));
    match r.first().and_then(|r| r.get(1)) {
        Some(Value::Bytes(b)) => String::from_utf8_lossy(b).parse().unwrap_or(0),
        other => panic!("{name}: {other:?}"),
    }
}

/// How many temporary files `<datadir>/#tmp` holds.
#[allow(dead_code)]
pub fn tmp_files(datadir: &Path) -> usize {
    std::fs::read_dir(datadir.join("#tmp"))
        .map(|d| d.count())
        .unwrap_or(0)
}

/// Rows as sorted text, to compare results whose order is not fixed.
#[allow(dead_code)]
pub fn sorted(v: Vec<Vec<Value>>) -> Vec<String> {
    let mut out: Vec<String> = v.into_iter().map(|r| format!("{r:?}")).collect();
    out.sort();
    out
}
