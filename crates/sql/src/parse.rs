//! # Parse: statement text to a [`Command`]
//!
//! The front end has two halves. The statement text is first tokenized with
//! `sqlparser`'s MySQL dialect (as adjusted in `dialect.rs`: `BINARY`
//! binds tightly); MySQL's versioned comments are resolved here as MySQL
//! 8.0.36 does (`/*! text */` and `/*!NNNNN text */` with NNNNN <= 80036
//! are part of the statement, a later version or MariaDB's `/*M! */` is a
//! comment), which is what lets a mysqldump file load; every `?` placeholder
//! token is renumbered `?1`, `?2`, ... in text order, so that a prepared
//! statement binds its parameters by position no matter where the parser
//! later puts them in the tree. The leading words then decide who parses
//! the rest:
//!
//! * the administrative statements whose MySQL syntax `sqlparser` does not
//!   know or only half knows (`SET` in all its forms, `SHOW ...`,
//!   `DESCRIBE`, `BEGIN`/`START TRANSACTION`, `COMMIT`, `ROLLBACK`, `USE`,
//!   `KILL expr`, whose id sqlparser takes only as a literal)
//!   are read here with the parser's token-level helpers, into small
//!   [`Command`] variants;
//! * account statements (`CREATE/ALTER/DROP USER`, `GRANT`, `SET
//!   PASSWORD`, `SHOW GRANTS`, the role statements) go to `account.rs`'s
//!   own token parser;
//! * everything else (SELECT, INSERT, UPDATE, DELETE, CREATE, DROP, ...) is
//!   handed to `sqlparser` and kept as its AST ([`Command::Sql`]).
//!
//! A trailing `LOCK IN SHARE MODE` (which this `sqlparser` version does not
//! parse) is cut off before parsing and remembered as a flag, as is a
//! trailing `ORDER BY ... LIMIT ...` of a single-table UPDATE.
//!
//! Parse failures become MySQL error 1064 with MySQL's wording.

use sqlparser::ast::{Expr, Ident, ObjectName, OrderByExpr, Statement};
use sqlparser::keywords::Keyword;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::{Token, Tokenizer, Whitespace, Word};

use quire_engine::EngineError;

use crate::dialect::QuireDialect;
use crate::SqlResult;

/// Scope of a `SET` assignment or `SHOW` listing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    Global,
    Session,
    /// `@name`: a user variable.
    User,
}

/// One assignment of a `SET` statement.
#[derive(Debug, Clone)]
pub enum SetItem {
    Var {
        scope: Scope,
        name: String,
        value: Box<Expr>,
        /// `SET @@transaction_isolation` / `@@transaction_read_only` (and
        /// their `tx_` names) without a scope word: the next transaction
        /// only, as `SET TRANSACTION`.
        next_txn: bool,
    },
    /// `SET NAMES x [COLLATE y]` (`names`: true) / `SET CHARACTER SET x`.
    Names {
        charset: String,
        collation: Option<String>,
        names: bool,
    },
    /// `SET [GLOBAL|SESSION] TRANSACTION ISOLATION LEVEL ... | READ ONLY/WRITE`.
    Transaction {
        scope: Option<Scope>,
        isolation: Option<String>,
        read_only: Option<bool>,
    },
}

/// `LIKE 'pattern'` or `WHERE expr` of a SHOW statement.
#[derive(Debug, Clone)]
pub enum Filter {
    None,
    Like(String),
    Where(Box<Expr>),
}

/// The SHOW statements.
#[derive(Debug, Clone)]
#[allow(dead_code)] // `full`/`global` are parsed for completeness
pub enum Show {
    Databases(Filter),
    Tables {
        db: Option<String>,
        full: bool,
        filter: Filter,
    },
    Columns {
        table: ObjectName,
        db: Option<String>,
        full: bool,
        filter: Filter,
    },
    CreateTable(ObjectName),
    CreateView(ObjectName),
    CreateDatabase(String),
    Variables {
        global: bool,
        filter: Filter,
    },
    Status {
        global: bool,
        filter: Filter,
    },
    EngineInnodbStatus,
    BinaryLogs,
    /// SHOW REPLICAS (`legacy`: SHOW SLAVE HOSTS and its column names).
    Replicas {
        legacy: bool,
    },
    /// `SHOW BINLOG EVENTS [IN 'file'] [FROM pos] [LIMIT [offset,] n]`.
    BinlogEvents {
        file: Option<String>,
        from: u64,
        offset: u64,
        limit: Option<u64>,
    },
    MasterStatus,
    Warnings,
    Errors,
    Index(ObjectName),
    /// `SHOW TABLE STATUS [{FROM | IN} db] [LIKE | WHERE]`.
    TableStatus {
        db: Option<String>,
        filter: Filter,
    },
    /// SHOW EVENTS / TRIGGERS / PROCEDURE STATUS / FUNCTION STATUS: quire
    /// has none of these objects, so the answer is MySQL's columns and no
    /// rows (the filter is still compiled, so a bad one is an error).
    NoObjects {
        columns: &'static [&'static str],
        filter: Filter,
    },
    /// SHOW SLAVE | REPLICA STATUS (no rows: quire is not a replica).
    ReplicaStatus {
        columns: &'static [&'static str],
    },
    Engines,
    Charset(Filter),
    Collation(Filter),
    Processlist {
        full: bool,
    },
}

/// A parsed statement.
#[derive(Debug, Clone)]
#[allow(dead_code)] // `snapshot`: WITH CONSISTENT SNAPSHOT is the default anyway
pub enum Command {
    Sql(Box<Statement>),
    Set(Vec<SetItem>),
    Show(Box<Show>),
    Describe(Box<ObjectName>),
    Begin {
        read_only: bool,
        snapshot: bool,
    },
    Commit,
    Rollback,
    Use(String),
    /// CREATE/ALTER/DROP USER, GRANT ALL, SET PASSWORD, SHOW GRANTS.
    Account(Box<crate::account::AccountCmd>),
    /// `ALTER TABLE t DISABLE KEYS` / `ENABLE KEYS` (mysqldump writes them
    /// around each table's rows): InnoDB has no such option, MySQL answers
    /// OK with Note 1031, and so does quire.
    KeysToggle(Box<ObjectName>),
    /// `KILL [CONNECTION | QUERY] expr`: MySQL takes any expression
    /// (`KILL CONNECTION_ID()`), evaluated when the statement runs.
    Kill {
        query_only: bool,
        id: Box<Expr>,
    },
    /// `CHECK {TABLE | TABLES} t1 [, t2] ... [option ...]`; `for_upgrade`
    /// is the FOR UPGRADE option (the others InnoDB ignores, and so does
    /// quire: QUICK, FAST, MEDIUM, EXTENDED, CHANGED).
    CheckTable {
        tables: Vec<ObjectName>,
        for_upgrade: bool,
    },
    /// `ANALYZE [NO_WRITE_TO_BINLOG | LOCAL] TABLE t1 [, t2] ...`
    /// (sqlparser takes one table and not the options).
    Analyze {
        tables: Vec<ObjectName>,
        /// NO_WRITE_TO_BINLOG or LOCAL.
        local: bool,
    },
    /// CREATE [OR REPLACE] VIEW / ALTER VIEW (`view.rs`).
    View(Box<crate::view::ViewStmt>),
    /// ALTER TABLE, RENAME TABLE, DROP INDEX (`alter.rs`).
    Alter(Box<crate::alter::AlterCmd>),
    /// CHANGE REPLICATION SOURCE, START/STOP/RESET REPLICA (replication.rs).
    Replica(crate::replication::ReplicaStmt),
    /// `PURGE {BINARY | MASTER} LOGS ...` (binlog_admin.rs).
    PurgeLogs(crate::binlog_admin::Purge),
    /// `RESET MASTER [TO n]` / `RESET BINARY LOGS AND GTIDS [TO n]`.
    ResetMaster {
        to: Option<u64>,
    },
    /// An empty statement (only comments / semicolons).
    Empty,
}

