//! # External sort: sorted runs on disk, merged
//!
//! [`Sorter`] takes rows one at a time. While they fit in the sort
//! buffer they stay in memory and the result is the in-memory stable
//! sort (`crate::sort`). When the buffer is full it is sorted and
//! written out as a *run*; at the end the runs are merged:
//!
//! ```text
//!   input ─▶ [buffer ≤ sort_buffer_size] ─full─▶ sort ─▶ run 0, run 1, ... (one file)
//!                                                         │ more than FAN_IN runs:
//!                                                         ▼ merge FAN_IN at a time
//!                                                 run 0', run 1', ...  (next file;
//!                                                         │  the previous is removed)
//!                                                         ▼ at most FAN_IN runs
//!                                                 final merge, streamed to next()
//! ```
//!
//! The order equals the in-memory stable sort's: runs hold consecutive
//! pieces of the input, each sorted stably, and a merge takes equal rows
//! from the earlier run first. `ORDER BY ... LIMIT n` (`top`) keeps at
//! most n rows of each run and of the output.
//!
//! Memory during a merge: one block (`file.rs`, 16 KiB) and one row per
//! run being merged, so at most [`FAN_IN`] of each, whatever the input
//! size.

use std::cmp::Ordering;
use std::rc::Rc;

use quire_engine::Value;

use super::file::{SpillFile, StreamReader, StreamWriter};
use super::{row_bytes, stats, Limits};
use crate::SqlResult;

/// Runs merged at once.
pub const FAN_IN: usize = 64;
/// Rows merged between two safe points.
const TICK_EVERY: u32 = 256;

type Row = Vec<Value>;

/// Collects rows and hands them back sorted.
pub struct Sorter<C: Fn(&[Value], &[Value]) -> Ordering> {
    cmp: C,
    limit_bytes: usize,
    top: Option<usize>,
    buf: Vec<Row>,
    bytes: usize,
    dir: std::path::PathBuf,
    file: Option<Rc<SpillFile>>,
    runs: Vec<StreamReader>,
}

impl<C: Fn(&[Value], &[Value]) -> Ordering> Sorter<C> {
    pub fn new(cmp: C, top: Option<usize>, limits: &Limits) -> Sorter<C> {
        Sorter {
            cmp,
            limit_bytes: limits.sort_bytes,
            top,
            buf: Vec::new(),
            bytes: 0,
            dir: limits.dir.clone(),
            file: None,
            runs: Vec::new(),
        }
    }

    /// Runs written so far.
    pub fn runs(&self) -> usize {
        self.runs.len()
    }

    fn sort_buf(&mut self, tick: &dyn Fn() -> SqlResult<()>) -> SqlResult<()> {
        let cmp = &self.cmp;
        crate::sort::sort_stoppable(&mut self.buf, |a, b| cmp(a, b), tick)?;
        if let Some(t) = self.top {
            self.buf.truncate(t);
        }
        Ok(())
    }

    pub fn push(&mut self, row: Row, tick: &dyn Fn() -> SqlResult<()>) -> SqlResult<()> {
        self.bytes += row_bytes(&row);
        self.buf.push(row);
        if let Some(t) = self.top {
            // Top-N: the buffer keeps at most about twice what is needed.
            if self.buf.len() >= t.saturating_mul(2).max(1024) {
                self.sort_buf(tick)?;
                self.bytes = self.buf.iter().map(|r| row_bytes(r)).sum();
            }
        }
        if self.bytes > self.limit_bytes && self.buf.len() > 1 {
            self.write_run(tick)?;
        }
        Ok(())
    }

    fn write_run(&mut self, tick: &dyn Fn() -> SqlResult<()>) -> SqlResult<()> {
        self.sort_buf(tick)?;
        let file = match &self.file {
            Some(f) => f.clone(),
            None => {
                let f = SpillFile::create(&self.dir)?;
                self.file = Some(f.clone());
                f
            }
        };
        let mut w = StreamWriter::new(file);
        for r in self.buf.drain(..) {
            w.push(&r)?;
        }
        self.runs.push(w.finish()?);
        self.bytes = 0;
        // The buffer's memory is kept for the next run (it is bounded by
        // the limit); an outsized one from a huge row is let go.
        if self.buf.capacity() > 1 << 20 {
            self.buf = Vec::new();
        }
        Ok(())
    }

