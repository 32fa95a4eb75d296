//! RED and ECN end to end (RFC 3168): a dumbbell whose RED bottleneck marks ECN-capable
//! flows instead of dropping them, against the same dumbbell whose flows are not
//! ECN-capable, so that the same RED decisions become drops.

use std::collections::HashSet;

use buflab_core::result::RunResult;
use serde_json::{json, Value};

/// 20 NewReno flows, 10 Mb/s, RTT 50–150 ms (RTT·C ≈ 125 packets of 1000 B), RED with
/// min_th 30, max_th 90 (gentle, w_q 0.002, max_p 0.1: ns-2's defaults) in a 150-packet buffer,
/// marking ECN-capable packets. 40 measured seconds after 20 of warm-up.
fn dumbbell(ecn: bool) -> Value {
    json!({
        "duration": "60s", "warmup": "20s", "seed": 1,
        "monitor": { "events": true },
        "network": {
            "bottleneck": {
                "rate": "10Mbps", "buffer": "150pkt", "queue": "red",
                "red_min_th": 30, "red_max_th": 90, "red_ecn": true,
            },
            "access": { "rate": "100Mbps" },
            "rtt": "50ms..150ms",
        },
        "traffic": [ { "kind": "long_lived", "flows": 20, "ecn": ecn, "start": "0s..5s" } ],
    })
}

/// Retransmissions per drop stay 1.00 in a run where no timeout fired: fast retransmit and
/// NewReno's partial ACKs resend exactly the lost segments (only go-back-N after a timeout
/// resends segments the receiver holds).
fn assert_one_retransmission_per_drop_without_timeouts(r: &RunResult) {
    let s = &r.summary;
    if s.timeouts == 0 {
        assert_eq!(
            s.retransmits, s.drops,
            "no timeout, yet {} retransmissions for {} drops",
            s.retransmits, s.drops
        );
    }
}

#[test]
fn red_with_ecn_marks_instead_of_dropping_and_keeps_the_link_busy() {
    let r = super::run(dumbbell(true));
    let s = &r.summary;
    // The RED decisions are marks: thousands of them, and (nearly) no drops — a drop would
    // need the buffer full or the average above 2·max_th, which the reactions prevent.
    assert!(s.marks > 500, "{} marks", s.marks);
    assert!(s.drops * 100 <= s.marks, "{} drops for {} marks", s.drops, s.marks);
    assert_eq!(s.mark_rate, s.marks as f64 / s.arrivals as f64);
    // Each flow halves at most once per window: fewer reactions than marks (several marks of
    // one window count once), but many.
    assert!(s.ecn_reactions > 0 && s.ecn_reactions <= s.marks, "{} reactions", s.ecn_reactions);
    // No loss to repair, and a reaction retransmits nothing.
    assert_eq!(s.timeouts, 0);
    assert_one_retransmission_per_drop_without_timeouts(&r);
    // Early, gentle marking keeps the link busy with a short queue (RED's purpose): the
    // time-average queue sits between the thresholds, far below the 150-packet buffer. The
    // run gives 99.7 %; 95 % leaves room for changes in the TCP model, while a broken
    // reaction (a reduction on every ECE ACK) would idle the link well below it.
    assert!(s.utilization >= 0.95, "utilization {:.4}", s.utilization);
    assert!((30.0..=90.0).contains(&s.mean_queue_pkts), "mean queue {:.2}", s.mean_queue_pkts);
    // The links table reports the same marks as the summary.
    assert_eq!((r.links[0].marks, r.links[0].mark_rate), (s.marks, s.mark_rate));
}

#[test]
fn the_same_red_without_ecn_drops_instead_and_repairs_every_drop() {
    let with = super::run(dumbbell(true));
    let r = super::run(dumbbell(false));
    let s = &r.summary;
    // Not ECN-capable: the same queue drops where it marked, and nothing is marked or echoed.
    assert_eq!((s.marks, s.mark_rate, s.ecn_reactions), (0, 0.0, 0));
    assert!(s.drops > 500, "{} drops", s.drops);
    // Same order of congestion signals as the ECN run's marks (the dynamics differ: a drop
    // costs a retransmission and sometimes a timeout).
    let ratio = s.drops as f64 / with.summary.marks as f64;
    assert!((0.5..2.0).contains(&ratio), "{} drops vs {} marks", s.drops, with.summary.marks);
    assert_one_retransmission_per_drop_without_timeouts(&r);
    // Windows of about eight segments do not always yield three duplicate ACKs, so here
    // timeouts fire and go-back-N resends more than was lost; still, every lost segment is
    // repaired: from the event log, each (flow, segment) dropped before any copy of it was
    // admitted is admitted later. (A dropped go-back-N resend of a segment already admitted
    // needs no repair.) Drops in the last 5 s are left out: after repeated timeouts the
    // backed-off timer (200 ms, 400 ms, … 3.2 s) may resend after the run's end.
    assert!(s.retransmits >= s.drops);
    let log = r.events.as_ref().expect("the scenario records the event log");
    let (start, end) = (20_000_000_000_000u64, 55_000_000_000_000u64);
    let mut admitted: HashSet<(u32, u32)> = HashSet::new();
    let mut lost: HashSet<(u32, u32)> = HashSet::new();
    let mut repaired = 0u64;
    for i in 0..log.len() {
        let key = (log.flow[i], log.seq[i]);
        match log.event[i] {
            0 => {
                admitted.insert(key);
                repaired += u64::from(lost.remove(&key));
            }
            2 if !admitted.contains(&key) && (start..end).contains(&log.time[i].0) => {
                lost.insert(key);
            }
            _ => {}
        }
    }
    assert!(lost.is_empty(), "{} lost segments never resent ({repaired} were)", lost.len());
    assert!(repaired > 500);
}

#[test]
fn each_parking_lot_hop_has_its_own_queue_discipline() {
    // Hop 1 drop-tail, hop 2 RED marking, one ECN-capable entry crossing both. Only hop 2
    // marks; the links table says so.
    let r = super::run(json!({
        "duration": "30s", "warmup": "10s",
        "network": {
            "topology": "parking_lot", "hops": 2,
            "bottleneck": { "rate": "20Mbps", "buffer": "150pkt" },
            "hop": [ {}, { "rate": "10Mbps", "queue": "red", "red_min_th": 30, "red_max_th": 90, "red_ecn": true } ],
            "summary_hop": 2,
            "rtt": "50ms..150ms",
        },
        "traffic": [ { "kind": "long_lived", "flows": 10, "ecn": true } ],
    }));
    assert_eq!(r.links[0].marks, 0);
    assert!(r.links[1].marks > 0);
    assert_eq!(r.summary.marks, r.links[1].marks);
}
