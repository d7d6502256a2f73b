//! On-disk formats of the redo files: the 512-byte log block, the file
//! header, the checkpoint slot, and the geometry that maps block numbers to
//! file offsets. Everything here is pure (no I/O) so it can be checked on
//! its own; the layouts are drawn in the module doc of `redo`.

use crate::error::{Result, StorageError};
use crate::page::{get_u16, get_u32, get_u64, put_u16, put_u32, put_u64, Lsn};

/// Size of a log block: the atomic sector unit (media assumption 1).
pub const BLOCK_BYTES: usize = 512;
/// Payload bytes per block; one LSN unit is one payload byte.
pub const PAYLOAD: usize = 484;
/// Offset of the payload inside a block.
pub const OFF_PAYLOAD: usize = 24;
/// Offset of the block checksum (crc32c of bytes `[0, OFF_CRC)`).
pub const OFF_CRC: usize = 508;

const OFF_BLOCK_NO: usize = 0;
const OFF_EPOCH: usize = 8;
const OFF_DATA_LEN: usize = 12;
const OFF_RESERVED: usize = 14;
const OFF_SYNC_LSN: usize = 16;

/// Number of redo files (MySQL 8.0.30 also keeps 32).
pub const N_FILES: u32 = 32;
/// Bytes of metadata at the start of each file (4 blocks: header, slot 0,
/// unused, slot 1). The data area starts at this offset rounded up to the
/// write-ahead size, see [`Geometry::data_start_bytes`].
pub const FILE_HEADER_BYTES: u64 = 2048;
/// Offsets (in file 0) of the two checkpoint slots: blocks 1 and 3.
pub const CHECKPOINT_SLOT_OFFSETS: [u64; 2] = [512, 1536];
/// Magic at the start of every redo file.
pub const MAGIC: &[u8; 8] = b"QUIREDO1";
/// Version of the format described here.
pub const FORMAT_VERSION: u32 = 1;

/// Smallest and largest `innodb_log_write_ahead_size`.
pub const MIN_WRITE_AHEAD_BYTES: u32 = 512;
pub const MAX_WRITE_AHEAD_BYTES: u32 = 65536;

/// crc32c of the first 508 bytes of a 512-byte block.
pub fn block_crc(block: &[u8]) -> u32 {
    crc32c::crc32c(&block[..OFF_CRC])
}

/// Whether the stored checksum of a block matches its content.
pub fn block_crc_ok(block: &[u8]) -> bool {
    get_u32(block, OFF_CRC) == block_crc(block)
}

fn seal(block: &mut [u8]) {
    let crc = block_crc(block);
    put_u32(block, OFF_CRC, crc);
}

/// The header fields of a log block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockHeader {
    /// `lsn / PAYLOAD` for the payload the block holds.
    pub block_no: u64,
    /// Incarnation of the log that wrote the block.
    pub epoch: u32,
    /// Payload bytes used, `0..=PAYLOAD`.
    pub data_len: u16,
    /// The LSN known durable when the block was written.
    pub sync_lsn: Lsn,
}

impl BlockHeader {
    /// Reads the header fields (the caller checks the crc first).
    pub fn read(block: &[u8]) -> BlockHeader {
        BlockHeader {
            block_no: get_u64(block, OFF_BLOCK_NO),
            epoch: get_u32(block, OFF_EPOCH),
            data_len: get_u16(block, OFF_DATA_LEN),
            sync_lsn: get_u64(block, OFF_SYNC_LSN),
        }
    }

    /// Stamps the header into `block` (payload already in place), zeroes the
    /// unused payload tail so a block's bytes depend only on its content,
    /// and seals the crc. Asserts the block reads back as written.
    pub fn stamp(&self, block: &mut [u8]) {
        assert_eq!(block.len(), BLOCK_BYTES, "a log block is 512 bytes");
        assert!(
            usize::from(self.data_len) <= PAYLOAD,
            "block {}: data_len {} > {PAYLOAD}",
            self.block_no,
            self.data_len
        );
        put_u64(block, OFF_BLOCK_NO, self.block_no);
        put_u32(block, OFF_EPOCH, self.epoch);
        put_u16(block, OFF_DATA_LEN, self.data_len);
        put_u16(block, OFF_RESERVED, 0);
        put_u64(block, OFF_SYNC_LSN, self.sync_lsn);
        block[OFF_PAYLOAD + usize::from(self.data_len)..OFF_CRC].fill(0);
        seal(block);
        debug_assert!(block_crc_ok(block) && BlockHeader::read(block) == *self);
    }

