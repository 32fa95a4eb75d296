//! BIC-TCP (Xu, Harfoush and Rhee, "Binary Increase Congestion Control for Fast, Long
//! Distance Networks", INFOCOM 2004) as Linux's `tcp_bic.c` implements it; window in segments.
//!
//! Read first: the paper's §3 (binary search increase, additive increase bounded by S_max,
//! max probing), then `tcp_bic.c` of Linux 2.6.8–2.6.18, where BIC was the default (the
//! thesis's testbed hosts ran Debian 4.0, kernel 2.6.18); the parameters below are that file's
//! module defaults. In congestion avoidance each ACK adds 1/cnt segment, i.e. cwnd/cnt segments per
//! round trip, with cnt from the integer window c = ⌊cwnd⌋ and the last maximum
//! `last_max_cwnd` (W_max):
//!
//! - c ≤ low_window = 14: cnt = c, Reno's one segment per round trip (TCP friendliness).
//! - Binary search, c < W_max: the step is dist = (W_max − c)/B with B = 4. dist > 16
//!   (max_increment): cnt = c/16, the additive increase of S_max = 16 segments per round trip.
//!   dist ≤ 1: cnt = c·smooth_part/B = 5c, the plateau's 0.2 segment per round trip. Otherwise
//!   cnt = c/dist, dist segments per round trip.
//! - Max probing, c ≥ W_max: within B of it, the plateau's 0.2; below W_max + 16·(B − 1) =
//!   W_max + 48, cnt = c·(B − 1)/(c − W_max), a third of the distance per round trip (the
//!   paper's "slow start" away from the old maximum); beyond, S_max again.
//! - Before the first loss: cnt ≤ 20, at least 5 % growth per round trip.
//! - ACK ratio: cnt = cnt·16/delayed_ack, where delayed_ack is an EWMA (gain 1/16) of
//!   segments per ACK in fixed point ×16 (ACK_RATIO_SHIFT = 4), so that an ACK every second
//!   segment does not halve the growth. It starts at 2 (32) and, as in Linux, it is integer
//!   arithmetic: with one segment per ACK it falls to 31 and stays there (31 − ⌊31/16⌋ + 1
//!   = 31), so against a receiver that ACKs every segment BIC grows about 1.94 times the rates
//!   above, in this model as in Linux. The c ≤ 14 rule comes before this correction and
//!   before the 5 % clamp, so it is Reno's exactly.
//! - A loss at window c: W_max = c, or with fast convergence, if c < W_max, c·(1 + β)/2 =
//!   c·(1024 + 819)/2048; ssthresh = c·819/1024 (β = 819/1024 ≈ 0.8), or max(c/2, 2) when
//!   c ≤ 14. All integer divisions, as in the C.
//! - A timeout: ssthresh as on a loss, then the state is forgotten, W_max and the ACK ratio
//!   included (Linux resets it on entering the Loss state, after computing ssthresh).
//!
//! The paper's binary search aims at the midpoint (W_max + W_min)/2, half the distance per
//! round trip; `tcp_bic.c` goes a quarter (B = 4), and so does this. The paper's S_min = 0.01
//! is no bound in `tcp_bic.c` (nor here): it enters only through smooth_part =
//! log(B/(B·S_min))/log(B/(B − 1)) + B = 20, the number of round trips the plateau takes from
//! W_max − B to W_max, so the slowest growth is B/smooth_part = 0.2 segment per round trip
//! (cnt ≤ 5c), well above S_min.
//!
//! Deliberate deviations from `tcp_bic.c`, and why:
//! - The window is fractional and grows by 1/cnt on each ACK, like the Reno arithmetic here;
//!   Linux counts ACKs and adds a whole segment after cnt + 1 of them (`snd_cwnd_cnt`), so
//!   it grows by 1/(cnt + 1) per ACK on average. One growth per ACK, whatever it covers, as
//!   2.6-era Linux (the ACK-ratio correction is what makes up for delayed ACKs).
//! - cnt is recomputed on every ACK; Linux keeps it for up to HZ/32 (31 ms) while the window
//!   is unchanged, a CPU saving that lets the ACK ratio's changes wait that long.
//! - The window at a loss is the window in use, min(⌊cwnd⌋, FlightSize) ([`window_in_use`]),
//!   where Linux reads `snd_cwnd`: Linux stops the window growing while the flow is not
//!   cwnd-limited (`tcp_is_cwnd_limited`), and the sender here does not.
//! - The ACK ratio is sampled on every ACK the controller sees, except those of the go-back-N
//!   after a timeout until all data outstanding at the timeout is acknowledged: Linux samples
//!   only in the Open state, and that stretch is its Loss state (the sender calls no hook in
//!   fast recovery). A cumulative ACK filling a hole there covers many segments and would
//!   swell the ratio. Linux's Disorder state (one or two duplicate ACKs) is not told apart:
//!   without reordering, a new ACK after one or two duplicates does not happen here.
//! - Slow start runs while cwnd < ssthresh (RFC 5681, shared with Reno); 2.6-era Linux used
//!   ≤. The module's `initial_ssthresh` is taken as 0 (unset, so the sender's initial
//!   ssthresh holds), its value in 2.6.18 and later; some earlier versions set 100.
//! - No `undo_cwnd`: the sender never undoes a reduction.

