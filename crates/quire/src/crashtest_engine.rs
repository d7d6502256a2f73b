//! `quire crashtest --layer engine|binlog`: transactions, crashes, recovery,
//! and a model of every commit (binlog off for `engine`, on for `binlog`).
//!
//! ```text
//!  bank.accounts (id INT PK, balance BIGINT, KEY(balance))   20 x 1000: total 20000
//!  bank.items    (id BIGINT PK, owner INT, tag VARCHAR(40), KEY(owner), UNIQUE(tag))
//!
//!  transactions: transfer (lock two accounts, move an amount)
//!                add item (insert through both secondary indexes)
//!                drop item (find one through the owner index, delete it)
//!                3 in 100: replace one owner's items by 2,500 new ones (a
//!                large transaction: its record goes to a side file)
//! ```
//!
//! Every transaction records what it wrote and its CSN (the end LSN of its
//! commit record; known even when the commit then failed, "in doubt"), and
//! acknowledged ones also when they were acknowledged. After each crash and
//! recovery the harness checks:
//!
//! * the tables equal the model replayed up to the recovered end of the
//!   redo log, in CSN order: every transaction all-or-nothing, none
//!   reordered, none invented;
//! * every secondary index agrees with its table (scanned through the
//!   index and matched against the rows);
//! * the total balance is 20000;
//! * acknowledged commits lost (`lost_acked`) are within what the setting
//!   promises (DESIGN.md): none at 1; none at 2 after a process crash;
//!   otherwise only those acknowledged in the last ~1 s (the flush
//!   interval) before the crash.

use std::collections::BTreeMap;
use std::ops::Bound;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use quire_config::Config;
use quire_engine::{
    ColumnDef, ColumnType, Engine, EngineRecovery, Isolation, LockMode, Scan, TableDef, Txn, Value,
};
use quire_io::{Rng, SimFs, Vfs};

use crate::crashtest::crash;

const ACCOUNTS: i64 = 20;
const START_BALANCE: i64 = 1000;
/// Rows of a large transaction: with 8 MiB of redo, its record is above
/// the 128 KiB at which a record goes to a side file.
const BULK_ITEMS: u64 = 2_500;

/// Rows by table (0 = accounts, 1 = items) and primary key bytes.
type State = BTreeMap<(u8, Vec<u8>), Vec<Value>>;

#[derive(Clone, Debug)]
struct Commit {
    /// Place in the commit order: commit record LSN (binlog off) or
    /// prepare record LSN (binlog on).
    csn: u64,
    /// Binlog XID: the prepare record LSN (= csn with the binlog on).
    xid: u64,
    writes: Vec<(u8, Vec<u8>, Option<Vec<Value>>)>,
    acked_at: Option<Instant>,
    /// Why an in-doubt commit failed.
    err: Option<String>,
}

#[derive(Default)]
struct Totals {
    crashes: u64,
    violations: u64,
    lost_acked: u64,
    acked: u64,
    in_doubt: u64,
    recovered_commits: u64,
    recovery_crashes: u64,
    engine_binlog_diff: u64,
    /// Binlog transactions cut at recovery because their prepare was lost.
    binlog_cut: u64,
    /// Recoveries interrupted by a recovery sweep.
    sweep_points: u64,
    /// Large transactions logged, and replayed by recovery from their
    /// anchored files (bigtrx.rs).
    large_logged: u64,
    large_replayed: u64,
}

/// Recovery sweeps: after every `every`-th crash (0: never), the disk as
/// the crash left it is forked and recovery is interrupted at each of its
/// I/O operations in turn (at most `max_points`, evenly spread), each
/// interrupted recovery followed by a full one that is judged against the
/// model. This is what finds a recovery that is not idempotent: a step
/// that makes something durable too early (a checkpoint past records not
/// yet replayed) is one I/O operation among hundreds.
pub struct Sweep {
    pub every: u64,
    pub max_points: u64,
}

#[derive(Default)]
struct SweepResult {
    interrupted: u64,
    problems: Vec<String>,
}

/// The end of the valid redo log on the crashed disk `sim`: what a
/// recovery of a fork of it reports (the disk itself is not touched).
fn log_end_after_crash(sim: &SimFs, cfg: &Config) -> Result<u64, Box<dyn std::error::Error>> {
    let fork = sim.fork();
    let (e, _) = Engine::open(Arc::new(fork), cfg)?;
    let end = e.store().report().end_lsn;
    let _ = e.close(false);
    Ok(end)
}

