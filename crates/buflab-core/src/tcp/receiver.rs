//! The TCP receiver: cumulative ACKs, out-of-order buffering, optional delayed ACKs, and for
//! SACK flows the SACK option (RFC 2018; see [`super::sack::option`]).
//!
//! Read first: [`super`] (the segment model) and RFC 5681 §4.2, RFC 1122 §4.2.3.2. Owns the receive
//! sequence state, delayed ACKs and the SACK blocks it reports; must not know the sender's state
//! (what crosses is ACKs and the SACK side channel) or the event loop (its timer is a deadline
//! [`super::flow`] states).
//!
//! The application reads data as soon as it is in order, so the advertised window is always
//! the configured `max_window` and is not carried in ACKs.
//!
//! ECN (RFC 3168 §6.1.3): once a data segment arrives with CE, every ACK carries ECE until a
//! segment arrives with CWR (one that has both sets ECE again). The receiver needs no setting
//! of its own: only an ECN-capable sender's packets can be marked. With delayed ACKs a CE
//! segment is acknowledged at once, as Linux does (quick-ACK on CE), so the congestion signal
//! is not held back for up to the delayed-ACK timeout; RFC 3168 does not require it.

use crate::monitor::MeasuredWindow;
use crate::packet::{flags, Kind, Packet};
use crate::tcp::ack_pacer::AckPacer;
use crate::tcp::quickack::QuickAck;
use crate::tcp::sack::option::{SackBlock, SackOption, SackReporter};
use crate::tcp::HEADER_BYTES;
use crate::units::Time;

/// Counters over the whole run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReceiverStats {
    /// Data segments that arrived (fresh, duplicate or out of order).
    pub arrivals: u64,
    /// Segments delivered in order to the application (each exactly once).
    pub delivered: u64,
    /// Segments that arrived again after they had been received.
    pub duplicates: u64,
    pub acks_sent: u64,
}

#[derive(Clone, Debug)]
pub struct TcpReceiver {
    flow: u32,
    /// Route of the ACKs back to the sender.
    route: u32,
    /// Next segment expected (the cumulative ACK).
    pub rcv_nxt: u32,
    /// Bitmap of segments received beyond `rcv_nxt`, indexed by `seq & mask` (allocated on the
    /// first out-of-order arrival; sized to the advertised window, which bounds how far ahead
    /// of `rcv_nxt` the sender may be).
    ooo: Vec<u64>,
    mask: u32,
    ooo_count: u32,
    window: u32,
    delayed: bool,
    delay: Time,
    /// In-order segments received but not yet acknowledged (delayed ACKs).
    unacked: u32,
    /// When the delayed ACK is due, if one is held.
    delack_deadline: Option<Time>,
    pub stats: ReceiverStats,
    /// Payload bytes delivered in order inside the measured window (counted by event time,
    /// since a receiver may run ahead of the global clock; see `Sim::forward`).
    pub window_delivered_bytes: u64,
    /// Payload bytes of a full segment, and of the last segment of the current transfer.
    mss: u32,
    last_payload: u32,
    measured: MeasuredWindow,
    /// Connection number (finite transfers).
    conn: u16,
    /// Segments of the current transfer (u32::MAX: a long-lived flow).
    expect: u32,
    /// RFC 3168 §6.1.3: a CE segment arrived and no CWR since: ACKs carry ECE.
    echo_ce: bool,
    /// Acknowledge the segment being handled at once even with delayed ACKs: it was CE, or,
    /// for a Linux receiver, it carried PSH.
    ack_now: bool,
    /// DCTCP's receiver (RFC 8257 §3.2): ECE follows every change of CE, CWR is not waited for.
    echo_each_change: bool,
    /// The current transfer has been received in full (reported once by `take_completion`).
    completed: bool,
    completion_pending: bool,
    /// SACK flows only: the blocks to report and the side channel that carries them (boxed,
    /// so that other flows' receivers stay as small as before).
    sack: Option<Box<SackReporter>>,
    /// ACK pacing (see [`super::ack_pacer`]), if on (boxed, like `sack`).
    ack_pacer: Option<Box<AckPacer>>,
    /// Linux's delayed and quick ACKs (see [`super::quickack`]), for a `linux` flow with
    /// delayed ACKs; None: RFC 1122's rule with the fixed `delay`.
    quick: Option<QuickAck>,
}

