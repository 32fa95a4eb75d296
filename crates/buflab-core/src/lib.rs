//! # buflab-core
//!
//! The engine of buflab, a lab for router buffer sizing and packet pacing: a deterministic,
//! packet-level discrete-event simulator. Pure Rust, no I/O policy and no Python.
//!
//! ## Map
//! - [`units`]: integer time (picoseconds), rates (bits/s), sizes; parsing of "10Gbps", "100ms".
//! - [`sched`]: the event queue, ordered by (time, insertion sequence) — the determinism rule.
//! - [`packet`]: the 32-byte `Copy` packet with its source route.
//! - [`link`]: queue + serializer + propagation pipe, with at most one pending event per link.
//! - [`queue`]: queue disciplines beside the link's drop-tail buffer: RED, marking ECN (RFC 3168).
//! - [`fabric`]: CIOQ switch-fabric schedulers (MWM, iSLIP, PIM, OQ emulation) on VOQ counts.
//! - [`switch`]: the N×N router node: VOQs, a slotted fabric with speedup, output queues.
//! - [`loss`]: independent random loss.
//! - [`tcp`]: sender, receiver, RTO (RFC 6298) and congestion control ([`tcp::cc`]).
//! - [`traffic`]: open-loop UDP sources.
//! - [`monitor`]: queue observers — metrics, time series, event log.
//! - [`autosize`]: the live auto-sizer, a binary search for the smallest buffer meeting a
//!   target utilization within one run (thesis ch. 4.3).
//! - [`topology`]: builders (the dumbbell, the parking lot).
//! - [`scenario`]: the scenario schema, reader and validation errors; [`names`]: the names a
//!   scenario gives an enum's variants, kept beside each enum.
//! - [`sim`]: the tables and the event loop; [`result`]: what a run returns.
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
pub mod loss;
pub mod monitor;
pub mod names;
pub mod packet;
pub mod queue;
pub mod result;
pub mod scenario;
pub mod sched;
pub mod sim;
pub mod switch;
pub mod tcp;
pub mod topology;
pub mod traffic;

pub use buflab_base::{rng, units};

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
    net.sim.run();
    result::collect(scenario, &mut net)
}

/// Builds and runs the scenario, returning the network in its final state (for tests and
/// tools that inspect flows after the run; `result::collect` summarises it).
pub fn simulate(scenario: &scenario::Scenario) -> topology::Network {
    let mut net = topology::build(scenario);
    net.sim.run();
    net
}
