//! # MVCC: commit sequence numbers, snapshots, version chains, purge
//!
//! quire follows the *write-committed* model (DESIGN.md): a transaction's
//! writes stay in its private write set and reach the B+trees only when it
//! commits, in commit order. So the trees hold committed data only, and each
//! clustered row carries the commit sequence number (CSN) of the
//! transaction that wrote it:
//!
//! ```text
//!  clustered value = csn u64 LE | flags u8 (1 = delete-marked) | row bytes
//! ```
//!
//! The CSN is the end LSN of the transaction's commit record in the redo
//! log: increasing in commit order, and durable without a counter of its
//! own. `visible_csn` is the CSN of the newest commit fully applied to the
//! trees; a snapshot is just that number taken at some moment, and sees a
//! version iff `version.csn <= snapshot`.
//!
//! When a commit overwrites (or delete-marks) a row, the value it replaces
//! is first pushed onto that row's in-memory *version chain*:
//!
//! ```text
//!   tree:  pk=7 -> csn 900 "c"         readers with snapshot s:
//!   chain: pk=7 -> [csn 400 "a",        s >= 900 : "c" (tree)
//!                   csn 650 "b"]        650 <= s < 900 : "b" (chain)
//!                                       400 <= s < 650 : "a" (chain)
//!                                       s < 400 : absent
//! ```
//!
//! **Purge**: once the oldest active snapshot is at least a commit's CSN,
//! nothing can see what that commit replaced: its chain entries are
//! dropped, secondary-index entries only the old versions used are deleted,
//! and rows it delete-marked are removed from the tree. Purge runs in the
//! commit critical section, so memory for old versions is bounded by what
//! open snapshots pin. Chains live in memory only: after a crash there are
//! no snapshots, and leftover delete-marked rows and stale secondary entries
//! are invisible garbage that readers skip.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use parking_lot::Mutex;

/// Flags byte of a clustered value.
pub const FLAG_DELETED: u8 = 1;

/// Splits a clustered tree value into (csn, deleted, row bytes).
pub fn split_value(v: &[u8]) -> Option<(u64, bool, &[u8])> {
    if v.len() < 9 {
        return None;
    }
    let csn = u64::from_le_bytes(v[..8].try_into().ok()?);
    Some((csn, v[8] & FLAG_DELETED != 0, &v[9..]))
}

pub fn make_value(csn: u64, deleted: bool, row: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(9 + row.len());
    v.extend_from_slice(&csn.to_le_bytes());
    v.push(if deleted { FLAG_DELETED } else { 0 });
    v.extend_from_slice(row);
    v
}

/// One superseded version of a row (the full clustered value it had).
#[derive(Debug, Clone)]
pub struct Version {
    pub csn: u64,
    pub deleted: bool,
    pub row: Vec<u8>,
}

type ChainKey = (u32, Vec<u8>);

const SHARDS: usize = 32;

/// Version chains, sharded by key.
#[derive(Debug)]
pub struct Chains {
    shards: Vec<Mutex<HashMap<ChainKey, Vec<Version>>>>,
    versions: AtomicUsize,
    bytes: AtomicUsize,
}

impl Default for Chains {
    fn default() -> Self {
        Chains {
            shards: (0..SHARDS).map(|_| Mutex::new(HashMap::new())).collect(),
            versions: AtomicUsize::new(0),
            bytes: AtomicUsize::new(0),
        }
    }
}

