//! Results of a run: a summary, a per-flow table, a per-link table, the bottleneck time series
//! and, on request, the bottleneck queue event log. Everything about a queue comes from its
//! monitor.
//!
//! "The bottleneck" of the summary, time series and event log is the network's summary link:
//! the dumbbell's bottleneck, or the parking lot's `network.summary_hop`. The per-link table
//! has a row for every monitored link, the summary link's computed exactly as the summary is.
//!
//! With `[autosize]`, the `autosize` table has one row per step of the live auto-sizer.
//!
//! On the switch topology the monitored links are the switch's output lines, and the summary's
//! queue figures that are totals or means (utilization, throughput, drops, arrivals, drop
//! rate, mean and largest queue, departures) cover every output: utilization is the mean over
//! the outputs. Figures of a distribution (queueing delay, gaps, bursts), the time series and
//! the event log are `network.switch.summary_port`'s. The `ports` table has one row per port:
//! its input's VOQs and its output line.

use serde_json::{json, Map, Value};

use crate::endpoint::Endpoints;
use crate::monitor::trace::TraceLog;
use crate::monitor::{EventLog, QueueMonitor};
use crate::scenario::Scenario;
use crate::sim::Conservation;
use crate::tcp::flow::TcpFlow;
use crate::topology::Network;
use crate::units::{BufferLimit, PS_PER_S};

