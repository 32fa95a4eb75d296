//! Seeded random streams, one per component.
//!
//! Read first: nothing (a leaf). Owns the generator and the stream names ([`Stream`]); must not
//! know who draws from a stream or why (each component takes its own).
//!
//! Each flow or generator draws from its own stream derived from (scenario seed, stream id),
//! so adding a flow does not change any other flow's draws. The generator is xoshiro256++
//! seeded through SplitMix64 (Blackman & Vigna); both are a few lines, so results do not
//! depend on a crate's version.

/// SplitMix64 step: used to expand a (seed, stream) pair into a full generator state.
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Stream kinds, so that flow 3's start time and flow 3's jitter never share draws.
#[derive(Clone, Copy, Debug)]
pub enum Stream {
    Topology = 1,
    Flow = 2,
    Source = 3,
    Loss = 4,
    Jitter = 5,
    User = 6,
    /// A switch fabric's scheduler (PIM's random grants and accepts), by switch id.
    Fabric = 7,
    /// A queue discipline's random decisions (RED's early drops and marks), by hop.
    Queue = 8,
    /// A flow's congestion controller (BBR's ProbeBW starting phase), by flow.
    Cc = 9,
    /// Request sequences generated to check a model outside a scenario (the optical FIFO's
    /// arrivals and departures), by sequence.
    Requests = 10,
}

/// xoshiro256++ random generator.
#[derive(Clone, Debug)]
pub struct Rng {
    s: [u64; 4],
}

impl Rng {
    /// The stream `(kind, id)` of scenario `seed`.
    pub fn stream(seed: u64, kind: Stream, id: u64) -> Rng {
        let mut sm = seed ^ ((kind as u64) << 56) ^ id.wrapping_mul(0xA24B_AED4_963E_E407);
        // Mix twice so that neighbouring ids give unrelated states.
        splitmix64(&mut sm);
        let s = [splitmix64(&mut sm), splitmix64(&mut sm), splitmix64(&mut sm), splitmix64(&mut sm)];
        Rng { s }
    }

    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.s;
        let result = (s[0].wrapping_add(s[3])).rotate_left(23).wrapping_add(s[0]);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }

    /// Uniform in [0, 1) with 53 random bits.
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform integer in [lo, hi] (inclusive); exact, without modulo bias worth noting
    /// (128-bit multiply-shift, Lemire).
    pub fn range_u64(&mut self, lo: u64, hi: u64) -> u64 {
        if hi <= lo {
            return lo;
        }
        let span = (hi - lo) as u128 + 1;
        lo + ((self.next_u64() as u128 * span) >> 64) as u64
    }

    /// Exponential with the given mean (inverse transform).
    pub fn exponential(&mut self, mean: f64) -> f64 {
        // 1 - U is in (0, 1], so the log is finite.
        -mean * (1.0 - self.uniform()).ln()
    }

    /// True with probability p.
    pub fn bernoulli(&mut self, p: f64) -> bool {
        self.uniform() < p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_reproducible_and_distinct() {
        let a: Vec<u64> = (0..4).map(|_| Rng::stream(7, Stream::Flow, 3).next_u64()).collect();
        assert!(a.windows(2).all(|w| w[0] == w[1]));
        let mut x = Rng::stream(7, Stream::Flow, 3);
        let mut y = Rng::stream(7, Stream::Flow, 4);
        assert_ne!(x.next_u64(), y.next_u64());
    }

    #[test]
    fn uniform_mean_is_one_half() {
        // 100k draws: the standard error of the mean is 0.29/sqrt(1e5) ≈ 0.0009, so 0.005 is >5σ.
        let mut r = Rng::stream(1, Stream::Source, 0);
        let m: f64 = (0..100_000).map(|_| r.uniform()).sum::<f64>() / 100_000.0;
        assert!((m - 0.5).abs() < 0.005, "{m}");
    }
}
