//! RED: Random Early Detection gateways (Floyd & Jacobson, IEEE/ACM ToN 1(4), 1993), with the
//! "gentle" variant and ECN marking (RFC 3168).
//!
//! Owns RED's average, its drop and mark decisions and its description for scenario files; must not
//! know links, packets' other fields or the event loop (an [`Arrival`] is all it sees).
//!
//! Heads up: read the paper's §4 (the algorithm of its Fig. 2) and §7 (spreading the marks
//! out with `count`), Floyd's note on `gentle_` RED (2000), and RFC 3168 §5 and §7 before
//! editing; [`crate`] says how a discipline plugs into a link.
//!
//! On each arrival RED updates the average queue `avg`, an EWMA of the instantaneous queue
//! `q` with weight `w_q`, and decides:
//!
//! ```text
//!   avg < min_th                   admit                          (count ← −1)
//!   min_th ≤ avg < max_th          p_b = max_p·(avg − min_th)/(max_th − min_th)
//!   max_th ≤ avg < 2·max_th        gentle only: p_b = max_p + (1 − max_p)·(avg − max_th)/max_th
//!        in both ramps:            count ← count + 1; p_a = p_b / (1 − count·p_b);
//!                                  with probability p_a mark (ECT, `ecn`) or drop, count ← 0
//!   above the top                  drop every arrival             (count ← 0)
//! ```
//!
//! where the top is `max_th`, or `2·max_th` when gentle. `count` spreads the marks out
//! (paper §7): at a steady p_b with 1/p_b whole, the gap between marks is uniform on
//! 1 … 1/p_b − 1 arrivals instead of geometric, so marks do not cluster. (Fig. 2 resets `count`
//! to 0 at a mark and increments it before use, so the arrival after a mark already has
//! count 1, and the (1/p_b − 1)-th is certain; §7's analysis, counting only the arrivals
//! before it, says 1 … 1/p_b. This follows Fig. 2, as ns-2 does.)
//!
//! Units: the queue and the thresholds are in packets (the packets *waiting*, not the one in
//! service, as the link's buffer limit counts them); probabilities are fractions.
//!
//! Deliberate choices and deviations, each against the paper and ns-2's `REDQueue`:
//! - **Packet mode only.** The paper's byte mode (p_b scaled by size ÷ maximum size) is left
//!   out: the seeds' traffic has one data packet size.
//! - **Idle periods, as the paper writes them.** When an arrival finds the link idle (the
//!   queue empty and nothing in service), `avg ← (1 − w_q)^m · avg` with m = ⌊idle time ÷ s⌋,
//!   s the transmission time of a typical packet: the largest data packet of the scenario's
//!   traffic at the link's rate (ns-2's `mean_pktsize_`). m is whole, as ns-2 truncates it;
//!   ns-2 then also applies one ordinary update with q = 0, one more factor (1 − w_q) that the
//!   paper does not have. An arrival while a packet is in service is an ordinary update, even
//!   with nothing waiting (q = 0), as in ns-2.
//! - **The hard limit first.** An arrival that finds the buffer full is dropped without a
//!   random draw, and resets `count` to 0 (it is a drop; ns-2 resets it too, after making
//!   its RED decision first). Its arrival still updates `avg`.
//! - **ECN** (RFC 3168 §5): with `ecn`, an ECT packet picked by either ramp is marked CE
//!   instead of dropped; a non-ECT packet is dropped as usual. Above the top every arrival is
//!   dropped, ECT or not: RFC 3168 §7 has an ECN router drop rather than mark once the average
//!   queue exceeds the maximum threshold, which bounds the queue that flows ignoring CE can
//!   build (RFC 7567 §4.2.1 likewise falls back to drop under overload). The gentle ramp
//!   still marks, as in ns-2 and Linux's `sch_red` (whose default also marks above the top
//!   unless `harddrop` is set; ns-2 drops there, as here).
//! - Exponentiation is repeated squaring on IEEE doubles, not `powf`, so runs are identical
//!   on every platform (STYLE: no libm in model code).

