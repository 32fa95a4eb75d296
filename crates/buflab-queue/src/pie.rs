//! PIE: Proportional Integral controller Enhanced (RFC 8033), dropping arrivals at random
//! with a probability that a PI controller on the queueing delay updates every T_UPDATE.
//!
//! Read first: the crate doc (this is an [`Admission`]: it decides at arrivals and the queue
//! stays FIFO), then RFC 8033 §4 (the algorithm: §4.1 random dropping, §4.2 the drop
//! probability, §4.3 the latency, §4.4 burst tolerance) and §5 (the optional parts this file
//! has: §5.1 ECN, §5.4 de-randomization, §5.5 the cap on the drop adjustment). Owns PIE's
//! state, its decision and its description; must not know links or the event loop.
//!
//! How it meets a link without a timer of its own: PIE updates its probability every
//! T_UPDATE (15 ms) on a timer. An admission is asked only at arrivals, so the updates due
//! since the last arrival run at the next one, each with the queueing delay as it was at
//! its own time. Between two arrivals the queue only drains, so that delay is known exactly:
//! the work the link had queued at the last arrival (`work_end`, when its last admitted packet
//! would finish), less the time gone by.
//!
//! The latency (§4.3): the link's departure rate is its rate, known exactly, so the queueing
//! delay is Little's law with no rate to estimate (§5.2's estimator is not needed): the wait
//! an arrival would have now, the rest of the packet in service and the bytes waiting at the
//! link's rate. (Linux's default, the sojourn time of the last packet dequeued, lags it by
//! that packet's wait.)
//!
//! The update (§4.2), with delays in seconds and α, β in 1/s:
//!
//! ```text
//!   p = α·(qdelay − QDELAY_REF) + β·(qdelay − qdelay_old)
//!   p /= 2048, 512, 128, 32, 8 or 2 while drop_prob < 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1
//!   p = min(p, 0.02) once drop_prob ≥ 0.1                      (§5.5, cap drop adjustment)
//!   drop_prob += p;  drop_prob *= 0.98 if qdelay and qdelay_old are both 0;  clamp to [0, 1]
//!   qdelay_old = qdelay;  burst_allowance −= T_UPDATE (not below 0)          (§4.4)
//! ```
//!
//! At an arrival (Appendix A's `enqueue`): the burst allowance is restored to MAX_BURST while
//! the probability is 0 and both delays are under half the target (§4.4); a full buffer drops
//! the arrival; otherwise, with no burst allowance left, `drop_early` (§4.1) admits it while
//! qdelay_old is under half the target and the probability under 0.2, or the queue holds at
//! most two typical packets, and drops it with probability drop_prob otherwise. With
//! `pie_ecn` an ECN-capable packet is marked instead while drop_prob is at most
//! `pie_mark_ecnth` (§5.1; Linux's rule). With `pie_derandomize` the drops are spaced by
//! accumulating the probability (§5.4): none while the sum is under 0.85, certain from 8.5.
//!
//! Deliberate differences from Linux's `sch_pie`: Linux adds 2 % to the probability when the
//! delay exceeds 250 ms (not in the RFC) and keeps its probability in fixed point; this uses
//! IEEE doubles (no libm), so runs are identical on every platform. Packet mode only (no
//! byte mode).

use buflab_base::rng::Rng;
use buflab_base::units::{Rate, Time};

use crate::aqm::{AqmCounts, Tally};
use crate::describe::{BuildAdmission, Described, LinkInfo, Param, ParamKind, Values};
use crate::{Admission, Arrival, Verdict};

