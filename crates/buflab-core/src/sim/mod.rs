//! The simulator: the tables of links, routes and flows, and the event loop that drives them.
//!
//! Read first: [`crate::sched`] (the event order) and [`crate::endpoint`] (the contract the
//! loop drives flows through). The loop only dispatches: a link's exit moves a packet on,
//! an endpoint's timer goes to the endpoint, a switch slot to the switch. It knows no
//! protocol: TCP lives behind [`crate::endpoint::Endpoint`], queue disciplines behind the
//! links, and the applications that drive finite transfers in `users.rs`.
//!
//! Where the rest lives:
//! - `route.rs`: source routes and their hops;
//! - `plan.rs`: computing ahead — deciding once, before the run, how each hop of each route is
//!   handled (express chains, senders running ahead, relay links), and why that changes
//!   nothing in the results;
//! - `path.rs`: moving packets along their routes by that plan, and handing them to endpoints;
//! - `timers.rs`: the lazy timers of endpoints;
//! - `users.rs`: closed-loop users and open-loop arrivals, and their transfer records;
//! - `requests.rs`: users' requests run ahead of a relay link's exits, so that it may relay
//!   to their clients;
//! - `autosize.rs`: driving the live auto-sizer;
//! - `qcn.rs`: carrying QCN messages from congestion points to reaction points.
//!
//! Packets follow source routes. A route is a list of hops (links, random-loss elements or a
//! router's input-output pair) computed once when the network is built; a packet carries its
//! route id and hop index. When a packet leaves the last hop it is handed to its flow's
//! endpoint.

mod autosize;
mod changes;
mod path;
mod plan;
mod qcn;
mod requests;
mod route;
mod timers;
mod users;

use std::time::Instant;

pub use route::Hop;
use route::Routes;
pub use users::{FlowMaker, TransferRecord};

use crate::autosize::AutoSizer;
use crate::endpoint::Endpoints;
use crate::link::Link;
use crate::monitor::trace::FlowTracer;
use crate::monitor::MeasuredWindow;
use crate::packet::Packet;
use crate::rng::Rng;
use crate::scenario::TrafficKind;
use crate::sched::{Event, Scheduler, MAX_ID};
use crate::switch::Switch;
use crate::tcp::Recovery;
use crate::traffic::closed_loop::{User, UserDraws};
use crate::traffic::open_loop::Arrivals;
use crate::units::Time;

/// What the results need to know about a flow. Kept small (40 bytes): every flow has one, and a
/// million flows a run are within reach.
#[derive(Clone, Debug)]
pub struct FlowInfo {
    pub traffic: u32,
    pub kind: TrafficKind,
    /// Its TCP's loss recovery (None: not TCP).
    pub recovery: Option<Recovery>,
    pub rtt: Time,
    pub start: Time,
    /// Payload bytes per packet (MSS for TCP, the whole packet for UDP).
    pub payload: u32,
    /// Server machine and class queue (class −1: cross traffic, which shares only the
    /// machine's NIC), when the scenario has machines.
    pub placement: Option<(i32, i32)>,
}

/// A flow and its per-flow bookkeeping.
pub struct Flow {
    pub info: FlowInfo,
    pub endpoints: Endpoints,
    /// Send jitter (None: none), boxed: most flows have none, and a flow's record is read by
    /// every one of its packets.
    jitter: Option<Box<SendJitter>>,
    /// A closed-loop user driving this flow's connections (None: a long-lived flow).
    pub user: Option<User>,
    /// The time of the pending event of each of the endpoint's timer slots (lazy timers).
    pending: timers::Pending,
    /// When its user's pending request was scheduled, behind a relay link (`requests.rs`):
    /// eight bytes, which the record's last cache line has to spare.
    request_scheduled: requests::PackedScheduled,
}

