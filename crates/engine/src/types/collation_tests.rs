//! # Tests of the collations
//!
//! Four things keep `collation.rs` honest, and each has its test here:
//!
//! * **Golden weight strings.** Weights are stored in index keys, so the
//!   exact bytes of every collation's weight for a fixed set of strings are
//!   written down. An ICU4X upgrade (or an edit of a rule) that changes a
//!   stored key fails `golden_weights`, and then needs an index rebuild
//!   story, not a new golden.
//! * **One order.** `Collation::cmp` must be the order of the weight
//!   strings, equal exactly when they are equal, for generated strings
//!   mixing the characters collations disagree about (case, accents,
//!   expansions, ignorables, supplementary characters, trailing spaces,
//!   invalid UTF-8).
//! * **LIKE agrees with `=`.** `char_eq` must be the equality of
//!   single-character weights.
//! * **Character sets.** cp1252 (MySQL's latin1) round-trips every byte;
//!   `Charset::unrepresentable` finds the first character a set cannot
//!   hold.
//!
//! The rule-based weights (`general_ci_weight`, `latin1_swedish_weight`)
//! are checked code point by code point against MariaDB by
//! `tests/differential/collations.py`; the spot checks here are facts from
//! MySQL's manual and that comparison. The `utf8mb4_0900_*` collations,
//! which MariaDB lacks, are checked against examples of MySQL 8.0
//! sessions (`mysql_0900_examples`).

use std::cmp::Ordering;

use super::*;
use crate::types::testutil::Rng;

/// The strings whose weights are golden, in `GOLDEN` order.
const GOLDEN_STRINGS: [&str; 15] = [
    "", "a", "A", "a ", "ab", "é", "ß", "ss", "Å", "ø", "Ω", "中", "한", "😀", "\t",
];

/// Hex weight strings of `GOLDEN_STRINGS` per collation (from
/// `cargo run -p quire-engine --example collation_dump -- <collation> -`).
const GOLDEN: [(Collation, [&str; 15]); 15] = [
    (
        Collation::Utf8mb4_0900AiCi,
        [
            "", "2B", "2B", "2B04", "2B2D", "33", "4F4F", "4F4F", "2B", "47", "6156", "FA025C",
            "7C2A67B9", "0D4C5C", "0304",
        ],
    ),
    (
        Collation::Utf8mb4_0900AsCi,
        [
            "01",
            "2B0105",
            "2B0105",
            "2B040106",
            "2B2D0106",
            "33014588",
            "4F4F017005",
            "4F4F0106",
            "2B014592",
            "4701459E",
            "61560105",
            "FA025C0105",
            "7C2A67B90107",
            "0D4C5C0105",
            "03040105",
        ],
    ),
    (
        Collation::Utf8mb4_0900AsCs,
        [
            "0101",
            "2B01050105",
            "2B010501DC",
            "2B0401060106",
            "2B2D01060106",
            "330145880106",
            "4F4F01700501E0D3",
            "4F4F01060106",
            "2B01459201DC05",
            "4701459E0106",
            "6156010501D8",
            "FA025C01050105",
            "7C2A67B901070107",
            "0D4C5C01050105",
            "030401050105",
        ],
    ),
    (
        Collation::Utf8mb4_0900Bin,
        [
            "", "61", "41", "6120", "6162", "C3A9", "C39F", "7373", "C385", "C3B8", "CEA9",
            "E4B8AD", "ED959C", "F09F9880", "09",
        ],
    ),
    (
        Collation::Utf8mb4Bin,
        [
            "", "61", "41", "61", "6162", "C3A9", "C39F", "7373", "C385", "C3B8", "CEA9", "E4B8AD",
            "ED959C", "F09F9880", "09",
        ],
    ),
    (
        Collation::Utf8mb4GeneralCi,
        [
            "", "0041", "0041", "0041", "00410042", "0045", "0053", "00530053", "0041", "00D8",
            "03A9", "4E2D", "D55C", "FFFD", "0009",
        ],
    ),
    (
        Collation::Utf8mb4UnicodeCi,
        [
            "", "2B", "2B", "2B", "2B2D", "33", "4F4F", "4F4F", "2B", "47", "6156", "FA025C",
            "7C2A67B9", "FFFF", "0304",
        ],
    ),
    (
        Collation::Utf8mb3GeneralCi,
        [
            "", "0041", "0041", "0041", "00410042", "0045", "0053", "00530053", "0041", "00D8",
            "03A9", "4E2D", "D55C", "FFFD", "0009",
        ],
    ),
    (
        Collation::Utf8mb3Bin,
        [
            "", "61", "41", "61", "6162", "C3A9", "C39F", "7373", "C385", "C3B8", "CEA9", "E4B8AD",
            "ED959C", "F09F9880", "09",
        ],
    ),
    (
        Collation::Utf8mb3UnicodeCi,
        [
            "", "2B", "2B", "2B", "2B2D", "33", "4F4F", "4F4F", "2B", "47", "6156", "FA025C",
            "7C2A67B9", "FFFF", "0304",
        ],
    ),
    (
        Collation::Latin1SwedishCi,
        [
            "", "41", "41", "41", "4142", "45", "DF", "5353", "5B", "D8", "3F", "3F", "3F", "3F",
            "09",
        ],
    ),
    (
        Collation::Latin1Bin,
        [
            "", "61", "41", "61", "6162", "E9", "DF", "7373", "C5", "F8", "3F", "3F", "3F", "3F",
            "09",
        ],
    ),
    (
        Collation::AsciiGeneralCi,
        [
            "", "41", "41", "41", "4142", "C3A9", "C39F", "5353", "C385", "C3B8", "CEA9", "E4B8AD",
            "ED959C", "F09F9880", "09",
        ],
    ),
    (
        Collation::AsciiBin,
        [
            "", "61", "41", "61", "6162", "C3A9", "C39F", "7373", "C385", "C3B8", "CEA9", "E4B8AD",
            "ED959C", "F09F9880", "09",
        ],
    ),
    (
        Collation::Binary,
        [
            "", "61", "41", "6120", "6162", "C3A9", "C39F", "7373", "C385", "C3B8", "CEA9",
            "E4B8AD", "ED959C", "F09F9880", "09",
        ],
    ),
];

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02X}")).collect()
}

