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
//! ## Deadlocks across tables
//!
//! Waits can form a cycle no single table shows: T1 read t1 and T2 read
//! t2; an ALTER of t1 waits for T1 and one of t2 for T2; then T1 reads
//! t2 (queued behind the pending ALTER of t2, which waits for T2) and T2
//! reads t1. Nobody would move until `lock_wait_timeout`, a year by
//! default. So every transaction and DDL is an *owner* with an id, each
//! table keeps which owners use it and which one claims it, and a thread
//! about to wait records what it waits for and follows the edges:
//!
//! ```text
//!   waiting to enter t (or to claim it)  ──▶  the owner of t's claim
//!   DDL waiting for t's users to end     ──▶  each user its claim keeps out
//!
//!   T1 ──enter t2──▶ ALTER t2 ──drain──▶ T2 ──enter t1──▶ ALTER t1 ──drain──▶ T1
//! ```
//!
//! A path back to itself is a deadlock. As MySQL's MDL detector weighs
//! DML below DDL, the victim is a transaction waiting to enter a table
//! (the thread itself if it is one, else the first in the cycle, told at
//! its next wake); it gets 1213, and the SQL layer rolls its transaction
//! back, which ends its part of the cycle. An edge only appears when a
//! wait starts (a claim that keeps a use out keeps new users from
//! entering, and a waiter's edge to a new claim owner comes with that
//! owner's own wait), so the thread that closes a cycle finds it when it
//! starts waiting; waiters look again once a second, not at every wake,
//! so a thousand connections queued behind one ALTER stay cheap.
//!
//! Invariants: `readers + writers` counts the open transactions that use
//! the table, each once (a reader that writes moves from one count to the
//! other), and `users` names exactly them; at most one DDL claims a table
//! at a time, named by `claim_owner`; an entry with no user and no claim
//! is removed; `waits` holds exactly the owners inside a wait.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

use crate::error::{EngineError, Result};
use crate::interrupt::{Interrupt, Stage, WAIT_SLICE};

/// How often a waiter looks for a deadlock again after its first look.
const DEADLOCK_LOOK_EVERY: Duration = Duration::from_secs(1);

/// A transaction or a DDL statement, as the wait-for graph names it
/// ([`TableLocks::owner`]; 0 is never handed out).
pub(crate) type Owner = u64;

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
    fn admits(self, what: Use) -> bool {
        match what {
            Use::Read => self.admits_readers(),
            Use::Write => self.admits_writers(),
        }
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
    /// The open users, each with its use (counted in readers/writers).
    users: HashMap<Owner, Use>,
    claim: Claim,
    /// The DDL holding `claim` (0 with no claim).
    claim_owner: Owner,
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
    fn add_user(&mut self, who: Owner, what: Use) {
        match what {
            Use::Read => self.readers += 1,
            Use::Write => self.writers += 1,
        }
        self.users.insert(who, what);
    }
}

/// What a waiting owner waits for on a table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum WaitOn {
    /// A transaction's first use, held back by the table's claim.
    Enter(Use),
    /// A DDL's claim, held back by another DDL's.
    Claim,
    /// A DDL holding `Claim`, for the users it keeps out to end.
    Drain(Claim),
}

/// Everything under the one mutex.
#[derive(Default)]
struct State {
    tables: HashMap<u32, Entry>,
    /// The owners inside a wait: the wait-for graph's nodes with edges.
    waits: HashMap<Owner, (u32, WaitOn)>,
    /// Waiters picked as a deadlock's victim by another thread, told at
    /// their next wake.
    victims: HashSet<Owner>,
}

impl State {
    /// The owners `who` waits for (none if it is not waiting).
    fn waits_for(&self, who: Owner) -> Vec<Owner> {
        let Some(&(table, on)) = self.waits.get(&who) else {
            return Vec::new();
        };
        let Some(e) = self.tables.get(&table) else {
            return Vec::new();
        };
        match on {
            WaitOn::Enter(_) | WaitOn::Claim => {
                if e.claim_owner != 0 && e.claim_owner != who {
                    vec![e.claim_owner]
                } else {
                    Vec::new()
                }
            }
            WaitOn::Drain(claim) => e
                .users
                .iter()
                .filter(|&(&u, &what)| u != who && !claim.admits(what))
                .map(|(&u, _)| u)
                .collect(),
        }
    }