/// A parsed statement plus what was cut off around it.
#[derive(Debug, Clone)]
pub struct Parsed {
    pub cmd: Command,
    /// Number of `?` placeholders.
    pub params: usize,
    /// A trailing `LOCK IN SHARE MODE` was present.
    pub share_lock: bool,
    /// `UPDATE ... ORDER BY ... LIMIT n` tail, cut off before parsing
    /// (written when sqlparser did not parse it; 0.64 does, into
    /// `Update::order_by`/`limit`, which therefore stay empty here).
    pub update_order: Vec<OrderByExpr>,
    pub update_limit: Option<Expr>,
    /// `SELECT ... INTO @a, @b`: the user variables (names without `@`),
    /// cut out of the statement before parsing (see [`cut_select_into`]).
    pub into: Option<Vec<String>>,
    /// `DO expr [, expr] ...`: parsed as the SELECT of those expressions,
    /// whose row is computed (errors and warnings as usual) and dropped;
    /// the statement answers OK.
    pub discard: bool,
    /// The tokens hold something a deprecation warning is about (`:=`,
    /// FOUND_ROWS, SQL_CALC_FOUND_ROWS, VALUES with DUPLICATE): only then
    /// does the session walk the tree for 1287s (`session_sql.rs`), a walk
    /// that otherwise costs a point select a noticeable share of its time.
    pub maybe_deprecated: bool,
}

pub(crate) fn syntax_error(near: &str) -> EngineError {
    let near: String = near.chars().take(80).collect();
    EngineError::new(
        1064,
        "42000",
        format!(
            "You have an error in your SQL syntax; check the manual that corresponds to your \
             MySQL server version for the right syntax to use near '{near}' at line 1"
        ),
    )
}

pub(crate) fn perr(e: ParserError, sql: &str) -> EngineError {
    if matches!(e, ParserError::RecursionLimitExceeded) {
        // Nesting deeper than this thread's stack allows (stack.rs).
        return crate::stack::overrun(crate::stack::MARGIN);
    }
    let msg = e.to_string();
    // The parser reports "... found: X at Line: l, Column: c"; MySQL quotes
    // the text from the offending token on.
    let near = msg
        .rsplit_once("Column: ")
        .and_then(|(_, c)| c.trim().parse::<usize>().ok())
        .and_then(|c| {
            sql.lines()
                .next()
                .and_then(|l| l.get(c.saturating_sub(1)..))
        })
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .or_else(|| {
            // "... found: TOKEN": quote the text from that token on.
            let tok = msg
                .rsplit_once("found: ")?
                .1
                .split(" at Line")
                .next()?
                .to_string();
            if tok == "EOF" {
                return Some(String::new());
            }
            let pos = sql.to_ascii_lowercase().find(&tok.to_ascii_lowercase())?;
            Some(sql[pos..].to_string())
        })
        .unwrap_or_default();
    syntax_error(&near)
}

fn is_word(t: &Token, kw: &str) -> bool {
    matches!(t, Token::Word(w) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case(kw))
}

fn significant(t: &Token) -> bool {
    !matches!(t, Token::Whitespace(_))
}

/// Parses a stored query text (a view's SELECT) back into a query.
pub fn parse_query(text: &str) -> SqlResult<sqlparser::ast::Query> {
    let dialect = QuireDialect::default();
    let mut p = Parser::new(&dialect)
        .with_recursion_limit(crate::stack::parse_depth_limit())
        .try_with_sql(text)
        .map_err(|e| perr(e, text))?;
    let q = p.parse_query().map_err(|e| perr(e, text))?;
    let t = p.peek_token();
    if t.token != Token::EOF {
        return Err(syntax_error(&t.token.to_string()));
    }
    Ok(*q)
}

/// Parses a stored expression text (a CHECK constraint's) back.
pub fn parse_expr(text: &str) -> SqlResult<sqlparser::ast::Expr> {
    let dialect = QuireDialect::default();
    let mut p = Parser::new(&dialect)
        .with_recursion_limit(crate::stack::parse_depth_limit())
        .try_with_sql(text)
        .map_err(|e| perr(e, text))?;
    let e = p.parse_expr().map_err(|e| perr(e, text))?;
    let t = p.peek_token();
    if t.token != Token::EOF {
        return Err(syntax_error(&t.token.to_string()));
    }
    Ok(e)
}

/// Parses one statement (a trailing `;` is allowed).
/// Whether `tokens` may hold a form MySQL 8.0 warns about as deprecated
/// (false positives only cost a tree walk; a false negative would lose a
/// warning, so every form `session_sql::deprecations` knows is covered).
fn maybe_deprecated(tokens: &[Token]) -> bool {
    let word = |w: &str| {
        tokens
            .iter()
            .any(|t| matches!(t, Token::Word(x) if x.value.eq_ignore_ascii_case(w)))
    };
    tokens.iter().any(|t| matches!(t, Token::Assignment))
        || word("FOUND_ROWS")
        || word("SQL_CALC_FOUND_ROWS")
        || (word("VALUES") && word("DUPLICATE"))
}

/// MySQL's `CREATE TABLE t (LIKE s)` as `CREATE TABLE t LIKE s` (what
/// sqlparser reads for MySQL; its parenthesised form is Redshift's and
/// needs another dialect): the parentheses go when `(` LIKE name `)` ends
/// the statement right after the new table's name.
fn unparen_create_like(tokens: &mut Vec<Token>) {
    let sig: Vec<usize> = (0..tokens.len())
        .filter(|&i| significant(&tokens[i]))
        .collect();
    let word = |k: usize, w: &str| sig.get(k).is_some_and(|&i| is_word(&tokens[i], w));
    let mut k = 1;
    if word(k, "TEMPORARY") {
        k += 1;
    }
    if !word(k, "TABLE") {
        return;
    }
    k += 1;
    if word(k, "IF") && word(k + 1, "NOT") && word(k + 2, "EXISTS") {
        k += 3;
    }
    // The name: word (. word)*.
    let name_part = |k: usize| {
        sig.get(k)
            .is_some_and(|&i| matches!(tokens[i], Token::Word(_)))
    };
    if !name_part(k) {
        return;
    }
    k += 1;
    while sig.get(k).is_some_and(|&i| tokens[i] == Token::Period) && name_part(k + 1) {
        k += 2;
    }
    let n = sig.len();
    let is = |k: usize, t: &Token| sig.get(k).is_some_and(|&i| &tokens[i] == t);
    if is(k, &Token::LParen) && word(k + 1, "LIKE") && n > k + 2 && is(n - 1, &Token::RParen) {
        let (open, close) = (sig[k], sig[n - 1]);
        tokens.remove(close);
        tokens.remove(open);
    }
}

pub fn parse(sql: &str) -> SqlResult<Parsed> {
    // Defence in depth: sqlparser has panicked on malformed input before
    // (0.55 unwrapped after a trailing `DIV`, found by fuzzing; fixed in
    // 0.64). Should a future version do so again, bad input must still be a
    // syntax error, never a dead connection.
    match std::panic::catch_unwind(|| parse_inner(sql)) {
        Ok(r) => r,
        Err(_) => Err(syntax_error(sql)),
    }
}

