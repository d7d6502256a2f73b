//! # Semi-synchronous replication, source side (wait point AFTER_SYNC)
//!
//! ```text
//!  commit group:  flush ─> sync (binlog fsync) ─> [wait for ack] ─> commit ─> client OK
//!                                                       ^
//!  dump thread ── event ... XID (needs ack) ──> replica │
//!  ack reader  <── 0xEF pos file (the replica has it) ──┘  Binlog::semisync_ack
//! ```
//!
//! With `rpl_semi_sync_source_enabled` and a semi-sync replica connected,
//! a commit group is made visible and acknowledged only once
//! `rpl_semi_sync_source_wait_for_replica_count` replicas have reported
//! (file, position) at or past the group's end: the transaction then
//! survives the loss of the whole source machine. If no ack comes within
//! `rpl_semi_sync_source_timeout` ms, the source goes on asynchronously
//! (`Rpl_semi_sync_source_status` OFF, the group counted in `_no_tx`) until
//! a replica acknowledges the current end of the log, as MySQL does.
//! Off (the default), the commit path pays one atomic load.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

/// Semi-sync state of the source.
#[derive(Debug, Default)]
pub struct SemiSync {
    /// `rpl_semi_sync_source_enabled`.
    pub enabled: AtomicBool,
    /// `rpl_semi_sync_source_timeout` in ms.
    pub timeout_ms: AtomicU64,
    /// `rpl_semi_sync_source_wait_for_replica_count`.
    pub wait_count: AtomicU64,
    /// Falls back to asynchronous after a timeout (status OFF) until a
    /// replica catches up.
    fallen_back: AtomicBool,
    /// (file seq, position) each semi-sync replica acknowledged, by
    /// connection.
    acks: Mutex<HashMap<u64, (u32, u64)>>,
    acked: Condvar,
    pub yes_tx: AtomicU64,
    pub no_tx: AtomicU64,
    pub timeouts: AtomicU64,
    /// Total µs commit groups waited for acks, and how many waited.
    pub wait_us: AtomicU64,
    pub waits: AtomicU64,
}

impl SemiSync {
    /// A semi-sync replica's dump started (`conn` identifies it).
    pub fn attach(&self, conn: u64) {
        self.acks.lock().insert(conn, (0, 0));
    }

    /// Its dump ended.
    pub fn detach(&self, conn: u64) {
        self.acks.lock().remove(&conn);
        self.acked.notify_all();
    }

    /// Semi-sync replicas connected (`Rpl_semi_sync_source_clients`).
    pub fn clients(&self) -> u64 {
        self.acks.lock().len() as u64
    }

    /// `Rpl_semi_sync_source_status`: waiting for acks now.
    pub fn active(&self) -> bool {
        self.enabled.load(Ordering::Acquire) && !self.fallen_back.load(Ordering::Acquire)
    }

    /// A replica acknowledged everything up to (seq, pos); `log_end` is
    /// the log's current end (an ack there ends a fallback).
    pub fn ack(&self, conn: u64, seq: u32, pos: u64, log_end: (u32, u64)) {
        {
            let mut a = self.acks.lock();
            if let Some(e) = a.get_mut(&conn) {
                *e = (*e).max((seq, pos));
            }
        }
        if (seq, pos) >= log_end {
            self.fallen_back.store(false, Ordering::Release);
        }
        self.acked.notify_all();
    }

    /// AFTER_SYNC: waits until enough replicas acknowledged `end` (a
    /// group of `n` transactions), or the timeout. Returns at once when
    /// semi-sync is off or fallen back.
    pub(crate) fn wait_for(&self, end: (u32, u64), n: u64) {
        if !self.active() {
            if self.enabled.load(Ordering::Relaxed) {
                self.no_tx.fetch_add(n, Ordering::Relaxed);
            }
            return;
        }
        let need = self.wait_count.load(Ordering::Relaxed).max(1) as usize;
        let timeout = Duration::from_millis(self.timeout_ms.load(Ordering::Relaxed));
        let started = Instant::now();
        let deadline = started + timeout;
        let mut a = self.acks.lock();
        loop {
            if a.values().filter(|&&p| p >= end).count() >= need {
                drop(a);
                self.yes_tx.fetch_add(n, Ordering::Relaxed);
                self.waits.fetch_add(1, Ordering::Relaxed);
                self.wait_us
                    .fetch_add(started.elapsed().as_micros() as u64, Ordering::Relaxed);
                return;
            }
            let now = Instant::now();
            if now >= deadline {
                drop(a);
                self.fallen_back.store(true, Ordering::Release);
                self.timeouts.fetch_add(1, Ordering::Relaxed);
                self.no_tx.fetch_add(n, Ordering::Relaxed);
                return;
            }
            self.acked.wait_for(&mut a, deadline - now);
        }
    }

    /// The status variables (MySQL 8.0.26+ names; MariaDB's `master`
    /// names are given too).
    pub fn status(&self) -> Vec<(&'static str, u64)> {
        let avg = self
            .wait_us
            .load(Ordering::Relaxed)
            .checked_div(self.waits.load(Ordering::Relaxed))
            .unwrap_or(0);
        let status = u64::from(self.active());
        let clients = self.clients();
        let yes = self.yes_tx.load(Ordering::Relaxed);
        let no = self.no_tx.load(Ordering::Relaxed);
        let timeouts = self.timeouts.load(Ordering::Relaxed);
        vec![
            ("Rpl_semi_sync_source_status", status),
            ("Rpl_semi_sync_source_clients", clients),
            ("Rpl_semi_sync_source_yes_tx", yes),
            ("Rpl_semi_sync_source_no_tx", no),
            ("Rpl_semi_sync_source_no_times", timeouts),
            ("Rpl_semi_sync_source_tx_avg_wait_time", avg),
            ("Rpl_semi_sync_master_status", status),
            ("Rpl_semi_sync_master_clients", clients),
            ("Rpl_semi_sync_master_yes_tx", yes),
            ("Rpl_semi_sync_master_no_tx", no),
            ("Rpl_semi_sync_master_no_times", timeouts),
            ("Rpl_semi_sync_master_tx_avg_wait_time", avg),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn waits_for_an_ack_falls_back_on_timeout_and_recovers() {
        let s = Arc::new(SemiSync::default());
        s.enabled.store(true, Ordering::Release);
        s.timeout_ms.store(50, Ordering::Release);
        s.attach(7);
        // An ack from another thread releases the wait.
        let s2 = s.clone();
        let h = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(5));
            s2.ack(7, 1, 500, (1, 900));
        });
        s.wait_for((1, 500), 3);
        h.join().expect("acker");
        assert_eq!(s.yes_tx.load(Ordering::Relaxed), 3);
        // No ack: the timeout, then asynchronous.
        s.wait_for((1, 900), 2);
        assert!(!s.active(), "fell back");
        assert_eq!(s.no_tx.load(Ordering::Relaxed), 2);
        s.wait_for((1, 950), 1);
        assert_eq!(s.no_tx.load(Ordering::Relaxed), 3, "counted, no wait");
        // The replica catches up with the log's end: semi-sync again.
        s.ack(7, 1, 950, (1, 950));
        assert!(s.active());
        s.detach(7);
        assert_eq!(s.clients(), 0);
    }
}
