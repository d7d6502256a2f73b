//! # Command phase: decoding client packets
//!
//! After authentication every exchange starts with one client packet whose
//! first byte names the command ([`crate::codec::com`]). [`decode_client_packet`]
//! turns such a payload into a [`Command`] that borrows from it; it never
//! panics, whatever the bytes (the fuzz test in this module feeds it random
//! data).
//!
//! COM_STMT_EXECUTE carries the parameters in the binary protocol:
//!
//! ```text
//!  17 | stmt_id int<4> | flags int<1> | iteration_count int<4> (= 1)
//!     | if params > 0:
//!     |   NULL bitmap, (params + 7) / 8 bytes, param i = bit i
//!     |   new_params_bound int<1>
//!     |   if 1: (type int<1>, flags int<1> [0x80 = unsigned]) x params
//!     |   values of the non-NULL params without long data, by type:
//!     |     TINY 1, SHORT/YEAR 2, LONG/INT24 4, LONGLONG 8 bytes,
//!     |     FLOAT 4, DOUBLE 8, DATE/DATETIME/TIMESTAMP length + fields,
//!     |     TIME length + (neg, days int<4>, h, m, s [, micro int<4>]),
//!     |     everything else string<lenenc>
//! ```
//!
//! The types are sent only when the client (re)binds; a later execution
//! with `new_params_bound = 0` reuses them, so the caller keeps them per
//! statement and passes them to [`decode_execute_params`]. Parameters fed
//! by COM_STMT_SEND_LONG_DATA have no bytes in the packet.

use quire_engine::types::{Date, DateTime, Decimal};
use quire_engine::Value;

use crate::codec::{com, ty, Reader};
use crate::error::ProtocolError;
pub use quire_sql::replicas::Replica;

