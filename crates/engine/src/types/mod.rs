//! # Column types, values, and their encodings
//!
//! This module is the engine's vocabulary for data. It answers four
//! questions, each in its own submodule:
//!
//! 1. **What can a column hold?** [`ColumnType`] lists the MySQL 8.0 types
//!    quire supports, with their parameters, their `SHOW CREATE TABLE`
//!    spelling ([`ColumnType::name`]), DDL validation with MySQL's errors
//!    ([`ColumnType::validate`]) and a stable catalog serialization
//!    ([`ColumnType::encode`] / [`ColumnType::decode`]).
//! 2. **What is a value?** [`Value`] (module [`value`]), with exact
//!    [`Decimal`] arithmetic (module [`decimal`]), calendar [`Date`] /
//!    [`DateTime`] (module [`datetime`]), MySQL's text rendering and SQL
//!    comparison ([`compare`]).
//! 3. **May this value go into that column?** [`coerce()`] (module
//!    [`coerce`](mod@coerce)) applies MySQL's strict-mode conversions and
//!    raises the same error codes, SQLSTATEs and messages (1048, 1264,
//!    1265, 1292, 1366, 1406).
//! 4. **How is it stored?** [`keycodec`] makes memcomparable index keys
//!    (byte order = SQL order, NULL first); [`rowcodec`] makes compact,
//!    validated row images.
//!
//! ## Supported types
//!
//! | type | parameters | canonical [`Value`] | notes |
//! |---|---|---|---|
//! | TINYINT, SMALLINT, MEDIUMINT, INT, BIGINT | `unsigned` | `Int` / `UInt` | MySQL ranges; display widths are not kept (8.0.19+ no longer shows them) |
//! | DECIMAL(M,D) | 1 ≤ M ≤ 65, 0 ≤ D ≤ 30, D ≤ M | `Decimal` at scale D | exact, half-away-from-zero rounding |
//! | FLOAT, DOUBLE | — | `Float` / `Double` | no `FLOAT(M,D)`, no UNSIGNED (deprecated in MySQL) |
//! | CHAR(n) | n ≤ 255 characters | `Bytes` | trailing spaces removed on store (PAD_CHAR_TO_FULL_LENGTH off) |
//! | VARCHAR(n) | n ≤ 16383 characters | `Bytes` | utf8mb4: 65535 bytes / 4 |
//! | TINYTEXT, TEXT, MEDIUMTEXT, LONGTEXT | `max_bytes` 255 / 65535 / 16777215 / 4294967295 | `Bytes` | limits in bytes |
//! | BINARY(n), VARBINARY(n) | n ≤ 255 / 65535 bytes | `Bytes` | BINARY right-padded with 0x00 |
//! | TINYBLOB, BLOB, MEDIUMBLOB, LONGBLOB | `max_bytes` as TEXT | `Bytes` | |
//! | DATE | — | `Date` | 0000-01-01 .. 9999-12-31, no zero dates |
//! | DATETIME(fsp), TIMESTAMP(fsp) | 0 ≤ fsp ≤ 6 | `DateTime` | TIMESTAMP: no time-zone conversion (see [`datetime`]) |
//!
//! ## Character data
//!
//! Text is utf8mb4 stored as UTF-8 bytes; CHAR/VARCHAR lengths count
//! characters, TEXT/BLOB limits count bytes. All strings compare as bytes
//! (a binary collation). CHAR compares trailing-space-insensitively (its
//! values never end in spaces). VARCHAR and TEXT compare **NO PAD**
//! (`'a' < 'a '`), like MySQL's `utf8mb4_0900_bin`; MySQL's `utf8mb4_bin`
//! would treat them as equal. This is the one deliberate difference from
//! `utf8mb4_bin`: byte order makes index keys simple and exact.
//!
//! ## Layout
//!
//! | file | contents |
//! |---|---|
//! | `mod.rs` | [`ColumnType`] |
//! | `decimal.rs` | [`Decimal`] |
//! | `datetime.rs` | [`Date`], [`DateTime`], date text and number parsing |
//! | `value.rs` | [`Value`], [`compare`], [`format_double`], [`format_float`] |
//! | `coerce.rs` | [`coerce()`] and MySQL error constructors |
//! | `keycodec.rs` | [`encode_key`], [`decode_key`], [`key_prefix_successor`] |
//! | `rowcodec.rs` | [`encode_row`], [`decode_row`] |
//! | `canon.rs` | checks shared by the two codecs |

mod canon;
pub mod coerce;
mod coerce_kinds;
pub mod collation;
pub mod datetime;
pub mod decimal;
pub mod enumset;
pub mod json;
pub mod jsonb;
pub mod keycodec;
pub mod rowcodec;
pub(crate) mod store_err;
#[cfg(test)]
pub(crate) mod testutil;
pub mod time;
pub mod value;

