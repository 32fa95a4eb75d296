//! CUBIC congestion control (RFC 9438), window in segments.
//!
//! Read first: RFC 9438 §4 (each rule below cites its subsection) and the parent module (what
//! the controller is told, and what the sender keeps to itself). In congestion avoidance the
//! window follows a cubic function of the time t since the stage began,
//! W_cubic(t) = C·(t − K)³ + W_max (eq. 1), where K = ∛((W_max − cwnd_epoch) / C) (eq. 2) is
//! when the curve regains the window of the last congestion event: concave below W_max
//! (§4.4), a plateau at it, convex above (§4.5). It never grows slower than W_est, its estimate
//! of what Reno would have (§4.3). A loss multiplies the window by β_cubic = 0.7 (§4.6).
//!
//! Deliberate choices and deviations, and why:
//! - Slow start is RFC 5681's (the shared [`slow_start`]): no HyStart++ (RFC 9406), which
//!   §4.10 recommends (SHOULD) but allows RFC 5681's in its place (MAY). Slow start is then
//!   the same as Reno's and BIC's here, so a comparison isolates congestion avoidance; and
//!   Linux's CUBIC gained HyStart only in 2.6.29, after the kernels of the seeds' experiments.
//! - The window is fractional and grows per ACK as §4.4–4.5 say, (target − cwnd)/cwnd, one
//!   update per ACK whatever it covers (no ABC, like the Reno arithmetic here); W_est counts
//!   the segments each ACK covers (eq. 4 as written).
//! - Where the RFC takes "cwnd" at a congestion event (W_max, cwnd_prior) this takes the window
//!   in use, min(cwnd, FlightSize) ([`window_in_use`]): §4.6 requires implementations that use
//!   cwnd there to stop cwnd growing while less is in flight, which the sender here does not.
//! - The stage starts at its first ACK in congestion avoidance (t_epoch, as Linux's
//!   `epoch_start`), so t leaves out fast recovery, during which the sender calls no hook.
//!   Application-limited periods are left out as §4.2 requires when the sender reports them
//!   ([`CongestionControl::on_app_limited`]: t_epoch moves forward by the part of the period
//!   after it). The `linux` sender does, since it tracks whether the window limits it and grows
//!   the window only then (Linux `tcp_is_cwnd_limited`). The RFC-era senders do not: like
//!   ns-2's they keep growing cwnd while the receiver's window or the application holds them
//!   back, so there is no such period to leave out, and the seeds' results stay as published.
//! - When W_max is not above cwnd_epoch, K = 0 and W_max = cwnd_epoch: what §4.10 prescribes
//!   for a first stage that no loss began (slow start ended at ssthresh, here the receiver
//!   window) and §4.8 after a timeout, and what Linux does in every such case
//!   (`bic_origin_point = cwnd`), such as fast convergence having put W_max below where
//!   recovery left the window; eq. 2 would take the cube root of a negative number.
//! - §4.3 sets cwnd to W_est in the Reno-friendly region; an ACK never lowers cwnd here. W_est
//!   is below cwnd there only when cwnd ran ahead on the target W_cubic(t + RTT), and a
//!   reduction without a congestion event is no part of any region's rule.
//! - RTT is the sender's smoothed RTT (§4.1.2, RFC 6298); before the first sample, 0.
//! - Fast convergence (§4.7) is always on, as in Linux; §4.7 says to turn it off for a flow
//!   alone on its path, which a flow cannot know.
//! - §4.9 (spurious congestion events) is not modelled: the sender never undoes a reduction.
//! - Arithmetic is f64 `+ − × ÷` only, which IEEE 754 rounds the same way on every platform,
//!   and the cube root is [`cube_root`] below rather than libm's `cbrt`, whose last bit can
//!   differ between platforms: same scenario and seed, same numbers everywhere.

use super::{slow_start, window_in_use, CongestionControl, Window};
use crate::units::Time;

/// C of eq. 1 (§4.1.1), segments per second³.
pub const C: f64 = 0.4;
/// β_cubic (§4.1.1, §4.6): the window after a loss is this fraction of the one before.
pub const BETA: f64 = 0.7;
/// α_cubic = 3·(1 − β_cubic)/(1 + β_cubic) (§4.3): the Reno-friendly estimate's additive
/// increase, segments per RTT, that matches Reno's AIMD(1, 0.5) average window (eq. 3).
pub const ALPHA: f64 = 3.0 * (1.0 - BETA) / (1.0 + BETA);

