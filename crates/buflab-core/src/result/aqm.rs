//! The `aqm` table: one row per monitored link whose queue is an active queue manager
//! (`codel`, `fq_codel`, `pie`, `step`): its sojourn times, its drops and marks by cause, and
//! FQ-CoDel's flows and fairness.
//!
//! Read first: [`super::table`] (how a table is described) and the `buflab-queue` crate's
//! `aqm` (what a discipline counts). This file owns the table's columns and the reading of a
//! row from a link's discipline and monitor; it must not know any one discipline.

use super::table::table;
use crate::monitor::QueueMonitor;
use crate::queue::AqmCounts;
use crate::units::PS_PER_S;

/// One AQM link over the measured window; each field is the column of the same name.
#[derive(Clone, Debug, PartialEq)]
pub struct AqmRow {
    pub link: String,
    pub queue: String,
    pub arrivals: u64,
    pub sojourn_p50_s: f64,
    pub sojourn_p90_s: f64,
    pub sojourn_p99_s: f64,
    pub sojourn_p999_s: f64,
    pub drops: u64,
    pub overflow_drops: u64,
    pub law_drops: u64,
    pub fattest_drops: u64,
    pub marks: u64,
    pub law_marks: u64,
    pub drop_states: u64,
    pub flows: u64,
    pub new_flows: u64,
    pub queue_jain: f64,
    pub prob_mean: f64,
    pub prob_max: f64,
}

table!(AqmRow, "aqm",
    "One row per monitored link whose queue is an active queue manager (`codel`, `fq_codel`, \
     `pie`, `step`), over the measured time: how long packets stayed, and what the discipline \
     dropped and marked, by cause. `drops` is the links table's, the sum of the causes; a \
     column a discipline has no use for is 0 (counts) or NaN (figures). Empty without one.",
{
    link: "", "The link: `bottleneck`, `hop1`, ….", |r| r.link.clone();
    queue: "", "Its discipline (`network.bottleneck.queue`).", |r| r.queue.clone();
    arrivals: "pkt", "Packets that arrived at its queue.", |r| r.arrivals;
    sojourn_p50_s: "s",
        "Median sojourn time of the packets that arrived and were sent: their wait in the \
         queue, the quantity CoDel controls.",
        |r| r.sojourn_p50_s;
    sojourn_p90_s: "s", "90th percentile of the sojourn time.", |r| r.sojourn_p90_s;
    sojourn_p99_s: "s", "99th percentile of the sojourn time.", |r| r.sojourn_p99_s;
    sojourn_p999_s: "s", "99.9th percentile of the sojourn time.", |r| r.sojourn_p999_s;
    drops: "pkt", "Packets its queue dropped, every cause: overflow + law + fattest.", |r| r.drops;
    overflow_drops: "pkt",
        "Arrivals dropped because the buffer (the hard limit) was full.",
        |r| r.overflow_drops;
    law_drops: "pkt",
        "Packets dropped by the AQM's own law: CoDel's control law at dequeue (per queue under \
         FQ-CoDel), PIE's random early drop at arrival.",
        |r| r.law_drops;
    fattest_drops: "pkt",
        "FQ-CoDel: packets dropped from the head of the fattest queue to make room for an \
         arrival, the buffer or `fq_codel_memory_limit` being full (RFC 8290 §4.1).",
        |r| r.fattest_drops;
    marks: "pkt", "Packets marked Congestion Experienced (the links table's `marks`).", |r| r.marks;
    law_marks: "pkt",
        "Of them, marks by the law instead of a drop: at dequeue (CoDel, FQ-CoDel) or at \
         arrival (PIE, step marking).",
        |r| r.law_marks;
    drop_states: "",
        "CoDel: times a queue entered the dropping state (summed over FQ-CoDel's queues).",
        |r| r.drop_states;
    flows: "", "FQ-CoDel: queues that held a packet (flows that collided share one).", |r| r.flows;
    new_flows: "",
        "FQ-CoDel: times a queue joined the new-flows list, served first: a sparse flow's \
         packets, or a flow whose queue had emptied.",
        |r| r.new_flows;
    queue_jain: "",
        "FQ-CoDel: Jain's index of the bytes each queue sent, (Σx)² / (n·Σx²) over the queues \
         that sent any; 1 = the link shared equally; NaN for the others.",
        |r| r.queue_jain;
    prob_mean: "", "PIE: the drop probability, mean over its updates; NaN for the others.", |r| r.prob_mean;
    prob_max: "", "PIE: the largest drop probability of its updates; NaN for the others.", |r| r.prob_max;
});

impl AqmRow {
    /// The row of link `link` running discipline `queue`, from its counts and its monitor.
    pub(super) fn new(link: &str, queue: &str, k: AqmCounts, mon: &QueueMonitor) -> AqmRow {
        let ps = PS_PER_S as f64;
        AqmRow {
            link: link.to_string(),
            queue: queue.to_string(),
            arrivals: mon.totals.arrivals,
            sojourn_p50_s: mon.delay.quantile(0.5) / ps,
            sojourn_p90_s: mon.delay.quantile(0.9) / ps,
            sojourn_p99_s: mon.delay.quantile(0.99) / ps,
            sojourn_p999_s: mon.delay.quantile(0.999) / ps,
            drops: mon.totals.drops,
            overflow_drops: k.overflow_drops,
            law_drops: k.law_drops,
            fattest_drops: k.fattest_drops,
            marks: mon.totals.marks,
            law_marks: k.law_marks,
            drop_states: k.drop_states,
            flows: k.flows,
            new_flows: k.new_flows,
            queue_jain: k.queue_jain.unwrap_or(f64::NAN),
            prob_mean: k.prob_mean.unwrap_or(f64::NAN),
            prob_max: k.prob_max.unwrap_or(f64::NAN),
        }
    }
}
