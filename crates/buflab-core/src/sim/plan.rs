//! Computing ahead: how each hop of each route is handled, decided once before the run.
//!
//! Read first: [`super`] and [`crate::link`] (express and relay links). This file owns the
//! decisions and the reasons they change nothing in the results; `path.rs` carries them out.
//! It knows endpoints only through their [`Facts`].
//!
//! **Computing ahead through express links.** A link with an unlimited buffer and no monitor
//! cannot drop or report, so a packet's exit time from it is known on arrival. If the next
//! link on the route is also express and fed by that link alone, arrivals there come in the
//! same FIFO order, so the packet can enter it straight away, at its future arrival time, with
//! no event in between. The dumbbell's reverse path (bottleneck → access → sender) is computed
//! this way.
//!
//! **Senders running ahead.** When an ACK's exit from the last (express) link of its route is
//! known and its sender's data route starts on a link nothing else feeds, the sender handles
//! the ACK at once, at the ACK's arrival time, and its new packets enter its private access
//! link at that time. Nothing else can affect that sender or that link in between: later ACKs
//! arrive later (FIFO), and a timer due before the ACK is fired first (`timers.rs`). The
//! sender's own clock thus runs up to half an RTT ahead of the global one; it counts its
//! window statistics by its own event times. The result is identical to running every hop as
//! an event, except where two packets reach a shared queue at the same picosecond: both modes
//! serve them in the order their events were scheduled, and that order can differ between
//! the modes. Deterministic delays can line flows up like that (`Link::simultaneous_arrivals`
//! counts it at queues, [`Sim::simultaneous_shared_arrivals`] at express links fed by several
//! links, such as a server machine's NIC); send jitter breaks it.
//!
//! **Relay links.** The same reasoning lets a bottleneck hand each admitted packet to its
//! receiver at once, at the packet's exit time, when nothing downstream can be affected by
//! anything but the order of the bottleneck's exits (see `can_relay` for the exact test).
//! In the dumbbell a data packet then costs one event (leaving its access link) and its ACK
//! none. Closed-loop users' clients also send on their own, at their users' requests: those
//! run ahead of the link's exits when due by one (`requests.rs`), so a bottleneck may
//! relay to them too (recipe T1: three events a data packet, not four).
//!
//! **Held links entered ahead.** A link whose discipline holds its packets (a bump) decides by
//! nothing but its own arrivals and the time, unless it hears its flow's ACKs or feedback
//! (`Link::takes_arrivals_ahead`). Fed by one express link alone, it sees its arrivals in
//! order whenever they are computed, so an express link may chain into it too: the held link
//! first runs every service due by the arrival's time (`held.rs`, `catch_up`), as the events
//! it would have had, and its exits stay events. A bump behind a sender's access link thus
//! costs one event per packet (its exit), not three (the access link's exit, its release and
//! its exit). Not so a link read or changed from outside at the global time (the auto-sizer's
//! steps, `[[change]]` entries, a live session's readings: [`Sim::keep_on_global_clock`]): a
//! reading at `t` would count arrivals after `t`, and a new limit would miss arrivals already
//! admitted past `t` under the old one.
//!
//! **Changes that close flows.** A sender running ahead has handled ACKs, and sent, at times
//! past the global clock; closing it at a time it has already passed would stop it later than
//! an event per hop does. So a change that closes flows is known before the senders reach it
//! ([`Sim::set_ahead_limit`], set by `live.rs` from the changes pending): an ACK computed to
//! reach its sender at or after that time waits in its last link for its exit event, as it
//! would with computing ahead off, and so do the ACKs behind it on that link until they have
//! all left (`parked`), keeping the sender's ACKs in order. A live session, which learns of a
//! close only when it comes, applies it just past the furthest any sender has reached
//! ([`Sim::sources_reached`]). A change that closes nothing leaves senders alone: it touches
//! only the links' limits, the auto-sizer and flows it adds.
//!
//! **Switches.** A route may cross a router node ([`crate::switch`]): its `Hop::Switch` names
//! an (input, output) pair. The switch takes the packet at its input, runs its own slot events,
//! and hands it back at a slot boundary to continue with the next hop (the output link). An
//! express input line that nothing but one link feeds chains into the switch ahead of time,
//! like an express link into the next: the switch keeps each input's arrivals in order until
//! their slot.

use super::{Flow, Hop, Sim};
use crate::endpoint::Facts;
use crate::link::Link;
use crate::packet::Packet;
use crate::units::Time;

