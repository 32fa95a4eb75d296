//! A run in steps, changed as it goes: the engine side of the live control panel (thesis
//! ch. 4.3, Fig 4.15) and of the `[[change]]` entries that replay one.
//!
//! Read first: [`crate::sim`] (the loop: [`Sim::run_until`] stops before a time and goes on
//! from there exactly as a run that never stopped), [`crate::scenario::change`] (what a change
//! is, and the checks it passes) and `sim/changes.rs` (what a change does to the simulator).
//! This module owns *when* changes apply and what a live session reads; it must not know the
//! web page or any clock but simulated time.
//!
//! **One rule makes a session replay exactly.** A change at time `t` is applied after every
//! event before `t` has run and before any event at `t` (events at the same picosecond run in
//! the order they were scheduled, and the change's own events, a new flow's start or the
//! auto-sizer's step, are scheduled after those already pending). A live session applies a
//! change at the time it has reached; a scenario's `[[change]]` entries are applied by the same
//! code at their `at`. Stepping and reading do not change the run: [`Sim::run_until`] leaves
//! later events pending in their order, and a reading only brings the monitor's books up to
//! the time reached (integrals split at any time add up to the same integers). So a session's
//! scenario with its changes written as `[[change]]` entries gives the session's results.
//!
//! **Closing flows.** Senders may run ahead of the global clock (`sim/plan.rs`); a change that
//! closes flows must find none past its time. The changes pending are known, so the senders
//! are held back from the next one that closes ([`Sim::set_ahead_limit`]); a live change that
//! closes flows, known only when it comes, is put just past the furthest any sender has
//! reached ([`Sim::sources_reached`]) and applied when the run gets there, with the time it
//! replays at. Any change after it waits for it, to keep their order.

use std::collections::VecDeque;

use serde_json::{Map, Value};

use crate::autosize::Step;
use crate::monitor::Cumulative;
use crate::result::RunResult;
use crate::scenario::change::{self, Change, Context};
use crate::scenario::{exact_time, Scenario, ScenarioError};
use crate::sim::Sim;
use crate::topology::{self, Network};
use crate::units::{BufferLimit, Time};

/// Flows whose congestion window a reading reports (the first open ones of the entry).
pub const TRACED_WINDOWS: usize = 4;

/// What changed in the run since the previous reading, and where it stands.
#[derive(Clone, Debug, PartialEq)]
pub struct Reading {
    /// The time reached: every event before it has run.
    pub time: Time,
    /// Simulated time since the previous reading (from the start for the first).
    pub interval: Time,
    /// Fraction of the interval the summary link's serializer was busy.
    pub utilization: f64,
    /// Payload bytes acknowledged to every flow's sender, per second of the interval, bits/s.
    pub goodput_bps: f64,
    pub arrivals: u64,
    pub drops: u64,
    /// Packets and bytes waiting at the summary link now.
    pub queue_pkts: u64,
    pub queue_bytes: u64,
    /// Mean waiting packets over the interval.
    pub mean_queue_pkts: f64,
    /// Mean wait of the packets admitted in the interval, seconds: the mean queue over the
    /// admission rate (Little's law); 0 when none was admitted.
    pub queue_delay_s: f64,
    /// The summary link's buffer limit now.
    pub limit: BufferLimit,
    /// Open long-lived flows of every entry.
    pub open_flows: u64,
    /// (flow id, congestion window in segments) of a few open flows.
    pub windows: Vec<(u32, f64)>,
    /// The auto-sizer's steps since the previous reading, and whether it runs.
    pub steps: Vec<Step>,
    pub autosizing: bool,
}

/// A scenario run in steps, open to changes between them.
pub struct Session {
    scenario: Scenario,
    net: Network,
    /// Changes not yet applied, in time order: the scenario's own (the first `own`), then live
    /// ones due later than they came (see the module doc, *Closing flows*).
    pending: VecDeque<Change>,
    own: usize,
    /// What the changes so far have set: a live change is checked against it.
    context: Context,
    /// Per traffic entry: its long-lived flows still open, in the order they were added.
    open: Vec<Vec<u32>>,
    reached: Time,
    /// The totals at the previous reading (time, the summary link's, payload bytes acked).
    last: (Time, Cumulative, u64),
    steps_read: usize,
}

