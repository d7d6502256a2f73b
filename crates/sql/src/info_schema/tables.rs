//! # SCHEMATA, TABLES, VIEWS, PARTITIONS, FILES and SHOW TABLE STATUS
//!
//! One [`Status`] per table carries what MySQL's TABLES and SHOW TABLE
//! STATUS share (rows, lengths, next AUTO_INCREMENT value); both are built
//! from it, so the two answers agree. The values and the NULLs are
//! explained in the parent module.

use std::sync::Arc;

use quire_engine::{TableDef, Value, ViewDef};

use super::{sort_rows, text, uint, Cols, Visible, CATALOG};
use crate::ctx::Virtual;
use crate::session::Session;

/// `information_schema.SCHEMATA`.
pub(crate) fn schemata(s: &Session) -> Virtual {
    let cols = Cols::new()
        .v("CATALOG_NAME", 64)
        .v("SCHEMA_NAME", 64)
        .v("DEFAULT_CHARACTER_SET_NAME", 64)
        .v("DEFAULT_COLLATION_NAME", 64)
        .v("SQL_PATH", 512)
        .v("DEFAULT_ENCRYPTION", 3)
        .done();
    let vis = Visible::of(s);
    let mut rows: Vec<Vec<Value>> = Vec::new();
    // information_schema itself is visible to every account (MySQL).
    rows.push(vec![
        text(CATALOG),
        text("information_schema"),
        text("utf8mb3"),
        text("utf8mb3_general_ci"),
        Value::Null,
        text("NO"),
    ]);
    for db in s.engine().databases() {
        if !vis.db(&db) {
            continue;
        }
        let coll = s.database_collation(&db);
        rows.push(vec![
            text(CATALOG),
            text(&db),
            text(coll.charset().name()),
            text(coll.name()),
            Value::Null,
            text("NO"),
        ]);
    }
    sort_rows(&mut rows, &[1]);
    (cols, rows)
}

/// What TABLES and SHOW TABLE STATUS say about one base table.
struct Status {
    rows: u64,
    data_length: Value,
    index_length: Value,
    avg_row_length: Value,
    auto_increment: Value,
}

fn status(s: &Session, t: &TableDef, page_size: u64) -> Status {
    let engine = s.engine();
    let rows = engine.table_stats(t).rows;
    // A table dropped while we look has no pages: its sizes are unknown.
    let (data_length, index_length, avg_row_length) = match engine.table_pages(t) {
        Ok(p) => {
            let data = p.data * page_size;
            let avg = data.checked_div(rows).unwrap_or(0);
            (uint(data), uint(p.index * page_size), uint(avg))
        }
        Err(_) => (Value::Null, Value::Null, Value::Null),
    };
    let auto_increment = match t.auto_increment_column() {
        Some(_) => engine
            .peek_auto_increment(t.id)
            .map_or(Value::Null, Value::UInt),
        None => Value::Null,
    };
    Status {
        rows,
        data_length,
        index_length,
        avg_row_length,
        auto_increment,
    }
}

/// One database's visible tables and views.
type DbObjects = (String, Vec<Arc<TableDef>>, Vec<Arc<ViewDef>>);

/// Every visible base table and view of `db` (all databases if `None`),
/// in name order.
fn objects(s: &Session, db: Option<&str>) -> Vec<DbObjects> {
    let vis = Visible::of(s);
    let engine = s.engine();
    let dbs = match db {
        Some(d) => engine
            .databases()
            .into_iter()
            .filter(|x| x == d)
            .collect::<Vec<_>>(),
        None => engine.databases(),
    };
    let mut out = Vec::new();
    for d in dbs {
        let Ok(tables) = engine.tables(&d) else {
            continue; // dropped since it was listed
        };
        let tables = tables
            .into_iter()
            .filter(|t| vis.table(&d, &t.name))
            .collect();
        let views = engine
            .views(&d)
            .into_iter()
            .filter(|v| vis.table(&d, &v.name))
            .collect();
        out.push((d, tables, views));
    }
    out
}

