//! # Interrupts: KILL, KILL QUERY and max_execution_time reach the engine
//!
//! A connection owns one [`Interrupt`] (a cheap `Arc` handle). The server
//! keeps a clone in its process list; `KILL [QUERY|CONNECTION] id` and the
//! `max_execution_time` deadline set a *kill state* on it, and the code that
//! can run for long polls it at *safe points*:
//!
//! ```text
//!   killer thread                      victim thread (its Txn holds a clone)
//!   ─────────────                      ────────────────────────────────────
//!   interrupt.kill(Query) ──store──►   row lock wait (lock.rs): wakes every
//!                                        WAIT_SLICE, sees the flag, leaves the
//!                                        queue, error 1317
//!                                      Txn::scan: every CHECK_EVERY rows
//!                                      SQL loops (joins, SLEEP): same check
//!                                      commit: checked once *before* the
//!                                        prepare record is written; after
//!                                        that the commit runs to its end
//! ```
//!
//! The state is one atomic byte; checking it is a relaxed load, so loops
//! can afford a check every few thousand rows. A deadline (milliseconds
//! since the process's first interrupt clock read) is a second atomic; the
//! check reads the clock only every [`CHECK_EVERY`] calls of
//! [`Interrupt::tick`], or on every [`Interrupt::check`].
//!
//! ## Commits are not abandoned
//! MySQL lets a commit whose transaction already entered the binlog group
//! commit finish, whatever KILL says. quire does the same: the kill flag
//! is looked at once, when `Txn::commit` starts; a killed statement that
//! reaches that point is rolled back (error 1317). Once the prepare record
//! is in the redo log the commit is only *reported* as
//! `waiting for handler commit` ([`Stage::HandlerCommit`]) and completes.
//!
//! ## Stages
//! [`Interrupt::stage`] says where the thread is waiting, for the process
//! list's `State` column: a row lock wait, a table's metadata lock or the
//! group-commit queue. The
//! SQL layer adds its own states on top (`executing`, `Sending data`, ...).

use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use crate::error::EngineError;

/// Safe-point checks in row loops happen every this many rows.
pub const CHECK_EVERY: u32 = 1024;
/// A lock waiter wakes this often to look at its kill flag.
pub const WAIT_SLICE: Duration = Duration::from_millis(10);

/// Why a statement or connection is being stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Kill {
    /// Not killed.
    None = 0,
    /// `KILL QUERY`: the running statement fails with 1317.
    Query = 1,
    /// `KILL [CONNECTION]`: the statement fails, the connection closes.
    Connection = 2,
    /// `max_execution_time` exceeded: the statement fails with 3024.
    Timeout = 3,
}

/// Where a thread is waiting inside the engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Stage {
    /// Not waiting in the engine.
    None = 0,
    /// Queued on a row lock (`waiting for row lock`).
    RowLock = 1,
    /// In the commit pipeline (`waiting for handler commit`).
    HandlerCommit = 2,
    /// Queued on a table's metadata lock (mdl.rs), with MySQL's state
    /// text, which operators look for when a DDL piles statements up.
    MetadataLock = 3,
}

impl Stage {
    /// The process list's `State` text for this stage ("" for none).
    pub fn name(self) -> &'static str {
        match self {
            Stage::None => "",
            Stage::RowLock => "waiting for row lock",
            Stage::HandlerCommit => "waiting for handler commit",
            Stage::MetadataLock => "Waiting for table metadata lock",
        }
    }
}

#[derive(Debug, Default)]
struct State {
    kill: AtomicU8,
    stage: AtomicU8,
    /// 0 = no deadline; else milliseconds on [`clock_ms`] + 1.
    deadline: AtomicU64,
    /// Calls of `tick` since the last full check.
    ticks: AtomicU64,
    /// The session's `lock_wait_timeout` in seconds (0: the global value).
    mdl_wait_s: AtomicU64,
}

