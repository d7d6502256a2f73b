//! # DDL: CREATE TABLE / CREATE INDEX to catalog definitions
//!
//! MySQL column types are read from the text of `sqlparser`'s data type
//! (its `Display` output), which is stable across the parser's many
//! type variants: the base word, an optional `(n[,m])` and UNSIGNED decide
//! the engine's [`ColumnType`]. Column options give NOT NULL / NULL,
//! DEFAULT (coerced to the column's type; a bad default is error 1067),
//! `DEFAULT CURRENT_TIMESTAMP[(n)]` and `ON UPDATE CURRENT_TIMESTAMP[(n)]`
//! (and the synonyms NOW(), LOCALTIME, LOCALTIMESTAMP) on DATETIME/TIMESTAMP
//! with the column's own fsp (1067 / 1294 otherwise, as MySQL; applied by
//! `exec.rs` at INSERT and UPDATE), also written as the expression default
//! `DEFAULT (NOW())` (SHOW CREATE TABLE then says CURRENT_TIMESTAMP),
//! AUTO_INCREMENT, PRIMARY KEY, UNIQUE, CHECK; table constraints give
//! PRIMARY KEY, UNIQUE, KEY/INDEX, CHECK and FOREIGN KEY (`constraints.rs`;
//! a key whose columns lead no index gets one, as MySQL adds it). Table
//! options: see [`check_table_options`].

use quire_engine::types::{coerce, Collation};
use quire_engine::{ColumnDef, ColumnType, EngineError, IndexSpec, Value};
use sqlparser::ast::{self, ColumnOption, CreateTable, TableConstraint};
use sqlparser::tokenizer::Token;

use crate::expr::{literal, number_literal};
use crate::SqlResult;

/// The numbers in the first `( .. )` of a type text.
pub fn paren_numbers(s: &str) -> (Option<u64>, Option<u64>) {
    let Some(open) = s.find('(') else {
        return (None, None);
    };
    let inner = &s[open + 1..];
    let inner = &inner[..inner.find(')').unwrap_or(inner.len())];
    let mut it = inner.split(',').map(|x| x.trim().parse::<u64>().ok());
    (it.next().flatten(), it.next().flatten())
}

