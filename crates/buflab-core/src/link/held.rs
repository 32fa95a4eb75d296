//! A link whose discipline holds the waiting packets: the discipline picks each departure.
//!
//! Read first: [`super`] (the timetable, which this replaces for such links) and the
//! `buflab-queue` crate's contract. This file owns how a held discipline meets the link's
//! serializer and pipe; it must not know any one discipline.
//!
//! The serializer asks the discipline for a packet whenever it is free: at once when a packet
//! arrives at an idle link, and otherwise at a `LinkReady` event, kept one at a time like a
//! lazy timer (`ready_at`): at the end of each service while packets wait, or at the time a
//! discipline asked to be asked again. A packet, once dequeued, is in the pipe with a known
//! exit time, as on every link, so exits still need one pending event for the head.
//!
//! Equal times keep the timetable's rule: a service due at time t starts before an arrival at
//! t (`catch_up` runs a `LinkReady` due now before the arrival, and that event then finds
//! nothing to do). A FIFO discipline held this way therefore gives exactly what the
//! timetable gives (a test checks it), including the order of the monitor's reports.
//!
//! Queueing delay is known only when a packet leaves the queue, so it is reported with the
//! dequeue (for packets that arrived in the measured window), and packets still held when the
//! run ends are charged what back-to-back service would give them, as the timetable charges
//! its own; packets the discipline drops from its queue are reported as purges, drops that are
//! not new arrivals. A packet the discipline marks as it sends it (`Dequeue::Marked`: CoDel's
//! ECN option) is reported as a mark after its dequeue, and counted as any mark.

use super::{Buffer, InFlight, Link, Queue};
use crate::packet::{flags, Kind, Packet};
use crate::queue::{Arrival, Bump, Dequeue, Flowing, Queued, Verdict};
use crate::sched::{Event, Scheduler};
use crate::units::Time;

/// A packet waiting in a held discipline, with its arrival time (for its queueing delay).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Waiting {
    pub pkt: Packet,
    pub arrived: Time,
}

/// A service that started: the packet, its serialization time, and whether the discipline
/// marked it as it sent it.
#[derive(Clone, Copy, Debug)]
struct Started {
    w: Waiting,
    ser: Time,
    marked: bool,
}

impl Queued for Waiting {
    #[inline]
    fn size(&self) -> u32 {
        self.pkt.size
    }
    #[inline]
    fn ect(&self) -> bool {
        self.pkt.flags & flags::ECT != 0
    }
    #[inline]
    fn mark_ce(&mut self) {
        self.pkt.flags |= flags::CE;
    }
    #[inline]
    fn stamp(&self) -> Time {
        self.pkt.stamp
    }
    #[inline]
    fn set_stamp(&mut self, stamp: Time) {
        self.pkt.stamp = stamp;
    }
}

impl Flowing for Waiting {
    #[inline]
    fn flow(&self) -> u32 {
        self.pkt.flow
    }
    /// Pure ACKs and the SYN-ACK: the header-only packets a bump never paces.
    #[inline]
    fn is_control(&self) -> bool {
        self.pkt.kind == Kind::Ack || self.pkt.flags & flags::SYN != 0
    }
}

impl Link {
    /// The bump this link runs, if its discipline is one.
    pub fn bump_mut(&mut self) -> Option<&mut Bump<Waiting>> {
        match self.queue_mut()? {
            Queue::Held(d) => (d.as_mut() as &mut dyn std::any::Any).downcast_mut::<Bump<Waiting>>(),
            _ => None,
        }
    }

    /// Whether its discipline holds its packets (see the module doc).
    pub fn is_held(&self) -> bool {
        matches!(self.queue(), Queue::Held(_))
    }

    /// Whether arrivals may reach it ahead of the global clock, fed in order by one express
    /// link (`sim/plan.rs`): a held discipline decides by its own arrivals and the time alone,
    /// unless it is a bump that hears its flow's ACKs or feedback, which come at the global
    /// time.
    pub fn takes_arrivals_ahead(&self) -> bool {
        match self.queue() {
            Queue::Held(d) => (d.as_ref() as &dyn std::any::Any)
                .downcast_ref::<Bump<Waiting>>()
                .is_none_or(|b| !b.hears_reverse()),
            _ => false,
        }
    }

    /// `pkt` passes the reverse side of this link's bump at `t` (an ACK on its way back to its
    /// sender, at the global time: a tap is only ever entered from an event). A bump that paces
    /// on ECN-Echo learns from it; the bump's queue and serializer are not involved, and a
    /// class it now paces has its head rescheduled, which the pending `LinkReady` event finds.
    pub fn on_reverse(&mut self, t: Time, pkt: &Packet) {
        if let Some(b) = self.bump_mut() {
            b.on_reverse(t, pkt.flow, pkt.flags & flags::ECE != 0);
        }
    }

