//! The event scheduler.
//!
//! Read first: nothing (a leaf of the engine). Owns the event order and the packing of events; must
//! not know what a component does when its event fires (the simulator dispatches).
//!
//! Events are ordered by (time, insertion sequence): two events at the same picosecond run in
//! the order they were scheduled. That single rule makes every run deterministic. An event is
//! only a small integer naming the component and what happened (see [`Event`]); components keep
//! their own state, and the scheduler knows nothing of TCP.
//!
//! The queue is an implicit 4-ary min-heap: shallower than a binary heap and cache-friendly,
//! which matters because the engine runs millions of events per second. Keys are single
//! 128-bit integers, and removal uses Floyd's bottom-up sift, which compares children only.

use crate::units::Time;

/// What happens when an event fires: a component of the simulator, named by its index in
/// the simulator's tables, and which of its timers. The scheduler knows no protocol: an
/// endpoint's timers are numbered slots whose meaning only the endpoint knows (see
/// [`crate::endpoint`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// The packet at the head of a link's pipe reaches the end of the link.
    LinkExit(u32),
    /// A link whose discipline holds its packets may send the next (lazy: stale when an
    /// arrival at the same time served first).
    LinkReady(u32),
    /// Timer `slot` of a flow's endpoint may be due (lazy: the endpoint checks its deadline
    /// when it fires).
    Timer(u32, u8),
    /// A flow starts, or its user sends the next request.
    FlowStart(u32),
    /// An open-loop flow arrives (the payload indexes the arrival processes).
    Arrival(u32),
    /// The auto-sizer's next step (there is at most one auto-sizer per run).
    Autosize,
    /// A router node's next fabric slot may be due (lazy: checked when it fires).
    SwitchSlot(u32),
    /// A QCN message reaches its reaction point (the payload indexes the messages in flight).
    Feedback(u32),
}

/// Bits of a packed event: 4 for the kind, 25 for the component id.
const ID_BITS: u32 = 25;
const EVENT_BITS: u32 = 4 + ID_BITS;
/// Largest component id an event can name (links, flows: the scenario caps flows well below).
pub const MAX_ID: u32 = (1 << ID_BITS) - 1;
/// Timer slots an endpoint may have: kinds 8 to 11 are `Timer` slots 0 to 3.
pub const MAX_TIMER_SLOTS: usize = 4;
const TIMER_KIND: u64 = 8;
/// Events a run may schedule: the insertion sequence fills the other 35 bits of the key's low
/// half (about 34 billion; a 90 s run of a 10 Gb/s link schedules under 100 million).
const MAX_SEQ: u64 = (1 << (64 - EVENT_BITS)) - 1;

impl Event {
    fn pack(self) -> u64 {
        let (k, v) = match self {
            Event::LinkExit(v) => (0u64, v),
            Event::FlowStart(v) => (1, v),
            Event::Arrival(v) => (2, v),
            Event::Autosize => (3, 0),
            Event::SwitchSlot(v) => (4, v),
            Event::LinkReady(v) => (5, v),
            Event::Feedback(v) => (6, v),
            Event::Timer(v, slot) => {
                debug_assert!((slot as usize) < MAX_TIMER_SLOTS);
                (TIMER_KIND + slot as u64, v)
            }
        };
        debug_assert!(v <= MAX_ID);
        (k << ID_BITS) | v as u64
    }
    fn unpack(p: u64) -> Event {
        let v = (p & MAX_ID as u64) as u32;
        match (p >> ID_BITS) & 15 {
            0 => Event::LinkExit(v),
            1 => Event::FlowStart(v),
            2 => Event::Arrival(v),
            3 => Event::Autosize,
            4 => Event::SwitchSlot(v),
            5 => Event::LinkReady(v),
            6 => Event::Feedback(v),
            // Only `pack` makes keys: kind 7 never occurs.
            k => Event::Timer(v, (k - TIMER_KIND) as u8),
        }
    }
}

/// A pending event in 16 bytes. One 128-bit comparison orders entries: time in the high 64
/// bits; below it the insertion sequence (35 bits), which breaks ties; the event itself in
/// the lowest 29 bits, which never decide the order because sequences are unique.
#[derive(Clone, Copy)]
struct Entry {
    key: u128,
}

impl Entry {
    #[inline(always)]
    fn time(&self) -> u64 {
        (self.key >> 64) as u64
    }
    #[inline(always)]
    fn event(&self) -> Event {
        Event::unpack(self.key as u64 & ((1 << EVENT_BITS) - 1))
    }
}