/// Who feeds a link (or a switch input), for computing ahead.
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

/// What happens to a packet entering a hop, fixed once the network is built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Step {
    Loss(u32),
    /// A link that can drop or report: admission decides.
    Queue(u32),
    /// A link whose discipline holds its packets (a bump): it may be entered ahead, and may
    /// send QCN messages.
    Held(u32),
    /// Express link whose exit enters the next (express or taking arrivals ahead, singly fed)
    /// link at once.
    Chain(u32),
    /// Express link; the packet waits in its pipe for the exit event.
    Park(u32),
    /// Express link at the end of a route whose endpoint runs ahead: it takes the packet at
    /// its exit time.
    ToAhead(u32),
    /// Into a router node (a `SwitchPort` index).
    Switch(u32),
    /// Past the reverse side of a bump (its link), at once.
    Tap(u32),
}

/// A [`Step`] in four bytes: its variant in the top 3 bits, its id below. The plan holds one
/// per route hop and every hop a packet takes reads one; at eight bytes the table of a 32-port
/// switch's 31,000 routes was larger than half the L2 cache.
#[derive(Clone, Copy, Debug)]
struct PackedStep(u32);

impl PackedStep {
    const SHIFT: u32 = 29;

    fn pack(step: Step) -> PackedStep {
        let (tag, id) = match step {
            Step::Loss(i) => (0, i),
            Step::Queue(l) => (1, l),
            Step::Held(l) => (2, l),
            Step::Chain(l) => (3, l),
            Step::Park(l) => (4, l),
            Step::ToAhead(l) => (5, l),
            Step::Switch(p) => (6, p),
            Step::Tap(l) => (7, l),
        };
        assert!(id < 1 << Self::SHIFT, "a step's id fits in 29 bits (links are fewer than 2^25)");
        PackedStep(tag << Self::SHIFT | id)
    }

    #[inline]
    fn unpack(self) -> Step {
        let id = self.0 & ((1 << Self::SHIFT) - 1);
        match self.0 >> Self::SHIFT {
            0 => Step::Loss(id),
            1 => Step::Queue(id),
            2 => Step::Held(id),
            3 => Step::Chain(id),
            4 => Step::Park(id),
            5 => Step::ToAhead(id),
            6 => Step::Switch(id),
            _ => Step::Tap(id),
        }
    }
}

/// The (switch, input, output) a `Hop::Switch` names.
#[derive(Clone, Copy, Debug)]
pub(super) struct SwitchPort {
    pub switch: u32,
    pub input: u32,
    pub output: u32,
    /// Index of the input in `Plan::input_feeders`.
    feeder: u32,
}

/// The planning state: who feeds what, and one step per route hop.
pub(super) struct Plan {
    /// Computing ahead (express chains, senders running ahead, relay links) is on by
    /// default; off, every hop is an event. Results are the same either way.
    pub compute_ahead: bool,
    feeders: Vec<Feeder>,
    /// Switch (input, output) pairs, and who feeds each switch input.
    pub ports: Vec<SwitchPort>,
    input_feeders: Vec<Feeder>,
    /// One step per route hop, parallel to the routes' hops (read with [`Plan::step`]).
    steps: Vec<PackedStep>,
    /// Routes and flows already planned, which links are express, and which held links take
    /// arrivals ahead of the global clock.
    planned_routes: usize,
    planned_flows: usize,
    express: Vec<bool>,
    ahead: Vec<bool>,
    /// Links read or changed from outside at the global time (see `Sim::keep_on_global_clock`):
    /// they take no arrivals ahead.
    on_global_clock: Vec<u32>,
    /// No source side takes a packet computed ahead to reach it at or after this time (a
    /// change that closes flows applies there); `Time::MAX`: no such change pending.
    pub ahead_limit: Time,
    /// The latest time a source side has taken a packet at.
    pub sources_reached: Time,
    /// Per link: packets held back from senders running ahead (by `ahead_limit`) still in its
    /// pipe, and their total (0 in nearly every run: the hot path checks it first).
    parked: Vec<u32>,
    pub parked_total: u32,
    /// With one event per hop: per express link fed by several links, its last arrival from
    /// one (time, and the link), and the arrivals at the picosecond of one from another link
    /// (see `note_shared_arrival`).
    shared_last: Vec<(Time, u32)>,
    shared_ties: u64,
}

