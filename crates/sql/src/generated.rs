//! # Generated columns and DEFAULT expressions
//!
//! Two kinds of column carry an expression (MySQL 8.0):
//!
//! ```text
//!   b INT [GENERATED ALWAYS] AS (a + 1) [VIRTUAL|STORED]   a generated column
//!   c INT DEFAULT (a * 2)                                  a DEFAULT expression (8.0.13)
//! ```
//!
//! **Definition** (`column_def` in ddl.rs hands the expressions here).
//! The expression is checked as MySQL does it, in MySQL's order: first on
//! its own while the column is read ([`pre_validate`]: a row value
//! 3764/3771, a subquery 3102/3769, a variable or `?` 3765/3772, a
//! function whose value is not a function of the row 3763/3770 with its
//! name), then against the whole column list once the table is known
//! ([`validate_table`]: unknown column 1054 "in 'generated column
//! function'" / "in 'default value expression'", a generated column or
//! DEFAULT expression defined at or after this column 3107/3767, an
//! AUTO_INCREMENT column 3109/3768), then compiled once so an unknown
//! function or a wrong argument count fails the CREATE, not the first
//! INSERT. A generated column may not have DEFAULT, ON UPDATE or
//! AUTO_INCREMENT (MySQL's parser: 1221 "Incorrect usage of DEFAULT and
//! generated column"), nor be a VIRTUAL PRIMARY KEY (3106).
//! For a generated column every function of the row is allowed, nothing
//! that changes between calls or sessions (`NOW()`, `RAND()`, `UUID()`,
//! `USER()`, ... as MySQL's CHECK list); a DEFAULT expression may call
//! those, but not the functions of the session's statement history or of
//! locks (`LAST_INSERT_ID()`, `FOUND_ROWS()`, `ROW_COUNT()`, `SLEEP()`,
//! `GET_LOCK()`, ...) nor aggregates (1111).
//!
//! **Text.** The catalog keeps the expression as MySQL prints an item
//! tree ([`print`]): identifiers back-quoted with their declared case,
//! every operator parenthesised (`(`a` + 1)`), function names in lower
//! case with MySQL's canonical name (`now()`, `substr(...)`), arguments
//! joined by `,`, string literals with their introducer
//! (`_utf8mb4'x'`). SHOW CREATE TABLE prints `GENERATED ALWAYS AS
//! (<text>) VIRTUAL` and `DEFAULT (<text>)`; information_schema shows the
//! text itself. Printing what [`print`] printed gives the same text, so a
//! definition read back from SHOW CREATE TABLE is stored unchanged.
//! Constructs the printer does not know are kept in sqlparser's own
//! spelling (still valid SQL, read back the same).
//!
//! **Values** ([`TableGen`], compiled per statement from that text). An
//! INSERT (also REPLACE, INSERT ... SELECT, ON DUPLICATE KEY UPDATE,
//! CREATE TABLE ... SELECT) first takes the values it was given and the
//! literal defaults, converted to their column types, then computes in
//! column order each DEFAULT expression of a column given no value and
//! each generated column; a computed value is converted to its column's
//! type in strict mode like any value (1264, 1406, 1048 ...). An explicit
//! value other than DEFAULT for a generated column is 3105 (a warning
//! under INSERT IGNORE, the value then computed). UPDATE (single and
//! multi-table, and ON DUPLICATE KEY UPDATE) recomputes every generated
//! column of the changed row, so a value can never go stale; `SET b =
//! DEFAULT` on a generated column is allowed and means just that. An ALTER
//! TABLE that rebuilds the table recomputes them for every copied row and
//! evaluates an added column's DEFAULT expression per row (engine
//! rebuild.rs calls [`TableGen::rebuild_row`]).
//!
//! **VIRTUAL is stored.** quire keeps a VIRTUAL column's value in the row
//! like a STORED one: reads see exactly what MySQL computes on read (the
//! expression is deterministic and recomputed on every write of its
//! inputs), secondary indexes on it need nothing special, and the only
//! visible difference is the row's size. What could make the kept value
//! stale is refused: a foreign key cascade writing a column a VIRTUAL
//! column reads (engine fk_ddl.rs, 1235), MODIFY between VIRTUAL and
//! STORED/ordinary (3106, as MySQL).

