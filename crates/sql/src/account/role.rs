//! # Roles: CREATE/DROP ROLE, GRANT/REVOKE role, SET ROLE, default roles
//!
//! ```text
//!   CREATE ROLE [IF NOT EXISTS] role [, ...]      a locked account, no password
//!   DROP ROLE [IF EXISTS] role [, ...]            the account and its edges
//!   GRANT role [, ...] TO user [, ...] [WITH ADMIN OPTION]
//!   REVOKE role [, ...] FROM user [, ...]
//!   SET ROLE {DEFAULT | NONE | ALL [EXCEPT role, ...] | role [, ...]}
//!   SET DEFAULT ROLE {NONE | ALL | role [, ...]} TO user [, ...]
//!   ALTER USER user DEFAULT ROLE {NONE | ALL | role [, ...]}
//!   role: 'name'@'host' | name (host '%')
//! ```
//!
//! A role is an account like any other (`mysql.user`, locked); what makes
//! it a role is being granted to someone (`role_graph.rs` keeps the
//! edges). A session has a set of *active* roles, set at login (the
//! account's default roles, or every granted role when
//! `activate_all_roles_on_login` is ON) and by SET ROLE. Its effective
//! privileges are the union of its own and those of each active role
//! still granted to it and every role nested below those:
//!
//! ```text
//!   Session::privileges()  one atomic load: store version unchanged and
//!        │                 active set unchanged → the cached Arc
//!        └─ otherwise effective_privileges(): own ∪ privs(closure(active ∩ granted))
//! ```
//!
//! Every change of the graph (GRANT/REVOKE role, DROP ROLE, default
//! roles) moves the store's privilege version, so a REVOKE takes effect
//! on the next statement of every session, as MySQL's role changes do.
//!
//! Granting a role needs ROLE_ADMIN (or SUPER), or the role held WITH
//! ADMIN OPTION; creating one CREATE ROLE or CREATE USER; dropping one
//! DROP ROLE or CREATE USER; another account's default roles need CREATE
//! USER.

use std::sync::Arc;

use quire_engine::EngineError;
use sqlparser::tokenizer::Token;

use super::{cannot, done, in_memory_note, quoted as quoted_acct};
use super::{resolve, AccountCmd, AccountOptions, AccountStore, AuthSpec, Cur, Me, Note, UserSpec};
use crate::privilege::{AccountPrivs, Privs};
use crate::role_graph::{
    granted_to_itself, quoted, role_not_granted, unknown_authid, AuthId, RoleEdge, RoleGraph,
};
use crate::{Output, SqlResult};

/// Which roles a SET ROLE / default-role statement names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RoleSpec {
    /// `DEFAULT` (SET ROLE only): the account's default roles.
    Default,
    None,
    /// `ALL [EXCEPT ...]` (EXCEPT: SET ROLE only).
    All {
        except: Vec<AuthId>,
    },
    List(Vec<AuthId>),
}

/// A parsed role statement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RoleCmd {
    Create {
        if_not_exists: bool,
        roles: Vec<AuthId>,
    },
    Drop {
        if_exists: bool,
        roles: Vec<AuthId>,
    },
    Grant {
        revoke: bool,
        roles: Vec<AuthId>,
        to: Vec<UserSpec>,
        admin: bool,
    },
    Set(RoleSpec),
    Default {
        users: Vec<UserSpec>,
        roles: RoleSpec,
    },
}

// ------------------------------------------------------------------ parse

/// Role names: accounts, `CURRENT_USER` not allowed.
fn role_list(c: &mut Cur) -> SqlResult<Vec<AuthId>> {
    let at = c.i;
    let mut out = Vec::new();
    for u in c.users()? {
        match u {
            UserSpec::Named { user, host } => out.push((user, host)),
            UserSpec::Current => return Err(super::syntax(&c.t[at..])),
        }
    }
    Ok(out)
}

fn if_clause(c: &mut Cur, not: bool) -> SqlResult<bool> {
    if !c.word("IF") {
        return Ok(false);
    }
    if not {
        c.expect_word("NOT")?;
    }
    c.expect_word("EXISTS")?;
    Ok(true)
}