fn page_size(s: &Session) -> u64 {
    u64::from(s.engine().config().innodb_page_size)
}

/// `information_schema.TABLES`.
pub(crate) fn tables(s: &Session) -> Virtual {
    let cols = Cols::new()
        .v("TABLE_CATALOG", 64)
        .v("TABLE_SCHEMA", 64)
        .v("TABLE_NAME", 64)
        .v("TABLE_TYPE", 64)
        .v("ENGINE", 64)
        .i("VERSION")
        .v("ROW_FORMAT", 10)
        .u("TABLE_ROWS")
        .u("AVG_ROW_LENGTH")
        .u("DATA_LENGTH")
        .u("MAX_DATA_LENGTH")
        .u("INDEX_LENGTH")
        .u("DATA_FREE")
        .u("AUTO_INCREMENT")
        .dt("CREATE_TIME")
        .dt("UPDATE_TIME")
        .dt("CHECK_TIME")
        .v("TABLE_COLLATION", 64)
        .i("CHECKSUM")
        .v("CREATE_OPTIONS", 256)
        .text("TABLE_COMMENT")
        .done();
    let ps = page_size(s);
    let mut rows = Vec::new();
    for (db, tables, views) in objects(s, None) {
        for t in tables {
            let st = status(s, &t, ps);
            rows.push(vec![
                text(CATALOG),
                text(&db),
                text(&t.name),
                text("BASE TABLE"),
                text("InnoDB"),
                Value::Int(10),
                text("Dynamic"),
                uint(st.rows),
                st.avg_row_length,
                st.data_length,
                uint(0),
                st.index_length,
                Value::Null,
                st.auto_increment,
                Value::Null,
                Value::Null,
                Value::Null,
                text(t.collation.name()),
                Value::Null,
                text(""),
                text(""),
            ]);
        }
        for v in views {
            let mut r = vec![text(CATALOG), text(&db), text(&v.name), text("VIEW")];
            r.extend(std::iter::repeat_n(Value::Null, 16));
            r.push(text("VIEW"));
            rows.push(r);
        }
    }
    sort_rows(&mut rows, &[1, 2]);
    (cols, rows)
}

/// SHOW TABLE STATUS [FROM db]: the rows before LIKE/WHERE, with their
/// column names.
pub(crate) fn table_status(s: &Session, db: &str) -> (Vec<&'static str>, Vec<Vec<Value>>) {
    let names = vec![
        "Name",
        "Engine",
        "Version",
        "Row_format",
        "Rows",
        "Avg_row_length",
        "Data_length",
        "Max_data_length",
        "Index_length",
        "Data_free",
        "Auto_increment",
        "Create_time",
        "Update_time",
        "Check_time",
        "Collation",
        "Checksum",
        "Create_options",
        "Comment",
    ];
    let ps = page_size(s);
    let mut rows = Vec::new();
    for (_, tables, views) in objects(s, Some(db)) {
        for t in tables {
            let st = status(s, &t, ps);
            rows.push(vec![
                text(&t.name),
                text("InnoDB"),
                Value::Int(10),
                text("Dynamic"),
                uint(st.rows),
                st.avg_row_length,
                st.data_length,
                uint(0),
                st.index_length,
                Value::Null,
                st.auto_increment,
                Value::Null,
                Value::Null,
                Value::Null,
                text(t.collation.name()),
                Value::Null,
                text(""),
                text(""),
            ]);
        }
        for v in views {
            let mut r = vec![text(&v.name)];
            r.extend(std::iter::repeat_n(Value::Null, 16));
            r.push(text("VIEW"));
            rows.push(r);
        }
    }
    sort_rows(&mut rows, &[0]);
    (names, rows)
}

