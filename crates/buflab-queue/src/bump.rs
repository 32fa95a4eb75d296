//! A bump in the wire (NetBump, seed ch. 3 and 5): an element on a link, between unmodified
//! hosts and switches, that classifies the packets passing through it, estimates a downstream
//! port's queue with a virtual queue (vAQM) and marks, drops or counts on it, and paces the
//! classes of traffic it is asked to.
//!
//! Read first: the crate doc (a bump is a [`Discipline`] of the second form: it holds its
//! packets and picks each departure), then [`crate::pacer`] and [`crate::vqueue`]. This file
//! owns classification, the paced set and the composition; the pacing rules and the virtual
//! queue are theirs. It must not know links, routes or the event loop.
//!
//! Per packet, in order:
//! 1. **Control packets** (SYN, SYN-ACK, pure ACKs and other header-only packets: the seed's
//!    "un-paced" class) pass first, unpaced, through a FIFO of their own.
//! 2. **Classification** (§5.1): a class per flow, per destination port (the seed's RSS hash
//!    on it, §7.3), or one class for all traffic.
//! 3. **The virtual queue** of the packet's class, if the bump has one, sees the packet as it
//!    arrives ("at the time the packet is received", §3.2.2) and may mark or drop it.
//! 4. **The hard limit** of the bump's own buffer: a packet that finds it full is dropped.
//! 5. **The pacer** of the packet's class, if the bump paces, releases the class's packets in
//!    order; the classes share the bump's output port, the earliest release first (ties: the
//!    class seen first). Without a pacer the bump is one FIFO.
//!
//! The pacing rate comes from [`RateSource`]: a fixed rate, the class's own rate measured over
//! windows of packets (the seed: 1,000), or the virtual queue's port rate. Which classes are
//! paced is [`Paced`]: all of them, or (the seed's HULL-like trigger, §5.2) only a class whose
//! ACKs came back with ECN-Echo (the caller reports the reverse traffic with
//! [`Bump::on_reverse`]), until `hold` passes without another; a class that is not paced
//! keeps its order, its packets going as soon as those ahead of them have.
//!
//! Counts ([`BumpStats`]) start at [`Bump::count_from`] (the measured window), as a queue
//! monitor's do.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};

use buflab_base::units::{Rate, Time, PS_PER_S};

use crate::fifo::Packets;
use crate::pacer::{Pacer, PacerSpec};
use crate::vqueue::{VirtualQueue, VqSpec, VqStats};
use crate::{Arrival, Dequeue, Discipline, Queued, Verdict};

/// What a bump needs to know of a packet beyond a queue's view.
pub trait Flowing: Queued {
    /// The flow it belongs to.
    fn flow(&self) -> u32;
    /// A header-only control packet (SYN, SYN-ACK, pure ACK): never paced.
    fn is_control(&self) -> bool;
    /// Its destination port, if the packet carries one (a real datapath reads it from the
    /// header; otherwise the bump uses the ports set with [`Bump::set_port`]).
    fn dst_port(&self) -> Option<u16> {
        None
    }
}

/// How packets are split into classes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Classify {
    /// One class for all traffic.
    All,
    /// A class per flow.
    Flow,
    /// A class per destination port.
    Port,
}

buflab_base::names!(Classify { Flow = "flow", Port = "port", All = "all" });

/// Where a pacer's rate comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RateSource {
    Fixed(Rate),
    /// The class's arrival rate, measured over each window of this many packets.
    Measured {
        window: u32,
    },
    /// The virtual queue's port rate.
    VirtualPort,
    /// None: the pacer takes no rate (batching on a timer).
    Unused,
}

/// Which classes a pacing bump paces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Paced {
    /// Every class.
    All,
    /// A class from the moment an ACK of its flows carries ECN-Echo until `hold` passes
    /// without another (the seed's HULL-like trigger, §5.2).
    OnEcnEcho { hold: Time },
}

/// A bump's settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BumpSpec {
    pub classify: Classify,
    pub pacer: Option<(PacerSpec, RateSource)>,
    pub paced: Paced,
    pub vqueue: Option<VqSpec>,
}

/// Departure gaps: the time between consecutive data packets of a class leaving the bump.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Gaps {
    pub count: u64,
    pub sum: Time,
    pub min: Time,
    pub max: Time,
}

impl Default for Gaps {
    fn default() -> Gaps {
        Gaps { count: 0, sum: Time::ZERO, min: Time::MAX, max: Time::ZERO }
    }
}

impl Gaps {
    fn record(&mut self, gap: Time) {
        self.count += 1;
        self.sum += gap;
        self.min = self.min.min(gap);
        self.max = self.max.max(gap);
    }

