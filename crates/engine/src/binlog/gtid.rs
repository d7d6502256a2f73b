//! # GTIDs: global transaction identifiers, as MySQL 8.0 keeps them
//!
//! ```text
//!  GTID      = server_uuid:N          3e11fa47-71ca-11e1-9e33-c80aa9429562:23
//!  GTID set  = uuid:1-20:22-23,uuid2:5   (text; sorted, merged intervals)
//!
//!  binlog.000007   FDE | PREVIOUS_GTIDS {all GTIDs before this file} |
//!                  GTID uuid:21 BEGIN .. XID | GTID uuid:22 CREATE TABLE .. | ...
//! ```
//!
//! With `gtid_mode` ON (or ON_PERMISSIVE) every transaction and DDL gets
//! the next number of this server's UUID, in binlog order (the flush stage
//! assigns it under the active file's lock), and its GTID_LOG_EVENT comes
//! first in its events. OFF and OFF_PERMISSIVE log anonymous transactions.
//!
//! **gtid_executed** is every GTID in the binary log: the last file's
//! PREVIOUS_GTIDS plus the GTIDs in it, read at start-up after recovery
//! cut the tail (so the recovered binlog decides), and grown by each
//! commit once its changes are visible. **gtid_purged** is the GTIDs no
//! file holds any more: the first file's PREVIOUS_GTIDS (PURGE moves it
//! forward, RESET MASTER empties both).
//!
//! `gtid_mode` moves one step at a time (OFF ↔ OFF_PERMISSIVE ↔
//! ON_PERMISSIVE ↔ ON, 1788), and ON needs `enforce_gtid_consistency` ON
//! (1779): quire's tables are all transactional and temporary tables are
//! never logged, so no statement violates GTID consistency.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

use crate::error::{EngineError, Result};

/// A server UUID as 16 bytes.
pub type Sid = [u8; 16];

/// A set of GTIDs: per UUID, sorted disjoint half-open intervals
/// `[start, end)` of transaction numbers (≥ 1).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GtidSet {
    sids: BTreeMap<Sid, Vec<(u64, u64)>>,
}

/// The largest transaction number (MySQL's GNO_END - 1).
pub const GNO_MAX: u64 = (1 << 63) - 2;

/// ER_MALFORMED_GTID_SET_SPECIFICATION (1772).
pub fn malformed(text: &str) -> EngineError {
    let t: String = text.chars().take(200).collect();
    EngineError::new(
        1772,
        "HY000",
        format!("Malformed GTID set specification '{t}'."),
    )
}

/// Parses a UUID with or without hyphens.
pub fn parse_sid(text: &str) -> Option<Sid> {
    let t = text.trim();
    let hex: String = if t.len() == 36 {
        let b = t.as_bytes();
        if [8, 13, 18, 23].iter().any(|&i| b[i] != b'-') {
            return None;
        }
        t.chars().filter(|&c| c != '-').collect()
    } else {
        t.to_string()
    };
    if hex.len() != 32 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let mut sid = [0u8; 16];
    for (i, s) in sid.iter_mut().enumerate() {
        *s = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(sid)
}

/// A UUID's text form (lower case, hyphenated).
pub fn sid_text(sid: &Sid) -> String {
    let h: String = sid.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &h[..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..]
    )
}

impl GtidSet {
    pub fn is_empty(&self) -> bool {
        self.sids.is_empty()
    }

    /// Parses MySQL's text form: `uuid:1-5:7[,uuid2:3]` (whitespace and
    /// newlines around the parts allowed; empty = the empty set).
    pub fn parse(text: &str) -> Result<GtidSet> {
        let mut set = GtidSet::default();
        for part in text.split(',') {
            let part = part.trim();
            if part.is_empty() {
                if text.trim().is_empty() {
                    continue;
                }
                return Err(malformed(text));
            }
            let mut pieces = part.split(':');
            let sid = pieces
                .next()
                .and_then(parse_sid)
                .ok_or_else(|| malformed(text))?;
            let mut any = false;
            for iv in pieces {
                any = true;
                let iv = iv.trim();
                let (a, b) = match iv.split_once('-') {
                    Some((a, b)) => (a.trim(), b.trim()),
                    None => (iv, iv),
                };
                let num = |s: &str| {
                    s.parse::<u64>()
                        .ok()
                        .filter(|&n| (1..=GNO_MAX).contains(&n))
                };
                let (Some(a), Some(b)) = (num(a), num(b)) else {
                    return Err(malformed(text));
                };
                if b < a {
                    return Err(malformed(text));
                }
                set.add_interval(sid, a, b + 1);
            }
            if !any {
                return Err(malformed(text));
            }
        }
        Ok(set)
    }

