//! `quire bench query`: the query engine's memory bounds and streaming.
//!
//! ```text
//!  load    table t(id, k, pad) of --rows rows (k pseudo-random), through SQL
//!  sort    SELECT id, k, pad FROM t ORDER BY k, id   with the session's
//!          sort_buffer_size (MySQL's 256 KiB unless --sort-buffer-size):
//!          wall time, rows, peak RSS growth (VmHWM after - VmRSS before),
//!          temporary files and merge passes
//!  limit   SELECT * FROM t LIMIT 10, and with a filter no index serves:
//!          latency of each (they read tens of rows, not the table)
//! ```
//!
//! Rows go through `Session::execute_streaming` into a counting sink, as
//! the server sends them, so nothing collects the result. The figures
//! are printed, not judged: a loaded machine says little about speed.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use quire_config::Config;
use quire_engine::{Engine, EngineError, Value};
use quire_io::{OsFs, Vfs};
use quire_sql::{ColumnMeta, Output, RowSink, Session};

#[derive(clap::Args, Debug)]
pub struct QueryArgs {
    /// Rows in the table.
    #[arg(long, default_value_t = 10_000_000)]
    rows: u64,
    /// sort_buffer_size for the ORDER BY (bytes).
    #[arg(long, default_value_t = 262_144)]
    sort_buffer_size: u64,
    /// Reuse the table of a previous run in --datadir if it has --rows rows.
    #[arg(long)]
    reuse: bool,
}

/// Counts rows and checks they arrive in (k, id) order.
#[derive(Default)]
struct CheckSink {
    rows: u64,
    last: Option<(i64, i64)>,
    out_of_order: u64,
}

fn int(v: Option<&Value>) -> i64 {
    match v {
        Some(Value::Int(i)) => *i,
        Some(Value::UInt(u)) => i64::try_from(*u).unwrap_or(i64::MAX),
        _ => i64::MIN,
    }
}

impl RowSink for CheckSink {
    fn columns(&mut self, _columns: &[ColumnMeta]) -> Result<(), EngineError> {
        Ok(())
    }
    fn row(&mut self, row: Vec<Value>) -> Result<(), EngineError> {
        let key = (int(row.get(1)), int(row.first()));
        if self.last.is_some_and(|l| l > key) {
            self.out_of_order += 1;
        }
        self.last = Some(key);
        self.rows += 1;
        Ok(())
    }
}

/// A line of /proc/self/status in KiB (VmRSS, VmHWM).
fn proc_kib(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with(field))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// Resets VmHWM to the current RSS (Linux: `5` to clear_refs).
fn reset_peak() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

fn status(s: &mut Session, name: &str) -> u64 {
    match s.execute(&format!("SHOW GLOBAL STATUS LIKE '{name}'")) {
        Ok(Output::Rows { rows, .. }) => match rows.first().and_then(|r| r.get(1)) {
            Some(Value::Bytes(b)) => String::from_utf8_lossy(b).parse().unwrap_or(0),
            _ => 0,
        },
        _ => 0,
    }
}

fn count(s: &mut Session) -> Option<u64> {
    match s.execute("SELECT COUNT(*) FROM bench.t") {
        Ok(Output::Rows { rows, .. }) => rows
            .first()
            .and_then(|r| r.first())
            .map(|v| int(Some(v)) as u64),
        _ => None,
    }
}

fn load(s: &mut Session, rows: u64) -> Result<(), EngineError> {
    let _ = s.execute("DROP DATABASE IF EXISTS bench");
    s.execute("CREATE DATABASE bench")?;
    s.execute("CREATE TABLE bench.t (id BIGINT PRIMARY KEY, k BIGINT, pad VARCHAR(32))")?;
    let t0 = Instant::now();
    let mut id = 0u64;
    let mut sql = String::new();
    while id < rows {
        let end = (id + 10_000).min(rows);
        sql.clear();
        sql.push_str("INSERT INTO bench.t VALUES ");
        for i in id..end {
            let k = i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 44;
            if i > id {
                sql.push(',');
            }
            sql.push_str(&format!("({i},{k},'pad-{:08}')", i % 100_000_000));
        }
        s.execute(&sql)?;
        id = end;
        if id.is_multiple_of(1_000_000) {
            eprintln!("  loaded {id} rows ({:.0} s)", t0.elapsed().as_secs_f64());
        }
    }
    println!("load    {rows} rows in {:.1} s", t0.elapsed().as_secs_f64());
    Ok(())
}

pub fn run(a: QueryArgs, cfg: Config) -> Result<ExitCode, Box<dyn std::error::Error>> {
    std::fs::create_dir_all(&cfg.datadir)?;
    let vfs: Arc<dyn Vfs> = Arc::new(OsFs::new(cfg.innodb_flush_method, cfg.innodb_use_fdatasync));
    let (engine, _) = Engine::open(vfs, &cfg)?;
    let mut s = Session::new(engine.clone(), "root");
    if !(a.reuse && count(&mut s) == Some(a.rows)) {
        load(&mut s, a.rows)?;
    }
    s.execute(&format!("SET sort_buffer_size = {}", a.sort_buffer_size))?;

    let files0 = status(&mut s, "Created_tmp_files");
    let passes0 = status(&mut s, "Sort_merge_passes");
    let rss0 = proc_kib("VmRSS:");
    let peak_reset = reset_peak();
    let t0 = Instant::now();
    let mut sink = CheckSink::default();
    s.execute_streaming("SELECT id, k, pad FROM bench.t ORDER BY k, id", &mut sink)?;
    let secs = t0.elapsed().as_secs_f64();
    let hwm = proc_kib("VmHWM:");
    println!(
        "sort    {} rows in {secs:.1} s, out of order {}, sort_buffer_size {}",
        sink.rows, sink.out_of_order, a.sort_buffer_size
    );
    println!(
        "        RSS before {} KiB, peak during {} KiB (growth {} KiB{}), after {} KiB",
        rss0,
        hwm,
        hwm.saturating_sub(rss0),
        if peak_reset {
            ""
        } else {
            "; VmHWM could not be reset, so it is the process peak"
        },
        proc_kib("VmRSS:")
    );
    println!(
        "        temporary files {}, merge passes {}",
        status(&mut s, "Created_tmp_files") - files0,
        status(&mut s, "Sort_merge_passes") - passes0
    );
    for q in [
        "SELECT id, k, pad FROM bench.t LIMIT 10",
        "SELECT id, k, pad FROM bench.t WHERE pad LIKE 'pad-%' LIMIT 10",
    ] {
        let t0 = Instant::now();
        let mut sink = CheckSink::default();
        s.execute_streaming(q, &mut sink)?;
        println!(
            "limit   {:.3} ms, {} rows: {q}",
            t0.elapsed().as_secs_f64() * 1e3,
            sink.rows
        );
    }
    drop(s);
    engine.close(true)?;
    Ok(if sink.out_of_order == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
