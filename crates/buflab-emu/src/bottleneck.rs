//! The bottleneck on real frames: a serializer at the configured rate behind any queue
//! discipline of `buflab-queue`, run by the simulator's timetable rules.
//!
//! Read first: the `buflab-queue` crate doc (the contract), then the simulator's held link
//! (`buflab-core`'s `link/held.rs`), whose rules this repeats on frames: a service due at time
//! t starts before an arrival at t; a frame that arrives at an idle serializer starts at its
//! arrival; each service lasts the frame's exact integer serialization time at the rate; the
//! hard limit counts the frames waiting, not the one being serialized. Every time here is an
//! ideal time, taken from arrival stamps, never from when the loop got round to it: the loop
//! sends each frame when the clock reaches its exit time (plus its delay line's delay).
//!
//! With [`Bottleneck::start_log`] it also keeps the simulator's queue event log: an enqueue,
//! dequeue (service start), drop, mark or purge row per event, with the frames and bytes
//! waiting after it, in the order and with the codes of the simulator's log, so that the
//! same readers rebuild the queue from either.
//!
//! Must not know sockets, clocks or delay lines.

use buflab_base::units::{BufferLimit, Rate, Time};
use buflab_queue::bump::Bump;
use buflab_queue::log::QueueEvent;
use buflab_queue::{fits, Arrival, Dequeue, Discipline, Verdict};

use crate::pool::Frame;

pub use buflab_queue::log::LogRow;

const ENQUEUE: u8 = QueueEvent::Enqueue as u8;
const DEQUEUE: u8 = QueueEvent::Dequeue as u8;
const DROP: u8 = QueueEvent::Drop as u8;
const MARK: u8 = QueueEvent::Mark as u8;
const PURGE: u8 = QueueEvent::Purge as u8;

/// What the bottleneck counted (whole run).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    pub arrivals: u64,
    pub drops: u64,
    pub marks: u64,
    pub departures: u64,
    pub departed_bytes: u64,
    /// The most frames and bytes ever waiting (the one in service not counted).
    pub max_waiting: u64,
    pub max_waiting_bytes: u64,
    /// Frames waiting, integrated over ideal time (frame·ps): its mean over a span is the
    /// time-average queue.
    pub waiting_integral: u128,
    /// Serialization time of every frame whose service started, ps.
    pub busy_ps: u128,
}

impl Counts {
    /// What was counted since `then` (maxima kept as they are: the window's own need a reset).
    pub fn since(&self, then: &Counts) -> Counts {
        Counts {
            arrivals: self.arrivals - then.arrivals,
            drops: self.drops - then.drops,
            marks: self.marks - then.marks,
            departures: self.departures - then.departures,
            departed_bytes: self.departed_bytes - then.departed_bytes,
            max_waiting: self.max_waiting,
            max_waiting_bytes: self.max_waiting_bytes,
            waiting_integral: self.waiting_integral - then.waiting_integral,
            busy_ps: self.busy_ps - then.busy_ps,
        }
    }
}

pub struct Bottleneck {
    rate: Rate,
    limit: BufferLimit,
    discipline: Box<dyn Discipline<Frame>>,
    /// When the serializer finishes its current frame (or finished its last).
    busy_until: Time,
    /// A discipline that said "not before" (a pacer): when to ask it again.
    ask_at: Time,
    purged: Vec<Frame>,
    /// When the number of frames waiting last changed (for the integral).
    last_change: Time,
    pub counts: Counts,
    /// The event log, once started.
    log: Option<Vec<LogRow>>,
}

impl Bottleneck {
    pub fn new(rate: Rate, limit: BufferLimit, discipline: Box<dyn Discipline<Frame>>) -> Bottleneck {
        assert!(rate.bits_per_s() > 0, "a positive rate");
        Bottleneck {
            rate,
            limit,
            discipline,
            busy_until: Time::ZERO,
            ask_at: Time::ZERO,
            purged: Vec::new(),
            last_change: Time::ZERO,
            counts: Counts::default(),
            log: None,
        }
    }

