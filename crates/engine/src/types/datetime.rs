//! # DATE and DATETIME / TIMESTAMP values
//!
//! [`Date`] and [`DateTime`] are broken-down calendar values exactly as
//! MySQL's `MYSQL_TIME` holds them: no time zone, no epoch arithmetic.
//! TIMESTAMP columns use [`DateTime`] too, holding the UTC value: the
//! transaction converts from and to the session time zone at its row
//! interface (`crate::tszone`), and the range `1970-01-01 00:00:01.000000`
//! ..= `2038-01-19 03:14:07.999999` is checked on the UTC value.
//!
//! ## Validity (strict mode with NO_ZERO_DATE and NO_ZERO_IN_DATE, the
//! MySQL 8.0 default `sql_mode`)
//!
//! * year 0..=9999, month 1..=12, day 1..=days in that month, hour 0..=23,
//!   minute and second 0..=59, microsecond 0..=999 999;
//! * leap years follow MySQL's `calc_days_in_year`: divisible by 4 and
//!   (not by 100, or by 400 and not year 0); so `0000-02-29` is invalid;
//! * zero dates (`0000-00-00`) and zero parts (`2024-00-10`) are invalid.
//!
//! ## Text accepted ([`parse_temporal`], after `str_to_datetime`)
//!
//! * delimited: `Y-M-D`, with any ASCII punctuation as the delimiter, a
//!   1..=4 digit year (1–2 digits: 70..=99 → 19xx, 00..=69 → 20xx), 1–2
//!   digit month and day; optionally followed by `T` or whitespace and
//!   `h`, `h:m` or `h:m:s` (1–2 digits each, any punctuation as delimiter)
//!   and a `.fraction` of any length;
//! * digits only: `YYYYMMDD`, `YYMMDD`, `YYYYMMDDhhmmss`, `YYMMDDhhmmss`,
//!   the last two optionally with `.fraction`;
//! * surrounding whitespace is ignored; anything else makes the text
//!   invalid.
//!
//! Fractions longer than 6 digits are rounded to microseconds using the
//! 7th digit (MySQL rounds the nanosecond part), then to the column's
//! `fsp` half up, carrying into seconds, minutes, ... years.
//!
//! Numbers are read like `number_to_datetime`: `YYMMDD`, `YYYYMMDD`,
//! `YYMMDDhhmmss`, `YYYYMMDDhhmmss`.

use std::fmt;

/// A calendar date, `YYYY-MM-DD`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Date {
    pub year: u16,
    pub month: u8,
    pub day: u8,
}

/// A date and time of day with microseconds, `YYYY-MM-DD hh:mm:ss[.ffffff]`.
/// Field order makes the derived `Ord` chronological.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DateTime {
    pub year: u16,
    pub month: u8,
    pub day: u8,
    pub hour: u8,
    pub minute: u8,
    pub second: u8,
    pub micro: u32,
}

/// MySQL's leap-year rule (`calc_days_in_year`): year 0 is not a leap year.
pub fn is_leap_year(year: u32) -> bool {
    year.is_multiple_of(4) && (!year.is_multiple_of(100) || (year.is_multiple_of(400) && year != 0))
}

/// Days in `month` (1..=12) of `year`; 0 for an invalid month.
pub fn days_in_month(year: u32, month: u32) -> u32 {
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if is_leap_year(year) => 29,
        2 => 28,
        _ => 0,
    }
}

/// Smallest TIMESTAMP value (as a UTC literal).
pub const TIMESTAMP_MIN: DateTime = DateTime {
    year: 1970,
    month: 1,
    day: 1,
    hour: 0,
    minute: 0,
    second: 1,
    micro: 0,
};

/// Largest TIMESTAMP value (as a UTC literal).
pub const TIMESTAMP_MAX: DateTime = DateTime {
    year: 2038,
    month: 1,
    day: 19,
    hour: 3,
    minute: 14,
    second: 7,
    micro: 999_999,
};

impl Date {
    /// A valid date, or `None`.
    pub fn new(year: u32, month: u32, day: u32) -> Option<Date> {
        if year > 9999 || month == 0 || month > 12 || day == 0 || day > days_in_month(year, month) {
            return None;
        }
        Some(Date {
            year: year as u16,
            month: month as u8,
            day: day as u8,
        })
    }

