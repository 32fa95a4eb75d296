//! Results of a run: a summary and tables, each table described once, its columns' names,
//! kinds, units and meanings beside the getters that read them from its rows. The binding
//! exports every table through those descriptions and the documentation is generated from
//! them, so a column is written in one place.
//!
//! "The bottleneck" of the summary, time series and event log is the network's summary link:
//! the dumbbell's bottleneck, the parking lot's `network.summary_hop`, or a graph's
//! `network.summary_link`. The per-link table
//! has a row for every monitored link, the summary link's computed exactly as the summary is.
//! On the switch topology the monitored links are the switch's output lines, and the summary's
//! queue figures that are totals or means cover every output (its doc says which); figures of
//! a distribution, the time series and the event log are `network.switch.summary_port`'s.
//!
//! Map:
//! - `table.rs`: how a table is described (the `table!` macro) and exported, column by column
//!   or a row as JSON. Read it first.
//! - `summary.rs`: the summary, one row.
//! - `flows.rs`, `links.rs` (links and the switch's ports), `series.rs` (the time series),
//!   `transfers.rs`: the tables read from the network at the end of a run.
//! - `bumps.rs`, `rates.rs`, `optical.rs` (optical FIFOs and their lines), `aqm.rs` (active
//!   queue managers' causes of drops and marks, sojourn times): the tables of parts that only
//!   some scenarios have.
//! - `autosize.rs`, `traces.rs`: the descriptions of the tables whose rows the auto-sizer
//!   ([`crate::autosize::Step`]) and the flow tracer ([`crate::monitor::trace::TraceRow`]) keep.
//! - `collect.rs`: reads the network at the end of a run into a [`RunResult`].
//! - `replayed.rs`: a [`RunResult`] rebuilt from a queue's event log (the emulator's runs).
//!
//! This file owns [`RunResult`] and the list of exported tables in their order (the
//! `exported!` list below: [`RunResult::tables`] and [`descriptions`]); it must not read the
//! network (`collect.rs` does) nor describe a column (each table's file does). The queue event
//! log is not a described table: it is raw columns, streamed in batches
//! ([`crate::monitor::events`]).

pub mod aqm;
pub mod autosize;
pub mod bumps;
mod collect;
pub mod flows;
pub mod links;
pub mod optical;
pub mod rates;
pub mod replayed;
pub mod series;
pub mod summary;
pub mod table;
pub mod traces;
pub mod transfers;

pub use aqm::AqmRow;
pub use bumps::BumpRow;
pub use collect::collect;
pub use flows::FlowRecord;
pub use links::{LinkRow, PortRow};
pub use optical::{OpticalLineRow, OpticalRow};
pub use rates::RateRow;
pub use series::SeriesRow;
pub use summary::{Summary, SwitchFigures};
pub use transfers::TransferRow;

use crate::autosize::Step;
use crate::monitor::trace::TraceRow;
use crate::monitor::EventLog;
use crate::sim::Conservation;
use crate::units::BufferLimit;
use table::{describe, Description, Export};

pub struct RunResult {
    pub summary: Summary,
    pub flows: Vec<FlowRecord>,
    pub transfers: Vec<TransferRow>,
    /// One row per monitored link, in path order.
    pub links: Vec<LinkRow>,
    /// One row per port of the switch topology's router (empty on the others).
    pub ports: Vec<PortRow>,
    pub timeseries: Vec<SeriesRow>,
    /// The auto-sizer's steps (empty without `[autosize]`).
    pub autosize: Vec<Step>,
    /// Per-flow TCP traces, in (time, flow) order (empty without `monitor.trace_flows`).
    pub traces: Vec<TraceRow>,
    /// One row per `[[network.bump]]` entry (empty without bumps).
    pub bumps: Vec<BumpRow>,
    /// Every QCN reaction point's rate change (empty without one).
    pub rates: Vec<RateRow>,
    /// One row per link whose queue is an optical FIFO, and one per line of each (empty
    /// without one).
    pub optical: Vec<OpticalRow>,
    pub optical_lines: Vec<OpticalLineRow>,
    /// One row per monitored link whose queue is an active queue manager (empty without one).
    pub aqm: Vec<AqmRow>,
    /// The queue the event log records (`monitor.events_at`), for rebuilding it.
    pub events_queue: EventsQueue,
    /// The event log kept in memory (`monitor.events` without a sink).
    pub events: Option<EventLog>,
    /// Events handed to a sink (`run_streaming_events`), and the sink's error if it failed.
    pub events_written: u64,
    pub events_error: Option<String>,
    pub conservation: Conservation,
    /// Largest bottleneck occupancy ever, warm-up included (packets, bytes).
    pub max_queue_ever: (u64, u64),
    pub buffer: BufferLimit,
}

/// The queue an event log records: its name and what rebuilding it needs beside the events.
#[derive(Clone, Debug, PartialEq)]
pub struct EventsQueue {
    /// `bottleneck`, `hop2`, `output1`, or a bump's name.
    pub name: String,
    pub rate: crate::units::Rate,
    pub buffer: BufferLimit,
    /// Its discipline sends packets in arrival order: a reader may match the k-th dequeue with
    /// the k-th enqueue (not so under FQ-CoDel, whose packets are matched by flow and number).
    pub fifo: bool,
}

/// The tables a run exports besides the summary, in export order, each with the field of
/// [`RunResult`] that holds its rows: [`RunResult::tables`] and [`descriptions`] both come
/// from this one list.
macro_rules! exported {
    ($($field:ident: $row:ty),* $(,)?) => {
        impl RunResult {
            /// Every exported table but the summary, in export order.
            pub fn tables(&self) -> Vec<&dyn Export> {
                vec![$(&self.$field as &Vec<$row>),*]
            }
        }

        /// The description of every exported table, the summary first.
        pub fn descriptions() -> Vec<Description> {
            vec![describe::<Summary>(), $(describe::<$row>()),*]
        }
    };
}

exported!(
    flows: FlowRecord,
    timeseries: SeriesRow,
    links: LinkRow,
    ports: PortRow,
    transfers: TransferRow,
    autosize: Step,
    traces: TraceRow,
    bumps: BumpRow,
    rates: RateRow,
    optical: OpticalRow,
    optical_lines: OpticalLineRow,
    aqm: AqmRow,
);

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn every_table_is_named_once_and_documented() {
        let tables = descriptions();
        let names: Vec<&str> = tables.iter().map(|t| t.name).collect();
        assert_eq!(
            names,
            [
                "summary",
                "flows",
                "timeseries",
                "links",
                "ports",
                "transfers",
                "autosize",
                "traces",
                "bumps",
                "rates",
                "optical",
                "optical_lines",
                "aqm"
            ]
        );
        for t in &tables {
            assert!(!t.doc.trim().is_empty(), "table {} has no doc", t.name);
        }
    }

    #[test]
    fn every_column_is_named_once_and_documented() {
        for t in descriptions() {
            let mut seen = HashSet::new();
            for c in &t.columns {
                assert!(seen.insert(c.name), "{}: column {} twice", t.name, c.name);
                assert!(!c.doc.trim().is_empty(), "{}.{} has no doc", t.name, c.name);
                assert!(
                    c.doc.ends_with(['.', '…']),
                    "{}.{}: a doc is a sentence: {:?}",
                    t.name,
                    c.name,
                    c.doc
                );
            }
        }
    }
}
