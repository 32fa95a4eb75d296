//! The optical FIFO model's speed: slots per wall second.
//!
//! For each N (and K), a request sequence is generated first (not timed), then run through
//! the model, counting and checking Appendix E's properties as it always does; the best and
//! the median of R runs are reported, because on a shared machine other work only ever slows
//! a run down.
//!
//! Run: `cargo bench -p buflab-queue --bench optical` (add `-- --slots S --repeat R` to
//! vary). The default sequence is Bernoulli at load 0.95 with a departure in 90 % of the
//! slots, which keeps the buffer busy, W in use and the lines full.

use std::time::Instant;

use buflab_queue::optical::{Layout, OpticalBuffer, Pattern, RequestStream, Requests};

fn arg(args: &[String], name: &str, default: u64) -> u64 {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .map(|v| v.parse().unwrap_or_else(|_| panic!("{name} takes a whole number, got {v}")))
        .unwrap_or(default)
}

/// Seconds to run `requests` through a fresh buffer of `layout`, and how many departed.
fn run(layout: &Layout, requests: &[Requests]) -> (f64, u64) {
    let mut b = OpticalBuffer::new(layout.clone());
    let began = Instant::now();
    for r in requests {
        b.step(r.departure, r.arrival);
    }
    let secs = began.elapsed().as_secs_f64();
    assert_eq!(b.violations().total(), 0);
    (secs, std::hint::black_box(b.counts().departures))
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let slots = arg(&args, "--slots", 10_000_000) as usize;
    let repeat = arg(&args, "--repeat", 5).max(1);
    println!("{:>6} {:>5} {:>6} {:>14} {:>14} {:>10}", "N", "K", "lines", "best slots/s", "median", "served");
    for (n, k) in [(16, 1), (64, 1), (64, 4), (1024, 1), (1024, 32)] {
        let layout = Layout::new(n, k).expect("a valid layout");
        let pattern = Pattern::Bernoulli { load: 0.95, depart: 0.9 };
        let requests: Vec<Requests> = RequestStream::new(pattern, n, 1).take(slots).collect();
        let mut rates: Vec<f64> = Vec::new();
        let mut departures = 0;
        for _ in 0..repeat {
            let (secs, d) = run(&layout, &requests);
            rates.push(slots as f64 / secs);
            departures = d;
        }
        rates.sort_by(|a, b| b.total_cmp(a));
        println!(
            "{n:>6} {k:>5} {:>6} {:>14.3e} {:>14.3e} {:>9.1}%",
            layout.lines(),
            rates[0],
            rates[rates.len() / 2],
            100.0 * departures as f64 / (0.9 * slots as f64)
        );
    }
}