use buflab_base::rng::Rng;
use buflab_base::units::Rate;

use crate::describe::{BuildAdmission, Described, LinkInfo, Param, ParamError, ParamKind, Value, Values};
use crate::{Admission, Arrival, Limit, Time, Verdict};

/// RED's parameters, as the scenario gives them (`network.bottleneck.red_*`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RedConfig {
    /// min_th: below this average queue nothing is marked or dropped early; packets.
    pub min_th: f64,
    /// max_th: the probability ramp reaches `max_p` here; packets.
    pub max_th: f64,
    /// max_p: p_b at avg = max_th, a fraction in (0, 1].
    pub max_p: f64,
    /// w_q: the EWMA weight of the newest queue sample, in (0, 1].
    pub weight: f64,
    /// Gentle RED: p_b rises from max_p to 1 between max_th and 2·max_th instead of jumping.
    pub gentle: bool,
    /// Mark ECN-capable packets (CE) instead of dropping them early (RFC 3168 §5).
    pub ecn: bool,
    /// Size of a typical packet on the wire, bytes: its transmission time is the unit of
    /// idle time in the idle rule.
    pub packet: u32,
}

/// Decisions over the whole run, by kind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RedStats {
    /// Dropped by a ramp's random decision.
    pub early_drops: u64,
    /// ECT packets marked CE by a ramp's random decision.
    pub marks: u64,
    /// Dropped because avg was above the top.
    pub forced_drops: u64,
    /// Dropped because the buffer was full.
    pub overflows: u64,
}

/// A RED queue's state.
#[derive(Clone, Debug)]
pub struct Red {
    cfg: RedConfig,
    /// s of the idle rule: the typical packet's transmission time at the link's rate, ps (≥ 1).
    typical: Time,
    /// avg: the EWMA average queue, packets.
    pub avg: f64,
    /// count: arrivals in a ramp since the last mark or drop; −1 while avg < min_th (paper
    /// Fig. 2's initial value).
    pub count: i64,
    rng: Rng,
    pub stats: RedStats,
}

impl Red {
    /// A RED queue for a link of `rate`, drawing from `rng` (the link's own stream).
    pub fn new(cfg: RedConfig, rate: Rate, rng: Rng) -> Red {
        let typical = Time(rate.serialization(cfg.packet.max(1) as u64).0.max(1));
        Red { cfg, typical, avg: 0.0, count: -1, rng, stats: RedStats::default() }
    }

    pub fn config(&self) -> &RedConfig {
        &self.cfg
    }

    /// Where the forced-drop region starts: max_th, or 2·max_th when gentle; packets.
    pub fn top(&self) -> f64 {
        if self.cfg.gentle {
            2.0 * self.cfg.max_th
        } else {
            self.cfg.max_th
        }
    }

    /// The average queue at an arrival at `now` (paper Fig. 2, "calculate the new average
    /// queue size avg").
    pub fn update_average(&mut self, now: Time, waiting: u64, busy_until: Time) {
        let w = self.cfg.weight;
        if busy_until > now {
            // Paper §4, eq. of Fig. 2: avg ← (1 − w_q)·avg + w_q·q.
            self.avg = (1.0 - w) * self.avg + w * waiting as f64;
        } else {
            // Paper §4, the queue is empty: avg ← (1 − w_q)^m · avg, m the number of typical
            // packets the link could have sent while idle.
            let m = (now - busy_until).0 / self.typical.0;
            self.avg *= pow(1.0 - w, m);
        }
    }

