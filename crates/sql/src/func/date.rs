//! # Date and time functions
//!
//! Owns DATE_FORMAT, STR_TO_DATE, DATE_ADD/DATE_SUB/ADDDATE/SUBDATE and
//! `expr ± INTERVAL n unit`, DATEDIFF, TIMESTAMPDIFF/TIMESTAMPADD,
//! EXTRACT, the part getters (YEAR ... MICROSECOND, QUARTER, DAYOFWEEK,
//! WEEK, ...), LAST_DAY, MAKEDATE, DATE(), TIME(), TO_DAYS/FROM_DAYS,
//! UNIX_TIMESTAMP/FROM_UNIXTIME, CONVERT_TZ, TIME_TO_SEC/SEC_TO_TIME.
//!
//! Values are the engine's broken-down [`DateTime`] (MySQL's
//! `MYSQL_TIME`); calendar arithmetic (day numbers, weekdays) goes through
//! the `time` crate's proleptic Gregorian calendar. MySQL's day number
//! (`TO_DAYS`) is the Julian day minus 1 721 060.
//!
//! Rules followed (MySQL 8.0):
//! * an argument that is not a valid date gives NULL and warning 1292
//!   `Incorrect datetime value: '...'`; a result outside
//!   `0000-01-01 .. 9999-12-31` gives NULL and warning 1441;
//! * adding months clamps the day to the end of the month
//!   (`'2024-01-31' + INTERVAL 1 MONTH` = `2024-02-29`);
//! * DATE_ADD on a DATE with a unit of days or larger is a DATE; with a
//!   time unit, or on a DATETIME, a DATETIME; on a string, a string;
//! * compound interval strings (`'1 2:03'` DAY_MINUTE) are read as digit
//!   groups, right-aligned to the unit's fields; a `*_MICROSECOND` unit's
//!   last group is a fraction padded to 6 digits;
//! * WEEK modes 0–7 follow `calc_week` of `sql_time.cc`;
//! * quire has no TIME type: TIME(), SEC_TO_TIME() and a time-only
//!   STR_TO_DATE give the `hh:mm:ss[.ffffff]` text;
//! * UNIX_TIMESTAMP(dt) reads `dt` in the session time zone and
//!   FROM_UNIXTIME gives session time (`crate::tz`); CONVERT_TZ takes
//!   `SYSTEM`, `+hh:mm` offsets and names of the bundled tz database (an
//!   unknown zone is NULL without a warning, as in MySQL); a value whose
//!   UTC instant is outside 1970-01-01 00:00:01 .. 3001-01-19 03:14:07
//!   comes back unchanged, as MySQL leaves it.

use quire_engine::types::datetime::{
    days_in_month, is_leap_year, number_to_temporal, parse_temporal,
};
use quire_engine::types::DateTime;
use quire_engine::{ColumnType, Value};

use super::val;
use super::warn;

/// Interval and EXTRACT units.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    Microsecond,
    Second,
    Minute,
    Hour,
    Day,
    Week,
    Month,
    Quarter,
    Year,
    SecondMicrosecond,
    MinuteMicrosecond,
    MinuteSecond,
    HourMicrosecond,
    HourSecond,
    HourMinute,
    DayMicrosecond,
    DaySecond,
    DayMinute,
    DayHour,
    YearMonth,
}

impl Unit {
    pub fn parse(name: &str) -> Option<Unit> {
        use Unit::*;
        Some(match name.to_ascii_uppercase().trim() {
            "MICROSECOND" | "MICROSECONDS" => Microsecond,
            "SECOND" | "SECONDS" => Second,
            "MINUTE" | "MINUTES" => Minute,
            "HOUR" | "HOURS" => Hour,
            "DAY" | "DAYS" => Day,
            "WEEK" | "WEEKS" => Week,
            "MONTH" | "MONTHS" => Month,
            "QUARTER" => Quarter,
            "YEAR" | "YEARS" => Year,
            "SECOND_MICROSECOND" => SecondMicrosecond,
            "MINUTE_MICROSECOND" => MinuteMicrosecond,
            "MINUTE_SECOND" => MinuteSecond,
            "HOUR_MICROSECOND" => HourMicrosecond,
            "HOUR_SECOND" => HourSecond,
            "HOUR_MINUTE" => HourMinute,
            "DAY_MICROSECOND" => DayMicrosecond,
            "DAY_SECOND" => DaySecond,
            "DAY_MINUTE" => DayMinute,
            "DAY_HOUR" => DayHour,
            "YEAR_MONTH" => YearMonth,
            _ => return None,
        })
    }

    /// Whether the unit changes only the date part (DATE stays DATE).
    pub fn is_date_only(self) -> bool {
        matches!(
            self,
            Unit::Day | Unit::Week | Unit::Month | Unit::Quarter | Unit::Year | Unit::YearMonth
        )
    }

    fn has_micro(self) -> bool {
        matches!(
            self,
            Unit::Microsecond
                | Unit::SecondMicrosecond
                | Unit::MinuteMicrosecond
                | Unit::HourMicrosecond
                | Unit::DayMicrosecond
        )
    }

    /// Fields of a compound unit, largest first, as (months, micros) per
    /// unit of the field.
    fn fields(self) -> &'static [(i64, i128)] {
        const US: i128 = 1;
        const S: i128 = 1_000_000;
        const MI: i128 = 60 * S;
        const H: i128 = 60 * MI;
        const D: i128 = 24 * H;
        match self {
            Unit::Microsecond => &[(0, US)],
            Unit::Second => &[(0, S)],
            Unit::Minute => &[(0, MI)],
            Unit::Hour => &[(0, H)],
            Unit::Day => &[(0, D)],
            Unit::Week => &[(0, 7 * D)],
            Unit::Month => &[(1, 0)],
            Unit::Quarter => &[(3, 0)],
            Unit::Year => &[(12, 0)],
            Unit::SecondMicrosecond => &[(0, S), (0, US)],
            Unit::MinuteMicrosecond => &[(0, MI), (0, S), (0, US)],
            Unit::MinuteSecond => &[(0, MI), (0, S)],
            Unit::HourMicrosecond => &[(0, H), (0, MI), (0, S), (0, US)],
            Unit::HourSecond => &[(0, H), (0, MI), (0, S)],
            Unit::HourMinute => &[(0, H), (0, MI)],
            Unit::DayMicrosecond => &[(0, D), (0, H), (0, MI), (0, S), (0, US)],
            Unit::DaySecond => &[(0, D), (0, H), (0, MI), (0, S)],
            Unit::DayMinute => &[(0, D), (0, H), (0, MI)],
            Unit::DayHour => &[(0, D), (0, H)],
            Unit::YearMonth => &[(12, 0), (1, 0)],
        }
    }
}

// ------------------------------------------------------------ conversions

