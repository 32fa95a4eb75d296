//! A virtual queue (NetBump seed §3.2.2, vAQM): a leaky bucket that estimates, as packets
//! pass, the occupancy of a downstream switch port the bump cannot see.
//!
//! Read first: [`crate::pacer::Tokens`] (the exact arithmetic). Every passing packet adds its
//! bytes; the bucket drains at the downstream port's rate. The virtual queue has the port's
//! buffer as its `size` and a `threshold` at or below it:
//! - a packet that takes the backlog above the threshold triggers the `action`: mark it
//!   Congestion Experienced (if it is ECN-capable; others pass unmarked, as a marking switch
//!   leaves them), drop it, or only count it (the seed's "monitor": §7.5 counted the
//!   overflows and left the packets unchanged, so as not to disturb the flow);
//! - a packet that would not fit in `size` is an *overflow*: the downstream port would drop
//!   it, so it does not join the backlog (it is counted, and the action applies as above).
//!
//! The seed says it "runs out of tokens"; the two views are the same bucket. It must not know
//! packets beyond their size and ECN capability, nor the bump around it.

use buflab_base::units::{Rate, Time};

use crate::pacer::Tokens;
use crate::Verdict;

/// What a crossing of the threshold does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    Mark,
    Drop,
    Count,
}

buflab_base::names!(Action { Mark = "mark", Drop = "drop", Count = "count" });

/// How a virtual queue is set up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VqSpec {
    /// The downstream port's rate: the bucket drains at it.
    pub rate: Rate,
    /// The downstream port's buffer, bytes.
    pub size: u64,
    /// The backlog above which the action applies, bytes (at most `size`).
    pub threshold: u64,
    pub action: Action,
}

/// What a virtual queue counted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct VqStats {
    pub arrivals: u64,
    /// Packets that took the backlog above the threshold.
    pub above_threshold: u64,
    /// Packets that did not fit in the virtual queue's size.
    pub overflows: u64,
    pub marks: u64,
    pub drops: u64,
}

impl VqStats {
    pub fn add(&mut self, o: &VqStats) {
        self.arrivals += o.arrivals;
        self.above_threshold += o.above_threshold;
        self.overflows += o.overflows;
        self.marks += o.marks;
        self.drops += o.drops;
    }
}

#[derive(Clone, Debug)]
pub struct VirtualQueue {
    spec: VqSpec,
    backlog: Tokens,
    last: Time,
    pub stats: VqStats,
}

impl VirtualQueue {
    pub fn new(spec: VqSpec) -> VirtualQueue {
        VirtualQueue { spec, backlog: Tokens(0), last: Time::ZERO, stats: VqStats::default() }
    }

    /// The backlog at `now`, bytes (rounded down).
    pub fn backlog_bytes(&mut self, now: Time) -> u64 {
        self.drain(now);
        (self.backlog.0 / Tokens::cost(1).0) as u64
    }

    fn drain(&mut self, now: Time) {
        if now > self.last {
            self.backlog = self.backlog.saturating_sub(Tokens::earned(self.spec.rate, now - self.last));
            self.last = now;
        }
    }

    /// A packet of `size` bytes (ECN-capable if `ect`) passes at `now`: the verdict the
    /// virtual queue gives it (see the module doc).
    pub fn on_packet(&mut self, now: Time, size: u32, ect: bool) -> Verdict {
        self.drain(now);
        let s = &mut self.stats;
        s.arrivals += 1;
        let after = self.backlog.plus(Tokens::cost(size as u64));
        let fits = after <= Tokens::cost(self.spec.size);
        if !fits {
            s.overflows += 1;
        }
        let verdict = if after > Tokens::cost(self.spec.threshold) {
            s.above_threshold += 1;
            match self.spec.action {
                Action::Count => Verdict::Admit,
                Action::Mark if ect => {
                    s.marks += 1;
                    Verdict::Mark
                }
                Action::Mark => Verdict::Admit,
                Action::Drop => {
                    s.drops += 1;
                    Verdict::Drop
                }
            }
        } else {
            Verdict::Admit
        };
        if fits && verdict != Verdict::Drop {
            self.backlog = after;
        }
        verdict
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vq(action: Action) -> VirtualQueue {
        // A 1 Gb/s port with 3,000 B of buffer, threshold 1,500 B.
        VirtualQueue::new(VqSpec { rate: Rate::gbps(1), size: 3000, threshold: 1500, action })
    }

    #[test]
    fn a_line_rate_burst_fills_it_and_a_paced_flow_does_not() {
        // Four 1,000-B packets 0.8 µs apart (10 Gb/s) into a 1 Gb/s port, which drains 100 B
        // in 0.8 µs: the backlog after each would be 1000, 1900, 2800, 3700 B: three cross the
        // threshold, and the fourth overflows and does not join (2,700 B after it).
        let mut q = vq(Action::Count);
        let verdicts: Vec<Verdict> =
            (0..4).map(|i| q.on_packet(Time::from_ns(800 * i), 1000, true)).collect();
        assert!(verdicts.iter().all(|&v| v == Verdict::Admit), "monitor mode only counts");
        assert_eq!(q.stats, VqStats { arrivals: 4, above_threshold: 3, overflows: 1, marks: 0, drops: 0 });
        assert_eq!(q.backlog_bytes(Time::from_ns(2400)), 2700, "the overflowing packet did not join");
        // Paced at 1 Gb/s (8 µs apart), the same packets never queue.
        let mut p = vq(Action::Count);
        for i in 0..100 {
            p.on_packet(Time::from_us(8 * i), 1000, true);
        }
        assert_eq!((p.stats.above_threshold, p.stats.overflows), (0, 0));
    }

    #[test]
    fn marks_ect_packets_and_drops_when_asked() {
        let mut m = vq(Action::Mark);
        assert_eq!(m.on_packet(Time::ZERO, 1000, true), Verdict::Admit);
        assert_eq!(m.on_packet(Time::ZERO, 1000, true), Verdict::Mark);
        assert_eq!(m.on_packet(Time::ZERO, 500, false), Verdict::Admit, "not ECN-capable: passes");
        assert_eq!(m.stats.marks, 1);
        let mut d = vq(Action::Drop);
        d.on_packet(Time::ZERO, 1000, true);
        assert_eq!(d.on_packet(Time::ZERO, 1000, true), Verdict::Drop);
        // A dropped packet never reaches the port: the backlog stays at 1,000 B.
        assert_eq!(d.backlog_bytes(Time::ZERO), 1000);
    }
}
