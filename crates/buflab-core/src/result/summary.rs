//! The summary: a run's headline numbers, one row.
//!
//! Read first: [`super`] (what "the bottleneck" is on each topology) and [`super::table`]
//! (how a table is described). This file owns the summary's fields and their description,
//! and so the order of the keys of `--json` and of the Python dict; `collect.rs` fills it in.
//! It must not know how a figure is measured.

use serde_json::{Map, Value};

use super::table::{row_json, table};

/// A run's headline numbers; each field is the column of the same name described below (the
/// switch's figures are gathered in `switch`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Summary {
    pub name: String,
    pub seed: u64,
    pub duration_s: f64,
    pub warmup_s: f64,
    pub measured_s: f64,
    pub utilization: f64,
    pub throughput_bps: f64,
    pub goodput_bps: f64,
    pub drop_rate: f64,
    pub drops: u64,
    pub first_drop_s: Option<f64>,
    pub marks: u64,
    pub mark_rate: f64,
    pub arrivals: u64,
    pub departures: u64,
    pub loss_drops: u64,
    pub mean_queue_pkts: f64,
    pub max_queue_pkts: u64,
    pub mean_queue_bytes: f64,
    pub queue_delay_mean_s: f64,
    pub queue_delay_p50_s: f64,
    pub queue_delay_p99_s: f64,
    pub iat_mean_s: f64,
    pub iat_p10_s: f64,
    pub iat_p50_s: f64,
    pub iat_p90_s: f64,
    pub iat_faster_than_line: f64,
    pub burst_mean_pkts: f64,
    pub burst_p99_pkts: f64,
    pub same_flow_fraction: f64,
    pub jain_fairness: f64,
    pub retransmits: u64,
    pub timeouts: u64,
    pub ecn_reactions: u64,
    pub retransmits_per_drop: f64,
    pub flows: u64,
    pub events: u64,
    pub wall_s: f64,
    pub bottleneck_rate_bps: u64,
    pub buffer_pkts: Option<i64>,
    pub buffer_bytes: Option<i64>,
    pub autosize_buffer_pkts: Option<i64>,
    pub rtt_mean_s: f64,
    pub switch: SwitchFigures,
}

/// The summary's figures of the switch topology's router (all 0 on the other topologies);
/// each field is the summary's column of the same name.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SwitchFigures {
    pub ports: u64,
    pub input_arrivals: u64,
    pub input_drops: u64,
    pub input_drop_rate: f64,
    pub voq_mean_pkts: f64,
    pub voq_max_pkts: u64,
    pub fabric_slots: u64,
    pub fabric_busy_slots: u64,
    pub fabric_mean_matching: f64,
}

impl Summary {
    /// The summary as an ordered JSON object (the `--json` output and the Python dict).
    pub fn to_json(&self) -> Map<String, Value> {
        row_json(self)
    }
}

