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
    /// update_non_index, write_only, or insert_delete (insert a new row and
    /// delete another: binlog INSERT and DELETE events).
    #[arg(long, default_value = "update_non_index")]
    workload: String,
    /// One JSON object on stdout.
    #[arg(long)]
    json: bool,
    /// Run the preset comparison of the MySQL tuning articles instead of
    /// one setting: `tuning` (alias `seeds`).
    #[arg(long)]
    sweep: Option<String>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Workload {
    UpdateNonIndex,
    WriteOnly,
    InsertDelete,
}

fn col(name: &str, ty: ColumnType) -> ColumnDef {
    ColumnDef::new(name, ty, false)
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
            col("c", ColumnType::char(120)),
            col("pad", ColumnType::char(60)),
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
    w: Workload,
    s: &mut u64,
    next_id: &AtomicU64,
) -> quire_engine::Result<()> {
    let id = 1 + (rnd(s) % rows as u64) as i64;
    let mut tx = e.begin(Isolation::RepeatableRead, false);
    let pk = quire_engine::Txn::encode_pk(t, &[Value::Int(id)])?;
    if w == Workload::InsertDelete {
        let new_id = next_id.fetch_add(1, Ordering::Relaxed) as i64;
        tx.insert(
            t,
            vec![
                Some(Value::Int(new_id)),
                Some(Value::Int((rnd(s) % rows as u64) as i64)),
                Some(text(s, 120)),
                Some(text(s, 60)),
            ],
        )?;
        tx.delete(t, &pk)?;
    } else if w == Workload::WriteOnly {
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

/// What one run measured.
struct Outcome {
    threads: usize,
    secs: f64,
    commits: u64,
    hist: Histogram,
    redo_fsyncs: u64,
    binlog_fsyncs: u64,
    binlog_commits: u64,
    binlog_groups: u64,
    trigger_count: u64,
    trigger_timeout: u64,
    redo_bytes: u64,
    retries: u64,
    max_versions: u64,
    max_version_bytes: u64,
}

impl Outcome {
    fn tps(&self) -> f64 {
        self.commits as f64 / self.secs
    }
    fn us(&self, q: f64) -> f64 {
        self.hist.quantile(q) as f64 / 1000.0
    }
    fn group_size(&self) -> f64 {
        if self.binlog_groups == 0 {
            0.0
        } else {
            self.binlog_commits as f64 / self.binlog_groups as f64
        }
    }
    fn per_fsync(&self) -> f64 {
        if self.redo_fsyncs == 0 {
            0.0
        } else {
            self.commits as f64 / self.redo_fsyncs as f64
        }
    }
}

fn run_one(
    cfg: &Config,
    threads: usize,
    seconds: f64,
    rows: i64,
    w: Workload,
) -> Result<Outcome, Box<dyn std::error::Error>> {
    let vfs: Arc<dyn Vfs> = Arc::new(OsFs::new(cfg.innodb_flush_method, cfg.innodb_use_fdatasync));
    let (e, _) = Engine::open(vfs, cfg)?;
    let rows = rows.max(1);
    let t = setup(&e, rows)?;
    let before = e.status();
    let stop = AtomicBool::new(false);
    let retries = AtomicU64::new(0);
    let max_versions = AtomicU64::new(0);
    let max_version_bytes = AtomicU64::new(0);
    // New ids for insert_delete start past anything a previous run made.
    let next_id = AtomicU64::new(rows as u64 + 1 + (e.store().log().lsn() % (1 << 40)));
    let t0 = Instant::now();
    let threads = threads.max(1);
    let hists: Vec<(u64, Histogram)> = std::thread::scope(|sc| {
        let hs: Vec<_> = (0..threads)
            .map(|i| {
                let (e, t, stop, retries, next_id) = (&e, &t, &stop, &retries, &next_id);
                sc.spawn(move || {
                    let mut s = 0x9E37_79B9_7F4A_7C15u64 ^ ((i as u64 + 1) << 32);
                    let mut h = Histogram::default();
                    let mut n = 0u64;
                    while !stop.load(Ordering::Relaxed) {
                        let st = Instant::now();
                        match one_txn(e, t, rows, w, &mut s, next_id) {
                            Ok(()) => {
                                h.record(st.elapsed().as_nanos() as u64);
                                n += 1;
                            }
                            Err(err)
                                if err.code == 1213 || err.code == 1205 || err.code == 1062 =>
                            {
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
        let end = Instant::now() + Duration::from_secs_f64(seconds);
        while Instant::now() < end && !stop.load(Ordering::Relaxed) {
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
    let d = |k: &str| stat(&after, k).saturating_sub(stat(&before, k));
    let mut hist = Histogram::default();
    let mut commits = 0;
    for (n, h) in &hists {
        commits += n;
        hist.merge(h);
    }
    let out = Outcome {
        threads,
        secs,
        commits,
        hist,
        redo_fsyncs: d("Innodb_os_log_fsyncs"),
        binlog_fsyncs: d("Quire_binlog_fsyncs"),
        binlog_commits: d("Binlog_commits"),
        binlog_groups: d("Binlog_group_commits"),
        trigger_count: d("Binlog_group_commit_trigger_count"),
        trigger_timeout: d("Binlog_group_commit_trigger_timeout"),
        redo_bytes: d("Innodb_os_log_written"),
        retries: retries.load(Ordering::Relaxed),
        max_versions: max_versions.load(Ordering::Relaxed),
        max_version_bytes: max_version_bytes.load(Ordering::Relaxed),
    };
    e.close(true)?;
    Ok(out)
}

fn workload(name: &str) -> Result<Workload, String> {
    match name {
        "update_non_index" => Ok(Workload::UpdateNonIndex),
        "write_only" => Ok(Workload::WriteOnly),
        "insert_delete" => Ok(Workload::InsertDelete),
        w => Err(format!(
            "--workload {w}: expected update_non_index, write_only or insert_delete"
        )),
    }
}

pub fn run(a: CommitArgs, cfg: Config) -> Result<ExitCode, Box<dyn std::error::Error>> {
    let w = workload(&a.workload)?;
    if let Some(sw) = &a.sweep {
        return sweep(sw, &a, cfg, w);
    }
    let o = run_one(&cfg, a.threads, a.seconds, a.rows, w)?;
    if a.json {
        let j = serde_json::json!({
            "workload": a.workload,
            "threads": o.threads,
            "innodb_flush_log_at_trx_commit": cfg.innodb_flush_log_at_trx_commit,
            "log_bin": cfg.log_bin,
            "sync_binlog": cfg.sync_binlog,
            "binlog_group_commit_sync_delay": cfg.binlog_group_commit_sync_delay,
            "binlog_group_commit_sync_no_delay_count": cfg.binlog_group_commit_sync_no_delay_count,
            "quire_prepare_flush": if cfg.quire_prepare_flush_per_trx { "PER_TRANSACTION" } else { "GROUP" },
            "seconds": o.secs,
            "commits": o.commits,
            "tps": o.tps(),
            "p50_us": o.us(0.5),
            "p95_us": o.us(0.95),
            "p99_us": o.us(0.99),
            "p999_us": o.us(0.999),
            "fsyncs_per_s": o.redo_fsyncs as f64 / o.secs,
            "binlog_fsyncs_per_s": o.binlog_fsyncs as f64 / o.secs,
            "commits_per_fsync": o.per_fsync(),
            "group_size": o.group_size(),
            "redo_bytes_per_s": o.redo_bytes as f64 / o.secs,
            "retries": o.retries,
            "mvcc_versions_max": o.max_versions,
            "mvcc_version_bytes_max": o.max_version_bytes,
        });
        println!("{j}");
    } else {
        println!(
            "quire bench commit: workload={} threads={} trx_commit={} log_bin={} sync_binlog={} delay_us={} no_delay_count={} prepare_flush={} flush_method={}",
            a.workload,
            o.threads,
            cfg.innodb_flush_log_at_trx_commit,
            if cfg.log_bin { "ON" } else { "OFF" },
            cfg.sync_binlog,
            cfg.binlog_group_commit_sync_delay,
            cfg.binlog_group_commit_sync_no_delay_count,
            if cfg.quire_prepare_flush_per_trx { "PER_TRANSACTION" } else { "GROUP" },
            cfg.innodb_flush_method,
        );
        println!(
            "tps={:.0} p50_us={:.0} p95_us={:.0} p99_us={:.0} p99.9_us={:.0} redo_fsyncs/s={:.0} binlog_fsyncs/s={:.0} commits_per_redo_fsync={:.2} group_size={:.2} redo_MB/s={:.1} commits={} retries={} mvcc_versions_max={} mvcc_version_bytes_max={} seconds={:.1}",
            o.tps(),
            o.us(0.5),
            o.us(0.95),
            o.us(0.99),
            o.us(0.999),
            o.redo_fsyncs as f64 / o.secs,
            o.binlog_fsyncs as f64 / o.secs,
            o.per_fsync(),
            o.group_size(),
            o.redo_bytes as f64 / 1e6 / o.secs,
            o.commits,
            o.retries,
            o.max_versions,
            o.max_version_bytes,
            o.secs
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// The settings the MySQL tuning articles compare (../shared/TUNING-NOTES.md),
/// one run each, one table.
fn sweep(
    name: &str,
    a: &CommitArgs,
    base: Config,
    w: Workload,
) -> Result<ExitCode, Box<dyn std::error::Error>> {
    if name != "tuning" && name != "seeds" {
        return Err(format!("--sweep {name}: the preset is 'tuning' (alias 'seeds')").into());
    }
    let mut rows: Vec<(String, Config, usize)> = Vec::new();
    let with = |f: &dyn Fn(&mut Config)| {
        let mut c = base.clone();
        f(&mut c);
        c
    };
    rows.push((
        "log_bin=OFF trx_commit=1".into(),
        with(&|c| c.log_bin = false),
        16,
    ));
    for tc in [1u32, 2, 0] {
        rows.push((
            format!("trx_commit={tc} sync_binlog=1"),
            with(&|c| {
                c.log_bin = true;
                c.innodb_flush_log_at_trx_commit = tc;
                c.sync_binlog = 1;
            }),
            16,
        ));
    }
    rows.push((
        "trx_commit=1 sync_binlog=1000".into(),
        with(&|c| {
            c.log_bin = true;
            c.sync_binlog = 1000;
        }),
        16,
    ));
    for threads in [16usize, 64] {
        for (d, n) in [(0u64, 0u64), (10, 10), (50, 10)] {
            rows.push((
                format!("delay={d}us no_delay_count={n}"),
                with(&|c| {
                    c.log_bin = true;
                    c.binlog_group_commit_sync_delay = d;
                    c.binlog_group_commit_sync_no_delay_count = n;
                }),
                threads,
            ));
        }
    }
    // Grouped vs per-transaction prepare flush: at 2/1000 (the setting of
    // the MySQL 5.7.6 report, where the prepare "flush" is a write to the
    // OS) and at 1/1 (where it is an fsync).
    for (tc, sb, list) in [
        (2u32, 1000u32, &[32usize, 64, 128, 256][..]),
        (1, 1, &[32usize, 64, 128, 256][..]),
    ] {
        for &t in list {
            for per in [false, true] {
                rows.push((
                    format!(
                        "trx_commit={tc} sync_binlog={sb} prepare_flush={}",
                        if per { "PER_TRX" } else { "GROUP" }
                    ),
                    with(&|c| {
                        c.log_bin = true;
                        c.innodb_flush_log_at_trx_commit = tc;
                        c.sync_binlog = sb;
                        c.quire_prepare_flush_per_trx = per;
                    }),
                    t,
                ));
            }
        }
    }
    println!(
        "{:<48} {:>7} {:>9} {:>9} {:>9} {:>11} {:>11} {:>10} {:>9} {:>9}",
        "setting",
        "threads",
        "tps",
        "p50_us",
        "p99_us",
        "redo_fs/s",
        "binlog_fs/s",
        "group_size",
        "trig_cnt",
        "trig_tmo"
    );
    for (label, cfg, threads) in rows {
        let o = run_one(&cfg, threads, a.seconds, a.rows, w)?;
        println!(
            "{:<48} {:>7} {:>9.0} {:>9.0} {:>9.0} {:>11.0} {:>11.0} {:>10.2} {:>9} {:>9}",
            label,
            threads,
            o.tps(),
            o.us(0.5),
            o.us(0.99),
            o.redo_fsyncs as f64 / o.secs,
            o.binlog_fsyncs as f64 / o.secs,
            o.group_size(),
            o.trigger_count,
            o.trigger_timeout
        );
    }
    Ok(ExitCode::SUCCESS)
}
