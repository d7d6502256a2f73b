//! # The session time zone
//!
//! `time_zone` is what MySQL 8.0 accepts: `SYSTEM` (quire's system zone is
//! UTC, `system_time_zone` = 'UTC'), an offset `+hh:mm` / `-hh:mm` within
//! `-13:59` ..= `+14:00`, or a zone name (`Europe/Berlin`, `UTC`,
//! `America/New_York`, with their DST rules). MySQL knows names only once
//! its `mysql.time_zone*` tables are loaded; quire ships the IANA tz
//! database built in (the `jiff` crate's bundled copy, so a name means the
//! same on every machine and no system files are read) and has no
//! `mysql.time_zone_name` table. Anything else is 1298 `Unknown or
//! incorrect time zone: '...'`.
//!
//! ## Where conversion happens
//!
//! TIMESTAMP columns hold UTC. The engine stays zone-agnostic: each
//! statement's transaction is given the session's [`Zone`] as a
//! `quire_engine::tszone::TimestampZone`, and the transaction's row
//! interface converts TIMESTAMP values session time -> UTC on the way in
//! (insert, update, key lookups and scan bounds; the TIMESTAMP range is
//! checked on the UTC value) and UTC -> session time on the way out. So
//! every SQL path that reads or writes rows (SELECT, INSERT/REPLACE/
//! UPDATE/DELETE, INSERT ... SELECT, ON DUPLICATE KEY UPDATE,
//! CHECK, generated columns) sees session time, exactly as MySQL's items
//! see a TIMESTAMP field's `get_date()`; comparisons with literals happen
//! in session time. DATETIME never converts.
//!
//! The expression functions read the statement's zone from a per-thread
//! slot ([`current`]) that the session sets before each statement (the
//! same pattern as `func::warn`'s warning channel): NOW(),
//! CURRENT_TIMESTAMP, CURDATE(), CURTIME(), SYSDATE(), FROM_UNIXTIME() are
//! session time, UNIX_TIMESTAMP(dt) reads `dt` as session time,
//! UTC_TIMESTAMP()/UTC_DATE()/UTC_TIME() stay UTC.
//!
//! ## Local times that do not exist or exist twice
//!
//! A local time inside a spring-forward gap (02:30 in Berlin on the last
//! Sunday of March) is the first instant after the gap (stored as 01:00
//! UTC, shown as 03:00:00), as MySQL's `TIME_to_gmt_sec` does. A time in
//! an autumn overlap (02:30 on the last Sunday of October) is its earlier
//! instant (the one still in summer time).
//!
//! A clock reading (NOW(), CURRENT_TIMESTAMP, a DEFAULT / ON UPDATE
//! CURRENT_TIMESTAMP value) written to a TIMESTAMP keeps its own instant
//! even inside a repeated hour: the statement remembers its readings
//! ([`remember_reading`]) and the conversion back to UTC uses them, as
//! MySQL stores the query start time itself.
//!
//! Known differences: a literal TIMESTAMP column default (`DEFAULT
//! '2000-01-01 00:00:00'`) is kept as written and stored as that UTC value
//! (MySQL converts it with the zone of the session that created the
//! table); ORDER BY / GROUP BY of a TIMESTAMP column that is not read
//! through its index use session-time values, so within a repeated autumn
//! hour the order can differ from MySQL's (which sorts by the instant);
//! INSERT ... SELECT of a TIMESTAMP in such an hour goes through session
//! time and lands on the earlier instant (MySQL copies the instant).

use std::cell::RefCell;

use jiff::tz::{AmbiguousOffset, TimeZone};
use jiff::Timestamp;
use quire_engine::types::DateTime;
use quire_engine::EngineError;

use crate::func::date::{dt_micros, from_micros, EPOCH_DAYNR};

/// MySQL's offset range (8.0.19+): -13:59 ..= +14:00.
const MIN_OFFSET: i32 = -(13 * 3600 + 59 * 60);
const MAX_OFFSET: i32 = 14 * 3600;

/// Microseconds between day number 0 and 1970-01-01.
const EPOCH_MICROS: i128 = EPOCH_DAYNR as i128 * 86_400_000_000;

#[derive(Clone, Debug)]
enum Kind {
    /// `SYSTEM`: quire's system zone, UTC.
    System,
    /// A fixed offset in seconds east of UTC.
    Offset(i32),
    /// A zone of the bundled tz database.
    Named(TimeZone),
}

/// A session time zone: its `@@time_zone` spelling and its rules.
#[derive(Clone, Debug)]
pub struct Zone {
    name: String,
    kind: Kind,
}

