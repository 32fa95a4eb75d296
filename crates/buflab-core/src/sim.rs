//! The simulator: the tables of links, routes and flows, and the event loop that drives them.
//!
//! Packets follow source routes. A route is a list of hops (links or random-loss elements)
//! computed once when the network is built; a packet carries its route id and hop index.
//! When a packet leaves the last hop it is handed to its flow's endpoint (receiver for data,
//! sender for ACKs, sink for UDP).
//!
//! **Computing ahead through express links.** A link with an unlimited buffer and no monitor
//! cannot drop or report, so a packet's exit time from it is known on arrival. If the next
//! link on the route is also express and fed by that link alone, arrivals there come in the
//! same FIFO order, so the packet can enter it straight away, at its future arrival time, with
//! no event in between. The dumbbell's reverse path (bottleneck → access → sender) is computed this way.
//!
//! **Senders running ahead.** When an ACK's exit from the last (express) link of its route is
//! known and its sender's data route starts on a link nothing else feeds, the sender handles
//! the ACK at once, at the ACK's arrival time, and its new packets enter its private access
//! link at that time. Nothing else can affect that sender or that link in between: later ACKs
//! arrive later (FIFO), and a retransmission timeout due before the ACK is fired first. The
//! sender's own clock thus runs up to half an RTT ahead of the global one; it counts its
//! window statistics by its own event times. The result is identical to running every hop as
//! an event, except where two packets reach a shared queue at the same picosecond: both modes
//! serve them in the order their events were scheduled, and that order can differ between
//! the modes. Deterministic delays can line flows up like that (`Link::simultaneous_arrivals`
//! counts it); send jitter breaks it.
//!
//! **Relay links.** The same reasoning lets a bottleneck hand each admitted packet to its
//! receiver at once, at the packet's exit time, when nothing downstream can be affected by
//! anything but the order of the bottleneck's exits (see `can_relay` for the exact test).
//! In the dumbbell a data packet then costs one event (leaving its access link) and its ACK
//! none.
//!
//! **Switches.** A route may cross a router node ([`crate::switch`]): its `Hop::Switch` names
//! an (input, output) pair. The switch takes the packet at its input, runs its own slot events,
//! and hands it back at a slot boundary to continue with the next hop (the output link). An
//! express input line that nothing but one link feeds chains into the switch ahead of time,
//! like an express link into the next: the switch keeps each input's arrivals in order until
//! their slot.

use std::time::Instant;

use crate::autosize::AutoSizer;
use crate::link::{Admission, Link};
use crate::monitor::trace::FlowTracer;
use crate::monitor::MeasuredWindow;
use crate::packet::{flags, Kind, Packet};
use crate::rng::Rng;
use crate::sched::{Event, Scheduler, MAX_ID};
use crate::switch::Switch;
use crate::tcp::receiver::TcpReceiver;
use crate::tcp::sender::TcpSender;
use crate::traffic::closed_loop::User;
use crate::traffic::open_loop::Arrivals;
use crate::traffic::udp::UdpSource;
use crate::units::{BufferLimit, Time};

/// One element of a route.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hop {
    Link(u32),
    Loss(u32),
    /// A router node's (input, output) pair; see [`Sim::switch_hop`].
    Switch(u32),
}

/// The (switch, input, output) a `Hop::Switch` names.
#[derive(Clone, Copy, Debug)]
struct SwitchPort {
    switch: u32,
    input: u32,
    output: u32,
    /// Index of the input in `Sim::input_feeders`.
    feeder: u32,
}

/// Who feeds a link, for computing ahead.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Feeder {
    None,
    /// Only this link, whose exits are FIFO.
    Link(u32),
    /// Only the endpoint that starts this route (the link is its private first hop).
    Route(u32),
    /// Several sources, or a loss element.
    Other,
}

