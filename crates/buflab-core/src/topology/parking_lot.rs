//! The parking lot: k bottleneck links ("hops") in series, with cross traffic at each.
//!
//! Read first: [`super`] and `flows.rs`. Owns the parking lot's hops and routes; must not know
//! endpoints' insides.
//!
//! ```text
//!  senders:   main   cross at 1        cross at 2        cross at 3
//!               │        │                 │                 │
//!               └────────┴──► hop 1 ──┬────┴──► hop 2 ──┬────┴──► hop 3 ──┬──► main receivers
//!                                     └──► receivers    └──► receivers    └──► receivers
//!  ACKs: hop by hop back over each hop's reverse link (same rate and delay, no buffer limit),
//!        then the flow's own reverse access link.
//! ```
//!
//! Each traffic entry crosses a run of hops (its `hops` key; by default all of them, the
//! main flows). A flow that crosses only some hops enters just before its first and leaves
//! just after its last. Every flow has its own access link each way, as on the dumbbell, and
//! draws its RTT from `network.rtt`; its access links carry what the hops it crosses leave of
//! half of it. Main and cross flows thus have the same propagation RTTs: what a main flow
//! has more is queues — more queueing delay and more chances to be dropped, which is TCP's
//! bias against multi-hop flows.
//!
//! Random loss (`network.loss`) sits in front of every hop, each hop with its own stream.
//! Every hop's queue is monitored; the run summary describes `network.summary_hop`. With one
//! hop this builds exactly the dumbbell (same links in the same order, same draws).

use super::bumps::Bumps;
use super::flows::{add_traffic, Access, Routing};
use super::{MonitoredLink, Network};
use crate::link::Link;
use crate::loss::RandomLoss;
use crate::monitor::{MeasuredWindow, QueueMonitor};
use crate::rng::{Rng, Stream};
use crate::scenario::{BumpAt, HopSpan, Scenario};
use crate::sim::{Hop, Sim};
use crate::units::{BufferLimit, Time};

/// The elements of one hop.
struct HopLinks {
    /// The monitored bottleneck link.
    link: u32,
    /// Its uncongested reverse link, for ACKs.
    reverse: u32,
    delay: Time,
    loss: Option<u32>,
}

/// The parking lot's routes: each entry's data through its run of hops, ACKs back through
/// the same hops in reverse.
struct Paths {
    access: Access,
    hops: Vec<HopLinks>,
    spans: Vec<HopSpan>,
}

impl Paths {
    fn crossed(&self, ti: usize) -> &[HopLinks] {
        &self.hops[self.spans[ti].range()]
    }
}

impl Routing for Paths {
    fn path_delay(&self, ti: usize) -> Time {
        Time(self.crossed(ti).iter().map(|h| h.delay.0).sum())
    }

    fn forward(
        &self,
        sim: &mut Sim,
        ti: usize,
        _id: u64,
        access_delay: Time,
    ) -> (Vec<Hop>, Option<(i64, i64)>) {
        let mut route = vec![Hop::Link(self.access.forward_link(sim, access_delay))];
        for h in self.crossed(ti) {
            route.extend(h.loss.map(Hop::Loss));
            route.push(Hop::Link(h.link));
        }
        (route, None)
    }

    fn backward(&self, sim: &mut Sim, ti: usize, _id: u64, access_delay: Time) -> Vec<Hop> {
        let back = self.access.reverse_link(sim, access_delay);
        let mut route: Vec<Hop> = self.crossed(ti).iter().rev().map(|h| Hop::Link(h.reverse)).collect();
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

    let mut hops = Vec::with_capacity(net.hops.len());
    for (j, spec) in net.hops.iter().enumerate() {
        let mut link = Link::new(spec.rate, spec.delay, spec.buffer);
        super::set_queue(&mut link, spec, s.seed, j);
        // The event log is the summary hop's only: it can hold millions of rows.
        let events = s.monitor.events_here() && j == net.summary_hop;
        link.attach_monitor(QueueMonitor::new(spec.rate, window, s.monitor.interval, events));
        let link = sim.add_link(link);
        let reverse = sim.add_link(Link::new(spec.rate, spec.delay, BufferLimit::Unlimited));
        let loss = (net.loss > 0.0)
            .then(|| sim.add_loss(RandomLoss::new(net.loss, Rng::stream(s.seed, Stream::Loss, j as u64))));
        hops.push(HopLinks { link, reverse, delay: spec.delay, loss });
    }
    let monitored = hops
        .iter()
        .enumerate()
        .map(|(j, h)| MonitoredLink { name: format!("hop{}", j + 1), link: h.link })
        .collect();

    let access = Access { rate: net.access_rate, buffer: net.access_buffer };
    let links: Vec<u32> = hops.iter().map(|h| h.link).collect();
    let bumps = Bumps::new(&mut sim, s, |at| match at {
        BumpAt::Hop(k) => links.get(k).copied(),
        _ => None,
    });
    add_traffic(&mut sim, s, Paths { access, hops, spans: s.spans.clone() }, bumps);
    Network { sim, monitored, summary: net.summary_hop, switch: None, events_bump: None }
}
