//! # Running ALTER TABLE, RENAME TABLE and DROP INDEX
//!
//! Turns an [`AlterCmd`] (`alter.rs`) into engine calls: the metadata
//! specs become one `Engine::alter_table` (one catalog mini-transaction),
//! ADD INDEX goes through `Engine::create_index`, `AUTO_INCREMENT = n`
//! through `Engine::alter_auto_increment`, RENAME TABLE through
//! `Engine::rename_tables`. ALTER TABLE and DROP INDEX on a temporary
//! table go to `temp_alter.rs` (a copy, MySQL's only algorithm for them);
//! RENAME TABLE never sees temporary tables (MySQL 8.0).
//!
//! ALGORITHM and LOCK follow InnoDB's online DDL table: renames, column
//! defaults, index renames and ADD COLUMN at the end are INSTANT; DROP INDEX and AUTO_INCREMENT
//! are INPLACE (INSTANT is MySQL's 1845); ADD INDEX is INPLACE and online
//! (LOCK=NONE: readers and writers go on while it builds; SHARED keeps
//! writers out, EXCLUSIVE readers too; engine mdl.rs). Adding a FOREIGN
//! KEY or CHECK reads the rows with writers held off, a COPY in MySQL, so
//! LOCK=NONE is MySQL's 1846 for it. COPY gives the same table as quire's
//! in-place change and is accepted, with MySQL's 1846 for COPY with
//! LOCK=NONE; INSTANT with any LOCK but DEFAULT is MySQL's 1221.

use std::cell::RefCell;

use quire_engine::alter::AlterChecks;
use quire_engine::{BuildLock, ColumnDef, EngineError, RenamePair, TableChange, TableDef, Value};
use sqlparser::ast::{self, Expr};

use crate::alter::{Algorithm, AlterCmd, LockLevel, Spec};
use crate::constraints::TableChecks;
use crate::session::Session;
use crate::{Output, SqlResult};

fn done(info: &str) -> Output {
    Output::Done {
        affected_rows: 0,
        last_insert_id: 0,
        warnings: 0,
        info: info.to_string(),
    }
}

const RECORDS: &str = "Records: 0  Duplicates: 0  Warnings: 0";

/// Runs the statement (the session has committed its transaction).
pub(crate) fn run(s: &mut Session, cmd: &AlterCmd) -> SqlResult<Output> {
    match cmd {
        AlterCmd::Rename(pairs) => rename(s, pairs),
        AlterCmd::Table {
            name,
            specs,
            algorithm,
            lock,
            ..
        } => {
            let (db, t) = crate::show::table_db(s, name, None)?;
            if s.temps().contains(&db, &t) {
                return crate::temp_alter::alter(s, &db, &t, specs, *algorithm, *lock);
            }
            check_algorithm(specs, *algorithm, *lock)?;
            match alter(s, &db, &t, specs, *lock)? {
                None => Ok(done(RECORDS)),
                // A rebuild reports the rows it copied, as MySQL's COPY.
                Some(n) => Ok(Output::Done {
                    affected_rows: n,
                    last_insert_id: 0,
                    warnings: 0,
                    info: format!("Records: {n}  Duplicates: 0  Warnings: 0"),
                }),
            }
        }
    }
}

/// RENAME TABLE: permanent tables only, as MySQL 8.0 ("To rename
/// TEMPORARY tables, RENAME TABLE does not work. Use ALTER TABLE"): a
/// name a temporary table shadows renames the permanent table, a name
/// only a temporary table has is 1146.
fn rename(s: &mut Session, pairs: &[(ast::ObjectName, ast::ObjectName)]) -> SqlResult<Output> {
    let mut out = Vec::new();
    for (from, to) in pairs {
        out.push(RenamePair {
            from: crate::show::table_db(s, from, None)?,
            to: crate::show::table_db(s, to, None)?,
        });
    }
    s.engine().rename_tables(&out, Some(s.interrupt()))?;
    Ok(done(""))
}