    /// The held discipline's `not_before`: asking earlier could only hear `Wait`.
    fn held_not_before(&self) -> Time {
        match self.queue() {
            Queue::Held(d) => d.not_before(),
            _ => Time::ZERO,
        }
    }

    /// Its discipline changed its mind at `now` (a bump heard QCN feedback): a waiting head
    /// may go at another time, so the serializer asks again now, or when it frees up.
    pub fn rescheduled(&mut self, now: Time, sched: &mut Scheduler, id: u32) {
        if self.waiting().0 > 0 {
            let at = self.busy_until.max(now).max(self.held_not_before());
            self.ready_by(at, Time::ZERO, sched, id);
        }
    }

    fn held_backlog(&self) -> (u64, u64) {
        match self.queue() {
            Queue::Held(d) => d.backlog(),
            _ => (0, 0),
        }
    }

    /// A packet arrives at a held link at `t`: the global time, or later when an express link
    /// chains into it (see `takes_arrivals_ahead`).
    pub(super) fn arrive_held(
        &mut self,
        t: Time,
        pkt: Packet,
        sched: &mut Scheduler,
        id: u32,
    ) -> super::Outcome {
        let b = self.buffer();
        if t == b.last_arrival {
            b.simultaneous_arrivals += 1;
        }
        b.last_arrival = t;
        self.catch_up(t, sched, id);
        let (waiting, bytes) = self.held_backlog();
        let ect = pkt.flags & flags::ECT != 0;
        let limit = self.limit();
        let mut a = Arrival::new(t, waiting, bytes, self.busy_until, limit, pkt.size, ect)
            .with_ect1(pkt.flags & flags::ECT1 != 0);
        // Packets held while the serializer idles (a pacer's) wait all the same: the newcomer
        // joins them, so the limit applies as if the serializer were busy.
        if waiting > 0 {
            a.full = !crate::queue::fits(limit, waiting, bytes, pkt.size);
        }
        let b = self.buffer();
        let mut purged = std::mem::take(&mut b.purged);
        let Queue::Held(d) = &mut b.queue else { unreachable!("a held link") };
        let verdict = d.enqueue(&a, Waiting { pkt, arrived: t }, &mut purged);
        (b.waiting_pkts, b.waiting_bytes) = d.backlog();
        self.report_purged(t, &mut purged);
        self.buffer().purged = purged;
        if verdict == Verdict::Drop {
            return self.drop(t, &pkt);
        }
        let mut admitted = pkt;
        if verdict == Verdict::Mark {
            admitted.flags |= flags::CE;
        }
        // An idle serializer asks at once (the discipline may still say wait), and the service
        // is reported after the enqueue, with the occupancy it leaves, as the timetable does;
        // a busy one asks when it frees up.
        let started = if self.busy_until <= t && self.held_not_before() <= t {
            self.start_next(t, Time::ZERO, sched, id)
        } else {
            let at = self.busy_until.max(self.held_not_before());
            self.ready_by(at, Time::ZERO, sched, id);
            None
        };
        let b = self.buffer();
        if let Some(m) = b.monitor.as_deref_mut() {
            m.on_enqueue_unknown_wait(t, &admitted, b.waiting_pkts, b.waiting_bytes);
        }
        if verdict == Verdict::Mark {
            self.report_mark(t, &admitted);
        }
        self.report_start(t, started);
        super::Outcome::Accepted
    }

    /// The `LinkReady` event at `now`: the serializer asks for its next packet, unless the
    /// event is stale (an arrival at the same time served first, see `catch_up`).
    pub fn on_ready(&mut self, now: Time, sched: &mut Scheduler, id: u32) {
        let b = self.buffer();
        if b.ready_at == Some(now) {
            b.ready_at = None;
            self.serve(now, Time::ZERO, sched, id);
        }
    }

    /// Runs the services due by `t` before anything else happens at `t`, in order, as their
    /// `LinkReady` events would have (at the global time only one can be due, exactly now; an
    /// arrival computed ahead may find several). Services due by `t` that these ask for run
    /// here too, with no event of their own; pending events find `ready_at` moved on and do
    /// nothing.
    pub(super) fn catch_up(&mut self, t: Time, sched: &mut Scheduler, id: u32) {
        while let Some(r) = self.buffer.as_deref_mut().and_then(|b| b.ready_at.take_if(|r| *r <= t)) {
            self.serve(r, t, sched, id);
        }
    }

