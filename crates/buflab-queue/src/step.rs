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
    tally: Tally,
}

impl Step {
    pub fn new(threshold: Limit) -> Step {
        Step { threshold, tally: Tally::default() }
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
        if a.ect && self.above(a.waiting, a.waiting_bytes) {
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
    const DOC: &'static str = "step marking for DCTCP (RFC 8257 §3.1): an ECN-capable arrival that finds `mark_threshold` (K) or more waiting is marked Congestion Experienced; nothing is dropped early.";
    const PARAMS: &'static [Param] = &[
        Param { key: "mark_threshold", kind: ParamKind::Backlog, ty: "queue length", default: "\"20pkt\"", doc: "Step marking: K, the queue (packets waiting, \"20pkt\" or a bare number, or bytes, \"30KB\") at or above which an arriving ECN-capable packet is marked. The DCTCP paper used 20 packets at 1 Gb/s and 65 at 10 Gb/s; its analysis asks K > C·RTT/7. Below `buffer` when both are in the same unit: the buffer is the hard limit, and a queue that never reaches K never marks." },
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
        Box::new(Step::new(values.backlog("mark_threshold")))
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
