//! Scenarios: a tree of keys (TOML file or Python dict, passed as JSON) → a validated
//! [`Scenario`] with units parsed → a built network (see [`crate::topology`]).
//!
//! Read first: this file, then [`reader`] (a table's typed key access and its errors) and
//! [`schema`] (every key, its type, default and meaning; `docs/scenario.md` is generated from
//! it). [`Scenario::read`] reads the top-level keys and calls one reader per section, each in
//! its own file, in the order the sections depend on each other:
//!
//! - [`network`]: `network`, its bottleneck, hops, access and cross links ([`queue`]: a link's
//!   discipline; [`switch`]: the switch topology's router);
//! - [`monitor`]: `monitor`, with the traced flows checked once the traffic is known;
//! - [`traffic`]: every `[[traffic]]` entry and its TCP keys (`dist`: its distributions);
//! - `autosize`: `[autosize]` (the auto-sizer itself is [`crate::autosize`]).
//!
//! What the read sections mean together for the link the run summary describes and for each
//! traffic entry (the auto-sizer's default start, the numbers Python's sizing rules and load
//! model take) is computed once, in [`facts`].
//!
//! This file owns [`Scenario`], the top-level keys, the limits every section shares and the
//! normalized echo ([`Scenario::normalized`]). It must not know a section's keys: each
//! section's file reads them, and states what the echo leaves out or computes.

mod autosize;
pub mod bump;
pub mod change;
mod dist;
mod emulation;
pub mod facts;
pub mod graph;
pub mod monitor;
pub mod network;
pub mod queue;
pub mod reader;
pub mod schema;
pub mod shapes;
pub mod switch;
pub mod traffic;

use serde_json::Value;

use crate::units::Time;
pub(crate) use autosize::exact_time;
pub use bump::{BumpAt, BumpEntry};
pub use facts::{EntryFacts, LinkFacts, TrafficFacts};
pub use graph::{Graph, GraphLink, Route};
pub use monitor::Monitor;
pub use network::{LinkSpec, Network, Topology};
pub use queue::QueueSpec;
use reader::{error, Asked, Table};
pub use reader::{Result, ScenarioError};
pub use switch::{Load, PerOutput, SwitchSpec};
pub use traffic::{ClosedLoop, HopSpan, LongLived, OpenLoop, Placement, Starts, Traffic, TrafficKind, Udp};

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
    /// Per traffic entry: the routes its flows take through `network.graph` (none on the
    /// switch).
    pub placements: Vec<Placement>,
    /// Per traffic entry: how its flows draw their RTTs (its `rtt`, or `network.rtt`).
    pub rtts: Vec<crate::traffic::rtt::Rtt>,
    /// The live auto-sizer (`[autosize]` with a target), or None.
    pub autosize: Option<crate::autosize::Config>,
    /// What only an emulation uses (`[emulation]`).
    pub emulation: emulation::Emulation,
    /// Timed changes to the running experiment (`[[change]]`), in time order.
    pub changes: Vec<change::Change>,
    /// What the scenario and all its changes have set: a live session's further changes are
    /// checked against it ([`change::read_one`]).
    pub change_context: change::Context,
}

