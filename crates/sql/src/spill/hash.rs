//! # Hash tables that overflow to disk
//!
//! GROUP BY, DISTINCT, UNION DISTINCT, INTERSECT and EXCEPT each keep a
//! hash table keyed by `query/key.rs`'s keys. While the table is within
//! the limit (min of `tmp_table_size` and `max_heap_table_size`) nothing
//! changes. Once it is full, a row whose key is already in the table is
//! still handled in memory, and a row with a new key is written to one
//! of [`FANOUT`] partitions chosen by a hash of its key:
//!
//! ```text
//!   rows ─▶ key in table? ─yes─▶ in memory (count, drop duplicate, add to group)
//!                │ no
//!                ├─ table not full ─▶ insert
//!                └─ full ─▶ partition hash(level, key) % 16 ─▶ file
//!   input over: the table's answer, then each partition in turn with an
//!   empty table at level + 1 (a new hash seed, so a partition that is
//!   still too big splits again)
//! ```
//!
//! Every key lands in exactly one place (the table, or one partition at
//! each level), so a partition can be finished on its own. Output order
//! is the table's first and then partition by partition: without ORDER
//! BY, MySQL promises no order either.
//!
//! [`SetFilter`] is INTERSECT / EXCEPT: the right side is the table
//! (key → count); when it overflows, both sides are partitioned the same
//! way and partition i of the left is probed against partition i of the
//! right (a grace hash join).

use foldhash::{HashMap, HashSet};
use std::collections::hash_map::DefaultHasher;
use std::collections::VecDeque;
use std::hash::{Hash, Hasher};
use std::path::PathBuf;
use std::rc::Rc;

use quire_engine::Value;

use super::file::{SpillFile, StreamReader, StreamWriter};
use super::{row_bytes, stats, table_full, Limits};
use crate::query::key::{row_key_of, KeyOf, KeyPart};
use crate::SqlResult;

/// Partitions per overflowing table.
pub const FANOUT: usize = 16;
/// Partitioning depth after which a table that still overflows is
/// reported full (16^8 times the limit: not reached in practice).
pub const MAX_LEVEL: u32 = 8;

pub type Key = Vec<KeyPart>;
type Row = Vec<Value>;

/// What a key is counted for in memory.
pub fn key_bytes(k: &[KeyPart]) -> usize {
    48 + std::mem::size_of_val(k)
        + k.iter()
            .map(|p| match p {
                KeyPart::Bytes(b) => b.len(),
                KeyPart::Dec(s) | KeyPart::Temporal(s) => s.len(),
                _ => 0,
            })
            .sum::<usize>()
}

fn partition_of(key: &[KeyPart], level: u32) -> usize {
    let mut h = DefaultHasher::new();
    level.hash(&mut h);
    key.hash(&mut h);
    (h.finish() % FANOUT as u64) as usize
}

/// Rows of one overflowing table, split by key hash.
pub struct Partitions {
    parts: Vec<StreamWriter>,
    level: u32,
}

impl Partitions {
    /// Partitions for a table at `level` (error 1114 past [`MAX_LEVEL`]).
    pub fn new(dir: &std::path::Path, level: u32) -> SqlResult<Partitions> {
        if level >= MAX_LEVEL {
            return Err(table_full(dir));
        }
        stats::disk_table();
        let file: Rc<SpillFile> = SpillFile::create(dir)?;
        Ok(Partitions {
            parts: (0..FANOUT)
                .map(|_| StreamWriter::new(file.clone()))
                .collect(),
            level,
        })
    }

    pub fn push(&mut self, key: &[KeyPart], row: &[Value]) -> SqlResult<()> {
        self.parts[partition_of(key, self.level)].push(row)
    }

    /// The partitions, each to be done at the next level.
    pub fn finish(self) -> SqlResult<Vec<(StreamReader, u32)>> {
        let level = self.level + 1;
        self.parts
            .into_iter()
            .map(|w| Ok((w.finish()?, level)))
            .collect()
    }
}

/// Duplicate removal (DISTINCT, UNION DISTINCT): a row is passed on the
/// first time its key is seen.
pub struct Dedup {
    limit_bytes: usize,
    dir: PathBuf,
    /// Keys are the first `width` values (None: all).
    width: Option<usize>,
    /// How each key column compares.
    colls: Vec<KeyOf>,
    seen: HashSet<Key>,
    bytes: usize,
    over: Option<Partitions>,
    level: u32,
    queue: VecDeque<(StreamReader, u32)>,
    reading: Option<StreamReader>,
}

