//! Step marking: an arrival is marked Congestion Experienced when the queue it finds holds at
//! least K, DCTCP's switch rule (RFC 8257 §3.1; Alizadeh et al., "Data Center TCP", SIGCOMM
//! 2010, §3.1), with K in packets or bytes.
//!
//! Read first: the crate doc (this is an [`Admission`]). Owns the rule and its description;
//! must not know links or the event loop. A DCTCP sender (`buflab-core`'s `tcp::cc::dctcp`)
//! reads the fraction of its packets marked this way as the extent of congestion.
//!
//! The rule, in the contract's terms: an arrival that finds the buffer full is dropped (an
//! overflow); otherwise an ECN-capable (ECT) arrival that finds `mark_threshold` or more
//! waiting (packets, or bytes, as the threshold is given; the packet in service not counted,
//! as the buffer counts) is admitted with CE; everything else is admitted. The comparison is
//! "at least K", as Linux's and ns-3's RED configured as a step (min = max = K, instantaneous
//! queue) mark; the DCTCP paper's "greater than K" counts the queue with the arrival in it,
//! which is the same rule for packets. A packet that is not ECN-capable is never dropped
//! early: only the buffer drops it.
//!
//! L4S (RFC 9330 §4, RFC 9331): with `mark_ect1_only`, only arrivals whose ECN field is
//! ECT(1), the L4S identifier, are marked at K — a shallow threshold for scalable congestion
//! controls such as DCTCP or Prague — while ECT(0) and non-ECT packets see a plain drop-tail
//! queue, dropped only when the buffer is full. This is Linux's `ce_threshold` with a
//! `ce_threshold_selector` matching ECT(1) (fq_codel, and sch_cake's), in one queue. RFC 9331
//! §5.4.1.1 asks an L4S node to tell the two apart by codepoint alone, as here. (A DualQ
//! Coupled AQM, RFC 9332, also couples the classic queue's drops to the L4S marks; this marker
//! does not.)
//!
//! Choosing K (RFC 8257 §3.1 leaves it to the operator): the DCTCP analysis (Alizadeh, Javanmard
//! & Prabhakar, SIGMETRICS 2011) needs K > C·RTT/7 for full throughput; the SIGCOMM paper used
//! 20 packets at 1 Gb/s and 65 at 10 Gb/s.

use buflab_base::rng::Rng;

use crate::aqm::{AqmCounts, Tally};
use crate::describe::{BuildAdmission, Described, LinkInfo, Param, ParamError, ParamKind, Value, Values};
use crate::{Admission, Arrival, Limit, Time, Verdict};

/// A step marker.
#[derive(Clone, Debug)]
pub struct Step {
    /// K: packets or bytes waiting.
    threshold: Limit,
    /// Mark only ECT(1) arrivals (the L4S identifier); others are never marked.
    ect1_only: bool,
    tally: Tally,
}

impl Step {
    pub fn new(threshold: Limit) -> Step {
        Step { threshold, ect1_only: false, tally: Tally::default() }
    }

    /// A marker that marks only ECT(1) arrivals at K (see the module doc).
    pub fn ect1_only(threshold: Limit) -> Step {
        Step { ect1_only: true, ..Step::new(threshold) }
    }

    /// Whether the arrival's codepoint is one this marker marks.
    fn markable(&self, a: &Arrival) -> bool {
        if self.ect1_only {
            a.ect1
        } else {
            a.ect
        }
    }

    /// Whether an arrival that finds `waiting` packets of `bytes` is at or above K.
    fn above(&self, waiting: u64, bytes: u64) -> bool {
        match self.threshold {
            Limit::Packets(k) => waiting >= k,
            Limit::Bytes(k) => bytes >= k,
            Limit::Unlimited => false,
        }
    }
}

impl Admission for Step {
    #[inline]
    fn on_arrival(&mut self, a: &Arrival) -> Verdict {
        if a.full {
            self.tally.add(a.now, |k| k.overflow_drops += 1);
            return Verdict::Drop;
        }
        if self.markable(a) && self.above(a.waiting, a.waiting_bytes) {
            self.tally.add(a.now, |k| k.law_marks += 1);
            return Verdict::Mark;
        }
        Verdict::Admit
    }

    fn aqm_counts(&self) -> Option<AqmCounts> {
        Some(self.tally.counts)
    }

    fn count_from(&mut self, t: Time) {
        self.tally.count_from(t);
    }
}

