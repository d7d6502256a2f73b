//! `quire crashtest --layer storage`: crash the store over and over and check
//! that what comes back is exactly what the log promised.
//!
//! ```text
//!   +--> open (= recover) -----> verify: tree == base + ops with lsn <= end_lsn
//!   |        |                           end_lsn >= redo synced before the crash
//!   |        |                           quire check: checksums, structure, accounting
//!   |        v
//!   |    workload: T threads of put/delete on a small key space, each op one
//!   |    mini-transaction whose end LSN is recorded; a flusher thread writes
//!   |    batches (doublewrite + in place) and checkpoints; threads sync redo
//!   |    now and then like commits would
//!   |        |
//!   |    SimFs power-off after a random number of I/O operations (a write
//!   |    in flight is cut short): mid doublewrite batch, mid redo write, ...
//!   |        v
//!   +--- crash: each unsynced write kept, dropped, or torn at 512 B / 4 KiB
//! ```
//!
//! One cycle in ten also powers off *during* recovery, to check that
//! recovery is itself crash-safe. With doublewrite OFF (or DETECT_ONLY), a
//! torn page makes recovery refuse to start: counted as `torn_detected`,
//! then the run starts over on a fresh directory. Any other failure, and
//! any mismatch, is a violation; the command exits non-zero if there is one.
//!
//! The workload's order depends on thread scheduling, so two runs with the
//! same seed differ in detail; the seed fixes the operations each thread
//! draws and every crash decision SimFs makes for a given I/O sequence.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use quire_config::{Config, DoublewriteMode};
use quire_engine::offpage::check_datadir;
use quire_io::{CrashMode, Rng, SimFs, Vfs};
use quire_storage::{Lsn, StorageError, Store};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Which layer to torture: storage, engine (binlog off) or binlog.
    #[arg(long, default_value = "storage")]
    layer: String,
    /// Seed for the workload and the crash decisions (default: from the clock).
    #[arg(long)]
    seed: Option<u64>,
    /// Crashes to run.
    #[arg(long, default_value_t = 100)]
    crashes: u64,
    /// Worker threads.
    #[arg(long, default_value_t = 3)]
    threads: usize,
    /// Crash kind: power (unsynced writes dropped or torn) or process
    /// (every completed write survives).
    #[arg(long, default_value = "power")]
    crash: String,
    /// Print a line per crash.
    #[arg(long)]
    verbose: bool,
    /// engine/binlog: after every N-th crash, interrupt the recovery of
    /// that disk at each of its I/O operations in turn, each followed by
    /// a full recovery judged against the model (0: never).
    #[arg(long, default_value_t = 10)]
    recovery_sweep_every: u64,
    /// engine/binlog: at most this many interruption points per sweep,
    /// evenly spread over the recovery's I/O operations.
    #[arg(long, default_value_t = 400)]
    recovery_sweep_points: u64,
}

const INDEX: &str = "crashtest";
const KEYSPACE: u64 = 6000;

#[derive(Clone, Debug)]
enum Op {
    Put(Vec<u8>, Vec<u8>),
    Del(Vec<u8>),
}

fn key(i: u64) -> Vec<u8> {
    // Variable length keys: 4..=40 bytes, order by i within a length class
    // does not matter; they only need to be distinct and deterministic.
    let mut k = (i as u32).to_be_bytes().to_vec();
    k.extend(std::iter::repeat_n(b'k', (i % 37) as usize));
    k
}

fn value(rng: &mut Rng, i: u64) -> Vec<u8> {
    let len = if rng.chance(0.05) {
        rng.range(1000, 3000)
    } else {
        rng.range(0, 400)
    } as usize;
    let mut v = vec![0u8; len];
    rng.fill(&mut v);
    if len >= 8 {
        v[..8].copy_from_slice(&i.to_le_bytes());
    }
    v
}