impl Default for Plan {
    fn default() -> Plan {
        Plan {
            compute_ahead: true,
            feeders: Vec::new(),
            ports: Vec::new(),
            input_feeders: Vec::new(),
            steps: Vec::new(),
            planned_routes: 0,
            planned_flows: 0,
            express: Vec::new(),
            ahead: Vec::new(),
            on_global_clock: Vec::new(),
            ahead_limit: Time::MAX,
            sources_reached: Time::ZERO,
            parked: Vec::new(),
            parked_total: 0,
            shared_last: Vec::new(),
            shared_ties: 0,
        }
    }
}

impl Plan {
    pub fn reserve_links(&mut self, links: usize) {
        self.feeders.reserve_exact(links);
        self.parked.reserve_exact(links);
    }

    pub fn add_link(&mut self) {
        self.feeders.push(Feeder::None);
        self.parked.push(0);
    }

    /// The step of the hop at position `i` of the routes' table.
    #[inline]
    pub fn step(&self, i: usize) -> Step {
        self.steps[i].unpack()
    }

    /// Whether a packet leaving link `l` at `exit` for a source side running ahead must wait
    /// for its exit event instead (see the module doc, *Changes that close flows*); if so, it
    /// is counted as parked there.
    #[inline]
    pub fn holds_back(&mut self, l: u32, exit: Time) -> bool {
        // `parked_total` first: nearly every run parks nothing, and `parked[l]` is a load
        // from a table as long as the links (a cache miss per hop on large networks).
        let hold = exit >= self.ahead_limit || (self.parked_total > 0 && self.parked[l as usize] > 0);
        if hold {
            self.parked[l as usize] += 1;
            self.parked_total += 1;
        }
        hold
    }

    /// A packet held back on link `l` has left it.
    pub fn unpark(&mut self, l: u32) {
        self.parked[l as usize] -= 1;
        self.parked_total -= 1;
    }

    /// Adds the (input, output) pairs of switch `id` with `n` ports.
    pub fn add_switch(&mut self, id: u32, n: u32) {
        for input in 0..n {
            let feeder = self.input_feeders.len() as u32;
            self.input_feeders.push(Feeder::None);
            for output in 0..n {
                self.ports.push(SwitchPort { switch: id, input, output, feeder });
            }
        }
    }

    /// Link `l` is read or changed from outside at the global time: it takes no arrivals ahead.
    pub fn keep_on_global_clock(&mut self, l: u32) {
        if !self.on_global_clock.contains(&l) {
            self.on_global_clock.push(l);
        }
    }

    pub fn mark_links_shared(&mut self) {
        self.feeders.iter_mut().for_each(|f| *f = Feeder::Other);
    }

    /// Records who feeds each link (and switch input) of the new route `id`.
    pub fn note_route(&mut self, id: u32, hops: &[Hop]) {
        for (i, h) in hops.iter().enumerate() {
            let from = match i.checked_sub(1).map(|j| hops[j]) {
                Some(Hop::Link(up)) => Feeder::Link(up),
                // A switch's outputs are not one FIFO upstream; a packet that passed a loss
                // element or a tap came by an event of its own.
                Some(Hop::Loss(_) | Hop::Switch(_) | Hop::Tap(_)) => Feeder::Other,
                None => Feeder::Route(id),
            };
            let f = match *h {
                Hop::Link(l) => &mut self.feeders[l as usize],
                Hop::Switch(p) => &mut self.input_feeders[self.ports[p as usize].feeder as usize],
                Hop::Loss(_) | Hop::Tap(_) => continue,
            };
            *f = match *f {
                Feeder::None => from,
                same if same == from && from != Feeder::Other => same,
                _ => Feeder::Other,
            };
        }
    }
}

impl Sim {
    /// With one event per hop, packet `pkt` arrives at express link `l` at `t`: if `l` is fed
    /// by several links and the arrival before came at the same picosecond from another one,
    /// counts it. The two arrivals are the two links' exit events, which run in the order
    /// they were scheduled, and computing ahead may change that (the exception in the module
    /// doc); queues count theirs in `Link::simultaneous_arrivals`, and express links, which
    /// have no buffer, here. (What endpoints send straight into a shared link comes from
    /// events on the global clock, or from a relay link's receivers in its exit order.)
    pub(super) fn note_shared_arrival(&mut self, l: u32, t: Time, pkt: &Packet) {
        let plan = &mut self.plan;
        if plan.feeders.get(l as usize) != Some(&Feeder::Other) {
            return;
        }
        // The link it came from (past a loss element or a tap), if any.
        let Some(from) = (0..pkt.hop).rev().find_map(|h| match self.routes.hop(pkt.route, h) {
            Hop::Link(up) => Some(up),
            _ => None,
        }) else {
            return;
        };
        if plan.shared_last.len() <= l as usize {
            plan.shared_last.resize(l as usize + 1, (Time::MAX, 0));
        }
        let last = &mut plan.shared_last[l as usize];
        if last.0 == t && last.1 != from {
            plan.shared_ties += 1;
        }
        *last = (t, from);
    }