/// MySQL type text -> engine type.
/// The engine type of column `name`'s declared type (`name` for errors
/// such as 1074).
pub fn column_type(dt: &ast::DataType, name: &str) -> SqlResult<ColumnType> {
    // sqlparser 0.64 reads ZEROFILL and UNSIGNED on the non-integer numeric
    // types, which 0.55 rejected. quire can honour neither (the engine has
    // no zero-padded display and no unsigned DECIMAL/FLOAT/DOUBLE), so they
    // stay syntax errors rather than being silently dropped.
    match dt {
        ast::DataType::Zerofill(_) => return Err(crate::parse::syntax_error("ZEROFILL")),
        ast::DataType::DecimalUnsigned(_)
        | ast::DataType::DecUnsigned(_)
        | ast::DataType::FloatUnsigned(_)
        | ast::DataType::RealUnsigned
        | ast::DataType::DoubleUnsigned(_)
        | ast::DataType::DoublePrecisionUnsigned => {
            return Err(crate::parse::syntax_error("UNSIGNED"))
        }
        ast::DataType::Enum(members, None) => {
            let members = members
                .iter()
                .map(|m| match m {
                    ast::EnumMember::Name(n) => Ok(member_text(n)),
                    ast::EnumMember::NamedValue(n, _) => Err(crate::parse::syntax_error(n)),
                })
                .collect::<SqlResult<Vec<_>>>()?;
            let ty = ColumnType::Enum {
                members: members.into(),
            };
            ty.validate(name)?;
            return Ok(ty);
        }
        ast::DataType::Set(members) => {
            let ty = ColumnType::Set {
                members: members
                    .iter()
                    .map(|m| member_text(m))
                    .collect::<Vec<_>>()
                    .into(),
            };
            ty.validate(name)?;
            return Ok(ty);
        }
        _ => {}
    }
    let s = dt.to_string().to_ascii_uppercase();
    let base = s.split(['(', ' ']).next().unwrap_or("").to_string();
    let unsigned = s.contains("UNSIGNED");
    let (a, b) = paren_numbers(&s);
    let bad = || EngineError::not_supported(format!("column type {s}"));
    let len32 = |d: u64| -> SqlResult<u32> { u32::try_from(a.unwrap_or(d)).map_err(|_| bad()) };
    let ty = match base.as_str() {
        "TINYINT" | "BOOL" | "BOOLEAN" => ColumnType::TinyInt { unsigned },
        "SMALLINT" => ColumnType::SmallInt { unsigned },
        "MEDIUMINT" => ColumnType::MediumInt { unsigned },
        "INT" | "INTEGER" | "INT4" => ColumnType::Int { unsigned },
        "BIGINT" | "INT8" => ColumnType::BigInt { unsigned },
        "SERIAL" => ColumnType::BigInt { unsigned: true },
        "DECIMAL" | "NUMERIC" | "DEC" | "FIXED" => ColumnType::Decimal {
            precision: u8::try_from(a.unwrap_or(10)).map_err(|_| bad())?,
            scale: u8::try_from(b.unwrap_or(0)).map_err(|_| bad())?,
        },
        "FLOAT" => {
            if a.is_some_and(|p| p > 24) {
                ColumnType::Double
            } else {
                ColumnType::Float
            }
        }
        "DOUBLE" | "REAL" => ColumnType::Double,
        "CHAR" | "CHARACTER" | "NCHAR" => {
            if s.contains("VARYING") {
                ColumnType::varchar(len32(255)?)
            } else {
                ColumnType::char(len32(1)?)
            }
        }
        "VARCHAR" | "NVARCHAR" | "VARCHARACTER" => match a {
            Some(_) => ColumnType::varchar(len32(0)?),
            None => {
                return Err(crate::parse::syntax_error(&s));
            }
        },
        "TINYTEXT" => ColumnType::text(ColumnType::TINY_BYTES),
        "TEXT" => ColumnType::text(match a {
            Some(n) => ColumnType::lob_limit_for(n).ok_or_else(bad)?,
            None => ColumnType::REGULAR_BYTES,
        }),
        "MEDIUMTEXT" => ColumnType::text(ColumnType::MEDIUM_BYTES),
        "LONGTEXT" => ColumnType::text(ColumnType::LONG_BYTES),
        "TINYBLOB" => ColumnType::Blob {
            max_bytes: ColumnType::TINY_BYTES,
        },
        "BLOB" => ColumnType::Blob {
            max_bytes: match a {
                Some(n) => ColumnType::lob_limit_for(n).ok_or_else(bad)?,
                None => ColumnType::REGULAR_BYTES,
            },
        },
        "MEDIUMBLOB" => ColumnType::Blob {
            max_bytes: ColumnType::MEDIUM_BYTES,
        },
        "LONGBLOB" => ColumnType::Blob {
            max_bytes: ColumnType::LONG_BYTES,
        },
        "BINARY" => ColumnType::Binary { len: len32(1)? },
        "VARBINARY" => match a {
            Some(_) => ColumnType::VarBinary { len: len32(0)? },
            None => return Err(crate::parse::syntax_error(&s)),
        },
        "DATE" => ColumnType::Date,
        "DATETIME" => ColumnType::DateTime {
            fsp: u8::try_from(a.unwrap_or(0)).map_err(|_| bad())?,
        },
        "TIMESTAMP" => ColumnType::Timestamp {
            fsp: u8::try_from(a.unwrap_or(0)).map_err(|_| bad())?,
        },
        "TIME" if !s.contains("ZONE") => ColumnType::Time {
            fsp: u8::try_from(a.unwrap_or(0)).map_err(|_| bad())?,
        },
        // YEAR(4) is YEAR (deprecated display width); YEAR(2) is gone.
        "YEAR" => match a {
            None | Some(4) => ColumnType::Year,
            Some(_) => {
                return Err(EngineError::new(
                    1818,
                    "HY000",
                    "Supports only YEAR or YEAR(4) column.",
                ))
            }
        },
        "JSON" => ColumnType::Json,
        "BIT" => ColumnType::Bit {
            bits: u8::try_from(a.unwrap_or(1)).unwrap_or(u8::MAX),
        },
        _ => return Err(bad()),
    };
    // A character type's limits depend on its character set, known
    // once the column's clauses are read (column_collation checks then).
    if !ty.is_text() {
        ty.validate(name)?;
    }
    Ok(ty)
}

/// An ENUM/SET member as MySQL keeps it: trailing spaces removed.
fn member_text(m: &str) -> String {
    m.trim_end_matches(' ').to_string()
}

/// A CREATE TABLE turned into engine arguments.
pub struct TableSpec {
    pub name: String,
    pub db: Option<String>,
    pub columns: Vec<ColumnDef>,
    pub primary: Vec<usize>,
    pub indexes: Vec<IndexSpec>,
    pub if_not_exists: bool,
    /// `AUTO_INCREMENT=n`: the first value handed out.
    pub auto_increment: Option<u64>,
    pub checks: Vec<quire_engine::CheckDef>,
    pub foreign_keys: Vec<quire_engine::ForeignKeyDef>,
    /// The table's default collation.
    pub collation: Collation,
    /// CREATE TEMPORARY TABLE (temp.rs).
    pub temporary: bool,
}

