//! # ALTER TABLE, RENAME TABLE and DROP INDEX: the statements
//!
//! sqlparser reads MySQL's ALTER TABLE only in part (no ALGORITHM/LOCK
//! values it checks, no `AUTO_INCREMENT = n`, DROP INDEX without MySQL's
//! `ON t`), so these three statements are parsed here from the tokens into
//! an [`AlterCmd`], and run by `alter_exec.rs` over the engine's metadata
//! changes (`quire_engine::alter`).
//!
//! What quire does: RENAME TABLE (several pairs, all or none), `ALTER TABLE
//! t RENAME [TO|AS] u`, `RENAME COLUMN`, `RENAME {INDEX|KEY}`, `ALTER
//! [COLUMN] c SET DEFAULT literal | DROP DEFAULT`, `DROP {INDEX|KEY}`,
//! `DROP INDEX i ON t`, `ADD [CONSTRAINT [s]] [UNIQUE] {INDEX|KEY} [name]
//! (cols)`, `AUTO_INCREMENT [=] n`, the column changes `ADD [COLUMN]`,
//! `DROP [COLUMN]`, `MODIFY`, `CHANGE` (with `FIRST | AFTER c`), `ADD
//! PRIMARY KEY`, `DROP PRIMARY KEY`, `FORCE` and `ENGINE=InnoDB` (these
//! rebuild the table: `quire_engine::rebuild`), and the ALGORITHM / LOCK
//! clauses where the change can honour them. Every other ALTER clause is refused by name
//! (1235, "ALTER TABLE ... ADD COLUMN"), never ignored: a table that did
//! not change while the client believes it did is worse than an error.
//!
//! The specs of one statement refer to the table as it was before it (as
//! MySQL's do) and are applied together: the metadata ones in one catalog
//! mini-transaction. ADD INDEX builds a tree, and AUTO_INCREMENT moves a
//! counter kept outside the catalog, so each of those must be the only
//! change of its statement (refused by name otherwise).

use sqlparser::ast::{self, Expr, ObjectName};
use sqlparser::keywords::Keyword;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::Token;

use quire_engine::{EngineError, Place};

use crate::SqlResult;

/// `ALGORITHM = ...` of ALTER TABLE / DROP INDEX.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Algorithm {
    Default,
    Instant,
    Inplace,
    Copy,
}

/// `LOCK = ...` of ALTER TABLE / DROP INDEX.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LockLevel {
    Default,
    None,
    Shared,
    Exclusive,
}

/// One change of an ALTER TABLE.
#[derive(Debug, Clone)]
pub enum Spec {
    Rename(ObjectName),
    RenameColumn(String, String),
    /// `SET DEFAULT literal` (Some) or `DROP DEFAULT` (None).
    Default(String, Option<Box<Expr>>),
    RenameIndex(String, String),
    DropIndex(String),
    AddIndex {
        name: Option<String>,
        unique: bool,
        columns: Vec<String>,
        /// Per key part, its column prefix length (`c(10)`).
        prefix: Vec<Option<u32>>,
    },
    AutoIncrement(u64),
    /// `ADD [CONSTRAINT [c]] FOREIGN KEY ... | CHECK (...)`.
    AddConstraint(Box<ast::TableConstraint>),
    DropForeignKey(String),
    DropCheck(String),
    DropConstraint(String),
    /// `ALTER {CHECK|CONSTRAINT} c [NOT] ENFORCED`.
    EnforceCheck(String, bool),
    /// `ADD [COLUMN] c def [FIRST | AFTER c]` (a parenthesised list is one
    /// spec per column).
    AddColumn(Box<ast::ColumnDef>, Place),
    /// `DROP [COLUMN] c`.
    DropColumn(String),
    /// `MODIFY [COLUMN] c def` (`from` None) or `CHANGE [COLUMN] from c
    /// def`, with an optional `FIRST | AFTER c`.
    ModifyColumn {
        from: Option<String>,
        column: Box<ast::ColumnDef>,
        at: Option<Place>,
    },
    /// `ADD [CONSTRAINT [s]] PRIMARY KEY (cols)`, with the key parts'
    /// prefix lengths.
    AddPrimaryKey(Vec<String>, Vec<Option<u32>>),
    /// `DROP PRIMARY KEY` (also `DROP {INDEX|KEY} PRIMARY`).
    DropPrimaryKey,
    /// `FORCE` or `ENGINE [=] InnoDB`: rebuild the table.
    Force,
}

