//! BBR v1 congestion control: a model of the path (bottleneck bandwidth BtlBw and round-trip
//! propagation time RTprop) sets the pacing rate and the window, instead of losses.
//!
//! Read first: Cardwell, Cheng, Gunn, Hassas Yeganeh, Jacobson, "BBR: Congestion-Based
//! Congestion Control" (ACM Queue 14(5), 2016), then draft-cardwell-iccrg-bbr-congestion-
//! control-00 (2017; "draft" below, its section numbers cited at each rule), then the delivery
//! rate samples it runs on ([`crate::tcp::rate`]). Linux's `net/ipv4/tcp_bbr.c` as first
//! released (4.9) is the reference for what the draft leaves open; the rules taken from it are
//! marked "Linux".
//!
//! On every ACK ([`Bbr::on_rate_sample`], Linux `bbr_main`): update the model — BtlBw, the
//! windowed maximum of delivery rates over 10 packet-timed round trips (§4.1.1), and RTprop, the
//! minimum RTT over 10 s (§4.1.2) — then move through the state machine (§4.3): Startup
//! (pacing and cwnd gain 2/ln 2) until BtlBw stops growing by 25 % for 3 rounds, Drain (pacing
//! gain ln 2/2) until what is in flight fits one BDP, ProbeBW (cwnd gain 2, pacing gain cycling
//! 1.25, 0.75, 1 ×6, one RTprop per phase), and every 10 s without a lower RTT, ProbeRTT (4
//! segments in flight for 200 ms and a round). Then set the pacing rate (pacing gain × BtlBw,
//! §4.2.1) and the window (cwnd gain × BDP plus allowances, §4.2.3).
//!
//! Losses do not reduce the model (§4.2.3.4): entering fast recovery the window drops to what
//! is in flight plus what the ACK delivered, and for one round it grows only by what each ACK
//! delivers (packet conservation); after it, the window regrows by at most what each ACK
//! delivers towards its target, and leaving recovery restores the window from before the loss.
//! A retransmission timeout leaves one segment in the window (the sender's RFC 5681 loss
//! window, as Linux's `tcp_enter_loss`), which regrows the same way.
//!
//! **Units.** Bandwidth is segments per second (a segment is one packet of `packet` bytes on
//! the wire, `packet − 40` of payload), windows are whole segments (as Linux's `snd_cwnd`),
//! times picoseconds. The pacing rate is in bits per second of wire data, what the pacer
//! spaces packets by (`tcp/pacer.rs`).
//!
//! **Choices where the draft and Linux leave room, and deliberate deviations:**
//! - Gains as the draft writes them: 2/ln 2 = 2.8854 and its inverse 0.3466 (Linux rounds to
//!   739/256 = 2.8867 and 88/256 = 0.3438), f64 throughout (IEEE `+ − × ÷` and `ceil` only,
//!   the same on every platform).
//! - The send quantum (§4.2.2) is one segment: the model has no TSO/GSO, every segment is
//!   paced on its own. The target window is then ⌈gain·BDP⌉ + 3 segments (§4.2.3.2's
//!   3·send_quantum), rounded up to an even number (Linux `bbr_target_cwnd`, for delayed
//!   ACKs), plus 2 segments in ProbeBW's probing phase (Linux 5.x `bbr_quantization_budget`:
//!   the 1.25 phase must be able to put more than a BDP in flight even when the BDP is a few
//!   segments).
//! - Pacing rate = pacing gain × BtlBw × packet size, [`PACING_MARGIN`] below it (see there).
//!   In Startup it only ever rises (Linux `bbr_set_pacing_rate`). Before the first RTT sample
//!   it is 2/ln 2 × initial window per 1 ms (Linux's nominal RTT); at the first sample it is
//!   reset to 2/ln 2 × cwnd ÷ srtt (Linux `bbr_init_pacing_rate_from_rtt`).
//! - The BtlBw filter is exact: the largest sample of the current round and the 9 before it
//!   (draft: BtlBwFilterLen = 10 rounds). Linux's `minmax` keeps three samples and
//!   approximates that window. Application-limited samples enter only if they raise the
//!   maximum (§4.1.1.4).
//! - RTprop takes a sample at or below it, or any sample once 10 s have passed since it was
//!   last set (§4.1.2.3, as Linux 4.9; 5.x also skips delayed-ACK samples then).
//! - The ProbeBW starting phase is drawn from the flow's own random stream
//!   ([`crate::rng::Stream::Cc`]), uniformly among the 7 phases other than 0.75 (§4.3.4.2).
//! - Not modelled: Linux's long-term bandwidth sampling (token-bucket policer detection,
//!   `lt_bw`), not in the draft; the ACK-aggregation allowance of later kernels
//!   (`extra_acked`); restarting from idle (§4.3.4.4: a long-lived flow is never idle, and a
//!   finite transfer here starts a new connection, and a new controller, for each file).
//! - The sender counts deliveries of a flow without SACK from duplicate ACKs, as Linux does
//!   for Reno (see `tcp/rate/sender.rs`); ECN is not answered (BBR v1 ignores it; the scenario
//!   refuses `ecn` with `cc = "bbr"`).

use super::{CaState, CongestionControl, RateAck, Window};
use crate::rng::{Rng, Stream};
use crate::units::{Time, PS_PER_S};

