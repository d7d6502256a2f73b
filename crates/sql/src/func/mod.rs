//! # The function library
//!
//! MySQL's built-in functions beyond the handful `expr.rs` evaluates
//! itself. `expr.rs` compiles a call into `E::Func(F::Lib(fun), args)`:
//! [`lookup`] maps a name to a [`Func`] and its argument count range,
//! [`call`] evaluates it on argument values, [`ret_type`] gives the result
//! type MySQL reports. Calls with a syntax of their own (`DATE_ADD(d,
//! INTERVAL n unit)`, `d + INTERVAL n unit`, `EXTRACT(unit FROM d)`,
//! `TIMESTAMPDIFF(unit, a, b)`, `x REGEXP p`, `col->'$.a'`, the bit
//! operators) are turned into the same `Func`s by the compiler.
//!
//! The modules depend only on `quire_engine` values and on each other's
//! helpers, never on `expr.rs`: `date` (calendar), `string`, `math`,
//! `hash`, `json`, `regex`, with [`val`] for MySQL's implicit conversions
//! and [`warn`] for the per-statement warning channel (division by zero,
//! bad dates, oversized results).
//!
//! Every function evaluates all its arguments first (the lazy ones, IF,
//! COALESCE, BENCHMARK, stay in `expr.rs`), so a function here is a pure
//! map from values to a value, a warning or an error; none may panic on
//! any input.

pub mod date;
pub mod json;
pub mod math;
pub mod val;
pub mod warn;

mod hash;
mod regex;
mod string;

use quire_engine::{ColumnType, Value};

use crate::SqlResult;
use date::{Part, Unit};

/// A library function (see [`lookup`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Func {
    // date and time
    DateFormat,
    StrToDate,
    /// DATE_ADD (false) / DATE_SUB (true): args (date, amount).
    DateAdd(Unit, bool),
    DateDiff,
    /// TIMESTAMPDIFF(unit, a, b): args (a, b).
    TimestampDiff(Unit),
    Extract(Unit),
    Part(Part),
    Week,
    YearWeek,
    FromDays,
    MakeDate,
    UnixTimestamp,
    FromUnixtime,
    ConvertTz,
    SecToTime,
    // strings
    SubstringIndex,
    FindInSet,
    Insert,
    Locate,
    Format,
    Unhex,
    ToBase64,
    FromBase64,
    Elt,
    Field,
    Quote,
    Space,
    Ascii,
    Ord,
    Char,
    Bin,
    Oct,
    Conv,
    Strcmp,
    Soundex,
    Repeat,
    Lpad,
    Rpad,
    // numbers
    Unary(math::Unary),
    Log,
    Atan2,
    Pi,
    /// RAND(seed); true when the seed is a constant (sequence per statement).
    RandSeed(bool),
    Bit(math::BitOp),
    BitNot,
    BitCount,
    // hashes and ids
    Md5,
    Sha1,
    Sha2,
    Uuid,
    UuidShort,
    UuidToBin,
    BinToUuid,
    IsUuid,
    // JSON; the u64 masks mark arguments that are JSON values themselves
    JsonExtract(bool),
    /// ORDER BY's key for a JSON value (`json::sort_key`); not callable
    /// by name.
    JsonSortKey,
    /// GROUP BY's key for a JSON value (`json::group_key`); not callable
    /// by name.
    JsonGroupKey,
    JsonUnquote,
    JsonQuote,
    JsonObject(u64),
    JsonArray(u64),
    JsonModify(json::Modify, u64),
    JsonRemove,
    JsonContains,
    JsonLength(bool),
    JsonKeys(bool),
    JsonValid,
    JsonType(bool),
    JsonDepth(bool),
    CastJson,
    /// A comparison's result as a JSON boolean (`JSON_ARRAY(1 = 1)` is
    /// `[true]`); wrapped around such arguments by the compiler.
    JsonBool,
    // regular expressions
    RegexpLike,
    RegexpReplace,
    RegexpSubstr,
    RegexpInstr,
    /// BENCHMARK(n, expr): evaluated lazily by `expr.rs`.
    Benchmark,
    // later additions
    BitLength,
    MakeSet,
    ExportSet,
    InetAton,
    InetNtoa,
    TimeDiff,
    /// ADDTIME (false) / SUBTIME (true).
    AddTime(bool),
    MakeTime,
    TimeFormat,
    Timestamp,
    JsonContainsPath(bool),
    /// JSON_MERGE_PRESERVE (false) / JSON_MERGE_PATCH (true).
    JsonMerge(bool),
    JsonPretty,
    JsonArrayInsert(u64),
    AnyValue,
}

