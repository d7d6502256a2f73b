//! # Catalog: databases, tables, columns, indexes
//!
//! The catalog lives in a B+tree of its own (`quire:catalog`) in the system
//! tablespace, so every DDL change is one mini-transaction: after a crash
//! the catalog holds the old definition or the new one, never half of it.
//!
//! ```text
//!  key                      value
//!  "D" db-name              (empty)                 a database
//!  "T" table-id u32 BE      TableDef (binary)       a table and its indexes
//!  "N"                      next table id u32 LE
//!  "V" db 0x00 view         ViewDef (binary)        a view (`view.rs`)
//! ```
//!
//! A table's rows live in its *clustered* tree (`t<id>.0`), keyed by the
//! memcomparable primary key (or a hidden 8-byte row id when the table has
//! no primary key, as InnoDB's DB_ROW_ID). Each secondary index has a tree
//! `t<id>.<index-id>` whose keys are `index columns ++ primary key` (so a
//! key is unique in the tree even while old versions linger) and whose
//! values are the primary key bytes.
//!
//! The table definition's binary form starts with a format byte: 1 is the
//! original layout; 2 adds, after each column's fixed default, one flags
//! byte (bit 0 `DEFAULT CURRENT_TIMESTAMP`, bit 1 `ON UPDATE
//! CURRENT_TIMESTAMP`) followed by the fsp byte of each flag set. A
//! definition without either clause is still written as format 1, so
//! existing data directories and their binlog-free catalogs are unchanged
//! and both formats are read. 3 is format 2 followed by the table's CHECK
//! constraints and FOREIGN KEYs (`constraint.rs`), written only when the
//! table has one. 4 is format 3 followed by the table's `rebuilt_csn`
//! (u64 LE), written only for a table a copying ALTER TABLE rebuilt
//! (`rebuild.rs`). 5 is format 4 followed by the columns added instantly
//! (u32 count, then per column its position u32 and its value as a
//! one-column row image), written only while the table has one. 6 is
//! format 5 followed by the columns' SQL-level extras (u32 count, then per
//! column its position u32, a flags byte — bit 0 generated, bit 1 STORED,
//! bit 2 a DEFAULT expression, bit 3 a COMMENT — and the strings the flags
//! announce, in that order), written only while a column has one: a
//! generated column's expression (`GENERATED ALWAYS AS (expr)`), a
//! parenthesised DEFAULT expression (MySQL 8.0.13) and a column COMMENT.
//! The SQL layer (`sql/src/generated.rs`) validates, prints and evaluates
//! the expressions; the engine only keeps their text and prints it. 8 is
//! format 7 followed by the indexes' column prefix lengths (`KEY (c(10))`:
//! u32 count, then per index with a prefix its position among the indexes
//! u32 and one u32 per key part, 0 = the whole column), written only while
//! an index has one; older formats read as indexes of whole columns.
//!
//! Creating a table creates its trees first (each its own mini-transaction)
//! and then writes the catalog entry: a crash in between leaves empty trees
//! nobody references, never a table without its trees.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::constraint::{CheckDef, ForeignKeyDef};
use crate::error::{EngineError, Result};
use crate::types::{Collation, ColumnType, Value};

/// A generated column's definition: `GENERATED ALWAYS AS (expr)
/// [VIRTUAL|STORED]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Generated {
    /// The expression as MySQL prints it (identifiers back-quoted,
    /// operators parenthesised): what SHOW CREATE TABLE puts between
    /// `AS (` and `)` and information_schema's GENERATION_EXPRESSION.
    pub expr: String,
    /// STORED; otherwise VIRTUAL. quire keeps the value of a VIRTUAL
    /// column in the row too (reads are the same; see generated.rs).
    pub stored: bool,
}

/// One column.
#[derive(Debug, Clone, PartialEq)]
pub struct ColumnDef {
    pub name: String,
    pub ty: ColumnType,
    pub nullable: bool,
    /// `None`: no DEFAULT clause. `Some(Value::Null)`: DEFAULT NULL.
    pub default: Option<Value>,
    pub auto_increment: bool,
    /// `DEFAULT CURRENT_TIMESTAMP[(fsp)]` (DATETIME/TIMESTAMP): the
    /// statement's time, at this many fractional digits.
    pub default_now: Option<u8>,
    /// `ON UPDATE CURRENT_TIMESTAMP[(fsp)]`: set to the statement's time
    /// when an UPDATE changes another column of the row and not this one.
    pub on_update_now: Option<u8>,
    /// Set for a column ALTER TABLE added instantly (at the end, rows not
    /// rewritten): the value rows stored before it read for it.
    pub instant: Option<Value>,
    /// A generated column (`AS (expr)`); its value is computed by the SQL
    /// layer on every write.
    pub generated: Option<Generated>,
    /// `DEFAULT (expr)`: evaluated for each inserted row that gives the
    /// column no value; the text as MySQL prints it, without the outer
    /// parentheses.
    pub default_expr: Option<String>,
    /// `COMMENT '...'` (empty: none).
    pub comment: String,
}

impl ColumnDef {
    /// The column's definition as SHOW CREATE TABLE prints it (name,
    /// type, NULL-ness, default, ON UPDATE, AUTO_INCREMENT).
    pub fn sql(&self) -> String {
        self.sql_in(None)
    }