/// PIE's settings (RFC 8033 §4 and §5).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PieConfig {
    /// QDELAY_REF: the target queueing delay (15 ms).
    pub target: Time,
    /// T_UPDATE: the period of the probability's update (15 ms).
    pub tupdate: Time,
    /// α and β, 1/s (1/8 and 1 + 1/4).
    pub alpha: f64,
    pub beta: f64,
    /// MAX_BURST: the burst allowance (150 ms).
    pub max_burst: Time,
    /// Mark ECN-capable packets instead of dropping them while the probability is at most
    /// `mark_ecnth` (§5.1).
    pub ecn: bool,
    pub mark_ecnth: f64,
    /// Space the drops by the accumulated probability (§5.4).
    pub derandomize: bool,
    /// MEAN_PKTSIZE, bytes: a queue of at most two is never dropped from (§4.1).
    pub mean_packet: u64,
}

/// A PIE queue's state (RFC 8033 Appendix A's status variables).
#[derive(Clone, Debug)]
pub struct Pie {
    cfg: PieConfig,
    rate: Rate,
    /// `drop_prob_`.
    pub drop_prob: f64,
    /// `qdelay_old_`: the queueing delay at the last update.
    pub qdelay_old: Time,
    /// `burst_allowance_`.
    pub burst_allowance: Time,
    /// `accu_prob_` (§5.4).
    pub accu_prob: f64,
    /// When the next update is due (updates run at T_UPDATE, 2·T_UPDATE, … from time 0).
    next_update: Time,
    /// When the work queued at the last arrival ends: the last admitted packet's end.
    work_end: Time,
    rng: Rng,
    tally: Tally,
    /// Updates in the measured window and their probabilities' sum and largest.
    updates: u64,
    prob_sum: f64,
    prob_max: f64,
}

impl Pie {
    /// A PIE queue for a link of `rate`, drawing from `rng` (the link's own stream).
    pub fn new(cfg: PieConfig, rate: Rate, rng: Rng) -> Pie {
        Pie {
            cfg,
            rate,
            drop_prob: 0.0,
            qdelay_old: Time::ZERO,
            burst_allowance: cfg.max_burst,
            accu_prob: 0.0,
            next_update: cfg.tupdate,
            work_end: Time::ZERO,
            rng,
            tally: Tally::default(),
            updates: 0,
            prob_sum: 0.0,
            prob_max: 0.0,
        }
    }

    /// One update of the drop probability with the queueing delay `qdelay` (RFC 8033 §4.2,
    /// §4.4, §5.5; the module doc).
    pub fn update(&mut self, qdelay: Time) {
        let c = &self.cfg;
        let (now_s, old_s, target_s) = (secs(qdelay), secs(self.qdelay_old), secs(c.target));
        let mut p = c.alpha * (now_s - target_s) + c.beta * (now_s - old_s);
        // §4.2: small steps while the probability is small, so that it can settle there.
        let prob = self.drop_prob;
        p /= if prob < 1e-6 {
            2048.0
        } else if prob < 1e-5 {
            512.0
        } else if prob < 1e-4 {
            128.0
        } else if prob < 1e-3 {
            32.0
        } else if prob < 1e-2 {
            8.0
        } else if prob < 1e-1 {
            2.0
        } else {
            1.0
        };
        // §5.5: once the probability is 10 % or more, no step up larger than 2 %.
        if prob >= 0.1 && p > 0.02 {
            p = 0.02;
        }
        self.drop_prob += p;
        // §4.2: decay quickly once the queue has been empty for two updates.
        if qdelay == Time::ZERO && self.qdelay_old == Time::ZERO {
            self.drop_prob *= 0.98;
        }
        self.drop_prob = self.drop_prob.clamp(0.0, 1.0);
        self.qdelay_old = qdelay;
        self.burst_allowance = self.burst_allowance.saturating_sub(c.tupdate);
    }