/// The function a name calls and its argument count range, for the
/// functions with ordinary call syntax.
pub fn lookup(name: &str) -> Option<(Func, usize, usize)> {
    use Func::*;
    const MANY: usize = usize::MAX;
    Some(match name {
        "DATE_FORMAT" => (DateFormat, 2, 2),
        "STR_TO_DATE" => (StrToDate, 2, 2),
        "DATEDIFF" => (DateDiff, 2, 2),
        "YEAR" => (Part(date::Part::Year), 1, 1),
        "MONTH" => (Part(date::Part::Month), 1, 1),
        "DAY" | "DAYOFMONTH" => (Part(date::Part::Day), 1, 1),
        "HOUR" => (Part(date::Part::Hour), 1, 1),
        "MINUTE" => (Part(date::Part::Minute), 1, 1),
        "SECOND" => (Part(date::Part::Second), 1, 1),
        "MICROSECOND" => (Part(date::Part::Microsecond), 1, 1),
        "QUARTER" => (Part(date::Part::Quarter), 1, 1),
        "DAYOFWEEK" => (Part(date::Part::DayOfWeek), 1, 1),
        "DAYOFYEAR" => (Part(date::Part::DayOfYear), 1, 1),
        "WEEKDAY" => (Part(date::Part::Weekday), 1, 1),
        "WEEKOFYEAR" => (Part(date::Part::WeekOfYear), 1, 1),
        "DAYNAME" => (Part(date::Part::DayName), 1, 1),
        "MONTHNAME" => (Part(date::Part::MonthName), 1, 1),
        "LAST_DAY" => (Part(date::Part::LastDay), 1, 1),
        "DATE" => (Part(date::Part::Date), 1, 1),
        "TIME" => (Part(date::Part::Time), 1, 1),
        "TO_DAYS" => (Part(date::Part::ToDays), 1, 1),
        "TO_SECONDS" => (Part(date::Part::ToSeconds), 1, 1),
        "TIME_TO_SEC" => (Part(date::Part::TimeToSec), 1, 1),
        "WEEK" => (Week, 1, 2),
        "YEARWEEK" => (YearWeek, 1, 2),
        "FROM_DAYS" => (FromDays, 1, 1),
        "MAKEDATE" => (MakeDate, 2, 2),
        "UNIX_TIMESTAMP" => (UnixTimestamp, 1, 1),
        "FROM_UNIXTIME" => (FromUnixtime, 1, 2),
        "CONVERT_TZ" => (ConvertTz, 3, 3),
        "SEC_TO_TIME" => (SecToTime, 1, 1),
        "SUBSTRING_INDEX" => (SubstringIndex, 3, 3),
        "FIND_IN_SET" => (FindInSet, 2, 2),
        "INSERT" => (Insert, 4, 4),
        "LOCATE" => (Locate, 2, 3),
        "FORMAT" => (Format, 2, 3),
        "UNHEX" => (Unhex, 1, 1),
        "TO_BASE64" => (ToBase64, 1, 1),
        "FROM_BASE64" => (FromBase64, 1, 1),
        "ELT" => (Elt, 2, MANY),
        "FIELD" => (Field, 2, MANY),
        "QUOTE" => (Quote, 1, 1),
        "SPACE" => (Space, 1, 1),
        "ASCII" => (Ascii, 1, 1),
        "ORD" => (Ord, 1, 1),
        "CHAR" => (Char, 1, MANY),
        "BIN" => (Bin, 1, 1),
        "OCT" => (Oct, 1, 1),
        "CONV" => (Conv, 3, 3),
        "STRCMP" => (Strcmp, 2, 2),
        "SOUNDEX" => (Soundex, 1, 1),
        "REPEAT" => (Repeat, 2, 2),
        "LPAD" => (Lpad, 3, 3),
        "RPAD" => (Rpad, 3, 3),
        "EXP" => (Unary(math::Unary::Exp), 1, 1),
        "LN" => (Unary(math::Unary::Ln), 1, 1),
        "LOG2" => (Unary(math::Unary::Log2), 1, 1),
        "LOG10" => (Unary(math::Unary::Log10), 1, 1),
        "SIN" => (Unary(math::Unary::Sin), 1, 1),
        "COS" => (Unary(math::Unary::Cos), 1, 1),
        "TAN" => (Unary(math::Unary::Tan), 1, 1),
        "ASIN" => (Unary(math::Unary::Asin), 1, 1),
        "ACOS" => (Unary(math::Unary::Acos), 1, 1),
        "COT" => (Unary(math::Unary::Cot), 1, 1),
        "DEGREES" => (Unary(math::Unary::Degrees), 1, 1),
        "RADIANS" => (Unary(math::Unary::Radians), 1, 1),
        "ATAN" => (Unary(math::Unary::Atan), 1, 2),
        "ATAN2" => (Atan2, 2, 2),
        "LOG" => (Log, 1, 2),
        "PI" => (Pi, 0, 0),
        "BIT_COUNT" => (BitCount, 1, 1),
        "MD5" => (Md5, 1, 1),
        "SHA1" | "SHA" => (Sha1, 1, 1),
        "SHA2" => (Sha2, 2, 2),
        "UUID" => (Uuid, 0, 0),
        "UUID_SHORT" => (UuidShort, 0, 0),
        "UUID_TO_BIN" => (UuidToBin, 1, 2),
        "BIN_TO_UUID" => (BinToUuid, 1, 2),
        "IS_UUID" => (IsUuid, 1, 1),
        "JSON_EXTRACT" => (JsonExtract(false), 2, MANY),
        "JSON_UNQUOTE" => (JsonUnquote, 1, 1),
        "JSON_QUOTE" => (JsonQuote, 1, 1),
        "JSON_OBJECT" => (JsonObject(0), 0, MANY),
        "JSON_ARRAY" => (JsonArray(0), 0, MANY),
        "JSON_SET" => (JsonModify(json::Modify::Set, 0), 3, MANY),
        "JSON_INSERT" => (JsonModify(json::Modify::Insert, 0), 3, MANY),
        "JSON_REPLACE" => (JsonModify(json::Modify::Replace, 0), 3, MANY),
        "JSON_ARRAY_APPEND" => (JsonModify(json::Modify::ArrayAppend, 0), 3, MANY),
        "JSON_REMOVE" => (JsonRemove, 2, MANY),
        "JSON_CONTAINS" => (JsonContains, 2, 3),
        "JSON_LENGTH" => (JsonLength(false), 1, 2),
        "JSON_KEYS" => (JsonKeys(false), 1, 2),
        "JSON_VALID" => (JsonValid, 1, 1),
        "JSON_TYPE" => (JsonType(false), 1, 1),
        "JSON_DEPTH" => (JsonDepth(false), 1, 1),
        "REGEXP_LIKE" => (RegexpLike, 2, 3),
        "REGEXP_REPLACE" => (RegexpReplace, 3, 6),
        "REGEXP_SUBSTR" => (RegexpSubstr, 2, 5),
        "REGEXP_INSTR" => (RegexpInstr, 2, 6),
        "BENCHMARK" => (Benchmark, 2, 2),
        "BIT_LENGTH" => (BitLength, 1, 1),
        "MAKE_SET" => (MakeSet, 2, MANY),
        "EXPORT_SET" => (ExportSet, 3, 5),
        "INET_ATON" => (InetAton, 1, 1),
        "INET_NTOA" => (InetNtoa, 1, 1),
        "TIMEDIFF" => (TimeDiff, 2, 2),
        "ADDTIME" => (AddTime(false), 2, 2),
        "SUBTIME" => (AddTime(true), 2, 2),
        "MAKETIME" => (MakeTime, 3, 3),
        "TIME_FORMAT" => (TimeFormat, 2, 2),
        "TIMESTAMP" => (Timestamp, 1, 2),
        "JSON_CONTAINS_PATH" => (JsonContainsPath(false), 3, MANY),
        "JSON_MERGE" | "JSON_MERGE_PRESERVE" => (JsonMerge(false), 2, MANY),
        "JSON_MERGE_PATCH" => (JsonMerge(true), 2, MANY),
        "JSON_PRETTY" => (JsonPretty, 1, 1),
        "JSON_ARRAY_INSERT" => (JsonArrayInsert(0), 3, MANY),
        "ANY_VALUE" => (AnyValue, 1, 1),
        _ => return None,
    })
}

