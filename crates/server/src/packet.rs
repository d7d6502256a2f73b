//! # Packet framing
//!
//! Everything on a MySQL connection travels in packets:
//!
//! ```text
//!  0        3     4
//!  +--------+-----+---------------------------+
//!  | length | seq | payload (length bytes)    |
//!  | int<3> | int<1>                          |
//!  +--------+-----+---------------------------+
//! ```
//!
//! `seq` counts the packets of one exchange: the client's command is 0, the
//! server's reply packets are 1, 2, 3, ... (wrapping at 255), and both sides
//! check it. A payload of 2^24 - 1 = 16 777 215 bytes or more is split: a
//! piece of exactly 0xFFFFFF bytes means "more follows", and the last piece
//! is shorter (possibly empty, when the payload length is an exact multiple):
//!
//! ```text
//!  payload of 16 777 215 + 10 bytes:
//!  [FF FF FF | s  ][ 16 777 215 bytes ]  [0A 00 00 | s+1][ 10 bytes ]
//!
//!  payload of exactly 16 777 215 bytes:
//!  [FF FF FF | s  ][ 16 777 215 bytes ]  [00 00 00 | s+1]
//! ```
//!
//! [`PacketReader`] reassembles pieces, checks the sequence, and enforces a
//! byte limit (`max_allowed_packet`) on the whole payload *before* reading
//! it, so a hostile length cannot make the server allocate. [`PacketWriter`]
//! frames replies into one output buffer that the connection flushes once
//! per reply (one `write` for a whole small result set).

use std::io::{self, Read, Write};

use crate::error::ProtocolError;

/// Largest piece of a payload; a piece this long means "more follows".
pub const MAX_PIECE: usize = 0xFF_FFFF;

/// Reads client packets from a byte stream.
pub struct PacketReader<R> {
    inner: R,
    /// Sequence id the next piece must carry.
    pub seq: u8,
    /// Largest payload accepted (sum of all pieces).
    pub max_payload: usize,
    /// Bytes read from the stream so far (headers included).
    pub bytes_read: u64,
}

impl<R: Read> PacketReader<R> {
    pub fn new(inner: R, max_payload: usize) -> PacketReader<R> {
        PacketReader {
            inner,
            seq: 0,
            max_payload,
            bytes_read: 0,
        }
    }

    pub fn get_ref(&self) -> &R {
        &self.inner
    }

    pub fn get_mut(&mut self) -> &mut R {
        &mut self.inner
    }

    /// Reads one whole (reassembled) payload into `buf` (cleared first).
    ///
    /// Errors: [`ProtocolError::Closed`] if the stream ends before the
    /// first header byte, [`ProtocolError::Timeout`] if the read timed out
    /// there, `Io` for an end or failure in the middle, `OutOfOrder`,
    /// `TooLarge` (nothing of the oversized piece is read).
    pub fn read_packet(&mut self, buf: &mut Vec<u8>) -> Result<(), ProtocolError> {
        buf.clear();
        let mut first = true;
        loop {
            let mut header = [0u8; 4];
            self.read_header(&mut header, first)?;
            first = false;
            let len = u32::from_le_bytes([header[0], header[1], header[2], 0]) as usize;
            let seq = header[3];
            if seq != self.seq {
                return Err(ProtocolError::OutOfOrder {
                    expected: self.seq,
                    got: seq,
                });
            }
            self.seq = self.seq.wrapping_add(1);
            if buf.len() + len > self.max_payload {
                return Err(ProtocolError::TooLarge);
            }
            let got = (&mut self.inner).take(len as u64).read_to_end(buf)?;
            self.bytes_read += 4 + got as u64;
            if got != len {
                return Err(ProtocolError::Io(io::ErrorKind::UnexpectedEof.into()));
            }
            if len < MAX_PIECE {
                return Ok(());
            }
        }
    }

    fn read_header(&mut self, header: &mut [u8; 4], first: bool) -> Result<(), ProtocolError> {
        let mut filled = 0;
        while filled < 4 {
            match self.inner.read(&mut header[filled..]) {
                Ok(0) if filled == 0 && first => return Err(ProtocolError::Closed),
                Ok(0) => return Err(ProtocolError::Io(io::ErrorKind::UnexpectedEof.into())),
                Ok(n) => filled += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e)
                    if filled == 0
                        && first
                        && matches!(
                            e.kind(),
                            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                        ) =>
                {
                    return Err(ProtocolError::Timeout)
                }
                Err(e) => return Err(ProtocolError::Io(e)),
            }
        }
        Ok(())
    }
}

/// Frames server packets into an output buffer.
#[derive(Default)]
pub struct PacketWriter {
    /// Framed bytes not yet sent.
    pub out: Vec<u8>,
    /// Sequence id of the next packet.
    pub seq: u8,
    /// Where the payload of the packet being built starts (after its
    /// 4-byte header placeholder).
    start: usize,
    /// Bytes handed to the stream so far.
    pub bytes_written: u64,
}

impl PacketWriter {
    pub fn new() -> PacketWriter {
        PacketWriter::default()
    }

