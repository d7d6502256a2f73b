//! # User variables and LAST_INSERT_ID(expr): session state written by expressions
//!
//! Most session values an expression reads are constants of the statement
//! (`@@sql_mode`, `DATABASE()`, `ROW_COUNT()`): the compiler folds them in.
//! Two are not: `@x := expr` assigns a user variable row by row, and
//! `LAST_INSERT_ID(expr)` sets the value the next `LAST_INSERT_ID()` (and
//! the statement's OK packet) report. Both are read back within the same
//! statement (`SELECT @n := @n + 1 ...` numbers rows), so reads of user
//! variables and of `LAST_INSERT_ID()` are evaluated when the row is, not
//! when the statement is compiled.
//!
//! [`Live`] is that state: a handle the session owns and lends to the
//! compiler, which puts a clone into each compiled reference
//! (`expr::E::Live`). It is behind a mutex only to be shareable by
//! reference counting; one statement runs on one thread at a time, so it
//! is never contended.
//!
//! ## Types (MySQL 8.0)
//! A user variable holds an integer (signed or unsigned), a DECIMAL, a
//! DOUBLE, a string or NULL. A FLOAT is kept as a DOUBLE, and a temporal
//! value as its text (MySQL converts "a value of another type to a
//! permissible type"). The result column type of `@x` is the type of the
//! value it held when the statement was compiled ([`var_type`]): BIGINT
//! [UNSIGNED], DECIMAL(65,30), DOUBLE, LONGTEXT, or LONGBLOB for a
//! variable never set. Names are case-insensitive.

use std::collections::HashMap;
use std::sync::Arc;

use parking_lot::Mutex;
use quire_engine::{ColumnType, Value};

#[derive(Debug, Default)]
struct State {
    vars: HashMap<String, Value>,
    /// What `LAST_INSERT_ID()` returns.
    last_insert_id: u64,
    /// `LAST_INSERT_ID(expr)` ran in the current statement.
    set_by_expr: bool,
}

/// The session's user variables and LAST_INSERT_ID value, shared with
/// the expressions of the running statement.
#[derive(Debug, Clone, Default)]
pub struct Live(Arc<Mutex<State>>);

/// The value a user variable stores for `v` (see the module docs).
pub fn storable(v: Value) -> Value {
    match v {
        Value::Float(f) => Value::Double(f64::from(f)),
        Value::Date(_) | Value::DateTime(_) => Value::text(&v.to_string()),
        other => other,
    }
}

/// The result type of a reference to a variable holding `v`.
pub fn var_type(v: &Value) -> ColumnType {
    match v {
        Value::Int(_) => ColumnType::BigInt { unsigned: false },
        Value::UInt(_) => ColumnType::BigInt { unsigned: true },
        Value::Decimal(_) => ColumnType::Decimal {
            precision: 65,
            scale: 30,
        },
        Value::Float(_) | Value::Double(_) => ColumnType::Double,
        Value::Null => ColumnType::Blob {
            max_bytes: ColumnType::LONG_BYTES,
        },
        _ => ColumnType::text(ColumnType::LONG_BYTES),
    }
}

impl Live {
    /// `@name`'s value (NULL when never set).
    pub fn get(&self, name: &str) -> Value {
        self.0
            .lock()
            .vars
            .get(&name.to_ascii_lowercase())
            .cloned()
            .unwrap_or(Value::Null)
    }

    /// `SET @name = v` / `@name := v`; returns the stored value.
    pub fn set(&self, name: &str, v: Value) -> Value {
        let v = storable(v);
        self.0
            .lock()
            .vars
            .insert(name.to_ascii_lowercase(), v.clone());
        v
    }

    pub fn last_insert_id(&self) -> u64 {
        self.0.lock().last_insert_id
    }

    /// An INSERT generated `id` (or `SET LAST_INSERT_ID = id`).
    pub fn set_last_insert_id(&self, id: u64) {
        self.0.lock().last_insert_id = id;
    }

    /// `LAST_INSERT_ID(expr)`: remembered, and reported by the statement.
    pub fn set_last_insert_id_by_expr(&self, id: u64) {
        let mut s = self.0.lock();
        s.last_insert_id = id;
        s.set_by_expr = true;
    }

    /// Forgets the previous statement's `LAST_INSERT_ID(expr)` flag.
    pub fn statement_start(&self) {
        self.0.lock().set_by_expr = false;
    }

    /// The value `LAST_INSERT_ID(expr)` set in this statement, if it ran.
    pub fn set_in_statement(&self) -> Option<u64> {
        let s = self.0.lock();
        s.set_by_expr.then_some(s.last_insert_id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_fold_case_and_types_follow_mysql() {
        let l = Live::default();
        assert!(l.get("x").is_null());
        l.set("X", Value::Float(1.5));
        assert!(matches!(l.get("x"), Value::Double(d) if d == 1.5));
        assert_eq!(var_type(&l.get("x")), ColumnType::Double);
        assert_eq!(
            var_type(&Value::Null),
            ColumnType::Blob {
                max_bytes: ColumnType::LONG_BYTES
            }
        );
    }

    #[test]
    fn last_insert_id_by_expr_is_per_statement() {
        let l = Live::default();
        l.set_last_insert_id(7);
        assert_eq!(l.set_in_statement(), None);
        l.set_last_insert_id_by_expr(9);
        assert_eq!(l.set_in_statement(), Some(9));
        l.statement_start();
        assert_eq!(l.set_in_statement(), None);
        assert_eq!(l.last_insert_id(), 9);
    }
}