impl Default for Zone {
    fn default() -> Zone {
        Zone::system()
    }
}

/// 1298, MySQL's error for a `time_zone` it cannot use.
pub fn unknown_zone(spec: &str) -> EngineError {
    EngineError::new(
        1298,
        "HY000",
        format!("Unknown or incorrect time zone: '{spec}'"),
    )
}

/// `[+-]h:mm` as MySQL's `str_to_offset` reads it (any number of hour
/// digits, minutes below 60, nothing after), in seconds.
fn parse_offset(s: &str) -> Option<i32> {
    let b = s.as_bytes();
    let neg = match b.first()? {
        b'+' => false,
        b'-' => true,
        _ => return None,
    };
    let rest = &s[1..];
    let (h, m) = rest.split_once(':')?;
    if h.is_empty() || m.is_empty() || !h.bytes().chain(m.bytes()).all(|c| c.is_ascii_digit()) {
        return None;
    }
    let h: i64 = h.parse().ok()?;
    let m: i64 = m.parse().ok()?;
    if m >= 60 {
        return None;
    }
    let secs = h.checked_mul(3600)?.checked_add(m * 60)?;
    let secs = if neg { -secs } else { secs };
    let secs = i32::try_from(secs).ok()?;
    (MIN_OFFSET..=MAX_OFFSET).contains(&secs).then_some(secs)
}

impl Zone {
    /// `SYSTEM` (UTC).
    pub fn system() -> Zone {
        Zone {
            name: "SYSTEM".into(),
            kind: Kind::System,
        }
    }

    /// A `time_zone` value: `SYSTEM`, an offset or a zone name (None:
    /// error 1298).
    pub fn parse(spec: &str) -> Option<Zone> {
        if spec.eq_ignore_ascii_case("SYSTEM") {
            return Some(Zone::system());
        }
        if spec.starts_with(['+', '-']) {
            let off = parse_offset(spec)?;
            let (sign, a) = if off < 0 { ('-', -off) } else { ('+', off) };
            return Some(Zone {
                name: format!("{sign}{:02}:{:02}", a / 3600, a / 60 % 60),
                kind: Kind::Offset(off),
            });
        }
        if spec.is_empty() || spec.trim() != spec {
            return None;
        }
        // Names match in any case; `@@time_zone` shows the spelling the
        // session used (as MySQL and MariaDB do).
        let tz = TimeZone::get(spec).ok()?;
        Some(Zone {
            name: spec.to_string(),
            kind: Kind::Named(tz),
        })
    }

    /// The `@@time_zone` spelling.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether session time is UTC (nothing to convert).
    pub fn is_utc(&self) -> bool {
        match &self.kind {
            Kind::System | Kind::Offset(0) => true,
            Kind::Offset(_) => false,
            Kind::Named(tz) => tz.iana_name() == Some("UTC"),
        }
    }

    /// The UTC offset in seconds at UTC instant `secs` since the epoch.
    fn offset_at(&self, secs: i64) -> i32 {
        match &self.kind {
            Kind::System => 0,
            Kind::Offset(o) => *o,
            Kind::Named(tz) => Timestamp::from_second(secs)
                .map(|ts| tz.to_offset(ts).seconds())
                .unwrap_or(0),
        }
    }

    /// Session time of a UTC value (None: outside years 0..=9999).
    pub fn local_of(&self, utc: DateTime) -> Option<DateTime> {
        let us = dt_micros(&utc) - EPOCH_MICROS;
        let off = self.offset_at(us.div_euclid(1_000_000) as i64);
        from_micros(dt_micros(&utc) + i128::from(off) * 1_000_000)
    }

    /// Seconds since the epoch (with microseconds) of session time
    /// `local`; a gap time is the gap's end, an overlap time its earlier
    /// instant. None when the instant is outside what the tz rules cover.
    pub fn epoch_micros_of(&self, local: DateTime) -> Option<i128> {
        let local_us = dt_micros(&local) - EPOCH_MICROS;
        let off = match &self.kind {
            Kind::System => 0,
            Kind::Offset(o) => *o,
            Kind::Named(tz) => {
                let civil = jiff::civil::DateTime::new(
                    i16::try_from(local.year).ok()?,
                    local.month as i8,
                    local.day as i8,
                    local.hour as i8,
                    local.minute as i8,
                    local.second as i8,
                    0,
                )
                .ok()?;
                match tz.to_ambiguous_timestamp(civil).offset() {
                    AmbiguousOffset::Unambiguous { offset } => offset.seconds(),
                    AmbiguousOffset::Fold { before, .. } => before.seconds(),
                    AmbiguousOffset::Gap { after, .. } => {
                        // The transition: the first instant whose local
                        // time is after the gap.
                        let probe =
                            local_us.div_euclid(1_000_000) as i64 - i64::from(after.seconds());
                        let ts = Timestamp::from_second(probe).ok()?;
                        let t = tz.following(ts).next()?.timestamp().as_second();
                        return Some(i128::from(t) * 1_000_000);
                    }
                }
            }
        };
        Some(local_us - i128::from(off) * 1_000_000)
    }