    /// Adds `[start, end)` of `sid`, merging.
    pub fn add_interval(&mut self, sid: Sid, start: u64, end: u64) {
        if start >= end {
            return;
        }
        let ivs = self.sids.entry(sid).or_default();
        ivs.push((start, end));
        ivs.sort_unstable();
        let mut merged: Vec<(u64, u64)> = Vec::with_capacity(ivs.len());
        for &(s, e) in ivs.iter() {
            match merged.last_mut() {
                Some(last) if s <= last.1 => last.1 = last.1.max(e),
                _ => merged.push((s, e)),
            }
        }
        *ivs = merged;
    }

    pub fn add(&mut self, sid: Sid, gno: u64) {
        self.add_interval(sid, gno, gno + 1);
    }

    pub fn union(&mut self, other: &GtidSet) {
        for (sid, ivs) in &other.sids {
            for &(s, e) in ivs {
                self.add_interval(*sid, s, e);
            }
        }
    }

    pub fn contains(&self, sid: &Sid, gno: u64) -> bool {
        self.sids
            .get(sid)
            .is_some_and(|ivs| ivs.iter().any(|&(s, e)| s <= gno && gno < e))
    }

    /// Whether every GTID of `self` is in `other`.
    pub fn is_subset_of(&self, other: &GtidSet) -> bool {
        self.sids.iter().all(|(sid, ivs)| {
            let Some(o) = other.sids.get(sid) else {
                return false;
            };
            ivs.iter()
                .all(|&(s, e)| o.iter().any(|&(os, oe)| os <= s && e <= oe))
        })
    }

    /// `self` without the GTIDs of `other`.
    pub fn subtract(&self, other: &GtidSet) -> GtidSet {
        let mut out = GtidSet::default();
        for (sid, ivs) in &self.sids {
            let cut = other.sids.get(sid).map(Vec::as_slice).unwrap_or(&[]);
            for &(s, e) in ivs {
                let mut start = s;
                for &(cs, ce) in cut {
                    if ce <= start || cs >= e {
                        continue;
                    }
                    if cs > start {
                        out.add_interval(*sid, start, cs);
                    }
                    start = start.max(ce);
                }
                if start < e {
                    out.add_interval(*sid, start, e);
                }
            }
        }
        out
    }

    /// The largest number of `sid` in the set (0 if none).
    pub fn last_gno(&self, sid: &Sid) -> u64 {
        self.sids
            .get(sid)
            .and_then(|ivs| ivs.last())
            .map_or(0, |&(_, e)| e - 1)
    }

    /// How many GTIDs the set holds.
    pub fn count(&self) -> u64 {
        self.sids
            .values()
            .flat_map(|ivs| ivs.iter().map(|&(s, e)| e - s))
            .sum()
    }

    /// MySQL's text form (`uuid:1-5:7`, sets of several UUIDs joined by
    /// ",\n" as `@@gtid_executed` shows them).
    pub fn to_text(&self) -> String {
        let parts: Vec<String> = self
            .sids
            .iter()
            .map(|(sid, ivs)| {
                let mut s = sid_text(sid);
                for &(a, e) in ivs {
                    if e - a == 1 {
                        s.push_str(&format!(":{a}"));
                    } else {
                        s.push_str(&format!(":{a}-{}", e - 1));
                    }
                }
                s
            })
            .collect();
        parts.join(",\n")
    }

