//! Server machines with PSPacer-style class queues (thesis ch. 4.1): placement of flows and
//! the class queue as the rate limit.

use serde_json::json;

#[test]
fn class_queues_share_their_rate_among_their_flows() {
    // 2 machines × 2 classes at 10 Mb/s, 16 long-lived flows, 1 Gb/s NICs and bottleneck:
    // the class queues are the bottlenecks, so the link carries 4 × 10 Mb/s = 40 Mb/s,
    // 4 % of its capacity, and goodput is 40 Mb/s × 960/1000 payload = 38.4 Mb/s.
    let r = super::run(json!({
        "duration": "30s", "warmup": "10s",
        "network": {
            "bottleneck": { "rate": "1Gbps", "buffer": "1000pkt" },
            "access": { "rate": "10Mbps", "buffer": "5000pkt", "machines": 2, "classes": 2, "nic": "1Gbps" },
            "rtt": "50ms..100ms",
        },
        "traffic": [ { "kind": "long_lived", "flows": 16, "max_window": "64KB" } ],
    }));
    // Flow i on machine i mod 2, class (i div 2) mod 2.
    for f in &r.flows {
        assert_eq!((f.machine, f.class), ((f.flow % 2) as i64, ((f.flow / 2) % 2) as i64));
    }
    // Windows of 64 KB are 66 segments; 4 flows per class × 66 over 50–100 ms far exceed
    // 10 Mb/s, so each class queue stays busy: within 1 % of the arithmetic.
    assert!((r.summary.utilization - 0.04).abs() < 0.0004, "utilization {}", r.summary.utilization);
    assert!((r.summary.goodput_bps / 38.4e6 - 1.0).abs() < 0.01, "goodput {}", r.summary.goodput_bps);
}

#[test]
fn without_machines_every_flow_has_its_own_access_link() {
    let r = super::run(json!({
        "duration": "5s",
        "network": { "bottleneck": { "rate": "10Mbps" }, "access": { "rate": "100Mbps" } },
        "traffic": [ { "kind": "long_lived", "flows": 3 } ],
    }));
    assert!(r.flows.iter().all(|f| f.machine == -1 && f.class == -1));
}

#[test]
fn cross_traffic_shares_the_nic_and_leaves_before_the_bottleneck() {
    // Thesis Fig 4.8: one machine whose 100 Mb/s NIC carries 4 main and 4 cross flows; the
    // main flows go on to the 1 Gb/s bottleneck, the cross flows leave by their own link.
    // The NIC is the bottleneck of both, so together they fill it (96 Mb/s of goodput at
    // 960/1000 payload), and the bottleneck sees main traffic only.
    let mut v = json!({
        "duration": "20s", "warmup": "5s",
        "network": {
            "bottleneck": { "rate": "1Gbps", "buffer": "1000pkt" },
            "access": { "rate": "10Gbps", "machines": 1, "nic": "100Mbps" },
            "cross": { "rate": "1Gbps" },
            "rtt": "50ms..100ms",
        },
        "traffic": [
            { "kind": "long_lived", "flows": 4, "max_window": "256KB" },
            { "kind": "long_lived", "flows": 4, "max_window": "256KB", "path": "cross" },
        ],
        "monitor": { "events": true },
    });
    let r = super::run(v.clone());
    let (main, cross): (Vec<_>, Vec<_>) = r.flows.iter().partition(|f| f.traffic == 0);
    // Only the main traffic is paced by the class queues (IMC §3.1.2).
    assert!(main.iter().all(|f| f.class >= 0) && cross.iter().all(|f| f.class == -1));
    let main_bps: f64 = main.iter().map(|f| f.goodput_bps).sum();
    let cross_bps: f64 = cross.iter().map(|f| f.goodput_bps).sum();
    // 256 KB windows: 8 × 266 segments × 8000 bits / 75 ms ≈ 230 Mb/s of demand, over twice
    // the NIC, so it stays busy (and its queue stays bounded by the windows).
    assert!(((main_bps + cross_bps) / 96e6 - 1.0).abs() < 0.02, "{main_bps} + {cross_bps}");
    assert!(cross_bps > 0.2 * 96e6 && main_bps > 0.2 * 96e6, "{main_bps} vs {cross_bps}");
    let log = r.events.as_ref().unwrap();
    assert!(log.flow.iter().all(|&f| f < 4), "cross packets reached the bottleneck");

    v["network"]["access"]["machines"] = json!(0);
    let e = buflab_core::scenario::Scenario::from_value(&v).unwrap_err().to_string();
    assert!(e.starts_with("traffic.1.path: got \"cross\""), "{e}");
}
