//! The switch benchmark: the CIOQ router of recipes `s2_voq` and `s4_voq` (thesis chapter 3),
//! timed end to end.
//!
//! Scenario: an N×N switch (`--ports`, default 8) of 2.5 Gb/s ports, uniform load, speedup 1,
//! VOQs of `--voq` packets (default 3), 100-packet outputs, scheduled by `--scheduler` (`mwm`,
//! the default, or `islip`); Reno with W_max = 64 segments of 1000 B behind 25 Mb/s access
//! links (M = 100), eq. 3.1's flows per output (489), RTT uniform in 75–125 ms, flows started
//! over the first second; `--seconds` simulated (default 5), no warm-up. The S4 32-port point is
//! `--ports 32 --voq 1` (the recipe runs 90 s of it). Prints the utilization, the switch's
//! departures (packets sent by its output lines), events, wall time, departures per wall
//! second and peak memory.
//!
//! Run: `cargo bench -p buflab-core --bench switch` (add `-- --ports N --voq B --seconds S
//! --scheduler NAME --repeat R`), or through `scripts/bench --bench switch`. The scenario runs R
//! times (default 5); the best and the median are reported, as the dumbbell benchmark does.

mod common;

use common::Flags;

fn main() {
    let flags = Flags::parse(&["--ports", "--voq", "--seconds", "--repeat", "--scheduler"], &[]);
    let ports: u32 = flags.value("--ports", 8, "a whole number of ports");
    let voq: u32 = flags.value("--voq", 3, "a whole number of packets");
    let seconds: f64 = flags.value("--seconds", 5.0, "a number of seconds");
    let repeat = flags.count("--repeat", 5) as usize;
    let scheduler = flags.text("--scheduler").unwrap_or("mwm");
    let v = serde_json::json!({
        "name": "bench-switch",
        "seed": 1,
        "duration": format!("{seconds}s"),
        "network": {
            "topology": "switch",
            "access": { "rate": "25Mbps" },
            "rtt": "75ms..125ms",
            "switch": {
                "ports": ports, "rate": "2.5Gbps", "scheduler": scheduler, "speedup": 1,
                "voq_buffer": voq, "output_buffer": 100, "load": "uniform",
            },
        },
        "traffic": [ {
            "kind": "long_lived", "tcp": "reno", "packet": "1000B", "max_window": "61440B",
            "flows_per_output": "eq3.1", "start": "0s..1s",
        } ],
    });
    let scenario = common::scenario(&v);
    let (mut net, best, median) = common::timed_runs(&scenario, repeat);
    let r = buflab_core::result::collect(&scenario, &mut net);
    let s = &r.summary;
    println!("scenario: {ports}x{ports} switch, {scheduler}, speedup 1, 2.5Gbps ports, {voq}pkt VOQs, uniform load, Reno, 25Mbps access, RTT 75-125ms, 1000B, {seconds}s simulated");
    println!("utilization            {:.4}", s.utilization);
    println!("switch departures      {}", s.departures);
    println!("events                 {}", s.events);
    common::print_rates(s.departures, s.events, repeat, best, median);
    common::print_memory(None);
}