/// Startup's pacing and cwnd gain, 2/ln 2 (draft §4.3.2.1; the Queue paper's "Startup"): the
/// smallest gain that doubles the sending rate every round, as slow start does.
pub const HIGH_GAIN: f64 = 2.0 / std::f64::consts::LN_2;
/// Drain's pacing gain, 1/HIGH_GAIN (draft §4.3.3): drains in about one round the queue
/// Startup built.
pub const DRAIN_GAIN: f64 = 1.0 / HIGH_GAIN;
/// cwnd gain in ProbeBW (draft §4.3.4): room for delayed and stretched ACKs.
pub const CWND_GAIN: f64 = 2.0;
/// ProbeBW's pacing gain cycle (draft §4.3.4.3): probe, drain what the probe queued, cruise.
pub const PACING_GAIN_CYCLE: [f64; 8] = [1.25, 0.75, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0];
/// The phase of the cycle a flow never starts ProbeBW in (draft §4.3.4.2: starting by
/// draining would leave the pipe empty for a phase).
const DRAIN_PHASE: usize = 1;
/// BtlBwFilterLen (draft §4.1.1.2), packet-timed round trips.
pub const BTLBW_FILTER_ROUNDS: u64 = 10;
/// RTpropFilterLen (draft §4.1.2.2).
pub const RTPROP_FILTER: Time = Time::from_secs(10);
/// ProbeRTTDuration (draft §4.3.5): at least this long at the minimum window.
pub const PROBE_RTT_DURATION: Time = Time::from_ms(200);
/// BBRMinPipeCwnd (draft §4.2.3.3), segments: enough for an ACK-every-other-segment receiver.
pub const MIN_PIPE_CWND: u32 = 4;
/// Startup has filled the pipe when BtlBw grew by less than this factor ... (draft §4.3.2.2)
pub const FULL_BW_THRESH: f64 = 1.25;
/// ... in this many rounds in a row.
pub const FULL_BW_COUNT: u32 = 3;
/// Send quantum (draft §4.2.2), segments: see the module doc.
pub const SEND_QUANTUM: u32 = 1;
/// Fraction the pacing rate is kept below gain × BtlBw (Linux 5.x `bbr_pacing_margin_percent`,
/// 1 %), so that cruising at gain 1 drains what the probe left in the queue rather than keeping
/// it. Linux 4.9 had the same effect implicitly: it counted a packet without its link-layer
/// header when pacing; the model's packets have no such header.
pub const PACING_MARGIN: f64 = 0.01;

/// BBR's state machine (draft §4.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Startup,
    Drain,
    ProbeBw,
    ProbeRtt,
}

/// Windowed maximum of the delivery rate over the last [`BTLBW_FILTER_ROUNDS`] rounds (draft
/// §4.1.1.2), exact: the largest sample of each round, by round modulo the window.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct MaxFilter {
    /// (round, largest sample of that round), segments per second.
    rounds: [(u64, f64); BTLBW_FILTER_ROUNDS as usize],
    max: f64,
}

impl MaxFilter {
    /// Takes sample `v` in round `round` (rounds never go back).
    pub fn update(&mut self, round: u64, v: f64) {
        let slot = &mut self.rounds[(round % BTLBW_FILTER_ROUNDS) as usize];
        if slot.0 != round {
            *slot = (round, v);
        } else if v > slot.1 {
            slot.1 = v;
        }
        // Rounds older than the window have left it (their slot may not have been reused yet).
        let live = self.rounds.iter().filter(|(r, _)| round - r < BTLBW_FILTER_ROUNDS);
        self.max = live.map(|&(_, v)| v).fold(0.0, f64::max);
    }

    /// The largest sample of the window as of the last update (0 before any).
    pub fn get(&self) -> f64 {
        self.max
    }
}

/// RTprop: the minimum RTT, renewed when a sample reaches it or when it is older than
/// [`RTPROP_FILTER`] (draft §4.1.2.3).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MinFilter {
    value: Option<Time>,
    /// When `value` was last set (BBR.rtprop_stamp).
    stamp: Time,
}

impl MinFilter {
    /// Takes an ACK at `now` with RTT sample `rtt` (if any). Returns whether the estimate had
    /// expired (BBR.rtprop_expired, which sends BBR to ProbeRTT).
    pub fn update(&mut self, rtt: Option<Time>, now: Time) -> bool {
        let expired = self.value.is_some() && now > self.stamp + RTPROP_FILTER;
        if let Some(r) = rtt {
            if expired || self.value.is_none_or(|v| r <= v) {
                (self.value, self.stamp) = (Some(r), now);
            }
        }
        expired
    }

    /// The estimate, None before the first RTT sample.
    pub fn get(&self) -> Option<Time> {
        self.value
    }

    /// When the estimate was last set or renewed.
    pub fn stamp(&self) -> Time {
        self.stamp
    }

    /// Keeps the estimate as current as of `now` (leaving ProbeRTT, draft §4.3.5).
    fn renew(&mut self, now: Time) {
        self.stamp = now;
    }
}

/// One flow's BBR state (draft §4.3.1 BBRInit).
#[derive(Clone, Debug)]
pub struct Bbr {
    mode: Mode,
    btl_bw: MaxFilter,
    rt_prop: MinFilter,
    /// Packet-timed round trips so far (BBR.round_count), and C.delivered at which the current
    /// one ends (BBR.next_round_delivered); whether this ACK started one.
    round_count: u64,
    next_round_delivered: u64,
    round_start: bool,
    /// Startup is over (BBR.filled_pipe), and the bandwidth and rounds it is judged on.
    filled_pipe: bool,
    full_bw: f64,
    full_bw_count: u32,
    pacing_gain: f64,
    cwnd_gain: f64,
    /// ProbeBW: the phase, and C.delivered_time when it began.
    cycle_index: usize,
    cycle_stamp: Time,
    /// ProbeRTT: when its 200 ms at the minimum window end (None: not yet at it), and whether
    /// a round has passed since.
    probe_rtt_done_stamp: Option<Time>,
    probe_rtt_round_done: bool,
    /// The window before loss recovery or ProbeRTT cut it, to restore after (segments).
    prior_cwnd: u32,
    packet_conservation: bool,
    restore_cwnd: bool,
    prev_ca_state: CaState,
    /// The window (segments) and the pacing rate (bits/s of wire data) BBR sets.
    cwnd: u32,
    pacing_rate: f64,
    has_seen_rtt: bool,
    /// Data packet size on the wire, bytes.
    packet: u32,
    initial_window: u32,
    rng: Rng,
    /// Times ProbeRTT was entered.
    probe_rtt_entries: u64,
}