/// A parsed ALTER TABLE, RENAME TABLE or DROP INDEX.
#[derive(Debug, Clone)]
pub enum AlterCmd {
    /// RENAME TABLE a TO b [, c TO d ...].
    Rename(Vec<(ObjectName, ObjectName)>),
    /// ALTER TABLE t specs (`drop_index`: the DROP INDEX i ON t form,
    /// which needs the INDEX privilege instead of ALTER).
    Table {
        name: ObjectName,
        specs: Vec<Spec>,
        algorithm: Option<Algorithm>,
        lock: Option<LockLevel>,
        drop_index: bool,
    },
}

/// Is this ALTER TABLE / RENAME TABLE / DROP INDEX (by its first words)?
pub fn is_alter_statement(first: &str, second: &str) -> bool {
    matches!(
        (first, second),
        ("ALTER", "TABLE") | ("RENAME", "TABLE" | "TABLES") | ("DROP", "INDEX")
    )
}

fn refused(what: &str) -> ParserError {
    ParserError::ParserError(format!("\u{0}refuse:ALTER TABLE ... {what}"))
}

/// Parses the statement (`tokens`: the significant ones).
pub fn parse(tokens: Vec<Token>, sql: &str) -> SqlResult<AlterCmd> {
    let dialect = crate::dialect::QuireDialect::default();
    let mut p = Parser::new(&dialect).with_tokens(tokens);
    let r = parse_cmd(&mut p).and_then(|c| {
        let t = p.peek_token();
        if t.token != Token::EOF {
            return p.expected("end of statement", t);
        }
        Ok(c)
    });
    r.map_err(|e| match &e {
        ParserError::ParserError(m) if m.starts_with("\u{0}refuse:") => {
            EngineError::not_supported(m.trim_start_matches("\u{0}refuse:"))
        }
        ParserError::ParserError(m) if m.starts_with("\u{0}err:") => {
            let m = m.trim_start_matches("\u{0}err:");
            let (code, msg) = m.split_once(':').unwrap_or(("1064", m));
            EngineError::new(code.parse().unwrap_or(1064), "HY000", msg)
        }
        _ => crate::parse::perr(e, sql),
    })
}

fn parse_cmd(p: &mut Parser) -> Result<AlterCmd, ParserError> {
    let first = word(p).unwrap_or_default();
    p.next_token();
    match first.as_str() {
        "RENAME" => {
            p.next_token();
            parse_rename(p)
        }
        "DROP" => {
            p.next_token();
            parse_drop_index(p)
        }
        _ => {
            p.next_token();
            parse_alter(p)
        }
    }
}

fn word(p: &Parser) -> Option<String> {
    match &p.peek_token().token {
        Token::Word(w) if w.quote_style.is_none() => Some(w.value.to_ascii_uppercase()),
        _ => None,
    }
}

fn eat(p: &mut Parser, w: &str) -> bool {
    if word(p).as_deref() == Some(w) {
        p.next_token();
        true
    } else {
        false
    }
}

fn ident(p: &mut Parser) -> Result<String, ParserError> {
    Ok(p.parse_identifier()?.value)
}

fn parse_rename(p: &mut Parser) -> Result<AlterCmd, ParserError> {
    let mut pairs = Vec::new();
    loop {
        let from = p.parse_object_name(false)?;
        p.expect_keyword(Keyword::TO)?;
        let to = p.parse_object_name(false)?;
        pairs.push((from, to));
        if !p.consume_token(&Token::Comma) {
            return Ok(AlterCmd::Rename(pairs));
        }
    }
}

/// `DROP INDEX i ON t [ALGORITHM [=] a] [LOCK [=] l]`.
fn parse_drop_index(p: &mut Parser) -> Result<AlterCmd, ParserError> {
    let index = ident(p)?;
    p.expect_keyword(Keyword::ON)?;
    let name = p.parse_object_name(false)?;
    let (mut algorithm, mut lock) = (None, None);
    while !matches!(p.peek_token().token, Token::EOF) {
        if !algorithm_or_lock(p, &mut algorithm, &mut lock)? {
            let t = p.peek_token();
            return p.expected("ALGORITHM or LOCK", t);
        }
    }
    let spec = if index.eq_ignore_ascii_case("PRIMARY") {
        Spec::DropPrimaryKey
    } else {
        Spec::DropIndex(index)
    };
    Ok(AlterCmd::Table {
        name,
        specs: vec![spec],
        algorithm,
        lock,
        drop_index: true,
    })
}

