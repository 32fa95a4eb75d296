//! The Bounded Jitter Policy (BJP): every router delays each packet by D, give or take a
//! jitter of at most Δ, so that the gaps between a flow's packets stay as they were where it
//! entered the network (thesis §5.3, Fig 5.3, Appendix C).
//!
//! Read first: the crate doc (the contract; this is a discipline of the second form, since it
//! picks each departure's time). Rules, as §5.3.1 states them:
//!
//! - A packet carries a time stamp t. Its first BJP router sets it to its arrival time; each
//!   router then tries to send it at t + D, "regardless of the actual departure time", and
//!   the next router sees t + D (plus, here, the packet's transmission and the link's
//!   propagation delay, both fixed for equal packets: the time it would arrive had it left at
//!   t + D; the thesis takes them as negligible).
//! - The router sends the packet in the latest free departure slot in [t + D − Δ, t + D],
//!   the left end excluded so that a jitter bound of Δ packet times leaves Δ slots, Appendix
//!   C's slots s − Δ + 1 … s; free means no other packet, booked or being sent, has it. If
//!   there is none, it drops the packet.
//! - Slots are Appendix C's: the link's time cut into transmission times of its typical
//!   packet (`slot`), from time 0 of its own clock, a departure starting at a slot's start.
//!   Arrivals and time stamps fall anywhere; a packet takes as many whole slots as its
//!   transmission needs (one for a typical packet, one for an ACK). Continuous departure
//!   times would waste the link: bookings placed as late as possible leave gaps shorter than
//!   a packet between them, and at a load of 0.9 a network of such routers lost a tenth of its
//!   packets where slotted ones lose a few in a thousand.
//!
//! **Local synchronization** (§5.3.2): a packet need not carry a global time, only its slack,
//! the time it is ahead of its ideal schedule. A router that receives it at a with slack δ
//! aims at a + δ + D, and writes the difference between that ideal departure and the actual
//! one into the packet as it leaves. Arriving at the next router at a' = d + transmission +
//! propagation with slack t + D − d, the packet is aimed at t + D + transmission +
//! propagation + D there: what the time-stamp form aims at. Both forms are here (`global`
//! picks the time stamp) and schedule every packet alike when BJP routers follow one
//! another (a test runs both); the slack form is the one a router can run without a network
//! clock. A packet that crosses a FIFO router between two BJP routers keeps its slack, so
//! the slack form absorbs that router's delay where the time-stamp form would find the
//! packet late.
//!
//! **The buffer** bounds what BJP holds: an arrival that finds B packets booked is dropped
//! (the packet being sent does not count, as everywhere). Under BJP a packet never finds more
//! than D + Δ packet times of work ahead of it (Appendix C), so B ≥ D + Δ never drops for
//! want of room, and the thesis takes D = Δ, B = 2Δ.

use std::collections::VecDeque;

use buflab_base::rng::Rng;
use buflab_base::units::Rate;

use crate::describe::{BuildHeld, Described, LinkInfo, Param, ParamError, ParamKind, Value, Values};
use crate::{Arrival, Dequeue, Discipline, Limit, Queued, Time, Verdict};

/// What a packet's stamp is (see the module doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stamp {
    /// A global time: the time the packet would reach this router had every router before
    /// it delayed it by exactly D (§5.3.1).
    Global,
    /// Its slack: how far ahead of that schedule it is (§5.3.2).
    Slack,
}

/// A packet BJP holds, with its departure time and the ideal one.
#[derive(Clone, Copy, Debug)]
struct Booking<P> {
    /// When its transmission starts, and the end of the slots it takes.
    start: Time,
    end: Time,
    /// t + D: when it should leave.
    ideal: Time,
    pkt: P,
}

/// The Bounded Jitter Policy for packets `P` (see the module doc).
#[derive(Clone, Debug)]
pub struct Bjp<P> {
    /// D and Δ, picoseconds.
    delay: Time,
    jitter: Time,
    /// A slot's length: the transmission time of a typical packet (zero: no grid).
    slot: Time,
    /// The link's rate (a packet's transmission time) and its propagation delay (what the
    /// time-stamp form adds as a packet leaves).
    rate: Rate,
    propagation: Time,
    stamp: Stamp,
    /// The packets held, in departure order, never overlapping.
    booked: VecDeque<Booking<P>>,
    bytes: u64,
}