impl TcpReceiver {
    pub fn new(flow: u32, route: u32, mss: u32, window: u32, delayed: bool, delay: Time) -> TcpReceiver {
        TcpReceiver {
            flow,
            route,
            rcv_nxt: 0,
            ooo: Vec::new(),
            mask: 0,
            ooo_count: 0,
            window,
            delayed,
            delay,
            unacked: 0,
            delack_deadline: None,
            stats: ReceiverStats::default(),
            window_delivered_bytes: 0,
            mss,
            last_payload: mss,
            measured: MeasuredWindow::WHOLE_RUN,
            conn: 0,
            expect: u32::MAX,
            echo_ce: false,
            ack_now: false,
            echo_each_change: false,
            completed: false,
            completion_pending: false,
            sack: None,
            ack_pacer: None,
            quick: None,
        }
    }

    /// Acknowledges as a Linux receiver does (see [`super::quickack`]): the delayed-ACK timeout
    /// given at construction is ATO's floor, `rtt` the path's round-trip time (what its
    /// handshake measured). Only with delayed ACKs on.
    pub fn set_linux_acks(&mut self, rtt: Time) {
        if self.delayed {
            self.quick = Some(QuickAck::new(self.window, self.delay, rtt));
        }
    }

    /// Paces its ACKs over `rtt`, the path's two-way propagation delay (see
    /// [`super::ack_pacer`]).
    pub fn set_ack_pacing(&mut self, rtt: Time) {
        self.ack_pacer = Some(Box::new(AckPacer::new(rtt)));
    }

    /// Makes it a SACK receiver: its ACKs carry the SACK option (RFC 2018).
    pub fn set_sack(&mut self) {
        self.sack = Some(Box::default());
    }

    /// The SACK option carried by the ACK with serial `serial` (`Packet::sack`), which has
    /// just reached the sender; options of earlier ACKs lost on the way are discarded.
    pub fn sack_option(&mut self, serial: u16) -> Option<SackOption> {
        self.sack.as_mut().and_then(|s| s.channel.take(serial))
    }

    /// The connection it is receiving now.
    pub fn conn(&self) -> u16 {
        self.conn
    }

    /// Opens connection `conn` for a transfer of `bytes`: state of the previous
    /// connection is dropped (the run's counters stay), and the request goes out, a 40 B
    /// SYN on the ACK route. With a handshake the server answers with a SYN-ACK; without,
    /// it starts sending data when the request arrives.
    pub fn connect(&mut self, now: Time, conn: u16, bytes: u64, out: &mut Vec<Packet>) {
        self.ooo.iter_mut().for_each(|w| *w = 0);
        (self.ooo_count, self.rcv_nxt, self.unacked) = (0, 0, 0);
        let mss = self.mss as u64;
        let segments = bytes.max(1).div_ceil(mss);
        self.expect = segments.min(u32::MAX as u64 - 1) as u32;
        self.last_payload = (bytes.max(1) - (segments - 1) * mss) as u32;
        (self.delack_deadline, self.conn) = (None, conn);
        (self.completed, self.completion_pending) = (false, false);
        self.echo_ce = false;
        if let Some(s) = &mut self.sack {
            s.reset();
        }
        if let Some(q) = &mut self.quick {
            q.reset();
        }
        self.send(now, flags::SYN, out);
    }

    /// The server's SYN-ACK arrives: acknowledge it (the third packet of the handshake).
    pub fn on_syn_ack(&mut self, now: Time, out: &mut Vec<Packet>) {
        self.ack(now, out);
    }

    /// True once, right after the last segment of the transfer arrived.
    pub fn take_completion(&mut self) -> bool {
        std::mem::take(&mut self.completion_pending)
    }

    /// Starts loading the SACK blocks it reports, which every ACK it sends reads (a hint: no
    /// effect on results).
    #[inline]
    pub fn prefetch(&self) {
        if let Some(s) = self.sack.as_deref() {
            crate::prefetch::prefetch(s);
        }
    }

    /// Sets the measured window for `window_delivered`.
    pub fn set_window(&mut self, window: MeasuredWindow) {
        self.measured = window;
    }

    /// Whether it answers each segment at once (no delayed-ACK timer, no ACK pacing). A
    /// client also sends its user's requests (`sim/requests.rs` runs them ahead).
    pub fn acks_immediately(&self) -> bool {
        !self.delayed && self.ack_pacer.is_none()
    }

