//! Delivery-rate samples (draft-cheng-iccrg-delivery-rate-estimation-00), for congestion
//! controllers that run on them ([`crate::tcp::cc::bbr`]).
//!
//! Read first: the draft's §2 (the idea: a rate is data delivered over the time it took, timed
//! on both the send and the ACK side) and §3 (the algorithm, whose names are kept here: C.* is
//! the connection's state, P.* a segment's, rs.* the sample). Linux's `net/ipv4/tcp_rate.c`
//! implements the same draft; where the draft is silent this follows it, and says so.
//!
//! It owns the per-segment state and the arithmetic of a sample, and must not know TCP: not
//! the sender's sequence state, SACK or loss recovery, nor the controller. The sender tells it
//! which segments leave and which an ACK delivers ([`super::sender`]).
//!
//! **Units.** Data counts segments (the model's sequence space; the short last segment of a
//! transfer counts as one, as Linux counts packets). Times are picoseconds, rates segments per
//! second.
//!
//! **What the sender does** ([`super::sender`]): [`RateSampler::on_sent`] on every
//! transmission (§3.2); per ACK [`RateSampler::begin_ack`], then [`RateSampler::deliver`] for
//! each segment the ACK newly acknowledges, cumulatively or by SACK (§3.3 UpdateRateSample),
//! [`RateSampler::count`] for the segments it counts as delivered, and
//! [`RateSampler::finish_ack`] (§3.3 GenerateRateSample). Counting is apart from `deliver`
//! because without SACK the sender only estimates deliveries: a duplicate ACK counts one
//! segment it cannot name, and the cumulative ACK that follows counts only what the duplicates
//! did not (Linux's `tcp_add_reno_sack` / `tcp_remove_reno_sacks`).
//!
//! **Storage.** The state each segment had when it was sent (P.delivered, P.delivered_time,
//! P.first_sent_time, P.is_app_limited, its send time) lives in a ring indexed by the segment
//! number modulo a power of two, 32 bytes a slot. Only segments between the cumulative ACK and
//! the highest sent are live, and the sender never has more of them than the receiver's
//! window, so the ring never needs more than that window's power of two. It starts small and
//! doubles when a segment would land on a live one (at most log₂ of the window times, never
//! per packet): a thousand flows with the default 20 MB window would otherwise hold a
//! megabyte each for windows they never open.
//!
//! **Choices where the draft leaves room** (each as Linux's `tcp_rate.c`):
//! - Of the segments an ACK delivers, the sample is taken from the one sent last (§3.3 picks
//!   "the newest packet" by P.delivered; ties, common when segments leave together, go to the
//!   later one, which has the same state).
//! - The connection's minimum RTT, which a valid sample's interval may not undercut (§3.3,
//!   "no reliable sample"), is the smallest RTT this sampler has measured, over the whole
//!   connection (Linux: over 5 minutes). Before the first RTT sample every rate sample is
//!   invalid, as in Linux, whose minimum is then "infinite".
//! - C.delivered_time moves to the ACK's time when the ACK delivers anything, named or
//!   counted (Linux `tcp_rate_gen`).
//! - The sample's RTT (what BBR's RTprop filter takes) is that of the segment sent last among
//!   those delivered that were never retransmitted (Karn). A cumulative ACK that the arrival
//!   of a retransmission triggers can only make it longer than the path's, never shorter,
//!   which a minimum filter ignores.

use crate::units::{Time, PS_PER_S};

/// A segment's state when it was last sent (draft §3.2: P.*).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Slot {
    /// When this transmission of it left.
    sent: Time,
    /// P.delivered_time: C.delivered_time when it was sent.
    delivered_time: Time,
    /// P.first_sent_time: C.first_sent_time when it was sent.
    first_sent: Time,
    /// P.delivered: C.delivered when it was sent, its low 32 bits (only differences over less
    /// than 2³² deliveries are ever taken).
    delivered: u32,
    flags: u8,
}

/// P.is_app_limited.
const APP_LIMITED: u8 = 1;
/// This transmission is a retransmission: no RTT from it (Karn).
const RETRANSMITTED: u8 = 2;
/// Already delivered (SACKed): a later cumulative ACK must not count it again (the draft's
/// "P.delivered_time = 0").
const DELIVERED: u8 = 4;

/// The segment an ACK's sample is taken from (the one sent last among those it delivers).
#[derive(Clone, Copy, Debug)]
struct Prior {
    sent: Time,
    delivered: u32,
    delivered_time: Time,
    first_sent: Time,
    app_limited: bool,
}