/// One decoded client command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command<'a> {
    Quit,
    Ping,
    InitDb(&'a [u8]),
    Query(&'a [u8]),
    FieldList {
        table: &'a [u8],
        wildcard: &'a [u8],
    },
    Statistics,
    Debug,
    StmtPrepare(&'a [u8]),
    StmtExecute {
        stmt_id: u32,
        flags: u8,
        /// Everything after the iteration count.
        params: &'a [u8],
    },
    StmtSendLongData {
        stmt_id: u32,
        param: u16,
        data: &'a [u8],
    },
    StmtClose(u32),
    StmtReset(u32),
    StmtFetch(u32),
    SetOption(u16),
    ResetConnection,
    ChangeUser,
    /// COM_SHUTDOWN (mysqladmin shutdown).
    Shutdown,
    /// COM_PROCESS_INFO (= SHOW PROCESSLIST).
    ProcessInfo,
    /// COM_PROCESS_KILL (= KILL CONNECTION id).
    ProcessKill(u32),
    /// COM_REGISTER_SLAVE: a replica announces itself (SHOW REPLICAS).
    RegisterReplica(Replica),
    /// COM_BINLOG_DUMP: stream the binary log from a file and position.
    BinlogDump {
        pos: u32,
        flags: u16,
        server_id: u32,
        file: &'a [u8],
    },
    /// COM_BINLOG_DUMP_GTID: the replica's executed GTID set (MySQL's
    /// encoding, as in PREVIOUS_GTIDS) when `BINLOG_THROUGH_GTID` is set.
    BinlogDumpGtid {
        flags: u16,
        server_id: u32,
        file: &'a [u8],
        pos: u64,
        gtids: Option<&'a [u8]>,
    },
    /// Any other command byte (answered with ERR 1047).
    Unknown(u8),
}

/// `BINLOG_THROUGH_GTID`: COM_BINLOG_DUMP_GTID carries a GTID set.
pub const BINLOG_THROUGH_GTID: u16 = 0x04;

/// `BINLOG_DUMP_NON_BLOCK`: end the dump with EOF once caught up.
pub const BINLOG_DUMP_NON_BLOCK: u16 = 1;

/// Decodes a command-phase payload.
pub fn decode_client_packet(payload: &[u8]) -> Result<Command<'_>, ProtocolError> {
    let mut r = Reader::new(payload);
    let code = r
        .u8()
        .map_err(|_| ProtocolError::Malformed("empty command packet"))?;
    Ok(match code {
        com::QUIT => Command::Quit,
        com::PING => Command::Ping,
        com::INIT_DB => Command::InitDb(r.rest()),
        com::QUERY => Command::Query(r.rest()),
        com::FIELD_LIST => {
            let table = r.nul_str_or_rest();
            Command::FieldList {
                table,
                wildcard: r.rest(),
            }
        }
        com::STATISTICS => Command::Statistics,
        com::DEBUG => Command::Debug,
        com::STMT_PREPARE => Command::StmtPrepare(r.rest()),
        com::STMT_EXECUTE => {
            let stmt_id = r.u32()?;
            let flags = r.u8()?;
            let _iterations = r.u32()?;
            Command::StmtExecute {
                stmt_id,
                flags,
                params: r.rest(),
            }
        }
        com::STMT_SEND_LONG_DATA => Command::StmtSendLongData {
            stmt_id: r.u32()?,
            param: r.u16()?,
            data: r.rest(),
        },
        com::STMT_CLOSE => Command::StmtClose(r.u32()?),
        com::STMT_RESET => Command::StmtReset(r.u32()?),
        com::STMT_FETCH => Command::StmtFetch(r.u32()?),
        com::SET_OPTION => Command::SetOption(r.u16()?),
        com::RESET_CONNECTION => Command::ResetConnection,
        com::CHANGE_USER => Command::ChangeUser,
        com::SHUTDOWN => Command::Shutdown,
        com::PROCESS_INFO => Command::ProcessInfo,
        com::PROCESS_KILL => Command::ProcessKill(r.u32()?),
        com::REGISTER_SLAVE => {
            let server_id = r.u32()?;
            let short = |r: &mut Reader<'_>| -> Result<String, ProtocolError> {
                let n = r.u8()? as usize;
                Ok(String::from_utf8_lossy(r.bytes(n)?).into_owned())
            };
            let host = short(&mut r)?;
            let user = short(&mut r)?;
            let _password = short(&mut r)?;
            let port = r.u16()?;
            let _rank = r.u32()?;
            let source_id = r.u32()?;
            Command::RegisterReplica(Replica {
                server_id,
                host,
                user,
                port,
                source_id,
            })
        }
        com::BINLOG_DUMP => Command::BinlogDump {
            pos: r.u32()?,
            flags: r.u16()?,
            server_id: r.u32()?,
            file: r.rest(),
        },
        com::BINLOG_DUMP_GTID => {
            let flags = r.u16()?;
            let server_id = r.u32()?;
            let n = r.u32()? as usize;
            let file = r.bytes(n)?;
            let pos = r.u64()?;
            let gtids = if flags & BINLOG_THROUGH_GTID != 0 {
                let n = r.u32()? as usize;
                Some(r.bytes(n)?)
            } else {
                None
            };
            Command::BinlogDumpGtid {
                flags,
                server_id,
                file,
                pos,
                gtids,
            }
        }
        other => Command::Unknown(other),
    })
}

