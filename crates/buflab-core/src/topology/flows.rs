//! What every topology does the same way: adding the flows of the scenario's traffic entries.
//!
//! Read first: [`super`] and [`crate::endpoint`]. Owns building each flow's endpoints, delays and
//! starts from its traffic entry; must not know any topology's links (a [`Routing`] gives the
//! routes).
//!
//! Flow i draws its two-way propagation delay `rtt_i` as its entry says (its `rtt`, or uniformly
//! from `network.rtt`: [`Rtt`]); the shared
//! links it crosses carry their own delay, and its private access links (one each way) carry
//! the rest of `rtt_i / 2`. Its endpoints follow its traffic entry's kind (long-lived or
//! closed-loop TCP, open-loop arrivals, UDP). Every random draw for flow i comes from flow
//! i's own streams. Open-loop flows are added the same way during the run, as they arrive.
//!
//! A topology says only how a flow's packets are routed ([`Routing`]).

use std::sync::Arc;

use super::bumps::Bumps;
use crate::endpoint::Endpoints;
use crate::link::Link;
use crate::monitor::MeasuredWindow;
use crate::rng::{Rng, Stream};
use crate::scenario::{Scenario, Starts, Traffic};
use crate::sim::{FlowInfo, FlowMaker, Hop, Sim};
use crate::tcp::cc::CcKind;
use crate::tcp::flow::TcpFlow;
use crate::tcp::pacer::Pacing;
use crate::tcp::receiver::TcpReceiver;
use crate::tcp::sender::TcpSender;
use crate::tcp::TcpConfig;
use crate::traffic::by_flow::{self, uniform_time};
use crate::traffic::rtt::Rtt;
use crate::units::{BufferLimit, Rate, Time};

/// The access links every flow has of its own, one each way (`network.access`).
#[derive(Clone, Copy)]
pub(super) struct Access {
    pub rate: Rate,
    pub buffer: BufferLimit,
}

impl Access {
    /// The sender's link into the network.
    pub fn forward_link(&self, sim: &mut Sim, delay: Time) -> u32 {
        sim.add_link(Link::new(self.rate, delay, self.buffer))
    }

    /// The link that brings ACKs back to the sender; uncongested.
    pub fn reverse_link(&self, sim: &mut Sim, delay: Time) -> u32 {
        sim.add_link(Link::new(self.rate, delay, BufferLimit::Unlimited))
    }
}

/// How a topology routes the flows of each traffic entry (flow `k` of entry `ti` is flow
/// `id` of the network).
pub(super) trait Routing: Send {
    /// One-way propagation delay of the shared links that flow `k` of entry `ti` crosses.
    fn path_delay(&self, ti: usize, k: u32) -> Time;
    /// The hops of the data route of flow `k` of entry `ti` (its private links built), whose
    /// access links delay by `access_delay` each way, starting on its own access link; and the
    /// flow's (machine, class) placement.
    fn forward(
        &self,
        sim: &mut Sim,
        ti: usize,
        k: u32,
        id: u64,
        access_delay: Time,
    ) -> (Vec<Hop>, Option<(i32, i32)>);
    /// The hops of the ACK route of TCP flow `k` of entry `ti`, ending on its reverse access
    /// link.
    fn backward(&self, sim: &mut Sim, ti: usize, k: u32, id: u64, access_delay: Time) -> Vec<Hop>;
    /// The access links flows added from now on get (a timed change may change their rate).
    fn access_mut(&mut self) -> &mut Access;
}

/// Everything needed to add a flow: at build time, or during the run (open-loop arrivals, and
/// the long-lived flows a timed change adds).
struct Slots<R> {
    seed: u64,
    rtts: Vec<Rtt>,
    traffic: Vec<Traffic>,
    routing: R,
    bumps: Bumps,
    /// Per TCP entry: its senders' configuration, one copy that all of them share, made from
    /// `traffic` by [`shared_settings`] (again when a change sets new flows' settings).
    tcp: Vec<Option<Arc<TcpConfig>>>,
    /// The run's measured window, which the shared settings carry.
    measured: MeasuredWindow,
    /// Per entry: the number `k` of its next flow added during the run (flow k takes its
    /// entry's route k): after the flows built before the run, from 0 for open-loop arrivals.
    next: Vec<u32>,
}