    /// The PREVIOUS_GTIDS_LOG_EVENT body: n_sids u64, then per UUID its 16
    /// bytes, n_intervals u64 and each interval as start, end (i64,
    /// exclusive end).
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(&(self.sids.len() as u64).to_le_bytes());
        for (sid, ivs) in &self.sids {
            out.extend_from_slice(sid);
            out.extend_from_slice(&(ivs.len() as u64).to_le_bytes());
            for &(s, e) in ivs {
                out.extend_from_slice(&s.to_le_bytes());
                out.extend_from_slice(&e.to_le_bytes());
            }
        }
        out
    }

    /// Reads [`GtidSet::encode`]'s form (checked: never panics).
    pub fn decode(body: &[u8]) -> std::result::Result<GtidSet, String> {
        let u64_at = |at: usize| -> std::result::Result<u64, String> {
            let b = body.get(at..at + 8).ok_or("GTID set is truncated")?;
            let mut raw = [0u8; 8];
            raw.copy_from_slice(b);
            Ok(u64::from_le_bytes(raw))
        };
        let mut set = GtidSet::default();
        let n = u64_at(0)?;
        let mut at = 8;
        for _ in 0..n {
            let sid: Sid = body
                .get(at..at + 16)
                .ok_or("GTID set is truncated")?
                .try_into()
                .map_err(|_| "GTID set is truncated")?;
            at += 16;
            let k = u64_at(at)?;
            at += 8;
            for _ in 0..k {
                let (s, e) = (u64_at(at)?, u64_at(at + 8)?);
                at += 16;
                if s == 0 || e <= s || e - 1 > GNO_MAX {
                    return Err(format!("bad GTID interval {s}-{e}"));
                }
                set.add_interval(sid, s, e);
            }
        }
        Ok(set)
    }
}

/// `gtid_mode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum GtidMode {
    Off = 0,
    OffPermissive = 1,
    OnPermissive = 2,
    On = 3,
}

impl GtidMode {
    pub fn name(self) -> &'static str {
        match self {
            GtidMode::Off => "OFF",
            GtidMode::OffPermissive => "OFF_PERMISSIVE",
            GtidMode::OnPermissive => "ON_PERMISSIVE",
            GtidMode::On => "ON",
        }
    }

    pub fn parse(text: &str) -> Option<GtidMode> {
        Some(match text.trim().to_ascii_uppercase().as_str() {
            "OFF" | "0" => GtidMode::Off,
            "OFF_PERMISSIVE" | "1" => GtidMode::OffPermissive,
            "ON_PERMISSIVE" | "2" => GtidMode::OnPermissive,
            "ON" | "3" => GtidMode::On,
            _ => return None,
        })
    }

    /// Whether new transactions get a GTID (AUTOMATIC in these modes).
    pub fn assigns(self) -> bool {
        self >= GtidMode::OnPermissive
    }
}

/// What the binlog keeps of GTIDs (see the module essay).
#[derive(Debug)]
pub struct GtidState {
    pub sid: Sid,
    inner: Mutex<GtidInner>,
    changed: Condvar,
}

#[derive(Debug)]
struct GtidInner {
    mode: GtidMode,
    /// `enforce_gtid_consistency`: OFF, ON or WARN.
    enforce: &'static str,
    executed: GtidSet,
    purged: GtidSet,
    /// Every GTID written to the binlog files (and purged ones): what the
    /// next file's PREVIOUS_GTIDS names. Ahead of `executed` by the
    /// transactions between their flush and their commit.
    logged: GtidSet,
    /// Numbers of this server handed out (executed or on their way).
    last_assigned: u64,
}

/// ER_GTID_MODE_CAN_ONLY_CHANGE_ONE_STEP_AT_A_TIME (1788).
fn one_step() -> EngineError {
    EngineError::new(
        1788,
        "HY000",
        "The value of @@GLOBAL.GTID_MODE can only be changed one step at a time: OFF <-> OFF_PERMISSIVE <-> ON_PERMISSIVE <-> ON. Also note that this value must be stepped up or down simultaneously on all servers. See the Manual for instructions.",
    )
}

/// ER_GTID_MODE_ON_REQUIRES_ENFORCE_GTID_CONSISTENCY_ON (1779).
pub fn needs_enforce() -> EngineError {
    EngineError::new(
        1779,
        "HY000",
        "GTID_MODE = ON requires ENFORCE_GTID_CONSISTENCY = ON.",
    )
}

