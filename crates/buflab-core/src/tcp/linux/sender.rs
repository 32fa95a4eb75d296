//! The Linux sender, ACK by ACK and timer by timer: `tcp_ack`, `tcp_fastretrans_alert`,
//! `tcp_cong_control`, `tcp_xmit_retransmit_queue`, `tcp_write_xmit` and the write timer, on
//! the model's segments.
//!
//! Read first: [`super`] (what the profile models) and the files of its mechanisms. This is an
//! `impl TcpSender` block, like [`crate::tcp::sack::recovery`]: it shares the sender's sequence
//! state, counters, controller and pacer (visible within [`crate::tcp`] only) and keeps its own
//! in [`LinuxState`]. It must not know the RFC-era recoveries (`on_new_ack`,
//! `on_duplicate_ack`, `sack_on_ack`): the sender hands every ACK, timer and pacing event of a
//! `linux` flow to it.
//!
//! Per ACK, in Linux's order:
//! 1. the SACK blocks mark segments SACKed (`tcp_sacktag_write_queue`), then the cumulative
//!    ACK removes what it covers (`tcp_clean_rtx_queue`); every segment delivered for the first
//!    time counts, RACK advances on the most recently sent of them, and the RTT is sampled;
//! 2. the tail loss probe's episode is judged ([`super::tlp`]);
//! 3. if the ACK is "dubious" (it did not advance the cumulative ACK, SACKed something, or the
//!    sender is not Open), the state machine (`tcp_fastretrans_alert`): Recovery ends once the
//!    cumulative ACK reaches `high_seq` (cwnd = ssthresh), Loss likewise; RACK marks losses;
//!    Open and Disorder enter Recovery as soon as a segment is marked lost;
//! 4. the timer, if the ACK advanced the cumulative ACK and RACK did not arm its own: a probe in
//!    Open and CWR, the RTO otherwise;
//! 5. the window (`tcp_cong_control`): PRR in Recovery and CWR; otherwise, on an ACK that
//!    advanced the cumulative ACK while the window limits the sender, the controller's growth,
//!    one call per segment delivered; a rate-based controller (BBR) sets it itself;
//! 6. sending: lost segments first, in order, then new data in GSO packets ([`super::tso`]),
//!    while in flight < cwnd.
//!
//! Deliberate simplifications, beside those the profile lists: no undo of a window reduction
//! (Eifel, DSACK, F-RTO: the model's paths neither reorder nor delay spuriously, so those
//! detections would rarely fire), no SACK reneging, retransmissions one segment at a time (Linux
//! may resend a multi-segment buffer at once; they still leave back to back when the window
//! allows several).

use super::rack::reorder_timeout;
use super::sent::{sent_after, Stamp, EVER_RETRANS, LOST};
use super::tlp::{pto, Verdict};
use super::tso;
use super::{CaState, LinuxState, TimerKind};
use crate::packet::{flags, Packet};
use crate::tcp::cc::hystart::{Step, CSS_GROWTH_DIVISOR};
use crate::tcp::cc::CongestionControl;
use crate::tcp::pacer::Pacing;
use crate::tcp::rto::linux::to_jiffies;
use crate::tcp::sack::option::SackBlock;
use crate::tcp::sender::{Phase, TcpSender};
use crate::tcp::RtoRestart;
use crate::units::Time;

/// The Linux state of a `linux` sender (a function of the field alone, so that the other fields
/// can be read while it is borrowed).
fn lx(linux: &mut Option<Box<LinuxState>>) -> &mut LinuxState {
    linux.as_deref_mut().expect("a linux sender has its Linux state")
}

/// What step 1 learnt from an ACK.
#[derive(Clone, Copy, Debug, Default)]
struct Delivery {
    /// Segments delivered for the first time, cumulatively or by SACK.
    delivered: u32,
    /// Segments SACKed for the first time.
    sacked: u32,
    una_advanced: bool,
    /// The RTT of the most recently sent segment delivered and never resent (Linux
    /// `ca_rtt_us`, what HyStart looks at).
    ca_rtt: Option<Time>,
}

impl TcpSender {
    /// The Linux state, for inspection (None unless `tcp = "linux"`).
    pub fn linux_state(&self) -> Option<&LinuxState> {
        self.linux.as_deref()
    }

    /// Whether the sender is Linux's.
    pub(in crate::tcp) fn is_linux(&self) -> bool {
        self.linux.is_some()
    }

    /// The window in whole segments, as Linux keeps it (at least 1).
    fn cwnd_segments(&self) -> u32 {
        (self.w.cwnd as u32).max(1)
    }

    /// An ACK of a `linux` flow: cumulative acknowledgement `ack`, SACK `blocks` (the connection
    /// is established).
    pub(in crate::tcp) fn linux_on_ack(
        &mut self,
        now: Time,
        ack: u32,
        blocks: &[SackBlock],
        out: &mut Vec<Packet>,
    ) {
        if self.rate.is_some() {
            self.rate_ack_begin(ack, blocks);
        }
        let lost_before = lx(&mut self.linux).q.lost_total;
        let d = self.linux_deliver(now, ack.min(self.snd_max), blocks);
        if self.phase == Phase::Done {
            return;
        }
        // 2. The probe's episode.
        let dup = !d.una_advanced && d.sacked == 0;
        if lx(&mut self.linux).tlp.on_ack(self.snd_una, d.una_advanced, dup) == Verdict::Loss {
            self.linux_probe_repaired_loss(now);
        }
        // 3. The state machine.
        let l = lx(&mut self.linux);
        let dubious = !d.una_advanced || d.sacked > 0 || l.ca != CaState::Open;
        let reorder_armed = dubious && self.linux_alert(now);
        // 4. The timer.
        if d.una_advanced && !reorder_armed {
            self.linux_set_xmit_timer(now);
        }
        // 5. The window.
        let newly_lost = (lx(&mut self.linux).q.lost_total - lost_before) as u32;
        self.linux_cong_control(now, d, newly_lost);
        // 6. Sending.
        self.linux_send(now, out);
    }

