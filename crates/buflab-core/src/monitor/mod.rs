//! Observers of a queue: metrics, a time series and (optionally) the full event log.
//!
//! Read first: [`crate::link`] (who reports, and when). Owns every figure of a queue that a run
//! reports; must not know links' internals, disciplines or flows beyond a packet's fields (a link
//! reports, the monitor counts).
//!
//! A link reports three things to its monitor, in time order: an *enqueue* (a packet admitted,
//! with the occupancy after it and how long it will wait), a *dequeue* (service starts, with
//! the serialization time) and a *drop*; a queue discipline adds a *mark* (an admitted packet
//! was given CE, reported right after its enqueue; it is not a drop) and, if it holds its
//! packets, a *purge* (it dropped a packet it held: a drop, but not a new arrival) and the
//! queueing delay with the dequeue (it is not known at the enqueue). Everything in a run's summary about the bottleneck —
//! utilization, drop rate, occupancy, queueing delay — is computed here from those reports and
//! nowhere else. A link without a monitor pays nothing.
//!
//! Occupancy means packets (or bytes) *waiting*, not the one being serialized, matching the
//! buffer limit's semantics.

pub mod events;
pub mod histogram;
pub mod mix;
pub mod replay;
pub mod trace;

use crate::packet::Packet;
use crate::units::{Rate, Time};
pub use events::{EventLog, EventRecorder, EventSink, QueueEvent};
use histogram::Histogram;
use mix::TrafficMix;

/// The measured window `[start, end)`: warm-up excluded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MeasuredWindow {
    pub start: Time,
    pub end: Time,
}

impl MeasuredWindow {
    /// Everything counts: a component used on its own, outside a run.
    pub const WHOLE_RUN: MeasuredWindow = MeasuredWindow { start: Time::ZERO, end: Time::MAX };

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
    /// Admitted packets marked CE (RFC 3168); they are counted in `arrivals`, not in `drops`.
    pub marks: u64,
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

/// Whole-run running totals. Window and per-interval figures are differences of snapshots
/// of these, taken when time crosses an interval or window boundary (or when a controller
/// asks, see [`QueueMonitor::running_totals`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Cumulative {
    /// ∫ waiting packets dt (packet·ps) and ∫ waiting bytes dt (byte·ps).
    pub occupancy_pkt_ps: u128,
    pub occupancy_byte_ps: u128,
    /// Serialization time of every service started (a snapshot trims the one in progress).
    pub busy_ps: u64,
    /// Arrivals at the queue, admitted or dropped.
    pub arrivals: u64,
    pub drops: u64,
    pub marks: u64,
    pub departures: u64,
    pub departed_bytes: u64,
}

impl Cumulative {
    /// The totals of the period between snapshot `o` and this later one.
    pub fn minus(&self, o: &Cumulative) -> Cumulative {
        Cumulative {
            occupancy_pkt_ps: self.occupancy_pkt_ps - o.occupancy_pkt_ps,
            occupancy_byte_ps: self.occupancy_byte_ps - o.occupancy_byte_ps,
            busy_ps: self.busy_ps - o.busy_ps,
            arrivals: self.arrivals - o.arrivals,
            drops: self.drops - o.drops,
            marks: self.marks - o.marks,
            departures: self.departures - o.departures,
            departed_bytes: self.departed_bytes - o.departed_bytes,
        }
    }
}

pub struct QueueMonitor {
    pub rate: Rate,
    pub window: MeasuredWindow,
    /// Totals over the measured window (complete after `finish`).
    pub totals: QueueTotals,
    /// Queueing delay (arrival to service start) of packets admitted in the window.
    pub delay: Histogram,
    /// Largest occupancy ever seen, warm-up included (for the never-above-limit invariant).
    pub max_pkts_ever: u64,
    /// When the queue dropped its first packet, warm-up included (pacing seed: a paced flow's
    /// first loss comes later in slow start).
    pub first_drop: Option<Time>,
    pub max_bytes_ever: u64,
    pub interval: Time,
    /// The time series, one bucket per interval (complete after `finish`).
    pub buckets: Vec<Bucket>,
    /// The event log, when the scenario asks for it (`monitor.events`).
    pub log: Option<EventRecorder>,
    /// Inter-arrival times and same-flow runs of the arriving traffic, in the window.
    pub mix: TrafficMix,
    cum: Cumulative,
    last_change: Time,
    cur_pkts: u64,
    cur_bytes: u64,
    /// End of the last service started.
    service_end: Time,
    /// The next interval boundary or window edge: only crossing one costs more than a
    /// comparison and two multiply-adds.
    next_mark: Time,
    /// Snapshots at interval boundaries 0, interval, 2·interval, …
    marks: Vec<Cumulative>,
    /// Largest occupancy (packets) of each finished interval, and of the current one.
    interval_max: Vec<u64>,
    cur_interval_max: u64,
    at_window_start: Option<Cumulative>,
    at_window_end: Option<Cumulative>,
    in_window: bool,
}