    pub fn add(&mut self, o: &Gaps) {
        self.count += o.count;
        self.sum += o.sum;
        self.min = self.min.min(o.min);
        self.max = self.max.max(o.max);
    }
}

/// What a bump counted from [`Bump::count_from`] on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BumpStats {
    pub arrivals: u64,
    /// Packets refused: the virtual queue's drops and the hard limit's.
    pub drops: u64,
    pub departures: u64,
    /// Packets that passed as control packets, unpaced.
    pub control: u64,
    /// Packets the pacer held: they left later than the bump could have sent them.
    pub paced: u64,
    /// Times a class joined the paced set on an ECN-Echo (with `Paced::OnEcnEcho`).
    pub paced_joins: u64,
    /// The classes seen (whole run).
    pub classes: u64,
    pub vqueue: VqStats,
    pub gaps: Gaps,
    /// The integral of the packets held over time (packets × ps), and the most held for any
    /// length of time.
    pub queue_integral: u128,
    pub max_queue: u64,
}

impl BumpStats {
    pub fn add(&mut self, o: &BumpStats) {
        self.arrivals += o.arrivals;
        self.drops += o.drops;
        self.departures += o.departures;
        self.control += o.control;
        self.paced += o.paced;
        self.paced_joins += o.paced_joins;
        self.classes += o.classes;
        self.vqueue.add(&o.vqueue);
        self.gaps.add(&o.gaps);
        self.queue_integral += o.queue_integral;
        self.max_queue = self.max_queue.max(o.max_queue);
    }

    /// Time-average packets held over `span`.
    pub fn mean_queue(&self, span: Time) -> f64 {
        if span == Time::ZERO {
            0.0
        } else {
            self.queue_integral as f64 / span.ps() as f64
        }
    }
}

/// A class: its queue, its pacer and its rate meter, its virtual queue.
struct Class<P> {
    queue: Packets<P>,
    /// When each queued packet arrived, to tell which ones the pacer held.
    arrived: VecDeque<Time>,
    pacer: Option<Box<dyn Pacer>>,
    meter: Option<Meter>,
    vq: Option<VirtualQueue>,
    /// The release time of its head, as last scheduled.
    next: Option<Time>,
    /// With `Paced::OnEcnEcho`: paced until this time.
    paced_until: Time,
    /// When its last data packet left.
    last_departure: Option<Time>,
}

/// A class's arrival rate over windows of `window` packets.
struct Meter {
    window: u32,
    count: u32,
    first: Time,
    bytes: u64,
}

impl Meter {
    /// Counts an arrival; at the end of a window, the rate it measured.
    fn on_arrival(&mut self, now: Time, size: u32) -> Option<Rate> {
        if self.count == 0 {
            (self.first, self.bytes) = (now, 0);
        } else {
            // The bytes after the first packet, over the time since it: the window's rate.
            self.bytes += size as u64;
        }
        self.count += 1;
        if self.count < self.window {
            return None;
        }
        self.count = 0;
        let elapsed = (now - self.first).ps();
        (elapsed > 0 && self.bytes > 0)
            .then(|| Rate((self.bytes as u128 * 8 * PS_PER_S as u128 / elapsed as u128) as u64))
    }
}

/// A bump of packets `P` (see the module doc).
pub struct Bump<P> {
    spec: BumpSpec,
    control: Packets<P>,
    classes: Vec<Class<P>>,
    /// The class of each classification key (flow, port, or 0 for all).
    class_of_key: HashMap<u32, usize>,
    /// Destination ports of flows whose packets carry none.
    ports: HashMap<u32, u16>,
    /// Unpaced bumps keep every data packet in this one FIFO.
    fifo: Packets<P>,
    /// (release time, class) of every class head, earliest first; entries whose time is no
    /// longer the class's `next` are stale and skipped.
    ready: BinaryHeap<Reverse<(Time, usize)>>,
    backlog: (u64, u64),
    /// Counting starts at `count_from`; `counting` once it has, the virtual queues' counts
    /// then (subtracted at the end), and when the backlog last changed.
    count_from: Time,
    counting: bool,
    vq_base: VqStats,
    last_change: Time,
    stats: BumpStats,
}

impl<P: Flowing> Bump<P> {
    pub fn new(spec: BumpSpec) -> Bump<P> {
        Bump {
            spec,
            control: Packets::new(),
            classes: Vec::new(),
            class_of_key: HashMap::new(),
            ports: HashMap::new(),
            fifo: Packets::new(),
            ready: BinaryHeap::new(),
            backlog: (0, 0),
            count_from: Time::ZERO,
            counting: false,
            vq_base: VqStats::default(),
            last_change: Time::ZERO,
            stats: BumpStats::default(),
        }
    }

