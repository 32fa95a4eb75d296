//! SACK loss recovery (`Recovery::Sack`): RFC 6675 §5 on the [`Scoreboard`].
//!
//! Read first: RFC 6675 §2–5 (and RFC 2018 §8 on timeouts), then [`super::scoreboard`]
//! for IsLost, SetPipe and NextSeg in segments. The rest of the sender (RTT, the timer, the
//! advance of the cumulative ACK, the window arithmetic in the congestion controller) is
//! shared with Reno and NewReno: this file is an `impl` block of [`TcpSender`], using the
//! sender's own fields and helpers (visible within [`crate::tcp`] only), and the sender hands
//! it every ACK of a SACK flow and the end of every timeout. It owns the SACK state of a sender
//! ([`SackRecovery`]) and the RFC 6675 §5 rules; it must not know the Reno and NewReno rules
//! (`on_new_ack`, `on_duplicate_ack`), the receiver or the simulator.
//!
//! Outline, per arriving ACK: Update() the scoreboard with the option's blocks (§5); a
//! cumulative ACK resets DupAcks; outside recovery the controller grows cwnd. An ACK that SACKs
//! new segments is a duplicate ACK (§2); the third, or one after which IsLost(HighACK + 1),
//! enters recovery (§5 steps 1–4): RecoveryPoint = HighData, ssthresh from the controller's
//! `ssthresh_on_loss` and cwnd = ssthresh (step 4.2), the first unacknowledged segment is
//! resent. In recovery, and on every ACK, the sender sends while cwnd − pipe ≥ 1 segment what
//! NextSeg() chooses (steps B–C); the cumulative ACK passing RecoveryPoint ends recovery
//! (step A), keeping the scoreboard. Before that, the first two duplicate ACKs send new data
//! under the same cwnd − pipe rule (step 3, Limited Transmit).
//!
//! Choices where the RFCs leave room, and deliberate deviations:
//! - A duplicate ACK is one that SACKs new segments (RFC 6675 §2); an ACK without blocks that
//!   does not advance is not counted (the receiver holds nothing above the cumulative ACK, so
//!   nothing can be shown lost).
//! - Segments sent by Limited Transmit are left out of FlightSize when ssthresh is set (RFC
//!   6675 step 4.2, after RFC 5681 §3.2), so that SACK and NewReno halve the same window.
//! - HighRxt never moves back below a segment resent earlier and still unacknowledged. RFC 6675
//!   resets it to HighACK at steps (3.1) and (4.3); but when one recovery ends and the next
//!   begins at once (losses among the new data sent during the first, which the first already
//!   resent as rule (1) found them), those copies are still in flight and the reset would send
//!   them, and HighACK + 1 itself, a second time. Every unSACKed segment below HighRxt has been
//!   resent (NextSeg moves it over unSACKed segments only by resending them), so keeping it
//!   only spares resends in flight; a lost one is repaired by the timeout, as within one
//!   recovery. Linux likewise remembers per segment that it was resent.
//! - The timer: RFC 6298's restart on every ACK that advances the cumulative ACK, and RFC 6675
//!   §6's "more careful variant" on top, restarting it on each retransmission sent in recovery
//!   (`rto_restart = "every_retransmission"`, the default; `"head"` restarts it only when the
//!   first unacknowledged segment is resent, as Linux does, and `"ack_only"` never, as ns-3).
//!   Without it the timer, started by the last cumulative ACK before the loss, often expired
//!   before the fast retransmission could be acknowledged (the three duplicate ACKs take a
//!   while to come when the window is small): a spurious timeout, and resends of data in
//!   flight.
//! - **The scoreboard is kept across a timeout**, as Linux keeps it unless it detects reneging.
//!   RFC 2018 §8 says to ignore SACK information when choosing what to resend after a timeout,
//!   because the receiver may have reneged (discarded SACKed data); this model's receiver never
//!   discards data it holds, so the information stays true (RFC 6675 §5.1 records the view
//!   that it may be kept where reneging is ruled out). After the timeout cwnd = 1 and every unSACKed
//!   outstanding segment counts as lost (Linux's Loss state): they are resent in order under
//!   cwnd − pipe, SACKed ones skipped, then new data; RecoveryPoint = HighData, and no new
//!   recovery starts until the cumulative ACK passes it (RFC 6675 §5.1).