#[test]
fn golden_weights() {
    let mut seen = Vec::new();
    for (c, want) in GOLDEN {
        seen.push(c);
        for (s, w) in GOLDEN_STRINGS.iter().zip(want) {
            assert_eq!(
                hex(&c.weight_of(s.as_bytes())),
                w,
                "{} weight of {s:?}",
                c.name()
            );
        }
    }
    for c in Collation::ALL {
        assert!(seen.contains(&c), "{} has no golden weights", c.name());
    }
}

/// Characters collations disagree about: case, accents (precomposed and
/// combining), expansions, characters below space, ignorables, the
/// Swedish letters and their ASCII look-alikes, scripts, supplementary
/// characters.
const ALPHABET: &[char] = &[
    'a', 'A', 'b', 'z', 'Z', 'e', 'é', 'E', '\u{301}', 's', 'S', 'ß', 'ẞ', 'æ', 'ø', 'o', 'Å', 'ä',
    '[', '\\', ']', 'y', 'ü', 'ÿ', 'Ð', 'ﬁ', 'Ω', 'Й', 'й', 'и', '中', '한', 'ㄱ', '😀', '😁',
    '\u{FFFD}', '\u{FFFF}', '\u{AD}', '\u{0}', '\t', ' ', ' ', '1', '9', '-', '_', '€',
];

fn random_string(rng: &mut Rng) -> Vec<u8> {
    let mut s = String::new();
    for _ in 0..rng.below(6) {
        s.push(*rng.pick(ALPHABET));
    }
    let mut b = s.into_bytes();
    if rng.below(20) == 0 {
        b.push(0xFF); // not UTF-8: weighs as U+FFFD
    }
    b
}

#[test]
fn cmp_is_the_order_of_weights() {
    for c in Collation::ALL {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ u64::from(c.id()));
        let strings: Vec<Vec<u8>> = (0..160).map(|_| random_string(&mut rng)).collect();
        let weights: Vec<Vec<u8>> = strings.iter().map(|s| c.weight_of(s)).collect();
        for (a, wa) in strings.iter().zip(&weights) {
            for (b, wb) in strings.iter().zip(&weights) {
                assert_eq!(
                    c.cmp(a, b),
                    wa.cmp(wb),
                    "{}: {:?} vs {:?}",
                    c.name(),
                    String::from_utf8_lossy(a),
                    String::from_utf8_lossy(b)
                );
            }
        }
    }
}

#[test]
fn pad_space_ignores_trailing_spaces_only() {
    for c in Collation::ALL {
        let eq = c.cmp(b"a", b"a  ") == Ordering::Equal;
        assert_eq!(eq, c.pad_space(), "{}", c.name());
        assert_ne!(c.cmp(b"a", b" a"), Ordering::Equal, "{}", c.name());
    }
}

/// Characters for the LIKE check: the alphabet and a spread of the BMP
/// and beyond, only those the collation's character set holds.
fn sample_chars(c: Collation) -> Vec<char> {
    let bmp = (0..0x1_0000).step_by(193);
    let supplementary = (0x1_0000..0x11_0000).step_by(0x1_0003);
    let spread = bmp.chain(supplementary).filter_map(char::from_u32);
    ALPHABET
        .iter()
        .copied()
        .chain(spread)
        .filter(|&ch| {
            ch != ' '
                && c.charset()
                    .unrepresentable(ch.encode_utf8(&mut [0; 4]))
                    .is_none()
        })
        .collect()
}

