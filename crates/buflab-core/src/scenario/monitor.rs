//! The `monitor` section: the time series interval, the event log, and the per-flow traces.
//!
//! Read first: [`super`] (how `Scenario::read` calls one reader per section) and
//! [`super::reader`] (typed key access, errors). Owns [`Monitor`] and the readers of
//! `monitor.*`. The traced flows are checked against the flows the traffic has, which are read
//! after this table: `read` takes the keys, `MonitorKeys::finish` checks them once the
//! traffic is known. Must not know the network, nor how a monitor records.

use serde_json::Value;

use super::reader::{error, Asked, Result, Table};
use super::traffic::{total_flows, Traffic};
use super::MAX_FLOWS;
use crate::monitor::trace::{TraceConfig, TracedFlows};
use crate::units::Time;

#[derive(Clone, Debug)]
pub struct Monitor {
    pub interval: Time,
    pub events: bool,
    /// Per-flow TCP traces; None when no flow is traced.
    pub trace: Option<TraceConfig>,
}

/// The `monitor` table as read before the traffic.
pub(super) struct MonitorKeys {
    interval: Time,
    events: bool,
    trace_flows: Value,
    trace_interval: Time,
}

/// Reads the `monitor` table.
pub(super) fn read(root: &mut Table, asked: &mut Asked) -> Result<MonitorKeys> {
    let mut mon = root.table("monitor", "monitor")?;
    let interval = mon.time("interval")?;
    if interval == Time::ZERO {
        return Err(error("monitor.interval", mon.raw("interval").unwrap(), "a positive duration"));
    }
    let events = mon.boolean("events")?;
    let trace_flows = mon.value("trace_flows")?;
    let trace_interval = mon.time("trace_interval")?;
    mon.finish(asked)?;
    Ok(MonitorKeys { interval, events, trace_flows, trace_interval })
}

impl MonitorKeys {
    /// The monitor, its traced flows checked against the flows of `traffic`.
    pub fn finish(self, traffic: &[Traffic]) -> Result<Monitor> {
        let total_flows = total_flows(traffic);
        let open_loop = traffic.iter().any(|t| matches!(t, Traffic::OpenLoop(_)));
        let trace = read_trace(&self.trace_flows, self.trace_interval, total_flows, open_loop)?;
        Ok(Monitor { interval: self.interval, events: self.events, trace })
    }
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