impl<P: Queued> Bjp<P> {
    /// BJP with delay D = `delay` and jitter bound Δ = `jitter` (Δ ≤ D) on a link of `rate`
    /// and propagation delay `propagation`, departures on a grid of `slot`s, its packets
    /// carrying `stamp`.
    pub fn new(delay: Time, jitter: Time, slot: Time, rate: Rate, propagation: Time, stamp: Stamp) -> Bjp<P> {
        assert!(jitter <= delay, "BJP needs Δ ≤ D");
        Bjp { delay, jitter, slot, rate, propagation, stamp, booked: VecDeque::new(), bytes: 0 }
    }

    /// The start of the slot `t` falls in (`t` itself without a grid).
    fn slot_start(&self, t: Time) -> Time {
        match self.slot.0 {
            0 => t,
            s => Time(t.0 / s * s),
        }
    }

    /// The slots a transmission of length `len` takes, as a length.
    fn slots_of(&self, len: Time) -> Time {
        match self.slot.0 {
            0 => len,
            s => Time(len.0.div_ceil(s) * s),
        }
    }

    /// The ideal departure of a packet arriving at `now` carrying `stamp`: t + D, t its
    /// time stamp (the arrival time at its first router, stamp 0) or its arrival plus slack.
    pub fn ideal(&self, now: Time, stamp: Time) -> Time {
        let t = match self.stamp {
            Stamp::Global if stamp == Time::ZERO => now,
            Stamp::Global => stamp,
            Stamp::Slack => now + stamp,
        };
        t + self.delay
    }

    /// The start d of the latest free run of slots of total length `len` that starts no later
    /// than `target`, after `target − Δ`, and no earlier than `earliest` (now, and the end of
    /// the transmission in progress); None if there is none.
    fn latest_free(&self, target: Time, len: Time, earliest: Time) -> Option<Time> {
        // After target − Δ: Δ packet times hold Δ slots (the module doc).
        let allowed = |d: Time| d >= earliest && d + self.jitter > target;
        let mut d = self.slot_start(target);
        // Bookings never overlap and are in order, so scanning back from the last, each one
        // either lies wholly after [d, d + len), or wholly before it (and so do all earlier
        // ones: done), or overlaps it, and then d moves to the latest slot before it.
        for b in self.booked.iter().rev() {
            if b.start >= d + len {
                continue;
            }
            if b.end <= d {
                break;
            }
            d = self.slot_start(Time(b.start.0.checked_sub(len.0)?));
            if !allowed(d) {
                return None;
            }
        }
        allowed(d).then_some(d)
    }

    /// The times of the packets it holds, in departure order: (start, ideal departure).
    pub fn schedule(&self) -> Vec<(Time, Time)> {
        self.booked.iter().map(|b| (b.start, b.ideal)).collect()
    }
}

impl<P: Queued> Discipline<P> for Bjp<P> {
    fn enqueue(&mut self, a: &Arrival, pkt: P, _purged: &mut Vec<P>) -> Verdict {
        // The buffer bounds what BJP holds (the module doc), the serializer busy or not: an
        // arrival is never sent at once, it waits for its departure time.
        if a.full || !crate::fits(a.limit, self.booked.len() as u64, self.bytes, pkt.size()) {
            return Verdict::Drop;
        }
        let ideal = self.ideal(a.now, pkt.stamp());
        let len = self.slots_of(self.rate.serialization(pkt.size() as u64));
        let Some(start) = self.latest_free(ideal, len, a.now.max(a.busy_until)) else {
            return Verdict::Drop;
        };
        let at = self.booked.partition_point(|b| b.start < start);
        self.booked.insert(at, Booking { start, end: start + len, ideal, pkt });
        self.bytes += pkt.size() as u64;
        Verdict::Admit
    }