/// `information_schema.VIEWS`. The definition is shown to the definer
/// and to accounts with SHOW VIEW on the view (MySQL); others see ''.
pub(crate) fn views(s: &Session) -> Virtual {
    let cols = Cols::new()
        .v("TABLE_CATALOG", 64)
        .v("TABLE_SCHEMA", 64)
        .v("TABLE_NAME", 64)
        .text("VIEW_DEFINITION")
        .v("CHECK_OPTION", 8)
        .v("IS_UPDATABLE", 3)
        .v("DEFINER", 288)
        .v("SECURITY_TYPE", 7)
        .v("CHARACTER_SET_CLIENT", 64)
        .v("COLLATION_CONNECTION", 64)
        .done();
    let vis = Visible::of(s);
    let (user, host) = s.account();
    let mut rows = Vec::new();
    for (db, _, views) in objects(s, None) {
        for v in views {
            let shown = vis.privs().is_none_or(|p| {
                (v.definer_user == user && v.definer_host == host)
                    || p.on_table(&db, &v.name)
                        .has(crate::privilege::Privs::SHOW_VIEW)
            });
            let check = match v.check {
                quire_engine::CheckOption::None => "NONE",
                quire_engine::CheckOption::Cascaded => "CASCADED",
                quire_engine::CheckOption::Local => "LOCAL",
            };
            rows.push(vec![
                text(CATALOG),
                text(&db),
                text(&v.name),
                text(if shown { &v.body } else { "" }),
                text(check),
                text(if updatable(&v) { "YES" } else { "NO" }),
                text(&format!("{}@{}", v.definer_user, v.definer_host)),
                text(if v.security_invoker {
                    "INVOKER"
                } else {
                    "DEFINER"
                }),
                text(&v.charset_client),
                text(&v.collation_connection),
            ]);
        }
    }
    sort_rows(&mut rows, &[1, 2]);
    (cols, rows)
}

/// MySQL's IS_UPDATABLE: the view can be merged into a statement (not
/// TEMPTABLE, one SELECT block without aggregates, DISTINCT, GROUP BY,
/// LIMIT, ...).
fn updatable(v: &ViewDef) -> bool {
    v.algorithm != quire_engine::ViewAlgorithm::TempTable
        && crate::parse::parse_query(&v.body).is_ok_and(|q| crate::view::mergeable(&q))
}

/// `information_schema.PARTITIONS`: MySQL lists an unpartitioned table
/// as one row with NULL partition names and the table's own figures.
pub(crate) fn partitions(s: &Session) -> Virtual {
    let cols = Cols::new()
        .v("TABLE_CATALOG", 64)
        .v("TABLE_SCHEMA", 64)
        .v("TABLE_NAME", 64)
        .v("PARTITION_NAME", 64)
        .v("SUBPARTITION_NAME", 64)
        .u32("PARTITION_ORDINAL_POSITION")
        .u32("SUBPARTITION_ORDINAL_POSITION")
        .v("PARTITION_METHOD", 13)
        .v("SUBPARTITION_METHOD", 13)
        .v("PARTITION_EXPRESSION", 2048)
        .v("SUBPARTITION_EXPRESSION", 2048)
        .text("PARTITION_DESCRIPTION")
        .u("TABLE_ROWS")
        .u("AVG_ROW_LENGTH")
        .u("DATA_LENGTH")
        .u("MAX_DATA_LENGTH")
        .u("INDEX_LENGTH")
        .u("DATA_FREE")
        .dt("CREATE_TIME")
        .dt("UPDATE_TIME")
        .dt("CHECK_TIME")
        .i("CHECKSUM")
        .text("PARTITION_COMMENT")
        .v("NODEGROUP", 256)
        .v("TABLESPACE_NAME", 268)
        .done();
    let ps = page_size(s);
    let mut rows = Vec::new();
    for (db, tables, _) in objects(s, None) {
        for t in tables {
            let st = status(s, &t, ps);
            let mut r = vec![text(CATALOG), text(&db), text(&t.name)];
            r.extend(std::iter::repeat_n(Value::Null, 9));
            r.extend([
                uint(st.rows),
                st.avg_row_length,
                st.data_length,
                uint(0),
                st.index_length,
                Value::Null,
                Value::Null,
                Value::Null,
                Value::Null,
                Value::Null,
                text(""),
                Value::Null,
                Value::Null,
            ]);
            rows.push(r);
        }
    }
    sort_rows(&mut rows, &[1, 2]);
    (cols, rows)
}