use std::ops::ControlFlow;

use quire_engine::types::coerce;
use quire_engine::{ColumnDef, EngineError, TableDef, Value};
use sqlparser::ast::{self, Expr, Visit, Visitor};

use crate::constraints::NOT_OF_THE_ROW;
use crate::ctx::Ctx;
use crate::expr::{Row, E};
use crate::SqlResult;

/// Which kind of expression a message speaks of.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Kind {
    Generated,
    Default,
}

/// Functions a DEFAULT expression may not call: the session's statement
/// history, locks and waits.
const NOT_IN_DEFAULT: &[&str] = &[
    "BENCHMARK",
    "FOUND_ROWS",
    "GET_LOCK",
    "IS_FREE_LOCK",
    "IS_USED_LOCK",
    "LAST_INSERT_ID",
    "LOAD_FILE",
    "MASTER_POS_WAIT",
    "RELEASE_ALL_LOCKS",
    "RELEASE_LOCK",
    "ROW_COUNT",
    "SLEEP",
];

const AGGREGATES: &[&str] = &[
    "AVG",
    "BIT_AND",
    "BIT_OR",
    "BIT_XOR",
    "COUNT",
    "GROUP_CONCAT",
    "JSON_ARRAYAGG",
    "JSON_OBJECTAGG",
    "MAX",
    "MIN",
    "STD",
    "STDDEV",
    "STDDEV_POP",
    "STDDEV_SAMP",
    "SUM",
    "VARIANCE",
    "VAR_POP",
    "VAR_SAMP",
];

/// Words that read as a call without parentheses (`CURRENT_TIMESTAMP`),
/// with the name MySQL prints for them.
const BARE_CALLS: &[(&str, &str)] = &[
    ("CURRENT_TIMESTAMP", "now"),
    ("LOCALTIME", "now"),
    ("LOCALTIMESTAMP", "now"),
    ("CURRENT_DATE", "curdate"),
    ("CURRENT_TIME", "curtime"),
    ("CURRENT_USER", "current_user"),
];

/// MySQL's printed name of a function written as `upper` (upper case).
fn canonical_name(upper: &str) -> String {
    match upper {
        "CURRENT_TIMESTAMP" | "LOCALTIME" | "LOCALTIMESTAMP" => "now",
        "CURRENT_DATE" => "curdate",
        "CURRENT_TIME" => "curtime",
        "LCASE" => "lower",
        "UCASE" => "upper",
        "SUBSTRING" | "MID" => "substr",
        "CHARACTER_LENGTH" => "char_length",
        "POWER" => "pow",
        "SCHEMA" => "database",
        "SESSION_USER" | "SYSTEM_USER" => "user",
        other => return other.to_ascii_lowercase(),
    }
    .to_string()
}

fn bare_call(i: &ast::Ident) -> Option<&'static str> {
    if i.quote_style.is_some() {
        return None;
    }
    BARE_CALLS
        .iter()
        .find(|(w, _)| w.eq_ignore_ascii_case(&i.value))
        .map(|(_, n)| *n)
}

// ------------------------------------------------------------- errors

fn err(code: u16, msg: String) -> EngineError {
    EngineError::new(code, "HY000", msg)
}

fn row_value(kind: Kind, col: &str) -> EngineError {
    match kind {
        Kind::Generated => err(
            3764,
            format!("Expression of generated column '{col}' cannot refer to a row value."),
        ),
        Kind::Default => err(
            3771,
            format!("Default value expression of column '{col}' cannot refer to a row value."),
        ),
    }
}

fn unnamed_function(kind: Kind, col: &str) -> EngineError {
    match kind {
        Kind::Generated => err(
            3102,
            format!("Expression of generated column '{col}' contains a disallowed function."),
        ),
        Kind::Default => err(
            3769,
            format!("Default value expression of column '{col}' contains a disallowed function."),
        ),
    }
}