/// Table options: every table is InnoDB, so `ENGINE=` names InnoDB or is
/// refused (MySQL's 1286 under the default NO_ENGINE_SUBSTITUTION: quire
/// has no other engine to create); PARTITION BY is refused by the parser.
/// `AUTO_INCREMENT=n` sets the first value the table hands out (returned;
/// 0 counts as 1, as in MySQL). CHARSET and COLLATE are read by
/// [`table_collation`]; the remaining options (COMMENT, ROW_FORMAT, ...)
/// do not change what rows mean and are accepted.
fn check_table_options(o: &ast::CreateTableOptions) -> SqlResult<Option<u64>> {
    let list = match o {
        ast::CreateTableOptions::None => return Ok(None),
        ast::CreateTableOptions::Plain(l) => l,
        other => return Err(crate::parse::syntax_error(&other.to_string())),
    };
    let mut auto_increment = None;
    for opt in list {
        let text = opt.to_string();
        let upper = text.to_ascii_uppercase();
        if let Some(rest) = upper.strip_prefix("AUTO_INCREMENT") {
            let n = rest.trim_start_matches([' ', '=']).trim();
            match n.parse::<u64>() {
                Ok(n) => auto_increment = Some(n.max(1)),
                Err(_) => return Err(crate::parse::syntax_error(&text)),
            }
            continue;
        }
        if let Some(rest) = upper.strip_prefix("ENGINE") {
            let name = rest
                .trim_start_matches([' ', '='])
                .trim()
                .trim_matches(['\'', '`', '"']);
            if !name.eq_ignore_ascii_case("INNODB") {
                let orig = &text[text.len() - rest.len()..];
                let orig = orig
                    .trim_start_matches([' ', '='])
                    .trim()
                    .trim_matches(['\'', '`', '"']);
                return Err(EngineError::new(
                    1286,
                    "42000",
                    format!("Unknown storage engine '{orig}'"),
                ));
            }
        }
    }
    Ok(auto_increment)
}

/// The fsp of a DATETIME/TIMESTAMP column type.
fn temporal_fsp(ty: &ColumnType) -> Option<u8> {
    match ty {
        ColumnType::DateTime { fsp } | ColumnType::Timestamp { fsp } => Some(*fsp),
        _ => None,
    }
}

/// `CURRENT_TIMESTAMP`, `CURRENT_TIMESTAMP(n)`, `NOW([n])`, `LOCALTIME[(n)]`,
/// `LOCALTIMESTAMP[(n)]`: Some(n) (0 without a precision); other
/// expressions None. A precision above 6 is MySQL's 1426.
fn now_fsp(e: &ast::Expr) -> SqlResult<Option<u8>> {
    const NAMES: [&str; 4] = ["CURRENT_TIMESTAMP", "NOW", "LOCALTIME", "LOCALTIMESTAMP"];
    let is_now = |n: &str, parens: bool| {
        NAMES.iter().any(|x| x.eq_ignore_ascii_case(n))
            && (parens || !n.eq_ignore_ascii_case("NOW"))
    };
    match e {
        ast::Expr::Identifier(i) if i.quote_style.is_none() && is_now(&i.value, false) => {
            Ok(Some(0))
        }
        ast::Expr::Function(f) if is_now(&f.name.to_string(), true) => {
            let args: Vec<&ast::FunctionArg> = match &f.args {
                ast::FunctionArguments::None => Vec::new(),
                ast::FunctionArguments::List(l) => l.args.iter().collect(),
                ast::FunctionArguments::Subquery(_) => return Ok(None),
            };
            match args.as_slice() {
                [] => Ok(Some(0)),
                [ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(ast::Expr::Value(v)))] => {
                    match &v.value {
                        ast::Value::Number(n, _) => match n.parse::<u8>() {
                            Ok(p) if p <= 6 => Ok(Some(p)),
                            _ => Err(EngineError::new(
                                1426,
                                "42000",
                                format!(
                                    "Too-big precision {n} specified for '{}'. Maximum is 6.",
                                    f.name.to_string().to_ascii_lowercase()
                                ),
                            )),
                        },
                        _ => Ok(None),
                    }
                }
                _ => Ok(None),
            }
        }
        _ => Ok(None),
    }
}

pub(crate) fn default_value(e: &ast::Expr) -> SqlResult<Value> {
    crate::stack::check()?;
    match e {
        ast::Expr::Value(v) => literal(&v.value, &[]),
        ast::Expr::UnaryOp {
            op: ast::UnaryOperator::Minus,
            expr,
        } => match &**expr {
            ast::Expr::Value(v) => match &v.value {
                ast::Value::Number(n, _) => number_literal(&format!("-{n}")),
                _ => Err(EngineError::not_supported("this DEFAULT expression")),
            },
            _ => Err(EngineError::not_supported("this DEFAULT expression")),
        },
        ast::Expr::Nested(x) => default_value(x),
        other => Err(EngineError::not_supported(format!(
            "DEFAULT {}",
            other.to_string().chars().take(40).collect::<String>()
        ))),
    }
}

