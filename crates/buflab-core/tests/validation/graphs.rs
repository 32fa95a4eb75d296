//! General topologies: the named shapes are graphs like any other, and invariants hold on
//! random graphs.
//!
//! - The dumbbell and the parking lot, written out by hand as `topology = "network"` (their
//!   nodes, their links with the ACK links back, and each entry's route), give the same
//!   results to the last bit on random draws of the property tests' scenarios: one builder
//!   builds both, and a shape adds nothing but its rule. (That the shapes also give what the
//!   builders before the general one gave is `tests/golden.py`'s check.)
//! - On random graphs, trees and layered networks, drop-tail, RED, drop-head and BJP links
//!   alike: packets conserved, exactly-once delivery, queues within their limits (BJP holds
//!   at most its buffer), determinism, and computing ahead changing nothing.
//! - BJP's slack form (local synchronization) runs exactly as its time-stamp form.

use proptest::prelude::*;
use serde_json::{json, Value};

use super::properties::{
    check_computing_ahead_changes_nothing, check_invariants, same_results, small_parking_lot, small_scenario,
};

/// A dumbbell scenario written out as a network: nodes `left` and `right`, the bottleneck
/// between them (monitored, with the dumbbell's random loss) and its way back (unmonitored,
/// uncongested), and every entry routed left to right. Server machines, which only the
/// dumbbell has, are left out of the draw.
fn dumbbell_as_network(v: &Value) -> Value {
    let mut n = v.clone();
    let net = n["network"].as_object_mut().unwrap();
    let mut link = net.remove("bottleneck").unwrap();
    let loss = net.remove("loss").unwrap_or(json!(0.0));
    let back = json!({
        "from": "right", "to": "left", "name": "bottleneck back", "rate": link["rate"],
        "delay": link["delay"], "buffer": "unlimited", "monitor": false,
    });
    link["from"] = json!("left");
    link["to"] = json!("right");
    link["name"] = json!("bottleneck");
    link["loss"] = loss;
    for key in ["machines", "classes"] {
        net["access"].as_object_mut().unwrap().remove(key);
    }
    net.insert("topology".into(), json!("network"));
    net.insert("node".into(), json!(["left", "right"]));
    net.insert("link".into(), json!([link, back]));
    for entry in n["traffic"].as_array_mut().unwrap() {
        entry.as_object_mut().unwrap().remove("path");
        entry["route"] = json!(["left", "right"]);
    }
    n
}

/// A parking lot written out as a network: routers r0 … rk, hop j the link from r(j−1) to rj
/// (the bottleneck's settings with its `network.hop` override, the random loss), its way back
/// unmonitored and uncongested; an entry crossing hops a..b routed from r(a−1) to rb.
fn parking_lot_as_network(v: &Value) -> Value {
    let mut n = v.clone();
    let net = n["network"].as_object_mut().unwrap();
    let k = net.remove("hops").unwrap().as_u64().unwrap() as usize;
    let overrides = net.remove("hop").unwrap_or(json!([]));
    let bottleneck = net.remove("bottleneck").unwrap();
    let loss = net.remove("loss").unwrap_or(json!(0.0));
    let mut links = Vec::new();
    for j in 1..=k {
        let mut link = bottleneck.clone();
        if let Some(o) = overrides.get(j - 1).and_then(Value::as_object) {
            for (key, value) in o {
                link[key] = value.clone();
            }
        }
        let back = json!({
            "from": format!("r{j}"), "to": format!("r{}", j - 1), "name": format!("hop{j} back"),
            "rate": link["rate"], "delay": link["delay"], "buffer": "unlimited", "monitor": false,
        });
        link["from"] = json!(format!("r{}", j - 1));
        link["to"] = json!(format!("r{j}"));
        link["name"] = json!(format!("hop{j}"));
        link["loss"] = loss.clone();
        links.push(link);
        links.push(back);
    }
    net.insert("topology".into(), json!("network"));
    net.insert("node".into(), json!((0..=k).map(|j| format!("r{j}")).collect::<Vec<_>>()));
    net.insert("link".into(), json!(links));
    for entry in n["traffic"].as_array_mut().unwrap() {
        let hops = entry.as_object_mut().unwrap().remove("hops");
        let (first, last) = match hops.as_ref().map(|h| h.to_string().trim_matches('"').to_string()) {
            None => (1, k),
            Some(h) => match h.split_once("..") {
                Some((a, b)) => (a.parse().unwrap(), b.parse().unwrap()),
                None if h == "all" => (1, k),
                None => (h.parse().unwrap(), h.parse().unwrap()),
            },
        };
        entry["route"] = json!((first - 1..=last).map(|j| format!("r{j}")).collect::<Vec<_>>());
    }
    n
}

