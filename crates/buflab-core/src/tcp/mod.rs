//! TCP: sender, receiver, retransmission timer and congestion control.
//!
//! Owns the TCP model's shared vocabulary ([`TcpConfig`], [`Recovery`], the header size) and the
//! map below; must not know the event loop, links or the scenario (a flow's settings arrive as a
//! `TcpConfig`).
//!
//! Read before editing: RFC 5681 (slow start, congestion avoidance, fast retransmit and
//! recovery), RFC 6582 (NewReno), RFC 2018 and RFC 6675 (SACK and its loss recovery), RFC 6298
//! (retransmission timer), RFC 1122 §4.2.3.2 and RFC 5681 §4.2 (delayed ACKs). The model is segment-based, like ns-2's one-way TCP:
//! sequence numbers count segments of `mss` payload bytes, the window is counted in segments
//! (`cwnd` is fractional so that congestion avoidance adds 1/cwnd per ACK), and the receiver
//! consumes data at once, so its advertised window is always `max_window`.
//!
//! ECN (RFC 3168 §6.1), per flow (`TcpConfig::ecn`): the sender marks its new data ECT, the
//! receiver echoes a CE mark as ECE on its ACKs until it sees CWR, and the sender answers ECE
//! with a window reduction and no retransmission (`TcpSender::on_ece`). Both ends of a flow
//! share one configuration, so the SYN/SYN-ACK negotiation of §6.1.1 always succeeds and is
//! not modelled.
//!
//! Split of duties (as in Linux and ns-3): the [`sender`] owns sequence state, loss detection,
//! recovery (Reno, NewReno or SACK), RTT estimation and timers; the [`cc`] module only does
//! window arithmetic behind a small trait, one algorithm per file (BBR, which runs on
//! delivery-rate samples instead, gets them from [`rate`]: the samples in [`rate::sample`], the
//! sender's part in [`rate::sender`]). For SACK the [`receiver`] reports blocks
//! ([`sack::option`]: the option and the side channel that carries it), the sender keeps them
//! on its [`sack::scoreboard`] and recovers by them ([`sack::recovery`]). The sender's part of
//! SACK and of rate estimation are `impl TcpSender` blocks in those directories, sharing the
//! sender's state, which is visible within this module only (`pub(in crate::tcp)`).

pub mod ack_pacer;
pub mod cc;
pub mod flow;
pub mod limited_transmit;
pub mod linux;
pub mod pacer;
pub mod quickack;
pub mod rate;
pub mod receiver;
pub mod rto;
pub mod sack;
pub mod sender;
#[cfg(test)]
pub(crate) mod test_path;

use crate::monitor::MeasuredWindow;
use crate::units::Time;

/// Bytes of IP + TCP header in every data packet; also the size of a pure ACK.
pub const HEADER_BYTES: u32 = 40;

/// How the sender recovers from a loss detected by duplicate ACKs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Recovery {
    /// RFC 5681 §3.2: leave fast recovery on the first ACK of new data.
    Reno,
    /// RFC 6582: stay in fast recovery until everything sent before the loss is ACKed,
    /// retransmitting one segment per partial ACK.
    NewReno,
    /// RFC 6675 with the SACK option (RFC 2018): the receiver reports the blocks it holds, and
    /// recovery resends every segment the scoreboard shows lost, governed by cwnd − pipe.
    Sack,
    /// A default Linux 6.x sender and receiver ([`linux`]): SACK with RACK-TLP loss detection
    /// (RFC 8985), Proportional Rate Reduction (RFC 6937), Linux's RTO and delayed ACKs.
    Linux,
}

// The scenario's names (key `tcp` of `traffic.tcp`), also the per-flow table's.
crate::names::names!(Recovery { NewReno = "newreno", Reno = "reno", Sack = "sack", Linux = "linux" });

impl Recovery {
    /// Whether the receiver reports SACK blocks and the sender keeps a scoreboard of them.
    pub fn uses_sack(self) -> bool {
        matches!(self, Recovery::Sack | Recovery::Linux)
    }
}

/// When a SACK sender restarts its retransmission timer besides on each ACK of new data (RFC
/// 6298 §5.3), while it repairs losses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RtoRestart {
    /// On every retransmission sent in loss recovery: RFC 6675 §6's "more careful variant"
    /// (the `sack` sender's rule).
    EveryRetransmission,
    /// When the first unacknowledged segment is resent (Linux `tcp_xmit_retransmit_queue`,
    /// which rearms the timer for the head of its retransmission queue): the `linux` rule.
    Head,
    /// Never: only ACKs of new data restart it (RFC 6298 §5.3 alone, as ns-3 does).
    AckOnly,
}

crate::names::names!(RtoRestart {
    EveryRetransmission = "every_retransmission", Head = "head", AckOnly = "ack_only"
});