use super::option::SackBlock;
use super::scoreboard::{Rule, Scoreboard, DUP_THRESH};
use crate::packet::Packet;
use crate::tcp::cc::CongestionControl;
use crate::tcp::sender::{Phase, TcpSender};
use crate::tcp::RtoRestart;
use crate::units::Time;

/// The SACK state of a sender (Reno and NewReno senders have none: `TcpSender::sack` is None).
#[derive(Clone, Debug, Default)]
pub struct SackRecovery {
    pub sb: Scoreboard,
    /// Segments sent by Limited Transmit (RFC 6675 §5 step 3) since the last cumulative ACK.
    limited: u32,
}

/// The SACK state of a SACK sender (`TcpSender::sack`; a function of the field alone, so that
/// the other fields can be read while it is borrowed).
fn state(sack: &mut Option<Box<SackRecovery>>) -> &mut SackRecovery {
    sack.as_deref_mut().expect("a SACK sender has its SACK state")
}

impl TcpSender {
    /// An ACK of a SACK flow arrives: cumulative acknowledgement `ack` (next segment expected)
    /// and the blocks of its SACK option (RFC 2018), first block first.
    pub fn on_sack_ack(&mut self, now: Time, ack: u32, blocks: &[SackBlock], out: &mut Vec<Packet>) {
        match self.phase {
            Phase::SynReceived => return self.establish(now, out),
            Phase::Done => return,
            Phase::Established => {}
        }
        debug_assert!(self.cfg.recovery.uses_sack(), "SACK blocks for a non-SACK sender");
        if self.is_linux() {
            return self.linux_on_ack(now, ack, blocks, out);
        }
        self.sack_on_ack(now, ack, blocks, out);
    }

    /// The scoreboard of a SACK sender, for inspection.
    pub fn scoreboard(&self) -> Option<&Scoreboard> {
        self.sack.as_deref().map(|s| &s.sb)
    }

    /// RFC 6675 §5 for one ACK (the connection is established).
    pub(in crate::tcp) fn sack_on_ack(
        &mut self,
        now: Time,
        ack: u32,
        blocks: &[SackBlock],
        out: &mut Vec<Packet>,
    ) {
        // A rate-based controller's sample: what the ACK delivers, before the scoreboard
        // learns it (ended in `sack_send`).
        self.rate_ack_begin(ack, blocks);
        let acked = ack.saturating_sub(self.snd_una);
        if acked > 0 {
            self.sack_cumulative(now, ack);
        }
        // §5: "Upon the receipt of any ACK containing SACK information, the scoreboard MUST be
        // updated via the Update () routine."
        let newly_sacked = state(&mut self.sack).sb.update(blocks, self.snd_una, self.snd_max);
        if acked > 0 {
            // §5: a cumulative acknowledgment resets DupAcks.
            self.dupacks = 0;
            state(&mut self.sack).limited = 0;
        }
        if self.phase == Phase::Done {
            return;
        }
        if self.in_recovery {
            if self.recover.is_some_and(|r| ack <= r) {
                // Steps (B.1) (done above), (B.2) and (C).
                return self.sack_send(now, out);
            }
            // Step (A): a cumulative ACK beyond RecoveryPoint ends recovery. cwnd stays at the
            // ssthresh of step (4.2); the scoreboard above the new HighACK is kept.
            self.exit_recovery();
        } else if acked > 0 {
            // RFC 5681 §3.1 window growth, outside recovery only.
            self.cc.on_ack(&mut self.w, acked, now, self.rtt.srtt());
        }
        // §2: an ACK that SACKs segments not SACKed before is a duplicate acknowledgment. §5.1:
        // after a timeout, no new recovery until the cumulative ACK passes RecoveryPoint.
        if newly_sacked > 0 && !self.repairing() {
            self.dupacks += 1;
            // Steps (1) and (2).
            if self.dupacks >= DUP_THRESH || state(&mut self.sack).sb.is_lost(self.snd_una, self.snd_una) {
                return self.sack_enter_recovery(now, out);
            }
            // Step (3), Limited Transmit: (3.1) HighRxt = HighACK (but not below a resend
            // still unacknowledged, see the module doc), then new data while cwnd − pipe ≥ 1
            // (3.2–3.3).
            let sb = &mut state(&mut self.sack).sb;
            sb.high_rxt_end = sb.high_rxt_end.max(self.snd_una);
            let before = self.snd_max;
            self.sack_send(now, out);
            state(&mut self.sack).limited += self.snd_max - before;
            return;
        }
        self.sack_send(now, out);
    }

