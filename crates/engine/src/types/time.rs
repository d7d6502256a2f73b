//! # TIME values
//!
//! MySQL's TIME is a signed duration, not only a time of day: `-838:59:59`
//! to `838:59:59`, with up to six fractional digits. [`Time`] holds it as
//! signed microseconds, so order, equality and arithmetic are integer
//! operations:
//!
//! ```text
//!   '-26:03:04.5'   → micros = -(26·3600 + 3·60 + 4)·10⁶ − 500 000
//!   text            ← [-]hh:mm:ss[.ffffff], hours at least two digits
//! ```
//!
//! Reading follows MySQL's `str_to_time` for the forms applications send:
//! `[-][D ]hh:mm:ss[.f]`, `hh:mm`, `D hh`, `hhmmss[.f]`, `mmss`, `ss`; a
//! number reads as `[-]hhmmss[.f]` (`1234.5` is `00:12:34.5`). Fractions
//! round half away from zero to the column's precision, as MySQL 8.0 does
//! without `TIME_TRUNCATE_FRACTIONAL`.

use std::fmt;

/// A TIME value: signed microseconds within ±838:59:59.999999 (a column
/// holds at most ±838:59:59.000000; [`Time::MAX_MICROS`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Time {
    micros: i64,
}

const MICROS_PER_SECOND: i64 = 1_000_000;

impl Time {
    /// `838:59:59` in microseconds, the largest TIME a column stores.
    pub const MAX_MICROS: i64 = (838 * 3600 + 59 * 60 + 59) * MICROS_PER_SECOND;

    /// `None` beyond ±838:59:59.
    pub fn from_micros(micros: i64) -> Option<Time> {
        (micros.abs() <= Self::MAX_MICROS).then_some(Time { micros })
    }

    pub fn micros(&self) -> i64 {
        self.micros
    }

    pub fn is_negative(&self) -> bool {
        self.micros < 0
    }

    /// Whole hours, minutes, seconds and microseconds of the magnitude.
    pub fn parts(&self) -> (u64, u32, u32, u32) {
        let m = self.micros.unsigned_abs();
        let secs = m / 1_000_000;
        (
            secs / 3600,
            (secs / 60 % 60) as u32,
            (secs % 60) as u32,
            (m % 1_000_000) as u32,
        )
    }

    /// Rounds the fraction to `fsp` digits (half away from zero), as a
    /// TIME(fsp) column stores it. `None` if rounding leaves the range.
    pub fn round_to_fsp(&self, fsp: u8) -> Option<Time> {
        let unit = 10i64.pow(6 - u32::from(fsp.min(6)));
        let half = unit / 2;
        let mag = self.micros.abs();
        let rounded = (mag + half) / unit * unit;
        let micros = if self.micros < 0 { -rounded } else { rounded };
        Time::from_micros(micros)
    }

    /// `[-]hh:mm:ss` and exactly `fsp` fractional digits.
    pub fn format_fsp(&self, fsp: u8) -> String {
        let (h, m, s, us) = self.parts();
        let sign = if self.is_negative() { "-" } else { "" };
        let mut out = format!("{sign}{h:02}:{m:02}:{s:02}");
        if fsp > 0 {
            let frac = format!("{us:06}");
            out.push('.');
            out.push_str(&frac[..usize::from(fsp.min(6))]);
        }
        out
    }

    /// `[-]hhmmss` as an integer (the fraction dropped), MySQL's numeric
    /// value of a TIME in integer context.
    pub fn to_number(&self) -> i64 {
        let (h, m, s, _) = self.parts();
        let n = h as i64 * 10_000 + i64::from(m) * 100 + i64::from(s);
        if self.is_negative() {
            -n
        } else {
            n
        }
    }

    /// The value as a double `[-]hhmmss.ffffff`.
    pub fn to_f64(&self) -> f64 {
        let (_, _, _, us) = self.parts();
        let whole = self.to_number().unsigned_abs() as f64 + f64::from(us) / 1e6;
        if self.is_negative() {
            -whole
        } else {
            whole
        }
    }

    /// Reads MySQL's TIME text forms (see the module notes). `None` for
    /// text that is not a time; `Some(Err(shown))`-style range errors are
    /// the caller's: a value beyond ±838:59:59 comes back unclamped in
    /// [`ParsedTime::micros`] so the caller can say 1292 or clamp.
    pub fn parse(text: &str) -> Option<ParsedTime> {
        let t = text.trim();
        let (neg, t) = match t.strip_prefix('-') {
            Some(r) => (true, r.trim_start()),
            None => (false, t),
        };
        let (days, rest) = match t.split_once(' ') {
            Some((d, r)) if !d.is_empty() && d.bytes().all(|c| c.is_ascii_digit()) => {
                (Some(d.parse::<u64>().ok()?), r.trim())
            }
            _ => (None, t),
        };
        let (main, frac) = match rest.split_once('.') {
            Some((a, b)) => (a, Some(b)),
            None => (rest, None),
        };
        let frac_micros = match frac {
            Some(f) => parse_fraction(f)?,
            None => (0, 0),
        };
        let (h, m, s) = if main.contains(':') {
            let parts: Vec<&str> = main.split(':').collect();
            if parts.len() > 3
                || parts
                    .iter()
                    .any(|p| p.is_empty() || p.len() > 10 || !p.bytes().all(|c| c.is_ascii_digit()))
            {
                return None;
            }
            let n = |i: usize| parts.get(i).map_or(Some(0), |p| p.parse::<u64>().ok());
            (n(0)?, n(1)?, n(2)?)
        } else if days.is_some() {
            // `D hh`.
            if main.is_empty() || main.len() > 2 || !main.bytes().all(|c| c.is_ascii_digit()) {
                return None;
            }
            (main.parse().ok()?, 0, 0)
        } else {
            if main.is_empty() || main.len() > 12 || !main.bytes().all(|c| c.is_ascii_digit()) {
                return None;
            }
            let v: u64 = main.parse().ok()?;
            (v / 10_000, v / 100 % 100, v % 100)
        };
        if m > 59 || s > 59 {
            return None;
        }
        let hours = days.unwrap_or(0).checked_mul(24)?.checked_add(h)?;
        let secs = hours.checked_mul(3600)?.checked_add(m * 60 + s)?;
        let mag = i128::from(secs) * 1_000_000 + i128::from(frac_micros.0);
        Some(ParsedTime {
            micros: if neg { -mag } else { mag },
            extra_digits: frac_micros.1,
        })
    }
}

