//! # The replica's side of the wire: a minimal MySQL client
//!
//! A replica logs in to its source as an ordinary client, asks a few
//! questions, registers, and then reads the binary log as a stream of
//! packets:
//!
//! ```text
//!   replica                                   source
//!     │ <──────────── handshake V10 (scramble, plugin) ──────│
//!     │ ── HandshakeResponse41 (user, token, plugin) ──────> │
//!     │ <──── [auth switch | caching_sha2 fast/full] ─────── │
//!     │ <──────────────────── OK ─────────────────────────── │
//!     │ ── COM_QUERY SET @master_binlog_checksum=... ──────> │ (and the others)
//!     │ ── COM_REGISTER_SLAVE ─────────────────────────────> │
//!     │ ── COM_BINLOG_DUMP(file, pos) ─────────────────────> │
//!     │ <──── 0x00 + event, 0x00 + event, ... (no end) ───── │
//! ```
//!
//! Only what a replica needs is here: no TLS (a source that requires it
//! is refused with an error naming SOURCE_SSL), no prepared statements,
//! text results read as strings. Authentication: mysql_native_password
//! and caching_sha2_password (fast path, and the full path with the
//! source's RSA public key, as GET_SOURCE_PUBLIC_KEY=1 asks). Every read
//! is bounded by `max_packet_bytes` and a read timeout (the heartbeat
//! period keeps an idle stream alive).

use std::io;
use std::net::{Shutdown, TcpStream, ToSocketAddrs};
use std::time::Duration;

use crate::auth::native_password_token;
use crate::codec::{cap, com, put_nul_str, Reader};
use crate::error::ProtocolError;
use crate::packet::{PacketReader, PacketWriter};
use crate::sha2_password::{scramble as sha2_scramble, RsaKeys};

/// Why talking to the source failed: an error the source sent (its code
/// and message) or a transport/protocol problem.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientError {
    /// The source's error code, or 2013 (CR_SERVER_LOST) / 2003
    /// (CR_CONN_HOST_ERROR) / 2061 (CR_AUTH_PLUGIN_ERR) for local ones.
    pub code: u16,
    pub message: String,
}

impl ClientError {
    fn local(code: u16, message: impl Into<String>) -> ClientError {
        ClientError {
            code,
            message: message.into(),
        }
    }
}

impl From<ProtocolError> for ClientError {
    fn from(e: ProtocolError) -> ClientError {
        ClientError::local(2013, format!("Lost connection to source: {e}"))
    }
}

impl From<io::Error> for ClientError {
    fn from(e: io::Error) -> ClientError {
        ClientError::local(2013, format!("Lost connection to source: {e}"))
    }
}

pub type ClientResult<T> = Result<T, ClientError>;

/// Where and as whom to connect.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Login {
    pub host: String,
    pub port: u16,
    pub user: String,
    pub password: String,
    /// GET_SOURCE_PUBLIC_KEY: may caching_sha2_password's full path ask
    /// for the source's RSA key over a plain connection?
    pub get_public_key: bool,
}

/// One connection to the source.
pub struct SourceConn {
    reader: PacketReader<TcpStream>,
    stream: TcpStream,
    writer: PacketWriter,
    buf: Vec<u8>,
}

/// The largest packet read from the source (an event up to
/// max_allowed_packet's ceiling of 1 GiB).
pub const MAX_PACKET_BYTES: usize = 1 << 30;

/// What a COM_QUERY returned: column names and text rows.
pub struct TextResult {
    pub columns: Vec<String>,
    pub rows: Vec<Vec<Option<String>>>,
}

impl SourceConn {
    /// Connects and logs in (timeout for the TCP connect and each read).
    pub fn connect(login: &Login, timeout: Duration) -> ClientResult<SourceConn> {
        let addr = (login.host.as_str(), login.port)
            .to_socket_addrs()
            .map_err(|e| conn_error(login, &e.to_string()))?
            .next()
            .ok_or_else(|| conn_error(login, "no address"))?;
        let stream = TcpStream::connect_timeout(&addr, timeout)
            .map_err(|e| conn_error(login, &e.to_string()))?;
        stream.set_nodelay(true)?;
        stream.set_read_timeout(Some(timeout))?;
        let reader = PacketReader::new(stream.try_clone()?, MAX_PACKET_BYTES);
        let mut c = SourceConn {
            reader,
            stream,
            writer: PacketWriter::new(),
            buf: Vec::new(),
        };
        c.login(login)?;
        Ok(c)
    }