fn parse_inner(sql: &str) -> SqlResult<Parsed> {
    let dialect = QuireDialect::default();
    let depth = crate::stack::parse_depth_limit();
    let mut tokens = Tokenizer::new(&dialect, sql)
        .tokenize()
        .map_err(|e| syntax_error(&e.to_string()))?;
    splice_versioned_comments(&mut tokens, &dialect)?;
    // Number the placeholders.
    let mut params = 0usize;
    for t in tokens.iter_mut() {
        if let Token::Placeholder(p) = t {
            if p == "?" {
                params += 1;
                *p = format!("?{params}");
            }
        }
    }
    // Drop comments (versioned ones were resolved above) and trailing
    // semicolons.
    tokens.retain(|t| {
        !matches!(
            t,
            Token::Whitespace(Whitespace::SingleLineComment { .. })
                | Token::Whitespace(Whitespace::MultiLineComment(_))
        )
    });
    while let Some(last) = tokens.iter().rposition(significant) {
        if tokens[last] == Token::SemiColon {
            tokens.truncate(last);
        } else {
            break;
        }
    }
    let mut parsed = Parsed {
        cmd: Command::Empty,
        params,
        share_lock: false,
        update_order: Vec::new(),
        update_limit: None,
        into: None,
        discard: false,
        maybe_deprecated: maybe_deprecated(&tokens),
    };
    let sig: Vec<usize> = (0..tokens.len())
        .filter(|&i| significant(&tokens[i]))
        .collect();
    if sig.is_empty() {
        return Ok(parsed);
    }
    // LOCK IN SHARE MODE at the end.
    if sig.len() >= 4 {
        let n = sig.len();
        let words = ["LOCK", "IN", "SHARE", "MODE"];
        if (0..4).all(|i| is_word(&tokens[sig[n - 4 + i]], words[i])) {
            parsed.share_lock = true;
            tokens.truncate(sig[n - 4]);
        }
    }
    let first = match &tokens[sig[0]] {
        Token::Word(w) => w.value.to_ascii_uppercase(),
        _ => String::new(),
    };
    if first == "DO" {
        tokens[sig[0]] = Token::make_keyword("SELECT");
        parsed.discard = true;
    }
    if matches!(first.as_str(), "SELECT" | "WITH") || tokens[sig[0]] == Token::LParen {
        parsed.into = cut_select_into(&mut tokens)?;
        split_lock_of_lists(&mut tokens);
    }
    let sig: Vec<usize> = (0..tokens.len())
        .filter(|&i| significant(&tokens[i]))
        .collect();
    if first == "UPDATE" {
        commas_to_cross_joins(&mut tokens);
    }
    if first == "CREATE" {
        unparen_create_like(&mut tokens);
    }
    let second = sig
        .get(1)
        .and_then(|&i| match &tokens[i] {
            Token::Word(w) => Some(w.value.to_ascii_uppercase()),
            _ => None,
        })
        .unwrap_or_default();
    if crate::account::is_account_statement(&first, &second) {
        let sig_tokens: Vec<Token> = sig.iter().filter_map(|&i| tokens.get(i).cloned()).collect();
        parsed.cmd = Command::Account(Box::new(crate::account::parse(&sig_tokens)?));
        return Ok(parsed);
    }
    if (first == "CREATE" || first == "ALTER") && {
        let sig_tokens: Vec<Token> = sig.iter().take(4).map(|&i| tokens[i].clone()).collect();
        crate::view::is_view_statement(&sig_tokens)
    } {
        let sig_tokens: Vec<Token> = sig.iter().map(|&i| tokens[i].clone()).collect();
        parsed.cmd = Command::View(Box::new(crate::view::parse(&sig_tokens, sql, depth)?));
        return Ok(parsed);
    }
    // ALTER TABLE name {DISABLE|ENABLE} KEYS
    let keys_toggle = first == "ALTER" && second == "TABLE" && sig.len() >= 5 && {
        let n = sig.len();
        (is_word(&tokens[sig[n - 2]], "DISABLE") || is_word(&tokens[sig[n - 2]], "ENABLE"))
            && is_word(&tokens[sig[n - 1]], "KEYS")
    };
    if !keys_toggle && crate::alter::is_alter_statement(&first, &second) {
        let sig_tokens: Vec<Token> = sig.iter().map(|&i| tokens[i].clone()).collect();
        parsed.cmd = Command::Alter(Box::new(crate::alter::parse(sig_tokens, sql)?));
        return Ok(parsed);
    }
    let replica_control = matches!(first.as_str(), "START" | "STOP" | "RESET")
        && matches!(second.as_str(), "REPLICA" | "SLAVE");
    if first == "CHANGE" || replica_control {
        let mut p = Parser::new(&dialect)
            .with_recursion_limit(depth)
            .with_tokens(tokens.clone());
        parsed.cmd = if first == "CHANGE" {
            crate::replication::parse_change(&mut p, sql)?
        } else {
            crate::replication::parse_control(&mut p, sql)
                .unwrap_or_else(|| Err(EngineError::not_supported(format!("{first} {second}"))))?
        };
        return Ok(parsed);
    }
    let mut p = Parser::new(&dialect)
        .with_recursion_limit(depth)
        .with_tokens(tokens.clone());
    let res = match first.as_str() {
        "SET" => parse_set(&mut p).map(Command::Set),
        "SHOW" => parse_show(&mut p).map(|s| Command::Show(Box::new(s))),
        "DESCRIBE" | "DESC" => {
            p.next_token();
            p.parse_object_name(false)
                .map(|n| Command::Describe(Box::new(n)))
        }
        "EXPLAIN"
            if !matches!(
                second.as_str(),
                "SELECT" | "INSERT" | "UPDATE" | "DELETE" | "ANALYZE" | "FORMAT"
            ) =>
        {
            p.next_token();
            p.parse_object_name(false)
                .map(|n| Command::Describe(Box::new(n)))
        }
        "BEGIN" => {
            p.next_token();
            let _ = p.parse_keyword(Keyword::WORK);
            Ok(Command::Begin {
                read_only: false,
                snapshot: false,
            })
        }
        "START" => parse_start(&mut p),
        // InnoDB's OPTIMIZE TABLE is a table rebuild plus ANALYZE; quire
        // has no rebuild, so it is refused rather than half done.
        "OPTIMIZE" => return Err(EngineError::not_supported("OPTIMIZE TABLE")),
        "ANALYZE" => {
            if sig.iter().any(|&i| is_word(&tokens[i], "HISTOGRAM")) {
                return Err(EngineError::not_supported("histograms"));
            }
            parse_analyze(&mut p)
        }
        "KILL" => parse_kill(&mut p),
        "PURGE" => crate::binlog_admin::parse_purge(&mut p),
        "RESET" if matches!(second.as_str(), "MASTER" | "BINARY") => {
            crate::binlog_admin::parse_reset(&mut p)
                .unwrap_or_else(|| p.parse_statement().map(|s| Command::Sql(Box::new(s))))
        }
        "CHECK" => parse_check(&mut p),
        "COMMIT" => {
            p.next_token();
            let _ = p.parse_keyword(Keyword::WORK);
            Ok(Command::Commit)
        }
        "ROLLBACK" if !sig.iter().any(|&i| is_word(&tokens[i], "TO")) => {
            p.next_token();
            let _ = p.parse_keyword(Keyword::WORK);
            Ok(Command::Rollback)
        }
        "USE" => {
            p.next_token();
            p.parse_identifier().map(|i| Command::Use(i.value))
        }
        "ALTER" if keys_toggle => {
            p.next_token();
            p.next_token();
            let name = p.parse_object_name(false);
            // Only the two words may follow the name (checked below).
            p.next_token();
            p.next_token();
            name.map(|n| Command::KeysToggle(Box::new(n)))
        }
        "UPDATE" => {
            let (head, order, limit) = split_update_tail(&tokens, &dialect, sql)?;
            parsed.update_order = order;
            parsed.update_limit = limit;
            let mut p = Parser::new(&dialect)
                .with_recursion_limit(depth)
                .with_tokens(head);
            let stmt = p.parse_statement().map_err(|e| perr(e, sql))?;
            // Everything before the cut-off tail must have been consumed
            // (`UPDATE t SET c = 1 WHERE id = 1 garbage` is a syntax error).
            let t = p.peek_token();
            if t.token != Token::EOF {
                return Err(syntax_error(&t.token.to_string()));
            }
            Ok(Command::Sql(Box::new(stmt)))
        }
        _ => p.parse_statement().map(|s| Command::Sql(Box::new(s))),
    };
    let cmd = res.map_err(|e| perr(e, sql))?;
    if first != "UPDATE" {
        // Everything must have been consumed.
        let t = p.peek_token();
        if t.token != Token::EOF {
            return Err(syntax_error(&t.token.to_string()));
        }
    }
    if parsed.discard {
        if let Some(word) = do_refuses(&cmd) {
            // MySQL's "near" text: the statement from that word on.
            let at = sig[1..].iter().find(|&&i| match &tokens[i] {
                Token::Word(w) => w.value.eq_ignore_ascii_case(word),
                t => t.to_string() == word,
            });
            let near = match at {
                Some(&i) => tokens[i..]
                    .iter()
                    .map(|t| t.to_string())
                    .collect::<String>(),
                None => word.to_string(),
            };
            return Err(syntax_error(near.trim_end()));
        }
    }
    parsed.cmd = cmd;
    Ok(parsed)
}

