//! The optical FIFO under TCP (thesis ch. 6 with the tiny-buffer experiments' traffic): a
//! bottleneck buffered in fiber delay lines gives exactly what drop-tail of the same size
//! gives, since the construction emulates a FIFO exactly (Thm 6.1), and its tables report
//! the hardware and what the fiber did.

use serde_json::{json, Value};

use buflab_core::result::RunResult;

/// A scaled-down headline dumbbell: 50 long-lived NewReno flows through 100 Mb/s, access
/// links at `access`, 64 KB windows, RTTs 75–125 ms; 20 s, 5 s of warm-up.
fn dumbbell(bottleneck: Value, access: &str) -> Value {
    json!({
        "duration": "20s", "warmup": "5s",
        "network": { "bottleneck": bottleneck, "access": { "rate": access }, "rtt": "75ms..125ms" },
        "traffic": [ { "kind": "long_lived", "flows": 50, "tcp": "newreno", "max_window": "64KB", "start": "0s..5s" } ],
    })
}

/// Every figure of the two runs but the engine's own (events executed, wall time) is the
/// same: the summary, the flows, the time series and the links.
fn assert_same(optical: &RunResult, tail: &RunResult, what: &str) {
    let mut same = optical.summary.clone();
    (same.events, same.wall_s) = (tail.summary.events, tail.summary.wall_s);
    assert_eq!(same, tail.summary, "{what}: summary");
    assert_eq!(optical.flows, tail.flows, "{what}: flows");
    assert_eq!(optical.timeseries, tail.timeseries, "{what}: time series");
    assert_eq!(optical.links, tail.links, "{what}: links");
}

#[test]
fn tcp_over_an_optical_fifo_is_exactly_tcp_over_drop_tail_of_n_minus_1() {
    for (buffer, access) in [(15, "1Gbps"), (31, "10Mbps"), (63, "1Gbps")] {
        let b = format!("{buffer}pkt");
        let tail = super::run(dumbbell(json!({ "rate": "100Mbps", "buffer": b }), access));
        let optical =
            super::run(dumbbell(json!({ "rate": "100Mbps", "buffer": b, "queue": "optical_fifo" }), access));
        let what = format!("N − 1 = {buffer}, access {access}");
        assert!(tail.summary.drops > 100, "{what}: the buffer must overflow for the test to mean much");
        assert_same(&optical, &tail, &what);
        assert!(tail.optical.is_empty() && optical.optical.len() == 1);
        let o = &optical.optical[0];
        let n = buffer + 1;
        let log_n = 63 - (n as u64).leading_zeros() as u64;
        assert_eq!((o.n, o.k, o.lines, o.fiber_slots), (n as u64, 1, 2 * log_n - 1, 3 * n as u64 / 2 - 2));
        assert_eq!((o.violations, o.unlike_fifo), (0, 0), "{what}");
        assert_eq!(o.drops, optical.links[0].drops, "{what}: the fiber's drops are the link's");
        assert_eq!(o.arrivals, optical.links[0].arrivals, "{what}");
        assert!(o.waiting_max_pkts < n as u64 / 2, "{what}: Appendix E (i)");
        assert!(o.passes_max >= o.recirculations_max && o.passes_mean >= 1.0, "{what}: {o:?}");
        assert_eq!(optical.optical_lines.len() as u64, o.lines);
    }
}

/// Thm 6.2's construction at K = 4 on one hop of a parking lot (any link can buffer in
/// fiber): still exactly drop-tail, with the lines and fiber the theorem counts.
#[test]
fn a_parking_lot_hop_in_fiber_with_k_4_is_drop_tail() {
    let lot = |queue: &str| {
        json!({
            "duration": "15s", "warmup": "5s",
            "network": {
                "topology": "parking_lot", "hops": 3,
                "bottleneck": { "rate": "50Mbps", "buffer": "63pkt" },
                "hop": [ {}, { "queue": queue, "optical_k": if queue == "optical_fifo" { json!(4) } else { Value::Null } } ],
                "rtt": "60ms..100ms",
            },
            "traffic": [
                { "kind": "long_lived", "flows": 20, "hops": "all" },
                { "kind": "long_lived", "flows": 10, "hops": 2 },
            ],
        })
    };
    let mut drop_tail = lot("droptail");
    drop_tail["network"]["hop"][1].as_object_mut().unwrap().remove("optical_k");
    let tail = super::run(drop_tail);
    let optical = super::run(lot("optical_fifo"));
    assert_same(&optical, &tail, "hop 2 in fiber, K = 4");
    assert_eq!(optical.optical.len(), 1);
    let o = &optical.optical[0];
    assert_eq!(o.link, "hop2");
    // Thm 6.2 at N = 64, K = 4: 2(6 + 4 − 2) − 3 = 13 lines, 63 + (64 − 8)/8 = 70 slots.
    assert_eq!((o.lines, o.fiber_slots, o.violations, o.unlike_fifo), (13, 70, 0, 0));
    assert!(o.drops > 0, "hop 2 is the tightest: {o:?}");
}
