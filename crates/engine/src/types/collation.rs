//! # Character sets and collations
//!
//! A collation decides when two strings are equal and which comes first.
//! MySQL attaches one to every character-string column and expression; the
//! same rules must hold in four places, or an index would disagree with a
//! sort:
//!
//! ```text
//!   comparison (=, <, IN, BETWEEN)  ─┐
//!   ORDER BY / GROUP BY / DISTINCT  ─┼─ Collation::cmp == memcmp(weight(a), weight(b))
//!   unique and secondary index keys ─┤
//!   LIKE (per character)            ─┘   Collation::char_eq
//! ```
//!
//! [`Collation::weight`] gives a *memcomparable weight string*: bytes whose
//! plain order is the collation's order, and which are equal exactly when
//! the collation calls the strings equal. Index keys store the weight
//! string instead of the value (the row keeps the value), so `'abc'` and
//! `'ABC'` collide in a UNIQUE index on a case-insensitive column, and an
//! index scan returns rows in collation order.
//!
//! ## The collations
//!
//! | collation | how weights are made | pad |
//! |---|---|---|
//! | `utf8mb4_0900_ai_ci` (default), `_as_ci`, `_as_cs` | ICU4X's root collator (CLDR's UCA) at primary / secondary / tertiary strength | NO PAD |
//! | `utf8mb4_0900_bin`, `binary` | the bytes (UTF-8 byte order is code-point order) | NO PAD |
//! | `utf8mb4_bin`, `utf8mb3_bin`, `ascii_bin` | the bytes | PAD SPACE |
//! | `latin1_bin` | the cp1252 bytes | PAD SPACE |
//! | `utf8mb4_unicode_ci`, `utf8mb3_unicode_ci` | ICU4X root at primary strength, supplementary characters all alike and last | PAD SPACE |
//! | `utf8mb4_general_ci`, `utf8mb3_general_ci` | one 16-bit weight per character ([`general_ci_weight`]) | PAD SPACE |
//! | `latin1_swedish_ci` | one byte per character ([`latin1_swedish_weight`]) | PAD SPACE |
//! | `ascii_general_ci` | the upper-cased byte | PAD SPACE |
//!
//! **Checked against MariaDB**: `tests/differential/collations.py` compares
//! every BMP code point's weight (every byte for latin1) with MariaDB's
//! `WEIGHT_STRING`: general_ci, latin1, ascii and the `_bin` collations
//! agree exactly; unicode_ci cannot, since MySQL's is UCA 4.0.0 and ICU4X's
//! root is CLDR's (Unicode 16): about 16 000 code points UCA 4.0.0 did not
//! list and 269 it weighs differently (`known_differences.toml`,
//! `collation-unicode-ci-uca-version`).
//!
//! **PAD SPACE** is applied by removing trailing spaces before weighing,
//! so `'a' = 'a '`. MySQL pads the shorter string with spaces instead;
//! the two differ only in the order of a string against the same string
//! followed by characters that sort below space (`'a'` vs `'a\t'`), and
//! stripping keeps index order and comparison order identical, which
//! matters more (`known_differences.toml`, `collation-pad-space-strip`).
//!
//! **Stability**: weight strings are stored in index keys, so they must
//! not change under a data directory. ICU4X's sort keys change with CLDR
//! and Unicode versions; the dependency is pinned to one version
//! (`=2.4.0`) and `collation_tests.rs` holds golden weights that fail if
//! an upgrade changes them (an upgrade then needs an index rebuild).
//!
//! ## Character sets
//!
//! Values are UTF-8 in memory and on disk whatever the column's character
//! set; a character set narrower than utf8mb4 restricts the repertoire
//! ([`Charset::unrepresentable`]): latin1 (MySQL's latin1 is cp1252),
//! ascii, utf8mb3 (the Basic Multilingual Plane). `binary` holds any bytes.

use std::cmp::Ordering;
use std::sync::OnceLock;

use icu_collator::options::{CollatorOptions, Strength};
use icu_collator::CollatorBorrowed;

/// A character set quire supports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Charset {
    Utf8mb4,
    Utf8mb3,
    Latin1,
    Ascii,
    Binary,
}