impl Described for Step {
    const NAME: &'static str = "step";
    const LABEL: &'static str = "step marking";
    const DOC: &'static str = "step marking for DCTCP (RFC 8257 §3.1): an ECN-capable arrival that finds `mark_threshold` (K) or more waiting is marked Congestion Experienced (with `mark_ect1_only`, only an ECT(1) one: an L4S-style shallow threshold, RFC 9331); nothing is dropped early.";
    const PARAMS: &'static [Param] = &[
        Param { key: "mark_threshold", kind: ParamKind::Backlog, ty: "queue length", default: "\"20pkt\"", doc: "Step marking: K, the queue (packets waiting, \"20pkt\" or a bare number, or bytes, \"30KB\") at or above which an arriving ECN-capable packet is marked. The DCTCP paper used 20 packets at 1 Gb/s and 65 at 10 Gb/s; its analysis asks K > C·RTT/7. Below `buffer` when both are in the same unit: the buffer is the hard limit, and a queue that never reaches K never marks." },
        Param { key: "mark_ect1_only", kind: ParamKind::Bool, ty: "boolean", default: "false", doc: "Step marking: mark only arrivals whose ECN field is ECT(1), the L4S identifier (RFC 9331 §4.1; senders with `ecn_codepoint = \"ect1\"`), at `mark_threshold`: a shallow threshold for scalable senders (DCTCP), as Linux's `ce_threshold` with `ce_threshold_selector` set to ECT(1). ECT(0) and non-ECN packets are then never marked: for them the queue is drop-tail at `buffer`. false: every ECN-capable arrival is marked at K." },
    ];

    /// K below the buffer, when both count the same thing.
    fn check(v: &Values, limit: Limit) -> Result<(), ParamError> {
        let k = v.backlog("mark_threshold");
        let (below, what) = match (k, limit) {
            (Limit::Packets(k), Limit::Packets(b)) => (k < b, format!("{b} packets")),
            (Limit::Bytes(k), Limit::Bytes(b)) => (k < b, format!("{b} bytes")),
            _ => (true, String::new()),
        };
        if below {
            return Ok(());
        }
        let expected = format!("a threshold below the buffer ({what}), which stays the hard limit: a queue that never reaches K never marks");
        Err(ParamError { key: "mark_threshold", got: Value::Backlog(k), expected })
    }
}

impl BuildAdmission for Step {
    fn build(values: &Values, _link: LinkInfo, _rng: Rng) -> Box<dyn Admission> {
        let threshold = values.backlog("mark_threshold");
        Box::new(if values.boolean("mark_ect1_only") { Step::ect1_only(threshold) } else { Step::new(threshold) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_ect_arrivals_from_k_on_and_drops_only_when_full() {
        let mut s = Step::new(Limit::Packets(3));
        let busy = Time(10);
        let at = |waiting, ect| Arrival::new(Time(5), waiting, waiting * 1000, busy, Limit::Packets(5), 1000, ect);
        assert_eq!(s.on_arrival(&at(2, true)), Verdict::Admit);
        assert_eq!(s.on_arrival(&at(3, true)), Verdict::Mark);
        assert_eq!(s.on_arrival(&at(4, false)), Verdict::Admit, "not ECN-capable: never dropped early");
        assert_eq!(s.on_arrival(&at(5, true)), Verdict::Drop, "full");
        let k = s.aqm_counts().unwrap();
        assert_eq!((k.law_marks, k.overflow_drops, k.law_drops), (1, 1, 0));
        // In bytes: 2500 B waiting reach K = 2500 B.
        let mut s = Step::new(Limit::Bytes(2500));
        let a = Arrival::new(Time(5), 2, 2500, busy, Limit::Unlimited, 1000, true);
        assert_eq!(s.on_arrival(&a), Verdict::Mark);
    }

    /// RFC 9331 §5.4.1.1: an L4S marker tells its packets by the ECN codepoint alone. Above K
    /// an ECT(1) arrival is marked, an ECT(0) one is admitted unmarked (it sees drop-tail), and
    /// a full buffer drops both.
    #[test]
    fn ect1_only_marks_the_l4s_codepoint_and_leaves_classic_ecn_to_the_buffer() {
        let mut s = Step::ect1_only(Limit::Packets(3));
        let busy = Time(10);
        let at = |waiting, ect1| {
            Arrival::new(Time(5), waiting, waiting * 1000, busy, Limit::Packets(10), 1000, true).with_ect1(ect1)
        };
        assert_eq!(s.on_arrival(&at(2, true)), Verdict::Admit, "below K");
        assert_eq!(s.on_arrival(&at(3, true)), Verdict::Mark, "ECT(1) at K");
        assert_eq!(s.on_arrival(&at(9, false)), Verdict::Admit, "ECT(0): never marked");
        assert_eq!(s.on_arrival(&at(10, false)), Verdict::Drop, "full");
        assert_eq!(s.on_arrival(&at(10, true)), Verdict::Drop, "full");
        let not_ect = Arrival::new(Time(5), 5, 5000, busy, Limit::Packets(10), 1000, false).with_ect1(true);
        assert!(!not_ect.ect1, "ECT(1) only on an ECN-capable packet");
        assert_eq!(s.on_arrival(&not_ect), Verdict::Admit);
        // The classic marker marks both codepoints (RFC 3168 §5 treats them alike).
        let mut classic = Step::new(Limit::Packets(3));
        assert_eq!((classic.on_arrival(&at(3, true)), classic.on_arrival(&at(3, false))), (Verdict::Mark, Verdict::Mark));
    }

    #[test]
    fn k_at_or_above_the_buffer_is_one_line() {
        let kind = crate::kinds::<crate::fifo::tests::P>().into_iter().find(|k| k.name == "step").unwrap();
        let err = kind.values_from_text(&[("mark_threshold".into(), "100pkt".into())], Limit::Packets(100));
        assert_eq!(
            err.unwrap_err(),
            "mark_threshold: got 100pkt; expected a threshold below the buffer (100 packets), which stays the hard limit: a queue that never reaches K never marks"
        );
        let ok = kind.values_from_text(&[("mark_threshold".into(), "65".into())], Limit::Packets(100)).unwrap();
        assert_eq!(ok.backlog("mark_threshold"), Limit::Packets(65));
        let bad = kind.values_from_text(&[("mark_threshold".into(), "0pkt".into())], Limit::Packets(100));
        assert!(bad.unwrap_err().starts_with("mark_threshold: got \"0pkt\"; expected a queue length above 0"));
    }
}
