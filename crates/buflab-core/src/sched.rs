//! The event scheduler.
//!
//! Events are ordered by (time, insertion sequence): two events at the same picosecond run in
//! the order they were scheduled. That single rule makes every run deterministic. An event is
//! only a small integer naming the component and what happened (see [`Event`]); components keep
//! their own state, and the scheduler knows nothing of TCP.
//!
//! The queue is an implicit 4-ary min-heap over 24-byte entries: shallower than a binary heap
//! and cache-friendly, which matters because the engine runs millions of events per second.

use crate::units::Time;

/// What happens when an event fires. The payload is an index into the simulator's tables.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// The packet at the head of a link's pipe reaches the end of the link.
    LinkExit(u32),
    /// A TCP sender's retransmission timer may have expired (lazy: checked when it fires).
    Rto(u32),
    /// A TCP receiver's delayed-ACK timer may have expired (lazy).
    DelayedAck(u32),
    /// A flow starts sending.
    FlowStart(u32),
    /// A UDP source emits its next packet.
    SourceNext(u32),
    /// The measured window opens: flows snapshot their counters.
    Warmup,
}

impl Event {
    fn pack(self) -> u64 {
        let (k, v) = match self {
            Event::LinkExit(v) => (0u64, v),
            Event::Rto(v) => (1, v),
            Event::DelayedAck(v) => (2, v),
            Event::FlowStart(v) => (3, v),
            Event::SourceNext(v) => (4, v),
            Event::Warmup => (5, 0),
        };
        (k << 32) | v as u64
    }
    fn unpack(p: u64) -> Event {
        let v = p as u32;
        match p >> 32 {
            0 => Event::LinkExit(v),
            1 => Event::Rto(v),
            2 => Event::DelayedAck(v),
            3 => Event::FlowStart(v),
            4 => Event::SourceNext(v),
            _ => Event::Warmup,
        }
    }
}

#[derive(Clone, Copy)]
struct Entry {
    time: u64,
    seq: u64,
    ev: u64,
}

impl Entry {
    #[inline(always)]
    fn before(&self, other: &Entry) -> bool {
        (self.time, self.seq) < (other.time, other.seq)
    }
}

/// Pending events, earliest first; ties broken by insertion order.
pub struct Scheduler {
    heap: Vec<Entry>,
    next_seq: u64,
    now: Time,
    executed: u64,
}

impl Default for Scheduler {
    fn default() -> Self {
        Self::new()
    }
}

impl Scheduler {
    pub fn new() -> Scheduler {
        Scheduler { heap: Vec::with_capacity(1024), next_seq: 0, now: Time::ZERO, executed: 0 }
    }

    /// The time of the event being executed (or of the last one).
    #[inline]
    pub fn now(&self) -> Time {
        self.now
    }

    /// Events popped so far.
    pub fn executed(&self) -> u64 {
        self.executed
    }

    pub fn pending(&self) -> usize {
        self.heap.len()
    }

    /// Schedules `ev` at `at`. Scheduling in the past is a bug in a component.
    #[inline]
    pub fn schedule(&mut self, at: Time, ev: Event) {
        debug_assert!(at >= self.now, "event {ev:?} scheduled in the past");
        let e = Entry { time: at.0, seq: self.next_seq, ev: ev.pack() };
        self.next_seq += 1;
        self.heap.push(e);
        self.sift_up(self.heap.len() - 1);
    }

    /// The time of the earliest pending event.
    pub fn peek_time(&self) -> Option<Time> {
        self.heap.first().map(|e| Time(e.time))
    }

    /// Removes the earliest event and advances the clock to it.
    #[inline]
    pub fn pop(&mut self) -> Option<(Time, Event)> {
        let n = self.heap.len();
        if n == 0 {
            return None;
        }
        let top = self.heap[0];
        let last = self.heap.pop().unwrap();
        if n > 1 {
            self.sift_down_from_root(last);
        }
        self.now = Time(top.time);
        self.executed += 1;
        Some((self.now, Event::unpack(top.ev)))
    }

    #[inline]
    fn sift_up(&mut self, mut i: usize) {
        let e = self.heap[i];
        while i > 0 {
            let p = (i - 1) / 4;
            if e.before(&self.heap[p]) {
                self.heap[i] = self.heap[p];
                i = p;
            } else {
                break;
            }
        }
        self.heap[i] = e;
    }

    /// Places `e` (the former last element) starting from the root.
    #[inline]
    fn sift_down_from_root(&mut self, e: Entry) {
        let n = self.heap.len();
        let mut i = 0;
        loop {
            let c = 4 * i + 1;
            if c >= n {
                break;
            }
            let mut best = c;
            let end = (c + 4).min(n);
            for j in c + 1..end {
                if self.heap[j].before(&self.heap[best]) {
                    best = j;
                }
            }
            if self.heap[best].before(&e) {
                self.heap[i] = self.heap[best];
                i = best;
            } else {
                break;
            }
        }
        self.heap[i] = e;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{Rng, Stream};

    #[test]
    fn equal_times_run_in_insertion_order() {
        let mut s = Scheduler::new();
        s.schedule(Time(5), Event::Rto(1));
        s.schedule(Time(5), Event::Rto(2));
        s.schedule(Time(3), Event::Rto(3));
        s.schedule(Time(5), Event::LinkExit(4));
        let order: Vec<Event> = std::iter::from_fn(|| s.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, vec![Event::Rto(3), Event::Rto(1), Event::Rto(2), Event::LinkExit(4)]);
    }

    #[test]
    fn pops_in_time_order_under_random_load() {
        let mut s = Scheduler::new();
        let mut r = Rng::stream(3, Stream::Topology, 0);
        let mut last = (0u64, 0u32);
        for i in 0..20_000u32 {
            s.schedule(Time(s.now().0 + r.range_u64(0, 1000)), Event::SourceNext(i));
            if i % 3 == 0 {
                let (t, e) = s.pop().unwrap();
                let Event::SourceNext(id) = e else { panic!() };
                assert!(t.0 >= last.0);
                last = (t.0, id);
            }
        }
        let mut prev = s.now();
        while let Some((t, _)) = s.pop() {
            assert!(t >= prev);
            prev = t;
        }
    }
}