    /// The cumulative ACK moves to `ack`: RTT sample, HighACK, the scoreboard and the timer.
    fn sack_cumulative(&mut self, now: Time, ack: u32) {
        self.advance_una(now, ack);
        state(&mut self.sack).sb.advance(ack);
        // RFC 6298 §5.2–5.3: stopped or restarted on every ACK of new data, in recovery too
        // (see the module doc).
        self.rearm_timer_on_ack(now, true);
    }

    /// RFC 6675 §5 step (4): fast retransmit and enter loss recovery.
    fn sack_enter_recovery(&mut self, now: Time, out: &mut Vec<Packet>) {
        self.count(now, |s| s.fast_retransmits += 1);
        // (4.2) ssthresh = cwnd = FlightSize / 2 (the controller's rule), FlightSize without
        // the segments Limited Transmit sent.
        let flight = self.flight() - state(&mut self.sack).limited;
        self.w.ssthresh = self.cc.ssthresh_on_loss(&self.w, flight, now);
        self.w.cwnd = self.w.ssthresh;
        // (4.1) RecoveryPoint = HighData.
        self.recover = Some(self.snd_max - 1);
        self.in_recovery = true;
        state(&mut self.sack).limited = 0;
        // (4.3) Resend HighACK + 1 — unless an earlier recovery resent it and that copy is still
        // unacknowledged (module doc); HighRxt and RescueRxt = that segment.
        let seq = self.snd_una;
        if seq >= state(&mut self.sack).sb.high_rxt_end {
            self.sack_retransmit(now, seq, out);
            state(&mut self.sack).sb.high_rxt_end = seq + 1;
        }
        state(&mut self.sack).sb.rescue_end = Some(seq + 1);
        // (4.4) SetPipe and (4.5) step (C).
        self.sack_send(now, out);
    }

    /// Sends while cwnd − pipe ≥ 1 segment (RFC 6675 steps (3.2)–(3.3) and (C)): in recovery
    /// what NextSeg() chooses; after a timeout, lost segments then new data (NextSeg rules 1–2);
    /// otherwise new data only. Each segment sent adds one to pipe (C.4). A paced sender sends
    /// them as fast as the pacer lets them go, retransmissions included (as Linux paces its
    /// retransmit queue); a segment the pacer holds sets `pace_deadline`. With a rate-based
    /// controller (BBR) the ACK's sample reaches the controller first.
    pub(in crate::tcp) fn sack_send(&mut self, now: Time, out: &mut Vec<Packet>) {
        self.rate_ack_end(now);
        self.pace_deadline = None;
        let mut pipe = state(&mut self.sack).sb.pipe(self.snd_una, self.snd_max);
        while self.w.cwnd - pipe as f64 >= 1.0 {
            let new_data = self.snd_max < self.limit && self.snd_max - self.snd_una < self.cfg.max_window;
            let next = if self.in_recovery || self.repairing() {
                state(&mut self.sack).sb.next_seg(self.snd_una, self.snd_max, new_data, self.in_recovery)
            } else {
                new_data.then_some((self.snd_max, Rule::New))
            };
            let Some((seq, rule)) = next else { break };
            // Held: the same choice is made again when the pacer lets it go.
            if let Some(at) = self.pacer.hold_until(now) {
                self.pace_deadline = Some(at);
                break;
            }
            match rule {
                Rule::New => {
                    self.snd_max += 1;
                    self.snd_nxt = self.snd_max;
                    self.emit(now, seq, false, out);
                }
                // (C.2) HighRxt moves to the segment resent...
                Rule::Lost | Rule::Unsacked => {
                    state(&mut self.sack).sb.high_rxt_end = seq + 1;
                    self.sack_retransmit(now, seq, out);
                }
                // ...except by rule (4), which sets RescueRxt = RecoveryPoint instead.
                Rule::Rescue => {
                    state(&mut self.sack).sb.rescue_end = self.recover.map(|r| r + 1);
                    self.sack_retransmit(now, seq, out);
                }
            }
            pipe += 1;
        }
    }

