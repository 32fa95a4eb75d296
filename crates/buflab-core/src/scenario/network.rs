//! The `network` section: the topology, the RTT range, the links (the dumbbell's bottleneck,
//! the parking lot's hops, a tree's or a layered network's routers, a general network's
//! nodes and links, or the switch), the access links and the cross link.
//!
//! Read first: [`super`] (how `Scenario::read` calls one reader per section) and
//! [`super::reader`] (typed key access, errors). Owns [`Network`], [`LinkSpec`], [`Topology`]
//! with the table of keys only some topologies read, and the readers of `network`,
//! `network.bottleneck`, `network.hop`, `network.tree`, `network.layered`, `network.access`
//! and `network.cross`; it hands `network.switch` to [`super::switch`], a general network's
//! nodes and links to [`super::graph`], each link's discipline to [`super::queue`], and has
//! [`super::shapes`] lay out every topology but the switch as a [`Graph`]. Must not know the
//! traffic beyond the one number that is filled in after it is read (the typical packet,
//! `ReadNetwork::finish`), nor how a topology is built from what it reads.

use serde_json::Value;

use super::bump::{read_bumps, BumpEntry};
use super::graph::{read_graph, read_summary_link, Graph, LinkDefaults};
use super::queue::{self, read_queue, QueueSpec};
use super::reader::{error, Asked, Result, ScenarioError, Table};
use super::shapes::{self, Shape};
use super::switch::{self, SwitchSpec};
use super::MAX_FLOWS;
use crate::units::{BufferLimit, Range, Rate, Time};

/// How the links are laid out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Topology {
    /// One bottleneck shared by every flow (see [`crate::topology::dumbbell`]).
    Dumbbell,
    /// Bottlenecks in series, each traffic entry crossing a run of them (see
    /// [`crate::topology::parking_lot`]).
    ParkingLot,
    /// The N×N router of thesis ch. 3 behind multiplexing routers (see
    /// [`crate::topology::switch`]).
    Switch,
    /// Named nodes and links, each flow on a route (see [`super::graph`]).
    Network,
    /// The tree of thesis Fig 5.1 ([`shapes::tree`]).
    Tree,
    /// The general network standing for thesis Fig 5.2 ([`shapes::layered`]).
    Layered,
}

crate::names::names!(Topology {
    Dumbbell = "dumbbell",
    ParkingLot = "parking_lot",
    Switch = "switch",
    Network = "network",
    Tree = "tree",
    Layered = "layered",
});

use Topology::{Dumbbell, Layered, ParkingLot, Switch, Tree};

/// The topologies whose flows follow routes through named nodes (traffic `route`, `from`,
/// `to`, `matrix`).
const GRAPHS: &[Topology] = &[Topology::Network, Tree, Layered];

/// Keys that only some topologies read, and which. The others reject them rather than
/// ignoring them, and [`Scenario::normalized`] fills in their defaults only where they apply.
const TOPOLOGY_KEYS: &[(&str, &str, &[Topology])] = &[
    ("network", "bottleneck", &[Dumbbell, ParkingLot, Topology::Network, Tree, Layered]),
    ("network", "loss", &[Dumbbell, ParkingLot, Tree, Layered]),
    ("network", "node", &[Topology::Network]),
    ("network", "link", &[Topology::Network]),
    ("network", "tree", &[Tree]),
    ("network", "layered", &[Layered]),
    ("network", "summary_link", GRAPHS),
    ("traffic", "route", GRAPHS),
    ("traffic", "from", GRAPHS),
    ("traffic", "to", GRAPHS),
    ("traffic", "matrix", GRAPHS),
    ("network", "cross", &[Dumbbell]),
    ("network.access", "machines", &[Dumbbell]),
    ("network.access", "classes", &[Dumbbell]),
    ("network.access", "nic", &[Dumbbell]),
    ("traffic", "path", &[Dumbbell]),
    ("network", "hops", &[ParkingLot]),
    ("network", "hop", &[ParkingLot]),
    ("network", "summary_hop", &[ParkingLot]),
    ("traffic", "hops", &[ParkingLot]),
    ("network", "switch", &[Switch]),
    ("traffic", "flows_per_output", &[Switch]),
];

