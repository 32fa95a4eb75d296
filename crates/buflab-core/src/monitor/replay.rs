//! A queue's event log replayed into a [`QueueMonitor`]: the emulator's datapath logs its
//! bottleneck's every enqueue, service, drop, mark and purge, and the summary's queue figures,
//! the links row and the time series of an emulated run are then computed by this same monitor
//! as a simulated run's — never by a second copy of the arithmetic.
//!
//! Read first: [`super`] (the reports a link makes, and what each means) and
//! [`super::events`] (the log's rows). Owns pairing each service and purge with its arrival
//! (the log records the wait only implicitly); must not know where the log came from.
//!
//! The log is taken as it was written: in time order, a service's start being the time of
//! its dequeue row and its length the exact serialization time at the queue's rate (the
//! datapath serializes with the same integer rule).

use std::collections::VecDeque;

pub use buflab_queue::log::LogRow;

use super::{MeasuredWindow, QueueEvent, QueueMonitor};
use crate::packet::{Kind, Packet};
use crate::units::{Rate, Time};

/// A packet in the queue: its flow, number, size and arrival time.
#[derive(Clone, Copy, Debug)]
struct Waiting {
    flow: u32,
    seq: u32,
    size: u32,
    arrived: Time,
}

/// Feeds a log, row by row, to a monitor of the queue it came from.
pub struct Replay {
    monitor: QueueMonitor,
    /// The packets waiting, oldest first, with their arrival times: a FIFO discipline serves
    /// the front, so finding a packet's arrival costs one comparison.
    waiting: VecDeque<Waiting>,
    last: Time,
    /// Packets and bytes waiting after the last row.
    occupancy: (u64, u64),
    /// When the last service started ends.
    service_end: Time,
}

impl Replay {
    /// A replay into a monitor of a queue served at `rate`, measuring `window` with a time
    /// series of one row per `interval`.
    pub fn new(rate: Rate, window: MeasuredWindow, interval: Time) -> Replay {
        Replay {
            monitor: QueueMonitor::new(rate, window, interval, false),
            waiting: VecDeque::new(),
            last: Time::ZERO,
            occupancy: (0, 0),
            service_end: Time::ZERO,
        }
    }

    /// Reports the next row of the log; rows must come in time order.
    pub fn feed(&mut self, e: LogRow) -> Result<(), String> {
        if e.time < self.last {
            return Err(format!("the log goes back in time at {} ps (after {} ps)", e.time.0, self.last.0));
        }
        self.last = e.time;
        self.occupancy = (e.queue_pkts, e.queue_bytes);
        let p = Packet {
            sent_at: Time::ZERO,
            flow: e.flow,
            seq: e.seq,
            size: e.size,
            route: 0,
            conn: 0,
            sack: 0,
            hop: 0,
            kind: Kind::Data,
            flags: 0,
            stamp: Time::ZERO,
        };
        let m = &mut self.monitor;
        let Some(event) = QueueEvent::from_code(e.event) else {
            return Err(format!("unknown event number {} at {} ps", e.event, e.time.0));
        };
        match event {
            QueueEvent::Enqueue => {
                m.on_enqueue_unknown_wait(e.time, &p, e.queue_pkts, e.queue_bytes);
                self.waiting.push_back(Waiting { flow: e.flow, seq: e.seq, size: e.size, arrived: e.time });
            }
            QueueEvent::Dequeue => {
                let ser = m.rate.serialization(u64::from(e.size));
                m.on_dequeue(e.time, &p, e.queue_pkts, e.queue_bytes, ser);
                self.service_end = e.time + ser;
                if let Some(arrived) = self.take(e.flow, e.seq) {
                    self.monitor.record_wait(arrived, e.time);
                }
            }
            QueueEvent::Drop => m.on_drop(e.time, &p, e.queue_pkts, e.queue_bytes),
            QueueEvent::Mark => m.on_mark(e.time, &p, e.queue_pkts, e.queue_bytes),
            QueueEvent::Purge => {
                m.on_purge(e.time, &p, e.queue_pkts, e.queue_bytes);
                self.take(e.flow, e.seq);
            }
        }
        Ok(())
    }

    /// The arrival time of the waiting packet (`flow`, `seq`), removed from the waiting list:
    /// the oldest such packet (a retransmission may wait beside its original).
    fn take(&mut self, flow: u32, seq: u32) -> Option<Time> {
        let i = self.waiting.iter().position(|w| w.flow == flow && w.seq == seq)?;
        self.waiting.remove(i).map(|w| w.arrived)
    }

    /// The monitor with its books closed at `end` (the end of the measured window), the
    /// occupancy then being the last row's. The packets still waiting are served one after
    /// another from the end of the last service, as a work-conserving FIFO serves them: their
    /// waits count as a simulated run counts the waits it knows at their arrival.
    pub fn finish(mut self, end: Time) -> QueueMonitor {
        let mut start = self.service_end;
        for w in &self.waiting {
            let from = start.max(w.arrived);
            self.monitor.record_wait(w.arrived, from);
            start = from + self.monitor.rate.serialization(u64::from(w.size));
        }
        let (pkts, bytes) = self.occupancy;
        self.monitor.finish(end.max(self.last), pkts, bytes);
        self.monitor
    }
}