/// Pending events, earliest first; ties broken by insertion order.
pub struct Scheduler {
    heap: Vec<Entry>,
    /// The root was popped but not yet removed: the next `schedule` reuses its slot.
    root_vacant: bool,
    next_seq: u64,
    now: Time,
    executed: u64,
}

impl Default for Scheduler {
    fn default() -> Self {
        Self::new()
    }
}

/// Children per heap node.
const ARITY: usize = 4;

impl Scheduler {
    pub fn new() -> Scheduler {
        Scheduler {
            heap: Vec::with_capacity(1024),
            root_vacant: false,
            next_seq: 0,
            now: Time::ZERO,
            executed: 0,
        }
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
        self.heap.len() - self.root_vacant as usize
    }

    /// Schedules `ev` at `at`. Scheduling in the past is a bug in a component.
    #[inline]
    pub fn schedule(&mut self, at: Time, ev: Event) {
        debug_assert!(at >= self.now, "event {ev:?} scheduled in the past");
        assert!(self.next_seq <= MAX_SEQ, "more than {MAX_SEQ} events scheduled in one run");
        let low = (self.next_seq << EVENT_BITS) | ev.pack();
        let e = Entry { key: ((at.0 as u128) << 64) | low as u128 };
        self.next_seq += 1;
        if self.root_vacant {
            // Most events schedule a successor soon after now (the next packet of the same
            // pipe): it belongs near the top, so sifting down from the root stops early.
            self.root_vacant = false;
            self.sift_down(e);
        } else {
            self.heap.push(e);
            self.sift_up(self.heap.len() - 1, e);
        }
    }

    /// Removes a vacant root for good.
    #[inline]
    fn settle(&mut self) {
        if self.root_vacant {
            self.root_vacant = false;
            let last = self.heap.pop().unwrap();
            if !self.heap.is_empty() {
                self.refill_root(last);
            }
        }
    }

    /// Takes the earliest event and advances the clock to it. Its slot stays reserved until
    /// the next call, so that an event scheduled meanwhile can take it.
    #[inline]
    pub fn pop(&mut self) -> Option<(Time, Event)> {
        self.settle();
        let top = *self.heap.first()?;
        self.root_vacant = true;
        self.now = Time(top.time());
        self.executed += 1;
        Some((self.now, top.event()))
    }

    /// Takes the earliest event if it comes before `t`, as [`Scheduler::pop`] does; leaves
    /// the queue as it was (the event not taken, the clock not moved) if it comes at or after
    /// `t`: a run stepped to `t` goes on from there exactly as one that never stopped.
    #[inline]
    pub fn pop_before(&mut self, t: Time) -> Option<(Time, Event)> {
        self.settle();
        let top = *self.heap.first()?;
        if top.time() >= t.0 {
            return None;
        }
        self.root_vacant = true;
        self.now = Time(top.time());
        self.executed += 1;
        Some((self.now, top.event()))
    }

    /// The event that comes next unless one scheduled meanwhile comes first (a hint for
    /// prefetching what it touches; call after a pop).
    #[inline]
    pub fn peek_next(&self) -> Option<Event> {
        let next = if self.root_vacant { Self::smallest_child(&self.heap, 0)? } else { 0 };
        self.heap.get(next).map(Entry::event)
    }

    /// Index of the smallest child of node `i`, if it has any.
    #[inline(always)]
    fn smallest_child(h: &[Entry], i: usize) -> Option<usize> {
        let c = ARITY * i + 1;
        if c + ARITY <= h.len() {
            return Some(Self::smallest_of_four(h, c));
        }
        (c..h.len()).min_by_key(|&j| h[j].key)
    }

    /// Index of the smallest of the four children starting at `c`, as a tournament of three
    /// comparisons the compiler can turn into conditional moves.
    #[inline(always)]
    fn smallest_of_four(h: &[Entry], c: usize) -> usize {
        let a = if h[c + 1].key < h[c].key { c + 1 } else { c };
        let d = if h[c + 3].key < h[c + 2].key { c + 3 } else { c + 2 };
        if h[d].key < h[a].key {
            d
        } else {
            a
        }
    }

