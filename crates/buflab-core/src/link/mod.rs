//! A link: an output queue, a serializer and a propagation pipe.
//!
//! Read first: this page, then the `buflab-queue` crate's contract. Owns the serializer, the pipe,
//! the buffer's hard limit, the timetable and when a discipline is asked; must not know a
//! discipline's rules, routes, endpoints or the scenario (the topology builder configures it; the
//! simulator feeds it).
//!
//! ```text
//!   arrive ──► [ queue (drop-tail, or a discipline) ] ──► serializer (rate) ──► pipe (delay) ──► exit
//! ```
//!
//! The link is FIFO end to end, so it needs no per-packet events inside: when a packet is
//! admitted its service start (`max(arrival, busy_until)`), its end of serialization and its
//! exit time are already known. Admitted packets sit in one ring ordered by exit time, and the
//! link keeps at most one pending [`Event::LinkExit`], for the head of that ring.
//!
//! **Lazy dequeue.** Whether a new arrival is dropped depends on how many packets are *waiting*
//! at that instant (service start later than now). Packets whose service has started are
//! "dequeued" lazily: before each arrival, and before each exit, the link walks forward over
//! the ring entries whose start time has passed and reports their dequeue to the monitor with
//! their exact start time. The monitor therefore sees this queue's enqueue, dequeue and drop
//! events in time order, as if a dequeue event had fired at each service start.
//!
//! **Buffer semantics.** `BufferLimit::Packets(B)` counts the packets waiting, not the one
//! being serialized, as ns-2's drop-tail does: an arrival is dropped when the serializer is
//! busy and B packets already wait. A link with B packets of buffer holds at most B + 1.
//! Equal-time rule: a service that starts at time t happens before an arrival at t.
//!
//! **Changing the limit.** `set_limit` takes effect for later arrivals only: packets already
//! waiting above a new, smaller limit are not dropped but drain at line rate, and arrivals are
//! refused until fewer than the new limit wait. The auto-sizer relies on this (see
//! [`crate::autosize`]); the invariant "never more waiting than the limit" then reads "never
//! more than the limit in force when the newest waiting packet was admitted", and over a run,
//! never more than the largest limit in force.
//!
//! **Queue disciplines** ([`crate::queue`]; the contract is the `buflab-queue` crate's), in
//! two forms:
//! - An *admission* decides only at arrivals and keeps the queue FIFO: the link keeps the
//!   timetable above and asks it at every arrival, after the lazy dequeue, with the waiting
//!   count and `busy_until`; it admits, marks (sets CE) or drops. The buffer limit still drops
//!   whatever it refuses. A marked packet is admitted: it is counted in `marks` and reported to
//!   the monitor after its enqueue. Drop-tail is the first, fast arm: checked inline, no call.
//! - A *held* discipline keeps the waiting packets itself and picks each departure (head
//!   drop, and later pacers, schedulers, AQMs that drop at dequeue): see `held.rs`. Its
//!   departures are not known on arrival, so such a link is never express and never relays,
//!   and it has one more pending event, [`Event::LinkReady`], when its serializer frees up.
//!
//! **Express links.** A link with an unlimited buffer and no monitor never drops and reports
//! nothing, so it keeps no waiting state at all (no `Buffer`: its two-cache-line record is all
//! it costs, which matters for the private links of thousands of users); the simulator may even
//! compute a packet's passage through it ahead of time (see `Sim::forward`).
//!
//! **Relay mode.** When nothing downstream of a link depends on anything but the order of its
//! exits (the simulator decides, see `Sim::can_relay`), `arrive` returns the exit time of an
//! admitted packet and the caller hands the packet on at once. The ring then holds only the
//! packets still waiting, for the drop decision and the dequeue reports, and the link
//! schedules no events at all.

mod held;

use std::collections::VecDeque;

pub use held::Waiting;

use crate::monitor::QueueMonitor;
use crate::packet::{flags, Packet};
use crate::queue::{Admission, AqmCounts, Arrival, Discipline, OpticalFifo, Verdict};
use crate::sched::{Event, Scheduler};
use crate::units::{BufferLimit, Rate, Time};

