//! CoDel: Controlled Delay active queue management (Nichols & Jacobson, ACM Queue 2012; RFC
//! 8289), dropping (or marking) at dequeue when the packets' sojourn time has stayed above a
//! target for an interval.
//!
//! Read first: the crate doc (this is a discipline of the second form: it holds its packets
//! and drops at dequeue), then RFC 8289 §3 (the estimator, the setpoint and the control loop)
//! and §5.5 (the dequeue routine, which [`CodelState::dequeue`] follows line by line). Owns
//! CoDel's state machine, reused per queue by [`crate::fq_codel`], and the `codel`
//! discipline; must not know links or the event loop.
//!
//! The rules, in the RFC's terms:
//! - **Estimator** (§3.1): a packet's sojourn time, from its arrival to its dequeue.
//! - **Setpoint and interval** (§3.2, §3.3; §4.2 and §4.3 give the defaults TARGET = 5 ms and
//!   INTERVAL = 100 ms): once the sojourn time of the packets dequeued has been at least
//!   TARGET for INTERVAL (`first_above_time`), dequeues may drop. A packet below TARGET, or a
//!   queue left with at most one largest packet (MAXPACKET: the largest packet that crosses the
//!   link, the RFC's MTU), resets that clock: CoDel never drops the last packet's worth.
//! - **Control law** (§3.4): in the dropping state the n-th drop comes INTERVAL/√n after the
//!   one before (`drop_next`), so that the drop rate grows as √n, the rate TCP's window
//!   needs to come down. [`control_law`] computes ⌊INTERVAL/√n⌋ exactly, in integer
//!   picoseconds (the RFC and Linux approximate the square root; Linux with a Newton step in
//!   Q0.32).
//! - **Re-entering** (§5.5): leaving the dropping state and re-entering it within
//!   16 INTERVALs starts from the drop count the last cycle reached (`count − lastcount`, if
//!   above 1), not from 1: the drop rate that last controlled the queue.
//! - **ECN** (`codel_ecn`): an ECN-capable packet that would be dropped is marked Congestion
//!   Experienced and sent instead, and the next drop is scheduled as for a drop. RFC 8289's
//!   pseudocode only drops; this is Linux's `codel_dequeue` (`params->ecn`), which ns-3's
//!   CoDelQueueDisc follows. A marked packet is sent, so marking never empties the queue.
//! - **The buffer** stays the hard limit: an arrival that finds it full is dropped at the
//!   tail (RFC 8289 §5.4 drops when the queue is full; Linux's `limit`), counted apart as an
//!   overflow.
//!
//! Times: integer picoseconds throughout (`first_above_time` is an `Option` instead of the
//! RFC's 0 meaning unset).

use std::collections::VecDeque;

use buflab_base::rng::Rng;
use buflab_base::units::Time;

use crate::aqm::{AqmCounts, Tally};
use crate::describe::{BuildHeld, Described, LinkInfo, Param, ParamError, ParamKind, Value, Values};
use crate::{Arrival, Dequeue, Discipline, Flowing, Limit, Queued, Verdict};

/// CoDel's settings (RFC 8289 §5.3's constants).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CodelParams {
    /// TARGET: the acceptable standing sojourn time.
    pub target: Time,
    /// INTERVAL: how long the sojourn time must stay above TARGET before dropping, and the
    /// scale of the control law.
    pub interval: Time,
    /// Mark ECN-capable packets instead of dropping them.
    pub ecn: bool,
    /// MAXPACKET, bytes: a queue holding at most this much after a dequeue is never dropped
    /// from.
    pub maxpacket: u64,
}

/// Packets in arrival order with their arrival times, and their bytes.
#[derive(Clone, Debug)]
pub(crate) struct Stamped<P> {
    queue: VecDeque<(P, Time)>,
    bytes: u64,
}

impl<P: Queued> Stamped<P> {
    pub fn new() -> Stamped<P> {
        Stamped { queue: VecDeque::new(), bytes: 0 }
    }

