//! The simulator: the tables of links, routes and flows, and the event loop that drives them.
//!
//! Packets follow source routes. A route is a list of hops (links or random-loss elements)
//! computed once when the network is built; a packet carries its route id and hop index.
//! When a packet leaves the last hop it is handed to its flow's endpoint (receiver for data,
//! sender for ACKs, sink for UDP).
//!
//! **Computing ahead through express links.** A link with an unlimited buffer and no monitor
//! cannot drop or report, so a packet's exit time from it is known on arrival. If the next
//! link on the route is fed by that link alone, arrivals there come in the same FIFO order,
//! so the packet can enter it straight away, at its future arrival time, with no event in
//! between. The dumbbell's reverse path (bottleneck → access → sender) is computed this way.
//!
//! **Senders running ahead.** When an ACK's exit from the last (express) link of its route is
//! known and its sender's data route starts on a link nothing else feeds, the sender handles
//! the ACK at once, at the ACK's arrival time, and its new packets enter its private access
//! link at that time. Nothing else can affect that sender or that link in between: later ACKs
//! arrive later (FIFO), and a retransmission timeout due before the ACK is fired first. The
//! sender's own clock thus runs up to half an RTT ahead of the global one; it counts its
//! window statistics by its own event times. The result is identical to running every hop as
//! an event (only the order of exactly simultaneous events can differ).

use std::time::Instant;

use crate::link::{Admission, Link};
use crate::monitor::MeasuredWindow;
use crate::packet::{Kind, Packet};
use crate::rng::Rng;
use crate::sched::{Event, Scheduler};
use crate::tcp::receiver::{ReceiverStats, TcpReceiver};
use crate::tcp::sender::TcpSender;
use crate::traffic::udp::UdpSource;
use crate::units::Time;

/// One element of a route.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hop {
    Link(u32),
    Loss(u32),
}

/// Who feeds a link, for computing ahead.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Feeder {
    None,
    /// Only this link, whose exits are FIFO.
    Link(u32),
    /// Only the endpoint that starts this route (the link is its private first hop).
    Route(u32),
    /// Several sources, or an endpoint, or a loss element.
    Other,
}

/// Source routes, flattened.
#[derive(Default)]
pub struct Routes {
    hops: Vec<Hop>,
    start: Vec<u32>,
    len: Vec<u8>,
}

impl Routes {
    #[inline]
    fn hop(&self, route: u32, hop: u8) -> Hop {
        self.hops[(self.start[route as usize] + hop as u32) as usize]
    }
    #[inline]
    fn len(&self, route: u32) -> u8 {
        self.len[route as usize]
    }
}

/// What a flow is.
// Flows live inline in one Vec indexed per event; boxing the large TCP variant would add a
// pointer chase to every ACK, and UDP flows are few.
#[allow(clippy::large_enum_variant)]
pub enum Endpoints {
    Tcp { sender: TcpSender, receiver: TcpReceiver },
    Udp(UdpSource),
}

/// A flow and its per-flow bookkeeping.
pub struct Flow {
    pub endpoints: Endpoints,
    pub start: Time,
    /// Per-packet send jitter bound (0: none).
    pub jitter: Time,
    jitter_rng: Rng,
    /// Release time of the last packet, to keep jittered packets in order.
    last_release: Time,
    /// Counters when the measured window opened.
    pub at_warmup: FlowSnapshot,
}

/// Counters of a flow's receiving end at one instant (receivers run on the global clock, so
/// a snapshot at the warm-up instant is exact; senders count their own window statistics).
#[derive(Clone, Copy, Debug, Default)]
pub struct FlowSnapshot {
    pub receiver: ReceiverStats,
    pub udp_received: u64,
}

impl Flow {
    pub fn snapshot(&self) -> FlowSnapshot {
        match &self.endpoints {
            Endpoints::Tcp { receiver, .. } => FlowSnapshot { receiver: receiver.stats, udp_received: 0 },
            Endpoints::Udp(u) => FlowSnapshot { udp_received: u.received, ..Default::default() },
        }
    }
}

/// Packet accounting for the conservation invariant: injected = delivered + dropped + in flight.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Conservation {
    pub injected: u64,
    pub delivered: u64,
    pub queue_drops: u64,
    pub loss_drops: u64,
    pub in_flight: u64,
}

