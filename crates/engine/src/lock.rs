//! # Row lock manager
//!
//! Transactions lock *names*: opaque byte strings the engine builds from a
//! table id and an encoded primary key (or table id + index id + encoded
//! unique key). Two modes exist, as in InnoDB record locks:
//!
//! | held \ wanted | S  | X  |
//! |---------------|----|----|
//! | S             | ok | —  |
//! | X             | —  | —  |
//!
//! Locks are held until the transaction ends ([`LockManager::release_all`]);
//! the manager remembers which names each transaction holds, so the caller
//! does not have to.
//!
//! ## The lock table
//!
//! ```text
//!   name ──crc32c──► shard i of 64      (each shard: one mutex, one HashMap)
//!
//!   shard[i]: HashMap<name, LockEntry>
//!   ┌──────────────────────┬──────────────────────────────────────────────┐
//!   │ name (Arc<[u8]>)     │ LockEntry                                    │
//!   ├──────────────────────┼──────────────────────────────────────────────┤
//!   │ t7|pk=42             │ holders: [T1:S, T4:S]                        │
//!   │                      │ waiters: [T1:X(upgrade)] → [T9:X] → [T3:S]   │
//!   │                      │           ▲ upgrades first  FIFO after ▲     │
//!   │ t7|pk=43             │ holders: [T2:X]   waiters: []                │
//!   └──────────────────────┴──────────────────────────────────────────────┘
//!
//!   txn registry (64 shards by txn id):  T1 → [t7|pk=42, ...]
//!                                        T2 → [t7|pk=43, ...]
//!   wait-for graph (one mutex, only touched when someone waits):
//!        T1 → {T4}          T1's upgrade waits for the other S holder
//!        T9 → {T1, T4}      X waits for both holders
//!        T3 → {T1, T9}      S waits for the X requests queued ahead of it
//! ```
//!
//! A waiter is *blocked by* every holder whose mode conflicts with its
//! request and — unless it is an upgrade — every waiter queued *ahead* of it
//! whose requested mode conflicts. It is granted exactly when that set is
//! empty. This is what makes the queue fair: a new S request arriving while
//! an X request waits conflicts with that X and queues behind it, so a stream
//! of readers cannot starve a writer.
//!
//! An upgrade (S holder asks for X) is queued in front of all ordinary
//! waiters and waits only for the other holders to leave. Two upgraders on
//! the same name wait for each other: a deadlock, detected like any other.
//!
//! ## Deadlock detection
//!
//! Every waiting transaction has a node in the wait-for graph whose edges are
//! exactly its "blocked by" set. Whenever an entry with waiters changes
//! (a request queues, a waiter is granted, times out or is chosen as victim,
//! a holder releases or upgrades in place), the edges of all that entry's
//! waiters are recomputed and published *while the shard mutex is still
//! held*, so the graph always equals the lock table (each entry as of its
//! last change).
//!
//! ```text
//!   T1 holds A, T2 holds B.
//!   T2 requests A: queue, publish T2→T1, DFS from T2: T1 has no edges. Sleep.
//!   T1 requests B: queue, publish T1→T2, DFS from T1: T1→T2→T1  ⇒ cycle.
//!                  T1 is the victim: its request leaves the queue (its
//!                  locks stay until release_all), error 1213.
//! ```
//!
//! Why the requester always sees the cycle, so no waiter ever needs to
//! re-check later: a cycle consists only of waiting transactions. A new edge
//! X→Y appears only (a) when Y itself starts waiting (its own edges, or edges
//! of waiters behind an upgrade of Y) — Y publishes and searches from itself
//! in the same graph critical section, so the last request that closes a
//! cycle finds it, even if two requests race on different shards (the graph
//! mutex orders them; the second sees the first's edge) — or (b) when Y is
//! *not* waiting (Y upgraded in place, or Y was just granted), which cannot
//! close a cycle until Y waits, which is case (a). Granting, timing out and
//! releasing otherwise only remove edges. So the graph is acyclic after every
//! critical section, and every cycle is reported within the request that
//! formed it: milliseconds, not `innodb_lock_wait_timeout`.
//!
//! ## Differences from InnoDB (deliberate)
//!
//! * **Victim choice**: the requester that closes the cycle is the victim.
//!   InnoDB picks the "lighter" transaction (fewer undo records and locks)
//!   and may roll back a transaction that was already waiting. Ours is
//!   simple and deterministic; the error and SQLSTATE are the same.
//! * **Upgrades jump the queue**: in the MySQL manual's example (A holds S,
//!   B waits for X, A asks for X) InnoDB reports a deadlock and rolls back
//!   B. Here A's upgrade waits only for other S holders, so it is granted
//!   at once and B keeps waiting: no needless rollback.
//! * **No gap / next-key / insert-intention locks**: names only.
//! * **`innodb_deadlock_detect` is always ON.**
//! * **Timeouts are precise**: InnoDB's timeout checker runs about once a
//!   second, so its timeouts may overshoot by up to ~1 s; ours fire at the
//!   deadline.
//!
//! ## Invariants
//!
//! 1. A name is in the table iff it has a holder or a waiter; an entry is
//!    removed the moment its last holder and waiter leave ([`LockManager::len`]
//!    drops back to 0 when no transaction holds anything).
//! 2. Holders of one entry are pairwise compatible, and a transaction appears
//!    at most once among holders and at most once among waiters.
//! 3. After every critical section no waiter is grantable (the grant pass
//!    ran); hence the first waiter is always blocked by a holder.
//! 4. Upgrade waiters precede ordinary waiters; each upgrader is a holder.
//! 5. `T` holds `name` in the table iff `name` is in `T`'s registry list.
//! 6. The wait-for graph has a node exactly for each waiting transaction,
//!    and its edges equal that waiter's blocked-by set; it is acyclic.
//! 7. Lock order: name shard → wait-for graph; name shard → txn registry
//!    shard; name shard → wait slot. A waiter sleeps holding only its slot.
//!    Nothing takes a name shard while holding one of the others.
//!
//! A transaction uses the manager from one thread at a time: `release_all(T)`
//! must not run while `T` is blocked in `lock` (the waiting request is not
//! cancelled by it).
//!
//! ## Memory
//!
//! Per locked name: one hash-table slot (16-byte `Arc` key, 56-byte entry,
//! 1 control byte), the key allocation (16 bytes of counts plus the key), 16
//! bytes per holder, and 24 bytes in each holder's registry list (the shared
//! key and its shard index): about 130 bytes plus the key length, up to ~2×
//! that with hash-table and `Vec` growth slack. Waiters add ~64 bytes plus a wait slot while they wait. Released names are
//! removed; shard tables shrink again after a peak (see `SHRINK_MIN`).
//!
//! ## Cost
//!
//! Uncontended acquire: one crc32c of the name, one shard mutex, one hash
//! lookup + insert (two small allocations), one registry push. Release: one
//! registry removal, then each shard touched once for all its names. The
//! graph mutex is taken only when a request waits or when a release/upgrade
//! touches an entry that has waiters.

