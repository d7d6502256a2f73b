//! # Expressions: compile once per execution, evaluate per row
//!
//! `sqlparser`'s expression tree is compiled into [`E`], a small tree whose
//! column references are already positions in the row being evaluated
//! (the concatenation of every FROM source's columns, see `exec.rs`), whose
//! placeholders are already the bound parameter values, and whose
//! session-dependent parts (`@@variables`, `DATABASE()`, `NOW()`,
//! `LAST_INSERT_ID()`) are already constants. Unknown columns (1054),
//! ambiguous ones (1052) and unsupported syntax (1235) are found here,
//! before any row is read.
//!
//! Aggregate calls (COUNT, SUM, AVG, MIN, MAX, GROUP_CONCAT) are collected
//! into a list of [`AggSpec`]s while compiling a select list, HAVING or
//! ORDER BY; the compiled expression reads the aggregate's result by index
//! ([`E::Agg`]).
//!
//! Evaluation follows MySQL's rules where they matter for results:
//! three-valued logic with NULL, integer arithmetic in 64 bits with
//! overflow error 1690, exact DECIMAL arithmetic (division adds
//! `div_precision_increment` = 4 digits of scale), doubles when a float or a
//! string is involved, comparisons through the engine's `compare` (the
//! conversion rules of MySQL), LIKE with `%`, `_` and backslash escapes
//! over bytes (binary collation). [`infer`] gives the type MySQL reports
//! for a result column.

use std::cmp::Ordering;

use quire_engine::types::{compare, Collation, DateTime, Decimal};
use quire_engine::{ColumnDef, ColumnType, EngineError, Value};
use sqlparser::ast::{
    self, BinaryOperator, CastKind, DataType, DuplicateTreatment, Expr, FunctionArg,
    FunctionArgExpr, FunctionArguments, UnaryOperator,
};

use crate::collate::{aggregate, Coercibility, Derivation};
use crate::dialect::RunClass;
use crate::func::date::Unit as DateUnit;
use crate::func::math::BitOp;
use crate::func::Func;
use crate::parse::Scope;
use crate::SqlResult;

/// One column of the row an expression is evaluated on.
#[derive(Debug, Clone)]
pub struct ColInfo {
    /// Table alias (or table name) the column is reached through.
    pub table: String,
    pub org_table: String,
    pub db: String,
    pub name: String,
    pub org_name: String,
    pub ty: ColumnType,
    pub nullable: bool,
    /// A common column of a USING / NATURAL join replaced by its
    /// coalesced twin: it answers only a qualified name (`b.id`), and
    /// `SELECT *` leaves it out.
    pub hidden: bool,
}

/// Session-derived values an expression may read.
pub trait Env {
    fn sysvar(&self, name: &str, scope: Scope) -> SqlResult<Value>;
    /// User variables and LAST_INSERT_ID (read and written per row).
    fn live(&self) -> crate::uservars::Live;
    /// `ROW_COUNT()`: the previous statement's affected rows (-1 after a
    /// result set or an error).
    fn row_count(&self) -> i64 {
        -1
    }
    /// `FOUND_ROWS()` (see `session.rs`).
    fn found_rows(&self) -> u64 {
        0
    }
    fn database(&self) -> Option<String>;
    /// `USER()`: user@client host.
    fn user(&self) -> String;
    /// `CURRENT_USER()`: user@host pattern of the authenticated account.
    fn current_user(&self) -> String;
    fn connection_id(&self) -> u64;
    /// The engine's GTID state (WAIT_FOR_EXECUTED_GTID_SET); None without
    /// a binary log.
    fn gtid_state(&self) -> Option<std::sync::Arc<quire_engine::binlog::gtid::GtidState>> {
        None
    }
    /// `CURRENT_ROLE()`: `NONE` or the active roles (`role_graph.rs`).
    fn current_role(&self) -> String {
        "NONE".to_string()
    }
    /// `collation_connection`: the collation of string literals.
    fn connection_collation(&self) -> Collation {
        Collation::Utf8mb4_0900AiCi
    }
    /// The definition of column `col` of base table `db.table` (what
    /// `DEFAULT(col)` reads); None when unknown.
    fn column_def(&self, _db: &str, _table: &str, _col: &str) -> Option<ColumnDef> {
        None
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AggKind {
    CountStar,
    Count,
    Sum,
    Avg,
    Min,
    Max,
    GroupConcat,
    BitAnd,
    BitOr,
}

#[derive(Debug, Clone)]
pub struct AggSpec {
    pub kind: AggKind,
    pub arg: Option<E>,
    pub distinct: bool,
    /// The collation a string argument compares in (MIN, MAX, DISTINCT);
    /// None: bytes.
    pub coll: Option<Collation>,
    /// The argument holds JSON values: MIN and MAX compare them in
    /// MySQL's order of JSON values (`func::json::compare`).
    pub json: bool,
}

/// A window function (`f(...) OVER (PARTITION BY ... ORDER BY ...)`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WinFunc {
    RowNumber,
    Rank,
    DenseRank,
    PercentRank,
    CumeDist,
    Ntile,
    Lag,
    Lead,
    FirstValue,
    LastValue,
    NthValue,
    Agg(AggKind),
}

/// One window function call of a select list, collected while compiling
/// it (like aggregates); `E::Win` reads its value per row.
#[derive(Debug, Clone)]
pub struct WinSpec {
    pub func: WinFunc,
    pub args: Vec<E>,
    pub partition: Vec<E>,
    /// Order keys (expression, descending).
    pub order: Vec<(E, bool)>,
    pub distinct: bool,
    /// `ROWS | RANGE BETWEEN ...` (`win_frame.rs`); None = MySQL's default
    /// frame. Only the functions that use a frame keep it.
    pub frame: Option<crate::win_frame::Frame>,
    /// As [`AggSpec::coll`] and [`AggSpec::json`], for the argument of an
    /// aggregate used as a window function (MIN/MAX compare by them).
    pub coll: Option<Collation>,
    pub json: bool,
}

/// Columns of the enclosing query blocks that a subquery may read
/// (correlated references), outermost block first. At run time the
/// subquery sees their values as `Row::outer`, in the same order.
#[derive(Debug, Clone, Default)]
pub struct OuterScope {
    pub cols: Vec<ColInfo>,
    /// Where each block's columns start in `cols`.
    pub starts: Vec<usize>,
}

impl OuterScope {
    /// The scope a subquery of a block with columns `cols` sees.
    pub fn child(&self, cols: &[ColInfo]) -> OuterScope {
        let mut o = self.clone();
        o.starts.push(o.cols.len());
        o.cols.extend_from_slice(cols);
        o
    }
}

/// How a subquery's rows become one value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SubKind {
    /// `(SELECT x ...)`: NULL for no row, 1242 for more than one.
    Scalar,
    /// `EXISTS (...)`: 1 or 0, never NULL.
    Exists,
    /// `x IN (SELECT ...)`: TRUE, FALSE or NULL by SQL's three-valued rules.
    /// Strings compare under the collation (None: bytes).
    In(Option<Collation>),
    /// `x op ANY (SELECT ...)` / `x op SOME (...)`.
    Any(Cmp, Option<Collation>),
    /// `x op ALL (SELECT ...)`.
    All(Cmp, Option<Collation>),
}

/// What binding a subquery produced (see `query::bind`).
#[derive(Debug, Clone)]
pub struct BoundSub {
    pub id: usize,
    /// Types of its result columns.
    pub columns: Vec<ColumnType>,
    /// Outer columns it reads (positions in the `OuterScope` it was bound
    /// with); empty = uncorrelated, evaluated once per statement.
    pub refs: Vec<usize>,
}

/// Binds subqueries met while compiling an expression. The query layer
/// implements it; this module only knows the interface, so imports go one
/// way (query -> expr).
pub trait SubqueryBinder {
    /// `kind`: how the expression around it uses its rows.
    fn bind_subquery(
        &mut self,
        q: &ast::Query,
        outer: &OuterScope,
        kind: SubKind,
    ) -> SqlResult<BoundSub>;
}

/// Evaluates a bound subquery for the current outer row.
pub trait SubqueryRunner {
    fn eval(
        &self,
        id: usize,
        kind: SubKind,
        lhs: Option<&Value>,
        outer: &[Value],
    ) -> SqlResult<Value>;
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arith {
    Add,
    Sub,
    Mul,
    Div,
    IntDiv,
    Mod,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cmp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    NullSafeEq,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum F {
    Concat,
    ConcatWs,
    Length,
    CharLength,
    Upper,
    Lower,
    Coalesce,
    IfNull,
    If,
    NullIf,
    Abs,
    Round,
    Truncate,
    Floor,
    Ceil,
    Mod,
    Substring,
    Trim,
    LTrim,
    RTrim,
    Replace,
    Left,
    Right,
    Greatest,
    Least,
    Hex,
    Reverse,
    Locate,
    Sign,
    Pow,
    Sqrt,
    Rand,
    Crc32,
    Sleep,
    /// A comparison where the left (`.1`) or right (`.2`) operand holds
    /// a JSON value: MySQL's order of JSON values (`func::json::compare`).
    JsonCmp(Cmp, bool, bool),
    /// User-level locks (`userlock.rs`); the connection id is the last
    /// argument, filled in when the call is compiled.
    GetLock,
    ReleaseLock,
    ReleaseAllLocks,
    IsFreeLock,
    IsUsedLock,
    /// GTID sets (`gtid_funcs.rs`): WAIT_FOR_EXECUTED_GTID_SET has the
    /// engine's GTID state handle as its last argument, filled in when
    /// the call is compiled.
    WaitGtid,
    GtidSubset,
    GtidSubtract,
    /// A function of the library in `func/` (dates, strings, math, JSON,
    /// hashes, regular expressions, bit operators, INTERVAL arithmetic).
    Lib(crate::func::Func),
}

/// An expression part that reads or writes session state while rows are
/// evaluated (`uservars.rs`).
#[derive(Debug, Clone)]
pub enum LiveOp {
    /// `@name`.
    Get(String),
    /// `@name := value`.
    Set(String, E),
    /// `LAST_INSERT_ID()`, or `LAST_INSERT_ID(expr)` which sets it.
    LastInsertId(Option<E>),
}

/// A compiled expression.
#[derive(Debug, Clone)]
pub enum E {
    Lit(Value),
    Col(usize),
    Agg(usize),
    Neg(Box<E>),
    Not(Box<E>),
    Arith(Arith, Box<E>, Box<E>),
    /// A run of one precedence class (`a + b - c ...`, `a * b / c ...`)
    /// of three or more terms, evaluated left to right: flat, so a
    /// 100,000-term sum is not 100,000 levels deep (see `stack.rs`).
    Chain(Box<E>, Vec<(Arith, E)>),
    Cmp(Cmp, Box<E>, Box<E>),
    And(Box<E>, Box<E>),
    Or(Box<E>, Box<E>),
    Xor(Box<E>, Box<E>),
    IsNull(Box<E>, bool),
    IsBool(Box<E>, bool, bool),
    Between(Box<E>, Box<E>, Box<E>, bool),
    InList(Box<E>, Vec<E>, bool),
    Like(Box<E>, Box<E>, bool, u8),
    Func(F, Vec<E>),
    Case(Option<Box<E>>, Vec<(E, E)>, Option<Box<E>>),
    Cast(Box<E>, ColumnType),
    /// An ENUM or SET value (of this type) in numeric context: its
    /// 1-based ordinal or member mask (MySQL's `e + 0`, `ORDER BY e`).
    EnumNum(Box<E>, ColumnType),
    /// `x COLLATE c`: x's value, in collation c (explicit coercibility).
    Collate(Box<E>, Collation),
    /// A comparison (`Cmp`, `Between`, `InList`, `Like`) of strings under
    /// a collation other than byte order, as [`Compiler::derive`] picked.
    Collated(Collation, Box<E>),
    /// A string's weight string under the collation (ORDER BY and GROUP BY
    /// keys: byte order of weights is the collation's order); other
    /// values pass unchanged.
    Weigh(Collation, Box<E>),
    /// A column of an enclosing query block (`Row::outer`), with its
    /// type (for the result type of the expression reading it).
    Outer(usize, ColumnType),
    /// User variables and LAST_INSERT_ID, evaluated per row.
    Live(crate::uservars::Live, Box<LiveOp>),
    /// Window function `i` of the select list (`Row::wins`), with its type.
    Win(usize, ColumnType),
    /// A subquery (`SubqueryRunner`). `outer_len` is how many outer
    /// values the enclosing block itself had when it was compiled: refs at
    /// or beyond it are that block's own columns (`refs[i] - outer_len`).
    Subquery {
        id: usize,
        kind: SubKind,
        lhs: Option<Box<E>>,
        ty: ColumnType,
        refs: Vec<usize>,
        outer_len: usize,
    },
}

/// The collation values of a column type compare in: its own for
/// character strings, `binary` for byte strings, utf8mb4_bin for JSON
/// text; None for numbers and dates.
pub(crate) fn type_collation(ty: &ColumnType) -> Option<Collation> {
    match ty {
        ColumnType::Binary { .. } | ColumnType::VarBinary { .. } | ColumnType::Blob { .. } => {
            Some(Collation::Binary)
        }
        ColumnType::Json => Some(Collation::Utf8mb4Bin),
        t => t.collation(),
    }
}

/// `node` evaluated under `coll`, unless that is plain byte order (or
/// there is no string to collate).
fn collated(coll: Option<Collation>, node: E) -> E {
    match coll {
        Some(c) if !c.is_plain_bytes() => E::Collated(c, Box::new(node)),
        _ => node,
    }
}

/// The bytes of a `b'...'` literal; `None` if a character is not 0 or 1.
fn bit_literal(bits: &str) -> Option<Value> {
    if !bits.bytes().all(|c| c == b'0' || c == b'1') {
        return None;
    }
    let mut out = vec![0u8; bits.len().div_ceil(8)];
    let n = out.len();
    for (i, c) in bits.bytes().rev().enumerate() {
        if c == b'1' {
            out[n - 1 - i / 8] |= 1 << (i % 8);
        }
    }
    Some(Value::Bytes(out))
}

/// [`E::EnumNum`]'s value: the ordinal of an ENUM member, the mask of a
/// SET text (NULL stays NULL; a text that is no member, which a stored
/// value never is, counts 0).
pub fn enum_number(v: Value, ty: &ColumnType) -> Value {
    use quire_engine::types::enumset::{enum_ordinal, set_mask};
    let Value::Bytes(b) = &v else {
        return v;
    };
    let text = String::from_utf8_lossy(b);
    match ty {
        ColumnType::Enum { members } => {
            Value::UInt(enum_ordinal(members, &text).map_or(0, u64::from))
        }
        ColumnType::Set { members } => Value::UInt(set_mask(members, &text).unwrap_or(0)),
        _ => v,
    }
}

/// An ENUM/SET-typed column in numeric context becomes its number;
/// anything else is left alone.
pub fn enum_as_number(e: E, cols: &[ColInfo]) -> E {
    let ty = match &e {
        E::Col(i) => cols.get(*i).map(|c| &c.ty),
        E::Outer(_, ty) => Some(ty),
        _ => None,
    };
    match ty {
        Some(ty @ (ColumnType::Enum { .. } | ColumnType::Set { .. })) => {
            let ty = ty.clone();
            E::EnumNum(Box::new(e), ty)
        }
        _ => e,
    }
}

pub fn err_unknown_column(name: &str, clause: &str) -> EngineError {
    EngineError::new(
        1054,
        "42S22",
        format!("Unknown column '{name}' in '{clause}'"),
    )
}

fn err_range(what: &str) -> EngineError {
    EngineError::new(
        1690,
        "22003",
        format!("BIGINT value is out of range in '{what}'"),
    )
}

/// Compiles sqlparser expressions against a row layout.
impl Compiler<'_> {
    fn as_number(&self, e: E) -> E {
        enum_as_number(e, self.cols)
    }

    /// COLLATION(x), CHARSET(x), COERCIBILITY(x): what [`Self::derive`]
    /// says of x (numbers and dates are `binary`, coercibility 5; NULL 6).
    fn collation_info(&self, name: &str, x: &E) -> Value {
        let d = self.derive(x);
        match name {
            "COERCIBILITY" => Value::Int(match (d, x) {
                (Some(d), _) => d.level as i64,
                (None, E::Lit(Value::Null)) => 6,
                (None, _) => 5,
            }),
            "CHARSET" => Value::text(d.map_or("binary", |d| d.coll.charset().name())),
            _ => Value::text(d.map_or("binary", |d| d.coll.name())),
        }
    }

    /// [`Self::collation_of`] when every one of `es` is a string (a
    /// mixed list compares by the engine's conversions instead).
    fn all_strings_collation<'e>(
        &self,
        es: impl Iterator<Item = &'e E> + Clone,
        op: &str,
    ) -> SqlResult<Option<Collation>> {
        if es.clone().all(|e| self.derive(e).is_some()) {
            self.collation_of(es, op)
        } else {
            Ok(None)
        }
    }

    /// A comparison node, under the collation its operands agree on.
    fn cmp_node(&self, op: Cmp, l: Box<E>, r: Box<E>, name: &str) -> SqlResult<E> {
        let (lj, rj) = (
            holds_json_value(&l, self.cols),
            holds_json_value(&r, self.cols),
        );
        if lj || rj {
            // A condition on the other side compares as JSON true/false.
            let as_json = |e: E, json: bool| match json || !is_bool_expr(&e) {
                true => (e, json),
                false => (lib(Func::JsonBool, vec![e]), true),
            };
            let ((l, lj), (r, rj)) = (as_json(*l, lj), as_json(*r, rj));
            return Ok(E::Func(F::JsonCmp(op, lj, rj), vec![l, r]));
        }
        let coll = self.collation_of([&*l, &*r], name)?;
        Ok(collated(coll, E::Cmp(op, l, r)))
    }

    /// The collation strings among `es` are compared in (1267 when they
    /// cannot agree); None when fewer than one is a string.
    pub(crate) fn collation_of<'e>(
        &self,
        es: impl IntoIterator<Item = &'e E>,
        op: &str,
    ) -> SqlResult<Option<Collation>> {
        let conn = self.env.connection_collation();
        let d = derive_all(&mut es.into_iter(), self.cols, &[], conn, op)?;
        Ok(d.map(|d| d.coll))
    }

    /// An expression's collation and coercibility if it is (or may be) a
    /// string; None for numbers and dates ([`derive`]).
    pub(crate) fn derive(&self, e: &E) -> Option<Derivation> {
        derive(e, self.cols, &[], self.env.connection_collation())
    }

    /// An ENUM/SET column compared with (or combined with) a number is
    /// its ordinal or mask, as MySQL compares `e = 2`.
    fn enum_against_number(&self, l: E, r: E) -> (E, E) {
        // Cheap test first: most operands are no ENUM/SET column, and
        // inferring an operand's type walks it.
        let is_enum = |e: &E| match e {
            E::Col(i) => self.cols.get(*i).is_some_and(|c| c.ty.is_enum_or_set()),
            E::Outer(_, ty) => ty.is_enum_or_set(),
            _ => false,
        };
        if !is_enum(&l) && !is_enum(&r) {
            return (l, r);
        }
        let numeric = |e: &E| {
            let t = infer(e, self.cols, &[]);
            t.is_numeric() && !matches!(e, E::Lit(Value::Null))
        };
        let l = if numeric(&r) { self.as_number(l) } else { l };
        let r = if numeric(&l) { self.as_number(r) } else { r };
        (l, r)
    }
}