/// A link's queue discipline (see the module doc).
pub enum Queue {
    /// Drop-tail, checked inline: the fast path.
    DropTail,
    /// Decides at arrivals; the queue stays FIFO and the link keeps the timetable.
    Admission(Box<dyn Admission>),
    /// Holds the waiting packets and picks each departure.
    Held(Box<dyn Discipline<Waiting>>),
}

/// An admitted packet and its timetable.
#[derive(Clone, Copy, Debug)]
struct InFlight {
    /// When its serialization starts (it stops waiting).
    start: Time,
    /// When it leaves the far end of the pipe.
    exit: Time,
    pkt: Packet,
}

/// What happened to an arriving packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// In the ring; a `LinkExit` event will deliver it.
    Accepted,
    Dropped,
    /// Admitted on a relay link: the caller delivers it now, at this exit time, with these
    /// flags (a queue discipline may have set CE).
    Relayed(Time, u16),
}

// The fields in the order a packet's passage reads them, in two cache lines (64-byte aligned):
// an express link (a sender's access link, a user's private delay line) touches only these to
// take a packet (`transit`, `push_exit`) and to hand it on (`pop_exit`), and with a thousand
// of them each line it touches is a cache miss. What only a link that can drop, mark or
// report needs is in its `Buffer`, which an express link does not have: an idle user's two
// private links cost 128 bytes each, not 256.
#[repr(C, align(64))]
pub struct Link {
    /// When the serializer finishes the last admitted packet.
    busy_until: Time,
    /// One-way propagation delay.
    pub delay: Time,
    /// Last two (size, serialization time) pairs: most packets on a link have one of two sizes.
    ser_sizes: [u32; 2],
    ser_times: [Time; 2],
    /// Packets that finished serialization (service started, whole run).
    pub departures: u64,
    /// Absolute count of entries removed from the ring's front.
    popped: u64,
    ring: VecDeque<InFlight>,
    /// Absolute count of entries whose dequeue (service start) has been processed.
    dequeued: u64,
    head_scheduled: bool,
    /// Relay mode: exits are handed to the caller on admission; the ring keeps only waiting
    /// packets, for the drop decision and dequeue reports.
    relay: bool,
    pub rate: Rate,
    /// The waiting side; None while the link is express and has never been anything else.
    buffer: Option<Box<Buffer>>,
}

const _: () = assert!(std::mem::size_of::<Link>() == 128);

/// What a link that can drop, mark or report keeps beside its timetable: the buffer's limit
/// and occupancy, its discipline, its monitor and its counts.
struct Buffer {
    waiting_pkts: u64,
    waiting_bytes: u64,
    queue: Queue,
    limit: BufferLimit,
    last_arrival: Time,
    /// Arrivals at the same picosecond as the previous one. Their order is the order their
    /// events were scheduled; a count above zero signals phase effects (deterministic
    /// delays lining flows up), which send jitter breaks.
    simultaneous_arrivals: u64,
    /// A relay link: the line's end of service before the packet last relayed, so the exit
    /// of the one ahead of it (0: it was the first).
    relayed_behind: Time,
    monitor: Option<Box<QueueMonitor>>,
    drops: u64,
    /// ECT packets admitted with CE set by the queue discipline (whole run).
    marks: u64,
    /// A held discipline's pending `LinkReady` event, and the packets it drops from its queue
    /// (reused).
    ready_at: Option<Time>,
    purged: Vec<Waiting>,
}

impl Default for Buffer {
    fn default() -> Buffer {
        Buffer {
            waiting_pkts: 0,
            waiting_bytes: 0,
            queue: Queue::DropTail,
            limit: BufferLimit::Unlimited,
            last_arrival: Time::MAX,
            simultaneous_arrivals: 0,
            relayed_behind: Time::ZERO,
            monitor: None,
            drops: 0,
            marks: 0,
            ready_at: None,
            purged: Vec::new(),
        }
    }
}

