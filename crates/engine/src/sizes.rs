//! # Table sizes for information_schema and SHOW TABLE STATUS
//!
//! MySQL reports a table's `DATA_LENGTH` (the clustered index) and
//! `INDEX_LENGTH` (the secondary indexes) as pages × page size. quire
//! answers the same question from its B+trees: [`Engine::table_pages`]
//! counts the leaf pages of the table's clustered tree and of each
//! secondary tree, exactly, by walking the internal levels (the same walk
//! ANALYZE makes, `Tree::sample_leaves`, here asked for a single sampled
//! leaf). Internal pages are not counted (about one page in a hundred);
//! InnoDB counts every page its index segments allocated, so its figures
//! are a little larger for the same rows. The walk reads every internal
//! page under the index latch held shared: a few pages per thousand
//! leaves, never the leaves themselves.
//!
//! Read-only: nothing here changes a page, a counter or the catalog.

use crate::catalog::TableDef;
use crate::engine::Engine;
use crate::error::Result;

/// Leaf pages of one table's trees.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TablePages {
    /// Leaf pages of the clustered tree (the rows).
    pub data: u64,
    /// Leaf pages of all secondary index trees together.
    pub index: u64,
}

impl Engine {
    /// Counts the leaf pages of table `t`'s trees (see the module text).
    /// Error 1146 if the table was dropped meanwhile (its trees are gone).
    pub fn table_pages(&self, t: &TableDef) -> Result<TablePages> {
        let leaves = |name: String| -> Result<u64> {
            Ok(self.inner.tree(&name)?.sample_leaves(1)?.leaf_pages)
        };
        let data = leaves(t.clustered_tree())?;
        let mut index = 0;
        for i in &t.indexes {
            index += leaves(t.index_tree(i.id))?;
        }
        Ok(TablePages { data, index })
    }
}