    /// Step 1: SACK blocks, then the cumulative ACK; RACK and the RTT sample.
    fn linux_deliver(&mut self, now: Time, ack: u32, blocks: &[SackBlock]) -> Delivery {
        let (una, high) = (self.snd_una, self.snd_max);
        let mut d = Delivery::default();
        // The most recently sent segment delivered (send time, segment, ever resent), and the
        // oldest and newest SACKed ones never resent (Linux `first_sackt`, `last_sackt`).
        let mut latest: Option<(Stamp, u32, bool)> = None;
        let mut first_sacked: Option<Time> = None;
        let mut last_sacked: Option<Time> = None;
        {
            let sb = &mut self.sack.as_deref_mut().expect("a linux sender keeps a scoreboard").sb;
            let l = lx(&mut self.linux);
            d.sacked = sb.update_each(blocks, una, high, |seq| {
                let before = l.q.mark_sacked(seq);
                let resent = before.is(EVER_RETRANS);
                l.rack.note_delivered(seq, resent);
                if latest.is_none_or(|(t, _, _)| sent_after(before.stamp(), t)) {
                    latest = Some((before.stamp(), seq, resent));
                }
                if !resent {
                    first_sacked = Some(first_sacked.map_or(before.xmit, |t: Time| t.min(before.xmit)));
                    last_sacked = Some(last_sacked.map_or(before.xmit, |t: Time| t.max(before.xmit)));
                }
            });
        }
        d.delivered = d.sacked;
        let mut rtt = None;
        if ack > una {
            let l = lx(&mut self.linux);
            let a = l.q.advance(ack);
            if let Some((t, s, resent)) = a.latest {
                l.rack.note_delivered(s, resent);
                if latest.is_none_or(|(lt, _, _)| sent_after(t, lt)) {
                    latest = Some((t, s, resent));
                }
            }
            l.rack.fack = l.rack.fack.max(ack);
            l.rto_retries = 0;
            d.delivered += a.delivered;
            // `tcp_ack_update_rtt`: the oldest newly acknowledged segment, if none of them was
            // resent (Karn); else the oldest newly SACKed one never resent; else, as timestamps
            // give, the resend that filled the hole at the head.
            let clean = if a.any_resent { None } else { a.first_clean };
            rtt = clean.or(first_sacked).or(a.head.map(|h| h.xmit)).map(|t| now - t);
            if !a.any_resent {
                d.ca_rtt = a.last_clean.map(|t| now - t);
            }
            self.advance_una(now, ack);
            self.sack.as_deref_mut().expect("a linux sender keeps a scoreboard").sb.advance(ack);
            d.una_advanced = true;
            // All acknowledged: the timer stops, and a finite transfer is done.
            self.rearm_timer_on_ack(now, false);
        } else if let Some(t) = first_sacked {
            rtt = Some(now - t);
        }
        if let Some(t) = last_sacked {
            d.ca_rtt = Some(now - t);
        }
        let l = lx(&mut self.linux);
        if let Some((t, _, resent)) = latest {
            l.rack.advance(now, l.min_rtt, t, resent);
        }
        if let Some(r) = rtt {
            l.min_rtt = Some(l.min_rtt.map_or(r, |m| m.min(r)));
            self.rtt.sample_at(r, self.snd_una, self.snd_max);
        }
        d
    }

    /// Step 3, `tcp_fastretrans_alert`. Returns whether RACK armed its reordering timer.
    fn linux_alert(&mut self, now: Time) -> bool {
        let una = self.snd_una;
        let l = lx(&mut self.linux);
        // D. The state ends once `high_seq` is acknowledged (CWR: passed, so that the segment
        // carrying CWR has reached the receiver).
        match l.ca {
            CaState::Cwr if una > l.high_seq => self.linux_end_reduction(),
            CaState::Recovery if una >= l.high_seq => self.linux_end_reduction(),
            _ => {}
        }
        let mut armed = false;
        let l = lx(&mut self.linux);
        match l.ca {
            CaState::Recovery => return self.linux_identify_loss(now),
            CaState::Loss => {
                if una >= l.high_seq {
                    l.ca = CaState::Open;
                    self.in_recovery = false;
                }
                let retrans_before = lx(&mut self.linux).q.retrans_out;
                armed = self.linux_identify_loss(now);
                let l = lx(&mut self.linux);
                let lost_retransmission = l.q.retrans_out < retrans_before;
                if l.ca != CaState::Open && !lost_retransmission {
                    return armed;
                }
            }
            _ => {}
        }
        // Open, Disorder or CWR.
        armed |= self.linux_identify_loss(now);
        let l = lx(&mut self.linux);
        if l.q.lost_out == 0 {
            // `tcp_try_to_open`: Disorder while anything outstanding is SACKed or was resent.
            if l.ca != CaState::Cwr {
                let disorder = l.q.sacked_out > 0
                    || l.q.retrans_out > 0
                    || (l.q.packets_out() > 0 && l.q.get(una).is(EVER_RETRANS));
                let state = if disorder { CaState::Disorder } else { CaState::Open };
                if l.ca != state {
                    l.ca = state;
                    l.high_seq = self.snd_max;
                }
            }
            return armed;
        }
        // `tcp_enter_recovery`.
        lx(&mut self.linux).counts.recoveries += 1;
        self.count(now, |s| s.fast_retransmits += 1);
        if lx(&mut self.linux).ca != CaState::Cwr {
            self.linux_begin_reduction(now, false);
        }
        lx(&mut self.linux).ca = CaState::Recovery;
        self.in_recovery = true;
        armed
    }