impl Link {
    pub fn new(rate: Rate, delay: Time, limit: BufferLimit) -> Link {
        let mut link = Link {
            rate,
            delay,
            busy_until: Time::ZERO,
            ring: VecDeque::new(),
            popped: 0,
            dequeued: 0,
            head_scheduled: false,
            ser_sizes: [0; 2],
            ser_times: [Time::ZERO; 2],
            relay: false,
            departures: 0,
            buffer: None,
        };
        link.set_limit(limit);
        link
    }

    /// The waiting side, made on first use (an express link has none).
    #[inline]
    fn buffer(&mut self) -> &mut Buffer {
        self.buffer.get_or_insert_with(Box::default)
    }

    /// Packets dropped (whole run): refused arrivals and packets a held discipline dropped
    /// from its queue.
    pub fn drops(&self) -> u64 {
        self.buffer.as_ref().map_or(0, |b| b.drops)
    }

    /// ECT packets admitted or sent with CE set by the queue discipline (whole run).
    pub fn marks(&self) -> u64 {
        self.buffer.as_ref().map_or(0, |b| b.marks)
    }

    /// Arrivals at the same picosecond as the previous one (see [`Buffer`]).
    pub fn simultaneous_arrivals(&self) -> u64 {
        self.buffer.as_ref().map_or(0, |b| b.simultaneous_arrivals)
    }

    pub fn limit(&self) -> BufferLimit {
        self.buffer.as_ref().map_or(BufferLimit::Unlimited, |b| b.limit)
    }

    /// Changes the buffer limit from now on (the auto-sizer does, between packets). Packets
    /// already waiting above a new, smaller limit stay and drain at line rate; only later
    /// arrivals see the new limit, and are dropped until fewer than it wait. So while they
    /// drain the queue can hold more than the limit in force, but never more than the limit
    /// that was in force when its newest packet was admitted.
    pub fn set_limit(&mut self, limit: BufferLimit) {
        if limit != BufferLimit::Unlimited || self.buffer.is_some() {
            self.buffer().limit = limit;
        }
    }

    /// The monitor's running totals as of `t` (now), after reporting every dequeue due by
    /// then; None without a monitor. Reports stay in time order because every arrival at a
    /// monitored link comes at the global time of its event (see `Sim::forward`).
    pub fn running_totals(
        &mut self,
        t: Time,
        sched: &mut Scheduler,
        id: u32,
    ) -> Option<crate::monitor::Cumulative> {
        self.buffer.as_ref()?.monitor.as_ref()?;
        self.flush(t);
        self.catch_up(t, sched, id);
        self.monitor_mut().map(|m| m.running_totals(t))
    }

    /// Gives the link a queue discipline other than drop-tail (the buffer limit stays the
    /// hard limit).
    pub fn set_queue(&mut self, queue: Queue) {
        debug_assert!(self.ring.is_empty());
        self.buffer().queue = queue;
    }

    /// Its discipline, drop-tail when it has none.
    fn queue(&self) -> &Queue {
        self.buffer.as_ref().map_or(&Queue::DropTail, |b| &b.queue)
    }

    /// Its discipline, if it has one other than drop-tail.
    fn queue_mut(&mut self) -> Option<&mut Queue> {
        self.buffer.as_deref_mut().map(|b| &mut b.queue)
    }

    /// The optical FIFO this link runs beside its timetable, if its discipline is one.
    pub fn optical_mut(&mut self) -> Option<&mut OpticalFifo> {
        match self.queue_mut()? {
            Queue::Admission(a) => (a.as_mut() as &mut dyn std::any::Any).downcast_mut::<OpticalFifo>(),
            _ => None,
        }
    }

    /// Its discipline's counts by cause, if it is an AQM that keeps them (the `aqm` table).
    pub fn aqm_counts(&self) -> Option<AqmCounts> {
        match self.queue() {
            Queue::Admission(a) => a.aqm_counts(),
            Queue::Held(d) => d.aqm_counts(),
            Queue::DropTail => None,
        }
    }

