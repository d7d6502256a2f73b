//! Recovery scan: from the checkpoint to the end of the valid log, then a
//! sweep of the rest of the circle for evidence of lost synced redo.
//!
//! ```text
//!  block:  ckpt_block ...............  D_block | rest of the circle ...... ckpt_block+n-1
//!          [valid][valid][valid][valid][end]   [stale][stale][later?][stale]
//!           \___ payload stream, parsed into frames ___/      |
//!                                                     crc ok, right block_no,
//!                                                     epoch >= last epoch and
//!                                                     sync_lsn > D  =>  CorruptLog
//! ```
//!
//! Two ends are tracked:
//! * `data_end_lsn` (D): the end of the contiguous run of valid blocks,
//!   i.e. the last byte the disk still holds in order. Everything synced
//!   must lie below D, so a later block whose `sync_lsn` exceeds D proves
//!   that synced redo was lost.
//! * `end_lsn` (E <= D): the end of the last complete frame. Bytes in
//!   `[E, D)` are the start of a frame whose rest never reached the disk (a
//!   torn tail); they are ignored and overwritten by the next incarnation.

use std::sync::Arc;

use quire_io::{AlignedBuf, File};

use super::format::{
    block_crc_ok, payload, BlockHeader, CheckpointRecord, Geometry, BLOCK_BYTES, PAYLOAD,
};
use super::ApplyFn;
use crate::error::{Result, StorageError};
use crate::page::{get_u32, Lsn};

/// Blocks read per I/O during the scan (1 MiB).
pub const CHUNK_BLOCKS: u64 = 2048;

/// How far past the end the sweep for lost synced redo looks (4 MiB).
///
/// Synced blocks cannot be torn by a power cut (512-byte sectors are
/// atomic), so a damaged synced block is media damage, which spans a few
/// sectors, not megabytes. Later synced blocks sit right after such damage,
/// so a window of a few MiB finds them, while sweeping the whole circle
/// would read all of `innodb_redo_log_capacity` on every start (seconds
/// for a large log, mostly never-written holes). Damage longer than the
/// window is reported as a torn tail: a documented limit.
pub const SWEEP_BLOCKS: u64 = 8192;

/// Bytes of a frame header: `[u32 len][u32 crc32c(payload)]`.
pub const FRAME_HEADER_BYTES: usize = 8;

/// What the scan found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScanOutcome {
    /// End of the last complete frame (E): where the log continues.
    pub end_lsn: Lsn,
    /// End of the contiguous valid block data (D >= E).
    pub data_end_lsn: Lsn,
    /// Highest epoch in the checkpoint or in any block with a good crc.
    pub max_epoch: u32,
    /// Frames delivered.
    pub mtrs: u64,
    /// Payload bytes of the frames delivered (frame headers excluded).
    pub payload_bytes: u64,
    /// Blocks read (checkpoint to end, plus the sweep window).
    pub blocks_read: u64,
}

/// Splits the payload stream into frames. The stream is kept from the
/// first unparsed byte on; `pos_lsn` is the LSN of `stream[pos]`.
struct FrameParser {
    stream: Vec<u8>,
    pos: usize,
    pos_lsn: Lsn,
    max_frame_bytes: u64,
    mtrs: u64,
    payload_bytes: u64,
}

impl FrameParser {
    fn new(start_lsn: Lsn, max_frame_bytes: u64) -> FrameParser {
        FrameParser {
            stream: Vec::with_capacity(2 * CHUNK_BLOCKS as usize * PAYLOAD),
            pos: 0,
            pos_lsn: start_lsn,
            max_frame_bytes,
            mtrs: 0,
            payload_bytes: 0,
        }
    }

    fn push(&mut self, data: &[u8]) {
        self.stream.extend_from_slice(data);
    }

    /// Delivers every complete frame in the stream. Every byte pushed came
    /// from a valid block, so a frame whose bytes are all here but whose
    /// crc fails is corruption, not a torn write.
    fn parse(&mut self, apply: &mut ApplyFn<'_>) -> Result<()> {
        loop {
            let avail = self.stream.len() - self.pos;
            if avail < FRAME_HEADER_BYTES {
                break;
            }
            let len = u64::from(get_u32(&self.stream, self.pos));
            let crc = get_u32(&self.stream, self.pos + 4);
            if len > self.max_frame_bytes {
                return Err(StorageError::CorruptLog(format!(
                    "the frame at LSN {} claims {len} payload bytes, more than the log can hold",
                    self.pos_lsn
                )));
            }
            let frame_bytes = FRAME_HEADER_BYTES + len as usize;
            if avail < frame_bytes {
                break;
            }
            let body = &self.stream[self.pos + FRAME_HEADER_BYTES..self.pos + frame_bytes];
            let computed = crc32c::crc32c(body);
            if computed != crc {
                return Err(StorageError::CorruptLog(format!(
                    "the mini-transaction at LSN {} ({len} bytes) fails its checksum \
                     (stored {crc:#010x}, computed {computed:#010x}) although every block \
                     holding it is intact",
                    self.pos_lsn
                )));
            }
            let start_lsn = self.pos_lsn;
            let end_lsn = start_lsn + frame_bytes as u64;
            apply(start_lsn, end_lsn, body)?;
            self.pos += frame_bytes;
            self.pos_lsn = end_lsn;
            self.mtrs += 1;
            self.payload_bytes += len;
        }
        // Keep the buffer small: drop what has been parsed.
        if self.pos == self.stream.len() {
            self.stream.clear();
            self.pos = 0;
        } else if self.pos >= self.stream.len() / 2 {
            self.stream.drain(..self.pos);
            self.pos = 0;
        }
        Ok(())
    }
}

