//! # The SQL dialect quire parses with
//!
//! [`QuireDialect`] is sqlparser's [`MySqlDialect`] with two of its
//! behaviours switched off, both new in sqlparser 0.64 and both changing
//! what existing statements mean:
//!
//! * **Versioned comments** (`/*! ... */`, `/*!40101 ... */`): 0.64's
//!   tokenizer splices their text into the statement whatever the version
//!   number. With the switch off they arrive as comment tokens and
//!   `parse.rs` splices them itself, as MySQL 8.0.36 does: only when the
//!   version is at most 80036 (a mysqldump file's `/*!40101 SET ... */`
//!   lines run; `/*!90000 ... */` and MariaDB's `/*M! ... */` stay
//!   comments).
//! * **`BINARY expr`**: 0.64 reads the operand at the *lowest* precedence,
//!   so `c = BINARY 'x' AND id > 5` becomes `c = CAST(('x' AND id > 5) AS
//!   BINARY)`. MySQL's `BINARY` binds tighter than any binary operator.
//!   Without the switch, sqlparser reads `BINARY 'literal'` as a typed
//!   literal (the 0.55 behaviour, tight binding), and `BINARY column` stays
//!   an error as it was with 0.55, rather than a silently wrong tree.
//!
//! Everything else is forwarded to [`MySqlDialect`], and [`Dialect::dialect`]
//! answers `MySqlDialect`'s type id, so the parser's own "is this MySQL?"
//! checks behave exactly as with `MySqlDialect`.
//!
//! A third addition keeps statements within the thread's stack (see
//! `stack.rs`): [`Dialect::parse_infix`] takes over a run of one
//! associative-looking operator class (`+ -`, `* / DIV %`, `AND`, `OR`,
//! `XOR`) and builds it as a balanced tree once it is longer than
//! [`LEFT_DEEP_MAX`] terms (shorter runs keep sqlparser's left-deep shape,
//! so ordinary statements parse to exactly the same tree), and it charges
//! every other infix operator that stacks onto an already deep left operand
//! (`x IS NULL IS NULL ...`, `a = b = c ...`) against a per-statement depth
//! budget; an exhausted budget, like sqlparser's own recursion limit, is
//! MySQL's 1436.
//!
//! A fourth change is MySQL's `@x := expr`: sqlparser gives `:=` the
//! precedence of `=`, left-associative, so `@x := a = b` would assign `a`;
//! here the operator binds to the variable before it and takes the whole
//! expression after it (see [`ASSIGN_PRECEDENCE`]).
//!
//! **When upgrading sqlparser**: the forwarding list below must match the
//! methods `impl Dialect for MySqlDialect` overrides in the new version
//! (`src/dialect/mysql.rs`); a method it overrides but this file does not
//! forward silently falls back to the trait default. The test at the end
//! compares both dialects on a corpus and catches most slips.

use std::any::TypeId;
use std::cell::Cell;

use sqlparser::ast::{BinaryOperator, Expr, Statement};
use sqlparser::dialect::{BindPlaceholderStyle, Dialect, MySqlDialect};
use sqlparser::keywords::Keyword;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::Token;

/// sqlparser's MySQL dialect minus comment hints and the loose `BINARY`
/// cast (see the module documentation).
#[derive(Debug)]
pub struct QuireDialect {
    mysql: MySqlDialect,
    /// Set just before this dialect calls `Parser::parse_infix` itself for
    /// one step of a run: that call must take sqlparser's path.
    bypass: Cell<bool>,
    /// Depth that infix operators may still stack beyond [`FREE_SPINE`]
    /// in this statement (see the module documentation).
    budget: Cell<usize>,
}

impl Default for QuireDialect {
    fn default() -> QuireDialect {
        QuireDialect {
            mysql: MySqlDialect {},
            bypass: Cell::new(false),
            budget: Cell::new(crate::stack::parse_depth_limit()),
        }
    }
}

/// `@x := expr` binds to the variable before it tighter than any binary
/// operator (MySQL's grammar has it as a primary expression, so `1 + @x
/// := 2` is `1 + (@x := 2)`), and its value is the whole expression
/// after it (`@x := a OR b` assigns `a OR b`).
const ASSIGN_PRECEDENCE: u8 = 45;

/// The right side of `:=` (the token not yet consumed): everything up to
/// the end of the expression, so that `@a := @b := 1` nests to the right.
/// The compiler refuses a left side that is not a user variable.
fn parse_assignment(parser: &mut Parser, left: &Expr) -> Result<Expr, ParserError> {
    parser.next_token();
    let right = parser.parse_subexpr(0)?;
    Ok(Expr::BinaryOp {
        left: Box::new(left.clone()),
        op: BinaryOperator::Assignment,
        right: Box::new(right),
    })
}