    /// UTC value of session time `local` (see [`Zone::epoch_micros_of`]).
    pub fn utc_of(&self, local: DateTime) -> Option<DateTime> {
        from_micros(self.epoch_micros_of(local)? + EPOCH_MICROS)
    }
}

impl quire_engine::tszone::TimestampZone for Zone {
    fn to_utc(&self, local: DateTime) -> Option<DateTime> {
        if matches!(self.kind, Kind::Named(_)) {
            if let Some(u) = reading_of(&local) {
                return Some(u);
            }
        }
        self.utc_of(local)
    }
    fn to_local(&self, utc: DateTime) -> DateTime {
        self.local_of(utc).unwrap_or(utc)
    }
    fn is_fixed(&self) -> bool {
        !matches!(self.kind, Kind::Named(_)) || self.is_utc()
    }
}

/// A column value as the SQL layer holds it (session time) checked
/// against column `c`: a TIMESTAMP is checked as a DATETIME of its
/// precision when session time is not UTC, because its range applies to
/// the UTC value, which the transaction checks when it stores it.
pub fn coerce_session(
    v: quire_engine::Value,
    c: &quire_engine::ColumnDef,
    nullable: bool,
    row: u64,
) -> Result<quire_engine::Value, EngineError> {
    use quire_engine::ColumnType;
    match c.ty {
        ColumnType::Timestamp { fsp } if !current().is_utc() => {
            quire_engine::types::coerce(v, &ColumnType::DateTime { fsp }, nullable, &c.name, row)
        }
        _ => quire_engine::types::coerce(v, &c.ty, nullable, &c.name, row),
    }
}

thread_local! {
    /// The zone of the statement running on this thread.
    static CURRENT: RefCell<Zone> = RefCell::new(Zone::system());
    /// The statement's clock readings in session time and UTC (NOW(),
    /// CURRENT_TIMESTAMP defaults): written back to a TIMESTAMP, such a
    /// reading is its own instant, also inside a repeated autumn hour
    /// (MySQL stores the query start time itself).
    static READINGS: RefCell<Vec<(DateTime, DateTime)>> = const { RefCell::new(Vec::new()) };
}

/// Remembers that session time `local` is the clock reading `utc`.
pub fn remember_reading(local: DateTime, utc: DateTime) {
    READINGS.with(|r| {
        let mut r = r.borrow_mut();
        if r.len() >= 8 {
            r.remove(0);
        }
        r.push((local, utc));
    });
}

/// The UTC reading whose session time is `local` to the second.
fn reading_of(local: &DateTime) -> Option<DateTime> {
    let secs = |d: &DateTime| (d.date(), d.hour, d.minute, d.second);
    READINGS.with(|r| {
        r.borrow()
            .iter()
            .rev()
            .find(|(l, _)| secs(l) == secs(local))
            .map(|(_, u)| DateTime {
                micro: local.micro,
                ..*u
            })
    })
}

/// The running statement's session zone.
pub fn current() -> Zone {
    CURRENT.with(|c| c.borrow().clone())
}

/// Sets the zone expressions on this thread read (the session does,
/// before each statement).
pub fn set_current(z: &Zone) {
    CURRENT.with(|c| *c.borrow_mut() = z.clone());
    READINGS.with(|r| r.borrow_mut().clear());
}

