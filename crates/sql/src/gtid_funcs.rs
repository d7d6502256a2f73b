//! # GTID functions: WAIT_FOR_EXECUTED_GTID_SET, GTID_SUBSET, GTID_SUBTRACT
//!
//! The set algebra is the engine's (`binlog/gtid.rs`); a malformed set is
//! error 1772 as in MySQL. WAIT_FOR_EXECUTED_GTID_SET blocks the statement
//! until `@@gtid_executed` holds the set (0), or the timeout passes (1),
//! or KILL QUERY / max_execution_time interrupts it. Expressions are
//! plain values, so the compiled call carries a *handle* to the engine's
//! GTID state: a number this module maps back to it (a weak reference,
//! so a closed engine is never kept alive; an unknown handle is an engine
//! without a binary log).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::Duration;

use quire_engine::binlog::gtid::{GtidMode, GtidSet, GtidState};
use quire_engine::error::EngineError;
use quire_engine::types::Value;

use crate::SqlResult;

type Registry = Mutex<HashMap<u64, Weak<GtidState>>>;

fn registry() -> &'static Registry {
    static R: OnceLock<Registry> = OnceLock::new();
    R.get_or_init(|| Mutex::new(HashMap::new()))
}

/// The handle a compiled call carries (0: no GTID state).
pub(crate) fn handle(state: Option<Arc<GtidState>>) -> u64 {
    let Some(state) = state else {
        return 0;
    };
    let id = Arc::as_ptr(&state) as usize as u64;
    if let Ok(mut r) = registry().lock() {
        r.retain(|_, w| w.strong_count() > 0);
        r.insert(id, Arc::downgrade(&state));
    }
    id
}

fn state_of(handle: &Value) -> Option<Arc<GtidState>> {
    let Value::UInt(id) = handle else {
        return None;
    };
    registry().lock().ok()?.get(id)?.upgrade()
}

fn set_of(v: &Value) -> SqlResult<GtidSet> {
    let text = match v {
        Value::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
        other => other.to_string(),
    };
    GtidSet::parse(&text)
}

/// GTID_SUBSET(a, b): 1 when every GTID of `a` is in `b`.
pub(crate) fn subset(a: &Value, b: &Value) -> SqlResult<Value> {
    Ok(Value::Int(i64::from(set_of(a)?.is_subset_of(&set_of(b)?))))
}

/// GTID_SUBTRACT(a, b): the GTIDs of `a` not in `b`.
pub(crate) fn subtract(a: &Value, b: &Value) -> SqlResult<Value> {
    Ok(Value::text(&set_of(a)?.subtract(&set_of(b)?).to_text()))
}

/// WAIT_FOR_EXECUTED_GTID_SET(set[, timeout_s]).
pub(crate) fn wait(set: &Value, timeout: &Value, handle: &Value) -> SqlResult<Value> {
    let want = set_of(set)?;
    let secs = timeout.to_f64().unwrap_or(f64::NAN);
    if !secs.is_finite() || secs < 0.0 {
        return Err(EngineError::new(
            1210,
            "HY000",
            "Incorrect arguments to WAIT_FOR_EXECUTED_GTID_SET.",
        ));
    }
    let state = state_of(handle);
    if state.as_ref().is_none_or(|s| s.mode() == GtidMode::Off) {
        // ER_GTID_MODE_OFF
        return Err(EngineError::new(
            1787,
            "HY000",
            "Cannot use WAIT_FOR_EXECUTED_GTID_SET when GTID_MODE = OFF.",
        ));
    }
    let Some(state) = state else {
        return Ok(Value::Null);
    };
    // MySQL: a timeout of 0 waits without a limit.
    let limit = (secs > 0.0).then(|| Duration::from_secs_f64(secs.min(31_536_000.0)));
    let done = state.wait_executed(&want, limit, || crate::process::check_interrupt().is_err());
    crate::process::check_interrupt()?;
    Ok(Value::Int(if done { 0 } else { 1 }))
}
