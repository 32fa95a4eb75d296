//! The TCP sender: sequence state, loss detection and recovery, RTT estimation, timers.
//!
//! Owns the send sequence state, Reno and NewReno recovery, RTT timing, the retransmission timer's
//! and the pacer's deadlines; SACK recovery ([`super::sack`]) and rate sampling ([`super::rate`])
//! extend it in their own files. Must not know the event loop, links or users (it takes ACKs and
//! timer calls through [`super::flow`], and connections through `accept`).
//!
//! Heads up: read RFC 5681 §3, RFC 6582 §3.2 and RFC 6298 §2–5 before editing; each rule
//! below cites the clause it implements. Deliberate simplifications, all as in ns-2's one-way
//! TCP that the seeds' simulations used: no SYN/FIN (connection set-up is another issue), the
//! receiver window is fixed at `max_window`, and RTT is timed on one segment per round trip
//! (BSD style) rather than with timestamps, so Karn's rule applies.
//!
//! ECN (RFC 3168 §6.1.2), for a flow with `TcpConfig::ecn`: new data goes out ECT; an ACK
//! with ECE reduces the window as a loss would, without retransmitting (`on_ece`), at most
//! once per window of data; and the first new segment after any window reduction carries CWR.
//! Deliberate difference from ns-2 and Linux: the ACKs that echo ECE after the reaction grow
//! cwnd as any ACK does (at most about one segment over the round trip they span), so that ECN
//! stays apart from the ACK processing in `on_ack`.
//! SACK loss recovery (RFC 6675, `Recovery::Sack`) lives in [`super::sack::recovery`], an
//! `impl TcpSender` block of its own: it shares this state, the timeout and the window
//! arithmetic, and takes over each ACK and the end of each timeout. For a controller that runs
//! on delivery-rate samples (BBR), [`super::rate::sender`], another `impl TcpSender` block,
//! keeps their per-segment state and hands the controller a sample on every ACK; such a sender
//! is always paced at the rate the controller sets. The fields and helpers those two files
//! share with this one are visible within [`crate::tcp`] only, never outside it.
//!
//! The sender never touches the scheduler. It appends packets to `out` and keeps its two
//! deadlines, the retransmission timer's and the pacer's; its flow ([`super::flow`]) states
//! them to the simulator, which schedules a (lazy) timer event for each.

use std::sync::Arc;

use super::cc::{Cc, CongestionControl, Window};
use super::linux::LinuxState;
use super::pacer::{Pacer, Pacing};
use super::rate::sender::RateState;
use super::rto::RttEstimator;
use super::sack::recovery::SackRecovery;
use super::{Recovery, TcpConfig, HEADER_BYTES};
use crate::monitor::trace::TraceSample;
use crate::packet::{flags, Kind, Packet};
use crate::units::Time;

/// Where a connection stands (finite transfers; a long-lived flow is always Established).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// SYN-ACK sent, waiting for the client's ACK.
    SynReceived,
    Established,
    /// Every segment acknowledged.
    Done,
}

/// Counters over the whole run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SenderStats {
    /// Data packets put on the wire, retransmissions included.
    pub sent: u64,
    pub retransmits: u64,
    pub timeouts: u64,
    /// Losses detected by three duplicate ACKs (SACK: loss recoveries entered, RFC 6675 §5
    /// step 4, on the third duplicate ACK or once the first unacknowledged segment IsLost).
    pub fast_retransmits: u64,
    /// Retransmissions sent by fast retransmit and recovery (the rest follow a timeout: go-back-N,
    /// which may resend segments the receiver already holds, or for SACK the segments the
    /// scoreboard shows missing).
    pub recovery_retransmits: u64,
    /// Payload bytes newly acknowledged (kept in the whole-run counters only).
    pub acked_bytes: u64,
    /// Window reductions in answer to ECN-Echo (RFC 3168 §6.1.2).
    pub ecn_reactions: u64,
}

impl SenderStats {
    /// Window reductions: fast retransmits, timeouts and ECN reactions (each is followed by
    /// CWR, RFC 3168 §6.1.2).
    fn window_reductions(&self) -> u64 {
        self.fast_retransmits + self.timeouts + self.ecn_reactions
    }
}

/// The counters a connection's transfer record reads, as they stood when it was accepted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct ConnStart {
    retransmits: u64,
    timeouts: u64,
}

#[derive(Clone, Debug)]
pub struct TcpSender {
    /// Its traffic entry's settings, one copy shared by the entry's senders (64 B a flow less,
    /// and one record in the cache for all of them).
    pub cfg: Arc<TcpConfig>,
    flow: u32,
    route: u32,
    pub(in crate::tcp) cc: Cc,
    pub w: Window,
    /// Oldest unacknowledged segment.
    pub snd_una: u32,
    /// Next segment to send (falls back to `snd_una` after a timeout: go-back-N).
    pub snd_nxt: u32,
    /// One past the highest segment ever sent.
    pub snd_max: u32,
    /// Segments the application has to send (u32::MAX: unlimited).
    pub(in crate::tcp) limit: u32,
    pub(in crate::tcp) dupacks: u32,
    pub(in crate::tcp) in_recovery: bool,
    /// RFC 6582 `recover`: the highest segment sent when the last fast retransmit or timeout
    /// happened; None before the first (see `covers_more_than_recover`).
    pub(in crate::tcp) recover: Option<u32>,
    partial_acks: u32,
    pub rtt: RttEstimator,
    /// The segment being timed and when it was sent (one sample per round trip).
    timed: Option<(u32, Time)>,
    /// `snd_una` at the last timeout: a second RTO for the same segment keeps ssthresh.
    last_rto_una: Option<u32>,
    /// When the retransmission timer expires, if it runs.
    pub(in crate::tcp) rto_deadline: Option<Time>,
    pub(in crate::tcp) pacer: Pacer,
    /// When the pacer lets the next segment go, if the window has one waiting for it.
    pub(in crate::tcp) pace_deadline: Option<Time>,
    pub stats: SenderStats,
    /// `stats` when the current connection was accepted: its own counts are the difference
    /// (two numbers kept, not a third set of counters: 40 B a flow).
    conn_start: ConnStart,
    /// Connection number (finite transfers); packets carry it.
    conn: u16,
    pub(in crate::tcp) phase: Phase,
    /// Payload bytes of the last segment of a finite transfer.
    last_payload: u32,
    /// When the SYN-ACK was first sent, for the handshake's RTT sample.
    syn_ack_sent: Option<Time>,
    syn_ack_retransmitted: bool,
    /// The same counters, only for events inside the measured window (`cfg.measured`).
    /// Counted by event time because a sender may process an ACK ahead of the global clock
    /// (see `Sim::forward`).
    pub window_stats: SenderStats,
    /// `snd_max` at the last ECN reaction: the first new segment sent after it, which carries
    /// CWR (see `on_ece`).
    ecn_high: Option<u32>,
    /// Window reductions of the run (fast retransmits, timeouts, ECN reactions) when the last
    /// CWR went out, or when this connection was accepted: CWR goes on the first new segment
    /// after each further one.
    cwr_reductions: u64,
    /// `Recovery::Sack` only: the scoreboard and RFC 6675's recovery state (boxed, so that
    /// other senders stay as small as before).
    pub(in crate::tcp) sack: Option<Box<SackRecovery>>,
    /// A controller that runs on delivery-rate samples only: their state (boxed likewise).
    pub(in crate::tcp) rate: Option<Box<RateState>>,
    /// `Recovery::Linux` only: the Linux sender's state (see [`super::linux`]).
    pub(in crate::tcp) linux: Option<Box<LinuxState>>,
    /// Segments Limited Transmit sent (RFC 3042, [`super::limited_transmit`]) since the last
    /// cumulative ACK, left out of FlightSize when ssthresh is set.
    pub(in crate::tcp) limited_sent: u32,
}