    /// Runs the updates due by `now` (at times up to and including it), each with the delay
    /// of the work queued at its own time.
    fn catch_up(&mut self, now: Time) {
        while self.next_update <= now {
            let t = self.next_update;
            let idle = self.work_end <= t;
            if idle && self.drop_prob == 0.0 && self.qdelay_old == Time::ZERO && self.burst_allowance == Time::ZERO {
                // Every update until `now` finds the queue empty and changes nothing:
                // α·(0 − target) < 0 keeps the probability at 0. Skip them, counting them.
                let skipped = (now - t).ps() / self.cfg.tupdate.ps() + 1;
                if self.tally.counts_at(t) {
                    self.updates += skipped;
                }
                self.next_update = Time(t.ps() + skipped * self.cfg.tupdate.ps());
                return;
            }
            self.update(self.work_end.saturating_sub(t));
            if self.tally.counts_at(t) {
                self.updates += 1;
                self.prob_sum += self.drop_prob;
                self.prob_max = self.prob_max.max(self.drop_prob);
            }
            self.next_update = t + self.cfg.tupdate;
        }
    }

    /// RFC 8033 §4.1 `drop_early` (with §5.4), for an arrival that finds `waiting_bytes`.
    fn drop_early(&mut self, waiting_bytes: u64) -> bool {
        let half = Time(self.cfg.target.ps() / 2);
        // Safeguards that keep PIE work-conserving.
        if (self.qdelay_old < half && self.drop_prob < 0.2) || waiting_bytes <= 2 * self.cfg.mean_packet {
            return false;
        }
        if self.cfg.derandomize {
            if self.drop_prob == 0.0 {
                self.accu_prob = 0.0;
            }
            self.accu_prob += self.drop_prob;
            if self.accu_prob < 0.85 {
                return false;
            }
            if self.accu_prob >= 8.5 {
                return true;
            }
        }
        self.rng.uniform() < self.drop_prob
    }
}

/// A time in seconds (IEEE division, exact for the binary fractions the tests use).
fn secs(t: Time) -> f64 {
    t.ps() as f64 / 1e12
}

impl Admission for Pie {
    fn on_arrival(&mut self, a: &Arrival) -> Verdict {
        let now = a.now;
        self.catch_up(now);
        // The wait this arrival would have (§4.3, module doc).
        // (On a timetable link `busy_until` already ends after the waiting packets; counting
        // them again made the simulator's PIE see twice its queue and hold about two thirds
        // of its target: 10 ms for 15, where ns-3's held 15.)
        let queued = if a.waiting_scheduled { Time::ZERO } else { self.rate.serialization(a.waiting_bytes) };
        let wait = a.busy_until.saturating_sub(now) + queued;
        let half = Time(self.cfg.target.ps() / 2);
        // §4.4 (Appendix A's enqueue): a quiet queue earns its burst allowance back.
        if self.drop_prob == 0.0 && wait < half && self.qdelay_old < half {
            self.burst_allowance = self.cfg.max_burst;
        }
        if a.full {
            self.tally.add(now, |k| k.overflow_drops += 1);
            self.accu_prob = 0.0;
            return Verdict::Drop;
        }
        let mut verdict = Verdict::Admit;
        if self.burst_allowance == Time::ZERO && self.drop_early(a.waiting_bytes) {
            if self.cfg.ecn && a.ect && self.drop_prob <= self.cfg.mark_ecnth {
                self.tally.add(now, |k| k.law_marks += 1);
                verdict = Verdict::Mark;
            } else {
                self.tally.add(now, |k| k.law_drops += 1);
                self.accu_prob = 0.0;
                return Verdict::Drop;
            }
        }
        self.work_end = now + wait + self.rate.serialization(a.size as u64);
        verdict
    }

    fn aqm_counts(&self) -> Option<AqmCounts> {
        let mut k = self.tally.counts;
        if self.updates > 0 {
            k.prob_mean = Some(self.prob_sum / self.updates as f64);
            k.prob_max = Some(self.prob_max);
        }
        Some(k)
    }

    fn count_from(&mut self, t: Time) {
        self.tally.count_from(t);
    }
}

