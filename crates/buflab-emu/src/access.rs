//! The hosts' access links: a serializer per flow at the access rate, in front of the
//! bottleneck, as the simulator gives every flow its own access link.
//!
//! Read first: [`crate::bottleneck`]. The senders' kernels hand frames over at the veth's
//! speed; a flow's access link spaces them out at its rate, exactly (each frame leaves one
//! serialization time after the later of its arrival and the flow's previous frame), with no
//! limit on what waits, as the scenario's access links have none. Frames of different flows
//! then reach the bottleneck in the order of their exits, which this keeps: the loop feeds
//! the bottleneck only with exits due by now, and any frame read later leaves later. Must not
//! know sockets or clocks.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

use buflab_base::units::{Rate, Time};

use crate::pool::Frame;

/// A frame on its way out of an access link: ordered by exit time, then by arrival order.
struct Leaving {
    exit: Time,
    seq: u64,
    frame: Frame,
}

impl PartialEq for Leaving {
    fn eq(&self, o: &Self) -> bool {
        (self.exit, self.seq) == (o.exit, o.seq)
    }
}
impl Eq for Leaving {}
impl PartialOrd for Leaving {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Leaving {
    fn cmp(&self, o: &Self) -> Ordering {
        (self.exit, self.seq).cmp(&(o.exit, o.seq))
    }
}

pub struct AccessLinks {
    rate: Rate,
    /// When each flow's link (the last: frames of no flow) finishes its current frame.
    busy_until: Vec<Time>,
    leaving: BinaryHeap<Reverse<Leaving>>,
    seq: u64,
}

impl AccessLinks {
    /// `flows` links at `rate`, and one for frames of no flow.
    pub fn new(rate: Rate, flows: usize) -> AccessLinks {
        AccessLinks { rate, busy_until: vec![Time::ZERO; flows + 1], leaving: BinaryHeap::new(), seq: 0 }
    }

    /// Frame `f` of flow `flow` (None: of no flow) reaches its access link at `t`.
    pub fn push(&mut self, flow: Option<usize>, t: Time, f: Frame) {
        let last = self.busy_until.len() - 1;
        let i = flow.filter(|&i| i < last).unwrap_or(last);
        let exit = self.busy_until[i].max(t) + self.rate.serialization(f.len as u64);
        self.busy_until[i] = exit;
        self.seq += 1;
        self.leaving.push(Reverse(Leaving { exit, seq: self.seq, frame: f }));
    }

    /// The next frame to leave by `now`, with its exit time.
    pub fn pop_due(&mut self, now: Time) -> Option<(Time, Frame)> {
        if self.leaving.peek()?.0.exit > now {
            return None;
        }
        self.leaving.pop().map(|Reverse(l)| (l.exit, l.frame))
    }

    pub fn len(&self) -> usize {
        self.leaving.len()
    }

    pub fn is_empty(&self) -> bool {
        self.leaving.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(slot: u32) -> Frame {
        Frame { slot, len: 1250, ..Frame::default() }
    }

    #[test]
    fn each_flow_is_spaced_at_its_rate_and_flows_merge_by_exit() {
        // 10 Mb/s: 1250 B take 1 ms. Flow 0 bursts three frames at 0; flow 1 sends one at 1.5 ms.
        let mut a = AccessLinks::new(Rate::mbps(10), 2);
        for slot in 0..3 {
            a.push(Some(0), Time::ZERO, f(slot));
        }
        a.push(Some(1), Time::from_us(1500), f(9));
        assert_eq!(a.pop_due(Time::from_us(999)), None);
        let mut order = Vec::new();
        while let Some((t, fr)) = a.pop_due(Time::from_ms(10)) {
            order.push((t.ps() / 1_000_000, fr.slot));
        }
        assert_eq!(order, vec![(1000, 0), (2000, 1), (2500, 9), (3000, 2)]);
        assert!(a.is_empty());
    }
}