impl TcpSender {
    pub fn new(cfg: impl Into<Arc<TcpConfig>>, flow: u32, route: u32) -> TcpSender {
        let cfg = cfg.into();
        let cc = cfg.cc.build(&cfg);
        // A rate-based controller paces at its own rate, whatever the `pacing` setting.
        let rate_based = cc.wants_rate_samples();
        let mut pacer = Pacer::new(if rate_based { Pacing::Controller } else { cfg.pacing }, cfg.packet);
        if let Some(r) = cc.pacing_rate_bps() {
            pacer.set_rate(r);
        }
        TcpSender {
            flow,
            route,
            cc,
            // RFC 5681 §3.1: initial ssthresh arbitrarily high; here, the receiver window.
            w: Window { cwnd: cfg.initial_window as f64, ssthresh: cfg.max_window as f64 },
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            limit: u32::MAX,
            dupacks: 0,
            in_recovery: false,
            recover: None,
            partial_acks: 0,
            rtt: if cfg.recovery == Recovery::Linux {
                RttEstimator::linux(cfg.initial_rto, cfg.min_rto, cfg.max_rto)
            } else {
                RttEstimator::new(cfg.initial_rto, cfg.min_rto, cfg.max_rto, cfg.granularity)
            },
            timed: None,
            last_rto_una: None,
            rto_deadline: None,
            pacer,
            pace_deadline: None,
            stats: SenderStats::default(),
            conn_start: ConnStart::default(),
            conn: 0,
            phase: Phase::Established,
            last_payload: 0,
            syn_ack_sent: None,
            syn_ack_retransmitted: false,
            window_stats: SenderStats::default(),
            ecn_high: None,
            cwr_reductions: 0,
            sack: cfg.recovery.uses_sack().then(Box::default),
            rate: rate_based.then(|| Box::new(RateState::new(&cfg))),
            linux: (cfg.recovery == Recovery::Linux).then(|| Box::new(LinuxState::new(&cfg))),
            limited_sent: 0,
            // Last: the fields above read it.
            cfg,
        }
    }

    /// Gives the congestion controller its random stream (see [`Cc::set_rng`]).
    pub fn set_cc_rng(&mut self, rng: crate::rng::Rng) {
        self.cc.set_rng(rng);
    }

    /// When the retransmission timer expires, if it runs.
    pub fn rto_deadline(&self) -> Option<Time> {
        self.rto_deadline
    }

    /// When the pacer lets the next waiting segment go, if one waits for it.
    pub fn pace_deadline(&self) -> Option<Time> {
        self.pace_deadline
    }

    /// The route its data packets take.
    pub fn route(&self) -> u32 {
        self.route
    }

    #[inline]
    pub(in crate::tcp) fn count(&mut self, now: Time, bump: fn(&mut SenderStats)) {
        bump(&mut self.stats);
        if self.cfg.measured.contains(now) {
            bump(&mut self.window_stats);
        }
    }

    pub fn in_recovery(&self) -> bool {
        self.in_recovery
    }

    /// The congestion controller's state (for tests and tools that inspect a flow).
    pub fn cc(&self) -> &Cc {
        &self.cc
    }

    /// FlightSize (RFC 5681 §2): sent but not yet cumulatively acknowledged, segments.
    pub(in crate::tcp) fn flight(&self) -> u32 {
        self.snd_max - self.snd_una
    }

    /// Opens the connection: sends the initial window.
    pub fn start(&mut self, now: Time, out: &mut Vec<Packet>) {
        self.send_new_data(now, out);
    }

    /// Sends what the window allows outside any ACK: the initial window, or the first data
    /// after a handshake.
    fn send_new_data(&mut self, now: Time, out: &mut Vec<Packet>) {
        if self.is_linux() {
            self.linux_send(now, out);
        } else {
            self.send_allowed(now, out);
        }
    }

    /// The application closes a long-lived connection (a timed change takes the flow away):
    /// nothing beyond what has been sent goes out; what is outstanding is still delivered,
    /// retransmitted as needed, and once all of it is acknowledged the connection is done and
    /// its timers stop (RFC 9293 §3.10.4, CLOSE: the data already sent "will be transmitted
    /// and delivered"; a long-lived flow has no FIN, as it had no SYN).
    pub fn close(&mut self) {
        self.limit = self.limit.min(self.snd_max);
        // Every segment sent was full-sized: a retransmitted last one is too.
        self.last_payload = self.cfg.mss();
        if self.snd_una >= self.limit {
            self.phase = Phase::Done;
            self.rto_deadline = None;
            self.pace_deadline = None;
        }
    }

    /// The connection it serves now.
    pub fn conn(&self) -> u16 {
        self.conn
    }

    /// The current connection's retransmissions and timeouts (for its transfer record).
    pub fn conn_counts(&self) -> (u64, u64) {
        let (start, now) = (self.conn_start, self.stats);
        (now.retransmits - start.retransmits, now.timeouts - start.timeouts)
    }

    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// A client's request for `bytes` arrives on connection `conn`: everything about the
    /// previous connection is forgotten (a new connection starts with the initial window and
    /// RTO, RFC 6298 §2.1) except the run's counters. With `handshake` the server answers the
    /// SYN with a SYN-ACK and sends data once the client's ACK arrives; without, it sends at
    /// once.
    pub fn accept(&mut self, now: Time, conn: u16, bytes: u64, handshake: bool, out: &mut Vec<Packet>) {
        let (stats, window_stats) = (self.stats, self.window_stats);
        let cc_rng = self.cc.rng().cloned();
        *self = TcpSender::new(Arc::clone(&self.cfg), self.flow, self.route);
        (self.stats, self.window_stats, self.conn) = (stats, window_stats, conn);
        self.conn_start = ConnStart { retransmits: stats.retransmits, timeouts: stats.timeouts };
        self.cwr_reductions = stats.window_reductions();
        // The controller's random stream goes on from where the last connection left it.
        if let Some(rng) = cc_rng {
            self.cc.set_rng(rng);
        }
        let mss = self.cfg.mss() as u64;
        let segments = bytes.max(1).div_ceil(mss);
        self.limit = segments.min(u32::MAX as u64 - 1) as u32;
        self.last_payload = (bytes.max(1) - (segments - 1) * mss) as u32;
        if handshake {
            self.phase = Phase::SynReceived;
            self.syn_ack_sent = Some(now);
            self.send_syn_ack(now, out);
        } else {
            self.send_new_data(now, out);
        }
    }

