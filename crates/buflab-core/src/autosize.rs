//! The live auto-sizer (thesis ch. 4.3, "real-time buffer sizing"): within one run, find the
//! smallest bottleneck buffer that keeps the link at a target utilization.
//!
//! Read first: this page, then `sim/autosize.rs` (who drives it). Owns the search and its steps
//! (the rows of the `autosize` table); must not know links, events or the scenario (its settings
//! arrive as a [`Config`]).
//!
//! The thesis's testbed tool did it by binary search on the live router: "the buffer size is
//! set to an initial large value. In each step, after measuring the utilization over a period
//! of three seconds, the buffer size is decreased if the utilization is within 99.5 % of the
//! desired throughput, and is increased otherwise." Here that is two parts:
//!
//! - [`Search`], the decision logic: a pure state machine over whole packets that knows
//!   nothing of time or links, unit-tested on its own.
//! - [`AutoSizer`], the plumbing: every `interval` (from the end of warm-up on) it takes the
//!   bottleneck monitor's running totals, measures the utilization of the interval that just
//!   ended (leaving out its first `settle`), asks the search for the next buffer, and records
//!   a [`Step`]. The simulator owns the event (one pending `Event::Autosize`) and applies the
//!   new limit with [`crate::link::Link::set_limit`]: packets already waiting above a smaller
//!   limit stay and drain; only later arrivals see it. The emulator drives the same
//!   `AutoSizer` in real time (the binding's `AutoSizer`, `buflab autosize --emulate`): it
//!   feeds it the datapath's counts read at the step times and sets the limits it returns
//!   through the datapath's control channel.
//!
//! **Noise.** One interval is a short measurement: at 100 Mb/s with 100 flows, 3-s
//! utilizations scatter by ±0.6 %, about the difference between buffers 25 packets apart near
//! a 98 % target. Near the answer a step's verdict is close to a coin toss, so one search ends
//! anywhere in that band. The design keeps the thesis's search and adds what makes its answer
//! steady, each measured on the example dumbbell against the offline `buflab size`:
//! - a converged size that fails starts a fresh search (old bounds forgotten), rather than
//!   raising the lower bound, which ratcheted the answer up by ~20 packets in 300 s;
//! - the answer is the median of the sizes the search converged to ([`AutoSizer::answer`]);
//! - `settle`: the start of each interval, when TCP is still reacting to the change of limit
//!   (drops as a shrunk queue drains, windows regrowing into a larger buffer), is left out;
//!   measuring whole 3-s intervals biased the answer up by 6–8 packets (5 %);
//! - `recheck` (off by default): a converged size that keeps passing is tested from below
//!   again, so that a search that ended too high, or a load that came to need less, is found.
//!
//! A run without `[autosize]` has no auto-sizer, schedules no such event and pays nothing.

use crate::monitor::Cumulative;
use crate::units::Time;

/// The auto-sizer's settings: the scenario's `[autosize]` table (every key documented in
/// `docs/scenario.md`), read by the scenario reader.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Config {
    /// Target utilization, a fraction in (0, 1].
    pub target: f64,
    /// A step passes when its utilization is at least `tolerance × target`.
    pub tolerance: f64,
    /// Simulated time between steps.
    pub interval: Time,
    /// Time at the start of each interval left out of its measurement.
    pub settle: Time,
    /// First buffer tried, packets (≥ 1).
    pub start: u64,
    /// Passes in a row of the converged size that re-open the search below it (0: never).
    pub recheck: u32,
}

/// Binary search over whole packets for the smallest buffer that passes.
///
/// It keeps the largest buffer seen to fail (`miss`; a buffer of 0 packets is taken to fail)
/// and the smallest seen to pass (`pass`), and probes:
/// - while nothing has passed: the start size, then twice the last failure (grow by doubling
///   until a probe passes);
/// - once a size has passed: the midpoint of (miss, pass), rounded down, so that before any
///   failure each step halves the buffer, exactly as the offline `buflab size` bisects;
/// - once the two are one packet apart (converged): the passing size, again and again.
///
/// A converged size is tried every step, and:
/// - if it fails, the traffic has changed or the verdicts that led there were luck: the
///   search starts afresh over (0, twice that size), from its top, forgetting the old bounds.
///   That follows a load that needs more buffer (twice the size fails too, and the search
///   doubles on), and under noise each fresh search is another draw around the answer, where
///   keeping the failed size as the lower bound would ratchet the answer upwards with every
///   unlucky interval;
/// - if it passes `recheck` times in a row (0: never), the search is re-opened below it,
///   over (0, that size): a search that ended too high, or a load that came to need less
///   buffer, is found. Without it, nothing probes below a converged size that keeps passing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Search {
    /// The largest buffer known to fail (0 before any failure).
    miss: u64,
    /// The smallest buffer known to pass, if any (still passing when last probed).
    pass: Option<u64>,
    /// The buffer being tried.
    probe: u64,
    /// Passes in a row of the converged size that re-open the search below it (0: never).
    recheck: u32,
    /// Passes in a row of the converged size so far.
    held: u32,
}

