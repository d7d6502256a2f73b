//! # ALTER TABLE statements that rebuild the table
//!
//! A statement with a column change (`ADD/DROP [COLUMN]`, `MODIFY`,
//! `CHANGE`), a primary key change, `FORCE` or `ENGINE=InnoDB` rebuilds
//! the table (`quire_engine::rebuild`, MySQL's ALGORITHM=COPY). Its other
//! specs ride along in the same rebuild: metadata changes (renames,
//! defaults, dropped indexes and keys, CHECKs) become the rebuild's
//! `meta`, ADD INDEX an index of the new table, `AUTO_INCREMENT = n` is
//! applied once the new table is in place.
//!
//! `ADD COLUMN` alone at the end is INSTANT instead (`instant_column`: a
//! metadata change, rows keep their images and read the value the column
//! was added with), as InnoDB does since MySQL 8.0.12.
//!
//! ```text
//!   specs ──► column definitions read as CREATE TABLE reads them (ddl.rs)
//!         ──► Rebuild { meta, columns, primary key, indexes }
//!         ──► Engine::rebuild_table (rows converted, CHECKs verified)
//! ```
//!
//! A CHECK (added by the statement, or written on a column of ADD /
//! MODIFY / CHANGE) may name the statement's new columns: it is read
//! against the column list the statement leaves. Refused by name rather
//! than half done: ADD FOREIGN KEY with a rebuild (run it as its own
//! statement).

use std::cell::RefCell;
use std::sync::Arc;

use quire_engine::alter::AlterChecks;
use quire_engine::{
    ColumnChange, ColumnDef, ColumnType, EngineError, NewIndex, Place, Rebuild, TableDef, Value,
};
use sqlparser::ast;

use crate::alter::Spec;
use crate::constraints::TableChecks;
use crate::generated::TableGen;
use crate::session::Session;
use crate::SqlResult;

/// Whether `spec` needs the table rebuilt.
pub(crate) fn rebuilds(spec: &Spec) -> bool {
    match spec {
        // The collation does not decide whether the change is instant.
        Spec::AddColumn(c, at) => instant_column(c, at, ColumnType::LEGACY_COLLATION).is_none(),
        Spec::DropColumn(_)
        | Spec::ModifyColumn { .. }
        | Spec::AddPrimaryKey(..)
        | Spec::DropPrimaryKey
        | Spec::Force => true,
        _ => false,
    }
}

/// `ADD COLUMN` that InnoDB does INSTANT (MySQL 8.0.12+): at the end, no
/// key, CHECK or AUTO_INCREMENT on it, and a value for the rows already
/// there that does not depend on the moment (not CURRENT_TIMESTAMP, not a
/// zero date): the column with that value as its `instant`.
pub(crate) fn instant_column(
    c: &ast::ColumnDef,
    at: &Place,
    table: quire_engine::types::Collation,
) -> Option<ColumnDef> {
    if *at != Place::Last {
        return None;
    }
    let pc = crate::ddl::column_def(c, table).ok()?;
    if pc.primary || pc.unique || !pc.checks.is_empty() {
        return None;
    }
    let mut def = pc.def;
    // A computed value per row (generated column, DEFAULT expression)
    // needs the rows rewritten.
    if def.auto_increment
        || def.default_now.is_some()
        || def.generated.is_some()
        || def.default_expr.is_some()
    {
        return None;
    }
    let value = match &def.default {
        Some(v) => v.clone(),
        None if def.nullable => Value::Null,
        None if def.ty.is_numeric() => {
            quire_engine::types::coerce(Value::Int(0), &def.ty, false, &def.name, 1).ok()?
        }
        None if def.ty.is_string() => {
            quire_engine::types::coerce(Value::Bytes(Vec::new()), &def.ty, false, &def.name, 1)
                .ok()?
        }
        None => return None,
    };
    def.instant = Some(value);
    Some(def)
}

/// CHECKs waiting for the statement's final column list: (clause, the
/// column of a column-level CHECK).
type Pending<'a> = Vec<(&'a ast::CheckConstraint, Option<String>)>;

/// A column of ADD / MODIFY / CHANGE with the keys written on it.
fn column<'a>(
    c: &'a ast::ColumnDef,
    rb: &mut Rebuild,
    checks: &mut Pending<'a>,
    stamp: quire_engine::types::DateTime,
    table: quire_engine::types::Collation,
) -> SqlResult<(ColumnDef, Option<Value>)> {
    let pc = crate::ddl::column_def(c, table)?;
    for cc in pc.checks {
        checks.push((cc, Some(pc.def.name.clone())));
    }
    if pc.primary {
        set_primary(rb, vec![pc.def.name.clone()])?;
    }
    if pc.unique {
        rb.add_indexes.push(NewIndex {
            name: None,
            unique: true,
            columns: vec![pc.def.name.clone()],
            prefix: Vec::new(),
        });
    }
    // DEFAULT CURRENT_TIMESTAMP: existing rows get the statement's time,
    // stored as it is (the rebuild writes rows as the engine keeps them):
    // UTC in a TIMESTAMP, session time in a DATETIME.
    let stamp = match pc.def.ty {
        ColumnType::Timestamp { .. } => stamp,
        _ => crate::tz::current().local_of(stamp).unwrap_or(stamp),
    };
    let fill = pc
        .def
        .default_now
        .map(|fsp| Value::DateTime(crate::expr::truncate_fsp(stamp, fsp)));
    Ok((pc.def, fill))
}