#[test]
fn char_eq_is_equal_single_character_weights() {
    // Space is left out: PAD SPACE weighs a lone ' ' as the empty string,
    // while LIKE compares it as a character.
    for c in Collation::ALL {
        let chars = sample_chars(c);
        let weights: Vec<Vec<u8>> = chars
            .iter()
            .map(|ch| c.weight_of(ch.encode_utf8(&mut [0; 4]).as_bytes()))
            .collect();
        for (&a, wa) in chars.iter().zip(&weights) {
            for (&b, wb) in chars.iter().zip(&weights) {
                assert_eq!(c.char_eq(a, b), wa == wb, "{}: {a:?} vs {b:?}", c.name());
            }
        }
    }
}

#[test]
fn cp1252_round_trip() {
    for b in 0..=255u8 {
        assert_eq!(cp1252_byte(cp1252_char(b)), Some(b), "byte {b:#04X}");
    }
    let mut held = 0;
    for ch in (0..0x11_0000).filter_map(char::from_u32) {
        if let Some(b) = cp1252_byte(ch) {
            assert_eq!(cp1252_char(b), ch);
            held += 1;
        }
    }
    assert_eq!(held, 256);
    assert_eq!(cp1252_char(0x80), '€');
    assert_eq!(cp1252_char(0x81), '\u{81}');
    assert_eq!(cp1252_char(0x9F), 'Ÿ');
}

#[test]
fn unrepresentable() {
    let first = |cs: Charset, s: &str| cs.unrepresentable(s);
    assert_eq!(first(Charset::Latin1, "aé€Ÿ"), None);
    assert_eq!(first(Charset::Latin1, "aé中b"), Some((3, '中')));
    assert_eq!(first(Charset::Latin1, "Ā"), Some((0, 'Ā')));
    assert_eq!(
        first(Charset::Latin1, "\u{81}\u{8D}\u{8F}\u{90}\u{9D}"),
        None
    );
    assert_eq!(first(Charset::Latin1, "\u{80}"), Some((0, '\u{80}')));
    assert_eq!(first(Charset::Ascii, "abc\x7F"), None);
    assert_eq!(first(Charset::Ascii, "abé"), Some((2, 'é')));
    assert_eq!(first(Charset::Utf8mb3, "中\u{FFFF}"), None);
    assert_eq!(first(Charset::Utf8mb3, "a😀"), Some((1, '😀')));
    assert_eq!(first(Charset::Utf8mb4, "a😀"), None);
    assert_eq!(first(Charset::Binary, "a😀"), None);
}

fn eq(c: Collation, a: &str, b: &str) -> bool {
    c.cmp(a.as_bytes(), b.as_bytes()) == Ordering::Equal
}

/// The 0900 collations, which MariaDB does not have, against MySQL 8.0
/// sessions: 'ß' = 'ss' and emoji distinct under utf8mb4_0900_ai_ci while
/// utf8mb4_general_ci has 'ß' <> 'ss' and all emoji equal (MySQL 8.0.25);
/// kana under the three 0900 strengths (MySQL 8.0.22); NO PAD (the
/// manual's "Trailing Space Handling in Comparisons").
#[test]
fn mysql_0900_examples() {
    use Collation::*;
    let (ai, as_ci, as_cs) = (Utf8mb4_0900AiCi, Utf8mb4_0900AsCi, Utf8mb4_0900AsCs);
    assert!(eq(ai, "a", "A") && eq(ai, "a", "á") && eq(ai, "A", "Á"));
    assert!(eq(ai, "ß", "ss"));
    assert!(!eq(ai, "Hey! 🙂", "Hey! 😡"));
    assert!(eq(Utf8mb4GeneralCi, "Hey! 🙂", "Hey! 😡"));
    assert!(!eq(Utf8mb4GeneralCi, "ß", "ss"));
    assert!(eq(Utf8mb4UnicodeCi, "ß", "ss"));
    assert!(!eq(Utf8mb4_0900Bin, "ß", "ss"));
    // Kana: ai_ci ignores voicing marks, small letters and hiragana vs
    // katakana; as_ci only the last two; as_cs none.
    assert!(eq(ai, "はは", "ハハ") && eq(ai, "はは", "ぱぱ") && eq(ai, "びょういん", "びよういん"));
    assert!(eq(as_ci, "はは", "ハハ") && !eq(as_ci, "はは", "ぱぱ"));
    assert!(eq(as_ci, "A", "a") && !eq(as_ci, "a", "á"));
    assert!(!eq(as_cs, "はは", "ハハ") && !eq(as_cs, "A", "a") && !eq(as_cs, "🍣", "🍺"));
    assert!(!eq(ai, "🍣", "🍺") && eq(Utf8mb4GeneralCi, "🍣", "🍺"));
    // NO PAD: trailing spaces count; PAD SPACE: they do not.
    for c in [ai, as_ci, as_cs, Utf8mb4_0900Bin, Binary] {
        assert!(!eq(c, "a", "a "), "{}", c.name());
        assert_eq!(c.cmp(b"a", b"a "), Ordering::Less, "{}", c.name());
    }
    assert!(eq(Utf8mb4Bin, "a", "a "));
    // Order within and across levels.
    assert_eq!(ai.cmp("a".as_bytes(), "B".as_bytes()), Ordering::Less);
    assert_eq!(as_cs.cmp("a".as_bytes(), "A".as_bytes()), Ordering::Less);
    assert_eq!(as_ci.cmp("a".as_bytes(), "á".as_bytes()), Ordering::Less);
}