table!(Summary, "summary",
    "Rates are in bit/s, times in seconds. Metrics cover the measured time only (after \
     warm-up), except `departures` and `events` (whole run) and the echoes of the \
     configuration. On a parking lot, the bottleneck of the summary, the time series and the \
     event log is hop `network.summary_hop` (the first by default); on a network, a tree or a \
     layered network, the link `network.summary_link` (the first monitored link by default); \
     the `links` table has every monitored link. On a switch, the summary's utilization, throughput, drops, arrivals and queue \
     figures cover every output line (utilization and throughput: the mean over the outputs; \
     `bottleneck_rate_bps` and `buffer_pkts` are one output's); its delay, gap and burst \
     figures, the time series and the event log are `network.switch.summary_port`'s; the \
     `ports` table has every port.",
{
    name: "", "Scenario name.", |s| s.name.clone();
    seed: "", "Seed of the run.", |s| s.seed;
    duration_s: "s", "Simulated time, warm-up included.", |s| s.duration_s;
    warmup_s: "s", "Warm-up excluded from every measured metric.", |s| s.warmup_s;
    measured_s: "s", "Measured time: duration − warm-up.", |s| s.measured_s;
    utilization: "", "Fraction of the measured time the bottleneck serializer was busy (0..1).",
        |s| s.utilization;
    throughput_bps: "bit/s", "Bits the bottleneck serialized per second, headers included.",
        |s| s.throughput_bps;
    goodput_bps: "bit/s", "Payload bits delivered in order to receivers per second.", |s| s.goodput_bps;
    drop_rate: "", "Bottleneck queue drops / arrivals at the bottleneck queue.", |s| s.drop_rate;
    drops: "pkt", "Packets dropped by the bottleneck queue (buffer full, or RED's decision).",
        |s| s.drops;
    first_drop_s: "s",
        "When the bottleneck dropped its first packet, from the start of the run (warm-up \
         included); null (None in Python) when it never dropped. A paced flow's first loss \
         comes later in slow start (pacing seed, P1).",
        |s| s.first_drop_s;
    marks: "pkt",
        "Packets the bottleneck's RED queue admitted with an ECN mark (Congestion Experienced) \
         instead of dropping them (`red_ecn`); a mark is not a drop.",
        |s| s.marks;
    mark_rate: "", "Bottleneck queue marks / arrivals at the bottleneck queue.", |s| s.mark_rate;
    arrivals: "pkt", "Packets that arrived at the bottleneck queue.", |s| s.arrivals;
    departures: "pkt", "Packets the bottleneck started serializing, over the whole run.",
        |s| s.departures;
    loss_drops: "pkt", "Packets removed by the random-loss model (`network.loss`), not by the buffer.",
        |s| s.loss_drops;
    mean_queue_pkts: "pkt", "Time-average number of packets waiting in the bottleneck buffer.",
        |s| s.mean_queue_pkts;
    max_queue_pkts: "pkt", "Largest number of packets waiting in the bottleneck buffer.",
        |s| s.max_queue_pkts;
    mean_queue_bytes: "B", "Time-average bytes waiting in the bottleneck buffer.", |s| s.mean_queue_bytes;
    queue_delay_mean_s: "s", "Mean time an admitted packet waits in the bottleneck buffer.",
        |s| s.queue_delay_mean_s;
    queue_delay_p50_s: "s", "Median of that waiting time.", |s| s.queue_delay_p50_s;
    queue_delay_p99_s: "s", "99th percentile of that waiting time.", |s| s.queue_delay_p99_s;
    iat_mean_s: "s",
        "Mean gap between successive packets stored at the bottleneck, dropped ones left out \
         as in thesis Fig 4.9.",
        |s| s.iat_mean_s;
    iat_p10_s: "s", "10th percentile of that gap.", |s| s.iat_p10_s;
    iat_p50_s: "s", "Median of that gap.", |s| s.iat_p50_s;
    iat_p90_s: "s", "90th percentile of that gap.", |s| s.iat_p90_s;
    iat_faster_than_line: "",
        "Fraction of those gaps shorter than the previous packet's serialization time at the \
         bottleneck: packets arriving faster than line rate, i.e. at once from several inputs.",
        |s| s.iat_faster_than_line;
    burst_mean_pkts: "pkt",
        "Mean length of a burst: a run of successive arrivals at the bottleneck, dropped or \
         not, of one flow (thesis Fig 4.12).",
        |s| s.burst_mean_pkts;
    burst_p99_pkts: "pkt", "99th percentile of the burst length.", |s| s.burst_p99_pkts;
    same_flow_fraction: "",
        "Fraction of successive arrivals at the bottleneck that belong to the same flow \
         (IMC Fig 13).",
        |s| s.same_flow_fraction;
    jain_fairness: "", "Jain's index of per-flow goodput, (Σx)² / (n·Σx²); 1 = equal shares.",
        |s| s.jain_fairness;
    retransmits: "pkt", "TCP segments sent again, all flows.", |s| s.retransmits;
    timeouts: "", "Retransmission timeouts, all flows.", |s| s.timeouts;
    ecn_reactions: "",
        "Window reductions in answer to ECN-Echo, all flows (RFC 3168 §6.1.2; at most one per \
         window of data, none while repairing a loss).",
        |s| s.ecn_reactions;
    retransmits_per_drop: "",
        "Retransmissions per loss (drops at every monitored queue and, on a switch, at its \
         inputs, and random loss), over the measured time. 1 when every loss is resent once \
         and nothing else is; above 1 when segments are resent that were not lost: after a \
         timeout a sender goes back to the first unacknowledged segment and resends the \
         whole window on purpose (go-back-N), and a spurious timeout resends what was only \
         late. Below 1 when losses are still unrepaired at the end of the window.",
        |s| s.retransmits_per_drop;
    flows: "", "Number of flows.", |s| s.flows;
    events: "", "Events the engine executed over the whole run (a measure of simulation work).",
        |s| s.events;
    wall_s: "s", "Wall-clock time of the run; it varies between equal runs.", |s| s.wall_s;
    bottleneck_rate_bps: "bit/s", "Bottleneck link rate.", |s| s.bottleneck_rate_bps;
    buffer_pkts: "pkt",
        "Bottleneck buffer in packets, or null (None in Python) when it is given in bytes or \
         unlimited (with `[autosize]`, the last limit in force).",
        |s| s.buffer_pkts;
    buffer_bytes: "B", "Bottleneck buffer in bytes, or null when it is given in packets or unlimited.",
        |s| s.buffer_bytes;
    autosize_buffer_pkts: "pkt",
        "The live auto-sizer's answer (`[autosize]`): the median of the sizes its search \
         converged to, each convergence counted once (the larger middle one of an even count); \
         null without `[autosize]` or if the search never converged. The `autosize` table has \
         every step.",
        |s| s.autosize_buffer_pkts;
    rtt_mean_s: "s", "Mean two-way propagation delay of the flows, without queueing.", |s| s.rtt_mean_s;
    ports: "", "Switch topology: N, the switch's ports (0 on the other topologies, as are the rest).",
        |s| s.switch.ports;
    input_arrivals: "pkt", "Switch: packets that reached the switch's inputs (its VOQs).",
        |s| s.switch.input_arrivals;
    input_drops: "pkt",
        "Switch: packets dropped at the inputs, VOQ full (under `oq_emulation`, dropped by the \
         shadow output-queued switch). `drops` counts the outputs' drops.",
        |s| s.switch.input_drops;
    input_drop_rate: "", "Switch: input_drops / input_arrivals.", |s| s.switch.input_drop_rate;
    voq_mean_pkts: "pkt",
        "Switch: packets in an input's VOQs after each slot's arrivals, mean over the measured \
         slots and the inputs.",
        |s| s.switch.voq_mean_pkts;
    voq_max_pkts: "pkt", "Switch: the largest number of packets in one input's VOQs.", |s| s.switch.voq_max_pkts;
    fabric_slots: "", "Switch: line cell slots in the measured time (one cell time each).",
        |s| s.switch.fabric_slots;
    fabric_busy_slots: "", "Switch: those slots with cells waiting at the inputs.", |s| s.switch.fabric_busy_slots;
    fabric_mean_matching: "",
        "Switch: mean matching size, cells moved per matching computed (at most N; several \
         matchings per slot with speedup).",
        |s| s.switch.fabric_mean_matching;
});
