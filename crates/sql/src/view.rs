//! # Views: CREATE / ALTER / DROP VIEW and their text
//!
//! MySQL's view statements are read here from the statement's tokens
//! (sqlparser knows CREATE VIEW's options but not ALTER VIEW's MySQL form
//! nor `WITH [CASCADED | LOCAL] CHECK OPTION`); the SELECT itself is
//! sqlparser's. A view is stored by the engine (`quire_engine::view`) as
//! text plus options; this module decides what that text is:
//!
//! * every table the SELECT names is qualified with its database (so the
//!   view means the same from any current database; CTE names and DUAL
//!   are left alone), identifiers of names written here get backticks;
//! * every item of the (first) select list gets an explicit `AS name`
//!   with the column name MySQL gave it at creation, so a name derived
//!   from an expression's text cannot drift when the text is re-printed.
//!   A select list with `*` keeps the `*` (MySQL expands it; quire has no
//!   ALTER TABLE, so the expansion could only change after a DROP and
//!   CREATE of the table);
//! * the text must parse back and bind to the same number of columns
//!   before it is stored, so a view never holds text quire cannot read.
//!
//! The text prints as sqlparser prints a query: upper-case keywords and
//! unqualified columns (`SELECT `a` AS `a` FROM `t``) where MySQL prints
//! `select `t`.`a` AS `a` from `t``. SHOW CREATE VIEW leaves out the
//! database of the view and of its tables when it is the current one, as
//! MySQL does.
//!
//! Checks at CREATE/ALTER (MySQL's): 1351 for a user or system variable
//! or a `?` parameter, 1350 for `INTO`, 1353 when the column list and the
//! select list differ in length, 1060 for a duplicate column name, 1050
//! when a table or view has the name (OR REPLACE of a table: 1347), 1462
//! when the SELECT reads the view itself; ALGORITHM=MERGE on a view that
//! cannot be merged becomes UNDEFINED with Note 1354; a DEFINER other
//! than the current user needs SUPER (1227) and one that does not exist
//! gets Note 1449. `RESTRICT`/`CASCADE` of DROP VIEW do nothing in MySQL
//! either. Reading a view is the binder's (`query/bind.rs`), writing
//! through one `view_dml.rs`'s, privileges `authorize.rs`'s.

use std::ops::ControlFlow;

use quire_engine::{CheckOption, EngineError, Value, ViewAlgorithm, ViewDef};
use sqlparser::ast::{
    self, Expr, Ident, ObjectName, ObjectNamePart, Query, SelectItem, SetExpr, TableFactor, Visit,
    VisitMut, Visitor, VisitorMut,
};
use sqlparser::parser::Parser;
use sqlparser::tokenizer::Token;

use crate::account::UserSpec;
use crate::expr::Env;
use crate::parse::{syntax_error, Scope};
use crate::session::{done, text_col, Session};
use crate::{ColumnMeta, Output, SqlResult};

/// `CREATE [OR REPLACE] ... VIEW` or `ALTER ... VIEW`.
#[derive(Debug, Clone)]
pub struct ViewStmt {
    pub alter: bool,
    pub or_replace: bool,
    pub algorithm: Option<ViewAlgorithm>,
    pub definer: Option<UserSpec>,
    /// `SQL SECURITY INVOKER` (Some(true)) / `DEFINER` (Some(false)).
    pub invoker: Option<bool>,
    pub name: ObjectName,
    pub columns: Vec<String>,
    pub query: Box<Query>,
    pub check: CheckOption,
}

fn is_kw(t: Option<&Token>, w: &str) -> bool {
    matches!(t, Some(Token::Word(x)) if x.quote_style.is_none() && x.value.eq_ignore_ascii_case(w))
}

/// Whether significant tokens `t` start a view statement.
pub(crate) fn is_view_statement(t: &[Token]) -> bool {
    if !(is_kw(t.first(), "CREATE") || is_kw(t.first(), "ALTER")) {
        return false;
    }
    ["OR", "ALGORITHM", "DEFINER", "VIEW"]
        .iter()
        .any(|w| is_kw(t.get(1), w))
        || (is_kw(t.get(1), "SQL") && is_kw(t.get(2), "SECURITY"))
}

fn near(t: &[Token], i: usize) -> EngineError {
    let text: Vec<String> = t.iter().skip(i).map(|x| x.to_string()).collect();
    syntax_error(&text.join(" "))
}