    /// The cycle through `who` in the wait-for graph, if there is one
    /// (its owners, `who` first).
    fn cycle_through(&self, who: Owner) -> Option<Vec<Owner>> {
        let mut parent: HashMap<Owner, Owner> = HashMap::new();
        let mut stack = vec![who];
        let mut seen: HashSet<Owner> = HashSet::from([who]);
        while let Some(n) = stack.pop() {
            for next in self.waits_for(n) {
                if next == who {
                    let mut cycle = vec![n];
                    let mut at = n;
                    while at != who {
                        at = parent[&at];
                        cycle.push(at);
                    }
                    cycle.reverse();
                    return Some(cycle);
                }
                if seen.insert(next) {
                    parent.insert(next, n);
                    stack.push(next);
                }
            }
        }
        None
    }

    /// The victim of a deadlock through `who` (now waiting), if there
    /// is one: `who` itself when it is a transaction waiting to enter a
    /// table, else the first such transaction in the cycle, else `who`.
    fn deadlock_victim(&self, who: Owner) -> Option<Owner> {
        let cycle = self.cycle_through(who)?;
        let is_dml = |o: &Owner| matches!(self.waits.get(o), Some((_, WaitOn::Enter(_))));
        if is_dml(&who) {
            return Some(who);
        }
        Some(cycle.into_iter().find(is_dml).unwrap_or(who))
    }
}

/// The metadata locks of every table, by table id.
#[derive(Default)]
pub(crate) struct TableLocks {
    state: Mutex<State>,
    changed: Condvar,
    last_owner: AtomicU64,
}

/// ER_LOCK_WAIT_TIMEOUT (1205), as MySQL reports a metadata lock timeout.
fn timeout() -> EngineError {
    EngineError::new(
        1205,
        "HY000",
        "Lock wait timeout exceeded; try restarting transaction",
    )
}

/// ER_LOCK_DEADLOCK (1213): a wait that would close a cycle of waits.
fn deadlock() -> EngineError {
    EngineError::new(
        1213,
        "40001",
        "Deadlock found when trying to get lock; try restarting transaction",
    )
}