fn spec(c: &mut Cur, set_role: bool) -> SqlResult<RoleSpec> {
    if set_role && c.word("DEFAULT") {
        return Ok(RoleSpec::Default);
    }
    if c.word("NONE") {
        return Ok(RoleSpec::None);
    }
    if c.word("ALL") {
        let except = if set_role && c.word("EXCEPT") {
            role_list(c)?
        } else {
            Vec::new()
        };
        return Ok(RoleSpec::All { except });
    }
    Ok(RoleSpec::List(role_list(c)?))
}

fn cmd(r: RoleCmd) -> AccountCmd {
    AccountCmd::Role(Box::new(r))
}

/// `CREATE ROLE ...` / `DROP ROLE ...` after the two words.
pub(super) fn parse_create_drop(c: &mut Cur, create: bool) -> SqlResult<AccountCmd> {
    let flag = if_clause(c, create)?;
    let roles = role_list(c)?;
    c.end()?;
    Ok(cmd(if create {
        RoleCmd::Create {
            if_not_exists: flag,
            roles,
        }
    } else {
        RoleCmd::Drop {
            if_exists: flag,
            roles,
        }
    }))
}

/// `GRANT role ... TO ...` / `REVOKE role ... FROM ...` after the first
/// word.
pub(super) fn parse_grant(c: &mut Cur, revoke: bool) -> SqlResult<AccountCmd> {
    let roles = role_list(c)?;
    c.expect_word(if revoke { "FROM" } else { "TO" })?;
    let to = c.users()?;
    let admin = !revoke && c.word("WITH");
    if admin {
        c.expect_word("ADMIN")?;
        c.expect_word("OPTION")?;
    }
    c.end()?;
    Ok(cmd(RoleCmd::Grant {
        revoke,
        roles,
        to,
        admin,
    }))
}

/// `SET ROLE ...` after the two words.
pub(super) fn parse_set_role(c: &mut Cur) -> SqlResult<AccountCmd> {
    let s = spec(c, true)?;
    c.end()?;
    Ok(cmd(RoleCmd::Set(s)))
}

/// `SET DEFAULT ROLE ... TO users` after `SET DEFAULT`.
pub(super) fn parse_set_default(c: &mut Cur) -> SqlResult<AccountCmd> {
    c.expect_word("ROLE")?;
    let roles = spec(c, false)?;
    c.expect_word("TO")?;
    let users = c.users()?;
    c.end()?;
    Ok(cmd(RoleCmd::Default { users, roles }))
}

/// `ALTER USER user DEFAULT ROLE ...` after `DEFAULT ROLE`.
pub(super) fn parse_alter_default(c: &mut Cur, user: UserSpec) -> SqlResult<AccountCmd> {
    let roles = spec(c, false)?;
    c.end()?;
    Ok(cmd(RoleCmd::Default {
        users: vec![user],
        roles,
    }))
}

// ---------------------------------------------------------------- execute

fn denied(what: &str) -> EngineError {
    crate::privilege::specific_denied(what)
}

fn exists(store: &dyn AccountStore, a: &AuthId) -> bool {
    store.grants(&a.0, &a.1).is_some()
}

fn me_id(me: &Me) -> AuthId {
    (me.user.to_string(), me.host.to_ascii_lowercase())
}

