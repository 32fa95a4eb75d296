//! Linux's retransmission timeout: `tcp_rtt_estimator` and `tcp_set_rto` (net/ipv4/tcp_input.c),
//! and the kernel clock the timers run on.
//!
//! Read first: RFC 6298 §2 and [`super`] (the RFC estimator, which owns the backoff). Owns the
//! mean deviation and RTTVAR as Linux keeps them; must not know segments, only the sequence
//! numbers that mark a round trip.
//!
//! Where Linux differs from RFC 6298 §2:
//! - **The RTTVAR floor.** RTO = SRTT + RTTVAR, where RTTVAR is at least the minimum RTO
//!   (`tcp_rto_min`, 200 ms): the minimum is *added to* the smoothed RTT instead of bounding the
//!   sum (RFC 6298 §2.4's max(RTO, 1 s)). A 100 ms path therefore times out after at least
//!   300 ms, not 200 ms. RTTVAR itself is the largest mean deviation (×4, the RFC's K) seen in
//!   the last round trip (`mdev_max`, reset to the floor once per round trip, when the cumulative
//!   ACK passes `rtt_seq`, the highest segment sent when the round began) and decays towards it
//!   by a quarter per round trip, rather than a per-sample EWMA.
//! - **A falling RTT barely moves the deviation.** A sample below SRTT updates mdev with gain
//!   1/32 (α·β) instead of 1/4, so that a queue draining does not shrink the RTO at once
//!   ("similar to one of Eifel findings").
//! - **Jiffies.** Timers run on the kernel's tick: RTO is rounded up to whole jiffies
//!   (`usecs_to_jiffies`). [`JIFFY`] is 4 ms (HZ = 250, the kernel the emulator runs on and many
//!   distributions' default; HZ = 1000 kernels tick every 1 ms).
//! - **Samples come from every ACK** (the sender's part: `tcp_ack_update_rtt`); RFC 6298 allows
//!   it (§3) and the RFC-era senders here take one per round trip.
//!
//! Arithmetic follows the kernel's shifts on integers (SRTT kept ×8, mdev ×4), in picoseconds
//! rather than microseconds.

use crate::units::Time;

/// The kernel's tick rate, per second (`CONFIG_HZ`).
pub const HZ: u64 = 250;
/// One jiffy, the granularity of every TCP timer.
pub const JIFFY: Time = Time(crate::units::PS_PER_S / HZ);
/// Linux's maximum RTO, `TCP_RTO_MAX` (RFC 6298 §2.5 asks for at least 60 s).
pub const RTO_MAX: Time = Time::from_secs(120);

/// `usecs_to_jiffies`: a duration rounded up to whole jiffies.
pub fn to_jiffies(t: Time) -> Time {
    Time(t.0.div_ceil(JIFFY.0) * JIFFY.0)
}

/// Linux's SRTT and RTTVAR (`srtt_us`, `mdev_us`, `mdev_max_us`, `rttvar_us`, `rtt_seq`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinuxRtt {
    /// 8 × SRTT, picoseconds; 0 before the first sample.
    srtt8: i64,
    /// 4 × the mean deviation (RFC 6298's K·RTTVAR), picoseconds.
    mdev: i64,
    /// The largest `mdev` of the current round trip, at least `rto_min`.
    mdev_max: i64,
    /// RTTVAR as the RTO uses it: at least `rto_min`.
    rttvar: i64,
    /// The round trip ends when the cumulative ACK passes this segment (`snd_nxt` at its start).
    rtt_seq: u32,
    /// The RTTVAR floor, `tcp_rto_min`.
    rto_min: i64,
}

impl LinuxRtt {
    pub fn new(rto_min: Time) -> LinuxRtt {
        LinuxRtt { srtt8: 0, mdev: 0, mdev_max: 0, rttvar: 0, rtt_seq: 0, rto_min: rto_min.0 as i64 }
    }

    /// `tcp_rtt_estimator`: one RTT sample `r`, taken when the cumulative ACK is `una` and the
    /// next segment to send is `nxt`.
    pub fn sample(&mut self, r: Time, una: u32, nxt: u32) {
        let mut m = r.0.max(1) as i64;
        if self.srtt8 != 0 {
            m -= self.srtt8 >> 3; // the error of the estimate
            self.srtt8 += m; // SRTT = 7/8 SRTT + 1/8 R
            if m < 0 {
                m = -m;
                m -= self.mdev >> 2;
                // A falling RTT: gain 1/32 on the deviation, not 1/4 (module doc).
                if m > 0 {
                    m >>= 3;
                }
            } else {
                m -= self.mdev >> 2;
            }
            self.mdev += m; // mdev = 3/4 mdev + 1/4 |error|
            if self.mdev > self.mdev_max {
                self.mdev_max = self.mdev;
                self.rttvar = self.rttvar.max(self.mdev_max);
            }
            // Once per round trip: RTTVAR decays a quarter of the way to this round's largest
            // deviation, and the next round's starts again from the floor.
            if una > self.rtt_seq {
                if self.mdev_max < self.rttvar {
                    self.rttvar -= (self.rttvar - self.mdev_max) >> 2;
                }
                self.rtt_seq = nxt;
                self.mdev_max = self.rto_min;
            }
        } else {
            // The first sample: RTO = 3·R ("make sure rto = 3*rtt"), but RTTVAR at least the floor.
            self.srtt8 = m << 3;
            self.mdev = m << 1;
            self.rttvar = self.mdev.max(self.rto_min);
            self.mdev_max = self.rttvar;
            self.rtt_seq = nxt;
        }
        self.srtt8 = self.srtt8.max(1);
    }