    /// A handle that can end a blocked read from another thread.
    pub fn shutdown_handle(&self) -> io::Result<TcpStream> {
        self.stream.try_clone()
    }

    /// The read timeout for the stream (heartbeat period × 2, or so).
    pub fn set_read_timeout(&self, t: Duration) -> io::Result<()> {
        self.stream.set_read_timeout(Some(t))
    }

    fn read(&mut self) -> ClientResult<Vec<u8>> {
        let mut buf = std::mem::take(&mut self.buf);
        self.reader.read_packet(&mut buf)?;
        Ok(buf)
    }

    /// Answers within the current exchange: the sequence continues.
    fn send(&mut self, payload: &[u8]) -> ClientResult<()> {
        self.writer.seq = self.reader.seq;
        self.writer.packet(payload);
        self.reader.seq = self.writer.seq;
        self.writer.flush_to(&mut self.stream)?;
        Ok(())
    }

    /// Starts a command: sequence ids restart at 0.
    fn command(&mut self, payload: &[u8]) -> ClientResult<()> {
        self.writer.seq = 0;
        self.writer.packet(payload);
        self.writer.flush_to(&mut self.stream)?;
        self.reader.seq = 1;
        Ok(())
    }

    fn login(&mut self, login: &Login) -> ClientResult<()> {
        let hello = self.read()?;
        let (mut nonce, plugin) = parse_handshake(&hello)?;
        let mut plugin = plugin;
        let token = auth_token(&plugin, &login.password, &nonce)?;
        let mut p = Vec::new();
        let caps = cap::LONG_PASSWORD
            | cap::LONG_FLAG
            | cap::PROTOCOL_41
            | cap::TRANSACTIONS
            | cap::SECURE_CONNECTION
            | cap::PLUGIN_AUTH
            | cap::PLUGIN_AUTH_LENENC_CLIENT_DATA
            | cap::DEPRECATE_EOF;
        p.extend_from_slice(&caps.to_le_bytes());
        p.extend_from_slice(&(MAX_PACKET_BYTES as u32).to_le_bytes());
        p.push(45); // utf8mb4_general_ci
        p.extend_from_slice(&[0u8; 23]);
        put_nul_str(&mut p, login.user.as_bytes());
        crate::codec::put_lenenc_str(&mut p, &token);
        put_nul_str(&mut p, plugin.as_bytes());
        self.send(&p)?;
        loop {
            let r = self.read()?;
            match r.first() {
                Some(0x00) => return Ok(()),
                Some(0xFF) => return Err(parse_err(&r)),
                Some(0xFE) => {
                    // Auth switch: plugin name, then its nonce.
                    let mut rd = Reader::new(&r[1..]);
                    plugin = String::from_utf8_lossy(rd.nul_str()?).into_owned();
                    let rest = rd.rest();
                    nonce = rest.strip_suffix(&[0]).unwrap_or(rest).to_vec();
                    let token = auth_token(&plugin, &login.password, &nonce)?;
                    self.send(&token)?;
                }
                Some(0x01) if plugin == "caching_sha2_password" => match r.get(1) {
                    Some(3) => {} // fast path: OK follows
                    Some(4) => self.sha2_full(login, &nonce)?,
                    _ => {
                        // The public key itself (answer to our request).
                        return Err(ClientError::local(2061, "unexpected auth data from source"));
                    }
                },
                _ => return Err(ClientError::local(2013, "malformed auth reply from source")),
            }
        }
    }

