//! `quire bench lob`: long values through the engine (offpage.rs).
//!
//! ```text
//!  insert  --count values of --value-bytes into t(id INT PRIMARY KEY,
//!          b LONGBLOB), one transaction each, at the configured
//!          durability (1/1 by default: redo and binlog synced per commit)
//!  read    each back by primary key, checking every byte
//! ```
//!
//! Prints MB/s and per-operation latency percentiles for both, and the
//! counters that explain them (LOB pages written and read, redo bytes,
//! fsyncs). A fresh table each run; the data directory is --datadir.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use quire_config::Config;
use quire_engine::{ColumnDef, ColumnType, Engine, Isolation, Value};
use quire_io::{OsFs, Vfs};

use crate::hist::Histogram;

#[derive(clap::Args, Debug)]
pub struct LobArgs {
    /// Bytes per value.
    #[arg(long, default_value_t = 1 << 20)]
    value_bytes: usize,
    /// Values to insert and read.
    #[arg(long, default_value_t = 200)]
    count: u64,
}

fn counter(status: &[(String, u64)], name: &str) -> u64 {
    status
        .iter()
        .find(|(k, _)| k == name)
        .map(|x| x.1)
        .unwrap_or(0)
}

fn value(len: usize, id: u64) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(13) ^ id as u8)
        .collect()
}

fn report(what: &str, h: &Histogram, bytes: u64, secs: f64) {
    let ms = |ns: u64| ns as f64 / 1e6;
    println!(
        "{what:<7} ops={} MB/s={:.1} p50_ms={:.2} p99_ms={:.2} p99.9_ms={:.2}",
        h.count(),
        bytes as f64 / 1e6 / secs.max(1e-9),
        ms(h.quantile(0.5)),
        ms(h.quantile(0.99)),
        ms(h.quantile(0.999))
    );
}

pub fn run(a: LobArgs, cfg: Config) -> Result<ExitCode, Box<dyn std::error::Error>> {
    let vfs: Arc<dyn Vfs> = Arc::new(OsFs::new(cfg.innodb_flush_method, cfg.innodb_use_fdatasync));
    let (e, _) = Engine::open(vfs, &cfg)?;
    e.create_database("bench_lob", true)?;
    if e.table("bench_lob", "t").is_ok() {
        e.drop_table("bench_lob", "t", None)?;
    }
    let t = e.create_table(
        "bench_lob",
        "t",
        vec![
            ColumnDef::new("id", ColumnType::BigInt { unsigned: false }, false),
            ColumnDef::new(
                "b",
                ColumnType::Blob {
                    max_bytes: u32::MAX,
                },
                true,
            ),
        ],
        vec![0],
        vec![],
        false,
    )?;
    let before = e.status();
    let mut ins = Histogram::default();
    let start = Instant::now();
    for id in 0..a.count {
        let v = value(a.value_bytes, id);
        let t0 = Instant::now();
        let mut tx = e.begin(Isolation::RepeatableRead, false);
        tx.insert(&t, vec![Some(Value::Int(id as i64)), Some(Value::Bytes(v))])?;
        tx.commit()?;
        ins.record(t0.elapsed().as_nanos() as u64);
    }
    let ins_s = start.elapsed().as_secs_f64();
    let mid = e.status();
    let mut rd = Histogram::default();
    let start = Instant::now();
    let mut bad = 0u64;
    for id in 0..a.count {
        let t0 = Instant::now();
        let mut tx = e.begin(Isolation::RepeatableRead, false);
        let row = tx.get(&t, &[Value::Int(id as i64)])?;
        tx.commit()?;
        rd.record(t0.elapsed().as_nanos() as u64);
        let ok = matches!(row.as_ref().and_then(|r| r.get(1)),
            Some(Value::Bytes(b)) if *b == value(a.value_bytes, id));
        bad += u64::from(!ok);
    }
    let rd_s = start.elapsed().as_secs_f64();
    let after = e.status();
    let total = a.count * a.value_bytes as u64;
    println!(
        "bench lob: value_bytes={} count={} page_size={} trx_commit={} sync_binlog={} log_bin={}",
        a.value_bytes,
        a.count,
        cfg.innodb_page_size,
        cfg.innodb_flush_log_at_trx_commit,
        cfg.sync_binlog,
        cfg.log_bin
    );
    report("insert", &ins, total, ins_s);
    report("read", &rd, total, rd_s);
    let d = |s0: &[(String, u64)], s1: &[(String, u64)], n: &str| counter(s1, n) - counter(s0, n);
    println!(
        "counters: lob_pages_written={} lob_pages_read={} redo_bytes={} redo_fsyncs={} pages_written={} mismatches={bad}",
        d(&before, &mid, "Quire_lob_pages_written"),
        d(&mid, &after, "Quire_lob_pages_read"),
        d(&before, &mid, "Innodb_os_log_written"),
        d(&before, &mid, "Innodb_os_log_fsyncs"),
        d(&before, &after, "Innodb_pages_written"),
    );
    e.close(true)?;
    Ok(if bad == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