/// MySQL's day number (`TO_DAYS`) of a date.
pub fn daynr(y: u32, m: u32, d: u32) -> Option<i64> {
    let month = time::Month::try_from(u8::try_from(m).ok()?).ok()?;
    let date = time::Date::from_calendar_date(i32::try_from(y).ok()?, month, u8::try_from(d).ok()?)
        .ok()?;
    Some(i64::from(date.to_julian_day()) - 1_721_060)
}

/// The date of a MySQL day number, within years 0..=9999.
pub fn from_daynr(n: i64) -> Option<(u32, u32, u32)> {
    let jd = i32::try_from(n + 1_721_060).ok()?;
    let date = time::Date::from_julian_day(jd).ok()?;
    let (y, m, d) = date.to_calendar_date();
    if !(0..=9999).contains(&y) {
        return None;
    }
    Some((y as u32, u32::from(u8::from(m)), u32::from(d)))
}

/// 0 = Monday ... 6 = Sunday.
fn weekday(dt: &DateTime) -> u32 {
    daynr(dt.year.into(), dt.month.into(), dt.day.into())
        .map_or(0, |n| ((n + 5).rem_euclid(7)) as u32)
}

fn dt_daynr(dt: &DateTime) -> i64 {
    daynr(dt.year.into(), dt.month.into(), dt.day.into()).unwrap_or(0)
}

/// Microseconds since 0000-01-01 00:00:00 (day number 0).
pub(crate) fn dt_micros(dt: &DateTime) -> i128 {
    let secs = i128::from(dt_daynr(dt)) * 86_400
        + i128::from(dt.hour) * 3600
        + i128::from(dt.minute) * 60
        + i128::from(dt.second);
    secs * 1_000_000 + i128::from(dt.micro)
}

pub(crate) fn from_micros(us: i128) -> Option<DateTime> {
    let days = i64::try_from(us.div_euclid(86_400_000_000)).ok()?;
    let rem = us.rem_euclid(86_400_000_000);
    let (y, m, d) = from_daynr(days)?;
    let secs = (rem / 1_000_000) as u32;
    DateTime::new(
        y,
        m,
        d,
        secs / 3600,
        secs / 60 % 60,
        secs % 60,
        (rem % 1_000_000) as u32,
    )
}

/// A time of day or duration: `[-]h:mm:ss[.ffffff]`.
#[derive(Debug, Clone, Copy)]
pub struct Time {
    pub neg: bool,
    pub hours: u64,
    pub minutes: u32,
    pub seconds: u32,
    pub micro: u32,
}

impl Time {
    pub fn format(&self) -> String {
        let mut s = format!(
            "{}{:02}:{:02}:{:02}",
            if self.neg { "-" } else { "" },
            self.hours,
            self.minutes,
            self.seconds
        );
        if self.micro != 0 {
            s.push_str(&format!(".{:06}", self.micro));
        }
        s
    }
    fn total_micros(&self) -> i128 {
        let t = (i128::from(self.hours) * 3600
            + i128::from(self.minutes) * 60
            + i128::from(self.seconds))
            * 1_000_000
            + i128::from(self.micro);
        if self.neg {
            -t
        } else {
            t
        }
    }
}

/// Reads `[-][D ]h:mm[:ss[.f]]`, `hhmmss` or `ss` as MySQL's
/// `str_to_time` does for the common forms.
pub fn parse_time(s: &str) -> Option<Time> {
    let t = s.trim();
    let (neg, t) = match t.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, t),
    };
    let (days, t) = match t.split_once(' ') {
        Some((d, r)) if d.chars().all(|c| c.is_ascii_digit()) && !d.is_empty() => {
            (d.parse::<u64>().ok()?, r.trim())
        }
        _ => (0, t),
    };
    let (main, frac) = match t.split_once('.') {
        Some((a, b)) => (a, Some(b)),
        None => (t, None),
    };
    let micro = match frac {
        Some(f) => {
            if !f.chars().all(|c| c.is_ascii_digit()) {
                return None;
            }
            let mut digits: String = f.chars().take(6).collect();
            while digits.len() < 6 {
                digits.push('0');
            }
            digits.parse::<u32>().ok()?
        }
        None => 0,
    };
    let (h, m, sec) = if main.contains(':') {
        let parts: Vec<&str> = main.split(':').collect();
        if parts.len() > 3
            || parts
                .iter()
                .any(|p| p.is_empty() || !p.chars().all(|c| c.is_ascii_digit()))
        {
            return None;
        }
        let n = |i: usize| parts.get(i).map_or(Some(0), |p| p.parse::<u64>().ok());
        (n(0)?, n(1)?, n(2)?)
    } else {
        if main.is_empty() || !main.chars().all(|c| c.is_ascii_digit()) {
            return None;
        }
        let v: u64 = main.parse().ok()?;
        (v / 10_000, v / 100 % 100, v % 100)
    };
    if m > 59 || sec > 59 {
        return None;
    }
    Some(Time {
        neg,
        hours: days * 24 + h,
        minutes: m as u32,
        seconds: sec as u32,
        micro,
    })
}

/// Whether a string reads as a time rather than a date-time (no date
/// part): `10:11:12` is a time for HOUR(), a date for YEAR().
fn looks_like_time(s: &str) -> bool {
    let t = s.trim();
    !t.contains(['-', '/', 'T']) && (t.contains(':') || t.len() <= 6)
}

/// The argument as a date-time, and whether it had a time part.
/// A non-NULL value that is not a date gives warning 1292 and `None`.
pub fn to_dt(v: &Value) -> Option<(DateTime, bool)> {
    match v {
        Value::Null => None,
        Value::Date(d) => Some((d.to_datetime(), false)),
        Value::DateTime(t) => Some((*t, true)),
        Value::Bytes(b) => {
            let r = parse_temporal(b).and_then(|p| {
                let has_time = p.has_time;
                p.to_datetime().map(|t| (t, has_time))
            });
            if r.is_none() {
                warn::bad_datetime(&String::from_utf8_lossy(b));
            }
            r
        }
        Value::Int(_) | Value::UInt(_) | Value::Decimal(_) | Value::Double(_) | Value::Float(_) => {
            let n = val::uint_wrapping(&Value::Int(
                v.to_f64()
                    .map_or(-1, |f| f.trunc().clamp(-1.0, 1e15) as i64),
            ))
            .unwrap_or(0);
            let r = number_to_temporal(n).and_then(|p| {
                let has_time = n > 99_991_231;
                p.to_datetime().map(|t| (t, has_time))
            });
            if r.is_none() {
                warn::bad_datetime(&v.to_string());
            }
            r
        }
        // MySQL would read a TIME as today's date at that time; quire
        // does not (yet): the datetime functions see no date in it.
        Value::Time(t) => {
            warn::bad_datetime(&t.to_string());
            None
        }
    }
}