/// `DO` takes a list of expressions and nothing else: no FROM, WHERE,
/// GROUP BY, ORDER BY, LIMIT, DISTINCT or set operation (a syntax error
/// in MySQL): the first such clause's word.
fn do_refuses(cmd: &Command) -> Option<&'static str> {
    let Command::Sql(stmt) = cmd else {
        return Some("DO");
    };
    let Statement::Query(q) = &**stmt else {
        return Some("DO");
    };
    let clause = match &*q.body {
        _ if q.with.is_some() => Some("WITH"),
        _ if q.order_by.is_some() => Some("ORDER"),
        _ if q.limit_clause.is_some() => Some("LIMIT"),
        _ if !q.locks.is_empty() => Some("FOR"),
        sqlparser::ast::SetExpr::Select(s) => {
            if !s.from.is_empty() {
                Some("FROM")
            } else if s.selection.is_some() {
                Some("WHERE")
            } else if s.having.is_some() {
                Some("HAVING")
            } else if s.distinct.is_some() {
                Some("DISTINCT")
            } else if s.projection.iter().any(|i| {
                !matches!(i, sqlparser::ast::SelectItem::UnnamedExpr(_))
                    && !matches!(i, sqlparser::ast::SelectItem::ExprWithAlias { .. })
            }) {
                Some("*")
            } else {
                None
            }
        }
        _ => Some("UNION"),
    };
    clause
}

/// `SELECT ... INTO @a, @b ...` (after the select list, or at the end of
/// the statement; MySQL 8.0 takes both): the `INTO` clause at parenthesis
/// depth 0 is cut out of the tokens and its variables returned, so the
/// query parses and runs as a plain SELECT whose one row the session
/// assigns. `INTO OUTFILE` / `INTO DUMPFILE` write files on the server
/// (FILE privilege, `secure_file_priv`): refused by name. A name without
/// `@` is a stored-program variable, which only exists inside routines
/// (1327, as MySQL outside one).
fn cut_select_into(tokens: &mut Vec<Token>) -> SqlResult<Option<Vec<String>>> {
    let mut depth = 0i32;
    let mut at = None;
    for (i, t) in tokens.iter().enumerate() {
        match t {
            Token::LParen => depth += 1,
            Token::RParen => depth -= 1,
            _ if depth == 0 && is_word(t, "INTO") => {
                at = Some(i);
                break;
            }
            _ => {}
        }
    }
    let Some(start) = at else { return Ok(None) };
    let next_sig = |from: usize| (from..tokens.len()).find(|&i| significant(&tokens[i]));
    let mut i = start + 1;
    let mut names = Vec::new();
    loop {
        let Some(k) = next_sig(i) else {
            return Err(syntax_error(""));
        };
        let name = match &tokens[k] {
            t if is_word(t, "OUTFILE") || is_word(t, "DUMPFILE") => {
                let what = word_upper(t).unwrap_or_default();
                return Err(EngineError::not_supported(format!(
                    "SELECT ... INTO {what} (writing files on the server)"
                )));
            }
            Token::Word(w) if w.quote_style.is_none() && w.value.starts_with('@') => {
                w.value[1..].to_string()
            }
            Token::AtSign => {
                let Some(q) = next_sig(k + 1) else {
                    return Err(syntax_error("@"));
                };
                let n = match &tokens[q] {
                    Token::Word(w) => w.value.clone(),
                    Token::SingleQuotedString(v) | Token::DoubleQuotedString(v) => v.clone(),
                    other => return Err(syntax_error(&other.to_string())),
                };
                i = q;
                n
            }
            Token::Word(w) if w.keyword == Keyword::NoKeyword => {
                return Err(EngineError::new(
                    1327,
                    "42000",
                    format!("Undeclared variable: {}", w.value),
                ));
            }
            other => return Err(syntax_error(&other.to_string())),
        };
        if name.is_empty() || name.starts_with('@') {
            return Err(syntax_error(&format!("@{name}")));
        }
        names.push(name);
        i = i.max(k) + 1;
        match next_sig(i) {
            Some(c) if tokens[c] == Token::Comma => i = c + 1,
            _ => break,
        }
    }
    tokens.drain(start..i);
    Ok(Some(names))
}

/// `UPDATE t1, t2 SET ...`: sqlparser reads one table reference before
/// SET; MySQL's comma there is an inner join, so the top-level commas
/// before SET become `CROSS JOIN` (the same rows, and the binder flattens
/// inner joins anyway).
fn commas_to_cross_joins(tokens: &mut Vec<Token>) {
    let mut depth = 0i32;
    let mut i = 0;
    while i < tokens.len() {
        match &tokens[i] {
            Token::LParen => depth += 1,
            Token::RParen => depth -= 1,
            t if depth == 0 && is_word(t, "SET") => return,
            Token::Comma if depth == 0 => {
                tokens.splice(
                    i..=i,
                    [
                        Token::Whitespace(Whitespace::Space),
                        Token::make_keyword("CROSS"),
                        Token::Whitespace(Whitespace::Space),
                        Token::make_keyword("JOIN"),
                        Token::Whitespace(Whitespace::Space),
                    ],
                );
                i += 4;
            }
            _ => {}
        }
        i += 1;
    }
}

/// `FOR UPDATE OF t1, t2 [NOWAIT | SKIP LOCKED]`: sqlparser reads one name
/// after OF, so a list becomes one clause per name with the same strength
/// and option (`FOR UPDATE OF t1 NOWAIT FOR UPDATE OF t2 NOWAIT`), which
/// MySQL treats alike (a name given twice is 3569 either way).
fn split_lock_of_lists(tokens: &mut Vec<Token>) {
    let next = next_significant;
    let mut i = 0;
    while i < tokens.len() {
        let Some((strength, of)) = lock_of_head(tokens, i) else {
            i += 1;
            continue;
        };
        // Names: word (. word)*, separated by commas.
        let mut names: Vec<Vec<Token>> = Vec::new();
        let mut at = next(tokens, of + 1);
        let mut end = of + 1;
        while let Some(p) = at {
            if !matches!(tokens[p], Token::Word(_)) {
                break;
            }
            let mut name = vec![tokens[p].clone()];
            let mut last = p;
            while let Some(d) = next(tokens, last + 1) {
                match (tokens[d].clone(), next(tokens, d + 1)) {
                    (Token::Period, Some(w)) if matches!(tokens[w], Token::Word(_)) => {
                        name.push(Token::Period);
                        name.push(tokens[w].clone());
                        last = w;
                    }
                    _ => break,
                }
            }
            names.push(name);
            end = last + 1;
            match next(tokens, last + 1) {
                Some(c) if tokens[c] == Token::Comma => at = next(tokens, c + 1),
                _ => break,
            }
        }
        if names.len() < 2 {
            i = end;
            continue;
        }
        let mut option: Vec<Token> = Vec::new();
        if let Some(o) = next(tokens, end) {
            if is_word(&tokens[o], "NOWAIT") {
                option.push(tokens[o].clone());
                end = o + 1;
            } else if is_word(&tokens[o], "SKIP") {
                if let Some(l) = next(tokens, o + 1).filter(|&l| is_word(&tokens[l], "LOCKED")) {
                    option.extend([tokens[o].clone(), Token::Whitespace(Whitespace::Space)]);
                    option.push(tokens[l].clone());
                    end = l + 1;
                }
            }
        }
        let sp = || Token::Whitespace(Whitespace::Space);
        let mut out = Vec::new();
        for name in names {
            out.extend([tokens[i].clone(), sp(), tokens[strength].clone(), sp()]);
            out.extend([tokens[of].clone(), sp()]);
            out.extend(name);
            out.push(sp());
            out.extend(option.iter().cloned());
            out.push(sp());
        }
        let n = out.len();
        tokens.splice(i..end, out);
        i += n;
    }
}