/// Parses a view statement from its significant tokens.
pub(crate) fn parse(t: &[Token], sql: &str, depth: usize) -> SqlResult<ViewStmt> {
    let alter = is_kw(t.first(), "ALTER");
    let mut i = 1;
    let mut or_replace = false;
    if !alter && is_kw(t.get(i), "OR") {
        if !is_kw(t.get(i + 1), "REPLACE") {
            return Err(near(t, i));
        }
        or_replace = true;
        i += 2;
    }
    let mut algorithm = None;
    if is_kw(t.get(i), "ALGORITHM") {
        if t.get(i + 1) != Some(&Token::Eq) {
            return Err(near(t, i + 1));
        }
        algorithm = Some(match t.get(i + 2) {
            x if is_kw(x, "UNDEFINED") => ViewAlgorithm::Undefined,
            x if is_kw(x, "MERGE") => ViewAlgorithm::Merge,
            x if is_kw(x, "TEMPTABLE") => ViewAlgorithm::TempTable,
            _ => return Err(near(t, i + 2)),
        });
        i += 3;
    }
    let mut definer = None;
    if is_kw(t.get(i), "DEFINER") {
        if t.get(i + 1) != Some(&Token::Eq) {
            return Err(near(t, i + 1));
        }
        let (u, n) = crate::account::parse_user_prefix(&t[i + 2..])?;
        definer = Some(u);
        i += 2 + n;
    }
    let mut invoker = None;
    if is_kw(t.get(i), "SQL") {
        if !is_kw(t.get(i + 1), "SECURITY") {
            return Err(near(t, i + 1));
        }
        invoker = Some(match t.get(i + 2) {
            x if is_kw(x, "DEFINER") => false,
            x if is_kw(x, "INVOKER") => true,
            _ => return Err(near(t, i + 2)),
        });
        i += 3;
    }
    if !is_kw(t.get(i), "VIEW") {
        return Err(near(t, i));
    }
    let rest = t[i + 1..].to_vec();
    let dialect = crate::dialect::QuireDialect::default();
    let mut p = Parser::new(&dialect)
        .with_recursion_limit(depth)
        .with_tokens(rest);
    let err = |e| crate::parse::perr(e, sql);
    let name = p.parse_object_name(false).map_err(err)?;
    let mut columns = Vec::new();
    if p.consume_token(&Token::LParen) {
        let ids = p
            .parse_comma_separated(|p| p.parse_identifier())
            .map_err(err)?;
        columns = ids.into_iter().map(|i| i.value).collect();
        p.expect_token(&Token::RParen).map_err(err)?;
    }
    if !is_kw(Some(&p.next_token().token), "AS") {
        p.prev_token();
        return Err(syntax_error(&p.peek_token().token.to_string()));
    }
    let query = p.parse_query().map_err(err)?;
    let mut check = CheckOption::None;
    if is_kw(Some(&p.peek_token().token), "WITH") {
        p.next_token();
        check = CheckOption::Cascaded;
        let w = p.next_token().token;
        if is_kw(Some(&w), "LOCAL") {
            check = CheckOption::Local;
        } else if !is_kw(Some(&w), "CASCADED") {
            p.prev_token();
        }
        let (c, o) = (p.next_token().token, p.next_token().token);
        if !is_kw(Some(&c), "CHECK") || !is_kw(Some(&o), "OPTION") {
            return Err(syntax_error(&format!("{c} {o}")));
        }
    }
    let end = p.peek_token().token;
    if end != Token::EOF {
        return Err(syntax_error(&end.to_string()));
    }
    Ok(ViewStmt {
        alter,
        or_replace,
        algorithm,
        definer,
        invoker,
        name,
        columns,
        query,
        check,
    })
}

// ------------------------------------------------------------ checks

/// 1351 / 1350: what a view's SELECT may not contain.
struct Forbidden;

impl Visitor for Forbidden {
    type Break = EngineError;
    fn pre_visit_expr(&mut self, e: &Expr) -> ControlFlow<EngineError> {
        let var = match e {
            Expr::Identifier(i) => i.quote_style.is_none() && i.value.starts_with('@'),
            Expr::CompoundIdentifier(p) => p
                .first()
                .is_some_and(|i| i.quote_style.is_none() && i.value.starts_with('@')),
            Expr::Value(v) => matches!(v.value, ast::Value::Placeholder(_)),
            _ => false,
        };
        if var {
            return ControlFlow::Break(EngineError::new(
                1351,
                "HY000",
                "View's SELECT contains a variable or parameter",
            ));
        }
        ControlFlow::Continue(())
    }
    fn pre_visit_query(&mut self, q: &Query) -> ControlFlow<EngineError> {
        if let SetExpr::Select(s) = &*q.body {
            if s.into.is_some() {
                return ControlFlow::Break(EngineError::new(
                    1350,
                    "HY000",
                    "View's SELECT contains a 'INTO' clause",
                ));
            }
        }
        ControlFlow::Continue(())
    }
}

