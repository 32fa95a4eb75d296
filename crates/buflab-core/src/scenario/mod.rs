//! Scenarios: a tree of keys (TOML file or Python dict, passed as JSON) → a validated
//! [`Scenario`] with units parsed → a built network (see [`crate::topology`]).
//!
//! Every key and its default is in [`schema::KEYS`]; `docs/scenario.md` is generated from it.

pub mod queue;
pub mod reader;
pub mod schema;
pub mod switch;

use std::ops::RangeInclusive;

use serde_json::{Map, Value};

use queue::read_queue;
pub use queue::QueueSpec;
use reader::{error, Table};
pub use reader::{Result, ScenarioError};
pub use switch::{Load, PerOutput, SwitchSpec};

use crate::autosize;
use crate::monitor::trace::{TraceConfig, TracedFlows};
use crate::queue::red::RedConfig;
use crate::tcp::cc::CcKind;
use crate::tcp::pacer::Pacing;
use crate::tcp::{Recovery, TcpConfig, HEADER_BYTES};
use crate::traffic::dist::Dist;
use crate::traffic::udp::UdpPattern;
use crate::units;
use crate::units::{BufferLimit, Range, Rate, Time};

#[derive(Clone, Debug)]
pub struct Scenario {
    pub name: String,
    pub seed: u64,
    pub duration: Time,
    pub warmup: Time,
    pub network: Network,
    pub monitor: Monitor,
    pub traffic: Vec<Traffic>,
    /// Per traffic entry: cross traffic (`path = "cross"`) rather than main traffic.
    pub cross: Vec<bool>,
    /// Per traffic entry: the hops its flows cross (on the dumbbell, the bottleneck: hop 0).
    pub spans: Vec<HopSpan>,
    /// The live auto-sizer (`[autosize]` with a target), or None.
    pub autosize: Option<autosize::Config>,
}

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
}

crate::names::names!(Topology { Dumbbell = "dumbbell", ParkingLot = "parking_lot", Switch = "switch" });

use Topology::{Dumbbell, ParkingLot, Switch};

/// Keys that only some topologies read, and which. The others reject them rather than
/// ignoring them, and [`Scenario::normalized`] fills in their defaults only where they apply.
const TOPOLOGY_KEYS: &[(&str, &str, &[Topology])] = &[
    ("network", "bottleneck", &[Dumbbell, ParkingLot]),
    ("network", "loss", &[Dumbbell, ParkingLot]),
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
    fn foreign_keys(self) -> Vec<(&'static str, &'static str)> {
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

/// What a bottleneck link is made of.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LinkSpec {
    pub rate: Rate,
    pub buffer: BufferLimit,
    /// One-way propagation delay.
    pub delay: Time,
    pub queue: QueueSpec,
}

/// The hops a traffic entry's flows cross, `first..=last`, counted from 0 (the user's hop 1
/// is 0 here).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HopSpan {
    pub first: usize,
    pub last: usize,
}

impl HopSpan {
    pub fn range(self) -> RangeInclusive<usize> {
        self.first..=self.last
    }
}

#[derive(Clone, Debug)]
pub struct Network {
    pub topology: Topology,
    /// The bottleneck links in path order: the dumbbell's one bottleneck, or the parking
    /// lot's hops, hop 1 first (on the switch, one output link: what every output is made of).
    pub hops: Vec<LinkSpec>,
    /// Index in `hops` of the link the run summary, the time series and the event log describe.
    pub summary_hop: usize,
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
    pub loss: f64,
    /// The switch topology's router; None on the others.
    pub switch: Option<SwitchSpec>,
}

impl Network {
    /// The bottleneck the run summary describes: the dumbbell's one link, the parking lot's
    /// summary hop (on the switch, an output link).
    pub fn bottleneck(&self) -> &LinkSpec {
        &self.hops[self.summary_hop]
    }
}

#[derive(Clone, Debug)]
pub struct Monitor {
    pub interval: Time,
    pub events: bool,
    /// Per-flow TCP traces; None when no flow is traced.
    pub trace: Option<TraceConfig>,
}

#[derive(Clone, Debug)]
pub enum Traffic {
    LongLived(LongLived),
    ClosedLoop(ClosedLoop),
    OpenLoop(OpenLoop),
    Udp(Udp),
}

/// Flows arriving as a Poisson process, each downloading one file over a new connection.
#[derive(Clone, Debug)]
pub struct OpenLoop {
    pub tcp: TcpConfig,
    pub jitter: Time,
    pub handshake: bool,
    /// File sizes, bytes.
    pub file_size: Dist,
    pub arrivals_per_s: f64,
    /// When arrivals begin.
    pub start: Time,
}

/// When the users of a closed-loop entry make their first request.
#[derive(Clone, Copy, Debug)]
pub enum Starts {
    /// Drawn uniformly from the range, per user.
    Uniform(Range<Time>),
    /// Evenly spaced over the period: user k of n at k·period/n.
    Ramp(Time),
}

/// Harpoon-style users: request a file over a new connection, download it, think, repeat.
/// (`repeated_downloads` is the same with a constant file, no think time and a ramp.)
#[derive(Clone, Debug)]
pub struct ClosedLoop {
    pub users: u32,
    pub tcp: TcpConfig,
    pub start: Starts,
    pub jitter: Time,
    pub handshake: bool,
    /// File sizes, bytes.
    pub file_size: Dist,
    /// Think times, picoseconds.
    pub think: Dist,
    /// Read from a `repeated_downloads` entry.
    pub repeated: bool,
}

#[derive(Clone, Debug)]
pub struct LongLived {
    pub flows: u32,
    pub tcp: TcpConfig,
    pub start: Range<Time>,
    pub jitter: Time,
    /// On the switch, the flows per output when given as `flows_per_output` (resolved).
    pub per_output: Option<u32>,
}

#[derive(Clone, Debug)]
pub struct Udp {
    pub pattern: UdpPattern,
    pub flows: u32,
    pub rate: Rate,
    pub packet: u32,
    pub start: Range<Time>,
}

impl Traffic {
    pub fn kind(&self) -> &'static str {
        match self {
            Traffic::LongLived(_) => "long_lived",
            Traffic::ClosedLoop(c) if c.repeated => "repeated_downloads",
            Traffic::ClosedLoop(_) => "closed_loop",
            Traffic::OpenLoop(_) => "open_loop",
            Traffic::Udp(u) if u.pattern == UdpPattern::Poisson => "udp_poisson",
            Traffic::Udp(_) => "udp_cbr",
        }
    }
    pub fn flows(&self) -> u32 {
        match self {
            Traffic::LongLived(l) => l.flows,
            Traffic::ClosedLoop(c) => c.users,
            // Open-loop flows are added as they arrive.
            Traffic::OpenLoop(_) => 0,
            Traffic::Udp(u) => u.flows,
        }
    }
}

