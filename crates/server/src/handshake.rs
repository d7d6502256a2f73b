//! # Connection phase: Handshake V10 and HandshakeResponse41
//!
//! ```text
//!  server                                   client
//!    |-- Handshake V10 (seq 0) ---------------->|
//!    |<------------- HandshakeResponse41 (seq 1)|
//!    |   [client plugin != mysql_native_password]
//!    |-- AuthSwitchRequest (seq 2) ------------>|
//!    |<-------------------- auth token (seq 3) -|
//!    |-- OK | ERR 1045 (seq 2 or 4) ----------->|
//! ```
//!
//! Handshake V10 payload:
//!
//! ```text
//!  int<1>    10                         protocol version
//!  str<NUL>  "8.0.36-quire"             server version
//!  int<4>    connection id
//!  8 bytes   scramble[0..8]
//!  int<1>    0                          filler
//!  int<2>    capabilities & 0xFFFF
//!  int<1>    255                        utf8mb4_0900_ai_ci
//!  int<2>    status flags (AUTOCOMMIT)
//!  int<2>    capabilities >> 16
//!  int<1>    21                         scramble length + 1
//!  10 bytes  0                          reserved
//!  13 bytes  scramble[8..20] + NUL
//!  str<NUL>  "mysql_native_password"
//! ```
//!
//! HandshakeResponse41 payload (fields after `username` depend on the
//! client's capabilities):
//!
//! ```text
//!  int<4>    client capabilities
//!  int<4>    max packet size
//!  int<1>    character set
//!  23 bytes  0
//!  str<NUL>  username
//!  auth      PLUGIN_AUTH_LENENC_CLIENT_DATA: str<lenenc>
//!            SECURE_CONNECTION:             int<1> length + bytes
//!            otherwise:                     str<NUL>
//!  str<NUL>  database                      if CONNECT_WITH_DB
//!  str<NUL>  auth plugin name              if PLUGIN_AUTH
//!  lenenc    connection attributes         if CONNECT_ATTRS
//! ```
//!
//! A 32-byte response with `CLIENT_SSL` is an SSLRequest: the connection
//! switches to TLS there (`tls.rs`, `conn/login.rs`) and the real
//! response follows inside TLS with sequence id 2. The server advertises
//! `CLIENT_SSL` when TLS is set up and names `default_authentication_plugin`
//! (caching_sha2_password unless configured otherwise); the diagrams
//! of both plugins' exchanges are in `conn/login.rs` and
//! `sha2_password.rs`.

use crate::auth::SCRAMBLE_LEN;
use crate::codec::{cap, charset, put_nul_str, status, Reader};
use crate::error::ProtocolError;

/// The version string clients see (`SELECT VERSION()` is the SQL layer's).
pub const SERVER_VERSION: &str = "8.0.36-quire";
/// The only authentication method quire verifies.
pub const NATIVE_PLUGIN: &str = "mysql_native_password";

/// Appends the Handshake V10 payload (no TLS, mysql_native_password).
pub fn write_handshake(out: &mut Vec<u8>, conn_id: u32, scramble: &[u8; SCRAMBLE_LEN]) {
    write_handshake_with(out, conn_id, scramble, cap::SERVER, NATIVE_PLUGIN);
}

/// Appends the Handshake V10 payload with `caps` (the server adds
/// `CLIENT_SSL` when TLS is set up) naming `plugin`
/// (`default_authentication_plugin`).
pub fn write_handshake_with(
    out: &mut Vec<u8>,
    conn_id: u32,
    scramble: &[u8; SCRAMBLE_LEN],
    caps: u32,
    plugin: &str,
) {
    out.push(10);
    put_nul_str(out, SERVER_VERSION.as_bytes());
    out.extend_from_slice(&conn_id.to_le_bytes());
    out.extend_from_slice(&scramble[..8]);
    out.push(0);
    out.extend_from_slice(&((caps & 0xFFFF) as u16).to_le_bytes());
    out.push(charset::UTF8MB4 as u8);
    out.extend_from_slice(&status::AUTOCOMMIT.to_le_bytes());
    out.extend_from_slice(&((caps >> 16) as u16).to_le_bytes());
    out.push(SCRAMBLE_LEN as u8 + 1);
    out.extend_from_slice(&[0u8; 10]);
    out.extend_from_slice(&scramble[8..]);
    out.push(0);
    put_nul_str(out, plugin.as_bytes());
}

/// Appends an AuthSwitchRequest to `mysql_native_password`.
pub fn write_auth_switch(out: &mut Vec<u8>, scramble: &[u8; SCRAMBLE_LEN]) {
    out.push(0xFE);
    put_nul_str(out, NATIVE_PLUGIN.as_bytes());
    out.extend_from_slice(scramble);
    out.push(0);
}

/// A parsed HandshakeResponse41.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HandshakeResponse {
    /// Client capabilities (not yet intersected with the server's).
    pub capabilities: u32,
    pub max_packet: u32,
    pub charset: u8,
    pub user: String,
    pub auth_response: Vec<u8>,
    pub database: Option<String>,
    /// Empty when the client did not name one.
    pub plugin: String,
    pub attrs: Vec<(String, String)>,
}

