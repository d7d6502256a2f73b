//! # Authorize: what a statement touches, checked before it runs
//!
//! `privilege.rs` holds the model; this module reads a parsed statement
//! and asks the [`Checker`] for each (database, table, privilege,
//! columns) the statement touches, the way MySQL's `check_access` /
//! `check_table_access` / `check_grant_column` do at the start of a
//! statement:
//!
//! ```text
//!   SELECT ... FROM a JOIN b WHERE x IN (SELECT .. FROM c)   SELECT on a, b, c
//!     ... FOR UPDATE / FOR SHARE / LOCK IN SHARE MODE        + one of UPDATE, DELETE,
//!                                                            LOCK TABLES on a, b (8.0.22+)
//!   INSERT INTO t [(cols)] [SELECT .. FROM s]                INSERT on t (cols), SELECT on s
//!     ... ON DUPLICATE KEY UPDATE / REPLACE                  + UPDATE / + DELETE on t
//!   UPDATE t SET c = e WHERE w                               UPDATE on t (c), SELECT on
//!                                                            the columns of t that e, w read
//!   DELETE FROM t WHERE w                                    DELETE on t, SELECT as above
//!   CREATE/DROP TABLE, TRUNCATE, CREATE INDEX, ALTER         CREATE / DROP / DROP / INDEX / ALTER
//!   CREATE/DROP DATABASE                                     CREATE / DROP on db.*    (1044)
//!   USE db, SHOW TABLES FROM db                              any privilege in db      (1044)
//!   SET GLOBAL                                               SYSTEM_VARIABLES_ADMIN   (1227)
//!   FLUSH                                                    RELOAD                   (1227)
//! ```
//!
//! Tables are found with sqlparser's visitor, so a table in any subquery,
//! derived table or CTE body is seen; CTE names and `DUAL` are not tables.
//! `information_schema` and `performance_schema` are readable by every
//! account, as in MySQL (quire serves only server-wide views there).
//! The common case costs one pass over the statement and, per table, a
//! lookup in the account's sorted grant lists; columns are resolved only
//! for a table the account reaches through column grants alone.

use std::ops::ControlFlow;

use quire_engine::{Engine, EngineError};
use sqlparser::ast::{
    self, visit_expressions, Expr, FromTable, ObjectName, ObjectType, SelectItem, Statement,
    TableFactor, TableObject, Visit, Visitor,
};

use crate::parse::{Command, Scope, SetItem, Show};
use crate::privilege::{specific_denied, AccountPrivs, Checker, Privs};
use crate::SqlResult;

/// What a statement runs against: the current database and the engine
/// (for the column list behind `*` in column-level checks).
pub(crate) struct Target<'a> {
    pub ck: &'a Checker<'a>,
    pub db: Option<&'a str>,
    pub engine: &'a Engine,
    /// The statement ended in `LOCK IN SHARE MODE` (cut off by the parser).
    pub share_lock: bool,
    /// The privileges of a view's definer (SQL SECURITY DEFINER); `None`
    /// when the account does not exist.
    pub definer: &'a dyn Fn(&str, &str) -> Option<std::sync::Arc<AccountPrivs>>,
    /// How many views deep the check is (a view inside itself is the
    /// binder's 1462; the check stops looking).
    pub depth: usize,
    /// The session's temporary tables: its own, used without further
    /// privileges once created (None inside a view, which never names
    /// one).
    pub temps: Option<&'a crate::temp::TempTables>,
}

fn is_open_schema(db: &str) -> bool {
    db.eq_ignore_ascii_case("information_schema") || db.eq_ignore_ascii_case("performance_schema")
}

impl Target<'_> {
    /// Whether `db.t` is one of the session's temporary tables.
    fn is_temp(&self, db: &str, t: &str) -> bool {
        self.temps.is_some_and(|m| m.contains(db, t))
    }

    /// (db, table) of a name, `None` when unqualified without a current
    /// database (the statement then fails with 1046 on its own).
    fn resolve(&self, n: &ObjectName) -> SqlResult<Option<(String, String)>> {
        let (db, t) = crate::exec::split_name(n)?;
        Ok(match db {
            Some(d) => Some((d, t)),
            None => self.db.map(|d| (d.to_string(), t)),
        })
    }

    /// `need` on a named table, columns given by `cols` when only column
    /// grants could satisfy it.
    fn table_cols(
        &self,
        db: &str,
        t: &str,
        need: Privs,
        cols: impl FnOnce(&Engine) -> Vec<String>,
    ) -> SqlResult<()> {
        if need.is_empty() || (need == Privs::SELECT && is_open_schema(db)) || self.is_temp(db, t) {
            return Ok(());
        }
        if self.ck.needs_columns(db, t, need) {
            let list = cols(self.engine);
            return self
                .ck
                .columns(db, t, need, list.iter().map(String::as_str));
        }
        self.ck.table(db, t, need)
    }

    fn table(&self, n: &ObjectName, need: Privs) -> SqlResult<()> {
        if let Some((db, t)) = self.resolve(n)? {
            if need == Privs::SELECT && is_open_schema(&db) {
                return Ok(());
            }
            if self.is_temp(&db, &t) {
                return Ok(());
            }
            self.ck.table(&db, &t, need)?;
        }
        Ok(())
    }

    /// `need` on a permanent table by name, whether or not a temporary
    /// table shadows it (RENAME TABLE, which never sees temporary ones).
    fn permanent_table(&self, n: &ObjectName, need: Privs) -> SqlResult<()> {
        if let Some((db, t)) = self.resolve(n)? {
            self.ck.table(&db, &t, need)?;
        }
        Ok(())
    }

    fn all_columns(engine: &Engine, db: &str, t: &str) -> Vec<String> {
        engine
            .table(db, t)
            .map(|d| d.columns.iter().map(|c| c.name.clone()).collect())
            .unwrap_or_default()
    }
}