/// Largest number of flows a scenario may ask for (flow ids are 32-bit; memory is the real limit).
const MAX_FLOWS: u64 = 10_000_000;

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

    /// Parses, also returning every (section, key) the reader asked for. Errors come in the
    /// order the keys are read: the top-level keys, then each section in turn.
    pub fn read(v: &Value) -> Result<(Scenario, Asked)> {
        let mut asked = Asked::new();
        let mut root = Table::root(v)?;
        let (name, seed, duration, warmup) = read_run(&mut root)?;
        let net = network::read(&mut root, &mut asked)?;
        let monitor = monitor::read(&mut root, duration, &mut asked)?;
        let mut entries = traffic::read(&mut root, &net, &mut asked)?;
        let monitor = monitor.finish(&entries.traffic, &net.network.bumps)?;
        let mut network = net.finish(traffic::typical_packet(&entries.traffic));
        let monitored = network.graph.monitored();
        for (hop, spec) in network.hops.iter_mut().enumerate() {
            let sources = traffic::packet_sources(&entries, monitored.get(hop).copied());
            queue::check_traffic(&mut spec.queue, &sources)?;
        }
        // The graph's links are what the engine builds (`hops` are copies of its monitored
        // ones, for the reports): each learns the traffic that crosses it too.
        for (l, link) in network.graph.links.iter_mut().enumerate() {
            queue::check_traffic(&mut link.spec.queue, &traffic::packet_sources(&entries, Some(l as u32)))?;
        }
        let autosize = autosize::read(&mut root, &network, &entries, duration - warmup, &mut asked)?;
        let emulation = emulation::read(&mut root, &mut asked)?;
        // The senders' GSO limit is the hosts': the `linux` TCP models it in simulation too.
        for tcp in entries.traffic.iter_mut().filter_map(Traffic::tcp_mut) {
            tcp.gso_segments = emulation.gso_segments as u32;
        }
        let defaults = autosize::defaults(&network, &entries, duration - warmup);
        let mut change_context =
            change::Context::new(&network, &entries, duration, autosize.as_ref(), defaults);
        let changes = change::read(&mut root, &mut change_context, &mut asked)?;
        root.finish(&mut asked)?;
        let traffic::Entries { traffic, cross, placements, rtts } = entries;
        let scenario = Scenario {
            name,
            seed,
            duration,
            warmup,
            network,
            monitor,
            traffic,
            cross,
            placements,
            rtts,
            autosize,
            emulation,
            changes,
            change_context,
        };
        Ok((scenario, asked))
    }

    /// Validates `v` and returns it with every documented key present, defaults filled in
    /// as a user would write them.
    pub fn normalized(v: &Value) -> Result<Value> {
        Ok(Self::read_normalized(v)?.1)
    }

    /// The validated scenario and `normalized`'s tree, from one reading of `v` (each
    /// reading of a file of 100,000 traffic entries takes a second).
    pub fn read_normalized(v: &Value) -> Result<(Scenario, Value)> {
        let scenario = Self::from_value(v)?;
        let foreign = &scenario.network.topology.foreign_keys();
        let mut out = v.clone();
        fill_defaults(&mut out, "", foreign);
        for section in ["network", "monitor", "emulation"] {
            fill_defaults(&mut out[section], section, foreign);
        }
        if let Some(spec) = &scenario.network.switch {
            let sw = &mut out["network"]["switch"];
            fill_defaults(sw, "network.switch", foreign);
            switch::normalize(sw, spec);
        } else {
            let bottleneck = &mut out["network"]["bottleneck"];
            fill_defaults(bottleneck, "network.bottleneck", foreign);
            queue::normalize(bottleneck);
        }
        fill_defaults(&mut out["network"]["access"], "network.access", foreign);
        if scenario.network.topology == Topology::Dumbbell {
            fill_defaults(&mut out["network"]["cross"], "network.cross", foreign);
        }
        bump::normalize(&mut out["network"]["bump"], &scenario.network.bumps);
        if let Some(a) = &scenario.autosize {
            fill_defaults(&mut out["autosize"], "autosize", foreign);
            autosize::normalize(&mut out["autosize"], a);
        }
        if let Some(items) = out["traffic"].as_array_mut() {
            for (item, t) in items.iter_mut().zip(&scenario.traffic) {
                let kind = t.kind();
                traffic::normalize_tcp(item, t);
                fill_defaults(item, kind.section(), foreign);
                fill_defaults(item, "traffic", foreign);
                if let Some(shared) = kind.shared() {
                    fill_defaults(item, shared, foreign);
                }
                if let (Traffic::Udp(u), Some(map)) = (t, item.as_object_mut()) {
                    // A matrix's rows are its sources.
                    map.insert("flows".into(), Value::from(u.flows));
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
        Ok((scenario, out))
    }

    pub fn total_flows(&self) -> u64 {
        traffic::total_flows(&self.traffic)
    }
}

/// The top-level keys that describe the run: name, seed, duration and warm-up.
fn read_run(root: &mut Table) -> Result<(String, u64, Time, Time)> {
    let name = root.string("name")?;
    let seed = root.uint("seed", 0, u64::MAX)?;
    let duration = root.time("duration")?;
    let warmup = root.time("warmup")?;
    if duration == Time::ZERO {
        return Err(error("duration", root.raw("duration").unwrap_or(&Value::Null), "a positive duration"));
    }
    if warmup >= duration {
        let got = root.raw("warmup").cloned().unwrap_or(Value::Null);
        return Err(error("warmup", &got, &format!("a warm-up shorter than duration ({duration})")));
    }
    Ok((name, seed, duration, warmup))
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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::tcp::Recovery;
    use crate::units::{BufferLimit, Rate};

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
        // Hop j is link 2j of the parking lot's graph, its way back 2j + 1.
        assert_eq!(s.placements[0].routes, vec![Route { links: vec![0, 2, 4], back: vec![5, 3, 1] }]);
    }

    #[test]
    fn every_documented_key_is_read() {
        // A scenario with one traffic entry of each kind makes the reader ask for every key.
        let mut v = base();
        v["traffic"] = json!([
            { "kind": "long_lived" },
            { "kind": "long_lived", "rtt": { "dist": "choice", "values": ["100ms", "280ms"], "weights": [1, 2] } },
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
        // Bumps with every key: a pacer with its own keys and a virtual queue.
        v["network"]["bump"] = json!([
            { "name": "pacer", "at": "access", "rate": "10Gbps", "buffer": "100pkt", "delay": "3us",
              "classify": "flow", "pacer": "modified_token_bucket", "pace_rate": "measured", "window": 100,
              "depth": "4500B", "tick": "4.5us", "cap": "5us", "paced": "ecn_echo", "hold": "1ms",
              "vqueue": { "rate": "1Gbps", "size": "30KB", "threshold": "15KB", "action": "count" } },
            { "name": "rp", "at": "access", "pacer": "token_thread", "pace_rate": "qcn",
              "reaction_point": { "quantization": 1024, "byte_counter": "150KB", "timer": "15ms",
                                  "fast_recovery": 5, "r_ai": "5Mbps", "r_hai": "50Mbps",
                                  "min_rate": "10Mbps" } },
            { "name": "cp", "at": "bottleneck", "classify": "all",
              "congestion_point": { "q_eq": "9KB", "w": 2, "sample": 0.05 } },
        ]);
        v["monitor"] = json!({ "events": true, "events_at": "pacer" });
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
        // And timed changes, with every key of theirs.
        let mut changed = base();
        changed["change"] = json!([
            { "at": "1s", "traffic": 0, "flows": 3, "access_rate": "10Mbps", "pacing": "off", "cc": "cubic",
              "buffer": "10pkt", "target_utilization": 0.9 },
            { "at": "2s", "autosize": true },
        ]);
        asked.extend(Scenario::read(&changed).unwrap().1);
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
        // And the graph topologies: a network with every key of its nodes, links and routes,
        // a tree and a layered network.
        let network = json!({
            "network": {
                "topology": "network", "summary_link": "ab", "bottleneck": { "rate": "10Mbps" },
                "node": [{ "name": "a" }, "b", "c"],
                "link": [
                    { "from": "a", "to": "b", "name": "ab", "rate": "20Mbps", "buffer": "10pkt", "delay": "1ms",
                      "queue": "droptail", "loss": 0.001, "monitor": true, "duplex": true },
                    { "from": "b", "to": "c", "duplex": true },
                ],
            },
            "traffic": [
                { "kind": "long_lived", "route": ["a", "b", "c"] },
                { "kind": "long_lived", "from": "a", "to": "c" },
                { "kind": "udp_poisson", "matrix": [["a", "c", 2]], "load": 0.5 },
            ],
        });
        asked.extend(Scenario::read(&network).unwrap().1);
        for (topology, shape) in
            [("tree", json!({ "depth": 2, "fanout": 3 })), ("layered", json!({ "stages": 2, "width": 2 }))]
        {
            let v = json!({
                "network": { "topology": topology, topology: shape, "bottleneck": { "rate": "10Mbps" }, "loss": 0.0 },
                "traffic": [ { "kind": "udp_poisson", "rate": "1Mbps" } ],
            });
            asked.extend(Scenario::read(&v).unwrap().1);
        }
        for k in schema::keys() {
            assert!(asked.contains(&(k.section, k.key)), "schema key {}.{} is never read", k.section, k.key);
        }
    }
}