impl TableLocks {
    /// A new owner id, for a transaction or a DDL statement.
    pub(crate) fn owner(&self) -> Owner {
        self.last_owner.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// Waits until `ready` holds for the table's entry (`wait` at most,
    /// looking at the kill flag and for deadlocks every WAIT_SLICE), then
    /// applies `then`.
    #[allow(clippy::too_many_arguments)]
    fn wait_until(
        &self,
        table: u32,
        who: Owner,
        on: WaitOn,
        wait: Duration,
        interrupt: Option<&Interrupt>,
        ready: impl Fn(&Entry) -> bool,
        then: impl FnOnce(&mut Entry),
    ) -> Result<()> {
        let deadline = Instant::now() + wait;
        let mut st = self.state.lock();
        // Set once the thread has to wait: the process list's State.
        let mut stage = None;
        let mut next_look = Instant::now();
        let r = loop {
            let e = st.tables.entry(table).or_default();
            if ready(e) {
                then(e);
                break Ok(());
            }
            if stage.is_none() {
                stage = interrupt.map(|i| i.enter(Stage::MetadataLock));
            }
            if let Some(Err(err)) = interrupt.map(Interrupt::check) {
                break Err(err);
            }
            if Instant::now() >= deadline {
                break Err(timeout());
            }
            if st.victims.remove(&who) {
                break Err(deadlock());
            }
            // Wait-for edges appear when a wait starts (see the module
            // doc), so the thread that closes a cycle finds it here; the
            // look is repeated now and then, not at every wake, to keep
            // many waiters cheap under the one mutex.
            if Instant::now() >= next_look {
                next_look = Instant::now() + DEADLOCK_LOOK_EVERY;
                st.waits.insert(who, (table, on));
                match st.deadlock_victim(who) {
                    Some(v) if v == who => break Err(deadlock()),
                    Some(v) => {
                        st.victims.insert(v);
                        self.changed.notify_all();
                    }
                    None => {}
                }
            }
            let slice = deadline
                .saturating_duration_since(Instant::now())
                .min(WAIT_SLICE);
            self.changed.wait_for(&mut st, slice);
        };
        st.waits.remove(&who);
        st.victims.remove(&who);
        if st.tables.get(&table).is_some_and(Entry::idle) {
            st.tables.remove(&table);
        }
        r
    }

    /// A transaction's (`who`) first use of `table`: waits while a DDL's
    /// claim keeps this use out, then counts the transaction in.
    pub(crate) fn enter(
        &self,
        table: u32,
        what: Use,
        who: Owner,
        wait: Duration,
        interrupt: Option<&Interrupt>,
    ) -> Result<()> {
        self.wait_until(
            table,
            who,
            WaitOn::Enter(what),
            wait,
            interrupt,
            |e| e.claim.admits(what),
            |e| e.add_user(who, what),
        )
    }

    /// A transaction that entered `table` as a reader writes it: counted
    /// as a writer from now on, or 1213 when a DDL's claim keeps writers
    /// out (that DDL waits for this transaction; see the module doc).
    pub(crate) fn upgrade(&self, table: u32, who: Owner) -> Result<()> {
        let mut st = self.state.lock();
        let Some(e) = st.tables.get_mut(&table) else {
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
        e.users.insert(who, Use::Write);
        Ok(())
    }

    /// The end of a transaction (`who`) that used `table`.
    pub(crate) fn leave(&self, table: u32, what: Use, who: Owner) {
        let mut st = self.state.lock();
        if let Some(e) = st.tables.get_mut(&table) {
            let n = match what {
                Use::Read => &mut e.readers,
                Use::Write => &mut e.writers,
            };
            debug_assert!(*n > 0, "{what:?} count of table {table} underflows");
            *n = n.saturating_sub(1);
            e.users.remove(&who);
            if e.idle() {
                st.tables.remove(&table);
            }
        }
        drop(st);
        self.changed.notify_all();
    }

    /// DDL (`who`) on `table`: claims it exclusively (new users wait),
    /// then waits for the open ones to end. The claim lasts as long as
    /// the guard.
    pub(crate) fn enter_ddl(
        &self,
        table: u32,
        who: Owner,
        wait: Duration,
        interrupt: Option<&Interrupt>,
    ) -> Result<DdlGuard<'_>> {
        self.claim(table, who, Claim::Exclusive, wait, interrupt)
    }

    /// DDL that reads the table while it works (a COPY rebuild, an index
    /// build): new writers wait, readers go on; returns once the open
    /// writers have ended.
    pub(crate) fn enter_ddl_no_write(
        &self,
        table: u32,
        who: Owner,
        wait: Duration,
        interrupt: Option<&Interrupt>,
    ) -> Result<DdlGuard<'_>> {
        self.claim(table, who, Claim::NoWrite, wait, interrupt)
    }

    fn claim(
        &self,
        table: u32,
        who: Owner,
        claim: Claim,
        wait: Duration,
        interrupt: Option<&Interrupt>,
    ) -> Result<DdlGuard<'_>> {
        // One DDL at a time per table: wait for another to finish first.
        self.wait_until(
            table,
            who,
            WaitOn::Claim,
            wait,
            interrupt,
            |e| e.claim == Claim::None,
            |e| {
                e.claim = claim;
                e.claim_owner = who;
            },
        )?;
        let guard = DdlGuard {
            locks: self,
            table,
            who,
        };
        // On an error the guard's drop releases the claim.
        guard.drain(claim, wait, interrupt)?;
        Ok(guard)
    }

    fn set_claim(&self, table: u32, claim: Claim, who: Owner) {
        let mut st = self.state.lock();
        let e = st.tables.entry(table).or_default();
        e.claim = claim;
        e.claim_owner = if claim == Claim::None { 0 } else { who };
        if e.idle() {
            st.tables.remove(&table);
        }
        drop(st);
        self.changed.notify_all();
    }
}

/// A DDL's hold on a table; dropping it lets everyone in again.
pub(crate) struct DdlGuard<'a> {
    locks: &'a TableLocks,
    table: u32,
    who: Owner,
}

impl DdlGuard<'_> {
    /// Lets the table's writers in again while the DDL keeps the table
    /// from other DDL.
    pub(crate) fn admit_writers(&self) {
        self.locks.set_claim(self.table, Claim::Online, self.who);
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
        self.locks.set_claim(self.table, to, self.who);
        let r = self.drain(to, wait, interrupt);
        if r.is_err() {
            self.locks.set_claim(self.table, fallback, self.who);
        }
        r
    }

    /// Waits for the users `claim` keeps out to end.
    fn drain(&self, claim: Claim, wait: Duration, interrupt: Option<&Interrupt>) -> Result<()> {
        self.locks.wait_until(
            self.table,
            self.who,
            WaitOn::Drain(claim),
            wait,
            interrupt,
            |e| e.drained_for(claim),
            |_| {},
        )
    }
}