/// Runs a role statement other than SET ROLE (which changes the session:
/// [`set_role`]).
pub(super) fn execute(
    store: &dyn AccountStore,
    me: &Me,
    mine: &AccountPrivs,
    c: &RoleCmd,
    notes: &mut Vec<Note>,
) -> SqlResult<Output> {
    let global = mine.global_effective();
    match c {
        RoleCmd::Create {
            if_not_exists,
            roles,
        } => {
            if !global.any(Privs::CREATE_USER.union(Privs::CREATE_ROLE)) {
                return Err(denied("CREATE USER or CREATE ROLE"));
            }
            create(store, *if_not_exists, roles, notes)
        }
        RoleCmd::Drop { if_exists, roles } => {
            if !global.any(Privs::CREATE_USER.union(Privs::DROP_ROLE)) {
                return Err(denied("CREATE USER or DROP ROLE"));
            }
            drop(store, *if_exists, roles, notes)
        }
        RoleCmd::Grant {
            revoke,
            roles,
            to,
            admin,
        } => {
            let to: Vec<AuthId> = to.iter().map(|u| resolve(me, u)).collect();
            grant(store, me, global, *revoke, roles, &to, *admin, notes)
        }
        RoleCmd::Default { users, roles } => {
            let users: Vec<AuthId> = users.iter().map(|u| resolve(me, u)).collect();
            let myself = me_id(me);
            if !global.has(Privs::CREATE_USER) && users.iter().any(|u| *u != myself) {
                return Err(denied("CREATE USER"));
            }
            set_defaults(store, &users, roles, notes)
        }
        RoleCmd::Set(_) => Err(EngineError::not_supported("SET ROLE outside a session")),
    }
}

fn locked_role() -> AccountOptions {
    AccountOptions {
        account_locked: Some(true),
        ..Default::default()
    }
}

fn create(
    store: &dyn AccountStore,
    if_not_exists: bool,
    roles: &[AuthId],
    notes: &mut Vec<Note>,
) -> SqlResult<Output> {
    let mut failed = Vec::new();
    let mut todo: Vec<AuthId> = Vec::new();
    for r in roles {
        if exists(store, r) || todo.contains(r) {
            if if_not_exists {
                notes.push((
                    "Note".into(),
                    3163,
                    format!(
                        "Authorization ID {} already exists.",
                        quoted_acct(&r.0, &r.1)
                    ),
                ));
            } else {
                failed.push(r.clone());
            }
        } else {
            todo.push(r.clone());
        }
    }
    if !failed.is_empty() {
        notes.clear();
        return Err(cannot("CREATE ROLE", &failed));
    }
    let mut made: Vec<AuthId> = Vec::new();
    for r in todo {
        let res = store.create_account(&r.0, &r.1, &AuthSpec::default(), &locked_role());
        if !matches!(res, Ok(true)) {
            // All or nothing, as CREATE USER.
            for (u, h) in &made {
                let _ = store.drop_user(u, h);
            }
            res?;
            notes.clear();
            return Err(cannot("CREATE ROLE", &[r]));
        }
        made.push(r);
    }
    if !made.is_empty() {
        in_memory_note(store, notes);
    }
    Ok(done(notes))
}

fn drop(
    store: &dyn AccountStore,
    if_exists: bool,
    roles: &[AuthId],
    notes: &mut Vec<Note>,
) -> SqlResult<Output> {
    let mut failed = Vec::new();
    let mut todo: Vec<AuthId> = Vec::new();
    for r in roles {
        if !exists(store, r) {
            if if_exists {
                notes.push((
                    "Note".into(),
                    3162,
                    format!(
                        "Authorization ID {} does not exist.",
                        quoted_acct(&r.0, &r.1)
                    ),
                ));
            } else {
                failed.push(r.clone());
            }
        } else if !todo.contains(r) {
            todo.push(r.clone());
        }
    }
    if !failed.is_empty() {
        notes.clear();
        return Err(cannot("DROP ROLE", &failed));
    }
    for r in &todo {
        // The store forgets the role's edges and default-role entries
        // with the account.
        store.drop_user(&r.0, &r.1)?;
    }
    in_memory_note(store, notes);
    Ok(done(notes))
}

