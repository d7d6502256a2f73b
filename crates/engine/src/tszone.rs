//! # TIMESTAMP values and the session time zone, at the transaction boundary
//!
//! A TIMESTAMP column stores UTC, as InnoDB's does (seconds since the
//! epoch). The engine itself knows no time zones: it stores and returns
//! the broken-down [`DateTime`] it is given, now *defined* as UTC. The SQL
//! layer hands each statement's [`Txn`](crate::txn::Txn) the session's
//! zone as a [`TimestampZone`]; the transaction's public row interface then
//! converts TIMESTAMP columns, and only those:
//!
//! * values written (`insert`, `update`) are read as session time and
//!   converted to UTC before the range check (`1970-01-01 00:00:01` ..=
//!   `2038-01-19 03:14:07` UTC, error 1292 outside), [`store_timestamp`];
//! * rows read (`get*`, `scan*`) come back in session time,
//!   [`rows_to_local`];
//! * key values (a primary key lookup, scan bounds) are converted like
//!   written values. A zone with DST is not monotonic (an autumn hour
//!   repeats, a spring hour is missing), so a scan bound on a TIMESTAMP
//!   key column in such a zone is widened by [`WIDEN_SECS`] and cut after
//!   that column ([`bound_to_utc`]): the scan reads a few more rows, the
//!   SQL layer's predicate (always checked again) drops them, and no row
//!   whose session time is inside the range is lost.
//!
//! Everything inside the engine (index maintenance, foreign keys, purge,
//! the binlog's TIMESTAMP2 seconds, rebuilds) sees the stored UTC value.
//! A transaction without a zone (internal tables, tests) converts nothing,
//! which is the same as UTC.

use std::sync::Arc;

use crate::error::Result;
use crate::types::{self, ColumnType, DateTime, Value};

/// Local (session) time <-> UTC for TIMESTAMP columns.
pub trait TimestampZone: Send + Sync {
    /// The UTC instant of session time `local`. A local time that does
    /// not exist (inside a spring-forward gap) is the first instant after
    /// the gap, as MySQL stores it.
    fn to_utc(&self, local: DateTime) -> Option<DateTime>;
    /// The session time of UTC instant `utc`.
    fn to_local(&self, utc: DateTime) -> DateTime;
    /// Whether local = UTC + one constant offset (UTC, `+hh:mm`): then
    /// the conversion keeps order and key bounds convert exactly.
    fn is_fixed(&self) -> bool;
}

/// A shared zone handle, as a transaction keeps it.
pub type Zone = Arc<dyn TimestampZone>;

/// How far a scan bound on a TIMESTAMP key is widened in a zone with
/// transitions: more than any UTC offset change the tz database knows
/// (Samoa skipped a whole day in 2011).
pub const WIDEN_SECS: i64 = 2 * 86_400;

fn is_zero(dt: &DateTime) -> bool {
    dt.month == 0 || dt.day == 0
}

/// A value written to TIMESTAMP column `c` (type `fsp`) in session time:
/// coerced like a DATETIME, converted to UTC, then range-checked with the
/// error TIMESTAMP's coercion gives (1292 naming the value as written).
pub fn store_timestamp(
    zone: &dyn TimestampZone,
    v: Value,
    fsp: u8,
    nullable: bool,
    column: &str,
    row: u64,
) -> Result<Value> {
    let shown = types::store_err::shown_value(&v);
    let dt = types::coerce(v, &ColumnType::DateTime { fsp }, nullable, column, row)?;
    let Value::DateTime(local) = dt else {
        return Ok(dt);
    };
    if is_zero(&local) {
        return Ok(Value::DateTime(local));
    }
    match zone.to_utc(local).filter(|u| u.in_timestamp_range()) {
        Some(u) => Ok(Value::DateTime(u)),
        None => Err(types::err_bad_temporal("datetime", &shown, column, row)),
    }
}

/// A stored (UTC) value in session time.
pub fn value_to_local(zone: &dyn TimestampZone, v: &mut Value) {
    if let Value::DateTime(dt) = v {
        if !is_zero(dt) {
            *dt = zone.to_local(*dt);
        }
    }
}

