//! Topology builders: scenario → links, routes and flows in a [`crate::sim::Sim`].
//!
//! Read first: [`crate::sim`] (what a built network is made of) and [`crate::scenario`]. Owns
//! turning a scenario into links, routes, flows and monitors; must not run anything or know the
//! event loop's insides (it only calls the simulator's building API).
//!
//! - [`graph`]: every topology but the switch — the scenario's graph of links (a general
//!   network, or a shape: the dumbbell, the parking lot, the tree of thesis Fig 5.1, the
//!   layered network of Fig 5.2), each flow on its route.
//! - [`switch`]: the N×N router of thesis ch. 3 behind multiplexing routers (Fig 3.1).
//! - `flows`: what both share — flows with their own access links and RTTs, endpoints by
//!   traffic kind, open-loop arrivals; a topology supplies only the routes.

mod bumps;
mod flows;
pub mod graph;
pub mod switch;

use crate::autosize::AutoSizer;
use crate::link::Link;
use crate::monitor::trace::FlowTracer;
use crate::monitor::EventSink;
use crate::queue::{self, LinkInfo};
use crate::rng::{Rng, Stream};
use crate::scenario::{LinkSpec, Scenario, Topology};
use crate::sim::Sim;
use crate::units::BufferLimit;

/// A link whose queue is monitored, for the results' `links` table.
#[derive(Clone, Debug)]
pub struct MonitoredLink {
    /// Its name: "bottleneck" on the dumbbell, "hop1", "hop2", … on the parking lot, the
    /// link's name on a graph ("r2->r1" on a tree), "output1", … on the switch.
    pub name: String,
    pub link: u32,
}

/// A built network: the simulator and the links it monitors.
pub struct Network {
    pub sim: Sim,
    /// The monitored links, the rows of the links table: the dumbbell's bottleneck, the parking
    /// lot's hops in path order, a graph's monitored links in entry order, the switch's outputs.
    pub monitored: Vec<MonitoredLink>,
    /// Index in `monitored` of the link the run summary, the time series and the event log
    /// describe.
    pub summary: usize,
    /// The switch topology's router and what the results need to know about it.
    pub switch: Option<SwitchNet>,
    /// The bump whose queue the event log records (`monitor.events_at`): its link and name;
    /// None: the summary link's.
    pub events_bump: Option<(u32, String)>,
}

/// The router of a switch topology (its output lines are the monitored links, in port order).
#[derive(Clone, Debug)]
pub struct SwitchNet {
    /// Index in `Sim::switches`.
    pub id: u32,
    /// Each input's line from its multiplexing router.
    pub inputs: Vec<u32>,
    /// (input, output) of every flow, by flow id.
    pub flow_ports: Vec<(u32, u32)>,
}

impl Network {
    /// The link the run summary describes.
    pub fn summary_link(&self) -> u32 {
        self.monitored[self.summary].link
    }

    /// The link whose queue the event log records: the summary link, or a bump's.
    pub fn events_link(&self) -> u32 {
        self.events_bump.as_ref().map_or(self.summary_link(), |b| b.0)
    }

    /// Streams the event log to `sink` instead of keeping it in memory. False (and the sink
    /// unused) when the scenario does not record the log.
    pub fn stream_events(&mut self, sink: Box<dyn EventSink>) -> bool {
        let id = self.events_link() as usize;
        let link = &mut self.sim.links[id];
        match link.monitor_mut().and_then(|m| m.log.as_mut()) {
            Some(log) => {
                log.stream_to(sink);
                true
            }
            None => false,
        }
    }
}

/// Builds the scenario's network. With `[autosize]`, the auto-sizer owns the summary link's
/// limit: the link starts at `autosize.start` packets, and the first interval starts at the
/// end of warm-up.
pub fn build(s: &Scenario) -> Network {
    let mut net = match s.network.topology {
        Topology::Switch => switch::build(s),
        _ => graph::build(s),
    };
    if let (Some(e), true) = (s.monitor.events_at, s.monitor.events) {
        let site =
            net.sim.bumps.iter().find(|b| b.entry == e as u32).expect("the reader checks the bump exists");
        net.events_bump = Some((site.link, s.network.bumps[e].name.clone()));
    }
    if let Some(config) = &s.monitor.trace {
        net.sim.tracer = Some(Box::new(FlowTracer::new(config.clone())));
    }
    // The auto-sizer and timed changes read and set the summary link at the global time.
    if s.autosize.is_some() || !s.changes.is_empty() {
        let link = net.summary_link();
        net.sim.keep_on_global_clock(link);
    }
    if let Some(config) = &s.autosize {
        let link = net.summary_link();
        net.sim.links[link as usize].set_limit(BufferLimit::Packets(config.start));
        net.sim.autosize = Some(AutoSizer::new(link, config, s.warmup));
    }
    net
}

/// Gives link `hop` (its row in the links table, counted from 0) of scenario `s` the queue
/// discipline of its spec, drawing from that hop's own stream and counting from the measured
/// window.
fn set_queue(link: &mut Link, spec: &LinkSpec, s: &Scenario, hop: usize) {
    let q = &spec.queue;
    let info = LinkInfo {
        rate: spec.rate,
        delay: spec.delay,
        limit: spec.buffer,
        packet: q.packet,
        largest: q.largest,
    };
    link.set_queue(queue::build(q.name, &q.values, info, Rng::stream(s.seed, Stream::Queue, hop as u64)));
    if let Some(optical) = link.optical_mut() {
        optical.count_from(s.warmup);
    }
    link.count_aqm_from(s.warmup);
}
