//! `quire bench sql`: sysbench's `oltp_read_write` statement mix through the
//! SQL layer (`quire_sql::Session`, server-side prepared statements as
//! sysbench's default `--db-ps-mode=auto` sends them), without the network.
//!
//! ```text
//!   per transaction (sysbench oltp_read_write, --range-size=100):
//!     BEGIN
//!     10 x point    SELECT c FROM sbtest1 WHERE id=?
//!          range    SELECT c FROM sbtest1 WHERE id BETWEEN ? AND ?
//!          sum      SELECT SUM(k) FROM sbtest1 WHERE id BETWEEN ? AND ?
//!          order    SELECT c FROM sbtest1 WHERE id BETWEEN ? AND ? ORDER BY c
//!          distinct SELECT DISTINCT c FROM sbtest1 WHERE id BETWEEN ? AND ? ORDER BY c
//!          upd_idx  UPDATE sbtest1 SET k=k+1 WHERE id=?
//!          upd_nidx UPDATE sbtest1 SET c=? WHERE id=?
//!          delete   DELETE FROM sbtest1 WHERE id=?
//!          insert   INSERT INTO sbtest1 (id, k, c, pad) VALUES (?, ?, ?, ?)
//!     COMMIT
//! ```
//!
//! What it prints, per statement kind: count, P50/P99/P99.9 latency and the
//! CPU time the calling thread spent per statement (`RUSAGE_THREAD`), which
//! stays meaningful on a shared, noisy machine where wall-clock latency does
//! not. The query path's cost is this CPU figure; a change to the binder,
//! optimizer or operators shows here first. The network side (`quire
//! serve` + sysbench) is `bench/sysbench-vs-mariadb.sh`.

use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use quire_config::Config;
use quire_engine::{Engine, Value};
use quire_io::{OsFs, Vfs};
use quire_sql::Session;

use crate::hist::Histogram;

#[derive(clap::Args, Debug)]
pub struct SqlArgs {
    /// Client threads (sessions).
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// Seconds to run.
    #[arg(long, default_value_t = 10.0)]
    seconds: f64,
    /// Rows in sbtest1 (loaded if the table does not exist).
    #[arg(long, default_value_t = 10_000)]
    rows: i64,
    /// Rows read by the range statements (sysbench --range-size).
    #[arg(long, default_value_t = 100)]
    range_size: i64,
    /// Run only these statement kinds (comma-separated names from the
    /// table above, e.g. `point` or `range,order`); BEGIN/COMMIT always run.
    #[arg(long)]
    only: Option<String>,
}

/// The statement kinds, in the order of a transaction.
const KINDS: [(&str, &str); 11] = [
    ("begin", "BEGIN"),
    ("point", "SELECT c FROM sbtest1 WHERE id=?"),
    ("range", "SELECT c FROM sbtest1 WHERE id BETWEEN ? AND ?"),
    ("sum", "SELECT SUM(k) FROM sbtest1 WHERE id BETWEEN ? AND ?"),
    (
        "order",
        "SELECT c FROM sbtest1 WHERE id BETWEEN ? AND ? ORDER BY c",
    ),
    (
        "distinct",
        "SELECT DISTINCT c FROM sbtest1 WHERE id BETWEEN ? AND ? ORDER BY c",
    ),
    ("upd_idx", "UPDATE sbtest1 SET k=k+1 WHERE id=?"),
    ("upd_nidx", "UPDATE sbtest1 SET c=? WHERE id=?"),
    ("delete", "DELETE FROM sbtest1 WHERE id=?"),
    (
        "insert",
        "INSERT INTO sbtest1 (id, k, c, pad) VALUES (?, ?, ?, ?)",
    ),
    ("commit", "COMMIT"),
];

/// One thread's result: transactions done, retried, per-kind figures.
type ThreadResult = Result<(u64, u64, Vec<Figures>), String>;

/// Per-kind figures of one thread.
#[derive(Clone, Default)]
struct Figures {
    hist: Histogram,
    cpu_ns: u64,
}

fn rnd(s: &mut u64) -> u64 {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    *s
}

/// sysbench's `###########-...` style filler: digits in groups.
fn text(s: &mut u64, len: usize) -> String {
    let mut out = String::with_capacity(len);
    while out.len() < len {
        let d = (rnd(s) % 10) as u8;
        out.push(char::from(b'0' + d));
    }
    out
}