    /// Arrivals at express links fed by several links at the picosecond of one from another
    /// link, with one event per hop (see `note_shared_arrival`; always 0 when computing ahead,
    /// where nothing counts them).
    pub fn simultaneous_shared_arrivals(&self) -> u64 {
        self.plan.shared_ties
    }

    /// Decides, once, how each hop of each route is handled: relay links, endpoints running
    /// ahead, express chains (all only when computing ahead is on).
    pub(super) fn prepare(&mut self) {
        self.plan.express = self.links.iter().map(Link::is_express).collect();
        self.plan.ahead = self
            .links
            .iter()
            .enumerate()
            .map(|(l, link)| Self::takes_arrivals_ahead(&self.plan, link, l))
            .collect();
        // Flows that appear during the run (open-loop arrivals) open connections on their
        // own clock, which no relay test made before the run could allow for.
        let relay = self.plan.compute_ahead && self.arrivals.is_empty();
        let facts: Vec<Facts> = self.flows.iter().map(|f| f.endpoints.facts()).collect();
        // Which routes carry data (or UDP): looked up per route by every relay test below.
        let mut data = vec![false; self.routes.id_bound()];
        for f in &facts {
            data[f.route as usize] = true;
        }
        for l in 0..self.links.len() {
            if relay && self.can_relay(l as u32, &facts, &data) {
                self.links[l].set_relay();
            }
        }
        self.prepare_requests_ahead();
        self.prepare_qcn();
        self.plan.steps.clear();
        self.plan.planned_routes = 0;
        self.plan.planned_flows = 0;
        self.plan_new_routes();
    }

