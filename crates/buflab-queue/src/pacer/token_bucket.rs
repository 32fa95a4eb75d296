//! The classic token bucket: tokens accrue with elapsed time at the pacing rate, up to the
//! bucket's depth, and a packet leaves as soon as its tokens are there.
//!
//! Read first: [`super::Pacer`] and [`super::Tokens`]. This is the comparison the seed makes
//! (§5.3.4): with arrivals as the only events, the tokens of an idle period all arrive at
//! the next one, so a deep bucket lets a burst through after every pause. The bucket starts
//! full. A packet larger than the depth waits for a full bucket.

use buflab_base::units::{Rate, Time};

use super::{Bucket, Pacer, Tokens};

#[derive(Clone, Debug)]
pub struct TokenBucket {
    rate: Option<Rate>,
    bucket: Bucket,
    /// When `tokens` was last brought up to date.
    last: Time,
}

impl TokenBucket {
    /// A bucket of `depth_bytes` bytes filling at `rate`.
    pub fn new(rate: Option<Rate>, depth_bytes: u64) -> TokenBucket {
        TokenBucket { rate, bucket: Bucket::full(depth_bytes), last: Time::ZERO }
    }

    fn refill(&mut self, now: Time) {
        if let Some(rate) = self.rate {
            if now > self.last {
                self.bucket.add(Tokens::earned(rate, now - self.last));
            }
        }
        self.last = self.last.max(now);
    }
}

impl Pacer for TokenBucket {
    fn release_at(&mut self, now: Time, size: u32) -> Time {
        let Some(rate) = self.rate else { return now };
        self.refill(now);
        now + self.bucket.shortfall(size).time_at(rate)
    }

    fn on_departure(&mut self, now: Time, size: u32) {
        self.refill(now);
        self.bucket.spend(size);
    }

    fn set_rate(&mut self, now: Time, rate: Rate) {
        self.refill(now);
        self.rate = Some(rate);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_bucket_lets_a_burst_go_then_paces_at_the_rate() {
        // 3000 B deep at 1 Gb/s (a byte takes 8,000 ps): two 1500-B packets go at
        // once, the third waits for 1500 B of tokens, 12 µs.
        let mut b = TokenBucket::new(Some(Rate::gbps(1)), 3000);
        let mut out = Vec::new();
        for _ in 0..3 {
            let t = b.release_at(Time::ZERO, 1500);
            b.on_departure(t, 1500);
            out.push(t.ps());
        }
        assert_eq!(out, vec![0, 0, 12_000_000]);
        // After 100 µs of idleness the bucket is full again: the burst comes back.
        assert_eq!(b.release_at(Time::from_us(112), 1500), Time::from_us(112));
        b.on_departure(Time::from_us(112), 1500);
        assert_eq!(b.release_at(Time::from_us(112), 1500), Time::from_us(112));
    }
}