    /// LSN of the first payload byte of this block.
    pub fn start_lsn(&self) -> Lsn {
        self.block_no * PAYLOAD as u64
    }
}

/// The payload area of a block.
pub fn payload(block: &[u8]) -> &[u8] {
    &block[OFF_PAYLOAD..OFF_PAYLOAD + PAYLOAD]
}

/// How the data areas of the files form one circle of blocks.
///
/// ```text
///   circle offset c = (block_no mod blocks_in_circle) * 512
///   file   = c / data_area_bytes
///   offset = data_start_bytes + c mod data_area_bytes
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Geometry {
    pub n_files: u32,
    /// Where the data area starts in each file: the 2048-byte header
    /// rounded up to the write-ahead size at creation.
    pub data_start_bytes: u64,
    /// Bytes of log blocks per file; a multiple of 512 (and of the
    /// write-ahead size at creation).
    pub data_area_bytes: u64,
}

impl Geometry {
    /// The geometry a new log of `capacity_bytes` gets.
    pub fn for_capacity(capacity_bytes: u64, write_ahead_bytes: u32) -> Result<Geometry> {
        check_write_ahead(write_ahead_bytes)?;
        let wa = u64::from(write_ahead_bytes);
        let data_start_bytes = FILE_HEADER_BYTES.div_ceil(wa) * wa;
        let per_file_bytes = capacity_bytes / u64::from(N_FILES);
        let data_area_bytes = per_file_bytes.saturating_sub(data_start_bytes) / wa * wa;
        // At least 8 write-ahead units per file, so the circle is not all
        // padding; 8 MiB (the smallest innodb_redo_log_capacity) gives 31
        // units of 8 KiB.
        if data_area_bytes < 8 * wa {
            return Err(StorageError::Config(format!(
                "innodb_redo_log_capacity = {capacity_bytes} is too small for \
                 innodb_log_write_ahead_size = {write_ahead_bytes}: each of the {N_FILES} redo \
                 files needs at least {} bytes",
                data_start_bytes + 8 * wa
            )));
        }
        Ok(Geometry {
            n_files: N_FILES,
            data_start_bytes,
            data_area_bytes,
        })
    }

    pub fn blocks_per_file(&self) -> u64 {
        self.data_area_bytes / BLOCK_BYTES as u64
    }

    pub fn blocks_in_circle(&self) -> u64 {
        u64::from(self.n_files) * self.blocks_per_file()
    }

    /// Payload bytes the circle holds: the LSN distance after which a block
    /// slot is reused.
    pub fn capacity_lsn(&self) -> u64 {
        self.blocks_in_circle() * PAYLOAD as u64
    }

    /// Size of each file on disk.
    pub fn file_bytes(&self) -> u64 {
        self.data_start_bytes + self.data_area_bytes
    }

    /// Total size of the redo files (what innodb_redo_log_capacity means).
    pub fn total_bytes(&self) -> u64 {
        u64::from(self.n_files) * self.file_bytes()
    }

    /// Index of a block within its file's data area.
    pub fn index_in_file(&self, block_no: u64) -> u64 {
        (block_no % self.blocks_in_circle()) % self.blocks_per_file()
    }

    /// Where block `block_no` lives: (file index, byte offset in the file).
    pub fn locate(&self, block_no: u64) -> (usize, u64) {
        let slot = block_no % self.blocks_in_circle();
        let file = slot / self.blocks_per_file();
        let offset = self.data_start_bytes + (slot % self.blocks_per_file()) * BLOCK_BYTES as u64;
        (file as usize, offset)
    }