    /// Midnight of this day.
    pub fn to_datetime(self) -> DateTime {
        DateTime {
            year: self.year,
            month: self.month,
            day: self.day,
            hour: 0,
            minute: 0,
            second: 0,
            micro: 0,
        }
    }

    /// `YYYYMMDD` as MySQL gives a DATE in numeric context.
    pub fn to_number(self) -> u64 {
        u64::from(self.year) * 10_000 + u64::from(self.month) * 100 + u64::from(self.day)
    }

    /// Order-preserving packing into 23 bits: `(year×13 + month)×32 + day`.
    pub fn pack(self) -> u32 {
        (u32::from(self.year) * 13 + u32::from(self.month)) * 32 + u32::from(self.day)
    }

    /// Inverse of [`Date::pack`]; `None` unless the result is a valid date.
    pub fn unpack(packed: u32) -> Option<Date> {
        let day = packed % 32;
        let ym = packed / 32;
        Date::new(ym / 13, ym % 13, day)
    }
}

impl DateTime {
    /// A valid date-time, or `None`.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        year: u32,
        month: u32,
        day: u32,
        hour: u32,
        minute: u32,
        second: u32,
        micro: u32,
    ) -> Option<DateTime> {
        let date = Date::new(year, month, day)?;
        if hour > 23 || minute > 59 || second > 59 || micro > 999_999 {
            return None;
        }
        Some(DateTime {
            year: date.year,
            month: date.month,
            day: date.day,
            hour: hour as u8,
            minute: minute as u8,
            second: second as u8,
            micro,
        })
    }

    pub fn date(self) -> Date {
        Date {
            year: self.year,
            month: self.month,
            day: self.day,
        }
    }

    /// Order-preserving packing into a u64:
    /// `((((((year×13 + month)×32 + day)×24 + hour)×60 + minute)×60 + second)×10⁶ + micro`.
    pub fn pack(self) -> u64 {
        let days = u64::from(self.date().pack());
        let secs = ((days * 24 + u64::from(self.hour)) * 60 + u64::from(self.minute)) * 60
            + u64::from(self.second);
        secs * 1_000_000 + u64::from(self.micro)
    }

    /// Inverse of [`DateTime::pack`]; `None` unless valid.
    pub fn unpack(packed: u64) -> Option<DateTime> {
        let micro = (packed % 1_000_000) as u32;
        let mut rest = packed / 1_000_000;
        let second = (rest % 60) as u32;
        rest /= 60;
        let minute = (rest % 60) as u32;
        rest /= 60;
        let hour = (rest % 24) as u32;
        rest /= 24;
        let date = Date::unpack(u32::try_from(rest).ok()?)?;
        DateTime::new(
            u32::from(date.year),
            u32::from(date.month),
            u32::from(date.day),
            hour,
            minute,
            second,
            micro,
        )
    }

    /// `YYYYMMDDhhmmss` (fraction dropped).
    pub fn to_number(self) -> u64 {
        self.date().to_number() * 1_000_000
            + u64::from(self.hour) * 10_000
            + u64::from(self.minute) * 100
            + u64::from(self.second)
    }

    /// Adds `micros` (< 2 s) with carry through the calendar; `None` past
    /// 9999-12-31 23:59:59.999999.
    pub fn add_micros(self, micros: u32) -> Option<DateTime> {
        let mut t = self;
        let total = u64::from(t.micro) + u64::from(micros);
        t.micro = (total % 1_000_000) as u32;
        let mut carry = (total / 1_000_000) as u32;
        while carry > 0 {
            carry -= 1;
            t = t.next_second()?;
        }
        Some(t)
    }

    fn next_second(mut self) -> Option<DateTime> {
        self.second += 1;
        if self.second < 60 {
            return Some(self);
        }
        self.second = 0;
        self.minute += 1;
        if self.minute < 60 {
            return Some(self);
        }
        self.minute = 0;
        self.hour += 1;
        if self.hour < 24 {
            return Some(self);
        }
        self.hour = 0;
        self.day += 1;
        if u32::from(self.day) <= days_in_month(u32::from(self.year), u32::from(self.month)) {
            return Some(self);
        }
        self.day = 1;
        self.month += 1;
        if self.month <= 12 {
            return Some(self);
        }
        self.month = 1;
        if self.year >= 9999 {
            return None;
        }
        self.year += 1;
        Some(self)
    }

    /// Rounds the microseconds half up to `fsp` (0..=6) digits, carrying
    /// into the seconds (MySQL's default, without TIME_TRUNCATE_FRACTIONAL).
    /// `None` if the carry overflows year 9999.
    pub fn round_to_fsp(self, fsp: u8) -> Option<DateTime> {
        let fsp = fsp.min(6);
        let unit = 10u32.pow(u32::from(6 - fsp));
        let rem = self.micro % unit;
        let mut t = self;
        t.micro -= rem;
        if rem * 2 >= unit && unit > 1 {
            t = t.add_micros(unit)?;
        }
        Some(t)
    }

    /// The text MySQL prints for a `DATETIME(fsp)` / `TIMESTAMP(fsp)` column:
    /// exactly `fsp` fractional digits (none for 0).
    pub fn format_fsp(self, fsp: u8) -> String {
        let mut s = format!(
            "{:04}-{:02}-{:02} {:02}:{:02}:{:02}",
            self.year, self.month, self.day, self.hour, self.minute, self.second
        );
        let fsp = fsp.min(6);
        if fsp > 0 {
            let frac = format!("{:06}", self.micro);
            s.push('.');
            s.push_str(&frac[..fsp as usize]);
        }
        s
    }

    /// Whether this literal lies in the TIMESTAMP range.
    pub fn in_timestamp_range(self) -> bool {
        self >= TIMESTAMP_MIN && self <= TIMESTAMP_MAX
    }
}