    /// The decision at the current `avg` for a packet that the buffer has room for.
    pub fn decide(&mut self, ect: bool) -> Verdict {
        let avg = self.avg;
        if avg < self.cfg.min_th {
            self.count = -1;
            return Verdict::Admit;
        }
        if avg >= self.top() {
            // Above the top: every arrival is dropped, ECT or not (module doc, RFC 3168 §7).
            self.count = 0;
            self.stats.forced_drops += 1;
            return Verdict::Drop;
        }
        self.count += 1;
        let p_a = Self::p_a(self.p_b(avg), self.count);
        // Paper Fig. 2: "with probability p_a mark the arriving packet".
        if p_a < 1.0 && !self.rng.bernoulli(p_a) {
            return Verdict::Admit;
        }
        self.count = 0;
        if self.cfg.ecn && ect {
            self.stats.marks += 1;
            Verdict::Mark
        } else {
            self.stats.early_drops += 1;
            Verdict::Drop
        }
    }

    /// p_b at an average queue `avg` in a ramp, min_th ≤ avg < top: paper Fig. 2 below
    /// max_th, and from there the gentle ramp from max_p up to 1 at 2·max_th.
    pub fn p_b(&self, avg: f64) -> f64 {
        let c = &self.cfg;
        if avg < c.max_th {
            c.max_p * (avg - c.min_th) / (c.max_th - c.min_th)
        } else {
            c.max_p + (1.0 - c.max_p) * (avg - c.max_th) / c.max_th
        }
    }

    /// p_a = p_b / (1 − count·p_b) (paper Fig. 2 and §7, "method 2"): the chance grows with
    /// each unmarked arrival, so the gap between marks is uniform (module doc). Certain once
    /// count·p_b reaches 1.
    pub fn p_a(p_b: f64, count: i64) -> f64 {
        let spent = count as f64 * p_b;
        if spent >= 1.0 {
            1.0
        } else {
            p_b / (1.0 - spent)
        }
    }
}

impl Admission for Red {
    /// One arrival: updates `avg`, then decides (see the module doc).
    #[inline]
    fn on_arrival(&mut self, a: &Arrival) -> Verdict {
        self.update_average(a.now, a.waiting, a.busy_until);
        if a.full {
            self.count = 0;
            self.stats.overflows += 1;
            return Verdict::Drop;
        }
        self.decide(a.ect)
    }
}

impl Described for Red {
    const NAME: &'static str = "red";
    const LABEL: &'static str = "RED";
    const DOC: &'static str = "Random Early Detection (Floyd & Jacobson 1993) on the average queue in packets, set by the `red_*` keys, dropping arrivals early at random or, with `red_ecn`, marking ECN-capable ones.";
    const PARAMS: &'static [Param] = &[
        Param { key: "red_min_th", kind: ParamKind::Packets, ty: "number (packets)", default: "5", doc: "RED: min_th. While the average queue is below it nothing is dropped or marked early (ns-2's `thresh_`). At least 0 and below `red_max_th`." },
        Param { key: "red_max_th", kind: ParamKind::Packets, ty: "number (packets)", default: "15", doc: "RED: max_th. The early-drop probability rises linearly from 0 at min_th to `red_max_p` here (ns-2's `maxthresh_`); above it (with `red_gentle`, above 2 × max_th) every arrival is dropped. At most `buffer` when the buffer is in packets." },
        Param { key: "red_max_p", kind: ParamKind::PositiveFraction, ty: "number", default: "0.1", doc: "RED: max_p, the early-drop (or mark) probability at max_th, above 0 and at most 1 (ns-2: 1 / `linterm_` = 1/10). Drops are spread out by the paper's `count`: at a steady probability p the gap between two is uniform on 1 … 1/p − 1 arrivals, so about 2p of the arrivals are dropped." },
        Param { key: "red_weight", kind: ParamKind::PositiveFraction, ty: "number", default: "0.002", doc: "RED: w_q, the weight of the newest sample in the average queue, avg ← (1 − w_q)·avg + w_q·q at each arrival (ns-2's `q_weight_`); above 0, at most 1. An arrival at an idle link instead decays it as m samples of an empty queue would, avg ← (1 − w_q)^m·avg, m = the idle time ÷ the transmission time of the largest data packet of the traffic." },
        Param { key: "red_gentle", kind: ParamKind::Bool, ty: "boolean", default: "true", doc: "RED: gentle RED (ns-2's default): between max_th and 2 × max_th the probability rises from max_p to 1 instead of jumping to 1 at max_th." },
        Param { key: "red_ecn", kind: ParamKind::Bool, ty: "boolean", default: "false", doc: "RED: mark ECN-capable packets (of flows with `ecn = true`) Congestion Experienced instead of dropping them early (RFC 3168). Other packets are still dropped, and above the top of the ramp (max_th, or 2 × max_th when gentle) or with the buffer full every arrival is dropped (RFC 3168 §7). Marks are counted apart from drops (`marks`, `mark_rate`)." },
    ];

    /// min_th < max_th (the error names the key the user gave: the upper threshold if both or
    /// neither), and max_th within a buffer counted in packets, which stays the hard limit.
    fn check(v: &Values, limit: Limit) -> Result<(), ParamError> {
        let (min, max) = (v.number("red_min_th"), v.number("red_max_th"));
        if min >= max {
            return Err(if v.given("red_max_th") || !v.given("red_min_th") {
                let expected = format!("a number of packets above red_min_th ({min})");
                ParamError { key: "red_max_th", got: Value::Number(max), expected }
            } else {
                let expected = format!("a number of packets below red_max_th ({max})");
                ParamError { key: "red_min_th", got: Value::Number(min), expected }
            });
        }
        if let Limit::Packets(b) = limit {
            if max > b as f64 {
                let expected = format!("at most the buffer ({b} packets), which stays the hard limit");
                return Err(ParamError { key: "red_max_th", got: Value::Number(max), expected });
            }
        }
        Ok(())
    }
}