/// CPU time of the calling thread, in nanoseconds.
fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec we own.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return 0;
    }
    (ts.tv_sec as u64)
        .saturating_mul(1_000_000_000)
        .saturating_add(ts.tv_nsec as u64)
}

fn load(e: &Engine, rows: i64) -> Result<(), Box<dyn std::error::Error>> {
    let mut s = Session::new(e.clone(), "root");
    s.execute("CREATE DATABASE IF NOT EXISTS sbtest")?;
    s.execute("USE sbtest")?;
    let exists = s
        .execute("SELECT COUNT(*) FROM information_schema.tables WHERE table_schema='sbtest' AND table_name='sbtest1'")
        .ok()
        .and_then(|o| match o {
            quire_sql::Output::Rows { rows, .. } => rows.first().and_then(|r| r.first()).cloned(),
            _ => None,
        });
    if matches!(exists, Some(Value::Int(1)) | Some(Value::UInt(1))) {
        return Ok(());
    }
    s.execute(
        "CREATE TABLE IF NOT EXISTS sbtest1 (id INT NOT NULL AUTO_INCREMENT, k INT NOT NULL DEFAULT 0, \
         c CHAR(120) NOT NULL DEFAULT '', pad CHAR(60) NOT NULL DEFAULT '', PRIMARY KEY (id), KEY k_1 (k))",
    )?;
    let n = s
        .execute("SELECT COUNT(*) FROM sbtest1")
        .ok()
        .and_then(|o| match o {
            quire_sql::Output::Rows { rows, .. } => rows.first().and_then(|r| r.first()).cloned(),
            _ => None,
        });
    if !matches!(n, Some(Value::Int(0)) | Some(Value::UInt(0))) {
        return Ok(());
    }
    let mut seed = 0x1234_5678_9abc_def1u64;
    let mut id = 1;
    while id <= rows {
        let mut sql = String::from("INSERT INTO sbtest1 (id, k, c, pad) VALUES ");
        let end = (id + 999).min(rows);
        for i in id..=end {
            if i > id {
                sql.push(',');
            }
            let k = (rnd(&mut seed) % rows as u64) as i64 + 1;
            sql.push_str(&format!(
                "({i},{k},'{}','{}')",
                text(&mut seed, 119),
                text(&mut seed, 59)
            ));
        }
        s.execute(&sql)?;
        id = end + 1;
    }
    Ok(())
}

fn txn(
    s: &mut Session,
    ids: &[u32],
    a: &SqlArgs,
    seed: &mut u64,
    figs: &mut [Figures],
) -> quire_sql::SqlResult<()> {
    let rows = a.rows.max(1) as u64;
    let mut id = || (rnd(seed) % rows) as i64 + 1;
    let mut plan: Vec<(usize, Vec<Value>)> = Vec::with_capacity(20);
    plan.push((0, Vec::new()));
    for _ in 0..10 {
        plan.push((1, vec![Value::Int(id())]));
    }
    for k in 2..=5 {
        let lo = id();
        plan.push((k, vec![Value::Int(lo), Value::Int(lo + a.range_size - 1)]));
    }
    plan.push((6, vec![Value::Int(id())]));
    let mut ts = rnd(seed);
    let mut id = || (rnd(seed) % rows) as i64 + 1;
    plan.push((7, vec![Value::text(&text(&mut ts, 119)), Value::Int(id())]));
    let del = id();
    plan.push((8, vec![Value::Int(del)]));
    plan.push((
        9,
        vec![
            Value::Int(del),
            Value::Int(id()),
            Value::text(&text(&mut ts, 119)),
            Value::text(&text(&mut ts, 59)),
        ],
    ));
    plan.push((10, Vec::new()));
    if let Some(only) = &a.only {
        plan.retain(|(k, _)| {
            let name = KINDS[*k].0;
            matches!(name, "begin" | "commit") || only.split(',').any(|o| o.trim() == name)
        });
    }
    for (k, params) in plan {
        let (c0, t0) = (thread_cpu_ns(), Instant::now());
        let r = s.execute_prepared(ids[k], params);
        let (c1, t1) = (thread_cpu_ns(), Instant::now());
        if let Err(e) = r {
            let _ = s.execute("ROLLBACK");
            return Err(e);
        }
        figs[k].hist.record((t1 - t0).as_nanos() as u64);
        figs[k].cpu_ns += c1.saturating_sub(c0);
    }
    Ok(())
}

