//! Observers of a queue: metrics, a time series and (optionally) the full event log.
//!
//! A link reports three things to its monitor, in time order: an *enqueue* (a packet admitted,
//! with the occupancy after it and how long it will wait), a *dequeue* (service starts, with
//! the serialization time) and a *drop*. Everything in a run's summary about the bottleneck —
//! utilization, drop rate, occupancy, queueing delay — is computed here from those reports and
//! nowhere else. A link without a monitor pays nothing.
//!
//! Occupancy means packets (or bytes) *waiting*, not the one being serialized, matching the
//! buffer limit's semantics.

pub mod histogram;

use crate::packet::Packet;
use crate::units::{Rate, Time};
use histogram::Histogram;

/// The measured window `[start, end)`: warm-up excluded.
#[derive(Clone, Copy, Debug)]
pub struct MeasuredWindow {
    pub start: Time,
    pub end: Time,
}

impl MeasuredWindow {
    #[inline]
    pub fn contains(&self, t: Time) -> bool {
        t >= self.start && t < self.end
    }
    /// Length of `[a, b) ∩ window` in picoseconds.
    #[inline]
    pub fn overlap(&self, a: Time, b: Time) -> u64 {
        let lo = a.max(self.start);
        let hi = b.min(self.end);
        hi.0.saturating_sub(lo.0)
    }
    pub fn len(&self) -> Time {
        self.end - self.start
    }
}

/// Totals over the measured window.
#[derive(Clone, Debug, Default)]
pub struct QueueTotals {
    pub arrivals: u64,
    pub drops: u64,
    pub departures: u64,
    pub departed_bytes: u64,
    /// Time the serializer was busy inside the window, ps.
    pub busy_ps: u64,
    /// ∫ waiting packets dt over the window (packet·ps).
    pub occupancy_pkt_ps: u128,
    pub occupancy_byte_ps: u128,
    pub max_pkts: u64,
    pub max_bytes: u64,
}

/// One interval of the time series.
#[derive(Clone, Debug, Default)]
pub struct Bucket {
    pub busy_ps: u64,
    pub arrivals: u64,
    pub drops: u64,
    pub occupancy_pkt_ps: u128,
    pub max_pkts: u64,
}

/// The queue event log (every write, read and drop, like the NetFPGA monitor), columnar.
#[derive(Clone, Debug, Default)]
pub struct EventLog {
    pub time: Vec<Time>,
    /// 0 = enqueue, 1 = dequeue, 2 = drop.
    pub event: Vec<u8>,
    pub flow: Vec<u32>,
    pub seq: Vec<u32>,
    pub size: Vec<u32>,
    pub queue_pkts: Vec<u64>,
    pub queue_bytes: Vec<u64>,
}

impl EventLog {
    fn push(&mut self, t: Time, kind: u8, p: &Packet, pkts: u64, bytes: u64) {
        self.time.push(t);
        self.event.push(kind);
        self.flow.push(p.flow);
        self.seq.push(p.seq);
        self.size.push(p.size);
        self.queue_pkts.push(pkts);
        self.queue_bytes.push(bytes);
    }
    pub fn len(&self) -> usize {
        self.time.len()
    }
    pub fn is_empty(&self) -> bool {
        self.time.is_empty()
    }
}

pub struct QueueMonitor {
    pub rate: Rate,
    pub window: MeasuredWindow,
    pub totals: QueueTotals,
    /// Queueing delay (arrival to service start) of packets admitted in the window.
    pub delay: Histogram,
    /// Largest occupancy ever seen, warm-up included (for the never-above-limit invariant).
    pub max_pkts_ever: u64,
    pub max_bytes_ever: u64,
    pub interval: Time,
    pub buckets: Vec<Bucket>,
    pub log: Option<EventLog>,
    last_change: Time,
    cur_pkts: u64,
    cur_bytes: u64,
    /// The interval the last report fell in, and its bounds: reports come in time order, so
    /// this spares a division per report.
    cur_bucket: usize,
    cur_bucket_span: (u64, u64),
}

impl QueueMonitor {
    pub fn new(rate: Rate, window: MeasuredWindow, interval: Time, log: bool) -> QueueMonitor {
        let n = window.end.0.div_ceil(interval.0.max(1)) as usize;
        QueueMonitor {
            rate,
            window,
            totals: QueueTotals::default(),
            delay: Histogram::new(),
            max_pkts_ever: 0,
            max_bytes_ever: 0,
            interval,
            buckets: vec![Bucket::default(); n],
            log: log.then(EventLog::default),
            last_change: Time::ZERO,
            cur_pkts: 0,
            cur_bytes: 0,
            cur_bucket: 0,
            cur_bucket_span: (0, interval.0),
        }
    }

    /// Index of the time-series interval holding `t`.
    #[inline]
    fn bucket_index(&mut self, t: Time) -> usize {
        let (lo, hi) = self.cur_bucket_span;
        if t.0 < lo || t.0 >= hi {
            let i = t.0 / self.interval.0;
            self.cur_bucket = i as usize;
            self.cur_bucket_span = (i * self.interval.0, (i + 1) * self.interval.0);
        }
        self.cur_bucket
    }

