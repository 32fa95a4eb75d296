//! QCN's congestion point (802.1Qau; see [`super`]): on a sampled arrival it computes
//! `Fb = -(Qoff + W·Qδ)`, with `Qoff = Q - Q_EQ` the queue's distance from its equilibrium and
//! `Qδ = Q - Qold` its growth since the last sample; a negative `Fb` sends the packet's source
//! a message carrying `|Fb|` quantized to 6 bits against its largest value `(1 + 2W)·Q_EQ`.
//!
//! Read first: [`super`]. Sampling is a coin per arriving packet: a fixed probability (the
//! seed's 20 % and 5 %), or the standard's, which rises with congestion from 1 % (no
//! feedback at the last sample) to 10 % (the largest). Queue sizes are bytes; the arithmetic
//! is integer. It must not know packets, flows or the bump around it.

use buflab_base::rng::Rng;

use super::FB_MAX;

/// How arrivals are sampled.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Sampling {
    /// The standard's: 1 % plus 9 % times the last quantized feedback over its largest.
    Standard,
    /// Each arrival with this probability.
    Fixed(f64),
}

/// A congestion point's settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CpSpec {
    /// `Q_EQ`: the queue it steers to, bytes.
    pub q_eq: u64,
    /// `W`: the weight of the queue's growth against its offset.
    pub w: u32,
    pub sampling: Sampling,
}

/// What it counted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CpStats {
    pub samples: u64,
    /// Messages sent (samples with negative feedback), and their quantized feedback summed.
    pub messages: u64,
    pub feedback_sum: u64,
}

impl CpStats {
    pub fn add(&mut self, o: &CpStats) {
        self.samples += o.samples;
        self.messages += o.messages;
        self.feedback_sum += o.feedback_sum;
    }
}

#[derive(Clone, Debug)]
pub struct CongestionPoint {
    spec: CpSpec,
    rng: Rng,
    /// The queue at the last sample, bytes.
    q_old: u64,
    /// The quantized feedback of the last sample (0 if it sent none), for standard sampling.
    last_fb: u8,
    pub stats: CpStats,
}

impl CongestionPoint {
    /// A congestion point drawing its samples from `rng` (a stream of its own).
    pub fn new(spec: CpSpec, rng: Rng) -> CongestionPoint {
        assert!(spec.q_eq > 0, "Q_EQ is positive");
        CongestionPoint { spec, rng, q_old: 0, last_fb: 0, stats: CpStats::default() }
    }

    /// A packet arrives and finds `queue` bytes queued (itself included): the quantized
    /// feedback (1 to 63) for its source if it was sampled and the queue is congested.
    pub fn on_arrival(&mut self, queue: u64) -> Option<u8> {
        let p = match self.spec.sampling {
            Sampling::Fixed(p) => p,
            Sampling::Standard => 0.01 + 0.09 * f64::from(self.last_fb) / f64::from(FB_MAX),
        };
        if !self.rng.bernoulli(p) {
            return None;
        }
        self.stats.samples += 1;
        let fb = feedback(self.spec, queue, self.q_old);
        self.q_old = queue;
        self.last_fb = fb;
        if fb == 0 {
            return None;
        }
        self.stats.messages += 1;
        self.stats.feedback_sum += u64::from(fb);
        Some(fb)
    }
}

/// `|Fb|` quantized to 1..=63 when `Fb = -(Qoff + W·Qδ)` is negative, else 0; rounded up, so
/// that any congestion sends a message, and capped at the largest value `(1 + 2W)·Q_EQ`.
pub fn feedback(spec: CpSpec, queue: u64, q_old: u64) -> u8 {
    let q_off = queue as i128 - spec.q_eq as i128;
    let q_delta = queue as i128 - q_old as i128;
    let fb = -(q_off + i128::from(spec.w) * q_delta);
    if fb >= 0 {
        return 0;
    }
    let fb_max = (1 + 2 * i128::from(spec.w)) * spec.q_eq as i128;
    let q = (-fb * i128::from(FB_MAX) + fb_max - 1) / fb_max;
    q.min(i128::from(FB_MAX)) as u8
}

#[cfg(test)]
mod tests {
    use super::*;
    use buflab_base::rng::Stream;

    const SPEC: CpSpec = CpSpec { q_eq: 15_000, w: 2, sampling: Sampling::Fixed(1.0) };

    #[test]
    fn feedback_follows_offset_and_growth_exactly() {
        // At equilibrium and steady: no congestion, no message.
        assert_eq!(feedback(SPEC, 15_000, 15_000), 0);
        // Below equilibrium and draining: none either.
        assert_eq!(feedback(SPEC, 10_000, 12_000), 0);
        // 1500 B above Q_EQ, steady: Fb = -1500, |Fb|·63 / 75000 = 1.26, rounded up to 2.
        assert_eq!(feedback(SPEC, 16_500, 16_500), 2);
        // Growth counts twice: 1500 above and 3000 up since the last sample: Fb = -7500,
        // 7500·63 / 75000 = 6.3 → 7.
        assert_eq!(feedback(SPEC, 16_500, 13_500), 7);
        // At equilibrium but growing fast still signals: Fb = -2·6000 → 12000·63/75000 = 10.08 → 11.
        assert_eq!(feedback(SPEC, 15_000, 9_000), 11);
        // Below equilibrium but growing faster than the offset: Fb = -(-1000 + 2·3000) → 4.2 → 5.
        assert_eq!(feedback(SPEC, 14_000, 11_000), 5);
        // The largest value and beyond saturate at 63.
        assert_eq!(feedback(SPEC, 45_000, 15_000), 63);
        assert_eq!(feedback(SPEC, 90_000, 0), 63);
    }

    #[test]
    fn sampling_everything_sends_what_feedback_says_and_counts_it() {
        let mut cp = CongestionPoint::new(SPEC, Rng::stream(1, Stream::Queue, 0));
        // From an empty queue: Fb = -(1500 + 2·16500) = -34500 → 28.98 → 29.
        assert_eq!(cp.on_arrival(16_500), Some(29));
        assert_eq!(cp.on_arrival(16_500), Some(2));
        assert_eq!(cp.on_arrival(10_000), None);
        assert_eq!(cp.stats, CpStats { samples: 3, messages: 2, feedback_sum: 31 });
    }

    #[test]
    fn sampling_probability_holds_over_many_arrivals() {
        // 5 % of 200,000 arrivals: 10,000 expected, standard deviation about 97; 5 sigma.
        let spec = CpSpec { sampling: Sampling::Fixed(0.05), ..SPEC };
        let mut cp = CongestionPoint::new(spec, Rng::stream(2, Stream::Queue, 0));
        for _ in 0..200_000 {
            cp.on_arrival(15_000);
        }
        assert!((cp.stats.samples as i64 - 10_000).abs() < 500, "{}", cp.stats.samples);
        // The standard's sampling at equilibrium (no feedback) is its floor, 1 %: 2000 ± 5σ (220).
        let spec = CpSpec { sampling: Sampling::Standard, ..SPEC };
        let mut cp = CongestionPoint::new(spec, Rng::stream(3, Stream::Queue, 0));
        for _ in 0..200_000 {
            cp.on_arrival(15_000);
        }
        assert!((cp.stats.samples as i64 - 2_000).abs() < 220, "{}", cp.stats.samples);
    }
}