impl RedConfig {
    /// The configuration its parameters give, for a link whose typical packet is `packet` B.
    pub fn from_values(v: &Values, packet: u32) -> RedConfig {
        RedConfig {
            min_th: v.number("red_min_th"),
            max_th: v.number("red_max_th"),
            max_p: v.number("red_max_p"),
            weight: v.number("red_weight"),
            gentle: v.boolean("red_gentle"),
            ecn: v.boolean("red_ecn"),
            packet,
        }
    }
}

impl BuildAdmission for Red {
    fn build(values: &Values, link: LinkInfo, rng: Rng) -> Box<dyn Admission> {
        Box::new(Red::new(RedConfig::from_values(values, link.packet), link.rate, rng))
    }
}

/// x^m by repeated squaring: IEEE multiplications only, hence the same on every platform.
fn pow(mut x: f64, mut m: u64) -> f64 {
    let mut r = 1.0;
    while m > 0 {
        if m & 1 == 1 {
            r *= x;
        }
        x *= x;
        m >>= 1;
    }
    r
}

#[cfg(test)]
mod tests {
    //! Exact arithmetic where the formula allows it: the parameters are binary fractions
    //! (w_q = 1/4, max_p = 1/4, thresholds 4 and 12), so every value below is exact and
    //! compared with `==`.
    use super::*;
    use buflab_base::rng::Stream;

    /// 8000 b/s: a 1000-B typical packet takes exactly 1 s to send.
    const RATE: Rate = Rate(8_000);

    fn cfg(gentle: bool, ecn: bool) -> RedConfig {
        RedConfig { min_th: 4.0, max_th: 12.0, max_p: 0.25, weight: 0.25, gentle, ecn, packet: 1000 }
    }

    fn red(gentle: bool, ecn: bool) -> Red {
        Red::new(cfg(gentle, ecn), RATE, Rng::stream(1, Stream::Queue, 0))
    }

    #[test]
    fn ewma_follows_the_queue_while_the_link_is_busy() {
        // Busy link (service ends at 100 s): avg ← 3/4·avg + 1/4·q, worked by hand.
        let mut r = red(true, false);
        let busy = Time::from_secs(100);
        r.update_average(Time::ZERO, 4, busy);
        assert_eq!(r.avg, 1.0); // 0·3/4 + 4/4
        r.update_average(Time::ZERO, 8, busy);
        assert_eq!(r.avg, 2.75); // 3/4 + 2
                                 // A packet in service with none waiting is an ordinary sample of q = 0.
        r.update_average(Time::ZERO, 0, busy);
        assert_eq!(r.avg, 2.0625); // 2.75·3/4
    }