fn named_function(kind: Kind, col: &str, f: &str) -> EngineError {
    match kind {
        Kind::Generated => err(
            3763,
            format!("Expression of generated column '{col}' contains a disallowed function: {f}."),
        ),
        Kind::Default => err(
            3770,
            format!(
                "Default value expression of column '{col}' contains a disallowed function: {f}."
            ),
        ),
    }
}

fn variables(kind: Kind, col: &str) -> EngineError {
    match kind {
        Kind::Generated => err(
            3765,
            format!(
                "Expression of generated column '{col}' cannot refer user or system variables."
            ),
        ),
        Kind::Default => err(
            3772,
            format!(
                "Default value expression of column '{col}' cannot refer user or system variables."
            ),
        ),
    }
}

fn non_prior(kind: Kind, col: &str) -> EngineError {
    match kind {
        Kind::Generated => err(
            3107,
            "Generated column can refer only to generated columns defined prior to it.".into(),
        ),
        Kind::Default => err(
            3767,
            format!("Default value expression of column '{col}' cannot refer to a column defined after it if that column is a generated column or has an expression as default value."),
        ),
    }
}

fn auto_inc(kind: Kind, col: &str) -> EngineError {
    match kind {
        Kind::Generated => err(
            3109,
            format!("Generated column '{col}' cannot refer to auto-increment column."),
        ),
        Kind::Default => err(
            3768,
            format!("Default value expression of column '{col}' cannot refer to an auto-increment column."),
        ),
    }
}

/// 1221 ER_WRONG_USAGE: an attribute MySQL's grammar refuses on a
/// generated column (DEFAULT, ON UPDATE, AUTO_INCREMENT).
pub(crate) fn wrong_usage(what: &str) -> EngineError {
    EngineError::new(
        1221,
        "HY000",
        format!("Incorrect usage of {what} and generated column"),
    )
}

/// 3106 ER_UNSUPPORTED_ACTION_ON_GENERATED_COLUMN.
pub(crate) fn unsupported(what: &str) -> EngineError {
    err(
        3106,
        format!("'{what}' is not supported for generated columns."),
    )
}

/// 3105 ER_NON_DEFAULT_VALUE_FOR_GENERATED_COLUMN.
pub(crate) fn value_not_allowed(col: &str, table: &str) -> EngineError {
    err(
        3105,
        format!(
            "The value specified for generated column '{col}' in table '{table}' is not allowed."
        ),
    )
}

// ------------------------------------------------------------- checks

/// The column-independent checks of an expression of column `col`, as
/// MySQL runs them while it reads the definition.
pub(crate) fn pre_validate(e: &Expr, kind: Kind, col: &str) -> SqlResult<()> {
    let mut inner = e;
    while let Expr::Nested(x) = inner {
        inner = x;
    }
    if matches!(inner, Expr::Tuple(_)) {
        return Err(row_value(kind, col));
    }
    struct V<'a> {
        kind: Kind,
        col: &'a str,
    }
    impl Visitor for V<'_> {
        type Break = EngineError;
        fn pre_visit_query(&mut self, _: &ast::Query) -> ControlFlow<EngineError> {
            ControlFlow::Break(unnamed_function(self.kind, self.col))
        }
        fn pre_visit_expr(&mut self, e: &Expr) -> ControlFlow<EngineError> {
            let r = match e {
                Expr::Identifier(i) if i.quote_style.is_none() && i.value.starts_with('@') => {
                    Err(variables(self.kind, self.col))
                }
                Expr::Value(v) if matches!(v.value, ast::Value::Placeholder(_)) => {
                    Err(variables(self.kind, self.col))
                }
                Expr::Tuple(_) => Err(row_value(self.kind, self.col)),
                Expr::Identifier(i) if self.kind == Kind::Generated => match bare_call(i) {
                    Some(n) => Err(named_function(self.kind, self.col, n)),
                    None => Ok(()),
                },
                Expr::Function(f) => {
                    let upper = f.name.to_string().to_ascii_uppercase();
                    let upper = upper.trim_matches('`');
                    let banned = match self.kind {
                        Kind::Generated => NOT_OF_THE_ROW.contains(&upper),
                        Kind::Default => NOT_IN_DEFAULT.contains(&upper),
                    };
                    if f.over.is_some() {
                        Err(EngineError::new(
                            3593,
                            "HY000",
                            format!(
                                "You cannot use the window function '{}' in this context.'",
                                upper.to_ascii_lowercase()
                            ),
                        ))
                    } else if AGGREGATES.contains(&upper) {
                        Err(EngineError::new(
                            1111,
                            "HY000",
                            "Invalid use of group function",
                        ))
                    } else if banned {
                        Err(named_function(self.kind, self.col, &canonical_name(upper)))
                    } else {
                        Ok(())
                    }
                }
                _ => Ok(()),
            };
            match r {
                Ok(()) => ControlFlow::Continue(()),
                Err(e) => ControlFlow::Break(e),
            }
        }
    }
    match e.visit(&mut V { kind, col }) {
        ControlFlow::Break(err) => Err(err),
        ControlFlow::Continue(()) => Ok(()),
    }
}

