//! The flows table: one row per flow.
//!
//! Read first: [`super::table`] (how a table is described). This file owns the flows table's
//! columns and reading a row from a flow's endpoints at the end of a run; what the run's
//! totals make of the rows is `collect.rs`'s.

use super::table::table;
use crate::endpoint::Endpoints;
use crate::sim::Flow;
use crate::tcp::flow::TcpFlow;

/// One row of the flows table; each field is the column of the same name described below.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowRecord {
    pub flow: u32,
    pub traffic: u32,
    pub kind: &'static str,
    pub tcp: &'static str,
    pub cc: &'static str,
    pub rtt_s: f64,
    pub start_s: f64,
    pub goodput_bps: f64,
    pub delivered_bytes: u64,
    pub sent_packets: u64,
    pub retransmits: u64,
    pub timeouts: u64,
    pub ecn_reactions: u64,
    pub cwnd_pkts: f64,
    pub ssthresh_pkts: f64,
    pub srtt_s: f64,
    pub machine: i64,
    pub class: i64,
    pub input: i64,
    pub output: i64,
}

table!(FlowRecord, "flows", "One row per flow.", {
    flow: "", "The flow's number, from 0.", |f| f.flow;
    traffic: "", "Index of its `[[traffic]]` entry.", |f| f.traffic;
    kind: "",
        "Its traffic's kind: `long_lived`, `closed_loop`, `repeated_downloads`, `open_loop`, \
         `udp_cbr` or `udp_poisson`.",
        |f| f.kind;
    tcp: "", "Its TCP's loss recovery (`reno`, `newreno` or `sack`); empty for UDP.", |f| f.tcp;
    cc: "", "The congestion control it ran: `reno`, `bic`, `cubic` or `bbr`; empty for UDP.", |f| f.cc;
    rtt_s: "s", "Its two-way propagation delay, without queueing.", |f| f.rtt_s;
    start_s: "s", "When it started.", |f| f.start_s;
    goodput_bps: "bit/s", "Payload bits delivered in order to its receiver per second of the measured time.",
        |f| f.goodput_bps;
    delivered_bytes: "B", "Payload bytes delivered in order to its receiver in the measured time.",
        |f| f.delivered_bytes;
    sent_packets: "pkt",
        "Data packets sent, retransmissions included: in the measured time (a UDP source's: \
         over the whole run).",
        |f| f.sent_packets;
    retransmits: "pkt", "Segments sent again in the measured time.", |f| f.retransmits;
    timeouts: "", "Retransmission timeouts in the measured time.", |f| f.timeouts;
    ecn_reactions: "", "Window reductions in answer to ECN-Echo in the measured time.", |f| f.ecn_reactions;
    cwnd_pkts: "pkt", "Congestion window at the end of the run, segments (0 for UDP).", |f| f.cwnd_pkts;
    ssthresh_pkts: "pkt", "Slow-start threshold at the end of the run, segments (0 for UDP).",
        |f| f.ssthresh_pkts;
    srtt_s: "s", "Smoothed RTT at the end of the run; 0 before the first sample and for UDP.",
        |f| f.srtt_s;
    machine: "", "The flow's server machine; −1 without machines.", |f| f.machine;
    class: "",
        "Its class queue on that machine; −1 without machines, and for cross traffic, which \
         skips the class queues.",
        |f| f.class;
    input: "", "The switch input the flow enters by, from 1; −1 off the switch topology.", |f| f.input;
    output: "", "The switch output it leaves by, from 1; −1 off the switch topology.", |f| f.output;
});

impl FlowRecord {
    /// The row of flow `i` at the end of a run whose measured time lasted `measured_s`;
    /// `ports` are its switch input and output, from 1.
    pub(super) fn new(i: usize, f: &Flow, measured_s: f64, ports: Option<(i64, i64)>) -> FlowRecord {
        let info = &f.info;
        let base = FlowRecord {
            flow: i as u32,
            traffic: info.traffic,
            kind: info.kind.name(),
            tcp: info.recovery.map_or("", |r| r.name()),
            cc: "",
            rtt_s: info.rtt.secs_f64(),
            start_s: info.start.secs_f64(),
            goodput_bps: 0.0,
            delivered_bytes: 0,
            sent_packets: 0,
            retransmits: 0,
            timeouts: 0,
            ecn_reactions: 0,
            cwnd_pkts: 0.0,
            ssthresh_pkts: 0.0,
            srtt_s: 0.0,
            machine: info.placement.map_or(-1, |p| p.0 as i64),
            class: info.placement.map_or(-1, |p| p.1 as i64),
            input: ports.map_or(-1, |p| p.0),
            output: ports.map_or(-1, |p| p.1),
        };
        match &f.endpoints {
            Endpoints::Tcp(TcpFlow { sender, receiver }) => {
                let delivered = receiver.window_delivered_bytes;
                FlowRecord {
                    cc: sender.cfg.cc.name(),
                    goodput_bps: delivered as f64 * 8.0 / measured_s,
                    delivered_bytes: delivered,
                    sent_packets: sender.window_stats.sent,
                    retransmits: sender.window_stats.retransmits,
                    timeouts: sender.window_stats.timeouts,
                    ecn_reactions: sender.window_stats.ecn_reactions,
                    cwnd_pkts: sender.w.cwnd,
                    ssthresh_pkts: sender.w.ssthresh,
                    srtt_s: sender.rtt.srtt().map_or(0.0, |t| t.secs_f64()),
                    ..base
                }
            }
            Endpoints::Udp(u) => {
                let delivered = u.window_received * info.payload as u64;
                FlowRecord {
                    goodput_bps: delivered as f64 * 8.0 / measured_s,
                    delivered_bytes: delivered,
                    sent_packets: u.sent,
                    ..base
                }
            }
        }
    }
}