    /// caching_sha2_password's full path over a plain connection: ask for
    /// the RSA key, send the password encrypted with it.
    fn sha2_full(&mut self, login: &Login, nonce: &[u8]) -> ClientResult<()> {
        if !login.get_public_key {
            return Err(ClientError::local(
                2061,
                "Authentication plugin 'caching_sha2_password' reported error: \
                 Authentication requires secure connection (set GET_SOURCE_PUBLIC_KEY=1)",
            ));
        }
        self.send(&[2])?;
        let key = self.read()?;
        let pem = match key.first() {
            Some(0x01) => String::from_utf8_lossy(&key[1..]).into_owned(),
            Some(0xFF) => return Err(parse_err(&key)),
            _ => return Err(ClientError::local(2061, "source sent no public key")),
        };
        let cipher = RsaKeys::encrypt_password(&pem, login.password.as_bytes(), nonce)
            .ok_or_else(|| ClientError::local(2061, "cannot use the source's public key"))?;
        self.send(&cipher)
    }

    /// COM_QUERY whose answer is OK or a text result set.
    pub fn query(&mut self, sql: &str) -> ClientResult<TextResult> {
        let mut p = vec![com::QUERY];
        p.extend_from_slice(sql.as_bytes());
        self.command(&p)?;
        let first = self.read()?;
        match first.first() {
            Some(0x00) => {
                return Ok(TextResult {
                    columns: Vec::new(),
                    rows: Vec::new(),
                })
            }
            Some(0xFF) => return Err(parse_err(&first)),
            _ => {}
        }
        let n = Reader::new(&first).lenenc_int()? as usize;
        let mut columns = Vec::with_capacity(n.min(4096));
        for _ in 0..n {
            let def = self.read()?;
            let mut rd = Reader::new(&def);
            for _ in 0..4 {
                rd.lenenc_str()?; // catalog, schema, table, org_table
            }
            columns.push(String::from_utf8_lossy(rd.lenenc_str()?).into_owned());
        }
        let mut rows = Vec::new();
        loop {
            let r = self.read()?;
            match r.first() {
                Some(0xFE) if r.len() < 0xFF_FFFF => return Ok(TextResult { columns, rows }),
                Some(0xFF) => return Err(parse_err(&r)),
                _ => {}
            }
            let mut rd = Reader::new(&r);
            let mut row = Vec::with_capacity(n);
            for _ in 0..n {
                if rd.remaining() > 0 && r[r.len() - rd.remaining()] == 0xFB {
                    rd.u8()?;
                    row.push(None);
                } else {
                    row.push(Some(String::from_utf8_lossy(rd.lenenc_str()?).into_owned()));
                }
            }
            rows.push(row);
        }
    }

    /// The first column of the first row of `sql`, if any.
    pub fn query_value(&mut self, sql: &str) -> ClientResult<Option<String>> {
        let r = self.query(sql)?;
        Ok(r.rows
            .into_iter()
            .next()
            .and_then(|row| row.into_iter().next().flatten()))
    }

    /// COM_REGISTER_SLAVE.
    pub fn register(&mut self, server_id: u32, report_port: u16) -> ClientResult<()> {
        let mut p = vec![com::REGISTER_SLAVE];
        p.extend_from_slice(&server_id.to_le_bytes());
        p.push(0); // hostname
        p.push(0); // user
        p.push(0); // password
        p.extend_from_slice(&report_port.to_le_bytes());
        p.extend_from_slice(&0u32.to_le_bytes()); // replication rank
        p.extend_from_slice(&0u32.to_le_bytes()); // source id
        self.command(&p)?;
        self.expect_ok()
    }

    fn expect_ok(&mut self) -> ClientResult<()> {
        let r = self.read()?;
        match r.first() {
            Some(0x00) => Ok(()),
            Some(0xFF) => Err(parse_err(&r)),
            _ => Err(ClientError::local(2013, "malformed reply from source")),
        }
    }

    /// COM_BINLOG_DUMP from `file`:`pos`; events then come from
    /// [`SourceConn::next_event`].
    pub fn dump(&mut self, server_id: u32, file: &str, pos: u64) -> ClientResult<()> {
        let mut p = vec![com::BINLOG_DUMP];
        p.extend_from_slice(&(pos.min(u64::from(u32::MAX)) as u32).to_le_bytes());
        p.extend_from_slice(&0u16.to_le_bytes());
        p.extend_from_slice(&server_id.to_le_bytes());
        p.extend_from_slice(file.as_bytes());
        self.command(&p)
    }

