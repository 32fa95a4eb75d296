//! The `monitor` section: the time series interval, the event log, and the per-flow traces.
//!
//! Read first: [`super`] (how `Scenario::read` calls one reader per section) and
//! [`super::reader`] (typed key access, errors). Owns [`Monitor`] and the readers of
//! `monitor.*`. The traced flows are checked against the flows the traffic has, which are read
//! after this table: `read` takes the keys, `MonitorKeys::finish` checks them once the
//! traffic is known. Must not know the network, nor how a monitor records.

use serde_json::Value;

use super::bump::{BumpAt, BumpEntry};
use super::reader::{error, Asked, Result, Table};
use super::traffic::{total_flows, Traffic};
use super::MAX_FLOWS;
use crate::monitor::trace::{TraceConfig, TracedFlows};
use crate::units::Time;

#[derive(Clone, Debug)]
pub struct Monitor {
    pub interval: Time,
    pub events: bool,
    /// Write the event log's arrivals as a packet capture (the front end does, from the log).
    pub pcap: bool,
    /// The bump whose queue the event log records (its entry index); None: the summary link.
    pub events_at: Option<usize>,
    /// Per-flow TCP traces; None when no flow is traced.
    pub trace: Option<TraceConfig>,
}

impl Monitor {
    /// Whether the summary link records the event log (it does unless a bump does).
    pub fn events_here(&self) -> bool {
        self.events && self.events_at.is_none()
    }
}

/// The `monitor` table as read before the traffic.
pub(super) struct MonitorKeys {
    interval: Time,
    events: bool,
    pcap: bool,
    events_at: Value,
    trace_flows: Value,
    trace_interval: Time,
}

/// The most time-series rows a run may make (one per `monitor.interval`): a few hundred bytes
/// each in the results, so ten million is already gigabytes; an interval of 1 ns over a
/// second once asked for 48 GB and died.
pub const MAX_SERIES_ROWS: u64 = 10_000_000;

/// Reads the `monitor` table; `duration` is the run's, which the interval must not slice
/// into more than [`MAX_SERIES_ROWS`] rows.
pub(super) fn read(root: &mut Table, duration: Time, asked: &mut Asked) -> Result<MonitorKeys> {
    let mut mon = root.table("monitor", "monitor")?;
    let interval = mon.time("interval")?;
    if interval == Time::ZERO {
        return Err(error("monitor.interval", mon.raw("interval").unwrap(), "a positive duration"));
    }
    let rows = duration.ps() / interval.ps();
    if rows > MAX_SERIES_ROWS {
        let got = mon.value("interval")?;
        let shortest = Time(duration.ps().div_ceil(MAX_SERIES_ROWS));
        return Err(error(
            "monitor.interval",
            &got,
            &format!(
                "an interval of at least {shortest}: this one makes {rows} time-series rows over {}",
                format_args!("the run's {duration}, more than {MAX_SERIES_ROWS}")
            ),
        ));
    }
    let events = mon.boolean("events")?;
    let pcap = mon.boolean("pcap")?;
    if pcap && !events {
        let expected =
            "false unless monitor.events = true as well (the capture lists the event log's arrivals)";
        return Err(error("monitor.pcap", &Value::Bool(true), expected));
    }
    let events_at = mon.value("events_at")?;
    let trace_flows = mon.value("trace_flows")?;
    let trace_interval = mon.time("trace_interval")?;
    mon.finish(asked)?;
    Ok(MonitorKeys { interval, events, pcap, events_at, trace_flows, trace_interval })
}

impl MonitorKeys {
    /// The monitor, its traced flows checked against the flows of `traffic` and the queue
    /// of its event log against the `bumps`.
    pub fn finish(self, traffic: &[Traffic], bumps: &[BumpEntry]) -> Result<Monitor> {
        let total_flows = total_flows(traffic);
        let open_loop = traffic.iter().any(|t| matches!(t, Traffic::OpenLoop(_)));
        let trace = read_trace(&self.trace_flows, self.trace_interval, total_flows, open_loop)?;
        let events_at = read_events_at(&self.events_at, bumps, traffic)?;
        Ok(Monitor { interval: self.interval, events: self.events, pcap: self.pcap, events_at, trace })
    }
}

/// `monitor.events_at`: "summary" or a bump's name. A bump at `access` records its first
/// flow's instance, which must exist when the run starts (not only an open-loop arrival).
fn read_events_at(v: &Value, bumps: &[BumpEntry], traffic: &[Traffic]) -> Result<Option<usize>> {
    const KEY: &str = "monitor.events_at";
    if v.as_str() == Some("summary") {
        return Ok(None);
    }
    let entry = super::bump::find(bumps, KEY, v)?;
    let built =
        traffic.iter().filter(|t| !matches!(t, Traffic::OpenLoop(_))).map(|t| t.flows() as u64).sum::<u64>();
    if entry.at == BumpAt::Access && built == 0 {
        return Err(error(
            KEY,
            v,
            "a bump that exists when the run starts: at \"access\" the first flow's, and open-loop flows only arrive later",
        ));
    }
    Ok(bumps.iter().position(|e| e.name == entry.name))
}

/// `monitor.trace_flows` and `monitor.trace_interval`: which flows to trace, checked against the
/// flows the scenario has (open-loop flows are added during the run, so with them any id is
/// accepted: a flow that never arrives has no rows).
fn read_trace(
    flows: &Value,
    interval: Time,
    total_flows: u64,
    open_loop: bool,
) -> Result<Option<TraceConfig>> {
    let key = "monitor.trace_flows";
    let expected = if open_loop {
        "\"all\" or an array of flow ids (whole numbers from 0)".to_string()
    } else {
        format!(
            "\"all\" or an array of flow ids from 0 to {} (the scenario has {total_flows} flows)",
            total_flows.saturating_sub(1)
        )
    };
    let traced = match flows {
        Value::String(s) if s == "all" => TracedFlows::All,
        Value::Array(items) => {
            let mut ids = Vec::with_capacity(items.len());
            for v in items {
                match v.as_u64() {
                    Some(id) if id < MAX_FLOWS && (open_loop || id < total_flows) => ids.push(id as u32),
                    _ => return Err(error(key, v, &expected)),
                }
            }
            ids.sort_unstable();
            ids.dedup();
            if ids.is_empty() {
                return Ok(None);
            }
            TracedFlows::Some(ids)
        }
        v => return Err(error(key, v, &expected)),
    };
    Ok(Some(TraceConfig { flows: traced, interval }))
}
