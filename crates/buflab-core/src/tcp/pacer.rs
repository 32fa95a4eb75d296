//! Sender pacing: when the next data segment may leave.
//!
//! Read first: Aggarwal, Savage, Anderson, "Understanding the Performance of TCP Pacing"
//! (INFOCOM 2000), §II: a paced sender "spreads the transmission of a window of packets
//! across the entire round-trip time", i.e. segments leave at the rate cwnd ÷ RTT instead of
//! in a burst on each ACK. Linux (net/ipv4/tcp_input.c, `tcp_update_pacing_rate`) paces at a
//! multiple of that rate: 200 % of cwnd·MSS ÷ srtt in slow start (cwnd < ssthresh ÷ 2) and
//! 120 % in congestion avoidance, so that pacing never holds the window back from growing.
//!
//! The pacer is separate from the congestion controller (STYLE habit 6): the controller sets
//! the window, the pacer only answers "when may the next segment go?". It works with any
//! controller; a controller that sets a pacing rate itself (BBR) has it used as is
//! ([`Pacing::Controller`]). Deliberate choices, stated here once:
//! - Pacing starts with the first RTT sample. A long-lived flow has no handshake in this
//!   model, so its initial window (3–4 segments) goes out at once; a finite transfer with a
//!   handshake has its SYN-ACK sample before the first data segment and is paced from the
//!   start.
//! - The gap after a segment is its wire size ÷ the pacing rate, counted from the moment it
//!   left; a sender that was held back by its window (not by the pacer) sends at once when
//!   the window opens, and is paced from there. Linux does the same (`tcp_wstamp_ns`
//!   starts from now when it is in the past).
//! - A fast retransmission (RFC 5681 §3.2 step 2, "retransmit at once") is not held, but it
//!   counts: the next segment waits a gap behind it.
//! - Rates use the window and srtt at the moment a segment leaves; the gap is rounded to the
//!   picosecond (f64 multiply and divide only: IEEE-exact, identical on every platform).

use super::cc::Window;
use crate::units::{Time, PS_PER_S};

/// Which pacing a sender uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pacing {
    /// Segments leave as the window allows (ACK clocking alone).
    Off,
    /// Aggarwal et al. 2000: the window spread evenly over the smoothed RTT, rate = cwnd ÷ srtt.
    Window,
    /// Linux's ratios: 2 × cwnd ÷ srtt in slow start, 1.2 × cwnd ÷ srtt in congestion avoidance.
    Linux,
    /// The congestion controller's own rate ([`Pacer::set_rate`]), from the first segment on:
    /// what a BBR flow always uses, whatever the scenario's `pacing`.
    Controller,
}

// The scenario's names (key `pacing` of `traffic.tcp`); the controller's own rate is no choice.
crate::names::names!(Pacing { Off = "off", Window = "window", Linux = "linux"; Controller = "controller" });

impl Pacing {
    /// Pacing rate ÷ (cwnd ÷ srtt) in the window state `w`.
    fn ratio(self, w: &Window) -> f64 {
        match self {
            Pacing::Off | Pacing::Controller => 0.0,
            Pacing::Window => 1.0,
            // tcp_update_pacing_rate: sysctl_tcp_pacing_ss_ratio = 200 while
            // snd_cwnd < snd_ssthresh / 2, else sysctl_tcp_pacing_ca_ratio = 120.
            Pacing::Linux if w.cwnd < w.ssthresh / 2.0 => 2.0,
            Pacing::Linux => 1.2,
        }
    }
}

/// The pacer of one sender.
#[derive(Clone, Debug)]
pub struct Pacer {
    pub mode: Pacing,
    /// Full-size data packet on the wire, bytes (the unit the window is counted in).
    packet: u32,
    /// Earliest time the next segment may leave.
    next_send: Time,
    /// `Pacing::Controller`: the rate the controller set, bits per second of wire data.
    rate: f64,
}

impl Pacer {
    pub fn new(mode: Pacing, packet: u32) -> Pacer {
        Pacer { mode, packet, next_send: Time::ZERO, rate: 0.0 }
    }

    /// `Pacing::Controller`: paces at `bps` bits per second of wire data from the next
    /// segment on.
    pub fn set_rate(&mut self, bps: f64) {
        self.rate = bps;
    }

    /// `Pacing::Controller`'s rate, if it is one and has been set.
    fn controller_rate(&self) -> Option<f64> {
        (self.mode == Pacing::Controller && self.rate > 0.0).then_some(self.rate)
    }

    /// Full segments paced per srtt (ratio × cwnd) and srtt in picoseconds, or None when not
    /// pacing (off, or no RTT sample yet).
    fn segments_per_srtt(&self, w: &Window, srtt: Option<Time>) -> Option<(f64, f64)> {
        let srtt = srtt.filter(|s| *s > Time::ZERO)?;
        (self.mode != Pacing::Off).then(|| (self.mode.ratio(w) * w.cwnd.max(1.0), srtt.0 as f64))
    }

    /// Pacing rate in bits per second of wire data, or None when not pacing.
    pub fn rate_bps(&self, w: &Window, srtt: Option<Time>) -> Option<f64> {
        if self.mode == Pacing::Controller {
            return self.controller_rate();
        }
        let (segments, srtt_ps) = self.segments_per_srtt(w, srtt)?;
        Some(segments * self.packet as f64 * 8.0 * PS_PER_S as f64 / srtt_ps)
    }