/// The first significant token at or after `from`.
fn next_significant(t: &[Token], from: usize) -> Option<usize> {
    (from..t.len()).find(|&i| significant(&t[i]))
}

/// `FOR {UPDATE | SHARE} OF` starting at token `i`: the positions of the
/// strength word and of OF.
fn lock_of_head(tokens: &[Token], i: usize) -> Option<(usize, usize)> {
    if !is_word(&tokens[i], "FOR") {
        return None;
    }
    let strength = next_significant(tokens, i + 1)?;
    if !(is_word(&tokens[strength], "UPDATE") || is_word(&tokens[strength], "SHARE")) {
        return None;
    }
    let of = next_significant(tokens, strength + 1)?;
    is_word(&tokens[of], "OF").then_some((strength, of))
}

/// `ANALYZE [NO_WRITE_TO_BINLOG | LOCAL] {TABLE | TABLES} t1 [, t2] ...`
/// (the leading word not yet consumed).
fn parse_analyze(p: &mut Parser) -> Result<Command, ParserError> {
    p.next_token();
    let local = match p.peek_token().token {
        Token::Word(ref w)
            if w.quote_style.is_none()
                && (w.value.eq_ignore_ascii_case("NO_WRITE_TO_BINLOG")
                    || w.value.eq_ignore_ascii_case("LOCAL")) =>
        {
            p.next_token();
            true
        }
        _ => false,
    };
    if !p.parse_keyword(Keyword::TABLE) {
        p.expect_keyword_is(Keyword::TABLES)?;
    }
    let tables = p.parse_comma_separated(|p| p.parse_object_name(false))?;
    Ok(Command::Analyze { tables, local })
}

/// `CHECK {TABLE | TABLES} t1 [, t2] ... [FOR UPGRADE | QUICK | FAST |
/// MEDIUM | EXTENDED | CHANGED] ...` (the leading word not yet consumed).
fn parse_check(p: &mut Parser) -> Result<Command, ParserError> {
    p.next_token();
    if !p.parse_keyword(Keyword::TABLE) {
        p.expect_keyword_is(Keyword::TABLES)?;
    }
    let tables = p.parse_comma_separated(|p| p.parse_object_name(false))?;
    let mut for_upgrade = false;
    loop {
        let t = p.peek_token();
        match word_upper(&t.token).as_deref() {
            Some("FOR") => {
                p.next_token();
                let u = p.next_token();
                if word_upper(&u.token).as_deref() != Some("UPGRADE") {
                    return p.expected("UPGRADE", u);
                }
                for_upgrade = true;
            }
            Some("QUICK" | "FAST" | "MEDIUM" | "EXTENDED" | "CHANGED") => {
                p.next_token();
            }
            _ => break,
        }
    }
    Ok(Command::CheckTable {
        tables,
        for_upgrade,
    })
}

/// `KILL [CONNECTION | QUERY] expr` (the leading word not yet consumed).
fn parse_kill(p: &mut Parser) -> Result<Command, ParserError> {
    p.next_token();
    let query_only = if p.parse_keyword(Keyword::QUERY) {
        true
    } else {
        let _ = p.parse_keyword(Keyword::CONNECTION);
        false
    };
    let id = p.parse_expr()?;
    Ok(Command::Kill {
        query_only,
        id: Box::new(id),
    })
}

/// The server version versioned comments are compared with (8.0.36).
const VERSION_FOR_COMMENTS: u32 = 80036;

/// Replaces each executable versioned comment with the tokens of its text
/// (MySQL: `/*!` + optional 5 or 6 digit version; the text counts when the
/// version is at most the server's). Other comments stay for the caller
/// to drop.
fn splice_versioned_comments(tokens: &mut Vec<Token>, dialect: &QuireDialect) -> SqlResult<()> {
    let executable = |t: &Token| -> Option<String> {
        let Token::Whitespace(Whitespace::MultiLineComment(text)) = t else {
            return None;
        };
        let rest = text.strip_prefix('!')?;
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        match digits {
            0 => Some(rest.to_string()),
            5 | 6 => {
                let version: u32 = rest[..digits].parse().ok()?;
                (version <= VERSION_FOR_COMMENTS).then(|| rest[digits..].to_string())
            }
            // MySQL reads other digit runs as part of the text.
            _ => Some(rest.to_string()),
        }
    };
    if !tokens.iter().any(|t| executable(t).is_some()) {
        return Ok(());
    }
    let mut out = Vec::with_capacity(tokens.len());
    for t in tokens.drain(..) {
        match executable(&t) {
            Some(text) => {
                let inner = Tokenizer::new(dialect, &text)
                    .tokenize()
                    .map_err(|e| syntax_error(&e.to_string()))?;
                // Keep the text apart from its neighbours, as the comment did.
                out.push(Token::Whitespace(Whitespace::Space));
                out.extend(inner);
                out.push(Token::Whitespace(Whitespace::Space));
            }
            None => out.push(t),
        }
    }
    *tokens = out;
    Ok(())
}

/// Cuts a top-level `ORDER BY ...` / `LIMIT ...` tail off an UPDATE.
fn split_update_tail(
    tokens: &[Token],
    dialect: &QuireDialect,
    sql: &str,
) -> SqlResult<(Vec<Token>, Vec<OrderByExpr>, Option<Expr>)> {
    let mut depth = 0i32;
    let mut cut = None;
    for (i, t) in tokens.iter().enumerate() {
        match t {
            Token::LParen => depth += 1,
            Token::RParen => depth -= 1,
            _ if depth == 0 && (is_word(t, "ORDER") || is_word(t, "LIMIT")) => {
                cut = Some(i);
                break;
            }
            _ => {}
        }
    }
    let Some(cut) = cut else {
        let mut p = Parser::new(dialect)
            .with_recursion_limit(crate::stack::parse_depth_limit())
            .with_tokens(tokens.to_vec());
        let _ = &mut p;
        return Ok((tokens.to_vec(), Vec::new(), None));
    };
    let head = tokens[..cut].to_vec();
    let mut p = Parser::new(dialect)
        .with_recursion_limit(crate::stack::parse_depth_limit())
        .with_tokens(tokens[cut..].to_vec());
    let mut order = Vec::new();
    let mut limit = None;
    if p.parse_keywords(&[Keyword::ORDER, Keyword::BY]) {
        order = p
            .parse_comma_separated(Parser::parse_order_by_expr)
            .map_err(|e| perr(e, sql))?;
    }
    if p.parse_keyword(Keyword::LIMIT) {
        limit = Some(p.parse_expr().map_err(|e| perr(e, sql))?);
    }
    let t = p.peek_token();
    if t.token != Token::EOF {
        return Err(syntax_error(&t.token.to_string()));
    }
    Ok((head, order, limit))
}