    /// When the serializer finishes its current frame (or finished its last).
    pub fn busy_until(&self) -> Time {
        self.busy_until
    }

    /// A new hard limit, in force for arrivals from now on (frames already waiting stay).
    pub fn set_limit(&mut self, limit: BufferLimit) {
        self.limit = limit;
    }

    pub fn limit(&self) -> BufferLimit {
        self.limit
    }

    /// The bump this link runs, if its discipline is one (a bump in the wire in front of the
    /// bottleneck: see [`crate::bumps`]).
    pub fn bump_mut(&mut self) -> Option<&mut Bump<Frame>> {
        (self.discipline.as_mut() as &mut dyn std::any::Any).downcast_mut::<Bump<Frame>>()
    }

    /// Its discipline changed its mind at `now` (a bump heard QCN feedback or an ECN-Echo): a
    /// waiting head may go at another time, so the serializer asks again now, or when it
    /// frees up (the simulator's `Link::rescheduled`).
    pub fn rescheduled(&mut self, now: Time) {
        self.ask_at = now.max(self.discipline.not_before());
    }

    /// Frames and bytes waiting (the one in service not counted).
    pub fn waiting(&self) -> (u64, u64) {
        self.discipline.backlog()
    }

    /// When the serializer next asks for a frame, if frames wait.
    pub fn next_service(&self) -> Option<Time> {
        (self.waiting().0 > 0).then(|| self.busy_until.max(self.ask_at))
    }

    /// Runs every service due by `t`, in order: each frame that starts is pushed to `out` with
    /// its exit time (the end of its serialization); frames the discipline drops from its
    /// queue go to `dropped`.
    pub fn advance(&mut self, t: Time, out: &mut Vec<(Frame, Time)>, dropped: &mut Vec<Frame>) {
        while let Some(ask) = self.next_service().filter(|&a| a <= t) {
            self.integrate(ask);
            let next = self.discipline.dequeue(ask, &mut self.purged);
            self.take_purged(ask, dropped);
            match next {
                Dequeue::Send(f) | Dequeue::Marked(f) => {
                    self.record(ask, DEQUEUE, &f);
                    if matches!(next, Dequeue::Marked(_)) {
                        // Marked as it left (CoDel's ECN option): the mark follows its dequeue.
                        self.counts.marks += 1;
                        self.record(ask, MARK, &f);
                    }
                    let ser = self.rate.serialization(f.len as u64);
                    let end = ask + ser;
                    self.counts.busy_ps += ser.ps() as u128;
                    self.busy_until = end;
                    self.counts.departures += 1;
                    self.counts.departed_bytes += f.len as u64;
                    out.push((f, end));
                }
                Dequeue::Wait(w) => {
                    assert!(w > ask, "a discipline asked to wait until {w:?}, not after {ask:?}");
                    self.ask_at = w;
                }
                Dequeue::Idle => break,
            }
        }
    }

    /// Frame `f` arrives at `t` (arrivals come in time order). Services due by `t` run first;
    /// frames that start are pushed to `out`, and the frame itself (if refused) and any the
    /// discipline drops go to `dropped`.
    pub fn arrive(
        &mut self,
        t: Time,
        f: Frame,
        out: &mut Vec<(Frame, Time)>,
        dropped: &mut Vec<Frame>,
    ) -> Verdict {
        self.advance(t, out, dropped);
        self.integrate(t);
        self.counts.arrivals += 1;
        let (waiting, bytes) = self.waiting();
        if waiting == 0 && self.busy_until < t {
            // Idle since it finished its last frame: free from now on.
            self.busy_until = t;
        }
        let mut a =
            Arrival::new(t, waiting, bytes, self.busy_until, self.limit, f.len, f.ect).with_ect1(f.ect1);
        // Frames held while the serializer idles (a pacer's, BJP's) wait all the same: the
        // newcomer joins them, so the limit applies as if the serializer were busy (the
        // simulator's held link).
        if waiting > 0 {
            a.full = !fits(self.limit, waiting, bytes, f.len);
        }
        let verdict = self.discipline.enqueue(&a, f, &mut self.purged);
        // The discipline may now send sooner than it last said (a bump's control frames pass
        // its paced ones): ask again from now, or from when it says.
        self.ask_at = t.max(self.discipline.not_before());
        self.take_purged(t, dropped);
        match verdict {
            Verdict::Drop => {
                self.counts.drops += 1;
                self.record(t, DROP, &f);
                dropped.push(f);
            }
            Verdict::Mark => {
                self.counts.marks += 1;
                self.record(t, ENQUEUE, &f);
                self.record(t, MARK, &f);
            }
            Verdict::Admit => self.record(t, ENQUEUE, &f),
        }
        let (waiting, bytes) = self.waiting();
        self.counts.max_waiting = self.counts.max_waiting.max(waiting);
        self.counts.max_waiting_bytes = self.counts.max_waiting_bytes.max(bytes);
        // An idle serializer takes the frame now (the discipline may still say wait).
        self.advance(t, out, dropped);
        verdict
    }

