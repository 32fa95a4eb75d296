//! The bottleneck on real frames: a serializer at the configured rate behind any queue
//! discipline of `buflab-queue`, run by the simulator's timetable rules.
//!
//! Read first: the `buflab-queue` crate doc (the contract), then the simulator's held link
//! (`buflab-core`'s `link/held.rs`), whose rules this repeats on frames: a service due at time
//! t starts before an arrival at t; a frame that arrives at an idle serializer starts at its
//! arrival; each service lasts the frame's exact integer serialization time at the rate; the
//! hard limit counts the frames waiting, not the one being serialized. Every time here is an
//! ideal time, taken from arrival stamps, never from when the loop got round to it: the loop
//! sends each frame when the clock reaches its exit time (plus its delay line's delay).
//!
//! Must not know sockets, clocks or delay lines.

use buflab_base::units::{BufferLimit, Rate, Time};
use buflab_queue::{Arrival, Dequeue, Discipline, Verdict};

use crate::pool::Frame;

/// What the bottleneck counted (whole run).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    pub arrivals: u64,
    pub drops: u64,
    pub marks: u64,
    pub departures: u64,
    pub departed_bytes: u64,
    /// The most frames and bytes ever waiting (the one in service not counted).
    pub max_waiting: u64,
    pub max_waiting_bytes: u64,
    /// Frames waiting, integrated over ideal time (frame·ps): its mean over a span is the
    /// time-average queue.
    pub waiting_integral: u128,
}

impl Counts {
    /// What was counted since `then` (maxima kept as they are: the window's own need a reset).
    pub fn since(&self, then: &Counts) -> Counts {
        Counts {
            arrivals: self.arrivals - then.arrivals,
            drops: self.drops - then.drops,
            marks: self.marks - then.marks,
            departures: self.departures - then.departures,
            departed_bytes: self.departed_bytes - then.departed_bytes,
            max_waiting: self.max_waiting,
            max_waiting_bytes: self.max_waiting_bytes,
            waiting_integral: self.waiting_integral - then.waiting_integral,
        }
    }
}

pub struct Bottleneck {
    rate: Rate,
    limit: BufferLimit,
    discipline: Box<dyn Discipline<Frame>>,
    /// When the serializer finishes its current frame (or finished its last).
    busy_until: Time,
    /// A discipline that said "not before" (a pacer): when to ask it again.
    ask_at: Time,
    purged: Vec<Frame>,
    /// When the number of frames waiting last changed (for the integral).
    last_change: Time,
    pub counts: Counts,
}

impl Bottleneck {
    pub fn new(rate: Rate, limit: BufferLimit, discipline: Box<dyn Discipline<Frame>>) -> Bottleneck {
        assert!(rate.bits_per_s() > 0, "a positive rate");
        Bottleneck {
            rate,
            limit,
            discipline,
            busy_until: Time::ZERO,
            ask_at: Time::ZERO,
            purged: Vec::new(),
            last_change: Time::ZERO,
            counts: Counts::default(),
        }
    }

    /// Frames and bytes waiting (the one in service not counted).
    pub fn waiting(&self) -> (u64, u64) {
        self.discipline.backlog()
    }

    /// When the serializer next asks for a frame, if frames wait.
    pub fn next_service(&self) -> Option<Time> {
        (self.waiting().0 > 0).then(|| self.busy_until.max(self.ask_at))
    }

    /// Runs every service due by `t`, in order: each frame that starts is pushed to `out` with
    /// its exit time (the end of its serialization); frames the discipline drops from its
    /// queue go to `dropped`.
    pub fn advance(&mut self, t: Time, out: &mut Vec<(Frame, Time)>, dropped: &mut Vec<Frame>) {
        while let Some(ask) = self.next_service().filter(|&a| a <= t) {
            self.integrate(ask);
            let next = self.discipline.dequeue(ask, &mut self.purged);
            self.take_purged(dropped);
            match next {
                Dequeue::Send(f) => {
                    let end = ask + self.rate.serialization(f.len as u64);
                    self.busy_until = end;
                    self.counts.departures += 1;
                    self.counts.departed_bytes += f.len as u64;
                    out.push((f, end));
                }
                Dequeue::Wait(w) => {
                    assert!(w > ask, "a discipline asked to wait until {w:?}, not after {ask:?}");
                    self.ask_at = w;
                }
                Dequeue::Idle => break,
            }
        }
    }

