//! The switch topology, thesis Figure 3.1: servers behind individual access links, one
//! multiplexing router per switch input, an N×N router ([`crate::switch`]), and clients behind
//! its output lines.
//!
//! Read first: [`super`], `flows.rs` and [`crate::switch`]. Owns the switch topology's links,
//! router and routes; must not know the fabric's schedulers (the router node runs them).
//!
//! ```text
//!  server ─ access (a, d) ─┐
//!  server ─ access (a, d) ─┼─ mux router i (large buffer) ─ input line i (C) ─┐
//!  server ─ access (a, d) ─┘                                                  │  VOQs, fabric
//!                           client ◄─ access (a, d) ◄─ output line j (C, B) ◄─┘
//!  ACKs: client ─ reverse line j (C, unlimited) ─ reverse access (a, d) ─ server
//! ```
//!
//! Flow k of a traffic entry enters at input k mod N and leaves by the output its input's
//! load row gives it (see [`assign_ports`]). Every flow draws its RTT from `network.rtt` and
//! its access links carry all of it (half each way): the mux routers, lines and switch add
//! none, as in the thesis, whose delays are per server-client pair (§3.1). The access rate
//! `a` and the core rate `C` give the multiplexing factor M = C / a.
//!
//! Every output line is monitored (the links table, one row per output); the mux routers
//! only when their buffer is finite (unlimited, they can neither drop nor queue anything worth
//! reporting, and stay express links the simulator passes through without an event).

use super::bumps::Bumps;
use super::flows::{add_traffic, Access, Routing};
use super::{MonitoredLink, Network, SwitchNet};
use crate::fabric::SchedulerKind;
use crate::link::Link;
use crate::monitor::{MeasuredWindow, QueueMonitor};
use crate::rng::{Rng, Stream};
use crate::scenario::{Load, Scenario};
use crate::sim::{Hop, Sim};
use crate::switch::{Fabric, Switch, SwitchConfig};
use crate::units::{BufferLimit, Time};

/// The routes through the switch.
struct Paths {
    access: Access,
    switch: u32,
    /// Per port: the input line (the mux router's link), the output line, its reverse line.
    inputs: Vec<u32>,
    outputs: Vec<u32>,
    reverse: Vec<u32>,
    /// (input, output) of every flow, by flow id.
    ports: Vec<(u32, u32)>,
}

impl Routing for Paths {
    fn path_delay(&self, _ti: usize, _k: u32) -> Time {
        Time::ZERO
    }

    fn forward(
        &self,
        sim: &mut Sim,
        _ti: usize,
        _k: u32,
        id: u64,
        access_delay: Time,
    ) -> (Vec<Hop>, Option<(i32, i32)>) {
        let (i, j) = self.ports[id as usize];
        let access = self.access.forward_link(sim, access_delay);
        let through = sim.switch_hop(self.switch, i as usize, j as usize);
        let hops = vec![
            Hop::Link(access),
            Hop::Link(self.inputs[i as usize]),
            through,
            Hop::Link(self.outputs[j as usize]),
        ];
        (hops, None)
    }

    fn backward(&self, sim: &mut Sim, _ti: usize, _k: u32, id: u64, access_delay: Time) -> Vec<Hop> {
        let (_, j) = self.ports[id as usize];
        let back = self.access.reverse_link(sim, access_delay);
        vec![Hop::Link(self.reverse[j as usize]), Hop::Link(back)]
    }

    fn access_mut(&mut self) -> &mut Access {
        &mut self.access
    }
}

pub fn build(s: &Scenario) -> Network {
    let spec = s.network.switch.as_ref().expect("the switch topology has network.switch");
    let window = MeasuredWindow { start: s.warmup, end: s.duration };
    let mut sim = Sim::new(window);
    let n = spec.ports;
    let emulating = matches!(spec.fabric, Fabric::Cioq { scheduler: SchedulerKind::OqEmulation, .. });
    // Under OQ emulation the switch itself holds each output's packets until their slot, so
    // its output lines never queue (module doc of `crate::switch`).
    let out_limit = match spec.output_buffer {
        Some(b) if !emulating => BufferLimit::Packets(b as u64),
        _ => BufferLimit::Unlimited,
    };
    let outputs: Vec<u32> = (0..n)
        .map(|j| {
            let mut link = Link::new(spec.rate, Time::ZERO, out_limit);
            // The event log is the summary port's only: it can hold millions of rows.
            let events = s.monitor.events_here() && j == spec.summary_port;
            link.attach_monitor(QueueMonitor::new(spec.rate, window, s.monitor.interval, events));
            sim.add_link(link)
        })
        .collect();
    let reverse =
        (0..n).map(|_| sim.add_link(Link::new(spec.rate, Time::ZERO, BufferLimit::Unlimited))).collect();
    let inputs: Vec<u32> = (0..n)
        .map(|_| {
            let mut link = Link::new(spec.rate, Time::ZERO, spec.mux_buffer);
            if spec.mux_buffer != BufferLimit::Unlimited {
                link.attach_monitor(QueueMonitor::new(spec.rate, window, s.monitor.interval, false));
            }
            sim.add_link(link)
        })
        .collect();
    let config = SwitchConfig {
        ports: n,
        rate: spec.rate,
        cell: spec.cell,
        fabric: spec.fabric,
        voq_limit: spec.voq_buffer,
        output_buffer: spec.output_buffer,
    };
    let switch = sim.add_switch(Switch::new(&config, Rng::stream(s.seed, Stream::Fabric, 0), window));

    let mut ports = Vec::with_capacity(s.total_flows() as usize);
    for (ti, t) in s.traffic.iter().enumerate() {
        let shuffle = |i: usize| Rng::stream(s.seed, Stream::Topology, ((ti as u64) << 16) | i as u64);
        ports.extend(assign_ports(t.flows(), n, &spec.load, shuffle));
    }
    let paths = Paths {
        access: Access { rate: s.network.access_rate, buffer: s.network.access_buffer },
        switch,
        inputs: inputs.clone(),
        outputs: outputs.clone(),
        reverse,
        ports: ports.clone(),
    };
    let bumps = Bumps::new(&mut sim, s, |_| None);
    add_traffic(&mut sim, s, paths, bumps);
    let monitored = outputs
        .iter()
        .enumerate()
        .map(|(j, &link)| MonitoredLink { name: format!("output{}", j + 1), link })
        .collect();
    let switch = Some(SwitchNet { id: switch, inputs, flow_ports: ports });
    Network { sim, monitored, summary: spec.summary_port, switch, events_bump: None }
}