    #[test]
    fn idle_period_decays_the_average_by_one_factor_per_typical_packet() {
        let mut r = red(true, false);
        r.avg = 2.75;
        // Idle since 10 s, arrival at 12.5 s: m = ⌊2.5 s ÷ 1 s⌋ = 2, avg·(3/4)² = 2.75·9/16.
        r.update_average(Time::from_ms(12_500), 0, Time::from_secs(10));
        assert_eq!(r.avg, 1.546875);
        // An arrival the instant the link goes idle: m = 0, avg unchanged (no q = 0 sample).
        r.update_average(Time::from_secs(20), 0, Time::from_secs(20));
        assert_eq!(r.avg, 1.546875);
        // A long silence empties the average (m = 10⁶: 0.75^10⁶ underflows to 0).
        r.update_average(Time::from_secs(1_000_020), 0, Time::from_secs(20));
        assert_eq!(r.avg, 0.0);
    }

    #[test]
    fn pow_is_exact_repeated_squaring() {
        assert_eq!(pow(0.75, 0), 1.0);
        assert_eq!(pow(0.75, 1), 0.75);
        assert_eq!(pow(0.75, 2), 0.5625);
        assert_eq!(pow(0.5, 10), 1.0 / 1024.0);
        assert_eq!(pow(0.5, 2000), 0.0); // underflows, as 0.5^2000 must
    }

    #[test]
    fn drop_probability_ramps_match_the_formulas() {
        let r = red(false, false);
        // Linear ramp: p_b = 1/4·(avg − 4)/8.
        for (avg, p_b) in [(4.0, 0.0), (6.0, 0.0625), (8.0, 0.125), (10.0, 0.1875), (11.0, 0.21875)] {
            assert_eq!(r.p_b(avg), p_b, "avg {avg}");
            assert_eq!(r.p_b(avg), 0.25 * (avg - 4.0) / 8.0);
        }
        assert_eq!(r.top(), 12.0);
        // Gentle: from max_p at max_th to 1 at 2·max_th: p_b = 1/4 + 3/4·(avg − 12)/12.
        let g = red(true, false);
        assert_eq!(g.top(), 24.0);
        for (avg, p_b) in [(12.0, 0.25), (15.0, 0.4375), (18.0, 0.625), (21.0, 0.8125), (23.0, 0.9375)] {
            assert_eq!(g.p_b(avg), p_b, "avg {avg}");
        }
        // Below max_th the gentle ramp is the linear one.
        assert_eq!(g.p_b(6.0), 0.0625);
    }

    #[test]
    fn count_spreads_marks_out() {
        // p_a = p_b / (1 − count·p_b) with p_b = 1/16: the 16th arrival of a run is certain.
        assert_eq!(Red::p_a(0.0625, 0), 0.0625);
        assert_eq!(Red::p_a(0.0625, 8), 0.125);
        assert_eq!(Red::p_a(0.0625, 12), 0.25);
        assert_eq!(Red::p_a(0.0625, 15), 1.0);
        assert_eq!(Red::p_a(0.0625, 16), 1.0);
        assert_eq!(Red::p_a(0.0625, 40), 1.0);
    }

