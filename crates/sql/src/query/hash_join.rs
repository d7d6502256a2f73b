//! # Hash join: which equalities can be hashed, and the build side
//!
//! MySQL 8.0.18+ joins a table that has no index usable for the join
//! condition by hashing instead of rescanning it for every row of the
//! tables before it. quire does the same inside its nested-loop join
//! (`ops.rs` `JoinOp`): a *hash step* reads its source once, at its first
//! probe, into a table keyed by the build expressions; every row of the
//! steps before then takes its candidates from the bucket of its probe
//! key. The join's conditions are still checked on every candidate (the
//! equalities too), so the hash only has to be *complete*: two values
//! that compare equal must get the same key. That is what decides which
//! equalities qualify ([`find_keys`]):
//!
//! * both sides are plain columns, of one comparison family: exact
//!   numbers (integers, DECIMAL: `query/key.rs` brings 1 and 1.0 to one
//!   key), approximate numbers (FLOAT/DOUBLE), strings (compared by
//!   bytes), or the very same temporal type. A string against a number
//!   compares as doubles, a DATE against a DATETIME as datetimes: no key
//!   respects that, so such a join stays a nested loop;
//! * `=` never matches a NULL, so a build row or probe row with a NULL
//!   key under `=` joins nothing (an outer join's probe row still gets
//!   its NULL row); `<=>` keys treat NULL as a value.
//!
//! Memory: the build rows are held up to `join_buffer_size` bytes. Past
//! that the join turns into a grace hash join: the build rows go to
//! `spill::hash::Partitions` (16 partitions by key hash, in
//! `<datadir>/#tmp`), every probe row is written to the partition of its
//! key instead of being joined, and once the steps before have no more
//! rows, each partition's build rows are loaded into a table and its
//! probe rows replayed through the rest of the join ([`Spilled`]). One
//! level of partitioning: a partition is loaded whole even if a skewed
//! key makes it larger than the buffer.

use foldhash::HashMap;
use std::collections::VecDeque;
use std::sync::Arc;

use quire_engine::{ColumnType, Txn, Value};

use crate::expr::{Cmp, E};
use crate::query::key::{key_part, KeyPart};
use crate::query::plan::{HashJoin, Join};
use crate::spill::file::StreamReader;
use crate::spill::hash::{key_bytes, Partitions};
use crate::spill::row_bytes;
use crate::SqlResult;

pub type Key = Vec<KeyPart>;
type Row = Vec<Value>;

// ------------------------------------------------------------ planning

/// The comparison family of a column type (None: never hashed).
fn family(t: &ColumnType) -> Option<u8> {
    use ColumnType as T;
    Some(match t {
        T::TinyInt { .. }
        | T::SmallInt { .. }
        | T::MediumInt { .. }
        | T::Int { .. }
        | T::BigInt { .. }
        | T::Decimal { .. } => 0,
        T::Float | T::Double => 1,
        T::Char { .. }
        | T::Varchar { .. }
        | T::Text { .. }
        | T::Blob { .. }
        | T::Binary { .. }
        | T::VarBinary { .. } => 2,
        _ => return None,
    })
}

/// Whether values of types `a` and `b` are equal exactly when their
/// hash keys are.
pub fn hashable(a: &ColumnType, b: &ColumnType) -> bool {
    match (family(a), family(b)) {
        (Some(x), Some(y)) => x == y,
        // Temporal and other types: only the very same type.
        _ => {
            a == b
                && matches!(
                    a,
                    ColumnType::Date | ColumnType::DateTime { .. } | ColumnType::Timestamp { .. }
                )
        }
    }
}

fn source_of(j: &Join, col: usize) -> Option<usize> {
    j.sources
        .iter()
        .position(|s| col >= s.offset && col < s.offset + s.width)
}

