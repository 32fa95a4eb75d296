//! A scripted network for the senders' tests (STYLE habit 9): a real sender and a real receiver
//! on an order-keeping path whose whole RTT of 100 ms ([`RTT`]) is on the way out, ACKs
//! returning at once, which drops the data transmissions and ACKs the test names. Times are
//! exact multiples of the RTT plus the senders' own timers, so each assertion on time counts
//! round trips.

use std::collections::VecDeque;

use crate::packet::{flags, Packet};
use crate::tcp::cc::Window;
use crate::tcp::receiver::TcpReceiver;
use crate::tcp::sender::TcpSender;
use crate::tcp::TcpConfig;
use crate::units::Time;

/// The path's round-trip time, all of it on the way out.
pub(crate) const RTT: Time = Time::from_ms(100);

pub(crate) struct Path {
    pub s: TcpSender,
    pub r: TcpReceiver,
    /// Data in flight: send time, segment, which transmission of it (0 = the first).
    pub flight: VecDeque<(Time, u32, u32)>,
    pub sends: Vec<u32>,
    /// (segment, transmission) pairs the path drops.
    pub drop: Vec<(u32, u32)>,
    /// ACKs the path drops, by their order from the receiver (0 = the first).
    pub drop_acks: Vec<u64>,
    pub acks: u64,
    pub now: Time,
    /// Every transmission, and every retransmission: (time, segment).
    pub log: Vec<(Time, u32)>,
    pub resent: Vec<(Time, u32)>,
    /// The cumulative ACK before the last ACK processed.
    pub una_before: u32,
}

impl Path {
    /// A sender with settings `cfg` and window `w` that has sent its first window; the
    /// receiver acknowledges every segment (with SACK blocks if `cfg` uses SACK).
    pub fn start(cfg: TcpConfig, w: Window, drop: &[(u32, u32)]) -> Path {
        let mut s = TcpSender::new(cfg, 0, 0);
        s.w = w;
        let mut r = TcpReceiver::new(0, 1, cfg.mss(), cfg.max_window, false, Time::from_ms(100));
        if cfg.recovery.uses_sack() {
            r.set_sack();
        }
        let mut p = Path {
            s,
            r,
            flight: VecDeque::new(),
            sends: Vec::new(),
            drop: drop.to_vec(),
            drop_acks: Vec::new(),
            acks: 0,
            now: Time::ZERO,
            log: Vec::new(),
            resent: Vec::new(),
            una_before: 0,
        };
        let mut out = Vec::new();
        p.s.start(Time::ZERO, &mut out);
        p.send(Time::ZERO, out);
        p
    }

    pub fn send(&mut self, t: Time, out: Vec<Packet>) {
        for pkt in out {
            let seq = pkt.seq as usize;
            if self.sends.len() <= seq {
                self.sends.resize(seq + 1, 0);
            }
            self.log.push((t, pkt.seq));
            if pkt.flags & flags::RETRANSMIT != 0 {
                self.resent.push((t, pkt.seq));
            }
            self.flight.push_back((t, pkt.seq, self.sends[seq]));
            self.sends[seq] += 1;
        }
    }

    /// The next event: a timeout due first, or the next data arrival and its ACK. False
    /// when nothing is left to happen.
    pub fn step(&mut self) -> bool {
        let arrival = self.flight.front().map(|&(t, _, _)| t + RTT);
        let mut out = Vec::new();
        if let Some(d) = self.s.rto_deadline().filter(|&d| arrival.is_none_or(|a| d <= a)) {
            self.now = d;
            assert!(self.s.check_timer(d, &mut out));
            self.send(d, out);
            return true;
        }
        let Some((t, seq, nth)) = self.flight.pop_front() else { return false };
        self.now = t + RTT;
        if self.drop.contains(&(seq, nth)) {
            return true;
        }
        let mut acks = Vec::new();
        self.r.on_data(self.now, seq, &mut acks);
        for a in acks {
            self.acks += 1;
            if self.drop_acks.contains(&(self.acks - 1)) {
                continue;
            }
            self.una_before = self.s.snd_una;
            if a.sack == 0 {
                self.s.on_ack(self.now, a.seq, &mut out);
            } else {
                let opt = self.r.sack_option(a.sack).expect("the option of an ACK that arrived");
                self.s.on_sack_ack(self.now, a.seq, opt.blocks(), &mut out);
            }
        }
        self.send(self.now, out);
        true
    }

    pub fn run_until(&mut self, done: impl Fn(&Path) -> bool) {
        for _ in 0..100_000 {
            if done(self) {
                return;
            }
            assert!(self.step(), "the path went quiet first");
        }
        panic!("no end after 100,000 steps");
    }

    pub fn resent_segments(&self) -> Vec<u32> {
        let mut v: Vec<u32> = self.resent.iter().map(|&(_, s)| s).collect();
        v.sort_unstable();
        v
    }
}