/// The TIMESTAMP columns of `columns` (indexes), or none.
pub fn timestamp_columns(columns: &[crate::catalog::ColumnDef]) -> Vec<usize> {
    columns
        .iter()
        .enumerate()
        .filter(|(_, c)| matches!(c.ty, ColumnType::Timestamp { .. }))
        .map(|(i, _)| i)
        .collect()
}

/// Converts a row read from the engine to session time in place.
pub fn row_to_local(zone: &dyn TimestampZone, ts_cols: &[usize], row: &mut [Value]) {
    for &i in ts_cols {
        if let Some(v) = row.get_mut(i) {
            value_to_local(zone, v);
        }
    }
}

/// A key value (session time) for TIMESTAMP key type `ty`, in UTC. The
/// second element says whether the conversion is exact; when it is not
/// (a zone with transitions), the returned instant is moved by
/// [`WIDEN_SECS`] down (`lower`) or up, and the caller must use it as an
/// inclusive bound and ignore later key columns.
pub fn bound_to_utc(
    zone: &dyn TimestampZone,
    v: &Value,
    fsp: u8,
    lower: bool,
) -> Option<(Value, bool)> {
    let c = types::coerce(v.clone(), &ColumnType::DateTime { fsp }, true, "key", 1).ok()?;
    if types::compare(&c, v) != Some(std::cmp::Ordering::Equal) {
        return None;
    }
    let Value::DateTime(local) = c else {
        return Some((c, true));
    };
    if is_zero(&local) {
        return Some((Value::DateTime(local), true));
    }
    let u = zone.to_utc(local)?;
    if zone.is_fixed() {
        return Some((Value::DateTime(u), true));
    }
    let shift = if lower { -WIDEN_SECS } else { WIDEN_SECS };
    let moved = add_seconds(u, shift)?;
    Some((Value::DateTime(moved), false))
}

/// `dt` plus `secs` seconds (None outside years 1..=9999).
fn add_seconds(dt: DateTime, secs: i64) -> Option<DateTime> {
    let d = dt.date();
    let days = days_from_civil(i64::from(d.year), i64::from(d.month), i64::from(d.day));
    let tod = i64::from(dt.hour) * 3600 + i64::from(dt.minute) * 60 + i64::from(dt.second);
    let total = days * 86_400 + tod + secs;
    let (days, tod) = (total.div_euclid(86_400), total.rem_euclid(86_400));
    let (y, m, day) = civil_from_days(days);
    if !(1..=9999).contains(&y) {
        return None;
    }
    Some(DateTime {
        year: y as u16,
        month: m as u8,
        day: day as u8,
        hour: (tod / 3600) as u8,
        minute: (tod / 60 % 60) as u8,
        second: (tod % 60) as u8,
        micro: dt.micro,
    })
}

/// Days since 1970-01-01 of a proleptic Gregorian date.
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date of `days` since 1970-01-01.
pub fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (
        if m <= 2 {
            yoe + era * 400 + 1
        } else {
            yoe + era * 400
        },
        m,
        d,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dt(y: u16, mo: u8, d: u8, h: u8, mi: u8, s: u8) -> DateTime {
        DateTime {
            year: y,
            month: mo,
            day: d,
            hour: h,
            minute: mi,
            second: s,
            micro: 0,
        }
    }

    #[test]
    fn add_seconds_crosses_days_and_years() {
        assert_eq!(
            add_seconds(dt(1999, 12, 31, 23, 0, 0), 7200),
            Some(dt(2000, 1, 1, 1, 0, 0))
        );
        assert_eq!(
            add_seconds(dt(2024, 3, 1, 0, 0, 0), -1),
            Some(dt(2024, 2, 29, 23, 59, 59))
        );
        assert_eq!(
            add_seconds(dt(1970, 1, 1, 0, 0, 0), -WIDEN_SECS),
            Some(dt(1969, 12, 30, 0, 0, 0))
        );
        assert_eq!(add_seconds(dt(1, 1, 1, 0, 0, 0), -1), None);
    }
}
