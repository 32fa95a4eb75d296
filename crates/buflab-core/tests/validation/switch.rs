//! The switch topology (thesis ch. 3, Fig 3.1): packet conservation across the router,
//! determinism, the output-queued equivalences (speedup N; OQ emulation at speedup 2) and
//! Theorem 2.1, lazy slots, and bad input.

use buflab_core::result::RunResult;
use buflab_core::scenario::Scenario;
use serde_json::{json, Value};

/// A 4×4 switch at 100 Mb/s behind 2 Mb/s access links (M = 50), 70 long-lived Reno flows per
/// output: their access links could carry 140 Mb/s per output (their 64-segment windows, about
/// 10 Mb/s per 50 ms RTT, do not limit them), so the outputs are congested. Small buffers,
/// 8 s of which 2 s warm-up.
fn small(scheduler: &str, extra: Value) -> Value {
    let mut sw = json!({
        "ports": 4, "rate": "100Mbps", "scheduler": scheduler,
        "output_buffer": "8pkt",
    });
    for (k, v) in extra.as_object().unwrap() {
        sw[k] = v.clone();
    }
    json!({
        "duration": "8s", "warmup": "2s", "seed": 3,
        "network": {
            "topology": "switch", "switch": sw,
            "access": { "rate": "2Mbps" }, "rtt": "40ms..60ms",
        },
        "traffic": [ {
            "kind": "long_lived", "flows_per_output": 70, "tcp": "reno",
            "max_window": "61440B", "start": "0s..1s",
        } ],
    })
}

fn simulate(v: Value, eager: bool, ahead: bool) -> (buflab_core::topology::Network, RunResult) {
    let s = super::scenario(v);
    let mut net = buflab_core::topology::build(&s);
    net.sim.set_eager_switches(eager);
    net.sim.set_compute_ahead(ahead);
    net.sim.run();
    let r = buflab_core::result::collect(&s, &mut net);
    (net, r)
}

/// Everything a run reports that does not depend on how it was simulated (wall time and
/// events executed left out).
fn outcome(r: &RunResult) -> Value {
    let mut sum = Value::Object(r.summary.to_json());
    for k in ["wall_s", "events"] {
        sum.as_object_mut().unwrap().remove(k);
    }
    let flows: Vec<_> = r
        .flows
        .iter()
        .map(|f| (f.flow, f.delivered_bytes, f.sent_packets, f.retransmits, f.timeouts))
        .collect();
    let links: Vec<_> = r.links.iter().map(|l| format!("{l:?}")).collect();
    let ports: Vec<_> = r.ports.iter().map(|p| format!("{p:?}")).collect();
    json!({ "summary": sum, "flows": flows, "links": links, "ports": ports,
            "series": format!("{:?}", r.timeseries), "conservation": format!("{:?}", r.conservation) })
}

#[test]
fn packets_are_conserved_and_buffers_respected() {
    for (scheduler, extra) in [
        ("mwm", json!({ "voq_buffer": 2 })),
        ("islip", json!({ "voq_buffer": 3, "speedup": 1.2, "iterations": 2 })),
        ("pim", json!({ "voq_buffer": 1, "iterations": 4, "load": "diagonal" })),
        ("output_queued", json!({})),
        ("oq_emulation", json!({ "speedup": 2 })),
    ] {
        let (net, r) = simulate(small(scheduler, extra.clone()), false, true);
        let c = r.conservation;
        assert_eq!(
            c.injected,
            c.delivered + c.queue_drops + c.loss_drops + c.in_flight,
            "{scheduler}: {c:?}"
        );
        let sw = &net.sim.switches[0];
        let limit = extra.get("voq_buffer").and_then(Value::as_u64);
        for st in &sw.stats.inputs {
            assert!(limit.is_none_or(|b| st.max_voq_ever <= b), "{scheduler}: {st:?}");
        }
        if scheduler != "oq_emulation" {
            assert!(r.links.iter().all(|l| l.max_queue_ever.0 <= 8), "{scheduler}: {:?}", r.links);
        }
        // Traffic flows (1-packet VOQs under PIM at diagonal load keep it near 40 %).
        assert!(r.summary.utilization > 0.3, "{scheduler}: {}", r.summary.utilization);
        assert_eq!(r.ports.len(), 4);
        assert_eq!(r.ports.iter().map(|p| p.flows_out).collect::<Vec<_>>(), vec![70; 4], "{scheduler}");
        let drops: u64 = r.ports.iter().map(|p| p.in_drops).sum();
        assert_eq!(r.summary.switch.input_drops, drops);
        if scheduler == "output_queued" {
            assert_eq!(drops, 0);
        }
    }
}

#[test]
fn same_seed_same_results_other_seed_differs() {
    let a = outcome(&super::run(small("islip", json!({ "voq_buffer": 3 }))));
    let b = outcome(&super::run(small("islip", json!({ "voq_buffer": 3 }))));
    assert_eq!(a, b);
    let mut v = small("islip", json!({ "voq_buffer": 3 }));
    v["seed"] = json!(4);
    assert_ne!(a, outcome(&super::run(v)));
}