/// The expression text of column `i`: (kind, text).
fn expression_of(c: &ColumnDef) -> Option<(Kind, &str)> {
    if let Some(g) = &c.generated {
        return Some((Kind::Generated, &g.expr));
    }
    c.default_expr.as_deref().map(|e| (Kind::Default, e))
}

/// The checks that need the whole column list (module text), for every
/// generated column and DEFAULT expression of `columns`; the stored text
/// is rewritten to name the columns as declared.
pub(crate) fn validate_table(columns: &mut [ColumnDef]) -> SqlResult<()> {
    for i in 0..columns.len() {
        let Some((kind, text)) = expression_of(&columns[i]) else {
            continue;
        };
        let mut e = crate::parse::parse_expr(text)?;
        let col = columns[i].name.clone();
        let mut found: Option<EngineError> = None;
        let _ = ast::visit_expressions_mut(&mut e, |x| {
            let ident = match x {
                Expr::Identifier(id) if bare_call(id).is_none() => Some(id.clone()),
                Expr::CompoundIdentifier(parts) => parts.last().cloned(),
                _ => None,
            };
            let Some(id) = ident else {
                return ControlFlow::Continue(());
            };
            let r = (|| {
                let Some(j) = columns
                    .iter()
                    .position(|c| c.name.eq_ignore_ascii_case(&id.value))
                else {
                    let clause = match kind {
                        Kind::Generated => "generated column function",
                        Kind::Default => "default value expression",
                    };
                    return Err(crate::expr::err_unknown_column(&id.value, clause));
                };
                let other = &columns[j];
                if j >= i && (other.generated.is_some() || other.default_expr.is_some()) {
                    return Err(non_prior(kind, &col));
                }
                if other.auto_increment {
                    return Err(auto_inc(kind, &col));
                }
                Ok(ast::Ident::with_quote('`', other.name.clone()))
            })();
            match r {
                Ok(id) => {
                    *x = Expr::Identifier(id);
                    ControlFlow::Continue(())
                }
                Err(e) => {
                    found = Some(e);
                    ControlFlow::Break(())
                }
            }
        });
        if let Some(e) = found {
            return Err(e);
        }
        let printed = print(&e);
        match &mut columns[i] {
            ColumnDef {
                generated: Some(g), ..
            } => g.expr = printed,
            c => c.default_expr = Some(printed),
        }
    }
    Ok(())
}