    /// `tcp_rack_mark_lost`: RACK looks for losses if it advanced since it last looked; arms its
    /// timer for those it cannot judge yet. Returns whether it did.
    fn linux_identify_loss(&mut self, now: Time) -> bool {
        let srtt = self.rtt.srtt();
        let l = lx(&mut self.linux);
        if !l.rack.advanced || l.q.packets_out() == 0 {
            return false;
        }
        l.rack.advanced = false;
        let recovering = l.ca >= CaState::Recovery;
        let reo_wnd = l.rack.reo_wnd(recovering, l.q.sacked_out, l.min_rtt, srtt);
        let sacked = self.sack.as_deref().expect("a linux sender keeps a scoreboard").sb.ranges();
        let (_, wait) = l.rack.detect_loss(&mut l.q, sacked, now, reo_wnd);
        match wait {
            Some(left) => {
                self.rto_deadline = Some(now + reorder_timeout(left));
                l.timer = TimerKind::Reorder;
                true
            }
            None => false,
        }
    }

    /// `tcp_init_cwnd_reduction`: a window reduction begins (Recovery, CWR): ssthresh from the
    /// controller on Linux's window (its ECN answer for CWR, `by_ecn`), PRR from it.
    fn linux_begin_reduction(&mut self, now: Time, by_ecn: bool) {
        let cwnd = self.cwnd_segments();
        let w = crate::tcp::cc::Window { cwnd: cwnd as f64, ssthresh: self.w.ssthresh };
        let ssthresh = if by_ecn {
            self.cc.ssthresh_on_ecn(&w, cwnd, now)
        } else {
            self.cc.ssthresh_on_loss(&w, cwnd, now)
        };
        self.w.ssthresh = ssthresh.floor();
        self.recover = self.snd_max.checked_sub(1);
        let l = lx(&mut self.linux);
        l.high_seq = self.snd_max;
        l.tlp.high_seq = None;
        l.prr = super::prr::Prr::begin(cwnd);
        if let Some(h) = l.hystart.as_mut() {
            h.on_congestion(false);
        }
    }

    /// `tcp_end_cwnd_reduction`: Recovery or CWR is over: cwnd = ssthresh, state Open (a
    /// rate-based controller keeps the window it set).
    fn linux_end_reduction(&mut self) {
        if self.rate.is_none() {
            self.w.cwnd = self.w.ssthresh;
        }
        lx(&mut self.linux).ca = CaState::Open;
        self.in_recovery = false;
    }

    /// `tcp_process_tlp_ack` found the probe repaired a loss: one window reduction (CWR
    /// entered and left at once), state Open or Disorder.
    fn linux_probe_repaired_loss(&mut self, now: Time) {
        lx(&mut self.linux).counts.probe_repairs += 1;
        self.count(now, |s| s.fast_retransmits += 1);
        self.linux_begin_reduction(now, false);
        self.linux_end_reduction();
    }

    /// `tcp_set_xmit_timer`: the probe timer if a probe is allowed, else the RTO.
    fn linux_set_xmit_timer(&mut self, now: Time) {
        if !self.linux_schedule_probe(now, true) {
            self.linux_rearm_rto(now);
        }
    }

    /// `tcp_schedule_loss_probe`: arms the probe timer in Open and CWR with data outstanding.
    /// `advancing_rto`: the RTO would be restarted now (else it runs from the head's send).
    fn linux_schedule_probe(&mut self, now: Time, advancing_rto: bool) -> bool {
        let rto = self.rtt.rto();
        let srtt = self.rtt.srtt();
        let min_rto = self.cfg.min_rto;
        let l = lx(&mut self.linux);
        let packets_out = l.q.packets_out();
        if packets_out == 0 || !matches!(l.ca, CaState::Open | CaState::Cwr) {
            return false;
        }
        let rto_left = if advancing_rto {
            Some(rto)
        } else {
            (l.q.get(l.q.una()).xmit + rto).0.checked_sub(now.0).map(Time)
        };
        self.rto_deadline = Some(now + pto(srtt, packets_out, min_rto, rto_left));
        l.timer = TimerKind::Probe;
        true
    }