impl Drop for DdlGuard<'_> {
    fn drop(&mut self) {
        self.locks.set_claim(self.table, Claim::None, self.who);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    const LONG: Duration = Duration::from_secs(30);
    /// Owner ids the tests give their writers and readers (far above
    /// the ones `owner()` hands the DDLs).
    const W: Owner = 1 << 40;
    const R: Owner = (1 << 40) + 1;

    impl TableLocks {
        fn enter_w(&self, t: u32, who: Owner, wait: Duration, i: Option<&Interrupt>) -> Result<()> {
            self.enter(t, Use::Write, who, wait, i)
        }
        fn leave_w(&self, t: u32, who: Owner) {
            self.leave(t, Use::Write, who)
        }
        fn enter_r(&self, t: u32, who: Owner, wait: Duration) -> Result<()> {
            self.enter(t, Use::Read, who, wait, None)
        }
        fn leave_r(&self, t: u32, who: Owner) {
            self.leave(t, Use::Read, who)
        }
        /// A DDL with an owner of its own.
        fn ddl(&self, t: u32, wait: Duration, i: Option<&Interrupt>) -> Result<DdlGuard<'_>> {
            self.enter_ddl(t, self.owner(), wait, i)
        }
        fn ddl_nw(&self, t: u32, wait: Duration) -> Result<DdlGuard<'_>> {
            self.enter_ddl_no_write(t, self.owner(), wait, None)
        }
        fn is_empty(&self) -> bool {
            let st = self.state.lock();
            st.tables.is_empty() && st.waits.is_empty() && st.victims.is_empty()
        }
    }

    fn code(r: Result<()>) -> Option<u16> {
        r.err().map(|e| e.code)
    }

    #[test]
    fn ddl_waits_for_writers_and_a_timeout_leaves_no_claim() {
        let l = Arc::new(TableLocks::default());
        l.enter_w(7, W, LONG, None).expect("writer");
        // The DDL cannot finish while the writer is open.
        let short = Duration::from_millis(30);
        assert_eq!(l.ddl(7, short, None).err().map(|e| e.code), Some(1205));
        // A timed-out DDL left no claim behind: writers still enter.
        l.enter_w(7, W, short, None).expect("second writer");
        l.leave_w(7, W);
        // Another table is not affected.
        l.ddl(8, short, None).expect("ddl on another table");
        let l2 = l.clone();
        let ddl = std::thread::spawn(move || {
            let g = l2.ddl(7, LONG, None).map(|_| ());
            g.is_ok()
        });
        std::thread::sleep(Duration::from_millis(50));
        assert!(!ddl.is_finished(), "the DDL waits for the writer");
        l.leave_w(7, W);
        assert!(
            ddl.join().expect("ddl thread"),
            "DDL ran once the writer left"
        );
        l.enter_w(7, W, short, None).expect("writer after the DDL");
        l.leave_w(7, W);
    }

    #[test]
    fn a_pending_ddl_holds_new_writers_back() {
        let l = Arc::new(TableLocks::default());
        l.enter_w(1, W, LONG, None).expect("writer");
        let l2 = l.clone();
        let ddl = std::thread::spawn(move || {
            let _g = l2.ddl(1, LONG, None).expect("ddl");
            std::thread::sleep(Duration::from_millis(50));
        });
        // Wait until the DDL's claim is visible.
        let t0 = Instant::now();
        let claimed = |l: &TableLocks| {
            l.state
                .lock()
                .tables
                .get(&1)
                .is_some_and(|e| e.claim == Claim::Exclusive)
        };
        while !claimed(&l) {
            assert!(t0.elapsed() < LONG, "DDL never claimed the table");
            std::thread::yield_now();
        }
        let short = Duration::from_millis(20);
        assert_eq!(
            l.enter_w(1, R, short, None).err().map(|e| e.code),
            Some(1205),
            "a new writer waits behind the pending DDL"
        );
        l.leave_w(1, W);
        ddl.join().expect("ddl thread");
        l.enter_w(1, W, short, None).expect("writer after the DDL");
    }

    #[test]
    fn kill_stops_a_wait() {
        let l = TableLocks::default();
        l.enter_w(3, W, LONG, None).expect("writer");
        let i = Interrupt::new();
        i.kill(crate::interrupt::Kill::Query);
        assert_eq!(l.ddl(3, LONG, Some(&i)).err().map(|e| e.code), Some(1317));
    }

    /// An online build admits writers but not other DDL; excluding
    /// writers again waits for the open ones, and a timeout there lets
    /// writers back in with the DDL claim kept.
    #[test]
    fn an_online_claim_admits_writers_but_not_ddl() {
        let l = Arc::new(TableLocks::default());
        let short = Duration::from_millis(30);
        let g = l.ddl(5, LONG, None).expect("ddl");
        assert_eq!(
            l.enter_w(5, W, short, None).err().map(|e| e.code),
            Some(1205)
        );
        g.admit_writers();
        l.enter_w(5, W, short, None)
            .expect("writer during the build");
        assert_eq!(l.ddl(5, short, None).err().map(|e| e.code), Some(1205));
        // The writer is open: excluding times out, writers still enter.
        assert_eq!(
            g.exclude_writers(short, None).err().map(|e| e.code),
            Some(1205)
        );
        l.enter_w(5, W, short, None).expect("second writer");
        l.leave_w(5, W);
        l.leave_w(5, W);
        g.exclude_writers(short, None).expect("no writer open");
        assert_eq!(
            l.enter_w(5, W, short, None).err().map(|e| e.code),
            Some(1205)
        );
        drop(g);
        l.enter_w(5, W, short, None).expect("writer after the DDL");
        l.leave_w(5, W);
        assert!(l.is_empty(), "no entry left behind");
    }

    /// Readers hold off an exclusive DDL and a pending one holds new
    /// readers back; a NoWrite claim lets readers in but not writers.
    #[test]
    fn readers_hold_ddl_off_and_no_write_admits_them() {
        let l = Arc::new(TableLocks::default());
        let short = Duration::from_millis(30);
        l.enter_r(9, R, LONG).expect("reader");
        assert_eq!(code(l.ddl(9, short, None).map(drop)), Some(1205));
        let g = l.ddl_nw(9, short).expect("no-write claim");
        l.enter_r(9, R, short)
            .expect("a second reader under NoWrite");
        assert_eq!(code(l.enter_w(9, W, short, None)), Some(1205));
        // The readers are open: the exclusive step times out and the
        // claim falls back to NoWrite (readers still enter).
        assert_eq!(code(g.exclusive(short, None)), Some(1205));
        l.enter_r(9, R, short)
            .expect("reader after the failed raise");
        for _ in 0..3 {
            l.leave_r(9, R);
        }
        g.exclusive(short, None).expect("no reader left");
        assert_eq!(code(l.enter_r(9, R, short)), Some(1205));
        drop(g);
        l.enter_r(9, R, short).expect("reader after the DDL");
        l.leave_r(9, R);
        assert!(l.is_empty(), "no entry left behind");
    }

    /// A reader that writes while a DDL waits for it is the deadlock's
    /// victim at once (1213); without a claim it becomes a writer.
    #[test]
    fn a_reader_that_writes_under_a_claim_is_the_deadlock_victim() {
        let l = Arc::new(TableLocks::default());
        let short = Duration::from_millis(30);
        l.enter_r(4, R, LONG).expect("reader");
        l.upgrade(4, R).expect("no claim: the reader writes");
        assert_eq!(code(l.ddl_nw(4, short).map(drop)), Some(1205));
        l.leave_w(4, R);
        l.enter_r(4, R, LONG).expect("reader");
        let g = l.ddl_nw(4, short).expect("claim");
        assert_eq!(code(l.upgrade(4, R)), Some(1213));
        g.admit_writers();
        l.upgrade(4, R).expect("an online claim admits the write");
        l.leave_w(4, R);
        drop(g);
        assert!(l.is_empty(), "no entry left behind");
    }

    /// A waiting DDL shows MySQL's process-list state while it waits,
    /// and nothing once it has the table.
    #[test]
    fn a_wait_reports_the_metadata_lock_stage() {
        let l = Arc::new(TableLocks::default());
        l.enter_r(6, R, LONG).expect("reader");
        let i = Interrupt::new();
        let (l2, i2) = (l.clone(), i.clone());
        let ddl = std::thread::spawn(move || l2.ddl(6, LONG, Some(&i2)).map(drop).is_ok());
        let t0 = Instant::now();
        while i.stage() != Stage::MetadataLock {
            assert!(t0.elapsed() < LONG, "the DDL never reported its wait");
            std::thread::yield_now();
        }
        assert_eq!(i.stage().name(), "Waiting for table metadata lock");
        l.leave_r(6, R);
        assert!(ddl.join().expect("ddl"), "the DDL ran once the reader left");
        assert_eq!(i.stage(), Stage::None);
    }

    /// Waits until `who` is inside a wait.
    fn until_waiting(l: &TableLocks, who: Owner) {
        let t0 = Instant::now();
        while !l.state.lock().waits.contains_key(&who) {
            assert!(t0.elapsed() < LONG, "owner {who} never waited");
            std::thread::yield_now();
        }
    }

    /// Two transactions each read one table, a DDL waits on each table,
    /// then each transaction reads the other table: a cycle through both
    /// DDLs. The transaction that closes it is the victim (1213) at once,
    /// not after lock_wait_timeout; once it is gone everyone finishes.
    #[test]
    fn a_cycle_across_tables_makes_the_closing_transaction_the_victim() {
        let l = Arc::new(TableLocks::default());
        let (t1, t2) = (W, R);
        l.enter_r(21, t1, LONG).expect("T1 reads t1");
        l.enter_r(22, t2, LONG).expect("T2 reads t2");
        let ddl = |table: u32| {
            let l = l.clone();
            let who = l.owner();
            let h = std::thread::spawn(move || l.enter_ddl(table, who, LONG, None).map(drop));
            (who, h)
        };
        let (d1, ddl1) = ddl(21);
        let (d2, ddl2) = ddl(22);
        until_waiting(&l, d1);
        until_waiting(&l, d2);
        // T1 queues behind the pending DDL on t2: no cycle yet.
        let l1 = l.clone();
        let t1_reads_t2 = std::thread::spawn(move || l1.enter_r(22, t1, LONG));
        until_waiting(&l, t1);
        let t0 = Instant::now();
        assert_eq!(
            code(l.enter_r(21, t2, LONG)),
            Some(1213),
            "T2 closes the cycle"
        );
        assert!(
            t0.elapsed() < Duration::from_secs(5),
            "found at once, not by timeout"
        );
        // T2 rolls back: the DDL on t2 runs, then T1 reads t2.
        l.leave_r(22, t2);
        ddl2.join().expect("ddl2").expect("DDL on t2 ran");
        t1_reads_t2
            .join()
            .expect("t1")
            .expect("T1 read t2 after it");
        l.leave_r(21, t1);
        l.leave_r(22, t1);
        ddl1.join().expect("ddl1").expect("DDL on t1 ran");
        assert!(l.is_empty(), "no entry, wait or victim left behind");
    }

    /// When the thread that closes the cycle is a DDL (here one that
    /// claims two tables, holding the first while it waits for the
    /// second), the transaction in the cycle is the victim, as MySQL
    /// weighs DML below DDL: it is told at its next wake, and the DDL
    /// goes on once it rolls back.
    #[test]
    fn a_ddl_closing_a_cycle_makes_the_waiting_transaction_the_victim() {
        let l = Arc::new(TableLocks::default());
        let t2 = R;
        l.enter_r(32, t2, LONG).expect("T2 reads t2");
        let d = l.owner();
        let g1 = l.enter_ddl(31, d, LONG, None).expect("the DDL holds t1");
        let l1 = l.clone();
        let t2_reads_t1 = std::thread::spawn(move || l1.enter_r(31, t2, LONG));
        until_waiting(&l, t2);
        let l2 = l.clone();
        let g2 = std::thread::spawn(move || l2.enter_ddl(32, d, LONG, None).map(drop));
        let t0 = Instant::now();
        assert_eq!(
            code(t2_reads_t1.join().expect("t2")),
            Some(1213),
            "the transaction is the victim"
        );
        assert!(
            t0.elapsed() < Duration::from_secs(5),
            "found at once, not by timeout"
        );
        l.leave_r(32, t2);
        g2.join()
            .expect("ddl")
            .expect("the DDL claimed t2 after the rollback");
        drop(g1);
        assert!(l.is_empty(), "no entry, wait or victim left behind");
    }
}