    /// Resends `seq`; in recovery it counts as a recovery retransmission (after a timeout it
    /// does not, as for NewReno's go-back-N), and restarts the timer as `rto_restart` says
    /// (by default on every one, RFC 6675 §6's careful variant; see the module doc).
    fn sack_retransmit(&mut self, now: Time, seq: u32, out: &mut Vec<Packet>) {
        self.emit(now, seq, true, out);
        if self.in_recovery {
            self.count(now, |s| s.recovery_retransmits += 1);
            let restart = match self.cfg.rto_restart {
                RtoRestart::EveryRetransmission => true,
                RtoRestart::Head => seq == self.snd_una,
                RtoRestart::AckOnly => false,
            };
            if restart {
                self.rto_deadline = Some(now + self.rtt.rto());
            }
        }
    }

    /// The end of `on_timeout` for SACK, after the shared part (counters, ssthresh, cwnd = 1,
    /// RecoveryPoint = HighData, recovery left, timer backed off): every unSACKed outstanding
    /// segment is lost, none resent yet; resend from the first (RFC 6298 §5.4), which restarts
    /// the timer (§5.6). The scoreboard is kept (see the module doc).
    pub(in crate::tcp) fn sack_after_timeout(&mut self, now: Time, out: &mut Vec<Packet>) {
        let st = state(&mut self.sack);
        (st.sb.lost_end, st.sb.high_rxt_end, st.limited) = (self.snd_max, self.snd_una, 0);
        self.rto_deadline = None;
        self.sack_send(now, out);
    }
}

#[cfg(test)]
mod tests {
    //! Scripted exchanges on [`crate::tcp::test_path`]'s network.
    use super::*;
    use crate::tcp::cc::Window;
    use crate::tcp::test_path::{Path, RTT};
    use crate::tcp::{Recovery, TcpConfig};

    /// A sender in congestion avoidance with cwnd 20 and segments 0..20 in flight.
    fn path(recovery: Recovery, drop: &[(u32, u32)]) -> Path {
        Path::start(TcpConfig::default_for(1000, recovery), Window { cwnd: 20.0, ssthresh: 20.0 }, drop)
    }

    const FOUR_LOSSES: [(u32, u32); 4] = [(0, 0), (5, 0), (10, 0), (15, 0)];

    // ---- Recovery from several losses in one window ----

    #[test]
    fn four_losses_in_a_window_are_each_resent_once_and_recovery_ends_at_recovery_point() {
        let mut p = path(Recovery::Sack, &FOUR_LOSSES);
        p.run_until(|p| p.s.in_recovery());
        // The third duplicate ACK (segment 3 SACKed) at one RTT. The first two sent new
        // segments 20 and 21 (Limited Transmit), which FlightSize leaves out: ssthresh =
        // 20 / 2 and cwnd = ssthresh (RFC 6675 step 4.2); RecoveryPoint = 21.
        assert_eq!(p.now, RTT);
        assert_eq!(p.sends.len(), 22);
        assert_eq!((p.s.w.ssthresh, p.s.w.cwnd), (10.0, 10.0));
        assert_eq!(p.s.recover, Some(21));
        assert_eq!(p.resent, vec![(RTT, 0)]);
        // The fast retransmission restarts the timer (RFC 6675 §6's careful variant): it gets a
        // whole RTO (here the initial 1 s: no RTT sample yet) to be acknowledged.
        assert_eq!(p.s.rto_deadline, Some(RTT + Time::from_secs(1)));
        p.run_until(|p| !p.s.in_recovery());
        // All four resent within the same round trip, as the SACKs showed each lost; recovery
        // ends at the first cumulative ACK beyond RecoveryPoint (the resent 15 arriving),
        // one RTT after it began.
        assert_eq!(p.resent.iter().map(|&(t, _)| t).max(), Some(RTT));
        assert_eq!(p.resent_segments(), vec![0, 5, 10, 15]);
        assert_eq!(p.now, RTT + RTT);
        assert!(p.una_before <= 21 && p.s.snd_una > 21, "{} → {}", p.una_before, p.s.snd_una);
        assert_eq!((p.s.w.ssthresh, p.s.w.cwnd), (10.0, 10.0));
        // Nothing more to repair: two more round trips resend nothing and no timer fires.
        let end = p.now + RTT + RTT;
        p.run_until(|p| p.now >= end);
        let st = p.s.stats;
        assert_eq!((st.retransmits, st.recovery_retransmits, st.fast_retransmits, st.timeouts), (4, 4, 1, 0));
        assert_eq!(p.r.stats.duplicates, 0);
    }