pub struct Sim {
    pub sched: Scheduler,
    pub links: Vec<Link>,
    feeders: Vec<Feeder>,
    express: Vec<bool>,
    /// Per flow: ACKs may be handled as soon as their arrival time is known (see `forward`).
    ahead: Vec<bool>,
    pub losses: Vec<crate::loss::RandomLoss>,
    routes: Routes,
    pub flows: Vec<Flow>,
    pub window: MeasuredWindow,
    out: Vec<Packet>,
    pub counts: Conservation,
    /// Random-loss drops inside the measured window.
    pub loss_drops_window: u64,
    pub wall: std::time::Duration,
}

impl Sim {
    pub fn new(window: MeasuredWindow) -> Sim {
        Sim {
            sched: Scheduler::new(),
            links: Vec::new(),
            feeders: Vec::new(),
            express: Vec::new(),
            ahead: Vec::new(),
            losses: Vec::new(),
            routes: Routes::default(),
            flows: Vec::new(),
            window,
            out: Vec::with_capacity(64),
            counts: Conservation::default(),
            loss_drops_window: 0,
            wall: std::time::Duration::ZERO,
        }
    }

    // ---- Building ----

    pub fn add_link(&mut self, link: Link) -> u32 {
        self.links.push(link);
        self.feeders.push(Feeder::None);
        (self.links.len() - 1) as u32
    }

    pub fn add_loss(&mut self, loss: crate::loss::RandomLoss) -> u32 {
        self.losses.push(loss);
        (self.losses.len() - 1) as u32
    }

    /// Adds a route and records who feeds each of its links.
    pub fn add_route(&mut self, hops: &[Hop]) -> u32 {
        let id = self.routes.start.len() as u32;
        assert!(!hops.is_empty() && hops.len() < 256, "a route has 1 to 255 hops");
        assert!(matches!(hops.last(), Some(Hop::Link(_))), "a route ends with a link");
        for (i, h) in hops.iter().enumerate() {
            if let Hop::Link(l) = *h {
                let from = match i.checked_sub(1).map(|j| hops[j]) {
                    Some(Hop::Link(up)) => Feeder::Link(up),
                    Some(Hop::Loss(_)) => Feeder::Other,
                    None => Feeder::Route(id),
                };
                let f = &mut self.feeders[l as usize];
                *f = match *f {
                    Feeder::None => from,
                    same if same == from && from != Feeder::Other => same,
                    _ => Feeder::Other,
                };
            }
        }
        self.routes.start.push(self.routes.hops.len() as u32);
        self.routes.len.push(hops.len() as u8);
        self.routes.hops.extend_from_slice(hops);
        id
    }

    pub fn add_flow(&mut self, mut endpoints: Endpoints, start: Time, jitter: Time, jitter_rng: Rng) -> u32 {
        if let Endpoints::Tcp { sender, .. } = &mut endpoints {
            sender.set_window(self.window);
        }
        self.flows.push(Flow {
            endpoints,
            start,
            jitter,
            jitter_rng,
            last_release: Time::ZERO,
            at_warmup: FlowSnapshot::default(),
        });
        (self.flows.len() - 1) as u32
    }

    // ---- Running ----

    /// Runs until the end of the measured window and closes the monitors' books.
    pub fn run(&mut self) {
        let began = Instant::now();
        self.express = self.links.iter().map(Link::is_express).collect();
        self.ahead = self.flows.iter().map(|f| self.runs_ahead(f)).collect();
        for f in 0..self.flows.len() {
            self.sched.schedule(self.flows[f].start, Event::FlowStart(f as u32));
        }
        if self.window.start > Time::ZERO {
            self.sched.schedule(self.window.start, Event::Warmup);
        } else {
            self.snapshot_flows();
        }
        let end = self.window.end;
        while let Some((now, ev)) = self.sched.pop() {
            if now >= end {
                break;
            }
            self.dispatch(now, ev);
        }
        for l in &mut self.links {
            l.finish(end);
        }
        self.counts.in_flight = self.links.iter().map(|l| l.in_flight() as u64).sum();
        self.wall = began.elapsed();
    }