/// MySQL 8.0 built-ins quire knows by name but does not evaluate: a call
/// is error 1235 naming the function, never a wrong answer (unknown names
/// are MySQL's 1305).
pub fn known_unsupported(name: &str) -> bool {
    matches!(
        name,
        "PERIOD_ADD"
            | "PERIOD_DIFF"
            | "GET_FORMAT"
            | "COMPRESS"
            | "UNCOMPRESS"
            | "UNCOMPRESSED_LENGTH"
            | "AES_ENCRYPT"
            | "AES_DECRYPT"
            | "RANDOM_BYTES"
            | "STATEMENT_DIGEST"
            | "STATEMENT_DIGEST_TEXT"
            | "INET6_ATON"
            | "INET6_NTOA"
            | "IS_IPV4"
            | "IS_IPV6"
            | "IS_IPV4_COMPAT"
            | "IS_IPV4_MAPPED"
            | "JSON_SEARCH"
            | "JSON_OVERLAPS"
            | "JSON_STORAGE_SIZE"
            | "JSON_STORAGE_FREE"
            | "JSON_SCHEMA_VALID"
            | "JSON_SCHEMA_VALIDATION_REPORT"
            | "JSON_VALUE"
            | "JSON_ARRAYAGG"
            | "JSON_OBJECTAGG"
            | "LOAD_FILE"
            | "WEIGHT_STRING"
            | "NAME_CONST"
            | "ICU_VERSION"
            | "VALIDATE_PASSWORD_STRENGTH"
            | "STD"
            | "STDDEV"
            | "STDDEV_POP"
            | "STDDEV_SAMP"
            | "VARIANCE"
            | "VAR_POP"
            | "VAR_SAMP"
            | "BIT_XOR"
            | "LAG"
            | "LEAD"
            | "ST_ASTEXT"
            | "ST_GEOMFROMTEXT"
            | "MASTER_POS_WAIT"
            | "SOURCE_POS_WAIT"
            | "WAIT_FOR_EXECUTED_GTID_SET"
            | "GTID_SUBSET"
            | "GTID_SUBTRACT"
    )
}