impl Charset {
    pub const ALL: [Charset; 5] = [
        Charset::Ascii,
        Charset::Binary,
        Charset::Latin1,
        Charset::Utf8mb3,
        Charset::Utf8mb4,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Charset::Utf8mb4 => "utf8mb4",
            Charset::Utf8mb3 => "utf8mb3",
            Charset::Latin1 => "latin1",
            Charset::Ascii => "ascii",
            Charset::Binary => "binary",
        }
    }

    /// By name, case-insensitively; `utf8` is `utf8mb3` as in MySQL 8.0.
    pub fn by_name(name: &str) -> Option<Charset> {
        let n = name.to_ascii_lowercase();
        let n = if n == "utf8" {
            "utf8mb3".to_string()
        } else {
            n
        };
        Charset::ALL.into_iter().find(|c| c.name() == n)
    }

    /// SHOW CHARACTER SET's Description.
    pub fn description(self) -> &'static str {
        match self {
            Charset::Utf8mb4 => "UTF-8 Unicode",
            Charset::Utf8mb3 => "UTF-8 Unicode",
            Charset::Latin1 => "cp1252 West European",
            Charset::Ascii => "US ASCII",
            Charset::Binary => "Binary pseudo charset",
        }
    }

    /// Maximum bytes per character (MySQL's Maxlen).
    pub fn max_len(self) -> u32 {
        match self {
            Charset::Utf8mb4 => 4,
            Charset::Utf8mb3 => 3,
            Charset::Latin1 | Charset::Ascii | Charset::Binary => 1,
        }
    }

    pub fn default_collation(self) -> Collation {
        match self {
            Charset::Utf8mb4 => Collation::Utf8mb4_0900AiCi,
            Charset::Utf8mb3 => Collation::Utf8mb3GeneralCi,
            Charset::Latin1 => Collation::Latin1SwedishCi,
            Charset::Ascii => Collation::AsciiGeneralCi,
            Charset::Binary => Collation::Binary,
        }
    }

    /// The first character of `s` this character set cannot hold, with its
    /// byte offset, or None. Used on store for MySQL's 1366 "Incorrect
    /// string value".
    pub fn unrepresentable(self, s: &str) -> Option<(usize, char)> {
        let ok = |c: char| match self {
            Charset::Utf8mb4 | Charset::Binary => true,
            Charset::Utf8mb3 => (c as u32) <= 0xFFFF,
            Charset::Latin1 => cp1252_byte(c).is_some(),
            Charset::Ascii => c.is_ascii(),
        };
        s.char_indices().find(|&(_, c)| !ok(c))
    }
}

/// A collation quire supports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[allow(non_camel_case_types)]
pub enum Collation {
    Utf8mb4_0900AiCi,
    Utf8mb4_0900AsCi,
    Utf8mb4_0900AsCs,
    Utf8mb4_0900Bin,
    Utf8mb4Bin,
    Utf8mb4GeneralCi,
    Utf8mb4UnicodeCi,
    Utf8mb3GeneralCi,
    Utf8mb3Bin,
    Utf8mb3UnicodeCi,
    Latin1SwedishCi,
    Latin1Bin,
    AsciiGeneralCi,
    AsciiBin,
    Binary,
}

/// How a collation weighs a string.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Method {
    Bytes,
    Latin1Bytes,
    Icu(Strength),
    /// ICU4X root at primary strength, every supplementary character
    /// weighed alike after the BMP ([`unicode_ci_text`]).
    UnicodeCi,
    GeneralCi,
    SwedishCi,
    AsciiCi,
}

