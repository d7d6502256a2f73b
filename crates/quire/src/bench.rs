//! `quire bench btree`: B+tree throughput and latency on a real data directory.
//!
//! ```text
//!  load     N keys in random order, T threads      (ops/s, P50/P99/P99.9)
//!  get      random point reads of loaded keys      for --seconds
//!  insert   random new keys                         for --seconds
//!  scan     range scans of --scan-len entries       for --seconds
//!  recover  redo since the last checkpoint replayed (MB/s)
//! ```
//! No phase syncs redo per operation: these are storage-engine figures, the
//! commit path is measured by `quire bench commit`. The data directory is
//! left behind (cleanly shut down) for `quire check`.

use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use quire_config::Config;
use quire_io::{OsFs, Vfs};
use quire_storage::{Store, Tree};

use crate::hist::Histogram;

#[derive(clap::Subcommand, Debug)]
pub enum BenchCmd {
    /// Load N keys, then measure point gets, inserts and range scans.
    Btree(BtreeArgs),
    /// Small write transactions (sysbench-like) on the engine: TPS,
    /// latency percentiles, redo fsyncs and commits per fsync.
    Commit(crate::bench_commit::CommitArgs),
    /// sysbench's oltp_read_write statement mix through the SQL layer
    /// (prepared statements, no network): latency and CPU per statement.
    Sql(crate::bench_sql::SqlArgs),
    /// The query engine: a large ORDER BY within sort_buffer_size (wall
    /// time, RSS growth, spill files) and LIMIT 10 latency over it.
    Query(crate::bench_query::QueryArgs),
    /// Long values off-page: 1 MiB BLOB inserts and reads (MB/s, latency
    /// percentiles, LOB pages, redo bytes and fsyncs).
    Lob(crate::bench_lob::LobArgs),
}

#[derive(clap::Args, Debug)]
pub struct BtreeArgs {
    /// Keys to load.
    #[arg(long, default_value_t = 500_000)]
    keys: u64,
    /// Worker threads.
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// Seconds per measured phase (get, insert, scan).
    #[arg(long, default_value_t = 3.0)]
    seconds: f64,
    /// Value size in bytes.
    #[arg(long, default_value_t = 100)]
    value_bytes: usize,
    /// Entries per range scan.
    #[arg(long, default_value_t = 100)]
    scan_len: usize,
    /// Skip the recovery measurement.
    #[arg(long)]
    no_recovery: bool,
    /// Phases to run, comma-separated, from load,get,insert,scan
    /// (recovery follows unless --no-recovery).
    #[arg(long, default_value = "load,get,insert,scan", value_delimiter = ',')]
    phases: Vec<String>,
    /// One JSON object on stdout instead of the table.
    #[arg(long)]
    json: bool,
}

pub fn run(cmd: BenchCmd, cfg: Config) -> Result<ExitCode, Box<dyn std::error::Error>> {
    match cmd {
        BenchCmd::Btree(a) => btree(a, cfg),
        BenchCmd::Commit(a) => crate::bench_commit::run(a, cfg),
        BenchCmd::Sql(a) => crate::bench_sql::run(a, cfg),
        BenchCmd::Query(a) => crate::bench_query::run(a, cfg),
        BenchCmd::Lob(a) => crate::bench_lob::run(a, cfg),
    }
}

/// Key i: a bijective mix of i, big-endian, so load order is random.
fn key_of(i: u64) -> [u8; 8] {
    let mut z = i.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    z.to_be_bytes()
}

struct Phase {
    name: &'static str,
    ops: u64,
    secs: f64,
    hist: Histogram,
    counters: Vec<(String, u64)>,
}

fn counter_delta(before: &[(String, u64)], after: &[(String, u64)]) -> Vec<(String, u64)> {
    let keep = [
        "Innodb_pages_written",
        "Innodb_data_fsyncs",
        "Innodb_os_log_fsyncs",
        "Innodb_os_log_written",
        "Innodb_dblwr_writes",
        "Innodb_buffer_pool_wait_free",
        "Innodb_log_waits",
        "Innodb_pages_read",
    ];
    after
        .iter()
        .filter(|(k, _)| keep.contains(&k.as_str()))
        .map(|(k, v)| {
            let b = before
                .iter()
                .find(|(bk, _)| bk == k)
                .map(|x| x.1)
                .unwrap_or(0);
            (k.clone(), v.saturating_sub(b))
        })
        .collect()
}

