//! # The role graph: who holds which role, and which roles are defaults
//!
//! In MySQL 8.0 a role is an account (locked, without a password) whose
//! privileges other accounts receive by being *granted* the role. The
//! grants form a directed graph kept in two tables:
//!
//! ```text
//!   mysql.role_edges     FROM_HOST, FROM_USER  ── the role
//!                        TO_HOST,   TO_USER    ── the account (or role) holding it
//!                        WITH_ADMIN_OPTION     'Y' / 'N'
//!   mysql.default_roles  HOST, USER            ── the account
//!                        DEFAULT_ROLE_HOST, DEFAULT_ROLE_USER
//!
//!   u ──holds──▶ r_app ──holds──▶ r_read        (GRANT r_read TO r_app;
//!   │                                             GRANT r_app TO u)
//!   └─ SET ROLE r_app: u's checks see u ∪ r_app ∪ r_read
//! ```
//!
//! A role granted to a role nests: the privileges of a role include those
//! of every role reachable from it. A grant that would close a cycle is
//! refused (MySQL error 4027), so the graph stays acyclic; the walk below
//! keeps a visited set all the same, so a graph edited by hand through
//! the tables cannot make it loop.
//!
//! This module is the graph alone (no statements, no store): the server
//! keeps one [`RoleGraph`] next to its account table and hands sessions a
//! shared snapshot; `account/role.rs` runs the statements over it.

use std::collections::{BTreeMap, BTreeSet};

use quire_engine::EngineError;

/// An authorization ID: `(user, host)`, the host lower-cased.
pub type AuthId = (String, String);

/// One edge: `role` granted to `to`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoleEdge {
    pub role: AuthId,
    pub to: AuthId,
    /// `WITH ADMIN OPTION`: `to` may grant `role` on.
    pub admin: bool,
}

/// Role grants and default roles of every account.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RoleGraph {
    /// `(holder, role)` → admin option.
    edges: BTreeMap<(AuthId, AuthId), bool>,
    /// account → its default roles.
    defaults: BTreeMap<AuthId, BTreeSet<AuthId>>,
}

/// `` `user`@`host` ``, as MySQL writes an authorization ID in role
/// messages and in SHOW GRANTS.
pub fn quoted(a: &AuthId) -> String {
    format!("`{}`@`{}`", a.0.replace('`', "``"), a.1.replace('`', "``"))
}

/// ER_UNKNOWN_AUTHID (3523).
pub fn unknown_authid(a: &AuthId) -> EngineError {
    EngineError::new(
        3523,
        "HY000",
        format!("Unknown authorization ID {}", quoted(a)),
    )
}

/// ER_ROLE_NOT_GRANTED (3530).
pub fn role_not_granted(role: &AuthId, to: &AuthId) -> EngineError {
    EngineError::new(
        3530,
        "HY000",
        format!("{} is not granted to {}", quoted(role), quoted(to)),
    )
}

/// ER_ROLE_GRANTED_TO_ITSELF (4027): granting `role` to `to` would close
/// a cycle (`to` already reaches `role`'s holder chain).
pub fn granted_to_itself(role: &AuthId, to: &AuthId) -> EngineError {
    EngineError::new(
        4027,
        "HY000",
        format!(
            "User account {} is directly or indirectly granted to the role {}. The GRANT would create a loop",
            quoted(to),
            quoted(role)
        ),
    )
}

impl RoleGraph {
    /// Adds `role` to `to` (an existing edge keeps an admin option it had).
    pub fn grant(&mut self, e: &RoleEdge) {
        let admin = self
            .edges
            .entry((e.to.clone(), e.role.clone()))
            .or_insert(false);
        *admin |= e.admin;
    }

    /// Removes the edge; `false` if there was none.
    pub fn revoke(&mut self, role: &AuthId, from: &AuthId) -> bool {
        self.edges.remove(&(from.clone(), role.clone())).is_some()
    }

    /// Replaces `who`'s default roles.
    pub fn set_defaults(&mut self, who: &AuthId, roles: &[AuthId]) {
        if roles.is_empty() {
            self.defaults.remove(who);
        } else {
            self.defaults
                .insert(who.clone(), roles.iter().cloned().collect());
        }
    }

    /// Forgets every edge and default that names `who` (DROP USER / ROLE).
    pub fn remove_account(&mut self, who: &AuthId) {
        self.edges.retain(|(to, role), _| to != who && role != who);
        self.defaults.remove(who);
        for d in self.defaults.values_mut() {
            d.remove(who);
        }
        self.defaults.retain(|_, d| !d.is_empty());
    }

