//! # Window frames
//!
//! `ROWS | RANGE BETWEEN start AND end` of a window specification, as
//! MySQL 8.0 accepts and runs it:
//!
//! ```text
//!   bound:  UNBOUNDED PRECEDING | n PRECEDING | CURRENT ROW
//!         | n FOLLOWING | UNBOUNDED FOLLOWING          (n: a number or ?)
//!
//!   ROWS:   n rows before / after the current row, inside the partition
//!   RANGE:  CURRENT ROW = the current row's peers (equal ORDER BY keys);
//!           n PRECEDING / FOLLOWING = rows whose one numeric ORDER BY key
//!           lies within n of the current row's (NULL keys: the NULL peers)
//! ```
//!
//! Without a frame clause MySQL's default applies: with ORDER BY, RANGE
//! BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW (the running value includes
//! the current row's peers); without, the whole partition.
//!
//! The checks and their errors are MySQL's (`Window::check_border_sanity`,
//! `setup_range_expressions`): 3584 a start of UNBOUNDED FOLLOWING, 3585 an
//! end of UNBOUNDED PRECEDING, 3586 a start after the end by construction
//! (CURRENT ROW .. n PRECEDING, n FOLLOWING .. CURRENT ROW / n PRECEDING)
//! or a bound that is negative, NULL or (ROWS) not an integer, 3587 a RANGE
//! offset without exactly one numeric or temporal ORDER BY key, 3588 a
//! number over a temporal key, 3589 an INTERVAL over a numeric one, 3596
//! an INTERVAL in a ROWS frame. GROUPS is 1235 as in MySQL, and so is an
//! INTERVAL offset over a temporal key, which quire does not run yet.
//!
//! This module owns the frame's description and where a frame starts and
//! ends in a sorted partition ([`bounds`]); `expr.rs` compiles the clause,
//! `query/window.rs` evaluates the functions over the frames.

use std::cmp::Ordering;

use quire_engine::types::compare;
use quire_engine::{EngineError, Value};

/// One end of a frame; offsets are checked non-negative numbers.
#[derive(Debug, Clone, PartialEq)]
pub enum Bound {
    UnboundedPreceding,
    Preceding(Value),
    CurrentRow,
    Following(Value),
    UnboundedFollowing,
}

/// `ROWS` (`rows = true`) or `RANGE` between two bounds.
#[derive(Debug, Clone, PartialEq)]
pub struct Frame {
    pub rows: bool,
    pub start: Bound,
    pub end: Bound,
}

/// What [`bounds`] needs to know of a partition, in window order.
pub struct Partition<'a> {
    /// Rows of the partition.
    pub len: usize,
    /// The ORDER BY keys of row `i` (window order).
    pub order: &'a dyn Fn(usize) -> &'a [Value],
    /// Row `i`'s peer group (first, last).
    pub peers: &'a [(usize, usize)],
    /// Descending order of the first ORDER BY key.
    pub desc: bool,
}

/// `x + n` or `x - n` for a RANGE offset: the caller's arithmetic
/// (MySQL's, with its result types and overflow errors).
pub type Shift<'a> = &'a dyn Fn(&Value, &Value, bool) -> Result<Value, EngineError>;

/// The frame of row `k`: (first, last) positions, first > last when the
/// frame is empty. `frame` None = MySQL's default frame.
pub fn bounds(
    frame: Option<&Frame>,
    p: &Partition,
    k: usize,
    shift: Shift,
) -> Result<(usize, Option<usize>), EngineError> {
    let last = p.len.checked_sub(1);
    let Some(f) = frame else {
        // Without ORDER BY every row is a peer of every other.
        return Ok((0, Some(p.peers[k].1)));
    };
    let lo = if f.rows {
        rows_start(&f.start, k)
    } else {
        range_start(&f.start, p, k, shift)?
    };
    let hi = if f.rows {
        rows_end(&f.end, k, p.len)
    } else {
        range_end(&f.end, p, k, shift)?
    };
    Ok((lo, hi.and_then(|h| last.map(|l| h.min(l)))))
}