/// The run's headline numbers, all over the measured window unless noted.
#[derive(Clone, Debug, PartialEq)]
pub struct Summary {
    pub name: String,
    pub seed: u64,
    pub duration_s: f64,
    pub warmup_s: f64,
    pub measured_s: f64,
    /// Fraction of the window the bottleneck serializer was busy.
    pub utilization: f64,
    /// Bits the bottleneck serialized per second (headers included).
    pub throughput_bps: f64,
    /// Payload bits delivered in order to receivers per second.
    pub goodput_bps: f64,
    /// Bottleneck queue drops ÷ arrivals at the bottleneck queue.
    pub drop_rate: f64,
    pub drops: u64,
    /// When the bottleneck dropped its first packet, from the start of the run (warm-up
    /// included); None (null in JSON) when it never dropped.
    pub first_drop_s: Option<f64>,
    /// Packets the bottleneck queue admitted with an ECN mark (CE), and marks ÷ arrivals. A
    /// marked packet is not a drop.
    pub marks: u64,
    pub mark_rate: f64,
    pub arrivals: u64,
    /// Packets the bottleneck started serializing, whole run.
    pub departures: u64,
    /// Packets dropped by the random-loss element.
    pub loss_drops: u64,
    pub mean_queue_pkts: f64,
    pub max_queue_pkts: u64,
    pub mean_queue_bytes: f64,
    pub queue_delay_mean_s: f64,
    pub queue_delay_p50_s: f64,
    pub queue_delay_p99_s: f64,
    /// Gaps between successive packets stored at the bottleneck (thesis Fig 4.9): mean and
    /// quantiles, and the fraction shorter than the previous packet's serialization time.
    pub iat_mean_s: f64,
    pub iat_p10_s: f64,
    pub iat_p50_s: f64,
    pub iat_p90_s: f64,
    pub iat_faster_than_line: f64,
    /// Runs of successive arrivals of one flow (thesis Fig 4.12): mean and 99th percentile
    /// length, and the fraction of successive arrival pairs of the same flow (IMC Fig 13).
    pub burst_mean_pkts: f64,
    pub burst_p99_pkts: f64,
    pub same_flow_fraction: f64,
    /// Jain's index over per-flow goodput: (Σx)² / (n·Σx²).
    pub jain_fairness: f64,
    pub retransmits: u64,
    pub timeouts: u64,
    /// Window reductions in answer to ECN-Echo, all flows (RFC 3168 §6.1.2).
    pub ecn_reactions: u64,
    /// Retransmissions per loss (every monitored queue's drops + random); 1.00 means no
    /// needless resends.
    pub retransmits_per_drop: f64,
    pub flows: u64,
    /// Events executed, whole run.
    pub events: u64,
    pub wall_s: f64,
    pub bottleneck_rate_bps: u64,
    /// Buffer limit in packets at the end of the run (−1 when given in bytes or unlimited).
    pub buffer_pkts: i64,
    pub buffer_bytes: i64,
    /// The auto-sizer's answer: the median of the sizes its search converged to (see
    /// `AutoSizer::answer`); −1 without `[autosize]` or if it never converged.
    pub autosize_buffer_pkts: i64,
    pub rtt_mean_s: f64,
    /// The switch topology's router (all 0 on the others): its ports, the packets arriving
    /// at and dropped by its inputs (VOQ full), the VOQ packets per input after each slot's
    /// arrivals (mean over slots and inputs; largest), the line cell slots of the window, those
    /// with cells to schedule, and the mean matching size (cells per matching computed).
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
        let head = json!({
            "name": self.name, "seed": self.seed,
            "duration_s": self.duration_s, "warmup_s": self.warmup_s, "measured_s": self.measured_s,
            "utilization": self.utilization, "throughput_bps": self.throughput_bps,
            "goodput_bps": self.goodput_bps, "drop_rate": self.drop_rate, "drops": self.drops,
            "first_drop_s": self.first_drop_s,
            "marks": self.marks, "mark_rate": self.mark_rate,
        });
        let v = json!({
            "arrivals": self.arrivals, "departures": self.departures, "loss_drops": self.loss_drops,
            "mean_queue_pkts": self.mean_queue_pkts, "max_queue_pkts": self.max_queue_pkts,
            "mean_queue_bytes": self.mean_queue_bytes,
            "queue_delay_mean_s": self.queue_delay_mean_s, "queue_delay_p50_s": self.queue_delay_p50_s,
            "queue_delay_p99_s": self.queue_delay_p99_s,
            "iat_mean_s": self.iat_mean_s, "iat_p10_s": self.iat_p10_s, "iat_p50_s": self.iat_p50_s,
            "iat_p90_s": self.iat_p90_s, "iat_faster_than_line": self.iat_faster_than_line,
            "burst_mean_pkts": self.burst_mean_pkts, "burst_p99_pkts": self.burst_p99_pkts,
            "same_flow_fraction": self.same_flow_fraction, "jain_fairness": self.jain_fairness,
            "retransmits": self.retransmits, "timeouts": self.timeouts,
            "ecn_reactions": self.ecn_reactions, "retransmits_per_drop": self.retransmits_per_drop, "flows": self.flows,
            "events": self.events, "wall_s": self.wall_s,
            "bottleneck_rate_bps": self.bottleneck_rate_bps, "buffer_pkts": self.buffer_pkts,
            "buffer_bytes": self.buffer_bytes, "autosize_buffer_pkts": self.autosize_buffer_pkts,
            "rtt_mean_s": self.rtt_mean_s,
        });
        // Several objects: one json! of every key exceeds the macro's recursion limit.
        let switch = json!({
            "ports": self.ports, "input_arrivals": self.input_arrivals,
            "input_drops": self.input_drops, "input_drop_rate": self.input_drop_rate,
            "voq_mean_pkts": self.voq_mean_pkts, "voq_max_pkts": self.voq_max_pkts,
            "fabric_slots": self.fabric_slots, "fabric_busy_slots": self.fabric_busy_slots,
            "fabric_mean_matching": self.fabric_mean_matching,
        });
        match (head, v, switch) {
            (Value::Object(mut m), Value::Object(middle), Value::Object(rest)) => {
                m.extend(middle);
                m.extend(rest);
                m
            }
            _ => unreachable!(),
        }
    }
}

/// One row of the per-flow table.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowRecord {
    pub flow: u32,
    pub traffic: u32,
    pub kind: &'static str,
    pub tcp: &'static str,
    /// The flow's congestion control ("reno", "bic", "cubic", "bbr"; "" for UDP).
    pub cc: &'static str,
    pub rtt_s: f64,
    pub start_s: f64,
    pub goodput_bps: f64,
    pub delivered_bytes: u64,
    pub sent_packets: u64,
    pub retransmits: u64,
    pub timeouts: u64,
    /// Window reductions in answer to ECN-Echo.
    pub ecn_reactions: u64,
    pub cwnd_pkts: f64,
    pub ssthresh_pkts: f64,
    pub srtt_s: f64,
    /// Server machine and class queue (−1 without machines).
    pub machine: i64,
    pub class: i64,
    /// The switch input and output the flow crosses, from 1 (−1 off the switch topology).
    pub input: i64,
    pub output: i64,
}

