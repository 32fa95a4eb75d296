//! Reno's AIMD window arithmetic (RFC 5681 §3.1–3.2). Used by both the Reno and NewReno
//! senders: they differ in loss recovery, which the sender owns, not in the window rules.
//!
//! Read first: [`super`] and RFC 5681 §3.1. Owns Reno's window arithmetic; must not know how a loss
//! was detected.

use super::{congestion_avoidance, slow_start, CongestionControl, Window};
use crate::units::Time;

#[derive(Clone, Debug, Default)]
pub struct Reno;

impl CongestionControl for Reno {
    #[inline]
    fn on_ack(&mut self, w: &mut Window, acked: u32, _now: Time, _srtt: Option<Time>) {
        if w.cwnd < w.ssthresh {
            slow_start(w, acked);
        } else {
            // One increase per ACK, whatever it covers (RFC 5681 §3.1, without ABC).
            congestion_avoidance(w);
        }
    }

    /// RFC 5681 §3.2 step 2, eq. 4: ssthresh = max(FlightSize / 2, 2·SMSS).
    fn ssthresh_on_loss(&mut self, _w: &Window, flight: u32, _now: Time) -> f64 {
        (flight as f64 / 2.0).max(2.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slow_start_adds_one_segment_per_ack() {
        let mut w = Window { cwnd: 4.0, ssthresh: 100.0 };
        let mut r = Reno;
        r.on_ack(&mut w, 1, Time::ZERO, None);
        assert_eq!(w.cwnd, 5.0);
        // A delayed ACK covering two segments still adds one (no ABC).
        r.on_ack(&mut w, 2, Time::ZERO, None);
        assert_eq!(w.cwnd, 6.0);
    }

    #[test]
    fn congestion_avoidance_adds_one_over_cwnd() {
        let mut w = Window { cwnd: 10.0, ssthresh: 5.0 };
        let mut r = Reno;
        r.on_ack(&mut w, 1, Time::ZERO, None);
        assert_eq!(w.cwnd, 10.1);
        // A full window of ACKs adds about one segment.
        let mut w = Window { cwnd: 10.0, ssthresh: 5.0 };
        for _ in 0..10 {
            r.on_ack(&mut w, 1, Time::ZERO, None);
        }
        assert!((w.cwnd - 10.95).abs() < 0.01, "{}", w.cwnd);
    }

    #[test]
    fn loss_halves_flight_but_not_below_two() {
        let w = Window { cwnd: 20.0, ssthresh: 64.0 };
        assert_eq!(Reno.ssthresh_on_loss(&w, 20, Time::ZERO), 10.0);
        assert_eq!(Reno.ssthresh_on_loss(&w, 3, Time::ZERO), 2.0);
    }
}
