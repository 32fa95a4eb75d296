//! The rates table: every change of a QCN reaction point's rate (`pace_rate = "qcn"`).
//!
//! Read first: [`super::table`] (how a table is described) and the `buflab-queue` crate's
//! `qcn` module (when a reaction point changes its rate). This file owns the table's columns
//! and gathering its rows from the bumps at the end of a run.

use super::table::table;
use crate::queue::RateChange;
use crate::scenario::BumpEntry;
use crate::sim::Sim;
use crate::units::Time;

/// One change of one reaction point's rate; each field is the column of the same name.
#[derive(Clone, Debug, PartialEq)]
pub struct RateRow {
    pub time: Time,
    pub bump: String,
    pub class: u32,
    pub rate_bps: u64,
    pub target_bps: u64,
}

table!(RateRow, "rates",
    "Only with a `pace_rate = \"qcn\"` bump: every change of a QCN reaction point's rate over the \
     whole run (a message cut it, or a byte-counter or timer cycle raised it), in (time, class) \
     order. Between two rows the rate holds.",
{
    time_s: "s", "When the rate changed.", |r| r.time.secs_f64();
    bump: "", "The bump's `name`.", |r| r.bump.clone();
    class: "", "The class whose rate it is: its flow with `classify = \"flow\"` (flow ids as in the flows table).", |r| r.class;
    rate_bps: "bit/s", "The current rate after the change (the bump's `rate` once the limiter is released).", |r| r.rate_bps;
    target_bps: "bit/s", "The target rate it recovers towards.", |r| r.target_bps;
});

/// Every reaction point's rate changes, from the bumps in `sim`.
pub(super) fn rate_rows(sim: &mut Sim, entries: &[BumpEntry]) -> Vec<RateRow> {
    let mut rows = Vec::new();
    for site in &sim.bumps {
        let entry = &entries[site.entry as usize];
        let bump = sim.links[site.link as usize].bump_mut().expect("a bump site runs a bump");
        rows.extend(bump.rate_changes().iter().map(|c| rate_row(entry, c, Time::ZERO)));
    }
    rows.sort_by_key(|r| (r.time, r.class));
    rows
}

/// The row of a change `c` of a reaction point of `entry`, its time counted from `epoch`
/// (the simulator's is 0; the emulator's datapath keeps the monotonic clock).
pub fn rate_row(entry: &BumpEntry, c: &RateChange, epoch: Time) -> RateRow {
    RateRow {
        time: Time(c.time.ps().saturating_sub(epoch.ps())),
        bump: entry.name.clone(),
        class: c.class_key,
        rate_bps: c.rate_bps,
        target_bps: c.target_bps,
    }
}