impl fmt::Display for Date {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:04}-{:02}-{:02}", self.year, self.month, self.day)
    }
}

/// Prints the microseconds (all six digits) only when non-zero; use
/// [`DateTime::format_fsp`] for a column's exact rendering.
impl fmt::Display for DateTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.format_fsp(if self.micro != 0 { 6 } else { 0 }))
    }
}

/// Broken-down parts read from text or a number, not yet validated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TemporalParts {
    pub year: u32,
    pub month: u32,
    pub day: u32,
    pub hour: u32,
    pub minute: u32,
    pub second: u32,
    /// First six fractional digits, right-padded with zeros.
    pub micro: u32,
    /// The 7th fractional digit was >= 5: add one microsecond.
    pub round_micro_up: bool,
    /// A time part was present.
    pub has_time: bool,
}

impl TemporalParts {
    /// Valid date-time (after the sub-microsecond rounding), or `None`.
    pub fn to_datetime(self) -> Option<DateTime> {
        let t = DateTime::new(
            self.year,
            self.month,
            self.day,
            self.hour,
            self.minute,
            self.second,
            self.micro,
        )?;
        if self.round_micro_up {
            t.add_micros(1)
        } else {
            Some(t)
        }
    }

    /// Valid date (time part ignored, as MySQL truncates it with a note).
    pub fn to_date(self) -> Option<Date> {
        // The time part must still be well-formed.
        DateTime::new(
            self.year,
            self.month,
            self.day,
            self.hour,
            self.minute,
            self.second,
            self.micro,
        )
        .map(|t| t.date())
    }
}

fn two_digit_year(y: u32) -> u32 {
    if y < 70 {
        2000 + y
    } else {
        1900 + y
    }
}

fn digits_value(d: &[u8]) -> u32 {
    d.iter()
        .fold(0u32, |acc, &b| acc * 10 + u32::from(b - b'0'))
}

/// Reads a `.fraction` starting at `s[i] == '.'`; returns (micro, round_up, end).
fn read_fraction(s: &[u8], mut i: usize) -> Option<(u32, bool, usize)> {
    debug_assert_eq!(s[i], b'.');
    i += 1;
    let start = i;
    while i < s.len() && s[i].is_ascii_digit() {
        i += 1;
    }
    let frac = &s[start..i];
    if frac.is_empty() {
        // "12:00:00." — MySQL accepts a bare point.
        return Some((0, false, i));
    }
    let mut micro = 0u32;
    for k in 0..6 {
        micro = micro * 10 + frac.get(k).map_or(0, |&b| u32::from(b - b'0'));
    }
    let round_up = frac.get(6).is_some_and(|&b| b >= b'5');
    Some((micro, round_up, i))
}

