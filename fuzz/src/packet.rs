//! The `packet` target: every client-packet decoder of `quire-server`.
//!
//! Input layout: `[count, flags, payload...]`.
//! * `count` (with `flags` bit 0 set: `count * 257`, up to 65535) is the
//!   number of parameters the prepared statement is taken to have;
//! * `flags` bit 1: pre-bind parameter types (as a previous execution
//!   would have), bits 2..: which parameters came as long data;
//! * `payload` goes through the caching_sha2_password and TLS decoders
//!   (`auth_inputs`), `decode_client_packet` (and, for
//!   COM_STMT_EXECUTE, `decode_execute_params`), straight through
//!   `decode_execute_params`, `parse_handshake_response`, the packet
//!   framer (`PacketReader`, two size limits), the multi-statement
//!   splitter, and a `PacketWriter` -> `PacketReader` round trip.
//!
//! Decoders may fail; they must not panic, hang or allocate without
//! bound. The round trip must give back the payload.

use std::io::Cursor;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::known::guarded;
use quire_server::handshake::parse_handshake_response;
use quire_server::packet::{PacketReader, PacketWriter};
use quire_server::{decode_client_packet, decode_execute_params, split_statements, Command};

pub fn run(data: &[u8]) {
    static INPUTS: AtomicU64 = AtomicU64::new(0);
    let n = INPUTS.fetch_add(1, Ordering::Relaxed) + 1;
    if n.is_power_of_two() || n.is_multiple_of(1_000_000) {
        eprintln!(
            "quire-fuzz packet: {n} inputs, {} known panics",
            crate::known::KNOWN_PANICS.load(Ordering::Relaxed)
        );
    }
    if data.len() < 2 {
        let _ = decode_client_packet(data);
        return;
    }
    let (count_b, flags) = (data[0], data[1]);
    let payload = &data[2..];
    let count = if flags & 1 != 0 {
        usize::from(count_b) * 257
    } else {
        usize::from(count_b % 64)
    };
    let prebind = flags & 2 != 0;
    let long_mask = flags >> 2;

    let types_for = |src: &[u8]| -> Vec<(u8, u8)> {
        if !prebind {
            return Vec::new();
        }
        (0..count)
            .map(|i| {
                let t = src.get(2 * i).copied().unwrap_or(0xFD);
                let f = src.get(2 * i + 1).copied().unwrap_or(0);
                (t, f)
            })
            .collect()
    };
    let long_for = || -> Vec<Option<Vec<u8>>> {
        (0..count.min(4096))
            .map(|i| {
                if i < 6 && long_mask & (1 << i) != 0 {
                    Some(vec![i as u8; i])
                } else {
                    None
                }
            })
            .collect()
    };

    // 1. Command-phase decoder, and the parameters of an execution.
    match decode_client_packet(payload) {
        Ok(Command::StmtExecute { params, .. }) => {
            let mut types = types_for(payload);
            let mut long = long_for();
            let first = guarded(|| decode_execute_params(params, count, &mut types, &mut long));
            if let Some(Ok(vals)) = first {
                assert_eq!(vals.len(), count, "one value per parameter");
                // A second execution without rebinding reuses the types.
                let mut long2 = long_for();
                let _ = guarded(|| decode_execute_params(params, count, &mut types, &mut long2));
            }
        }
        Ok(Command::Query(q)) => assert_eq!(q, &payload[1..]),
        Ok(Command::StmtPrepare(q)) => assert_eq!(q, &payload[1..]),
        Ok(_) => {}
        Err(_) => {}
    }
    if payload.is_empty() {
        assert!(decode_client_packet(payload).is_err());
    }

    // 2. Parameters straight from the payload.
    {
        let mut types = types_for(payload);
        let mut long = long_for();
        let r = guarded(|| decode_execute_params(payload, count, &mut types, &mut long));
        if let Some(Ok(vals)) = r {
            assert_eq!(vals.len(), count, "one value per parameter");
        }
    }

    // 3. HandshakeResponse41.
    let _ = parse_handshake_response(payload);
    auth_inputs(payload);

    // 4. Framing: a stream of packets, each decoded as a command.
    for max in [64usize, 1 << 20] {
        let mut reader = PacketReader::new(Cursor::new(payload), max);
        let mut buf = Vec::new();
        let mut n = 0;
        while reader.read_packet(&mut buf).is_ok() {
            assert!(buf.len() <= max, "payload over the limit");
            let _ = decode_client_packet(&buf);
            n += 1;
            assert!(n <= payload.len() / 4 + 1, "more packets than headers");
        }
    }

    // 5. Multi-statement splitter (COM_QUERY text).
    let text = String::from_utf8_lossy(payload);
    for piece in split_statements(&text) {
        let off = piece.as_ptr() as usize - text.as_ptr() as usize;
        assert!(off + piece.len() <= text.len(), "piece outside the text");
    }

    // 6. Writer -> reader round trip, including sequence ids.
    let mut w = PacketWriter::new();
    w.seq = count_b;
    w.packet(payload);
    w.packet(&data[..2]);
    let mut wire = Vec::new();
    w.flush_to(&mut wire).expect("write to Vec");
    let mut r = PacketReader::new(Cursor::new(&wire), 1 << 20);
    r.seq = count_b;
    let mut buf = Vec::new();
    r.read_packet(&mut buf).expect("read back first packet");
    assert_eq!(buf, payload, "round trip of the payload");
    r.read_packet(&mut buf).expect("read back second packet");
    assert_eq!(buf, &data[..2], "round trip of the second packet");
}

/// The authentication decoders added with TLS and caching_sha2_password:
/// a client's fast-auth scramble against a digest, a stored
/// `$A$005$...` string (and a password checked against it when it is
/// well formed), a PEM public key as a client would receive it, and
/// `tls_version` lists. None may panic.
fn auth_inputs(payload: &[u8]) {
    use quire_server::sha2_password as sha2;
    let digest = sha2::fast_digest(b"pw");
    let (nonce, token) = payload.split_at(payload.len().min(20));
    let _ = sha2::check_scramble(&digest, nonce, token);
    let text = String::from_utf8_lossy(payload);
    if sha2::is_valid_stored(&text) {
        let _ = sha2::check_password(&text, b"pw");
    }
    let _ = sha2::RsaKeys::encrypt_password(&text, b"pw", nonce);
    let _ = quire_server::tls::parse_tls_versions(&text);
}
