//! Proportional Rate Reduction (RFC 6937), Linux's `tcp_cwnd_reduction`.
//!
//! Read first: RFC 6937 §3 and [`super`]. Owns PRR's counters for one reduction; must not know
//! how losses are found or what is sent: the sender reports what each ACK delivered and each
//! segment it sends, and sets cwnd to what this allows.
//!
//! While the window is being reduced (fast recovery, or CWR), every ACK sets
//! cwnd = in-flight + sndcnt, where sndcnt is how many segments may leave on it:
//! - while more is in flight than ssthresh, in proportion to what has been delivered since the
//!   reduction began: sndcnt = ⌈prr_delivered · ssthresh / RecoverFS⌉ − prr_out (§3, the
//!   proportional part), so that by the end of one round trip about ssthresh has been sent;
//! - once in flight has fallen to ssthresh or below (more was lost than the reduction asked
//!   for), the reduction bound: sndcnt = min(ssthresh − in-flight, max(prr_delivered − prr_out,
//!   DeliveredData) + 1) — the slow-start reduction bound (PRR-SSRB) — but with the extra
//!   segment only on an ACK that advances the cumulative ACK and marks nothing newly lost
//!   (Linux since 5.10 and draft-ietf-tcpm-prr-rfc6937bis's SafeACK), so that a burst of
//!   losses is not answered with a burst of sends;
//! - at least one segment as the reduction begins, the fast retransmission.
//!
//! RecoverFS is Linux's `prior_cwnd`, the window when the reduction began (RFC 6937 takes the
//! data outstanding, which Linux's window equals for a sender the window limits).

/// PRR's counters for the reduction under way (`prior_cwnd`, `prr_delivered`, `prr_out`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Prr {
    /// RecoverFS: the window when the reduction began, segments.
    pub prior_cwnd: u32,
    /// Segments delivered (cumulatively or by SACK) since it began.
    pub delivered: u32,
    /// Segments sent since it began.
    pub out: u32,
}

impl Prr {
    /// A reduction begins with window `cwnd` (`tcp_init_cwnd_reduction`).
    pub fn begin(cwnd: u32) -> Prr {
        Prr { prior_cwnd: cwnd.max(1), delivered: 0, out: 0 }
    }

    /// An ACK delivered `delivered` segments and made `newly_lost` segments lost;
    /// `una_advanced` if it moved the cumulative ACK; `in_flight` after it; the target
    /// `ssthresh`. Returns the new cwnd, or None when the ACK delivered nothing (cwnd stays).
    pub fn on_ack(
        &mut self,
        delivered: u32,
        newly_lost: u32,
        una_advanced: bool,
        in_flight: u32,
        ssthresh: u32,
    ) -> Option<u32> {
        if delivered == 0 {
            return None;
        }
        self.delivered += delivered;
        let sndcnt = if in_flight > ssthresh {
            // The proportional part, rounded up.
            let target = (ssthresh as u64 * self.delivered as u64).div_ceil(self.prior_cwnd as u64);
            target.saturating_sub(self.out as u64) as u32
        } else {
            let mut limit = self.delivered.saturating_sub(self.out).max(delivered);
            if una_advanced && newly_lost == 0 {
                limit += 1;
            }
            limit.min(ssthresh - in_flight)
        };
        // Force the fast retransmission as the reduction begins.
        let sndcnt = sndcnt.max(if self.out == 0 { 1 } else { 0 });
        Some(in_flight + sndcnt)
    }

    /// `n` segments (retransmissions or new data) were sent during the reduction.
    pub fn on_sent(&mut self, n: u32) {
        self.out += n;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn above_ssthresh_sends_ssthresh_over_prior_cwnd_per_segment_delivered() {
        // RFC 6937 §5's example shape: cwnd 20 when loss is found, ssthresh 10. Each ACK
        // delivers one segment; PRR lets out one segment for every two delivered.
        let mut p = Prr::begin(20);
        let mut in_flight = 19; // one lost
        let mut sent = Vec::new();
        for _ in 0..8 {
            in_flight -= 1; // the ACK's segment left the network
            let cwnd = p.on_ack(1, 0, false, in_flight, 10).unwrap();
            let n = cwnd - in_flight;
            p.on_sent(n);
            in_flight += n;
            sent.push(n);
        }
        // ⌈10·k/20⌉ − out: 1 (the forced fast retransmission), then alternately 0 and 1.
        assert_eq!(sent, vec![1, 0, 1, 0, 1, 0, 1, 0]);
        assert_eq!(p.out, 4);
    }

    #[test]
    fn at_or_below_ssthresh_the_reduction_bound_catches_up() {
        // Heavy loss left 4 in flight with ssthresh 10. An ACK that delivers 2 and advances the
        // cumulative ACK without new losses may send max(delivered − out, 2) + 1 = 3.
        let mut p = Prr::begin(20);
        p.on_sent(1);
        assert_eq!(p.on_ack(2, 0, true, 4, 10), Some(4 + 3));
        // Without the cumulative ACK moving (a SACK), or with a new loss: no extra segment.
        let mut p = Prr::begin(20);
        p.on_sent(1);
        assert_eq!(p.on_ack(2, 0, false, 4, 10), Some(4 + 2));
        let mut p = Prr::begin(20);
        p.on_sent(1);
        assert_eq!(p.on_ack(2, 1, true, 4, 10), Some(4 + 2));
        // Never above ssthresh.
        let mut p = Prr::begin(20);
        assert_eq!(p.on_ack(9, 0, true, 8, 10), Some(10));
    }

    #[test]
    fn an_ack_that_delivers_nothing_changes_nothing() {
        let mut p = Prr::begin(20);
        assert_eq!(p.on_ack(0, 0, true, 15, 10), None);
        assert_eq!(p.delivered, 0);
    }
}