    /// How many blocks starting at `block_no` are contiguous in its file.
    pub fn run_in_file(&self, block_no: u64) -> u64 {
        self.blocks_per_file() - self.index_in_file(block_no)
    }
}

/// Checks an `innodb_log_write_ahead_size` value.
pub fn check_write_ahead(write_ahead_bytes: u32) -> Result<()> {
    if !write_ahead_bytes.is_power_of_two()
        || !(MIN_WRITE_AHEAD_BYTES..=MAX_WRITE_AHEAD_BYTES).contains(&write_ahead_bytes)
    {
        return Err(StorageError::Config(format!(
            "innodb_log_write_ahead_size = {write_ahead_bytes}: must be a power of two \
             between {MIN_WRITE_AHEAD_BYTES} and {MAX_WRITE_AHEAD_BYTES}"
        )));
    }
    Ok(())
}

/// Block 0 of every redo file.
///
/// ```text
///   0  8  magic "QUIREDO1"
///   8  4  format version
///  12  4  file index
///  16  4  n_files
///  20  4  write-ahead size at creation (informational)
///  24  8  data_start_bytes
///  32  8  data_area_bytes
/// 508  4  crc32c of [0, 508)
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileHeader {
    pub file_index: u32,
    pub geometry: Geometry,
    pub write_ahead_bytes: u32,
}

impl FileHeader {
    pub fn encode(&self) -> [u8; BLOCK_BYTES] {
        let mut b = [0u8; BLOCK_BYTES];
        b[..8].copy_from_slice(MAGIC);
        put_u32(&mut b, 8, FORMAT_VERSION);
        put_u32(&mut b, 12, self.file_index);
        put_u32(&mut b, 16, self.geometry.n_files);
        put_u32(&mut b, 20, self.write_ahead_bytes);
        put_u64(&mut b, 24, self.geometry.data_start_bytes);
        put_u64(&mut b, 32, self.geometry.data_area_bytes);
        seal(&mut b);
        b
    }

    /// Decodes and sanity-checks a header block; the error says what is
    /// wrong (the caller adds the path).
    pub fn decode(b: &[u8]) -> std::result::Result<FileHeader, String> {
        if &b[..8] != MAGIC {
            return Err("not a quire redo file (bad magic)".to_string());
        }
        if !block_crc_ok(b) {
            return Err("header checksum mismatch".to_string());
        }
        let version = get_u32(b, 8);
        if version != FORMAT_VERSION {
            return Err(format!(
                "redo format version {version}, this build reads {FORMAT_VERSION}"
            ));
        }
        let h = FileHeader {
            file_index: get_u32(b, 12),
            geometry: Geometry {
                n_files: get_u32(b, 16),
                data_start_bytes: get_u64(b, 24),
                data_area_bytes: get_u64(b, 32),
            },
            write_ahead_bytes: get_u32(b, 20),
        };
        let g = h.geometry;
        if g.n_files != N_FILES {
            return Err(format!(
                "header says {} files, expected {N_FILES}",
                g.n_files
            ));
        }
        if g.data_start_bytes < FILE_HEADER_BYTES
            || !g.data_start_bytes.is_multiple_of(BLOCK_BYTES as u64)
            || g.data_area_bytes == 0
            || !g.data_area_bytes.is_multiple_of(BLOCK_BYTES as u64)
        {
            return Err(format!(
                "impossible geometry: data area of {} bytes at offset {}",
                g.data_area_bytes, g.data_start_bytes
            ));
        }
        Ok(h)
    }
}

/// A checkpoint slot (blocks 1 and 3 of file 0).
///
/// ```text
///   0  8  checkpoint_no
///   8  8  checkpoint_lsn
///  16  4  epoch
/// 508  4  crc32c of [0, 508)
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CheckpointRecord {
    pub checkpoint_no: u64,
    pub checkpoint_lsn: Lsn,
    pub epoch: u32,
}

