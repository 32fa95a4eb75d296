//! Congestion control: window arithmetic only, one algorithm per file.
//!
//! Read first: RFC 5681 §3.1 and one algorithm's file. Owns the controller trait, its enum dispatch
//! and slow start; must not know sequence numbers, loss detection, timers or packets (the sender
//! owns those).
//!
//! The sender calls these hooks; it keeps loss detection, recovery and timers to itself
//! (STYLE habit 6). Dispatch is an enum rather than a trait object so the hot path inlines;
//! adding an algorithm means one file and one line in the `controllers!` list here.
//!
//! The three loss-based algorithms share RFC 5681 slow start ([`slow_start`]) and count the
//! window in segments; they differ in congestion avoidance and in the reduction on loss:
//! [`reno`] (AIMD(1, 1/2), RFC 5681), [`bic`] (BIC-TCP as Linux's `tcp_bic.c` implements it)
//! and [`cubic`] (RFC 9438).
//!
//! [`bbr`] (BBR v1) is of another kind, like Linux's `cong_control` algorithms: it ignores
//! ssthresh and the ACK-by-ACK growth hooks, and instead sets the window and a pacing rate
//! from delivery-rate samples ([`crate::tcp::rate`]) on every ACK
//! ([`CongestionControl::on_rate_sample`]). A controller asks for those samples with
//! [`CongestionControl::wants_rate_samples`]; the sender then keeps the per-segment state they
//! need and paces at [`CongestionControl::pacing_rate_bps`]. The loss-based controllers leave
//! these hooks at their defaults and the sender keeps no such state for them.

use super::rate::sample::AckSample;
use super::TcpConfig;
use crate::rng::Rng;
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
    /// From `from` until `to` the window did not limit the sender (RFC 9438 §4.2's
    /// application-limited period): the sender called no growth hook then. Told by the `linux`
    /// sender, which tracks it (`tcp_is_cwnd_limited`).
    fn on_app_limited(&mut self, _from: Time, _to: Time) {}
    /// The new ssthresh at an ECN-Echo (RFC 3168 §6.1.2's window reduction): by default the
    /// same as at a loss; DCTCP's is cwnd · (1 − α/2).
    fn ssthresh_on_ecn(&mut self, w: &Window, flight: u32, now: Time) -> f64 {
        self.ssthresh_on_loss(w, flight, now)
    }
    /// An ACK of an ECN-capable flow: `acked` segments newly acknowledged, whether it carried
    /// ECE, and the sender's SND.UNA and SND.NXT after it (DCTCP's α estimate reads them).
    fn on_ecn_ack(&mut self, _acked: u32, _ece: bool, _snd_una: u32, _snd_nxt: u32) {}

    // ---- Rate-based controllers (BBR); the loss-based ones keep these defaults. ----

    /// Whether the controller runs on delivery-rate samples: the sender then keeps the state
    /// they need, calls [`CongestionControl::on_rate_sample`] on every ACK and
    /// [`CongestionControl::on_retransmission_timeout`] on every timeout, and paces at
    /// [`CongestionControl::pacing_rate_bps`] (Linux: an algorithm with `cong_control`).
    fn wants_rate_samples(&self) -> bool {
        false
    }
    /// Every ACK, after the sender's own processing of it (loss detection, recovery) and
    /// before it sends anything on it: the controller sets `w.cwnd` (Linux `cong_control`).
    fn on_rate_sample(&mut self, _w: &mut Window, _ack: &RateAck, _now: Time) {}
    /// Every retransmission timeout, after the sender set cwnd to one segment (RFC 5681
    /// §3.1's loss window; Linux `tcp_enter_loss`).
    fn on_retransmission_timeout(&mut self, _w: &Window, _now: Time) {}
    /// The pacing rate the controller sets, bits per second of wire data; None: not pacing.
    fn pacing_rate_bps(&self) -> Option<f64> {
        None
    }
    /// Whether the controller is holding its own sending down (BBR's ProbeRTT), so that
    /// samples taken now describe it, not the path: the sender marks what it sends as
    /// application-limited (draft-cardwell-iccrg-bbr-congestion-control-00 §4.3.5).
    fn holds_back(&self) -> bool {
        false
    }

    // ---- Randomised controllers (BBR's ProbeBW phase); the others draw nothing. ----

    /// Gives the controller its random stream (the flow's own, [`crate::rng::Stream::Cc`]).
    fn set_rng(&mut self, _rng: Rng) {}
    /// Its random stream, if it draws (a server's next connection carries it on).
    fn rng(&self) -> Option<&Rng> {
        None
    }
}

/// Where the sender stands in loss recovery, as a rate-based controller sees it (Linux's
/// `icsk_ca_state`, the states BBR tells apart).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CaState {
    /// No loss being repaired.
    Open,
    /// Fast recovery (RFC 5681 §3.2, RFC 6582, RFC 6675 §5): from the fast retransmit until
    /// the cumulative ACK passes the recovery point.
    Recovery,
    /// After a retransmission timeout, until the cumulative ACK passes the highest segment
    /// sent before it (Linux's Loss state).
    Loss,
}