    #[inline]
    fn bucket(&mut self, t: Time) -> Option<&mut Bucket> {
        let i = self.bucket_index(t);
        self.buckets.get_mut(i)
    }

    /// Adds `f(bucket, overlap)` for every interval that `[a, b)` overlaps.
    #[inline]
    fn spread(&mut self, a: Time, b: Time, f: impl Fn(&mut Bucket, u64)) {
        let i = self.bucket_index(a);
        let end = self.cur_bucket_span.1;
        if b.0 <= end {
            // The common case: the span sits inside one interval.
            if let Some(bk) = self.buckets.get_mut(i) {
                f(bk, (b - a).0);
            }
            return;
        }
        let mut a = a;
        while a < b {
            let i = (a.0 / self.interval.0) as usize;
            let hi = Time((i as u64 + 1) * self.interval.0).min(b);
            match self.buckets.get_mut(i) {
                Some(bk) => f(bk, (hi - a).0),
                None => break,
            }
            a = hi;
        }
    }

    /// Integrates the current occupancy up to `t`.
    #[inline]
    fn advance(&mut self, t: Time) {
        let last = self.last_change;
        if t <= last {
            return;
        }
        if self.cur_pkts > 0 {
            let w = self.window.overlap(last, t);
            self.totals.occupancy_pkt_ps += self.cur_pkts as u128 * w as u128;
            self.totals.occupancy_byte_ps += self.cur_bytes as u128 * w as u128;
            let cur = self.cur_pkts as u128;
            self.spread(last, t, |bk, d| bk.occupancy_pkt_ps += cur * d as u128);
        }
        // Occupancy standing when the window opens counts toward the window's maximum.
        if last < self.window.start && t >= self.window.start {
            self.totals.max_pkts = self.totals.max_pkts.max(self.cur_pkts);
            self.totals.max_bytes = self.totals.max_bytes.max(self.cur_bytes);
        }
        self.last_change = t;
    }

    #[inline]
    fn set_occupancy(&mut self, t: Time, pkts: u64, bytes: u64) {
        self.advance(t);
        self.cur_pkts = pkts;
        self.cur_bytes = bytes;
    }

    pub fn on_enqueue(&mut self, t: Time, p: &Packet, pkts: u64, bytes: u64, wait: Time) {
        self.set_occupancy(t, pkts, bytes);
        self.max_pkts_ever = self.max_pkts_ever.max(pkts);
        self.max_bytes_ever = self.max_bytes_ever.max(bytes);
        if self.window.contains(t) {
            self.totals.arrivals += 1;
            self.totals.max_pkts = self.totals.max_pkts.max(pkts);
            self.totals.max_bytes = self.totals.max_bytes.max(bytes);
            self.delay.record(wait.0);
        }
        if let Some(b) = self.bucket(t) {
            b.arrivals += 1;
            b.max_pkts = b.max_pkts.max(pkts);
        }
        if let Some(log) = self.log.as_mut() {
            log.push(t, 0, p, pkts, bytes);
        }
    }

    pub fn on_dequeue(&mut self, start: Time, p: &Packet, pkts: u64, bytes: u64, ser: Time) {
        self.set_occupancy(start, pkts, bytes);
        let end = start + ser;
        let busy = self.window.overlap(start, end);
        self.totals.busy_ps += busy;
        if self.window.contains(start) {
            self.totals.departures += 1;
            self.totals.departed_bytes += p.size as u64;
        }
        self.spread(start, end, |bk, d| bk.busy_ps += d);
        if let Some(log) = self.log.as_mut() {
            log.push(start, 1, p, pkts, bytes);
        }
    }

    pub fn on_drop(&mut self, t: Time, p: &Packet, pkts: u64, bytes: u64) {
        self.advance(t);
        if self.window.contains(t) {
            self.totals.arrivals += 1;
            self.totals.drops += 1;
        }
        if let Some(b) = self.bucket(t) {
            b.arrivals += 1;
            b.drops += 1;
        }
        if let Some(log) = self.log.as_mut() {
            log.push(t, 2, p, pkts, bytes);
        }
    }

    /// Closes the books at the end of the run.
    pub fn finish(&mut self, t: Time, pkts: u64, bytes: u64) {
        self.set_occupancy(t, pkts, bytes);
    }

    /// Fraction of the window the serializer was busy.
    pub fn utilization(&self) -> f64 {
        self.totals.busy_ps as f64 / self.window.len().0 as f64
    }

    pub fn drop_rate(&self) -> f64 {
        if self.totals.arrivals == 0 {
            0.0
        } else {
            self.totals.drops as f64 / self.totals.arrivals as f64
        }
    }

    pub fn mean_queue_pkts(&self) -> f64 {
        self.totals.occupancy_pkt_ps as f64 / self.window.len().0 as f64
    }

    pub fn mean_queue_bytes(&self) -> f64 {
        self.totals.occupancy_byte_ps as f64 / self.window.len().0 as f64
    }
}
