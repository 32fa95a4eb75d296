//! Invariants on random small scenarios (proptest), dumbbells and parking lots: conservation
//! of packets, exactly-once in-order delivery, queues within their limits, determinism, and
//! computing ahead changing nothing. Some draws run the live auto-sizer, whose limit changes
//! mid-run must keep all of these.

use buflab_core::endpoint::Endpoints;
use buflab_core::result::RunResult;
use buflab_core::scenario::Scenario;
use buflab_core::tcp::flow::TcpFlow;
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use serde_json::{json, Value};

pub(crate) fn small_scenario() -> impl Strategy<Value = Value> {
    (
        1u32..6, // TCP flows
        0u32..3, // UDP sources
        prop_oneof![Just("reno"), Just("newreno"), Just("sack"), Just("linux")],
        0u64..40,        // buffer, packets
        prop::bool::ANY, // buffer in bytes instead
        1u64..50,        // bottleneck Mb/s
        5u64..200,       // min RTT ms
        prop::bool::ANY, // delayed ACKs
        prop_oneof![Just(0.0), Just(0.001), Just(0.02)],
        0u64..1000, // seed
        // jitter µs, closed-loop users, handshake, server machines, classes per machine, pacing,
        // congestion control, ECN, the bottleneck's queue discipline
        (
            prop_oneof![Just(0u64), Just(50)],
            0u32..4,
            prop::bool::ANY,
            0u32..3,
            1u32..3,
            prop_oneof![Just("off"), Just("window"), Just("linux")],
            prop_oneof![Just("reno"), Just("bic"), Just("cubic")],
            prop::bool::ANY,
            prop_oneof![Just("droptail"), Just("red"), Just("drop_head"), Just("optical_fifo")],
        ),
    )
        .prop_map(|(tcp, udp, variant, buffer, bytes, mbps, rtt, delack, loss, seed, extra)| {
            let (jitter, users, handshake, machines, classes, pacing, cc, ecn, queue) = extra;
            // An optical FIFO holds N − 1 packets, N a power of two: the largest such buffer
            // not above the one drawn, in packets.
            let optical = queue == "optical_fifo";
            let (buffer, bytes) =
                if optical { ((buffer + 2).next_power_of_two() / 2 - 1, false) } else { (buffer, bytes) };
            let buffer = buffer.max(u64::from(optical));
            // RED needs room between its thresholds: a packet buffer of at least 3.
            let red = queue == "red" && !bytes && buffer >= 3;
            let red_max_th = buffer;
            // One draw in five paces the receivers' ACKs too (derived from the seed: the
            // strategy's tuples are full).
            let ack_pacing = seed % 5 == 2;
            let buffer = if bytes { format!("{}B", buffer * 700) } else { format!("{buffer}pkt") };
            let mut traffic = vec![json!({
                "kind": "long_lived", "flows": tcp, "tcp": variant, "start": "0s..1s",
                "delayed_ack": delack, "jitter": format!("{jitter}us"), "packet": "576B",
                "pacing": pacing, "cc": cc, "ecn": ecn, "ack_pacing": ack_pacing,
            })];
            recovery_options(&mut traffic[0], variant, seed);
            if users > 0 {
                // One draw in four, users think a whole number of packet transmissions at the
                // bottleneck, exactly (from the seed: the strategy's tuples are full), so that
                // their requests fall on the picosecond of its exits (`sim/requests.rs`).
                let think = if seed % 4 == 1 {
                    let tx = buflab_core::units::Rate::mbps(mbps).serialization(576).ps();
                    json!({ "dist": "constant", "value": format!("{}ps", tx * (seed / 4 % 3)) })
                } else {
                    json!({ "dist": "exponential", "mean": "200ms" })
                };
                traffic.push(json!({
                    "kind": "closed_loop", "users": users, "tcp": variant, "handshake": handshake,
                    "delayed_ack": delack, "packet": "576B", "start": "0s..1s", "pacing": pacing,
                    "ack_pacing": ack_pacing,
                    "file_size": { "dist": "pareto", "mean": "20KB", "shape": 1.5 },
                    "think": think,
                }));
            }
            if seed % 3 == 0 {
                // Open-loop flows arriving during the run (slots added on demand).
                traffic.push(json!({
                    "kind": "open_loop", "arrivals": 8, "tcp": variant, "handshake": handshake,
                    "delayed_ack": delack, "packet": "576B",
                    "file_size": { "dist": "pareto", "mean": "10KB", "shape": 1.5 },
                }));
            }
            if udp > 0 {
                // With machines, half the time the UDP sources are cross traffic (thesis Fig 4.8).
                let path = if machines > 0 && seed % 2 == 0 { "cross" } else { "main" };
                traffic.push(json!({
                    "kind": "udp_poisson", "flows": udp, "rate": format!("{}Kbps", mbps * 100),
                    "packet": "500B", "path": path,
                }));
            }
            let mut v = json!({
                "duration": "4s", "warmup": "1s", "seed": seed,
                "network": {
                    "bottleneck": { "rate": format!("{mbps}Mbps"), "buffer": buffer, "delay": "1ms" },
                    "access": {
                        "rate": if machines > 0 { "20Mbps" } else { "100Mbps" },
                        "buffer": if machines > 0 { "30pkt" } else { "unlimited" },
                        "machines": machines, "classes": classes,
                    },
                    "rtt": format!("{rtt}ms..{}ms", rtt + 30), "loss": loss,
                },
                "monitor": { "interval": "250ms" },
                "traffic": traffic,
            });
            if red {
                let bottleneck = &mut v["network"]["bottleneck"];
                bottleneck["queue"] = json!("red");
                bottleneck["red_min_th"] = json!(1);
                bottleneck["red_max_th"] = json!(red_max_th);
                bottleneck["red_max_p"] = json!(0.2);
                bottleneck["red_ecn"] = json!(ecn);
            }
            if queue == "drop_head" {
                // A held discipline: the link picks each departure (link/held.rs).
                v["network"]["bottleneck"]["queue"] = json!("drop_head");
            }
            if optical {
                // Fiber delay lines beside the timetable (thesis ch. 6): the traffic here sends
                // packets of several sizes, padded to the slot; its size is fixed, so no
                // auto-sizer.
                v["network"]["bottleneck"]["queue"] = json!("optical_fifo");
                v["network"]["bottleneck"]["optical_pad"] = json!(true);
                return v;
            }
            with_autosize(&mut v, seed);
            v
        })
}