    /// Its discipline counts what happens from `t` on (the measured window's start).
    pub fn count_aqm_from(&mut self, t: Time) {
        match self.queue_mut() {
            Some(Queue::Admission(a)) => a.count_from(t),
            Some(Queue::Held(d)) => d.count_from(t),
            Some(Queue::DropTail) | None => {}
        }
    }

    /// Whether its discipline sends packets in the order they arrived (all but a flow queue).
    pub fn keeps_arrival_order(&self) -> bool {
        match self.queue() {
            Queue::Held(d) => d.keeps_arrival_order(),
            _ => true,
        }
    }

    /// Whether its departures are fixed on admission, so that it may relay (see `set_relay`):
    /// not under a held discipline, which picks them later.
    pub fn can_relay(&self) -> bool {
        !matches!(self.queue(), Queue::Held(_))
    }

    pub fn attach_monitor(&mut self, m: QueueMonitor) {
        self.buffer().monitor = Some(Box::new(m));
    }

    pub fn monitor_mut(&mut self) -> Option<&mut QueueMonitor> {
        self.buffer.as_deref_mut()?.monitor.as_deref_mut()
    }

    pub fn take_monitor(&mut self) -> Option<QueueMonitor> {
        self.buffer.as_deref_mut()?.monitor.take().map(|b| *b)
    }

    /// True when the link can neither drop, mark nor report: no waiting state is kept.
    pub fn is_express(&self) -> bool {
        self.buffer.as_ref().is_none_or(|b| {
            b.limit == BufferLimit::Unlimited && b.monitor.is_none() && matches!(b.queue, Queue::DropTail)
        })
    }

    /// Switches the link to relay mode (see `Sim::forward`): its packets are delivered as soon
    /// as they are admitted, at their exit time.
    pub fn set_relay(&mut self) {
        debug_assert!(self.ring.is_empty());
        self.relay = true;
    }

    /// Whether it relays (see `set_relay`).
    pub fn is_relay(&self) -> bool {
        self.relay
    }

    /// A relay link: the exit time of the packet admitted before the one it just relayed,
    /// None if that was the first (every packet takes some time on the line, so the line is
    /// busy past 0 once one has been admitted).
    #[inline]
    pub fn exit_ahead_of_relayed(&self) -> Option<Time> {
        let behind = self.buffer.as_ref().map_or(Time::ZERO, |b| b.relayed_behind);
        (behind > Time::ZERO).then(|| behind + self.delay)
    }

    /// Packets and bytes waiting now (as of the last arrival, exit or `running_totals`).
    pub fn waiting(&self) -> (u64, u64) {
        self.buffer.as_ref().map_or((0, 0), |b| (b.waiting_pkts, b.waiting_bytes))
    }

    /// Frees the buffers of a link that holds nothing (its ring of packets grows to the
    /// largest burst it has carried and would keep that capacity): an idle user's private
    /// links then cost only their record. Changes nothing else; the next packet allocates
    /// again.
    pub fn release_idle_buffers(&mut self) {
        if self.ring.is_empty() {
            self.ring = VecDeque::new();
        }
    }

    /// Whether it holds memory for packets (its ring has room, whether or not it is used).
    pub fn holds_buffer(&self) -> bool {
        self.ring.capacity() > 0
    }

    /// Packets in the link not yet handed on (waiting, in service or propagating). A relay
    /// link has handed every admitted packet on already.
    pub fn in_flight(&self) -> usize {
        let held = match self.queue() {
            Queue::Held(d) => d.backlog().0 as usize,
            _ => 0,
        };
        if self.relay {
            0
        } else {
            self.ring.len() + held
        }
    }

    #[inline]
    fn serialization(&mut self, size: u32) -> Time {
        if self.ser_sizes[0] == size {
            return self.ser_times[0];
        }
        if self.ser_sizes[1] == size {
            return self.ser_times[1];
        }
        let t = self.rate.serialization(size as u64);
        self.ser_sizes = [size, self.ser_sizes[0]];
        self.ser_times = [t, self.ser_times[0]];
        t
    }

