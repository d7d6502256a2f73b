//! # Character sets and collations in SQL
//!
//! The engine knows how each collation weighs strings
//! (`quire_engine::types::collation`). This module decides *which*
//! collation applies, with MySQL 8.0's rules:
//!
//! ```text
//!   server (collation_server) ─► database (CREATE DATABASE … COLLATE)
//!        ─► table (DEFAULT CHARSET= … COLLATE=) ─► column (CHARACTER SET … COLLATE …)
//! ```
//!
//! Each level without a clause takes the level above's; a `CHARACTER SET`
//! without `COLLATE` takes that character set's default collation (not
//! the level above's). Unknown names are 1115 / 1273, a collation of
//! another character set 1253.
//!
//! For expressions, every string carries a collation and a
//! *coercibility* ([`Derivation`]); when two strings meet (a comparison,
//! CONCAT, IN, CASE) [`aggregate`] picks the collation MySQL picks: the
//! lower coercibility wins, `binary` beats everything at the same level,
//! a Unicode collation beats a narrower character set's, and two
//! different collations at the same explicit or implicit level are 1267
//! "Illegal mix of collations".

use quire_engine::types::{Charset, Collation};
use quire_engine::EngineError;

use crate::SqlResult;

/// 1115 Unknown character set.
pub(crate) fn err_unknown_charset(name: &str) -> EngineError {
    EngineError::new(1115, "42000", format!("Unknown character set: '{name}'"))
}

/// 1273 Unknown collation.
pub(crate) fn err_unknown_collation(name: &str) -> EngineError {
    EngineError::new(1273, "HY000", format!("Unknown collation: '{name}'"))
}

/// 1253 COLLATION is not valid for CHARACTER SET.
pub(crate) fn err_charset_mismatch(coll: &str, cs: &str) -> EngineError {
    EngineError::new(
        1253,
        "42000",
        format!("COLLATION '{coll}' is not valid for CHARACTER SET '{cs}'"),
    )
}

/// A collation by name (quotes and backticks removed), or 1273.
pub(crate) fn collation(name: &str) -> SqlResult<Collation> {
    let n = unquote(name);
    if n.eq_ignore_ascii_case("default") {
        return Ok(Charset::Utf8mb4.default_collation());
    }
    Collation::by_name(n).ok_or_else(|| err_unknown_collation(n))
}

/// A character set by name, or 1115.
pub(crate) fn charset(name: &str) -> SqlResult<Charset> {
    let n = unquote(name);
    Charset::by_name(n).ok_or_else(|| err_unknown_charset(n))
}

fn unquote(s: &str) -> &str {
    s.trim().trim_matches(['`', '\'', '"'])
}

/// The collation of a level that may name a character set and/or a
/// collation, `default` when it names neither (see the module docs).
pub(crate) fn resolve(
    cs: Option<&str>,
    coll: Option<&str>,
    default: Collation,
) -> SqlResult<Collation> {
    let cs = cs.map(charset).transpose()?;
    let coll = coll.map(collation).transpose()?;
    match (cs, coll) {
        (None, None) => Ok(default),
        (Some(cs), None) => Ok(cs.default_collation()),
        (None, Some(c)) => Ok(c),
        (Some(cs), Some(c)) if c.charset() == cs => Ok(c),
        (Some(cs), Some(c)) => Err(err_charset_mismatch(c.name(), cs.name())),
    }
}

/// How strongly an expression holds on to its collation (MySQL's
/// coercibility; lower wins).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Coercibility {
    /// A `COLLATE` clause.
    Explicit = 0,
    /// Concatenation of different collations (no collation).
    None = 1,
    /// A column or a stored routine's variable.
    Implicit = 2,
    /// A system constant (USER(), VERSION()).
    SysConst = 3,
    /// A literal.
    Coercible = 4,
}

/// A string expression's collation and coercibility.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Derivation {
    pub coll: Collation,
    pub level: Coercibility,
}

impl Derivation {
    pub fn new(coll: Collation, level: Coercibility) -> Derivation {
        Derivation { coll, level }
    }
}

