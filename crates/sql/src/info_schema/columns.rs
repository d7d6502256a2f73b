//! # COLUMNS, STATISTICS, KEY_COLUMN_USAGE, TABLE_CONSTRAINTS
//!
//! What a column is, as information_schema and SHOW [FULL] COLUMNS report
//! it, computed in one place so the two agree: the type split into MySQL
//! 8.0's DATA_TYPE / lengths / precisions, the key flag (`PRI`, `UNI`,
//! `MUL`), the default as text and the Extra words.
//!
//! The key flag follows MySQL's rules: every column of the primary key is
//! `PRI` (a table without one has its first UNIQUE index over NOT NULL
//! columns promoted, as InnoDB does, and those columns are `PRI`); the
//! first column of a one-column UNIQUE index is `UNI`; the first column of
//! any other index (a multi-column UNIQUE one included) is `MUL`; the
//! strongest flag wins.

use quire_engine::{ColumnDef, ColumnType, TableDef, TableStats, Value};

use super::{sort_rows, text, uint, Cols, Visible, CATALOG};
use crate::ctx::Virtual;
use crate::session::Session;

/// The positions of the columns MySQL treats as the primary key: the
/// declared one, or the first UNIQUE index whose columns are all NOT NULL.
fn effective_primary(def: &TableDef) -> Option<(&[usize], Option<&str>)> {
    if !def.primary.is_empty() {
        return Some((&def.primary, None));
    }
    def.indexes
        .iter()
        .find(|i| {
            i.unique && !i.has_prefix() && i.columns.iter().all(|&c| !def.columns[c].nullable)
        })
        .map(|i| (i.columns.as_slice(), Some(i.name.as_str())))
}

/// `PRI`, `UNI`, `MUL` or '' for column `i` (see the module text).
fn column_key(def: &TableDef, i: usize) -> &'static str {
    let promoted = effective_primary(def);
    if promoted.is_some_and(|(cols, _)| cols.contains(&i)) {
        return "PRI";
    }
    let promoted_name = promoted.and_then(|(_, n)| n);
    let firsts = def
        .indexes
        .iter()
        .filter(|x| Some(x.name.as_str()) != promoted_name && x.columns.first() == Some(&i));
    let mut key = "";
    for x in firsts {
        if x.unique && x.columns.len() == 1 && !x.has_prefix() {
            return "UNI";
        }
        key = "MUL";
    }
    key
}

fn now_text(fsp: u8) -> String {
    match fsp {
        0 => "CURRENT_TIMESTAMP".to_string(),
        n => format!("CURRENT_TIMESTAMP({n})"),
    }
}

/// The default as SHOW COLUMNS and COLUMNS.COLUMN_DEFAULT show it: NULL
/// when there is none (or DEFAULT NULL), else its text.
pub(crate) fn column_default(c: &ColumnDef) -> Value {
    if c.generated.is_some() {
        return Value::Null;
    }
    if let Some(e) = &c.default_expr {
        return text(e);
    }
    match (&c.default, c.default_now) {
        (_, Some(fsp)) => text(&now_text(fsp)),
        (None | Some(Value::Null), None) => Value::Null,
        (Some(v), None) => text(&v.to_string_mysql(&c.ty)),
    }
}

/// MySQL 8.0's Extra: `auto_increment`, `DEFAULT_GENERATED` for an
/// expression default, `on update CURRENT_TIMESTAMP[(n)]`, `VIRTUAL
/// GENERATED` / `STORED GENERATED` for a generated column.
pub(crate) fn column_extra(c: &ColumnDef) -> String {
    let mut extra: Vec<String> = Vec::new();
    if let Some(g) = &c.generated {
        return if g.stored {
            "STORED GENERATED"
        } else {
            "VIRTUAL GENERATED"
        }
        .into();
    }
    if c.auto_increment {
        extra.push("auto_increment".into());
    }
    if c.default_now.is_some() || c.default_expr.is_some() {
        extra.push("DEFAULT_GENERATED".into());
    }
    if let Some(fsp) = c.on_update_now {
        extra.push(format!("on update {}", now_text(fsp)));
    }
    extra.join(" ")
}