    /// The serializer is free at `now` (or frees up then): starts the next packet the
    /// discipline gives, or arranges to ask again.
    fn serve(&mut self, now: Time, horizon: Time, sched: &mut Scheduler, id: u32) {
        if self.busy_until > now {
            return self.ready_by(self.busy_until, horizon, sched, id);
        }
        let started = self.start_next(now, horizon, sched, id);
        self.report_start(now, started);
    }

    /// Asks the discipline for the next packet at `now` (the serializer is free) and starts
    /// serializing it; returns it, its serialization time and whether the discipline marked
    /// it, for `report_start`.
    fn start_next(&mut self, now: Time, horizon: Time, sched: &mut Scheduler, id: u32) -> Option<Started> {
        let b = self.buffer();
        let mut purged = std::mem::take(&mut b.purged);
        let Queue::Held(d) = &mut b.queue else { unreachable!("a held link") };
        let next = d.dequeue(now, &mut purged);
        (b.waiting_pkts, b.waiting_bytes) = d.backlog();
        self.report_purged(now, &mut purged);
        self.buffer().purged = purged;
        match next {
            Dequeue::Send(w) | Dequeue::Marked(w) => {
                let ser = self.serialization(w.pkt.size);
                self.busy_until = now + ser;
                let exit = self.busy_until + self.delay;
                self.ring.push_back(InFlight { start: now, exit, pkt: w.pkt });
                // Dequeued already: keep the timetable's cursor level with the ring.
                self.dequeued += 1;
                self.departures += 1;
                if !self.head_scheduled {
                    self.head_scheduled = true;
                    sched.schedule(exit, Event::LinkExit(id));
                }
                if self.waiting().0 > 0 {
                    let at = self.busy_until.max(self.held_not_before());
                    self.ready_by(at, horizon, sched, id);
                }
                Some(Started { w, ser, marked: matches!(next, Dequeue::Marked(_)) })
            }
            Dequeue::Wait(at) => {
                assert!(at > now, "a discipline asked to wait until {at:?}, not after now ({now:?})");
                self.ready_by(at, horizon, sched, id);
                None
            }
            Dequeue::Idle => None,
        }
    }

    /// Reports a service started at `now` to the monitor, with its queueing delay, and the
    /// mark the discipline made as it sent the packet.
    fn report_start(&mut self, now: Time, started: Option<Started>) {
        let Some(Started { w, ser, marked }) = started else { return };
        let b = self.buffer();
        if let Some(m) = b.monitor.as_deref_mut() {
            m.on_dequeue(now, &w.pkt, b.waiting_pkts, b.waiting_bytes, ser);
            m.record_wait(w.arrived, now);
        }
        if marked {
            self.report_mark(now, &w.pkt);
        }
    }

    /// Makes sure a `LinkReady` event is pending at or before `at` (none for a time up to
    /// `horizon`, which the running `catch_up` reaches and serves itself; zero otherwise).
    fn ready_by(&mut self, at: Time, horizon: Time, sched: &mut Scheduler, id: u32) {
        let b = self.buffer();
        if b.ready_at.is_none_or(|r| r > at) {
            b.ready_at = Some(at);
            if at > horizon {
                sched.schedule(at, Event::LinkReady(id));
            }
        }
    }

    /// At the end of the run: the packets still held are charged the delays they would have
    /// had, served back to back from the end of the current service in the discipline's order
    /// (if it knows that order) — what the timetable charges its waiting packets on admission.
    /// None is served before it arrived: a discipline that holds packets while the line is
    /// idle (BJP until a packet's time) may hold ones that came after the last service ended.
    pub(super) fn charge_held_waits(&mut self) {
        let Some(Buffer { queue: Queue::Held(d), monitor: Some(m), .. }) = self.buffer.as_deref_mut() else {
            return;
        };
        let (rate, mut start) = (self.rate, self.busy_until);
        d.in_send_order(&mut |w: &Waiting| {
            start = start.max(w.arrived);
            m.record_wait(w.arrived, start);
            start += rate.serialization(w.pkt.size as u64);
        });
    }