impl Bbr {
    /// A controller for packets of `packet` bytes on the wire and an initial window of
    /// `initial_window` segments, in Startup (draft §4.3.1). Its random stream is a
    /// placeholder until the simulator gives the flow's own ([`Bbr::set_rng`]).
    pub fn new(packet: u32, initial_window: u32) -> Bbr {
        let mut b = Bbr {
            mode: Mode::Startup,
            btl_bw: MaxFilter::default(),
            rt_prop: MinFilter::default(),
            round_count: 0,
            next_round_delivered: 0,
            round_start: false,
            filled_pipe: false,
            full_bw: 0.0,
            full_bw_count: 0,
            pacing_gain: HIGH_GAIN,
            cwnd_gain: HIGH_GAIN,
            cycle_index: 0,
            cycle_stamp: Time::ZERO,
            probe_rtt_done_stamp: None,
            probe_rtt_round_done: false,
            prior_cwnd: 0,
            packet_conservation: false,
            restore_cwnd: false,
            prev_ca_state: CaState::Open,
            cwnd: initial_window,
            pacing_rate: 0.0,
            has_seen_rtt: false,
            packet,
            initial_window,
            rng: Rng::stream(0, Stream::Cc, 0),
            probe_rtt_entries: 0,
        };
        // Linux `bbr_init_pacing_rate_from_rtt` with no RTT sample yet: a nominal 1 ms.
        b.pacing_rate = b.wire_rate(HIGH_GAIN * initial_window as f64 * 1000.0);
        b
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// BtlBw, segments per second (0 before the first valid sample).
    pub fn btl_bw(&self) -> f64 {
        self.btl_bw.get()
    }

    /// RTprop (None before the first RTT sample).
    pub fn rt_prop(&self) -> Option<Time> {
        self.rt_prop.get()
    }

    pub fn pacing_gain(&self) -> f64 {
        self.pacing_gain
    }

    pub fn cwnd_gain(&self) -> f64 {
        self.cwnd_gain
    }

    /// ProbeBW's phase, an index into [`PACING_GAIN_CYCLE`].
    pub fn cycle_index(&self) -> usize {
        self.cycle_index
    }

    pub fn filled_pipe(&self) -> bool {
        self.filled_pipe
    }

    pub fn round_count(&self) -> u64 {
        self.round_count
    }

    /// The window BBR set, segments.
    pub fn cwnd(&self) -> u32 {
        self.cwnd
    }

    /// How many times ProbeRTT was entered.
    pub fn probe_rtt_entries(&self) -> u64 {
        self.probe_rtt_entries
    }

    /// Bits per second of wire data for a rate of `segments_per_s`, less the pacing margin.
    fn wire_rate(&self, segments_per_s: f64) -> f64 {
        segments_per_s * (self.packet as f64 * 8.0) * (1.0 - PACING_MARGIN)
    }

    /// BBRInflight(gain) (draft §4.2.3.2, Linux `bbr_target_cwnd`): ⌈gain × BtlBw × RTprop⌉
    /// plus 3 send quanta, rounded up to an even number, plus 2 in ProbeBW's probing phase;
    /// the initial window before any RTT sample. Segments.
    fn target_cwnd(&self, bw: f64, gain: f64) -> u32 {
        let Some(rt_prop) = self.rt_prop.get() else { return self.initial_window };
        // Multiply before dividing: exact for whole numbers of segments per second.
        let bdp = bw * rt_prop.0 as f64 / PS_PER_S as f64;
        let cwnd = (gain * bdp).ceil() as u32 + 3 * SEND_QUANTUM;
        let cwnd = (cwnd + 1) & !1;
        if self.mode == Mode::ProbeBw && self.cycle_index == 0 {
            cwnd + 2
        } else {
            cwnd
        }
    }

    // ---- The model (draft §4.1, Linux `bbr_update_model`) ----

    /// §4.1.1.3 round counting and §4.1.1.5 the BtlBw filter, on valid samples only.
    fn update_btl_bw(&mut self, a: &RateAck) {
        self.round_start = false;
        let Some(rs) = a.sample.rate else { return };
        if rs.prior_delivered >= self.next_round_delivered {
            self.next_round_delivered = a.delivered;
            self.round_count += 1;
            self.round_start = true;
            // Linux: packet conservation lasts one round of recovery.
            self.packet_conservation = false;
        }
        let bw = rs.delivery_rate();
        // §4.1.1.4: an application-limited sample only if it raises the estimate.
        if !rs.is_app_limited || bw >= self.btl_bw.get() {
            self.btl_bw.update(self.round_count, bw);
        }
    }

    /// §4.3.4.3 BBRUpdateGainCyclePhase.
    fn update_cycle_phase(&mut self, a: &RateAck) {
        if self.mode == Mode::ProbeBw && self.is_next_cycle_phase(a) {
            self.advance_cycle_phase(a.delivered_time);
        }
    }

    /// §4.3.4.3 BBRIsNextCyclePhase: each phase lasts one RTprop; the probing phase also until
    /// what was in flight reaches 1.25 BDP (or a loss says it will not), and the draining phase
    /// ends early once it falls to one BDP.
    fn is_next_cycle_phase(&self, a: &RateAck) -> bool {
        let rt_prop = self.rt_prop.get().unwrap_or(Time::ZERO);
        let is_full_length = a.delivered_time.saturating_sub(self.cycle_stamp) > rt_prop;
        let bw = self.btl_bw.get();
        if self.pacing_gain > 1.0 {
            is_full_length && (a.losses > 0 || a.prior_in_flight >= self.target_cwnd(bw, self.pacing_gain))
        } else if self.pacing_gain < 1.0 {
            is_full_length || a.prior_in_flight <= self.target_cwnd(bw, 1.0)
        } else {
            is_full_length
        }
    }

    fn advance_cycle_phase(&mut self, delivered_time: Time) {
        self.cycle_index = (self.cycle_index + 1) % PACING_GAIN_CYCLE.len();
        self.cycle_stamp = delivered_time;
        self.pacing_gain = PACING_GAIN_CYCLE[self.cycle_index];
    }

    /// §4.3.2.2 BBRCheckFullPipe: once per round, on samples not application-limited.
    fn check_full_pipe(&mut self, a: &RateAck) {
        let app_limited = a.sample.rate.is_some_and(|rs| rs.is_app_limited);
        if self.filled_pipe || !self.round_start || app_limited {
            return;
        }
        let bw = self.btl_bw.get();
        if bw >= self.full_bw * FULL_BW_THRESH {
            (self.full_bw, self.full_bw_count) = (bw, 0);
            return;
        }
        self.full_bw_count += 1;
        self.filled_pipe = self.full_bw_count >= FULL_BW_COUNT;
    }

    /// §4.3.3 BBRCheckDrain: Startup → Drain once the pipe is full; Drain → ProbeBW once what
    /// is in flight fits one BDP.
    fn check_drain(&mut self, a: &RateAck) {
        if self.mode == Mode::Startup && self.filled_pipe {
            self.mode = Mode::Drain;
            self.pacing_gain = DRAIN_GAIN;
            self.cwnd_gain = HIGH_GAIN;
        }
        if self.mode == Mode::Drain && a.in_flight <= self.target_cwnd(self.btl_bw.get(), 1.0) {
            self.enter_probe_bw(a.delivered_time);
        }
    }

    /// §4.3.4.3 BBREnterProbeBW, with §4.3.4.2's random starting phase.
    fn enter_probe_bw(&mut self, delivered_time: Time) {
        self.mode = Mode::ProbeBw;
        self.pacing_gain = 1.0;
        self.cwnd_gain = CWND_GAIN;
        let n = PACING_GAIN_CYCLE.len();
        // cycle_index = len − 1 − random(0..=len − 2), then advanced: any phase but 1.
        self.cycle_index = n - 1 - self.rng.range_u64(0, n as u64 - 2) as usize;
        self.advance_cycle_phase(delivered_time);
        debug_assert_ne!(self.cycle_index, DRAIN_PHASE);
    }

    /// §4.1.2.3 BBRUpdateRTprop and §4.3.5 BBRCheckProbeRTT.
    fn update_rt_prop(&mut self, a: &RateAck, now: Time) {
        let expired = self.rt_prop.update(a.sample.rtt, now);
        if expired && self.mode != Mode::ProbeRtt {
            // BBREnterProbeRTT: cruise at the estimated rate with 4 segments in flight.
            self.mode = Mode::ProbeRtt;
            self.pacing_gain = 1.0;
            self.cwnd_gain = 1.0;
            self.save_cwnd();
            self.probe_rtt_done_stamp = None;
            self.probe_rtt_entries += 1;
        }
        if self.mode != Mode::ProbeRtt {
            return;
        }
        // BBRHandleProbeRTT (the sender marks its samples application-limited meanwhile: see
        // `holds_back`). Hold the minimum window for max(200 ms, one round).
        match self.probe_rtt_done_stamp {
            None if a.in_flight <= MIN_PIPE_CWND => {
                self.probe_rtt_done_stamp = Some(now + PROBE_RTT_DURATION);
                self.probe_rtt_round_done = false;
                self.next_round_delivered = a.delivered;
            }
            None => {}
            Some(done) => {
                if self.round_start {
                    self.probe_rtt_round_done = true;
                }
                if self.probe_rtt_round_done && now > done {
                    self.rt_prop.renew(now);
                    self.restore_cwnd = true;
                    // BBRExitProbeRTT.
                    if self.filled_pipe {
                        self.enter_probe_bw(a.delivered_time);
                    } else {
                        self.mode = Mode::Startup;
                        self.pacing_gain = HIGH_GAIN;
                        self.cwnd_gain = HIGH_GAIN;
                    }
                }
            }
        }
    }

    // ---- The control parameters (draft §4.2) ----

    /// §4.2.1 BBRSetPacingRate, with Linux's rules for the first RTT sample and Startup.
    fn set_pacing_rate(&mut self, bw: f64, srtt: Option<Time>) {
        if !self.has_seen_rtt {
            if let Some(srtt) = srtt.filter(|s| *s > Time::ZERO) {
                self.has_seen_rtt = true;
                let per_s = self.cwnd as f64 * PS_PER_S as f64 / srtt.0 as f64;
                self.pacing_rate = self.wire_rate(HIGH_GAIN * per_s);
            }
        }
        let rate = self.wire_rate(self.pacing_gain * bw);
        if self.filled_pipe || rate > self.pacing_rate {
            self.pacing_rate = rate;
        }
    }

    /// §4.2.3.4 BBRSaveCwnd: the last window not cut by recovery or ProbeRTT.
    fn save_cwnd(&mut self) {
        if self.prev_ca_state == CaState::Open && self.mode != Mode::ProbeRtt {
            self.prior_cwnd = self.cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(self.cwnd);
        }
    }

    /// §4.2.3.4 (Linux `bbr_set_cwnd_to_recover_or_restore`): the window entering and leaving
    /// loss recovery. Returns it, and whether packet conservation decides it.
    fn recover_or_restore(&mut self, a: &RateAck, acked: u32) -> (u32, bool) {
        let mut cwnd = self.cwnd;
        // "An ACK for P packets should release at most 2·P packets": lost ones first come off.
        if a.losses > 0 {
            cwnd = cwnd.saturating_sub(a.losses).max(1);
        }
        let (prev, state) = (self.prev_ca_state, a.ca_state);
        if state == CaState::Recovery && prev != CaState::Recovery {
            // The first round of recovery: packet conservation, and a round starts now.
            self.packet_conservation = true;
            self.next_round_delivered = a.delivered;
            cwnd = a.in_flight + acked;
        } else if prev != CaState::Open && state == CaState::Open {
            // Leaving recovery (or the loss state after a timeout): restore the window.
            self.restore_cwnd = true;
            self.packet_conservation = false;
        }
        self.prev_ca_state = state;
        if self.restore_cwnd {
            cwnd = cwnd.max(self.prior_cwnd);
            self.restore_cwnd = false;
        }
        if self.packet_conservation {
            (cwnd.max(a.in_flight + acked), true)
        } else {
            (cwnd, false)
        }
    }

    /// §4.2.3.6 BBRSetCwnd (Linux `bbr_set_cwnd`): towards the target by at most what the ACK
    /// delivered; down to it at once only once the pipe has been filled.
    fn set_cwnd(&mut self, a: &RateAck, bw: f64) {
        let acked = a.sample.acked_sacked;
        if acked == 0 {
            return;
        }
        let (mut cwnd, conserving) = self.recover_or_restore(a, acked);
        if !conserving {
            let target = self.target_cwnd(bw, self.cwnd_gain);
            if self.filled_pipe {
                cwnd = (cwnd + acked).min(target);
            } else if cwnd < target || a.delivered < self.initial_window as u64 {
                cwnd += acked;
            }
            cwnd = cwnd.max(MIN_PIPE_CWND);
        }
        // §4.2.3.5: ProbeRTT holds the window at the minimum.
        if self.mode == Mode::ProbeRtt {
            cwnd = cwnd.min(MIN_PIPE_CWND);
        }
        self.cwnd = cwnd;
    }
}

impl CongestionControl for Bbr {
    /// BBR sets the window in [`Bbr::on_rate_sample`], on every ACK, rather than here.
    fn on_ack(&mut self, _w: &mut Window, _acked: u32, _now: Time, _srtt: Option<Time>) {}

