//! The timeseries table: the bottleneck's figures per `monitor.interval`.
//!
//! Read first: [`super`] (which link "the bottleneck" is) and [`super::table`] (how a table
//! is described). This file owns the table's columns and reading its rows from the
//! bottleneck monitor's buckets.

use super::table::table;
use crate::monitor::QueueMonitor;
use crate::units::{Time, PS_PER_S};

/// One interval of the bottleneck time series; each field is the column of the same name
/// described below.
#[derive(Clone, Debug, PartialEq)]
pub struct SeriesRow {
    pub time_s: f64,
    pub throughput_bps: f64,
    pub utilization: f64,
    pub queue_pkts: f64,
    pub queue_max_pkts: u64,
    pub arrivals: u64,
    pub drops: u64,
}

table!(SeriesRow, "timeseries",
    "One row per `monitor.interval` of the bottleneck (the summary's link), over the whole \
     run, warm-up included.",
{
    time_s: "s", "End of the interval (the last one may be cut short by the end of the run).", |r| r.time_s;
    throughput_bps: "bit/s", "Bits serialized per second in the interval, headers included.",
        |r| r.throughput_bps;
    utilization: "", "Fraction of the interval the serializer was busy.", |r| r.utilization;
    queue_pkts: "pkt", "Time-average packets waiting.", |r| r.queue_pkts;
    queue_max_pkts: "pkt", "Largest number of packets waiting.", |r| r.queue_max_pkts;
    arrivals: "pkt", "Packets that arrived at the queue.", |r| r.arrivals;
    drops: "pkt", "Packets the queue dropped.", |r| r.drops;
});

/// The time series of the monitor of a link of `rate_bps` over a run of `duration`.
pub(super) fn series(mon: &QueueMonitor, rate_bps: u64, duration: Time) -> Vec<SeriesRow> {
    let rate = rate_bps as f64;
    let interval_s = mon.interval.0 as f64 / PS_PER_S as f64;
    mon.buckets
        .iter()
        .enumerate()
        .map(|(i, b)| {
            let start = i as u64 * mon.interval.0;
            let len = (duration.0 - start).min(mon.interval.0) as f64;
            let util = b.busy_ps as f64 / len;
            SeriesRow {
                // The last interval may be cut short by the end of the run.
                time_s: ((i + 1) as f64 * interval_s).min(duration.secs_f64()),
                throughput_bps: util * rate,
                utilization: util,
                queue_pkts: b.occupancy_pkt_ps as f64 / len,
                queue_max_pkts: b.max_pkts,
                arrivals: b.arrivals,
                drops: b.drops,
            }
        })
        .collect()
}
