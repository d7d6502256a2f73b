//! # CHECK TABLE: one table's trees, checked online
//!
//! `quire check` verifies a whole data directory offline: every page's
//! checksum and identity, every tree's structure, the page accounting.
//! CHECK TABLE asks the same of one table while the server runs, through
//! the buffer pool (as InnoDB's CHECK TABLE validates its in-memory
//! B-trees):
//!
//! 1. **structure**: each of the table's trees (clustered and secondary)
//!    is walked from the root through every internal level; each node must
//!    belong to the tree and sit at the level its parent implies (the walk
//!    ANALYZE makes). A page read from disk on the way has its checksum
//!    verified by the buffer pool, as every read does;
//! 2. **order**: every leaf entry, in cursor order, has a key strictly
//!    greater than the one before;
//! 3. **rows**: every clustered value splits into its MVCC header and a row
//!    that decodes with the table's column types;
//! 4. **indexes**: every live (not delete-marked) row has its entry in
//!    each secondary index (index columns ++ primary key, value = primary
//!    key), and every secondary entry's key ends with its value.
//!
//! What the offline check covers and this does not: the free list and the
//! page accounting of the tablespace (shared by all tables, not one
//! table's business) and pages that stay cached in the buffer pool (they
//! were verified when read).
//!
//! Commits go on meanwhile. A commit writes the clustered row before its
//! index entries, so a row seen without its entry is looked at again after
//! the scan: it is reported only if the row is unchanged and the entry is
//! still missing. At most [`MAX_PROBLEMS`] problems are listed.

use std::ops::Bound;

use crate::catalog::TableDef;
use crate::engine::{sec_key, Engine};
use crate::error::Result;
use crate::mvcc;

/// Problems listed before CHECK TABLE stops looking.
pub const MAX_PROBLEMS: usize = 100;

impl Engine {
    /// Checks table `t` (see the module text). `Ok` with the problems
    /// found (empty: none); `Err` if a page could not be read at all
    /// (the error names it) or the table was dropped meanwhile (1146).
    pub fn check_table(&self, t: &TableDef) -> Result<Vec<String>> {
        let mut problems: Vec<String> = Vec::new();
        let ct = self.inner.tree(&t.clustered_tree())?;
        ct.sample_leaves(1)?;
        let trees: Vec<_> = t
            .indexes
            .iter()
            .map(|i| self.inner.tree(&t.index_tree(i.id)))
            .collect::<Result<_>>()?;
        for tr in &trees {
            tr.sample_leaves(1)?;
        }
        let mut prev: Option<Vec<u8>> = None;
        let mut suspects: Vec<(Vec<u8>, Vec<u8>, usize)> = Vec::new();
        for e in ct.range(Bound::Unbounded, Bound::Unbounded, false) {
            if problems.len() >= MAX_PROBLEMS {
                return Ok(problems);
            }
            let (pk, v) = e?;
            if prev.as_ref().is_some_and(|p| *p >= pk) {
                problems.push(format!(
                    "clustered index of {}: keys out of order",
                    t.qualified()
                ));
            }
            let Some((_, deleted, row)) = mvcc::split_value(&v) else {
                problems.push(format!(
                    "clustered index of {}: a value of {} bytes has no version header",
                    t.qualified(),
                    v.len()
                ));
                prev = Some(pk);
                continue;
            };
            let vals = match self.inner.decode_body(t, row) {
                Ok(x) => x,
                // Off-page chains of a row replaced since it was read may
                // be freed already: only an unchanged row is a problem.
                Err(_) if ct.get(&pk)?.as_deref() != Some(v.as_slice()) => {
                    prev = Some(pk);
                    continue;
                }
                Err(m) => {
                    problems.push(format!(
                        "clustered index of {}: a row does not decode: {m}",
                        t.qualified()
                    ));
                    prev = Some(pk);
                    continue;
                }
            };
            if !deleted {
                for (n, idx) in t.indexes.iter().enumerate() {
                    let mut key = sec_key(t, idx, &vals);
                    key.extend_from_slice(&pk);
                    if trees[n].get(&key)?.is_none() {
                        suspects.push((pk.clone(), v.clone(), n));
                    }
                }
            }
            prev = Some(pk);
        }
        for (n, idx) in t.indexes.iter().enumerate() {
            let mut prev: Option<Vec<u8>> = None;
            for e in trees[n].range(Bound::Unbounded, Bound::Unbounded, false) {
                if problems.len() >= MAX_PROBLEMS {
                    return Ok(problems);
                }
                let (k, v) = e?;
                if prev.as_ref().is_some_and(|p| *p >= k) {
                    problems.push(format!(
                        "index {} of {}: keys out of order",
                        idx.name,
                        t.qualified()
                    ));
                }
                if !k.ends_with(&v) {
                    problems.push(format!(
                        "index {} of {}: an entry's key does not end with its primary key",
                        idx.name,
                        t.qualified()
                    ));
                }
                prev = Some(k);
            }
        }
        // Rows seen without an index entry: a commit may have been between
        // its clustered write and its index writes. Look again.
        for (pk, v, n) in suspects {
            if problems.len() >= MAX_PROBLEMS {
                break;
            }
            if ct.get(&pk)?.as_deref() != Some(v.as_slice()) {
                continue; // changed since: the new version was indexed with it
            }
            let Some((_, _, row)) = mvcc::split_value(&v) else {
                continue;
            };
            let Ok(vals) = self.inner.decode_body(t, row) else {
                continue;
            };
            let idx = &t.indexes[n];
            let mut key = sec_key(t, idx, &vals);
            key.extend_from_slice(&pk);
            if trees[n].get(&key)?.is_none() {
                problems.push(format!(
                    "index {} of {}: a row has no entry",
                    idx.name,
                    t.qualified()
                ));
            }
        }
        Ok(problems)
    }
}
