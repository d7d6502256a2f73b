//! # Named windows
//!
//! `SELECT f() OVER w, g() OVER (w ORDER BY x) ... WINDOW w AS (PARTITION
//! BY p), v AS (w ORDER BY y ROWS ...)`: before a block is bound, every
//! window a function names (`OVER w`, `OVER (w ...)`) is replaced by the
//! full specification it stands for, so the expression compiler only
//! ever sees complete `OVER (...)` specifications.
//!
//! The rules are MySQL 8.0's (SQL:2014 7.15): a window that refers to
//! another inherits its PARTITION BY (and may not have one of its own,
//! 3581), its ORDER BY unless both order (3583), never its frame (a window
//! with a frame cannot be referred to, 3582); names are unique (3591),
//! must exist (3579) and may not refer in a circle (3580). Every WINDOW
//! definition is checked, used or not.
//!
//! A specification that came from a named window keeps the name in
//! `WindowSpec::window_name`: after this pass that field is only the name
//! errors about the window print ("Window 'w': ..."); an inline window's
//! is None (`<unnamed window>`).

use std::ops::ControlFlow;

use quire_engine::EngineError;
use sqlparser::ast::{
    Expr, Ident, NamedWindowDefinition, NamedWindowExpr, OrderByExpr, Query, Select, SelectItem,
    Visit, VisitMut, Visitor, VisitorMut, WindowSpec, WindowType,
};

use crate::SqlResult;

/// The window definitions of one block, by name.
struct Defs<'a> {
    defs: &'a [NamedWindowDefinition],
}

/// The block with its window references expanded; None when it has
/// neither a WINDOW clause nor a function naming a window.
pub fn expand(s: &Select, order: &[OrderByExpr]) -> SqlResult<Option<(Select, Vec<OrderByExpr>)>> {
    if s.named_window.is_empty() && !names_a_window(s, order) {
        return Ok(None);
    }
    let defs = Defs {
        defs: &s.named_window,
    };
    defs.check()?;
    let mut out = s.clone();
    out.named_window.clear();
    let mut order = order.to_vec();
    let mut v = Expand {
        defs: &defs,
        depth: 0,
        err: None,
    };
    for item in out.projection.iter_mut() {
        // The column keeps the header it was written with (`SUM(x) OVER
        // w`), not the expanded specification's text.
        let header = match item {
            SelectItem::UnnamedExpr(e) => Some(e.to_string()),
            _ => None,
        };
        let _ = item.visit(&mut v);
        if let (Some(header), SelectItem::UnnamedExpr(e)) = (header, &*item) {
            if e.to_string() != header {
                *item = SelectItem::ExprWithAlias {
                    expr: e.clone(),
                    alias: Ident::new(header),
                };
            }
        }
    }
    for o in order.iter_mut() {
        let _ = o.visit(&mut v);
    }
    if let Some(e) = v.err {
        return Err(e);
    }
    Ok(Some((out, order)))
}

/// Whether a select-list or ORDER BY window function of this block names
/// a window (without a WINDOW clause that is 3579).
fn names_a_window(s: &Select, order: &[OrderByExpr]) -> bool {
    let mut f = FindNamed {
        depth: 0,
        found: false,
    };
    for item in &s.projection {
        let _ = item.visit(&mut f);
    }
    for o in order {
        let _ = o.visit(&mut f);
    }
    f.found
}

struct FindNamed {
    depth: usize,
    found: bool,
}

impl Visitor for FindNamed {
    type Break = ();
    fn pre_visit_query(&mut self, _: &Query) -> ControlFlow<()> {
        self.depth += 1;
        ControlFlow::Continue(())
    }
    fn post_visit_query(&mut self, _: &Query) -> ControlFlow<()> {
        self.depth -= 1;
        ControlFlow::Continue(())
    }
    fn pre_visit_expr(&mut self, e: &Expr) -> ControlFlow<()> {
        if self.depth == 0 {
            if let Expr::Function(f) = e {
                match &f.over {
                    Some(WindowType::NamedWindow(_)) => self.found = true,
                    Some(WindowType::WindowSpec(w)) if w.window_name.is_some() => self.found = true,
                    _ => {}
                }
            }
        }
        ControlFlow::Continue(())
    }
}

/// Replaces window references in the block's own expressions (not in its
/// subqueries, which have their own WINDOW clauses).
struct Expand<'a> {
    defs: &'a Defs<'a>,
    depth: usize,
    err: Option<EngineError>,
}