/// GRANT / REVOKE of roles: the grantor's right, the accounts, then (for
/// GRANT) no cycle, all checked before anything changes.
#[allow(clippy::too_many_arguments)]
fn grant(
    store: &dyn AccountStore,
    me: &Me,
    global: Privs,
    revoke: bool,
    roles: &[AuthId],
    to: &[AuthId],
    admin: bool,
    notes: &mut Vec<Note>,
) -> SqlResult<Output> {
    let graph = store.role_graph();
    let myself = me_id(me);
    let may = global.has(Privs::ROLE_ADMIN) || roles.iter().all(|r| graph.has_admin(&myself, r));
    if !may {
        return Err(denied("WITH ADMIN, ROLE_ADMIN, SUPER"));
    }
    if let Some(missing) = to.iter().chain(roles).find(|a| !exists(store, a)) {
        return Err(unknown_authid(missing));
    }
    let mut edges = Vec::new();
    let mut next: RoleGraph = (*graph).clone();
    for u in to {
        for r in roles {
            let e = RoleEdge {
                role: r.clone(),
                to: u.clone(),
                admin,
            };
            if revoke {
                if graph.is_granted(u, r) {
                    edges.push(e);
                }
                continue;
            }
            if next.would_cycle(r, u) {
                return Err(granted_to_itself(r, u));
            }
            next.grant(&e);
            edges.push(e);
        }
    }
    if !edges.is_empty() {
        store.change_roles(!revoke, &edges)?;
    }
    in_memory_note(store, notes);
    Ok(done(notes))
}

/// The roles of `spec` for account `who` as default roles.
fn default_list(graph: &RoleGraph, who: &AuthId, spec: &RoleSpec) -> SqlResult<Vec<AuthId>> {
    match spec {
        RoleSpec::None | RoleSpec::Default => Ok(Vec::new()),
        RoleSpec::All { .. } => Ok(graph.granted_to(who).map(|(r, _)| r.clone()).collect()),
        RoleSpec::List(v) => {
            if let Some(r) = v.iter().find(|r| !graph.is_granted(who, r)) {
                return Err(role_not_granted(r, who));
            }
            Ok(v.clone())
        }
    }
}

fn set_defaults(
    store: &dyn AccountStore,
    users: &[AuthId],
    spec: &RoleSpec,
    notes: &mut Vec<Note>,
) -> SqlResult<Output> {
    if let Some(missing) = users.iter().find(|a| !exists(store, a)) {
        return Err(unknown_authid(missing));
    }
    let graph = store.role_graph();
    let mut plan = Vec::new();
    for u in users {
        plan.push((u, default_list(&graph, u, spec)?));
    }
    for (u, roles) in plan {
        if !store.set_default_roles(u, &roles)? {
            return Err(unknown_authid(u));
        }
    }
    in_memory_note(store, notes);
    Ok(done(notes))
}

// ------------------------------------------------------------- sessions

/// The roles SET ROLE `spec` activates for account `who`: each named role
/// must be granted to it directly (3530).
pub(crate) fn set_role(
    store: &dyn AccountStore,
    who: &AuthId,
    spec: &RoleSpec,
) -> SqlResult<Vec<AuthId>> {
    let graph = store.role_graph();
    let granted = || graph.granted_to(who).map(|(r, _)| r.clone());
    Ok(match spec {
        RoleSpec::Default => graph
            .defaults_of(who)
            .into_iter()
            .filter(|r| graph.is_granted(who, r))
            .collect(),
        RoleSpec::None => Vec::new(),
        RoleSpec::All { except } => granted().filter(|r| !except.contains(r)).collect(),
        RoleSpec::List(v) => {
            if let Some(r) = v.iter().find(|r| !graph.is_granted(who, r)) {
                return Err(role_not_granted(r, who));
            }
            let mut v = v.clone();
            v.sort();
            v.dedup();
            v
        }
    })
}

/// The roles a new session of `who` starts with: every granted role with
/// `activate_all_roles_on_login`, else its default roles.
pub(crate) fn login_roles(store: &dyn AccountStore, who: &AuthId, all: bool) -> Vec<AuthId> {
    let spec = if all {
        RoleSpec::All { except: Vec::new() }
    } else {
        RoleSpec::Default
    };
    set_role(store, who, &spec).unwrap_or_default()
}

