//! # Table metadata locks: DDL waits for the transactions using a table
//!
//! A transaction buffers its writes and applies them at commit against the
//! table *as it is then*, and reads with a snapshot taken at its first
//! read. A DDL statement that changes a table under an open transaction
//! breaks it: CREATE UNIQUE INDEX would index rows whose uniqueness was
//! never checked against it, DROP TABLE would leave the writes nowhere to
//! go, and a REPEATABLE READ reader would find the table rebuilt under
//! its snapshot (1412). MySQL prevents this with metadata locks (MDL):
//! every statement takes a shared lock on each table it uses, held to the
//! end of the transaction (to the end of the statement with autocommit),
//! and DDL needs an exclusive one. quire keeps, per table, how many open
//! transactions use it and which DDL claim holds it:
//!
//! ```text
//!   claim        new readers   new writers   other DDL   MySQL's lock
//!   ─────        ───────────   ───────────   ─────────   ────────────
//!   none         enter         enter         may claim   -
//!   Online       enter         enter         wait        SU (INPLACE build)
//!   NoWrite      enter         wait          wait        SNW (COPY, LOCK=SHARED)
//!   Exclusive    wait          wait          wait        X
//!
//!   transaction (first use of t)        DDL on t
//!   ────────────────────────────        ────────
//!   wait while the claim keeps it out   claim t (one DDL at a time)
//!   t.readers or t.writers += 1         wait for the users the claim
//!   ... commit or roll back ...           excludes to end
//!   count -= 1, wake DDL                ... change the table ...
//!                                       release, wake the waiters
//! ```
//!
//! A claim that is waiting already keeps new users out (as MySQL's pending
//! exclusive lock does), so a steady stream of transactions cannot starve
//! a DDL. A claim changes level as the DDL goes: an online CREATE INDEX
//! claims NoWrite, lets everyone in while it fills ([`DdlGuard::admit_writers`]),
//! drains writers before checking uniqueness ([`DdlGuard::exclude_writers`])
//! and takes the table exclusively to install the index
//! ([`DdlGuard::exclusive`]); a COPY rebuild reads the old table under
//! NoWrite and goes Exclusive for the swap.
//!
//! A transaction that read the table and now writes it while a DDL claims
//! it at NoWrite or above would wait for the DDL, which waits for it: the
//! writer is the victim and gets 1213 at once, as MySQL's MDL deadlock
//! detector picks DML over DDL. Either side otherwise waits at most
//! `lock_wait_timeout` seconds (ER_LOCK_WAIT_TIMEOUT, 1205) and stops
//! early for KILL (1317).
//!
//! Invariants: `readers + writers` counts the open transactions that use
//! the table, each once (a reader that writes moves from one count to the
//! other); at most one DDL claims a table at a time; an entry with no user
//! and no claim is removed.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

use crate::error::{EngineError, Result};
use crate::interrupt::{Interrupt, Stage, WAIT_SLICE};

/// A DDL's hold on a table, from weakest to strongest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
enum Claim {
    #[default]
    None,
    /// Other DDL waits; readers and writers go on.
    Online,
    /// Other DDL and new writers wait; readers go on.
    NoWrite,
    /// Everyone new waits.
    Exclusive,
}

impl Claim {
    fn admits_readers(self) -> bool {
        self < Claim::Exclusive
    }
    fn admits_writers(self) -> bool {
        self < Claim::NoWrite
    }
}

/// How a transaction uses a table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Use {
    Read,
    Write,
}

#[derive(Default)]
struct Entry {
    readers: usize,
    writers: usize,
    claim: Claim,
}

