//! A delay line: each frame leaves a fixed time after it entered (the NIST Net role, done in
//! the datapath, so that no kernel queue holds packets and none counts them as "buffer", the
//! trap of netem's `limit`).
//!
//! Read first: nothing. Frames enter in time order (a bottleneck's exits, or arrivals), so with
//! one delay they leave in that order: a FIFO suffices ([`DelayLine`]). Flows with their own
//! delays (each its scenario RTT) get a line each ([`DelayLines`]), and the earliest head of
//! them all leaves first. Must not know sockets or clocks.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use buflab_base::units::Time;

use crate::pool::Frame;

pub struct DelayLine {
    delay: Time,
    frames: VecDeque<(Time, Frame)>,
    /// The most frames it ever held.
    pub max_held: usize,
}

impl DelayLine {
    pub fn new(delay: Time) -> DelayLine {
        DelayLine { delay, frames: VecDeque::new(), max_held: 0 }
    }

    /// Frame `f` enters at `t` (no earlier than the last one): it is due at `t + delay`.
    pub fn push(&mut self, t: Time, f: Frame) {
        let due = t + self.delay;
        debug_assert!(self.frames.back().is_none_or(|&(last, _)| last <= due), "frames enter in time order");
        self.frames.push_back((due, f));
        self.max_held = self.max_held.max(self.frames.len());
    }

    /// When its next frame is due.
    pub fn next_due(&self) -> Option<Time> {
        self.frames.front().map(|&(t, _)| t)
    }

    /// Its next frame and the time it was due, if due by `now`.
    pub fn pop_due(&mut self, now: Time) -> Option<(Time, Frame)> {
        if self.next_due()? <= now {
            self.frames.pop_front()
        } else {
            None
        }
    }

    pub fn len(&self) -> usize {
        self.frames.len()
    }

    pub fn is_empty(&self) -> bool {
        self.frames.is_empty()
    }
}

/// A delay line per flow, each with its own delay, and one for frames of no flow.
pub struct DelayLines {
    lines: Vec<DelayLine>,
    /// (due, line) of every line's head, earliest first; an entry is pushed when a line gets a
    /// new head, so each line has exactly one while it holds frames.
    heads: BinaryHeap<Reverse<(Time, usize)>>,
    /// A frame whose send was refused, to go before any other.
    refused: Option<(Time, Frame)>,
}

impl DelayLines {
    /// Lines with these delays; frames of no flow go to the last, of delay `other`.
    pub fn new(delays: &[Time], other: Time) -> DelayLines {
        let mut lines: Vec<DelayLine> = delays.iter().map(|&d| DelayLine::new(d)).collect();
        lines.push(DelayLine::new(other));
        DelayLines { lines, heads: BinaryHeap::new(), refused: None }
    }

    /// Frame `f` of line `line` (None: of no flow) enters at `t`.
    pub fn push(&mut self, line: Option<usize>, t: Time, f: Frame) {
        let i = line.filter(|&l| l < self.lines.len() - 1).unwrap_or(self.lines.len() - 1);
        let was_empty = self.lines[i].is_empty();
        self.lines[i].push(t, f);
        if was_empty {
            self.heads.push(Reverse((self.lines[i].next_due().expect("just pushed"), i)));
        }
    }

    pub fn next_due(&self) -> Option<Time> {
        self.refused.map(|r| r.0).or_else(|| self.heads.peek().map(|r| r.0 .0))
    }

    /// The earliest frame due by `now`, and when it was due.
    pub fn pop_due(&mut self, now: Time) -> Option<(Time, Frame)> {
        if let Some(r) = self.refused.take() {
            return Some(r);
        }
        let &Reverse((due, i)) = self.heads.peek()?;
        if due > now {
            return None;
        }
        self.heads.pop();
        let out = self.lines[i].pop_due(now).expect("a head entry has its frame");
        if let Some(next) = self.lines[i].next_due() {
            self.heads.push(Reverse((next, i)));
        }
        Some(out)
    }

    /// Puts back a frame just taken (its send was refused): it leaves first, next time.
    pub fn unpop(&mut self, due: Time, f: Frame) {
        debug_assert!(self.refused.is_none(), "one refused frame at a time");
        self.refused = Some((due, f));
    }

    pub fn len(&self) -> usize {
        self.lines.iter().map(DelayLine::len).sum::<usize>() + usize::from(self.refused.is_some())
    }

    pub fn is_empty(&self) -> bool {
        self.heads.is_empty() && self.refused.is_none()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(slot: u32) -> Frame {
        Frame { slot, len: 100, ..Frame::default() }
    }

    #[test]
    fn frames_leave_exactly_one_delay_after_they_enter_in_order() {
        let mut d = DelayLine::new(Time::from_ms(10));
        d.push(Time::from_us(5), f(0));
        d.push(Time::from_us(7), f(1));
        assert_eq!(d.pop_due(Time::from_us(10_004)), None);
        assert_eq!(d.pop_due(Time::from_us(10_005)), Some((Time::from_us(10_005), f(0))));
        assert_eq!(d.next_due(), Some(Time::from_us(10_007)));
        // A late poll still reports when each was due: the loop measures its own lateness.
        assert_eq!(d.pop_due(Time::from_ms(20)), Some((Time::from_us(10_007), f(1))));
        assert!(d.is_empty() && d.max_held == 2);
    }

    #[test]
    fn lines_of_different_delays_interleave_by_due_time() {
        let mut d = DelayLines::new(&[Time::from_ms(10), Time::from_ms(2)], Time::ZERO);
        d.push(Some(0), Time::from_ms(0), f(0)); // due 10
        d.push(Some(1), Time::from_ms(1), f(1)); // due 3
        d.push(None, Time::from_ms(4), f(2)); // no flow: due 4
        d.push(Some(1), Time::from_ms(5), f(3)); // due 7
        let mut order = Vec::new();
        while let Some((due, fr)) = d.pop_due(Time::from_ms(100)) {
            order.push((due.ps() / 1_000_000_000, fr.slot));
        }
        assert_eq!(order, vec![(3, 1), (4, 2), (7, 3), (10, 0)]);
        assert!(d.is_empty());
    }
}