    /// A TCP sender may run ahead of the global clock if the first hop of its data route is
    /// a link that nothing else feeds: then nothing but its own ACKs and timer can affect it
    /// or what it sends before its next ACK arrives.
    fn runs_ahead(&self, f: &Flow) -> bool {
        let Endpoints::Tcp { sender, .. } = &f.endpoints else { return false };
        let r = sender.route();
        match self.routes.hop(r, 0) {
            Hop::Link(l) => self.feeders[l as usize] == Feeder::Route(r),
            Hop::Loss(_) => false,
        }
    }

    fn snapshot_flows(&mut self) {
        for f in &mut self.flows {
            f.at_warmup = f.snapshot();
        }
    }

    #[inline]
    fn dispatch(&mut self, now: Time, ev: Event) {
        match ev {
            Event::LinkExit(l) => {
                let mut pkt = self.links[l as usize].pop_exit(now, &mut self.sched, l);
                pkt.hop += 1;
                if pkt.hop == self.routes.len(pkt.route) {
                    self.arrive_at_endpoint(now, pkt);
                } else {
                    self.forward(now, pkt);
                }
            }
            Event::Rto(f) => self.on_rto_event(now, f),
            Event::DelayedAck(f) => self.on_delack_event(now, f),
            Event::FlowStart(f) => self.start_flow(now, f),
            Event::SourceNext(f) => self.udp_emit(now, f),
            Event::Warmup => self.snapshot_flows(),
        }
    }

    /// Moves `pkt` into the hop it points at, at time `t` (`t` > now only when computing
    /// ahead into a link fed by one FIFO upstream, or for a jittered first hop).
    fn forward(&mut self, mut t: Time, mut pkt: Packet) {
        loop {
            match self.routes.hop(pkt.route, pkt.hop) {
                Hop::Loss(i) => {
                    if self.losses[i as usize].drops_next() {
                        self.counts.loss_drops += 1;
                        if self.window.contains(t) {
                            self.loss_drops_window += 1;
                        }
                        return;
                    }
                    pkt.hop += 1;
                }
                Hop::Link(l) => {
                    if !self.express[l as usize] {
                        let link = &mut self.links[l as usize];
                        if link.arrive(t, pkt, &mut self.sched, l) == Admission::Dropped {
                            self.counts.queue_drops += 1;
                        }
                        return;
                    }
                    let exit = self.links[l as usize].transit(t, pkt.size);
                    let next = pkt.hop + 1;
                    if next < self.routes.len(pkt.route) {
                        if let Hop::Link(n) = self.routes.hop(pkt.route, next) {
                            if self.feeders[n as usize] == Feeder::Link(l) {
                                pkt.hop = next;
                                t = exit;
                                continue;
                            }
                        }
                    } else if pkt.kind == Kind::Ack && self.ahead[pkt.flow as usize] {
                        self.ack_ahead(exit, pkt);
                        return;
                    }
                    self.links[l as usize].push_exit(exit, pkt, &mut self.sched, l);
                    return;
                }
            }
        }
    }

    fn arrive_at_endpoint(&mut self, now: Time, pkt: Packet) {
        let f = pkt.flow;
        let flow = &mut self.flows[f as usize];
        match (&mut flow.endpoints, pkt.kind) {
            (Endpoints::Tcp { receiver, .. }, Kind::Data) => {
                self.counts.delivered += 1;
                let mark = self.out.len();
                receiver.on_data(now, pkt.seq, &mut self.out);
                self.sync_delack(f);
                self.release(now, f, mark);
            }
            (Endpoints::Tcp { .. }, Kind::Ack) => self.ack_ahead(now, pkt),
            (Endpoints::Udp(src), Kind::Udp) => {
                self.counts.delivered += 1;
                src.received += 1;
            }
            (_, k) => unreachable!("packet of kind {k:?} delivered to the wrong endpoint"),
        }
    }

