//! What an active queue manager counts, by cause: the numbers an AQM researcher compares
//! (drops by the AQM's own law against drops by overflow, marks instead of drops), over the
//! measured window.
//!
//! Read first: the crate doc (the contract). This file owns [`AqmCounts`] and [`Tally`], the
//! counter every AQM discipline keeps; each discipline's file says which of the counts it
//! fills. It must not know any one discipline.

use buflab_base::units::Time;

/// An AQM's counts since its `count_from` time. Counts a discipline does not keep stay 0 (or
/// None).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct AqmCounts {
    /// Arrivals refused because the buffer (the hard limit) was full.
    pub overflow_drops: u64,
    /// Packets dropped by the AQM's own law: CoDel's control law at dequeue, PIE's random
    /// early drop at arrival.
    pub law_drops: u64,
    /// ECN-capable packets the law marked Congestion Experienced instead of dropping (CoDel
    /// and FQ-CoDel at dequeue, PIE and the step marker at arrival).
    pub law_marks: u64,
    /// FQ-CoDel: packets dropped from the head of the fattest queue to make room for an
    /// arrival under the buffer or memory limit (RFC 8290 §4.1).
    pub fattest_drops: u64,
    /// CoDel: entries into the dropping state (summed over FQ-CoDel's queues).
    pub drop_states: u64,
    /// FQ-CoDel: queues that held a packet.
    pub flows: u64,
    /// FQ-CoDel: times a queue joined the list of new flows (a sparse flow's turn, RFC 8290
    /// §4.1).
    pub new_flows: u64,
    /// FQ-CoDel: Jain's index of the bytes each queue sent, (Σx)² / (n·Σx²) over the queues
    /// that sent any: 1 when the scheduler shared the link equally.
    pub queue_jain: Option<f64>,
    /// PIE: the drop probability, mean and largest over its updates.
    pub prob_mean: Option<f64>,
    pub prob_max: Option<f64>,
}

/// Counts from a time on: the measured window's start (zero until the caller says).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Tally {
    from: Time,
    pub counts: AqmCounts,
}

impl Tally {
    /// Counts only what happens from `t` on.
    pub fn count_from(&mut self, t: Time) {
        self.from = t;
    }

    /// Whether an event at `now` counts.
    #[inline]
    pub fn counts_at(&self, now: Time) -> bool {
        now >= self.from
    }

    /// Applies `f` to the counts if an event at `now` counts.
    #[inline]
    pub fn add(&mut self, now: Time, f: impl FnOnce(&mut AqmCounts)) {
        if now >= self.from {
            f(&mut self.counts);
        }
    }
}

/// Jain's index of `xs` over its positive entries, (Σx)² / (n·Σx²); None without any.
pub fn jain(xs: impl Iterator<Item = u64>) -> Option<f64> {
    let (mut n, mut sum, mut squares) = (0u64, 0f64, 0f64);
    for x in xs.filter(|&x| x > 0) {
        n += 1;
        sum += x as f64;
        squares += x as f64 * x as f64;
    }
    (n > 0).then(|| sum * sum / (n as f64 * squares))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_start_at_the_window_and_jain_is_one_for_equal_shares() {
        let mut t = Tally::default();
        t.count_from(Time(10));
        t.add(Time(9), |c| c.law_drops += 1);
        t.add(Time(10), |c| c.law_drops += 1);
        assert_eq!(t.counts.law_drops, 1, "only the event at the window's start counts");
        assert_eq!(jain([5u64, 5, 5, 0].into_iter()), Some(1.0), "queues that sent nothing are left out");
        // Two queues, one sending three times the other: 16 / (2·10) = 0.8, exactly.
        assert_eq!(jain([1u64, 3].into_iter()), Some(0.8));
        assert_eq!(jain(std::iter::empty()), None);
    }
}