impl Dedup {
    pub fn new(limits: &Limits, width: Option<usize>, colls: Vec<KeyOf>) -> Dedup {
        Dedup {
            limit_bytes: limits.table_bytes,
            dir: limits.dir.clone(),
            width,
            colls,
            seen: HashSet::default(),
            bytes: 0,
            over: None,
            level: 0,
            queue: VecDeque::new(),
            reading: None,
        }
    }

    fn key(&self, row: &[Value]) -> Key {
        row_key_of(
            &row[..self.width.unwrap_or(row.len()).min(row.len())],
            &self.colls,
        )
    }

    /// An input row: Some(row) if it is new and goes out now; None if it
    /// is a duplicate or was set aside for [`Dedup::drain`].
    pub fn offer(&mut self, row: Row) -> SqlResult<Option<Row>> {
        let key = self.key(&row);
        if self.seen.contains(&key) {
            return Ok(None);
        }
        if self.over.is_none() {
            let b = key_bytes(&key);
            if self.bytes + b <= self.limit_bytes || self.seen.is_empty() {
                self.bytes += b;
                self.seen.insert(key);
                return Ok(Some(row));
            }
            self.over = Some(Partitions::new(&self.dir, self.level)?);
        }
        if let Some(p) = self.over.as_mut() {
            p.push(&key, &row)?;
        }
        Ok(None)
    }

    /// After the input: the rows set aside that are new, one at a time.
    pub fn drain(&mut self, tick: &dyn Fn() -> SqlResult<()>) -> SqlResult<Option<Row>> {
        loop {
            if let Some(mut r) = self.reading.take() {
                while let Some(row) = r.next_row()? {
                    tick()?;
                    if let Some(out) = self.offer(row)? {
                        self.reading = Some(r);
                        return Ok(Some(out));
                    }
                }
            }
            if let Some(p) = self.over.take() {
                self.queue.extend(p.finish()?);
            }
            let Some((reader, level)) = self.queue.pop_front() else {
                return Ok(None);
            };
            self.seen = HashSet::default();
            self.bytes = 0;
            self.level = level;
            self.reading = Some(reader);
        }
    }
}

/// INTERSECT / EXCEPT [ALL]: which left rows are kept, by the right
/// side's keys and counts. DISTINCT variants are passed through a
/// [`Dedup`] by the caller.
pub struct SetFilter {
    intersect: bool,
    all: bool,
    limit_bytes: usize,
    dir: PathBuf,
    /// How each column compares (collation, JSON), as for [`Dedup`].
    kinds: Vec<KeyOf>,
    /// Right side: key → (a row with that key, count).
    map: HashMap<Key, (Row, u64)>,
    bytes: usize,
    level: u32,
    right_over: Option<Partitions>,
    left_over: Option<Partitions>,
    /// Partition pairs (right, left) still to do.
    queue: VecDeque<(StreamReader, StreamReader, u32)>,
    reading: Option<StreamReader>,
}

impl SetFilter {
    pub fn new(limits: &Limits, intersect: bool, all: bool, kinds: Vec<KeyOf>) -> SetFilter {
        SetFilter {
            intersect,
            all,
            kinds,
            limit_bytes: limits.table_bytes,
            dir: limits.dir.clone(),
            map: HashMap::default(),
            bytes: 0,
            level: 0,
            right_over: None,
            left_over: None,
            queue: VecDeque::new(),
            reading: None,
        }
    }

    /// A right-side row (with `count` occurrences).
    pub fn add_right(&mut self, row: Row, count: u64) -> SqlResult<()> {
        let key = row_key_of(&row, &self.kinds);
        if let Some(p) = self.right_over.as_mut() {
            let mut rec = row;
            rec.push(Value::UInt(count));
            return p.push(&key, &rec);
        }
        if let Some(e) = self.map.get_mut(&key) {
            e.1 += count;
            return Ok(());
        }
        let b = key_bytes(&key) + row_bytes(&row);
        if self.bytes + b > self.limit_bytes && !self.map.is_empty() {
            // Full: from now on both sides are partitioned.
            let mut p = Partitions::new(&self.dir, self.level)?;
            for (k, (mut r, c)) in self.map.drain() {
                r.push(Value::UInt(c));
                p.push(&k, &r)?;
            }
            let mut rec = row;
            rec.push(Value::UInt(count));
            p.push(&key, &rec)?;
            self.bytes = 0;
            self.right_over = Some(p);
            self.left_over = Some(Partitions::new(&self.dir, self.level)?);
            return Ok(());
        }
        self.bytes += b;
        self.map.insert(key, (row, count));
        Ok(())
    }