/// `monitor.trace_flows` and `monitor.trace_interval`: which flows to trace, checked against the
/// flows the scenario has (open-loop flows are added during the run, so with them any id is
/// accepted: a flow that never arrives has no rows).
fn read_trace(
    flows: &Value,
    interval: Time,
    total_flows: u64,
    open_loop: bool,
) -> Result<Option<TraceConfig>> {
    let key = "monitor.trace_flows";
    let expected = if open_loop {
        "\"all\" or an array of flow ids (whole numbers from 0)".to_string()
    } else {
        format!(
            "\"all\" or an array of flow ids from 0 to {} (the scenario has {total_flows} flows)",
            total_flows.saturating_sub(1)
        )
    };
    let traced = match flows {
        Value::String(s) if s == "all" => TracedFlows::All,
        Value::Array(items) => {
            let mut ids = Vec::with_capacity(items.len());
            for v in items {
                match v.as_u64() {
                    Some(id) if id < MAX_FLOWS && (open_loop || id < total_flows) => ids.push(id as u32),
                    _ => return Err(error(key, v, &expected)),
                }
            }
            ids.sort_unstable();
            ids.dedup();
            if ids.is_empty() {
                return Ok(None);
            }
            TracedFlows::Some(ids)
        }
        v => return Err(error(key, v, &expected)),
    };
    Ok(Some(TraceConfig { flows: traced, interval }))
}

/// Largest number of flows a scenario may ask for (flow ids are 32-bit; memory is the real limit).
const MAX_FLOWS: u64 = 10_000_000;

/// Largest number of parking-lot hops: a route holds at most 255 elements, and a data route
/// through k hops with random loss has 2k + 1.
const MAX_HOPS: u64 = 100;

impl Scenario {
    /// Parses and validates a scenario tree.
    pub fn from_value(v: &Value) -> Result<Scenario> {
        Self::read(v).map(|(s, _)| s)
    }

    /// Parses a scenario from JSON text.
    pub fn from_json(text: &str) -> Result<Scenario> {
        let v: Value = serde_json::from_str(text).map_err(|e| ScenarioError {
            key: String::new(),
            message: format!("scenario is not valid JSON: {e}"),
        })?;
        Self::from_value(&v)
    }

    /// Parses, also returning every (section, key) the reader asked for.
    pub fn read(v: &Value) -> Result<(Scenario, Vec<(&'static str, &'static str)>)> {
        let mut asked = Vec::new();
        let mut root = Table::root(v)?;
        let name = root.string("name")?;
        let seed = root.uint("seed", 0, u64::MAX)?;
        let duration = root.time("duration")?;
        let warmup = root.time("warmup")?;
        if duration == Time::ZERO {
            return Err(error(
                "duration",
                root.raw("duration").unwrap_or(&Value::Null),
                "a positive duration",
            ));
        }
        if warmup >= duration {
            let got = root.raw("warmup").cloned().unwrap_or(Value::Null);
            return Err(error("warmup", &got, &format!("a warm-up shorter than duration ({duration})")));
        }

        let mut net = root.table("network", "network")?;
        let topology: Topology = net.named("topology")?;
        reject_other_topology(&mut net, topology)?;
        let rtt = net.time_range("rtt")?;
        let rtt_value = net.value("rtt")?;
        let (bottleneck, red_base, loss, mut switch, cell) = match topology {
            Topology::Switch => {
                let mut sw = net.table("switch", "network.switch")?;
                let (spec, cell) = switch::read_switch(&mut sw)?;
                sw.finish(&mut asked)?;
                // The output links are the bottlenecks: what the summary's rate and buffer echo.
                let buffer =
                    spec.output_buffer.map_or(BufferLimit::Unlimited, |b| BufferLimit::Packets(b as u64));
                let link =
                    LinkSpec { rate: spec.rate, buffer, delay: Time::ZERO, queue: QueueSpec::DropTail };
                (link, None, 0.0, Some(spec), cell)
            }
            _ => {
                let (bottleneck, red) = read_bottleneck(&mut net, rtt, &mut asked)?;
                (bottleneck, Some(red), net.fraction("loss")?, None, None)
            }
        };
        // What an open-loop entry's `load` is a fraction of: `network.bottleneck.rate`, also on
        // the parking lot (on the switch, which refuses open-loop entries, its rate).
        let load_rate = bottleneck.rate;
        let (mut hops, summary_hop) = match topology {
            Topology::ParkingLot => {
                let red = red_base.expect("the parking lot reads network.bottleneck");
                read_hops(&mut net, bottleneck, red, &mut asked)?
            }
            _ => (vec![bottleneck], 0),
        };
        let mut acc = net.table("access", "network.access")?;
        reject_other_topology(&mut acc, topology)?;
        let access_rate = acc.rate("rate")?;
        let access_buffer = acc.buffer("buffer")?;
        let machines = acc.uint("machines", 0, MAX_FLOWS)? as u32;
        let classes = acc.uint("classes", 1, MAX_FLOWS)? as u32;
        let nic_rate = acc.rate("nic")?;
        acc.finish(&mut asked)?;
        let mut cr = net.table("cross", "network.cross")?;
        let (cross_rate, cross_buffer, cross_delay) =
            (cr.rate("rate")?, cr.buffer("buffer")?, cr.time("delay")?);
        if Time(cross_delay.0 * 2) > rtt.lo {
            let got = cr.value("delay")?;
            return Err(error(
                &cr.key_path("delay"),
                &got,
                &format!("at most half the smallest RTT ({})", rtt.lo),
            ));
        }
        cr.finish(&mut asked)?;
        net.finish(&mut asked)?;

        let mut mon = root.table("monitor", "monitor")?;
        let interval = mon.time("interval")?;
        if interval == Time::ZERO {
            return Err(error("monitor.interval", mon.raw("interval").unwrap(), "a positive duration"));
        }
        let events = mon.boolean("events")?;
        let trace_flows = mon.value("trace_flows")?;
        let trace_interval = mon.time("trace_interval")?;
        mon.finish(&mut asked)?;

        let mut traffic = Vec::new();
        let mut cross = Vec::new();
        let mut spans = Vec::new();
        let mut total_flows = 0u64;
        for (path, map) in root.array("traffic")? {
            let mut kind_t = Table::entry(path.clone(), "traffic", None, map);
            let kinds =
                ["long_lived", "closed_loop", "repeated_downloads", "open_loop", "udp_poisson", "udp_cbr"];
            let kind = kind_t.choice("kind", &kinds)?;
            reject_other_topology(&mut kind_t, topology)?;
            let mut per_output = None;
            let (is_cross, span) = match topology {
                Topology::Switch => {
                    if kind == "open_loop" {
                        let got = kind_t.value("kind")?;
                        let expected = "a kind with a fixed number of flows on the switch (open-loop flows \
                                        come and go, and each needs its input and output when built)";
                        return Err(error(&kind_t.key_path("kind"), &got, expected));
                    }
                    let spec = switch.as_ref().expect("the switch topology has a switch");
                    let max = MAX_FLOWS / spec.ports as u64;
                    per_output = switch::read_per_output(&mut kind_t, kind, max)?
                        .map(|p| (p, spec.ports as u32, spec.rate, access_rate, rtt));
                    (false, HopSpan { first: 0, last: 0 })
                }
                Topology::Dumbbell => {
                    let is_cross = kind_t.choice("path", &["main", "cross"])? == "cross";
                    if is_cross && machines == 0 {
                        let got = kind_t.value("path")?;
                        let expected = "\"main\" unless network.access.machines > 0 (cross traffic shares a machine's NIC link)";
                        return Err(error(&kind_t.key_path("path"), &got, expected));
                    }
                    (is_cross, HopSpan { first: 0, last: 0 })
                }
                Topology::ParkingLot => {
                    let span = read_span(&mut kind_t, hops.len())?;
                    let one_way = Time(hops[span.range()].iter().map(|h| h.delay.0).sum());
                    if Time(one_way.0 * 2) > rtt.lo {
                        let expected = format!(
                            "a smallest RTT of at least twice the one-way delay of the hops {path} crosses ({one_way})"
                        );
                        return Err(error("network.rtt", &rtt_value, &expected));
                    }
                    (false, span)
                }
            };
            cross.push(is_cross);
            spans.push(span);
            asked.extend(kind_t.asked());
            let entry = |section, shared| kind_table(path.clone(), section, shared, map);
            let t = match kind {
                "long_lived" => {
                    read_long_lived(entry("traffic.long_lived", Some("traffic.tcp")), per_output, &mut asked)?
                }
                "closed_loop" => {
                    read_closed_loop(entry("traffic.closed_loop", Some("traffic.tcp")), &mut asked)?
                }
                "open_loop" => {
                    read_open_loop(entry("traffic.open_loop", Some("traffic.tcp")), load_rate, &mut asked)?
                }
                "repeated_downloads" => read_repeated_downloads(
                    entry("traffic.repeated_downloads", Some("traffic.tcp")),
                    &mut asked,
                )?,
                pattern => read_udp(entry("traffic.udp", None), pattern, &mut asked)?,
            };
            total_flows += t.flows() as u64;
            traffic.push(t);
        }
        if total_flows > MAX_FLOWS {
            return Err(ScenarioError {
                key: "traffic".into(),
                message: format!("{total_flows} flows in all; expected at most {MAX_FLOWS}"),
            });
        }
        let open_loop = traffic.iter().any(|t| matches!(t, Traffic::OpenLoop(_)));
        let trace = read_trace(&trace_flows, trace_interval, total_flows, open_loop)?;
        if let Some(spec) = switch.as_mut() {
            // By default a cell is the largest data packet, so every data packet is one cell.
            spec.cell = cell.unwrap_or_else(|| traffic.iter().map(data_packet).max().unwrap_or(1000));
        }
        // RED's idle rule counts idle time in transmissions of a typical packet: the largest
        // data packet (see `crate::queue::red`).
        let typical = traffic.iter().map(data_packet).max().unwrap_or(1000);
        for hop in &mut hops {
            queue::set_typical_packet(&mut hop.queue, typical);
        }
        let link = hops[summary_hop];
        let bdp = || bdp_packets(link.rate, rtt, &traffic, &spans, summary_hop);
        let mut au = root.table("autosize", "autosize")?;
        if topology == Topology::Switch {
            if let Some(v) = au.raw("target_utilization") {
                let expected = "no auto-sizer on the switch topology (it sizes one link's buffer; \
                                size the switch's with a sweep over network.switch.voq_buffer or output_buffer)";
                return Err(error(&au.key_path("target_utilization"), v, expected));
            }
        }
        let autosize = read_autosize(&mut au, duration - warmup, bdp)?;
        au.finish(&mut asked)?;
        root.finish(&mut asked)?;

        let scenario = Scenario {
            name,
            seed,
            duration,
            warmup,
            network: Network {
                topology,
                hops,
                summary_hop,
                access_rate,
                access_buffer,
                machines,
                classes,
                nic_rate,
                cross_rate,
                cross_buffer,
                cross_delay,
                rtt,
                loss,
                switch,
            },
            monitor: Monitor { interval, events, trace },
            traffic,
            cross,
            spans,
            autosize,
        };
        Ok((scenario, asked))
    }

