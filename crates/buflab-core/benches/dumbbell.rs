//! The engine benchmark: a fixed dumbbell, timed end to end.
//!
//! Scenario: 1 Gb/s bottleneck with a 100-packet drop-tail buffer, 1,000 long-lived NewReno
//! flows each behind its own 10 Gb/s access link, RTT uniform in 75–125 ms, 1500 B packets,
//! 20 s simulated, no warm-up. Prints bottleneck departures per wall second, events per wall
//! second and peak memory (also per flow).
//!
//! Run: `cargo bench -p buflab-core --bench dumbbell` (add `-- --flows N --seconds S --repeat R`
//! to vary, `--buffer B` for another buffer in packets, `--queue NAME` for another discipline
//! at the bottleneck (`optical_fifo` with `--buffer 63`: what buffering in fiber costs),
//! `--tcp VARIANT` to run another loss recovery than `newreno` (`linux` runs the Linux
//! profile, with its own defaults: delayed ACKs, IW10, 100 µs host jitter), `--set KEY=VALUE`
//! to change another key of the traffic entry (repeatable; the value is JSON, or a string:
//! `--set delayed_ack=false --set jitter=0s`), and
//! `--bump PACER` to put a pacing bump on every access link: `delay` on the rate it measures
//! over 16 packets, or `token_bucket`, `modified_token_bucket`, `token_thread` at 10 Mb/s, as
//! the `tiny_bump` recipe's). The scenario runs R times (default 5); the best and
//! the median are reported, because on a shared machine other work only ever slows a run
//! down.

mod common;

use common::{fail, Flags};

/// The pacing bump of `--bump PACER` on every access link, if asked for.
fn bump(flags: &Flags) -> Option<serde_json::Value> {
    let pacer = flags.text("--bump")?;
    Some(match pacer {
        "delay" => serde_json::json!({ "pacer": "delay", "pace_rate": "measured", "window": 16 }),
        "token_bucket" | "modified_token_bucket" | "token_thread" => {
            serde_json::json!({ "pacer": pacer, "pace_rate": "10Mbps", "depth": "1500B" })
        }
        other => fail(&format!(
            "--bump {other}: expected delay, token_bucket, modified_token_bucket or token_thread"
        )),
    })
}

fn main() {
    let flags = Flags::parse(
        &["--tcp", "--flows", "--seconds", "--repeat", "--bump", "--buffer", "--queue", "--set"],
        &[],
    );
    let tcp = flags.text("--tcp").unwrap_or("newreno");
    let flows = flags.count("--flows", 1000);
    let seconds: f64 = flags.value("--seconds", 20.0, "a number of seconds");
    let repeat = flags.count("--repeat", 5);
    let bump = bump(&flags);
    let buffer: u64 = flags.value("--buffer", 100, "a whole number of packets");
    let queue = flags.text("--queue").unwrap_or("droptail");
    let mut v = serde_json::json!({
        "name": "bench-dumbbell",
        "seed": 1,
        "duration": format!("{seconds}s"),
        "network": {
            "bottleneck": { "rate": "1Gbps", "buffer": format!("{buffer}pkt"), "queue": queue },
            "access": { "rate": "10Gbps" },
            "rtt": "75ms..125ms",
        },
        "traffic": [ {
            "kind": "long_lived", "flows": flows, "tcp": tcp,
            "packet": "1500B", "max_window": "20MB", "start": "0s..1s",
        } ],
    });
    if let Some(b) = &bump {
        v["network"]["bump"] = serde_json::json!([b]);
    }
    for kv in flags.all("--set") {
        let Some((key, value)) = kv.split_once('=') else {
            fail(&format!("--set {kv}: expected KEY=VALUE (a key of the traffic entry)"))
        };
        let value = serde_json::from_str(value).unwrap_or_else(|_| serde_json::Value::from(value));
        v["traffic"][0][key] = value;
    }
    let scenario = common::scenario(&v);
    let (net, best, median) = common::timed_runs(&scenario, repeat as usize);
    let mut net = net;
    let pending = net.sim.sched.pending();
    let r = buflab_core::result::collect(&scenario, &mut net);
    let s = &r.summary;
    println!("scenario: 1Gbps bottleneck, {buffer}pkt {queue} buffer, {flows} flows tcp={tcp} cc=reno, 10Gbps access, RTT 75-125ms, 1500B, {seconds}s simulated");
    println!("traffic entry          {}", v["traffic"][0]);
    if let Some(b) = &bump {
        println!("bump on every access link: {b}");
    }
    println!("utilization            {:.4}", s.utilization);
    println!("drop rate              {:.5}", s.drop_rate);
    println!("bottleneck departures  {}", s.departures);
    println!("events                 {}", s.events);
    println!("events pending at end  {pending}");
    common::print_rates(s.departures, s.events, repeat as usize, best, median);
    common::print_memory(Some((flows, "flow")));
}