use std::collections::{HashMap, HashSet, VecDeque};
use std::fmt;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

use crate::interrupt::{Interrupt, Stage, WAIT_SLICE};

use crate::error::EngineError;

/// Transaction identifier, as the engine assigns it.
pub type TxnId = u64;

/// Lock mode: S (`FOR SHARE` / `LOCK IN SHARE MODE`) or X (writes, `FOR UPDATE`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LockMode {
    Shared,
    Exclusive,
}

impl LockMode {
    /// S is compatible with S; X with nothing.
    fn compatible(self, other: LockMode) -> bool {
        self == LockMode::Shared && other == LockMode::Shared
    }

    /// Whether holding `self` satisfies a request for `wanted`.
    fn covers(self, wanted: LockMode) -> bool {
        self == LockMode::Exclusive || wanted == LockMode::Shared
    }
}

/// MySQL ER_LOCK_WAIT_TIMEOUT.
pub const ER_LOCK_WAIT_TIMEOUT: u16 = 1205;
/// MySQL ER_LOCK_DEADLOCK.
pub const ER_LOCK_DEADLOCK: u16 = 1213;

/// Error 1205 (HY000), exactly as MySQL words it.
pub fn lock_wait_timeout_error() -> EngineError {
    EngineError::new(
        ER_LOCK_WAIT_TIMEOUT,
        "HY000",
        "Lock wait timeout exceeded; try restarting transaction",
    )
}

/// Error 1213 (40001), exactly as MySQL words it.
pub fn deadlock_error() -> EngineError {
    EngineError::new(
        ER_LOCK_DEADLOCK,
        "40001",
        "Deadlock found when trying to get lock; try restarting transaction",
    )
}

const SHARDS: usize = 64;
const TXN_SHARDS: usize = 64;
// The registry stores shard indexes as u8.
const _: () = assert!(SHARDS <= 256);
/// Shard tables with more capacity than this shrink when under 1/4 full.
const SHRINK_MIN: usize = 1024;

fn shard_index(name: &[u8]) -> usize {
    // crc32c is hardware-accelerated and spreads well enough for 64 shards;
    // the per-shard HashMap keeps its own keyed (SipHash) hasher.
    crc32c::crc32c(name) as usize % SHARDS
}

/// Cheap hasher for transaction ids (engine-assigned, not attacker-chosen).
#[derive(Default)]
struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = (n ^ (n >> 29)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

type IdMap<V> = HashMap<TxnId, V, BuildHasherDefault<IdHasher>>;

/// A transaction's held names, each with its name-shard index.
type HeldNames = Vec<(u8, Arc<[u8]>)>;

/// Where a waiting thread sleeps; the granter flips `granted` and notifies.
#[derive(Default)]
struct WaitSlot {
    granted: Mutex<bool>,
    cv: Condvar,
}

impl WaitSlot {
    fn grant(&self) {
        let mut g = self.granted.lock();
        *g = true;
        self.cv.notify_one();
    }

    fn is_granted(&self) -> bool {
        *self.granted.lock()
    }

    /// Sleeps until granted or `deadline` (None: no deadline). True if granted.
    fn wait(&self, deadline: Option<Instant>) -> bool {
        let mut g = self.granted.lock();
        while !*g {
            match deadline {
                Some(d) => {
                    if self.cv.wait_until(&mut g, d).timed_out() {
                        return *g;
                    }
                }
                None => self.cv.wait(&mut g),
            }
        }
        true
    }
}

#[derive(Clone, Copy)]
struct Holder {
    txn: TxnId,
    mode: LockMode,
}

struct Waiter {
    txn: TxnId,
    mode: LockMode,
    /// The transaction already holds S and wants X.
    upgrade: bool,
    /// The table key, so the granter can record it in the txn registry.
    key: Arc<[u8]>,
    slot: Arc<WaitSlot>,
}

/// What happened to a request that did not need to queue.
enum Immediate {
    /// Already held in a mode at least as strong.
    Held,
    /// Granted now; `new_holder` false means an in-place S→X upgrade.
    Granted { new_holder: bool },
    /// Must queue; `upgrade` if the transaction holds S and wants X.
    Wait { upgrade: bool },
}

struct LockEntry {
    holders: Vec<Holder>,
    waiters: VecDeque<Waiter>,
}

/// Appends to `out` the transactions that block `w`: conflicting holders
/// and (for ordinary requests) conflicting requests queued ahead of it.
fn blockers<'a>(
    holders: &[Holder],
    w: &Waiter,
    ahead: impl Iterator<Item = &'a Waiter>,
    out: &mut Vec<TxnId>,
) {
    for h in holders {
        if h.txn != w.txn && !h.mode.compatible(w.mode) {
            out.push(h.txn);
        }
    }
    if !w.upgrade {
        for v in ahead {
            if v.txn != w.txn && !v.mode.compatible(w.mode) && !out.contains(&v.txn) {
                out.push(v.txn);
            }
        }
    }
}

impl LockEntry {
    fn new(txn: TxnId, mode: LockMode) -> LockEntry {
        LockEntry {
            holders: vec![Holder { txn, mode }],
            waiters: VecDeque::new(),
        }
    }

    fn holder_mode(&self, txn: TxnId) -> Option<LockMode> {
        self.holders.iter().find(|h| h.txn == txn).map(|h| h.mode)
    }