fn offset(v: &Value) -> usize {
    match v {
        Value::Int(i) => usize::try_from(*i).unwrap_or(0),
        Value::UInt(u) => usize::try_from(*u).unwrap_or(usize::MAX),
        other => other.to_f64().map_or(0, |f| f as usize),
    }
}

fn rows_start(b: &Bound, k: usize) -> usize {
    match b {
        Bound::UnboundedPreceding => 0,
        Bound::Preceding(n) => k.saturating_sub(offset(n)),
        Bound::CurrentRow => k,
        Bound::Following(n) => k.saturating_add(offset(n)),
        Bound::UnboundedFollowing => usize::MAX,
    }
}

/// None = before the partition's first row (an empty frame).
fn rows_end(b: &Bound, k: usize, len: usize) -> Option<usize> {
    match b {
        Bound::UnboundedPreceding => None,
        Bound::Preceding(n) => k.checked_sub(offset(n)),
        Bound::CurrentRow => Some(k),
        Bound::Following(n) => Some(k.saturating_add(offset(n))),
        Bound::UnboundedFollowing => len.checked_sub(1),
    }
}

/// Where a RANGE offset puts the frame's edge: the value `key ± n` the
/// candidate keys are compared with.
fn target(
    p: &Partition,
    k: usize,
    n: &Value,
    following: bool,
    shift: Shift,
) -> Result<Option<Value>, EngineError> {
    let x = match (p.order)(k).first() {
        Some(x) if !x.is_null() => x,
        _ => return Ok(None), // a NULL key: the bound is its peers
    };
    // Ascending: PRECEDING subtracts; descending: it adds.
    let add = following != p.desc;
    shift(x, n, add).map(Some)
}

/// Whether candidate key `c` lies before a frame start at `t` in window
/// order (NULLs sort first ascending, last descending).
fn before(c: &Value, t: &Value, desc: bool) -> bool {
    if c.is_null() {
        return !desc;
    }
    match compare(c, t) {
        Some(Ordering::Less) => !desc,
        Some(Ordering::Greater) => desc,
        _ => false,
    }
}

/// Whether candidate key `c` lies after a frame end at `t`.
fn after(c: &Value, t: &Value, desc: bool) -> bool {
    if c.is_null() {
        return desc;
    }
    match compare(c, t) {
        Some(Ordering::Greater) => !desc,
        Some(Ordering::Less) => desc,
        _ => false,
    }
}

fn first_key(p: &Partition, i: usize) -> Value {
    (p.order)(i).first().cloned().unwrap_or(Value::Null)
}

fn range_start(b: &Bound, p: &Partition, k: usize, shift: Shift) -> Result<usize, EngineError> {
    let (n, following) = match b {
        Bound::UnboundedPreceding => return Ok(0),
        Bound::CurrentRow => return Ok(p.peers[k].0),
        Bound::UnboundedFollowing => return Ok(usize::MAX),
        Bound::Preceding(n) => (n, false),
        Bound::Following(n) => (n, true),
    };
    let Some(t) = target(p, k, n, following, shift)? else {
        return Ok(p.peers[k].0);
    };
    Ok(partition_point(p.len, |i| {
        before(&first_key(p, i), &t, p.desc)
    }))
}

fn range_end(
    b: &Bound,
    p: &Partition,
    k: usize,
    shift: Shift,
) -> Result<Option<usize>, EngineError> {
    let (n, following) = match b {
        Bound::UnboundedPreceding => return Ok(None),
        Bound::CurrentRow => return Ok(Some(p.peers[k].1)),
        Bound::UnboundedFollowing => return Ok(p.len.checked_sub(1)),
        Bound::Preceding(n) => (n, false),
        Bound::Following(n) => (n, true),
    };
    let Some(t) = target(p, k, n, following, shift)? else {
        return Ok(Some(p.peers[k].1));
    };
    Ok(partition_point(p.len, |i| !after(&first_key(p, i), &t, p.desc)).checked_sub(1))
}

