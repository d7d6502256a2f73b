//! # Wire primitives: integers, length-encoded values, protocol constants
//!
//! Every MySQL packet payload is built from a handful of primitives, all
//! little-endian:
//!
//! ```text
//!  int<1> int<2> int<3> int<4> int<8>    fixed-width little-endian integers
//!
//!  int<lenenc>  first byte   value
//!               0x00..0xFA   the byte itself (0..250)
//!               0xFB         NULL (only in text result rows)
//!               0xFC         next 2 bytes
//!               0xFD         next 3 bytes
//!               0xFE         next 8 bytes
//!               0xFF         invalid (it starts an ERR packet)
//!
//!  string<lenenc>  int<lenenc> length, then that many bytes
//!  string<NUL>     bytes up to a 0x00 terminator
//!  string<EOF>     the rest of the payload
//! ```
//!
//! [`Reader`] decodes these from an untrusted payload: every read is bounds
//! checked and returns [`ProtocolError::Malformed`] rather than panicking,
//! which is what lets the fuzz test feed it arbitrary bytes. The `put_*`
//! functions append encodings to a `Vec<u8>`.

use crate::error::ProtocolError;

/// Capability flags (`CLIENT_*`).
pub mod cap {
    pub const LONG_PASSWORD: u32 = 1;
    pub const FOUND_ROWS: u32 = 1 << 1;
    pub const LONG_FLAG: u32 = 1 << 2;
    pub const CONNECT_WITH_DB: u32 = 1 << 3;
    pub const NO_SCHEMA: u32 = 1 << 4;
    pub const COMPRESS: u32 = 1 << 5;
    pub const ODBC: u32 = 1 << 6;
    pub const LOCAL_FILES: u32 = 1 << 7;
    pub const IGNORE_SPACE: u32 = 1 << 8;
    pub const PROTOCOL_41: u32 = 1 << 9;
    pub const INTERACTIVE: u32 = 1 << 10;
    pub const SSL: u32 = 1 << 11;
    pub const IGNORE_SIGPIPE: u32 = 1 << 12;
    pub const TRANSACTIONS: u32 = 1 << 13;
    pub const RESERVED: u32 = 1 << 14;
    pub const SECURE_CONNECTION: u32 = 1 << 15;
    pub const MULTI_STATEMENTS: u32 = 1 << 16;
    pub const MULTI_RESULTS: u32 = 1 << 17;
    pub const PS_MULTI_RESULTS: u32 = 1 << 18;
    pub const PLUGIN_AUTH: u32 = 1 << 19;
    pub const CONNECT_ATTRS: u32 = 1 << 20;
    pub const PLUGIN_AUTH_LENENC_CLIENT_DATA: u32 = 1 << 21;
    pub const CAN_HANDLE_EXPIRED_PASSWORDS: u32 = 1 << 22;
    pub const SESSION_TRACK: u32 = 1 << 23;
    pub const DEPRECATE_EOF: u32 = 1 << 24;

    /// What quire advertises in its handshake: no SSL, no compression, no
    /// LOAD DATA LOCAL, no session tracking.
    pub const SERVER: u32 = LONG_PASSWORD
        | FOUND_ROWS
        | LONG_FLAG
        | CONNECT_WITH_DB
        | NO_SCHEMA
        | ODBC
        | IGNORE_SPACE
        | PROTOCOL_41
        | INTERACTIVE
        | IGNORE_SIGPIPE
        | TRANSACTIONS
        | RESERVED
        | SECURE_CONNECTION
        | MULTI_STATEMENTS
        | MULTI_RESULTS
        | PS_MULTI_RESULTS
        | PLUGIN_AUTH
        | CONNECT_ATTRS
        | PLUGIN_AUTH_LENENC_CLIENT_DATA
        | CAN_HANDLE_EXPIRED_PASSWORDS
        | DEPRECATE_EOF;
}

/// Server status flags (`SERVER_STATUS_*`) of OK and EOF packets.
pub mod status {
    pub const IN_TRANS: u16 = 1;
    pub const AUTOCOMMIT: u16 = 2;
    pub const MORE_RESULTS_EXISTS: u16 = 8;
}

