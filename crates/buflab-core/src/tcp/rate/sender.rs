//! The sender's part in delivery-rate estimation, for a controller that runs on rate samples
//! (`CongestionControl::wants_rate_samples`, BBR). Senders of the other controllers have no
//! [`RateState`] (`TcpSender::rate` is None) and every function here returns at once for them.
//!
//! Read first: [`super::sample`] (the per-segment state and the samples) and the rate-based
//! hooks of [`crate::tcp::cc`]. This file is an `impl` block of [`TcpSender`], using the
//! sender's own fields (visible within [`crate::tcp`] only): it owns [`RateState`] and the
//! sender's side of the estimation below, and must not know how the controller uses a sample
//! (it hands over a [`RateAck`]) nor decide anything about loss recovery, whose state it only
//! reads. What the sender adds:
//! - which segments an ACK delivers: those its cumulative ACK newly covers, and for SACK flows
//!   those its blocks SACK for the first time (draft-cheng-iccrg-delivery-rate-estimation-00
//!   §3.3 counts both). Without SACK the sender cannot name the segment behind a duplicate
//!   ACK, so, as Linux does for Reno (`tcp_add_reno_sack`, `tcp_remove_reno_sacks`), it counts
//!   one delivery per duplicate ACK (never more than all but one outstanding segment), the
//!   next cumulative ACK counts only the segments the duplicates had not, at least one, and
//!   the count is cleared when the ACK covers everything outstanding at the last fast
//!   retransmit or timeout (`tcp_reset_reno_sack` on leaving recovery). Two deliberate
//!   differences from Linux: a timeout does not clear the count (Linux's does, then counts
//!   the same segments a second time when the cumulative ACK covers them: a rate sample
//!   several times the path's, which BBR's BtlBw filter would keep for 10 rounds), and in the
//!   loss state after a timeout duplicate ACKs count nothing, since going back N resends
//!   segments the receiver mostly holds already and each of those brings a duplicate;
//! - how much is in flight (Linux `tcp_packets_in_flight`): for SACK, RFC 6675's pipe; without,
//!   what was sent beyond the cumulative ACK less the duplicate-ACK count, and in the loss
//!   state what going back N has resent. Since that count is outstanding but delivered, a
//!   rate-based window limits the sequence space to cwnd plus it (`TcpSender::send_allowed`),
//!   as RFC 5681's window inflation does for Reno's arithmetic;
//! - where loss recovery stands (`CaState`): fast recovery while `in_recovery`, the loss state
//!   after a timeout until the cumulative ACK passes the highest segment sent before it;
//! - the segments it deems lost on an ACK (Linux `rs->losses`): for SACK, those the ACK makes
//!   IsLost (RFC 6675 §4) that were not before; without SACK, the ones it resends in loss
//!   recovery on it (the fast retransmission, one per partial ACK);
//! - application-limited marks (draft §3.4): when a finite transfer has nothing left to send
//!   although the window has room, and while the controller holds itself back (ProbeRTT).
//!
//! Order per ACK: `TcpSender::rate_ack_begin` before the sender's own processing (the ring
//! and the scoreboard still describe the segments the ACK covers), `TcpSender::rate_ack_end`
//! after it and before anything is sent on it: the controller sets the window and the pacing
//! rate there. SACK flows end it at the top of `sack_send`, where every path through their
//! ACK processing sends.

use super::sample::{AckSample, RateSampler};
use crate::tcp::cc::{CaState, CongestionControl, RateAck};
use crate::tcp::sack::option::SackBlock;
use crate::tcp::sender::TcpSender;
use crate::tcp::TcpConfig;
use crate::units::Time;

/// The delivery-rate state of a sender whose controller runs on rate samples.
#[derive(Clone, Debug)]
pub struct RateState {
    pub sampler: RateSampler,
    /// Without SACK: segments above the cumulative ACK that duplicate ACKs reported delivered
    /// (Linux's `sacked_out` for Reno, except that a timeout does not forget them).
    reno_sacked: u32,
    /// The ACK being processed (see [`Pending`]).
    pending: Option<Pending>,
    /// After a timeout: the highest segment sent before it (the loss state lasts until the
    /// cumulative ACK passes it).
    loss_high: Option<u32>,
    /// What the controller was told on the last ACK (for inspection).
    last: Option<RateAck>,
}

