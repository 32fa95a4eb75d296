//! The seed's token thread (NetBump seed §5.4): tokens are generated on a fixed fine grid
//! (the seed: every 2.71 µs), independent of arrivals, at a rate that feedback may change;
//! a packet leaves at the first tick that covers it.
//!
//! Read first: [`super::Pacer`] and [`super::Tokens`]. The grid is absolute (ticks at
//! k·`tick` from time 0), as a dedicated thread's would be. A rate change takes effect from
//! the next tick. Tokens never exceed the depth; the bucket starts full. A coarse tick turns
//! it into a shaper that releases bursts (a host's qdisc timer), which the recipes use to
//! model a 10 Gb/s host limited to 1 Gb/s.

use buflab_base::units::{Rate, Time};

use super::{Bucket, Pacer, Tokens};

#[derive(Clone, Debug)]
pub struct TokenThread {
    rate: Option<Rate>,
    tick: Time,
    bucket: Bucket,
    /// The index of the last tick counted.
    last_tick: u64,
}

impl TokenThread {
    pub fn new(rate: Option<Rate>, depth_bytes: u64, tick: Time) -> TokenThread {
        assert!(tick > Time::ZERO, "the tick is positive");
        TokenThread { rate, bucket: Bucket::full(depth_bytes), tick, last_tick: 0 }
    }

    fn run_ticks(&mut self, now: Time) {
        let k = now.ps() / self.tick.ps();
        if k > self.last_tick {
            if let Some(rate) = self.rate {
                let per_tick = Tokens::earned(rate, self.tick);
                self.bucket.add(per_tick.times(k - self.last_tick));
            }
            self.last_tick = k;
        }
    }
}

impl Pacer for TokenThread {
    fn release_at(&mut self, now: Time, size: u32) -> Time {
        let Some(rate) = self.rate else { return now };
        self.run_ticks(now);
        match self.bucket.ticks_until(size, Tokens::earned(rate, self.tick)) {
            0 => now,
            ticks => Time((self.last_tick + ticks) * self.tick.ps()),
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

    #[test]
    fn releases_on_the_grid_and_follows_a_new_rate() {
        // 1 Gb/s, ticks of 2.71 µs (338.75 B each), empty bucket: a 1514-B packet needs 5
        // ticks (4.47), leaving at 13.55 µs; the next after 4 or 5 more.
        let mut t = TokenThread::new(Some(Rate::gbps(1)), 4500, Time::from_ns(2710));
        t.bucket.empty();
        let first = t.release_at(Time::ZERO, 1514);
        assert_eq!(first, Time::from_ns(5 * 2710));
        t.on_departure(first, 1514);
        let second = t.release_at(first, 1514);
        assert_eq!(second, Time::from_ns(9 * 2710));
        // Ten times the rate from there: the next packet needs one tick.
        t.on_departure(second, 1514);
        t.set_rate(second, Rate::gbps(10));
        assert_eq!(t.release_at(second, 1514), Time::from_ns(10 * 2710));
    }

    #[test]
    fn a_coarse_tick_turns_it_into_a_bursty_shaper() {
        // A host limited to 1 Gb/s by a 40-µs timer: 5,000 B per tick, three 1514-B packets
        // at each tick, then none until the next.
        let mut t = TokenThread::new(Some(Rate::gbps(1)), 5000, Time::from_us(40));
        t.bucket.empty();
        let mut now = Time::ZERO;
        let mut out = Vec::new();
        for _ in 0..6 {
            now = t.release_at(now, 1514);
            t.on_departure(now, 1514);
            out.push(now.ps() / 1_000_000); // µs
        }
        assert_eq!(out, vec![40, 40, 40, 80, 80, 80]);
    }
}
