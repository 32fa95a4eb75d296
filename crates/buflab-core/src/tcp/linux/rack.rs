//! RACK, time-based loss detection (RFC 8985 §6), as Linux runs it (`tcp_recovery.c`).
//!
//! Read first: RFC 8985 §2–6 and [`super::sent`]. Owns RACK's state (the most recently sent
//! segment known delivered, its RTT, whether reordering has been seen) and its rules: the
//! reordering window, which outstanding segments are lost, and when to look again. Must not
//! know congestion states or the window: the sender tells it whether recovery is under way and
//! how many segments are SACKed, and acts on what it marks.
//!
//! The idea (§3): a segment is lost if a segment sent after it has been delivered and more than
//! RACK.rtt + reo_wnd has passed since it was sent. Ordering by send time rather than by
//! sequence applies to retransmissions as well as to new data, so a lost retransmission is
//! found one RTT after it was sent rather than by a timeout.
//!
//! Rules, and where they come from:
//! - §6.2 step 2, `tcp_rack_advance`: for each segment newly delivered (cumulatively or by
//!   SACK), RACK.rtt = now − its send time, and RACK.xmit_ts/end_seq move to it if it was sent
//!   later; a resent segment delivered sooner than the minimum RTT after its resend is ignored
//!   (the ACK is probably for the original). Here the sender hands over the most recently sent
//!   of the segments an ACK delivers, which is what processing them "in ascending order of
//!   Segment.xmit_ts" leaves behind.
//! - §6.2 step 3: reordering is seen when a segment never resent is delivered below the
//!   highest delivered one (`tcp_check_sack_reordering`). Paths here keep order, so only lost
//!   SACK information can make it so.
//! - §6.2 step 4, `tcp_rack_reo_wnd`: reo_wnd = min(min_RTT / 4, SRTT) (the multiplier of
//!   DSACK-driven adaptation stays 1: the model has no DSACK); but 0 while no reordering has
//!   been seen and either recovery is under way or at least DupThresh (3) segments are SACKed.
//! - §6.2 step 5, `tcp_rack_detect_loss`: every unSACKed segment sent before RACK.xmit_ts,
//!   and not already marked lost without a resend in flight, is lost once
//!   RACK.rtt + reo_wnd − (now − its send time) ≤ 0; for the others the largest such remainder
//!   is when to look again (§6.3).
//! - §6.3, `tcp_rack_mark_lost`: the reordering timer is armed for that remainder plus
//!   `TCP_TIMEOUT_MIN_US` (2 ms) in whole jiffies.

use super::sent::{sent_after, Judgement, SentQueue, Stamp};
use crate::tcp::rto::linux::to_jiffies;
use crate::tcp::sack::option::SackBlock;
use crate::units::Time;

/// RFC 6675's DupThresh, Linux's `tp->reordering` default (`sysctl_tcp_reordering` = 3).
pub const DUP_THRESH: u32 = 3;
/// `TCP_TIMEOUT_MIN_US`: added to the reordering timer's remainder.
pub const TIMEOUT_MIN: Time = Time::from_ms(2);

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Rack {
    /// RACK.xmit_ts (with RACK.end_seq's part, ordering sends of one instant: see
    /// [`sent_after`]): when the most recently sent segment known delivered left. None before
    /// the first.
    pub latest: Option<Stamp>,
    /// RACK.rtt: the RTT of the last valid delivery.
    pub rtt: Time,
    /// RACK.fack: one past the highest segment delivered.
    pub fack: u32,
    /// RACK.reordering_seen (Linux `reord_seen`).
    pub reordering_seen: bool,
    /// Set when RACK.xmit_ts moved since the last detection (Linux `rack.advanced`).
    pub advanced: bool,
}

impl Rack {
    /// §6.2 step 2: the segment sent (last) at `sent` is the most recently sent segment the ACK
    /// arriving at `now` delivered; `resent` if it was ever sent twice.
    pub fn advance(&mut self, now: Time, min_rtt: Option<Time>, sent: Stamp, resent: bool) {
        let rtt = now - sent.0;
        if resent && min_rtt.is_none_or(|m| rtt < m) {
            return;
        }
        self.rtt = rtt;
        self.advanced = true;
        if self.latest.is_none_or(|l| sent_after(sent, l)) {
            self.latest = Some(sent);
        }
    }