    pub fn push(&mut self, p: P, arrived: Time) {
        self.bytes += p.size() as u64;
        self.queue.push_back((p, arrived));
    }

    /// The oldest packet and its arrival time, taken out.
    pub fn pop(&mut self) -> Option<(P, Time)> {
        let (p, t) = self.queue.pop_front()?;
        self.bytes -= p.size() as u64;
        Some((p, t))
    }

    pub fn len(&self) -> u64 {
        self.queue.len() as u64
    }

    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// Visits the packets oldest first.
    pub fn visit(&self, visit: &mut dyn FnMut(&P)) {
        self.queue.iter().for_each(|(p, _)| visit(p));
    }
}

/// The control law (RFC 8289 §3.4, §5.6 `control_law`): the next drop `t + INTERVAL/√count`,
/// with ⌊INTERVAL/√count⌋ computed exactly as ⌊√⌊INTERVAL²/count⌋⌋ (the floor of a square
/// root of a floor is the floor of the square root).
pub fn control_law(t: Time, interval: Time, count: u32) -> Time {
    let squared = interval.ps() as u128 * interval.ps() as u128;
    Time(t.ps() + (squared / count.max(1) as u128).isqrt() as u64)
}

/// CoDel's per-queue state (RFC 8289 §5.2).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CodelState {
    /// `first_above_time`: when the sojourn time, above TARGET since just before, will have
    /// been so for INTERVAL; None while it is below.
    pub first_above: Option<Time>,
    /// `drop_next`: when the next drop is due in the dropping state.
    pub drop_next: Time,
    /// `count`: drops (and marks) since entering the dropping state.
    pub count: u32,
    /// `lastcount`: `count` when the dropping state was last entered.
    pub last_count: u32,
    /// `dropping`: in the dropping state.
    pub dropping: bool,
}

impl CodelState {
    /// RFC 8289 §5.5 `dodequeue`: the head of `q` and whether it is OK to drop it.
    fn dodequeue<P: Queued>(&mut self, c: &CodelParams, now: Time, q: &mut Stamped<P>) -> Option<(P, bool)> {
        let Some((p, arrived)) = q.pop() else {
            // An empty queue cannot be above TARGET.
            self.first_above = None;
            return None;
        };
        let sojourn = now - arrived;
        if sojourn < c.target || q.bytes() <= c.maxpacket {
            // Went below: stay below for at least INTERVAL.
            self.first_above = None;
            return Some((p, false));
        }
        match self.first_above {
            // Just went above from below: if still above at first_above_time, OK to drop.
            None => {
                self.first_above = Some(now + c.interval);
                Some((p, false))
            }
            Some(t) => Some((p, now >= t)),
        }
    }

