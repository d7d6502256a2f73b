//! Sizes with MySQL suffixes: `128M`, `16k`, `1G`.

/// Why [`parse_size`] refused a string.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseSizeError {
    /// Nothing to parse.
    #[error("empty value")]
    Empty,
    /// Not digits optionally followed by one of K, M, G, T, P, E.
    #[error("'{0}' is not a number with an optional K, M, G, T, P or E suffix")]
    Invalid(String),
    /// The number (after applying the suffix) does not fit in 64 bits.
    #[error("'{0}' is larger than 18446744073709551615")]
    Overflow(String),
}

const SUFFIXES: [(char, u32); 6] = [
    ('K', 10),
    ('M', 20),
    ('G', 30),
    ('T', 40),
    ('P', 50),
    ('E', 60),
];

/// Parses an unsigned integer with an optional MySQL size suffix.
///
/// As in MySQL's option parser, the suffixes are K, M, G, T, P and E
/// (either case), each a power of 1024: `16k` = 16384, `128M` = 134217728.
/// Surrounding whitespace is ignored. Signs, fractions and a trailing `B`
/// (`128MB`) are refused, as MySQL refuses them.
pub fn parse_size(s: &str) -> Result<u64, ParseSizeError> {
    let s = s.trim();
    if s.is_empty() {
        return Err(ParseSizeError::Empty);
    }
    let (digits, shift) = match s.chars().last() {
        Some(last) if last.is_ascii_alphabetic() => {
            let upper = last.to_ascii_uppercase();
            let Some(&(_, shift)) = SUFFIXES.iter().find(|(c, _)| *c == upper) else {
                return Err(ParseSizeError::Invalid(s.to_string()));
            };
            (&s[..s.len() - 1], shift)
        }
        _ => (s, 0),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(ParseSizeError::Invalid(s.to_string()));
    }
    let n: u64 = digits
        .parse()
        .map_err(|_| ParseSizeError::Overflow(s.to_string()))?;
    n.checked_mul(1u64 << shift)
        .ok_or_else(|| ParseSizeError::Overflow(s.to_string()))
}

/// Formats a byte count with the largest suffix that divides it exactly:
/// 268435456 → `256M`, 16384 → `16K`, 1000 → `1000`, 0 → `0`.
pub fn format_size(n: u64) -> String {
    if n == 0 {
        return "0".to_string();
    }
    for &(c, shift) in SUFFIXES.iter().rev() {
        let unit = 1u64 << shift;
        if n.is_multiple_of(unit) {
            return format!("{}{}", n / unit, c);
        }
    }
    n.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suffixes_are_powers_of_1024_in_either_case() {
        assert_eq!(parse_size("0"), Ok(0));
        assert_eq!(parse_size("512"), Ok(512));
        assert_eq!(parse_size("16k"), Ok(16384));
        assert_eq!(parse_size("16K"), Ok(16384));
        assert_eq!(parse_size("128M"), Ok(134_217_728));
        assert_eq!(parse_size("1g"), Ok(1 << 30));
        assert_eq!(parse_size("2T"), Ok(2 << 40));
        assert_eq!(parse_size(" 5M "), Ok(5 << 20));
        assert_eq!(parse_size("15E"), Ok(15 << 60));
    }

    #[test]
    fn garbage_and_overflow_are_refused() {
        assert_eq!(parse_size(""), Err(ParseSizeError::Empty));
        for bad in ["M", "12MB", "1.5G", "-1", "+1", "abc", "1 M", "0x10"] {
            assert!(
                matches!(parse_size(bad), Err(ParseSizeError::Invalid(_))),
                "{bad}"
            );
        }
        assert!(matches!(
            parse_size("16E"),
            Err(ParseSizeError::Overflow(_))
        ));
        assert!(matches!(
            parse_size("18446744073709551616"),
            Err(ParseSizeError::Overflow(_))
        ));
        assert_eq!(parse_size("18446744073709551615"), Ok(u64::MAX));
    }

    #[test]
    fn format_picks_largest_exact_suffix() {
        assert_eq!(format_size(0), "0");
        assert_eq!(format_size(1000), "1000");
        assert_eq!(format_size(16384), "16K");
        assert_eq!(format_size(5 << 20), "5M");
        assert_eq!(format_size(256 << 20), "256M");
        assert_eq!(format_size(1536 << 20), "1536M");
        assert_eq!(format_size(128 << 30), "128G");
        assert_eq!(format_size(u64::MAX), "18446744073709551615");
        for n in [1u64, 4096, 262_144, 104_857_600, 137_438_953_472] {
            assert_eq!(parse_size(&format_size(n)), Ok(n));
        }
    }
}
