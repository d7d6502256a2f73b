//! # Page cleaner: background flushing paced by I/O capacity
//!
//! One thread wakes once a second (or when a writer signals that the
//! checkpoint age passed the async point) and decides how many of the
//! oldest dirty pages to write, as InnoDB's page cleaner does:
//!
//! ```text
//!  pct_dirty = dirty% >= innodb_max_dirty_pages_pct      -> 100
//!              dirty% >  innodb_max_dirty_pages_pct_lwm  -> dirty% * 100 / max_dirty_pct
//!              otherwise                                 -> 0
//!  pct_lsn   = (adaptive flushing ON and age% > innodb_adaptive_flushing_lwm)
//!                 -> age% * sqrt(age%) / 7.5  (age% = checkpoint age / async point)
//!  pages     = innodb_io_capacity * max(pct_dirty, pct_lsn) / 100, plus with
//!              adaptive flushing the pages needed to keep pace with the redo
//!              generated in the last second, capped at innodb_io_capacity_max
//!  idle (no redo since the last round)                   -> innodb_io_capacity
//!  age >= async point                                    -> no cap: flush until
//!                                                           the age is back under it
//! ```
//!
//! After each round the checkpoint moves to the oldest page still dirty.
//! A failed write poisons the store; the cleaner then stops flushing.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

use crate::page::Lsn;
use crate::store::Shared;

/// Wakes the cleaner early.
#[derive(Debug, Default)]
pub struct Signal {
    flag: Mutex<bool>,
    cv: Condvar,
    /// Pause switch for tests and crash simulation.
    pub paused: AtomicBool,
}

impl Signal {
    pub fn wake(&self) {
        let mut f = self.flag.lock();
        *f = true;
        self.cv.notify_one();
    }
    fn wait(&self, d: Duration) {
        let mut f = self.flag.lock();
        if !*f {
            self.cv.wait_for(&mut f, d);
        }
        *f = false;
    }
}

/// How many pages one round should flush (pure, for tests).
#[derive(Debug, Clone, Copy)]
pub struct Pace {
    pub io_capacity: u64,
    pub io_capacity_max: u64,
    pub max_dirty_pct: f64,
    pub dirty_lwm_pct: f64,
    pub adaptive: bool,
    pub adaptive_lwm_pct: f64,
}

impl Pace {
    /// `dirty_pct` in 0..100; `age_pct` = checkpoint age as % of the async
    /// point; `pages_for_redo_rate` = dirty pages whose oldest modification
    /// falls in the redo generated over the last second.
    pub fn pages(&self, dirty_pct: f64, age_pct: f64, pages_for_redo_rate: u64, idle: bool) -> u64 {
        if idle {
            return self.io_capacity;
        }
        let pct_dirty = if dirty_pct >= self.max_dirty_pct {
            100.0
        } else if self.dirty_lwm_pct > 0.0 && dirty_pct > self.dirty_lwm_pct {
            dirty_pct * 100.0 / self.max_dirty_pct.max(1.0)
        } else {
            0.0
        };
        let pct_lsn = if self.adaptive && age_pct > self.adaptive_lwm_pct {
            age_pct * age_pct.sqrt() / 7.5
        } else {
            0.0
        };
        let mut n = (self.io_capacity as f64 * pct_dirty.max(pct_lsn) / 100.0) as u64;
        if self.adaptive && pct_lsn > 0.0 {
            n = n.max(pages_for_redo_rate);
        }
        n.min(self.io_capacity_max)
    }
}

pub(crate) fn start(shared: Arc<Shared>) -> JoinHandle<()> {
    std::thread::Builder::new()
        .name("quire-page-cleaner".into())
        .spawn(move || run(shared))
        .expect("spawning the page cleaner thread")
}