    /// The roles granted directly to `who`, sorted, with their admin option.
    pub fn granted_to<'a>(&'a self, who: &'a AuthId) -> impl Iterator<Item = (&'a AuthId, bool)> {
        self.edges
            .range((who.clone(), (String::new(), String::new()))..)
            .take_while(move |((to, _), _)| to == who)
            .map(|((_, role), admin)| (role, *admin))
    }

    /// Whether `role` is granted directly to `who`.
    pub fn is_granted(&self, who: &AuthId, role: &AuthId) -> bool {
        self.edges.contains_key(&(who.clone(), role.clone()))
    }

    /// Whether `who` holds `role` directly with the admin option.
    pub fn has_admin(&self, who: &AuthId, role: &AuthId) -> bool {
        self.edges
            .get(&(who.clone(), role.clone()))
            .copied()
            .unwrap_or(false)
    }

    /// `who`'s default roles, sorted.
    pub fn defaults_of(&self, who: &AuthId) -> Vec<AuthId> {
        self.defaults
            .get(who)
            .map(|d| d.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// `start` and every role reachable from it, each once, sorted.
    pub fn closure<'a>(&self, start: impl IntoIterator<Item = &'a AuthId>) -> Vec<AuthId> {
        let mut seen: BTreeSet<AuthId> = BTreeSet::new();
        let mut todo: Vec<AuthId> = start.into_iter().cloned().collect();
        while let Some(r) = todo.pop() {
            if seen.contains(&r) {
                continue;
            }
            todo.extend(self.granted_to(&r).map(|(x, _)| x.clone()));
            seen.insert(r);
        }
        seen.into_iter().collect()
    }

    /// Whether granting `role` to `to` would close a cycle: `to` is
    /// `role` itself or a role `role` already reaches.
    pub fn would_cycle(&self, role: &AuthId, to: &AuthId) -> bool {
        self.closure([role]).iter().any(|r| r == to)
    }

    /// Every edge `(role, holder, admin)`, for writing the tables.
    pub fn edges(&self) -> impl Iterator<Item = RoleEdge> + '_ {
        self.edges.iter().map(|((to, role), admin)| RoleEdge {
            role: role.clone(),
            to: to.clone(),
            admin: *admin,
        })
    }

    /// Every default `(account, role)`.
    pub fn all_defaults(&self) -> impl Iterator<Item = (&AuthId, &AuthId)> {
        self.defaults
            .iter()
            .flat_map(|(who, d)| d.iter().map(move |r| (who, r)))
    }
}

/// `CURRENT_ROLE()`: `NONE`, or the active roles as `` `r`@`h` `` joined
/// by commas, sorted by (user, host) as MySQL sorts them.
pub fn current_role_text(active: &[AuthId]) -> String {
    if active.is_empty() {
        return "NONE".to_string();
    }
    let mut v: Vec<&AuthId> = active.iter().collect();
    v.sort();
    v.dedup();
    let parts: Vec<String> = v.into_iter().map(quoted).collect();
    parts.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(u: &str) -> AuthId {
        (u.to_string(), "%".to_string())
    }

    fn edge(role: &str, to: &str) -> RoleEdge {
        RoleEdge {
            role: id(role),
            to: id(to),
            admin: false,
        }
    }

    #[test]
    fn nesting_cycles_and_removal() {
        let mut g = RoleGraph::default();
        g.grant(&edge("r_read", "r_app"));
        g.grant(&edge("r_app", "u"));
        g.grant(&RoleEdge {
            admin: true,
            ..edge("r_x", "u")
        });
        assert_eq!(
            g.granted_to(&id("u")).collect::<Vec<_>>(),
            vec![(&id("r_app"), false), (&id("r_x"), true)]
        );
        assert!(g.has_admin(&id("u"), &id("r_x")) && !g.has_admin(&id("u"), &id("r_app")));
        assert_eq!(g.closure([&id("r_app")]), vec![id("r_app"), id("r_read")]);
        // r_read -> r_app -> u: granting u (or r_app) to r_read loops.
        assert!(g.would_cycle(&id("r_app"), &id("r_read")));
        assert!(g.would_cycle(&id("r_read"), &id("r_read")));
        assert!(!g.would_cycle(&id("r_read"), &id("u")));
        let e = granted_to_itself(&id("v"), &id("r1"));
        assert_eq!(
            (e.code, e.message.as_str()),
            (
                4027,
                "User account `r1`@`%` is directly or indirectly granted to the role `v`@`%`. The GRANT would create a loop"
            )
        );
        g.set_defaults(&id("u"), &[id("r_app"), id("r_x")]);
        g.remove_account(&id("r_x"));
        assert_eq!(g.defaults_of(&id("u")), vec![id("r_app")]);
        assert!(!g.is_granted(&id("u"), &id("r_x")));
        assert!(g.revoke(&id("r_app"), &id("u")));
        assert!(!g.revoke(&id("r_app"), &id("u")));
        assert_eq!(g.edges().count(), 1);
    }

    #[test]
    fn current_role_is_sorted() {
        assert_eq!(current_role_text(&[]), "NONE");
        assert_eq!(
            current_role_text(&[id("r2"), ("r1".into(), "localhost".into()), id("r1")]),
            "`r1`@`%`,`r1`@`localhost`,`r2`@`%`"
        );
    }
}