    /// [`Self::sql`] within a table of default collation `table`: as MySQL
    /// 8.0, `CHARACTER SET` when the column's collation is not the table's,
    /// `COLLATE` when it is not its character set's default. None (ALTER
    /// statements in the binlog): both, always, so a replica gets exactly
    /// this collation whatever its table's default.
    pub fn sql_in(&self, table: Option<Collation>) -> String {
        let c = self;
        let mut d = format!("`{}` {}", c.name, c.ty.name());
        if let Some(coll) = c.ty.collation() {
            if table != Some(coll) {
                d.push_str(&format!(" CHARACTER SET {}", coll.charset().name()));
            }
            if table.is_none() || !coll.is_default() {
                d.push_str(&format!(" COLLATE {}", coll.name()));
            }
        }
        if let Some(g) = &c.generated {
            // MySQL: `b` int GENERATED ALWAYS AS ((`a` + 1)) VIRTUAL NOT NULL
            d.push_str(&format!(
                " GENERATED ALWAYS AS ({}) {}",
                g.expr,
                if g.stored { "STORED" } else { "VIRTUAL" }
            ));
            if !c.nullable {
                d.push_str(" NOT NULL");
            }
            if !c.comment.is_empty() {
                d.push_str(&format!(" COMMENT '{}'", quote_comment(&c.comment)));
            }
            return d;
        }
        if !c.nullable {
            d.push_str(" NOT NULL");
        }
        let now = |fsp: u8| match fsp {
            0 => "CURRENT_TIMESTAMP".to_string(),
            n => format!("CURRENT_TIMESTAMP({n})"),
        };
        match &c.default {
            _ if c.default_expr.is_some() => d.push_str(&format!(
                " DEFAULT ({})",
                c.default_expr.as_deref().unwrap_or("")
            )),
            _ if c.default_now.is_some() => {
                d.push_str(&format!(" DEFAULT {}", now(c.default_now.unwrap_or(0))))
            }
            // MySQL 8.0 prints the implicit NULL default of a nullable
            // column too, with TIMESTAMP's NULL attribute, but never
            // for BLOB/TEXT (which had no defaults before 8.0.13).
            Some(Value::Null) | None if c.nullable => match c.ty {
                ColumnType::Blob { .. } | ColumnType::Text { .. } => {}
                ColumnType::Timestamp { .. } => d.push_str(" NULL DEFAULT NULL"),
                _ => d.push_str(" DEFAULT NULL"),
            },
            Some(Value::Null) | None => {}
            // BIT defaults print as bit-value literals.
            Some(Value::UInt(bits)) if matches!(c.ty, ColumnType::Bit { .. }) => {
                d.push_str(&format!(" DEFAULT b'{bits:b}'"))
            }
            Some(v) => {
                let text = v.to_string_mysql(&c.ty);
                if c.ty.is_numeric() {
                    d.push_str(&format!(" DEFAULT '{text}'"));
                } else {
                    d.push_str(&format!(" DEFAULT '{}'", text.replace('\'', "''")));
                }
            }
        }
        if let Some(fsp) = c.on_update_now {
            d.push_str(&format!(" ON UPDATE {}", now(fsp)));
        }
        if c.auto_increment {
            d.push_str(" AUTO_INCREMENT");
        }
        if !c.comment.is_empty() {
            d.push_str(&format!(" COMMENT '{}'", quote_comment(&c.comment)));
        }
        d
    }

    /// Whether the column has any of format 6's extras.
    fn has_extras(&self) -> bool {
        self.generated.is_some() || self.default_expr.is_some() || !self.comment.is_empty()
    }

    /// A column without DEFAULT clause or AUTO_INCREMENT.
    pub fn new(name: &str, ty: ColumnType, nullable: bool) -> ColumnDef {
        ColumnDef {
            name: name.into(),
            ty,
            nullable,
            default: None,
            auto_increment: false,
            default_now: None,
            on_update_now: None,
            instant: None,
            generated: None,
            default_expr: None,
            comment: String::new(),
        }
    }
}

/// Whether expression text kept in the catalog (identifiers back-quoted:
/// a generated column's or a DEFAULT expression) names column `col`.
pub fn expr_names_column(expr: &str, col: &str) -> bool {
    let quoted = format!("`{}`", col.replace('`', "``")).to_ascii_lowercase();
    expr.to_ascii_lowercase().contains(&quoted)
}

/// 3108 ER_DEPENDENT_BY_GENERATED_COLUMN: a column a generated column
/// reads cannot be dropped or renamed.
pub fn generated_dependency(col: &str) -> EngineError {
    EngineError::new(
        3108,
        "HY000",
        format!("Column '{col}' has a generated column dependency."),
    )
}

/// 3766 ER_DEPENDENT_BY_DEFAULT_GENERATED_VALUE.
pub fn default_expr_dependency(col: &str, table: &str) -> EngineError {
    EngineError::new(
        3766,
        "HY000",
        format!("Column '{col}' of table '{table}' has a default value expression dependency and cannot be dropped or renamed."),
    )
}

/// A COMMENT as SHOW CREATE TABLE quotes it: MySQL doubles `'` and
/// escapes backslashes and control characters.
fn quote_comment(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '\\' => o.push_str("\\\\"),
            '\'' => o.push_str("''"),
            '\n' => o.push_str("\\n"),
            '\r' => o.push_str("\\r"),
            '\0' => o.push_str("\\0"),
            '\x1a' => o.push_str("\\Z"),
            c => o.push(c),
        }
    }
    o
}

/// A secondary index.
#[derive(Debug, Clone, PartialEq)]
pub struct IndexDef {
    pub id: u32,
    pub name: String,
    pub unique: bool,
    /// Positions in `TableDef::columns`.
    pub columns: Vec<usize>,
    /// Snapshots older than this commit sequence cannot use the index
    /// (MySQL error 1412), since it holds no entries for older versions.
    pub created_csn: u64,
    /// Column prefix lengths per key part (`KEY (c(10))`): characters for
    /// a character column, bytes for a binary one; None = the whole
    /// column. Empty when no part has one (kept so: [`IndexDef::new`]
    /// and the catalog decoder normalize), so indexes without prefixes
    /// compare and encode as before.
    pub prefix: Vec<Option<u32>>,
}