#[test]
fn running_every_slot_or_computing_ahead_changes_nothing() {
    for (scheduler, extra) in [
        ("mwm", json!({ "voq_buffer": 2, "speedup": 1.2 })),
        ("pim", json!({ "voq_buffer": 2, "iterations": 2 })),
        ("oq_emulation", json!({ "speedup": 2 })),
        ("output_queued", json!({})),
    ] {
        let v = small(scheduler, extra);
        let (_, lazy) = simulate(v.clone(), false, true);
        let (_, eager) = simulate(v.clone(), true, true);
        let (_, slow) = simulate(v, false, false);
        assert_eq!(outcome(&lazy), outcome(&eager), "{scheduler}: lazy vs every slot");
        assert_eq!(outcome(&lazy), outcome(&slow), "{scheduler}: computing ahead vs one event per hop");
        assert!(lazy.summary.events < eager.summary.events);
    }
}

/// Per-flow results and what each output line sent: what two routers with the same
/// departures and drops must share, wherever they drop. (Not the lines' arrivals: under OQ
/// emulation a packet reaches its line in its departure slot rather than its arrival slot, so
/// near the window's edges a few fall on the other side.)
fn traffic_outcome(r: &RunResult) -> Value {
    let flows: Vec<_> = r
        .flows
        .iter()
        .map(|f| (f.flow, f.delivered_bytes, f.sent_packets, f.retransmits, f.timeouts))
        .collect();
    let lines: Vec<_> =
        r.links.iter().map(|l| (l.utilization.to_bits(), l.throughput_bps.to_bits())).collect();
    json!({ "flows": flows, "lines": lines })
}

#[test]
fn speedup_n_is_the_output_queued_router() {
    // Every data packet is one cell and arrives on a line at the port rate, so at most one
    // per input per slot: MWM with speedup N = 4 clears the VOQs every slot, and the switch
    // is the output-queued router exactly (same departures, same drops, all at the outputs).
    for load in ["uniform", "diagonal"] {
        let oq = super::run(small("output_queued", json!({ "load": load })));
        let cioq = super::run(small("mwm", json!({ "load": load, "speedup": 4, "voq_buffer": 1 })));
        assert_eq!(traffic_outcome(&oq), traffic_outcome(&cioq), "{load}");
        assert_eq!(r_drops(&oq), r_drops(&cioq), "{load}: output drops must agree and no input may drop");
        assert!(oq.summary.drops > 0, "{load}: the test needs output drops to mean something");
    }
}

fn r_drops(r: &RunResult) -> (u64, u64) {
    (r.summary.drops, r.summary.switch.input_drops)
}

#[test]
fn oq_emulation_at_speedup_two_is_the_output_queued_router_within_theorem_2_1() {
    // Chuang et al. 1999 in the packet simulator: with speedup 2 every packet leaves in the
    // slot the output-queued router sends it, and exactly its drops happen (at the inputs,
    // where the shadow OQ switch refuses them). Theorem 2.1: no input ever holds more than
    // 2B, B the OQ router's buffer (8 waiting + 1 on the line); the cell harness's sharper
    // bound B holds too.
    let oq = super::run(small("output_queued", json!({})));
    let v = small("oq_emulation", json!({ "speedup": 2 }));
    let (net, emu) = simulate(v, false, true);
    assert_eq!(traffic_outcome(&oq), traffic_outcome(&emu));
    assert_eq!(oq.summary.drops, emu.summary.switch.input_drops);
    assert_eq!(emu.summary.drops, 0);
    assert!(emu.ports.iter().all(|p| p.late_departures == 0));
    let b = 8 + 1;
    let max = net.sim.switches[0].stats.inputs.iter().map(|s| s.max_pkts_ever).max().unwrap();
    assert!(max <= 2 * b && max <= b, "largest input occupancy {max} with B = {b}");
    assert!(max >= 2, "the bound should be exercised: {max}");
}

#[test]
fn speedup_one_queues_only_at_the_inputs() {
    // §3.2: "With speedup one, there is no queueing at egress ports".
    let r = super::run(small("mwm", json!({ "voq_buffer": 5 })));
    assert!(r.links.iter().all(|l| l.max_queue_pkts == 0 && l.drops == 0), "{:?}", r.links);
    assert!(r.summary.switch.input_drops > 0 && r.summary.switch.voq_mean_pkts > 0.0);
    assert!(
        r.summary.switch.fabric_mean_matching > 1.0
            && r.summary.switch.fabric_busy_slots <= r.summary.switch.fabric_slots
    );
    // 6 s of 80 µs slots (1000 B at 100 Mb/s).
    assert_eq!(r.summary.switch.fabric_slots, 75_000);
}