    /// `tcp_rearm_rto`: the RTO, or none with nothing outstanding. Replacing a probe or
    /// reordering timer, it runs from the head's last transmission.
    fn linux_rearm_rto(&mut self, now: Time) {
        let rto = self.rtt.rto();
        let l = lx(&mut self.linux);
        if l.q.packets_out() == 0 {
            self.rto_deadline = None;
            l.timer = TimerKind::Rto;
            return;
        }
        let delay = match l.timer {
            TimerKind::Probe | TimerKind::Reorder => {
                let due = l.q.get(l.q.una()).xmit + rto;
                to_jiffies(Time(due.0.saturating_sub(now.0).max(1_000_000)))
            }
            TimerKind::Rto => rto,
        };
        self.rto_deadline = Some(now + delay);
        l.timer = TimerKind::Rto;
    }

    /// The RTO restarted from now (`tcp_reset_xmit_timer(ICSK_TIME_RETRANS, icsk_rto)`).
    fn linux_restart_rto(&mut self, now: Time) {
        self.rto_deadline = Some(now + self.rtt.rto());
        lx(&mut self.linux).timer = TimerKind::Rto;
    }

    /// `tcp_is_cwnd_limited`: whether the window limited the sender in the last round trip, or
    /// in slow start whether it is below twice the most the sender had out.
    fn linux_cwnd_limited(&mut self) -> bool {
        let slow_start = self.w.cwnd < self.w.ssthresh;
        let cwnd = self.cwnd_segments();
        let l = lx(&mut self.linux);
        l.cwnd_limited || (slow_start && cwnd < 2 * l.max_packets_out)
    }

    /// Step 5, `tcp_cong_control`.
    fn linux_cong_control(&mut self, now: Time, d: Delivery, newly_lost: u32) {
        if self.rate.is_some() {
            // A rate-based controller sets the window on every ACK (Linux `cong_control`).
            return self.rate_ack_end(now);
        }
        let ssthresh = self.w.ssthresh as u32;
        let l = lx(&mut self.linux);
        if matches!(l.ca, CaState::Cwr | CaState::Recovery) {
            let in_flight = l.q.in_flight();
            if let Some(cwnd) = l.prr.on_ack(d.delivered, newly_lost, d.una_advanced, in_flight, ssthresh) {
                self.w.cwnd = cwnd as f64;
            }
            return;
        }
        // `tcp_may_raise_cwnd`: in-order progress only (no reordering is ever measured here).
        if !d.una_advanced {
            return;
        }
        let limited = self.linux_cwnd_limited();
        let l = lx(&mut self.linux);
        if !limited {
            // RFC 9438 §4.2: an application-limited period begins (or goes on).
            l.app_limited_since.get_or_insert(now);
            return;
        }
        if let Some(since) = l.app_limited_since.take() {
            self.cc.on_app_limited(since, now);
        }
        let mut segments = d.delivered;
        if self.w.cwnd < self.w.ssthresh {
            if let Some(h) = l.hystart.as_mut() {
                match h.on_ack(now, self.snd_una, self.snd_max, d.ca_rtt, self.w.cwnd) {
                    Step::Grow { limit } => segments = segments.min(limit),
                    Step::Conservative { limit } => {
                        self.w.cwnd += segments.min(limit) as f64 / CSS_GROWTH_DIVISOR;
                        return;
                    }
                    // Slow start ends: what the ACK delivered grows the window as in
                    // congestion avoidance.
                    Step::Exit => self.w.ssthresh = self.w.cwnd.floor(),
                }
            }
        }
        // Linux counts every segment delivered (`tcp_slow_start(acked)`, `tcp_cong_avoid_ai`).
        let srtt = self.rtt.srtt();
        for _ in 0..segments {
            self.cc.on_ack(&mut self.w, 1, now, srtt);
        }
    }