/// `information_schema.FILES`: quire keeps every table in one system
/// tablespace file, listed as MySQL lists `innodb_system`. Its sizes are
/// not tracked here (NULL).
pub(crate) fn files(s: &Session) -> Virtual {
    let names = [
        "FILE_ID",
        "FILE_NAME",
        "FILE_TYPE",
        "TABLESPACE_NAME",
        "TABLE_CATALOG",
        "TABLE_SCHEMA",
        "TABLE_NAME",
        "LOGFILE_GROUP_NAME",
        "LOGFILE_GROUP_NUMBER",
        "ENGINE",
        "FULLTEXT_KEYS",
        "DELETED_ROWS",
        "UPDATE_COUNT",
        "FREE_EXTENTS",
        "TOTAL_EXTENTS",
        "EXTENT_SIZE",
        "INITIAL_SIZE",
        "MAXIMUM_SIZE",
        "AUTOEXTEND_SIZE",
        "CREATION_TIME",
        "LAST_UPDATE_TIME",
        "LAST_ACCESS_TIME",
        "RECOVER_TIME",
        "TRANSACTION_COUNTER",
        "VERSION",
        "ROW_FORMAT",
        "TABLE_ROWS",
        "AVG_ROW_LENGTH",
        "DATA_LENGTH",
        "MAX_DATA_LENGTH",
        "INDEX_LENGTH",
        "DATA_FREE",
        "CREATE_TIME",
        "UPDATE_TIME",
        "CHECK_TIME",
        "CHECKSUM",
        "STATUS",
        "EXTRA",
    ];
    let mut cols = Cols::new();
    for n in names {
        cols = match n {
            "FILE_ID"
            | "LOGFILE_GROUP_NUMBER"
            | "FULLTEXT_KEYS"
            | "DELETED_ROWS"
            | "UPDATE_COUNT"
            | "FREE_EXTENTS"
            | "TOTAL_EXTENTS"
            | "EXTENT_SIZE"
            | "INITIAL_SIZE"
            | "MAXIMUM_SIZE"
            | "AUTOEXTEND_SIZE"
            | "TRANSACTION_COUNTER"
            | "VERSION"
            | "TABLE_ROWS"
            | "AVG_ROW_LENGTH"
            | "DATA_LENGTH"
            | "MAX_DATA_LENGTH"
            | "INDEX_LENGTH"
            | "DATA_FREE"
            | "CHECKSUM" => cols.i(n),
            "CREATION_TIME" | "LAST_UPDATE_TIME" | "LAST_ACCESS_TIME" | "RECOVER_TIME"
            | "CREATE_TIME" | "UPDATE_TIME" | "CHECK_TIME" => cols.dt(n),
            _ => cols.v(n, 256),
        };
    }
    let mut row: Vec<Value> = std::iter::repeat_n(Value::Null, names.len()).collect();
    let set = |row: &mut Vec<Value>, n: &str, v: Value| {
        if let Some(i) = names.iter().position(|x| *x == n) {
            row[i] = v;
        }
    };
    set(&mut row, "FILE_ID", Value::Int(0));
    set(&mut row, "FILE_NAME", text("./ibdata1"));
    set(&mut row, "FILE_TYPE", text("TABLESPACE"));
    set(&mut row, "TABLESPACE_NAME", text("innodb_system"));
    set(&mut row, "ENGINE", text("InnoDB"));
    set(&mut row, "STATUS", text("NORMAL"));
    // Visible to accounts with PROCESS, as MySQL requires for FILES.
    let vis = Visible::of(s);
    let rows = if vis
        .privs()
        .is_none_or(|p| p.global_effective().has(crate::privilege::Privs::PROCESS))
    {
        vec![row]
    } else {
        Vec::new()
    };
    (cols.done(), rows)
}