    /// COM_BINLOG_DUMP_GTID with the encoded GTID set the replica has.
    pub fn dump_gtid(&mut self, server_id: u32, gtids_encoded: &[u8]) -> ClientResult<()> {
        let mut p = vec![com::BINLOG_DUMP_GTID];
        p.extend_from_slice(&4u16.to_le_bytes()); // BINLOG_THROUGH_GTID
        p.extend_from_slice(&server_id.to_le_bytes());
        p.extend_from_slice(&0u32.to_le_bytes()); // no file name
        p.extend_from_slice(&4u64.to_le_bytes());
        p.extend_from_slice(&(gtids_encoded.len() as u32).to_le_bytes());
        p.extend_from_slice(gtids_encoded);
        self.command(&p)
    }

    /// The next event of the dump (without the 0x00 marker). None when the
    /// source ended the stream (EOF).
    pub fn next_event(&mut self) -> ClientResult<Option<Vec<u8>>> {
        let mut r = self.read()?;
        match r.first() {
            Some(0x00) => {
                r.remove(0);
                Ok(Some(r))
            }
            Some(0xFE) if r.len() < 9 => Ok(None),
            Some(0xFF) => Err(parse_err(&r)),
            _ => Err(ClientError::local(
                2013,
                "malformed event packet from source",
            )),
        }
    }

    /// Gives a buffer back for the next read.
    pub fn recycle(&mut self, mut buf: Vec<u8>) {
        buf.clear();
        self.buf = buf;
    }

    pub fn close(&self) {
        let _ = self.stream.shutdown(Shutdown::Both);
    }
}

fn conn_error(login: &Login, why: &str) -> ClientError {
    ClientError::local(
        2003,
        format!(
            "Can't connect to MySQL server on '{}:{}' ({why})",
            login.host, login.port
        ),
    )
}

/// The token for `plugin`.
fn auth_token(plugin: &str, password: &str, nonce: &[u8]) -> ClientResult<Vec<u8>> {
    match plugin {
        "mysql_native_password" => Ok(native_password_token(password.as_bytes(), nonce)),
        "caching_sha2_password" => Ok(sha2_scramble(password.as_bytes(), nonce)),
        other => Err(ClientError::local(
            2059,
            format!("Authentication plugin '{other}' cannot be loaded"),
        )),
    }
}

/// (nonce, plugin) of a V10 handshake.
fn parse_handshake(p: &[u8]) -> ClientResult<(Vec<u8>, String)> {
    if p.first() == Some(&0xFF) {
        return Err(parse_err(p));
    }
    let mut r = Reader::new(p);
    if r.u8()? != 10 {
        return Err(ClientError::local(
            2013,
            "source speaks an unknown protocol version",
        ));
    }
    r.nul_str()?; // server version
    r.u32()?; // connection id
    let mut nonce = r.bytes(8)?.to_vec();
    r.u8()?;
    let lo = r.u16()?;
    r.u8()?; // charset
    r.u16()?; // status
    let hi = r.u16()?;
    let caps = u32::from(lo) | (u32::from(hi) << 16);
    let auth_len = r.u8()?;
    r.bytes(10)?;
    if caps & cap::SECURE_CONNECTION != 0 {
        let n = (usize::from(auth_len).max(21) - 8).min(r.remaining());
        let part2 = r.bytes(n)?;
        nonce.extend_from_slice(part2.strip_suffix(&[0]).unwrap_or(part2));
    }
    let plugin = if caps & cap::PLUGIN_AUTH != 0 {
        String::from_utf8_lossy(r.nul_str_or_rest()).into_owned()
    } else {
        "mysql_native_password".to_string()
    };
    Ok((nonce, plugin))
}

/// An ERR packet's code and message.
fn parse_err(p: &[u8]) -> ClientError {
    let mut r = Reader::new(p);
    let _ = r.u8();
    let code = r.u16().unwrap_or(2013);
    let mut rest = r.rest();
    if rest.first() == Some(&b'#') && rest.len() >= 6 {
        rest = &rest[6..];
    }
    ClientError {
        code,
        message: String::from_utf8_lossy(rest).into_owned(),
    }
}
