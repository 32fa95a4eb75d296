//! Open-loop flow arrivals: flows (each a download over a new connection) arrive as a
//! Poisson process, independently of how the network treats earlier ones.
//!
//! Read first: `sim/users.rs` (what an arrival does). Owns the arrival process and its idle slots;
//! must not know TCP or the event loop.
//!
//! Each arrival takes an idle flow slot of its traffic entry (a flow whose last transfer has
//! completed) or, if none is idle, a new one. A slot keeps the path it was built with, so
//! the RTTs of open-loop flows are those of the slots, each drawn from the scenario's range.

use crate::rng::Rng;
use crate::units::{Time, PS_PER_S};

#[derive(Clone, Debug)]
pub struct Arrivals {
    pub traffic: u32,
    mean_gap_ps: f64,
    pub start: Time,
    rng: Rng,
    /// Slots whose transfer has completed, ready for the next arrival.
    pub idle: Vec<u32>,
}

impl Arrivals {
    pub fn new(traffic: u32, per_second: f64, start: Time, rng: Rng) -> Arrivals {
        Arrivals { traffic, mean_gap_ps: PS_PER_S as f64 / per_second, start, rng, idle: Vec::new() }
    }

    /// The time from one arrival to the next (exponential: a Poisson process).
    pub fn gap(&mut self) -> Time {
        Time(self.rng.exponential(self.mean_gap_ps).round().max(1.0) as u64)
    }
}