/// A delivery-rate sample (draft §3.3 `rs`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RateSample {
    /// rs.delivered: segments delivered between the sending of the segment the sample is
    /// taken from and this ACK.
    pub delivered: u64,
    /// rs.prior_delivered: C.delivered when that segment was sent (BBR counts round trips
    /// with it).
    pub prior_delivered: u64,
    /// rs.interval = max(send_elapsed, ack_elapsed), never below the connection's min RTT.
    pub interval: Time,
    /// rs.send_elapsed: from the send of the first segment of the flight the sample spans
    /// (P.first_sent_time) to that segment's.
    pub send_elapsed: Time,
    /// rs.ack_elapsed: from the delivery before that segment was sent (P.delivered_time) to
    /// this ACK.
    pub ack_elapsed: Time,
    /// rs.is_app_limited: the segment left while the sender was application-limited, so the
    /// rate says how fast the application wrote rather than what the path carries.
    pub is_app_limited: bool,
}

impl RateSample {
    /// rs.delivery_rate = rs.delivered / rs.interval, segments per second.
    pub fn delivery_rate(&self) -> f64 {
        self.delivered as f64 * PS_PER_S as f64 / self.interval.0 as f64
    }
}

/// What one ACK tells the sampler's user: the rate sample, if the ACK gives a valid one, and
/// what the ACK delivered.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AckSample {
    /// None when the ACK named no segment it delivered (a duplicate ACK without SACK), or
    /// when the interval undercuts the minimum RTT (draft §3.3: no reliable sample).
    pub rate: Option<RateSample>,
    /// Segments newly delivered by this ACK, named or counted (Linux `rs->acked_sacked`).
    pub acked_sacked: u32,
    /// RTT of the segment sent last among those the ACK delivered that were never resent.
    pub rtt: Option<Time>,
}

/// Per-connection delivery-rate state (draft §3.1: C.*) and the per-segment ring.
#[derive(Clone, Debug)]
pub struct RateSampler {
    ring: Vec<Slot>,
    /// ring.len() − 1 (the ring's length is a power of two).
    mask: u32,
    /// C.delivered: segments delivered so far.
    delivered: u64,
    /// C.delivered_time: when C.delivered last grew.
    delivered_time: Time,
    /// C.first_sent_time: send time of the segment the last sample was taken from.
    first_sent_time: Time,
    /// C.app_limited: 0, or the value of C.delivered beyond which the application-limited
    /// bubble has been delivered and samples are no longer marked.
    app_limited: u64,
    /// Smallest RTT measured so far.
    min_rtt: Option<Time>,
    // The ACK being processed.
    prior: Option<Prior>,
    newly: u32,
    rtt_sent: Option<Time>,
}

impl RateSampler {
    /// A sampler whose ring starts with room for `initial` segments (rounded up to a power of
    /// two, at least 16).
    pub fn new(initial: u32) -> RateSampler {
        let cap = (initial as u64 + 1).next_power_of_two().max(16);
        RateSampler {
            ring: vec![Slot::default(); cap as usize],
            mask: (cap - 1) as u32,
            delivered: 0,
            delivered_time: Time::ZERO,
            first_sent_time: Time::ZERO,
            app_limited: 0,
            min_rtt: None,
            prior: None,
            newly: 0,
            rtt_sent: None,
        }
    }

    /// C.delivered: segments delivered so far.
    pub fn delivered(&self) -> u64 {
        self.delivered
    }

    /// C.delivered_time: when the last delivery was acknowledged.
    pub fn delivered_time(&self) -> Time {
        self.delivered_time
    }

    /// Smallest RTT measured so far.
    pub fn min_rtt(&self) -> Option<Time> {
        self.min_rtt
    }

    /// Whether segments sent now are marked application-limited.
    pub fn is_app_limited(&self) -> bool {
        self.app_limited != 0
    }

    /// Slots in the ring (for tests of its growth).
    pub fn capacity(&self) -> usize {
        self.ring.len()
    }

