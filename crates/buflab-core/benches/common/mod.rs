//! What the benchmarks share: running a scenario a few times and keeping the best and the
//! median wall time (on a shared machine other work only ever slows a run down).

use std::time::Instant;

use buflab_core::scenario::Scenario;
use buflab_core::topology::Network;

/// The value after `name` on the command line (`--ports 32`), parsed as `T`; `default`
/// without it. A value that does not parse stops the benchmark with a message.
pub fn arg<T: std::str::FromStr>(args: &[String], name: &str, default: T) -> T {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .map(|v| v.parse().unwrap_or_else(|_| panic!("{name} takes a number, got {v}")))
        .unwrap_or(default)
}

/// Runs `scenario` `repeat` times (at least once); returns the last run's network and the
/// best and median wall seconds.
pub fn timed_runs(scenario: &Scenario, repeat: usize) -> (Network, f64, f64) {
    let mut walls = Vec::new();
    let mut last = None;
    for _ in 0..repeat.max(1) {
        let began = Instant::now();
        let net = buflab_core::simulate(scenario);
        walls.push(began.elapsed().as_secs_f64());
        last = Some(net);
    }
    walls.sort_by(f64::total_cmp);
    (last.expect("at least one run"), walls[0], walls[walls.len() / 2])
}

/// The benchmark's scenario from its JSON; one that does not validate stops it with the
/// reason (a benchmark's own scenario, so a defect in the benchmark).
pub fn scenario(v: &serde_json::Value) -> Scenario {
    Scenario::from_value(v).unwrap_or_else(|e| panic!("the benchmark scenario is not valid: {e}"))
}

/// The lines every benchmark ends with, in the form `scripts/bench` reads: the runs, their
/// wall times, and `departures` and `events` per wall second (best and median run).
pub fn print_rates(departures: u64, events: u64, repeat: usize, best: f64, median: f64) {
    println!("runs                   {repeat}");
    println!("wall seconds           best {best:.3}, median {median:.3}");
    let per = |n: u64| format!("best {:.0}, median {:.0}", n as f64 / best, n as f64 / median);
    println!("departures per second  {}", per(departures));
    println!("events per second      {}", per(events));
}

/// Peak resident memory of this process, from /proc (Linux); None elsewhere.
fn peak_rss_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}

/// The line every benchmark ends with: the process's peak memory, and with `per = (n, what)`
/// it divided by n (fixed costs included, so close to what one costs only when n is large).
pub fn print_memory(per: Option<(u64, &str)>) {
    match (peak_rss_mib(), per) {
        (Some(m), Some((n, what))) => {
            println!("peak memory            {m:.1} MiB, {:.0} B per {what}", m * 1048576.0 / n.max(1) as f64)
        }
        (Some(m), None) => println!("peak memory            {m:.1} MiB"),
        (None, _) => println!("peak memory            unavailable on this platform"),
    }
}