    /// Validates `v` and returns it with every documented key present, defaults filled in
    /// as a user would write them.
    pub fn normalized(v: &Value) -> Result<Value> {
        let scenario = Self::from_value(v)?;
        let foreign = &scenario.network.topology.foreign_keys();
        let mut out = v.clone();
        fill_defaults(&mut out, "", foreign);
        for section in ["network", "monitor"] {
            fill_defaults(&mut out[section], section, foreign);
        }
        if let Some(spec) = &scenario.network.switch {
            let sw = &mut out["network"]["switch"];
            fill_defaults(sw, "network.switch", foreign);
            // The cell defaults to a computed size, which the normalized tree states; keys
            // that do nothing for the scheduler are not filled in (they would be refused).
            sw["cell"] = Value::from(format!("{}B", spec.cell));
            let Some(map) = sw.as_object_mut() else { unreachable!("a validated switch table") };
            let scheduler = map["scheduler"].as_str().unwrap_or_default().to_string();
            let inapplicable: &[&str] = match scheduler.as_str() {
                "output_queued" => &["speedup", "voq_buffer", "iterations"],
                "oq_emulation" => &["voq_buffer", "iterations"],
                "islip" | "pim" => &[],
                _ => &["iterations"],
            };
            // (The user cannot have written them: validation refuses them.)
            for key in inapplicable {
                map.remove(*key);
            }
        } else {
            let bottleneck = &mut out["network"]["bottleneck"];
            fill_defaults(bottleneck, "network.bottleneck", foreign);
            queue::normalize(bottleneck);
        }
        fill_defaults(&mut out["network"]["access"], "network.access", foreign);
        if scenario.network.topology == Topology::Dumbbell {
            fill_defaults(&mut out["network"]["cross"], "network.cross", foreign);
        }
        if let Some(a) = &scenario.autosize {
            // `start` and `settle` default to computed values, which the normalized tree states.
            fill_defaults(&mut out["autosize"], "autosize", foreign);
            out["autosize"]["start"] = Value::from(a.start);
            out["autosize"]["settle"] = Value::from(exact_time(a.settle));
        }
        if let Some(items) = out["traffic"].as_array_mut() {
            for (item, t) in items.iter_mut().zip(&scenario.traffic) {
                let section = match t {
                    Traffic::LongLived(_) => "traffic.long_lived",
                    Traffic::ClosedLoop(c) if c.repeated => "traffic.repeated_downloads",
                    Traffic::ClosedLoop(_) => "traffic.closed_loop",
                    Traffic::OpenLoop(_) => "traffic.open_loop",
                    Traffic::Udp(_) => "traffic.udp",
                };
                fill_defaults(item, section, foreign);
                fill_defaults(item, "traffic", foreign);
                if !matches!(t, Traffic::Udp(_)) {
                    fill_defaults(item, "traffic.tcp", foreign);
                }
                if let Traffic::LongLived(LongLived { per_output: Some(n), .. }) = t {
                    // Flows were given per output (eq. 3.1 resolved to its count), not in all.
                    if let Some(map) = item.as_object_mut() {
                        map.remove("flows");
                        map.insert("flows_per_output".into(), Value::from(*n));
                    }
                }
            }
        }
        Ok(out)
    }

