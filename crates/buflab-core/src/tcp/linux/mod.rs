//! `tcp = "linux"`: the sender and receiver of a default Linux 6.x host, as far as a
//! segment-based model goes.
//!
//! Read first: [`super`] (the segment model), [`super::sack`] (the option and the scoreboard of
//! SACKed ranges, which this sender keeps too), then RFC 8985 (RACK-TLP), RFC 6937 (PRR) and
//! Linux's `net/ipv4/tcp_input.c` (`tcp_ack`, `tcp_fastretrans_alert`), `tcp_output.c`
//! (`tcp_write_xmit`, `tcp_xmit_retransmit_queue`, `tcp_schedule_loss_probe`), `tcp_timer.c`
//! and `tcp_recovery.c`. Owns the Linux sender's state ([`LinuxState`]) and the profile's
//! defaults ([`defaults`]); each mechanism is its own file:
//! - [`sent`]: the retransmission queue, one record per outstanding segment (its last send
//!   time and Linux's SACKED, LOST and RETRANS marks) and the counts Linux's in-flight
//!   estimate is made of;
//! - [`rack`]: RACK loss detection (RFC 8985 §6): a segment is lost when one sent after it has
//!   been delivered and a reordering window has passed; the reordering timer;
//! - [`tlp`]: the tail loss probe (RFC 8985 §7): its timeout, what it sends, and what its ACK
//!   says;
//! - [`prr`]: Proportional Rate Reduction (RFC 6937), the window while repairing losses;
//! - [`tso`]: GSO autosizing and TSO deferral, how many segments leave together;
//! - [`sender`]: the `impl TcpSender` block that runs them, ACK by ACK, as `tcp_ack` does:
//!   the congestion states Open, Disorder, CWR, Recovery and Loss, the single retransmission
//!   timer that is in turn the RTO, the probe timeout and RACK's reordering timer, and what is
//!   sent and when.
//!
//! Outside this directory: Linux's RTO ([`super::rto::linux`]), HyStart for CUBIC
//! ([`super::cc::hystart`]) and Linux's delayed and quick ACKs ([`super::quickack`]).
//!
//! What the profile models, beside the RFC-era SACK sender's scoreboard and SACK option (up to
//! 3 blocks):
//! - RACK-TLP loss detection in place of three duplicate ACKs (Linux `tcp_recovery = 1`,
//!   `tcp_early_retrans = 3`): recovery starts once RACK marks a segment lost, at once when
//!   three segments are SACKed above it and otherwise after a quarter of the minimum RTT; lost
//!   retransmissions are found the same way instead of by a second timeout; a probe after two
//!   smoothed RTTs of silence repairs a lost tail;
//! - PRR for the window in recovery and in CWR (after a probe repaired a loss, or on ECN-Echo),
//!   Linux's variant (`tcp_cwnd_reduction`); cwnd = ssthresh when recovery ends;
//! - Linux's RTO (RTTVAR floor 200 ms, whole jiffies, 120 s maximum), restarted when the head of
//!   the retransmission queue is resent (`rto_restart = "head"`), measured from the head's
//!   last transmission when it replaces a probe or reordering timer;
//! - after a timeout: every unSACKed segment but the most recently sent marked lost, cwnd = the
//!   segments in flight + 1, resent in order as the window grows (no go-back-N);
//! - RTT samples from every ACK (the oldest newly acknowledged segment never resent, else the
//!   resend that filled the hole, as timestamps give);
//! - initial window 10 (RFC 6928), window growth by the segments each ACK delivers (Linux
//!   `tcp_slow_start` and `tcp_cong_avoid_ai`: byte counting without RFC 3465's limit), only
//!   while the window limits the sender (`tcp_is_cwnd_limited`), ssthresh from cwnd rather than
//!   FlightSize, whole segments;
//! - GSO packets of new data as Linux sizes them (`tcp_tso_autosize`: about 1 ms of the pacing
//!   rate Linux keeps whether it paces or not, more on paths under a few ms, at least 2
//!   segments, at most half the window, capped by the scenario's `emulation.gso_segments`),
//!   whose segments leave together, and TSO deferral (`tcp_tso_should_defer`);
//! - CUBIC's epoch paused while the window does not limit the sender (RFC 9438 §4.2);
//! - HyStart in CUBIC's slow start (`slow_start = "hystart"`, Linux's ACK-train and delay
//!   detection); Reno without;
//! - PSH on the last segment of every GSO packet of two or more segments, as Linux 6.18 sends
//!   them (measured in the emulator: 97 % of its two-segment packets end with PSH);
//! - Linux's receiver: delayed ACKs with quick-ACK mode for the first 16 ACKs and after idle,
//!   an adaptive delayed-ACK timer (40 ms up), an immediate ACK for data out of order and for
//!   a full-sized PSH segment (once the application has read it);
//! - host timing noise (`jitter`, on by default here): each send event late by one draw, what
//!   it releases leaving back to back.
//!
//! What it does not model: see the README and `docs/scenario.md` (key `traffic.tcp.tcp`).

pub mod prr;
pub mod rack;
pub mod sender;
pub mod sent;
pub mod tlp;
pub mod tso;