/// The hash keys of source `si` read after the sources in `bound`, from
/// the equalities among `conds` between a column of `si` and a column of
/// a bound source (None: no such equality; the step stays a loop).
pub fn find_keys(j: &Join, si: usize, bound: &[bool], conds: &[E]) -> Option<HashJoin> {
    let mut h = HashJoin {
        build: Vec::new(),
        probe: Vec::new(),
        null_safe: Vec::new(),
        text: String::new(),
    };
    let mut texts = Vec::new();
    for c in conds {
        let E::Cmp(op @ (Cmp::Eq | Cmp::NullSafeEq), l, r) = c else {
            continue;
        };
        let (E::Col(a), E::Col(b)) = (&**l, &**r) else {
            continue;
        };
        let (sa, sb) = (source_of(j, *a), source_of(j, *b));
        let (own, other) = match (sa, sb) {
            (Some(x), Some(y)) if x == si && y != si && bound.get(y) == Some(&true) => (*a, *b),
            (Some(x), Some(y)) if y == si && x != si && bound.get(x) == Some(&true) => (*b, *a),
            _ => continue,
        };
        let (Some(ta), Some(tb)) = (j.col_types.get(own), j.col_types.get(other)) else {
            continue;
        };
        if !hashable(ta, tb) {
            continue;
        }
        h.build.push(E::Col(own));
        h.probe.push(E::Col(other));
        h.null_safe.push(*op == Cmp::NullSafeEq);
        let name = |c: usize| j.col_names.get(c).cloned().unwrap_or_default();
        let sym = if *op == Cmp::NullSafeEq { "<=>" } else { "=" };
        texts.push(format!("{} {sym} {}", name(own), name(other)));
    }
    if h.build.is_empty() {
        return None;
    }
    h.text = texts.join(", ");
    Some(h)
}

// ------------------------------------------------------------- running

/// The key of evaluated key values; None when a `=` key is NULL (the
/// row can match nothing).
pub fn key_of(vals: &[Value], null_safe: &[bool]) -> Option<Key> {
    vals.iter()
        .zip(null_safe)
        .map(|(v, ns)| (!v.is_null() || *ns).then(|| key_part(v)))
        .collect()
}

/// The build side while it is being read.
pub struct Builder {
    /// Per key: the key values of its first row, and its rows.
    map: HashMap<Key, (Vec<Value>, Vec<Row>)>,
    bytes: usize,
    limit_bytes: usize,
    dir: std::path::PathBuf,
    keys: usize,
    null_safe: Vec<bool>,
    /// Set once the rows passed `limit_bytes`.
    parts: Option<Partitions>,
}

impl Builder {
    pub fn new(limit_bytes: usize, dir: &std::path::Path, null_safe: &[bool]) -> Builder {
        Builder {
            map: HashMap::default(),
            bytes: 0,
            limit_bytes,
            dir: dir.to_path_buf(),
            keys: null_safe.len(),
            null_safe: null_safe.to_vec(),
            parts: None,
        }
    }

    /// Adds one build row with its evaluated key values.
    pub fn add(&mut self, key_vals: Vec<Value>, row: Row) -> SqlResult<()> {
        let Some(key) = key_of(&key_vals, &self.null_safe) else {
            return Ok(());
        };
        if let Some(p) = self.parts.as_mut() {
            let mut stored = row;
            stored.extend(key_vals);
            return p.push(&key, &stored);
        }
        self.bytes += row_bytes(&row);
        match self.map.get_mut(&key) {
            Some((_, rows)) => rows.push(row),
            None => {
                self.bytes += key_bytes(&key) + row_bytes(&key_vals);
                self.map.insert(key, (key_vals, vec![row]));
            }
        }
        if self.bytes > self.limit_bytes {
            self.spill()?;
        }
        Ok(())
    }

    /// Moves the table to partition files; later rows go straight there.
    fn spill(&mut self) -> SqlResult<()> {
        let mut p = Partitions::new(&self.dir, 0)?;
        for (key, (vals, rows)) in self.map.drain() {
            for mut r in rows {
                r.extend(vals.iter().cloned());
                p.push(&key, &r)?;
            }
        }
        self.bytes = 0;
        self.parts = Some(p);
        Ok(())
    }

    pub fn finish(self) -> SqlResult<BuildSide> {
        Ok(match self.parts {
            None => BuildSide::Memory(
                self.map
                    .into_iter()
                    .map(|(k, (_, v))| (k, Arc::new(v)))
                    .collect(),
            ),
            Some(p) => BuildSide::Spilled(Box::new(Spilled {
                build: p.finish()?.into_iter().map(|(r, _)| r).collect(),
                probe: Some(Partitions::new(&self.dir, 0)?),
                keys: self.keys,
                null_safe: self.null_safe,
                pairs: VecDeque::new(),
                table: HashMap::default(),
                reading: None,
            })),
        })
    }
}