/// [`to_dt`] without the warning (type inference on constants).
pub fn to_dt_quiet(v: &Value) -> Option<DateTime> {
    match v {
        Value::Date(d) => Some(d.to_datetime()),
        Value::DateTime(t) => Some(*t),
        Value::Bytes(b) => parse_temporal(b).and_then(|p| p.to_datetime()),
        _ => None,
    }
}

/// The argument as a time of day / duration (for HOUR(), TIME(), ...).
fn to_time(v: &Value) -> Option<Time> {
    match v {
        Value::Null => None,
        Value::Bytes(b) => {
            let s = String::from_utf8_lossy(b);
            if looks_like_time(&s) {
                if let Some(t) = parse_time(&s) {
                    return Some(t);
                }
                warn::warn(1292, format!("Truncated incorrect time value: '{s}'"));
                return None;
            }
            to_dt(v).map(|(t, _)| time_of(&t))
        }
        Value::Date(_) | Value::DateTime(_) => to_dt(v).map(|(t, _)| time_of(&t)),
        Value::Time(t) => {
            let (hours, minutes, seconds, micro) = t.parts();
            Some(Time {
                neg: t.is_negative(),
                hours,
                minutes,
                seconds,
                micro,
            })
        }
        other => {
            let s = other.to_string();
            match parse_time(&s) {
                Some(t) => Some(t),
                None => {
                    warn::warn(1292, format!("Truncated incorrect time value: '{s}'"));
                    None
                }
            }
        }
    }
}

fn time_of(t: &DateTime) -> Time {
    Time {
        neg: false,
        hours: u64::from(t.hour),
        minutes: u32::from(t.minute),
        seconds: u32::from(t.second),
        micro: t.micro,
    }
}

fn overflow() -> Value {
    warn::warn(1441, "Datetime function: datetime field overflow");
    Value::Null
}

// ----------------------------------------------------------- intervals

/// An interval as a signed number of months and microseconds.
#[derive(Debug, Clone, Copy)]
pub struct Interval {
    pub months: i64,
    pub micros: i128,
}

/// Reads the value of `INTERVAL v unit`; `None` (and NULL) for NULL.
pub fn interval(unit: Unit, v: &Value) -> Option<Interval> {
    if v.is_null() {
        return None;
    }
    let fields = unit.fields();
    if fields.len() == 1 {
        let (mo, us) = fields[0];
        if unit == Unit::Second && !matches!(v, Value::Int(_) | Value::UInt(_)) {
            // SECOND keeps a fraction: INTERVAL 1.5 SECOND.
            let d = match v {
                Value::Bytes(b) => quire_engine::types::Decimal::parse_prefix(b)
                    .map(|p| p.value)
                    .ok()?,
                other => other.to_decimal()?,
            };
            let us6 = d.round_to_scale(6).mantissa_i128()?;
            return Some(Interval {
                months: 0,
                micros: us6,
            });
        }
        let n = i128::from(val::int(v)?);
        return Some(Interval {
            months: i64::try_from(n * i128::from(mo)).ok()?,
            micros: n.checked_mul(us)?,
        });
    }
    // Compound: digit groups, right-aligned to the fields.
    let s = val::text(v);
    let t = s.trim_start();
    let neg = t.starts_with('-');
    let mut groups: Vec<(String, bool)> = Vec::new(); // (digits, preceded by '.')
    let mut cur = String::new();
    let mut after_dot = false;
    let mut prev_dot = false;
    for c in t.chars() {
        if c.is_ascii_digit() {
            if cur.is_empty() {
                after_dot = prev_dot;
            }
            cur.push(c);
        } else {
            if !cur.is_empty() {
                groups.push((std::mem::take(&mut cur), after_dot));
            }
            prev_dot = c == '.';
        }
    }
    if !cur.is_empty() {
        groups.push((cur, after_dot));
    }
    if groups.len() > fields.len() {
        warn::warn(1292, format!("Truncated incorrect INTERVAL value: '{s}'"));
        groups.truncate(fields.len());
    }
    let skip = fields.len() - groups.len();
    let mut months: i64 = 0;
    let mut micros: i128 = 0;
    for (i, (g, _)) in groups.iter().enumerate() {
        let (mo, us) = fields[skip + i];
        let last = skip + i == fields.len() - 1;
        let n: i128 = if last && unit.has_micro() {
            let mut d: String = g.chars().take(6).collect();
            while d.len() < 6 {
                d.push('0');
            }
            d.parse().ok()?
        } else {
            g.parse::<i128>().ok()?.min(i128::from(u32::MAX) * 1000)
        };
        months = months.checked_add(i64::try_from(n * i128::from(mo)).ok()?)?;
        micros = micros.checked_add(n.checked_mul(us)?)?;
    }
    if neg {
        months = -months;
        micros = -micros;
    }
    Some(Interval { months, micros })
}

/// `dt + iv` (`sub` negates), `None` when out of range.
pub fn add_interval(dt: &DateTime, iv: Interval, sub: bool) -> Option<DateTime> {
    let (months, micros) = if sub {
        (-iv.months, -iv.micros)
    } else {
        (iv.months, iv.micros)
    };
    let mut t = *dt;
    if months != 0 {
        let total = i64::from(t.year) * 12 + i64::from(t.month) - 1 + months;
        if !(0..=9999 * 12 + 11).contains(&total) {
            return None;
        }
        let y = (total / 12) as u32;
        let m = (total % 12) as u32 + 1;
        let d = u32::from(t.day).min(days_in_month(y, m));
        t = DateTime::new(
            y,
            m,
            d,
            t.hour.into(),
            t.minute.into(),
            t.second.into(),
            t.micro,
        )?;
    }
    if micros != 0 {
        t = from_micros(dt_micros(&t).checked_add(micros)?)?;
    }
    Some(t)
}

/// Formats a date-time result given as text (DATE_ADD on a string).
fn dt_text(t: &DateTime, with_time: bool) -> Value {
    if !with_time {
        return Value::text(&t.date().to_string());
    }
    Value::text(&t.format_fsp(if t.micro != 0 { 6 } else { 0 }))
}

/// DATE_ADD / DATE_SUB / `± INTERVAL`.
pub fn date_add(unit: Unit, sub: bool, d: &Value, n: &Value) -> Value {
    if d.is_null() || n.is_null() {
        return Value::Null;
    }
    // A TIME plus a day-or-smaller interval stays a duration.
    if let Value::Time(tm) = d {
        return match interval(unit, n) {
            Some(iv) if iv.months == 0 => {
                let delta = if sub { -iv.micros } else { iv.micros };
                time_from_micros(i128::from(tm.micros()) + delta)
            }
            _ => Value::Null,
        };
    }
    let Some((t, has_time)) = to_dt(d) else {
        return Value::Null;
    };
    let Some(iv) = interval(unit, n) else {
        return Value::Null;
    };
    let Some(r) = add_interval(&t, iv, sub) else {
        return overflow();
    };
    match d {
        Value::Date(_) if unit.is_date_only() => Value::Date(r.date()),
        Value::Date(_) | Value::DateTime(_) => Value::DateTime(r),
        _ => dt_text(&r, has_time || !unit.is_date_only()),
    }
}