/// Scans the log from `ckpt`, calling `apply` for each complete frame in
/// order, then sweeps up to [`SWEEP_BLOCKS`] past the end for evidence of
/// lost synced redo. Every block written by this run carries an epoch no
/// higher than the checkpoint's (the checkpoint is bumped before any block
/// is written), so nothing beyond the sweep can raise `max_epoch` either.
pub fn scan(
    files: &[Arc<dyn File>],
    geo: &Geometry,
    ckpt: &CheckpointRecord,
    apply: &mut ApplyFn<'_>,
) -> Result<ScanOutcome> {
    let payload_u64 = PAYLOAD as u64;
    let ckpt_lsn = ckpt.checkpoint_lsn;
    let ckpt_block = ckpt_lsn / payload_u64;
    let limit_block = ckpt_block + geo.blocks_in_circle();

    let mut parser = FrameParser::new(ckpt_lsn, geo.capacity_lsn());
    let mut in_log = true;
    let mut last_epoch = 0u32;
    let mut data_end_lsn = ckpt_lsn;
    let mut end_lsn = ckpt_lsn;
    let mut max_epoch = ckpt.epoch;
    let mut blocks_read = 0u64;

    let mut chunk = AlignedBuf::new(CHUNK_BLOCKS as usize * BLOCK_BYTES, 4096);
    let mut block_no = ckpt_block;
    let mut sweep_limit = limit_block;
    while block_no < limit_block.min(sweep_limit) {
        let run = geo
            .run_in_file(block_no)
            .min(limit_block.min(sweep_limit) - block_no)
            .min(CHUNK_BLOCKS);
        let (file, offset) = geo.locate(block_no);
        let bytes = &mut chunk[..run as usize * BLOCK_BYTES];
        files[file].read_at(bytes, offset)?;
        blocks_read += run;

        for (i, blk) in bytes.chunks_exact(BLOCK_BYTES).enumerate() {
            let expect_no = block_no + i as u64;
            let header = block_crc_ok(blk).then(|| BlockHeader::read(blk));
            if let Some(h) = header {
                max_epoch = max_epoch.max(h.epoch);
            }
            if in_log {
                let valid = header.filter(|h| {
                    h.block_no == expect_no
                        && h.epoch >= last_epoch
                        && usize::from(h.data_len) <= PAYLOAD
                });
                match valid {
                    Some(h) => {
                        // Invariant right after reading: the block is the
                        // one this position must hold.
                        debug_assert_eq!(h.start_lsn(), expect_no * payload_u64);
                        last_epoch = h.epoch;
                        let data_len = usize::from(h.data_len);
                        let skip = if expect_no == ckpt_block {
                            (ckpt_lsn % payload_u64) as usize
                        } else {
                            0
                        };
                        if data_len < skip {
                            return Err(StorageError::CorruptLog(format!(
                                "the checkpoint is at LSN {ckpt_lsn} but block {expect_no} \
                                 holding it has only {data_len} of the {skip} bytes before it"
                            )));
                        }
                        parser.push(&payload(blk)[skip..data_len]);
                        data_end_lsn = h.start_lsn() + data_len as u64;
                        if data_len < PAYLOAD {
                            in_log = false;
                        }
                    }
                    None => in_log = false,
                }
                if !in_log {
                    parser.parse(apply)?;
                    end_lsn = parser.pos_lsn;
                    sweep_limit = sweep_limit.min(expect_no + 1 + SWEEP_BLOCKS);
                }
            } else if let Some(h) = header {
                // After the end: a block of this lap (right block number),
                // of this incarnation or a later one, claiming that more
                // was durable than the disk still holds in order.
                if h.block_no == expect_no && h.epoch >= last_epoch && h.sync_lsn > data_end_lsn {
                    return Err(StorageError::CorruptLog(format!(
                        "redo is damaged or missing at LSN {data_end_lsn} (block {}), but block \
                         {expect_no} written later says the log was durable up to LSN {}; \
                         synced redo was lost",
                        data_end_lsn / payload_u64,
                        h.sync_lsn
                    )));
                }
            }
        }
        if in_log {
            parser.parse(apply)?;
            end_lsn = parser.pos_lsn;
        }
        block_no += run;
    }

    debug_assert!(ckpt_lsn <= end_lsn && end_lsn <= data_end_lsn);
    Ok(ScanOutcome {
        end_lsn,
        data_end_lsn,
        max_epoch,
        mtrs: parser.mtrs,
        payload_bytes: parser.payload_bytes,
        blocks_read,
    })
}