/// A parsed TIME before range checks: `micros` may exceed the column
/// range; `extra_digits` holds the 7th fractional digit (for rounding).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParsedTime {
    pub micros: i128,
    pub extra_digits: u8,
}

impl ParsedTime {
    /// Rounded to `fsp` digits (the 7th digit included) and range-checked:
    /// `Err(clamped)` when beyond ±838:59:59 (MySQL clamps and warns, or
    /// errors in strict mode).
    pub fn to_time(self, fsp: u8) -> Result<Time, Time> {
        let max = i128::from(Time::MAX_MICROS);
        let neg = self.micros < 0;
        // The magnitude in tenths of a microsecond, so the 7th digit rounds too.
        let tenths = self.micros.abs() * 10 + i128::from(self.extra_digits);
        let unit = 10i128.pow(7 - u32::from(fsp.min(6)));
        let mag = (tenths + unit / 2) / unit * unit / 10;
        let signed = |m: i128| (if neg { -m } else { m }) as i64;
        if mag > max {
            return Err(Time {
                micros: signed(max),
            });
        }
        Ok(Time {
            micros: signed(mag),
        })
    }
}

/// Up to 6 fractional digits as microseconds, and the 7th digit.
fn parse_fraction(f: &str) -> Option<(i64, u8)> {
    if f.is_empty() || !f.bytes().all(|c| c.is_ascii_digit()) {
        return if f.is_empty() { Some((0, 0)) } else { None };
    }
    let mut us: i64 = 0;
    for (i, c) in f.bytes().take(6).enumerate() {
        us += i64::from(c - b'0') * 10i64.pow(5 - i as u32);
    }
    let seventh = f.as_bytes().get(6).map_or(0, |c| c - b'0');
    Some((us, seventh))
}

impl fmt::Display for Time {
    /// Microseconds shown only when non-zero (as `Display` of DATETIME).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let fsp = if self.micros % MICROS_PER_SECOND == 0 {
            0
        } else {
            6
        };
        f.write_str(&self.format_fsp(fsp))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str, fsp: u8) -> Result<String, String> {
        let parsed = Time::parse(s).ok_or_else(|| "bad".to_string())?;
        parsed
            .to_time(fsp)
            .map(|t| t.format_fsp(fsp))
            .map_err(|t| format!("range {}", t.format_fsp(fsp)))
    }

    #[test]
    fn text_forms() {
        assert_eq!(p("12:34", 0).unwrap(), "12:34:00");
        assert_eq!(p("12:34:56", 0).unwrap(), "12:34:56");
        assert_eq!(p("1234.567", 2).unwrap(), "00:12:34.57");
        assert_eq!(p("-1 02:03:04.555", 2).unwrap(), "-26:03:04.56");
        assert_eq!(p("1 2", 0).unwrap(), "26:00:00");
        assert_eq!(p("56", 0).unwrap(), "00:00:56");
        assert_eq!(p("838:59:59", 0).unwrap(), "838:59:59");
        assert_eq!(p("-838:59:59", 0).unwrap(), "-838:59:59");
        assert_eq!(p("00:00:00.9999999", 6).unwrap(), "00:00:01.000000");
        assert_eq!(p("900:00:00", 0).unwrap_err(), "range 838:59:59");
        assert_eq!(p("838:59:59.6", 0).unwrap_err(), "range 838:59:59");
        assert!(p("abc", 0).is_err());
        assert!(p("12:60", 0).is_err());
        assert!(p("1:2:3:4", 0).is_err());
        assert!(p("", 0).is_err());
    }

    #[test]
    fn numbers_and_order() {
        let t = Time::parse("-12:34:56.5").unwrap().to_time(6).unwrap();
        assert_eq!(t.to_number(), -123456);
        assert_eq!(t.to_f64(), -123456.5);
        let a = Time::parse("-100:00:00").unwrap().to_time(0).unwrap();
        let b = Time::parse("-1:00:00").unwrap().to_time(0).unwrap();
        let c = Time::parse("99:00:00").unwrap().to_time(0).unwrap();
        let d = Time::parse("100:00:00").unwrap().to_time(0).unwrap();
        assert!(a < b && b < c && c < d);
        assert_eq!(d.to_string(), "100:00:00");
        assert_eq!(Time::from_micros(Time::MAX_MICROS + 1), None);
        assert_eq!(
            Time::from_micros(1_500_000)
                .unwrap()
                .round_to_fsp(0)
                .unwrap()
                .to_string(),
            "00:00:02"
        );
    }
}