/// The tables a statement (or part of one) reads, each checked for
/// SELECT as it is met.
struct Reads<'a, 'b> {
    tg: &'b Target<'a>,
    ctes: Vec<String>,
    /// Tables reachable only through column grants: (db, table, alias).
    by_column: Vec<(String, String, Option<String>)>,
}

impl Reads<'_, '_> {
    fn relation(&mut self, name: &ObjectName, alias: Option<&str>) -> SqlResult<()> {
        let (qualified, t) = crate::exec::split_name(name)?;
        if qualified.is_none()
            && (t.eq_ignore_ascii_case("dual") || self.ctes.iter().any(|c| c == &t))
        {
            return Ok(());
        }
        let Some((db, t)) = self.tg.resolve(name)? else {
            return Ok(());
        };
        if is_open_schema(&db) || self.tg.is_temp(&db, &t) {
            return Ok(());
        }
        if self.tg.ck.needs_columns(&db, &t, Privs::SELECT) {
            self.by_column
                .push((db.clone(), t.clone(), alias.map(str::to_string)));
        } else {
            self.tg.ck.table(&db, &t, Privs::SELECT)?;
        }
        match self.tg.engine.view(&db, &t) {
            Some(v) => view_body(self.tg, &v, Privs::NONE),
            None => Ok(()),
        }
    }
}

/// What a view's SELECT reads (and, for a write through it, `write` on
/// the table below it), checked in the view's security context: the
/// invoker's privileges (SQL SECURITY INVOKER) or its definer's. A
/// missing privilege there is MySQL's 1356; a definer that no longer
/// exists 1449.
fn view_body(tg: &Target, v: &quire_engine::ViewDef, write: Privs) -> SqlResult<()> {
    if tg.depth >= 64 {
        return Ok(());
    }
    let Ok(q) = crate::parse::parse_query(&v.body) else {
        return Ok(()); // the binder reports the broken view (1356)
    };
    let held;
    let definer_ck;
    let ck = if v.security_invoker {
        tg.ck
    } else {
        held = (tg.definer)(&v.definer_user, &v.definer_host).ok_or_else(|| {
            EngineError::new(
                1449,
                "HY000",
                format!(
                    "The user specified as a definer ('{}'@'{}') does not exist",
                    v.definer_user, v.definer_host
                ),
            )
        })?;
        definer_ck = Checker {
            privs: &held,
            user: &v.definer_user,
            account_host: &v.definer_host,
            client_host: &v.definer_host,
        };
        &definer_ck
    };
    let inner = Target {
        ck,
        db: Some(&v.db),
        engine: tg.engine,
        share_lock: false,
        definer: tg.definer,
        depth: tg.depth + 1,
        temps: None,
    };
    let r = check_reads(&inner, &q, &|m| mentions_in(m, &q)).and_then(|_| {
        if write.is_empty() {
            return Ok(());
        }
        let ast::SetExpr::Select(sel) = &*q.body else {
            return Ok(());
        };
        let Some(TableFactor::Table { name, .. }) = sel.from.first().map(|f| &f.relation) else {
            return Ok(());
        };
        let Some((db, t)) = inner.resolve(name)? else {
            return Ok(());
        };
        inner.ck.table(&db, &t, write)?;
        match inner.engine.view(&db, &t) {
            Some(iv) => view_body(&inner, &iv, write),
            None => Ok(()),
        }
    });
    r.map_err(|e| match e.code {
        1142 | 1143 => crate::query::bind::err_invalid_view(v),
        _ => e,
    })
}

/// A write's target that is a view: `write` on what is below it, in
/// the view's security context.
fn view_target(tg: &Target, n: &ObjectName, write: Privs) -> SqlResult<()> {
    let Some((db, t)) = tg.resolve(n)? else {
        return Ok(());
    };
    match tg.engine.view(&db, &t) {
        Some(v) => view_body(tg, &v, write),
        None => Ok(()),
    }
}