impl Session {
    /// Builds the scenario's network and begins its run at time 0.
    pub fn new(scenario: &Scenario) -> Session {
        let mut net = topology::build(scenario);
        // Its readings, and the changes it may get at any time, touch the summary link at the
        // time reached.
        let link = net.summary_link();
        net.sim.keep_on_global_clock(link);
        net.sim.begin();
        let mut open = vec![Vec::new(); scenario.traffic.len()];
        for (f, flow) in net.sim.flows.iter().enumerate() {
            if flow.info.kind == crate::scenario::TrafficKind::LongLived {
                open[flow.info.traffic as usize].push(f as u32);
            }
        }
        let mut s = Session {
            scenario: scenario.clone(),
            net,
            pending: scenario.changes.iter().cloned().collect(),
            own: scenario.changes.len(),
            context: scenario.change_context.clone(),
            open,
            reached: Time::ZERO,
            last: (Time::ZERO, Cumulative::default(), 0),
            steps_read: 0,
        };
        s.last = (Time::ZERO, s.totals(), 0);
        s
    }

    pub fn scenario(&self) -> &Scenario {
        &self.scenario
    }

    /// The time reached: every event before it has run.
    pub fn reached(&self) -> Time {
        self.reached
    }

    /// The end of the run (the scenario's duration).
    pub fn end(&self) -> Time {
        self.net.sim.window.end
    }

    pub fn sim(&self) -> &Sim {
        &self.net.sim
    }

    /// Runs to `t` (at most the end), applying the changes pending before it at their times.
    pub fn run_until(&mut self, t: Time) {
        let t = t.min(self.end());
        loop {
            self.net.sim.set_ahead_limit(next_close(self.pending.iter()));
            let Some(at) = self.pending.front().map(|c| c.at).filter(|&at| at < t) else { break };
            self.net.sim.run_until(at);
            if self.net.sim.interrupted {
                return;
            }
            let c = self.pending.pop_front().expect("a change is pending");
            self.own = self.own.saturating_sub(1);
            self.reached = self.reached.max(at);
            apply(&mut self.net, &mut self.open, &c);
        }
        self.net.sim.run_until(t);
        if !self.net.sim.interrupted {
            self.reached = self.reached.max(t);
        }
    }

    /// Applies a change now, at the time reached: `map` is a `[[change]]` entry without `at`,
    /// checked by the scenario reader against the changes so far. One that closes flows while
    /// senders have run past the time reached, or that comes while such a change waits, is due
    /// a little later and applied when the run gets there (see the module doc, *Closing
    /// flows*). Returns the entry as it replays (with its `at`, exact to the picosecond).
    pub fn apply(&mut self, map: &Map<String, Value>) -> Result<Map<String, Value>, ScenarioError> {
        if self.own > 0 {
            return Err(ScenarioError {
                key: "change".into(),
                message: format!(
                    "the scenario's own changes come first: {} of {} applied, the next at {}",
                    self.scenario.changes.len() - self.own,
                    self.scenario.changes.len(),
                    self.pending[0].at
                ),
            });
        }
        // After any change still waiting (the reader keeps the changes in time order).
        let at = self.reached.max(self.context.at);
        let (mut entry, mut context, mut c) = self.read_at(map, at)?;
        let ahead = self.net.sim.sources_reached();
        if c.closes && ahead >= at {
            let at = ahead + Time(1);
            if at >= self.end() {
                return Err(ScenarioError {
                    key: "change.flows".into(),
                    message: format!(
                        "got {}; expected a close the run has time for (its senders have run ahead to {}, \
                         the end of the run is {})",
                        map.get("flows").map_or(String::new(), Value::to_string),
                        ahead,
                        self.end()
                    ),
                });
            }
            (entry, context, c) = self.read_at(map, at)?;
        }
        self.context = context;
        if c.at == self.reached && self.pending.is_empty() {
            apply(&mut self.net, &mut self.open, &c);
        } else {
            self.pending.push_back(c);
        }
        Ok(entry)
    }

    /// `map` read as a change at `at`, against the changes so far: the entry with its `at`,
    /// the context after it, and the change.
    fn read_at(
        &self,
        map: &Map<String, Value>,
        at: Time,
    ) -> Result<(Map<String, Value>, Context, Change), ScenarioError> {
        let mut entry = map.clone();
        entry.insert("at".into(), Value::from(exact_time(at)));
        let mut context = self.context.clone();
        let c = change::read_one("change", &entry, &mut context)?;
        Ok((entry, context, c))
    }

    /// The summary link's running totals now.
    fn totals(&mut self) -> Cumulative {
        let link = self.net.summary_link();
        let sim = &mut self.net.sim;
        sim.links[link as usize]
            .running_totals(self.reached, &mut sim.sched, link)
            .expect("the summary link is monitored")
    }