    fn is_unused(&self) -> bool {
        self.holders.is_empty() && self.waiters.is_empty()
    }

    /// Grants the request at once if the rules allow (without queueing).
    fn try_now(&mut self, txn: TxnId, mode: LockMode) -> Immediate {
        match self.holder_mode(txn) {
            Some(held) if held.covers(mode) => Immediate::Held,
            Some(_) => {
                // S → X upgrade: only the other holders matter (invariant 4).
                if self.holders.len() == 1 {
                    self.holders[0].mode = LockMode::Exclusive;
                    Immediate::Granted { new_holder: false }
                } else {
                    Immediate::Wait { upgrade: true }
                }
            }
            None => {
                // With waiters present a new request always conflicts with
                // the queue (invariant 3), so FIFO means: queue.
                if self.waiters.is_empty() && self.holders.iter().all(|h| h.mode.compatible(mode)) {
                    self.holders.push(Holder { txn, mode });
                    Immediate::Granted { new_holder: true }
                } else {
                    Immediate::Wait { upgrade: false }
                }
            }
        }
    }

    /// Moves every grantable waiter to the holders (one pass suffices:
    /// holders and the kept queue only grow, so a kept waiter stays blocked).
    fn grant_pass(&mut self, granted: &mut Vec<Waiter>) {
        if self.waiters.is_empty() {
            return;
        }
        let mut kept: VecDeque<Waiter> = VecDeque::with_capacity(self.waiters.len());
        let mut scratch = Vec::new();
        while let Some(w) = self.waiters.pop_front() {
            scratch.clear();
            blockers(&self.holders, &w, kept.iter(), &mut scratch);
            if scratch.is_empty() {
                match self.holders.iter_mut().find(|h| h.txn == w.txn) {
                    Some(h) => h.mode = w.mode,
                    None => self.holders.push(Holder {
                        txn: w.txn,
                        mode: w.mode,
                    }),
                }
                granted.push(w);
            } else {
                kept.push_back(w);
            }
        }
        self.waiters = kept;
    }
}

/// The wait-for graph: an edge list per waiting transaction.
#[derive(Default)]
struct WaitGraph {
    edges: IdMap<Vec<TxnId>>,
    // DFS scratch, kept to avoid allocating per search.
    visited: HashSet<TxnId, BuildHasherDefault<IdHasher>>,
    stack: Vec<TxnId>,
}

impl WaitGraph {
    /// Replaces the edges of every waiter of `entry` by its blocked-by set.
    fn publish(&mut self, entry: &LockEntry) {
        for (i, w) in entry.waiters.iter().enumerate() {
            let out = self.edges.entry(w.txn).or_default();
            out.clear();
            blockers(&entry.holders, w, entry.waiters.iter().take(i), out);
        }
    }

    /// Whether a path leads from `start` back to `start`.
    fn on_cycle(&mut self, start: TxnId) -> bool {
        let WaitGraph {
            edges,
            visited,
            stack,
        } = self;
        visited.clear();
        stack.clear();
        if let Some(next) = edges.get(&start) {
            stack.extend_from_slice(next);
        }
        while let Some(t) = stack.pop() {
            if t == start {
                return true;
            }
            if visited.insert(t) {
                if let Some(next) = edges.get(&t) {
                    stack.extend_from_slice(next);
                }
            }
        }
        false
    }
}

#[repr(align(64))]
#[derive(Default)]
struct Shard {
    map: Mutex<HashMap<Arc<[u8]>, LockEntry>>,
}

#[repr(align(64))]
#[derive(Default)]
struct TxnShard {
    /// Held names with their shard index (so release needs no rehash).
    map: Mutex<IdMap<HeldNames>>,
}

#[derive(Default)]
struct Counters {
    waits: AtomicU64,
    current_waits: AtomicU64,
    time_us: AtomicU64,
    time_max_us: AtomicU64,
    deadlocks: AtomicU64,
}

/// The row lock manager. `Send + Sync`; share it behind an `Arc`.
pub struct LockManager {
    shards: Box<[Shard]>,
    txns: Box<[TxnShard]>,
    graph: Mutex<WaitGraph>,
    counters: Counters,
}

impl Default for LockManager {
    fn default() -> Self {
        LockManager::new()
    }
}

impl fmt::Debug for LockManager {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LockManager")
            .field("names", &self.len())
            .field("status", &self.status())
            .finish()
    }
}

fn shrink_if_sparse<K: std::hash::Hash + Eq, V, S: std::hash::BuildHasher>(
    map: &mut HashMap<K, V, S>,
) {
    if map.capacity() > SHRINK_MIN && map.len() * 4 < map.capacity() {
        map.shrink_to(map.len() * 2);
    }
}

impl LockManager {
    pub fn new() -> LockManager {
        LockManager {
            shards: (0..SHARDS).map(|_| Shard::default()).collect(),
            txns: (0..TXN_SHARDS).map(|_| TxnShard::default()).collect(),
            graph: Mutex::new(WaitGraph::default()),
            counters: Counters::default(),
        }
    }

    fn txn_shard(&self, txn: TxnId) -> &TxnShard {
        // Fibonacci hashing: top bits of a multiplicative hash, so ids that
        // differ only in high bits (per-thread id ranges) still spread.
        &self.txns[(txn.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 58) as usize % TXN_SHARDS]
    }

    /// Remembers that `txn` now holds `key`, which lives in name shard
    /// `shard` (called under that shard's mutex).
    fn record(&self, txn: TxnId, shard: usize, key: Arc<[u8]>) {
        // Fits: SHARDS <= 256 (checked at compile time).
        let shard = shard as u8;
        self.txn_shard(txn)
            .map
            .lock()
            .entry(txn)
            .or_default()
            .push((shard, key));
    }

    /// After `entry` changed: grant what can be granted, republish the
    /// waiters' edges (dropping `gone`'s node), wake the granted.
    /// The caller holds the mutex of `entry`'s shard, number `shard`.
    fn settle(&self, entry: &mut LockEntry, shard: usize, gone: Option<TxnId>) {
        let mut granted = Vec::new();
        entry.grant_pass(&mut granted);
        {
            let mut graph = self.graph.lock();
            if let Some(t) = gone {
                graph.edges.remove(&t);
            }
            for w in &granted {
                graph.edges.remove(&w.txn);
            }
            graph.publish(entry);
        }
        for w in granted {
            if !w.upgrade {
                self.record(w.txn, shard, w.key);
            }
            w.slot.grant();
        }
    }