impl Func {
    /// Whether the function returns a JSON value (nested, not quoted, when
    /// it is an argument of another JSON function).
    pub fn returns_json(self) -> bool {
        matches!(
            self,
            Func::JsonExtract(_)
                | Func::JsonObject(_)
                | Func::JsonArray(_)
                | Func::JsonModify(..)
                | Func::JsonRemove
                | Func::JsonKeys(_)
                | Func::CastJson
                | Func::JsonBool
                | Func::JsonMerge(_)
                | Func::JsonArrayInsert(_)
        )
    }

    /// The same function with `mask` marking its JSON-valued arguments.
    pub fn with_json_mask(self, mask: u64) -> Func {
        match self {
            Func::JsonObject(_) => Func::JsonObject(mask),
            Func::JsonArray(_) => Func::JsonArray(mask),
            Func::JsonModify(k, _) => Func::JsonModify(k, mask),
            Func::JsonArrayInsert(_) => Func::JsonArrayInsert(mask),
            other => other,
        }
    }

    /// The same function told whether its first argument holds a JSON
    /// value (a JSON column, or a JSON function's result): such a value
    /// is printed text or, read from a table as stored, a binary document
    /// (`types::jsonb`; first byte < 0x20, which no printed text has), so
    /// the readers below may walk it in place. Any other argument (a
    /// string that may start with any byte) is always parsed as text.
    pub fn with_stored_arg(self, stored: bool) -> Func {
        match self {
            Func::JsonExtract(_) => Func::JsonExtract(stored),
            Func::JsonContainsPath(_) => Func::JsonContainsPath(stored),
            Func::JsonLength(_) => Func::JsonLength(stored),
            Func::JsonKeys(_) => Func::JsonKeys(stored),
            Func::JsonType(_) => Func::JsonType(stored),
            Func::JsonDepth(_) => Func::JsonDepth(stored),
            other => other,
        }
    }