    /// Places `e` at the root and moves it down past smaller children (top-down).
    #[inline]
    fn sift_down(&mut self, e: Entry) {
        let h = self.heap.as_mut_slice();
        let mut i = 0;
        while let Some(best) = Self::smallest_child(h, i).filter(|&b| h[b].key < e.key) {
            h[i] = h[best];
            i = best;
        }
        h[i] = e;
    }

    #[inline]
    fn sift_up(&mut self, mut i: usize, e: Entry) {
        let h = self.heap.as_mut_slice();
        while i > 0 {
            let p = (i - 1) / ARITY;
            if e.key < h[p].key {
                h[i] = h[p];
                i = p;
            } else {
                break;
            }
        }
        h[i] = e;
    }

    /// Fills the empty root with `e` (the former last entry): the hole walks down along the
    /// smallest children to a leaf, comparing children only, then `e` sifts up from there
    /// (Floyd's bottom-up method; `e` came from the bottom, so it rarely climbs far).
    #[inline]
    fn refill_root(&mut self, e: Entry) {
        let h = self.heap.as_mut_slice();
        let mut hole = 0;
        while let Some(best) = Self::smallest_child(h, hole) {
            h[hole] = h[best];
            hole = best;
        }
        self.sift_up(hole, e);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{Rng, Stream};

    #[test]
    fn equal_times_run_in_insertion_order() {
        let mut s = Scheduler::new();
        s.schedule(Time(5), Event::Timer(1, 0));
        s.schedule(Time(5), Event::Timer(2, 0));
        s.schedule(Time(3), Event::Timer(3, 0));
        s.schedule(Time(5), Event::LinkExit(4));
        let order: Vec<Event> = std::iter::from_fn(|| s.pop().map(|(_, e)| e)).collect();
        assert_eq!(
            order,
            vec![Event::Timer(3, 0), Event::Timer(1, 0), Event::Timer(2, 0), Event::LinkExit(4)]
        );
    }

    #[test]
    fn popping_before_a_time_leaves_later_events_in_their_order() {
        // Stopping at 5 takes the event at 3 only; the events at 5 then run in the order
        // they were scheduled, as without the stop.
        let mut s = Scheduler::new();
        s.schedule(Time(5), Event::Timer(1, 0));
        s.schedule(Time(3), Event::Timer(3, 0));
        s.schedule(Time(5), Event::LinkExit(4));
        assert_eq!(s.pop_before(Time(5)), Some((Time(3), Event::Timer(3, 0))));
        assert_eq!(s.pop_before(Time(5)), None);
        assert_eq!((s.now(), s.executed(), s.pending()), (Time(3), 1, 2));
        s.schedule(Time(5), Event::Arrival(9));
        let order: Vec<Event> = std::iter::from_fn(|| s.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, vec![Event::Timer(1, 0), Event::LinkExit(4), Event::Arrival(9)]);
    }

    #[test]
    fn peek_next_names_what_the_next_pop_takes() {
        // The prefetch hint must point at the right event whenever nothing is scheduled in
        // between: checked after every pop of a random load, ties at equal times included.
        let mut s = Scheduler::new();
        let mut r = Rng::stream(5, Stream::Topology, 0);
        for i in 0..2_000u32 {
            s.schedule(Time(r.range_u64(0, 300)), Event::Arrival(i));
        }
        let mut peeked = s.peek_next();
        while let Some((_, e)) = s.pop() {
            assert_eq!(peeked, Some(e));
            peeked = s.peek_next();
        }
        assert_eq!(peeked, None);
    }

    #[test]
    fn every_event_kind_survives_packing() {
        let all = [
            Event::LinkExit(MAX_ID),
            Event::Timer(1, 0),
            Event::Timer(MAX_ID, MAX_TIMER_SLOTS as u8 - 1),
            Event::FlowStart(3),
            Event::Arrival(5),
            Event::Autosize,
            Event::SwitchSlot(MAX_ID),
            Event::LinkReady(7),
            Event::Feedback(MAX_ID),
        ];
        for e in all {
            assert_eq!(Event::unpack(e.pack()), e);
        }
    }

    #[test]
    fn pops_in_time_order_under_random_load() {
        let mut s = Scheduler::new();
        let mut r = Rng::stream(3, Stream::Topology, 0);
        let mut last = (0u64, 0u32);
        for i in 0..20_000u32 {
            s.schedule(Time(s.now().0 + r.range_u64(0, 1000)), Event::Arrival(i));
            if i % 3 == 0 {
                let (t, e) = s.pop().unwrap();
                let Event::Arrival(id) = e else { panic!() };
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
