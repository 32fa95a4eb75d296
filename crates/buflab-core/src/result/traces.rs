//! The traces table: the traced TCP senders' state over time (`monitor.trace_flows`).
//!
//! Read first: [`crate::monitor::trace`] (when the tracer keeps a row, and the
//! [`TraceRow`] it keeps) and [`super::table`] (how a table is described). This file owns
//! only the table's description: a row is as the tracer keeps it, times converted to seconds.

use super::table::table;
use crate::monitor::trace::TraceRow;

table!(TraceRow, "traces",
    "Only with `monitor.trace_flows`: the traced TCP senders' state after each change (or once \
     per `monitor.trace_interval`), in (time, flow) order.",
{
    time_s: "s", "When the state was recorded.", |r| r.time.secs_f64();
    flow: "", "The flow, as in the flows table.", |r| r.flow;
    cwnd_pkts: "pkt", "Congestion window, segments.", |r| r.sample.cwnd;
    ssthresh_pkts: "pkt", "Slow-start threshold, segments.", |r| r.sample.ssthresh;
    srtt_s: "s", "Smoothed RTT; 0 before the first sample.", |r| r.sample.srtt.secs_f64();
    pacing_rate_bps: "bit/s", "Pacing rate, bits per second of wire data; 0 when the flow does not pace.",
        |r| r.sample.pacing_bps;
    acked_bytes: "B", "Payload acknowledged since the flow started, over all its connections.",
        |r| r.sample.acked_bytes;
});