/// One interval of the bottleneck time series.
#[derive(Clone, Debug, PartialEq)]
pub struct SeriesRow {
    /// End of the interval.
    pub time_s: f64,
    pub throughput_bps: f64,
    pub utilization: f64,
    /// Time-average packets waiting.
    pub queue_pkts: f64,
    pub queue_max_pkts: u64,
    pub arrivals: u64,
    pub drops: u64,
}

/// One row of the per-link table: a monitored link over the measured window.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkRow {
    /// Position on the path, from 1 (the dumbbell's bottleneck is hop 1).
    pub hop: u32,
    /// "bottleneck" on the dumbbell, "hop1", "hop2", … on the parking lot.
    pub name: String,
    pub rate_bps: u64,
    /// Buffer limit in packets (−1 when given in bytes or unlimited).
    pub buffer_pkts: i64,
    pub buffer_bytes: i64,
    /// Fraction of the window the serializer was busy.
    pub utilization: f64,
    /// Bits serialized per second, headers included.
    pub throughput_bps: f64,
    /// Queue drops ÷ arrivals at the queue.
    pub drop_rate: f64,
    pub drops: u64,
    /// Packets admitted with an ECN mark (CE) by the queue's discipline; marks ÷ arrivals.
    pub marks: u64,
    pub mark_rate: f64,
    pub arrivals: u64,
    pub mean_queue_pkts: f64,
    pub max_queue_pkts: u64,
    pub queue_delay_mean_s: f64,
    /// Largest occupancy ever, warm-up included (packets, bytes): for the invariant that a
    /// queue never holds more than its limit. Not exported.
    pub max_queue_ever: (u64, u64),
}

impl LinkRow {
    fn new(hop: u32, name: String, limit: BufferLimit, mon: &QueueMonitor, measured_s: f64) -> LinkRow {
        LinkRow {
            hop,
            name,
            rate_bps: mon.rate.bits_per_s(),
            buffer_pkts: match limit {
                BufferLimit::Packets(n) => n as i64,
                _ => -1,
            },
            buffer_bytes: match limit {
                BufferLimit::Bytes(n) => n as i64,
                _ => -1,
            },
            utilization: mon.utilization(),
            throughput_bps: mon.totals.departed_bytes as f64 * 8.0 / measured_s,
            drop_rate: mon.drop_rate(),
            drops: mon.totals.drops,
            marks: mon.totals.marks,
            mark_rate: mon.mark_rate(),
            arrivals: mon.totals.arrivals,
            mean_queue_pkts: mon.mean_queue_pkts(),
            max_queue_pkts: mon.totals.max_pkts,
            queue_delay_mean_s: mon.delay.mean() / PS_PER_S as f64,
            max_queue_ever: (mon.max_pkts_ever, mon.max_bytes_ever),
        }
    }
}

/// One port of the switch topology's router over the measured window: its input (the VOQs
/// of packets arriving there) and its output line (the same figures as its links row).
#[derive(Clone, Debug, PartialEq)]
pub struct PortRow {
    /// From 1.
    pub port: u32,
    /// Flows entering at this input, and leaving by this output.
    pub flows_in: u64,
    pub flows_out: u64,
    /// Packets reaching the input's arrival phase, and those dropped there (VOQ full; under
    /// OQ emulation, dropped by the shadow OQ switch).
    pub in_arrivals: u64,
    pub in_drops: u64,
    pub in_drop_rate: f64,
    /// Packets in the input's VOQs after each slot's arrival phase: mean over the window's
    /// slots, and largest.
    pub voq_mean_pkts: f64,
    pub voq_max_pkts: u64,
    /// Drops at the input's multiplexing router (0 with its default unlimited buffer).
    pub mux_drops: u64,
    pub out_utilization: f64,
    pub out_throughput_bps: f64,
    pub out_arrivals: u64,
    pub out_drops: u64,
    pub out_drop_rate: f64,
    pub out_mean_queue_pkts: f64,
    pub out_max_queue_pkts: u64,
    /// OQ emulation: packets sent after their shadow OQ slot (0 with speedup ≥ 2).
    pub late_departures: u64,
}