/// ALTER TABLE: the identifiers of `c`'s expression named as the columns
/// `known` declare them (unknown names are left for [`validate_table`]
/// to refuse against the final column list).
pub(crate) fn normalize_names(c: &mut ColumnDef, known: &[ColumnDef]) -> SqlResult<()> {
    let Some((_, text)) = expression_of(c) else {
        return Ok(());
    };
    let mut e = crate::parse::parse_expr(text)?;
    let _ = ast::visit_expressions_mut(&mut e, |x| {
        let ident = match x {
            Expr::Identifier(id) if bare_call(id).is_none() => Some(id.clone()),
            Expr::CompoundIdentifier(parts) => parts.last().cloned(),
            _ => None,
        };
        if let Some(id) = ident {
            if let Some(k) = known
                .iter()
                .find(|k| k.name.eq_ignore_ascii_case(&id.value))
            {
                *x = Expr::Identifier(ast::Ident::with_quote('`', k.name.clone()));
            }
        }
        ControlFlow::<()>::Continue(())
    });
    let printed = print(&e);
    match c {
        ColumnDef {
            generated: Some(g), ..
        } => g.expr = printed,
        c => c.default_expr = Some(printed),
    }
    Ok(())
}

/// Compiles every expression of `columns` (an unknown function, a wrong
/// argument count): the CREATE / ALTER fails rather than the first write.
pub(crate) fn compile_check(
    cx: &Ctx,
    db: &str,
    table: &str,
    columns: &[ColumnDef],
) -> SqlResult<()> {
    if !columns.iter().any(|c| expression_of(c).is_some()) {
        return Ok(());
    }
    let def = shape(db, table, columns);
    TableGen::compile(cx, &def).map(|_| ())
}

/// A table definition carrying only `columns` (what the compiler binds).
fn shape(db: &str, table: &str, columns: &[ColumnDef]) -> TableDef {
    TableDef {
        id: 0,
        db: db.to_string(),
        name: table.to_string(),
        columns: columns.to_vec(),
        primary: Vec::new(),
        indexes: Vec::new(),
        checks: Vec::new(),
        foreign_keys: Vec::new(),
        rebuilt_csn: 0,
        building: None,
        collation: quire_engine::ColumnType::LEGACY_COLLATION,
        temporary: false,
    }
}

// ------------------------------------------------------------- printing

/// `name` back-quoted as MySQL prints identifiers.
fn quote(name: &str) -> String {
    format!("`{}`", name.replace('`', "``"))
}

/// A string literal as MySQL prints it: the introducer, quotes, and
/// backslash escapes for `\`, `'` and control characters.
fn string_literal(introducer: &str, s: &str) -> String {
    let mut o = format!("{introducer}'");
    for ch in s.chars() {
        match ch {
            '\\' => o.push_str("\\\\"),
            '\'' => o.push_str("\\'"),
            '\n' => o.push_str("\\n"),
            '\r' => o.push_str("\\r"),
            '\0' => o.push_str("\\0"),
            '\x1a' => o.push_str("\\Z"),
            c => o.push(c),
        }
    }
    o.push('\'');
    o
}

fn binary_op(op: &ast::BinaryOperator) -> Option<&'static str> {
    use ast::BinaryOperator as B;
    Some(match op {
        B::Plus => "+",
        B::Minus => "-",
        B::Multiply => "*",
        B::Divide => "/",
        B::Modulo => "%",
        B::Eq => "=",
        B::NotEq => "<>",
        B::Lt => "<",
        B::Gt => ">",
        B::LtEq => "<=",
        B::GtEq => ">=",
        B::Spaceship => "<=>",
        B::And => "and",
        B::Or => "or",
        B::Xor => "xor",
        B::BitwiseAnd => "&",
        B::BitwiseOr => "|",
        B::BitwiseXor => "^",
        B::MyIntegerDivide => "DIV",
        B::PGBitwiseShiftLeft => "<<",
        B::PGBitwiseShiftRight => ">>",
        _ => return None,
    })
}

/// The expression as MySQL prints an item tree (module text).
pub(crate) fn print(e: &Expr) -> String {
    let mut out = String::new();
    print_into(e, &mut out);
    out
}

fn print_list(list: &[Expr], out: &mut String) {
    for (k, x) in list.iter().enumerate() {
        if k > 0 {
            out.push(',');
        }
        print_into(x, out);
    }
}