/// How far InnoDB can go with a spec without copying the table.
#[derive(PartialEq, Eq, Clone, Copy)]
enum Kind {
    /// Metadata only, INSTANT.
    Instant,
    /// INPLACE, concurrent DML allowed.
    Inplace,
    /// INPLACE, builds an index (quire: writers wait).
    Build,
    /// Rebuilds the table by copying it (quire_engine::rebuild).
    Copy,
}

fn kind(spec: &Spec) -> Kind {
    if crate::alter_rebuild::rebuilds(spec) {
        return Kind::Copy;
    }
    match spec {
        Spec::Rename(_)
        | Spec::RenameColumn(..)
        | Spec::Default(..)
        | Spec::RenameIndex(..)
        | Spec::AddColumn(..) => Kind::Instant,
        Spec::DropIndex(_) | Spec::AutoIncrement(_) => Kind::Inplace,
        // Built online: writers go on (index_build.rs).
        Spec::AddIndex { .. } => Kind::Inplace,
        // InnoDB: dropping a key or check and NOT ENFORCED are INPLACE
        // metadata changes; adding a key is INPLACE with
        // foreign_key_checks=0; adding or enforcing a CHECK reads the rows
        // (COPY in MySQL, quire reads them in place with writers held off).
        Spec::DropForeignKey(_)
        | Spec::DropCheck(_)
        | Spec::DropConstraint(_)
        | Spec::EnforceCheck(_, false) => Kind::Inplace,
        Spec::AddConstraint(_) | Spec::EnforceCheck(_, true) => Kind::Build,
        Spec::DropColumn(_)
        | Spec::ModifyColumn { .. }
        | Spec::AddPrimaryKey(..)
        | Spec::DropPrimaryKey
        | Spec::Force => Kind::Copy,
    }
}

/// ALGORITHM / LOCK against what the specs can do (MySQL's 1845, 1846,
/// 1221).
fn check_algorithm(
    specs: &[Spec],
    algorithm: Option<Algorithm>,
    lock: Option<LockLevel>,
) -> SqlResult<()> {
    let lock = lock.unwrap_or(LockLevel::Default);
    let copies = specs.iter().any(|sp| kind(sp) == Kind::Copy) || adds_index_among_others(specs);
    match algorithm {
        Some(Algorithm::Instant) => {
            if lock != LockLevel::Default {
                return Err(EngineError::new(
                    1221,
                    "HY000",
                    "Incorrect usage of ALGORITHM=INSTANT and LOCK=NONE/SHARED/EXCLUSIVE",
                ));
            }
            if specs.iter().any(|sp| kind(sp) != Kind::Instant) {
                return Err(EngineError::new(
                    1845,
                    "0A000",
                    "ALGORITHM=INSTANT is not supported for this operation. Try ALGORITHM=COPY/INPLACE.",
                ));
            }
        }
        Some(Algorithm::Copy) if lock == LockLevel::None => {
            return Err(lock_none("COPY algorithm requires a lock"));
        }
        // InnoDB does many of these in place; quire copies the table.
        Some(Algorithm::Inplace) if copies => {
            return Err(EngineError::new(
                1846,
                "0A000",
                "ALGORITHM=INPLACE is not supported. Reason: quire rebuilds the table by copying it for column and primary key changes, and for ADD INDEX with other changes. Try ALGORITHM=COPY.",
            ));
        }
        _ => {}
    }
    let reads_rows = specs.iter().any(|sp| kind(sp) == Kind::Build);
    if lock == LockLevel::None && (copies || reads_rows) {
        return Err(lock_none("COPY algorithm requires a lock"));
    }
    Ok(())
}

fn lock_none(reason: &str) -> EngineError {
    EngineError::new(
        1846,
        "0A000",
        format!("LOCK=NONE is not supported. Reason: {reason}. Try LOCK=SHARED."),
    )
}

