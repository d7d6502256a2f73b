//! Fuzz harnesses for quire, shared by the libFuzzer targets in
//! `fuzz_targets/` (see README.md).
//!
//! * [`packet::run`] feeds bytes to the wire-protocol decoders of
//!   `quire-server`.
//! * [`sql::run`] feeds raw text, token soup, or grammar-generated
//!   statements to a [`quire_sql::Session`] on an in-memory engine.
//! * [`login::run`] drives the whole connection phase of `quire-server`
//!   (TLS, caching_sha2_password, account options) with a scripted,
//!   mutating client.

pub mod input;
pub mod known;
pub mod login;
pub mod packet;
pub mod sql;