    /// RFC 8289 §5.5 `dequeue` at `now` from `q`: the packet to send, marked CE or not
    /// (`true`: marked now); the packets dropped go to `purged`, and the drops, marks and
    /// entries into the dropping state to `tally`.
    pub(crate) fn dequeue<P: Queued>(
        &mut self,
        c: &CodelParams,
        now: Time,
        q: &mut Stamped<P>,
        purged: &mut Vec<P>,
        tally: &mut Tally,
    ) -> Option<(P, bool)> {
        let Some((mut p, ok_to_drop)) = self.dodequeue(c, now, q) else {
            // An empty queue takes us out of the dropping state.
            self.dropping = false;
            return None;
        };
        if self.dropping {
            if !ok_to_drop {
                // Sojourn time below TARGET: leave the dropping state.
                self.dropping = false;
            }
            // Time for the next drop: drop the head and dequeue the next. A large backlog may
            // need several drops now, hence the loop.
            while self.dropping && now >= self.drop_next {
                self.count += 1;
                if c.ecn && p.ect() {
                    p.mark_ce();
                    tally.add(now, |k| k.law_marks += 1);
                    self.drop_next = control_law(self.drop_next, c.interval, self.count);
                    return Some((p, true));
                }
                purged.push(p);
                tally.add(now, |k| k.law_drops += 1);
                match self.dodequeue(c, now, q) {
                    None => {
                        self.dropping = false;
                        return None;
                    }
                    Some((next, ok)) => {
                        p = next;
                        if ok {
                            self.drop_next = control_law(self.drop_next, c.interval, self.count);
                        } else {
                            self.dropping = false;
                        }
                    }
                }
            }
            return Some((p, false));
        }
        if !ok_to_drop {
            return Some((p, false));
        }
        // The sojourn time has been above TARGET for INTERVAL: enter the dropping state.
        let mut sent = None;
        if c.ecn && p.ect() {
            p.mark_ce();
            tally.add(now, |k| k.law_marks += 1);
            sent = Some((p, true));
        } else {
            purged.push(p);
            tally.add(now, |k| k.law_drops += 1);
            if let Some((next, _)) = self.dodequeue(c, now, q) {
                sent = Some((next, false));
            }
        }
        self.dropping = true;
        tally.add(now, |k| k.drop_states += 1);
        // If the sojourn time went above TARGET soon after it last went below, the drop rate
        // that controlled the queue last time is a good start (Linux's rule, which the RFC
        // gives): `now − drop_next` approximates the time since the last drop.
        let delta = self.count.saturating_sub(self.last_count);
        let recent = now < self.drop_next || now - self.drop_next < Time(16 * c.interval.ps());
        self.count = if delta > 1 && recent { delta } else { 1 };
        self.drop_next = control_law(now, c.interval, self.count);
        self.last_count = self.count;
        sent
    }
}

/// A CoDel queue of packets `P`.
#[derive(Clone, Debug)]
pub struct Codel<P> {
    params: CodelParams,
    pub state: CodelState,
    queue: Stamped<P>,
    tally: Tally,
}

impl<P: Queued> Codel<P> {
    pub fn new(params: CodelParams) -> Codel<P> {
        Codel { params, state: CodelState::default(), queue: Stamped::new(), tally: Tally::default() }
    }
}

impl<P: Queued> Discipline<P> for Codel<P> {
    fn enqueue(&mut self, a: &Arrival, pkt: P, _purged: &mut Vec<P>) -> Verdict {
        if a.full {
            self.tally.add(a.now, |k| k.overflow_drops += 1);
            return Verdict::Drop;
        }
        // RFC 8289 §5.4: the arrival time is the packet's timestamp.
        self.queue.push(pkt, a.now);
        Verdict::Admit
    }

    fn dequeue(&mut self, now: Time, purged: &mut Vec<P>) -> Dequeue<P> {
        match self.state.dequeue(&self.params, now, &mut self.queue, purged, &mut self.tally) {
            Some((p, true)) => Dequeue::Marked(p),
            Some((p, false)) => Dequeue::Send(p),
            None => Dequeue::Idle,
        }
    }

    fn backlog(&self) -> (u64, u64) {
        (self.queue.len(), self.queue.bytes())
    }

    /// Arrival order: what a work-conserving FIFO would send if CoDel dropped nothing more.
    fn in_send_order(&self, visit: &mut dyn FnMut(&P)) -> bool {
        self.queue.visit(visit);
        true
    }

    fn aqm_counts(&self) -> Option<AqmCounts> {
        Some(self.tally.counts)
    }

    fn count_from(&mut self, t: Time) {
        self.tally.count_from(t);
    }
}

/// The description of CoDel for scenario files (`queue = "codel"`).
pub struct CodelKind;

