//! Thm 6.1 as an experiment: one request sequence through the optical buffer and through an
//! electronic FIFO of N − 1 packets, side by side, slot by slot.
//!
//! Read first: [`super`] and [`super::buffer`]. Owns the electronic reference and the
//! comparison; the model checks Appendix E's properties itself at every slot.

use std::collections::VecDeque;

use super::buffer::{Arrived, Counts, OpticalBuffer, Violations};
use super::layout::Layout;
use super::requests::Requests;

/// What a sequence did to both buffers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Report {
    pub slots: u64,
    pub arrivals: u64,
    pub drops: u64,
    pub departures: u64,
    /// Slots in which the two disagreed: another packet left (or none), or one dropped an
    /// arrival the other took.
    pub mismatches: u64,
    pub first_mismatch: Option<u64>,
    /// The optical buffer's breaches of Appendix E's properties.
    pub violations: Violations,
    /// The optical buffer's counts (occupancy, passes, switch changes).
    pub counts: Counts,
}

impl Report {
    /// Identical departures and drops in every slot, and no property broken.
    pub fn exact(&self) -> bool {
        self.mismatches == 0 && self.violations.total() == 0
    }
}

/// Runs `requests` through an optical buffer of `layout` and an electronic FIFO of the same
/// size (each slot its departure first, then its arrival, as the model's slots go).
pub fn against_fifo(layout: Layout, requests: impl IntoIterator<Item = Requests>) -> Report {
    let capacity = layout.capacity() as usize;
    against_fifo_of(layout, capacity, requests)
}

/// [`against_fifo`] with an electronic FIFO of `capacity` packets.
fn against_fifo_of(layout: Layout, capacity: usize, requests: impl IntoIterator<Item = Requests>) -> Report {
    let mut optical = OpticalBuffer::new(layout);
    // Arrival numbers: the FIFO's packets, and the optical buffer's by its seq.
    let mut fifo: VecDeque<u64> = VecDeque::with_capacity(capacity);
    let mut by_seq: VecDeque<u64> = VecDeque::with_capacity(capacity);
    let mut first_seq = 0u64;
    let mut r = Report {
        slots: 0,
        arrivals: 0,
        drops: 0,
        departures: 0,
        mismatches: 0,
        first_mismatch: None,
        violations: Violations::default(),
        counts: Counts::default(),
    };
    for req in requests {
        let mut same = true;
        if req.departure {
            let electronic = fifo.pop_front();
            let light = optical.depart().and_then(|seq| {
                // A correct model sends the oldest; a broken one is followed where it goes.
                let id = by_seq.get((seq - first_seq) as usize).copied();
                while first_seq <= seq && !by_seq.is_empty() {
                    by_seq.pop_front();
                    first_seq += 1;
                }
                id
            });
            same &= electronic == light;
            r.departures += u64::from(electronic.is_some());
        }
        if req.arrival {
            let id = r.arrivals;
            r.arrivals += 1;
            let electronic = fifo.len() < capacity;
            if electronic {
                fifo.push_back(id);
            } else {
                r.drops += 1;
            }
            let light = match optical.arrive() {
                Arrived::Admitted(seq) => {
                    if by_seq.is_empty() {
                        first_seq = seq;
                    }
                    by_seq.push_back(id);
                    true
                }
                Arrived::Dropped => false,
            };
            same &= electronic == light;
        }
        optical.end_slot();
        if !same {
            r.mismatches += 1;
            r.first_mismatch.get_or_insert(r.slots);
        }
        r.slots += 1;
    }
    r.violations = optical.violations();
    r.counts = optical.counts();
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::optical::requests::{Pattern, RequestStream};

    /// Each pattern at N = 64 and 256, K = 1 and 4, over enough slots to fill, overflow and
    /// drain the buffer many times: identical to the FIFO in every slot, drops included.
    #[test]
    fn every_pattern_is_exact_and_drops_when_the_fifo_does() {
        let patterns = [
            Pattern::Bernoulli { load: 1.0, depart: 0.5 },
            Pattern::Bernoulli { load: 0.5, depart: 0.9 },
            Pattern::Bursts { longest: 512 },
            Pattern::Sawtooth,
        ];
        for n in [64, 256] {
            for k in [1, 4] {
                for p in patterns {
                    let layout = Layout::new(n, k).unwrap();
                    let r = against_fifo(layout, RequestStream::new(p, n, 7).take(100_000));
                    assert!(r.exact(), "N = {n}, K = {k}, {}: {r:?}", p.label());
                    assert_eq!(r.counts.drops, r.drops, "the model counted the FIFO's drops");
                    assert!(r.departures > 10_000, "{}", p.label());
                }
            }
        }
    }

    /// The comparison can fail: against a FIFO one packet larger than the optical buffer,
    /// the 8th arrival of a run at N = 8 is dropped by the optical buffer alone (a mismatch
    /// in slot 7); the 9th and 10th are dropped by both.
    #[test]
    fn a_fifo_of_another_size_shows_as_mismatches() {
        let layout = Layout::new(8, 1).unwrap();
        let a = Requests { departure: false, arrival: true };
        let same = against_fifo_of(layout.clone(), 7, std::iter::repeat_n(a, 10));
        assert_eq!((same.drops, same.mismatches), (3, 0));
        let other = against_fifo_of(layout, 8, std::iter::repeat_n(a, 10));
        assert_eq!((other.drops, other.mismatches, other.first_mismatch), (2, 1, Some(7)));
        assert!(!other.exact());
    }
}
