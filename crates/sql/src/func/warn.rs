//! # The warning channel of expression evaluation
//!
//! MySQL functions and operators report problems that are not errors as
//! warnings: `1/0` is NULL with warning 1365 "Division by 0", `LOG(0)` is
//! NULL with 3020, a date string that is not a date gives 1292, a result
//! longer than `max_allowed_packet` gives 1301. Evaluation
//! ([`crate::expr::E::eval`]) has no handle on the session, and threading
//! one through every `Row { .. }` built by the executor would touch every
//! call site, so warnings go to a per-thread sink instead: a statement runs
//! on one thread from start to end, and the session drains the sink once
//! the statement is over (`Session::run_with_func_warnings`).
//!
//! The sink keeps at most [`MAX_ERROR_COUNT`] warnings (MySQL's default
//! `max_error_count`) but counts all of them, as MySQL's warning count
//! (`@@warning_count`, the OK packet) goes on past the stored list.

use std::cell::RefCell;

/// MySQL's default `max_error_count`: warnings kept per statement.
pub const MAX_ERROR_COUNT: usize = 1024;

/// One warning: level (`Warning`, `Note`), code, message.
pub type Warning = (String, u16, String);

#[derive(Default)]
struct Sink {
    list: Vec<Warning>,
    count: usize,
}

thread_local! {
    static SINK: RefCell<Sink> = RefCell::new(Sink::default());
}

/// Forgets whatever an earlier statement left behind.
pub fn begin() {
    SINK.with(|s| {
        let mut s = s.borrow_mut();
        s.list.clear();
        s.count = 0;
    });
    crate::func::math::reset_rand();
}

/// Takes the warnings raised since [`begin`]: the kept ones and how many
/// there were in all.
pub fn drain() -> (Vec<Warning>, usize) {
    SINK.with(|s| {
        let mut s = s.borrow_mut();
        let n = s.count;
        s.count = 0;
        (std::mem::take(&mut s.list), n)
    })
}

/// Raises a warning of level `Warning`.
pub fn warn(code: u16, msg: impl Into<String>) {
    push("Warning", code, msg.into());
}

/// Raises a note (level `Note`).
pub fn note(code: u16, msg: impl Into<String>) {
    push("Note", code, msg.into());
}

fn push(level: &str, code: u16, msg: String) {
    SINK.with(|s| {
        let mut s = s.borrow_mut();
        s.count += 1;
        if s.list.len() < MAX_ERROR_COUNT {
            s.list.push((level.to_string(), code, msg));
        }
    });
}

/// Warning 1365, raised where a division or modulo by zero yields NULL.
pub fn division_by_zero() {
    warn(1365, "Division by 0");
}

/// Warning 1292 for a value that is not a valid date/time.
pub fn bad_datetime(v: &str) {
    warn(1292, format!("Incorrect datetime value: '{v}'"));
}

/// Warning 1301: a string function's result would exceed
/// `max_allowed_packet`, so it is NULL.
pub fn too_long(func: &str, max: u64) {
    warn(
        1301,
        format!("Result of {func}() was larger than max_allowed_packet ({max}) - truncated"),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_past_the_cap() {
        begin();
        for _ in 0..MAX_ERROR_COUNT + 5 {
            division_by_zero();
        }
        let (list, n) = drain();
        assert_eq!(list.len(), MAX_ERROR_COUNT);
        assert_eq!(n, MAX_ERROR_COUNT + 5);
        assert_eq!(drain().1, 0);
    }
}