impl Entry {
    fn idle(&self) -> bool {
        self.readers == 0 && self.writers == 0 && self.claim == Claim::None
    }
    /// No open user that `claim` keeps out is left.
    fn drained_for(&self, claim: Claim) -> bool {
        (claim.admits_writers() || self.writers == 0)
            && (claim.admits_readers() || self.readers == 0)
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

/// ER_LOCK_DEADLOCK (1213): a reader that would wait to write for a DDL
/// that waits for it.
fn deadlock() -> EngineError {
    EngineError::new(
        1213,
        "40001",
        "Deadlock found when trying to get lock; try restarting transaction",
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
        // Set once the thread has to wait: the process list's State.
        let mut stage = None;
        loop {
            let e = map.entry(table).or_default();
            if ready(e) {
                then(e);
                return Ok(());
            }
            if stage.is_none() {
                stage = interrupt.map(|i| i.enter(Stage::MetadataLock));
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

    /// A transaction's first use of `table`: waits while a DDL's claim
    /// keeps this use out, then counts the transaction in.
    pub(crate) fn enter(
        &self,
        table: u32,
        what: Use,
        wait: Duration,
        interrupt: Option<&Interrupt>,
    ) -> Result<()> {
        match what {
            Use::Read => self.wait_until(
                table,
                wait,
                interrupt,
                |e| e.claim.admits_readers(),
                |e| e.readers += 1,
            ),
            Use::Write => self.wait_until(
                table,
                wait,
                interrupt,
                |e| e.claim.admits_writers(),
                |e| e.writers += 1,
            ),
        }
    }

    /// A transaction that entered `table` as a reader writes it: counted
    /// as a writer from now on, or 1213 when a DDL's claim keeps writers
    /// out (that DDL waits for this transaction; see the module doc).
    pub(crate) fn upgrade(&self, table: u32) -> Result<()> {
        let mut map = self.tables.lock();
        let Some(e) = map.get_mut(&table) else {
            return Err(EngineError::internal(format!(
                "table {table}: upgrade without a metadata lock"
            )));
        };
        if !e.claim.admits_writers() {
            return Err(deadlock());
        }
        debug_assert!(e.readers > 0, "reader count of table {table} underflows");
        e.readers = e.readers.saturating_sub(1);
        e.writers += 1;
        Ok(())
    }

    /// The end of a transaction that used `table`.
    pub(crate) fn leave(&self, table: u32, what: Use) {
        let mut map = self.tables.lock();
        if let Some(e) = map.get_mut(&table) {
            let n = match what {
                Use::Read => &mut e.readers,
                Use::Write => &mut e.writers,
            };
            debug_assert!(*n > 0, "{what:?} count of table {table} underflows");
            *n = n.saturating_sub(1);
            if e.idle() {
                map.remove(&table);
            }
        }
        drop(map);
        self.changed.notify_all();
    }

    /// DDL on `table`: claims it exclusively (new users wait), then waits
    /// for the open ones to end. The claim lasts as long as the guard.
    pub(crate) fn enter_ddl(
        &self,
        table: u32,
        wait: Duration,
        interrupt: Option<&Interrupt>,
    ) -> Result<DdlGuard<'_>> {
        self.claim(table, Claim::Exclusive, wait, interrupt)
    }

    /// DDL that reads the table while it works (a COPY rebuild, an index
    /// build): new writers wait, readers go on; returns once the open
    /// writers have ended.
    pub(crate) fn enter_ddl_no_write(
        &self,
        table: u32,
        wait: Duration,
        interrupt: Option<&Interrupt>,
    ) -> Result<DdlGuard<'_>> {
        self.claim(table, Claim::NoWrite, wait, interrupt)
    }

    fn claim(
        &self,
        table: u32,
        claim: Claim,
        wait: Duration,
        interrupt: Option<&Interrupt>,
    ) -> Result<DdlGuard<'_>> {
        // One DDL at a time per table: wait for another to finish first.
        self.wait_until(
            table,
            wait,
            interrupt,
            |e| e.claim == Claim::None,
            |e| e.claim = claim,
        )?;
        let guard = DdlGuard { locks: self, table };
        // On an error the guard's drop releases the claim.
        self.wait_until(table, wait, interrupt, |e| e.drained_for(claim), |_| {})?;
        Ok(guard)
    }

    fn set_claim(&self, table: u32, claim: Claim) {
        let mut map = self.tables.lock();
        let e = map.entry(table).or_default();
        e.claim = claim;
        if e.idle() {
            map.remove(&table);
        }
        drop(map);
        self.changed.notify_all();
    }
}

/// A DDL's hold on a table; dropping it lets everyone in again.
pub(crate) struct DdlGuard<'a> {
    locks: &'a TableLocks,
    table: u32,
}

impl DdlGuard<'_> {
    /// Lets the table's writers in again while the DDL keeps the table
    /// from other DDL.
    pub(crate) fn admit_writers(&self) {
        self.locks.set_claim(self.table, Claim::Online);
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
        self.raise(Claim::NoWrite, Claim::Online, wait, interrupt)
    }