/// Result type of DATE_ADD on an argument of type `t`.
pub fn date_add_type(unit: Unit, t: &ColumnType) -> ColumnType {
    let fsp_extra = if unit.has_micro() { 6 } else { 0 };
    match t {
        ColumnType::Date if unit.is_date_only() => ColumnType::Date,
        ColumnType::Date => ColumnType::DateTime { fsp: fsp_extra },
        ColumnType::DateTime { fsp } | ColumnType::Timestamp { fsp } => ColumnType::DateTime {
            fsp: (*fsp).max(fsp_extra),
        },
        _ => ColumnType::varchar(29),
    }
}

// ------------------------------------------------------------- getters

pub fn datediff(a: &Value, b: &Value) -> Value {
    match (to_dt(a), to_dt(b)) {
        (Some((x, _)), Some((y, _))) => Value::Int(dt_daynr(&x) - dt_daynr(&y)),
        _ => Value::Null,
    }
}

pub fn timestampdiff(unit: Unit, a: &Value, b: &Value) -> Value {
    let (Some((x, _)), Some((y, _))) = (to_dt(a), to_dt(b)) else {
        return Value::Null;
    };
    let diff = dt_micros(&y) - dt_micros(&x);
    let months_unit = match unit {
        Unit::Month => Some(1),
        Unit::Quarter => Some(3),
        Unit::Year => Some(12),
        _ => None,
    };
    if let Some(div) = months_unit {
        let (beg, end, neg) = if diff < 0 {
            (y, x, true)
        } else {
            (x, y, false)
        };
        let mut months = (i64::from(end.year) - i64::from(beg.year)) * 12 + i64::from(end.month)
            - i64::from(beg.month);
        let tod = |t: &DateTime| {
            (u64::from(t.hour) * 3600 + u64::from(t.minute) * 60 + u64::from(t.second)) * 1_000_000
                + u64::from(t.micro)
        };
        if end.day < beg.day || (end.day == beg.day && tod(&end) < tod(&beg)) {
            months -= 1;
        }
        let r = months / div;
        return Value::Int(if neg { -r } else { r });
    }
    let per: i128 = match unit {
        Unit::Microsecond => 1,
        Unit::Second => 1_000_000,
        Unit::Minute => 60_000_000,
        Unit::Hour => 3_600_000_000,
        Unit::Day => 86_400_000_000,
        Unit::Week => 7 * 86_400_000_000,
        _ => return Value::Null,
    };
    Value::Int((diff / per) as i64)
}

/// `calc_week` of MySQL's `sql_time.cc`: (week, year).
fn calc_week(t: &DateTime, behaviour: u32) -> (u32, u32) {
    const MONDAY_FIRST: u32 = 1;
    const WEEK_YEAR: u32 = 2;
    const FIRST_WEEKDAY: u32 = 4;
    let y = u32::from(t.year);
    let days_in_year = |y: u32| -> i64 {
        if is_leap_year(y) {
            366
        } else {
            365
        }
    };
    let day = dt_daynr(t);
    let mut first_daynr = daynr(y, 1, 1).unwrap_or(0);
    let monday_first = behaviour & MONDAY_FIRST != 0;
    let mut week_year = behaviour & WEEK_YEAR != 0;
    let first_weekday = behaviour & FIRST_WEEKDAY != 0;
    let calc_weekday = |n: i64, sunday_first: bool| (n + 5 + i64::from(sunday_first)).rem_euclid(7);
    let mut weekday = calc_weekday(first_daynr, !monday_first);
    let mut year = y;
    if t.month == 1 && i64::from(t.day) <= 7 - weekday {
        if !week_year && ((first_weekday && weekday != 0) || (!first_weekday && weekday >= 4)) {
            return (0, year);
        }
        week_year = true;
        year = year.saturating_sub(1);
        let days = days_in_year(year);
        first_daynr -= days;
        weekday = (weekday + 53 * 7 - days).rem_euclid(7);
    }
    let days = if (first_weekday && weekday != 0) || (!first_weekday && weekday >= 4) {
        day - (first_daynr + (7 - weekday))
    } else {
        day - (first_daynr - weekday)
    };
    if week_year && days >= 52 * 7 {
        let wd = (weekday + days_in_year(year)).rem_euclid(7);
        if (!first_weekday && wd < 4) || (first_weekday && wd == 0) {
            return (1, year + 1);
        }
    }
    ((days / 7 + 1) as u32, year)
}

fn week_mode(mode: i64) -> u32 {
    let mut f = (mode & 7) as u32;
    if f & 1 == 0 {
        f ^= 4;
    }
    f
}

pub fn week(d: &Value, mode: i64) -> Value {
    match to_dt(d) {
        Some((t, _)) => Value::Int(i64::from(calc_week(&t, week_mode(mode)).0)),
        None => Value::Null,
    }
}

pub fn yearweek(d: &Value, mode: i64) -> Value {
    match to_dt(d) {
        Some((t, _)) => {
            let (w, y) = calc_week(&t, week_mode(mode) | 2);
            Value::Int(i64::from(y) * 100 + i64::from(w))
        }
        None => Value::Null,
    }
}

const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];
const DAYS: [&str; 7] = [
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
    "Sunday",
];

/// Which part a one-argument getter returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    Year,
    Month,
    Day,
    Hour,
    Minute,
    Second,
    Microsecond,
    Quarter,
    DayOfWeek,
    DayOfYear,
    Weekday,
    WeekOfYear,
    DayName,
    MonthName,
    LastDay,
    Date,
    Time,
    ToDays,
    ToSeconds,
    TimeToSec,
}