impl Visitor for Reads<'_, '_> {
    type Break = EngineError;
    fn pre_visit_query(&mut self, q: &ast::Query) -> ControlFlow<EngineError> {
        if let Some(w) = &q.with {
            for c in &w.cte_tables {
                self.ctes.push(c.alias.name.value.clone());
            }
        }
        ControlFlow::Continue(())
    }
    fn pre_visit_table_factor(&mut self, tf: &TableFactor) -> ControlFlow<EngineError> {
        if let TableFactor::Table { name, alias, .. } = tf {
            let alias = alias.as_ref().map(|a| a.name.value.as_str());
            if let Err(e) = self.relation(name, alias) {
                return ControlFlow::Break(e);
            }
        }
        ControlFlow::Continue(())
    }
}

/// Column names a statement mentions: `(qualifier, column)`, and the
/// qualifiers of `*` (`None` = a bare `*`).
#[derive(Default)]
struct Mentions {
    cols: Vec<(Option<String>, String)>,
    stars: Vec<Option<String>>,
}

impl Visitor for Mentions {
    type Break = ();
    fn pre_visit_expr(&mut self, e: &Expr) -> ControlFlow<()> {
        match e {
            Expr::Identifier(i) => self.cols.push((None, i.value.clone())),
            Expr::CompoundIdentifier(parts) if parts.len() >= 2 => {
                let n = parts.len();
                self.cols
                    .push((Some(parts[n - 2].value.clone()), parts[n - 1].value.clone()));
            }
            _ => {}
        }
        ControlFlow::Continue(())
    }
    fn pre_visit_select(&mut self, s: &ast::Select) -> ControlFlow<()> {
        for item in &s.projection {
            match item {
                SelectItem::Wildcard(_) => self.stars.push(None),
                SelectItem::QualifiedWildcard(kind, _) => {
                    let q = kind.to_string();
                    let last = q.rsplit('.').next().unwrap_or(&q).trim_matches('`');
                    self.stars.push(Some(last.to_string()));
                }
                _ => {}
            }
        }
        ControlFlow::Continue(())
    }
}

impl Mentions {
    /// The columns of `db.t` (known as `alias`) that are mentioned.
    fn of(&self, engine: &Engine, db: &str, t: &str, alias: Option<&str>) -> Vec<String> {
        let names = Target::all_columns(engine, db, t);
        let mine = |q: &Option<String>| match q {
            None => true,
            Some(q) => alias.map_or(q.eq_ignore_ascii_case(t), |a| q == a),
        };
        if self.stars.iter().any(mine) {
            return names;
        }
        names
            .into_iter()
            .filter(|c| {
                self.cols
                    .iter()
                    .any(|(q, n)| n.eq_ignore_ascii_case(c) && mine(q))
            })
            .collect()
    }
}

/// SELECT on every table `node` reads (subqueries, joins, CTE bodies).
fn check_reads<V: Visit>(tg: &Target, node: &V, whole: &dyn Fn(&mut Mentions)) -> SqlResult<()> {
    let mut r = Reads {
        tg,
        ctes: Vec::new(),
        by_column: Vec::new(),
    };
    if let ControlFlow::Break(e) = node.visit(&mut r) {
        return Err(e);
    }
    if r.by_column.is_empty() {
        return Ok(());
    }
    let mut m = Mentions::default();
    whole(&mut m);
    for (db, t, alias) in &r.by_column {
        let cols = m.of(tg.engine, db, t, alias.as_deref());
        tg.ck
            .columns(db, t, Privs::SELECT, cols.iter().map(String::as_str))?;
    }
    Ok(())
}

fn mentions_in<V: Visit>(m: &mut Mentions, node: &V) {
    let _ = node.visit(m);
}

/// Whether `e` reads a column.
fn reads_columns(e: &Expr) -> bool {
    let mut found = false;
    let _ = visit_expressions(e, |x| {
        if matches!(x, Expr::Identifier(_) | Expr::CompoundIdentifier(_)) {
            found = true;
            return ControlFlow::Break(());
        }
        ControlFlow::Continue(())
    });
    found
}

fn target_name(tf: &TableFactor) -> Option<(&ObjectName, Option<&str>)> {
    match tf {
        TableFactor::Table { name, alias, .. } => {
            Some((name, alias.as_ref().map(|a| a.name.value.as_str())))
        }
        _ => None,
    }
}

fn assign_cols(a: &[ast::Assignment]) -> Vec<String> {
    let mut out = Vec::new();
    for x in a {
        let names: Vec<&ObjectName> = match &x.target {
            ast::AssignmentTarget::ColumnName(n) => vec![n],
            ast::AssignmentTarget::Tuple(v) => v.iter().collect(),
        };
        for n in names {
            if let Some(last) = n.0.last().and_then(|p| p.as_ident()) {
                out.push(last.value.clone());
            }
        }
    }
    out
}

