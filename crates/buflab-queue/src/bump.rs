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
use crate::pacer::{AnyPacer, Pacer, PacerSpec};
use crate::qcn::{CongestionPoint, CpStats, ReactionPoint, RpSpec};
use crate::vqueue::{VirtualQueue, VqSpec, VqStats};
use crate::{Arrival, Dequeue, Discipline, Verdict};

/// What a bump needs to know of a packet beyond a queue's view (the crate's packet trait).
pub use crate::Flowing;

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
    /// A QCN reaction point's ([`crate::qcn`]), limiting to `line` until its first message.
    Qcn {
        rp: RpSpec,
        line: Rate,
    },
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
    /// Its QCN congestion point's counts, and the messages its reaction points heard.
    pub cp: CpStats,
    pub rp_messages: u64,
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
        self.cp.add(&o.cp);
        self.rp_messages += o.rp_messages;
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
    /// Its classification key (flow, port, or 0 for all).
    key: u32,
    /// Its packets, each with its arrival time (to tell which ones the pacer held).
    queue: VecDeque<(P, Time)>,
    pacer: Option<AnyPacer>,
    meter: Option<Meter>,
    vq: Option<VirtualQueue>,
    /// The release time of its head, as last scheduled.
    next: Option<Time>,
    /// With `Paced::OnEcnEcho`: paced until this time.
    paced_until: Time,
    /// When its last data packet left.
    last_departure: Option<Time>,
    /// With `RateSource::Qcn`: the reaction point setting its pacer's rate.
    rp: Option<ReactionPoint>,
}

/// A change of a QCN reaction point's rate: when, for which class (its flow, with a class
/// per flow), and the current and target rates after it (bits per second).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RateChange {
    pub time: Time,
    pub class_key: u32,
    pub rate_bps: u64,
    pub target_bps: u64,
}

/// A QCN message for the source of flow `flow`: quantized feedback `fb` (1 to 63).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Feedback {
    pub flow: u32,
    pub fb: u8,
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
    /// The last (key, class) looked up.
    last_class: Option<(u32, usize)>,
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
    /// A QCN congestion point on its queue, its counts when counting began, and the messages
    /// it sent that the caller has not yet taken.
    cp: Option<CongestionPoint>,
    cp_base: CpStats,
    feedback: Vec<Feedback>,
    /// The earliest end of a reaction point's timer cycle (any class), and every rate change.
    rp_timer: Option<Time>,
    rates: Vec<RateChange>,
}

impl<P: Flowing> Bump<P> {
    pub fn new(spec: BumpSpec) -> Bump<P> {
        Bump {
            spec,
            control: Packets::new(),
            classes: Vec::new(),
            class_of_key: HashMap::new(),
            last_class: None,
            ports: HashMap::new(),
            fifo: Packets::new(),
            ready: BinaryHeap::new(),
            backlog: (0, 0),
            count_from: Time::ZERO,
            counting: false,
            vq_base: VqStats::default(),
            last_change: Time::ZERO,
            stats: BumpStats::default(),
            cp: None,
            cp_base: CpStats::default(),
            feedback: Vec::new(),
            rp_timer: None,
            rates: Vec::new(),
        }
    }

    /// Runs a QCN congestion point on its queue: its virtual queue's backlog if it has one
    /// (then it must have one class), else its own, in bytes, as each data packet joins it.
    /// Its messages wait in [`Bump::take_feedback`].
    pub fn set_congestion_point(&mut self, cp: CongestionPoint) {
        assert!(self.spec.vqueue.is_none() || self.spec.classify == Classify::All);
        self.cp = Some(cp);
    }