/// The ECN codepoint an ECN-capable sender puts on new data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EcnCodepoint {
    /// ECT(0): classic ECN (RFC 3168 §5).
    Ect0,
    /// ECT(1): the L4S identifier (RFC 9331 §4.1), for a scalable congestion control that
    /// expects shallow, frequent marks (DCTCP, Prague).
    Ect1,
}

crate::names::names!(EcnCodepoint { Ect0 = "ect0", Ect1 = "ect1" });

/// Per-flow TCP settings (from the scenario's traffic entry).
#[derive(Clone, Copy, Debug)]
pub struct TcpConfig {
    pub recovery: Recovery,
    pub cc: cc::CcKind,
    /// Data packet size on the wire, bytes.
    pub packet: u32,
    /// Receiver's advertised window, in segments.
    pub max_window: u32,
    /// Initial congestion window, segments.
    pub initial_window: u32,
    pub min_rto: Time,
    pub max_rto: Time,
    pub initial_rto: Time,
    /// Clock granularity G of RFC 6298 §2.
    pub granularity: Time,
    pub delayed_ack: bool,
    pub delayed_ack_timeout: Time,
    /// Sender pacing (see [`pacer`]).
    pub pacing: pacer::Pacing,
    /// ECN-capable (RFC 3168): ECT on new data, a window reduction on ECE.
    pub ecn: bool,
    /// With `ecn`: the codepoint of its ECT packets.
    pub ecn_codepoint: EcnCodepoint,
    /// Receiver-side ACK pacing (see [`ack_pacer`]).
    pub ack_pacing: bool,
    /// RFC 3042 Limited Transmit for `Reno` and `NewReno` ([`limited_transmit`]); the SACK
    /// and Linux senders always send new data on the first duplicate ACKs.
    pub limited_transmit: bool,
    /// How slow start ends (see [`cc::hystart`]).
    pub slow_start: cc::hystart::SlowStart,
    /// The SACK and Linux senders' timer restarts in recovery (see [`RtoRestart`]).
    pub rto_restart: RtoRestart,
    /// The Linux sender's GSO packets ([`linux::tso`]): at most this many segments (the
    /// device's `gso_max_segs`); 0, Linux's own limit (64 KB); 1, one segment at a time, no
    /// TSO deferral. Other senders send one segment at a time.
    pub gso_segments: u32,
    /// The run's measured window, for the senders' window counters: not a scenario key but
    /// the run's warm-up and end, set where the network's flows are built (the same for
    /// every flow; kept here, in the one copy an entry's senders share, rather than in each).
    pub measured: MeasuredWindow,
}

impl TcpConfig {
    /// Payload bytes per segment.
    pub fn mss(&self) -> u32 {
        self.packet - HEADER_BYTES
    }

    /// RFC 3390 §1: IW = min(4·MSS, max(2·MSS, 4380 bytes)), in whole segments.
    pub fn rfc3390_initial_window(mss: u32) -> u32 {
        (4 * mss).min((2 * mss).max(4380)) / mss
    }

    /// The settings of a flow with `packet`-byte packets and `recovery`, before the scenario's
    /// keys: the RFC-era defaults, or for [`Recovery::Linux`] a default Linux 6.x host's
    /// ([`linux::defaults`]).
    pub fn default_for(packet: u32, recovery: Recovery) -> TcpConfig {
        let mss = packet - HEADER_BYTES;
        let cfg = TcpConfig {
            recovery,
            cc: cc::CcKind::Reno,
            packet,
            max_window: 20_000_000 / mss,
            initial_window: Self::rfc3390_initial_window(mss),
            min_rto: Time::from_ms(200),
            max_rto: Time::from_secs(60),
            initial_rto: Time::from_secs(1),
            granularity: Time::from_ms(1),
            delayed_ack: false,
            delayed_ack_timeout: Time::from_ms(100),
            pacing: pacer::Pacing::Off,
            ecn: false,
            ecn_codepoint: EcnCodepoint::Ect0,
            ack_pacing: false,
            limited_transmit: recovery.uses_sack(),
            slow_start: cc::hystart::SlowStart::Standard,
            rto_restart: match recovery {
                Recovery::Linux => RtoRestart::Head,
                _ => RtoRestart::EveryRetransmission,
            },
            gso_segments: 0,
            measured: MeasuredWindow::WHOLE_RUN,
        };
        if recovery == Recovery::Linux {
            linux::defaults(cfg)
        } else {
            cfg
        }
    }
}

#[cfg(test)]
mod tests {
    use super::TcpConfig;

    #[test]
    fn rfc3390_initial_window() {
        assert_eq!(TcpConfig::rfc3390_initial_window(960), 4); // 3840 B
        assert_eq!(TcpConfig::rfc3390_initial_window(1460), 3); // 4380 B
        assert_eq!(TcpConfig::rfc3390_initial_window(536), 4); // 2144 B
    }
}
