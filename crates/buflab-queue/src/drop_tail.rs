//! Drop-tail: an arrival is dropped when the buffer is full, and admitted otherwise.
//!
//! Read first: the crate doc (the contract). The queue of every experiment in the seeds. The
//! simulator's links run it inline, without a call, because it is their hot path; this type
//! is the same rule for callers that take any [`Admission`] (the emulator's datapath, and
//! the check that the simulator's inline rule is this one).

use crate::describe::Described;
use crate::{Admission, Arrival, Verdict};

/// Drop-tail: nothing but the hard limit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DropTail;

impl Described for DropTail {
    const NAME: &'static str = "droptail";
    const LABEL: &'static str = "drop-tail";
    const DOC: &'static str = "an arrival is dropped when the buffer is full.";
}

impl Admission for DropTail {
    #[inline]
    fn on_arrival(&mut self, a: &Arrival) -> Verdict {
        if a.full {
            Verdict::Drop
        } else {
            Verdict::Admit
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Limit, Time};

    #[test]
    fn drops_exactly_what_the_limit_refuses() {
        let busy = Time(10);
        let at =
            |waiting| Arrival::new(Time(5), waiting, waiting * 1000, busy, Limit::Packets(3), 1000, false);
        assert_eq!(DropTail.on_arrival(&at(2)), Verdict::Admit);
        assert_eq!(DropTail.on_arrival(&at(3)), Verdict::Drop);
        // An idle serializer takes the packet at once: never full.
        let idle = Arrival::new(Time(20), 3, 3000, busy, Limit::Packets(3), 1000, false);
        assert_eq!(DropTail.on_arrival(&idle), Verdict::Admit);
    }
}