/// Checks that `target` is below `interval` (RFC 8289 §4.3: TARGET is 5–10 % of INTERVAL);
/// the error names the key the user gave (the target if both or neither).
pub(crate) fn check_target(v: &Values, target: &'static str, interval: &'static str) -> Result<(), ParamError> {
    let (t, i) = (v.time(target), v.time(interval));
    if t < i {
        return Ok(());
    }
    let show = |t: Time| buflab_base::units::format_time(t);
    Err(if v.given(target) || !v.given(interval) {
        let expected = format!("a target below {interval} ({}); RFC 8289 §4.3 suggests 5–10 % of it", show(i));
        ParamError { key: target, got: Value::Time(t), expected }
    } else {
        let expected = format!("an interval above {target} ({}); RFC 8289 §4.3 suggests 10–20 times it", show(t));
        ParamError { key: interval, got: Value::Time(i), expected }
    })
}

impl Described for CodelKind {
    const NAME: &'static str = "codel";
    const LABEL: &'static str = "CoDel";
    const DOC: &'static str = "CoDel (RFC 8289): packets are dropped at dequeue once their sojourn time has stayed above `codel_target` for `codel_interval`, at a rate that grows as the square root of the drops (the control law); with `codel_ecn`, ECN-capable ones are marked instead.";
    const PARAMS: &'static [Param] = &[
        Param { key: "codel_target", kind: ParamKind::Time, ty: "time", default: "\"5ms\"", doc: "CoDel: TARGET, the acceptable standing queueing delay (RFC 8289 §4.3: 5 ms). Below `codel_interval`." },
        Param { key: "codel_interval", kind: ParamKind::Time, ty: "time", default: "\"100ms\"", doc: "CoDel: INTERVAL, how long the sojourn time must stay above the target before CoDel drops, and the scale of its control law: the n-th drop of a dropping state comes INTERVAL/√n after the one before (RFC 8289 §4.2: 100 ms, a worst-case round trip)." },
        Param { key: "codel_ecn", kind: ParamKind::Bool, ty: "boolean", default: "false", doc: "CoDel: mark ECN-capable packets (of flows with `ecn = true`) Congestion Experienced at dequeue instead of dropping them (Linux's `ecn`, off by default). Marks made at dequeue count as marks (`marks`; the event log's `mark` row follows the packet's `dequeue`)." },
    ];

    fn check(v: &Values, _limit: Limit) -> Result<(), ParamError> {
        check_target(v, "codel_target", "codel_interval")
    }
}

impl CodelParams {
    /// CoDel's settings from the `prefix`'s keys (`codel`, `fq_codel`), for a link whose
    /// largest packet is `largest` bytes (MAXPACKET).
    pub fn from_values(v: &Values, prefix: &str, largest: u32) -> CodelParams {
        CodelParams {
            target: v.time(&format!("{prefix}_target")),
            interval: v.time(&format!("{prefix}_interval")),
            ecn: v.boolean(&format!("{prefix}_ecn")),
            maxpacket: largest as u64,
        }
    }
}

impl BuildHeld for CodelKind {
    fn build<P: Flowing + 'static>(values: &Values, link: LinkInfo, _rng: Rng) -> Box<dyn Discipline<P>> {
        Box::new(Codel::<P>::new(CodelParams::from_values(values, "codel", link.largest)))
    }
}

#[cfg(test)]
mod tests {
    //! The control law and the state machine by hand: times are whole milliseconds and
    //! INTERVAL = 100 ms, so every drop time below is exact (⌊100 ms/√n⌋ in picoseconds).
    use super::*;
    use crate::fifo::tests::P;

    const MS: u64 = 1_000_000_000;

    fn params(ecn: bool) -> CodelParams {
        CodelParams { target: Time::from_ms(5), interval: Time::from_ms(100), ecn, maxpacket: 1500 }
    }

    fn pkt(id: u32) -> P {
        P { id, size: 1000, ce: false }
    }

    #[test]
    fn the_control_law_is_interval_over_the_square_root_of_the_count() {
        let i = Time::from_ms(100);
        assert_eq!(control_law(Time(0), i, 1), Time::from_ms(100));
        assert_eq!(control_law(Time(0), i, 4), Time::from_ms(50));
        assert_eq!(control_law(Time(0), i, 100), Time::from_ms(10));
        // 100 ms/√2 = 70.710678118654752… ms: the floor in picoseconds.
        assert_eq!(control_law(Time(0), i, 2), Time(70_710_678_118));
        // 100 ms/√3 = 57.735026918962576… ms.
        assert_eq!(control_law(Time::from_ms(1), i, 3), Time(MS + 57_735_026_918));
    }

