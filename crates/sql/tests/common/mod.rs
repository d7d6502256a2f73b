//! Shared by the integration tests: an engine on a temporary directory.

use std::path::PathBuf;
use std::sync::Arc;

use quire_config::Config;
use quire_engine::Engine;
use quire_io::{FlushMethod, OsFs, Vfs};

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
    (e, dir)
}