    /// Decides how each hop of every route added since the last call is handled (see
    /// `Step`); flows added during the run come through here too.
    pub(super) fn plan_new_routes(&mut self) {
        let plan = &mut self.plan;
        while plan.express.len() < self.links.len() {
            let l = plan.express.len();
            plan.express.push(self.links[l].is_express());
            let ahead = Self::takes_arrivals_ahead(plan, &self.links[l], l);
            plan.ahead.push(ahead);
        }
        let on = plan.compute_ahead;
        let new_routes = self.routes.ids_from(plan.planned_routes);
        // The new routes' ids run from the first one's up: a table from there is enough.
        let first = new_routes.first().map_or(self.routes.id_bound(), |&r| r as usize);
        let mut to_ahead = vec![false; self.routes.id_bound() - first];
        for f in &self.flows[plan.planned_flows..] {
            // A jittered packet enters its first hop at a later time than now; only a first
            // hop nothing else feeds sees such arrivals in order. Builders must ensure it.
            let facts = f.endpoints.facts();
            assert!(
                f.jitter.is_none() || Self::private_first_hop(plan, &self.routes, facts.route),
                "send jitter needs a private first hop"
            );
            if let (Some(answers), true) = (facts.answer_route, on && Self::runs_ahead(plan, &self.routes, f))
            {
                to_ahead[answers as usize - first] = true;
            }
        }
        for &r in new_routes {
            let len = self.routes.len(r);
            for h in 0..len {
                let step = match self.routes.hop(r, h) {
                    Hop::Loss(i) => Step::Loss(i),
                    Hop::Switch(p) => Step::Switch(p),
                    Hop::Tap(l) => Step::Tap(l),
                    Hop::Link(l) if self.links[l as usize].is_held() => Step::Held(l),
                    Hop::Link(l) if !plan.express[l as usize] => Step::Queue(l),
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
                                    (plan.express[n as usize] || plan.ahead[n as usize])
                                        && plan.feeders[n as usize] == Feeder::Link(l)
                                }
                                Hop::Switch(p) => {
                                    let input = plan.ports[p as usize].feeder;
                                    plan.input_feeders[input as usize] == Feeder::Link(l)
                                }
                                // A tap must see its packet at the global time, from an event.
                                Hop::Loss(_) | Hop::Tap(_) => false,
                            };
                        if on && chains {
                            Step::Chain(l)
                        } else if h + 1 == len && to_ahead[r as usize - first] {
                            Step::ToAhead(l)
                        } else {
                            Step::Park(l)
                        }
                    }
                };
                plan.steps.push(PackedStep::pack(step));
            }
        }
        plan.planned_routes = self.routes.count();
        plan.planned_flows = self.flows.len();
    }

    /// Whether held link `l` may see arrivals before the global clock reaches them: its
    /// discipline allows it, and nothing reads or changes it from outside at the global time.
    fn takes_arrivals_ahead(plan: &Plan, link: &Link, l: usize) -> bool {
        link.takes_arrivals_ahead() && !plan.on_global_clock.contains(&(l as u32))
    }

    /// A flow's source side may run ahead of the global clock if its facts allow it and the
    /// first hop of its route is a link that nothing else feeds: then nothing but its own
    /// packets and timers can affect it or what it sends before its next packet arrives.
    fn runs_ahead(plan: &Plan, routes: &super::Routes, f: &Flow) -> bool {
        let facts = f.endpoints.facts();
        facts.runs_ahead && Self::private_first_hop(plan, routes, facts.route)
    }

    /// Whether route `r` starts on a link that nothing but its own endpoint feeds.
    fn private_first_hop(plan: &Plan, routes: &super::Routes, r: u32) -> bool {
        matches!(routes.hop(r, 0), Hop::Link(l) if plan.feeders[l as usize] == Feeder::Route(r))
    }

    /// A non-express link may relay (hand each admitted packet on at once, at its exit time)
    /// when everything downstream of its exits is fixed by the order of those exits:
    /// - it is the last hop of every route through it, and only data (or UDP) routes use it;
    /// - endpoints that do not answer just count;
    /// - every endpoint behind it that answers answers each packet at once (no timer of its
    ///   own, whose packets would leave out of this order), onto an express link that only
    ///   such answers feed (and its user's requests, if it is a client: those run ahead of
    ///   the link's exits, `requests.rs`).
    ///
    /// Then receivers see their data in the link's FIFO order, and their ACKs enter the
    /// reverse link in that same order, so computing them on admission gives exactly what
    /// running each exit as an event would.
    ///
    /// `data[r]` says whether route r is a flow's data (or UDP) route. The test costs one pass
    /// over the routes and the flows (a switch has a relay link per output, each tested).
    pub(super) fn can_relay(&self, l: u32, facts: &[Facts], data: &[bool]) -> bool {
        if self.plan.express[l as usize] || !self.links[l as usize].can_relay() {
            return false;
        }
        let routes = &self.routes;
        // Only data routes use the link, and always as their last hop.
        for &r in routes.ids_from(0) {
            if routes.uses(r, l) && !(data[r as usize] && routes.ends_on(r, l)) {
                return false;
            }
        }
        let mut reverse: Option<u32> = None;
        for f in facts {
            if !routes.ends_on(f.route, l) {
                continue;
            }
            let Some(answers) = f.answer_route else { continue };
            let Hop::Link(first) = routes.hop(answers, 0) else { return false };
            if !f.answers_at_once || !self.plan.express[first as usize] || reverse.is_some_and(|x| x != first)
            {
                return false;
            }
            reverse = Some(first);
        }
        // The reverse link is fed by nothing but the answers of flows whose data ends here.
        if let Some(rev) = reverse {
            let mut ours = vec![false; routes.id_bound()];
            for f in facts {
                if let Some(answers) = f.answer_route {
                    ours[answers as usize] |= routes.ends_on(f.route, l);
                }
            }
            for &r in routes.ids_from(0) {
                let first = routes.hop(r, 0) == Hop::Link(rev);
                let inner = (1..routes.len(r)).any(|h| routes.hop(r, h) == Hop::Link(rev));
                if inner || (first && !ours[r as usize]) {
                    return false;
                }
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_packed_step_unpacks_to_the_same_step() {
        let top = (1 << PackedStep::SHIFT) - 1;
        for id in [0, 1, 12345, top] {
            for step in [
                Step::Loss(id),
                Step::Queue(id),
                Step::Held(id),
                Step::Chain(id),
                Step::Park(id),
                Step::ToAhead(id),
                Step::Switch(id),
                Step::Tap(id),
            ] {
                assert_eq!(PackedStep::pack(step).unpack(), step);
            }
        }
    }

    #[test]
    #[should_panic(expected = "fits in 29 bits")]
    fn an_id_past_29_bits_is_refused() {
        PackedStep::pack(Step::Queue(1 << PackedStep::SHIFT));
    }
}