    fn send_syn_ack(&mut self, now: Time, out: &mut Vec<Packet>) {
        out.push(Packet {
            sent_at: now,
            flow: self.flow,
            seq: 0,
            size: HEADER_BYTES,
            route: self.route,
            conn: self.conn,
            sack: 0,
            hop: 0,
            kind: Kind::Data,
            flags: flags::SYN,
            stamp: Time::ZERO,
        });
        self.rto_deadline = Some(now + self.rtt.rto());
    }

    /// The client's ACK of the SYN-ACK: the connection is established.
    pub(in crate::tcp) fn establish(&mut self, now: Time, out: &mut Vec<Packet>) {
        self.phase = Phase::Established;
        let rtt = self.syn_ack_sent.filter(|_| !self.syn_ack_retransmitted).map(|sent| now - sent);
        match rtt {
            // The handshake gives the first RTT sample (Karn: only if not retransmitted).
            Some(rtt) => self.rtt.sample(rtt),
            // RFC 6298 §5.7: after a SYN timed out, RTO is reset to 3 s for the data.
            None => self.rtt.restart_at(Time::from_secs(3)),
        }
        self.rate_on_established(now, rtt);
        self.rto_deadline = None;
        self.send_new_data(now, out);
    }

    /// Puts segment `seq` on the wire. `retransmit`: it was sent before (decided by the
    /// caller before `snd_max` moves).
    pub(in crate::tcp) fn emit(&mut self, now: Time, seq: u32, retransmit: bool, out: &mut Vec<Packet>) {
        if retransmit {
            self.count(now, |s| s.retransmits += 1);
            // Karn's rule (RFC 6298 §3): a retransmission spoils the measurement in progress.
            self.timed = None;
        } else if self.timed.is_none() && !self.is_linux() {
            // One timed segment per round trip (the Linux sender samples every ACK instead).
            self.timed = Some((seq, now));
        }
        self.count(now, |s| s.sent += 1);
        if let Some(l) = self.linux.as_deref_mut() {
            l.last_write = now;
        }
        let last = seq + 1 == self.limit;
        let mut f = if retransmit { flags::RETRANSMIT } else { 0 };
        if last {
            f |= flags::FIN;
        }
        let size = if last { self.last_payload + HEADER_BYTES } else { self.cfg.packet };
        self.pacer.on_sent(now, &self.pace_window(), self.rtt.srtt(), size);
        self.rate_on_sent(now, seq, retransmit);
        f |= self.ecn_flags(retransmit);
        out.push(Packet {
            sent_at: now,
            flow: self.flow,
            seq,
            size,
            route: self.route,
            conn: self.conn,
            sack: 0,
            hop: 0,
            kind: Kind::Data,
            flags: f,
            stamp: Time::ZERO,
        });
        // RFC 6298 §5.1: start the timer when sending data if it is not running (the Linux
        // sender arms its timer itself).
        if self.rto_deadline.is_none() && !self.is_linux() {
            self.rto_deadline = Some(now + self.rtt.rto());
        }
    }

    /// Sends what the window allows: min(cwnd, rwnd) segments beyond `snd_una`, as fast as
    /// the pacer lets them go; a segment the pacer holds sets `pace_deadline`.
    fn send_allowed(&mut self, now: Time, out: &mut Vec<Packet>) {
        // A rate-based controller's window counts what is in flight, and without SACK some of
        // the outstanding segments have been delivered (rate/sender.rs); 0 for the others.
        let wnd = (self.w.cwnd as u32 + self.delivered_above_una()).min(self.cfg.max_window).max(1);
        self.pace_deadline = None;
        while self.snd_nxt < self.limit && self.snd_nxt - self.snd_una < wnd {
            if let Some(at) = self.pacer.hold_until(now) {
                self.pace_deadline = Some(at);
                break;
            }
            let seq = self.snd_nxt;
            let retransmit = seq < self.snd_max;
            self.snd_nxt += 1;
            self.snd_max = self.snd_max.max(self.snd_nxt);
            self.emit(now, seq, retransmit, out);
        }
    }

    fn retransmit_first_unacked(&mut self, now: Time, out: &mut Vec<Packet>) {
        let seq = self.snd_una;
        self.count(now, |s| s.recovery_retransmits += 1);
        self.emit(now, seq, true, out);
        if self.snd_nxt == seq {
            self.snd_nxt += 1;
        }
    }

    /// An ACK arrives carrying cumulative acknowledgement `ack` (next segment expected).
    pub fn on_ack(&mut self, now: Time, ack: u32, out: &mut Vec<Packet>) {
        match self.phase {
            Phase::SynReceived => return self.establish(now, out),
            Phase::Done => return,
            Phase::Established => {}
        }
        if self.is_linux() {
            return self.linux_on_ack(now, ack, &[], out);
        }
        if self.cfg.recovery == Recovery::Sack {
            // An ACK without SACK option (nothing held above the cumulative ACK).
            return self.sack_on_ack(now, ack, &[], out);
        }
        self.rate_ack_begin(ack, &[]);
        if ack > self.snd_una {
            self.on_new_ack(now, ack, out);
        } else if ack == self.snd_una && self.snd_max > self.snd_una {
            self.on_duplicate_ack(now, out);
        }
        self.rate_ack_end(now);
        self.send_allowed(now, out);
    }

    /// Adds the payload bytes the cumulative ACK moving from `snd_una` to `ack` acknowledges
    /// to the statistics (the traces' `acked_bytes`).
    fn count_acked(&mut self, ack: u32) {
        let mut bytes = (ack - self.snd_una) as u64 * self.cfg.mss() as u64;
        if ack == self.limit {
            bytes -= (self.cfg.mss() - self.last_payload) as u64; // the short last segment
        }
        self.stats.acked_bytes += bytes;
    }

    /// The cumulative ACK moves to `ack` > `snd_una`: what every recovery (Reno, NewReno and
    /// SACK's) does first — the RTT sample, the counters, `snd_una` and `snd_nxt`. Returns the
    /// segments newly acknowledged. The timer is left to [`TcpSender::rearm_timer_on_ack`],
    /// after the recovery's own rules, which may retransmit.
    pub(in crate::tcp) fn advance_una(&mut self, now: Time, ack: u32) -> u32 {
        let acked = ack - self.snd_una;
        // RFC 6298 §2–3: an RTT measurement once the timed segment is acknowledged (one per
        // round trip). Karn's rule (§3): `emit` stopped timing it if anything was resent.
        if let Some((seq, sent)) = self.timed {
            if ack > seq {
                self.rtt.sample(now - sent);
                self.timed = None;
            }
        }
        self.count_acked(ack);
        self.snd_una = ack;
        // After a timeout `snd_nxt` went back to `snd_una` (go-back-N); what the receiver has
        // acknowledged since is not sent again.
        self.snd_nxt = self.snd_nxt.max(ack);
        acked
    }

    /// The retransmission timer after a cumulative ACK of new data (`advance_una`) and the
    /// recovery's rules for it. `restart`: whether this ACK restarts a timer still needed.
    pub(in crate::tcp) fn rearm_timer_on_ack(&mut self, now: Time, restart: bool) {
        // RFC 6298 §5.2: all data acknowledged: stop the timer. §5.3: otherwise restart it.
        if self.snd_una >= self.snd_max {
            self.rto_deadline = None;
            if self.snd_una >= self.limit {
                self.phase = Phase::Done;
            }
        } else if restart {
            self.rto_deadline = Some(now + self.rtt.rto());
        }
    }