pub fn part(p: Part, v: &Value) -> Value {
    if v.is_null() {
        return Value::Null;
    }
    if matches!(
        p,
        Part::Hour | Part::Minute | Part::Second | Part::Microsecond | Part::Time | Part::TimeToSec
    ) {
        let Some(t) = to_time(v) else {
            return Value::Null;
        };
        return match p {
            Part::Hour => Value::Int(t.hours.min(i64::MAX as u64) as i64),
            Part::Minute => Value::Int(t.minutes.into()),
            Part::Second => Value::Int(t.seconds.into()),
            Part::Microsecond => Value::Int(t.micro.into()),
            Part::TimeToSec => {
                let s = t.total_micros() / 1_000_000;
                Value::Int(s as i64)
            }
            _ => Value::text(&t.format()),
        };
    }
    let Some((t, _)) = to_dt(v) else {
        return Value::Null;
    };
    match p {
        Part::Year => Value::Int(t.year.into()),
        Part::Month => Value::Int(t.month.into()),
        Part::Day => Value::Int(t.day.into()),
        Part::Quarter => Value::Int(i64::from(t.month).saturating_sub(1) / 3 + 1),
        Part::DayOfWeek => Value::Int(i64::from((weekday(&t) + 1) % 7 + 1)),
        Part::Weekday => Value::Int(weekday(&t).into()),
        Part::DayOfYear => Value::Int(dt_daynr(&t) - daynr(t.year.into(), 1, 1).unwrap_or(0) + 1),
        Part::WeekOfYear => Value::Int(i64::from(calc_week(&t, week_mode(3)).0)),
        Part::DayName => Value::text(DAYS[weekday(&t) as usize % 7]),
        Part::MonthName => Value::text(MONTHS[(usize::from(t.month) + 11) % 12]),
        Part::LastDay => {
            let y = u32::from(t.year);
            let m = u32::from(t.month);
            quire_engine::types::Date::new(y, m, days_in_month(y, m))
                .map_or(Value::Null, Value::Date)
        }
        Part::Date => Value::Date(t.date()),
        Part::ToDays => Value::Int(dt_daynr(&t)),
        Part::ToSeconds => Value::Int((dt_micros(&t) / 1_000_000) as i64),
        _ => Value::Null,
    }
}

pub fn extract(unit: Unit, v: &Value) -> Value {
    if v.is_null() {
        return Value::Null;
    }
    let t = match v {
        Value::Bytes(b) if looks_like_time(&String::from_utf8_lossy(b)) => match to_time(v) {
            Some(tm) => {
                let mut dt = DateTime::new(2000, 1, 1, 0, 0, 0, 0).unwrap_or(DT_ZERO);
                dt.hour = (tm.hours % 24) as u8;
                dt.minute = tm.minutes as u8;
                dt.second = tm.seconds as u8;
                dt.micro = tm.micro;
                dt.day = 0;
                dt.month = 0;
                dt.year = 0;
                dt
            }
            None => return Value::Null,
        },
        _ => match to_dt(v) {
            Some((t, _)) => t,
            None => return Value::Null,
        },
    };
    let (y, mo, d, h, mi, s, us) = (
        i64::from(t.year),
        i64::from(t.month),
        i64::from(t.day),
        i64::from(t.hour),
        i64::from(t.minute),
        i64::from(t.second),
        i64::from(t.micro),
    );
    Value::Int(match unit {
        Unit::Year => y,
        Unit::Month => mo,
        Unit::Day => d,
        Unit::Hour => h,
        Unit::Minute => mi,
        Unit::Second => s,
        Unit::Microsecond => us,
        Unit::Quarter => (mo + 2) / 3,
        Unit::Week => i64::from(calc_week(&t, week_mode(0)).0),
        Unit::YearMonth => y * 100 + mo,
        Unit::DayHour => d * 100 + h,
        Unit::DayMinute => (d * 100 + h) * 100 + mi,
        Unit::DaySecond => ((d * 100 + h) * 100 + mi) * 100 + s,
        Unit::DayMicrosecond => (((d * 100 + h) * 100 + mi) * 100 + s) * 1_000_000 + us,
        Unit::HourMinute => h * 100 + mi,
        Unit::HourSecond => (h * 100 + mi) * 100 + s,
        Unit::HourMicrosecond => ((h * 100 + mi) * 100 + s) * 1_000_000 + us,
        Unit::MinuteSecond => mi * 100 + s,
        Unit::MinuteMicrosecond => (mi * 100 + s) * 1_000_000 + us,
        Unit::SecondMicrosecond => s * 1_000_000 + us,
    })
}

const DT_ZERO: DateTime = DateTime {
    year: 0,
    month: 0,
    day: 0,
    hour: 0,
    minute: 0,
    second: 0,
    micro: 0,
};

pub fn from_days(v: &Value) -> Value {
    let Some(n) = val::int(v) else {
        return Value::Null;
    };
    if n < 366 {
        return Value::text("0000-00-00");
    }
    match from_daynr(n).and_then(|(y, m, d)| quire_engine::types::Date::new(y, m, d)) {
        Some(d) => Value::Date(d),
        None => Value::Null,
    }
}

pub fn makedate(y: &Value, doy: &Value) -> Value {
    let (Some(mut y), Some(doy)) = (val::int(y), val::int(doy)) else {
        return Value::Null;
    };
    if doy <= 0 || !(0..=9999).contains(&y) {
        return Value::Null;
    }
    if y < 70 {
        y += 2000;
    } else if y < 100 {
        y += 1900;
    }
    let Some(start) = daynr(y as u32, 1, 1) else {
        return Value::Null;
    };
    match from_daynr(start + doy - 1).and_then(|(y, m, d)| quire_engine::types::Date::new(y, m, d))
    {
        Some(d) => Value::Date(d),
        None => Value::Null,
    }
}

pub fn sec_to_time(v: &Value) -> Value {
    let Some(f) = v.to_f64() else {
        return Value::Null;
    };
    let max = 838.0 * 3600.0 + 59.0 * 60.0 + 59.0;
    let (f, clamped) = if f.abs() > max {
        (max.copysign(f), true)
    } else {
        (f, false)
    };
    if clamped {
        warn::warn(1292, format!("Truncated incorrect time value: '{v}'"));
    }
    let neg = f < 0.0;
    let a = f.abs();
    let micro = if val::is_exact(v) && !matches!(v, Value::Decimal(_)) {
        0
    } else {
        ((a.fract() * 1e6).round() as u32).min(999_999)
    };
    let secs = a.trunc() as u64;
    Value::text(
        &Time {
            neg,
            hours: secs / 3600,
            minutes: (secs / 60 % 60) as u32,
            seconds: (secs % 60) as u32,
            micro,
        }
        .format(),
    )
}

fn time_from_micros(us: i128) -> Value {
    // TIME's range: -838:59:59 .. 838:59:59 (clamped with warning 1292).
    let max: i128 = (838 * 3600 + 59 * 60 + 59) * 1_000_000 + 999_999;
    let clamped = us.clamp(-max, max);
    let neg = clamped < 0;
    let a = clamped.unsigned_abs();
    let t = Time {
        neg,
        hours: (a / 3_600_000_000) as u64,
        minutes: (a / 60_000_000 % 60) as u32,
        seconds: (a / 1_000_000 % 60) as u32,
        micro: if clamped != us {
            0
        } else {
            (a % 1_000_000) as u32
        },
    };
    if clamped != us {
        let t = Time { micro: 0, ..t };
        warn::warn(
            1292,
            format!("Truncated incorrect time value: '{}'", t.format()),
        );
        return Value::text(&t.format());
    }
    Value::text(&t.format())
}

