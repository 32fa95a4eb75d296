//! # buflab-core
//!
//! The engine of buflab, a lab for router buffer sizing and packet pacing: a deterministic,
//! packet-level discrete-event simulator. Pure Rust, no I/O and no Python. Start here; the
//! repository's `ARCHITECTURE.md` places this crate among the others.
//!
//! ## A run, end to end
//!
//! ```text
//!  scenario JSON ─► Scenario ─► topology::build ─► Network { Sim, monitored links } ─► Sim::run ─► result::collect ─► RunResult
//!   (TOML tree)    (validated,   (links, routes,                                      (events)    (tables from
//!                   units parsed)  flows, monitors)                                                the monitors)
//! ```
//!
//! 1. [`scenario`] reads and validates the tree, one reader per section; every key, its
//!    default and its documentation is in [`scenario::schema`]. Bad input is one
//!    [`scenario::ScenarioError`] naming the key, the value and what was expected.
//! 2. [`topology`] builds the network the scenario describes inside a [`sim::Sim`]: [`link`]s
//!    (each with its queue discipline from [`queue`] and, where measured, a
//!    [`monitor::QueueMonitor`]), random-loss elements ([`loss`]), router nodes ([`switch`],
//!    scheduled by [`fabric`]), source routes, and one flow per traffic source with its
//!    [`endpoint`]s: TCP ([`tcp`]) or UDP, driven by users ([`traffic`]) when transfers are
//!    finite.
//! 3. [`sim::Sim::run`] pops events from the [`sched`]uler in (time, insertion) order and
//!    dispatches each to its component: a link's exit, an endpoint's timer, a switch slot.
//!    The loop knows no protocol.
//! 4. [`result::collect`] reads the monitors, the endpoints' counters and the auto-sizer's
//!    steps ([`autosize`]) into the result tables.
//!
//! ## The invariants
//!
//! - **Determinism.** Time is an integer (picoseconds, [`units`]); events at the same
//!   picosecond run in the order they were scheduled; every random draw comes from the
//!   stream of the component that draws ([`rng`]). Same scenario and seed, same results, to
//!   the last bit (`tests/golden.py` holds the fingerprints).
//! - **One pending event per link.** A link is FIFO end to end, so only the head of its pipe
//!   needs an event; timers are lazy (a deadline moves freely, a stale event finds nothing).
//! - **Sans-IO components.** Endpoints and queue disciplines take time and packets and return
//!   packets and verdicts; none holds the scheduler. The disciplines live in the
//!   `buflab-queue` crate so that the emulator's datapath runs the same code.
//!
//! ## Computing ahead
//!
//! Most hops cannot change a packet's fate: an access link with an unlimited buffer, the
//! reverse path of ACKs. The simulator decides once, before the run (`sim/plan.rs`), which
//! hops it may compute instead of schedule: a packet crosses a chain of such links at its
//! future times with no event; a sender whose first link is its own handles an ACK the moment
//! its arrival time is known (running ahead of the global clock, its due timers fired first);
//! a bottleneck whose downstream depends only on the order of its exits hands each admitted
//! packet to its receiver at once. On the benchmark dumbbell a data packet costs one event
//! and its ACK none, and the results are those of one event per hop (a property test checks
//! it).
//!
//! ## Map
//! - [`units`], [`rng`]: integer time, rates, sizes and their parsing; seeded streams (from
//!   `buflab-base`).
//! - [`sched`]: the event queue. [`sim`]: the tables and the loop (see its module doc for its
//!   files). [`endpoint`]: the one interface the loop drives flows through.
//! - [`packet`]: the 40-byte `Copy` packet with its source route.
//! - [`link`]: serializer, pipe and the queue's hard limit, running a discipline in either of
//!   its two forms. [`queue`]: the disciplines a scenario may name (from `buflab-queue`).
//! - [`loss`]: independent random loss.
//! - [`switch`], [`fabric`]: the N×N router node and its schedulers (MWM, iSLIP, PIM, OQ
//!   emulation).
//! - [`tcp`]: sender, receiver, SACK, delivery rate, pacing, congestion control; [`tcp::flow`]
//!   makes a connection one endpoint.
//! - [`traffic`]: UDP sources, closed-loop users, open-loop arrivals, distributions.
//! - [`monitor`]: queue observers (metrics, time series, event log) and flow traces.
//! - [`autosize`]: the live auto-sizer (thesis ch. 4.3).
//! - [`live`]: a run in steps, changed as it goes (`[[change]]`, `buflab serve`).
//! - [`topology`]: builders: one for every network of links (a general network and its
//!   shapes: dumbbell, parking lot, tree, layered), one for the switch.
//! - [`scenario`]: the scenario schema, readers and validation errors, and the facts of a
//!   validated scenario that Python's sizing rules and load model use; [`names`]: the names
//!   a scenario gives an enum's variants.
//! - [`result`]: what a run returns, each table's columns described once (the binding, the
//!   Python dtypes and the reference page follow from the descriptions).
//!
//! ## Running a scenario
//! ```
//! let v = serde_json::json!({
//!     "duration": "20s",
//!     "network": { "bottleneck": { "rate": "10Mbps", "buffer": "20pkt" } },
//!     "traffic": [ { "kind": "long_lived", "flows": 2 } ],
//! });
//! let scenario = buflab_core::scenario::Scenario::from_value(&v).unwrap();
//! let result = buflab_core::run(&scenario);
//! assert!(result.summary.utilization > 0.5);
//! ```