fn parse_alter(p: &mut Parser) -> Result<AlterCmd, ParserError> {
    let name = p.parse_object_name(false)?;
    let (mut algorithm, mut lock) = (None, None);
    let mut specs = Vec::new();
    while !matches!(p.peek_token().token, Token::EOF) {
        if algorithm_or_lock(p, &mut algorithm, &mut lock)? {
        } else if eat(p, "ADD") {
            specs.extend(parse_add(p)?);
        } else {
            specs.push(parse_spec(p)?);
        }
        if !p.consume_token(&Token::Comma) {
            let t = p.peek_token();
            if t.token != Token::EOF {
                return p.expected("',' or end of statement", t);
            }
        }
    }
    // `ALTER TABLE t` alone: MySQL answers OK without changing anything.
    Ok(AlterCmd::Table {
        name,
        specs,
        algorithm,
        lock,
        drop_index: false,
    })
}

/// An ALGORITHM or LOCK clause, if one comes next (1800/1801 for an
/// unknown value, as MySQL).
fn algorithm_or_lock(
    p: &mut Parser,
    algorithm: &mut Option<Algorithm>,
    lock: &mut Option<LockLevel>,
) -> Result<bool, ParserError> {
    let is_alg = word(p).as_deref() == Some("ALGORITHM");
    let is_lock = word(p).as_deref() == Some("LOCK");
    if !is_alg && !is_lock {
        return Ok(false);
    }
    p.next_token();
    let _ = p.consume_token(&Token::Eq);
    let v = match &p.next_token().token {
        Token::Word(w) => w.value.to_ascii_uppercase(),
        Token::SingleQuotedString(s) => s.to_ascii_uppercase(),
        other => return Err(ParserError::ParserError(format!("found: {other}"))),
    };
    if is_alg {
        *algorithm = Some(match v.as_str() {
            "DEFAULT" => Algorithm::Default,
            "INSTANT" => Algorithm::Instant,
            "INPLACE" => Algorithm::Inplace,
            "COPY" => Algorithm::Copy,
            _ => return Err(err(1800, &format!("Unknown ALGORITHM '{v}'"))),
        });
    } else {
        *lock = Some(match v.as_str() {
            "DEFAULT" => LockLevel::Default,
            "NONE" => LockLevel::None,
            "SHARED" => LockLevel::Shared,
            "EXCLUSIVE" => LockLevel::Exclusive,
            _ => return Err(err(1801, &format!("Unknown LOCK type '{v}'"))),
        });
    }
    Ok(true)
}

fn err(code: u16, msg: &str) -> ParserError {
    ParserError::ParserError(format!("\u{0}err:{code}:{msg}"))
}