    /// Whether the function reads its first argument's JSON in place
    /// when it is stored binary (see [`Func::with_stored_arg`]).
    pub fn reads_stored_json(self) -> bool {
        matches!(
            self,
            Func::JsonExtract(true)
                | Func::JsonContainsPath(true)
                | Func::JsonLength(true)
                | Func::JsonKeys(true)
                | Func::JsonType(true)
                | Func::JsonDepth(true)
        )
    }

    /// Whether the function builds JSON from SQL values (its boolean
    /// arguments become JSON `true`/`false`).
    pub fn builds_json(self) -> bool {
        matches!(
            self,
            Func::JsonObject(_)
                | Func::JsonArray(_)
                | Func::JsonModify(..)
                | Func::JsonArrayInsert(_)
        )
    }

    /// Whether the compiler appends `max_allowed_packet` as a last,
    /// hidden argument.
    pub fn wants_packet_limit(self) -> bool {
        matches!(
            self,
            Func::Repeat | Func::Lpad | Func::Rpad | Func::Space | Func::Insert
        )
    }
}

fn arg(a: &[Value], i: usize) -> &Value {
    a.get(i).unwrap_or(&Value::Null)
}

fn null_in(a: &[Value]) -> bool {
    a.iter().any(Value::is_null)
}

/// Evaluates `f` on its (already evaluated) arguments.
pub fn call(f: Func, a: &[Value]) -> SqlResult<Value> {
    use Func::*;
    let a0 = arg(a, 0);
    let a1 = arg(a, 1);
    let a2 = arg(a, 2);
    Ok(match f {
        DateFormat => date::date_format(a0, a1),
        StrToDate => date::str_to_date(a0, a1),
        DateAdd(unit, sub) => date::date_add(unit, sub, a0, a1),
        DateDiff => date::datediff(a0, a1),
        TimestampDiff(unit) => date::timestampdiff(unit, a0, a1),
        Extract(unit) => date::extract(unit, a0),
        Part(p) => date::part(p, a0),
        Week | YearWeek => {
            let mode = match a.get(1) {
                Some(Value::Null) => return Ok(Value::Null),
                Some(m) => val::int(m).unwrap_or(0),
                None => 0,
            };
            if f == Week {
                date::week(a0, mode)
            } else {
                date::yearweek(a0, mode)
            }
        }
        FromDays => date::from_days(a0),
        MakeDate => date::makedate(a0, a1),
        UnixTimestamp => date::unix_timestamp(a0),
        FromUnixtime => {
            let t = date::from_unixtime(a0);
            match (a.get(1), &t) {
                (None, _) => t,
                (Some(fmt), Value::DateTime(dt)) if !fmt.is_null() => {
                    Value::text(&date::format(dt, &val::text(fmt)))
                }
                _ => Value::Null,
            }
        }
        ConvertTz => date::convert_tz(a0, a1, a2),
        SecToTime => date::sec_to_time(a0),
        TimeDiff => date::timediff(a0, a1),
        AddTime(sub) => date::addtime(a0, a1, sub),
        MakeTime => date::maketime(a0, a1, a2),
        TimeFormat => date::time_format(a0, a1),
        Timestamp => date::timestamp(a0, a.get(1)),
        AnyValue => a0.clone(),
        MakeSet => string::make_set(a),
        JsonMerge(patch) => json::merge(a, patch)?,
        JsonArrayInsert(mask) => json::array_insert(a, mask)?,
        _ if null_in(a)
            && !matches!(
                f,
                Elt | Field
                    | Quote
                    | Char
                    | JsonObject(_)
                    | JsonArray(_)
                    | JsonModify(..)
                    | JsonValid
                    | Benchmark
                    | Uuid
                    | UuidShort
                    | Pi
            ) =>
        {
            Value::Null
        }
        SubstringIndex => string::substring_index(a0, a1, a2),
        FindInSet => string::find_in_set(a0, a1),
        Insert => string::insert(a0, a1, a2, arg(a, 3), a.get(4)),
        Locate => string::locate(a0, a1, a.get(2)),
        Format => string::format(a0, a1),
        Unhex => string::unhex(a0),
        ToBase64 => string::to_base64(a0),
        FromBase64 => string::from_base64(a0),
        Elt => string::elt(a),
        Field => string::field(a),
        Quote => string::quote(a0),
        Space => string::space(a0, a.get(1)),
        Ascii => string::ascii(a0),
        Ord => string::ord(a0),
        Char => string::char_fn(a),
        Bin => string::conv(a0, 10, 2),
        Oct => string::conv(a0, 10, 8),
        Conv => match (val::int(a1), val::int(a2)) {
            (Some(x), Some(y)) => string::conv(a0, x, y),
            _ => Value::Null,
        },
        Strcmp => string::strcmp(a0, a1),
        Soundex => string::soundex(a0),
        Repeat => string::repeat(a0, a1, a.get(2)),
        Lpad | Rpad => string::pad(f == Lpad, a0, a1, a2, a.get(3)),
        Unary(math::Unary::Atan) if a.len() == 2 => math::atan2(a0, a1),
        Unary(u) => math::unary(u, a0)?,
        Log => math::log(a),
        Atan2 => math::atan2(a0, a1),
        Pi => Value::Double(std::f64::consts::PI),
        // A constant seed's sequence is kept per call site by `expr.rs`.
        RandSeed(_) => math::rand_seeded(a0),
        Bit(op) => math::bit(op, a0, a1),
        BitNot => math::bit_not(a0),
        BitCount => math::bit_count(a0),
        Md5 => hash::md5(a0),
        Sha1 => hash::sha1(a0),
        Sha2 => hash::sha2(a0, a1),
        Uuid => hash::uuid(),
        UuidShort => hash::uuid_short(),
        UuidToBin => hash::uuid_to_bin(a0, a.get(1))?,
        BinToUuid => hash::bin_to_uuid(a0, a.get(1))?,
        IsUuid => hash::is_uuid(a0),
        JsonExtract(st) => json::extract(a, st)?,
        JsonSortKey => json::sort_key(a0)?,
        JsonGroupKey => json::group_key(a0)?,
        JsonUnquote => json::unquote(a0)?,
        JsonQuote => json::quote(a0),
        JsonObject(mask) => json::object(a, mask)?,
        JsonArray(mask) => json::array(a, mask)?,
        JsonModify(kind, mask) => json::modify(kind, a, mask)?,
        JsonRemove => json::remove(a)?,
        JsonContainsPath(st) => json::contains_path(a, st)?,
        JsonPretty => json::pretty(a0)?,
        BitLength => string::bit_length(a0),
        ExportSet => string::export_set(a),
        InetAton => string::inet_aton(a0),
        InetNtoa => string::inet_ntoa(a0),
        JsonContains => json::contains_fn(a)?,
        JsonLength(st) => json::length(a, st)?,
        JsonKeys(st) => json::keys(a, st)?,
        JsonValid => json::valid(a0),
        JsonType(st) => json::type_of(a0, st)?,
        JsonDepth(st) => json::depth(a0, st)?,
        CastJson => json::cast(a0)?,
        JsonBool => match val::int(a0) {
            Some(0) => Value::text("false"),
            Some(_) => Value::text("true"),
            None => Value::Null,
        },
        RegexpLike => regex::like(a)?,
        RegexpReplace => regex::replace(a)?,
        RegexpSubstr => regex::substr(a)?,
        RegexpInstr => regex::instr(a)?,
        Benchmark => Value::Int(0),
    })
}