fn print_into(e: &Expr, out: &mut String) {
    match e {
        Expr::Identifier(i) => match bare_call(i) {
            Some(n) => {
                out.push_str(n);
                out.push_str("()");
            }
            None => out.push_str(&quote(&i.value)),
        },
        Expr::CompoundIdentifier(parts) => match parts.last() {
            Some(i) => out.push_str(&quote(&i.value)),
            None => out.push_str(&e.to_string()),
        },
        Expr::Nested(x) => print_into(x, out),
        Expr::Value(v) => match &v.value {
            ast::Value::Number(n, _) => out.push_str(n),
            ast::Value::SingleQuotedString(s) | ast::Value::DoubleQuotedString(s) => {
                out.push_str(&string_literal("_utf8mb4", s))
            }
            ast::Value::Boolean(b) => out.push_str(if *b { "true" } else { "false" }),
            ast::Value::Null => out.push_str("NULL"),
            _ => out.push_str(&e.to_string()),
        },
        Expr::Prefixed { prefix, value } if prefix.value.starts_with('_') => match &**value {
            Expr::Value(v) => match &v.value {
                ast::Value::SingleQuotedString(s) | ast::Value::DoubleQuotedString(s) => {
                    out.push_str(&string_literal(&prefix.value, s))
                }
                _ => out.push_str(&e.to_string()),
            },
            _ => out.push_str(&e.to_string()),
        },
        Expr::BinaryOp { left, op, right } => match binary_op(op) {
            Some(o) => {
                out.push('(');
                print_into(left, out);
                out.push(' ');
                out.push_str(o);
                out.push(' ');
                print_into(right, out);
                out.push(')');
            }
            None => out.push_str(&e.to_string()),
        },
        Expr::UnaryOp { op, expr } => match op {
            ast::UnaryOperator::Minus => {
                out.push_str("-(");
                print_into(expr, out);
                out.push(')');
            }
            ast::UnaryOperator::Plus => print_into(expr, out),
            ast::UnaryOperator::Not => {
                out.push_str("(not(");
                print_into(expr, out);
                out.push_str("))");
            }
            ast::UnaryOperator::BitwiseNot => {
                out.push_str("~(");
                print_into(expr, out);
                out.push(')');
            }
            _ => out.push_str(&e.to_string()),
        },
        Expr::IsNull(x) | Expr::IsNotNull(x) => {
            out.push('(');
            print_into(x, out);
            out.push_str(if matches!(e, Expr::IsNull(_)) {
                " is null)"
            } else {
                " is not null)"
            });
        }
        Expr::Between {
            expr,
            negated,
            low,
            high,
        } => {
            out.push('(');
            print_into(expr, out);
            out.push_str(if *negated {
                " not between "
            } else {
                " between "
            });
            print_into(low, out);
            out.push_str(" and ");
            print_into(high, out);
            out.push(')');
        }
        Expr::In {
            expr,
            target: ast::InTarget::List(list),
            negated,
            global: false,
        } => {
            out.push('(');
            print_into(expr, out);
            out.push_str(if *negated { " not in (" } else { " in (" });
            print_list(list, out);
            out.push_str("))");
        }
        Expr::Like {
            negated: false,
            any: false,
            expr,
            pattern,
            escape_char: None,
        } => {
            out.push('(');
            print_into(expr, out);
            out.push_str(" like ");
            print_into(pattern, out);
            out.push(')');
        }
        Expr::Case {
            operand,
            conditions,
            else_result,
            ..
        } => {
            out.push_str("(case ");
            if let Some(o) = operand {
                print_into(o, out);
                out.push(' ');
            }
            for w in conditions {
                out.push_str("when ");
                print_into(&w.condition, out);
                out.push_str(" then ");
                print_into(&w.result, out);
                out.push(' ');
            }
            if let Some(x) = else_result {
                out.push_str("else ");
                print_into(x, out);
                out.push(' ');
            }
            out.push_str("end)");
        }
        Expr::Function(f)
            if f.over.is_none() && f.filter.is_none() && f.within_group.is_empty() =>
        {
            let upper = f.name.to_string().to_ascii_uppercase();
            let args: Option<Vec<&Expr>> = match &f.args {
                ast::FunctionArguments::None => Some(Vec::new()),
                ast::FunctionArguments::List(l)
                    if l.duplicate_treatment.is_none() && l.clauses.is_empty() =>
                {
                    l.args
                        .iter()
                        .map(|a| match a {
                            ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(x)) => Some(x),
                            _ => None,
                        })
                        .collect()
                }
                _ => None,
            };
            match args {
                Some(args) if !upper.contains('.') => {
                    out.push_str(&canonical_name(&upper));
                    out.push('(');
                    for (k, x) in args.iter().enumerate() {
                        if k > 0 {
                            out.push(',');
                        }
                        print_into(x, out);
                    }
                    out.push(')');
                }
                _ => out.push_str(&e.to_string()),
            }
        }
        Expr::Substring {
            expr,
            substring_from,
            substring_for,
            ..
        } => {
            out.push_str("substr(");
            print_into(expr, out);
            for x in [substring_from, substring_for].into_iter().flatten() {
                out.push(',');
                print_into(x, out);
            }
            out.push(')');
        }
        Expr::Cast {
            kind: ast::CastKind::Cast,
            expr,
            data_type,
            format: None,
            ..
        } => {
            out.push_str("cast(");
            print_into(expr, out);
            out.push_str(" as ");
            out.push_str(&data_type.to_string().to_ascii_lowercase());
            out.push(')');
        }
        _ => out.push_str(&e.to_string()),
    }
}