impl Described for Pie {
    const NAME: &'static str = "pie";
    const LABEL: &'static str = "PIE";
    const DOC: &'static str = "PIE (RFC 8033): arrivals are dropped at random with a probability a PI controller raises and lowers every `pie_tupdate` from the queueing delay's distance to `pie_target` and its trend, after a burst allowance; with `pie_ecn`, ECN-capable ones are marked instead while the probability is low.";
    const PARAMS: &'static [Param] = &[
        Param { key: "pie_target", kind: ParamKind::Time, ty: "time", default: "\"15ms\"", doc: "PIE: QDELAY_REF, the target queueing delay (RFC 8033 §4.2: 15 ms)." },
        Param { key: "pie_tupdate", kind: ParamKind::Time, ty: "time", default: "\"15ms\"", doc: "PIE: T_UPDATE, the period of the drop probability's update (RFC 8033 §4.2: 15 ms)." },
        Param { key: "pie_alpha", kind: ParamKind::Positive, ty: "number (1/s)", default: "0.125", doc: "PIE: α, the weight of the delay's distance from the target in each update (RFC 8033 §4.2: 1/8), scaled down while the probability is small." },
        Param { key: "pie_beta", kind: ParamKind::Positive, ty: "number (1/s)", default: "1.25", doc: "PIE: β, the weight of the delay's change since the last update (RFC 8033 §4.2: 1 + 1/4)." },
        Param { key: "pie_max_burst", kind: ParamKind::Time, ty: "time", default: "\"150ms\"", doc: "PIE: MAX_BURST, the burst allowance: no random drop until it has run down, one T_UPDATE per update, after the queue was quiet (RFC 8033 §4.4: 150 ms)." },
        Param { key: "pie_ecn", kind: ParamKind::Bool, ty: "boolean", default: "false", doc: "PIE: mark ECN-capable packets (of flows with `ecn = true`) instead of dropping them while the drop probability is at most `pie_mark_ecnth` (RFC 8033 §5.1); above it they are dropped too." },
        Param { key: "pie_mark_ecnth", kind: ParamKind::PositiveFraction, ty: "number", default: "0.1", doc: "PIE: the drop probability up to which ECN-capable packets are marked rather than dropped (RFC 8033 §5.1: 10 %)." },
        Param { key: "pie_derandomize", kind: ParamKind::Bool, ty: "boolean", default: "false", doc: "PIE: space drops by the accumulated probability instead of independent draws: none while it sums to under 0.85, certain once it reaches 8.5 (RFC 8033 §5.4)." },
    ];
}

impl PieConfig {
    /// The configuration its parameters give, for a link whose typical packet is `packet` B.
    pub fn from_values(v: &Values, packet: u32) -> PieConfig {
        PieConfig {
            target: v.time("pie_target"),
            tupdate: v.time("pie_tupdate"),
            alpha: v.number("pie_alpha"),
            beta: v.number("pie_beta"),
            max_burst: v.time("pie_max_burst"),
            ecn: v.boolean("pie_ecn"),
            mark_ecnth: v.number("pie_mark_ecnth"),
            derandomize: v.boolean("pie_derandomize"),
            mean_packet: packet as u64,
        }
    }
}

impl BuildAdmission for Pie {
    fn build(values: &Values, link: LinkInfo, rng: Rng) -> Box<dyn Admission> {
        Box::new(Pie::new(PieConfig::from_values(values, link.packet), link.rate, rng))
    }
}

#[cfg(test)]
mod tests {
    //! The update by hand, exactly: QDELAY_REF = 1/64 s and delays in 64ths of a second are
    //! whole picoseconds whose value in seconds is a binary fraction, and α = 1/8, β = 5/4, so
    //! every step below is exact and compared with `==`.
    use super::*;
    use crate::Limit;
    use buflab_base::rng::Stream;

    const SIXTY_FOURTH: u64 = 15_625_000_000; // 1/64 s in ps

