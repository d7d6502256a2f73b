//! `quire bench commit`: small write transactions against an on-disk data
//! directory, the way sysbench's write workloads drive MySQL.
//!
//! ```text
//!  table sbtest.sbtest1 (id INT PRIMARY KEY, k INT, c CHAR(120), pad CHAR(60), KEY k_1(k))
//!  update_non_index   per transaction: UPDATE sbtest1 SET c=? WHERE id=?
//!  write_only         per transaction: UPDATE ... SET k=k+1 WHERE id=?;
//!                     UPDATE ... SET c=? WHERE id=?; DELETE ... WHERE id=?;
//!                     INSERT ... (the deleted id again)
//! ```
//! Prints TPS, latency percentiles, redo fsyncs/s and commits per fsync
//! (the group-commit figure), for the `innodb_flush_log_at_trx_commit`
//! given. Deadlocks and lock wait timeouts are retried and counted.

use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use quire_config::Config;
use quire_engine::{ColumnDef, ColumnType, Engine, Isolation, LockMode, TableDef, Value};
use quire_io::{OsFs, Vfs};

use crate::hist::Histogram;

#[derive(clap::Args, Debug)]
pub struct CommitArgs {
    /// Client threads.
    #[arg(long, default_value_t = 16)]
    threads: usize,
    /// Seconds to run.
    #[arg(long, default_value_t = 10.0)]
    seconds: f64,
    /// Rows in the table (loaded if the table is empty).
    #[arg(long, default_value_t = 100_000)]
    rows: i64,
    /// update_non_index or write_only.
    #[arg(long, default_value = "update_non_index")]
    workload: String,
    /// One JSON object on stdout.
    #[arg(long)]
    json: bool,
}

fn col(name: &str, ty: ColumnType) -> ColumnDef {
    ColumnDef {
        name: name.into(),
        ty,
        nullable: false,
        default: None,
        auto_increment: false,
    }
}

fn rnd(s: &mut u64) -> u64 {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    *s
}

fn text(s: &mut u64, len: usize) -> Value {
    let mut b = Vec::with_capacity(len);
    while b.len() < len {
        let x = rnd(s);
        for i in 0..8 {
            if b.len() < len {
                b.push(b'0' + ((x >> (i * 8)) % 10) as u8);
            }
        }
    }
    Value::Bytes(b)
}

fn setup(e: &Engine, rows: i64) -> Result<Arc<TableDef>, Box<dyn std::error::Error>> {
    e.create_database("sbtest", true)?;
    let t = e.create_table(
        "sbtest",
        "sbtest1",
        vec![
            col("id", ColumnType::Int { unsigned: false }),
            col("k", ColumnType::Int { unsigned: false }),
            col("c", ColumnType::Char { len: 120 }),
            col("pad", ColumnType::Char { len: 60 }),
        ],
        vec![0],
        vec![("k_1".into(), false, vec![1])],
        true,
    )?;
    let mut probe = e.begin(Isolation::RepeatableRead, true);
    let have = probe.scan(
        &t,
        &quire_engine::Scan {
            limit: Some(1),
            ..Default::default()
        },
    )?;
    drop(probe);
    if have.is_empty() {
        let mut s = 0x2545_F491_4F6C_DD1Du64;
        let mut id = 1;
        while id <= rows {
            let mut tx = e.begin(Isolation::RepeatableRead, false);
            for _ in 0..1000 {
                if id > rows {
                    break;
                }
                tx.insert(
                    &t,
                    vec![
                        Some(Value::Int(id)),
                        Some(Value::Int((rnd(&mut s) % rows as u64) as i64)),
                        Some(text(&mut s, 120)),
                        Some(text(&mut s, 60)),
                    ],
                )?;
                id += 1;
            }
            tx.commit()?;
        }
        e.store().checkpoint()?;
    }
    Ok(t)
}

fn one_txn(
    e: &Engine,
    t: &TableDef,
    rows: i64,
    write_only: bool,
    s: &mut u64,
) -> quire_engine::Result<()> {
    let id = 1 + (rnd(s) % rows as u64) as i64;
    let mut tx = e.begin(Isolation::RepeatableRead, false);
    let pk = quire_engine::Txn::encode_pk(t, &[Value::Int(id)])?;
    if write_only {
        // UPDATE sbtest1 SET k=k+1 WHERE id=?
        if let Some(mut row) = tx.get_for(t, &[Value::Int(id)], LockMode::Exclusive)? {
            if let Value::Int(k) = row[1] {
                row[1] = Value::Int(k + 1);
            }
            tx.update(t, &pk, row)?;
        }
        // UPDATE sbtest1 SET c=? WHERE id=?
        let id2 = 1 + (rnd(s) % rows as u64) as i64;
        let pk2 = quire_engine::Txn::encode_pk(t, &[Value::Int(id2)])?;
        if let Some(mut row) = tx.get_for(t, &[Value::Int(id2)], LockMode::Exclusive)? {
            row[2] = text(s, 120);
            tx.update(t, &pk2, row)?;
        }
        // DELETE ... WHERE id=?; INSERT the same id back
        let id3 = 1 + (rnd(s) % rows as u64) as i64;
        let pk3 = quire_engine::Txn::encode_pk(t, &[Value::Int(id3)])?;
        tx.delete(t, &pk3)?;
        tx.insert(
            t,
            vec![
                Some(Value::Int(id3)),
                Some(Value::Int((rnd(s) % rows as u64) as i64)),
                Some(text(s, 120)),
                Some(text(s, 60)),
            ],
        )?;
    } else if let Some(mut row) = tx.get_for(t, &[Value::Int(id)], LockMode::Exclusive)? {
        row[2] = text(s, 120);
        tx.update(t, &pk, row)?;
    }
    tx.commit()?;
    Ok(())
}