/// The column named by one entry of a key's column list (CREATE TABLE's
/// keys and CREATE INDEX) and its prefix length (`c(10)`: the first 10
/// characters, or bytes of a binary column; the engine checks it against
/// the column, engine.rs `check_key_parts`). sqlparser 0.64 reads each
/// entry as an ordered expression: a plain name or a prefix, with or
/// without ASC, is a key part; MySQL 8.0's descending (`c DESC`) and
/// functional (`(a + b)`) key parts are not in quire yet and get 1235
/// naming them (never an index that quietly differs); anything else
/// MySQL does not parse either is a syntax error.
pub(crate) fn key_part(ic: &ast::IndexColumn) -> SqlResult<(&str, Option<u32>)> {
    let col = &ic.column;
    if col.options.nulls_first.is_some() || col.with_fill.is_some() || ic.operator_class.is_some() {
        return Err(crate::parse::syntax_error(&ic.to_string()));
    }
    let refused = |what: &str| {
        Err(EngineError::not_supported(format!(
            "{what} in an index (`{ic}`)"
        )))
    };
    match col.options.sort {
        None | Some(ast::OrderBySort::Asc) => {}
        Some(ast::OrderBySort::Desc) => return refused("a descending key part"),
        Some(ast::OrderBySort::Using(_)) => {
            return Err(crate::parse::syntax_error(&ic.to_string()))
        }
    }
    match &col.expr {
        ast::Expr::Identifier(i) => Ok((&i.value, None)),
        ast::Expr::Function(f) => match prefix_length(f) {
            Some((name, len)) => Ok((name, Some(len))),
            None => refused("an expression key part"),
        },
        _ => refused("an expression key part"),
    }
}

/// `c(10)` as sqlparser reads it: a call of `c` with one integer. A
/// length beyond u32 is kept as u32::MAX (longer than any column: 1089).
fn prefix_length(f: &ast::Function) -> Option<(&str, u32)> {
    let ast::FunctionArguments::List(l) = &f.args else {
        return None;
    };
    if l.duplicate_treatment.is_some() || !l.clauses.is_empty() || f.name.0.len() != 1 {
        return None;
    }
    let name = f.name.0[0].as_ident()?;
    if name.quote_style.is_some_and(|q| q != '`') {
        return None;
    }
    match l.args.as_slice() {
        [ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(ast::Expr::Value(v)))] => {
            match &v.value {
                ast::Value::Number(n, _) if n.bytes().all(|b| b.is_ascii_digit()) => {
                    Some((&name.value, n.parse::<u32>().unwrap_or(u32::MAX)))
                }
                _ => None,
            }
        }
        _ => None,
    }
}

/// Bytes a column takes in MySQL's row-definition count (the in-row
/// maximum; BLOB and TEXT count only their length and pointer).
fn definition_bytes(ty: &ColumnType) -> u64 {
    let var = |n: u64| n + if n > 255 { 2 } else { 1 };
    let dec_part = |d: u64| (d / 9) * 4 + [0, 1, 1, 2, 2, 3, 3, 4, 4, 4][(d % 9) as usize];
    match *ty {
        ColumnType::TinyInt { .. } => 1,
        ColumnType::SmallInt { .. } => 2,
        ColumnType::MediumInt { .. } => 3,
        ColumnType::Int { .. } | ColumnType::Float => 4,
        ColumnType::BigInt { .. } | ColumnType::Double => 8,
        ColumnType::Decimal { precision, scale } => {
            dec_part(u64::from(precision - scale)) + dec_part(u64::from(scale))
        }
        ColumnType::Char { len, .. } => u64::from(len) * 4,
        ColumnType::Binary { len } => u64::from(len),
        ColumnType::Varchar { len, .. } => var(u64::from(len) * 4),
        ColumnType::VarBinary { len } => var(u64::from(len)),
        ColumnType::Text { max_bytes, .. } | ColumnType::Blob { max_bytes } => {
            8 + match max_bytes {
                0..=255 => 1,
                256..=65535 => 2,
                65536..=16_777_215 => 3,
                _ => 4,
            }
        }
        ColumnType::Date => 3,
        ColumnType::DateTime { fsp } => 5 + u64::from(fsp).div_ceil(2),
        ColumnType::Timestamp { fsp } => 4 + u64::from(fsp).div_ceil(2),
        ColumnType::Year => 1,
        ColumnType::Time { fsp } => 3 + u64::from(fsp).div_ceil(2),
        ColumnType::Bit { bits } => u64::from(bits).div_ceil(8),
        ColumnType::Enum { ref members } => {
            if members.len() < 256 {
                1
            } else {
                2
            }
        }
        ColumnType::Json => 12,
        ColumnType::Set { ref members } => match members.len().div_ceil(8) {
            0 | 1 => 1,
            n @ 2..=4 => n as u64,
            _ => 8,
        },
    }
}