use super::{slow_start, window_in_use, CongestionControl, Window};
use crate::units::Time;

/// β in units of 1/1024: the window after a loss is cwnd·819/1024 ≈ 0.8·cwnd.
pub const BETA: u32 = 819;
pub const BETA_SCALE: u32 = 1024;
/// B: the binary search goes 1/B of the distance to W_max per round trip.
pub const B: u32 = 4;
/// S_max, segments per round trip.
pub const MAX_INCREMENT: u32 = 16;
/// At or below this window (segments), BIC is Reno.
pub const LOW_WINDOW: u32 = 14;
/// Round trips of the plateau from W_max − B to W_max.
pub const SMOOTH_PART: u32 = 20;
/// The ACK ratio's fixed point: segments per ACK × 2^4.
pub const ACK_RATIO_SHIFT: u32 = 4;

/// BIC's state (`struct bictcp`). Fields are public so tests can set a state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bic {
    /// `last_max_cwnd`, segments: W_max, the window at the last loss (lowered by fast
    /// convergence); 0 before the first loss and after a timeout.
    pub last_max_cwnd: u32,
    /// `loss_cwnd`, segments: the window at the last loss; 0 before the first loss and after
    /// a timeout (then cnt is clamped to 20).
    pub loss_cwnd: u32,
    /// `delayed_ack`: segments per ACK × 16, an EWMA of gain 1/16.
    pub delayed_ack: u32,
    /// Segments still to be acknowledged from the timeout's window (Linux's Loss state), during
    /// which ACKs are not sampled for the ratio; 0 otherwise.
    pub loss_state_left: u32,
}

impl Default for Bic {
    /// `bictcp_reset`: no maximum yet, an ACK ratio of 2.
    fn default() -> Bic {
        Bic { last_max_cwnd: 0, loss_cwnd: 0, delayed_ack: 2 << ACK_RATIO_SHIFT, loss_state_left: 0 }
    }
}

impl Bic {
    /// ACKs per one-segment increase at integer window `c` (`bictcp_update`'s cnt), at
    /// least 1.
    pub fn cnt(&self, c: u32) -> u32 {
        if c <= LOW_WINDOW {
            // Reno below low_window, before the clamp and the ratio correction.
            return c.max(1);
        }
        let w_max = self.last_max_cwnd;
        let mut cnt = if c < w_max {
            // Binary search increase.
            let dist = (w_max - c) / B;
            if dist > MAX_INCREMENT {
                c / MAX_INCREMENT
            } else if dist <= 1 {
                c * SMOOTH_PART / B
            } else {
                c / dist
            }
        } else if c < w_max + B {
            // Max probing: the plateau just above the old maximum.
            c * SMOOTH_PART / B
        } else if c < w_max + MAX_INCREMENT * (B - 1) {
            // Max probing: growth a third of the distance from the old maximum per RTT.
            c * (B - 1) / (c - w_max)
        } else {
            c / MAX_INCREMENT
        };
        if self.loss_cwnd == 0 {
            // No loss yet ("slow start or link utilization is very low"): ≥ 5 % per RTT.
            cnt = cnt.min(20);
        }
        // The ACK-ratio correction.
        ((cnt << ACK_RATIO_SHIFT) / self.delayed_ack).max(1)
    }

    /// `bictcp_acked`: one ACK covering `acked` segments, as Linux samples it in the Open
    /// state: ratio += acked − ratio/16, in integers.
    fn sample_ack_ratio(&mut self, acked: u32) {
        if self.loss_state_left > 0 {
            // The Loss state ends once everything outstanding at the timeout is acknowledged;
            // the ACK that ends it is still in it (Linux leaves the state after sampling).
            self.loss_state_left = self.loss_state_left.saturating_sub(acked);
            return;
        }
        self.delayed_ack = self.delayed_ack - (self.delayed_ack >> ACK_RATIO_SHIFT) + acked;
    }
}