    pub fn spec(&self) -> &BumpSpec {
        &self.spec
    }

    /// Counts only what happens from `t` on (the measured window's start).
    pub fn count_from(&mut self, t: Time) {
        self.count_from = t;
    }

    /// Flow `flow`'s destination port, for `Classify::Port` when its packets carry none.
    pub fn set_port(&mut self, flow: u32, port: u16) {
        self.ports.insert(flow, port);
    }

    /// What it counted, with the time-average queue brought up to `now` (the end of the
    /// measured window).
    pub fn stats(&mut self, now: Time) -> BumpStats {
        self.advance(now);
        self.account(now);
        let mut s = self.stats;
        s.vqueue = self.vqueue_stats();
        if self.counting {
            s.vqueue.subtract(&self.vq_base);
        } else {
            s.vqueue = VqStats::default();
        }
        s
    }

    /// What the virtual queues counted over the whole run, every class.
    pub fn vqueue_stats(&self) -> VqStats {
        let mut s = VqStats::default();
        for vq in self.classes.iter().filter_map(|c| c.vq.as_ref()) {
            s.add(&vq.stats);
        }
        s
    }

    /// A packet of flow `flow` went the other way through the bump at `now` (an ACK on its
    /// way back to the sender), carrying ECN-Echo if `ece`: with `Paced::OnEcnEcho`, the
    /// flow's class joins the paced set, or stays in it `hold` longer.
    pub fn on_reverse(&mut self, now: Time, flow: u32, ece: bool) {
        let Paced::OnEcnEcho { hold } = self.spec.paced else { return };
        if !ece {
            return;
        }
        self.advance(now);
        let key = self.key(flow, None);
        let c = self.class(key);
        let class = &mut self.classes[c];
        if class.paced_until <= now && self.counting {
            self.stats.paced_joins += 1;
        }
        class.paced_until = now + hold;
        // Its head may now have to wait.
        if class.queue.peek().is_some() {
            class.next = None;
            self.push_ready(c, now);
        }
    }

    fn key(&self, flow: u32, port: Option<u16>) -> u32 {
        match self.spec.classify {
            Classify::All => 0,
            Classify::Flow => flow,
            Classify::Port => port.or_else(|| self.ports.get(&flow).copied()).map_or(flow, u32::from),
        }
    }

    /// The class of `key`, created on its first packet.
    fn class(&mut self, key: u32) -> usize {
        if let Some(&c) = self.class_of_key.get(&key) {
            return c;
        }
        let spec = self.spec;
        let (pacer, meter) = match spec.pacer {
            None => (None, None),
            Some((kind, source)) => {
                let rate = match source {
                    RateSource::Fixed(r) => Some(r),
                    RateSource::VirtualPort => spec.vqueue.map(|v| v.rate),
                    RateSource::Measured { .. } | RateSource::Unused => None,
                };
                let meter = match source {
                    RateSource::Measured { window } => {
                        Some(Meter { window, count: 0, first: Time::ZERO, bytes: 0 })
                    }
                    _ => None,
                };
                (Some(kind.build(rate)), meter)
            }
        };
        self.classes.push(Class {
            queue: Packets::new(),
            arrived: VecDeque::new(),
            pacer,
            meter,
            vq: spec.vqueue.map(VirtualQueue::new),
            next: None,
            paced_until: Time::ZERO,
            last_departure: None,
        });
        self.stats.classes += 1;
        let c = self.classes.len() - 1;
        self.class_of_key.insert(key, c);
        c
    }

    fn class_of(&mut self, pkt: &P) -> usize {
        let key = self.key(pkt.flow(), pkt.dst_port());
        self.class(key)
    }

    /// Schedules class `c`'s head: its pacer's release time, or now if the class is not
    /// paced at the moment.
    fn push_ready(&mut self, c: usize, now: Time) {
        let paced = match self.spec.paced {
            Paced::All => true,
            Paced::OnEcnEcho { .. } => self.classes[c].paced_until > now,
        };
        let class = &mut self.classes[c];
        let next = match (class.queue.peek(), class.pacer.as_mut()) {
            (Some(head), Some(pacer)) if paced => Some(pacer.release_at(now, head.size())),
            (Some(_), _) => Some(now),
            (None, _) => None,
        };
        class.next = next;
        if let Some(t) = next {
            self.ready.push(Reverse((t, c)));
        }
    }