    /// Ends the input: the rows in order.
    pub fn finish(mut self, tick: &dyn Fn() -> SqlResult<()>) -> SqlResult<Sorted<C>> {
        if self.runs.is_empty() {
            self.sort_buf(tick)?;
            return Ok(Sorted::Memory(std::mem::take(&mut self.buf).into_iter()));
        }
        if !self.buf.is_empty() {
            self.write_run(tick)?;
        }
        self.file = None;
        let mut runs = std::mem::take(&mut self.runs);
        while runs.len() > FAN_IN {
            stats::merge_pass();
            let file = SpillFile::create(&self.dir)?;
            let mut next = Vec::with_capacity(runs.len() / FAN_IN + 1);
            let mut rest = runs.into_iter();
            loop {
                let group: Vec<StreamReader> = rest.by_ref().take(FAN_IN).collect();
                if group.is_empty() {
                    break;
                }
                let mut m = Merge::new(group, &self.cmp, self.top)?;
                let mut w = StreamWriter::new(file.clone());
                while let Some(r) = m.next(&self.cmp, tick)? {
                    w.push(&r)?;
                }
                next.push(w.finish()?);
            }
            runs = next;
        }
        let m = Merge::new(runs, &self.cmp, self.top)?;
        Ok(Sorted::Merge { m, cmp: self.cmp })
    }
}

/// Sorted rows, from memory or from a merge of runs.
pub enum Sorted<C> {
    Memory(std::vec::IntoIter<Row>),
    Merge { m: Merge, cmp: C },
}

impl<C: Fn(&[Value], &[Value]) -> Ordering> Sorted<C> {
    pub fn next(&mut self, tick: &dyn Fn() -> SqlResult<()>) -> SqlResult<Option<Row>> {
        match self {
            Sorted::Memory(it) => Ok(it.next()),
            Sorted::Merge { m, cmp } => m.next(cmp, tick),
        }
    }
}

/// A k-way merge: a binary heap of run positions ordered by their
/// current row, ties by run number (earlier input first).
pub struct Merge {
    runs: Vec<StreamReader>,
    heads: Vec<Option<Row>>,
    heap: Vec<usize>,
    left: Option<usize>,
    since_tick: u32,
}

impl Merge {
    fn new<C: Fn(&[Value], &[Value]) -> Ordering>(
        mut runs: Vec<StreamReader>,
        cmp: &C,
        top: Option<usize>,
    ) -> SqlResult<Merge> {
        let mut heads = Vec::with_capacity(runs.len());
        for r in runs.iter_mut() {
            heads.push(r.next_row()?);
        }
        let mut m = Merge {
            heap: (0..runs.len()).filter(|i| heads[*i].is_some()).collect(),
            runs,
            heads,
            left: top,
            since_tick: 0,
        };
        for i in (0..m.heap.len() / 2).rev() {
            m.sift_down(i, cmp);
        }
        Ok(m)
    }

    fn less<C: Fn(&[Value], &[Value]) -> Ordering>(&self, a: usize, b: usize, cmp: &C) -> bool {
        match (&self.heads[a], &self.heads[b]) {
            (Some(x), Some(y)) => cmp(x, y).then(a.cmp(&b)) == Ordering::Less,
            // Never in the heap; kept total for safety.
            (Some(_), None) => true,
            _ => false,
        }
    }

    fn sift_down<C: Fn(&[Value], &[Value]) -> Ordering>(&mut self, mut i: usize, cmp: &C) {
        loop {
            let (l, r) = (2 * i + 1, 2 * i + 2);
            let mut best = i;
            if l < self.heap.len() && self.less(self.heap[l], self.heap[best], cmp) {
                best = l;
            }
            if r < self.heap.len() && self.less(self.heap[r], self.heap[best], cmp) {
                best = r;
            }
            if best == i {
                return;
            }
            self.heap.swap(i, best);
            i = best;
        }
    }