    /// Adds the frames waiting since the last change, up to `t`, to the integral.
    fn integrate(&mut self, t: Time) {
        if t > self.last_change {
            let waiting = self.waiting().0 as u128;
            self.counts.waiting_integral += waiting * (t - self.last_change).ps() as u128;
            self.last_change = t;
        }
    }

    /// Brings the occupancy integral up to `t` (after `advance(t)`): a window's edges.
    pub fn settle(&mut self, t: Time) {
        self.integrate(t);
    }

    /// Resets the maxima (the start of a measured window).
    pub fn reset_maxima(&mut self) {
        self.counts.max_waiting = self.waiting().0;
        self.counts.max_waiting_bytes = self.waiting().1;
    }

    /// Counts (and logs, as purges at `t`) the frames the discipline dropped from its queue,
    /// and hands them to `dropped`.
    fn take_purged(&mut self, t: Time, dropped: &mut Vec<Frame>) {
        let mut purged = std::mem::take(&mut self.purged);
        for f in &purged {
            self.record(t, PURGE, f);
        }
        self.counts.drops += purged.len() as u64;
        dropped.append(&mut purged);
        self.purged = purged; // empty, its allocation kept for the next
    }

    /// Starts the event log (the measured window's start).
    pub fn start_log(&mut self) {
        self.log.get_or_insert_with(Vec::new);
    }

    /// The rows logged since the last call.
    pub fn take_log(&mut self) -> Vec<LogRow> {
        self.log.as_mut().map(std::mem::take).unwrap_or_default()
    }