pub struct Compiler<'a> {
    pub cols: &'a [ColInfo],
    pub params: &'a [Value],
    pub env: &'a dyn Env,
    /// Where aggregates go; None = aggregates not allowed here.
    pub aggs: Option<&'a mut Vec<AggSpec>>,
    /// For error messages: 'field list', 'where clause', ...
    pub clause: &'static str,
    pub now: DateTime,
    /// `VALUES(col)` of INSERT ... ON DUPLICATE KEY UPDATE: where the new
    /// row's columns start in the evaluated row.
    pub values_offset: Option<usize>,
    /// Select-list aliases visible to HAVING / ORDER BY expressions.
    pub aliases: Option<(&'a [String], &'a [E])>,
    /// Enclosing blocks' columns (correlated references compile to
    /// `E::Outer`); empty outside subqueries.
    pub outer: &'a OuterScope,
    /// Binds subqueries; None = subqueries are not allowed here.
    pub binder: Option<&'a mut dyn SubqueryBinder>,
    /// Outer positions this compiler's expressions read (for
    /// `BoundSub::refs`).
    pub outer_refs: Vec<usize>,
    /// Where window functions go; None = not allowed here (3593).
    pub windows: Option<&'a mut Vec<WinSpec>>,
}

/// The empty outer scope of a top-level statement.
pub static NO_OUTER: std::sync::LazyLock<OuterScope> =
    std::sync::LazyLock::new(OuterScope::default);

fn ident_eq(a: &str, b: &str) -> bool {
    a.eq_ignore_ascii_case(b)
}

pub fn now_utc() -> DateTime {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    utc_at(secs, 0)
}

/// The current time with `fsp` fractional digits (CURRENT_TIMESTAMP(fsp)
/// as a column default or ON UPDATE value).
pub fn now_utc_fsp(fsp: u8) -> DateTime {
    let d = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let unit = 10u32.pow(6 - u32::from(fsp.min(6)));
    utc_at(d.as_secs() as i64, d.subsec_micros() / unit * unit)
}

/// The current time in the session's zone with `fsp` fractional digits
/// (CURRENT_TIMESTAMP as a column default or ON UPDATE value: written to
/// a TIMESTAMP column, the transaction converts it back to UTC).
pub fn now_local_fsp(fsp: u8) -> DateTime {
    let utc = now_utc_fsp(fsp);
    let local = crate::tz::current().local_of(utc).unwrap_or(utc);
    crate::tz::remember_reading(local, utc);
    local
}

/// `dt` with its fraction cut to `fsp` digits.
pub fn truncate_fsp(mut dt: DateTime, fsp: u8) -> DateTime {
    let unit = 10u32.pow(6 - u32::from(fsp.min(6)));
    dt.micro = dt.micro / unit * unit;
    dt
}

fn utc_at(secs: i64, micro: u32) -> DateTime {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // civil_from_days (H. Hinnant)
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = if m <= 2 { y + 1 } else { y };
    DateTime::new(
        y as u32,
        m as u32,
        d as u32,
        (rem / 3600) as u32,
        ((rem % 3600) / 60) as u32,
        (rem % 60) as u32,
        micro,
    )
    .or_else(|| DateTime::new(1970, 1, 1, 0, 0, 0, 0))
    .expect("the epoch is a valid date")
}

pub fn number_literal(s: &str) -> SqlResult<Value> {
    if s.contains(['e', 'E']) {
        return s
            .parse::<f64>()
            .map(Value::Double)
            .map_err(|_| crate::parse::syntax_error(s));
    }
    if !s.contains('.') {
        if let Ok(i) = s.parse::<i64>() {
            return Ok(Value::Int(i));
        }
        if let Ok(u) = s.parse::<u64>() {
            return Ok(Value::UInt(u));
        }
    }
    s.parse::<Decimal>()
        .map(Value::Decimal)
        .map_err(|_| crate::parse::syntax_error(s))
}

pub fn literal(v: &ast::Value, params: &[Value]) -> SqlResult<Value> {
    use ast::Value as V;
    Ok(match v {
        V::Number(s, _) => number_literal(s)?,
        V::SingleQuotedString(s)
        | V::DoubleQuotedString(s)
        | V::NationalStringLiteral(s)
        | V::EscapedStringLiteral(s)
        | V::SingleQuotedRawStringLiteral(s)
        | V::DoubleQuotedRawStringLiteral(s)
        | V::TripleSingleQuotedString(s)
        | V::TripleDoubleQuotedString(s) => Value::text(s),
        // `b'0101'`: MySQL's bit-value literal, a binary string of the
        // bits right-aligned in whole bytes (`b'101'` is 0x05).
        V::SingleQuotedByteStringLiteral(s) | V::DoubleQuotedByteStringLiteral(s) => {
            bit_literal(s).ok_or_else(|| crate::parse::syntax_error(&format!("b'{s}'")))?
        }
        V::HexStringLiteral(h) => {
            let h = if h.len() % 2 == 1 {
                format!("0{h}")
            } else {
                h.clone()
            };
            let mut out = Vec::with_capacity(h.len() / 2);
            for i in (0..h.len()).step_by(2) {
                let b = u8::from_str_radix(h.get(i..i + 2).unwrap_or("zz"), 16)
                    .map_err(|_| crate::parse::syntax_error(&h))?;
                out.push(b);
            }
            Value::Bytes(out)
        }
        V::Boolean(b) => Value::Int(i64::from(*b)),
        V::Null => Value::Null,
        V::Placeholder(p) => {
            let n: usize = p
                .trim_start_matches('?')
                .parse()
                .map_err(|_| EngineError::not_supported(format!("placeholder {p}")))?;
            params.get(n.wrapping_sub(1)).cloned().ok_or_else(|| {
                EngineError::new(1210, "HY000", "Incorrect arguments to mysqld_stmt_execute")
            })?
        }
        other => return Err(EngineError::not_supported(format!("literal {other}"))),
    })
}

/// The text of a `LIKE ... ESCAPE x` clause. sqlparser 0.64 parses `x` as
/// an expression; 0.55 read a literal string (or a bare word, taken as its
/// text), and anything else was a syntax error. That is kept: quire has no
/// per-execution escape character.
fn escape_text(e: &Expr) -> SqlResult<String> {
    use ast::Value as V;
    match e {
        Expr::Value(v) => match &v.value {
            V::SingleQuotedString(s) | V::DoubleQuotedString(s) | V::UnicodeStringLiteral(s) => {
                Ok(s.clone())
            }
            other => Err(crate::parse::syntax_error(&other.to_string())),
        },
        Expr::Identifier(i) if i.quote_style.is_none() => Ok(i.value.clone()),
        other => Err(crate::parse::syntax_error(&other.to_string())),
    }
}

fn v_first(vals: &[Value]) -> Value {
    vals.first().cloned().unwrap_or(Value::Null)
}

fn lib(f: Func, args: Vec<E>) -> E {
    E::Func(F::Lib(f), args)
}

/// An INTERVAL / EXTRACT / TIMESTAMPDIFF unit by name.
fn interval_unit(s: &str) -> SqlResult<DateUnit> {
    DateUnit::parse(s).ok_or_else(|| crate::parse::syntax_error(s))
}

/// Whether `e` yields a JSON value (nested as JSON, not as a string, by
/// JSON_OBJECT, JSON_ARRAY, JSON_SET ...).
fn is_json_expr(e: &E, cols: &[ColInfo]) -> bool {
    match e {
        E::Func(F::Lib(f), _) => f.returns_json(),
        E::Func(F::IfNull | F::Coalesce | F::NullIf, a) => {
            a.first().is_some_and(|x| is_json_expr(x, cols))
        }
        E::Col(i) => cols.get(*i).is_some_and(|c| c.ty == ColumnType::Json),
        E::Outer(_, ty) => *ty == ColumnType::Json,
        _ => false,
    }
}

/// `e0 OR e1 OR ...` as a balanced tree (a long IN list stays shallow).
fn or_tree(mut es: Vec<E>) -> E {
    match es.len() {
        0 => E::Lit(Value::Int(0)),
        1 => es.pop().unwrap_or(E::Lit(Value::Int(0))),
        n => {
            let right = es.split_off(n / 2);
            E::Or(Box::new(or_tree(es)), Box::new(or_tree(right)))
        }
    }
}

/// Whether `e` is a condition (a comparison, a logical operator, IS,
/// BETWEEN, IN, LIKE): MySQL turns its value into JSON true/false where
/// JSON is built or compared.
fn is_bool_expr(e: &E) -> bool {
    matches!(
        e,
        E::Cmp(..)
            | E::Not(_)
            | E::And(..)
            | E::Or(..)
            | E::Xor(..)
            | E::IsNull(..)
            | E::IsBool(..)
            | E::Between(..)
            | E::InList(..)
            | E::Like(..)
            | E::Func(F::JsonCmp(..), _)
    ) || matches!(e, E::Collated(_, x) if matches!(
        **x,
        E::Cmp(..) | E::Between(..) | E::InList(..) | E::Like(..)
    ))
}

/// Whether `e`'s value is always a JSON value as quire passes one: a
/// JSON column's (printed text, or its stored binary form when the scan
/// gives it so, query/optimize.rs) or a JSON function's result (printed
/// text). Unlike [`is_json_expr`], IFNULL and the like do not count: one
/// of their other arguments may be any string.
pub(crate) fn holds_json_value(e: &E, cols: &[ColInfo]) -> bool {
    match e {
        E::Func(F::Lib(f), _) => f.returns_json(),
        E::Col(i) => cols.get(*i).is_some_and(|c| c.ty == ColumnType::Json),
        E::Outer(_, ty) => *ty == ColumnType::Json,
        _ => false,
    }
}

/// CAST targets evaluated by a library function rather than
/// [`cast_value`]: JSON (the text of the JSON value) and TIME (quire has
/// no TIME type; the `hh:mm:ss` text).
fn cast_special(dt: &DataType) -> Option<Func> {
    let s = dt.to_string().to_ascii_uppercase();
    match s.split(['(', ' ']).next().unwrap_or("") {
        "JSON" => Some(Func::CastJson),
        "TIME" => Some(Func::Part(crate::func::date::Part::Time)),
        _ => None,
    }
}

/// The `n` of a frame bound `n PRECEDING` / `n FOLLOWING`.
fn bound_offset(b: &ast::WindowFrameBound) -> Option<&Expr> {
    match b {
        ast::WindowFrameBound::Preceding(Some(e)) | ast::WindowFrameBound::Following(Some(e)) => {
            Some(e)
        }
        _ => None,
    }
}

fn func_name(f: &ast::Function) -> String {
    f.name
        .0
        .last()
        .and_then(|p| p.as_ident())
        .map(|i| i.value.to_ascii_uppercase())
        .unwrap_or_default()
}

impl Compiler<'_> {
    fn live(&self, op: LiveOp) -> E {
        E::Live(self.env.live(), Box::new(op))
    }

    /// `@name := value`; any other left side is a syntax error, as in
    /// MySQL.
    fn assignment(&mut self, left: &Expr, right: &Expr) -> SqlResult<E> {
        let name = match left {
            Expr::Identifier(id) if id.quote_style.is_none() => id
                .value
                .strip_prefix('@')
                .filter(|n| !n.starts_with('@') && !n.is_empty()),
            _ => None,
        };
        let Some(name) = name else {
            return Err(crate::parse::syntax_error(&format!(":= {right}")));
        };
        let value = self.compile(right)?;
        Ok(self.live(LiveOp::Set(name.to_string(), value)))
    }

    fn err_clause(&self, name: &str) -> EngineError {
        err_unknown_column(name, self.clause)
    }

    /// A column reference: `E::Col` in this block, else `E::Outer` in the
    /// nearest enclosing block that has it.
    fn column(&mut self, qual: Option<&str>, db: Option<&str>, name: &str) -> SqlResult<E> {
        let err = match self.resolve(qual, db, name) {
            Ok(i) => return Ok(E::Col(i)),
            Err(e) if e.code == 1054 => e,
            Err(e) => return Err(e),
        };
        let o = self.outer;
        for (b, &start) in o.starts.iter().enumerate().rev() {
            let end = o.starts.get(b + 1).copied().unwrap_or(o.cols.len());
            match find_col(&o.cols[start..end], qual, db, name, self.clause) {
                Ok(Some(i)) => {
                    let pos = start + i;
                    if !self.outer_refs.contains(&pos) {
                        self.outer_refs.push(pos);
                    }
                    return Ok(E::Outer(pos, o.cols[pos].ty.clone()));
                }
                Ok(None) => {}
                Err(e) => return Err(e),
            }
        }
        Err(err)
    }

    pub fn resolve(&self, qual: Option<&str>, db: Option<&str>, name: &str) -> SqlResult<usize> {
        find_col(self.cols, qual, db, name, self.clause)?.ok_or_else(|| {
            let full = match (db, qual) {
                (Some(d), Some(q)) => format!("{d}.{q}.{name}"),
                (None, Some(q)) => format!("{q}.{name}"),
                _ => name.to_string(),
            };
            self.err_clause(&full)
        })
    }

    /// `DEFAULT(col)`: the column's literal default (NULL without one,
    /// 1364 when NOT NULL without one, 0 for AUTO_INCREMENT). A DEFAULT
    /// expression is MySQL's 3773; CURRENT_TIMESTAMP defaults, generated
    /// columns and columns of derived tables are refused by name.
    fn default_of(&mut self, raw: &[FunctionArgExpr]) -> SqlResult<E> {
        let (qual, name) = match raw {
            [FunctionArgExpr::Expr(Expr::Identifier(id))] => (None, id.value.clone()),
            [FunctionArgExpr::Expr(Expr::CompoundIdentifier(parts))] if parts.len() == 2 => {
                (Some(parts[0].value.clone()), parts[1].value.clone())
            }
            _ => return Err(crate::parse::syntax_error("DEFAULT")),
        };
        let i = self.resolve(qual.as_deref(), None, &name)?;
        let ci = &self.cols[i];
        let Some(c) = self.env.column_def(&ci.db, &ci.org_table, &ci.org_name) else {
            return Err(EngineError::not_supported(
                "DEFAULT() of a column that is not a base table's",
            ));
        };
        if c.default_expr.is_some() {
            return Err(EngineError::new(
                3773,
                "HY000",
                "DEFAULT function cannot be used with default value expressions",
            ));
        }
        if c.generated.is_some() {
            return Err(EngineError::not_supported(
                "DEFAULT() of a generated column",
            ));
        }
        if c.default_now.is_some() {
            return Err(EngineError::not_supported(
                "DEFAULT() of a CURRENT_TIMESTAMP column",
            ));
        }
        let v = match &c.default {
            Some(v) => v.clone(),
            None if c.auto_increment => Value::Int(0),
            None if c.nullable => Value::Null,
            None => return Err(quire_engine::types::err_no_default(&c.name)),
        };
        // Typed as the column, as MySQL's DEFAULT() item is.
        Ok(E::Cast(Box::new(E::Lit(v)), c.ty))
    }

    /// Compiles a subquery used as a value (`kind`), with `lhs` its left
    /// operand for IN / ANY / ALL.
    fn subquery(&mut self, q: &ast::Query, kind: SubKind, lhs: Option<E>) -> SqlResult<E> {
        let scope = self.outer.child(self.cols);
        let outer_len = self.outer.cols.len();
        let Some(b) = self.binder.as_deref_mut() else {
            return Err(EngineError::not_supported("subqueries in this statement"));
        };
        let bound = b.bind_subquery(q, &scope, kind)?;
        let want_cols = match kind {
            SubKind::Exists => None,
            _ => Some(1),
        };
        if want_cols.is_some_and(|n| bound.columns.len() != n) {
            return Err(EngineError::new(
                1241,
                "21000",
                "Operand should contain 1 column(s)",
            ));
        }
        // References past this block's own outer scope are its columns;
        // the ones before are this block's own outer references.
        for &r in &bound.refs {
            if r < outer_len && !self.outer_refs.contains(&r) {
                self.outer_refs.push(r);
            }
        }
        let ty = bound
            .columns
            .first()
            .cloned()
            .unwrap_or(ColumnType::BigInt { unsigned: false });
        // IN / ANY / ALL compare the left side with the subquery's column
        // under the collation the two agree on.
        let kind = match (&lhs, kind) {
            (Some(x), SubKind::In(_) | SubKind::Any(..) | SubKind::All(..)) => {
                let col = subquery_derivation(&ty);
                let coll = match (self.derive(x), col) {
                    (Some(a), Some(b)) => Some(aggregate(a, b, "IN")?),
                    (a, b) => a.or(b),
                }
                .map(|d| d.coll)
                .filter(|c| !c.is_plain_bytes());
                match kind {
                    SubKind::In(_) => SubKind::In(coll),
                    SubKind::Any(op, _) => SubKind::Any(op, coll),
                    SubKind::All(op, _) => SubKind::All(op, coll),
                    other => other,
                }
            }
            (_, k) => k,
        };
        Ok(E::Subquery {
            id: bound.id,
            kind,
            lhs: lhs.map(Box::new),
            ty,
            refs: bound.refs,
            outer_len,
        })
    }
}

fn find_col(
    cols: &[ColInfo],
    qual: Option<&str>,
    db: Option<&str>,
    name: &str,
    clause: &str,
) -> SqlResult<Option<usize>> {
    {
        let mut found = None;
        for (i, c) in cols.iter().enumerate() {
            if !ident_eq(&c.name, name) || (c.hidden && qual.is_none()) {
                continue;
            }
            if let Some(q) = qual {
                if !ident_eq(&c.table, q) {
                    continue;
                }
            }
            if let Some(d) = db {
                if !ident_eq(&c.db, d) {
                    continue;
                }
            }
            if found.is_some() {
                return Err(EngineError::new(
                    1052,
                    "23000",
                    format!("Column '{name}' in {clause} is ambiguous"),
                ));
            }
            found = Some(i);
        }
        Ok(found)
    }
}