impl IndexDef {
    /// An index over whole columns.
    pub fn new(id: u32, name: impl Into<String>, unique: bool, columns: Vec<usize>) -> IndexDef {
        IndexDef {
            id,
            name: name.into(),
            unique,
            columns,
            created_csn: 0,
            prefix: Vec::new(),
        }
    }

    /// `prefix` in its normal form: empty when no part has a length.
    pub fn normal_prefix(prefix: Vec<Option<u32>>) -> Vec<Option<u32>> {
        if prefix.iter().all(Option::is_none) {
            Vec::new()
        } else {
            prefix
        }
    }

    /// The prefix length of key part `part` (None: the whole column).
    pub fn prefix_len(&self, part: usize) -> Option<u32> {
        self.prefix.get(part).copied().flatten()
    }

    /// Whether any key part is a column prefix. Such an index is never
    /// covering and gives no order from its first prefix part on.
    pub fn has_prefix(&self) -> bool {
        self.prefix.iter().any(Option::is_some)
    }

    /// The leading key columns whose order the index gives: all of them,
    /// or those before the first prefix part (a prefix key orders rows
    /// by their first N characters only).
    pub fn ordered_columns(&self) -> &[usize] {
        let n = (0..self.columns.len())
            .find(|&p| self.prefix_len(p).is_some())
            .unwrap_or(self.columns.len());
        &self.columns[..n]
    }

    /// The key part values of `row` (a whole row of `t`): each indexed
    /// column's value, cut to its prefix length.
    pub fn key_values(&self, t: &TableDef, row: &[Value]) -> Vec<Value> {
        self.columns
            .iter()
            .enumerate()
            .map(|(p, &c)| {
                let v = &row[c];
                match self.prefix_len(p) {
                    Some(n) => crate::types::key_prefix(v, &t.columns[c].ty, n),
                    None => v.clone(),
                }
            })
            .collect()
    }

    /// How SHOW CREATE TABLE lists the key parts: `` `c`(10),`d` ``.
    pub fn parts_sql(&self, t: &TableDef) -> String {
        self.columns
            .iter()
            .enumerate()
            .map(|(p, &c)| match self.prefix_len(p) {
                Some(n) => format!("`{}`({n})", t.columns[c].name),
                None => format!("`{}`", t.columns[c].name),
            })
            .collect::<Vec<_>>()
            .join(",")
    }
}

/// A table.
#[derive(Debug, Clone)]
pub struct TableDef {
    pub id: u32,
    pub db: String,
    pub name: String,
    pub columns: Vec<ColumnDef>,
    /// Primary key column positions; empty = hidden row id.
    pub primary: Vec<usize>,
    pub indexes: Vec<IndexDef>,
    /// CHECK constraints, in definition order.
    pub checks: Vec<CheckDef>,
    /// FOREIGN KEYs this table declares (it is the child).
    pub foreign_keys: Vec<ForeignKeyDef>,
    /// Snapshots older than this commit sequence cannot read the table
    /// (1412): a copying ALTER TABLE (`rebuild.rs`) filled it with the
    /// latest rows only. 0 for a table never rebuilt.
    pub rebuilt_csn: u64,
    /// An index CREATE INDEX is filling while the table's writers go on
    /// (`Engine::create_index`): commits and purge maintain it, readers
    /// never see it, and it is not written to the catalog (a crash
    /// leaves its tree to the orphan sweep). Not part of equality: a
    /// writer that read the definition before the build started writes
    /// rows the build then indexes, so it need not re-prepare.
    pub building: Option<IndexDef>,
    /// The table's default collation (`DEFAULT CHARSET=… COLLATE=…`): what
    /// a column added without one gets. Tables made before collations
    /// existed have [`ColumnType::LEGACY_COLLATION`].
    pub collation: Collation,
    /// A session's temporary table (temp_table.rs): never in the catalog
    /// tree nor the name map, never in the binary log.
    pub temporary: bool,
}

impl PartialEq for TableDef {
    fn eq(&self, o: &Self) -> bool {
        let TableDef {
            id,
            db,
            name,
            columns,
            primary,
            indexes,
            checks,
            foreign_keys,
            rebuilt_csn,
            building: _,
            collation,
            temporary,
        } = self;
        *id == o.id
            && *db == o.db
            && *name == o.name
            && *columns == o.columns
            && *primary == o.primary
            && *indexes == o.indexes
            && *checks == o.checks
            && *foreign_keys == o.foreign_keys
            && *rebuilt_csn == o.rebuilt_csn
            && *collation == o.collation
            && *temporary == o.temporary
    }
}