    /// Starts counting once `now` reaches `count_from`.
    fn advance(&mut self, now: Time) {
        if !self.counting && now >= self.count_from {
            self.counting = true;
            self.vq_base = self.vqueue_stats();
            self.last_change = self.count_from;
        }
    }

    /// Adds the time since the backlog last changed to the queue integral, and the backlog
    /// held over it to the maximum: a packet sent the instant it came was never queued, as a
    /// queue monitor sees it.
    fn account(&mut self, now: Time) {
        if self.counting && now > self.last_change {
            self.stats.queue_integral += self.backlog.0 as u128 * (now - self.last_change).ps() as u128;
            self.stats.max_queue = self.stats.max_queue.max(self.backlog.0);
            self.last_change = now;
        }
    }

    fn grow(&mut self, now: Time, size: u32) {
        self.account(now);
        self.backlog.0 += 1;
        self.backlog.1 += size as u64;
    }

    /// A packet leaves at `now`: the backlog shrinks and the departure is counted (with its
    /// gap since its class's previous data packet, class `c`; None for control packets).
    fn depart(&mut self, now: Time, p: &P, c: Option<usize>) {
        self.account(now);
        self.backlog.0 -= 1;
        self.backlog.1 -= p.size() as u64;
        let Some(c) = c else {
            self.stats.departures += u64::from(self.counting);
            return;
        };
        let last = self.classes[c].last_departure.replace(now);
        if self.counting {
            self.stats.departures += 1;
            if let Some(last) = last.filter(|&l| l >= self.count_from) {
                self.stats.gaps.record(now - last);
            }
        }
    }

    fn count(&self) -> u64 {
        u64::from(self.counting)
    }
}

impl VqStats {
    fn subtract(&mut self, o: &VqStats) {
        self.arrivals -= o.arrivals;
        self.above_threshold -= o.above_threshold;
        self.overflows -= o.overflows;
        self.marks -= o.marks;
        self.drops -= o.drops;
    }
}

impl<P: Flowing> Discipline<P> for Bump<P> {
    fn enqueue(&mut self, a: &Arrival, mut pkt: P, _purged: &mut Vec<P>) -> Verdict {
        let now = a.now;
        self.advance(now);
        self.stats.arrivals += self.count();
        if pkt.is_control() {
            if a.full {
                self.stats.drops += self.count();
                return Verdict::Drop;
            }
            self.stats.control += self.count();
            self.control.push(pkt);
            self.grow(now, a.size);
            return Verdict::Admit;
        }
        let c = self.class_of(&pkt);
        let mut verdict = Verdict::Admit;
        if let Some(vq) = self.classes[c].vq.as_mut() {
            verdict = vq.on_packet(now, a.size, a.ect);
        }
        if verdict == Verdict::Drop || a.full {
            self.stats.drops += self.count();
            return Verdict::Drop;
        }
        if verdict == Verdict::Mark {
            pkt.mark_ce();
        }
        self.grow(now, a.size);
        if self.spec.pacer.is_none() {
            self.fifo.push(pkt);
            return verdict;
        }
        let class = &mut self.classes[c];
        if let Some(rate) = class.meter.as_mut().and_then(|m| m.on_arrival(now, a.size)) {
            if let Some(p) = class.pacer.as_mut() {
                p.set_rate(now, rate);
            }
        }
        if let Some(p) = class.pacer.as_mut() {
            p.on_arrival(now, a.size);
        }
        class.queue.push(pkt);
        class.arrived.push_back(now);
        // A new head, or an arrival that moved the head's release (tokens a modified bucket
        // adds at arrivals, a newly measured rate): schedule the head again; the entry it had
        // goes stale.
        self.push_ready(c, now);
        verdict
    }

    fn dequeue(&mut self, now: Time, _purged: &mut Vec<P>) -> Dequeue<P> {
        self.advance(now);
        if let Some(p) = self.control.pop() {
            self.depart(now, &p, None);
            return Dequeue::Send(p);
        }
        if self.spec.pacer.is_none() {
            let Some(p) = self.fifo.pop() else { return Dequeue::Idle };
            let c = self.class_of(&p);
            self.depart(now, &p, Some(c));
            return Dequeue::Send(p);
        }
        while let Some(&Reverse((t, c))) = self.ready.peek() {
            if self.classes[c].next != Some(t) {
                self.ready.pop(); // stale
                continue;
            }
            if t > now {
                return Dequeue::Wait(t);
            }
            self.ready.pop();
            let class = &mut self.classes[c];
            let p = class.queue.pop().expect("a scheduled class has a head");
            let arrived = class.arrived.pop_front().expect("one arrival per packet");
            if t > arrived && self.counting {
                self.stats.paced += 1;
            }
            if let Some(pacer) = class.pacer.as_mut() {
                pacer.on_departure(now, p.size());
            }
            class.next = None;
            self.push_ready(c, now);
            self.depart(now, &p, Some(c));
            return Dequeue::Send(p);
        }
        Dequeue::Idle
    }

