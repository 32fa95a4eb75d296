//! A TCP flow as one endpoint: its sender, its receiver, and what passes between them beside
//! the packets.
//!
//! Read first: [`crate::endpoint`] (the contract) and [`super`] (the split of duties between
//! sender and receiver). This file owns the dispatch of a flow's packets and timers to its two
//! ends: data to the receiver (a SYN-ACK completes the client's handshake), ACKs to the sender
//! (a SYN is a client's request, left to the application; an ACK's SACK option comes through
//! the receiver's side channel, see [`super::sack::option`]; ECN-Echo is a window reduction, RFC 3168
//! §6.1.2). It knows nothing of users or of the simulator; the application that drives
//! finite transfers (`sim/users.rs`) calls [`TcpFlow::connect`] and [`TcpFlow::accept`].
//!
//! Timer slots: [`TcpFlow::RTO`] and [`TcpFlow::PACE`] on the sender (source side),
//! [`TcpFlow::RECEIVER`] (delayed ACKs and ACK pacing) on the receiver.

use super::receiver::TcpReceiver;
use super::sender::TcpSender;
use crate::endpoint::{Endpoint, Facts, Notice, Side};
use crate::monitor::trace::TraceSample;
use crate::monitor::MeasuredWindow;
use crate::packet::{flags, Kind, Packet};
use crate::units::Time;

#[derive(Clone, Debug)]
pub struct TcpFlow {
    pub sender: TcpSender,
    pub receiver: TcpReceiver,
}

impl TcpFlow {
    /// The sender's retransmission timer (RFC 6298).
    pub const RTO: usize = 0;
    /// The sender's pacer: the next segment's release.
    pub const PACE: usize = 1;
    /// The receiver's timer: a delayed ACK due, or a paced ACK's release.
    pub const RECEIVER: usize = 2;

    pub fn new(sender: TcpSender, receiver: TcpReceiver) -> TcpFlow {
        TcpFlow { sender, receiver }
    }

    /// The client opens connection `conn` to fetch `bytes` (its request goes out).
    pub fn connect(&mut self, now: Time, conn: u16, bytes: u64, out: &mut Vec<Packet>) {
        self.receiver.connect(now, conn, bytes, out);
    }

    /// The server accepts the request for connection `conn` and starts serving `bytes`.
    pub fn accept(&mut self, now: Time, conn: u16, bytes: u64, handshake: bool, out: &mut Vec<Packet>) {
        self.sender.accept(now, conn, bytes, handshake, out);
    }

    /// A data segment (or the server's SYN-ACK) reaches the receiver.
    #[inline]
    fn on_data(&mut self, now: Time, pkt: Packet, out: &mut Vec<Packet>) -> Notice {
        let receiver = &mut self.receiver;
        if pkt.conn != receiver.conn() {
            return Notice::NONE; // a packet of an earlier connection
        }
        if pkt.flags & flags::SYN != 0 {
            receiver.on_syn_ack(now, out);
        } else {
            receiver.on_flags(now, pkt.flags, out);
            receiver.on_data(now, pkt.seq, out);
        }
        if receiver.take_completion() {
            Notice::COMPLETED
        } else {
            Notice::NONE
        }
    }

    /// An ACK (or a client's SYN) reaches the sender.
    #[inline]
    fn on_ack(&mut self, now: Time, pkt: Packet, out: &mut Vec<Packet>) -> Notice {
        if pkt.flags & flags::SYN != 0 {
            // A client's request: the server's application decides what to serve.
            return Notice::REQUEST | Notice::TRACE;
        }
        // An ACK with the SACK option: its blocks wait in the receiver's side channel
        // (tcp::sack::option). Taking them also discards those of ACKs lost on the way, of this
        // connection or an earlier one.
        let sack = (pkt.sack != 0).then(|| self.receiver.sack_option(pkt.sack));
        let sender = &mut self.sender;
        if pkt.conn == sender.conn() {
            let una_before = sender.snd_una;
            match &sack {
                Some(opt) => {
                    let blocks = opt.as_ref().map_or(&[][..], |o| o.blocks());
                    sender.on_sack_ack(now, pkt.seq, blocks, out);
                }
                None => sender.on_ack(now, pkt.seq, out),
            }
            if sender.cfg.ecn {
                // RFC 3168 §6.1.2, apart from the ACK processing: a window reduction, no
                // resend; DCTCP also counts what each ACK acknowledged (RFC 8257 §3.3).
                sender.on_ecn_ack(now, una_before, pkt.flags & flags::ECE != 0);
            }
        }
        Notice::TRACE
    }
}

impl Endpoint for TcpFlow {
    const TIMERS: &'static [Side] = &[Side::Source, Side::Source, Side::Sink];

    fn start(&mut self, now: Time, out: &mut Vec<Packet>) -> Notice {
        self.sender.start(now, out);
        Notice::TRACE
    }

    #[inline]
    fn on_packet(&mut self, now: Time, pkt: Packet, out: &mut Vec<Packet>) -> Notice {
        match pkt.kind {
            Kind::Ack => self.on_ack(now, pkt, out),
            _ => self.on_data(now, pkt, out),
        }
    }

    #[inline]
    fn on_timer(&mut self, now: Time, slot: usize, out: &mut Vec<Packet>) -> Notice {
        match slot {
            TcpFlow::RTO => {
                self.sender.check_timer(now, out);
                Notice::TRACE
            }
            TcpFlow::PACE => {
                self.sender.on_pace(now, out);
                Notice::NONE
            }
            _ => {
                self.receiver.check_timer(now, out);
                Notice::NONE
            }
        }
    }

    #[inline]
    fn deadline(&self, slot: usize) -> Option<Time> {
        match slot {
            TcpFlow::RTO => self.sender.rto_deadline(),
            TcpFlow::PACE => self.sender.pace_deadline(),
            _ => self.receiver.timer_deadline(),
        }
    }

    fn facts(&self) -> Facts {
        Facts {
            route: self.sender.route(),
            answer_route: Some(self.receiver.route()),
            answers_at_once: self.receiver.acks_immediately(),
            // A paced sender may run ahead too: before an ACK it releases what its pacer let
            // go earlier, and its pacing events find nothing left to do.
            runs_ahead: true,
        }
    }

    fn set_window(&mut self, window: MeasuredWindow) {
        // The sender's is in its shared settings, set where the flows are built.
        debug_assert_eq!(self.sender.cfg.measured, window, "a sender counts in the run's window");
        self.receiver.set_window(window);
    }

    /// The sender's boxed state and the receiver's SACK blocks: an arriving segment's ACK is
    /// handled at once when the sender runs ahead, and that state is the first it reads.
    #[inline]
    fn prefetch(&self) {
        self.sender.prefetch();
        self.receiver.prefetch();
    }

    fn trace_sample(&self) -> Option<TraceSample> {
        Some(self.sender.trace_sample())
    }
}
