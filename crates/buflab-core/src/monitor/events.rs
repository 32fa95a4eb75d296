//! The queue event log: every write (enqueue), read (dequeue), drop and ECN mark at one queue,
//! with its time, packet and the occupancy after it — what the NetFPGA router's monitor reported
//! (thesis app. A), enough to rebuild occupancy, loss and utilization exactly.
//!
//! Read first: [`super`] (the reports). Owns the log's columns and its batching to a sink; must not
//! know where the batches go (a file, Python) or what the log is for.
//!
//! A 10 Gb/s run makes hundreds of millions of events, so the log is not kept whole unless
//! asked: with an [`EventSink`] attached, events are handed over in batches of
//! [`EventRecorder::BATCH`] and memory stays bounded; without one, the recorder keeps every
//! event in memory (for tests and small runs).

use crate::packet::Packet;
use crate::units::Time;

pub use buflab_queue::log::QueueEvent;

/// A run of events, columnar: row i of every column is one event.
#[derive(Clone, Debug, Default)]
pub struct EventLog {
    pub time: Vec<Time>,
    /// A [`QueueEvent`] as its number.
    pub event: Vec<u8>,
    pub flow: Vec<u32>,
    pub seq: Vec<u32>,
    /// Packet size on the wire, bytes.
    pub size: Vec<u32>,
    /// Packets and bytes waiting after the event (the one in service not counted).
    pub queue_pkts: Vec<u64>,
    pub queue_bytes: Vec<u64>,
}

impl EventLog {
    fn with_capacity(n: usize) -> EventLog {
        EventLog {
            time: Vec::with_capacity(n),
            event: Vec::with_capacity(n),
            flow: Vec::with_capacity(n),
            seq: Vec::with_capacity(n),
            size: Vec::with_capacity(n),
            queue_pkts: Vec::with_capacity(n),
            queue_bytes: Vec::with_capacity(n),
        }
    }

    #[inline]
    fn push(&mut self, t: Time, kind: QueueEvent, p: &Packet, pkts: u64, bytes: u64) {
        self.time.push(t);
        self.event.push(kind as u8);
        self.flow.push(p.flow);
        self.seq.push(p.seq);
        self.size.push(p.size);
        self.queue_pkts.push(pkts);
        self.queue_bytes.push(bytes);
    }

    fn clear(&mut self) {
        self.time.clear();
        self.event.clear();
        self.flow.clear();
        self.seq.clear();
        self.size.clear();
        self.queue_pkts.clear();
        self.queue_bytes.clear();
    }

    pub fn len(&self) -> usize {
        self.time.len()
    }

    pub fn is_empty(&self) -> bool {
        self.time.is_empty()
    }
}

/// Where a streamed log goes (a Parquet file, through the Python binding). Batches arrive in
/// time order; an error stops the recording and is reported with the result.
pub trait EventSink: Send {
    fn write(&mut self, batch: &EventLog) -> Result<(), String>;
}

/// Records one queue's events, in memory or streamed to a sink.
#[derive(Default)]
pub struct EventRecorder {
    /// Events not yet handed to the sink; every event when there is no sink.
    pub pending: EventLog,
    sink: Option<Box<dyn EventSink>>,
    /// Events handed to the sink so far.
    pub written: u64,
    /// The sink's first error; nothing is recorded after it.
    pub error: Option<String>,
}

impl EventRecorder {
    /// Events per batch handed to a sink: 2^18 events are about 10 MB, large enough that the
    /// per-batch cost (a Parquet row group) is amortized, small enough to bound memory.
    pub const BATCH: usize = 1 << 18;

    /// Streams from now on: events are handed to `sink` in batches instead of kept.
    pub fn stream_to(&mut self, sink: Box<dyn EventSink>) {
        self.sink = Some(sink);
        self.pending = EventLog::with_capacity(Self::BATCH);
    }

    pub fn is_streaming(&self) -> bool {
        self.sink.is_some()
    }

    #[inline]
    pub fn record(&mut self, t: Time, kind: QueueEvent, p: &Packet, pkts: u64, bytes: u64) {
        if self.error.is_some() {
            return;
        }
        self.pending.push(t, kind, p, pkts, bytes);
        if self.sink.is_some() && self.pending.len() >= Self::BATCH {
            self.flush();
        }
    }

    /// Hands the pending events to the sink (nothing without one).
    pub fn flush(&mut self) {
        let Some(sink) = self.sink.as_mut() else { return };
        if self.pending.is_empty() || self.error.is_some() {
            return;
        }
        match sink.write(&self.pending) {
            Ok(()) => self.written += self.pending.len() as u64,
            Err(e) => self.error = Some(e),
        }
        self.pending.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    struct Collect(Arc<Mutex<Vec<usize>>>);
    impl EventSink for Collect {
        fn write(&mut self, batch: &EventLog) -> Result<(), String> {
            self.0.lock().unwrap().push(batch.len());
            Ok(())
        }
    }

    struct Fail;
    impl EventSink for Fail {
        fn write(&mut self, _: &EventLog) -> Result<(), String> {
            Err("disk full".into())
        }
    }

    fn packet() -> Packet {
        Packet::for_test(crate::packet::Kind::Data, 3, 7, 1500)
    }

    #[test]
    fn streaming_hands_over_full_batches_then_the_rest() {
        let batches = Arc::new(Mutex::new(Vec::new()));
        let mut r = EventRecorder::default();
        r.stream_to(Box::new(Collect(batches.clone())));
        let n = EventRecorder::BATCH * 2 + 5;
        for i in 0..n {
            r.record(Time(i as u64), QueueEvent::Enqueue, &packet(), 1, 1500);
        }
        // Memory holds at most one batch at a time.
        assert_eq!(r.pending.len(), 5);
        r.flush();
        assert_eq!(*batches.lock().unwrap(), vec![EventRecorder::BATCH, EventRecorder::BATCH, 5]);
        assert_eq!(r.written, n as u64);
    }

    #[test]
    fn without_a_sink_every_event_is_kept() {
        let mut r = EventRecorder::default();
        for i in 0..10 {
            r.record(Time(i), QueueEvent::Drop, &packet(), 0, 0);
        }
        r.flush();
        assert_eq!(r.pending.len(), 10);
        assert_eq!(r.pending.event, vec![2; 10]);
    }

    #[test]
    fn a_sink_error_stops_the_recording_and_is_kept() {
        let mut r = EventRecorder::default();
        r.stream_to(Box::new(Fail));
        for i in 0..(EventRecorder::BATCH + 3) as u64 {
            r.record(Time(i), QueueEvent::Enqueue, &packet(), 1, 1500);
        }
        r.flush();
        assert_eq!(r.error.as_deref(), Some("disk full"));
        assert_eq!((r.written, r.pending.len()), (0, 0));
    }
}
