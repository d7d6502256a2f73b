//! # Table metadata locks: DDL waits for the transactions using a table
//!
//! A transaction buffers its writes and applies them at commit against the
//! table *as it is then*. A DDL statement that changes a table under an
//! open writer breaks that writer's assumptions: CREATE UNIQUE INDEX would
//! index rows whose uniqueness was never checked against it, DROP TABLE
//! would leave the writes nowhere to go. MySQL prevents this with metadata
//! locks (MDL): a statement takes a shared lock on each table it uses,
//! held to the end of the transaction, and DDL needs an exclusive one.
//! This is the part of that protocol quire's DDL needs, for writers:
//!
//! ```text
//!   writer (first write to t)          DDL on t
//!   ─────────────────────────          ────────
//!   wait while t.ddl is set            set t.ddl (new writers now wait)
//!   t.writers += 1                     wait until t.writers == 0
//!   ... commit or roll back ...        ... change the table ...
//!   t.writers -= 1, wake DDL           clear t.ddl, wake writers
//! ```
//!
//! A pending DDL blocks new writers (as MySQL's pending exclusive lock
//! does), so a steady stream of writers cannot starve it. An online
//! CREATE INDEX lets writers back in while it fills the index
//! ([`DdlGuard::admit_writers`], MySQL's downgrade to a shared upgradable
//! lock): the table stays claimed against other DDL, and
//! [`DdlGuard::exclude_writers`] drains them again before the index
//! becomes readable. Either side
//! waits at most `lock_wait_timeout` seconds (MySQL's ER_LOCK_WAIT_TIMEOUT,
//! 1205) and stops early for KILL (1317). Readers take nothing: a snapshot
//! older than a new index gets 1412 from the index itself.
//!
//! Invariant: `writers` counts the open transactions that have written to
//! the table (each counted once); at most one DDL holds a table at a time
//! (`ddl` or `online` set, never both).

use std::collections::HashMap;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

use crate::error::{EngineError, Result};
use crate::interrupt::{Interrupt, WAIT_SLICE};

#[derive(Default)]
struct Entry {
    writers: usize,
    /// A DDL holds the table and writers wait.
    ddl: bool,
    /// A DDL holds the table against other DDL only; writers go on.
    online: bool,
}

impl Entry {
    fn idle(&self) -> bool {
        self.writers == 0 && !self.ddl && !self.online
    }
    fn claimed(&self) -> bool {
        self.ddl || self.online
    }
}

/// The metadata locks of every table, by table id.
#[derive(Default)]
pub(crate) struct TableLocks {
    tables: Mutex<HashMap<u32, Entry>>,
    changed: Condvar,
}

/// ER_LOCK_WAIT_TIMEOUT (1205), as MySQL reports a metadata lock timeout.
fn timeout() -> EngineError {
    EngineError::new(
        1205,
        "HY000",
        "Lock wait timeout exceeded; try restarting transaction",
    )
}

impl TableLocks {
    /// Waits until `ready` holds for the table's entry (`wait` at most,
    /// looking at the kill flag every WAIT_SLICE), then applies `then`.
    fn wait_until(
        &self,
        table: u32,
        wait: Duration,
        interrupt: Option<&Interrupt>,
        ready: impl Fn(&Entry) -> bool,
        then: impl FnOnce(&mut Entry),
    ) -> Result<()> {
        let deadline = Instant::now() + wait;
        let mut map = self.tables.lock();
        loop {
            let e = map.entry(table).or_default();
            if ready(e) {
                then(e);
                return Ok(());
            }
            if let Some(Err(err)) = interrupt.map(Interrupt::check) {
                if e.idle() {
                    map.remove(&table);
                }
                return Err(err);
            }
            let now = Instant::now();
            if now >= deadline {
                if e.idle() {
                    map.remove(&table);
                }
                return Err(timeout());
            }
            let slice = (deadline - now).min(WAIT_SLICE);
            self.changed.wait_for(&mut map, slice);
        }
    }

    /// A transaction's first write to `table`: waits while a DDL holds or
    /// waits for it, then counts the writer in.
    pub(crate) fn enter_writer(
        &self,
        table: u32,
        wait: Duration,
        interrupt: Option<&Interrupt>,
    ) -> Result<()> {
        self.wait_until(table, wait, interrupt, |e| !e.ddl, |e| e.writers += 1)
    }

    /// The end of a transaction that wrote to `table`.
    pub(crate) fn leave_writer(&self, table: u32) {
        let mut map = self.tables.lock();
        if let Some(e) = map.get_mut(&table) {
            debug_assert!(e.writers > 0, "writer count of table {table} underflows");
            e.writers = e.writers.saturating_sub(1);
            if e.idle() {
                map.remove(&table);
            }
        }
        drop(map);
        self.changed.notify_all();
    }

    /// DDL on `table`: claims it (new writers wait), then waits for the
    /// open writers to end. The claim lasts as long as the guard.
    pub(crate) fn enter_ddl(
        &self,
        table: u32,
        wait: Duration,
        interrupt: Option<&Interrupt>,
    ) -> Result<DdlGuard<'_>> {
        // One DDL at a time per table: wait for another to finish first.
        self.wait_until(table, wait, interrupt, |e| !e.claimed(), |e| e.ddl = true)?;
        let guard = DdlGuard { locks: self, table };
        // On an error the guard's drop releases the claim.
        self.wait_until(table, wait, interrupt, |e| e.writers == 0, |_| {})?;
        Ok(guard)
    }

    fn leave_ddl(&self, table: u32) {
        self.set_claim(table, false, false);
    }

    fn set_claim(&self, table: u32, ddl: bool, online: bool) {
        let mut map = self.tables.lock();
        let e = map.entry(table).or_default();
        e.ddl = ddl;
        e.online = online;
        if e.idle() {
            map.remove(&table);
        }
        drop(map);
        self.changed.notify_all();
    }
}