pub use coerce::{
    coerce, err_bad_null, err_bad_temporal, err_data_too_long, err_data_truncated,
    err_incorrect_value, err_no_default, err_out_of_range,
};
pub use collation::{Charset, Collation};
pub use datetime::{Date, DateTime};
pub use decimal::{Decimal, DecimalError};
pub use enumset::Members;
pub use keycodec::{
    decode_key, decode_key_prefix, encode_key, encode_parts, key_prefix, key_prefix_successor,
    try_encode_key,
};
pub use rowcodec::{
    decode_row, decode_row_prefix, decode_row_prefix_as, decode_row_typed, decode_row_typed_as,
    encode_row, try_encode_row, JsonForm,
};
pub use time::Time;
pub use value::{compare, format_double, format_float, Value};

use crate::error::EngineError;

/// A column's data type, with MySQL's parameters.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ColumnType {
    TinyInt {
        unsigned: bool,
    },
    SmallInt {
        unsigned: bool,
    },
    MediumInt {
        unsigned: bool,
    },
    Int {
        unsigned: bool,
    },
    BigInt {
        unsigned: bool,
    },
    /// `DECIMAL(precision, scale)`: `precision` significant digits, `scale`
    /// of them after the point.
    Decimal {
        precision: u8,
        scale: u8,
    },
    Float,
    Double,
    /// `CHAR(len)`, `len` in characters (0..=255), in collation `coll`.
    Char {
        len: u32,
        coll: Collation,
    },
    /// `VARCHAR(len)`, `len` in characters (0..=16383 for utf8mb4).
    Varchar {
        len: u32,
        coll: Collation,
    },
    /// TINYTEXT / TEXT / MEDIUMTEXT / LONGTEXT by their byte limit
    /// ([`ColumnType::TINY_BYTES`] ...).
    Text {
        max_bytes: u32,
        coll: Collation,
    },
    /// TINYBLOB / BLOB / MEDIUMBLOB / LONGBLOB by their byte limit.
    Blob {
        max_bytes: u32,
    },
    /// `BINARY(len)`, `len` in bytes (0..=255).
    Binary {
        len: u32,
    },
    /// `VARBINARY(len)`, `len` in bytes (0..=65535).
    VarBinary {
        len: u32,
    },
    Date,
    /// `DATETIME(fsp)`, fractional-second precision 0..=6.
    DateTime {
        fsp: u8,
    },
    /// `TIMESTAMP(fsp)`, fractional-second precision 0..=6.
    Timestamp {
        fsp: u8,
    },
    /// `YEAR`: 1901..=2155, or 0 (shown `0000`).
    Year,
    /// `TIME(fsp)`: a signed duration within ±838:59:59 (module [`time`]).
    Time {
        fsp: u8,
    },
    /// `BIT(bits)`, 1..=64 bits, held as an unsigned number.
    Bit {
        bits: u8,
    },
    /// `ENUM('a','b',...)`: one member (module [`enumset`]).
    Enum {
        members: Members,
    },
    /// `SET('a','b',...)`: a subset of at most 64 members.
    Set {
        members: Members,
    },
    /// `JSON`: a valid document, kept in MySQL's printed form (module
    /// [`json`]).
    Json,
}

/// Catalog tags of [`ColumnType::encode`]; never renumber.
mod tag {
    pub const TINYINT: u8 = 1;
    pub const SMALLINT: u8 = 2;
    pub const MEDIUMINT: u8 = 3;
    pub const INT: u8 = 4;
    pub const BIGINT: u8 = 5;
    pub const DECIMAL: u8 = 6;
    pub const FLOAT: u8 = 7;
    pub const DOUBLE: u8 = 8;
    pub const CHAR: u8 = 9;
    pub const VARCHAR: u8 = 10;
    pub const TEXT: u8 = 11;
    pub const BLOB: u8 = 12;
    pub const BINARY: u8 = 13;
    pub const VARBINARY: u8 = 14;
    pub const DATE: u8 = 15;
    pub const DATETIME: u8 = 16;
    pub const TIMESTAMP: u8 = 17;
    pub const YEAR: u8 = 18;
    pub const TIME: u8 = 19;
    pub const BIT: u8 = 20;
    pub const ENUM: u8 = 21;
    pub const SET: u8 = 22;
    pub const JSON: u8 = 23;
    /// A prefix before CHAR/VARCHAR/TEXT: the collation id (u16 LE) follows.
    pub const COLLATED: u8 = 24;
}