impl RateState {
    pub fn new(cfg: &TcpConfig) -> RateState {
        RateState {
            sampler: RateSampler::new(cfg.initial_window.min(cfg.max_window)),
            reno_sacked: 0,
            pending: None,
            loss_high: None,
            last: None,
        }
    }
}

/// What `rate_ack_begin` notes for `rate_ack_end`.
#[derive(Clone, Copy, Debug)]
struct Pending {
    /// Segments in flight before the ACK.
    prior_in_flight: u32,
    /// The run's recovery retransmissions before it.
    retransmits: u64,
    /// SACK: segments below this bound were IsLost before it (`Scoreboard::lost_bound`).
    lost_bound: u32,
}

/// SACKed segments of `start..end` in `ranges` (sorted, disjoint).
fn sacked_in(ranges: &[SackBlock], start: u32, end: u32) -> u32 {
    let i = ranges.partition_point(|r| r.end <= start);
    let overlap = |r: &SackBlock| r.end.min(end).saturating_sub(r.start.max(start));
    ranges[i..].iter().take_while(|r| r.start < end).map(overlap).sum()
}

/// Calls `f` on each segment of `start..end` outside `ranges` (sorted, disjoint), in order.
fn for_each_outside(ranges: &[SackBlock], start: u32, end: u32, mut f: impl FnMut(u32)) {
    let mut s = start;
    let mut i = ranges.partition_point(|r| r.end <= start);
    while s < end {
        let stop = match ranges.get(i) {
            Some(r) if r.start <= s => {
                (s, i) = (r.end, i + 1);
                continue;
            }
            Some(r) => r.start.min(end),
            None => end,
        };
        while s < stop {
            f(s);
            s += 1;
        }
    }
}

impl RateState {
    /// What the controller was told on the last ACK.
    pub fn last_ack(&self) -> Option<&RateAck> {
        self.last.as_ref()
    }
}

impl TcpSender {
    /// The rate state, for inspection (None unless the controller runs on rate samples).
    pub fn rate_state(&self) -> Option<&RateState> {
        self.rate.as_deref()
    }

    /// Segments in flight as a rate-based controller counts them (module doc).
    pub fn rate_in_flight(&self) -> u32 {
        match self.sack.as_deref() {
            Some(s) => s.sb.pipe(self.snd_una, self.snd_max),
            None => (self.snd_nxt - self.snd_una).saturating_sub(self.delivered_above_una()),
        }
    }

    /// Outstanding segments that a rate-based controller without SACK counts as delivered and
    /// no longer in flight (module doc): none in the loss state after a timeout, where going
    /// back N resends them and counts only what it resends; 0 for every other sender.
    #[inline]
    pub(in crate::tcp) fn delivered_above_una(&self) -> u32 {
        match self.rate.as_deref() {
            Some(r) if r.loss_high.is_none() => r.reno_sacked,
            _ => 0,
        }
    }

    /// Draft §3.2: segment `seq` leaves (called for every transmission).
    #[inline]
    pub(in crate::tcp) fn rate_on_sent(&mut self, now: Time, seq: u32, retransmit: bool) {
        if let Some(r) = self.rate.as_deref_mut() {
            // New data at the cumulative ACK: nothing was outstanding before it.
            let idle = !retransmit && seq == self.snd_una;
            r.sampler.on_sent(seq, self.snd_una, now, retransmit, idle);
        }
    }

