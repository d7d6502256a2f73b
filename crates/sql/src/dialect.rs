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
//! **When upgrading sqlparser**: the forwarding list below must match the
//! methods `impl Dialect for MySqlDialect` overrides in the new version
//! (`src/dialect/mysql.rs`); a method it overrides but this file does not
//! forward silently falls back to the trait default. The test at the end
//! compares both dialects on a corpus and catches most slips.

use std::any::TypeId;

use sqlparser::ast::{Expr, Statement};
use sqlparser::dialect::{BindPlaceholderStyle, Dialect, MySqlDialect};
use sqlparser::keywords::Keyword;
use sqlparser::parser::{Parser, ParserError};

/// sqlparser's MySQL dialect minus comment hints and the loose `BINARY`
/// cast (see the module documentation).
#[derive(Debug, Default, Clone, Copy)]
pub struct QuireDialect {
    mysql: MySqlDialect,
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