fn parse_spec(p: &mut Parser) -> Result<Spec, ParserError> {
    let w = word(p).unwrap_or_default();
    match w.as_str() {
        "RENAME" => {
            p.next_token();
            parse_rename_spec(p)
        }
        "ALTER" => {
            p.next_token();
            parse_alter_column(p)
        }
        "DROP" => {
            p.next_token();
            parse_drop_spec(p)
        }
        "AUTO_INCREMENT" => {
            p.next_token();
            let _ = p.consume_token(&Token::Eq);
            let t = p.next_token();
            match &t.token {
                Token::Number(n, _) => n
                    .parse::<u64>()
                    .map(Spec::AutoIncrement)
                    .map_err(|_| ParserError::ParserError(format!("found: {n}"))),
                _ => p.expected("a number", t),
            }
        }
        "MODIFY" | "CHANGE" => {
            p.next_token();
            let _ = eat(p, "COLUMN");
            let from = if w == "CHANGE" { Some(ident(p)?) } else { None };
            let column = Box::new(p.parse_column_def()?);
            let at = place(p)?;
            Ok(Spec::ModifyColumn { from, column, at })
        }
        "FORCE" => {
            p.next_token();
            Ok(Spec::Force)
        }
        "ENGINE" => {
            p.next_token();
            let _ = p.consume_token(&Token::Eq);
            let name = match p.next_token().token {
                Token::Word(w) => w.value,
                Token::SingleQuotedString(s) => s,
                other => return Err(ParserError::ParserError(format!("found: {other}"))),
            };
            if name.eq_ignore_ascii_case("InnoDB") {
                Ok(Spec::Force)
            } else {
                Err(refused(&format!("ENGINE={name}")))
            }
        }
        // `{ENABLE|DISABLE} KEYS` alone is parse.rs's KeysToggle: here it
        // has company, which MySQL's grammar does not allow.
        "ENABLE" | "DISABLE" => {
            p.next_token();
            let t = p.peek_token();
            p.expected("end of statement", t)
        }
        "ORDER" => Err(refused("ORDER BY")),
        "CONVERT" => Err(refused("CONVERT TO CHARACTER SET")),
        "DEFAULT" | "CHARACTER" | "CHARSET" | "COLLATE" => Err(refused("CHARACTER SET")),
        "PARTITION"
        | "COALESCE"
        | "REORGANIZE"
        | "EXCHANGE"
        | "ANALYZE"
        | "CHECK"
        | "OPTIMIZE"
        | "REBUILD"
        | "REPAIR"
        | "TRUNCATE"
        | "REMOVE"
        | "DISCARD"
        | "IMPORT"
        | "WITH"
        | "WITHOUT"
        | "COMMENT"
        | "ROW_FORMAT"
        | "KEY_BLOCK_SIZE"
        | "STATS_PERSISTENT"
        | "STATS_AUTO_RECALC"
        | "STATS_SAMPLE_PAGES"
        | "AVG_ROW_LENGTH"
        | "MAX_ROWS"
        | "MIN_ROWS"
        | "CHECKSUM"
        | "COMPRESSION"
        | "ENCRYPTION"
        | "PACK_KEYS"
        | "TABLESPACE"
        | "INSERT_METHOD"
        | "DATA"
        | "INDEX"
        | "DELAY_KEY_WRITE"
        | "UNION"
        | "SECONDARY_ENGINE"
        | "AUTOEXTEND_SIZE"
        | "ENGINE_ATTRIBUTE"
        | "SECONDARY_ENGINE_ATTRIBUTE"
        | "STORAGE"
        | "UPGRADE" => Err(refused(&w)),
        _ => {
            let t = p.peek_token();
            p.expected("an ALTER TABLE clause", t)
        }
    }
}

/// After RENAME: `COLUMN a TO b`, `{INDEX|KEY} a TO b`, `[TO|AS] name`.
fn parse_rename_spec(p: &mut Parser) -> Result<Spec, ParserError> {
    if eat(p, "COLUMN") {
        let from = ident(p)?;
        p.expect_keyword(Keyword::TO)?;
        return Ok(Spec::RenameColumn(from, ident(p)?));
    }
    if eat(p, "INDEX") || eat(p, "KEY") {
        let from = ident(p)?;
        p.expect_keyword(Keyword::TO)?;
        return Ok(Spec::RenameIndex(from, ident(p)?));
    }
    let _ = eat(p, "TO") || eat(p, "AS");
    Ok(Spec::Rename(p.parse_object_name(false)?))
}

/// After ALTER: `[COLUMN] c SET DEFAULT v | DROP DEFAULT`; the rest
/// (VISIBLE/INVISIBLE, ALTER INDEX, ALTER CHECK) refused.
fn parse_alter_column(p: &mut Parser) -> Result<Spec, ParserError> {
    if eat(p, "CHECK") || eat(p, "CONSTRAINT") {
        let name = ident(p)?;
        let enforced = !eat(p, "NOT");
        if !eat(p, "ENFORCED") {
            let t = p.peek_token();
            return p.expected("ENFORCED", t);
        }
        return Ok(Spec::EnforceCheck(name, enforced));
    }
    for w in ["INDEX", "KEY"] {
        if word(p).as_deref() == Some(w) {
            return Err(refused(&format!("ALTER {w}")));
        }
    }
    let _ = eat(p, "COLUMN");
    let col = ident(p)?;
    if eat(p, "DROP") {
        p.expect_keyword(Keyword::DEFAULT)?;
        return Ok(Spec::Default(col, None));
    }
    p.expect_keyword(Keyword::SET)?;
    if eat(p, "VISIBLE") || eat(p, "INVISIBLE") {
        return Err(refused("ALTER COLUMN ... SET VISIBLE/INVISIBLE"));
    }
    p.expect_keyword(Keyword::DEFAULT)?;
    if p.peek_token().token == Token::LParen {
        return Err(refused("ALTER COLUMN ... SET DEFAULT (expression)"));
    }
    let e = p.parse_prefix()?;
    Ok(Spec::Default(col, Some(Box::new(e))))
}

