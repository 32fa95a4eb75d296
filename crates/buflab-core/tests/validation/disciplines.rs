//! Queue disciplines end to end: a discipline that holds its packets (drop-head) runs through
//! the link's held path (link/held.rs) in full simulations. The invariants of every
//! discipline (conservation, limits, determinism) are the property tests' (properties.rs draws
//! the discipline); here, what only a held discipline can get wrong.

use serde_json::{json, Value};

/// The example dumbbell, 100 flows through 100 Mb/s, with the given bottleneck.
fn dumbbell(bottleneck: Value) -> Value {
    json!({
        "duration": "30s", "warmup": "10s",
        "network": { "bottleneck": bottleneck, "access": { "rate": "1Gbps" }, "rtt": "75ms..125ms" },
        "traffic": [ { "kind": "long_lived", "flows": 100, "max_window": "64KB", "start": "0s..5s" } ],
    })
}

#[test]
fn drop_head_that_never_needs_to_drop_is_exactly_drop_tail() {
    // A buffer no window-limited flow can fill: drop-head never purges, and a held FIFO
    // gives exactly what drop-tail's timetable gives (computing ahead aside: only the number
    // of events differs, the held link being one event per packet and per service).
    let big = |queue| dumbbell(json!({ "rate": "100Mbps", "buffer": "100000pkt", "queue": queue }));
    let tail = super::run(big("droptail"));
    let head = super::run(big("drop_head"));
    assert_eq!(head.summary.drops, 0);
    assert!(head.summary.events > tail.summary.events);
    let mut same = head.summary.clone();
    (same.events, same.wall_s) = (tail.summary.events, tail.summary.wall_s);
    assert_eq!(same, tail.summary);
    assert_eq!(head.flows, tail.flows);
    assert_eq!(head.timeseries, tail.timeseries);
}

#[test]
fn drop_head_drops_from_the_front_and_stays_within_its_buffer() {
    let r = super::run(json!({
        "duration": "20s", "warmup": "5s", "monitor": { "events": true },
        "network": { "bottleneck": { "rate": "20Mbps", "buffer": "40pkt", "queue": "drop_head" },
                     "rtt": "50ms..150ms" },
        "traffic": [ { "kind": "long_lived", "flows": 30, "tcp": "sack" } ],
    }));
    let log = r.events.expect("the event log was asked for");
    let count = |kind: u8| log.event.iter().filter(|&&e| e == kind).count();
    let (enqueues, drops, purges) = (count(0), count(2), count(4));
    // A full buffer admits the arrival and purges the oldest waiting packet: every drop is a
    // purge, none an arriving packet refused.
    assert!(purges > 100, "{purges} purges");
    assert_eq!(drops, 0);
    assert!(enqueues > 10 * purges);
    // The queue never holds more than its limit, and it reached it.
    assert_eq!(r.max_queue_ever.0, 40);
    let c = r.conservation;
    assert_eq!(c.injected, c.delivered + c.queue_drops + c.loss_drops + c.in_flight, "{c:?}");
    // Each purge removes the packet at the head of the queue: the one after it in the log is
    // the oldest admitted packet still waiting, so the purged one is never a packet just
    // admitted (that would be drop-tail).
    for i in (1..log.len()).filter(|&i| log.event[i] == 4) {
        let just_admitted = log.event[i - 1] == 0 && log.time[i - 1] == log.time[i];
        let same_packet = (log.flow[i - 1], log.seq[i - 1]) == (log.flow[i], log.seq[i]);
        assert!(!(just_admitted && same_packet), "purged the arrival at row {i}");
    }
    // Utilization stays high: TCP sees the losses as a drop-tail queue's, a queueing delay
    // sooner.
    assert!(r.summary.utilization > 0.9, "{}", r.summary.utilization);
}