/// What the type inference knows of one argument.
pub struct ArgInfo<'a> {
    pub ty: ColumnType,
    /// The argument's value when it is a constant.
    pub lit: Option<&'a Value>,
}

const LONGTEXT: ColumnType = ColumnType::text(ColumnType::LONG_BYTES);

fn varchar(len: u32) -> ColumnType {
    ColumnType::varchar(len)
}

/// The result type MySQL reports for `f` on arguments `a`.
pub fn ret_type(f: Func, a: &[ArgInfo]) -> ColumnType {
    use Func::*;
    let int = ColumnType::Int { unsigned: false };
    let bigint = ColumnType::BigInt { unsigned: false };
    let ubigint = ColumnType::BigInt { unsigned: true };
    let t0 = a.first().map(|x| x.ty.clone());
    match f {
        DateFormat => varchar(64),
        StrToDate => match a.get(1).and_then(|x| x.lit) {
            Some(v) if !v.is_null() => match date::str_to_date_kind(&val::text(v)) {
                date::StrToDateKind::Date => ColumnType::Date,
                date::StrToDateKind::DateTime(fsp) => ColumnType::DateTime { fsp },
                date::StrToDateKind::Time => varchar(10),
            },
            _ => ColumnType::DateTime { fsp: 6 },
        },
        DateAdd(unit, _) => date::date_add_type(unit, &t0.unwrap_or(varchar(29))),
        DateDiff | TimestampDiff(_) | Extract(_) => bigint,
        Part(p) => match p {
            date::Part::DayName | date::Part::MonthName => varchar(9),
            date::Part::LastDay | date::Part::Date => ColumnType::Date,
            date::Part::Time => varchar(15),
            date::Part::ToDays | date::Part::ToSeconds | date::Part::TimeToSec => bigint,
            _ => int,
        },
        Week | YearWeek => int,
        FromDays | MakeDate => ColumnType::Date,
        UnixTimestamp => {
            let fsp = match a.first() {
                Some(ArgInfo {
                    lit: Some(Value::Bytes(b)),
                    ..
                }) => {
                    // A constant string: as many decimals as it has digits
                    // after the seconds' point (at most 6).
                    let s = String::from_utf8_lossy(b);
                    match (
                        date::to_dt_quiet(&Value::Bytes(b.clone())),
                        s.rsplit_once('.'),
                    ) {
                        (Some(_), Some((_, frac))) => frac
                            .trim_end()
                            .chars()
                            .take_while(char::is_ascii_digit)
                            .count()
                            .min(6) as u8,
                        _ => 0,
                    }
                }
                Some(ArgInfo { lit: Some(v), .. }) => match date::to_dt_quiet(v) {
                    Some(t) if t.micro != 0 => 6,
                    _ => 0,
                },
                Some(ArgInfo {
                    ty: ColumnType::DateTime { fsp } | ColumnType::Timestamp { fsp },
                    ..
                }) => *fsp,
                Some(ArgInfo {
                    ty: ColumnType::Date,
                    ..
                }) => 0,
                Some(ArgInfo { ty, .. }) if ty.is_integer() => 0,
                _ => 6,
            };
            if fsp == 0 {
                bigint
            } else {
                ColumnType::Decimal {
                    precision: 11 + fsp,
                    scale: fsp,
                }
            }
        }
        FromUnixtime => {
            if a.len() == 2 {
                return varchar(64);
            }
            let fsp = match t0 {
                Some(ColumnType::Decimal { scale, .. }) => scale.min(6),
                Some(ColumnType::Double | ColumnType::Float) => 6,
                Some(ColumnType::Varchar { .. } | ColumnType::Char { .. }) => 6,
                _ => 0,
            };
            ColumnType::DateTime { fsp }
        }
        ConvertTz => match t0 {
            Some(ColumnType::DateTime { fsp } | ColumnType::Timestamp { fsp }) => {
                ColumnType::DateTime { fsp }
            }
            _ => ColumnType::DateTime { fsp: 0 },
        },
        SecToTime => varchar(17),
        FindInSet | Locate | Ascii | Field | Strcmp => bigint,
        Ord => ubigint,
        Char | Unhex | FromBase64 => ColumnType::VarBinary { len: 65_535 },
        Repeat | Lpad | Rpad | Space | Insert | Elt | Quote | SubstringIndex | Format
        | ToBase64 | Soundex => varchar(255),
        Bin | Oct | Conv => varchar(64),
        Unary(_) | Log | Atan2 | Pi | RandSeed(_) => ColumnType::Double,
        Bit(_) | BitNot => ubigint,
        BitCount => bigint,
        Md5 => varchar(32),
        Sha1 => varchar(40),
        Sha2 => varchar(128),
        Uuid | BinToUuid => varchar(36),
        UuidShort => ubigint,
        UuidToBin => ColumnType::VarBinary { len: 16 },
        IsUuid | JsonValid | JsonContains => int,
        JsonSortKey | JsonGroupKey => ColumnType::VarBinary { len: 65_535 },
        JsonLength(_) | JsonDepth(_) => int,
        JsonType(_) => varchar(16),
        // MySQL types the results of the functions that make JSON values
        // JSON (protocol type 245); quoting and unquoting give text.
        JsonExtract(_) | JsonObject(_) | JsonArray(_) | JsonModify(..) | JsonRemove
        | JsonKeys(_) | CastJson => ColumnType::Json,
        JsonUnquote | JsonQuote | JsonBool => LONGTEXT,
        RegexpLike | RegexpInstr => int,
        RegexpReplace | RegexpSubstr => LONGTEXT,
        Benchmark => int,
        BitLength => bigint,
        MakeSet | ExportSet => varchar(255),
        InetAton => ubigint,
        InetNtoa => varchar(15),
        TimeDiff | MakeTime | TimeFormat => varchar(17),
        AddTime(_) => match t0 {
            Some(ColumnType::DateTime { fsp } | ColumnType::Timestamp { fsp }) => {
                ColumnType::DateTime { fsp }
            }
            Some(ColumnType::Date) => ColumnType::DateTime { fsp: 0 },
            _ => varchar(29),
        },
        Timestamp => ColumnType::DateTime {
            fsp: match t0 {
                Some(ColumnType::DateTime { fsp } | ColumnType::Timestamp { fsp }) => fsp,
                _ => 0,
            },
        },
        JsonContainsPath(_) => int,
        JsonMerge(_) | JsonArrayInsert(_) => ColumnType::Json,
        JsonPretty => LONGTEXT,
        AnyValue => t0.unwrap_or(varchar(255)),
    }
}

/// ROUND/TRUNCATE's result type: exact arguments stay exact with the
/// scale cut to the digits asked for (a constant `d`), doubles stay
/// doubles.
pub fn round_type(arg: &ColumnType, d: Option<i64>, truncate: bool) -> ColumnType {
    match arg {
        t if t.is_integer() => ColumnType::BigInt {
            unsigned: t.is_unsigned(),
        },
        // MySQL (Item_func_round::resolve_type): scale d (0 for d < 0, at
        // most 30), even above the argument's (ROUND(1.5, 3) is 1.500);
        // the precision follows the scale, one digit more when rounding
        // can carry.
        ColumnType::Decimal { precision, scale } => {
            let ds = match d {
                Some(d) => d.clamp(0, 30) as u8,
                None => *scale,
            };
            let delta = i32::from(*scale) - i32::from(ds);
            let inc = i32::from(delta > 0 && !truncate);
            ColumnType::Decimal {
                precision: (i32::from(*precision) - delta + inc).clamp(1, 65) as u8,
                scale: ds,
            }
        }
        _ => ColumnType::Double,
    }
}