fn parse_start(p: &mut Parser) -> Result<Command, ParserError> {
    p.next_token();
    if !p.parse_keyword(Keyword::TRANSACTION) {
        return p.expected("TRANSACTION", p.peek_token());
    }
    let mut read_only = false;
    let mut snapshot = false;
    loop {
        if p.peek_keyword(Keyword::WITH) {
            p.next_token();
            if !(eat_word(p, "CONSISTENT") && eat_word(p, "SNAPSHOT")) {
                return p.expected("CONSISTENT SNAPSHOT", p.peek_token());
            }
            snapshot = true;
        } else if p.parse_keywords(&[Keyword::READ, Keyword::ONLY]) {
            read_only = true;
        } else if p.parse_keywords(&[Keyword::READ, Keyword::WRITE]) {
            read_only = false;
        } else {
            break;
        }
        if !p.consume_token(&Token::Comma) {
            break;
        }
    }
    Ok(Command::Begin {
        read_only,
        snapshot,
    })
}

/// Consumes the next token if it is the (unquoted) word `w`.
fn eat_word(p: &mut Parser, w: &str) -> bool {
    if is_word(&p.peek_token().token, w) {
        p.next_token();
        true
    } else {
        false
    }
}

fn word_upper(t: &Token) -> Option<String> {
    match t {
        Token::Word(w) => Some(w.value.to_ascii_uppercase()),
        _ => None,
    }
}

fn parse_set(p: &mut Parser) -> Result<Vec<SetItem>, ParserError> {
    p.next_token(); // SET
    let mut items = Vec::new();
    // A leading scope applies to the first assignment (and, in MySQL, to
    // later ones without their own).
    let mut default_scope = Scope::Session;
    loop {
        let mut scope = default_scope;
        let explicit = if eat_word(p, "GLOBAL") || eat_word(p, "PERSIST") {
            Some(Scope::Global)
        } else if eat_word(p, "SESSION") || eat_word(p, "LOCAL") {
            Some(Scope::Session)
        } else {
            None
        };
        if let Some(s) = explicit {
            scope = s;
            default_scope = s;
        }
        if p.parse_keyword(Keyword::TRANSACTION) {
            let mut isolation = None;
            let mut read_only = None;
            loop {
                if p.parse_keywords(&[Keyword::ISOLATION, Keyword::LEVEL]) {
                    let lvl = if p.parse_keywords(&[Keyword::READ, Keyword::UNCOMMITTED]) {
                        "READ-UNCOMMITTED"
                    } else if p.parse_keywords(&[Keyword::READ, Keyword::COMMITTED]) {
                        "READ-COMMITTED"
                    } else if p.parse_keywords(&[Keyword::REPEATABLE, Keyword::READ]) {
                        "REPEATABLE-READ"
                    } else if p.parse_keyword(Keyword::SERIALIZABLE) {
                        "SERIALIZABLE"
                    } else {
                        return p.expected("isolation level", p.peek_token());
                    };
                    isolation = Some(lvl.to_string());
                } else if p.parse_keywords(&[Keyword::READ, Keyword::ONLY]) {
                    read_only = Some(true);
                } else if p.parse_keywords(&[Keyword::READ, Keyword::WRITE]) {
                    read_only = Some(false);
                } else {
                    return p.expected("ISOLATION LEVEL or READ ONLY/WRITE", p.peek_token());
                }
                if !p.consume_token(&Token::Comma) {
                    break;
                }
            }
            // No scope keyword: the next transaction only.
            items.push(SetItem::Transaction {
                scope: explicit,
                isolation,
                read_only,
            });
            return Ok(items);
        }
        let tok = p.peek_token().token;
        let upper = word_upper(&tok).unwrap_or_default();
        if upper == "NAMES" {
            p.next_token();
            let cs = if p.parse_keyword(Keyword::DEFAULT) {
                "utf8mb4".to_string()
            } else {
                name_or_string(p)?
            };
            let collation = if p.parse_keyword(Keyword::COLLATE) {
                Some(name_or_string(p)?)
            } else {
                None
            };
            items.push(SetItem::Names {
                charset: cs,
                collation,
                names: true,
            });
        } else if upper == "CHARACTER" || upper == "CHARSET" {
            p.next_token();
            if upper == "CHARACTER" && !p.parse_keyword(Keyword::SET) {
                return p.expected("SET", p.peek_token());
            }
            let cs = if p.parse_keyword(Keyword::DEFAULT) {
                "utf8mb4".to_string()
            } else {
                name_or_string(p)?
            };
            items.push(SetItem::Names {
                charset: cs,
                collation: None,
                names: false,
            });
        } else {
            // [@@[global.|session.|local.]]name or @name
            let t = p.next_token();
            let raw = match &t.token {
                Token::Word(Word { value, .. }) => value.clone(),
                _ => return p.expected("variable name", t),
            };
            let (mut scope, mut name) = (scope, raw.clone());
            let mut next_txn = false;
            if let Some(rest) = raw.strip_prefix("@@") {
                name = rest.to_string();
                if p.consume_token(&Token::Period) {
                    let q = rest.to_ascii_lowercase();
                    scope = match q.as_str() {
                        "global" | "persist" => Scope::Global,
                        _ => Scope::Session,
                    };
                    name = p.parse_identifier()?.value;
                } else {
                    scope = Scope::Session;
                    next_txn = matches!(
                        rest.to_ascii_lowercase().as_str(),
                        "transaction_isolation"
                            | "tx_isolation"
                            | "transaction_read_only"
                            | "tx_read_only"
                    );
                }
            } else if let Some(rest) = raw.strip_prefix('@') {
                scope = Scope::User;
                name = rest.to_string();
            } else {
                // dotted names like `innodb.x` are not MySQL; accept one part
                while p.consume_token(&Token::Period) {
                    name = format!("{name}.{}", p.parse_identifier()?.value);
                }
            }
            if !(p.consume_token(&Token::Eq) || p.consume_token(&Token::Assignment)) {
                return p.expected("=", p.peek_token());
            }
            // MySQL accepts keywords as values: ON, OFF, DEFAULT, ...
            let value = if let Token::Word(w) = p.peek_token().token {
                if matches!(
                    w.keyword,
                    Keyword::ON | Keyword::OFF | Keyword::DEFAULT | Keyword::ALL
                ) && matches!(
                    p.peek_nth_token(1).token,
                    Token::EOF | Token::Comma | Token::SemiColon
                ) {
                    p.next_token();
                    Expr::Identifier(Ident::new(w.value.to_ascii_uppercase()))
                } else {
                    p.parse_expr()?
                }
            } else {
                p.parse_expr()?
            };
            items.push(SetItem::Var {
                scope,
                name,
                value: Box::new(value),
                next_txn,
            });
        }
        if !p.consume_token(&Token::Comma) {
            break;
        }
    }
    Ok(items)
}

fn name_or_string(p: &mut Parser) -> Result<String, ParserError> {
    let t = p.next_token();
    match t.token {
        Token::Word(w) => Ok(w.value),
        Token::SingleQuotedString(s) | Token::DoubleQuotedString(s) => Ok(s),
        _ => p.expected("character set name", t),
    }
}

fn parse_filter(p: &mut Parser) -> Result<Filter, ParserError> {
    if p.parse_keyword(Keyword::LIKE) {
        let s = p.parse_literal_string()?;
        Ok(Filter::Like(s))
    } else if p.parse_keyword(Keyword::WHERE) {
        Ok(Filter::Where(Box::new(p.parse_expr()?)))
    } else {
        Ok(Filter::None)
    }
}