    fn on_new_ack(&mut self, now: Time, ack: u32, out: &mut Vec<Packet>) {
        let acked = self.advance_una(now, ack);
        let mut restart_timer = true;
        if self.in_recovery {
            // RFC 6582 §3.2 step 3: a full acknowledgement covers everything up to and
            // including `recover`.
            let full = self.recover.is_none_or(|r| ack > r);
            match self.cfg.recovery {
                // RFC 5681 §3.2 step 6: the first ACK of new data ends recovery; cwnd = ssthresh.
                Recovery::Reno => {
                    self.w.cwnd = self.w.ssthresh;
                    self.exit_recovery();
                }
                // RFC 6582 §3.2 step 3, full acknowledgement: option (1),
                // cwnd = min(ssthresh, max(FlightSize, SMSS) + SMSS), which avoids a burst.
                Recovery::NewReno if full => {
                    self.w.cwnd = self.w.ssthresh.min(self.flight().max(1) as f64 + 1.0);
                    self.exit_recovery();
                }
                // RFC 6582 §3.2 step 3, partial acknowledgement: retransmit the first
                // unacknowledged segment, deflate cwnd by the amount acked, add back one
                // SMSS (the ACK covered at least one), and reset the timer on the first
                // partial ACK only (the "Impatient" variant the RFC recommends).
                Recovery::NewReno => {
                    self.retransmit_first_unacked(now, out);
                    self.w.cwnd = (self.w.cwnd - acked as f64 + 1.0).max(1.0);
                    self.partial_acks += 1;
                    restart_timer = self.partial_acks == 1;
                }
                Recovery::Sack | Recovery::Linux => {
                    unreachable!(
                        "SACK and Linux senders take their own paths (sack/recovery.rs, linux/sender.rs)"
                    )
                }
            }
        } else {
            self.dupacks = 0;
            self.cc.on_ack(&mut self.w, acked, now, self.rtt.srtt());
        }
        self.limited_sent = 0;
        self.rearm_timer_on_ack(now, restart_timer);
    }

    fn on_duplicate_ack(&mut self, now: Time, out: &mut Vec<Packet>) {
        self.dupacks += 1;
        if self.in_recovery {
            // RFC 5681 §3.2 step 4 (RFC 6582 §3.2 step 3): each further duplicate ACK means a
            // segment left the network: inflate cwnd by one SMSS.
            self.w.cwnd += 1.0;
            return;
        }
        if self.dupacks != 3 {
            // RFC 3042 on the first two (if on).
            return self.limited_transmit(now, out);
        }
        // RFC 6582 §3.2 step 2: only if the ACK covers more than `recover`, so duplicate ACKs
        // caused by go-back-N after a timeout do not trigger a second reduction (§4). RFC
        // 5681's Reno has no such check.
        if self.cfg.recovery == Recovery::NewReno && !self.covers_more_than_recover(self.snd_una) {
            return;
        }
        // RFC 5681 §3.2 steps 2–3 (RFC 6582 §3.2 step 2).
        self.count(now, |s| s.fast_retransmits += 1);
        // RFC 5681 §3.2 step 2: Limited Transmit's segments are left out of FlightSize.
        let flight = self.flight() - self.limited_sent;
        self.w.ssthresh = self.cc.ssthresh_on_loss(&self.w, flight, now);
        self.recover = Some(self.snd_max - 1);
        self.in_recovery = true;
        self.partial_acks = 0;
        self.retransmit_first_unacked(now, out);
        self.w.cwnd = self.w.ssthresh + 3.0;
    }

    /// An ACK with ECN-Echo has just been handled by `on_ack` (call it after). RFC 3168 §6.1.2:
    /// treat it as a loss in the window arithmetic — ssthresh from the controller's
    /// `ssthresh_on_loss` on the current FlightSize, cwnd = ssthresh (Reno's ssthresh is at
    /// least 2, so the §6.1.2 rule for a window of one never applies) — but retransmit nothing.
    /// Once per window of data: not while repairing a loss (fast recovery, or going back N
    /// after a timeout), and not again until an ACK covers the first segment sent after the
    /// last reduction. That segment carries CWR, so ACKs up to and including the one for the
    /// last segment outstanding at the reduction were sent before the receiver could stop
    /// echoing, and reacting to them would cut the window twice for one congestion event.
    /// (Linux likewise stays in its CWR state until `snd_una` passes `high_seq`.)
    ///
    /// ECE on a duplicate ACK waits for the next new ACK, which echoes it too (the receiver
    /// echoes until CWR): a duplicate ACK may be the start of a loss, and the third would then
    /// reduce the window a second time for the same event. Linux reacts at once and skips the
    /// second reduction instead; the two differ by the few segments in between.
    pub fn on_ece(&mut self, now: Time) {
        if self.is_linux() {
            return self.linux_on_ece(now);
        }
        if !self.cfg.ecn || self.phase != Phase::Established || self.dupacks > 0 {
            return;
        }
        // The CWR-carrying segment of the last reduction: recover + 1 after a fast
        // retransmit or timeout (recover = snd_max − 1 then), `ecn_high` after a reaction.
        let cwr_segment = self.recover.map(|r| r + 1).max(self.ecn_high);
        if self.in_recovery || cwr_segment.is_some_and(|c| self.snd_una <= c) {
            return;
        }
        self.count(now, |s| s.ecn_reactions += 1);
        self.w.ssthresh = self.cc.ssthresh_on_ecn(&self.w, self.flight(), now);
        self.w.cwnd = self.w.ssthresh;
        self.ecn_high = Some(self.snd_max);
    }

    /// An ACK of an ECN-capable flow has been handled (`on_ack`, `on_sack_ack`), `una_before`
    /// being SND.UNA before it: the controller learns what it acknowledged and whether it
    /// echoed CE (DCTCP's estimate of the marked fraction, RFC 8257 §3.3), then ECE is
    /// answered as [`TcpSender::on_ece`] says. Other controllers ignore the first part.
    pub fn on_ecn_ack(&mut self, now: Time, una_before: u32, ece: bool) {
        let acked = self.snd_una.saturating_sub(una_before);
        self.cc.on_ecn_ack(acked, ece, self.snd_una, self.snd_max);
        if ece {
            self.on_ece(now);
        }
    }

    /// The RFC 3168 flags of a data segment about to be sent: ECT on new data (§6.1.5: a
    /// retransmission is never ECT, so a RED queue drops rather than marks it), and CWR on the
    /// first new segment after each window reduction (§6.1.2: "because of a retransmit
    /// timeout, a Fast Retransmit, or in response to an ECN Notification").
    fn ecn_flags(&mut self, retransmit: bool) -> u16 {
        if !self.cfg.ecn || retransmit {
            return 0;
        }
        let ect = match self.cfg.ecn_codepoint {
            super::EcnCodepoint::Ect0 => flags::ECT,
            super::EcnCodepoint::Ect1 => flags::ECT | flags::ECT1,
        };
        let reductions = self.stats.window_reductions();
        if reductions == self.cwr_reductions {
            return ect;
        }
        self.cwr_reductions = reductions;
        ect | flags::CWR
    }