    /// Express passage: the time a packet arriving at `t` leaves the far end.
    /// Only for express links, whose arrivals come in time order.
    #[inline]
    pub fn transit(&mut self, t: Time, size: u32) -> Time {
        debug_assert!(self.is_express());
        let start = t.max(self.busy_until);
        self.busy_until = start + self.serialization(size);
        self.departures += 1;
        self.busy_until + self.delay
    }

    /// Puts an express packet whose exit time is already known into the pipe.
    #[inline]
    pub fn push_exit(&mut self, exit: Time, pkt: Packet, sched: &mut Scheduler, id: u32) {
        debug_assert!(self.ring.back().is_none_or(|b| b.exit <= exit));
        self.ring.push_back(InFlight { start: exit, exit, pkt });
        // Express entries are never "waiting": keep the dequeue cursor level with the ring.
        self.dequeued += 1;
        if !self.head_scheduled {
            self.head_scheduled = true;
            sched.schedule(exit, Event::LinkExit(id));
        }
    }

    /// A packet arrives at time `t` (now, or later for a link fed only by one FIFO upstream).
    pub fn arrive(&mut self, t: Time, mut pkt: Packet, sched: &mut Scheduler, id: u32) -> Outcome {
        if let Queue::Held(_) = self.buffer().queue {
            return self.arrive_held(t, pkt, sched, id);
        }
        let b = self.buffer();
        if t == b.last_arrival {
            b.simultaneous_arrivals += 1;
        }
        b.last_arrival = t;
        self.flush(t);
        let busy = self.busy_until > t;
        let busy_until = self.busy_until;
        let b = self.buffer();
        let full = busy && !buflab_queue::fits(b.limit, b.waiting_pkts, b.waiting_bytes, pkt.size);
        let verdict = match &mut b.queue {
            Queue::DropTail if full => Verdict::Drop,
            Queue::DropTail => Verdict::Admit,
            Queue::Admission(a) => a.on_arrival(&Arrival {
                now: t,
                waiting: b.waiting_pkts,
                waiting_bytes: b.waiting_bytes,
                busy_until,
                // A timetable: every admitted packet's service is booked in `busy_until`.
                waiting_scheduled: true,
                limit: b.limit,
                full,
                size: pkt.size,
                ect: pkt.flags & flags::ECT != 0,
                ect1: pkt.flags & flags::ECT1 != 0,
            }),
            Queue::Held(_) => unreachable!("held disciplines arrive in held.rs"),
        };
        let marked = match verdict {
            Verdict::Admit => false,
            Verdict::Mark => {
                pkt.flags |= flags::CE;
                true
            }
            Verdict::Drop => return self.drop(t, &pkt),
        };
        let start = t.max(self.busy_until);
        let ser = self.serialization(pkt.size);
        self.busy_until = start + ser;
        let exit = self.busy_until + self.delay;
        if !self.relay || busy {
            self.ring.push_back(InFlight { start, exit, pkt });
        }
        let b = self.buffer();
        if busy {
            b.waiting_pkts += 1;
            b.waiting_bytes += pkt.size as u64;
        }
        if let Some(m) = b.monitor.as_deref_mut() {
            m.on_enqueue(t, &pkt, b.waiting_pkts, b.waiting_bytes, start - t);
        }
        if marked {
            self.report_mark(t, &pkt);
        }
        if !busy {
            // Straight into service: dequeued at its arrival instant, never counted waiting.
            if !self.relay {
                self.dequeued += 1;
            }
            self.departures += 1;
            let b = self.buffer();
            if let Some(m) = b.monitor.as_deref_mut() {
                m.on_dequeue(t, &pkt, b.waiting_pkts, b.waiting_bytes, ser);
            }
        }
        if self.relay {
            self.buffer().relayed_behind = busy_until;
            return Outcome::Relayed(exit, pkt.flags);
        }
        if !self.head_scheduled {
            self.head_scheduled = true;
            sched.schedule(exit, Event::LinkExit(id));
        }
        Outcome::Accepted
    }