/// The specs of one ALTER TABLE on `db.t`: the rows a rebuild copied,
/// None when the table was changed in place.
fn alter(
    s: &mut Session,
    db: &str,
    t: &str,
    specs: &[Spec],
    lock: Option<LockLevel>,
) -> SqlResult<Option<u64>> {
    if s.engine().view(db, t).is_some() {
        return Err(quire_engine::view::err_wrong_object(db, t, "BASE TABLE"));
    }
    let def = s.engine().table(db, t)?;
    if specs.iter().any(crate::alter_rebuild::rebuilds) || adds_index_among_others(specs) {
        return crate::alter_rebuild::run(s, def, specs, build_lock(lock)).map(Some);
    }
    alter_in_place(s, &def, specs, build_lock(lock)).map(|()| None)
}

/// ADD INDEX or AUTO_INCREMENT with other changes: one rebuild makes
/// them all (MySQL does them in place; quire's in-place index build and
/// counter move each take a statement alone).
fn adds_index_among_others(specs: &[Spec]) -> bool {
    specs.len() > 1
        && specs
            .iter()
            .any(|sp| matches!(sp, Spec::AddIndex { .. } | Spec::AutoIncrement(_)))
}

/// Who waits while ADD INDEX builds or a rebuild copies: nobody unless
/// LOCK asks (SHARED: writers; EXCLUSIVE: readers and writers). A copy
/// keeps writers out whatever LOCK says (LOCK=NONE is refused for it).
fn build_lock(lock: Option<LockLevel>) -> BuildLock {
    match lock {
        Some(LockLevel::Shared) => BuildLock::Shared,
        Some(LockLevel::Exclusive) => BuildLock::Exclusive,
        Some(LockLevel::None | LockLevel::Default) | None => BuildLock::None,
    }
}

/// The specs of an ALTER TABLE that changes no row.
fn alter_in_place(
    s: &mut Session,
    def: &TableDef,
    specs: &[Spec],
    lock: BuildLock,
) -> SqlResult<()> {
    let (db, t) = (def.db.as_str(), def.name.as_str());
    // Alone in their statement (with company they go through a rebuild).
    for sp in specs {
        match sp {
            Spec::AddIndex {
                name,
                unique,
                columns,
                prefix,
            } => {
                return add_index(s, def, name.as_deref(), *unique, columns, prefix, lock);
            }
            Spec::AutoIncrement(n) => {
                return s
                    .engine()
                    .alter_auto_increment(db, t, *n, Some(s.interrupt()));
            }
            _ => {}
        }
    }
    if specs.is_empty() {
        return Ok(());
    }
    let mut changes = Vec::with_capacity(specs.len());
    for sp in specs {
        changes.push(change(s, def, sp, &changes)?);
    }
    let fk_checks = s.fk_checks();
    // Indexes the added foreign keys need, made first (and dropped again
    // if the keys are refused).
    let mut made: Vec<String> = Vec::new();
    for (sp, ch) in specs.iter().zip(&changes) {
        let fk = match sp {
            Spec::AddConstraint(c) => match &**c {
                ast::TableConstraint::ForeignKey(fk) => Some(fk),
                _ => None,
            },
            _ => None,
        };
        if let (Some(fk), TableChange::AddForeignKey(k)) = (fk, ch) {
            let now = s.engine().table(db, t)?;
            if quire_engine::txn::fk_serving_index(&now, &k.columns).is_none() {
                let base = crate::constraints::fk_index_name(fk, &now.columns, &k.columns);
                let name = quire_engine::rebuild::generated_index_name(&now, &base);
                s.engine().create_index(
                    db,
                    t,
                    &name,
                    false,
                    k.columns.clone(),
                    Some(s.interrupt()),
                )?;
                made.push(name);
            }
        }
    }
    let interrupt = s.interrupt().clone();
    let enforces = specs.iter().any(|sp| {
        matches!(sp, Spec::EnforceCheck(_, true))
            || matches!(sp, Spec::AddConstraint(c) if matches!(**c, ast::TableConstraint::Check(_)))
    });
    let r = s.with_ctx(&[], |cx, _txn| {
        // The CHECKs of the new definition, compiled on its first row.
        let compiled: RefCell<Option<TableChecks>> = RefCell::new(None);
        let verify = |d: &TableDef, row: &[Value]| -> quire_engine::Result<()> {
            let mut c = compiled.borrow_mut();
            if c.is_none() {
                *c = Some(TableChecks::compile(cx, d)?);
            }
            c.as_ref().map_or(Ok(()), |c| c.verify(row))
        };
        let checks = AlterChecks {
            foreign_key_checks: fk_checks,
            rows: enforces.then_some(&verify as &dyn Fn(&TableDef, &[Value]) -> _),
            columns: None,
            generate: None,
        };
        cx.engine
            .alter_table_with(db, t, &changes, Some(&interrupt), &checks)
    });
    if let Err(e) = r {
        for name in made {
            let _ =
                s.engine()
                    .alter_table(db, t, &[TableChange::DropIndex(name)], Some(s.interrupt()));
        }
        return Err(e);
    }
    Ok(())
}