/// Spot checks of the rules (all confirmed by collations.py).
#[test]
fn general_ci_and_swedish_rules() {
    use Collation::*;
    let w = |c: char| general_ci_weight(c);
    assert_eq!(w('a'), 0x41);
    assert_eq!(w('é'), 0x45);
    assert_eq!(w('ß'), 0x53);
    assert_eq!(w('ǖ'), 0x55); // two accents deep
    assert_eq!(w('й'), 0x0419); // Russian's own letter, not и
    assert_eq!(w('ё'), 0x0415);
    assert_eq!(w('ϲ'), 0x03A3);
    assert_eq!(w('ƀ'), 0x0180); // its capital came after Unicode 3.0
    assert_eq!(w('\u{212B}'), 0x212B); // ANGSTROM SIGN: singleton, kept
    assert_eq!(w('\u{0385}'), 0x0385); // accents on a non-letter, kept
    assert_eq!(w('한'), 0xD55C); // Hangul is not decomposed
    assert_eq!(w('ａ'), 0xFF21);
    assert_eq!(w('😀'), 0xFFFD);
    assert!(eq(Utf8mb4GeneralCi, "Ärger", "ARGER"));
    let s = |c: char| latin1_swedish_weight(c);
    assert_eq!((s('Å'), s('[')), (b'[', b'['));
    assert_eq!((s('ä'), s('Æ'), s('\\')), (b'\\', b'\\', b'\\'));
    assert_eq!((s('Ö'), s(']')), (b']', b']'));
    assert_eq!((s('ø'), s('Ø')), (0xD8, 0xD8));
    assert_eq!((s('ü'), s('Y')), (b'Y', b'Y'));
    assert_eq!((s('ð'), s('þ'), s('ÿ'), s('ß')), (b'D', 0xDE, 0xFF, 0xDF));
    assert_eq!(s('中'), b'?');
    assert!(eq(Latin1SwedishCi, "Åsa", "[SA"));
    assert_eq!(
        Latin1SwedishCi.cmp("Öl".as_bytes(), "Zebra".as_bytes()),
        Ordering::Greater
    );
}

/// The ASCII table of `ascii_primary` reproduces ICU's own primary sort
/// key: every string of up to two ASCII characters, then long random ones
/// (digits, letters, punctuation, controls: sysbench's `c` column is such
/// text), and comparisons agree with ICU's.
#[test]
fn ascii_table_is_icus_primary_key() {
    for (b, (_, n)) in ascii_primary().iter().enumerate() {
        let full = icu_primary_key(&char::from(b as u8).to_string());
        assert_eq!(
            full.len(),
            usize::from(*n),
            "ASCII {b} has a longer primary"
        );
    }
    let ai = Collation::Utf8mb4_0900AiCi;
    let mut strs: Vec<String> = Vec::new();
    for a in 0u8..128 {
        strs.push(char::from(a).to_string());
        for b in 0u8..128 {
            strs.push([char::from(a), char::from(b)].iter().collect());
        }
    }
    let mut rng = Rng(0x5eed);
    for _ in 0..3000 {
        let len = rng.below(200);
        strs.push((0..len).map(|_| char::from(rng.below(128) as u8)).collect());
    }
    for s in &strs {
        assert_eq!(ai.weight_of(s.as_bytes()), icu_primary_key(s), "{s:?}");
    }
    for w in strs.windows(2).step_by(7) {
        let (a, b) = (w[0].as_bytes(), w[1].as_bytes());
        let want = icu_primary_key(&w[0]).cmp(&icu_primary_key(&w[1]));
        assert_eq!(ai.cmp(a, b), want, "{:?} vs {:?}", w[0], w[1]);
    }
}