/// Command bytes (`COM_*`): the first byte of every command-phase packet.
pub mod com {
    pub const SLEEP: u8 = 0x00;
    pub const QUIT: u8 = 0x01;
    pub const INIT_DB: u8 = 0x02;
    pub const QUERY: u8 = 0x03;
    pub const FIELD_LIST: u8 = 0x04;
    pub const SHUTDOWN: u8 = 0x08;
    pub const STATISTICS: u8 = 0x09;
    pub const PROCESS_INFO: u8 = 0x0a;
    pub const PROCESS_KILL: u8 = 0x0c;
    pub const DEBUG: u8 = 0x0d;
    pub const PING: u8 = 0x0e;
    pub const CHANGE_USER: u8 = 0x11;
    pub const BINLOG_DUMP: u8 = 0x12;
    pub const REGISTER_SLAVE: u8 = 0x15;
    pub const STMT_PREPARE: u8 = 0x16;
    pub const STMT_EXECUTE: u8 = 0x17;
    pub const STMT_SEND_LONG_DATA: u8 = 0x18;
    pub const STMT_CLOSE: u8 = 0x19;
    pub const STMT_RESET: u8 = 0x1a;
    pub const SET_OPTION: u8 = 0x1b;
    pub const STMT_FETCH: u8 = 0x1c;
    pub const BINLOG_DUMP_GTID: u8 = 0x1e;
    pub const RESET_CONNECTION: u8 = 0x1f;
}

/// Column type codes (`MYSQL_TYPE_*`).
pub mod ty {
    pub const DECIMAL: u8 = 0;
    pub const TINY: u8 = 1;
    pub const SHORT: u8 = 2;
    pub const LONG: u8 = 3;
    pub const FLOAT: u8 = 4;
    pub const DOUBLE: u8 = 5;
    pub const NULL: u8 = 6;
    pub const TIMESTAMP: u8 = 7;
    pub const LONGLONG: u8 = 8;
    pub const INT24: u8 = 9;
    pub const DATE: u8 = 10;
    pub const TIME: u8 = 11;
    pub const DATETIME: u8 = 12;
    pub const YEAR: u8 = 13;
    pub const NEWDATE: u8 = 14;
    pub const VARCHAR: u8 = 15;
    pub const BIT: u8 = 16;
    pub const JSON: u8 = 245;
    pub const NEWDECIMAL: u8 = 246;
    pub const ENUM: u8 = 247;
    pub const SET: u8 = 248;
    pub const TINY_BLOB: u8 = 249;
    pub const MEDIUM_BLOB: u8 = 250;
    pub const LONG_BLOB: u8 = 251;
    pub const BLOB: u8 = 252;
    pub const VAR_STRING: u8 = 253;
    pub const STRING: u8 = 254;
    pub const GEOMETRY: u8 = 255;
}

/// Column definition flags (`*_FLAG`).
pub mod flag {
    pub const NOT_NULL: u16 = 1;
    pub const BLOB: u16 = 16;
    pub const UNSIGNED: u16 = 32;
    pub const ZEROFILL: u16 = 64;
    pub const BINARY: u16 = 128;
    pub const ENUM: u16 = 256;
    pub const SET: u16 = 2048;
    pub const NUM: u16 = 32768;
}

/// Character set numbers used in column definitions and the handshake.
pub mod charset {
    /// `utf8mb4_0900_ai_ci`, MySQL 8.0's default.
    pub const UTF8MB4: u16 = 255;
    /// `binary`.
    pub const BINARY: u16 = 63;
}

/// Appends an `int<lenenc>` (the same encoding as the binary log's packed
/// integers, so one implementation serves both).
pub fn put_lenenc_int(out: &mut Vec<u8>, v: u64) {
    quire_engine::binlog::format::put_packed_int(out, v)
}

/// Appends a `string<lenenc>`.
pub fn put_lenenc_str(out: &mut Vec<u8>, s: &[u8]) {
    put_lenenc_int(out, s.len() as u64);
    out.extend_from_slice(s);
}

/// Appends a `string<NUL>` (the bytes must not contain 0x00).
pub fn put_nul_str(out: &mut Vec<u8>, s: &[u8]) {
    out.extend_from_slice(s);
    out.push(0);
}

/// A bounds-checked cursor over an untrusted payload.
#[derive(Debug, Clone)]
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

const SHORT: ProtocolError = ProtocolError::Malformed("packet too short");