/// The base tables of a FROM list: (name, alias), nested joins included.
fn factors(list: &[ast::TableWithJoins]) -> Vec<(&ObjectName, Option<&str>)> {
    fn add<'a>(tf: &'a TableFactor, out: &mut Vec<(&'a ObjectName, Option<&'a str>)>) {
        match tf {
            TableFactor::NestedJoin {
                table_with_joins, ..
            } => {
                add(&table_with_joins.relation, out);
                for j in &table_with_joins.joins {
                    add(&j.relation, out);
                }
            }
            other => out.extend(target_name(other)),
        }
    }
    let mut out = Vec::new();
    for twj in list {
        add(&twj.relation, &mut out);
        for j in &twj.joins {
            add(&j.relation, &mut out);
        }
    }
    out
}

/// The factor a target name refers to: its alias, or its table name
/// when it has none.
fn factor_named(fs: &[(&ObjectName, Option<&str>)], name: &str) -> Option<usize> {
    fs.iter().position(|(n, a)| match a {
        Some(a) => a.eq_ignore_ascii_case(name),
        None => {
            n.0.last()
                .and_then(|p| p.as_ident())
                .is_some_and(|i| i.value.eq_ignore_ascii_case(name))
        }
    })
}

/// A multi-table statement: `need` on each target (UPDATE with the
/// columns it sets, or DELETE), SELECT on the columns of a target the
/// statement reads, and SELECT on every table it only reads (and on the
/// tables of its subqueries), as MySQL's `multi_update_precheck` /
/// `multi_delete_precheck`.
fn check_targets(
    tg: &Target,
    stmt: &Statement,
    fs: &[(&ObjectName, Option<&str>)],
    targets: &[(usize, Privs, Vec<String>)],
    reads: bool,
) -> SqlResult<()> {
    for (i, (name, alias)) in fs.iter().enumerate() {
        let Some((db, t)) = tg.resolve(name)? else {
            continue;
        };
        let mine: Vec<&(usize, Privs, Vec<String>)> = targets.iter().filter(|x| x.0 == i).collect();
        if mine.is_empty() {
            let mut r = Reads {
                tg,
                ctes: Vec::new(),
                by_column: Vec::new(),
            };
            r.relation(name, *alias)?;
            for (db, t, alias) in &r.by_column {
                let mut m = Mentions::default();
                mentions_in(&mut m, stmt);
                let cols = m.of(tg.engine, db, t, alias.as_deref());
                tg.ck
                    .columns(db, t, Privs::SELECT, cols.iter().map(String::as_str))?;
            }
            continue;
        }
        for (_, need, cols) in mine {
            let cols = cols.clone();
            tg.table_cols(&db, &t, *need, |e| {
                if cols.is_empty() {
                    Target::all_columns(e, &db, &t)
                } else {
                    cols
                }
            })?;
        }
        if reads && !tg.ck.privs.on_table(&db, &t).has(Privs::SELECT) {
            let mut m = Mentions::default();
            mentions_in(&mut m, stmt);
            tg.table_cols(&db, &t, Privs::SELECT, |e| m.of(e, &db, &t, *alias))?;
        }
    }
    Ok(())
}

/// `UPDATE t1 JOIN t2 ... SET ...`.
fn check_multi_update(tg: &Target, stmt: &Statement, u: &ast::Update) -> SqlResult<()> {
    let list = std::slice::from_ref(&u.table);
    let fs = factors(list);
    let mut targets: Vec<(usize, Privs, Vec<String>)> = Vec::new();
    for a in &u.assignments {
        let ast::AssignmentTarget::ColumnName(n) = &a.target else {
            continue;
        };
        let parts: Vec<&str> =
            n.0.iter()
                .filter_map(|p| p.as_ident().map(|i| i.value.as_str()))
                .collect();
        let (qual, col) = match parts.as_slice() {
            [c] => (None, *c),
            [.., q, c] => (Some(*q), *c),
            [] => continue,
        };
        let fi = match qual {
            Some(q) => factor_named(&fs, q),
            // Unqualified: the table that has the column.
            None => fs.iter().position(|(n, _)| {
                tg.resolve(n).ok().flatten().is_some_and(|(d, t)| {
                    tg.engine
                        .table(&d, &t)
                        .is_ok_and(|def| def.column(col).is_some())
                })
            }),
        };
        // An unresolvable target fails when the statement runs (1054).
        let Some(fi) = fi else { continue };
        match targets.iter_mut().find(|x| x.0 == fi) {
            Some(x) => x.2.push(col.to_string()),
            None => targets.push((fi, Privs::UPDATE, vec![col.to_string()])),
        }
    }
    let reads = u.selection.as_ref().is_some_and(reads_columns)
        || u.assignments.iter().any(|a| reads_columns(&a.value))
        || u.table.joins.iter().any(|j| {
            !matches!(
                j.join_operator,
                ast::JoinOperator::CrossJoin(ast::JoinConstraint::None)
            )
        });
    check_targets(tg, stmt, &fs, &targets, reads)?;
    if let Some(s) = &u.selection {
        check_reads(tg, s, &|m| mentions_in(m, stmt))?;
    }
    for a in &u.assignments {
        check_reads(tg, &a.value, &|m| mentions_in(m, stmt))?;
    }
    Ok(())
}