/// The options of the SACK and Linux senders, derived from the seed (the strategy's tuples are
/// full): the timer's restart rule, Limited Transmit for the others, and for `linux` the slow
/// start (HyStart++ with any controller but BBR) and, one draw in two, the profile's own
/// delayed ACKs and host jitter (the key left out).
fn recovery_options(entry: &mut Value, variant: &str, seed: u64) {
    match variant {
        "sack" | "linux" => {
            entry["rto_restart"] = json!(["every_retransmission", "head", "ack_only"][(seed % 3) as usize]);
        }
        _ => entry["limited_transmit"] = json!(seed.is_multiple_of(2)),
    }
    if variant == "linux" {
        if seed % 4 == 1 {
            entry["slow_start"] = json!("hystart++");
        }
        if seed % 2 == 1 {
            let map = entry.as_object_mut().expect("a traffic entry is a table");
            map.remove("delayed_ack");
            map.remove("jitter");
        }
    }
}

/// Small dumbbells whose long-lived flows close mid-run, as the live page's flow control
/// closes them (a `[[change]]` entry): some or all at a drawn time, and one draw in two then
/// opening more and closing all but one again. On per-flow access links (with machines,
/// flows do not change): a draw with machines gets the dumbbell's own access links instead.
pub(crate) fn small_scenario_with_closes() -> impl Strategy<Value = Value> {
    (small_scenario(), 1_100u64..3_500, 0u64..6, prop::bool::ANY).prop_map(|(mut v, at_ms, left, again)| {
        if v["network"]["access"]["machines"].as_u64() != Some(0) {
            v["network"]["access"] = json!({ "rate": "100Mbps", "buffer": "unlimited", "machines": 0 });
            for t in v["traffic"].as_array_mut().expect("a list of entries") {
                if t.get("path").is_some() {
                    t["path"] = json!("main");
                }
            }
        }
        let open = v["traffic"][0]["flows"].as_u64().expect("long-lived flows first");
        let mut changes = vec![json!({ "at": format!("{at_ms}ms"), "flows": left % open })];
        if again {
            changes.push(json!({ "at": format!("{}ms", at_ms + 200), "flows": open + 2 }));
            changes.push(json!({ "at": format!("{}ms", at_ms + 400), "flows": 1 }));
        }
        v["change"] = json!(changes);
        v
    })
    // The reader refuses a change of flows where the simulator feeds a link ahead of time from
    // one flow (a run of one flow into a discipline that holds its packets: `flows_refused` in
    // scenario/change.rs), as it should; such a draw tests nothing here. Any other refusal
    // still fails the test.
    .prop_filter("a change of flows the reader refuses on a run of one flow", |v| {
        !matches!(Scenario::from_value(v), Err(e) if e.to_string().contains("no change of flows on a run of one flow"))
    })
}

