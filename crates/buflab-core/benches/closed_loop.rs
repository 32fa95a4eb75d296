//! The closed-loop benchmark: recipe `t1`'s point with slow access (thesis §4.1.2, Fig 4.4
//! top), timed end to end.
//!
//! Scenario: 2,400 Harpoon-style users (`--users`) downloading Pareto files (mean 80 KB,
//! `--file`; shape 1.5) over new NewReno connections with a handshake, thinking an exponential
//! 1 s (`--think`) between them, started over the first 10 s (`--start`); 4 server machines
//! of 5 PSPacer classes each, every class a 100 Mb/s queue of 5,000 packets in front of its
//! machine's 1 Gb/s NIC (`--access fast`: one 1 Gb/s class per machine instead); a 1 Gb/s
//! bottleneck with a 1,000-packet buffer (`--buffer`), RTT 100 ms, 1500-B packets; `--seconds`
//! simulated (default 60; the recipe's point is 180), no warm-up. Each packet crosses its
//! class queue, its NIC and the bottleneck: four links a packet with the return path. Prints
//! the bottleneck's departures, events, events per departure, wall time, departures per wall
//! second and peak memory.
//!
//! Run: `cargo bench -p buflab-core --bench closed_loop` (add `-- --seconds S --users U
//! --buffer B --access slow|fast --file SIZE --think TIME --start A..B --repeat R`), or
//! `bash scripts/bench --scenario t1`. The scenario runs R times (default 3); the best and the
//! median are reported.
//!
//! The peak memory is printed divided by the users too. Bytes per idle user: users that
//! start after the end (`--start 5s..6s --seconds 1 --users 200000`) are built and never run;
//! the difference of the peak memory of two such runs with different `--users`, divided by
//! the difference of users, is what each costs, without the fixed costs. With `--think
//! 100000s --file 20KB --start 0s..20s --seconds 30`, each user is idle after one download.

mod common;

use common::{fail, Flags};

fn main() {
    let flags = Flags::parse(
        &["--seconds", "--users", "--buffer", "--repeat", "--access", "--think", "--start", "--file"],
        &[],
    );
    let seconds: f64 = flags.value("--seconds", 60.0, "a number of seconds");
    let users = flags.count("--users", 2400);
    let buffer: u32 = flags.value("--buffer", 1000, "a whole number of packets");
    let repeat = flags.count("--repeat", 3) as usize;
    let access = flags.text("--access").unwrap_or("slow");
    let think = flags.text("--think").unwrap_or("1s");
    let start = flags.text("--start").unwrap_or("0s..10s");
    let file = flags.text("--file").unwrap_or("80KB");
    let (classes, rate) = match access {
        "slow" => (5, "100Mbps"),
        "fast" => (1, "1Gbps"),
        other => fail(&format!("--access {other}: expected slow or fast")),
    };
    let v = serde_json::json!({
        "name": "bench-closed-loop",
        "seed": 1,
        "duration": format!("{seconds}s"),
        "network": {
            "topology": "dumbbell",
            "bottleneck": { "rate": "1Gbps", "buffer": format!("{buffer}pkt") },
            "access": { "machines": 4, "classes": classes, "rate": rate, "nic": "1Gbps", "buffer": "5000pkt" },
            "rtt": "100ms",
        },
        "traffic": [ {
            "kind": "closed_loop", "users": users, "tcp": "newreno", "packet": "1500B",
            "max_window": "20MB", "start": start, "handshake": true,
            "file_size": { "dist": "pareto", "mean": file, "shape": 1.5 },
            "think": { "dist": "exponential", "mean": think },
        } ],
    });
    let scenario = common::scenario(&v);
    let (mut net, best, median) = common::timed_runs(&scenario, repeat);
    let r = buflab_core::result::collect(&scenario, &mut net);
    let s = &r.summary;
    println!("scenario: t1's point, {users} closed-loop users, {access} access ({classes} classes of {rate} per machine, 4 machines), 1Gbps bottleneck, {buffer}pkt, RTT 100ms, NewReno, 1500B, {seconds}s simulated");
    println!("utilization            {:.4}", s.utilization);
    println!("bottleneck departures  {}", s.departures);
    println!("events                 {}", s.events);
    println!("events per departure   {:.3}", s.events as f64 / s.departures as f64);
    common::print_rates(s.departures, s.events, repeat, best, median);
    common::print_memory(Some((users, "user")));
}