    fn cfg() -> PieConfig {
        PieConfig {
            target: Time(SIXTY_FOURTH),
            tupdate: Time(SIXTY_FOURTH),
            alpha: 0.125,
            beta: 1.25,
            max_burst: Time(4 * SIXTY_FOURTH),
            ecn: false,
            mark_ecnth: 0.1,
            derandomize: false,
            mean_packet: 1000,
        }
    }

    fn pie() -> Pie {
        Pie::new(cfg(), Rate::bps(8_000_000), Rng::stream(1, Stream::Queue, 0))
    }

    fn d(k: u64) -> Time {
        Time(k * SIXTY_FOURTH)
    }

    #[test]
    fn the_probability_update_follows_rfc_8033_exactly() {
        let mut p = pie();
        // qdelay 2/64 s from 0: p = (1/8)(1/64) + (5/4)(2/64) = 21/512; drop_prob < 1e-6:
        // divided by 2048.
        p.update(d(2));
        assert_eq!(p.drop_prob, 21.0 / 1_048_576.0);
        assert_eq!(p.qdelay_old, d(2));
        // qdelay 4/64: p = (1/8)(3/64) + (5/4)(2/64) = 23/512; drop_prob ≈ 2.0e-5 is in
        // [1e-5, 1e-4): divided by 128.
        p.update(d(4));
        assert_eq!(p.drop_prob, 21.0 / 1_048_576.0 + 23.0 / 65_536.0);
        // In [1e-4, 1e-3): divided by 32. qdelay 4/64 again: p = (1/8)(3/64) = 3/512.
        let before = p.drop_prob;
        p.update(d(4));
        assert_eq!(p.drop_prob, before + 3.0 / 16_384.0);
        // Above 10 % the step up is capped at 2 % (§5.5); below 10 %, halved.
        p.drop_prob = 0.5;
        p.update(d(40));
        assert_eq!(p.drop_prob, 0.5 + 0.02);
        p.drop_prob = 0.0625;
        p.qdelay_old = d(1);
        p.update(d(2)); // p = (1/8)(1/64) + (5/4)(1/64) = 11/512, halved
        assert_eq!(p.drop_prob, 0.0625 + 11.0 / 1024.0);
        // Two empty updates in a row: the step (negative) and then the 0.98 decay.
        p.drop_prob = 0.25;
        p.qdelay_old = Time::ZERO;
        p.update(Time::ZERO);
        assert_eq!(p.drop_prob, (0.25 - 0.125 / 64.0) * 0.98);
        // Clamped at 0 and at 1.
        p.drop_prob = 1e-7;
        p.update(Time::ZERO);
        assert_eq!(p.drop_prob, 0.0);
        p.drop_prob = 0.99;
        p.update(d(100));
        assert_eq!(p.drop_prob, 1.0);
    }

    #[test]
    fn the_burst_allowance_runs_down_one_update_at_a_time() {
        let mut p = pie();
        assert_eq!(p.burst_allowance, d(4));
        for left in [3, 2, 1, 0, 0] {
            p.update(d(8));
            assert_eq!(p.burst_allowance, d(left));
        }
    }

    /// Updates run lazily at arrivals, each with the delay of the work queued at its time: a
    /// link of 8 Mb/s (1 ms per 1000-B packet) given 40 packets at once has 40 ms of work;
    /// the updates at 1/64 s and 2/64 s see 40 − 15.625 and 40 − 31.25 ms.
    #[test]
    fn updates_between_arrivals_see_the_queue_draining() {
        let mut p = pie();
        let ms = Time::from_ms(1);
        for k in 0..40u64 {
            // The first goes straight into service (1 ms); the k-th finds k − 1 waiting.
            let (waiting, busy) = (k.saturating_sub(1), if k == 0 { Time::ZERO } else { ms });
            let a = Arrival::new(Time::ZERO, waiting, waiting * 1000, busy, Limit::Unlimited, 1000, false);
            assert_eq!(p.on_arrival(&a), Verdict::Admit, "within the burst allowance");
        }
        assert_eq!(p.work_end, Time::from_ms(40));
        let mut expect = pie();
        expect.update(Time::from_ms(40) - d(1));
        expect.update(Time::from_ms(40) - d(2));
        let late = Arrival::new(d(2) + Time(1), 0, 0, Time::ZERO, Limit::Unlimited, 1000, false);
        p.on_arrival(&late);
        assert_eq!((p.drop_prob, p.qdelay_old), (expect.drop_prob, expect.qdelay_old));
        assert_eq!(p.next_update, d(3));
    }