pub fn run(a: SqlArgs, cfg: Config) -> Result<ExitCode, Box<dyn std::error::Error>> {
    let vfs: Arc<dyn Vfs> = Arc::new(OsFs::new(cfg.innodb_flush_method, cfg.innodb_use_fdatasync));
    let (e, _) = Engine::open(vfs, &cfg)?;
    load(&e, a.rows.max(1))?;
    let stop = AtomicBool::new(false);
    let t0 = Instant::now();
    let threads = a.threads.max(1);
    let per_thread: Vec<ThreadResult> = std::thread::scope(|sc| {
        let hs: Vec<_> = (0..threads)
            .map(|i| {
                let (e, stop, a) = (&e, &stop, &a);
                sc.spawn(move || -> ThreadResult {
                    let mut s = Session::new(e.clone(), "root");
                    s.execute("USE sbtest").map_err(|x| x.to_string())?;
                    let mut ids = Vec::with_capacity(KINDS.len());
                    for (_, sql) in KINDS {
                        ids.push(s.prepare(sql).map_err(|x| x.to_string())?.id);
                    }
                    let mut seed = 0x9E37_79B9_7F4A_7C15u64 ^ ((i as u64 + 1) << 32);
                    let mut figs = vec![Figures::default(); KINDS.len()];
                    let (mut done, mut retried) = (0u64, 0u64);
                    while !stop.load(Ordering::Relaxed) {
                        match txn(&mut s, &ids, a, &mut seed, &mut figs) {
                            Ok(()) => done += 1,
                            Err(x) if matches!(x.code, 1213 | 1205 | 1062) => retried += 1,
                            Err(x) => {
                                stop.store(true, Ordering::Relaxed);
                                return Err(x.to_string());
                            }
                        }
                    }
                    Ok((done, retried, figs))
                })
            })
            .collect();
        std::thread::sleep(Duration::from_secs_f64(a.seconds.max(0.1)));
        stop.store(true, Ordering::Relaxed);
        hs.into_iter()
            .map(|h| h.join().unwrap_or_else(|_| Err("thread panicked".into())))
            .collect()
    });
    let secs = t0.elapsed().as_secs_f64();
    let mut figs = vec![Figures::default(); KINDS.len()];
    let (mut done, mut retried) = (0u64, 0u64);
    for r in per_thread {
        let (d, rt, f) = r.map_err(|x| format!("quire bench sql: {x}"))?;
        done += d;
        retried += rt;
        for (a, b) in figs.iter_mut().zip(&f) {
            a.hist.merge(&b.hist);
            a.cpu_ns += b.cpu_ns;
        }
    }
    print_report(&a, threads, secs, done, retried, &figs);
    Ok(ExitCode::SUCCESS)
}

fn print_report(a: &SqlArgs, threads: usize, secs: f64, done: u64, retried: u64, figs: &[Figures]) {
    println!(
        "quire bench sql: oltp_read_write mix, rows={} range_size={} threads={threads} seconds={secs:.1}",
        a.rows, a.range_size
    );
    let cpu_total: u64 = figs.iter().map(|f| f.cpu_ns).sum();
    println!(
        "transactions {done} ({:.1}/s), retried {retried}, CPU per transaction {:.1} us",
        done as f64 / secs,
        cpu_total as f64 / 1e3 / done.max(1) as f64
    );
    println!(
        "{:<9} {:>9} {:>9} {:>9} {:>10} {:>12}",
        "statement", "count", "p50_us", "p99_us", "p99.9_us", "cpu_us/stmt"
    );
    for ((name, _), f) in KINDS.iter().zip(figs) {
        let n = f.hist.count().max(1);
        let us = |q: f64| f.hist.quantile(q) as f64 / 1e3;
        println!(
            "{name:<9} {:>9} {:>9.1} {:>9.1} {:>10.1} {:>12.2}",
            f.hist.count(),
            us(0.5),
            us(0.99),
            us(0.999),
            f.cpu_ns as f64 / 1e3 / n as f64
        );
    }
}