fn parse_from_db(p: &mut Parser) -> Result<Option<String>, ParserError> {
    if p.parse_one_of_keywords(&[Keyword::FROM, Keyword::IN])
        .is_some()
    {
        Ok(Some(p.parse_identifier()?.value))
    } else {
        Ok(None)
    }
}

fn parse_show(p: &mut Parser) -> Result<Show, ParserError> {
    p.next_token(); // SHOW
    let full = p.parse_keyword(Keyword::FULL);
    let global = match p.parse_one_of_keywords(&[Keyword::GLOBAL, Keyword::SESSION, Keyword::LOCAL])
    {
        Some(Keyword::GLOBAL) => Some(true),
        Some(_) => Some(false),
        None => None,
    };
    let t = p.next_token();
    let w = word_upper(&t.token).unwrap_or_default();
    let show = match w.as_str() {
        "VARIABLES" => Show::Variables {
            global: global.unwrap_or(false),
            filter: parse_filter(p)?,
        },
        "STATUS" => Show::Status {
            global: global.unwrap_or(false),
            filter: parse_filter(p)?,
        },
        "DATABASES" | "SCHEMAS" => Show::Databases(parse_filter(p)?),
        "TABLES" => {
            let db = parse_from_db(p)?;
            Show::Tables {
                db,
                full,
                filter: parse_filter(p)?,
            }
        }
        "COLUMNS" | "FIELDS" => {
            if p.parse_one_of_keywords(&[Keyword::FROM, Keyword::IN])
                .is_none()
            {
                return p.expected("FROM", p.peek_token());
            }
            let table = p.parse_object_name(false)?;
            let db = parse_from_db(p)?;
            Show::Columns {
                table,
                db,
                full,
                filter: parse_filter(p)?,
            }
        }
        "INDEX" | "INDEXES" | "KEYS" => {
            if p.parse_one_of_keywords(&[Keyword::FROM, Keyword::IN])
                .is_none()
            {
                return p.expected("FROM", p.peek_token());
            }
            let mut table = p.parse_object_name(false)?;
            if let Some(db) = parse_from_db(p)? {
                let mut parts = vec![Ident::new(db)];
                parts.extend(table.0.iter().filter_map(|x| x.as_ident().cloned()));
                table = ObjectName::from(parts);
            }
            Show::Index(table)
        }
        "CREATE" => {
            if p.parse_keyword(Keyword::TABLE) {
                Show::CreateTable(p.parse_object_name(false)?)
            } else if p.parse_keyword(Keyword::VIEW) {
                Show::CreateView(p.parse_object_name(false)?)
            } else if p
                .parse_one_of_keywords(&[Keyword::DATABASE, Keyword::SCHEMA])
                .is_some()
            {
                Show::CreateDatabase(p.parse_identifier()?.value)
            } else {
                return p.expected("TABLE or DATABASE", p.peek_token());
            }
        }
        "ENGINE" => {
            let e = p.parse_identifier()?;
            if !e.value.eq_ignore_ascii_case("innodb") || !p.parse_keyword(Keyword::STATUS) {
                return p.expected("INNODB STATUS", p.peek_token());
            }
            Show::EngineInnodbStatus
        }
        "ENGINES" => Show::Engines,
        "BINARY" => {
            let t = p.next_token();
            match word_upper(&t.token).as_deref() {
                Some("LOGS") => Show::BinaryLogs,
                // MySQL 8.2's name for SHOW MASTER STATUS.
                Some("LOG") if p.parse_keyword(Keyword::STATUS) => Show::MasterStatus,
                _ => return p.expected("LOGS or LOG STATUS", t),
            }
        }
        "BINLOG" => {
            let t = p.next_token();
            if word_upper(&t.token).as_deref() != Some("EVENTS") {
                return p.expected("EVENTS", t);
            }
            parse_binlog_events(p)?
        }
        "MASTER" => {
            if p.parse_keyword(Keyword::STATUS) {
                Show::MasterStatus
            } else {
                let t = p.next_token();
                if word_upper(&t.token).as_deref() != Some("LOGS") {
                    return p.expected("STATUS or LOGS", t);
                }
                Show::BinaryLogs
            }
        }
        "WARNINGS" => {
            skip_limit(p)?;
            Show::Warnings
        }
        "ERRORS" => {
            skip_limit(p)?;
            Show::Errors
        }
        "CHARACTER" => {
            if !p.parse_keyword(Keyword::SET) {
                return p.expected("SET", p.peek_token());
            }
            Show::Charset(parse_filter(p)?)
        }
        "CHARSET" => Show::Charset(parse_filter(p)?),
        "EVENTS" => {
            parse_from_db(p)?;
            Show::NoObjects {
                columns: &[
                    "Db",
                    "Name",
                    "Definer",
                    "Time zone",
                    "Type",
                    "Execute at",
                    "Interval value",
                    "Interval field",
                    "Starts",
                    "Ends",
                    "Status",
                    "Originator",
                    "character_set_client",
                    "collation_connection",
                    "Database Collation",
                ],
                filter: parse_filter(p)?,
            }
        }
        "TRIGGERS" => {
            parse_from_db(p)?;
            Show::NoObjects {
                columns: &[
                    "Trigger",
                    "Event",
                    "Table",
                    "Statement",
                    "Timing",
                    "Created",
                    "sql_mode",
                    "Definer",
                    "character_set_client",
                    "collation_connection",
                    "Database Collation",
                ],
                filter: parse_filter(p)?,
            }
        }
        // quire is not a replica (it replicates out, not in): MySQL's
        // answer on such a server is its columns and no row.
        "REPLICAS" => Show::Replicas { legacy: false },
        "SLAVE"
            if {
                let t = p.peek_token();
                word_upper(&t.token).as_deref() == Some("HOSTS")
            } =>
        {
            p.next_token();
            Show::Replicas { legacy: true }
        }
        "SLAVE" | "REPLICA" => {
            if !p.parse_keyword(Keyword::STATUS) {
                return p.expected("STATUS", p.peek_token());
            }
            Show::ReplicaStatus {
                columns: if w == "SLAVE" {
                    &[
                        "Slave_IO_State",
                        "Master_Host",
                        "Master_User",
                        "Master_Port",
                        "Connect_Retry",
                        "Master_Log_File",
                        "Read_Master_Log_Pos",
                        "Relay_Log_File",
                        "Relay_Log_Pos",
                        "Relay_Master_Log_File",
                        "Slave_IO_Running",
                        "Slave_SQL_Running",
                        "Replicate_Do_DB",
                        "Replicate_Ignore_DB",
                        "Replicate_Do_Table",
                        "Replicate_Ignore_Table",
                        "Replicate_Wild_Do_Table",
                        "Replicate_Wild_Ignore_Table",
                        "Last_Errno",
                        "Last_Error",
                        "Skip_Counter",
                        "Exec_Master_Log_Pos",
                        "Relay_Log_Space",
                        "Until_Condition",
                        "Until_Log_File",
                        "Until_Log_Pos",
                        "Master_SSL_Allowed",
                        "Master_SSL_CA_File",
                        "Master_SSL_CA_Path",
                        "Master_SSL_Cert",
                        "Master_SSL_Cipher",
                        "Master_SSL_Key",
                        "Seconds_Behind_Master",
                        "Master_SSL_Verify_Server_Cert",
                        "Last_IO_Errno",
                        "Last_IO_Error",
                        "Last_SQL_Errno",
                        "Last_SQL_Error",
                        "Replicate_Ignore_Server_Ids",
                        "Master_Server_Id",
                        "Master_UUID",
                        "Master_Info_File",
                        "SQL_Delay",
                        "SQL_Remaining_Delay",
                        "Slave_SQL_Running_State",
                        "Master_Retry_Count",
                        "Master_Bind",
                        "Last_IO_Error_Timestamp",
                        "Last_SQL_Error_Timestamp",
                        "Master_SSL_Crl",
                        "Master_SSL_Crlpath",
                        "Retrieved_Gtid_Set",
                        "Executed_Gtid_Set",
                        "Auto_Position",
                        "Replicate_Rewrite_DB",
                        "Channel_Name",
                        "Master_TLS_Version",
                        "Master_public_key_path",
                        "Get_master_public_key",
                        "Network_Namespace",
                    ]
                } else {
                    &[
                        "Replica_IO_State",
                        "Source_Host",
                        "Source_User",
                        "Source_Port",
                        "Connect_Retry",
                        "Source_Log_File",
                        "Read_Source_Log_Pos",
                        "Relay_Log_File",
                        "Relay_Log_Pos",
                        "Relay_Source_Log_File",
                        "Replica_IO_Running",
                        "Replica_SQL_Running",
                        "Replicate_Do_DB",
                        "Replicate_Ignore_DB",
                        "Replicate_Do_Table",
                        "Replicate_Ignore_Table",
                        "Replicate_Wild_Do_Table",
                        "Replicate_Wild_Ignore_Table",
                        "Last_Errno",
                        "Last_Error",
                        "Skip_Counter",
                        "Exec_Source_Log_Pos",
                        "Relay_Log_Space",
                        "Until_Condition",
                        "Until_Log_File",
                        "Until_Log_Pos",
                        "Source_SSL_Allowed",
                        "Source_SSL_CA_File",
                        "Source_SSL_CA_Path",
                        "Source_SSL_Cert",
                        "Source_SSL_Cipher",
                        "Source_SSL_Key",
                        "Seconds_Behind_Source",
                        "Source_SSL_Verify_Server_Cert",
                        "Last_IO_Errno",
                        "Last_IO_Error",
                        "Last_SQL_Errno",
                        "Last_SQL_Error",
                        "Replicate_Ignore_Server_Ids",
                        "Source_Server_Id",
                        "Source_UUID",
                        "Source_Info_File",
                        "SQL_Delay",
                        "SQL_Remaining_Delay",
                        "Replica_SQL_Running_State",
                        "Source_Retry_Count",
                        "Source_Bind",
                        "Last_IO_Error_Timestamp",
                        "Last_SQL_Error_Timestamp",
                        "Source_SSL_Crl",
                        "Source_SSL_Crlpath",
                        "Retrieved_Gtid_Set",
                        "Executed_Gtid_Set",
                        "Auto_Position",
                        "Replicate_Rewrite_DB",
                        "Channel_Name",
                        "Source_TLS_Version",
                        "Source_public_key_path",
                        "Get_source_public_key",
                        "Network_Namespace",
                    ]
                },
            }
        }
        "PROCEDURE" | "FUNCTION" => {
            if !p.parse_keyword(Keyword::STATUS) {
                return p.expected("STATUS", p.peek_token());
            }
            Show::NoObjects {
                columns: &[
                    "Db",
                    "Name",
                    "Type",
                    "Definer",
                    "Modified",
                    "Created",
                    "Security_type",
                    "Comment",
                    "character_set_client",
                    "collation_connection",
                    "Database Collation",
                ],
                filter: parse_filter(p)?,
            }
        }
        "COLLATION" => Show::Collation(parse_filter(p)?),
        "TABLE" => {
            if !p.parse_keyword(Keyword::STATUS) {
                return p.expected("STATUS", p.peek_token());
            }
            let db = parse_from_db(p)?;
            Show::TableStatus {
                db,
                filter: parse_filter(p)?,
            }
        }
        "PROCESSLIST" => Show::Processlist { full },
        _ => return p.expected("a SHOW statement quire knows", t),
    };
    Ok(show)
}