    /// The gap a segment of `size` wire bytes opens behind it: srtt × (size ÷ packet) ÷
    /// (ratio × cwnd); for a full segment paced by the window, exactly srtt ÷ cwnd.
    pub fn gap(&self, w: &Window, srtt: Option<Time>, size: u32) -> Option<Time> {
        if self.mode == Pacing::Controller {
            // The segment's wire bits at the controller's rate.
            let rate = self.controller_rate()?;
            return Some(Time((size as f64 * 8.0 * PS_PER_S as f64 / rate).round() as u64));
        }
        let (segments, srtt_ps) = self.segments_per_srtt(w, srtt)?;
        let ps = srtt_ps * (size as f64 / self.packet as f64) / segments;
        Some(Time(ps.round() as u64))
    }

    /// When the next segment may leave, if that is after `now`.
    #[inline]
    pub fn hold_until(&self, now: Time) -> Option<Time> {
        (self.mode != Pacing::Off && self.next_send > now).then_some(self.next_send)
    }

    /// When the next segment may leave by the schedule (the past when it may go now).
    pub fn next_send(&self) -> Time {
        self.next_send
    }

    /// A segment of `size` bytes left at `now`: the next waits a gap behind it.
    #[inline]
    pub fn on_sent(&mut self, now: Time, w: &Window, srtt: Option<Time>, size: u32) {
        if let Some(gap) = self.gap(w, srtt, size) {
            self.next_send = now.max(self.next_send) + gap;
        }
    }

    /// Forgets the schedule (a new connection).
    pub fn reset(&mut self) {
        self.next_send = Time::ZERO;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(cwnd: f64, ssthresh: f64) -> Window {
        Window { cwnd, ssthresh }
    }

    #[test]
    fn window_pacing_spreads_cwnd_over_srtt() {
        // cwnd 10, srtt 100 ms: one full segment every 10 ms, rate 10 × 1000 B / 100 ms.
        let p = Pacer::new(Pacing::Window, 1000);
        let srtt = Some(Time::from_ms(100));
        assert_eq!(p.gap(&w(10.0, 5.0), srtt, 1000), Some(Time::from_ms(10)));
        assert_eq!(p.rate_bps(&w(10.0, 5.0), srtt), Some(800_000.0));
        // A shorter segment (the last of a transfer) opens a gap in proportion to its size.
        assert_eq!(p.gap(&w(10.0, 5.0), srtt, 500), Some(Time::from_ms(5)));
    }

    #[test]
    fn linux_ratios_double_in_slow_start_and_add_a_fifth_in_avoidance() {
        let p = Pacer::new(Pacing::Linux, 1000);
        let srtt = Some(Time::from_ms(120));
        // Slow start (cwnd 10 < ssthresh/2 = 50): 2 × 10 per 120 ms → 6 ms per segment.
        assert_eq!(p.gap(&w(10.0, 100.0), srtt, 1000), Some(Time::from_ms(6)));
        // cwnd 60 ≥ 50: 1.2 × 60 = 72 per 120 ms → 1.666… ms, rounded to the picosecond.
        assert_eq!(p.gap(&w(60.0, 100.0), srtt, 1000), Some(Time(1_666_666_667)));
    }

    #[test]
    fn no_pacing_before_the_first_rtt_sample_or_when_off() {
        let p = Pacer::new(Pacing::Window, 1000);
        assert_eq!(p.gap(&w(10.0, 5.0), None, 1000), None);
        assert_eq!(p.hold_until(Time::ZERO), None);
        let off = Pacer::new(Pacing::Off, 1000);
        assert_eq!(off.gap(&w(10.0, 5.0), Some(Time::from_ms(100)), 1000), None);
        assert_eq!(off.rate_bps(&w(10.0, 5.0), Some(Time::from_ms(100))), None);
    }

    #[test]
    fn controller_pacing_spaces_segments_by_their_bits_at_its_rate() {
        // 8 Mb/s: a 1000 B segment every 1 ms, a 40 B one every 40 µs; window and srtt play
        // no part, and nothing is paced until the controller has set a rate.
        let mut p = Pacer::new(Pacing::Controller, 1000);
        assert_eq!(p.gap(&w(10.0, 5.0), None, 1000), None);
        p.set_rate(8_000_000.0);
        assert_eq!(p.gap(&w(10.0, 5.0), None, 1000), Some(Time::from_ms(1)));
        assert_eq!(p.gap(&w(99.0, 5.0), Some(Time::from_ms(3)), 40), Some(Time::from_us(40)));
        assert_eq!(p.rate_bps(&w(10.0, 5.0), None), Some(8_000_000.0));
        p.on_sent(Time::ZERO, &w(10.0, 5.0), None, 1000);
        assert_eq!(p.hold_until(Time::ZERO), Some(Time::from_ms(1)));
    }

    #[test]
    fn gaps_chain_from_the_later_of_now_and_the_schedule() {
        let mut p = Pacer::new(Pacing::Window, 1000);
        let (win, srtt) = (w(4.0, 2.0), Some(Time::from_ms(100)));
        p.on_sent(Time::ZERO, &win, srtt, 1000);
        assert_eq!(p.hold_until(Time::ZERO), Some(Time::from_ms(25)));
        // Sent on time at 25 ms: the next at 50 ms.
        p.on_sent(Time::from_ms(25), &win, srtt, 1000);
        assert_eq!(p.hold_until(Time::from_ms(30)), Some(Time::from_ms(50)));
        // Held back by the window until 200 ms: sent at once, the next a gap later.
        assert_eq!(p.hold_until(Time::from_ms(200)), None);
        p.on_sent(Time::from_ms(200), &win, srtt, 1000);
        assert_eq!(p.hold_until(Time::from_ms(200)), Some(Time::from_ms(225)));
    }
}