impl Topology {
    /// The (section, key) pairs of other topologies, which this one rejects.
    pub(super) fn foreign_keys(self) -> Vec<(&'static str, &'static str)> {
        TOPOLOGY_KEYS
            .iter()
            .filter(|(_, _, owners)| !owners.contains(&self))
            .map(|&(s, k, _)| (s, k))
            .collect()
    }

    /// The topology as prose names it: "parking lot".
    fn prose(self) -> String {
        self.name().replace('_', " ")
    }
}

/// Rejects the keys of `t` that belong to the other topology, naming the topology they are for.
pub(super) fn reject_other_topology(t: &mut Table, topology: Topology) -> Result<()> {
    for (section, key) in topology.foreign_keys() {
        if section != t.section() {
            continue;
        }
        if let Some(v) = t.raw(key) {
            let owners = TOPOLOGY_KEYS.iter().find(|e| (e.0, e.1) == (section, key)).map_or(&[][..], |e| e.2);
            let expected = match (topology, owners) {
                (Dumbbell, [ParkingLot]) => format!(
                    "no `{key}` on the dumbbell: it is a parking-lot key (set network.topology = \"parking_lot\")"
                ),
                (ParkingLot, [Dumbbell]) => format!(
                    "no `{key}` on the parking lot: it is a dumbbell key (on the parking lot every flow has its own \
                     access link, and cross traffic is a traffic entry whose `hops` name the hops it crosses)"
                ),
                (Switch, _) if key == "bottleneck" => "no `bottleneck` on the switch: its output links are \
                     the bottlenecks, set in network.switch (rate, output_buffer)"
                    .to_string(),
                _ => {
                    let names: Vec<String> = owners.iter().map(|o| o.prose()).collect();
                    format!("no `{key}` on the {}: it is a {} key", topology.prose(), names.join(" and "))
                }
            };
            return Err(error(&t.key_path(key), v, &expected));
        }
    }
    Ok(())
}

/// What a bottleneck link is made of.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkSpec {
    pub rate: Rate,
    pub buffer: BufferLimit,
    /// One-way propagation delay.
    pub delay: Time,
    pub queue: QueueSpec,
}

#[derive(Clone, Debug)]
pub struct Network {
    pub topology: Topology,
    /// The monitored links, the rows of the `links` table: the dumbbell's one bottleneck, the
    /// parking lot's hops, hop 1 first, the monitored links of a graph in entry order (on the
    /// switch, one output link: what every output is made of).
    pub hops: Vec<LinkSpec>,
    /// Index in `hops` of the link the run summary, the time series and the event log describe.
    pub summary_hop: usize,
    /// Every topology but the switch as nodes and links (empty on the switch); `hops` are its
    /// monitored links.
    pub graph: Graph,
    /// The routes of flows whose entry names none (a tree's and a layered network's ingress;
    /// see [`Shape`]).
    pub ingress: Vec<Vec<u32>>,
    pub access_rate: Rate,
    pub access_buffer: BufferLimit,
    /// Server machines (0: a private access link per flow) and class queues per machine.
    pub machines: u32,
    pub classes: u32,
    pub nic_rate: Rate,
    /// The link cross traffic leaves by.
    pub cross_rate: Rate,
    pub cross_buffer: BufferLimit,
    pub cross_delay: Time,
    pub rtt: Range<Time>,
    /// The switch topology's router; None on the others.
    pub switch: Option<SwitchSpec>,
    /// Bumps in the wire, in entry order.
    pub bumps: Vec<BumpEntry>,
}

impl Network {
    /// The bottleneck the run summary describes: the dumbbell's one link, the parking lot's
    /// summary hop (on the switch, an output link).
    pub fn bottleneck(&self) -> &LinkSpec {
        &self.hops[self.summary_hop]
    }

    /// The graph link of the summary (None on the switch).
    pub fn summary_link(&self) -> Option<u32> {
        self.graph.monitored().get(self.summary_hop).copied()
    }

    /// Whether flows follow routes through named nodes (`network`, `tree`, `layered`).
    pub fn is_graph(&self) -> bool {
        GRAPHS.contains(&self.topology)
    }
}

