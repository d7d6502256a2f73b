//! Fuzz harnesses for quire, shared by the libFuzzer targets in
//! `fuzz_targets/` (see README.md).
//!
//! * [`packet::run`] feeds bytes to the wire-protocol decoders of
//!   `quire-server`.
//! * [`sql::run`] feeds raw text, token soup, or grammar-generated
//!   statements to a [`quire_sql::Session`] on an in-memory engine.

pub mod input;
pub mod known;
pub mod packet;
pub mod sql;