/// What happens to a packet entering a hop, fixed once the network is built (see `prepare`).
#[derive(Clone, Copy, Debug)]
enum Step {
    Loss(u32),
    /// A link that can drop or report: admission decides.
    Queue(u32),
    /// Express link whose exit enters the next (express, singly fed) link at once.
    Chain(u32),
    /// Express link; the packet waits in its pipe for the exit event.
    Park(u32),
    /// Express link at the end of an ACK route whose sender runs ahead.
    ToSender(u32),
    /// Into a router node (a `SwitchPort` index).
    Switch(u32),
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

/// Adds a flow slot of a traffic entry during the run (open-loop arrivals).
pub type Spawner = Box<dyn FnMut(&mut Sim, u32) -> u32>;

/// What a flow is.
// Flows live inline in one Vec indexed per event; boxing the large TCP variant would add a
// pointer chase to every ACK, and UDP flows are few.
#[allow(clippy::large_enum_variant)]
pub enum Endpoints {
    Tcp { sender: TcpSender, receiver: TcpReceiver },
    Udp(UdpSource),
}

/// What the results need to know about a flow.
#[derive(Clone, Debug)]
pub struct FlowInfo {
    pub traffic: u32,
    pub kind: &'static str,
    pub tcp: &'static str,
    pub rtt: Time,
    pub start: Time,
    /// Payload bytes per packet (MSS for TCP, the whole packet for UDP).
    pub payload: u32,
    /// Server machine and class queue, when the scenario has machines.
    pub placement: Option<(i64, i64)>,
}

/// A flow and its per-flow bookkeeping.
pub struct Flow {
    pub info: FlowInfo,
    pub endpoints: Endpoints,
    pub start: Time,
    /// Per-packet send jitter bound (0: none).
    pub jitter: Time,
    jitter_rng: Rng,
    /// Release time of the last packet, to keep jittered packets in order.
    last_release: Time,
    /// A closed-loop user driving this flow's connections (None: a long-lived flow).
    pub user: Option<User>,
}

/// One finite transfer (a connection carrying one file).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TransferRecord {
    pub flow: u32,
    pub traffic: u32,
    pub conn: u16,
    /// When the client sent its request.
    pub start: Time,
    /// When the client had the last byte (None: incomplete at the end of the run).
    pub end: Option<Time>,
    pub bytes: u64,
    /// The server's counts for this connection.
    pub retransmits: u64,
    pub timeouts: u64,
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
    /// One step per route hop, parallel to `routes.hops`.
    plan: Vec<Step>,
    /// Routes and flows already planned, and which links are express.
    planned_routes: usize,
    planned_flows: usize,
    express: Vec<bool>,
    /// Open-loop arrival processes, and the builder that adds a flow slot during the run.
    arrivals: Vec<Arrivals>,
    spawner: Option<Spawner>,
    pub losses: Vec<crate::loss::RandomLoss>,
    routes: Routes,
    pub flows: Vec<Flow>,
    pub window: MeasuredWindow,
    out: Vec<Packet>,
    pub counts: Conservation,
    /// Finite transfers, in the order they started.
    pub transfers: Vec<TransferRecord>,
    /// Random-loss drops inside the measured window.
    pub loss_drops_window: u64,
    pub wall: std::time::Duration,
    /// Computing ahead (express chains, senders running ahead, relay links) is on by
    /// default; off, every hop is an event. Results are the same either way.
    compute_ahead: bool,
    /// The live auto-sizer, when the scenario has `[autosize]` (see [`crate::autosize`]).
    pub autosize: Option<AutoSizer>,
    /// Router nodes, their (input, output) pairs, who feeds each input, and the packets a
    /// slot hands over (reused).
    pub switches: Vec<Switch>,
    switch_ports: Vec<SwitchPort>,
    input_feeders: Vec<Feeder>,
    crossed: Vec<Packet>,
    /// Per-flow TCP traces, when the scenario asks for them (`monitor.trace_flows`).
    pub tracer: Option<Box<FlowTracer>>,
}

impl Sim {
    pub fn new(window: MeasuredWindow) -> Sim {
        Sim {
            sched: Scheduler::new(),
            links: Vec::new(),
            feeders: Vec::new(),
            plan: Vec::new(),
            planned_routes: 0,
            planned_flows: 0,
            express: Vec::new(),
            arrivals: Vec::new(),
            spawner: None,
            losses: Vec::new(),
            routes: Routes::default(),
            flows: Vec::new(),
            window,
            out: Vec::with_capacity(64),
            counts: Conservation::default(),
            transfers: Vec::new(),
            loss_drops_window: 0,
            wall: std::time::Duration::ZERO,
            compute_ahead: true,
            autosize: None,
            switches: Vec::new(),
            switch_ports: Vec::new(),
            input_feeders: Vec::new(),
            crossed: Vec::with_capacity(64),
            tracer: None,
        }
    }

    // ---- Building ----

    pub fn add_link(&mut self, link: Link) -> u32 {
        assert!(self.links.len() < MAX_ID as usize, "more than {MAX_ID} links");
        self.links.push(link);
        self.feeders.push(Feeder::None);
        (self.links.len() - 1) as u32
    }

    /// Adds a router node; its (input, output) pairs are hops of routes ([`Sim::switch_hop`]).
    pub fn add_switch(&mut self, sw: Switch) -> u32 {
        let id = self.switches.len() as u32;
        let n = sw.ports() as u32;
        for input in 0..n {
            let feeder = self.input_feeders.len() as u32;
            self.input_feeders.push(Feeder::None);
            for output in 0..n {
                self.switch_ports.push(SwitchPort { switch: id, input, output, feeder });
            }
        }
        self.switches.push(sw);
        id
    }