impl CongestionControl for Bic {
    fn on_ack(&mut self, w: &mut Window, acked: u32, _now: Time, _srtt: Option<Time>) {
        // Linux samples the ratio (`pkts_acked`) before it grows the window (`cong_avoid`).
        self.sample_ack_ratio(acked);
        if w.cwnd < w.ssthresh {
            slow_start(w, acked);
            return;
        }
        let cnt = self.cnt(w.cwnd as u32);
        w.cwnd += 1.0 / cnt as f64;
    }

    /// `bictcp_recalc_ssthresh`.
    fn ssthresh_on_loss(&mut self, w: &Window, flight: u32, _now: Time) -> f64 {
        let c = window_in_use(w, flight) as u32;
        // Fast convergence: a loss below the last maximum lowers it further, to the midpoint
        // of c and βc, so the flow yields bandwidth to newer flows sooner.
        self.last_max_cwnd =
            if c < self.last_max_cwnd { c * (BETA_SCALE + BETA) / (2 * BETA_SCALE) } else { c };
        self.loss_cwnd = c;
        self.loss_state_left = 0;
        let ssthresh = if c <= LOW_WINDOW { c / 2 } else { c * BETA / BETA_SCALE };
        ssthresh.max(2) as f64
    }

    /// Linux computes ssthresh as on a loss (`tcp_enter_loss`), then resets BIC on entering
    /// the Loss state (`bictcp_state`): no maximum, the ACK ratio back to 2.
    fn ssthresh_on_timeout(&mut self, w: &Window, flight: u32, now: Time) -> f64 {
        let ssthresh = self.ssthresh_on_loss(w, flight, now);
        *self = Bic { loss_state_left: flight, ..Bic::default() };
        ssthresh
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// BIC after a loss at `w_max` (so past its first loss), sampling one segment per ACK
    /// as exactly 1 (ratio 16): the rates of the file header without the correction.
    fn searching(w_max: u32) -> Bic {
        Bic { last_max_cwnd: w_max, loss_cwnd: w_max, delayed_ack: 16, loss_state_left: 0 }
    }

    /// Plays `rtts` round trips with one ACK per segment in flight (⌊cwnd⌋ per round trip);
    /// returns the window after each. The ratio is pinned at 1 (`searching`).
    fn round_trips(bic: &mut Bic, cwnd: f64, rtts: usize) -> Vec<f64> {
        let mut w = Window { cwnd, ssthresh: 1.0 };
        let mut out = vec![cwnd];
        for _ in 0..rtts {
            for _ in 0..w.cwnd as u32 {
                bic.delayed_ack = 16;
                bic.on_ack(&mut w, 1, Time::ZERO, None);
            }
            out.push(w.cwnd);
        }
        out
    }

    // ---- Binary search (below W_max) ----

    #[test]
    fn binary_search_steps_a_quarter_of_the_distance_bounded_by_s_max() {
        let bic = searching(200);
        // c = 160: dist = 40/4 = 10 segments per RTT, cnt = 160/10 = 16.
        assert_eq!(bic.cnt(160), 16);
        // c = 191: dist = 9/4 = 2, cnt = 191/2 = 95 (≈ 2 per RTT).
        assert_eq!(bic.cnt(191), 95);
        // Far below: dist = (256 − 128)/4 = 32 > 16, so S_max: cnt = 128/16 = 8, 16 per RTT.
        assert_eq!(searching(256).cnt(128), 8);
        // One ACK adds 1/cnt exactly.
        let mut b = searching(200);
        let mut w = Window { cwnd: 160.0, ssthresh: 100.0 };
        b.on_ack(&mut w, 1, Time::ZERO, None);
        // on_ack sampled the ratio: 16 − 1 + 1 = 16, unchanged.
        assert_eq!((w.cwnd, b.delayed_ack), (160.0625, 16));
    }

    #[test]
    fn after_a_loss_the_window_climbs_at_s_max_then_halves_in_on_w_max() {
        // A loss at W_max = 1000 leaves ssthresh = cwnd = 1000·819/1024 = 799.
        let mut bic = searching(0);
        bic.loss_cwnd = 1;
        let ssthresh = bic.ssthresh_on_loss(&Window { cwnd: 1000.0, ssthresh: 2000.0 }, 1000, Time::ZERO);
        assert_eq!((ssthresh, bic.last_max_cwnd), (799.0, 1000));
        let path = round_trips(&mut bic, ssthresh, 60);
        for (i, pair) in path.windows(2).enumerate() {
            let (from, growth) = (pair[0], pair[1] - pair[0]);
            let dist = 1000.0 - from;
            if dist >= 90.0 {
                // Far from W_max (dist/4 > 16 for the whole round trip): the additive increase
                // S_max = 16 per RTT (cnt = ⌊c/16⌋ can round the rate up a little).
                assert!((15.5..16.5).contains(&growth), "RTT {i}: +{growth:.3} at {from:.1}");
            } else if (16.0..=68.0).contains(&dist) {
                // Binary search: a quarter of the distance per RTT, shrinking as the window
                // closes in within the round trip (in the continuous limit 1 − e^(−1/4) =
                // 0.22 of it), and ⌊dist/4⌋ rounds down.
                assert!(
                    growth >= 0.2 * dist && growth <= 0.25 * dist + 0.5,
                    "RTT {i}: +{growth:.3} of {dist:.1}"
                );
            } else if dist > 0.0 && dist <= 7.0 {
                // The plateau (dist = ⌊(W_max − c)/4⌋ ≤ 1): 0.2 per RTT (0.198 in a round trip
                // where ⌊cwnd⌋ steps up, its ACKs counted at the start).
                assert!((growth - 0.2).abs() < 0.005, "RTT {i}: +{growth:.6} at {from:.2}");
            }
            assert!(growth <= 16.5, "never faster than S_max below W_max");
        }
        // smooth_part: from W_max − B to W_max takes 20 round trips.
        let at = |x: f64| path.iter().position(|&c| c >= x).unwrap();
        assert_eq!(at(1000.0) - at(996.0), SMOOTH_PART as usize);
        // S_max from 799 to within 4·16 of W_max takes 8 RTTs; the search within 8 of it 10 more.
        assert_eq!(at(926.9), 8);
        assert!((16..=19).contains(&at(993.0)), "{}", at(993.0));
    }

    // ---- Max probing (above W_max) ----

    #[test]
    fn max_probing_leaves_the_old_maximum_slowly_then_faster() {
        let bic = searching(100);
        // Within B = 4 of W_max: the plateau, cnt = 102·20/4 = 510 (0.2 per RTT).
        assert_eq!(bic.cnt(102), 510);
        // Up to W_max + 48: a third of the distance per RTT, cnt = 110·3/10 = 33 (≈ 3.3).
        assert_eq!(bic.cnt(110), 33);
        assert_eq!(bic.cnt(147), 9); // 441/47
                                     // Beyond: S_max, cnt = 148/16 = 9.
        assert_eq!(bic.cnt(148), 9);
        // Over round trips the growth rises from 0.2 to S_max.
        let path = round_trips(&mut searching(100), 100.0, 40);
        let growth: Vec<f64> = path.windows(2).map(|p| p[1] - p[0]).collect();
        assert!((growth[0] - 0.2).abs() < 1e-9);
        assert!(growth[..20].iter().all(|g| (g - 0.2).abs() < 0.005), "20 RTTs of plateau: {growth:?}");
        assert!(growth.last().unwrap() > &15.0, "{growth:?}");
        assert!(growth.windows(2).all(|g| g[1] >= g[0] - 1.0), "{growth:?}");
    }

    // ---- Reno below low_window, and the reduction ----

    #[test]
    fn at_or_below_low_window_bic_is_reno() {
        // cnt = c whatever the ratio or the first-loss clamp: +1/cwnd per ACK.
        let mut bic = Bic::default();
        assert_eq!(bic.delayed_ack, 32);
        let mut w = Window { cwnd: 10.0, ssthresh: 5.0 };
        bic.on_ack(&mut w, 1, Time::ZERO, None);
        assert_eq!(w.cwnd, 10.1);
        assert_eq!(bic.cnt(14), 14);
        // A loss halves it: 14 → 7; 3 → max(1, 2) = 2. At 15 it is β: 15·819/1024 = 11.
        for (c, ssthresh) in [(14, 7.0), (3, 2.0), (15, 11.0)] {
            let w = Window { cwnd: c as f64, ssthresh: 100.0 };
            assert_eq!(Bic::default().ssthresh_on_loss(&w, c, Time::ZERO), ssthresh, "c = {c}");
        }
    }

    #[test]
    fn a_loss_leaves_beta_of_the_window_and_remembers_it() {
        let mut bic = Bic::default();
        let w = Window { cwnd: 100.0, ssthresh: 200.0 };
        // 100·819/1024 = 79.98: 79 in integers.
        assert_eq!(bic.ssthresh_on_loss(&w, 100, Time::ZERO), 79.0);
        assert_eq!((bic.last_max_cwnd, bic.loss_cwnd), (100, 100));
        // The window in use is FlightSize when cwnd grew past what the receiver allowed.
        let mut bic = Bic::default();
        let w = Window { cwnd: 500.7, ssthresh: 30.0 };
        assert_eq!(bic.ssthresh_on_loss(&w, 64, Time::ZERO), 51.0); // 64·819/1024 = 51.2
        assert_eq!(bic.last_max_cwnd, 64);
    }

    #[test]
    fn fast_convergence_lowers_w_max_after_a_loss_below_it() {
        let mut bic = Bic::default();
        bic.ssthresh_on_loss(&Window { cwnd: 100.0, ssthresh: 200.0 }, 100, Time::ZERO);
        // The next loss at 90 < 100: W_max = 90·1843/2048 = 80.99 → 80; ssthresh =
        // 90·819/1024 = 71.98 → 71.
        let ssthresh = bic.ssthresh_on_loss(&Window { cwnd: 90.0, ssthresh: 79.0 }, 90, Time::ZERO);
        assert_eq!((ssthresh, bic.last_max_cwnd, bic.loss_cwnd), (71.0, 80, 90));
        // A loss at or above W_max: W_max = the window.
        bic.ssthresh_on_loss(&Window { cwnd: 85.0, ssthresh: 71.0 }, 85, Time::ZERO);
        assert_eq!(bic.last_max_cwnd, 85);
    }

    #[test]
    fn before_the_first_loss_growth_is_at_least_five_percent_per_rtt() {
        let mut bic = Bic { delayed_ack: 16, ..Bic::default() };
        // No maximum: max probing, c ≥ 48 gives c/16, here 400/16 = 25, clamped to 20.
        assert_eq!(bic.cnt(400), 20);
        // Below 48 above the (zero) maximum: a third of c per RTT, cnt = 3.
        assert_eq!(bic.cnt(20), 3);
        bic.loss_cwnd = 400;
        assert_eq!(bic.cnt(400), 25);
    }

    // ---- The ACK ratio ----

    #[test]
    fn the_ack_ratio_settles_at_31_sixteenths_with_one_segment_per_ack() {
        // Integer EWMA from 32 (ratio 2): 32 − 2 + 1 = 31, then 31 − 1 + 1 = 31 for ever.
        let mut bic = Bic::default();
        let mut w = Window { cwnd: 2.0, ssthresh: 100.0 };
        for _ in 0..100 {
            bic.on_ack(&mut w, 1, Time::ZERO, None);
        }
        assert_eq!(bic.delayed_ack, 31);
        // So cnt is scaled by 16/31: at W_max − 40 (10 per RTT nominal, cnt 16), cnt = 8.
        bic.last_max_cwnd = 200;
        bic.loss_cwnd = 200;
        assert_eq!(bic.cnt(160), 16 * 16 / 31);
        // Delayed ACKs (two segments per ACK) bring it to 32 (ratio 2), which halves cnt and
        // so keeps the per-RTT growth with half the ACKs.
        for _ in 0..100 {
            bic.on_ack(&mut w, 2, Time::ZERO, None);
        }
        assert_eq!(bic.delayed_ack, 32);
        assert_eq!(bic.cnt(160), 8);
    }

    #[test]
    fn a_timeout_forgets_the_maximum_and_ignores_the_go_back_n_acks() {
        let mut bic = searching(200);
        bic.delayed_ack = 31;
        // A timeout with 150 segments outstanding: ssthresh as on a loss (150·819/1024 =
        // 119.97 → 119), then the reset.
        let ssthresh = bic.ssthresh_on_timeout(&Window { cwnd: 150.0, ssthresh: 160.0 }, 150, Time::ZERO);
        assert_eq!(ssthresh, 119.0);
        assert_eq!(bic, Bic { loss_state_left: 150, ..Bic::default() });
        // Going back N, an ACK that fills the hole covers 60 segments the receiver held: in
        // the Loss state, not sampled; nor is the one that completes the timeout's window.
        let mut w = Window { cwnd: 1.0, ssthresh };
        bic.on_ack(&mut w, 60, Time::ZERO, None);
        bic.on_ack(&mut w, 90, Time::ZERO, None);
        assert_eq!((bic.delayed_ack, bic.loss_state_left), (32, 0));
        // Back in the Open state, ACKs are sampled again.
        bic.on_ack(&mut w, 1, Time::ZERO, None);
        assert_eq!(bic.delayed_ack, 31);
        // A fast retransmit also ends the Loss state (it starts a new event).
        let mut bic = Bic { loss_state_left: 10, ..Bic::default() };
        bic.ssthresh_on_loss(&Window { cwnd: 50.0, ssthresh: 60.0 }, 50, Time::ZERO);
        assert_eq!(bic.loss_state_left, 0);
    }
}
