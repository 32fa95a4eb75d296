//! Congestion control: window arithmetic only, one algorithm per file.
//!
//! The sender calls these hooks; it keeps loss detection, recovery and timers to itself
//! (STYLE habit 6). Dispatch is an enum rather than a trait object so the hot path inlines;
//! adding an algorithm means one file and one arm per match here.
//!
//! All three algorithms share RFC 5681 slow start ([`slow_start`]) and count the window in
//! segments; they differ in congestion avoidance and in the reduction on loss:
//! [`reno`] (AIMD(1, 1/2), RFC 5681), [`bic`] (BIC-TCP as Linux's `tcp_bic.c` implements it)
//! and [`cubic`] (RFC 9438).

pub mod bic;
pub mod cubic;
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
    Bic,
    Cubic,
}

impl CcKind {
    /// Every algorithm, in the order of [`CcKind::NAMES`].
    pub const ALL: [CcKind; 3] = [CcKind::Reno, CcKind::Bic, CcKind::Cubic];
    /// The scenario's names for them (key `cc` of `traffic.tcp`), also the per-flow table's.
    pub const NAMES: [&'static str; 3] = ["reno", "bic", "cubic"];

    pub fn build(self) -> Cc {
        match self {
            CcKind::Reno => Cc::Reno(reno::Reno),
            CcKind::Bic => Cc::Bic(bic::Bic::default()),
            CcKind::Cubic => Cc::Cubic(cubic::Cubic::default()),
        }
    }

    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }

    /// The algorithm of a scenario name, if it is one of [`CcKind::NAMES`].
    pub fn from_name(name: &str) -> Option<CcKind> {
        Self::NAMES.iter().position(|n| *n == name).map(|i| Self::ALL[i])
    }
}

/// A running controller.
#[derive(Clone, Debug)]
pub enum Cc {
    Reno(reno::Reno),
    Bic(bic::Bic),
    Cubic(cubic::Cubic),
}

impl CongestionControl for Cc {
    #[inline]
    fn on_ack(&mut self, w: &mut Window, acked: u32, now: Time, srtt: Option<Time>) {
        match self {
            Cc::Reno(c) => c.on_ack(w, acked, now, srtt),
            Cc::Bic(c) => c.on_ack(w, acked, now, srtt),
            Cc::Cubic(c) => c.on_ack(w, acked, now, srtt),
        }
    }
    fn ssthresh_on_loss(&mut self, w: &Window, flight: u32, now: Time) -> f64 {
        match self {
            Cc::Reno(c) => c.ssthresh_on_loss(w, flight, now),
            Cc::Bic(c) => c.ssthresh_on_loss(w, flight, now),
            Cc::Cubic(c) => c.ssthresh_on_loss(w, flight, now),
        }
    }
    fn ssthresh_on_timeout(&mut self, w: &Window, flight: u32, now: Time) -> f64 {
        match self {
            Cc::Reno(c) => c.ssthresh_on_timeout(w, flight, now),
            Cc::Bic(c) => c.ssthresh_on_timeout(w, flight, now),
            Cc::Cubic(c) => c.ssthresh_on_timeout(w, flight, now),
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

/// The window a flow had in use when a loss was detected, segments: min(cwnd, FlightSize).
///
/// BIC and CUBIC remember "the window at the loss" (W_max, `last_max_cwnd`). Linux reads it
/// from `snd_cwnd`, which it never lets grow while the flow is not cwnd-limited
/// (`tcp_is_cwnd_limited`), and RFC 9438 §4.6 requires such a measure of any implementation
/// that uses cwnd there. The sender here, like ns-2's, keeps growing cwnd while the receiver
/// window (`max_window`) or the application holds the flow below it, so cwnd alone can be far
/// above anything the path carried; the data outstanding is what the flow really had out.
/// For a cwnd-limited flow the two agree to the fraction: the sender keeps ⌊cwnd⌋ out.
#[inline]
pub fn window_in_use(w: &Window, flight: u32) -> f64 {
    w.cwnd.min(flight as f64)
}