/// A DDL's hold on a table; dropping it lets writers in again.
pub(crate) struct DdlGuard<'a> {
    locks: &'a TableLocks,
    table: u32,
}

impl DdlGuard<'_> {
    /// Lets the table's writers in again while the DDL keeps the table
    /// from other DDL.
    pub(crate) fn admit_writers(&self) {
        self.locks.set_claim(self.table, false, true);
    }

    /// After [`Self::admit_writers`]: new writers wait again, and this
    /// returns once the open ones have ended (1205 after `wait`, 1317 on
    /// KILL; writers are let in again then, the claim against other DDL
    /// stays).
    pub(crate) fn exclude_writers(
        &self,
        wait: Duration,
        interrupt: Option<&Interrupt>,
    ) -> Result<()> {
        self.locks.set_claim(self.table, true, false);
        let r = self
            .locks
            .wait_until(self.table, wait, interrupt, |e| e.writers == 0, |_| {});
        if r.is_err() {
            self.locks.set_claim(self.table, false, true);
        }
        r
    }
}

impl Drop for DdlGuard<'_> {
    fn drop(&mut self) {
        self.locks.leave_ddl(self.table);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    const LONG: Duration = Duration::from_secs(30);

    #[test]
    fn ddl_waits_for_writers_and_a_timeout_leaves_no_claim() {
        let l = Arc::new(TableLocks::default());
        l.enter_writer(7, LONG, None).expect("writer");
        // The DDL cannot finish while the writer is open.
        let short = Duration::from_millis(30);
        assert_eq!(
            l.enter_ddl(7, short, None).err().map(|e| e.code),
            Some(1205)
        );
        // A timed-out DDL left no claim behind: writers still enter.
        l.enter_writer(7, short, None).expect("second writer");
        l.leave_writer(7);
        // Another table is not affected.
        l.enter_ddl(8, short, None).expect("ddl on another table");
        let l2 = l.clone();
        let ddl = std::thread::spawn(move || {
            let g = l2.enter_ddl(7, LONG, None).map(|_| ());
            g.is_ok()
        });
        std::thread::sleep(Duration::from_millis(50));
        assert!(!ddl.is_finished(), "the DDL waits for the writer");
        l.leave_writer(7);
        assert!(
            ddl.join().expect("ddl thread"),
            "DDL ran once the writer left"
        );
        l.enter_writer(7, short, None)
            .expect("writer after the DDL");
        l.leave_writer(7);
    }

    #[test]
    fn a_pending_ddl_holds_new_writers_back() {
        let l = Arc::new(TableLocks::default());
        l.enter_writer(1, LONG, None).expect("writer");
        let l2 = l.clone();
        let ddl = std::thread::spawn(move || {
            let _g = l2.enter_ddl(1, LONG, None).expect("ddl");
            std::thread::sleep(Duration::from_millis(50));
        });
        // Wait until the DDL's claim is visible.
        let t0 = Instant::now();
        while !l.tables.lock().get(&1).is_some_and(|e| e.ddl) {
            assert!(t0.elapsed() < LONG, "DDL never claimed the table");
            std::thread::yield_now();
        }
        let short = Duration::from_millis(20);
        assert_eq!(
            l.enter_writer(1, short, None).err().map(|e| e.code),
            Some(1205),
            "a new writer waits behind the pending DDL"
        );
        l.leave_writer(1);
        ddl.join().expect("ddl thread");
        l.enter_writer(1, short, None)
            .expect("writer after the DDL");
    }

    #[test]
    fn kill_stops_a_wait() {
        let l = TableLocks::default();
        l.enter_writer(3, LONG, None).expect("writer");
        let i = Interrupt::new();
        i.kill(crate::interrupt::Kill::Query);
        assert_eq!(
            l.enter_ddl(3, LONG, Some(&i)).err().map(|e| e.code),
            Some(1317)
        );
    }

    /// An online build admits writers but not other DDL; excluding
    /// writers again waits for the open ones, and a timeout there lets
    /// writers back in with the DDL claim kept.
    #[test]
    fn an_online_claim_admits_writers_but_not_ddl() {
        let l = Arc::new(TableLocks::default());
        let short = Duration::from_millis(30);
        let g = l.enter_ddl(5, LONG, None).expect("ddl");
        assert_eq!(
            l.enter_writer(5, short, None).err().map(|e| e.code),
            Some(1205)
        );
        g.admit_writers();
        l.enter_writer(5, short, None)
            .expect("writer during the build");
        assert_eq!(
            l.enter_ddl(5, short, None).err().map(|e| e.code),
            Some(1205)
        );
        // The writer is open: excluding times out, writers still enter.
        assert_eq!(
            g.exclude_writers(short, None).err().map(|e| e.code),
            Some(1205)
        );
        l.enter_writer(5, short, None).expect("second writer");
        l.leave_writer(5);
        l.leave_writer(5);
        g.exclude_writers(short, None).expect("no writer open");
        assert_eq!(
            l.enter_writer(5, short, None).err().map(|e| e.code),
            Some(1205)
        );
        drop(g);
        l.enter_writer(5, short, None)
            .expect("writer after the DDL");
        l.leave_writer(5);
        assert!(l.tables.lock().is_empty(), "no entry left behind");
    }
}