/// See [`Sweep`]. `sim` is the crashed disk (not changed).
fn recovery_sweep(
    judge: &Judge,
    sim: &SimFs,
    sweep: &Sweep,
    power: bool,
    rng: &mut Rng,
    pending: &[Commit],
    base: &State,
) -> Result<SweepResult, Box<dyn std::error::Error>> {
    let mut out = SweepResult::default();
    // How many I/O operations an uninterrupted recovery of this disk does.
    let probe = sim.fork();
    let vfs: Arc<dyn Vfs> = Arc::new(probe.clone());
    let before = probe.stats().ops;
    let (e, _) = Engine::open(vfs, judge.cfg)?;
    let ops = probe.stats().ops - before;
    let _ = e.close(false);
    drop(e);
    let points = ops.min(sweep.max_points.max(1));
    for i in 0..points {
        let k = i * ops / points;
        let fork = sim.fork();
        let vfs: Arc<dyn Vfs> = Arc::new(fork.clone());
        fork.arm_crash_after(k);
        match Engine::open(vfs.clone(), judge.cfg) {
            Err(_) if fork.is_down() => {}
            Err(err) => {
                out.problems.push(format!(
                    "recovery failed (sweep point {k} of {ops}) without a crash: {err}"
                ));
                continue;
            }
            Ok((e, _)) => {
                // The background threads did I/O of their own: this point
                // fell after the end of recovery.
                let _ = e.close(false);
                drop(e);
                if !fork.is_down() {
                    fork.arm_crash_after(0);
                }
            }
        }
        out.interrupted += 1;
        crash(&fork, power, rng);
        fork.disarm();
        let (e, rec) = match Engine::open(vfs, judge.cfg) {
            Ok(x) => x,
            Err(err) => {
                out.problems.push(format!(
                    "recovery after a crash at I/O {k} of {ops} of the previous recovery failed: {err}"
                ));
                continue;
            }
        };
        let v = judge.verdict(&e, &fork, &rec, pending, base);
        for p in v.problems {
            out.problems.push(format!(
                "recovery interrupted at I/O {k} of {ops}, then: {p}"
            ));
        }
        let _ = e.close(false);
    }
    Ok(out)
}

fn col(name: &str, ty: ColumnType, nullable: bool) -> ColumnDef {
    ColumnDef::new(name, ty, nullable)
}

fn schema(e: &Engine) -> quire_engine::Result<(Arc<TableDef>, Arc<TableDef>)> {
    e.create_database("bank", true)?;
    let acc = e.create_table(
        "bank",
        "accounts",
        vec![
            col("id", ColumnType::Int { unsigned: false }, false),
            col("balance", ColumnType::BigInt { unsigned: false }, false),
        ],
        vec![0],
        vec![("balance".into(), false, vec![1])],
        true,
    )?;
    let items = e.create_table(
        "bank",
        "items",
        vec![
            col("id", ColumnType::BigInt { unsigned: false }, false),
            col("owner", ColumnType::Int { unsigned: false }, false),
            col("tag", ColumnType::varchar(40), true),
            col(
                "body",
                ColumnType::Blob {
                    max_bytes: u32::MAX,
                },
                true,
            ),
        ],
        vec![0],
        vec![
            ("owner".into(), false, vec![1]),
            ("tag".into(), true, vec![2]),
        ],
        true,
    )?;
    Ok((acc, items))
}

/// An item's body: NULL, empty, in-row, just past the 40-byte rule, a
/// few pages, and now and then MiBs (off-page chains over many
/// mini-transactions; offpage.rs).
fn body(r: &mut Rng, id: i64) -> Value {
    let len = match r.below(100) {
        0..=19 => return Value::Null,
        20..=29 => 0,
        30..=49 => r.below(41),
        50..=59 => 41 + r.below(20),
        60..=92 => 1_000 + r.below(60_000),
        93..=98 => 100_000 + r.below(400_000),
        _ => 1_000_000 + r.below(3_000_000),
    } as usize;
    let seed = id as u8;
    Value::Bytes((0..len).map(|i| (i as u8).wrapping_mul(7) ^ seed).collect())
}

fn int(v: &Value) -> i64 {
    match v {
        Value::Int(i) => *i,
        Value::UInt(u) => *u as i64,
        _ => i64::MIN,
    }
}

/// Everything visible to a fresh transaction, by primary key order.
fn read_all(e: &Engine, acc: &TableDef, items: &TableDef) -> quire_engine::Result<State> {
    let mut tx = e.begin(Isolation::RepeatableRead, true);
    let mut st = State::new();
    for (tag, t) in [(0u8, acc), (1u8, items)] {
        for r in tx.scan(t, &Scan::default())? {
            st.insert((tag, r.key), r.values);
        }
    }
    Ok(st)
}