impl ColumnType {
    /// TINYTEXT / TINYBLOB byte limit.
    pub const TINY_BYTES: u32 = 255;
    /// TEXT / BLOB byte limit.
    pub const REGULAR_BYTES: u32 = 65_535;
    /// MEDIUMTEXT / MEDIUMBLOB byte limit.
    pub const MEDIUM_BYTES: u32 = 16_777_215;
    /// LONGTEXT / LONGBLOB byte limit.
    pub const LONG_BYTES: u32 = 4_294_967_295;
    /// Longest VARCHAR in characters (utf8mb4, 65535 bytes / 4).
    pub const MAX_VARCHAR_CHARS: u32 = 16_383;

    /// The collation of columns made before collations existed (catalog
    /// entries without one) and of internal tables: byte order, NO PAD,
    /// which is how every string compared then.
    pub const LEGACY_COLLATION: Collation = Collation::Utf8mb4_0900Bin;

    /// `CHAR(len)` in the legacy collation (internal tables, tests).
    pub const fn char(len: u32) -> ColumnType {
        ColumnType::Char {
            len,
            coll: Self::LEGACY_COLLATION,
        }
    }

    /// `VARCHAR(len)` in the legacy collation (internal tables, tests).
    pub const fn varchar(len: u32) -> ColumnType {
        ColumnType::Varchar {
            len,
            coll: Self::LEGACY_COLLATION,
        }
    }

    /// TEXT of `max_bytes` in the legacy collation (internal tables, tests).
    pub const fn text(max_bytes: u32) -> ColumnType {
        ColumnType::Text {
            max_bytes,
            coll: Self::LEGACY_COLLATION,
        }
    }

    /// The collation of a character-string column; None for other types.
    pub fn collation(&self) -> Option<Collation> {
        match *self {
            ColumnType::Char { coll, .. }
            | ColumnType::Varchar { coll, .. }
            | ColumnType::Text { coll, .. } => Some(coll),
            _ => None,
        }
    }

    /// The same type in collation `coll` (character strings only).
    pub fn with_collation(self, coll: Collation) -> ColumnType {
        match self {
            ColumnType::Char { len, .. } => ColumnType::Char { len, coll },
            ColumnType::Varchar { len, .. } => ColumnType::Varchar { len, coll },
            ColumnType::Text { max_bytes, .. } => ColumnType::Text { max_bytes, coll },
            other => other,
        }
    }

    /// Bytes one character may take in this column (its character set's
    /// maximum; 1 for byte strings).
    pub fn max_char_bytes(&self) -> u32 {
        self.collation().map_or(1, |c| c.charset().max_len())
    }

    /// The smallest TEXT/BLOB byte limit holding `bytes` bytes, as MySQL
    /// picks a type for `TEXT(M)` / `BLOB(M)`; `None` beyond LONGTEXT.
    pub fn lob_limit_for(bytes: u64) -> Option<u32> {
        [
            Self::TINY_BYTES,
            Self::REGULAR_BYTES,
            Self::MEDIUM_BYTES,
            Self::LONG_BYTES,
        ]
        .into_iter()
        .find(|&limit| u64::from(limit) >= bytes)
    }

    /// The type as `SHOW CREATE TABLE` prints it: `int`, `int unsigned`,
    /// `decimal(10,2)`, `varchar(255)`, `mediumtext`, `datetime(6)`, ...
    pub fn name(&self) -> String {
        let int = |base: &str, unsigned: bool| {
            if unsigned {
                format!("{base} unsigned")
            } else {
                base.to_string()
            }
        };
        let lob = |prefix: &str, max_bytes: u32| {
            let size = if max_bytes <= Self::TINY_BYTES {
                "tiny"
            } else if max_bytes <= Self::REGULAR_BYTES {
                ""
            } else if max_bytes <= Self::MEDIUM_BYTES {
                "medium"
            } else {
                "long"
            };
            format!("{size}{prefix}")
        };
        let temporal = |base: &str, fsp: u8| {
            if fsp == 0 {
                base.to_string()
            } else {
                format!("{base}({fsp})")
            }
        };
        match *self {
            ColumnType::TinyInt { unsigned } => int("tinyint", unsigned),
            ColumnType::SmallInt { unsigned } => int("smallint", unsigned),
            ColumnType::MediumInt { unsigned } => int("mediumint", unsigned),
            ColumnType::Int { unsigned } => int("int", unsigned),
            ColumnType::BigInt { unsigned } => int("bigint", unsigned),
            ColumnType::Decimal { precision, scale } => format!("decimal({precision},{scale})"),
            ColumnType::Float => "float".to_string(),
            ColumnType::Double => "double".to_string(),
            ColumnType::Char { len, .. } => format!("char({len})"),
            ColumnType::Varchar { len, .. } => format!("varchar({len})"),
            ColumnType::Text { max_bytes, .. } => lob("text", max_bytes),
            ColumnType::Blob { max_bytes } => lob("blob", max_bytes),
            ColumnType::Binary { len } => format!("binary({len})"),
            ColumnType::VarBinary { len } => format!("varbinary({len})"),
            ColumnType::Date => "date".to_string(),
            ColumnType::DateTime { fsp } => temporal("datetime", fsp),
            ColumnType::Timestamp { fsp } => temporal("timestamp", fsp),
            ColumnType::Year => "year".to_string(),
            ColumnType::Time { fsp } => temporal("time", fsp),
            ColumnType::Bit { bits } => format!("bit({bits})"),
            ColumnType::Enum { ref members } => {
                format!("enum({})", enumset::quoted_list(members))
            }
            ColumnType::Set { ref members } => format!("set({})", enumset::quoted_list(members)),
            ColumnType::Json => "json".to_string(),
        }
    }