/// MySQL's limit on a row definition: 65,535 bytes of column maxima (BLOB
/// and TEXT by their pointers) plus the NULL bitmap, else 1118. Long
/// values themselves go off-page (engine offpage.rs).
pub(crate) fn check_row_definition(columns: &[ColumnDef]) -> SqlResult<()> {
    let nullable = columns.iter().filter(|c| c.nullable).count() as u64;
    let total: u64 =
        columns.iter().map(|c| definition_bytes(&c.ty)).sum::<u64>() + nullable.div_ceil(8);
    if total > 65535 {
        return Err(EngineError::new(
            1118,
            "42000",
            "Row size too large. The maximum row size for the used table type, not counting BLOBs, is 65535. This includes storage overhead, check the manual. You have to change some columns to TEXT or BLOBs",
        ));
    }
    Ok(())
}

/// One column definition of CREATE TABLE or ALTER TABLE ADD/MODIFY/CHANGE:
/// the engine's column and the keys and checks written on it.
pub(crate) struct ParsedColumn<'a> {
    pub def: ColumnDef,
    /// `PRIMARY KEY` on the column.
    pub primary: bool,
    /// `UNIQUE [KEY]` on the column.
    pub unique: bool,
    pub checks: Vec<&'a ast::CheckConstraint>,
}

/// Reads one column definition (types, NULL-ness, defaults, ON UPDATE,
/// AUTO_INCREMENT; 1067 / 1294 / 1235 as the module says).
pub(crate) fn column_def(c: &ast::ColumnDef, table: Collation) -> SqlResult<ParsedColumn<'_>> {
    let ty = column_type(&c.data_type, &c.name.value)?;
    let ty = column_collation(c, ty, table)?;
    let name = &c.name.value;
    // MySQL's grammar refuses these on a generated column, whatever
    // their order (generated.rs).
    let is_generated = c
        .options
        .iter()
        .any(|o| matches!(o.option, ColumnOption::Generated { .. }));
    let mut generated = None;
    let mut comment = String::new();
    let mut nullable = true;
    let (mut primary, mut unique) = (false, false);
    let mut checks = Vec::new();
    let mut default = None;
    let mut auto_increment = false;
    let mut default_expr = None;
    let mut on_update_now = None;
    for o in &c.options {
        match &o.option {
            ColumnOption::Null => nullable = true,
            ColumnOption::NotNull => nullable = false,
            ColumnOption::Default(_) if is_generated => {
                return Err(crate::generated::wrong_usage("DEFAULT"))
            }
            ColumnOption::Default(e) => default_expr = Some(e.clone()),
            ColumnOption::Generated {
                generated_as,
                sequence_options: None,
                generation_expr: Some(e),
                generation_expr_mode,
                ..
            } if !matches!(generated_as, ast::GeneratedAs::ByDefault) => {
                if generated.is_some() {
                    return Err(crate::parse::syntax_error("AS"));
                }
                crate::generated::pre_validate(e, crate::generated::Kind::Generated, name)?;
                generated = Some(quire_engine::Generated {
                    expr: crate::generated::print(e),
                    stored: matches!(
                        generation_expr_mode,
                        Some(ast::GeneratedExpressionMode::Stored)
                    ),
                });
            }
            ColumnOption::Generated { .. } => {
                return Err(crate::parse::syntax_error(&o.option.to_string()))
            }
            ColumnOption::Comment(text) => comment = text.clone(),
            ColumnOption::PrimaryKey(_) => {
                primary = true;
                nullable = false;
            }
            ColumnOption::Unique(_) => unique = true,
            ColumnOption::DialectSpecific(toks) => {
                let text: Vec<String> = toks
                    .iter()
                    .map(|t| t.to_string().to_ascii_uppercase())
                    .collect();
                if text.iter().any(|t| t == "AUTO_INCREMENT") {
                    if is_generated {
                        return Err(crate::generated::wrong_usage("AUTO_INCREMENT"));
                    }
                    auto_increment = true;
                } else if !toks.iter().all(|t| matches!(t, Token::Word(_))) {
                    return Err(EngineError::not_supported(format!(
                        "column option {}",
                        text.join(" ")
                    )));
                }
            }
            ColumnOption::OnUpdate(_) if is_generated => {
                return Err(crate::generated::wrong_usage("ON UPDATE"))
            }
            ColumnOption::OnUpdate(e) => {
                // MySQL: only CURRENT_TIMESTAMP (or a synonym) with the
                // column's own fsp, on DATETIME/TIMESTAMP (1294).
                let fsp = now_fsp(e)?.filter(|&f| temporal_fsp(&ty) == Some(f));
                on_update_now = Some(fsp.ok_or_else(|| {
                    EngineError::new(
                        1294,
                        "HY000",
                        format!("Invalid ON UPDATE clause for '{}' column", c.name.value),
                    )
                })?);
            }
            ColumnOption::Check(cc) => checks.push(cc),
            // Applied by column_collation.
            ColumnOption::CharacterSet(_) | ColumnOption::Collation(_) => {}
            // An inline `REFERENCES p(id)`: MySQL 8.0 parses it and
            // ignores it; quire refuses it by name rather than let a
            // reader believe a key exists.
            other => return Err(EngineError::not_supported(format!("column option {other}"))),
        }
    }
    if primary && generated.as_ref().is_some_and(|g| !g.stored) {
        return Err(crate::generated::unsupported(
            "Defining a virtual generated column as primary key",
        ));
    }
    let mut default_now = None;
    let mut expression_default = None;
    if let Some(e) = default_expr {
        // `DEFAULT (NOW())` is MySQL 8.0's expression default (what
        // SQLAlchemy writes for a `server_default=func.now()`): on a
        // DATETIME/TIMESTAMP of the call's own precision it behaves as
        // DEFAULT CURRENT_TIMESTAMP. Any other parenthesised expression
        // is a DEFAULT expression, evaluated per row (generated.rs).
        let now = match &e {
            ast::Expr::Nested(x) => now_fsp(x)?,
            _ => now_fsp(&e)?,
        };
        let v = match (&e, now) {
            (ast::Expr::Nested(x), now) if now.is_none() || temporal_fsp(&ty) != now => {
                crate::generated::pre_validate(x, crate::generated::Kind::Default, name)?;
                expression_default = Some(crate::generated::print(x));
                None
            }
            // DEFAULT CURRENT_TIMESTAMP[(n)]: DATETIME/TIMESTAMP with
            // the same fsp only, as MySQL (1067 otherwise).
            (_, Some(fsp)) => {
                if temporal_fsp(&ty) != Some(fsp) {
                    return Err(EngineError::new(
                        1067,
                        "42000",
                        format!("Invalid default value for '{}'", c.name.value),
                    ));
                }
                default_now = Some(fsp);
                None
            }
            (_, None) => Some(default_value(&e)?),
        };
        if let Some(v) = v {
            let v = if v.is_null() {
                if !nullable {
                    return Err(EngineError::new(
                        1067,
                        "42000",
                        format!("Invalid default value for '{}'", c.name.value),
                    ));
                }
                Value::Null
            } else {
                coerce(v, &ty, nullable, &c.name.value, 1).map_err(|_| {
                    EngineError::new(
                        1067,
                        "42000",
                        format!("Invalid default value for '{}'", c.name.value),
                    )
                })?
            };
            default = Some(v);
        }
    }
    Ok(ParsedColumn {
        def: ColumnDef {
            name: c.name.value.clone(),
            ty,
            nullable,
            default,
            auto_increment,
            default_now,
            on_update_now,
            instant: None,
            generated,
            default_expr: expression_default,
            comment,
        },
        primary,
        unique,
        checks,
    })
}

