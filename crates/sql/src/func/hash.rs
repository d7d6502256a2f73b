//! # Hashes and identifiers
//!
//! Owns MD5, SHA1/SHA, SHA2, UUID, UUID_SHORT, UUID_TO_BIN, BIN_TO_UUID
//! and IS_UUID.
//!
//! Rules followed (MySQL 8.0):
//! * digests are lowercase hex text; SHA2 takes 224, 256, 384, 512 or 0
//!   (= 256) bits, any other length is NULL;
//! * UUID() is a version-1 UUID (time based) as MySQL's; the node is
//!   random per process, as on a server without a usable MAC address;
//! * UUID_TO_BIN/BIN_TO_UUID with a true swap flag move the time-high
//!   group first (`swap_flag` of the manual) so that values sort by time;
//!   a malformed argument is error 1411 `Incorrect string value`;
//! * IS_UUID accepts 32 hex digits, optionally dashed 8-4-4-4-12 and
//!   optionally in braces.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use md5::Digest as _;
use quire_engine::{EngineError, Value};

use super::val;
use crate::SqlResult;

fn hex_lower(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

pub fn md5(v: &Value) -> Value {
    Value::text(&hex_lower(&md5::Md5::digest(val::bytes(v))))
}

pub fn sha1(v: &Value) -> Value {
    Value::text(&hex_lower(&sha1::Sha1::digest(val::bytes(v))))
}

pub fn sha2(v: &Value, bits: &Value) -> Value {
    let Some(bits) = val::int(bits) else {
        return Value::Null;
    };
    let b = val::bytes(v);
    let d = match bits {
        0 | 256 => sha2::Sha256::digest(b.as_slice()).to_vec(),
        224 => sha2::Sha224::digest(b.as_slice()).to_vec(),
        384 => sha2::Sha384::digest(b.as_slice()).to_vec(),
        512 => sha2::Sha512::digest(b.as_slice()).to_vec(),
        _ => return Value::Null,
    };
    Value::text(&hex_lower(&d))
}

fn node() -> [u8; 6] {
    static NODE: OnceLock<[u8; 6]> = OnceLock::new();
    *NODE.get_or_init(|| {
        let r = uuid::Uuid::new_v4();
        let b = r.as_bytes();
        // Multicast bit set: not a real MAC address (RFC 4122 4.5).
        [b[0] | 1, b[1], b[2], b[3], b[4], b[5]]
    })
}

pub fn uuid() -> Value {
    Value::text(&uuid::Uuid::now_v1(&node()).hyphenated().to_string())
}

/// UUID_SHORT: `(server_id & 255) << 56 | startup seconds << 24`, plus
/// one per call (server_id is 1 in quire).
pub fn uuid_short() -> Value {
    static NEXT: OnceLock<AtomicU64> = OnceLock::new();
    let c = NEXT.get_or_init(|| {
        let secs = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        AtomicU64::new((1u64 << 56) | ((secs & 0xFFFF_FFFF) << 24))
    });
    Value::UInt(c.fetch_add(1, Ordering::Relaxed))
}

fn parse_uuid(s: &[u8]) -> Option<[u8; 16]> {
    let t = std::str::from_utf8(s).ok()?;
    let t = match t.strip_prefix('{') {
        Some(r) => r.strip_suffix('}')?,
        None => t,
    };
    let hex: String = if t.len() == 36 {
        let b = t.as_bytes();
        if [8, 13, 18, 23].iter().any(|&i| b[i] != b'-') {
            return None;
        }
        t.chars().filter(|&c| c != '-').collect()
    } else if t.len() == 32 {
        t.to_string()
    } else {
        return None;
    };
    if hex.len() != 32 || !hex.chars().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    let mut out = [0u8; 16];
    for (i, o) in out.iter_mut().enumerate() {
        *o = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(out)
}

pub fn is_uuid(v: &Value) -> Value {
    if v.is_null() {
        return Value::Null;
    }
    Value::Int(i64::from(parse_uuid(&val::bytes(v)).is_some()))
}

fn bad_string(v: &Value, f: &str) -> EngineError {
    EngineError::new(
        1411,
        "HY000",
        format!(
            "Incorrect string value: '{}' for function {f}",
            val::text(v)
        ),
    )
}

fn swap_flag(v: Option<&Value>) -> bool {
    v.and_then(val::int).is_some_and(|x| x != 0)
}

pub fn uuid_to_bin(v: &Value, swap: Option<&Value>) -> SqlResult<Value> {
    if v.is_null() {
        return Ok(Value::Null);
    }
    let Some(b) = parse_uuid(&val::bytes(v)) else {
        return Err(bad_string(v, "uuid_to_bin"));
    };
    if !swap_flag(swap) {
        return Ok(Value::Bytes(b.to_vec()));
    }
    let mut out = Vec::with_capacity(16);
    out.extend_from_slice(&b[6..8]);
    out.extend_from_slice(&b[4..6]);
    out.extend_from_slice(&b[0..4]);
    out.extend_from_slice(&b[8..16]);
    Ok(Value::Bytes(out))
}

pub fn bin_to_uuid(v: &Value, swap: Option<&Value>) -> SqlResult<Value> {
    if v.is_null() {
        return Ok(Value::Null);
    }
    let b = val::bytes(v);
    if b.len() != 16 {
        return Err(bad_string(v, "bin_to_uuid"));
    }
    let b: Vec<u8> = if swap_flag(swap) {
        let mut o = Vec::with_capacity(16);
        o.extend_from_slice(&b[4..8]);
        o.extend_from_slice(&b[2..4]);
        o.extend_from_slice(&b[0..2]);
        o.extend_from_slice(&b[8..16]);
        o
    } else {
        b
    };
    let h = hex_lower(&b);
    Ok(Value::text(&format!(
        "{}-{}-{}-{}-{}",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digests() {
        assert_eq!(
            md5(&Value::text("testing")),
            Value::text("ae2b1fca515949e5d54fb22b8ed95575")
        );
        assert_eq!(
            sha1(&Value::text("abc")),
            Value::text("a9993e364706816aba3e25717850c26c9cd0d89d")
        );
        let u = Value::text("6ccd780c-baba-1026-9564-5b8c656024db");
        let b = uuid_to_bin(&u, Some(&Value::Int(1))).unwrap();
        assert_eq!(
            hex_lower(&val::bytes(&b)),
            "1026baba6ccd780c95645b8c656024db"
        );
        assert_eq!(bin_to_uuid(&b, Some(&Value::Int(1))).unwrap(), u);
    }
}