/// A date-time or a time argument: micros since day 0, or of the time.
fn dt_or_time(v: &Value) -> Option<(i128, bool)> {
    match v {
        Value::Bytes(b) if looks_like_time(&String::from_utf8_lossy(b)) => {
            to_time(v).map(|t| (t.total_micros(), false))
        }
        Value::Time(t) => Some((i128::from(t.micros()), false)),
        _ => to_dt(v).map(|(t, _)| (dt_micros(&t), true)),
    }
}

/// TIMEDIFF(a, b): both date-times or both times; mixed is NULL.
pub fn timediff(a: &Value, b: &Value) -> Value {
    match (dt_or_time(a), dt_or_time(b)) {
        (Some((x, dx)), Some((y, dy))) if dx == dy => time_from_micros(x - y),
        _ => Value::Null,
    }
}

/// ADDTIME / SUBTIME(base, time).
pub fn addtime(base: &Value, t: &Value, sub: bool) -> Value {
    let Some(tm) = to_time(t) else {
        return Value::Null;
    };
    let delta = if sub {
        -tm.total_micros()
    } else {
        tm.total_micros()
    };
    match dt_or_time(base) {
        Some((x, true)) => match from_micros(x + delta) {
            Some(r) => match base {
                Value::DateTime(_) | Value::Date(_) => Value::DateTime(r),
                _ => dt_text(&r, true),
            },
            None => overflow(),
        },
        Some((x, false)) => time_from_micros(x + delta),
        None => Value::Null,
    }
}

pub fn maketime(h: &Value, m: &Value, s: &Value) -> Value {
    let (Some(h), Some(m), Some(sec)) = (val::int(h), val::int(m), s.to_f64()) else {
        return Value::Null;
    };
    if !(0..=59).contains(&m) || !(0.0..60.0).contains(&sec) {
        return Value::Null;
    }
    let mag = i128::from(h.unsigned_abs()) * 3_600_000_000
        + i128::from(m) * 60_000_000
        + (sec * 1e6).round() as i128;
    time_from_micros(if h < 0 { -mag } else { mag })
}

/// TIME_FORMAT: DATE_FORMAT's hour, minute, second and fraction
/// specifiers on a time; date specifiers give NULL.
pub fn time_format(t: &Value, f: &Value) -> Value {
    if t.is_null() || f.is_null() {
        return Value::Null;
    }
    let Some(tm) = to_time(t) else {
        return Value::Null;
    };
    let fmt = val::text(f);
    let mut out = String::new();
    let mut it = fmt.chars();
    let h = tm.hours;
    let h12 = if h.is_multiple_of(12) { 12 } else { h % 12 };
    if tm.neg {
        out.push('-');
    }
    while let Some(c) = it.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let Some(s) = it.next() else { break };
        match s {
            'H' => out.push_str(&format!("{h:02}")),
            'k' => out.push_str(&h.to_string()),
            'h' | 'I' => out.push_str(&format!("{h12:02}")),
            'l' => out.push_str(&h12.to_string()),
            'i' => out.push_str(&format!("{:02}", tm.minutes)),
            'S' | 's' => out.push_str(&format!("{:02}", tm.seconds)),
            'f' => out.push_str(&format!("{:06}", tm.micro)),
            'p' => out.push_str(if h % 24 < 12 { "AM" } else { "PM" }),
            'r' => out.push_str(&format!(
                "{h12:02}:{:02}:{:02} {}",
                tm.minutes,
                tm.seconds,
                if h % 24 < 12 { "AM" } else { "PM" }
            )),
            'T' => out.push_str(&format!("{h:02}:{:02}:{:02}", tm.minutes, tm.seconds)),
            'a' | 'b' | 'c' | 'D' | 'd' | 'e' | 'j' | 'M' | 'm' | 'U' | 'u' | 'V' | 'v' | 'W'
            | 'w' | 'X' | 'x' | 'Y' | 'y' => return Value::Null,
            other => out.push(other),
        }
    }
    Value::text(&out)
}

/// TIMESTAMP(expr[, time]): a DATETIME.
pub fn timestamp(d: &Value, t: Option<&Value>) -> Value {
    let Some((dt, _)) = to_dt(d) else {
        return Value::Null;
    };
    match t {
        None => Value::DateTime(dt),
        Some(t) => match to_time(t) {
            Some(tm) => from_micros(dt_micros(&dt) + tm.total_micros())
                .map_or_else(overflow, Value::DateTime),
            None => Value::Null,
        },
    }
}

// ------------------------------------------------------- epoch and zones

pub(crate) const EPOCH_DAYNR: i64 = 719_528;

pub fn unix_timestamp(v: &Value) -> Value {
    let Some((t, _)) = to_dt(v) else {
        return Value::Null;
    };
    let Some(us) = crate::tz::current().epoch_micros_of(t) else {
        return Value::Int(0);
    };
    // MySQL 8.0.28+: 1970-01-01 00:00:00 .. 3001-01-18 23:59:59.999999 UTC.
    if !(0..=32_536_771_199_999_999).contains(&us) {
        return Value::Int(0);
    }
    if t.micro == 0 {
        Value::Int((us / 1_000_000) as i64)
    } else {
        Value::Decimal(quire_engine::types::Decimal::from_mantissa(us, 6))
    }
}

pub fn from_unixtime(v: &Value) -> Value {
    let us: i128 = match v {
        Value::Null => return Value::Null,
        Value::Int(_) | Value::UInt(_) => i128::from(val::int(v).unwrap_or(-1)) * 1_000_000,
        Value::Decimal(d) => match d.round_to_scale(6).mantissa_i128() {
            Some(m) => m,
            None => return Value::Null,
        },
        other => {
            let f = other.to_f64().unwrap_or(-1.0);
            if !f.is_finite() {
                return Value::Null;
            }
            (f * 1e6).round() as i128
        }
    };
    if !(0..=32_536_771_199_999_999).contains(&us) {
        return Value::Null;
    }
    from_micros(us + i128::from(EPOCH_DAYNR) * 86_400_000_000)
        .and_then(|utc| crate::tz::current().local_of(utc))
        .map_or(Value::Null, Value::DateTime)
}

