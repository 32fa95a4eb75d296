//! The delay-based pacer (NetBump seed §5.3.3): each packet leaves one inter-packet time
//! after the previous one, the time the previous packet takes at the pacing rate.
//!
//! Read first: [`super::Pacer`]. The seed measured the flow's rate over windows of 1,000
//! packets and spaced packets by the inter-packet time it gives; here the rate comes from the
//! caller (a fixed rate, or one it measured: see [`crate::bump`]), and until there is one
//! packets go at once. It holds no tokens: after an idle period the next packet leaves at
//! once, and a burst that follows is spaced from it.

use buflab_base::units::{Rate, Time};

use super::Pacer;

#[derive(Clone, Debug)]
pub struct DelayPacer {
    rate: Option<Rate>,
    /// When the last packet left, and its size.
    last: Option<(Time, u32)>,
}

impl DelayPacer {
    pub fn new(rate: Option<Rate>) -> DelayPacer {
        DelayPacer { rate, last: None }
    }
}

impl Pacer for DelayPacer {
    fn release_at(&mut self, now: Time, _size: u32) -> Time {
        match (self.rate, self.last) {
            (Some(rate), Some((t, size))) => now.max(t + rate.serialization(size as u64)),
            _ => now,
        }
    }

    fn on_departure(&mut self, now: Time, size: u32) {
        self.last = Some((now, size));
    }

    fn set_rate(&mut self, _now: Time, rate: Rate) {
        self.rate = Some(rate);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spaces_a_burst_by_the_time_each_packet_takes_at_the_rate() {
        // 1514 B at 1 Gb/s take 12.112 µs: a burst of three at t = 0 leaves at 0, 12.112,
        // 24.224 µs; after an idle period the next goes at once.
        let mut p = DelayPacer::new(Some(Rate::gbps(1)));
        let mut t = Time::ZERO;
        let mut out = Vec::new();
        for _ in 0..3 {
            t = p.release_at(t, 1514);
            p.on_departure(t, 1514);
            out.push(t.ps());
        }
        assert_eq!(out, vec![0, 12_112_000, 24_224_000]);
        assert_eq!(p.release_at(Time::from_us(100), 1514), Time::from_us(100));
    }

    #[test]
    fn without_a_rate_nothing_waits() {
        let mut p = DelayPacer::new(None);
        p.on_departure(Time(5), 1500);
        assert_eq!(p.release_at(Time(6), 1500), Time(6));
        p.set_rate(Time(6), Rate::gbps(10));
        assert_eq!(p.release_at(Time(6), 1500), Time(5 + 1_200_000));
    }
}