    /// Step 6: lost segments first (`tcp_xmit_retransmit_queue`), then new data
    /// (`tcp_write_xmit`), while in flight < cwnd and the pacer lets them go.
    pub(in crate::tcp) fn linux_send(&mut self, now: Time, out: &mut Vec<Packet>) {
        if self.phase != Phase::Established {
            return;
        }
        self.pace_deadline = None;
        let cwnd = self.cwnd_segments();
        let mut from = self.snd_una;
        loop {
            let l = lx(&mut self.linux);
            if l.q.in_flight() >= cwnd {
                break;
            }
            let Some(seq) = l.q.next_lost(from) else { break };
            if let Some(at) = self.pacer.hold_until(now) {
                self.pace_deadline = Some(at);
                return;
            }
            self.linux_retransmit(now, seq, out);
            from = seq + 1;
        }
        let mut sent = 0;
        // `tcp_event_new_data_sent` rearms the RTO when nothing was outstanding or a probe
        // timer was pending; the probe timer armed after the burst replaces it where allowed.
        let l = lx(&mut self.linux);
        let rearm = l.q.packets_out() == 0 || l.timer == TimerKind::Probe;
        // New data in GSO packets (`tcp_write_xmit`): the head buffer, split to what the
        // window allows, or held for an ACK (TSO deferral); a packet's segments leave together.
        // (Sized once per call, and only when the window lets something go: most ACKs of a
        // window-limited flow send nothing.)
        let mut sized: Option<u32> = None;
        let mut deferred_by_cwnd = false;
        while self.snd_max < self.limit && self.snd_max - self.snd_una < self.cfg.max_window {
            let in_flight = lx(&mut self.linux).q.in_flight();
            let quota = tso::cwnd_quota(cwnd, in_flight);
            if quota == 0 {
                break;
            }
            let max_segs = *sized.get_or_insert_with(|| self.linux_tso_segs());
            let l = lx(&mut self.linux);
            let left = self.limit - self.snd_max;
            let buffer = tso::head_buffer(l.head_rest, max_segs, left);
            let send_window = self.cfg.max_window - (self.snd_max - self.snd_una);
            if buffer > 1 && !tso::fits_whole(cwnd, in_flight, send_window, max_segs) {
                let check = tso::DeferCheck {
                    now,
                    recovering: l.ca >= CaState::Recovery,
                    last_write: match self.pacer.mode {
                        Pacing::Off => l.last_write,
                        _ => l.last_write.max(self.pacer.next_send()),
                    },
                    cwnd,
                    in_flight,
                    rwnd: self.cfg.max_window,
                    send_window,
                    max_segs,
                    buffer,
                    last_of_data: buffer == left,
                    oldest_sent: (l.q.packets_out() > 0).then(|| l.q.get(self.snd_una).xmit),
                    srtt: self.rtt.srtt(),
                };
                if let tso::Defer::Wait { cwnd_limited } = tso::should_defer(&check) {
                    l.counts.deferrals += 1;
                    deferred_by_cwnd = cwnd_limited;
                    break;
                }
            }
            if let Some(at) = self.pacer.hold_until(now) {
                self.pace_deadline = Some(at);
                break;
            }
            let n = buffer.min(quota).min(max_segs).min(send_window);
            l.head_rest = buffer;
            l.counts.gso_packets += 1;
            for _ in 0..n {
                self.linux_send_new(now, out);
            }
            if n > 1 {
                // The last segment of a GSO packet of two or more carries PSH, as Linux 6.18
                // sends them (measured: 97 % of its two-segment packets, 9 % of single
                // segments); a Linux receiver acknowledges such a segment at once.
                out.last_mut().expect("the packet's segments were just sent").flags |= flags::PSH;
            }
            sent += n;
        }
        let l = lx(&mut self.linux);
        if sent > 0 && matches!(l.ca, CaState::Cwr | CaState::Recovery) {
            l.prr.on_sent(sent);
        }
        // `tcp_cwnd_validate` (a buffer held back by the window counts as limited by it).
        let is_limited = l.q.in_flight() >= cwnd || deferred_by_cwnd;
        if sent > 0 || is_limited {
            let packets_out = l.q.packets_out();
            if self.snd_una >= l.cwnd_usage_seq
                || is_limited
                || (!l.cwnd_limited && packets_out > l.max_packets_out)
            {
                l.cwnd_limited = is_limited;
                l.max_packets_out = packets_out;
                l.cwnd_usage_seq = self.snd_max;
            }
        }
        if sent > 0 && !self.linux_schedule_probe(now, false) && rearm {
            self.linux_rearm_rto(now);
        }
    }

    /// `tcp_tso_segs`: segments per GSO packet now ([`tso::autosize`]), from the pacing rate
    /// Linux keeps whether or not it paces (`tcp_update_pacing_rate`: 2 × cwnd · MSS ÷ srtt
    /// in slow start below half ssthresh, else 1.2 ×; a controller's own rate as it is) and
    /// the device's limit `gso_segments`.
    fn linux_tso_segs(&self) -> u32 {
        if self.cfg.gso_segments == 1 {
            return 1;
        }
        let srtt = self.rtt.srtt();
        let mss = self.cfg.mss();
        let l = self.linux.as_deref().expect("a linux sender has its Linux state");
        let (rate, min_segs) = if self.pacer.mode == Pacing::Controller {
            let bytes = self.pacer.rate_bps(&self.w, srtt).map(|bps| bps / 8.0);
            // `bbr_min_tso_segs`: one segment below 1.2 Mb/s.
            (bytes, if bytes.is_some_and(|b| b < 1.2e6 / 8.0) { 1 } else { tso::MIN_TSO_SEGS })
        } else {
            let ratio = if self.w.cwnd < self.w.ssthresh / 2.0 { 2.0 } else { 1.2 };
            let segs = self.w.cwnd.max(l.q.packets_out() as f64);
            let rate = srtt.filter(|s| *s > Time::ZERO).map(|s| ratio * segs * mss as f64 / s.secs_f64());
            (rate, tso::MIN_TSO_SEGS)
        };
        tso::autosize(rate, l.min_rtt, mss, min_segs, self.cfg.gso_segments)
    }

    /// New segment `snd_max` leaves.
    fn linux_send_new(&mut self, now: Time, out: &mut Vec<Packet>) {
        let seq = self.snd_max;
        self.snd_max += 1;
        self.snd_nxt = self.snd_max;
        self.emit(now, seq, false, out);
        let l = lx(&mut self.linux);
        l.q.on_sent(seq, now, false, false);
        l.head_rest = l.head_rest.saturating_sub(1);
    }

    /// Resends lost segment `seq` (`tcp_retransmit_skb`).
    fn linux_retransmit(&mut self, now: Time, seq: u32, out: &mut Vec<Packet>) {
        self.emit(now, seq, true, out);
        let l = lx(&mut self.linux);
        l.q.on_sent(seq, now, true, true);
        let ca = l.ca;
        if matches!(ca, CaState::Cwr | CaState::Recovery) {
            l.prr.on_sent(1);
        }
        if ca != CaState::Loss {
            self.count(now, |s| s.recovery_retransmits += 1);
        }
        let restart = match self.cfg.rto_restart {
            // Linux: the head of the retransmission queue, unless RACK's timer is pending.
            RtoRestart::Head => seq == self.snd_una && lx(&mut self.linux).timer != TimerKind::Reorder,
            RtoRestart::EveryRetransmission => ca != CaState::Loss || seq == self.snd_una,
            RtoRestart::AckOnly => false,
        };
        if restart {
            self.linux_restart_rto(now);
        }
    }