    /// RFC 6582 §3.2 step 2: whether a cumulative ACK `ack` "covers more than recover". The
    /// ACK field is the next segment expected, so it covers through `ack` − 1, and covers more
    /// than `recover` when `ack` − 1 > `recover` (the RFC spells this out after step 4). An ACK
    /// of exactly `recover` + 1 acknowledges all that was outstanding when `recover` was set
    /// and nothing sent since: after a timeout, the go-back-N resends of segments the receiver
    /// already held that are still in flight when the last hole fills produce just such
    /// duplicate ACKs (RFC 6582 §4), and they must not start a fast retransmit. (Comparing
    /// `ack` itself with `recover` let them through: a false fast retransmit, then a
    /// "partial" ACK, and a needless resend, for every segment that followed.) Before the
    /// first recovery or timeout there is nothing to guard; the RFC's initial `recover` = ISS
    /// would, read literally, forbid fast retransmit of the first segment.
    fn covers_more_than_recover(&self, ack: u32) -> bool {
        self.recover.is_none_or(|r| ack > r + 1)
    }

    /// Whether data outstanding at the last fast retransmit or timeout is still unacknowledged:
    /// the sender is still repairing that congestion event (in fast recovery, or going back N).
    pub(in crate::tcp) fn repairing(&self) -> bool {
        self.recover.is_some_and(|r| self.snd_una <= r)
    }

    pub(in crate::tcp) fn exit_recovery(&mut self) {
        self.in_recovery = false;
        self.dupacks = 0;
    }

    /// The retransmission timer expired (the caller checked the deadline). For the Linux
    /// sender, its one timer: the RTO, the probe timeout or RACK's reordering timer.
    pub fn on_timeout(&mut self, now: Time, out: &mut Vec<Packet>) {
        if self.is_linux() && self.phase != Phase::SynReceived {
            return self.linux_on_timer(now, out);
        }
        self.count(now, |s| s.timeouts += 1);
        if self.phase == Phase::SynReceived {
            // RFC 6298 §5.5: back off and resend the SYN-ACK.
            self.rtt.back_off();
            self.syn_ack_retransmitted = true;
            self.count(now, |s| s.retransmits += 1);
            self.send_syn_ack(now, out);
            return;
        }
        // RFC 5681 §3.1 eq. 4, only if this segment has not already been resent by the
        // timer: a repeated timeout for the same segment keeps ssthresh.
        if self.last_rto_una != Some(self.snd_una) {
            let eq4 = self.cc.ssthresh_on_timeout(&self.w, self.flight(), now);
            // RFC 5681 §3.1 asks for ssthresh *no more than* eq. 4. While the data outstanding
            // at the last fast retransmit or timeout is still being repaired, this timeout
            // answers the same congestion event, and FlightSize (snd_max − snd_una) counts
            // segments that already left the network: those above the holes, and those sent
            // on the window inflated by duplicate ACKs (RFC 5681 §3.2 step 4) or during
            // go-back-N. Eq. 4 alone would then raise ssthresh above anything the path held
            // (after a slow-start overshoot, above pipe + buffer, so that the next slow start
            // overshoots again, and so on); keep the lower value. Linux likewise keeps
            // ssthresh on a timeout in Recovery ("Reduce ssthresh if it has not yet been made
            // inside this window", tcp_enter_loss).
            self.w.ssthresh = if self.repairing() { self.w.ssthresh.min(eq4) } else { eq4 };
        }
        self.last_rto_una = Some(self.snd_una);
        // RFC 5681 §3.1: cwnd = loss window = 1 segment.
        self.w.cwnd = 1.0;
        // RFC 6582 §3.2 step 4: remember the highest segment sent and leave recovery.
        self.recover = self.snd_max.checked_sub(1);
        self.exit_recovery();
        self.rate_on_timeout(now);
        // RFC 6298 §5.5: back off the timer; §5.4: retransmit the earliest unacknowledged
        // segment; go-back-N: everything after it is sent again as the window allows.
        self.rtt.back_off();
        self.timed = None;
        // The retransmission goes at once, whatever gap the pacer was keeping (at most srtt ÷
        // cwnd, far shorter than any RTO); pacing resumes behind it.
        self.pacer.reset();
        if self.cfg.recovery == Recovery::Sack {
            return self.sack_after_timeout(now, out);
        }
        self.snd_nxt = self.snd_una;
        // §5.6: restart the timer with the backed-off RTO (emit() starts it).
        self.rto_deadline = None;
        self.send_allowed(now, out);
    }

    /// Handles a (lazy) pacing event at `now`: sends what the pacer now lets go.
    pub fn on_pace(&mut self, now: Time, out: &mut Vec<Packet>) {
        if self.pace_deadline.is_none_or(|d| d > now) {
            return;
        }
        if self.phase != Phase::Established {
            // The transfer ended while a segment waited for the pacer: nothing is left to
            // pace (a deadline left due would be re-armed at once, for ever).
            self.pace_deadline = None;
        } else if self.is_linux() {
            self.linux_send(now, out);
        } else if self.cfg.recovery == Recovery::Sack {
            self.sack_send(now, out);
        } else {
            self.send_allowed(now, out);
        }
    }

    /// Starts loading the boxed state an ACK reads first: the Linux state and the scoreboard
    /// (a hint, see [`crate::endpoint::Endpoint::prefetch`]).
    #[inline]
    pub fn prefetch(&self) {
        if let Some(l) = self.linux.as_deref() {
            crate::prefetch::prefetch(l);
        }
        if let Some(s) = self.sack.as_deref() {
            crate::prefetch::prefetch(s);
        }
    }

    /// The state a trace records (see [`crate::monitor::trace`]).
    pub fn trace_sample(&self) -> TraceSample {
        TraceSample {
            cwnd: self.w.cwnd,
            ssthresh: self.w.ssthresh,
            srtt: self.rtt.srtt().unwrap_or(Time::ZERO),
            pacing_bps: self.pacing_rate_bps().unwrap_or(0.0),
            acked_bytes: self.stats.acked_bytes,
        }
    }

    /// The pacing rate in bits per second, None when not pacing.
    pub fn pacing_rate_bps(&self) -> Option<f64> {
        self.pacer.rate_bps(&self.pace_window(), self.rtt.srtt())
    }

    /// The window the pacer spreads over an RTT: the one the sender can use, min(cwnd,
    /// rwnd). A flow held by the receiver's window keeps growing cwnd (as in ns-2, and as
    /// RFC 5681 does not forbid), and pacing at cwnd ÷ srtt would then stop spacing it.
    fn pace_window(&self) -> Window {
        Window { cwnd: self.w.cwnd.min(self.cfg.max_window as f64), ssthresh: self.w.ssthresh }
    }

