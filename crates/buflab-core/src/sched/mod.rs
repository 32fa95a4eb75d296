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
//! The queue has two tiers, so that most events meet a small heap. Keys are single 128-bit
//! integers: time in the high half, the insertion sequence below it, so keys are unique and
//! their order is the rule above.
//! - **near** ([`heap`]): the events of the current block of time (the aligned block of 2^k
//!   ps that the last event taken lies in), in a 4-ary heap.
//! - **far**: every later event, in the buckets of a radix heap (Ahuja, Mehlhorn, Orlin,
//!   Tarjan, "Faster algorithms for the shortest path problem", J. ACM 1990): by the highest
//!   bit in which its key differs from the last one taken. Scheduling one is an append. When
//!   the near heap runs out, the lowest bucket's least key (kept per bucket) is next; it
//!   becomes the last key taken and the bucket's other keys move to the near heap or lower
//!   buckets. A key moves at most once per bit; in T1 there are 0.2 moves per event, in the
//!   8×8 switch about one. A radix heap needs a monotone queue, which a simulator's is: no
//!   event is scheduled before the one being run.
//!
//! The block's width k follows the event rate (see [`BLOCK_EVENTS`]); the order of events is
//! the keys' order whatever the width, only the speed depends on it. A single 4-ary heap of
//! every pending event, used before, spent a quarter of a closed-loop run (T1's 2,400 users:
//! ~10⁴ pending events, most a propagation delay ahead) walking seven levels per event.

mod heap;

use crate::units::Time;
use heap::Heap;

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

/// A pending event as one 128-bit key: time in the high 64 bits; below it the insertion
/// sequence (35 bits), which breaks ties; the event itself in the lowest 29 bits, which never
/// decide the order because sequences are unique.
#[inline(always)]
fn key_time(key: u128) -> u64 {
    (key >> 64) as u64
}

#[inline(always)]
fn key_event(key: u128) -> Event {
    Event::unpack(key as u64 & ((1 << EVENT_BITS) - 1))
}

/// Events taken per block of time (see `Scheduler::near_bits`) that the block's width aims
/// at: enough that a far key's moves are few per event, few enough that the near heap stays
/// three to five levels deep.
const BLOCK_EVENTS: std::ops::RangeInclusive<u64> = 128..=1024;

/// Pending events, earliest first; ties broken by insertion order.
pub struct Scheduler {
    /// The keys that differ from `last` only below bit `near_bits`: those of the block of
    /// 2^(near_bits − 64) ps that the last event taken lies in.
    near: Heap,
    near_bits: u32,
    /// Far bucket b (from `near_bits` up): the pending keys whose highest bit differing from
    /// `last` is bit b.
    far: Vec<Vec<u128>>,
    /// The least key of each non-empty far bucket.
    least: [u128; 128],
    /// Bit b set: far bucket b is non-empty.
    occupied: u128,
    /// The key of the event taken last (every pending key is above it).
    last: u128,
    /// `executed` when the near heap was last refilled from a far bucket.
    block_start: u64,
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
        Scheduler {
            near: Heap::new(),
            // Blocks of about a microsecond to begin with.
            near_bits: 64 + 20,
            far: (0..128).map(|_| Vec::new()).collect(),
            least: [0; 128],
            occupied: 0,
            last: 0,
            block_start: 0,
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
        self.near.len() + self.far.iter().map(Vec::len).sum::<usize>()
    }

    /// Schedules `ev` at `at`. Scheduling in the past is a bug in a component.
    #[inline]
    pub fn schedule(&mut self, at: Time, ev: Event) {
        debug_assert!(at >= self.now, "event {ev:?} scheduled in the past");
        assert!(self.next_seq <= MAX_SEQ, "more than {MAX_SEQ} events scheduled in one run");
        let low = (self.next_seq << EVENT_BITS) | ev.pack();
        self.next_seq += 1;
        self.put(((at.0 as u128) << 64) | low as u128);
    }

    /// Files `key` (at or above `last`) in the near heap or its far bucket.
    #[inline(always)]
    fn put(&mut self, key: u128) {
        let d = key ^ self.last;
        if d >> self.near_bits == 0 {
            self.near.push(key);
            return;
        }
        let b = (127 - d.leading_zeros()) as usize;
        let bit = 1u128 << b;
        if self.occupied & bit == 0 || key < self.least[b] {
            self.least[b] = key;
        }
        self.occupied |= bit;
        self.far[b].push(key);
    }

    /// The least pending key, the near heap's if it has any (every near key is below every
    /// far one: they share `last`'s bits from `near_bits` up, a far key has a 1 there where
    /// `last` has a 0).
    #[inline(always)]
    fn first(&mut self) -> Option<u128> {
        match self.near.first() {
            Some(k) => Some(k),
            None if self.occupied != 0 => Some(self.least[self.occupied.trailing_zeros() as usize]),
            None => None,
        }
    }

    /// Takes `key`, the least pending key ([`Scheduler::first`]). From a far bucket (the near
    /// heap is empty), it becomes `last` first, which moves its bucket's keys nearer (into the
    /// heap or lower buckets); the higher buckets' keys still differ from it first at the same
    /// bit. `last` changes only here, so every key scheduled later is above it.
    #[inline(always)]
    fn take(&mut self, key: u128) -> (Time, Event) {
        self.last = key;
        if self.near.is_empty() {
            self.refill();
        }
        self.near.take_first();
        self.now = Time(key_time(key));
        self.executed += 1;
        (self.now, key_event(key))
    }