use super::cc::hystart::HyStart;
use super::pacer::Pacing;
use super::rto::linux::RTO_MAX;
use super::TcpConfig;
use crate::units::Time;

/// Linux's congestion states (`enum tcp_ca_state`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum CaState {
    /// Nothing outstanding is SACKed, lost or resent.
    Open,
    /// SACKed or resent segments outstanding, no loss proven.
    Disorder,
    /// The window is being reduced without a loss to repair (ECN-Echo, a loss a probe repaired).
    Cwr,
    /// Fast recovery: from RACK's first loss until the cumulative ACK reaches `high_seq`.
    Recovery,
    /// After a retransmission timeout, until the cumulative ACK reaches `high_seq`.
    Loss,
}

/// What the sender's single retransmission timer stands for now (Linux `icsk_pending`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimerKind {
    Rto,
    /// The tail loss probe's timeout (PTO).
    Probe,
    /// RACK's reordering timer.
    Reorder,
}

/// The Linux sender's state beside the shared sender's (boxed in `TcpSender::linux`).
#[derive(Clone, Debug)]
pub struct LinuxState {
    pub ca: CaState,
    pub q: sent::SentQueue,
    pub rack: rack::Rack,
    pub tlp: tlp::Tlp,
    pub prr: prr::Prr,
    /// Linux `high_seq`: one past the highest segment sent when the current Recovery, Loss or
    /// CWR state began; the state ends when the cumulative ACK reaches it (CWR: passes it).
    pub high_seq: u32,
    pub timer: TimerKind,
    /// The smallest RTT sample of the connection (Linux `tcp_min_rtt`, whose 300-s window
    /// spans any run here).
    pub min_rtt: Option<Time>,
    /// Timeouts in a row for the same data (Linux `icsk_retransmits`).
    pub rto_retries: u32,
    /// `tcp_cwnd_validate`: whether the window limited the sender in the current round trip,
    /// the most it had out, and the segment whose acknowledgement ends the round.
    pub cwnd_limited: bool,
    pub max_packets_out: u32,
    pub cwnd_usage_seq: u32,
    /// Since when the window has not limited the sender (RFC 9438 §4.2's application-limited
    /// period, reported to the controller when it ends).
    pub app_limited_since: Option<Time>,
    /// HyStart or HyStart++ (`slow_start`), None for standard slow start (boxed: most flows
    /// spend little of their time in slow start).
    pub hystart: Option<Box<HyStart>>,
    /// The write queue's head buffer: segments of it not sent yet (0: the next is made at the
    /// autosized size, [`tso`]).
    pub head_rest: u32,
    /// When the sender last put a segment on the wire (`tcp_wstamp_ns` without pacing).
    pub last_write: Time,
    /// What the mechanisms did over the connection (for tests and inspection).
    pub counts: Counts,
}

/// Events of the Linux sender's mechanisms, counted over a connection.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Tail loss probes sent, and those whose ACK showed they repaired a loss.
    pub probes: u64,
    pub probe_repairs: u64,
    /// RACK's reordering timer fired, and found losses.
    pub reorder_timeouts: u64,
    /// Recoveries entered (fast, by RACK), and entered from the Loss state.
    pub recoveries: u64,
    /// GSO packets of new data sent, and the times the sender waited for an ACK instead
    /// (TSO deferral).
    pub gso_packets: u64,
    pub deferrals: u64,
}

impl LinuxState {
    pub fn new(cfg: &TcpConfig) -> LinuxState {
        LinuxState {
            ca: CaState::Open,
            q: sent::SentQueue::default(),
            rack: rack::Rack::default(),
            tlp: tlp::Tlp::default(),
            prr: prr::Prr::default(),
            high_seq: 0,
            timer: TimerKind::Rto,
            min_rtt: None,
            rto_retries: 0,
            cwnd_limited: false,
            max_packets_out: 0,
            cwnd_usage_seq: 0,
            app_limited_since: None,
            hystart: HyStart::new(cfg.slow_start, cfg.pacing != Pacing::Off).map(Box::new),
            head_rest: 0,
            last_write: Time::ZERO,
            counts: Counts::default(),
        }
    }
}

/// Linux's initial window (RFC 6928; `TCP_INIT_CWND`).
pub const INITIAL_WINDOW: u32 = 10;
/// Linux's minimum delayed-ACK timeout, `TCP_ATO_MIN` (HZ/25).
pub const ATO_MIN: Time = Time::from_ms(40);
/// The host timing noise the profile adds to each segment's departure unless `jitter` says
/// otherwise (see the README: interrupt and scheduling delays on a sending host).
pub const HOST_JITTER: Time = Time::from_us(100);

/// A default Linux 6.x host's settings, from the RFC-era ones: IW10, delayed ACKs with
/// Linux's rules (their timer's floor `ATO_MIN`), RTO at most 120 s, the RTTVAR floor
/// `min_rto` (200 ms as before), SACK with Limited Transmit, and the RTO restarted for the
/// head of the retransmission queue only.
pub fn defaults(mut cfg: TcpConfig) -> TcpConfig {
    cfg.initial_window = INITIAL_WINDOW;
    cfg.max_rto = RTO_MAX;
    cfg.delayed_ack = true;
    cfg.delayed_ack_timeout = ATO_MIN;
    cfg
}