    fn dequeue(&mut self, now: Time, _purged: &mut Vec<P>) -> Dequeue<P> {
        match self.booked.front() {
            None => Dequeue::Idle,
            Some(b) if b.start > now => Dequeue::Wait(b.start),
            Some(_) => {
                let b = self.booked.pop_front().expect("a booking");
                self.bytes -= b.pkt.size() as u64;
                let mut pkt = b.pkt;
                // What the packet carries on: the next router's view of its schedule.
                let transmission = self.rate.serialization(pkt.size() as u64);
                pkt.set_stamp(match self.stamp {
                    Stamp::Global => b.ideal + transmission + self.propagation,
                    Stamp::Slack => b.ideal.saturating_sub(now),
                });
                Dequeue::Send(pkt)
            }
        }
    }

    fn backlog(&self) -> (u64, u64) {
        (self.booked.len() as u64, self.bytes)
    }

    fn not_before(&self) -> Time {
        self.booked.front().map_or(Time::ZERO, |b| b.start)
    }

    fn in_send_order(&self, visit: &mut dyn FnMut(&P)) -> bool {
        self.booked.iter().for_each(|b| visit(&b.pkt));
        true
    }
}

/// The description of BJP for scenario files (`queue = "bjp"`).
pub struct BjpKind;

impl BjpKind {
    /// A parameter's value in packet times: a whole number (Appendix C counts Δ in slots).
    fn slots(values: &Values, key: &'static str) -> Result<u64, ParamError> {
        let x = values.number(key);
        if x.fract() != 0.0 || !(0.0..=1e9).contains(&x) {
            let expected = "a whole number of packet times, at most 1,000,000,000".to_string();
            return Err(ParamError { key, got: Value::Number(x), expected });
        }
        Ok(x as u64)
    }
}

impl Described for BjpKind {
    const NAME: &'static str = "bjp";
    const LABEL: &'static str = "BJP";
    const DOC: &'static str = "the Bounded Jitter Policy (thesis §5.3): each packet is sent as close as possible to D after its time stamp, never more than Δ before it, or dropped, so that its flow's gaps stay as they were at the network's ingress; `buffer` bounds the packets held.";
    const PARAMS: &'static [Param] = &[
        Param {
            key: "bjp_delay",
            kind: ParamKind::Packets,
            ty: "integer (packet times)",
            default: "0",
            doc: "BJP's delay D, in transmission times of the traffic's largest data packet at this link's rate: every router aims to send a packet D after its time stamp (§5.3.1). A whole number, at least `bjp_jitter`; 0 (the default): D = Δ, as Thm 5.2 takes it.",
        },
        Param {
            key: "bjp_jitter",
            kind: ParamKind::Packets,
            ty: "integer (packet times)",
            default: "0",
            doc: "BJP's jitter bound Δ, in the same packet times, at most `bjp_delay`: a packet that finds no free departure slot in (t + D − Δ, t + D] is dropped. 0 (the default): half the buffer in packets, rounded down (at least a 2-packet buffer), Thm 5.2's B = 2Δ = D + Δ, which BJP never overflows (Appendix C).",
        },
        Param {
            key: "bjp_global",
            kind: ParamKind::Bool,
            ty: "boolean",
            default: "false",
            doc: "Which stamp packets carry: false, their slack only (local synchronization, §5.3.2: each router needs only its own clock); true, a global time stamp (§5.3.1). Both schedule every packet alike where BJP routers follow one another.",
        },
    ];

    fn check(values: &Values, limit: Limit) -> Result<(), ParamError> {
        Self::resolve(values, limit).map(|_| ())
    }
}

