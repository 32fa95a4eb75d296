//! The links table (one row per monitored link) and the switch's ports table (one row per
//! port of its router), with the switch's figures for the summary.
//!
//! Read first: [`super::table`] (how a table is described). This file owns these two
//! tables' columns and reading their rows from a link's monitor and the switch's counts at
//! the end of a run; what the summary takes from them is `collect.rs`'s.

use super::summary::SwitchFigures;
use super::table::table;
use crate::monitor::QueueMonitor;
use crate::sim::Sim;
use crate::topology::SwitchNet;
use crate::units::{BufferLimit, PS_PER_S};

/// One row of the links table: a monitored link over the measured window. Each field but
/// `max_queue_ever` is the column of the same name described below.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkRow {
    pub hop: u32,
    pub name: String,
    pub rate_bps: u64,
    pub buffer_pkts: Option<i64>,
    pub buffer_bytes: Option<i64>,
    pub utilization: f64,
    pub throughput_bps: f64,
    pub drop_rate: f64,
    pub drops: u64,
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

table!(LinkRow, "links",
    "One row per monitored link, over the measured time: the dumbbell's bottleneck, hops 1 to k \
     of a parking lot in path order, every monitored link of a network, a tree or a layered \
     network in entry order (a tree's routers from the root), or the output lines of a switch. The row of the link \
     the summary describes has the summary's figures exactly (on a switch, the summary's totals \
     and means cover every output).",
{
    hop: "", "The row's position, from 1: on the path of a parking lot, among the links of a graph, the port on a switch (the dumbbell's bottleneck is hop 1).",
        |l| l.hop;
    name: "", "`bottleneck`, `hop1`, `hop2`, …, a graph link's name (`r2->r1`), or `output1`, … on a switch.", |l| l.name.clone();
    rate_bps: "bit/s", "Link rate.", |l| l.rate_bps;
    buffer_pkts: "pkt",
        "Buffer limit in packets at the end of the run; null (<NA> in pandas) when it is in \
         bytes or unlimited.",
        |l| l.buffer_pkts;
    buffer_bytes: "B", "Buffer limit in bytes; null when it is in packets or unlimited.",
        |l| l.buffer_bytes;
    utilization: "", "Fraction of the measured time the link's serializer was busy.", |l| l.utilization;
    throughput_bps: "bit/s", "Bits serialized per second, headers included.", |l| l.throughput_bps;
    drop_rate: "", "Drops / arrivals at its queue.", |l| l.drop_rate;
    drops: "pkt", "Packets dropped by its queue.", |l| l.drops;
    marks: "pkt", "Packets its queue's discipline (RED) admitted with an ECN mark (CE); not drops.",
        |l| l.marks;
    mark_rate: "", "Marks / arrivals at its queue.", |l| l.mark_rate;
    arrivals: "pkt", "Packets that arrived at its queue.", |l| l.arrivals;
    mean_queue_pkts: "pkt", "Time-average packets waiting.", |l| l.mean_queue_pkts;
    max_queue_pkts: "pkt", "Largest number of packets waiting.", |l| l.max_queue_pkts;
    queue_delay_mean_s: "s", "Mean wait of an admitted packet.", |l| l.queue_delay_mean_s;
});

impl LinkRow {
    pub(super) fn new(
        hop: u32,
        name: String,
        limit: BufferLimit,
        mon: &QueueMonitor,
        measured_s: f64,
    ) -> LinkRow {
        LinkRow {
            hop,
            name,
            rate_bps: mon.rate.bits_per_s(),
            buffer_pkts: match limit {
                BufferLimit::Packets(n) => Some(n as i64),
                _ => None,
            },
            buffer_bytes: match limit {
                BufferLimit::Bytes(n) => Some(n as i64),
                _ => None,
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

/// One port of the switch topology's router over the measured window; each field is the
/// column of the same name described below.
#[derive(Clone, Debug, PartialEq)]
pub struct PortRow {
    pub port: u32,
    pub flows_in: u64,
    pub flows_out: u64,
    pub in_arrivals: u64,
    pub in_drops: u64,
    pub in_drop_rate: f64,
    pub voq_mean_pkts: f64,
    pub voq_max_pkts: u64,
    pub mux_drops: u64,
    pub out_utilization: f64,
    pub out_throughput_bps: f64,
    pub out_arrivals: u64,
    pub out_drops: u64,
    pub out_drop_rate: f64,
    pub out_mean_queue_pkts: f64,
    pub out_max_queue_pkts: u64,
    pub late_departures: u64,
}

table!(PortRow, "ports",
    "Switch topology only (empty on the others): one row per port of its router, over the \
     measured time: its input (the VOQs of the packets arriving there) beside its output line \
     (the same figures as its links row).",
{
    port: "", "From 1.", |p| p.port;
    flows_in: "", "Flows entering at this input.", |p| p.flows_in;
    flows_out: "", "Flows leaving by this output.", |p| p.flows_out;
    in_arrivals: "pkt", "Packets reaching the input's VOQs (admitted or dropped).", |p| p.in_arrivals;
    in_drops: "pkt",
        "Packets dropped there, VOQ full (under `oq_emulation`, dropped by the shadow \
         output-queued switch).",
        |p| p.in_drops;
    in_drop_rate: "", "in_drops / in_arrivals.", |p| p.in_drop_rate;
    voq_mean_pkts: "pkt",
        "Packets in the input's VOQs after each slot's arrivals, mean over the measured slots.",
        |p| p.voq_mean_pkts;
    voq_max_pkts: "pkt", "The largest of those counts.", |p| p.voq_max_pkts;
    mux_drops: "pkt", "Drops at the input's multiplexing router (0 with its default unlimited buffer).",
        |p| p.mux_drops;
    out_utilization: "", "The output line's utilization, as in its links row.", |p| p.out_utilization;
    out_throughput_bps: "bit/s", "The output line's throughput_bps, as in its links row.",
        |p| p.out_throughput_bps;
    out_arrivals: "pkt", "The output line's arrivals, as in its links row.", |p| p.out_arrivals;
    out_drops: "pkt", "The output line's drops, as in its links row.", |p| p.out_drops;
    out_drop_rate: "", "The output line's drop_rate, as in its links row.", |p| p.out_drop_rate;
    out_mean_queue_pkts: "pkt", "The output line's mean_queue_pkts, as in its links row.",
        |p| p.out_mean_queue_pkts;
    out_max_queue_pkts: "pkt", "The output line's max_queue_pkts, as in its links row.",
        |p| p.out_max_queue_pkts;
    late_departures: "pkt",
        "Under `oq_emulation`, packets sent after their shadow OQ slot (0 with speedup ≥ 2).",
        |p| p.late_departures;
});

pub(super) fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

/// The ports table and the summary figures of the switch topology's router. `outputs` are the
/// links rows of its output lines, in port order.
pub(super) fn switch_ports(
    sim: &mut Sim,
    info: &SwitchNet,
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