    /// The sender's single timer expired (the caller checked the deadline).
    pub(in crate::tcp) fn linux_on_timer(&mut self, now: Time, out: &mut Vec<Packet>) {
        match lx(&mut self.linux).timer {
            TimerKind::Reorder => self.linux_reorder_timeout(now, out),
            TimerKind::Probe => self.linux_send_probe(now, out),
            TimerKind::Rto => self.linux_retransmission_timeout(now, out),
        }
    }

    /// `tcp_rack_reo_timeout`: RACK looks again; losses it finds start recovery and are resent.
    fn linux_reorder_timeout(&mut self, now: Time, out: &mut Vec<Packet>) {
        let srtt = self.rtt.srtt();
        let l = lx(&mut self.linux);
        let recovering = l.ca >= CaState::Recovery;
        let reo_wnd = l.rack.reo_wnd(recovering, l.q.sacked_out, l.min_rtt, srtt);
        let sacked = self.sack.as_deref().expect("a linux sender keeps a scoreboard").sb.ranges();
        let (lost, _) = l.rack.detect_loss(&mut l.q, sacked, now, reo_wnd);
        l.counts.reorder_timeouts += 1;
        if lost > 0 {
            if l.ca != CaState::Recovery {
                l.counts.recoveries += 1;
                self.count(now, |s| s.fast_retransmits += 1);
                if lx(&mut self.linux).ca != CaState::Cwr {
                    self.linux_begin_reduction(now, false);
                }
                lx(&mut self.linux).ca = CaState::Recovery;
                self.in_recovery = true;
                let ssthresh = self.w.ssthresh as u32;
                let l = lx(&mut self.linux);
                let in_flight = l.q.in_flight();
                if self.rate.is_none() {
                    if let Some(cwnd) = l.prr.on_ack(1, lost, false, in_flight, ssthresh) {
                        self.w.cwnd = cwnd as f64;
                    }
                }
            }
            self.linux_send(now, out);
        }
        if lx(&mut self.linux).timer != TimerKind::Rto {
            self.linux_rearm_rto(now);
        }
    }

    /// `tcp_send_loss_probe`: new data if there is any the receiver's window allows, else the
    /// highest segment sent again; then the RTO from now. One probe per episode.
    fn linux_send_probe(&mut self, now: Time, out: &mut Vec<Packet>) {
        if lx(&mut self.linux).tlp.high_seq.is_some() || self.snd_max == self.snd_una {
            return self.linux_rearm_rto(now);
        }
        let resent = if self.snd_max < self.limit && self.snd_max - self.snd_una < self.cfg.max_window {
            // (The RTO is restarted from now below, as after `tcp_event_new_data_sent`.)
            self.linux_send_new(now, out);
            if matches!(lx(&mut self.linux).ca, CaState::Cwr | CaState::Recovery) {
                lx(&mut self.linux).prr.on_sent(1);
            }
            false
        } else {
            let seq = self.snd_max - 1;
            self.emit(now, seq, true, out);
            self.count(now, |s| s.recovery_retransmits += 1);
            lx(&mut self.linux).q.on_sent(seq, now, true, false);
            true
        };
        let high = self.snd_max;
        let l = lx(&mut self.linux);
        l.tlp.on_probe(high, resent);
        l.counts.probes += 1;
        self.linux_restart_rto(now);
    }

    /// `tcp_retransmit_timer` and `tcp_enter_loss`: every unSACKed segment but those sent within
    /// RACK.rtt is lost; ssthresh is cut unless this answers a reduction already made; cwnd =
    /// in flight + 1; the head is resent at once and the timer backs off.
    fn linux_retransmission_timeout(&mut self, now: Time, out: &mut Vec<Packet>) {
        if self.snd_max == self.snd_una {
            self.rto_deadline = None;
            return;
        }
        self.count(now, |s| s.timeouts += 1);
        let una = self.snd_una;
        let l = lx(&mut self.linux);
        // `tcp_timeout_mark_lost`.
        let recent: Vec<u32> =
            l.q.unsacked_from(una)
                .filter(|&(seq, s)| seq == una || s.xmit + l.rack.rtt <= now)
                .map(|(seq, _)| seq)
                .collect();
        for seq in recent {
            l.q.mark_lost(seq);
        }
        let reduce =
            l.ca <= CaState::Disorder || una >= l.high_seq || (l.ca == CaState::Loss && l.rto_retries == 0);
        if reduce {
            let cwnd = self.cwnd_segments();
            let w = crate::tcp::cc::Window { cwnd: cwnd as f64, ssthresh: self.w.ssthresh };
            self.w.ssthresh = self.cc.ssthresh_on_timeout(&w, cwnd, now).floor();
        }
        let l = lx(&mut self.linux);
        self.w.cwnd = (l.q.in_flight() + 1) as f64;
        if let Some(h) = l.hystart.as_mut() {
            h.on_congestion(true);
        }
        l.ca = CaState::Loss;
        l.high_seq = self.snd_max;
        l.tlp.high_seq = None;
        self.in_recovery = false;
        self.recover = self.snd_max.checked_sub(1);
        self.rate_on_timeout(now);
        self.pacer.reset();
        // The head goes at once, whatever the window.
        self.emit(now, una, true, out);
        let l = lx(&mut self.linux);
        l.q.on_sent(una, now, true, true);
        l.rto_retries += 1;
        self.rtt.back_off();
        self.linux_restart_rto(now);
    }