    /// The table for this DDL alone: new users wait, and this returns
    /// once the open readers and writers have ended. On an error (1205,
    /// 1317) the claim goes back to NoWrite.
    pub(crate) fn exclusive(&self, wait: Duration, interrupt: Option<&Interrupt>) -> Result<()> {
        self.raise(Claim::Exclusive, Claim::NoWrite, wait, interrupt)
    }

    fn raise(
        &self,
        to: Claim,
        fallback: Claim,
        wait: Duration,
        interrupt: Option<&Interrupt>,
    ) -> Result<()> {
        self.locks.set_claim(self.table, to);
        let r = self
            .locks
            .wait_until(self.table, wait, interrupt, |e| e.drained_for(to), |_| {});
        if r.is_err() {
            self.locks.set_claim(self.table, fallback);
        }
        r
    }
}

impl Drop for DdlGuard<'_> {
    fn drop(&mut self) {
        self.locks.set_claim(self.table, Claim::None);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    const LONG: Duration = Duration::from_secs(30);

    impl TableLocks {
        fn enter_w(&self, t: u32, wait: Duration, i: Option<&Interrupt>) -> Result<()> {
            self.enter(t, Use::Write, wait, i)
        }
        fn leave_w(&self, t: u32) {
            self.leave(t, Use::Write)
        }
        fn enter_r(&self, t: u32, wait: Duration) -> Result<()> {
            self.enter(t, Use::Read, wait, None)
        }
    }

    fn code(r: Result<()>) -> Option<u16> {
        r.err().map(|e| e.code)
    }

    #[test]
    fn ddl_waits_for_writers_and_a_timeout_leaves_no_claim() {
        let l = Arc::new(TableLocks::default());
        l.enter_w(7, LONG, None).expect("writer");
        // The DDL cannot finish while the writer is open.
        let short = Duration::from_millis(30);
        assert_eq!(
            l.enter_ddl(7, short, None).err().map(|e| e.code),
            Some(1205)
        );
        // A timed-out DDL left no claim behind: writers still enter.
        l.enter_w(7, short, None).expect("second writer");
        l.leave_w(7);
        // Another table is not affected.
        l.enter_ddl(8, short, None).expect("ddl on another table");
        let l2 = l.clone();
        let ddl = std::thread::spawn(move || {
            let g = l2.enter_ddl(7, LONG, None).map(|_| ());
            g.is_ok()
        });
        std::thread::sleep(Duration::from_millis(50));
        assert!(!ddl.is_finished(), "the DDL waits for the writer");
        l.leave_w(7);
        assert!(
            ddl.join().expect("ddl thread"),
            "DDL ran once the writer left"
        );
        l.enter_w(7, short, None).expect("writer after the DDL");
        l.leave_w(7);
    }

    #[test]
    fn a_pending_ddl_holds_new_writers_back() {
        let l = Arc::new(TableLocks::default());
        l.enter_w(1, LONG, None).expect("writer");
        let l2 = l.clone();
        let ddl = std::thread::spawn(move || {
            let _g = l2.enter_ddl(1, LONG, None).expect("ddl");
            std::thread::sleep(Duration::from_millis(50));
        });
        // Wait until the DDL's claim is visible.
        let t0 = Instant::now();
        let claimed = |l: &TableLocks| {
            l.tables
                .lock()
                .get(&1)
                .is_some_and(|e| e.claim == Claim::Exclusive)
        };
        while !claimed(&l) {
            assert!(t0.elapsed() < LONG, "DDL never claimed the table");
            std::thread::yield_now();
        }
        let short = Duration::from_millis(20);
        assert_eq!(
            l.enter_w(1, short, None).err().map(|e| e.code),
            Some(1205),
            "a new writer waits behind the pending DDL"
        );
        l.leave_w(1);
        ddl.join().expect("ddl thread");
        l.enter_w(1, short, None).expect("writer after the DDL");
    }

    #[test]
    fn kill_stops_a_wait() {
        let l = TableLocks::default();
        l.enter_w(3, LONG, None).expect("writer");
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
        assert_eq!(l.enter_w(5, short, None).err().map(|e| e.code), Some(1205));
        g.admit_writers();
        l.enter_w(5, short, None).expect("writer during the build");
        assert_eq!(
            l.enter_ddl(5, short, None).err().map(|e| e.code),
            Some(1205)
        );
        // The writer is open: excluding times out, writers still enter.
        assert_eq!(
            g.exclude_writers(short, None).err().map(|e| e.code),
            Some(1205)
        );
        l.enter_w(5, short, None).expect("second writer");
        l.leave_w(5);
        l.leave_w(5);
        g.exclude_writers(short, None).expect("no writer open");
        assert_eq!(l.enter_w(5, short, None).err().map(|e| e.code), Some(1205));
        drop(g);
        l.enter_w(5, short, None).expect("writer after the DDL");
        l.leave_w(5);
        assert!(l.tables.lock().is_empty(), "no entry left behind");
    }

    /// Readers hold off an exclusive DDL and a pending one holds new
    /// readers back; a NoWrite claim lets readers in but not writers.
    #[test]
    fn readers_hold_ddl_off_and_no_write_admits_them() {
        let l = Arc::new(TableLocks::default());
        let short = Duration::from_millis(30);
        l.enter_r(9, LONG).expect("reader");
        assert_eq!(code(l.enter_ddl(9, short, None).map(drop)), Some(1205));
        let g = l
            .enter_ddl_no_write(9, short, None)
            .expect("no-write claim");
        l.enter_r(9, short).expect("a second reader under NoWrite");
        assert_eq!(code(l.enter_w(9, short, None)), Some(1205));
        // The readers are open: the exclusive step times out and the
        // claim falls back to NoWrite (readers still enter).
        assert_eq!(code(g.exclusive(short, None)), Some(1205));
        l.enter_r(9, short).expect("reader after the failed raise");
        for _ in 0..3 {
            l.leave(9, Use::Read);
        }
        g.exclusive(short, None).expect("no reader left");
        assert_eq!(code(l.enter_r(9, short)), Some(1205));
        drop(g);
        l.enter_r(9, short).expect("reader after the DDL");
        l.leave(9, Use::Read);
        assert!(l.tables.lock().is_empty(), "no entry left behind");
    }

    /// A reader that writes while a DDL waits for it is the deadlock's
    /// victim at once (1213); without a claim it becomes a writer.
    #[test]
    fn a_reader_that_writes_under_a_claim_is_the_deadlock_victim() {
        let l = Arc::new(TableLocks::default());
        let short = Duration::from_millis(30);
        l.enter_r(4, LONG).expect("reader");
        l.upgrade(4).expect("no claim: the reader writes");
        assert_eq!(
            code(l.enter_ddl_no_write(4, short, None).map(drop)),
            Some(1205)
        );
        l.leave(4, Use::Write);
        l.enter_r(4, LONG).expect("reader");
        let g = l.enter_ddl_no_write(4, short, None).expect("claim");
        assert_eq!(code(l.upgrade(4)), Some(1213));
        g.admit_writers();
        l.upgrade(4).expect("an online claim admits the write");
        l.leave(4, Use::Write);
        drop(g);
        assert!(l.tables.lock().is_empty(), "no entry left behind");
    }

    /// A waiting DDL shows MySQL's process-list state while it waits,
    /// and nothing once it has the table.
    #[test]
    fn a_wait_reports_the_metadata_lock_stage() {
        let l = Arc::new(TableLocks::default());
        l.enter_r(6, LONG).expect("reader");
        let i = Interrupt::new();
        let (l2, i2) = (l.clone(), i.clone());
        let ddl = std::thread::spawn(move || l2.enter_ddl(6, LONG, Some(&i2)).map(drop).is_ok());
        let t0 = Instant::now();
        while i.stage() != Stage::MetadataLock {
            assert!(t0.elapsed() < LONG, "the DDL never reported its wait");
            std::thread::yield_now();
        }
        assert_eq!(i.stage().name(), "Waiting for table metadata lock");
        l.leave(6, Use::Read);
        assert!(ddl.join().expect("ddl"), "the DDL ran once the reader left");
        assert_eq!(i.stage(), Stage::None);
    }
}