/// The collation of a column: its own for character strings, none for
/// other types (MySQL shows NULL).
pub(crate) fn column_collation(ty: &ColumnType) -> Option<&'static str> {
    ty.collation().map(|c| c.name())
}

/// A type split as COLUMNS reports it.
struct TypeMeta {
    data_type: String,
    char_max: Value,
    octets: Value,
    precision: Value,
    scale: Value,
    datetime_precision: Value,
}

fn type_meta(ty: &ColumnType) -> TypeMeta {
    let name = ty.name();
    let data_type = name
        .split(['(', ' '])
        .next()
        .unwrap_or(name.as_str())
        .to_string();
    let mut m = TypeMeta {
        data_type,
        char_max: Value::Null,
        octets: Value::Null,
        precision: Value::Null,
        scale: Value::Null,
        datetime_precision: Value::Null,
    };
    let lob_limit = |b: u32| {
        [
            ColumnType::TINY_BYTES,
            ColumnType::REGULAR_BYTES,
            ColumnType::MEDIUM_BYTES,
            ColumnType::LONG_BYTES,
        ]
        .into_iter()
        .find(|&l| l >= b)
        .unwrap_or(ColumnType::LONG_BYTES)
    };
    let int = |m: &mut TypeMeta, p: u64| {
        m.precision = uint(p);
        m.scale = uint(0);
    };
    match *ty {
        ColumnType::TinyInt { .. } => int(&mut m, 3),
        ColumnType::SmallInt { .. } => int(&mut m, 5),
        ColumnType::MediumInt { unsigned } => int(&mut m, if unsigned { 8 } else { 7 }),
        ColumnType::Int { .. } => int(&mut m, 10),
        ColumnType::BigInt { unsigned } => int(&mut m, if unsigned { 20 } else { 19 }),
        ColumnType::Decimal { precision, scale } => {
            m.precision = uint(u64::from(precision));
            m.scale = uint(u64::from(scale));
        }
        ColumnType::Float => m.precision = uint(12),
        ColumnType::Double => m.precision = uint(22),
        ColumnType::Char { len, .. } | ColumnType::Varchar { len, .. } => {
            m.char_max = Value::Int(i64::from(len));
            m.octets = Value::Int(i64::from(len) * 4);
        }
        ColumnType::Binary { len } | ColumnType::VarBinary { len } => {
            m.char_max = Value::Int(i64::from(len));
            m.octets = Value::Int(i64::from(len));
        }
        ColumnType::Text { max_bytes, .. } | ColumnType::Blob { max_bytes } => {
            let l = i64::from(lob_limit(max_bytes));
            m.char_max = Value::Int(l);
            m.octets = Value::Int(l);
        }
        ColumnType::Date => {}
        ColumnType::DateTime { fsp } | ColumnType::Timestamp { fsp } | ColumnType::Time { fsp } => {
            m.datetime_precision = uint(u64::from(fsp));
        }
        ColumnType::Year | ColumnType::Json => {}
        ColumnType::Bit { bits } => m.precision = uint(u64::from(bits)),
        ColumnType::Enum { ref members } | ColumnType::Set { ref members } => {
            let chars: Vec<usize> = members.iter().map(|x| x.chars().count()).collect();
            let len = if matches!(ty, ColumnType::Enum { .. }) {
                chars.iter().copied().max().unwrap_or(0)
            } else {
                chars.iter().sum::<usize>() + chars.len().saturating_sub(1)
            } as i64;
            m.char_max = Value::Int(len);
            m.octets = Value::Int(len * 4);
        }
    }
    m
}

/// SHOW FULL COLUMNS rows of a base table, unfiltered:
/// Field, Type, Collation, Null, Key, Default, Extra, Privileges, Comment.
pub(crate) fn full_columns(vis_s: &Session, def: &TableDef) -> Vec<Vec<Value>> {
    let vis = Visible::of(vis_s);
    def.columns
        .iter()
        .enumerate()
        .map(|(i, c)| {
            vec![
                text(&c.name),
                text(&c.ty.name()),
                column_collation(&c.ty).map_or(Value::Null, text),
                text(if c.nullable { "YES" } else { "NO" }),
                text(column_key(def, i)),
                column_default(c),
                text(&column_extra(c)),
                text(&vis.column_privs(&def.db, &def.name, &c.name)),
                text(&c.comment),
            ]
        })
        .collect()
}