    /// The hop through switch `s` from `input` to `output`.
    pub fn switch_hop(&self, s: u32, input: usize, output: usize) -> Hop {
        let base = self.switches[..s as usize].iter().map(|w| w.ports() * w.ports()).sum::<usize>();
        let n = self.switches[s as usize].ports();
        assert!(input < n && output < n, "switch {s} has {n} ports");
        Hop::Switch((base + input * n + output) as u32)
    }

    pub fn add_loss(&mut self, loss: crate::loss::RandomLoss) -> u32 {
        self.losses.push(loss);
        (self.losses.len() - 1) as u32
    }

    /// Marks every link added so far as fed by several sources, whatever routes cross it:
    /// for links that routes added during the run may join. A link planned as fed by one FIFO
    /// upstream (entered ahead of time) or as private to one sender (which runs ahead) would
    /// otherwise see the newcomers' packets arrive before ones already entered at later times.
    pub fn mark_links_shared(&mut self) {
        self.feeders.iter_mut().for_each(|f| *f = Feeder::Other);
    }

    /// Adds a route and records who feeds each of its links.
    pub fn add_route(&mut self, hops: &[Hop]) -> u32 {
        let id = self.routes.start.len() as u32;
        assert!(!hops.is_empty() && hops.len() < 256, "a route has 1 to 255 hops");
        assert!(matches!(hops.last(), Some(Hop::Link(_))), "a route ends with a link");
        for (i, h) in hops.iter().enumerate() {
            let from = match i.checked_sub(1).map(|j| hops[j]) {
                Some(Hop::Link(up)) => Feeder::Link(up),
                // A switch's outputs are not one FIFO upstream.
                Some(Hop::Loss(_) | Hop::Switch(_)) => Feeder::Other,
                None => Feeder::Route(id),
            };
            let f = match *h {
                Hop::Link(l) => &mut self.feeders[l as usize],
                Hop::Switch(p) => &mut self.input_feeders[self.switch_ports[p as usize].feeder as usize],
                Hop::Loss(_) => continue,
            };
            *f = match *f {
                Feeder::None => from,
                same if same == from && from != Feeder::Other => same,
                _ => Feeder::Other,
            };
        }
        self.routes.start.push(self.routes.hops.len() as u32);
        self.routes.len.push(hops.len() as u8);
        self.routes.hops.extend_from_slice(hops);
        id
    }

    pub fn add_flow(
        &mut self,
        info: FlowInfo,
        mut endpoints: Endpoints,
        start: Time,
        jitter: Time,
        jitter_rng: Rng,
    ) -> u32 {
        if let Endpoints::Tcp { sender, receiver } = &mut endpoints {
            sender.set_window(self.window);
            receiver.set_window(self.window);
        }
        assert!(self.flows.len() < MAX_ID as usize, "more than {MAX_ID} flows");
        self.flows.push(Flow {
            info,
            endpoints,
            start,
            jitter,
            jitter_rng,
            last_release: Time::ZERO,
            user: None,
        });
        (self.flows.len() - 1) as u32
    }

    /// Adds an open-loop arrival process.
    pub fn add_arrivals(&mut self, a: Arrivals) {
        self.arrivals.push(a);
    }

    /// Sets how a new flow of a traffic entry is added during the run.
    pub fn set_spawner(&mut self, spawner: Spawner) {
        self.spawner = Some(spawner);
    }

    /// Makes flow `f` a closed-loop user's: its start is the first request.
    pub fn set_user(&mut self, f: u32, user: User) {
        self.flows[f as usize].user = Some(user);
    }

    /// Turns computing ahead on or off (off: one event per hop, for equivalence tests).
    pub fn set_compute_ahead(&mut self, on: bool) {
        self.compute_ahead = on;
    }

    /// Makes every switch run every slot, empty or not (for the test that skipping empty
    /// slots changes nothing).
    pub fn set_eager_switches(&mut self, on: bool) {
        for sw in &mut self.switches {
            sw.set_eager(on);
        }
    }

    // ---- Running ----

