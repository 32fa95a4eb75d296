//! Open-loop UDP sources: Poisson or constant-bit-rate packet streams, for queueing-theory
//! checks (M/D/1/K) and background load. A source and its sink are one endpoint (see
//! [`crate::endpoint`]): the source emits on its one timer, the sink counts what arrives.
//!
//! Read first: [`crate::endpoint`]. Owns a source's pattern, its draws and its counts; must not
//! know links or the event loop.

use crate::endpoint::{Endpoint, Facts, Notice, Side};
use crate::monitor::MeasuredWindow;
use crate::packet::{Kind, Packet};
use crate::rng::Rng;
use crate::units::{Rate, Time};

/// When a source's packets leave (the scenario's kinds `udp_poisson` and `udp_cbr`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UdpPattern {
    /// Exponential gaps: a Poisson process of the source's mean rate.
    Poisson,
    /// Constant gaps: constant bit rate.
    Cbr,
}

#[derive(Clone, Debug)]
pub struct UdpSource {
    pub pattern: UdpPattern,
    flow: u32,
    route: u32,
    packet: u32,
    /// Mean gap between packets, picoseconds (exact for CBR up to rounding).
    mean_gap_ps: f64,
    next_seq: u32,
    rng: Rng,
    /// When the next packet leaves (None before the source starts).
    next: Option<Time>,
    window: MeasuredWindow,
    pub sent: u64,
    pub received: u64,
    /// Packets received inside the measured window (by arrival time).
    pub window_received: u64,
}

impl UdpSource {
    pub fn new(pattern: UdpPattern, flow: u32, route: u32, rate: Rate, packet: u32, rng: Rng) -> UdpSource {
        let mean_gap_ps = rate.serialization(packet as u64).0 as f64;
        UdpSource {
            pattern,
            flow,
            route,
            packet,
            mean_gap_ps,
            next_seq: 0,
            rng,
            next: None,
            window: MeasuredWindow { start: Time::ZERO, end: Time::MAX },
            sent: 0,
            received: 0,
            window_received: 0,
        }
    }

    /// Emits one packet at `now` and returns when the next one is due.
    pub fn emit(&mut self, now: Time) -> (Packet, Time) {
        let pkt = Packet {
            sent_at: now,
            flow: self.flow,
            seq: self.next_seq,
            size: self.packet,
            route: self.route,
            hop: 0,
            kind: Kind::Udp,
            conn: 0,
            sack: 0,
            flags: 0,
            stamp: Time::ZERO,
        };
        self.next_seq = self.next_seq.wrapping_add(1);
        self.sent += 1;
        let gap = match self.pattern {
            UdpPattern::Cbr => self.mean_gap_ps,
            // Exponential gaps: a Poisson process of the given mean rate.
            UdpPattern::Poisson => self.rng.exponential(self.mean_gap_ps),
        };
        (pkt, now + Time(gap.round().max(1.0) as u64))
    }

    /// The route its packets take.
    pub fn route(&self) -> u32 {
        self.route
    }
}

impl Endpoint for UdpSource {
    /// The source's emission timer.
    const TIMERS: &'static [Side] = &[Side::Source];

    fn start(&mut self, now: Time, out: &mut Vec<Packet>) -> Notice {
        let (pkt, next) = self.emit(now);
        out.push(pkt);
        self.next = Some(next);
        Notice::NONE
    }

    /// The sink counts its arrivals.
    fn on_packet(&mut self, now: Time, _pkt: Packet, _out: &mut Vec<Packet>) -> Notice {
        self.received += 1;
        if self.window.contains(now) {
            self.window_received += 1;
        }
        Notice::NONE
    }

    /// Its one timer is never stale: each emission sets the next.
    fn on_timer(&mut self, now: Time, _slot: usize, out: &mut Vec<Packet>) -> Notice {
        self.start(now, out)
    }

    fn deadline(&self, _slot: usize) -> Option<Time> {
        self.next
    }

    fn facts(&self) -> Facts {
        Facts { route: self.route, answer_route: None, answers_at_once: true, runs_ahead: false }
    }

    fn set_window(&mut self, window: MeasuredWindow) {
        self.window = window;
    }
}