/// Checks every secondary index against the rows: each row is found
/// through each index, and the index yields nothing else.
fn check_indexes(e: &Engine, t: &TableDef, rows: &[(Vec<u8>, Vec<Value>)]) -> Result<(), String> {
    let mut tx = e.begin(Isolation::RepeatableRead, true);
    for idx in &t.indexes {
        let via: Vec<_> = tx
            .scan(
                t,
                &Scan {
                    index: Some(idx.name.clone()),
                    ..Scan::default()
                },
            )
            .map_err(|e| e.to_string())?;
        if via.len() != rows.len() {
            return Err(format!(
                "{}.{}: {} rows through the index, {} in the table",
                t.name,
                idx.name,
                via.len(),
                rows.len()
            ));
        }
        // Index order: non-decreasing in the indexed column.
        for w in via.windows(2) {
            let a: Vec<&Value> = idx.columns.iter().map(|&c| &w[0].values[c]).collect();
            let b: Vec<&Value> = idx.columns.iter().map(|&c| &w[1].values[c]).collect();
            let has_null = a.iter().any(|v| v.is_null());
            if idx.unique && !has_null && format!("{a:?}") == format!("{b:?}") {
                return Err(format!(
                    "{}.{}: unique index yields a duplicate",
                    t.name, idx.name
                ));
            }
        }
        let mut a: Vec<&Vec<u8>> = via.iter().map(|r| &r.key).collect();
        let mut b: Vec<&Vec<u8>> = rows.iter().map(|r| &r.0).collect();
        a.sort();
        b.sort();
        if a != b {
            return Err(format!(
                "{}.{}: index and table hold different rows",
                t.name, idx.name
            ));
        }
    }
    Ok(())
}

/// Every XID in every binlog file of the data directory (via its index).
fn binlog_xids(sim: &SimFs, dir: &std::path::Path) -> std::collections::HashSet<u64> {
    let mut out = std::collections::HashSet::new();
    let Some(index) = sim.file_bytes(&dir.join("binlog.index")) else {
        return out;
    };
    for line in String::from_utf8_lossy(&index).lines() {
        let name = line.trim().trim_start_matches("./");
        if let Some(bytes) = sim.file_bytes(&dir.join(name)) {
            out.extend(quire_engine::binlog::format::parse_events(&bytes).xids);
        }
    }
    out
}

/// What the harness knows when it judges one recovery.
struct Judge<'a> {
    cfg: &'a Config,
    binlog: bool,
    trx_commit: u32,
    crashed_in_process_mode: bool,
    crash_at: Instant,
    verbose: bool,
    /// End of the valid log as the last workload crash left it (found by a
    /// recovery of a fork of the disk), when known.
    log_end: Option<u64>,
}

/// One recovery judged against the model.
#[derive(Default)]
struct Verdict {
    problems: Vec<String>,
    /// The recovered rows, when they could be read.
    got: Option<State>,
    applied: u64,
    lost_acked: u64,
    binlog_diff: u64,
}