/// One draw in three runs the live auto-sizer (six 500-ms steps, a target most draws miss now
/// and then, so the limit moves both ways).
fn with_autosize(v: &mut Value, seed: u64) {
    if seed % 3 == 1 {
        v["autosize"] = json!({ "target_utilization": 0.9, "interval": "500ms", "start": 1 + seed % 40 });
    }
}

/// Parking lots of 1–3 hops, each hop possibly overriding the bottleneck's rate and buffer:
/// main TCP flows across every hop, cross entries (long-lived, closed-loop or UDP) over a
/// random run of hops, sometimes open-loop arrivals at the last hop and random loss.
///
/// Most draws give every TCP flow send jitter. Without it, ACK-clocked flows through hops of
/// equal rate in series fall into phase: packets leave each busy hop on a lattice of service
/// times, each flow shifts that lattice by its own fixed delays, and the sums coincide to the
/// picosecond at the next hop. The equivalence test must set such runs aside (see below),
/// and would set aside most of them.
pub(crate) fn small_parking_lot() -> impl Strategy<Value = Value> {
    (
        1usize..4,                                                                // hops
        prop::collection::vec((1u64..30, 0u64..30, prop::bool::ANY), 0..4),      // overrides: Mb/s, buffer, in bytes
        1u32..4,                                                                 // main flows
        prop::collection::vec((0usize..3, 0usize..3, 0u8..3, 1u32..3), 0..4),    // cross: first, extra hops, kind, count
        prop_oneof![Just("reno"), Just("newreno"), Just("sack"), Just("linux")],
        prop::bool::ANY,                                                         // delayed ACKs
        prop_oneof![Just(0.0), Just(0.01)],                                      // random loss per hop
        (1u64..30, 0u64..40, prop_oneof![1 => Just(0u64), 3 => Just(50)], 0u64..1000), // Mb/s, buffer, jitter µs, seed
    )
        .prop_map(|(k, overrides, main, cross, variant, delack, loss, (mbps, buffer, jitter, seed))| {
            let tcp = |kind: &str, hops: String| {
                json!({
                    "kind": kind, "hops": hops, "tcp": variant, "delayed_ack": delack, "packet": "576B",
                    "start": "0s..1s", "jitter": format!("{jitter}us"),
                })
            };
            let mut traffic = vec![json!({
                "kind": "long_lived", "flows": main, "tcp": variant, "delayed_ack": delack,
                "jitter": format!("{jitter}us"), "packet": "576B", "start": "0s..1s",
            })];
            recovery_options(&mut traffic[0], variant, seed);
            for (first, extra, kind, count) in cross {
                let first = first % k;
                let last = (first + extra).min(k - 1);
                let hops = format!("{}..{}", first + 1, last + 1);
                traffic.push(match kind {
                    0 => {
                        let mut flows = tcp("long_lived", hops);
                        flows["flows"] = json!(count);
                        flows
                    }
                    1 => {
                        let mut user = tcp("closed_loop", hops);
                        user["users"] = json!(count);
                        user["file_size"] = json!({ "dist": "pareto", "mean": "20KB", "shape": 1.5 });
                        user["think"] = json!({ "dist": "exponential", "mean": "200ms" });
                        user
                    }
                    _ => json!({
                        "kind": "udp_poisson", "flows": count, "hops": hops,
                        "rate": format!("{}Kbps", mbps * 100), "packet": "500B",
                    }),
                });
            }
            if seed % 3 == 0 {
                let mut arrivals = tcp("open_loop", k.to_string());
                arrivals["start"] = json!("0s");
                arrivals["arrivals"] = json!(8);
                arrivals["file_size"] = json!({ "dist": "pareto", "mean": "10KB", "shape": 1.5 });
                traffic.push(arrivals);
            }
            let hop: Vec<Value> = overrides
                .into_iter()
                .take(k)
                .map(|(rate, buffer, bytes)| {
                    let buffer = if bytes { format!("{}B", buffer * 700) } else { format!("{buffer}pkt") };
                    json!({ "rate": format!("{rate}Mbps"), "buffer": buffer })
                })
                .collect();
            let mut v = json!({
                "duration": "4s", "warmup": "1s", "seed": seed,
                "network": {
                    "topology": "parking_lot", "hops": k, "hop": hop, "loss": loss,
                    "bottleneck": { "rate": format!("{mbps}Mbps"), "buffer": format!("{buffer}pkt"), "delay": "1ms" },
                    "access": { "rate": "100Mbps" },
                    "rtt": "20ms..60ms",
                },
                "monitor": { "interval": "250ms" },
                "traffic": traffic,
            });
            with_autosize(&mut v, seed);
            v
        })
}