fn quoted(s: &str) -> Ident {
    Ident::with_quote('`', s)
}

/// Qualifies every table name with `db` (CTE names and DUAL apart) and
/// collects the tables named, (db, table).
struct Qualify<'a> {
    db: &'a str,
    ctes: Vec<Vec<String>>,
    seen: Vec<(String, String)>,
}

impl VisitorMut for Qualify<'_> {
    type Break = ();
    fn pre_visit_query(&mut self, q: &mut Query) -> ControlFlow<()> {
        let names = q.with.as_ref().map_or(Vec::new(), |w| {
            w.cte_tables
                .iter()
                .map(|c| c.alias.name.value.clone())
                .collect()
        });
        self.ctes.push(names);
        ControlFlow::Continue(())
    }
    fn post_visit_query(&mut self, _: &mut Query) -> ControlFlow<()> {
        self.ctes.pop();
        ControlFlow::Continue(())
    }
    fn pre_visit_table_factor(&mut self, tf: &mut TableFactor) -> ControlFlow<()> {
        let TableFactor::Table { name, .. } = tf else {
            return ControlFlow::Continue(());
        };
        let parts: Vec<String> = name
            .0
            .iter()
            .filter_map(|p| p.as_ident().map(|i| i.value.clone()))
            .collect();
        match parts.as_slice() {
            [t] if t.eq_ignore_ascii_case("dual")
                || self
                    .ctes
                    .iter()
                    .flatten()
                    .any(|c| c.eq_ignore_ascii_case(t)) => {}
            [t] => {
                self.seen.push((self.db.to_string(), t.clone()));
                *name = ObjectName(vec![
                    ObjectNamePart::Identifier(quoted(self.db)),
                    ObjectNamePart::Identifier(quoted(t)),
                ]);
            }
            [d, t] => {
                self.seen.push((d.clone(), t.clone()));
                *name = ObjectName(vec![
                    ObjectNamePart::Identifier(quoted(d)),
                    ObjectNamePart::Identifier(quoted(t)),
                ]);
            }
            _ => {}
        }
        ControlFlow::Continue(())
    }
}

/// Drops the database part of table names in `db` (SHOW CREATE VIEW).
struct Unqualify<'a>(&'a str);

impl VisitorMut for Unqualify<'_> {
    type Break = ();
    fn pre_visit_table_factor(&mut self, tf: &mut TableFactor) -> ControlFlow<()> {
        if let TableFactor::Table { name, .. } = tf {
            if name.0.len() == 2
                && name.0[0]
                    .as_ident()
                    .is_some_and(|i| i.value.eq_ignore_ascii_case(self.0))
            {
                name.0.remove(0);
            }
        }
        ControlFlow::Continue(())
    }
}

fn leftmost_select(b: &mut SetExpr) -> Option<&mut ast::Select> {
    match b {
        SetExpr::Select(s) => Some(s),
        SetExpr::SetOperation { left, .. } => leftmost_select(left),
        SetExpr::Query(q) => leftmost_select(&mut q.body),
        _ => None,
    }
}

/// Gives every item of the first select list an explicit alias (the
/// column names the SELECT produced); a list with `*` is left as is.
fn alias_items(q: &mut Query, names: &[String]) {
    let Some(s) = leftmost_select(&mut q.body) else {
        return;
    };
    if s.projection.len() != names.len()
        || s.projection.iter().any(|i| {
            matches!(
                i,
                SelectItem::Wildcard(_) | SelectItem::QualifiedWildcard(..)
            )
        })
    {
        return;
    }
    for (item, n) in s.projection.iter_mut().zip(names) {
        match item {
            SelectItem::UnnamedExpr(e) => {
                *item = SelectItem::ExprWithAlias {
                    expr: e.clone(),
                    alias: quoted(n),
                }
            }
            SelectItem::ExprWithAlias { alias, .. } => *alias = quoted(n),
            _ => {}
        }
    }
}