    /// §6.2 step 3: `seq` was delivered now; `resent` if it was ever sent twice.
    pub fn note_delivered(&mut self, seq: u32, resent: bool) {
        if seq < self.fack {
            if !resent {
                self.reordering_seen = true;
            }
        } else {
            self.fack = seq + 1;
        }
    }

    /// §6.2 step 4: the reordering window. `recovering`: fast recovery or the loss state after
    /// a timeout; `sacked`: segments SACKed now.
    pub fn reo_wnd(&self, recovering: bool, sacked: u32, min_rtt: Option<Time>, srtt: Option<Time>) -> Time {
        if !self.reordering_seen && (recovering || sacked >= DUP_THRESH) {
            return Time::ZERO;
        }
        let quarter = min_rtt.map_or(Time::ZERO, |m| Time(m.0 / 4));
        srtt.map_or(quarter, |s| quarter.min(s))
    }

    /// §6.2 step 5: marks lost the segments of `q` sent before RACK.xmit_ts whose time is up,
    /// RACK.rtt + reo_wnd after they were sent. `sacked` are the SACKed ranges of `q` (the
    /// scoreboard's). Returns how many it marked and, if others wait, the longest remainder
    /// (§6.3).
    pub fn detect_loss(
        &self,
        q: &mut SentQueue,
        sacked: &[SackBlock],
        now: Time,
        reo_wnd: Time,
    ) -> (u32, Option<Time>) {
        let Some(latest) = self.latest else { return (0, None) };
        q.judge_losses(sacked, |s| {
            if !sent_after(latest, s.stamp()) {
                return Judgement::Later;
            }
            // remaining = RACK.rtt + reo_wnd − (now − xmit), in picoseconds.
            let due = s.xmit + self.rtt + reo_wnd;
            if due <= now {
                Judgement::Lost
            } else {
                Judgement::Wait(due - now)
            }
        })
    }
}

/// §6.3: how long the reordering timer waits for a remainder `left` (Linux:
/// `usecs_to_jiffies(timeout + TCP_TIMEOUT_MIN_US)`).
pub fn reorder_timeout(left: Time) -> Time {
    to_jiffies(left + TIMEOUT_MIN)
}

#[cfg(test)]
mod tests {
    //! Segments 0..10 sent 1 ms apart (segment s at s ms); the tests deliver some and ask RACK.
    use super::*;
    use crate::tcp::linux::sent::{EVER_RETRANS, LOST, SACKED};

    fn ms(x: u64) -> Time {
        Time::from_ms(x)
    }

    fn queue() -> SentQueue {
        let mut q = SentQueue::default();
        for s in 0..10 {
            q.on_sent(s, ms(s as u64), false, false);
        }
        q
    }

    /// The SACKed ranges of `q`, as the scoreboard keeps them.
    fn ranges(q: &SentQueue) -> Vec<SackBlock> {
        let mut v: Vec<SackBlock> = Vec::new();
        for seq in q.una()..q.high() {
            if q.get(seq).is(SACKED) {
                match v.last_mut() {
                    Some(r) if r.end == seq => r.end += 1,
                    _ => v.push(SackBlock::new(seq, seq + 1)),
                }
            }
        }
        v
    }

    /// RACK's loss detection on `q` (with its SACKed ranges).
    fn detect(r: &Rack, q: &mut SentQueue, now: Time, reo_wnd: Time) -> (u32, Option<Time>) {
        let sacked = ranges(q);
        r.detect_loss(q, &sacked, now, reo_wnd)
    }

    /// SACKs `seqs` at `now` and advances RACK on the latest of them.
    fn sack(q: &mut SentQueue, r: &mut Rack, now: Time, seqs: &[u32]) {
        for &s in seqs {
            let before = q.mark_sacked(s);
            r.note_delivered(s, before.is(EVER_RETRANS));
        }
        let &last = seqs.iter().max().unwrap();
        r.advance(now, Some(ms(100)), q.get(last).stamp(), false);
    }

    #[test]
    fn reordering_window_is_a_quarter_of_min_rtt_until_dupthresh_or_recovery() {
        let r = Rack::default();
        let (min_rtt, srtt) = (Some(ms(100)), Some(ms(150)));
        assert_eq!(r.reo_wnd(false, 0, min_rtt, srtt), ms(25));
        assert_eq!(r.reo_wnd(false, 2, min_rtt, srtt), ms(25));
        // Three SACKed segments (DupThresh) or recovery under way: no settling delay.
        assert_eq!(r.reo_wnd(false, 3, min_rtt, srtt), Time::ZERO);
        assert_eq!(r.reo_wnd(true, 0, min_rtt, srtt), Time::ZERO);
        // Bounded by SRTT (when the minimum RTT is old and large).
        assert_eq!(r.reo_wnd(false, 0, Some(ms(100)), Some(ms(20))), ms(20));
        // Once reordering has been seen, the window stays open even in recovery.
        let seen = Rack { reordering_seen: true, ..Rack::default() };
        assert_eq!(seen.reo_wnd(true, 5, min_rtt, srtt), ms(25));
    }