/// Why the parameters of an execution could not be decoded.
#[derive(Debug, PartialEq, Eq)]
pub enum ParamError {
    /// The packet does not parse (the connection is closed).
    Malformed(&'static str),
    /// No parameter types were ever bound (ERR 1210, connection stays).
    NoTypes,
}

impl From<ProtocolError> for ParamError {
    fn from(e: ProtocolError) -> Self {
        match e {
            ProtocolError::Malformed(m) => ParamError::Malformed(m),
            _ => ParamError::Malformed("bad parameter data"),
        }
    }
}

/// Decodes the parameters of a COM_STMT_EXECUTE (`data` = the `params`
/// field of [`Command::StmtExecute`]). `types` holds the (type, flags)
/// bound by an earlier execution and is updated when the packet rebinds;
/// `long_data[i]`, when present, is the value of parameter `i` (taken).
pub fn decode_execute_params(
    data: &[u8],
    count: usize,
    types: &mut Vec<(u8, u8)>,
    long_data: &mut [Option<Vec<u8>>],
) -> Result<Vec<Value>, ParamError> {
    if count == 0 {
        return Ok(Vec::new());
    }
    let mut r = Reader::new(data);
    let bitmap = r.bytes(count.div_ceil(8))?;
    let rebound = r.u8()?;
    if rebound == 1 {
        types.clear();
        for _ in 0..count {
            let t = r.u8()?;
            let f = r.u8()?;
            types.push((t, f));
        }
    } else if types.len() != count {
        return Err(ParamError::NoTypes);
    }
    let mut values = Vec::with_capacity(count);
    for (i, &(t, f)) in types.iter().enumerate() {
        if let Some(data) = long_data.get_mut(i).and_then(Option::take) {
            values.push(Value::Bytes(data));
            continue;
        }
        if bitmap[i / 8] & (1 << (i % 8)) != 0 || t == ty::NULL {
            values.push(Value::Null);
            continue;
        }
        values.push(decode_param(&mut r, t, f & 0x80 != 0)?);
    }
    Ok(values)
}

fn decode_param(r: &mut Reader<'_>, t: u8, unsigned: bool) -> Result<Value, ProtocolError> {
    let int = |v: i64, u: u64| {
        if unsigned {
            Value::UInt(u)
        } else {
            Value::Int(v)
        }
    };
    Ok(match t {
        ty::TINY => {
            let b = r.u8()?;
            int(i64::from(b as i8), u64::from(b))
        }
        ty::SHORT | ty::YEAR => {
            let v = r.u16()?;
            int(i64::from(v as i16), u64::from(v))
        }
        ty::LONG | ty::INT24 => {
            let v = r.u32()?;
            int(i64::from(v as i32), u64::from(v))
        }
        ty::LONGLONG => {
            let v = r.u64()?;
            int(v as i64, v)
        }
        ty::FLOAT => {
            let b = r.bytes(4)?;
            Value::Double(f64::from(f32::from_le_bytes([b[0], b[1], b[2], b[3]])))
        }
        ty::DOUBLE => Value::Double(f64::from_bits(r.u64()?)),
        ty::DATE | ty::DATETIME | ty::TIMESTAMP | ty::NEWDATE => decode_datetime(r, t)?,
        ty::TIME => decode_time(r)?,
        ty::DECIMAL | ty::NEWDECIMAL => {
            let s = r.lenenc_str()?;
            match Decimal::parse_prefix(s) {
                Ok(p) if p.consumed == s.len() && !p.lost_digits => Value::Decimal(p.value),
                _ => Value::Bytes(s.to_vec()),
            }
        }
        _ => Value::Bytes(r.lenenc_str()?.to_vec()),
    })
}

fn decode_datetime(r: &mut Reader<'_>, t: u8) -> Result<Value, ProtocolError> {
    let len = r.u8()?;
    let body = r.bytes(len as usize)?;
    let mut b = Reader::new(body);
    let (mut year, mut month, mut day, mut h, mut m, mut s, mut us) =
        (0u32, 0u32, 0u32, 0, 0, 0, 0u32);
    match len {
        0 => {}
        4 | 7 | 11 => {
            year = u32::from(b.u16()?);
            month = u32::from(b.u8()?);
            day = u32::from(b.u8()?);
            if len >= 7 {
                h = u32::from(b.u8()?);
                m = u32::from(b.u8()?);
                s = u32::from(b.u8()?);
            }
            if len == 11 {
                us = b.u32()?;
            }
        }
        _ => return Err(ProtocolError::Malformed("bad temporal parameter length")),
    }
    let is_date = t == ty::DATE || t == ty::NEWDATE;
    if is_date {
        if let Some(d) = Date::new(year, month, day) {
            return Ok(Value::Date(d));
        }
        return Ok(Value::Bytes(
            format!("{year:04}-{month:02}-{day:02}").into_bytes(),
        ));
    }
    if let Some(dt) = DateTime::new(year, month, day, h, m, s, us) {
        return Ok(Value::DateTime(dt));
    }
    // Zero or invalid dates travel as text so the SQL layer reports them
    // with MySQL's error for the column.
    let mut text = format!("{year:04}-{month:02}-{day:02} {h:02}:{m:02}:{s:02}");
    if us != 0 {
        text.push_str(&format!(".{us:06}"));
    }
    Ok(Value::Bytes(text.into_bytes()))
}

fn decode_time(r: &mut Reader<'_>) -> Result<Value, ProtocolError> {
    let len = r.u8()?;
    let body = r.bytes(len as usize)?;
    let mut b = Reader::new(body);
    let text = match len {
        0 => "00:00:00".to_string(),
        8 | 12 => {
            let neg = b.u8()? != 0;
            let days = u64::from(b.u32()?);
            let h = u64::from(b.u8()?) + days * 24;
            let m = b.u8()?;
            let s = b.u8()?;
            let mut t = format!("{}{h:02}:{m:02}:{s:02}", if neg { "-" } else { "" });
            if len == 12 {
                let us = b.u32()?;
                t.push_str(&format!(".{us:06}"));
            }
            t
        }
        _ => return Err(ProtocolError::Malformed("bad TIME parameter length")),
    };
    Ok(Value::Bytes(text.into_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::put_lenenc_str;

    #[test]
    fn decodes_commands() {
        assert_eq!(decode_client_packet(&[1]).unwrap(), Command::Quit);
        assert_eq!(
            decode_client_packet(b"\x03SELECT 1").unwrap(),
            Command::Query(b"SELECT 1")
        );
        assert_eq!(
            decode_client_packet(b"\x04t1\0%").unwrap(),
            Command::FieldList {
                table: b"t1",
                wildcard: b"%"
            }
        );
        assert_eq!(
            decode_client_packet(&[0x19, 5, 0, 0, 0]).unwrap(),
            Command::StmtClose(5)
        );
        assert_eq!(
            decode_client_packet(&[0x99]).unwrap(),
            Command::Unknown(0x99)
        );
        assert!(decode_client_packet(&[]).is_err());
        assert!(decode_client_packet(&[0x17, 1, 0]).is_err());
    }

    #[test]
    fn decodes_execute_params_and_remembers_types() {
        // 4 params: LONGLONG unsigned, VAR_STRING, NULL (bitmap), DATETIME.
        let mut p = vec![0b0000_0100, 1];
        for (t, f) in [
            (ty::LONGLONG, 0x80),
            (ty::VAR_STRING, 0),
            (ty::LONG, 0),
            (ty::DATETIME, 0),
        ] {
            p.push(t);
            p.push(f);
        }
        p.extend_from_slice(&u64::MAX.to_le_bytes());
        put_lenenc_str(&mut p, b"abc");
        p.extend_from_slice(&[7, 0xE8, 0x07, 12, 31, 23, 59, 58]);
        let mut types = Vec::new();
        let mut long = vec![None; 4];
        let v = decode_execute_params(&p, 4, &mut types, &mut long).unwrap();
        assert_eq!(v[0], Value::UInt(u64::MAX));
        assert_eq!(v[1], Value::text("abc"));
        assert_eq!(v[2], Value::Null);
        assert_eq!(
            v[3],
            Value::DateTime(DateTime::new(2024, 12, 31, 23, 59, 58, 0).unwrap())
        );
        // Second execution without rebinding; param 1 from long data.
        let mut p2 = vec![0, 0];
        p2.extend_from_slice(&5u64.to_le_bytes());
        p2.extend_from_slice(&9i32.to_le_bytes());
        p2.extend_from_slice(&[4, 0xE8, 0x07, 1, 2]);
        long[1] = Some(b"long".to_vec());
        let v = decode_execute_params(&p2, 4, &mut types, &mut long).unwrap();
        assert_eq!(
            v,
            vec![
                Value::UInt(5),
                Value::text("long"),
                Value::Int(9),
                Value::DateTime(DateTime::new(2024, 1, 2, 0, 0, 0, 0).unwrap()),
            ]
        );
        assert!(long[1].is_none(), "long data is consumed");
        // Never bound: NoTypes.
        let mut empty = Vec::new();
        assert_eq!(
            decode_execute_params(&[0, 0], 1, &mut empty, &mut [None]),
            Err(ParamError::NoTypes)
        );
    }

    #[test]
    fn decodes_numeric_and_temporal_params() {
        let one = |t: u8, f: u8, bytes: &[u8]| {
            let mut p = vec![0, 1, t, f];
            p.extend_from_slice(bytes);
            decode_execute_params(&p, 1, &mut Vec::new(), &mut [None]).map(|mut v| v.remove(0))
        };
        assert_eq!(one(ty::TINY, 0, &[0xFF]), Ok(Value::Int(-1)));
        assert_eq!(one(ty::TINY, 0x80, &[0xFF]), Ok(Value::UInt(255)));
        assert_eq!(
            one(ty::SHORT, 0, &(-300i16).to_le_bytes()),
            Ok(Value::Int(-300))
        );
        assert_eq!(
            one(ty::LONG, 0x80, &u32::MAX.to_le_bytes()),
            Ok(Value::UInt(4294967295))
        );
        assert_eq!(
            one(ty::DOUBLE, 0, &1.25f64.to_le_bytes()),
            Ok(Value::Double(1.25))
        );
        assert_eq!(
            one(ty::FLOAT, 0, &0.5f32.to_le_bytes()),
            Ok(Value::Double(0.5))
        );
        assert_eq!(
            one(ty::DATE, 0, &[4, 0xE8, 0x07, 2, 29]),
            Ok(Value::Date(Date::new(2024, 2, 29).unwrap()))
        );
        assert_eq!(
            one(ty::DATETIME, 0, &[0]),
            Ok(Value::text("0000-00-00 00:00:00"))
        );
        assert_eq!(
            one(ty::TIME, 0, &[8, 1, 1, 0, 0, 0, 2, 3, 4]),
            Ok(Value::text("-26:03:04"))
        );
        let mut dec = Vec::new();
        put_lenenc_str(&mut dec, b"-12.345");
        match one(ty::NEWDECIMAL, 0, &dec) {
            Ok(Value::Decimal(d)) => assert_eq!(d.to_string(), "-12.345"),
            other => panic!("{other:?}"),
        }
        assert!(one(ty::LONGLONG, 0, &[1, 2]).is_err());
        assert!(one(ty::DATETIME, 0, &[5, 1, 2, 3, 4, 5]).is_err());
    }

    /// Random bytes through every decoder: errors are fine, panics are not.
    #[test]
    fn fuzz_decoders_never_panic() {
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for _ in 0..200_000 {
            let len = (next() % 64) as usize;
            let mut buf: Vec<u8> = (0..len).map(|_| next() as u8).collect();
            if !buf.is_empty() && next() % 2 == 0 {
                buf[0] =
                    [0x01, 0x03, 0x04, 0x16, 0x17, 0x18, 0x19, 0x1a, 0x1b][(next() % 9) as usize];
            }
            if let Ok(Command::StmtExecute { params, .. }) = decode_client_packet(&buf) {
                let n = (next() % 12) as usize;
                let mut types = Vec::new();
                let mut long = vec![None; n];
                let _ = decode_execute_params(params, n, &mut types, &mut long);
            }
            let n = (next() % 12) as usize;
            let mut types: Vec<(u8, u8)> = (0..n).map(|_| (next() as u8, next() as u8)).collect();
            let _ = decode_execute_params(&buf, n, &mut types, &mut vec![None; n]);
            let _ = crate::handshake::parse_handshake_response(&buf);
            let mut r = crate::packet::PacketReader::new(std::io::Cursor::new(&buf), 1 << 10);
            let mut out = Vec::new();
            while r.read_packet(&mut out).is_ok() {}
        }
    }
}
