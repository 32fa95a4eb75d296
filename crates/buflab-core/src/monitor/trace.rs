//! Per-flow TCP traces: congestion window, ssthresh, smoothed RTT, pacing rate and bytes
//! acknowledged over time, for the flows a scenario names (`monitor.trace_flows`).
//!
//! Read first: [`crate::endpoint`] (an endpoint's trace sample). Owns which flows are traced and
//! the trace rows; must not know TCP's rules (it records what a sender reports).
//!
//! This is the observer of STYLE habit 11 for senders, what ns-3's traced `CongestionWindow`
//! and `RTT` sources give: the simulator hands the tracer a sender's state after every event
//! that can change it (an ACK, a timeout, the start of a connection), and the tracer keeps a
//! row when the state changed (`interval` 0) or when the flow's next sampling time has come.
//! A sender that runs ahead of the global clock reports at its own event times, so rows of
//! different flows arrive out of time order; `finish` sorts them by (time, flow), stably.

use crate::units::Time;

/// Which flows are traced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TracedFlows {
    All,
    /// Flow ids, ascending, without repeats.
    Some(Vec<u32>),
}

/// What the scenario asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceConfig {
    pub flows: TracedFlows,
    /// Zero: a row at every change. Otherwise at most one row per flow per interval, the state
    /// after the first event at or after each multiple of the interval.
    pub interval: Time,
}

/// A sender's state at one instant.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TraceSample {
    /// Congestion window and slow-start threshold, segments.
    pub cwnd: f64,
    pub ssthresh: f64,
    /// Smoothed RTT (zero before the first sample).
    pub srtt: Time,
    /// Pacing rate, bits per second of wire data (zero when not pacing).
    pub pacing_bps: f64,
    /// Payload bytes acknowledged since the flow started, over all its connections.
    pub acked_bytes: u64,
}

/// The trace table, column by column.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TraceLog {
    pub time: Vec<Time>,
    pub flow: Vec<u32>,
    pub cwnd: Vec<f64>,
    pub ssthresh: Vec<f64>,
    pub srtt: Vec<Time>,
    pub pacing_bps: Vec<f64>,
    pub acked_bytes: Vec<u64>,
}

impl TraceLog {
    pub fn len(&self) -> usize {
        self.time.len()
    }

    pub fn is_empty(&self) -> bool {
        self.time.is_empty()
    }

    fn push(&mut self, t: Time, flow: u32, s: &TraceSample) {
        self.time.push(t);
        self.flow.push(flow);
        self.cwnd.push(s.cwnd);
        self.ssthresh.push(s.ssthresh);
        self.srtt.push(s.srtt);
        self.pacing_bps.push(s.pacing_bps);
        self.acked_bytes.push(s.acked_bytes);
    }

    /// The rows reordered by `order` (indices into the current rows).
    fn permuted(&self, order: &[usize]) -> TraceLog {
        fn pick<T: Copy>(column: &[T], order: &[usize]) -> Vec<T> {
            order.iter().map(|&i| column[i]).collect()
        }
        TraceLog {
            time: pick(&self.time, order),
            flow: pick(&self.flow, order),
            cwnd: pick(&self.cwnd, order),
            ssthresh: pick(&self.ssthresh, order),
            srtt: pick(&self.srtt, order),
            pacing_bps: pick(&self.pacing_bps, order),
            acked_bytes: pick(&self.acked_bytes, order),
        }
    }
}

/// Per-flow state of the tracer.
#[derive(Clone, Copy, Debug)]
struct Last {
    sample: Option<TraceSample>,
    /// With an interval: the next sampling time.
    next: Time,
}

/// Keeps the trace rows of the traced flows.
#[derive(Clone, Debug)]
pub struct FlowTracer {
    config: TraceConfig,
    /// By flow id (flows added during the run extend it).
    last: Vec<Option<Last>>,
    pub log: TraceLog,
}

impl FlowTracer {
    pub fn new(config: TraceConfig) -> FlowTracer {
        FlowTracer { config, last: Vec::new(), log: TraceLog::default() }
    }