impl Compiler<'_> {
    pub fn compile(&mut self, e: &Expr) -> SqlResult<E> {
        crate::stack::check()?;
        Ok(match e {
            Expr::Identifier(id) => {
                let v = &id.value;
                if id.quote_style.is_none() {
                    if let Some(rest) = v.strip_prefix("@@") {
                        return Ok(E::Lit(self.env.sysvar(rest, Scope::Session)?));
                    }
                    if let Some(rest) = v.strip_prefix('@') {
                        return Ok(self.live(LiveOp::Get(rest.to_string())));
                    }
                }
                match self.column(None, None, v) {
                    Ok(e) => e,
                    Err(err) => {
                        if let Some((names, exprs)) = self.aliases {
                            if let Some(k) = names.iter().position(|a| a.eq_ignore_ascii_case(v)) {
                                if let Some(e) = exprs.get(k) {
                                    return Ok(e.clone());
                                }
                            }
                        }
                        if id.quote_style.is_none() {
                            if let Some(c) = self.niladic(v) {
                                return Ok(c);
                            }
                        }
                        return Err(err);
                    }
                }
            }
            Expr::CompoundIdentifier(parts) => {
                let names: Vec<&str> = parts.iter().map(|p| p.value.as_str()).collect();
                match names.as_slice() {
                    [q, n] if q.starts_with("@@") => {
                        let scope = match q.to_ascii_lowercase().as_str() {
                            "@@global" | "@@persist" => Scope::Global,
                            _ => Scope::Session,
                        };
                        E::Lit(self.env.sysvar(n, scope)?)
                    }
                    [t, c] => self.column(Some(t), None, c)?,
                    [d, t, c] => self.column(Some(t), Some(d), c)?,
                    _ => return Err(self.err_clause(&e.to_string())),
                }
            }
            Expr::Value(v) => E::Lit(literal(&v.value, self.params)?),
            // `DATE '2024-01-01'`, and its ODBC spelling `{d '2024-01-01'}`
            // which MySQL accepts too (same meaning, only the flag differs).
            Expr::TypedString(ts) => {
                let v = literal(&ts.value.value, self.params)?;
                let ty = cast_type(&ts.data_type)?;
                E::Cast(Box::new(E::Lit(v)), ty)
            }
            // A charset introducer (`_utf8mb4'x'`): the string itself.
            // sqlparser 0.64 folds introducers into `Prefixed`, which other
            // dialects also use for non-literals; those stay unsupported.
            Expr::Prefixed { prefix, value } if prefix.value.starts_with('_') => match &**value {
                Expr::Value(v) => {
                    let lit = E::Lit(literal(&v.value, self.params)?);
                    // `_binary'x'` is a byte string (compares as bytes);
                    // a character set's introducer must name a known one.
                    match crate::collate::charset(&prefix.value[1..])? {
                        quire_engine::types::Charset::Binary => {
                            E::Cast(Box::new(lit), ColumnType::VarBinary { len: 65_535 })
                        }
                        _ => lit,
                    }
                }
                other => {
                    let s: String = other.to_string().chars().take(60).collect();
                    return Err(EngineError::not_supported(format!("expression {s}")));
                }
            },
            Expr::Nested(x) => self.compile(x)?,
            Expr::IsNull(x) => E::IsNull(Box::new(self.compile(x)?), false),
            Expr::IsNotNull(x) => E::IsNull(Box::new(self.compile(x)?), true),
            Expr::IsTrue(x) => E::IsBool(Box::new(self.compile(x)?), true, false),
            Expr::IsNotTrue(x) => E::IsBool(Box::new(self.compile(x)?), true, true),
            Expr::IsFalse(x) => E::IsBool(Box::new(self.compile(x)?), false, false),
            Expr::IsNotFalse(x) => E::IsBool(Box::new(self.compile(x)?), false, true),
            Expr::In {
                expr,
                target: ast::InTarget::List(list),
                negated,
                global: false,
            } => {
                let x = self.compile(expr)?;
                let l = list
                    .iter()
                    .map(|i| self.compile(i))
                    .collect::<SqlResult<Vec<_>>>()?;
                if std::iter::once(&x)
                    .chain(&l)
                    .any(|e| holds_json_value(e, self.cols))
                {
                    // JSON compares as JSON: `x = a OR x = b ...`, which
                    // is IN's value, NULLs included.
                    let eqs = l
                        .into_iter()
                        .map(|i| self.cmp_node(Cmp::Eq, Box::new(x.clone()), Box::new(i), "IN"))
                        .collect::<SqlResult<Vec<_>>>()?;
                    let any = or_tree(eqs);
                    return Ok(if *negated { E::Not(Box::new(any)) } else { any });
                }
                // `e IN (1, 3)`: an ENUM/SET among numbers is its number.
                let numbers = matches!(enum_as_number(x.clone(), self.cols), E::EnumNum(..))
                    && !l.is_empty()
                    && l.iter().all(|i| {
                        infer(i, self.cols, &[]).is_numeric() || matches!(i, E::Lit(Value::Null))
                    });
                let x = if numbers { self.as_number(x) } else { x };
                let coll = self.collation_of(std::iter::once(&x).chain(&l), "IN")?;
                collated(coll, E::InList(Box::new(x), l, *negated))
            }
            Expr::RLike {
                negated,
                expr,
                pattern,
                ..
            } => {
                let m = lib(
                    Func::RegexpLike,
                    vec![self.compile(expr)?, self.compile(pattern)?],
                );
                if *negated {
                    E::Not(Box::new(m))
                } else {
                    m
                }
            }
            Expr::Extract { field, expr, .. } => {
                let unit = interval_unit(&field.to_string())?;
                lib(Func::Extract(unit), vec![self.compile(expr)?])
            }
            Expr::Between {
                expr,
                negated,
                low,
                high,
            } => {
                let (x, lo, hi) = (self.compile(expr)?, self.compile(low)?, self.compile(high)?);
                if [&x, &lo, &hi]
                    .iter()
                    .any(|e| holds_json_value(e, self.cols))
                {
                    // JSON compares as JSON: `x >= lo AND x <= hi`.
                    let both = E::And(
                        Box::new(self.cmp_node(
                            Cmp::Ge,
                            Box::new(x.clone()),
                            Box::new(lo),
                            "between",
                        )?),
                        Box::new(self.cmp_node(Cmp::Le, Box::new(x), Box::new(hi), "between")?),
                    );
                    return Ok(if *negated {
                        E::Not(Box::new(both))
                    } else {
                        both
                    });
                }
                let coll = self.collation_of([&x, &lo, &hi], "between")?;
                collated(
                    coll,
                    E::Between(Box::new(x), Box::new(lo), Box::new(hi), *negated),
                )
            }
            Expr::Like {
                negated,
                expr,
                pattern,
                escape_char,
                any,
            } => {
                if *any {
                    return Err(EngineError::not_supported("LIKE ANY"));
                }
                let esc = match escape_char.as_deref().map(escape_text).transpose()? {
                    None => b'\\',
                    Some(s) if s.len() == 1 => s.as_bytes()[0],
                    Some(_) => {
                        return Err(EngineError::new(
                            1210,
                            "HY000",
                            "Incorrect arguments to ESCAPE",
                        ))
                    }
                };
                let (x, p) = (self.compile(expr)?, self.compile(pattern)?);
                let coll = self.collation_of([&x, &p], "like")?;
                collated(coll, E::Like(Box::new(x), Box::new(p), *negated, esc))
            }
            Expr::BinaryOp {
                left,
                op: op @ (BinaryOperator::Plus | BinaryOperator::Minus),
                right,
            } if matches!(**right, Expr::Interval(_))
                || (*op == BinaryOperator::Plus && matches!(**left, Expr::Interval(_))) =>
            {
                let sub = *op == BinaryOperator::Minus;
                match (&**left, &**right) {
                    (d, Expr::Interval(iv)) | (Expr::Interval(iv), d) => {
                        self.date_add(d, iv, sub)?
                    }
                    _ => return Err(EngineError::not_supported("INTERVAL expressions")),
                }
            }
            Expr::BinaryOp { op, .. }
                if matches!(
                    crate::dialect::op_class(op),
                    Some(RunClass::AddSub | RunClass::MulDiv)
                ) =>
            {
                self.arith_run(e)?
            }
            Expr::BinaryOp {
                left,
                op: BinaryOperator::Assignment,
                right,
            } => self.assignment(left, right)?,
            Expr::BinaryOp { left, op, right } => {
                let (l, r) = (self.compile(left)?, self.compile(right)?);
                let (l, r) = self.enum_against_number(l, r);
                let (l, r) = (Box::new(l), Box::new(r));
                match op {
                    BinaryOperator::Plus => E::Arith(Arith::Add, l, r),
                    BinaryOperator::Minus => E::Arith(Arith::Sub, l, r),
                    BinaryOperator::Multiply => E::Arith(Arith::Mul, l, r),
                    BinaryOperator::Divide => E::Arith(Arith::Div, l, r),
                    BinaryOperator::MyIntegerDivide => E::Arith(Arith::IntDiv, l, r),
                    BinaryOperator::Modulo => E::Arith(Arith::Mod, l, r),
                    BinaryOperator::Eq => self.cmp_node(Cmp::Eq, l, r, "=")?,
                    BinaryOperator::NotEq => self.cmp_node(Cmp::Ne, l, r, "<>")?,
                    BinaryOperator::Lt => self.cmp_node(Cmp::Lt, l, r, "<")?,
                    BinaryOperator::LtEq => self.cmp_node(Cmp::Le, l, r, "<=")?,
                    BinaryOperator::Gt => self.cmp_node(Cmp::Gt, l, r, ">")?,
                    BinaryOperator::GtEq => self.cmp_node(Cmp::Ge, l, r, ">=")?,
                    BinaryOperator::Spaceship => self.cmp_node(Cmp::NullSafeEq, l, r, "<=>")?,
                    BinaryOperator::And => E::And(l, r),
                    BinaryOperator::Or => E::Or(l, r),
                    BinaryOperator::Xor => E::Xor(l, r),
                    BinaryOperator::StringConcat => E::Or(l, r),
                    BinaryOperator::BitwiseAnd => lib(Func::Bit(BitOp::And), vec![*l, *r]),
                    BinaryOperator::BitwiseOr => lib(Func::Bit(BitOp::Or), vec![*l, *r]),
                    BinaryOperator::BitwiseXor => lib(Func::Bit(BitOp::Xor), vec![*l, *r]),
                    BinaryOperator::PGBitwiseShiftLeft => lib(Func::Bit(BitOp::Shl), vec![*l, *r]),
                    BinaryOperator::PGBitwiseShiftRight => lib(Func::Bit(BitOp::Shr), vec![*l, *r]),
                    BinaryOperator::Arrow => {
                        let st = holds_json_value(&l, self.cols);
                        lib(Func::JsonExtract(st), vec![*l, *r])
                    }
                    BinaryOperator::LongArrow => {
                        let st = holds_json_value(&l, self.cols);
                        lib(
                            Func::JsonUnquote,
                            vec![lib(Func::JsonExtract(st), vec![*l, *r])],
                        )
                    }
                    other => return Err(EngineError::not_supported(format!("operator {other}"))),
                }
            }
            Expr::UnaryOp { op, expr } => {
                let x = Box::new(self.compile(expr)?);
                match op {
                    UnaryOperator::Minus => match self.as_number(*x) {
                        E::Lit(Value::Int(i)) if i != i64::MIN => E::Lit(Value::Int(-i)),
                        E::Lit(Value::UInt(u)) if u == 1u64 << 63 => E::Lit(Value::Int(i64::MIN)),
                        other => E::Neg(Box::new(other)),
                    },
                    UnaryOperator::Plus => *x,
                    UnaryOperator::Not => E::Not(x),
                    UnaryOperator::BitwiseNot => lib(Func::BitNot, vec![*x]),
                    other => return Err(EngineError::not_supported(format!("operator {other}"))),
                }
            }
            Expr::Case {
                operand,
                conditions,
                else_result,
                ..
            } => {
                let op = match operand {
                    Some(o) => Some(Box::new(self.compile(o)?)),
                    None => None,
                };
                let mut whens = Vec::new();
                for c in conditions {
                    whens.push((self.compile(&c.condition)?, self.compile(&c.result)?));
                }
                let els = match else_result {
                    Some(x) => Some(Box::new(self.compile(x)?)),
                    None => None,
                };
                // `CASE x WHEN v ...` compares x with each v: strings under
                // the collation they agree on.
                let coll = match &op {
                    Some(o) => self.all_strings_collation(
                        std::iter::once(&**o).chain(whens.iter().map(|(w, _)| w)),
                        "case",
                    )?,
                    None => None,
                };
                collated(coll, E::Case(op, whens, els))
            }
            Expr::Cast {
                expr,
                data_type,
                kind,
                ..
            } => {
                if !matches!(
                    kind,
                    CastKind::Cast | CastKind::TryCast | CastKind::SafeCast
                ) {
                    return Err(EngineError::not_supported("this CAST form"));
                }
                let x = self.compile(expr)?;
                match cast_special(data_type) {
                    Some(f) => lib(f, vec![x]),
                    None => E::Cast(Box::new(x), cast_type(data_type)?),
                }
            }
            Expr::Convert {
                expr, data_type, ..
            } => {
                let x = self.compile(expr)?;
                match data_type {
                    Some(dt) => match cast_special(dt) {
                        Some(f) => lib(f, vec![x]),
                        None => E::Cast(Box::new(x), cast_type(dt)?),
                    },
                    None => x,
                }
            }
            Expr::Collate { expr, collation } => {
                let x = self.compile(expr)?;
                let c = crate::collate::collation(&collation.to_string())?;
                // MySQL: the collation must belong to the expression's
                // character set (a literal's is the connection's).
                let cs = self.derive(&x).map_or(c.charset(), |d| d.coll.charset());
                if cs != c.charset() {
                    return Err(crate::collate::err_charset_mismatch(c.name(), cs.name()));
                }
                E::Collate(Box::new(x), c)
            }
            Expr::Substring {
                expr,
                substring_from,
                substring_for,
                ..
            } => {
                let mut args = vec![self.compile(expr)?];
                if let Some(f) = substring_from {
                    args.push(self.compile(f)?);
                } else {
                    args.push(E::Lit(Value::Int(1)));
                }
                if let Some(f) = substring_for {
                    args.push(self.compile(f)?);
                }
                E::Func(F::Substring, args)
            }
            Expr::Trim {
                expr,
                trim_where,
                trim_what,
                trim_characters,
            } => {
                if trim_what.is_some() || trim_characters.is_some() {
                    return Err(EngineError::not_supported("TRIM with a character list"));
                }
                let f = match trim_where {
                    Some(ast::TrimWhereField::Leading) => F::LTrim,
                    Some(ast::TrimWhereField::Trailing) => F::RTrim,
                    _ => F::Trim,
                };
                E::Func(f, vec![self.compile(expr)?])
            }
            Expr::Ceil { expr, .. } => E::Func(F::Ceil, vec![self.compile(expr)?]),
            Expr::Floor { expr, .. } => E::Func(F::Floor, vec![self.compile(expr)?]),
            Expr::Position { expr, r#in } => {
                E::Func(F::Locate, vec![self.compile(expr)?, self.compile(r#in)?])
            }
            Expr::Function(f) => self.function(f)?,
            Expr::Subquery(q) => self.subquery(q, SubKind::Scalar, None)?,
            Expr::Exists { subquery, negated } => {
                let e = self.subquery(subquery, SubKind::Exists, None)?;
                if *negated {
                    E::Not(Box::new(e))
                } else {
                    e
                }
            }
            Expr::In {
                expr,
                target: ast::InTarget::Subquery(q),
                negated,
                global: false,
            } => {
                let x = self.compile(expr)?;
                let e = self.subquery(q, SubKind::In(None), Some(x))?;
                if *negated {
                    E::Not(Box::new(e))
                } else {
                    e
                }
            }
            Expr::AnyOp {
                left,
                compare_op,
                right,
                ..
            }
            | Expr::AllOp {
                left,
                compare_op,
                right,
            } if matches!(&**right, Expr::Subquery(_)) => {
                let Expr::Subquery(q) = &**right else {
                    return Err(EngineError::internal("ANY/ALL operand"));
                };
                let op = match compare_op {
                    BinaryOperator::Eq => Cmp::Eq,
                    BinaryOperator::NotEq => Cmp::Ne,
                    BinaryOperator::Lt => Cmp::Lt,
                    BinaryOperator::LtEq => Cmp::Le,
                    BinaryOperator::Gt => Cmp::Gt,
                    BinaryOperator::GtEq => Cmp::Ge,
                    other => return Err(EngineError::not_supported(format!("{other} ANY/ALL"))),
                };
                let kind = if matches!(e, Expr::AllOp { .. }) {
                    SubKind::All(op, None)
                } else {
                    SubKind::Any(op, None)
                };
                let x = self.compile(left)?;
                self.subquery(q, kind, Some(x))?
            }
            Expr::Tuple(_) => return Err(EngineError::not_supported("row constructors")),
            Expr::Interval(_) => return Err(EngineError::not_supported("INTERVAL expressions")),
            other => {
                let s: String = other.to_string().chars().take(60).collect();
                return Err(EngineError::not_supported(format!("expression {s}")));
            }
        })
    }

    /// Compiles a run of `+ -` or `* / DIV %` operators. The parser may
    /// have built a long run as a balanced tree (`dialect.rs`); its terms in
    /// text order are the leaves of the maximal subtree of operators of the
    /// one class (sqlparser never puts an unparenthesized operator of the
    /// same precedence on the right of another), and MySQL evaluates them
    /// left to right.
    fn arith_run(&mut self, e: &Expr) -> SqlResult<E> {
        enum Item<'e> {
            Node(&'e Expr),
            Op(&'e BinaryOperator),
        }
        let class = match e {
            Expr::BinaryOp { op, .. } => crate::dialect::op_class(op),
            _ => None,
        };
        let mut terms: Vec<&Expr> = Vec::new();
        let mut ops: Vec<Arith> = Vec::new();
        let mut stack = vec![Item::Node(e)];
        while let Some(it) = stack.pop() {
            match it {
                Item::Node(Expr::BinaryOp { left, op, right })
                    if class.is_some() && crate::dialect::op_class(op) == class =>
                {
                    stack.push(Item::Node(right));
                    stack.push(Item::Op(op));
                    stack.push(Item::Node(left));
                }
                Item::Node(x) => terms.push(x),
                Item::Op(op) => ops.push(match op {
                    BinaryOperator::Plus => Arith::Add,
                    BinaryOperator::Minus => Arith::Sub,
                    BinaryOperator::Multiply => Arith::Mul,
                    BinaryOperator::Divide => Arith::Div,
                    BinaryOperator::MyIntegerDivide => Arith::IntDiv,
                    BinaryOperator::Modulo => Arith::Mod,
                    other => return Err(EngineError::not_supported(format!("operator {other}"))),
                }),
            }
        }
        let mut compiled = terms
            .into_iter()
            .map(|t| self.compile(t).map(|e| self.as_number(e)))
            .collect::<SqlResult<Vec<E>>>()?
            .into_iter();
        let Some(first) = compiled.next() else {
            return Err(err_range("empty expression"));
        };
        let rest: Vec<(Arith, E)> = ops.into_iter().zip(compiled).collect();
        Ok(match <[(Arith, E); 1]>::try_from(rest) {
            Ok([(op, second)]) => E::Arith(op, Box::new(first), Box::new(second)),
            Err(rest) => E::Chain(Box::new(first), rest),
        })
    }

    /// The statement's time in the session time zone (`now` is UTC).
    fn local_now(&self) -> DateTime {
        let local = crate::tz::current().local_of(self.now).unwrap_or(self.now);
        crate::tz::remember_reading(local, self.now);
        local
    }

    fn niladic(&self, name: &str) -> Option<E> {
        let n = name.to_ascii_uppercase();
        Some(E::Lit(match n.as_str() {
            "CURRENT_TIMESTAMP" | "LOCALTIME" | "LOCALTIMESTAMP" => {
                Value::DateTime(self.local_now())
            }
            "CURRENT_DATE" => Value::Date(self.local_now().date()),
            "CURRENT_TIME" => Value::text(&self.local_now().format_fsp(0)[11..]),
            "CURRENT_USER" => Value::text(&self.env.current_user()),
            "NULL" => Value::Null,
            "TRUE" => Value::Int(1),
            "FALSE" => Value::Int(0),
            _ => return None,
        }))
    }

    fn args(&mut self, f: &ast::Function) -> SqlResult<(Vec<FunctionArgExpr>, bool)> {
        match &f.args {
            FunctionArguments::None => Ok((Vec::new(), false)),
            FunctionArguments::Subquery(_) => Err(EngineError::not_supported(
                "subqueries as function arguments",
            )),
            FunctionArguments::List(l) => {
                let distinct = matches!(l.duplicate_treatment, Some(DuplicateTreatment::Distinct));
                let mut out = Vec::new();
                for a in &l.args {
                    match a {
                        FunctionArg::Unnamed(x) => out.push(x.clone()),
                        _ => return Err(EngineError::not_supported("named function arguments")),
                    }
                }
                Ok((out, distinct))
            }
        }
    }

    /// `name(args) OVER (...)`.
    fn window(
        &mut self,
        name: &str,
        raw: &[FunctionArgExpr],
        distinct: bool,
        over: &ast::WindowType,
    ) -> SqlResult<E> {
        if self.windows.is_none() {
            return Err(EngineError::new(
                3593,
                "HY000",
                format!(
                    "You cannot use the window function '{}' in this context.'",
                    name.to_lowercase()
                ),
            ));
        }
        // Named windows were expanded before the block was compiled
        // (`query/named_windows.rs`); a name left is one no WINDOW clause
        // defines, and `window_name` is the name errors print.
        let spec = match over {
            ast::WindowType::WindowSpec(spec) => spec,
            ast::WindowType::NamedWindow(w) => {
                return Err(EngineError::new(
                    3579,
                    "HY000",
                    format!("Window name '{}' is not defined.", w.value),
                ))
            }
        };
        let window = spec
            .window_name
            .as_ref()
            .map_or_else(|| "<unnamed window>".to_string(), |w| w.value.clone());
        if distinct {
            return Err(EngineError::not_supported(format!(
                "{name}(DISTINCT ...) OVER"
            )));
        }
        let func = match name {
            "ROW_NUMBER" => WinFunc::RowNumber,
            "RANK" => WinFunc::Rank,
            "DENSE_RANK" => WinFunc::DenseRank,
            "PERCENT_RANK" => WinFunc::PercentRank,
            "CUME_DIST" => WinFunc::CumeDist,
            "NTILE" => WinFunc::Ntile,
            "LAG" => WinFunc::Lag,
            "LEAD" => WinFunc::Lead,
            "FIRST_VALUE" => WinFunc::FirstValue,
            "LAST_VALUE" => WinFunc::LastValue,
            "NTH_VALUE" => WinFunc::NthValue,
            "COUNT" => WinFunc::Agg(AggKind::Count),
            "SUM" => WinFunc::Agg(AggKind::Sum),
            "AVG" => WinFunc::Agg(AggKind::Avg),
            "MIN" => WinFunc::Agg(AggKind::Min),
            "MAX" => WinFunc::Agg(AggKind::Max),
            other => {
                return Err(EngineError::not_supported(format!(
                    "window function {other}"
                )))
            }
        };
        let mut func = func;
        let mut args = Vec::new();
        for a in raw {
            match a {
                FunctionArgExpr::Wildcard if func == WinFunc::Agg(AggKind::Count) => {
                    func = WinFunc::Agg(AggKind::CountStar)
                }
                FunctionArgExpr::Expr(x) => args.push(self.compile(x)?),
                _ => return Err(EngineError::not_supported(format!("{name}(*)"))),
            }
        }
        let (min, max) = match func {
            WinFunc::Agg(AggKind::CountStar) => (0, 0),
            WinFunc::Agg(_) | WinFunc::FirstValue | WinFunc::LastValue | WinFunc::Ntile => (1, 1),
            WinFunc::Lag | WinFunc::Lead => (1, 3),
            WinFunc::NthValue => (2, 2),
            _ => (0, 0),
        };
        if args.len() < min || args.len() > max {
            return Err(EngineError::new(
                1582,
                "42000",
                format!("Incorrect parameter count in the call to native function '{name}'"),
            ));
        }
        // Partition and order keys group and sort strings by their
        // collation's weights.
        let conn = self.env.connection_collation();
        let mut partition = Vec::new();
        for e in &spec.partition_by {
            partition.push(weigh_key(self.compile(e)?, self.cols, &[], conn));
        }
        let mut order = Vec::new();
        for o in &spec.order_by {
            let desc = matches!(o.options.sort, Some(ast::OrderBySort::Desc));
            let e = self.compile(&o.expr)?;
            order.push((order_key(e, self.cols, &[], conn), desc));
        }
        let frame = match &spec.window_frame {
            None => None,
            Some(f) => self.window_frame(f, &window, &order)?,
        };
        let frame = match func {
            WinFunc::Agg(_) | WinFunc::FirstValue | WinFunc::LastValue | WinFunc::NthValue => frame,
            _ => {
                if frame.is_some() {
                    crate::func::warn::note(
                        3599,
                        format!(
                            "Window function '{}' ignores the frame clause of window '{window}' and aggregates over the whole partition",
                            name.to_lowercase()
                        ),
                    );
                }
                None
            }
        };
        let int = ColumnType::BigInt { unsigned: true };
        let ty = match func {
            WinFunc::RowNumber | WinFunc::Rank | WinFunc::DenseRank | WinFunc::Ntile => int,
            WinFunc::PercentRank | WinFunc::CumeDist => ColumnType::Double,
            WinFunc::Agg(kind) => {
                let spec = AggSpec {
                    kind,
                    arg: args.first().cloned(),
                    distinct: false,
                    coll: None,
                    json: false,
                };
                infer(&E::Agg(0), self.cols, std::slice::from_ref(&spec))
            }
            _ => args.first().map_or(int, |a| infer(a, self.cols, &[])),
        };
        let (coll, json) = self.compared_as(args.first());
        let list = self
            .windows
            .as_mut()
            .ok_or_else(|| EngineError::internal("window list"))?;
        list.push(WinSpec {
            func,
            args,
            partition,
            order,
            distinct,
            frame,
            coll,
            json,
        });
        Ok(E::Win(list.len() - 1, ty))
    }

    /// How an aggregate's argument compares (MIN, MAX, DISTINCT): the
    /// collation of its strings (None: bytes), and whether it holds JSON
    /// values (then MySQL's order of JSON values).
    fn compared_as(&mut self, arg: Option<&E>) -> (Option<Collation>, bool) {
        let coll = arg
            .and_then(|a| self.derive(a))
            .map(|d| d.coll)
            .filter(|c| !c.is_plain_bytes());
        (coll, arg.is_some_and(|a| holds_json_value(a, self.cols)))
    }

    /// A window's `ROWS | RANGE` clause, checked as MySQL does
    /// (`win_frame.rs`); `order` is the window's compiled ORDER BY.
    fn window_frame(
        &mut self,
        f: &ast::WindowFrame,
        window: &str,
        order: &[(E, bool)],
    ) -> SqlResult<Option<crate::win_frame::Frame>> {
        use crate::win_frame::{check_shape, Bound, Frame};
        let rows = match f.units {
            ast::WindowFrameUnits::Rows => true,
            ast::WindowFrameUnits::Range => false,
            ast::WindowFrameUnits::Groups => return Err(EngineError::not_supported("GROUPS")),
        };
        let bounds = [Some(&f.start_bound), f.end_bound.as_ref()];
        let offsets: Vec<&Expr> = bounds
            .iter()
            .flatten()
            .filter_map(|b| bound_offset(b))
            .collect();
        let interval = offsets.iter().any(|e| matches!(e, Expr::Interval(_)));
        if !rows && !offsets.is_empty() {
            // RANGE n PRECEDING/FOLLOWING: one numeric or temporal key.
            let aggs = self.aggs.as_deref().map_or(&[][..], |a| a.as_slice());
            let ty = match order {
                [(e, _)] => Some(infer(e, self.cols, aggs)),
                _ => None,
            };
            let temporal = ty.as_ref().is_some_and(|t| t.is_temporal());
            if !ty
                .as_ref()
                .is_some_and(|t| t.is_numeric() || t.is_temporal())
            {
                return Err(EngineError::new(
                    3587,
                    "HY000",
                    format!("Window '{window}' with RANGE N PRECEDING/FOLLOWING frame requires exactly one ORDER BY expression, of numeric or temporal type"),
                ));
            }
            if temporal && !interval {
                return Err(EngineError::new(
                    3588,
                    "HY000",
                    format!("Window '{window}' with RANGE frame has ORDER BY expression of datetime type. Only INTERVAL bound value allowed."),
                ));
            }
            if !temporal && interval {
                return Err(EngineError::new(
                    3589,
                    "HY000",
                    format!("Window '{window}' with RANGE frame has ORDER BY expression of numeric type, INTERVAL bound value not allowed."),
                ));
            }
        }
        let mut bound = |b: &ast::WindowFrameBound, start: bool| -> SqlResult<Bound> {
            Ok(match b {
                ast::WindowFrameBound::CurrentRow => Bound::CurrentRow,
                ast::WindowFrameBound::Preceding(None) => Bound::UnboundedPreceding,
                ast::WindowFrameBound::Following(None) => Bound::UnboundedFollowing,
                ast::WindowFrameBound::Preceding(Some(e)) => {
                    Bound::Preceding(self.frame_offset(e, rows, window)?)
                }
                ast::WindowFrameBound::Following(Some(e)) => {
                    if start && f.end_bound.is_none() {
                        // `ROWS n FOLLOWING` without BETWEEN is no MySQL syntax.
                        return Err(crate::parse::syntax_error("FOLLOWING"));
                    }
                    Bound::Following(self.frame_offset(e, rows, window)?)
                }
            })
        };
        let start = bound(&f.start_bound, true)?;
        let end = match &f.end_bound {
            Some(b) => bound(b, false)?,
            None => Bound::CurrentRow,
        };
        let frame = Frame { rows, start, end };
        check_shape(&frame, window)?;
        Ok(Some(frame))
    }

    /// A frame bound's `n`: a number literal or `?`, non-negative, an
    /// integer for ROWS (MySQL casts a `?` to one); 3586 otherwise.
    fn frame_offset(&mut self, e: &Expr, rows: bool, window: &str) -> SqlResult<Value> {
        use crate::win_frame::err_illegal;
        if let Expr::Interval(_) = e {
            if rows {
                return Err(EngineError::new(
                    3596,
                    "HY000",
                    format!("Window '{window}': INTERVAL can only be used with RANGE frames."),
                ));
            }
            return Err(EngineError::not_supported(
                "INTERVAL bounds of RANGE window frames",
            ));
        }
        let param = matches!(e, Expr::Value(v) if matches!(v.value, ast::Value::Placeholder(_)));
        let literal = matches!(e, Expr::Value(v) if matches!(v.value, ast::Value::Number(..)));
        if !param && !literal {
            return Err(crate::parse::syntax_error(&e.to_string()));
        }
        let v = self.compile(e)?.eval(&Row::new(&[], &[]))?;
        let v = match v {
            Value::Null => return Err(err_illegal(window)),
            Value::Int(i) if i < 0 => return Err(err_illegal(window)),
            Value::Int(_) | Value::UInt(_) => v,
            // ROWS 1.5 PRECEDING: not an integer.
            _ if rows && literal => return Err(err_illegal(window)),
            other => {
                let f = other.to_f64().ok_or_else(|| err_illegal(window))?;
                if f < 0.0 {
                    return Err(err_illegal(window));
                }
                if rows {
                    Value::Int(f as i64)
                } else {
                    other
                }
            }
        };
        Ok(v)
    }

    fn function(&mut self, f: &ast::Function) -> SqlResult<E> {
        let name = func_name(f);
        let (raw, distinct) = self.args(f)?;
        if let Some(over) = &f.over {
            if matches!(f.null_treatment, Some(ast::NullTreatment::IgnoreNulls)) {
                return Err(EngineError::not_supported("IGNORE NULLS"));
            }
            return self.window(&name, &raw, distinct, over);
        }
        if name == "DEFAULT" {
            return self.default_of(&raw);
        }
        if name == "VALUES" {
            if let (Some(off), [FunctionArgExpr::Expr(Expr::Identifier(id))]) =
                (self.values_offset, raw.as_slice())
            {
                return Ok(E::Col(off + self.resolve(None, None, &id.value)?));
            }
            return Err(EngineError::not_supported(
                "VALUES() outside ON DUPLICATE KEY UPDATE",
            ));
        }
        let agg = match name.as_str() {
            "COUNT" => Some(AggKind::Count),
            "SUM" => Some(AggKind::Sum),
            "AVG" => Some(AggKind::Avg),
            "MIN" => Some(AggKind::Min),
            "MAX" => Some(AggKind::Max),
            "GROUP_CONCAT" => Some(AggKind::GroupConcat),
            "BIT_AND" => Some(AggKind::BitAnd),
            "BIT_OR" => Some(AggKind::BitOr),
            _ => None,
        };
        if let Some(mut kind) = agg {
            if self.aggs.is_none() {
                return Err(EngineError::new(
                    1111,
                    "HY000",
                    "Invalid use of group function",
                ));
            }
            let arg = match raw.as_slice() {
                [FunctionArgExpr::Wildcard] if kind == AggKind::Count => {
                    kind = AggKind::CountStar;
                    None
                }
                [FunctionArgExpr::Expr(x)] => {
                    // Aggregates do not nest: compile the argument without.
                    let saved = self.aggs.take();
                    let r = self.compile(x);
                    self.aggs = saved;
                    Some(r?)
                }
                _ => {
                    return Err(EngineError::new(
                        1064,
                        "42000",
                        format!("Incorrect parameter count in the call to '{name}'"),
                    ))
                }
            };
            // SUM/AVG(DISTINCT x): MySQL de-duplicates through a temporary
            // table column of x's type, so a DECIMAL x is summed at its
            // type's scale (AVG(DISTINCT 1/3) adds 0.3333, not 0.333333333).
            let arg = match arg {
                Some(x) if distinct && matches!(kind, AggKind::Sum | AggKind::Avg) => {
                    match infer(&x, self.cols, &[]) {
                        t @ ColumnType::Decimal { .. } => Some(E::Cast(Box::new(x), t)),
                        _ => Some(x),
                    }
                }
                other => other,
            };
            let (coll, json) = self.compared_as(arg.as_ref());
            let list = self
                .aggs
                .as_mut()
                .ok_or_else(|| EngineError::internal("aggregate list"))?;
            list.push(AggSpec {
                kind,
                arg,
                distinct,
                coll,
                json,
            });
            return Ok(E::Agg(list.len() - 1));
        }
        if let Some(e) = self.special_call(&name, &raw)? {
            return Ok(e);
        }
        let mut args = Vec::with_capacity(raw.len());
        for a in &raw {
            match a {
                FunctionArgExpr::Expr(x) => args.push(self.compile(x)?),
                _ => return Err(EngineError::not_supported(format!("{name}(*)"))),
            }
        }
        let n = args.len();
        let bad_count = || {
            EngineError::new(
                1582,
                "42000",
                format!("Incorrect parameter count in the call to native function '{name}'"),
            )
        };
        let want = |lo: usize, hi: usize| {
            if n < lo || n > hi {
                Err(bad_count())
            } else {
                Ok(())
            }
        };
        let fun = match name.as_str() {
            "DATABASE" | "SCHEMA" => {
                want(0, 0)?;
                return Ok(E::Lit(
                    self.env.database().map_or(Value::Null, |d| Value::text(&d)),
                ));
            }
            "USER" | "CURRENT_USER" | "SESSION_USER" | "SYSTEM_USER" => {
                want(0, 0)?;
                let u = if name == "CURRENT_USER" {
                    self.env.current_user()
                } else {
                    self.env.user()
                };
                return Ok(E::Lit(Value::text(&u)));
            }
            "VERSION" => {
                want(0, 0)?;
                return Ok(E::Lit(self.env.sysvar("version", Scope::Session)?));
            }
            "CURRENT_ROLE" => {
                want(0, 0)?;
                return Ok(E::Lit(Value::text(&self.env.current_role())));
            }
            "CONNECTION_ID" => {
                want(0, 0)?;
                return Ok(E::Lit(Value::UInt(self.env.connection_id())));
            }
            "LAST_INSERT_ID" => {
                want(0, 1)?;
                return Ok(self.live(LiveOp::LastInsertId(args.pop())));
            }
            "ROW_COUNT" => {
                want(0, 0)?;
                return Ok(E::Lit(Value::Int(self.env.row_count())));
            }
            "FOUND_ROWS" => {
                want(0, 0)?;
                return Ok(E::Lit(Value::UInt(self.env.found_rows())));
            }
            "NOW" | "CURRENT_TIMESTAMP" | "SYSDATE" | "LOCALTIME" | "LOCALTIMESTAMP" => {
                want(0, 1)?;
                return Ok(E::Lit(Value::DateTime(self.local_now())));
            }
            "UTC_TIMESTAMP" => {
                want(0, 1)?;
                return Ok(E::Lit(Value::DateTime(self.now)));
            }
            "CURDATE" | "CURRENT_DATE" => {
                want(0, 0)?;
                return Ok(E::Lit(Value::Date(self.local_now().date())));
            }
            "UTC_DATE" => {
                want(0, 0)?;
                return Ok(E::Lit(Value::Date(self.now.date())));
            }
            "UNIX_TIMESTAMP" if n == 0 => {
                let s = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_secs())
                    .unwrap_or(0);
                return Ok(E::Lit(Value::UInt(s)));
            }
            "CONCAT" => F::Concat,
            "CONCAT_WS" => {
                want(1, usize::MAX)?;
                F::ConcatWs
            }
            "LENGTH" | "OCTET_LENGTH" => {
                want(1, 1)?;
                F::Length
            }
            "CHAR_LENGTH" | "CHARACTER_LENGTH" => {
                want(1, 1)?;
                F::CharLength
            }
            "UPPER" | "UCASE" => {
                want(1, 1)?;
                F::Upper
            }
            "LOWER" | "LCASE" => {
                want(1, 1)?;
                F::Lower
            }
            "COALESCE" => {
                want(1, usize::MAX)?;
                F::Coalesce
            }
            "IFNULL" => {
                want(2, 2)?;
                F::IfNull
            }
            "IF" => {
                want(3, 3)?;
                F::If
            }
            "NULLIF" => {
                want(2, 2)?;
                F::NullIf
            }
            "ABS" => {
                want(1, 1)?;
                F::Abs
            }
            "ROUND" => {
                want(1, 2)?;
                F::Round
            }
            "TRUNCATE" => {
                want(2, 2)?;
                F::Truncate
            }
            "FLOOR" => {
                want(1, 1)?;
                F::Floor
            }
            "CEIL" | "CEILING" => {
                want(1, 1)?;
                F::Ceil
            }
            "MOD" => {
                want(2, 2)?;
                F::Mod
            }
            "SUBSTRING" | "SUBSTR" | "MID" => {
                want(2, 3)?;
                F::Substring
            }
            "TRIM" => {
                want(1, 1)?;
                F::Trim
            }
            "LTRIM" => {
                want(1, 1)?;
                F::LTrim
            }
            "RTRIM" => {
                want(1, 1)?;
                F::RTrim
            }
            "REPLACE" => {
                want(3, 3)?;
                F::Replace
            }
            "LEFT" => {
                want(2, 2)?;
                F::Left
            }
            "RIGHT" => {
                want(2, 2)?;
                F::Right
            }
            "GREATEST" => {
                want(2, usize::MAX)?;
                F::Greatest
            }
            "LEAST" => {
                want(2, usize::MAX)?;
                F::Least
            }
            "HEX" => {
                want(1, 1)?;
                F::Hex
            }
            "REVERSE" => {
                want(1, 1)?;
                F::Reverse
            }
            "SIGN" => {
                want(1, 1)?;
                F::Sign
            }
            "POW" | "POWER" => {
                want(2, 2)?;
                F::Pow
            }
            "SQRT" => {
                want(1, 1)?;
                F::Sqrt
            }
            "RAND" if n == 1 => {
                let constant = matches!(args[0], E::Lit(_));
                F::Lib(Func::RandSeed(constant))
            }
            "RAND" => {
                want(0, 1)?;
                F::Rand
            }
            "INSTR" => {
                want(2, 2)?;
                args.swap(0, 1);
                F::Lib(Func::Locate)
            }
            "CURTIME" | "CURRENT_TIME" => {
                want(0, 1)?;
                return Ok(E::Lit(Value::text(&self.local_now().format_fsp(0)[11..])));
            }
            "UTC_TIME" => {
                want(0, 1)?;
                return Ok(E::Lit(Value::text(&self.now.format_fsp(0)[11..])));
            }
            "CRC32" => {
                want(1, 1)?;
                F::Crc32
            }
            "SLEEP" => {
                want(1, 1)?;
                F::Sleep
            }
            "GET_LOCK" | "RELEASE_LOCK" | "RELEASE_ALL_LOCKS" => {
                let f = match name.as_str() {
                    "GET_LOCK" => {
                        want(2, 2)?;
                        F::GetLock
                    }
                    "RELEASE_LOCK" => {
                        want(1, 1)?;
                        F::ReleaseLock
                    }
                    _ => {
                        want(0, 0)?;
                        F::ReleaseAllLocks
                    }
                };
                args.push(E::Lit(Value::UInt(self.env.connection_id())));
                return Ok(E::Func(f, args));
            }
            "IS_FREE_LOCK" => {
                want(1, 1)?;
                F::IsFreeLock
            }
            "WAIT_FOR_EXECUTED_GTID_SET" => {
                want(1, 2)?;
                if args.len() == 1 {
                    args.push(E::Lit(Value::Int(0)));
                }
                let handle = crate::gtid_funcs::handle(self.env.gtid_state());
                args.push(E::Lit(Value::UInt(handle)));
                return Ok(E::Func(F::WaitGtid, args));
            }
            "GTID_SUBSET" => {
                want(2, 2)?;
                F::GtidSubset
            }
            "GTID_SUBTRACT" => {
                want(2, 2)?;
                F::GtidSubtract
            }
            "IS_USED_LOCK" => {
                want(1, 1)?;
                F::IsUsedLock
            }
            _ => match crate::func::lookup(&name) {
                Some((Func::FindInSet, lo, hi)) => {
                    want(lo, hi)?;
                    if let Some(e) = self.find_in_set_member(&args) {
                        return Ok(e);
                    }
                    self.lib_call(Func::FindInSet, &mut args)
                }
                Some((f, lo, hi)) => {
                    want(lo, hi)?;
                    self.lib_call(f, &mut args)
                }
                None if crate::func::known_unsupported(&name) => {
                    return Err(EngineError::not_supported(format!("{name}()")))
                }
                None => {
                    return Err(EngineError::new(
                        1305,
                        "42000",
                        format!("FUNCTION {name} does not exist"),
                    ))
                }
            },
        };
        // Text is held as UTF-8 whatever its character set: the byte
        // length of a single-byte set's string is its character count.
        let single_byte = |e: &E| {
            self.derive(e)
                .is_some_and(|d| d.coll.charset().max_len() == 1 && d.coll != Collation::Binary)
        };
        if fun == F::Length && args.first().is_some_and(single_byte) {
            return Ok(E::Func(F::CharLength, args));
        }
        // NULLIF, GREATEST and LEAST compare their string arguments under
        // the collation they agree on.
        if matches!(fun, F::NullIf | F::Greatest | F::Least) {
            let name = match fun {
                F::NullIf => "nullif",
                F::Greatest => "greatest",
                _ => "least",
            };
            let coll = self.all_strings_collation(args.iter(), name)?;
            return Ok(collated(coll, E::Func(fun, args)));
        }
        Ok(E::Func(fun, args))
    }

    /// `FIND_IN_SET('member', set_col)` as MySQL answers it: the member's
    /// position in the SET's definition when the row has it, else 0
    /// (NULL for NULL), not its place among the row's members.
    fn find_in_set_member(&self, args: &[E]) -> Option<E> {
        let [E::Lit(Value::Bytes(m)), col @ E::Col(i)] = args else {
            return None;
        };
        let ColumnType::Set { members } = &self.cols.get(*i)?.ty else {
            return None;
        };
        let text = std::str::from_utf8(m).ok()?;
        let pos = quire_engine::types::enumset::enum_ordinal(members, text)?;
        let bit = 1u64 << (pos - 1);
        let has = lib(
            Func::Bit(BitOp::And),
            vec![
                E::EnumNum(Box::new(col.clone()), self.cols[*i].ty.clone()),
                E::Lit(Value::UInt(bit)),
            ],
        );
        Some(E::Case(
            None,
            vec![
                (E::IsNull(Box::new(col.clone()), false), E::Lit(Value::Null)),
                (
                    E::Cmp(Cmp::Ne, Box::new(has), Box::new(E::Lit(Value::UInt(0)))),
                    E::Lit(Value::Int(i64::from(pos))),
                ),
            ],
            Some(Box::new(E::Lit(Value::Int(0)))),
        ))
    }

    /// A library call's final form: JSON-valued arguments marked, the
    /// session's `max_allowed_packet` appended where a result may grow.
    fn lib_call(&self, f: Func, args: &mut Vec<E>) -> F {
        if f.builds_json() {
            for a in args.iter_mut() {
                if is_bool_expr(a) {
                    let inner = std::mem::replace(a, E::Lit(Value::Null));
                    *a = lib(Func::JsonBool, vec![inner]);
                }
            }
        }
        let mut mask = 0u64;
        for (i, a) in args.iter().enumerate().take(64) {
            if is_json_expr(a, self.cols) {
                mask |= 1 << i;
            }
        }
        if f.wants_packet_limit() {
            let max = self
                .env
                .sysvar("max_allowed_packet", Scope::Session)
                .unwrap_or(Value::Int(67_108_864));
            args.push(E::Lit(max));
        }
        let stored = args.first().is_some_and(|a| holds_json_value(a, self.cols));
        F::Lib(f.with_json_mask(mask).with_stored_arg(stored))
    }

    /// `d ± INTERVAL n unit`, DATE_ADD(d, INTERVAL n unit), ...
    fn date_add(&mut self, d: &Expr, iv: &ast::Interval, sub: bool) -> SqlResult<E> {
        let unit = match (&iv.leading_field, &iv.last_field) {
            (Some(a), Some(b)) => interval_unit(&format!("{a}_{b}"))?,
            (Some(a), None) => interval_unit(&a.to_string())?,
            _ => return Err(crate::parse::syntax_error("INTERVAL")),
        };
        let d = self.compile(d)?;
        let n = self.compile(&iv.value)?;
        Ok(lib(Func::DateAdd(unit, sub), vec![d, n]))
    }

    /// Calls whose arguments are not all expressions: DATE_ADD and
    /// friends (an INTERVAL), TIMESTAMPDIFF/TIMESTAMPADD (a unit word).
    fn special_call(&mut self, name: &str, raw: &[FunctionArgExpr]) -> SqlResult<Option<E>> {
        let exprs: Vec<&Expr> = raw
            .iter()
            .filter_map(|a| match a {
                FunctionArgExpr::Expr(x) => Some(x),
                _ => None,
            })
            .collect();
        let count_err = || {
            EngineError::new(
                1582,
                "42000",
                format!("Incorrect parameter count in the call to native function '{name}'"),
            )
        };
        match name {
            "COLLATION" | "CHARSET" | "COERCIBILITY" => {
                let [x] = exprs.as_slice() else {
                    return Err(count_err());
                };
                let x = self.compile(x)?;
                Ok(Some(E::Lit(self.collation_info(name, &x))))
            }
            "DATE_ADD" | "DATE_SUB" | "ADDDATE" | "SUBDATE" => {
                let [d, amount] = exprs.as_slice() else {
                    return Err(count_err());
                };
                let sub = name == "DATE_SUB" || name == "SUBDATE";
                match amount {
                    Expr::Interval(iv) => Ok(Some(self.date_add(d, iv, sub)?)),
                    x if name.ends_with("DATE") && !name.starts_with("DATE") => {
                        let d = self.compile(d)?;
                        let n = self.compile(x)?;
                        Ok(Some(lib(Func::DateAdd(DateUnit::Day, sub), vec![d, n])))
                    }
                    x => Err(crate::parse::syntax_error(&x.to_string())),
                }
            }
            "TIMESTAMPDIFF" | "TIMESTAMPADD" => {
                let [u, a, b] = exprs.as_slice() else {
                    return Err(count_err());
                };
                let word = u.to_string().to_ascii_uppercase();
                let unit = interval_unit(word.trim_start_matches("SQL_TSI_"))?;
                if !matches!(
                    unit,
                    DateUnit::Microsecond
                        | DateUnit::Second
                        | DateUnit::Minute
                        | DateUnit::Hour
                        | DateUnit::Day
                        | DateUnit::Week
                        | DateUnit::Month
                        | DateUnit::Quarter
                        | DateUnit::Year
                ) {
                    return Err(crate::parse::syntax_error(&word));
                }
                let a = self.compile(a)?;
                let b = self.compile(b)?;
                Ok(Some(if name == "TIMESTAMPDIFF" {
                    lib(Func::TimestampDiff(unit), vec![a, b])
                } else {
                    lib(Func::DateAdd(unit, false), vec![b, a])
                }))
            }
            _ => Ok(None),
        }
    }
}

/// The length CAST(x AS CHAR) without a length reports: no truncation.
const CAST_CHAR_ANY: u32 = 16_383;

/// Target type of CAST/CONVERT.
pub fn cast_type(dt: &DataType) -> SqlResult<ColumnType> {
    let s = dt.to_string().to_ascii_uppercase();
    let base = s.split(['(', ' ']).next().unwrap_or("");
    Ok(match base {
        "SIGNED" | "INT" | "INTEGER" | "BIGINT" => {
            if s.contains("UNSIGNED") {
                ColumnType::BigInt { unsigned: true }
            } else {
                ColumnType::BigInt { unsigned: false }
            }
        }
        "UNSIGNED" => ColumnType::BigInt { unsigned: true },
        "CHAR" | "VARCHAR" | "NCHAR" | "TEXT" => match crate::ddl::paren_numbers(&s).0 {
            Some(n) => ColumnType::varchar(n.min(u64::from(CAST_CHAR_ANY - 1)) as u32),
            None => ColumnType::varchar(CAST_CHAR_ANY),
        },
        "BINARY" => match crate::ddl::paren_numbers(&s).0 {
            Some(n) => ColumnType::Binary {
                len: n.min(65_535) as u32,
            },
            None => ColumnType::VarBinary { len: 65_535 },
        },
        "VARBINARY" | "BLOB" => ColumnType::VarBinary { len: 65_535 },
        "FLOAT" if crate::ddl::paren_numbers(&s).0.is_none_or(|p| p <= 24) => ColumnType::Float,
        "DECIMAL" | "NUMERIC" | "DEC" => {
            let (p, sc) = crate::ddl::paren_numbers(&s);
            ColumnType::Decimal {
                precision: p.unwrap_or(10).min(65) as u8,
                scale: sc.unwrap_or(0).min(30) as u8,
            }
        }
        "DOUBLE" | "REAL" | "FLOAT" => ColumnType::Double,
        "DATE" => ColumnType::Date,
        "DATETIME" | "TIMESTAMP" => ColumnType::DateTime {
            fsp: crate::ddl::paren_numbers(&s).0.unwrap_or(0).min(6) as u8,
        },
        _ => return Err(EngineError::not_supported(format!("CAST to {s}"))),
    })
}

// ---------------------------------------------------------------- evaluation

/// What an expression reads while evaluated.
pub struct Row<'a> {
    pub row: &'a [Value],
    pub aggs: &'a [Value],
    /// Values of the enclosing blocks' columns (`E::Outer`).
    pub outer: &'a [Value],
    /// Runs subqueries (`E::Subquery`); None where there are none.
    pub subq: Option<&'a dyn SubqueryRunner>,
    /// Window function values of this row (`E::Win`).
    pub wins: &'a [Value],
}

impl<'a> Row<'a> {
    /// A row without outer values or subqueries.
    pub fn new(row: &'a [Value], aggs: &'a [Value]) -> Row<'a> {
        Row {
            row,
            aggs,
            outer: &[],
            subq: None,
            wins: &[],
        }
    }
}