    /// What changed since the previous reading (see [`Reading`]).
    pub fn read(&mut self) -> Reading {
        let now = self.reached;
        let totals = self.totals();
        let acked: u64 = self
            .net
            .sim
            .flows
            .iter()
            .filter_map(|f| f.endpoints.tcp())
            .map(|t| t.sender.stats.acked_bytes)
            .sum();
        let (then, before, acked_before) = self.last;
        self.last = (now, totals, acked);
        let d = totals.minus(&before);
        let interval = now - then;
        let secs = interval.secs_f64();
        let per = |x: f64| if interval == Time::ZERO { 0.0 } else { x / interval.0 as f64 };
        let link = &self.net.sim.links[self.net.summary_link() as usize];
        let (queue_pkts, queue_bytes) = link.waiting();
        let admitted = d.arrivals - d.drops;
        let mean_queue_pkts = per(d.occupancy_pkt_ps as f64);
        let queue_delay_s = if admitted == 0 {
            0.0
        } else {
            d.occupancy_pkt_ps as f64 / admitted as f64 / crate::units::PS_PER_S as f64
        };
        let windows = self
            .open
            .iter()
            .flatten()
            .take(TRACED_WINDOWS)
            .filter_map(|&f| self.net.sim.flows[f as usize].endpoints.tcp().map(|t| (f, t.sender.w.cwnd)))
            .collect();
        let (steps, autosizing) = match &self.net.sim.autosize {
            Some(a) => (a.steps[self.steps_read.min(a.steps.len())..].to_vec(), a.running()),
            None => (Vec::new(), false),
        };
        self.steps_read += steps.len();
        Reading {
            time: now,
            interval,
            utilization: per(d.busy_ps as f64),
            goodput_bps: if secs > 0.0 { (acked - acked_before) as f64 * 8.0 / secs } else { 0.0 },
            arrivals: d.arrivals,
            drops: d.drops,
            queue_pkts,
            queue_bytes,
            mean_queue_pkts,
            queue_delay_s,
            limit: link.limit(),
            open_flows: self.open.iter().map(|o| o.len() as u64).sum(),
            windows,
            steps,
            autosizing,
        }
    }

    /// Whether the run has reached its end.
    pub fn done(&self) -> bool {
        self.reached >= self.end()
    }

    /// Runs what is left of the run and collects its results.
    pub fn finish(mut self) -> RunResult {
        let end = self.end();
        self.run_until(end);
        self.net.sim.finish();
        crate::result::collect(&self.scenario, &mut self.net)
    }
}

/// Runs `net`, built from `scenario`, to its end, applying the scenario's changes at their
/// times; stops early if the interrupt check says so (`net.sim.interrupted`).
pub fn run(scenario: &Scenario, net: &mut Network) {
    net.sim.begin();
    let mut open = Vec::new();
    if !scenario.changes.is_empty() {
        open = vec![Vec::new(); scenario.traffic.len()];
        for (f, flow) in net.sim.flows.iter().enumerate() {
            if flow.info.kind == crate::scenario::TrafficKind::LongLived {
                open[flow.info.traffic as usize].push(f as u32);
            }
        }
    }
    for (i, c) in scenario.changes.iter().enumerate() {
        net.sim.set_ahead_limit(next_close(scenario.changes[i..].iter()));
        net.sim.run_until(c.at);
        if net.sim.interrupted {
            return;
        }
        apply(net, &mut open, c);
    }
    net.sim.set_ahead_limit(Time::MAX);
    let end = net.sim.window.end;
    net.sim.run_until(end);
    if !net.sim.interrupted {
        net.sim.finish();
    }
}

/// The time of the first of `pending` that closes flows (`Time::MAX`: none): no sender may
/// run ahead to it.
fn next_close<'a>(mut pending: impl Iterator<Item = &'a Change>) -> Time {
    pending.find(|c| c.closes).map_or(Time::MAX, |c| c.at)
}

/// Applies change `c` to `net` now (its parts in the order `scenario/change.rs` states).
fn apply(net: &mut Network, open: &mut [Vec<u32>], c: &Change) {
    let link = net.summary_link();
    let sim = &mut net.sim;
    if let (Some(target), Some(a)) = (c.target, sim.autosize.as_mut()) {
        a.set_target(target);
    }
    if c.access_rate.is_some() || c.pacing.is_some() || c.cc.is_some() {
        sim.set_new_flows(c.entry as u32, c.access_rate, c.pacing, c.cc);
    }
    if let Some(n) = c.flows {
        let flows = &mut open[c.entry];
        let have = flows.len() as u64;
        if n > have {
            flows.extend(sim.add_flows(c.at, c.entry as u32, n - have));
        }
        while flows.len() as u64 > n {
            let f = flows.pop().expect("more open flows than asked for");
            sim.close_flow(f);
        }
    }
    if let Some(limit) = c.buffer {
        sim.stop_autosizer();
        sim.links[link as usize].set_limit(limit);
    }
    match c.autosize {
        Some((true, Some(config))) => sim.start_autosizer(c.at, link, &config),
        Some((false, _)) => sim.stop_autosizer(),
        _ => {}
    }
}