/// Parses date/datetime text (see the module docs). `None` when the text
/// is not a well-formed date or date-time; the parts are not validated.
pub fn parse_temporal(text: &[u8]) -> Option<TemporalParts> {
    let start = text.iter().position(|b| !b.is_ascii_whitespace())?;
    let end = text.iter().rposition(|b| !b.is_ascii_whitespace())? + 1;
    let s = &text[start..end];

    let mut parts = TemporalParts {
        year: 0,
        month: 0,
        day: 0,
        hour: 0,
        minute: 0,
        second: 0,
        micro: 0,
        round_micro_up: false,
        has_time: false,
    };

    // Digits-only forms.
    let lead = s.iter().take_while(|b| b.is_ascii_digit()).count();
    if lead == s.len() || (s.get(lead) == Some(&b'.') && (lead == 12 || lead == 14)) {
        let d = &s[..lead];
        let (year_len, has_time) = match lead {
            14 => (4, true),
            12 => (2, true),
            8 => (4, false),
            6 => (2, false),
            _ => return None,
        };
        let year = digits_value(&d[..year_len]);
        parts.year = if year_len == 2 {
            two_digit_year(year)
        } else {
            year
        };
        let rest = &d[year_len..];
        parts.month = digits_value(&rest[0..2]);
        parts.day = digits_value(&rest[2..4]);
        if has_time {
            parts.has_time = true;
            parts.hour = digits_value(&rest[4..6]);
            parts.minute = digits_value(&rest[6..8]);
            parts.second = digits_value(&rest[8..10]);
            if lead < s.len() {
                let (micro, up, e) = read_fraction(s, lead)?;
                if e != s.len() {
                    return None;
                }
                parts.micro = micro;
                parts.round_micro_up = up;
            }
        }
        return Some(parts);
    }

    // Delimited form.
    let mut i = 0;
    let read_num = |i: &mut usize, max_len: usize| -> Option<(u32, usize)> {
        let st = *i;
        while *i < s.len() && s[*i].is_ascii_digit() && *i - st < max_len {
            *i += 1;
        }
        if *i == st {
            return None;
        }
        Some((digits_value(&s[st..*i]), *i - st))
    };
    let punct = |i: &mut usize| -> Option<()> {
        if *i < s.len() && s[*i].is_ascii_punctuation() {
            *i += 1;
            Some(())
        } else {
            None
        }
    };
    let (year, year_len) = read_num(&mut i, 4)?;
    parts.year = if year_len <= 2 {
        two_digit_year(year)
    } else {
        year
    };
    punct(&mut i)?;
    parts.month = read_num(&mut i, 2)?.0;
    punct(&mut i)?;
    parts.day = read_num(&mut i, 2)?.0;
    if i == s.len() {
        return Some(parts);
    }
    // Date/time separator: 'T' or whitespace.
    if s[i] == b'T' || s[i] == b't' {
        i += 1;
    } else if s[i].is_ascii_whitespace() {
        while i < s.len() && s[i].is_ascii_whitespace() {
            i += 1;
        }
    } else {
        return None;
    }
    parts.has_time = true;
    parts.hour = read_num(&mut i, 2)?.0;
    if i < s.len() {
        punct(&mut i)?;
        parts.minute = read_num(&mut i, 2)?.0;
        if i < s.len() {
            punct(&mut i)?;
            parts.second = read_num(&mut i, 2)?.0;
        }
    }
    // Only after the seconds does '.' start a fraction.
    if i < s.len() && s[i] == b'.' {
        let (micro, up, e) = read_fraction(s, i)?;
        parts.micro = micro;
        parts.round_micro_up = up;
        i = e;
    }
    if i != s.len() {
        return None;
    }
    Some(parts)
}