    fn keep(&mut self, key: &Key) -> bool {
        let count = self.map.get_mut(key).map(|e| &mut e.1);
        match (self.intersect, self.all) {
            (true, true) => match count {
                Some(c) if *c > 0 => {
                    *c -= 1;
                    true
                }
                _ => false,
            },
            (true, false) => count.is_some(),
            (false, true) => match count {
                Some(c) if *c > 0 => {
                    *c -= 1;
                    false
                }
                _ => true,
            },
            (false, false) => count.is_none(),
        }
    }

    /// A left-side row during the input: Some(row) if it is kept now;
    /// None if dropped or set aside for [`SetFilter::drain`].
    pub fn offer_left(&mut self, row: Row) -> SqlResult<Option<Row>> {
        let key = row_key_of(&row, &self.kinds);
        if let Some(p) = self.left_over.as_mut() {
            p.push(&key, &row)?;
            return Ok(None);
        }
        Ok(self.keep(&key).then_some(row))
    }

    /// After the left input: the kept rows of the partitions.
    pub fn drain(&mut self, tick: &dyn Fn() -> SqlResult<()>) -> SqlResult<Option<Row>> {
        loop {
            if let Some(mut r) = self.reading.take() {
                while let Some(row) = r.next_row()? {
                    tick()?;
                    if let Some(out) = self.offer_left(row)? {
                        self.reading = Some(r);
                        return Ok(Some(out));
                    }
                }
            }
            if let (Some(rp), Some(lp)) = (self.right_over.take(), self.left_over.take()) {
                for ((r, level), (l, _)) in rp.finish()?.into_iter().zip(lp.finish()?) {
                    self.queue.push_back((r, l, level));
                }
            }
            let Some((mut right, left, level)) = self.queue.pop_front() else {
                return Ok(None);
            };
            self.map = HashMap::default();
            self.bytes = 0;
            self.level = level;
            while let Some(mut rec) = right.next_row()? {
                tick()?;
                let count = match rec.pop() {
                    Some(Value::UInt(c)) => c,
                    _ => return Err(super::codec::corrupt("set operation count")),
                };
                self.add_right(rec, count)?;
            }
            self.reading = Some(left);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(tag: &str, table_bytes: usize) -> Limits {
        let d = std::env::temp_dir().join(format!("quire-xhash-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).expect("dir");
        Limits {
            join_bytes: 262_144,
            sort_bytes: 1 << 20,
            table_bytes,
            dir: d.join("#tmp"),
        }
    }

    fn files(l: &Limits) -> usize {
        std::fs::read_dir(&l.dir).map(|d| d.count()).unwrap_or(0)
    }

    #[test]
    fn dedup_over_the_limit_passes_each_key_once() {
        let l = limits("dedup", 4096);
        let ok = || Ok(());
        let mut d = Dedup::new(&l, Some(1), Vec::new());
        let mut out = Vec::new();
        for i in 0..20_000i64 {
            // Keys 0..5000, four times each, with a payload column.
            let row = vec![Value::Int(i % 5000), Value::Int(i)];
            out.extend(d.offer(row).expect("offer"));
        }
        assert!(files(&l) > 0, "the table spilled");
        while let Some(r) = d.drain(&ok).expect("drain") {
            out.push(r);
        }
        drop(d);
        assert_eq!(files(&l), 0);
        let mut keys: Vec<i64> = out
            .iter()
            .map(|r| match r[0] {
                Value::Int(i) => i,
                _ => -1,
            })
            .collect();
        keys.sort_unstable();
        assert_eq!(keys, (0..5000).collect::<Vec<_>>());
        // The first occurrence of each key is the one kept.
        assert!(out.iter().all(|r| r[0] == r[1]));
    }

    #[test]
    fn set_filter_over_the_limit_matches_in_memory() {
        for (intersect, all) in [(true, true), (true, false), (false, true), (false, false)] {
            let run = |limit: usize| {
                let l = limits(&format!("set{intersect}{all}{limit}"), limit);
                let ok = || Ok(());
                let mut f = SetFilter::new(&l, intersect, all, Vec::new());
                for i in 0..3000i64 {
                    f.add_right(vec![Value::Int(i % 1000 * 2)], 1)
                        .expect("right");
                }
                let mut out = Vec::new();
                for i in 0..4000i64 {
                    out.extend(f.offer_left(vec![Value::Int(i % 2000)]).expect("left"));
                }
                while let Some(r) = f.drain(&ok).expect("drain") {
                    out.push(r);
                }
                drop(f);
                assert_eq!(files(&l), 0);
                let mut v: Vec<String> = out.iter().map(|r| format!("{r:?}")).collect();
                v.sort();
                v
            };
            assert_eq!(run(2048), run(1 << 30), "intersect={intersect} all={all}");
        }
    }
}