/// `DELETE t1, t2 FROM ...` / `DELETE FROM t1, t2 USING ...`.
fn check_multi_delete(tg: &Target, stmt: &Statement, d: &ast::Delete) -> SqlResult<()> {
    let from = match &d.from {
        FromTable::WithFromKeyword(v) | FromTable::WithoutKeyword(v) => v,
    };
    let (names, list): (Vec<&ObjectName>, &[ast::TableWithJoins]) = match &d.using {
        Some(using) => (
            from.iter()
                .filter_map(|t| target_name(&t.relation).map(|(n, _)| n))
                .collect(),
            using,
        ),
        None => (d.tables.iter().collect(), from),
    };
    let fs = factors(list);
    let mut targets: Vec<(usize, Privs, Vec<String>)> = Vec::new();
    for n in names {
        let last =
            n.0.last()
                .and_then(|p| p.as_ident())
                .map(|i| i.value.as_str());
        // An unknown target fails when the statement runs (1109).
        if let Some(fi) = last.and_then(|l| factor_named(&fs, l)) {
            targets.push((fi, Privs::DELETE, Vec::new()));
        }
    }
    // DELETE needs no column list; `all_columns` is only consulted for
    // column-level grants, which DELETE does not have.
    let reads = d.selection.as_ref().is_some_and(reads_columns) || fs.len() > 1;
    check_targets(tg, stmt, &fs, &targets, reads)?;
    if let Some(s) = &d.selection {
        check_reads(tg, s, &|m| mentions_in(m, stmt))?;
    }
    Ok(())
}