// ------------------------------------------------------------- values

/// A table's generated columns and DEFAULT expressions, compiled for one
/// statement.
pub(crate) struct TableGen {
    /// (column, expression, generated?) in column order.
    exprs: Vec<(usize, E, bool)>,
    table: String,
}

impl TableGen {
    /// Compiles `t`'s expressions over its row.
    pub(crate) fn compile(cx: &Ctx, t: &TableDef) -> SqlResult<TableGen> {
        let mut exprs = Vec::new();
        if t.columns.iter().any(|c| expression_of(c).is_some()) {
            let cols = crate::query::bind::table_cols(t, &t.name);
            for (i, c) in t.columns.iter().enumerate() {
                let Some((kind, text)) = expression_of(c) else {
                    continue;
                };
                let e = crate::parse::parse_expr(text)?;
                let clause = match kind {
                    Kind::Generated => "generated column function",
                    Kind::Default => "default value expression",
                };
                exprs.push((
                    i,
                    cx.compiler(&cols, None, clause).compile(&e)?,
                    kind == Kind::Generated,
                ));
            }
        }
        Ok(TableGen {
            exprs,
            table: t.name.clone(),
        })
    }

    /// Whether the table has nothing to compute.
    pub(crate) fn is_empty(&self) -> bool {
        self.exprs.is_empty()
    }

    /// INSERT: `row` as given (None: not given or DEFAULT) becomes the row
    /// to store; explicit values for generated columns are 3105 (under
    /// `ignore` a warning, and the value is computed).
    pub(crate) fn complete_insert(
        &self,
        t: &TableDef,
        row: &mut [Option<Value>],
        ignore: bool,
        row_no: u64,
    ) -> SqlResult<()> {
        if self.is_empty() {
            return Ok(());
        }
        for (i, _, generated) in &self.exprs {
            if *generated && row[*i].is_some() {
                let e = value_not_allowed(&t.columns[*i].name, &self.table);
                if !ignore {
                    return Err(e);
                }
                crate::func::warn::warn(e.code, e.message);
                row[*i] = None;
            }
        }
        // What the expressions read: the values given and the literal
        // defaults, as the columns will hold them.
        let mut eval: Vec<Value> = Vec::with_capacity(row.len());
        for (c, v) in t.columns.iter().zip(row.iter_mut()) {
            let x = match v {
                Some(x) if c.auto_increment => x.clone(),
                Some(x) => {
                    let x = crate::tz::coerce_session(x.clone(), c, c.nullable, row_no)?;
                    *v = Some(x.clone());
                    x
                }
                None => c.default.clone().unwrap_or(Value::Null),
            };
            eval.push(x);
        }
        for (i, e, generated) in &self.exprs {
            if !*generated && row[*i].is_some() {
                continue;
            }
            let c = &t.columns[*i];
            let v = e.eval(&Row::new(&eval, &[]))?;
            let v = crate::tz::coerce_session(v, c, c.nullable, row_no)?;
            eval[*i] = v.clone();
            row[*i] = Some(v);
        }
        Ok(())
    }