/// Runs `f(thread, i, rng_state)` on T threads until `stop` says so.
fn run_phase(
    name: &'static str,
    store: &Store,
    threads: usize,
    until: Until,
    f: impl Fn(usize, u64, &mut u64) -> quire_storage::Result<()> + Sync,
) -> Result<Phase, Box<dyn std::error::Error>> {
    let before = store.status();
    let stop = AtomicBool::new(false);
    let next = AtomicU64::new(0);
    let t0 = Instant::now();
    let results: Vec<quire_storage::Result<(u64, Histogram)>> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..threads)
            .map(|t| {
                let stop = &stop;
                let next = &next;
                let f = &f;
                s.spawn(move || {
                    let mut h = Histogram::default();
                    let mut rng = 0x1234_5678_9abc_def0u64 ^ ((t as u64 + 1) << 40);
                    let mut n = 0u64;
                    loop {
                        let i = match until {
                            Until::Count(total) => {
                                let i = next.fetch_add(1, Ordering::Relaxed);
                                if i >= total {
                                    break;
                                }
                                i
                            }
                            Until::Time(_) => {
                                if n.is_multiple_of(256) && stop.load(Ordering::Relaxed) {
                                    break;
                                }
                                n
                            }
                        };
                        let a = Instant::now();
                        f(t, i, &mut rng)?;
                        h.record(a.elapsed().as_nanos() as u64);
                        n += 1;
                    }
                    Ok((n, h))
                })
            })
            .collect();
        if let Until::Time(d) = until {
            std::thread::sleep(d);
            stop.store(true, Ordering::Relaxed);
        }
        hs.into_iter()
            .map(|h| h.join().expect("bench worker panicked"))
            .collect()
    });
    let secs = t0.elapsed().as_secs_f64();
    let mut hist = Histogram::default();
    let mut ops = 0;
    for r in results {
        let (n, h) = r?;
        ops += n;
        hist.merge(&h);
    }
    Ok(Phase {
        name,
        ops,
        secs,
        hist,
        counters: counter_delta(&before, &store.status()),
    })
}

#[derive(Clone, Copy)]
enum Until {
    Count(u64),
    Time(Duration),
}

fn xorshift(s: &mut u64) -> u64 {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    *s
}

