//! Live sessions: a run stepped, read and changed as it goes (`buflab serve`), against the
//! same scenario with its changes written as `[[change]]` entries.

use buflab_core::live::Session;
use buflab_core::result::RunResult;
use buflab_core::units::Time;
use serde_json::{json, Map, Value};

use crate::scenario;

/// 20 flows of 10 Mb/s access at 100 Mb/s, 40 s: small enough for the fast suite.
fn dumbbell() -> Value {
    json!({
        "duration": "40s", "warmup": "2s", "seed": 7,
        "network": { "bottleneck": { "rate": "100Mbps", "buffer": "200pkt" }, "rtt": "60ms..140ms",
                     "access": { "rate": "1Gbps" } },
        "monitor": { "interval": "500ms" },
        "traffic": [ { "kind": "long_lived", "flows": 20 } ],
    })
}

/// Everything a run returns but the wall time, as text (NaN-safe), for exact comparison.
fn fingerprint(mut r: RunResult) -> String {
    r.summary.wall_s = 0.0;
    format!("{:?} {:?} {:?} {:?} {:?}", r.summary, r.flows, r.links, r.timeseries, r.autosize)
}

/// Where two fingerprints first differ, with some text on either side (a failed comparison
/// of whole runs prints that, not two pages of tables).
fn first_difference(a: &str, b: &str) -> String {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let at = a.iter().zip(&b).position(|(x, y)| x != y).unwrap_or(a.len().min(b.len()));
    let near = |s: &[char]| s[at.saturating_sub(300)..(at + 200).min(s.len())].iter().collect::<String>();
    format!("first difference at character {at}:\n  {}\n  {}", near(&a), near(&b))
}

/// A fingerprint but for the events simulated, which computing ahead saves.
fn fingerprint_of_results(mut r: RunResult) -> String {
    r.summary.events = 0;
    fingerprint(r)
}

fn entry(v: Value) -> Map<String, Value> {
    v.as_object().expect("a table").clone()
}

/// Stepping in small steps and reading at each changes nothing: the stops leave later events
/// pending in their order, and a reading only brings the monitor's books up to the time
/// reached. Exact equality, bit for bit, because that is what the replay rests on.
#[test]
fn stepping_and_reading_change_nothing() {
    let s = scenario(dumbbell());
    let plain = fingerprint(buflab_core::run(&s));
    let mut session = Session::new(&s);
    let mut t = Time::ZERO;
    let mut readings = 0;
    while !session.done() {
        // Uneven steps, some shorter than a packet time, some of seconds.
        t += Time(if readings % 3 == 0 { 7_919_000 } else { 123_456_789_012 });
        session.run_until(t);
        let r = session.read();
        assert!(r.utilization >= 0.0 && r.utilization <= 1.0 + 1e-9, "{r:?}");
        readings += 1;
    }
    assert!(readings > 100);
    assert_eq!(fingerprint(session.finish()), plain);
}

/// The scripted session: the buffer to 10 packets at 10 s, 50 more flows at 20 s, the
/// auto-sizer at 30 s; applied live at the times reached, then replayed from the scenario
/// with `[[change]]` entries: identical results, and the changes visible in them.
#[test]
fn a_live_session_replays_exactly_from_its_changes() {
    let s = scenario(dumbbell());
    let mut session = Session::new(&s);
    let script = [
        (10, json!({ "buffer": "10pkt" })),
        (20, json!({ "flows": 70 })),
        (30, json!({ "target_utilization": 0.9, "autosize": true })),
    ];
    let mut written = Vec::new();
    for (at, change) in script {
        session.run_until(Time::from_secs(at));
        written.push(Value::Object(session.apply(&entry(change)).expect("a valid change")));
    }
    assert_eq!(written[0]["at"], json!("10s"));
    let live = session.finish();
    assert_eq!(live.summary.flows, 70, "20 flows, then 50 more");
    assert!(!live.autosize.is_empty(), "the auto-sizer took steps from 30 s on");
    let mut replay = dumbbell();
    replay["change"] = Value::Array(written);
    let replayed = buflab_core::run(&scenario(replay));
    assert_eq!(fingerprint(replayed), fingerprint(live));
}