pub fn truth(v: &Value) -> Option<bool> {
    match v {
        Value::Null => None,
        Value::Int(i) => Some(*i != 0),
        Value::UInt(u) => Some(*u != 0),
        Value::Decimal(d) => Some(!d.is_zero()),
        other => other.to_f64().map(|f| f != 0.0),
    }
}

fn bool_val(b: Option<bool>) -> Value {
    match b {
        None => Value::Null,
        Some(b) => Value::Int(i64::from(b)),
    }
}

/// The connection id a user-level lock call was compiled with.
fn conn_of(v: &Value) -> u64 {
    match v {
        Value::UInt(n) => *n,
        Value::Int(n) => *n as u64,
        _ => 0,
    }
}

pub(crate) fn bytes_of(v: &Value) -> Vec<u8> {
    match v {
        Value::Bytes(b) => b.clone(),
        other => other.to_string().into_bytes(),
    }
}

fn int128(v: &Value) -> Option<i128> {
    match v {
        Value::Int(i) => Some(i128::from(*i)),
        Value::UInt(u) => Some(i128::from(*u)),
        _ => None,
    }
}

fn from_i128(x: i128, what: &str) -> SqlResult<Value> {
    if let Ok(i) = i64::try_from(x) {
        Ok(Value::Int(i))
    } else if let Ok(u) = u64::try_from(x) {
        Ok(Value::UInt(u))
    } else {
        Err(err_range(what))
    }
}