    /// Counts a packet just admitted with CE and reports it after its enqueue.
    #[inline]
    fn report_mark(&mut self, t: Time, pkt: &Packet) {
        let b = self.buffer();
        b.marks += 1;
        if let Some(m) = b.monitor.as_deref_mut() {
            m.on_mark(t, pkt, b.waiting_pkts, b.waiting_bytes);
        }
    }

    /// Refuses an arriving packet (buffer full, or the discipline's decision).
    #[inline]
    fn drop(&mut self, t: Time, pkt: &Packet) -> Outcome {
        let b = self.buffer();
        b.drops += 1;
        if let Some(m) = b.monitor.as_deref_mut() {
            m.on_drop(t, pkt, b.waiting_pkts, b.waiting_bytes);
        }
        Outcome::Dropped
    }

    /// Processes the dequeue of every waiting packet whose service has started by `t`.
    #[inline]
    fn flush(&mut self, t: Time) {
        if self.relay {
            // The ring holds only waiting packets: a dequeued one leaves it.
            while let Some(&e) = self.ring.front() {
                if e.start > t {
                    break;
                }
                self.ring.pop_front();
                self.dequeue(e);
            }
            return;
        }
        let total = self.popped + self.ring.len() as u64;
        while self.dequeued < total {
            let e = self.ring[(self.dequeued - self.popped) as usize];
            if e.start > t {
                break;
            }
            self.dequeued += 1;
            self.dequeue(e);
        }
    }

    /// A waiting packet's service started (only a link with a buffer has waiting packets).
    #[inline]
    fn dequeue(&mut self, e: InFlight) {
        self.departures += 1;
        let b = self.buffer();
        b.waiting_pkts -= 1;
        b.waiting_bytes -= e.pkt.size as u64;
        if b.monitor.is_some() {
            let ser = self.serialization(e.pkt.size);
            let b = self.buffer();
            let (w, wb) = (b.waiting_pkts, b.waiting_bytes);
            if let Some(m) = b.monitor.as_deref_mut() {
                m.on_dequeue(e.start, &e.pkt, w, wb, ser);
            }
        }
    }

    /// The head packet reaches the far end at `now`; schedules the next head.
    pub fn pop_exit(&mut self, now: Time, sched: &mut Scheduler, id: u32) -> Packet {
        self.flush(now);
        // The packet is copied straight from the ring: a copy of the whole record, returned
        // from later, was reloaded in overlapping pieces that stalled every exit.
        let e = self.ring.front().expect("LinkExit on an empty link");
        debug_assert_eq!(e.exit, now);
        let pkt = e.pkt;
        self.ring.pop_front();
        self.popped += 1;
        // The packet four exits ahead was admitted a propagation delay ago: its entry has
        // long left the cache, and each exit event waited on it (13 % of an 8×8 switch
        // run's samples, at the copy above). Loading it now lands it before its turn.
        self.prefetch_exit(3);
        match self.ring.front() {
            Some(next) => sched.schedule(next.exit, Event::LinkExit(id)),
            None => self.head_scheduled = false,
        }
        pkt
    }

    /// The flow of the packet `i` places behind the next to leave, if any (a hint for
    /// prefetching).
    #[inline]
    pub fn exit_flow(&self, i: usize) -> Option<u32> {
        self.ring.get(i).map(|e| e.pkt.flow)
    }

    /// Starts loading the record of the packet `i` places behind the next to leave (a hint).
    #[inline]
    fn prefetch_exit(&self, i: usize) {
        if let Some(e) = self.ring.get(i) {
            crate::prefetch::prefetch(e);
        }
    }