/// Runs up to this many terms keep sqlparser's left-deep tree.
pub const LEFT_DEEP_MAX: usize = 16;

/// A left operand's spine may grow this deep for free; deeper stacking
/// is charged to the statement's budget.
const FREE_SPINE: usize = 32;

/// Operator classes whose runs are built balanced. Within a class all
/// operators share one precedence in sqlparser's MySQL dialect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunClass {
    AddSub,
    MulDiv,
    And,
    Or,
    Xor,
}

fn token_class(t: &Token) -> Option<RunClass> {
    match t {
        Token::Plus | Token::Minus => Some(RunClass::AddSub),
        Token::Mul | Token::Div | Token::Mod => Some(RunClass::MulDiv),
        Token::Word(w) if w.quote_style.is_none() => match w.keyword {
            Keyword::DIV => Some(RunClass::MulDiv),
            Keyword::AND => Some(RunClass::And),
            Keyword::OR => Some(RunClass::Or),
            Keyword::XOR => Some(RunClass::Xor),
            _ => None,
        },
        _ => None,
    }
}

/// The run class of a binary operator (the compiler uses it to read a
/// balanced arithmetic run back in text order).
pub fn op_class(op: &BinaryOperator) -> Option<RunClass> {
    match op {
        BinaryOperator::Plus | BinaryOperator::Minus => Some(RunClass::AddSub),
        BinaryOperator::Multiply
        | BinaryOperator::Divide
        | BinaryOperator::MyIntegerDivide
        | BinaryOperator::Modulo => Some(RunClass::MulDiv),
        BinaryOperator::And => Some(RunClass::And),
        BinaryOperator::Or => Some(RunClass::Or),
        BinaryOperator::Xor => Some(RunClass::Xor),
        _ => None,
    }
}

/// How deep the left spine of `e` is (the child an infix operator puts
/// its left operand in), counting at most `cap` levels.
fn spine_depth(e: &Expr, cap: usize) -> usize {
    let mut d = 0;
    let mut e = e;
    while d < cap {
        e = match e {
            Expr::BinaryOp { left, .. }
            | Expr::AnyOp { left, .. }
            | Expr::AllOp { left, .. }
            | Expr::IsDistinctFrom(left, _)
            | Expr::IsNotDistinctFrom(left, _) => left,
            Expr::IsNull(x)
            | Expr::IsNotNull(x)
            | Expr::IsTrue(x)
            | Expr::IsNotTrue(x)
            | Expr::IsFalse(x)
            | Expr::IsNotFalse(x)
            | Expr::IsUnknown(x)
            | Expr::IsNotUnknown(x)
            | Expr::Nested(x) => x,
            Expr::In { expr, .. }
            | Expr::Between { expr, .. }
            | Expr::Like { expr, .. }
            | Expr::ILike { expr, .. }
            | Expr::SimilarTo { expr, .. }
            | Expr::RLike { expr, .. }
            | Expr::Cast { expr, .. }
            | Expr::Collate { expr, .. } => expr,
            _ => break,
        };
        d += 1;
    }
    d
}

/// Builds `xs[0] ops[0] xs[1] ops[1] ...` as a tree of depth
/// ceil(log2(len)) with the same in-order sequence.
fn balanced(xs: &mut [Option<Expr>], ops: &[BinaryOperator]) -> Expr {
    if xs.len() <= 1 || ops.is_empty() {
        return xs
            .first_mut()
            .and_then(Option::take)
            .unwrap_or(Expr::Value(sqlparser::ast::Value::Null.into()));
    }
    let mid = xs.len() / 2;
    let (lx, rx) = xs.split_at_mut(mid);
    let left = balanced(lx, &ops[..mid - 1]);
    let right = balanced(rx, &ops[mid..]);
    Expr::BinaryOp {
        left: Box::new(left),
        op: ops[mid - 1].clone(),
        right: Box::new(right),
    }
}

fn ceil_log2(n: usize) -> usize {
    (usize::BITS - n.saturating_sub(1).leading_zeros()) as usize
}

impl QuireDialect {
    /// Charges the growth of a left spine from `old` to `new` levels.
    fn charge(&self, old: usize, new: usize) -> Result<(), ParserError> {
        let cost = new.saturating_sub(old.max(FREE_SPINE));
        let left = self.budget.get();
        if cost > left {
            return Err(ParserError::RecursionLimitExceeded);
        }
        self.budget.set(left - cost);
        Ok(())
    }