    /// Starts a packet; append its payload to the returned buffer, then
    /// call [`PacketWriter::finish`].
    pub fn begin(&mut self) -> &mut Vec<u8> {
        self.start = self.out.len() + 4;
        self.out.extend_from_slice(&[0, 0, 0, 0]);
        &mut self.out
    }

    /// Frames the packet started by [`PacketWriter::begin`], splitting it
    /// into 16 MiB pieces when needed.
    pub fn finish(&mut self) {
        let start = self.start;
        let len = self.out.len() - start;
        if len < MAX_PIECE {
            let h = (len as u32).to_le_bytes();
            self.out[start - 4..start].copy_from_slice(&[h[0], h[1], h[2], self.seq]);
            self.seq = self.seq.wrapping_add(1);
            return;
        }
        let payload = self.out.split_off(start);
        self.out.truncate(start - 4);
        self.write_split(&payload);
    }

    /// Appends a whole payload as one packet (split as needed).
    pub fn packet(&mut self, payload: &[u8]) {
        if payload.len() < MAX_PIECE {
            self.begin().extend_from_slice(payload);
            self.finish();
        } else {
            self.write_split(payload);
        }
    }

    fn write_split(&mut self, payload: &[u8]) {
        let mut rest = payload;
        loop {
            let n = rest.len().min(MAX_PIECE);
            let h = (n as u32).to_le_bytes();
            self.out.extend_from_slice(&[h[0], h[1], h[2], self.seq]);
            self.seq = self.seq.wrapping_add(1);
            self.out.extend_from_slice(&rest[..n]);
            rest = &rest[n..];
            if n < MAX_PIECE {
                return;
            }
        }
    }

    /// Bytes framed and not yet sent.
    pub fn pending(&self) -> usize {
        self.out.len()
    }

    /// Sends the buffered packets.
    pub fn flush_to<W: Write>(&mut self, w: &mut W) -> io::Result<()> {
        if self.out.is_empty() {
            return Ok(());
        }
        w.write_all(&self.out)?;
        w.flush()?;
        self.bytes_written += self.out.len() as u64;
        self.out.clear();
        if self.out.capacity() > 4 << 20 {
            self.out.shrink_to(64 << 10);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    fn frame(payload: &[u8], seq: u8) -> Vec<u8> {
        let mut w = PacketWriter::new();
        w.seq = seq;
        w.packet(payload);
        w.out
    }

    #[test]
    fn small_packet_layout() {
        assert_eq!(frame(b"\x0e", 0), [1, 0, 0, 0, 0x0e]);
        assert_eq!(frame(b"", 7), [0, 0, 0, 7]);
        let mut w = PacketWriter::new();
        w.begin().extend_from_slice(b"abc");
        w.finish();
        w.begin().extend_from_slice(b"de");
        w.finish();
        assert_eq!(
            w.out,
            [3, 0, 0, 0, b'a', b'b', b'c', 2, 0, 0, 1, b'd', b'e']
        );
        assert_eq!(w.seq, 2);
    }

    #[test]
    fn large_payload_split_and_reassembled() {
        for extra in [0usize, 1, 10] {
            let n = MAX_PIECE + extra;
            let payload: Vec<u8> = (0..n).map(|i| (i % 251) as u8).collect();
            // Through begin/finish (the in-place path).
            let mut w = PacketWriter::new();
            w.begin().extend_from_slice(&payload);
            w.finish();
            let framed = w.out;
            assert_eq!(framed.len(), n + 8, "two headers");
            assert_eq!(&framed[..4], &[0xFF, 0xFF, 0xFF, 0]);
            let second = &framed[4 + MAX_PIECE..4 + MAX_PIECE + 4];
            let e = (extra as u32).to_le_bytes();
            assert_eq!(second, &[e[0], e[1], e[2], 1]);
            assert_eq!(frame(&payload, 0), framed, "packet() frames the same");

            let mut r = PacketReader::new(Cursor::new(framed), 64 << 20);
            let mut buf = Vec::new();
            r.read_packet(&mut buf).unwrap();
            assert_eq!(buf, payload);
            assert_eq!(r.seq, 2);
            assert!(matches!(
                r.read_packet(&mut buf),
                Err(ProtocolError::Closed)
            ));
        }
    }

    #[test]
    fn reader_checks_sequence_and_limit() {
        let mut r = PacketReader::new(Cursor::new(frame(b"x", 3)), 100);
        let mut buf = Vec::new();
        assert!(matches!(
            r.read_packet(&mut buf),
            Err(ProtocolError::OutOfOrder {
                expected: 0,
                got: 3
            })
        ));
        let mut r = PacketReader::new(Cursor::new(frame(&[0u8; 101], 0)), 100);
        assert!(matches!(
            r.read_packet(&mut buf),
            Err(ProtocolError::TooLarge)
        ));
        // Truncated payload: an i/o error, not Closed.
        let mut bytes = frame(b"hello", 0);
        bytes.truncate(6);
        let mut r = PacketReader::new(Cursor::new(bytes), 100);
        assert!(matches!(r.read_packet(&mut buf), Err(ProtocolError::Io(_))));
        // Truncated header.
        let mut r = PacketReader::new(Cursor::new(vec![1, 0]), 100);
        assert!(matches!(r.read_packet(&mut buf), Err(ProtocolError::Io(_))));
    }
}
