//! Queue disciplines in the simulator: the ones a scenario may name, and building a link's.
//!
//! Read first: the `buflab-queue` crate (the contract, written once, the list of disciplines,
//! and one file per discipline: they are sans-IO, so the emulator's datapath runs the same
//! code), then [`crate::link`] (how a link runs either form of discipline). This module owns
//! the bridge between the two; it must not hold a discipline's rules, nor list disciplines
//! (the crate's `kinds` does).
//!
//! A discipline keeps its own state and its own random stream ([`crate::rng::Stream::Queue`],
//! numbered by hop), so its draws never shift anyone else's.

pub use buflab_queue::aqm::AqmCounts;
pub use buflab_queue::bump::{Bump, BumpSpec, BumpStats, RateChange};
pub use buflab_queue::describe::{Kind, LinkInfo, ParamKind, Values};
pub use buflab_queue::optical;
pub use buflab_queue::optical_fifo::{OpticalFifo, Report as OpticalReport, FIBER_KM_PER_S};
pub use buflab_queue::{
    codel, drop_tail, fits, fq_codel, pie, qcn, red, step, Admission, Arrival, Dequeue, Discipline, Fifo,
    Flowing, Queued, Verdict,
};

use crate::link::{Queue, Waiting};
use crate::rng::Rng;
use buflab_queue::describe::Build;

/// Every discipline a scenario may name, in documentation order, built for the simulator's
/// links.
pub fn kinds() -> Vec<Kind<Waiting>> {
    buflab_queue::kinds()
}

/// The discipline named `name` (one of [`kinds`]), as a link's queue.
pub fn build(name: &str, values: &Values, link: LinkInfo, rng: Rng) -> Queue {
    let kinds = kinds();
    let kind = kinds.iter().find(|k| k.name == name).unwrap_or_else(|| panic!("no discipline {name}"));
    match kind.build {
        Build::Inline => Queue::DropTail,
        Build::Admission(make) => Queue::Admission(make(values, link, rng)),
        Build::Held(make) => Queue::Held(make(values, link, rng)),
    }
}

/// Whether the discipline `name` sends its packets in the order they arrived (all but a flow
/// queue do): what a reader of its event log may assume.
pub fn keeps_arrival_order(name: &str) -> bool {
    kinds().iter().find(|k| k.name == name).is_none_or(|k| k.keeps_arrival_order)
}
