//! Script tests: each `tests/scripts/*.test` file is a list of statements
//! (`> SQL`) each followed by its expected output, as text:
//!
//! ```text
//! > SELECT c FROM t WHERE id = 1
//! c
//! hello
//!
//! > INSERT INTO t VALUES (1, 'x')
//! ERROR 1062 (23000): Duplicate entry '1' for key 't.PRIMARY'
//! ```
//!
//! Result sets print a header of `name:type` columns then one line per row
//! (` | ` between values, `NULL` for NULL); OK packets print
//! `ok affected=N [id=N] [warnings=N] [info]`. A statement may be prefixed
//! with `[2]` to run on a second session of the same engine (isolation and
//! locking scenarios). `@prepare NAME SQL` prepares a statement,
//! `@execute NAME v1, v2` executes it with parameters (the values are
//! evaluated as a SELECT list), `@close NAME` closes it. `@restart` closes
//! the engine and opens its data directory again with new sessions (no
//! current database), as a server restart.
//!
//! Run with `UPDATE_GOLDEN=1` to rewrite the expected outputs after a
//! deliberate change; review the diff.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use quire_engine::Value;
use quire_sql::{Output, Session};

mod common;
use common::{open_engine, open_engine_at};

fn render_value(v: &Value, ty: &quire_engine::ColumnType) -> String {
    use quire_engine::ColumnType;
    // TIME and YEAR as the protocol sends them (fsp digits, `0000`); BIT
    // as its number (its bytes are not text).
    if matches!(ty, ColumnType::Time { .. } | ColumnType::Year) {
        return v.to_string_mysql(ty);
    }
    match v {
        Value::Null => "NULL".to_string(),
        Value::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
        other => other.to_string(),
    }
}

pub fn render(r: &Result<Output, quire_engine::EngineError>) -> String {
    match r {
        Err(e) => format!("ERROR {} ({}): {}", e.code, e.sqlstate, e.message),
        Ok(Output::Done {
            affected_rows,
            last_insert_id,
            warnings,
            info,
        }) => {
            let mut s = format!("ok affected={affected_rows}");
            if *last_insert_id != 0 {
                s.push_str(&format!(" id={last_insert_id}"));
            }
            if *warnings != 0 {
                s.push_str(&format!(" warnings={warnings}"));
            }
            if !info.is_empty() {
                s.push_str(&format!(" ({info})"));
            }
            s
        }
        Ok(Output::Rows { columns, rows }) => {
            let mut out = columns
                .iter()
                .map(|c| format!("{}:{}", c.name, c.ty.name()))
                .collect::<Vec<_>>()
                .join(" | ");
            for r in rows {
                out.push('\n');
                let cells: Vec<String> = r
                    .iter()
                    .zip(columns)
                    .map(|(v, c)| render_value(v, &c.ty))
                    .collect();
                out.push_str(&cells.join(" | "));
            }
            out
        }
        Ok(Output::Streamed { rows }) => format!("streamed {rows} rows"),
    }
}

struct Runner {
    sessions: Vec<Session>,
    prepared: HashMap<String, (usize, u32)>,
}

impl Runner {
    fn run(&mut self, line: &str) -> String {
        let (sess, stmt) = match line.strip_prefix("[2] ") {
            Some(rest) => (1, rest),
            None => (0, line),
        };
        if let Some(rest) = stmt.strip_prefix("@prepare ") {
            let (name, sql) = rest.split_once(' ').unwrap_or((rest, ""));
            return match self.sessions[sess].prepare(sql) {
                Ok(info) => {
                    self.prepared.insert(name.to_string(), (sess, info.id));
                    let cols: Vec<String> = info
                        .columns
                        .iter()
                        .map(|c| format!("{}:{}", c.name, c.ty.name()))
                        .collect();
                    format!(
                        "prepared params={} columns=[{}]",
                        info.params,
                        cols.join(", ")
                    )
                }
                Err(e) => format!("ERROR {} ({}): {}", e.code, e.sqlstate, e.message),
            };
        }
        if let Some(rest) = stmt.strip_prefix("@execute ") {
            let (name, args) = rest.split_once(' ').unwrap_or((rest, ""));
            let Some(&(s, id)) = self.prepared.get(name) else {
                return format!("no prepared statement {name}");
            };
            let params = if args.trim().is_empty() {
                Vec::new()
            } else {
                match self.sessions[s].execute(&format!("SELECT {args}")) {
                    Ok(Output::Rows { mut rows, .. }) => rows.pop().unwrap_or_default(),
                    other => return format!("bad parameters: {}", render(&other)),
                }
            };
            return render(&self.sessions[s].execute_prepared(id, params));
        }
        if let Some(name) = stmt.strip_prefix("@close ") {
            if let Some((s, id)) = self.prepared.remove(name.trim()) {
                self.sessions[s].close_prepared(id);
            }
            return "closed".to_string();
        }
        render(&self.sessions[sess].execute(stmt))
    }
}

fn run_file(path: &Path) -> (String, String) {
    let text = std::fs::read_to_string(path).expect("read script");
    let (mut engine, dir) = open_engine("script");
    let mut r = Runner {
        sessions: vec![
            Session::new(engine.clone(), "root"),
            Session::new(engine.clone(), "root"),
        ],
        prepared: HashMap::new(),
    };
    let mut out = String::new();
    let mut lines = text.lines().peekable();
    while let Some(l) = lines.next() {
        if let Some(stmt) = l.strip_prefix("> ") {
            out.push_str(l);
            out.push('\n');
            // skip the old expected output
            while let Some(n) = lines.peek() {
                if n.starts_with("> ") || n.starts_with("# ") {
                    break;
                }
                lines.next();
            }
            if stmt.trim() == "@restart" {
                r.sessions.clear();
                r.prepared.clear();
                let closed = engine.close(true);
                engine = open_engine_at(&dir);
                r.sessions = vec![
                    Session::new(engine.clone(), "root"),
                    Session::new(engine.clone(), "root"),
                ];
                out.push_str(&match closed {
                    Ok(()) => "restarted".to_string(),
                    Err(e) => format!("close failed: {e:?}"),
                });
            } else {
                out.push_str(&r.run(stmt));
            }
            out.push_str("\n\n");
        } else if l.starts_with("# ") {
            out.push_str(l);
            out.push('\n');
        }
    }
    drop(r);
    let _ = engine.close(true);
    drop(engine);
    let _ = std::fs::remove_dir_all(dir);
    (text, out)
}

#[test]
fn scripts() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/scripts");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("scripts dir")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "test"))
        .collect();
    files.sort();
    let update = std::env::var("UPDATE_GOLDEN").is_ok();
    let mut failed = Vec::new();
    for f in files {
        let (want, got) = run_file(&f);
        if update {
            std::fs::write(&f, &got).expect("write golden");
        } else if want.trim_end() != got.trim_end() {
            let wl: Vec<&str> = want.lines().collect();
            let gl: Vec<&str> = got.lines().collect();
            let first = wl
                .iter()
                .zip(&gl)
                .position(|(a, b)| a != b)
                .unwrap_or(wl.len().min(gl.len()));
            failed.push(format!(
                "{}: first difference at line {}:\n  want: {:?}\n  got:  {:?}",
                f.display(),
                first + 1,
                wl.get(first),
                gl.get(first)
            ));
        }
    }
    assert!(
        failed.is_empty(),
        "script mismatches:\n{}",
        failed.join("\n")
    );
}