impl Collation {
    pub const ALL: [Collation; 15] = [
        Collation::AsciiBin,
        Collation::AsciiGeneralCi,
        Collation::Binary,
        Collation::Latin1Bin,
        Collation::Latin1SwedishCi,
        Collation::Utf8mb3Bin,
        Collation::Utf8mb3GeneralCi,
        Collation::Utf8mb3UnicodeCi,
        Collation::Utf8mb4_0900AiCi,
        Collation::Utf8mb4_0900AsCi,
        Collation::Utf8mb4_0900AsCs,
        Collation::Utf8mb4_0900Bin,
        Collation::Utf8mb4Bin,
        Collation::Utf8mb4GeneralCi,
        Collation::Utf8mb4UnicodeCi,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Collation::Utf8mb4_0900AiCi => "utf8mb4_0900_ai_ci",
            Collation::Utf8mb4_0900AsCi => "utf8mb4_0900_as_ci",
            Collation::Utf8mb4_0900AsCs => "utf8mb4_0900_as_cs",
            Collation::Utf8mb4_0900Bin => "utf8mb4_0900_bin",
            Collation::Utf8mb4Bin => "utf8mb4_bin",
            Collation::Utf8mb4GeneralCi => "utf8mb4_general_ci",
            Collation::Utf8mb4UnicodeCi => "utf8mb4_unicode_ci",
            Collation::Utf8mb3GeneralCi => "utf8mb3_general_ci",
            Collation::Utf8mb3Bin => "utf8mb3_bin",
            Collation::Utf8mb3UnicodeCi => "utf8mb3_unicode_ci",
            Collation::Latin1SwedishCi => "latin1_swedish_ci",
            Collation::Latin1Bin => "latin1_bin",
            Collation::AsciiGeneralCi => "ascii_general_ci",
            Collation::AsciiBin => "ascii_bin",
            Collation::Binary => "binary",
        }
    }

    /// MySQL's collation id (SHOW COLLATION's Id; the protocol's
    /// character-set number).
    pub fn id(self) -> u16 {
        match self {
            Collation::Utf8mb4_0900AiCi => 255,
            Collation::Utf8mb4_0900AsCi => 305,
            Collation::Utf8mb4_0900AsCs => 278,
            Collation::Utf8mb4_0900Bin => 309,
            Collation::Utf8mb4Bin => 46,
            Collation::Utf8mb4GeneralCi => 45,
            Collation::Utf8mb4UnicodeCi => 224,
            Collation::Utf8mb3GeneralCi => 33,
            Collation::Utf8mb3Bin => 83,
            Collation::Utf8mb3UnicodeCi => 192,
            Collation::Latin1SwedishCi => 8,
            Collation::Latin1Bin => 47,
            Collation::AsciiGeneralCi => 11,
            Collation::AsciiBin => 65,
            Collation::Binary => 63,
        }
    }

    pub fn by_id(id: u16) -> Option<Collation> {
        Collation::ALL.into_iter().find(|c| c.id() == id)
    }

    /// By name, case-insensitively; `utf8_*` names are `utf8mb3_*`.
    pub fn by_name(name: &str) -> Option<Collation> {
        let n = name.to_ascii_lowercase();
        let n = match n.strip_prefix("utf8_") {
            Some(rest) => format!("utf8mb3_{rest}"),
            None => n,
        };
        Collation::ALL.into_iter().find(|c| c.name() == n)
    }

    pub fn charset(self) -> Charset {
        match self {
            Collation::Utf8mb4_0900AiCi
            | Collation::Utf8mb4_0900AsCi
            | Collation::Utf8mb4_0900AsCs
            | Collation::Utf8mb4_0900Bin
            | Collation::Utf8mb4Bin
            | Collation::Utf8mb4GeneralCi
            | Collation::Utf8mb4UnicodeCi => Charset::Utf8mb4,
            Collation::Utf8mb3GeneralCi | Collation::Utf8mb3Bin | Collation::Utf8mb3UnicodeCi => {
                Charset::Utf8mb3
            }
            Collation::Latin1SwedishCi | Collation::Latin1Bin => Charset::Latin1,
            Collation::AsciiGeneralCi | Collation::AsciiBin => Charset::Ascii,
            Collation::Binary => Charset::Binary,
        }
    }

    /// The default collation of its character set.
    pub fn is_default(self) -> bool {
        self.charset().default_collation() == self
    }

    /// PAD SPACE (trailing spaces do not count) rather than NO PAD.
    pub fn pad_space(self) -> bool {
        !matches!(
            self,
            Collation::Utf8mb4_0900AiCi
                | Collation::Utf8mb4_0900AsCi
                | Collation::Utf8mb4_0900AsCs
                | Collation::Utf8mb4_0900Bin
                | Collation::Binary
        )
    }

    /// SHOW COLLATION's Sortlen.
    pub fn sort_len(self) -> u32 {
        match self.method() {
            Method::Icu(_) => 0,
            Method::UnicodeCi => 8,
            _ => 1,
        }
    }

    /// SHOW COLLATION's Pad_attribute.
    pub fn pad_attribute(self) -> &'static str {
        if self.pad_space() {
            "PAD SPACE"
        } else {
            "NO PAD"
        }
    }

    /// Case-sensitive and accent-sensitive byte-for-byte order (the
    /// collation may still be PAD SPACE).
    pub fn is_bin(self) -> bool {
        matches!(self.method(), Method::Bytes | Method::Latin1Bytes)
    }

    /// Exactly the byte order of the values, NO PAD: comparisons need no
    /// weights at all.
    pub fn is_plain_bytes(self) -> bool {
        self.method() == Method::Bytes && !self.pad_space()
    }

    /// Whether weight strings have one level, so that cutting strings to
    /// their first N characters keeps their order (`a <= b` implies
    /// `cut(a) <= cut(b)`), as a column prefix index's range bounds need.
    /// The multi-level `_as_ci` / `_as_cs` weights put the later levels
    /// after every character's primary weight: `'bz' > 'Bé'` but
    /// `'b' < 'B'` at the tertiary level.
    pub fn single_level(self) -> bool {
        !matches!(
            self.method(),
            Method::Icu(Strength::Secondary) | Method::Icu(Strength::Tertiary)
        )
    }

    fn method(self) -> Method {
        match self {
            Collation::Utf8mb4_0900AiCi => Method::Icu(Strength::Primary),
            Collation::Utf8mb4_0900AsCi => Method::Icu(Strength::Secondary),
            Collation::Utf8mb4_0900AsCs => Method::Icu(Strength::Tertiary),
            Collation::Utf8mb4UnicodeCi | Collation::Utf8mb3UnicodeCi => Method::UnicodeCi,
            Collation::Utf8mb4GeneralCi | Collation::Utf8mb3GeneralCi => Method::GeneralCi,
            Collation::Latin1SwedishCi => Method::SwedishCi,
            Collation::Latin1Bin => Method::Latin1Bytes,
            Collation::AsciiGeneralCi => Method::AsciiCi,
            Collation::Utf8mb4_0900Bin
            | Collation::Utf8mb4Bin
            | Collation::Utf8mb3Bin
            | Collation::AsciiBin
            | Collation::Binary => Method::Bytes,
        }
    }

    /// The part of `s` that counts: without trailing spaces under PAD SPACE.
    fn significant(self, s: &[u8]) -> &[u8] {
        if self.pad_space() {
            let end = s.iter().rposition(|&b| b != b' ').map_or(0, |p| p + 1);
            &s[..end]
        } else {
            s
        }
    }

    /// Appends the weight string of `s` to `out` (see the module docs).
    /// Bytes that are not UTF-8 weigh as U+FFFD.
    pub fn weight(self, s: &[u8], out: &mut Vec<u8>) {
        let s = self.significant(s);
        match self.method() {
            Method::Bytes => out.extend_from_slice(s),
            Method::Latin1Bytes => {
                out.extend(text(s).chars().map(|c| cp1252_byte(c).unwrap_or(b'?')))
            }
            Method::Icu(Strength::Primary) | Method::UnicodeCi if s.is_ascii() => {
                let tab = ascii_primary();
                out.reserve(s.len() * 2);
                for &b in s {
                    let (w, n) = tab[usize::from(b & 0x7F)];
                    match n {
                        1 => out.push(w[0]),
                        2 => out.extend_from_slice(&w),
                        _ => {}
                    }
                }
            }
            Method::Icu(strength) => {
                let _ = icu(strength).write_sort_key_to(&text(s), out);
            }
            Method::UnicodeCi => {
                let _ = icu(Strength::Primary).write_sort_key_to(&unicode_ci_text(&text(s)), out);
            }
            Method::GeneralCi => {
                for c in text(s).chars() {
                    out.extend_from_slice(&general_ci_weight(c).to_be_bytes());
                }
            }
            Method::SwedishCi => out.extend(text(s).chars().map(latin1_swedish_weight)),
            Method::AsciiCi => out.extend(s.iter().map(u8::to_ascii_uppercase)),
        }
    }

    /// The weight string of `s` as a new vector.
    pub fn weight_of(self, s: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(s.len() * 2);
        self.weight(s, &mut out);
        out
    }

    /// Compares two strings under this collation; the same order as their
    /// weight strings.
    pub fn cmp(self, a: &[u8], b: &[u8]) -> Ordering {
        let (a, b) = (self.significant(a), self.significant(b));
        match self.method() {
            Method::Bytes => a.cmp(b),
            Method::Icu(Strength::Primary) | Method::UnicodeCi if a.is_ascii() && b.is_ascii() => {
                ascii_weights(a).cmp(ascii_weights(b))
            }
            Method::Icu(strength) => icu(strength).compare_utf8(a, b),
            Method::UnicodeCi => {
                let (a, b) = (text(a), text(b));
                icu(Strength::Primary).compare(&unicode_ci_text(&a), &unicode_ci_text(&b))
            }
            Method::GeneralCi => {
                let w = |s: &[u8]| text(s).chars().map(general_ci_weight).collect::<Vec<_>>();
                w(a).cmp(&w(b))
            }
            Method::AsciiCi => a
                .iter()
                .map(u8::to_ascii_uppercase)
                .cmp(b.iter().map(u8::to_ascii_uppercase)),
            Method::Latin1Bytes | Method::SwedishCi => self.weight_of(a).cmp(&self.weight_of(b)),
        }
    }

    /// Whether two single characters are equal under this collation (LIKE
    /// compares character by character, as MySQL's wildcard matcher does).
    pub fn char_eq(self, a: char, b: char) -> bool {
        if a == b {
            return true;
        }
        match self.method() {
            Method::Bytes | Method::Latin1Bytes => false,
            Method::AsciiCi => a.is_ascii() && a.eq_ignore_ascii_case(&b),
            Method::GeneralCi => general_ci_weight(a) == general_ci_weight(b),
            Method::SwedishCi => latin1_swedish_weight(a) == latin1_swedish_weight(b),
            Method::Icu(strength) => icu_char_eq(strength, a, b),
            Method::UnicodeCi => icu_char_eq(Strength::Primary, bmp_only(a), bmp_only(b)),
        }
    }
}