impl TableDef {
    /// The indexes commits and purge keep up to date: the readable ones
    /// and the one being built.
    pub fn maintained_indexes(&self) -> impl Iterator<Item = &IndexDef> {
        self.indexes.iter().chain(self.building.as_ref())
    }
    pub fn clustered_tree(&self) -> String {
        format!("t{}.0", self.id)
    }
    pub fn index_tree(&self, index_id: u32) -> String {
        format!("t{}.{}", self.id, index_id)
    }
    pub fn column(&self, name: &str) -> Option<usize> {
        self.columns
            .iter()
            .position(|c| c.name.eq_ignore_ascii_case(name))
    }
    pub fn index(&self, name: &str) -> Option<&IndexDef> {
        self.indexes
            .iter()
            .find(|i| i.name.eq_ignore_ascii_case(name))
    }
    pub fn has_hidden_pk(&self) -> bool {
        self.primary.is_empty()
    }
    pub fn auto_increment_column(&self) -> Option<usize> {
        self.columns.iter().position(|c| c.auto_increment)
    }
    pub fn types(&self) -> Vec<ColumnType> {
        self.columns.iter().map(|c| c.ty.clone()).collect()
    }
    pub fn pk_types(&self) -> Vec<ColumnType> {
        self.primary
            .iter()
            .map(|&i| self.columns[i].ty.clone())
            .collect()
    }
    /// Whether any column is generated.
    pub fn has_generated(&self) -> bool {
        self.columns.iter().any(|c| c.generated.is_some())
    }

    /// 3108 / 3766 when another column's generated or DEFAULT expression
    /// reads column `col` (before a DROP or RENAME of it); `except`: a
    /// column that goes away too (its own expression does not count).
    pub fn column_unused_by_expressions(&self, col: &str, except: &[&str]) -> Result<()> {
        for c in &self.columns {
            if c.name.eq_ignore_ascii_case(col)
                || except.iter().any(|e| c.name.eq_ignore_ascii_case(e))
            {
                continue;
            }
            if c.generated
                .as_ref()
                .is_some_and(|g| expr_names_column(&g.expr, col))
            {
                return Err(generated_dependency(col));
            }
            if c.default_expr
                .as_deref()
                .is_some_and(|e| expr_names_column(e, col))
            {
                return Err(default_expr_dependency(col, &self.name));
            }
        }
        Ok(())
    }

    pub fn qualified(&self) -> String {
        format!("{}.{}", self.db, self.name)
    }

    /// `SHOW CREATE TABLE` text (also the DDL written to the binlog).
    pub fn create_sql(&self) -> String {
        self.create_sql_with(None)
    }

    /// [`Self::create_sql`] with MySQL's `AUTO_INCREMENT=n` table option
    /// (the next value) when `next_autoinc` is above 1.
    pub fn create_sql_with(&self, next_autoinc: Option<u64>) -> String {
        let mut parts: Vec<String> = Vec::new();
        for c in &self.columns {
            parts.push(format!("  {}", c.sql_in(Some(self.collation))));
        }
        let cols = |cs: &[usize]| {
            cs.iter()
                .map(|&i| format!("`{}`", self.columns[i].name))
                .collect::<Vec<_>>()
                .join(",")
        };
        if !self.primary.is_empty() {
            parts.push(format!("  PRIMARY KEY ({})", cols(&self.primary)));
        }
        for i in &self.indexes {
            parts.push(format!(
                "  {}KEY `{}` ({})",
                if i.unique { "UNIQUE " } else { "" },
                i.name,
                i.parts_sql(self)
            ));
        }
        // MySQL 8.0 lists foreign keys after the keys, then CHECKs.
        let names: Vec<String> = self.columns.iter().map(|c| c.name.clone()).collect();
        for f in &self.foreign_keys {
            parts.push(format!("  {}", f.sql(&self.db, &names, ",")));
        }
        for c in &self.checks {
            parts.push(format!("  {}", crate::constraint::check_sql(c)));
        }
        let autoinc = match next_autoinc {
            Some(n) if n > 1 => format!(" AUTO_INCREMENT={n}"),
            _ => String::new(),
        };
        format!(
            "CREATE {}TABLE `{}` (\n{}\n) ENGINE=InnoDB{autoinc} {}",
            if self.temporary { "TEMPORARY " } else { "" },
            self.name,
            parts.join(",\n"),
            table_charset_sql(self.collation)
        )
    }