#[test]
fn flows_per_output_eq31_fills_each_output() {
    // Thesis eq. 3.1: 2.5 Gb/s, 100 ms, 64 segments of 1000 B → 489 flows per output.
    let v = json!({
        "duration": "1s",
        "network": { "topology": "switch", "switch": { "rate": "2.5Gbps" }, "rtt": "75ms..125ms",
                     "access": { "rate": "25Mbps" } },
        "traffic": [ { "kind": "long_lived", "flows_per_output": "eq3.1", "max_window": "61440B" } ],
    });
    let s = Scenario::from_value(&v).unwrap();
    assert_eq!(s.total_flows(), 8 * 489);
    let n = Scenario::normalized(&v).unwrap();
    assert_eq!(n["traffic"][0]["flows_per_output"], json!(489));
    assert!(n["traffic"][0].get("flows").is_none());
    assert_eq!(n["network"]["switch"]["cell"], json!("1000B"));
    assert!(n["network"]["switch"].get("iterations").is_none(), "mwm does not iterate");
    assert!(n["network"].get("bottleneck").is_none() && n["network"].get("loss").is_none());
    Scenario::from_value(&n).unwrap();
}

fn error(v: Value) -> String {
    Scenario::from_value(&v).unwrap_err().to_string()
}

#[test]
fn bad_switch_keys_name_key_value_and_expectation() {
    let with = |extra: Value| error(small("mwm", extra));
    assert_eq!(
        with(json!({ "speedup": 0.5 })),
        "network.switch.speedup: got 0.5; expected a number from 1 to 4000000 (the fabric's rate ÷ the line rate)"
    );
    assert_eq!(
        with(json!({ "iterations": 2 })),
        "network.switch.iterations: got 2; expected no `iterations` with scheduler = \"mwm\" (only islip and pim iterate)"
    );
    assert_eq!(
        with(json!({ "voq_buffer": "10KB" })),
        "network.switch.voq_buffer: got \"10KB\"; expected a buffer in packets (\"1pkt\" or more, or a bare number) or \"unlimited\""
    );
    assert!(with(json!({ "load": [[1, 0], [0, 1]] })).starts_with(
        "network.switch.load: got an array; expected \"uniform\", \"diagonal\", or 4 rows of 4"
    ));
    assert!(with(json!({ "load": "skewed" })).starts_with("network.switch.load: got \"skewed\""));
    assert_eq!(
        with(json!({ "load": [[1, 0, 0, 0], [0, 0, 0, 0], [1, 1, 1, 1], [0, 0, 0, 1]] })),
        "network.switch.load.1: got an array; expected 4 non-negative weights, not all 0"
    );
    assert!(with(json!({ "sheduler": "islip" }))
        .starts_with("network.switch.sheduler: unknown key; did you mean `scheduler`?"));
    assert!(with(json!({ "summary_port": 5 }))
        .starts_with("network.switch.summary_port: got 5; expected a whole number from 1 to 4"));
    let oq = error(small("output_queued", json!({ "voq_buffer": 3 })));
    assert!(
        oq.starts_with(
            "network.switch.voq_buffer: got 3; expected no `voq_buffer` with scheduler = \"output_queued\""
        ),
        "{oq}"
    );
    let oq = error(small("output_queued", json!({ "speedup": 2 })));
    assert!(
        oq.starts_with(
            "network.switch.speedup: got 2; expected no `speedup` with scheduler = \"output_queued\""
        ),
        "{oq}"
    );

    // Keys of other topologies, and other topologies' refusal of the switch's.
    let mut v = small("mwm", json!({}));
    v["network"]["bottleneck"] = json!({ "rate": "1Gbps" });
    assert!(error(v).starts_with("network.bottleneck: got a table; expected no `bottleneck` on the switch"));
    let mut v = small("mwm", json!({}));
    v["traffic"][0]["hops"] = json!(2);
    assert_eq!(error(v), "traffic.0.hops: got 2; expected no `hops` on the switch: it is a parking lot key");
    let mut v = small("mwm", json!({}));
    v["traffic"][0]["flows"] = json!(10);
    assert_eq!(
        error(v),
        "traffic.0.flows_per_output: got 70; expected either `flows` (in all) or `flows_per_output`, not both"
    );
    let mut v = small("mwm", json!({}));
    v["traffic"] = json!([{ "kind": "open_loop", "arrivals": 5 }]);
    assert!(error(v)
        .starts_with("traffic.0.kind: got \"open_loop\"; expected a kind with a fixed number of flows"));
    let mut v = small("mwm", json!({}));
    v["autosize"] = json!({ "target_utilization": 0.9 });
    assert!(
        error(v).starts_with("autosize.target_utilization: got 0.9; expected no auto-sizer on the switch")
    );
    let dumbbell = json!({
        "network": { "bottleneck": { "rate": "10Mbps" }, "switch": { "rate": "1Gbps" } },
        "traffic": [ { "kind": "long_lived", "flows_per_output": 3 } ],
    });
    assert_eq!(
        error(dumbbell),
        "network.switch: got a table; expected no `switch` on the dumbbell: it is a switch key"
    );
    let missing = json!({ "network": { "topology": "switch" }, "traffic": [ { "kind": "long_lived" } ] });
    assert!(error(missing).starts_with("network.switch.rate: missing; expected rate"));
}
