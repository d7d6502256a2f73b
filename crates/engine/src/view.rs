//! # Views in the catalog
//!
//! A view is a name for a stored SELECT. The engine keeps only what the
//! SQL layer hands it: the view's explicit column list (empty when the
//! CREATE VIEW had none), the normalized SELECT text (every table name
//! qualified with its database, so the text means the same whatever the
//! current database of the session reading it), and MySQL's view options
//! (ALGORITHM, DEFINER, SQL SECURITY, WITH CHECK OPTION). It never parses
//! the text: binding, updatability and privileges are the SQL layer's.
//!
//! A view is one catalog entry in the `quire:catalog` tree, keyed
//!
//! ```text
//!  "V" db-name-lower 0x00 view-name-lower   ViewDef (binary, format 1)
//! ```
//!
//! so CREATE, ALTER (a replacing put) and DROP VIEW are each one
//! mini-transaction: after a crash the view is there with its old or its
//! new definition, never half of one. Views and tables share one name
//! space per database (MySQL's 1050), which `Engine` enforces under the
//! DDL mutex.
//!
//! Binary form: format byte 1, then length-prefixed UTF-8 strings db,
//! name, body, definer user, definer host, character_set_client,
//! collation_connection; a u32 count of column names
//! and the names; then three bytes: algorithm, security, check option.

use std::sync::Arc;

use crate::catalog::Catalog;
use crate::engine::{Engine, CATALOG_TREE};
use crate::error::{EngineError, Result};

/// `ALGORITHM=`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ViewAlgorithm {
    Undefined,
    Merge,
    TempTable,
}

/// `WITH [CASCADED | LOCAL] CHECK OPTION`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckOption {
    None,
    Cascaded,
    Local,
}

/// A view definition.
#[derive(Debug, Clone, PartialEq)]
pub struct ViewDef {
    pub db: String,
    pub name: String,
    /// The explicit `(col, ...)` list; empty: the SELECT's own names.
    pub columns: Vec<String>,
    /// The normalized SELECT (tables qualified with their database).
    pub body: String,
    pub algorithm: ViewAlgorithm,
    pub definer_user: String,
    pub definer_host: String,
    /// `SQL SECURITY INVOKER` (false: DEFINER, MySQL's default).
    pub security_invoker: bool,
    pub check: CheckOption,
    /// `character_set_client` and `collation_connection` of the session
    /// that created the view (SHOW CREATE VIEW reports them).
    pub charset_client: String,
    pub collation_connection: String,
}

impl ViewDef {
    pub fn qualified(&self) -> String {
        format!("{}.{}", self.db, self.name)
    }

    pub fn encode(&self) -> Vec<u8> {
        let mut w = vec![1u8];
        for s in [
            &self.db,
            &self.name,
            &self.body,
            &self.definer_user,
            &self.definer_host,
            &self.charset_client,
            &self.collation_connection,
        ] {
            put_str(&mut w, s);
        }
        w.extend_from_slice(&(self.columns.len() as u32).to_le_bytes());
        for c in &self.columns {
            put_str(&mut w, c);
        }
        w.push(match self.algorithm {
            ViewAlgorithm::Undefined => 0,
            ViewAlgorithm::Merge => 1,
            ViewAlgorithm::TempTable => 2,
        });
        w.push(u8::from(self.security_invoker));
        w.push(match self.check {
            CheckOption::None => 0,
            CheckOption::Cascaded => 1,
            CheckOption::Local => 2,
        });
        w
    }

    pub fn decode(b: &[u8]) -> std::result::Result<ViewDef, String> {
        let mut r = b;
        let ver = take(&mut r, 1)?[0];
        if ver != 1 {
            return Err(format!("unknown view definition format {ver}"));
        }
        let db = get_str(&mut r)?;
        let name = get_str(&mut r)?;
        let body = get_str(&mut r)?;
        let definer_user = get_str(&mut r)?;
        let definer_host = get_str(&mut r)?;
        let charset_client = get_str(&mut r)?;
        let collation_connection = get_str(&mut r)?;
        let n = get_u32(&mut r)? as usize;
        let mut columns = Vec::with_capacity(n.min(4096));
        for _ in 0..n {
            columns.push(get_str(&mut r)?);
        }
        let tail = take(&mut r, 3)?;
        let algorithm = match tail[0] {
            0 => ViewAlgorithm::Undefined,
            1 => ViewAlgorithm::Merge,
            2 => ViewAlgorithm::TempTable,
            x => return Err(format!("unknown view algorithm {x}")),
        };
        let check = match tail[2] {
            0 => CheckOption::None,
            1 => CheckOption::Cascaded,
            2 => CheckOption::Local,
            x => return Err(format!("unknown view check option {x}")),
        };
        if !r.is_empty() {
            return Err("trailing bytes after view definition".into());
        }
        Ok(ViewDef {
            db,
            name,
            columns,
            body,
            algorithm,
            definer_user,
            definer_host,
            security_invoker: tail[1] != 0,
            check,
            charset_client,
            collation_connection,
        })
    }
}

/// The catalog key of view `db.name`.
pub(crate) fn catalog_key(db: &str, name: &str) -> Vec<u8> {
    let mut k = b"V".to_vec();
    k.extend_from_slice(db.to_ascii_lowercase().as_bytes());
    k.push(0);
    k.extend_from_slice(name.to_ascii_lowercase().as_bytes());
    k
}

/// MySQL 1347: `'db.name' is not VIEW` (or `BASE TABLE`).
pub fn err_wrong_object(db: &str, name: &str, what: &str) -> EngineError {
    EngineError::new(1347, "HY000", format!("'{db}.{name}' is not {what}"))
}