    /// Frame `f` arrives at `t` (arrivals come in time order). Services due by `t` run first;
    /// frames that start are pushed to `out`, and the frame itself (if refused) and any the
    /// discipline drops go to `dropped`.
    pub fn arrive(
        &mut self,
        t: Time,
        f: Frame,
        out: &mut Vec<(Frame, Time)>,
        dropped: &mut Vec<Frame>,
    ) -> Verdict {
        self.advance(t, out, dropped);
        self.integrate(t);
        self.counts.arrivals += 1;
        let (waiting, bytes) = self.waiting();
        if waiting == 0 && self.busy_until < t {
            // Idle since it finished its last frame: free from now on.
            self.busy_until = t;
        }
        let a = Arrival::new(t, waiting, bytes, self.busy_until, self.limit, f.len, f.ect);
        let verdict = self.discipline.enqueue(&a, f, &mut self.purged);
        self.take_purged(dropped);
        match verdict {
            Verdict::Drop => {
                self.counts.drops += 1;
                dropped.push(f);
            }
            Verdict::Mark => self.counts.marks += 1,
            Verdict::Admit => {}
        }
        let (waiting, bytes) = self.waiting();
        self.counts.max_waiting = self.counts.max_waiting.max(waiting);
        self.counts.max_waiting_bytes = self.counts.max_waiting_bytes.max(bytes);
        // An idle serializer takes the frame now (the discipline may still say wait).
        self.advance(t, out, dropped);
        verdict
    }

    /// Adds the frames waiting since the last change, up to `t`, to the integral.
    fn integrate(&mut self, t: Time) {
        if t > self.last_change {
            let waiting = self.waiting().0 as u128;
            self.counts.waiting_integral += waiting * (t - self.last_change).ps() as u128;
            self.last_change = t;
        }
    }

    /// Resets the maxima (the start of a measured window).
    pub fn reset_maxima(&mut self) {
        self.counts.max_waiting = self.waiting().0;
        self.counts.max_waiting_bytes = self.waiting().1;
    }

    fn take_purged(&mut self, dropped: &mut Vec<Frame>) {
        self.counts.drops += self.purged.len() as u64;
        dropped.append(&mut self.purged);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use buflab_queue::drop_tail::DropTail;
    use buflab_queue::Fifo;

    fn frame(slot: u32, len: u32) -> Frame {
        Frame { slot, len, ect: false, ce: false }
    }

    fn drop_tail(rate: Rate, limit: BufferLimit) -> Bottleneck {
        Bottleneck::new(rate, limit, Box::new(Fifo::<DropTail, Frame>::new(DropTail)))
    }

    #[test]
    fn serializes_back_to_back_at_the_exact_integer_time_and_drops_at_the_limit() {
        // 100 Mb/s: 1500 B take 120 µs. Three frames at once, buffer 1: the first goes into
        // service, the second waits, the third finds the buffer full.
        let mut b = drop_tail(Rate::mbps(100), BufferLimit::Packets(1));
        let (mut out, mut dropped) = (Vec::new(), Vec::new());
        let t0 = Time::from_us(1000);
        for slot in 0..3 {
            b.arrive(t0, frame(slot, 1500), &mut out, &mut dropped);
        }
        assert_eq!(out, vec![(frame(0, 1500), t0 + Time::from_us(120))]);
        assert_eq!(dropped, vec![frame(2, 1500)]);
        // The second starts when the first ends, exactly.
        b.advance(t0 + Time::from_us(500), &mut out, &mut dropped);
        assert_eq!(out[1], (frame(1, 1500), t0 + Time::from_us(240)));
        // A frame arriving at an idle serializer starts at its arrival, not at the last end.
        let t1 = t0 + Time::from_us(1000);
        b.arrive(t1, frame(3, 64), &mut out, &mut dropped);
        assert_eq!(out[2], (frame(3, 64), t1 + Rate::mbps(100).serialization(64)));
        assert_eq!(b.counts.drops, 1);
        assert_eq!((b.counts.arrivals, b.counts.departures, b.counts.max_waiting), (4, 3, 1));
    }

    #[test]
    fn a_service_due_at_an_arrival_starts_before_it() {
        // Buffer 1: the second frame waits; the third arrives exactly when the first ends, so
        // the second has started and the third fits.
        let mut b = drop_tail(Rate::mbps(100), BufferLimit::Packets(1));
        let (mut out, mut dropped) = (Vec::new(), Vec::new());
        b.arrive(Time::ZERO, frame(0, 1500), &mut out, &mut dropped);
        b.arrive(Time::ZERO, frame(1, 1500), &mut out, &mut dropped);
        b.arrive(Time::from_us(120), frame(2, 1500), &mut out, &mut dropped);
        assert!(dropped.is_empty());
        assert_eq!(out.len(), 2);
        assert_eq!(b.waiting(), (1, 1500));
    }

    #[test]
    fn a_byte_limit_counts_bytes() {
        let mut b = drop_tail(Rate::mbps(10), BufferLimit::Bytes(3000));
        let (mut out, mut dropped) = (Vec::new(), Vec::new());
        for (slot, len) in [(0, 1500), (1, 1500), (2, 1500), (3, 64), (4, 1500)] {
            b.arrive(Time::ZERO, frame(slot, len), &mut out, &mut dropped);
        }
        // In service: 0. Waiting: 1 and 2 (3000 B); 3 does not fit beside them, nor 4.
        assert_eq!(dropped.iter().map(|f| f.slot).collect::<Vec<_>>(), vec![3, 4]);
        assert_eq!(b.counts.max_waiting_bytes, 3000);
    }
}