/// MySQL converts a TIMESTAMP column's values with the session time zone
/// when MODIFY/CHANGE turns it into another type (or another type into
/// TIMESTAMP); the rebuild copies stored values as they are, which is the
/// same only when session time is UTC. Elsewhere the change is refused
/// rather than done differently.
fn refuse_zone_retype(def: &TableDef, from: &str, column: &ColumnDef) -> SqlResult<()> {
    let Some(old) = def
        .columns
        .iter()
        .find(|c| c.name.eq_ignore_ascii_case(from))
    else {
        return Ok(());
    };
    let ts = |t: &ColumnType| matches!(t, ColumnType::Timestamp { .. });
    if ts(&old.ty) != ts(&column.ty) && !crate::tz::current().is_utc() {
        return Err(EngineError::not_supported(
            "changing a column to or from TIMESTAMP while time_zone is not UTC",
        ));
    }
    Ok(())
}

/// ADD PRIMARY KEY's prefix lengths: one as long as its column (of the
/// table as it is) is the whole column, as MySQL keys it; any other is
/// refused by name (1235), as are prefixes on columns the statement adds.
fn primary_prefix(def: &TableDef, cols: &[String], prefix: &[Option<u32>]) -> SqlResult<()> {
    if prefix.iter().all(Option::is_none) {
        return Ok(());
    }
    let at: Option<Vec<usize>> = cols.iter().map(|c| def.column(c)).collect();
    match at {
        Some(at) => {
            quire_engine::check_key_parts(&def.columns, &at, prefix, true)?;
            Ok(())
        }
        None => Err(EngineError::not_supported(
            "a column prefix length in a PRIMARY KEY",
        )),
    }
}

fn set_primary(rb: &mut Rebuild, cols: Vec<String>) -> SqlResult<()> {
    if rb.add_primary.is_some() {
        return Err(EngineError::new(
            1068,
            "42000",
            "Multiple primary key defined",
        ));
    }
    rb.add_primary = Some(cols);
    Ok(())
}

/// The statement's specs as one rebuild; `AUTO_INCREMENT = n` apart.
pub(crate) fn plan(
    s: &Session,
    def: &TableDef,
    specs: &[Spec],
) -> SqlResult<(Rebuild, Option<u64>)> {
    let mut rb = Rebuild::default();
    let mut auto_increment = None;
    let stamp = crate::expr::now_utc_fsp(6);
    let mut checks: Pending = Vec::new();
    // The columns the statement leaves, by name (what a CHECK may use).
    let mut after: Vec<ColumnDef> = def.columns.clone();
    for sp in specs {
        match sp {
            Spec::AddColumn(c, at) => {
                let (column, fill) = column(c, &mut rb, &mut checks, stamp, def.collation)?;
                after.push(column.clone());
                rb.columns.push(ColumnChange::Add {
                    column,
                    at: at.clone(),
                    fill,
                });
            }
            Spec::DropColumn(n) => {
                after.retain(|c| !c.name.eq_ignore_ascii_case(n));
                rb.columns.push(ColumnChange::Drop(n.clone()));
            }
            Spec::ModifyColumn {
                from,
                column: c,
                at,
            } => {
                let (column, _) = column(c, &mut rb, &mut checks, stamp, def.collation)?;
                let from = from.clone().unwrap_or_else(|| column.name.clone());
                refuse_zone_retype(def, &from, &column)?;
                if let Some(x) = after
                    .iter_mut()
                    .find(|x| x.name.eq_ignore_ascii_case(&from))
                {
                    *x = column.clone();
                }
                rb.columns.push(ColumnChange::Modify {
                    from,
                    column,
                    at: at.clone(),
                });
            }
            Spec::AddPrimaryKey(cols, prefix) => {
                primary_prefix(def, cols, prefix)?;
                set_primary(&mut rb, cols.clone())?
            }
            Spec::DropPrimaryKey => rb.drop_primary = true,
            Spec::Force => {}
            Spec::AddIndex {
                name,
                unique,
                columns,
                prefix,
            } => rb.add_indexes.push(NewIndex {
                name: name.clone(),
                unique: *unique,
                columns: columns.clone(),
                prefix: prefix.clone(),
            }),
            Spec::AutoIncrement(n) => auto_increment = Some(*n),
            Spec::AddConstraint(c) => match &**c {
                ast::TableConstraint::Check(cc) => checks.push((cc, None)),
                _ => {
                    return Err(EngineError::not_supported(
                        "ALTER TABLE with ADD FOREIGN KEY and column or primary key changes",
                    ))
                }
            },
            other => {
                let ch = crate::alter_exec::change(s, def, other, &rb.meta)?;
                rb.meta.push(ch);
            }
        }
    }
    // Expressions of the statement's columns name columns as declared.
    for ch in rb.columns.iter_mut() {
        if let ColumnChange::Add { column, .. } | ColumnChange::Modify { column, .. } = ch {
            crate::generated::normalize_names(column, &after)?;
        }
    }
    let mut shape = def.clone();
    shape.columns = after;
    for (cc, only) in checks {
        let ch = crate::alter_exec::add_check(&shape, cc, only.as_deref(), &rb.meta)?;
        rb.meta.push(ch);
    }
    Ok((rb, auto_increment))
}