/// A connection's kill flag, statement deadline and engine stage. Clones
/// share the state.
#[derive(Debug, Clone, Default)]
pub struct Interrupt(Arc<State>);

fn epoch() -> Instant {
    static E: OnceLock<Instant> = OnceLock::new();
    *E.get_or_init(Instant::now)
}

/// Milliseconds on the interrupt clock (monotonic).
fn clock_ms() -> u64 {
    u64::try_from(epoch().elapsed().as_millis()).unwrap_or(u64::MAX)
}

/// Error 1317 (`KILL QUERY`, `KILL CONNECTION`).
pub fn interrupted_error() -> EngineError {
    EngineError::new(1317, "70100", "Query execution was interrupted")
}

/// Error 3024 (`max_execution_time`).
pub fn timeout_error() -> EngineError {
    EngineError::new(
        3024,
        "HY000",
        "Query execution was interrupted, maximum statement execution time exceeded",
    )
}

impl Interrupt {
    /// A fresh, unkilled interrupt.
    pub fn new() -> Interrupt {
        Interrupt::default()
    }

    /// The connection's own `lock_wait_timeout` (metadata lock waits of
    /// its DDL and of its transactions' first writes to a table); None:
    /// the global value at the time of each wait.
    pub fn set_mdl_wait_timeout(&self, t: Option<Duration>) {
        let s = t.map_or(0, |d| d.as_secs().max(1));
        self.0.mdl_wait_s.store(s, Ordering::Relaxed);
    }

    /// See [`Interrupt::set_mdl_wait_timeout`].
    pub fn mdl_wait_timeout(&self) -> Option<Duration> {
        match self.0.mdl_wait_s.load(Ordering::Relaxed) {
            0 => None,
            s => Some(Duration::from_secs(s)),
        }
    }

    /// Requests a stop. A connection kill is never downgraded to a query
    /// kill or a timeout.
    pub fn kill(&self, how: Kill) {
        let _ = self
            .0
            .kill
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |cur| {
                if cur == Kill::Connection as u8 {
                    None
                } else {
                    Some(how as u8)
                }
            });
    }

    /// The current kill state.
    pub fn killed(&self) -> Kill {
        match self.0.kill.load(Ordering::Relaxed) {
            1 => Kill::Query,
            2 => Kill::Connection,
            3 => Kill::Timeout,
            _ => Kill::None,
        }
    }

    /// A new statement starts: a pending `KILL QUERY` or timeout is
    /// forgotten (as MySQL does), a connection kill stays. The deadline
    /// is cleared.
    pub fn reset_query(&self) {
        let _ = self
            .0
            .kill
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |cur| {
                (cur != Kill::Connection as u8 && cur != 0).then_some(0)
            });
        self.0.deadline.store(0, Ordering::Relaxed);
    }

    /// Arms a statement deadline `after` from now (`None` clears it).
    pub fn set_deadline(&self, after: Option<Duration>) {
        let v = match after {
            None => 0,
            Some(d) => clock_ms()
                .saturating_add(u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
                .saturating_add(1),
        };
        self.0.deadline.store(v, Ordering::Relaxed);
    }

    /// Whether a deadline is armed.
    pub fn has_deadline(&self) -> bool {
        self.0.deadline.load(Ordering::Relaxed) != 0
    }

    /// Full check (reads the clock when a deadline is armed): `Err` with
    /// 1317 or 3024 if the statement must stop.
    pub fn check(&self) -> Result<(), EngineError> {
        match self.killed() {
            Kill::None => {}
            Kill::Timeout => return Err(timeout_error()),
            Kill::Query | Kill::Connection => return Err(interrupted_error()),
        }
        let d = self.0.deadline.load(Ordering::Relaxed);
        if d != 0 && clock_ms().saturating_add(1) >= d {
            self.kill(Kill::Timeout);
            return Err(match self.killed() {
                Kill::Timeout => timeout_error(),
                _ => interrupted_error(),
            });
        }
        Ok(())
    }

    /// Cheap check for row loops: the kill flag every call, the clock
    /// every [`CHECK_EVERY`] calls.
    pub fn tick(&self) -> Result<(), EngineError> {
        if self.0.kill.load(Ordering::Relaxed) != 0 {
            return self.check();
        }
        if self.0.deadline.load(Ordering::Relaxed) == 0 {
            return Ok(());
        }
        let n = self.0.ticks.fetch_add(1, Ordering::Relaxed);
        if n.is_multiple_of(u64::from(CHECK_EVERY)) {
            self.check()
        } else {
            Ok(())
        }
    }

    /// Where the thread waits in the engine.
    pub fn stage(&self) -> Stage {
        match self.0.stage.load(Ordering::Relaxed) {
            1 => Stage::RowLock,
            2 => Stage::HandlerCommit,
            3 => Stage::MetadataLock,
            _ => Stage::None,
        }
    }

    /// Sets the stage; the returned guard puts [`Stage::None`] back.
    pub fn enter(&self, stage: Stage) -> StageGuard<'_> {
        self.0.stage.store(stage as u8, Ordering::Relaxed);
        StageGuard(self)
    }

    /// Whether two handles share one state.
    pub fn same(&self, other: &Interrupt) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

