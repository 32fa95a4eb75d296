//! How the traffic arriving at a queue is mixed: the inter-arrival times of stored packets and
//! the runs of successive packets of one flow.
//!
//! Read first: [`super`] (the reports it counts from). Owns the gaps and runs of arrivals; must not
//! know queues or occupancy.
//!
//! These are the testbed's measures of burstiness. Thesis Fig 4.9 and IMC Fig 7 plot the CDF
//! of inter-arrival times at the bottleneck of packets *stored* in the queue (dropped ones are
//! left out). Thesis Fig 4.12 plots the CDF of burst sizes, "a burst … defined as a sequence
//! of successive packets belonging to a single flow" in the aggregate traffic, so runs count
//! every arrival, dropped or not. IMC Fig 13 reports the fraction of successive packets that
//! belong to the same flow.

use super::histogram::Histogram;
use crate::units::Time;

#[derive(Default)]
pub struct TrafficMix {
    /// Gap to the previous stored packet, for stored packets arriving in the window (ps).
    pub interarrival: Histogram,
    /// Length of each finished run of one flow's successive arrivals in the window (packets).
    pub bursts: Histogram,
    /// Stored packets that arrived before the previous stored one could have been serialized
    /// at the link's rate: faster than line rate, so from different inputs at once (Fig 4.9's
    /// "30 % … less than 12 µs").
    pub faster_than_line: u64,
    /// Successive arrival pairs in the window, and how many were of the same flow.
    pub pairs: u64,
    pub same_flow_pairs: u64,
    /// When the previous stored packet arrived, and its serialization time at this link.
    last_stored: Option<(Time, Time)>,
    last_flow: Option<u32>,
    run: u64,
}

impl TrafficMix {
    /// A packet was stored at `t`; `ser` is its serialization time at the link (`in_window`:
    /// t lies in the measured window).
    #[inline]
    pub fn on_stored(&mut self, t: Time, flow: u32, ser: Time, in_window: bool) {
        if in_window {
            if let Some((last, last_ser)) = self.last_stored {
                let gap = t.0 - last.0;
                self.interarrival.record(gap);
                self.faster_than_line += u64::from(gap < last_ser.0);
            }
        }
        self.last_stored = Some((t, ser));
        self.on_arrival(flow, in_window);
    }

    /// A packet of `flow` arrived (stored or dropped).
    #[inline]
    pub fn on_arrival(&mut self, flow: u32, in_window: bool) {
        if !in_window {
            // Runs are counted inside the window only: one straddling its start begins afresh,
            // one straddling its end is cut there.
            self.finish();
            self.last_flow = Some(flow);
            return;
        }
        if self.last_flow == Some(flow) && self.run > 0 {
            self.same_flow_pairs += 1;
            self.pairs += 1;
            self.run += 1;
            return;
        }
        if self.run > 0 {
            self.pairs += 1;
            self.bursts.record(self.run);
        }
        self.last_flow = Some(flow);
        self.run = 1;
    }

    /// Closes the run in progress at the end of the window.
    pub fn finish(&mut self) {
        if self.run > 0 {
            self.bursts.record(self.run);
            self.run = 0;
        }
    }

    /// Fraction of successive arrival pairs that belong to the same flow (0 with under two
    /// arrivals).
    pub fn same_flow_fraction(&self) -> f64 {
        ratio(self.same_flow_pairs, self.pairs)
    }

    /// Fraction of the window's inter-arrival gaps shorter than the previous packet's
    /// serialization time.
    pub fn faster_than_line_fraction(&self) -> f64 {
        ratio(self.faster_than_line, self.interarrival.count())
    }
}

fn ratio(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 / whole as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_and_gaps_of_a_scripted_sequence() {
        let mut m = TrafficMix::default();
        // Flows 1 1 1 2 1 1 stored 10 ps apart, then a dropped arrival of flow 1.
        for (i, flow) in [1, 1, 1, 2, 1, 1].into_iter().enumerate() {
            // The third packet is short: the gap after it is not faster than line rate.
            let ser = if i == 2 { 5 } else { 12 };
            m.on_stored(Time(10 * i as u64), flow, Time(ser), true);
        }
        m.on_arrival(1, true);
        m.finish();
        // Runs 3, 1, 3; pairs 6 of which 4 same-flow.
        assert_eq!(m.bursts.count(), 3);
        assert_eq!(m.bursts.mean(), 7.0 / 3.0);
        assert_eq!((m.pairs, m.same_flow_pairs), (6, 4));
        // Five gaps of 10 ps between the six stored packets; the drop adds none.
        assert_eq!(m.interarrival.count(), 5);
        assert_eq!(m.interarrival.mean(), 10.0);
        assert_eq!(m.faster_than_line, 4);
    }

    #[test]
    fn warm_up_arrivals_count_nothing() {
        let mut m = TrafficMix::default();
        m.on_stored(Time(0), 1, Time(1), false);
        m.on_stored(Time(5), 1, Time(1), false);
        // The first stored packet in the window has a gap to the last one before it.
        m.on_stored(Time(12), 1, Time(1), true);
        m.finish();
        assert_eq!(m.interarrival.count(), 1);
        assert_eq!(m.interarrival.mean(), 7.0);
        assert_eq!(m.bursts.count(), 1);
        assert_eq!(m.bursts.mean(), 1.0);
        assert_eq!(m.pairs, 0);
    }
}