    /// CHAR, VARCHAR, TEXT, BINARY, VARBINARY and BLOB.
    pub fn is_string(&self) -> bool {
        matches!(
            self,
            ColumnType::Char { .. }
                | ColumnType::Varchar { .. }
                | ColumnType::Text { .. }
                | ColumnType::Blob { .. }
                | ColumnType::Binary { .. }
                | ColumnType::VarBinary { .. }
        )
    }

    /// Character strings (utf8mb4): CHAR, VARCHAR, TEXT.
    pub fn is_text(&self) -> bool {
        matches!(
            self,
            ColumnType::Char { .. } | ColumnType::Varchar { .. } | ColumnType::Text { .. }
        )
    }

    /// ENUM and SET: text values stored as numbers.
    pub fn is_enum_or_set(&self) -> bool {
        matches!(self, ColumnType::Enum { .. } | ColumnType::Set { .. })
    }

    /// TINYINT .. BIGINT, signed or not.
    pub fn is_integer(&self) -> bool {
        self.integer_range().is_some()
    }

    /// Integers, DECIMAL, FLOAT and DOUBLE.
    pub fn is_numeric(&self) -> bool {
        self.is_integer()
            || matches!(
                self,
                ColumnType::Decimal { .. } | ColumnType::Float | ColumnType::Double
            )
    }

    /// DATE, DATETIME and TIMESTAMP.
    pub fn is_temporal(&self) -> bool {
        matches!(
            self,
            ColumnType::Date | ColumnType::DateTime { .. } | ColumnType::Timestamp { .. }
        )
    }

    /// The unsigned flag of an integer type (false for other types).
    pub fn is_unsigned(&self) -> bool {
        matches!(
            self,
            ColumnType::TinyInt { unsigned: true }
                | ColumnType::SmallInt { unsigned: true }
                | ColumnType::MediumInt { unsigned: true }
                | ColumnType::Int { unsigned: true }
                | ColumnType::BigInt { unsigned: true }
        )
    }