    /// Runs until the end of the measured window and closes the monitors' books.
    pub fn run(&mut self) {
        let began = Instant::now();
        self.prepare();
        for f in 0..self.flows.len() {
            if self.flows[f].start < self.window.end {
                self.sched.schedule(self.flows[f].start, Event::FlowStart(f as u32));
            }
        }
        for i in 0..self.arrivals.len() {
            let first = self.arrivals[i].start + self.arrivals[i].gap();
            self.sched.schedule(first, Event::Arrival(i as u32));
        }
        if let Some(a) = &self.autosize {
            self.sched.schedule(a.next_at(), Event::Autosize);
        }
        for (s, sw) in self.switches.iter_mut().enumerate() {
            sw.start(&mut self.sched, s as u32);
        }
        let end = self.window.end;
        while let Some((now, ev)) = self.sched.pop() {
            if now >= end {
                break;
            }
            self.dispatch(now, ev);
        }
        // An auto-sizer interval that ends exactly with the run is measured too (its new
        // limit would apply to no packet, so it is not set).
        if self.autosize.as_ref().is_some_and(|a| a.next_at() == end) {
            self.autosize_tick(end);
        }
        for l in &mut self.links {
            l.finish(end);
        }
        // Transfers still open: the server's counts so far.
        for f in 0..self.flows.len() {
            self.close_server_record(f as u32);
        }
        self.counts.in_flight += self.links.iter().map(|l| l.in_flight() as u64).sum::<u64>();
        for sw in &self.switches {
            self.counts.queue_drops += sw.drops;
            self.counts.in_flight += sw.held();
        }
        self.wall = began.elapsed();
    }

    /// Decides, once, how each hop of each route is handled: relay links, senders running
    /// ahead, express chains (all only when computing ahead is on).
    fn prepare(&mut self) {
        self.express = self.links.iter().map(Link::is_express).collect();
        // Flows that appear during the run (open-loop arrivals) open connections on their
        // own clock, which no relay test made before the run could allow for.
        let relay = self.compute_ahead && self.spawner.is_none();
        // Which routes carry data (or UDP): looked up per route by every relay test below.
        let mut data = vec![false; self.routes.start.len()];
        for f in &self.flows {
            data[Self::flow_routes(f).0 as usize] = true;
        }
        for l in 0..self.links.len() {
            if relay && self.can_relay(l as u32, &self.express, &data) {
                self.links[l].set_relay();
            }
        }
        self.plan.clear();
        self.planned_routes = 0;
        self.planned_flows = 0;
        self.plan_new_routes();
    }

    /// Decides how each hop of every route added since the last call is handled (see
    /// `Step`); flows added during the run come through here too.
    fn plan_new_routes(&mut self) {
        while self.express.len() < self.links.len() {
            let l = self.express.len();
            self.express.push(self.links[l].is_express());
        }
        let on = self.compute_ahead;
        let first = self.planned_routes;
        let n_routes = self.routes.start.len();
        let mut to_ahead_sender = vec![false; n_routes - first];
        for f in &self.flows[self.planned_flows..] {
            // A jittered packet enters its first hop at a later time than now; only a first
            // hop nothing else feeds sees such arrivals in order. Builders must ensure it.
            let (data, _) = Self::flow_routes(f);
            assert!(
                f.jitter == Time::ZERO || self.private_first_hop(data),
                "send jitter needs a private first hop"
            );
            if let (Endpoints::Tcp { receiver, .. }, true) = (&f.endpoints, on && self.runs_ahead(f)) {
                to_ahead_sender[receiver.route() as usize - first] = true;
            }
        }
        for r in first as u32..n_routes as u32 {
            let len = self.routes.len(r);
            for h in 0..len {
                let step = match self.routes.hop(r, h) {
                    Hop::Loss(i) => Step::Loss(i),
                    Hop::Switch(p) => Step::Switch(p),
                    Hop::Link(l) if !self.express[l as usize] => Step::Queue(l),
                    Hop::Link(l) => {
                        // Only into express links: an arrival at a queue that can drop always
                        // comes from an event, which keeps every chain of computing-ahead
                        // shorter than one round trip (with one flow, sender → access →
                        // bottleneck → receiver → sender is a cycle).
                        // A switch input fed by this link alone keeps its arrivals in order
                        // until their slot, so it may be entered ahead too.
                        let chains = h + 1 < len
                            && match self.routes.hop(r, h + 1) {
                                Hop::Link(n) => {
                                    self.express[n as usize] && self.feeders[n as usize] == Feeder::Link(l)
                                }
                                Hop::Switch(p) => {
                                    let input = self.switch_ports[p as usize].feeder;
                                    self.input_feeders[input as usize] == Feeder::Link(l)
                                }
                                Hop::Loss(_) => false,
                            };
                        if on && chains {
                            Step::Chain(l)
                        } else if h + 1 == len && to_ahead_sender[r as usize - first] {
                            Step::ToSender(l)
                        } else {
                            Step::Park(l)
                        }
                    }
                };
                self.plan.push(step);
            }
        }
        self.planned_routes = n_routes;
        self.planned_flows = self.flows.len();
    }