fn is_floaty(v: &Value) -> bool {
    matches!(v, Value::Float(_) | Value::Double(_) | Value::Bytes(_))
}

fn dec_err(e: quire_engine::types::DecimalError) -> EngineError {
    EngineError::new(
        1690,
        "22003",
        format!("DECIMAL value is out of range ({e})"),
    )
}

pub fn arith(op: Arith, a: &Value, b: &Value) -> SqlResult<Value> {
    if a.is_null() || b.is_null() {
        return Ok(Value::Null);
    }
    let sym = match op {
        Arith::Add => "+",
        Arith::Sub => "-",
        Arith::Mul => "*",
        Arith::Div => "/",
        Arith::IntDiv => "DIV",
        Arith::Mod => "%",
    };
    let what = || format!("({a} {sym} {b})");
    if let (Some(x), Some(y)) = (int128(a), int128(b)) {
        // + - * of integers is BIGINT arithmetic: UNSIGNED when either
        // operand is, and the result must fit that type (1690).
        let unsigned = matches!(a, Value::UInt(_)) || matches!(b, Value::UInt(_));
        let typed = |r: Option<i128>| match r {
            Some(r) if unsigned && r >= 0 => from_i128(r, &what()),
            Some(r) if !unsigned && i64::try_from(r).is_ok() => from_i128(r, &what()),
            _ if unsigned => Err(EngineError::new(
                1690,
                "22003",
                format!("BIGINT UNSIGNED value is out of range in '{}'", what()),
            )),
            _ => Err(err_range(&what())),
        };
        return match op {
            Arith::Add => typed(x.checked_add(y)),
            Arith::Sub => typed(x.checked_sub(y)),
            Arith::Mul => typed(x.checked_mul(y)),
            Arith::IntDiv => {
                if y == 0 {
                    crate::func::warn::division_by_zero();
                    Ok(Value::Null)
                } else {
                    from_i128(x / y, &what())
                }
            }
            Arith::Mod => {
                if y == 0 {
                    crate::func::warn::division_by_zero();
                    Ok(Value::Null)
                } else {
                    from_i128(x % y, &what())
                }
            }
            Arith::Div => {
                if y == 0 {
                    crate::func::warn::division_by_zero();
                    return Ok(Value::Null);
                }
                Decimal::from_mantissa(x, 0)
                    .checked_div_mysql(&Decimal::from_mantissa(y, 0))
                    .map(Value::Decimal)
                    .map_err(dec_err)
            }
        };
    }
    if is_floaty(a) || is_floaty(b) {
        let x = a.to_f64().unwrap_or(0.0);
        let y = b.to_f64().unwrap_or(0.0);
        let r = match op {
            Arith::Add => x + y,
            Arith::Sub => x - y,
            Arith::Mul => x * y,
            Arith::Div => {
                if y == 0.0 {
                    crate::func::warn::division_by_zero();
                    return Ok(Value::Null);
                }
                x / y
            }
            Arith::IntDiv => {
                if y == 0.0 {
                    crate::func::warn::division_by_zero();
                    return Ok(Value::Null);
                }
                let q = (x / y).trunc();
                return from_i128(q as i128, &what());
            }
            Arith::Mod => {
                if y == 0.0 {
                    crate::func::warn::division_by_zero();
                    return Ok(Value::Null);
                }
                x % y
            }
        };
        if !r.is_finite() {
            return Err(EngineError::new(
                1690,
                "22003",
                format!("DOUBLE value is out of range in '{}'", what()),
            ));
        }
        return Ok(Value::Double(r));
    }
    let (Some(x), Some(y)) = (a.to_decimal(), b.to_decimal()) else {
        return Ok(Value::Null);
    };
    Ok(match op {
        Arith::Add => Value::Decimal(x.checked_add(&y).map_err(dec_err)?),
        Arith::Sub => Value::Decimal(x.checked_sub(&y).map_err(dec_err)?),
        Arith::Mul => Value::Decimal(x.checked_mul(&y).map_err(dec_err)?),
        Arith::Div => {
            if y.is_zero() {
                crate::func::warn::division_by_zero();
                return Ok(Value::Null);
            }
            Value::Decimal(x.checked_div_mysql(&y).map_err(dec_err)?)
        }
        Arith::IntDiv => {
            if y.is_zero() {
                crate::func::warn::division_by_zero();
                return Ok(Value::Null);
            }
            let t = x.checked_div_trunc(&y, 0).map_err(dec_err)?;
            from_i128(t.to_i128_round().unwrap_or(0), &what())?
        }
        Arith::Mod => {
            if y.is_zero() {
                crate::func::warn::division_by_zero();
                return Ok(Value::Null);
            }
            let t = x.checked_div_trunc(&y, 0).map_err(dec_err)?;
            Value::Decimal(
                x.checked_sub(&t.checked_mul(&y).map_err(dec_err)?)
                    .map_err(dec_err)?,
            )
        }
    })
}

/// Two values' order; two strings under `coll` when given.
pub(crate) fn compare_in(a: &Value, b: &Value, coll: Option<Collation>) -> Option<Ordering> {
    match (coll, a, b) {
        (Some(c), Value::Bytes(x), Value::Bytes(y)) => Some(c.cmp(x, y)),
        _ => compare(a, b),
    }
}

fn cmp_vals_in(op: Cmp, a: &Value, b: &Value, coll: Option<Collation>) -> Value {
    if op == Cmp::NullSafeEq {
        return Value::Int(i64::from(match (a.is_null(), b.is_null()) {
            (true, true) => true,
            (true, false) | (false, true) => false,
            _ => compare_in(a, b, coll) == Some(Ordering::Equal),
        }));
    }
    let Some(o) = compare_in(a, b, coll) else {
        return Value::Null;
    };
    Value::Int(i64::from(cmp_holds_order(op, o)))
}

/// Whether `op` holds between two values in order `o`.
fn cmp_holds_order(op: Cmp, o: Ordering) -> bool {
    match op {
        Cmp::Eq | Cmp::NullSafeEq => o == Ordering::Equal,
        Cmp::Ne => o != Ordering::Equal,
        Cmp::Lt => o == Ordering::Less,
        Cmp::Le => o != Ordering::Greater,
        Cmp::Gt => o == Ordering::Greater,
        Cmp::Ge => o != Ordering::Less,
    }
}