/// Random graphs of 2–6 nodes: a ring of links both ways (so every node reaches every other,
/// with a way back), and a few chords, each direction its own entry with its own rate,
/// buffer, delay and discipline. Long-lived TCP flows between random nodes by shortest route,
/// UDP Poisson sources by a load matrix at a random load factor, sometimes an explicit route
/// and open-loop arrivals.
fn small_graph() -> impl Strategy<Value = Value> {
    let link = (
        1u64..30,
        0u64..30,
        0u64..3,
        prop_oneof![Just("droptail"), Just("red"), Just("drop_head"), Just("bjp")],
    );
    (
        2usize..7,
        prop::collection::vec(link.clone(), 12),
        prop::collection::vec((0usize..6, 0usize..6), 0..4), // chords
        prop::collection::vec((0usize..6, 0usize..6, 1u32..3), 1..4), // TCP: from, to, flows
        prop::collection::vec((0usize..6, 0usize..6, 1u8..4), 0..4), // matrix rows
        prop_oneof![Just(0.3), Just(0.7), Just(0.95)],
        prop_oneof![Just("newreno"), Just("sack")],
        0u64..1000,
    )
        .prop_map(|(n, settings, chords, tcp, rows, load, variant, seed)| {
            let name = |i: usize| format!("n{}", i % n);
            let mut links = Vec::new();
            let make = |from: usize, to: usize, i: usize| {
                let (mbps, buffer, delay, queue) = settings[i % settings.len()];
                let mut l = json!({
                    "from": name(from), "to": name(to), "rate": format!("{mbps}Mbps"),
                    "buffer": format!("{buffer}pkt"), "delay": format!("{delay}ms"), "queue": queue,
                });
                if queue == "bjp" {
                    // D and Δ of 1 to 4 packet times, Δ ≤ D.
                    l["bjp_delay"] = json!(1 + buffer % 4);
                    l["bjp_jitter"] = json!(1 + buffer % 4 / 2);
                }
                if queue == "red" {
                    l["queue"] = json!(if buffer >= 3 { "red" } else { "droptail" });
                    if buffer >= 3 {
                        l["red_min_th"] = json!(1);
                        l["red_max_th"] = json!(buffer);
                    }
                }
                l
            };
            let mut used = std::collections::BTreeSet::new();
            for i in 0..n {
                let j = (i + 1) % n;
                if n == 2 && i == 1 {
                    break; // two nodes: one pair of links
                }
                links.push(make(i, j, 2 * i));
                links.push(make(j, i, 2 * i + 1));
                used.insert((i, j));
                used.insert((j, i));
            }
            for (c, &(a, b)) in chords.iter().enumerate() {
                let (a, b) = (a % n, b % n);
                if a != b && used.insert((a, b)) {
                    links.push(make(a, b, 5 + c));
                    if used.insert((b, a)) {
                        links.push(make(b, a, 7 + c));
                    }
                }
            }
            let mut traffic: Vec<Value> = tcp
                .iter()
                .filter(|(a, b, _)| a % n != b % n)
                .map(|&(a, b, flows)| {
                    json!({
                        "kind": "long_lived", "flows": flows, "from": name(a), "to": name(b), "tcp": variant,
                        "packet": "576B", "start": "0s..1s", "jitter": "50us",
                    })
                })
                .collect();
            if traffic.is_empty() {
                traffic.push(json!({
                    "kind": "long_lived", "route": [name(0), name(1)], "tcp": variant, "packet": "576B",
                    "jitter": "50us",
                }));
            }
            let matrix: Vec<Value> = rows
                .iter()
                .filter(|(a, b, _)| a % n != b % n)
                .map(|&(a, b, w)| json!([name(a), name(b), w]))
                .collect();
            if !matrix.is_empty() {
                traffic
                    .push(json!({ "kind": "udp_poisson", "matrix": matrix, "load": load, "packet": "500B" }));
            }
            if seed % 3 == 0 {
                traffic.push(json!({
                    "kind": "open_loop", "arrivals": 8, "route": [name(1), name(0)], "tcp": variant,
                    "packet": "576B", "file_size": { "dist": "pareto", "mean": "10KB", "shape": 1.5 },
                }));
            }
            json!({
                "duration": "4s", "warmup": "1s", "seed": seed,
                "network": {
                    "topology": "network", "node": (0..n).map(name).collect::<Vec<_>>(), "link": links,
                    "access": { "rate": "100Mbps" }, "rtt": "40ms..80ms",
                },
                "monitor": { "interval": "250ms" },
                "traffic": traffic,
            })
        })
}