impl Search {
    /// A search whose first probe is `start` packets (at least 1), re-opened below a
    /// converged size after it passes `recheck` times in a row (0: never).
    pub fn new(start: u64, recheck: u32) -> Search {
        Search { miss: 0, pass: None, probe: start.max(1), recheck, held: 0 }
    }

    /// The buffer being tried, packets.
    pub fn probe(&self) -> u64 {
        self.probe
    }

    /// The smallest buffer known to pass (None before the first pass, or after the converged
    /// size failed, until a probe passes again).
    pub fn best(&self) -> Option<u64> {
        self.pass
    }

    /// The largest buffer known to fail (0 before any failure, and after a fresh start).
    pub fn miss(&self) -> u64 {
        self.miss
    }

    /// The passing and failing bounds are one packet apart: the probe stays at the passing size.
    pub fn converged(&self) -> bool {
        self.pass.is_some_and(|p| p - self.miss <= 1)
    }

    /// Records whether the current probe passed and returns the next probe.
    pub fn record(&mut self, passed: bool) -> u64 {
        let b = self.probe;
        let was_converged = self.converged();
        if !was_converged {
            self.held = 0;
        }
        if passed {
            // Probes lie strictly between the bounds, or at `pass` once converged.
            self.pass = Some(b);
            if was_converged {
                self.held += 1;
                if self.recheck > 0 && self.held >= self.recheck {
                    // Held long enough: look below it again, over (0, b).
                    self.held = 0;
                    self.miss = 0;
                }
            }
        } else if was_converged {
            // The converged size failed: start afresh over (0, 2b), from its top.
            self.held = 0;
            self.pass = None;
            self.miss = 0;
            self.probe = b.saturating_mul(2);
            return self.probe;
        } else {
            self.miss = b;
        }
        self.probe = match self.pass {
            None => self.miss.saturating_mul(2),
            Some(p) if p - self.miss <= 1 => p,
            Some(p) => self.miss + (p - self.miss) / 2,
        };
        self.probe
    }
}

/// One step of the auto-sizer: the interval that ended at `time` and what was decided. It is
/// a row of the `autosize` table: its fields are that table's columns (`time` as `time_s`),
/// described in [`crate::result::autosize`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Step {
    pub time: Time,
    pub buffer_pkts: u64,
    pub utilization: f64,
    pub drops: u64,
    pub arrivals: u64,
    pub passed: bool,
    pub next_buffer_pkts: u64,
    pub converged: bool,
}

/// The controller of one link: times its steps and keeps the trajectory.
pub struct AutoSizer {
    /// The link whose limit it sets (the summary link: the dumbbell's bottleneck, or the
    /// parking lot's `network.summary_hop`).
    pub link: u32,
    interval: Time,
    /// Time at the start of each interval that is not measured.
    settle: Time,
    /// Utilization a step must reach: tolerance × target.
    threshold: f64,
    tolerance: f64,
    /// Stopped by a timed change: it takes no more steps (its table rows stay).
    stopped: bool,
    pub search: Search,
    /// When the next event is due: the end of the current interval or, before it, the end of
    /// its settling time (for the first interval without one, its start), when the event only
    /// takes the baseline.
    next_at: Time,
    /// End of the current interval, as scheduled.
    step_end: Time,
    /// The monitor's running totals at the start of the measured part of the interval, and
    /// when they were read.
    baseline: Option<(Time, Cumulative)>,
    pub steps: Vec<Step>,
    /// The size of each convergence, in order (a search that starts afresh or is re-opened
    /// and converges again adds one).
    pub settled: Vec<u64>,
}

impl AutoSizer {
    /// An auto-sizer for `link`, its first interval starting at `begin` (the end of warm-up).
    pub fn new(link: u32, config: &Config, begin: Time) -> AutoSizer {
        AutoSizer {
            link,
            interval: config.interval,
            settle: config.settle,
            threshold: config.tolerance * config.target,
            tolerance: config.tolerance,
            stopped: false,
            search: Search::new(config.start, config.recheck),
            next_at: begin + config.settle,
            step_end: begin + config.interval,
            baseline: None,
            steps: Vec::new(),
            settled: Vec::new(),
        }
    }

