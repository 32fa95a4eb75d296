//! A result rebuilt from a queue's event log alone, for the emulator: its datapath logs the
//! bottleneck, and the summary's queue figures, the links row and the time series of an
//! emulated run come from replaying that log through the simulator's own monitor
//! ([`crate::monitor::replay`]), so that both kinds of run are measured by one piece of code.
//!
//! Read first: [`super::collect`] (a simulated run's result; the queue's part of the summary
//! is its `queue_summary`). The log says nothing of the flows: the caller fills their table
//! and the summary's flow figures (the emulator, from the real sockets' `TCP_INFO`).

use super::collect::queue_summary;
use super::links::LinkRow;
use super::series::series;
use super::{EventsQueue, RunResult};
use crate::monitor::replay::{LogRow, Replay};
use crate::monitor::MeasuredWindow;
use crate::scenario::Scenario;
use crate::units::{BufferLimit, Rate, Time};

/// The queue a log was taken at, and the run it was taken in.
pub struct LoggedQueue {
    pub rate: Rate,
    /// The limit at the end of the run (it may have been changed live).
    pub buffer: BufferLimit,
    /// The measured window, on the log's clock.
    pub window: MeasuredWindow,
    /// The time series' interval (`monitor.interval`).
    pub interval: Time,
}

/// The result of the run of `scenario` whose bottleneck `queue` logged `rows` (in time order):
/// the summary's queue figures, the links row and the time series, with no flows.
pub fn from_queue_log(
    scenario: &Scenario,
    queue: &LoggedQueue,
    rows: impl IntoIterator<Item = LogRow>,
) -> Result<RunResult, String> {
    let mut replay = Replay::new(queue.rate, queue.window, queue.interval);
    let mut events = 0u64;
    for row in rows {
        replay.feed(row)?;
        events += 1;
    }
    let mon = replay.finish(queue.window.end);
    let measured_s = queue.window.len().secs_f64();
    let row = LinkRow::new(1, "bottleneck".into(), queue.buffer, &mon, measured_s);
    let mut summary = queue_summary(scenario, &row, &mon);
    let fifo = crate::queue::keeps_arrival_order(scenario.network.hops[0].queue.name);
    summary.measured_s = measured_s;
    summary.events = events;
    Ok(RunResult {
        summary,
        flows: Vec::new(),
        transfers: Vec::new(),
        timeseries: series(&mon, queue.rate.bits_per_s(), queue.window.end),
        autosize: Vec::new(),
        traces: Vec::new(),
        bumps: Vec::new(),
        rates: Vec::new(),
        optical: Vec::new(),
        optical_lines: Vec::new(),
        aqm: Vec::new(),
        ports: Vec::new(),
        events_queue: EventsQueue { name: row.name.clone(), rate: queue.rate, buffer: queue.buffer, fifo },
        events: None,
        events_written: 0,
        events_error: None,
        conservation: Default::default(),
        max_queue_ever: row.max_queue_ever,
        buffer: queue.buffer,
        links: vec![row],
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::monitor::QueueEvent;

    fn ev(t_us: u64, event: QueueEvent, seq: u32, pkts: u64) -> LogRow {
        LogRow {
            time: Time::from_us(t_us),
            event: event as u8,
            flow: 0,
            seq,
            size: 1500,
            queue_pkts: pkts,
            queue_bytes: pkts * 1500,
        }
    }

    /// A hand-made log at 12 Mb/s (a 1500-byte packet takes exactly 1 ms): the figures are
    /// the ones worked out by hand, so the replay pairs services with arrivals and integrates
    /// occupancy as the monitor does in a simulated run.
    #[test]
    fn a_hand_made_log_gives_the_figures_worked_out_by_hand() {
        use QueueEvent::*;
        let s = Scenario::from_value(&serde_json::json!({
            "duration": "10ms", "warmup": "0s",
            "network": {"bottleneck": {"rate": "12Mbps", "buffer": "1pkt"}},
            "traffic": [{"kind": "long_lived", "flows": 1}],
        }))
        .expect("a valid scenario");
        let queue = LoggedQueue {
            rate: Rate::mbps(12),
            buffer: BufferLimit::Packets(1),
            window: MeasuredWindow { start: Time::ZERO, end: Time::from_ms(10) },
            interval: Time::from_ms(5),
        };
        // Packet 1 arrives at 0 and is served at once; packet 2 arrives at 0.5 ms and waits
        // 0.5 ms; packet 3 arrives at 0.6 ms to a full buffer and is dropped.
        let rows = vec![
            ev(0, Enqueue, 1, 1),
            ev(0, Dequeue, 1, 0),
            ev(500, Enqueue, 2, 1),
            ev(600, Drop, 3, 1),
            ev(1000, Dequeue, 2, 0),
        ];
        let r = from_queue_log(&s, &queue, rows).expect("a well-formed log");
        let x = &r.summary;
        assert_eq!((x.arrivals, x.drops, x.departures), (3, 1, 2));
        // 2 ms busy of 10.
        assert!((x.utilization - 0.2).abs() < 1e-12, "{}", x.utilization);
        // One packet waiting from 0.5 to 1 ms: 0.5 ms·pkt over 10 ms.
        assert!((x.mean_queue_pkts - 0.05).abs() < 1e-12, "{}", x.mean_queue_pkts);
        // Waits 0 and 0.5 ms.
        assert!((x.queue_delay_mean_s - 0.25e-3).abs() < 1e-9, "{}", x.queue_delay_mean_s);
        assert_eq!(x.first_drop_s, Some(0.6e-3));
        assert_eq!(r.timeseries.len(), 2);
        assert_eq!((r.timeseries[0].arrivals, r.timeseries[1].arrivals), (3, 0));
        assert_eq!(r.links[0].max_queue_pkts, 1);
    }

    /// The property the emulator relies on: a simulated run's own event log, replayed, gives
    /// that run's queue figures and time series exactly (the same monitor, fed the same
    /// events), with drops, waits and a cut-short last interval in play.
    #[test]
    fn a_simulated_runs_log_replayed_gives_its_own_figures() {
        let s = Scenario::from_value(&serde_json::json!({
            "duration": "2.05s", "warmup": "0.5s", "seed": 3,
            "network": {"bottleneck": {"rate": "20Mbps", "buffer": "30pkt"}, "rtt": "20ms..60ms"},
            "traffic": [{"kind": "long_lived", "flows": 8}],
            "monitor": {"events": true, "interval": "0.1s"},
        }))
        .expect("a valid scenario");
        let sim = crate::run(&s);
        let log = sim.events.as_ref().expect("the log kept in memory");
        let rows = (0..log.time.len()).map(|i| LogRow {
            time: log.time[i],
            event: log.event[i],
            flow: log.flow[i],
            seq: log.seq[i],
            size: log.size[i],
            queue_pkts: log.queue_pkts[i],
            queue_bytes: log.queue_bytes[i],
        });
        let queue = LoggedQueue {
            rate: Rate::mbps(20),
            buffer: BufferLimit::Packets(30),
            window: MeasuredWindow { start: s.warmup, end: s.duration },
            interval: Time::from_ms(100),
        };
        let r = from_queue_log(&s, &queue, rows).expect("a well-formed log");
        assert!(sim.summary.drops > 0, "drops in play");
        let (a, b) = (&r.summary, &sim.summary);
        assert_eq!((a.arrivals, a.drops, a.max_queue_pkts), (b.arrivals, b.drops, b.max_queue_pkts));
        for (x, y) in [
            (a.utilization, b.utilization),
            (a.mean_queue_pkts, b.mean_queue_pkts),
            (a.mean_queue_bytes, b.mean_queue_bytes),
            (a.queue_delay_mean_s, b.queue_delay_mean_s),
            (a.queue_delay_p99_s, b.queue_delay_p99_s),
            (a.iat_p50_s, b.iat_p50_s),
            (a.burst_mean_pkts, b.burst_mean_pkts),
        ] {
            assert_eq!(x, y);
        }
        assert_eq!(r.timeseries, sim.timeseries);
        assert_eq!(r.links, sim.links);
    }

    #[test]
    fn a_log_that_goes_back_in_time_is_refused() {
        let s = Scenario::from_value(&serde_json::json!({
            "network": {"bottleneck": {"rate": "12Mbps"}},
            "traffic": [{"kind": "long_lived", "flows": 1}],
        }))
        .expect("a valid scenario");
        let queue = LoggedQueue {
            rate: Rate::mbps(12),
            buffer: BufferLimit::Unlimited,
            window: MeasuredWindow { start: Time::ZERO, end: Time::from_ms(10) },
            interval: Time::from_ms(5),
        };
        let rows = vec![ev(5, QueueEvent::Enqueue, 1, 1), ev(4, QueueEvent::Dequeue, 1, 0)];
        let e = from_queue_log(&s, &queue, rows).err().expect("refused");
        assert!(e.contains("back in time"), "{e}");
    }
}