fn btree(a: BtreeArgs, cfg: Config) -> Result<ExitCode, Box<dyn std::error::Error>> {
    let vfs: Arc<dyn Vfs> = Arc::new(OsFs::new(cfg.innodb_flush_method, cfg.innodb_use_fdatasync));
    let store = Store::open(vfs.clone(), &cfg)?;
    let tree: Tree = store.create_index("bench")?;
    let value = vec![0xABu8; a.value_bytes];
    let threads = a.threads.max(1);
    let dur = Duration::from_secs_f64(a.seconds);
    let mut phases = Vec::new();

    let n = a.keys;
    let want = |p: &str| a.phases.iter().any(|x| x == p);
    if want("load") {
        phases.push(run_phase(
            "load",
            &store,
            threads,
            Until::Count(n),
            |_, i, _| tree.put(&key_of(i), &value).map(|_| ()),
        )?);
    }
    // Settle: write out what the load dirtied, so the read phases measure
    // reads rather than the page cleaner catching up on the other core.
    store.checkpoint()?;
    if want("get") {
        phases.push(run_phase(
            "get",
            &store,
            threads,
            Until::Time(dur),
            |_, _, r| {
                let k = key_of(xorshift(r) % n.max(1));
                let found = tree.get_with(&k, |v| v.is_some())?;
                debug_assert!(found);
                Ok(())
            },
        )?);
    }
    let inserted = AtomicU64::new(0);
    if want("insert") {
        phases.push(run_phase(
            "insert",
            &store,
            threads,
            Until::Time(dur),
            |_, _, r| {
                // New keys: outside the loaded range [0, n).
                let i = n + (xorshift(r) >> 8);
                inserted.fetch_add(1, Ordering::Relaxed);
                tree.put(&key_of(i), &value).map(|_| ())
            },
        )?);
    }
    let scan_len = a.scan_len;
    if want("scan") {
        phases.push(run_phase(
            "scan",
            &store,
            threads,
            Until::Time(dur),
            |_, _, r| {
                let start = key_of(xorshift(r) % n.max(1)).to_vec();
                let mut c = tree.range(
                    std::ops::Bound::Included(start),
                    std::ops::Bound::Unbounded,
                    false,
                );
                for _ in 0..scan_len {
                    match c.next() {
                        Some(e) => {
                            e?;
                        }
                        None => break,
                    }
                }
                Ok(())
            },
        )?);
    }
    let final_status = store.status();

    // Recovery: write out the redo, stop without flushing pages (as a
    // process crash after the log write would), reopen and time the replay.
    let mut recovery = None;
    if !a.no_recovery {
        store.sync_log()?;
        store.close(false)?;
        drop(tree);
        drop(store);
        let s2 = Store::open(vfs.clone(), &cfg)?;
        recovery = Some(s2.report().clone());
        s2.close(true)?;
    } else {
        store.close(true)?;
    }

    if a.json {
        let mut o = serde_json::Map::new();
        o.insert("keys".into(), n.into());
        o.insert("threads".into(), threads.into());
        for p in &phases {
            let mut ph = serde_json::Map::new();
            ph.insert("ops".into(), p.ops.into());
            ph.insert("ops_per_s".into(), (p.ops as f64 / p.secs).round().into());
            ph.insert(
                "p50_us".into(),
                (p.hist.quantile(0.5) as f64 / 1000.0).into(),
            );
            ph.insert(
                "p99_us".into(),
                (p.hist.quantile(0.99) as f64 / 1000.0).into(),
            );
            ph.insert(
                "p999_us".into(),
                (p.hist.quantile(0.999) as f64 / 1000.0).into(),
            );
            for (k, v) in &p.counters {
                ph.insert(k.clone(), (*v).into());
            }
            o.insert(p.name.into(), ph.into());
        }
        if let Some(r) = &recovery {
            let secs = r.redo_apply_duration.as_secs_f64().max(1e-9);
            o.insert("recovery_redo_bytes".into(), r.redo_bytes.into());
            o.insert("recovery_mtrs".into(), r.mtrs_applied.into());
            o.insert("recovery_apply_s".into(), secs.into());
            o.insert(
                "recovery_mb_per_s".into(),
                (r.redo_bytes as f64 / 1e6 / secs).into(),
            );
            o.insert("recovery_total_s".into(), r.duration.as_secs_f64().into());
        }
        let counters: serde_json::Map<String, serde_json::Value> = final_status
            .iter()
            .map(|(k, v)| (k.clone(), (*v).into()))
            .collect();
        o.insert("counters".into(), counters.into());
        println!("{}", serde_json::Value::Object(o));
    } else {
        println!(
            "quire bench btree: keys={n} threads={threads} value_bytes={} page_size={} buffer_pool={} flush_method={} doublewrite={}",
            a.value_bytes,
            cfg.innodb_page_size,
            quire_config::format_size(cfg.innodb_buffer_pool_size),
            cfg.innodb_flush_method,
            cfg.innodb_doublewrite
        );
        println!(
            "{:<8} {:>10} {:>12} {:>9} {:>9} {:>9}   counters during the phase",
            "phase", "ops", "ops/s", "p50_us", "p99_us", "p99.9_us"
        );
        for p in &phases {
            let c: Vec<String> = p
                .counters
                .iter()
                .filter(|(_, v)| *v > 0)
                .map(|(k, v)| format!("{}={v}", k.trim_start_matches("Innodb_")))
                .collect();
            println!(
                "{:<8} {:>10} {:>12.0} {:>9.2} {:>9.2} {:>9.2}   {}",
                p.name,
                p.ops,
                p.ops as f64 / p.secs,
                p.hist.quantile(0.5) as f64 / 1000.0,
                p.hist.quantile(0.99) as f64 / 1000.0,
                p.hist.quantile(0.999) as f64 / 1000.0,
                c.join(" ")
            );
        }
        if let Some(r) = &recovery {
            let secs = r.redo_apply_duration.as_secs_f64().max(1e-9);
            println!(
                "recover  redo_bytes={} mtrs={} pages_applied={} apply_s={:.3} apply_MB/s={:.1} total_s={:.3} (checkpoint {} -> end {})",
                r.redo_bytes,
                r.mtrs_applied,
                r.pages_applied,
                secs,
                r.redo_bytes as f64 / 1e6 / secs,
                r.duration.as_secs_f64(),
                r.checkpoint_lsn,
                r.end_lsn
            );
        }
        let show: Vec<String> = final_status
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        println!("counters: {}", show.join(" "));
        println!(
            "datadir {} left for `quire check --datadir {}`",
            cfg.datadir.display(),
            cfg.datadir.display()
        );
    }
    Ok(ExitCode::SUCCESS)
}