/// One finite transfer (closed-loop traffic): a connection carrying one file.
#[derive(Clone, Debug, PartialEq)]
pub struct TransferRow {
    pub flow: u32,
    pub traffic: u32,
    pub conn: u32,
    /// When the client sent its request (SYN).
    pub start_s: f64,
    /// When the client had the last byte; NaN if the run ended first.
    pub end_s: f64,
    pub bytes: u64,
    /// Flow completion time, end − start; NaN if incomplete.
    pub fct_s: f64,
    pub throughput_bps: f64,
    pub retransmits: u64,
    pub timeouts: u64,
    pub complete: bool,
}

/// One step of the live auto-sizer (see [`crate::autosize::Step`]).
#[derive(Clone, Debug, PartialEq)]
pub struct AutosizeRow {
    /// End of the interval, when the step decided.
    pub time_s: f64,
    /// The buffer limit during the interval.
    pub buffer_pkts: u64,
    /// Fraction of the interval after its settling time that the link was busy; drops and
    /// arrivals over the same time.
    pub utilization: f64,
    pub drops: u64,
    pub arrivals: u64,
    /// utilization ≥ tolerance × target.
    pub passed: bool,
    /// The limit for the next interval.
    pub next_buffer_pkts: u64,
    /// The search had converged after this step.
    pub converged: bool,
}

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
    pub autosize: Vec<AutosizeRow>,
    /// Per-flow TCP traces, in (time, flow) order (empty without `monitor.trace_flows`).
    pub traces: TraceLog,
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

fn secs(ps: u64) -> f64 {
    ps as f64 / PS_PER_S as f64
}