/// Runs the rebuild; returns the rows copied.
pub(crate) fn run(
    s: &mut Session,
    def: Arc<TableDef>,
    specs: &[Spec],
    lock: quire_engine::BuildLock,
) -> SqlResult<u64> {
    let (mut rb, auto_increment) = plan(s, &def, specs)?;
    rb.lock = lock;
    let (db, t) = (def.db.clone(), def.name.clone());
    // Held across the rebuild, the old definition would keep the old
    // trees until this statement ends.
    drop(def);
    let rows = with_checks(s, &db, &t, |engine, checks, interrupt| {
        engine
            .rebuild_table(&db, &t, &rb, Some(interrupt), checks)
            .map(|(_, n)| n)
    })?;
    if let Some(n) = auto_increment {
        s.engine()
            .alter_auto_increment(&db, &t, n, Some(s.interrupt()))?;
    }
    Ok(rows)
}

/// Runs `f` (the engine's rebuild of `db`.`t`) with the SQL layer's
/// callbacks: CHECKs verified on each copied row, the new columns'
/// row size and expressions checked, generated values computed.
pub(crate) fn with_checks<R>(
    s: &mut Session,
    db: &str,
    t: &str,
    f: impl FnOnce(
        &quire_engine::Engine,
        &AlterChecks<'_>,
        &quire_engine::Interrupt,
    ) -> quire_engine::Result<R>,
) -> SqlResult<R> {
    let fk_checks = s.fk_checks();
    let interrupt = s.interrupt().clone();
    s.with_ctx(&[], |cx, _txn| {
        // The CHECKs of the new definition, compiled on its first row.
        let compiled: RefCell<Option<TableChecks>> = RefCell::new(None);
        // Copied rows hold TIMESTAMPs as stored (UTC); CHECKs and
        // generated columns see them in session time, as in MySQL.
        let zone = crate::tz::engine_zone(&crate::tz::current());
        let verify = |d: &TableDef, row: &[Value]| -> quire_engine::Result<()> {
            let mut c = compiled.borrow_mut();
            if c.is_none() {
                *c = Some(TableChecks::compile(cx, d)?);
            }
            match &zone {
                Some(z) => {
                    let mut local = row.to_vec();
                    let ts = quire_engine::tszone::timestamp_columns(&d.columns);
                    quire_engine::tszone::row_to_local(&**z, &ts, &mut local);
                    c.as_ref().map_or(Ok(()), |c| c.verify(&local))
                }
                None => c.as_ref().map_or(Ok(()), |c| c.verify(row)),
            }
        };
        // The new table's columns: the row-size limit, and its generated
        // columns and DEFAULT expressions against the final column list.
        let row_size = |cols: &[ColumnDef]| -> quire_engine::Result<()> {
            crate::ddl::check_row_definition(cols)?;
            let mut v = cols.to_vec();
            crate::generated::validate_table(&mut v)?;
            crate::generated::compile_check(cx, db, t, &v)
        };
        // Generated values of each copied row (compiled on the first).
        let gen: RefCell<Option<TableGen>> = RefCell::new(None);
        let generate =
            |d: &TableDef, row: &mut [Value], fresh: &[bool], n: u64| -> quire_engine::Result<()> {
                let mut g = gen.borrow_mut();
                if g.is_none() {
                    *g = Some(TableGen::compile(cx, d)?);
                }
                let Some(g) = g.as_ref() else {
                    return Ok(());
                };
                let Some(z) = &zone else {
                    return g.rebuild_row(d, row, fresh, n);
                };
                // Computed in session time; the values it set go back to
                // the row as stored (a TIMESTAMP converted to UTC).
                let ts = quire_engine::tszone::timestamp_columns(&d.columns);
                let mut before = row.to_vec();
                quire_engine::tszone::row_to_local(&**z, &ts, &mut before);
                let mut local = before.clone();
                g.rebuild_row(d, &mut local, fresh, n)?;
                for (i, c) in d.columns.iter().enumerate() {
                    if local[i] == before[i] {
                        continue;
                    }
                    row[i] = match c.ty {
                        ColumnType::Timestamp { fsp } => quire_engine::tszone::store_timestamp(
                            &**z,
                            local[i].clone(),
                            fsp,
                            c.nullable,
                            &c.name,
                            n,
                        )?,
                        _ => local[i].clone(),
                    };
                }
                Ok(())
            };
        let checks = AlterChecks {
            foreign_key_checks: fk_checks,
            rows: Some(&verify),
            columns: Some(&row_size),
            generate: Some(&generate),
        };
        f(cx.engine, &checks, &interrupt)
    })
}