/// Whether MySQL can merge the view (and so update through it): one
/// SELECT block without aggregates, DISTINCT, GROUP BY, HAVING, LIMIT,
/// window functions, WITH or subqueries in its select list, reading at
/// least one table.
pub(crate) fn mergeable(q: &Query) -> bool {
    let SetExpr::Select(s) = &*q.body else {
        return false;
    };
    if q.with.is_some() || q.limit_clause.is_some() || q.fetch.is_some() {
        return false;
    }
    if s.distinct.is_some() || s.having.is_some() || s.from.is_empty() {
        return false;
    }
    if !matches!(&s.group_by, ast::GroupByExpr::Expressions(v, m) if v.is_empty() && m.is_empty()) {
        return false;
    }
    let mut bad = AggOrSub(false);
    for item in &s.projection {
        let _ = item.visit(&mut bad);
    }
    !bad.0
}

struct AggOrSub(bool);

const AGGREGATES: &[&str] = &[
    "COUNT",
    "SUM",
    "AVG",
    "MIN",
    "MAX",
    "GROUP_CONCAT",
    "BIT_AND",
    "BIT_OR",
    "BIT_XOR",
    "STD",
    "STDDEV",
    "STDDEV_POP",
    "STDDEV_SAMP",
    "VARIANCE",
    "VAR_POP",
    "VAR_SAMP",
    "JSON_ARRAYAGG",
    "JSON_OBJECTAGG",
];

impl Visitor for AggOrSub {
    type Break = ();
    fn pre_visit_expr(&mut self, e: &Expr) -> ControlFlow<()> {
        let hit = match e {
            Expr::Subquery(_)
            | Expr::Exists { .. }
            | Expr::In {
                target: ast::InTarget::Subquery(_),
                ..
            } => true,
            Expr::Function(f) => {
                f.over.is_some()
                    || AGGREGATES
                        .iter()
                        .any(|a| f.name.to_string().eq_ignore_ascii_case(a))
            }
            _ => false,
        };
        if hit {
            self.0 = true;
            return ControlFlow::Break(());
        }
        ControlFlow::Continue(())
    }
}

// ------------------------------------------------------------ statements

fn name_of(s: &Session, n: &ObjectName) -> SqlResult<(String, String)> {
    crate::show::table_db(s, n, None)
}

fn dup_column(names: &[String]) -> Option<&String> {
    names
        .iter()
        .enumerate()
        .find(|(i, n)| names[..*i].iter().any(|o| o.eq_ignore_ascii_case(n)))
        .map(|(_, n)| n)
}

fn err_dup(n: &str) -> EngineError {
    EngineError::new(1060, "42S21", format!("Duplicate column name '{n}'"))
}

/// Whether tables `refs` are, or read through views, view `db.name`.
fn reaches(s: &Session, refs: &[(String, String)], db: &str, name: &str, depth: usize) -> bool {
    if depth > 64 {
        return true;
    }
    refs.iter().any(|(d, t)| {
        if d.eq_ignore_ascii_case(db) && t.eq_ignore_ascii_case(name) {
            return true;
        }
        let Some(v) = s.engine().view(d, t) else {
            return false;
        };
        let Ok(mut q) = crate::parse::parse_query(&v.body) else {
            return false;
        };
        let mut qual = Qualify {
            db: &v.db,
            ctes: Vec::new(),
            seen: Vec::new(),
        };
        let _ = VisitMut::visit(&mut q, &mut qual);
        reaches(s, &qual.seen, db, name, depth + 1)
    })
}