fn shard(table: u32, pk: &[u8]) -> usize {
    let h = pk
        .iter()
        .fold(table as u64 ^ 0xcbf2_9ce4_8422_2325, |h, &b| {
            (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
        });
    (h as usize) % SHARDS
}

impl Chains {
    /// Records the value a commit is about to replace. Versions of one key
    /// are pushed in commit order.
    pub fn push(&self, table: u32, pk: &[u8], v: Version) {
        self.versions.fetch_add(1, Ordering::Relaxed);
        self.bytes.fetch_add(v.row.len() + 48, Ordering::Relaxed);
        let mut s = self.shards[shard(table, pk)].lock();
        let chain = s.entry((table, pk.to_vec())).or_default();
        debug_assert!(chain.last().is_none_or(|l| l.csn <= v.csn), "chain order");
        chain.push(v);
    }

    /// The newest superseded version visible at `snapshot`, if any.
    pub fn visible(&self, table: u32, pk: &[u8], snapshot: u64) -> Option<Version> {
        let s = self.shards[shard(table, pk)].lock();
        let chain = s.get(&(table, pk.to_vec()))?;
        chain.iter().rev().find(|v| v.csn <= snapshot).cloned()
    }

    /// Removes versions older than `csn` (superseded at or before it) and
    /// returns them; also returns the versions that remain.
    pub fn prune(&self, table: u32, pk: &[u8], csn: u64) -> (Vec<Version>, Vec<Version>) {
        let mut s = self.shards[shard(table, pk)].lock();
        let key = (table, pk.to_vec());
        let Some(chain) = s.get_mut(&key) else {
            return (Vec::new(), Vec::new());
        };
        let cut = chain
            .iter()
            .position(|v| v.csn >= csn)
            .unwrap_or(chain.len());
        let removed: Vec<Version> = chain.drain(..cut).collect();
        let rest = chain.clone();
        if chain.is_empty() {
            s.remove(&key);
        }
        drop(s);
        self.versions.fetch_sub(removed.len(), Ordering::Relaxed);
        let b: usize = removed.iter().map(|v| v.row.len() + 48).sum();
        self.bytes.fetch_sub(b, Ordering::Relaxed);
        (removed, rest)
    }

    /// Removes and returns every version of a dropped table (no reader
    /// can reach them: the table is gone from the catalog).
    pub fn take_table(&self, table: u32) -> Vec<Version> {
        let mut out = Vec::new();
        for shard in &self.shards {
            let mut s = shard.lock();
            let keys: Vec<ChainKey> = s.keys().filter(|k| k.0 == table).cloned().collect();
            for k in keys {
                out.extend(s.remove(&k).unwrap_or_default());
            }
        }
        self.versions.fetch_sub(out.len(), Ordering::Relaxed);
        let b: usize = out.iter().map(|v| v.row.len() + 48).sum();
        self.bytes.fetch_sub(b, Ordering::Relaxed);
        out
    }

    /// (versions, approximate bytes) held right now.
    pub fn usage(&self) -> (usize, usize) {
        (
            self.versions.load(Ordering::Relaxed),
            self.bytes.load(Ordering::Relaxed),
        )
    }
}

/// Active snapshots, so purge knows the oldest one.
#[derive(Debug, Default)]
pub struct Snapshots {
    active: Mutex<BTreeMap<u64, u32>>,
    pub visible: AtomicU64,
}

impl Snapshots {
    /// Takes a snapshot of the committed state and registers it.
    pub fn open(&self) -> u64 {
        let mut a = self.active.lock();
        // Read under the lock: purge reads `oldest` under it too, so a
        // snapshot is either seen by purge or newer than what purge frees.
        let s = self.visible.load(Ordering::Acquire);
        *a.entry(s).or_insert(0) += 1;
        s
    }
    pub fn close(&self, s: u64) {
        let mut a = self.active.lock();
        match a.get_mut(&s) {
            Some(n) if *n > 1 => *n -= 1,
            Some(_) => {
                a.remove(&s);
            }
            None => debug_assert!(false, "closing an unknown snapshot"),
        }
    }
    /// The oldest snapshot anyone may still read at.
    pub fn oldest(&self) -> u64 {
        let a = self.active.lock();
        let v = self.visible.load(Ordering::Acquire);
        a.first_key_value().map(|(&s, _)| s.min(v)).unwrap_or(v)
    }
    pub fn count(&self) -> usize {
        self.active.lock().values().map(|&n| n as usize).sum()
    }
}

/// Work purge must do once the oldest snapshot reaches `csn`.
#[derive(Debug)]
pub struct PurgeItem {
    pub csn: u64,
    pub table: u32,
    pub pk: Vec<u8>,
}

/// Commits whose replaced versions still wait for purge, in CSN order.
#[derive(Debug, Default)]
pub struct PurgeQueue {
    pub items: VecDeque<PurgeItem>,
}