    /// The same 40 packets at a timetable link (the simulator's), whose `busy_until` ends
    /// after every admitted packet: the same 40 ms of work, not the waiting packets twice.
    #[test]
    fn a_timetable_links_booked_work_is_counted_once() {
        let mut p = pie();
        let ms = Time::from_ms(1);
        for k in 0..40u64 {
            let (waiting, busy) = (k.saturating_sub(1), Time(ms.ps() * k));
            let a = Arrival::new(Time::ZERO, waiting, waiting * 1000, busy, Limit::Unlimited, 1000, false)
                .with_waiting_scheduled();
            assert_eq!(p.on_arrival(&a), Verdict::Admit);
        }
        assert_eq!(p.work_end, Time::from_ms(40));
    }

    /// With the probability high and the allowance spent, the drop rate is the probability
    /// (fixed seed; binomial, 5 σ); with ECN an ECT packet is marked while p ≤ 10 %.
    #[test]
    fn drops_at_the_probability_and_marks_below_the_ecn_threshold() {
        let busy = Time::from_secs(1000);
        let at = |ect| Arrival::new(Time::ZERO, 50, 50_000, busy, Limit::Unlimited, 1000, ect);
        let mut p = pie();
        (p.drop_prob, p.qdelay_old, p.burst_allowance) = (0.3, d(10), Time::ZERO);
        let n = 20_000;
        let drops = (0..n).filter(|_| p.on_arrival(&at(false)) == Verdict::Drop).count() as f64;
        let sd = (n as f64 * 0.3 * 0.7).sqrt();
        assert!((drops - 0.3 * n as f64).abs() < 5.0 * sd, "{drops} drops of {n}");
        let mut p = Pie::new(PieConfig { ecn: true, ..cfg() }, Rate::bps(8_000_000), Rng::stream(1, Stream::Queue, 0));
        (p.drop_prob, p.qdelay_old, p.burst_allowance) = (0.3, d(10), Time::ZERO);
        assert!((0..100).all(|_| p.on_arrival(&at(true)) != Verdict::Mark), "p above 10 %: no marks");
        p.drop_prob = 0.1;
        let marks = (0..2000).filter(|_| p.on_arrival(&at(true)) == Verdict::Mark).count();
        assert!(marks > 100 && p.aqm_counts().unwrap().law_marks == marks as u64);
    }

    /// De-randomization (§5.4): at p = 0.25 a drop needs the sum to reach 0.85 first (the
    /// 4th arrival), and comes for certain once it reaches 8.5.
    #[test]
    fn derandomized_drops_wait_for_the_accumulated_probability() {
        let busy = Time::from_secs(1000);
        let at = Arrival::new(Time::ZERO, 50, 50_000, busy, Limit::Unlimited, 1000, false);
        let mut p = Pie::new(PieConfig { derandomize: true, ..cfg() }, Rate::bps(8_000_000), Rng::stream(1, Stream::Queue, 0));
        (p.drop_prob, p.qdelay_old, p.burst_allowance) = (0.25, d(10), Time::ZERO);
        let first: Vec<Verdict> = (0..3).map(|_| p.on_arrival(&at)).collect();
        assert_eq!(first, vec![Verdict::Admit; 3], "sums 0.25, 0.5, 0.75: under 0.85");
        p.accu_prob = 8.25;
        assert_eq!(p.on_arrival(&at), Verdict::Drop, "8.5 reached: certain");
        assert_eq!(p.accu_prob, 0.0);
    }
}