/// CREATE [OR REPLACE] VIEW / ALTER VIEW.
pub(crate) fn create(s: &mut Session, v: &ViewStmt) -> SqlResult<Output> {
    let (db, name) = name_of(s, &v.name)?;
    if let ControlFlow::Break(e) = v.query.visit(&mut Forbidden) {
        return Err(e);
    }
    let mut q = (*v.query).clone();
    let mut qual = Qualify {
        db: &db,
        ctes: Vec::new(),
        seen: Vec::new(),
    };
    let _ = VisitMut::visit(&mut q, &mut qual);
    // Replacing a view by one that reads it, directly or through other
    // views (a new view naming itself is just a missing table, 1146).
    if s.engine().view(&db, &name).is_some() && reaches(s, &qual.seen, &db, &name, 0) {
        return Err(EngineError::new(
            1462,
            "HY000",
            format!("`{db}`.`{name}` contains view recursion"),
        ));
    }
    let bound = s.describe_query(&q)?;
    let names: Vec<String> = bound.iter().map(|c| c.name.clone()).collect();
    if !v.columns.is_empty() && v.columns.len() != names.len() {
        return Err(EngineError::new(
            1353,
            "HY000",
            "In definition of view, derived table or common table expression, SELECT list and column names list have different column counts",
        ));
    }
    let visible = if v.columns.is_empty() {
        &names
    } else {
        &v.columns
    };
    if let Some(n) = dup_column(visible) {
        return Err(err_dup(n));
    }
    alias_items(&mut q, &names);
    let body = q.to_string();
    // The stored text must read back as the same view.
    let back = crate::parse::parse_query(&body)
        .and_then(|b| s.describe_query(&b))
        .map_err(|e| {
            EngineError::not_supported(format!(
                "a view whose SELECT does not survive being printed ({})",
                e.message
            ))
        })?;
    if back.len() != bound.len() {
        return Err(EngineError::not_supported(
            "a view whose SELECT does not survive being printed",
        ));
    }
    let mut notes: Vec<(String, u16, String)> = Vec::new();
    let mut algorithm = v.algorithm.unwrap_or(ViewAlgorithm::Undefined);
    if algorithm == ViewAlgorithm::Merge && !mergeable(&q) {
        notes.push((
            "Warning".into(),
            1354,
            "View merge algorithm can't be used here for now (assumed undefined algorithm)".into(),
        ));
        algorithm = ViewAlgorithm::Undefined;
    }
    let (definer_user, definer_host) = definer(s, v.definer.as_ref(), &mut notes)?;
    let cs = |n: &str| match s.sysvar(n, Scope::Session) {
        Ok(Value::Bytes(b)) => String::from_utf8_lossy(&b).into_owned(),
        Ok(Value::Null) | Err(_) => String::new(),
        Ok(x) => x.to_string(),
    };
    let def = ViewDef {
        db: db.clone(),
        name: name.clone(),
        columns: v.columns.clone(),
        body,
        algorithm,
        definer_user,
        definer_host,
        security_invoker: v.invoker.unwrap_or(false),
        check: v.check,
        charset_client: cs("character_set_client"),
        collation_connection: cs("collation_connection"),
    };
    let verb = if v.alter {
        "ALTER"
    } else if v.or_replace {
        "CREATE OR REPLACE"
    } else {
        "CREATE"
    };
    let log = create_text(&def, None, verb);
    s.engine().put_view(def, v.or_replace, v.alter, &log)?;
    let n = notes.len() as u16;
    s.add_warnings(notes);
    Ok(done(0, 0, n, String::new()))
}

/// The view's definer: the current user unless DEFINER names another
/// account, which needs SUPER (MySQL 8.0: SUPER or SET_USER_ID; quire
/// has no SET_USER_ID). An account that does not exist gets Note 1449.
fn definer(
    s: &mut Session,
    d: Option<&UserSpec>,
    notes: &mut Vec<(String, u16, String)>,
) -> SqlResult<(String, String)> {
    let (me_user, me_host) = {
        let (u, h) = s.account();
        (u.to_string(), h.to_string())
    };
    let Some(UserSpec::Named { user, host }) = d else {
        return Ok((me_user, me_host));
    };
    if user == &me_user && host.eq_ignore_ascii_case(&me_host) {
        return Ok((me_user, me_host));
    }
    if !s.has_global_privilege(crate::privilege::Privs::SUPER) {
        return Err(crate::privilege::specific_denied("SUPER or SET_USER_ID"));
    }
    if let Some(store) = s.account_store() {
        if store.privileges(user, host).is_none() {
            notes.push((
                "Note".into(),
                1449,
                format!("The user specified as a definer ('{user}'@'{host}') does not exist"),
            ));
        }
    }
    Ok((user.clone(), host.clone()))
}

