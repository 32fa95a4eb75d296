//! The live auto-sizer on stationary traffic: its search converges where static runs say it
//! should, and changing the limit mid-run keeps every invariant of the engine.

use buflab_core::result::RunResult;
use buflab_core::units::Time;
use serde_json::{json, Value};

/// 30 long-lived flows on 10 Mb/s, RTTs 50–150 ms: stationary after a few seconds. RTT·C is
/// 125 packets, where the search starts; 98 % needs about 25.
fn stationary(duration: &str, warmup: &str, autosize: Value) -> Value {
    json!({
        "duration": duration, "warmup": warmup, "seed": 1,
        "network": { "bottleneck": { "rate": "10Mbps" }, "rtt": "50ms..150ms" },
        "monitor": { "interval": "3s" },
        "traffic": [ { "kind": "long_lived", "flows": 30, "start": "0s..5s" } ],
        "autosize": autosize,
    })
}

/// The same scenario without the auto-sizer, at a fixed buffer: its utilization.
fn static_utilization(v: &Value, buffer: u64) -> f64 {
    let mut v = v.clone();
    v.as_object_mut().unwrap().remove("autosize");
    v["network"]["bottleneck"]["buffer"] = json!(format!("{buffer}pkt"));
    super::run(v).summary.utilization
}

/// Each step's buffer is the one the step before chose, the first is `start`.
fn check_chained(r: &RunResult, start: u64) {
    assert_eq!(r.autosize[0].buffer_pkts, start);
    for pair in r.autosize.windows(2) {
        assert_eq!(pair[1].buffer_pkts, pair[0].next_buffer_pkts, "at {}", pair[1].time);
    }
}

#[test]
fn the_search_converges_where_static_runs_cross_the_target() {
    // Default settings: 3-s steps from the end of warm-up, the first second of each left out,
    // start at RTT·C = 125 packets.
    let v = stationary("300s", "12s", json!({ "target_utilization": 0.98 }));
    let r = super::run(v.clone());
    assert_eq!(r.autosize.len(), 96, "(300 − 12) / 3 steps");
    assert_eq!(r.autosize[0].time, Time::from_secs(15));
    check_chained(&r, 125);

    // Bisection from a start that passes converges within 1 + ⌈log2 125⌉ = 8 steps: each
    // step halves the bracket, whatever the verdicts.
    assert!(r.autosize[0].passed, "125 packets keep 30 flows busy");
    let first = r.autosize.iter().position(|s| s.converged).expect("the search converges") + 1;
    assert!(first <= 8, "converged after {first} steps");

    // The answer sits where a static run's utilization crosses the pass threshold
    // (0.98 × 0.995): 5 packets below it, a whole run misses; 5 above, it meets it. Near
    // 25 packets one packet is worth about 0.5 % of utilization here, so ±5 packets is ±2.5 %,
    // three times the spread of one 3-s interval's utilization (0.8 %), which is what a
    // single verdict of the search sees.
    let answer = r.summary.autosize_buffer_pkts.expect("the search converged");
    assert!(answer > 5, "answer {answer}");
    let threshold = 0.98 * 0.995;
    let below = static_utilization(&v, answer as u64 - 5);
    let above = static_utilization(&v, answer as u64 + 5);
    assert!(below < threshold && threshold <= above, "{below} < {threshold} ≤ {above} at {answer} ± 5");
}

#[test]
fn limit_changes_keep_packets_conserved_and_queues_within_the_limits_in_force() {
    // Whole 3-s intervals (settle = 0), warm-up and duration multiples of 3 s: the steps tile
    // the measured window, and each lines up with one interval of the time series.
    let v = stationary("150s", "12s", json!({ "target_utilization": 0.98, "settle": "0s" }));
    let s = super::scenario(v.clone());
    let mut net = buflab_core::simulate(&s);
    let c = net.sim.counts;
    assert_eq!(c.injected, c.delivered + c.queue_drops + c.loss_drops + c.in_flight, "{c:?}");
    let r = buflab_core::result::collect(&s, &mut net);
    let steps = &r.autosize;
    assert_eq!(steps.len(), 46);
    check_chained(&r, 125);

    // The steps' counts are differences of the monitor's own running totals, so over the
    // tiled window they add up to the summary's exactly (utilization up to rounding).
    assert_eq!(steps.iter().map(|s| s.drops).sum::<u64>(), r.summary.drops);
    assert_eq!(steps.iter().map(|s| s.arrivals).sum::<u64>(), r.summary.arrivals);
    let mean = steps.iter().map(|s| s.utilization).sum::<f64>() / steps.len() as f64;
    assert!((mean - r.summary.utilization).abs() < 1e-9, "{mean} vs {}", r.summary.utilization);

    // Packets admitted under a larger limit stay and drain after it shrinks: an interval
    // holds at most the larger of its limit and the one before (the queue at its start), and
    // a shrink really leaves packets above the new limit at least once.
    let first = (12 / 3) as usize; // time-series intervals of warm-up
    for (i, b) in r.timeseries[..first].iter().enumerate() {
        assert!(b.queue_max_pkts <= 125, "warm-up interval {i}: {} > 125", b.queue_max_pkts);
    }
    let mut drained_above = false;
    for (k, step) in steps.iter().enumerate() {
        let before = if k == 0 { 125 } else { steps[k - 1].buffer_pkts };
        let max = r.timeseries[first + k].queue_max_pkts;
        assert!(max <= step.buffer_pkts.max(before), "step at {} held {max}", step.time);
        drained_above |= max > step.buffer_pkts;
    }
    assert!(drained_above, "no shrink ever left packets above the new limit");
    // The last step ends with the run, so its choice is not applied: the limit at the end is
    // the one it measured.
    assert_eq!(r.summary.buffer_pkts, Some(steps.last().unwrap().buffer_pkts as i64));

    // Same scenario and seed, same trajectory.
    assert_eq!(super::run(v).autosize, r.autosize);
}

#[test]
fn the_parking_lot_autosizes_its_summary_hop_only() {
    let mut v = stationary("40s", "10s", json!({ "target_utilization": 0.9, "start": 80 }));
    v["network"]["topology"] = json!("parking_lot");
    v["network"]["hops"] = json!(2);
    v["network"]["summary_hop"] = json!(2);
    v["network"]["bottleneck"]["buffer"] = json!("50pkt");
    v["traffic"] = json!([
        { "kind": "long_lived", "flows": 10, "start": "0s..5s" },
        { "kind": "long_lived", "flows": 10, "hops": 2, "start": "0s..5s" },
    ]);
    let r = super::run(v);
    // 30 s after warm-up: steps at 13, 16, …, 40 s.
    assert_eq!(r.autosize.len(), 10);
    check_chained(&r, 80);
    let last = r.autosize.last().unwrap();
    assert_eq!(r.links[0].buffer_pkts, Some(50), "hop 1 keeps its configured buffer");
    assert_eq!(
        r.links[1].buffer_pkts,
        Some(last.buffer_pkts as i64),
        "hop 2 ends at the last limit in force"
    );
    assert_eq!(r.summary.buffer_pkts, r.links[1].buffer_pkts);
}