    pub fn total_flows(&self) -> u64 {
        self.traffic.iter().map(|t| t.flows() as u64).sum()
    }
}

/// A time as a unit string that reads back to exactly the same picoseconds.
fn exact_time(t: Time) -> String {
    let units = [("s", units::PS_PER_S), ("ms", 1_000_000_000), ("us", 1_000_000), ("ns", 1_000)];
    match units.iter().find(|(_, ps)| t.0.is_multiple_of(*ps)) {
        Some((unit, ps)) => format!("{}{unit}", t.0 / ps),
        None => format!("{}ps", t.0),
    }
}

/// Largest `autosize.start`, packets (a buffer far beyond any window the engine can run).
const MAX_AUTOSIZE_START: u64 = 1_000_000_000;

/// The `[autosize]` table: None without `target_utilization` (the auto-sizer is off, and its
/// other keys would do nothing, so they are an error).
fn read_autosize(
    t: &mut Table,
    measured: Time,
    bdp: impl FnOnce() -> u64,
) -> Result<Option<autosize::Config>> {
    if !t.present("target_utilization") {
        for key in ["interval", "settle", "start", "tolerance", "recheck"] {
            if let Some(v) = t.raw(key) {
                let expected = "no other `autosize` key without `autosize.target_utilization`, \
                                which turns the auto-sizer on";
                return Err(error(&t.key_path(key), v, expected));
            }
        }
        return Ok(None);
    }
    let target = t.positive_fraction("target_utilization")?;
    let tolerance = t.positive_fraction("tolerance")?;
    let interval = t.time("interval")?;
    if interval == Time::ZERO || interval > measured {
        let got = t.value("interval")?;
        let expected =
            format!("a positive time of at most duration − warmup ({measured}), so that one step fits");
        return Err(error(&t.key_path("interval"), &got, &expected));
    }
    // The default settling time is a third of the interval (1 s of the thesis's 3 s).
    let settle = if t.given("settle") { t.time("settle")? } else { Time(interval.0 / 3) };
    if settle >= interval {
        let got = t.value("settle")?;
        let expected = format!("a time shorter than autosize.interval ({interval})");
        return Err(error(&t.key_path("settle"), &got, &expected));
    }
    let start = if t.given("start") { t.uint("start", 1, MAX_AUTOSIZE_START)? } else { bdp().max(1) };
    let recheck = t.uint("recheck", 0, 1_000_000)? as u32;
    Ok(Some(autosize::Config { target, tolerance, interval, settle, start, recheck }))
}

/// RTT·C of a link in packets, rounded up: the mean of the RTT range × the link's rate ÷ the
/// packet size of the first long-lived traffic entry crossing it (1000 B if none), as
/// `buflab.theory.LinkFacts` reads it for `buflab size`.
fn bdp_packets(rate: Rate, rtt: Range<Time>, traffic: &[Traffic], spans: &[HopSpan], hop: usize) -> u64 {
    let packet = traffic
        .iter()
        .zip(spans)
        .find_map(|(t, span)| match t {
            Traffic::LongLived(l) if span.range().contains(&hop) => Some(l.tcp.packet),
            _ => None,
        })
        .unwrap_or(1000);
    let bits = rate.bits_per_s() as u128 * (rtt.lo.0 as u128 + rtt.hi.0 as u128);
    let per_packet = 2 * 8 * packet as u128 * units::PS_PER_S as u128;
    bits.div_ceil(per_packet).min(MAX_AUTOSIZE_START as u128) as u64
}

/// The `cdf` of an empirical distribution: `[value, probability]` pairs, values as unit
/// strings or plain numbers in `number_unit`s. A `file` must have been read by the front end.
fn read_cdf(
    d: &mut Table,
    parse: fn(&str) -> std::result::Result<f64, units::UnitError>,
    number_unit: f64,
) -> Result<Dist> {
    if d.present("file") && !d.present("cdf") {
        let got = d.value("file")?;
        let expected = "a file the `buflab` command or Python package reads into `cdf` (the engine alone reads no files)";
        return Err(error(&d.key_path("file"), &got, expected));
    }
    if let Some(file) = d.raw("file") {
        return Err(error(&d.key_path("file"), file, "either `cdf` or `file`, not both"));
    }
    let v = d.value("cdf")?;
    let path = d.key_path("cdf");
    let bad = |got: &Value, why: &str| error(&path, got, why);
    let items = v.as_array().ok_or_else(|| bad(&v, "an array of [value, probability] pairs"))?;
    let mut points = Vec::with_capacity(items.len());
    for item in items {
        let pair = item
            .as_array()
            .filter(|p| p.len() == 2)
            .ok_or_else(|| bad(item, "a [value, probability] pair"))?;
        let value = match &pair[0] {
            Value::String(s) => parse(s).map_err(|e| bad(item, &e.0))?,
            n => n
                .as_f64()
                .map(|x| x * number_unit)
                .ok_or_else(|| bad(item, "a value with a unit or a number"))?,
        };
        let p = pair[1].as_f64().ok_or_else(|| bad(item, "a probability between 0 and 1"))?;
        points.push((value, p));
    }
    Dist::empirical(points).map_err(|why| bad(&v, &why))
}

/// Inserts the documented default of every absent key of `section` into `table`, except the
/// `foreign` keys (those of the other topology).
fn fill_defaults(table: &mut Value, section: &str, foreign: &[(&str, &str)]) {
    if table.is_null() {
        *table = Value::Object(Default::default());
    }
    let Some(map) = table.as_object_mut() else { return };
    for k in schema::section(section) {
        if foreign.contains(&(section, k.key)) {
            continue;
        }
        if k.default != schema::REQUIRED && !map.contains_key(k.key) {
            if let Ok(v) = serde_json::from_str::<Value>(k.default) {
                map.insert(k.key.to_string(), v);
            }
        }
    }
}

/// Rejects the keys of `t` that belong to the other topology, naming the topology they are for.
fn reject_other_topology(t: &mut Table, topology: Topology) -> Result<()> {
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

/// The parking lot's hops, `network.hops` copies of the bottleneck with the
/// `[[network.hop]]` overrides, and the summary hop (counted from 0).
fn read_hops(
    net: &mut Table,
    bottleneck: LinkSpec,
    red: RedConfig,
    asked: &mut Vec<(&'static str, &'static str)>,
) -> Result<(Vec<LinkSpec>, usize)> {
    let k = net.uint("hops", 1, MAX_HOPS)? as usize;
    let mut hops = vec![bottleneck; k];
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
        let inherit = (matches!(bottleneck.queue, QueueSpec::Red(_)), red);
        hops[i].queue = read_queue(&mut h, Some(inherit), hops[i].buffer)?.0;
        h.finish(asked)?;
    }
    let summary_hop = net.uint("summary_hop", 1, k as u64)? as usize - 1;
    Ok((hops, summary_hop))
}

