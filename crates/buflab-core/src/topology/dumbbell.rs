//! The dumbbell: N senders, each behind its own access link, share one bottleneck link into
//! the receivers; ACKs return over an uncongested reverse path.
//!
//! Read first: [`super`] and `flows.rs`. Owns the dumbbell's links and routes; must not know
//! endpoints' insides (flows.rs adds them).
//!
//! ```text
//!  sender i ─ access_i (rate a, delay d_i) ─┐                        ┌─ receiver i
//!                                           ├─ bottleneck (C, B, d_b) ┤
//!  sender j ─ access_j (rate a, delay d_j) ─┘                        └─ receiver j
//!  ACKs:  receiver i ─ reverse bottleneck (C, unlimited, d_b) ─ reverse access_i ─ sender i
//! ```
//!
//! Flow i's two-way propagation delay `rtt_i` is drawn uniformly from the scenario's `rtt`
//! range; its access links carry `d_i = rtt_i/2 − d_b` each way. Phase effects between flows
//! are avoided the way the ns-2 studies did: distinct RTTs, random start times, and optional
//! per-packet send jitter. Every random draw for flow i comes from flow i's own stream.
//!
//! Optionally the senders run on server machines (a NIC link each, with class queues in
//! front), and cross traffic shares a machine's NIC, then leaves by its own link before the
//! bottleneck (thesis Fig 4.8).

use super::bumps::Bumps;
use super::flows::{add_traffic, Access, Routing};
use super::{MonitoredLink, Network};
use crate::link::Link;
use crate::loss::RandomLoss;
use crate::monitor::{MeasuredWindow, QueueMonitor};
use crate::rng::{Rng, Stream};
use crate::scenario::{BumpAt, Scenario};
use crate::sim::{Hop, Sim};
use crate::units::{BufferLimit, Rate, Time};

/// The dumbbell's routes: through the bottleneck, or through the cross link for cross traffic.
struct Paths {
    access: Access,
    classes: u32,
    bottleneck: u32,
    reverse: u32,
    bottleneck_delay: Time,
    loss: Option<u32>,
    /// Per machine: its NIC link and its class queues.
    machines: Vec<(u32, Vec<u32>)>,
    /// The cross traffic's output link, reverse link and delay.
    cross: Option<(u32, u32, Time)>,
    cross_entries: Vec<bool>,
}

impl Paths {
    /// The link entry `ti`'s data leaves by, its reverse link and its delay.
    fn exit(&self, ti: usize) -> (u32, u32, Time) {
        match self.cross {
            Some(cross) if self.cross_entries[ti] => cross,
            _ => (self.bottleneck, self.reverse, self.bottleneck_delay),
        }
    }
}

impl Routing for Paths {
    fn path_delay(&self, ti: usize) -> Time {
        self.exit(ti).2
    }

    fn forward(
        &self,
        sim: &mut Sim,
        ti: usize,
        id: u64,
        access_delay: Time,
    ) -> (Vec<Hop>, Option<(i64, i64)>) {
        let (exit, _, _) = self.exit(ti);
        let (placement, mut hops) = if self.machines.is_empty() {
            (None, vec![Hop::Link(self.access.forward_link(sim, access_delay))])
        } else {
            // The flow's share of propagation delay on a private delay line, then its class
            // queue and its machine's NIC, both shared.
            let m = (id % self.machines.len() as u64) as usize;
            let c = (id / self.machines.len() as u64 % self.classes as u64) as usize;
            let line = sim.add_link(Link::new(Rate::UNBOUNDED, access_delay, BufferLimit::Unlimited));
            let (nic, classes) = &self.machines[m];
            if self.cross_entries[ti] {
                // Cross traffic is not paced (IMC §3.1.2: "not artificially limited or paced"):
                // it shares only the machine's NIC with the main traffic.
                (Some((m as i64, -1)), vec![Hop::Link(line), Hop::Link(*nic)])
            } else {
                (Some((m as i64, c as i64)), vec![Hop::Link(line), Hop::Link(classes[c]), Hop::Link(*nic)])
            }
        };
        if exit == self.bottleneck {
            hops.extend(self.loss.map(Hop::Loss));
        }
        hops.push(Hop::Link(exit));
        (hops, placement)
    }

    fn backward(&self, sim: &mut Sim, ti: usize, _id: u64, access_delay: Time) -> Vec<Hop> {
        let (_, reverse, _) = self.exit(ti);
        let back = self.access.reverse_link(sim, access_delay);
        vec![Hop::Link(reverse), Hop::Link(back)]
    }

    fn access_mut(&mut self) -> &mut Access {
        &mut self.access
    }
}

pub fn build(s: &Scenario) -> Network {
    let net = &s.network;
    let window = MeasuredWindow { start: s.warmup, end: s.duration };
    let mut sim = Sim::new(window);

    let spec = net.bottleneck();
    let mut bn = Link::new(spec.rate, spec.delay, spec.buffer);
    super::set_queue(&mut bn, spec, s.seed, 0);
    bn.attach_monitor(QueueMonitor::new(spec.rate, window, s.monitor.interval, s.monitor.events_here()));
    let bottleneck = sim.add_link(bn);
    let reverse = sim.add_link(Link::new(spec.rate, spec.delay, BufferLimit::Unlimited));
    let loss = (net.loss > 0.0)
        .then(|| sim.add_loss(RandomLoss::new(net.loss, Rng::stream(s.seed, Stream::Loss, 0))));

    // Server machines (when asked for): a NIC link each, and `classes` shared class queues
    // at the access rate in front of it.
    let machines: Vec<(u32, Vec<u32>)> = (0..net.machines)
        .map(|_| {
            let classes = (0..net.classes)
                .map(|_| sim.add_link(Link::new(net.access_rate, Time::ZERO, net.access_buffer)))
                .collect();
            (sim.add_link(Link::new(net.nic_rate, Time::ZERO, BufferLimit::Unlimited)), classes)
        })
        .collect();

    // Cross traffic leaves through its own link (and its ACKs return on their own reverse
    // link, so the main traffic's reverse path carries only main ACKs).
    let cross = s.cross.iter().any(|&c| c).then(|| {
        let out = sim.add_link(Link::new(net.cross_rate, net.cross_delay, net.cross_buffer));
        let back = sim.add_link(Link::new(net.cross_rate, net.cross_delay, BufferLimit::Unlimited));
        (out, back, net.cross_delay)
    });

    let paths = Paths {
        access: Access { rate: net.access_rate, buffer: net.access_buffer },
        classes: net.classes,
        bottleneck,
        reverse,
        bottleneck_delay: spec.delay,
        loss,
        machines,
        cross,
        cross_entries: s.cross.clone(),
    };
    let bumps = Bumps::new(&mut sim, s, |at| (at == BumpAt::Bottleneck).then_some(bottleneck));
    add_traffic(&mut sim, s, paths, bumps);
    let monitored = vec![MonitoredLink { name: "bottleneck".into(), link: bottleneck }];
    Network { sim, monitored, summary: 0, switch: None, events_bump: None }
}