    fn finish_wait(&self, start: Instant) {
        let us = u64::try_from(start.elapsed().as_micros()).unwrap_or(u64::MAX);
        self.counters.time_us.fetch_add(us, Ordering::Relaxed);
        self.counters.time_max_us.fetch_max(us, Ordering::Relaxed);
        self.counters.current_waits.fetch_sub(1, Ordering::Relaxed);
    }

    /// Acquires `mode` on `name` for `txn`, waiting up to `timeout`.
    /// Ok(true) if it had to wait, Ok(false) if granted at once or already held.
    ///
    /// Errors: 1213 if waiting would close a cycle of waits (this request is
    /// the victim; locks already held stay held until [`Self::release_all`]),
    /// 1205 if not granted within `timeout`.
    pub fn lock(
        &self,
        txn: TxnId,
        name: &[u8],
        mode: LockMode,
        timeout: Duration,
    ) -> Result<bool, EngineError> {
        self.lock_interruptible(txn, name, mode, timeout, None)
    }

    /// [`Self::lock`] whose wait also ends when `interrupt` is killed
    /// (KILL QUERY/CONNECTION: 1317; max_execution_time: 3024): the
    /// waiter wakes every [`WAIT_SLICE`] to look, leaves the queue and
    /// returns the error, like a timeout. While it waits the interrupt's
    /// stage is `waiting for row lock`.
    pub fn lock_interruptible(
        &self,
        txn: TxnId,
        name: &[u8],
        mode: LockMode,
        timeout: Duration,
        interrupt: Option<&Interrupt>,
    ) -> Result<bool, EngineError> {
        let shard_no = shard_index(name);
        let shard = &self.shards[shard_no];
        let mut map = shard.map.lock();
        let upgrade = match map.get_mut(name).map(|e| e.try_now(txn, mode)) {
            None => {
                let key: Arc<[u8]> = Arc::from(name);
                map.insert(Arc::clone(&key), LockEntry::new(txn, mode));
                self.record(txn, shard_no, key);
                return Ok(false);
            }
            Some(Immediate::Held) => return Ok(false),
            Some(Immediate::Granted { new_holder }) => {
                self.after_immediate_grant(&mut map, shard_no, txn, name, new_holder);
                return Ok(false);
            }
            Some(Immediate::Wait { upgrade }) => upgrade,
        };

        // Slow path: queue, publish, look for a cycle through us.
        let Some(key) = map.get_key_value(name).map(|(k, _)| Arc::clone(k)) else {
            return Err(EngineError::internal(
                "lock entry vanished under its shard mutex",
            ));
        };
        let Some(entry) = map.get_mut(name) else {
            return Err(EngineError::internal(
                "lock entry vanished under its shard mutex",
            ));
        };
        let slot = Arc::new(WaitSlot::default());
        let waiter = Waiter {
            txn,
            mode,
            upgrade,
            key,
            slot: Arc::clone(&slot),
        };
        if upgrade {
            let pos = entry
                .waiters
                .iter()
                .position(|w| !w.upgrade)
                .unwrap_or(entry.waiters.len());
            entry.waiters.insert(pos, waiter);
        } else {
            entry.waiters.push_back(waiter);
        }
        self.counters.waits.fetch_add(1, Ordering::Relaxed);
        self.counters.current_waits.fetch_add(1, Ordering::Relaxed);
        let start = Instant::now();

        let deadlock = {
            let mut graph = self.graph.lock();
            graph.publish(entry);
            graph.on_cycle(txn)
        };
        if deadlock {
            entry.waiters.retain(|w| !Arc::ptr_eq(&w.slot, &slot));
            self.settle(entry, shard_no, Some(txn));
            self.counters.deadlocks.fetch_add(1, Ordering::Relaxed);
            self.finish_wait(start);
            return Err(deadlock_error());
        }
        drop(map);

        let deadline = start.checked_add(timeout);
        let mut stop: Option<EngineError> = None;
        let granted = match interrupt {
            None => slot.wait(deadline),
            Some(i) => {
                let _stage = i.enter(Stage::RowLock);
                loop {
                    let now = Instant::now();
                    let slice = now + WAIT_SLICE;
                    let until = match deadline {
                        Some(d) if d <= slice => d,
                        _ => slice,
                    };
                    if slot.wait(Some(until)) {
                        break true;
                    }
                    if let Err(e) = i.check() {
                        stop = Some(e);
                        break false;
                    }
                    if deadline.is_some_and(|d| Instant::now() >= d) {
                        break false;
                    }
                }
            }
        };
        if granted {
            self.finish_wait(start);
            return Ok(true);
        }

        // Timed out; a grant may still have raced in before we got the mutex.
        let mut map = shard.map.lock();
        if slot.is_granted() {
            drop(map);
            self.finish_wait(start);
            return Ok(true);
        }
        let unused = match map.get_mut(name) {
            Some(entry) => {
                entry.waiters.retain(|w| !Arc::ptr_eq(&w.slot, &slot));
                self.settle(entry, shard_no, Some(txn));
                entry.is_unused()
            }
            None => false,
        };
        if unused {
            map.remove(name);
        }
        drop(map);
        self.finish_wait(start);
        Err(stop.unwrap_or_else(lock_wait_timeout_error))
    }

    /// Bookkeeping after a grant without queueing on an existing entry.
    fn after_immediate_grant(
        &self,
        map: &mut HashMap<Arc<[u8]>, LockEntry>,
        shard_no: usize,
        txn: TxnId,
        name: &[u8],
        new_holder: bool,
    ) {
        if new_holder {
            if let Some((k, _)) = map.get_key_value(name) {
                self.record(txn, shard_no, Arc::clone(k));
            }
        } else if let Some(entry) = map.get_mut(name) {
            // An in-place upgrade makes queued S requests wait for us too:
            // refresh their edges (no cycle possible: we are not waiting).
            if !entry.waiters.is_empty() {
                self.graph.lock().publish(entry);
            }
        }
    }