    #[test]
    fn a_hole_is_lost_once_rack_rtt_plus_the_window_has_passed_since_it_was_sent() {
        // 0 is lost; 1 is SACKed at 101 ms (RACK.rtt = 100 ms). With reo_wnd = 25 ms, segment 0
        // (sent at 0) is lost at 0 + 100 + 25 = 125 ms: at 101 ms, 24 ms remain.
        let (mut q, mut r) = (queue(), Rack::default());
        sack(&mut q, &mut r, ms(101), &[1]);
        assert_eq!(r.rtt, ms(100));
        assert_eq!(detect(&r, &mut q, ms(101), ms(25)), (0, Some(ms(24))));
        // The reordering timer: 24 + 2 ms, in whole 4-ms jiffies.
        assert_eq!(reorder_timeout(ms(24)), ms(28));
        assert_eq!(detect(&r, &mut q, ms(125), ms(25)), (1, None));
        assert!(q.get(0).is(LOST));
        // Segments sent after the latest delivered one are not judged: 2..9 stay.
        assert_eq!(q.lost_out, 1);
    }

    #[test]
    fn with_dupthresh_sacked_the_holes_below_are_lost_at_once() {
        // 0 and 2 are lost, 1, 3, 4, 5 SACKed at 105 ms: four SACKed segments, window 0. Every
        // hole sent before 5 has waited at least RACK.rtt: both are lost now, 6..9 are not judged.
        let (mut q, mut r) = (queue(), Rack::default());
        sack(&mut q, &mut r, ms(105), &[1, 3, 4, 5]);
        let wnd = r.reo_wnd(false, q.sacked_out, Some(ms(100)), Some(ms(100)));
        assert_eq!(wnd, Time::ZERO);
        assert_eq!(detect(&r, &mut q, ms(105), wnd), (2, None));
        assert!(q.get(0).is(LOST) && q.get(2).is(LOST) && !q.get(6).is(LOST));
        assert!(q.get(1).is(SACKED));
    }

    #[test]
    fn a_lost_retransmission_is_found_by_a_later_delivery() {
        // 0 is lost and resent at 150 ms; the resend is lost too. New segment 10, sent at 160 ms,
        // is SACKed at 260 ms: the resend of 0 left before it and RACK.rtt (100 ms) has passed
        // since, so it is lost again — no timeout needed.
        let (mut q, mut r) = (queue(), Rack::default());
        q.mark_lost(0);
        q.on_sent(0, ms(150), true, true);
        q.on_sent(10, ms(160), false, false);
        sack(&mut q, &mut r, ms(260), &[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
        assert_eq!(q.retrans_out, 1);
        assert_eq!(detect(&r, &mut q, ms(260), Time::ZERO), (1, None));
        assert_eq!((q.lost_out, q.retrans_out), (1, 0));
        assert_eq!(q.next_lost(0), Some(0));
    }

    #[test]
    fn a_resend_delivered_sooner_than_min_rtt_does_not_move_rack() {
        // The ACK of a segment resent 30 ms ago, with a minimum RTT of 100 ms, is for the
        // original: RACK ignores it (Linux's guard in `tcp_rack_advance`).
        let mut r = Rack::default();
        r.advance(ms(130), Some(ms(100)), (ms(100), 4), true);
        assert_eq!((r.latest, r.advanced), (None, false));
        r.advance(ms(230), Some(ms(100)), (ms(100), 4), true);
        assert_eq!((r.latest, r.rtt), (Some((ms(100), 4)), ms(130)));
    }

    #[test]
    fn reordering_is_seen_when_an_original_is_delivered_below_the_highest() {
        let mut r = Rack::default();
        r.note_delivered(5, false);
        r.note_delivered(3, true); // a resend: a repaired loss, not reordering
        assert!(!r.reordering_seen);
        r.note_delivered(4, false);
        assert!(r.reordering_seen);
    }
}