    /// Parses the rest of a run of `class` operators at precedence `prec`
    /// whose first operand is `first`.
    fn parse_run(
        &self,
        parser: &mut Parser,
        first: Expr,
        class: RunClass,
        prec: u8,
        spine: usize,
    ) -> Result<Expr, ParserError> {
        let mut xs = vec![Some(first)];
        let mut ops = Vec::new();
        while token_class(&parser.peek_token_ref().token) == Some(class)
            && parser.get_next_precedence()? == prec
        {
            self.bypass.set(true);
            let step = parser.parse_infix(Expr::Value(sqlparser::ast::Value::Null.into()), prec);
            self.bypass.set(false);
            match step? {
                Expr::BinaryOp { op, right, .. } if op_class(&op) == Some(class) => {
                    ops.push(op);
                    xs.push(Some(*right));
                }
                other => {
                    return Err(ParserError::ParserError(format!(
                        "unexpected operator in a run: {other}"
                    )))
                }
            }
        }
        if ops.len() < LEFT_DEEP_MAX {
            self.charge(spine, spine + ops.len())?;
            let mut it = xs.into_iter().flatten();
            let mut acc = it
                .next()
                .unwrap_or(Expr::Value(sqlparser::ast::Value::Null.into()));
            for (op, right) in ops.into_iter().zip(it) {
                acc = Expr::BinaryOp {
                    left: Box::new(acc),
                    op,
                    right: Box::new(right),
                };
            }
            Ok(acc)
        } else {
            self.charge(spine, spine + ceil_log2(xs.len()))?;
            Ok(balanced(&mut xs, &ops))
        }
    }
}

impl Dialect for QuireDialect {
    fn dialect(&self) -> TypeId {
        TypeId::of::<MySqlDialect>()
    }

    // The two deliberate differences.

    fn supports_multiline_comment_hints(&self) -> bool {
        false
    }

    fn supports_binary_kw_as_cast(&self) -> bool {
        false
    }

    // An addition: MySQL's compound INTERVAL / EXTRACT units (`DAY_HOUR`,
    // `YEAR_MONTH`, `MINUTE_SECOND`, ...) are no sqlparser keywords, so a
    // word that is no keyword in a unit's place is read as a custom unit;
    // `expr.rs` accepts MySQL's units only (anything else is 1064).

    fn is_interval_qualifier(&self, kw: Keyword) -> bool {
        kw == Keyword::NoKeyword || MySqlDialect {}.is_interval_qualifier(kw)
    }

    fn allow_extract_custom(&self) -> bool {
        true
    }

    // Forwarded: every other method MySqlDialect overrides (sqlparser 0.64.0).

    fn supports_string_literal_table_alias(&self, explicit: bool) -> bool {
        self.mysql.supports_string_literal_table_alias(explicit)
    }

    fn is_identifier_start(&self, ch: char) -> bool {
        self.mysql.is_identifier_start(ch)
    }

    fn is_identifier_part(&self, ch: char) -> bool {
        self.mysql.is_identifier_part(ch)
    }

    fn is_delimited_identifier_start(&self, ch: char) -> bool {
        self.mysql.is_delimited_identifier_start(ch)
    }

    fn identifier_quote_style(&self, identifier: &str) -> Option<char> {
        self.mysql.identifier_quote_style(identifier)
    }

    fn ordered_bind_placeholder_style(&self) -> Option<BindPlaceholderStyle> {
        self.mysql.ordered_bind_placeholder_style()
    }

    fn supports_string_literal_backslash_escape(&self) -> bool {
        self.mysql.supports_string_literal_backslash_escape()
    }

    fn supports_string_literal_concatenation(&self) -> bool {
        self.mysql.supports_string_literal_concatenation()
    }

    fn ignores_wildcard_escapes(&self) -> bool {
        self.mysql.ignores_wildcard_escapes()
    }

    fn supports_numeric_prefix(&self) -> bool {
        self.mysql.supports_numeric_prefix()
    }

    fn supports_literal_prefix_in_qualified_name(&self) -> bool {
        self.mysql.supports_literal_prefix_in_qualified_name()
    }

    fn supports_bitwise_shift_operators(&self) -> bool {
        self.mysql.supports_bitwise_shift_operators()
    }

    fn supports_singular_value_keyword(&self) -> bool {
        self.mysql.supports_singular_value_keyword()
    }