    /// Before the sender processes an ACK of `ack` with SACK `blocks`: the segments it
    /// delivers.
    #[inline]
    pub(in crate::tcp) fn rate_ack_begin(&mut self, ack: u32, blocks: &[SackBlock]) {
        if self.rate.is_none() {
            return;
        }
        let prior_in_flight = self.rate_in_flight();
        let (una, high) = (self.snd_una, self.snd_max);
        let (retransmits, recover) = (self.stats.recovery_retransmits, self.recover);
        let lost_bound = self.sack.as_deref().map_or(una, |s| s.sb.lost_bound(una));
        let r = self.rate.as_deref_mut().expect("checked above");
        r.pending = Some(Pending { prior_in_flight, retransmits, lost_bound });
        r.sampler.begin_ack();
        match self.sack.as_deref() {
            Some(sack) => {
                // Newly SACKed: the blocks' segments not on the scoreboard yet (it is updated
                // after this), then the segments the cumulative ACK covers that no block did.
                for b in blocks {
                    for_each_outside(sack.sb.ranges(), b.start.max(una), b.end.min(high), |s| {
                        if r.sampler.deliver(s) {
                            r.sampler.count(1);
                        }
                    });
                }
                for s in una..ack.min(high) {
                    if r.sampler.deliver(s) {
                        r.sampler.count(1);
                    }
                }
            }
            None if ack > una => {
                for s in una..ack {
                    r.sampler.deliver(s);
                }
                // Linux `tcp_remove_reno_sacks`: the ACK covers one hole; the rest of what it
                // covers, duplicate ACKs have counted already.
                let acked = ack - una;
                r.sampler.count(acked.saturating_sub(r.reno_sacked).max(1));
                r.reno_sacked = r.reno_sacked.saturating_sub(acked - 1);
                // Everything outstanding acknowledged, or everything that was at the last fast
                // retransmit or timeout (its recovery ends): the duplicates counted were for
                // segments now covered (Linux `tcp_reset_reno_sack` on leaving recovery).
                // Otherwise a count left over would make in flight look smaller than it is
                // for ever after.
                if ack == high || recover.is_some_and(|p| una <= p && p < ack) {
                    r.reno_sacked = 0;
                }
            }
            // Linux `tcp_add_reno_sack` and `tcp_limit_reno_sacked`: a duplicate ACK, one more
            // segment arrived, as long as at least one outstanding segment is still missing.
            // (In the loss state after a timeout, duplicates mostly answer resends of segments
            // the receiver holds already: not counted.)
            None if ack == una && r.loss_high.is_none() && r.reno_sacked + 1 < high.saturating_sub(una) => {
                r.reno_sacked += 1;
                r.sampler.count(1);
            }
            None => {}
        }
    }

    /// After the sender processed the ACK, before it sends on it: the sample goes to the
    /// controller, which sets the window and the pacing rate.
    #[inline]
    pub(in crate::tcp) fn rate_ack_end(&mut self, now: Time) {
        if self.rate.as_deref().is_none_or(|r| r.pending.is_none()) {
            return;
        }
        let in_flight = self.rate_in_flight();
        let losses = self.rate_losses();
        let r = self.rate.as_deref_mut().expect("checked above");
        let Pending { prior_in_flight, .. } = r.pending.take().expect("checked above");
        let sample = r.sampler.finish_ack(now);
        if r.loss_high.is_some_and(|h| self.snd_una > h) {
            r.loss_high = None;
        }
        let ca_state = match (self.in_recovery, r.loss_high) {
            (true, _) => CaState::Recovery,
            (false, Some(_)) => CaState::Loss,
            (false, None) => CaState::Open,
        };
        let ack = RateAck {
            sample,
            delivered: r.sampler.delivered(),
            delivered_time: r.sampler.delivered_time(),
            prior_in_flight,
            in_flight,
            losses,
            ca_state,
            srtt: self.rtt.srtt(),
        };
        self.cc.on_rate_sample(&mut self.w, &ack, now);
        r.last = Some(ack);
        if let Some(rate) = self.cc.pacing_rate_bps() {
            self.pacer.set_rate(rate);
        }
        // Draft §3.4: nothing left to send (new or to resend by going back N) although the
        // window has room; or the controller holds itself back (BBR's ProbeRTT, draft §4.3.5).
        let idle_window = self.snd_nxt >= self.limit && (in_flight as f64) < self.w.cwnd;
        if idle_window || self.cc.holds_back() {
            r.sampler.mark_app_limited(in_flight);
        }
    }

    /// The handshake is over, its RTT `rtt` measured unless the SYN-ACK was resent: Linux
    /// starts BBR here, with the handshake's RTT as its first min RTT and srtt setting its
    /// first pacing rate, so the initial window is paced over the RTT rather than over the
    /// nominal 1 ms. The controller gets it as an ACK that delivers nothing.
    pub(in crate::tcp) fn rate_on_established(&mut self, now: Time, rtt: Option<Time>) {
        let Some(r) = self.rate.as_deref_mut() else { return };
        if let Some(rtt) = rtt {
            r.sampler.on_rtt(rtt);
        }
        let ack = RateAck {
            sample: AckSample { rate: None, acked_sacked: 0, rtt },
            delivered: r.sampler.delivered(),
            delivered_time: r.sampler.delivered_time(),
            prior_in_flight: 0,
            in_flight: 0,
            losses: 0,
            ca_state: CaState::Open,
            srtt: self.rtt.srtt(),
        };
        self.cc.on_rate_sample(&mut self.w, &ack, now);
        if let Some(rate) = self.cc.pacing_rate_bps() {
            self.pacer.set_rate(rate);
        }
    }