/// Checks a SQL statement (sqlparser's AST).
fn check_sql(tg: &Target, stmt: &Statement) -> SqlResult<()> {
    let ck = tg.ck;
    match stmt {
        Statement::Query(q) => {
            check_reads(tg, &**q, &|m| mentions_in(m, &**q))?;
            if tg.share_lock || !q.locks.is_empty() {
                check_locking(tg, q)?;
            }
            Ok(())
        }
        Statement::Insert(ins) => {
            let TableObject::TableName(name) = &ins.table else {
                return Ok(());
            };
            if let Some((db, t)) = tg.resolve(name)? {
                let mut need = Privs::INSERT;
                if ins.replace_into {
                    need = need.union(Privs::DELETE);
                }
                let cols: Vec<String> = ins
                    .columns
                    .iter()
                    .filter_map(|c| c.0.last().and_then(|p| p.as_ident()))
                    .map(|i| i.value.clone())
                    .collect();
                tg.table_cols(&db, &t, need, |e| {
                    if cols.is_empty() {
                        Target::all_columns(e, &db, &t)
                    } else {
                        cols.clone()
                    }
                })?;
                if let Some(ast::OnInsert::DuplicateKeyUpdate(a)) = &ins.on {
                    let set = assign_cols(a);
                    tg.table_cols(&db, &t, Privs::UPDATE, |_| set)?;
                }
            }
            view_target(tg, name, Privs::INSERT)?;
            if let Some(src) = &ins.source {
                check_reads(tg, &**src, &|m| mentions_in(m, &**src))?;
            }
            Ok(())
        }
        Statement::Update(u) if !u.table.joins.is_empty() => check_multi_update(tg, stmt, u),
        Statement::Delete(d) if crate::exec_multi::is_multi_delete(d) => {
            check_multi_delete(tg, stmt, d)
        }
        Statement::Update(u) => {
            if let Some((name, alias)) = target_name(&u.table.relation) {
                if let Some((db, t)) = tg.resolve(name)? {
                    let set = assign_cols(&u.assignments);
                    tg.table_cols(&db, &t, Privs::UPDATE, |_| set)?;
                    let reads = u.selection.as_ref().is_some_and(reads_columns)
                        || u.assignments.iter().any(|a| reads_columns(&a.value));
                    if reads && !ck.privs.on_table(&db, &t).has(Privs::SELECT) {
                        let mut m = Mentions::default();
                        if let Some(s) = &u.selection {
                            mentions_in(&mut m, s);
                        }
                        for a in &u.assignments {
                            mentions_in(&mut m, &a.value);
                        }
                        tg.table_cols(&db, &t, Privs::SELECT, |e| m.of(e, &db, &t, alias))?;
                    }
                }
                view_target(tg, name, Privs::UPDATE)?;
            }
            for j in &u.table.joins {
                check_reads(tg, &j.relation, &|m| mentions_in(m, stmt))?;
            }
            if let Some(s) = &u.selection {
                check_reads(tg, s, &|m| mentions_in(m, stmt))?;
            }
            for a in &u.assignments {
                check_reads(tg, &a.value, &|m| mentions_in(m, stmt))?;
            }
            Ok(())
        }
        Statement::Delete(d) => {
            let from = match &d.from {
                FromTable::WithFromKeyword(v) | FromTable::WithoutKeyword(v) => v,
            };
            let mut targets: Vec<(&ObjectName, Option<&str>)> = Vec::new();
            if d.tables.is_empty() {
                for twj in from {
                    targets.extend(target_name(&twj.relation));
                }
            } else {
                targets.extend(d.tables.iter().map(|n| (n, None)));
                for twj in from {
                    check_reads(tg, twj, &|m| mentions_in(m, stmt))?;
                }
            }
            for (name, alias) in targets {
                tg.table(name, Privs::DELETE)?;
                view_target(tg, name, Privs::DELETE)?;
                if let Some((db, t)) = tg.resolve(name)? {
                    let reads = d.selection.as_ref().is_some_and(reads_columns);
                    if reads && !ck.privs.on_table(&db, &t).has(Privs::SELECT) {
                        let mut m = Mentions::default();
                        if let Some(s) = &d.selection {
                            mentions_in(&mut m, s);
                        }
                        tg.table_cols(&db, &t, Privs::SELECT, |e| m.of(e, &db, &t, alias))?;
                    }
                }
            }
            if let Some(s) = &d.selection {
                check_reads(tg, s, &|m| mentions_in(m, stmt))?;
            }
            Ok(())
        }
        Statement::CreateDatabase { db_name, .. } => {
            let (_, name) = crate::exec::split_name(db_name)?;
            ck.db(&name, Privs::CREATE)
        }
        Statement::CreateSchema { schema_name, .. } => {
            let name = schema_name.to_string().trim_matches('`').to_string();
            ck.db(&name, Privs::CREATE)
        }
        Statement::CreateTable(ct) if ct.temporary => {
            // CREATE TEMPORARY TABLES on the database; the new table is
            // the session's own from then on (an INSERT of ... SELECT
            // needs nothing more). LIKE and SELECT read their sources.
            if let Some((db, _)) = tg.resolve(&ct.name)? {
                ck.db(&db, Privs::CREATE_TMP)?;
            }
            if let Some(
                ast::CreateTableLikeKind::Plain(l) | ast::CreateTableLikeKind::Parenthesized(l),
            ) = &ct.like
            {
                tg.table(&l.name, Privs::SELECT)?;
            }
            if let Some(q) = &ct.query {
                check_reads(tg, &**q, &|m| mentions_in(m, &**q))?;
            }
            Ok(())
        }
        Statement::CreateTable(ct) => {
            tg.table(&ct.name, Privs::CREATE)?;
            // LIKE reads the source's definition: SELECT on it (MySQL).
            if let Some(
                ast::CreateTableLikeKind::Plain(l) | ast::CreateTableLikeKind::Parenthesized(l),
            ) = &ct.like
            {
                tg.table(&l.name, Privs::SELECT)?;
            }
            if let Some(q) = &ct.query {
                // The rows go in as an INSERT: INSERT on the new table too.
                tg.table(&ct.name, Privs::INSERT)?;
                check_reads(tg, &**q, &|m| mentions_in(m, &**q))?;
            }
            Ok(())
        }
        Statement::CreateIndex(ci) => tg.table(&ci.table_name, Privs::INDEX),
        Statement::Drop {
            object_type, names, ..
        } => match object_type {
            ObjectType::Table => {
                for n in names {
                    tg.table(n, Privs::DROP)?;
                }
                Ok(())
            }
            ObjectType::Schema | ObjectType::Database => {
                for n in names {
                    let (_, db) = crate::exec::split_name(n)?;
                    ck.db(&db, Privs::DROP)?;
                }
                Ok(())
            }
            ObjectType::View => {
                for n in names {
                    tg.table(n, Privs::DROP)?;
                }
                Ok(())
            }
            _ => Ok(()),
        },
        Statement::Truncate(tr) => {
            for tn in &tr.table_names {
                tg.table(&tn.name, Privs::DROP)?;
            }
            Ok(())
        }
        Statement::AlterTable(at) => tg.table(&at.name, Privs::ALTER),
        Statement::CreateView(cv) => tg.table(&cv.name, Privs::CREATE_VIEW),
        Statement::LockTables { tables } => {
            for lt in tables {
                let name = ObjectName::from(vec![lt.table.clone()]);
                tg.table(&name, Privs::SELECT.union(Privs::LOCK_TABLES))?;
            }
            Ok(())
        }
        // EXPLAIN needs what the explained statement needs (MySQL: the
        // SELECT privilege on every table it reads).
        Statement::Explain { statement, .. } => check_sql(tg, statement),
        Statement::Flush { .. } => {
            if ck.global(Privs::RELOAD) {
                Ok(())
            } else {
                Err(specific_denied("RELOAD"))
            }
        }
        _ => Ok(()),
    }
}