    /// Logs `event` of frame `f` at `t`, with the occupancy as it now is.
    fn record(&mut self, t: Time, event: u8, f: &Frame) {
        if self.log.is_none() {
            return;
        }
        let (queue_pkts, queue_bytes) = self.waiting();
        let row = LogRow { time: t, event, flow: f.flow, seq: f.seq, size: f.len, queue_pkts, queue_bytes };
        self.log.as_mut().expect("checked").push(row);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use buflab_queue::drop_tail::DropTail;
    use buflab_queue::Fifo;

    fn frame(slot: u32, len: u32) -> Frame {
        Frame { slot, len, ..Frame::default() }
    }

    fn drop_tail(rate: Rate, limit: BufferLimit) -> Bottleneck {
        Bottleneck::new(rate, limit, Box::new(Fifo::<DropTail, Frame>::new(DropTail)))
    }

    #[test]
    fn serializes_back_to_back_at_the_exact_integer_time_and_drops_at_the_limit() {
        // 100 Mb/s: 1500 B take 120 µs. Three frames at once, buffer 1: the first goes into
        // service, the second waits, the third finds the buffer full.
        let mut b = drop_tail(Rate::mbps(100), BufferLimit::Packets(1));
        let (mut out, mut dropped) = (Vec::new(), Vec::new());
        let t0 = Time::from_us(1000);
        for slot in 0..3 {
            b.arrive(t0, frame(slot, 1500), &mut out, &mut dropped);
        }
        assert_eq!(out, vec![(frame(0, 1500), t0 + Time::from_us(120))]);
        assert_eq!(dropped, vec![frame(2, 1500)]);
        // The second starts when the first ends, exactly.
        b.advance(t0 + Time::from_us(500), &mut out, &mut dropped);
        assert_eq!(out[1], (frame(1, 1500), t0 + Time::from_us(240)));
        // A frame arriving at an idle serializer starts at its arrival, not at the last end.
        let t1 = t0 + Time::from_us(1000);
        b.arrive(t1, frame(3, 64), &mut out, &mut dropped);
        assert_eq!(out[2], (frame(3, 64), t1 + Rate::mbps(100).serialization(64)));
        assert_eq!(b.counts.drops, 1);
        assert_eq!((b.counts.arrivals, b.counts.departures, b.counts.max_waiting), (4, 3, 1));
    }

    #[test]
    fn a_service_due_at_an_arrival_starts_before_it() {
        // Buffer 1: the second frame waits; the third arrives exactly when the first ends, so
        // the second has started and the third fits.
        let mut b = drop_tail(Rate::mbps(100), BufferLimit::Packets(1));
        let (mut out, mut dropped) = (Vec::new(), Vec::new());
        b.arrive(Time::ZERO, frame(0, 1500), &mut out, &mut dropped);
        b.arrive(Time::ZERO, frame(1, 1500), &mut out, &mut dropped);
        b.arrive(Time::from_us(120), frame(2, 1500), &mut out, &mut dropped);
        assert!(dropped.is_empty());
        assert_eq!(out.len(), 2);
        assert_eq!(b.waiting(), (1, 1500));
    }

    #[test]
    fn the_log_has_the_simulators_rows_in_its_order() {
        // Buffer 1 at 100 Mb/s: frame 0 goes into service, 1 waits, 2 is dropped; then 1
        // starts when 0 ends. An enqueue is logged before the service it starts.
        let mut b = drop_tail(Rate::mbps(100), BufferLimit::Packets(1));
        b.start_log();
        let (mut out, mut dropped) = (Vec::new(), Vec::new());
        for slot in 0..3 {
            b.arrive(
                Time::ZERO,
                Frame { slot, len: 1500, flow: slot, seq: 10 * slot, ..Frame::default() },
                &mut out,
                &mut dropped,
            );
        }
        b.advance(Time::from_us(120), &mut out, &mut dropped);
        let rows: Vec<(u64, u8, u32, u64)> =
            b.take_log().iter().map(|r| (r.time.ps() / 1_000_000, r.event, r.flow, r.queue_pkts)).collect();
        assert_eq!(
            rows,
            vec![
                (0, ENQUEUE, 0, 1),
                (0, DEQUEUE, 0, 0),
                (0, ENQUEUE, 1, 1),
                (0, DROP, 2, 1),
                (120, DEQUEUE, 1, 0)
            ]
        );
        assert!(b.take_log().is_empty(), "taken once");
        let mut bytes = Vec::new();
        LogRow { time: Time(1), event: 2, flow: 3, seq: 4, size: 5, queue_pkts: 6, queue_bytes: 7 }
            .write_to(&mut bytes);
        assert_eq!(bytes.len(), LogRow::BYTES);
    }

    #[test]
    fn a_byte_limit_counts_bytes() {
        let mut b = drop_tail(Rate::mbps(10), BufferLimit::Bytes(3000));
        let (mut out, mut dropped) = (Vec::new(), Vec::new());
        for (slot, len) in [(0, 1500), (1, 1500), (2, 1500), (3, 64), (4, 1500)] {
            b.arrive(Time::ZERO, frame(slot, len), &mut out, &mut dropped);
        }
        // In service: 0. Waiting: 1 and 2 (3000 B); 3 does not fit beside them, nor 4.
        assert_eq!(dropped.iter().map(|f| f.slot).collect::<Vec<_>>(), vec![3, 4]);
        assert_eq!(b.counts.max_waiting_bytes, 3000);
    }
}