/// One congestion-avoidance stage (§4.1.2: t_epoch, cwnd_epoch, K).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Epoch {
    /// t_epoch: the first ACK in congestion avoidance after the last congestion event.
    pub start: Time,
    /// cwnd_epoch: the window then, segments.
    pub cwnd: f64,
    /// K of eq. 2, seconds.
    pub k: f64,
}

/// CUBIC's state (§4.1.2). Fields are public so tests can set a state and feed one event.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Cubic {
    /// W_max, segments: the window just before the last reduction, lowered by fast convergence
    /// (§4.7); cwnd_epoch after a timeout (§4.8). 0 before the first congestion event.
    pub w_max: f64,
    /// cwnd_prior, segments: the window when ssthresh was last set, at a congestion event or
    /// on leaving the first slow start. 0 before either.
    pub cwnd_prior: f64,
    /// The current congestion-avoidance stage; None from a congestion event until the first
    /// ACK in congestion avoidance after it.
    pub epoch: Option<Epoch>,
    /// W_est (§4.3), segments: Reno's window by eq. 4, restarted at cwnd_epoch each stage.
    pub w_est: f64,
    /// The next stage is the first after a timeout (§4.8).
    pub after_timeout: bool,
}

impl Cubic {
    /// W_cubic(t) of eq. 1 in `epoch`, t in seconds since t_epoch.
    pub fn w_cubic(&self, epoch: &Epoch, t: f64) -> f64 {
        let d = t - epoch.k;
        C * d * d * d + self.w_max
    }

    /// The first ACK in congestion avoidance since the last congestion event: the stage
    /// begins with the window `cwnd`.
    fn start_epoch(&mut self, cwnd: f64, now: Time) -> Epoch {
        if self.cwnd_prior == 0.0 {
            // §4.1.2, §4.10: cwnd_prior is also set "upon exiting the first slow start".
            self.cwnd_prior = cwnd;
        }
        let k = if self.after_timeout || self.w_max <= cwnd {
            // §4.8 after a timeout, §4.10 after a first slow start without loss (and, by the
            // same rule, whenever there is no higher W_max to regain; see the file header):
            // the curve starts at its inflection point.
            self.w_max = cwnd;
            0.0
        } else {
            // Eq. 2.
            cube_root((self.w_max - cwnd) / C)
        };
        self.after_timeout = false;
        // §4.3: "W_est is set equal to cwnd_epoch at the start of the congestion avoidance
        // stage."
        self.w_est = cwnd;
        let epoch = Epoch { start: now, cwnd, k };
        self.epoch = Some(epoch);
        epoch
    }
}

impl CongestionControl for Cubic {
    fn on_ack(&mut self, w: &mut Window, acked: u32, now: Time, srtt: Option<Time>) {
        if w.cwnd < w.ssthresh {
            // RFC 9438 §4.10 defers slow start to RFC 5681 §3.1.
            slow_start(w, acked);
            return;
        }
        let epoch = match self.epoch {
            Some(e) => e,
            None => self.start_epoch(w.cwnd, now),
        };
        // §4.2: t = t_current − t_epoch, and RTT is the smoothed round-trip time, seconds.
        let t = now.0.saturating_sub(epoch.start.0) as f64 / crate::units::PS_PER_S as f64;
        let rtt = srtt.map_or(0.0, Time::secs_f64);
        // §4.3 eq. 4, with α_cubic = 1 once W_est has reached cwnd_prior (last paragraph).
        let alpha = if self.w_est >= self.cwnd_prior { 1.0 } else { ALPHA };
        self.w_est += alpha * acked as f64 / w.cwnd;
        if self.w_cubic(&epoch, t) < self.w_est {
            // §4.3: the Reno-friendly region, cwnd = W_est (never lowered; file header).
            w.cwnd = w.cwnd.max(self.w_est);
        } else {
            // §4.2: target = W_cubic(t + RTT) bounded to [cwnd, 1.5·cwnd], so the increase
            // rate never falls and stays below slow start's; §4.4 (concave, cwnd < W_max) and
            // §4.5 (convex, cwnd ≥ W_max) both add (target − cwnd)/cwnd per ACK.
            let target = self.w_cubic(&epoch, t + rtt).clamp(w.cwnd, 1.5 * w.cwnd);
            w.cwnd += (target - w.cwnd) / w.cwnd;
        }
    }