    /// Reports (and counts) the packets a held discipline dropped from its queue.
    fn report_purged(&mut self, t: Time, purged: &mut Vec<Waiting>) {
        let b = self.buffer();
        for w in purged.drain(..) {
            b.drops += 1;
            if let Some(m) = b.monitor.as_deref_mut() {
                m.on_purge(t, &w.pkt, b.waiting_pkts, b.waiting_bytes);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    //! A FIFO held by the link must give exactly what the timetable gives for the same
    //! admission: the same exits at the same times with the same marks, and the same monitor
    //! reports in the same order (event log, delays, totals). That is the contract's claim that
    //! the two forms of discipline agree, and it checks the held path against the fast one.
    use super::*;
    use crate::link::Outcome;
    use crate::monitor::{MeasuredWindow, QueueEvent, QueueMonitor};
    use crate::packet::Kind;
    use crate::queue::drop_tail::DropTail;
    use crate::queue::red::{Red, RedConfig};
    use crate::queue::Fifo;
    use crate::rng::{Rng, Stream};
    use crate::units::{BufferLimit, Rate};

    const RATE: Rate = Rate(100_000_000);

    fn red() -> Red {
        let cfg = RedConfig {
            min_th: 3.0,
            max_th: 9.0,
            max_p: 0.2,
            weight: 0.05,
            gentle: true,
            ecn: true,
            packet: 1500,
        };
        Red::new(cfg, RATE, Rng::stream(7, Stream::Queue, 0))
    }

    /// Arrivals: Poisson at about 1.3 times the link's rate, sizes 40 to 1500 B, every other
    /// packet ECN-capable, some at the same picosecond as the previous one.
    fn arrivals(seed: u64) -> Vec<(Time, Packet)> {
        let mut r = Rng::stream(seed, Stream::Topology, 0);
        let mut t = Time::ZERO;
        (0..3000u32)
            .map(|i| {
                if !r.bernoulli(0.1) {
                    t += Time(r.exponential(60_000_000.0) as u64);
                }
                let size = r.range_u64(40, 1500) as u32;
                let flags = if i % 2 == 0 { flags::ECT } else { 0 };
                let pkt = Packet { sent_at: t, flags, ..Packet::for_test(Kind::Data, i % 7, i, size) };
                (t, pkt)
            })
            .collect()
    }

    /// Runs the arrivals through `link`; returns its exits (time, seq, flags) and the link.
    fn run(mut link: Link, arrivals: &[(Time, Packet)]) -> (Vec<(Time, u32, u16)>, Link) {
        // The arrivals last about 180 ms: the run ends while packets wait (their delays count).
        let end = Time::from_ms(150);
        let window = MeasuredWindow { start: Time::from_ms(20), end };
        link.attach_monitor(QueueMonitor::new(RATE, window, Time::from_ms(10), true));
        let mut s = Scheduler::new();
        for (k, &(t, _)) in arrivals.iter().enumerate() {
            s.schedule(t, Event::Arrival(k as u32));
        }
        let mut exits = Vec::new();
        while let Some((now, ev)) = s.pop() {
            if now >= end {
                break;
            }
            match ev {
                Event::Arrival(k) => {
                    let outcome = link.arrive(now, arrivals[k as usize].1, &mut s, 0);
                    assert_ne!(outcome, Outcome::Relayed(Time::ZERO, 0));
                }
                Event::LinkExit(_) => {
                    let p = link.pop_exit(now, &mut s, 0);
                    exits.push((now, p.seq, p.flags));
                }
                Event::LinkReady(_) => link.on_ready(now, &mut s, 0),
                e => panic!("unexpected {e:?}"),
            }
        }
        link.finish(end, &mut s, 0);
        (exits, link)
    }

    /// Asserts that two sequences are equal, naming the first difference (they are long).
    fn same<T: std::fmt::Debug + PartialEq>(what: &str, a: &[T], b: &[T]) {
        let first = a.iter().zip(b).position(|(x, y)| x != y);
        assert!(
            first.is_none() && a.len() == b.len(),
            "{what} differ from {first:?}: {:?} vs {:?} (lengths {} and {})",
            first.map(|i| &a[i.saturating_sub(2)..=i]),
            first.map(|i| &b[i.saturating_sub(2)..=i]),
            a.len(),
            b.len()
        );
    }

    /// The admission both links run: drop-tail or RED.
    #[derive(Clone, Copy)]
    enum Rule {
        DropTail,
        Red,
    }

    fn agree(rule: Rule, limit: BufferLimit) {
        for seed in 1..=3 {
            let a = arrivals(seed);
            let make = |q| {
                let mut l = Link::new(RATE, Time::from_us(500), limit);
                l.set_queue(q);
                l
            };
            let (timetable, held): (Queue, Queue) = match rule {
                Rule::DropTail => {
                    (Queue::DropTail, Queue::Held(Box::new(Fifo::<DropTail, Waiting>::new(DropTail))))
                }
                Rule::Red => (
                    Queue::Admission(Box::new(red())),
                    Queue::Held(Box::new(Fifo::<Red, Waiting>::new(red()))),
                ),
            };
            let (exits_t, mut lt) = run(make(timetable), &a);
            let (exits_h, mut lh) = run(make(held), &a);
            assert!(exits_t.len() > 1000 && lt.drops() > 50, "the test must congest the link");
            same(&format!("seed {seed}: exits"), &exits_t, &exits_h);
            assert_eq!((lt.drops(), lt.marks(), lt.departures), (lh.drops(), lh.marks(), lh.departures));
            let (mt, mh) = (lt.take_monitor().unwrap(), lh.take_monitor().unwrap());
            let rows = |m: &QueueMonitor| -> Vec<(Time, u8, u32, u64, u64)> {
                let l = &m.log.as_ref().unwrap().pending;
                (0..l.len())
                    .map(|i| (l.time[i], l.event[i], l.seq[i], l.queue_pkts[i], l.queue_bytes[i]))
                    .collect()
            };
            same(&format!("seed {seed}: event logs"), &rows(&mt), &rows(&mh));
            assert_eq!((mt.delay.count(), mt.delay.mean()), (mh.delay.count(), mh.delay.mean()));
            assert_eq!(mt.delay.quantile(0.99), mh.delay.quantile(0.99));
            assert_eq!(mt.totals.busy_ps, mh.totals.busy_ps);
            assert_eq!(mt.totals.occupancy_pkt_ps, mh.totals.occupancy_pkt_ps);
        }
    }

    #[test]
    fn a_held_fifo_gives_exactly_the_timetable_under_drop_tail() {
        agree(Rule::DropTail, BufferLimit::Packets(8));
        agree(Rule::DropTail, BufferLimit::Bytes(6000));
    }

    #[test]
    fn a_held_fifo_gives_exactly_the_timetable_under_red_with_marks() {
        agree(Rule::Red, BufferLimit::Packets(20));
    }

    /// A mark made at dequeue (CoDel with ECN) is a mark like one made at an arrival: counted
    /// by the link and its monitor, logged as a `mark` row right after the packet's `dequeue`
    /// (same time and packet), and carried by the packet that leaves (CE); CoDel's own count
    /// of marks by its law agrees.
    #[test]
    fn a_mark_made_at_dequeue_follows_the_packets_dequeue_and_counts() {
        use crate::queue::codel::{Codel, CodelParams};
        let params = CodelParams {
            target: Time::from_us(200),
            interval: Time::from_ms(2),
            ecn: true,
            maxpacket: 1500,
        };
        // No propagation delay: every marked packet has left by the end, but the one in service.
        let mut link = Link::new(RATE, Time::ZERO, BufferLimit::Packets(200));
        link.set_queue(Queue::Held(Box::new(Codel::<Waiting>::new(params))));
        link.count_aqm_from(Time::from_ms(20));
        let (exits, mut link) = run(link, &arrivals(4));
        assert!(link.marks() > 20, "the test must make CoDel mark: {} marks", link.marks());
        let ce_exits = exits.iter().filter(|e| e.2 & flags::CE != 0).count() as u64;
        assert!(
            link.marks() - ce_exits <= 1,
            "every mark leaves on its packet: {ce_exits} of {}",
            link.marks()
        );
        let m = link.take_monitor().unwrap();
        let log = &m.log.as_ref().unwrap().pending;
        let mut marks = 0;
        for i in 0..log.len() {
            if log.event[i] == QueueEvent::Mark as u8 {
                marks += u64::from(log.time[i] >= Time::from_ms(20)); // the measured window's
                assert_eq!(log.event[i - 1], QueueEvent::Dequeue as u8, "row {i}: a mark follows a dequeue");
                assert_eq!(
                    (log.time[i], log.seq[i], log.flow[i]),
                    (log.time[i - 1], log.seq[i - 1], log.flow[i - 1])
                );
            }
        }
        assert_eq!(marks, m.totals.marks, "the window's marks are the log's");
        assert_eq!(
            link.aqm_counts().unwrap().law_marks,
            m.totals.marks,
            "CoDel counts from the window's start too"
        );
    }

    #[test]
    fn a_held_link_never_relays_and_is_never_express() {
        let mut l = Link::new(RATE, Time::ZERO, BufferLimit::Unlimited);
        l.set_queue(Queue::Held(Box::new(Fifo::<DropTail, Waiting>::new(DropTail))));
        assert!(!l.can_relay() && !l.is_express());
    }
}