impl<'a> Reader<'a> {
    pub fn new(buf: &'a [u8]) -> Reader<'a> {
        Reader { buf, pos: 0 }
    }
    /// Bytes not yet read.
    pub fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }
    pub fn is_empty(&self) -> bool {
        self.remaining() == 0
    }
    /// The next `n` bytes.
    pub fn bytes(&mut self, n: usize) -> Result<&'a [u8], ProtocolError> {
        if n > self.remaining() {
            return Err(SHORT);
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }
    pub fn u8(&mut self) -> Result<u8, ProtocolError> {
        Ok(self.bytes(1)?[0])
    }
    pub fn u16(&mut self) -> Result<u16, ProtocolError> {
        let b = self.bytes(2)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }
    pub fn u24(&mut self) -> Result<u32, ProtocolError> {
        let b = self.bytes(3)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], 0]))
    }
    pub fn u32(&mut self) -> Result<u32, ProtocolError> {
        let b = self.bytes(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    pub fn u64(&mut self) -> Result<u64, ProtocolError> {
        let b = self.bytes(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_le_bytes(a))
    }
    /// An `int<lenenc>`; 0xFB (NULL) and 0xFF are refused.
    pub fn lenenc_int(&mut self) -> Result<u64, ProtocolError> {
        match self.u8()? {
            v @ 0..=0xFA => Ok(u64::from(v)),
            0xFC => Ok(u64::from(self.u16()?)),
            0xFD => Ok(u64::from(self.u24()?)),
            0xFE => self.u64(),
            _ => Err(ProtocolError::Malformed("bad length-encoded integer")),
        }
    }
    /// A `string<lenenc>`.
    pub fn lenenc_str(&mut self) -> Result<&'a [u8], ProtocolError> {
        let n = self.lenenc_int()?;
        let n = usize::try_from(n).map_err(|_| SHORT)?;
        self.bytes(n)
    }
    /// A `string<NUL>` (the terminator is consumed, not returned).
    pub fn nul_str(&mut self) -> Result<&'a [u8], ProtocolError> {
        let rest = &self.buf[self.pos..];
        let n = rest
            .iter()
            .position(|&b| b == 0)
            .ok_or(ProtocolError::Malformed("missing NUL terminator"))?;
        self.pos += n + 1;
        Ok(&rest[..n])
    }
    /// A `string<NUL>` whose terminator may be missing at the end of the
    /// payload (some clients omit it on the last field).
    pub fn nul_str_or_rest(&mut self) -> &'a [u8] {
        let rest = &self.buf[self.pos..];
        match rest.iter().position(|&b| b == 0) {
            Some(n) => {
                self.pos += n + 1;
                &rest[..n]
            }
            None => {
                self.pos = self.buf.len();
                rest
            }
        }
    }
    /// `string<EOF>`.
    pub fn rest(&mut self) -> &'a [u8] {
        let rest = &self.buf[self.pos..];
        self.pos = self.buf.len();
        rest
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lenenc_int_round_trip() {
        for v in [
            0u64,
            1,
            250,
            251,
            252,
            0xFFFF,
            0x1_0000,
            0xFF_FFFF,
            0x100_0000,
            u64::MAX,
        ] {
            let mut out = Vec::new();
            put_lenenc_int(&mut out, v);
            let expected_len = match v {
                0..=250 => 1,
                251..=0xFFFF => 3,
                0x1_0000..=0xFF_FFFF => 4,
                _ => 9,
            };
            assert_eq!(out.len(), expected_len, "{v}");
            let mut r = Reader::new(&out);
            assert_eq!(r.lenenc_int().unwrap(), v);
            assert!(r.is_empty());
        }
        // Known encodings from the protocol documentation.
        let mut out = Vec::new();
        put_lenenc_int(&mut out, 0x1234);
        assert_eq!(out, [0xFC, 0x34, 0x12]);
        out.clear();
        put_lenenc_int(&mut out, 0x123456);
        assert_eq!(out, [0xFD, 0x56, 0x34, 0x12]);
        assert!(Reader::new(&[0xFB]).lenenc_int().is_err());
        assert!(Reader::new(&[0xFF]).lenenc_int().is_err());
        assert!(Reader::new(&[0xFE, 1, 2]).lenenc_int().is_err());
    }

    #[test]
    fn lenenc_and_nul_strings() {
        let mut out = Vec::new();
        put_lenenc_str(&mut out, b"hello");
        put_nul_str(&mut out, b"world");
        put_lenenc_str(&mut out, &vec![b'x'; 300]);
        out.extend_from_slice(b"tail");
        let mut r = Reader::new(&out);
        assert_eq!(r.lenenc_str().unwrap(), b"hello");
        assert_eq!(r.nul_str().unwrap(), b"world");
        assert_eq!(r.lenenc_str().unwrap().len(), 300);
        assert_eq!(r.rest(), b"tail");
        assert!(r.nul_str().is_err());
        // A length pointing past the end is an error, not a panic.
        assert!(Reader::new(&[5, b'a']).lenenc_str().is_err());
        assert!(
            Reader::new(&[0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF])
                .lenenc_str()
                .is_err()
        );
    }
}
