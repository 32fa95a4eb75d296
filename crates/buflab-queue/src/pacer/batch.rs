//! Batching on a timer: every packet waits for the next tick of a fixed grid, and all those
//! waiting then go together, back to back at the port's rate. Not a pacer but its opposite:
//! what makes a host's traffic bursty whatever the ACK clock does.
//!
//! Read first: [`super::Pacer`]. The NetBump seed saw a 1 Gb/s TCP flow leave a 10 Gb/s host
//! in bursts about 40 µs apart with ~1.5 µs between the packets of a burst (Fig 5.3, "the
//! sender waiting for acknowledgment"): interrupt coalescing, segmentation offload and
//! timer-driven queues gather what the ACK clock would have spaced out. A bump of this kind at
//! the sender's access link stands for that host. It has no rate (a rate set on it is
//! ignored) and no tokens; the grid is absolute (ticks at k·`tick` from time 0). A packet may
//! go from the first tick at or after its arrival, so one arriving on a tick goes at once, and
//! all the packets a tick releases leave back to back, however long that takes.

use std::collections::VecDeque;

use buflab_base::units::{Rate, Time};

use super::Pacer;

#[derive(Clone, Debug)]
pub struct Batch {
    tick: Time,
    /// When each queued packet arrived, oldest first.
    arrivals: VecDeque<Time>,
}

impl Batch {
    pub fn new(tick: Time) -> Batch {
        assert!(tick > Time::ZERO, "the tick is positive");
        Batch { tick, arrivals: VecDeque::new() }
    }
}

impl Pacer for Batch {
    fn on_arrival(&mut self, now: Time, _size: u32) {
        self.arrivals.push_back(now);
    }

    fn release_at(&mut self, now: Time, _size: u32) -> Time {
        let arrived = self.arrivals.front().copied().unwrap_or(now);
        now.max(Time(arrived.ps().div_ceil(self.tick.ps()) * self.tick.ps()))
    }

    fn on_departure(&mut self, _now: Time, _size: u32) {
        self.arrivals.pop_front();
    }

    fn set_rate(&mut self, _now: Time, _rate: Rate) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packets_wait_for_the_next_tick_and_go_together() {
        // 40-µs ticks: arrivals at 3, 15 and 39 µs may all go from 40 µs, back to back (here
        // 1.2 µs apart, as a 10 Gb/s port sends them); one at 40 goes at once, one at 41
        // waits for 80.
        let mut b = Batch::new(Time::from_us(40));
        for at in [3, 15, 39] {
            b.on_arrival(Time::from_us(at), 1514);
        }
        let mut t = Time::from_us(39);
        let mut out = Vec::new();
        for _ in 0..3 {
            t = b.release_at(t, 1514);
            b.on_departure(t, 1514);
            out.push(t);
            t += Time::from_ns(1200);
        }
        assert_eq!(out, vec![Time::from_us(40), Time::from_ns(41_200), Time::from_ns(42_400)]);
        b.on_arrival(Time::from_us(80), 1514);
        assert_eq!(b.release_at(Time::from_us(80), 1514), Time::from_us(80));
        b.on_departure(Time::from_us(80), 1514);
        b.on_arrival(Time::from_us(81), 1514);
        assert_eq!(b.release_at(Time::from_us(81), 1514), Time::from_us(120));
    }
}