impl QueueMonitor {
    pub fn new(rate: Rate, window: MeasuredWindow, interval: Time, log: bool) -> QueueMonitor {
        let n = window.end.0.div_ceil(interval.0.max(1)) as usize;
        let mut m = QueueMonitor {
            rate,
            window,
            totals: QueueTotals::default(),
            delay: Histogram::new(),
            max_pkts_ever: 0,
            first_drop: None,
            max_bytes_ever: 0,
            interval,
            buckets: Vec::with_capacity(n),
            log: log.then(EventRecorder::default),
            mix: TrafficMix::default(),
            cum: Cumulative::default(),
            last_change: Time::ZERO,
            cur_pkts: 0,
            cur_bytes: 0,
            service_end: Time::ZERO,
            next_mark: Time::ZERO,
            marks: Vec::with_capacity(n + 1),
            interval_max: Vec::with_capacity(n),
            cur_interval_max: 0,
            at_window_start: None,
            at_window_end: None,
            in_window: false,
        };
        m.cross_marks(Time::ZERO);
        m
    }

    /// Running totals as of time `m`, with the service in progress trimmed at `m`.
    fn snapshot(&self, m: Time) -> Cumulative {
        let mut c = self.cum;
        c.busy_ps -= self.service_end.0.saturating_sub(m.0);
        c
    }

    /// Integrates the current occupancy up to `t`.
    #[inline]
    fn integrate(&mut self, t: Time) {
        let d = t.0 - self.last_change.0;
        self.cum.occupancy_pkt_ps += self.cur_pkts as u128 * d as u128;
        self.cum.occupancy_byte_ps += self.cur_bytes as u128 * d as u128;
        self.last_change = t;
    }

    /// Brings the books up to `t` (reports arrive in time order).
    #[inline]
    fn advance(&mut self, t: Time) {
        if t >= self.next_mark {
            self.cross_marks(t);
        }
        if t > self.last_change {
            self.integrate(t);
        }
    }

    /// Takes the snapshots of every boundary up to and including `t`.
    fn cross_marks(&mut self, t: Time) {
        while self.next_mark <= t {
            let m = self.next_mark;
            self.integrate(m);
            let snap = self.snapshot(m);
            let next_boundary = Time(self.marks.len() as u64 * self.interval.0);
            if m == next_boundary {
                if !self.marks.is_empty() {
                    self.interval_max.push(self.cur_interval_max);
                }
                self.marks.push(snap);
                // Occupancy standing at the boundary counts toward the new interval's maximum.
                self.cur_interval_max = self.cur_pkts;
            }
            if m == self.window.start {
                self.at_window_start = Some(snap);
                self.in_window = true;
                self.totals.max_pkts = self.cur_pkts;
                self.totals.max_bytes = self.cur_bytes;
            }
            if m == self.window.end {
                self.at_window_end = Some(snap);
                self.in_window = false;
            }
            let mut next = Time(self.marks.len() as u64 * self.interval.0);
            if self.at_window_start.is_none() {
                next = next.min(self.window.start);
            }
            if self.at_window_end.is_none() {
                next = next.min(self.window.end);
            }
            self.next_mark = if next > m { next } else { Time::MAX };
        }
    }

    #[inline]
    fn set_occupancy(&mut self, t: Time, pkts: u64, bytes: u64) {
        self.advance(t);
        self.cur_pkts = pkts;
        self.cur_bytes = bytes;
    }

    /// A packet admitted at `t`, leaving `pkts` and `bytes` waiting, that will wait `wait`.
    #[inline]
    pub fn on_enqueue(&mut self, t: Time, p: &Packet, pkts: u64, bytes: u64, wait: Time) {
        self.admitted(t, p, pkts, bytes);
        if self.in_window {
            self.delay.record(wait.0);
        }
    }

    /// A packet admitted at `t` whose wait is not known yet: a discipline that holds its
    /// packets decides later when it leaves, and `record_wait` reports it then.
    pub fn on_enqueue_unknown_wait(&mut self, t: Time, p: &Packet, pkts: u64, bytes: u64) {
        self.admitted(t, p, pkts, bytes);
    }

    #[inline(always)]
    fn admitted(&mut self, t: Time, p: &Packet, pkts: u64, bytes: u64) {
        self.set_occupancy(t, pkts, bytes);
        self.cum.arrivals += 1;
        self.max_pkts_ever = self.max_pkts_ever.max(pkts);
        self.max_bytes_ever = self.max_bytes_ever.max(bytes);
        self.cur_interval_max = self.cur_interval_max.max(pkts);
        if self.in_window {
            self.totals.max_pkts = self.totals.max_pkts.max(pkts);
            self.totals.max_bytes = self.totals.max_bytes.max(bytes);
        }
        let ser = self.rate.serialization(p.size as u64);
        self.mix.on_stored(t, p.flow, ser, self.in_window);
        if let Some(log) = self.log.as_mut() {
            log.record(t, QueueEvent::Enqueue, p, pkts, bytes);
        }
    }