/// A column type with its `CHARACTER SET` / `COLLATE` clauses applied
/// (`table`: the table's default). `CHARACTER SET binary` makes a
/// character type its byte twin, as in MySQL; NCHAR/NVARCHAR are utf8mb3.
/// ENUM and SET compare their members case-insensitively whatever the
/// clause says, so only a case-insensitive collation is accepted on them.
fn column_collation(c: &ast::ColumnDef, ty: ColumnType, table: Collation) -> SqlResult<ColumnType> {
    let mut cs = None;
    let mut coll = None;
    for o in &c.options {
        match &o.option {
            ColumnOption::CharacterSet(n) => cs = Some(n.to_string()),
            ColumnOption::Collation(n) => coll = Some(n.to_string()),
            _ => {}
        }
    }
    let dt = c.data_type.to_string().to_ascii_uppercase();
    let national =
        dt.starts_with("NATIONAL") || dt.starts_with("NCHAR") || dt.starts_with("NVARCHAR");
    if national && cs.is_none() {
        cs = Some("utf8mb3".to_string());
    }
    if cs.is_none() && coll.is_none() && !ty.is_text() {
        return Ok(ty);
    }
    let resolved = crate::collate::resolve(cs.as_deref(), coll.as_deref(), table)?;
    if ty.is_text() {
        if resolved == Collation::Binary {
            return Ok(match ty {
                ColumnType::Char { len, .. } => ColumnType::Binary { len },
                ColumnType::Varchar { len, .. } => ColumnType::VarBinary { len },
                ColumnType::Text { max_bytes, .. } => ColumnType::Blob { max_bytes },
                other => other,
            });
        }
        let ty = ty.with_collation(resolved);
        ty.validate(&c.name.value)?;
        return Ok(ty);
    }
    if ty.is_enum_or_set() {
        if resolved.is_bin() || resolved == Collation::Utf8mb4_0900AsCs {
            return Err(EngineError::not_supported(format!(
                "COLLATE {} on an ENUM or SET column (members compare case-insensitively)",
                resolved.name()
            )));
        }
        return Ok(ty);
    }
    Err(crate::parse::syntax_error(if coll.is_some() {
        "COLLATE"
    } else {
        "CHARACTER SET"
    }))
}