/// The active roles that still count: those granted to `who` now (a
/// REVOKE ends a role's effect at once, in sessions that have it active).
pub(crate) fn live_roles(graph: &RoleGraph, who: &AuthId, active: &[AuthId]) -> Vec<AuthId> {
    active
        .iter()
        .filter(|r| graph.is_granted(who, r))
        .cloned()
        .collect()
}

/// `who`'s privileges plus those of `roles` and every role nested below
/// them (the roles are taken as granted: callers filter).
pub(crate) fn with_roles(
    store: &dyn AccountStore,
    graph: &RoleGraph,
    own: Arc<AccountPrivs>,
    roles: &[AuthId],
) -> Arc<AccountPrivs> {
    if roles.is_empty() {
        return own;
    }
    let mut out = (*own).clone();
    for r in graph.closure(roles) {
        if let Some(p) = store.privileges(&r.0, &r.1) {
            out.merge(&p);
        }
    }
    Arc::new(out)
}

/// A session's effective privileges: its account's, plus those of its
/// active roles that are still granted.
pub(crate) fn effective_privileges(
    store: &dyn AccountStore,
    who: &AuthId,
    active: &[AuthId],
) -> Arc<AccountPrivs> {
    let own = store.privileges(&who.0, &who.1).unwrap_or_default();
    if active.is_empty() {
        return own;
    }
    let graph = store.role_graph();
    let live = live_roles(&graph, who, active);
    with_roles(store, &graph, own, &live)
}

/// SHOW GRANTS lines for the roles granted to `who`, as MySQL 8.0 prints
/// them: the roles without admin option on one line, those with it on
/// another.
pub(crate) fn role_lines(graph: &RoleGraph, who: &AuthId) -> Vec<String> {
    let mut plain = Vec::new();
    let mut admin = Vec::new();
    for (r, a) in graph.granted_to(who) {
        if a {
            admin.push(quoted(r));
        } else {
            plain.push(quoted(r));
        }
    }
    let to = quoted(who);
    let mut out = Vec::new();
    if !plain.is_empty() {
        out.push(format!("GRANT {} TO {to}", plain.join(",")));
    }
    if !admin.is_empty() {
        out.push(format!(
            "GRANT {} TO {to} WITH ADMIN OPTION",
            admin.join(",")
        ));
    }
    out
}

/// The grant lines SHOW GRANTS prints for `who`, expanded with the
/// privileges of `using` (each must be granted to `who`: 3530).
pub(crate) fn show_lines(
    store: &dyn AccountStore,
    who: &AuthId,
    own: Arc<AccountPrivs>,
    using: &[AuthId],
) -> SqlResult<Vec<String>> {
    let graph = store.role_graph();
    if let Some(r) = using.iter().find(|r| !graph.is_granted(who, r)) {
        return Err(role_not_granted(r, who));
    }
    let shown = with_roles(store, &graph, own, using);
    let mut lines = shown.show_grants(&who.0, &who.1);
    lines.extend(role_lines(&graph, who));
    Ok(lines)
}

/// Whether `t` (the tokens after GRANT/REVOKE) is a role grant: no `ON`
/// anywhere, not `REVOKE ALL [PRIVILEGES], GRANT OPTION FROM`, and not
/// led by a privilege that is a reserved word (`GRANT SELECT TO u` is a
/// syntax error in MySQL, not a role named SELECT).
pub(super) fn is_role_grant(t: &[Token]) -> bool {
    /// Privilege names MySQL reserves: never an unquoted role name.
    const RESERVED_PRIVS: [&str; 12] = [
        "ALL",
        "ALTER",
        "CREATE",
        "DELETE",
        "DROP",
        "GRANT",
        "INDEX",
        "INSERT",
        "LOCK",
        "REFERENCES",
        "SELECT",
        "UPDATE",
    ];
    let word = |x: &Token, w: &str| matches!(x, Token::Word(v) if v.quote_style.is_none() && v.value.eq_ignore_ascii_case(w));
    !t.iter().any(|x| word(x, "ON"))
        && !t
            .first()
            .is_some_and(|x| RESERVED_PRIVS.iter().any(|p| word(x, p)))
}
