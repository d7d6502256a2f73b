//! # Stack: how deep a statement may go (MySQL error 1436)
//!
//! Statements are trees, and every pass over a tree (parsing, compiling
//! an expression, evaluating it, dropping it) is naturally recursive. A
//! connection thread has a fixed stack (the server's connection threads:
//! 8 MiB, `crates/server/src/server.rs`); recursion deeper than the stack
//! aborts the whole process, so no depth may be left to the input. Two
//! mechanisms keep every statement within the stack:
//!
//! * **Long chains are not deep.** `a OR b OR ...`, `1 + 1 + ...`, `x AND
//!   ...` with 100,000 terms are flat lists to the user and must simply run
//!   (MariaDB runs them). The parser builds such a run of one operator
//!   class as a *balanced* tree (`dialect.rs`, depth log2 n instead of n);
//!   AND, OR and XOR are associative, so the tree means the same thing,
//!   and for arithmetic the compiler reads the run back in text order and
//!   evaluates it left to right as MySQL does (`E::Chain` in `expr.rs`).
//! * **Genuine nesting is bounded.** Parentheses, nested function calls,
//!   `x IS NULL IS NULL ...`, `a = b = c = ...` really are as deep as
//!   written. The parser refuses them past a depth derived from the stack
//!   that is left ([`parse_depth_limit`]), and every recursive pass of our
//!   own checks the remaining stack on entry ([`check`]). Both answer
//!   MySQL's 1436 `Thread stack overrun` instead of crashing. Passes that
//!   cannot fail (type inference, tree walks) grow onto a heap segment
//!   instead ([`grow`]); the bound on depth keeps that memory small.
//!
//! What is *not* guarded here: the compiler-generated `Drop`/`Clone` of
//! sqlparser's AST. Those are kept safe by the depth bound alone, which is
//! why the bound is taken from the stack actually left.

use std::cell::Cell;

use quire_engine::EngineError;

use crate::SqlResult;

/// Stack kept free below any guarded recursion: the largest frame of a
/// recursive pass (the expression compiler's, a few KiB unoptimized) plus
/// the error path, with room to spare.
pub const MARGIN: usize = 128 * 1024;

/// Stack budgeted per level of parser nesting: the AST's `Drop`, `Clone`
/// and our compiler each take a frame per level.
const BYTES_PER_LEVEL: usize = 12 * 1024;

/// Parser nesting is never refused below this depth (MySQL's own test
/// suite nests a few dozen levels) nor allowed beyond the upper bound.
const MIN_DEPTH: usize = 64;
const MAX_DEPTH: usize = 1000;

thread_local! {
    static STACK_SIZE: Cell<usize> = const { Cell::new(0) };
}

/// The size of the current thread's stack (what 1436 reports as "a N
/// byte stack"); 8 MiB where the platform does not say.
pub fn thread_stack_size() -> usize {
    STACK_SIZE.with(|c| {
        if c.get() == 0 {
            c.set(query_stack_size().unwrap_or(8 << 20));
        }
        c.get()
    })
}

#[cfg(target_os = "linux")]
fn query_stack_size() -> Option<usize> {
    // SAFETY: pthread_getattr_np fills a caller-owned attribute object for
    // the calling thread; it is destroyed before returning.
    unsafe {
        let mut attr: libc::pthread_attr_t = std::mem::zeroed();
        if libc::pthread_getattr_np(libc::pthread_self(), &mut attr) != 0 {
            return None;
        }
        let mut addr: *mut libc::c_void = std::ptr::null_mut();
        let mut size: libc::size_t = 0;
        let rc = libc::pthread_attr_getstack(&attr, &mut addr, &mut size);
        libc::pthread_attr_destroy(&mut attr);
        (rc == 0 && size > 0).then_some(size)
    }
}

#[cfg(not(target_os = "linux"))]
fn query_stack_size() -> Option<usize> {
    None
}

/// Bytes of stack left to the current thread (a large figure where the
/// platform cannot tell, so that checks pass as before).
pub fn remaining() -> usize {
    stacker::remaining_stack().unwrap_or(usize::MAX / 2)
}

/// MySQL's 1436 for a recursion that needs `needed` bytes more.
pub fn overrun(needed: usize) -> EngineError {
    let size = thread_stack_size();
    let used = size.saturating_sub(remaining().min(size));
    EngineError::new(
        1436,
        "HY000",
        format!(
            "Thread stack overrun:  {used} bytes used of a {size} byte stack, and {needed} bytes \
             needed. Consider increasing the thread_stack system variable."
        ),
    )
}

/// Called on entry to every fallible recursive pass: 1436 when less than
/// [`MARGIN`] bytes of stack are left.
#[inline]
pub fn check() -> SqlResult<()> {
    if remaining() < MARGIN {
        Err(overrun(MARGIN))
    } else {
        Ok(())
    }
}

/// For recursive passes that cannot fail: continues on a fresh heap
/// segment when the stack runs low. Depth is bounded by the parser, so the
/// extra memory is bounded too.
#[inline]
pub fn grow<R>(f: impl FnOnce() -> R) -> R {
    stacker::maybe_grow(MARGIN, 1 << 20, f)
}

/// How many levels of nesting the parser may build on this thread now:
/// the stack left (less the margin) at [`BYTES_PER_LEVEL`] a level,
/// within [`MIN_DEPTH`]..=[`MAX_DEPTH`].
pub fn parse_depth_limit() -> usize {
    (remaining().saturating_sub(MARGIN) / BYTES_PER_LEVEL).clamp(MIN_DEPTH, MAX_DEPTH)
}