/// The (input, output) of each of an entry's `flows` flows. Flow k enters at input k mod N.
/// Input i's flows are split over the outputs in proportion to its load row, rounded down,
/// and the flows left over go to the outputs with the largest remainders; equal remainders
/// (uniform load) go in turn from one input to the next, so that with uniform and diagonal
/// load every output gets the same number of flows, ±1 (thesis §3.1: 100 % load on every
/// output). Which of input i's flows goes to which output is shuffled by `shuffle(i)`.
pub fn assign_ports(flows: u32, n: usize, load: &Load, shuffle: impl Fn(usize) -> Rng) -> Vec<(u32, u32)> {
    let mut by_input: Vec<Vec<u32>> = Vec::with_capacity(n);
    let mut turn = 0;
    for i in 0..n {
        let share = flows as usize / n + usize::from(i < flows as usize % n);
        let w = load.row(i, n);
        let total: f64 = w.iter().sum();
        let exact: Vec<f64> = w.iter().map(|x| share as f64 * x / total).collect();
        let mut counts: Vec<usize> = exact.iter().map(|x| x.floor() as usize).collect();
        let rest = share - counts.iter().sum::<usize>();
        // Remainders compared to 1e-9, so that equal shares computed alike tie exactly.
        let key = |j: usize| (-((exact[j] - counts[j] as f64) * 1e9).round() as i64, (j + n - turn) % n);
        let mut order: Vec<usize> = (0..n).filter(|&j| w[j] > 0.0).collect();
        order.sort_by_key(|&j| key(j));
        for &j in order.iter().take(rest) {
            counts[j] += 1;
        }
        turn = (turn + rest) % n;
        let mut outs: Vec<u32> = (0..n).flat_map(|j| std::iter::repeat_n(j as u32, counts[j])).collect();
        let mut rng = shuffle(i);
        for a in (1..outs.len()).rev() {
            let b = rng.range_u64(0, a as u64) as usize;
            outs.swap(a, b);
        }
        by_input.push(outs);
    }
    (0..flows as usize).map(|k| ((k % n) as u32, by_input[k % n][k / n])).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn per_output(ports: &[(u32, u32)], n: usize) -> Vec<usize> {
        let mut c = vec![0; n];
        ports.iter().for_each(|&(_, j)| c[j as usize] += 1);
        c
    }

    fn rng(i: usize) -> Rng {
        Rng::stream(1, Stream::Topology, i as u64)
    }

    #[test]
    fn uniform_load_puts_the_same_number_on_every_output() {
        // 490 per input: 61.25 per pair, so two outputs per input get 62, in turn.
        let ports = assign_ports(8 * 490, 8, &Load::Uniform, rng);
        assert_eq!(per_output(&ports, 8), vec![490; 8]);
        assert!(ports.iter().enumerate().all(|(k, &(i, _))| i as usize == k % 8));
        let pair = |i, j| ports.iter().filter(|&&p| p == (i, j)).count();
        assert!((0..8).all(|i| (0..8).all(|j| (61..=62).contains(&pair(i, j)))));
        // Flows that do not divide evenly still spread within one.
        let c = per_output(&assign_ports(1001, 8, &Load::Uniform, rng), 8);
        assert!(c.iter().max().unwrap() - c.iter().min().unwrap() <= 1, "{c:?}");
    }

    #[test]
    fn diagonal_load_sends_two_thirds_to_the_next_output() {
        let ports = assign_ports(8 * 490, 8, &Load::Diagonal, rng);
        assert_eq!(per_output(&ports, 8), vec![490; 8]);
        let from0: Vec<u32> = ports.iter().filter(|p| p.0 == 0).map(|p| p.1).collect();
        assert_eq!(from0.iter().filter(|&&j| j == 1).count(), 327);
        assert_eq!(from0.iter().filter(|&&j| j == 2).count(), 163);
    }

    #[test]
    fn a_weight_matrix_is_followed_and_the_shuffle_comes_from_the_seed() {
        let m = Load::Matrix(vec![1.0, 3.0, 0.0, 1.0]);
        let ports = assign_ports(400, 2, &m, rng);
        assert_eq!(ports.iter().filter(|&&p| p == (0, 0)).count(), 50);
        assert_eq!(ports.iter().filter(|&&p| p == (0, 1)).count(), 150);
        assert_eq!(ports.iter().filter(|&&p| p == (1, 1)).count(), 200);
        let other = assign_ports(400, 2, &m, |i| Rng::stream(2, Stream::Topology, i as u64));
        assert_ne!(ports, other, "another seed shuffles differently");
        assert_eq!(ports, assign_ports(400, 2, &m, rng));
    }
}
