//! The transfers table: one row per finite transfer (a connection carrying one file).
//!
//! Read first: [`super::table`] (how a table is described). This file owns the table's
//! columns and reading a row from the record the users' application keeps
//! ([`crate::sim::TransferRecord`]).

use super::table::table;
use crate::sim::TransferRecord;

/// One finite transfer; each field is the column of the same name described below.
#[derive(Clone, Debug, PartialEq)]
pub struct TransferRow {
    pub flow: u32,
    pub traffic: u32,
    pub conn: u32,
    pub start_s: f64,
    pub end_s: f64,
    pub bytes: u64,
    pub fct_s: f64,
    pub throughput_bps: f64,
    pub retransmits: u64,
    pub timeouts: u64,
    pub complete: bool,
}

table!(TransferRow, "transfers",
    "Closed-loop, repeated-download and open-loop traffic: one row per download, i.e. per \
     connection, each carrying one file, in the order they began. Empty for long-lived and UDP \
     traffic.",
{
    flow: "", "The user's slot: its flow, as in the flows table.", |t| t.flow;
    traffic: "", "Index of its `[[traffic]]` entry.", |t| t.traffic;
    conn: "", "Connection number within the flow: 1, 2, …", |t| t.conn;
    start_s: "s", "When the client made its request (its SYN, or its first data).", |t| t.start_s;
    end_s: "s", "When the client had the last byte; NaN if the run ended first.", |t| t.end_s;
    bytes: "B", "File size.", |t| t.bytes;
    fct_s: "s", "Flow completion time, end_s − start_s; NaN if incomplete.", |t| t.fct_s;
    throughput_bps: "bit/s", "bytes·8 / fct_s; NaN if incomplete.", |t| t.throughput_bps;
    retransmits: "pkt", "The server's retransmissions on this connection.", |t| t.retransmits;
    timeouts: "", "The server's retransmission timeouts on this connection.", |t| t.timeouts;
    complete: "", "The last byte arrived before the run ended.", |t| t.complete;
});

impl From<&TransferRecord> for TransferRow {
    fn from(t: &TransferRecord) -> TransferRow {
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
    }
}
