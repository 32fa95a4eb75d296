//! DCTCP: Data Center TCP's sender (RFC 8257 §3.3; Alizadeh et al., "Data Center TCP",
//! SIGCOMM 2010, §3.2): a window that shrinks in proportion to the extent of congestion, the
//! fraction of its data the network marked, instead of halving at any mark.
//!
//! Read first: [`super`] (the window arithmetic it shares with Reno), RFC 8257 §3.3, and the
//! receiver's half in [`crate::tcp::receiver`] (its ECN-Echo follows every CE change at once,
//! §3.2). Owns α's estimate and the reduction it gives; must not know how a mark was made
//! (a step marker, `queue = "step"`, is DCTCP's switch rule) or how ACKs arrive.
//!
//! The rules, in RFC 8257 §3.3's terms:
//! - Per ACK: `BytesAcked` (here segments) newly acknowledged; if the ACK carries ECE, they
//!   count as `BytesMarked` too.
//! - An observation window ends when the cumulative ACK reaches `WindowEnd` (SND.NXT when the
//!   window began, about one round trip): `M = BytesMarked / BytesAcked`,
//!   `α ← (1 − g)·α + g·M`, the counters restart and `WindowEnd ← SND.NXT`.
//! - At an ECN-Echo, once per window of data as RFC 3168 asks (the sender enforces that), the
//!   window becomes `cwnd · (1 − α/2)` — not below two segments (Linux's `dctcp_ssthresh`).
//! - A loss is answered as standard TCP answers it (§3.3: "as per RFC 5681"): halving.
//! - Window growth is Reno's (slow start, then one segment per round trip).
//!
//! Where Linux and the RFC differ this follows Linux (`dctcp_update_alpha`): the window ends
//! at the ACK that covers all of it (`snd_una ≥ next_seq`), where §3.3's step 4 waits for an
//! ACK beyond it.
//!
//! Settings: g = 1/16 (§4.2's suggestion, and Linux's `dctcp_shift_g` = 4), α starts at 1
//! (§3.3: the conservative choice; Linux's `dctcp_alpha_on_init` default). α is kept as a
//! float: the update is one multiply and one add per round trip, exact to IEEE rounding and
//! the same on every machine.

use super::reno::Reno;
use super::{CongestionControl, Window};
use crate::units::Time;

/// RFC 8257 §4.2: "g = 1/16".
pub const G: f64 = 1.0 / 16.0;

#[derive(Clone, Debug)]
pub struct Dctcp {
    /// The estimate of the fraction of data marked, in [0, 1].
    alpha: f64,
    /// Segments acknowledged, and of those by ECE-carrying ACKs, in the current window.
    acked: u64,
    marked: u64,
    /// The cumulative ACK that ends the current observation window (None: not begun).
    window_end: Option<u32>,
}

impl Default for Dctcp {
    fn default() -> Dctcp {
        Dctcp { alpha: 1.0, acked: 0, marked: 0, window_end: None }
    }
}

impl Dctcp {
    /// The current estimate α.
    pub fn alpha(&self) -> f64 {
        self.alpha
    }
}

impl CongestionControl for Dctcp {
    #[inline]
    fn on_ack(&mut self, w: &mut Window, acked: u32, now: Time, srtt: Option<Time>) {
        Reno.on_ack(w, acked, now, srtt);
    }

    /// §3.3: a loss is answered as standard TCP answers it.
    fn ssthresh_on_loss(&mut self, w: &Window, flight: u32, now: Time) -> f64 {
        Reno.ssthresh_on_loss(w, flight, now)
    }

    /// §3.3: cwnd · (1 − α/2), at least two segments.
    fn ssthresh_on_ecn(&mut self, w: &Window, _flight: u32, _now: Time) -> f64 {
        (w.cwnd * (1.0 - self.alpha / 2.0)).max(2.0)
    }