    /// Refills the empty near heap: the block's width first follows the event rate (by the
    /// events the block just ended held), then the lowest far bucket, which holds `last` (the
    /// next key), and every bucket now below the block's bit move: into the heap, or lower
    /// buckets. A bucket above both keeps its keys, which still differ first at its bit from
    /// `last` (it shares the higher bits with the key taken before).
    #[cold]
    fn refill(&mut self) {
        let (n, aim) = ((self.executed - self.block_start).max(1), &BLOCK_EVENTS);
        if n > *aim.end() {
            let halve = (n / aim.end()).ilog2() + 1;
            self.near_bits = self.near_bits.saturating_sub(halve).max(64);
        } else if n < *aim.start() {
            let double = (aim.start() / n).ilog2();
            self.near_bits = (self.near_bits + double).min(127);
        }
        self.block_start = self.executed;
        let lowest = self.occupied.trailing_zeros();
        let below = match self.near_bits.max(lowest + 1) {
            128 => !0,
            bits => (1u128 << bits) - 1,
        };
        let mut moving = self.occupied & below;
        self.occupied &= !below;
        while moving != 0 {
            let b = moving.trailing_zeros() as usize;
            moving &= moving - 1;
            let mut keys = std::mem::take(&mut self.far[b]);
            for &k in &keys {
                self.put(k);
            }
            keys.clear();
            self.far[b] = keys;
        }
        self.near.first();
    }

    /// Takes the earliest event and advances the clock to it.
    #[inline]
    pub fn pop(&mut self) -> Option<(Time, Event)> {
        let key = self.first()?;
        Some(self.take(key))
    }

    /// Takes the earliest event if it comes before `t`, as [`Scheduler::pop`] does; leaves
    /// the queue as it was (the event not taken, the clock not moved) if it comes at or after
    /// `t`: a run stepped to `t` goes on from there exactly as one that never stopped.
    #[inline]
    pub fn pop_before(&mut self, t: Time) -> Option<(Time, Event)> {
        let key = self.first()?;
        if key_time(key) >= t.0 {
            return None;
        }
        Some(self.take(key))
    }

    /// The event that comes next unless one scheduled meanwhile comes first (a hint for
    /// prefetching what it touches; call after a pop).
    #[inline]
    pub fn peek_next(&self) -> Option<Event> {
        match self.near.next() {
            Some(k) => Some(key_event(k)),
            None if self.occupied != 0 => {
                Some(key_event(self.least[self.occupied.trailing_zeros() as usize]))
            }
            None => None,
        }
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
    fn takes_events_in_key_order_at_every_scale() {
        // The two tiers and the block width that follows the event rate change only the
        // speed: checked against a sorted reference over loads that mix delays of zero (ties),
        // picoseconds and seconds, and rates that make the width shrink and grow, with
        // `pop_before` stops and `peek_next` after every pop.
        let mut r = Rng::stream(11, Stream::Topology, 0);
        for round in 0..6u64 {
            let mut s = Scheduler::new();
            let mut reference = std::collections::BTreeSet::new();
            let mut seq = 0u64;
            let (mut width, mut shrank, mut grew) = (s.near_bits, false, false);
            for i in 0..60_000u32 {
                // Phases of 5,000: dense (many events a nanosecond) and sparse.
                let dense = (i / 5_000 + round as u32).is_multiple_of(2);
                let scales: &[u64] = if dense {
                    &[0, 10, 1_000]
                } else {
                    &[0, 1_000, 1_000_000, 1_000_000_000, 100_000_000_000]
                };
                let scale = scales[r.range_u64(0, scales.len() as u64 - 1) as usize];
                let burst = if i.is_multiple_of(7) { 3 } else { 1 };
                for _ in 0..burst {
                    let at = s.now().0 + r.range_u64(0, scale);
                    s.schedule(Time(at), Event::Arrival(i));
                    reference.insert((at, seq, i));
                    seq += 1;
                }
                let stop = Time(s.now().0 + r.range_u64(0, 2_000_000));
                for _ in 0..burst {
                    let want = reference.first().copied().filter(|&(t, _, _)| t < stop.0);
                    let got = s.pop_before(stop);
                    assert_eq!(got, want.map(|(t, _, id)| (Time(t), Event::Arrival(id))));
                    if want.is_some() {
                        reference.pop_first();
                    }
                    let next = reference.first().map(|&(_, _, id)| Event::Arrival(id));
                    assert_eq!(s.peek_next(), next);
                }
                assert_eq!(s.pending(), reference.len());
                (shrank, grew) = (shrank || s.near_bits < width, grew || s.near_bits > width);
                width = s.near_bits;
            }
            // The load did move the block's width both ways.
            assert!(shrank && grew);
            while let Some((t, _, id)) = reference.pop_first() {
                assert_eq!(s.pop(), Some((Time(t), Event::Arrival(id))));
            }
            assert_eq!(s.pop(), None);
        }
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