    /// An ACK reaches its sender at `t` (`t` > now when the sender runs ahead). A timeout due
    /// at or before `t` fires first, exactly as it would have on the global clock.
    fn ack_ahead(&mut self, t: Time, pkt: Packet) {
        self.counts.delivered += 1;
        let f = pkt.flow;
        let Endpoints::Tcp { sender, .. } = &mut self.flows[f as usize].endpoints else { unreachable!() };
        let mark = self.out.len();
        if let Some(d) = sender.rto_deadline.filter(|&d| d <= t) {
            sender.on_timeout(d, &mut self.out);
            self.release(d, f, mark);
        }
        let Endpoints::Tcp { sender, .. } = &mut self.flows[f as usize].endpoints else { unreachable!() };
        sender.on_ack(t, pkt.seq, &mut self.out);
        self.sync_rto(f);
        self.release(t, f, mark);
    }

    /// Sends the packets an endpoint appended to `out` after `mark`, applying send jitter if
    /// configured. `out` works as a stack: sending may hand an ACK to a sender running ahead,
    /// which appends and releases its own packets above ours before we continue.
    fn release(&mut self, now: Time, f: u32, mark: usize) {
        let end = self.out.len();
        if end == mark {
            return;
        }
        self.counts.injected += (end - mark) as u64;
        for i in mark..end {
            let pkt = self.out[i];
            let flow = &mut self.flows[f as usize];
            let mut t = now;
            // Jitter applies to data only (ACKs leave the receiver at once).
            if flow.jitter > Time::ZERO && pkt.kind != Kind::Ack {
                let d = flow.jitter_rng.range_u64(0, flow.jitter.0);
                t = (now + Time(d)).max(flow.last_release);
                flow.last_release = t;
            }
            self.forward(t, pkt);
        }
        self.out.truncate(mark);
    }

    fn start_flow(&mut self, now: Time, f: u32) {
        match &mut self.flows[f as usize].endpoints {
            Endpoints::Tcp { sender, .. } => {
                let mark = self.out.len();
                sender.start(now, &mut self.out);
                self.sync_rto(f);
                self.release(now, f, mark);
            }
            Endpoints::Udp(_) => self.udp_emit(now, f),
        }
    }

    fn udp_emit(&mut self, now: Time, f: u32) {
        let Endpoints::Udp(src) = &mut self.flows[f as usize].endpoints else { unreachable!() };
        let (pkt, next) = src.emit(now);
        self.counts.injected += 1;
        self.sched.schedule(next, Event::SourceNext(f));
        self.forward(now, pkt);
    }

    // ---- Lazy timers: one pending event per timer; stale events are ignored. ----

    fn sync_rto(&mut self, f: u32) {
        let Endpoints::Tcp { sender, .. } = &mut self.flows[f as usize].endpoints else { return };
        if let Some(d) = sender.rto_deadline {
            // A pending event at or before the deadline will re-check and re-arm itself.
            if sender.rto_event_at.is_none_or(|e| e > d) {
                sender.rto_event_at = Some(d);
                self.sched.schedule(d, Event::Rto(f));
            }
        }
    }

    fn on_rto_event(&mut self, now: Time, f: u32) {
        let Endpoints::Tcp { sender, .. } = &mut self.flows[f as usize].endpoints else { return };
        if sender.rto_event_at != Some(now) {
            return; // stale: superseded by an earlier re-arm
        }
        sender.rto_event_at = None;
        let mark = self.out.len();
        sender.check_timer(now, &mut self.out);
        self.sync_rto(f);
        self.release(now, f, mark);
    }

    fn sync_delack(&mut self, f: u32) {
        let Endpoints::Tcp { receiver, .. } = &mut self.flows[f as usize].endpoints else { return };
        if let Some(d) = receiver.delack_deadline {
            if receiver.delack_event_at.is_none_or(|e| e > d) {
                receiver.delack_event_at = Some(d);
                self.sched.schedule(d, Event::DelayedAck(f));
            }
        }
    }

    fn on_delack_event(&mut self, now: Time, f: u32) {
        let Endpoints::Tcp { receiver, .. } = &mut self.flows[f as usize].endpoints else { return };
        if receiver.delack_event_at != Some(now) {
            return;
        }
        receiver.delack_event_at = None;
        let mark = self.out.len();
        receiver.check_timer(now, &mut self.out);
        self.sync_delack(f);
        self.release(now, f, mark);
    }
}