    /// Entering fast recovery: BBR keeps ssthresh (it uses none) and notes the window to
    /// restore after recovery (Linux `bbr_ssthresh` → `bbr_save_cwnd`).
    fn ssthresh_on_loss(&mut self, w: &Window, _flight: u32, _now: Time) -> f64 {
        self.save_cwnd();
        w.ssthresh
    }

    fn wants_rate_samples(&self) -> bool {
        true
    }

    /// Linux `bbr_main`: the model, then the pacing rate and the window.
    fn on_rate_sample(&mut self, w: &mut Window, a: &RateAck, now: Time) {
        self.update_btl_bw(a);
        self.update_cycle_phase(a);
        self.check_full_pipe(a);
        self.check_drain(a);
        self.update_rt_prop(a, now);
        let bw = self.btl_bw.get();
        self.set_pacing_rate(bw, a.srtt);
        self.set_cwnd(a, bw);
        w.cwnd = self.cwnd as f64;
    }

    /// Linux `bbr_set_state(TCP_CA_Loss)`, after `tcp_enter_loss` set the window to one
    /// segment: the loss state begins, and the full-pipe check starts over from the next round.
    fn on_retransmission_timeout(&mut self, w: &Window, _now: Time) {
        self.prev_ca_state = CaState::Loss;
        self.full_bw = 0.0;
        self.round_start = true;
        self.cwnd = w.cwnd as u32;
    }