/// A flow's send jitter: the data each send event releases leaves up to `bound` late, all of
/// it by one draw.
struct SendJitter {
    bound: Time,
    rng: Rng,
    /// Release time of the last packet, to keep jittered packets in order.
    last_release: Time,
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
    pub losses: Vec<crate::loss::RandomLoss>,
    routes: Routes,
    pub flows: Vec<Flow>,
    pub window: MeasuredWindow,
    /// Packets endpoints just sent, used as a stack (see `release`).
    out: Vec<Packet>,
    pub counts: Conservation,
    /// Random-loss drops inside the measured window.
    pub loss_drops_window: u64,
    pub wall: std::time::Duration,
    /// How each hop is handled (see `plan.rs`).
    plan: plan::Plan,
    /// Open-loop arrival processes, the builder that adds flows during the run, and finite
    /// transfers in the order they started (see `users.rs`).
    arrivals: Vec<Arrivals>,
    maker: Option<Box<dyn FlowMaker>>,
    /// Users' requests not yet run, per relay link whose receivers are their clients (see
    /// `requests.rs`).
    requests_ahead: Vec<requests::RequestsAhead>,
    pub transfers: Vec<TransferRecord>,
    /// Per traffic entry, what its users draw from (see [`Sim::set_user_draws`]).
    user_draws: Vec<Option<UserDraws>>,
    /// The live auto-sizer, when the scenario has `[autosize]` (see [`crate::autosize`]).
    pub autosize: Option<AutoSizer>,
    /// Router nodes, and the packets a slot hands over (reused).
    pub switches: Vec<Switch>,
    crossed: Vec<Packet>,
    /// Per-flow TCP traces, when the scenario asks for them (`monitor.trace_flows`).
    pub tracer: Option<Box<FlowTracer>>,
    /// Every bump's link, with the `[[network.bump]]` entry it is an instance of, in the order
    /// they were built.
    pub bumps: Vec<BumpSite>,
    /// QCN messages in flight, when a bump has a congestion point (see `qcn.rs`).
    pub qcn: Option<Box<qcn::Qcn>>,
    /// Asked now and then whether to stop (Ctrl-C in the caller); `interrupted` once it said so.
    interrupt: Option<Box<dyn FnMut(Time) -> bool + Send>>,
    pub interrupted: bool,
    /// When the run began (wall clock), for `wall`.
    began: Option<Instant>,
}

/// Events between two questions to the interrupt check: about a hundredth of a second.
const EVENTS_PER_INTERRUPT_CHECK: u32 = 1 << 16;

/// A bump in the wire: a link whose discipline is a bump (see `topology/bumps.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BumpSite {
    /// Its `[[network.bump]]` entry (from 0).
    pub entry: u32,
    pub link: u32,
}

impl Sim {
    pub fn new(window: MeasuredWindow) -> Sim {
        Sim {
            sched: Scheduler::new(),
            links: Vec::new(),
            losses: Vec::new(),
            routes: Routes::default(),
            flows: Vec::new(),
            window,
            out: Vec::with_capacity(64),
            counts: Conservation::default(),
            loss_drops_window: 0,
            wall: std::time::Duration::ZERO,
            plan: plan::Plan::default(),
            arrivals: Vec::new(),
            maker: None,
            requests_ahead: Vec::new(),
            transfers: Vec::new(),
            user_draws: Vec::new(),
            autosize: None,
            switches: Vec::new(),
            crossed: Vec::with_capacity(64),
            tracer: None,
            bumps: Vec::new(),
            qcn: None,
            interrupt: None,
            interrupted: false,
            began: None,
        }
    }

    // ---- Building ----

    pub fn add_link(&mut self, link: Link) -> u32 {
        assert!(self.links.len() < MAX_ID as usize, "more than {MAX_ID} links");
        self.links.push(link);
        self.plan.add_link();
        (self.links.len() - 1) as u32
    }

    /// Adds a link whose discipline is a bump, an instance of `[[network.bump]]` entry `entry`.
    pub fn add_bump(&mut self, entry: u32, link: Link) -> u32 {
        let id = self.add_link(link);
        self.bumps.push(BumpSite { entry, link: id });
        id
    }

    /// Adds a router node; its (input, output) pairs are hops of routes ([`Sim::switch_hop`]).
    pub fn add_switch(&mut self, sw: Switch) -> u32 {
        let id = self.switches.len() as u32;
        self.plan.add_switch(id, sw.ports() as u32);
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
        self.plan.mark_links_shared();
    }

    /// Makes room for `flows` more flows and `links` more links. Worth calling before adding
    /// many: a link is aligned to 64 bytes, so its vector cannot grow in place and each
    /// doubling copies it, the old and new copies both resident for a moment (with 1.5·10⁵
    /// users, a quarter of the peak memory).
    pub fn reserve(&mut self, flows: usize, links: usize) {
        self.flows.reserve_exact(flows);
        self.links.reserve_exact(links);
        self.plan.reserve_links(links);
    }