/// The hops a parking-lot traffic entry crosses (`hops`, counted from 1): one hop, a range
/// `a..b` with both ends included, or "all".
fn read_span(t: &mut Table, k: usize) -> Result<HopSpan> {
    let v = t.value("hops")?;
    let hop = |h: u64| Some(h as usize).filter(|h| (1..=k).contains(h));
    let parse = |s: &str| s.trim().parse::<u64>().ok().and_then(hop);
    let span = match &v {
        Value::String(s) if s.trim() == "all" => Some((1, k)),
        Value::String(s) => match s.split_once("..") {
            Some((a, b)) => parse(a).zip(parse(b)).filter(|(a, b)| a <= b),
            None => parse(s).map(|h| (h, h)),
        },
        Value::Number(n) => n.as_u64().and_then(hop).map(|h| (h, h)),
        _ => None,
    };
    let (first, last) = span.ok_or_else(|| {
        let expected =
            format!("a hop from 1 to {k} (2 or \"2\"), a range \"a..b\" with 1 ≤ a ≤ b ≤ {k}, or \"all\"");
        error(&t.key_path("hops"), &v, &expected)
    })?;
    Ok(HopSpan { first: first - 1, last: last - 1 })
}

/// The table of a traffic entry's kind-specific keys; the keys every entry has (`kind`,
/// `path`, `hops`) were read from the entry's generic table.
fn kind_table<'a>(
    path: String,
    section: &'static str,
    shared: Option<&'static str>,
    map: &'a Map<String, Value>,
) -> Table<'a> {
    let mut t = Table::entry(path, section, shared, map);
    for key in ["kind", "path", "hops", "flows_per_output"] {
        t.consume(key);
    }
    t
}

/// The TCP keys shared by every TCP traffic kind (section `traffic.tcp`): the flow's
/// settings and its send jitter.
fn read_tcp(t: &mut Table) -> Result<(TcpConfig, Time)> {
    let recovery: Recovery = t.named("tcp")?;
    let packet = t.bytes("packet")?;
    if !(HEADER_BYTES as u64 + 1..=65_535).contains(&packet) {
        let got = t.value("packet")?;
        return Err(error(
            &t.key_path("packet"),
            &got,
            "a packet size from 41 B (40 B of headers) to 65535 B",
        ));
    }
    let mut tcp = TcpConfig::default_for(packet as u32, recovery);
    tcp.cc = t.named("cc")?;
    let max_window = t.bytes("max_window")?;
    let mss = tcp.mss() as u64;
    if max_window < mss {
        let got = t.value("max_window")?;
        return Err(error(
            &t.key_path("max_window"),
            &got,
            &format!("at least one segment ({mss} B of payload)"),
        ));
    }
    tcp.max_window = (max_window / mss).min(u32::MAX as u64 / 4) as u32;
    match t.raw("initial_window") {
        None => {}
        Some(Value::String(s)) if s == "rfc3390" => {}
        Some(v) => match v.as_u64() {
            Some(n) if n >= 1 && n <= u32::MAX as u64 => tcp.initial_window = n as u32,
            _ => {
                let expected = "a whole number of segments ≥ 1, or \"rfc3390\"";
                return Err(error(&t.key_path("initial_window"), v, expected));
            }
        },
    }
    tcp.min_rto = t.time("min_rto")?;
    tcp.delayed_ack = t.boolean("delayed_ack")?;
    tcp.delayed_ack_timeout = t.time("delayed_ack_timeout")?;
    if tcp.delayed_ack_timeout >= Time::from_ms(500) || tcp.delayed_ack_timeout == Time::ZERO {
        let got = t.value("delayed_ack_timeout")?;
        let expected = "a positive timeout under 500 ms (RFC 1122 §4.2.3.2)";
        return Err(error(&t.key_path("delayed_ack_timeout"), &got, expected));
    }
    tcp.pacing = t.named("pacing")?;
    tcp.ecn = t.boolean("ecn")?;
    tcp.ack_pacing = t.boolean("ack_pacing")?;
    if tcp.cc == CcKind::Bbr {
        check_bbr(t, &tcp)?;
    }
    let jitter = t.time("jitter")?;
    Ok((tcp, jitter))
}

/// What BBR does not combine with: another pacing (it always paces at its own rate) and ECN
/// (BBR v1 ignores ECN-Echo, so marks would neither slow it nor be dropped).
fn check_bbr(t: &mut Table, tcp: &TcpConfig) -> Result<()> {
    if tcp.pacing != Pacing::Off {
        let got = t.value("pacing")?;
        let expected = "\"off\" with cc = \"bbr\" (BBR always paces at its own rate; leave `pacing` out)";
        return Err(error(&t.key_path("pacing"), &got, expected));
    }
    if tcp.ecn {
        let got = t.value("ecn")?;
        let expected = "false with cc = \"bbr\" (BBR v1 does not respond to ECN marks)";
        return Err(error(&t.key_path("ecn"), &got, expected));
    }
    Ok(())
}

/// A long-lived entry. On the switch `per_output` carries its `flows_per_output` with the
/// switch's ports and rate, the access rate and the RTT range, which eq. 3.1 needs.
fn read_long_lived(
    mut t: Table,
    per_output: Option<(PerOutput, u32, Rate, Rate, Range<Time>)>,
    asked: &mut Vec<(&'static str, &'static str)>,
) -> Result<Traffic> {
    let given_flows = match per_output {
        None => Some(t.uint("flows", 1, MAX_FLOWS)? as u32),
        Some(_) => None,
    };
    let (tcp, jitter) = read_tcp(&mut t)?;
    let start = t.time_range("start")?;
    let path = t.key_path("flows_per_output");
    t.finish(asked)?;
    let (flows, per_output) = match (given_flows, per_output) {
        (Some(flows), _) => (flows, None),
        (None, Some((p, ports, rate, access, rtt))) => {
            let n = match p {
                PerOutput::Count(n) => n as u64,
                PerOutput::Eq31 => {
                    let mean_rtt = Time((rtt.lo.0 + rtt.hi.0) / 2);
                    let window = tcp.max_window as u64 * tcp.packet as u64;
                    switch::eq31_flows(rate, mean_rtt, switch::max_per_rtt(window, access, mean_rtt))
                }
            };
            let total = n * ports as u64;
            if total > MAX_FLOWS {
                let expected =
                    format!("at most {MAX_FLOWS} flows in all; eq. 3.1 gives {n} per output × {ports}");
                return Err(error(&path, &Value::from("eq3.1"), &expected));
            }
            (total as u32, Some(n as u32))
        }
        (None, None) => unreachable!("flows are read unless given per output"),
    };
    Ok(Traffic::LongLived(LongLived { flows, tcp, start, jitter, per_output }))
}

