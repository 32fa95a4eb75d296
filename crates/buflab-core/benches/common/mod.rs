//! What the benchmarks share: running a scenario a few times and keeping the best and the
//! median wall time (on a shared machine other work only ever slows a run down).

use std::time::Instant;

use buflab_core::scenario::Scenario;
use buflab_core::topology::Network;

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