    /// Non-blocking attempt: true if granted (or already held). Never queues.
    pub fn try_lock(&self, txn: TxnId, name: &[u8], mode: LockMode) -> bool {
        let shard_no = shard_index(name);
        let shard = &self.shards[shard_no];
        let mut map = shard.map.lock();
        match map.get_mut(name).map(|e| e.try_now(txn, mode)) {
            None => {
                let key: Arc<[u8]> = Arc::from(name);
                map.insert(Arc::clone(&key), LockEntry::new(txn, mode));
                self.record(txn, shard_no, key);
                true
            }
            Some(Immediate::Held) => true,
            Some(Immediate::Granted { new_holder }) => {
                self.after_immediate_grant(&mut map, shard_no, txn, name, new_holder);
                true
            }
            Some(Immediate::Wait { .. }) => false,
        }
    }

    /// Releases every lock of `txn` and wakes waiters. Idempotent.
    pub fn release_all(&self, txn: TxnId) {
        let names = {
            let mut m = self.txn_shard(txn).map.lock();
            let names = m.remove(&txn);
            shrink_if_sparse(&mut m);
            names
        };
        let Some(mut names) = names else { return };
        names.sort_unstable_by_key(|(s, _)| *s);
        for group in names.chunk_by(|a, b| a.0 == b.0) {
            let shard_no = usize::from(group[0].0);
            let mut map = self.shards[shard_no].map.lock();
            for (_, name) in group {
                let unused = match map.get_mut(&**name) {
                    Some(entry) => {
                        if let Some(i) = entry.holders.iter().position(|h| h.txn == txn) {
                            entry.holders.swap_remove(i);
                        }
                        if !entry.waiters.is_empty() {
                            self.settle(entry, shard_no, None);
                        }
                        entry.is_unused()
                    }
                    None => false,
                };
                if unused {
                    map.remove(&**name);
                }
            }
            shrink_if_sparse(&mut map);
        }
    }

    /// Whether `txn` holds `name` in at least `mode`.
    pub fn holds(&self, txn: TxnId, name: &[u8], mode: LockMode) -> bool {
        let map = self.shards[shard_index(name)].map.lock();
        map.get(name)
            .and_then(|e| e.holder_mode(txn))
            .is_some_and(|held| held.covers(mode))
    }

    /// Number of lock names currently tracked (held or waited for).
    pub fn len(&self) -> usize {
        self.shards.iter().map(|s| s.map.lock().len()).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.shards.iter().all(|s| s.map.lock().is_empty())
    }

    /// MySQL status counters (`SHOW GLOBAL STATUS` names and units: ms).
    pub fn status(&self) -> Vec<(&'static str, u64)> {
        let c = &self.counters;
        let waits = c.waits.load(Ordering::Relaxed);
        let time_ms = c.time_us.load(Ordering::Relaxed) / 1000;
        vec![
            ("Innodb_deadlocks", c.deadlocks.load(Ordering::Relaxed)),
            (
                "Innodb_row_lock_current_waits",
                c.current_waits.load(Ordering::Relaxed),
            ),
            ("Innodb_row_lock_time", time_ms),
            (
                "Innodb_row_lock_time_avg",
                time_ms.checked_div(waits).unwrap_or(0),
            ),
            (
                "Innodb_row_lock_time_max",
                c.time_max_us.load(Ordering::Relaxed) / 1000,
            ),
            ("Innodb_row_lock_waits", waits),
        ]
    }

    /// Transactions with a registry entry (test helper for bounded memory).
    #[cfg(test)]
    fn txn_count(&self) -> usize {
        self.txns.iter().map(|s| s.map.lock().len()).sum()
    }

    /// Nodes in the wait-for graph (test helper).
    #[cfg(test)]
    fn graph_nodes(&self) -> usize {
        self.graph.lock().edges.len()
    }
}

#[cfg(test)]
mod tests {
    use super::LockMode::{Exclusive as X, Shared as S};
    use super::*;
    use std::sync::mpsc;
    use std::thread;

    const LONG: Duration = Duration::from_secs(30);

