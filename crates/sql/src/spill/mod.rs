//! # Bounded memory: limits, accounting, and what goes to disk
//!
//! The operators that must see all their input before answering (sort,
//! GROUP BY, DISTINCT, UNION DISTINCT, INTERSECT, EXCEPT) keep what they
//! hold within MySQL's limits and put the rest in temporary files:
//!
//! ```text
//!   ORDER BY        sort.rs   sort_buffer_size bytes of rows in memory;
//!                             beyond: sorted runs on disk, merged 64 at a
//!                             time (more passes when there are more runs);
//!                             ORDER BY ... LIMIT n keeps n rows per run
//!   GROUP BY        hash.rs   tmp_table_size / max_heap_table_size (the
//!   DISTINCT, UNION           smaller) bytes of hash table; beyond: rows
//!   INTERSECT, EXCEPT         with new keys are hash-partitioned to disk
//!                             and each partition is done on its own later
//!                             (partitioned again, with another hash, if it
//!                             is still too big)
//!   hash join       query/    join_buffer_size bytes of build rows; beyond:
//!                   hashjoin  build and probe rows both hash-partitioned
//!                             to disk (`hash::Partitions`), partition i
//!                             of the probe rows joined against partition
//!                             i of the build rows (a grace hash join)
//! ```
//!
//! MySQL does the same (filesort merge passes; an in-memory temporary
//! table converted to an on-disk one), so a query never fails for its
//! size: it gets slower. Memory is accounted approximately ([`row_bytes`]:
//! the values' bytes plus a per-row overhead), as MySQL's own limits are.
//!
//! Files live in `<datadir>/#tmp` (`file.rs`, `quire_engine::tmpdir`),
//! which the engine empties when it opens; every file is removed when the
//! operator holding it is dropped, which happens on success, error and
//! KILL alike. Long loops over spilled rows call the statement's safe
//! point (`Txn::tick`), so KILL QUERY and `max_execution_time` stop them.
//!
//! `Created_tmp_files`, `Created_tmp_disk_tables` and `Sort_merge_passes`
//! count what happened, under MySQL's status names.

pub mod codec;
pub mod file;
pub mod hash;
pub mod sort;

use std::path::{Path, PathBuf};

use std::sync::atomic::{AtomicU64, Ordering};

use quire_engine::{EngineError, Value};

use crate::expr::Env;
use crate::parse::Scope;
use crate::SqlResult;

/// MySQL 8.0's defaults.
pub const DEFAULT_SORT_BUFFER: u64 = 262_144;
pub const DEFAULT_TMP_TABLE: u64 = 16_777_216;

/// The memory limits of one statement, read once when it starts.
#[derive(Debug, Clone)]
pub struct Limits {
    /// `sort_buffer_size`.
    pub sort_bytes: usize,
    /// min(`tmp_table_size`, `max_heap_table_size`).
    pub table_bytes: usize,
    /// `join_buffer_size`: a hash join's build side in memory.
    pub join_bytes: usize,
    /// Where temporary files go.
    pub dir: PathBuf,
}

fn var_u64(env: &dyn Env, name: &str, default: u64) -> u64 {
    match env.sysvar(name, Scope::Session) {
        Ok(Value::Int(i)) => u64::try_from(i).unwrap_or(default),
        Ok(Value::UInt(u)) => u,
        _ => default,
    }
}

impl Limits {
    pub fn read(env: &dyn Env, datadir: &Path) -> Limits {
        let sort = var_u64(env, "sort_buffer_size", DEFAULT_SORT_BUFFER);
        let tmp = var_u64(env, "tmp_table_size", DEFAULT_TMP_TABLE);
        let heap = var_u64(env, "max_heap_table_size", DEFAULT_TMP_TABLE);
        let join = var_u64(env, "join_buffer_size", DEFAULT_SORT_BUFFER);
        let to_usize = |v: u64| usize::try_from(v).unwrap_or(usize::MAX);
        Limits {
            sort_bytes: to_usize(sort),
            table_bytes: to_usize(tmp.min(heap)),
            join_bytes: to_usize(join),
            dir: quire_engine::tmpdir(datadir),
        }
    }
}

/// Bytes one value is counted for beyond its slot.
fn heap_bytes(v: &Value) -> usize {
    match v {
        Value::Bytes(b) => b.len(),
        Value::Decimal(_) => 40,
        _ => 0,
    }
}

/// Per-row overhead: the row's own vector header and allocation.
const ROW_OVERHEAD: usize = 48;