/// The data packet size of a traffic entry (wire bytes).
fn data_packet(t: &Traffic) -> u32 {
    match t {
        Traffic::LongLived(l) => l.tcp.packet,
        Traffic::ClosedLoop(c) => c.tcp.packet,
        Traffic::OpenLoop(o) => o.tcp.packet,
        Traffic::Udp(u) => u.packet,
    }
}

/// The dumbbell's and the parking lot's `network.bottleneck` (a parking lot's default hop).
/// Returns the link and the RED settings its hops inherit (the documented defaults when the
/// bottleneck is drop-tail).
fn read_bottleneck(
    net: &mut Table,
    rtt: Range<Time>,
    asked: &mut Vec<(&'static str, &'static str)>,
) -> Result<(LinkSpec, RedConfig)> {
    let mut bn = net.table("bottleneck", "network.bottleneck")?;
    if net.raw("bottleneck").is_none() {
        return Err(ScenarioError {
            key: "network.bottleneck".into(),
            message: "missing; expected a table such as { rate = \"100Mbps\", buffer = \"125pkt\" }".into(),
        });
    }
    let rate = bn.rate("rate")?;
    let buffer = bn.buffer("buffer")?;
    let delay = bn.time("delay")?;
    let (queue, red) = read_queue(&mut bn, None, buffer)?;
    if Time(delay.0 * 2) > rtt.lo {
        let got = bn.raw("delay").cloned().unwrap_or(Value::Null);
        return Err(error(
            &format!("{}.delay", bn.path()),
            &got,
            &format!("at most half the smallest RTT ({})", rtt.lo),
        ));
    }
    bn.finish(asked)?;
    Ok((LinkSpec { rate, buffer, delay, queue }, red))
}

fn read_closed_loop(mut t: Table, asked: &mut Vec<(&'static str, &'static str)>) -> Result<Traffic> {
    let users = t.uint("users", 1, MAX_FLOWS)? as u32;
    let (tcp, jitter) = read_tcp(&mut t)?;
    let start = t.time_range("start")?;
    let handshake = t.boolean("handshake")?;
    // Plain numbers in an empirical CDF are bytes for sizes and seconds for times.
    let file_size =
        read_dist_key(&mut t, "file_size", |s| units::parse_bytes(s).map(|b| b as f64), 1.0, asked)?;
    let think = read_dist_key(&mut t, "think", |s| units::parse_time(s).map(|x| x.0 as f64), 1e12, asked)?;
    t.finish(asked)?;
    let start = Starts::Uniform(start);
    Ok(Traffic::ClosedLoop(ClosedLoop {
        users,
        tcp,
        start,
        jitter,
        handshake,
        file_size,
        think,
        repeated: false,
    }))
}

fn read_open_loop(
    mut t: Table,
    bottleneck: Rate,
    asked: &mut Vec<(&'static str, &'static str)>,
) -> Result<Traffic> {
    let (tcp, jitter) = read_tcp(&mut t)?;
    let handshake = t.boolean("handshake")?;
    let file_size =
        read_dist_key(&mut t, "file_size", |s| units::parse_bytes(s).map(|b| b as f64), 1.0, asked)?;
    let start = t.time("start")?;
    let arrivals_per_s = match (t.raw("arrivals").is_some(), t.raw("load").is_some()) {
        (true, false) => t.number_between("arrivals", 0.0, 1e12)?,
        (false, true) => {
            // The definition: load = arrival rate × mean size ÷ capacity.
            let load = t.number_between("load", 0.0, 1000.0)?;
            load * bottleneck.bits_per_s() as f64 / (8.0 * file_size.mean())
        }
        (both, _) => {
            let key = if both { "load" } else { "arrivals" };
            let got = t.raw(key).cloned().unwrap_or(Value::Null);
            return Err(error(&t.key_path(key), &got, "exactly one of `arrivals` (per second) or `load`"));
        }
    };
    t.finish(asked)?;
    Ok(Traffic::OpenLoop(OpenLoop { tcp, jitter, handshake, file_size, arrivals_per_s, start }))
}

fn read_repeated_downloads(mut t: Table, asked: &mut Vec<(&'static str, &'static str)>) -> Result<Traffic> {
    let users = t.uint("users", 1, MAX_FLOWS)? as u32;
    // This kind documents its own max_window default (16 KB), which read_tcp picks up.
    let (tcp, jitter) = read_tcp(&mut t)?;
    let start = Starts::Ramp(t.time("ramp")?);
    let file_size = Dist::Constant(t.bytes("file_size")?.max(1) as f64);
    t.finish(asked)?;
    let think = Dist::Constant(0.0);
    Ok(Traffic::ClosedLoop(ClosedLoop {
        users,
        tcp,
        start,
        jitter,
        handshake: true,
        file_size,
        think,
        repeated: true,
    }))
}

/// Reads the distribution under `key` (a table, or the key's documented default), with
/// values parsed by `parse` (sizes in bytes or times in picoseconds).
fn read_dist_key(
    t: &mut Table,
    key: &'static str,
    parse: fn(&str) -> std::result::Result<f64, units::UnitError>,
    number_unit: f64,
    asked: &mut Vec<(&'static str, &'static str)>,
) -> Result<Dist> {
    let path = t.key_path(key);
    let v = t.value(key)?;
    let Value::Object(map) = &v else {
        return Err(error(&path, &v, "a table such as { dist = \"exponential\", mean = \"1s\" }"));
    };
    let mut d = Table::entry(path, "distribution", None, map);
    let dist = match d
        .choice("dist", &["pareto", "exponential", "lognormal", "uniform", "constant", "empirical"])?
    {
        "empirical" => read_cdf(&mut d, parse, number_unit)?,
        "pareto" => {
            Dist::Pareto { mean: d.unit("mean", parse)?, shape: d.number_between("shape", 1.0, 100.0)? }
        }
        "exponential" => Dist::Exponential { mean: d.unit("mean", parse)? },
        "lognormal" => {
            Dist::Lognormal { mean: d.unit("mean", parse)?, sigma: d.number_between("sigma", 0.0, 100.0)? }
        }
        "uniform" => {
            let r = d.unit("range", |s| units::parse_range(s, parse))?;
            Dist::Uniform { lo: r.lo, hi: r.hi }
        }
        _ => Dist::Constant(d.unit("value", parse)?),
    };
    // Keys that belong to another kind of distribution are an error, not silently ignored.
    for other in ["mean", "shape", "sigma", "range", "value", "cdf", "file"] {
        if d.present(other) && !d.asked().any(|(_, k)| k == other) {
            let got = map[other].clone();
            return Err(error(&d.key_path(other), &got, "no such parameter for this `dist`"));
        }
    }
    d.finish(asked)?;
    Ok(dist)
}