/// `information_schema.COLUMNS`: the columns of every visible table and
/// view (a view's columns as its SELECT types them now; a view that no
/// longer binds lists none).
pub(crate) fn columns(s: &Session) -> Virtual {
    let cols = Cols::new()
        .v("TABLE_CATALOG", 64)
        .v("TABLE_SCHEMA", 64)
        .v("TABLE_NAME", 64)
        .v("COLUMN_NAME", 64)
        .u32("ORDINAL_POSITION")
        .text("COLUMN_DEFAULT")
        .v("IS_NULLABLE", 3)
        .text("DATA_TYPE")
        .i("CHARACTER_MAXIMUM_LENGTH")
        .i("CHARACTER_OCTET_LENGTH")
        .u("NUMERIC_PRECISION")
        .u("NUMERIC_SCALE")
        .u32("DATETIME_PRECISION")
        .v("CHARACTER_SET_NAME", 64)
        .v("COLLATION_NAME", 64)
        .text("COLUMN_TYPE")
        .v("COLUMN_KEY", 3)
        .v("EXTRA", 256)
        .v("PRIVILEGES", 154)
        .text("COLUMN_COMMENT")
        .text("GENERATION_EXPRESSION")
        .u32("SRS_ID")
        .done();
    let vis = Visible::of(s);
    let engine = s.engine();
    let mut rows = Vec::new();
    let mut push = |db: &str,
                    table: &str,
                    pos: usize,
                    name: &str,
                    ty: &ColumnType,
                    nullable: bool,
                    default: Value,
                    key: &str,
                    extra: &str,
                    comment: &str,
                    generation: &str| {
        let m = type_meta(ty);
        let coll = column_collation(ty);
        rows.push(vec![
            text(CATALOG),
            text(db),
            text(table),
            text(name),
            uint(pos as u64 + 1),
            default,
            text(if nullable { "YES" } else { "NO" }),
            text(&m.data_type),
            m.char_max,
            m.octets,
            m.precision,
            m.scale,
            m.datetime_precision,
            ty.collation()
                .map_or(Value::Null, |c| text(c.charset().name())),
            coll.map_or(Value::Null, text),
            text(&ty.name()),
            text(key),
            text(extra),
            text(&vis.column_privs(db, table, name)),
            text(comment),
            text(generation),
            Value::Null,
        ]);
    };
    for db in engine.databases() {
        let Ok(tables) = engine.tables(&db) else {
            continue;
        };
        for t in tables.iter().filter(|t| vis.table(&db, &t.name)) {
            for (i, c) in t.columns.iter().enumerate() {
                push(
                    &db,
                    &t.name,
                    i,
                    &c.name,
                    &c.ty,
                    c.nullable,
                    column_default(c),
                    column_key(t, i),
                    &column_extra(c),
                    &c.comment,
                    c.generated.as_ref().map_or("", |g| g.expr.as_str()),
                );
            }
        }
        for v in engine.views(&db) {
            if !vis.table(&db, &v.name) {
                continue;
            }
            let Ok(vcols) = crate::view::columns(s, &v) else {
                continue;
            };
            for (i, c) in vcols.iter().enumerate() {
                push(
                    &db,
                    &v.name,
                    i,
                    &c.name,
                    &c.ty,
                    c.nullable,
                    Value::Null,
                    "",
                    "",
                    "",
                    "",
                );
            }
        }
    }
    // Table order; each table's columns stay in ordinal order (stable).
    sort_rows(&mut rows, &[1, 2]);
    (cols, rows)
}

/// One index of a table as STATISTICS lists it.
struct IndexRow<'a> {
    name: &'a str,
    unique: bool,
    columns: &'a [usize],
    /// Column prefix lengths (empty: whole columns).
    prefix: &'a [Option<u32>],
    /// Position in the optimizer statistics.
    stats: usize,
}