    pub fn encode(&self) -> Vec<u8> {
        let mut w = Vec::new();
        let v8 = self.indexes.iter().any(IndexDef::has_prefix);
        let v7 = v8 || self.collation != ColumnType::LEGACY_COLLATION;
        let v6 = v7 || self.columns.iter().any(ColumnDef::has_extras);
        let v5 = v6 || self.columns.iter().any(|c| c.instant.is_some());
        let v4 = v5 || self.rebuilt_csn != 0;
        let v3 = v4 || !self.checks.is_empty() || !self.foreign_keys.is_empty();
        let v2 = v3
            || self
                .columns
                .iter()
                .any(|c| c.default_now.is_some() || c.on_update_now.is_some());
        w.push(if v8 {
            8u8
        } else if v7 {
            7u8
        } else if v6 {
            6u8
        } else if v5 {
            5u8
        } else if v4 {
            4u8
        } else if v3 {
            3u8
        } else if v2 {
            2u8
        } else {
            1u8
        }); // format version
        put_u32(&mut w, self.id);
        put_str(&mut w, &self.db);
        put_str(&mut w, &self.name);
        put_u32(&mut w, self.columns.len() as u32);
        for c in &self.columns {
            put_str(&mut w, &c.name);
            c.ty.encode(&mut w);
            w.push(c.nullable as u8);
            w.push(c.auto_increment as u8);
            match &c.default {
                None => w.push(0),
                Some(v) => {
                    w.push(1);
                    let mut b = Vec::new();
                    crate::types::encode_row(
                        std::slice::from_ref(v),
                        std::slice::from_ref(&c.ty),
                        &mut b,
                    );
                    put_bytes(&mut w, &b);
                }
            }
            if v2 {
                let flags =
                    u8::from(c.default_now.is_some()) | (u8::from(c.on_update_now.is_some()) << 1);
                w.push(flags);
                w.extend(c.default_now);
                w.extend(c.on_update_now);
            }
        }
        put_u32(&mut w, self.primary.len() as u32);
        for &p in &self.primary {
            put_u32(&mut w, p as u32);
        }
        put_u32(&mut w, self.indexes.len() as u32);
        for i in &self.indexes {
            put_u32(&mut w, i.id);
            put_str(&mut w, &i.name);
            w.push(i.unique as u8);
            put_u64(&mut w, i.created_csn);
            put_u32(&mut w, i.columns.len() as u32);
            for &c in &i.columns {
                put_u32(&mut w, c as u32);
            }
        }
        if v3 {
            crate::constraint::encode(&self.checks, &self.foreign_keys, &mut w);
        }
        if v4 {
            put_u64(&mut w, self.rebuilt_csn);
        }
        if v5 {
            let instant: Vec<(usize, &ColumnDef)> = self
                .columns
                .iter()
                .enumerate()
                .filter(|(_, c)| c.instant.is_some())
                .collect();
            put_u32(&mut w, instant.len() as u32);
            for (i, c) in instant {
                put_u32(&mut w, i as u32);
                let mut b = Vec::new();
                let v = c.instant.clone().unwrap_or(Value::Null);
                crate::types::encode_row(
                    std::slice::from_ref(&v),
                    std::slice::from_ref(&c.ty),
                    &mut b,
                );
                put_bytes(&mut w, &b);
            }
        }
        if v6 {
            let extra: Vec<(usize, &ColumnDef)> = self
                .columns
                .iter()
                .enumerate()
                .filter(|(_, c)| c.has_extras())
                .collect();
            put_u32(&mut w, extra.len() as u32);
            for (i, c) in extra {
                put_u32(&mut w, i as u32);
                let flags = u8::from(c.generated.is_some())
                    | (u8::from(c.generated.as_ref().is_some_and(|g| g.stored)) << 1)
                    | (u8::from(c.default_expr.is_some()) << 2)
                    | (u8::from(!c.comment.is_empty()) << 3);
                w.push(flags);
                if let Some(g) = &c.generated {
                    put_str(&mut w, &g.expr);
                }
                if let Some(e) = &c.default_expr {
                    put_str(&mut w, e);
                }
                if !c.comment.is_empty() {
                    put_str(&mut w, &c.comment);
                }
            }
        }
        if v7 {
            w.extend_from_slice(&self.collation.id().to_le_bytes());
        }
        if v8 {
            let prefixed: Vec<(usize, &IndexDef)> = self
                .indexes
                .iter()
                .enumerate()
                .filter(|(_, i)| i.has_prefix())
                .collect();
            put_u32(&mut w, prefixed.len() as u32);
            for (n, i) in prefixed {
                put_u32(&mut w, n as u32);
                for p in 0..i.columns.len() {
                    put_u32(&mut w, i.prefix_len(p).unwrap_or(0));
                }
            }
        }
        w
    }

    pub fn decode(b: &[u8]) -> std::result::Result<TableDef, String> {
        let mut r = b;
        let ver = take(&mut r, 1)?[0];
        if !(1..=8).contains(&ver) {
            return Err(format!("unknown table definition format {ver}"));
        }
        let id = get_u32(&mut r)?;
        let db = get_str(&mut r)?;
        let name = get_str(&mut r)?;
        let n = get_u32(&mut r)? as usize;
        let mut columns = Vec::with_capacity(n.min(4096));
        for _ in 0..n {
            let cname = get_str(&mut r)?;
            let ty = ColumnType::decode(&mut r)?;
            let nullable = take(&mut r, 1)?[0] != 0;
            let auto_increment = take(&mut r, 1)?[0] != 0;
            let default = match take(&mut r, 1)?[0] {
                0 => None,
                _ => {
                    let bytes = get_bytes(&mut r)?;
                    let mut v = crate::types::decode_row(&bytes, std::slice::from_ref(&ty))?;
                    Some(v.pop().ok_or("empty default")?)
                }
            };
            let (mut default_now, mut on_update_now) = (None, None);
            if ver >= 2 {
                let flags = take(&mut r, 1)?[0];
                if flags & 1 != 0 {
                    default_now = Some(take(&mut r, 1)?[0]);
                }
                if flags & 2 != 0 {
                    on_update_now = Some(take(&mut r, 1)?[0]);
                }
            }
            columns.push(ColumnDef {
                name: cname,
                ty,
                nullable,
                default,
                auto_increment,
                default_now,
                on_update_now,
                instant: None,
                generated: None,
                default_expr: None,
                comment: String::new(),
            });
        }
        let np = get_u32(&mut r)? as usize;
        let mut primary = Vec::new();
        for _ in 0..np {
            let p = get_u32(&mut r)? as usize;
            if p >= columns.len() {
                return Err("primary key column out of range".into());
            }
            primary.push(p);
        }
        let ni = get_u32(&mut r)? as usize;
        let mut indexes = Vec::new();
        for _ in 0..ni {
            let iid = get_u32(&mut r)?;
            let iname = get_str(&mut r)?;
            let unique = take(&mut r, 1)?[0] != 0;
            let created_csn = get_u64(&mut r)?;
            let nc = get_u32(&mut r)? as usize;
            let mut cols = Vec::new();
            for _ in 0..nc {
                let c = get_u32(&mut r)? as usize;
                if c >= columns.len() {
                    return Err("index column out of range".into());
                }
                cols.push(c);
            }
            indexes.push(IndexDef {
                id: iid,
                name: iname,
                unique,
                columns: cols,
                created_csn,
                prefix: Vec::new(),
            });
        }
        let (checks, foreign_keys) = if ver >= 3 {
            crate::constraint::decode(&mut r, columns.len())?
        } else {
            (Vec::new(), Vec::new())
        };
        let rebuilt_csn = if ver >= 4 { get_u64(&mut r)? } else { 0 };
        if ver >= 5 {
            let n = get_u32(&mut r)? as usize;
            for _ in 0..n {
                let i = get_u32(&mut r)? as usize;
                let bytes = get_bytes(&mut r)?;
                let c = columns.get_mut(i).ok_or("instant column out of range")?;
                let mut v = crate::types::decode_row(&bytes, std::slice::from_ref(&c.ty))?;
                c.instant = Some(v.pop().ok_or("empty instant value")?);
            }
        }
        if ver >= 6 {
            let n = get_u32(&mut r)? as usize;
            for _ in 0..n {
                let i = get_u32(&mut r)? as usize;
                let flags = take(&mut r, 1)?[0];
                if flags & !0x0f != 0 {
                    return Err(format!("unknown column flags {flags:#x}"));
                }
                let c = columns.get_mut(i).ok_or("column extras out of range")?;
                if flags & 1 != 0 {
                    c.generated = Some(Generated {
                        expr: get_str(&mut r)?,
                        stored: flags & 2 != 0,
                    });
                }
                if flags & 4 != 0 {
                    c.default_expr = Some(get_str(&mut r)?);
                }
                if flags & 8 != 0 {
                    c.comment = get_str(&mut r)?;
                }
            }
        }
        let collation = if ver >= 7 {
            let b = take(&mut r, 2)?;
            let id = u16::from_le_bytes([b[0], b[1]]);
            Collation::by_id(id).ok_or_else(|| format!("unknown collation id {id}"))?
        } else {
            ColumnType::LEGACY_COLLATION
        };
        if ver >= 8 {
            let n = get_u32(&mut r)? as usize;
            for _ in 0..n {
                let at = get_u32(&mut r)? as usize;
                let ix = indexes.get_mut(at).ok_or("prefixed index out of range")?;
                let mut prefix = Vec::with_capacity(ix.columns.len());
                for _ in 0..ix.columns.len() {
                    let len = get_u32(&mut r)?;
                    prefix.push((len != 0).then_some(len));
                }
                ix.prefix = IndexDef::normal_prefix(prefix);
            }
        }
        Ok(TableDef {
            id,
            db,
            name,
            columns,
            primary,
            indexes,
            checks,
            foreign_keys,
            rebuilt_csn,
            building: None,
            collation,
            temporary: false,
        })
    }
}