    /// Draft §3.2 SendPacket: segment `seq` leaves at `now`. `snd_una` is the first
    /// unacknowledged segment; `idle`: nothing was outstanding before it, which restarts both
    /// clocks (C.first_sent_time = C.delivered_time = now), since a sample must not span the
    /// idle time. Every segment between `snd_una` and `seq` is live.
    pub fn on_sent(&mut self, seq: u32, snd_una: u32, now: Time, retransmit: bool, idle: bool) {
        if idle {
            self.first_sent_time = now;
            self.delivered_time = now;
        }
        if seq.wrapping_sub(snd_una) > self.mask {
            self.grow(snd_una, seq);
        }
        let mut flags = if self.app_limited != 0 { APP_LIMITED } else { 0 };
        if retransmit {
            flags |= RETRANSMITTED;
        }
        self.ring[(seq & self.mask) as usize] = Slot {
            sent: now,
            delivered_time: self.delivered_time,
            first_sent: self.first_sent_time,
            delivered: self.delivered as u32,
            flags,
        };
    }

    /// Doubles the ring until `seq` fits beside the live segments `snd_una..seq`, which move
    /// to their new places.
    fn grow(&mut self, snd_una: u32, seq: u32) {
        let need = seq.wrapping_sub(snd_una) as u64 + 1;
        let cap = need.next_power_of_two().max(2 * self.ring.len() as u64);
        let mask = (cap - 1) as u32;
        let mut ring = vec![Slot::default(); cap as usize];
        let mut s = snd_una;
        while s != seq {
            ring[(s & mask) as usize] = self.ring[(s & self.mask) as usize];
            s = s.wrapping_add(1);
        }
        (self.ring, self.mask) = (ring, mask);
    }

    /// Starts the processing of an ACK.
    pub fn begin_ack(&mut self) {
        (self.prior, self.newly, self.rtt_sent) = (None, 0, None);
    }

    /// Draft §3.3 UpdateRateSample for segment `seq`, which this ACK acknowledges (cumulatively
    /// or by SACK): the sample is taken from the segment sent last among those the ACK
    /// delivers. Returns false if the segment had already been delivered (SACKed before); it
    /// then changes nothing. Does not count it in C.delivered: see [`RateSampler::count`].
    pub fn deliver(&mut self, seq: u32) -> bool {
        let slot = &mut self.ring[(seq & self.mask) as usize];
        if slot.flags & DELIVERED != 0 {
            return false;
        }
        slot.flags |= DELIVERED;
        let slot = *slot;
        if self.prior.is_none_or(|p| slot.sent >= p.sent) {
            self.prior = Some(Prior {
                sent: slot.sent,
                delivered: slot.delivered,
                delivered_time: slot.delivered_time,
                first_sent: slot.first_sent,
                app_limited: slot.flags & APP_LIMITED != 0,
            });
        }
        if slot.flags & RETRANSMITTED == 0 && self.rtt_sent.is_none_or(|t| slot.sent >= t) {
            self.rtt_sent = Some(slot.sent);
        }
        true
    }

    /// Counts `n` segments as delivered by this ACK (C.delivered += n).
    pub fn count(&mut self, n: u32) {
        self.delivered += n as u64;
        self.newly += n;
    }

    /// Draft §3.3 GenerateRateSample, at the end of the ACK's processing.
    pub fn finish_ack(&mut self, now: Time) -> AckSample {
        // "Clear app-limited field if bubble is ACKed and gone."
        if self.app_limited != 0 && self.delivered > self.app_limited {
            self.app_limited = 0;
        }
        if self.newly > 0 {
            self.delivered_time = now;
        }
        let rtt = self.rtt_sent.map(|sent| now - sent);
        if let Some(r) = rtt {
            self.min_rtt = Some(self.min_rtt.map_or(r, |m| m.min(r)));
        }
        let rate = self.prior.and_then(|p| {
            self.first_sent_time = p.sent;
            let delivered = (self.delivered as u32).wrapping_sub(p.delivered) as u64;
            let send_elapsed = p.sent - p.first_sent;
            let ack_elapsed = self.delivered_time - p.delivered_time;
            // "Use the longer of the send_elapsed and ack_elapsed."
            let interval = send_elapsed.max(ack_elapsed);
            // "Normally we expect interval >= MinRTT": shorter, no reliable sample.
            let min_rtt = self.min_rtt?;
            (interval >= min_rtt && interval > Time::ZERO).then_some(RateSample {
                delivered,
                prior_delivered: self.delivered - delivered,
                interval,
                send_elapsed,
                ack_elapsed,
                is_app_limited: p.app_limited,
            })
        });
        AckSample { rate, acked_sacked: self.newly, rtt }
    }

    /// An RTT measured outside the data (the handshake's): the connection's min RTT takes it.
    pub fn on_rtt(&mut self, rtt: Time) {
        self.min_rtt = Some(self.min_rtt.map_or(rtt, |m| m.min(rtt)));
    }

