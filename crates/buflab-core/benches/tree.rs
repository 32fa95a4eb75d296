//! The network benchmark: a binary tree of tiny-buffer routers with Poisson ingress (thesis
//! Fig 5.1), timed end to end.
//!
//! Scenario: 63 routers (depth 6, fanout 2), every router's output link 1 Gb/s with a
//! 20-packet buffer (drop-tail, or `--bjp` for the Bounded Jitter Policy with D = Δ = 10), 64
//! UDP Poisson sources of 1000-B packets, two per leaf, at a load factor ρ = 0.9 on the root's
//! link (`--load` to change it); 10 s simulated (`--seconds`). Prints router departures (the
//! packets every router's link sent, summed over the 63), events, wall time, router departures
//! per wall second, events per router departure and peak memory. Each packet crosses 6
//! routers; its source's timer, its access link and each router's link exit are its events.
//!
//! Run: `cargo bench -p buflab-core --bench tree` (add `-- --repeat R --seconds S --load L
//! --bjp`). The scenario runs R times (default 5); the best and the median are reported, as
//! the dumbbell benchmark does.

mod common;

use common::Flags;

fn main() {
    let flags = Flags::parse(&["--seconds", "--repeat", "--load"], &["--bjp"]);
    let seconds: f64 = flags.value("--seconds", 10.0, "a number of seconds");
    let repeat = flags.count("--repeat", 5) as usize;
    let load: f64 = flags.value("--load", 0.9, "a load factor");
    let bjp = flags.has("--bjp");
    let mut v = serde_json::json!({
        "name": "bench-tree",
        "seed": 1,
        "duration": format!("{seconds}s"),
        "network": {
            "topology": "tree",
            "tree": { "depth": 6, "fanout": 2 },
            "bottleneck": { "rate": "1Gbps", "buffer": "20pkt" },
            "rtt": "10ms",
        },
        "traffic": [ { "kind": "udp_poisson", "flows": 64, "load": load, "packet": "1000B" } ],
    });
    if bjp {
        v["network"]["bottleneck"]["queue"] = serde_json::json!("bjp");
    }
    let scenario = common::scenario(&v);
    let (net, best, median) = common::timed_runs(&scenario, repeat);
    let departures: u64 = net.monitored.iter().map(|m| net.sim.links[m.link as usize].departures).sum();
    let events = net.sim.sched.executed();
    let queue = if bjp { "BJP, D = Δ = 10" } else { "drop-tail" };
    println!("scenario: binary tree, depth 6 (63 routers), 1Gbps links, 20pkt buffers ({queue}), 64 Poisson sources at rho = {load}, 1000B, {seconds}s simulated");
    println!("router departures      {departures}");
    println!("events                 {events}");
    println!("events per departure   {:.3}", events as f64 / departures as f64);
    common::print_rates(departures, events, repeat, best, median);
    common::print_memory(None);
}