impl Judge<'_> {
    /// Compares the recovered engine with `base` plus the commits of
    /// `pending` (sorted by CSN) that recovery must keep.
    fn verdict(
        &self,
        e: &Engine,
        sim: &SimFs,
        rec: &EngineRecovery,
        pending: &[Commit],
        base: &State,
    ) -> Verdict {
        let trx_commit = self.trx_commit;
        let mut v = Verdict::default();
        let (acc, items) = match (e.table("bank", "accounts"), e.table("bank", "items")) {
            (Ok(a), Ok(i)) => (a, i),
            (Err(err), _) | (_, Err(err)) => {
                v.problems
                    .push(format!("tables missing after recovery: {err}"));
                return v;
            }
        };
        // The end of the log the crash left, not what this recovery reports:
        // an interrupted recovery before it may have appended redo of its
        // own past that end, reusing the LSNs of records the crash tore.
        let recovered_end = self
            .log_end
            .unwrap_or(e.store().report().end_lsn)
            .min(e.store().report().end_lsn);

        // Expected: base + the commits recovery must keep, in commit order.
        // Binlog off: those whose commit record is in the recovered log.
        // Binlog on: those whose prepare is in the recovered log AND whose
        // XID is in the binary log (XA recovery); in the binlog but not in
        // the engine counts as engine_binlog_diff.
        let in_binlog = if self.binlog {
            binlog_xids(sim, &self.cfg.datadir)
        } else {
            Default::default()
        };
        let mut expect = base.clone();
        for c in pending {
            if self.binlog && in_binlog.contains(&c.xid) && c.csn > recovered_end {
                v.binlog_diff += 1;
                if trx_commit == 1 {
                    v.problems.push(format!("xid {} is in the binlog but its prepare is not in the redo log (1/N must not diverge)", c.xid));
                }
            }
            let kept = c.csn <= recovered_end && (!self.binlog || in_binlog.contains(&c.xid));
            if !kept {
                if let Some(at) = c.acked_at {
                    v.lost_acked += 1;
                    let sync_binlog = self.cfg.sync_binlog;
                    let must_keep = if self.binlog {
                        // DESIGN.md: 1/1 loses nothing; 2/1, 1/0, 1/N lose
                        // nothing on a process crash; 0/any may lose ~1 s.
                        (trx_commit == 1 && sync_binlog == 1)
                            || (self.crashed_in_process_mode && trx_commit != 0)
                    } else {
                        trx_commit == 1 || (trx_commit == 2 && self.crashed_in_process_mode)
                    };
                    let window = self.crash_at.saturating_duration_since(at);
                    if must_keep {
                        v.problems.push(format!(
                        "acknowledged commit csn {} lost (innodb_flush_log_at_trx_commit={trx_commit}, {} crash)",
                        c.csn,
                        if self.crashed_in_process_mode { "process" } else { "power" }
                    ));
                    } else if (trx_commit == 0 || !self.binlog)
                        && window > Duration::from_millis(2500)
                    {
                        v.problems.push(format!(
                            "commit acknowledged {:.2} s before the crash was lost (promise: ~1 s)",
                            window.as_secs_f64()
                        ));
                    }
                }
                continue;
            }
            v.applied += 1;
            for (tag, pk, row) in &c.writes {
                match row {
                    Some(r) => {
                        expect.insert((*tag, pk.clone()), r.clone());
                    }
                    None => {
                        expect.remove(&(*tag, pk.clone()));
                    }
                }
            }
        }
        match read_all(e, &acc, &items) {
            Err(err) => v
                .problems
                .push(format!("reading after recovery failed: {err}")),
            Ok(got) => {
                if got != expect {
                    let missing = expect.keys().filter(|k| !got.contains_key(*k)).count();
                    let extra = got.keys().filter(|k| !expect.contains_key(*k)).count();
                    let differ = got
                        .iter()
                        .filter(|(k, v)| expect.get(*k).is_some_and(|x| x != *v))
                        .count();
                    v.problems.push(format!(
                    "state differs from the commits up to LSN {recovered_end}: {missing} rows missing, {extra} extra, {differ} different"
                ));
                    if self.verbose {
                        println!(
                        "  engine recovery: prepared_committed={} rolled_back={} binlog_truncated={} commits_replayed={}",
                        rec.prepared_committed,
                        rec.prepared_rolled_back,
                        rec.binlog_truncated_bytes,
                        rec.commits_replayed
                    );
                        if let Some(index) = sim.file_bytes(&self.cfg.datadir.join("binlog.index"))
                        {
                            for line in String::from_utf8_lossy(&index).lines().rev().take(3) {
                                let name = line.trim().trim_start_matches("./");
                                let b = sim
                                    .file_bytes(&self.cfg.datadir.join(name))
                                    .unwrap_or_default();
                                let p = quire_engine::binlog::format::parse_events(&b);
                                println!(
                                    "  {name}: len={} xids={:?} complete_end={} err={:?}",
                                    b.len(),
                                    p.xids.iter().rev().take(4).collect::<Vec<_>>(),
                                    p.complete_tx_end,
                                    p.error
                                );
                            }
                        }
                        for (k, v) in got
                            .iter()
                            .filter(|(k, v)| expect.get(*k).is_some_and(|x| x != *v))
                            .take(2)
                        {
                            println!(
                                "  row {:?}: got {:?} expected {:?} base {:?}",
                                k,
                                v,
                                expect.get(k),
                                base.get(k)
                            );
                            for c in pending
                                .iter()
                                .filter(|c| c.writes.iter().any(|w| (w.0, &w.1) == (k.0, &k.1)))
                            {
                                let w = c
                                    .writes
                                    .iter()
                                    .find(|w| (w.0, &w.1) == (k.0, &k.1))
                                    .map(|w| w.2.clone());
                                println!(
                                "    xid {} key {} in_binlog {} durable {} acked {} err {:?} wrote {:?}",
                                c.xid,
                                c.csn,
                                in_binlog.contains(&c.xid),
                                c.csn <= recovered_end,
                                c.acked_at.is_some(),
                                c.err,
                                w
                            );
                            }
                        }
                    }
                }
                let total: i64 = got
                    .iter()
                    .filter(|(k, _)| k.0 == 0)
                    .map(|(_, v)| int(&v[1]))
                    .sum();
                if total != ACCOUNTS * START_BALANCE {
                    v.problems.push(format!(
                        "total balance {total} != {}",
                        ACCOUNTS * START_BALANCE
                    ));
                }
                for (tag, t) in [(0u8, &acc), (1u8, &items)] {
                    let rows: Vec<(Vec<u8>, Vec<Value>)> = got
                        .iter()
                        .filter(|(k, _)| k.0 == tag)
                        .map(|(k, v)| (k.1.clone(), v.clone()))
                        .collect();
                    if let Err(m) = check_indexes(e, t, &rows) {
                        v.problems.push(m);
                    }
                }
                v.got = Some(got);
            }
        }
        // Page accounting: no page leaked or owned twice, no off-page
        // chain left orphaned by the recovery (offpage.rs).
        match e.store().checkpoint() {
            Err(err) => v
                .problems
                .push(format!("checkpoint after recovery failed: {err}")),
            Ok(()) => {
                let vfs: Arc<dyn Vfs> = Arc::new(sim.clone());
                match quire_engine::offpage::check_datadir(&vfs, &self.cfg.datadir) {
                    Ok(r) if r.is_ok() && r.lob_orphans == 0 => {}
                    Ok(r) => v.problems.push(format!(
                        "quire check: {} orphan chains; {}",
                        r.lob_orphans,
                        r.errors.join("; ")
                    )),
                    Err(err) => v.problems.push(format!("quire check failed: {err}")),
                }
            }
        }
        v
    }
}