    #[inline]
    pub fn on_dequeue(&mut self, start: Time, p: &Packet, pkts: u64, bytes: u64, ser: Time) {
        self.set_occupancy(start, pkts, bytes);
        self.cum.busy_ps += ser.0;
        self.cum.departures += 1;
        self.cum.departed_bytes += p.size as u64;
        self.service_end = start + ser;
        if let Some(log) = self.log.as_mut() {
            log.record(start, QueueEvent::Dequeue, p, pkts, bytes);
        }
    }

    #[inline]
    pub fn on_drop(&mut self, t: Time, p: &Packet, pkts: u64, bytes: u64) {
        self.advance(t);
        self.cum.arrivals += 1;
        self.cum.drops += 1;
        self.first_drop.get_or_insert(t);
        self.mix.on_arrival(p.flow, self.in_window);
        if let Some(log) = self.log.as_mut() {
            log.record(t, QueueEvent::Drop, p, pkts, bytes);
        }
    }

    /// The queueing delay of a packet that arrived at `arrived` and started service at `start`,
    /// counted when it arrived in the measured window (as `on_enqueue` counts a known one).
    #[inline]
    pub fn record_wait(&mut self, arrived: Time, start: Time) {
        if self.window.contains(arrived) {
            self.delay.record((start - arrived).0);
        }
    }

    /// A discipline dropped a packet it held, at `t`, leaving `pkts` and `bytes` waiting: a
    /// drop, but not an arrival (the packet was counted when it arrived).
    #[inline]
    pub fn on_purge(&mut self, t: Time, p: &Packet, pkts: u64, bytes: u64) {
        self.set_occupancy(t, pkts, bytes);
        self.cum.drops += 1;
        self.first_drop.get_or_insert(t);
        if let Some(log) = self.log.as_mut() {
            log.record(t, QueueEvent::Purge, p, pkts, bytes);
        }
    }

    /// The packet just enqueued at `t` was marked CE (after `on_enqueue`, with the same
    /// occupancy), or the packet just dequeued (after `on_dequeue`: an AQM that marks at
    /// dequeue).
    #[inline]
    pub fn on_mark(&mut self, t: Time, p: &Packet, pkts: u64, bytes: u64) {
        self.advance(t);
        self.cum.marks += 1;
        if let Some(log) = self.log.as_mut() {
            log.record(t, QueueEvent::Mark, p, pkts, bytes);
        }
    }

    /// The running totals as of `t`, for a controller acting during the run (the auto-sizer):
    /// differences of two of them are the totals of the period between. The books are brought
    /// up to `t`, so no report may come earlier than `t` afterwards; the link reports the
    /// dequeues due by `t` first (see `Link::running_totals`).
    pub fn running_totals(&mut self, t: Time) -> Cumulative {
        self.advance(t);
        self.snapshot(t)
    }

    /// Closes the books at the end of the run (`t` is the window's end) and fills `totals`
    /// and `buckets`.
    pub fn finish(&mut self, t: Time, pkts: u64, bytes: u64) {
        self.set_occupancy(t, pkts, bytes);
        self.mix.finish();
        if let Some(log) = self.log.as_mut() {
            log.flush();
        }
        let end = self.at_window_end.unwrap_or_else(|| self.snapshot(t));
        let start = self.at_window_start.unwrap_or_default();
        let w = end.minus(&start);
        self.totals.arrivals = w.arrivals;
        self.totals.drops = w.drops;
        self.totals.marks = w.marks;
        self.totals.departures = w.departures;
        self.totals.departed_bytes = w.departed_bytes;
        self.totals.busy_ps = w.busy_ps;
        self.totals.occupancy_pkt_ps = w.occupancy_pkt_ps;
        self.totals.occupancy_byte_ps = w.occupancy_byte_ps;
        // The last interval may be cut short by the end of the run.
        let mut closing = self.marks.clone();
        let mut maxes = self.interval_max.clone();
        if closing.last().is_none_or(|_| (closing.len() as u64 - 1) * self.interval.0 < t.0) {
            closing.push(end);
            maxes.push(self.cur_interval_max);
        }
        self.buckets = closing
            .windows(2)
            .zip(maxes)
            .map(|(pair, max_pkts)| {
                let d = pair[1].minus(&pair[0]);
                Bucket {
                    busy_ps: d.busy_ps,
                    arrivals: d.arrivals,
                    drops: d.drops,
                    occupancy_pkt_ps: d.occupancy_pkt_ps,
                    max_pkts,
                }
            })
            .collect();
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

    /// Marks ÷ arrivals (admitted or dropped) over the window.
    pub fn mark_rate(&self) -> f64 {
        if self.totals.arrivals == 0 {
            0.0
        } else {
            self.totals.marks as f64 / self.totals.arrivals as f64
        }
    }

    pub fn mean_queue_pkts(&self) -> f64 {
        self.totals.occupancy_pkt_ps as f64 / self.window.len().0 as f64
    }

    pub fn mean_queue_bytes(&self) -> f64 {
        self.totals.occupancy_byte_ps as f64 / self.window.len().0 as f64
    }
}
