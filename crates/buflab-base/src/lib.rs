//! # buflab-base
//!
//! The vocabulary every buflab crate speaks, and nothing else: integer time, rates and sizes
//! with their parsing from scenario strings ([`units`]), and the seeded random streams that
//! make runs reproducible ([`rng`]), and the names a scenario gives an enum's variants
//! ([`names`]).
//!
//! Read first: [`units`] (time is an integer count of picoseconds; nothing in a model uses
//! floating-point time). This crate must not know about packets, queues, links or the event
//! loop: the queue disciplines (`buflab-queue`), the simulator (`buflab-core`) and the
//! emulator's datapath all stand on it.

pub mod names;
pub mod rng;
pub mod units;