    /// Draft §3.4 (CheckIfApplicationLimited), once the sender found it has nothing to send
    /// although the window allows it, or when the controller holds itself back (BBR's
    /// ProbeRTT): segments sent from now until those in flight are delivered are marked
    /// application-limited. `in_flight`: segments in flight now.
    pub fn mark_app_limited(&mut self, in_flight: u32) {
        self.app_limited = (self.delivered + in_flight as u64).max(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(ms: u64) -> Time {
        Time::from_ms(ms)
    }

    /// Delivers `seqs` on one ACK at `now`, counting each, and returns the sample.
    fn ack(r: &mut RateSampler, now: Time, seqs: std::ops::Range<u32>) -> AckSample {
        r.begin_ack();
        for s in seqs {
            if r.deliver(s) {
                r.count(1);
            }
        }
        r.finish_ack(now)
    }

    #[test]
    fn acks_ten_ms_apart_give_exactly_one_segment_per_ten_ms() {
        // An ACK-clocked flow with 4 segments in flight and an RTT of 40 ms: segments 0..4
        // leave at 0, the ACK of segment k arrives at 40 + 10·k ms and releases segment k + 4.
        // The first two rounds' samples span the start (the first flight left at once, so the
        // send side of the next is stretched); from the ACK of segment 8 on, each spans 4
        // deliveries over 40 ms, both ways: exactly one segment (MSS bytes) per 10 ms.
        let mut r = RateSampler::new(4);
        for s in 0..4 {
            r.on_sent(s, 0, Time::ZERO, false, s == 0);
        }
        let first = ack(&mut r, ms(40), 0..1);
        let rate = first.rate.unwrap();
        assert_eq!((rate.delivered, rate.interval), (1, ms(40)));
        assert_eq!(first.rtt, Some(ms(40)));
        r.on_sent(4, 1, ms(40), false, false);
        for k in 1..40u32 {
            let now = ms(40 + 10 * k as u64);
            let s = ack(&mut r, now, k..k + 1);
            r.on_sent(k + 4, k + 1, now, false, false);
            let rate = s.rate.expect("a valid sample");
            assert_eq!(s.acked_sacked, 1);
            if k >= 8 {
                assert_eq!((rate.delivered, rate.send_elapsed, rate.ack_elapsed), (4, ms(40), ms(40)));
                assert_eq!(rate.delivery_rate(), 100.0, "ACK {k}");
                assert_eq!(rate.prior_delivered, k as u64 + 1 - 4);
                assert_eq!(s.rtt, Some(ms(40)));
            }
        }
        assert_eq!(r.delivered(), 40);
    }

    #[test]
    fn the_longer_of_send_and_ack_elapsed_is_the_interval() {
        // Spread ACKs: segments 0..10 leave 1 ms apart and their ACK comes at 100 ms. The send
        // side took 9 ms, the ACK side 100 ms since the delivery before them (the start): the
        // rate is 10 segments / 100 ms, not 10 / 9 ms.
        let mut r = RateSampler::new(16);
        for s in 0..10 {
            r.on_sent(s, 0, ms(s as u64), false, s == 0);
        }
        let s = ack(&mut r, ms(100), 0..10).rate.unwrap();
        assert_eq!((s.send_elapsed, s.ack_elapsed, s.interval), (ms(9), ms(100), ms(100)));
        assert_eq!(s.delivery_rate(), 100.0);
    }

    #[test]
    fn compressed_acks_take_the_send_side() {
        // Segment 0 leaves at 0 and its ACK comes at 50 ms; segments 1..=10 leave every 10 ms
        // from 10 to 100 ms, and their ACKs come bunched, all at 140 ms. The sample is taken
        // from 10 (sent last): P.first_sent_time = 0 (the send time of 0, the segment the last
        // sample came from), P.delivered_time = 50 ms. Send side 100 ms, ACK side 90 ms: 10
        // segments over the longer, 100 ms.
        let mut r = RateSampler::new(16);
        r.on_sent(0, 0, Time::ZERO, false, true);
        for s in 1..=10 {
            r.on_sent(s, 0, ms(10 * s as u64), false, false);
            if s == 4 {
                assert_eq!(ack(&mut r, ms(50), 0..1).rate.unwrap().interval, ms(50));
            }
        }
        let s = ack(&mut r, ms(140), 1..11).rate.unwrap();
        assert_eq!((s.send_elapsed, s.ack_elapsed, s.interval), (ms(100), ms(90), ms(100)));
        assert_eq!((s.delivered, s.prior_delivered), (10, 1));
        assert_eq!(s.delivery_rate(), 100.0);
    }

    #[test]
    fn an_interval_shorter_than_the_min_rtt_is_no_sample() {
        // The min RTT is 100 ms (segment 0). Segment 1, sent alone at 100 ms as a
        // retransmission (no RTT from it), is acknowledged 50 ms later: an interval of 50 ms
        // cannot be a whole flight's, so there is no reliable sample (draft §3.3).
        let mut r = RateSampler::new(8);
        r.on_sent(0, 0, Time::ZERO, false, true);
        assert!(ack(&mut r, ms(100), 0..1).rate.is_some());
        r.on_sent(1, 1, ms(100), true, true);
        let s = ack(&mut r, ms(150), 1..2);
        assert_eq!((s.rtt, s.acked_sacked), (None, 1));
        assert_eq!(s.rate, None);
        assert_eq!(r.min_rtt(), Some(ms(100)));
    }

    #[test]
    fn no_rtt_sample_means_no_rate_sample() {
        // Linux's min RTT is "infinite" before its first sample: every interval falls short.
        let mut r = RateSampler::new(8);
        r.on_sent(0, 0, Time::ZERO, true, true);
        let s = ack(&mut r, ms(100), 0..1);
        assert_eq!((s.rate, s.rtt, s.acked_sacked), (None, None, 1));
    }

    #[test]
    fn segments_sent_while_app_limited_are_marked_until_the_bubble_is_delivered() {
        let mut r = RateSampler::new(16);
        for s in 0..4 {
            r.on_sent(s, 0, Time::ZERO, false, s == 0);
        }
        // The application has nothing more: C.app_limited = delivered (0) + in flight (4).
        r.mark_app_limited(4);
        r.on_sent(4, 0, ms(1), false, false);
        assert!(r.is_app_limited());
        let s = ack(&mut r, ms(100), 0..4);
        assert!(!s.rate.unwrap().is_app_limited, "0..4 left before the mark");
        assert!(r.is_app_limited(), "4 delivered, the bubble ends beyond 4");
        let s = ack(&mut r, ms(101), 4..5);
        assert!(s.rate.unwrap().is_app_limited);
        assert!(!r.is_app_limited(), "5 > 4 delivered: the bubble is gone");
        r.on_sent(5, 5, ms(101), false, true);
        let s = ack(&mut r, ms(201), 5..6);
        assert!(!s.rate.unwrap().is_app_limited);
        // Nothing in flight and nothing delivered: still marked (the draft's "? : 1").
        let mut r = RateSampler::new(4);
        r.mark_app_limited(0);
        assert!(r.is_app_limited());
    }

    #[test]
    fn a_sacked_segment_counts_once_when_the_cumulative_ack_covers_it() {
        let mut r = RateSampler::new(8);
        for s in 0..4 {
            r.on_sent(s, 0, Time::ZERO, false, s == 0);
        }
        // 0 is lost; 1..4 are SACKed, then the resent 0 fills the hole.
        let s = ack(&mut r, ms(100), 1..4);
        assert_eq!((s.acked_sacked, r.delivered()), (3, 3));
        r.on_sent(0, 0, ms(100), true, false);
        let s = ack(&mut r, ms(200), 0..4);
        assert_eq!((s.acked_sacked, r.delivered()), (1, 4));
        // The sample comes from the resent 0 (the newest sent): 1 delivery since it left.
        let rate = s.rate.unwrap();
        assert_eq!((rate.delivered, rate.ack_elapsed), (1, ms(100)));
        assert_eq!(s.rtt, None, "only the retransmission was newly delivered");
    }

    #[test]
    fn the_ring_grows_and_keeps_the_outstanding_segments() {
        let mut r = RateSampler::new(4);
        assert_eq!(r.capacity(), 16);
        for s in 0..16 {
            r.on_sent(s, 0, ms(s as u64), false, s == 0);
        }
        // Segment 16 would land on 0, still outstanding: the ring doubles.
        r.on_sent(16, 0, ms(16), false, false);
        assert_eq!(r.capacity(), 32);
        // Every outstanding segment kept its send time: the RTTs say so.
        for s in 0..17u32 {
            let a = ack(&mut r, ms(100 + s as u64), s..s + 1);
            assert_eq!(a.rtt, Some(ms(100)), "segment {s}");
        }
        // Once 0..17 are acknowledged, slots are reused without growing.
        for s in 17..49 {
            r.on_sent(s, 17, ms(200), false, s == 17);
        }
        assert_eq!(r.capacity(), 32);
    }
}