    /// When the next event is due.
    pub fn next_at(&self) -> Time {
        self.next_at
    }

    /// Whether it still takes steps (a timed change may stop it).
    pub fn running(&self) -> bool {
        !self.stopped
    }

    /// Stops it: no more steps; the link keeps the limit last set.
    pub fn stop(&mut self) {
        self.stopped = true;
    }

    /// Measures the steps from now on against a new target (a timed change).
    pub fn set_target(&mut self, target: f64) {
        self.threshold = self.tolerance * target;
    }

    /// The answer: the median of the sizes the search converged to, each convergence counted
    /// once (the upper one of an even count: the larger buffer errs towards the target). One
    /// search ends wherever the noise of single intervals takes it; each fresh search is
    /// another draw, and the median of the draws is steadier than any one.
    pub fn answer(&self) -> Option<u64> {
        let mut sizes = self.settled.clone();
        sizes.sort_unstable();
        sizes.get(sizes.len() / 2).copied()
    }

    /// The event at `now` with the link monitor's running totals as of `now`. The first event
    /// of an interval only takes the baseline; the next one, at its end, measures the interval,
    /// records a step and returns the limit for the next interval.
    ///
    /// In the simulator `now` is exactly [`Self::next_at`]. A driver in real time (the
    /// emulator's, which reads a datapath's counts) reads them a moment after: the interval's
    /// utilization is measured over the time between the two readings it actually took, and
    /// the next events keep to the schedule (a late reading delays no later step). In the
    /// simulator both are the same thing: the measured span is `interval − settle`.
    pub fn tick(&mut self, now: Time, totals: Cumulative) -> Option<u64> {
        debug_assert!(now >= self.next_at);
        let Some((since, start)) = self.baseline.take() else {
            self.baseline = Some((now, totals));
            self.next_at = self.step_end;
            return None;
        };
        let ended = self.step_end;
        self.step_end = ended + self.interval;
        if self.settle == Time::ZERO {
            self.baseline = Some((now, totals));
            self.next_at = self.step_end;
        } else {
            self.next_at = ended + self.settle;
        }
        let d = totals.minus(&start);
        let utilization = d.busy_ps as f64 / (now - since).0.max(1) as f64;
        let passed = utilization >= self.threshold;
        let buffer_pkts = self.search.probe();
        let was_converged = self.search.converged();
        let next = self.search.record(passed);
        let converged = self.search.converged();
        if converged && !was_converged {
            self.settled.push(next);
        }
        self.steps.push(Step {
            time: now,
            buffer_pkts,
            utilization,
            drops: d.drops,
            arrivals: d.arrivals,
            passed,
            next_buffer_pkts: next,
            converged,
        });
        Some(next)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs a search from `start` for `steps` steps against the verdicts of `passes(buffer)`;
    /// returns every probe in order and the search.
    fn probes(
        start: u64,
        recheck: u32,
        steps: usize,
        mut passes: impl FnMut(u64) -> bool,
    ) -> (Vec<u64>, Search) {
        let mut s = Search::new(start, recheck);
        let mut seen = Vec::new();
        for _ in 0..steps {
            let p = s.probe();
            seen.push(p);
            s.record(passes(p));
        }
        (seen, s)
    }

    // ---- The search ----

    #[test]
    fn halves_while_every_probe_passes() {
        // Nothing fails down to 1 packet: 100, 50, 25, 12, 6, 3, 1, then 1 for ever
        // (0 is taken to fail, so 1 packet converges).
        let (seen, s) = probes(100, 0, 9, |_| true);
        assert_eq!(seen, vec![100, 50, 25, 12, 6, 3, 1, 1, 1]);
        assert!(s.converged());
        assert_eq!(s.best(), Some(1));
    }

    #[test]
    fn bisects_after_the_first_failure_like_buflab_size() {
        // Passes from 45 packets on: 200 ✓, 100 ✓, 50 ✓, 25 ✗, then bisect (25, 50): the
        // probes of the offline bisection (tests/test_sizing.py: min(1, b/50) ≥ 0.9 from 200
        // packets probes the same sizes and finds 45).
        let (seen, s) = probes(200, 0, 12, |b| b >= 45);
        assert_eq!(seen, vec![200, 100, 50, 25, 37, 43, 46, 44, 45, 45, 45, 45]);
        assert_eq!((s.best(), s.miss(), s.converged()), (Some(45), 44, true));
    }

    #[test]
    fn grows_by_doubling_until_the_start_passes() {
        // Passes only from 350 packets: 100 ✗, 200 ✗, 400 ✓, then bisect (200, 400).
        let (seen, s) = probes(100, 0, 12, |b| b >= 350);
        assert_eq!(seen[..5], [100, 200, 400, 300, 350]);
        assert_eq!((s.best(), s.converged()), (Some(350), true));
    }

    #[test]
    fn a_converged_size_stays_while_it_passes() {
        // 8 ✓, 4 ✓, 2 ✗, 3 ✓: converged at 3; without recheck it stays there for good.
        let (seen, s) = probes(8, 0, 50, |b| b >= 3);
        assert_eq!(seen[..4], [8, 4, 2, 3]);
        assert!(seen[3..].iter().all(|&b| b == 3));
        assert!(s.converged());
    }

    #[test]
    fn a_converged_size_that_fails_starts_afresh_and_follows_a_larger_need() {
        // Converged at 45; then the load needs 60: 45 ✗ starts over (0, 90) from 90.
        let (_, mut s) = probes(200, 0, 12, |b| b >= 45);
        assert_eq!(s.record(false), 90);
        assert_eq!((s.best(), s.miss(), s.converged()), (None, 0, false));
        assert_eq!(s.record(true), 45, "90 passes: bisect (0, 90), the old bounds forgotten");
        assert_eq!(s.record(false), 67);
        for _ in 0..10 {
            let p = s.probe();
            s.record(p >= 60);
        }
        assert_eq!((s.best(), s.converged()), (Some(60), true));
    }

    #[test]
    fn a_fresh_search_after_an_unlucky_failure_can_land_below_the_failed_size() {
        // Converged at 45 on a load needing 45, one unlucky interval fails it: the fresh
        // search finds 45 again. Raising the lower bound to 45 instead would have settled
        // at 46 or above.
        let (_, mut s) = probes(200, 0, 12, |b| b >= 45);
        s.record(false);
        for _ in 0..10 {
            let p = s.probe();
            s.record(p >= 45);
        }
        assert_eq!((s.best(), s.converged()), (Some(45), true));
    }

    #[test]
    fn recheck_reopens_the_search_below_a_size_that_keeps_passing() {
        // Converged at 45 (step 9); the load now needs only 20. With recheck = 3, the third
        // pass in a row at 45 re-opens (0, 45): 22 ✓, 11 ✗, 16 ✗, 19 ✗, 20 ✓.
        let (seen, s) = probes(200, 3, 12, |b| b >= 45);
        assert_eq!(seen[8..], [45, 45, 45, 45]);
        assert_eq!(s.probe(), 22);
        let mut s = s;
        let mut after = Vec::new();
        for _ in 0..7 {
            let p = s.probe();
            after.push(p);
            s.record(p >= 20);
        }
        assert_eq!(after, vec![22, 11, 16, 19, 20, 20, 20]);
        assert_eq!((s.best(), s.converged()), (Some(20), true));
    }

    #[test]
    fn recheck_comes_back_to_a_size_that_is_still_needed() {
        // Nothing changed: the re-opened search probes below 45, everything fails, and it
        // converges at 45 again.
        let (seen, s) = probes(200, 3, 20, |b| b >= 45);
        assert_eq!(seen[12..18], [22, 33, 39, 42, 43, 44]);
        assert_eq!((s.best(), s.converged()), (Some(45), true));
    }

    #[test]
    fn probes_stay_strictly_inside_the_bracket() {
        // Whatever the verdicts, a probe lies above the largest failure, and below the
        // smallest pass until converged (then equal to it): no size is probed needlessly.
        let mut searches = [Search::new(1000, 0), Search::new(1000, 4)];
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        for i in 0..20_000 {
            let s = &mut searches[i % 2];
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let p = s.probe();
            assert!(p > s.miss());
            match s.best() {
                Some(b) if s.converged() => assert_eq!(p, b),
                Some(b) => assert!(p < b),
                None => {}
            }
            // Passes more often the larger the buffer, never below 10 packets.
            s.record(p >= 10 && x % 1000 < p.min(1000));
        }
    }

    // ---- The controller ----

    fn config(interval: Time, settle: Time, start: u64) -> Config {
        Config { target: 0.9, tolerance: 1.0, interval, settle, start, recheck: 0 }
    }

    fn busy(t: Time) -> Cumulative {
        Cumulative { busy_ps: t.0, ..Default::default() }
    }

    #[test]
    fn a_tick_measures_the_interval_and_decides() {
        let mut a = AutoSizer::new(3, &config(Time::from_secs(2), Time::ZERO, 64), Time::from_secs(1));
        assert_eq!(a.next_at(), Time::from_secs(1));
        let base = Cumulative { busy_ps: 500, arrivals: 10, drops: 1, ..Default::default() };
        assert_eq!(a.tick(Time::from_secs(1), base), None, "the first event only takes the baseline");
        // Busy 1.9 s of the 2 s interval: 95 % ≥ 90 %, so 64 passes and 32 is next.
        let later = Cumulative { busy_ps: 500 + Time::from_ms(1900).0, arrivals: 110, drops: 4, ..base };
        assert_eq!(a.tick(Time::from_secs(3), later), Some(32));
        let s = a.steps[0];
        assert_eq!((s.time, s.buffer_pkts, s.drops, s.arrivals), (Time::from_secs(3), 64, 3, 100));
        assert!((s.utilization - 0.95).abs() < 1e-12 && s.passed && !s.converged);
        assert_eq!((s.next_buffer_pkts, a.next_at()), (32, Time::from_secs(5)));
    }

    #[test]
    fn a_settling_time_is_left_out_of_the_measurement() {
        // 3-s intervals from t = 0, the first second of each left out: events at 1 s
        // (baseline), 3 s (step), 4 s (baseline), 6 s (step).
        let mut a = AutoSizer::new(0, &config(Time::from_secs(3), Time::from_secs(1), 10), Time::ZERO);
        assert_eq!(a.next_at(), Time::from_secs(1));
        assert_eq!(a.tick(Time::from_secs(1), busy(Time::from_ms(200))), None);
        // Busy 1.8 s of the measured 2 s: 90 % passes, although the whole 3 s was not.
        assert_eq!(a.tick(Time::from_secs(3), busy(Time::from_ms(2000))), Some(5));
        assert!((a.steps[0].utilization - 0.9).abs() < 1e-12);
        assert_eq!(a.next_at(), Time::from_secs(4));
        assert_eq!(a.tick(Time::from_secs(4), busy(Time::from_ms(2500))), None);
        assert_eq!(a.next_at(), Time::from_secs(6));
        // Busy 1.7 s of the measured 2 s: 85 % fails.
        assert_eq!(a.tick(Time::from_secs(6), busy(Time::from_ms(4200))), Some(7));
        assert!(!a.steps[1].passed);
    }

    #[test]
    fn late_readings_are_measured_over_their_own_span_and_keep_the_schedule() {
        // A real-time driver reads the counts late: baseline at 1.01 s instead of 1 s, the
        // step at 3.02 s instead of 3 s. Busy 1.8 s of the 2.01 s between the readings:
        // 89.55 %, a fail against 90 % (1.8 s of the nominal 2 s would pass). The next
        // events stay at 4 s and 6 s.
        let mut a = AutoSizer::new(0, &config(Time::from_secs(3), Time::from_secs(1), 10), Time::ZERO);
        assert_eq!(a.tick(Time::from_ms(1010), busy(Time::ZERO)), None);
        assert_eq!(a.next_at(), Time::from_secs(3));
        assert_eq!(a.tick(Time::from_ms(3020), busy(Time::from_ms(1800))), Some(20));
        let s = a.steps[0];
        assert!((s.utilization - 1.8 / 2.01).abs() < 1e-12 && !s.passed);
        assert_eq!(s.time, Time::from_ms(3020), "a step is stamped when it was taken");
        assert_eq!(a.next_at(), Time::from_secs(4));
        assert_eq!(a.tick(Time::from_ms(4001), busy(Time::from_ms(1900))), None);
        assert_eq!(a.next_at(), Time::from_secs(6));
    }

    #[test]
    fn the_answer_is_the_median_of_the_convergences() {
        let interval = Time::from_secs(1);
        let mut a = AutoSizer::new(0, &config(interval, Time::ZERO, 8), Time::ZERO);
        let mut t = Time::ZERO;
        let mut total = Time::ZERO;
        a.tick(t, busy(total));
        // 8 ✓ 4 ✓ 2 ✗ 3 ✓: converged at 3. 3 ✗: afresh over (0, 6): 6 ✓ 3 ✓ 1 ✗ 2 ✓: at 2.
        // 2 ✗: afresh over (0, 4): 4 ✓ 2 ✗ 3 ✓: at 3. Convergences 3, 2, 3: the answer is 3.
        let verdicts = [true, true, false, true, false, true, true, false, true, false, true, false, true];
        for passed in verdicts {
            t += interval;
            if passed {
                total += interval;
            }
            a.tick(t, busy(total));
        }
        assert_eq!(a.settled, vec![3, 2, 3]);
        assert_eq!(a.answer(), Some(3));
    }
}