/// What a rate-based controller learns from one ACK: the rate sample and what the ACK
/// delivered ([`AckSample`]), and the sender's state once it has processed the ACK (Linux
/// passes `struct rate_sample` and reads the rest from the socket).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RateAck {
    pub sample: AckSample,
    /// C.delivered (segments delivered so far) and C.delivered_time, after this ACK.
    pub delivered: u64,
    pub delivered_time: Time,
    /// Segments in flight before this ACK and after it (Linux `prior_in_flight` and
    /// `tcp_packets_in_flight`: sent, not yet delivered, not deemed lost).
    pub prior_in_flight: u32,
    pub in_flight: u32,
    /// Segments the sender deemed lost on this ACK (Linux `rs->losses`): here, those it resent
    /// in loss recovery on it.
    pub losses: u32,
    pub ca_state: CaState,
    /// The sender's smoothed RTT (RFC 6298), None before the first sample.
    pub srtt: Option<Time>,
}

/// Declares each algorithm's module and lists it: its variant in [`CcKind`] (the scenario's
/// choice, named for `cc` and the per-flow table), its running state in [`Cc`] and how a flow
/// builds it. The one line a new algorithm adds.
macro_rules! controllers {
    ($( $(#[$doc:meta])* $module:ident : $variant:ident ( $state:ty ) = $name:literal, $build:expr; )*) => {
        $( pub mod $module; )*

        /// Which algorithm a flow runs.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum CcKind { $( $variant, )* }

        crate::names::names!(CcKind { $( $variant = $name, )* });

        impl CcKind {
            /// A controller for a flow with settings `cfg`.
            pub fn build(self, cfg: &TcpConfig) -> Cc {
                match self {
                    $( CcKind::$variant => Cc::$variant(($build)(cfg)), )*
                }
            }
        }

        /// A running controller: enum dispatch, so that the hot path inlines.
        #[derive(Clone, Debug)]
        pub enum Cc { $( $(#[$doc])* $variant($state), )* }

        impl CongestionControl for Cc {
            #[inline]
            fn on_ack(&mut self, w: &mut Window, acked: u32, now: Time, srtt: Option<Time>) {
                match self { $( Cc::$variant(c) => c.on_ack(w, acked, now, srtt), )* }
            }
            fn ssthresh_on_loss(&mut self, w: &Window, flight: u32, now: Time) -> f64 {
                match self { $( Cc::$variant(c) => c.ssthresh_on_loss(w, flight, now), )* }
            }
            fn ssthresh_on_timeout(&mut self, w: &Window, flight: u32, now: Time) -> f64 {
                match self { $( Cc::$variant(c) => c.ssthresh_on_timeout(w, flight, now), )* }
            }
            fn on_app_limited(&mut self, from: Time, to: Time) {
                match self { $( Cc::$variant(c) => c.on_app_limited(from, to), )* }
            }
            fn ssthresh_on_ecn(&mut self, w: &Window, flight: u32, now: Time) -> f64 {
                match self { $( Cc::$variant(c) => c.ssthresh_on_ecn(w, flight, now), )* }
            }
            fn on_ecn_ack(&mut self, acked: u32, ece: bool, snd_una: u32, snd_nxt: u32) {
                match self { $( Cc::$variant(c) => c.on_ecn_ack(acked, ece, snd_una, snd_nxt), )* }
            }
            fn wants_rate_samples(&self) -> bool {
                match self { $( Cc::$variant(c) => c.wants_rate_samples(), )* }
            }
            fn on_rate_sample(&mut self, w: &mut Window, ack: &RateAck, now: Time) {
                match self { $( Cc::$variant(c) => c.on_rate_sample(w, ack, now), )* }
            }
            fn on_retransmission_timeout(&mut self, w: &Window, now: Time) {
                match self { $( Cc::$variant(c) => c.on_retransmission_timeout(w, now), )* }
            }
            fn pacing_rate_bps(&self) -> Option<f64> {
                match self { $( Cc::$variant(c) => c.pacing_rate_bps(), )* }
            }
            fn holds_back(&self) -> bool {
                match self { $( Cc::$variant(c) => c.holds_back(), )* }
            }
            fn set_rng(&mut self, rng: Rng) {
                match self { $( Cc::$variant(c) => c.set_rng(rng), )* }
            }
            fn rng(&self) -> Option<&Rng> {
                match self { $( Cc::$variant(c) => c.rng(), )* }
            }
        }
    };
}

pub mod hystart;

controllers! {
    reno: Reno(reno::Reno) = "reno", |_: &TcpConfig| reno::Reno;
    bic: Bic(bic::Bic) = "bic", |_: &TcpConfig| bic::Bic::default();
    cubic: Cubic(cubic::Cubic) = "cubic", |_: &TcpConfig| cubic::Cubic::default();
    /// Boxed: BBR's state is several times the others', and senders of the other kinds should
    /// not carry its size.
    bbr: Bbr(Box<bbr::Bbr>) = "bbr", |cfg: &TcpConfig| Box::new(bbr::Bbr::new(cfg.packet, cfg.initial_window));
    dctcp: Dctcp(dctcp::Dctcp) = "dctcp", |_: &TcpConfig| dctcp::Dctcp::default();
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