/// The collation two strings are compared or combined in, or 1267 naming
/// `op` (MySQL's `DTCollation::aggregate`).
pub(crate) fn aggregate(a: Derivation, b: Derivation, op: &str) -> SqlResult<Derivation> {
    if a.coll == b.coll {
        return Ok(Derivation::new(a.coll, a.level.min(b.level)));
    }
    if a.level != b.level {
        return Ok(if a.level < b.level { a } else { b });
    }
    // Same level, different collations.
    if a.coll == Collation::Binary || b.coll == Collation::Binary {
        return Ok(Derivation::new(Collation::Binary, a.level));
    }
    // A literal converts into a superset character set.
    let (ca, cb) = (a.coll.charset(), b.coll.charset());
    if a.level >= Coercibility::SysConst && ca != cb {
        if superset(ca, cb) {
            return Ok(a);
        }
        if superset(cb, ca) {
            return Ok(b);
        }
    }
    if a.level <= Coercibility::Implicit && ca != cb {
        // A column of a Unicode set meets one of a narrower set: the
        // narrower converts (MySQL's repertoire rule).
        if superset(ca, cb) {
            return Ok(a);
        }
        if superset(cb, ca) {
            return Ok(b);
        }
    }
    if a.level >= Coercibility::SysConst {
        return Ok(Derivation::new(a.coll, Coercibility::None));
    }
    Err(illegal_mix(a, b, op))
}

/// Whether every character of `b` is in `a`.
fn superset(a: Charset, b: Charset) -> bool {
    match (a, b) {
        (Charset::Utf8mb4, _) => b != Charset::Binary,
        (Charset::Utf8mb3, Charset::Latin1 | Charset::Ascii | Charset::Utf8mb3) => true,
        (Charset::Latin1, Charset::Ascii) => true,
        _ => a == b,
    }
}

/// 1267 Illegal mix of collations.
pub(crate) fn illegal_mix(a: Derivation, b: Derivation, op: &str) -> EngineError {
    EngineError::new(
        1267,
        "HY000",
        format!(
            "Illegal mix of collations ({},{}) and ({},{}) for operation '{op}'",
            a.coll.name(),
            level_name(a.level),
            b.coll.name(),
            level_name(b.level)
        ),
    )
}

fn level_name(l: Coercibility) -> &'static str {
    match l {
        Coercibility::Explicit => "EXPLICIT",
        Coercibility::None => "NONE",
        Coercibility::Implicit => "IMPLICIT",
        Coercibility::SysConst => "SYSCONST",
        Coercibility::Coercible => "COERCIBLE",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolve_follows_the_levels() {
        let d = Collation::Utf8mb4_0900AiCi;
        assert_eq!(resolve(None, None, d).ok(), Some(d));
        assert_eq!(
            resolve(Some("latin1"), None, d).ok(),
            Some(Collation::Latin1SwedishCi)
        );
        assert_eq!(
            resolve(Some("utf8mb4"), None, Collation::Utf8mb4Bin).ok(),
            Some(d)
        );
        assert_eq!(
            resolve(None, Some("UTF8MB4_GENERAL_CI"), d).ok(),
            Some(Collation::Utf8mb4GeneralCi)
        );
        assert_eq!(
            resolve(Some("utf8"), Some("utf8_bin"), d).ok(),
            Some(Collation::Utf8mb3Bin)
        );
        let e = resolve(Some("latin1"), Some("utf8mb4_bin"), d).err();
        assert_eq!(e.map(|e| e.code), Some(1253));
        assert_eq!(
            resolve(Some("klingon"), None, d).err().map(|e| e.code),
            Some(1115)
        );
        assert_eq!(
            resolve(None, Some("x_ci"), d).err().map(|e| e.code),
            Some(1273)
        );
    }

    #[test]
    fn aggregate_prefers_the_stronger_side() {
        let col = Derivation::new(Collation::Utf8mb4GeneralCi, Coercibility::Implicit);
        let lit = Derivation::new(Collation::Utf8mb4_0900AiCi, Coercibility::Coercible);
        let exp = Derivation::new(Collation::Utf8mb4Bin, Coercibility::Explicit);
        assert_eq!(aggregate(col, lit, "=").ok(), Some(col));
        assert_eq!(aggregate(lit, col, "=").ok(), Some(col));
        assert_eq!(aggregate(col, exp, "=").ok(), Some(exp));
        let other = Derivation::new(Collation::Utf8mb4_0900AiCi, Coercibility::Implicit);
        let e = aggregate(col, other, "=").err();
        assert_eq!(e.as_ref().map(|e| e.code), Some(1267));
        assert_eq!(
            e.map(|e| e.message),
            Some(
                "Illegal mix of collations (utf8mb4_general_ci,IMPLICIT) and \
                 (utf8mb4_0900_ai_ci,IMPLICIT) for operation '='"
                    .to_string()
            )
        );
        let latin = Derivation::new(Collation::Latin1SwedishCi, Coercibility::Implicit);
        assert_eq!(aggregate(latin, col, "=").ok(), Some(col));
    }
}