impl VisitorMut for Expand<'_> {
    type Break = ();
    fn pre_visit_query(&mut self, _: &mut Query) -> ControlFlow<()> {
        self.depth += 1;
        ControlFlow::Continue(())
    }
    fn post_visit_query(&mut self, _: &mut Query) -> ControlFlow<()> {
        self.depth -= 1;
        ControlFlow::Continue(())
    }
    fn pre_visit_expr(&mut self, e: &mut Expr) -> ControlFlow<()> {
        if self.depth > 0 || self.err.is_some() {
            return ControlFlow::Continue(());
        }
        let Expr::Function(f) = e else {
            return ControlFlow::Continue(());
        };
        let full = match &f.over {
            Some(WindowType::NamedWindow(name)) => self.defs.resolve(name),
            Some(WindowType::WindowSpec(w)) if w.window_name.is_some() => {
                self.defs.inherit(w, None)
            }
            _ => return ControlFlow::Continue(()),
        };
        match full {
            Ok(w) => f.over = Some(WindowType::WindowSpec(w)),
            Err(err) => self.err = Some(err),
        }
        ControlFlow::Continue(())
    }
}

impl Defs<'_> {
    /// The definition named `name`, as written.
    fn get(&self, name: &str) -> SqlResult<&WindowSpec> {
        let d = self
            .defs
            .iter()
            .find(|d| d.0.value.eq_ignore_ascii_case(name))
            .ok_or_else(|| {
                EngineError::new(
                    3579,
                    "HY000",
                    format!("Window name '{name}' is not defined."),
                )
            })?;
        match &d.1 {
            NamedWindowExpr::WindowSpec(w) => Ok(w),
            // `WINDOW w AS v` (BigQuery); MySQL wants parentheses.
            NamedWindowExpr::NamedWindow(v) => Err(crate::parse::syntax_error(&v.value)),
        }
    }

    /// Checks every definition: unique names, references that exist and
    /// do not go round in a circle, the inheritance rules.
    fn check(&self) -> SqlResult<()> {
        for (i, d) in self.defs.iter().enumerate() {
            if self.defs[..i]
                .iter()
                .any(|e| e.0.value.eq_ignore_ascii_case(&d.0.value))
            {
                return Err(EngineError::new(
                    3591,
                    "HY000",
                    format!("Window '{}' is defined twice.", d.0.value),
                ));
            }
        }
        for d in self.defs {
            // Follow the chain of references: at most one per window.
            let mut seen = vec![d.0.value.to_ascii_lowercase()];
            let mut at = self.get(&d.0.value)?;
            while let Some(parent) = &at.window_name {
                let key = parent.value.to_ascii_lowercase();
                if seen.contains(&key) {
                    return Err(EngineError::new(
                        3580,
                        "HY000",
                        "There is a circularity in the window dependency graph.",
                    ));
                }
                seen.push(key);
                at = self.get(&parent.value)?;
            }
        }
        for d in self.defs {
            self.resolve(&d.0)?;
        }
        Ok(())
    }

    /// The full specification of named window `name`.
    fn resolve(&self, name: &Ident) -> SqlResult<WindowSpec> {
        let w = self.get(&name.value)?;
        let mut full = if w.window_name.is_some() {
            self.inherit(w, Some(&name.value))?
        } else {
            w.clone()
        };
        full.window_name = Some(Ident::new(name.value.clone()));
        Ok(full)
    }

    /// `(parent ...)`: the window `w` (named `own`, None when inline)
    /// completed from the window it refers to.
    fn inherit(&self, w: &WindowSpec, own: Option<&str>) -> SqlResult<WindowSpec> {
        let Some(parent_name) = &w.window_name else {
            return Ok(w.clone());
        };
        if !w.partition_by.is_empty() {
            return Err(EngineError::new(
                3581,
                "HY000",
                "A window which depends on another cannot define partitioning.",
            ));
        }
        let parent_def = self.get(&parent_name.value)?;
        if parent_def.window_frame.is_some() {
            return Err(EngineError::new(
                3582,
                "HY000",
                format!(
                    "Window '{}' has a frame definition, so cannot be referenced by another window.",
                    parent_name.value
                ),
            ));
        }
        let parent = self.resolve(parent_name)?;
        if !w.order_by.is_empty() && !parent.order_by.is_empty() {
            // The window that orders first up the chain is named second.
            let orderer = self.first_orderer(&parent_name.value)?;
            return Err(EngineError::new(
                3583,
                "HY000",
                format!(
                    "Window '{}' cannot inherit '{}' since both contain an ORDER BY clause.",
                    own.unwrap_or("<unnamed window>"),
                    orderer
                ),
            ));
        }
        Ok(WindowSpec {
            window_name: None,
            partition_by: parent.partition_by,
            order_by: if w.order_by.is_empty() {
                parent.order_by
            } else {
                w.order_by.clone()
            },
            window_frame: w.window_frame.clone(),
        })
    }

    /// The nearest window up the chain from `name` (itself included) that
    /// has its own ORDER BY.
    fn first_orderer(&self, name: &str) -> SqlResult<String> {
        let mut at = name.to_string();
        loop {
            let w = self.get(&at)?;
            if !w.order_by.is_empty() {
                return Ok(at);
            }
            match &w.window_name {
                Some(p) => at = p.value.clone(),
                None => return Ok(at),
            }
        }
    }
}