/// SHOW CREATE TABLE's `DEFAULT CHARSET=cs [COLLATE=c]`: MySQL 8.0 names
/// the collation when it is not the character set's default, and always
/// for utf8mb4_0900_ai_ci.
pub fn table_charset_sql(coll: Collation) -> String {
    let mut s = format!("DEFAULT CHARSET={}", coll.charset().name());
    if !coll.is_default() || coll == Collation::Utf8mb4_0900AiCi {
        s.push_str(&format!(" COLLATE={}", coll.name()));
    }
    s
}

fn put_u32(w: &mut Vec<u8>, v: u32) {
    w.extend_from_slice(&v.to_le_bytes());
}
fn put_u64(w: &mut Vec<u8>, v: u64) {
    w.extend_from_slice(&v.to_le_bytes());
}
fn put_bytes(w: &mut Vec<u8>, b: &[u8]) {
    put_u32(w, b.len() as u32);
    w.extend_from_slice(b);
}
fn put_str(w: &mut Vec<u8>, s: &str) {
    put_bytes(w, s.as_bytes());
}
fn take<'a>(r: &mut &'a [u8], n: usize) -> std::result::Result<&'a [u8], String> {
    if r.len() < n {
        return Err("truncated table definition".into());
    }
    let (a, b) = r.split_at(n);
    *r = b;
    Ok(a)
}
fn get_u32(r: &mut &[u8]) -> std::result::Result<u32, String> {
    Ok(u32::from_le_bytes(
        take(r, 4)?.try_into().map_err(|_| "u32")?,
    ))
}
fn get_u64(r: &mut &[u8]) -> std::result::Result<u64, String> {
    Ok(u64::from_le_bytes(
        take(r, 8)?.try_into().map_err(|_| "u64")?,
    ))
}
fn get_bytes(r: &mut &[u8]) -> std::result::Result<Vec<u8>, String> {
    let n = get_u32(r)? as usize;
    Ok(take(r, n)?.to_vec())
}
fn get_str(r: &mut &[u8]) -> std::result::Result<String, String> {
    String::from_utf8(get_bytes(r)?).map_err(|_| "name is not UTF-8".to_string())
}

/// The in-memory catalog (the tree is the durable copy).
#[derive(Debug, Default, Clone)]
pub struct Catalog {
    /// Lower-cased name -> the database's default collation (None: made
    /// before databases had one; new tables then take the server's).
    pub databases: BTreeMap<String, Option<crate::types::Collation>>,
    /// (db, table) lower-cased -> definition.
    pub tables: BTreeMap<(String, String), Arc<TableDef>>,
    pub by_id: BTreeMap<u32, Arc<TableDef>>,
    pub next_table_id: u32,
    /// (db, view) lower-cased -> definition (`view.rs`).
    pub views: BTreeMap<(String, String), Arc<crate::view::ViewDef>>,
}