/// After DROP: `{INDEX|KEY} i`; the rest refused by name.
fn parse_drop_spec(p: &mut Parser) -> Result<Spec, ParserError> {
    if eat(p, "INDEX") || eat(p, "KEY") {
        let name = ident(p)?;
        if name.eq_ignore_ascii_case("PRIMARY") {
            return Ok(Spec::DropPrimaryKey);
        }
        return Ok(Spec::DropIndex(name));
    }
    if word(p).as_deref() == Some("PRIMARY") {
        p.next_token();
        p.expect_keyword(Keyword::KEY)?;
        return Ok(Spec::DropPrimaryKey);
    }
    if eat(p, "FOREIGN") {
        p.expect_keyword(Keyword::KEY)?;
        return Ok(Spec::DropForeignKey(ident(p)?));
    }
    if eat(p, "CHECK") {
        return Ok(Spec::DropCheck(ident(p)?));
    }
    if eat(p, "CONSTRAINT") {
        return Ok(Spec::DropConstraint(ident(p)?));
    }
    if word(p).as_deref() == Some("PARTITION") {
        return Err(refused("DROP PARTITION"));
    }
    let _ = eat(p, "COLUMN");
    Ok(Spec::DropColumn(ident(p)?))
}

/// `FIRST | AFTER c` after a column definition, if there.
fn place(p: &mut Parser) -> Result<Option<Place>, ParserError> {
    if eat(p, "FIRST") {
        return Ok(Some(Place::First));
    }
    if eat(p, "AFTER") {
        return Ok(Some(Place::After(ident(p)?)));
    }
    Ok(None)
}

/// After `ADD [COLUMN]`: one column definition with its place, or a
/// parenthesised list of them (each goes last).
fn parse_add_columns(p: &mut Parser) -> Result<Vec<Spec>, ParserError> {
    if p.consume_token(&Token::LParen) {
        let mut out = Vec::new();
        loop {
            let c = p.parse_column_def()?;
            out.push(Spec::AddColumn(Box::new(c), Place::Last));
            if !p.consume_token(&Token::Comma) {
                break;
            }
        }
        p.expect_token(&Token::RParen)?;
        return Ok(out);
    }
    let c = p.parse_column_def()?;
    let at = place(p)?.unwrap_or(Place::Last);
    Ok(vec![Spec::AddColumn(Box::new(c), at)])
}

/// After ADD: `[CONSTRAINT [sym]] UNIQUE [INDEX|KEY] [name] (cols)`,
/// `{INDEX|KEY} [name] (cols)`, `[CONSTRAINT [sym]] PRIMARY KEY (cols)`,
/// FOREIGN KEY / CHECK, or `[COLUMN]` column definitions; FULLTEXT,
/// SPATIAL and PARTITION refused.
fn parse_add(p: &mut Parser) -> Result<Vec<Spec>, ParserError> {
    // FOREIGN KEY / CHECK, named or not: sqlparser reads the clause.
    let at = |p: &Parser, n: usize| match &p.peek_nth_token(n).token {
        Token::Word(w) if w.quote_style.is_none() => w.value.to_ascii_uppercase(),
        _ => String::new(),
    };
    let kind = if at(p, 0) == "CONSTRAINT" {
        if matches!(at(p, 1).as_str(), "FOREIGN" | "CHECK") {
            at(p, 1)
        } else {
            at(p, 2)
        }
    } else {
        at(p, 0)
    };
    if matches!(kind.as_str(), "FOREIGN" | "CHECK") {
        return match p.parse_optional_table_constraint()? {
            Some(c) => Ok(vec![Spec::AddConstraint(Box::new(c))]),
            None => {
                let t = p.peek_token();
                p.expected("FOREIGN KEY or CHECK", t)
            }
        };
    }
    let mut symbol = None;
    if eat(p, "CONSTRAINT") {
        if !matches!(
            word(p).as_deref(),
            Some("UNIQUE" | "PRIMARY" | "FOREIGN" | "CHECK")
        ) {
            symbol = Some(ident(p)?);
        }
        let kind = match word(p).as_deref() {
            Some("UNIQUE" | "PRIMARY") => None,
            Some("FOREIGN") => Some("FOREIGN KEY"),
            Some("CHECK") => Some("CHECK"),
            _ => Some("CONSTRAINT"),
        };
        if let Some(k) = kind {
            return Err(refused(&format!("ADD CONSTRAINT ... {k}")));
        }
    }
    if eat(p, "PRIMARY") {
        p.expect_keyword(Keyword::KEY)?;
        index_type(p)?;
        let (columns, prefix) = key_columns(p)?;
        index_options(p)?;
        return Ok(vec![Spec::AddPrimaryKey(columns, prefix)]);
    }
    let unique = eat(p, "UNIQUE");
    let keyword = eat(p, "INDEX") || eat(p, "KEY");
    if !unique && !keyword {
        let what = match word(p).as_deref() {
            Some("FULLTEXT") => "ADD FULLTEXT",
            Some("SPATIAL") => "ADD SPATIAL",
            Some("PARTITION") => "ADD PARTITION",
            _ if symbol.is_some() => "ADD CONSTRAINT",
            _ => {
                let _ = eat(p, "COLUMN");
                return parse_add_columns(p);
            }
        };
        return Err(refused(what));
    }
    let mut name = match p.peek_token().token {
        Token::LParen => None,
        _ if word(p).as_deref() == Some("USING") => None,
        _ => Some(ident(p)?),
    };
    if name.is_none() {
        name = symbol;
    }
    index_type(p)?;
    let (columns, prefix) = key_columns(p)?;
    index_options(p)?;
    Ok(vec![Spec::AddIndex {
        name,
        unique,
        columns,
        prefix,
    }])
}

