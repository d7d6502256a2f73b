//! # A small deterministic PRNG
//!
//! Crash tests are only useful if a failure can be replayed: "seed
//! 0x5eed failed" must mean the same torn writes tomorrow, on another
//! machine, after a dependency upgrade. So quire carries its own generator
//! instead of depending on a crate whose algorithm or seeding could change
//! between versions. It is **not** cryptographic; it is for simulation.
//!
//! The algorithm is xoshiro256** (Blackman & Vigna, 2018): 256 bits of
//! state, period 2^256 - 1, fast, and statistically strong for everything a
//! test harness asks of it. The 64-bit seed is expanded into the four state
//! words with splitmix64, as the authors recommend, which also guarantees
//! the state is never all zeros.
//!
//! ```text
//!   seed --splitmix64 x4--> [s0 s1 s2 s3] --xoshiro256**--> u64, u64, ...
//!                                                  |
//!          below(n), range(lo, hi), chance(p), fill(buf) are built on it
//! ```
//!
//! The output sequence for a given seed is pinned by unit tests (including
//! the published reference vectors), so it must never change.

/// xoshiro256** seeded through splitmix64. Same seed, same sequence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rng {
    s: [u64; 4],
}

/// One step of splitmix64: advances `state` and returns the next output.
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl Rng {
    /// A generator whose whole future is determined by `seed`.
    pub fn new(seed: u64) -> Rng {
        let mut sm = seed;
        let s = [
            splitmix64(&mut sm),
            splitmix64(&mut sm),
            splitmix64(&mut sm),
            splitmix64(&mut sm),
        ];
        // splitmix64 is a bijection of its counter, so four consecutive
        // outputs are never all zero; xoshiro's one forbidden state cannot
        // occur.
        Rng { s }
    }

    /// Raw state constructor, for the reference test vectors.
    #[cfg(test)]
    fn from_state(s: [u64; 4]) -> Rng {
        Rng { s }
    }

    /// The next 64 uniformly distributed bits.
    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.s;
        let result = s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }

    /// A uniform value in `0..n`, without modulo bias (Lemire's
    /// multiply-and-reject method).
    ///
    /// # Panics
    ///
    /// If `n == 0`.
    pub fn below(&mut self, n: u64) -> u64 {
        assert!(n > 0, "Rng::below(0): empty range");
        let mut m = u128::from(self.next_u64()) * u128::from(n);
        let mut low = m as u64;
        if low < n {
            // Values of `low` below this threshold belong to a partial
            // bucket; rejecting them makes every result equally likely.
            let threshold = n.wrapping_neg() % n;
            while low < threshold {
                m = u128::from(self.next_u64()) * u128::from(n);
                low = m as u64;
            }
        }
        (m >> 64) as u64
    }

    /// A uniform value in `lo..hi`.
    ///
    /// # Panics
    ///
    /// If `lo >= hi`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        assert!(lo < hi, "Rng::range({lo}, {hi}): empty range");
        lo + self.below(hi - lo)
    }

    /// A uniform `f64` in `[0, 1)` with 53 random bits.
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// `true` with probability `p` (clamped to `[0, 1]`).
    pub fn chance(&mut self, p: f64) -> bool {
        // Always consume exactly one value, whatever `p` is, so the stream
        // position does not depend on the probability: a test that tweaks
        // one probability does not shift every later draw. `p >= 1` is
        // certain because next_f64() < 1; `p <= 0` never hits.
        let x = self.next_f64();
        x < p
    }

    /// Fills `buf` with random bytes (little-endian words).
    pub fn fill(&mut self, buf: &mut [u8]) {
        let mut chunks = buf.chunks_exact_mut(8);
        for chunk in &mut chunks {
            chunk.copy_from_slice(&self.next_u64().to_le_bytes());
        }
        let rest = chunks.into_remainder();
        if !rest.is_empty() {
            let word = self.next_u64().to_le_bytes();
            rest.copy_from_slice(&word[..rest.len()]);
        }
    }

    /// A new generator derived from this one (consumes one value). Handy to
    /// give each subsystem its own stream so that adding draws in one does
    /// not shift the others.
    pub fn fork(&mut self) -> Rng {
        Rng::new(self.next_u64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix64_reference() {
        // First output of splitmix64 seeded with 0 (reference value).
        let mut s = 0u64;
        assert_eq!(splitmix64(&mut s), 0xe220_a839_7b1d_cdaf);
    }

    #[test]
    fn xoshiro256starstar_reference_vectors() {
        // From the reference implementation with state {1, 2, 3, 4}
        // (the same vectors rand_xoshiro tests against).
        let mut r = Rng::from_state([1, 2, 3, 4]);
        let expected: [u64; 10] = [
            11520,
            0,
            1509978240,
            1215971899390074240,
            1216172134540287360,
            607988272756665600,
            16172922978634559625,
            8476171486693032832,
            10595114339597558777,
            2904607092377533576,
        ];
        for e in expected {
            assert_eq!(r.next_u64(), e);
        }
    }

    #[test]
    fn seeded_sequence_is_pinned() {
        // Pins the seeding; if this changes, every recorded crash seed
        // replays differently. Do not update these numbers casually.
        let mut a = Rng::new(42);
        let got: Vec<u64> = (0..3).map(|_| a.next_u64()).collect();
        let mut b = Rng::new(42);
        let again: Vec<u64> = (0..3).map(|_| b.next_u64()).collect();
        assert_eq!(got, again);
        assert_eq!(got, PINNED_SEED_42.to_vec());
        assert_ne!(Rng::new(43).next_u64(), got[0]);
    }

    const PINNED_SEED_42: [u64; 3] = [
        1546998764402558742,
        6990951692964543102,
        12544586762248559009,
    ];

    #[test]
    fn below_and_range_stay_in_bounds_and_cover() {
        let mut r = Rng::new(7);
        let mut seen = [0u32; 10];
        for _ in 0..10_000 {
            let v = r.below(10);
            seen[v as usize] += 1;
        }
        // Uniform-ish: each bucket near 1000.
        assert!(seen.iter().all(|&c| (800..1200).contains(&c)), "{seen:?}");
        for _ in 0..1000 {
            let v = r.range(5, 8);
            assert!((5..8).contains(&v));
        }
        assert_eq!(r.below(1), 0);
        // Large bounds exercise the rejection path.
        for _ in 0..1000 {
            assert!(r.below(u64::MAX - 3) < u64::MAX - 3);
        }
    }

    #[test]
    fn chance_extremes_and_mean() {
        let mut r = Rng::new(1);
        assert!((0..1000).all(|_| !r.chance(0.0)));
        assert!((0..1000).all(|_| r.chance(1.0)));
        let hits = (0..10_000).filter(|_| r.chance(0.25)).count();
        assert!((2200..2800).contains(&hits), "{hits}");
    }

    #[test]
    fn fill_is_deterministic_and_covers_tail() {
        let mut a = [0u8; 13];
        let mut b = [0u8; 13];
        Rng::new(9).fill(&mut a);
        Rng::new(9).fill(&mut b);
        assert_eq!(a, b);
        assert_ne!(a[8..], [0u8; 5]);
        let mut r = Rng::new(9);
        let w = r.next_u64().to_le_bytes();
        assert_eq!(a[..8], w);
    }

    #[test]
    #[should_panic(expected = "empty range")]
    fn below_zero_panics() {
        Rng::new(0).below(0);
    }
}
