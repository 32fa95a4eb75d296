//! Linux's delayed and quick ACKs (`tcp_input.c`: `tcp_event_data_recv`, `tcp_incr_quickack`,
//! `__tcp_ack_snd_check`; `tcp_output.c`: `tcp_send_delayed_ack`, `tcp_event_ack_sent`;
//! `tcp_timer.c`: `tcp_delack_timer_handler`), for the receiver of a `tcp = "linux"` flow with
//! delayed ACKs on.
//!
//! Read first: RFC 1122 §4.2.3.2 and RFC 5681 §4.2 (what every delayed-ACK receiver does), then
//! [`super::receiver`], which owns the sequence state and asks this file when to acknowledge.
//! Owns the quick-ACK count and the adaptive delayed-ACK timeout (ATO); must not know segments.
//!
//! What Linux adds to RFC 1122's "at least every second full-sized segment, within 500 ms":
//! - **Quick-ACK mode.** The first data of a connection puts the receiver in quick-ACK mode for
//!   up to 16 ACKs (`TCP_MAX_QUICKACKS`; at most half the receive window in segments, at least
//!   2): every segment is acknowledged at once, so that the sender's slow start is not slowed
//!   by ACKs every other segment. Each ACK of new data uses one; leaving the mode resets the
//!   ATO to its floor. The mode is entered again for 16 ACKs when data arrives after a silence
//!   longer than the RTO, or data already received arrives again, and for 2 on the first
//!   Congestion Experienced mark (`tcp_ecn_check_ce`).
//! - **An adaptive timeout.** ATO starts at `TCP_ATO_MIN` (40 ms, the `delayed_ack_timeout`
//!   key) and follows the gaps m between data arrivals: m ≤ ATO_MIN/2 gives ATO/2 + ATO_MIN/2,
//!   m < ATO gives ATO/2 + m (at most the RTO); a delayed ACK that had to wait for its timer
//!   doubles ATO (at most the RTO). The timer waits min(ATO, max(SRTT, ATO_MIN)) when ATO is
//!   above its floor (bounded at 500 ms), in whole jiffies.
//!
//! - **Pushed segments.** A full-sized segment with PSH marks the pending ACK "pushed"
//!   (`tcp_measure_rcv_mss`, `ICSK_ACK_PUSHED`), and `tcp_cleanup_rbuf` sends it as soon as
//!   the application has read everything queued, however little it acknowledges (recent
//!   kernels; older ones set the mark only for segments shorter than the MSS). Linux senders
//!   put PSH on the last segment of every GSO packet of two or more, so a lone segment that
//!   ends such a packet is acknowledged at once rather than with the next segment or on the
//!   timer. The receiver here applies the rule as its sink reads at once
//!   ([`super::receiver`], `on_flags`). Measured on Linux 6.18 in the emulator (100 Reno
//!   flows, 10-packet buffer): 27 % of its ACKs of new data acknowledge one segment; half of
//!   those leave within 0.3 ms of the ACK before, and 94 % of these acknowledge a PSH
//!   segment; the other half waited for the timer (35–45 ms). Without the rule the model sent
//!   14 % one-segment ACKs (21 % with it) and was 2.9 and 2.4 points above Linux's
//!   utilization at 10 and 25 packets; with it (and the send jitter drawn per send event),
//!   1.2 and 1.3.
//!
//! Data out of order, and data that fills a gap, are acknowledged at once, as RFC 5681 §4.2
//! says and Linux does for the first three duplicate ACKs of a hole. Linux then compresses
//! further SACKs to one per millisecond (`tcp_comp_sack_delay_ns`); that is not modelled (with
//! many flows a receiver seldom gets two segments of one flow within a millisecond).
//!
//! A Linux receiver has an RTT estimate from its handshake; the model's receiver is given its
//! path's propagation RTT, and its RTO follows Linux's first-sample rule (SRTT + max(2·SRTT,
//! 200 ms)).

use super::rto::linux::{to_jiffies, LinuxRtt};
use crate::units::Time;

/// `TCP_MAX_QUICKACKS`.
pub const MAX_QUICKACKS: u32 = 16;
/// The most a delayed ACK waits when ATO is above its floor (`HZ / 2`).
pub const MAX_ATO: Time = Time::from_ms(500);
/// `tcp_rto_min`: the RTTVAR floor of the receiver's own RTO.
const RTO_MIN: Time = Time::from_ms(200);

/// The quick-ACK count and ATO of one receiver.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QuickAck {
    /// Quick ACKs left (`icsk_ack.quick`).
    quick: u32,
    /// At most this many at a time: half the receive window in segments, in 2..=16.
    max_quick: u32,
    /// The adaptive timeout (`icsk_ack.ato`); zero before the first data.
    ato: Time,
    /// Its floor, `TCP_ATO_MIN`.
    ato_min: Time,
    /// When data last arrived (`lrcvtime`).
    last_data: Time,
    srtt: Time,
    rto: Time,
}

