//! Helpers of the binlog tests: one table `d.t (id INT PRIMARY KEY)`,
//! single-row commits, and its row count.

use std::sync::Arc;

use crate::catalog::ColumnDef;
use crate::engine::Engine;
use crate::error::Result;
use crate::txn::{Isolation, Scan};
use crate::types::{ColumnType, Value};
use crate::TableDef;

/// Creates `d.t (id INT PRIMARY KEY)`.
pub(crate) fn int_table(e: &Engine) -> Arc<TableDef> {
    e.create_database("d", true).expect("db");
    e.create_table(
        "d",
        "t",
        vec![ColumnDef::new(
            "id",
            ColumnType::Int { unsigned: false },
            false,
        )],
        vec![0],
        vec![],
        false,
    )
    .expect("table")
}

/// Commits one row `id` in its own transaction.
pub(crate) fn commit_id(e: &Engine, t: &TableDef, id: i64) -> Result<()> {
    let mut tx = e.begin(Isolation::RepeatableRead, false);
    tx.insert(t, vec![Some(Value::Int(id))])?;
    tx.commit().map(|_| ())
}

/// Rows of `d.t`.
pub(crate) fn count_rows(e: &Engine) -> usize {
    let t = e.table("d", "t").expect("t");
    let mut tx = e.begin(Isolation::RepeatableRead, true);
    tx.scan(&t, &Scan::default()).expect("scan").len()
}