    /// The QCN messages its congestion point sent since the last call, oldest first.
    pub fn take_feedback(&mut self) -> std::vec::Drain<'_, Feedback> {
        self.feedback.drain(..)
    }

    pub fn has_congestion_point(&self) -> bool {
        self.cp.is_some()
    }

    /// Whether its pacers' rates are QCN reaction points'.
    pub fn is_reaction_point(&self) -> bool {
        matches!(self.spec.pacer, Some((_, RateSource::Qcn { .. })))
    }

    /// Whether it may have messages waiting (checked cheaply per packet).
    pub fn has_feedback(&self) -> bool {
        !self.feedback.is_empty()
    }

    /// Every change of its reaction points' rates so far, in time order.
    pub fn rate_changes(&self) -> &[RateChange] {
        &self.rates
    }

    /// A QCN message for flow `flow`'s reaction point arrives at `now` (without one it is
    /// ignored): the class's rate is cut, and its head rescheduled.
    pub fn on_feedback(&mut self, now: Time, flow: u32, fb: u8) {
        if !self.is_reaction_point() {
            return;
        }
        self.advance(now);
        let c = self.class(self.key(flow, None));
        let rp = self.classes[c].rp.as_mut().expect("a QCN bump's classes have reaction points");
        rp.on_feedback(now, fb);
        self.stats.rp_messages += self.count();
        self.rate_changed(c, now);
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
        s.cp = self.cp.as_ref().map(|cp| cp.stats).unwrap_or_default();
        if self.counting {
            s.vqueue.subtract(&self.vq_base);
            s.cp.samples -= self.cp_base.samples;
            s.cp.messages -= self.cp_base.messages;
            s.cp.feedback_sum -= self.cp_base.feedback_sum;
        } else {
            s.vqueue = VqStats::default();
            s.cp = CpStats::default();
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

    /// Whether it learns from its flows' ACKs ([`Bump::on_reverse`]): only a bump that paces
    /// on ECN-Echo does.
    pub fn hears_acks(&self) -> bool {
        matches!(self.spec.paced, Paced::OnEcnEcho { .. }) && self.spec.pacer.is_some()
    }

    /// Whether anything but its own arrivals and the time changes what it does: its flows'
    /// ACKs, or congestion feedback.
    pub fn hears_reverse(&self) -> bool {
        self.hears_acks() || self.is_reaction_point()
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
        if !class.queue.is_empty() {
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
        // A bump per flow sees one key: skip the hash.
        if let Some((k, c)) = self.last_class {
            if k == key {
                return c;
            }
        }
        if let Some(&c) = self.class_of_key.get(&key) {
            self.last_class = Some((key, c));
            return c;
        }
        let spec = self.spec;
        let (pacer, meter) = match spec.pacer {
            None => (None, None),
            Some((kind, source)) => {
                let rate = match source {
                    RateSource::Fixed(r) => Some(r),
                    RateSource::VirtualPort => spec.vqueue.map(|v| v.rate),
                    RateSource::Qcn { line, .. } => Some(line),
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
            key,
            queue: VecDeque::new(),
            pacer,
            meter,
            vq: spec.vqueue.map(VirtualQueue::new),
            next: None,
            paced_until: Time::ZERO,
            last_departure: None,
            rp: match spec.pacer {
                Some((_, RateSource::Qcn { rp, line })) => Some(ReactionPoint::new(rp, line)),
                _ => None,
            },
        });
        self.stats.classes += 1;
        let c = self.classes.len() - 1;
        if c == 1 {
            if let Some(t) = self.classes[0].next {
                self.ready.push(Reverse((t, 0)));
            }
        }
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
        let next = match (class.queue.front(), class.pacer.as_mut()) {
            (Some((head, _)), Some(pacer)) if paced => Some(pacer.release_at(now, head.size())),
            (Some(_), _) => Some(now),
            (None, _) => None,
        };
        // Unchanged: its entry is in the heap already (most arrivals behind a head).
        if class.next == next {
            return;
        }
        class.next = next;
        // With one class, its `next` is the schedule: the heap waits for a second.
        if let (Some(t), true) = (next, self.classes.len() > 1) {
            self.ready.push(Reverse((t, c)));
        }
    }

    /// Starts counting once `now` reaches `count_from`.
    fn advance(&mut self, now: Time) {
        if !self.counting && now >= self.count_from {
            self.counting = true;
            self.vq_base = self.vqueue_stats();
            self.cp_base = self.cp.as_ref().map(|cp| cp.stats).unwrap_or_default();
            self.last_change = self.count_from;
        }
        if self.rp_timer.is_some_and(|t| t <= now) {
            self.run_rp_timers(now);
        }
    }

    /// Ends every reaction point's timer cycles due by `now`, each at its own time, and finds
    /// the next.
    fn run_rp_timers(&mut self, now: Time) {
        for c in 0..self.classes.len() {
            while let Some(t) =
                self.classes[c].rp.as_ref().and_then(|rp| rp.next_timer()).filter(|&t| t <= now)
            {
                self.classes[c].rp.as_mut().expect("checked").on_timer(t);
                self.rate_changed(c, t);
            }
        }
        self.rp_timer =
            self.classes.iter().filter_map(|c| c.rp.as_ref().and_then(|rp| rp.next_timer())).min();
    }

    /// Class `c`'s reaction point changed its rate at `t`: its pacer takes it, the change is
    /// logged, its head is rescheduled, and its timer may end sooner.
    fn rate_changed(&mut self, c: usize, t: Time) {
        let class = &mut self.classes[c];
        let rp = class.rp.as_ref().expect("a rate change comes from a reaction point");
        if let Some(p) = class.pacer.as_mut() {
            p.set_rate(t, rp.rate());
        }
        let key = class.key;
        let (rate, target, timer) = (rp.rate().bits_per_s(), rp.target().bits_per_s(), rp.next_timer());
        self.rates.push(RateChange { time: t, class_key: key, rate_bps: rate, target_bps: target });
        if let Some(timer) = timer {
            self.rp_timer = Some(self.rp_timer.map_or(timer, |r| r.min(timer)));
        }
        if !self.classes[c].queue.is_empty() {
            self.classes[c].next = None;
            self.push_ready(c, t);
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

    /// The congestion point samples a data packet of flow `flow` (class `c`) that just joined
    /// the queue at `now`.
    fn congestion_point(&mut self, now: Time, c: usize, flow: u32) {
        let queue = match self.classes[c].vq.as_mut() {
            Some(vq) => vq.backlog_bytes(now),
            None => self.backlog.1,
        };
        let cp = self.cp.as_mut().expect("called with a congestion point");
        if let Some(fb) = cp.on_arrival(queue) {
            self.feedback.push(Feedback { flow, fb });
        }
    }

    /// The earliest (release time, class) of the class heads: the one class's own, or the
    /// heap's first entry that is not stale (stale ones are dropped on the way).
    fn next_release(&mut self) -> Option<(Time, usize)> {
        if self.classes.len() == 1 {
            return self.classes[0].next.map(|t| (t, 0));
        }
        while let Some(&Reverse((t, c))) = self.ready.peek() {
            if self.classes[c].next == Some(t) {
                return Some((t, c));
            }
            self.ready.pop(); // stale
        }
        None
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
        if self.cp.is_some() {
            self.congestion_point(now, c, pkt.flow());
        }
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
        class.queue.push_back((pkt, now));
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
        let Some((t, c)) = self.next_release() else { return Dequeue::Idle };
        if t > now {
            // A reaction point's timer due sooner may raise the rate: ask again then.
            return Dequeue::Wait(self.rp_timer.map_or(t, |r| r.min(t)));
        }
        if self.classes.len() > 1 {
            self.ready.pop();
        }
        let class = &mut self.classes[c];
        let (p, arrived) = class.queue.pop_front().expect("a scheduled class has a head");
        if t > arrived && self.counting {
            self.stats.paced += 1;
        }
        if let Some(pacer) = class.pacer.as_mut() {
            pacer.on_departure(now, p.size());
        }
        class.next = None;
        if class.rp.as_mut().is_some_and(|rp| rp.on_sent(p.size() as u64)) {
            self.rate_changed(c, now);
        }
        self.push_ready(c, now);
        self.depart(now, &p, Some(c));
        Dequeue::Send(p)
    }

    fn backlog(&self) -> (u64, u64) {
        self.backlog
    }

    /// With packets only in paced classes: the earliest release scheduled (with several
    /// classes, the heap's first entry, which a stale entry can only make earlier).
    fn not_before(&self) -> Time {
        if !self.control.is_empty() || self.spec.pacer.is_none() {
            return Time::ZERO;
        }
        let first = match self.classes.len() {
            1 => self.classes[0].next,
            _ => self.ready.peek().map(|r| r.0 .0),
        };
        match (first, self.rp_timer) {
            (Some(t), Some(r)) => t.min(r),
            (first, _) => first.unwrap_or(Time::ZERO),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pacer::PacerSpec;
    use crate::vqueue::Action;
    use crate::Limit;
    use crate::Queued;

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
                Dequeue::Send(p) | Dequeue::Marked(p) => {
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

    /// QCN by hand, without a simulator: a congestion point's message, carried by the test
    /// to a reaction point's bump, sets that flow's token thread to the cut rate exactly.
    #[test]
    fn a_qcn_message_carried_by_hand_sets_the_reaction_points_pacing_rate() {
        use crate::qcn::{CongestionPoint, CpSpec, RpSpec, Sampling};
        use buflab_base::rng::{Rng, Stream};
        // The congestion point: one class, its own queue, every packet sampled, Q_EQ 3000 B.
        let mut cp = Bump::<P>::new(BumpSpec {
            classify: Classify::All,
            pacer: None,
            paced: Paced::All,
            vqueue: None,
        });
        let spec = CpSpec { q_eq: 3000, w: 2, sampling: Sampling::Fixed(1.0) };
        cp.set_congestion_point(CongestionPoint::new(spec, Rng::stream(1, Stream::Queue, 0)));
        let mut purged = Vec::new();
        let mut bytes = 0;
        for i in 0..4 {
            let a = Arrival::new(Time::ZERO, i, bytes, Time(1), Limit::Unlimited, 1500, false);
            cp.enqueue(&a, P(7, i as u32, 1500), &mut purged);
            bytes += 1500;
        }
        // Queues of 1500 to 6000 B against Q_EQ 3000, W 2, Fb_max 15000, |Fb|·63/15000 rounded
        // up: -(-1500 + 2·1500) → 6.3 → 7; -(0 + 3000) → 12.6 → 13; -(1500 + 3000) → 18.9 →
        // 19; -(3000 + 3000) → 25.2 → 26.
        let messages: Vec<Feedback> = cp.take_feedback().collect();
        assert_eq!(messages.iter().map(|m| m.fb).collect::<Vec<_>>(), vec![7, 13, 19, 26]);
        assert!(messages.iter().all(|m| m.flow == 7) && !cp.has_feedback());

        // The reaction point: a token thread (1 µs ticks, one packet deep) at 1 Gb/s line rate.
        let rp_spec = RpSpec::STANDARD;
        let mut rp = Bump::<P>::new(BumpSpec {
            classify: Classify::Flow,
            pacer: Some((
                PacerSpec::TokenThread { depth: 1500, tick: Time::from_us(1) },
                RateSource::Qcn { rp: rp_spec, line: Rate::gbps(1) },
            )),
            paced: Paced::All,
            vqueue: None,
        });
        assert!(rp.is_reaction_point() && rp.hears_reverse());
        // The last message, Fb 26, cuts 1 Gb/s by 26/128: 796,875,000 b/s.
        rp.on_feedback(Time::ZERO, 7, 26);
        assert_eq!(rp.rate_changes()[0].rate_bps, 796_875_000);
        let arrivals: Vec<(Time, P)> = (0..3).map(|i| (Time::ZERO, P(7, i, 1500))).collect();
        let out = drive(&mut rp, Rate::gbps(10), &arrivals);
        // The bucket starts full: the first goes at once. A tick earns 796.875 bits: the next
        // needs 12,000, 16 ticks (12,750, capped at the 12,000 bits of the one-packet depth).
        let times: Vec<u64> = out.iter().map(|(t, _)| t.ps()).collect();
        assert_eq!(times, vec![0, 16_000_000, 32_000_000]);
        assert_eq!(rp.stats(Time::from_ms(1)).rp_messages, 1);
    }
}