impl Catalog {
    pub fn key(db: &str, table: &str) -> (String, String) {
        (db.to_ascii_lowercase(), table.to_ascii_lowercase())
    }
    pub fn has_db(&self, db: &str) -> bool {
        self.databases.contains_key(&db.to_ascii_lowercase())
    }
    pub fn table(&self, db: &str, table: &str) -> Result<Arc<TableDef>> {
        if !self.has_db(db) {
            return Err(EngineError::unknown_database(db));
        }
        self.tables
            .get(&Catalog::key(db, table))
            .cloned()
            .ok_or_else(|| {
                EngineError::new(1146, "42S02", format!("Table '{db}.{table}' doesn't exist"))
            })
    }
    /// Every foreign key naming `db.table` as its parent: (child, index
    /// into the child's `foreign_keys`).
    pub fn children_of(&self, db: &str, table: &str) -> Vec<(Arc<TableDef>, usize)> {
        let mut out = Vec::new();
        for t in self.by_id.values() {
            for (k, fk) in t.foreign_keys.iter().enumerate() {
                if fk.references(db, table) {
                    out.push((t.clone(), k));
                }
            }
        }
        out
    }
    /// Whether any foreign key names `db.table` as its parent.
    pub fn is_referenced(&self, db: &str, table: &str) -> bool {
        self.by_id
            .values()
            .any(|t| t.foreign_keys.iter().any(|fk| fk.references(db, table)))
    }
    pub fn insert(&mut self, t: Arc<TableDef>) {
        self.tables.insert(Catalog::key(&t.db, &t.name), t.clone());
        self.by_id.insert(t.id, t);
    }
}

/// One secondary index of a CREATE TABLE.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct IndexSpec {
    pub name: String,
    pub unique: bool,
    /// Column positions.
    pub columns: Vec<usize>,
    /// Per key part, the column prefix length (see [`IndexDef::prefix`];
    /// empty or shorter than `columns`: whole columns).
    pub prefix: Vec<Option<u32>>,
}

impl IndexSpec {
    /// An index over whole columns.
    pub fn whole(name: impl Into<String>, unique: bool, columns: Vec<usize>) -> IndexSpec {
        IndexSpec {
            name: name.into(),
            unique,
            columns,
            prefix: Vec::new(),
        }
    }

    /// The leading columns the index keys whole (see
    /// [`IndexDef::ordered_columns`]).
    pub fn ordered_columns(&self) -> &[usize] {
        let n = (0..self.columns.len())
            .find(|&p| self.prefix.get(p).copied().flatten().is_some())
            .unwrap_or(self.columns.len());
        &self.columns[..n]
    }
}

/// What CREATE TABLE asks for besides the name.
#[derive(Debug, Clone, Default)]
pub struct NewTable {
    pub columns: Vec<ColumnDef>,
    pub primary: Vec<usize>,
    pub indexes: Vec<IndexSpec>,
    /// The `AUTO_INCREMENT=n` table option: the first value handed out.
    pub auto_increment: Option<u64>,
    pub checks: Vec<CheckDef>,
    pub foreign_keys: Vec<ForeignKeyDef>,
    /// The session's foreign_key_checks was 0: keys may name parents that
    /// do not exist yet (fk_ddl.rs).
    pub skip_fk_checks: bool,
    /// The table's default collation; None: [`ColumnType::LEGACY_COLLATION`].
    pub collation: Option<Collation>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn def(now: bool) -> TableDef {
        let mut ts = ColumnDef::new("ts", ColumnType::Timestamp { fsp: 6 }, true);
        if now {
            ts.default_now = Some(6);
            ts.on_update_now = Some(6);
        }
        let mut d = ColumnDef::new("d", ColumnType::DateTime { fsp: 0 }, true);
        if now {
            d.default_now = Some(0);
        }
        TableDef {
            id: 7,
            db: "db".into(),
            name: "t".into(),
            columns: vec![
                ColumnDef::new("id", ColumnType::Int { unsigned: false }, false),
                ts,
                d,
            ],
            primary: vec![0],
            indexes: Vec::new(),
            checks: Vec::new(),
            foreign_keys: Vec::new(),
            rebuilt_csn: 0,
            building: None,
            collation: ColumnType::LEGACY_COLLATION,
            temporary: false,
        }
    }

    /// Definitions without CURRENT_TIMESTAMP clauses keep format 1 (what
    /// existing data directories hold); with them, format 2 round-trips.
    #[test]
    fn format_1_stays_and_format_2_round_trips() {
        let old = def(false);
        let b = old.encode();
        assert_eq!(b[0], 1);
        assert_eq!(TableDef::decode(&b), Ok(old));
        let new = def(true);
        let b = new.encode();
        assert_eq!(b[0], 2);
        let back = TableDef::decode(&b).expect("decode");
        assert_eq!(back, new);
        assert!(
            back.create_sql()
                .contains(" DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6),"),
            "{}",
            back.create_sql()
        );
        assert!(
            back.create_sql().contains("DEFAULT CURRENT_TIMESTAMP,"),
            "{}",
            back.create_sql()
        );
        // A truncated format-2 entry is an error, not a panic.
        assert!(TableDef::decode(&b[..b.len() - 1]).is_err());
        // A rebuilt table keeps its rebuild point (format 4).
        let mut rebuilt = def(false);
        rebuilt.rebuilt_csn = 77;
        let b = rebuilt.encode();
        assert_eq!(b[0], 4);
        assert_eq!(TableDef::decode(&b), Ok(rebuilt.clone()));
        assert!(TableDef::decode(&b[..b.len() - 1]).is_err());
        // Columns added instantly keep their values (format 5).
        rebuilt.columns[0].instant = Some(Value::Int(9));
        rebuilt.columns[2].instant = Some(Value::Null);
        let b = rebuilt.encode();
        assert_eq!(b[0], 5);
        assert_eq!(TableDef::decode(&b), Ok(rebuilt));
        assert!(TableDef::decode(&b[..b.len() - 1]).is_err());
    }