/// The table options' `[DEFAULT] CHARSET|CHARACTER SET [=] x` and
/// `[DEFAULT] COLLATE [=] y`, resolved against `default` (the database's).
fn table_collation(o: &ast::CreateTableOptions, default: Collation) -> SqlResult<Collation> {
    let list = match o {
        ast::CreateTableOptions::Plain(l) => l.as_slice(),
        _ => &[],
    };
    let mut cs = None;
    let mut coll = None;
    for opt in list {
        let text = opt.to_string();
        let upper = text.to_ascii_uppercase();
        let upper = upper.strip_prefix("DEFAULT ").unwrap_or(&upper);
        let value = |key: &str| -> Option<String> {
            let rest = upper.strip_prefix(key)?;
            if !rest.starts_with([' ', '=']) {
                return None;
            }
            let from = text.len() - rest.len();
            Some(
                text[from..]
                    .trim_start_matches([' ', '='])
                    .trim()
                    .to_string(),
            )
        };
        if let Some(v) = value("CHARSET").or_else(|| value("CHARACTER SET")) {
            cs = Some(v);
        } else if let Some(v) = value("COLLATE") {
            coll = Some(v);
        }
    }
    crate::collate::resolve(cs.as_deref(), coll.as_deref(), default)
}

/// CREATE TABLE's definition; `current_db` is what an unqualified name
/// (the table's, a foreign key's parent's) means.
pub fn table_spec(
    ct: &CreateTable,
    current_db: Option<&str>,
    default: Collation,
) -> SqlResult<TableSpec> {
    table_spec_with(ct, current_db, true, default)
}