    fn on_ecn_ack(&mut self, acked: u32, ece: bool, snd_una: u32, snd_nxt: u32) {
        self.acked += acked as u64;
        if ece {
            self.marked += acked as u64;
        }
        let end = *self.window_end.get_or_insert(snd_nxt);
        if snd_una < end {
            return;
        }
        // The window is over: fold its fraction in (none acknowledged: nothing to learn).
        if self.acked > 0 {
            let m = self.marked as f64 / self.acked as f64;
            self.alpha = (1.0 - G) * self.alpha + G * m;
        }
        (self.acked, self.marked) = (0, 0);
        self.window_end = Some(snd_nxt);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One window of `n` single-segment ACKs, `marked` of them with ECE, the sender keeping
    /// `n` segments out: the ACK of the window's last segment closes it.
    fn window(d: &mut Dctcp, first: u32, n: u32, marked: u32) -> u32 {
        for k in 0..n {
            let una = first + k + 1;
            d.on_ecn_ack(1, k < marked, una, una + n);
        }
        first + n
    }

    /// RFC 8257 §3.3: α ← (1 − g)α + gM once per window, from α = 1: a window with no marks
    /// takes 1/16 off, the exact sequence 15/16, (15/16)², …; a fully marked one adds g(1 − α).
    #[test]
    fn alpha_follows_the_rfc_update_once_per_window() {
        let mut d = Dctcp::default();
        // The first ACK starts the first window (its end: SND.NXT then).
        d.on_ecn_ack(1, false, 1, 11);
        assert_eq!(d.alpha(), 1.0);
        let mut una = 1;
        una = window(&mut d, una, 10, 0);
        assert_eq!(d.alpha(), 15.0 / 16.0);
        una = window(&mut d, una, 10, 0);
        assert_eq!(d.alpha(), (15.0 / 16.0) * (15.0 / 16.0));
        let before = d.alpha();
        una = window(&mut d, una, 10, 10);
        assert_eq!(d.alpha(), (1.0 - G) * before + G);
        // Half marked: M = 1/2.
        let before = d.alpha();
        window(&mut d, una, 10, 5);
        assert_eq!(d.alpha(), (1.0 - G) * before + G * 0.5);
    }

    /// Mid-window ACKs change nothing but the counters: α moves only when the window closes.
    #[test]
    fn alpha_stays_put_inside_a_window() {
        let mut d = Dctcp::default();
        d.on_ecn_ack(1, false, 1, 21);
        for una in 2..21 {
            d.on_ecn_ack(1, true, una, 21);
            assert_eq!(d.alpha(), 1.0);
        }
        // The ACK of segment 20 covers the window: 21 segments acknowledged, 19 by ECE.
        d.on_ecn_ack(1, false, 21, 41);
        assert_eq!(d.alpha(), (1.0 - G) + G * (19.0 / 21.0));
    }

    /// The reduction at a mark is α/2 of the window: none when nothing was marked for long
    /// (α → 0), a halving at α = 1, and never below two segments; a loss still halves.
    #[test]
    fn the_window_shrinks_by_half_alpha_at_a_mark_and_halves_at_a_loss() {
        let w = Window { cwnd: 40.0, ssthresh: 100.0 };
        let mut d = Dctcp::default();
        assert_eq!(d.ssthresh_on_ecn(&w, 40, Time::ZERO), 20.0);
        d.alpha = 0.25;
        assert_eq!(d.ssthresh_on_ecn(&w, 40, Time::ZERO), 35.0);
        d.alpha = 0.0;
        assert_eq!(d.ssthresh_on_ecn(&w, 40, Time::ZERO), 40.0);
        d.alpha = 1.0;
        assert_eq!(d.ssthresh_on_ecn(&Window { cwnd: 3.0, ssthresh: 3.0 }, 3, Time::ZERO), 2.0);
        assert_eq!(d.ssthresh_on_loss(&w, 40, Time::ZERO), 20.0);
    }

    /// Unmarked for k windows, α = (15/16)^k: after 60 windows below 2 %, so a DCTCP flow on
    /// an uncongested path reduces by about 1 % at a stray mark.
    #[test]
    fn alpha_decays_geometrically_without_marks() {
        let mut d = Dctcp::default();
        d.on_ecn_ack(1, false, 1, 2);
        let mut una = 1;
        for _ in 0..60 {
            una = window(&mut d, una, 1, 0);
        }
        let expected = (0..60).fold(1.0f64, |a, _| (1.0 - G) * a);
        assert_eq!(d.alpha(), expected);
        assert!(d.alpha() < 0.021);
    }
}