/// A locking read (`FOR UPDATE`, `FOR SHARE`, `LOCK IN SHARE MODE`) also
/// needs UPDATE, DELETE or LOCK TABLES on each table of the query block
/// it locks, as MySQL 8.0.22+ requires; short of all three, error 1142
/// for command `SELECT with locking clause`, naming the table alone as
/// MySQL's message does. (Tables in subqueries are read without locks
/// and need SELECT only; `OF tbl` is not told apart: every table of the
/// block counts.)
fn check_locking(tg: &Target, q: &ast::Query) -> SqlResult<()> {
    let ast::SetExpr::Select(sel) = &*q.body else {
        return Ok(());
    };
    let ctes: Vec<&str> = q.with.as_ref().map_or(Vec::new(), |w| {
        w.cte_tables
            .iter()
            .map(|c| c.alias.name.value.as_str())
            .collect()
    });
    let lock_privs = Privs::UPDATE.union(Privs::DELETE).union(Privs::LOCK_TABLES);
    for twj in &sel.from {
        let factors = std::iter::once(&twj.relation).chain(twj.joins.iter().map(|j| &j.relation));
        for tf in factors {
            let TableFactor::Table { name, .. } = tf else {
                continue;
            };
            let (qualified, t) = crate::exec::split_name(name)?;
            if qualified.is_none() && (t.eq_ignore_ascii_case("dual") || ctes.contains(&t.as_str()))
            {
                continue;
            }
            let Some((db, t)) = tg.resolve(name)? else {
                continue;
            };
            if !is_open_schema(&db) && !tg.ck.privs.on_table(&db, &t).any(lock_privs) {
                return Err(crate::privilege::table_denied_named(
                    "SELECT with locking clause",
                    tg.ck.user,
                    tg.ck.client_host,
                    &t,
                ));
            }
        }
    }
    Ok(())
}

/// Whether the account may see database `db` at all (USE, SHOW
/// DATABASES, SHOW TABLES).
pub(crate) fn db_visible(ck: &Checker, db: &str) -> bool {
    is_open_schema(db) || ck.privs.any_in_db(db)
}

/// USE / COM_INIT_DB: error 1044 when the account has nothing in `db`.
pub(crate) fn check_use(ck: &Checker, db: &str) -> SqlResult<()> {
    if db_visible(ck, db) {
        Ok(())
    } else {
        Err(crate::privilege::db_denied(ck.user, ck.account_host, db))
    }
}

fn check_any_on_table(tg: &Target, n: &ObjectName, db: Option<&str>) -> SqlResult<()> {
    let (d, t) = crate::exec::split_name(n)?;
    let d = match (db, d) {
        (Some(x), _) => Some(x.to_string()),
        (None, Some(x)) => Some(x),
        (None, None) => tg.db.map(str::to_string),
    };
    let Some(d) = d else { return Ok(()) };
    if is_open_schema(&d) || tg.ck.privs.any_on_table(&d, &t) {
        return Ok(());
    }
    Err(crate::privilege::table_denied(
        "SELECT",
        tg.ck.user,
        tg.ck.client_host,
        &d,
        &t,
    ))
}

/// CREATE VIEW: CREATE VIEW on the view (and DROP for OR REPLACE or
/// ALTER, as MySQL), SELECT on what its SELECT reads.
fn check_create_view(tg: &Target, v: &crate::view::ViewStmt) -> SqlResult<()> {
    let mut need = Privs::CREATE_VIEW;
    if v.alter || v.or_replace {
        need = need.union(Privs::DROP);
    }
    tg.table(&v.name, need)?;
    check_reads(tg, &*v.query, &|m| mentions_in(m, &*v.query))
}

/// ALTER TABLE needs ALTER (and, renaming, DROP on the old name and
/// CREATE and INSERT on the new); DROP INDEX needs INDEX; RENAME TABLE
/// ALTER and DROP on each old name, CREATE and INSERT on each new one
/// (MySQL 8.0's `check_rename_table`, `Sql_cmd_alter_table::execute`),
/// names of permanent tables even where a temporary one shadows them
/// (RENAME TABLE renames only permanent tables).
fn check_alter(tg: &Target, a: &crate::alter::AlterCmd) -> SqlResult<()> {
    use crate::alter::{AlterCmd, Spec};
    let old = Privs::ALTER.union(Privs::DROP);
    let new = Privs::CREATE.union(Privs::INSERT);
    match a {
        AlterCmd::Rename(pairs) => {
            for (from, to) in pairs {
                tg.permanent_table(from, old)?;
                tg.permanent_table(to, new)?;
            }
            Ok(())
        }
        AlterCmd::Table {
            drop_index: true,
            name,
            ..
        } => tg.table(name, Privs::INDEX),
        AlterCmd::Table { name, specs, .. } => {
            tg.table(name, Privs::ALTER)?;
            for sp in specs {
                if let Spec::Rename(to) = sp {
                    tg.table(name, old)?;
                    tg.table(to, new)?;
                }
            }
            Ok(())
        }
    }
}