/// Resets the stage when dropped.
pub struct StageGuard<'a>(&'a Interrupt);

impl Drop for StageGuard<'_> {
    fn drop(&mut self) {
        self.0 .0.stage.store(Stage::None as u8, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kill_and_reset() {
        let i = Interrupt::new();
        assert!(i.check().is_ok());
        i.kill(Kill::Query);
        assert_eq!(i.check().map_err(|e| e.code), Err(1317));
        i.reset_query();
        assert!(i.check().is_ok());
        i.kill(Kill::Connection);
        i.kill(Kill::Query);
        assert_eq!(i.killed(), Kill::Connection);
        i.reset_query();
        assert_eq!(i.killed(), Kill::Connection, "a connection kill stays");
    }

    #[test]
    fn deadline_gives_3024() {
        let i = Interrupt::new();
        i.set_deadline(Some(Duration::from_millis(0)));
        std::thread::sleep(Duration::from_millis(3));
        assert_eq!(i.check().map_err(|e| e.code), Err(3024));
        i.reset_query();
        assert!(i.check().is_ok());
        assert!(!i.has_deadline());
    }

    #[test]
    fn kill_ends_a_row_lock_wait_and_leaves_the_queue() {
        use crate::lock::{LockManager, LockMode};
        let lm = Arc::new(LockManager::new());
        lm.lock(1, b"row", LockMode::Exclusive, Duration::from_secs(1))
            .expect("T1 gets the lock");
        let i = Interrupt::new();
        let (lm2, i2) = (Arc::clone(&lm), i.clone());
        let waiter = std::thread::spawn(move || {
            lm2.lock_interruptible(
                2,
                b"row",
                LockMode::Exclusive,
                Duration::from_secs(60),
                Some(&i2),
            )
        });
        let t0 = Instant::now();
        while i.stage() != Stage::RowLock && t0.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(1));
        }
        assert_eq!(i.stage(), Stage::RowLock, "the waiter reports its stage");
        i.kill(Kill::Query);
        let r = waiter.join().expect("waiter thread");
        assert_eq!(r.map_err(|e| e.code), Err(1317));
        assert!(t0.elapsed() < Duration::from_secs(30));
        assert_eq!(i.stage(), Stage::None);
        // The waiter left the queue: T1's release empties the table.
        lm.release_all(1);
        assert_eq!(lm.len(), 0);
    }

    #[test]
    fn stage_guard_resets() {
        let i = Interrupt::new();
        {
            let _g = i.enter(Stage::RowLock);
            assert_eq!(i.stage(), Stage::RowLock);
        }
        assert_eq!(i.stage(), Stage::None);
    }
}
