//! Paced TCP (Aggarwal et al. 2000; Linux's pacing ratios) in whole runs: the spacing a
//! paced sender leaves at the bottleneck, and recovery unchanged by pacing.

use buflab_core::monitor::QueueEvent;
use serde_json::{json, Value};

/// One flow held to 10 segments by the receiver's window, 10 Mb/s bottleneck with room for
/// the whole window, two-way propagation 100 ms, 1000 B packets: no loss, so after the first
/// RTT sample the window is all the sender has, and pacing spreads it over srtt.
fn window_limited(pacing: &str) -> Value {
    window_limited_with(pacing, false, "newreno")
}

fn window_limited_with(pacing: &str, ack_pacing: bool, tcp: &str) -> Value {
    json!({
        "duration": "20s", "warmup": "5s",
        "network": { "bottleneck": { "rate": "10Mbps", "buffer": "100pkt" }, "rtt": "100ms" },
        "monitor": { "events": true },
        "traffic": [ {
            "kind": "long_lived", "flows": 1, "max_window": "9600B", "pacing": pacing,
            "ack_pacing": ack_pacing, "tcp": tcp,
        } ],
    })
}

/// Gaps between successive arrivals at the bottleneck queue in the measured window, ps.
fn arrival_gaps(v: Value) -> Vec<u64> {
    let r = super::run(v);
    assert_eq!(r.summary.drops, 0);
    let log = r.events.expect("monitor.events keeps the log in memory");
    let warmup = 5 * 1_000_000_000_000u64;
    let arrivals: Vec<u64> = (0..log.len())
        .filter(|&i| log.event[i] != QueueEvent::Dequeue as u8 && log.time[i].0 >= warmup)
        .map(|i| log.time[i].0)
        .collect();
    arrivals.windows(2).map(|w| w[1] - w[0]).collect()
}

#[test]
fn paced_segments_arrive_srtt_over_cwnd_apart() {
    // The window of 10 spread over srtt. srtt is the 100 ms of propagation plus what the
    // data packet spends being serialized (0.8 ms at the bottleneck, 0.8 µs on the access
    // link) and the 40 B ACK on the way back (32 ns on the 10 Gb/s access link): at most
    // 100.9 ms. A gap at the bottleneck is srtt ÷ 10 give or take one serialization time
    // (the tolerance: the queue ahead of a segment may shift it by one packet).
    // SACK senders send through their own loop (RFC 6675 NextSeg) and must be paced the same.
    let ser = 800_000_000u64; // 1000 B at 10 Mb/s, ps
    let (lo, hi) = (10_000_000_000 - ser, 10_090_000_000 + ser);
    for tcp in ["newreno", "sack"] {
        let gaps = arrival_gaps(window_limited_with("window", false, tcp));
        assert!(gaps.len() > 1000, "{tcp}: {} gaps", gaps.len());
        for g in &gaps {
            assert!((lo..=hi).contains(g), "{tcp}: gap {g} ps outside [{lo}, {hi}]");
        }
    }
}

#[test]
fn unpaced_window_arrives_in_bursts_at_the_access_rate() {
    // The contrast: each ACK releases a segment at once, so the window travels as one
    // back-to-back train (gaps of 0.8 ns at the 10 Gb/s access rate... then the long wait for
    // the next round trip). Most gaps are far below srtt ÷ 10.
    let gaps = arrival_gaps(window_limited("off"));
    let short = gaps.iter().filter(|&&g| g < 1_000_000_000).count();
    assert!(short * 10 >= gaps.len() * 8, "{short} of {} gaps under 1 ms", gaps.len());
}