/// Two characters equal at an ICU4X strength.
fn icu_char_eq(strength: Strength, a: char, b: char) -> bool {
    if a.is_ascii_alphanumeric() && b.is_ascii_alphanumeric() && strength != Strength::Tertiary {
        // ASCII letters and digits differ from each other at the primary
        // level; only case can be ignored.
        return a.eq_ignore_ascii_case(&b);
    }
    let mut x = [0u8; 4];
    let mut y = [0u8; 4];
    icu(strength).compare(a.encode_utf8(&mut x), b.encode_utf8(&mut y)) == Ordering::Equal
}

/// The text `unicode_ci` weighs: MySQL's UCA 4.0.0 collations give every
/// supplementary character the one weight 0xFFFD, above every BMP
/// character's, so they all become U+FFFF, which ICU4X's root sorts last.
fn unicode_ci_text(s: &str) -> std::borrow::Cow<'_, str> {
    if s.chars().all(|c| (c as u32) <= 0xFFFF) {
        return std::borrow::Cow::Borrowed(s);
    }
    std::borrow::Cow::Owned(s.chars().map(bmp_only).collect())
}

/// A supplementary character as U+FFFF (see [`unicode_ci_text`]).
fn bmp_only(c: char) -> char {
    if (c as u32) > 0xFFFF {
        '\u{FFFF}'
    } else {
        c
    }
}

