//! # User-level locks: GET_LOCK and its companions
//!
//! Applications serialise work across connections with named locks that
//! belong to no table: Rails and Laravel take one around a migration, job
//! runners around a job. MySQL 8.0's functions:
//!
//! ```text
//!   GET_LOCK(name, timeout_s)   1 held (again: counted), 0 timed out;
//!                               a negative timeout waits forever
//!   RELEASE_LOCK(name)          1 released one count, 0 held by another
//!                               connection, NULL nobody holds it
//!   RELEASE_ALL_LOCKS()         the counts this connection released
//!   IS_FREE_LOCK(name)          1 free, 0 held
//!   IS_USED_LOCK(name)          the holder's connection id, or NULL
//! ```
//!
//! A connection may hold many locks, each as often as it took it; they
//! all go when it disconnects. Names compare case-insensitively and are
//! 1 to 64 characters (else 3057, as a NULL name; MySQL 8.0 may name an
//! overlong one with a newer code, not confirmed). The timeout is whole
//! seconds, as MySQL reads it. A wait that would
//! close a cycle (A holds x and waits for y, B holds y and waits for x)
//! is 3058 at once instead of a wait until the timeouts: every owner
//! waits for at most one lock, so following holder → the lock it waits
//! for → its holder finds the cycle. KILL stops a wait.
//!
//! Invariants: every entry has a count ≥ 1; `waits` holds exactly the
//! connections inside `get`.

use std::collections::HashMap;
use std::sync::LazyLock;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};
use quire_engine::{EngineError, Value};

use crate::SqlResult;

/// MySQL's limit on a lock name, in characters.
const MAX_NAME_CHARS: usize = 64;
/// A wait longer than this is a wait without end (MySQL's own cap).
const MAX_WAIT_S: f64 = 365.0 * 24.0 * 3600.0;

#[derive(Default)]
struct Locks {
    /// Name (lower case) → (holder's connection id, times taken).
    held: HashMap<String, (u64, u64)>,
    /// Connection id → the name it waits for.
    waits: HashMap<u64, String>,
}

impl Locks {
    /// Whether `owner` waiting for `name` closes a cycle of waits.
    fn closes_cycle(&self, owner: u64, name: &str) -> bool {
        let mut at = name;
        // Each owner waits for one lock at most: the chain is a path, at
        // most as long as the number of waiters.
        for _ in 0..=self.waits.len() {
            let Some(&(holder, _)) = self.held.get(at) else {
                return false;
            };
            if holder == owner {
                return true;
            }
            match self.waits.get(&holder) {
                Some(next) => at = next,
                None => return false,
            }
        }
        false
    }
}

static LOCKS: LazyLock<(Mutex<Locks>, Condvar)> =
    LazyLock::new(|| (Mutex::new(Locks::default()), Condvar::new()));

/// The lock's key: 3057 for NULL, empty or too long names, and for
/// names MySQL's utf8mb3 lock names cannot hold (bytes that are not
/// UTF-8, characters beyond U+FFFF): a lossy conversion would let two
/// different names share one lock.
fn key(name: &Value) -> SqlResult<String> {
    let bytes = match name {
        Value::Null => None,
        v => Some(crate::expr::bytes_of(v)),
    };
    let valid = bytes
        .as_deref()
        .and_then(|b| std::str::from_utf8(b).ok())
        .filter(|t| {
            !t.is_empty()
                && t.chars().count() <= MAX_NAME_CHARS
                && t.chars().all(|c| c <= '\u{FFFF}')
        });
    match valid {
        Some(t) => Ok(t.to_lowercase()),
        None => Err(EngineError::new(
            3057,
            "42000",
            format!(
                "Incorrect user-level lock name '{}'.",
                bytes.map_or_else(|| "NULL".into(), |b| shown(&b))
            ),
        )),
    }
}

/// A name as the error shows it: UTF-8 as it is, other bytes outside
/// printable ASCII as `\xHH`.
fn shown(b: &[u8]) -> String {
    match std::str::from_utf8(b) {
        Ok(t) => t.to_string(),
        Err(_) => b
            .iter()
            .map(|&c| match c {
                0x20..=0x7e => (c as char).to_string(),
                _ => format!("\\x{c:02X}"),
            })
            .collect(),
    }
}

/// ER_USER_LOCK_DEADLOCK.
fn deadlock() -> EngineError {
    EngineError::new(
        3058,
        "HY000",
        "Deadlock found when trying to get user-level lock; try rolling back \
         transaction/releasing locks and restarting lock acquisition.",
    )
}

/// `GET_LOCK(name, timeout)` for connection `owner`.
pub(crate) fn get(owner: u64, name: &Value, timeout_s: &Value) -> SqlResult<Value> {
    let name = key(name)?;
    // Whole seconds, as MySQL reads the argument (0.4 is no wait).
    let secs = timeout_s.to_f64().unwrap_or(0.0).round();
    let wait = if !(0.0..=MAX_WAIT_S).contains(&secs) {
        MAX_WAIT_S
    } else {
        secs
    };
    let deadline = Instant::now() + Duration::from_secs_f64(wait);
    let (m, cv) = &*LOCKS;
    let mut l = m.lock();
    let r = loop {
        match l.held.get_mut(&name) {
            None => {
                l.held.insert(name.clone(), (owner, 1));
                break Ok(Value::Int(1));
            }
            Some((holder, n)) if *holder == owner => {
                *n += 1;
                break Ok(Value::Int(1));
            }
            Some(_) => {}
        }
        if l.closes_cycle(owner, &name) {
            break Err(deadlock());
        }
        if let Err(e) = crate::process::check_interrupt() {
            break Err(e);
        }
        let now = Instant::now();
        if now >= deadline {
            break Ok(Value::Int(0));
        }
        l.waits.insert(owner, name.clone());
        cv.wait_for(
            &mut l,
            (deadline - now).min(quire_engine::interrupt::WAIT_SLICE),
        );
    };
    l.waits.remove(&owner);
    r
}

/// `RELEASE_LOCK(name)` for connection `owner`.
pub(crate) fn release(owner: u64, name: &Value) -> SqlResult<Value> {
    let name = key(name)?;
    let (m, cv) = &*LOCKS;
    let mut l = m.lock();
    let out = match l.held.get_mut(&name) {
        None => return Ok(Value::Null),
        Some((holder, _)) if *holder != owner => return Ok(Value::Int(0)),
        Some((_, n)) => {
            *n -= 1;
            *n == 0
        }
    };
    if out {
        l.held.remove(&name);
        cv.notify_all();
    }
    Ok(Value::Int(1))
}

/// `RELEASE_ALL_LOCKS()`, and a connection's end: the counts released.
pub(crate) fn release_all(owner: u64) -> u64 {
    let (m, cv) = &*LOCKS;
    let mut l = m.lock();
    let mut released = 0;
    l.held.retain(|_, (holder, n)| {
        if *holder == owner {
            released += *n;
            false
        } else {
            true
        }
    });
    if released > 0 {
        cv.notify_all();
    }
    released
}

/// `IS_FREE_LOCK(name)`.
pub(crate) fn is_free(name: &Value) -> SqlResult<Value> {
    let name = key(name)?;
    Ok(Value::Int(i64::from(
        !LOCKS.0.lock().held.contains_key(&name),
    )))
}

/// `IS_USED_LOCK(name)`.
pub(crate) fn is_used(name: &Value) -> SqlResult<Value> {
    let name = key(name)?;
    Ok(match LOCKS.0.lock().held.get(&name) {
        Some(&(holder, _)) => Value::UInt(holder),
        None => Value::Null,
    })
}
