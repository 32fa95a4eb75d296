//! Round-trip time estimation and the retransmission timeout, RFC 6298.
//!
//! Read first: RFC 6298 §2–5. Owns srtt, rttvar and the backed-off RTO; must not know segments or
//! timers' events. A `tcp = "linux"` sender computes SRTT and RTTVAR as Linux does instead
//! ([`linux`]); the backoff (§5.5) and its end on a fresh sample (§5.7) are the same for both.

pub mod linux;

use self::linux::LinuxRtt;
use crate::units::Time;

#[derive(Clone, Debug)]
pub struct RttEstimator {
    srtt: Option<Time>,
    rttvar: Time,
    /// RTO before backoff.
    base_rto: Time,
    /// Number of times the timer has been doubled since the last valid sample.
    pub backoff: u32,
    min_rto: Time,
    max_rto: Time,
    granularity: Time,
    /// Linux's SRTT and RTTVAR in place of RFC 6298 §2's (None: the RFC's).
    linux: Option<Box<LinuxRtt>>,
}

impl RttEstimator {
    pub fn new(initial_rto: Time, min_rto: Time, max_rto: Time, granularity: Time) -> Self {
        RttEstimator {
            srtt: None,
            rttvar: Time::ZERO,
            // RFC 6298 §2.1: until a measurement is made, RTO = 1 s (configurable).
            base_rto: initial_rto,
            backoff: 0,
            min_rto,
            max_rto,
            granularity,
            linux: None,
        }
    }

    /// An estimator with Linux's rules ([`linux`]): the RTTVAR floor `min_rto`, whole jiffies.
    pub fn linux(initial_rto: Time, min_rto: Time, max_rto: Time) -> Self {
        let mut e = RttEstimator::new(initial_rto, min_rto, max_rto, linux::JIFFY);
        e.linux = Some(Box::new(LinuxRtt::new(min_rto)));
        e
    }

    pub fn srtt(&self) -> Option<Time> {
        self.srtt
    }

    /// Takes an RTT measurement R. The caller applies Karn's rule (RFC 6298 §3): samples
    /// never come from retransmitted segments.
    pub fn sample(&mut self, r: Time) {
        self.sample_at(r, 0, 0);
    }

    /// Takes an RTT measurement R when the cumulative ACK is `una` and the next segment to send
    /// is `nxt` (which Linux's estimator uses to tell round trips apart; RFC 6298's ignores them).
    pub fn sample_at(&mut self, r: Time, una: u32, nxt: u32) {
        if let Some(l) = &mut self.linux {
            l.sample(r, una, nxt);
            self.srtt = l.srtt();
            self.base_rto = l.rto().min(self.max_rto);
            self.backoff = 0;
            return;
        }
        match self.srtt {
            // RFC 6298 §2.2: first measurement.
            None => {
                self.srtt = Some(r);
                self.rttvar = Time(r.0 / 2);
            }
            // RFC 6298 §2.3: RTTVAR first (with the old SRTT), β = 1/4, α = 1/8.
            Some(srtt) => {
                let diff = srtt.0.abs_diff(r.0);
                self.rttvar = Time((3 * self.rttvar.0 + diff) / 4);
                self.srtt = Some(Time((7 * srtt.0 + r.0) / 8));
            }
        }
        let srtt = self.srtt.unwrap();
        // RFC 6298 §2.2/2.3: RTO = SRTT + max(G, K·RTTVAR), K = 4.
        let rto = srtt + self.granularity.max(Time(4 * self.rttvar.0));
        // §2.4: rounded up to the minimum (1 s in the RFC; 200 ms as in Linux by default).
        // §2.5: a maximum may be placed on RTO (at least 60 s).
        self.base_rto = rto.max(self.min_rto).min(self.max_rto);
        // §5.7: a new sample from a fresh segment ends the backoff.
        self.backoff = 0;
    }

    /// The current timeout, with exponential backoff applied (RFC 6298 §5.5).
    pub fn rto(&self) -> Time {
        let mut t = self.base_rto;
        for _ in 0..self.backoff {
            t = Time(t.0.saturating_mul(2));
            if t >= self.max_rto {
                return self.max_rto;
            }
        }
        t
    }

    /// Forgets the backoff and sets the RTO to `rto` until the next sample (RFC 6298 §5.7).
    pub fn restart_at(&mut self, rto: Time) {
        self.base_rto = rto.max(self.min_rto).min(self.max_rto);
        self.backoff = 0;
    }

    /// RFC 6298 §5.5: the timer expired, double the RTO ("back off the timer").
    pub fn back_off(&mut self) {
        if self.rto() < self.max_rto {
            self.backoff += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn est() -> RttEstimator {
        RttEstimator::new(Time::from_secs(1), Time::from_ms(200), Time::from_secs(60), Time::from_ms(1))
    }

    #[test]
    fn first_sample_sets_srtt_and_half_variance() {
        let mut e = est();
        assert_eq!(e.rto(), Time::from_secs(1));
        e.sample(Time::from_ms(100));
        assert_eq!(e.srtt(), Some(Time::from_ms(100)));
        // RTO = 100 + 4·50 = 300 ms.
        assert_eq!(e.rto(), Time::from_ms(300));
    }

    #[test]
    fn later_samples_use_the_rfc_gains() {
        let mut e = est();
        e.sample(Time::from_ms(100));
        e.sample(Time::from_ms(200));
        // RTTVAR = 3/4·50 + 1/4·100 = 62.5 ms; SRTT = 7/8·100 + 1/8·200 = 112.5 ms.
        assert_eq!(e.srtt(), Some(Time::from_us(112_500)));
        assert_eq!(e.rto(), Time::from_us(112_500 + 250_000));
    }

    #[test]
    fn backoff_doubles_until_a_fresh_sample() {
        let mut e = est();
        e.sample(Time::from_ms(100)); // 300 ms
        e.back_off();
        assert_eq!(e.rto(), Time::from_ms(600));
        e.back_off();
        assert_eq!(e.rto(), Time::from_ms(1200));
        e.sample(Time::from_ms(100));
        assert_eq!(e.backoff, 0);
        assert!(e.rto() < Time::from_ms(600));
    }

    #[test]
    fn minimum_and_maximum_bound_the_rto() {
        let mut e = est();
        e.sample(Time::from_us(100)); // 0.1 ms path: RTO would be ~1.1 ms
        assert_eq!(e.rto(), Time::from_ms(200));
        for _ in 0..20 {
            e.back_off();
        }
        assert_eq!(e.rto(), Time::from_secs(60));
    }
}