impl BjpKind {
    /// D and Δ in packet times, the defaults resolved against the buffer `limit`.
    fn resolve(values: &Values, limit: Limit) -> Result<(u64, u64), ParamError> {
        let (delay, jitter) = (Self::slots(values, "bjp_delay")?, Self::slots(values, "bjp_jitter")?);
        let jitter = match (jitter, limit) {
            (0, Limit::Packets(b)) if b >= 2 => b / 2,
            (0, _) => {
                let expected = format!(
                    "a jitter bound of at least 1 packet time: by default half the buffer, but {} leaves none",
                    match limit {
                        Limit::Packets(1) => "a buffer of 1 packet".to_string(),
                        Limit::Packets(b) => format!("a buffer of {b} packets"),
                        Limit::Bytes(_) => "a buffer in bytes".to_string(),
                        Limit::Unlimited => "an unlimited buffer".to_string(),
                    }
                );
                return Err(ParamError { key: "bjp_jitter", got: Value::Number(0.0), expected });
            }
            (j, _) => j,
        };
        let delay = if delay == 0 { jitter } else { delay };
        if jitter > delay {
            let expected = format!("at most bjp_delay ({delay}): BJP's jitter bound Δ ≤ D (thesis §5.3.1)");
            return Err(ParamError { key: "bjp_jitter", got: Value::Number(jitter as f64), expected });
        }
        Ok((delay, jitter))
    }
}

impl BuildHeld for BjpKind {
    fn build<P: Queued + 'static>(values: &Values, link: LinkInfo, _rng: Rng) -> Box<dyn Discipline<P>> {
        let slot = link.rate.serialization(link.packet as u64);
        let (delay, jitter) = Self::resolve(values, link.limit).expect("checked when read");
        let stamp = if values.boolean("bjp_global") { Stamp::Global } else { Stamp::Slack };
        Box::new(Bjp::<P>::new(Time(slot.0 * delay), Time(slot.0 * jitter), slot, link.rate, link.delay, stamp))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Limit;

    /// A packet as the tests see it: its number, its size and the stamp it carries.
    #[derive(Clone, Copy, Debug, PartialEq)]
    struct P {
        id: u32,
        size: u32,
        stamp: Time,
    }

    impl Queued for P {
        fn size(&self) -> u32 {
            self.size
        }
        fn ect(&self) -> bool {
            false
        }
        fn mark_ce(&mut self) {}
        fn stamp(&self) -> Time {
            self.stamp
        }
        fn set_stamp(&mut self, stamp: Time) {
            self.stamp = stamp;
        }
    }

    impl crate::Flowing for P {
        fn flow(&self) -> u32 {
            self.id
        }
        fn is_control(&self) -> bool {
            false
        }
    }

    const US: u64 = 1_000_000;
    /// 8 Gb/s: a 1000-B packet takes exactly 1 µs, so packet times are microseconds.
    const RATE: Rate = Rate(8_000_000_000);

    fn us(x: u64) -> Time {
        Time(x * US)
    }

    fn pkt(id: u32, stamp: Time) -> P {
        P { id, size: 1000, stamp }
    }

    /// D = 10 µs, Δ = 3 µs on a link with 5 µs of propagation delay.
    fn bjp(stamp: Stamp) -> Bjp<P> {
        Bjp::new(us(10), us(3), us(1), RATE, us(5), stamp)
    }

    /// Offers `p` at `now` with the serializer busy until `busy`, under `limit`.
    fn offer(q: &mut Bjp<P>, now: Time, busy: Time, limit: Limit, p: P) -> Verdict {
        let (w, b) = q.backlog();
        q.enqueue(&Arrival::new(now, w, b, busy, limit, p.size, false), p, &mut Vec::new())
    }

    const ROOM: Limit = Limit::Packets(100);

    #[test]
    fn a_lone_packet_leaves_exactly_d_after_it_arrives_and_carries_no_slack_on() {
        let mut q = bjp(Stamp::Slack);
        assert_eq!(offer(&mut q, us(0), us(0), ROOM, pkt(1, Time::ZERO)), Verdict::Admit);
        assert_eq!(q.schedule(), vec![(us(10), us(10))]);
        assert_eq!(q.dequeue(us(3), &mut Vec::new()), Dequeue::Wait(us(10)));
        assert_eq!(q.not_before(), us(10));
        assert_eq!(q.dequeue(us(10), &mut Vec::new()), Dequeue::Send(pkt(1, Time::ZERO)));
        // The time-stamp form hands on t + D plus its transmission and the propagation delay:
        // the time it would reach the next router had it left at t + D.
        let mut q = bjp(Stamp::Global);
        offer(&mut q, us(0), us(0), ROOM, pkt(1, Time::ZERO));
        assert_eq!(q.dequeue(us(10), &mut Vec::new()), Dequeue::Send(pkt(1, us(16))));
    }