/// A hash step's table, once built.
pub enum BuildSide {
    Memory(HashMap<Key, Arc<Vec<Row>>>),
    Spilled(Box<Spilled>),
}

/// A build side larger than `join_buffer_size`: partitions on disk.
pub struct Spilled {
    /// Build partitions (rows followed by their key values).
    build: Vec<StreamReader>,
    /// Probe rows collected while the steps before still produce rows.
    probe: Option<Partitions>,
    keys: usize,
    null_safe: Vec<bool>,
    /// (build, probe) partitions not yet replayed.
    pairs: VecDeque<(StreamReader, StreamReader)>,
    /// The current partition's build rows.
    table: HashMap<Key, Arc<Vec<Row>>>,
    /// The current partition's probe rows.
    reading: Option<StreamReader>,
}

impl Spilled {
    /// Sets a probe row aside in its key's partition (`key` None: a NULL
    /// under `=`, which matches nothing wherever it goes).
    pub fn add_probe(&mut self, key: Option<&Key>, row: &[Value]) -> SqlResult<()> {
        let Some(p) = self.probe.as_mut() else {
            return Err(quire_engine::EngineError::internal(
                "hash join probe row after its replay",
            ));
        };
        let nulls;
        let k = match key {
            Some(k) => k,
            None => {
                nulls = vec![KeyPart::Null; self.keys];
                &nulls
            }
        };
        p.push(k, row)
    }

    /// Whether probe rows wait to be replayed.
    pub fn pending(&self) -> bool {
        self.probe.is_some()
    }

    /// Ends the collection of probe rows: the partitions are paired for
    /// the replay.
    pub fn start_replay(&mut self) -> SqlResult<()> {
        let Some(p) = self.probe.take() else {
            return Ok(());
        };
        let probes = p.finish()?;
        let builds = std::mem::take(&mut self.build);
        self.pairs = builds
            .into_iter()
            .zip(probes)
            .filter(|(_, (p, _))| p.rows() > 0)
            .map(|(b, (p, _))| (b, p))
            .collect();
        Ok(())
    }

    /// The next probe row of the replay (its partition's build rows
    /// loaded); None when every partition is done.
    pub fn next_probe(&mut self, txn: &Txn) -> SqlResult<Option<Row>> {
        loop {
            if let Some(r) = self.reading.as_mut() {
                if let Some(row) = r.next_row()? {
                    return Ok(Some(row));
                }
                self.reading = None;
            }
            let Some((mut b, p)) = self.pairs.pop_front() else {
                self.table = HashMap::default();
                return Ok(None);
            };
            let mut map: HashMap<Key, Vec<Row>> = HashMap::default();
            while let Some(mut row) = b.next_row()? {
                txn.tick()?;
                let at = row.len().saturating_sub(self.keys);
                let kv = row.split_off(at);
                if let Some(k) = key_of(&kv, &self.null_safe) {
                    map.entry(k).or_default().push(row);
                }
            }
            self.table = map.into_iter().map(|(k, v)| (k, Arc::new(v))).collect();
            self.reading = Some(p);
        }
    }

    /// The current partition's build rows with key `k`.
    pub fn lookup(&self, k: &Key) -> Option<Arc<Vec<Row>>> {
        self.table.get(k).cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn null_keys_match_only_under_null_safe_equality() {
        assert!(key_of(&[Value::Null], &[false]).is_none());
        assert_eq!(key_of(&[Value::Null], &[true]), Some(vec![KeyPart::Null]));
        assert_eq!(
            key_of(&[Value::Int(1)], &[false]),
            key_of(&[Value::Decimal("1.0".parse().expect("d"))], &[false])
        );
    }

    #[test]
    fn strings_and_numbers_are_not_hashed_together() {
        let int = ColumnType::Int { unsigned: false };
        let vc = ColumnType::varchar(10);
        let dec = ColumnType::Decimal {
            precision: 10,
            scale: 2,
        };
        assert!(hashable(&int, &dec));
        assert!(!hashable(&int, &vc));
        assert!(!hashable(&int, &ColumnType::Double));
        assert!(hashable(&ColumnType::Date, &ColumnType::Date));
        assert!(!hashable(&ColumnType::Date, &vc));
    }
}
