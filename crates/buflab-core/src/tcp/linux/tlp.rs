//! The tail loss probe (RFC 8985 §7), as Linux sends it (`tcp_schedule_loss_probe`,
//! `tcp_send_loss_probe`, `tcp_process_tlp_ack`).
//!
//! Read first: RFC 8985 §7 and [`super`]. Owns the probe timeout (PTO) and the record of the
//! probe in flight; must not know the queue or the window: the sender says what is outstanding
//! and sends the probe, this file says when and what the ACKs that follow mean.
//!
//! RACK needs a delivery after a lost segment to find it; when the last segments of a flight
//! are lost nothing comes back, and without a probe only the RTO would repair them. So when a
//! sender in the Open or CWR state has data outstanding, it arms the probe timer instead of the
//! RTO (§7.2): after PTO of silence it sends one segment — new data if the application and the
//! receiver's window allow (even beyond cwnd), else the highest segment sent again — to make
//! the receiver ACK, and RACK or the SACK blocks do the rest (§7.3). Only one probe is out per
//! episode (`tlp_high_seq`). If the probe was a resend and the ACK that covers it moves past
//! it, a loss was repaired by the probe alone: the window is reduced once (§7.4: "invoke
//! congestion control"; Linux: enter CWR and leave it at once, cwnd = ssthresh).
//!
//! PTO (§7.2, Linux): 2·SRTT, plus `tcp_rto_min` (200 ms, RFC 8985's WCDelAckT) when a single
//! segment is outstanding (its ACK may be delayed) or else `TCP_TIMEOUT_MIN_US` (2 ms), in
//! whole jiffies; 1 s (`TCP_TIMEOUT_INIT`) before the first RTT sample; and never later than
//! the RTO would fire.

use super::rack::TIMEOUT_MIN;
use crate::tcp::rto::linux::to_jiffies;
use crate::units::Time;

/// The probe timeout before any RTT sample (`TCP_TIMEOUT_INIT`).
pub const PTO_INIT: Time = Time::from_secs(1);

/// §7.2: the probe timeout for `packets_out` segments outstanding, with the RTO due
/// `rto_left` from now (None: not running).
pub fn pto(srtt: Option<Time>, packets_out: u32, rto_min: Time, rto_left: Option<Time>) -> Time {
    let mut t = match srtt {
        Some(s) => to_jiffies(Time(2 * s.0) + if packets_out == 1 { rto_min } else { TIMEOUT_MIN }),
        None => PTO_INIT,
    };
    if let Some(left) = rto_left.filter(|l| *l > Time::ZERO) {
        t = t.min(to_jiffies(left));
    }
    t
}

/// The probe in flight, if any.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tlp {
    /// `tlp_high_seq`: one past the highest segment sent when the probe went, while its
    /// episode lasts.
    pub high_seq: Option<u32>,
    /// The probe resent a segment (rather than sending new data).
    pub resent: bool,
}

/// What an ACK says of the probe (`tcp_process_tlp_ack`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Nothing yet, or no probe out.
    Pending,
    /// The episode is over without a loss to answer.
    NoLoss,
    /// The probe repaired a loss: reduce the window once.
    Loss,
}

impl Tlp {
    /// A probe goes out while `high` segments have been sent in all.
    pub fn on_probe(&mut self, high: u32, resent: bool) {
        *self = Tlp { high_seq: Some(high), resent };
    }

    /// An ACK of `ack` arrives: `una_advanced` if it moved the cumulative ACK, `dup` if it
    /// carried nothing new at all (a pure duplicate, Linux's !FLAG_NOT_DUP without SACK news).
    pub fn on_ack(&mut self, ack: u32, una_advanced: bool, dup: bool) -> Verdict {
        let Some(high) = self.high_seq else { return Verdict::Pending };
        if ack < high {
            return Verdict::Pending;
        }
        let verdict = if !self.resent {
            // A probe of new data has been acknowledged.
            Verdict::NoLoss
        } else if ack > high {
            // The ACK moves past the probe: the original was lost and the probe repaired it.
            // (Linux resets `tlp_high_seq` in the window reduction.)
            Verdict::Loss
        } else if !una_advanced && dup {
            // A pure duplicate at the probe's edge: both the original and the probe arrived
            // (Linux's path without DSACK, which the model's receiver does not send).
            Verdict::NoLoss
        } else {
            return Verdict::Pending;
        };
        self.high_seq = None;
        verdict
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> Time {
        Time::from_ms(x)
    }

    #[test]
    fn pto_is_two_srtt_plus_a_margin_in_jiffies_and_never_after_the_rto() {
        let rto_min = ms(200);
        // 2 × 100 + 2 ms = 202 → 204 ms (4-ms jiffies).
        assert_eq!(pto(Some(ms(100)), 5, rto_min, None), ms(204));
        // One segment outstanding: its ACK may be delayed, add the minimum RTO: 400 ms.
        assert_eq!(pto(Some(ms(100)), 1, rto_min, None), ms(400));
        // No RTT sample yet: 1 s.
        assert_eq!(pto(None, 5, rto_min, None), ms(1000));
        // The RTO would fire first: probe then instead.
        assert_eq!(pto(Some(ms(100)), 5, rto_min, Some(ms(150))), ms(152));
        assert_eq!(pto(Some(ms(100)), 5, rto_min, Some(ms(300))), ms(204));
    }

    #[test]
    fn a_resent_probe_acked_beyond_it_was_a_repair() {
        // Segments 0..10 out, the last (9) lost: the probe resends 9 with high_seq = 10.
        let mut t = Tlp::default();
        t.on_probe(10, true);
        assert_eq!(t.on_ack(8, true, false), Verdict::Pending);
        // ACK 10 covers the probe exactly: it may be the original's ACK; wait.
        assert_eq!(t.on_ack(10, true, false), Verdict::Pending);
        // New data 10 acknowledged: past the probe, so the probe repaired a loss.
        assert_eq!(t.on_ack(11, true, false), Verdict::Loss);
        assert_eq!(t.high_seq, None);
    }

    #[test]
    fn a_duplicate_at_the_probe_means_nothing_was_lost() {
        // The original 9 arrived after all: its ACK (10), then the probe's duplicate (10).
        let mut t = Tlp::default();
        t.on_probe(10, true);
        assert_eq!(t.on_ack(10, true, false), Verdict::Pending);
        assert_eq!(t.on_ack(10, false, true), Verdict::NoLoss);
        // A probe of new data needs only its ACK.
        let mut t = Tlp::default();
        t.on_probe(11, false);
        assert_eq!(t.on_ack(11, true, false), Verdict::NoLoss);
    }
}