/// The clauses of SHOW BINLOG EVENTS after EVENTS.
fn parse_binlog_events(p: &mut Parser) -> Result<Show, ParserError> {
    let number = |p: &mut Parser| -> Result<u64, ParserError> {
        let t = p.next_token();
        match &t.token {
            Token::Number(n, _) => n
                .parse::<u64>()
                .map_err(|_| ParserError::ParserError(format!("Expected a number, found {n}"))),
            _ => p.expected("a number", t),
        }
    };
    let file = if p.parse_keyword(Keyword::IN) {
        let t = p.next_token();
        match &t.token {
            Token::SingleQuotedString(s) | Token::DoubleQuotedString(s) => Some(s.clone()),
            _ => return p.expected("a file name", t),
        }
    } else {
        None
    };
    let from = if p.parse_keyword(Keyword::FROM) {
        number(p)?
    } else {
        0
    };
    let (mut offset, mut limit) = (0, None);
    if p.parse_keyword(Keyword::LIMIT) {
        let first = number(p)?;
        if p.consume_token(&Token::Comma) {
            offset = first;
            limit = Some(number(p)?);
        } else {
            limit = Some(first);
        }
    }
    Ok(Show::BinlogEvents {
        file,
        from,
        offset,
        limit,
    })
}

fn skip_limit(p: &mut Parser) -> Result<(), ParserError> {
    if p.parse_keyword(Keyword::LIMIT) {
        p.parse_expr()?;
        if p.consume_token(&Token::Comma) {
            p.parse_expr()?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_numbered() {
        let p = parse("SELECT c FROM t WHERE id BETWEEN ? AND ?").unwrap();
        assert_eq!(p.params, 2);
        let s = format!("{:?}", p.cmd);
        assert!(s.contains("?1") && s.contains("?2"), "{s}");
    }

    #[test]
    fn set_forms() {
        for q in [
            "SET NAMES utf8mb4",
            "SET NAMES 'utf8' COLLATE 'utf8_general_ci'",
            "SET autocommit=1",
            "SET SESSION sql_mode = 'STRICT_TRANS_TABLES'",
            "SET @@session.autocommit = OFF",
            "SET GLOBAL sync_binlog = 1, innodb_flush_log_at_trx_commit = 2",
            "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED",
            "SET TRANSACTION READ ONLY",
            "SET @x = 5",
            "SET character_set_results = NULL",
        ] {
            assert!(matches!(parse(q).unwrap().cmd, Command::Set(_)), "{q}");
        }
    }

    #[test]
    fn versioned_comments_execute_up_to_our_version() {
        let sql = |q: &str| match parse(q).unwrap().cmd {
            Command::Sql(st) => st.to_string(),
            Command::Empty => String::new(),
            other => format!("{other:?}"),
        };
        assert_eq!(sql("SELECT 1 /*!, 2 */"), "SELECT 1, 2");
        assert_eq!(sql("SELECT 1 /*!40101 , 2 */"), "SELECT 1, 2");
        assert_eq!(sql("SELECT 1 /*!80036 , 2 */"), "SELECT 1, 2");
        assert_eq!(sql("SELECT 1 /*!80037 , 2 */"), "SELECT 1");
        assert_eq!(sql("SELECT 1 /*!90000 , 2 */"), "SELECT 1");
        assert_eq!(sql("SELECT 1 /*M!100100 , 2 */"), "SELECT 1");
        assert_eq!(sql("SELECT 1 /* , 2 */"), "SELECT 1");
        assert!(matches!(
            parse("/*!40101 SET NAMES utf8 */").unwrap().cmd,
            Command::Set(_)
        ));
        assert!(matches!(
            parse("/*!99999 SET NAMES utf8 */").unwrap().cmd,
            Command::Empty
        ));
        // The text is tokenized like the rest: bad text is a syntax error.
        assert!(parse("SELECT 1 /*!40101 'unterminated */").is_err());
    }

    #[test]
    fn lock_in_share_mode() {
        let p = parse("SELECT * FROM t WHERE id = 1 LOCK IN SHARE MODE").unwrap();
        assert!(p.share_lock);
    }
}