/// `USING BTREE` (InnoDB's only kind; HASH is refused, not turned into a
/// BTREE as MySQL does silently).
fn index_type(p: &mut Parser) -> Result<(), ParserError> {
    if eat(p, "USING") && !eat(p, "BTREE") {
        let w = word(p).unwrap_or_default();
        return Err(refused(&format!("ADD INDEX ... USING {w}")));
    }
    Ok(())
}

/// `(c1 [(n)] [ASC], c2, ...)`: columns and their prefix lengths (the
/// engine checks them against the columns: 1089, 1170, 1391, 1071); DESC
/// and expressions refused.
#[allow(clippy::type_complexity)]
fn key_columns(p: &mut Parser) -> Result<(Vec<String>, Vec<Option<u32>>), ParserError> {
    p.expect_token(&Token::LParen)?;
    let mut cols = Vec::new();
    let mut prefix = Vec::new();
    loop {
        if p.peek_token().token == Token::LParen {
            return Err(refused("ADD INDEX on an expression"));
        }
        cols.push(ident(p)?);
        if p.consume_token(&Token::LParen) {
            let len = match p.next_token().token {
                // Longer than any column: the engine's 1089.
                Token::Number(n, _) if n.bytes().all(|b| b.is_ascii_digit()) => {
                    n.parse::<u32>().unwrap_or(u32::MAX)
                }
                other => {
                    return Err(ParserError::ParserError(format!(
                        "Expected: a prefix length, found: {other}"
                    )))
                }
            };
            p.expect_token(&Token::RParen)?;
            prefix.push(Some(len));
        } else {
            prefix.push(None);
        }
        let _ = eat(p, "ASC");
        if eat(p, "DESC") {
            return Err(refused("ADD INDEX with a DESC key part"));
        }
        if !p.consume_token(&Token::Comma) {
            break;
        }
    }
    p.expect_token(&Token::RParen)?;
    Ok((cols, prefix))
}

/// Index options after the columns: `USING BTREE` and `VISIBLE` are what
/// quire does anyway; the others (COMMENT, INVISIBLE, ...) refused.
fn index_options(p: &mut Parser) -> Result<(), ParserError> {
    loop {
        if word(p).as_deref() == Some("USING") {
            index_type(p)?;
        } else if eat(p, "VISIBLE") {
        } else if let Some(
            w @ ("COMMENT"
            | "INVISIBLE"
            | "KEY_BLOCK_SIZE"
            | "WITH"
            | "ENGINE_ATTRIBUTE"
            | "SECONDARY_ENGINE_ATTRIBUTE"),
        ) = word(p).as_deref()
        {
            return Err(refused(&format!("ADD INDEX ... {w}")));
        } else {
            return Ok(());
        }
    }
}