    /// Segments deemed lost on the ACK being processed (module doc).
    fn rate_losses(&self) -> u32 {
        let Some(p) = self.rate.as_deref().and_then(|r| r.pending) else { return 0 };
        match self.sack.as_deref() {
            // Those unSACKed segments now below the IsLost bound that were not before.
            Some(s) => {
                let (start, end) = (p.lost_bound.max(self.snd_una), s.sb.lost_bound(self.snd_una));
                let ranges = s.sb.ranges();
                end.saturating_sub(start).saturating_sub(sacked_in(ranges, start, end))
            }
            None => (self.stats.recovery_retransmits - p.retransmits) as u32,
        }
    }

    /// A retransmission timeout, after the sender set cwnd to one segment and left recovery.
    pub(in crate::tcp) fn rate_on_timeout(&mut self, now: Time) {
        let Some(r) = self.rate.as_deref_mut() else { return };
        // Linux `tcp_enter_loss`: every outstanding segment not SACKed counts as lost. Linux
        // also forgets the duplicate-ACK count here, and then counts the same segments again
        // when the cumulative ACK covers them: a delivery-rate sample several times the path's,
        // which BBR's BtlBw filter keeps for 10 rounds. Here the count stays (those segments
        // were delivered), and counts nothing in flight until the loss state ends.
        r.pending = None;
        r.loss_high = self.snd_max.checked_sub(1);
        self.cc.on_retransmission_timeout(&self.w, now);
        // The retransmission goes at once, whatever gap the pacer was keeping.
        self.pacer.reset();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Packet;
    use crate::tcp::cc::{Cc, CcKind};
    use crate::tcp::Recovery;

    #[test]
    fn sacked_segments_of_a_range_are_counted_exactly() {
        let ranges = [SackBlock::new(3, 5), SackBlock::new(8, 9)];
        assert_eq!(sacked_in(&ranges, 0, 12), 3);
        assert_eq!(sacked_in(&ranges, 4, 8), 1);
        assert_eq!(sacked_in(&ranges, 5, 8), 0);
        assert_eq!(sacked_in(&ranges, 8, 8), 0);
    }

    #[test]
    fn segments_outside_sacked_ranges_are_visited_once_in_order() {
        let ranges = [SackBlock::new(3, 5), SackBlock::new(8, 9)];
        let mut seen = Vec::new();
        for_each_outside(&ranges, 0, 12, |s| seen.push(s));
        assert_eq!(seen, vec![0, 1, 2, 5, 6, 7, 9, 10, 11]);
        seen.clear();
        for_each_outside(&ranges, 4, 8, |s| seen.push(s));
        assert_eq!(seen, vec![5, 6, 7]);
        seen.clear();
        for_each_outside(&ranges, 3, 5, |s| seen.push(s));
        assert!(seen.is_empty());
    }

    fn bbr_sender(recovery: Recovery) -> (TcpSender, Vec<Packet>) {
        let mut cfg = TcpConfig::default_for(1000, recovery);
        cfg.cc = CcKind::Bbr;
        cfg.initial_window = 10;
        let mut s = TcpSender::new(cfg, 0, 0);
        let mut out = Vec::new();
        s.start(Time::ZERO, &mut out);
        (s, out)
    }

    #[test]
    fn a_bbr_sender_keeps_rate_state_and_others_do_not() {
        let (s, out) = bbr_sender(Recovery::NewReno);
        assert!(s.rate_state().is_some());
        assert!(matches!(s.cc(), Cc::Bbr(_)));
        // Paced from the start at 2/ln 2 × IW per ms: the first segment goes, the rest wait.
        assert_eq!(out.len(), 1);
        assert!(s.pace_deadline.is_some());
        assert!(s.pacing_rate_bps().is_some_and(|r| r > 0.0));
        let plain = TcpSender::new(TcpConfig::default_for(1000, Recovery::NewReno), 0, 0);
        assert!(plain.rate_state().is_none());
        assert_eq!(plain.pacing_rate_bps(), None);
    }

    /// A sender with segments 0..10 out, sent by the pacer one by one; returns the time.
    fn ten_out(s: &mut TcpSender, out: &mut Vec<Packet>) -> Time {
        let mut t = Time::ZERO;
        while s.snd_max < 10 {
            t = s.pace_deadline.unwrap();
            s.on_pace(t, out);
        }
        t
    }

    #[test]
    fn sack_losses_count_segments_each_ack_makes_is_lost() {
        // Segments 0 and 5 are lost; the others arrive one by one, each ACK SACKing one more.
        // RFC 6675 IsLost: three SACKed segments above. 0 becomes lost with the third (3), 5
        // with the third above it (8); the ACKs between add no loss.
        let (mut s, mut out) = bbr_sender(Recovery::Sack);
        let t = ten_out(&mut s, &mut out) + Time::from_ms(100);
        let mut losses = Vec::new();
        for (end, second) in
            [(2, None), (3, None), (4, None), (5, None), (7, Some(1)), (8, Some(1)), (9, Some(1))]
        {
            let mut blocks = vec![SackBlock::new(if end > 5 { 6 } else { 1 }, end)];
            blocks.extend(second.map(|start| SackBlock::new(start, 5)));
            s.on_sack_ack(t, 0, &blocks, &mut out);
            losses.push(s.rate_state().unwrap().last_ack().unwrap().losses);
        }
        assert_eq!(losses, vec![0, 0, 1, 0, 0, 0, 1]);
        assert!(s.in_recovery());
    }

    #[test]
    fn a_due_pacing_deadline_of_a_finished_transfer_is_dropped() {
        // Found by a run of closed-loop BBR users that never ended: a SACK sender's segment
        // waited for the pacer when the ACK that completed its transfer came, which returns
        // before sending. The pacing event then found the connection done and did nothing,
        // and the simulator re-armed the still-due deadline at once, for ever.
        let (mut s, mut out) = bbr_sender(Recovery::Sack);
        s.accept(Time::ZERO, 1, 1000, false, &mut out); // 2 segments: 960 B and 40 B
        let t = s.pace_deadline.expect("the second segment waits");
        s.on_pace(t, &mut out);
        assert_eq!(s.snd_max, 2);
        s.on_sack_ack(Time::from_ms(100), 2, &[], &mut out);
        assert_eq!(s.phase(), crate::tcp::sender::Phase::Done);
        let due = Time::from_ms(101);
        s.pace_deadline = Some(due);
        out.clear();
        s.on_pace(due, &mut out);
        assert_eq!(s.pace_deadline, None);
        assert!(out.is_empty());
    }

    #[test]
    fn duplicate_acks_count_deliveries_and_open_the_window_by_as_many() {
        // Ten segments out (the pacer lets them go one by one), then 0 is lost.
        let (mut s, mut out) = bbr_sender(Recovery::NewReno);
        let t = ten_out(&mut s, &mut out) + Time::from_ms(100);
        // Each duplicate ACK counts one segment delivered, which leaves the sequence space and
        // the flight (what BBR's window limits) one apart more.
        for k in 1..=2 {
            s.on_ack(t, 0, &mut out);
            assert_eq!(s.delivered_above_una(), k);
            assert_eq!(s.rate_state().unwrap().sampler.delivered(), k as u64);
            assert_eq!(s.rate_in_flight(), s.snd_nxt - k);
        }
        // The third starts fast recovery, where BBR conserves packets: cwnd = in flight (all
        // sent but the three delivered) + the one this ACK delivered.
        let sent = s.snd_max;
        s.on_ack(t, 0, &mut out);
        assert!(s.in_recovery());
        let Cc::Bbr(b) = s.cc() else { unreachable!() };
        assert_eq!(b.cwnd(), sent - 3 + 1);
        // The cumulative ACK for everything counts only what the duplicates had not.
        let all = s.snd_max;
        s.on_ack(t + Time::from_ms(100), all, &mut out);
        assert!(!s.in_recovery());
        assert_eq!(s.rate_state().unwrap().sampler.delivered(), 3 + (all as u64 - 3));
        assert_eq!(s.delivered_above_una(), 0);
    }
}
