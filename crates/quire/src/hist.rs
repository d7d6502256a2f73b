//! A bounded log-linear latency histogram (HDR-style, ~3% precision).
//!
//! Values (nanoseconds) fall into 64 power-of-two ranges, each split into
//! 32 linear sub-buckets, so memory is fixed (2,048 counters) however many
//! operations a benchmark runs, and percentiles are read off the counts.

#[derive(Clone)]
pub struct Histogram {
    counts: Vec<u64>,
    total: u64,
    max: u64,
}

const SUB: u32 = 32;

fn bucket(v: u64) -> usize {
    if v < SUB as u64 {
        return v as usize;
    }
    let msb = 63 - v.leading_zeros(); // >= 5
    let shift = msb - 5;
    let sub = ((v >> shift) as u32) & (SUB - 1);
    ((msb - 4) * SUB + sub) as usize
}

fn bucket_value(b: usize) -> u64 {
    let b = b as u32;
    if b < SUB {
        return b as u64;
    }
    let msb = b / SUB + 4;
    let sub = b % SUB;
    let shift = msb - 5;
    ((SUB + sub) as u64) << shift
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram {
            counts: vec![0; (64 * SUB) as usize],
            total: 0,
            max: 0,
        }
    }
}

impl Histogram {
    pub fn record(&mut self, ns: u64) {
        self.counts[bucket(ns)] += 1;
        self.total += 1;
        self.max = self.max.max(ns);
    }
    pub fn merge(&mut self, o: &Histogram) {
        for (a, b) in self.counts.iter_mut().zip(&o.counts) {
            *a += b;
        }
        self.total += o.total;
        self.max = self.max.max(o.max);
    }
    pub fn count(&self) -> u64 {
        self.total
    }
    /// The value at quantile q (0..=1), in nanoseconds.
    pub fn quantile(&self, q: f64) -> u64 {
        if self.total == 0 {
            return 0;
        }
        let want = ((self.total as f64) * q).ceil().max(1.0) as u64;
        if want >= self.total {
            return self.max;
        }
        let mut seen = 0;
        for (i, c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= want {
                return bucket_value(i).min(self.max);
            }
        }
        self.max
    }
    #[allow(dead_code)]
    pub fn max(&self) -> u64 {
        self.max
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_are_close() {
        let mut h = Histogram::default();
        for v in 1..=100_000u64 {
            h.record(v * 10);
        }
        let p50 = h.quantile(0.5) as f64;
        let p99 = h.quantile(0.99) as f64;
        assert!((p50 / 500_000.0 - 1.0).abs() < 0.04, "{p50}");
        assert!((p99 / 990_000.0 - 1.0).abs() < 0.04, "{p99}");
        assert_eq!(h.quantile(1.0), 1_000_000);
        for v in [0u64, 1, 31, 32, 33, 1000, u64::MAX / 2] {
            let b = bucket(v);
            assert!(
                bucket_value(b) <= v && (v == 0 || bucket_value(b) as f64 >= v as f64 * 0.96),
                "{v}"
            );
        }
    }
}