    /// A queue of 50 packets that arrived at time 0, dequeued one per millisecond from 10 ms:
    /// every sojourn time is above TARGET, so the first dequeue starts the INTERVAL clock
    /// (first_above_time = 110 ms), the dequeue at 110 ms enters the dropping state (drops
    /// its head, sends the next, count 1, drop_next = 210 ms), and from there the n-th drop
    /// is due 100 ms/√n after the one before: 210, 280.71…, 338.44…, 388.44… ms. Each drop
    /// happens at the first dequeue at or after its time (dequeues are a millisecond apart).
    #[test]
    fn the_drop_times_follow_the_control_law_exactly() {
        let c = params(false);
        let mut s = CodelState::default();
        let mut q = Stamped::new();
        for id in 0..400 {
            q.push(pkt(id), Time(0));
        }
        let mut tally = Tally::default();
        let mut drops = Vec::new();
        let mut drop_next = Vec::new();
        for ms in 10..=400u64 {
            let mut purged = Vec::new();
            let sent = s.dequeue(&c, Time(ms * MS), &mut q, &mut purged, &mut tally);
            assert!(sent.is_some());
            if !purged.is_empty() {
                drops.push(ms);
                drop_next.push(s.drop_next);
                assert_eq!(purged.len(), 1, "one drop per dequeue at this rate");
            }
            if ms == 10 {
                assert_eq!(s.first_above, Some(Time::from_ms(110)));
            }
        }
        assert_eq!(drops, vec![110, 210, 281, 339, 389]);
        let law = |prev: u64, n: u32| control_law(Time(prev), Time::from_ms(100), n).ps();
        let t1 = 110 * MS + 100 * MS; // entering: now + INTERVAL/√1
        let t2 = law(t1, 2);
        let t3 = law(t2, 3);
        let t4 = law(t3, 4);
        let t5 = law(t4, 5);
        assert_eq!(drop_next.iter().map(|t| t.ps()).collect::<Vec<_>>(), vec![t1, t2, t3, t4, t5]);
        assert_eq!(t2, 280_710_678_118);
        assert_eq!(t3, 338_445_705_036);
        assert_eq!(s.count, 5);
        assert_eq!(tally.counts.law_drops, 5);
        assert_eq!(tally.counts.drop_states, 1);
    }

    /// The sojourn time falling below TARGET ends the dropping state; re-entering soon after
    /// starts from count − lastcount (RFC 8289 §5.5), not from 1.
    #[test]
    fn leaving_and_reentering_resumes_the_last_drop_rate() {
        let c = params(false);
        let mut s = CodelState { dropping: true, count: 6, last_count: 1, drop_next: Time::from_ms(500), ..Default::default() };
        let mut q = Stamped::new();
        q.push(pkt(0), Time::from_ms(499)); // 1 ms sojourn: below TARGET
        for id in 1..5 {
            q.push(pkt(id), Time::from_ms(400));
        }
        let mut tally = Tally::default();
        let sent = s.dequeue(&c, Time::from_ms(500), &mut q, &mut Vec::new(), &mut tally);
        assert_eq!(sent.map(|x| x.0.id), Some(0));
        assert!(!s.dropping && s.first_above.is_none());
        // Above TARGET again, for an INTERVAL: enter with count = 6 − 1 = 5, since the last
        // drop time (500 ms) is within 16 INTERVALs.
        s.first_above = Some(Time::from_ms(600));
        let mut purged = Vec::new();
        let sent = s.dequeue(&c, Time::from_ms(600), &mut q, &mut purged, &mut tally);
        assert_eq!((sent.map(|x| x.0.id), purged.len()), (Some(2), 1));
        assert_eq!((s.dropping, s.count, s.last_count), (true, 5, 5));
        assert_eq!(s.drop_next, control_law(Time::from_ms(600), c.interval, 5));
    }