    #[test]
    fn regions_admit_ramp_and_force() {
        let mut r = red(false, true);
        // Below min_th: admitted, count −1.
        r.avg = 3.999;
        assert_eq!(r.decide(true), Verdict::Admit);
        assert_eq!(r.count, -1);
        // At and above max_th without gentle: forced drop, even an ECT packet with ECN on.
        r.avg = 12.0;
        assert_eq!(r.decide(true), Verdict::Drop);
        assert_eq!((r.count, r.stats.forced_drops), (0, 1));
        // Gentle: 12 is inside the ramp, 24 is the top.
        let mut g = red(true, true);
        g.avg = 24.0;
        assert_eq!(g.decide(true), Verdict::Drop);
        assert_eq!(g.stats.forced_drops, 1);
        g.avg = 23.99;
        g.count = 100; // certain: count·p_b ≥ 1
        assert_eq!(g.decide(true), Verdict::Mark);
        assert_eq!((g.count, g.stats.marks), (0, 1));
        g.count = 100;
        assert_eq!(g.decide(false), Verdict::Drop, "a non-ECT packet is dropped, not marked");
        assert_eq!(g.stats.early_drops, 1);
    }

    #[test]
    fn a_full_buffer_drops_without_a_draw_and_resets_count() {
        let mut r = red(true, true);
        r.count = 5;
        let busy = Time::from_secs(100);
        let a = Arrival::new(Time::ZERO, 8, 8000, busy, crate::Limit::Packets(8), 1000, true);
        assert!(a.full);
        assert_eq!(r.on_arrival(&a), Verdict::Drop);
        assert_eq!((r.count, r.avg, r.stats.overflows), (0, 2.0, 1));
        // The stream was not touched: the next draw is the stream's first.
        assert_eq!(r.rng.next_u64(), Rng::stream(1, Stream::Queue, 0).next_u64());
    }

    #[test]
    fn early_drop_rate_at_a_fixed_average_matches_uniform_spacing() {
        // avg = 8 gives p_b = 1/8. After a drop the k-th arrival has count k and
        // p_a = p_b/(1 − k·p_b), so the gap X to the next drop has
        // P(X = n) = p_b/(1 − p_b) = 1/7 for n = 1..7 (the product telescopes), and the 7th is
        // certain: E[X] = 4, and the fraction of arrivals dropped is 1/4 — twice p_b, the
        // price of spreading the drops evenly. (Only the first gap, entering the ramp from
        // below with count −1, is uniform on 1..8; it moves the total by under one drop.)
        let mut r = red(false, false);
        let n = 90_000u64;
        let (mut drops, mut gap, mut longest) = (0u64, 0u64, 0u64);
        let mut gaps = [0u64; 9];
        for _ in 0..n {
            r.avg = 8.0;
            gap += 1;
            if r.decide(false) == Verdict::Drop {
                drops += 1;
                longest = longest.max(gap);
                gaps[gap as usize] += 1;
                gap = 0;
            }
        }
        assert_eq!(r.stats.early_drops, drops);
        // Exact: after the first drop no gap exceeds 7 (p_a = 1 at count 7).
        assert_eq!(gaps[8], 0);
        assert_eq!(longest, 7);
        // Statistical, fixed seed: expected n/4 = 22,500 drops. Even spacing makes the count
        // less variable than independent draws, so the binomial standard deviation
        // √(n·¼·¾) = 129.9 is an upper bound; 5 of them (±650, ±0.7 % of the rate) is a
        // tolerance a correct implementation cannot plausibly miss, and a geometric spacing
        // (rate 1/8) or the §7 count (rate 2/9: 20,000) misses it by far.
        let expected = n as f64 / 4.0;
        let sd = (n as f64 * 0.25 * 0.75).sqrt();
        let tolerance = 5.0 * sd;
        assert!(
            (drops as f64 - expected).abs() < tolerance,
            "{drops} drops, expected {expected} ± {tolerance:.0}"
        );
        // Each gap length 1..7 takes 1/7 of the drops: binomial counts, 5 σ each (±213).
        for (len, &k) in gaps.iter().enumerate().take(8).skip(1) {
            let e = drops as f64 / 7.0;
            let sd = (drops as f64 * (1.0 / 7.0) * (6.0 / 7.0)).sqrt();
            assert!((k as f64 - e).abs() < 5.0 * sd, "gap {len}: {k} of {drops}");
        }
    }
}