/// The text of a value: UTF-8, or lossily so.
fn text(s: &[u8]) -> std::borrow::Cow<'_, str> {
    String::from_utf8_lossy(s)
}

/// The ICU4X root collator at one strength, built once.
fn icu(strength: Strength) -> &'static CollatorBorrowed<'static> {
    static PRIMARY: OnceLock<CollatorBorrowed<'static>> = OnceLock::new();
    static SECONDARY: OnceLock<CollatorBorrowed<'static>> = OnceLock::new();
    static TERTIARY: OnceLock<CollatorBorrowed<'static>> = OnceLock::new();
    let cell = match strength {
        Strength::Primary => &PRIMARY,
        Strength::Secondary => &SECONDARY,
        _ => &TERTIARY,
    };
    cell.get_or_init(|| {
        let mut options = CollatorOptions::default();
        options.strength = Some(strength);
        // Compiled-in data for the root locale: cannot fail.
        match CollatorBorrowed::try_new(Default::default(), options) {
            Ok(c) => c,
            Err(e) => panic!("ICU4X root collator data is compiled in: {e}"),
        }
    })
}

/// cp1252's characters for the bytes 0x80..=0x9F; the five bytes cp1252
/// leaves undefined map to the C1 control of the same number, as MySQL's
/// latin1 maps them.
const CP1252_HIGH: [char; 32] = [
    '\u{20AC}', '\u{0081}', '\u{201A}', '\u{0192}', '\u{201E}', '\u{2026}', '\u{2020}', '\u{2021}',
    '\u{02C6}', '\u{2030}', '\u{0160}', '\u{2039}', '\u{0152}', '\u{008D}', '\u{017D}', '\u{008F}',
    '\u{0090}', '\u{2018}', '\u{2019}', '\u{201C}', '\u{201D}', '\u{2022}', '\u{2013}', '\u{2014}',
    '\u{02DC}', '\u{2122}', '\u{0161}', '\u{203A}', '\u{0153}', '\u{009D}', '\u{017E}', '\u{0178}',
];