#[test]
fn receiver_paced_acks_spread_an_unpaced_window() {
    // The same unpaced sender, but the receiver paces its ACKs (tcp/ack_pacer.rs): about 10
    // ACKs per round of 100 ms (the window), none growing, so they leave no closer than
    // (100 ms … 100 ms + one gap) ÷ (1.2 × 9…11 ACKs) ≥ 7.5 ms, and each releases one
    // segment. The window reaches the bottleneck spread over the RTT instead of as a train:
    // every gap is at least 7 ms (the slack of the 100.9 ms round trip beyond 10 paced gaps
    // settles between them: gaps of 8.3 and 12.7 ms here), where the unpaced sender's are
    // mostly under 1 ms (the test above).
    let gaps = arrival_gaps(window_limited_with("off", true, "newreno"));
    assert!(gaps.len() > 1000, "{} gaps", gaps.len());
    let least = *gaps.iter().min().unwrap();
    assert!(least >= 7_000_000_000, "a gap of {least} ps");
}

/// 10 long-lived flows on 20 Mb/s, RTT 40–80 ms, a 50-packet buffer, windows held to 40
/// segments, with `extra` keys on the traffic entry; returns the flows that never timed out
/// with each one's drops at the bottleneck (from the event log, over the whole run).
fn clean_flows_and_drops(extra: Value) -> Vec<(u32, u64, u64)> {
    let mut traffic = json!({
        "kind": "long_lived", "flows": 10, "start": "0s..2s", "max_window": "38400B",
    });
    traffic.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
    let r = super::run(json!({
        "duration": "60s",
        "network": { "bottleneck": { "rate": "20Mbps", "buffer": "50pkt" }, "rtt": "40ms..80ms" },
        "monitor": { "events": true },
        "traffic": [traffic],
    }));
    let log = r.events.as_ref().expect("the log is kept in memory");
    let mut drops = vec![0u64; r.flows.len()];
    for i in 0..log.len() {
        if log.event[i] == QueueEvent::Drop as u8 {
            drops[log.flow[i] as usize] += 1;
        }
    }
    r.flows
        .iter()
        .filter(|f| f.timeouts == 0)
        .map(|f| (f.flow, drops[f.flow as usize], f.retransmits))
        .collect()
}

#[test]
fn receiver_paced_acks_leave_sack_recovery_resending_every_drop() {
    // ACK pacing only delays ACKs, in order: duplicate ACKs stay duplicates and SACK
    // options stay with their ACKs, so SACK recovery still resends every drop in each flow
    // that never timed out (the allowance of one: a drop in the last round trip). SACK may
    // also resend a segment that was not lost: RFC 6675's rescue retransmission (NextSeg
    // rule 4), at most one per recovery; those extras stay under an eighth of the drops (2–9 %
    // measured, as without ACK pacing: 2–4 %). 10 SACK flows as in the test below, with the
    // receiver alone paced and with both sides.
    for pacing in ["off", "window"] {
        let clean = clean_flows_and_drops(json!({ "pacing": pacing, "ack_pacing": true, "tcp": "sack" }));
        assert!(clean.len() >= 5, "{pacing}: only {} flows without a timeout", clean.len());
        for (f, d, rt) in clean {
            assert!(d > 5, "{pacing}: flow {f} saw {d} drops");
            assert!(rt + 1 >= d && rt <= d + d / 8, "{pacing}: flow {f}: {rt} resends for {d} drops");
        }
    }
}

#[test]
fn paced_flows_resend_each_drop_once_where_no_timeout_fired() {
    // 10 flows, 20 Mb/s, RTT 40–80 ms (a pipe of about 150 packets), 50-packet buffer:
    // windows of about 20, and some congestion events cost a flow several segments and end
    // in a timeout (as they do unpaced). The receiver's window of 40 segments keeps slow
    // start from overshooting into a timeout for every flow. Pacing must not change
    // recovery: in every flow that never timed out, each drop is resent exactly once. Drops
    // per flow come from the bottleneck's event log, over the whole run; a drop in the last
    // round trip may not have been resent yet, hence the allowance of one.
    for pacing in ["window", "linux"] {
        let clean = clean_flows_and_drops(json!({ "pacing": pacing }));
        assert!(clean.len() >= 2, "{pacing}: only {} flows without a timeout", clean.len());
        for (f, d, rt) in clean {
            assert!(d > 5, "{pacing}: flow {f} saw {d} drops");
            assert!(rt <= d && rt + 1 >= d, "{pacing}: flow {f}: {rt} resends for {d} drops");
        }
    }
}