    #[test]
    fn sack_repairs_in_one_round_trip_what_newreno_repairs_in_four() {
        // The same four losses. NewReno learns of one hole per partial ACK, so it resends one
        // lost segment per round trip; SACK sees them all in the first. Neither times out (no
        // RTT sample yet: the RTO is the initial 1 s, restarted by the first partial ACK).
        let recovery_time = |recovery| {
            let mut p = path(recovery, &FOUR_LOSSES);
            p.run_until(|p| p.s.in_recovery());
            let began = p.now;
            p.run_until(|p| !p.s.in_recovery());
            assert_eq!(p.resent_segments(), vec![0, 5, 10, 15]);
            assert_eq!(p.s.stats.timeouts, 0);
            (p.now - began).0 / RTT.0
        };
        assert_eq!(recovery_time(Recovery::Sack), 1);
        assert_eq!(recovery_time(Recovery::NewReno), 4);
    }

    #[test]
    fn lost_retransmissions_are_repaired_by_the_timeout_and_only_they_are_resent() {
        // The resent 10 and 15 are lost too. The cumulative ACK stops at 10; later SACKs do not
        // resend them (they are below HighRxt), so the timer fires, one RTO (the initial 1 s:
        // no RTT sample survives Karn's rule here) after the last cumulative ACK, at 2 RTT.
        let mut drops = FOUR_LOSSES.to_vec();
        drops.extend([(10, 1), (15, 1)]);
        let mut p = path(Recovery::Sack, &drops);
        p.run_until(|p| p.s.stats.timeouts == 1);
        let rto_at = RTT + RTT + Time::from_secs(1);
        assert_eq!(p.now, rto_at);
        assert_eq!(p.s.snd_una, 10);
        // cwnd 1; ssthresh keeps the 10 this congestion event set.
        assert_eq!((p.s.w.ssthresh, p.s.w.cwnd), (10.0, 1.0));
        let highest = p.s.snd_max;
        p.run_until(|p| p.s.snd_una >= highest);
        // The scoreboard survives the timeout: only the two segments really missing go again
        // (10, then 15 once 10's ACK opens cwnd to 2), not the SACKed ones between and after.
        let after: Vec<u32> = p.resent.iter().filter(|&&(t, _)| t >= rto_at).map(|&(_, s)| s).collect();
        assert_eq!(after, vec![10, 15]);
        assert_eq!(p.r.stats.duplicates, 0, "no segment the receiver held was resent");
        let st = p.s.stats;
        assert_eq!((st.retransmits, st.fast_retransmits, st.timeouts), (6, 1, 1));
    }