/// `LIKE` over bytes: `%` any run, `_` one character (UTF-8 aware), `esc`
/// escapes the next pattern byte.
pub fn like(s: &[u8], p: &[u8], esc: u8) -> bool {
    like_in(s, p, esc, None)
}

/// [`like`] with characters compared under `coll` (one character against
/// one, as MySQL's wildcard matcher compares them).
pub fn like_in(s: &[u8], p: &[u8], esc: u8, coll: Option<Collation>) -> bool {
    let same = |a: char, b: char| match coll {
        Some(c) => c.char_eq(a, b),
        None => a == b,
    };
    let s: Vec<char> = String::from_utf8_lossy(s).chars().collect();
    let pat: Vec<char> = String::from_utf8_lossy(p).chars().collect();
    let esc = esc as char;
    // Iterative matching with backtracking on the last '%'.
    let (mut si, mut pi) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while si < s.len() {
        if pi < pat.len() {
            let c = pat[pi];
            if c == '%' {
                star = Some((pi, si));
                pi += 1;
                continue;
            }
            let (lit, adv) = if c == esc && pi + 1 < pat.len() {
                (Some(pat[pi + 1]), 2)
            } else if c == '_' {
                (None, 1)
            } else {
                (Some(c), 1)
            };
            if lit.is_none_or(|l| same(l, s[si])) {
                si += 1;
                pi += adv;
                continue;
            }
        }
        match star {
            Some((sp, ss)) => {
                pi = sp + 1;
                si = ss + 1;
                star = Some((sp, ss + 1));
            }
            None => return false,
        }
    }
    while pi < pat.len() && pat[pi] == '%' {
        pi += 1;
    }
    pi == pat.len()
}

fn num_arg(v: &Value) -> Option<i64> {
    match v {
        Value::Int(i) => Some(*i),
        Value::UInt(u) => Some(i64::try_from(*u).unwrap_or(i64::MAX)),
        Value::Null => None,
        other => other.to_f64().map(|f| f.round() as i64),
    }
}

fn substr(s: &[u8], pos: i64, len: Option<i64>) -> Vec<u8> {
    let chars: Vec<char> = String::from_utf8_lossy(s).chars().collect();
    let n = chars.len() as i64;
    let start = if pos > 0 {
        pos - 1
    } else if pos < 0 {
        n + pos
    } else {
        return Vec::new();
    };
    if start < 0 || start >= n {
        return Vec::new();
    }
    let end = match len {
        Some(l) if l <= 0 => return Vec::new(),
        Some(l) => (start + l).min(n),
        None => n,
    };
    chars[start as usize..end as usize]
        .iter()
        .collect::<String>()
        .into_bytes()
}

fn cast_value(v: Value, ty: &ColumnType) -> SqlResult<Value> {
    if v.is_null() {
        return Ok(Value::Null);
    }
    Ok(match ty {
        ColumnType::BigInt { unsigned } => {
            let x = match &v {
                Value::Int(i) => i128::from(*i),
                Value::UInt(u) => i128::from(*u),
                Value::Decimal(d) => d.to_i128_round().unwrap_or(0),
                Value::Bytes(b) => {
                    let p = Decimal::parse_prefix(b).ok();
                    let end = b.trim_ascii_end().len();
                    if end == 0 || p.as_ref().is_none_or(|p| p.consumed < end) {
                        crate::func::warn::warn(
                            1292,
                            format!(
                                "Truncated incorrect INTEGER value: '{}'",
                                String::from_utf8_lossy(b)
                            ),
                        );
                    }
                    p.and_then(|p| p.value.truncate_to_scale(0).to_i128_round())
                        .unwrap_or(0)
                }
                other => other.to_f64().map(|f| f.round() as i128).unwrap_or(0),
            };
            if *unsigned {
                // CAST(-1 AS UNSIGNED) wraps to 18446744073709551615.
                if x < 0 && x >= i128::from(i64::MIN) {
                    Value::UInt(x as i64 as u64)
                } else {
                    Value::UInt(x.clamp(0, i128::from(u64::MAX)) as u64)
                }
            } else if matches!(v, Value::UInt(_)) {
                // CAST(18446744073709551615 AS SIGNED) wraps to -1.
                Value::Int(x as u64 as i64)
            } else {
                Value::Int(x.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64)
            }
        }
        ColumnType::Double => Value::Double(v.to_f64().unwrap_or(0.0)),
        ColumnType::Float => Value::Float(v.to_f64().unwrap_or(0.0) as f32),
        ColumnType::Varchar { len, .. } if *len < CAST_CHAR_ANY => {
            let b = bytes_of(&v);
            let text = String::from_utf8_lossy(&b);
            if text.chars().count() > *len as usize {
                crate::func::warn::warn(
                    1292,
                    format!("Truncated incorrect CHAR({len}) value: '{text}'"),
                );
                Value::text(&text.chars().take(*len as usize).collect::<String>())
            } else {
                Value::Bytes(b)
            }
        }
        ColumnType::Binary { len } => {
            let mut b = bytes_of(&v);
            let len = *len as usize;
            if b.len() > len {
                crate::func::warn::warn(
                    1292,
                    format!(
                        "Truncated incorrect BINARY({len}) value: '{}'",
                        String::from_utf8_lossy(&b)
                    ),
                );
                b.truncate(len);
            }
            b.resize(len, 0);
            Value::Bytes(b)
        }
        ColumnType::Varchar { .. } | ColumnType::VarBinary { .. } => Value::Bytes(bytes_of(&v)),
        ColumnType::Decimal { precision, scale } => {
            let d = match &v {
                Value::Bytes(b) => Decimal::parse_prefix(b)
                    .map(|p| p.value)
                    .unwrap_or_else(|_| Decimal::zero()),
                other => other.to_decimal().unwrap_or_else(Decimal::zero),
            };
            Value::Decimal(
                d.to_precision(*precision, *scale)
                    .unwrap_or_else(|_| d.round_to_scale(*scale)),
            )
        }
        ColumnType::Date | ColumnType::DateTime { .. } => {
            let shown = v.to_string();
            match quire_engine::types::coerce(v, ty, true, "CAST", 1) {
                Ok(x) => x,
                Err(_) => {
                    crate::func::warn::bad_datetime(&shown);
                    Value::Null
                }
            }
        }
        _ => v,
    })
}

/// Reads or writes the session state of a [`LiveOp`].
fn eval_live(live: &crate::uservars::Live, op: &LiveOp, r: &Row) -> SqlResult<Value> {
    Ok(match op {
        LiveOp::Get(name) => live.get(name),
        LiveOp::Set(name, x) => {
            let v = x.eval(r)?;
            live.set(name, v.clone());
            v
        }
        LiveOp::LastInsertId(None) => Value::UInt(live.last_insert_id()),
        // MySQL takes the argument's integer value as unsigned; NULL
        // returns NULL and remembers 0.
        LiveOp::LastInsertId(Some(x)) => {
            let v = x.eval(r)?;
            let id = crate::func::val::uint_wrapping(&v);
            live.set_last_insert_id_by_expr(id.unwrap_or(0));
            id.map_or(Value::Null, Value::UInt)
        }
    })
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02X}")).collect()
}

impl E {
    pub fn eval(&self, r: &Row) -> SqlResult<Value> {
        crate::stack::check()?;
        Ok(match self {
            E::Lit(v) => v.clone(),
            E::Col(i) => r.row.get(*i).cloned().unwrap_or(Value::Null),
            E::Agg(i) => r.aggs.get(*i).cloned().unwrap_or(Value::Null),
            E::Outer(i, _) => r.outer.get(*i).cloned().unwrap_or(Value::Null),
            E::Live(live, op) => eval_live(live, op, r)?,
            E::Win(i, _) => r.wins.get(*i).cloned().unwrap_or(Value::Null),
            E::Subquery {
                id,
                kind,
                lhs,
                refs,
                ..
            } => {
                let runner = r
                    .subq
                    .ok_or_else(|| EngineError::internal("subquery evaluated without a runner"))?;
                let l = match lhs {
                    Some(x) => Some(x.eval(r)?),
                    None => None,
                };
                if refs.is_empty() {
                    runner.eval(*id, *kind, l.as_ref(), &[])?
                } else {
                    let mut outer = Vec::with_capacity(r.outer.len() + r.row.len());
                    outer.extend_from_slice(r.outer);
                    outer.extend_from_slice(r.row);
                    runner.eval(*id, *kind, l.as_ref(), &outer)?
                }
            }
            E::EnumNum(x, ty) => enum_number(x.eval(r)?, ty),
            E::Neg(x) => match x.eval(r)? {
                Value::Null => Value::Null,
                Value::Int(i) => match i.checked_neg() {
                    Some(n) => Value::Int(n),
                    None => return Err(err_range(&format!("-({i})"))),
                },
                Value::UInt(u) => from_i128(-i128::from(u), &format!("-({u})"))?,
                Value::Decimal(d) => Value::Decimal(d.neg()),
                other => Value::Double(-other.to_f64().unwrap_or(0.0)),
            },
            E::Not(x) => bool_val(truth(&x.eval(r)?).map(|b| !b)),
            E::Arith(op, a, b) => arith(*op, &a.eval(r)?, &b.eval(r)?)?,
            E::Chain(first, rest) => {
                let mut v = first.eval(r)?;
                for (op, x) in rest {
                    v = arith(*op, &v, &x.eval(r)?)?;
                }
                v
            }
            E::Cmp(..) => self.eval_compare(r, None)?,
            E::And(a, b) => {
                let x = truth(&a.eval(r)?);
                if x == Some(false) {
                    return Ok(Value::Int(0));
                }
                let y = truth(&b.eval(r)?);
                bool_val(match (x, y) {
                    (_, Some(false)) => Some(false),
                    (Some(true), Some(true)) => Some(true),
                    _ => None,
                })
            }
            E::Or(a, b) => {
                let x = truth(&a.eval(r)?);
                if x == Some(true) {
                    return Ok(Value::Int(1));
                }
                let y = truth(&b.eval(r)?);
                bool_val(match (x, y) {
                    (_, Some(true)) => Some(true),
                    (Some(false), Some(false)) => Some(false),
                    _ => None,
                })
            }
            E::Xor(a, b) => {
                let x = truth(&a.eval(r)?);
                let y = truth(&b.eval(r)?);
                bool_val(match (x, y) {
                    (Some(p), Some(q)) => Some(p != q),
                    _ => None,
                })
            }
            E::IsNull(x, neg) => Value::Int(i64::from(x.eval(r)?.is_null() != *neg)),
            E::IsBool(x, want, neg) => {
                let t = truth(&x.eval(r)?);
                Value::Int(i64::from((t == Some(*want)) != *neg))
            }
            E::Between(..) | E::InList(..) | E::Like(..) => self.eval_compare(r, None)?,
            E::Collated(c, node) => node.eval_compare(r, Some(*c))?,
            E::Collate(x, _) => x.eval(r)?,
            E::Weigh(c, x) => match x.eval(r)? {
                Value::Bytes(b) => Value::Bytes(c.weight_of(&b)),
                v => v,
            },
            E::Case(op, whens, els) => {
                let base = match op {
                    Some(o) => Some(o.eval(r)?),
                    None => None,
                };
                for (c, res) in whens {
                    let cv = c.eval(r)?;
                    let hit = match &base {
                        Some(b) => compare(b, &cv) == Some(Ordering::Equal),
                        None => truth(&cv) == Some(true),
                    };
                    if hit {
                        return res.eval(r);
                    }
                }
                match els {
                    Some(e) => e.eval(r)?,
                    None => Value::Null,
                }
            }
            E::Cast(x, ty) => cast_value(x.eval(r)?, ty)?,
            E::Func(f, args) => self.func(*f, args, r)?,
        })
    }

    /// A comparison node's value, with strings compared under `coll`
    /// (None: by the engine's rules, bytes for strings).
    fn eval_compare(&self, r: &Row, coll: Option<Collation>) -> SqlResult<Value> {
        Ok(match self {
            E::Cmp(op, a, b) => cmp_vals_in(*op, &a.eval(r)?, &b.eval(r)?, coll),
            E::Between(x, lo, hi, neg) => {
                let v = x.eval(r)?;
                let a = truth(&cmp_vals_in(Cmp::Ge, &v, &lo.eval(r)?, coll));
                let b = truth(&cmp_vals_in(Cmp::Le, &v, &hi.eval(r)?, coll));
                let res = match (a, b) {
                    (Some(false), _) | (_, Some(false)) => Some(false),
                    (Some(true), Some(true)) => Some(true),
                    _ => None,
                };
                bool_val(res.map(|b| b != *neg))
            }
            E::InList(x, list, neg) => {
                let v = x.eval(r)?;
                if v.is_null() {
                    return Ok(Value::Null);
                }
                let mut saw_null = false;
                let mut hit = false;
                for i in list {
                    let w = i.eval(r)?;
                    match compare_in(&v, &w, coll) {
                        Some(Ordering::Equal) => {
                            hit = true;
                            break;
                        }
                        None => saw_null = true,
                        _ => {}
                    }
                }
                if hit {
                    Value::Int(i64::from(!*neg))
                } else if saw_null {
                    Value::Null
                } else {
                    Value::Int(i64::from(*neg))
                }
            }
            E::Like(x, p, neg, esc) => {
                let v = x.eval(r)?;
                let pv = p.eval(r)?;
                if v.is_null() || pv.is_null() {
                    return Ok(Value::Null);
                }
                Value::Int(i64::from(
                    like_in(&bytes_of(&v), &bytes_of(&pv), *esc, coll) != *neg,
                ))
            }
            E::Case(Some(op), whens, els) => {
                let base = op.eval(r)?;
                for (c, res) in whens {
                    if compare_in(&base, &c.eval(r)?, coll) == Some(Ordering::Equal) {
                        return res.eval(r);
                    }
                }
                match els {
                    Some(e) => e.eval(r)?,
                    None => Value::Null,
                }
            }
            E::Func(F::NullIf, args) if args.len() == 2 => {
                let a = args[0].eval(r)?;
                if compare_in(&a, &args[1].eval(r)?, coll) == Some(Ordering::Equal) {
                    Value::Null
                } else {
                    a
                }
            }
            E::Func(f @ (F::Greatest | F::Least), args) if !args.is_empty() => {
                let mut best = Value::Null;
                for (i, a) in args.iter().enumerate() {
                    let v = a.eval(r)?;
                    if v.is_null() {
                        return Ok(Value::Null);
                    }
                    let o = compare_in(&v, &best, coll);
                    let better = i == 0
                        || if *f == F::Greatest {
                            o == Some(Ordering::Greater)
                        } else {
                            o == Some(Ordering::Less)
                        };
                    if better {
                        best = v;
                    }
                }
                best
            }
            other => other.eval(r)?,
        })
    }

