//! # CHECK TABLE
//!
//! MySQL's table maintenance statements answer with one result set of
//! `Table | Op | Msg_type | Msg_text` rows, one or more per table named,
//! whatever happened to each: `mariadb-check` prints those rows and
//! decides from them. CHECK TABLE runs the engine's online check of the
//! table's trees (`Engine::check_table`: structure, key order, rows that
//! decode, every live row in every index; the checks `quire check` makes
//! of a whole data directory offline, for one table) and answers
//! `status | OK`, or one `error` row per problem found followed by
//! `error | Corrupt`, as MySQL does for a corrupted InnoDB table. A view
//! is checked by binding its SELECT (MySQL checks that its tables and
//! columns still exist). A table that does not exist gets MySQL's
//! `Error | Table '...' doesn't exist` and `status | Operation failed`.
//!
//! The options QUICK, FAST, MEDIUM, EXTENDED and CHANGED are accepted and
//! ignored, as InnoDB ignores them (the full check always runs). FOR
//! UPGRADE asks whether a table needs rebuilding for this server version;
//! quire has no older table formats to detect, and says it does not
//! support the option rather than answer OK unchecked.
//!
//! OPTIMIZE TABLE is refused by the parser: InnoDB answers it with a table
//! rebuild, and quire cannot rebuild a table yet.

use quire_engine::{EngineError, Value};
use sqlparser::ast::ObjectName;

use crate::session::{text_col, Session};
use crate::show::table_db;
use crate::{Output, SqlResult};

fn row(table: &str, msg_type: &str, msg: &str) -> Vec<Value> {
    vec![
        Value::text(table),
        Value::text("check"),
        Value::text(msg_type),
        Value::text(msg),
    ]
}

/// `CHECK TABLE t1, t2, ...`.
pub(crate) fn check(
    s: &mut Session,
    tables: &[ObjectName],
    for_upgrade: bool,
) -> SqlResult<Output> {
    if for_upgrade {
        return Err(EngineError::not_supported("CHECK TABLE ... FOR UPGRADE"));
    }
    let mut rows = Vec::new();
    for n in tables {
        let (d, t) = table_db(s, n, None)?;
        let name = format!("{d}.{t}");
        let engine = s.engine().clone();
        if let Some(v) = engine.view(&d, &t) {
            match crate::view::columns(s, &v) {
                Ok(_) => rows.push(row(&name, "status", "OK")),
                Err(e) => {
                    rows.push(row(&name, "Error", &e.message));
                    rows.push(row(&name, "error", "Corrupt"));
                }
            }
            continue;
        }
        let res = s.table_def(&d, &t).and_then(|def| engine.check_table(&def));
        match res {
            Ok(problems) if problems.is_empty() => rows.push(row(&name, "status", "OK")),
            Ok(problems) => {
                for p in &problems {
                    rows.push(row(&name, "error", p));
                }
                rows.push(row(&name, "error", "Corrupt"));
            }
            Err(e) => {
                let msg = match e.code {
                    1049 | 1146 => format!("Table '{name}' doesn't exist"),
                    _ => e.message,
                };
                rows.push(row(&name, "Error", &msg));
                rows.push(row(&name, "status", "Operation failed"));
            }
        }
    }
    Ok(Output::Rows {
        columns: ["Table", "Op", "Msg_type", "Msg_text"]
            .iter()
            .map(|n| text_col(n))
            .collect(),
        rows,
    })
}