/// Largest number of parking-lot hops: a route holds at most 255 elements, and a data route
/// through k hops with random loss has 2k + 1.
const MAX_HOPS: u64 = 100;

/// The network as read, before the traffic is: the traffic reader takes what it needs of it,
/// and `ReadNetwork::finish` fills in what depends on the traffic.
pub(super) struct ReadNetwork {
    pub network: Network,
    /// `network.rtt` as given (or its default), for the errors that blame it.
    pub rtt_value: Value,
    /// What an open-loop entry's `load` is a fraction of: `network.bottleneck.rate`, also on
    /// the parking lot (on the switch, which refuses open-loop entries, its rate).
    pub load_rate: Rate,
    /// `network.switch.cell` if given.
    cell: Option<u32>,
}

impl ReadNetwork {
    /// The network, with what depends on the traffic filled in from `typical`, the largest
    /// data packet of the traffic: the switch's default cell (so that every data packet is
    /// one cell) and the typical packet of RED's idle rule.
    pub fn finish(self, typical: u32) -> Network {
        let mut network = self.network;
        if let Some(spec) = network.switch.as_mut() {
            spec.cell = self.cell.unwrap_or(typical);
        }
        for hop in &mut network.hops {
            queue::set_typical_packet(&mut hop.queue, typical);
        }
        for link in &mut network.graph.links {
            queue::set_typical_packet(&mut link.spec.queue, typical);
        }
        network
    }
}

/// How the links are laid out, as read before the access and cross links are.
enum Layout {
    Switch(SwitchSpec, LinkSpec),
    Dumbbell(LinkSpec, f64),
    ParkingLot(Vec<LinkSpec>, usize, f64),
    /// A general network, a tree or a layered network.
    Graph(Shape),
}

/// Reads the `network` table.
pub(super) fn read(root: &mut Table, asked: &mut Asked) -> Result<ReadNetwork> {
    let mut net = root.table("network", "network")?;
    let topology: Topology = net.named("topology")?;
    reject_other_topology(&mut net, topology)?;
    let rtt = net.time_range("rtt")?;
    let rtt_value = net.value("rtt")?;
    let mut cell = None;
    let layout = match topology {
        Topology::Switch => {
            let mut sw = net.table("switch", "network.switch")?;
            let (spec, c) = switch::read_switch(&mut sw)?;
            sw.finish(asked)?;
            cell = c;
            // The output links are the bottlenecks: what the summary's rate and buffer echo.
            let buffer =
                spec.output_buffer.map_or(BufferLimit::Unlimited, |b| BufferLimit::Packets(b as u64));
            let link = LinkSpec { rate: spec.rate, buffer, delay: Time::ZERO, queue: QueueSpec::drop_tail() };
            Layout::Switch(spec, link)
        }
        Topology::Network => {
            let defaults = read_link_defaults(&mut net, asked)?;
            Layout::Graph(Shape { graph: read_graph(&mut net, &defaults, asked)?, ingress: Vec::new() })
        }
        _ => {
            let bottleneck = read_bottleneck(&mut net, rtt, asked)?;
            let loss = net.fraction("loss")?;
            match topology {
                Dumbbell => Layout::Dumbbell(bottleneck, loss),
                ParkingLot => {
                    let (hops, summary) = read_hops(&mut net, bottleneck, asked)?;
                    Layout::ParkingLot(hops, summary, loss)
                }
                Tree => Layout::Graph(read_tree(&mut net, &bottleneck, loss, asked)?),
                _ => Layout::Graph(read_layered(&mut net, &bottleneck, loss, asked)?),
            }
        }
    };
    let bump_hops = match &layout {
        Layout::ParkingLot(hops, ..) => hops.len(),
        _ => 1,
    };
    let mut acc = net.table("access", "network.access")?;
    reject_other_topology(&mut acc, topology)?;
    let access_rate = acc.rate("rate")?;
    let access_buffer = acc.buffer("buffer")?;
    let machines = acc.uint("machines", 0, MAX_FLOWS)? as u32;
    let classes = acc.uint("classes", 1, MAX_FLOWS)? as u32;
    let nic_rate = acc.rate("nic")?;
    acc.finish(asked)?;
    let (cross_rate, cross_buffer, cross_delay) = read_cross(&mut net, rtt, asked)?;
    let bumps = read_bumps(&mut net, topology, bump_hops, access_rate, machines, asked)?;
    let (shape, summary_hop, switch) = match layout {
        Layout::Switch(spec, link) => {
            // No graph: the switch builder lays out its own links; its summary is a port.
            let shape = Shape { graph: Graph::default(), ingress: Vec::new() };
            (shape, Err(link), Some(spec))
        }
        Layout::Dumbbell(bottleneck, loss) => {
            // Cross traffic needs server machines: only then has the dumbbell a cross link.
            let cross = LinkSpec {
                rate: cross_rate,
                buffer: cross_buffer,
                delay: cross_delay,
                queue: QueueSpec::drop_tail(),
            };
            (shapes::dumbbell(&bottleneck, loss, (machines > 0).then_some(&cross)), Ok(0), None)
        }
        Layout::ParkingLot(hops, summary, loss) => (shapes::parking_lot(&hops, loss), Ok(summary), None),
        Layout::Graph(shape) => {
            let row = read_summary_link(&mut net, &shape.graph)?;
            (shape, Ok(row), None)
        }
    };
    net.finish(asked)?;
    let (hops, summary_hop) = match summary_hop {
        Ok(row) => {
            let g = &shape.graph;
            (g.monitored().iter().map(|&l| g.links[l as usize].spec.clone()).collect(), row)
        }
        Err(switch_link) => (vec![switch_link], 0),
    };
    let load_rate = hops[summary_hop].rate;
    let network = Network {
        topology,
        hops,
        summary_hop,
        graph: shape.graph,
        ingress: shape.ingress,
        access_rate,
        access_buffer,
        machines,
        classes,
        nic_rate,
        cross_rate,
        cross_buffer,
        cross_delay,
        rtt,
        switch,
        bumps,
    };
    Ok(ReadNetwork { network, rtt_value, load_rate, cell })
}