    fn func(&self, f: F, args: &[E], r: &Row) -> SqlResult<Value> {
        // Lazy ones first.
        match f {
            F::Coalesce => {
                for a in args {
                    let v = a.eval(r)?;
                    if !v.is_null() {
                        return Ok(v);
                    }
                }
                return Ok(Value::Null);
            }
            F::IfNull => {
                let v = args[0].eval(r)?;
                return if v.is_null() { args[1].eval(r) } else { Ok(v) };
            }
            F::If => {
                return if truth(&args[0].eval(r)?) == Some(true) {
                    args[1].eval(r)
                } else {
                    args[2].eval(r)
                };
            }
            F::Lib(Func::Benchmark) => {
                // BENCHMARK(n, expr): expr evaluated n times, result 0;
                // a negative count is NULL with a warning, as MySQL.
                let n = args[0].eval(r)?;
                let Some(count) = crate::func::val::int(&n) else {
                    return Ok(Value::Null);
                };
                if count < 0 {
                    crate::func::warn::warn(
                        1210,
                        format!("Incorrect count value: '{count}' for function benchmark"),
                    );
                    return Ok(Value::Null);
                }
                for i in 0..count {
                    if i % 1024 == 0 {
                        crate::process::check_interrupt()?;
                    }
                    args[1].eval(r)?;
                }
                return Ok(Value::Int(0));
            }
            _ => {}
        }
        let vals = args
            .iter()
            .map(|a| a.eval(r))
            .collect::<SqlResult<Vec<Value>>>()?;
        if let F::Lib(fun) = f {
            if fun == Func::RandSeed(true) {
                let site = self as *const E as usize;
                return Ok(crate::func::math::rand_at(site, &v_first(&vals)));
            }
            return crate::func::call(fun, &vals);
        }
        let null_in = vals.iter().any(|v| v.is_null());
        let v0 = vals.first().cloned().unwrap_or(Value::Null);
        Ok(match f {
            F::Concat => {
                if null_in {
                    return Ok(Value::Null);
                }
                let mut out = Vec::new();
                for v in &vals {
                    out.extend(bytes_of(v));
                }
                Value::Bytes(out)
            }
            F::ConcatWs => {
                if v0.is_null() {
                    return Ok(Value::Null);
                }
                let sep = bytes_of(&v0);
                let parts: Vec<Vec<u8>> = vals[1..]
                    .iter()
                    .filter(|v| !v.is_null())
                    .map(bytes_of)
                    .collect();
                Value::Bytes(parts.join(sep.as_slice()))
            }
            _ if null_in
                && !matches!(
                    f,
                    F::NullIf
                        | F::Greatest
                        | F::Least
                        | F::Rand
                        | F::Sleep
                        | F::JsonCmp(..)
                        | F::GetLock
                        | F::ReleaseLock
                        | F::IsFreeLock
                        | F::IsUsedLock
                ) =>
            {
                Value::Null
            }
            F::Length => Value::Int(bytes_of(&v0).len() as i64),
            F::CharLength => {
                Value::Int(String::from_utf8_lossy(&bytes_of(&v0)).chars().count() as i64)
            }
            F::Upper => Value::text(&String::from_utf8_lossy(&bytes_of(&v0)).to_uppercase()),
            F::Lower => Value::text(&String::from_utf8_lossy(&bytes_of(&v0)).to_lowercase()),
            F::NullIf => {
                if compare(&vals[0], &vals[1]) == Some(Ordering::Equal) {
                    Value::Null
                } else {
                    v0
                }
            }
            F::Abs => match &v0 {
                Value::Int(i) => Value::Int(
                    i.checked_abs()
                        .ok_or_else(|| err_range(&format!("abs({i})")))?,
                ),
                Value::UInt(_) => v0,
                Value::Decimal(d) => Value::Decimal(d.abs()),
                other => Value::Double(other.to_f64().unwrap_or(0.0).abs()),
            },
            F::Round | F::Truncate => crate::func::math::round(
                &v0,
                vals.get(1).and_then(crate::func::val::int).unwrap_or(0),
                f == F::Truncate,
            )?,
            F::Floor | F::Ceil => match &v0 {
                Value::Int(_) | Value::UInt(_) => v0,
                Value::Decimal(d) => {
                    let t = d.truncate_to_scale(0);
                    let adj = if f == F::Floor && d.is_negative() && t != *d {
                        -1
                    } else if f == F::Ceil && !d.is_negative() && t != *d {
                        1
                    } else {
                        0
                    };
                    from_i128(t.to_i128_round().unwrap_or(0) + adj, "floor")?
                }
                other => {
                    let x = other.to_f64().unwrap_or(0.0);
                    Value::Double(if f == F::Floor { x.floor() } else { x.ceil() })
                }
            },
            F::Mod => arith(Arith::Mod, &vals[0], &vals[1])?,
            F::Substring => Value::Bytes(substr(
                &bytes_of(&v0),
                num_arg(&vals[1]).unwrap_or(0),
                vals.get(2).and_then(num_arg),
            )),
            F::Trim => Value::text(String::from_utf8_lossy(&bytes_of(&v0)).trim_matches(' ')),
            F::LTrim => {
                Value::text(String::from_utf8_lossy(&bytes_of(&v0)).trim_start_matches(' '))
            }
            F::RTrim => Value::text(String::from_utf8_lossy(&bytes_of(&v0)).trim_end_matches(' ')),
            F::Replace => {
                let s = String::from_utf8_lossy(&bytes_of(&v0)).into_owned();
                let from = String::from_utf8_lossy(&bytes_of(&vals[1])).into_owned();
                let to = String::from_utf8_lossy(&bytes_of(&vals[2])).into_owned();
                if from.is_empty() {
                    Value::text(&s)
                } else {
                    Value::text(&s.replace(&from, &to))
                }
            }
            F::Left => {
                let n = num_arg(&vals[1]).unwrap_or(0).max(0);
                Value::Bytes(substr(&bytes_of(&v0), 1, Some(n)))
            }
            F::Right => {
                let s = bytes_of(&v0);
                let total = String::from_utf8_lossy(&s).chars().count() as i64;
                let n = num_arg(&vals[1]).unwrap_or(0).clamp(0, total);
                if n == 0 {
                    Value::text("")
                } else {
                    Value::Bytes(substr(&s, total - n + 1, Some(n)))
                }
            }
            F::Greatest | F::Least => {
                if null_in {
                    return Ok(Value::Null);
                }
                let mut best = v0;
                for v in &vals[1..] {
                    let o = compare(v, &best);
                    let better = if f == F::Greatest {
                        o == Some(Ordering::Greater)
                    } else {
                        o == Some(Ordering::Less)
                    };
                    if better {
                        best = v.clone();
                    }
                }
                best
            }
            F::Hex => match &v0 {
                Value::Int(i) => Value::text(&format!("{i:X}")),
                Value::UInt(u) => Value::text(&format!("{u:X}")),
                other => Value::text(&hex(&bytes_of(other))),
            },
            F::Reverse => Value::text(
                &String::from_utf8_lossy(&bytes_of(&v0))
                    .chars()
                    .rev()
                    .collect::<String>(),
            ),
            F::Locate => {
                let needle = String::from_utf8_lossy(&bytes_of(&v0)).into_owned();
                let hay = String::from_utf8_lossy(&bytes_of(&vals[1])).into_owned();
                match hay.find(&needle) {
                    Some(b) => Value::Int(hay[..b].chars().count() as i64 + 1),
                    None => Value::Int(0),
                }
            }
            F::Sign => {
                let x = v0.to_f64().unwrap_or(0.0);
                Value::Int(if x > 0.0 {
                    1
                } else if x < 0.0 {
                    -1
                } else {
                    0
                })
            }
            F::Pow => crate::func::math::pow(&v0, &vals[1])?,
            F::Sqrt => {
                let x = v0.to_f64().unwrap_or(0.0);
                if x < 0.0 {
                    Value::Null
                } else {
                    Value::Double(x.sqrt())
                }
            }
            F::Rand => {
                let n = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.subsec_nanos())
                    .unwrap_or(0);
                Value::Double(f64::from(n % 1_000_000) / 1e6)
            }
            F::Crc32 => {
                let mut c: u32 = !0;
                for b in bytes_of(&v0) {
                    c ^= u32::from(b);
                    for _ in 0..8 {
                        c = if c & 1 != 0 {
                            (c >> 1) ^ 0xEDB8_8320
                        } else {
                            c >> 1
                        };
                    }
                }
                Value::UInt(u64::from(!c))
            }
            F::Sleep => crate::process::sleep(v0.to_f64().unwrap_or(f64::NAN))?,
            F::JsonCmp(op, lj, rj) => {
                let o = crate::func::json::compare(&v0, lj, &vals[1], rj)?;
                match (op, o) {
                    (Cmp::NullSafeEq, None) => {
                        Value::Int(i64::from(v0.is_null() && vals[1].is_null()))
                    }
                    (_, None) => Value::Null,
                    (op, Some(o)) => Value::Int(i64::from(cmp_holds_order(op, o))),
                }
            }
            F::GetLock => crate::userlock::get(conn_of(&vals[2]), &v0, &vals[1])?,
            F::ReleaseLock => crate::userlock::release(conn_of(&vals[1]), &v0)?,
            F::ReleaseAllLocks => Value::UInt(crate::userlock::release_all(conn_of(&v0))),
            F::IsFreeLock => crate::userlock::is_free(&v0)?,
            F::IsUsedLock => crate::userlock::is_used(&v0)?,
            F::WaitGtid => crate::gtid_funcs::wait(&v0, &vals[1], &vals[2])?,
            F::GtidSubset => crate::gtid_funcs::subset(&v0, &vals[1])?,
            F::GtidSubtract => crate::gtid_funcs::subtract(&v0, &vals[1])?,
            F::Coalesce | F::IfNull | F::If | F::Lib(_) => Value::Null,
        })
    }

    /// Calls `f` with every column of the block the expression reads:
    /// directly (`E::Col`) or through a correlated subquery's references.
    pub fn for_each_col(&self, f: &mut dyn FnMut(usize)) {
        self.walk(&mut |e| match e {
            E::Col(i) => f(*i),
            E::Subquery {
                refs, outer_len, ..
            } => {
                for &r in refs {
                    if r >= *outer_len {
                        f(r - outer_len);
                    }
                }
            }
            _ => {}
        });
    }

    /// The highest block column the expression reads.
    pub fn max_col(&self) -> Option<usize> {
        let mut m: Option<usize> = None;
        self.for_each_col(&mut |i| m = Some(m.map_or(i, |x: usize| x.max(i))));
        m
    }

    /// Whether evaluating the expression may run a subquery, or write
    /// session state (`@x := ...`, `LAST_INSERT_ID(x)`): either way it
    /// must not be evaluated ahead of the rows (an index bound, a derived
    /// equality) as if it were a constant.
    pub fn has_subquery(&self) -> bool {
        let mut any = false;
        self.walk(&mut |e| {
            any |= match e {
                E::Subquery { .. } => true,
                E::Live(_, op) => matches!(**op, LiveOp::Set(..) | LiveOp::LastInsertId(Some(_))),
                _ => false,
            }
        });
        any
    }

    pub fn walk(&self, f: &mut dyn FnMut(&E)) {
        self.walk_pruned(&mut |e| {
            f(e);
            true
        })
    }

    /// Visits the expression tree top-down; where `f` answers false the
    /// node's children are skipped.
    pub fn walk_pruned(&self, f: &mut dyn FnMut(&E) -> bool) {
        crate::stack::grow(|| self.walk_inner(f))
    }

    fn walk_inner(&self, f: &mut dyn FnMut(&E) -> bool) {
        if !f(self) {
            return;
        }
        match self {
            E::Lit(_) | E::Col(_) | E::Agg(_) | E::Outer(..) | E::Win(..) => {}
            E::Live(_, op) => match &**op {
                LiveOp::Set(_, x) | LiveOp::LastInsertId(Some(x)) => x.walk_pruned(f),
                LiveOp::Get(_) | LiveOp::LastInsertId(None) => {}
            },
            E::Subquery { lhs, .. } => {
                if let Some(x) = lhs {
                    x.walk_pruned(f);
                }
            }
            E::Neg(x)
            | E::Not(x)
            | E::IsNull(x, _)
            | E::IsBool(x, _, _)
            | E::Cast(x, _)
            | E::EnumNum(x, _)
            | E::Collate(x, _)
            | E::Collated(_, x)
            | E::Weigh(_, x) => x.walk_pruned(f),
            E::Arith(_, a, b)
            | E::Cmp(_, a, b)
            | E::And(a, b)
            | E::Or(a, b)
            | E::Xor(a, b)
            | E::Like(a, b, _, _) => {
                a.walk_pruned(f);
                b.walk_pruned(f);
            }
            E::Chain(a, rest) => {
                a.walk_pruned(f);
                for (_, x) in rest {
                    x.walk_pruned(f);
                }
            }
            E::Between(a, b, c, _) => {
                a.walk_pruned(f);
                b.walk_pruned(f);
                c.walk_pruned(f);
            }
            E::InList(a, l, _) => {
                a.walk_pruned(f);
                for x in l {
                    x.walk_pruned(f);
                }
            }
            E::Func(_, l) => {
                for x in l {
                    x.walk_pruned(f);
                }
            }
            E::Case(o, w, e) => {
                if let Some(o) = o {
                    o.walk_pruned(f);
                }
                for (a, b) in w {
                    a.walk_pruned(f);
                    b.walk_pruned(f);
                }
                if let Some(e) = e {
                    e.walk_pruned(f);
                }
            }
        }
    }
}

// ------------------------------------------------------------ collations

/// An expression's collation and coercibility (MySQL's derivation) if it
/// is a string: columns their own (IMPLICIT), literals the connection's
/// `conn` (COERCIBLE), `COLLATE` EXPLICIT, string functions their string
/// arguments'; None for numbers and dates.
pub(crate) fn derive(
    e: &E,
    cols: &[ColInfo],
    aggs: &[AggSpec],
    conn: Collation,
) -> Option<Derivation> {
    let implicit =
        |ty: &ColumnType| type_collation(ty).map(|c| Derivation::new(c, Coercibility::Implicit));
    let all = |es: &mut dyn Iterator<Item = &E>, op: &str| {
        derive_all(es, cols, aggs, conn, op).ok().flatten()
    };
    match e {
        E::Lit(Value::Bytes(_)) => Some(Derivation::new(conn, Coercibility::Coercible)),
        E::Lit(_) => None,
        E::Col(i) => cols.get(*i).and_then(|c| implicit(&c.ty)),
        E::Outer(_, ty) | E::Win(_, ty) => implicit(ty),
        E::Subquery { ty, .. } => subquery_derivation(ty),
        E::Collate(_, c) => Some(Derivation::new(*c, Coercibility::Explicit)),
        E::Collated(_, x) => derive(x, cols, aggs, conn),
        // CAST(x AS CHAR) is in the connection's collation; AS BINARY
        // is `binary`.
        E::Cast(_, ty) => type_collation(ty).map(|c| {
            let c = if ty.is_text() { conn } else { c };
            Derivation::new(c, Coercibility::Implicit)
        }),
        E::Live(..) => Some(Derivation::new(conn, Coercibility::Implicit)),
        E::Agg(i) => {
            let a = aggs.get(*i)?;
            match a.kind {
                AggKind::Min | AggKind::Max | AggKind::GroupConcat => {
                    derive(a.arg.as_ref()?, cols, &[], conn)
                }
                _ => None,
            }
        }
        E::Case(_, whens, els) => all(
            &mut whens.iter().map(|(_, r)| r).chain(els.as_deref()),
            "case",
        ),
        E::Func(f, args) => match f {
            F::Concat => all(&mut args.iter(), "concat"),
            F::ConcatWs => all(&mut args.iter(), "concat_ws"),
            F::Coalesce => all(&mut args.iter(), "coalesce"),
            F::IfNull => all(&mut args.iter(), "ifnull"),
            F::Greatest => all(&mut args.iter(), "greatest"),
            F::Least => all(&mut args.iter(), "least"),
            F::If => all(&mut args.iter().skip(1), "if"),
            F::NullIf
            | F::Upper
            | F::Lower
            | F::Substring
            | F::Trim
            | F::LTrim
            | F::RTrim
            | F::Replace
            | F::Left
            | F::Right
            | F::Reverse => derive(args.first()?, cols, aggs, conn),
            F::Lib(_) => infer(e, cols, aggs).collation().map(|_| {
                args.iter()
                    .find_map(|a| derive(a, cols, aggs, conn))
                    .unwrap_or(Derivation::new(conn, Coercibility::Coercible))
            }),
            _ => None,
        },
        _ => None,
    }
}

/// A subquery column's derivation from its type: a computed string (the
/// legacy collation stands for "no column's") is only coercible.
fn subquery_derivation(ty: &ColumnType) -> Option<Derivation> {
    type_collation(ty).map(|c| {
        let level = if c == ColumnType::LEGACY_COLLATION {
            Coercibility::Coercible
        } else {
            Coercibility::Implicit
        };
        Derivation::new(c, level)
    })
}

/// The derivations of `es` aggregated (1267 naming `op` when they cannot
/// agree); None when none of them is a string.
fn derive_all(
    es: &mut dyn Iterator<Item = &E>,
    cols: &[ColInfo],
    aggs: &[AggSpec],
    conn: Collation,
    op: &str,
) -> SqlResult<Option<Derivation>> {
    let mut acc: Option<Derivation> = None;
    for e in es {
        if let Some(d) = derive(e, cols, aggs, conn) {
            acc = Some(match acc {
                None => d,
                Some(a) => aggregate(a, d, op)?,
            });
        }
    }
    Ok(acc)
}

/// An ORDER BY / GROUP BY / DISTINCT key: a string in a collation other
/// than byte order becomes its weight string, so that keys compare and
/// group as the collation says.
pub fn weigh_key(e: E, cols: &[ColInfo], aggs: &[AggSpec], conn: Collation) -> E {
    if holds_json_value(&e, cols) {
        // JSON values group by JSON equality (1 and 1.0 together).
        return E::Func(F::Lib(Func::JsonGroupKey), vec![e]);
    }
    match derive(&e, cols, aggs, conn) {
        Some(d) if !d.coll.is_plain_bytes() => E::Weigh(d.coll, Box::new(e)),
        _ => e,
    }
}

// ------------------------------------------------------------ type inference

/// The type of a NULL literal: MySQL's `MYSQL_TYPE_NULL` (the protocol
/// layer reports it as type NULL; CREATE TABLE ... SELECT stores it as
/// BINARY(0), as MySQL does). Type aggregation (CASE, COALESCE, UNION)
/// ignores it: `CASE WHEN c THEN NULL ELSE 1 END` is an integer.
pub const NULL_TYPE: ColumnType = ColumnType::Binary { len: 0 };

fn lit_type(v: &Value) -> ColumnType {
    match v {
        Value::Null => NULL_TYPE,
        Value::Int(_) => ColumnType::BigInt { unsigned: false },
        Value::UInt(_) => ColumnType::BigInt { unsigned: true },
        Value::Decimal(d) => ColumnType::Decimal {
            precision: d.total_digits().clamp(1, 65) as u8,
            scale: d.scale(),
        },
        Value::Float(_) => ColumnType::Float,
        Value::Double(_) => ColumnType::Double,
        Value::Bytes(b) => ColumnType::varchar(String::from_utf8_lossy(b).chars().count() as u32),
        Value::Date(_) => ColumnType::Date,
        Value::DateTime(_) => ColumnType::DateTime { fsp: 0 },
        Value::Time(_) => ColumnType::Time { fsp: 0 },
    }
}

fn int_precision(t: &ColumnType) -> u8 {
    match t {
        ColumnType::TinyInt { .. } => 4,
        ColumnType::SmallInt { .. } => 6,
        ColumnType::MediumInt { .. } => 9,
        ColumnType::Int { .. } => 11,
        ColumnType::BigInt { .. } => 20,
        ColumnType::Decimal { precision, .. } => *precision,
        _ => 20,
    }
}

fn numeric_kind(t: &ColumnType) -> u8 {
    // 0 integer, 1 decimal, 2 double/string/other. YEAR and BIT are
    // integers in numeric context, TIME an integer `hhmmss` or, with a
    // fraction, a decimal (MySQL's `Item_field` result types).
    if t.is_integer()
        || matches!(
            t,
            ColumnType::Year | ColumnType::Bit { .. } | ColumnType::Time { fsp: 0 }
        )
    {
        0
    } else if matches!(t, ColumnType::Decimal { .. } | ColumnType::Time { .. }) {
        1
    } else {
        2
    }
}

fn scale_of(t: &ColumnType) -> u8 {
    match t {
        ColumnType::Decimal { scale, .. } | ColumnType::Time { fsp: scale } => *scale,
        _ => 0,
    }
}

const VARCHAR_ANY: ColumnType = ColumnType::varchar(255);

/// The value of a constant expression (literals under arithmetic and
/// pure functions), None when it reads anything else, divides by what is
/// not a non-zero constant (the warning would be raised twice) or fails.
fn const_value(e: &E) -> Option<Value> {
    // A divisor must be a known non-zero constant (no 1365 warning).
    fn operand(op: Arith, x: &E) -> bool {
        pure(x)
            && (!matches!(op, Arith::Div | Arith::IntDiv | Arith::Mod)
                || x.eval(&Row::new(&[], &[]))
                    .is_ok_and(|v| truth(&v) == Some(true)))
    }
    fn pure(e: &E) -> bool {
        // No strings (their conversion to a number warns) and no casts.
        crate::stack::grow(|| match e {
            E::Lit(v) => !matches!(v, Value::Bytes(_)),
            E::Neg(x) => pure(x),
            E::Arith(op, a, b) => pure(a) && operand(*op, b),
            E::Chain(first, rest) => pure(first) && rest.iter().all(|(op, x)| operand(*op, x)),
            E::Func(F::Abs | F::Sign | F::Greatest | F::Least | F::Coalesce | F::IfNull, args) => {
                args.iter().all(pure)
            }
            _ => false,
        })
    }
    if !pure(e) {
        return None;
    }
    e.eval(&Row::new(&[], &[])).ok()
}

/// The type MySQL reports for an expression's result column.
pub fn infer(e: &E, cols: &[ColInfo], aggs: &[AggSpec]) -> ColumnType {
    crate::stack::grow(|| infer_inner(e, cols, aggs))
}

/// The result type of `a op b` (MySQL's `Item_num_op` and the
/// `result_precision` of + - * /): integers stay BIGINT (DIV always is),
/// a float or string operand makes a DOUBLE, otherwise a DECIMAL whose
/// scale is max(s1, s2) for + -, s1 + s2 for *, s1 + 4 for /, and whose
/// precision grows the way MySQL's does (CEIL/FLOOR read it).
fn arith_type(op: Arith, a: (ColumnType, u8), b: (ColumnType, u8)) -> ColumnType {
    let ((ta, pa), (tb, pb)) = (a, b);
    let int = ColumnType::BigInt { unsigned: false };
    let k = numeric_kind(&ta).max(numeric_kind(&tb));
    let (sa, sb) = (scale_of(&ta), scale_of(&tb));
    let dec = |precision: u32, scale: u8| ColumnType::Decimal {
        precision: precision.clamp(1, 65) as u8,
        scale,
    };
    match (op, k) {
        (Arith::IntDiv, _) => int,
        (_, 2) => ColumnType::Double,
        (Arith::Div, _) => dec(u32::from(pa) + u32::from(sb) + 4, (sa + 4).min(30)),
        (_, 0) => int,
        (Arith::Mul, _) => dec(u32::from(pa) + u32::from(pb), (sa + sb).min(30)),
        (Arith::Mod, _) => dec(u32::from(pa.max(pb)), sa.max(sb)),
        _ => {
            let scale = sa.max(sb);
            let int_digits = pa.saturating_sub(sa).max(pb.saturating_sub(sb));
            dec(u32::from(int_digits) + 1 + u32::from(scale), scale)
        }
    }
}