fn read_udp(mut t: Table, pattern: &str, asked: &mut Vec<(&'static str, &'static str)>) -> Result<Traffic> {
    let flows = t.uint("flows", 1, MAX_FLOWS)? as u32;
    let rate = t.rate("rate")?;
    let packet = t.bytes("packet")?;
    if !(1..=65_535).contains(&packet) {
        let got = t.raw("packet").cloned().unwrap_or(Value::Null);
        return Err(error(&format!("{}.packet", t.path()), &got, "a packet size from 1 B to 65535 B"));
    }
    let start = t.time_range("start")?;
    t.finish(asked)?;
    let pattern = if pattern == "udp_poisson" { UdpPattern::Poisson } else { UdpPattern::Cbr };
    Ok(Traffic::Udp(Udp { pattern, flows, rate, packet: packet as u32, start }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    pub(super) fn base() -> Value {
        json!({
            "name": "t", "duration": "10s", "warmup": "2s",
            "network": { "bottleneck": { "rate": "100Mbps", "buffer": "125pkt" }, "rtt": "75ms..125ms" },
            "traffic": [ { "kind": "long_lived", "flows": 10 } ]
        })
    }

    pub(super) fn err(v: Value) -> String {
        Scenario::from_value(&v).unwrap_err().to_string()
    }

    #[test]
    fn reads_a_minimal_scenario_with_defaults() {
        let s = Scenario::from_value(&base()).unwrap();
        assert_eq!(s.network.bottleneck().rate, Rate::mbps(100));
        assert_eq!(s.network.bottleneck().buffer, BufferLimit::Packets(125));
        assert_eq!(s.network.access_rate, Rate::gbps(10));
        let Traffic::LongLived(l) = &s.traffic[0] else { panic!() };
        assert_eq!(l.tcp.packet, 1000);
        assert_eq!(l.tcp.max_window, 20_000_000 / 960);
        assert_eq!(l.tcp.recovery, Recovery::NewReno);
    }

    #[test]
    fn misspelt_key_gets_a_suggestion() {
        let mut v = base();
        v["network"]["botleneck"] = json!({});
        assert_eq!(err(v), "network.botleneck: unknown key; did you mean `bottleneck`?");
    }

    #[test]
    fn bad_values_name_key_value_and_expectation() {
        let mut v = base();
        v["network"]["bottleneck"]["rate"] = json!("-5Mbps");
        let e = err(v);
        assert!(e.starts_with("network.bottleneck.rate: got \"-5Mbps\"; expected a positive rate"), "{e}");

        let mut v = base();
        v["network"]["bottleneck"]["buffer"] = json!("ten");
        assert!(err(v).starts_with("network.bottleneck.buffer: got \"ten\"; expected a buffer"));

        let mut v = base();
        v["warmup"] = json!("20s");
        assert_eq!(err(v), "warmup: got \"20s\"; expected a warm-up shorter than duration (10s)");

        let mut v = base();
        v["traffic"][0]["flows"] = json!(0);
        assert!(err(v).starts_with("traffic.0.flows: got 0; expected a whole number from 1"));

        let mut v = base();
        v["traffic"][0]["kind"] = json!("bulk");
        assert!(err(v).starts_with("traffic.0.kind: got \"bulk\"; expected one of"));
    }

    #[test]
    fn cc_selects_the_window_algorithm_and_rejects_others() {
        let Traffic::LongLived(l) = &Scenario::from_value(&base()).unwrap().traffic[0] else { panic!() };
        assert_eq!(l.tcp.cc, CcKind::Reno, "reno by default");
        for (name, kind) in
            [("reno", CcKind::Reno), ("bic", CcKind::Bic), ("cubic", CcKind::Cubic), ("bbr", CcKind::Bbr)]
        {
            let mut v = base();
            v["traffic"][0]["cc"] = json!(name);
            let Traffic::LongLived(l) = &Scenario::from_value(&v).unwrap().traffic[0] else { panic!() };
            assert_eq!((l.tcp.cc, l.tcp.cc.name()), (kind, name));
        }
        let mut v = base();
        v["traffic"][0]["cc"] = json!("vegas");
        assert_eq!(
            err(v),
            "traffic.0.cc: got \"vegas\"; expected one of \"reno\", \"bic\", \"cubic\", \"bbr\""
        );
    }

    #[test]
    fn bbr_refuses_another_pacing_and_ecn_naming_both_keys() {
        let bbr = |key: &str, value: Value| {
            let mut v = base();
            v["traffic"][0]["cc"] = json!("bbr");
            v["traffic"][0][key] = value;
            v
        };
        for pacing in ["window", "linux"] {
            let expected = format!(
                "traffic.0.pacing: got \"{pacing}\"; expected \"off\" with cc = \"bbr\" (BBR always paces at its \
                 own rate; leave `pacing` out)"
            );
            assert_eq!(err(bbr("pacing", json!(pacing))), expected);
        }
        assert!(Scenario::from_value(&bbr("pacing", json!("off"))).is_ok());
        let e = err(bbr("ecn", json!(true)));
        assert_eq!(e, "traffic.0.ecn: got true; expected false with cc = \"bbr\" (BBR v1 does not respond to ECN marks)");
    }

    #[test]
    fn keys_of_another_traffic_kind_are_rejected() {
        let mut v = base();
        v["traffic"][0]["rate"] = json!("10Mbps");
        assert!(err(v).starts_with("traffic.0.rate: unknown key"));
    }

    #[test]
    fn normalized_fills_every_default_and_still_validates() {
        let n = Scenario::normalized(&base()).unwrap();
        assert_eq!(n["network"]["access"]["rate"], json!("10Gbps"));
        assert_eq!(n["traffic"][0]["tcp"], json!("newreno"));
        assert_eq!(n["monitor"]["events"], json!(false));
        Scenario::from_value(&n).unwrap();
    }

    #[test]
    fn normalized_fills_only_the_keys_of_its_topology() {
        let dumbbell = Scenario::normalized(&base()).unwrap();
        assert_eq!(dumbbell["network"]["cross"]["rate"], json!("1Gbps"));
        assert!(dumbbell["network"].get("hops").is_none() && dumbbell["traffic"][0].get("hops").is_none());

        let mut v = base();
        v["network"]["topology"] = json!("parking_lot");
        v["network"]["hops"] = json!(3);
        let lot = Scenario::normalized(&v).unwrap();
        assert_eq!(lot["network"]["summary_hop"], json!(1));
        assert_eq!(lot["traffic"][0]["hops"], json!("all"));
        assert!(lot["network"].get("cross").is_none() && lot["traffic"][0].get("path").is_none());
        assert!(lot["network"]["access"].get("machines").is_none());
        let s = Scenario::from_value(&lot).unwrap();
        assert_eq!(s.network.hops.len(), 3);
        assert_eq!(s.spans[0], HopSpan { first: 0, last: 2 });
    }

    #[test]
    fn autosize_is_off_without_a_target_and_reads_its_defaults_with_one() {
        assert_eq!(Scenario::from_value(&base()).unwrap().autosize, None);
        let mut v = base();
        v["autosize"] = json!({});
        assert_eq!(Scenario::from_value(&v).unwrap().autosize, None, "an empty table is off");
        v["autosize"] = json!({ "target_utilization": 0.98 });
        let a = Scenario::from_value(&v).unwrap().autosize.unwrap();
        // RTT·C: 100 Mb/s × 100 ms (the mean of 75..125 ms) ÷ 8000 bits = 1250 packets.
        let expected = autosize::Config {
            target: 0.98,
            tolerance: 0.995,
            interval: Time::from_secs(3),
            settle: Time::from_secs(1),
            start: 1250,
            recheck: 0,
        };
        assert_eq!(a, expected);
        // The normalized tree states the computed start; without [autosize] it has an empty table.
        let n = Scenario::normalized(&v).unwrap();
        assert_eq!((&n["autosize"]["start"], &n["autosize"]["settle"]), (&json!(1250), &json!("1s")));
        // A settling time that is no whole number of nanoseconds still reads back exactly.
        v["autosize"]["interval"] = json!("5s");
        let n = Scenario::normalized(&v).unwrap();
        assert_eq!(n["autosize"]["settle"], json!("1666666666666ps"));
        assert_eq!(Scenario::from_value(&n).unwrap().autosize.unwrap().settle, Time(5 * units::PS_PER_S / 3));
        assert_eq!(Scenario::normalized(&base()).unwrap()["autosize"], json!({}));
    }

    #[test]
    fn autosize_start_default_uses_the_summary_hop_and_its_packets() {
        // Parking lot, summary hop 2 at 20 Mb/s, 576-B packets on the entry crossing it:
        // 20e6 × 0.1 / (8 × 576) = 434.03 → 435.
        let mut v = base();
        v["network"]["topology"] = json!("parking_lot");
        v["network"]["hops"] = json!(2);
        v["network"]["summary_hop"] = json!(2);
        v["network"]["hop"] = json!([{}, { "rate": "20Mbps" }]);
        v["traffic"] = json!([
            { "kind": "long_lived", "hops": 1 },
            { "kind": "long_lived", "hops": "1..2", "packet": "576B" },
        ]);
        v["autosize"] = json!({ "target_utilization": 0.9 });
        assert_eq!(Scenario::from_value(&v).unwrap().autosize.unwrap().start, 435);
    }

    #[test]
    fn bad_autosize_keys_name_key_value_and_expectation() {
        let with = |table: Value| {
            let mut v = base();
            v["autosize"] = table;
            err(v)
        };
        assert_eq!(
            with(json!({ "target_utilization": 1.5 })),
            "autosize.target_utilization: got 1.5; expected a fraction above 0 and at most 1"
        );
        assert_eq!(
            with(json!({ "target_utilization": "99%" })),
            "autosize.target_utilization: got \"99%\"; expected a fraction above 0 and at most 1"
        );
        assert_eq!(
            with(json!({ "target_utilization": 0.9, "tolerance": 0 })),
            "autosize.tolerance: got 0; expected a fraction above 0 and at most 1"
        );
        // base(): 10 s with 2 s of warm-up leaves 8 s.
        assert_eq!(
            with(json!({ "target_utilization": 0.9, "interval": "9s" })),
            "autosize.interval: got \"9s\"; expected a positive time of at most duration − warmup (8s), so that one step fits"
        );
        assert!(with(json!({ "target_utilization": 0.9, "start": 0 }))
            .starts_with("autosize.start: got 0; expected a whole number from 1"));
        assert!(with(json!({ "target_utilization": 0.9, "recheck": -1 }))
            .starts_with("autosize.recheck: got -1; expected a whole number from 0"));
        assert_eq!(
            with(json!({ "target_utilization": 0.9, "interval": "2s", "settle": "2s" })),
            "autosize.settle: got \"2s\"; expected a time shorter than autosize.interval (2s)"
        );
        assert_eq!(
            with(json!({ "interval": "5s" })),
            "autosize.interval: got \"5s\"; expected no other `autosize` key without `autosize.target_utilization`, which turns the auto-sizer on"
        );
        assert_eq!(
            with(json!({ "target_utilisation": 0.9 })),
            "autosize.target_utilisation: unknown key; did you mean `target_utilization`?"
        );
        assert_eq!(
            with(json!({ "target": 0.9 })),
            "autosize.target: unknown key; expected one of: target_utilization, interval, settle, start, tolerance, recheck"
        );
        assert!(with(json!(0.9)).starts_with("autosize: got 0.9; expected a table"));
    }

    #[test]
    fn every_documented_key_is_read() {
        // A scenario with one traffic entry of each kind makes the reader ask for every key.
        let mut v = base();
        v["traffic"] = json!([
            { "kind": "long_lived" },
            { "kind": "udp_poisson", "rate": "1Mbps" },
            { "kind": "closed_loop", "file_size": { "dist": "lognormal", "mean": "10KB", "sigma": 0.5 } },
            { "kind": "closed_loop", "think": { "dist": "uniform", "range": "1s..2s" } },
            { "kind": "closed_loop", "think": { "dist": "constant", "value": "1s" } },
            { "kind": "closed_loop", "file_size": { "dist": "empirical", "cdf": [["1KB", 0.5], [2000, 1.0]] } },
            { "kind": "repeated_downloads", "users": 3, "ramp": "5s" },
            { "kind": "open_loop", "arrivals": 10 },
            { "kind": "open_loop", "load": 0.5 },
        ]);
        v["autosize"] = json!({ "target_utilization": 0.9, "start": 50 });
        let (_, mut asked) = Scenario::read(&v).unwrap();
        // And a parking lot, for the keys only it reads.
        let lot = json!({
            "network": {
                "topology": "parking_lot", "hops": 2, "bottleneck": { "rate": "10Mbps" },
                "hop": [ { "rate": "5Mbps", "buffer": "10pkt", "delay": "1ms" } ],
            },
            "traffic": [ { "kind": "long_lived", "hops": 2 } ],
        });
        asked.extend(Scenario::read(&lot).unwrap().1);
        // And switches: an iterating scheduler with every key, and flows given per output.
        let switch = json!({
            "network": {
                "topology": "switch",
                "switch": { "rate": "1Gbps", "scheduler": "islip", "iterations": 2, "cell": "1000B",
                            "voq_buffer": 5, "output_buffer": 20, "load": "diagonal",
                            "mux_buffer": "unlimited", "summary_port": 2, "speedup": 1.2, "ports": 4 },
            },
            "traffic": [ { "kind": "long_lived", "flows_per_output": "eq3.1" } ],
        });
        asked.extend(Scenario::read(&switch).unwrap().1);
        for k in schema::KEYS {
            assert!(asked.contains(&(k.section, k.key)), "schema key {}.{} is never read", k.section, k.key);
        }
    }
}