/// CONVERT_TZ(dt, from, to): `dt` read in zone `from`, shown in `to`.
pub fn convert_tz(d: &Value, from: &Value, to: &Value) -> Value {
    if d.is_null() || from.is_null() || to.is_null() {
        return Value::Null;
    }
    let zone = |v: &Value| crate::tz::Zone::parse(&val::text(v));
    let (Some(f), Some(t)) = (zone(from), zone(to)) else {
        return Value::Null;
    };
    let Some((dt, _)) = to_dt(d) else {
        return Value::Null;
    };
    // MySQL converts only instants in (0, MY_TIME_T_MAX] seconds.
    match f.epoch_micros_of(dt) {
        Some(us) if (1_000_000..32_536_771_200_000_000).contains(&us) => {
            from_micros(us + i128::from(EPOCH_DAYNR) * 86_400_000_000)
                .and_then(|utc| t.local_of(utc))
                .map_or(Value::Null, Value::DateTime)
        }
        _ => Value::DateTime(dt),
    }
}

// -------------------------------------------------- formatting and parsing

fn ordinal_suffix(d: u32) -> &'static str {
    match (d % 100, d % 10) {
        (11..=13, _) => "th",
        (_, 1) => "st",
        (_, 2) => "nd",
        (_, 3) => "rd",
        _ => "th",
    }
}

/// DATE_FORMAT's specifiers (`%Y`, `%m`, ...) applied to `t`.
pub fn format(t: &DateTime, fmt: &str) -> String {
    let mut out = String::new();
    let mut it = fmt.chars();
    let h12 = |h: u8| if h.is_multiple_of(12) { 12 } else { h % 12 };
    while let Some(c) = it.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let Some(s) = it.next() else { break };
        let wd = weekday(t) as usize;
        match s {
            'a' => out.push_str(&DAYS[wd % 7][..3]),
            'b' => out.push_str(
                MONTHS
                    .get(usize::from(t.month).wrapping_sub(1))
                    .map_or("", |m| &m[..3]),
            ),
            'c' => out.push_str(&t.month.to_string()),
            'D' => out.push_str(&format!("{}{}", t.day, ordinal_suffix(t.day.into()))),
            'd' => out.push_str(&format!("{:02}", t.day)),
            'e' => out.push_str(&t.day.to_string()),
            'f' => out.push_str(&format!("{:06}", t.micro)),
            'H' => out.push_str(&format!("{:02}", t.hour)),
            'h' | 'I' => out.push_str(&format!("{:02}", h12(t.hour))),
            'i' => out.push_str(&format!("{:02}", t.minute)),
            'j' => out.push_str(&format!(
                "{:03}",
                dt_daynr(t) - daynr(t.year.into(), 1, 1).unwrap_or(0) + 1
            )),
            'k' => out.push_str(&t.hour.to_string()),
            'l' => out.push_str(&h12(t.hour).to_string()),
            'M' => out.push_str(
                MONTHS
                    .get(usize::from(t.month).wrapping_sub(1))
                    .copied()
                    .unwrap_or(""),
            ),
            'm' => out.push_str(&format!("{:02}", t.month)),
            'p' => out.push_str(if t.hour < 12 { "AM" } else { "PM" }),
            'r' => out.push_str(&format!(
                "{:02}:{:02}:{:02} {}",
                h12(t.hour),
                t.minute,
                t.second,
                if t.hour < 12 { "AM" } else { "PM" }
            )),
            'S' | 's' => out.push_str(&format!("{:02}", t.second)),
            'T' => out.push_str(&format!("{:02}:{:02}:{:02}", t.hour, t.minute, t.second)),
            'U' => out.push_str(&format!("{:02}", calc_week(t, 4).0)),
            'u' => out.push_str(&format!("{:02}", calc_week(t, 1).0)),
            'V' => out.push_str(&format!("{:02}", calc_week(t, 2 | 4).0)),
            'v' => out.push_str(&format!("{:02}", calc_week(t, 1 | 2).0)),
            'W' => out.push_str(DAYS[wd % 7]),
            'w' => out.push_str(&((wd + 1) % 7).to_string()),
            'X' => out.push_str(&format!("{:04}", calc_week(t, 2 | 4).1)),
            'x' => out.push_str(&format!("{:04}", calc_week(t, 1 | 2).1)),
            'Y' => out.push_str(&format!("{:04}", t.year)),
            'y' => out.push_str(&format!("{:02}", t.year % 100)),
            other => out.push(other),
        }
    }
    out
}

pub fn date_format(d: &Value, f: &Value) -> Value {
    if d.is_null() || f.is_null() {
        return Value::Null;
    }
    match to_dt(d) {
        Some((t, _)) => Value::text(&format(&t, &val::text(f))),
        None => Value::Null,
    }
}

/// What a STR_TO_DATE format produces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StrToDateKind {
    Date,
    DateTime(u8),
    Time,
}

pub fn str_to_date_kind(fmt: &str) -> StrToDateKind {
    let mut date = false;
    let mut time = false;
    let mut frac = false;
    let mut it = fmt.chars();
    while let Some(c) = it.next() {
        if c == '%' {
            match it.next() {
                Some(
                    'Y' | 'y' | 'm' | 'c' | 'd' | 'e' | 'M' | 'b' | 'j' | 'D' | 'U' | 'u' | 'V'
                    | 'v' | 'X' | 'x' | 'W' | 'a' | 'w',
                ) => date = true,
                Some('f') => {
                    time = true;
                    frac = true
                }
                Some('H' | 'k' | 'h' | 'I' | 'l' | 'i' | 's' | 'S' | 'p' | 'T' | 'r') => {
                    time = true
                }
                _ => {}
            }
        }
    }
    match (date, time) {
        (false, true) => StrToDateKind::Time,
        (true, true) => StrToDateKind::DateTime(if frac { 6 } else { 0 }),
        _ => StrToDateKind::Date,
    }
}