    /// Adds a route and records who feeds each of its links.
    pub fn add_route(&mut self, hops: &[Hop]) -> u32 {
        let id = self.routes.add(hops);
        self.plan.note_route(id, hops);
        id
    }

    pub fn add_flow(
        &mut self,
        info: FlowInfo,
        mut endpoints: Endpoints,
        jitter: Time,
        jitter_rng: Rng,
    ) -> u32 {
        endpoints.set_window(self.window);
        assert!(self.flows.len() < MAX_ID as usize, "more than {MAX_ID} flows");
        self.flows.push(Flow {
            info,
            endpoints,
            jitter: (jitter > Time::ZERO)
                .then(|| Box::new(SendJitter { bound: jitter, rng: jitter_rng, last_release: Time::ZERO })),
            user: None,
            pending: timers::Pending::NONE,
            request_scheduled: requests::PackedScheduled::BEGIN,
        });
        (self.flows.len() - 1) as u32
    }

    /// Adds an open-loop arrival process.
    pub fn add_arrivals(&mut self, a: Arrivals) {
        self.arrivals.push(a);
    }

    /// Sets how a new flow of a traffic entry is added during the run.
    pub fn set_maker(&mut self, maker: Box<dyn FlowMaker>) {
        self.maker = Some(maker);
    }

    /// What the users of each traffic entry draw from (None for entries without users).
    pub fn set_user_draws(&mut self, draws: Vec<Option<UserDraws>>) {
        self.user_draws = draws;
    }

    /// Makes flow `f` a closed-loop user's: its start is the first request.
    pub fn set_user(&mut self, f: u32, user: User) {
        self.flows[f as usize].user = Some(user);
    }

    /// Has the run ask `check` now and then (every 65,536 events) whether to stop; it stops
    /// at once when `check` says so, with `interrupted` set and its results incomplete.
    pub fn set_interrupt(&mut self, check: Box<dyn FnMut(Time) -> bool + Send>) {
        self.interrupt = Some(check);
    }

    /// Turns computing ahead on or off (off: one event per hop, for equivalence tests).
    pub fn set_compute_ahead(&mut self, on: bool) {
        self.plan.compute_ahead = on;
    }

    /// Link `l` is read or changed from outside at the global time (the auto-sizer, changes, a
    /// live session): it must see every arrival from an event, at its time (see `plan.rs`).
    /// Before the run begins.
    pub fn keep_on_global_clock(&mut self, l: u32) {
        debug_assert!(self.began.is_none(), "the plan is made when the run begins");
        self.plan.keep_on_global_clock(l);
    }

    /// Keeps every source side from taking a packet computed ahead to reach it at or after `t`
    /// (`Time::MAX`: no limit): a change that closes flows is due at `t` (see `plan.rs`).
    pub fn set_ahead_limit(&mut self, t: Time) {
        self.plan.ahead_limit = t;
    }

    /// The latest time a source side has taken a packet at: with computing ahead, a sender's
    /// clock may be past the global one by up to its ACKs' last hops.
    pub fn sources_reached(&self) -> Time {
        self.plan.sources_reached
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
        self.begin();
        let end = self.window.end;
        self.run_until(end);
        if !self.interrupted {
            self.finish();
        }
    }

    /// Schedules what starts the run: the flows' starts, the arrival processes, the
    /// auto-sizer and the switches' slots, after deciding how each hop is computed. Once,
    /// before the first [`Sim::run_until`].
    pub fn begin(&mut self) {
        debug_assert!(self.began.is_none(), "a run begins once");
        self.began = Some(Instant::now());
        self.prepare();
        for f in 0..self.flows.len() {
            let start = self.flows[f].info.start;
            if start < self.window.end {
                self.schedule_start(start, f as u32, requests::Scheduled::Begin);
            }
        }
        self.start_arrivals();
        self.start_autosize();
        for (s, sw) in self.switches.iter_mut().enumerate() {
            sw.start(&mut self.sched, s as u32);
        }
    }