/// ICU's primary sort key of each ASCII character (0 to 2 bytes; control
/// characters are ignorable), read from the collator once. At primary
/// strength the sort key of an ASCII string is the concatenation of its
/// characters' keys (ICU4X writes no level separators or compression for
/// them; `collation_tests.rs` checks every string of up to two characters
/// and long random ones), so ASCII text, most text in practice, is weighed
/// and compared by table lookup instead of by the full algorithm.
fn ascii_primary() -> &'static [([u8; 2], u8); 128] {
    static TABLE: OnceLock<[([u8; 2], u8); 128]> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut tab = [([0u8; 2], 0u8); 128];
        for (b, slot) in tab.iter_mut().enumerate() {
            let mut k = Vec::new();
            let _ =
                icu(Strength::Primary).write_sort_key_to(&char::from(b as u8).to_string(), &mut k);
            // Every ASCII primary is at most two bytes (asserted by the
            // tests); a longer one would be cut, so it falls back there.
            let n = k.len().min(2);
            slot.0[..n].copy_from_slice(&k[..n]);
            slot.1 = n as u8;
        }
        tab
    })
}

/// The primary weight bytes of an ASCII string, lazily ([`ascii_primary`]).
fn ascii_weights(s: &[u8]) -> impl Iterator<Item = u8> + '_ {
    let tab = ascii_primary();
    s.iter().flat_map(move |&c| {
        let (w, n) = &tab[usize::from(c & 0x7F)];
        w[..usize::from(*n)].iter().copied()
    })
}

/// ICU's own primary sort key of `s` (no ASCII table): what the table must
/// reproduce.
#[cfg(test)]
pub(crate) fn icu_primary_key(s: &str) -> Vec<u8> {
    let mut k = Vec::new();
    let _ = icu(Strength::Primary).write_sort_key_to(s, &mut k);
    k
}

/// The cp1252 byte of a character (MySQL's latin1), or None.
pub fn cp1252_byte(c: char) -> Option<u8> {
    let u = c as u32;
    match u {
        0..=0x7F | 0xA0..=0xFF => Some(u as u8),
        _ => CP1252_HIGH
            .iter()
            .position(|&h| h == c)
            .map(|i| 0x80 + i as u8),
    }
}

/// The character of a cp1252 byte (MySQL's latin1 maps every byte).
pub fn cp1252_char(b: u8) -> char {
    match b {
        0x80..=0x9F => CP1252_HIGH[usize::from(b - 0x80)],
        _ => char::from(b),
    }
}

/// The pages (code point >> 8) whose characters `general_ci` folds; every
/// other BMP character weighs as itself. MySQL's table (`my_unicase_default`)
/// covers Latin, IPA, Greek, Cyrillic, Armenian, Latin Extended Additional,
/// Greek Extended, Letterlike Symbols and Number Forms, Enclosed
/// Alphanumerics and the fullwidth forms.
const GENERAL_CI_PAGES: [u32; 11] = [
    0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x1E, 0x1F, 0x21, 0x24, 0xFF,
];

/// Letters in those pages that `general_ci` leaves as themselves although
/// today's Unicode gives them an upper case: MySQL's table follows the
/// case pairs of Unicode 3.0, so letters encoded later (Komi, archaic
/// Greek, Latin Extended-B's tail) and lower-case letters whose capital
/// came later (ƀ → Ƀ in 5.0, ʉ → Ʉ) are unfolded. Ranges, inclusive;
/// measured against MariaDB by tests/differential/collations.py.
const GENERAL_CI_UNFOLDED: [(u32, u32); 17] = [
    (0x0180, 0x0180),
    (0x019A, 0x019E),
    (0x023C, 0x024F),
    (0x0289, 0x0289),
    (0x028C, 0x028C),
    (0x0371, 0x037D),
    (0x03D7, 0x03D9),
    (0x03F3, 0x03FB),
    (0x048B, 0x048B),
    (0x04C6, 0x04C6),
    (0x04CA, 0x04CA),
    (0x04CE, 0x04CF),
    (0x04F7, 0x04F7),
    (0x04FB, 0x052F),
    (0x1EFB, 0x1EFF),
    (0x214E, 0x214E),
    (0x2184, 0x2184),
];