/// Closing flows: a closed flow stops sending new data, delivers what it had outstanding and
/// goes quiet, and the utilization with 2 of 20 flows left is that of 2 flows.
#[test]
fn closed_flows_finish_what_they_sent_and_stop() {
    let mut v = dumbbell();
    v["change"] = json!([{ "at": "10s", "flows": 2 }]);
    let s = scenario(v);
    let mut net = buflab_core::simulate(&s);
    let r = buflab_core::result::collect(&s, &mut net);
    for f in 2..20 {
        let t = net.sim.flows[f].endpoints.tcp().unwrap();
        assert_eq!(t.sender.phase(), buflab_core::tcp::sender::Phase::Done, "flow {f}");
        assert_eq!(t.sender.snd_una, t.sender.snd_max, "flow {f}: everything it sent was delivered");
    }
    let open = net.sim.flows[0].endpoints.tcp().unwrap();
    assert_ne!(open.sender.phase(), buflab_core::tcp::sender::Phase::Done);
    // Every packet is delivered, dropped or still in flight (the conservation invariant).
    let c = net.sim.counts;
    assert_eq!(c.injected, c.delivered + c.queue_drops + c.loss_drops + c.in_flight);
    assert_eq!(r.summary.flows, 20);
}

/// A change of `cc` and `pacing` is for the entry's flows added from then on (docs/scenario.md,
/// `change[].cc`): those it adds run CUBIC, paced, and those already running keep Reno,
/// unpaced. (Once, the senders shared their entry's settings as built before the run, and
/// flows added after such a change silently ran the old ones.)
#[test]
fn flows_added_after_a_change_of_cc_and_pacing_run_with_them() {
    use buflab_core::tcp::cc::CcKind;
    use buflab_core::tcp::pacer::Pacing;
    let mut v = dumbbell();
    v["duration"] = json!("12s");
    v["change"] = json!([{ "at": "10s", "cc": "cubic", "pacing": "window", "flows": 25 }]);
    let s = scenario(v);
    let net = buflab_core::simulate(&s);
    let settings = |f: usize| {
        let cfg = &net.sim.flows[f].endpoints.tcp().expect("a TCP flow").sender.cfg;
        (cfg.cc, cfg.pacing)
    };
    for f in 0..20 {
        assert_eq!(settings(f), (CcKind::Reno, Pacing::Off), "flow {f}, running before the change");
    }
    for f in 20..25 {
        assert_eq!(settings(f), (CcKind::Cubic, Pacing::Window), "flow {f}, added by the change");
    }
}

/// Closing flows mid-run, the same to the last bit whether the simulator computes ahead or
/// runs every hop as an event: senders running ahead are held back from a close they would
/// otherwise have passed. A live session that closes them when it has reached a time puts the
/// close just past where its senders had run (within a round trip and a full queue: at most
/// 140 ms and 200 packets of 1500 B at 100 Mb/s, 24 ms, here), and replays exactly from what
/// it wrote.
#[test]
fn closing_flows_mid_run_is_the_same_computing_ahead_or_not() {
    let mut v = dumbbell();
    v["duration"] = json!("16s");
    // Send jitter: without it, flows on deterministic delays line up to the picosecond at the
    // bottleneck, where the two modes may serve a tie in either order (see the premise below).
    v["traffic"][0]["jitter"] = json!("50us");
    // (time, flows): closes at 5 s and 11 s, 9 opened at 8 s.
    let script = [(5, 3), (8, 12), (11, 1)];
    v["change"] = Value::Array(
        script.iter().map(|&(at, flows)| json!({ "at": format!("{at}s"), "flows": flows })).collect(),
    );
    let s = scenario(v.clone());
    let ahead = fingerprint_of_results(buflab_core::run(&s));
    let mut net = buflab_core::topology::build(&s);
    net.sim.set_compute_ahead(false);
    buflab_core::live::run(&s, &mut net);
    // The premise of exact equality: no two packets reached a queue at the same picosecond
    // (see `properties::check_computing_ahead_changes_nothing`).
    assert!(net.sim.links.iter().all(|l| l.simultaneous_arrivals() == 0));
    let every_hop = fingerprint_of_results(buflab_core::result::collect(&s, &mut net));
    assert!(
        every_hop == ahead,
        "computing ahead changed the results: {}",
        first_difference(&ahead, &every_hop)
    );

    v.as_object_mut().unwrap().remove("change");
    let mut session = Session::new(&scenario(v.clone()));
    let mut written = Vec::new();
    for (at, flows) in script {
        session.run_until(Time::from_secs(at));
        let e = session.apply(&entry(json!({ "flows": flows }))).expect("a valid change");
        let due = buflab_core::units::parse_time(e["at"].as_str().unwrap()).unwrap();
        assert!(due >= Time::from_secs(at) && due < Time::from_secs(at) + Time::from_ms(165), "{e:?}");
        // 20 (or 12) flows in full swing: some sender has always run ahead, so a close waits
        // (an opening applies at once).
        assert_eq!(due > Time::from_secs(at), flows != 12, "{e:?}");
        written.push(Value::Object(e));
    }
    let live = session.finish();
    assert_eq!(live.summary.flows, 20 + 9, "20 flows, 9 more opened at 8 s");
    let live_events = live.summary.events;
    let live = fingerprint_of_results(live);
    v["change"] = Value::Array(written);
    let s = scenario(v);
    let mut replayed = buflab_core::run(&s);
    assert_eq!(replayed.summary.events, live_events);
    replayed.summary.events = 0;
    let replayed = fingerprint(replayed);
    assert!(replayed == live, "live and replayed differ: {}", first_difference(&live, &replayed));
    let mut net = buflab_core::topology::build(&s);
    net.sim.set_compute_ahead(false);
    buflab_core::live::run(&s, &mut net);
    let every_hop = fingerprint_of_results(buflab_core::result::collect(&s, &mut net));
    assert!(
        every_hop == live,
        "the replay with an event per hop differs: {}",
        first_difference(&live, &every_hop)
    );
}