impl CheckpointRecord {
    /// Offset in file 0 of the slot this checkpoint goes to: slots
    /// alternate by checkpoint_no parity, so a torn write can only destroy
    /// the slot being written, never the previous checkpoint.
    pub fn slot_offset(&self) -> u64 {
        CHECKPOINT_SLOT_OFFSETS[(self.checkpoint_no % 2) as usize]
    }

    pub fn encode(&self) -> [u8; BLOCK_BYTES] {
        let mut b = [0u8; BLOCK_BYTES];
        put_u64(&mut b, 0, self.checkpoint_no);
        put_u64(&mut b, 8, self.checkpoint_lsn);
        put_u32(&mut b, 16, self.epoch);
        seal(&mut b);
        b
    }

    /// `None` when the slot's checksum fails (never written, or torn).
    pub fn decode(b: &[u8]) -> Option<CheckpointRecord> {
        if !block_crc_ok(b) {
            return None;
        }
        Some(CheckpointRecord {
            checkpoint_no: get_u64(b, 0),
            checkpoint_lsn: get_u64(b, 8),
            epoch: get_u32(b, 16),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_stamp_and_read_back() {
        let mut b = [0xAAu8; BLOCK_BYTES];
        let h = BlockHeader {
            block_no: 77,
            epoch: 3,
            data_len: 100,
            sync_lsn: 12345,
        };
        h.stamp(&mut b);
        assert!(block_crc_ok(&b));
        assert_eq!(BlockHeader::read(&b), h);
        // The unused payload tail is zeroed; the used part is kept.
        assert!(payload(&b)[..100].iter().all(|&x| x == 0xAA));
        assert!(payload(&b)[100..].iter().all(|&x| x == 0));
        b[300] ^= 1;
        assert!(!block_crc_ok(&b));
        // An all-zero block (write-ahead padding) never passes.
        assert!(!block_crc_ok(&[0u8; BLOCK_BYTES]));
    }

    #[test]
    fn geometry_minimum_capacity() {
        let g = Geometry::for_capacity(8 << 20, 8192).expect("8 MiB is valid");
        assert_eq!(g.data_start_bytes, 8192);
        assert_eq!(g.data_area_bytes, 31 * 8192);
        assert_eq!(g.blocks_per_file(), 31 * 16);
        assert!(g.total_bytes() <= 8 << 20);
        let g512 = Geometry::for_capacity(8 << 20, 512).expect("valid");
        assert_eq!(g512.data_start_bytes, 2048);
        assert_eq!(g512.data_area_bytes, (262_144 - 2048) / 512 * 512);
        // Mapping: consecutive blocks fill file 0, then file 1, ..., then wrap.
        let n = g.blocks_in_circle();
        assert_eq!(g.locate(0), (0, 8192));
        assert_eq!(g.locate(1), (0, 8192 + 512));
        assert_eq!(g.locate(g.blocks_per_file()), (1, 8192));
        assert_eq!(g.locate(n - 1), (31, 8192 + g.data_area_bytes - 512));
        assert_eq!(g.locate(n), (0, 8192));
        assert_eq!(g.run_in_file(g.blocks_per_file() - 3), 3);
        assert!(Geometry::for_capacity(64 << 10, 8192).is_err());
        assert!(Geometry::for_capacity(8 << 20, 1000).is_err());
    }

    #[test]
    fn header_and_checkpoint_round_trip() {
        let g = Geometry::for_capacity(8 << 20, 4096).expect("valid");
        let h = FileHeader {
            file_index: 5,
            geometry: g,
            write_ahead_bytes: 4096,
        };
        assert_eq!(FileHeader::decode(&h.encode()), Ok(h));
        let mut bad = h.encode();
        bad[30] ^= 1;
        assert!(FileHeader::decode(&bad).is_err());
        let c = CheckpointRecord {
            checkpoint_no: 9,
            checkpoint_lsn: 1 << 40,
            epoch: 2,
        };
        assert_eq!(CheckpointRecord::decode(&c.encode()), Some(c));
        assert_eq!(c.slot_offset(), CHECKPOINT_SLOT_OFFSETS[1]);
        assert_eq!(CheckpointRecord::decode(&[0u8; BLOCK_BYTES]), None);
    }
}
