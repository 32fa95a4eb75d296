//! The TCP receiver: cumulative ACKs, out-of-order buffering, optional delayed ACKs.
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
    pub delack_deadline: Option<Time>,
    pub delack_event_at: Option<Time>,
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
    /// A client that opens connections itself (sends requests on its own timer).
    initiates: bool,
    /// RFC 3168 §6.1.3: a CE segment arrived and no CWR since: ACKs carry ECE.
    echo_ce: bool,
    /// The segment being handled was CE: acknowledge it at once even with delayed ACKs.
    ack_now: bool,
    /// The current transfer has been received in full (reported once by `take_completion`).
    completed: bool,
    completion_pending: bool,
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
            delack_event_at: None,
            stats: ReceiverStats::default(),
            window_delivered_bytes: 0,
            mss,
            last_payload: mss,
            measured: MeasuredWindow { start: Time::ZERO, end: Time::MAX },
            conn: 0,
            expect: u32::MAX,
            initiates: false,
            echo_ce: false,
            ack_now: false,
            completed: false,
            completion_pending: false,
        }
    }

    /// Marks it as a client that opens connections itself.
    pub fn set_initiates(&mut self) {
        self.initiates = true;
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

    /// Sets the measured window for `window_delivered`.
    pub fn set_window(&mut self, window: MeasuredWindow) {
        self.measured = window;
    }

    /// Whether it only ever sends ACKs, each at once in answer to a segment (no delayed-ACK
    /// timer, no requests of its own).
    pub fn acks_immediately(&self) -> bool {
        !self.delayed && !self.initiates
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
        self.unacked = 0;
        self.delack_deadline = None;
        self.ack_now = false;
        self.stats.acks_sent += 1;
        self.send(now, if self.echo_ce { flags::ECE } else { 0 }, out);
    }

    /// The ECN flags of a data segment about to be handled by `on_data` (RFC 3168 §6.1.3):
    /// CWR stops the echo, CE (re)starts it — in that order, so that a segment with both
    /// keeps ECE on.
    pub fn on_ecn(&mut self, f: u8) {
        if f & flags::CWR != 0 {
            self.echo_ce = false;
        }
        if f & flags::CE != 0 {
            self.echo_ce = true;
            self.ack_now = true;
        }
    }

    /// Whether its ACKs carry ECE now.
    pub fn echoes_ce(&self) -> bool {
        self.echo_ce
    }

    /// A 40 B packet on the ACK route carrying the cumulative ACK.
    fn send(&mut self, now: Time, f: u8, out: &mut Vec<Packet>) {
        out.push(Packet {
            sent_at: now,
            flow: self.flow,
            seq: self.rcv_nxt,
            size: HEADER_BYTES,
            route: self.route,
            hop: 0,
            kind: Kind::Ack,
            conn: self.conn,
            flags: f,
        });
    }

    /// A data segment arrives. Returns the number of segments newly delivered in order.
    pub fn on_data(&mut self, now: Time, seq: u32, out: &mut Vec<Packet>) -> u32 {
        self.stats.arrivals += 1;
        if seq < self.rcv_nxt {
            // Already have it: RFC 5681 §4.2, answer at once (a duplicate ACK).
            self.stats.duplicates += 1;
            self.ack(now, out);
            return 0;
        }
        if seq > self.rcv_nxt {
            self.store_out_of_order(seq);
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
        if !self.delayed || filled_gap || self.ack_now {
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

    /// Segments held out of order, waiting for a gap to fill.
    pub fn out_of_order(&self) -> u32 {
        self.ooo_count
    }

    /// Handles a (lazy) delayed-ACK timer event at `now`.
    pub fn check_timer(&mut self, now: Time, out: &mut Vec<Packet>) {
        if let Some(d) = self.delack_deadline {
            if d <= now && self.unacked > 0 {
                self.ack(now, out);
            }
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

    /// (ACK number, ECE) of each ACK sent.
    fn echoes(out: &mut Vec<Packet>) -> Vec<(u32, bool)> {
        out.drain(..).map(|p| (p.seq, p.flags & flags::ECE != 0)).collect()
    }

    /// A data segment with ECN flags `f`, handed over as the simulator does.
    fn data(r: &mut TcpReceiver, t: Time, seq: u32, f: u8, out: &mut Vec<Packet>) {
        r.on_ecn(f);
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
}
