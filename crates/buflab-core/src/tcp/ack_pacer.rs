//! Receiver-side ACK pacing: when the next ACK may leave the receiver.
//!
//! Read first: the pacing seed (Mininet reproduction of Aggarwal et al.), which paced "both
//! sender and receiver sides", and [`super::pacer`], the sender's pacer. A sender that is
//! clocked by ACKs sends one or two segments per ACK, so ACKs that leave in bursts make data
//! bursts; spreading the ACKs evenly over the round trip spreads the data they release.
//!
//! The receiver sees neither the congestion window nor a smoothed RTT, so the rule is built
//! from what it does see:
//! - **Its RTT** is the path's two-way propagation delay, the floor a timestamp-based receiver
//!   estimate (Linux `tcp_rcv_rtt_measure_ts`) approaches with empty queues. ACKs carry no
//!   timestamps in this model; this is the deliberate simplification of this file.
//! - **Rounds** of one RTT count the ACKs the receiver generated. At the end of each round the
//!   gap between ACKs becomes (round length) ÷ (ratio × ACKs of that round): the next round's
//!   ACKs leave evenly spread, a little faster than the last round's came.
//! - **The ratio** mirrors Linux's sender pacing (`tcp_update_pacing_rate`): 2 while the ACK
//!   count grows by half or more per round (slow start doubles it; the receiver cannot see
//!   ssthresh), else 1.2, so that pacing never holds the window back from growing.
//! - Pacing starts after the first full round, and stops again after an idle stretch of two
//!   rounds without an ACK (a rate measured across the gap would throttle the next burst).
//! - ACKs keep their order (a FIFO): duplicate ACKs stay duplicates, in sequence, and SACK
//!   options stay matched to their ACKs.

use std::collections::VecDeque;

use crate::packet::Packet;
use crate::units::Time;

/// ACKs per round must grow by at least this factor to count as slow-start growth.
const GROWTH: f64 = 1.5;
/// Linux's `sysctl_tcp_pacing_ss_ratio` and `sysctl_tcp_pacing_ca_ratio`, as factors.
const SLOW_START_RATIO: f64 = 2.0;
const STEADY_RATIO: f64 = 1.2;

#[derive(Clone, Debug)]
pub struct AckPacer {
    /// The receiver's RTT: the path's two-way propagation delay.
    rtt: Time,
    /// Start of the current round (None: no ACK yet, or idle since the last round).
    round_start: Option<Time>,
    /// ACKs generated in the current round and in the round before it.
    round_acks: u32,
    last_round_acks: u32,
    /// Time between ACK departures (zero: not pacing yet).
    pub gap: Time,
    /// When the next ACK may leave.
    next_free: Time,
    /// ACKs generated but held back, oldest first.
    waiting: VecDeque<Packet>,
}

impl AckPacer {
    pub fn new(rtt: Time) -> AckPacer {
        AckPacer {
            rtt,
            round_start: None,
            round_acks: 0,
            last_round_acks: 0,
            gap: Time::ZERO,
            next_free: Time::ZERO,
            waiting: VecDeque::new(),
        }
    }

    /// The receiver generated `ack` at `now`: returns it if it may leave at once, else holds it
    /// until [`AckPacer::take_due`] lets it go.
    pub fn offer(&mut self, now: Time, ack: Packet) -> Option<Packet> {
        self.count(now);
        if self.waiting.is_empty() && self.next_free <= now {
            self.next_free = now + self.gap;
            return Some(ack);
        }
        self.waiting.push_back(ack);
        None
    }

    /// When the oldest held ACK may leave, if one is held.
    pub fn deadline(&self) -> Option<Time> {
        (!self.waiting.is_empty()).then_some(self.next_free)
    }

    /// The oldest held ACK, if it may leave at `now`, stamped with `now`.
    pub fn take_due(&mut self, now: Time) -> Option<Packet> {
        if self.next_free > now {
            return None;
        }
        let mut ack = self.waiting.pop_front()?;
        ack.sent_at = now;
        self.next_free = now + self.gap;
        Some(ack)
    }