/// What a row held in memory is counted for.
pub fn row_bytes(row: &[Value]) -> usize {
    ROW_OVERHEAD + std::mem::size_of_val(row) + row.iter().map(heap_bytes).sum::<usize>()
}

// ------------------------------------------------------------ variables

/// MySQL's range of a numeric session variable clamped on SET: (min,
/// max, block size). The memory variables, and `cte_max_recursion_depth`
/// (read by the recursive CTE operator) which MySQL clamps the same way.
fn var_range(name: &str) -> Option<(u64, u64, u64)> {
    Some(match name {
        "cte_max_recursion_depth" => (0, 4_294_967_295, 1),
        "sort_buffer_size" => (32_768, u64::MAX, 1),
        "join_buffer_size" => (128, 18_446_744_073_709_547_520, 128),
        "tmp_table_size" => (1024, u64::MAX, 1),
        "max_heap_table_size" => (16_384, 1_844_674_407_370_954_752, 1024),
        _ => return None,
    })
}

/// `SET [SESSION] name = text` of a memory variable: the value stored
/// (clamped into MySQL's range and rounded down to its block size, with
/// warning 1292 as MySQL gives), or None when `name` is not one of
/// them. A value that is not a number is error 1232.
pub fn normalise_var(name: &str, text: &str) -> Option<SqlResult<(String, Option<String>)>> {
    let (min, max, block) = var_range(name)?;
    let t = text.trim();
    if t.eq_ignore_ascii_case("DEFAULT") {
        let d = if name == "cte_max_recursion_depth" {
            1000
        } else if name == "sort_buffer_size" || name == "join_buffer_size" {
            DEFAULT_SORT_BUFFER
        } else {
            DEFAULT_TMP_TABLE
        };
        return Some(Ok((d.to_string(), None)));
    }
    let v: u64 = match t.parse::<u64>() {
        Ok(v) => v,
        Err(_) if t.parse::<i64>().is_ok() => 0,
        Err(_) => {
            return Some(Err(EngineError::new(
                1232,
                "42000",
                format!("Incorrect argument type to variable '{name}'"),
            )))
        }
    };
    let clamped = (v.clamp(min, max) / block) * block;
    let warning =
        (clamped.to_string() != t).then(|| format!("Truncated incorrect {name} value: '{t}'"));
    Some(Ok((clamped.to_string(), warning)))
}

// ---------------------------------------------------------------- stats

static TMP_FILES: AtomicU64 = AtomicU64::new(0);
static DISK_TABLES: AtomicU64 = AtomicU64::new(0);
static MERGE_PASSES: AtomicU64 = AtomicU64::new(0);

pub(crate) mod stats {
    use super::*;

    pub fn file_created() {
        TMP_FILES.fetch_add(1, Ordering::Relaxed);
    }
    pub fn disk_table() {
        DISK_TABLES.fetch_add(1, Ordering::Relaxed);
    }
    pub fn merge_pass() {
        MERGE_PASSES.fetch_add(1, Ordering::Relaxed);
    }
}

/// The counters for SHOW STATUS.
pub fn status_rows() -> Vec<(String, String)> {
    [
        ("Created_tmp_files", &TMP_FILES),
        ("Created_tmp_disk_tables", &DISK_TABLES),
        ("Sort_merge_passes", &MERGE_PASSES),
    ]
    .into_iter()
    .map(|(k, a)| (k.to_string(), a.load(Ordering::Relaxed).to_string()))
    .collect()
}

/// Error 1114, for a hash table that still does not fit after being
/// partitioned [`hash::MAX_LEVEL`] times.
pub fn table_full(dir: &Path) -> EngineError {
    EngineError::new(
        1114,
        "HY000",
        format!("The table '{}/#sql_spill' is full", dir.display()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_variables_clamp_like_mysql() {
        let n = |name: &str, t: &str| normalise_var(name, t).expect("known").expect("ok");
        assert_eq!(
            n("sort_buffer_size", "1"),
            (
                "32768".into(),
                Some("Truncated incorrect sort_buffer_size value: '1'".into())
            )
        );
        assert_eq!(n("sort_buffer_size", "40000"), ("40000".into(), None));
        assert_eq!(n("max_heap_table_size", "20000").0, "19456");
        assert_eq!(n("tmp_table_size", "-5").0, "1024");
        assert_eq!(n("tmp_table_size", "DEFAULT"), ("16777216".into(), None));
        assert_eq!(
            normalise_var("sort_buffer_size", "abc").map(|r| r.map_err(|e| e.code)),
            Some(Err(1232))
        );
        assert!(normalise_var("wait_timeout", "1").is_none());
    }
}