    /// Reports every dequeue up to `t` (end of run) to the monitor.
    pub fn finish(&mut self, t: Time, sched: &mut Scheduler, id: u32) {
        self.flush(t);
        self.catch_up(t, sched, id);
        self.charge_held_waits();
        if let Some(Buffer { monitor: Some(m), waiting_pkts, waiting_bytes, .. }) = self.buffer.as_deref_mut()
        {
            m.finish(t, *waiting_pkts, *waiting_bytes);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Kind;

    fn pkt(seq: u32, size: u32) -> Packet {
        Packet::for_test(Kind::Udp, 0, seq, size)
    }

    #[test]
    fn buffer_counts_waiting_packets_not_the_one_in_service() {
        // 1000 B at 8 Mb/s = 1 ms each. Buffer 2: at t = 0 four packets arrive together:
        // one goes into service, two wait, the fourth is dropped.
        let mut s = Scheduler::new();
        let mut l = Link::new(Rate::mbps(8), Time::from_ms(10), BufferLimit::Packets(2));
        let r: Vec<Outcome> = (0..4).map(|i| l.arrive(Time::ZERO, pkt(i, 1000), &mut s, 0)).collect();
        assert_eq!(r, vec![Outcome::Accepted, Outcome::Accepted, Outcome::Accepted, Outcome::Dropped]);
        // At 1 ms the second packet starts service, so one slot is free again.
        assert_eq!(l.arrive(Time::from_ms(1), pkt(4, 1000), &mut s, 0), Outcome::Accepted);
        assert_eq!(l.arrive(Time::from_ms(1), pkt(5, 1000), &mut s, 0), Outcome::Dropped);
    }

    /// An idle user's links give back the ring their last window grew (`sim/users.rs`); a
    /// link still carrying a packet keeps it, and the packet still leaves on time.
    #[test]
    fn an_empty_link_releases_its_ring_and_a_busy_one_keeps_it() {
        let mut s = Scheduler::new();
        let mut l = Link::new(Rate::mbps(8), Time::from_ms(10), BufferLimit::Unlimited);
        for i in 0..20 {
            l.arrive(Time::ZERO, pkt(i, 1000), &mut s, 0);
        }
        assert!(l.ring.capacity() >= 20);
        l.release_idle_buffers();
        assert!(l.ring.capacity() >= 20, "packets in flight: the ring stays");
        while let Some((t, _)) = s.pop() {
            l.pop_exit(t, &mut s, 0);
            if l.in_flight() == 1 {
                l.release_idle_buffers();
                assert!(l.ring.capacity() > 0);
            }
        }
        assert_eq!(l.in_flight(), 0);
        l.release_idle_buffers();
        assert_eq!(l.ring.capacity(), 0, "an empty link holds no buffer");
        // It carries the next packet as a fresh link would: 1 ms of serialization, 10 ms on.
        l.arrive(Time::from_secs(1), pkt(20, 1000), &mut s, 0);
        assert_eq!(s.pop(), Some((Time::from_secs(1) + Time::from_ms(11), Event::LinkExit(0))));
    }

    #[test]
    fn exits_are_fifo_with_exact_times() {
        let mut s = Scheduler::new();
        let mut l = Link::new(Rate::mbps(8), Time::from_ms(10), BufferLimit::Unlimited);
        l.arrive(Time::ZERO, pkt(0, 1000), &mut s, 7);
        l.arrive(Time::ZERO, pkt(1, 500), &mut s, 7);
        let (t, e) = s.pop().unwrap();
        assert_eq!((t, e), (Time::from_ms(11), Event::LinkExit(7)));
        assert_eq!(l.pop_exit(t, &mut s, 7).seq, 0);
        let (t, _) = s.pop().unwrap();
        assert_eq!(t, Time::from_us(11_500));
        assert_eq!(l.pop_exit(t, &mut s, 7).seq, 1);
        assert!(s.pop().is_none());
    }

    #[test]
    fn a_smaller_limit_lets_queued_packets_drain() {
        // Four packets wait behind the one in service; the limit drops to 1. Nobody already
        // queued is dropped, but arrivals are refused until fewer than 1 wait.
        let mut s = Scheduler::new();
        let mut l = Link::new(Rate::mbps(8), Time::ZERO, BufferLimit::Packets(10));
        for i in 0..5 {
            assert_eq!(l.arrive(Time::ZERO, pkt(i, 1000), &mut s, 0), Outcome::Accepted);
        }
        l.set_limit(BufferLimit::Packets(1));
        assert_eq!(l.arrive(Time::ZERO, pkt(5, 1000), &mut s, 0), Outcome::Dropped);
        assert_eq!(l.in_flight(), 5);
        // At 4 ms the fifth packet is in service and none waits: one may queue again.
        assert_eq!(l.arrive(Time::from_ms(4), pkt(6, 1000), &mut s, 0), Outcome::Accepted);
        assert_eq!(l.arrive(Time::from_ms(4), pkt(7, 1000), &mut s, 0), Outcome::Dropped);
    }

    fn red_link(relay: bool) -> Link {
        use crate::queue::red::{Red, RedConfig};
        use crate::rng::{Rng, Stream};
        // w_q = 1: the average is the queue itself. Ramp 1..10 packets, certain at 10.
        let cfg = RedConfig {
            min_th: 1.0,
            max_th: 10.0,
            max_p: 1.0,
            weight: 1.0,
            gentle: false,
            ecn: true,
            packet: 1000,
        };
        let mut l = Link::new(Rate::mbps(8), Time::ZERO, BufferLimit::Packets(20));
        l.set_queue(Queue::Admission(Box::new(Red::new(
            cfg,
            Rate::mbps(8),
            Rng::stream(1, Stream::Queue, 0),
        ))));
        if relay {
            l.set_relay();
        }
        l
    }

    #[test]
    fn red_marks_ect_packets_and_drops_the_others_and_marks_travel_with_the_packet() {
        // 30 packets at once, alternately ECT and not: the queue builds, so the ramp picks
        // some; picked ECT packets are admitted with CE, picked others are dropped.
        let mut s = Scheduler::new();
        let mut l = red_link(false);
        let mut admitted = Vec::new();
        for i in 0..30 {
            let mut p = pkt(i, 1000);
            p.flags = if i.is_multiple_of(2) { flags::ECT } else { 0 };
            if l.arrive(Time::ZERO, p, &mut s, 0) == Outcome::Accepted {
                admitted.push(i);
            }
        }
        // The buffer of 20 never fills: every drop is RED's (its own tests count them by kind).
        assert!(l.marks() > 0 && l.drops() > 0, "marks {}, drops {}", l.marks(), l.drops());
        assert_eq!(admitted.len() as u64 + l.drops(), 30);
        // Every packet leaves with the flags it was admitted with: CE only on even (ECT) ones.
        let mut ce = 0;
        while let Some((t, _)) = s.pop() {
            let p = l.pop_exit(t, &mut s, 0);
            assert!(p.flags & flags::CE == 0 || p.seq.is_multiple_of(2), "CE on a non-ECT packet");
            ce += u64::from(p.flags & flags::CE != 0);
        }
        assert_eq!(ce, l.marks());
        // A relay link hands the mark to the caller with the exit time.
        let mut r = red_link(true);
        let mut relayed_ce = 0;
        for i in 0..30 {
            let mut p = pkt(i, 1000);
            p.flags = flags::ECT;
            if let Outcome::Relayed(_, f) = r.arrive(Time::ZERO, p, &mut s, 0) {
                relayed_ce += u64::from(f & flags::CE != 0);
            }
        }
        assert!(r.marks() > 0);
        assert_eq!(relayed_ce, r.marks());
    }

    #[test]
    fn byte_limit_counts_waiting_bytes() {
        let mut s = Scheduler::new();
        let mut l = Link::new(Rate::mbps(8), Time::ZERO, BufferLimit::Bytes(1500));
        assert_eq!(l.arrive(Time::ZERO, pkt(0, 1000), &mut s, 0), Outcome::Accepted); // in service
        assert_eq!(l.arrive(Time::ZERO, pkt(1, 1000), &mut s, 0), Outcome::Accepted); // 1000 waiting
        assert_eq!(l.arrive(Time::ZERO, pkt(2, 1000), &mut s, 0), Outcome::Dropped); // 2000 > 1500
        assert_eq!(l.arrive(Time::ZERO, pkt(3, 500), &mut s, 0), Outcome::Accepted);
        // exactly 1500
    }
}