    /// §4.2: "t_epoch ... excluding the application-limited periods": the stage's clock skips
    /// the part of `from..to` after it began (Linux shifts `epoch_start` likewise when a sender
    /// starts again after idling, `CA_EVENT_TX_START`).
    fn on_app_limited(&mut self, from: Time, to: Time) {
        if let Some(e) = &mut self.epoch {
            let skipped = to.saturating_sub(from.max(e.start));
            e.start = (e.start + skipped).min(to);
        }
    }

    /// §4.6 multiplicative decrease, after §4.7 fast convergence has updated W_max.
    fn ssthresh_on_loss(&mut self, w: &Window, flight: u32, _now: Time) -> f64 {
        let cwnd = window_in_use(w, flight);
        // §4.7: a loss below the last W_max means the available bandwidth shrank: release
        // more by aiming the next plateau lower, cwnd·(1 + β_cubic)/2.
        self.w_max = if cwnd < self.w_max { cwnd * (1.0 + BETA) / 2.0 } else { cwnd };
        // §4.6: cwnd_prior = cwnd; the stage ends (the next ACK in congestion avoidance
        // starts a new one).
        self.cwnd_prior = cwnd;
        self.epoch = None;
        self.after_timeout = false;
        // §4.6: ssthresh = flight_size·β_cubic, at least 2 segments. The sender sets
        // cwnd = ssthresh (+3 while fast recovery inflates it, RFC 6582).
        (flight as f64 * BETA).max(2.0)
    }

    /// §4.8: a timeout sets ssthresh as §4.6 does (the sender then sets cwnd = 1 as RFC 5681
    /// §3.1), and the first congestion-avoidance stage after it starts with K = 0 and
    /// W_max = W_est = cwnd_epoch.
    ///
    /// A timeout before any congestion-avoidance stage began since the last congestion event
    /// (in fast recovery, or in the slow start after an earlier timeout) answers that same
    /// event, and there the window in use counts segments sent on a window inflated by
    /// duplicate ACKs (RFC 5681 §3.2 step 4) or resent going back N: the sender keeps the
    /// lower ssthresh then (`TcpSender::on_timeout`), and cwnd_prior, which decides when α_cubic
    /// becomes 1, likewise keeps the event's lower value. (W_max needs no such care: the next
    /// stage sets it.)
    fn ssthresh_on_timeout(&mut self, w: &Window, flight: u32, now: Time) -> f64 {
        let same_event = self.epoch.is_none() && self.cwnd_prior > 0.0;
        let prior = self.cwnd_prior;
        let ssthresh = self.ssthresh_on_loss(w, flight, now);
        if same_event {
            self.cwnd_prior = self.cwnd_prior.min(prior);
        }
        self.after_timeout = true;
        ssthresh
    }
}