pub mod autosize;
pub mod endpoint;
pub mod fabric;
pub mod link;
pub mod live;
pub mod loss;
pub mod monitor;
pub mod packet;
pub mod prefetch;
pub mod queue;
pub mod result;
pub mod scenario;
pub mod sched;
pub mod sim;
pub mod switch;
pub mod tcp;
pub mod topology;
pub mod traffic;

pub use buflab_base::{names, rng, units};

/// The engine version.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Builds the scenario's network, runs it and collects the results.
pub fn run(scenario: &scenario::Scenario) -> result::RunResult {
    let mut net = simulate(scenario);
    result::collect(scenario, &mut net)
}

/// Runs the scenario with its event log (`monitor.events`) streamed to `sink` in batches, so
/// that memory stays bounded however long the run; the result's `events` is then `None` and
/// `events_written` counts what the sink received.
pub fn run_streaming_events(
    scenario: &scenario::Scenario,
    sink: Box<dyn monitor::EventSink>,
) -> result::RunResult {
    let mut net = topology::build(scenario);
    net.stream_events(sink);
    live::run(scenario, &mut net);
    result::collect(scenario, &mut net)
}

/// Runs the scenario as [`run`] does (or [`run_streaming_events`] with a `sink`), asking
/// `interrupt` every 65,536 events, with the simulated time reached, whether to stop (the
/// caller's Ctrl-C, and its progress display): None if it said so, the results otherwise.
pub fn run_interruptible(
    scenario: &scenario::Scenario,
    sink: Option<Box<dyn monitor::EventSink>>,
    interrupt: Box<dyn FnMut(units::Time) -> bool + Send>,
) -> Option<result::RunResult> {
    let mut net = topology::build(scenario);
    if let Some(sink) = sink {
        net.stream_events(sink);
    }
    net.sim.set_interrupt(interrupt);
    live::run(scenario, &mut net);
    (!net.sim.interrupted).then(|| result::collect(scenario, &mut net))
}

/// Builds and runs the scenario, returning the network in its final state (for tests and
/// tools that inspect flows after the run; `result::collect` summarises it).
pub fn simulate(scenario: &scenario::Scenario) -> topology::Network {
    let mut net = topology::build(scenario);
    live::run(scenario, &mut net);
    net
}