/// What `quire crashtest --layer engine|binlog` was asked to do.
pub struct Options {
    pub seed: u64,
    pub crashes: u64,
    pub threads: usize,
    /// Power loss (else process crash).
    pub power: bool,
    pub verbose: bool,
    /// The `binlog` layer (else `engine`).
    pub binlog: bool,
    pub sweep: Sweep,
}

pub fn run(opts: Options, mut cfg: Config) -> Result<ExitCode, Box<dyn std::error::Error>> {
    let Options {
        seed,
        crashes,
        threads,
        power,
        verbose,
        binlog,
        sweep,
    } = opts;
    let d = Config::default();
    cfg.log_bin = binlog;
    if binlog && cfg.max_binlog_size == d.max_binlog_size {
        // Small files: rotations happen within a short run.
        cfg.max_binlog_size = 16 << 10;
    }
    if cfg.innodb_buffer_pool_size == d.innodb_buffer_pool_size {
        cfg.innodb_buffer_pool_size = 8 << 20;
    }
    if cfg.innodb_redo_log_capacity == d.innodb_redo_log_capacity {
        cfg.innodb_redo_log_capacity = 8 << 20;
    }
    if cfg.innodb_log_buffer_size == d.innodb_log_buffer_size {
        cfg.innodb_log_buffer_size = 1 << 20;
    }
    if cfg.innodb_page_size == d.innodb_page_size {
        cfg.innodb_page_size = 4096;
        cfg.innodb_log_write_ahead_size = cfg.innodb_log_write_ahead_size.min(4096);
    }
    cfg.datadir = PathBuf::from("/sim/data");
    cfg.innodb_doublewrite_dir = None;
    let trx_commit = cfg.innodb_flush_log_at_trx_commit;
    let t0 = Instant::now();
    let mut rng = Rng::new(seed);
    let mut tot = Totals::default();
    let sim = SimFs::new(cfg.innodb_flush_method);
    // The page cleaner runs its rounds at the replay's recovery points
    // (Store::recovery_step), so a crash inside recovery meets the
    // interleavings a real process has, replayed by the seed.
    sim.set_steps_background(true);
    let vfs: Arc<dyn Vfs> = Arc::new(sim.clone());

    // Initial state, made durable.
    let mut base: State = {
        let (e, _) = Engine::open(vfs.clone(), &cfg)?;
        let (acc, items) = schema(&e)?;
        let mut tx = e.begin(Isolation::RepeatableRead, false);
        for i in 0..ACCOUNTS {
            tx.insert(
                &acc,
                vec![Some(Value::Int(i)), Some(Value::Int(START_BALANCE))],
            )?;
        }
        tx.commit()?;
        e.store().sync_log()?;
        let st = read_all(&e, &acc, &items)?;
        e.close(true)?;
        st
    };
    let mut pending: Vec<Commit> = Vec::new();
    let mut crash_at = Instant::now();
    let mut crashed_in_process_mode = false;
    let mut last_rec;

    // I/O operations of the longest recovery seen: crashes inside recovery
    // are spread over all of them, not only its first steps.
    let judge_for =
        |crashed_in_process_mode: bool, crash_at: Instant, log_end: Option<u64>| Judge {
            cfg: &cfg,
            binlog,
            trx_commit,
            crashed_in_process_mode,
            crash_at,
            verbose,
            log_end,
        };
    let mut recovery_ops: u64 = 30;
    let mut log_end: Option<u64> = None;
    let mut recovery_streak = 0u32;
    while tot.crashes < crashes {
        // A crash inside recovery, and often another inside the recovery
        // of that one.
        let crash_in_recovery = rng.chance(if recovery_streak > 0 { 0.5 } else { 0.25 });
        if crash_in_recovery {
            sim.arm_crash_after(rng.below(recovery_ops));
        }
        let ops_before = sim.stats().ops;
        let opened = Engine::open(vfs.clone(), &cfg);
        let e = match opened {
            Err(_) if sim.is_down() => {
                tot.recovery_crashes += 1;
                tot.crashes += 1;
                recovery_streak += 1;
                crash(&sim, power, &mut rng);
                continue;
            }
            Err(err) => {
                tot.violations += 1;
                println!(
                    "VIOLATION after crash {}: recovery failed: {err}",
                    tot.crashes
                );
                break;
            }
            Ok((e, r)) => {
                recovery_ops = recovery_ops.max(sim.stats().ops - ops_before);
                recovery_streak = 0;
                tot.binlog_cut += r.binlog_cut_transactions;
                tot.large_replayed += r.large_replayed;
                last_rec = r;
                e
            }
        };
        sim.disarm();
        let (acc, items) = (e.table("bank", "accounts")?, e.table("bank", "items")?);
        pending.sort_by_key(|c| c.csn);
        let judge = judge_for(crashed_in_process_mode, crash_at, log_end);
        let v = judge.verdict(&e, &sim, &last_rec, &pending, &base);
        let recovered_end = e.store().report().end_lsn;
        let applied = v.applied;
        tot.engine_binlog_diff += v.binlog_diff;
        tot.lost_acked += v.lost_acked;
        tot.recovered_commits += v.applied;
        if let Some(got) = v.got {
            base = got;
        }
        if !v.problems.is_empty() {
            tot.violations += 1;
            for p in &v.problems {
                println!("VIOLATION after crash {}: {p}", tot.crashes);
            }
        }
        if verbose {
            println!(
                "crash {}: end_lsn={recovered_end} replayed={} pending={} applied={applied}",
                tot.crashes,
                pending.len(),
                pending.len(),
            );
        }
        pending.clear();

        // Workload until the machine goes down.
        let cap = if rng.chance(0.5) { 40 } else { 400 };
        let budget = 1 + rng.below(cap);
        // In a fifth of the phases the first thread starts with a large
        // transaction and arms the crash only once its commit starts.
        let bulk_first = rng.chance(0.2);
        if !bulk_first {
            sim.arm_crash_after(budget);
        }
        let max_time = if rng.chance(0.15) {
            Duration::from_millis(rng.range(900, 1600))
        } else {
            Duration::from_millis(rng.range(5, 200))
        };
        let log: Mutex<Vec<Commit>> = Mutex::new(Vec::new());
        let stop = AtomicBool::new(false);
        let next_item = AtomicU64::new(rng.next_u64() >> 20);
        let armed = AtomicBool::new(!bulk_first);
        let wseed = rng.next_u64();
        std::thread::scope(|sc| {
            for th in 0..threads {
                let (e, acc, items, log, stop, next_item, armed, sim) =
                    (&e, &acc, &items, &log, &stop, &next_item, &armed, &sim);
                sc.spawn(move || {
                    let mut r =
                        Rng::new(wseed ^ (th as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
                    // The others wait until the crash is armed.
                    while th != 0 && !armed.load(Ordering::Acquire) && !stop.load(Ordering::Relaxed)
                    {
                        std::thread::sleep(Duration::from_micros(200));
                    }
                    if bulk_first && th == 0 {
                        let arm = || {
                            sim.arm_crash_after(budget);
                            armed.store(true, Ordering::Release);
                        };
                        let out = bulk(e, items, &mut r, next_item, arm);
                        if !armed.swap(true, Ordering::AcqRel) {
                            sim.arm_crash_after(budget);
                        }
                        match out {
                            Ok(Some(c)) => log.lock().push(c),
                            Ok(None) => {}
                            Err(Stop) => return,
                        }
                    }
                    while !stop.load(Ordering::Relaxed) {
                        match one(e, acc, items, &mut r, next_item) {
                            Ok(Some(c)) => log.lock().push(c),
                            Ok(None) => {}
                            Err(Stop) => break,
                        }
                    }
                });
            }
            // The phase's time starts when the crash is armed (a large
            // transaction's build-up first; at most 30 s of it).
            let build_up = Instant::now() + Duration::from_secs(30);
            while bulk_first && !armed.load(Ordering::Acquire) && Instant::now() < build_up {
                std::thread::sleep(Duration::from_micros(300));
            }
            let deadline = Instant::now() + max_time;
            while !sim.is_down() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_micros(300));
            }
            if !sim.is_down() {
                sim.arm_crash_after(0);
            }
            crash_at = Instant::now();
            stop.store(true, Ordering::Relaxed);
        });
        pending = log.into_inner();
        tot.large_logged += pending
            .iter()
            .filter(|c| c.writes.len() as u64 >= BULK_ITEMS)
            .count() as u64;
        tot.acked += pending.iter().filter(|c| c.acked_at.is_some()).count() as u64;
        tot.in_doubt += pending.iter().filter(|c| c.acked_at.is_none()).count() as u64;
        let _ = e.close(false);
        drop(e);
        crashed_in_process_mode = !power;
        crash(&sim, power, &mut rng);
        tot.crashes += 1;
        log_end = Some(log_end_after_crash(&sim, &cfg)?);
        if sweep.every > 0 && tot.crashes % sweep.every == 0 {
            pending.sort_by_key(|c| c.csn);
            let judge = judge_for(crashed_in_process_mode, crash_at, log_end);
            let r = recovery_sweep(&judge, &sim, &sweep, power, &mut rng, &pending, &base)?;
            tot.recovery_crashes += r.interrupted;
            tot.sweep_points += r.interrupted;
            if !r.problems.is_empty() {
                tot.violations += 1;
                for p in r.problems.iter().take(5) {
                    println!("VIOLATION after crash {}: {p}", tot.crashes);
                }
            }
        }
    }
    let binlog_part = if binlog {
        format!(
            " engine_binlog_diff={} binlog_cut={} sync_binlog={} delay_us={} no_delay_count={} max_binlog_size={}",
            tot.engine_binlog_diff,
            tot.binlog_cut,
            cfg.sync_binlog,
            cfg.binlog_group_commit_sync_delay,
            cfg.binlog_group_commit_sync_no_delay_count,
            cfg.max_binlog_size
        )
    } else {
        String::new()
    };
    println!(
        "layer={} crashes={} violations={} lost_acked={}{binlog_part} acked={} in_doubt={} recovered_commits={} recovery_crashes={} sweep_points={} large_logged={} large_replayed={} trx_commit={trx_commit} crash={} elapsed_s={:.1} seed={seed}",
        if binlog { "binlog" } else { "engine" },
        tot.crashes,
        tot.violations,
        tot.lost_acked,
        tot.acked,
        tot.in_doubt,
        tot.recovered_commits,
        tot.recovery_crashes,
        tot.sweep_points,
        tot.large_logged,
        tot.large_replayed,
        if power { "power" } else { "process" },
        t0.elapsed().as_secs_f64()
    );
    Ok(if tot.violations == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// The workload gave up (the machine is down).
struct Stop;

/// One random transaction. Ok(Some) = its commit record was logged.
fn one(
    e: &Engine,
    acc: &TableDef,
    items: &TableDef,
    r: &mut Rng,
    next_item: &AtomicU64,
) -> Result<Option<Commit>, Stop> {
    let mut tx = e.begin(Isolation::RepeatableRead, false);
    let mut writes: Vec<(u8, Vec<u8>, Option<Vec<Value>>)> = Vec::new();
    let res: quire_engine::Result<()> = (|| {
        match r.below(10) {
            0..=5 => {
                let a = r.below(ACCOUNTS as u64) as i64;
                let b = r.below(ACCOUNTS as u64) as i64;
                if a == b {
                    return Ok(());
                }
                let amount = r.range(1, 50) as i64;
                for (id, delta) in [(a, -amount), (b, amount)] {
                    let row = tx
                        .get_for(acc, &[Value::Int(id)], LockMode::Exclusive)?
                        .ok_or_else(|| quire_engine::EngineError::internal("account missing"))?;
                    let new = vec![row[0].clone(), Value::Int(int(&row[1]) + delta)];
                    let k = Txn::encode_pk(acc, &[Value::Int(id)])?;
                    tx.update(acc, &k, new.clone())?;
                    writes.push((0, k, Some(new)));
                }
            }
            6..=7 => {
                let id = next_item.fetch_add(1, Ordering::Relaxed) as i64;
                let owner = r.below(ACCOUNTS as u64) as i64;
                let tag = if r.chance(0.2) {
                    Value::Null
                } else {
                    Value::Bytes(format!("tag-{id}").into_bytes())
                };
                let row = vec![Value::Int(id), Value::Int(owner), tag, body(r, id)];
                let ins = tx.insert(items, row.iter().cloned().map(Some).collect())?;
                writes.push((1, ins.key, Some(row)));
            }
            _ => {
                let owner = r.below(ACCOUNTS as u64) as i64;
                let found = tx.scan(
                    items,
                    &Scan {
                        index: Some("owner".into()),
                        lower: Bound::Included(vec![Value::Int(owner)]),
                        upper: Bound::Included(vec![Value::Int(owner)]),
                        limit: Some(1),
                        lock: Some(LockMode::Exclusive),
                        ..Scan::default()
                    },
                )?;
                if let Some(row) = found.first() {
                    if tx.delete(items, &row.key)? {
                        writes.push((1, row.key.clone(), None));
                    }
                }
            }
        }
        Ok(())
    })();
    finish(tx, writes, res)
}

/// Ends a transaction of the workload: rolled back on a lock conflict or
/// duplicate (Ok(None)), committed otherwise; Ok(Some) = its commit record
/// was logged.
fn finish(
    tx: Txn,
    writes: Vec<(u8, Vec<u8>, Option<Vec<Value>>)>,
    res: quire_engine::Result<()>,
) -> Result<Option<Commit>, Stop> {
    match res {
        Err(err) if err.code == 1213 || err.code == 1205 || err.code == 1062 => {
            tx.rollback();
            return Ok(None);
        }
        Err(_) => {
            tx.rollback();
            return Err(Stop);
        }
        Ok(()) => {}
    }
    if writes.is_empty() {
        tx.rollback();
        return Ok(None);
    }
    let (csn, result) = tx.commit_detailed();
    match (csn, result) {
        (Some(csn), Ok(_)) => Ok(Some(Commit {
            csn,
            xid: csn,
            writes,
            acked_at: Some(Instant::now()),
            err: None,
        })),
        // In doubt: logged, not acknowledged.
        (Some(csn), Err(e)) => Ok(Some(Commit {
            csn,
            xid: csn,
            writes,
            acked_at: None,
            err: Some(e.to_string()),
        })),
        (None, _) => Err(Stop),
    }
}

/// A large transaction (bigtrx.rs: its record goes to a side file): one
/// owner's items replaced by BULK_ITEMS new ones. `arm` runs between its
/// statements and its commit, so that the crash budget falls inside the
/// commit rather than the long build-up before it.
fn bulk(
    e: &Engine,
    items: &TableDef,
    r: &mut Rng,
    next_item: &AtomicU64,
    arm: impl FnOnce(),
) -> Result<Option<Commit>, Stop> {
    let mut tx = e.begin(Isolation::RepeatableRead, false);
    let mut writes: Vec<(u8, Vec<u8>, Option<Vec<Value>>)> = Vec::new();
    let res: quire_engine::Result<()> = (|| {
        let owner = r.below(ACCOUNTS as u64) as i64;
        let found = tx.scan(
            items,
            &Scan {
                index: Some("owner".into()),
                lower: Bound::Included(vec![Value::Int(owner)]),
                upper: Bound::Included(vec![Value::Int(owner)]),
                lock: Some(LockMode::Exclusive),
                ..Scan::default()
            },
        )?;
        for row in found {
            if tx.delete(items, &row.key)? {
                writes.push((1, row.key, None));
            }
        }
        let first = next_item.fetch_add(BULK_ITEMS, Ordering::Relaxed) as i64;
        for id in first..first + BULK_ITEMS as i64 {
            let row = vec![
                Value::Int(id),
                Value::Int(owner),
                Value::Bytes(format!("bulk-{id}").into_bytes()),
                if id % 500 == 0 {
                    Value::Bytes(vec![b'b'; 20_000])
                } else {
                    Value::Null
                },
            ];
            let ins = tx.insert(items, row.iter().cloned().map(Some).collect())?;
            writes.push((1, ins.key, Some(row)));
        }
        Ok(())
    })();
    arm();
    finish(tx, writes, res)
}