/// The real cube root of `x`, without libm (file header: libm's last bit is
/// platform-dependent). A first guess from the exponent bits, within a few per cent, then
/// Newton's iteration y ← y − (y³ − x)/(3y²) = (2y + x/y²)/3, which squares the relative error
/// each step: 5 steps take 4·10⁻² to below 10⁻¹⁶. Within an ulp or two of the exact root
/// (the test checks a wide range against std's `cbrt`). Zero, infinities and NaN return as
/// they are; the sign is kept.
pub fn cube_root(x: f64) -> f64 {
    if x == 0.0 || !x.is_finite() {
        return x;
    }
    let a = x.abs();
    // Subnormals have no exponent to divide; scale them up by 2^54 (the root by 2^18).
    let (a, scale) = if a < f64::MIN_POSITIVE { (a * 18014398509481984.0, 1.0 / 262144.0) } else { (a, 1.0) };
    // Dividing the biased exponent (and mantissa bits) by three, and adding back two thirds
    // of the bias, gives 2^(e/3) to within a few per cent: 0x2A9F7893782DA1CE is
    // (2/3)·1023·2^52 tuned to minimise the worst error.
    let mut y = f64::from_bits(a.to_bits() / 3 + 0x2A9F_7893_782D_A1CE);
    for _ in 0..5 {
        y = (2.0 * y + a / (y * y)) / 3.0;
    }
    (y * scale).copysign(x)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::cc::{Cc, CcKind};
    use crate::tcp::sender::TcpSender;
    use crate::tcp::{Recovery, TcpConfig};

    const RTT: Time = Time::from_ms(100);

    fn secs(s: f64) -> Time {
        Time((s * crate::units::PS_PER_S as f64).round() as u64)
    }

    // ---- The cube root ----

    #[test]
    fn cube_root_is_exact_on_cubes_and_within_an_ulp_of_std_elsewhere() {
        for n in [1u64, 2, 3, 5, 10, 27, 100, 1000, 12345, 100_000] {
            let x = (n * n * n) as f64;
            assert_eq!(cube_root(x), n as f64, "∛{x}");
            assert_eq!(cube_root(-x), -(n as f64));
        }
        assert_eq!(cube_root(0.125), 0.5);
        // Log-spaced values from 1e-300 to 1e300 and a dense sweep of the range CUBIC uses
        // (W_max − cwnd_epoch over C: 0 to 10⁷ segments/C): ours against the platform's
        // cbrt, which is itself within an ulp of exact. An ulp of error in K moves eq. 1 by
        // far less than a segment.
        let ulps = |a: f64, b: f64| (a.to_bits() as i64 - b.to_bits() as i64).unsigned_abs();
        let mut worst = 0;
        let mut x = 1e-300;
        while x < 1e300 {
            worst = worst.max(ulps(cube_root(x), x.cbrt()));
            x *= 1.37;
        }
        for i in 1..200_000 {
            let x = i as f64 * 0.37;
            worst = worst.max(ulps(cube_root(x), x.cbrt()));
        }
        assert!(worst <= 1, "worst error {worst} ulps");
        // Subnormals, zero and the non-finite values.
        assert!(ulps(cube_root(1e-310), 1e-310f64.cbrt()) <= 1);
        assert_eq!(cube_root(0.0), 0.0);
        assert_eq!(cube_root(f64::INFINITY), f64::INFINITY);
        assert!(cube_root(f64::NAN).is_nan());
    }

    // ---- Multiplicative decrease and the curve (§4.2, §4.6) ----

    /// A NewReno sender running CUBIC in congestion avoidance with cwnd = 100 and segments
    /// 0..100 outstanding.
    fn sender_at_100() -> (TcpSender, Vec<crate::packet::Packet>) {
        let mut cfg = TcpConfig::default_for(1000, Recovery::NewReno);
        cfg.cc = CcKind::Cubic;
        let mut s = TcpSender::new(cfg, 0, 0);
        s.w = Window { cwnd: 100.0, ssthresh: 50.0 };
        let mut out = Vec::new();
        s.start(Time::ZERO, &mut out);
        assert_eq!(out.len(), 100);
        out.clear();
        (s, out)
    }

    #[test]
    fn a_loss_at_w_leaves_ssthresh_and_cwnd_at_w_times_beta() {
        // Segment 0 of the window 0..100 is lost; 1..99 arrive (99 duplicate ACKs), the
        // retransmission arrives and the ACK covers everything sent so far.
        let (mut s, mut out) = sender_at_100();
        let t = RTT;
        for _ in 0..99 {
            s.on_ack(t, 0, &mut out);
        }
        // §4.6: ssthresh = flight_size·β = 100·0.7 = 70; fast recovery holds 70 + 3 and adds
        // one per further duplicate: 73 + 96 = 169, so segments 100..168 went out.
        assert_eq!(s.w.ssthresh, 70.0);
        assert_eq!(s.w.cwnd, 169.0);
        assert_eq!(out.len(), 1 + 69);
        // The full ACK (for 100): RFC 6582 leaves cwnd = min(ssthresh, FlightSize + 1) with
        // 69 in flight: cwnd = 70 = W·β.
        s.on_ack(t + RTT, 100, &mut out);
        assert!(!s.in_recovery());
        assert_eq!(s.w.cwnd, 70.0);
        let Cc::Cubic(c) = s.cc() else { panic!() };
        assert_eq!((c.w_max, c.cwnd_prior, c.epoch), (100.0, 100.0, None));
    }

    /// CUBIC just after a loss at W_max = 100 (ssthresh = cwnd = 70), no stage yet.
    fn after_loss_at_100() -> (Cubic, Window) {
        let mut c = Cubic::default();
        let w = Window { cwnd: 100.0, ssthresh: 1000.0 };
        let ssthresh = c.ssthresh_on_loss(&w, 100, Time::ZERO);
        (c, Window { cwnd: ssthresh, ssthresh })
    }

    #[test]
    fn the_first_ack_after_a_loss_starts_a_stage_with_k_by_eq_2() {
        let (mut c, mut w) = after_loss_at_100();
        let t0 = Time::from_secs(10);
        c.on_ack(&mut w, 1, t0, Some(RTT));
        // Eq. 2: K = ∛((100 − 70)/0.4) = ∛75 = 4.217163326508746 s.
        let e = c.epoch.unwrap();
        assert_eq!((e.start, e.cwnd), (t0, 70.0));
        assert!((e.k - 4.217163326508746).abs() < 1e-14, "K = {}", e.k);
        assert!((c.w_cubic(&e, e.k) - 100.0).abs() < 1e-12, "W_cubic(K) = W_max");
        // At t = 0 the curve is at cwnd_epoch (W_cubic(0) = 70, to rounding) and W_est has
        // just grown past it by eq. 4: 70 + 0.5294117647058824/70 = 70.00756302521009. The
        // Reno-friendly test W_cubic(t) < W_est holds, so cwnd = W_est (§4.3).
        assert!((c.w_est - 70.00756302521009).abs() < 1e-12);
        assert_eq!(w.cwnd, c.w_est);
        // 10 ms later the curve has left W_est behind (W_cubic(0.01) = 70.2129 against W_est
        // = 70.0151): the concave rule aims at W_cubic(0.11) = 0.4·(0.11 − K)³ + 100
        // = 72.28684876946255 and adds (72.2868 − 70.0076)/70.0076: cwnd = 70.04012073248855.
        c.on_ack(&mut w, 1, t0 + Time::from_ms(10), Some(RTT));
        assert!((w.cwnd - 70.04012073248855).abs() < 1e-9, "{}", w.cwnd);
    }

    #[test]
    fn one_ack_adds_target_minus_cwnd_over_cwnd() {
        // §4.4: at t = 2.1 s into the stage (RTT 0.1 s) with cwnd = 90, the target is
        // W_cubic(2.2) = 0.4·(2.2 − 4.217163326508746)³ + 100 = 96.71690701890603 (evaluated
        // by hand), inside [90, 135]: cwnd += 6.71690701890603/90 = 0.07463230021006698.
        let (mut c, mut w) = after_loss_at_100();
        c.on_ack(&mut w, 1, Time::ZERO, Some(RTT));
        w.cwnd = 90.0;
        c.w_est = 80.0; // below W_cubic(2.1): not the Reno-friendly region
        c.on_ack(&mut w, 1, secs(2.1), Some(RTT));
        assert!((w.cwnd - 90.07463230021007).abs() < 1e-9, "{}", w.cwnd);
        // The bounds: far below the curve the target is capped at 1.5·cwnd (+0.5 per ACK)...
        (w.cwnd, w.ssthresh) = (20.0, 10.0);
        c.on_ack(&mut w, 1, secs(2.1), Some(RTT));
        assert_eq!(w.cwnd, 20.5);
        // ... and above it the target is cwnd itself: no change.
        w.cwnd = 99.0;
        c.on_ack(&mut w, 1, secs(2.1), Some(RTT));
        assert_eq!(w.cwnd, 99.0);
    }

    /// Plays `seconds` of the stage with a fixed RTT: ACKs for one segment each, spaced by
    /// RTT/cwnd (an ACK clock with the window full). Returns the window at the end.
    fn ack_clock(c: &mut Cubic, w: &mut Window, from: Time, seconds: f64) -> f64 {
        let end = from + secs(seconds);
        let mut now = from;
        while now < end {
            c.on_ack(w, 1, now, Some(RTT));
            now += Time((RTT.0 as f64 / w.cwnd) as u64);
        }
        w.cwnd
    }

    #[test]
    fn the_window_follows_eq_1_after_t_seconds_of_acks() {
        // After a loss at W_max = 100: K = 4.2172 s, and by eq. 1 evaluated by hand
        // W_cubic(1) = 86.6808, W_cubic(2) = 95.6403, W_cubic(3) = 99.2787,
        // W_cubic(4) = 99.9959, W_cubic(5) = 100.1918. Each ACK aims at W_cubic(t + RTT),
        // one RTT ahead, and a window of ACKs arrives per RTT, so at t the window is at about
        // W_cubic(t). It lags by a few hundredths of a segment (0.032 at t = 1, where the
        // curve is steepest); 0.1 segment is three times that, and a tenth of what a wrong
        // K or a missing RTT look-ahead would cost (the curve climbs 1.2 segments in the
        // RTT after t = 1).
        let (mut c, mut w) = after_loss_at_100();
        let t0 = Time::from_secs(10);
        let mut at = t0;
        for (t, expected) in [(1.0, 86.6808), (2.0, 95.6403), (3.0, 99.2787), (4.0, 99.9959), (5.0, 100.1918)]
        {
            let cwnd = ack_clock(&mut c, &mut w, at, t - (at - t0).secs_f64());
            at = t0 + secs(t);
            assert!((cwnd - expected).abs() < 0.1, "t = {t}: cwnd {cwnd:.4} vs W_cubic {expected}");
        }
        // The plateau: the window regained W_max at about K and leaves it slowly (§4.5).
        assert_eq!(c.epoch.unwrap().start, t0, "one stage throughout");
    }

    // ---- The Reno-friendly region (§4.3) ----

    #[test]
    fn w_est_grows_by_eq_4_and_the_window_follows_it_when_above_the_curve() {
        // Small W_max and a short RTT: a loss at W = 10 gives cwnd_epoch = 7 and
        // K = ∛(3/0.4) = 1.9574 s, so W_cubic stays near 7 for a long time while W_est
        // climbs by α_cubic = 0.9/1.7 = 0.5294117647058824 segments per window of ACKs.
        let mut c = Cubic::default();
        let ssthresh = c.ssthresh_on_loss(&Window { cwnd: 10.0, ssthresh: 100.0 }, 10, Time::ZERO);
        assert_eq!(ssthresh, 7.0);
        let mut w = Window { cwnd: 7.0, ssthresh };
        let rtt = Some(Time::from_ms(1));
        // Two ACKs at t = 0. Eq. 4 by hand: W_est = 7 + α/7 = 7.07563025210084, then
        // 7.07563025210084 + α/7.07563025210084 = 7.150452104832431. W_cubic(0) = 7 is below
        // each, so cwnd = W_est each time.
        c.on_ack(&mut w, 1, Time::ZERO, rtt);
        assert!((c.w_est - 7.07563025210084).abs() < 1e-14);
        assert_eq!(w.cwnd, c.w_est);
        c.on_ack(&mut w, 1, Time::ZERO, rtt);
        assert!((c.w_est - 7.150452104832431).abs() < 1e-14);
        assert_eq!(w.cwnd, c.w_est);
        // An ACK covering two segments counts both (segments_acked).
        let before = c.w_est;
        c.on_ack(&mut w, 2, Time::ZERO, rtt);
        assert!((c.w_est - (before + 2.0 * ALPHA / before)).abs() < 1e-14);
        // One second of 1-ms round trips later (1000 windows of ACKs): W_est has climbed
        // about α per window up to cwnd_prior = 10, then 1 per window (α switches to 1), far
        // above W_cubic(1) = 0.4·(1 − 1.9574)³ + 10 = 9.65: the window is W_est.
        let e = c.epoch.unwrap();
        let mut now = Time::ZERO;
        while now < Time::from_secs(1) {
            now += Time((Time::from_ms(1).0 as f64 / w.cwnd) as u64);
            c.on_ack(&mut w, 1, now, rtt);
        }
        assert!(c.w_cubic(&e, 1.0) < 9.7);
        assert_eq!(w.cwnd, c.w_est);
        // From 7 to cwnd_prior = 10 at α per window takes 3/0.53 ≈ 5.7 windows (5.7 ms); the
        // remaining ~994 windows add one each: W_est ≈ 10 + 994 = 1004 (1004.9 measured).
        assert!((1000.0..1010.0).contains(&w.cwnd), "{}", w.cwnd);
    }

    #[test]
    fn alpha_becomes_one_once_w_est_reaches_cwnd_prior() {
        let (mut c, mut w) = after_loss_at_100();
        c.on_ack(&mut w, 1, Time::ZERO, Some(RTT));
        // Below cwnd_prior = 100: α_cubic per cwnd of ACKs.
        (c.w_est, w.cwnd) = (99.0, 99.0);
        c.on_ack(&mut w, 1, Time::ZERO, Some(RTT));
        assert!((c.w_est - (99.0 + ALPHA / 99.0)).abs() < 1e-12);
        // At cwnd_prior: 1 per cwnd of ACKs, as Reno.
        (c.w_est, w.cwnd) = (100.0, 100.0);
        c.on_ack(&mut w, 1, Time::ZERO, Some(RTT));
        assert_eq!(c.w_est, 100.01);
    }

    // ---- Fast convergence (§4.7) and timeouts (§4.8) ----

    #[test]
    fn fast_convergence_lowers_w_max_after_a_loss_below_it() {
        let (mut c, _) = after_loss_at_100();
        assert_eq!(c.w_max, 100.0);
        // The next loss comes at 80 < W_max: W_max = 80·(1 + 0.7)/2 = 68, cwnd_prior = 80,
        // ssthresh = 80·0.7 = 56.
        let ssthresh = c.ssthresh_on_loss(&Window { cwnd: 80.0, ssthresh: 70.0 }, 80, Time::ZERO);
        assert_eq!((c.w_max, c.cwnd_prior), (68.0, 80.0));
        assert_eq!(ssthresh, 56.0);
        // A loss above W_max just remembers the window.
        c.ssthresh_on_loss(&Window { cwnd: 90.0, ssthresh: 56.0 }, 90, Time::ZERO);
        assert_eq!(c.w_max, 90.0);
    }

    #[test]
    fn w_max_is_the_window_in_use_not_a_cwnd_that_grew_past_the_receiver_window() {
        // A flow held at 64 segments by the receiver window while cwnd grew to 500.
        let mut c = Cubic::default();
        let ssthresh = c.ssthresh_on_loss(&Window { cwnd: 500.0, ssthresh: 30.0 }, 64, Time::ZERO);
        assert_eq!((c.w_max, c.cwnd_prior), (64.0, 64.0));
        assert!((ssthresh - 44.8).abs() < 1e-12);
        // The sender never sends more than 2 segments' worth less: ssthresh ≥ 2.
        assert_eq!(c.ssthresh_on_loss(&Window { cwnd: 2.0, ssthresh: 2.0 }, 2, Time::ZERO), 2.0);
    }

    #[test]
    fn a_timeout_restarts_the_stage_at_its_inflection_point() {
        let (mut c, mut w) = after_loss_at_100();
        c.on_ack(&mut w, 1, Time::ZERO, Some(RTT));
        assert!(c.epoch.unwrap().k > 4.0);
        // A timeout at cwnd 80 with 80 outstanding: ssthresh = 56 as on a loss, and the stage
        // ends. The sender sets cwnd = 1 and slow start climbs back to ssthresh.
        w.ssthresh = c.ssthresh_on_timeout(&Window { cwnd: 80.0, ssthresh: 70.0 }, 80, Time::from_secs(1));
        assert_eq!((w.ssthresh, c.epoch), (56.0, None));
        w.cwnd = 1.0;
        let mut now = Time::from_secs(2);
        while w.cwnd < w.ssthresh {
            c.on_ack(&mut w, 1, now, Some(RTT));
            assert_eq!(c.epoch, None, "slow start is not a stage");
        }
        assert_eq!(w.cwnd, 56.0);
        // The first ACK in congestion avoidance: §4.8 K = 0, W_max = W_est = cwnd_epoch = 56,
        // whatever W_max was (68 after fast convergence).
        now += RTT;
        c.on_ack(&mut w, 1, now, Some(RTT));
        let e = c.epoch.unwrap();
        assert_eq!((e.start, e.cwnd, e.k, c.w_max), (now, 56.0, 0.0, 56.0));
        // W_est restarts at 56 and grows by α_cubic (56 is below cwnd_prior = 80), which at
        // t = 0 is above W_cubic(0) = 56: the Reno-friendly region, as after any loss.
        assert!((c.w_est - (56.0 + ALPHA / 56.0)).abs() < 1e-12);
        assert_eq!(w.cwnd, c.w_est);
        // One second on, the convex curve aims at W_cubic(1.1) = 0.4·1.1³ + 56 = 56.5324.
        let cwnd = w.cwnd;
        c.on_ack(&mut w, 1, now + Time::from_secs(1), Some(RTT));
        let target = 0.4 * 1.1 * 1.1 * 1.1 + 56.0;
        assert!((w.cwnd - (cwnd + (target - cwnd) / cwnd)).abs() < 1e-12, "{}", w.cwnd);
        // A later ordinary loss ends the timeout's special case: eq. 2 again.
        c.ssthresh_on_loss(&w, 60, now);
        assert!(!c.after_timeout);
    }

    #[test]
    fn a_timeout_in_fast_recovery_keeps_the_events_cwnd_prior() {
        // A loss at 100, then the timer fires in fast recovery with the window inflated to 170
        // and 170 segments outstanding: cwnd_prior stays 100, not 170.
        let (mut c, _) = after_loss_at_100();
        c.ssthresh_on_timeout(&Window { cwnd: 170.0, ssthresh: 70.0 }, 170, Time::from_secs(1));
        assert_eq!((c.cwnd_prior, c.after_timeout), (100.0, true));
        // A timeout in a congestion-avoidance stage is a new event: the window in use.
        let (mut c, mut w) = after_loss_at_100();
        c.on_ack(&mut w, 1, Time::ZERO, Some(RTT));
        c.ssthresh_on_timeout(&Window { cwnd: 120.0, ssthresh: 70.0 }, 120, Time::from_secs(1));
        assert_eq!(c.cwnd_prior, 120.0);
    }

    #[test]
    fn the_first_stage_without_a_loss_starts_at_its_inflection_point() {
        // Slow start ended at ssthresh (the receiver window) with no congestion event yet:
        // §4.10 K = 0, W_max = cwnd_epoch, and cwnd_prior = cwnd on leaving slow start.
        let mut c = Cubic::default();
        let mut w = Window { cwnd: 40.0, ssthresh: 40.0 };
        c.on_ack(&mut w, 1, Time::from_secs(3), Some(RTT));
        let e = c.epoch.unwrap();
        assert_eq!((e.k, c.w_max, c.cwnd_prior), (0.0, 40.0, 40.0));
    }
    #[test]
    fn an_application_limited_period_does_not_advance_the_curve() {
        // RFC 9438 §4.2: t excludes application-limited periods. A stage begun at 3 s, then 2 s
        // during which the window did not limit the sender (no growth hook called): at 6 s the
        // curve stands where it stood at 4 s without the pause.
        let start = |c: &mut Cubic| {
            c.w_max = 100.0;
            let mut w = Window { cwnd: 70.0, ssthresh: 70.0 };
            c.on_ack(&mut w, 1, Time::from_secs(3), Some(RTT));
        };
        let mut paused = Cubic::default();
        start(&mut paused);
        paused.on_app_limited(Time::from_secs(4), Time::from_secs(6));
        assert_eq!(paused.epoch.unwrap().start, Time::from_secs(5));
        let (mut plain, mut w1, mut w2) = (Cubic::default(), Window { cwnd: 80.0, ssthresh: 70.0 }, Window { cwnd: 80.0, ssthresh: 70.0 });
        start(&mut plain);
        plain.on_ack(&mut w1, 1, Time::from_secs(4), Some(RTT));
        paused.on_ack(&mut w2, 1, Time::from_secs(6), Some(RTT));
        assert_eq!(w1, w2);
        // A period that began before the stage only skips the part after its start.
        let mut c = Cubic::default();
        start(&mut c);
        c.on_app_limited(Time::from_secs(1), Time::from_secs(4));
        assert_eq!(c.epoch.unwrap().start, Time::from_secs(4));
        // No stage under way (fast recovery, slow start): nothing to shift.
        let mut c = Cubic::default();
        c.on_app_limited(Time::from_secs(1), Time::from_secs(4));
        assert_eq!(c.epoch, None);
    }
}