/// Parses a HandshakeResponse41 payload.
pub fn parse_handshake_response(payload: &[u8]) -> Result<HandshakeResponse, ProtocolError> {
    let mut r = Reader::new(payload);
    let caps = r.u32()?;
    if caps & cap::PROTOCOL_41 == 0 {
        return Err(ProtocolError::Malformed("pre-4.1 handshake response"));
    }
    let max_packet = r.u32()?;
    let charset = r.u8()?;
    r.bytes(23)?;
    if caps & cap::SSL != 0 && r.is_empty() {
        return Err(ProtocolError::Malformed("SSL requested but not offered"));
    }
    let user = lossy(r.nul_str()?);
    let auth_response = if caps & cap::PLUGIN_AUTH_LENENC_CLIENT_DATA != 0 {
        r.lenenc_str()?.to_vec()
    } else if caps & cap::SECURE_CONNECTION != 0 {
        let n = r.u8()? as usize;
        r.bytes(n)?.to_vec()
    } else {
        r.nul_str_or_rest().to_vec()
    };
    let mut database = None;
    if caps & cap::CONNECT_WITH_DB != 0 && !r.is_empty() {
        let db = r.nul_str_or_rest();
        if !db.is_empty() {
            database = Some(lossy(db));
        }
    }
    let mut plugin = String::new();
    if caps & cap::PLUGIN_AUTH != 0 && !r.is_empty() {
        plugin = lossy(r.nul_str_or_rest());
    }
    let mut attrs = Vec::new();
    if caps & cap::CONNECT_ATTRS != 0 && !r.is_empty() {
        let all = r.lenenc_str()?;
        let mut a = Reader::new(all);
        while !a.is_empty() {
            let k = lossy(a.lenenc_str()?);
            let v = lossy(a.lenenc_str()?);
            attrs.push((k, v));
        }
    }
    Ok(HandshakeResponse {
        capabilities: caps,
        max_packet,
        charset,
        user,
        auth_response,
        database,
        plugin,
        attrs,
    })
}

fn lossy(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::put_lenenc_str;

    #[test]
    fn handshake_layout() {
        let scramble = *b"abcdefghijklmnopqrst";
        let mut out = Vec::new();
        write_handshake(&mut out, 42, &scramble);
        let mut r = Reader::new(&out);
        assert_eq!(r.u8().unwrap(), 10);
        assert_eq!(r.nul_str().unwrap(), SERVER_VERSION.as_bytes());
        assert_eq!(r.u32().unwrap(), 42);
        assert_eq!(r.bytes(8).unwrap(), b"abcdefgh");
        assert_eq!(r.u8().unwrap(), 0);
        let lo = r.u16().unwrap() as u32;
        assert_eq!(r.u8().unwrap(), 255);
        assert_eq!(r.u16().unwrap(), status::AUTOCOMMIT);
        let hi = r.u16().unwrap() as u32;
        let caps = lo | hi << 16;
        assert_eq!(caps, cap::SERVER);
        assert_eq!(caps & cap::SSL, 0);
        assert_eq!(r.u8().unwrap(), 21);
        assert_eq!(r.bytes(10).unwrap(), &[0u8; 10]);
        assert_eq!(r.nul_str().unwrap(), b"ijklmnopqrst");
        assert_eq!(r.nul_str().unwrap(), NATIVE_PLUGIN.as_bytes());
        assert!(r.is_empty());
    }

    #[test]
    fn response_parses_all_fields() {
        let caps = cap::PROTOCOL_41
            | cap::SECURE_CONNECTION
            | cap::PLUGIN_AUTH
            | cap::PLUGIN_AUTH_LENENC_CLIENT_DATA
            | cap::CONNECT_WITH_DB
            | cap::CONNECT_ATTRS;
        let mut p = Vec::new();
        p.extend_from_slice(&caps.to_le_bytes());
        p.extend_from_slice(&(1u32 << 24).to_le_bytes());
        p.push(45);
        p.extend_from_slice(&[0; 23]);
        put_nul_str(&mut p, b"bob");
        put_lenenc_str(&mut p, &[7u8; 20]);
        put_nul_str(&mut p, b"sbtest");
        put_nul_str(&mut p, b"caching_sha2_password");
        let mut attrs = Vec::new();
        put_lenenc_str(&mut attrs, b"_client_name");
        put_lenenc_str(&mut attrs, b"libmariadb");
        put_lenenc_str(&mut p, &attrs);
        let r = parse_handshake_response(&p).unwrap();
        assert_eq!(r.user, "bob");
        assert_eq!(r.auth_response, vec![7u8; 20]);
        assert_eq!(r.database.as_deref(), Some("sbtest"));
        assert_eq!(r.plugin, "caching_sha2_password");
        assert_eq!(r.attrs, vec![("_client_name".into(), "libmariadb".into())]);
        assert_eq!(r.charset, 45);
        // Every truncation is an error or a shorter parse, never a panic.
        for n in 0..p.len() {
            let _ = parse_handshake_response(&p[..n]);
        }
    }
}
