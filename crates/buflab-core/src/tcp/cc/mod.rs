//! Congestion control: window arithmetic only, one algorithm per file.
//!
//! The sender calls these hooks; it keeps loss detection, recovery and timers to itself
//! (STYLE habit 6). Dispatch is an enum rather than a trait object so the hot path inlines;
//! adding an algorithm means one file and one arm per match here.

pub mod reno;

use crate::units::Time;

/// The window state a controller works on. Units: segments.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Window {
    pub cwnd: f64,
    pub ssthresh: f64,
}

/// What a controller must do. Hooks without a sensible default are required.
pub trait CongestionControl {
    /// `acked` segments were newly and cumulatively acknowledged outside loss recovery.
    fn on_ack(&mut self, w: &mut Window, acked: u32, now: Time, srtt: Option<Time>);
    /// Loss detected by three duplicate ACKs; returns the new ssthresh. `flight` is the data
    /// outstanding (FlightSize, RFC 5681 §3.2), in segments.
    fn ssthresh_on_loss(&mut self, w: &Window, flight: u32, now: Time) -> f64;
    /// Retransmission timeout; returns the new ssthresh.
    fn ssthresh_on_timeout(&mut self, w: &Window, flight: u32, now: Time) -> f64 {
        self.ssthresh_on_loss(w, flight, now)
    }
}

/// Which algorithm a flow runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CcKind {
    Reno,
}

impl CcKind {
    pub fn build(self) -> Cc {
        match self {
            CcKind::Reno => Cc::Reno(reno::Reno),
        }
    }
}

/// A running controller.
#[derive(Clone, Debug)]
pub enum Cc {
    Reno(reno::Reno),
}

impl CongestionControl for Cc {
    #[inline]
    fn on_ack(&mut self, w: &mut Window, acked: u32, now: Time, srtt: Option<Time>) {
        match self {
            Cc::Reno(c) => c.on_ack(w, acked, now, srtt),
        }
    }
    fn ssthresh_on_loss(&mut self, w: &Window, flight: u32, now: Time) -> f64 {
        match self {
            Cc::Reno(c) => c.ssthresh_on_loss(w, flight, now),
        }
    }
    fn ssthresh_on_timeout(&mut self, w: &Window, flight: u32, now: Time) -> f64 {
        match self {
            Cc::Reno(c) => c.ssthresh_on_timeout(w, flight, now),
        }
    }
}

/// RFC 5681 §3.1 slow start: cwnd += min(N, SMSS) per ACK, i.e. one segment for any ACK of
/// new data (no Appropriate Byte Counting, as in the ns-2 studies the seeds used).
#[inline]
pub fn slow_start(w: &mut Window, acked: u32) {
    if acked > 0 {
        w.cwnd += 1.0;
    }
}

/// RFC 5681 §3.1 eq. 3: congestion avoidance adds SMSS·SMSS/cwnd per ACK, i.e. 1/cwnd
/// segments, about one segment per round trip.
#[inline]
pub fn congestion_avoidance(w: &mut Window) {
    w.cwnd += 1.0 / w.cwnd;
}
