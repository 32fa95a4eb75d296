//! How faithful the emulation was: how late each frame left against its ideal time (its
//! exit from the bottleneck plus its delay), as Mininet-HiFi measured its own fidelity.
//!
//! Read first: nothing. Lateness is kept in a histogram of 1-µs buckets up to 10 ms (and one
//! beyond), enough for the shares within 1 µs and 10 µs and the 99th percentile the summary
//! prints, with no allocation per frame.

use buflab_base::units::Time;

const BUCKETS: usize = 10_000;

pub struct Lateness {
    /// Frames by lateness in whole microseconds; the last bucket: 10 ms or more.
    buckets: Vec<u64>,
    pub count: u64,
    pub max: Time,
    sum_ps: u128,
}

impl Default for Lateness {
    fn default() -> Self {
        Lateness { buckets: vec![0; BUCKETS + 1], count: 0, max: Time::ZERO, sum_ps: 0 }
    }
}

impl Lateness {
    /// A frame due at `due` left at `sent`.
    pub fn record(&mut self, due: Time, sent: Time) {
        let late = if sent > due { sent - due } else { Time::ZERO };
        let us = (late.ps() / 1_000_000) as usize;
        self.buckets[us.min(BUCKETS)] += 1;
        self.count += 1;
        self.max = self.max.max(late);
        self.sum_ps += late.ps() as u128;
    }

    /// The share of frames less than `us` microseconds late.
    pub fn within_us(&self, us: usize) -> f64 {
        if self.count == 0 {
            return f64::NAN;
        }
        self.buckets[..us.min(BUCKETS)].iter().sum::<u64>() as f64 / self.count as f64
    }

    /// The `q` quantile of lateness, seconds, to the bucket's upper edge (1 µs).
    pub fn quantile_s(&self, q: f64) -> f64 {
        if self.count == 0 {
            return f64::NAN;
        }
        let rank = (q * self.count as f64).ceil().max(1.0) as u64;
        let mut seen = 0;
        for (us, &n) in self.buckets.iter().enumerate() {
            seen += n;
            if seen >= rank {
                return (us + 1) as f64 * 1e-6;
            }
        }
        self.max.secs_f64()
    }

    pub fn mean_s(&self) -> f64 {
        if self.count == 0 {
            f64::NAN
        } else {
            self.sum_ps as f64 / self.count as f64 * 1e-12
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_and_quantiles_follow_the_recorded_lateness() {
        let mut l = Lateness::default();
        let due = Time::from_ms(1);
        for late_ns in [0u64, 500, 900, 1_500, 20_000] {
            l.record(due, due + Time::from_ns(late_ns));
        }
        l.record(due, due - Time::from_ns(3)); // early counts as on time
        assert_eq!(l.count, 6);
        assert_eq!(l.within_us(1), 4.0 / 6.0);
        assert_eq!(l.within_us(10), 5.0 / 6.0);
        assert_eq!(l.quantile_s(0.5), 1e-6);
        assert_eq!(l.quantile_s(1.0), 21e-6);
        assert_eq!(l.max, Time::from_us(20));
    }
}
