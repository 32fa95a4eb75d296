//! The seed's modified token bucket (NetBump seed §5.3.4, Fig 5.5): tokens are added at two
//! kinds of event, and packets leave only at those events.
//!
//! Read first: [`super::Pacer`] and [`super::Tokens`]. A TCP flow reaching the bump over a
//! fast link comes in bursts (1.5 µs apart at 10 Gb/s) separated by idle gaps (~40 µs): a
//! classic bucket, adding tokens only when packets arrive, adds the whole gap's tokens at
//! the next burst and lets the burst through. The modified bucket adds tokens
//! - at every arrival (the *primary* event), for the time since the last event, but never
//!   more than `cap` of it (the seed: 5 µs);
//! - at *secondary* events, idle polls every `tick` after the last event while nothing
//!   arrives (the seed: ten empty receive polls, about 4.5–4.8 µs),
//!
//! never above the bucket's `depth` (the seed: 4,500 bytes, three packets), and hands the
//! packets its tokens cover to the sender at those events only. The secondary events'
//! grid restarts at every arrival ("the estimated timestamp is reset to the timestamp for
//! the packet received"). So a queued burst leaves one packet per the rate's worth of ticks,
//! on the tick grid: at 1 Gb/s with 4.5-µs ticks, gaps of 9 and 13.5 µs around the 12-µs
//! mean, the seed's "minimum gap about 10 µs, maximum about 20 µs".
//!
//! A packet larger than the depth waits for a full bucket.

use buflab_base::units::{Rate, Time};

use super::{Bucket, Pacer, Tokens};

#[derive(Clone, Debug)]
pub struct ModifiedTokenBucket {
    rate: Option<Rate>,
    tick: Time,
    cap: Time,
    bucket: Bucket,
    /// The last event, primary or secondary: the secondary events follow it every `tick`.
    last_event: Time,
}

impl ModifiedTokenBucket {
    /// A bucket `depth_bytes` deep at `rate`, secondary events every `tick`, each addition
    /// capped at `cap` of elapsed time. Starts full.
    pub fn new(rate: Option<Rate>, depth_bytes: u64, tick: Time, cap: Time) -> ModifiedTokenBucket {
        assert!(tick > Time::ZERO && cap > Time::ZERO, "tick and cap are positive");
        ModifiedTokenBucket { rate, bucket: Bucket::full(depth_bytes), tick, cap, last_event: Time::ZERO }
    }

    /// What one addition over `elapsed` brings.
    fn earned(&self, rate: Rate, elapsed: Time) -> Tokens {
        Tokens::earned(rate, elapsed.min(self.cap))
    }

    /// Runs the secondary events due by `now`.
    fn run_ticks(&mut self, now: Time) {
        let Some(rate) = self.rate else { return };
        if now <= self.last_event {
            return;
        }
        let n = (now - self.last_event).ps() / self.tick.ps();
        if n > 0 {
            let per_tick = self.earned(rate, self.tick);
            // Every addition is capped by the depth; adding them at once and capping once is the
            // same, since they only ever raise the count.
            self.bucket.add(per_tick.times(n));
            self.last_event += Time(n * self.tick.ps());
        }
    }
}

impl Pacer for ModifiedTokenBucket {
    fn on_arrival(&mut self, now: Time, _size: u32) {
        self.run_ticks(now);
        if let Some(rate) = self.rate {
            if now > self.last_event {
                self.bucket.add(self.earned(rate, now - self.last_event));
            }
        }
        self.last_event = self.last_event.max(now);
    }

    fn release_at(&mut self, now: Time, size: u32) -> Time {
        let Some(rate) = self.rate else { return now };
        self.run_ticks(now);
        match self.bucket.ticks_until(size, self.earned(rate, self.tick)) {
            0 => now,
            ticks => self.last_event + Time(ticks * self.tick.ps()),
        }
    }

    fn on_departure(&mut self, now: Time, size: u32) {
        self.run_ticks(now);
        self.bucket.spend(size);
    }

    fn set_rate(&mut self, now: Time, rate: Rate) {
        self.run_ticks(now);
        self.rate = Some(rate);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seed_bucket() -> ModifiedTokenBucket {
        // The seed's Fig 5.5: 4,500 B deep; 550 B per secondary event every 4.5 µs is
        // 977.8 Mb/s; here 1 Gb/s with 4.5-µs ticks (562.5 B a tick), capped at 5 µs.
        ModifiedTokenBucket::new(Some(Rate::gbps(1)), 4500, Time::from_ns(4500), Time::from_us(5))
    }

    #[test]
    fn a_queued_burst_leaves_on_the_tick_grid_at_the_rate() {
        // Eight 1514-B packets arrive together at t = 0 with the bucket empty.
        let mut b = seed_bucket();
        b.bucket.empty();
        b.on_arrival(Time::ZERO, 1514);
        let mut t = Time::ZERO;
        let mut departures = Vec::new();
        for _ in 0..8 {
            t = b.release_at(t, 1514);
            b.on_departure(t, 1514);
            departures.push(t.ps() / 1000); // ns
        }
        // 1514 B need 2.69 ticks of 562.5 B: 3 ticks, then the remainders carry over.
        assert_eq!(departures, vec![13_500, 27_000, 40_500, 49_500, 63_000, 76_500, 85_500, 99_000]);
        let gaps: Vec<u64> = departures.windows(2).map(|w| w[1] - w[0]).collect();
        assert!(gaps.iter().all(|&g| g == 9_000 || g == 13_500), "{gaps:?}");
        // The mean rate is the bucket's: 7 gaps of 1514 B in 85.5 µs ≈ 0.99 Gb/s, the
        // remainders carrying over from packet to packet.
        let rate: f64 = 7.0 * 1514.0 * 8.0 / 85_500e-9;
        assert!((rate / 1e9 - 1.0).abs() < 0.01, "{rate}");
    }

    #[test]
    fn an_arrival_after_idleness_adds_at_most_cap_of_tokens_but_ticks_fill_the_bucket() {
        // Empty at t = 0; nothing arrives for 40 µs, so the idle polls fill the bucket to its
        // depth (4,500 B): a burst of two 1514-B packets at 40 µs goes at once, and the third
        // needs more.
        let mut b = seed_bucket();
        b.bucket.empty();
        for _ in 0..3 {
            b.on_arrival(Time::from_us(40), 1514);
        }
        for _ in 0..2 {
            assert_eq!(b.release_at(Time::from_us(40), 1514), Time::from_us(40));
            b.on_departure(Time::from_us(40), 1514);
        }
        // 4,500 − 2 × 1,514 = 1,472 B left: the third waits for the next secondary event,
        // one tick after the arrival (the grid restarts at every arrival).
        assert_eq!(b.release_at(Time::from_us(40), 1514), Time::from_ns(44_500));
    }
}