impl GtidState {
    /// At start-up: this server's UUID, the configured mode, and the sets
    /// the recovered binlog gives.
    pub fn new(
        sid: Sid,
        mode: GtidMode,
        enforce: &'static str,
        executed: GtidSet,
        purged: GtidSet,
    ) -> GtidState {
        let last_assigned = executed.last_gno(&sid);
        GtidState {
            sid,
            inner: Mutex::new(GtidInner {
                mode,
                enforce,
                logged: executed.clone(),
                executed,
                purged,
                last_assigned,
            }),
            changed: Condvar::new(),
        }
    }

    pub fn mode(&self) -> GtidMode {
        self.inner.lock().mode
    }

    pub fn enforce(&self) -> &'static str {
        self.inner.lock().enforce
    }

    /// SET GLOBAL gtid_mode: one step at a time; ON needs enforce ON.
    pub fn set_mode(&self, mode: GtidMode) -> Result<()> {
        let mut g = self.inner.lock();
        if (mode as i32 - g.mode as i32).abs() > 1 {
            return Err(one_step());
        }
        if mode == GtidMode::On && g.enforce != "ON" {
            return Err(needs_enforce());
        }
        g.mode = mode;
        Ok(())
    }

    /// SET GLOBAL enforce_gtid_consistency (OFF, ON, WARN).
    pub fn set_enforce(&self, value: &'static str) -> Result<()> {
        let mut g = self.inner.lock();
        if g.mode == GtidMode::On && value != "ON" {
            return Err(needs_enforce());
        }
        g.enforce = value;
        Ok(())
    }

    /// The next number of this server, if the mode assigns GTIDs (the
    /// flush stage calls this in binlog order).
    pub(crate) fn assign(&self) -> Option<u64> {
        let mut g = self.inner.lock();
        if !g.mode.assigns() {
            return None;
        }
        g.last_assigned += 1;
        let gno = g.last_assigned;
        let sid = self.sid;
        g.logged.add(sid, gno);
        Some(gno)
    }

    /// What the next file's PREVIOUS_GTIDS names.
    pub(crate) fn logged_set(&self) -> GtidSet {
        self.inner.lock().logged.clone()
    }

    /// A transaction with GTID `gno` committed (its changes are visible).
    pub(crate) fn executed(&self, gno: u64) {
        let mut g = self.inner.lock();
        let sid = self.sid;
        g.executed.add(sid, gno);
        drop(g);
        self.changed.notify_all();
    }

    pub fn executed_set(&self) -> GtidSet {
        self.inner.lock().executed.clone()
    }

    pub fn purged_set(&self) -> GtidSet {
        self.inner.lock().purged.clone()
    }

    /// PURGE moved the first file: its PREVIOUS_GTIDS is what no file
    /// holds any more.
    pub(crate) fn set_purged(&self, purged: GtidSet) {
        self.inner.lock().purged = purged;
    }

    /// RESET MASTER: no GTIDs at all.
    pub(crate) fn reset(&self) {
        let mut g = self.inner.lock();
        g.executed = GtidSet::default();
        g.purged = GtidSet::default();
        g.logged = GtidSet::default();
        g.last_assigned = 0;
    }

    /// WAIT_FOR_EXECUTED_GTID_SET: whether `want` was executed within
    /// `timeout` (None: no limit); `interrupted` is polled.
    pub fn wait_executed(
        &self,
        want: &GtidSet,
        timeout: Option<Duration>,
        interrupted: impl Fn() -> bool,
    ) -> bool {
        let deadline = timeout.map(|t| Instant::now() + t);
        let mut g = self.inner.lock();
        loop {
            if want.is_subset_of(&g.executed) {
                return true;
            }
            if interrupted() {
                return false;
            }
            // Wake at least every 100 ms to notice KILL.
            let slice = Duration::from_millis(100);
            let wait = match deadline {
                Some(d) => {
                    let now = Instant::now();
                    if now >= d {
                        return false;
                    }
                    (d - now).min(slice)
                }
                None => slice,
            };
            self.changed.wait_for(&mut g, wait);
        }
    }
}

#[cfg(test)]
#[path = "gtid_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "gtid_engine_tests.rs"]
mod engine_tests;