/// The first position in `0..len` where `pred` turns false (`pred` is
/// true on a prefix).
fn partition_point(len: usize, pred: impl Fn(usize) -> bool) -> usize {
    let (mut lo, mut hi) = (0, len);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if pred(mid) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

/// MySQL's ER_WINDOW_FRAME_ILLEGAL (3586).
pub fn err_illegal(window: &str) -> EngineError {
    EngineError::new(
        3586,
        "HY000",
        format!("Window '{window}': frame start or end is negative, NULL or of non-integral type"),
    )
}

/// The shape checks of a frame (before its offsets are looked at):
/// 3584, 3585, 3586.
pub fn check_shape(f: &Frame, window: &str) -> Result<(), EngineError> {
    if f.start == Bound::UnboundedFollowing {
        return Err(EngineError::new(
            3584,
            "HY000",
            format!("Window '{window}': frame start cannot be UNBOUNDED FOLLOWING."),
        ));
    }
    if f.end == Bound::UnboundedPreceding {
        return Err(EngineError::new(
            3585,
            "HY000",
            format!("Window '{window}': frame end cannot be UNBOUNDED PRECEDING."),
        ));
    }
    let backwards = matches!(
        (&f.start, &f.end),
        (Bound::CurrentRow, Bound::Preceding(_))
            | (Bound::Following(_), Bound::CurrentRow)
            | (Bound::Following(_), Bound::Preceding(_))
    );
    if backwards {
        return Err(err_illegal(window));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shift(x: &Value, n: &Value, add: bool) -> Result<Value, EngineError> {
        let (a, b) = (x.to_f64().unwrap_or(0.0), n.to_f64().unwrap_or(0.0));
        Ok(Value::Double(if add { a + b } else { a - b }))
    }

    fn part<'a>(keys: &'a [Vec<Value>], peers: &'a [(usize, usize)], desc: bool) -> Partition<'a> {
        Partition {
            len: keys.len(),
            order: Box::leak(Box::new(move |i: usize| keys[i].as_slice())),
            peers,
            desc,
        }
    }

    #[test]
    fn rows_frames_clip_to_the_partition() {
        let keys: Vec<Vec<Value>> = (0..5).map(|i| vec![Value::Int(i)]).collect();
        let peers: Vec<(usize, usize)> = (0..5).map(|i| (i, i)).collect();
        let p = part(&keys, &peers, false);
        let f = Frame {
            rows: true,
            start: Bound::Preceding(Value::Int(1)),
            end: Bound::Following(Value::Int(1)),
        };
        assert_eq!(bounds(Some(&f), &p, 0, &shift).unwrap(), (0, Some(1)));
        assert_eq!(bounds(Some(&f), &p, 4, &shift).unwrap(), (3, Some(4)));
        let f = Frame {
            rows: true,
            start: Bound::Preceding(Value::Int(3)),
            end: Bound::Preceding(Value::Int(2)),
        };
        assert_eq!(bounds(Some(&f), &p, 1, &shift).unwrap(), (0, None));
    }

    #[test]
    fn range_offsets_follow_the_key_and_nulls_stay_with_their_peers() {
        let keys = vec![
            vec![Value::Null],
            vec![Value::Int(1)],
            vec![Value::Int(2)],
            vec![Value::Int(4)],
            vec![Value::Int(7)],
        ];
        let peers: Vec<(usize, usize)> = (0..5).map(|i| (i, i)).collect();
        let p = part(&keys, &peers, false);
        let f = Frame {
            rows: false,
            start: Bound::Preceding(Value::Int(2)),
            end: Bound::CurrentRow,
        };
        // key 4: keys in [2, 4] -> positions 2..3
        assert_eq!(bounds(Some(&f), &p, 3, &shift).unwrap(), (2, Some(3)));
        // NULL key: its peers only
        assert_eq!(bounds(Some(&f), &p, 0, &shift).unwrap(), (0, Some(0)));
        let desc_keys: Vec<Vec<Value>> = keys.iter().rev().cloned().collect();
        let p = part(&desc_keys, &peers, true);
        // descending 7, 4, 2, 1, NULL: key 2 PRECEDING 2 = keys in [2, 4]
        assert_eq!(bounds(Some(&f), &p, 2, &shift).unwrap(), (1, Some(2)));
    }
}