/// `CREATE ALGORITHM=... DEFINER=... SQL SECURITY ... VIEW ...` (`verb`
/// replaces CREATE), with `current_db`'s name left out of the view's and
/// its tables' names.
pub fn create_text(v: &ViewDef, current_db: Option<&str>, verb: &str) -> String {
    let algorithm = match v.algorithm {
        ViewAlgorithm::Undefined => "UNDEFINED",
        ViewAlgorithm::Merge => "MERGE",
        ViewAlgorithm::TempTable => "TEMPTABLE",
    };
    let same_db = current_db.is_some_and(|d| d.eq_ignore_ascii_case(&v.db));
    let name = if same_db {
        format!("`{}`", v.name)
    } else {
        format!("`{}`.`{}`", v.db, v.name)
    };
    let cols = if v.columns.is_empty() {
        String::new()
    } else {
        let c: Vec<String> = v.columns.iter().map(|c| format!("`{c}`")).collect();
        format!(" ({})", c.join(","))
    };
    let body = match (same_db, crate::parse::parse_query(&v.body)) {
        (true, Ok(mut q)) => {
            let _ = VisitMut::visit(&mut q, &mut Unqualify(&v.db));
            q.to_string()
        }
        _ => v.body.clone(),
    };
    let check = match v.check {
        CheckOption::None => "",
        CheckOption::Cascaded => " WITH CASCADED CHECK OPTION",
        CheckOption::Local => " WITH LOCAL CHECK OPTION",
    };
    format!(
        "{verb} ALGORITHM={algorithm} DEFINER=`{}`@`{}` SQL SECURITY {} VIEW {name}{cols} AS {body}{check}",
        v.definer_user,
        v.definer_host,
        if v.security_invoker {
            "INVOKER"
        } else {
            "DEFINER"
        },
    )
}

/// DROP VIEW [IF EXISTS] v1, v2 ...: MySQL 8.0 drops nothing when a name
/// is missing (1051 naming every missing one) or a base table (1347).
pub(crate) fn drop(s: &mut Session, names: &[ObjectName], if_exists: bool) -> SqlResult<Output> {
    let mut found = Vec::new();
    let mut missing = Vec::new();
    for n in names {
        let (db, t) = name_of(s, n)?;
        if s.engine().view(&db, &t).is_some() {
            found.push((db, t));
        } else if s.engine().table(&db, &t).is_ok() {
            return Err(quire_engine::view::err_wrong_object(&db, &t, "VIEW"));
        } else {
            missing.push(format!("{db}.{t}"));
        }
    }
    if !missing.is_empty() && !if_exists {
        return Err(EngineError::new(
            1051,
            "42S02",
            format!("Unknown table '{}'", missing.join(",")),
        ));
    }
    if !found.is_empty() {
        let list: Vec<String> = found.iter().map(|(d, t)| format!("`{d}`.`{t}`")).collect();
        let log_db = s
            .current_db()
            .map(str::to_string)
            .unwrap_or_else(|| found[0].0.clone());
        let sql = format!(
            "DROP VIEW {}{}",
            if if_exists { "IF EXISTS " } else { "" },
            list.join(",")
        );
        s.engine().drop_views(&found, &log_db, &sql)?;
    }
    let notes: Vec<(String, u16, String)> = missing
        .iter()
        .map(|m| ("Note".to_string(), 1051, format!("Unknown table '{m}'")))
        .collect();
    let n = notes.len() as u16;
    s.add_warnings(notes);
    Ok(done(0, 0, n, String::new()))
}

/// SHOW CREATE VIEW (and SHOW CREATE TABLE of a view).
pub(crate) fn show_create(s: &Session, v: &ViewDef) -> Output {
    let text = |x: &str| Value::Bytes(x.as_bytes().to_vec());
    let columns = [
        "View",
        "Create View",
        "character_set_client",
        "collation_connection",
    ]
    .iter()
    .map(|c| text_col(c))
    .collect();
    Output::Rows {
        columns,
        rows: vec![vec![
            text(&v.name),
            text(&create_text(v, s.current_db(), "CREATE")),
            text(&v.charset_client),
            text(&v.collation_connection),
        ]],
    }
}

/// The columns of a view as its SELECT produces them now (DESCRIBE,
/// SHOW COLUMNS): MySQL's 1356 when it no longer binds.
pub(crate) fn columns(s: &Session, v: &ViewDef) -> SqlResult<Vec<ColumnMeta>> {
    let q =
        crate::parse::parse_query(&v.body).map_err(|_| crate::query::bind::err_invalid_view(v))?;
    let cols = s.describe_query(&q).map_err(|e| match e.code {
        1146 | 1054 | 1305 | 1049 => crate::query::bind::err_invalid_view(v),
        _ => e,
    })?;
    let mut cols = cols;
    for (c, n) in cols.iter_mut().zip(&v.columns) {
        c.name = n.clone();
    }
    Ok(cols)
}