    /// Generated columns, DEFAULT expressions and comments are format 6;
    /// a definition without them keeps its older format byte for byte.
    #[test]
    fn format_6_round_trips_and_older_formats_stay() {
        let plain = def(false);
        let before = plain.encode();
        assert_eq!(before[0], 1);
        let mut g = def(true);
        g.columns.push(ColumnDef {
            generated: Some(Generated {
                expr: "(`id` + 1)".into(),
                stored: false,
            }),
            ..ColumnDef::new("v", ColumnType::Int { unsigned: false }, true)
        });
        g.columns.push(ColumnDef {
            generated: Some(Generated {
                expr: "concat(_utf8mb4'x',`id`)".into(),
                stored: true,
            }),
            comment: "it's \\ stored".into(),
            ..ColumnDef::new("s", ColumnType::varchar(20), false)
        });
        g.columns.push(ColumnDef {
            default_expr: Some("uuid()".into()),
            ..ColumnDef::new("u", ColumnType::varchar(36), true)
        });
        g.columns[0].comment = "key".into();
        g.rebuilt_csn = 9;
        let b = g.encode();
        assert_eq!(b[0], 6);
        let back = TableDef::decode(&b).expect("decode");
        assert_eq!(back, g);
        let sql = back.create_sql();
        for want in [
            "`id` int NOT NULL COMMENT 'key',",
            "`v` int GENERATED ALWAYS AS ((`id` + 1)) VIRTUAL,",
            // The legacy collation is no character set's default: named.
            "`s` varchar(20) COLLATE utf8mb4_0900_bin GENERATED ALWAYS AS (concat(_utf8mb4'x',`id`)) STORED NOT NULL COMMENT 'it''s \\\\ stored',",
            "`u` varchar(36) COLLATE utf8mb4_0900_bin DEFAULT (uuid()),",
        ] {
            assert!(sql.contains(want), "{want} not in {sql}");
        }
        // Every truncation is an error, never a panic.
        for n in 0..b.len() {
            assert!(TableDef::decode(&b[..n]).is_err(), "prefix {n}");
        }
        // Unknown column flags are refused.
        let mut bad = b.clone();
        let flags_at = bad.len() - (4 + "uuid()".len()) - 1;
        bad[flags_at] |= 0x80;
        assert!(TableDef::decode(&bad).is_err());
        // Removing the extras gives the old encoding back.
        let mut again = g.clone();
        again.columns.truncate(3);
        for c in again.columns.iter_mut() {
            c.comment.clear();
        }
        again.rebuilt_csn = 0;
        assert_eq!(again.encode(), def(true).encode());
        assert_eq!(plain.encode(), before);
    }

    /// A column read by another column's expression is found by its
    /// back-quoted name only.
    #[test]
    fn expression_dependencies() {
        assert!(expr_names_column("(`a` + 1)", "A"));
        assert!(!expr_names_column("(`ab` + 1)", "a"));
        let mut t = def(false);
        t.columns.push(ColumnDef {
            generated: Some(Generated {
                expr: "(`ts` + 1)".into(),
                stored: true,
            }),
            ..ColumnDef::new("g", ColumnType::Int { unsigned: false }, true)
        });
        assert_eq!(
            t.column_unused_by_expressions("ts", &[])
                .map_err(|e| e.code),
            Err(3108)
        );
        assert!(t.column_unused_by_expressions("ts", &["g"]).is_ok());
        assert!(t.column_unused_by_expressions("d", &[]).is_ok());
    }

    /// Column prefix lengths are format 8, written only while an index
    /// has one; a table whose indexes are whole keeps its older format and
    /// its bytes, and decoding it gives indexes without prefixes.
    #[test]
    fn format_8_round_trips_prefixes_and_older_formats_stay() {
        let mut t = def(false);
        t.columns
            .push(ColumnDef::new("s", ColumnType::varchar(20), true));
        t.columns.push(ColumnDef::new(
            "b",
            ColumnType::Blob { max_bytes: 65535 },
            true,
        ));
        t.indexes.push(IndexDef::new(1, "whole", true, vec![0]));
        let old = t.encode();
        assert_eq!(old[0], 1);
        assert_eq!(TableDef::decode(&old).expect("decode"), t);
        t.indexes.push(IndexDef {
            prefix: vec![None, Some(7), Some(300)],
            ..IndexDef::new(2, "pre", false, vec![0, 3, 4])
        });
        let b = t.encode();
        assert_eq!(b[0], 8);
        let back = TableDef::decode(&b).expect("decode");
        assert_eq!(back, t);
        assert_eq!(back.indexes[0].prefix, Vec::<Option<u32>>::new());
        assert_eq!(back.indexes[1].prefix_len(1), Some(7));
        assert_eq!(back.indexes[1].ordered_columns(), &[0]);
        assert!(back
            .create_sql()
            .contains("KEY `pre` (`id`,`s`(7),`b`(300))"));
        // Without the prefixed index the table is format 1 again.
        t.indexes.pop();
        assert_eq!(t.encode(), old);
        // Every truncation is an error, never a panic; so is a prefixed
        // index position past the indexes.
        for n in 0..b.len() {
            assert!(TableDef::decode(&b[..n]).is_err(), "{n}");
        }
        let mut bad = b.clone();
        let at = bad.len() - 4 * 3 - 4;
        bad[at..at + 4].copy_from_slice(&9u32.to_le_bytes());
        assert!(TableDef::decode(&bad).is_err());
    }
}
