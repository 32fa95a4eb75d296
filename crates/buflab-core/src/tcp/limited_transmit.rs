//! Limited Transmit (RFC 3042) for the Reno and NewReno senders (`limited_transmit = true`).
//!
//! Read first: RFC 3042 §2 and RFC 5681 §3.2. Owns the rule for sending new data on the first
//! two duplicate ACKs; it is an `impl TcpSender` block sharing the sender's sequence state. The
//! SACK sender has the same rule as RFC 6675 §5 step 3, the Linux sender by counting SACKed
//! segments out of flight, so this file is for the senders without SACK.
//!
//! Why it matters here: with a window of a few segments, a single loss leaves too few segments
//! behind it to bring three duplicate ACKs, and recovery waits for the retransmission timer.
//! Sending one new segment on each of the first two duplicate ACKs makes the third more likely.
//!
//! The rule (§2): on the first and on the second duplicate ACK, send one new segment if the
//! receiver's window allows, new data is available and the data outstanding would stay within
//! cwnd + 2 segments; cwnd is not changed. RFC 5681 §3.2 step 2: the segments so sent are left
//! out of the FlightSize that sets ssthresh at the third duplicate ACK. Not while the sender
//! goes back N after a timeout: those duplicate ACKs answer resends of data the receiver holds.

use crate::packet::Packet;
use crate::tcp::sender::TcpSender;
use crate::units::Time;

impl TcpSender {
    /// A duplicate ACK, the `dupacks`-th in a row, arrived outside recovery.
    pub(in crate::tcp) fn limited_transmit(&mut self, now: Time, out: &mut Vec<Packet>) {
        if !self.cfg.limited_transmit || self.dupacks > 2 || self.snd_nxt < self.snd_max || self.repairing() {
            return;
        }
        let allowed = (self.w.cwnd as u32 + self.dupacks).min(self.cfg.max_window);
        if self.snd_nxt >= self.limit
            || self.snd_nxt - self.snd_una >= allowed
            || self.pacer.hold_until(now).is_some()
        {
            return;
        }
        let seq = self.snd_nxt;
        self.snd_nxt += 1;
        self.snd_max = self.snd_nxt;
        self.limited_sent += 1;
        self.emit(now, seq, false, out);
    }
}

#[cfg(test)]
mod tests {
    use crate::packet::Packet;
    use crate::tcp::cc::Window;
    use crate::tcp::sender::TcpSender;
    use crate::tcp::{Recovery, TcpConfig};
    use crate::units::Time;

    /// A NewReno sender with window `cwnd`, segments 0..cwnd outstanding.
    fn sender(limited: bool, cwnd: u32) -> (TcpSender, Vec<Packet>) {
        let mut cfg = TcpConfig::default_for(1000, Recovery::NewReno);
        cfg.limited_transmit = limited;
        let mut s = TcpSender::new(cfg, 0, 0);
        s.w = Window { cwnd: cwnd as f64, ssthresh: cwnd as f64 };
        let mut out = Vec::new();
        s.start(Time::ZERO, &mut out);
        assert_eq!(out.len(), cwnd as usize);
        out.clear();
        (s, out)
    }

    fn seqs(out: &mut Vec<Packet>) -> Vec<u32> {
        out.drain(..).map(|p| p.seq).collect()
    }

    #[test]
    fn one_new_segment_on_each_of_the_first_two_duplicate_acks() {
        // Segment 0 of 0..4 is lost; 1, 2, 3 arrive.
        let (mut s, mut out) = sender(true, 4);
        let t = Time::from_ms(100);
        s.on_ack(t, 0, &mut out);
        assert_eq!(seqs(&mut out), vec![4]);
        s.on_ack(t, 0, &mut out);
        assert_eq!(seqs(&mut out), vec![5]);
        // The third: fast retransmit; ssthresh from FlightSize without the two: 4 / 2.
        s.on_ack(t, 0, &mut out);
        assert_eq!(seqs(&mut out), vec![0]);
        assert_eq!(s.w.ssthresh, 2.0);
        assert!(s.in_recovery());
        // Without it: nothing on the first two, and cwnd is the same either way.
        let (mut plain, mut out) = sender(false, 4);
        plain.on_ack(t, 0, &mut out);
        plain.on_ack(t, 0, &mut out);
        assert!(out.is_empty());
        assert_eq!((plain.w.cwnd, s.stats.fast_retransmits), (4.0, 1));
    }

    #[test]
    fn a_window_of_three_recovers_without_a_timeout_only_with_limited_transmit() {
        // Segment 0 of 0..3 is lost: 1 and 2 bring two duplicate ACKs, one short of a fast
        // retransmit. With Limited Transmit they send 3 and 4, whose arrivals bring the third;
        // without, nothing more is sent and only the timer can repair the loss.
        let run = |limited| {
            let (mut s, mut out) = sender(limited, 3);
            let t = Time::from_ms(100);
            s.on_ack(t, 0, &mut out);
            s.on_ack(t, 0, &mut out);
            let sent = seqs(&mut out);
            for _ in &sent {
                s.on_ack(t + Time::from_ms(100), 0, &mut out);
            }
            (sent, s.stats.fast_retransmits)
        };
        assert_eq!(run(true), (vec![3, 4], 1));
        assert_eq!(run(false), (vec![], 0));
    }
}