fn stat(v: &[(String, u64)], k: &str) -> u64 {
    v.iter().find(|(n, _)| n == k).map(|x| x.1).unwrap_or(0)
}

pub fn run(a: CommitArgs, cfg: Config) -> Result<ExitCode, Box<dyn std::error::Error>> {
    let write_only = match a.workload.as_str() {
        "update_non_index" => false,
        "write_only" => true,
        w => return Err(format!("--workload {w}: expected update_non_index or write_only").into()),
    };
    let vfs: Arc<dyn Vfs> = Arc::new(OsFs::new(cfg.innodb_flush_method, cfg.innodb_use_fdatasync));
    let (e, _) = Engine::open(vfs, &cfg)?;
    let rows = a.rows.max(1);
    let t = setup(&e, rows)?;
    let before = e.status();
    let stop = AtomicBool::new(false);
    let retries = AtomicU64::new(0);
    let max_versions = AtomicU64::new(0);
    let max_version_bytes = AtomicU64::new(0);
    let t0 = Instant::now();
    let threads = a.threads.max(1);
    let hists: Vec<(u64, Histogram)> = std::thread::scope(|sc| {
        let hs: Vec<_> = (0..threads)
            .map(|i| {
                let (e, t, stop, retries) = (&e, &t, &stop, &retries);
                sc.spawn(move || {
                    let mut s = 0x9E37_79B9_7F4A_7C15u64 ^ ((i as u64 + 1) << 32);
                    let mut h = Histogram::default();
                    let mut n = 0u64;
                    while !stop.load(Ordering::Relaxed) {
                        let st = Instant::now();
                        match one_txn(e, t, rows, write_only, &mut s) {
                            Ok(()) => {
                                h.record(st.elapsed().as_nanos() as u64);
                                n += 1;
                            }
                            Err(err) if err.code == 1213 || err.code == 1205 => {
                                retries.fetch_add(1, Ordering::Relaxed);
                            }
                            Err(err) => {
                                eprintln!("quire bench commit: {err}");
                                stop.store(true, Ordering::Relaxed);
                            }
                        }
                    }
                    (n, h)
                })
            })
            .collect();
        // Sample the MVCC version memory while the load runs.
        let end = Instant::now() + Duration::from_secs_f64(a.seconds);
        while Instant::now() < end {
            std::thread::sleep(Duration::from_millis(50));
            let st = e.status();
            max_versions.fetch_max(stat(&st, "Quire_mvcc_versions"), Ordering::Relaxed);
            max_version_bytes.fetch_max(stat(&st, "Quire_mvcc_version_bytes"), Ordering::Relaxed);
        }
        stop.store(true, Ordering::Relaxed);
        hs.into_iter()
            .map(|h| h.join().expect("bench thread"))
            .collect()
    });
    let secs = t0.elapsed().as_secs_f64();
    let after = e.status();
    let mut hist = Histogram::default();
    let mut commits = 0;
    for (n, h) in &hists {
        commits += n;
        hist.merge(h);
    }
    let fsyncs = stat(&after, "Innodb_os_log_fsyncs") - stat(&before, "Innodb_os_log_fsyncs");
    let log_bytes = stat(&after, "Innodb_os_log_written") - stat(&before, "Innodb_os_log_written");
    let tps = commits as f64 / secs;
    let us = |q: f64| hist.quantile(q) as f64 / 1000.0;
    let per_fsync = if fsyncs > 0 {
        commits as f64 / fsyncs as f64
    } else {
        0.0
    };
    e.close(true)?;
    if a.json {
        let o = serde_json::json!({
            "workload": a.workload,
            "threads": threads,
            "innodb_flush_log_at_trx_commit": cfg.innodb_flush_log_at_trx_commit,
            "log_bin": cfg.log_bin,
            "seconds": secs,
            "commits": commits,
            "tps": tps,
            "p50_us": us(0.5),
            "p95_us": us(0.95),
            "p99_us": us(0.99),
            "p999_us": us(0.999),
            "fsyncs_per_s": fsyncs as f64 / secs,
            "commits_per_fsync": per_fsync,
            "redo_bytes_per_s": log_bytes as f64 / secs,
            "retries": retries.load(Ordering::Relaxed),
            "mvcc_versions_max": max_versions.load(Ordering::Relaxed),
            "mvcc_version_bytes_max": max_version_bytes.load(Ordering::Relaxed),
        });
        println!("{o}");
    } else {
        println!(
            "quire bench commit: workload={} threads={threads} trx_commit={} flush_method={} log_bin={}",
            a.workload,
            cfg.innodb_flush_log_at_trx_commit,
            cfg.innodb_flush_method,
            if cfg.log_bin { "ON" } else { "OFF" }
        );
        println!(
            "tps={tps:.0} p50_us={:.0} p95_us={:.0} p99_us={:.0} p99.9_us={:.0} redo_fsyncs/s={:.0} commits_per_fsync={per_fsync:.2} redo_MB/s={:.1} commits={commits} retries={} mvcc_versions_max={} mvcc_version_bytes_max={} seconds={secs:.1}",
            us(0.5),
            us(0.95),
            us(0.99),
            us(0.999),
            fsyncs as f64 / secs,
            log_bytes as f64 / 1e6 / secs,
            retries.load(Ordering::Relaxed),
            max_versions.load(Ordering::Relaxed),
            max_version_bytes.load(Ordering::Relaxed)
        );
    }
    Ok(ExitCode::SUCCESS)
}