pub fn str_to_date(s: &Value, f: &Value) -> Value {
    if s.is_null() || f.is_null() {
        return Value::Null;
    }
    let input = val::text(s);
    let fmt = val::text(f);
    let kind = str_to_date_kind(&fmt);
    let fail = || {
        warn::warn(
            1411,
            format!("Incorrect datetime value: '{input}' for function str_to_date"),
        );
        Value::Null
    };
    let b = input.as_bytes();
    let mut i = 0usize;
    let (mut y, mut mo, mut d, mut h, mut mi, mut sec, mut us) =
        (0u32, 0u32, 0u32, 0u32, 0u32, 0u32, 0u32);
    let mut pm: Option<bool> = None;
    let mut yday: Option<u32> = None;
    let num = |i: &mut usize, max: usize| -> Option<u32> {
        let start = *i;
        while *i < b.len() && *i - start < max && b[*i].is_ascii_digit() {
            *i += 1;
        }
        if *i == start {
            return None;
        }
        input[start..*i].parse().ok()
    };
    let word = |i: &mut usize, names: &[&str], abbr: bool| -> Option<u32> {
        for (k, n) in names.iter().enumerate() {
            let n = if abbr { &n[..3] } else { n };
            if b.len() >= *i + n.len() && input[*i..*i + n.len()].eq_ignore_ascii_case(n) {
                *i += n.len();
                return Some(k as u32);
            }
        }
        None
    };
    let mut fi = fmt.chars().peekable();
    while let Some(c) = fi.next() {
        // As `extract_date_time`: spaces before each element are skipped,
        // and the format's rest is ignored once the input is used up.
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        if i >= b.len() {
            break;
        }
        if c.is_whitespace() {
            continue;
        }
        if c != '%' {
            if input[i..].starts_with(c) {
                i += c.len_utf8();
                continue;
            }
            return fail();
        }
        let Some(spec) = fi.next() else { break };
        // One specifier; `?` inside the closure is a parse failure.
        #[allow(clippy::redundant_closure_call)]
        let ok: Option<()> = (|| {
            match spec {
                'Y' => {
                    let st = i;
                    let v = num(&mut i, 4)?;
                    y = if i - st <= 2 {
                        if v < 70 {
                            v + 2000
                        } else if v < 100 {
                            v + 1900
                        } else {
                            v
                        }
                    } else {
                        v
                    };
                }
                'y' => {
                    let v = num(&mut i, 2)?;
                    y = if v < 70 { v + 2000 } else { v + 1900 };
                }
                'm' | 'c' => mo = num(&mut i, 2)?,
                'd' | 'e' => d = num(&mut i, 2)?,
                'D' => {
                    d = num(&mut i, 2)?;
                    if b.len() >= i + 2 {
                        i += 2;
                    }
                }
                'H' | 'k' | 'h' | 'I' | 'l' => h = num(&mut i, 2)?,
                'i' => mi = num(&mut i, 2)?,
                's' | 'S' => sec = num(&mut i, 2)?,
                'f' => {
                    let st = i;
                    let v = num(&mut i, 6)?;
                    us = v * 10u32.pow(6 - (i - st) as u32);
                }
                'p' => {
                    if input[i..].len() >= 2 {
                        let t = &input[i..i + 2];
                        if t.eq_ignore_ascii_case("AM") {
                            pm = Some(false);
                        } else if t.eq_ignore_ascii_case("PM") {
                            pm = Some(true);
                        } else {
                            return None;
                        }
                        i += 2;
                    } else {
                        return None;
                    }
                }
                'M' => mo = word(&mut i, &MONTHS, false)? + 1,
                'b' => mo = word(&mut i, &MONTHS, true)? + 1,
                'W' => {
                    word(&mut i, &DAYS, false)?;
                }
                'a' => {
                    word(&mut i, &DAYS, true)?;
                }
                'j' => yday = Some(num(&mut i, 3)?),
                'T' | 'r' => {
                    h = num(&mut i, 2)?;
                    if b.get(i) != Some(&b':') {
                        return None;
                    }
                    i += 1;
                    mi = num(&mut i, 2)?;
                    if b.get(i) != Some(&b':') {
                        return None;
                    }
                    i += 1;
                    sec = num(&mut i, 2)?;
                    if spec == 'r' {
                        while b.get(i) == Some(&b' ') {
                            i += 1;
                        }
                        if input.len() >= i + 2 {
                            let t = &input[i..i + 2];
                            pm = Some(t.eq_ignore_ascii_case("PM"));
                            i += 2;
                        }
                    }
                }
                '%' => {
                    if b.get(i) != Some(&b'%') {
                        return None;
                    }
                    i += 1;
                }
                _ => {
                    // Other specifiers: skip one input character.
                    i += 1;
                }
            }
            Some(())
        })();
        if ok.is_none() {
            return fail();
        }
    }
    if let Some(p) = pm {
        if h == 0 || h > 12 {
            return fail();
        }
        h = h % 12 + if p { 12 } else { 0 };
    }
    if let Some(doy) = yday {
        match daynr(y, 1, 1).and_then(|n| from_daynr(n + i64::from(doy) - 1)) {
            Some((yy, m2, d2)) if doy >= 1 => {
                y = yy;
                mo = m2;
                d = d2;
            }
            _ => return fail(),
        }
    }
    if input[i..].trim().chars().any(|c| !c.is_whitespace()) {
        warn::warn(
            1292,
            format!("Truncated incorrect datetime value: '{input}'"),
        );
    }
    match kind {
        StrToDateKind::Time => {
            if mi > 59 || sec > 59 {
                return fail();
            }
            Value::text(
                &Time {
                    neg: false,
                    hours: h.into(),
                    minutes: mi,
                    seconds: sec,
                    micro: us,
                }
                .format(),
            )
        }
        StrToDateKind::Date => match quire_engine::types::Date::new(y, mo, d) {
            Some(dd) => Value::Date(dd),
            None => fail(),
        },
        StrToDateKind::DateTime(_) => match DateTime::new(y, mo, d, h, mi, sec, us) {
            Some(t) => Value::DateTime(t),
            None => fail(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dt(s: &str) -> DateTime {
        to_dt(&Value::text(s)).map(|x| x.0).expect("date")
    }

    #[test]
    fn day_numbers_match_mysql() {
        assert_eq!(daynr(2007, 10, 7), Some(733_321));
        assert_eq!(daynr(1970, 1, 1), Some(EPOCH_DAYNR));
        assert_eq!(from_daynr(733_321), Some((2007, 10, 7)));
    }

    #[test]
    fn weeks() {
        // MySQL manual: WEEK('2008-02-20') = 7, WEEK('2008-02-20',1) = 8,
        // WEEK('2008-12-31',1) = 53, YEARWEEK('1987-01-01') = 198652.
        assert_eq!(calc_week(&dt("2008-02-20"), week_mode(0)).0, 7);
        assert_eq!(calc_week(&dt("2008-02-20"), week_mode(1)).0, 8);
        assert_eq!(calc_week(&dt("2008-12-31"), week_mode(1)).0, 53);
        assert_eq!(yearweek(&Value::text("1987-01-01"), 0), Value::Int(198_652));
        assert_eq!(week(&Value::text("2000-01-01"), 0), Value::Int(0));
        assert_eq!(week(&Value::text("2000-01-01"), 2), Value::Int(52));
    }

    #[test]
    fn formats() {
        let t = dt("2009-10-04 22:23:00");
        assert_eq!(format(&t, "%W %M %Y"), "Sunday October 2009");
        assert_eq!(format(&dt("2007-10-04 22:23:00"), "%H:%i:%s"), "22:23:00");
        assert_eq!(
            format(&dt("1900-10-04 22:23:00"), "%D %y %a %d %m %b %j"),
            "4th 00 Thu 04 10 Oct 277"
        );
        assert_eq!(
            format(&dt("1997-10-04 22:23:00"), "%H %k %I %r %T %S %w"),
            "22 22 10 10:23:00 PM 22:23:00 00 6"
        );
        assert_eq!(format(&dt("1999-01-01"), "%X %V"), "1998 52");
    }
}