    /// ECN-Echo on an ACK just handled (RFC 3168 §6.1.2 as Linux `tcp_enter_cwr`): in Open or
    /// Disorder, a window reduction by PRR (CWR state) until what is outstanding now is
    /// acknowledged; nothing is resent.
    pub(in crate::tcp) fn linux_on_ece(&mut self, now: Time) {
        if !self.cfg.ecn || self.phase != Phase::Established {
            return;
        }
        if !matches!(lx(&mut self.linux).ca, CaState::Open | CaState::Disorder) {
            return;
        }
        self.count(now, |s| s.ecn_reactions += 1);
        self.linux_begin_reduction(now, true);
        lx(&mut self.linux).ca = CaState::Cwr;
    }

    /// Whether `seq` is marked lost on the retransmission queue (for tests and traces).
    pub fn linux_is_lost(&self, seq: u32) -> bool {
        self.linux.as_deref().is_some_and(|l| seq >= l.q.una() && seq < l.q.high() && l.q.get(seq).is(LOST))
    }
}

#[cfg(test)]
mod tests {
    //! Scripted exchanges on [`crate::tcp::test_path`]'s network: the receiver acknowledges
    //! every segment (no delayed ACKs), so each assertion counts segments and round trips
    //! exactly.
    use super::*;
    use crate::tcp::cc::Window;
    use crate::tcp::test_path::{Path, RTT};
    use crate::tcp::{Recovery, TcpConfig};

    fn ms(x: u64) -> Time {
        Time::from_ms(x)
    }

    /// A Linux sender that has sent a first window of `window` segments, in congestion
    /// avoidance, before any RTT sample; the path drops `drop`.
    fn path(window: u32, drop: &[(u32, u32)]) -> Path {
        let mut cfg = TcpConfig::default_for(1000, Recovery::Linux);
        cfg.delayed_ack = false;
        cfg.initial_window = window;
        Path::start(cfg, Window { cwnd: window as f64, ssthresh: window as f64 }, drop)
    }

    fn state(p: &Path) -> &LinuxState {
        p.s.linux_state().unwrap()
    }

    #[test]
    fn three_sacks_start_recovery_at_once_and_prr_halves_the_window_in_one_rtt() {
        // Segment 0 of 0..20 is lost; 1..19 arrive one RTT later. The first two SACKs only arm
        // RACK's timer (window min_RTT/4); the third makes the window 0: 0 is lost at once, and
        // resent on that ACK (PRR forces the fast retransmission). PRR then sends one segment
        // per two delivered (ssthresh 10 of a window of 20) until the resend's ACK ends
        // recovery, with cwnd = ssthresh.
        let mut p = path(20, &[(0, 0)]);
        p.run_until(|p| state(p).ca == CaState::Recovery);
        assert_eq!(p.s.snd_una, 0);
        assert_eq!(p.s.scoreboard().unwrap().sacked(), 3);
        assert_eq!(p.resent, vec![(RTT, 0)]);
        assert_eq!((p.s.w.ssthresh, p.s.stats.fast_retransmits), (10.0, 1));
        p.run_until(|p| state(p).ca == CaState::Open);
        // 19 segments delivered in recovery: ⌈10·19/20⌉ = 10 sent in all, the resend included.
        // (The ACK that ends recovery then grows cwnd by its one segment: 10 + 1/10.)
        assert_eq!(state(&p).prr.out, 10);
        assert_eq!(p.s.w.cwnd.floor(), 10.0);
        assert_eq!((p.s.stats.timeouts, p.s.stats.retransmits), (0, 1));
    }

    #[test]
    fn one_sack_waits_a_quarter_of_the_min_rtt_on_the_reordering_timer() {
        // Two segments out, the first lost: a single SACK can never become three duplicate ACKs.
        // The hole left with the SACKed segment, so it is lost min_RTT/4 = 25 ms after the
        // SACK; RACK's timer waits that + 2 ms in whole 4-ms jiffies, 28 ms. Then the hole is
        // resent: no timeout.
        let mut p = path(2, &[(0, 0)]);
        p.run_until(|p| state(p).timer == TimerKind::Reorder);
        assert_eq!(p.now, RTT);
        assert_eq!(p.s.rto_deadline(), Some(RTT + ms(28)));
        p.run_until(|p| !p.resent.is_empty());
        assert_eq!(p.resent, vec![(RTT + ms(28), 0)]);
        assert_eq!(state(&p).ca, CaState::Recovery);
        p.run_until(|p| state(p).ca == CaState::Open);
        assert_eq!(p.s.stats.timeouts, 0);
    }