fn run(shared: Arc<Shared>) {
    let mut last_lsn: Lsn = shared.log.lsn();
    let mut last_round = Instant::now();
    loop {
        shared.cleaner.wait(Duration::from_secs(1));
        if shared.is_shutdown() || shared.poison.is_set() {
            return;
        }
        if shared.cleaner.paused.load(Ordering::Acquire) {
            continue;
        }
        let lsn = shared.log.lsn();
        let elapsed = last_round.elapsed().as_secs_f64().max(0.001);
        let redo_rate = (lsn - last_lsn) as f64 / elapsed;
        let idle = lsn == last_lsn;
        last_lsn = lsn;
        last_round = Instant::now();
        if round(&shared, redo_rate, idle).is_err() {
            // The store is poisoned; writers see the error.
            return;
        }
    }
}

fn round(shared: &Shared, redo_rate_lsn_per_s: f64, idle: bool) -> crate::Result<()> {
    let cfg = &shared.cfg;
    let pool = &shared.pool;
    let batch = pool.batch_pages();
    let age = shared.checkpoint_age();
    let async_point = shared.async_point();
    if age >= async_point {
        // Flush without pacing until the age is back under the async point.
        while shared.checkpoint_age() >= async_point * 7 / 8 && !shared.is_shutdown() {
            let target = shared.log.lsn().saturating_sub(async_point * 7 / 8);
            let n = pool.flush_batch(batch, target)?;
            shared.make_checkpoint()?;
            if n == 0 {
                break;
            }
        }
        return Ok(());
    }
    let dirty = pool.dirty_pages();
    if dirty == 0 {
        return shared.make_checkpoint();
    }
    let dirty_pct = dirty as f64 * 100.0 / pool.frame_count() as f64;
    let age_pct = age as f64 * 100.0 / async_point.max(1) as f64;
    // Pages holding the oldest second's worth of redo, estimated from the
    // share of dirty pages in that LSN window.
    let pages_for_rate = if age > 0 {
        ((redo_rate_lsn_per_s / age as f64).min(1.0) * dirty as f64) as u64
    } else {
        0
    };
    let pace = Pace {
        io_capacity: cfg.innodb_io_capacity,
        io_capacity_max: cfg.innodb_io_capacity_max,
        max_dirty_pct: cfg.innodb_max_dirty_pages_pct,
        dirty_lwm_pct: cfg.innodb_max_dirty_pages_pct_lwm,
        adaptive: cfg.innodb_adaptive_flushing,
        adaptive_lwm_pct: cfg.innodb_adaptive_flushing_lwm,
    };
    let mut todo = pace.pages(dirty_pct, age_pct, pages_for_rate, idle);
    while todo > 0 && !shared.is_shutdown() {
        let n = pool.flush_batch((todo as usize).min(batch), Lsn::MAX)?;
        if n == 0 {
            break;
        }
        todo = todo.saturating_sub(n as u64);
    }
    shared.make_checkpoint()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pace() -> Pace {
        Pace {
            io_capacity: 200,
            io_capacity_max: 2000,
            max_dirty_pct: 90.0,
            dirty_lwm_pct: 10.0,
            adaptive: true,
            adaptive_lwm_pct: 10.0,
        }
    }

    #[test]
    fn pacing_follows_dirty_pct_and_age() {
        let p = pace();
        assert_eq!(p.pages(5.0, 5.0, 0, false), 0, "below both low-water marks");
        assert_eq!(
            p.pages(5.0, 5.0, 0, true),
            200,
            "idle flushes at io_capacity"
        );
        assert_eq!(
            p.pages(95.0, 0.0, 0, false),
            200,
            "over max dirty: full io_capacity"
        );
        let mid = p.pages(45.0, 0.0, 0, false);
        assert!(mid > 0 && mid < 200, "{mid}");
        // Age near the async point asks for more than io_capacity, capped.
        let hi = p.pages(0.0, 95.0, 0, false);
        assert!(hi > 200 && hi <= 2000, "{hi}");
        assert_eq!(
            p.pages(0.0, 95.0, 10_000, false),
            2000,
            "capped at io_capacity_max"
        );
        let off = Pace {
            adaptive: false,
            ..p
        };
        assert_eq!(
            off.pages(0.0, 95.0, 10_000, false),
            0,
            "adaptive off ignores age"
        );
    }
}