    fn parse_infix(
        &self,
        parser: &mut Parser,
        expr: &Expr,
        precedence: u8,
    ) -> Option<Result<Expr, ParserError>> {
        if self.bypass.replace(false) {
            return self.mysql.parse_infix(parser, expr, precedence);
        }
        if parser.peek_token_ref().token == Token::Assignment {
            return Some(parse_assignment(parser, expr));
        }
        let spine = spine_depth(expr, FREE_SPINE + self.budget.get() + 1);
        if let Some(class) = token_class(&parser.peek_token_ref().token) {
            return Some(self.parse_run(parser, expr.clone(), class, precedence, spine));
        }
        if let Err(e) = self.charge(spine, spine + 1) {
            return Some(Err(e));
        }
        self.mysql.parse_infix(parser, expr, precedence)
    }

    fn parse_statement(&self, parser: &mut Parser) -> Option<Result<Statement, ParserError>> {
        self.mysql.parse_statement(parser)
    }

    fn require_interval_qualifier(&self) -> bool {
        self.mysql.require_interval_qualifier()
    }

    fn supports_limit_comma(&self) -> bool {
        self.mysql.supports_limit_comma()
    }

    fn supports_create_table_select(&self) -> bool {
        self.mysql.supports_create_table_select()
    }

    fn supports_insert_set(&self) -> bool {
        self.mysql.supports_insert_set()
    }

    fn supports_user_host_grantee(&self) -> bool {
        self.mysql.supports_user_host_grantee()
    }

    fn is_table_factor_alias(&self, explicit: bool, kw: &Keyword, parser: &mut Parser) -> bool {
        self.mysql.is_table_factor_alias(explicit, kw, parser)
    }

    fn supports_table_hints(&self) -> bool {
        self.mysql.supports_table_hints()
    }

    fn requires_single_line_comment_whitespace(&self) -> bool {
        self.mysql.requires_single_line_comment_whitespace()
    }

    fn supports_hash_comment(&self) -> bool {
        self.mysql.supports_hash_comment()
    }

    fn supports_match_against(&self) -> bool {
        self.mysql.supports_match_against()
    }

    fn supports_select_modifiers(&self) -> bool {
        self.mysql.supports_select_modifiers()
    }

    fn supports_set_names(&self) -> bool {
        self.mysql.supports_set_names()
    }

    fn supports_comma_separated_set_assignments(&self) -> bool {
        self.mysql.supports_comma_separated_set_assignments()
    }

    fn supports_alter_column_position(&self) -> bool {
        self.mysql.supports_alter_column_position()
    }

    fn supports_update_order_by(&self) -> bool {
        self.mysql.supports_update_order_by()
    }

    fn supports_data_type_signed_suffix(&self) -> bool {
        self.mysql.supports_data_type_signed_suffix()
    }

    fn supports_data_type_zerofill_suffix(&self) -> bool {
        self.mysql.supports_data_type_zerofill_suffix()
    }

    fn supports_cross_join_constraint(&self) -> bool {
        self.mysql.supports_cross_join_constraint()
    }

    fn supports_double_ampersand_operator(&self) -> bool {
        self.mysql.supports_double_ampersand_operator()
    }

    fn get_next_precedence(&self, parser: &Parser) -> Option<Result<u8, ParserError>> {
        if parser.peek_token_ref().token == Token::Assignment {
            return Some(Ok(ASSIGN_PRECEDENCE));
        }
        self.mysql.get_next_precedence(parser)
    }

    fn supports_table_partitions(&self) -> bool {
        self.mysql.supports_table_partitions()
    }

    fn supports_comment_optimizer_hint(&self) -> bool {
        self.mysql.supports_comment_optimizer_hint()
    }

    fn supports_constraint_keyword_without_name(&self) -> bool {
        self.mysql.supports_constraint_keyword_without_name()
    }

    fn supports_key_column_option(&self) -> bool {
        self.mysql.supports_key_column_option()
    }

    fn supports_group_by_with_modifier(&self) -> bool {
        self.mysql.supports_group_by_with_modifier()
    }