/// A live change is checked by the scenario reader: a bad value is one line naming the key,
/// and it changes nothing.
#[test]
fn a_bad_live_change_is_refused_and_changes_nothing() {
    let s = scenario(dumbbell());
    let plain = fingerprint(buflab_core::run(&s));
    let mut session = Session::new(&s);
    session.run_until(Time::from_secs(5));
    let e = session.apply(&entry(json!({ "buffer": "-3pkt" }))).unwrap_err().to_string();
    assert!(e.starts_with("change.buffer: got \"-3pkt\"; expected"), "{e}");
    let e = session.apply(&entry(json!({ "autosize": true }))).unwrap_err().to_string();
    assert!(e.starts_with("change.autosize: got true; expected a target first"), "{e}");
    let e = session.apply(&entry(json!({ "flows": 1.5 }))).unwrap_err().to_string();
    assert!(e.starts_with("change.flows: got 1.5; expected a whole number from 0 to"), "{e}");
    assert_eq!(fingerprint(session.finish()), plain);
}

/// A layered network of routers (thesis Fig 5.2) whose one entry spreads 16 flows over its
/// routes, each link a `queue` discipline: flows added mid-run take their entry's routes as
/// the flows before them did, on every topology built as a graph.
fn layered(queue: &str) -> Value {
    json!({
        "duration": "12s", "warmup": "1s", "seed": 3,
        "network": { "topology": "layered", "layered": { "stages": 2, "width": 2 },
                     "bottleneck": { "rate": "50Mbps", "buffer": "16pkt", "queue": queue },
                     "rtt": "20ms..40ms", "access": { "rate": "1Gbps" } },
        "traffic": [ { "kind": "long_lived", "flows": 16, "packet": "1000B", "start": "0s..1s" } ],
        "change": [ { "at": "3s", "flows": 40 }, { "at": "6s", "flows": 5 }, { "at": "9s", "flows": 24 } ],
    })
}

/// Flows added and closed on a network of routers, drop-tail and BJP (whose links hold their
/// packets): every packet is accounted for, every flow asked for is there, and a live session
/// applying the changes when it reached their times gives exactly the results of the scenario
/// with the entries it wrote as `[[change]]` entries (the replay rests on that, on every
/// topology built as a graph).
#[test]
fn flows_change_on_a_network_of_routers() {
    for queue in ["droptail", "bjp"] {
        let s = scenario(layered(queue));
        let mut net = buflab_core::simulate(&s);
        let c = net.sim.counts;
        assert_eq!(c.injected, c.delivered + c.queue_drops + c.loss_drops + c.in_flight, "{queue}");
        let replayed = buflab_core::result::collect(&s, &mut net);
        assert_eq!(replayed.summary.flows, 16 + 24 + 19, "{queue}: 16 flows, 24 added at 3 s, 19 at 9 s");

        // Live, at the same times (a close may come a little later: see the test above), and
        // replayed from what the session wrote.
        let mut v = layered(queue);
        let script = v.as_object_mut().unwrap().remove("change").unwrap();
        let mut session = Session::new(&scenario(v.clone()));
        let mut written = Vec::new();
        for c in script.as_array().unwrap() {
            let mut c = c.as_object().unwrap().clone();
            let at = c.remove("at").unwrap();
            let secs: u64 = at.as_str().unwrap().trim_end_matches('s').parse().unwrap();
            session.run_until(Time::from_secs(secs));
            written.push(Value::Object(session.apply(&c).expect("a valid change")));
        }
        let live = fingerprint(session.finish());
        v["change"] = Value::Array(written);
        let again = fingerprint(buflab_core::run(&scenario(v)));
        assert!(again == live, "{queue}: live and replayed differ: {}", first_difference(&live, &again));
    }
}