/// An operand's type and its decimal precision (MySQL's
/// `decimal_precision()`): an integer literal has as many digits as it
/// shows, an integer column those of its type, a DECIMAL its M.
fn typed_operand(e: &E, cols: &[ColInfo], aggs: &[AggSpec]) -> (ColumnType, u8) {
    let t = infer(e, cols, aggs);
    let p = match (e, &t) {
        (E::Lit(Value::Int(i)), _) => i.unsigned_abs().to_string().len() as u8,
        (E::Lit(Value::UInt(u)), _) => u.to_string().len() as u8,
        (_, ColumnType::Decimal { precision, .. }) => *precision,
        (_, t) if t.is_integer() => int_precision(t) - u8::from(!t.is_unsigned()),
        _ => 17,
    };
    (t, p)
}

/// The decimal precision of a type alone (see [`typed_operand`]).
fn type_precision(t: &ColumnType) -> u8 {
    match t {
        ColumnType::Decimal { precision, .. } => *precision,
        ColumnType::Time { fsp } => 7 + fsp,
        ColumnType::Year => 4,
        ColumnType::Bit { bits } => (u32::from(*bits) * 3).div_ceil(10) as u8,
        t if t.is_integer() => int_precision(t) - u8::from(!t.is_unsigned()),
        _ => 17,
    }
}

fn infer_inner(e: &E, cols: &[ColInfo], aggs: &[AggSpec]) -> ColumnType {
    let int = ColumnType::BigInt { unsigned: false };
    match e {
        E::Lit(v) => lit_type(v),
        E::Col(i) => cols.get(*i).map_or(VARCHAR_ANY, |c| c.ty.clone()),
        E::Outer(_, ty) => ty.clone(),
        E::Live(live, op) => match &**op {
            LiveOp::Get(name) => crate::uservars::var_type(&live.get(name)),
            LiveOp::Set(_, x) => infer(x, cols, aggs),
            LiveOp::LastInsertId(_) => ColumnType::BigInt { unsigned: true },
        },
        E::Win(_, ty) => ty.clone(),
        E::Subquery { kind, ty, .. } => match kind {
            SubKind::Scalar => ty.clone(),
            _ => int,
        },
        E::Agg(i) => {
            let Some(a) = aggs.get(*i) else { return int };
            let at = a.arg.as_ref().map(|x| infer(x, cols, &[]));
            match a.kind {
                AggKind::CountStar | AggKind::Count => int,
                AggKind::BitAnd | AggKind::BitOr => ColumnType::BigInt { unsigned: true },
                AggKind::GroupConcat => ColumnType::text(ColumnType::REGULAR_BYTES),
                AggKind::Min | AggKind::Max => at.unwrap_or(int),
                AggKind::Sum | AggKind::Avg => {
                    let t = at.unwrap_or(int);
                    match numeric_kind(&t) {
                        2 => ColumnType::Double,
                        _ => {
                            let p = type_precision(&t);
                            let s = scale_of(&t);
                            if a.kind == AggKind::Sum {
                                ColumnType::Decimal {
                                    precision: (p + 22).min(65),
                                    scale: s,
                                }
                            } else {
                                ColumnType::Decimal {
                                    precision: (p + 4).min(65),
                                    scale: (s + 4).min(30),
                                }
                            }
                        }
                    }
                }
            }
        }
        E::EnumNum(..) => ColumnType::BigInt { unsigned: true },
        E::Collate(x, c) => infer(x, cols, aggs).with_collation(*c),
        E::Collated(_, x) => infer(x, cols, aggs),
        E::Weigh(_, x) => infer(x, cols, aggs),
        E::Neg(x) => {
            let t = infer(x, cols, aggs);
            // MySQL (Item_func_neg::resolve_type): minus a constant
            // integer whose value is negative is a DECIMAL, its negation
            // might not fit a BIGINT.
            let negative = |v: Value| matches!(v, Value::Int(i) if i < 0);
            if t.is_integer() && const_value(x).is_some_and(negative) {
                ColumnType::Decimal {
                    precision: int_precision(&t),
                    scale: 0,
                }
            } else if t.is_integer() || matches!(t, ColumnType::Decimal { .. }) {
                t
            } else {
                // A string, temporal or NULL operand is negated as a double.
                ColumnType::Double
            }
        }
        E::Arith(op, a, b) => arith_type(
            *op,
            typed_operand(a, cols, aggs),
            typed_operand(b, cols, aggs),
        ),
        E::Chain(first, rest) => {
            rest.iter()
                .fold(typed_operand(first, cols, aggs), |a, (op, x)| {
                    let t = arith_type(*op, a, typed_operand(x, cols, aggs));
                    let p = type_precision(&t);
                    (t, p)
                })
                .0
        }
        E::Not(_)
        | E::Cmp(..)
        | E::And(..)
        | E::Or(..)
        | E::Xor(..)
        | E::IsNull(..)
        | E::IsBool(..)
        | E::Between(..)
        | E::InList(..)
        | E::Like(..) => int,
        E::Cast(_, t) => t.clone(),
        E::Case(_, whens, els) => {
            let mut ts: Vec<ColumnType> = whens.iter().map(|(_, r)| infer(r, cols, aggs)).collect();
            ts.push(els.as_ref().map_or(NULL_TYPE, |x| infer(x, cols, aggs)));
            merge_column_types(&ts)
        }
        E::Func(f, args) => {
            let first = || args.first().map_or(VARCHAR_ANY, |a| infer(a, cols, aggs));
            match f {
                F::Length | F::CharLength | F::Locate | F::Sign => int,
                F::Crc32 => ColumnType::BigInt { unsigned: true },
                F::Sleep
                | F::JsonCmp(..)
                | F::GetLock
                | F::ReleaseLock
                | F::ReleaseAllLocks
                | F::IsFreeLock
                | F::WaitGtid
                | F::GtidSubset => ColumnType::BigInt { unsigned: false },
                F::GtidSubtract => ColumnType::Text {
                    max_bytes: u32::MAX,
                    coll: Collation::Utf8mb4_0900AiCi,
                },
                F::IsUsedLock => ColumnType::BigInt { unsigned: true },
                F::Coalesce | F::IfNull | F::Greatest | F::Least => merge_types(args, cols, aggs),
                F::If => merge_types(args.get(1..).unwrap_or(&[]), cols, aggs),
                // NULLIF(a, b) is a or NULL: a's type (NULL when a is).
                F::NullIf => first(),
                F::Abs => match first() {
                    t if t.is_integer() || matches!(t, ColumnType::Decimal { .. }) => t,
                    _ => ColumnType::Double,
                },
                F::Round | F::Truncate => {
                    let t = first();
                    let d = match args.get(1).map(const_value) {
                        None => Some(0),
                        Some(Some(v)) => crate::func::val::int(&v),
                        // A digit count known only per row: MySQL keeps a
                        // DECIMAL's scale and makes anything else a DOUBLE.
                        Some(None) if t.is_integer() => return ColumnType::Double,
                        Some(None) => None,
                    };
                    crate::func::round_type(&t, d, *f == F::Truncate)
                }
                F::Lib(fun) => {
                    let tys: Vec<ColumnType> = args.iter().map(|a| infer(a, cols, aggs)).collect();
                    let info: Vec<crate::func::ArgInfo> = args
                        .iter()
                        .zip(tys)
                        .map(|(a, ty)| crate::func::ArgInfo {
                            ty,
                            lit: match a {
                                E::Lit(v) => Some(v),
                                _ => None,
                            },
                        })
                        .collect();
                    crate::func::ret_type(*fun, &info)
                }
                F::Floor | F::Ceil | F::Mod => {
                    let t = first();
                    if t.is_integer() {
                        int
                    } else if let ColumnType::Decimal { precision, scale } = t {
                        if matches!(f, F::Floor | F::Ceil) {
                            // MySQL (Item_func_int_val::resolve_type): the
                            // integer digits, one more when a fraction can
                            // carry into them; BIGINT when that fits 18.
                            let digits = precision.saturating_sub(scale) + u8::from(scale > 0);
                            if digits <= 18 {
                                int
                            } else {
                                ColumnType::Decimal {
                                    precision: digits,
                                    scale: 0,
                                }
                            }
                        } else {
                            t
                        }
                    } else {
                        ColumnType::Double
                    }
                }
                F::Pow | F::Sqrt | F::Rand => ColumnType::Double,
                _ => VARCHAR_ANY,
            }
        }
    }
}

/// The type of a result that is one of `args` (IF, IFNULL, COALESCE,
/// GREATEST, LEAST), after MySQL's type aggregation: integers stay
/// integers, DECIMAL absorbs integers, a double absorbs exact numbers, a
/// string absorbs everything, DATE and DATETIME give DATETIME; NULL
/// literals do not count.
fn merge_types(args: &[E], cols: &[ColInfo], aggs: &[AggSpec]) -> ColumnType {
    let ts: Vec<ColumnType> = args.iter().map(|a| infer(a, cols, aggs)).collect();
    merge_column_types(&ts)
}

/// MySQL's type aggregation of several values into one column (CASE
/// branches, COALESCE arguments, UNION columns): NULL-typed values
/// (`NULL`, `7 - NULL` folded, `MIN(NULL)`) do not count; all NULL gives
/// NULL.
pub fn merge_column_types(all: &[ColumnType]) -> ColumnType {
    let ts: Vec<ColumnType> = all.iter().filter(|t| **t != NULL_TYPE).cloned().collect();
    let Some(first) = ts.first().cloned() else {
        return NULL_TYPE;
    };
    if ts.iter().all(|t| *t == first) {
        return first;
    }
    let str_len = |t: &ColumnType| -> u32 {
        match t {
            ColumnType::Char { len, .. }
            | ColumnType::Varchar { len, .. }
            | ColumnType::Binary { len }
            | ColumnType::VarBinary { len } => *len,
            ColumnType::Decimal { precision, .. } => u32::from(*precision) + 2,
            ColumnType::Date => 10,
            ColumnType::DateTime { .. } | ColumnType::Timestamp { .. } => 26,
            ColumnType::Float | ColumnType::Double => 23,
            _ => 21,
        }
    };
    if ts.iter().any(|t| t.is_string()) {
        // The first collation a character column brings (literals carry
        // the legacy one).
        let coll = ts
            .iter()
            .filter_map(ColumnType::collation)
            .find(|&c| c != ColumnType::LEGACY_COLLATION)
            .unwrap_or(ColumnType::LEGACY_COLLATION);
        if ts
            .iter()
            .any(|t| matches!(t, ColumnType::Text { .. } | ColumnType::Blob { .. }))
        {
            return ColumnType::text(ColumnType::LONG_BYTES).with_collation(coll);
        }
        return ColumnType::varchar(ts.iter().map(str_len).max().unwrap_or(255))
            .with_collation(coll);
    }
    if ts.iter().all(|t| t.is_temporal()) {
        if ts.iter().all(|t| *t == ColumnType::Date) {
            return ColumnType::Date;
        }
        let fsp = ts
            .iter()
            .map(|t| match t {
                ColumnType::DateTime { fsp } | ColumnType::Timestamp { fsp } => *fsp,
                _ => 0,
            })
            .max()
            .unwrap_or(0);
        return ColumnType::DateTime { fsp };
    }
    if ts.iter().any(|t| t.is_temporal()) {
        return ColumnType::varchar(ts.iter().map(str_len).max().unwrap_or(255));
    }
    if ts.iter().all(|t| t.is_integer()) {
        let unsigned = ts.iter().all(|t| t.is_unsigned());
        let widest = ts
            .iter()
            .cloned()
            .max_by_key(int_precision)
            .unwrap_or(first);
        return match widest {
            ColumnType::TinyInt { .. } => ColumnType::TinyInt { unsigned },
            ColumnType::SmallInt { .. } => ColumnType::SmallInt { unsigned },
            ColumnType::MediumInt { .. } => ColumnType::MediumInt { unsigned },
            ColumnType::Int { .. } => ColumnType::Int { unsigned },
            _ => ColumnType::BigInt { unsigned },
        };
    }
    if ts
        .iter()
        .any(|t| matches!(t, ColumnType::Double | ColumnType::Float))
    {
        return ColumnType::Double;
    }
    let scale = ts.iter().map(scale_of).max().unwrap_or(0);
    let int_digits = ts
        .iter()
        .map(|t| int_precision(t).saturating_sub(scale_of(t)))
        .max()
        .unwrap_or(1);
    ColumnType::Decimal {
        precision: (int_digits + scale).clamp(1, 65),
        scale,
    }
}

/// Whether the expression can produce NULL (conservatively true).
pub fn nullable(e: &E, cols: &[ColInfo]) -> bool {
    crate::stack::grow(|| nullable_inner(e, cols))
}

fn nullable_inner(e: &E, cols: &[ColInfo]) -> bool {
    match e {
        E::Lit(v) => v.is_null(),
        E::Col(i) => cols.get(*i).is_none_or(|c| c.nullable),
        E::Agg(_) => true,
        E::IsNull(..) | E::IsBool(..) => false,
        E::Subquery {
            kind: SubKind::Exists,
            ..
        } => false,
        E::Func(F::Length | F::CharLength, a) => a.iter().any(|x| nullable(x, cols)),
        E::Arith(Arith::Add | Arith::Sub | Arith::Mul, a, b) | E::Cmp(_, a, b) => {
            nullable(a, cols) || nullable(b, cols)
        }
        _ => true,
    }
}

/// [`conform`] for a value stored into a column of a temporary table
/// (the rows of UNION / INTERSECT / EXCEPT and VALUES): MySQL stores a
/// DECIMAL into a string column through a double (`Field_str::store_decimal`),
/// so an AVG of 0 beside a string is '0', not '0.0000'.
pub fn conform_stored(v: Value, ty: &ColumnType) -> Value {
    match v {
        Value::Decimal(d) if ty.is_string() => conform(Value::Double(d.to_f64()), ty),
        other => conform(other, ty),
    }
}

/// A GROUP BY or ORDER BY key as MySQL compares it: a DECIMAL expression
/// at its result scale. (MySQL's sort keys and grouping temporary table
/// hold the value rounded to the item's decimals, so `1.5 / c` keys of
/// -0.0000000150 and -0.0000020146 are both 0.00000 and tie.) Plain
/// columns already have their scale; other types are left alone.
pub fn key_at_result_scale(e: E, cols: &[ColInfo], aggs: &[AggSpec]) -> E {
    if matches!(e, E::Col(_) | E::Lit(_)) {
        return e;
    }
    match infer(&e, cols, aggs) {
        ty @ ColumnType::Decimal { .. } if !is_unfixed_scale(&ty) => E::Cast(Box::new(e), ty),
        _ => e,
    }
}

fn is_unfixed_scale(ty: &ColumnType) -> bool {
    matches!(
        ty,
        ColumnType::Decimal {
            precision: 65,
            scale: 30,
            ..
        }
    )
}

/// An ORDER BY key as MySQL sorts it: [`key_at_result_scale`], and an
/// ENUM or SET column by its number (declaration order), not its text.
pub fn order_key(e: E, cols: &[ColInfo], aggs: &[AggSpec], conn: Collation) -> E {
    if holds_json_value(&e, cols) {
        // A JSON value sorts in MySQL's order of JSON values.
        return E::Func(F::Lib(Func::JsonSortKey), vec![e]);
    }
    match enum_as_number(e, cols) {
        n @ E::EnumNum(..) => n,
        other => weigh_key(key_at_result_scale(other, cols, aggs), cols, aggs, conn),
    }
}

/// Makes `v` fit the class of `ty` (what the protocol will encode).
pub fn conform(v: Value, ty: &ColumnType) -> Value {
    if v.is_null() {
        return v;
    }
    match ty {
        t if t.is_integer() => match v {
            Value::Int(_) | Value::UInt(_) => v,
            other => cast_value(
                other,
                &ColumnType::BigInt {
                    unsigned: t.is_unsigned(),
                },
            )
            .unwrap_or(Value::Null),
        },
        // A DECIMAL result shows (and a derived table stores) the
        // column's scale: MySQL rounds `CASE ... THEN 3.0 ELSE 0.001 END`'s
        // 3.0 to 3.000 and 1/3's quotient 0.333333333 to 0.3333.
        ColumnType::Decimal { scale, .. } => match v {
            Value::Decimal(d) if d.scale() == *scale => Value::Decimal(d),
            // DECIMAL(65,30) is the type of a value whose scale the
            // column does not fix (a user variable, MySQL's
            // DECIMAL_MAX_SCALE): it shows its own scale (`SET @d = 1.50;
            // SELECT @d` is 1.50). A CAST to DECIMAL(65,30) already made
            // its value scale 30.
            Value::Decimal(d) if is_unfixed_scale(ty) => Value::Decimal(d),
            Value::Decimal(d) => Value::Decimal(d.round_to_scale(*scale)),
            other => other
                .to_decimal()
                .map(|d| Value::Decimal(d.round_to_scale(*scale)))
                .unwrap_or_else(|| match other {
                    Value::Bytes(b) => Decimal::parse_prefix(&b)
                        .map(|p| Value::Decimal(p.value.round_to_scale(*scale)))
                        .unwrap_or(Value::Null),
                    _ => Value::Null,
                }),
        },
        ColumnType::Float => match v {
            Value::Float(_) => v,
            other => Value::Float(other.to_f64().unwrap_or(0.0) as f32),
        },
        ColumnType::Double => match v {
            Value::Double(_) => v,
            other => Value::Double(other.to_f64().unwrap_or(0.0)),
        },
        ColumnType::Date => match v {
            Value::Date(_) => v,
            Value::DateTime(t) => Value::Date(t.date()),
            other => Value::Bytes(bytes_of(&other)),
        },
        ColumnType::DateTime { .. } | ColumnType::Timestamp { .. } => match v {
            Value::DateTime(_) => v,
            Value::Date(d) => Value::DateTime(d.to_datetime()),
            other => Value::Bytes(bytes_of(&other)),
        },
        ColumnType::Time { .. } => match v {
            Value::Time(_) => v,
            other => Value::Bytes(bytes_of(&other)),
        },
        ColumnType::Year | ColumnType::Bit { .. } => match v {
            Value::UInt(_) => v,
            Value::Int(i) => Value::UInt(i.max(0) as u64),
            other => Value::Bytes(bytes_of(&other)),
        },
        _ => match v {
            Value::Bytes(_) => v,
            other => Value::Bytes(bytes_of(&other)),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn like_patterns() {
        assert!(like(b"abc", b"a%", b'\\'));
        assert!(like(b"abc", b"%b%", b'\\'));
        assert!(like(b"abc", b"a_c", b'\\'));
        assert!(!like(b"abc", b"a_", b'\\'));
        assert!(like(b"a%c", b"a\\%c", b'\\'));
        assert!(!like(b"abc", b"a\\%c", b'\\'));
        assert!(like(b"", b"%", b'\\'));
        assert!(like(b"10-20", b"%0%", b'\\'));
    }

    #[test]
    fn arithmetic() {
        assert_eq!(
            arith(Arith::Add, &Value::Int(1), &Value::Int(2)).unwrap(),
            Value::Int(3)
        );
        assert!(arith(Arith::Add, &Value::Int(i64::MAX), &Value::UInt(u64::MAX)).is_err());
        // MySQL's division keeps whole 9-digit groups of fraction; the
        // result column's scale (div_precision_increment = 4 here) is
        // applied when the value is produced (`conform`), not by `arith`.
        assert_eq!(
            arith(Arith::Div, &Value::Int(1), &Value::Int(3))
                .unwrap()
                .to_string(),
            "0.333333333"
        );
        assert_eq!(
            arith(Arith::Div, &Value::Int(1), &Value::Int(0)).unwrap(),
            Value::Null
        );
    }
}