impl<R: Routing> Slots<R> {
    /// Adds flow number `k` of traffic entry `ti` (its id is the next flow id); a long-lived
    /// or UDP flow starts at `offset` plus its draw from its entry's `start`.
    fn add(&self, sim: &mut Sim, ti: usize, k: u32, offset: Time) -> u32 {
        let traffic = &self.traffic[ti];
        let id = sim.flows.len() as u64;
        let flow = id as u32;
        let (rtt, mut rng) = by_flow::rtt(self.seed, &self.rtts[ti], id);
        // The scenario checks that the shared links leave a non-negative remainder.
        let access_delay = Time((rtt.0 / 2).saturating_sub(self.routing.path_delay(ti, k).0));
        let (hops, placement) = self.routing.forward(sim, ti, k, id, access_delay);
        let (hops, own_bumps) = self.bumps.data_route(sim, hops, flow, ti as u16);
        let forward = sim.add_route(&hops);
        let jitter_rng = Rng::stream(self.seed, Stream::Jitter, id);
        let info = |start, payload, recovery| FlowInfo {
            traffic: ti as u32,
            kind: traffic.kind(),
            recovery,
            rtt,
            start,
            payload,
            placement,
        };
        let (tcp, start, jitter, user) = match traffic {
            Traffic::Udp(u) => {
                let start = offset + uniform_time(&mut rng, u.start.lo, u.start.hi);
                let src = by_flow::udp_source(self.seed, u, k, id, forward);
                return sim.add_flow(
                    info(start, u.packet, None),
                    Endpoints::Udp(src),
                    Time::ZERO,
                    jitter_rng,
                );
            }
            Traffic::LongLived(l) => {
                (l.tcp, offset + uniform_time(&mut rng, l.start.lo, l.start.hi), l.jitter, None)
            }
            Traffic::ClosedLoop(c) => {
                let start = match c.start {
                    Starts::Uniform(r) => uniform_time(&mut rng, r.lo, r.hi),
                    Starts::Ramp(period) => Time((period.0 as u128 * k as u128 / c.users as u128) as u64),
                };
                (c.tcp, start, c.jitter, by_flow::user(self.seed, ti, traffic, id))
            }
            // Started by an arrival, not at a start time.
            Traffic::OpenLoop(o) => (o.tcp, Time::MAX, o.jitter, by_flow::user(self.seed, ti, traffic, id)),
        };
        let hops = self.routing.backward(sim, ti, k, id, access_delay);
        let hops = self.bumps.ack_route(sim, hops, &own_bumps);
        let backward = sim.add_route(&hops);
        let mut receiver = TcpReceiver::new(
            flow,
            backward,
            tcp.mss(),
            tcp.max_window,
            tcp.delayed_ack,
            tcp.delayed_ack_timeout,
        );
        if tcp.recovery.uses_sack() {
            receiver.set_sack();
        }
        if tcp.ack_pacing {
            receiver.set_ack_pacing(rtt);
        }
        if tcp.recovery == crate::tcp::Recovery::Linux {
            receiver.set_linux_acks(rtt);
        }
        if tcp.cc == crate::tcp::cc::CcKind::Dctcp {
            receiver.set_dctcp_echo();
        }
        let shared = self.tcp[ti].as_ref().expect("a TCP entry's configuration");
        let mut sender = TcpSender::new(Arc::clone(shared), flow, forward);
        sender.set_cc_rng(Rng::stream(self.seed, Stream::Cc, id));
        let endpoints = Endpoints::Tcp(TcpFlow::new(sender, receiver));
        let f = sim.add_flow(info(start, tcp.mss(), Some(tcp.recovery)), endpoints, jitter, jitter_rng);
        if let Some(user) = user {
            sim.set_user(f, user);
        }
        f
    }
}

impl<R: Routing> FlowMaker for Slots<R> {
    fn add(&mut self, sim: &mut Sim, ti: u32, offset: Time) -> u32 {
        let k = self.next[ti as usize];
        self.next[ti as usize] += 1;
        Slots::add(self, sim, ti as usize, k, offset)
    }

    fn set_new_flows(
        &mut self,
        ti: u32,
        access_rate: Option<Rate>,
        pacing: Option<Pacing>,
        cc: Option<CcKind>,
    ) {
        if let Some(rate) = access_rate {
            self.routing.access_mut().rate = rate;
        }
        if let Traffic::LongLived(l) = &mut self.traffic[ti as usize] {
            l.tcp.pacing = pacing.unwrap_or(l.tcp.pacing);
            l.tcp.cc = cc.unwrap_or(l.tcp.cc);
        }
        // The senders added from now on share the new settings; those running keep theirs.
        self.tcp[ti as usize] = shared_settings(&self.traffic[ti as usize], self.measured);
    }
}

/// The one copy of a TCP entry's settings its senders share, with the run's measured window.
fn shared_settings(t: &Traffic, measured: MeasuredWindow) -> Option<Arc<TcpConfig>> {
    t.tcp().map(|tcp| Arc::new(TcpConfig { measured, ..tcp }))
}

/// Adds the flows of every traffic entry of `s`, routed by `routing` through the `bumps`, and
/// the open-loop arrival processes that add more during the run.
pub(super) fn add_traffic<R: Routing + 'static>(sim: &mut Sim, s: &Scenario, routing: R, bumps: Bumps) {
    let next = s.traffic.iter().map(Traffic::flows).collect();
    let measured = sim.window;
    let tcp = s.traffic.iter().map(|t| shared_settings(t, measured)).collect();
    let slots = Slots {
        seed: s.seed,
        rtts: s.rtts.clone(),
        traffic: s.traffic.clone(),
        routing,
        bumps,
        tcp,
        measured,
        next,
    };
    if s.traffic.iter().any(|t| matches!(t, Traffic::OpenLoop(_))) {
        // Flows that arrive during the run will join the links built so far (a machine's NIC
        // and class queues, a cross link, reverse hops) after the simulator has planned how
        // to compute ahead through them; nothing may be planned on who feeds them now.
        sim.mark_links_shared();
    }
    sim.set_user_draws(s.traffic.iter().map(by_flow::user_draws).collect());
    for (ti, traffic) in s.traffic.iter().enumerate() {
        let n = traffic.flows();
        for k in 0..n {
            let links = sim.links.len();
            slots.add(sim, ti, k, Time::ZERO);
            if k == 0 {
                // The entry's other flows will each add as many links as its first.
                let per_flow = sim.links.len() - links;
                sim.reserve((n - 1) as usize, (n - 1) as usize * per_flow);
            }
        }
        if let Traffic::OpenLoop(o) = traffic {
            sim.add_arrivals(by_flow::arrivals(s.seed, ti, o.arrivals_per_s, o.start));
        }
    }
    // Open-loop flows are added while the run goes on, as they arrive, and long-lived ones
    // as timed changes add them.
    sim.set_maker(Box::new(slots));
}