    fn backlog(&self) -> (u64, u64) {
        self.backlog
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pacer::PacerSpec;
    use crate::vqueue::Action;
    use crate::Limit;

    /// A test packet: (flow, number, size), control if its size is 40.
    #[derive(Clone, Copy, Debug, PartialEq)]
    struct P(u32, u32, u32);

    impl Queued for P {
        fn size(&self) -> u32 {
            self.2
        }
        fn ect(&self) -> bool {
            true
        }
        fn mark_ce(&mut self) {}
    }

    impl Flowing for P {
        fn flow(&self) -> u32 {
            self.0
        }
        fn is_control(&self) -> bool {
            self.2 == 40
        }
    }

    /// Runs `arrivals` (time, packet) through `bump` behind a serializer of `rate`: returns
    /// (departure time, packet) in order, as a link would drive it.
    fn drive(bump: &mut Bump<P>, rate: Rate, arrivals: &[(Time, P)]) -> Vec<(Time, P)> {
        let mut out = Vec::new();
        let (mut i, mut busy_until, mut now) = (0, Time::ZERO, Time::ZERO);
        let mut purged = Vec::new();
        loop {
            // The next moment anything happens: an arrival, or the serializer asking.
            let asking = match bump.dequeue(now.max(busy_until), &mut purged) {
                Dequeue::Send(p) => {
                    let t = now.max(busy_until);
                    out.push((t, p));
                    busy_until = t + rate.serialization(p.2 as u64);
                    continue;
                }
                Dequeue::Wait(t) => Some(t),
                Dequeue::Idle => None,
            };
            let next = arrivals.get(i).filter(|&&(t, _)| asking.is_none_or(|a| t <= a));
            if let Some(&(t, p)) = next {
                let (w, b) = bump.backlog();
                bump.enqueue(&Arrival::new(t, w, b, busy_until, Limit::Unlimited, p.2, true), p, &mut purged);
                now = t;
                i += 1;
            } else if let Some(a) = asking {
                now = a;
            } else {
                return out;
            }
        }
    }

    fn paced(kind: PacerSpec, rate: Rate) -> Bump<P> {
        Bump::new(BumpSpec {
            classify: Classify::Flow,
            pacer: Some((kind, RateSource::Fixed(rate))),
            paced: Paced::All,
            vqueue: None,
        })
    }

    #[test]
    fn a_line_rate_burst_leaves_paced_and_control_packets_are_not_held() {
        // Five 1,514-B packets of flow 1 at 10 Gb/s spacing, and a SYN-ACK among them.
        let mut arrivals: Vec<(Time, P)> =
            (0..5).map(|k| (Time::from_ns(1211 * k as u64), P(1, k, 1514))).collect();
        arrivals.insert(2, (Time::from_ns(2000), P(2, 0, 40)));
        let mut b = paced(PacerSpec::Delay, Rate::gbps(1));
        let out = drive(&mut b, Rate::gbps(10), &arrivals);
        let data: Vec<u64> = out.iter().filter(|(_, p)| p.0 == 1).map(|(t, _)| t.ps() / 1000).collect();
        assert_eq!(data, vec![0, 12_112, 24_224, 36_336, 48_448], "one packet per 12.112 µs");
        let syn = out.iter().find(|(_, p)| p.0 == 2).unwrap().0;
        assert_eq!(syn, Time::from_ns(2000), "the control packet passes at once");
        let stats = b.stats(Time::from_us(100));
        assert_eq!((stats.paced, stats.control), (4, 1));
    }

    #[test]
    fn flows_are_paced_apart_and_never_reordered() {
        // Two flows interleaved at line rate, each paced at 1 Gb/s by a token thread; every
        // packet leaves once, each flow in order, and each flow's gaps are its own pacer's.
        let arrivals: Vec<(Time, P)> =
            (0..40).map(|k| (Time::from_ns(600 * k as u64), P(k % 2, k / 2, 1000))).collect();
        let tt = PacerSpec::TokenThread { depth: 1000, tick: Time::from_ns(500) };
        let mut b = paced(tt, Rate::gbps(1));
        let out = drive(&mut b, Rate::gbps(10), &arrivals);
        assert_eq!(out.len(), 40);
        for flow in 0..2 {
            let seqs: Vec<u32> = out.iter().filter(|(_, p)| p.0 == flow).map(|(_, p)| p.1).collect();
            assert_eq!(seqs, (0..20).collect::<Vec<_>>(), "flow {flow} in order");
            let times: Vec<Time> = out.iter().filter(|(_, p)| p.0 == flow).map(|(t, _)| *t).collect();
            // 1,000 B at 1 Gb/s is 8 µs: after the first (the bucket starts full) each waits
            // for its tokens, so the flow's long-run rate is the pacer's.
            let span = (times[19] - times[1]).ps() as f64;
            let rate = 18.0 * 8000.0 / (span * 1e-12);
            assert!((rate / 1e9 - 1.0).abs() < 0.01, "flow {flow}: {rate}");
        }
        assert_eq!(b.backlog(), (0, 0));
    }

    #[test]
    fn the_virtual_queue_of_each_class_counts_its_overflows() {
        // A monitor bump, one virtual queue for all traffic at 1 Gb/s with room for two
        // packets: a line-rate burst of five overflows three times, paced it never does.
        let vq = VqSpec { rate: Rate::gbps(1), size: 3028, threshold: 3028, action: Action::Count };
        let spec = BumpSpec { classify: Classify::All, pacer: None, paced: Paced::All, vqueue: Some(vq) };
        let burst: Vec<(Time, P)> = (0..5).map(|k| (Time::from_ns(1211 * k as u64), P(1, k, 1514))).collect();
        let mut b = Bump::new(spec);
        let out = drive(&mut b, Rate::gbps(10), &burst);
        assert_eq!(out.len(), 5, "monitor mode passes everything");
        assert_eq!(b.vqueue_stats().overflows, 3);
        let spaced: Vec<(Time, P)> =
            (0..5).map(|k| (Time::from_ns(12_200 * k as u64), P(1, k, 1514))).collect();
        let mut b = Bump::new(spec);
        drive(&mut b, Rate::gbps(10), &spaced);
        assert_eq!(b.vqueue_stats().overflows, 0);
    }

    #[test]
    fn a_measured_rate_paces_once_a_window_is_measured() {
        // The first window of 4 packets arrives at 1 Gb/s spacing (12.112 µs apart) and goes
        // through at once; then a burst of 3 (too few to close the next window and measure
        // its own line rate) arrives and is spaced at the measured 1 Gb/s.
        let mut arrivals: Vec<(Time, P)> =
            (0..4).map(|k| (Time::from_ns(12_112 * k as u64), P(1, k, 1514))).collect();
        arrivals.extend(
            (4..7).map(|k| (Time::from_us(100) + Time::from_ns(1211 * (k - 4) as u64), P(1, k, 1514))),
        );
        let spec = BumpSpec {
            classify: Classify::Flow,
            pacer: Some((PacerSpec::Delay, RateSource::Measured { window: 4 })),
            paced: Paced::All,
            vqueue: None,
        };
        let mut b = Bump::new(spec);
        let out = drive(&mut b, Rate::gbps(10), &arrivals);
        let burst: Vec<u64> = out[4..].iter().map(|(t, _)| t.ps() / 1000).collect();
        assert_eq!(burst, vec![100_000, 112_112, 124_224]);
    }

    #[test]
    fn classes_by_port_share_one_pacer() {
        // Flows 1 and 2 to port 80, flow 3 to port 81, each sending 3 packets at line rate
        // together: port 80's six packets leave one pacing interval apart (8 µs for 1,000 B
        // at 1 Gb/s), port 81's three in parallel with them.
        let mut b = Bump::new(BumpSpec {
            classify: Classify::Port,
            pacer: Some((PacerSpec::Delay, RateSource::Fixed(Rate::gbps(1)))),
            paced: Paced::All,
            vqueue: None,
        });
        b.set_port(1, 80);
        b.set_port(2, 80);
        b.set_port(3, 81);
        let arrivals: Vec<(Time, P)> =
            (0..9).map(|k| (Time::from_ns(800 * k as u64), P(1 + k % 3, k / 3, 1000))).collect();
        let out = drive(&mut b, Rate::gbps(100), &arrivals);
        let port80: Vec<u64> = out.iter().filter(|(_, p)| p.0 != 3).map(|(t, _)| t.ps() / 1000).collect();
        assert_eq!(port80, vec![0, 8000, 16000, 24000, 32000, 40000]);
        let port81: Vec<u64> = out.iter().filter(|(_, p)| p.0 == 3).map(|(t, _)| t.ps() / 1000).collect();
        assert_eq!(port81, vec![1600, 9600, 17600]);
        assert_eq!(b.stats(Time::from_us(50)).classes, 2);
    }

    #[test]
    fn an_ecn_echo_puts_a_flow_in_the_paced_set_until_the_hold_passes() {
        // HULL-like trigger, hold 100 µs. A burst before any ECN-Echo goes at line rate; an
        // ACK with ECE at 50 µs makes the next burst leave paced at 1 Gb/s; after the hold a
        // third burst goes at line rate again.
        let mut b = Bump::new(BumpSpec {
            classify: Classify::Flow,
            pacer: Some((PacerSpec::Delay, RateSource::Fixed(Rate::gbps(1)))),
            paced: Paced::OnEcnEcho { hold: Time::from_us(100) },
            vqueue: None,
        });
        let burst = |start: u64, seq: u32| -> Vec<(Time, P)> {
            (0..3)
                .map(|k| (Time::from_us(start) + Time::from_ns(100 * k as u64), P(7, seq + k, 1000)))
                .collect()
        };
        let gaps = |out: &[(Time, P)]| -> Vec<u64> {
            out.windows(2).map(|w| (w[1].0 - w[0].0).ps() / 1000).collect()
        };
        let first = drive(&mut b, Rate::gbps(100), &burst(0, 0));
        assert_eq!(gaps(&first), vec![100, 100], "not paced before an ECN-Echo");
        b.on_reverse(Time::from_us(50), 7, false);
        b.on_reverse(Time::from_us(50), 7, true);
        let second = drive(&mut b, Rate::gbps(100), &burst(60, 3));
        assert_eq!(gaps(&second), vec![8000, 8000], "paced inside the hold");
        let third = drive(&mut b, Rate::gbps(100), &burst(200, 6));
        assert_eq!(gaps(&third), vec![100, 100], "released once the hold passed");
        assert_eq!(b.stats(Time::from_us(300)).paced_joins, 1);
    }

    #[test]
    fn counts_start_at_the_measured_window() {
        // Ten packets of one flow 10 µs apart; counting from 45 µs sees the last five, four
        // gaps of 10 µs between them (the gap into the first counted one straddles the start).
        let mut b =
            Bump::new(BumpSpec { classify: Classify::Flow, pacer: None, paced: Paced::All, vqueue: None });
        b.count_from(Time::from_us(45));
        let arrivals: Vec<(Time, P)> =
            (0..10).map(|k| (Time::from_us(10 * k as u64), P(1, k, 1000))).collect();
        drive(&mut b, Rate::gbps(10), &arrivals);
        let s = b.stats(Time::from_us(100));
        assert_eq!((s.arrivals, s.departures, s.gaps.count), (5, 5, 4));
        assert_eq!(
            (s.gaps.min, s.gaps.max, s.gaps.sum),
            (Time::from_us(10), Time::from_us(10), Time::from_us(40))
        );
        assert_eq!(s.max_queue, 0, "each is sent the instant it comes: none waits");
    }

    /// Every pacer and rate source, with and without a virtual queue that drops.
    fn all_kinds() -> Vec<BumpSpec> {
        let pacers = [
            PacerSpec::Delay,
            PacerSpec::TokenBucket { depth: 3000 },
            PacerSpec::ModifiedTokenBucket { depth: 4500, tick: Time::from_ns(4500), cap: Time::from_us(5) },
            PacerSpec::TokenThread { depth: 3000, tick: Time::from_ns(2710) },
            PacerSpec::Batch { tick: Time::from_us(40) },
        ];
        let sources = [
            RateSource::Fixed(Rate::mbps(300)),
            RateSource::Measured { window: 10 },
            RateSource::VirtualPort,
        ];
        let vq = VqSpec { rate: Rate::mbps(500), size: 20_000, threshold: 15_000, action: Action::Drop };
        let mut kinds =
            vec![BumpSpec { classify: Classify::All, pacer: None, paced: Paced::All, vqueue: Some(vq) }];
        for pacer in pacers {
            for source in sources {
                for classify in [Classify::Flow, Classify::All] {
                    let paced = if classify == Classify::Flow {
                        Paced::OnEcnEcho { hold: Time::from_us(300) }
                    } else {
                        Paced::All
                    };
                    kinds.push(BumpSpec { classify, pacer: Some((pacer, source)), paced, vqueue: Some(vq) });
                }
            }
        }
        kinds
    }

    #[test]
    fn a_bump_never_reorders_a_flow_and_loses_nothing_it_admitted() {
        // Property: random bursts of five flows with control packets among them, through
        // every kind of bump: each admitted packet leaves exactly once, no earlier than it
        // arrived, each flow's data packets in the order they came; the refused ones are the
        // virtual queue's drops.
        use buflab_base::rng::{Rng, Stream};
        for (k, spec) in all_kinds().into_iter().enumerate() {
            let mut rng = Rng::stream(k as u64, Stream::Queue, 0);
            let mut t = Time::ZERO;
            let mut seqs = [0u32; 5];
            let mut arrivals = Vec::new();
            for _ in 0..600 {
                t += Time(rng.range_u64(0, 30_000_000)); // up to 30 µs
                let flow = rng.range_u64(0, 4) as u32;
                let size = if rng.bernoulli(0.1) { 40 } else { 1000 + rng.range_u64(0, 500) as u32 };
                arrivals.push((t, P(flow, seqs[flow as usize], size)));
                seqs[flow as usize] += 1;
            }
            let mut b = Bump::new(spec);
            // ECN-Echoes now and then, for the flows whose class is paced on them.
            for f in 0..5 {
                b.on_reverse(Time::from_us(100 * f as u64), f, true);
            }
            let out = drive(&mut b, Rate::gbps(1), &arrivals);
            let stats = b.stats(Time::MAX);
            assert_eq!(out.len() as u64 + stats.drops, 600, "kind {k}: {spec:?}");
            assert_eq!(stats.drops, stats.vqueue.drops, "kind {k}: only the virtual queue drops");
            assert_eq!(b.backlog(), (0, 0));
            for flow in 0..5 {
                // Control packets overtake by design (they are never held); data keeps order.
                let got: Vec<u32> =
                    out.iter().filter(|(_, p)| p.0 == flow && !p.is_control()).map(|(_, p)| p.1).collect();
                assert!(got.windows(2).all(|w| w[0] < w[1]), "kind {k}: flow {flow} reordered: {got:?}");
            }
            for (dep, p) in &out {
                let arr = arrivals.iter().find(|(_, q)| q == p).unwrap().0;
                assert!(*dep >= arr, "kind {k}: {p:?} left at {dep:?} before it came at {arr:?}");
            }
        }
    }

    #[test]
    fn a_pacer_holds_its_rate_to_within_one_packet_over_any_interval() {
        // 2,000 packets of 1,500 B arrive at 10 Gb/s into a bump pacing at 1 Gb/s. Once the
        // bucket's initial depth has gone, the bytes sent between any two departures differ
        // from what 1 Gb/s carries in that time by less than one packet (plus one tick's
        // worth for the pacers that release on a grid).
        let kinds = [
            (PacerSpec::Delay, Time::ZERO, 0),
            (PacerSpec::TokenBucket { depth: 3000 }, Time::ZERO, 3000),
            (
                PacerSpec::ModifiedTokenBucket {
                    depth: 4500,
                    tick: Time::from_ns(4500),
                    cap: Time::from_us(5),
                },
                Time::from_ns(4500),
                4500,
            ),
            (PacerSpec::TokenThread { depth: 3000, tick: Time::from_ns(2710) }, Time::from_ns(2710), 3000),
        ];
        let rate = Rate::gbps(1);
        for (kind, tick, depth) in kinds {
            let arrivals: Vec<(Time, P)> =
                (0..2000).map(|k| (Time::from_ps(1_200_000 * k as u64), P(1, k, 1500))).collect();
            let out = drive(&mut paced(kind, rate), Rate::gbps(10), &arrivals);
            assert_eq!(out.len(), 2000);
            let skip = depth / 1500 + 1;
            let steady = &out[skip as usize..];
            let slack = 1500.0 + rate.bits_per_s() as f64 / 8.0 * tick.secs_f64();
            for step in [1usize, 7, 100, 1000] {
                for w in steady.windows(step + 1).step_by(37) {
                    let bytes = step as f64 * 1500.0;
                    let carried = rate.bits_per_s() as f64 / 8.0 * (w[step].0 - w[0].0).secs_f64();
                    assert!(
                        (bytes - carried).abs() < slack,
                        "{kind:?}: {bytes} B sent in a span that carries {carried}"
                    );
                }
            }
            let span = (steady.last().unwrap().0 - steady[0].0).secs_f64();
            let long_run = (steady.len() - 1) as f64 * 1500.0 * 8.0 / span;
            assert!((long_run / 1e9 - 1.0).abs() < 0.001, "{kind:?}: long-run {long_run}");
        }
    }
}
