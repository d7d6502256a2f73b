//! # Sorting that KILL QUERY can stop
//!
//! `ORDER BY` sorts rows held in memory. A plain `sort_by` over millions
//! of rows runs for seconds with no way out, so a KILL QUERY or an
//! expired `max_execution_time` would wait for it. This is a stable
//! bottom-up merge sort with a safe point (`tick`, see the engine's
//! `interrupt.rs`) between bounded pieces of work:
//!
//! ```text
//!   [ run 0 | run 1 | run 2 | ... ]   each run sorted by sort_by,
//!      tick           tick            RUN_LEN rows at most
//!   [ run 0+1     | run 2+3     | ...]  merged pairwise,
//!      tick every MERGE_SLICE rows    width doubling each pass
//! ```
//!
//! A comparator that gave up part-way (answering Equal once killed) is
//! not an option: the standard sort may panic on an inconsistent order.
//! The result equals `sort_by`'s (both are stable).

use std::cmp::Ordering;

use quire_engine::EngineError;

/// Rows sorted by one `sort_by` call between safe points.
const RUN_LEN: usize = 16 * 1024;
/// Rows merged between safe points.
const MERGE_SLICE: usize = 64 * 1024;

/// Sorts `v` stably by `cmp`, calling `tick` between bounded pieces of
/// work and stopping with its error (`v` then holds an unspecified part
/// of its rows: the statement is over).
pub fn sort_stoppable<T>(
    v: &mut Vec<T>,
    cmp: impl Fn(&T, &T) -> Ordering,
    tick: impl Fn() -> Result<(), EngineError>,
) -> Result<(), EngineError> {
    if v.len() <= RUN_LEN {
        v.sort_by(&cmp);
        return Ok(());
    }
    for run in v.chunks_mut(RUN_LEN) {
        tick()?;
        run.sort_by(&cmp);
    }
    let mut width = RUN_LEN;
    while width < v.len() {
        let src = std::mem::take(v);
        let mut out = Vec::with_capacity(src.len());
        let mut rest = src.into_iter().peekable();
        let mut since_tick = 0usize;
        loop {
            let left: Vec<T> = rest.by_ref().take(width).collect();
            if left.is_empty() {
                break;
            }
            let right: Vec<T> = rest.by_ref().take(width).collect();
            merge_into(&mut out, left, right, &cmp, &mut since_tick, &tick)?;
        }
        *v = out;
        width = width.saturating_mul(2);
    }
    Ok(())
}

/// Appends the merge of two sorted runs (left first on ties).
fn merge_into<T>(
    out: &mut Vec<T>,
    left: Vec<T>,
    right: Vec<T>,
    cmp: &impl Fn(&T, &T) -> Ordering,
    since_tick: &mut usize,
    tick: &impl Fn() -> Result<(), EngineError>,
) -> Result<(), EngineError> {
    let mut l = left.into_iter().peekable();
    let mut r = right.into_iter().peekable();
    loop {
        *since_tick += 1;
        if *since_tick >= MERGE_SLICE {
            *since_tick = 0;
            tick()?;
        }
        let take_left = match (l.peek(), r.peek()) {
            (Some(a), Some(b)) => cmp(b, a) != Ordering::Less,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (None, None) => return Ok(()),
        };
        let next = if take_left { l.next() } else { r.next() };
        out.extend(next);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    fn lcg(seed: &mut u64) -> u64 {
        *seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        *seed >> 33
    }

    /// Same order as the standard stable sort, ties included, at sizes
    /// around the run and merge boundaries.
    #[test]
    fn equals_the_standard_stable_sort() {
        let mut seed = 7;
        for n in [0, 1, 5, RUN_LEN, RUN_LEN + 1, 3 * RUN_LEN + 17, 100_000] {
            let v: Vec<(u64, usize)> = (0..n).map(|i| (lcg(&mut seed) % 1000, i)).collect();
            let mut want = v.clone();
            want.sort_by_key(|a| a.0);
            let mut got = v;
            sort_stoppable(&mut got, |a, b| a.0.cmp(&b.0), || Ok(())).expect("sort");
            assert_eq!(got, want, "n={n}");
        }
    }

    /// A kill during the sort stops it with the interrupt's error, after
    /// a bounded amount of work.
    #[test]
    fn stops_at_the_first_tick_after_a_kill() {
        let mut seed = 3;
        let mut v: Vec<u64> = (0..200_000).map(|_| lcg(&mut seed)).collect();
        let ticks = Cell::new(0u32);
        let r = sort_stoppable(
            &mut v,
            |a, b| a.cmp(b),
            || {
                ticks.set(ticks.get() + 1);
                if ticks.get() >= 3 {
                    Err(quire_engine::interrupt::interrupted_error())
                } else {
                    Ok(())
                }
            },
        );
        assert_eq!(r.map_err(|e| e.code), Err(1317));
        assert_eq!(ticks.get(), 3);
    }
}