    /// UPDATE: every generated column of the full row computed again.
    pub(crate) fn recompute(&self, t: &TableDef, row: &mut [Value], row_no: u64) -> SqlResult<()> {
        for (i, e, generated) in &self.exprs {
            if !*generated {
                continue;
            }
            let c = &t.columns[*i];
            let v = e.eval(&Row::new(row, &[]))?;
            row[*i] = crate::tz::coerce_session(v, c, c.nullable, row_no)?;
        }
        Ok(())
    }

    /// ALTER TABLE's copy: generated columns, and the DEFAULT expressions
    /// of the columns the statement adds (`fresh`).
    pub(crate) fn rebuild_row(
        &self,
        t: &TableDef,
        row: &mut [Value],
        fresh: &[bool],
        row_no: u64,
    ) -> SqlResult<()> {
        for (i, e, generated) in &self.exprs {
            if !*generated && !fresh.get(*i).copied().unwrap_or(false) {
                continue;
            }
            let c = &t.columns[*i];
            let v = e.eval(&Row::new(row, &[]))?;
            row[*i] = coerce(v, &c.ty, c.nullable, &c.name, row_no)?;
        }
        Ok(())
    }
}

/// Whether an assignment's value is the keyword DEFAULT.
pub(crate) fn is_default_keyword(e: &Expr) -> bool {
    matches!(e, Expr::Identifier(i) if i.quote_style.is_none() && i.value.eq_ignore_ascii_case("DEFAULT"))
}

/// UPDATE / ON DUPLICATE KEY UPDATE `SET col = value` on a generated
/// column: `DEFAULT` is allowed (the column is recomputed anyway; the
/// assignment is dropped), any other value 3105. Returns whether to keep
/// the assignment.
pub(crate) fn keep_assignment(t: &TableDef, col: usize, value: &Expr) -> SqlResult<bool> {
    let c = &t.columns[col];
    if c.generated.is_none() {
        return Ok(true);
    }
    if is_default_keyword(value) {
        return Ok(false);
    }
    Err(value_not_allowed(&c.name, &t.name))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round(text: &str) -> String {
        print(&crate::parse::parse_expr(text).expect("parse"))
    }

    /// MySQL's spelling, and printing the printed text again changes
    /// nothing.
    #[test]
    fn prints_as_mysql_and_is_stable() {
        let cases = [
            ("a+1", "(`a` + 1)"),
            ("(a * 2) - b", "((`a` * 2) - `b`)"),
            ("CONCAT(a, 'x''y')", "concat(`a`,_utf8mb4'x\\'y')"),
            ("-a", "-(`a`)"),
            ("NOT a", "(not(`a`))"),
            ("a IS NULL", "(`a` is null)"),
            ("a BETWEEN 1 AND 2", "(`a` between 1 and 2)"),
            ("a IN (1, 2)", "(`a` in (1,2))"),
            ("UUID()", "uuid()"),
            ("CURRENT_TIMESTAMP", "now()"),
            ("LCASE(a)", "lower(`a`)"),
            (
                "CASE WHEN a > 1 THEN 'x' ELSE NULL END",
                "(case when (`a` > 1) then _utf8mb4'x' else NULL end)",
            ),
            ("a DIV 2", "(`a` DIV 2)"),
            ("SUBSTRING(a, 1, 2)", "substr(`a`,1,2)"),
            ("SUBSTRING(a FROM 2)", "substr(`a`,2)"),
        ];
        for (src, want) in cases {
            let got = round(src);
            assert_eq!(got, want, "{src}");
            assert_eq!(round(&got), got, "{src} printed twice");
        }
    }
}