    /// Counts one ACK generated at `now`, closing the round (and setting the gap) when it is
    /// one RTT old.
    fn count(&mut self, now: Time) {
        let Some(start) = self.round_start.filter(|_| self.rtt > Time::ZERO) else {
            self.round_start = Some(now);
            self.round_acks = 1;
            return;
        };
        let elapsed = now - start;
        if elapsed < self.rtt {
            self.round_acks += 1;
            return;
        }
        if elapsed >= self.rtt + self.rtt {
            // Idle for a round or more: the last rate says nothing about the next burst.
            (self.gap, self.last_round_acks) = (Time::ZERO, 0);
        } else {
            let growing = self.round_acks as f64 >= GROWTH * self.last_round_acks as f64;
            let ratio = if growing { SLOW_START_RATIO } else { STEADY_RATIO };
            // f64 divide and round: IEEE-exact, identical on every platform.
            self.gap = Time((elapsed.0 as f64 / (ratio * self.round_acks as f64)).round() as u64);
            self.last_round_acks = self.round_acks;
        }
        (self.round_start, self.round_acks) = (Some(now), 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Kind;

    fn ack(seq: u32) -> Packet {
        Packet::for_test(Kind::Ack, 0, seq, 40)
    }

    fn ms(x: u64) -> Time {
        Time::from_ms(x)
    }

    #[test]
    fn the_first_round_goes_unpaced() {
        let mut p = AckPacer::new(ms(100));
        for i in 0..10 {
            assert_eq!(p.offer(ms(1) + Time(i), ack(i as u32)), Some(ack(i as u32)));
        }
        assert_eq!(p.deadline(), None);
    }

    #[test]
    fn a_steady_round_sets_the_gap_to_its_length_over_1_2_times_its_acks() {
        // Rounds of 10 ACKs from 0, 100 and 200 ms. Round 1 closes at 100 ms as growth (from
        // nothing: ratio 2); round 2 closes at 200 ms with 10 ACKs after 10 — no growth, so
        // the ratio is 1.2 and the gap (200 − 100) ms ÷ (1.2 × 10) = 8.333… ms.
        let mut p = AckPacer::new(ms(100));
        for round in 0..3u64 {
            for i in 0..10 {
                p.offer(ms(100 * round + i), ack(i as u32));
            }
        }
        // Round 2 closed at 200 ms after 10 ACKs; round 1 had 10 (no growth): 1.2.
        assert_eq!(p.gap, Time((100e9_f64 / 12.0).round() as u64));
    }

    #[test]
    fn a_growing_round_uses_the_slow_start_ratio_of_2() {
        let mut p = AckPacer::new(ms(100));
        for i in 0..4u32 {
            p.offer(ms(i as u64), ack(i));
        }
        // The first ACK at 100 ms closes round 1 (4 ACKs, none before): growth, ratio 2.
        p.offer(ms(100), ack(4));
        assert_eq!(p.gap, Time((100e9_f64 / 8.0).round() as u64));
    }

    #[test]
    fn a_burst_leaves_evenly_spaced_in_order() {
        let mut p = AckPacer::new(ms(100));
        p.gap = ms(5);
        p.round_start = Some(ms(0));
        let first = p.offer(ms(10), ack(0));
        assert!(first.is_some(), "nothing waiting: the first ACK of a burst goes at once");
        for i in 1..4 {
            assert_eq!(p.offer(ms(10), ack(i)), None);
        }
        let mut left = vec![];
        while let Some(d) = p.deadline() {
            assert_eq!(p.take_due(d - Time(1)), None, "not before its time");
            let a = p.take_due(d).unwrap();
            left.push((a.seq, a.sent_at));
        }
        assert_eq!(left, vec![(1, ms(15)), (2, ms(20)), (3, ms(25))]);
    }

    #[test]
    fn an_idle_stretch_stops_pacing_until_a_new_round() {
        let mut p = AckPacer::new(ms(100));
        for round in 0..3u64 {
            for i in 0..10 {
                p.offer(ms(100 * round + i), ack(i as u32));
            }
        }
        assert!(p.gap > Time::ZERO);
        p.offer(ms(1000), ack(99));
        assert_eq!(p.gap, Time::ZERO);
    }
}