/// `network.bottleneck` on a general network: every link's defaults, the table and its rate
/// optional.
fn read_link_defaults(net: &mut Table, asked: &mut Asked) -> Result<LinkDefaults> {
    let mut bn = net.table("bottleneck", "network.bottleneck")?;
    let rate = if bn.given("rate") { Some(bn.rate("rate")?) } else { None };
    let buffer = bn.buffer("buffer")?;
    let delay = bn.time("delay")?;
    let queue = read_queue(&mut bn, None, buffer)?;
    bn.finish(asked)?;
    Ok(LinkDefaults { rate, buffer, delay, queue })
}

/// `network.tree`: its depth and fanout; every router's link is made of `link`.
fn read_tree(net: &mut Table, link: &LinkSpec, loss: f64, asked: &mut Asked) -> Result<Shape> {
    let mut t = net.table("tree", "network.tree")?;
    let depth = t.uint("depth", 1, 32)?;
    let fanout = t.uint("fanout", 1, 64)?;
    let routers = shapes::tree_routers(depth, fanout);
    if routers > shapes::MAX_ROUTERS {
        let got = t.value("depth")?;
        let expected = format!(
            "a tree of at most {} routers (depth {depth} with fanout {fanout} has {routers})",
            shapes::MAX_ROUTERS
        );
        return Err(error(&t.key_path("depth"), &got, &expected));
    }
    t.finish(asked)?;
    Ok(shapes::tree(depth, fanout, link, loss))
}

/// `network.layered`: its stages and width; every router's links are made of `link`.
fn read_layered(net: &mut Table, link: &LinkSpec, loss: f64, asked: &mut Asked) -> Result<Shape> {
    let mut t = net.table("layered", "network.layered")?;
    let stages = t.uint("stages", 1, 16)?;
    let width = t.uint("width", 2, shapes::MAX_ROUTERS)?;
    let (routers, routes) = (stages * width, width << stages);
    if routers > shapes::MAX_ROUTERS || routes > shapes::MAX_LAYERED_ROUTES {
        let got = t.value("width")?;
        let expected = format!(
            "at most {} routers and {} routes (width × 2^stages); {stages} stages of {width} have {routers} and {routes}",
            shapes::MAX_ROUTERS,
            shapes::MAX_LAYERED_ROUTES
        );
        return Err(error(&t.key_path("width"), &got, &expected));
    }
    t.finish(asked)?;
    Ok(shapes::layered(stages, width, link, loss))
}

