//! # Ordered, overlapping commits for the applier
//!
//! One applier thread applies the source's transactions one after the
//! other; waiting for each one's fsyncs before starting the next would cap
//! the replica at one transaction per device flush, far below a source
//! whose clients share fsyncs in groups. So the applier hands each
//! finished transaction to a committer thread and moves on:
//!
//! ```text
//!   applier:  apply T1 ─ submit ─ apply T2 ─ submit ─ apply T3 ─ ...
//!   committer a:      T1.commit_ordered ──queued──fsync──done
//!   committer b:                wait T1 queued ─ T2.commit_ordered ─...
//! ```
//!
//! **Order.** A committer starts T(n)'s commit only after T(n-1) is in
//! the engine's commit queue (`Txn::commit_ordered`), so the commit order
//! (binlog order, redo order) is the source's order. Recovery keeps a
//! prefix of that order, so the highest stored position after a crash
//! names a transaction all of whose predecessors survived too.
//!
//! **Position slots.** Every transaction writes its own position row, slot
//! `seq % SLOTS` of `mysql.quire_replica_position` (a single row would
//! make each transaction wait for the previous one's row lock, that is,
//! for its fsync). At most SLOTS commits are in flight, so in-flight
//! transactions never share a slot; a restart resumes from the slot with
//! the highest sequence number.
//!
//! **Failure.** If T(n) fails before it is queued, every later
//! transaction is rolled back instead of committed (none may pass it);
//! a failure after queueing poisons the store, and the engine fails the
//! later ones itself.

use std::collections::BTreeMap;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::Arc;
use std::thread::JoinHandle;

use parking_lot::{Condvar, Mutex};
use quire_engine::Txn;

use super::applier::{ApplyError, SourcePos};

/// Commits in flight at most (and position slots).
pub const SLOTS: u64 = 16;

/// What a finished commit reports.
pub struct Done {
    pub pos: SourcePos,
    pub result: Result<(), ApplyError>,
}

#[derive(Default)]
struct OrderState {
    /// Highest sequence number whose commit is queued (or given up).
    queued: u64,
    /// A commit failed before it was queued: later ones must not commit.
    failed: bool,
    done: BTreeMap<u64, Done>,
}

#[derive(Default)]
struct Order {
    state: Mutex<OrderState>,
    changed: Condvar,
}

/// Marks its sequence number queued when called, or failed when dropped
/// uncalled (the engine dropped the callback: the commit never queued).
struct QueuedGuard {
    order: Arc<Order>,
    seq: u64,
    called: bool,
}

impl QueuedGuard {
    fn fire(mut self) {
        self.called = true;
        self.mark(false);
    }

    fn mark(&self, failed: bool) {
        let mut g = self.order.state.lock();
        g.queued = g.queued.max(self.seq);
        g.failed |= failed;
        self.order.changed.notify_all();
    }
}

impl Drop for QueuedGuard {
    fn drop(&mut self) {
        if !self.called {
            self.mark(true);
        }
    }
}

struct Job {
    seq: u64,
    txn: Txn,
    pos: SourcePos,
}

/// The committer threads of one applier session.
pub struct Committer {
    jobs: Option<SyncSender<Job>>,
    order: Arc<Order>,
    threads: Vec<JoinHandle<()>>,
    /// Sequence number of the last submitted transaction.
    submitted: u64,
    /// Sequence number up to which results were taken.
    taken: u64,
}

impl Committer {
    /// `first_seq`: the sequence number the next submission gets.
    pub fn new(first_seq: u64) -> Committer {
        let (tx, rx) = sync_channel::<Job>(SLOTS as usize);
        let rx = Arc::new(Mutex::new(rx));
        let order = Arc::new(Order::default());
        order.state.lock().queued = first_seq - 1;
        let threads = (0..SLOTS)
            .filter_map(|i| {
                let rx = rx.clone();
                let order = order.clone();
                std::thread::Builder::new()
                    .name(format!("replica-commit-{i}"))
                    .spawn(move || commit_loop(&rx, &order))
                    .ok()
            })
            .collect();
        Committer {
            jobs: Some(tx),
            order,
            threads,
            submitted: first_seq - 1,
            taken: first_seq - 1,
        }
    }

    /// Whether submitted commits have not all been taken.
    pub fn in_flight(&self) -> bool {
        self.taken < self.submitted
    }

    /// The sequence number the next submission gets (its position slot).
    pub fn next_seq(&self) -> u64 {
        self.submitted + 1
    }

    /// Hands `txn` (rows and position slot written) over; waits while
    /// SLOTS commits are in flight. Returns what finished meanwhile.
    pub fn submit(&mut self, txn: Txn, pos: SourcePos) -> Vec<Done> {
        let mut out = self.take_done(false);
        while self.submitted - self.taken >= SLOTS {
            out.extend(self.take_done(true));
        }
        self.submitted += 1;
        let job = Job {
            seq: self.submitted,
            txn,
            pos,
        };
        let sent = self.jobs.as_ref().is_some_and(|j| j.send(job).is_ok());
        if !sent {
            // No committer thread left (spawn failed): fail this one.
            let mut g = self.order.state.lock();
            g.failed = true;
            g.done.insert(
                self.submitted,
                Done {
                    pos: SourcePos::default(),
                    result: Err(ApplyError {
                        code: 1594,
                        message: "no replica committer thread".to_string(),
                    }),
                },
            );
        }
        out
    }

    /// Waits for every submitted commit; returns their results in order.
    pub fn drain(&mut self) -> Vec<Done> {
        let mut out = Vec::new();
        while self.taken < self.submitted {
            out.extend(self.take_done(true));
        }
        out
    }

    /// Results in sequence order from `taken + 1` on; with `wait`, at
    /// least one (blocking).
    fn take_done(&mut self, wait: bool) -> Vec<Done> {
        let mut g = self.order.state.lock();
        let mut out = Vec::new();
        loop {
            while let Some(d) = g.done.remove(&(self.taken + 1)) {
                self.taken += 1;
                out.push(d);
            }
            if !out.is_empty() || !wait || self.taken >= self.submitted {
                return out;
            }
            self.order.changed.wait(&mut g);
        }
    }
}

impl Drop for Committer {
    fn drop(&mut self) {
        self.drain();
        self.jobs = None;
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

fn commit_loop(rx: &Mutex<Receiver<Job>>, order: &Arc<Order>) {
    loop {
        let job = {
            let r = rx.lock();
            r.recv()
        };
        let Ok(job) = job else { return };
        let failed = {
            let mut g = order.state.lock();
            while g.queued + 1 < job.seq && !g.failed {
                order.changed.wait(&mut g);
            }
            g.failed
        };
        let guard = QueuedGuard {
            order: order.clone(),
            seq: job.seq,
            called: false,
        };
        let result = if failed {
            job.txn.rollback();
            drop(guard);
            Err(ApplyError {
                code: 1594,
                message: "an earlier transaction of the source failed to commit".to_string(),
            })
        } else {
            job.txn
                .commit_ordered(Box::new(move || guard.fire()))
                .map(|_| ())
                .map_err(ApplyError::from)
        };
        let mut g = order.state.lock();
        g.done.insert(
            job.seq,
            Done {
                pos: job.pos,
                result,
            },
        );
        order.changed.notify_all();
    }
}