    fn pacing_rate_bps(&self) -> Option<f64> {
        Some(self.pacing_rate)
    }

    fn holds_back(&self) -> bool {
        self.mode == Mode::ProbeRtt
    }

    fn set_rng(&mut self, rng: Rng) {
        self.rng = rng;
    }

    fn rng(&self) -> Option<&Rng> {
        Some(&self.rng)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::rate::sample::{AckSample, RateSample};

    const PACKET: u32 = 1000;

    fn ms(ms: u64) -> Time {
        Time::from_ms(ms)
    }

    /// A test driver: plays ACKs to a controller, keeping C.delivered and the time.
    struct Drive {
        b: Bbr,
        w: Window,
        delivered: u64,
        now: Time,
        in_flight: u32,
        /// Segments the sender deems lost on the next ACK.
        losses: u32,
        rtt: Time,
    }

    impl Drive {
        fn new() -> Drive {
            let b = Bbr::new(PACKET, 10);
            let w = Window { cwnd: 10.0, ssthresh: 1e9 };
            Drive { b, w, delivered: 0, now: Time::ZERO, in_flight: 10, losses: 0, rtt: ms(100) }
        }

        /// One ACK at `now` + `dt` delivering `acked` segments, with a valid sample of
        /// `rate` segments per second whose flight began at `prior_delivered`.
        fn ack(&mut self, dt: Time, acked: u32, rate: f64, prior_delivered: u64, state: CaState) -> RateAck {
            self.now += dt;
            self.delivered += acked as u64;
            let interval = self.rtt;
            let delivered = (rate * interval.0 as f64 / PS_PER_S as f64).round() as u64;
            let rs = RateSample {
                delivered,
                prior_delivered,
                interval,
                send_elapsed: interval,
                ack_elapsed: interval,
                is_app_limited: false,
            };
            let a = RateAck {
                sample: AckSample { rate: Some(rs), acked_sacked: acked, rtt: Some(self.rtt) },
                delivered: self.delivered,
                delivered_time: self.now,
                prior_in_flight: self.in_flight,
                in_flight: self.in_flight,
                losses: std::mem::take(&mut self.losses),
                ca_state: state,
                srtt: Some(self.rtt),
            };
            self.b.on_rate_sample(&mut self.w, &a, self.now);
            a
        }

        /// One round: an ACK that starts a round (its sample's flight began at the end of the
        /// last), one RTT after the last, at `rate`.
        fn round(&mut self, rate: f64) {
            let prior = self.b.next_round_delivered;
            self.ack(self.rtt, 1, rate, prior, CaState::Open);
        }
    }

    #[test]
    fn max_filter_keeps_the_largest_of_the_last_ten_rounds() {
        let mut f = MaxFilter::default();
        f.update(1, 100.0);
        f.update(1, 80.0);
        assert_eq!(f.get(), 100.0);
        f.update(2, 90.0);
        assert_eq!(f.get(), 100.0);
        // Round 10 is the 10th round since round 1: 100 still counts; in round 11 it has left.
        f.update(10, 50.0);
        assert_eq!(f.get(), 100.0);
        f.update(11, 50.0);
        assert_eq!(f.get(), 90.0);
        // Rounds without samples still age the window: after a gap, only the new one counts.
        f.update(40, 10.0);
        assert_eq!(f.get(), 10.0);
        // A larger sample later in the same round raises that round's maximum.
        f.update(40, 30.0);
        assert_eq!(f.get(), 30.0);
    }

    #[test]
    fn min_filter_takes_lower_or_equal_samples_and_anything_once_expired() {
        let mut f = MinFilter::default();
        assert!(!f.update(Some(ms(50)), ms(0)));
        assert!(!f.update(Some(ms(60)), ms(1000)));
        assert_eq!((f.get(), f.stamp()), (Some(ms(50)), ms(0)));
        // An equal sample renews the stamp.
        assert!(!f.update(Some(ms(50)), ms(2000)));
        assert_eq!(f.stamp(), ms(2000));
        // 10 s after the last renewal it has not expired yet; a picosecond later it has, and
        // the next sample replaces it, larger or not.
        assert!(!f.update(None, ms(12_000)));
        assert!(f.update(Some(ms(70)), ms(12_000) + Time(1)));
        assert_eq!((f.get(), f.stamp()), (Some(ms(70)), ms(12_000) + Time(1)));
        assert!(!f.update(Some(ms(65)), ms(12_001)));
        assert_eq!(f.get(), Some(ms(65)));
    }

    #[test]
    fn startup_leaves_after_three_rounds_without_25_percent_growth() {
        let mut d = Drive::new();
        // Doubling every round: still in Startup.
        let mut rate = 100.0;
        for _ in 0..6 {
            d.round(rate);
            rate *= 2.0;
        }
        assert_eq!(d.b.mode(), Mode::Startup);
        let peak = d.b.btl_bw();
        assert_eq!(peak, 3200.0);
        // 20 % growth is not enough to count as growth: rounds 1 and 2 of three.
        d.round(peak * 1.2);
        d.round(peak * 1.2);
        assert!(!d.b.filled_pipe());
        // 25 % over the last plateau (3200) resets the count...
        d.round(peak * 1.25);
        assert!(!d.b.filled_pipe());
        let plateau = d.b.btl_bw();
        // ...so it takes three more flat rounds.
        d.in_flight = 1000; // keep Drain from ending at once
        d.round(plateau);
        d.round(plateau * 1.1);
        assert_eq!(d.b.mode(), Mode::Startup);
        d.round(plateau);
        assert!(d.b.filled_pipe());
        assert_eq!(d.b.mode(), Mode::Drain);
        assert_eq!(d.b.pacing_gain(), DRAIN_GAIN);
        assert_eq!(d.b.cwnd_gain(), HIGH_GAIN);
        // Drain ends when what is in flight fits BBRInflight(1): ⌈4400 × 0.1⌉ + 3 = 443, even:
        // 444 segments.
        assert_eq!(d.b.target_cwnd(d.b.btl_bw(), 1.0), 444);
        d.in_flight = 445;
        d.ack(ms(1), 1, plateau, 0, CaState::Open);
        assert_eq!(d.b.mode(), Mode::Drain);
        d.in_flight = 444;
        d.ack(ms(1), 1, plateau, 0, CaState::Open);
        assert_eq!(d.b.mode(), Mode::ProbeBw);
    }

    /// A controller in ProbeBW at 1000 segments/s over 100 ms (BDP = 100 segments) in phase
    /// `phase`, at time `now`.
    fn probing(phase: usize) -> Drive {
        let mut d = Drive::new();
        d.b.btl_bw.update(0, 1000.0);
        d.b.rt_prop.update(Some(ms(100)), Time::ZERO);
        d.b.filled_pipe = true;
        d.b.mode = Mode::ProbeBw;
        d.b.cwnd_gain = CWND_GAIN;
        d.b.cycle_index = phase;
        d.b.pacing_gain = PACING_GAIN_CYCLE[phase];
        d.in_flight = 100;
        d
    }

    #[test]
    fn gain_cycle_runs_in_order_one_rt_prop_per_phase() {
        let mut d = probing(2);
        let mut seen = Vec::new();
        // ACKs every 10 ms with what is in flight exactly 1.25 BDP in the probe (BBRInflight
        // (1.25) = ⌈125⌉ + 3 → 128 + 2 = 130) and one BDP otherwise.
        for _ in 0..170 {
            d.in_flight = if d.b.cycle_index() == 0 { 130 } else { 100 };
            d.ack(ms(10), 1, 1000.0, 0, CaState::Open);
            if seen.last() != Some(&(d.b.cycle_index(), d.b.pacing_gain())) {
                seen.push((d.b.cycle_index(), d.b.pacing_gain()));
            }
        }
        let order: Vec<usize> = seen.iter().map(|s| s.0).collect();
        // The drain phase (1) ends on its first ACK: one BDP is in flight.
        assert_eq!(order, vec![2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3]);
        for (i, g) in seen {
            assert_eq!(g, PACING_GAIN_CYCLE[i]);
        }
        // Each phase lasts more than one RTprop of C.delivered_time: 11 ACKs 10 ms apart.
        let mut d = probing(2);
        let mut acks = 0;
        while d.b.cycle_index() == 2 {
            d.ack(ms(10), 1, 1000.0, 0, CaState::Open);
            acks += 1;
        }
        assert_eq!(acks, 11);
    }

    #[test]
    fn the_probe_phase_waits_for_inflight_and_the_drain_phase_ends_early() {
        // Probe (1.25): a full RTprop is not enough while less than 1.25 BDP is in flight...
        let mut d = probing(0);
        d.in_flight = 129;
        for _ in 0..30 {
            d.ack(ms(10), 1, 1000.0, 0, CaState::Open);
        }
        assert_eq!(d.b.cycle_index(), 0);
        // ...it ends on the first ACK with BBRInflight(1.25) = 130 in flight before it...
        d.in_flight = 130;
        d.ack(ms(10), 1, 1000.0, 0, CaState::Open);
        assert_eq!(d.b.cycle_index(), 1);
        // ...or, with a loss, without it.
        let mut d = probing(0);
        d.in_flight = 100;
        d.ack(ms(101), 1, 1000.0, 0, CaState::Open);
        assert_eq!(d.b.cycle_index(), 0);
        d.losses = 1;
        d.ack(ms(1), 1, 1000.0, 0, CaState::Open);
        assert_eq!(d.b.cycle_index(), 1);
        // Drain (0.75): ends as soon as no more than BBRInflight(1) = 104 is in flight.
        let mut d = probing(1);
        d.in_flight = 105;
        d.ack(ms(10), 1, 1000.0, 0, CaState::Open);
        assert_eq!(d.b.cycle_index(), 1);
        d.in_flight = 104;
        d.ack(ms(10), 1, 1000.0, 0, CaState::Open);
        assert_eq!(d.b.cycle_index(), 2);
    }

    #[test]
    fn probe_bw_never_starts_in_the_drain_phase_and_draws_the_rest_evenly() {
        let mut counts = [0u32; 8];
        let mut b = Bbr::new(PACKET, 10);
        b.set_rng(Rng::stream(7, Stream::Cc, 3));
        for _ in 0..7000 {
            b.enter_probe_bw(Time::ZERO);
            counts[b.cycle_index()] += 1;
        }
        assert_eq!(counts[DRAIN_PHASE], 0);
        // 7 phases, 1000 each expected: σ ≈ 29, so ±150 is over 5σ.
        for (i, &c) in counts.iter().enumerate().filter(|(i, _)| *i != DRAIN_PHASE) {
            assert!((850..1150).contains(&c), "phase {i}: {c}");
        }
    }

    #[test]
    fn cwnd_is_twice_the_bdp_plus_quanta_in_probe_bw() {
        // BDP 100: 2 × 100 + 3 = 203 → 204 (even); in the probing phase 2 more.
        let mut d = probing(3);
        d.b.cwnd = 300;
        d.ack(ms(1), 1, 1000.0, 0, CaState::Open);
        assert_eq!(d.b.cwnd(), 204);
        assert_eq!(d.w.cwnd, 204.0);
        let mut d = probing(0);
        d.b.cwnd = 300;
        d.ack(ms(1), 1, 1000.0, 0, CaState::Open);
        assert_eq!(d.b.cwnd(), 206);
        // Below the target it grows by what each ACK delivers.
        let mut d = probing(3);
        d.b.cwnd = 150;
        d.ack(ms(1), 3, 1000.0, 0, CaState::Open);
        assert_eq!(d.b.cwnd(), 153);
    }

    #[test]
    fn pacing_rate_is_gain_times_btl_bw_less_the_margin() {
        let mut d = probing(0);
        d.b.has_seen_rtt = true;
        d.ack(ms(1), 1, 1000.0, 0, CaState::Open);
        // 1.25 × 1000 segments/s × 8000 bits, 1 % below.
        assert_eq!(d.b.pacing_rate_bps(), Some(1.25 * 1000.0 * 8000.0 * (1.0 - PACING_MARGIN)));
    }

    #[test]
    fn pacing_starts_from_the_initial_window_per_millisecond_then_per_srtt() {
        let b = Bbr::new(PACKET, 10);
        let wire = |segments_per_s: f64| segments_per_s * 8000.0 * (1.0 - PACING_MARGIN);
        assert_eq!(b.pacing_rate_bps(), Some(wire(HIGH_GAIN * 10.0 * 1000.0)));
        // The first ACK with an RTT: 2/ln 2 × cwnd (10) ÷ 100 ms; a sample's lower rate does not
        // lower it in Startup.
        let mut d = Drive::new();
        d.ack(ms(100), 1, 50.0, 0, CaState::Open);
        assert_eq!(d.b.pacing_rate_bps(), Some(wire(HIGH_GAIN * 100.0)));
    }

    #[test]
    fn recovery_conserves_packets_for_a_round_then_restores_the_window() {
        let mut d = probing(3);
        d.b.cwnd = 204;
        d.b.next_round_delivered = 10_000; // not at a round's start
                                           // Fast retransmit: the sender asks for ssthresh, BBR notes the window.
        d.b.ssthresh_on_loss(&d.w, 204, d.now);
        assert_eq!(d.b.prior_cwnd, 204);
        // The first ACK in recovery: cwnd = in flight + delivered.
        d.in_flight = 150;
        d.ack(ms(1), 1, 1000.0, 0, CaState::Recovery);
        assert_eq!(d.b.cwnd(), 151);
        assert!(d.b.packet_conservation);
        // During the round: never below in flight + delivered, never grown past it.
        d.in_flight = 148;
        d.ack(ms(1), 2, 1000.0, 0, CaState::Recovery);
        assert_eq!(d.b.cwnd(), 151);
        d.in_flight = 160;
        d.ack(ms(1), 2, 1000.0, 0, CaState::Recovery);
        assert_eq!(d.b.cwnd(), 162);
        // A new round ends conservation: back to growing by what is delivered, to the target.
        let next = d.b.next_round_delivered;
        d.ack(ms(1), 2, 1000.0, next, CaState::Recovery);
        assert!(!d.b.packet_conservation);
        assert_eq!(d.b.cwnd(), 164);
        // Leaving recovery restores the window from before it.
        d.ack(ms(1), 1, 1000.0, 0, CaState::Open);
        assert_eq!(d.b.cwnd(), 204);
    }

    #[test]
    fn a_timeout_leaves_one_segment_that_regrows_and_is_restored_after_loss() {
        let mut d = probing(3);
        d.b.cwnd = 204;
        d.b.ssthresh_on_timeout(&d.w, 204, d.now);
        d.w.cwnd = 1.0;
        d.b.on_retransmission_timeout(&d.w, d.now);
        assert_eq!(d.b.cwnd(), 1);
        d.in_flight = 1;
        d.ack(ms(100), 1, 10.0, 0, CaState::Loss);
        assert_eq!(d.b.cwnd(), 4, "BBRMinPipeCwnd");
        d.ack(ms(1), 4, 10.0, 0, CaState::Loss);
        assert_eq!(d.b.cwnd(), 8);
        d.ack(ms(1), 1, 10.0, 0, CaState::Open);
        assert_eq!(d.b.cwnd(), 204);
    }

    #[test]
    fn probe_rtt_holds_four_segments_for_200_ms_and_a_round_every_10_s() {
        let mut d = probing(3);
        d.b.cwnd = 204;
        // RTprop (100 ms) was set at 0, and a queue keeps every RTT since above it: 10 s later
        // it has not expired, a millisecond after it has.
        d.rtt = ms(120);
        d.ack(ms(10_000), 1, 1000.0, 0, CaState::Open);
        assert_eq!(d.b.mode(), Mode::ProbeBw);
        d.ack(ms(1), 1, 1000.0, 0, CaState::Open);
        assert_eq!((d.b.mode(), d.b.probe_rtt_entries()), (Mode::ProbeRtt, 1));
        assert!(d.b.holds_back());
        assert_eq!((d.b.cwnd(), d.b.pacing_gain()), (MIN_PIPE_CWND, 1.0));
        // The expired estimate took the sample it expired on.
        assert_eq!(d.b.rt_prop(), Some(ms(120)));
        // The 200 ms start once no more than 4 segments are in flight.
        d.in_flight = 5;
        d.ack(ms(50), 1, 1000.0, 0, CaState::Open);
        assert_eq!(d.b.probe_rtt_done_stamp, None);
        d.in_flight = 4;
        d.rtt = ms(100);
        d.ack(ms(50), 1, 1000.0, 0, CaState::Open);
        let done = d.now + PROBE_RTT_DURATION;
        assert_eq!(d.b.probe_rtt_done_stamp, Some(done));
        // A round passes, but 200 ms have not: still in ProbeRTT.
        let next = d.b.next_round_delivered;
        d.ack(ms(100), 1, 1000.0, next, CaState::Open);
        assert_eq!(d.b.mode(), Mode::ProbeRtt);
        // At exactly 200 ms, not yet; after, back to ProbeBW with the window restored.
        d.ack(done - d.now, 1, 1000.0, 0, CaState::Open);
        assert_eq!(d.b.mode(), Mode::ProbeRtt);
        d.ack(Time(1), 1, 1000.0, 0, CaState::Open);
        assert_eq!(d.b.mode(), Mode::ProbeBw);
        assert_ne!(d.b.cycle_index(), DRAIN_PHASE);
        // The window from before ProbeRTT, then the ACK's growth up to the target (206 in the
        // probing phase, 204 in the others).
        assert_eq!(d.b.cwnd(), 205.min(d.b.target_cwnd(1000.0, CWND_GAIN)));
        assert_eq!(d.b.rt_prop.stamp(), d.now, "the estimate counts as fresh");
    }
}