    #[test]
    fn a_lost_tail_is_repaired_by_a_probe_not_a_timeout() {
        // Ten segments out, the last two (8 and 9) lost; nothing follows them. The ACKs of 0..7
        // come back at 100 ms; the probe timer then waits PTO = 2·SRTT + 2 ms = 204 ms (SRTT
        // 100 ms, whole jiffies) and the probe resends 9 (no new data: the transfer has 10
        // segments). Its SACK lets RACK find 8 lost; both are repaired without the RTO, and the
        // probe's repair reduces the window once.
        let mut p = path(10, &[(8, 0), (9, 0)]);
        p.s.limit = 10;
        p.run_until(|p| p.s.snd_una == 8);
        assert_eq!(state(&p).timer, TimerKind::Probe);
        assert_eq!(p.s.rto_deadline(), Some(RTT + ms(204)));
        p.run_until(|p| !p.resent.is_empty());
        assert_eq!(p.resent, vec![(RTT + ms(204), 9)]);
        assert_eq!(state(&p).tlp.high_seq, Some(10));
        p.run_until(|p| p.s.phase() == Phase::Done);
        assert_eq!(p.resent.iter().map(|&(_, s)| s).collect::<Vec<_>>(), vec![9, 8]);
        assert_eq!(p.s.stats.timeouts, 0);
        assert_eq!(p.s.stats.fast_retransmits, 1);
    }

    #[test]
    fn a_lost_retransmission_is_found_by_rack_without_a_timeout() {
        // 0 is lost, and so is its first resend. New data sent after the resend is SACKed one
        // RTT later: the resend left before it, so RACK marks it lost (no timeout), and 0 goes a
        // third time.
        let mut p = path(20, &[(0, 0), (0, 1)]);
        p.run_until(|p| p.s.snd_una > 0);
        let times: Vec<u32> = p.resent.iter().map(|&(_, s)| s).collect();
        assert_eq!(times, vec![0, 0]);
        assert_eq!(p.s.stats.timeouts, 0);
        // The first resend on the third SACK, at one RTT; the second on the SACK of the first
        // new segment sent after it, one RTT later (in recovery RACK's window is 0).
        assert_eq!((p.resent[0].0, p.resent[1].0), (RTT, RTT + RTT));
    }

    #[test]
    fn new_data_leaves_in_gso_packets_of_at_most_half_the_window() {
        // The initial window of 10 with no RTT sample (autosizing asks for 64 KB): two packets
        // of 5 (`tcp_cwnd_test`), leaving at the same time; the device limited to one segment
        // (`gso_segments = 1`): ten packets of one, as the RFC-era senders send.
        let p = path(10, &[]);
        assert_eq!((state(&p).counts.gso_packets, p.s.snd_max), (2, 10));
        assert!(p.log.iter().all(|&(t, _)| t == Time::ZERO));
        let mut cfg = TcpConfig::default_for(1000, Recovery::Linux);
        cfg.initial_window = 10;
        cfg.gso_segments = 1;
        let p = Path::start(cfg, Window { cwnd: 10.0, ssthresh: 10.0 }, &[]);
        assert_eq!((state(&p).counts.gso_packets, p.s.snd_max), (10, 10));
    }

    #[test]
    fn the_last_segment_of_each_gso_packet_of_two_or_more_carries_psh() {
        // Linux 6.18, measured in the emulator: 97 % of its two-segment GSO packets end with
        // PSH. The initial window leaves as two packets of 5 (above): PSH on 4 and 9 only; one
        // segment at a time (`gso_segments = 1`), none.
        let first_window = |gso_segments: u32| {
            let mut cfg = TcpConfig::default_for(1000, Recovery::Linux);
            cfg.initial_window = 10;
            cfg.gso_segments = gso_segments;
            let mut s = TcpSender::new(cfg, 0, 0);
            s.w = Window { cwnd: 10.0, ssthresh: 10.0 };
            let mut out = Vec::new();
            s.start(Time::ZERO, &mut out);
            out.iter().filter(|p| p.flags & flags::PSH != 0).map(|p| p.seq).collect::<Vec<_>>()
        };
        assert_eq!(first_window(0), vec![4, 9]);
        assert!(first_window(1).is_empty());
    }

    #[test]
    fn a_timeout_marks_the_unsacked_lost_and_sets_cwnd_to_in_flight_plus_one() {
        // Every segment of a window of 5 is lost: no ACK, no probe answer. The probe (PTO) goes
        // first, then the RTO fires: everything unSACKed is lost, cwnd = 0 in flight + 1, the
        // head is resent, ssthresh = 5 / 2, and the timer backs off.
        let drops: Vec<(u32, u32)> = (0..6).map(|s| (s, 0)).collect();
        let mut p = path(5, &drops);
        let rto_before = p.s.rtt.rto();
        p.run_until(|p| p.s.stats.timeouts == 1);
        let l = state(&p);
        assert_eq!(l.ca, CaState::Loss);
        assert_eq!(l.q.lost_out, l.q.packets_out());
        assert_eq!(p.s.w.ssthresh, 2.0);
        assert_eq!(p.s.w.cwnd, 1.0);
        assert_eq!(p.s.rtt.rto(), Time(rto_before.0 * 2));
        // The probe went first, with new data (segment 5, also dropped).
        assert_eq!(p.s.snd_max, 6);
        p.run_until(|p| p.s.snd_una >= 6);
        assert_eq!(p.s.stats.timeouts, 1, "the losses are resent in order as the window grows");
        assert_eq!(state(&p).ca, CaState::Open);
    }
}