/// The transaction's zone for TIMESTAMP columns: None when session time
/// is UTC (nothing to convert).
pub fn engine_zone(z: &Zone) -> Option<quire_engine::tszone::Zone> {
    if z.is_utc() {
        None
    } else {
        Some(std::sync::Arc::new(z.clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dt(s: &str) -> DateTime {
        match crate::func::date::to_dt(&quire_engine::Value::text(s)) {
            Some((d, _)) => d,
            None => panic!("bad test datetime {s}"),
        }
    }

    fn show(d: Option<DateTime>) -> String {
        d.map_or("NULL".into(), |d| d.format_fsp(0))
    }

    #[test]
    fn parses_what_mysql_accepts() {
        for (spec, name) in [
            ("SYSTEM", "SYSTEM"),
            ("system", "SYSTEM"),
            ("+00:00", "+00:00"),
            ("-00:00", "+00:00"),
            ("+1:00", "+01:00"),
            ("-05:30", "-05:30"),
            ("+14:00", "+14:00"),
            ("-13:59", "-13:59"),
            ("Europe/Berlin", "Europe/Berlin"),
            ("europe/berlin", "europe/berlin"),
            ("UTC", "UTC"),
        ] {
            assert_eq!(
                Zone::parse(spec).map(|z| z.name().to_string()),
                Some(name.into()),
                "{spec}"
            );
        }
        for bad in [
            "",
            "+14:01",
            "-14:00",
            "+01:60",
            "+01",
            "01:00",
            "+1:0x",
            "Mars/Base",
            " UTC",
        ] {
            assert!(Zone::parse(bad).is_none(), "{bad}");
        }
        assert_eq!(
            unknown_zone("x").message,
            "Unknown or incorrect time zone: 'x'"
        );
    }

    #[test]
    fn offsets_convert_both_ways() {
        let z = Zone::parse("+05:30").expect("zone");
        assert_eq!(
            show(z.utc_of(dt("2024-01-01 00:00:00"))),
            "2023-12-31 18:30:00"
        );
        assert_eq!(
            show(z.local_of(dt("2023-12-31 18:30:00"))),
            "2024-01-01 00:00:00"
        );
        assert!(!z.is_utc());
        assert!(Zone::parse("-00:00").expect("zone").is_utc());
    }

    #[test]
    fn berlin_summer_winter_and_transitions() {
        let z = Zone::parse("Europe/Berlin").expect("zone");
        assert_eq!(
            show(z.utc_of(dt("2024-01-15 12:00:00"))),
            "2024-01-15 11:00:00"
        );
        assert_eq!(
            show(z.utc_of(dt("2024-07-15 12:00:00"))),
            "2024-07-15 10:00:00"
        );
        // Spring forward 2024-03-31 02:00 -> 03:00: the gap's end.
        assert_eq!(
            show(z.utc_of(dt("2024-03-31 02:30:00"))),
            "2024-03-31 01:00:00"
        );
        assert_eq!(
            show(z.local_of(dt("2024-03-31 01:00:00"))),
            "2024-03-31 03:00:00"
        );
        // Fall back 2024-10-27 03:00 -> 02:00: 02:30 happens twice; the
        // earlier (summer time) instant is taken.
        assert_eq!(
            show(z.utc_of(dt("2024-10-27 02:30:00"))),
            "2024-10-27 00:30:00"
        );
        assert_eq!(
            show(z.local_of(dt("2024-10-27 00:30:00"))),
            "2024-10-27 02:30:00"
        );
        assert_eq!(
            show(z.local_of(dt("2024-10-27 01:30:00"))),
            "2024-10-27 02:30:00"
        );
    }

    #[test]
    fn a_clock_reading_in_the_repeated_hour_keeps_its_instant() {
        use quire_engine::tszone::TimestampZone;
        let z = Zone::parse("America/New_York").expect("zone");
        set_current(&z);
        // 06:30 UTC is 01:30 EST, the second 01:30 of 2024-11-03.
        let utc = dt("2024-11-03 06:30:00");
        let local = z.local_of(utc).expect("local");
        assert_eq!(local.format_fsp(0), "2024-11-03 01:30:00");
        assert_eq!(show(z.to_utc(local)), "2024-11-03 05:30:00");
        remember_reading(local, utc);
        assert_eq!(show(z.to_utc(local)), "2024-11-03 06:30:00");
        set_current(&Zone::system());
        assert_eq!(show(z.to_utc(local)), "2024-11-03 05:30:00");
    }

    #[test]
    fn new_york_and_microseconds() {
        let z = Zone::parse("America/New_York").expect("zone");
        let mut l = dt("2024-11-03 01:30:00");
        l.micro = 250_000;
        let u = z.utc_of(l).expect("utc");
        assert_eq!(u.format_fsp(6), "2024-11-03 05:30:00.250000");
        assert_eq!(
            z.local_of(u).map(|d| d.format_fsp(6)),
            Some("2024-11-03 01:30:00.250000".into())
        );
        assert_eq!(
            Zone::system().epoch_micros_of(dt("1970-01-01 00:00:01")),
            Some(1_000_000)
        );
    }
}