impl QuickAck {
    /// A receiver with a window of `window` segments, an ATO floor `ato_min`, on a path of
    /// round-trip time `rtt`.
    pub fn new(window: u32, ato_min: Time, rtt: Time) -> QuickAck {
        let mut est = LinuxRtt::new(RTO_MIN);
        est.sample(rtt, 0, 0);
        QuickAck {
            quick: 0,
            max_quick: (window / 2).clamp(2, MAX_QUICKACKS),
            ato: Time::ZERO,
            ato_min,
            last_data: Time::ZERO,
            srtt: rtt,
            rto: est.rto(),
        }
    }

    /// `tcp_incr_quickack`: at least `n` quick ACKs (within the window's bound).
    pub fn enter(&mut self, n: u32) {
        self.quick = self.quick.max(n.min(self.max_quick));
    }

    /// `tcp_enter_quickack_mode`: quick ACKs, and the ATO back to its floor.
    pub fn enter_with_floor(&mut self, n: u32) {
        self.enter(n);
        self.ato = self.ato_min;
    }

    /// Whether the next ACK goes at once however little it acknowledges.
    pub fn in_quick_mode(&self) -> bool {
        self.quick > 0
    }

    /// `tcp_event_data_recv`: in-order data arrives at `now`.
    pub fn on_data(&mut self, now: Time) {
        if self.ato == Time::ZERO {
            // The first data of the connection.
            self.enter(MAX_QUICKACKS);
            self.ato = self.ato_min;
        } else {
            let m = now - self.last_data;
            if m <= Time(self.ato_min.0 / 2) {
                self.ato = Time(self.ato.0 / 2) + Time(self.ato_min.0 / 2);
            } else if m < self.ato {
                self.ato = (Time(self.ato.0 / 2) + m).min(self.rto);
            } else if m > self.rto {
                // A silence longer than the RTO: the sender is restarting; ACK it quickly.
                self.enter(MAX_QUICKACKS);
            }
        }
        self.last_data = now;
    }

    /// `tcp_send_delayed_ack`: how long a delayed ACK waits.
    pub fn delay(&self) -> Time {
        let mut ato = self.ato;
        if ato > self.ato_min {
            ato = ato.min(MAX_ATO.min(self.srtt.max(self.ato_min)));
        }
        to_jiffies(ato)
    }

    /// `tcp_event_ack_sent`: an ACK went. Each uses a quick ACK (Linux counts ACKs that answer
    /// data; this receiver sends no other kind once data flows).
    pub fn on_ack_sent(&mut self) {
        if self.quick > 0 {
            self.quick -= 1;
            if self.quick == 0 {
                // Leaving quick-ACK mode deflates ATO.
                self.ato = self.ato_min;
            }
        }
    }

    /// A new connection: quick ACKs again from its first data, ATO from its floor.
    pub fn reset(&mut self) {
        self.quick = 0;
        self.ato = Time::ZERO;
    }

    /// `tcp_delack_timer_handler`: the delayed ACK had to wait for its timer: ATO doubles.
    pub fn on_timer(&mut self) {
        self.ato = Time(self.ato.0 * 2).min(self.rto);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> Time {
        Time::from_ms(x)
    }

    #[test]
    fn the_first_data_gives_sixteen_quick_acks_then_ato_returns_to_its_floor() {
        let mut q = QuickAck::new(20_000, ms(40), ms(100));
        q.on_data(ms(1000));
        for _ in 0..16 {
            assert!(q.in_quick_mode());
            q.on_ack_sent();
        }
        assert!(!q.in_quick_mode());
        assert_eq!(q.delay(), ms(40));
        // A new connection starts in quick-ACK mode again.
        q.reset();
        q.on_data(ms(2000));
        assert!(q.in_quick_mode());
    }

    #[test]
    fn quick_acks_are_bounded_by_half_the_window() {
        let mut q = QuickAck::new(6, ms(40), ms(100));
        q.on_data(ms(1));
        for _ in 0..3 {
            q.on_ack_sent();
        }
        assert!(!q.in_quick_mode());
        let mut q = QuickAck::new(1, ms(40), ms(100));
        q.enter(MAX_QUICKACKS);
        assert_eq!(q.quick, 2);
    }

    #[test]
    fn ato_follows_the_gaps_between_arrivals() {
        let mut q = QuickAck::new(20_000, ms(40), ms(100));
        q.on_data(ms(0));
        // Gaps of at most 20 ms pull ATO towards its floor: 40/2 + 20 = 40.
        q.on_data(ms(10));
        assert_eq!(q.ato, ms(40));
        // A delayed ACK that waited for its timer doubles it (at most the RTO, 300 ms here).
        q.on_timer();
        assert_eq!(q.ato, ms(80));
        // A gap below it, above 20 ms: ATO/2 + m = 40 + 30.
        q.on_data(ms(40));
        assert_eq!(q.ato, ms(70));
        // The timer waits min(ATO, SRTT) = 70 ms; with ATO above SRTT, SRTT.
        assert_eq!(q.delay(), ms(72)); // 70 ms in whole 4-ms jiffies
        for _ in 0..3 {
            q.on_timer();
        }
        assert_eq!((q.ato, q.delay()), (ms(300), ms(100)));
        // A silence longer than the RTO (300 ms): quick ACKs again.
        q.quick = 0;
        q.on_data(ms(1000));
        assert!(q.in_quick_mode());
    }
}