    fn traces(&self, flow: u32) -> bool {
        match &self.config.flows {
            TracedFlows::All => true,
            TracedFlows::Some(ids) => ids.binary_search(&flow).is_ok(),
        }
    }

    /// Whether `flow` is traced (checked once per flow, then remembered).
    #[inline]
    pub fn wants(&mut self, flow: u32) -> bool {
        let i = flow as usize;
        if i >= self.last.len() {
            let from = self.last.len() as u32;
            let added: Vec<Option<Last>> = (from..=flow)
                .map(|f| self.traces(f).then_some(Last { sample: None, next: Time::ZERO }))
                .collect();
            self.last.extend(added);
        }
        self.last[i].is_some()
    }

    /// The state of traced flow `flow` after an event at `t`.
    pub fn record(&mut self, t: Time, flow: u32, sample: TraceSample) {
        let interval = self.config.interval;
        let Some(last) = self.last.get_mut(flow as usize).and_then(Option::as_mut) else { return };
        let keep = if interval == Time::ZERO {
            last.sample != Some(sample)
        } else if t >= last.next {
            // The next multiple of the interval after t.
            last.next = Time((t.0 / interval.0 + 1) * interval.0);
            true
        } else {
            false
        };
        if keep {
            last.sample = Some(sample);
            self.log.push(t, flow, &sample);
        }
    }

    /// The rows in (time, flow) order.
    pub fn finish(self) -> TraceLog {
        let log = self.log;
        let mut order: Vec<usize> = (0..log.len()).collect();
        // Stable: a flow's own rows are already in its time order.
        order.sort_by_key(|&i| (log.time[i], log.flow[i]));
        if order.iter().enumerate().all(|(k, &i)| k == i) {
            return log;
        }
        log.permuted(&order)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(cwnd: f64, acked: u64) -> TraceSample {
        TraceSample { cwnd, ssthresh: 64.0, srtt: Time::from_ms(100), pacing_bps: 0.0, acked_bytes: acked }
    }

    #[test]
    fn every_change_is_a_row_and_repeats_are_not() {
        let mut t = FlowTracer::new(TraceConfig { flows: TracedFlows::All, interval: Time::ZERO });
        assert!(t.wants(0));
        t.record(Time::from_ms(1), 0, sample(4.0, 0));
        t.record(Time::from_ms(2), 0, sample(4.0, 0)); // a stale timer event: nothing changed
        t.record(Time::from_ms(3), 0, sample(5.0, 960));
        assert_eq!(t.log.time, vec![Time::from_ms(1), Time::from_ms(3)]);
        assert_eq!(t.log.cwnd, vec![4.0, 5.0]);
    }

    #[test]
    fn an_interval_keeps_the_first_event_of_each_period() {
        let cfg = TraceConfig { flows: TracedFlows::Some(vec![2]), interval: Time::from_ms(10) };
        let mut t = FlowTracer::new(cfg);
        assert!(!t.wants(0) && t.wants(2) && !t.wants(3));
        for (ms, cwnd) in [(0, 1.0), (4, 2.0), (10, 3.0), (19, 4.0), (35, 5.0), (39, 6.0)] {
            t.record(Time::from_ms(ms), 2, sample(cwnd, 0));
        }
        // Periods [0, 10), [10, 20), [30, 40): one row each, the first event's state.
        assert_eq!(t.log.cwnd, vec![1.0, 3.0, 5.0]);
        // An untraced flow leaves no row.
        t.record(Time::from_ms(50), 0, sample(9.0, 0));
        assert_eq!(t.log.len(), 3);
    }

    #[test]
    fn rows_of_flows_running_ahead_are_sorted_by_time_then_flow() {
        let mut t = FlowTracer::new(TraceConfig { flows: TracedFlows::All, interval: Time::ZERO });
        t.wants(1);
        t.record(Time::from_ms(5), 1, sample(2.0, 0)); // flow 1 ran ahead
        t.record(Time::from_ms(3), 0, sample(1.0, 0));
        t.record(Time::from_ms(5), 0, sample(3.0, 0));
        let log = t.finish();
        assert_eq!(log.flow, vec![0, 0, 1]);
        assert_eq!(log.cwnd, vec![1.0, 3.0, 2.0]);
    }
}