/// Each index of a table: PRIMARY first, then the secondary indexes.
fn indexes(def: &TableDef) -> Vec<IndexRow<'_>> {
    let mut v = Vec::new();
    if !def.primary.is_empty() {
        v.push(IndexRow {
            name: "PRIMARY",
            unique: true,
            columns: def.primary.as_slice(),
            prefix: &[],
            stats: 0,
        });
    }
    for (ix, i) in def.indexes.iter().enumerate() {
        v.push(IndexRow {
            name: i.name.as_str(),
            unique: i.unique,
            columns: i.columns.as_slice(),
            prefix: i.prefix.as_slice(),
            stats: ix + 1,
        });
    }
    v
}

/// One key part of one index, as SHOW INDEX and
/// `information_schema.STATISTICS` show it (the same values in both).
pub(crate) struct KeyPart<'a> {
    pub index: &'a str,
    pub unique: bool,
    /// 1-based position in the index.
    pub seq: u64,
    pub column: &'a ColumnDef,
    /// The optimizer statistics' distinct values of the prefix ending
    /// here (stats.rs), NULL before ANALYZE has counted them.
    pub cardinality: Value,
    /// The column prefix length, NULL for the whole column.
    pub sub_part: Value,
}

impl KeyPart<'_> {
    /// From Packed to Expression: what every key part shows alike.
    pub(crate) fn tail(&self) -> [Value; 7] {
        [
            Value::Null,
            text(if self.column.nullable { "YES" } else { "" }),
            text("BTREE"),
            text(""),
            text(""),
            text("YES"),
            Value::Null,
        ]
    }
}

/// Every key part of a table's indexes: PRIMARY first, then the
/// secondary indexes in definition order.
pub(crate) fn key_parts<'a>(def: &'a TableDef, stats: &TableStats) -> Vec<KeyPart<'a>> {
    let mut out = Vec::new();
    for ix in indexes(def) {
        for (seq, &c) in ix.columns.iter().enumerate() {
            out.push(KeyPart {
                index: ix.name,
                unique: ix.unique,
                seq: seq as u64 + 1,
                column: &def.columns[c],
                cardinality: stats
                    .indexes
                    .get(ix.stats)
                    .and_then(|i| i.distinct.get(seq))
                    .map_or(Value::Null, |&d| {
                        Value::Int(i64::try_from(d).unwrap_or(i64::MAX))
                    }),
                sub_part: ix
                    .prefix
                    .get(seq)
                    .copied()
                    .flatten()
                    .map_or(Value::Null, |n| Value::Int(i64::from(n))),
            });
        }
    }
    out
}

/// `information_schema.STATISTICS`: one row per index column.
/// CARDINALITY is the optimizer statistics' distinct count of each
/// prefix, as SHOW INDEX shows it.
pub(crate) fn statistics(s: &Session) -> Virtual {
    let cols = Cols::new()
        .v("TABLE_CATALOG", 64)
        .v("TABLE_SCHEMA", 64)
        .v("TABLE_NAME", 64)
        .i("NON_UNIQUE")
        .v("INDEX_SCHEMA", 64)
        .v("INDEX_NAME", 64)
        .u32("SEQ_IN_INDEX")
        .v("COLUMN_NAME", 64)
        .v("COLLATION", 1)
        .i("CARDINALITY")
        .i("SUB_PART")
        .v("PACKED", 10)
        .v("NULLABLE", 3)
        .v("INDEX_TYPE", 11)
        .v("COMMENT", 8)
        .v("INDEX_COMMENT", 2048)
        .v("IS_VISIBLE", 3)
        .text("EXPRESSION")
        .done();
    let vis = Visible::of(s);
    let engine = s.engine();
    let mut rows = Vec::new();
    for db in engine.databases() {
        let Ok(tables) = engine.tables(&db) else {
            continue;
        };
        for t in tables.iter().filter(|t| vis.table(&db, &t.name)) {
            let stats = engine.table_stats(t);
            for k in key_parts(t, &stats) {
                let tail = k.tail();
                let mut row = vec![
                    text(CATALOG),
                    text(&db),
                    text(&t.name),
                    Value::Int(i64::from(!k.unique)),
                    text(&db),
                    text(k.index),
                    uint(k.seq),
                    text(&k.column.name),
                    text("A"),
                    k.cardinality,
                    k.sub_part,
                ];
                row.extend(tail);
                rows.push(row);
            }
        }
    }
    sort_rows(&mut rows, &[1, 2]);
    (cols, rows)
}