/// Packets conserved, exactly-once in-order delivery, queues within their limits, and the
/// same scenario and seed giving identical results.
pub(crate) fn check_invariants(s: &Scenario) -> Result<(), TestCaseError> {
    let mut net = buflab_core::simulate(s);

    // Every packet sent is delivered, dropped or still in flight.
    let c = net.sim.counts;
    prop_assert_eq!(c.injected, c.delivered + c.queue_drops + c.loss_drops + c.in_flight, "{:?}", c);

    for f in &net.sim.flows {
        if let Endpoints::Tcp(TcpFlow { sender, receiver }) = &f.endpoints {
            let r = receiver.stats;
            // Each data arrival is delivered once, recognised as a duplicate, or held
            // out of order: nothing is delivered twice or lost inside the receiver.
            prop_assert_eq!(r.arrivals, r.delivered + r.duplicates + receiver.out_of_order() as u64);
            if f.user.is_none() {
                // In-order delivery on the one connection: segments 0..rcv_nxt exactly.
                prop_assert_eq!(r.delivered, receiver.rcv_nxt as u64);
                prop_assert!(sender.snd_una <= receiver.rcv_nxt && receiver.rcv_nxt <= sender.snd_max);
            }
        }
    }
    // Every completed transfer ends after it starts.
    for t in &net.sim.transfers {
        prop_assert!(t.end.is_none_or(|e| e > t.start));
    }

    let r = buflab_core::result::collect(s, &mut net);
    // No monitored queue ever holds more than its limit (waiting packets; see link.rs). The
    // auto-sized link may hold more than its last limit while packets admitted under a larger
    // one drain, but never more than the largest limit in force.
    let autosized = r.autosize.iter().map(|a| a.buffer_pkts.max(a.next_buffer_pkts) as i64).max();
    prop_assert_eq!(autosized.is_some(), s.autosize.is_some());
    for (i, l) in r.links.iter().enumerate() {
        let (pkts, bytes) = l.max_queue_ever;
        let limit = match autosized {
            Some(peak) if i == s.network.summary_hop => Some(peak),
            _ => l.buffer_pkts,
        };
        prop_assert!(limit.is_none_or(|n| pkts <= n as u64), "{}: {} > {:?}", l.name, pkts, limit);
        prop_assert!(
            l.buffer_bytes.is_none_or(|n| bytes <= n as u64),
            "{}: {} > {:?}",
            l.name,
            bytes,
            l.buffer_bytes
        );
        prop_assert!(l.utilization <= 1.0 + 1e-12);
    }
    prop_assert!(r.summary.utilization <= 1.0 + 1e-12);

    // Same scenario and seed ⇒ identical results (wall time aside).
    let mut again = buflab_core::run(s);
    again.summary.wall_s = r.summary.wall_s;
    same_tables(&again, &r)
}