pub fn collect(s: &Scenario, net: &mut Network) -> RunResult {
    let sim = &mut net.sim;
    let measured = sim.window.len();
    let measured_s = measured.secs_f64();
    let mut links = Vec::with_capacity(net.monitored.len());
    let mut summary_monitor = None;
    let mut queue_bytes = Vec::with_capacity(net.monitored.len());
    for (i, m) in net.monitored.iter().enumerate() {
        let link = &mut sim.links[m.link as usize];
        let mon = link.take_monitor().expect("a monitored link has a monitor");
        links.push(LinkRow::new(i as u32 + 1, m.name.clone(), link.limit(), &mon, measured_s));
        queue_bytes.push(mon.mean_queue_bytes());
        if i == net.summary {
            summary_monitor = Some(mon);
        }
    }
    let (ports, fig) = match &net.switch {
        Some(info) => switch_ports(sim, info, &links),
        None => (Vec::new(), SwitchFigures::default()),
    };
    let mut mon = summary_monitor.expect("the summary link is monitored");
    let (events, events_written, events_error) = match mon.log.take() {
        None => (None, 0, None),
        Some(log) if log.is_streaming() => (None, log.written, log.error),
        Some(log) => (Some(log.pending), 0, None),
    };
    let mut row = links[net.summary].clone();
    let link = &sim.links[net.monitored[net.summary].link as usize];
    let buffer = link.limit();
    let mut departures = link.departures;
    let mut mean_queue_bytes = mon.mean_queue_bytes();
    if net.switch.is_some() {
        // Every output counts: means of utilization, throughput and queue, totals of drops
        // and arrivals, the largest queue (module doc).
        let k = links.len() as f64;
        row.utilization = links.iter().map(|l| l.utilization).sum::<f64>() / k;
        row.throughput_bps = links.iter().map(|l| l.throughput_bps).sum::<f64>() / k;
        row.drops = links.iter().map(|l| l.drops).sum();
        row.arrivals = links.iter().map(|l| l.arrivals).sum();
        row.drop_rate = if row.arrivals > 0 { row.drops as f64 / row.arrivals as f64 } else { 0.0 };
        row.marks = links.iter().map(|l| l.marks).sum();
        row.mark_rate = ratio(row.marks, row.arrivals);
        row.mean_queue_pkts = links.iter().map(|l| l.mean_queue_pkts).sum::<f64>() / k;
        row.max_queue_pkts = links.iter().map(|l| l.max_queue_pkts).max().unwrap_or(0);
        row.max_queue_ever = links.iter().map(|l| l.max_queue_ever).max().unwrap_or((0, 0));
        mean_queue_bytes = queue_bytes.iter().sum::<f64>() / k;
        departures = net.monitored.iter().map(|m| sim.links[m.link as usize].departures).sum();
    }

    let mut flows = Vec::with_capacity(sim.flows.len());
    let (mut retransmits, mut timeouts, mut goodput_sum) = (0u64, 0u64, 0.0f64);
    let mut ecn_reactions = 0u64;
    let flow_ports = net.switch.as_ref().map(|w| &w.flow_ports);
    let port_of = |f: usize| flow_ports.and_then(|p| p.get(f)).map(|&(i, j)| (i as i64 + 1, j as i64 + 1));
    for (i, f) in sim.flows.iter().enumerate() {
        let info = &f.info;
        let rec = match &f.endpoints {
            Endpoints::Tcp(TcpFlow { sender, receiver }) => {
                let delivered = receiver.window_delivered_bytes;
                let rt = sender.window_stats.retransmits;
                let to = sender.window_stats.timeouts;
                FlowRecord {
                    flow: i as u32,
                    traffic: info.traffic,
                    kind: info.kind,
                    tcp: info.tcp,
                    cc: sender.cfg.cc.name(),
                    rtt_s: info.rtt.secs_f64(),
                    start_s: info.start.secs_f64(),
                    goodput_bps: delivered as f64 * 8.0 / measured_s,
                    delivered_bytes: delivered,
                    sent_packets: sender.window_stats.sent,
                    retransmits: rt,
                    timeouts: to,
                    ecn_reactions: sender.window_stats.ecn_reactions,
                    cwnd_pkts: sender.w.cwnd,
                    ssthresh_pkts: sender.w.ssthresh,
                    srtt_s: sender.rtt.srtt().map_or(0.0, |t| t.secs_f64()),
                    machine: info.placement.map_or(-1, |p| p.0),
                    class: info.placement.map_or(-1, |p| p.1),
                    input: port_of(i).map_or(-1, |p| p.0),
                    output: port_of(i).map_or(-1, |p| p.1),
                }
            }
            Endpoints::Udp(u) => {
                let delivered = u.window_received * info.payload as u64;
                FlowRecord {
                    flow: i as u32,
                    traffic: info.traffic,
                    kind: info.kind,
                    tcp: info.tcp,
                    cc: "",
                    rtt_s: info.rtt.secs_f64(),
                    start_s: info.start.secs_f64(),
                    goodput_bps: delivered as f64 * 8.0 / measured_s,
                    delivered_bytes: delivered,
                    sent_packets: u.sent,
                    retransmits: 0,
                    timeouts: 0,
                    ecn_reactions: 0,
                    cwnd_pkts: 0.0,
                    ssthresh_pkts: 0.0,
                    srtt_s: 0.0,
                    machine: info.placement.map_or(-1, |p| p.0),
                    class: info.placement.map_or(-1, |p| p.1),
                    input: port_of(i).map_or(-1, |p| p.0),
                    output: port_of(i).map_or(-1, |p| p.1),
                }
            }
        };
        retransmits += rec.retransmits;
        timeouts += rec.timeouts;
        ecn_reactions += rec.ecn_reactions;
        goodput_sum += rec.goodput_bps;
        flows.push(rec);
    }
    let sq: f64 = flows.iter().map(|f| f.goodput_bps * f.goodput_bps).sum();
    let jain = if sq > 0.0 { goodput_sum * goodput_sum / (flows.len() as f64 * sq) } else { 0.0 };

    let rate = row.rate_bps as f64;
    let interval_s = secs(mon.interval.0);
    let timeseries = mon
        .buckets
        .iter()
        .enumerate()
        .map(|(i, b)| {
            let start = i as u64 * mon.interval.0;
            let len = (s.duration.0 - start).min(mon.interval.0) as f64;
            let util = b.busy_ps as f64 / len;
            SeriesRow {
                // The last interval may be cut short by the end of the run.
                time_s: ((i + 1) as f64 * interval_s).min(s.duration.secs_f64()),
                throughput_bps: util * rate,
                utilization: util,
                queue_pkts: b.occupancy_pkt_ps as f64 / len,
                queue_max_pkts: b.max_pkts,
                arrivals: b.arrivals,
                drops: b.drops,
            }
        })
        .collect();

    // Retransmissions are every flow's, so the losses they answer are every monitored queue's
    // (on the dumbbell, the bottleneck's alone).
    let drops_total = links.iter().map(|l| l.drops).sum::<u64>()
        + sim.loss_drops_window
        + ports.iter().map(|p| p.in_drops + p.mux_drops).sum::<u64>();
    let rtt_mean_s =
        sim.flows.iter().map(|f| f.info.rtt.secs_f64()).sum::<f64>() / sim.flows.len().max(1) as f64;
    let summary = Summary {
        name: s.name.clone(),
        seed: s.seed,
        duration_s: s.duration.secs_f64(),
        warmup_s: s.warmup.secs_f64(),
        measured_s,
        utilization: row.utilization,
        throughput_bps: row.throughput_bps,
        goodput_bps: goodput_sum,
        drop_rate: row.drop_rate,
        drops: row.drops,
        first_drop_s: mon.first_drop.map(|t| t.secs_f64()),
        marks: row.marks,
        mark_rate: row.mark_rate,
        arrivals: row.arrivals,
        departures,
        loss_drops: sim.loss_drops_window,
        mean_queue_pkts: row.mean_queue_pkts,
        max_queue_pkts: row.max_queue_pkts,
        mean_queue_bytes,
        queue_delay_mean_s: row.queue_delay_mean_s,
        queue_delay_p50_s: mon.delay.quantile(0.5) / PS_PER_S as f64,
        queue_delay_p99_s: mon.delay.quantile(0.99) / PS_PER_S as f64,
        iat_mean_s: mon.mix.interarrival.mean() / PS_PER_S as f64,
        iat_p10_s: mon.mix.interarrival.quantile(0.1) / PS_PER_S as f64,
        iat_p50_s: mon.mix.interarrival.quantile(0.5) / PS_PER_S as f64,
        iat_p90_s: mon.mix.interarrival.quantile(0.9) / PS_PER_S as f64,
        iat_faster_than_line: mon.mix.faster_than_line_fraction(),
        burst_mean_pkts: mon.mix.bursts.mean(),
        burst_p99_pkts: mon.mix.bursts.quantile(0.99),
        same_flow_fraction: mon.mix.same_flow_fraction(),
        jain_fairness: jain,
        retransmits,
        timeouts,
        ecn_reactions,
        retransmits_per_drop: if drops_total > 0 { retransmits as f64 / drops_total as f64 } else { 0.0 },
        flows: flows.len() as u64,
        events: sim.sched.executed(),
        wall_s: sim.wall.as_secs_f64(),
        bottleneck_rate_bps: row.rate_bps,
        buffer_pkts: row.buffer_pkts,
        buffer_bytes: row.buffer_bytes,
        autosize_buffer_pkts: sim.autosize.as_ref().and_then(|a| a.answer()).map_or(-1, |b| b as i64),
        rtt_mean_s,
        ports: fig.ports,
        input_arrivals: fig.input_arrivals,
        input_drops: fig.input_drops,
        input_drop_rate: fig.input_drop_rate,
        voq_mean_pkts: fig.voq_mean_pkts,
        voq_max_pkts: fig.voq_max_pkts,
        fabric_slots: fig.fabric_slots,
        fabric_busy_slots: fig.fabric_busy_slots,
        fabric_mean_matching: fig.fabric_mean_matching,
    };
    let autosize = sim.autosize.as_ref().map_or(Vec::new(), |a| {
        a.steps
            .iter()
            .map(|st| AutosizeRow {
                time_s: st.time.secs_f64(),
                buffer_pkts: st.buffer_pkts,
                utilization: st.utilization,
                drops: st.drops,
                arrivals: st.arrivals,
                passed: st.passed,
                next_buffer_pkts: st.next_buffer_pkts,
                converged: st.converged,
            })
            .collect()
    });
    let transfers = sim
        .transfers
        .iter()
        .map(|t| {
            let start_s = t.start.secs_f64();
            let end_s = t.end.map_or(f64::NAN, |e| e.secs_f64());
            let fct_s = end_s - start_s;
            TransferRow {
                flow: t.flow,
                traffic: t.traffic,
                conn: t.conn as u32,
                start_s,
                end_s,
                bytes: t.bytes,
                fct_s,
                throughput_bps: t.bytes as f64 * 8.0 / fct_s,
                retransmits: t.retransmits,
                timeouts: t.timeouts,
                complete: t.end.is_some(),
            }
        })
        .collect();
    RunResult {
        summary,
        flows,
        transfers,
        links,
        ports,
        timeseries,
        autosize,
        traces: sim.tracer.take().map_or_else(TraceLog::default, |t| t.finish()),
        events,
        events_written,
        events_error,
        conservation: sim.counts,
        max_queue_ever: row.max_queue_ever,
        buffer,
    }
}