/// `network.cross`: the rate, buffer and delay of the link cross traffic leaves by.
fn read_cross(net: &mut Table, rtt: Range<Time>, asked: &mut Asked) -> Result<(Rate, BufferLimit, Time)> {
    let mut cr = net.table("cross", "network.cross")?;
    let (rate, buffer, delay) = (cr.rate("rate")?, cr.buffer("buffer")?, cr.time("delay")?);
    if Time(delay.0 * 2) > rtt.lo {
        let got = cr.value("delay")?;
        return Err(error(
            &cr.key_path("delay"),
            &got,
            &format!("at most half the smallest RTT ({})", rtt.lo),
        ));
    }
    cr.finish(asked)?;
    Ok((rate, buffer, delay))
}

/// The dumbbell's and the parking lot's `network.bottleneck` (a parking lot's default hop).
fn read_bottleneck(net: &mut Table, rtt: Range<Time>, asked: &mut Asked) -> Result<LinkSpec> {
    let mut bn = net.table("bottleneck", "network.bottleneck")?;
    if net.raw("bottleneck").is_none() {
        return Err(net.missing("bottleneck", "a table such as { rate = \"100Mbps\", buffer = \"125pkt\" }"));
    }
    let rate = bn.rate("rate")?;
    let buffer = bn.buffer("buffer")?;
    let delay = bn.time("delay")?;
    let queue = read_queue(&mut bn, None, buffer)?;
    if Time(delay.0 * 2) > rtt.lo {
        let got = bn.raw("delay").cloned().unwrap_or(Value::Null);
        return Err(error(
            &format!("{}.delay", bn.path()),
            &got,
            &format!("at most half the smallest RTT ({})", rtt.lo),
        ));
    }
    bn.finish(asked)?;
    Ok(LinkSpec { rate, buffer, delay, queue })
}

/// The parking lot's hops, `network.hops` copies of the bottleneck with the
/// `[[network.hop]]` overrides, and the summary hop (counted from 0).
fn read_hops(net: &mut Table, bottleneck: LinkSpec, asked: &mut Asked) -> Result<(Vec<LinkSpec>, usize)> {
    let k = net.uint("hops", 1, MAX_HOPS)? as usize;
    let mut hops = vec![bottleneck.clone(); k];
    let path = net.key_path("hop");
    let overrides = match net.raw("hop") {
        None => &[][..],
        Some(Value::Array(items)) => items.as_slice(),
        Some(other) => return Err(error(&path, other, "an array of tables ([[network.hop]] entries)")),
    };
    if overrides.len() > k {
        let n = overrides.len();
        let message =
            format!("got {n} entries; expected at most network.hops = {k} (entry i sets hop i + 1)");
        return Err(ScenarioError { key: path, message });
    }
    for (i, item) in overrides.iter().enumerate() {
        let entry_path = format!("{path}.{i}");
        let Value::Object(map) = item else {
            return Err(error(
                &entry_path,
                item,
                "a table such as { rate = \"10Mbps\", buffer = \"50pkt\" }",
            ));
        };
        let mut h = Table::entry(entry_path, "network.hop", None, map);
        // Each key defaults to the bottleneck's.
        if h.given("rate") {
            hops[i].rate = h.rate("rate")?;
        }
        if h.given("buffer") {
            hops[i].buffer = h.buffer("buffer")?;
        }
        if h.given("delay") {
            hops[i].delay = h.time("delay")?;
        }
        hops[i].queue = read_queue(&mut h, Some(&bottleneck.queue), hops[i].buffer)?;
        h.finish(asked)?;
    }
    let summary_hop = net.uint("summary_hop", 1, k as u64)? as usize - 1;
    Ok((hops, summary_hop))
}