#[derive(Default)]
struct Totals {
    crashes: u64,
    violations: u64,
    torn_restored: u64,
    torn_detected: u64,
    recovered_mtrs: u64,
    ops: u64,
    resets: u64,
    recovery_crashes: u64,
}

pub fn run(a: Args, mut cfg: Config) -> Result<ExitCode, Box<dyn std::error::Error>> {
    let crash_power = match a.crash.as_str() {
        "power" => true,
        "process" => false,
        other => return Err(format!("--crash {other}: expected 'power' or 'process'").into()),
    };
    let seed = a.seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(1)
    });
    match a.layer.as_str() {
        "storage" => {}
        "engine" | "binlog" => {
            return crate::crashtest_engine::run(
                crate::crashtest_engine::Options {
                    seed,
                    crashes: a.crashes,
                    threads: a.threads.max(1),
                    power: crash_power,
                    verbose: a.verbose,
                    binlog: a.layer == "binlog",
                    sweep: crate::crashtest_engine::Sweep {
                        every: a.recovery_sweep_every,
                        max_points: a.recovery_sweep_points,
                    },
                },
                cfg,
            )
        }
        other => {
            return Err(
                format!("crashtest --layer {other}: expected storage, engine or binlog").into(),
            )
        }
    }
    // Small defaults so that evictions, flushes and checkpoint wrap-around
    // happen within a short run; explicit settings win.
    let d = Config::default();
    if cfg.innodb_buffer_pool_size == d.innodb_buffer_pool_size {
        cfg.innodb_buffer_pool_size = 5 << 20;
    }
    if cfg.innodb_redo_log_capacity == d.innodb_redo_log_capacity {
        cfg.innodb_redo_log_capacity = 8 << 20;
    }
    if cfg.innodb_log_buffer_size == d.innodb_log_buffer_size {
        cfg.innodb_log_buffer_size = 256 << 10;
    }
    cfg.datadir = PathBuf::from("/sim/data");
    if cfg.innodb_doublewrite_dir.is_some() {
        cfg.innodb_doublewrite_dir = Some(PathBuf::from("/sim/dblwr"));
    }
    let t0 = Instant::now();
    let mut rng = Rng::new(seed);
    let mut tot = Totals::default();
    let mut sim = SimFs::new(cfg.innodb_flush_method);
    let mut base: BTreeMap<Vec<u8>, Vec<u8>> = BTreeMap::new();
    // Ops since `base`, with the end LSN of each, and the redo LSN known
    // durable when the machine went down.
    let mut pending: Vec<(Lsn, Op)> = Vec::new();
    let mut synced: Lsn = 0;
    let mut fresh = true;

    while tot.crashes < a.crashes {
        let vfs: Arc<dyn Vfs> = Arc::new(sim.clone());
        if fresh {
            sim = SimFs::new(cfg.innodb_flush_method);
            let vfs: Arc<dyn Vfs> = Arc::new(sim.clone());
            if let Some(d) = &cfg.innodb_doublewrite_dir {
                vfs.create_dir_all(d)?;
            }
            let store = Store::open(vfs.clone(), &cfg)?;
            store.create_index(INDEX)?;
            store.sync_log()?;
            store.checkpoint()?;
            store.close(true)?;
            base.clear();
            pending.clear();
            synced = 0;
            fresh = false;
            continue;
        }
        // Sometimes crash during recovery itself.
        let crash_in_recovery = rng.chance(0.1);
        if crash_in_recovery {
            sim.arm_crash_after(rng.below(40));
        }
        let opened = Store::open(vfs.clone(), &cfg);
        let store = match opened {
            Err(e) if sim.is_down() => {
                let _ = e;
                tot.recovery_crashes += 1;
                tot.crashes += 1;
                crash(&sim, crash_power, &mut rng);
                continue;
            }
            Err(e) => {
                let torn = matches!(&e, StorageError::Recovery(m) if m.contains("torn") || m.contains("could not restore"));
                if torn && cfg.innodb_doublewrite != DoublewriteMode::On {
                    tot.torn_detected += 1;
                    if a.verbose {
                        println!("crash {}: torn page detected, start refused (expected with doublewrite {}): {e}", tot.crashes, cfg.innodb_doublewrite);
                    }
                } else {
                    tot.violations += 1;
                    println!(
                        "VIOLATION after crash {}: recovery failed: {e}",
                        tot.crashes
                    );
                }
                tot.resets += 1;
                fresh = true;
                continue;
            }
            Ok(s) => s,
        };
        sim.disarm();
        let rep = store.report().clone();
        tot.torn_restored += rep.torn_restored;
        tot.recovered_mtrs += rep.mtrs_applied;

        // Verify against the model.
        let mut problems = Vec::new();
        if rep.end_lsn < synced {
            problems.push(format!(
                "recovered up to LSN {} but redo was synced up to {synced}",
                rep.end_lsn
            ));
        }
        let mut expect = base.clone();
        pending.sort_by_key(|p| p.0);
        for (lsn, op) in &pending {
            if *lsn > rep.end_lsn {
                break;
            }
            match op {
                Op::Put(k, v) => {
                    expect.insert(k.clone(), v.clone());
                }
                Op::Del(k) => {
                    expect.remove(k);
                }
            }
        }
        let got = match store.index(INDEX) {
            Ok(Some(t)) => t
                .scan_all()
                .map(|v| v.into_iter().collect::<BTreeMap<_, _>>()),
            Ok(None) => Err(StorageError::BadDatadir("index missing".into())),
            Err(e) => Err(e),
        };
        match got {
            Err(e) => problems.push(format!("reading the tree failed: {e}")),
            Ok(got) => {
                if got != expect {
                    let missing = expect.keys().filter(|k| !got.contains_key(*k)).count();
                    let extra = got.keys().filter(|k| !expect.contains_key(*k)).count();
                    let differ = got
                        .iter()
                        .filter(|(k, v)| expect.get(*k).is_some_and(|e| e != *v))
                        .count();
                    problems.push(format!(
                        "tree differs from the model prefix at LSN {}: {missing} missing, {extra} extra, {differ} different values ({} ops pending, {} applied)",
                        rep.end_lsn,
                        pending.len(),
                        pending.iter().filter(|p| p.0 <= rep.end_lsn).count()
                    ));
                }
                base = got;
            }
        }
        if let Err(e) = store.checkpoint() {
            problems.push(format!("checkpoint after recovery failed: {e}"));
        } else {
            match check_datadir(&vfs, &cfg.datadir) {
                Ok(r) if r.is_ok() => {}
                Ok(r) => problems.push(format!("quire check: {}", r.errors.join("; "))),
                Err(e) => problems.push(format!("quire check failed: {e}")),
            }
        }
        if !problems.is_empty() {
            tot.violations += 1;
            for p in &problems {
                println!("VIOLATION after crash {}: {p}", tot.crashes);
            }
        }
        pending.clear();
        if a.verbose {
            println!(
                "crash {}: recovered checkpoint={} end={} mtrs={} torn_restored={} keys={}",
                tot.crashes,
                rep.checkpoint_lsn,
                rep.end_lsn,
                rep.mtrs_applied,
                rep.torn_restored,
                base.len()
            );
        }

        // Workload until the power goes.
        let cap = if rng.chance(0.3) { 60 } else { 600 };
        let budget = 1 + rng.below(cap);
        sim.arm_crash_after(budget);
        let (ops, synced_now) =
            workload(&store, &sim, a.threads.max(1), rng.next_u64(), &mut pending);
        tot.ops += ops;
        synced = synced_now;
        let _ = store.close(false);
        drop(store);
        crash(&sim, crash_power, &mut rng);
        tot.crashes += 1;
    }
    println!(
        "layer=storage crashes={} violations={} torn_restored={} torn_detected={} recovery_crashes={} resets={} recovered_mtrs={} ops={} doublewrite={} crash={} elapsed_s={:.1} seed={seed}",
        tot.crashes,
        tot.violations,
        tot.torn_restored,
        tot.torn_detected,
        tot.recovery_crashes,
        tot.resets,
        tot.recovered_mtrs,
        tot.ops,
        cfg.innodb_doublewrite,
        a.crash,
        t0.elapsed().as_secs_f64()
    );
    Ok(if tot.violations == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// Crashes the simulated machine: a power cut tearing at a random sector
/// size (512 B or 4 KiB), or a process kill.
pub(crate) fn crash(sim: &SimFs, power: bool, rng: &mut Rng) {
    let mode = if power {
        CrashMode::Power {
            sector: if rng.chance(0.5) { 512 } else { 4096 },
        }
    } else {
        CrashMode::Process
    };
    sim.crash(mode, rng.next_u64());
}

/// Runs writers, a flusher and redo syncs until SimFs powers off (or a cap
/// of operations is reached, then forces it). Returns (ops, synced LSN).
fn workload(
    store: &Store,
    sim: &SimFs,
    threads: usize,
    seed: u64,
    pending: &mut Vec<(Lsn, Op)>,
) -> (u64, Lsn) {
    let stop = AtomicBool::new(false);
    let ops = AtomicU64::new(0);
    let log: Mutex<Vec<(Lsn, Op)>> = Mutex::new(Vec::new());
    let shared = store.shared().clone();
    let tree = match store.index(INDEX) {
        Ok(Some(t)) => t,
        _ => return (0, 0),
    };
    std::thread::scope(|s| {
        for t in 0..threads {
            let (stop, ops, log, tree) = (&stop, &ops, &log, &tree);
            s.spawn(move || {
                let mut rng = Rng::new(seed ^ ((t as u64 + 1) * 0x9E37_79B9));
                let grow = rng.chance(0.6);
                let mut local = Vec::new();
                while !stop.load(Ordering::Relaxed) {
                    let i = rng.below(KEYSPACE);
                    let k = key(i);
                    let put = if grow {
                        rng.chance(0.8)
                    } else {
                        rng.chance(0.25)
                    };
                    let r = if put {
                        let v = value(&mut rng, i);
                        tree.put(&k, &v).map(|l| Some((l, Op::Put(k, v))))
                    } else {
                        tree.delete(&k).map(|l| l.map(|l| (l, Op::Del(k))))
                    };
                    match r {
                        Ok(Some(x)) => local.push(x),
                        Ok(None) => {}
                        Err(_) => break,
                    }
                    ops.fetch_add(1, Ordering::Relaxed);
                    if rng.chance(0.02) && store.sync_log().is_err() {
                        break;
                    }
                }
                log.lock().extend(local);
            });
        }
        // Flusher: small batches through the doublewrite buffer, checkpoints.
        let (stop2, shared2) = (&stop, &shared);
        s.spawn(move || {
            while !stop2.load(Ordering::Relaxed) {
                if shared2
                    .pool
                    .flush_batch(shared2.pool.batch_pages(), Lsn::MAX)
                    .is_err()
                    || shared2.make_checkpoint().is_err()
                {
                    break;
                }
                std::thread::sleep(Duration::from_micros(300));
            }
        });
        let deadline = Instant::now() + Duration::from_secs(3);
        while !sim.is_down() {
            if Instant::now() > deadline || ops.load(Ordering::Relaxed) > 200_000 {
                sim.arm_crash_after(0);
                // The next I/O of anyone trips it; make sure one happens.
                let _ = store.sync_log();
                let _ = shared.pool.flush_batch(1, Lsn::MAX);
                if !sim.is_down() {
                    // Nothing left to write: power off at the next op anyway.
                    break;
                }
            }
            std::thread::sleep(Duration::from_micros(200));
        }
        stop.store(true, Ordering::Relaxed);
    });
    let synced = shared.log.flushed_lsn();
    pending.extend(log.into_inner());
    (ops.load(Ordering::Relaxed), synced)
}