fn put_str(w: &mut Vec<u8>, s: &str) {
    w.extend_from_slice(&(s.len() as u32).to_le_bytes());
    w.extend_from_slice(s.as_bytes());
}
fn take<'a>(r: &mut &'a [u8], n: usize) -> std::result::Result<&'a [u8], String> {
    if r.len() < n {
        return Err("truncated view definition".into());
    }
    let (a, b) = r.split_at(n);
    *r = b;
    Ok(a)
}
fn get_u32(r: &mut &[u8]) -> std::result::Result<u32, String> {
    let b = take(r, 4)?;
    Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}
fn get_str(r: &mut &[u8]) -> std::result::Result<String, String> {
    let n = get_u32(r)? as usize;
    String::from_utf8(take(r, n)?.to_vec()).map_err(|_| "view text is not UTF-8".to_string())
}

/// Checks a view name against the tables of the same database (the
/// shared name space): used by CREATE VIEW.
pub(crate) fn name_taken(name: &str) -> EngineError {
    EngineError::new(1050, "42S01", format!("Table '{name}' already exists"))
}

/// A view that is not there (DROP VIEW, ALTER VIEW, SHOW CREATE VIEW).
pub fn err_no_view(db: &str, name: &str) -> EngineError {
    EngineError::new(1146, "42S02", format!("Table '{db}.{name}' doesn't exist"))
}

// ------------------------------------------------------------ the engine side

impl Engine {
    /// View `db.name`, if there is one.
    pub fn view(&self, db: &str, name: &str) -> Option<Arc<ViewDef>> {
        self.inner
            .catalog
            .read()
            .views
            .get(&Catalog::key(db, name))
            .cloned()
    }

    /// The views of `db`, in name order.
    pub fn views(&self, db: &str) -> Vec<Arc<ViewDef>> {
        let dbl = db.to_ascii_lowercase();
        self.inner
            .catalog
            .read()
            .views
            .iter()
            .filter(|((d, _), _)| *d == dbl)
            .map(|(_, v)| v.clone())
            .collect()
    }

    /// CREATE [OR REPLACE] VIEW (`replace`) and ALTER VIEW (`alter`: the
    /// view must exist). One catalog put, then `sql` to the binlog.
    pub fn put_view(&self, def: ViewDef, replace: bool, alter: bool, sql: &str) -> Result<()> {
        let _ddl = self.inner.commit.lock();
        {
            let cat = self.inner.catalog.read();
            if !cat.has_db(&def.db) {
                return Err(EngineError::new(
                    1049,
                    "42000",
                    format!("Unknown database '{}'", def.db),
                ));
            }
            if cat.tables.contains_key(&Catalog::key(&def.db, &def.name)) {
                return Err(if replace || alter {
                    err_wrong_object(&def.db, &def.name, "VIEW")
                } else {
                    name_taken(&def.name)
                });
            }
            let exists = cat.views.contains_key(&Catalog::key(&def.db, &def.name));
            if alter && !exists {
                return Err(err_no_view(&def.db, &def.name));
            }
            if exists && !replace && !alter {
                return Err(name_taken(&def.name));
            }
        }
        let key = catalog_key(&def.db, &def.name);
        self.inner.tree(CATALOG_TREE)?.put(&key, &def.encode())?;
        let db = def.db.clone();
        self.inner
            .catalog
            .write()
            .views
            .insert(Catalog::key(&def.db, &def.name), Arc::new(def));
        self.inner.binlog_ddl(&db, sql)
    }

    /// DROP VIEW of views the caller found to exist: each one catalog
    /// delete, then one binlog event for the statement (`sql`).
    pub fn drop_views(&self, names: &[(String, String)], log_db: &str, sql: &str) -> Result<()> {
        let _ddl = self.inner.commit.lock();
        for (db, name) in names {
            self.inner
                .tree(CATALOG_TREE)?
                .delete(&catalog_key(db, name))?;
            self.inner
                .catalog
                .write()
                .views
                .remove(&Catalog::key(db, name));
        }
        self.inner.binlog_ddl(log_db, sql)
    }

    /// The views of a database being dropped (no binlog event: DROP
    /// DATABASE logs itself).
    pub(crate) fn drop_views_of(&self, db: &str) -> Result<()> {
        let _ddl = self.inner.commit.lock();
        for v in self.views(db) {
            self.inner
                .tree(CATALOG_TREE)?
                .delete(&catalog_key(&v.db, &v.name))?;
            self.inner
                .catalog
                .write()
                .views
                .remove(&Catalog::key(&v.db, &v.name));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_refuses_truncation() {
        let v = ViewDef {
            db: "d".into(),
            name: "v".into(),
            columns: vec!["x".into(), "y".into()],
            body: "SELECT `t`.`a` AS `a` FROM `d`.`t`".into(),
            algorithm: ViewAlgorithm::Merge,
            definer_user: "root".into(),
            definer_host: "localhost".into(),
            security_invoker: true,
            check: CheckOption::Local,
            charset_client: "utf8mb4".into(),
            collation_connection: "utf8mb4_0900_ai_ci".into(),
        };
        let b = v.encode();
        assert_eq!(ViewDef::decode(&b), Ok(v));
        for n in 0..b.len() {
            assert!(ViewDef::decode(&b[..n]).is_err(), "prefix {n}");
        }
        assert_eq!(catalog_key("D", "V"), b"Vd\0v".to_vec());
    }
}