    /// SRTT, None before the first sample.
    pub fn srtt(&self) -> Option<Time> {
        (self.srtt8 != 0).then_some(Time((self.srtt8 >> 3) as u64))
    }

    /// `__tcp_set_rto`: SRTT + RTTVAR in whole jiffies (before backoff and `TCP_RTO_MAX`).
    pub fn rto(&self) -> Time {
        to_jiffies(Time(((self.srtt8 >> 3) + self.rttvar) as u64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> Time {
        Time::from_ms(x)
    }

    #[test]
    fn the_first_sample_gives_three_rtts_or_rtt_plus_the_floor() {
        // RTTVAR = max(2·R, 200 ms): a 100 ms path gets 100 + 200 = 300 ms (3·R happens to equal
        // it); a 20 ms path gets 20 + 200 = 220 ms, where RFC 6298 gives max(60, 200) = 200 ms.
        let mut e = LinuxRtt::new(ms(200));
        e.sample(ms(100), 0, 10);
        assert_eq!((e.srtt(), e.rto()), (Some(ms(100)), ms(300)));
        let mut e = LinuxRtt::new(ms(200));
        e.sample(ms(20), 0, 10);
        assert_eq!(e.rto(), ms(220));
        // A 300 ms path: 3·R = 900 ms, above the floor.
        let mut e = LinuxRtt::new(ms(200));
        e.sample(ms(300), 0, 10);
        assert_eq!(e.rto(), ms(900));
    }

    #[test]
    fn a_steady_rtt_leaves_the_rto_at_srtt_plus_the_floor() {
        // The deviation decays towards 0, but RTTVAR never goes below 200 ms: RTO → 100 + 200.
        let mut e = LinuxRtt::new(ms(200));
        let mut una = 0;
        for _ in 0..200 {
            e.sample(ms(100), una, una + 20);
            una += 20;
        }
        assert_eq!(e.srtt(), Some(ms(100)));
        assert_eq!(e.rto(), ms(300));
    }

    #[test]
    fn the_deviation_rises_fast_and_falls_slowly() {
        let mut e = LinuxRtt::new(ms(1));
        e.sample(ms(100), 0, 10); // srtt 100, mdev 200 (4 × 50), rttvar 200; the round ends past 10
                                  // A sample 80 ms above SRTT: srtt = 110; mdev = 200 + (80 − 50) = 230 = RTTVAR at once.
        e.sample(ms(180), 5, 15);
        assert_eq!(e.srtt(), Some(ms(110)));
        assert_eq!(e.rto(), ms(110 + 230));
        // A sample 80 ms below SRTT: srtt = 100; |error| 80 − 230/4 = 22.5 ms, with gain 1/8
        // (1/32 overall): mdev = 232.8125 ms; RTO 332.8125 → 336 ms (whole jiffies).
        e.sample(ms(30), 8, 20);
        assert_eq!((e.srtt(), e.rto()), (Some(ms(100)), ms(336)));
        // The round ends (una 21 > 10) on a sample equal to SRTT: mdev falls by a quarter to
        // 174.609375, but RTTVAR keeps this round's largest, 232.8125: still 336 ms.
        e.sample(ms(100), 21, 30);
        assert_eq!(e.rto(), ms(336));
        // The next round's largest deviation is 130.957 ms: RTTVAR falls a quarter of the way
        // to it, 232.8125 − 25.464 = 207.349 ms; RTO 307.35 → 308 ms.
        e.sample(ms(100), 31, 40);
        assert_eq!(e.rto(), ms(308));
    }

    #[test]
    fn rtos_are_whole_jiffies() {
        assert_eq!(JIFFY, ms(4));
        assert_eq!(to_jiffies(Time(1)), ms(4));
        assert_eq!(to_jiffies(ms(8)), ms(8));
        let mut e = LinuxRtt::new(ms(200));
        e.sample(Time::from_us(101_000), 0, 10); // 101 + 202 = 303 ms → 304 ms
        assert_eq!(e.rto(), ms(304));
    }
}