    /// Runs every event before `t` (at most the end of the run) and stops there, or earlier if
    /// the interrupt check says so (`interrupted` is then set). The events at `t` and later stay
    /// pending in their order, so a run stepped in any number of stops gives the results of
    /// one that never stopped; between two steps a change may be applied, at the time reached
    /// (see [`crate::live`]).
    pub fn run_until(&mut self, t: Time) {
        let end = t.min(self.window.end);
        let mut until_check = EVENTS_PER_INTERRUPT_CHECK;
        while let Some((now, ev)) = self.sched.pop_before(end) {
            self.prefetch_next();
            self.dispatch(now, ev);
            until_check -= 1;
            if until_check == 0 {
                until_check = EVENTS_PER_INTERRUPT_CHECK;
                if self.interrupt.as_mut().is_some_and(|check| check(now)) {
                    self.interrupted = true;
                    self.wall = self.began.map_or(std::time::Duration::ZERO, |b| b.elapsed());
                    return;
                }
            }
        }
    }

    /// Closes the run at the end of the measured window: the last auto-sizer interval, every
    /// link's books, the open transfers and the packet accounting. After [`Sim::run_until`]
    /// reached the end.
    pub fn finish(&mut self) {
        let end = self.window.end;
        // The loop used to take the first event at or after the end before it stopped, and
        // the summary's `events` has counted it since: taken here, not run, so that the count
        // (and every recorded result) stays what it was.
        self.sched.pop();
        self.finish_autosize(end);
        for (id, l) in self.links.iter_mut().enumerate() {
            l.finish(end, &mut self.sched, id as u32);
        }
        self.close_open_transfers();
        self.counts.in_flight += self.links.iter().map(|l| l.in_flight() as u64).sum::<u64>();
        self.counts.queue_drops += self.links.iter().map(|l| l.drops()).sum::<u64>();
        for sw in &self.switches {
            self.counts.queue_drops += sw.drops;
            self.counts.in_flight += sw.held();
        }
        self.wall = self.began.map_or(std::time::Duration::ZERO, |b| b.elapsed());
    }

    /// Starts loading, while this event runs, the record the next one will likely read
    /// first: a link exit's link, a timer's flow. With a thousand access links and flows,
    /// each such event otherwise begins with a cache miss. A hint only: nothing changes but
    /// the timing.
    #[inline]
    fn prefetch_next(&self) {
        match self.sched.peek_next() {
            Some(Event::LinkExit(l)) => crate::prefetch::prefetch(&self.links[l as usize]),
            Some(Event::Timer(f, _)) => crate::prefetch::prefetch(&self.flows[f as usize].pending),
            _ => {}
        }
    }

    #[inline]
    fn dispatch(&mut self, now: Time, ev: Event) {
        match ev {
            Event::LinkExit(l) => self.on_link_exit(now, l),
            Event::LinkReady(l) => self.links[l as usize].on_ready(now, &mut self.sched, l),
            Event::Timer(f, slot) => self.on_timer_event(now, f, slot as usize),
            Event::FlowStart(f) => self.start_flow(now, f),
            Event::Arrival(i) => self.on_arrival(now, i),
            Event::SwitchSlot(s) => self.on_switch_slot(now, s),
            Event::Autosize => self.on_autosize(now),
            Event::Feedback(slot) => self.on_feedback(now, slot),
        }
    }

    /// A flow's start: a user's first (or next) request, or the endpoint opening.
    fn start_flow(&mut self, now: Time, f: u32) {
        if self.flows[f as usize].user.is_some() {
            if self.request_is_due(now, f) {
                self.request(now, f);
            }
            return;
        }
        let mark = self.out.len();
        let notice = self.flows[f as usize].endpoints.start(now, &mut self.out);
        self.after(now, f, crate::endpoint::Side::Source, notice, mark);
    }

    /// Hands a traced flow's state after an event at `t` to the tracer.
    #[inline(always)]
    fn trace(&mut self, t: Time, f: u32) {
        if self.tracer.is_some() {
            self.trace_flow(t, f);
        }
    }

    fn trace_flow(&mut self, t: Time, f: u32) {
        let Some(tracer) = self.tracer.as_deref_mut() else { return };
        if !tracer.wants(f) {
            return;
        }
        if let Some(sample) = self.flows[f as usize].endpoints.trace_sample() {
            tracer.record(t, f, sample);
        }
    }
}
