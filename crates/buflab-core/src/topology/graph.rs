//! The one builder of every topology but the switch: the scenario's [`Graph`] of links, and
//! each flow on its route through it.
//!
//! Read first: [`super`], `flows.rs` and [`crate::scenario::graph`] (what a graph and a route
//! are; the dumbbell, the parking lot, the tree and the layered network are graphs made by
//! [`crate::scenario::shapes`]). Owns building the graph's links, their loss elements and
//! monitors, the dumbbell's server machines, and the routes of flows; must not know
//! endpoints' insides (flows.rs adds them) nor any shape.
//!
//! ```text
//!  sender ─ access (own) ─► link ─► link ─► … ─► link ─► receiver      (the route's links)
//!  sender ◄─ access back (own) ◄─ link ◄─ … ◄─ link ◄─ receiver        (its ACKs' way back)
//! ```
//!
//! Every flow has its own access link each way (or, on a dumbbell with server machines, a
//! delay line, its class queue and its machine's NIC: thesis ch. 4.1), carrying what the
//! links of its route leave of half its RTT. A link with random loss has its loss element in
//! front of it. Every monitored link has a row in the `links` table; the summary link alone
//! records the event log (it can hold millions of rows).
//!
//! Links are built in entry order, so the shapes' links come out as their old builders made
//! them (a link then its way back), and each random stream is numbered as before: a link's
//! queue discipline and its loss element draw from the stream of its row in the links table
//! (unmonitored links after every monitored one).

use super::bumps::Bumps;
use super::flows::{add_traffic, Access, Routing};
use super::{MonitoredLink, Network};
use crate::link::Link;
use crate::loss::RandomLoss;
use crate::monitor::{MeasuredWindow, QueueMonitor};
use crate::rng::{Rng, Stream};
use crate::scenario::{BumpAt, Placement, Scenario};
use crate::sim::{Hop, Sim};
use crate::traffic::by_flow;
use crate::units::{BufferLimit, Rate, Time};

/// The routes of every entry's flows through the built links.
struct Paths {
    access: Access,
    /// Per graph link: its link in the simulator, its loss element and its delay.
    links: Vec<(u32, Option<u32>, Time)>,
    placements: Vec<Placement>,
    /// Class queues per machine, and per machine its NIC link and its class queues (none:
    /// every flow has its own access link).
    classes: u32,
    machines: Vec<(u32, Vec<u32>)>,
    /// Per entry: dumbbell cross traffic, which skips the class queues.
    cross_entries: Vec<bool>,
}

impl Routing for Paths {
    fn path_delay(&self, ti: usize, k: u32) -> Time {
        Time(self.placements[ti].route(k).links.iter().map(|&l| self.links[l as usize].2 .0).sum())
    }

    fn forward(
        &self,
        sim: &mut Sim,
        ti: usize,
        k: u32,
        id: u64,
        access_delay: Time,
    ) -> (Vec<Hop>, Option<(i32, i32)>) {
        let (placement, mut hops) = if self.machines.is_empty() {
            (None, vec![Hop::Link(self.access.forward_link(sim, access_delay))])
        } else {
            // The flow's share of propagation delay on a private delay line, then its class
            // queue and its machine's NIC, both shared.
            let (m, c) = by_flow::placement(id, self.machines.len() as u32, self.classes);
            let (m, c) = (m as usize, c as usize);
            let line = sim.add_link(Link::new(Rate::UNBOUNDED, access_delay, BufferLimit::Unlimited));
            let (nic, classes) = &self.machines[m];
            if self.cross_entries[ti] {
                // Cross traffic is not paced (IMC §3.1.2: "not artificially limited or paced"):
                // it shares only the machine's NIC with the main traffic.
                (Some((m as i32, -1)), vec![Hop::Link(line), Hop::Link(*nic)])
            } else {
                (Some((m as i32, c as i32)), vec![Hop::Link(line), Hop::Link(classes[c]), Hop::Link(*nic)])
            }
        };
        for &l in &self.placements[ti].route(k).links {
            let (link, loss, _) = self.links[l as usize];
            hops.extend(loss.map(Hop::Loss));
            hops.push(Hop::Link(link));
        }
        (hops, placement)
    }

    fn backward(&self, sim: &mut Sim, ti: usize, k: u32, _id: u64, access_delay: Time) -> Vec<Hop> {
        let back = self.access.reverse_link(sim, access_delay);
        let mut route: Vec<Hop> =
            self.placements[ti].route(k).back.iter().map(|&l| Hop::Link(self.links[l as usize].0)).collect();
        route.push(Hop::Link(back));
        route
    }

    fn access_mut(&mut self) -> &mut Access {
        &mut self.access
    }
}

pub fn build(s: &Scenario) -> Network {
    let net = &s.network;
    let window = MeasuredWindow { start: s.warmup, end: s.duration };
    let mut sim = Sim::new(window);

    let graph = &net.graph;
    let rows = graph.monitored().len();
    let (mut row, mut unmonitored) = (0, 0);
    let mut links = Vec::with_capacity(graph.links.len());
    let mut monitored = Vec::with_capacity(rows);
    for g in &graph.links {
        let spec = &g.spec;
        let stream = if g.monitored { row } else { rows + unmonitored };
        let mut link = Link::new(spec.rate, spec.delay, spec.buffer);
        super::set_queue(&mut link, spec, s, stream);
        if g.monitored {
            let events = s.monitor.events_here() && row == net.summary_hop;
            link.attach_monitor(QueueMonitor::new(spec.rate, window, s.monitor.interval, events));
        }
        let id = sim.add_link(link);
        let loss = (g.loss > 0.0)
            .then(|| sim.add_loss(RandomLoss::new(g.loss, Rng::stream(s.seed, Stream::Loss, stream as u64))));
        if g.monitored {
            monitored.push(MonitoredLink { name: g.name.clone(), link: id });
            row += 1;
        } else {
            unmonitored += 1;
        }
        links.push((id, loss, spec.delay));
    }

    // Server machines (dumbbell, when asked for): a NIC link each, and `classes` shared class
    // queues at the access rate in front of it.
    let machines: Vec<(u32, Vec<u32>)> = (0..net.machines)
        .map(|_| {
            let classes = (0..net.classes)
                .map(|_| sim.add_link(Link::new(net.access_rate, Time::ZERO, net.access_buffer)))
                .collect();
            (sim.add_link(Link::new(net.nic_rate, Time::ZERO, BufferLimit::Unlimited)), classes)
        })
        .collect();

    let paths = Paths {
        access: Access { rate: net.access_rate, buffer: net.access_buffer },
        links,
        placements: s.placements.clone(),
        classes: net.classes,
        machines,
        cross_entries: s.cross.clone(),
    };
    let rows: Vec<u32> = monitored.iter().map(|m| m.link).collect();
    let bumps = Bumps::new(&mut sim, s, |at| match at {
        BumpAt::Bottleneck => rows.first().copied(),
        BumpAt::Hop(k) => rows.get(k).copied(),
        BumpAt::Access => None,
    });
    add_traffic(&mut sim, s, paths, bumps);
    Network { sim, monitored, summary: net.summary_hop, switch: None, events_bump: None }
}
