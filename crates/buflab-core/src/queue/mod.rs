//! Queue disciplines in the simulator: the ones a scenario may name, and how a link gets
//! its own.
//!
//! Read first: the `buflab-queue` crate (the contract, written once, and one file per
//! discipline: they are sans-IO, so the emulator's datapath runs the same code), then
//! [`crate::link`] (how a link runs either form of discipline). This module owns the bridge
//! between the two; it must not hold a discipline's rules.
//!
//! A discipline keeps its own state and its own random stream ([`crate::rng::Stream::Queue`],
//! numbered by hop), so its draws never shift anyone else's.

pub use buflab_queue::{drop_tail, red, Admission, Arrival, Dequeue, Discipline, Fifo, Queued, Verdict};