    #[test]
    fn packets_aiming_at_one_time_take_the_latest_free_slots_and_the_one_beyond_delta_is_dropped() {
        // Four packets at 0, all aimed at 10 µs: 10, 9 and 8 µs are the Δ = 3 slots of
        // (7, 10]; the fourth finds none and is dropped.
        let mut q = bjp(Stamp::Slack);
        let verdicts: Vec<Verdict> = (0..4).map(|i| offer(&mut q, us(0), us(0), ROOM, pkt(i, Time::ZERO))).collect();
        assert_eq!(verdicts, [Verdict::Admit, Verdict::Admit, Verdict::Admit, Verdict::Drop]);
        assert_eq!(q.schedule(), vec![(us(8), us(10)), (us(9), us(10)), (us(10), us(10))]);
        // They leave in time order, the earliest with 2 µs of slack to spend downstream.
        let sent: Vec<P> = [8, 9, 10]
            .iter()
            .map(|&t| match q.dequeue(us(t), &mut Vec::new()) {
                Dequeue::Send(p) => p,
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(sent, [pkt(2, us(2)), pkt(1, us(1)), pkt(0, us(0))]);
    }

    #[test]
    fn a_packet_fills_the_latest_gap_before_its_time_and_slack_moves_its_aim() {
        let mut q = bjp(Stamp::Slack);
        offer(&mut q, us(0), us(0), ROOM, pkt(1, Time::ZERO)); // aimed at 10
        offer(&mut q, us(1), us(0), ROOM, pkt(2, us(1))); // 1 µs ahead: aimed at 12
        // Aimed at 11: [11, 12) is free between the two.
        offer(&mut q, us(1), us(0), ROOM, pkt(3, Time::ZERO));
        assert_eq!(q.schedule(), vec![(us(10), us(10)), (us(11), us(11)), (us(12), us(12))]);
        // Aimed at 12 with [10, 13) taken, the latest free start is 9 µs, not after 12 − Δ:
        // dropped. Aimed at 13, it gets 13.
        assert_eq!(offer(&mut q, us(2), us(0), ROOM, pkt(4, Time::ZERO)), Verdict::Drop);
        assert_eq!(offer(&mut q, us(2), us(0), ROOM, pkt(5, us(1))), Verdict::Admit);
        assert_eq!(q.schedule().last(), Some(&(us(13), us(13))));
        // Departures are on the slot grid: aimed at 10.5 µs, a packet takes the slot it falls
        // in (10) or, that taken, the one before; a half-size packet still takes a whole slot.
        let mut q = bjp(Stamp::Slack);
        offer(&mut q, us(0), us(0), ROOM, pkt(1, Time::ZERO));
        offer(&mut q, us(0), us(0), ROOM, P { id: 2, size: 500, stamp: Time(US / 2) });
        offer(&mut q, us(0), us(0), ROOM, P { id: 3, size: 500, stamp: Time(US / 2) });
        let half = Time(10 * US + US / 2);
        assert_eq!(q.schedule(), vec![(us(8), half), (us(9), half), (us(10), us(10))]);
    }

    #[test]
    fn no_departure_overlaps_the_transmission_in_progress_or_comes_before_now() {
        // The serializer is busy until 9.5 µs: aimed at 10, a packet still gets 10; a second
        // would need 9, inside the transmission in progress, and is dropped.
        let mut q = bjp(Stamp::Slack);
        assert_eq!(offer(&mut q, us(0), Time(9 * US + US / 2), ROOM, pkt(1, Time::ZERO)), Verdict::Admit);
        assert_eq!(offer(&mut q, us(0), Time(9 * US + US / 2), ROOM, pkt(2, Time::ZERO)), Verdict::Drop);
    }

    #[test]
    fn the_buffer_bounds_what_bjp_holds() {
        // B = 2: a third packet is dropped even though (7, 10] has a slot left.
        let mut q = bjp(Stamp::Slack);
        let limit = Limit::Packets(2);
        let verdicts: Vec<Verdict> = (0..3).map(|i| offer(&mut q, us(0), us(0), limit, pkt(i, Time::ZERO))).collect();
        assert_eq!(verdicts, [Verdict::Admit, Verdict::Admit, Verdict::Drop]);
        assert_eq!(q.backlog(), (2, 2000));
    }

    #[test]
    fn its_parameters_are_whole_packet_times_with_jitter_at_most_delay() {
        let kind = crate::kinds::<P>().into_iter().find(|k| k.name == "bjp").expect("listed");
        let values_for = |d: &str, j: &str, limit: Limit| {
            let given = [("bjp_delay".to_string(), d.to_string()), ("bjp_jitter".to_string(), j.to_string())];
            kind.values_from_text(&given, limit)
        };
        let values = |d: &str, j: &str| values_for(d, j, ROOM);
        assert!(values("10", "10").is_ok());
        assert_eq!(
            values("10", "12").unwrap_err(),
            "bjp_jitter: got 12; expected at most bjp_delay (10): BJP's jitter bound Δ ≤ D (thesis §5.3.1)"
        );
        // By default Δ is half the buffer and D = Δ; a buffer too small for one slot is refused.
        let twenty = Limit::Packets(20);
        assert_eq!(BjpKind::resolve(&values_for("0", "0", Limit::Packets(21)).unwrap(), Limit::Packets(21)), Ok((10, 10)));
        assert_eq!(BjpKind::resolve(&values_for("12", "0", twenty).unwrap(), twenty), Ok((12, 10)));
        assert_eq!(
            kind.values_from_text(&[], Limit::Packets(1)).unwrap_err(),
            "bjp_jitter: got 0; expected a jitter bound of at least 1 packet time: by default half the \
             buffer, but a buffer of 1 packet leaves none"
        );
        // D given below the default Δ (half of 100 packets) breaks Δ ≤ D.
        assert!(values("4", "0").unwrap_err().starts_with("bjp_jitter: got 50; expected at most bjp_delay (4)"));
        assert!(values("2.5", "1").unwrap_err().starts_with("bjp_delay: got 2.5; expected a whole number"));
        // Built for a link, D and Δ are packet times of its typical packet at its rate.
        let link = LinkInfo { rate: RATE, delay: us(5), limit: ROOM, packet: 1000, largest: 1000 };
        let mut q = kind.build_held(&values("4", "2").unwrap(), link, Rng::stream(1, buflab_base::rng::Stream::Queue, 0));
        q.enqueue(&Arrival::new(us(0), 0, 0, us(0), ROOM, 1000, false), pkt(1, Time::ZERO), &mut Vec::new());
        assert_eq!(q.dequeue(us(0), &mut Vec::new()), Dequeue::Wait(us(4)));
    }

    /// Runs `arrivals` (time order) through `q` behind a serializer at `RATE`, asking it at
    /// every time it names, a service due at t before an arrival at t (the contract); returns
    /// each packet sent with its departure time, and the most packets it held.
    fn drive(q: &mut Bjp<P>, limit: Limit, arrivals: &[(Time, P)]) -> (Vec<(Time, P)>, u64) {
        let (mut sent, mut busy, mut most) = (Vec::new(), Time::ZERO, 0);
        let serve = |q: &mut Bjp<P>, until: Time, sent: &mut Vec<(Time, P)>, busy: &mut Time| {
            while q.backlog().0 > 0 {
                let at = q.not_before().max(*busy);
                if at > until {
                    break;
                }
                match q.dequeue(at, &mut Vec::new()) {
                    Dequeue::Send(p) => {
                        sent.push((at, p));
                        *busy = at + RATE.serialization(p.size as u64);
                    }
                    other => panic!("asked at {at:?}, its own time: {other:?}"),
                }
            }
        };
        for &(t, p) in arrivals {
            serve(q, t, &mut sent, &mut busy);
            offer(q, t, busy, limit, p);
            most = most.max(q.backlog().0);
        }
        serve(q, Time::MAX, &mut sent, &mut busy);
        (sent, most)
    }

    #[test]
    fn the_slack_form_schedules_every_packet_as_the_time_stamp_form_does() {
        // Two BJP routers in series, 5 µs of propagation between them: arrivals in bursts,
        // so that packets are pushed ahead of their time and carry slack to the second.
        let arrivals: Vec<(Time, P)> = (0..60u32)
            .map(|i| (Time(u64::from(i / 4) * 3 * US + u64::from(i % 4) * 137), P { id: i, size: [1000, 500, 1500][i as usize % 3], stamp: Time::ZERO }))
            .collect();
        let chain = |stamp: Stamp| {
            let (first, _) = drive(&mut bjp(stamp), ROOM, &arrivals);
            let next: Vec<(Time, P)> = first
                .iter()
                .map(|&(d, p)| (d + RATE.serialization(p.size as u64) + us(5), p))
                .collect();
            let (second, _) = drive(&mut bjp(stamp), ROOM, &next);
            let times = |v: &[(Time, P)]| v.iter().map(|&(d, p)| (p.id, d)).collect::<Vec<_>>();
            (times(&first), times(&second))
        };
        let (slack, global) = (chain(Stamp::Slack), chain(Stamp::Global));
        assert!(slack.0.len() < arrivals.len() && slack.1.len() > 20, "the bursts must push packets ahead and drop some");
        assert_ne!(slack.0.iter().map(|x| x.0).collect::<Vec<_>>(), (0..60).collect::<Vec<_>>(), "BJP reorders");
        assert_eq!(slack, global);
    }

    use proptest::prelude::{prop, prop_assert, prop_assert_eq, proptest, ProptestConfig};

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

        /// Whatever arrives (bursts, mixed sizes, slack carried from upstream): every packet
        /// sent leaves after t + D − Δ and at or before t + D, never before it arrived, never
        /// during another's transmission; BJP never holds more than B; and each packet is
        /// sent once or dropped.
        #[test]
        fn bjp_keeps_every_departure_in_its_window_and_holds_at_most_b(
            steps in prop::collection::vec((0u64..3000, 0usize..4, 0u64..4000), 1..200),
            d in 1u64..12, j in 1u64..12, b in 1u64..30,
        ) {
            let (delay, jitter) = (us(d.max(j)), us(j));
            let sizes = [40, 576, 1000, 1500];
            let mut t = Time::ZERO;
            let arrivals: Vec<(Time, P)> = steps.iter().enumerate().map(|(i, &(gap, s, slack))| {
                t += Time(gap * 1000);
                // Slack from upstream is at most Δ.
                (t, P { id: i as u32, size: sizes[s], stamp: Time((slack * 1000).min(jitter.0)) })
            }).collect();
            let limit = Limit::Packets(b);
            let mut q = Bjp::new(delay, jitter, us(1), RATE, us(5), Stamp::Slack);
            let (sent, most) = drive(&mut q, limit, &arrivals);
            prop_assert!(most <= b, "held {} > B = {}", most, b);
            let mut ids: Vec<u32> = sent.iter().map(|(_, p)| p.id).collect();
            ids.sort_unstable();
            ids.dedup();
            prop_assert_eq!(ids.len(), sent.len(), "a packet sent twice");
            let mut end = Time::ZERO;
            for &(at, p) in &sent {
                let (arrived, a) = arrivals[p.id as usize];
                let ideal = arrived + a.stamp + delay;
                prop_assert!(at + jitter > ideal && at <= ideal, "{:?} left at {:?}, ideal {:?}", p.id, at, ideal);
                prop_assert!(at >= arrived);
                prop_assert_eq!(at.0 % US, 0, "departures start at slots");
                prop_assert!(at >= end, "{:?} overlaps the transmission before", p.id);
                end = at + RATE.serialization(p.size as u64);
                prop_assert_eq!(p.stamp, ideal - at, "the slack it carries on");
            }
        }
    }
}