/// Summary, flows, links and time series equal, and as many transfers.
fn same_tables(a: &RunResult, b: &RunResult) -> Result<(), TestCaseError> {
    prop_assert_eq!(&a.summary, &b.summary);
    prop_assert_eq!(&a.flows, &b.flows);
    prop_assert_eq!(&a.links, &b.links);
    prop_assert_eq!(&a.timeseries, &b.timeseries);
    prop_assert_eq!(&a.autosize, &b.autosize);
    // Debug text: a bump without two departures has NaN gaps, which `==` never matches.
    prop_assert_eq!(format!("{:?}", a.bumps), format!("{:?}", b.bumps));
    prop_assert_eq!(a.transfers.len(), b.transfers.len());
    Ok(())
}

/// Computing ahead (express chains, senders running ahead, relay bottlenecks) is an
/// optimisation only: with it off, every hop is an event, and the results must be the
/// same to the last bit. The one exception is two packets reaching a shared queue (or a
/// shared express link, such as a server machine's NIC fed by its class queues) at the same
/// picosecond: each mode serves them in the order their events were scheduled, and those
/// orders differ. Delays drawn to the picosecond make that rare, but deterministic delays can
/// line flows up (a phase effect), so scenarios where it happened are set aside; in practice a
/// few percent of cases (at a NIC, 3 of 3,090 drawn at 512 cases a test; seed 191, two ECN
/// flows through RED behind one machine's two classes, differed before they were).
///
/// Both runs apply the scenario's `[[change]]` entries, if any, at their times.
pub(crate) fn check_computing_ahead_changes_nothing(s: &Scenario) -> Result<(), TestCaseError> {
    let mut fast = buflab_core::topology::build(s);
    buflab_core::live::run(s, &mut fast);
    let mut slow = buflab_core::topology::build(s);
    slow.sim.set_compute_ahead(false);
    buflab_core::live::run(s, &mut slow);
    prop_assume!(slow.sim.links.iter().all(|l| l.simultaneous_arrivals() == 0));
    prop_assume!(slow.sim.simultaneous_shared_arrivals() == 0);
    prop_assume!(fast.sim.request_ties().1 == 0);
    prop_assert!(slow.sim.sched.executed() >= fast.sim.sched.executed());
    let a = buflab_core::result::collect(s, &mut fast);
    let mut b = buflab_core::result::collect(s, &mut slow);
    b.summary.wall_s = a.summary.wall_s;
    b.summary.events = a.summary.events;
    same_tables(&a, &b)?;
    same_transfers(&a, &b)
}

/// The transfers of two runs alike (NaN ≠ NaN: incomplete ones compared by their other fields).
fn same_transfers(a: &RunResult, b: &RunResult) -> Result<(), TestCaseError> {
    for (x, y) in a.transfers.iter().zip(&b.transfers) {
        prop_assert_eq!(
            (x.flow, x.conn, x.bytes, x.start_s, x.complete),
            (y.flow, y.conn, y.bytes, y.start_s, y.complete)
        );
        prop_assert!(x.end_s == y.end_s || (x.end_s.is_nan() && y.end_s.is_nan()));
        prop_assert_eq!((x.retransmits, x.timeouts), (y.retransmits, y.timeouts));
    }
    Ok(())
}