/// Reads a number as MySQL's `number_to_datetime` does (`YYMMDD`,
/// `YYYYMMDD`, `YYMMDDhhmmss`, `YYYYMMDDhhmmss`). `None` for numbers that
/// are none of these; 0 (the zero date) also gives `None`.
pub fn number_to_temporal(n: u64) -> Option<TemporalParts> {
    let full: u64 = if n < 101 {
        return None;
    } else if n <= 691_231 {
        (n + 20_000_000) * 1_000_000
    } else if n < 700_101 {
        return None;
    } else if n <= 991_231 {
        (n + 19_000_000) * 1_000_000
    } else if n < 10_000_101 {
        return None;
    } else if n <= 99_991_231 {
        n * 1_000_000
    } else if n < 101_000_000 {
        return None;
    } else if n <= 691_231_235_959 {
        n + 20_000_000_000_000
    } else if n < 700_101_000_000 {
        return None;
    } else if n <= 991_231_235_959 {
        n + 19_000_000_000_000
    } else if n < 10_000_101_000_000 {
        return None;
    } else if n <= 99_991_231_235_959 {
        n
    } else {
        return None;
    };
    let has_time = n > 99_991_231;
    let date_part = full / 1_000_000;
    let time_part = full % 1_000_000;
    Some(TemporalParts {
        year: (date_part / 10_000) as u32,
        month: (date_part / 100 % 100) as u32,
        day: (date_part % 100) as u32,
        hour: (time_part / 10_000) as u32,
        minute: (time_part / 100 % 100) as u32,
        second: (time_part % 100) as u32,
        micro: 0,
        round_micro_up: false,
        has_time,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dt(s: &str) -> Option<DateTime> {
        parse_temporal(s.as_bytes()).and_then(|p| p.to_datetime())
    }

    #[test]
    fn date_leap_years() {
        assert!(Date::new(2024, 2, 29).is_some());
        assert!(Date::new(2023, 2, 29).is_none());
        assert!(Date::new(2000, 2, 29).is_some());
        assert!(Date::new(1900, 2, 29).is_none());
        assert!(Date::new(0, 2, 29).is_none(), "MySQL: year 0 is not leap");
        assert!(Date::new(4, 2, 29).is_some());
        assert!(Date::new(2024, 4, 31).is_none());
        assert!(Date::new(2024, 12, 31).is_some());
        assert!(Date::new(2024, 13, 1).is_none());
        assert!(Date::new(2024, 0, 1).is_none());
        assert!(Date::new(2024, 1, 0).is_none());
        assert!(Date::new(10000, 1, 1).is_none());
        assert!(Date::new(0, 1, 1).is_some());
    }

    #[test]
    fn temporal_text_forms() {
        let want = DateTime::new(2024, 1, 31, 10, 5, 7, 0).unwrap();
        for s in [
            "2024-01-31 10:05:07",
            "2024-1-31 10:5:7",
            "2024/01/31 10.05.07",
            "2024-01-31T10:05:07",
            "  2024-01-31   10:05:07  ",
            "24-01-31 10:05:07",
            "20240131100507",
            "240131100507",
            "2024-01-31 10:05:07.",
        ] {
            assert_eq!(dt(s), Some(want), "{s}");
        }
        assert_eq!(
            dt("2024-01-31 10:05"),
            DateTime::new(2024, 1, 31, 10, 5, 0, 0)
        );
        assert_eq!(dt("2024-01-31"), DateTime::new(2024, 1, 31, 0, 0, 0, 0));
        assert_eq!(dt("20240131"), DateTime::new(2024, 1, 31, 0, 0, 0, 0));
        assert_eq!(dt("700131"), DateTime::new(1970, 1, 31, 0, 0, 0, 0));
        assert_eq!(dt("69-01-31"), DateTime::new(2069, 1, 31, 0, 0, 0, 0));
        assert_eq!(
            dt("2024-01-31 10:05:07.5"),
            DateTime::new(2024, 1, 31, 10, 5, 7, 500_000)
        );
        assert_eq!(
            dt("2024-01-31 10:05:07.1234565"),
            DateTime::new(2024, 1, 31, 10, 5, 7, 123_457)
        );
        assert_eq!(
            dt("2024-12-31 23:59:59.9999995"),
            DateTime::new(2025, 1, 1, 0, 0, 0, 0)
        );
        assert_eq!(
            dt("20240131100507.25"),
            DateTime::new(2024, 1, 31, 10, 5, 7, 250_000)
        );
        for bad in [
            "",
            "x",
            "2024",
            "2024-01",
            "2024-01-31x",
            "2024-01-31 10:05:07 x",
            "2024-01-32",
            "2023-02-29",
            "2024-02-30",
            "0000-00-00",
            "0000-00-00 00:00:00",
            "2024-00-10",
            "2024-01-00",
            "2024-01-31 24:00:00",
            "2024-01-31 10:60:00",
            "2024-01-31 10:00:60",
            "2024-13-01",
            "2024-01-31 10:05:07.5.5",
            "1234567",
            "9999-12-31 23:59:59.9999995",
        ] {
            assert_eq!(dt(bad), None, "{bad:?}");
        }
        assert_eq!(
            parse_temporal(b"2024-02-29").and_then(|p| p.to_date()),
            Date::new(2024, 2, 29)
        );
        assert_eq!(
            parse_temporal(b"2023-02-29").and_then(|p| p.to_date()),
            None
        );
    }

    #[test]
    fn temporal_numbers() {
        let n = |v: u64| number_to_temporal(v).and_then(|p| p.to_datetime());
        assert_eq!(n(20240131), DateTime::new(2024, 1, 31, 0, 0, 0, 0));
        assert_eq!(n(240131), DateTime::new(2024, 1, 31, 0, 0, 0, 0));
        assert_eq!(n(991231), DateTime::new(1999, 12, 31, 0, 0, 0, 0));
        assert_eq!(n(20240131102030), DateTime::new(2024, 1, 31, 10, 20, 30, 0));
        assert_eq!(n(240131102030), DateTime::new(2024, 1, 31, 10, 20, 30, 0));
        assert_eq!(n(0), None);
        assert_eq!(n(100), None);
        assert_eq!(n(691232), None);
        assert_eq!(n(20241301), None);
        assert_eq!(n(99991231235960), None);
        assert_eq!(n(100000000000000), None);
        assert!(!number_to_temporal(20240131).unwrap().has_time);
        assert!(number_to_temporal(20240131000000).unwrap().has_time);
    }

    #[test]
    fn datetime_rounding_and_format() {
        let t = DateTime::new(2024, 1, 31, 23, 59, 59, 999_500).unwrap();
        assert_eq!(t.round_to_fsp(3), DateTime::new(2024, 2, 1, 0, 0, 0, 0));
        assert_eq!(t.round_to_fsp(6), Some(t));
        let u = DateTime::new(2024, 1, 31, 10, 0, 0, 500_000).unwrap();
        assert_eq!(u.round_to_fsp(0), DateTime::new(2024, 1, 31, 10, 0, 1, 0));
        assert_eq!(u.format_fsp(6), "2024-01-31 10:00:00.500000");
        assert_eq!(u.format_fsp(2), "2024-01-31 10:00:00.50");
        assert_eq!(u.format_fsp(0), "2024-01-31 10:00:00");
        assert_eq!(u.to_string(), "2024-01-31 10:00:00.500000");
        assert_eq!(
            DateTime::new(5, 2, 3, 4, 5, 6, 0).unwrap().to_string(),
            "0005-02-03 04:05:06"
        );
        assert_eq!(Date::new(24, 1, 2).unwrap().to_string(), "0024-01-02");
        let last = DateTime::new(9999, 12, 31, 23, 59, 59, 999_999).unwrap();
        assert_eq!(last.round_to_fsp(0), None);
        assert_eq!(
            DateTime::new(2024, 2, 28, 23, 59, 59, 600_000)
                .unwrap()
                .round_to_fsp(0),
            DateTime::new(2024, 2, 29, 0, 0, 0, 0)
        );
        assert_eq!(
            DateTime::new(2023, 2, 28, 23, 59, 59, 600_000)
                .unwrap()
                .round_to_fsp(0),
            DateTime::new(2023, 3, 1, 0, 0, 0, 0)
        );
    }

    #[test]
    fn pack_roundtrip_and_order() {
        let samples = [
            DateTime::new(0, 1, 1, 0, 0, 0, 0).unwrap(),
            DateTime::new(1970, 1, 1, 0, 0, 1, 0).unwrap(),
            DateTime::new(2024, 1, 31, 23, 59, 59, 999_999).unwrap(),
            DateTime::new(2024, 2, 1, 0, 0, 0, 0).unwrap(),
            DateTime::new(9999, 12, 31, 23, 59, 59, 999_999).unwrap(),
        ];
        for w in samples.windows(2) {
            assert!(w[0].pack() < w[1].pack());
            assert!(w[0].date().pack() <= w[1].date().pack());
        }
        for t in samples {
            assert_eq!(DateTime::unpack(t.pack()), Some(t));
            assert_eq!(Date::unpack(t.date().pack()), Some(t.date()));
        }
        assert_eq!(Date::unpack(0), None);
        assert_eq!(DateTime::unpack(u64::MAX), None);
        assert!(TIMESTAMP_MIN.in_timestamp_range());
        assert!(TIMESTAMP_MAX.in_timestamp_range());
        assert!(!DateTime::new(1970, 1, 1, 0, 0, 0, 0)
            .unwrap()
            .in_timestamp_range());
        assert!(!DateTime::new(2038, 1, 19, 3, 14, 8, 0)
            .unwrap()
            .in_timestamp_range());
    }
}
