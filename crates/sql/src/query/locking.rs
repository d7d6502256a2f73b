//! # Locking clauses of a query block
//!
//! MySQL 8.0's `FOR UPDATE | FOR SHARE [OF t [, t] ...] [NOWAIT | SKIP
//! LOCKED]` (and `LOCK IN SHARE MODE`), one or more per block, turned into
//! the lock each source of the block's `Join` is read with:
//!
//! * one clause without OF locks every table of the block, views' tables
//!   included (the binder hands it down as the block's lock, as before);
//! * otherwise each clause is applied in written order to the sources it
//!   names (OF: by alias, or by table name when there is none, `db.t` for
//!   an unaliased table of another database) or, without OF, to every base
//!   table of the FROM clause. A name the block does not have is 3568, a
//!   source locked by an earlier clause 3569 (the name backquoted when the
//!   clause named it, bare when a clause without OF met it), as MySQL
//!   reports them. Sources no clause names are read without locks.
//!
//! NOWAIT and SKIP LOCKED travel with the lock (`plan::ReadLock::wait`) to
//! the engine, which tries each row lock without queueing
//! (`quire_engine::LockWait`).

use quire_engine::{EngineError, LockMode, LockWait};
use sqlparser::ast::{self, Query};

use crate::ctx::split_name;
use crate::query::plan::{ReadLock, Source, SourceKind};
use crate::SqlResult;

/// One `FOR ...` clause.
#[derive(Debug, Clone)]
pub struct Clause {
    pub lock: ReadLock,
    /// The OF list (db, table); empty = every table of the block.
    pub of: Vec<(Option<String>, String)>,
}

/// What a query's locking clauses ask of its block.
pub enum Locking {
    /// No clause: the lock handed down from outside, if any.
    Inherit,
    /// One clause without OF: every table of the block.
    Block(ReadLock),
    /// Several clauses, or one with OF: source by source.
    PerSource(Vec<Clause>),
}

/// Reads the locking clauses of `q` (sqlparser's `LockClause`s; the parser
/// has already split `OF t1, t2` lists into one clause per name).
pub fn clauses(q: &Query) -> SqlResult<Locking> {
    let mut out = Vec::with_capacity(q.locks.len());
    for l in &q.locks {
        let mode = match l.lock_type {
            ast::LockType::Share => LockMode::Shared,
            ast::LockType::Update => LockMode::Exclusive,
        };
        let wait = match l.nonblock {
            None => LockWait::Wait,
            Some(ast::NonBlock::Nowait) => LockWait::NoWait,
            Some(ast::NonBlock::SkipLocked) => LockWait::SkipLocked,
        };
        let of = match &l.of {
            None => Vec::new(),
            Some(n) => vec![split_name(n)?],
        };
        out.push(Clause {
            lock: ReadLock { mode, wait },
            of,
        });
    }
    Ok(match out.as_slice() {
        [] => Locking::Inherit,
        [c] if c.of.is_empty() => Locking::Block(c.lock),
        _ => Locking::PerSource(out),
    })
}

/// Applies per-source clauses to a block's sources.
pub fn assign(sources: &mut [Source], clauses: &[Clause]) -> SqlResult<()> {
    for c in clauses {
        if c.of.is_empty() {
            for s in sources.iter_mut() {
                if !matches!(s.kind, SourceKind::Table { .. }) {
                    continue;
                }
                if s.lock.is_some() {
                    return Err(duplicate(&s.name));
                }
                s.lock = Some(c.lock);
            }
            continue;
        }
        for (db, table) in &c.of {
            let shown = quoted(db.as_deref(), table);
            let s = sources
                .iter_mut()
                .find(|s| names(s, db.as_deref(), table))
                .ok_or_else(|| unresolved(&shown))?;
            if !matches!(s.kind, SourceKind::Table { .. }) {
                return Err(EngineError::not_supported(
                    "FOR UPDATE/SHARE OF a derived table, view or common table expression",
                ));
            }
            if s.lock.is_some() {
                return Err(duplicate(&shown));
            }
            s.lock = Some(c.lock);
        }
    }
    Ok(())
}

/// Whether an OF name denotes source `s`.
fn names(s: &Source, db: Option<&str>, table: &str) -> bool {
    if !s.name.eq_ignore_ascii_case(table) {
        return false;
    }
    match (db, &s.kind) {
        (None, _) => true,
        (Some(d), SourceKind::Table { def, .. }) => {
            def.db.eq_ignore_ascii_case(d) && def.name.eq_ignore_ascii_case(table)
        }
        (Some(_), _) => false,
    }
}

fn quoted(db: Option<&str>, table: &str) -> String {
    match db {
        Some(d) => format!("`{d}`.`{table}`"),
        None => format!("`{table}`"),
    }
}

/// MySQL's ER_UNRESOLVED_TABLE_LOCK.
fn unresolved(name: &str) -> EngineError {
    EngineError::new(
        3568,
        "HY000",
        format!("Unresolved table name {name} in locking clause."),
    )
}

/// MySQL's ER_DUPLICATE_TABLE_LOCK.
fn duplicate(name: &str) -> EngineError {
    EngineError::new(
        3569,
        "HY000",
        format!("Table {name} appears in multiple locking clauses."),
    )
}
