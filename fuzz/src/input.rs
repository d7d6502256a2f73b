//! A tiny byte consumer: every read succeeds (zeros once the input is
//! used up), so generation is total and deterministic in the input.

pub struct Input<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Input<'a> {
    pub fn new(data: &'a [u8]) -> Input<'a> {
        Input { data, pos: 0 }
    }

    pub fn is_empty(&self) -> bool {
        self.pos >= self.data.len()
    }

    pub fn remaining(&self) -> usize {
        self.data.len().saturating_sub(self.pos)
    }

    pub fn u8(&mut self) -> u8 {
        let b = self.data.get(self.pos).copied().unwrap_or(0);
        self.pos += 1;
        b
    }

    pub fn u16(&mut self) -> u16 {
        u16::from_le_bytes([self.u8(), self.u8()])
    }

    pub fn u32(&mut self) -> u32 {
        u32::from_le_bytes([self.u8(), self.u8(), self.u8(), self.u8()])
    }

    pub fn u64(&mut self) -> u64 {
        u64::from(self.u32()) | (u64::from(self.u32()) << 32)
    }

    /// A number in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        if n <= 256 {
            self.u8() as usize % n
        } else {
            self.u32() as usize % n
        }
    }

    /// True with probability about `num/den` (false once the input is
    /// used up).
    pub fn chance(&mut self, num: u8, den: u8) -> bool {
        (self.u8() % den) >= den - num
    }

    pub fn pick<'t, T>(&mut self, items: &'t [T]) -> &'t T {
        &items[self.below(items.len())]
    }

    /// Up to `max` raw bytes.
    pub fn bytes(&mut self, max: usize) -> &'a [u8] {
        let n = self.below(max + 1).min(self.remaining());
        let start = self.pos.min(self.data.len());
        self.pos = start + n;
        &self.data[start..start + n]
    }

    /// Everything not consumed yet.
    pub fn rest(&mut self) -> &'a [u8] {
        let start = self.pos.min(self.data.len());
        self.pos = self.data.len();
        &self.data[start..]
    }
}