    #[test]
    fn back_to_back_recoveries_do_not_resend_a_retransmission_in_flight() {
        // Scripted ACKs. Segment 0 is lost from the window 0..20, and then 22, sent during the
        // recovery: recovery resends 22 (rule 1, above RecoveryPoint 21) before the resent 0
        // ends it, and the next duplicate ACK starts a second recovery at once, for 22. Its
        // resend is still in flight: RFC 6675 step (4.3), resetting HighRxt, would send it
        // again.
        let mut s = TcpSender::new(TcpConfig::default_for(1000, Recovery::Sack), 0, 0);
        s.w = Window { cwnd: 20.0, ssthresh: 20.0 };
        let mut out = Vec::new();
        s.start(Time::ZERO, &mut out);
        let t = RTT;
        let b = SackBlock::new;
        for k in 2..=22 {
            s.on_sack_ack(t, 0, &[b(1, k)], &mut out); // 1..22 arrive
        }
        assert_eq!((s.stats.fast_retransmits, s.recover, s.w.cwnd), (1, Some(21), 10.0));
        for k in 24..=26 {
            s.on_sack_ack(t, 0, &[b(23, k), b(1, 22)], &mut out); // 23, 24, 25
        }
        let times = |out: &Vec<Packet>, seq| out.iter().filter(|p| p.seq == seq).count();
        assert_eq!(times(&out, 22), 2, "22 is lost: three SACKed segments above it");
        s.on_sack_ack(t + RTT, 22, &[b(23, 26)], &mut out); // the resent 0: recovery ends
        assert!(!s.in_recovery());
        s.on_sack_ack(t + RTT, 22, &[b(23, 27)], &mut out); // 26: IsLost(22), recovery again
        assert!(s.in_recovery());
        assert_eq!(s.stats.fast_retransmits, 2);
        // FlightSize 35 − 22 = 13 halves to 6.5 (RFC 6675 step 4.2); 22 is not sent a third time.
        assert_eq!((s.w.ssthresh, s.w.cwnd), (6.5, 6.5));
        assert_eq!(times(&out, 22), 2);
        assert_eq!(s.stats.retransmits, 2);
    }

    #[test]
    fn rescue_retransmission_repairs_a_lost_last_segment() {
        // A 20-segment transfer loses 5 and its last segment, 19. Nothing SACKed lies above 19,
        // so it never counts as lost, and there is no new data: NextSeg rule (4) resends it
        // once the cumulative ACK has passed the first retransmission (RFC 6675 §4).
        let mut p = path(Recovery::Sack, &[(5, 0), (19, 0)]);
        assert_eq!(p.sends.len(), 20);
        p.s.limit = 20;
        p.run_until(|p| p.s.phase() == Phase::Done);
        assert_eq!(p.resent, vec![(RTT, 5), (RTT + RTT, 19)]);
        assert_eq!(p.now, RTT + RTT + RTT);
        assert_eq!((p.s.stats.retransmits, p.s.stats.timeouts), (2, 0));
    }

    // ---- The side channel ----

    #[test]
    fn dropped_acks_do_not_desynchronize_the_blocks() {
        // ACKs 4, 5 and 9 of the four-loss window are lost on the way back (they SACKed 4, 6
        // and 11). The options of the ACKs that arrive are still their own: the sender's
        // scoreboard matches what the receiver holds, and recovery resends exactly the four
        // lost segments.
        let mut p = path(Recovery::Sack, &FOUR_LOSSES);
        p.drop_acks = vec![3, 4, 8];
        p.run_until(|p| p.acks == 16); // every segment of the first window has arrived
        let held = [(1, 5), (6, 10), (11, 15), (16, 20)].map(|(a, b)| SackBlock::new(a, b));
        assert_eq!(p.s.scoreboard().unwrap().ranges(), &held);
        p.run_until(|p| !p.s.in_recovery());
        assert_eq!(p.resent_segments(), vec![0, 5, 10, 15]);
        assert_eq!(p.s.stats.timeouts, 0);
    }

    // ---- Without loss ----

    #[test]
    fn without_loss_sack_sends_exactly_what_newreno_sends() {
        // No hole, no block: the SACK sender's cwnd − pipe rule is NewReno's window rule.
        let trace = |recovery| {
            let mut p = path(recovery, &[]);
            for _ in 0..2_000 {
                p.step();
            }
            (p.log, p.s.w.cwnd, p.s.snd_max)
        };
        assert_eq!(trace(Recovery::Sack), trace(Recovery::NewReno));
    }
}
