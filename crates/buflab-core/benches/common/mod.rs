//! What the benchmarks share: running a scenario a few times and keeping the best and the
//! median wall time (on a shared machine other work only ever slows a run down).

use std::time::Instant;

use buflab_core::scenario::Scenario;
use buflab_core::topology::Network;

/// A benchmark's command line: `--name value` options and bare `--name` switches, each one it
/// knows. A word it does not know, a value missing or one that does not parse stops it with
/// one line naming the option, the value and what was expected (a mistyped option must not
/// leave a default silently in force); `--help` lists the options.
pub struct Flags {
    words: Vec<String>,
}

impl Flags {
    /// Reads the process's arguments: `valued` options take a value, `switches` do not.
    /// Cargo's own `--bench` (what `cargo bench` passes) is accepted and ignored.
    pub fn parse(valued: &[&str], switches: &[&str]) -> Flags {
        let words: Vec<String> = std::env::args().skip(1).collect();
        let known = || {
            let mut all: Vec<String> = valued.iter().map(|v| format!("{v} VALUE")).collect();
            all.extend(switches.iter().map(|s| s.to_string()));
            all.join(", ")
        };
        let mut i = 0;
        while i < words.len() {
            let w = words[i].as_str();
            if w == "--help" || w == "-h" {
                println!("options: {}", known());
                std::process::exit(0);
            }
            if valued.contains(&w) {
                if words.get(i + 1).is_none() {
                    fail(&format!("{w}: expected a value after it"));
                }
                i += 2;
            } else if switches.contains(&w) || w == "--bench" {
                i += 1;
            } else {
                fail(&format!("unknown option {w:?}; expected one of {}", known()));
            }
        }
        Flags { words }
    }

    /// Every value given to option `name`, in order (an option may repeat).
    pub fn all(&self, name: &str) -> Vec<&str> {
        let mut out = Vec::new();
        let mut i = 0;
        while i < self.words.len() {
            if self.words[i] == name {
                out.push(self.words[i + 1].as_str());
                i += 2;
            } else {
                i += 1;
            }
        }
        out
    }

    /// The text of option `name`, if given; its first value when repeated (`scripts/bench`
    /// puts the user's options before a preset's, and the user's win).
    pub fn text(&self, name: &str) -> Option<&str> {
        self.all(name).first().copied()
    }

    /// Option `name` parsed as `T` (`expected` says what it takes), or `default`.
    pub fn value<T: std::str::FromStr>(&self, name: &str, default: T, expected: &str) -> T {
        match self.text(name) {
            None => default,
            Some(v) => v.parse().unwrap_or_else(|_| fail(&format!("{name} {v}: expected {expected}"))),
        }
    }

    /// Option `name` as a count of at least 1.
    pub fn count(&self, name: &str, default: u64) -> u64 {
        let n = self.value(name, default, "a whole number of at least 1");
        if n == 0 {
            fail(&format!("{name} 0: expected a whole number of at least 1"));
        }
        n
    }

    /// Whether switch `name` is given.
    #[allow(dead_code)] // each benchmark compiles this module; not all of them take switches
    pub fn has(&self, name: &str) -> bool {
        self.words.iter().any(|w| w == name)
    }
}

/// Stops the benchmark on bad input: one line, exit status 2.
pub fn fail(message: &str) -> ! {
    eprintln!("error: {message}");
    std::process::exit(2)
}

/// Runs `scenario` `repeat` times (at least once); returns the last run's network and the
/// best and median wall seconds.
pub fn timed_runs(scenario: &Scenario, repeat: usize) -> (Network, f64, f64) {
    let mut walls = Vec::new();
    let mut last = None;
    for _ in 0..repeat.max(1) {
        // The last run's network goes before the next is built: the peak memory printed is
        // one run's, whatever `--repeat`.
        drop(last.take());
        let began = Instant::now();
        let net = buflab_core::simulate(scenario);
        walls.push(began.elapsed().as_secs_f64());
        last = Some(net);
    }
    walls.sort_by(f64::total_cmp);
    (last.expect("at least one run"), walls[0], walls[walls.len() / 2])
}

/// The benchmark's scenario from its JSON; one that does not validate (an option's value the
/// scenario reader refuses, such as `--seconds 0`) stops it with the reader's line.
pub fn scenario(v: &serde_json::Value) -> Scenario {
    Scenario::from_value(v)
        .unwrap_or_else(|e| fail(&format!("the benchmark's scenario with these options: {e}")))
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