/// `utf8mb4_general_ci`'s weight of one character (MySQL's
/// `my_unicase_default`): in [`GENERAL_CI_PAGES`], the upper case of the
/// base letter (accents stripped by canonical decomposition, when what
/// is left is a letter), unless
/// [`GENERAL_CI_UNFOLDED`]; every other BMP character is its own weight,
/// and every supplementary character weighs U+FFFD. Three letters differ
/// from the rule: ß weighs as S (so 'ß' = 's' but not 'ss'), Й/й stay apart
/// from И (Russian's own letter), and the lunate sigma ϲ is Σ (its case
/// pair in Unicode 3.0).
pub fn general_ci_weight(c: char) -> u16 {
    let u = c as u32;
    if u > 0xFFFF {
        return 0xFFFD;
    }
    match c {
        'ß' => return u16::from(b'S'),
        'Й' | 'й' => return 0x0419,
        'ϲ' => return 0x03A3,
        _ => {}
    }
    let unfolded = GENERAL_CI_UNFOLDED
        .iter()
        .any(|&(lo, hi)| (lo..=hi).contains(&u));
    if !GENERAL_CI_PAGES.contains(&(u >> 8)) || unfolded {
        return u as u16;
    }
    let base = Some(base_letter(c))
        .filter(|b| b.is_alphabetic())
        .unwrap_or(c);
    let mut up = base.to_uppercase();
    match (up.next(), up.next()) {
        (Some(x), None) if GENERAL_CI_PAGES.contains(&(x as u32 >> 8)) => x as u32 as u16,
        _ => base as u32 as u16,
    }
}

/// The base letter of a precomposed letter: the first character of its
/// canonical decomposition, repeatedly, while it decomposes into a letter
/// and combining marks. Singleton decompositions (Å ANGSTROM SIGN → Å,
/// oxia → tonos) are not followed: MySQL's tables keep those apart.
fn base_letter(c: char) -> char {
    use icu_normalizer::properties::{CanonicalDecompositionBorrowed, Decomposed};
    let decomp = CanonicalDecompositionBorrowed::new();
    let mut c = c;
    while let Decomposed::Expansion(first, _) = decomp.decompose(c) {
        c = first;
    }
    c
}

/// `latin1_swedish_ci`'s weight of one character (MySQL's
/// `sort_order_latin1`): ASCII and the Latin-1 letters upper-cased and
/// accents removed, except the Swedish letters, which sort after Z as the
/// bytes after 'Z' do: Å as '[', Ä and Æ as '\\', Ö as ']' (so 'Å' = '['
/// in this collation); Ü sorts as Y, Ð as D; Ø and Þ keep their capital's
/// byte. The rest of the bytes (0x80..=0xBF, ×, ÷, ß, ÿ) are their own
/// weight. Characters latin1 cannot hold weigh as '?'.
pub fn latin1_swedish_weight(c: char) -> u8 {
    let Some(b) = cp1252_byte(c) else {
        return b'?';
    };
    // Latin-1's lower-case letters are their capitals + 0x20 (not ÷ or ÿ).
    let b = match b {
        b'a'..=b'z' => b - 0x20,
        0xE0..=0xFE if b != 0xF7 => b - 0x20,
        _ => b,
    };
    match b {
        0xC5 => b'[',
        0xC4 | 0xC6 => b'\\',
        0xD6 => b']',
        0xDC => b'Y',
        0xD0 => b'D',
        0xC0..=0xDD if b != 0xD7 && b != 0xD8 => {
            let base = base_letter(cp1252_char(b));
            if base.is_ascii_alphabetic() {
                base as u8
            } else {
                b
            }
        }
        _ => b,
    }
}

#[cfg(test)]
#[path = "collation_tests.rs"]
mod tests;