    fn stat(m: &LockManager, name: &str) -> u64 {
        m.status()
            .into_iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v)
            .unwrap_or_else(|| panic!("no status {name}"))
    }

    /// Spins until `n` requests are waiting (generous bound).
    fn wait_for_waiters(m: &LockManager, n: u64) {
        let until = Instant::now() + Duration::from_secs(10);
        while stat(m, "Innodb_row_lock_current_waits") < n {
            assert!(Instant::now() < until, "waiters never queued");
            thread::sleep(Duration::from_millis(1));
        }
    }

    fn assert_clean(m: &LockManager) {
        assert_eq!(m.len(), 0);
        assert!(m.is_empty());
        assert_eq!(m.txn_count(), 0);
        assert_eq!(m.graph_nodes(), 0);
        assert_eq!(stat(m, "Innodb_row_lock_current_waits"), 0);
    }

    /// Runs `lock` on a thread; the receiver gets the result.
    fn spawn_lock(
        m: &Arc<LockManager>,
        txn: TxnId,
        name: &'static [u8],
        mode: LockMode,
        timeout: Duration,
    ) -> mpsc::Receiver<Result<bool, EngineError>> {
        let (tx, rx) = mpsc::channel();
        let m = Arc::clone(m);
        thread::spawn(move || {
            let _ = tx.send(m.lock(txn, name, mode, timeout));
        });
        rx
    }

    #[test]
    fn lock_manager_is_send_sync() {
        fn check<T: Send + Sync>() {}
        check::<LockManager>();
    }

    #[test]
    fn lock_compatibility_matrix() {
        let m = LockManager::new();
        assert!(m.try_lock(1, b"a", S));
        assert!(m.try_lock(2, b"a", S), "S/S compatible");
        assert!(!m.try_lock(3, b"a", X), "S/X conflict");
        assert!(m.try_lock(3, b"b", X));
        assert!(!m.try_lock(4, b"b", X), "X/X conflict");
        assert!(!m.try_lock(4, b"b", S), "X/S conflict");
        assert!(m.holds(1, b"a", S) && !m.holds(1, b"a", X));
        assert!(m.holds(3, b"b", S) && m.holds(3, b"b", X));
        assert!(!m.holds(4, b"b", S));
        assert_eq!(m.len(), 2);
        for t in 1..=4 {
            m.release_all(t);
        }
        assert_clean(&m);
    }

    #[test]
    fn lock_reentrant_is_free() {
        let m = LockManager::new();
        assert!(!m.lock(1, b"a", X, LONG).unwrap());
        assert!(!m.lock(1, b"a", X, LONG).unwrap());
        assert!(!m.lock(1, b"a", S, LONG).unwrap());
        assert!(m.try_lock(1, b"a", S));
        assert!(m.holds(1, b"a", X));
        assert_eq!(stat(&m, "Innodb_row_lock_waits"), 0);
        m.release_all(1);
        m.release_all(1); // idempotent
        assert_clean(&m);
    }

    #[test]
    fn lock_upgrade_alone_is_immediate() {
        let m = LockManager::new();
        assert!(!m.lock(1, b"a", S, LONG).unwrap());
        assert!(!m.lock(1, b"a", X, LONG).unwrap());
        assert!(m.holds(1, b"a", X));
        assert!(!m.try_lock(2, b"a", S));
        m.release_all(1);
        assert_clean(&m);
    }

    #[test]
    fn lock_upgrade_waits_for_other_shared_holder() {
        let m = Arc::new(LockManager::new());
        m.lock(1, b"a", S, LONG).unwrap();
        m.lock(2, b"a", S, LONG).unwrap();
        let rx = spawn_lock(&m, 1, b"a", X, LONG);
        wait_for_waiters(&m, 1);
        assert!(rx.recv_timeout(Duration::from_millis(100)).is_err());
        assert!(m.holds(1, b"a", S) && !m.holds(1, b"a", X));
        m.release_all(2);
        let got = rx
            .recv_timeout(Duration::from_secs(2))
            .expect("upgrade granted");
        assert!(got.unwrap(), "had to wait");
        assert!(m.holds(1, b"a", X));
        m.release_all(1);
        assert_clean(&m);
    }

    #[test]
    fn lock_upgrade_jumps_queue_ahead_of_x_waiter() {
        // MySQL manual's example: A holds S, B waits for X, A asks for X.
        // InnoDB reports a deadlock; we grant the upgrade (documented).
        let m = Arc::new(LockManager::new());
        m.lock(1, b"a", S, LONG).unwrap();
        let rx = spawn_lock(&m, 2, b"a", X, LONG);
        wait_for_waiters(&m, 1);
        assert!(!m.lock(1, b"a", X, LONG).unwrap());
        assert!(m.holds(1, b"a", X));
        m.release_all(1);
        assert!(rx.recv_timeout(Duration::from_secs(2)).unwrap().unwrap());
        m.release_all(2);
        assert_clean(&m);
    }

    #[test]
    fn lock_wait_timeout_gives_1205() {
        let m = LockManager::new();
        m.lock(1, b"a", X, LONG).unwrap();
        let timeout = Duration::from_millis(300);
        let t0 = Instant::now();
        let err = m.lock(2, b"a", S, timeout).unwrap_err();
        let took = t0.elapsed();
        assert_eq!(err.code, 1205);
        assert_eq!(err.sqlstate, "HY000");
        assert_eq!(
            err.message,
            "Lock wait timeout exceeded; try restarting transaction"
        );
        assert!(took >= timeout, "{took:?}");
        assert!(took < timeout + Duration::from_secs(2), "{took:?}");
        assert!(!m.holds(2, b"a", S));
        assert_eq!(stat(&m, "Innodb_row_lock_waits"), 1);
        assert!(stat(&m, "Innodb_row_lock_time") >= 300);
        assert!(stat(&m, "Innodb_row_lock_time_max") >= 300);
        assert_eq!(m.graph_nodes(), 0);
        // The timed-out request left no trace: the holder is unaffected.
        m.release_all(2);
        assert!(m.holds(1, b"a", X));
        m.release_all(1);
        assert_clean(&m);
    }

    #[test]
    fn lock_timeout_zero_fails_at_once() {
        let m = LockManager::new();
        m.lock(1, b"a", X, LONG).unwrap();
        let err = m.lock(2, b"a", X, Duration::ZERO).unwrap_err();
        assert_eq!(err.code, 1205);
        m.release_all(1);
        assert_clean(&m);
    }

    #[test]
    fn lock_timed_out_waiter_unblocks_those_behind_it() {
        // T1 holds S; T2's X waits (short timeout); T3's S queues behind T2.
        // When T2 gives up, T3 is compatible with T1 and must be granted.
        let m = Arc::new(LockManager::new());
        m.lock(1, b"a", S, LONG).unwrap();
        let rx2 = spawn_lock(&m, 2, b"a", X, Duration::from_millis(300));
        wait_for_waiters(&m, 1);
        let rx3 = spawn_lock(&m, 3, b"a", S, LONG);
        wait_for_waiters(&m, 2);
        assert_eq!(
            rx2.recv_timeout(Duration::from_secs(5))
                .unwrap()
                .unwrap_err()
                .code,
            1205
        );
        assert!(rx3.recv_timeout(Duration::from_secs(2)).unwrap().unwrap());
        assert!(m.holds(3, b"a", S));
        for t in 1..=3 {
            m.release_all(t);
        }
        assert_clean(&m);
    }

    #[test]
    fn lock_two_way_deadlock_detected_fast() {
        let m = Arc::new(LockManager::new());
        m.lock(1, b"A", X, LONG).unwrap();
        m.lock(2, b"B", X, LONG).unwrap();
        let rx1 = spawn_lock(&m, 1, b"B", X, LONG);
        wait_for_waiters(&m, 1);
        let t0 = Instant::now();
        let err = m.lock(2, b"A", X, LONG).unwrap_err();
        assert!(t0.elapsed() < Duration::from_secs(2));
        assert_eq!(err.code, 1213);
        assert_eq!(err.sqlstate, "40001");
        assert_eq!(
            err.message,
            "Deadlock found when trying to get lock; try restarting transaction"
        );
        assert_eq!(stat(&m, "Innodb_deadlocks"), 1);
        // The victim keeps its locks until the engine rolls it back.
        assert!(m.holds(2, b"B", X));
        assert!(!m.holds(2, b"A", S));
        assert!(rx1.recv_timeout(Duration::from_millis(100)).is_err());
        m.release_all(2);
        assert!(rx1.recv_timeout(Duration::from_secs(2)).unwrap().unwrap());
        assert!(m.holds(1, b"B", X));
        m.release_all(1);
        assert_clean(&m);
    }

    #[test]
    fn lock_three_way_deadlock_detected() {
        let m = Arc::new(LockManager::new());
        m.lock(1, b"A", X, LONG).unwrap();
        m.lock(2, b"B", X, LONG).unwrap();
        m.lock(3, b"C", X, LONG).unwrap();
        let rx1 = spawn_lock(&m, 1, b"B", X, LONG);
        wait_for_waiters(&m, 1);
        let rx2 = spawn_lock(&m, 2, b"C", S, LONG);
        wait_for_waiters(&m, 2);
        let t0 = Instant::now();
        assert_eq!(m.lock(3, b"A", S, LONG).unwrap_err().code, 1213);
        assert!(t0.elapsed() < Duration::from_secs(2));
        m.release_all(3);
        assert!(rx2.recv_timeout(Duration::from_secs(2)).unwrap().unwrap());
        m.release_all(2);
        assert!(rx1.recv_timeout(Duration::from_secs(2)).unwrap().unwrap());
        m.release_all(1);
        assert_clean(&m);
    }

    #[test]
    fn lock_upgrade_deadlock_detected() {
        let m = Arc::new(LockManager::new());
        m.lock(1, b"a", S, LONG).unwrap();
        m.lock(2, b"a", S, LONG).unwrap();
        let rx1 = spawn_lock(&m, 1, b"a", X, LONG);
        wait_for_waiters(&m, 1);
        let t0 = Instant::now();
        assert_eq!(m.lock(2, b"a", X, LONG).unwrap_err().code, 1213);
        assert!(t0.elapsed() < Duration::from_secs(2));
        assert!(m.holds(2, b"a", S), "victim keeps its S");
        assert!(rx1.recv_timeout(Duration::from_millis(100)).is_err());
        m.release_all(2);
        assert!(rx1.recv_timeout(Duration::from_secs(2)).unwrap().unwrap());
        assert!(m.holds(1, b"a", X));
        m.release_all(1);
        assert_clean(&m);
    }

    #[test]
    fn lock_deadlock_through_edges_added_by_in_place_upgrade() {
        // T1 holds S(a); T2 waits X(a); T3 waits S(a) behind T2. T1 upgrades
        // in place, so T3 now also waits for T1. T3 holds X(c); T1 asks for
        // c: T1→T3→T1 must be found although the T3→T1 edge appeared while
        // T3 was already asleep.
        let m = Arc::new(LockManager::new());
        m.lock(3, b"c", X, LONG).unwrap();
        m.lock(1, b"a", S, LONG).unwrap();
        let rx2 = spawn_lock(&m, 2, b"a", X, LONG);
        wait_for_waiters(&m, 1);
        let rx3 = spawn_lock(&m, 3, b"a", S, LONG);
        wait_for_waiters(&m, 2);
        assert!(!m.lock(1, b"a", X, LONG).unwrap());
        assert_eq!(m.lock(1, b"c", S, LONG).unwrap_err().code, 1213);
        m.release_all(1);
        assert!(rx2.recv_timeout(Duration::from_secs(2)).unwrap().unwrap());
        m.release_all(2);
        assert!(rx3.recv_timeout(Duration::from_secs(2)).unwrap().unwrap());
        m.release_all(3);
        assert_clean(&m);
    }

    #[test]
    fn lock_concurrent_cycle_closing_is_always_detected() {
        // Many rounds of two threads closing the same cycle at once: exactly
        // one of them must get 1213 (never both, never a 30 s hang).
        let m = Arc::new(LockManager::new());
        for round in 0..200u64 {
            let (t1, t2) = (round * 2 + 1, round * 2 + 2);
            m.lock(t1, b"A", X, LONG).unwrap();
            m.lock(t2, b"B", X, LONG).unwrap();
            let barrier = Arc::new(std::sync::Barrier::new(2));
            let spawn = |t: TxnId, want: &'static [u8]| {
                let m = Arc::clone(&m);
                let barrier = Arc::clone(&barrier);
                thread::spawn(move || {
                    barrier.wait();
                    let r = m.lock(t, want, X, LONG);
                    if r.is_err() {
                        m.release_all(t);
                    }
                    r
                })
            };
            let h1 = spawn(t1, b"B");
            let h2 = spawn(t2, b"A");
            // The victim releases at once, so the winner finishes too; a
            // missed cycle would hang both for 30 s instead.
            let t0 = Instant::now();
            while !(h1.is_finished() && h2.is_finished()) {
                assert!(
                    t0.elapsed() < Duration::from_secs(10),
                    "round {round}: hang"
                );
                thread::sleep(Duration::from_micros(200));
            }
            let results = [h1.join().unwrap(), h2.join().unwrap()];
            let errs = results.iter().filter(|r| r.is_err()).count();
            assert_eq!(errs, 1, "round {round}: {results:?}");
            for r in &results {
                if let Err(e) = r {
                    assert_eq!(e.code, 1213);
                }
            }
            m.release_all(t1);
            m.release_all(t2);
        }
        assert_clean(&m);
        assert_eq!(stat(&m, "Innodb_deadlocks"), 200);
    }

    #[test]
    fn lock_new_shared_queues_behind_waiting_exclusive() {
        let m = Arc::new(LockManager::new());
        m.lock(1, b"a", S, LONG).unwrap();
        let rx = spawn_lock(&m, 2, b"a", X, LONG);
        wait_for_waiters(&m, 1);
        assert!(!m.try_lock(3, b"a", S), "S must not overtake a waiting X");
        m.release_all(1);
        assert!(rx.recv_timeout(Duration::from_secs(2)).unwrap().unwrap());
        m.release_all(2);
        m.release_all(3);
        assert_clean(&m);
    }

    #[test]
    fn lock_no_starvation_of_exclusive_by_shared_stream() {
        let m = Arc::new(LockManager::new());
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let next_txn = Arc::new(AtomicU64::new(1000));
        let readers: Vec<_> = (0..4)
            .map(|_| {
                let (m, stop, next_txn) =
                    (Arc::clone(&m), Arc::clone(&stop), Arc::clone(&next_txn));
                thread::spawn(move || {
                    while !stop.load(Ordering::Relaxed) {
                        let t = next_txn.fetch_add(1, Ordering::Relaxed);
                        if m.lock(t, b"hot", S, Duration::from_secs(20)).is_ok() {
                            thread::sleep(Duration::from_millis(2));
                        }
                        m.release_all(t);
                    }
                })
            })
            .collect();
        // A long-lived reader guarantees the writer has to queue; the
        // stream of short readers would keep S held forever if new S
        // requests could overtake a waiting X.
        m.lock(999, b"hot", S, LONG).unwrap();
        let rx = spawn_lock(&m, 1, b"hot", X, Duration::from_secs(20));
        wait_for_waiters(&m, 1);
        thread::sleep(Duration::from_millis(50));
        assert!(!m.try_lock(998, b"hot", S));
        let t0 = Instant::now();
        m.release_all(999);
        let got = rx
            .recv_timeout(Duration::from_secs(2))
            .expect("writer starved");
        assert!(got.unwrap());
        assert!(t0.elapsed() < Duration::from_secs(2));
        assert!(m.holds(1, b"hot", X));
        thread::sleep(Duration::from_millis(20));
        m.release_all(1);
        stop.store(true, Ordering::Relaxed);
        for r in readers {
            r.join().unwrap();
        }
        assert_clean(&m);
    }

    #[test]
    fn lock_release_all_wakes_waiters_promptly() {
        let m = Arc::new(LockManager::new());
        m.lock(1, b"a", X, LONG).unwrap();
        m.lock(1, b"b", X, LONG).unwrap();
        let rx2 = spawn_lock(&m, 2, b"a", X, LONG);
        let rx3 = spawn_lock(&m, 3, b"b", S, LONG);
        let rx4 = spawn_lock(&m, 4, b"b", S, LONG);
        wait_for_waiters(&m, 3);
        let t0 = Instant::now();
        m.release_all(1);
        for rx in [rx2, rx3, rx4] {
            assert!(rx.recv_timeout(Duration::from_secs(2)).unwrap().unwrap());
        }
        assert!(t0.elapsed() < Duration::from_secs(2));
        assert!(m.holds(3, b"b", S) && m.holds(4, b"b", S));
        for t in 2..=4 {
            m.release_all(t);
        }
        assert_clean(&m);
        assert_eq!(stat(&m, "Innodb_row_lock_waits"), 3);
    }

    #[test]
    fn lock_names_are_removed_after_release() {
        let m = LockManager::new();
        for round in 0..50u64 {
            for t in 0..20u64 {
                let txn = round * 100 + t;
                for k in 0..100u32 {
                    let name = [&t.to_be_bytes()[..], &k.to_be_bytes()[..]].concat();
                    assert!(m.try_lock(txn, &name, if k % 2 == 0 { S } else { X }));
                }
            }
            assert_eq!(m.len(), 2000);
            for t in 0..20u64 {
                m.release_all(round * 100 + t);
            }
            assert_clean(&m);
        }
    }

    #[test]
    fn lock_status_names() {
        let m = LockManager::new();
        let names: Vec<_> = m.status().into_iter().map(|(n, _)| n).collect();
        for n in [
            "Innodb_row_lock_waits",
            "Innodb_row_lock_current_waits",
            "Innodb_row_lock_time",
            "Innodb_row_lock_time_max",
            "Innodb_row_lock_time_avg",
            "Innodb_deadlocks",
        ] {
            assert!(names.contains(&n), "{n}");
        }
        assert!(format!("{m:?}").contains("LockManager"));
    }

    use crate::types::testutil::Rng;

    #[test]
    fn lock_stress_random() {
        let m = Arc::new(LockManager::new());
        let threads: Vec<_> = (0..8u64)
            .map(|i| {
                let m = Arc::clone(&m);
                thread::spawn(move || {
                    let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ (i + 1).wrapping_mul(0xD6E8_FEB8));
                    let (mut ok, mut timeouts, mut deadlocks) = (0u64, 0u64, 0u64);
                    for n in 0..400u64 {
                        let txn = (i << 32) | n;
                        let count = 1 + rng.below(4);
                        let mut held = Vec::new();
                        for _ in 0..count {
                            let name = [b'k', rng.below(20) as u8];
                            let mode = if rng.below(2) == 0 { S } else { X };
                            let timeout = Duration::from_millis(rng.below(20));
                            match m.lock(txn, &name, mode, timeout) {
                                Ok(_) => {
                                    assert!(m.holds(txn, &name, mode));
                                    held.push(name);
                                    ok += 1;
                                }
                                Err(e) if e.code == 1205 => timeouts += 1,
                                Err(e) if e.code == 1213 => deadlocks += 1,
                                Err(e) => panic!("unexpected {e:?}"),
                            }
                            if rng.below(8) == 0 {
                                break;
                            }
                        }
                        if rng.below(4) == 0 {
                            thread::sleep(Duration::from_micros(rng.below(500)));
                        }
                        m.release_all(txn);
                        for name in &held {
                            assert!(!m.holds(txn, name, S));
                        }
                    }
                    (ok, timeouts, deadlocks)
                })
            })
            .collect();
        let (mut timeouts, mut deadlocks) = (0, 0);
        for t in threads {
            let (_, to, dl) = t.join().unwrap();
            timeouts += to;
            deadlocks += dl;
        }
        assert_clean(&m);
        let waits = stat(&m, "Innodb_row_lock_waits");
        assert_eq!(stat(&m, "Innodb_deadlocks"), deadlocks);
        assert!(
            waits >= deadlocks + timeouts,
            "{waits} {deadlocks} {timeouts}"
        );
        assert!(stat(&m, "Innodb_row_lock_time_max") <= stat(&m, "Innodb_row_lock_time"));
        eprintln!("stress: waits {waits}, timeouts {timeouts}, deadlocks {deadlocks}");
    }
}