    fn supports_left_associative_joins_without_parens(&self) -> bool {
        self.mysql.supports_left_associative_joins_without_parens()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlparser::tokenizer::{Token, Tokenizer};

    fn parse_with(d: &dyn Dialect, sql: &str) -> String {
        match Parser::parse_sql(d, sql) {
            Ok(stmts) => format!("{stmts:?}"),
            Err(e) => format!("error: {e}"),
        }
    }

    #[test]
    fn is_mysql_for_the_parser() {
        let d: &dyn Dialect = &QuireDialect::default();
        assert!(d.is::<MySqlDialect>());
    }

    /// Outside the two switched-off behaviours, QuireDialect parses exactly
    /// as MySqlDialect (guards the forwarding list; extend the corpus when
    /// a MySQL-specific feature starts to matter).
    #[test]
    fn same_trees_as_mysql_dialect() {
        let corpus = [
            "SELECT 7 DIV 2 + 1, 8 MOD 3 * 2, 1 && 0, 1 << 2, 'a' 'b'",
            "SELECT `a`, @v, @@session.x, $d FROM db.t AS x WHERE x.c = 'a\\'b' # c",
            "SELECT 1 -- c\n, 2",
            "SELECT SQL_NO_CACHE DISTINCTROW c FROM t USE INDEX (k) PARTITION (p0) LIMIT 1, 2",
            "SELECT * FROM t CROSS JOIN u ON t.a = u.a STRAIGHT_JOIN v ON v.a = t.a",
            "SELECT * FROM t, u JOIN v ON u.a = v.a",
            "SELECT c FROM t GROUP BY c WITH ROLLUP",
            "SELECT MATCH (c) AGAINST ('x' IN BOOLEAN MODE) FROM t",
            "SELECT CAST(c AS BINARY), CONVERT(c, BINARY), c COLLATE utf8mb4_bin, _utf8mb4'x', X'41'",
            "SELECT 'x' LIKE 'a\\_' ESCAPE '|', c REGEXP 'a', INTERVAL 1 DAY + d",
            "SELECT ?, 1e3, 0x41, b'01', N'x', 1",
            "INSERT INTO t (a, b) VALUE (1, 2), (3, 4) ON DUPLICATE KEY UPDATE b = VALUES(b)",
            "INSERT INTO t SET a = 1, b = DEFAULT",
            "REPLACE INTO t VALUES (1)",
            "UPDATE t SET a = 1 WHERE b = 2 ORDER BY c LIMIT 3",
            "DELETE FROM t WHERE a = 1 ORDER BY b LIMIT 2",
            "CREATE TABLE t (id INT UNSIGNED NOT NULL AUTO_INCREMENT KEY, c VARCHAR(5) BINARY, \
             d INT(11) ZEROFILL, e DECIMAL(5,2) SIGNED, UNIQUE KEY u (c), CONSTRAINT UNIQUE (d), \
             KEY k (c(3)) USING BTREE COMMENT 'x') ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 \
             ROW_FORMAT=DYNAMIC",
            "CREATE INDEX i USING BTREE ON t (c(4) DESC) ALGORITHM=INPLACE LOCK=NONE",
            "CREATE DATABASE d DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin",
            "ALTER TABLE t ADD COLUMN c INT FIRST, ALGORITHM=INPLACE",
            "LOCK TABLES t READ, u WRITE",
            "UNLOCK TABLES",
            "SET NAMES utf8mb4, @a = 1",
            "SHOW CREATE TABLE t",
            "GRANT SELECT ON db.* TO 'u'@'h'",
            "TRUNCATE TABLE t",
            "SELECT 1 DIV",
        ];
        let (q, m) = (QuireDialect::default(), MySqlDialect {});
        for sql in corpus {
            assert_eq!(parse_with(&q, sql), parse_with(&m, sql), "{sql}");
            let tq = Tokenizer::new(&q, sql)
                .tokenize()
                .map_err(|e| e.to_string());
            let tm = Tokenizer::new(&m, sql)
                .tokenize()
                .map_err(|e| e.to_string());
            assert_eq!(tq, tm, "{sql}");
        }
    }

    #[test]
    fn the_two_differences() {
        let q = QuireDialect::default();
        // A versioned comment stays a comment token (parse.rs decides by version).
        let toks = Tokenizer::new(&q, "SELECT 1 /*!40101 , 2 */")
            .tokenize()
            .expect("tokenizes");
        assert!(!toks.contains(&Token::Comma), "{toks:?}");
        // `BINARY 'x'` binds to the literal only.
        let s = parse_with(&q, "SELECT c = BINARY 'x' AND d > 5");
        assert!(s.contains("op: And"), "{s}");
        assert_eq!(
            Parser::parse_sql(&q, "SELECT c = BINARY 'x' AND d > 5")
                .expect("parses")
                .pop()
                .expect("one statement")
                .to_string(),
            "SELECT c = BINARY 'x' AND d > 5"
        );
    }
}