/// [`table_spec`]; `expressions`: check the generated columns and DEFAULT
/// expressions against the column list now (CREATE TABLE ... SELECT does
/// it once the result's columns are added).
pub(crate) fn table_spec_with(
    ct: &CreateTable,
    current_db: Option<&str>,
    expressions: bool,
    default: Collation,
) -> SqlResult<TableSpec> {
    if ct.query.is_some() {
        // create_select.rs reads the definition with the query taken off.
        return Err(EngineError::internal(
            "CREATE TABLE ... SELECT reached table_spec",
        ));
    }
    if ct.like.is_some() {
        return Err(EngineError::not_supported("CREATE TABLE ... LIKE"));
    }
    // PostgreSQL's INHERITS, which sqlparser 0.64 reads in every dialect.
    if ct.inherits.is_some() {
        return Err(crate::parse::syntax_error("INHERITS"));
    }
    let auto_increment = check_table_options(&ct.table_options)?;
    let collation = table_collation(&ct.table_options, default)?;
    let (db, name) = crate::exec::split_name(&ct.name)?;
    let mut columns = Vec::new();
    let mut primary: Vec<usize> = Vec::new();
    let mut indexes: Vec<IndexSpec> = Vec::new();
    // Column-level CHECKs: (clause, column name), named after the columns.
    let mut column_checks: Vec<(&ast::CheckConstraint, String)> = Vec::new();
    for c in &ct.columns {
        let pc = column_def(c, collation)?;
        if columns
            .iter()
            .any(|x: &ColumnDef| x.name.eq_ignore_ascii_case(&pc.def.name))
        {
            return Err(EngineError::new(
                1060,
                "42S21",
                format!("Duplicate column name '{}'", pc.def.name),
            ));
        }
        if pc.primary {
            primary = vec![columns.len()];
        }
        if pc.unique {
            indexes.push(IndexSpec::whole(
                pc.def.name.clone(),
                true,
                vec![columns.len()],
            ));
        }
        for cc in pc.checks {
            column_checks.push((cc, pc.def.name.clone()));
        }
        columns.push(pc.def);
    }
    // Key parts: column positions and prefix lengths.
    let pos = |cols: &[ast::IndexColumn]| -> SqlResult<(Vec<usize>, Vec<Option<u32>>)> {
        cols.iter()
            .map(|ic| {
                let (name, len) = key_part(ic)?;
                let at = columns
                    .iter()
                    .position(|c| c.name.eq_ignore_ascii_case(name))
                    .ok_or_else(|| {
                        EngineError::new(
                            1072,
                            "42000",
                            format!("Key column '{name}' doesn't exist in table"),
                        )
                    })?;
                Ok((at, len))
            })
            .collect::<SqlResult<Vec<_>>>()
            .map(|v| v.into_iter().unzip())
    };
    let mut table_checks: Vec<&ast::CheckConstraint> = Vec::new();
    let mut fk_clauses: Vec<&ast::ForeignKeyConstraint> = Vec::new();
    for c in &ct.constraints {
        match c {
            TableConstraint::PrimaryKey(pk) => {
                if !primary.is_empty() {
                    return Err(EngineError::new(
                        1068,
                        "42000",
                        "Multiple primary key defined",
                    ));
                }
                let (p, prefix) = pos(&pk.columns)?;
                // A prefix as long as the column is the whole column; a
                // shorter one is refused (1235), TEXT/BLOB without one 1170.
                quire_engine::check_key_parts(&columns, &p, &prefix, true)?;
                primary = p;
            }
            TableConstraint::Unique(u) => {
                let (p, prefix) = pos(&u.columns)?;
                let n = u
                    .index_name
                    .as_ref()
                    .or(u.name.as_ref())
                    .map(|i| i.value.clone())
                    .unwrap_or_else(|| columns[p[0]].name.clone());
                indexes.push(IndexSpec {
                    name: n,
                    unique: true,
                    columns: p,
                    prefix,
                });
            }
            TableConstraint::Index(ix) => {
                let (p, prefix) = pos(&ix.columns)?;
                let n = ix
                    .name
                    .as_ref()
                    .map(|i| i.value.clone())
                    .unwrap_or_else(|| columns[p[0]].name.clone());
                indexes.push(IndexSpec {
                    name: n,
                    unique: false,
                    columns: p,
                    prefix,
                });
            }
            TableConstraint::ForeignKey(fk) => fk_clauses.push(fk),
            TableConstraint::Check(cc) => table_checks.push(cc),
            TableConstraint::FulltextOrSpatial(_) => {
                return Err(EngineError::not_supported("FULLTEXT/SPATIAL indexes"))
            }
            // PostgreSQL's EXCLUDE and `... USING INDEX`: not MySQL syntax.
            other => return Err(crate::parse::syntax_error(&other.to_string())),
        }
    }
    for &p in &primary {
        if columns[p].generated.as_ref().is_some_and(|g| !g.stored) {
            return Err(crate::generated::unsupported(
                "Defining a virtual generated column as primary key",
            ));
        }
        columns[p].nullable = false;
    }
    if expressions {
        crate::generated::validate_table(&mut columns)?;
    }
    let ref_db = db.as_deref().or(current_db).unwrap_or_default();
    let mut foreign_keys = Vec::new();
    for fk in fk_clauses {
        let taken: Vec<String> = foreign_keys
            .iter()
            .map(|f: &quire_engine::ForeignKeyDef| f.name.clone())
            .collect();
        let fname = crate::constraints::name_or_next(fk.name.as_ref(), &name, "ibfk", &taken);
        let def = crate::constraints::fk_def(fk, fname, &columns, ref_db)?;
        let served = primary.starts_with(&def.columns)
            || indexes
                .iter()
                .any(|i| i.ordered_columns().starts_with(&def.columns));
        if !served {
            let iname = crate::constraints::fk_index_name(fk, &columns, &def.columns);
            indexes.push(IndexSpec::whole(iname, false, def.columns.clone()));
        }
        foreign_keys.push(def);
    }
    let mut checks: Vec<quire_engine::CheckDef> = Vec::new();
    let clauses = column_checks
        .into_iter()
        .map(|(cc, col)| (cc, Some(col)))
        .chain(table_checks.into_iter().map(|cc| (cc, None)));
    for (cc, only) in clauses {
        let taken: Vec<String> = checks.iter().map(|c| c.name.clone()).collect();
        let cname = crate::constraints::name_or_next(cc.name.as_ref(), &name, "chk", &taken);
        if taken.iter().any(|t| t.eq_ignore_ascii_case(&cname)) {
            return Err(quire_engine::constraint::duplicate_check_name(&cname));
        }
        checks.push(crate::constraints::check_def(
            cname,
            &cc.expr,
            cc.enforced,
            &columns,
            only.as_deref(),
        )?);
    }
    // Auto-generated index names must be unique: name_2, name_3, ...
    let mut seen: Vec<String> = Vec::new();
    for IndexSpec { name: n, .. } in indexes.iter_mut() {
        let base = n.clone();
        let mut k = 2;
        while seen.iter().any(|s| s.eq_ignore_ascii_case(n)) {
            *n = format!("{base}_{k}");
            k += 1;
        }
        seen.push(n.clone());
    }
    if let Some(ai) = columns.iter().position(|c| c.auto_increment) {
        let keyed =
            primary.first() == Some(&ai) || indexes.iter().any(|i| i.columns.first() == Some(&ai));
        if !keyed {
            return Err(EngineError::new(
                1075,
                "42000",
                "Incorrect table definition; there can be only one auto column and it must be defined as a key",
            ));
        }
    }
    check_row_definition(&columns)?;
    Ok(TableSpec {
        name,
        db,
        columns,
        primary,
        indexes,
        if_not_exists: ct.if_not_exists,
        auto_increment,
        checks,
        foreign_keys,
        collation,
        temporary: ct.temporary,
    })
}
