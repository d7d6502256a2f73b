//! `quire serve`: the MySQL-protocol server on a data directory.
//!
//! ```text
//!  open engine (creates ./quire-data on first start; after a kill -9 this
//!  is crash recovery, its time logged) -> listen (port, bind_address,
//!  socket) -> serve until SIGTERM/SIGINT -> stop accepting, end sessions,
//!  clean shutdown (redo flushed, pages written, checkpoint, binlog STOP)
//! ```

use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use quire_config::Config;
use quire_engine::Engine;
use quire_io::{OsFs, Vfs};
use quire_server::{serve, ServerConfig};

#[derive(clap::Args, Debug)]
pub struct Args {}

/// Set by the signal handler; polled by the accept loop.
static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    STOP.store(true, Ordering::SeqCst);
}

pub fn run(_a: Args, cfg: Config) -> Result<ExitCode, Box<dyn std::error::Error>> {
    let t0 = Instant::now();
    let vfs: Arc<dyn Vfs> = Arc::new(OsFs::new(cfg.innodb_flush_method, cfg.innodb_use_fdatasync));
    let (engine, rec) = Engine::open(vfs, &cfg)?;
    let s = &rec.storage;
    if s.created {
        eprintln!(
            "quire: initialised a new data directory at {}",
            cfg.datadir.display()
        );
    } else {
        eprintln!(
            "quire: opened {} in {:.3} s: redo {} -> {} ({} mini-transactions, {} bytes replayed in {:.3} s), {} torn pages restored, {} commits replayed, {} prepared committed, {} rolled back, {} large transactions replayed from their files, {} bytes cut from the binlog",
            cfg.datadir.display(),
            t0.elapsed().as_secs_f64(),
            s.checkpoint_lsn,
            s.end_lsn,
            s.mtrs_applied,
            s.redo_bytes,
            s.redo_apply_duration.as_secs_f64(),
            s.torn_restored,
            rec.commits_replayed,
            rec.prepared_committed,
            rec.prepared_rolled_back,
            rec.large_replayed,
            rec.binlog_truncated_bytes
        );
    }
    if rec.bulk_pages_reclaimed > 0 || rec.offpage_orphans_freed > 0 {
        eprintln!(
            "quire: freed what interrupted work left: {} pages an index build had reserved, {} off-page value chains no row owned",
            rec.bulk_pages_reclaimed, rec.offpage_orphans_freed
        );
    }
    if rec.binlog_index_rebuilt {
        eprintln!(
            "quire: the binary log index was missing; rebuilt it from the binlog files in {}",
            cfg.datadir.display()
        );
    }
    // SAFETY: installing an async-signal-safe handler that only stores to
    // an atomic.
    unsafe {
        libc::signal(libc::SIGTERM, on_signal as *const () as libc::sighandler_t);
        libc::signal(libc::SIGINT, on_signal as *const () as libc::sighandler_t);
    }
    let shutdown = Arc::new(AtomicBool::new(false));
    let watcher = {
        let shutdown = shutdown.clone();
        std::thread::spawn(move || {
            while !STOP.load(Ordering::SeqCst) {
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
            shutdown.store(true, Ordering::SeqCst);
        })
    };
    eprintln!(
        "quire: listening on {}:{}{} (log_bin={}, innodb_flush_log_at_trx_commit={}, sync_binlog={})",
        cfg.bind_address,
        cfg.port,
        cfg.socket
            .as_ref()
            .map(|p| format!(" and {}", p.display()))
            .unwrap_or_default(),
        if cfg.log_bin { "ON" } else { "OFF" },
        cfg.innodb_flush_log_at_trx_commit,
        cfg.sync_binlog
    );
    let scfg = ServerConfig {
        bind_address: cfg.bind_address.clone(),
        port: cfg.port,
        socket: cfg.socket.clone(),
        max_connections: cfg.max_connections,
        max_allowed_packet: cfg.max_allowed_packet,
        wait_timeout_s: cfg.wait_timeout,
        thread_stack: usize::try_from(cfg.thread_stack).unwrap_or(usize::MAX),
    };
    let served = serve(engine.clone(), scfg, shutdown.clone());
    STOP.store(true, Ordering::SeqCst);
    let _ = watcher.join();
    let t1 = Instant::now();
    engine.close(true)?;
    eprintln!(
        "quire: clean shutdown in {:.3} s",
        t1.elapsed().as_secs_f64()
    );
    served?;
    Ok(ExitCode::SUCCESS)
}