    /// Handles a (lazy) timer event at `now`. Returns true if the timeout really fired.
    pub fn check_timer(&mut self, now: Time, out: &mut Vec<Packet>) -> bool {
        match self.rto_deadline {
            Some(d) if d <= now => {
                self.on_timeout(now, out);
                true
            }
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    //! Scripted exchanges: the test plays the network, feeding ACKs and reading segments.
    use super::*;
    use crate::tcp::HEADER_BYTES;

    fn sender(recovery: Recovery) -> TcpSender {
        let mut cfg = TcpConfig::default_for(1000, recovery);
        cfg.initial_window = 10;
        TcpSender::new(cfg, 0, 0)
    }

    fn seqs(out: &mut Vec<Packet>) -> Vec<u32> {
        out.drain(..).map(|p| p.seq).collect()
    }

    /// A sender in congestion avoidance with segments 0..20 outstanding.
    fn established(recovery: Recovery) -> (TcpSender, Vec<Packet>) {
        let mut s = sender(recovery);
        s.w = Window { cwnd: 20.0, ssthresh: 20.0 };
        let mut out = Vec::new();
        s.start(Time::ZERO, &mut out);
        assert_eq!(seqs(&mut out), (0..20).collect::<Vec<_>>());
        (s, out)
    }

    #[test]
    fn data_packets_carry_header_and_payload() {
        let s = sender(Recovery::NewReno);
        assert_eq!(s.cfg.mss() + HEADER_BYTES, 1000);
    }

    // ---- Fast retransmit and recovery ----

    #[test]
    fn three_duplicate_acks_trigger_one_retransmission() {
        let (mut s, mut out) = established(Recovery::NewReno);
        let t = Time::from_ms(100);
        // Segment 0 lost: segments 1, 2, 3 arrive and each produces a duplicate ACK for 0.
        s.on_ack(t, 0, &mut out);
        s.on_ack(t, 0, &mut out);
        assert!(out.is_empty());
        s.on_ack(t, 0, &mut out);
        assert_eq!(seqs(&mut out), vec![0]);
        assert!(s.in_recovery());
        // ssthresh = FlightSize/2 = 10, cwnd = ssthresh + 3.
        assert_eq!((s.w.ssthresh, s.w.cwnd), (10.0, 13.0));
        assert_eq!(s.stats.retransmits, 1);
    }

    #[test]
    fn newreno_retransmits_on_partial_acks_until_recover() {
        let (mut s, mut out) = established(Recovery::NewReno);
        let t = Time::from_ms(100);
        // Segments 0 and 5 lost. 1..4 give 4 duplicate ACKs.
        for _ in 0..4 {
            s.on_ack(t, 0, &mut out);
        }
        assert_eq!(seqs(&mut out), vec![0]);
        // 6..19 arrive: 14 more duplicates, inflating cwnd to 13 + 15 = 28 > 20 outstanding:
        // new segments 20.. go out.
        for _ in 0..14 {
            s.on_ack(t, 0, &mut out);
        }
        let sent_new = seqs(&mut out);
        assert!(sent_new.iter().all(|&q| q >= 20), "{sent_new:?}");
        // The retransmitted 0 arrives: the ACK is partial (for 5), so 5 is resent at once.
        s.on_ack(t, 5, &mut out);
        let after_partial = seqs(&mut out);
        assert_eq!(after_partial[0], 5);
        assert!(s.in_recovery());
        // The retransmitted 5 arrives: everything up to recover (19) is covered; recovery ends.
        let highest = s.snd_max;
        s.on_ack(t, 20, &mut out);
        assert!(!s.in_recovery());
        assert_eq!(s.stats.timeouts, 0);
        assert_eq!(s.stats.fast_retransmits, 1);
        // Exit: cwnd = min(ssthresh, FlightSize + 1).
        assert_eq!(s.w.cwnd, s.w.ssthresh.min((highest - 20) as f64 + 1.0));
    }

    #[test]
    fn reno_leaves_recovery_on_the_first_new_ack() {
        let (mut s, mut out) = established(Recovery::Reno);
        let t = Time::from_ms(100);
        for _ in 0..3 {
            s.on_ack(t, 0, &mut out);
        }
        assert!(s.in_recovery());
        out.clear();
        // Partial ACK for 5 (segment 5 also lost): Reno deflates to ssthresh and leaves;
        // it does not retransmit 5.
        s.on_ack(t, 5, &mut out);
        assert!(!s.in_recovery());
        assert_eq!(s.w.cwnd, 10.0);
        assert!(!seqs(&mut out).contains(&5));
    }

    #[test]
    fn reno_reacts_twice_to_two_losses_where_newreno_reacts_once() {
        // Segments 0 and 5 lost from a window of 20; the test plays the receiver's ACKs.
        let run = |recovery| {
            let (mut s, mut out) = established(recovery);
            let t = Time::from_ms(100);
            for _ in 0..18 {
                s.on_ack(t, 0, &mut out); // 1..4 and 6..19 arrive: 18 duplicates
            }
            let new_data = seqs(&mut out).into_iter().filter(|&q| q >= 20).count() as u32;
            s.on_ack(t, 5, &mut out); // the retransmitted 0 arrives: partial ACK
            let sent = seqs(&mut out);
            if sent.contains(&5) {
                // NewReno resent 5 at once; it and the new data arrive.
                s.on_ack(t, 20 + new_data, &mut out);
            } else {
                // Reno left recovery with cwnd = ssthresh and resent nothing: the new data
                // beyond the hole produce duplicate ACKs for 5.
                for _ in 0..new_data {
                    s.on_ack(t, 5, &mut out);
                }
            }
            (s.stats.fast_retransmits, s.stats.retransmits, s.stats.timeouts)
        };
        // NewReno: one reduction, each lost segment resent exactly once, no timeout.
        assert_eq!(run(Recovery::NewReno), (1, 2, 0));
        // Reno: a second fast retransmit (a second window reduction) for the second loss.
        let (frs, rts, _) = run(Recovery::Reno);
        assert_eq!((frs, rts), (2, 2));
    }

    // ---- Retransmission timeout ----

    #[test]
    fn timeout_goes_back_n_with_one_segment_window_and_backs_off() {
        let (mut s, mut out) = established(Recovery::NewReno);
        s.on_ack(Time::from_ms(100), 1, &mut out); // one sample: 100 ms → RTO 300 ms
        out.clear();
        let rto = s.rtt.rto();
        assert_eq!(rto, Time::from_ms(300));
        let deadline = s.rto_deadline.unwrap();
        assert!(s.check_timer(deadline, &mut out));
        assert_eq!(seqs(&mut out), vec![1]); // cwnd = 1: only the first unacked segment
        assert_eq!(s.w.cwnd, 1.0);
        assert_eq!(s.rtt.rto(), Time::from_ms(600));
        assert_eq!(s.rto_deadline, Some(deadline + Time::from_ms(600)));
        // A second timeout for the same segment doubles again and keeps ssthresh.
        let ssthresh = s.w.ssthresh;
        assert!(s.check_timer(s.rto_deadline.unwrap(), &mut out));
        assert_eq!(s.rtt.rto(), Time::from_ms(1200));
        assert_eq!(s.w.ssthresh, ssthresh);
        assert_eq!(s.stats.timeouts, 2);
    }

    /// Segments 0, 2, 4 and 6 of the window 0..20 are lost; the receiver holds the rest. The
    /// 16 duplicate ACKs start fast recovery (ssthresh 10) and inflate cwnd to 26, which sends
    /// 20..25; the fast retransmission of 0 is lost too, so the timer fires in recovery.
    /// Returns the sender just after the timeout (which resent 0) and the time.
    fn timed_out_in_recovery() -> (TcpSender, Vec<Packet>, Time) {
        let (mut s, mut out) = established(Recovery::NewReno);
        let t = Time::from_ms(100);
        for _ in 0..16 {
            s.on_ack(t, 0, &mut out);
        }
        assert_eq!(s.stats.fast_retransmits, 1);
        assert_eq!((s.w.ssthresh, s.w.cwnd), (10.0, 26.0));
        assert_eq!(seqs(&mut out), [vec![0], (20..26).collect()].concat());
        let deadline = s.rto_deadline.unwrap();
        assert!(s.check_timer(deadline, &mut out));
        assert_eq!(seqs(&mut out), vec![0]);
        (s, out, deadline)
    }

    #[test]
    fn timeout_in_recovery_does_not_raise_ssthresh() {
        // FlightSize is 26 at the timeout, so RFC 5681 eq. 4 alone gives 13, more than the 10
        // this congestion event already set: 20..25 went out on the window inflated by
        // duplicate ACKs for segments that had left the network. At scale (one flow after a
        // slow-start overshoot) this raised ssthresh above pipe + buffer at every timeout.
        let (s, _, _) = timed_out_in_recovery();
        assert_eq!((s.w.ssthresh, s.w.cwnd), (10.0, 1.0));
        assert!(!s.in_recovery());
    }

    #[test]
    fn go_back_n_duplicates_do_not_trigger_a_false_fast_retransmit() {
        // After the timeout, recover = 25. The test plays the receiver, which holds 1, 3, 5,
        // 7..19 and, once they arrive, 20..25.
        let (mut s, mut out, t) = timed_out_in_recovery();
        for _ in 20..26 {
            s.on_ack(t, 0, &mut out); // 20..25 arrive: duplicates that don't cover recover
        }
        assert!(out.is_empty());
        // Go-back-N in slow start resends the holes and the segments after them.
        s.on_ack(t, 2, &mut out); // resent 0 arrives
        assert_eq!(seqs(&mut out), vec![2, 3]);
        s.on_ack(t, 4, &mut out); // 2 arrives
        assert_eq!(seqs(&mut out), vec![4, 5, 6]);
        s.on_ack(t, 4, &mut out); // 3, needless
        s.on_ack(t, 6, &mut out); // 4 arrives
        assert_eq!(seqs(&mut out), vec![7, 8, 9]); // all needless: the receiver has them
        s.on_ack(t, 6, &mut out); // 5, needless

        // 6 fills the last hole: everything up to recover = 25 is acknowledged, and new data
        // 26..30 goes out behind the needless 7, 8, 9 still in flight.
        s.on_ack(t, 26, &mut out);
        assert_eq!(seqs(&mut out), (26..31).collect::<Vec<_>>());
        // 7, 8, 9 arrive: three duplicate ACKs for 26 = recover + 1. They cover exactly
        // recover, not more (RFC 6582 §3.2 step 2): no fast retransmit. Before the fix they
        // started one, and each in-order ACK of 26.. that followed was a "partial" ACK that
        // resent a segment still in flight.
        for _ in 0..3 {
            s.on_ack(t, 26, &mut out);
        }
        assert!(out.is_empty(), "false fast retransmit: {:?}", seqs(&mut out));
        assert!(!s.in_recovery());
        assert_eq!((s.stats.fast_retransmits, s.w.ssthresh), (1, 10.0));
        // A real loss after recover is still repaired at once: 27 is lost, 26 and 28..30
        // arrive; the duplicate ACKs for 27 cover more than recover.
        s.on_ack(t, 27, &mut out);
        out.clear();
        for _ in 0..3 {
            s.on_ack(t, 27, &mut out);
        }
        assert_eq!(seqs(&mut out)[0], 27);
        assert!(s.in_recovery());
        assert_eq!(s.stats.fast_retransmits, 2);
    }

    #[test]
    fn karn_no_sample_from_a_retransmitted_segment() {
        let (mut s, mut out) = established(Recovery::NewReno);
        let d = s.rto_deadline.unwrap();
        s.check_timer(d, &mut out); // segment 0 resent at 1 s
        let srtt_before = s.rtt.srtt();
        // Its ACK arrives 2 s later: ambiguous, must not be sampled; backoff stays.
        s.on_ack(Time::from_secs(3), 1, &mut out);
        assert_eq!(s.rtt.srtt(), srtt_before);
        assert_eq!(s.rtt.backoff, 1);
    }

    #[test]
    fn stale_timer_event_does_not_fire() {
        let (mut s, mut out) = established(Recovery::NewReno);
        let first = s.rto_deadline.unwrap();
        s.on_ack(Time::from_ms(500), 5, &mut out); // restarts the timer later
        assert!(s.rto_deadline.unwrap() > first);
        assert!(!s.check_timer(first, &mut out));
        assert_eq!(s.stats.timeouts, 0);
    }

    // ---- Pacing ----

    /// A sender pacing by the window, with srtt = 100 ms measured on segment 0 and
    /// cwnd = 10 in congestion avoidance, nothing outstanding.
    fn paced() -> (TcpSender, Vec<Packet>) {
        let mut cfg = TcpConfig::default_for(1000, Recovery::NewReno);
        cfg.initial_window = 1;
        cfg.pacing = crate::tcp::pacer::Pacing::Window;
        let mut s = TcpSender::new(cfg, 0, 0);
        let mut out = Vec::new();
        s.start(Time::ZERO, &mut out); // before any RTT sample: not paced
        assert_eq!(seqs(&mut out), vec![0]);
        s.w = Window { cwnd: 10.0, ssthresh: 5.0 };
        s.on_ack(Time::from_ms(100), 1, &mut out);
        assert_eq!(s.rtt.srtt(), Some(Time::from_ms(100)));
        (s, out)
    }

    #[test]
    fn paced_segments_leave_srtt_over_cwnd_apart() {
        let (mut s, mut out) = paced();
        // The ACK opened the window to 10.1: one segment goes at once, the rest wait.
        assert_eq!(seqs(&mut out), vec![1]);
        let gap = Time(9_900_990_099); // 100 ms ÷ 10.1, to the picosecond
        let mut t = Time::from_ms(100);
        for seq in 2..11 {
            let due = s.pace_deadline.expect("the pacer holds the next segment");
            assert_eq!(due, t + gap, "segment {seq}");
            // Early: nothing leaves. On time: exactly one segment.
            s.on_pace(Time(due.0 - 1), &mut out);
            assert!(out.is_empty());
            s.on_pace(due, &mut out);
            assert_eq!(seqs(&mut out), vec![seq]);
            t = due;
        }
        // The window is full: the pacer has nothing to hold.
        s.on_pace(t + gap, &mut out);
        assert!(out.is_empty());
        assert_eq!(s.pace_deadline, None);
    }

    #[test]
    fn a_timeout_retransmits_at_once_even_when_paced() {
        let (mut s, mut out) = paced();
        out.clear();
        let deadline = s.rto_deadline.unwrap();
        assert!(s.check_timer(deadline, &mut out));
        assert_eq!(seqs(&mut out), vec![1]);
    }

    // ---- ECN (RFC 3168 §6.1.2) ----

    fn ecn_sender() -> (TcpSender, Vec<Packet>) {
        let mut s = sender(Recovery::NewReno);
        Arc::make_mut(&mut s.cfg).ecn = true;
        s.w = Window { cwnd: 20.0, ssthresh: 20.0 };
        let mut out = Vec::new();
        s.start(Time::ZERO, &mut out);
        (s, out)
    }

    /// Plays an ACK of `ack`, with ECE if `ece`, as the simulator hands it over.
    fn ack(s: &mut TcpSender, t: Time, ack: u32, ece: bool, out: &mut Vec<Packet>) {
        s.on_ack(t, ack, out);
        if ece {
            s.on_ece(t);
        }
    }

    #[test]
    fn ecn_data_is_ect_and_retransmissions_are_not() {
        let (mut s, mut out) = ecn_sender();
        assert!(out.iter().all(|p| p.flags & (flags::ECT | flags::CWR) == flags::ECT));
        out.clear();
        for _ in 0..3 {
            s.on_ack(Time::from_ms(100), 0, &mut out);
        }
        // The fast retransmission of 0 is not ECT (§6.1.5); ...
        assert_eq!((out[0].seq, out[0].flags & flags::ECT), (0, 0));
        // ... and a flow without ECN sends nothing ECT.
        let (_, plain) = established(Recovery::NewReno);
        assert!(plain.is_empty());
        let mut p = sender(Recovery::NewReno);
        let mut plain_out = Vec::new();
        p.start(Time::ZERO, &mut plain_out);
        assert!(plain_out.iter().all(|p| p.flags & (flags::ECT | flags::CWR) == 0));
    }

    /// RFC 9331 §4.1: an L4S sender marks its ECT packets ECT(1); ECT(0) senders never do,
    /// and a retransmission is neither.
    #[test]
    fn an_ect1_sender_sends_ect1_wherever_it_sends_ect() {
        let (_, classic) = ecn_sender();
        assert!(classic.iter().all(|p| p.flags & flags::ECT1 == 0));
        let mut s = sender(Recovery::NewReno);
        let cfg = Arc::make_mut(&mut s.cfg);
        (cfg.ecn, cfg.ecn_codepoint) = (true, crate::tcp::EcnCodepoint::Ect1);
        s.w = Window { cwnd: 20.0, ssthresh: 20.0 };
        let mut out = Vec::new();
        s.start(Time::ZERO, &mut out);
        assert!(
            !out.is_empty()
                && out.iter().all(|p| p.flags & (flags::ECT | flags::ECT1) == flags::ECT | flags::ECT1)
        );
        out.clear();
        for _ in 0..3 {
            s.on_ack(Time::from_ms(100), 0, &mut out);
        }
        assert_eq!((out[0].seq, out[0].flags & (flags::ECT | flags::ECT1)), (0, 0), "the retransmission");
    }

    #[test]
    fn ece_halves_once_per_window_sets_cwr_once_and_retransmits_nothing() {
        let (mut s, mut out) = ecn_sender();
        out.clear();
        let t = Time::from_ms(100);
        // Segment 0 was marked CE: the receiver echoes ECE on every ACK until CWR reaches it.
        // ACK 1 opens the window by 1/20 and sends 20, then the reaction: FlightSize 1..20 is
        // 20 segments, ssthresh = cwnd = 10.
        ack(&mut s, t, 1, true, &mut out);
        assert_eq!((s.w.ssthresh, s.w.cwnd), (10.0, 10.0));
        assert_eq!(s.stats.ecn_reactions, 1);
        // The ACKs of 1..=20 all still carry ECE: the one for 20 acknowledges everything that
        // was outstanding at the reaction, yet was sent before the receiver saw CWR (on 21,
        // the first new segment after the reduction). None of them cuts the window again.
        for a in 2..=21 {
            ack(&mut s, t, a, true, &mut out);
        }
        assert_eq!(s.stats.ecn_reactions, 1, "one reduction for one window");
        assert_eq!(s.w.ssthresh, 10.0);
        let cwr: Vec<u32> = out.iter().filter(|p| p.flags & flags::CWR != 0).map(|p| p.seq).collect();
        assert_eq!(cwr, vec![21], "CWR on the first new segment after the reduction, once");
        assert!(out.iter().all(|p| p.flags & flags::RETRANSMIT == 0));
        assert_eq!((s.stats.retransmits, s.stats.fast_retransmits, s.stats.timeouts), (0, 0, 0));
        // 21 arrives with CWR: its ACK has no ECE. A later CE mark is a new congestion event,
        // answered by a second reduction and a second CWR, on the segment after the highest
        // then sent.
        ack(&mut s, t, 22, false, &mut out);
        let before = s.w.cwnd;
        out.clear();
        ack(&mut s, t, 23, true, &mut out);
        assert_eq!(s.stats.ecn_reactions, 2);
        assert!(s.w.cwnd < before);
        let high = s.ecn_high.unwrap();
        for a in 24..=high {
            ack(&mut s, t, a, true, &mut out);
        }
        assert_eq!(s.stats.ecn_reactions, 2);
        let cwr: Vec<u32> = out.iter().filter(|p| p.flags & flags::CWR != 0).map(|p| p.seq).collect();
        assert_eq!(cwr, vec![high]);
        assert_eq!(s.stats.retransmits, 0);
    }

    #[test]
    fn ece_during_loss_recovery_is_the_same_congestion_event() {
        let (mut s, mut out) = ecn_sender();
        out.clear();
        let t = Time::from_ms(100);
        // Segment 0 lost and 1 marked: the duplicate ACKs echo ECE. The third starts fast
        // recovery (ssthresh 10); ECE adds no second reduction.
        for _ in 0..4 {
            ack(&mut s, t, 0, true, &mut out);
        }
        assert_eq!((s.stats.fast_retransmits, s.stats.ecn_reactions, s.w.ssthresh), (1, 0, 10.0));
        // More duplicates inflate cwnd past the 20 outstanding: new data goes out, the first
        // of it (20) with CWR, as after any reduction.
        for _ in 0..10 {
            ack(&mut s, t, 0, true, &mut out);
        }
        let cwr: Vec<u32> = out.iter().filter(|p| p.flags & flags::CWR != 0).map(|p| p.seq).collect();
        assert_eq!(cwr, vec![20]);
        // The full ACK (20) still echoes ECE: it was sent before 20 arrived. No reaction.
        ack(&mut s, t, 20, true, &mut out);
        assert!(!s.in_recovery());
        assert_eq!(s.stats.ecn_reactions, 0);
    }

    #[test]
    fn ece_is_ignored_without_ecn() {
        let (mut s, mut out) = established(Recovery::NewReno);
        ack(&mut s, Time::from_ms(100), 1, true, &mut out);
        assert_eq!((s.stats.ecn_reactions, s.w.ssthresh), (0, 20.0));
    }

    #[test]
    fn timer_stops_when_everything_is_acknowledged() {
        let (mut s, mut out) = established(Recovery::NewReno);
        s.limit = 20;
        s.on_ack(Time::from_ms(100), 20, &mut out);
        assert_eq!(s.rto_deadline, None);
    }
}