    /// A TCP sender may run ahead of the global clock if the first hop of its data route is
    /// a link that nothing else feeds: then nothing but its own ACKs and timer can affect it
    /// or what it sends before its next ACK arrives.
    /// A paced sender may too: before an ACK it releases what its pacer let go earlier
    /// (`fire_due_timers`), and its pacing events find nothing left to do.
    fn runs_ahead(&self, f: &Flow) -> bool {
        let Endpoints::Tcp { sender, .. } = &f.endpoints else { return false };
        self.private_first_hop(sender.route())
    }

    /// Whether route `r` starts on a link that nothing but its own endpoint feeds.
    fn private_first_hop(&self, r: u32) -> bool {
        matches!(self.routes.hop(r, 0), Hop::Link(l) if self.feeders[l as usize] == Feeder::Route(r))
    }

    /// The routes a flow's packets take: (data or UDP route, ACK route).
    fn flow_routes(f: &Flow) -> (u32, Option<u32>) {
        match &f.endpoints {
            Endpoints::Tcp { sender, receiver } => (sender.route(), Some(receiver.route())),
            Endpoints::Udp(u) => (u.route(), None),
        }
    }

    /// A non-express link may relay (hand each admitted packet on at once, at its exit time)
    /// when everything downstream of its exits is fixed by the order of those exits:
    /// - it is the last hop of every route through it, and only data (or UDP) routes use it;
    /// - UDP sinks just count;
    /// - every TCP receiver behind it ACKs each segment at once (no delayed-ACK timer, whose
    ///   ACKs would leave out of this order), onto an express link that only such ACKs feed.
    ///
    /// Then receivers see their data in the link's FIFO order, and their ACKs enter the
    /// reverse link in that same order, so computing them on admission gives exactly what
    /// running each exit as an event would.
    ///
    /// `data[r]` says whether route r is a flow's data (or UDP) route. The test costs one pass
    /// over the routes and the flows (a switch has a relay link per output, each tested).
    fn can_relay(&self, l: u32, express: &[bool], data: &[bool]) -> bool {
        if express[l as usize] {
            return false;
        }
        let ends_here = |r: u32| self.routes.hop(r, self.routes.len(r) - 1) == Hop::Link(l);
        let uses =
            |r: u32, link: u32| (0..self.routes.len(r)).any(|h| self.routes.hop(r, h) == Hop::Link(link));
        let n_routes = self.routes.start.len() as u32;
        // Only data routes use the link, and always as their last hop.
        for r in 0..n_routes {
            if uses(r, l) && !(data[r as usize] && ends_here(r)) {
                return false;
            }
        }
        let mut reverse: Option<u32> = None;
        for f in &self.flows {
            let (data, ack) = Self::flow_routes(f);
            if !ends_here(data) {
                continue;
            }
            let (Endpoints::Tcp { receiver, .. }, Some(ack)) = (&f.endpoints, ack) else { continue };
            let Hop::Link(first) = self.routes.hop(ack, 0) else { return false };
            if !receiver.acks_immediately() || !express[first as usize] || reverse.is_some_and(|x| x != first)
            {
                return false;
            }
            reverse = Some(first);
        }
        // The reverse link is fed by nothing but the ACKs of flows whose data ends here.
        if let Some(rev) = reverse {
            let mut ours = vec![false; n_routes as usize];
            for f in &self.flows {
                if let (data, Some(ack)) = Self::flow_routes(f) {
                    ours[ack as usize] |= ends_here(data);
                }
            }
            for r in 0..n_routes {
                let first = self.routes.hop(r, 0) == Hop::Link(rev);
                let inner = (1..self.routes.len(r)).any(|h| self.routes.hop(r, h) == Hop::Link(rev));
                if inner || (first && !ours[r as usize]) {
                    return false;
                }
            }
        }
        true
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
            Event::Arrival(i) => self.on_arrival(now, i),
            Event::SwitchSlot(s) => self.on_switch_slot(now, s),
            Event::Pace(f) => self.on_pace_event(now, f),
            Event::Autosize => {
                if let Some(limit) = self.autosize_tick(now) {
                    let a = self.autosize.as_ref().expect("an Autosize event comes from the auto-sizer");
                    self.links[a.link as usize].set_limit(BufferLimit::Packets(limit));
                }
                let next = self.autosize.as_ref().map(AutoSizer::next_at);
                if let Some(next) = next.filter(|&t| t < self.window.end) {
                    self.sched.schedule(next, Event::Autosize);
                }
            }
        }
    }

    /// A switch's slot event: the packets that crossed go on to their output links.
    fn on_switch_slot(&mut self, now: Time, s: u32) {
        let mut out = std::mem::take(&mut self.crossed);
        if self.switches[s as usize].on_slot(now, &mut out, &mut self.sched, s) {
            for mut pkt in out.drain(..) {
                pkt.hop += 1;
                self.forward(now, pkt);
            }
        }
        self.crossed = out;
    }

    /// The auto-sizer's step at `now`: it reads its link's running totals and returns the
    /// limit for the next interval (None for the first event, which only takes the baseline).
    fn autosize_tick(&mut self, now: Time) -> Option<u64> {
        let a = self.autosize.as_mut()?;
        let totals =
            self.links[a.link as usize].running_totals(now).expect("the auto-sized link is monitored");
        a.tick(now, totals)
    }

    /// Moves `pkt` into the hop it points at, at time `t` (`t` > now only when computing
    /// ahead into a link fed by one FIFO upstream, or for a jittered first hop).
    fn forward(&mut self, mut t: Time, mut pkt: Packet) {
        loop {
            match self.plan[(self.routes.start[pkt.route as usize] + pkt.hop as u32) as usize] {
                Step::Loss(i) => {
                    if self.losses[i as usize].drops_next() {
                        self.counts.loss_drops += 1;
                        if self.window.contains(t) {
                            self.loss_drops_window += 1;
                        }
                        return;
                    }
                    pkt.hop += 1;
                }
                Step::Queue(l) => {
                    match self.links[l as usize].arrive(t, pkt, &mut self.sched, l) {
                        Admission::Accepted => {}
                        Admission::Dropped => self.counts.queue_drops += 1,
                        Admission::Relayed(exit, flags) => {
                            pkt.flags = flags; // as admitted: perhaps marked CE
                            pkt.hop += 1;
                            self.arrive_at_endpoint(exit, pkt);
                        }
                    }
                    return;
                }
                Step::Chain(l) => {
                    t = self.links[l as usize].transit(t, pkt.size);
                    pkt.hop += 1;
                }
                Step::Park(l) => {
                    let link = &mut self.links[l as usize];
                    let exit = link.transit(t, pkt.size);
                    link.push_exit(exit, pkt, &mut self.sched, l);
                    return;
                }
                Step::ToSender(l) => {
                    let exit = self.links[l as usize].transit(t, pkt.size);
                    self.ack_ahead(exit, pkt);
                    return;
                }
                Step::Switch(p) => {
                    let port = self.switch_ports[p as usize];
                    let sw = &mut self.switches[port.switch as usize];
                    sw.arrive(t, pkt, port.input, port.output, &mut self.sched, port.switch);
                    return;
                }
            }
        }
    }

    fn arrive_at_endpoint(&mut self, now: Time, pkt: Packet) {
        if self.beyond_end(now) {
            return;
        }
        let f = pkt.flow;
        let flow = &mut self.flows[f as usize];
        match (&mut flow.endpoints, pkt.kind) {
            (Endpoints::Tcp { receiver, .. }, Kind::Data) => {
                self.counts.delivered += 1;
                if pkt.conn != receiver.conn() {
                    return; // a packet of an earlier connection
                }
                let mark = self.out.len();
                if pkt.flags & flags::SYN != 0 {
                    receiver.on_syn_ack(now, &mut self.out);
                } else {
                    receiver.on_ecn(pkt.flags);
                    receiver.on_data(now, pkt.seq, &mut self.out);
                }
                let completed = receiver.take_completion();
                self.sync_delack(f);
                self.release(now, f, mark);
                if completed {
                    self.transfer_completed(now, f);
                }
            }
            (Endpoints::Tcp { .. }, Kind::Ack) => self.ack_ahead(now, pkt),
            (Endpoints::Udp(src), Kind::Udp) => {
                self.counts.delivered += 1;
                src.received += 1;
                if self.window.contains(now) {
                    src.window_received += 1;
                }
            }
            (_, k) => unreachable!("packet of kind {k:?} delivered to the wrong endpoint"),
        }
    }

    /// An ACK reaches its sender at `t` (`t` > now when the sender runs ahead). A timeout due
    /// at or before `t` fires first, exactly as it would have on the global clock.
    fn ack_ahead(&mut self, t: Time, pkt: Packet) {
        if self.beyond_end(t) {
            return;
        }
        self.counts.delivered += 1;
        let f = pkt.flow;
        let mark = self.out.len();
        self.fire_due_timers(t, f, mark);
        let flow = &mut self.flows[f as usize];
        let Endpoints::Tcp { sender, receiver } = &mut flow.endpoints else { unreachable!() };
        if pkt.flags & flags::SYN != 0 {
            // A client's request: the server opens the new connection.
            let user = flow.user.as_mut().expect("requests come from closed-loop users");
            let (bytes, handshake, record) = (user.bytes, user.handshake, user.record);
            self.close_server_record(f);
            let flow = &mut self.flows[f as usize];
            let Endpoints::Tcp { sender, .. } = &mut flow.endpoints else { unreachable!() };
            sender.accept(t, pkt.conn, bytes, handshake, &mut self.out);
            flow.user.as_mut().unwrap().server_record = record;
        } else {
            // An ACK with the SACK option: its blocks wait in the receiver's side channel
            // (tcp::sack). Taking them also discards those of ACKs lost on the way, of this
            // connection or an earlier one.
            let sack = (pkt.sack != 0).then(|| receiver.sack_option(pkt.sack));
            if pkt.conn == sender.conn() {
                match &sack {
                    Some(opt) => {
                        let blocks = opt.as_ref().map_or(&[][..], |o| o.blocks());
                        sender.on_sack_ack(t, pkt.seq, blocks, &mut self.out);
                    }
                    None => sender.on_ack(t, pkt.seq, &mut self.out),
                }
                if pkt.flags & flags::ECE != 0 {
                    // RFC 3168 §6.1.2, apart from the ACK processing: a window reduction, no
                    // resend.
                    sender.on_ece(t);
                }
            }
        }
        self.sync_sender_timers(f);
        self.trace(t, f);
        self.release(t, f, mark);
    }

    /// Fires, in time order, a sender's timers due at or before `t` (its retransmission
    /// timeout and pacing releases), before it handles an ACK at `t`: a sender running ahead
    /// of the global clock does at its own pace what their events would have done. A pending
    /// event for a timer fired here finds nothing due when it comes (lazy timers).
    fn fire_due_timers(&mut self, t: Time, f: u32, mark: usize) {
        loop {
            let Endpoints::Tcp { sender, .. } = &mut self.flows[f as usize].endpoints else { unreachable!() };
            let rto = sender.rto_deadline.filter(|&d| d <= t);
            let pace = sender.pace_deadline.filter(|&d| d <= t);
            match (rto, pace) {
                (Some(d), p) if p.is_none_or(|p| d <= p) => {
                    sender.on_timeout(d, &mut self.out);
                    self.trace(d, f);
                    self.release(d, f, mark);
                }
                (_, Some(d)) => {
                    sender.on_pace(d, &mut self.out);
                    self.release(d, f, mark);
                }
                _ => return,
            }
        }
    }

    /// Hands a traced flow's sender state after an event at `t` to the tracer.
    #[inline]
    fn trace(&mut self, t: Time, f: u32) {
        let Some(tracer) = self.tracer.as_deref_mut() else { return };
        if !tracer.wants(f) {
            return;
        }
        if let Endpoints::Tcp { sender, .. } = &self.flows[f as usize].endpoints {
            tracer.record(t, f, sender.trace_sample());
        }
    }

    /// A user's download finished at `now`: record it and schedule the next request after
    /// the user thinks.
    fn transfer_completed(&mut self, now: Time, f: u32) {
        let Some(user) = self.flows[f as usize].user.as_mut() else { return };
        if let Some(i) = user.record {
            self.transfers[i].end = Some(now);
        }
        match user.think_time() {
            Some(think) => self.sched.schedule(now + think, Event::FlowStart(f)),
            // An open-loop flow's slot waits for the next arrival of its entry.
            None => {
                let traffic = user.traffic;
                if let Some(a) = self.arrivals.iter_mut().find(|a| a.traffic == traffic) {
                    a.idle.push(f);
                }
            }
        }
    }

    /// An open-loop flow arrives: it takes an idle slot of its entry, or a new one.
    fn on_arrival(&mut self, now: Time, i: u32) {
        let a = &mut self.arrivals[i as usize];
        let next = now + a.gap();
        let traffic = a.traffic;
        let f = match a.idle.pop() {
            Some(f) => f,
            None => {
                let mut spawn = self.spawner.take().expect("open-loop traffic has a spawner");
                let f = spawn(self, traffic);
                self.spawner = Some(spawn);
                self.plan_new_routes();
                f
            }
        };
        self.sched.schedule(next, Event::Arrival(i));
        self.request(now, f);
    }

    /// Copies the server's counts for the connection it has been serving into its record.
    fn close_server_record(&mut self, f: u32) {
        let flow = &self.flows[f as usize];
        let (Some(user), Endpoints::Tcp { sender, .. }) = (&flow.user, &flow.endpoints) else { return };
        if let Some(i) = user.server_record {
            let r = &mut self.transfers[i];
            (r.retransmits, r.timeouts) = (sender.conn_stats.retransmits, sender.conn_stats.timeouts);
        }
    }

    /// A user sends its next request: a new connection for a new file.
    fn request(&mut self, now: Time, f: u32) {
        let flow = &mut self.flows[f as usize];
        let (Some(user), Endpoints::Tcp { receiver, .. }) = (flow.user.as_mut(), &mut flow.endpoints) else {
            unreachable!()
        };
        let (conn, bytes) = user.next_request();
        user.record = Some(self.transfers.len());
        self.transfers.push(TransferRecord {
            flow: f,
            traffic: user.traffic,
            conn,
            start: now,
            end: None,
            bytes,
            retransmits: 0,
            timeouts: 0,
        });
        let mark = self.out.len();
        receiver.connect(now, conn, bytes, &mut self.out);
        self.release(now, f, mark);
    }

    /// A packet computed ahead to reach its endpoint at or after the end of the run stays in
    /// flight, as it would on the global clock, where that event never runs.
    #[inline]
    fn beyond_end(&mut self, t: Time) -> bool {
        let beyond = t >= self.window.end;
        if beyond {
            self.counts.in_flight += 1;
        }
        beyond
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
        if self.flows[f as usize].user.is_some() {
            return self.request(now, f);
        }
        match &mut self.flows[f as usize].endpoints {
            Endpoints::Tcp { sender, .. } => {
                let mark = self.out.len();
                sender.start(now, &mut self.out);
                self.sync_sender_timers(f);
                self.trace(now, f);
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

    /// Schedules events for a sender's timers: the retransmission timer and, when it paces,
    /// the pacer's next release.
    fn sync_sender_timers(&mut self, f: u32) {
        let Endpoints::Tcp { sender, .. } = &mut self.flows[f as usize].endpoints else { return };
        if let Some(d) = arm(sender.rto_deadline, &mut sender.rto_event_at) {
            self.sched.schedule(d, Event::Rto(f));
        }
        if let Some(d) = arm(sender.pace_deadline, &mut sender.pace_event_at) {
            self.sched.schedule(d, Event::Pace(f));
        }
    }

    fn on_pace_event(&mut self, now: Time, f: u32) {
        let Endpoints::Tcp { sender, .. } = &mut self.flows[f as usize].endpoints else { return };
        if !take_event(&mut sender.pace_event_at, now) {
            return;
        }
        let mark = self.out.len();
        sender.on_pace(now, &mut self.out);
        self.sync_sender_timers(f);
        self.release(now, f, mark);
    }

    fn on_rto_event(&mut self, now: Time, f: u32) {
        let Endpoints::Tcp { sender, .. } = &mut self.flows[f as usize].endpoints else { return };
        if !take_event(&mut sender.rto_event_at, now) {
            return;
        }
        let mark = self.out.len();
        sender.check_timer(now, &mut self.out);
        self.sync_sender_timers(f);
        self.trace(now, f);
        self.release(now, f, mark);
    }

    fn sync_delack(&mut self, f: u32) {
        let Endpoints::Tcp { receiver, .. } = &mut self.flows[f as usize].endpoints else { return };
        if let Some(d) = arm(receiver.timer_deadline(), &mut receiver.delack_event_at) {
            self.sched.schedule(d, Event::DelayedAck(f));
        }
    }

    fn on_delack_event(&mut self, now: Time, f: u32) {
        let Endpoints::Tcp { receiver, .. } = &mut self.flows[f as usize].endpoints else { return };
        if !take_event(&mut receiver.delack_event_at, now) {
            return;
        }
        let mark = self.out.len();
        receiver.check_timer(now, &mut self.out);
        self.sync_delack(f);
        self.release(now, f, mark);
    }
}

/// A lazy timer's deadline wants an event at `deadline` unless one is pending at or before it
/// (that one will re-check and re-arm): returns the time to schedule, and records it.
#[inline]
fn arm(deadline: Option<Time>, event_at: &mut Option<Time>) -> Option<Time> {
    let d = deadline?;
    event_at.is_none_or(|e| e > d).then(|| {
        *event_at = Some(d);
        d
    })
}

/// Whether a lazy timer's event at `now` is the pending one (and no longer pending); false for
/// a stale event, superseded by an earlier re-arm.
#[inline]
fn take_event(event_at: &mut Option<Time>, now: Time) -> bool {
    let current = *event_at == Some(now);
    if current {
        *event_at = None;
    }
    current
}