/// Two runs alike to the last bit: every table (wall time aside), the events simulated and
/// the packet counts.
pub(crate) fn same_results(a: &RunResult, mut b: RunResult) -> Result<(), TestCaseError> {
    b.summary.wall_s = a.summary.wall_s;
    same_tables(a, &b)?;
    same_transfers(a, &b)?;
    prop_assert_eq!(a.conservation, b.conservation);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn invariants_hold_on_the_dumbbell(v in small_scenario()) {
        check_invariants(&super::scenario(v))?;
    }

    #[test]
    fn invariants_hold_on_the_parking_lot(v in small_parking_lot()) {
        check_invariants(&super::scenario(v))?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn computing_ahead_changes_nothing_on_the_dumbbell(v in small_scenario()) {
        check_computing_ahead_changes_nothing(&super::scenario(v))?;
    }

    #[test]
    fn computing_ahead_changes_nothing_on_the_parking_lot(v in small_parking_lot()) {
        check_computing_ahead_changes_nothing(&super::scenario(v))?;
    }

    #[test]
    fn computing_ahead_changes_nothing_when_flows_close_mid_run(v in small_scenario_with_closes()) {
        check_computing_ahead_changes_nothing(&super::scenario(v))?;
    }
}

#[test]
fn an_auto_sized_link_fed_by_one_link_counts_each_arrival_at_its_time() {
    // A held bottleneck (drop-head) behind one machine's 1 Gb/s uplink could take arrivals
    // 4.6 µs (a packet's serialization on the uplink) before the global clock: the auto-sizer
    // reading its totals at the 3.5 s step then counted one arrival of the next interval
    // (2,816 against 2,815). The case proptest found; computing ahead must change nothing.
    let s = super::scenario(json!({
        "duration": "4s", "warmup": "1s", "seed": 595,
        "network": {
            "bottleneck": { "rate": "41Mbps", "buffer": "0pkt", "delay": "1ms", "queue": "drop_head" },
            "access": { "rate": "20Mbps", "buffer": "30pkt", "machines": 1, "classes": 2 },
            "rtt": "23ms..53ms",
        },
        "monitor": { "interval": "250ms" },
        "traffic": [
            { "kind": "long_lived", "flows": 5, "tcp": "newreno", "start": "0s..1s", "delayed_ack": false,
              "jitter": "50us", "packet": "576B", "pacing": "linux", "cc": "cubic", "limited_transmit": false },
            { "kind": "closed_loop", "users": 1, "tcp": "newreno", "handshake": false, "delayed_ack": false,
              "packet": "576B", "start": "0s..1s", "pacing": "linux",
              "file_size": { "dist": "pareto", "mean": "20KB", "shape": 1.5 },
              "think": { "dist": "exponential", "mean": "200ms" } },
            { "kind": "udp_poisson", "flows": 1, "rate": "4100Kbps", "packet": "500B", "path": "main" },
        ],
        "autosize": { "target_utilization": 0.9, "interval": "500ms", "start": 36 },
    }));
    check_computing_ahead_changes_nothing(&s).unwrap();
}

#[test]
fn computing_ahead_really_saves_events() {
    // Guards the equivalence test above: if the switch stopped switching, both modes would
    // trivially agree. With relays, senders running ahead and express chains, a data packet
    // costs about one event (leaving its access link) instead of four.
    let s = super::scenario(json!({
        "duration": "5s",
        "network": { "bottleneck": { "rate": "10Mbps", "buffer": "20pkt" }, "rtt": "20ms..60ms" },
        "traffic": [ { "kind": "long_lived", "flows": 4 } ],
    }));
    let mut fast = buflab_core::topology::build(&s);
    fast.sim.run();
    let mut slow = buflab_core::topology::build(&s);
    slow.sim.set_compute_ahead(false);
    slow.sim.run();
    let (f, w) = (fast.sim.sched.executed(), slow.sim.sched.executed());
    assert!(w > 3 * f, "events: {w} one per hop vs {f} computing ahead");
}

#[test]
fn a_bottleneck_relays_to_users_clients_whose_requests_run_ahead() {
    // Recipe T1's shape, small: users behind server machines' class queues and NICs, with a
    // handshake and ACKs at once. The bottleneck relays (it hands each packet to its client at
    // once) only because each user's request, the one packet a client sends unasked, runs
    // ahead of the bottleneck's exits when it is due by one (`sim/requests.rs`). A second
    // entry's users come in on the cross link, so their requests run on the global clock:
    // the transfers table must still list every download in the order they began. Results
    // must equal one event per hop, and the relay must save an event per data packet.
    let s = super::scenario(json!({
        "duration": "6s", "warmup": "1s", "seed": 7,
        "network": {
            "bottleneck": { "rate": "20Mbps", "buffer": "30pkt" },
            "access": { "machines": 2, "classes": 2, "rate": "8Mbps", "nic": "20Mbps", "buffer": "200pkt" },
            "cross": { "rate": "20Mbps", "buffer": "100pkt" },
            "rtt": "40ms..80ms",
        },
        "traffic": [
            { "kind": "closed_loop", "users": 30, "tcp": "newreno", "handshake": true, "delayed_ack": false,
              "packet": "1000B", "start": "0s..2s",
              "file_size": { "dist": "pareto", "mean": "20KB", "shape": 1.5 },
              "think": { "dist": "exponential", "mean": "100ms" } },
            { "kind": "closed_loop", "users": 10, "tcp": "newreno", "handshake": true, "delayed_ack": false,
              "packet": "1000B", "start": "0s..2s", "path": "cross",
              "file_size": { "dist": "pareto", "mean": "20KB", "shape": 1.5 },
              "think": { "dist": "exponential", "mean": "100ms" } },
        ],
    }));
    check_computing_ahead_changes_nothing(&s).unwrap();
    let mut fast = buflab_core::topology::build(&s);
    fast.sim.run();
    assert!(fast.sim.links[0].is_relay(), "the bottleneck relays to the users' clients");
    let r = buflab_core::result::collect(&s, &mut fast);
    assert!(r.transfers.len() > 200, "{} downloads", r.transfers.len());
    assert!(
        r.transfers.windows(2).all(|w| w[0].start_s <= w[1].start_s),
        "transfers in the order they began"
    );
    assert!((0..2).all(|t| r.transfers.iter().any(|x| x.traffic == t)), "both entries download");
    let mut slow = buflab_core::topology::build(&s);
    slow.sim.set_compute_ahead(false);
    slow.sim.run();
    let (f, w) = (fast.sim.sched.executed(), slow.sim.sched.executed());
    assert!(w > f + r.summary.departures, "events: {w} one per hop vs {f} computing ahead");
}

#[test]
fn open_loop_flows_joining_shared_links_later_change_nothing() {
    // Found by the property test: server machines (a NIC per machine, fed by its class queue
    // and by cross traffic), one long-lived flow, UDP cross traffic and open-loop arrivals.
    // Before the open-loop flows arrived, machine 1's NIC had one feeder, the UDP source's
    // delay line, so its packets were entered into the NIC ahead of time; the first
    // open-loop flow on that machine then queued behind packets not yet due, 2.4 ms late.
    let v = json!({
        "duration": "4s", "warmup": "1s", "seed": 384,
        "network": {
            "bottleneck": { "rate": "1Mbps", "buffer": "0pkt", "delay": "1ms" },
            "access": { "rate": "20Mbps", "buffer": "30pkt", "machines": 2, "classes": 1 },
            "rtt": "5ms..35ms",
        },
        "traffic": [
            { "kind": "long_lived", "flows": 1, "tcp": "reno", "start": "0s..1s", "packet": "576B" },
            {
                "kind": "open_loop", "arrivals": 8, "tcp": "reno", "packet": "576B",
                "file_size": { "dist": "pareto", "mean": "10KB", "shape": 1.5 },
            },
            { "kind": "udp_poisson", "flows": 1, "rate": "100Kbps", "packet": "500B", "path": "cross" },
        ],
    });
    let s = super::scenario(v);
    check_computing_ahead_changes_nothing(&s).expect("computing ahead changed the results");
}

#[test]
fn a_request_due_at_an_exit_runs_in_the_order_of_their_events() {
    // Users think exactly one packet's transmission at the bottleneck (1000 B at 8 Mb/s:
    // 1 ms), so a request often falls on the picosecond of the exit of the packet queued
    // behind its download's last one. With one event per hop that exit's event was scheduled
    // when the last packet left, before the download completed and scheduled the request, so
    // it ran first; the relay ran the request first and sent its SYN ahead of the ACK of that
    // exit (found by hand: every one of 12 seeds differed, and none with a think time of
    // 1.1 ms). Think times of 0 and of two to five transmissions cover the other orders.
    for (seed, think) in [(1, "1ms"), (2, "1ms"), (3, "0ms"), (4, "2ms"), (5, "3ms")] {
        let s = super::scenario(json!({
            "duration": "6s", "warmup": "1s", "seed": seed,
            "network": {
                "bottleneck": { "rate": "8Mbps", "buffer": "30pkt" },
                "access": { "rate": "100Mbps" },
                "rtt": "40ms..90ms",
            },
            "traffic": [
                { "kind": "closed_loop", "users": 6, "tcp": "newreno", "handshake": true, "delayed_ack": false,
                  "packet": "1000B", "start": "0s..1s",
                  "file_size": { "dist": "pareto", "mean": "8KB", "shape": 1.5 },
                  "think": { "dist": "constant", "value": think } },
            ],
        }));
        check_computing_ahead_changes_nothing(&s)
            .unwrap_or_else(|e| panic!("seed {seed}, think {think}: {e}"));
        let mut fast = buflab_core::topology::build(&s);
        fast.sim.run();
        assert!(fast.sim.links[0].is_relay(), "the bottleneck relays");
        let (decided, unknown) = fast.sim.request_ties();
        assert_eq!(unknown, 0, "seed {seed}, think {think}");
        if think != "0ms" {
            assert!(decided > 10, "seed {seed}, think {think}: {decided} requests at an exit's picosecond");
        }
    }
}

#[test]
fn two_class_queues_leaving_into_their_nic_at_one_picosecond_are_seen() {
    // Found by the property test (seed 191): two ECN flows of one server machine, each in a
    // class queue of its own, through RED with ECN and 2 % random loss. Twice the two class
    // queues' exits reached the NIC, an express link with no buffer to count them, at one
    // picosecond, and the two modes took them in different orders (the exception of
    // `check_computing_ahead_changes_nothing`): the runs differed, utilization 0.463 with
    // computing ahead against 0.532 without. Such a case must be seen, and set aside.
    let s = super::scenario(json!({
        "duration": "4s", "warmup": "1s", "seed": 191,
        "network": {
            "bottleneck": { "rate": "2Mbps", "buffer": "19pkt", "delay": "1ms", "queue": "red",
                "red_min_th": 1, "red_max_th": 19, "red_max_p": 0.2, "red_ecn": true },
            "access": { "rate": "20Mbps", "buffer": "30pkt", "machines": 1, "classes": 2 },
            "rtt": "41ms..71ms", "loss": 0.02,
        },
        "traffic": [ { "kind": "long_lived", "flows": 2, "tcp": "reno", "cc": "cubic", "ecn": true,
            "start": "0s..1s", "delayed_ack": false, "packet": "576B" } ],
    }));
    let mut slow = buflab_core::topology::build(&s);
    slow.sim.set_compute_ahead(false);
    slow.sim.run();
    assert!(slow.sim.simultaneous_shared_arrivals() > 0, "the ties at the NIC were not counted");
    let compared = check_computing_ahead_changes_nothing(&s);
    assert!(matches!(compared, Err(TestCaseError::Reject(_))), "not set aside: {compared:?}");
}