    /// Inclusive value range of an integer type; `None` for other types.
    pub fn integer_range(&self) -> Option<(i128, i128)> {
        let (bits, unsigned) = match *self {
            ColumnType::TinyInt { unsigned } => (8, unsigned),
            ColumnType::SmallInt { unsigned } => (16, unsigned),
            ColumnType::MediumInt { unsigned } => (24, unsigned),
            ColumnType::Int { unsigned } => (32, unsigned),
            ColumnType::BigInt { unsigned } => (64, unsigned),
            _ => return None,
        };
        Some(if unsigned {
            (0, (1i128 << bits) - 1)
        } else {
            (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
        })
    }

    /// Checks the parameters of a column definition the way `CREATE TABLE`
    /// does, with MySQL's errors:
    ///
    /// * 1426 `Too-big precision 66 specified for 'c'. Maximum is 65.`
    ///   (also for fsp > 6, maximum 6);
    /// * 1425 `Too big scale 31 specified for column 'c'. Maximum is 30.`;
    /// * 1427 `For float(M,D), double(M,D) or decimal(M,D), M must be >= D (column 'c').`;
    /// * 1074 `Column length too big for column 'c' (max = 16383); use BLOB or TEXT instead`;
    /// * 1063 `Incorrect column specifier for column 'c'` (DECIMAL(0), or a
    ///   TEXT/BLOB byte limit that is not one of the four sizes).
    pub fn validate(&self, column: &str) -> Result<(), EngineError> {
        let too_big_precision = |got: u32, max: u32| {
            EngineError::new(
                1426,
                "42000",
                format!("Too-big precision {got} specified for '{column}'. Maximum is {max}."),
            )
        };
        let too_long = |max: u32| {
            EngineError::new(
                1074,
                "42000",
                format!(
                    "Column length too big for column '{column}' (max = {max}); use BLOB or TEXT instead"
                ),
            )
        };
        let bad_spec = || {
            EngineError::new(
                1063,
                "42000",
                format!("Incorrect column specifier for column '{column}'"),
            )
        };
        match *self {
            ColumnType::Decimal { precision, scale } => {
                if precision > decimal::MAX_PRECISION {
                    return Err(too_big_precision(
                        u32::from(precision),
                        u32::from(decimal::MAX_PRECISION),
                    ));
                }
                if scale > decimal::MAX_SCALE {
                    return Err(EngineError::new(
                        1425,
                        "42000",
                        format!(
                            "Too big scale {scale} specified for column '{column}'. Maximum is {}.",
                            decimal::MAX_SCALE
                        ),
                    ));
                }
                if scale > precision {
                    return Err(EngineError::new(
                        1427,
                        "42000",
                        format!(
                            "For float(M,D), double(M,D) or decimal(M,D), M must be >= D (column '{column}')."
                        ),
                    ));
                }
                if precision == 0 {
                    return Err(bad_spec());
                }
            }
            ColumnType::Char { len, .. } | ColumnType::Binary { len } if len > 255 => {
                return Err(too_long(255));
            }
            ColumnType::Varchar { len, coll } if len > 65_535 / coll.charset().max_len() => {
                return Err(too_long(65_535 / coll.charset().max_len()));
            }
            ColumnType::VarBinary { len } if len > 65_535 => return Err(too_long(65_535)),
            ColumnType::Text { max_bytes, .. } | ColumnType::Blob { max_bytes }
                if ![
                    Self::TINY_BYTES,
                    Self::REGULAR_BYTES,
                    Self::MEDIUM_BYTES,
                    Self::LONG_BYTES,
                ]
                .contains(&max_bytes) =>
            {
                return Err(bad_spec());
            }
            ColumnType::DateTime { fsp }
            | ColumnType::Timestamp { fsp }
            | ColumnType::Time { fsp }
                if fsp > 6 =>
            {
                return Err(too_big_precision(u32::from(fsp), 6));
            }
            ColumnType::Bit { bits } if !(1..=64).contains(&bits) => {
                return Err(EngineError::new(
                    1439,
                    "42000",
                    format!("Display width out of range for column '{column}' (max = 64)"),
                ));
            }
            ColumnType::Enum { ref members } => {
                validate_members(column, "ENUM", members, enumset::MAX_ENUM_MEMBERS)?
            }
            ColumnType::Set { ref members } => {
                validate_members(column, "SET", members, enumset::MAX_SET_MEMBERS)?;
                if let Some(m) = members.iter().find(|m| m.contains(',')) {
                    return Err(EngineError::new(
                        1367,
                        "22007",
                        format!("Illegal set '{m}' value found during parsing"),
                    ));
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// Appends the catalog form: a tag byte, then parameters (flags and
    /// precisions one byte each, lengths u32 little-endian). Stable across
    /// versions: tags are never reused.
    pub fn encode(&self, out: &mut Vec<u8>) {
        if let Some(coll) = self.collation().filter(|&c| c != Self::LEGACY_COLLATION) {
            out.push(tag::COLLATED);
            out.extend_from_slice(&coll.id().to_le_bytes());
        }
        let mut int = |t: u8, unsigned: bool| {
            out.push(t);
            out.push(u8::from(unsigned));
        };
        match *self {
            ColumnType::TinyInt { unsigned } => int(tag::TINYINT, unsigned),
            ColumnType::SmallInt { unsigned } => int(tag::SMALLINT, unsigned),
            ColumnType::MediumInt { unsigned } => int(tag::MEDIUMINT, unsigned),
            ColumnType::Int { unsigned } => int(tag::INT, unsigned),
            ColumnType::BigInt { unsigned } => int(tag::BIGINT, unsigned),
            ColumnType::Decimal { precision, scale } => {
                out.extend_from_slice(&[tag::DECIMAL, precision, scale]);
            }
            ColumnType::Float => out.push(tag::FLOAT),
            ColumnType::Double => out.push(tag::DOUBLE),
            ColumnType::Char { len, .. } => put_u32(out, tag::CHAR, len),
            ColumnType::Varchar { len, .. } => put_u32(out, tag::VARCHAR, len),
            ColumnType::Text { max_bytes, .. } => put_u32(out, tag::TEXT, max_bytes),
            ColumnType::Blob { max_bytes } => put_u32(out, tag::BLOB, max_bytes),
            ColumnType::Binary { len } => put_u32(out, tag::BINARY, len),
            ColumnType::VarBinary { len } => put_u32(out, tag::VARBINARY, len),
            ColumnType::Date => out.push(tag::DATE),
            ColumnType::DateTime { fsp } => out.extend_from_slice(&[tag::DATETIME, fsp]),
            ColumnType::Timestamp { fsp } => out.extend_from_slice(&[tag::TIMESTAMP, fsp]),
            ColumnType::Year => out.push(tag::YEAR),
            ColumnType::Time { fsp } => out.extend_from_slice(&[tag::TIME, fsp]),
            ColumnType::Bit { bits } => out.extend_from_slice(&[tag::BIT, bits]),
            ColumnType::Enum { ref members } => {
                out.push(tag::ENUM);
                enumset::encode_members(members, out);
            }
            ColumnType::Set { ref members } => {
                out.push(tag::SET);
                enumset::encode_members(members, out);
            }
            ColumnType::Json => out.push(tag::JSON),
        }
    }

    /// Reads [`ColumnType::encode`]'s form from the front of `buf`,
    /// advancing it. Rejects unknown tags and invalid parameters.
    pub fn decode(buf: &mut &[u8]) -> Result<ColumnType, String> {
        let mut t = take_u8(buf)?;
        let mut coll = Self::LEGACY_COLLATION;
        if t == tag::COLLATED {
            let id = u16::from(take_u8(buf)?) | (u16::from(take_u8(buf)?) << 8);
            coll = Collation::by_id(id).ok_or_else(|| format!("unknown collation id {id}"))?;
            t = take_u8(buf)?;
            if ![tag::CHAR, tag::VARCHAR, tag::TEXT].contains(&t) {
                return Err(format!("collation on column type tag {t}"));
            }
        }
        let ty = match t {
            tag::TINYINT | tag::SMALLINT | tag::MEDIUMINT | tag::INT | tag::BIGINT => {
                let unsigned = match take_u8(buf)? {
                    0 => false,
                    1 => true,
                    b => return Err(format!("bad unsigned flag {b}")),
                };
                match t {
                    tag::TINYINT => ColumnType::TinyInt { unsigned },
                    tag::SMALLINT => ColumnType::SmallInt { unsigned },
                    tag::MEDIUMINT => ColumnType::MediumInt { unsigned },
                    tag::INT => ColumnType::Int { unsigned },
                    _ => ColumnType::BigInt { unsigned },
                }
            }
            tag::DECIMAL => {
                let precision = take_u8(buf)?;
                let scale = take_u8(buf)?;
                ColumnType::Decimal { precision, scale }
            }
            tag::FLOAT => ColumnType::Float,
            tag::DOUBLE => ColumnType::Double,
            tag::CHAR => ColumnType::Char {
                len: take_u32(buf)?,
                coll,
            },
            tag::VARCHAR => ColumnType::Varchar {
                len: take_u32(buf)?,
                coll,
            },
            tag::TEXT => ColumnType::Text {
                max_bytes: take_u32(buf)?,
                coll,
            },
            tag::BLOB => ColumnType::Blob {
                max_bytes: take_u32(buf)?,
            },
            tag::BINARY => ColumnType::Binary {
                len: take_u32(buf)?,
            },
            tag::VARBINARY => ColumnType::VarBinary {
                len: take_u32(buf)?,
            },
            tag::DATE => ColumnType::Date,
            tag::DATETIME => ColumnType::DateTime { fsp: take_u8(buf)? },
            tag::TIMESTAMP => ColumnType::Timestamp { fsp: take_u8(buf)? },
            tag::YEAR => ColumnType::Year,
            tag::TIME => ColumnType::Time { fsp: take_u8(buf)? },
            tag::BIT => ColumnType::Bit {
                bits: take_u8(buf)?,
            },
            tag::ENUM => ColumnType::Enum {
                members: enumset::decode_members(buf)?,
            },
            tag::SET => ColumnType::Set {
                members: enumset::decode_members(buf)?,
            },
            tag::JSON => ColumnType::Json,
            other => return Err(format!("unknown column type tag {other}")),
        };
        ty.validate("?").map_err(|e| e.message)?;
        Ok(ty)
    }
}

/// ENUM/SET member-list checks with MySQL's errors: 1097 too many
/// members, 3504 a member longer than 255 characters, 1291 a duplicate
/// (case-insensitively, as the default collation sees them).
fn validate_members(
    column: &str,
    kind: &str,
    members: &[String],
    max: usize,
) -> Result<(), EngineError> {
    if members.len() > max {
        return Err(EngineError::new(
            1097,
            "HY000",
            format!("Too many strings for column {column} and {kind}"),
        ));
    }
    if members
        .iter()
        .any(|m| m.chars().count() > enumset::MAX_MEMBER_CHARS)
    {
        return Err(EngineError::new(
            3504,
            "HY000",
            format!("Too long enumeration/set value for column {column}."),
        ));
    }
    let mut seen = std::collections::HashSet::new();
    for m in members {
        if !seen.insert(m.to_ascii_lowercase()) {
            return Err(EngineError::new(
                1291,
                "HY000",
                format!("Column '{column}' has duplicated value '{m}' in {kind}"),
            ));
        }
    }
    Ok(())
}

fn put_u32(out: &mut Vec<u8>, t: u8, x: u32) {
    out.push(t);
    out.extend_from_slice(&x.to_le_bytes());
}

fn take_u8(buf: &mut &[u8]) -> Result<u8, String> {
    let (&b, rest) = buf
        .split_first()
        .ok_or_else(|| "column type is truncated".to_string())?;
    *buf = rest;
    Ok(b)
}

fn take_u32(buf: &mut &[u8]) -> Result<u32, String> {
    if buf.len() < 4 {
        return Err("column type is truncated".to_string());
    }
    let (head, rest) = buf.split_at(4);
    *buf = rest;
    let mut raw = [0u8; 4];
    raw.copy_from_slice(head);
    Ok(u32::from_le_bytes(raw))
}

impl std::fmt::Display for ColumnType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name())
    }
}

/// Bytes of the string values of a row (an estimate of its stored size
/// for space reservation; other values count 8).
pub fn value_bytes(vals: &[Value]) -> u64 {
    vals.iter()
        .map(|v| match v {
            Value::Bytes(b) => b.len() as u64,
            _ => 8,
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn every_type() -> Vec<ColumnType> {
        let mut v = Vec::new();
        for unsigned in [false, true] {
            v.extend([
                ColumnType::TinyInt { unsigned },
                ColumnType::SmallInt { unsigned },
                ColumnType::MediumInt { unsigned },
                ColumnType::Int { unsigned },
                ColumnType::BigInt { unsigned },
            ]);
        }
        for max_bytes in [255, 65_535, 16_777_215, 4_294_967_295] {
            v.push(ColumnType::text(max_bytes));
            v.push(ColumnType::Blob { max_bytes });
        }
        v.extend([
            ColumnType::Decimal {
                precision: 10,
                scale: 2,
            },
            ColumnType::Decimal {
                precision: 65,
                scale: 30,
            },
            ColumnType::Float,
            ColumnType::Double,
            ColumnType::char(0),
            ColumnType::char(255),
            ColumnType::varchar(16_383),
            ColumnType::Binary { len: 16 },
            ColumnType::VarBinary { len: 65_535 },
            ColumnType::Date,
            ColumnType::DateTime { fsp: 0 },
            ColumnType::DateTime { fsp: 6 },
            ColumnType::Timestamp { fsp: 3 },
            ColumnType::Year,
            ColumnType::Time { fsp: 0 },
            ColumnType::Time { fsp: 6 },
            ColumnType::Bit { bits: 1 },
            ColumnType::Bit { bits: 64 },
            ColumnType::Enum {
                members: vec!["a".to_string(), "it's".to_string()].into(),
            },
            ColumnType::Set {
                members: vec!["x".to_string(), "".to_string()].into(),
            },
            ColumnType::Json,
        ]);
        v
    }

    #[test]
    fn type_names_like_show_create_table() {
        let cases = [
            (ColumnType::Int { unsigned: false }, "int"),
            (ColumnType::Int { unsigned: true }, "int unsigned"),
            (ColumnType::TinyInt { unsigned: false }, "tinyint"),
            (ColumnType::SmallInt { unsigned: true }, "smallint unsigned"),
            (ColumnType::MediumInt { unsigned: false }, "mediumint"),
            (ColumnType::BigInt { unsigned: false }, "bigint"),
            (ColumnType::BigInt { unsigned: true }, "bigint unsigned"),
            (
                ColumnType::Decimal {
                    precision: 10,
                    scale: 2,
                },
                "decimal(10,2)",
            ),
            (ColumnType::Float, "float"),
            (ColumnType::Double, "double"),
            (ColumnType::char(1), "char(1)"),
            (ColumnType::varchar(255), "varchar(255)"),
            (ColumnType::text(255), "tinytext"),
            (ColumnType::text(65_535), "text"),
            (ColumnType::text(16_777_215), "mediumtext"),
            (ColumnType::text(u32::MAX), "longtext"),
            (ColumnType::Blob { max_bytes: 255 }, "tinyblob"),
            (ColumnType::Blob { max_bytes: 65_535 }, "blob"),
            (
                ColumnType::Blob {
                    max_bytes: 16_777_215,
                },
                "mediumblob",
            ),
            (
                ColumnType::Blob {
                    max_bytes: u32::MAX,
                },
                "longblob",
            ),
            (ColumnType::Binary { len: 16 }, "binary(16)"),
            (ColumnType::VarBinary { len: 200 }, "varbinary(200)"),
            (ColumnType::Date, "date"),
            (ColumnType::DateTime { fsp: 0 }, "datetime"),
            (ColumnType::DateTime { fsp: 6 }, "datetime(6)"),
            (ColumnType::Timestamp { fsp: 0 }, "timestamp"),
            (ColumnType::Timestamp { fsp: 3 }, "timestamp(3)"),
            (ColumnType::Year, "year"),
            (ColumnType::Time { fsp: 0 }, "time"),
            (ColumnType::Time { fsp: 2 }, "time(2)"),
            (ColumnType::Bit { bits: 10 }, "bit(10)"),
            (
                ColumnType::Enum {
                    members: vec!["a".to_string(), "it's".to_string()].into(),
                },
                "enum('a','it''s')",
            ),
            (
                ColumnType::Set {
                    members: vec!["x".to_string(), "y".to_string()].into(),
                },
                "set('x','y')",
            ),
        ];
        for (ty, name) in cases {
            assert_eq!(ty.name(), name);
            assert_eq!(ty.to_string(), name);
        }
    }

    #[test]
    fn type_predicates() {
        for ty in every_type() {
            let n = ty.name();
            assert_eq!(ty.is_integer(), n.contains("int"), "{n}");
            assert_eq!(
                ty.is_string(),
                n.contains("char")
                    || n.contains("text")
                    || n.contains("blob")
                    || n.contains("binary"),
                "{n}"
            );
            assert_eq!(
                ty.is_temporal(),
                n.starts_with("date") || n.starts_with("timestamp"),
                "{n}"
            );
            assert_eq!(ty.is_unsigned(), n.ends_with("unsigned"), "{n}");
            assert!(!(ty.is_string() && ty.is_numeric()));
            assert!(!ty.is_text() || ty.is_string());
        }
        assert_eq!(
            ColumnType::MediumInt { unsigned: false }.integer_range(),
            Some((-8_388_608, 8_388_607))
        );
        assert_eq!(ColumnType::Double.integer_range(), None);
        assert_eq!(ColumnType::lob_limit_for(0), Some(255));
        assert_eq!(ColumnType::lob_limit_for(256), Some(65_535));
        assert_eq!(ColumnType::lob_limit_for(70_000), Some(16_777_215));
        assert_eq!(ColumnType::lob_limit_for(1 << 30), Some(u32::MAX));
        assert_eq!(ColumnType::lob_limit_for(1 << 33), None);
    }

    #[test]
    fn type_catalog_round_trip() {
        let mut buf = Vec::new();
        let all = every_type();
        for ty in &all {
            ty.validate("c").unwrap();
            ty.encode(&mut buf);
        }
        let mut rest: &[u8] = &buf;
        for ty in &all {
            assert_eq!(ColumnType::decode(&mut rest).unwrap(), *ty);
        }
        assert!(rest.is_empty());
        for bad in [
            &[][..],
            &[0],
            &[99],
            &[tag::INT],
            &[tag::INT, 2],
            &[tag::DECIMAL, 66, 2],
            &[tag::DECIMAL, 5, 6],
            &[tag::VARCHAR, 1, 2],
            &[tag::TEXT, 0, 1, 0, 0],
            &[tag::DATETIME, 7],
            &[tag::TIME, 7],
            &[tag::BIT, 0],
            &[tag::BIT, 65],
            &[tag::ENUM, 1, 0, 0, 0, 5, 0, 0, 0, b'a'],
            &[tag::SET, 2, 0, 0, 0, 1, 0, 0, 0, b'a', 1, 0, 0, 0, b'a'],
        ] {
            let mut b: &[u8] = bad;
            assert!(ColumnType::decode(&mut b).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn type_validate_errors_like_mysql() {
        let e = |ty: ColumnType| {
            let e = ty.validate("c").unwrap_err();
            (e.code, e.sqlstate, e.message)
        };
        assert_eq!(
            e(ColumnType::Decimal {
                precision: 66,
                scale: 0
            }),
            (
                1426,
                "42000",
                "Too-big precision 66 specified for 'c'. Maximum is 65.".to_string()
            )
        );
        assert_eq!(
            e(ColumnType::Decimal {
                precision: 40,
                scale: 31
            }),
            (
                1425,
                "42000",
                "Too big scale 31 specified for column 'c'. Maximum is 30.".to_string()
            )
        );
        assert_eq!(
            e(ColumnType::Decimal {
                precision: 5,
                scale: 6
            })
            .0,
            1427
        );
        assert_eq!(
            e(ColumnType::varchar(16_384)),
            (
                1074,
                "42000",
                "Column length too big for column 'c' (max = 16383); use BLOB or TEXT instead"
                    .to_string()
            )
        );
        assert_eq!(e(ColumnType::char(256)).0, 1074);
        assert_eq!(e(ColumnType::Binary { len: 256 }).0, 1074);
        assert_eq!(e(ColumnType::VarBinary { len: 65_536 }).0, 1074);
        assert_eq!(
            e(ColumnType::DateTime { fsp: 7 }).2,
            "Too-big precision 7 specified for 'c'. Maximum is 6."
        );
        assert_eq!(e(ColumnType::Timestamp { fsp: 9 }).0, 1426);
        assert_eq!(e(ColumnType::text(1000)).0, 1063);
        assert_eq!(
            e(ColumnType::Decimal {
                precision: 0,
                scale: 0
            })
            .0,
            1063
        );
    }
}