/// Trees (depth 1–4, fanout 1–3) and layered networks (1–3 stages of 2–3 routers) with
/// Poisson ingress at a load factor and TCP flows on the default ingress routes.
fn small_shape() -> impl Strategy<Value = Value> {
    (
        prop::bool::ANY,
        1u64..5,
        1u64..4,
        1u64..50,
        prop_oneof![Just(0.5), Just(0.9)],
        0u32..4,
        prop::bool::ANY,
        0u64..1000,
    )
        .prop_map(|(tree, a, b, buffer, load, tcp, bjp, seed)| {
            let (topology, shape) = if tree {
                ("tree", json!({ "depth": a, "fanout": b }))
            } else {
                ("layered", json!({ "stages": a.min(3), "width": b.max(2) }))
            };
            let mut traffic =
                vec![json!({ "kind": "udp_poisson", "flows": 6, "load": load, "packet": "1000B" })];
            if tcp > 0 {
                traffic
                    .push(json!({ "kind": "long_lived", "flows": tcp, "packet": "1000B", "jitter": "50us" }));
            }
            let mut v = json!({
                "duration": "3s", "warmup": "1s", "seed": seed,
                "network": {
                    "topology": topology, topology: shape, "rtt": "60ms",
                    "bottleneck": { "rate": "10Mbps", "buffer": format!("{buffer}pkt"), "delay": "1ms" },
                },
                "monitor": { "interval": "250ms" },
                "traffic": traffic,
            });
            if bjp {
                let jitter = 1 + buffer / 4;
                v["network"]["bottleneck"]["queue"] = json!("bjp");
                v["network"]["bottleneck"]["bjp_jitter"] = json!(jitter);
                v["network"]["bottleneck"]["bjp_delay"] = json!(jitter + seed % 3);
                v["network"]["bottleneck"]["bjp_global"] = json!(seed % 2 == 0);
            }
            v
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn a_dumbbell_gives_what_the_same_network_written_out_gives(v in small_scenario()) {
        let mut v = v;
        // Server machines (and with them cross traffic) are the dumbbell's own.
        v["network"]["access"]["machines"] = json!(0);
        for entry in v["traffic"].as_array_mut().unwrap() {
            entry.as_object_mut().unwrap().remove("path");
        }
        let dumbbell = buflab_core::run(&super::scenario(v.clone()));
        let network = buflab_core::run(&super::scenario(dumbbell_as_network(&v)));
        same_results(&dumbbell, network)?;
    }

    #[test]
    fn a_parking_lot_gives_what_the_same_network_written_out_gives(v in small_parking_lot()) {
        let lot = buflab_core::run(&super::scenario(v.clone()));
        let network = buflab_core::run(&super::scenario(parking_lot_as_network(&v)));
        same_results(&lot, network)?;
    }

    #[test]
    fn invariants_hold_on_random_graphs(v in small_graph()) {
        check_invariants(&super::scenario(v))?;
    }

    #[test]
    fn invariants_hold_on_trees_and_layered_networks(v in small_shape()) {
        check_invariants(&super::scenario(v))?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    #[test]
    fn computing_ahead_changes_nothing_on_random_graphs(v in small_graph()) {
        check_computing_ahead_changes_nothing(&super::scenario(v))?;
    }

    /// BJP's two forms (thesis §5.3.1's global time stamp, §5.3.2's slack under local
    /// synchronization) schedule every packet alike where BJP routers follow one another, as
    /// on a tree's or a layered network's routers: the same run, to the last bit.
    #[test]
    fn bjp_with_slack_gives_the_run_bjp_with_time_stamps_gives(v in small_shape()) {
        let mut v = v;
        let bottleneck = &mut v["network"]["bottleneck"];
        if bottleneck.get("queue").is_none() {
            bottleneck["queue"] = json!("bjp");
            bottleneck["bjp_jitter"] = json!(4);
            bottleneck["bjp_delay"] = json!(6);
        }
        v["network"]["bottleneck"]["bjp_global"] = json!(true);
        let global = buflab_core::run(&super::scenario(v.clone()));
        v["network"]["bottleneck"]["bjp_global"] = json!(false);
        let slack = buflab_core::run(&super::scenario(v));
        prop_assert!(global.links.iter().map(|l| l.arrivals).sum::<u64>() > 100);
        same_results(&global, slack)?;
    }
}

#[test]
fn written_out_shapes_are_what_the_shapes_are() {
    // Guards the equivalence tests: the conversions must produce the shapes' graphs, not merely
    // graphs that run alike.
    let v = json!({
        "network": { "topology": "parking_lot", "hops": 2, "bottleneck": { "rate": "10Mbps", "delay": "1ms" },
                     "hop": [{ "rate": "5Mbps" }], "rtt": "50ms" },
        "traffic": [ { "kind": "long_lived", "hops": "2" } ],
    });
    let lot = super::scenario(v.clone());
    let net = super::scenario(parking_lot_as_network(&v));
    assert_eq!(
        lot.network.graph.links.iter().map(|l| (&l.name, l.from, l.to, l.monitored)).collect::<Vec<_>>(),
        net.network.graph.links.iter().map(|l| (&l.name, l.from, l.to, l.monitored)).collect::<Vec<_>>()
    );
    // The same links, but each named by the key it was written under (`network.hop.0` or
    // `network.link.0`), for its error messages.
    let unnamed = |hops: &[buflab_core::scenario::LinkSpec]| {
        hops.iter().cloned().map(|mut h| (h.queue.path.clear(), h).1).collect::<Vec<_>>()
    };
    assert_eq!(unnamed(&lot.network.hops), unnamed(&net.network.hops));
    assert_eq!(lot.placements, net.placements);
}