/// One metadata spec as the engine's change (`earlier`: the statement's
/// changes before it, for generated constraint names).
pub(crate) fn change(
    s: &Session,
    def: &TableDef,
    sp: &Spec,
    earlier: &[TableChange],
) -> SqlResult<TableChange> {
    Ok(match sp {
        Spec::AddConstraint(c) => return add_constraint(def, c, earlier),
        Spec::DropForeignKey(n) => TableChange::DropForeignKey(n.clone()),
        Spec::DropCheck(n) => TableChange::DropCheck(n.clone()),
        Spec::DropConstraint(n) => TableChange::DropConstraint(n.clone()),
        Spec::EnforceCheck(n, on) => TableChange::EnforceCheck {
            name: n.clone(),
            enforced: *on,
        },
        Spec::Rename(to) => {
            let (db, name) = crate::show::table_db(s, to, None)?;
            TableChange::Rename { db, name }
        }
        Spec::RenameColumn(from, to) => TableChange::RenameColumn {
            from: from.clone(),
            to: to.clone(),
        },
        Spec::RenameIndex(from, to) => TableChange::RenameIndex {
            from: from.clone(),
            to: to.clone(),
        },
        Spec::DropIndex(name) => TableChange::DropIndex(name.clone()),
        Spec::Default(col, e) => {
            let c = def.column(col).map(|i| &def.columns[i]).ok_or_else(|| {
                EngineError::new(
                    1054,
                    "42S22",
                    format!("Unknown column '{col}' in '{}'", def.name),
                )
            })?;
            let value = match e {
                Some(e) => Some(default_of(e, c)?),
                None => None,
            };
            TableChange::Default {
                column: col.clone(),
                value,
            }
        }
        Spec::AddColumn(c, at) => {
            match crate::alter_rebuild::instant_column(c, at, def.collation) {
                Some(col) => TableChange::AddColumnInstant(col),
                None => {
                    return Err(EngineError::internal(
                        "a rebuilding ADD COLUMN reached the metadata path",
                    ))
                }
            }
        }
        Spec::AddIndex { .. }
        | Spec::AutoIncrement(_)
        | Spec::DropColumn(_)
        | Spec::ModifyColumn { .. }
        | Spec::AddPrimaryKey(..)
        | Spec::DropPrimaryKey
        | Spec::Force => {
            return Err(EngineError::internal(
                "a row-changing ALTER TABLE spec reached the metadata path",
            ))
        }
    })
}