    /// When its timer must next run `check_timer`: the delayed-ACK deadline or the ACK
    /// pacer's next release, whichever comes first.
    pub fn timer_deadline(&self) -> Option<Time> {
        let paced = self.ack_pacer.as_ref().and_then(|p| p.deadline());
        match (self.delack_deadline, paced) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// The route its ACKs take.
    pub fn route(&self) -> u32 {
        self.route
    }

    fn bit(&self, seq: u32) -> (usize, u64) {
        let i = seq & self.mask;
        ((i / 64) as usize, 1u64 << (i % 64))
    }

    fn ack(&mut self, now: Time, out: &mut Vec<Packet>) {
        if let Some(q) = &mut self.quick {
            q.on_ack_sent();
        }
        self.unacked = 0;
        self.delack_deadline = None;
        self.ack_now = false;
        self.stats.acks_sent += 1;
        self.send(now, if self.echo_ce { flags::ECE } else { 0 }, out);
    }

    /// The flags of a data segment about to be handled by `on_data`: PSH (for a Linux
    /// receiver) and ECN's.
    pub fn on_flags(&mut self, now: Time, f: u16, out: &mut Vec<Packet>) {
        // ECN first: DCTCP's receiver acknowledges what it holds at a change of CE, before
        // this segment, which clears the mark below.
        self.on_ecn(now, f, out);
        if f & flags::PSH != 0 && self.quick.is_some() {
            // Linux marks the pending ACK "pushed" on a full-sized PSH segment
            // (`tcp_measure_rcv_mss`, ICSK_ACK_PUSHED), and sends it as soon as the
            // application has read all it holds (`tcp_cleanup_rbuf`); the sink here reads at
            // once. See [`super::quickack`].
            self.ack_now = true;
        }
    }

    /// The ECN flags of a data segment (RFC 3168 §6.1.3): CWR stops the echo, CE (re)starts
    /// it — in that order, so that a segment with both keeps ECE on.
    fn on_ecn(&mut self, now: Time, f: u16, out: &mut Vec<Packet>) {
        if self.echo_each_change {
            return self.on_ecn_dctcp(now, f, out);
        }
        if f & flags::CWR != 0 {
            self.echo_ce = false;
        }
        if f & flags::CE != 0 {
            // Linux: the first CE (until CWR) gives two quick ACKs (`tcp_ecn_check_ce`).
            if let (Some(q), false) = (&mut self.quick, self.echo_ce) {
                q.enter_with_floor(2);
            }
            self.echo_ce = true;
            self.ack_now = true;
        }
    }

    /// RFC 8257 §3.2, DCTCP's receiver: ECE tells the CE state of the latest segment, exactly
    /// (no latching until CWR). When it changes, the segments held for a delayed ACK are
    /// acknowledged at once with the old state, and the new segment is acknowledged at once
    /// with the new one, so that the sender can count the marked bytes (Linux's
    /// `dctcp_ece_ack_update`). Quick-ACK mode is not entered: Linux's DCTCP does not.
    fn on_ecn_dctcp(&mut self, now: Time, f: u16, out: &mut Vec<Packet>) {
        let ce = f & flags::CE != 0;
        if ce == self.echo_ce {
            return;
        }
        if self.unacked > 0 {
            self.ack(now, out);
        }
        self.echo_ce = ce;
        self.ack_now = true;
    }

    /// Echoes CE as DCTCP's receiver does (RFC 8257 §3.2, see `on_ecn_dctcp`): the sender's
    /// controller is DCTCP.
    pub fn set_dctcp_echo(&mut self) {
        self.echo_each_change = true;
    }

    /// Whether its ACKs carry ECE now.
    pub fn echoes_ce(&self) -> bool {
        self.echo_ce
    }

    /// A 40 B packet on the ACK route carrying the cumulative ACK; on a SACK flow an ACK also
    /// carries the SACK option whenever data is held above the cumulative ACK, and grows by it.
    fn send(&mut self, now: Time, f: u16, out: &mut Vec<Packet>) {
        let (option, sack) = match &mut self.sack {
            // Every ACK of data carries it, an ECN-Echo one too; a connection request does not.
            Some(s) if f & flags::SYN == 0 => s.attach(self.rcv_nxt),
            _ => (0, 0),
        };
        let packet = Packet {
            sent_at: now,
            flow: self.flow,
            seq: self.rcv_nxt,
            size: HEADER_BYTES + option,
            route: self.route,
            hop: 0,
            kind: Kind::Ack,
            conn: self.conn,
            sack,
            flags: f,
            stamp: Time::ZERO,
        };
        match &mut self.ack_pacer {
            // A connection request is not an ACK of data: it goes at once.
            Some(pacer) if f & flags::SYN == 0 => out.extend(pacer.offer(now, packet)),
            _ => out.push(packet),
        }
    }

    /// A data segment arrives. Returns the number of segments newly delivered in order.
    pub fn on_data(&mut self, now: Time, seq: u32, out: &mut Vec<Packet>) -> u32 {
        self.stats.arrivals += 1;
        if seq < self.rcv_nxt {
            // Already have it: RFC 5681 §4.2, answer at once (a duplicate ACK); Linux also
            // enters quick-ACK mode (`tcp_data_queue`, "a retransmit").
            self.stats.duplicates += 1;
            if let Some(q) = &mut self.quick {
                q.enter_with_floor(super::quickack::MAX_QUICKACKS);
            }
            self.ack(now, out);
            return 0;
        }
        if seq > self.rcv_nxt {
            self.store_out_of_order(seq);
            if self.sack.is_some() {
                self.note_sack_arrival(seq);
            }
            // RFC 5681 §4.2: an out-of-order segment SHOULD be acknowledged immediately.
            self.ack(now, out);
            return 0;
        }
        let filled_gap = self.ooo_count > 0;
        let mut delivered = 1;
        self.rcv_nxt += 1;
        while self.ooo_count > 0 {
            let (w, b) = self.bit(self.rcv_nxt);
            if self.ooo[w] & b == 0 {
                break;
            }
            self.ooo[w] &= !b;
            self.ooo_count -= 1;
            self.rcv_nxt += 1;
            delivered += 1;
        }
        self.stats.delivered += delivered as u64;
        if self.measured.contains(now) {
            let mut bytes = delivered as u64 * self.mss as u64;
            if self.rcv_nxt >= self.expect {
                // The transfer's last segment, just delivered, is short.
                bytes -= (self.mss - self.last_payload) as u64;
            }
            self.window_delivered_bytes += bytes;
        }
        if self.rcv_nxt >= self.expect && !self.completed {
            (self.completed, self.completion_pending) = (true, true);
        }
        if let Some(q) = &mut self.quick {
            q.on_data(now);
            self.unacked += 1;
            // `__tcp_ack_snd_check`: more than one full segment unacknowledged, quick-ACK mode,
            // or a gap filled (RFC 5681 §4.2); `tcp_cleanup_rbuf`: a pushed segment (or CE,
            // `ack_now`); otherwise the adaptive delayed-ACK timer.
            if self.unacked >= 2 || q.in_quick_mode() || filled_gap || self.ack_now {
                self.ack(now, out);
            } else if self.delack_deadline.is_none() {
                self.delack_deadline = Some(now + q.delay());
            }
        } else if !self.delayed || filled_gap || self.ack_now {
            // RFC 5681 §4.2: a segment that fills a gap is acknowledged immediately; so is a
            // CE segment (module doc).
            self.ack(now, out);
        } else {
            // RFC 1122 §4.2.3.2 / RFC 5681 §4.2: ACK at least every second full-sized
            // segment, and within the delayed-ACK timeout (< 500 ms).
            self.unacked += 1;
            if self.unacked >= 2 {
                self.ack(now, out);
            } else if self.delack_deadline.is_none() {
                self.delack_deadline = Some(now + self.delay);
            }
        }
        delivered
    }

    fn store_out_of_order(&mut self, seq: u32) {
        if self.ooo.is_empty() {
            let cap = (self.window as u64 + 1).next_power_of_two().max(64);
            self.ooo = vec![0; (cap / 64) as usize];
            self.mask = (cap - 1) as u32;
        }
        if seq - self.rcv_nxt > self.mask {
            // Beyond the advertised window: a sender bug, but never corrupt the bitmap.
            debug_assert!(false, "segment {seq} beyond window at {}", self.rcv_nxt);
            return;
        }
        let (w, b) = self.bit(seq);
        if self.ooo[w] & b != 0 {
            self.stats.duplicates += 1;
        } else {
            self.ooo[w] |= b;
            self.ooo_count += 1;
        }
    }

    /// RFC 2018 §4: the ACK for out-of-order segment `seq` reports first the block containing
    /// it: the maximal run of held segments around it, read from the bitmap a word at a time.
    fn note_sack_arrival(&mut self, seq: u32) {
        let (w, b) = self.bit(seq);
        if self.ooo.is_empty() || self.ooo[w] & b == 0 {
            return; // not stored (beyond the window)
        }
        let run = SackBlock::new(self.run_start(seq), self.run_end(seq));
        if let Some(s) = &mut self.sack {
            s.on_arrival(run);
        }
    }

    /// One past the last segment of the run of held segments through held segment `seq`. The
    /// bitmap is a ring of whole words, so no word straddles its wrap; the scan ends at the
    /// latest at `rcv_nxt` + ring size, which aliases the never-held `rcv_nxt`.
    fn run_end(&self, seq: u32) -> u32 {
        let mut s = seq;
        loop {
            let i = s & self.mask;
            let (w, off) = ((i / 64) as usize, i % 64);
            let ones = (self.ooo[w] >> off).trailing_ones();
            if ones < 64 - off {
                return s + ones;
            }
            s += 64 - off;
        }
    }

    /// The first segment of the run of held segments through held segment `seq` (the scan stops
    /// at the latest just above `rcv_nxt`, which is never held).
    fn run_start(&self, seq: u32) -> u32 {
        let mut s = seq;
        loop {
            let i = s & self.mask;
            let (w, off) = ((i / 64) as usize, i % 64);
            let ones = (self.ooo[w] << (63 - off)).leading_ones();
            if ones <= off {
                return s + 1 - ones;
            }
            s -= off + 1;
        }
    }

    /// Segments held out of order, waiting for a gap to fill.
    pub fn out_of_order(&self) -> u32 {
        self.ooo_count
    }

    /// Handles a (lazy) timer event at `now`: a delayed ACK due, then the paced ACKs due.
    pub fn check_timer(&mut self, now: Time, out: &mut Vec<Packet>) {
        if let Some(d) = self.delack_deadline {
            if d <= now && self.unacked > 0 {
                if let Some(q) = &mut self.quick {
                    q.on_timer();
                }
                self.ack(now, out);
            }
        }
        if let Some(pacer) = &mut self.ack_pacer {
            out.extend(pacer.take_due(now));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn acks(out: &mut Vec<Packet>) -> Vec<u32> {
        out.drain(..).map(|p| p.seq).collect()
    }

    #[test]
    fn cumulative_acks_and_out_of_order_buffering() {
        let mut r = TcpReceiver::new(0, 1, 960, 100, false, Time::from_ms(100));
        let mut out = Vec::new();
        let t = Time::ZERO;
        r.on_data(t, 0, &mut out);
        r.on_data(t, 2, &mut out); // hole at 1
        r.on_data(t, 3, &mut out);
        assert_eq!(acks(&mut out), vec![1, 1, 1]);
        assert_eq!(r.on_data(t, 1, &mut out), 3); // fills the hole: 1, 2, 3 delivered
        assert_eq!(acks(&mut out), vec![4]);
        r.on_data(t, 2, &mut out); // duplicate
        assert_eq!(acks(&mut out), vec![4]);
        assert_eq!(r.stats.delivered, 4);
        assert_eq!(r.stats.duplicates, 1);
    }

    #[test]
    fn delayed_ack_every_second_segment_or_on_timer() {
        let mut r = TcpReceiver::new(0, 1, 960, 100, true, Time::from_ms(100));
        let mut out = Vec::new();
        r.on_data(Time::ZERO, 0, &mut out);
        assert!(out.is_empty());
        assert_eq!(r.delack_deadline, Some(Time::from_ms(100)));
        r.on_data(Time::from_ms(1), 1, &mut out);
        assert_eq!(acks(&mut out), vec![2]);
        assert_eq!(r.delack_deadline, None);
        // A lone segment is acknowledged when the timer expires, not before.
        r.on_data(Time::from_ms(10), 2, &mut out);
        r.check_timer(Time::from_ms(50), &mut out);
        assert!(out.is_empty());
        r.check_timer(Time::from_ms(110), &mut out);
        assert_eq!(acks(&mut out), vec![3]);
        // Out-of-order data is acknowledged at once even with delayed ACKs.
        r.on_data(Time::from_ms(120), 5, &mut out);
        assert_eq!(acks(&mut out), vec![3]);
    }

    #[test]
    fn a_linux_receiver_acknowledges_a_pushed_segment_at_once() {
        // Linux (`tcp_measure_rcv_mss`, `tcp_cleanup_rbuf`; measured on 6.18: 94 % of its
        // one-segment ACKs sent within 0.3 ms of the ACK before acknowledge a PSH segment): a
        // lone full-sized segment with PSH is acknowledged as soon as the application has
        // read it; without PSH it waits for the next segment or the delayed-ACK timer. The
        // RFC-era receiver ignores PSH.
        let mut r = TcpReceiver::new(0, 1, 960, 100, true, Time::from_ms(40));
        r.set_linux_acks(Time::from_ms(100));
        let mut out = Vec::new();
        // The 16 quick ACKs of the connection's start, one segment each.
        for seq in 0..16 {
            data(&mut r, Time::from_ms(seq as u64), seq, 0, &mut out);
        }
        assert_eq!(acks(&mut out).len(), 16);
        data(&mut r, Time::from_ms(20), 16, 0, &mut out);
        assert!(out.is_empty(), "a lone segment waits");
        data(&mut r, Time::from_ms(21), 17, flags::PSH, &mut out);
        assert_eq!(acks(&mut out), vec![18]);
        data(&mut r, Time::from_ms(22), 18, flags::PSH, &mut out);
        assert_eq!(acks(&mut out), vec![19], "a lone pushed segment goes at once");
        data(&mut r, Time::from_ms(23), 19, 0, &mut out);
        assert!(out.is_empty());

        let mut rfc = TcpReceiver::new(0, 1, 960, 100, true, Time::from_ms(40));
        data(&mut rfc, Time::ZERO, 0, flags::PSH, &mut out);
        assert!(out.is_empty(), "RFC 1122's receiver delays it");
    }

    /// (ACK number, ECE) of each ACK sent.
    fn echoes(out: &mut Vec<Packet>) -> Vec<(u32, bool)> {
        out.drain(..).map(|p| (p.seq, p.flags & flags::ECE != 0)).collect()
    }

    /// A data segment with ECN flags `f`, handed over as the simulator does.
    fn data(r: &mut TcpReceiver, t: Time, seq: u32, f: u16, out: &mut Vec<Packet>) {
        r.on_flags(t, f, out);
        r.on_data(t, seq, out);
    }

    #[test]
    fn ce_is_echoed_on_every_ack_until_cwr() {
        let mut r = TcpReceiver::new(0, 1, 960, 100, false, Time::from_ms(100));
        let mut out = Vec::new();
        let t = Time::ZERO;
        let (ect, ce, cwr) = (flags::ECT, flags::ECT | flags::CE, flags::ECT | flags::CWR);
        data(&mut r, t, 0, ect, &mut out);
        data(&mut r, t, 1, ce, &mut out);
        // Unmarked segments after the CE one, in order or not, still get ECE.
        data(&mut r, t, 2, ect, &mut out);
        data(&mut r, t, 4, ect, &mut out);
        assert_eq!(echoes(&mut out), vec![(1, false), (2, true), (3, true), (3, true)]);
        // CWR stops the echo, from the ACK of that very segment on.
        data(&mut r, t, 3, cwr, &mut out);
        data(&mut r, t, 5, ect, &mut out);
        assert_eq!(echoes(&mut out), vec![(5, false), (6, false)]);
        // A segment with both CWR and CE starts a new echo.
        data(&mut r, t, 6, cwr | flags::CE, &mut out);
        data(&mut r, t, 7, ect, &mut out);
        assert_eq!(echoes(&mut out), vec![(7, true), (8, true)]);
    }

    #[test]
    fn a_ce_segment_is_acknowledged_at_once_with_delayed_acks() {
        let mut r = TcpReceiver::new(0, 1, 960, 100, true, Time::from_ms(100));
        let mut out = Vec::new();
        data(&mut r, Time::ZERO, 0, flags::ECT, &mut out);
        assert!(out.is_empty(), "the first of two segments waits");
        r.on_data(Time::from_ms(1), 1, &mut out);
        assert_eq!(echoes(&mut out), vec![(2, false)]);
        // A lone CE segment does not wait for a second one or for the timer.
        data(&mut r, Time::from_ms(2), 2, flags::ECT | flags::CE, &mut out);
        assert_eq!(echoes(&mut out), vec![(3, true)]);
        assert_eq!(r.delack_deadline, None);
        // The next, unmarked segment is delayed again, and its ACK still echoes.
        data(&mut r, Time::from_ms(3), 3, flags::ECT, &mut out);
        assert!(out.is_empty());
        r.check_timer(Time::from_ms(103), &mut out);
        assert_eq!(echoes(&mut out), vec![(4, true)]);
    }

    /// RFC 8257 §3.2 with delayed ACKs: ECE is exactly the latest segment's CE; at a change the
    /// segments held are acknowledged at once with the old state, the new one at once with the
    /// new; between changes ACKs are delayed as usual. CWR changes nothing.
    #[test]
    fn dctcp_echo_follows_every_ce_change_exactly() {
        let mut r = TcpReceiver::new(0, 1, 960, 100, true, Time::from_ms(100));
        r.set_dctcp_echo();
        let mut out = Vec::new();
        let (ect, ce) = (flags::ECT, flags::ECT | flags::CE);
        data(&mut r, Time::ZERO, 0, ect, &mut out);
        assert!(out.is_empty(), "held for a delayed ACK");
        data(&mut r, Time::from_ms(1), 1, ce, &mut out);
        assert_eq!(echoes(&mut out), vec![(1, false), (2, true)]);
        data(&mut r, Time::from_ms(2), 2, ce, &mut out);
        assert!(out.is_empty(), "no change: delayed again");
        data(&mut r, Time::from_ms(3), 3, ce | flags::CWR, &mut out);
        assert_eq!(echoes(&mut out), vec![(4, true)], "every second segment, still marked");
        data(&mut r, Time::from_ms(4), 4, ect, &mut out);
        assert_eq!(echoes(&mut out), vec![(5, false)], "nothing held: one ACK, at once");
        data(&mut r, Time::from_ms(5), 5, ect, &mut out);
        r.check_timer(Time::from_ms(105), &mut out);
        assert_eq!(echoes(&mut out), vec![(6, false)]);
    }

    // ---- Delayed ACKs: RFC 1122 §4.2.3.2, RFC 5681 §4.2 ----

    fn delayed() -> TcpReceiver {
        TcpReceiver::new(0, 1, 960, 100, true, Time::from_ms(100))
    }

    #[test]
    fn delayed_ack_timer_runs_from_the_first_unacknowledged_segment() {
        // The ACK is due within the timeout of the first segment it would cover, not of the
        // last: 500 ms (RFC 1122) bounds the delay of every segment.
        let mut r = delayed();
        let mut out = Vec::new();
        r.on_data(Time::from_ms(30), 0, &mut out);
        assert_eq!(r.delack_deadline, Some(Time::from_ms(130)));
        r.check_timer(Time::from_ms(129), &mut out);
        assert!(out.is_empty());
        r.check_timer(Time::from_ms(130), &mut out);
        assert_eq!(acks(&mut out), vec![1]);
        assert_eq!((r.delack_deadline, r.stats.acks_sent), (None, 1));
        // Nothing unacknowledged: a timer event then sends nothing.
        r.check_timer(Time::from_ms(300), &mut out);
        assert!(out.is_empty());
    }

    #[test]
    fn delayed_ack_answers_out_of_order_and_gap_filling_segments_at_once() {
        let mut r = delayed();
        let mut out = Vec::new();
        let t = Time::ZERO;
        r.on_data(t, 0, &mut out); // held back
        assert!(out.is_empty());
        // RFC 5681 §4.2: an out-of-order segment is acknowledged at once (a duplicate ACK),
        // and that ACK covers the held-back segment, so its timer stops.
        r.on_data(t, 2, &mut out);
        r.on_data(t, 3, &mut out);
        assert_eq!(acks(&mut out), vec![1, 1]);
        assert_eq!(r.delack_deadline, None);
        // A segment filling the whole gap: at once.
        r.on_data(t, 1, &mut out);
        assert_eq!(acks(&mut out), vec![4]);
        // Back in order: every second segment again.
        r.on_data(t, 4, &mut out);
        assert!(out.is_empty());
        r.on_data(t, 5, &mut out);
        assert_eq!(acks(&mut out), vec![6]);
        // A segment filling part of a gap (6 of 6..8, with 8 and 9 held): at once.
        r.on_data(t, 8, &mut out);
        r.on_data(t, 9, &mut out);
        r.on_data(t, 6, &mut out);
        assert_eq!(acks(&mut out), vec![6, 6, 7]);
        r.on_data(t, 7, &mut out);
        assert_eq!(acks(&mut out), vec![10]);
        // A duplicate of data already held: at once, without waiting for a second segment.
        r.on_data(t, 10, &mut out);
        assert!(out.is_empty());
        r.on_data(t, 3, &mut out);
        assert_eq!(acks(&mut out), vec![11]);
        assert_eq!(r.delack_deadline, None);
    }

    // ---- SACK: RFC 2018 ----

    fn sack_receiver(window: u32) -> TcpReceiver {
        let mut r = TcpReceiver::new(0, 1, 960, window, false, Time::from_ms(100));
        r.set_sack();
        r
    }

    /// The ACK it sent for one arrival: (cumulative ACK, blocks, size on the wire).
    fn sack_ack(r: &mut TcpReceiver, seq: u32) -> (u32, Vec<(u32, u32)>, u32) {
        let mut out = Vec::new();
        r.on_data(Time::ZERO, seq, &mut out);
        assert_eq!(out.len(), 1);
        let a = out[0];
        let blocks = match a.sack {
            0 => Vec::new(),
            serial => r.sack_option(serial).unwrap().blocks().iter().map(|b| (b.start, b.end)).collect(),
        };
        (a.seq, blocks, a.size)
    }

    #[test]
    fn sack_blocks_follow_rfc2018_order_and_the_ack_grows_by_the_option() {
        let mut r = sack_receiver(100);
        // Each row: arrival → (cumulative ACK, blocks, ACK size). 40 B plus 12, 20 or 28 B of
        // option for 1, 2 or 3 blocks. The first block holds the segment that triggered the
        // ACK (RFC 2018 §4), then the most recently reported others, never more than 3.
        let script = [
            (0, (1, vec![], 40)),
            (2, (1, vec![(2, 3)], 52)),
            (4, (1, vec![(4, 5), (2, 3)], 60)),
            (6, (1, vec![(6, 7), (4, 5), (2, 3)], 68)),
            (8, (1, vec![(8, 9), (6, 7), (4, 5)], 68)),
            // 5 joins 4..5 and 6..7: their run goes first; 2..3, left out of the last ACK,
            // is repeated from the receiver's memory of four blocks.
            (5, (1, vec![(4, 7), (8, 9), (2, 3)], 68)),
            // 1 advances the cumulative ACK over 1..3: no block holds it, the others follow.
            (1, (3, vec![(4, 7), (8, 9)], 60)),
            (3, (7, vec![(8, 9)], 52)),
            (7, (9, vec![], 40)),
        ];
        for (seq, want) in script {
            assert_eq!(sack_ack(&mut r, seq), want, "arrival of {seq}");
        }
    }

    #[test]
    fn sack_blocks_are_exact_across_bitmap_words_and_its_wrap() {
        // A window of 100 gives a ring of 128 segments (two 64-bit words). With 0..121
        // delivered, runs around 122..241 cross the ring's wrap (at 128 and 256) and the word
        // boundary between (at 192).
        let mut r = sack_receiver(100);
        for seq in 0..121 {
            sack_ack(&mut r, seq);
        }
        for seq in 122..=200 {
            assert_eq!(sack_ack(&mut r, seq).1[0], (122, seq + 1));
        }
        assert_eq!(sack_ack(&mut r, 240).1, vec![(240, 241), (122, 201)]);
        for seq in (202..240).rev() {
            assert_eq!(sack_ack(&mut r, seq).1[0], (seq, 241));
        }
        assert_eq!(sack_ack(&mut r, 201).1, vec![(122, 241)]);
        assert_eq!(sack_ack(&mut r, 121), (241, vec![], 40));
    }

    #[test]
    fn a_dropped_ack_does_not_desynchronize_the_blocks() {
        let mut r = sack_receiver(100);
        let mut out = Vec::new();
        for seq in [0, 2, 4, 6] {
            r.on_data(Time::ZERO, seq, &mut out);
        }
        let serials: Vec<u16> = out.iter().map(|a| a.sack).collect();
        assert_eq!(serials, vec![0, 1, 2, 3]); // no blocks, no serial
                                               // The ACK for 4 (serial 2) is lost: the ACK for 6 still reads its own blocks.
        let blocks = |o: Option<SackOption>| o.map(|o| o.blocks().to_vec());
        let b = SackBlock::new;
        assert_eq!(blocks(r.sack_option(1)), Some(vec![b(2, 3)]));
        assert_eq!(blocks(r.sack_option(3)), Some(vec![b(6, 7), b(4, 5), b(2, 3)]));
        // The lost ACK's entry went with it; nothing is left to mismatch a later ACK.
        assert_eq!(blocks(r.sack_option(2)), None);
        out.clear();
        r.on_data(Time::ZERO, 9, &mut out);
        assert_eq!(blocks(r.sack_option(out[0].sack)), Some(vec![b(9, 10), b(6, 7), b(4, 5)]));
    }

    #[test]
    fn a_new_connection_keeps_the_options_of_acks_in_flight() {
        // A closed-loop user's next request can overtake nothing, so the old connection's
        // ACKs still on their way reach the sender first and must find their blocks, whether
        // the sender handles them before or after the new connection opens (computing ahead).
        let mut r = sack_receiver(100);
        let mut out = Vec::new();
        r.on_data(Time::ZERO, 2, &mut out);
        let old = out[0].sack;
        r.connect(Time::ZERO, 1, 10_000, &mut out);
        assert_eq!(r.sack_option(old).map(|o| o.blocks().to_vec()), Some(vec![SackBlock::new(2, 3)]));
        // Nothing of the old connection is reported on the new one.
        assert_eq!(sack_ack(&mut r, 1), (0, vec![(1, 2)], 52));
    }

    #[test]
    fn receivers_without_sack_send_plain_acks() {
        let mut r = TcpReceiver::new(0, 1, 960, 100, false, Time::from_ms(100));
        let mut out = Vec::new();
        r.on_data(Time::ZERO, 3, &mut out);
        assert_eq!((out[0].size, out[0].sack), (HEADER_BYTES, 0));
    }
}