/// Checks one parsed statement; `Ok` means it may run. Account
/// statements are checked where they run (`account.rs`, `grant.rs`).
pub(crate) fn check(tg: &Target, cmd: &Command) -> SqlResult<()> {
    let ck = tg.ck;
    match cmd {
        Command::Sql(stmt) => check_sql(tg, stmt),
        Command::Set(items) => {
            for it in items {
                let global = match it {
                    SetItem::Var { scope, .. } => *scope == Scope::Global,
                    SetItem::Transaction { scope, .. } => *scope == Some(Scope::Global),
                    SetItem::Names { .. } => false,
                };
                if global && !ck.global(Privs::SYSTEM_VARIABLES_ADMIN) {
                    return Err(specific_denied("SUPER or SYSTEM_VARIABLES_ADMIN"));
                }
            }
            Ok(())
        }
        Command::Use(db) => check_use(ck, db),
        Command::PurgeLogs(_) => {
            if ck.global(Privs::SUPER) || ck.global(Privs::BINLOG_ADMIN) {
                Ok(())
            } else {
                Err(specific_denied("SUPER or BINLOG_ADMIN"))
            }
        }
        // MySQL 8.0: REPLICATION_SLAVE_ADMIN (or SUPER) for CHANGE
        // REPLICATION SOURCE and START/STOP/RESET REPLICA.
        Command::Replica(_) => {
            if ck.global(Privs::SUPER) || ck.global(Privs::REPLICATION_SLAVE_ADMIN) {
                Ok(())
            } else {
                Err(specific_denied("SUPER or REPLICATION_SLAVE_ADMIN"))
            }
        }
        Command::ResetMaster { .. } => {
            if ck.global(Privs::RELOAD) {
                Ok(())
            } else {
                Err(specific_denied("RELOAD"))
            }
        }
        Command::Describe(n) => check_any_on_table(tg, n, None),
        Command::View(v) => check_create_view(tg, v),
        Command::KeysToggle(n) => tg.table(n, Privs::ALTER),
        Command::Alter(a) => check_alter(tg, a),
        // MySQL: SELECT on each table checked (sql_admin.cc).
        Command::CheckTable { tables, .. } => {
            for n in tables {
                tg.table(n, Privs::SELECT)?;
            }
            Ok(())
        }
        // MySQL: SELECT and INSERT on each table (sql_admin.cc).
        Command::Analyze { tables, .. } => {
            for n in tables {
                tg.table(n, Privs::SELECT.union(Privs::INSERT))?;
            }
            Ok(())
        }
        Command::Show(s) => match &**s {
            Show::Tables { db, .. } | Show::TableStatus { db, .. } => match db.as_deref().or(tg.db)
            {
                Some(d) => check_use(ck, d),
                None => Ok(()),
            },
            Show::Columns { table, db, .. } => check_any_on_table(tg, table, db.as_deref()),
            Show::CreateView(n) => tg.table(n, Privs::SHOW_VIEW.union(Privs::SELECT)),
            Show::CreateTable(n) => match tg.resolve(n)? {
                Some((d, t)) if tg.engine.view(&d, &t).is_some() => {
                    tg.table(n, Privs::SHOW_VIEW.union(Privs::SELECT))
                }
                _ => check_any_on_table(tg, n, None),
            },
            Show::Index(n) => check_any_on_table(tg, n, None),
            Show::CreateDatabase(d) => check_use(ck, d),
            // MySQL 8.0: SHOW BINLOG EVENTS and SHOW REPLICAS need
            // REPLICATION SLAVE.
            Show::BinlogEvents { .. } | Show::Replicas { .. } => {
                if ck.global(Privs::REPL_SLAVE) {
                    Ok(())
                } else {
                    Err(specific_denied("REPLICATION SLAVE"))
                }
            }
            Show::BinaryLogs | Show::MasterStatus | Show::ReplicaStatus { .. } => {
                if ck.global(Privs::SUPER) || ck.global(Privs::REPL_CLIENT) {
                    Ok(())
                } else {
                    Err(specific_denied("SUPER, REPLICATION CLIENT"))
                }
            }
            Show::EngineInnodbStatus => {
                if ck.global(Privs::PROCESS) {
                    Ok(())
                } else {
                    Err(specific_denied("PROCESS"))
                }
            }
            _ => Ok(()),
        },
        _ => Ok(()),
    }
}