/// `ADD CHECK` / `ADD FOREIGN KEY` as the engine's change.
fn add_constraint(
    def: &TableDef,
    c: &ast::TableConstraint,
    earlier: &[TableChange],
) -> SqlResult<TableChange> {
    Ok(match c {
        ast::TableConstraint::Check(cc) => return add_check(def, cc, None, earlier),
        ast::TableConstraint::ForeignKey(fk) => {
            let mut taken: Vec<String> = def.foreign_keys.iter().map(|f| f.name.clone()).collect();
            taken.extend(earlier.iter().filter_map(|c| match c {
                TableChange::AddForeignKey(k) => Some(k.name.clone()),
                _ => None,
            }));
            let name =
                crate::constraints::name_or_next(fk.name.as_ref(), &def.name, "ibfk", &taken);
            TableChange::AddForeignKey(crate::constraints::fk_def(fk, name, &def.columns, &def.db)?)
        }
        other => return Err(EngineError::not_supported(format!("ADD {other}"))),
    })
}

/// A CHECK added to `def` (whose columns are those the check may name;
/// `only`: the column of a column-level CHECK), named after the table's
/// and the statement's `earlier` checks.
pub(crate) fn add_check(
    def: &TableDef,
    cc: &ast::CheckConstraint,
    only: Option<&str>,
    earlier: &[TableChange],
) -> SqlResult<TableChange> {
    let mut taken: Vec<String> = def.checks.iter().map(|c| c.name.clone()).collect();
    taken.extend(earlier.iter().filter_map(|c| match c {
        TableChange::AddCheck(k) => Some(k.name.clone()),
        _ => None,
    }));
    let name = crate::constraints::name_or_next(cc.name.as_ref(), &def.name, "chk", &taken);
    Ok(TableChange::AddCheck(crate::constraints::check_def(
        name,
        &cc.expr,
        cc.enforced,
        &def.columns,
        only,
    )?))
}

/// `SET DEFAULT literal` as a value of the column's type (1067 when it
/// does not fit, as CREATE TABLE's DEFAULT).
fn default_of(e: &Expr, c: &ColumnDef) -> SqlResult<Value> {
    let invalid = || {
        EngineError::new(
            1067,
            "42000",
            format!("Invalid default value for '{}'", c.name),
        )
    };
    if c.auto_increment {
        return Err(invalid());
    }
    let v = crate::ddl::default_value(e)?;
    if v.is_null() {
        return if c.nullable {
            Ok(Value::Null)
        } else {
            Err(invalid())
        };
    }
    quire_engine::types::coerce(v, &c.ty, c.nullable, &c.name, 1).map_err(|_| invalid())
}

/// ADD [UNIQUE] INDEX [name] (cols): 1072 for a column the table lacks,
/// MySQL's generated name (the first column's, then `_2`, `_3`, ...).
fn add_index(
    s: &mut Session,
    def: &TableDef,
    name: Option<&str>,
    unique: bool,
    columns: &[String],
    prefix: &[Option<u32>],
    lock: BuildLock,
) -> SqlResult<()> {
    let mut cols = Vec::new();
    for c in columns {
        cols.push(def.column(c).ok_or_else(|| {
            EngineError::new(
                1072,
                "42000",
                format!("Key column '{c}' doesn't exist in table"),
            )
        })?);
    }
    let name = match (name, cols.first()) {
        (Some(n), _) => n.to_string(),
        (None, Some(&c)) => quire_engine::rebuild::generated_index_name(def, &def.columns[c].name),
        (None, None) => return Err(crate::parse::syntax_error(")")),
    };
    if name.eq_ignore_ascii_case("PRIMARY") {
        return Err(EngineError::new(
            1280,
            "42000",
            format!("Incorrect index name '{name}'"),
        ));
    }
    let spec = quire_engine::IndexSpec {
        name,
        unique,
        columns: cols,
        prefix: prefix.to_vec(),
    };
    s.engine()
        .create_index_with(&def.db, &def.name, spec, lock, Some(s.interrupt()))?;
    Ok(())
}