/// `information_schema.KEY_COLUMN_USAGE`: the columns of PRIMARY KEY,
/// UNIQUE and FOREIGN KEY constraints.
pub(crate) fn key_column_usage(s: &Session) -> Virtual {
    let cols = Cols::new()
        .v("CONSTRAINT_CATALOG", 64)
        .v("CONSTRAINT_SCHEMA", 64)
        .v("CONSTRAINT_NAME", 64)
        .v("TABLE_CATALOG", 64)
        .v("TABLE_SCHEMA", 64)
        .v("TABLE_NAME", 64)
        .v("COLUMN_NAME", 64)
        .u32("ORDINAL_POSITION")
        .u32("POSITION_IN_UNIQUE_CONSTRAINT")
        .v("REFERENCED_TABLE_SCHEMA", 64)
        .v("REFERENCED_TABLE_NAME", 64)
        .v("REFERENCED_COLUMN_NAME", 64)
        .done();
    let vis = Visible::of(s);
    let engine = s.engine();
    let mut rows = Vec::new();
    for db in engine.databases() {
        let Ok(tables) = engine.tables(&db) else {
            continue;
        };
        for t in tables.iter().filter(|t| vis.table(&db, &t.name)) {
            for IndexRow {
                name,
                unique,
                columns: cs,
                ..
            } in indexes(t)
            {
                if !unique {
                    continue;
                }
                for (seq, &c) in cs.iter().enumerate() {
                    rows.push(vec![
                        text(CATALOG),
                        text(&db),
                        text(name),
                        text(CATALOG),
                        text(&db),
                        text(&t.name),
                        text(&t.columns[c].name),
                        uint(seq as u64 + 1),
                        Value::Null,
                        Value::Null,
                        Value::Null,
                        Value::Null,
                    ]);
                }
            }
            super::constraints::key_column_rows(&db, t, &mut rows);
        }
    }
    sort_rows(&mut rows, &[1, 5]);
    (cols, rows)
}

/// `information_schema.TABLE_CONSTRAINTS`: PRIMARY KEY, UNIQUE, FOREIGN
/// KEY and CHECK.
pub(crate) fn table_constraints(s: &Session) -> Virtual {
    let cols = Cols::new()
        .v("CONSTRAINT_CATALOG", 64)
        .v("CONSTRAINT_SCHEMA", 64)
        .v("CONSTRAINT_NAME", 64)
        .v("TABLE_SCHEMA", 64)
        .v("TABLE_NAME", 64)
        .v("CONSTRAINT_TYPE", 11)
        .v("ENFORCED", 3)
        .done();
    let vis = Visible::of(s);
    let engine = s.engine();
    let mut rows = Vec::new();
    for db in engine.databases() {
        let Ok(tables) = engine.tables(&db) else {
            continue;
        };
        for t in tables.iter().filter(|t| vis.table(&db, &t.name)) {
            for IndexRow {
                name,
                unique,
                stats: ix,
                ..
            } in indexes(t)
            {
                if !unique {
                    continue;
                }
                let is_pk = ix == 0 && !t.primary.is_empty();
                rows.push(vec![
                    text(CATALOG),
                    text(&db),
                    text(name),
                    text(&db),
                    text(&t.name),
                    text(if is_pk { "PRIMARY KEY" } else { "UNIQUE" }),
                    text("YES"),
                ]);
            }
            super::constraints::table_constraint_rows(&db, t, &mut rows);
        }
    }
    sort_rows(&mut rows, &[1, 4]);
    (cols, rows)
}