    fn next<C: Fn(&[Value], &[Value]) -> Ordering>(
        &mut self,
        cmp: &C,
        tick: &dyn Fn() -> SqlResult<()>,
    ) -> SqlResult<Option<Row>> {
        if self.left == Some(0) {
            return Ok(None);
        }
        self.since_tick += 1;
        if self.since_tick >= TICK_EVERY {
            self.since_tick = 0;
            tick()?;
        }
        let Some(&run) = self.heap.first() else {
            return Ok(None);
        };
        let next = self.runs[run].next_row()?;
        let row = std::mem::replace(&mut self.heads[run], next);
        if self.heads[run].is_none() {
            let last = self.heap.len() - 1;
            self.heap.swap(0, last);
            self.heap.pop();
        }
        self.sift_down(0, cmp);
        if let Some(l) = self.left.as_mut() {
            *l -= 1;
        }
        Ok(row)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(tag: &str, sort_bytes: usize) -> Limits {
        let d = std::env::temp_dir().join(format!("quire-xsort-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).expect("dir");
        Limits {
            join_bytes: 262_144,
            sort_bytes,
            table_bytes: 1 << 20,
            dir: d.join("#tmp"),
        }
    }

    fn lcg(seed: &mut u64) -> i64 {
        *seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (*seed >> 33) as i64
    }

    fn by_first(a: &[Value], b: &[Value]) -> Ordering {
        quire_engine::types::compare(&a[0], &b[0]).unwrap_or(Ordering::Equal)
    }

    /// Many runs, several merge passes, ties kept in input order, and a
    /// top-N over spilled runs; every file gone afterwards.
    #[test]
    fn equals_the_in_memory_stable_sort() {
        let ok = || Ok(());
        for (n, top) in [
            (0usize, None),
            (10, None),
            (50_000, None),
            (50_000, Some(777)),
        ] {
            let l = limits(&format!("{n}-{top:?}"), 32 << 10);
            let mut seed = 11;
            let rows: Vec<Row> = (0..n)
                .map(|i| vec![Value::Int(lcg(&mut seed) % 500), Value::UInt(i as u64)])
                .collect();
            let mut s = Sorter::new(by_first, top, &l);
            for r in rows.iter().cloned() {
                s.push(r, &ok).expect("push");
            }
            let spilled = s.runs();
            let mut out = s.finish(&ok).expect("finish");
            let mut got = Vec::new();
            while let Some(r) = out.next(&ok).expect("next") {
                got.push(r);
            }
            let mut want = rows;
            want.sort_by(|a, b| by_first(a, b));
            want.truncate(top.unwrap_or(usize::MAX));
            assert_eq!(got, want, "n={n} top={top:?}");
            if n >= 50_000 {
                assert!(spilled > FAN_IN || top.is_some(), "runs: {spilled}");
            }
            drop(out);
            let left = std::fs::read_dir(&l.dir).map(|d| d.count()).unwrap_or(0);
            assert_eq!(left, 0, "temporary files left behind");
        }
    }

    #[test]
    fn a_failing_safe_point_stops_the_merge_and_removes_files() {
        let l = limits("kill", 32 << 10);
        let ok = || Ok(());
        let mut s = Sorter::new(by_first, None, &l);
        for i in 0..30_000i64 {
            s.push(vec![Value::Int(-i)], &ok).expect("push");
        }
        let mut out = s.finish(&ok).expect("finish");
        let killed = || Err(quire_engine::interrupt::interrupted_error());
        let mut err = None;
        for _ in 0..1000 {
            if let Err(e) = out.next(&killed) {
                err = Some(e.code);
                break;
            }
        }
        assert_eq!(err, Some(1317));
        assert!(std::fs::read_dir(&l.dir).expect("dir").count() > 0);
        drop(out);
        assert_eq!(std::fs::read_dir(&l.dir).expect("dir").count(), 0);
    }
}
