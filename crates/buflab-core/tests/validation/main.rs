//! Validation of the engine against analytic results and invariants (the verification ladder
//! of DESIGN.md, rungs 2 and 3). One test binary, one module per topic.
//! Run in release mode: `cargo test --release -p buflab-core --test validation`.

mod analytic;
mod autosize;
mod bbr;
mod bumps;
mod cc_scenarios;
mod disciplines;
mod graphs;
mod live;
mod machines;
mod optical;
mod pacing;
mod parking_lot;
mod properties;
mod red_ecn;
mod switch;
mod tcp_scenarios;
mod transfers;

use buflab_core::result::RunResult;
use buflab_core::scenario::Scenario;
use serde_json::Value;

/// Parses a scenario written as JSON, panicking with the validation message if it is wrong.
pub fn scenario(v: Value) -> Scenario {
    Scenario::from_value(&v).unwrap_or_else(|e| panic!("test scenario invalid: {e}"))
}

pub fn run(v: Value) -> RunResult {
    buflab_core::run(&scenario(v))
}
