//! The seeded generator behind `random(SEED)` and `random(SEED, LO, HI)` buffer initialisers.
//!
//! It is SplitMix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number generators",
//! 2014): state `s` starts at `SEED`; each value is
//! `s += 0x9E3779B97F4A7C15; z = s; z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9;
//! z = (z ^ (z >> 27)) * 0x94D049BB133111EB; z ^ (z >> 31)`.
//! Element `i` of a buffer is the `i`-th value (0-based). `random(SEED)` keeps the low bits of
//! the element type (floats: `z >> 11` scaled to `[0, 1)`); `random(SEED, LO, HI)` maps `z` to
//! `LO + ((z as u128 * (HI - LO)) >> 64)`, an integer in `[LO, HI)`. The definition is fixed, so
//! values are the same on every machine and every version of atomjit.

/// The SplitMix64 stream.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64 { state: seed }
    }

    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// The next value mapped to `[lo, hi)` (requires `lo < hi`).
    pub fn next_in(&mut self, lo: i128, hi: i128) -> i128 {
        let range = (hi - lo) as u128;
        lo + ((self.next() as u128 * range) >> 64) as i128
    }

    /// The next value as a float in `[0, 1)`.
    pub fn next_unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_published_reference_values() {
        // Reference outputs of SplitMix64 seeded with 1234567 (from the algorithm's reference
        // implementation, also used by the Java SplittableRandom test suite).
        let mut g = SplitMix64::new(1234567);
        assert_eq!(g.next(), 6457827717110365317);
        assert_eq!(g.next(), 3203168211198807973);
        assert_eq!(g.next(), 9817491932198370423);
        assert_eq!(g.next(), 4593380528125082431);
        assert_eq!(g.next(), 16408922859458223821);
    }

    #[test]
    fn ranges_stay_inside() {
        let mut g = SplitMix64::new(7);
        for _ in 0..10_000 {
            let v = g.next_in(-3, 5);
            assert!((-3..5).contains(&v));
        }
    }
}