/// The switch's summary figures (see [`Summary`]).
#[derive(Default)]
struct SwitchFigures {
    ports: u64,
    input_arrivals: u64,
    input_drops: u64,
    input_drop_rate: f64,
    voq_mean_pkts: f64,
    voq_max_pkts: u64,
    fabric_slots: u64,
    fabric_busy_slots: u64,
    fabric_mean_matching: f64,
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

/// The ports table and the summary figures of the switch topology's router. `outputs` are the
/// links rows of its output lines, in port order.
fn switch_ports(
    sim: &mut crate::sim::Sim,
    info: &crate::topology::SwitchNet,
    outputs: &[LinkRow],
) -> (Vec<PortRow>, SwitchFigures) {
    let sw = &sim.switches[info.id as usize];
    let slots = sw.window_slots();
    let n = sw.ports();
    let (mut flows_in, mut flows_out) = (vec![0u64; n], vec![0u64; n]);
    for &(i, j) in &info.flow_ports {
        flows_in[i as usize] += 1;
        flows_out[j as usize] += 1;
    }
    let stats = sw.stats.clone();
    let rows: Vec<PortRow> = (0..n)
        .map(|p| {
            let st = &stats.inputs[p];
            let out = &outputs[p];
            let mux = &mut sim.links[info.inputs[p] as usize];
            let mux_drops = mux.take_monitor().map_or(0, |mut m| {
                m.finish(sim.window.end, 0, 0);
                m.totals.drops
            });
            PortRow {
                port: p as u32 + 1,
                flows_in: flows_in[p],
                flows_out: flows_out[p],
                in_arrivals: st.arrivals,
                in_drops: st.drops,
                in_drop_rate: ratio(st.drops, st.arrivals),
                voq_mean_pkts: ratio(st.occupancy_slots, slots),
                voq_max_pkts: st.max_pkts,
                mux_drops,
                out_utilization: out.utilization,
                out_throughput_bps: out.throughput_bps,
                out_arrivals: out.arrivals,
                out_drops: out.drops,
                out_drop_rate: out.drop_rate,
                out_mean_queue_pkts: out.mean_queue_pkts,
                out_max_queue_pkts: out.max_queue_pkts,
                late_departures: stats.late[p],
            }
        })
        .collect();
    let input_arrivals = rows.iter().map(|r| r.in_arrivals).sum();
    let input_drops = rows.iter().map(|r| r.in_drops).sum();
    let fig = SwitchFigures {
        ports: n as u64,
        input_arrivals,
        input_drops,
        input_drop_rate: ratio(input_drops, input_arrivals),
        voq_mean_pkts: rows.iter().map(|r| r.voq_mean_pkts).sum::<f64>() / n as f64,
        voq_max_pkts: rows.iter().map(|r| r.voq_max_pkts).max().unwrap_or(0),
        fabric_slots: slots,
        fabric_busy_slots: stats.busy_slots,
        fabric_mean_matching: stats.mean_matching(),
    };
    (rows, fig)
}