    /// MAXPACKET: a queue left with at most one largest packet is never dropped from, however
    /// long its packets waited (RFC 8289 §5.5's second term).
    #[test]
    fn the_last_packets_worth_is_never_dropped() {
        let c = params(false);
        let mut s = CodelState::default();
        let mut q = Stamped::new();
        let mut tally = Tally::default();
        for ms in 0..1000u64 {
            q.push(pkt(ms as u32), Time(0));
            q.push(pkt(ms as u32), Time(0));
            let mut purged = Vec::new();
            s.dequeue(&c, Time((ms + 1) * 10 * MS), &mut q, &mut purged, &mut tally);
            assert!(purged.is_empty(), "1000 B left after each dequeue: at most MAXPACKET");
            assert_eq!(q.len(), 1);
            q.pop();
        }
    }

    /// With ECN an ECN-capable head is marked and sent where it would be dropped, and the
    /// schedule of the next "drop" is the same.
    #[test]
    fn ecn_marks_where_it_would_drop_and_sends_the_packet() {
        let mut q: Codel<P> = Codel::new(params(true));
        for id in 0..100 {
            let (w, b) = q.backlog();
            let a = Arrival::new(Time(0), w, b, Time(1), Limit::Packets(1000), 1000, true);
            assert_eq!(q.enqueue(&a, pkt(id), &mut Vec::new()), Verdict::Admit);
        }
        let mut purged = Vec::new();
        assert!(matches!(q.dequeue(Time::from_ms(10), &mut purged), Dequeue::Send(p) if p.id == 0));
        match q.dequeue(Time::from_ms(110), &mut purged) {
            Dequeue::Marked(p) => assert!(p.id == 1 && p.ce),
            other => panic!("expected a marked packet, got {other:?}"),
        }
        assert!(purged.is_empty(), "ECN-capable packets are never dropped by the law");
        assert_eq!(q.state.drop_next, Time::from_ms(210));
        assert!(matches!(q.dequeue(Time::from_ms(210), &mut purged), Dequeue::Marked(p) if p.id == 2));
        assert_eq!(q.aqm_counts().map(|k| (k.law_marks, k.law_drops)), Some((2, 0)));
    }

    #[test]
    fn a_full_buffer_drops_the_arrival_as_an_overflow() {
        let mut q: Codel<P> = Codel::new(params(false));
        let a = Arrival::new(Time(0), 3, 3000, Time(5), Limit::Packets(3), 1000, false);
        assert_eq!(q.enqueue(&a, pkt(0), &mut Vec::new()), Verdict::Drop);
        assert_eq!(q.aqm_counts().unwrap().overflow_drops, 1);
    }

    #[test]
    fn a_target_not_below_the_interval_is_refused_naming_the_key_given() {
        let kind = crate::kinds::<P>().into_iter().find(|k| k.name == "codel").unwrap();
        let err = kind.values_from_text(&[("codel_target".into(), "100ms".into())], Limit::Packets(100));
        assert_eq!(
            err.unwrap_err(),
            "codel_target: got 100ms; expected a target below codel_interval (100ms); RFC 8289 §4.3 suggests 5–10 % of it"
        );
        let err = kind.values_from_text(&[("codel_interval".into(), "2ms".into())], Limit::Packets(100));
        assert_eq!(
            err.unwrap_err(),
            "codel_interval: got 2ms; expected an interval above codel_target (5ms); RFC 8289 §4.3 suggests 10–20 times it"
        );
        let v = kind.values_from_text(&[], Limit::Packets(100)).unwrap();
        assert_eq!((v.time("codel_target"), v.time("codel_interval")), (Time::from_ms(5), Time::from_ms(100)));
    }
}
